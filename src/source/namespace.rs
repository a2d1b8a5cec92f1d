//! The namespace kustomize will give a file's objects: the kustomizations
//! that include the file, up to each outermost overlay building on it.
//!
//! Read once per repository (the directory holding `.git`, else the
//! directory given), and only for a file with a kustomization above it: a
//! run without kustomize reads nothing more.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::json::Field;

/// Where kustomize sets a file's namespace: one entry per namespace the
/// overlays building on it set (none when no kustomization sets one), and
/// what could not be read on the way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Kustomized {
    pub builds: Vec<Build>,
    /// The patches of the kustomizations building on the file that address
    /// a container list by place.
    pub index_patches: Vec<super::patches::IndexPatch>,
    /// Kustomizations that do not read, or set no valid namespace: the
    /// namespace they would set is unknown, said with each workload.
    pub problems: Vec<String>,
}

/// One namespace an overlay sets for the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Build {
    pub namespace: String,
    /// The kustomization file whose `namespace:` wins, as shown to the user.
    pub set_by: String,
    /// The outermost overlay's directory (what `kubectl kustomize` is run
    /// on), as shown.
    pub overlay: String,
}

/// The names kustomize reads a directory's kustomization under.
const KUSTOMIZATION_NAMES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// The fields through which a kustomization includes files and directories.
const INCLUDING_FIELDS: [&str; 3] = ["resources", "bases", "components"];

/// One kustomization read.
struct Kustomization {
    /// Its directory, canonical: what an overlay's `resources` names.
    dir: PathBuf,
    file: PathBuf,
    namespace: Option<String>,
    /// What it includes, canonical.
    includes: Vec<PathBuf>,
    /// Its patches that address a container list by place.
    index_patches: Vec<super::patches::IndexPatch>,
}

/// Every kustomization under a repository, and the problems reading them.
struct Repository {
    kustomizations: Vec<Kustomization>,
    problems: Vec<String>,
}

/// Finds each file's kustomize namespace; remembers the repositories read.
#[derive(Default)]
pub struct Finder {
    repositories: HashMap<PathBuf, Repository>,
}

impl Finder {
    /// Where kustomize sets the namespace of `file`'s objects; `given` is
    /// the directory argument it was found under, if any.
    pub fn of(&mut self, file: &Path, given: Option<&Path>) -> Kustomized {
        let Ok(file) = std::fs::canonicalize(file) else {
            return Kustomized::default();
        };
        let Some(dir) = file.parent() else {
            return Kustomized::default();
        };
        let git = dir.ancestors().find(|d| d.join(".git").exists());
        let above = dir
            .ancestors()
            .take_while(|d| git.is_none_or(|g| d.starts_with(g)))
            .any(|d| kustomization_in(d).is_some());
        if !above {
            return Kustomized::default();
        }
        let root = match git {
            Some(git) => git.to_path_buf(),
            None => given
                .and_then(|g| std::fs::canonicalize(g).ok())
                .filter(|g| file.starts_with(g))
                .unwrap_or_else(|| dir.to_path_buf()),
        };
        let repository = self
            .repositories
            .entry(root.clone())
            .or_insert_with(|| read_repository(&root));
        let mut builds = Vec::new();
        let mut building = Vec::new();
        for including in repository.including(&file) {
            repository.builds_above(including, None, &mut vec![including], &mut builds);
            repository.all_above(including, &mut building);
        }
        let index_patches = building
            .iter()
            .filter_map(|&at| repository.kustomizations.get(at))
            .flat_map(|k| k.index_patches.iter().cloned())
            .collect();
        // One build per namespace: overlays that agree are one namespace.
        let mut distinct: Vec<Build> = Vec::new();
        for build in builds {
            if !distinct.iter().any(|b| b.namespace == build.namespace) {
                distinct.push(build);
            }
        }
        distinct.sort_by(|a, b| a.overlay.cmp(&b.overlay));
        Kustomized {
            builds: distinct,
            index_patches,
            problems: repository.problems.clone(),
        }
    }
}

impl Repository {
    /// The kustomizations that include `path` (a file or a directory).
    fn including(&self, path: &Path) -> Vec<usize> {
        (0..self.kustomizations.len())
            .filter(|&i| {
                self.kustomizations
                    .get(i)
                    .is_some_and(|k| k.includes.iter().any(|p| p == path))
            })
            .collect()
    }

    /// Add to `seen` kustomization `at` and every one that builds on it,
    /// each once.
    fn all_above(&self, at: usize, seen: &mut Vec<usize>) {
        if seen.contains(&at) {
            return;
        }
        seen.push(at);
        let Some(here) = self.kustomizations.get(at) else {
            return;
        };
        for outer in self.including(&here.dir) {
            self.all_above(outer, seen);
        }
    }

    /// Add to `builds` each outermost overlay above kustomization `at`,
    /// with the namespace that wins there: kustomize applies an outer
    /// kustomization's namespace after the inner ones, so the outermost
    /// that sets one wins. `path` guards against cycles.
    fn builds_above(
        &self,
        at: usize,
        inner: Option<(&str, &Path)>,
        path: &mut Vec<usize>,
        builds: &mut Vec<Build>,
    ) {
        let Some(here) = self.kustomizations.get(at) else {
            return;
        };
        let set = match &here.namespace {
            Some(namespace) => Some((namespace.as_str(), here.file.as_path())),
            None => inner,
        };
        let outer: Vec<usize> = self
            .including(&here.dir)
            .into_iter()
            .filter(|o| !path.contains(o))
            .collect();
        if outer.is_empty() {
            // An overlay that sets no namespace leaves its objects to the
            // namespace of the run (-n, else default).
            if let Some((namespace, file)) = set {
                builds.push(Build {
                    namespace: namespace.to_string(),
                    set_by: shown(file),
                    overlay: shown(&here.dir),
                });
            }
            return;
        }
        for o in outer {
            path.push(o);
            self.builds_above(o, set, path, builds);
            path.pop();
        }
    }
}

/// The kustomization file of `dir`, under any of the names kustomize reads.
pub(super) fn kustomization_in(dir: &Path) -> Option<PathBuf> {
    KUSTOMIZATION_NAMES
        .iter()
        .map(|name| dir.join(name))
        .find(|file| file.is_file())
}

/// Every kustomization under `root` (`.git` left out), read.
fn read_repository(root: &Path) -> Repository {
    let mut repository = Repository {
        kustomizations: Vec::new(),
        problems: Vec::new(),
    };
    let entries = walkdir::WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.file_name() != ".git")
        // A corner that cannot be listed holds no kustomization read here.
        .filter_map(Result::ok);
    for entry in entries {
        let named = entry
            .file_name()
            .to_str()
            .is_some_and(|n| KUSTOMIZATION_NAMES.contains(&n));
        if !entry.file_type().is_file() || !named {
            continue;
        }
        match read_kustomization(entry.path()) {
            Ok((kustomization, problem)) => {
                repository.problems.extend(problem);
                repository.kustomizations.push(kustomization);
            }
            Err(problem) => repository.problems.push(problem),
        }
    }
    repository
}

/// One kustomization file: what it includes and the namespace it sets,
/// with what is wrong with its `namespace:` (then not taken), or why it
/// cannot be read at all.
fn read_kustomization(file: &Path) -> Result<(Kustomization, Vec<String>), String> {
    let name = shown(file);
    let unknown = |why: String| {
        format!("kustomization {name} {why}: the namespace it sets, if any, is unknown")
    };
    let source = super::read(Some(file)).map_err(|e| unknown(format!("cannot be read ({e})")))?;
    let documents = crate::yaml::parse_stream(&source.text).map_err(|e| {
        let (line, column) = line_column(&source.text, e.offset);
        unknown(format!("does not parse at {line}:{column} ({})", e.message))
    })?;
    let value = match documents.first().and_then(|d| d.root.as_ref()) {
        Some(root) => crate::yaml::value::to_value(root).map_err(|e| {
            let (line, column) = line_column(&source.text, e.offset);
            unknown(format!("does not read at {line}:{column} ({})", e.message))
        })?,
        None => Value::Null,
    };
    if !value.is_object() {
        return Err(unknown("is not a mapping".into()));
    }
    let dir = file
        .parent()
        .and_then(|d| std::fs::canonicalize(d).ok())
        .ok_or_else(|| unknown("has no directory".into()))?;
    let mut includes = Vec::new();
    for field in INCLUDING_FIELDS {
        let listed = value.field(field).and_then(Value::as_array);
        for entry in listed.into_iter().flatten().filter_map(Value::as_str) {
            // A remote base (a URL, a git reference) holds no file of here;
            // a path that does not exist fails kustomize itself.
            if entry.contains("://") || entry.starts_with("git@") {
                continue;
            }
            if let Ok(found) = std::fs::canonicalize(dir.join(entry)) {
                includes.push(found);
            }
        }
    }
    let (namespace, problem) = match value.field("namespace") {
        None | Some(Value::Null) => (None, None),
        Some(Value::String(text)) => match namespace_name(text) {
            Ok(namespace) => (Some(namespace), None),
            Err(why) => (
                None,
                Some(format!(
                    "kustomization {name}: namespace {text:?} is not a namespace name ({why}): not taken"
                )),
            ),
        },
        Some(other) => (
            None,
            Some(format!(
                "kustomization {name}: namespace {other} is not a string: not taken"
            )),
        ),
    };
    let (index_patches, unread) = super::patches::index_patches(&value, &dir, &name);
    Ok((
        Kustomization {
            dir,
            file: file.to_path_buf(),
            namespace,
            includes,
            index_patches,
        },
        problem.into_iter().chain(unread).collect(),
    ))
}

/// The line and column (from 1) of byte `offset` of `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, column)
}

/// `path` (canonical) as the user sees it: relative to the working
/// directory when under it.
pub(super) fn shown(path: &Path) -> String {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| std::fs::canonicalize(cwd).ok())
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| path.to_path_buf())
        .display()
        .to_string()
}

/// A namespace's name as the apiserver takes one (a DNS-1123 label): what
/// the tool writes into labels and checks policies with.
pub fn namespace_name(name: &str) -> Result<String, String> {
    let bytes = name.as_bytes();
    let fits = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let valid = !name.is_empty()
        && name.len() <= 63
        && bytes.iter().all(|b| fits(b) || *b == b'-')
        && bytes.first().is_some_and(fits)
        && bytes.last().is_some_and(fits);
    if valid {
        Ok(name.to_string())
    } else {
        Err("a namespace is a DNS-1123 label: at most 63 lower case letters, digits and '-', starting and ending with a letter or digit".into())
    }
}

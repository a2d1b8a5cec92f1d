//! Files of the input that are not manifests to inject, though they look
//! like them: those `--exclude` names, a Helm chart's templates (`{{ … }}` is
//! not YAML), and kustomize patches (they merge into the resources they
//! target, which are injected; a patch given the proxy would add a second).

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use crate::json::Field;

/// A file left out of the run, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedFile {
    pub path: PathBuf,
    pub reason: String,
    /// Left out by `--exclude`, as asked: reported only with `-v`.
    pub asked: bool,
}

/// A `--exclude` pattern, in the glob syntax of ripgrep's and fd's
/// `globset`: `*` and `?` within a path component, `[abc]`, `[!abc]`,
/// `{a,b}`, `**` across components, `\\` to escape. Without a `/` it is
/// matched against each component of the path (a file or directory name:
/// `templates`, `*.tpl.yaml`); with one, against the whole path, as given or
/// as found under a directory given (`charts/**/templates/*`).
#[derive(Debug, Clone)]
pub struct Glob {
    pattern: String,
    /// The pattern, and the pattern with `/**` after it: a directory's
    /// pattern covers what is under it (`charts/x`).
    matcher: globset::GlobSet,
}

impl PartialEq for Glob {
    fn eq(&self, other: &Self) -> bool {
        self.pattern == other.pattern
    }
}

impl Eq for Glob {}

impl std::str::FromStr for Glob {
    type Err = String;

    fn from_str(pattern: &str) -> Result<Self, String> {
        if pattern.is_empty() {
            return Err("an empty pattern matches nothing".into());
        }
        let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
        let pattern = pattern.trim_end_matches('/').to_string();
        let glob = |text: &str| {
            globset::GlobBuilder::new(text)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map_err(|e| format!("{pattern:?}: {}", e.kind()))
        };
        let mut set = globset::GlobSetBuilder::new();
        set.add(glob(&pattern)?);
        if pattern.contains('/') {
            set.add(glob(&format!("{pattern}/**"))?);
        }
        let matcher = set.build().map_err(|e| format!("{pattern:?}: {e}"))?;
        Ok(Glob { pattern, matcher })
    }
}

impl std::fmt::Display for Glob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.pattern)
    }
}

impl Glob {
    /// Whether the pattern matches `path`, a file found under `root` (the
    /// directory given) or named itself (`root` is `None`).
    pub fn matches(&self, path: &Path, root: Option<&Path>) -> bool {
        let whole = |p: &Path| self.matcher.is_match(p.strip_prefix("./").unwrap_or(p));
        if !self.pattern.contains('/') {
            // The names below the directory given, or of the path as given
            // (only the file's own for an absolute one): a directory above
            // the input (`/builds/…`) never leaves it out.
            let named = match root.and_then(|r| path.strip_prefix(r).ok()) {
                Some(below) => below,
                None if path.is_relative() => path,
                None => Path::new(path.file_name().unwrap_or_default()),
            };
            return named.components().any(|c| match c {
                Component::Normal(name) => self.matcher.is_match(name),
                _ => false,
            });
        }
        whole(path)
            || root
                .and_then(|r| path.strip_prefix(r).ok())
                .is_some_and(whole)
    }
}

/// Decides which files to leave out; remembers the kustomizations it read.
pub struct Skipper<'a> {
    exclude: &'a [Glob],
    /// Each directory's kustomization patches, canonical paths (none when
    /// it has no kustomization).
    patches: HashMap<PathBuf, Vec<(PathBuf, &'static str)>>,
}

impl<'a> Skipper<'a> {
    pub fn new(exclude: &'a [Glob]) -> Self {
        Skipper {
            exclude,
            patches: HashMap::new(),
        }
    }

    /// Why `path` (found under the directory `root`, or named itself) is
    /// left out, if it is; as a kustomize patch only with `patches`.
    pub fn why(&mut self, path: &Path, root: Option<&Path>, patches: bool) -> Option<SkippedFile> {
        let skipped = |reason: String, asked: bool| SkippedFile {
            path: path.to_path_buf(),
            reason,
            asked,
        };
        if let Some(glob) = self.exclude.iter().find(|g| g.matches(path, root)) {
            return Some(skipped(format!("excluded by --exclude {glob}"), true));
        }
        if let Some(chart) = helm_chart_of(path) {
            return Some(skipped(
                format!(
                    "a template of the Helm chart in {} ({{{{ … }}}} is not YAML): inject what helm template renders, or use the tool as Helm's post-renderer",
                    chart.display()
                ),
                false,
            ));
        }
        if !patches {
            return None;
        }
        let file = std::fs::canonicalize(path).ok()?;
        // The directories above the file as given (a patch may be a link
        // into a shared folder), then above where it really is.
        let given = std::path::absolute(path).ok()?;
        let dirs: Vec<PathBuf> = given
            .ancestors()
            .skip(1)
            .chain(file.ancestors().skip(1))
            .map(Path::to_path_buf)
            .collect();
        for dir in dirs {
            let listed = self.patches_of(&dir);
            if let Some((_, field)) = listed.iter().find(|(p, _)| *p == file) {
                let kustomization = super::namespace::kustomization_in(&dir).unwrap_or(dir);
                return Some(skipped(
                    format!(
                        "a kustomize patch (listed under {field} in {}): kustomize merges it into the resources it targets, which are injected",
                        shown(&kustomization, path)
                    ),
                    false,
                ));
            }
        }
        None
    }

    /// The patches the kustomization of `dir` lists (cached).
    fn patches_of(&mut self, dir: &Path) -> &[(PathBuf, &'static str)] {
        self.patches
            .entry(dir.to_path_buf())
            .or_insert_with(|| read_patches(dir))
    }
}

/// Why `path` would be left out as a kustomize patch (a kustomization in a
/// directory above lists it), if it would: said of a file read all the same
/// because the user named it.
pub fn kustomize_patch(path: &Path) -> Option<String> {
    Skipper::new(&[])
        .why(path, None, true)
        .map(|skipped| skipped.reason)
}

/// The chart directory a file is a template of: the file is under a
/// `templates` directory whose parent holds `Chart.yaml`.
fn helm_chart_of(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .skip(1)
        .filter(|dir| dir.file_name().is_some_and(|n| n == "templates"))
        .filter_map(Path::parent)
        .find(|chart| chart.join("Chart.yaml").is_file())
        .map(Path::to_path_buf)
}

/// The files the kustomization of `dir` lists as patches, canonical, with
/// the field that lists each. A kustomization that cannot be read lists none.
fn read_patches(dir: &Path) -> Vec<(PathBuf, &'static str)> {
    let Some(file) = super::namespace::kustomization_in(dir) else {
        return Vec::new();
    };
    // Read as an input is (within the default size), not to any end.
    let Ok(super::Source { text, .. }) = super::read(Some(&file)) else {
        return Vec::new();
    };
    let Ok(documents) = crate::yaml::parse_stream(&text) else {
        return Vec::new();
    };
    let Some(value) = documents
        .first()
        .and_then(|d| d.root.as_ref())
        .and_then(|root| crate::yaml::value::to_value(root).ok())
    else {
        return Vec::new();
    };
    let mut listed = Vec::new();
    let items = |field: &str| -> Vec<Value> {
        value
            .field(field)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    for field in ["patches", "patchesStrategicMerge", "patchesJson6902"] {
        for item in items(field) {
            // A path, as a string or an entry's `path`; an inline patch
            // (text with a line break) names no file.
            let path = match &item {
                Value::String(text) if !text.contains('\n') => Some(text.as_str()),
                Value::Object(_) => item.field("path").and_then(Value::as_str),
                _ => None,
            };
            if let Some(found) = path.and_then(|p| std::fs::canonicalize(dir.join(p)).ok()) {
                listed.push((found, field));
            }
        }
    }
    listed
}

/// `kustomization` (an absolute path) as the user wrote the file's path:
/// relative to the working directory when that was relative.
fn shown(kustomization: &Path, given: &Path) -> String {
    let relative = given
        .is_relative()
        .then(|| std::env::current_dir().ok())
        .flatten()
        .and_then(|cwd| kustomization.strip_prefix(cwd).ok().map(Path::to_path_buf));
    relative
        .unwrap_or_else(|| kustomization.to_path_buf())
        .display()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glob(p: &str) -> Glob {
        p.parse().expect("a pattern")
    }

    #[test]
    fn globs_match_names_anywhere_or_whole_paths() {
        let path = Path::new("k8s/charts/web/templates/deploy.yaml");
        assert!(glob("templates").matches(path, None));
        assert!(glob("*.yaml").matches(path, None));
        assert!(!glob("*.json").matches(path, None));
        assert!(glob("k8s/charts/**").matches(path, None));
        assert!(glob("k8s/charts").matches(path, None));
        assert!(glob("**/templates/*.yaml").matches(path, None));
        assert!(glob("charts/*/templates/*").matches(path, Some(Path::new("k8s"))));
        // Names above the directory given, or above an absolute path, do not count.
        let found = Path::new("/builds/team/k8s/web.yaml");
        assert!(!glob("builds").matches(found, Some(Path::new("/builds/team/k8s"))));
        assert!(!glob("builds").matches(found, None));
        assert!(glob("web.yaml").matches(found, None));
        assert!(!glob("charts/*/deploy.yaml").matches(path, Some(Path::new("k8s"))));
        assert!(glob("./k8s/charts/we?/**").matches(Path::new("./k8s/charts/web/a.yaml"), None));
        assert!(glob("k8s/[a-c]harts/**").matches(path, None));
        assert!(!glob("k8s/[!c]harts/**").matches(path, None));
        assert!(glob("k8s/charts/{web,api}/**").matches(path, None));
        assert!(glob(r"\*.yaml").matches(Path::new("k8s/*.yaml"), None));
        assert!(!glob(r"\*.yaml").matches(path, None));
        assert!("".parse::<Glob>().is_err());
        assert!("a[b".parse::<Glob>().is_err());
        assert!("a{b".parse::<Glob>().is_err());
    }

    /// A pattern of many stars against a long name that almost matches:
    /// matching stays linear (the hand-written matcher before took time
    /// exponential in the stars).
    #[test]
    fn many_stars_match_in_linear_time() {
        let stars = "*a".repeat(30) + "b";
        let name = "a".repeat(200);
        assert!(!glob(&stars).matches(Path::new(&name), None));
    }

    #[test]
    fn chart_templates_and_kustomize_patches_are_left_out() {
        let dir = tempfile::tempdir().expect("temp dir");
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, text).expect("write");
            path
        };
        write("chart/Chart.yaml", "name: web\n");
        let template = write("chart/templates/deploy.yaml", "kind: {{ .Values.kind }}\n");
        let other_templates = write("templates/deploy.yaml", "kind: Deployment\n");
        write(
            "overlay/kustomization.yaml",
            "resources: [../base]\npatches:\n- path: patches/replicas.yaml\n- patch: |-\n    kind: Deployment\npatchesStrategicMerge: [memory.yaml]\n",
        );
        let replicas = write("overlay/patches/replicas.yaml", "kind: Deployment\n");
        let memory = write("overlay/memory.yaml", "kind: Deployment\n");
        let resource = write("overlay/service.yaml", "kind: Service\n");
        let mut skipper = Skipper::new(&[]);
        let why = |s: &mut Skipper<'_>, p: &Path| s.why(p, None, true).map(|s| s.reason);
        assert!(why(&mut skipper, &template).is_some_and(|r| r.contains("Helm chart")));
        assert_eq!(why(&mut skipper, &other_templates), None);
        let patch = why(&mut skipper, &replicas).expect("a patch");
        assert!(patch.contains("listed under patches in "), "{patch}");
        assert!(patch.contains("overlay/kustomization.yaml"), "{patch}");
        assert!(
            why(&mut skipper, &memory).is_some_and(|r| r.contains("under patchesStrategicMerge"))
        );
        assert_eq!(why(&mut skipper, &resource), None);
        // A patch that is a link into a shared folder is still the
        // overlay's patch.
        let shared = write("common/replicas.yaml", "kind: Deployment\n");
        write(
            "linked/kustomization.yaml",
            "resources: [../base]\npatches:\n- path: replicas.yaml\n",
        );
        let link = dir.path().join("linked/replicas.yaml");
        std::os::unix::fs::symlink(&shared, &link).expect("symlink");
        assert!(why(&mut skipper, &link).is_some_and(|r| r.contains("linked/kustomization.yaml")));
        let excluded = [glob("service.yaml")];
        let skipped = Skipper::new(&excluded)
            .why(&resource, None, false)
            .expect("excluded");
        assert!(skipped.asked && skipped.reason == "excluded by --exclude service.yaml");
        // Not as a patch when the user asked for the file.
        assert_eq!(skipper.why(&replicas, None, false), None);
    }
}

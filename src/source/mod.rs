//! Where manifests come from: files, directories and standard input.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::{Error, Located};

mod skip;

pub use skip::{Glob, SkippedFile};

/// One input stream: a file or standard input.
#[derive(Debug, Clone)]
pub struct Source {
    /// The file it came from; `None` for standard input.
    pub path: Option<PathBuf>,
    pub text: String,
    /// The directory argument the file was found under; `None` for a file
    /// named on the command line and for standard input. `--in-place` keeps
    /// its writes inside this tree.
    pub found_in: Option<PathBuf>,
}

impl Source {
    /// How the source is named in messages.
    pub fn name(&self) -> String {
        self.path
            .as_ref()
            .map_or_else(|| "<stdin>".to_string(), |p| p.display().to_string())
    }
}

/// Extensions read from directories (files given by name are read whatever their name).
const MANIFEST_EXTENSIONS: [&str; 3] = ["yaml", "yml", "json"];

/// The files named by `-f` arguments, in order: files as given, directories
/// expanded to their manifest files sorted by path (subdirectories included
/// with `recursive`).
/// `-` stands for standard input and is returned as `None`. A directory
/// without a manifest file is an error: it is a mistake (a wrong path, a
/// missing `-R`), which a run of nothing would hide.
pub fn expand(paths: &[PathBuf], recursive: bool) -> Result<Vec<Option<PathBuf>>, Error> {
    Ok(expand_found(paths, recursive)?
        .into_iter()
        .map(|(path, _)| path)
        .collect())
}

/// Every source under `paths` (directories expanded as [`expand`] does), read,
/// each knowing the directory argument it was found under.
pub fn read_all(paths: &[PathBuf], recursive: bool) -> Result<Vec<Source>, Error> {
    once(expand_found(paths, recursive)?)
        .0
        .into_iter()
        .map(|(path, found_in)| {
            let mut source = read(path.as_deref())?;
            source.found_in = found_in;
            Ok(source)
        })
        .collect()
}

/// The sources under `paths` as [`read_all`] reads them, less the files
/// that are not manifests to inject (see `skip.rs`: `exclude`, a Helm
/// chart's templates, kustomize patches), which are returned with why.
pub fn read_selected(
    paths: &[PathBuf],
    recursive: bool,
    exclude: &[Glob],
) -> Result<(Vec<Source>, Vec<SkippedFile>), Error> {
    let mut skipper = skip::Skipper::new(exclude);
    let mut sources = Vec::new();
    let (found, mut skipped) = once(expand_found(paths, recursive)?);
    for (path, found_in) in found {
        if let Some(file) = &path {
            if let Some(why) = skipper.why(file, found_in.as_deref()) {
                skipped.push(why);
                continue;
            }
        }
        let mut source = read(path.as_deref())?;
        source.found_in = found_in;
        sources.push(source);
    }
    Ok((sources, skipped))
}

/// A path to read (`None` for standard input), and the directory argument
/// it was found under.
type Found = (Option<PathBuf>, Option<PathBuf>);

/// `found` with each file once: a file named again (`-f a.yaml -f a.yaml`,
/// a directory holding a file named before, a link to it) is read, reported
/// and written once, where it came first; the repetitions are returned as
/// left out, naming the first.
fn once(found: Vec<Found>) -> (Vec<Found>, Vec<SkippedFile>) {
    use std::os::unix::fs::MetadataExt;
    let mut seen: Vec<((u64, u64), PathBuf)> = Vec::new();
    let mut kept = Vec::with_capacity(found.len());
    let mut repeated = Vec::new();
    for (path, found_in) in found {
        let Some(file) = &path else {
            kept.push((path, found_in));
            continue;
        };
        // The same file, by its device and inode: through a link too.
        let Ok(meta) = std::fs::metadata(file) else {
            kept.push((path, found_in));
            continue;
        };
        let id = (meta.dev(), meta.ino());
        match seen.iter().find(|(seen, _)| *seen == id) {
            Some((_, first)) => repeated.push(SkippedFile {
                path: file.clone(),
                reason: format!(
                    "the same file as {}, named before: read and written once",
                    first.display()
                ),
                asked: false,
            }),
            None => {
                seen.push((id, file.clone()));
                kept.push((path, found_in));
            }
        }
    }
    (kept, repeated)
}

/// [`expand`], with the directory argument each file was found under.
fn expand_found(paths: &[PathBuf], recursive: bool) -> Result<Vec<Found>, Error> {
    let mut out = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            out.push((None, None));
            continue;
        }
        let meta = std::fs::metadata(path).map_err(|e| Error::io(path, &e))?;
        if !meta.is_dir() {
            out.push((Some(path.clone()), None));
            continue;
        }
        let depth = if recursive { usize::MAX } else { 1 };
        let mut files = Vec::new();
        for entry in walkdir::WalkDir::new(path)
            .max_depth(depth)
            .follow_links(true)
            .sort_by_file_name()
        {
            let entry = entry.map_err(|e| {
                let at = e.path().unwrap_or(path).to_path_buf();
                match (e.loop_ancestor(), e.io_error()) {
                    (Some(ancestor), _) => Error::Input {
                        path: at,
                        message: format!(
                            "a symbolic link loop: it leads back to {}, a directory it is in",
                            ancestor.display()
                        ),
                    },
                    (None, Some(io)) => Error::io(&at, io),
                    (None, None) => Error::Input {
                        path: at,
                        message: e.to_string(),
                    },
                }
            })?;
            if entry.file_type().is_file() && has_manifest_extension(entry.path()) {
                files.push(entry.into_path());
            }
        }
        if files.is_empty() {
            return Err(no_manifest(path, recursive));
        }
        files.sort();
        out.extend(
            files
                .into_iter()
                .map(|file| (Some(file), Some(path.clone()))),
        );
    }
    Ok(out)
}

/// Why directory `dir` gives no manifest; without `recursive`, a manifest
/// below it shows where they are and that `-R` reads them.
fn no_manifest(dir: &Path, recursive: bool) -> Error {
    let below = walkdir::WalkDir::new(dir)
        .min_depth(2)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        // Only a hint: an unreadable corner does not matter here.
        .filter_map(Result::ok)
        .find(|e| e.file_type().is_file() && has_manifest_extension(e.path()));
    let message = match below {
        Some(file) if !recursive => format!(
            "no .yaml, .yml or .json file directly in this directory, but its subdirectories \
             hold some ({}): pass -R to read them",
            file.path().display()
        ),
        _ => "no .yaml, .yml or .json file in this directory or below it".to_string(),
    };
    Error::Input {
        path: dir.to_path_buf(),
        message,
    }
}

fn has_manifest_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| MANIFEST_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

/// Read one source: a file, or standard input for `None`.
pub fn read(path: Option<&Path>) -> Result<Source, Error> {
    let bytes = match path {
        Some(path) => std::fs::read(path).map_err(|e| Error::io(path, &e))?,
        None => {
            let stdin = std::io::stdin();
            let mut buf = Vec::with_capacity(stdin_file_size());
            stdin
                .lock()
                .read_to_end(&mut buf)
                .map_err(|e| Error::io(Path::new("<stdin>"), &e))?;
            // From a pipe, the buffer grew by doubling: the copies it left
            // behind go back to the system before the run's work adds to them.
            crate::allocator::give_back_freed();
            buf
        }
    };
    let name = || path.map_or_else(|| "<stdin>".to_string(), |p| p.display().to_string());
    if let Some(encoding) = utf16_or_32(&bytes) {
        // kubectl reads these by their byte order mark; the tool edits UTF-8
        // text only, and says which encoding it found and how to convert it.
        return Err(Error::Document(Located::at(
            &name(),
            "",
            1,
            0,
            format!(
                "the input is {encoding} (by its byte order mark), which kubectl reads but this tool does not: convert it first, e.g. `iconv -f {encoding} -t UTF-8`"
            ),
        )));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let name = name();
        let bytes = e.into_bytes();
        let shown = String::from_utf8_lossy(&bytes);
        let document = document_at(shown.get(..offset).unwrap_or(&shown));
        Error::Document(Located::at(
            &name,
            &shown,
            document,
            offset,
            format!("not valid UTF-8 (byte {offset} of the file)"),
        ))
    })?;
    Ok(Source {
        path: path.map(Path::to_path_buf),
        text,
        found_in: None,
    })
}

/// The encoding a UTF-16 or UTF-32 byte order mark at the start of `bytes`
/// names, if one is there.
fn utf16_or_32(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0xFF, 0xFE, 0, 0, ..] => Some("UTF-32LE"),
        [0, 0, 0xFE, 0xFF, ..] => Some("UTF-32BE"),
        [0xFF, 0xFE, ..] => Some("UTF-16LE"),
        [0xFE, 0xFF, ..] => Some("UTF-16BE"),
        _ => None,
    }
}

/// The size of standard input when it is a file (`< file`), so that it is
/// read into a buffer of its size, as a file named with `-f` is, rather than
/// one grown by doubling; nothing for a pipe, whose size is not known before
/// it ends.
fn stdin_file_size() -> usize {
    use std::os::fd::AsFd;
    std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .map(std::fs::File::from)
        .and_then(|file| file.metadata())
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map_or(0, |meta| usize::try_from(meta.len()).unwrap_or(0))
}

/// Which document (1-based) the end of `before`, the start of a stream, is
/// in, by its `---` lines: for a place the YAML parser cannot reach.
fn document_at(before: &str) -> usize {
    let mut markers = 0;
    let mut content_first = false;
    for line in before.lines() {
        let marker = line
            .strip_prefix("---")
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '\r']));
        if marker {
            markers += 1;
        } else if markers == 0 {
            let line = line.trim_start_matches('\u{feff}').trim();
            content_first |= !(line.is_empty() || line.starts_with(['#', '%']));
        }
    }
    (markers + usize::from(content_first)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_expand_sorted_and_filtered() {
        let dir = tempfile::tempdir().expect("tempdir");
        for name in ["b.yaml", "a.yml", "c.json", "notes.txt", "sub/d.yaml"] {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, "a: 1\n").expect("write");
        }
        let names = |recursive| -> Vec<String> {
            expand(&[dir.path().to_path_buf()], recursive)
                .expect("expands")
                .into_iter()
                .map(|p| {
                    let p = p.expect("file");
                    p.strip_prefix(dir.path())
                        .expect("inside")
                        .display()
                        .to_string()
                })
                .collect()
        };
        assert_eq!(names(false), ["a.yml", "b.yaml", "c.json"]);
        assert_eq!(names(true), ["a.yml", "b.yaml", "c.json", "sub/d.yaml"]);
    }

    #[test]
    fn missing_path_is_an_error() {
        let err = expand(&[PathBuf::from("/no/such/file.yaml")], false).expect_err("missing");
        assert!(err.to_string().contains("/no/such/file.yaml"));
    }

    #[test]
    fn invalid_utf8_is_placed_in_its_document() {
        assert_eq!(document_at("a: 1\n"), 1);
        assert_eq!(document_at("---\na: 1\n"), 1);
        assert_eq!(document_at("# c\n---\na: 1\n---\nb: "), 2);
        assert_eq!(document_at("a: 1\n---\nb: 2\n--- # x\nc: "), 3);
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("bad.yaml");
        std::fs::write(&path, b"a: 1\n---\nkind: Pod\nname: ab\xffc\n").expect("write");
        let err = read(Some(&path)).expect_err("not UTF-8");
        let Error::Document(at) = &err else {
            panic!("{err:?}")
        };
        assert_eq!((at.document, at.line, at.column), (2, 4, 9));
        assert!(
            err.to_string()
                .ends_with("document 2, line 4:9: not valid UTF-8 (byte 27 of the file)"),
            "{err}"
        );
    }
}

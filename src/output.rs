//! Sinks: what a run writes. Everything is built in memory first, so a run that
//! fails writes nothing at all.

use std::path::{Path, PathBuf};

use anstyle::{AnsiColor, Style};
use serde_json::{Value, json};

use crate::error::Error;
use crate::pipeline::Processed;

/// Standard output and standard error, as messages name them.
pub const STDOUT: &str = "standard output";
pub const STDERR: &str = "standard error";

/// How diagnostics are shown: `error:` bold red, `warning:` bold yellow and
/// rejections red, as cargo shows them; plain text when colour is off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Paint {
    pub on: bool,
}

impl Paint {
    pub const ERROR: Style = AnsiColor::Red.on_default().bold();
    pub const WARNING: Style = AnsiColor::Yellow.on_default().bold();
    pub const REJECTION: Style = AnsiColor::Red.on_default();

    pub fn new(on: bool) -> Self {
        Paint { on }
    }

    /// `text` in `style`, or as it is.
    pub fn paint(self, style: Style, text: &str) -> String {
        if self.on {
            format!("{style}{text}{style:#}")
        } else {
            text.to_string()
        }
    }

    /// `error:`, for a message that stops the run.
    pub fn error(self) -> String {
        self.paint(Self::ERROR, "error:")
    }

    /// `warning:`, for what the run goes on with.
    pub fn warning(self) -> String {
        self.paint(Self::WARNING, "warning:")
    }
}

/// Write `text` to standard output, flushed: a full disk must fail the run,
/// not truncate its output silently.
pub fn to_stdout(text: &str) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    write_stream(STDOUT, &mut out, text)
}

/// Write `pieces` to standard output, flushed and checked as [`to_stdout`] is.
/// A piece that is an error (see [`Processed::pieces`]) stops the writing.
pub fn pieces_to_stdout<'a>(
    pieces: impl Iterator<Item = Result<&'a [u8], Error>>,
) -> Result<(), Error> {
    let mut out = Gathered::new(std::io::stdout().lock());
    let write = |error| Error::Write { to: STDOUT, error };
    for piece in pieces {
        out.push(piece?).map_err(write)?;
    }
    out.finish().map_err(write)
}

/// Pieces of output handed to the writer together (`writev`), not copied
/// into a buffer first: the output of a large stream is mostly the same
/// few blocks of text again and again, written straight from where they are.
pub struct Gathered<'a, W: std::io::Write> {
    out: W,
    pieces: Vec<std::io::IoSlice<'a>>,
}

/// How many pieces one `writev` takes at most (`IOV_MAX` on Linux and macOS).
const PIECES_MAX: usize = 1024;

impl<'a, W: std::io::Write> Gathered<'a, W> {
    pub fn new(out: W) -> Self {
        Gathered {
            out,
            pieces: Vec::with_capacity(PIECES_MAX),
        }
    }

    /// Add `piece` to the output.
    pub fn push(&mut self, piece: &'a [u8]) -> std::io::Result<()> {
        if piece.is_empty() {
            return Ok(());
        }
        self.pieces.push(std::io::IoSlice::new(piece));
        if self.pieces.len() == PIECES_MAX {
            self.write_pieces()?;
        }
        Ok(())
    }

    /// Write what is gathered, all of it, and flush the writer.
    pub fn finish(mut self) -> std::io::Result<()> {
        self.write_pieces()?;
        self.out.flush()
    }

    fn write_pieces(&mut self) -> std::io::Result<()> {
        let mut left = self.pieces.as_mut_slice();
        while !left.is_empty() {
            match self.out.write_vectored(left) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(written) => std::io::IoSlice::advance_slices(&mut left, written),
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
        self.pieces.clear();
        Ok(())
    }
}

/// Write `text` to standard error (unbuffered), checked like standard output.
pub fn to_stderr(text: &str) -> Result<(), Error> {
    let mut err = std::io::stderr().lock();
    write_stream(STDERR, &mut err, text)
}

fn write_stream(to: &'static str, out: &mut impl std::io::Write, text: &str) -> Result<(), Error> {
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|error| Error::Write { to, error })
}

/// Write the manifests of every source as one YAML stream, byte-identical
/// where untouched, straight from each source's output (no joined copy), to
/// `out`, the stream `to` names. A piece of an output that is an error
/// (see [`Processed::pieces`]) stops the writing.
pub fn write_yaml_stream<'a, W: std::io::Write>(
    results: &'a [Processed],
    out: &mut Gathered<'a, W>,
    to: &'static str,
) -> Result<(), Error> {
    let write = |error| Error::Write { to, error };
    let mut wrote_any = false;
    let mut ends_with_newline = true;
    for processed in results {
        let mut blank = true;
        for piece in processed.pieces() {
            if !piece?.trim().is_empty() {
                blank = false;
                break;
            }
        }
        if blank {
            continue;
        }
        if wrote_any {
            if !ends_with_newline {
                out.push(b"\n").map_err(write)?;
            }
            // A byte-order mark and three more characters tell how it starts.
            let mut head = String::new();
            for piece in processed.pieces() {
                let wanted = 4 - head.chars().count();
                head.extend(piece?.chars().take(wanted));
                if head.chars().count() == 4 {
                    break;
                }
            }
            let start = head.trim_start_matches('\u{feff}');
            if start.starts_with('%') {
                // Directives must follow a document end marker.
                out.push(b"...\n").map_err(write)?;
            } else if !start.starts_with("---") {
                out.push(b"---\n").map_err(write)?;
            }
        }
        let mut last: &[u8] = &[];
        for piece in processed.byte_pieces() {
            let piece = piece?;
            out.push(piece).map_err(write)?;
            last = piece;
        }
        ends_with_newline = last.ends_with(b"\n");
        wrote_any = true;
    }
    Ok(())
}

/// The objects as JSON: one object as itself, several as a `List`, like `kubectl get -o json`.
pub fn json_stream(results: &[Processed]) -> String {
    let mut values: Vec<&Value> = results.iter().flat_map(|p| &p.values).collect();
    let list;
    let value = if values.len() == 1 {
        values.remove(0)
    } else {
        list = json!({"apiVersion": "v1", "kind": "List", "items": values, "metadata": {}});
        &list
    };
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

/// Whole values as a YAML stream, in kubectl's block style (`admit -o yaml`).
pub fn yaml_documents(values: &[&Value]) -> String {
    let layout = crate::yaml::emit::Layout {
        seq_indent: 0,
        ..Default::default()
    };
    let mut out = String::new();
    for (index, value) in values.iter().enumerate() {
        if index > 0 {
            out.push_str("---\n");
        }
        match value {
            Value::Object(map) if !map.is_empty() => {
                for (key, item) in map {
                    out.push_str(&layout.block_entry(0, key, item));
                }
            }
            other => {
                out.push_str(&layout.flow(other));
                out.push('\n');
            }
        }
    }
    out
}

/// The JSON Patch of every object that changes, with where it came from.
pub fn patches(results: &[Processed]) -> String {
    let entries: Vec<Value> = results
        .iter()
        .flat_map(|processed| {
            processed
                .objects
                .iter()
                .filter(|o| !o.ops.is_empty())
                .map(move |object| {
                    let reference = object.reference.as_ref();
                    json!({
                        "source": processed.source.name(),
                        "document": object.document,
                        "apiVersion": reference.map(|r| r.api_version.as_str()),
                        "kind": reference.map(|r| r.kind.as_str()),
                        "namespace": reference.and_then(|r| r.namespace.as_deref()),
                        "name": reference.map(|r| r.name.as_str()),
                        "patch": object.ops,
                    })
                })
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&entries).unwrap_or_default();
    text.push('\n');
    text
}

/// A path as git writes it in a diff header: its `.` components and empty
/// ones (a doubled or leading slash) left out, the rest as given (`./a.yaml`
/// and `.//dir//a.yaml` become `a.yaml` and `dir/a.yaml`), since
/// `git apply` refuses a path with a `.` component.
fn git_path(name: &str) -> String {
    let parts: Vec<&str> = name
        .split('/')
        .filter(|part| !part.is_empty() && *part != ".")
        .collect();
    if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    }
}

/// A unified diff of every changed source, coloured when asked; an error
/// when an output is not a text (see [`Processed::try_text`]).
pub fn diff(results: &[Processed], color: bool) -> Result<String, Error> {
    let mut out = String::new();
    for processed in results.iter().filter(|p| p.changed()) {
        let name = processed.source.name();
        // Patience keeps added blocks whole instead of interleaving them with
        // look-alike lines (`securityContext:`) of the neighbours.
        let new_text = processed.try_text()?;
        let diff = similar::TextDiff::configure()
            .algorithm(similar::Algorithm::Patience)
            .diff_lines(processed.source.text.as_str(), &*new_text);
        let text = diff
            .unified_diff()
            .context_radius(3)
            .header(
                &format!("a/{}", git_path(&name)),
                &format!("b/{}", git_path(&name)),
            )
            .to_string();
        for line in text.split_inclusive('\n') {
            let style = match line.as_bytes().first() {
                _ if !color => Style::new(),
                Some(b'+') if line.starts_with("+++") => Style::new().bold(),
                Some(b'-') if line.starts_with("---") => Style::new().bold(),
                Some(b'+') => AnsiColor::Green.on_default(),
                Some(b'-') => AnsiColor::Red.on_default(),
                Some(b'@') => AnsiColor::Cyan.on_default(),
                _ => Style::new(),
            };
            let body = line.trim_end_matches('\n');
            out.push_str(&format!("{style}{body}{style:#}\n"));
        }
    }
    Ok(out)
}

/// Rewrite every changed file, so that a failure, or a kill at any moment,
/// leaves each file either entirely old or entirely new:
///
/// 1. every new version is written to a temporary file beside its original
///    (`.NAME.mesh-inject.PID.N.tmp`, never a manifest extension), given the
///    original's owner (where permitted) and mode, and flushed to disk;
/// 2. only when all are written are they renamed over the originals, and
///    the directories flushed.
///
/// A failure in step 1 removes the temporaries and leaves every original
/// untouched. A symbolic link keeps being a link: its target is rewritten.
/// A link found under a directory argument must lead to a file inside that
/// directory, or the run is refused before anything is written; a link named
/// on the command line is written through, with a note (returned). Temporary
/// files a killed run left beside the inputs are removed first.
pub fn write_in_place(
    results: &[Processed],
    overwrite_read_only: bool,
) -> Result<Vec<String>, Error> {
    let mut notes = Vec::new();
    let mut plans: Vec<(PathBuf, std::borrow::Cow<'_, str>)> = Vec::new();
    // What each file held when it was read: it must still hold it.
    let mut read_as: Vec<&str> = Vec::new();
    let mut dirs: Vec<PathBuf> = Vec::new();
    for processed in results {
        let Some(path) = &processed.source.path else {
            continue;
        };
        if !processed.changed() {
            // Its directory may still hold a killed run's leftovers.
            if let Some(dir) = std::fs::canonicalize(path)
                .ok()
                .and_then(|t| t.parent().map(Path::to_path_buf))
            {
                if !dirs.contains(&dir) {
                    dirs.push(dir);
                }
            }
            continue;
        }
        let target = resolve_target(path, processed.source.found_in.as_deref())?;
        if let Some(dir) = target.parent() {
            if !dirs.iter().any(|d| d == dir) {
                dirs.push(dir.to_path_buf());
            }
        }
        // A file reached twice (a link and its target) is written once.
        if plans.iter().any(|(t, _)| *t == target) {
            continue;
        }
        let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
        if is_link && processed.source.found_in.is_none() {
            notes.push(format!(
                "{} is a symbolic link: rewrote its target {}",
                path.display(),
                target.display()
            ));
        }
        let read_only = std::fs::metadata(&target).is_ok_and(|m| m.permissions().readonly());
        if read_only && !overwrite_read_only {
            return Err(Error::Output {
                path: path.clone(),
                message: "is read-only: nothing was written (--overwrite-read-only rewrites it)"
                    .into(),
            });
        }
        plans.push((target, processed.try_text()?));
        read_as.push(&processed.source.text);
    }
    for dir in &dirs {
        remove_stale_temporaries(dir);
    }
    let mut staged: Vec<(PathBuf, PathBuf)> = Vec::new();
    for (target, text) in &plans {
        match stage(target, text) {
            Ok(temp) => staged.push((temp, target.clone())),
            Err(err) => {
                for (temp, _) in &staged {
                    let _ = std::fs::remove_file(temp);
                }
                return Err(err);
            }
        }
    }
    // Another writer (an editor, a checkout) changed a file since it was
    // read: its change is kept, and nothing is written.
    let changed = plans.iter().zip(&read_as).find(|((target, _), read)| {
        std::fs::read(target).map_or(true, |now| now != read.as_bytes())
    });
    if let Some(((target, _), _)) = changed {
        for (temp, _) in &staged {
            let _ = std::fs::remove_file(temp);
        }
        return Err(Error::Output {
            path: target.clone(),
            message: "changed since it was read (another program wrote it during the run): nothing was written; run again"
                .into(),
        });
    }
    for (index, (temp, target)) in staged.iter().enumerate() {
        if let Err(e) = std::fs::rename(temp, target) {
            for (temp, _) in staged.iter().skip(index) {
                let _ = std::fs::remove_file(temp);
            }
            // The files renamed before this one are new: say which, so that
            // the failure is not taken for one that wrote nothing.
            let done: Vec<String> = staged
                .iter()
                .take(index)
                .map(|(_, t)| t.display().to_string())
                .collect();
            let message = match done.as_slice() {
                [] => format!("{e}; nothing was written"),
                _ => format!(
                    "{e}; already rewritten: {}; the other files are as they were",
                    done.join(", ")
                ),
            };
            return Err(Error::Output {
                path: target.clone(),
                message,
            });
        }
    }
    // The renames reach the disk with their directories.
    let mut synced: Vec<&Path> = Vec::new();
    for (_, target) in &staged {
        let dir = target.parent().unwrap_or(Path::new("."));
        if !synced.contains(&dir) {
            if let Ok(handle) = std::fs::File::open(dir) {
                let _ = handle.sync_all();
            }
            synced.push(dir);
        }
    }
    Ok(notes)
}

/// Write `text` to `target` (new, or replaced) so that a failure or a kill
/// leaves either the old file or the new one: a temporary file beside it,
/// flushed, then renamed over it, and the directory flushed.
pub fn write_file_atomically(target: &Path, text: &str) -> Result<(), Error> {
    let dir = target.parent().unwrap_or(Path::new("."));
    remove_stale_temporaries(dir);
    let temp = stage(target, text)?;
    if let Err(e) = std::fs::rename(&temp, target) {
        let _ = std::fs::remove_file(&temp);
        return Err(Error::Output {
            path: target.to_path_buf(),
            message: e.to_string(),
        });
    }
    if let Ok(handle) = std::fs::File::open(dir) {
        let _ = handle.sync_all();
    }
    Ok(())
}

/// The file that rewriting `path` writes: `path` itself, or the file a
/// symbolic link (at `path` or in a directory on the way) leads to. A file
/// found under the directory argument `found_in` must stay inside it.
fn resolve_target(path: &Path, found_in: Option<&Path>) -> Result<PathBuf, Error> {
    let failed = |e: std::io::Error| Error::Output {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let target = std::fs::canonicalize(path).map_err(failed)?;
    if let Some(tree) = found_in {
        let root = std::fs::canonicalize(tree).map_err(failed)?;
        if !target.starts_with(&root) {
            return Err(Error::Output {
                path: path.to_path_buf(),
                message: format!(
                    "it is a symbolic link to {}, outside {}; nothing was written (name the file with -f to rewrite it there)",
                    target.display(),
                    tree.display()
                ),
            });
        }
    }
    Ok(target)
}

/// The marker in the names of this tool's temporary files.
const TEMP_MARK: &str = ".mesh-inject.";

/// Remove from `dir` the temporary files of runs that were killed before
/// they could rename them: named as [`stage`] names them, by a process that
/// no longer runs. Where processes cannot be looked up (no `/proc`), nothing
/// is removed; the names never end in a manifest extension, so a leftover is
/// never read as a manifest either way.
fn remove_stale_temporaries(dir: &Path) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let own = std::process::id();
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(pid) = temporary_owner(name) else {
            continue;
        };
        if pid != own && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The process id in a temporary file name `.NAME.mesh-inject.PID.N.tmp`.
fn temporary_owner(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (_, tail) = rest.rsplit_once(TEMP_MARK)?;
    let (pid, attempt) = tail.split_once('.')?;
    attempt.parse::<u32>().ok()?;
    pid.parse().ok()
}

/// Write `text` to a new temporary file beside `target`, with its owner and
/// mode, flushed to disk; returns the temporary's path.
fn stage(target: &Path, text: &str) -> Result<PathBuf, Error> {
    use std::io::Write;
    use std::os::unix::fs::MetadataExt;
    let failed = |e: std::io::Error| Error::Output {
        path: target.to_path_buf(),
        message: e.to_string(),
    };
    let dir = target.parent().unwrap_or(Path::new("."));
    let file_name = target
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    // A new file takes the mode new files get; one rewritten keeps its own.
    let meta = match std::fs::metadata(target) {
        Ok(meta) => Some(meta),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(failed(e)),
    };
    for attempt in 0..100 {
        let temp = dir.join(format!(
            ".{file_name}{TEMP_MARK}{}.{attempt}.tmp",
            std::process::id()
        ));
        // create_new: never follow or reuse something already there.
        let mut file = match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
        {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(failed(e)),
        };
        let written = file
            .write_all(text.as_bytes())
            .and_then(|()| {
                let Some(meta) = &meta else { return Ok(()) };
                // The original's owner where this user may give it (root,
                // or a group of one's own); otherwise the writer's.
                match std::os::unix::fs::chown(&temp, Some(meta.uid()), Some(meta.gid())) {
                    Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Ok(()),
                    other => other,
                }
                // After chown, which may clear set-id bits.
                .and_then(|()| std::fs::set_permissions(&temp, meta.permissions()))
            })
            .and_then(|()| file.sync_all());
        if let Err(e) = written {
            let _ = std::fs::remove_file(&temp);
            return Err(failed(e));
        }
        return Ok(temp);
    }
    Err(failed(std::io::Error::other("no free temporary file name")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_paths_leave_out_dot_and_empty_components() {
        for (given, written) in [
            ("./a.yaml", "a.yaml"),
            (".//dir//a.yaml", "dir/a.yaml"),
            ("dir/./a.yaml", "dir/a.yaml"),
            ("dir/a.yaml", "dir/a.yaml"),
            ("../up/a.yaml", "../up/a.yaml"),
            ("/abs/a.yaml", "abs/a.yaml"),
        ] {
            assert_eq!(git_path(given), written, "{given}");
        }
    }

    /// A writer that takes a few bytes of one piece at a time, and is
    /// interrupted every other call, as a slow pipe may be.
    struct Trickle {
        written: Vec<u8>,
        calls: usize,
    }

    impl std::io::Write for Trickle {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.calls += 1;
            if self.calls % 2 == 0 {
                return Err(std::io::ErrorKind::Interrupted.into());
            }
            let n = buf.len().min(3);
            self.written.extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn gathered_pieces_are_all_written_in_order() {
        let pieces: Vec<String> = (0..3000).map(|i| format!("piece {i}\n")).collect();
        let mut out = Trickle {
            written: Vec::new(),
            calls: 0,
        };
        let mut gathered = Gathered::new(&mut out);
        for piece in &pieces {
            gathered.push(piece.as_bytes()).expect("written");
            gathered.push(b"").expect("nothing to write");
        }
        gathered.finish().expect("written");
        assert_eq!(
            String::from_utf8(out.written).expect("utf-8"),
            pieces.concat()
        );
    }

    /// A file rewritten from `read` (as read) to `new`.
    fn rewrite(path: &Path, read: &str, new: &str) -> Processed {
        Processed {
            source: crate::source::Source::new(Some(path.to_path_buf()), read.to_string()),
            output: crate::pipeline::Output::Text(new.to_string()),
            objects: Vec::new(),
            values: Vec::new(),
        }
    }

    #[test]
    fn a_file_another_program_changed_since_it_was_read_is_left_with_its_change() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (a, b) = (dir.path().join("a.yaml"), dir.path().join("b.yaml"));
        std::fs::write(&a, "a: 1\n").expect("write");
        // Read as `b: 1`, then an editor saved `b: 2`.
        std::fs::write(&b, "b: 2\n").expect("write");
        let results = [
            rewrite(&a, "a: 1\n", "a: 9\n"),
            rewrite(&b, "b: 1\n", "b: 9\n"),
        ];
        let err = write_in_place(&results, false).expect_err("refused");
        assert!(
            err.to_string().contains("changed since it was read"),
            "{err}"
        );
        assert!(err.to_string().contains("b.yaml"), "{err}");
        // Neither file is written, and no temporary is left.
        assert_eq!(std::fs::read_to_string(&a).expect("a"), "a: 1\n");
        assert_eq!(std::fs::read_to_string(&b).expect("b"), "b: 2\n");
        assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 2);
    }

    #[test]
    fn a_read_only_file_is_rewritten_only_when_asked() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("a.yaml");
        std::fs::write(&path, "a: 1\n").expect("write");
        let mut permissions = std::fs::metadata(&path).expect("meta").permissions();
        permissions.set_readonly(true);
        std::fs::set_permissions(&path, permissions).expect("read-only");
        let results = [rewrite(&path, "a: 1\n", "a: 9\n")];
        let err = write_in_place(&results, false).expect_err("refused");
        assert!(err.to_string().contains("is read-only"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).expect("a"), "a: 1\n");
        write_in_place(&results, true).expect("asked");
        assert_eq!(std::fs::read_to_string(&path).expect("a"), "a: 9\n");
        assert!(
            std::fs::metadata(&path)
                .expect("meta")
                .permissions()
                .readonly()
        );
    }

    #[test]
    fn temporary_names_carry_their_owner_and_no_manifest_extension() {
        assert_eq!(
            temporary_owner(".web.yaml.mesh-inject.4242.0.tmp"),
            Some(4242)
        );
        assert_eq!(
            temporary_owner(".a.mesh-inject.b.yaml.mesh-inject.7.12.tmp"),
            Some(7)
        );
        assert_eq!(temporary_owner("web.yaml"), None);
        assert_eq!(temporary_owner(".web.yaml.mesh-inject.x.0.tmp"), None);
        assert_eq!(temporary_owner(".notes.tmp"), None);
    }
}

//! Where manifests come from: files, directories and standard input.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::{Error, Located};
use crate::yaml::expansion::Tally;

mod namespace;
mod patches;
mod skip;

pub use namespace::{Build, Finder, Kustomized, namespace_name};
pub use patches::IndexPatch;
pub use skip::{Glob, SkippedFile, kustomize_patch};

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
    /// What the aliases of its documents, and of those of the sources read
    /// with it, stand for once expanded: they are refused together when
    /// that is too much (see `yaml/expansion.rs`).
    pub aliases: Tally,
    /// The namespaces kustomize gives its objects, when kustomizations
    /// include the file (see `namespace.rs`).
    pub kustomized: Kustomized,
}

impl Source {
    /// A source of `text` read from `path` (`None`: standard input), found
    /// under no directory and included by no kustomization.
    pub fn new(path: Option<PathBuf>, text: String) -> Self {
        Source {
            path,
            text,
            found_in: None,
            aliases: Tally::default(),
            kustomized: Kustomized::default(),
        }
    }

    /// Parse its documents in `self.text[from..to]` as
    /// [`crate::yaml::parse::each_document`] does, what their aliases stand
    /// for counted with the documents of the sources read with it.
    pub fn each_document<'a>(
        &'a self,
        from: usize,
        to: usize,
        each: impl FnMut(crate::yaml::Document<'a>),
    ) -> Result<(), crate::yaml::SyntaxError> {
        crate::yaml::parse::each_document_counted(&self.text, from, to, &self.aliases, each)
    }

    /// Its documents in `self.text[from..to]`, as [`Source::each_document`] reads them.
    pub fn parse_range(
        &self,
        from: usize,
        to: usize,
    ) -> Result<Vec<crate::yaml::Document<'_>>, crate::yaml::SyntaxError> {
        crate::yaml::parse::parse_range_counted(&self.text, from, to, &self.aliases)
    }

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
    read_all_within(paths, recursive, DEFAULT_MAX_INPUT_BYTES)
}

/// [`read_all`], each source of at most `max_bytes` (see [`read_within`]).
pub fn read_all_within(
    paths: &[PathBuf],
    recursive: bool,
    max_bytes: u64,
) -> Result<Vec<Source>, Error> {
    let aliases = Tally::default();
    once(expand_found(paths, recursive)?)
        .0
        .into_iter()
        .map(|(path, found_in)| {
            let mut source = read_within(path.as_deref(), max_bytes)?;
            source.found_in = found_in;
            source.aliases = aliases.clone();
            Ok(source)
        })
        .collect()
}

/// The sources under `paths` as [`read_all_within`] reads them, less the
/// files that are not manifests to inject (see `skip.rs`: `exclude`, a Helm
/// chart's templates, kustomize patches), which are returned with why.
/// A file of `named` (the paths given with `-f`) named itself is read even
/// when a kustomization lists it as a patch: the user asked for it. Each
/// file knows the namespaces kustomize gives its objects.
pub fn read_selected(
    paths: &[PathBuf],
    named: &[PathBuf],
    recursive: bool,
    exclude: &[Glob],
    max_bytes: u64,
) -> Result<(Vec<Source>, Vec<SkippedFile>), Error> {
    let mut skipper = skip::Skipper::new(exclude);
    let mut namespaces = Finder::default();
    let mut sources = Vec::new();
    let aliases = Tally::default();
    let (found, mut skipped) = once(expand_found(paths, recursive)?);
    for (path, found_in) in found {
        if let Some(file) = &path {
            let asked_for = found_in.is_none() && named.contains(file);
            if let Some(why) = skipper.why(file, found_in.as_deref(), !asked_for) {
                skipped.push(why);
                continue;
            }
        }
        let mut source = read_within(path.as_deref(), max_bytes)?;
        if let Some(file) = &path {
            source.kustomized = namespaces.of(file, found_in.as_deref());
        }
        source.found_in = found_in;
        source.aliases = aliases.clone();
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

/// Most bytes one input (a file, or standard input) may hold unless
/// `--max-input-bytes` says otherwise: 256 MiB, over twenty times the
/// largest manifests met (a cluster's every workload, `kubectl get -A -o
/// yaml`, is a few MB), and a bound on what a run holds in memory.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 256 << 20;

/// How much of an input is read before reading goes on: its first bytes
/// tell a manifest from binary data (a NUL byte, bytes that are not UTF-8,
/// control characters), which is refused there rather than read to its end
/// (`/dev/zero` has none).
const FIRST_BLOCK: u64 = 64 << 10;

/// `bytes` as a size is written: `256 MiB`, else in bytes.
pub fn size_text(bytes: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (1 << 40, "TiB"),
        (1 << 30, "GiB"),
        (1 << 20, "MiB"),
        (1 << 10, "KiB"),
    ];
    UNITS
        .iter()
        .find(|(unit, _)| bytes >= *unit && bytes % unit == 0)
        .map_or_else(
            || format!("{bytes} bytes"),
            |(unit, name)| format!("{} {name}", bytes / unit),
        )
}

/// Read one source, a file or standard input for `None`, of at most
/// [`DEFAULT_MAX_INPUT_BYTES`] (see [`read_within`]).
pub fn read(path: Option<&Path>) -> Result<Source, Error> {
    read_within(path, DEFAULT_MAX_INPUT_BYTES)
}

/// Read one source: a file, or standard input for `None`, of at most
/// `max_bytes`. Reading stops at the limit (an endless input is refused
/// there, never read to its end), and at the first bytes when they are not
/// a manifest's.
pub fn read_within(path: Option<&Path>, max_bytes: u64) -> Result<Source, Error> {
    let name = || path.map_or_else(|| "<stdin>".to_string(), |p| p.display().to_string());
    let bytes = match path {
        Some(path) => {
            let file = std::fs::File::open(path).map_err(|e| Error::io(path, &e))?;
            let size = file
                .metadata()
                .ok()
                .filter(std::fs::Metadata::is_file)
                .map_or(0, |meta| meta.len());
            if size > max_bytes {
                return Err(too_large(path, Some(size), max_bytes));
            }
            read_bytes(file, size, max_bytes, path, &name)?
        }
        None => {
            let stdin = std::io::stdin();
            let size = stdin_file_size();
            if size > max_bytes {
                return Err(too_large(Path::new("<stdin>"), Some(size), max_bytes));
            }
            let bytes = read_bytes(stdin.lock(), size, max_bytes, Path::new("<stdin>"), &name)?;
            // From a pipe, the buffer grew by doubling: the copies it left
            // behind go back to the system before the run's work adds to them.
            crate::allocator::give_back_freed();
            bytes
        }
    };
    let text = String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        not_utf8(&name(), &e.into_bytes(), offset)
    })?;
    Ok(Source::new(path.map(Path::to_path_buf), text))
}

/// The bytes of `reader` (`path` in messages, `name` in located ones), of
/// `size` when known: its first block looked at before the rest is read,
/// and no more than `max_bytes` read.
fn read_bytes(
    mut reader: impl Read,
    size: u64,
    max_bytes: u64,
    path: &Path,
    name: &dyn Fn() -> String,
) -> Result<Vec<u8>, Error> {
    let room = usize::try_from(size.min(max_bytes)).unwrap_or(0);
    let mut bytes = Vec::with_capacity(room);
    let mut read = |bytes: &mut Vec<u8>, most: u64| {
        let before = bytes.len();
        (&mut reader)
            .take(most)
            .read_to_end(bytes)
            .map_err(|e| Error::io(path, &e))?;
        Ok::<u64, Error>(u64::try_from(bytes.len() - before).unwrap_or(u64::MAX))
    };
    let first = FIRST_BLOCK.min(max_bytes);
    let got = read(&mut bytes, first)?;
    not_a_manifest(&name(), &bytes, got < first)?;
    let got = got.saturating_add(read(&mut bytes, max_bytes.saturating_sub(got))?);
    // At the limit: one byte more says whether the input goes on, without
    // growing the buffer for it.
    if got == max_bytes && read(&mut Vec::with_capacity(1), 1)? > 0 {
        return Err(too_large(path, None, max_bytes));
    }
    Ok(bytes)
}

/// An input larger than `max_bytes` (`size` when known before reading).
fn too_large(path: &Path, size: Option<u64>, max_bytes: u64) -> Error {
    let what = size.map_or_else(
        || format!("more than {}", size_text(max_bytes)),
        |size| format!("{} ({size} bytes)", size_text_rounded(size)),
    );
    Error::Input {
        path: path.to_path_buf(),
        message: format!(
            "{what}, larger than one input may be ({}); nothing was read past it. Give a larger \
             --max-input-bytes to read it (e.g. --max-input-bytes {})",
            size_text(max_bytes),
            flag_size(size.unwrap_or(max_bytes.saturating_mul(2)))
        ),
    }
}

/// `bytes` in MiB (or KiB), rounded up, for a message.
fn size_text_rounded(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes.div_ceil(1 << 20))
    } else {
        format!("{} KiB", bytes.div_ceil(1 << 10))
    }
}

/// A `--max-input-bytes` value that takes `bytes`: the power of two of
/// MiB (or GiB) at or above it.
fn flag_size(bytes: u64) -> String {
    let mib = bytes.div_ceil(1 << 20).max(1).next_power_of_two();
    if mib >= 1024 {
        format!("{}Gi", mib / 1024)
    } else {
        format!("{mib}Mi")
    }
}

/// Why `first`, the first bytes of input `name` (all of it when `whole`),
/// are not a manifest's, if they are not: UTF-16 or UTF-32 (by their byte
/// order mark), a NUL byte, bytes that are not UTF-8, or a control
/// character YAML does not allow.
fn not_a_manifest(name: &str, first: &[u8], whole: bool) -> Result<(), Error> {
    if let Some(encoding) = utf16_or_32(first) {
        // kubectl reads these by their byte order mark; the tool edits UTF-8
        // text only, and says which encoding it found and how to convert it.
        return Err(Error::Document(Located::at(
            name,
            "",
            1,
            0,
            format!(
                "the input is {encoding} (by its byte order mark), which kubectl reads but this tool does not: convert it first, e.g. `iconv -f {encoding} -t UTF-8`"
            ),
        )));
    }
    let of = if name == "<stdin>" {
        "of the input"
    } else {
        "of the file"
    };
    let (text, valid) = match std::str::from_utf8(first) {
        Ok(text) => (text, true),
        // A character cut at the end of the block is read whole after it.
        Err(e) if e.error_len().is_none() && !whole => (
            std::str::from_utf8(first.get(..e.valid_up_to()).unwrap_or_default())
                .unwrap_or_default(),
            true,
        ),
        Err(e) => (
            std::str::from_utf8(first.get(..e.valid_up_to()).unwrap_or_default())
                .unwrap_or_default(),
            false,
        ),
    };
    if let Some(at) = text.find('\0') {
        return Err(Error::Document(Located::at(
            name,
            text,
            document_at(text.get(..at).unwrap_or_default()),
            at,
            format!(
                "a NUL byte (byte {at} {of}): binary data, or text in UTF-16 or UTF-32 without \
                 a byte order mark, not a manifest; nothing was read past its first {}",
                size_text(FIRST_BLOCK)
            ),
        )));
    }
    if !valid {
        return Err(not_utf8(name, first, text.len()));
    }
    if let Some((at, c)) = crate::yaml::parse::unprintable(text) {
        return Err(Error::Document(Located::at(
            name,
            text,
            document_at(text.get(..at).unwrap_or_default()),
            at,
            format!(
                "control characters are not allowed (U+{:04X}, byte {at} {of}): binary data \
                 is not a manifest; nothing was read past its first {}",
                u32::from(c),
                size_text(FIRST_BLOCK)
            ),
        )));
    }
    Ok(())
}

/// The error for `bytes` of input `name`, valid UTF-8 up to `offset` only.
fn not_utf8(name: &str, bytes: &[u8], offset: usize) -> Error {
    let shown = String::from_utf8_lossy(bytes);
    let document = document_at(shown.get(..offset).unwrap_or(&shown));
    Error::Document(Located::at(
        name,
        &shown,
        document,
        offset,
        format!("not valid UTF-8 (byte {offset} of the file)"),
    ))
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
fn stdin_file_size() -> u64 {
    use std::os::fd::AsFd;
    std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .map(std::fs::File::from)
        .and_then(|file| file.metadata())
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map_or(0, |meta| meta.len())
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

    /// A reader of `byte` without end, counting what is read of it.
    struct Endless {
        byte: u8,
        read: u64,
    }

    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            buf.fill(self.byte);
            self.read += buf.len() as u64;
            Ok(buf.len())
        }
    }

    fn read_endless(byte: u8, max: u64) -> (Result<Vec<u8>, Error>, u64) {
        let mut endless = Endless { byte, read: 0 };
        let path = Path::new("<stdin>");
        let read = read_bytes(&mut endless, 0, max, path, &|| "<stdin>".to_string());
        (read, endless.read)
    }

    #[test]
    fn an_endless_input_is_read_up_to_the_limit_only() {
        let (read, count) = read_endless(b'y', 1 << 20);
        let err = read.expect_err("too large");
        assert_eq!(count, (1 << 20) + 1, "one byte past the limit is read");
        let (read, count) = read_endless(b'y', 1000);
        assert!(
            read.expect_err("too large")
                .to_string()
                .contains("more than 1000 bytes")
        );
        assert_eq!(count, 1001);
        assert_eq!(
            err.to_string(),
            "<stdin>: more than 1 MiB, larger than one input may be (1 MiB); nothing was read \
             past it. Give a larger --max-input-bytes to read it (e.g. --max-input-bytes 2Mi)"
        );
        // Zeros are refused at the first of them, the first block read only.
        let (read, count) = read_endless(0, 1 << 30);
        assert_eq!(count, FIRST_BLOCK);
        let err = read.expect_err("binary");
        assert!(
            err.to_string().starts_with(
                "<stdin>: document 1, line 1:1: a NUL byte (byte 0 of the input): binary data"
            ),
            "{err}"
        );
    }

    #[test]
    fn files_over_the_limit_are_refused_by_their_size_before_reading() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("big.yaml");
        std::fs::write(&path, "a: 1\n".repeat(1000)).expect("write");
        let err = read_within(Some(&path), 4000).expect_err("too large");
        assert!(
            err.to_string().ends_with(
                "big.yaml: 5 KiB (5000 bytes), larger than one input may be (4000 bytes); \
                 nothing was read past it. Give a larger --max-input-bytes to read it \
                 (e.g. --max-input-bytes 1Mi)"
            ),
            "{err}"
        );
        read_within(Some(&path), 5000).expect("at the limit");
        assert_eq!(size_text(256 << 20), "256 MiB");
        assert_eq!(size_text(3 << 30), "3 GiB");
        assert_eq!(size_text(1500), "1500 bytes");
        assert_eq!(flag_size(300_000_000), "512Mi");
        assert_eq!(flag_size(3 << 30), "4Gi");
    }

    #[test]
    fn binary_first_bytes_are_refused_where_they_are() {
        let refused = |bytes: &[u8], whole: bool| {
            not_a_manifest("f.yaml", bytes, whole)
                .expect_err("refused")
                .to_string()
        };
        assert!(
            refused(b"a: 1\n---\nb: 2\0\0", false)
                .starts_with("f.yaml: document 2, line 3:5: a NUL byte (byte 13 of the file)")
        );
        assert!(
            refused(b"\x1f\x8b\x08\0", false)
                .starts_with("f.yaml: document 1, line 1:2: not valid UTF-8 (byte 1 of the file)")
        );
        assert!(refused(b"\x7fELF\x02", false).starts_with(
            "f.yaml: document 1, line 1:1: control characters are not allowed (U+007F, byte 0"
        ));
        // UTF-16 says so, by its byte order mark (its NUL bytes aside).
        assert!(refused(b"\xff\xfea\0", false).contains("the input is UTF-16LE"));
        // A character cut at the end of the block is read whole after it;
        // at the end of the input, it is not valid UTF-8.
        let cut = "a: é".as_bytes();
        let cut = &cut[..cut.len() - 1];
        not_a_manifest("f.yaml", cut, false).expect("cut by the block");
        assert!(refused(cut, true).contains("not valid UTF-8 (byte 3 of the file)"));
        not_a_manifest("f.yaml", "a: é\t\r\n".as_bytes(), true).expect("text");
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

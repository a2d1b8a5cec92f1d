//! Sinks: what a run writes. Everything is built in memory first, so a run that
//! fails writes nothing at all.

use std::path::{Path, PathBuf};

use anstyle::{AnsiColor, Style};
use serde_json::{Value, json};

use crate::error::Error;
use crate::pipeline::Processed;

/// Write the manifests of every source as one YAML stream, byte-identical
/// where untouched, straight from each source's output (no joined copy).
pub fn write_yaml_stream(
    results: &[Processed],
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    let mut wrote_any = false;
    let mut ends_with_newline = true;
    for processed in results {
        if processed.pieces().all(|piece| piece.trim().is_empty()) {
            continue;
        }
        if wrote_any {
            if !ends_with_newline {
                out.write_all(b"\n")?;
            }
            // A byte-order mark and three more characters tell how it starts.
            let head: String = processed.pieces().flat_map(str::chars).take(4).collect();
            let start = head.trim_start_matches('\u{feff}');
            if start.starts_with('%') {
                // Directives must follow a document end marker.
                out.write_all(b"...\n")?;
            } else if !start.starts_with("---") {
                out.write_all(b"---\n")?;
            }
        }
        for piece in processed.pieces() {
            out.write_all(piece.as_bytes())?;
            ends_with_newline = piece.ends_with('\n');
        }
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

/// A unified diff of every changed source, coloured when asked.
pub fn diff(results: &[Processed], color: bool) -> String {
    let mut out = String::new();
    for processed in results.iter().filter(|p| p.changed()) {
        let name = processed.source.name();
        // Patience keeps added blocks whole instead of interleaving them with
        // look-alike lines (`securityContext:`) of the neighbours.
        let new_text = processed.text();
        let diff = similar::TextDiff::configure()
            .algorithm(similar::Algorithm::Patience)
            .diff_lines(processed.source.text.as_str(), &*new_text);
        let text = diff
            .unified_diff()
            .context_radius(3)
            .header(
                &format!("a/{}", name.trim_start_matches('/')),
                &format!("b/{}", name.trim_start_matches('/')),
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
    out
}

/// Rewrite every changed file: first write a temporary file beside each one
/// (with the original's mode), then rename them all over the originals. A
/// failure while writing leaves every original untouched; each rename is
/// atomic, so every file is either entirely old or entirely new.
pub fn write_in_place(results: &[Processed]) -> Result<(), Error> {
    let mut staged: Vec<(PathBuf, PathBuf)> = Vec::new();
    for processed in results.iter().filter(|p| p.changed()) {
        let Some(path) = &processed.source.path else {
            continue;
        };
        match stage(path, &processed.text()) {
            Ok(pair) => staged.push(pair),
            Err(err) => {
                for (temp, _) in &staged {
                    let _ = std::fs::remove_file(temp);
                }
                return Err(err);
            }
        }
    }
    for (index, (temp, target)) in staged.iter().enumerate() {
        if let Err(e) = std::fs::rename(temp, target) {
            for (temp, _) in &staged[index..] {
                let _ = std::fs::remove_file(temp);
            }
            return Err(Error::Output {
                path: target.clone(),
                message: e.to_string(),
            });
        }
    }
    Ok(())
}

/// Write `text` to a new temporary file beside `path`; returns (temporary, target).
fn stage(path: &Path, text: &str) -> Result<(PathBuf, PathBuf), Error> {
    use std::io::Write;
    let failed = |e: std::io::Error| Error::Output {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    // Write through a symlink to the file it points at, keeping the link.
    let target = std::fs::canonicalize(path).map_err(failed)?;
    let dir = target.parent().unwrap_or(Path::new("."));
    let file_name = target
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let permissions = std::fs::metadata(&target).map_err(failed)?.permissions();
    for attempt in 0..100 {
        let temp = dir.join(format!(
            ".{file_name}.mesh-inject.{}.{attempt}.tmp",
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
            .and_then(|()| file.sync_all())
            .and_then(|()| std::fs::set_permissions(&temp, permissions.clone()));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&temp);
            return Err(failed(e));
        }
        return Ok((temp, target));
    }
    Err(failed(std::io::Error::other("no free temporary file name")))
}

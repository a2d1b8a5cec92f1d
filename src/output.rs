//! Sinks: what a run writes. Everything is built in memory first, so a run that
//! fails writes nothing at all.

use std::path::Path;

use anstyle::{AnsiColor, Style};
use serde_json::{Value, json};

use crate::error::Error;
use crate::pipeline::Processed;

/// The manifests of every source as one YAML stream, byte-identical where untouched.
pub fn yaml_stream(results: &[Processed]) -> String {
    let mut out = String::new();
    for processed in results {
        let text = &processed.output;
        if text.trim().is_empty() {
            continue;
        }
        if !out.is_empty() {
            if !out.ends_with('\n') {
                out.push('\n');
            }
            if !text.trim_start_matches('\u{feff}').starts_with("---") {
                out.push_str("---\n");
            }
        }
        out.push_str(text);
    }
    out
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
        let diff = similar::TextDiff::configure()
            .algorithm(similar::Algorithm::Patience)
            .diff_lines(&processed.source.text, &processed.output);
        let text = diff
            .unified_diff()
            .context_radius(3)
            .header(&format!("a/{name}"), &format!("b/{name}"))
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

/// Rewrite every changed file: write a temporary file beside it, keep the
/// mode, then rename over the original, so each file is either old or new.
pub fn write_in_place(results: &[Processed]) -> Result<(), Error> {
    for processed in results.iter().filter(|p| p.changed()) {
        if let Some(path) = &processed.source.path {
            replace_file(path, &processed.output)?;
        }
    }
    Ok(())
}

fn replace_file(path: &Path, text: &str) -> Result<(), Error> {
    use std::io::Write;
    let failed = |e: std::io::Error| Error::Output {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let target = std::fs::canonicalize(path).map_err(failed)?;
    let dir = target.parent().unwrap_or(Path::new("."));
    let file_name = target
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let temp = dir.join(format!(
        ".{file_name}.mesh-inject.{}.tmp",
        std::process::id()
    ));
    let result = (|| {
        let permissions = std::fs::metadata(&target)?.permissions();
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::set_permissions(&temp, permissions)?;
        std::fs::rename(&temp, &target)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result.map_err(failed)
}

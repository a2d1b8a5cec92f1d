//! The files of a saved context: one per kind and namespace, each marked as
//! this command's, so that saving again replaces its own files and never a
//! file of the user's.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::Error;

/// The first line of every file `context save` writes: how a later save
/// knows the file is its own to replace or remove.
pub const MARK: &str =
    "# Saved by `kubectl mesh-inject context save`: saving again replaces this file.\n";

/// The kinds saved, as their files are named (the plural kubectl uses).
pub const KINDS: [(&str, &str); 6] = [
    ("ConfigMap", "configmaps"),
    ("Namespace", "namespaces"),
    ("LimitRange", "limitranges"),
    ("ResourceQuota", "resourcequotas"),
    ("PodSecurityPolicy", "podsecuritypolicies"),
    (
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
    ),
];

/// The file name of the objects of `plural` in `namespace` (`""` for a
/// kind without namespaces): `limitranges.shop.yaml`, `namespaces.yaml`.
pub fn file_name(plural: &str, namespace: &str) -> String {
    match namespace {
        "" => format!("{plural}.yaml"),
        namespace => format!("{plural}.{namespace}.yaml"),
    }
}

/// Whether `name` is named as this command names its files.
fn named_as_saved(name: &str) -> bool {
    let Some(stem) = name.strip_suffix(".yaml") else {
        return false;
    };
    let plural = stem.split_once('.').map_or(stem, |(plural, _)| plural);
    KINDS.iter().any(|(_, p)| *p == plural)
}

/// The objects as the text of their file: the mark, then a YAML stream.
pub fn text_of(objects: &[Value]) -> String {
    let values: Vec<&Value> = objects.iter().collect();
    format!("{MARK}{}", crate::output::yaml_documents(&values))
}

/// Write `files` (name, text) into `dir`, each atomically, and remove the
/// files an earlier save wrote that this one does not. A file named as this
/// command names its files but not written by it stops the run before
/// anything is written: it is the user's. Returns the paths removed.
pub fn write_all(dir: &Path, files: &[(String, String)]) -> Result<Vec<PathBuf>, Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::Output {
        path: dir.to_path_buf(),
        message: e.to_string(),
    })?;
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, &e))?;
    let mut stale = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, &e))?;
        let name = entry.file_name().to_string_lossy().to_string();
        if !named_as_saved(&name) {
            continue;
        }
        let path = entry.path();
        let ours = std::fs::read_to_string(&path).is_ok_and(|text| text.starts_with(MARK));
        let replaced = files.iter().any(|(n, _)| *n == name);
        match (ours, replaced) {
            (false, true) => {
                return Err(Error::Output {
                    path,
                    message: "exists and was not written by context save: nothing was written (move it away, or save into another directory)".into(),
                });
            }
            (true, false) => stale.push(path),
            _ => {}
        }
    }
    for (name, text) in files {
        crate::output::write_file_atomically(&dir.join(name), text)?;
    }
    for path in &stale {
        std::fs::remove_file(path).map_err(|e| Error::Output {
            path: path.clone(),
            message: format!("cannot remove what an earlier save wrote: {e}"),
        })?;
    }
    Ok(stale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_named_by_kind_and_namespace() {
        assert_eq!(file_name("limitranges", "shop"), "limitranges.shop.yaml");
        assert_eq!(file_name("namespaces", ""), "namespaces.yaml");
        for ours in ["namespaces.yaml", "configmaps.linkerd.yaml"] {
            assert!(named_as_saved(ours), "{ours}");
        }
        for other in ["deploy.yaml", "namespaces.yml", "linkerd-trust-roots.yaml"] {
            assert!(!named_as_saved(other), "{other}");
        }
    }
}

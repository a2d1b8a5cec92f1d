//! Kustomize patches that address a pod's containers by their place in
//! the list (`/spec/template/spec/containers/0`, or a strategic merge patch
//! that replaces the list whole): injection adds containers to those
//! lists, so such a patch may then hit the proxy, or drop it. Read here
//! with the kustomization that lists them; judged against each injected
//! workload by the pipeline (`pipeline/patches.rs`).

use std::path::Path;

use serde_json::Value;

use crate::json::Field;

/// A patch of a kustomization that addresses a container list by place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexPatch {
    /// The patch file (or the kustomization, for a patch written inline),
    /// as shown to the user.
    pub file: String,
    /// The objects it targets: a kind and a name, each `None` for any.
    pub kind: Option<String>,
    pub name: Option<String>,
    /// `containers` or `initContainers`.
    pub list: String,
    /// The place it addresses; `None` when it replaces the list whole.
    pub index: Option<usize>,
    /// What it says: the JSON 6902 operation's path, or `$patch: replace`.
    pub what: String,
}

/// The patches of the kustomization `value` (in `dir`, shown as `name`)
/// that address a container list by place, and what could not be read.
pub(super) fn index_patches(
    value: &Value,
    dir: &Path,
    name: &str,
) -> (Vec<IndexPatch>, Vec<String>) {
    let mut found = Vec::new();
    let mut problems = Vec::new();
    let fields = ["patches", "patchesJson6902", "patchesStrategicMerge"];
    for field in fields {
        let entries = value.field(field).and_then(Value::as_array);
        for entry in entries.into_iter().flatten() {
            // `patchesStrategicMerge` lists files or inline patches as text.
            let (path, inline, target) = match entry {
                Value::String(text) if text.contains('\n') || text.contains(':') => {
                    (None, Some(text.as_str()), None)
                }
                Value::String(file) => (Some(file.as_str()), None, None),
                _ => (
                    entry.field("path").and_then(Value::as_str),
                    entry.field("patch").and_then(Value::as_str),
                    entry.field("target"),
                ),
            };
            let (text, shown) = match (path, inline) {
                (Some(path), _) => {
                    let file = dir.join(path);
                    match std::fs::read_to_string(&file) {
                        Ok(text) => (text, super::namespace::shown(&file)),
                        // kustomize fails on it too; said, not passed over.
                        Err(e) => {
                            let why = match crate::error::Error::io(&file, &e) {
                                crate::error::Error::Input { message, .. } => message,
                                other => other.to_string(),
                            };
                            problems.push(format!(
                                "kustomize patch {path} of {name} cannot be read ({why}): whether it addresses containers by place is unknown"
                            ));
                            continue;
                        }
                    }
                }
                (None, Some(inline)) => (inline.to_string(), name.to_string()),
                (None, None) => continue,
            };
            let Ok(documents) = crate::yaml::parse_stream(&text) else {
                problems.push(format!(
                    "kustomize patch {shown} does not parse: whether it addresses containers by place is unknown"
                ));
                continue;
            };
            for document in documents {
                let Some(patch) = document
                    .root
                    .as_ref()
                    .and_then(|r| crate::yaml::value::to_value(r).ok())
                else {
                    continue;
                };
                let (kind, name) = target_of(target, &patch);
                for (list, index, what) in places(&patch) {
                    found.push(IndexPatch {
                        file: shown.clone(),
                        kind: kind.clone(),
                        name: name.clone(),
                        list,
                        index,
                        what,
                    });
                }
            }
        }
    }
    (found, problems)
}

/// The kind and name a patch targets: its `target`, else (a strategic
/// merge patch) its own `kind` and `metadata.name`.
fn target_of(target: Option<&Value>, patch: &Value) -> (Option<String>, Option<String>) {
    let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_string);
    match target {
        Some(target) => (text(target.field("kind")), text(target.field("name"))),
        None => (
            text(patch.field("kind")),
            text(patch.field("metadata").and_then(|m| m.field("name"))),
        ),
    }
}

/// The container lists `patch` addresses by place: each JSON 6902
/// operation's path through `containers/N` or `initContainers/N`, and each
/// such list a strategic merge patch replaces whole (`$patch: replace`).
fn places(patch: &Value) -> Vec<(String, Option<usize>, String)> {
    let mut out = Vec::new();
    match patch {
        Value::Array(operations) => {
            for path in operations
                .iter()
                .filter_map(|op| op.field("path")?.as_str())
            {
                let steps: Vec<&str> = path.split('/').collect();
                for pair in steps.windows(2) {
                    if let [list @ ("containers" | "initContainers"), place] = pair
                        && let Ok(index) = place.parse::<usize>()
                    {
                        out.push((list.to_string(), Some(index), path.to_string()));
                    }
                }
            }
        }
        Value::Object(_) => replaced_lists(patch, &mut out),
        _ => {}
    }
    out
}

/// The `containers` and `initContainers` lists under `value` that a
/// strategic merge patch replaces whole.
fn replaced_lists(value: &Value, out: &mut Vec<(String, Option<usize>, String)>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                let replaced = inner.as_array().is_some_and(|items| {
                    items
                        .iter()
                        .any(|item| item.field("$patch").and_then(Value::as_str) == Some("replace"))
                });
                if matches!(key.as_str(), "containers" | "initContainers") && replaced {
                    out.push((key.clone(), None, "$patch: replace".into()));
                }
                replaced_lists(inner, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| replaced_lists(item, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn container_lists_addressed_by_place_are_found() {
        let json6902 = json!([
            {"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "x"},
            {"op": "add", "path": "/spec/template/spec/initContainers/-", "value": {}},
            {"op": "replace", "path": "/spec/replicas", "value": 2}
        ]);
        assert_eq!(
            places(&json6902),
            [(
                "containers".to_string(),
                Some(0),
                "/spec/template/spec/containers/0/image".to_string()
            )]
        );
        let merge = json!({"kind": "Deployment", "metadata": {"name": "web"}, "spec": {"template": {"spec": {
            "containers": [{"name": "web", "image": "x"}, {"$patch": "replace"}]}}}});
        assert_eq!(
            places(&merge),
            [(
                "containers".to_string(),
                None,
                "$patch: replace".to_string()
            )]
        );
        assert_eq!(
            target_of(None, &merge),
            (Some("Deployment".into()), Some("web".into()))
        );
        // By name: nothing by place.
        let by_name = json!({"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "x"}]}}}});
        assert!(places(&by_name).is_empty());
    }
}

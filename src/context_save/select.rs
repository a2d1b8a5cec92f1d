//! Which of the cluster's objects a saved context keeps, and what of each:
//! only what a run reads, without what churns on every read or leaks.

use serde_json::Value;

use crate::json::Field;
use crate::mesh::istio::injector::{INJECTOR_CONFIG_MAP, MESH_CONFIG_MAP};

pub use crate::admission::metadata_name as name_of;

/// The namespace of an object (`""` for none).
pub fn namespace_of(object: &Value) -> &str {
    let metadata = object.field("metadata");
    metadata
        .and_then(|m| m.field("namespace"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The ConfigMaps among `maps` whose names are in `names` (Linkerd's:
/// the profile's `valuesFromObjects`).
pub fn named(maps: Vec<Value>, names: &[String]) -> Vec<Value> {
    maps.into_iter()
        .filter(|m| names.iter().any(|n| n == name_of(m)))
        .collect()
}

/// Istio's ConfigMaps among `maps`: every revision's injector
/// configuration (`istio-sidecar-injector`, `istio-sidecar-injector-REV`)
/// and the mesh config beside it (`istio`, `istio-REV`), which the
/// injector reads together; other `istio-*` maps (`istio-ca-root-cert`)
/// are not read.
pub fn istio(maps: Vec<Value>) -> Vec<Value> {
    let suffixes: Vec<String> = maps
        .iter()
        .filter_map(|m| {
            let rest = name_of(m).strip_prefix(INJECTOR_CONFIG_MAP)?;
            (rest.is_empty() || rest.starts_with('-')).then(|| rest.to_string())
        })
        .collect();
    maps.into_iter()
        .filter(|m| {
            let name = name_of(m);
            suffixes.iter().any(|suffix| {
                name.strip_suffix(suffix.as_str())
                    .is_some_and(|base| base == INJECTOR_CONFIG_MAP || base == MESH_CONFIG_MAP)
            })
        })
        .collect()
}

/// The revisions whose injector configuration is among `maps`, and those
/// of them without their mesh config (`istio[-REV]`).
pub fn istio_without_mesh_config(maps: &[Value]) -> Vec<String> {
    let names: Vec<&str> = maps.iter().map(name_of).collect();
    names
        .iter()
        .filter_map(|name| name.strip_prefix(INJECTOR_CONFIG_MAP))
        .filter(|suffix| !names.contains(&format!("{MESH_CONFIG_MAP}{suffix}").as_str()))
        .map(|suffix| format!("{MESH_CONFIG_MAP}{suffix}"))
        .collect()
}

/// The annotation `kubectl apply` keeps the whole applied object in.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The metadata fields that change on every write or identify one stored
/// copy; no run reads them.
const CHURNING: [&str; 6] = [
    "managedFields",
    "resourceVersion",
    "uid",
    "creationTimestamp",
    "generation",
    "selfLink",
];

/// `object` as a saved context keeps it: without `status`, the metadata
/// of [`CHURNING`] and the last-applied annotation (a second copy of the
/// object, stale as soon as it is edited by another hand).
pub fn stripped(mut object: Value) -> Value {
    let Some(fields) = object.as_object_mut() else {
        return object;
    };
    fields.remove("status");
    if let Some(Value::Object(metadata)) = fields.get_mut("metadata") {
        for key in CHURNING {
            metadata.remove(key);
        }
        if let Some(Value::Object(annotations)) = metadata.get_mut("annotations") {
            annotations.remove(LAST_APPLIED);
            if annotations.is_empty() {
                metadata.remove("annotations");
            }
        }
    }
    object
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(name: &str) -> Value {
        json!({"kind": "ConfigMap", "metadata": {"name": name, "namespace": "istio-system"}})
    }

    #[test]
    fn istio_keeps_each_revisions_injector_and_mesh_config() {
        let maps = [
            "istio",
            "istio-sidecar-injector",
            "istio-1-28",
            "istio-sidecar-injector-1-28",
            "istio-ca-root-cert",
            "istio-1-27",
            "istio-sidecar-injector-canary",
            "istio-sidecar-injectorx",
        ]
        .map(map)
        .to_vec();
        let kept: Vec<String> = istio(maps.clone())
            .iter()
            .map(|m| name_of(m).to_string())
            .collect();
        assert_eq!(
            kept,
            [
                "istio",
                "istio-sidecar-injector",
                "istio-1-28",
                "istio-sidecar-injector-1-28",
                "istio-sidecar-injector-canary"
            ]
        );
        assert_eq!(istio_without_mesh_config(&istio(maps)), ["istio-canary"]);
    }

    #[test]
    fn what_churns_or_copies_the_object_is_left_out() {
        let object = json!({"kind": "Namespace", "metadata": {"name": "shop",
            "uid": "u", "resourceVersion": "1", "generation": 2, "selfLink": "/x",
            "creationTimestamp": "t", "managedFields": [{}],
            "labels": {"a": "b"},
            "annotations": {LAST_APPLIED: "{}"}}, "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"}});
        assert_eq!(
            stripped(object),
            json!({"kind": "Namespace", "metadata": {"name": "shop", "labels": {"a": "b"}},
                "spec": {"finalizers": ["kubernetes"]}})
        );
        let kept =
            json!({"metadata": {"name": "x", "annotations": {LAST_APPLIED: "{}", "k": "v"}}});
        assert_eq!(
            stripped(kept),
            json!({"metadata": {"name": "x", "annotations": {"k": "v"}}})
        );
    }
}

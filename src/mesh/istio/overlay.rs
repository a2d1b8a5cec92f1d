//! Kubernetes' strategic merge, as Istio's injector overlays what its
//! templates render on a pod (`applyOverlayYAML` in istio
//! `pkg/kube/inject/inject.go`, over apimachinery's `strategicpatch`): maps
//! are merged key by key, a null removes a key, and the lists of a pod that
//! Kubernetes declares mergeable are merged item by item by their key; any
//! other list is replaced.

use serde_json::Value;

use crate::json::Field;

/// The lists of a pod that a strategic merge merges item by item, by field
/// name, with the key that identifies an item (`patchMergeKey` in
/// `k8s.io/api/core/v1`).
const MERGE_KEYS: [(&str, &str); 9] = [
    ("containers", "name"),
    ("initContainers", "name"),
    ("ephemeralContainers", "name"),
    ("volumes", "name"),
    ("imagePullSecrets", "name"),
    ("env", "name"),
    ("ports", "containerPort"),
    ("volumeMounts", "mountPath"),
    ("resizePolicy", "resourceName"),
];

/// `overlay` merged over `base`: for two maps, key by key (see
/// [`merged_field`]); otherwise the overlay.
pub fn merge(base: &Value, overlay: &Value) -> Value {
    match (base, overlay) {
        (Value::Object(base), Value::Object(overlay)) => {
            let mut out = base.clone();
            for (key, value) in overlay {
                if value.is_null() {
                    out.shift_remove(key);
                    continue;
                }
                let merged = match out.get(key) {
                    Some(old) => merged_field(key, old, value),
                    None => without_nulls(value.clone()),
                };
                out.insert(key.clone(), merged);
            }
            Value::Object(out)
        }
        (_, overlay) => without_nulls(overlay.clone()),
    }
}

/// The field `key` after `overlay` is merged over `base`: a mergeable list
/// item by item (an item of both merged in place, the overlay's others
/// after), maps key by key, anything else the overlay's.
pub fn merged_field(key: &str, base: &Value, overlay: &Value) -> Value {
    let merge_key = MERGE_KEYS.iter().find(|(k, _)| *k == key).map(|(_, m)| *m);
    match (base, overlay, merge_key) {
        (Value::Array(base), Value::Array(items), Some(by)) => {
            let mut out = base.clone();
            for item in items {
                let id = item.field(by);
                match out.iter_mut().find(|b| id.is_some() && b.field(by) == id) {
                    Some(existing) => *existing = merge(existing, item),
                    None => out.push(without_nulls(item.clone())),
                }
            }
            Value::Array(out)
        }
        (Value::Object(_), Value::Object(_), _) => merge(base, overlay),
        _ => without_nulls(overlay.clone()),
    }
}

/// A patch's new value as the merge adds it: a null inside it deletes
/// nothing and is dropped. (Owned: merged over nothing, a patch is this.)
pub fn without_nulls(mut value: Value) -> Value {
    drop_nulls(&mut value);
    value
}

fn drop_nulls(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(drop_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pod_lists_merge_by_their_keys_and_other_lists_are_replaced() {
        let base = json!({"spec": {
            "containers": [{"name": "app", "env": [{"name": "A", "value": "1"}], "args": ["x"]}],
            "volumes": [{"name": "v", "emptyDir": {}}],
        }});
        let overlay = json!({"spec": {
            "containers": [
                {"name": "app", "env": [{"name": "B", "value": "2"}, {"name": "A", "value": "3"}], "args": ["y"]},
                {"name": "proxy", "image": "p", "resources": null},
            ],
            "volumes": [{"name": "w", "emptyDir": null}],
        }});
        assert_eq!(
            merge(&base, &overlay),
            json!({"spec": {
                "containers": [
                    {"name": "app", "env": [{"name": "A", "value": "3"}, {"name": "B", "value": "2"}], "args": ["y"]},
                    {"name": "proxy", "image": "p"},
                ],
                "volumes": [{"name": "v", "emptyDir": {}}, {"name": "w"}],
            }})
        );
    }

    #[test]
    fn a_null_removes_the_key_it_names() {
        let base = json!({"metadata": {"annotations": {"a": "1", "b": "2"}}});
        let overlay = json!({"metadata": {"annotations": {"a": null, "c": "3"}}});
        assert_eq!(
            merge(&base, &overlay),
            json!({"metadata": {"annotations": {"b": "2", "c": "3"}}})
        );
    }
}

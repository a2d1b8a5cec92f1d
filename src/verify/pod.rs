//! The pod a workload's controller would create, as `verify` sends it to
//! the apiserver, and the apiserver's answer made comparable.

use serde_json::{Value, json};

use crate::admission::review;
use crate::json::Field;
use crate::rules::record::RECORD_ANNOTATION;
use crate::workload::WorkloadType;

/// The uid of the owner a pod is sent with: the apiserver requires one and
/// never looks the owner up.
const OWNER_UID: &str = "00000000-0000-4000-8000-000000000001";

/// What the apiserver adds to every object it returns, and which says
/// nothing of the pod.
const SET_BY_THE_APISERVER: [&str; 6] = [
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "managedFields",
    "generation",
    "selfLink",
];

/// Annotations that are the tool's bookkeeping, not the pod: its record,
/// and Linkerd's `created-by`, which names the injector (this tool, or the
/// webhook).
const BOOKKEEPING: [&str; 2] = [RECORD_ANNOTATION, "linkerd.io/created-by"];

/// The name prefix of the service account token volume the apiserver's
/// ServiceAccount plugin adds, which ends in five random characters.
const TOKEN_VOLUME: &str = "kube-api-access-";

/// The pod the controller of `object` (a workload of `kind`) would create
/// in `namespace`, as the admission review builds it (the template's
/// labels, annotations and spec; `web-0` for a StatefulSet, else named by
/// the apiserver from `web-`), owned by the workload itself, so that each
/// mesh's webhook names the workload as it does for a real pod (a dry run
/// cannot look up the ReplicaSet or Job in between, which does not exist).
/// A Pod keeps its own owners. `None` when the object has no pod template.
pub fn of(object: &Value, kind: &WorkloadType, namespace: &str) -> Option<Value> {
    let template = kind
        .template_path()
        .try_fold(object, |at, token| at.field(token))?;
    let spec = template.field("spec").cloned().unwrap_or_else(|| json!({}));
    let name = review::pod_name(object, kind);
    let mut pod = review::pod_of(template, spec, &name, namespace, kind);
    let owners = if kind.is_pod() {
        object
            .field("metadata")
            .and_then(|m| m.field("ownerReferences"))
            .cloned()
    } else {
        Some(json!([{
            "apiVersion": object.field("apiVersion").cloned().unwrap_or(Value::Null),
            "kind": kind.kind,
            "name": object.field("metadata").and_then(|m| m.field("name")).cloned().unwrap_or(Value::Null),
            "uid": OWNER_UID,
            "controller": true,
        }]))
    };
    if let (Some(owners), Some(metadata)) = (owners, pod.field_mut("metadata")) {
        if let Some(metadata) = metadata.as_object_mut() {
            metadata.insert("ownerReferences".into(), owners);
        }
    }
    Some(pod)
}

/// The pod the apiserver returned, without what differs from one request
/// to the next (its generated name, uid, times, status, the token volume's
/// random name) and without the tool's bookkeeping.
pub fn comparable(mut pod: Value) -> Value {
    let Some(fields) = pod.as_object_mut() else {
        return pod;
    };
    fields.remove("status");
    if let Some(metadata) = fields.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in SET_BY_THE_APISERVER {
            metadata.remove(field);
        }
        if metadata.contains_key("generateName") {
            metadata.remove("name");
        }
        if let Some(annotations) = metadata
            .get_mut("annotations")
            .and_then(Value::as_object_mut)
        {
            for annotation in BOOKKEEPING {
                annotations.remove(annotation);
            }
            if annotations.is_empty() {
                metadata.remove("annotations");
            }
        }
    }
    if let Some(spec) = fields.get_mut("spec").and_then(Value::as_object_mut) {
        for (field, value) in spec.iter_mut() {
            let mounts = match field.as_str() {
                "volumes" => false,
                "containers" | "initContainers" | "ephemeralContainers" => true,
                _ => continue,
            };
            for item in value.as_array_mut().into_iter().flatten() {
                if mounts {
                    let mounts = item.field_mut("volumeMounts").and_then(Value::as_array_mut);
                    for mount in mounts.into_iter().flatten() {
                        rename_token_volume(mount);
                    }
                } else {
                    rename_token_volume(item);
                }
            }
        }
    }
    pod
}

/// A volume or mount of the service account token named without its
/// random end.
fn rename_token_volume(item: &mut Value) {
    let Some(name) = item.field_mut("name") else {
        return;
    };
    let random = name
        .as_str()
        .and_then(|n| n.strip_prefix(TOKEN_VOLUME))
        .is_some_and(|end| end.len() == 5 && end.bytes().all(|b| b.is_ascii_alphanumeric()));
    if random {
        *name = json!(format!("{TOKEN_VOLUME}(random)"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::builtin_types;

    fn kind(name: &str) -> WorkloadType {
        builtin_types()
            .iter()
            .find(|t| t.kind == name)
            .cloned()
            .expect("a built-in kind")
    }

    #[test]
    fn a_deployments_pod_is_owned_by_it_and_named_by_the_server() {
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop", "labels": {"tier": "x"}},
            "spec": {"template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}});
        let pod = of(&deployment, &kind("Deployment"), "shop").expect("a pod");
        assert_eq!(pod["metadata"]["generateName"], "web-");
        assert_eq!(pod["metadata"]["labels"], json!({"app": "web"}));
        assert_eq!(pod["metadata"]["ownerReferences"][0]["kind"], "Deployment");
        assert_eq!(
            pod["metadata"]["ownerReferences"][0]["apiVersion"],
            "apps/v1"
        );
        assert_eq!(pod["spec"]["containers"][0]["name"], "app");
        let set = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
            "spec": {"template": {"spec": {"containers": []}}}});
        let pod = of(&set, &kind("StatefulSet"), "shop").expect("a pod");
        assert_eq!(pod["metadata"]["name"], "db-0");
        assert!(pod["metadata"].get("generateName").is_none());
        let bare = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": []}, "status": {"phase": "Running"}});
        let pod = of(&bare, &kind("Pod"), "shop").expect("a pod");
        assert_eq!(pod["metadata"]["namespace"], "shop");
        assert!(pod.get("status").is_none());
    }

    #[test]
    fn what_changes_from_request_to_request_is_left_out() {
        let answer = json!({"metadata": {"generateName": "web-", "name": "web-x7k2p",
                "uid": "u", "creationTimestamp": "t",
                "annotations": {RECORD_ANNOTATION: "r", "linkerd.io/created-by": "c", "a": "b"}},
            "spec": {"volumes": [{"name": "kube-api-access-x7k2p"}, {"name": "kube-api-access-data"}],
                "containers": [{"name": "app", "volumeMounts": [{"name": "kube-api-access-q9z4m"}]}]},
            "status": {"phase": "Pending"}});
        let want = json!({"metadata": {"generateName": "web-", "annotations": {"a": "b"}},
            "spec": {"volumes": [{"name": "kube-api-access-(random)"}, {"name": "kube-api-access-data"}],
                "containers": [{"name": "app", "volumeMounts": [{"name": "kube-api-access-(random)"}]}]}});
        assert_eq!(comparable(answer), want);
    }
}

//! Which objects run pods, and where their pod template lives; which
//! documents are lists of objects.
//!
//! The built-in kinds are matched on API group as well as kind, so a custom
//! resource that happens to be called `Deployment` is not taken for one.
//! Profiles add more (Argo Rollouts, Knative Services, OpenShift
//! DeploymentConfigs, users' own CRDs) as `{apiVersion, kind, path}` entries.

use serde::Deserialize;
use serde_json::Value;

use crate::json::Field;

/// A kind that carries a pod template, and where the template is.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WorkloadType {
    /// `group/version` or just `group` (`v1` for the core group); versions are not compared.
    pub api_version: String,
    pub kind: String,
    /// Dotted path from the object to its pod template; empty when the object is the pod.
    #[serde(default)]
    pub path: String,
}

impl WorkloadType {
    fn new(api_version: &str, kind: &str, path: &str) -> Self {
        WorkloadType {
            api_version: api_version.into(),
            kind: kind.into(),
            path: path.into(),
        }
    }

    /// JSON-pointer tokens from the object to its pod template.
    pub fn template_path(&self) -> impl Iterator<Item = &str> + Clone {
        self.path.split('.').filter(|t| !t.is_empty())
    }

    /// Whether the object is the pod itself (no path to a template).
    pub fn is_pod(&self) -> bool {
        self.template_path().next().is_none()
    }

    /// Lower-case kind, as used in labels and reports.
    pub fn label(&self) -> String {
        self.kind.to_ascii_lowercase()
    }

    /// A Job or CronJob: its pods are meant to finish.
    pub fn runs_to_completion(&self) -> bool {
        group_of(&self.api_version) == "batch"
    }

    fn matches(&self, api_version: &str, kind: &str) -> bool {
        // The kind first: it tells most types apart without reading a group.
        if self.kind != kind {
            return false;
        }
        let group = group_of(api_version);
        if group_of(&self.api_version) != group {
            return false;
        }
        // A built-in kind only under a version Kubernetes has served it
        // under: `apps/v2` is no Deployment, whatever its fields.
        match served_versions(group, kind) {
            Some(versions) => versions.contains(&version_of(api_version)),
            None => true,
        }
    }
}

/// The version of an `apiVersion` (`apps/v1` → `v1`, `v1` → `v1`).
fn version_of(api_version: &str) -> &str {
    api_version
        .split_once('/')
        .map_or(api_version, |(_, version)| version)
}

/// The versions Kubernetes has served a built-in workload kind under, in
/// its group: those the tool injects (`None` for a kind it does not build
/// in, whose versions a profile's entry leaves open).
fn served_versions(group: &str, kind: &str) -> Option<&'static [&'static str]> {
    Some(match (group, kind) {
        ("", "Pod" | "ReplicationController") => &["v1"],
        ("apps", "Deployment" | "StatefulSet") => &["v1", "v1beta1", "v1beta2"],
        ("apps", "DaemonSet" | "ReplicaSet") => &["v1", "v1beta2"],
        ("extensions", "Deployment" | "DaemonSet" | "ReplicaSet") => &["v1beta1"],
        ("batch", "Job") => &["v1"],
        ("batch", "CronJob") => &["v1", "v1beta1", "v2alpha1"],
        _ => return None,
    })
}

/// The API group of an `apiVersion` (`apps/v1` → `apps`, `v1` → the core group `""`).
fn group_of(api_version: &str) -> &str {
    match api_version.split_once('/') {
        Some((group, _)) => group,
        None if api_version
            .strip_prefix('v')
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit())) =>
        {
            ""
        }
        None => api_version,
    }
}

/// The kinds Kubernetes itself runs pods for (built once: every review asks).
pub fn builtin_types() -> &'static [WorkloadType] {
    static BUILTIN: std::sync::LazyLock<Vec<WorkloadType>> = std::sync::LazyLock::new(|| {
        vec![
            WorkloadType::new("v1", "Pod", ""),
            WorkloadType::new("v1", "ReplicationController", "spec.template"),
            WorkloadType::new("apps/v1", "Deployment", "spec.template"),
            WorkloadType::new("apps/v1", "StatefulSet", "spec.template"),
            WorkloadType::new("apps/v1", "DaemonSet", "spec.template"),
            WorkloadType::new("apps/v1", "ReplicaSet", "spec.template"),
            WorkloadType::new("extensions/v1beta1", "Deployment", "spec.template"),
            WorkloadType::new("extensions/v1beta1", "DaemonSet", "spec.template"),
            WorkloadType::new("extensions/v1beta1", "ReplicaSet", "spec.template"),
            WorkloadType::new("batch/v1", "Job", "spec.template"),
            WorkloadType::new("batch/v1", "CronJob", "spec.jobTemplate.spec.template"),
        ]
    });
    &BUILTIN
}

/// Whether `kind` names one of the kinds Kubernetes itself runs pods for,
/// under whatever API version (`apps/v1beta2` Deployments among them).
pub fn is_builtin_kind(kind: &str) -> bool {
    builtin_types().iter().any(|t| t.kind == kind)
}

/// Whether `kind` is a list's: `List`, and every `…List` (`DeploymentList`,
/// `PodList`, `ConfigMapList`, a KRM function's `ResourceList`). kubectl
/// reads the `items` of any of them as objects of their own, so this tool
/// handles them as it handles a `List`: the one definition of a list.
pub fn is_list_kind(kind: &str) -> bool {
    kind.ends_with("List")
}

/// The objects of a document: itself, or the items of a list (`List`,
/// `DeploymentList`…) that are objects.
pub fn objects_of(value: &Value) -> Vec<&Value> {
    match list_items(value) {
        Some(items) => items.iter().filter(|i| i.is_object()).collect(),
        None => vec![value],
    }
}

/// The items of a list document: its `items`, when its kind is a list's
/// and they are an array.
pub fn list_items(value: &Value) -> Option<&Vec<Value>> {
    let kind = value.field("kind").and_then(Value::as_str)?;
    if !is_list_kind(kind) {
        return None;
    }
    value.field("items").and_then(Value::as_array)
}

/// Every workload kind a run recognises.
#[derive(Debug, Clone)]
pub struct WorkloadTypes(Vec<WorkloadType>);

impl WorkloadTypes {
    /// The built-in kinds plus `extra`.
    pub fn with(extra: &[WorkloadType]) -> Self {
        let mut all = builtin_types().to_vec();
        all.extend(extra.iter().cloned());
        WorkloadTypes(all)
    }

    pub fn find(&self, api_version: &str, kind: &str) -> Option<&WorkloadType> {
        self.0.iter().find(|t| t.matches(api_version, kind))
    }
}

/// Where the metadata of `object` (a workload of `kind`: its own, and its
/// pod template's) holds what the API reads only as text, if it does: a
/// name, generate name or namespace, or a label's or annotation's value,
/// that is a number, a boolean or a collection. kubectl refuses such an
/// object (`cannot unmarshal number into Go struct field
/// ObjectMeta.metadata.name of type string`).
pub fn metadata_not_text(object: &Value, kind: &WorkloadType) -> Option<String> {
    let template = kind
        .template_path()
        .try_fold(object, |at, step| at.field(step));
    let places = [("metadata", object.field("metadata"))].into_iter().chain(
        template.filter(|_| !kind.is_pod()).map(|t| {
            let at = if kind.path.is_empty() {
                "metadata"
            } else {
                "template metadata"
            };
            (at, t.field("metadata"))
        }),
    );
    let shown = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    for (at, metadata) in places {
        let Some(metadata) = metadata else { continue };
        for field in ["name", "generateName", "namespace"] {
            match metadata.field(field) {
                None | Some(Value::Null | Value::String(_)) => {}
                Some(other) => {
                    return Some(format!(
                        "{at}.{field} is {}, not a string: kubectl refuses the object",
                        shown(other)
                    ));
                }
            }
        }
        for map in ["labels", "annotations"] {
            let Some(Value::Object(entries)) = metadata.field(map) else {
                continue;
            };
            if let Some((key, value)) = entries
                .iter()
                .find(|(_, v)| !matches!(v, Value::String(_) | Value::Null))
            {
                return Some(format!(
                    "{at}.{map}.{key} is {}, not a string: kubectl refuses the object (quote it)",
                    shown(value)
                ));
            }
        }
    }
    None
}

/// What identifies an object in reports: `deployment/web`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectRef {
    pub api_version: String,
    pub kind: String,
    /// `metadata.name`, or `metadata.generateName` for pods named by the server.
    pub name: String,
    pub namespace: Option<String>,
}

impl ObjectRef {
    /// Read the identity fields of an object, if it has a string `kind`.
    pub fn of(object: &Value) -> Option<Self> {
        let text = |v: &Value| v.as_str().map(str::to_string);
        let kind = object.field("kind").and_then(text)?;
        let metadata = object.field("metadata");
        let field = |name: &str| metadata.and_then(|m| m.field(name)).and_then(text);
        Some(ObjectRef {
            api_version: object
                .field("apiVersion")
                .and_then(text)
                .unwrap_or_default(),
            kind,
            name: field("name")
                .or_else(|| field("generateName"))
                .unwrap_or_default(),
            namespace: field("namespace"),
        })
    }
}

impl std::fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = if self.name.is_empty() {
            "<unnamed>"
        } else {
            &self.name
        };
        write!(f, "{}/{}", self.kind.to_ascii_lowercase(), name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kinds_need_their_group() {
        let types = WorkloadTypes::with(&[
            WorkloadType::new("argoproj.io/v1alpha1", "Rollout", "spec.template"),
            WorkloadType::new("serving.knative.dev/v1", "Service", "spec.template"),
        ]);
        let path = |v: &str, k: &str| types.find(v, k).map(|t| t.path.clone());
        assert_eq!(
            path("apps/v1", "Deployment").as_deref(),
            Some("spec.template")
        );
        assert_eq!(
            path("batch/v1beta1", "CronJob").as_deref(),
            Some("spec.jobTemplate.spec.template")
        );
        assert_eq!(path("v1", "Pod").as_deref(), Some(""));
        assert_eq!(path("example.com/v1", "Deployment"), None);
        assert_eq!(path("v1", "Deployment"), None);
        assert_eq!(path("v1", "Service"), None);
        assert_eq!(
            path("serving.knative.dev/v1", "Service").as_deref(),
            Some("spec.template")
        );
        assert_eq!(
            path("argoproj.io/v1alpha1", "Rollout").as_deref(),
            Some("spec.template")
        );
    }

    /// A built-in kind under each version Kubernetes has served it under,
    /// and no other: `apps/v2` is not a Deployment the tool knows.
    #[test]
    fn built_in_kinds_need_a_version_kubernetes_served() {
        let types = WorkloadTypes::with(&[WorkloadType::new(
            "argoproj.io/v1alpha1",
            "Rollout",
            "spec.template",
        )]);
        let served: &[(&str, &[&str])] = &[
            ("Pod", &["v1"]),
            ("ReplicationController", &["v1"]),
            (
                "Deployment",
                &[
                    "apps/v1",
                    "apps/v1beta1",
                    "apps/v1beta2",
                    "extensions/v1beta1",
                ],
            ),
            ("StatefulSet", &["apps/v1", "apps/v1beta1", "apps/v1beta2"]),
            (
                "DaemonSet",
                &["apps/v1", "apps/v1beta2", "extensions/v1beta1"],
            ),
            (
                "ReplicaSet",
                &["apps/v1", "apps/v1beta2", "extensions/v1beta1"],
            ),
            ("Job", &["batch/v1"]),
            ("CronJob", &["batch/v1", "batch/v1beta1", "batch/v2alpha1"]),
        ];
        let tried = [
            "v1",
            "v2",
            "v1beta1",
            "apps/v1",
            "apps/v2",
            "apps/v1beta1",
            "apps/v1beta2",
            "apps/v1beta3",
            "apps",
            "extensions/v1beta1",
            "extensions/v1",
            "batch/v1",
            "batch/v2",
            "batch/v1beta1",
            "batch/v2alpha1",
            "batch/v1beta2",
        ];
        for (kind, versions) in served {
            for version in tried {
                assert_eq!(
                    types.find(version, kind).is_some(),
                    versions.contains(&version),
                    "{version} {kind}"
                );
            }
        }
        // A profile's kind under any version of its group.
        assert!(types.find("argoproj.io/v1", "Rollout").is_some());
        assert!(types.find("argoproj.io/v2beta1", "Rollout").is_some());
    }

    #[test]
    fn every_kind_ending_in_list_is_a_list_with_items() {
        for kind in [
            "List",
            "DeploymentList",
            "PodList",
            "ConfigMapList",
            "ResourceList",
        ] {
            assert!(is_list_kind(kind), "{kind}");
            let list = json!({"kind": kind, "items": [{"kind": "Pod"}]});
            assert_eq!(list_items(&list).map(Vec::len), Some(1), "{kind}");
        }
        for kind in ["Deployment", "Blocklist", "Listing"] {
            assert!(!is_list_kind(kind), "{kind}");
        }
        assert_eq!(list_items(&json!({"kind": "PodList"})), None);
        assert_eq!(list_items(&json!({"kind": "PodList", "items": {}})), None);
        assert_eq!(list_items(&json!({"kind": "Pod", "items": []})), None);
    }

    #[test]
    fn references_read_like_kubectl() {
        let r = ObjectRef::of(
            &json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "web-"}}),
        )
        .expect("has kind");
        assert_eq!(r.to_string(), "pod/web-");
        assert!(ObjectRef::of(&json!({"a": 1})).is_none());
    }
}

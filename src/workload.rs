//! Which objects run pods, and where their pod template lives.

use serde_json::Value;

/// The built-in kinds that carry a pod (template).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkloadKind {
    Pod,
    Deployment,
    StatefulSet,
    DaemonSet,
    ReplicaSet,
    ReplicationController,
    Job,
    CronJob,
}

impl WorkloadKind {
    /// Recognise a workload by API group and kind, so that a custom resource
    /// that happens to be called `Deployment` is not taken for one.
    pub fn from_type(api_version: &str, kind: &str) -> Option<Self> {
        let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
        let found = match (group, kind) {
            ("", "Pod") => Self::Pod,
            ("", "ReplicationController") => Self::ReplicationController,
            ("apps" | "extensions", "Deployment") => Self::Deployment,
            ("apps" | "extensions", "DaemonSet") => Self::DaemonSet,
            ("apps" | "extensions", "ReplicaSet") => Self::ReplicaSet,
            ("apps", "StatefulSet") => Self::StatefulSet,
            ("batch", "Job") => Self::Job,
            ("batch", "CronJob") => Self::CronJob,
            _ => return None,
        };
        Some(found)
    }

    /// JSON-pointer tokens from the object to its pod template (empty: the object is the pod).
    pub fn template_path(self) -> &'static [&'static str] {
        match self {
            Self::Pod => &[],
            Self::CronJob => &["spec", "jobTemplate", "spec", "template"],
            _ => &["spec", "template"],
        }
    }

    /// Lower-case kind, as used in labels and reports.
    pub fn label(self) -> &'static str {
        match self {
            Self::Pod => "pod",
            Self::Deployment => "deployment",
            Self::StatefulSet => "statefulset",
            Self::DaemonSet => "daemonset",
            Self::ReplicaSet => "replicaset",
            Self::ReplicationController => "replicationcontroller",
            Self::Job => "job",
            Self::CronJob => "cronjob",
        }
    }
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
    /// Read the identity fields of an object, if it has a `kind`.
    pub fn of(object: &Value) -> Option<Self> {
        let text = |v: &Value| v.as_str().map(str::to_string);
        let kind = object.get("kind").and_then(text)?;
        let metadata = object.get("metadata");
        let field = |name: &str| metadata.and_then(|m| m.get(name)).and_then(text);
        Some(ObjectRef {
            api_version: object.get("apiVersion").and_then(text).unwrap_or_default(),
            kind,
            name: field("name")
                .or_else(|| field("generateName"))
                .unwrap_or_default(),
            namespace: field("namespace"),
        })
    }

    pub fn workload_kind(&self) -> Option<WorkloadKind> {
        WorkloadKind::from_type(&self.api_version, &self.kind)
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
        assert_eq!(
            WorkloadKind::from_type("apps/v1", "Deployment"),
            Some(WorkloadKind::Deployment)
        );
        assert_eq!(
            WorkloadKind::from_type("batch/v1beta1", "CronJob"),
            Some(WorkloadKind::CronJob)
        );
        assert_eq!(
            WorkloadKind::from_type("v1", "Pod"),
            Some(WorkloadKind::Pod)
        );
        assert_eq!(
            WorkloadKind::from_type("example.com/v1", "Deployment"),
            None
        );
        assert_eq!(WorkloadKind::from_type("v1", "Deployment"), None);
        assert_eq!(WorkloadKind::from_type("v1", "Service"), None);
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

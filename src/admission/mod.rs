//! Admission, offline: what the apiserver would do with a pod created from a
//! workload in the target namespace, and the verdict in its own words.
//!
//! The order follows a CREATE through the apiserver
//! (`staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go`, and
//! `pkg/kubeapiserver/options/plugins.go` for the plugins' order):
//! [`api`] defaulting and the dropping of fields behind disabled gates, the
//! mutating plugins ([`limit_ranger`] defaults, [`psp`] defaulting up to
//! 1.24), API validation, then the validating plugins ([`limit_ranger`],
//! [`psp`], [`pod_security`], [`quota`]). Each module is a set of pure
//! functions over `serde_json` values.

pub mod api;
pub mod chain;
pub mod field;
pub mod limit_ranger;
pub mod pod_security;
pub mod psp;
pub mod quantity;
pub mod quota;
pub mod resources;
pub mod review;
pub mod webhook;

use std::fmt;

use serde_json::Value;

use crate::json::Field;

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The apiserver would refuse the object (or the pods of a workload).
    Rejection,
    /// The apiserver would accept it, but warn or change something silently.
    Warning,
}

/// One finding, in the apiserver's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub severity: Severity,
    /// What says so: `LimitRanger`, `ResourceQuota`, `PodSecurityPolicy`,
    /// `PodSecurity`, `MutatingAdmissionWebhook`, `validation` (the object is
    /// invalid), `apiserver` (a dropped field, an apiserver warning).
    pub plugin: &'static str,
    pub message: String,
    /// The workload drew the same verdict before it was injected: the
    /// injection did not cause it (see [`review::mark_preexisting`]).
    pub before_injection: bool,
}

impl Severity {
    /// `rejection` or `warning`, as reports name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Rejection => "rejection",
            Severity::Warning => "warning",
        }
    }
}

/// Whether any of `verdicts` is a rejection.
pub fn rejected(verdicts: &[Verdict]) -> bool {
    verdicts.iter().any(|v| v.severity == Severity::Rejection)
}

impl Verdict {
    /// A rejection the injection caused: the workload drew no such rejection before.
    pub fn blocks(&self) -> bool {
        self.severity == Severity::Rejection && !self.before_injection
    }
}

impl Verdict {
    pub fn rejection(plugin: &'static str, message: impl Into<String>) -> Self {
        Verdict {
            severity: Severity::Rejection,
            plugin,
            message: message.into(),
            before_injection: false,
        }
    }

    pub fn warning(plugin: &'static str, message: impl Into<String>) -> Self {
        Verdict {
            severity: Severity::Warning,
            plugin,
            message: message.into(),
            before_injection: false,
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// An admission plugin's refusal (`admission.NewForbidden`):
/// `pods "web-" is forbidden: <message>`.
pub fn forbidden(pod_name: &str, message: &str) -> String {
    format!("pods \"{pod_name}\" is forbidden: {message}")
}

/// Several errors as Go's error aggregate prints them: one bare, several as
/// `[a, b]`, duplicates removed.
pub fn aggregate(errors: &[String]) -> String {
    let mut unique: Vec<&str> = Vec::new();
    for error in errors {
        if !unique.contains(&error.as_str()) {
            unique.push(error);
        }
    }
    match unique.as_slice() {
        [one] => (*one).to_string(),
        many => format!("[{}]", many.join(", ")),
    }
}

/// `metadata.name` of an object, or `""`.
pub fn metadata_name(object: &Value) -> &str {
    object
        .field("metadata")
        .and_then(|m| m.field("name"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The name the apiserver's messages give an object: its name, else its
/// `generateName`, else `Unknown`.
pub fn object_name(object: &Value) -> String {
    let field = |name: &str| {
        object
            .field("metadata")
            .and_then(|m| m.get(name))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    field("name")
        .or_else(|| field("generateName"))
        .unwrap_or("Unknown")
        .to_string()
}

/// The entries of `spec.initContainers`, `spec.containers` and
/// `spec.ephemeralContainers`, in that order, with their field paths
/// (`spec.initContainers[0]`): the order the apiserver's visitors use.
pub fn containers_with_paths(spec: &Value) -> Vec<(String, &Value)> {
    let mut all = Vec::new();
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        let items = spec.get(list).and_then(Value::as_array);
        for (index, container) in items.into_iter().flatten().enumerate() {
            all.push((format!("spec.{list}[{index}]"), container));
        }
    }
    all
}

/// A set-based requirement (a label selector's `matchExpressions` entry, a
/// quota's `scopeSelector` one) on a value that may be absent.
pub fn requirement_matches(requirement: &Value, value: Option<&str>) -> bool {
    let values: Vec<&str> = requirement
        .field("values")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    match requirement.field("operator").and_then(Value::as_str) {
        Some("In") => value.is_some_and(|v| values.contains(&v)),
        Some("NotIn") => value.is_none_or(|v| !values.contains(&v)),
        Some("Exists") => value.is_some(),
        Some("DoesNotExist") => value.is_none(),
        _ => false,
    }
}

/// A container's `name`, or `""`.
pub fn container_name(container: &Value) -> &str {
    container
        .field("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn aggregates_print_like_go() {
        assert_eq!(aggregate(&["a".into()]), "a");
        assert_eq!(aggregate(&["a".into(), "b".into(), "a".into()]), "[a, b]");
        assert_eq!(
            forbidden("web-", "failed quota: q: must specify limits.memory for: p"),
            "pods \"web-\" is forbidden: failed quota: q: must specify limits.memory for: p"
        );
    }

    #[test]
    fn pods_are_named_like_the_apiserver_does() {
        assert_eq!(object_name(&json!({"metadata": {"name": "a"}})), "a");
        assert_eq!(
            object_name(&json!({"metadata": {"name": "", "generateName": "web-"}})),
            "web-"
        );
        assert_eq!(object_name(&json!({})), "Unknown");
        let spec = json!({"containers": [{"name": "app"}], "initContainers": [{"name": "i"}]});
        let paths: Vec<String> = containers_with_paths(&spec)
            .into_iter()
            .map(|(p, c)| format!("{p}={}", container_name(c)))
            .collect();
        assert_eq!(
            paths,
            ["spec.initContainers[0]=i", "spec.containers[0]=app"]
        );
    }
}

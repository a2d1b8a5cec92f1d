//! The rules: pure functions from an object to a plan (a JSON Patch and its result).

pub mod inject;
pub mod plan;
pub mod record;
pub mod uninject;

pub use inject::inject;
pub use plan::{Outcome, Plan, PlanError};
pub use uninject::uninject;

use serde_json::Value;

use crate::workload::WorkloadKind;

/// Where a workload's pod metadata and spec live.
pub(crate) struct PodPaths {
    pub metadata: Vec<String>,
    pub spec: Vec<String>,
}

impl PodPaths {
    pub fn of(kind: WorkloadKind) -> Self {
        let prefix = kind.template_path();
        PodPaths {
            metadata: plan::path(prefix, &["metadata"]),
            spec: plan::path(prefix, &["spec"]),
        }
    }

    pub fn metadata(&self, field: &str) -> Vec<String> {
        let mut path = self.metadata.clone();
        path.push(field.to_string());
        path
    }

    pub fn spec(&self, field: &str) -> Vec<String> {
        let mut path = self.spec.clone();
        path.push(field.to_string());
        path
    }
}

/// Why a workload has no pod template this tool can work on, if it has none.
pub(crate) fn template_problem(object: &Value, kind: WorkloadKind) -> Option<String> {
    let prefix = kind.template_path();
    let template = prefix.iter().try_fold(object, |at, token| at.get(token));
    let where_ = if prefix.is_empty() {
        "the pod".to_string()
    } else {
        prefix.join(".")
    };
    let Some(template) = template.filter(|t| t.is_object()) else {
        return Some(format!("no pod template at {where_}"));
    };
    match template.get("spec").and_then(|s| s.get("containers")) {
        Some(Value::Array(_)) => None,
        Some(_) => Some(format!("containers in {where_} is not a list")),
        None => Some(format!("no containers in {where_}")),
    }
}

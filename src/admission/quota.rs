//! The ResourceQuota admission plugin for a pod: which quotas apply (their
//! scopes), the "must specify" rule, and whether one more pod fits
//! (`staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/`,
//! `pkg/quota/v1/evaluator/core/pods.go`). A quota's `spec.hard` stands for its `status.hard`,
//! and its `status.used` counts as zero where it is not written: offline,
//! no controller has filled them in.

use serde_json::Value;

use super::quantity::Quantity;
use super::resources::{self, ResourceList};
use crate::json::Field;

/// The compute resources a quota can make every container specify.
const MUST_SPECIFY: [&str; 6] = [
    "cpu",
    "memory",
    "requests.cpu",
    "requests.memory",
    "limits.cpu",
    "limits.memory",
];

/// Whether `quota` applies to the pod: every scope in `spec.scopes` and
/// every `spec.scopeSelector` expression matches.
pub fn applies(quota: &Value, pod: &Value) -> bool {
    let spec = pod.field("spec").unwrap_or(&Value::Null);
    let quota_spec = quota.field("spec");
    let scopes = quota_spec
        .and_then(|s| s.field("scopes"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str);
    let scopes_match = scopes.into_iter().all(|scope| scope_matches(scope, spec));
    let expressions = quota_spec
        .and_then(|s| s.field("scopeSelector"))
        .and_then(|s| s.field("matchExpressions"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    scopes_match && expressions.into_iter().all(|e| expression_matches(e, spec))
}

fn scope_matches(scope: &str, spec: &Value) -> bool {
    let terminating = spec
        .field("activeDeadlineSeconds")
        .and_then(Value::as_i64)
        .is_some_and(|s| s >= 0);
    match scope {
        "Terminating" => terminating,
        "NotTerminating" => !terminating,
        "BestEffort" => resources::is_best_effort(spec),
        "NotBestEffort" => !resources::is_best_effort(spec),
        "PriorityClass" => spec.field("priorityClassName").is_some(),
        "CrossNamespacePodAffinity" => uses_cross_namespace_affinity(spec),
        _ => false,
    }
}

fn expression_matches(expression: &Value, spec: &Value) -> bool {
    let scope = expression
        .field("scopeName")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if scope == "PriorityClass" {
        let class = spec.field("priorityClassName").and_then(Value::as_str);
        return super::requirement_matches(expression, class);
    }
    // The other scopes take `Exists` (and `DoesNotExist` for their opposite).
    let present = scope_matches(scope, spec).then_some("");
    match expression.field("operator").and_then(Value::as_str) {
        Some("Exists" | "DoesNotExist") => super::requirement_matches(expression, present),
        _ => false,
    }
}

fn uses_cross_namespace_affinity(spec: &Value) -> bool {
    let affinity = spec.field("affinity");
    ["podAffinity", "podAntiAffinity"].iter().any(|kind| {
        let terms = affinity.and_then(|a| a.get(kind));
        [
            "requiredDuringSchedulingIgnoredDuringExecution",
            "preferredDuringSchedulingIgnoredDuringExecution",
        ]
        .iter()
        .flat_map(|when| {
            terms
                .and_then(|t| t.get(when))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        })
        .any(|term| {
            let term = term.field("podAffinityTerm").unwrap_or(term);
            term.field("namespaceSelector").is_some()
                || term
                    .field("namespaces")
                    .and_then(Value::as_array)
                    .is_some_and(|n| !n.is_empty())
        })
    })
}

/// The resource names a quota tracks (`status.hard`, here `spec.hard`).
fn hard(quota: &Value) -> ResourceList {
    quota
        .field("status")
        .and_then(|s| s.field("hard"))
        .or_else(|| quota.field("spec").and_then(|s| s.field("hard")))
        .and_then(Value::as_object)
        .map(resources::list_of)
        .unwrap_or_default()
}

fn used(quota: &Value) -> ResourceList {
    quota
        .field("status")
        .and_then(|s| s.field("used"))
        .and_then(Value::as_object)
        .map(resources::list_of)
        .unwrap_or_default()
}

/// The "must specify" rule: each container and init container must set
/// every cpu/memory name the quota tracks. The error text after
/// `failed quota: <name>: `, or `None`.
pub fn missing(quota: &Value, spec: &Value) -> Option<String> {
    // Pod-level resources answer for every container.
    if resources::has_pod_level(spec) {
        return None;
    }
    let required: Vec<String> = hard(quota)
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| MUST_SPECIFY.contains(&name.as_str()))
        .collect();
    let mut missing: Vec<(String, Vec<String>)> = Vec::new();
    let containers =
        resources::list(spec, "containers").chain(resources::list(spec, "initContainers"));
    for container in containers {
        let requests = resources::container_list(container, "requests");
        let limits = resources::container_list(container, "limits");
        for name in &required {
            let provided = match name.as_str() {
                "cpu" | "requests.cpu" => resources::get(&requests, "cpu").is_some(),
                "memory" | "requests.memory" => resources::get(&requests, "memory").is_some(),
                "limits.cpu" => resources::get(&limits, "cpu").is_some(),
                _ => resources::get(&limits, "memory").is_some(),
            };
            if provided {
                continue;
            }
            let container_name = super::container_name(container).to_string();
            match missing.iter_mut().find(|(n, _)| n == name) {
                Some((_, names)) => names.push(container_name),
                None => missing.push((name.clone(), vec![container_name])),
            }
        }
    }
    if missing.is_empty() {
        return None;
    }
    missing.sort();
    let parts: Vec<String> = missing
        .into_iter()
        .map(|(name, mut containers)| {
            containers.sort();
            containers.dedup();
            format!("{name} for: {}", containers.join(","))
        })
        .collect();
    Some(format!("must specify {}", parts.join("; ")))
}

/// What one pod counts against a quota, by resource name.
pub fn usage(spec: &Value) -> ResourceList {
    let one = Quantity::parse("1").unwrap_or_else(Quantity::zero);
    let mut usage = vec![("pods".to_string(), one), ("count/pods".to_string(), one)];
    for (name, quantity) in resources::pod_total(spec, "requests") {
        if name == "cpu" || name == "memory" || name == "ephemeral-storage" {
            usage.push((name.clone(), quantity));
        }
        usage.push((format!("requests.{name}"), quantity));
    }
    for (name, quantity) in resources::pod_total(spec, "limits") {
        usage.push((format!("limits.{name}"), quantity));
    }
    usage
}

/// A resource one more pod would take over a quota's limit.
struct Exceeded {
    name: String,
    requested: Quantity,
    used: Quantity,
    hard: Quantity,
}

/// The verdict of the namespace's quotas (applying ones, in name order) on
/// the pod, as the message after `pods "x" is forbidden: `; `None` when it
/// is admitted.
pub fn check(pod: &Value, quotas: &[&Value]) -> Option<String> {
    let spec = pod.field("spec").unwrap_or(&Value::Null);
    let applying: Vec<&&Value> = quotas.iter().filter(|q| applies(q, pod)).collect();
    for quota in &applying {
        if let Some(error) = missing(quota, spec) {
            return Some(format!(
                "failed quota: {}: {error}",
                super::metadata_name(quota)
            ));
        }
    }
    let requested = usage(spec);
    for quota in &applying {
        let used = used(quota);
        // Each resource over its limit: (name, requested, used, hard).
        let mut exceeded: Vec<Exceeded> = Vec::new();
        for (name, limit) in hard(quota) {
            let Some(request) = resources::get(&requested, &name) else {
                continue;
            };
            let already = resources::get(&used, &name)
                .copied()
                .unwrap_or_else(Quantity::zero);
            if already.add(request) > limit {
                exceeded.push(Exceeded {
                    name,
                    requested: *request,
                    used: already,
                    hard: limit,
                });
            }
        }
        if exceeded.is_empty() {
            continue;
        }
        exceeded.sort_by(|a, b| a.name.cmp(&b.name));
        let show = |pick: fn(&Exceeded) -> Quantity| {
            exceeded
                .iter()
                .map(|e| format!("{}={}", e.name, pick(e)))
                .collect::<Vec<_>>()
                .join(",")
        };
        return Some(format!(
            "exceeded quota: {}, requested: {}, used: {}, limited: {}",
            super::metadata_name(quota),
            show(|e| e.requested),
            show(|e| e.used),
            show(|e| e.hard)
        ));
    }
    None
}

/// The compute resources (`limits.memory`, `requests.cpu`, …) that the
/// quotas applying to the pod make every container specify, as
/// (section, resource) pairs.
pub fn requirements(quotas: &[&Value], pod: &Value) -> Vec<(String, String)> {
    let mut required = Vec::new();
    for quota in quotas.iter().filter(|q| applies(q, pod)) {
        for (name, _) in hard(quota) {
            let pair = match name.as_str() {
                "cpu" | "requests.cpu" => ("requests", "cpu"),
                "memory" | "requests.memory" => ("requests", "memory"),
                "limits.cpu" => ("limits", "cpu"),
                "limits.memory" => ("limits", "memory"),
                _ => continue,
            };
            let pair = (pair.0.to_string(), pair.1.to_string());
            if !required.contains(&pair) {
                required.push(pair);
            }
        }
    }
    required
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn quota(name: &str, spec: Value) -> Value {
        json!({"kind": "ResourceQuota", "metadata": {"name": name}, "spec": spec})
    }

    #[test]
    fn must_specify_lists_resources_and_containers_sorted() {
        let q = quota(
            "mem",
            json!({"hard": {"limits.memory": "4Gi", "requests.cpu": "2", "pods": "10"}}),
        );
        let pod = json!({"spec": {
            "containers": [
                {"name": "web", "resources": {"limits": {"memory": "1Gi"}, "requests": {"cpu": "1"}}},
                {"name": "linkerd-proxy"}
            ],
            "initContainers": [{"name": "linkerd-init", "resources": {"limits": {"memory": "50Mi"}}}]
        }});
        assert_eq!(
            check(&pod, &[&q]).as_deref(),
            Some(
                "failed quota: mem: must specify limits.memory for: linkerd-proxy; requests.cpu for: linkerd-init,linkerd-proxy"
            )
        );
        let ok = json!({"spec": {"containers": [
            {"name": "web", "resources": {"limits": {"memory": "1Gi"}, "requests": {"cpu": "1"}}}]}});
        assert_eq!(check(&ok, &[&q]), None);
    }

    #[test]
    fn scopes_decide_whether_a_quota_applies() {
        let best_effort = quota(
            "be",
            json!({"hard": {"pods": "0"}, "scopes": ["BestEffort"]}),
        );
        let terminating = quota(
            "t",
            json!({"hard": {"limits.cpu": "1"}, "scopes": ["Terminating"]}),
        );
        let not_be = quota(
            "nbe",
            json!({"hard": {"requests.memory": "1Gi"}, "scopes": ["NotBestEffort"]}),
        );
        let bare = json!({"spec": {"containers": [{"name": "a"}]}});
        let sized = json!({"spec": {"containers": [{"name": "a", "resources": {"requests": {"memory": "2Gi"}}}]}});
        assert!(applies(&best_effort, &bare) && !applies(&best_effort, &sized));
        assert!(!applies(&terminating, &sized));
        assert!(applies(&not_be, &sized) && !applies(&not_be, &bare));
        assert_eq!(
            check(&sized, &[&best_effort, &not_be]).as_deref(),
            Some(
                "exceeded quota: nbe, requested: requests.memory=2Gi, used: requests.memory=0, limited: requests.memory=1Gi"
            )
        );
        assert_eq!(
            check(&bare, &[&best_effort]).as_deref(),
            Some("exceeded quota: be, requested: pods=1, used: pods=0, limited: pods=0")
        );
        let high = quota(
            "high",
            json!({"hard": {"limits.memory": "1Gi"},
            "scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]}}),
        );
        let low = json!({"spec": {"priorityClassName": "low", "containers": [{"name": "a"}]}});
        assert_eq!(check(&low, &[&high]), None);
        let high_pod =
            json!({"spec": {"priorityClassName": "high", "containers": [{"name": "a"}]}});
        assert_eq!(
            check(&high_pod, &[&high]).as_deref(),
            Some("failed quota: high: must specify limits.memory for: a")
        );
    }

    #[test]
    fn usage_adds_what_is_used_already() {
        let q = json!({"metadata": {"name": "q"}, "spec": {"hard": {"limits.memory": "1Gi"}},
            "status": {"hard": {"limits.memory": "1Gi"}, "used": {"limits.memory": "900Mi"}}});
        let pod = json!({"spec": {"containers": [{"name": "a", "resources": {"limits": {"memory": "128Mi"}}}]}});
        assert_eq!(
            check(&pod, &[&q]).as_deref(),
            Some(
                "exceeded quota: q, requested: limits.memory=128Mi, used: limits.memory=900Mi, limited: limits.memory=1Gi"
            )
        );
    }
}

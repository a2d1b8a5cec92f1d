//! Resources of the injected containers: what LimitRanger would give them at
//! admission, and what the namespace's ResourceQuotas require of them. The
//! admission emulation ([`crate::admission`]) owns the rules; this module
//! applies them to the containers being injected and says what it set.

use serde_json::{Map, Value};

use crate::admission::limit_ranger::{self, Defaults};
use crate::admission::quantity::Quantity;

/// The apiserver's defaulting, then the LimitRange defaults: fill what the
/// container lacks; returns what was set, as `limits.memory` and the like.
pub fn fill_defaults(container: &mut Value, defaults: &Defaults) -> Vec<String> {
    crate::admission::api::default_container_requests(container);
    let (requests, limits) = limit_ranger::fill_container(container, defaults);
    limits
        .iter()
        .map(|k| format!("limits.{k}"))
        .chain(requests.iter().map(|k| format!("requests.{k}")))
        .collect()
}

/// Where a request is above its limit (a profile's default request under a
/// limit set for the workload), bring the request down to the limit; the
/// apiserver would reject the pod otherwise. Returns what changed.
pub fn cap_requests(container: &mut Value) -> Vec<String> {
    let mut changed = Vec::new();
    let Some(resources) = container
        .get_mut("resources")
        .and_then(Value::as_object_mut)
    else {
        return changed;
    };
    let Some(limits) = resources.get("limits").and_then(Value::as_object).cloned() else {
        return changed;
    };
    let Some(Value::Object(requests)) = resources.get_mut("requests") else {
        return changed;
    };
    for (k, limit) in limits {
        let request = requests.get(&k).and_then(Quantity::from_value);
        if let (Some(request), Some(max)) = (request, Quantity::from_value(&limit)) {
            if request > max {
                changed.push(format!("requests.{k} lowered to its limit {max}"));
                requests.insert(k, limit);
            }
        }
    }
    changed
}

/// Give `container` the `required` resources (from
/// [`crate::admission::quota::requirements`]) it still lacks, from `defaults`
/// (a `{requests: {…}, limits: {…}}` map); returns what was set.
pub fn fill_required(
    container: &mut Value,
    required: &[(String, String)],
    defaults: &Map<String, Value>,
) -> Vec<String> {
    let mut missing = Defaults::default();
    for (section, resource) in required {
        let current = |section: &str| {
            container
                .get("resources")?
                .get(section)?
                .get(resource)
                .cloned()
        };
        let Some(value) = defaults.get(section).and_then(|s| s.get(resource)) else {
            continue;
        };
        if current(section).is_some() {
            continue;
        }
        if section == "limits" {
            // Never a limit below the container's own request.
            let above =
                |request: &Value| Quantity::from_value(request) > Quantity::from_value(value);
            let value = match current("requests") {
                Some(request) if above(&request) => request,
                _ => value.clone(),
            };
            missing.limits.insert(resource.clone(), value);
        } else {
            missing.requests.insert(resource.clone(), value.clone());
        }
    }
    let (requests, limits) = limit_ranger::fill_container(container, &missing);
    limits
        .iter()
        .map(|k| format!("limits.{k}"))
        .chain(requests.iter().map(|k| format!("requests.{k}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_never_change_what_is_set() {
        let mut container = json!({"name": "p", "resources": {"limits": {"memory": "100Mi"}}});
        let defaults = Defaults {
            limits: json!({"memory": "1Gi", "cpu": "1"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            requests: Map::new(),
        };
        let set = fill_defaults(&mut container, &defaults);
        assert_eq!(set, ["limits.cpu"]);
        assert_eq!(
            container["resources"],
            json!({"limits": {"memory": "100Mi", "cpu": "1"}, "requests": {"memory": "100Mi"}})
        );
        let mut bare = json!({"name": "p"});
        assert!(fill_defaults(&mut bare, &Defaults::default()).is_empty());
        assert_eq!(bare, json!({"name": "p"}));
    }

    #[test]
    fn requests_stay_under_limits() {
        let mut c = json!({"resources": {"limits": {"cpu": "50m"}, "requests": {"cpu": "100m"}}});
        assert_eq!(
            cap_requests(&mut c),
            ["requests.cpu lowered to its limit 50m"]
        );
        let mut c = json!({"resources": {"requests": {"memory": "512Mi"}}});
        let required = [("limits".to_string(), "memory".to_string())];
        let defaults = json!({"limits": {"memory": "250Mi"}});
        fill_required(&mut c, &required, defaults.as_object().expect("map"));
        assert_eq!(c["resources"]["limits"]["memory"], "512Mi");
        let mut proxy = json!({"name": "p"});
        let required = [
            ("limits".to_string(), "memory".to_string()),
            ("requests".into(), "cpu".into()),
        ];
        let defaults = json!({"limits": {"memory": "250Mi"}, "requests": {"cpu": "100m"}});
        let set = fill_required(&mut proxy, &required, defaults.as_object().expect("map"));
        assert_eq!(set, ["limits.memory", "requests.cpu"]);
    }
}

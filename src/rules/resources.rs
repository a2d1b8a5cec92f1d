//! Resources of the injected containers, filled the way LimitRanger would fill
//! them at admission, and completed where a ResourceQuota requires them.

use serde_json::{Map, Value};

/// The default limits and requests that LimitRanger applies from the
/// `type: Container` items of `limit_ranges` (in the order given), after the
/// LimitRange object's own defaulting: `default` falls back to `max`, and
/// `defaultRequest` to `default`, then `min`. The first LimitRange to set a
/// resource wins; within one, a later item overwrites an earlier one.
pub fn limit_range_defaults(limit_ranges: &[&Value]) -> (Map<String, Value>, Map<String, Value>) {
    let mut limits = Map::new();
    let mut requests = Map::new();
    for range in limit_ranges {
        let mut own_limits = Map::new();
        let mut own_requests = Map::new();
        let items = range
            .get("spec")
            .and_then(|s| s.get("limits"))
            .and_then(Value::as_array);
        for item in items.into_iter().flatten() {
            if item.get("type").and_then(Value::as_str) != Some("Container") {
                continue;
            }
            let field = |name: &str| {
                item.get(name)
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default()
            };
            let (max, min) = (field("max"), field("min"));
            let mut default = field("default");
            let mut default_request = field("defaultRequest");
            for (k, v) in &max {
                default.entry(k.clone()).or_insert_with(|| v.clone());
            }
            for (k, v) in default.iter().chain(&min) {
                default_request
                    .entry(k.clone())
                    .or_insert_with(|| v.clone());
            }
            own_limits.extend(default);
            own_requests.extend(default_request);
        }
        for (k, v) in own_limits {
            limits.entry(k).or_insert(v);
        }
        for (k, v) in own_requests {
            requests.entry(k).or_insert(v);
        }
    }
    (limits, requests)
}

/// A Kubernetes quantity as a number, for comparing two of them
/// (`100m` is 0.1, `1Gi` is 1073741824, `2e3` is 2000).
pub fn quantity(text: &str) -> Option<f64> {
    let text = text.trim();
    let split = text
        .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let scale = match suffix {
        "" => 1.0,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        _ => return None,
    };
    number.parse::<f64>().ok().map(|n| n * scale)
}

fn quantity_of(value: &Value) -> Option<f64> {
    match value {
        Value::String(s) => quantity(s),
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
}

/// The apiserver's defaulting, which runs before LimitRanger: a resource
/// with a limit and no request gets the limit as its request.
pub fn requests_from_limits(container: &mut Value) {
    let Some(resources) = container
        .get_mut("resources")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let Some(limits) = resources.get("limits").and_then(Value::as_object).cloned() else {
        return;
    };
    let requests = resources
        .entry("requests")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(requests) = requests {
        for (k, v) in limits {
            requests.entry(k).or_insert(v);
        }
    }
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
        let too_high = match (requests.get(&k).and_then(quantity_of), quantity_of(&limit)) {
            (Some(request), Some(max)) => request > max,
            _ => false,
        };
        if too_high {
            let shown = limit
                .as_str()
                .map_or_else(|| limit.to_string(), str::to_string);
            changed.push(format!("requests.{k} lowered to its limit {shown}"));
            requests.insert(k, limit);
        }
    }
    changed
}

/// Fill the resources `container` lacks from `limits` and `requests`; returns
/// what was set, as `limits.memory` and the like.
pub fn fill(
    container: &mut Value,
    limits: &Map<String, Value>,
    requests: &Map<String, Value>,
) -> Vec<String> {
    let mut set = Vec::new();
    let Value::Object(container) = container else {
        return set;
    };
    let resources = container
        .entry("resources")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(resources) = resources else {
        return set;
    };
    for (section, defaults) in [("limits", limits), ("requests", requests)] {
        if defaults.is_empty() {
            continue;
        }
        let entry = resources
            .entry(section)
            .or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(entry) = entry else {
            continue;
        };
        for (k, v) in defaults {
            if !entry.contains_key(k) {
                entry.insert(k.clone(), v.clone());
                set.push(format!("{section}.{k}"));
            }
        }
        if entry.is_empty() {
            resources.remove(section);
        }
    }
    if resources.is_empty() {
        container.remove("resources");
    }
    set
}

/// The compute resources (`limits.memory`, `requests.cpu`, …) that the
/// ResourceQuotas of a namespace make every container specify, for a pod
/// that does (or does not) set `activeDeadlineSeconds`.
pub fn quota_requirements(quotas: &[&Value], terminating: bool) -> Vec<(String, String)> {
    let mut required = Vec::new();
    for quota in quotas {
        let spec = quota.get("spec");
        let scopes: Vec<&str> = spec
            .and_then(|s| s.get("scopes"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let applies = scopes.iter().all(|scope| match *scope {
            "Terminating" => terminating,
            "NotTerminating" => !terminating,
            // An injected proxy with resources makes the pod not BestEffort.
            "BestEffort" => false,
            _ => true,
        });
        if !applies {
            continue;
        }
        let hard = spec.and_then(|s| s.get("hard")).and_then(Value::as_object);
        for key in hard.into_iter().flat_map(|h| h.keys()) {
            let (section, resource) = match key.as_str() {
                "cpu" | "requests.cpu" => ("requests", "cpu"),
                "memory" | "requests.memory" => ("requests", "memory"),
                "limits.cpu" => ("limits", "cpu"),
                "limits.memory" => ("limits", "memory"),
                _ => continue,
            };
            let pair = (section.to_string(), resource.to_string());
            if !required.contains(&pair) {
                required.push(pair);
            }
        }
    }
    required
}

/// Give `container` the `required` resources it still lacks, from `defaults`
/// (a `{requests: {…}, limits: {…}}` map); returns what was set.
pub fn fill_required(
    container: &mut Value,
    required: &[(String, String)],
    defaults: &Map<String, Value>,
) -> Vec<String> {
    let mut limits = Map::new();
    let mut requests = Map::new();
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
            let value = match current("requests") {
                Some(request) if quantity_of(&request) > quantity_of(value) => request,
                _ => value.clone(),
            };
            limits.insert(resource.clone(), value);
        } else {
            requests.insert(resource.clone(), value.clone());
        }
    }
    fill(container, &limits, &requests)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn limit_range_defaults_follow_the_object_defaulting() {
        let a = json!({"spec": {"limits": [
            {"type": "Container", "max": {"memory": "1Gi"}, "min": {"cpu": "50m"}, "defaultRequest": {"memory": "64Mi"}},
            {"type": "Pod", "max": {"cpu": "4"}}
        ]}});
        let b = json!({"spec": {"limits": [{"type": "Container", "default": {"memory": "2Gi", "cpu": "1"}}]}});
        let (limits, requests) = limit_range_defaults(&[&a, &b]);
        assert_eq!(Value::Object(limits), json!({"memory": "1Gi", "cpu": "1"}));
        assert_eq!(
            Value::Object(requests),
            json!({"memory": "64Mi", "cpu": "50m"})
        );
    }

    #[test]
    fn fill_never_changes_what_is_set() {
        let mut container = json!({"name": "p", "resources": {"limits": {"memory": "100Mi"}}});
        let limits = json!({"memory": "1Gi", "cpu": "1"});
        let set = fill(
            &mut container,
            limits.as_object().expect("map"),
            &Map::new(),
        );
        assert_eq!(set, ["limits.cpu"]);
        assert_eq!(
            container["resources"],
            json!({"limits": {"memory": "100Mi", "cpu": "1"}})
        );
        let mut bare = json!({"name": "p"});
        assert!(fill(&mut bare, &Map::new(), &Map::new()).is_empty());
        assert_eq!(bare, json!({"name": "p"}));
    }

    #[test]
    fn quantities_compare_and_requests_stay_under_limits() {
        assert_eq!(quantity("100m"), Some(0.1));
        assert_eq!(quantity("1Gi"), Some(1073741824.0));
        assert_eq!(quantity("2e3"), Some(2000.0));
        assert!(quantity("lots").is_none());
        let mut c = json!({"resources": {"limits": {"memory": "300Mi"}}});
        requests_from_limits(&mut c);
        assert_eq!(c["resources"]["requests"]["memory"], "300Mi");
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
    }

    #[test]
    fn quotas_require_what_they_track_in_scope() {
        let quota = json!({"spec": {"hard": {"limits.memory": "4Gi", "pods": "10", "cpu": "2"}}});
        let scoped = json!({"spec": {"hard": {"limits.cpu": "4"}, "scopes": ["Terminating"]}});
        let required = quota_requirements(&[&quota, &scoped], false);
        assert_eq!(
            required,
            [
                ("limits".to_string(), "memory".to_string()),
                ("requests".into(), "cpu".into())
            ]
        );
        let mut proxy = json!({"name": "p"});
        let defaults = json!({"limits": {"memory": "250Mi"}, "requests": {"cpu": "100m"}});
        let set = fill_required(&mut proxy, &required, defaults.as_object().expect("map"));
        assert_eq!(set, ["limits.memory", "requests.cpu"]);
    }
}

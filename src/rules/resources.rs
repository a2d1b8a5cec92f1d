//! Resources of the injected containers: what LimitRanger would give them at
//! admission, and what the namespace's ResourceQuotas require of them. The
//! admission emulation ([`crate::admission`]) owns the rules; this module
//! applies them to the containers being injected and says what it set.

use serde_json::{Map, Value};

use crate::admission::limit_ranger::{self, Defaults};
use crate::admission::quantity::Quantity;
use crate::json::Field;

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
    let Some(limits) = resources
        .field("limits")
        .and_then(Value::as_object)
        .cloned()
    else {
        return changed;
    };
    let Some(Value::Object(requests)) = resources.get_mut("requests") else {
        return changed;
    };
    for (k, limit) in limits {
        let request = requests.field(&k).and_then(Quantity::from_value);
        if let (Some(request), Some(max)) = (request, Quantity::from_value(&limit)) {
            if request > max {
                changed.push(format!("requests.{k} lowered to its limit {max}"));
                requests.insert(k, limit);
            }
        }
    }
    changed
}

/// Bring the injected container's resources within the `type: Container`
/// items of the namespace's LimitRanges: requests and limits at least `min`
/// and at most `max`, and the request raised so that limit ÷ request stays
/// within `maxLimitRequestRatio`. Returns what changed.
pub fn fit_limit_ranges(container: &mut Value, limit_ranges: &[&Value]) -> Vec<String> {
    let mut changed = Vec::new();
    // The same constraints, compared the same way, as LimitRanger validates.
    for constraints in limit_ranger::container_constraints(limit_ranges) {
        for section in ["requests", "limits"] {
            for (resource, min) in &constraints.min {
                let below = |q: &Quantity| q.compare_for_limits(min).is_lt();
                if let Some(current) = get(container, section, resource).filter(below) {
                    set(container, section, resource, *min);
                    changed.push(format!(
                        "{section}.{resource} raised from {current} to the LimitRange's minimum {min}"
                    ));
                }
            }
        }
        for section in ["requests", "limits"] {
            for (resource, max) in &constraints.max {
                let above = |q: &Quantity| q.compare_for_limits(max).is_gt();
                if let Some(current) = get(container, section, resource).filter(above) {
                    set(container, section, resource, *max);
                    changed.push(format!(
                        "{section}.{resource} lowered from {current} to the LimitRange's maximum {max}"
                    ));
                }
            }
        }
        for (resource, ratio) in &constraints.ratio {
            let (Some(limit), Some(request)) = (
                get(container, "limits", resource),
                get(container, "requests", resource),
            ) else {
                continue;
            };
            let ratio_milli = ratio.milli_value();
            if request.is_zero()
                || ratio_milli <= 0
                || limit_ranger::exceeded_ratio(&request, &limit, ratio).is_none()
            {
                continue;
            }
            // The smallest request within the ratio: limit ÷ ratio, rounded up.
            let needed = limit.scaled(1000, ratio_milli);
            set(container, "requests", resource, needed);
            changed.push(format!(
                "requests.{resource} raised from {request} to {needed}, within the LimitRange's limit/request ratio of {ratio}"
            ));
        }
    }
    changed
}

fn get(container: &Value, section: &str, resource: &str) -> Option<Quantity> {
    container
        .field("resources")?
        .field(section)?
        .field(resource)
        .and_then(Quantity::from_value)
}

fn set(container: &mut Value, section: &str, resource: &str, quantity: Quantity) {
    if let Some(list) = container
        .get_mut("resources")
        .and_then(|r| r.get_mut(section))
        .and_then(Value::as_object_mut)
    {
        list.insert(resource.to_string(), Value::String(quantity.to_string()));
    }
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
                .field("resources")?
                .field(section)?
                .field(resource)
                .cloned()
        };
        let Some(value) = defaults.field(section).and_then(|s| s.field(resource)) else {
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
    fn injected_resources_fit_the_limit_ranges() {
        let lr = json!({"spec": {"limits": [{"type": "Container",
            "min": {"memory": "32Mi"}, "max": {"cpu": "500m"}, "maxLimitRequestRatio": {"cpu": "4"}}]}});
        let mut proxy = json!({"resources": {"requests": {"cpu": "100m", "memory": "20Mi"}, "limits": {"cpu": "1", "memory": "250Mi"}}});
        let changed = fit_limit_ranges(&mut proxy, &[&lr]);
        assert_eq!(
            changed,
            [
                "requests.memory raised from 20Mi to the LimitRange's minimum 32Mi",
                "limits.cpu lowered from 1 to the LimitRange's maximum 500m",
                "requests.cpu raised from 100m to 125m, within the LimitRange's limit/request ratio of 4"
            ]
        );
        assert_eq!(
            proxy["resources"],
            json!({"requests": {"cpu": "125m", "memory": "32Mi"}, "limits": {"cpu": "500m", "memory": "250Mi"}})
        );
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

//! The LimitRanger admission plugin: resource defaults for every container
//! (mutating), then min, max and limit/request ratio (validating), from the
//! LimitRange objects of the namespace
//! (`plugin/pkg/admission/limitranger/admission.go`).

use serde_json::{Map, Value, json};

use super::quantity::Quantity;
use super::resources::{self, ResourceList};
use crate::cluster::KubeVersion;
use crate::json::Field;

/// The annotation LimitRanger writes on a pod it gave defaults to.
pub const ANNOTATION: &str = "kubernetes.io/limit-ranger";

/// Defaults of one LimitRange for a container, after the object's own
/// defaulting (`default` falls back to `max`; `defaultRequest` to `default`,
/// then `min`). Within the LimitRange a later `type: Container` item
/// overwrites an earlier one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Defaults {
    pub limits: Map<String, Value>,
    pub requests: Map<String, Value>,
}

impl Defaults {
    pub fn of(limit_range: &Value) -> Defaults {
        let mut defaults = Defaults::default();
        for item in items(limit_range).filter(|i| item_type(i) == "Container") {
            // Only quantities: the apiserver never stores a LimitRange with others.
            let field = |name: &str| -> Map<String, Value> {
                item.get(name)
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                    .filter(|(_, v)| Quantity::from_value(v).is_some())
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            };
            let mut default = field("default");
            let mut default_request = field("defaultRequest");
            for (k, v) in &field("max") {
                default.entry(k.clone()).or_insert_with(|| v.clone());
            }
            for (k, v) in default.iter().chain(&field("min")) {
                default_request
                    .entry(k.clone())
                    .or_insert_with(|| v.clone());
            }
            defaults.limits.extend(default);
            defaults.requests.extend(default_request);
        }
        defaults
    }

    /// The defaults several LimitRanges give together, applied in order:
    /// the first to set a resource wins.
    pub fn combined(limit_ranges: &[&Value]) -> Defaults {
        let mut all = Defaults::default();
        for range in limit_ranges {
            let own = Defaults::of(range);
            for (k, v) in own.limits {
                all.limits.entry(k).or_insert(v);
            }
            for (k, v) in own.requests {
                all.requests.entry(k).or_insert(v);
            }
        }
        all
    }
}

fn items(limit_range: &Value) -> impl Iterator<Item = &Value> {
    limit_range
        .field("spec")
        .and_then(|s| s.field("limits"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn item_type(item: &Value) -> &str {
    item.field("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Fill what `container` lacks from `defaults`, never changing a value it
/// has; returns the names set, as (requests, limits), sorted.
pub fn fill_container(container: &mut Value, defaults: &Defaults) -> (Vec<String>, Vec<String>) {
    let mut set_requests = Vec::new();
    let mut set_limits = Vec::new();
    let Value::Object(container) = container else {
        return (set_requests, set_limits);
    };
    for (section, values, set) in [
        ("limits", &defaults.limits, &mut set_limits),
        ("requests", &defaults.requests, &mut set_requests),
    ] {
        let missing: Vec<(&String, &Value)> = values
            .iter()
            .filter(|(k, _)| {
                container
                    .field("resources")
                    .and_then(|r| r.get(section))
                    .and_then(|s| s.get(k.as_str()))
                    .is_none()
            })
            .collect();
        if missing.is_empty() {
            continue;
        }
        let resources = container.entry("resources").or_insert_with(|| json!({}));
        if !resources.is_object() {
            *resources = json!({});
        }
        let Some(resources) = resources.as_object_mut() else {
            continue;
        };
        let entry = resources.entry(section).or_insert_with(|| json!({}));
        if !entry.is_object() {
            *entry = json!({});
        }
        if let Some(entry) = entry.as_object_mut() {
            for (k, v) in missing {
                entry.insert(k.clone(), v.clone());
                set.push(k.clone());
            }
        }
    }
    set_requests.sort();
    set_limits.sort();
    (set_requests, set_limits)
}

/// The plugin's Admit: each LimitRange, in order, fills what the containers
/// (then the init containers, sidecars included) lack. A LimitRange that set
/// something replaces the `kubernetes.io/limit-ranger` annotation with what
/// it set. Returns whether the pod changed.
pub fn admit(pod: &mut Value, limit_ranges: &[&Value]) -> bool {
    let mut changed = false;
    for range in limit_ranges {
        let defaults = Defaults::of(range);
        if defaults.limits.is_empty() && defaults.requests.is_empty() {
            continue;
        }
        let mut entries = Vec::new();
        for (list, prefix) in [
            ("containers", "container"),
            ("initContainers", "init container"),
        ] {
            let containers = pod
                .get_mut("spec")
                .and_then(|s| s.get_mut(list))
                .and_then(Value::as_array_mut);
            for container in containers.into_iter().flatten() {
                let name = super::container_name(container).to_string();
                let (requests, limits) = fill_container(container, &defaults);
                if !requests.is_empty() {
                    entries.push(format!(
                        "{} request for {prefix} {name}",
                        requests.join(", ")
                    ));
                }
                if !limits.is_empty() {
                    entries.push(format!("{} limit for {prefix} {name}", limits.join(", ")));
                }
            }
        }
        if entries.is_empty() {
            continue;
        }
        changed = true;
        let value = format!("LimitRanger plugin set: {}", entries.join("; "));
        set_annotation(pod, ANNOTATION, value);
    }
    changed
}

/// Set a pod annotation, creating the maps on the way.
pub fn set_annotation(pod: &mut Value, key: &str, value: String) {
    let Value::Object(pod) = pod else { return };
    let metadata = pod.entry("metadata").or_insert_with(|| json!({}));
    if !metadata.is_object() {
        *metadata = json!({});
    }
    if let Some(metadata) = metadata.as_object_mut() {
        let annotations = metadata.entry("annotations").or_insert_with(|| json!({}));
        if !annotations.is_object() {
            *annotations = json!({});
        }
        if let Some(annotations) = annotations.as_object_mut() {
            annotations.insert(key.to_string(), Value::String(value));
        }
    }
}

/// The plugin's Validate: the errors of the first LimitRange (in order) that
/// the pod breaks, aggregated as the apiserver prints them; `None` when
/// every LimitRange is met. Resources are checked in the order the
/// LimitRange lists them (the apiserver's order is Go's random map order).
pub fn validate(pod: &Value, limit_ranges: &[&Value], version: KubeVersion) -> Option<String> {
    let spec = pod.field("spec").unwrap_or(&Value::Null);
    limit_ranges.iter().find_map(|range| {
        let errors = range_errors(spec, range, version);
        (!errors.is_empty()).then(|| super::aggregate(&errors))
    })
}

fn range_errors(spec: &Value, limit_range: &Value, version: KubeVersion) -> Vec<String> {
    let mut errors = Vec::new();
    for item in items(limit_range) {
        let kind = item_type(item);
        let constraints = Constraints::of(item);
        match kind {
            "Container" => {
                let containers = resources::list(spec, "containers")
                    .chain(resources::list(spec, "initContainers"));
                for container in containers {
                    let requests = resources::container_list(container, "requests");
                    let limits = resources::container_list(container, "limits");
                    errors.extend(constraints.check(kind, &requests, &limits));
                }
            }
            "Pod" => {
                let requests = resources::limit_ranger_pod_total(spec, "requests", version);
                let limits = resources::limit_ranger_pod_total(spec, "limits", version);
                errors.extend(constraints.check(kind, &requests, &limits));
            }
            _ => {}
        }
    }
    errors
}

/// The min, max and maxLimitRequestRatio of one LimitRange item.
pub struct Constraints {
    pub min: ResourceList,
    pub max: ResourceList,
    pub ratio: ResourceList,
}

/// The constraints of every `type: Container` item of `limit_ranges`.
pub fn container_constraints(limit_ranges: &[&Value]) -> Vec<Constraints> {
    limit_ranges
        .iter()
        .flat_map(|range| items(range))
        .filter(|item| item_type(item) == "Container")
        .map(Constraints::of)
        .collect()
}

impl Constraints {
    fn of(item: &Value) -> Self {
        let list = |name: &str| {
            item.get(name)
                .and_then(Value::as_object)
                .map(resources::list_of)
                .unwrap_or_default()
        };
        Constraints {
            min: list("min"),
            max: list("max"),
            ratio: list("maxLimitRequestRatio"),
        }
    }

    /// The errors of one container (or of the pod totals), min first, then max, then ratio.
    fn check(&self, kind: &str, requests: &ResourceList, limits: &ResourceList) -> Vec<String> {
        let mut errors = Vec::new();
        for (name, min) in &self.min {
            let request = resources::get(requests, name);
            let limit = resources::get(limits, name);
            let error = match (request, limit) {
                (None, _) => Some(format!(
                    "minimum {name} usage per {kind} is {min}.  No request is specified"
                )),
                (Some(r), _) if r.compare_for_limits(min).is_lt() => Some(format!(
                    "minimum {name} usage per {kind} is {min}, but request is {r}"
                )),
                (_, Some(l)) if l.compare_for_limits(min).is_lt() => Some(format!(
                    "minimum {name} usage per {kind} is {min}, but limit is {l}"
                )),
                _ => None,
            };
            errors.extend(error);
        }
        for (name, max) in &self.max {
            let request = resources::get(requests, name);
            let limit = resources::get(limits, name);
            let error = match (request, limit) {
                (_, None) => Some(format!(
                    "maximum {name} usage per {kind} is {max}.  No limit is specified"
                )),
                (_, Some(l)) if l.compare_for_limits(max).is_gt() => Some(format!(
                    "maximum {name} usage per {kind} is {max}, but limit is {l}"
                )),
                (Some(r), _) if r.compare_for_limits(max).is_gt() => Some(format!(
                    "maximum {name} usage per {kind} is {max}, but request is {r}"
                )),
                _ => None,
            };
            errors.extend(error);
        }
        for (name, ratio) in &self.ratio {
            let request = resources::get(requests, name).filter(|q| !q.is_zero());
            let limit = resources::get(limits, name).filter(|q| !q.is_zero());
            let prefix = format!("{name} max limit to request ratio per {kind} is {ratio}");
            match (request, limit) {
                (None, _) => errors.push(format!(
                    "{prefix}, but no request is specified or request is 0"
                )),
                (_, None) => {
                    errors.push(format!("{prefix}, but no limit is specified or limit is 0"))
                }
                (Some(request), Some(limit)) => {
                    if let Some(observed) = exceeded_ratio(request, limit, ratio) {
                        errors.push(format!("{prefix}, but provided ratio is {observed:.6}"));
                    }
                }
            }
        }
        errors
    }
}

/// The limit/request ratio when it is above `max`, compared as the apiserver
/// does: in thousandths where every operand allows it, else in whole units.
pub fn exceeded_ratio(request: &Quantity, limit: &Quantity, max: &Quantity) -> Option<f64> {
    let (request_units, limit_units) = if request.fits_milli() && limit.fits_milli() {
        (request.milli_value(), limit.milli_value())
    } else {
        (request.value(), limit.value())
    };
    let observed = limit_units as f64 / request_units as f64;
    let (scaled, enforced) = if max.fits_milli() {
        (observed * 1000.0, max.milli_value() as f64)
    } else {
        (observed, max.value() as f64)
    };
    (scaled > enforced).then_some(observed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(items: Value) -> Value {
        json!({"kind": "LimitRange", "metadata": {"name": "limits"}, "spec": {"limits": items}})
    }

    #[test]
    fn defaults_follow_the_object_defaulting_and_first_range_wins() {
        let a = range(json!([
            {"type": "Container", "max": {"memory": "1Gi"}, "min": {"cpu": "50m"}, "defaultRequest": {"memory": "64Mi"}},
            {"type": "Pod", "max": {"cpu": "4"}}
        ]));
        let b = range(json!([{"type": "Container", "default": {"memory": "2Gi", "cpu": "1"}}]));
        let all = Defaults::combined(&[&a, &b]);
        assert_eq!(
            Value::Object(all.limits),
            json!({"memory": "1Gi", "cpu": "1"})
        );
        assert_eq!(
            Value::Object(all.requests),
            json!({"memory": "64Mi", "cpu": "50m"})
        );
    }

    #[test]
    fn admit_fills_every_container_and_writes_the_annotation() {
        let lr = range(
            json!([{"type": "Container", "default": {"memory": "512Mi", "cpu": "500m"}, "defaultRequest": {"cpu": "100m"}}]),
        );
        let mut pod = json!({"metadata": {"annotations": {"kubernetes.io/limit-ranger": "old"}}, "spec": {
            "containers": [{"name": "app", "resources": {"limits": {"memory": "1Gi"}, "requests": {"memory": "1Gi"}}}],
            "initContainers": [{"name": "istio-init"}]
        }});
        assert!(admit(&mut pod, &[&lr]));
        assert_eq!(
            pod["metadata"]["annotations"][ANNOTATION],
            "LimitRanger plugin set: cpu request for container app; cpu limit for container app; cpu, memory request for init container istio-init; cpu, memory limit for init container istio-init"
        );
        assert_eq!(
            pod["spec"]["containers"][0]["resources"]["limits"]["memory"],
            "1Gi"
        );
        assert_eq!(
            pod["spec"]["initContainers"][0]["resources"]["requests"]["memory"],
            "512Mi"
        );
        // Nothing left to set: no change, the annotation stays.
        let before = pod.clone();
        assert!(!admit(&mut pod, &[&lr]));
        assert_eq!(pod, before);
    }

    fn pod(containers: Value) -> Value {
        json!({"spec": {"containers": containers}})
    }

    #[test]
    fn container_min_max_and_ratio_messages() {
        let lr = range(
            json!([{"type": "Container", "max": {"memory": "1Gi", "cpu": "500m"}, "min": {"cpu": "50m"}}]),
        );
        let v = KubeVersion::new(1, 33);
        let ok = pod(
            json!([{"name": "a", "resources": {"limits": {"memory": "1Gi", "cpu": "500m"}, "requests": {"cpu": "50m"}}}]),
        );
        assert_eq!(validate(&ok, &[&lr], v), None);
        let big = pod(
            json!([{"name": "a", "resources": {"limits": {"memory": "2Gi", "cpu": "1"}, "requests": {"cpu": "10m"}}}]),
        );
        assert_eq!(
            validate(&big, &[&lr], v).as_deref(),
            Some(
                "[minimum cpu usage per Container is 50m, but request is 10m, maximum memory usage per Container is 1Gi, but limit is 2Gi, maximum cpu usage per Container is 500m, but limit is 1]"
            )
        );
        let bare = pod(json!([{"name": "a"}]));
        let only_max = range(json!([{"type": "Container", "max": {"memory": "1Gi"}}]));
        assert_eq!(
            validate(&bare, &[&only_max], v).as_deref(),
            Some("maximum memory usage per Container is 1Gi.  No limit is specified")
        );
        let only_min = range(json!([{"type": "Container", "min": {"memory": "64Mi"}}]));
        assert_eq!(
            validate(&bare, &[&only_min], v).as_deref(),
            Some("minimum memory usage per Container is 64Mi.  No request is specified")
        );
        let ratio = range(json!([{"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}}]));
        let wide = pod(
            json!([{"name": "a", "resources": {"limits": {"cpu": "2"}, "requests": {"cpu": "500m"}}}]),
        );
        assert_eq!(
            validate(&wide, &[&ratio], v).as_deref(),
            Some(
                "cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000"
            )
        );
        let unset = pod(json!([{"name": "a", "resources": {"limits": {"cpu": "2"}}}]));
        assert_eq!(
            validate(&unset, &[&ratio], v).as_deref(),
            Some(
                "cpu max limit to request ratio per Container is 2, but no request is specified or request is 0"
            )
        );
        let narrow = pod(
            json!([{"name": "a", "resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "500m"}}}]),
        );
        assert_eq!(validate(&narrow, &[&ratio], v), None);
    }

    #[test]
    fn pod_items_count_sidecars_from_1_28() {
        let lr = range(json!([{"type": "Pod", "max": {"memory": "1Gi"}}]));
        let spec = json!({"spec": {
            "containers": [
                {"name": "app", "resources": {"limits": {"memory": "768Mi"}}},
                {"name": "b", "resources": {"requests": {"memory": "10Mi"}}}
            ],
            "initContainers": [{"name": "proxy", "restartPolicy": "Always", "resources": {"limits": {"memory": "512Mi"}}}]
        }});
        assert_eq!(
            validate(&spec, &[&lr], KubeVersion::new(1, 29)).as_deref(),
            Some("maximum memory usage per Pod is 1Gi, but limit is 1280Mi")
        );
        // Before 1.28 a limit not set by every app container left the pod total without one.
        let partial = json!({"spec": {"containers": [
            {"name": "app", "resources": {"limits": {"memory": "768Mi"}}},
            {"name": "b"}
        ]}});
        assert_eq!(
            validate(&partial, &[&lr], KubeVersion::new(1, 24)).as_deref(),
            Some("maximum memory usage per Pod is 1Gi.  No limit is specified")
        );
        assert_eq!(validate(&partial, &[&lr], KubeVersion::new(1, 28)), None);
    }

    #[test]
    fn the_first_range_with_errors_decides() {
        let a = range(json!([{"type": "Container", "max": {"cpu": "1"}}]));
        let b = range(json!([{"type": "Container", "max": {"memory": "1Gi"}}]));
        let p = pod(json!([{"name": "a", "resources": {"limits": {"cpu": "2"}}}]));
        assert_eq!(
            validate(&p, &[&a, &b], KubeVersion::new(1, 30)).as_deref(),
            Some("maximum cpu usage per Container is 1, but limit is 2")
        );
    }
}

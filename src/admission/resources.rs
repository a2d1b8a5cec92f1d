//! A container's and a pod's compute resources as the apiserver reads them.

use serde_json::{Map, Value};

use super::quantity::Quantity;
use crate::cluster::KubeVersion;
use crate::json::Field;

/// Resource name → quantity, in the order written.
pub type ResourceList = Vec<(String, Quantity)>;

/// `resources.<section>` of a container (`requests` or `limits`); entries
/// that are not quantities are left out.
pub fn container_list(container: &Value, section: &str) -> ResourceList {
    container
        .field("resources")
        .and_then(|r| r.field(section))
        .and_then(Value::as_object)
        .map(list_of)
        .unwrap_or_default()
}

/// The quantities of a `{name: quantity}` map.
pub fn list_of(map: &Map<String, Value>) -> ResourceList {
    map.iter()
        .filter_map(|(k, v)| Quantity::from_value(v).map(|q| (k.clone(), q)))
        .collect()
}

pub fn get<'a>(list: &'a ResourceList, name: &str) -> Option<&'a Quantity> {
    list.iter().find(|(k, _)| k == name).map(|(_, q)| q)
}

fn add_into(total: &mut ResourceList, list: &ResourceList) {
    for (name, quantity) in list {
        match total.iter_mut().find(|(k, _)| k == name) {
            Some((_, sum)) => *sum = sum.add(quantity),
            None => total.push((name.clone(), *quantity)),
        }
    }
}

fn max_into(total: &mut ResourceList, list: &ResourceList) {
    for (name, quantity) in list {
        match total.iter_mut().find(|(k, _)| k == name) {
            Some((_, max)) if quantity > max => *max = *quantity,
            Some(_) => {}
            None => total.push((name.clone(), *quantity)),
        }
    }
}

/// Whether an init container is a native sidecar (`restartPolicy: Always`).
pub fn is_sidecar(container: &Value) -> bool {
    container.field("restartPolicy").and_then(Value::as_str) == Some("Always")
}

/// The pod's total of `section`, the way the scheduler, quota and (from
/// 1.28) LimitRanger count it: the app containers summed, native sidecars
/// added to that sum, and each other init container counted with the
/// sidecars started before it; the pod needs the largest of these. A
/// resource is in the total when any container sets it.
pub fn pod_total(spec: &Value, section: &str) -> ResourceList {
    let mut total = ResourceList::new();
    for container in list(spec, "containers") {
        add_into(&mut total, &container_list(container, section));
    }
    // Sidecars run beside the app containers; an init container runs beside the
    // sidecars started before it.
    let mut sidecars = ResourceList::new();
    let mut init_peak = ResourceList::new();
    for container in list(spec, "initContainers") {
        let own = container_list(container, section);
        let in_use = if is_sidecar(container) {
            add_into(&mut total, &own);
            add_into(&mut sidecars, &own);
            sidecars.clone()
        } else {
            let mut with_sidecars = own;
            add_into(&mut with_sidecars, &sidecars);
            with_sidecars
        };
        max_into(&mut init_peak, &in_use);
    }
    max_into(&mut total, &init_peak);
    with_pod_level(total, spec, section)
}

fn with_pod_level(mut total: ResourceList, spec: &Value, section: &str) -> ResourceList {
    for (name, quantity) in pod_level(spec, section) {
        match total.iter_mut().find(|(k, _)| *k == name) {
            Some((_, value)) => *value = quantity,
            None => total.push((name, quantity)),
        }
    }
    total
}

/// The pod's total as LimitRanger counted it before 1.28: a resource of the
/// app containers counts only when every one of them sets it (the sum then
/// printed as a plain decimal number), and each init container is compared
/// on its own.
pub fn pod_total_before_1_28(spec: &Value, section: &str) -> ResourceList {
    let containers: Vec<ResourceList> = list(spec, "containers")
        .map(|c| container_list(c, section))
        .collect();
    let mut total = ResourceList::new();
    for (name, _) in containers.iter().flatten() {
        if total.iter().any(|(k, _)| k == name) {
            continue;
        }
        let values: Option<Vec<&Quantity>> = containers.iter().map(|c| get(c, name)).collect();
        if let Some(values) = values {
            let mut sum = Quantity::zero();
            for value in values {
                sum = sum.add(value);
            }
            sum.format = super::quantity::Format::DecimalSI;
            total.push((name.clone(), sum));
        }
    }
    for container in list(spec, "initContainers") {
        max_into(&mut total, &container_list(container, section));
    }
    total
}

/// The pod total LimitRanger's `type: Pod` items check on `version`.
pub fn limit_ranger_pod_total(spec: &Value, section: &str, version: KubeVersion) -> ResourceList {
    if version.knows_container_restart_policy() {
        pod_total(spec, section)
    } else {
        pod_total_before_1_28(spec, section)
    }
}

/// The pod-level `spec.resources.<section>` cpu and memory, which stand for
/// the containers' total when set (PodLevelResources, on from 1.34; the
/// field is dropped before, so its presence says the feature is on).
pub fn pod_level(spec: &Value, section: &str) -> ResourceList {
    container_list(spec, section)
        .into_iter()
        .filter(|(name, _)| name == "cpu" || name == "memory")
        .collect()
}

/// Whether the pod sets pod-level cpu or memory.
pub fn has_pod_level(spec: &Value) -> bool {
    !pod_level(spec, "requests").is_empty() || !pod_level(spec, "limits").is_empty()
}

/// The entries of a container list of the pod spec.
pub fn list<'a>(spec: &'a Value, name: &str) -> impl Iterator<Item = &'a Value> {
    spec.field(name)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| c.is_object())
}

/// Whether the pod's QoS class is BestEffort: no container sets a cpu or
/// memory request or limit.
pub fn is_best_effort(spec: &Value) -> bool {
    list(spec, "containers")
        .chain(list(spec, "initContainers"))
        .all(|c| {
            ["requests", "limits"].iter().all(|section| {
                container_list(c, section)
                    .iter()
                    .all(|(k, q)| !(k == "cpu" || k == "memory") || q.is_zero())
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn show(list: &ResourceList) -> String {
        list.iter()
            .map(|(k, q)| format!("{k}={q}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    #[test]
    fn pod_totals_count_sidecars_the_new_way() {
        let spec = json!({
            "containers": [
                {"name": "app", "resources": {"limits": {"memory": "256Mi", "cpu": "1"}}},
                {"name": "b", "resources": {"limits": {"memory": "256Mi"}}}
            ],
            "initContainers": [
                {"name": "init", "resources": {"limits": {"memory": "1Gi"}}},
                {"name": "proxy", "restartPolicy": "Always", "resources": {"limits": {"memory": "128Mi"}}},
                {"name": "late", "resources": {"limits": {"memory": "600Mi"}}}
            ]
        });
        // max(512Mi + 128Mi, 1Gi, 128Mi + 600Mi)
        assert_eq!(show(&pod_total(&spec, "limits")), "memory=1Gi,cpu=1");
        let spec_late = json!({
            "containers": [{"resources": {"limits": {"memory": "100Mi"}}}],
            "initContainers": [
                {"restartPolicy": "Always", "resources": {"limits": {"memory": "128Mi"}}},
                {"resources": {"limits": {"memory": "600Mi"}}}
            ]
        });
        assert_eq!(show(&pod_total(&spec_late, "limits")), "memory=728Mi");
        // Before 1.28: cpu is not set by every app container, the sum is printed as a decimal.
        assert_eq!(show(&pod_total_before_1_28(&spec, "limits")), "memory=1Gi");
        let small = json!({"containers": [
            {"resources": {"limits": {"memory": "256Mi"}}},
            {"resources": {"limits": {"memory": "256Mi"}}}]});
        assert_eq!(show(&pod_total(&small, "limits")), "memory=512Mi");
        assert_eq!(
            show(&pod_total_before_1_28(&small, "limits")),
            "memory=536870912"
        );
    }

    #[test]
    fn best_effort_means_no_cpu_or_memory_anywhere() {
        assert!(is_best_effort(&json!({"containers": [{"name": "a"}]})));
        assert!(!is_best_effort(&json!({"containers": [{"name": "a"}],
            "initContainers": [{"resources": {"requests": {"cpu": "10m"}}}]})));
    }
}

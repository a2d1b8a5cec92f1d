//! What Istio's injector writes of the containers and volumes its templates
//! render: it reads them into Kubernetes' typed pod and writes that back, so
//! that what Go's JSON encoding leaves out (`omitempty` fields at their zero
//! value, nulls) is gone and quantities are in canonical form.

use serde_json::Value;

use crate::admission::quantity::Quantity;

/// Fields that are plain numbers with `omitempty` in `k8s.io/api/core/v1`
/// (not pointers): Go leaves them out at 0. The probe timings and a port's
/// host port are the ones injection templates write.
const NUMBERS_OMITTED_AT_ZERO: [&str; 6] = [
    "initialDelaySeconds",
    "timeoutSeconds",
    "periodSeconds",
    "successThreshold",
    "failureThreshold",
    "hostPort",
];

/// Fields that are plain booleans with `omitempty` (a pointer's `false` is
/// kept: `privileged: false` stays).
const BOOLS_OMITTED_WHEN_FALSE: [&str; 4] = ["readOnly", "stdin", "stdinOnce", "tty"];

/// `value` (a container, a volume) as Go writes it back from the typed pod:
/// nulls, empty strings, empty lists, and the fields above at their zero left
/// out; resource quantities canonical (`2000m` is `2`, `1024Mi` is `1Gi`).
pub fn as_go_writes(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|key, v| go_writes_entry(key, v));
            for (key, child) in map.iter_mut() {
                if holds_quantities(key) {
                    canonical_quantities(child);
                }
                as_go_writes(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(as_go_writes),
        _ => {}
    }
}

/// Whether Go writes the entry `key: value` of a container or volume (or of
/// a mapping inside one) back.
pub fn go_writes_entry(key: &str, value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::String(s) => !s.is_empty(),
        Value::Array(items) => !items.is_empty(),
        Value::Bool(false) => !BOOLS_OMITTED_WHEN_FALSE.contains(&key),
        Value::Number(n) => !(n.as_f64() == Some(0.0) && NUMBERS_OMITTED_AT_ZERO.contains(&key)),
        _ => true,
    }
}

/// Whether the entry `key` of a container (or of a mapping inside one)
/// holds resource quantities.
pub fn holds_quantities(key: &str) -> bool {
    matches!(key, "limits" | "requests")
}

/// Whether Go writes `quantity` (an entry of `limits` or `requests`) back as
/// it is: a quantity in canonical form, or text that is none.
pub fn quantity_written_as_is(quantity: &Value) -> bool {
    match quantity {
        Value::String(s) => Quantity::parse(s.trim()).is_none_or(|q| q.to_string() == *s),
        Value::Number(_) => false,
        _ => true,
    }
}

/// Quantities (a resources' `limits` or `requests`) in canonical form.
pub fn canonical_quantities(quantities: &mut Value) {
    let Value::Object(map) = quantities else {
        return;
    };
    for quantity in map.values_mut() {
        let text = match quantity {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            _ => continue,
        };
        if let Some(parsed) = Quantity::parse(text.trim()) {
            *quantity = Value::String(parsed.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn zero_values_go_leaves_out_are_left_out() {
        let mut container = json!({
            "name": "istio-proxy",
            "env": [{"name": "A", "value": ""}],
            "args": [],
            "readinessProbe": {"periodSeconds": 0, "failureThreshold": 4},
            "securityContext": {"privileged": false, "runAsGroup": 0},
            "volumeMounts": [{"name": "v", "mountPath": "/v", "readOnly": false}],
            "resources": {"limits": {"cpu": "2000m", "memory": "1024Mi"}, "requests": {"cpu": 1}},
            "lifecycle": null,
        });
        as_go_writes(&mut container);
        assert_eq!(
            container,
            json!({
                "name": "istio-proxy",
                "env": [{"name": "A"}],
                "readinessProbe": {"failureThreshold": 4},
                "securityContext": {"privileged": false, "runAsGroup": 0},
                "volumeMounts": [{"name": "v", "mountPath": "/v"}],
                "resources": {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "1"}},
            })
        );
    }
}

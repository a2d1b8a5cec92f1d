//! The Helm values Linkerd's chart partials render a workload's sidecar
//! with, as Linkerd's webhook builds them (`pkg/inject/inject.go`:
//! `GetOverriddenValues`, `GetPodPatch`): the chart's defaults, the
//! cluster's values (`linkerd-config`), then the workload's own settings
//! (its `config.linkerd.io/*` annotations and the flags) at their Helm
//! paths, and what the webhook works out for the pod itself.
//!
//! Which tool value stands at which Helm path is the profile's
//! `valuesFromObjects` (the same table that reads `linkerd-config`); the few
//! values written otherwise are [`IN_CODE`].

use serde_json::{Map, Value};

use super::close_wait_seconds;
use crate::mesh::text_of;

/// Tool values written at their Helm paths by code rather than by the
/// table, each with why.
pub const IN_CODE: &[(&str, &str)] = &[
    (
        "trustAnchorsPEM",
        "identityTrustAnchorsPEM, whatever set them",
    ),
    ("proxyGID", "proxy.gid, -1 for none"),
    (
        "closeWaitTimeout",
        "proxyInit.closeWaitTimeoutSecs, in seconds",
    ),
    ("proxyPosition", "proxy.await"),
    (
        "nativeSidecar",
        "proxy.nativeSidecar, as the tool decided it",
    ),
    (
        "waitBeforeExitSeconds",
        "the tool's own preStop wait (see docs/usage.md, The rules)",
    ),
    ("enableDebugSidecar", "whether partials.debug is rendered"),
    ("controlPlaneNamespace", ".Release.Namespace"),
];

/// What the values are built from for one workload.
pub struct Workload<'a> {
    /// The tool's values for the workload, completed.
    pub values: &'a Map<String, Value>,
    /// Whether the workload's annotations (or its namespace's) or the flags
    /// set a value.
    pub set: &'a dyn Fn(&str) -> bool,
    /// The profile's own values: their types, where the chart gives a path
    /// no default.
    pub defaults: &'a Map<String, Value>,
    /// Each tool value's Helm path (the profile's `valuesFromObjects` for
    /// `linkerd-config`, the last for a value winning as when reading).
    pub paths: &'a [(String, String)],
    /// The ports the pod's containers expose or probe (`proxy.podInboundPorts`).
    pub pod_inbound_ports: &'a str,
    /// Whether the proxy runs as a native sidecar.
    pub native: bool,
}

/// The Helm values: `chart` (its `values.yaml`), `cluster`'s values
/// (`linkerd-config`) merged over them, then the workload's.
pub fn helm_values(chart: &Value, cluster: Option<&Value>, workload: &Workload<'_>) -> Value {
    let mut helm = chart.clone();
    if let Some(cluster) = cluster {
        coalesce(&mut helm, cluster);
    }
    let values = workload.values;
    for (name, path) in workload.paths {
        if !(workload.set)(name) || IN_CODE.iter().any(|(n, _)| n == name) {
            continue;
        }
        let Some(value) = values.get(name) else {
            continue;
        };
        let like = at(&helm, path).or_else(|| workload.defaults.get(name));
        let typed = typed_like(value, like);
        set(&mut helm, path, typed);
    }
    let text = |name: &str| text_of(values, name);
    set(
        &mut helm,
        "identityTrustAnchorsPEM",
        Value::String(text("trustAnchorsPEM")),
    );
    if (workload.set)("proxyGID") {
        let gid = text("proxyGID").trim().parse::<i64>().unwrap_or(-1);
        set(&mut helm, "proxy.gid", Value::from(gid));
    }
    if (workload.set)("closeWaitTimeout") {
        let seconds = close_wait_seconds(&text("closeWaitTimeout")).unwrap_or(0);
        set(
            &mut helm,
            "proxyInit.closeWaitTimeoutSecs",
            Value::from(seconds),
        );
    }
    // Linkerd's webhook sizes the proxy's workers from a CPU request and
    // limit the workload sets (besides writing them at their paths).
    let cores = |name: &str| Value::from(text(name).trim().parse::<u64>().unwrap_or(0));
    if (workload.set)("proxyCPURequest") {
        set(
            &mut helm,
            "proxy.runtime.workers.minimum",
            cores("proxyCoresMin"),
        );
    }
    if (workload.set)("proxyCPULimit") {
        set(
            &mut helm,
            "proxy.runtime.workers.maximum",
            cores("proxyCoresMax"),
        );
    }
    if (workload.set)("proxyPosition") {
        let awaits = values
            .get("proxyAwait")
            .cloned()
            .unwrap_or(Value::Bool(true));
        set(&mut helm, "proxy.await", awaits);
    }
    set(
        &mut helm,
        "proxy.nativeSidecar",
        Value::Bool(workload.native),
    );
    // The tool adds the wait itself, with the grace period it needs.
    set(&mut helm, "proxy.waitBeforeExitSeconds", Value::from(0));
    set(
        &mut helm,
        "proxy.podInboundPorts",
        Value::String(workload.pod_inbound_ports.to_string()),
    );
    helm
}

/// The Helm paths of the tool's values, from the profile's sources: those
/// of the ConfigMap `config_map`'s key `key` with a path, the last one for
/// a value winning.
pub fn helm_paths<'a>(
    sources: impl IntoIterator<Item = (&'a str, &'a str, &'a str, Option<&'a str>)>,
    config_map: &str,
    key: &str,
) -> Vec<(String, String)> {
    let mut paths: Vec<(String, String)> = Vec::new();
    for (value, name, source_key, path) in sources {
        let Some(path) = path.filter(|_| name == config_map && source_key == key) else {
            continue;
        };
        paths.retain(|(v, _)| v != value);
        paths.push((value.to_string(), path.to_string()));
    }
    paths
}

/// `value` with the type of `like` (the chart's default at its path, else
/// the profile's own): the tool's `"true"` is a bool where the chart has
/// one, `"4191"` a number (a float, as Helm reads its values).
fn typed_like(value: &Value, like: Option<&Value>) -> Value {
    let Value::String(text) = value else {
        return value.clone();
    };
    match like {
        Some(Value::Bool(_)) => match text.trim() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => value.clone(),
        },
        Some(Value::Number(_)) => match text.trim() {
            "" => Value::Null,
            trimmed => trimmed
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map_or_else(|| value.clone(), Value::Number),
        },
        _ => value.clone(),
    }
}

/// The value at a dotted `path`.
fn at<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.')
        .try_fold(value, |at, key| at.as_object()?.get(key))
        .filter(|v| !v.is_null())
}

/// Set the value at a dotted `path`, making the maps on the way.
fn set(value: &mut Value, path: &str, new: Value) {
    let mut at = value;
    let mut keys = path.split('.').peekable();
    while let Some(key) = keys.next() {
        if !at.is_object() {
            *at = Value::Object(Map::new());
        }
        let Value::Object(map) = at else {
            return;
        };
        if keys.peek().is_none() {
            map.insert(key.to_string(), new);
            return;
        }
        at = map
            .entry(key.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
}

/// Helm's coalescing of values: `over`'s maps merged into `base`'s key by
/// key, anything else replacing; a null in `over` removes the key.
fn coalesce(base: &mut Value, over: &Value) {
    match (base, over) {
        (Value::Object(base), Value::Object(over)) => {
            for (key, value) in over {
                if value.is_null() {
                    base.remove(key);
                    continue;
                }
                match base.get_mut(key) {
                    Some(existing) if existing.is_object() && value.is_object() => {
                        coalesce(existing, value);
                    }
                    _ => {
                        base.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (base, over) => *base = over.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn paths(entries: &[(&str, &str)]) -> Vec<(String, String)> {
        entries
            .iter()
            .map(|(v, p)| (v.to_string(), p.to_string()))
            .collect()
    }

    fn build(values: Value, set: &[&str], cluster: Option<Value>) -> Value {
        let chart = json!({"proxy": {"logLevel": "warn", "ports": {"admin": 4191},
            "inbound": {"server": {"http2": {"keepAliveInterval": "10s"}}}, "await": true,
            "gid": -1, "isIngress": false}, "proxyInit": {"closeWaitTimeoutSecs": 0}});
        let values = values.as_object().cloned().unwrap();
        let defaults = json!({"ingress": false}).as_object().cloned().unwrap();
        let paths = paths(&[
            ("logLevel", "proxy.logLevel"),
            ("adminPort", "proxy.ports.admin"),
            ("proxyInboundParams", "proxy.inbound"),
            ("ingress", "proxy.isIngress"),
            ("accessLog", "proxy.accessLog"),
        ]);
        let is_set = |name: &str| set.contains(&name);
        helm_values(
            &chart,
            cluster.as_ref(),
            &Workload {
                values: &values,
                set: &is_set,
                defaults: &defaults,
                paths: &paths,
                pod_inbound_ports: "80,8080",
                native: true,
            },
        )
    }

    #[test]
    fn the_cluster_merges_over_the_chart_and_the_workload_over_both() {
        let values = json!({"logLevel": "debug", "adminPort": "1234", "trustAnchorsPEM": "PEM\n",
            "proxyInboundParams": {"s": {"p": {"k": "v"}}}, "ingress": "true"});
        let cluster = json!({"proxy": {"logLevel": "info", "ports": {"inbound": 4143}}});
        let helm = build(
            values.clone(),
            &["adminPort", "proxyInboundParams", "ingress"],
            Some(cluster),
        );
        // Not set by the workload: the cluster's.
        assert_eq!(helm["proxy"]["logLevel"], "info");
        assert_eq!(
            helm["proxy"]["ports"],
            json!({"admin": 1234.0, "inbound": 4143})
        );
        // A map the workload sets replaces the chart's, as Linkerd's does.
        assert_eq!(helm["proxy"]["inbound"], json!({"s": {"p": {"k": "v"}}}));
        assert_eq!(helm["proxy"]["isIngress"], true);
        assert_eq!(helm["identityTrustAnchorsPEM"], "PEM\n");
        assert_eq!(helm["proxy"]["podInboundPorts"], "80,8080");
        assert_eq!(helm["proxy"]["nativeSidecar"], true);
        let helm = build(values, &["logLevel"], None);
        assert_eq!(helm["proxy"]["logLevel"], "debug");
        assert_eq!(helm["proxy"]["ports"]["admin"], 4191);
    }

    #[test]
    fn values_written_by_code_take_linkerds_forms() {
        let values = json!({"proxyGID": "", "closeWaitTimeout": "1m30s", "proxyCPURequest": "1500m",
            "proxyCoresMin": "2", "proxyCPULimit": "3", "proxyCoresMax": "3",
            "proxyPosition": "last", "proxyAwait": false});
        let set = [
            "proxyGID",
            "closeWaitTimeout",
            "proxyCPURequest",
            "proxyCPULimit",
            "proxyPosition",
        ];
        let helm = build(values, &set, None);
        assert_eq!(helm["proxy"]["gid"], -1);
        assert_eq!(helm["proxyInit"]["closeWaitTimeoutSecs"], 90);
        assert_eq!(
            helm["proxy"]["runtime"]["workers"],
            json!({"minimum": 2, "maximum": 3})
        );
        assert_eq!(helm["proxy"]["await"], false);
    }

    #[test]
    fn the_last_source_of_a_value_gives_its_path() {
        let sources = [
            (
                "proxyVersion",
                "linkerd-config",
                "values",
                Some("linkerdVersion"),
            ),
            (
                "proxyVersion",
                "linkerd-config",
                "values",
                Some("proxy.image.version"),
            ),
            (
                "trustAnchorsPEM",
                "linkerd-identity-trust-roots",
                "ca-bundle.crt",
                None,
            ),
        ];
        assert_eq!(
            helm_paths(sources, "linkerd-config", "values"),
            paths(&[("proxyVersion", "proxy.image.version")])
        );
    }

    #[test]
    fn coalescing_merges_maps_and_drops_nulls() {
        let mut base = json!({"a": {"b": 1, "c": 2}, "d": 3});
        coalesce(&mut base, &json!({"a": {"b": 5, "e": 6}, "d": null}));
        assert_eq!(base, json!({"a": {"b": 5, "c": 2, "e": 6}}));
    }
}

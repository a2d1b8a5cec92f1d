//! The app's probes and lifecycle hooks taken over by Istio's agent: each
//! becomes an HTTP GET on the agent's status port, the original kept in the
//! proxy's env for the agent to run (`applyRewrite` and the prober
//! conversion in Istio's `pkg/kube/inject`), and given back by uninject.

use serde_json::{Map, Value};

use super::{PROXY, go_json_string};
use crate::json::Field;

/// The proxy's env holding the app's own probes, which the agent runs.
pub const APP_PROBERS: &str = "ISTIO_KUBE_APP_PROBERS";

/// The annotation that turns the rewriting of app probes off (or on).
pub const REWRITE_ANNOTATION: &str = "sidecar.istio.io/rewriteAppHTTPProbers";

/// The app handlers the agent takes over: the field of the container, and
/// the start and end of the agent's path for it (`/app-health/C/readyz`).
const HANDLERS: [(&[&str], &str, &str); 5] = [
    (&["readinessProbe"], "/app-health/", "/readyz"),
    (&["livenessProbe"], "/app-health/", "/livez"),
    (&["startupProbe"], "/app-health/", "/startupz"),
    (&["lifecycle", "preStop"], "/app-lifecycle/", "/prestopz"),
    (
        &["lifecycle", "postStart"],
        "/app-lifecycle/",
        "/poststartz",
    ),
];

/// A change to the pod's spec; paths are relative to it.
#[derive(Debug, Clone, PartialEq)]
pub enum Edit {
    /// Set a member (added, or replaced where it is).
    Set(Vec<String>, Value),
    Remove(Vec<String>),
}

/// What rewriting the app's probes does to a pod.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AppProbes {
    pub edits: Vec<Edit>,
    /// `ISTIO_KUBE_APP_PROBERS`: the original probes, as Istio serialises
    /// them; empty when no probe was rewritten.
    pub probers: String,
    /// The rewritten handlers whose port was a name, as
    /// `container:field:name` (the env holds its number): for uninject.
    pub named_ports: Vec<String>,
}

/// Whether Istio's injector rewrites the app's probes: the pod's
/// annotation when it reads as a Go boolean, else `value` (the cluster's
/// `sidecarInjectorWebhook.rewriteAppHTTPProbe`).
pub fn rewrites_probes(annotations: Option<&Map<String, Value>>, value: bool) -> bool {
    match annotations
        .and_then(|a| a.get(REWRITE_ANNOTATION))
        .and_then(Value::as_str)
    {
        Some("1" | "t" | "T" | "TRUE" | "true" | "True") => true,
        Some("0" | "f" | "F" | "FALSE" | "false" | "False") => false,
        _ => value,
    }
}

/// The app's HTTP, TCP and gRPC probes and HTTP and TCP lifecycle hooks
/// (init containers first, as Istio walks them), made HTTP GETs on the
/// agent's `status_port` at `/app-health/C/readyz` (`livez`, `startupz`,
/// `/app-lifecycle/C/prestopz`, `poststartz`): an HTTP one keeps its host,
/// headers and the rest, its scheme HTTP (the agent speaks HTTPS to the
/// app itself); a TCP or gRPC one becomes a GET with only the path and port.
/// The originals go into [`AppProbes::probers`], a named port resolved to
/// the container's port number. A handler Istio would not record (a port
/// name the container does not have, a port that is the status port's
/// already) is left as it is, so that every rewritten one can be restored.
pub fn app_probes(spec: &Value, status_port: u16) -> AppProbes {
    let mut out = AppProbes::default();
    let mut probers: Vec<(String, String)> = Vec::new();
    for list in ["initContainers", "containers"] {
        let Some(containers) = spec.field(list).and_then(Value::as_array) else {
            continue;
        };
        for (index, container) in containers.iter().enumerate() {
            let Some(name) = container.field("name").and_then(Value::as_str) else {
                continue;
            };
            if name == PROXY {
                continue;
            }
            let port_named = |wanted: &str| {
                container
                    .field("ports")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter(|p| p.field("name").and_then(Value::as_str) == Some(wanted))
                    .find_map(|p| p.field("containerPort").and_then(Value::as_i64))
            };
            for (field, start, end) in HANDLERS {
                let is_probe = field.len() == 1;
                let Some(handler) = field
                    .iter()
                    .try_fold(container, |at, key| at.field(key))
                    .filter(|h| h.is_object())
                else {
                    continue;
                };
                let kinds: &[&str] = if is_probe {
                    &["httpGet", "tcpSocket", "grpc"]
                } else {
                    &["httpGet", "tcpSocket"]
                };
                let Some((kind, action)) = kinds
                    .iter()
                    .find_map(|k| handler.field(k).filter(|a| a.is_object()).map(|a| (*k, a)))
                else {
                    continue;
                };
                let mut original = action.clone();
                let mut named = None;
                if kind != "grpc" {
                    match action.field("port") {
                        Some(Value::String(port)) => {
                            let Some(number) = port_named(port) else {
                                continue;
                            };
                            named = Some(port.clone());
                            set_port(&mut original, Value::from(number));
                        }
                        Some(Value::Number(n)) if n.as_i64() == Some(i64::from(status_port)) => {
                            continue;
                        }
                        _ => {}
                    }
                }
                let url = format!("{start}{name}{end}");
                let mut at: Vec<String> = vec![list.into(), index.to_string()];
                at.extend(field.iter().map(|f| f.to_string()));
                let child = |key: &[&str]| {
                    let mut path = at.clone();
                    path.extend(key.iter().map(|k| k.to_string()));
                    path
                };
                let port = Value::from(status_port);
                if kind == "httpGet" {
                    out.edits.push(Edit::Set(child(&["httpGet", "port"]), port));
                    out.edits.push(Edit::Set(
                        child(&["httpGet", "path"]),
                        Value::String(url.clone()),
                    ));
                    if action.field("scheme").and_then(Value::as_str) == Some("HTTPS") {
                        out.edits.push(Edit::Set(
                            child(&["httpGet", "scheme"]),
                            Value::from("HTTP"),
                        ));
                    }
                } else {
                    out.edits.push(Edit::Remove(child(&[kind])));
                    let mut get = Map::new();
                    get.insert("path".into(), Value::String(url.clone()));
                    get.insert("port".into(), port);
                    out.edits
                        .push(Edit::Set(child(&["httpGet"]), Value::Object(get)));
                }
                if let Some(port) = named {
                    out.named_ports.push(format!(
                        "{name}:{}:{port}",
                        field.last().copied().unwrap_or_default()
                    ));
                }
                let timeout = if is_probe {
                    handler
                        .field("timeoutSeconds")
                        .and_then(Value::as_i64)
                        .unwrap_or(0)
                } else {
                    0
                };
                probers.push((url, prober_json(kind, &original, timeout)));
            }
        }
    }
    if !probers.is_empty() {
        probers.sort();
        let mut json = String::from("{");
        for (i, (url, prober)) in probers.iter().enumerate() {
            if i > 0 {
                json.push(',');
            }
            go_json_string(&mut json, url);
            json.push(':');
            json.push_str(prober);
        }
        json.push('}');
        out.probers = json;
    }
    out
}

/// The edits that give back the app's handlers the agent took over, from
/// the proxy's `ISTIO_KUBE_APP_PROBERS` (`probers`) and the record of the
/// port names (`named_ports`, see [`AppProbes::named_ports`]): each
/// handler that is the agent's GET for its container gets its original.
/// Where the record kept a handler's action as it was written (`kept`:
/// container, field, the action's entry as a mapping of one key), of the
/// kind the env names, that is the original: fields Istio's env does not
/// carry come back too.
pub fn restore_app_probes(
    spec: &Value,
    probers: &str,
    named_ports: &[String],
    kept: &[(String, String, Value)],
) -> Vec<Edit> {
    let Ok(Value::Object(probers)) = serde_json::from_str::<Value>(probers) else {
        return Vec::new();
    };
    let mut edits = Vec::new();
    for list in ["initContainers", "containers"] {
        let Some(containers) = spec.field(list).and_then(Value::as_array) else {
            continue;
        };
        for (index, container) in containers.iter().enumerate() {
            let Some(name) = container.field("name").and_then(Value::as_str) else {
                continue;
            };
            for (field, start, end) in HANDLERS {
                let url = format!("{start}{name}{end}");
                let Some(prober) = probers.get(&url) else {
                    continue;
                };
                let Some(get) = field
                    .iter()
                    .try_fold(container, |at, key| at.field(key))
                    .and_then(|h| h.field("httpGet"))
                    .filter(|g| g.field("path").and_then(Value::as_str) == Some(&url))
                else {
                    continue;
                };
                let Some((kind, original)) = ["httpGet", "tcpSocket", "grpc"]
                    .iter()
                    .find_map(|k| prober.field(k).filter(|a| a.is_object()).map(|a| (*k, a)))
                else {
                    continue;
                };
                let mut original = original.clone();
                let last = field.last().copied().unwrap_or_default();
                let recorded = format!("{name}:{last}:");
                if let Some(port) = named_ports.iter().find_map(|e| e.strip_prefix(&recorded)) {
                    set_port(&mut original, Value::String(port.to_string()));
                }
                if let Some(map) = original.as_object_mut() {
                    map.retain(|_, v| !v.is_null());
                }
                let written = kept
                    .iter()
                    .filter(|(c, f, _)| c == name && f == last)
                    .find_map(|(_, _, entry)| entry.field(kind));
                if let Some(written) = written.filter(|_| kind != "httpGet") {
                    original = written.clone();
                }
                let mut at: Vec<String> = vec![list.into(), index.to_string()];
                at.extend(field.iter().map(|f| f.to_string()));
                let child = |key: &[&str]| {
                    let mut path = at.clone();
                    path.extend(key.iter().map(|k| k.to_string()));
                    path
                };
                if kind == "httpGet" {
                    for key in ["port", "path", "scheme"] {
                        let path = child(&["httpGet", key]);
                        match (original.field(key), get.field(key)) {
                            (Some(want), Some(got)) if want == got => {}
                            (Some(want), _) => edits.push(Edit::Set(path, want.clone())),
                            (None, Some(_)) => edits.push(Edit::Remove(path)),
                            (None, None) => {}
                        }
                    }
                } else {
                    edits.push(Edit::Remove(child(&["httpGet"])));
                    edits.push(Edit::Set(child(&[kind]), original));
                }
            }
        }
    }
    edits
}

fn set_port(action: &mut Value, port: Value) {
    if let Some(map) = action.as_object_mut() {
        map.insert("port".into(), port);
    }
}

/// One prober as Istio serialises it: the action, then `timeoutSeconds`
/// when it is not 0.
fn prober_json(kind: &str, action: &Value, timeout: i64) -> String {
    let mut out = String::from("{");
    go_json_string(&mut out, kind);
    out.push(':');
    let fields: &[(&str, bool)] = match kind {
        "httpGet" => &[
            ("path", true),
            ("port", false),
            ("host", true),
            ("scheme", true),
            ("httpHeaders", true),
        ],
        "tcpSocket" => &[("port", false), ("host", true)],
        _ => &[("port", false), ("service", false)],
    };
    go_object(&mut out, action, fields);
    if timeout != 0 {
        out.push_str(&format!(",\"timeoutSeconds\":{timeout}"));
    }
    out.push('}');
    out
}

/// `value`'s `fields` in their order as Go writes a struct: those marked
/// `omit_empty` left out when empty, the others written null when absent.
fn go_object(out: &mut String, value: &Value, fields: &[(&str, bool)]) {
    out.push('{');
    let mut first = true;
    for (key, omit_empty) in fields {
        let field = value.field(key).unwrap_or(&Value::Null);
        let empty = match field {
            Value::Null => true,
            Value::String(s) => s.is_empty(),
            Value::Array(items) => items.is_empty(),
            _ => false,
        };
        if *omit_empty && empty {
            continue;
        }
        if !first {
            out.push(',');
        }
        first = false;
        go_json_string(out, key);
        out.push(':');
        go_json_value(out, field);
    }
    out.push('}');
}

/// A value as Go writes it; a header's fields in its struct's order.
fn go_json_value(out: &mut String, value: &Value) {
    match value {
        Value::String(s) => go_json_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_object(out, item, &[("name", false), ("value", false)]);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(containers: Value) -> Value {
        json!({"containers": containers})
    }

    #[test]
    fn app_probes_go_through_the_agent_as_istio_rewrites_them() {
        let pod = spec(json!([
            {"name": "hello", "ports": [{"name": "http", "containerPort": 80}],
             "livenessProbe": {"httpGet": {"port": "http"}, "periodSeconds": 5},
             "readinessProbe": {"httpGet": {"port": 3333, "scheme": "HTTPS", "path": "/ready",
                "httpHeaders": [{"name": "X", "value": "y"}]}, "timeoutSeconds": 2},
             "startupProbe": {"exec": {"command": ["true"]}},
             "lifecycle": {"preStop": {"httpGet": {"port": 91}}, "postStart": {"tcpSocket": {"port": 93}}}},
            {"name": "world", "livenessProbe": {"grpc": {"port": 9090}},
             "readinessProbe": {"tcpSocket": {"port": "missing"}}},
        ]));
        let probes = app_probes(&pod, 15020);
        assert_eq!(
            probes.probers,
            r#"{"/app-health/hello/livez":{"httpGet":{"port":80}},"/app-health/hello/readyz":{"httpGet":{"path":"/ready","port":3333,"scheme":"HTTPS","httpHeaders":[{"name":"X","value":"y"}]},"timeoutSeconds":2},"/app-health/world/livez":{"grpc":{"port":9090,"service":null}},"/app-lifecycle/hello/poststartz":{"tcpSocket":{"port":93}},"/app-lifecycle/hello/prestopz":{"httpGet":{"port":91}}}"#
        );
        assert_eq!(probes.named_ports, ["hello:livenessProbe:http"]);
        let mut rewritten = pod.clone();
        apply(&mut rewritten, &probes.edits);
        let hello = &rewritten["containers"][0];
        assert_eq!(
            hello["livenessProbe"],
            json!({"httpGet": {"port": 15020, "path": "/app-health/hello/livez"}, "periodSeconds": 5})
        );
        assert_eq!(
            hello["readinessProbe"]["httpGet"],
            json!({"port": 15020, "scheme": "HTTP", "path": "/app-health/hello/readyz",
                "httpHeaders": [{"name": "X", "value": "y"}]})
        );
        assert_eq!(
            hello["lifecycle"]["postStart"],
            json!({"httpGet": {"path": "/app-lifecycle/hello/poststartz", "port": 15020}})
        );
        assert_eq!(hello["startupProbe"], pod["containers"][0]["startupProbe"]);
        let world = &rewritten["containers"][1];
        assert_eq!(
            world["livenessProbe"],
            json!({"httpGet": {"path": "/app-health/world/livez", "port": 15020}})
        );
        // A port name the container does not have: left as it is.
        assert_eq!(
            world["readinessProbe"],
            pod["containers"][1]["readinessProbe"]
        );

        // Restored from the env and the record of named ports.
        let edits = restore_app_probes(&rewritten, &probes.probers, &probes.named_ports, &[]);
        let mut restored = rewritten.clone();
        apply(&mut restored, &edits);
        assert_eq!(restored, pod);
        // Rewriting the rewritten pod again changes nothing more.
        assert!(app_probes(&rewritten, 15020).edits.is_empty());
        assert_eq!(
            app_probes(&spec(json!([{"name": "a"}])), 15020),
            AppProbes::default()
        );
    }

    #[test]
    fn the_annotation_decides_as_a_go_boolean_else_the_value() {
        let says = |v: &str| json!({REWRITE_ANNOTATION: v}).as_object().cloned();
        assert!(!rewrites_probes(says("false").as_ref(), true));
        assert!(rewrites_probes(says("T").as_ref(), false));
        assert!(rewrites_probes(says("maybe").as_ref(), true));
        assert!(!rewrites_probes(None, false));
    }

    fn apply(spec: &mut Value, edits: &[Edit]) {
        let pointer = |path: &[String]| format!("/{}", path.join("/"));
        for edit in edits {
            let patch = match edit {
                Edit::Set(path, value) => {
                    json!([{"op": "add", "path": pointer(path), "value": value}])
                }
                Edit::Remove(path) => json!([{"op": "remove", "path": pointer(path)}]),
            };
            let patch: json_patch::Patch = serde_json::from_value(patch).expect("patch");
            json_patch::patch(spec, &patch).expect("applies");
        }
    }
}

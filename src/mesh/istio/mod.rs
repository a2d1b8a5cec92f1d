//! What Istio's injector derives (istio `pkg/kube/inject`: the sidecar
//! template's functions, `webhook.go` and `app_probe.go`).

use serde_json::{Map, Value};

pub mod injector;
mod metrics;
pub mod overlay;
mod probes;
pub mod template_data;
pub mod template_funcs;
pub mod typed;

pub use metrics::{MetricsMerge, PROMETHEUS_ENV, metrics_merge};
pub use probes::{
    APP_PROBERS, AppProbes, Edit, REWRITE_ANNOTATION, app_probes, restore_app_probes,
    rewrites_probes,
};

use super::{Injected, text_of};
use crate::admission::quantity::Quantity;
use crate::json::Field;

/// The values that hold the proxy's resource quantities.
const RESOURCES: [&str; 4] = [
    "proxyCPURequest",
    "proxyCPULimit",
    "proxyMemoryRequest",
    "proxyMemoryLimit",
];

/// The names [`complete`] derives.
pub const DERIVED: &[&str] = &[
    "iptablesArgs",
    "excludedInboundPorts",
    "readinessProbe",
    "startupProbe",
    "readinessInitialDelay",
    "capture",
    "captureUID",
    "captureGID",
    "proxyCapabilities",
    "proxyRunAsUser",
    "proxyRunAsGroup",
    "proxyRunAsNonRoot",
    "proxyMetadataEnv",
    "userVolumes",
    "userVolumeMounts",
    "metricsPort",
    "metricsPath",
    "metricsScrape",
    "localhostInbound",
    "fips",
];

/// ProxyConfig's fields in the order Istio's protobuf declares them, which
/// is the order of `PROXY_CONFIG`'s keys (others follow in their own order).
const PROXY_CONFIG_ORDER: &[&str] = &[
    "configPath",
    "binaryPath",
    "serviceCluster",
    "drainDuration",
    "parentShutdownDuration",
    "discoveryAddress",
    "discoveryRefreshDelay",
    "zipkinAddress",
    "statsdUdpAddress",
    "envoyMetricsServiceAddress",
    "proxyAdminPort",
    "availabilityZone",
    "controlPlaneAuthPolicy",
    "customConfigFile",
    "statNameLength",
    "concurrency",
    "proxyBootstrapTemplatePath",
    "interceptionMode",
    "tracing",
    "sds",
    "envoyAccessLogService",
    "envoyMetricsService",
    "proxyMetadata",
    "runtimeValues",
    "statusPort",
    "extraStatTags",
    "gatewayTopology",
    "terminationDrainDuration",
    "meshId",
    "readinessProbe",
    "proxyStatsMatcher",
    "holdApplicationUntilProxyStarts",
    "caCertificatesPem",
    "image",
    "privateKeyProvider",
    "proxyHeaders",
];

/// The inbound ports Istio's capture always leaves alone: Envoy's
/// Prometheus port and its readiness port.
const PROXY_INBOUND_PORTS: &str = "15090,15021";

/// Normalise Istio's values as its injector writes them and derive what
/// its template works out: the resource quantities in Kubernetes' canonical
/// form (`2000m` → `2`, `1024Mi` → `1Gi`), as they come out of the pod
/// Istio serialises; `excludedInboundPorts`, the excluded inbound ports with
/// the status port (see [`exclude_inbound_port`]); `iptablesArgs`, the
/// capture's arguments after its mode (see [`iptables_args`]); whether the
/// proxy has a `readinessProbe` and a `startupProbe` (not without a status
/// port, the latter not when `startupProbeEnabled` is false); and
/// `readinessInitialDelay`, empty for 0, which Go leaves out.
pub fn complete(values: &mut Map<String, Value>, annotated: &dyn Fn(&str) -> bool) {
    // A pod's resource annotations stand for all of the proxy's resources:
    // with one, the others it does not give are not set at all.
    if RESOURCES.iter().any(|name| annotated(name)) {
        for name in RESOURCES.iter().filter(|name| !annotated(name)) {
            values.insert(name.to_string(), Value::String(String::new()));
        }
    }
    for name in RESOURCES {
        if let Some(quantity) = Quantity::parse(text_of(values, name).trim()) {
            values.insert(name.to_string(), Value::String(quantity.to_string()));
        }
    }
    let excluded = exclude_inbound_port(
        &text_of(values, "statusPort"),
        &text_of(values, "excludeInboundPorts"),
    );
    let args = iptables_args(values, &excluded);
    // The proxy's probes, on the agent's status port: none without one.
    let status_port = text_of(values, "statusPort");
    let probes = !matches!(status_port.trim(), "" | "0");
    let startup = probes && text_of(values, "startupProbeEnabled") != "false";
    values.insert("readinessProbe".into(), Value::Bool(probes));
    values.insert("startupProbe".into(), Value::Bool(startup));
    // Go leaves a delay of 0 out.
    let delay = match values.get("readinessInitialDelaySeconds") {
        Some(Value::Number(n)) if n.as_u64() != Some(0) => Value::Number(n.clone()),
        _ => Value::String(String::new()),
    };
    values.insert("readinessInitialDelay".into(), delay);
    for (name, value) in interception(values) {
        values.insert(name.into(), value);
    }
    let config = proxy_config(
        &text_of(values, "proxyConfig"),
        &text_of(values, "podProxyConfig"),
    );
    if config.get("holdApplicationUntilProxyStarts") == Some(&Value::Bool(true)) {
        values.insert("proxyPosition".into(), Value::from("first"));
    }
    let env: Vec<Value> = config
        .get("proxyMetadata")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(name, value)| {
            let value = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            serde_json::json!({"name": name, "value": value})
        })
        .collect();
    values.insert(
        "proxyMetadataEnv".into(),
        if env.is_empty() {
            Value::String(String::new())
        } else {
            Value::Array(env)
        },
    );
    values.insert(
        "proxyConfig".into(),
        Value::String(Value::Object(config).to_string()),
    );
    // The mesh config's mode as Istio's injector passes it to its template
    // (lower case), and the compliance policy that asks Go for FIPS only.
    let localhost = text_of(values, "inboundTrafficPolicy").eq_ignore_ascii_case("localhost");
    values.insert("localhostInbound".into(), Value::Bool(localhost));
    let fips = text_of(values, "compliancePolicy") == "fips-140-3";
    values.insert("fips".into(), Value::Bool(fips));
    let merged = merges_metrics(
        &text_of(values, "mergeMetrics"),
        &text_of(values, "prometheusScrape"),
    );
    for (name, value) in [
        ("metricsPort", "15020"),
        ("metricsPath", "/stats/prometheus"),
        ("metricsScrape", "true"),
    ] {
        let value = if merged { value } else { "" };
        values.insert(name.into(), Value::from(value));
    }
    for (from, to) in [
        ("userVolume", "userVolumes"),
        ("userVolumeMount", "userVolumeMounts"),
    ] {
        let named = named_entries(&text_of(values, from));
        values.insert(
            to.into(),
            if named.is_empty() {
                Value::String(String::new())
            } else {
                Value::Array(named)
            },
        );
    }
    values.insert("excludedInboundPorts".into(), Value::String(excluded));
    values.insert(
        "iptablesArgs".into(),
        Value::Array(args.into_iter().map(Value::String).collect()),
    );
}

/// The proxy's settings as Istio's injector gives them in `PROXY_CONFIG`:
/// the mesh config's `defaultConfig` (`mesh`, JSON) with the pod's
/// `proxy.istio.io/config` (`pod`, YAML or JSON) merged over it as Istio
/// merges the two messages (a field the pod sets replaces the mesh's, a
/// map such as `proxyMetadata` is merged key by key), the keys in the order
/// of Istio's message and a map's keys sorted, as Go writes them. Text that
/// does not read as an object counts as none.
pub fn proxy_config(mesh: &str, pod: &str) -> Map<String, Value> {
    let read = |text: &str| -> Map<String, Value> {
        if text.trim().is_empty() {
            return Map::new();
        }
        crate::yaml::parse_stream(text)
            .ok()
            .and_then(|documents| documents.into_iter().next())
            .and_then(|document| document.root)
            .and_then(|root| crate::yaml::value::to_value(&root).ok())
            .and_then(|v| match v {
                Value::Object(map) => Some(map),
                _ => None,
            })
            .unwrap_or_default()
    };
    let mut merged = read(mesh);
    for (key, value) in read(pod) {
        match (merged.get_mut(&key), value) {
            (Some(Value::Object(old)), Value::Object(new)) if key != "tracing" => {
                old.extend(new);
            }
            (_, value) => {
                merged.insert(key, value);
            }
        }
    }
    let rank = |key: &str| {
        PROXY_CONFIG_ORDER
            .iter()
            .position(|k| *k == key)
            .unwrap_or(PROXY_CONFIG_ORDER.len())
    };
    let mut entries: Vec<(String, Value)> = merged.into_iter().collect();
    entries.sort_by_key(|(key, _)| rank(key));
    entries
        .into_iter()
        .map(|(key, value)| {
            let value = match value {
                Value::Object(map) if key == "proxyMetadata" => {
                    let mut sorted: Vec<(String, Value)> = map.into_iter().collect();
                    sorted.sort_by(|a, b| a.0.cmp(&b.0));
                    Value::Object(sorted.into_iter().collect())
                }
                other => other,
            };
            (key, value)
        })
        .collect()
}

/// A Go boolean (`strconv.ParseBool`), `None` for other text.
fn go_bool(text: &str) -> Option<bool> {
    match text {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// Whether Istio merges the app's metrics with the agent's, annotating the
/// pod for Prometheus to scrape the agent: with merging on (`merge`, the
/// mesh's `enablePrometheusMerge` or the pod's
/// `prometheus.istio.io/merge-metrics`; on unless it says false) and the
/// pod's `prometheus.io/scrape` (`scrape`) not false.
pub fn merges_metrics(merge: &str, scrape: &str) -> bool {
    go_bool(merge) != Some(false) && go_bool(scrape) != Some(false)
}

/// The annotation in which Istio's injector keeps the containers of the
/// pod's own that it merged its rendered ones into.
pub const OVERRIDES: &str = "proxy.istio.io/overrides";

/// The pod's annotation naming the templates of Istio's injector it asks for.
pub const TEMPLATES: &str = "inject.istio.io/templates";

/// The image a user-written proxy container names for "the injector's".
pub const AUTO_IMAGE: &str = "auto";

/// The pod's own container `user` as Istio overlays it on the container
/// its template rendered (`rendered`, of the same name), by Kubernetes'
/// strategic merge: the user's fields win; maps (resources, security
/// context, probes, lifecycle) are merged key by key; env, ports, mounts
/// and resize policies item by item (by name, port, mount path, resource;
/// the user's new items after the rendered ones); other lists (args,
/// command, capabilities) are the user's. An `image: auto` is the
/// rendered image. Quantities are written in canonical form, as Istio's
/// serialiser writes them.
pub fn merge_user_container(rendered: &Value, user: &Value) -> Value {
    let mut merged = rendered.clone();
    if let (Value::Object(out), Value::Object(overlay)) = (&mut merged, user) {
        for (key, value) in overlay {
            if key == "image" && value.as_str() == Some(AUTO_IMAGE) {
                continue;
            }
            let value = match out.get(key) {
                Some(base) => overlay::merged_field(key, base, value),
                None => value.clone(),
            };
            out.insert(key.clone(), value);
        }
    }
    canonical_resources(&mut merged);
    merged
}

/// The container's resource quantities in canonical form.
fn canonical_resources(container: &mut Value) {
    if let Some(Value::Object(resources)) = container.field_mut("resources") {
        for list in ["limits", "requests"] {
            if let Some(quantities) = resources.get_mut(list) {
                typed::canonical_quantities(quantities);
            }
        }
    }
}

/// The fields of Kubernetes' objects in a container, in the order of Go's
/// structs, by the key they are found under (`*` for the container).
const GO_FIELDS: &[(&str, &[&str])] = &[
    (
        "*",
        &[
            "name",
            "image",
            "command",
            "args",
            "workingDir",
            "ports",
            "envFrom",
            "env",
            "resources",
            "resizePolicy",
            "restartPolicy",
            "volumeMounts",
            "volumeDevices",
            "livenessProbe",
            "readinessProbe",
            "startupProbe",
            "lifecycle",
            "terminationMessagePath",
            "terminationMessagePolicy",
            "imagePullPolicy",
            "securityContext",
            "stdin",
            "stdinOnce",
            "tty",
        ],
    ),
    (
        "ports",
        &["name", "hostPort", "containerPort", "protocol", "hostIP"],
    ),
    ("env", &["name", "value", "valueFrom"]),
    ("resources", &["limits", "requests", "claims"]),
    (
        "volumeMounts",
        &[
            "name",
            "readOnly",
            "recursiveReadOnly",
            "mountPath",
            "subPath",
            "mountPropagation",
            "subPathExpr",
        ],
    ),
    (
        "probe",
        &[
            "exec",
            "httpGet",
            "tcpSocket",
            "grpc",
            "initialDelaySeconds",
            "timeoutSeconds",
            "periodSeconds",
            "successThreshold",
            "failureThreshold",
            "terminationGracePeriodSeconds",
        ],
    ),
    (
        "httpGet",
        &["path", "port", "host", "scheme", "httpHeaders"],
    ),
    ("lifecycle", &["postStart", "preStop", "stopSignal"]),
    ("handler", &["exec", "httpGet", "tcpSocket", "sleep"]),
    (
        "securityContext",
        &[
            "capabilities",
            "privileged",
            "seLinuxOptions",
            "windowsOptions",
            "runAsUser",
            "runAsGroup",
            "runAsNonRoot",
            "readOnlyRootFilesystem",
            "allowPrivilegeEscalation",
            "procMount",
            "seccompProfile",
            "appArmorProfile",
        ],
    ),
    ("capabilities", &["add", "drop"]),
];

/// The container `container` as Go's `encoding/json` writes Kubernetes'
/// Container: fields in the struct's order (others after, in their own),
/// empty ones left out but `resources`, which is always written.
pub fn go_container_json(container: &Value) -> String {
    let mut out = String::new();
    go_typed(&mut out, container, "*");
    out
}

/// `value` (found under `kind`, see [`GO_FIELDS`]) written as Go writes it.
fn go_typed(out: &mut String, value: &Value, kind: &str) {
    match value {
        Value::Object(map) if kind == "*" && !map.contains_key("resources") => {
            // Go writes a container's resources even when empty.
            let mut with = map.clone();
            with.insert("resources".into(), Value::Object(Map::new()));
            go_typed(out, &Value::Object(with), kind);
        }
        Value::Object(map) => {
            let order = GO_FIELDS
                .iter()
                .find(|(k, _)| *k == kind)
                .map_or(&[][..], |(_, fields)| *fields);
            let mut keys: Vec<&String> = map.keys().collect();
            let rank = |key: &str| order.iter().position(|k| *k == key).unwrap_or(order.len());
            if order.is_empty() {
                // A map of Go's (limits, requests): its keys sorted.
                keys.sort();
            } else {
                keys.sort_by_key(|k| rank(k));
            }
            out.push('{');
            let mut first = true;
            for key in keys {
                let field = &map[key.as_str()];
                let empty = match field {
                    Value::Null => true,
                    Value::Array(items) => items.is_empty(),
                    Value::Object(m) => m.is_empty() && !(kind == "*" && key == "resources"),
                    _ => false,
                };
                if empty {
                    continue;
                }
                if !first {
                    out.push(',');
                }
                first = false;
                go_json_string(out, key);
                out.push(':');
                let inner = match (kind, key.as_str()) {
                    (_, "livenessProbe" | "readinessProbe" | "startupProbe") => "probe",
                    ("lifecycle", _) => "handler",
                    (_, other) => other,
                };
                go_typed(out, field, inner);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_typed(out, item, kind);
            }
            out.push(']');
        }
        Value::String(s) => go_json_string(out, s),
        other => out.push_str(&other.to_string()),
    }
}

/// `proxy.istio.io/overrides` as Istio writes it: the pod's own containers
/// it merged its rendered ones into, by the list its template put them in
/// (`containers`, `initContainers`; an empty list left out), each with an
/// `image: auto` left out and its quantities canonical.
pub fn overrides_annotation(containers: &[Value], init_containers: &[Value]) -> String {
    let mut out = String::from("{");
    let mut first = true;
    for (key, list) in [
        ("containers", containers),
        ("initContainers", init_containers),
    ] {
        if list.is_empty() {
            continue;
        }
        if !first {
            out.push(',');
        }
        first = false;
        go_json_string(&mut out, key);
        out.push_str(":[");
        for (i, container) in list.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let mut overlay = container.clone();
            if let Value::Object(map) = &mut overlay {
                if map.get("image").and_then(Value::as_str) == Some(AUTO_IMAGE) {
                    map.shift_remove("image");
                }
            }
            canonical_resources(&mut overlay);
            out.push_str(&go_container_json(&overlay));
        }
        out.push(']');
    }
    out.push('}');
    out
}

/// What Istio does to its capture container (`init`, istio-init or
/// istio-validation) and its proxy (`proxy`, merged already) after merging
/// the pod's own proxy container (`user`) in: the validation container
/// runs as the user and group the user's proxy sets (not with TPROXY); the
/// capture's `-u` is the user's proxy's user when it sets one other than
/// 0; with TPROXY the proxy runs as root whatever the user's proxy says.
pub fn adjust_capture_user(init: &mut Value, proxy: &mut Value, user: &Value, tproxy: bool) {
    let Some(context) = user.field("securityContext") else {
        return;
    };
    let user_id = context.field("runAsUser").and_then(Value::as_i64);
    let group_id = context.field("runAsGroup").and_then(Value::as_i64);
    if user_id.is_none() && group_id.is_none() {
        return;
    }
    if tproxy && user_id.is_some() {
        if let Some(Value::Object(context)) = proxy.field_mut("securityContext") {
            context.insert("runAsUser".into(), Value::from(0));
        }
    }
    let validation = init.field("name").and_then(Value::as_str) == Some("istio-validation");
    if !tproxy && validation {
        if let Value::Object(container) = &mut *init {
            let context = container
                .entry("securityContext")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(context) = context {
                if let Some(id) = user_id {
                    context.insert("runAsUser".into(), Value::from(id));
                }
                if let Some(id) = group_id {
                    context.insert("runAsGroup".into(), Value::from(id));
                }
            }
        }
    }
    let Some(id) = user_id.filter(|id| *id != 0) else {
        return;
    };
    if let Some(Value::Array(args)) = init.field_mut("args") {
        if let Some(at) = args.iter().position(|a| a.as_str() == Some("-u")) {
            if let Some(arg) = args.get_mut(at + 1) {
                *arg = Value::String(id.to_string());
            }
        }
    }
}

/// The volumes (or mounts) of the pod's `sidecar.istio.io/userVolume` (or
/// `userVolumeMount`), a JSON object of them by name, as Istio's template
/// writes them: each with its name, in the order of the names. Text that
/// is not such an object gives none.
pub fn named_entries(text: &str) -> Vec<Value> {
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    let mut named: Vec<(String, Value)> = map.into_iter().collect();
    named.sort_by(|a, b| a.0.cmp(&b.0));
    named
        .into_iter()
        .filter_map(|(name, entry)| {
            let Value::Object(fields) = entry else {
                return None;
            };
            let mut out = Map::new();
            out.insert("name".into(), Value::String(name));
            out.extend(fields.into_iter().filter(|(k, _)| k != "name"));
            Some(Value::Object(out))
        })
        .collect()
}

/// What the interception mode (`interceptionMode`) makes of the capture and
/// the proxy, as Istio's template works it out: `capture`, whether there is
/// an init container at all (not with `NONE`); the user and group
/// istio-iptables captures for (`captureUID` as the argument it is,
/// `captureGID`), 1337 with `TPROXY` whatever the proxy's user, else the
/// proxy's; and the proxy's own security context: with `TPROXY` it adds
/// `NET_ADMIN` and runs as root (user 0, group 1337), else as the proxy's
/// user and group without added capabilities.
pub fn interception(values: &Map<String, Value>) -> Vec<(&'static str, Value)> {
    let mode = text_of(values, "interceptionMode");
    let tproxy = mode == "TPROXY";
    let id = |name: &str| match values.get(name) {
        Some(Value::Number(n)) => Value::Number(n.clone()),
        _ => Value::from(1337),
    };
    let (uid, gid) = if tproxy {
        (Value::from(1337), Value::from(1337))
    } else {
        (id("proxyUID"), id("proxyGID"))
    };
    vec![
        ("capture", Value::Bool(mode != "NONE")),
        ("captureUID", uid),
        ("captureGID", gid),
        (
            "proxyCapabilities",
            if tproxy {
                Value::Array(vec![Value::from("NET_ADMIN")])
            } else {
                Value::String(String::new())
            },
        ),
        (
            "proxyRunAsUser",
            if tproxy {
                Value::from(0)
            } else {
                id("proxyUID")
            },
        ),
        (
            "proxyRunAsGroup",
            if tproxy {
                Value::from(1337)
            } else {
                id("proxyGID")
            },
        ),
        ("proxyRunAsNonRoot", Value::Bool(!tproxy)),
    ]
}

/// The excluded inbound ports with the agent's status port (`port`) among
/// them, as Istio's template function `excludeInboundPort` works them out:
/// `excluded` as it is when the port is none (empty or 0) or already in
/// it, else its ports (trimmed, empty ones dropped) and the port after.
pub fn exclude_inbound_port(port: &str, excluded: &str) -> String {
    let port = port.trim();
    if port.is_empty() || port == "0" {
        return excluded.to_string();
    }
    let ports: Vec<&str> = excluded.split(',').collect();
    if ports.contains(&port) {
        return excluded.to_string();
    }
    let mut out: Vec<&str> = ports
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    out.push(port);
    out.join(",")
}

/// istio-iptables' arguments after `-m MODE`, as Istio's template writes
/// them, each flag and its value a list item of their own: `-i`, `-x`, `-b`
/// with their values, empty or not; `-d` with Istio's own ports and the
/// excluded ones (`excluded`, see [`exclude_inbound_port`]); then `-q` and
/// `-o` when their ports are set, and `-k` (the rerouted virtual
/// interfaces, else KubeVirt's) and `-c` when their interfaces are.
pub fn iptables_args(values: &Map<String, Value>, excluded: &str) -> Vec<String> {
    let mut args = Vec::with_capacity(16);
    for (flag, name) in [
        ("-i", "includeOutboundIPRanges"),
        ("-x", "excludeOutboundIPRanges"),
        ("-b", "includeInboundPorts"),
    ] {
        args.push(flag.to_string());
        args.push(text_of(values, name));
    }
    args.push("-d".into());
    args.push(if excluded.is_empty() {
        PROXY_INBOUND_PORTS.to_string()
    } else {
        format!("{PROXY_INBOUND_PORTS},{excluded}")
    });
    let reroute = text_of(values, "rerouteVirtualInterfaces");
    let interfaces = if reroute.is_empty() {
        text_of(values, "kubevirtInterfaces")
    } else {
        reroute
    };
    for (flag, value) in [
        ("-q", text_of(values, "includeOutboundPorts")),
        ("-o", text_of(values, "excludeOutboundPorts")),
        ("-k", interfaces),
        ("-c", text_of(values, "excludeInterfaces")),
    ] {
        if !value.is_empty() {
            args.push(flag.to_string());
            args.push(value);
        }
    }
    args
}

/// The annotations `kubectl logs` and `kubectl exec` read for the container
/// they default to.
pub const DEFAULT_CONTAINER_KEYS: [&str; 2] = [
    "kubectl.kubernetes.io/default-logs-container",
    "kubectl.kubernetes.io/default-container",
];

/// The annotations Istio's sidecar template writes on every pod it injects
/// beside the profile's, whatever the sidecar's mode: both default-container
/// annotations, naming the pod's first container that is not the proxy
/// (none for a pod without one); with Istio's CNI plugin, which sets the
/// capture up from them, the capture's settings (see [`cni_annotations`]).
/// The pod's own keep their values.
pub fn webhook_annotations(spec: &Value, values: &Map<String, Value>) -> Map<String, Value> {
    let mut out = if text_of(values, "cni") == "true" {
        cni_annotations(values)
    } else {
        Map::new()
    };
    let first = spec
        .field("containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.field("name").and_then(Value::as_str))
        .find(|name| *name != PROXY);
    if let Some(app) = first {
        for key in DEFAULT_CONTAINER_KEYS {
            out.insert(key.to_string(), Value::String(app.to_string()));
        }
    }
    out
}

/// The capture's settings as Istio's template writes them for its CNI
/// plugin: the interception mode, the included and excluded inbound ports
/// (the status port among the excluded), and those of the outbound IP
/// ranges, outbound ports and interfaces that are set.
pub fn cni_annotations(values: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    let mut put = |key: &str, value: String| {
        out.insert(key.to_string(), Value::String(value));
    };
    put(
        "sidecar.istio.io/interceptionMode",
        Some(text_of(values, "interceptionMode"))
            .filter(|mode| !mode.is_empty())
            .unwrap_or_else(|| "REDIRECT".into()),
    );
    for (key, name, always) in [
        (
            "traffic.sidecar.istio.io/includeOutboundIPRanges",
            "includeOutboundIPRanges",
            false,
        ),
        (
            "traffic.sidecar.istio.io/excludeOutboundIPRanges",
            "excludeOutboundIPRanges",
            false,
        ),
        (
            "traffic.sidecar.istio.io/includeInboundPorts",
            "includeInboundPorts",
            true,
        ),
        (
            "traffic.sidecar.istio.io/excludeInboundPorts",
            "excludedInboundPorts",
            true,
        ),
        (
            "traffic.sidecar.istio.io/includeOutboundPorts",
            "includeOutboundPorts",
            false,
        ),
        (
            "traffic.sidecar.istio.io/excludeOutboundPorts",
            "excludeOutboundPorts",
            false,
        ),
        (
            "traffic.sidecar.istio.io/kubevirtInterfaces",
            "kubevirtInterfaces",
            false,
        ),
        (
            "istio.io/reroute-virtual-interfaces",
            "rerouteVirtualInterfaces",
            false,
        ),
        (
            "traffic.sidecar.istio.io/excludeInterfaces",
            "excludeInterfaces",
            false,
        ),
    ] {
        let value = text_of(values, name);
        if always || !value.is_empty() {
            put(key, value);
        }
    }
    out
}

/// The annotations OpenShift gives a project: the user IDs its pods run as,
/// and their supplemental groups.
const UID_RANGE: &str = "openshift.io/sa.scc.uid-range";
const SUPPLEMENTAL_GROUPS: &str = "openshift.io/sa.scc.supplemental-groups";

/// The proxy's user and group in a namespace with these `annotations`, as
/// Istio's injector picks them (`GetProxyIDs` in `inject.go`, with
/// OpenShift's block syntax, `START/SIZE` or `START-END`): on OpenShift the
/// last ID of the project's UID range, and the last of its first
/// supplemental group block (the UID range when it has none); `None` for
/// each that the namespace does not give (1337 then).
pub fn openshift_proxy_ids(annotations: Option<&Map<String, Value>>) -> (Option<i64>, Option<i64>) {
    let annotation = |key: &str| {
        annotations
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
    };
    let uid = annotation(UID_RANGE)
        .and_then(id_block)
        .map(|(_, end)| i64::from(end));
    let groups = annotation(SUPPLEMENTAL_GROUPS).or_else(|| annotation(UID_RANGE));
    // Every block must read, as OpenShift parses them; the first one counts.
    let gid = groups.and_then(|groups| {
        let blocks: Option<Vec<(u32, u32)>> = groups.split(',').map(id_block).collect();
        blocks?.first().map(|(_, end)| i64::from(*end))
    });
    (uid, gid)
}

/// An OpenShift ID block, `START/SIZE` (the last is START+SIZE-1) or
/// `START-END`, read as Go's `fmt.Sscanf` reads `%d/%d` and `%d-%d`.
fn id_block(text: &str) -> Option<(u32, u32)> {
    let number = |t: &str| t.trim_start().parse::<u32>().ok();
    if let Some((start, size)) = text.split_once('/') {
        let (start, size) = (number(start)?, number(size)?);
        return Some((start, start.wrapping_add(size).wrapping_sub(1)));
    }
    let (start, end) = text.split_once('-')?;
    Some((number(start)?, number(end)?))
}

/// How Istio's injector names a pod's workload (its `DeploymentMeta` and
/// `TypeMeta`, and what its template makes of them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    /// The workload's API version, kind and name (Istio's `TypeMeta` and
    /// `DeploymentMeta`); empty when the object has none.
    pub api_version: String,
    pub kind: String,
    pub name: String,
    /// `ISTIO_META_OWNER`: `kubernetes://apis/API_VERSION/namespaces/NS/KINDs/NAME`;
    /// empty without an API version or a name.
    pub owner: String,
    /// `ISTIO_META_WORKLOAD_NAME`: the pod's `service.istio.io/workload-name`
    /// label, else the workload's name.
    pub workload_name: String,
    /// `service.istio.io/canonical-name`: the pod's label of that name,
    /// `app.kubernetes.io/name` or `app`, else the workload's name; cut to
    /// 63 characters, without leading or trailing `-`, `_` or `.`.
    pub canonical_name: String,
}

/// The workload `object` (of `namespace`, whose pod has `labels`) as Istio's
/// injector names it: a workload by its own API version, kind and name; a
/// bare pod with a generated name by the controller among its owners (a
/// ReplicaSet with the pod's template hash by its Deployment, a Job with a
/// timestamp suffix by its CronJob, a ReplicationController of an OpenShift
/// DeploymentConfig by that), else as the pod `v1` it is.
pub fn identity(object: &Value, labels: Option<&Map<String, Value>>, namespace: &str) -> Identity {
    let label = |key: &str| {
        labels
            .and_then(|l| l.get(key))
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
    };
    let meta = |key: &str| {
        object
            .field("metadata")
            .and_then(|m| m.field(key))
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let text = |value: &Value, key: &str| {
        value
            .field(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let mut api_version = text(object, "apiVersion");
    let mut kind = text(object, "kind");
    let mut name = meta("name").to_string();
    if kind == "Pod" && api_version == "v1" && !meta("generateName").is_empty() {
        let controller = object
            .field("metadata")
            .and_then(|m| m.field("ownerReferences"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|r| r.field("controller").and_then(Value::as_bool) == Some(true));
        if let Some(owner) = controller {
            api_version = text(owner, "apiVersion");
            kind = text(owner, "kind");
            name = text(owner, "name");
            let hash = |key: &str| label(key).filter(|h| name.ends_with(h));
            if kind == "ReplicaSet" {
                if let Some(hash) = hash("pod-template-hash") {
                    name = name
                        .strip_suffix(&format!("-{hash}"))
                        .unwrap_or(&name)
                        .to_string();
                    kind = "Deployment".into();
                } else if let Some(hash) = hash("rollouts-pod-template-hash") {
                    name = name
                        .strip_suffix(&format!("-{hash}"))
                        .unwrap_or(&name)
                        .to_string();
                    kind = "Rollout".into();
                    api_version = "v1alpha1".into();
                }
            } else if kind == "ReplicationController" {
                if let Some(config) = label("deploymentconfig") {
                    name = config.to_string();
                    kind = "DeploymentConfig".into();
                }
            } else if kind == "Job" {
                if let Some(cron) = cron_job_of(&name) {
                    name = cron.to_string();
                    kind = "CronJob".into();
                    api_version = "batch/v1".into();
                }
            }
        }
        if name.is_empty() {
            name = meta("name").to_string();
        }
    }
    let owner = if api_version.is_empty() || name.is_empty() {
        String::new()
    } else {
        format!(
            "kubernetes://apis/{api_version}/namespaces/{namespace}/{}s/{name}",
            kind.to_lowercase()
        )
    };
    let workload_name = label("service.istio.io/workload-name")
        .unwrap_or(&name)
        .to_string();
    let canonical = label("service.istio.io/canonical-name")
        .or_else(|| label("app.kubernetes.io/name"))
        .or_else(|| label("app"))
        .unwrap_or(&name);
    // Cut at 63 bytes, as Go slices a string (back to a character's start).
    let mut end = canonical.len().min(63);
    while !canonical.is_char_boundary(end) {
        end -= 1;
    }
    let canonical_name = canonical
        .get(..end)
        .unwrap_or(canonical)
        .trim_matches(|c| matches!(c, '-' | '_' | '.'))
        .to_string();
    Identity {
        owner,
        workload_name,
        canonical_name,
        api_version,
        kind,
        name,
    }
}

/// The CronJob a Job of this name was made by: the name less a `-` and 8
/// to 10 digits at its end (a CronJob's Jobs are named so).
fn cron_job_of(job: &str) -> Option<&str> {
    let digits = job.len() - job.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (cron, suffix) = job.split_at(job.len() - digits);
    let cron = cron.strip_suffix('-')?;
    ((8..=10).contains(&suffix.len()) && !cron.is_empty()).then_some(cron)
}

/// The annotation in which Istio's injector records what it injected.
pub const STATUS: &str = "sidecar.istio.io/status";

/// `sidecar.istio.io/status` as Istio's injector writes it: the names of
/// the init containers, containers and volumes its template added, where
/// it added them (the proxy among the init containers as a native
/// sidecar), its image pull secrets, and the revision (`default` when
/// empty), as Go serialises the struct: an empty list is `null`.
pub fn injection_status(injected: &Injected<'_>, values: &Map<String, Value>) -> String {
    let secrets = pull_secrets(values);
    let mut out = String::from("{");
    let lists: [(&str, &[&str]); 4] = [
        ("initContainers", &injected.init_containers),
        ("containers", &injected.containers),
        ("volumes", &injected.volumes),
        ("imagePullSecrets", &secrets),
    ];
    for (key, names) in lists {
        go_json_string(&mut out, key);
        out.push(':');
        if names.is_empty() {
            out.push_str("null");
        } else {
            out.push('[');
            for (i, name) in names.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_json_string(&mut out, name);
            }
            out.push(']');
        }
        out.push(',');
    }
    let revision = text_of(values, "revision");
    go_json_string(&mut out, "revision");
    out.push(':');
    go_json_string(
        &mut out,
        if revision.is_empty() {
            "default"
        } else {
            &revision
        },
    );
    out.push('}');
    out
}

/// The names of the image pull secrets Istio's template adds (its Helm
/// value `global.imagePullSecrets`): a list, or names separated by commas.
pub fn pull_secrets(values: &Map<String, Value>) -> Vec<&str> {
    match values.get("imagePullSecrets") {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        Some(Value::String(text)) => text
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect(),
        _ => Vec::new(),
    }
}

/// The name of Istio's proxy container.
pub const PROXY: &str = "istio-proxy";

/// A ContainerPort's fields in Go's order, in which its JSON is written.
pub const CONTAINER_PORT_FIELDS: [&str; 5] =
    ["name", "hostPort", "containerPort", "protocol", "hostIP"];

/// `ISTIO_META_POD_PORTS` as Istio's sidecar template writes it: the ports
/// of the pod's own containers (not its init containers), each as Go
/// serialises a ContainerPort (`name`, `hostPort`, `containerPort`,
/// `protocol`, `hostIP`, the empty ones left out), one a line indented by
/// four spaces after the first line's `[`, each but the first led by a
/// comma, and `]` on a line of its own: `[\n]` for none. pilot-agent reads
/// it as a JSON list of those objects and exits on anything else.
pub fn pod_ports(containers: &[Value]) -> String {
    let mut out = String::from("[");
    let mut first = true;
    for port in containers
        .iter()
        .filter_map(|c| c.field("ports").and_then(Value::as_array))
        .flatten()
    {
        out.push_str("\n    ");
        if !first {
            out.push(',');
        }
        first = false;
        out.push('{');
        let mut fields = 0;
        for key in CONTAINER_PORT_FIELDS {
            // All but the port number are `omitempty`.
            let omit_empty = key != "containerPort";
            let value = port.field(key).unwrap_or(&Value::Null);
            let empty = match value {
                Value::Null => true,
                Value::String(s) => s.is_empty(),
                Value::Number(n) => n.as_f64() == Some(0.0),
                _ => false,
            };
            if omit_empty && empty {
                continue;
            }
            if fields > 0 {
                out.push(',');
            }
            fields += 1;
            go_json_string(&mut out, key);
            out.push(':');
            match value {
                Value::String(s) => go_json_string(&mut out, s),
                Value::Null => out.push('0'),
                other => out.push_str(&other.to_string()),
            }
        }
        out.push('}');
    }
    out.push_str("\n]");
    out
}

/// `text` as Go's `encoding/json` writes a string (see
/// [`crate::gotemplate::format::json_string`]).
pub(crate) fn go_json_string(out: &mut String, text: &str) {
    crate::gotemplate::format::json_string(text, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pod_ports_are_written_as_istios_template_writes_them() {
        let containers = [
            json!({"name": "hello", "ports": [{"name": "http", "containerPort": 80}]}),
            json!({"name": "none"}),
            json!({"name": "world", "ports": [
                {"containerPort": 8080, "protocol": "TCP"},
                {"name": "dns", "containerPort": 53, "protocol": "UDP", "hostPort": 5353, "hostIP": "10.0.0.1"}]}),
        ];
        assert_eq!(
            pod_ports(&containers),
            "[\n    {\"name\":\"http\",\"containerPort\":80}\n    ,{\"containerPort\":8080,\"protocol\":\"TCP\"}\n    ,{\"name\":\"dns\",\"hostPort\":5353,\"containerPort\":53,\"protocol\":\"UDP\",\"hostIP\":\"10.0.0.1\"}\n]"
        );
        let parsed: Value = serde_json::from_str(&pod_ports(&containers)).expect("JSON");
        assert_eq!(parsed.as_array().map(Vec::len), Some(3));
        assert_eq!(pod_ports(&[json!({"name": "app"})]), "[\n]");
        assert_eq!(pod_ports(&[]), "[\n]");
        assert!(serde_json::from_str::<Vec<Value>>("[\n]").is_ok());
    }

    #[test]
    fn default_containers_are_the_first_that_is_not_the_proxy() {
        let spec = json!({"containers": [{"name": "istio-proxy"}, {"name": "app"}, {"name": "b"}]});
        let got = webhook_annotations(&spec, &Map::new());
        assert_eq!(got.len(), 2);
        for key in DEFAULT_CONTAINER_KEYS {
            assert_eq!(got[key], "app");
        }
        assert!(
            webhook_annotations(
                &json!({"containers": [{"name": "istio-proxy"}]}),
                &Map::new()
            )
            .is_empty()
        );
        assert!(webhook_annotations(&json!({}), &Map::new()).is_empty());
        // With the CNI plugin, the capture's settings for it.
        let mut values = json!({"cni": true, "includeOutboundIPRanges": "*",
            "excludeOutboundIPRanges": "", "includeInboundPorts": "*", "excludeInboundPorts": "",
            "statusPort": 15020, "excludeOutboundPorts": "53"})
        .as_object()
        .cloned()
        .expect("map");
        complete(&mut values, &|_| false);
        let got = webhook_annotations(&json!({}), &values);
        assert_eq!(
            Value::Object(got),
            json!({"sidecar.istio.io/interceptionMode": "REDIRECT",
                "traffic.sidecar.istio.io/includeOutboundIPRanges": "*",
                "traffic.sidecar.istio.io/includeInboundPorts": "*",
                "traffic.sidecar.istio.io/excludeInboundPorts": "15020",
                "traffic.sidecar.istio.io/excludeOutboundPorts": "53"})
        );
    }

    #[test]
    fn the_status_lists_what_was_injected_where_as_go_writes_it() {
        let values = json!({"revision": ""}).as_object().cloned().expect("map");
        let native = Injected {
            init_containers: vec!["istio-init", "istio-proxy"],
            containers: vec![],
            volumes: vec!["istio-envoy", "istio-data"],
        };
        assert_eq!(
            injection_status(&native, &values),
            r#"{"initContainers":["istio-init","istio-proxy"],"containers":null,"volumes":["istio-envoy","istio-data"],"imagePullSecrets":null,"revision":"default"}"#
        );
        let values = json!({"revision": "canary", "imagePullSecrets": "a, b"})
            .as_object()
            .cloned()
            .expect("map");
        let classic = Injected {
            init_containers: vec![],
            containers: vec!["istio-proxy"],
            volumes: vec![],
        };
        assert_eq!(
            injection_status(&classic, &values),
            r#"{"initContainers":null,"containers":["istio-proxy"],"volumes":null,"imagePullSecrets":["a","b"],"revision":"canary"}"#
        );
    }

    #[test]
    fn the_status_port_is_excluded_as_istio_excludes_it() {
        assert_eq!(exclude_inbound_port("15020", ""), "15020");
        assert_eq!(exclude_inbound_port("15020", "4, 5,,6"), "4,5,6,15020");
        assert_eq!(exclude_inbound_port("5", " 4,5"), " 4,5");
        assert_eq!(exclude_inbound_port("0", "4"), "4");
        assert_eq!(exclude_inbound_port(" ", ""), "");
    }

    #[test]
    fn iptables_arguments_are_flag_and_value_as_istio_writes_them() {
        let mut values = json!({"includeOutboundIPRanges": "*", "excludeOutboundIPRanges": "",
            "includeInboundPorts": "*", "excludeInboundPorts": "", "statusPort": 15020,
            "excludeOutboundPorts": "", "includeOutboundPorts": ""})
        .as_object()
        .cloned()
        .expect("map");
        complete(&mut values, &|_| false);
        assert_eq!(
            values["iptablesArgs"],
            json!(["-i", "*", "-x", "", "-b", "*", "-d", "15090,15021,15020"])
        );
        assert_eq!(values["excludedInboundPorts"], "15020");
        assert_eq!(values["readinessProbe"], true);
        assert_eq!(values["startupProbe"], true);
        assert_eq!(values["readinessInitialDelay"], "");
        values.insert("statusPort".into(), json!(0));
        values.insert("excludeOutboundPorts".into(), json!("53"));
        values.insert("kubevirtInterfaces".into(), json!("net1"));
        values.insert("rerouteVirtualInterfaces".into(), json!("net2"));
        values.insert("excludeInterfaces".into(), json!("eth1"));
        complete(&mut values, &|_| false);
        assert_eq!(
            values["iptablesArgs"],
            json!([
                "-i",
                "*",
                "-x",
                "",
                "-b",
                "*",
                "-d",
                "15090,15021",
                "-o",
                "53",
                "-k",
                "net2",
                "-c",
                "eth1"
            ])
        );
        assert_eq!(values["readinessProbe"], false);
        assert_eq!(values["startupProbe"], false);
        values.insert("statusPort".into(), json!(15020));
        values.insert("startupProbeEnabled".into(), json!(false));
        values.insert("readinessInitialDelaySeconds".into(), json!(100));
        complete(&mut values, &|_| false);
        assert_eq!(values["startupProbe"], false);
        assert_eq!(values["readinessInitialDelay"], 100);
    }

    #[test]
    fn openshift_projects_give_the_proxy_the_last_of_their_ids() {
        let annotations = |a: Value| a.as_object().cloned();
        let ns = annotations(json!({
            "openshift.io/sa.scc.uid-range": "1000620000/10000",
            "openshift.io/sa.scc.supplemental-groups": "1000700000-1000700009,5/2",
        }));
        assert_eq!(
            openshift_proxy_ids(ns.as_ref()),
            (Some(1000629999), Some(1000700009))
        );
        // Groups default to the UID range; a block that does not read spoils
        // the groups, not the user.
        let ns = annotations(json!({"openshift.io/sa.scc.uid-range": "100/10"}));
        assert_eq!(openshift_proxy_ids(ns.as_ref()), (Some(109), Some(109)));
        let ns = annotations(json!({
            "openshift.io/sa.scc.uid-range": "100/10",
            "openshift.io/sa.scc.supplemental-groups": "7-9,oops",
        }));
        assert_eq!(openshift_proxy_ids(ns.as_ref()), (Some(109), None));
        assert_eq!(openshift_proxy_ids(None), (None, None));
    }

    #[test]
    fn workloads_are_named_as_istio_names_them() {
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "hello"}});
        let got = identity(&deployment, None, "default");
        assert_eq!(
            got.owner,
            "kubernetes://apis/apps/v1/namespaces/default/deployments/hello"
        );
        assert_eq!(
            (got.workload_name.as_str(), got.canonical_name.as_str()),
            ("hello", "hello")
        );
        let cron = json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"}});
        assert_eq!(
            identity(&cron, None, "ns").owner,
            "kubernetes://apis/batch/v1/namespaces/ns/cronjobs/c"
        );
        let long = "helloworld-helloworld-helloworld-helloworld-helloworld-hellowo-ld";
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "generateName": "helloworld-", "name": "helloworld-helloworld",
            "ownerReferences": [{"apiVersion": "foo/v1", "kind": "Bar", "name": long, "controller": true}]}});
        let got = identity(&pod, None, "default");
        assert_eq!(
            got.owner,
            format!("kubernetes://apis/foo/v1/namespaces/default/bars/{long}")
        );
        assert_eq!(got.workload_name, long);
        assert_eq!(
            got.canonical_name,
            "helloworld-helloworld-helloworld-helloworld-helloworld-hellowo"
        );
        // A ReplicaSet's pod is its Deployment's; labels name it first.
        let labels = json!({"pod-template-hash": "5d4f", "app": "shop",
            "service.istio.io/workload-name": "w"});
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "web-5d4f-",
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d4f", "controller": true}]}});
        let got = identity(&pod, labels.as_object(), "shop");
        assert_eq!(
            got.owner,
            "kubernetes://apis/apps/v1/namespaces/shop/deployments/web"
        );
        assert_eq!(
            (got.workload_name.as_str(), got.canonical_name.as_str()),
            ("w", "shop")
        );
        let job = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "x-",
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "nightly-28812345", "controller": true}]}});
        assert_eq!(
            identity(&job, None, "d").owner,
            "kubernetes://apis/batch/v1/namespaces/d/cronjobs/nightly"
        );
        assert_eq!(cron_job_of("a-1234567"), None);
        assert_eq!(cron_job_of("-12345678"), None);
        assert_eq!(cron_job_of("a-b-1234567890"), Some("a-b"));
        // No name: no owner.
        let nameless = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {}});
        let got = identity(&nameless, None, "d");
        assert_eq!((got.owner.as_str(), got.workload_name.as_str()), ("", ""));
    }

    #[test]
    fn strings_are_escaped_as_go_escapes_them() {
        let mut out = String::new();
        go_json_string(&mut out, "a<b>&\"c\\\n\u{1}");
        assert_eq!(out, r#""a\u003cb\u003e\u0026\"c\\\n\u0001""#);
    }

    #[test]
    fn quantities_are_canonical() {
        let mut values = json!({"proxyCPULimit": "2000m", "proxyMemoryLimit": "1024Mi",
            "proxyCPURequest": "100m", "proxyMemoryRequest": ""})
        .as_object()
        .cloned()
        .expect("map");
        complete(&mut values, &|_| false);
        assert_eq!(values["proxyCPULimit"], "2");
        assert_eq!(values["proxyMemoryLimit"], "1Gi");
        assert_eq!(values["proxyCPURequest"], "100m");
        assert_eq!(values["proxyMemoryRequest"], "");
    }

    #[test]
    fn the_pods_proxy_config_is_merged_over_the_meshs_in_istios_order() {
        let merged = proxy_config(
            r#"{"proxyMetadata":{"Z":"1","A":"2"},"drainDuration":"23s"}"#,
            "concurrency: 0\nproxyMetadata:\n  B: x\n  Z: '3'\ndiscoveryAddress: foo:123\n",
        );
        assert_eq!(
            Value::Object(merged).to_string(),
            r#"{"drainDuration":"23s","discoveryAddress":"foo:123","concurrency":0,"proxyMetadata":{"A":"2","B":"x","Z":"3"}}"#
        );
        assert!(proxy_config("{}", "").is_empty());
        // What does not read as an object counts as none.
        assert!(proxy_config("[1]", "not: [closed").is_empty());
        let hold = proxy_config("{}", r#"{ "holdApplicationUntilProxyStarts": true }"#);
        assert_eq!(hold["holdApplicationUntilProxyStarts"], true);
    }

    #[test]
    fn the_proxy_config_gives_env_and_the_proxys_place() {
        let mut values = json!({"proxyConfig": r#"{"proxyMetadata":{"B":"2","A":"1"}}"#,
            "podProxyConfig": "holdApplicationUntilProxyStarts: true", "proxyPosition": "last"})
        .as_object()
        .cloned()
        .expect("map");
        complete(&mut values, &|_| false);
        assert_eq!(values["proxyPosition"], "first");
        assert_eq!(
            values["proxyMetadataEnv"],
            json!([{"name": "A", "value": "1"}, {"name": "B", "value": "2"}])
        );
        assert_eq!(
            values["proxyConfig"],
            r#"{"proxyMetadata":{"A":"1","B":"2"},"holdApplicationUntilProxyStarts":true}"#
        );
        let mut plain = json!({"proxyConfig": "{}"})
            .as_object()
            .cloned()
            .expect("map");
        complete(&mut plain, &|_| false);
        assert_eq!(plain["proxyMetadataEnv"], "");
        assert_eq!(plain["proxyConfig"], "{}");
    }

    #[test]
    fn the_interception_mode_decides_the_capture_and_the_proxys_user() {
        let of = |mode: &str| -> Map<String, Value> {
            let values = json!({"interceptionMode": mode, "proxyUID": 2000, "proxyGID": 3000});
            interception(values.as_object().expect("map"))
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect()
        };
        let redirect = of("REDIRECT");
        assert_eq!(redirect["capture"], true);
        assert_eq!(redirect["captureUID"], 2000);
        assert_eq!(redirect["captureGID"], 3000);
        assert_eq!(redirect["proxyCapabilities"], "");
        assert_eq!(redirect["proxyRunAsUser"], 2000);
        assert_eq!(redirect["proxyRunAsGroup"], 3000);
        assert_eq!(redirect["proxyRunAsNonRoot"], true);
        let tproxy = of("TPROXY");
        assert_eq!(tproxy["captureUID"], 1337);
        assert_eq!(tproxy["captureGID"], 1337);
        assert_eq!(tproxy["proxyCapabilities"], json!(["NET_ADMIN"]));
        assert_eq!(tproxy["proxyRunAsUser"], 0);
        assert_eq!(tproxy["proxyRunAsGroup"], 1337);
        assert_eq!(tproxy["proxyRunAsNonRoot"], false);
        assert_eq!(of("NONE")["capture"], false);
    }

    #[test]
    fn user_volumes_are_named_in_the_order_of_their_names() {
        let got = named_entries(
            r#"{"b":{"mountPath":"/b"},"a":{"mountPath":"/a","readOnly":true},"c":1}"#,
        );
        assert_eq!(
            got,
            vec![
                json!({"name": "a", "mountPath": "/a", "readOnly": true}),
                json!({"name": "b", "mountPath": "/b"}),
            ]
        );
        assert!(named_entries("").is_empty());
        assert!(named_entries("[1]").is_empty());
    }

    #[test]
    fn metrics_are_merged_unless_the_pod_or_the_mesh_says_not() {
        assert!(merges_metrics("true", ""));
        assert!(merges_metrics("true", "yes"));
        assert!(merges_metrics("", "True"));
        assert!(!merges_metrics("true", "false"));
        assert!(!merges_metrics("true", "0"));
        assert!(!merges_metrics("false", "true"));
    }

    #[test]
    fn a_users_container_is_merged_as_a_strategic_merge_does() {
        let rendered = json!({"name": "istio-proxy", "image": "proxyv2", "args": ["proxy", "sidecar"],
            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
            "resources": {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "100m"}},
            "securityContext": {"runAsUser": 1337, "runAsGroup": 1337, "capabilities": {"drop": ["ALL"]}},
            "volumeMounts": [{"name": "data", "mountPath": "/data"}]});
        let user = json!({"name": "istio-proxy", "image": "auto", "args": ["-c", "x"],
            "env": [{"name": "B", "value": "3"}, {"name": "C", "value": "4"}],
            "resources": {"limits": {"cpu": "3000m"}},
            "securityContext": {"runAsUser": 1234, "capabilities": {"drop": ["NET_RAW"]}},
            "volumeMounts": [{"name": "certs", "mountPath": "/etc/certs"}], "tty": true});
        let merged = merge_user_container(&rendered, &user);
        assert_eq!(merged["image"], "proxyv2");
        assert_eq!(merged["args"], json!(["-c", "x"]));
        assert_eq!(
            merged["env"],
            json!([{"name": "A", "value": "1"}, {"name": "B", "value": "3"}, {"name": "C", "value": "4"}])
        );
        assert_eq!(
            merged["resources"],
            json!({"limits": {"cpu": "3", "memory": "1Gi"}, "requests": {"cpu": "100m"}})
        );
        assert_eq!(
            merged["securityContext"],
            json!({"runAsUser": 1234, "runAsGroup": 1337, "capabilities": {"drop": ["NET_RAW"]}})
        );
        assert_eq!(
            merged["volumeMounts"],
            json!([{"name": "data", "mountPath": "/data"}, {"name": "certs", "mountPath": "/etc/certs"}])
        );
        assert_eq!(merged["tty"], true);
    }

    #[test]
    fn overrides_are_written_as_go_writes_containers() {
        let user = json!({"tty": true, "securityContext": {"runAsGroup": 2, "runAsUser": 1},
            "image": "auto", "name": "istio-proxy", "resources": {"requests": {"memory": "1Mi", "cpu": "1000m"}}});
        assert_eq!(
            overrides_annotation(&[], &[user]),
            r#"{"initContainers":[{"name":"istio-proxy","resources":{"requests":{"cpu":"1","memory":"1Mi"}},"securityContext":{"runAsUser":1,"runAsGroup":2},"tty":true}]}"#
        );
        assert_eq!(
            go_container_json(&json!({"imagePullPolicy": "IfNotPresent", "name": "p"})),
            r#"{"name":"p","resources":{},"imagePullPolicy":"IfNotPresent"}"#
        );
        assert_eq!(overrides_annotation(&[], &[]), "{}");
    }

    #[test]
    fn the_users_proxy_user_is_the_captures() {
        let init = json!({"name": "istio-validation", "args": ["-u", "1337", "-m", "REDIRECT"],
            "securityContext": {"runAsUser": 1337, "runAsGroup": 1337}});
        let proxy = json!({"securityContext": {"runAsUser": 1234}});
        let user = json!({"securityContext": {"runAsUser": 1234, "runAsGroup": 4321}});
        let (mut i, mut p) = (init.clone(), proxy.clone());
        adjust_capture_user(&mut i, &mut p, &user, false);
        assert_eq!(i["args"], json!(["-u", "1234", "-m", "REDIRECT"]));
        assert_eq!(
            i["securityContext"],
            json!({"runAsUser": 1234, "runAsGroup": 4321})
        );
        assert_eq!(p, proxy);
        let (mut i, mut p) = (init.clone(), proxy.clone());
        adjust_capture_user(&mut i, &mut p, &user, true);
        assert_eq!(i["securityContext"], init["securityContext"]);
        assert_eq!(p["securityContext"]["runAsUser"], 0);
        let (mut i, mut p) = (init.clone(), proxy.clone());
        adjust_capture_user(&mut i, &mut p, &json!({"name": "istio-proxy"}), false);
        assert_eq!((i, p), (init, proxy));
    }

    #[test]
    fn the_inbound_policy_and_compliance_policy_give_their_env() {
        let of = |policy: &str, compliance: &str| {
            let mut values =
                json!({"inboundTrafficPolicy": policy, "compliancePolicy": compliance})
                    .as_object()
                    .cloned()
                    .expect("map");
            complete(&mut values, &|_| false);
            (values["localhostInbound"].clone(), values["fips"].clone())
        };
        assert_eq!(of("LOCALHOST", "fips-140-3"), (json!(true), json!(true)));
        assert_eq!(of("", "pq"), (json!(false), json!(false)));
    }
}

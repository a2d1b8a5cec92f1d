//! What Istio's injector derives (istio `pkg/kube/inject`: the sidecar
//! template's functions, `webhook.go` and `app_probe.go`).
//!
//! Here: the values it completes and the proxy's config. `capture.rs`: the
//! traffic capture; `identity.rs`: the workload's name and the proxy's user;
//! `probes.rs` and `metrics.rs`: the app's probes and metrics taken over;
//! `user_proxy.rs`: a pod's own proxy merged; `status.rs`: the status
//! annotation and the pod's ports. The cluster's own templates:
//! `injector.rs` (the configuration), `template_data.rs`,
//! `template_funcs.rs`, `overlay.rs` and `typed.rs`.

use serde_json::{Map, Value};

pub mod alike;
mod capture;
mod identity;
pub mod injector;
mod metrics;
pub mod otel;
pub mod overlay;
mod probes;
pub mod revision;
mod status;
pub mod template_data;
pub mod template_funcs;
pub mod typed;
mod user_proxy;
pub mod validate;

pub use capture::*;
pub use identity::*;
pub use injector::ConfigError;
pub use metrics::{
    MetricsMerge, PROMETHEUS_ENV, merge_as_template_decides, metrics_merge, point_at_agent,
};
pub use probes::{
    APP_PROBERS, AppProbes, Edit, REWRITE_ANNOTATION, app_probes, restore_app_probes,
    rewrites_probes,
};
pub use status::*;
pub use user_proxy::*;

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

/// The values that hold the proxy's ephemeral storage, which only the
/// cluster's values give (no annotation does).
const EPHEMERAL_STORAGE: [&str; 2] = ["proxyEphemeralStorageRequest", "proxyEphemeralStorageLimit"];

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
    "caAddr",
    "hboneTunnel",
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

/// The proxy config's fields Istio sets before the mesh config's
/// `defaultConfig` (`DefaultProxyConfig` in `pkg/config/mesh` of
/// istio/istio), and the interception mode its enum starts with.
pub(super) fn proxy_defaults() -> [(&'static str, Value); 11] {
    [
        ("configPath", Value::from("./etc/istio/proxy")),
        ("binaryPath", Value::from("/usr/local/bin/envoy")),
        ("serviceCluster", Value::from("istio-proxy")),
        ("drainDuration", Value::from("45s")),
        ("discoveryAddress", Value::from(DEFAULT_DISCOVERY_ADDRESS)),
        ("proxyAdminPort", Value::from(15000)),
        ("controlPlaneAuthPolicy", Value::from("MUTUAL_TLS")),
        ("statNameLength", Value::from(189)),
        ("interceptionMode", Value::from("REDIRECT")),
        ("statusPort", Value::from(15020)),
        ("terminationDrainDuration", Value::from("5s")),
    ]
}

/// The default revision's istiod, where the proxy gets its configuration.
const DEFAULT_DISCOVERY_ADDRESS: &str = "istiod.istio-system.svc:15012";

/// Whether `PROXY_CONFIG` leaves the proxy config's field `key` out with
/// `value`: Istio writes only what differs from its defaults
/// (`cleanProxyConfig` in `pkg/kube/inject/template.go`), and protobuf's
/// JSON no empty map, zero port or enum's first value (`NONE`, `REDIRECT`
/// are read by templates all the same). A duration is compared by its
/// length (`45s`, `45.000s`).
pub(super) fn at_proxy_default(key: &str, value: &Value) -> bool {
    let seconds = |v: &Value| v.as_str()?.strip_suffix('s')?.parse::<f64>().ok();
    let Some((_, default)) = proxy_defaults().into_iter().find(|(name, _)| *name == key) else {
        // Strings are plain proto strings, and maps are maps; the numbers
        // not listed are wrapped (`concurrency: 0` is written).
        return match value {
            Value::Object(map) => key == "proxyMetadata" && map.is_empty(),
            Value::String(s) => s.is_empty(),
            _ => false,
        };
    };
    match (value, &default) {
        _ if key.ends_with("Duration") => {
            seconds(value).is_some_and(|s| Some(s) == seconds(&default))
        }
        (Value::Number(n), Value::Number(d)) => n.as_f64() == Some(0.0) || n.as_f64() == d.as_f64(),
        (Value::String(s), _) => {
            s.is_empty() || *value == default || (key == "controlPlaneAuthPolicy" && s == "NONE")
        }
        _ => false,
    }
}

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
        for name in RESOURCES
            .iter()
            .chain(&EPHEMERAL_STORAGE)
            .filter(|name| !annotated(name))
        {
            values.insert(name.to_string(), Value::String(String::new()));
        }
    }
    for name in RESOURCES.iter().chain(&EPHEMERAL_STORAGE) {
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
    // The revision's istiod: certificates from it (unless the chart's
    // caAddress names another CA), configuration from it unless the mesh
    // config names another (Istio's chart writes it into defaultConfig).
    let istiod = istiod_address(
        &text_of(values, "revision"),
        &text_of(values, "istioNamespace"),
    );
    let ca = Some(text_of(values, "caAddress")).filter(|a| !a.trim().is_empty());
    values.insert("caAddr".into(), Value::from(ca.unwrap_or(istiod.clone())));
    let mut config = proxy_config(
        &text_of(values, "proxyConfig"),
        &text_of(values, "podProxyConfig"),
    );
    if !config.contains_key("discoveryAddress") {
        config = in_proxy_config_order(
            config
                .into_iter()
                .chain([("discoveryAddress".to_string(), Value::from(istiod))]),
        );
    }
    if config.get("holdApplicationUntilProxyStarts") == Some(&Value::Bool(true)) {
        values.insert("proxyPosition".into(), Value::from("first"));
    }
    // The images with their variant, unless the pod named its image.
    if !annotated("proxyImage") {
        let variant = text_of(values, "proxyImageType");
        let proxy_type = config
            .get("image")
            .and_then(|i| i.get("imageType"))
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty() && !annotated("proxyImageType"))
            .map_or(variant.clone(), str::to_string);
        for (name, image_type) in [("proxyImage", proxy_type), ("proxyInitImage", variant)] {
            let image = image_of_type(&text_of(values, name), &image_type);
            values.insert(name.into(), Value::String(image));
        }
    }
    let hbone = config
        .get("proxyMetadata")
        .and_then(|m| m.get("ISTIO_META_ENABLE_HBONE"))
        .and_then(Value::as_str)
        == Some("true");
    values.insert(
        "hboneTunnel".into(),
        Value::from(if hbone { "http" } else { "" }),
    );
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
    // Written as Istio's protoToJSON writes it: what differs from the
    // defaults.
    config.retain(|key, value| !at_proxy_default(key, value));
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
    // Merged for each workload: keeping the last texts met saved about 1%
    // of a run's instructions.
    merged_proxy_config(mesh, pod)
}

/// [`proxy_config`], read and merged.
fn merged_proxy_config(mesh: &str, pod: &str) -> Map<String, Value> {
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
    in_proxy_config_order(merged)
}

/// `image` (`REGISTRY/NAME:TAG`) with its tag for the image type
/// `image_type` as Istio's `ProxyImage` makes it: `distroless` or `debug`
/// put on the tag after a `-` (replacing a known one), `default` taking it
/// off, none leaving it; an image without a tag is left as it is.
pub fn image_of_type(image: &str, image_type: &str) -> String {
    let tagged = image.rsplit_once(':').filter(|(_, tag)| !tag.contains('/'));
    match tagged {
        Some((name, tag)) if !image_type.trim().is_empty() => {
            format!("{name}:{}", injector::tag_of_type(tag, image_type.trim()))
        }
        _ => image.to_string(),
    }
}

/// The address of a revision's istiod in the control plane's namespace
/// (`istiod-canary.istio-system.svc:15012`; `istiod` for the default).
pub fn istiod_address(revision: &str, namespace: &str) -> String {
    let namespace = Some(namespace.trim())
        .filter(|ns| !ns.is_empty())
        .unwrap_or("istio-system");
    match revision.trim() {
        "" | "default" => format!("istiod.{namespace}.svc:15012"),
        revision => format!("istiod-{revision}.{namespace}.svc:15012"),
    }
}

/// A proxy config's fields in the order of Istio's message, a map's keys
/// sorted, as Go writes them.
fn in_proxy_config_order(fields: impl IntoIterator<Item = (String, Value)>) -> Map<String, Value> {
    let rank = |key: &str| {
        PROXY_CONFIG_ORDER
            .iter()
            .position(|k| *k == key)
            .unwrap_or(PROXY_CONFIG_ORDER.len())
    };
    let mut entries: Vec<(String, Value)> = fields.into_iter().collect();
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

/// The name of Istio's proxy container.
pub const PROXY: &str = "istio-proxy";

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
            pull_secrets: vec![],
        };
        assert_eq!(
            injection_status(&native, &values),
            r#"{"initContainers":["istio-init","istio-proxy"],"containers":null,"volumes":["istio-envoy","istio-data"],"imagePullSecrets":null,"revision":"default"}"#
        );
        let values = json!({"revision": "canary"})
            .as_object()
            .cloned()
            .expect("map");
        let classic = Injected {
            init_containers: vec![],
            containers: vec!["istio-proxy"],
            volumes: vec![],
            pull_secrets: vec!["a", "b"],
        };
        assert_eq!(
            injection_status(&classic, &values),
            r#"{"initContainers":null,"containers":["istio-proxy"],"volumes":null,"imagePullSecrets":["a","b"],"revision":"canary"}"#
        );
        // The status written last is kept for the next alike workload: only
        // for the same names in the same lists and the same revision.
        let moved = Injected {
            init_containers: vec!["istio-proxy"],
            containers: vec![],
            volumes: vec![],
            pull_secrets: vec!["a", "b"],
        };
        assert_eq!(
            injection_status(&moved, &values),
            r#"{"initContainers":["istio-proxy"],"containers":null,"volumes":null,"imagePullSecrets":["a","b"],"revision":"canary"}"#
        );
        let stable = json!({"revision": "stable"})
            .as_object()
            .cloned()
            .expect("map");
        assert!(injection_status(&moved, &stable).ends_with(r#""revision":"stable"}"#));
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
    fn proxy_config_fields_at_istios_defaults_are_left_out_as_protobuf_leaves_them() {
        for (key, value) in [
            ("discoveryAddress", json!("istiod.istio-system.svc:15012")),
            ("drainDuration", json!("45.000s")),
            ("terminationDrainDuration", json!("5s")),
            ("proxyAdminPort", json!(15000)),
            ("statusPort", json!(0)),
            ("controlPlaneAuthPolicy", json!("NONE")),
            ("interceptionMode", json!("REDIRECT")),
            ("proxyMetadata", json!({})),
            ("customConfigFile", json!("")),
        ] {
            assert!(at_proxy_default(key, &value), "{key}: {value}");
        }
        for (key, value) in [
            (
                "discoveryAddress",
                json!("istiod-canary.istio-system.svc:15012"),
            ),
            ("drainDuration", json!("23s")),
            ("concurrency", json!(0)),
            ("interceptionMode", json!("TPROXY")),
            ("proxyMetadata", json!({"A": "1"})),
            ("holdApplicationUntilProxyStarts", json!(false)),
        ] {
            assert!(!at_proxy_default(key, &value), "{key}: {value}");
        }
        assert_eq!(
            istiod_address("canary", ""),
            "istiod-canary.istio-system.svc:15012"
        );
        assert_eq!(istiod_address("default", "mesh"), "istiod.mesh.svc:15012");
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
    fn multus_networks_get_istios_with_its_multus_provider() {
        let networks = |provider: &str, own: &str| {
            let values = json!({"cniProvider": provider, "multusNetworks": own,
                "interceptionMode": "REDIRECT", "statusPort": 15020})
            .as_object()
            .cloned()
            .expect("map");
            cni_annotations(&values)
                .get("k8s.v1.cni.cncf.io/networks")
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        assert_eq!(networks("default", "a"), None);
        assert_eq!(networks("multus", ""), Some("default/istio-cni".into()));
        assert_eq!(networks("multus", "a"), Some("a, default/istio-cni".into()));
        assert_eq!(
            networks("multus", r#"[{"name":"a"}]"#),
            Some(r#"[{"name":"a"}, {"name": "istio-cni", "namespace": "default"}]"#.into())
        );
    }

    #[test]
    fn net_bind_service_runs_the_proxy_as_root_with_the_capability() {
        let of = |mode: &str, bind: Value| -> Map<String, Value> {
            let values = json!({"interceptionMode": mode, "proxyUID": 2000, "proxyGID": 3000,
                "capNetBindService": bind});
            interception(values.as_object().expect("map"))
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect()
        };
        let bind = of("REDIRECT", json!("true"));
        assert_eq!(bind["proxyCapabilities"], json!(["NET_BIND_SERVICE"]));
        assert_eq!(bind["proxyRunAsUser"], 0);
        assert_eq!(bind["proxyRunAsGroup"], 1337);
        assert_eq!(bind["proxyRunAsNonRoot"], false);
        // The capture's user stays the proxy's.
        assert_eq!(bind["captureUID"], 2000);
        assert_eq!(of("REDIRECT", json!(true))["proxyRunAsUser"], 0);
        let both = of("TPROXY", json!("true"));
        assert_eq!(
            both["proxyCapabilities"],
            json!(["NET_ADMIN", "NET_BIND_SERVICE"])
        );
        // Only "true" asks for it, as the template compares it.
        for other in [json!("True"), json!("yes"), json!(false), json!("")] {
            let plain = of("REDIRECT", other);
            assert_eq!(plain["proxyCapabilities"], "");
            assert_eq!(plain["proxyRunAsUser"], 2000);
        }
    }

    #[test]
    fn images_take_their_variant_on_the_tag() {
        let image = "registry.istio.io/testing/proxyv2:latest";
        assert_eq!(image_of_type(image, ""), image);
        assert_eq!(
            image_of_type(image, "distroless"),
            "registry.istio.io/testing/proxyv2:latest-distroless"
        );
        assert_eq!(
            image_of_type("localhost:5000/proxyv2:1.28.0-distroless", "debug"),
            "localhost:5000/proxyv2:1.28.0-debug"
        );
        assert_eq!(
            image_of_type("docker.io/istio/proxyv2:1.28.0-debug", "default"),
            "docker.io/istio/proxyv2:1.28.0"
        );
        // No tag: nothing to put the variant on.
        assert_eq!(
            image_of_type("localhost:5000/proxyv2", "debug"),
            "localhost:5000/proxyv2"
        );
    }

    #[test]
    fn the_variant_the_proxy_config_and_the_pod_choose_the_images() {
        let run = |values: Value, annotated: &[&str]| {
            let mut values = values.as_object().cloned().expect("map");
            complete(&mut values, &|name| annotated.contains(&name));
            (
                text_of(&values, "proxyImage"),
                text_of(&values, "proxyInitImage"),
            )
        };
        let images = json!({"proxyImage": "hub/proxyv2:1", "proxyInitImage": "hub/proxyv2:1",
            "proxyConfig": "{}", "proxyImageType": "distroless"});
        assert_eq!(
            run(images.clone(), &[]),
            (
                "hub/proxyv2:1-distroless".into(),
                "hub/proxyv2:1-distroless".into()
            )
        );
        // The proxy config's type is the proxy's, before the variant.
        let mut typed = images.clone();
        typed["proxyConfig"] = json!(r#"{"image":{"imageType":"debug"}}"#);
        assert_eq!(
            run(typed.clone(), &[]),
            (
                "hub/proxyv2:1-debug".into(),
                "hub/proxyv2:1-distroless".into()
            )
        );
        // The pod's proxyImageType wins over both.
        typed["proxyImageType"] = json!("default");
        assert_eq!(
            run(typed, &["proxyImageType"]),
            ("hub/proxyv2:1".into(), "hub/proxyv2:1".into())
        );
        // An image the pod names is taken as it is.
        assert_eq!(
            run(images, &["proxyImage", "proxyInitImage"]),
            ("hub/proxyv2:1".into(), "hub/proxyv2:1".into())
        );
    }

    #[test]
    fn hbone_in_the_proxys_metadata_labels_the_tunnel() {
        let tunnel = |mesh: &str, pod: &str| {
            let mut values = json!({"proxyConfig": mesh, "podProxyConfig": pod})
                .as_object()
                .cloned()
                .expect("map");
            complete(&mut values, &|_| false);
            text_of(&values, "hboneTunnel")
        };
        let hbone = r#"{"proxyMetadata":{"ISTIO_META_ENABLE_HBONE":"true"}}"#;
        assert_eq!(tunnel(hbone, ""), "http");
        assert_eq!(tunnel("{}", hbone), "http");
        assert_eq!(tunnel("{}", ""), "");
        assert_eq!(
            tunnel(r#"{"proxyMetadata":{"ISTIO_META_ENABLE_HBONE":"1"}}"#, ""),
            ""
        );
    }

    #[test]
    fn ephemeral_storage_is_canonical_and_left_out_with_a_resource_annotation() {
        let storage = |annotated: &[&str]| {
            let mut values = json!({"proxyConfig": "{}", "proxyCPURequest": "100m",
                "proxyEphemeralStorageRequest": "1024Mi", "proxyEphemeralStorageLimit": "2Gi"})
            .as_object()
            .cloned()
            .expect("map");
            complete(&mut values, &|name| annotated.contains(&name));
            (
                text_of(&values, "proxyEphemeralStorageRequest"),
                text_of(&values, "proxyEphemeralStorageLimit"),
            )
        };
        assert_eq!(storage(&[]), ("1Gi".into(), "2Gi".into()));
        assert_eq!(
            storage(&["proxyCPURequest"]),
            (String::new(), String::new())
        );
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
    fn on_openshift_a_proxy_user_that_is_the_apps_is_forgotten() {
        let spec = |app: Value, proxy: Value| {
            json!({"containers": [
                {"name": "app", "securityContext": {"runAsUser": app}},
                {"name": "istio-proxy", "securityContext": {"runAsUser": proxy, "runAsGroup": 5}}
            ]})
        };
        assert!(proxy_user_matches_app_user(&spec(
            json!(1000620000),
            json!(1000620000)
        )));
        assert!(!proxy_user_matches_app_user(&spec(
            json!(1000620000),
            json!(1234)
        )));
        // Neither sets one: 0 and 0.
        assert!(proxy_user_matches_app_user(&json!({"containers": [
            {"name": "app"}, {"name": "istio-proxy", "securityContext": {"runAsGroup": 5}}
        ]})));
        // The capture's containers are not the app's; the last app's counts,
        // and init containers after the containers.
        assert!(proxy_user_matches_app_user(&json!({
            "containers": [{"name": "a", "securityContext": {"runAsUser": 1}},
                {"name": "istio-proxy", "securityContext": {"runAsUser": 2}}],
            "initContainers": [{"name": "istio-init", "securityContext": {"runAsUser": 9}},
                {"name": "setup", "securityContext": {"runAsUser": 2}}]
        })));
        let user = json!({"name": "istio-proxy", "image": "auto",
            "securityContext": {"runAsUser": 1, "runAsGroup": 2, "runAsNonRoot": true}});
        assert_eq!(
            without_app_user(&user),
            json!({"name": "istio-proxy", "image": "auto", "securityContext": {"runAsNonRoot": true}})
        );
        let plain = json!({"name": "istio-proxy"});
        assert_eq!(without_app_user(&plain), plain);
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

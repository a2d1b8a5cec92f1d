//! Istio's traffic capture: the interception mode and what it asks of the
//! proxy, istio-iptables' arguments and the ports it leaves alone, and the
//! annotations its CNI plugin reads (`pkg/kube/inject/template.go`,
//! the sidecar template's capture).

use super::*;

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
/// `NET_ADMIN`, with `capNetBindService` ("true" only, as the template
/// compares it) `NET_BIND_SERVICE`, and with either runs as root (user 0,
/// group 1337), else as the proxy's user and group without added
/// capabilities.
pub fn interception(values: &Map<String, Value>) -> Vec<(&'static str, Value)> {
    let mode = text_of(values, "interceptionMode");
    let tproxy = mode == "TPROXY";
    let bind = text_of(values, "capNetBindService") == "true";
    let root = tproxy || bind;
    let id = |name: &str| match values.get(name) {
        Some(Value::Number(n)) => Value::Number(n.clone()),
        _ => Value::from(1337),
    };
    let (uid, gid) = if tproxy {
        (Value::from(1337), Value::from(1337))
    } else {
        (id("proxyUID"), id("proxyGID"))
    };
    let added: Vec<Value> = [(tproxy, "NET_ADMIN"), (bind, "NET_BIND_SERVICE")]
        .into_iter()
        .filter(|(on, _)| *on)
        .map(|(_, capability)| Value::from(capability))
        .collect();
    vec![
        ("capture", Value::Bool(mode != "NONE")),
        ("captureUID", uid),
        ("captureGID", gid),
        (
            "proxyCapabilities",
            if added.is_empty() {
                Value::String(String::new())
            } else {
                Value::Array(added)
            },
        ),
        (
            "proxyRunAsUser",
            if root { Value::from(0) } else { id("proxyUID") },
        ),
        (
            "proxyRunAsGroup",
            if root {
                Value::from(1337)
            } else {
                id("proxyGID")
            },
        ),
        ("proxyRunAsNonRoot", Value::Bool(!root)),
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

/// The network of Istio's CNI plugin that its `multus` provider adds to
/// the pod's Multus networks.
const ISTIO_CNI_NETWORK: &str = "default/istio-cni";

/// The capture's settings as Istio's template writes them for its CNI
/// plugin: with its `multus` provider (`cniProvider`) the pod's Multus
/// networks (`multusNetworks`) with Istio's added, see
/// [`multus_networks`](super::template_funcs::multus_networks); the
/// interception mode, the included and excluded inbound ports (the status
/// port among the excluded), and those of the outbound IP ranges, outbound
/// ports and interfaces that are set.
pub fn cni_annotations(values: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    let mut put = |key: &str, value: String| {
        out.insert(key.to_string(), Value::String(value));
    };
    if text_of(values, "cniProvider") == "multus" {
        put(
            "k8s.v1.cni.cncf.io/networks",
            super::template_funcs::multus_networks(
                &text_of(values, "multusNetworks"),
                ISTIO_CNI_NETWORK,
            ),
        );
    }
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

//! Values Linkerd's injector derives (linkerd2 `pkg/inject/inject.go` and
//! the chart partial `charts/partials/templates/_proxy.tpl`, edge-26.8.3).

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::text_of;
use crate::admission::quantity::Quantity;
use crate::json::Field;

/// The values [`complete`] adds.
pub const DERIVED: &[&str] = &[
    "trustRootSHA256",
    "proxyCoresMin",
    "proxyCoresMax",
    "proxyLog",
    "initInboundPortsToIgnore",
    "initOutboundArgs",
    "initGIDArgs",
    "initSubnetArgs",
    "proxyGroup",
    "profileSuffixes",
];

/// The values that hold the proxy's resource quantities.
const RESOURCES: [&str; 6] = [
    "proxyCPURequest",
    "proxyCPULimit",
    "proxyMemoryRequest",
    "proxyMemoryLimit",
    "proxyEphemeralStorageRequest",
    "proxyEphemeralStorageLimit",
];

/// Add Linkerd's derived values to `values`:
/// - `trustAnchorsPEM` as the proxy's env carries it (trimmed, one final
///   line break: the chart writes it `| trim` into a literal block), and
///   `trustRootSHA256`, the hex SHA-256 of it (`linkerd.io/trust-root-sha256`);
/// - the resource quantities in Kubernetes' canonical form (`0.5` → `500m`);
/// - `proxyCoresMin` and `proxyCoresMax`, the proxy's worker threads: the CPU
///   request and limit in whole cores, rounded up (at least 1; no maximum
///   without a limit);
/// - `proxyLog`, the log filter, with HTTP headers and requests kept out of
///   the log unless `logHTTPHeaders` is `insecure`;
/// - the init container's optional arguments: the inbound ports its rules
///   skip (the proxy's control and admin ports, then `skipInboundPorts`),
///   `--outbound-ports-to-ignore` only with ports to skip, `--proxy-gid` only
///   with a group (`proxyGroup`, the proxy's `runAsGroup`, a number or empty),
///   `--subnets-to-ignore` only with subnets;
/// - `profileSuffixes`, where the proxy looks service profiles up: every name
///   (`.`) with `enableExternalProfiles`, else the cluster's (`svc.DOMAIN.`).
pub fn complete(values: &mut Map<String, Value>) {
    let anchors = text_of(values, "trustAnchorsPEM");
    let anchors = anchors.trim();
    let (anchors, hash) = if anchors.is_empty() {
        (String::new(), String::new())
    } else {
        let anchors = format!("{anchors}\n");
        let hash = hex(&Sha256::digest(anchors.as_bytes()));
        (anchors, hash)
    };
    if values.contains_key("trustAnchorsPEM") {
        values.insert("trustAnchorsPEM".into(), Value::String(anchors));
    }
    values.insert("trustRootSHA256".into(), Value::String(hash));

    // Resources as Kubernetes writes quantities (`0.5` is `500m`).
    for name in RESOURCES {
        if let Some(quantity) = Quantity::parse(text_of(values, name).trim()) {
            values.insert(name.to_string(), Value::String(quantity.to_string()));
        }
    }
    let cores = |name: &str| whole_cores(&text_of(values, name));
    let min = cores("proxyCPURequest").unwrap_or(1);
    let max = cores("proxyCPULimit").map_or(String::new(), |n| n.to_string());
    values.insert("proxyCoresMin".into(), Value::String(min.to_string()));
    values.insert("proxyCoresMax".into(), Value::String(max));

    let mut log = text_of(values, "logLevel");
    if text_of(values, "logHTTPHeaders") != "insecure" {
        log.push_str(",[{headers}]=off,[{request}]=off");
    }
    values.insert("proxyLog".into(), Value::String(log));

    let mut inbound = format!(
        "{},{}",
        text_of(values, "controlPort"),
        text_of(values, "adminPort")
    );
    let skip_inbound = text_of(values, "skipInboundPorts");
    if !skip_inbound.is_empty() {
        inbound.push(',');
        inbound.push_str(&skip_inbound);
    }
    values.insert("initInboundPortsToIgnore".into(), Value::String(inbound));
    let flag_with = |flag: &str, value: String| -> Value {
        if value.is_empty() {
            Value::Array(Vec::new())
        } else {
            Value::Array(vec![Value::String(flag.into()), Value::String(value)])
        }
    };
    let outbound = flag_with(
        "--outbound-ports-to-ignore",
        text_of(values, "skipOutboundPorts"),
    );
    values.insert("initOutboundArgs".into(), outbound);
    // A negative group is Linkerd's way of saying none.
    let gid = text_of(values, "proxyGID").trim().parse::<u32>().ok();
    let gid_text = gid.map_or(String::new(), |g| g.to_string());
    values.insert("initGIDArgs".into(), flag_with("--proxy-gid", gid_text));
    let group = gid.map_or(Value::String(String::new()), Value::from);
    values.insert("proxyGroup".into(), group);
    let subnets = flag_with("--subnets-to-ignore", text_of(values, "skipSubnets"));
    values.insert("initSubnetArgs".into(), subnets);

    // Service profiles are looked up for every name, or the cluster's only.
    let suffixes = if text_of(values, "enableExternalProfiles") == "true" {
        ".".to_string()
    } else {
        format!("svc.{}.", text_of(values, "clusterDomain"))
    };
    values.insert("profileSuffixes".into(), Value::String(suffixes));
}

/// The annotation of the ports whose protocol the proxy does not detect.
const OPAQUE_PORTS: &str = "config.linkerd.io/opaque-ports";

/// What Linkerd's webhook writes on a pod besides the proxy: the settings
/// the pod inherited from its namespace (those `inherited` holds and `has`
/// does not), and, when neither the pod nor its namespace says which ports
/// are opaque, the container ports (init containers first) that are in the
/// opaque ports in force, so that Linkerd's controllers see them too.
pub fn webhook_annotations(
    spec: &Value,
    has: &dyn Fn(&str) -> bool,
    inherited: Option<&Map<String, Value>>,
    values: &Map<String, Value>,
) -> Map<String, Value> {
    let mut out: Map<String, Value> = inherited
        .into_iter()
        .flatten()
        .filter(|(key, _)| !has(key))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    if has(OPAQUE_PORTS) || out.contains_key(OPAQUE_PORTS) {
        return out;
    }
    let opaque = text_of(values, "opaquePorts");
    let opaque: Vec<&str> = opaque.split(',').map(str::trim).collect();
    let exposed: Vec<String> = ["initContainers", "containers"]
        .iter()
        .filter_map(|list| spec.field(list).and_then(Value::as_array))
        .flatten()
        .filter_map(|c| c.field("ports").and_then(Value::as_array))
        .flatten()
        .filter_map(|p| p.field("containerPort").and_then(Value::as_u64))
        .map(|port| port.to_string())
        .filter(|port| opaque.contains(&port.as_str()))
        .collect();
    if !exposed.is_empty() {
        out.insert(OPAQUE_PORTS.into(), Value::String(exposed.join(",")));
    }
    out
}

/// A CPU quantity in whole cores, rounded up (`110m` → 1, `2500m` → 3);
/// `None` when it is empty or not a quantity.
fn whole_cores(text: &str) -> Option<i128> {
    let quantity = Quantity::parse(text.trim())?;
    let milli = quantity.milli_value();
    Some((milli + 999).div_euclid(1000))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn completed(values: Value) -> Map<String, Value> {
        let Value::Object(mut values) = values else {
            panic!("an object")
        };
        complete(&mut values);
        values
    }

    /// `printf 'PEM\n' | sha256sum`
    const PEM_SHA256: &str = "a0278171ab77da84cdf84cc11c10e4d8923a3aadc855775d8aae2b6a9333415e";

    #[test]
    fn the_trust_root_hash_is_of_the_anchors_with_one_final_line_break() {
        // echo -n 'PEM\n' | sha256sum, whatever the spaces around the PEM.
        for pem in ["PEM", "PEM\n", "\n PEM \n\n"] {
            let values = completed(json!({"trustAnchorsPEM": pem}));
            assert_eq!(values["trustAnchorsPEM"], "PEM\n");
            assert_eq!(values["trustRootSHA256"], PEM_SHA256);
        }
        let none = completed(json!({"trustAnchorsPEM": ""}));
        assert_eq!(none["trustRootSHA256"], "");
    }

    #[test]
    fn sha256_is_the_standard_one() {
        assert_eq!(
            hex(&Sha256::digest(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn cores_round_up_from_the_cpu_request_and_limit() {
        let values = completed(json!({"proxyCPURequest": "110m", "proxyCPULimit": "2500m"}));
        assert_eq!(values["proxyCoresMin"], "1");
        assert_eq!(values["proxyCoresMax"], "3");
        let values = completed(json!({"proxyCPURequest": "2", "proxyCPULimit": ""}));
        assert_eq!(values["proxyCoresMin"], "2");
        assert_eq!(values["proxyCoresMax"], "");
        let values = completed(json!({}));
        assert_eq!(values["proxyCoresMin"], "1");
    }

    #[test]
    fn resources_are_written_as_kubernetes_writes_quantities() {
        let values = completed(
            json!({"proxyCPURequest": "0.5", "proxyMemoryLimit": "1Gi", "proxyCPULimit": ""}),
        );
        assert_eq!(values["proxyCPURequest"], "500m");
        assert_eq!(values["proxyMemoryLimit"], "1Gi");
        assert_eq!(values["proxyCPULimit"], "");
    }

    #[test]
    fn init_arguments_appear_only_with_their_values() {
        let values = completed(json!({"controlPort": 4190, "adminPort": 4191,
            "skipInboundPorts": "22", "skipOutboundPorts": "", "proxyGID": -1}));
        assert_eq!(values["initInboundPortsToIgnore"], "4190,4191,22");
        assert_eq!(values["initOutboundArgs"], json!([]));
        assert_eq!(values["initGIDArgs"], json!([]));
        let values = completed(json!({"controlPort": 4190, "adminPort": 4191,
            "skipInboundPorts": "", "skipOutboundPorts": "5432", "proxyGID": "7"}));
        assert_eq!(values["initInboundPortsToIgnore"], "4190,4191");
        assert_eq!(
            values["initOutboundArgs"],
            json!(["--outbound-ports-to-ignore", "5432"])
        );
        assert_eq!(values["initGIDArgs"], json!(["--proxy-gid", "7"]));
        assert_eq!(values["proxyGroup"], json!(7));
    }

    #[test]
    fn the_webhook_marks_the_exposed_opaque_ports() {
        let spec = json!({"initContainers": [{"ports": [{"containerPort": 11211}]}],
            "containers": [{"ports": [{"containerPort": 8080}, {"containerPort": 3306}]}]});
        let values = completed(json!({"opaquePorts": "25,3306,11211"}));
        let none = |_: &str| false;
        let got = webhook_annotations(&spec, &none, None, &values);
        assert_eq!(
            got,
            json!({OPAQUE_PORTS: "11211,3306"})
                .as_object()
                .cloned()
                .expect("map")
        );
        // The pod's own annotation, or its namespace's, stands.
        let own = |key: &str| key == OPAQUE_PORTS;
        assert!(webhook_annotations(&spec, &own, None, &values).is_empty());
        let inherited = json!({OPAQUE_PORTS: "5432", "config.linkerd.io/proxy-uid": "7"});
        let got = webhook_annotations(&spec, &none, inherited.as_object(), &values);
        assert_eq!(got, inherited.as_object().cloned().expect("map"));
    }

    #[test]
    fn http_headers_stay_out_of_the_log_unless_insecure() {
        let values = completed(json!({"logLevel": "warn", "logHTTPHeaders": "off"}));
        assert_eq!(values["proxyLog"], "warn,[{headers}]=off,[{request}]=off");
        let values = completed(json!({"logLevel": "warn", "logHTTPHeaders": "insecure"}));
        assert_eq!(values["proxyLog"], "warn");
    }
}

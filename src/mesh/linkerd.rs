//! Values Linkerd's injector derives (linkerd2 `pkg/inject/inject.go` and
//! the chart partial `charts/partials/templates/_proxy.tpl`, edge-26.8.3).

pub mod chart;
pub mod chart_values;

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
    "proxyCoresMaxRatio",
    "proxyLog",
    "initInboundPortsToIgnore",
    "initOutboundArgs",
    "initGIDArgs",
    "initSubnetArgs",
    "proxyGroup",
    "profileSuffixes",
    "proxyParamsEnv",
    "proxyAnyAddress",
    "outboundListenAddrs",
    "initFirewallArgs",
    "initIPv6Args",
    "initCloseWaitArgs",
    "initLogArgs",
    "initPrivileged",
    "initRunAsUser",
    "initRunAsGroup",
    "initRunAsNonRoot",
    "debugImageRef",
    "debugPullPolicy",
    "proxyAwait",
    "proxySecurity",
    "initCapabilitiesAdd",
    "initCapabilitiesDrop",
    "proxySAMount",
    "identityTokenFile",
    "validatorConnectAddr",
    "validatorListenAddr",
    "validatorSecurity",
    "tracingEnv",
];

/// The probes' numbers: a zero is no field (Kubernetes' default), as Go
/// writes a zero it omits.
const PROBE_NUMBERS: [&str; 7] = [
    "livenessProbeInitialDelaySeconds",
    "livenessProbeTimeoutSeconds",
    "readinessProbeInitialDelaySeconds",
    "readinessProbeTimeoutSeconds",
    "startupProbeInitialDelaySeconds",
    "startupProbePeriodSeconds",
    "startupProbeFailureThreshold",
];

/// The xtables lock's volume, the one Linkerd's injector adds whatever
/// `proxyInit.xtMountPath.name` says.
const XTABLES_VOLUME: &str = "linkerd-proxy-init-xtables-lock";

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
///   `trustRootSHA256`, the hex SHA-256 of the anchors as given
///   (`linkerd.io/trust-root-sha256`: Linkerd's webhook hashes the file it
///   mounts from the trust-roots ConfigMap, `|-` or `|` as written);
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
///   (`.`) with `enableExternalProfiles`, else the cluster's (`svc.DOMAIN.`);
/// - `proxyParamsEnv`, one env entry per inbound and outbound parameter;
/// - the addresses the proxy listens on, IPv4 only with `disableIPv6`;
/// - the init container's iptables, IPv6, close-wait and log arguments, and
///   its security (privileged for a close-wait timeout, root when asked);
/// - the debug container's image and pull policy, the proxy's by default.
pub fn complete(values: &mut Map<String, Value>, for_workload: &dyn Fn(&str) -> bool) {
    // Linkerd hashes the anchors as given (the file mounted from the
    // trust-roots ConfigMap, final line break or not); the env carries them
    // trimmed with one final line break. Values completed already keep theirs.
    if !values.contains_key("trustRootSHA256") {
        let given = text_of(values, "trustAnchorsPEM");
        let (anchors, hash) = if given.trim().is_empty() {
            (String::new(), String::new())
        } else {
            let hash = hex(&Sha256::digest(given.as_bytes()));
            (format!("{}\n", given.trim()), hash)
        };
        if values.contains_key("trustAnchorsPEM") {
            values.insert("trustAnchorsPEM".into(), Value::String(anchors));
        }
        values.insert("trustRootSHA256".into(), Value::String(hash));
    }

    // Resources as Kubernetes writes quantities (`0.5` is `500m`).
    for name in RESOURCES {
        if let Some(quantity) = Quantity::parse(text_of(values, name).trim()) {
            values.insert(name.to_string(), Value::String(quantity.to_string()));
        }
    }
    let (min, max, ratio) = cores(values, for_workload);
    values.insert("proxyCoresMin".into(), Value::String(min));
    values.insert("proxyCoresMax".into(), Value::String(max));
    values.insert("proxyCoresMaxRatio".into(), Value::String(ratio));

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

    let params = params_env(values);
    values.insert("proxyParamsEnv".into(), Value::Array(params));

    let ipv4_only = text_of(values, "disableIPv6") != "false";
    let outbound = text_of(values, "outboundPort");
    let any = if ipv4_only { "0.0.0.0" } else { "[::]" };
    let mut outbound_addrs = format!("127.0.0.1:{outbound}");
    if !ipv4_only {
        outbound_addrs.push_str(&format!(",[::1]:{outbound}"));
    }
    values.insert("proxyAnyAddress".into(), Value::String(any.into()));
    values.insert("outboundListenAddrs".into(), Value::String(outbound_addrs));
    complete_init(values, ipv4_only);

    let or = |own: &str, fallback: &str| {
        let own = text_of(values, own);
        if own.is_empty() {
            text_of(values, fallback)
        } else {
            own
        }
    };
    let debug_image = format!(
        "{}:{}",
        text_of(values, "debugImage"),
        or("debugImageVersion", "linkerdVersion")
    );
    let debug_pull = or("debugImagePullPolicy", "linkerdImagePullPolicy");
    // The app waits for the proxy unless the proxy goes last.
    let awaits = text_of(values, "proxyPosition") != "last";
    values.insert("proxyAwait".into(), Value::Bool(awaits));
    values.insert("debugImageRef".into(), Value::String(debug_image));
    values.insert("debugPullPolicy".into(), Value::String(debug_pull));
    complete_partials(values, ipv4_only);
}

/// The init container's values: its iptables, IPv6 (`ipv4_only`: none),
/// close-wait and log arguments, and its security (privileged for a
/// close-wait timeout, root when asked).
fn complete_init(values: &mut Map<String, Value>, ipv4_only: bool) {
    let args = |items: &[&str]| Value::Array(items.iter().map(|&a| Value::from(a)).collect());
    let firewall = if text_of(values, "iptablesMode") == "legacy" {
        args(&[])
    } else {
        args(&[
            "--firewall-bin-path",
            "iptables-nft",
            "--firewall-save-bin-path",
            "iptables-nft-save",
        ])
    };
    values.insert("initFirewallArgs".into(), firewall);
    let ipv6 = if ipv4_only {
        args(&["--ipv6=false"])
    } else {
        args(&[])
    };
    values.insert("initIPv6Args".into(), ipv6);
    let close_wait = close_wait_seconds(&text_of(values, "closeWaitTimeout")).unwrap_or(0);
    let close_wait_text = if close_wait > 0 {
        close_wait.to_string()
    } else {
        String::new()
    };
    values.insert(
        "initCloseWaitArgs".into(),
        flag_with("--timeout-close-wait-secs", close_wait_text),
    );
    let mut log = flag_with("--log-format", text_of(values, "proxyInitLogFormat"));
    if let (Value::Array(log), Value::Array(level)) = (
        &mut log,
        flag_with("--log-level", text_of(values, "proxyInitLogLevel")),
    ) {
        log.extend(level);
    }
    values.insert("initLogArgs".into(), log);
    let privileged = close_wait > 0 || text_of(values, "proxyInitPrivileged") == "true";
    values.insert("initPrivileged".into(), Value::Bool(privileged));
    let root = text_of(values, "proxyInitRunAsRoot") == "true";
    // Linkerd's chart takes 0 (root by mistake) for its default, 65534.
    let id = |name: &str| match text_of(values, name).trim().parse::<i64>() {
        Ok(0) | Err(_) => 65534,
        Ok(id) => id,
    };
    let (user, group) = if root {
        (0, 0)
    } else {
        (id("proxyInitUID"), id("proxyInitGID"))
    };
    values.insert("initRunAsUser".into(), Value::from(user));
    values.insert("initRunAsGroup".into(), Value::from(group));
    values.insert("initRunAsNonRoot".into(), Value::Bool(!root));
}

/// The values the chart's partials read beside the env: the probes'
/// numbers, the proxy's and the init container's security, the service
/// account token's mount, the identity token's file, the network
/// validator's addresses and security, and tracing's env.
fn complete_partials(values: &mut Map<String, Value>, ipv4_only: bool) {
    for name in PROBE_NUMBERS {
        if values.get(name).is_some_and(|v| v.as_u64() == Some(0)) {
            values.insert(name.into(), Value::String(String::new()));
        }
    }
    let names = |map: Option<&Map<String, Value>>, key: &str| -> Vec<Value> {
        map.and_then(|m| m.get(key))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let proxy_caps = non_empty_map(values, "proxyCapabilities");
    let security = match non_empty_map(values, "proxySecurityContext") {
        Some(given) => Value::Object(given),
        None => {
            let mut context = Map::new();
            context.insert("allowPrivilegeEscalation".into(), Value::Bool(false));
            let mut caps = Map::new();
            for key in ["add", "drop"] {
                let list = names(proxy_caps.as_ref(), key);
                if !list.is_empty() {
                    caps.insert(key.into(), Value::Array(list));
                }
            }
            if !caps.is_empty() {
                context.insert("capabilities".into(), Value::Object(caps));
            }
            context.insert("readOnlyRootFilesystem".into(), Value::Bool(true));
            context.insert("runAsNonRoot".into(), Value::Bool(true));
            let uid = values.get("proxyUID").cloned().unwrap_or(Value::Null);
            context.insert("runAsUser".into(), uid);
            if let Some(group) = values.get("proxyGroup").filter(|g| g.is_number()) {
                context.insert("runAsGroup".into(), group.clone());
            }
            context.insert(
                "seccompProfile".into(),
                serde_json::json!({"type": "RuntimeDefault"}),
            );
            Value::Object(context)
        }
    };
    values.insert("proxySecurity".into(), security);
    // The init container adds the proxy's capabilities and drops what the
    // proxy drops but what its rules need; else the cluster's own for it.
    let (extra_add, drop) = match &proxy_caps {
        Some(caps) => {
            let drop = names(Some(caps), "drop")
                .into_iter()
                .filter(|c| !matches!(c.as_str(), Some("NET_RAW" | "NET_ADMIN")))
                .collect();
            (names(Some(caps), "add"), drop)
        }
        None => {
            let init = non_empty_map(values, "proxyInitCapabilities");
            (names(init.as_ref(), "add"), names(init.as_ref(), "drop"))
        }
    };
    let mut add = vec![Value::from("NET_ADMIN"), Value::from("NET_RAW")];
    add.extend(extra_add);
    values.insert("initCapabilitiesAdd".into(), Value::Array(add));
    let drop = if drop.is_empty() {
        Value::String(String::new())
    } else {
        Value::Array(drop)
    };
    values.insert("initCapabilitiesDrop".into(), drop);
    let mount = non_empty_map(values, "proxySAMountPath").map_or(Vec::new(), |given| {
        let field = |key: &str| given.get(key).cloned().unwrap_or(Value::Null);
        let read_only = given.get("readOnly").and_then(Value::as_bool) == Some(true);
        vec![serde_json::json!({
            "mountPath": field("mountPath"),
            "name": field("name"),
            "readOnly": read_only,
        })]
    });
    values.insert("proxySAMount".into(), Value::Array(mount));
    let projected = text_of(values, "serviceAccountTokenProjection") != "false";
    let token = if projected {
        "/var/run/secrets/tokens/linkerd-identity-token"
    } else {
        "/var/run/secrets/kubernetes.io/serviceaccount/token"
    };
    values.insert("identityTokenFile".into(), Value::String(token.into()));
    let or = |own: &str, v4: &str, v6: &str| {
        let own = text_of(values, own);
        match (own.is_empty(), ipv4_only) {
            (false, _) => own,
            (true, true) => v4.to_string(),
            (true, false) => v6.to_string(),
        }
    };
    let connect = or(
        "networkValidatorConnectAddr",
        "1.1.1.1:20001",
        "[fd00::1]:20001",
    );
    let listen = or("networkValidatorListenAddr", "0.0.0.0:4140", "[::]:4140");
    values.insert("validatorConnectAddr".into(), Value::String(connect));
    values.insert("validatorListenAddr".into(), Value::String(listen));
    let validator = if text_of(values, "networkValidatorEnableSecurityContext") == "false" {
        Value::String(String::new())
    } else {
        non_empty_map(values, "networkValidatorSecurityContext").map_or_else(
            || {
                serde_json::json!({
                    "allowPrivilegeEscalation": false,
                    "capabilities": {"drop": ["ALL"]},
                    "readOnlyRootFilesystem": true,
                    "runAsGroup": 65534,
                    "runAsNonRoot": true,
                    "runAsUser": 65534,
                    "seccompProfile": {"type": "RuntimeDefault"},
                })
            },
            Value::Object,
        )
    };
    values.insert("validatorSecurity".into(), validator);
    let tracing = tracing_env(values);
    values.insert("tracingEnv".into(), Value::Array(tracing));
}

/// The mapping `values[name]`, when it is one with entries.
fn non_empty_map(values: &Map<String, Value>, name: &str) -> Option<Map<String, Value>> {
    match values.get(name) {
        Some(Value::Object(map)) if !map.is_empty() => Some(map.clone()),
        _ => None,
    }
}

/// The proxy's tracing env, as the chart writes it when tracing is
/// enabled: where the pod's labels are mounted, the protocol
/// (`opentelemetry` by default), the service name, the collector's address
/// and identity, and the spans' attributes (`key=value` lines in key order).
fn tracing_env(values: &Map<String, Value>) -> Vec<Value> {
    if text_of(values, "tracingEnabled") != "true" {
        return Vec::new();
    }
    let entry = |name: &str, value: String| serde_json::json!({"name": name, "value": value});
    let protocol = match text_of(values, "tracingProtocol") {
        empty if empty.is_empty() => "opentelemetry".to_string(),
        given => given,
    };
    let identity = format!(
        "{}.{}.serviceaccount.identity.{}.{}",
        text_of(values, "tracingCollectorServiceAccount"),
        text_of(values, "tracingCollectorNamespace"),
        text_of(values, "controlPlaneNamespace"),
        text_of(values, "trustDomain"),
    );
    vec![
        entry(
            "LINKERD2_PROXY_TRACE_ATTRIBUTES_PATH",
            "/var/run/linkerd/podinfo/labels".into(),
        ),
        entry(
            "LINKERD2_PROXY_TRACE_ANNOTATIONS_PATH",
            "/var/run/linkerd/podinfo/annotations".into(),
        ),
        entry("LINKERD2_PROXY_TRACE_PROTOCOL", protocol),
        entry(
            "LINKERD2_PROXY_TRACE_SERVICE_NAME",
            text_of(values, "tracingServiceName"),
        ),
        entry(
            "LINKERD2_PROXY_TRACE_COLLECTOR_SVC_ADDR",
            text_of(values, "tracingCollectorEndpoint"),
        ),
        entry("LINKERD2_PROXY_TRACE_COLLECTOR_SVC_NAME", identity),
        entry(
            "LINKERD2_PROXY_TRACE_EXTRA_ATTRIBUTES",
            trace_attributes(values.get("tracingLabels"), None, None),
        ),
    ]
}

/// The spans' attributes as the chart writes them (`key=value` lines in
/// key order): the cluster's `labels`, and, as Linkerd's webhook adds them
/// for a pod, `service.name` from its `app.kubernetes.io/instance` (else
/// `app.kubernetes.io/name`) label and each `resource.opentelemetry.io/`
/// annotation's name and value, over them.
pub fn trace_attributes(
    labels: Option<&Value>,
    pod_labels: Option<&Map<String, Value>>,
    pod_annotations: Option<&Map<String, Value>>,
) -> String {
    let mut attributes: Vec<(String, String)> = Vec::new();
    let mut set = |key: &str, value: &Value| {
        let value = match value {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        attributes.retain(|(k, _)| k != key);
        attributes.push((key.to_string(), value));
    };
    for (key, value) in labels.and_then(Value::as_object).into_iter().flatten() {
        set(key, value);
    }
    let label = |key: &str| pod_labels.and_then(|l| l.get(key));
    if let Some(name) =
        label("app.kubernetes.io/instance").or_else(|| label("app.kubernetes.io/name"))
    {
        set("service.name", name);
    }
    for (key, value) in pod_annotations.into_iter().flatten() {
        if let Some(attribute) = key.strip_prefix("resource.opentelemetry.io/") {
            set(attribute, value);
        }
    }
    attributes.sort();
    attributes
        .iter()
        .map(|(k, v)| format!("{k}={v}\n"))
        .collect()
}

/// Why Linkerd's injector would fail on these values, if it would: its
/// chart refuses an iptables mode other than nft or legacy, and a
/// close-wait timeout unless the init container runs as root.
pub fn refusal(values: &Map<String, Value>) -> Option<String> {
    if text_of(values, "tracingEnabled") == "true" {
        for (name, path) in [
            (
                "tracingCollectorEndpoint",
                "proxy.tracing.collector.endpoint",
            ),
            (
                "tracingCollectorServiceAccount",
                "proxy.tracing.collector.meshIdentity.serviceAccountName",
            ),
            (
                "tracingCollectorNamespace",
                "proxy.tracing.collector.meshIdentity.namespace",
            ),
        ] {
            if text_of(values, name).is_empty() {
                return Some(format!(
                    "Linkerd's injector fails on it: {path} ({name}) must be set if proxy tracing is enabled"
                ));
            }
        }
    }
    let mode = text_of(values, "iptablesMode");
    if let Err(problem) = check_value("iptablesMode", &mode) {
        return Some(format!(
            "Linkerd's injector fails on it: iptablesMode {problem}"
        ));
    }
    let close_wait = close_wait_seconds(&text_of(values, "closeWaitTimeout")).unwrap_or(0);
    (close_wait > 0 && text_of(values, "proxyInitRunAsRoot") != "true").then(|| {
        "Linkerd's injector fails on it: a close-wait timeout (config.linkerd.io/close-wait-timeout) \
         needs the init container to run as root (proxyInit.runAsRoot in the cluster's values, or \
         --set proxyInitRunAsRoot=true)"
            .to_string()
    })
}

/// Whether Linkerd's chart can render with `raw` for `name`: its init
/// container's iptables are `nft` or `legacy`, nothing else.
pub fn check_value(name: &str, raw: &str) -> Result<(), String> {
    match name {
        "iptablesMode" if !matches!(raw, "" | "nft" | "legacy") => Err(format!(
            "{raw:?} is not nft or legacy, the iptables Linkerd's init container runs"
        )),
        "trustAnchorsPEM" if !raw.trim().is_empty() => check_anchors(raw),
        "proxyInitXtablesMountName" if raw != XTABLES_VOLUME => Err(format!(
            "{raw:?}: Linkerd's injector adds the volume {XTABLES_VOLUME} whatever this names, \
             so the init container would mount a volume the pod lacks, which the apiserver refuses"
        )),
        _ => Ok(()),
    }
}

/// Whether `pem` is trust anchors a proxy can take: one or more PEM blocks,
/// each an X.509 certificate (what Linkerd's identity reads them as).
pub fn check_anchors(pem: &str) -> Result<(), String> {
    use x509_cert::der::DecodePem;
    const BEGIN: &str = "-----BEGIN ";
    const END: &str = "-----END ";
    let mut rest = pem;
    let mut count = 0;
    while let Some(start) = rest.find(BEGIN) {
        count += 1;
        let block = rest.get(start..).unwrap_or_default();
        let Some(end) = block.find(END) else {
            return Err(format!("PEM block {count} has no END line"));
        };
        let after = block.get(end + END.len()..).unwrap_or_default();
        let close = after
            .find("-----")
            .map_or(after.len(), |i| i + "-----".len());
        let length = end + END.len() + close;
        let text = block.get(..length).unwrap_or(block);
        x509_cert::Certificate::from_pem(text.as_bytes()).map_err(|e| {
            format!("PEM block {count} is not an X.509 certificate ({e}); the trust anchors are the PEM of the ca-bundle.crt of the cluster's linkerd-identity-trust-roots ConfigMap")
        })?;
        rest = block.get(length..).unwrap_or_default();
    }
    if count == 0 {
        return Err("no PEM block (-----BEGIN CERTIFICATE-----): the trust anchors are the PEM of the ca-bundle.crt of the cluster's linkerd-identity-trust-roots ConfigMap".into());
    }
    Ok(())
}

/// `[flag, value]`, or nothing for an empty value: an optional argument.
fn flag_with(flag: &str, value: String) -> Value {
    if value.is_empty() {
        Value::Array(Vec::new())
    } else {
        Value::Array(vec![Value::String(flag.into()), Value::String(value)])
    }
}

/// The close-wait timeout in whole seconds: a Go duration (`90s`, `1m30s`,
/// the annotation's form) or a number of seconds (the cluster's values'
/// `closeWaitTimeoutSecs`). `None` when it is neither.
pub(crate) fn close_wait_seconds(text: &str) -> Option<u64> {
    let text = text.trim();
    if text.is_empty() {
        return Some(0);
    }
    if let Ok(seconds) = text.parse::<u64>() {
        return Some(seconds);
    }
    go_duration_seconds(text).map(|s| s.max(0.0) as u64)
}

/// A duration as Go's `time.ParseDuration` reads it (`300ms`, `-1.5h`,
/// `2h45m`), in seconds as Go's `Duration.Seconds` gives them (from whole
/// nanoseconds, so `1001ms` is 1.0009999… s, as Linkerd computes it).
pub fn go_duration_seconds(text: &str) -> Option<f64> {
    let nanos = go_duration_nanos(text)?;
    const SECOND: i64 = 1_000_000_000;
    Some((nanos / SECOND) as f64 + (nanos % SECOND) as f64 / 1e9)
}

/// A duration in whole nanoseconds, as Go's `time.ParseDuration` reads it.
fn go_duration_nanos(text: &str) -> Option<i64> {
    let (sign, rest) = match text.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, text.strip_prefix('+').unwrap_or(text)),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    // Alternating runs: a number (whole part, then fraction), then its unit.
    let mut total: i64 = 0;
    let mut chars = rest.chars().peekable();
    while chars.peek().is_some() {
        let mut whole = String::new();
        while let Some(c) = chars.next_if(char::is_ascii_digit) {
            whole.push(c);
        }
        let mut fraction = String::new();
        if chars.next_if_eq(&'.').is_some() {
            while let Some(c) = chars.next_if(char::is_ascii_digit) {
                fraction.push(c);
            }
        }
        if whole.is_empty() && fraction.is_empty() {
            return None;
        }
        let mut unit_text = String::new();
        while let Some(c) = chars.next_if(|c| !c.is_ascii_digit() && *c != '.') {
            unit_text.push(c);
        }
        let unit: i64 = match unit_text.as_str() {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        let whole: i64 = if whole.is_empty() {
            0
        } else {
            whole.parse().ok()?
        };
        let mut value = whole.checked_mul(unit)?;
        if !fraction.is_empty() {
            // Go keeps the fraction's digits as an integer over a power of ten.
            let digits = fraction.get(..fraction.len().min(18)).unwrap_or(&fraction);
            let numerator: i64 = digits.parse().ok()?;
            let scale = 10f64.powi(i32::try_from(digits.len()).ok()?);
            value = value.checked_add((numerator as f64 * (unit as f64 / scale)) as i64)?;
        }
        total = total.checked_add(value)?;
    }
    Some(sign * total)
}

/// The env entries of the proxy's parameters: `proxyInboundParams` and
/// `proxyOutboundParams` hold scope → protocol → name → value, and each
/// becomes `LINKERD2_PROXY_{INBOUND|OUTBOUND}_{SCOPE}_{PROTO}_{NAME}`, the
/// names in upper snake case and every level in key order, as Linkerd's
/// chart writes them.
fn params_env(values: &Map<String, Value>) -> Vec<Value> {
    let mut env = Vec::new();
    for (direction, name) in [
        ("inbound", "proxyInboundParams"),
        ("outbound", "proxyOutboundParams"),
    ] {
        let Some(Value::Object(scopes)) = values.get(name) else {
            continue;
        };
        for (scope, protocols) in sorted(scopes) {
            let Value::Object(protocols) = protocols else {
                continue;
            };
            for (protocol, params) in sorted(protocols) {
                let Value::Object(params) = params else {
                    continue;
                };
                for (param, value) in sorted(params) {
                    let value = match value {
                        Value::String(text) => text.clone(),
                        Value::Number(_) | Value::Bool(_) => value.to_string(),
                        _ => continue,
                    };
                    let name = ["linkerd2_proxy", direction, scope, protocol, param]
                        .map(snake_case)
                        .join("_")
                        .to_uppercase();
                    env.push(serde_json::json!({"name": name, "value": value}));
                }
            }
        }
    }
    env
}

fn sorted(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<_> = map.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    entries
}

/// A name in snake case, as Linkerd's chart's `snakecase` writes it:
/// `keepAliveInterval` → `keep_alive_interval`, `HTTPServer` →
/// `http_server`, `http2` → `http2`, `http2xx` → `http_2xx`; anything but
/// letters and digits separates words.
fn snake_case(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::new();
    let mut separated = false;
    let mut before: Option<char> = None;
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            separated = true;
            before = None;
            continue;
        }
        let after = chars.get(i + 1).copied();
        let starts_word = match before {
            None => false,
            // fooBar, foo2Bar
            Some(b) if c.is_uppercase() && (b.is_lowercase() || b.is_ascii_digit()) => true,
            // HTTPServer: the last capital of a run starts the next word.
            Some(b) if c.is_uppercase() && b.is_uppercase() => {
                after.is_some_and(char::is_lowercase)
            }
            // http2xx: digits followed by lower case start a word; http2 does not.
            Some(b) if c.is_ascii_digit() && b.is_alphabetic() => chars
                .iter()
                .skip(i)
                .find(|d| !d.is_ascii_digit())
                .is_some_and(|r| r.is_lowercase()),
            _ => false,
        };
        if (starts_word || separated) && !out.is_empty() {
            out.push('_');
        }
        separated = false;
        before = Some(c);
        out.extend(c.to_lowercase());
    }
    out
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

/// The proxy's worker threads: minimum, maximum (empty for none) and
/// maximum ratio of the node's CPUs (empty for none). A fixed `proxyCores`
/// (the cluster's deprecated `proxy.cores`) is the minimum alone; else the
/// workload's CPU request and limit, set by its annotations or the flags,
/// give them in whole cores, rounded up, over the cluster's
/// `proxy.runtime.workers` (at least 1 for the minimum).
fn cores(
    values: &Map<String, Value>,
    for_workload: &dyn Fn(&str) -> bool,
) -> (String, String, String) {
    let fixed = text_of(values, "proxyCores");
    if !fixed.trim().is_empty() {
        return (fixed, String::new(), String::new());
    }
    let from_workload = |cpu: &str, workers: &str| {
        let derived = for_workload(cpu)
            .then(|| whole_cores(&text_of(values, cpu)))
            .flatten();
        derived.map_or_else(|| text_of(values, workers), |n| n.to_string())
    };
    let mut min = from_workload("proxyCPURequest", "proxyWorkersMinimum");
    if min.is_empty() || min == "0" {
        min = "1".into();
    }
    let mut max = from_workload("proxyCPULimit", "proxyWorkersMaximum");
    // Linkerd's chart writes no maximum for 0.
    if max == "0" {
        max.clear();
    }
    let ratio = text_of(values, "proxyWorkersMaxCPURatio");
    let ratio = match ratio.trim().parse::<f64>() {
        Ok(number) if number != 0.0 => go_float_text(number),
        // Go's zero float is no ratio at all: the chart writes none.
        Ok(_) => String::new(),
        Err(_) => ratio,
    };
    (min, max, ratio)
}

/// A float64 as Go's `fmt.Sprint` writes it (the chart's `quote` of the
/// parsed ratio): the shortest text that reads back as the same number, in
/// exponent form (`1e-05`, two exponent digits at least) when the exponent
/// is below -4 or 21 and above, so `0.10` is `0.1`.
pub fn go_float_text(number: f64) -> String {
    let scientific = format!("{number:e}");
    let Some((mantissa, exponent)) = scientific.split_once('e') else {
        return number.to_string();
    };
    let Ok(exponent) = exponent.parse::<i32>() else {
        return number.to_string();
    };
    if (-4..21).contains(&exponent) {
        return number.to_string();
    }
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.abs())
}

/// What Linkerd's webhook writes on a Service (`own` its annotations,
/// `namespace` its namespace's): when neither names the opaque ports, the
/// Service's ports among the opaque ports in force, a port by its target
/// port when it has a numeric one (a named target's number is unknown).
/// The namespace's annotation, when it has one, is copied.
pub fn service_annotations(
    service: &Value,
    own: Option<&Map<String, Value>>,
    namespace: Option<&Map<String, Value>>,
    values: &Map<String, Value>,
) -> Map<String, Value> {
    let mut out = Map::new();
    if own.is_some_and(|a| a.contains_key(OPAQUE_PORTS)) {
        return out;
    }
    if let Some(inherited) = namespace.and_then(|a| a.get(OPAQUE_PORTS)) {
        out.insert(OPAQUE_PORTS.into(), inherited.clone());
        return out;
    }
    let opaque = text_of(values, "opaquePorts");
    let opaque: Vec<&str> = opaque.split(',').map(str::trim).collect();
    // A port written as a string is a name to Linkerd, even `"3306"`.
    let number = |v: Option<&Value>| v.and_then(Value::as_u64).filter(|n| *n > 0);
    let marked: Vec<String> = service
        .field("spec")
        .and_then(|s| s.field("ports"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let port = number(p.field("port"))?;
            let target = p.field("targetPort");
            let checked = match target {
                None | Some(Value::Null) => Some(port),
                Some(Value::Number(n)) if n.as_u64() == Some(0) => Some(port),
                // A named target port: which number it is, is unknown.
                Some(_) => number(target),
            }?;
            opaque
                .contains(&checked.to_string().as_str())
                .then(|| port.to_string())
        })
        .collect();
    if !marked.is_empty() {
        out.insert(OPAQUE_PORTS.into(), Value::String(marked.join(",")));
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

    #[test]
    fn floats_are_written_as_go_prints_them() {
        for (number, text) in [
            (0.10, "0.1"),
            (0.5, "0.5"),
            (0.125, "0.125"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (0.000_012_5, "1.25e-05"),
            (1e21, "1e+21"),
            (123456.0, "123456"),
        ] {
            assert_eq!(go_float_text(number), text, "{number}");
        }
    }

    #[test]
    fn the_cpu_ratio_is_written_as_the_parsed_number() {
        for (given, written) in [("0.10", "0.1"), ("0.250", "0.25"), ("0", ""), ("", "")] {
            let mut values = Map::new();
            values.insert("proxyWorkersMaxCPURatio".into(), Value::from(given));
            complete(&mut values, &|_| false);
            assert_eq!(text_of(&values, "proxyCoresMaxRatio"), written, "{given}");
        }
    }
    use serde_json::json;

    fn completed(values: Value) -> Map<String, Value> {
        let Value::Object(mut values) = values else {
            panic!("an object")
        };
        // As if the flags had set them all.
        complete(&mut values, &|_| true);
        values
    }

    /// `printf 'PEM\n' | sha256sum`
    const PEM_SHA256: &str = "a0278171ab77da84cdf84cc11c10e4d8923a3aadc855775d8aae2b6a9333415e";

    #[test]
    fn the_trust_root_hash_is_of_the_anchors_as_given() {
        // The env carries them with one final line break, whatever the
        // spaces around; the hash is of the text as given, as Linkerd's
        // webhook hashes the file it mounts (`|-` has no final line break).
        for pem in ["PEM", "PEM\n", "\n PEM \n\n"] {
            let values = completed(json!({"trustAnchorsPEM": pem}));
            assert_eq!(values["trustAnchorsPEM"], "PEM\n");
            assert_eq!(
                values["trustRootSHA256"],
                hex(&Sha256::digest(pem.as_bytes())),
                "{pem:?}"
            );
        }
        // echo 'PEM' | sha256sum
        let values = completed(json!({"trustAnchorsPEM": "PEM\n"}));
        assert_eq!(values["trustRootSHA256"], PEM_SHA256);
        // Completing again keeps the hash of the text as given.
        let mut again = values.clone();
        complete(&mut again, &|_| false);
        assert_eq!(again["trustRootSHA256"], PEM_SHA256);
        let none = completed(json!({"trustAnchorsPEM": ""}));
        assert_eq!(none["trustRootSHA256"], "");
    }

    #[test]
    fn trust_anchors_must_be_x509_certificates() {
        let valid = include_str!("../../testdata/trust-anchors/a.pem");
        let other = include_str!("../../testdata/trust-anchors/b.pem");
        assert_eq!(check_anchors(valid), Ok(()));
        assert_eq!(check_anchors(valid.trim_end()), Ok(()));
        assert_eq!(check_anchors(&format!("{valid}{other}")), Ok(()));
        let fake = "-----BEGIN CERTIFICATE-----\nTEST\n-----END CERTIFICATE-----\n";
        for (pem, problem) in [
            (fake.to_string(), "PEM block 1 is not an X.509 certificate"),
            (
                format!("{valid}{fake}"),
                "PEM block 2 is not an X.509 certificate",
            ),
            ("hello".to_string(), "no PEM block"),
            (
                valid.replace("-----END CERTIFICATE-----", ""),
                "PEM block 1 has no END line",
            ),
            (
                "-----BEGIN PRIVATE KEY-----\nMAA=\n-----END PRIVATE KEY-----\n".to_string(),
                "PEM block 1 is not an X.509 certificate",
            ),
        ] {
            let refused = check_anchors(&pem).expect_err(problem);
            assert!(refused.starts_with(problem), "{refused}");
        }
        assert!(check_value("trustAnchorsPEM", fake).is_err());
        assert_eq!(check_value("trustAnchorsPEM", ""), Ok(()));
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
    fn cores_come_from_the_cluster_unless_the_workload_sets_its_cpu() {
        let mut values = json!({"proxyCPURequest": "2", "proxyCPULimit": "3",
            "proxyWorkersMinimum": "", "proxyWorkersMaximum": "4", "proxyWorkersMaxCPURatio": "0.5"})
        .as_object()
        .cloned()
        .expect("map");
        complete(&mut values, &|_| false);
        assert_eq!(values["proxyCoresMin"], "1");
        assert_eq!(values["proxyCoresMax"], "4");
        assert_eq!(values["proxyCoresMaxRatio"], "0.5");
        complete(&mut values, &|name| name == "proxyCPURequest");
        assert_eq!(values["proxyCoresMin"], "2");
        assert_eq!(values["proxyCoresMax"], "4");
        values.insert("proxyCores".into(), json!("2"));
        complete(&mut values, &|_| true);
        assert_eq!(
            (&values["proxyCoresMin"], &values["proxyCoresMax"]),
            (&json!("2"), &json!(""))
        );
        assert_eq!(values["proxyCoresMaxRatio"], "");
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
    fn names_are_snake_cased_as_linkerds_chart_does() {
        for (name, want) in [
            ("keepAliveInterval", "keep_alive_interval"),
            ("http2", "http2"),
            ("server", "server"),
            ("appleSauce", "apple_sauce"),
            ("blueBerry", "blue_berry"),
            ("HTTPServer", "http_server"),
            ("NoHTTPS", "no_https"),
            ("http2xx", "http_2xx"),
            ("Bld4Floor3rd", "bld4_floor_3rd"),
            ("GO-PATH", "go_path"),
            ("already_snake", "already_snake"),
        ] {
            assert_eq!(snake_case(name), want, "{name}");
        }
    }

    #[test]
    fn params_become_env_in_key_order() {
        let values = completed(json!({
            "proxyInboundParams": {"scope": {"proto": {"blueberry": 2.5, "appleSauce": "valueA"}}},
            "proxyOutboundParams": {"server": {"http2": {"keepAliveTimeout": "3s"}}, "a": "not a map"},
        }));
        assert_eq!(
            values["proxyParamsEnv"],
            json!([
                {"name": "LINKERD2_PROXY_INBOUND_SCOPE_PROTO_APPLE_SAUCE", "value": "valueA"},
                {"name": "LINKERD2_PROXY_INBOUND_SCOPE_PROTO_BLUEBERRY", "value": "2.5"},
                {"name": "LINKERD2_PROXY_OUTBOUND_SERVER_HTTP2_KEEP_ALIVE_TIMEOUT", "value": "3s"},
            ])
        );
    }

    #[test]
    fn go_durations_read_as_go_reads_them() {
        for (text, seconds) in [
            ("90s", Some(90.0)),
            ("1m30s", Some(90.0)),
            ("1.5h", Some(5400.0)),
            ("300ms", Some(0.3)),
            ("0", Some(0.0)),
            ("-2s", Some(-2.0)),
            ("30", None),
            ("", None),
            ("1d", None),
            ("s", None),
        ] {
            assert_eq!(go_duration_seconds(text), seconds, "{text}");
        }
        assert_eq!(close_wait_seconds("30"), Some(30));
        // From whole nanoseconds, as Go: 1001ms is 1.0009999... seconds.
        let seconds = go_duration_seconds("1001ms").expect("a duration");
        assert_eq!((seconds * 1000.0) as i64, 1000);
        assert_eq!(go_duration_seconds(".5s"), Some(0.5));
        assert_eq!(go_duration_seconds("1.s"), Some(1.0));
        assert_eq!(go_duration_seconds("."), None);
        assert_eq!(close_wait_seconds("1m0.9s"), Some(60));
    }

    #[test]
    fn a_close_wait_timeout_makes_the_init_container_privileged_and_needs_root() {
        let values = completed(json!({"closeWaitTimeout": "2m"}));
        assert_eq!(
            values["initCloseWaitArgs"],
            json!(["--timeout-close-wait-secs", "120"])
        );
        assert_eq!(values["initPrivileged"], json!(true));
        assert!(refusal(&values).is_some());
        let values = completed(json!({"closeWaitTimeout": "2m", "proxyInitRunAsRoot": true}));
        assert_eq!(values["initRunAsUser"], json!(0));
        assert_eq!(values["initRunAsNonRoot"], json!(false));
        assert!(refusal(&values).is_none());
        let values = completed(json!({"proxyInitUID": 0, "proxyInitGID": 7}));
        assert_eq!(values["initRunAsUser"], json!(65534));
        assert_eq!(values["initRunAsGroup"], json!(7));
        assert_eq!(values["initCloseWaitArgs"], json!([]));
        assert_eq!(values["initPrivileged"], json!(false));
    }

    #[test]
    fn ipv6_adds_listen_addresses_and_drops_the_init_flag() {
        let values = completed(json!({"outboundPort": 4140, "disableIPv6": false}));
        assert_eq!(values["proxyAnyAddress"], "[::]");
        assert_eq!(values["outboundListenAddrs"], "127.0.0.1:4140,[::1]:4140");
        assert_eq!(values["initIPv6Args"], json!([]));
        let values = completed(json!({"outboundPort": 4140, "disableIPv6": true}));
        assert_eq!(values["proxyAnyAddress"], "0.0.0.0");
        assert_eq!(values["initIPv6Args"], json!(["--ipv6=false"]));
    }

    #[test]
    fn the_debug_image_defaults_to_the_control_planes_version_and_pull_policy() {
        // The control plane's, not the proxy's a workload may override.
        let values = completed(json!({"debugImage": "d", "debugImageVersion": "",
            "proxyVersion": "v2", "linkerdVersion": "v1", "debugImagePullPolicy": "",
            "imagePullPolicy": "Never", "linkerdImagePullPolicy": "Always"}));
        assert_eq!(values["debugImageRef"], "d:v1");
        assert_eq!(values["debugPullPolicy"], "Always");
    }

    #[test]
    fn http_headers_stay_out_of_the_log_unless_insecure() {
        let values = completed(json!({"logLevel": "warn", "logHTTPHeaders": "off"}));
        assert_eq!(values["proxyLog"], "warn,[{headers}]=off,[{request}]=off");
        let values = completed(json!({"logLevel": "warn", "logHTTPHeaders": "insecure"}));
        assert_eq!(values["proxyLog"], "warn");
    }
}

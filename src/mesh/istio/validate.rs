//! The pod annotations Istio's injector checks before it renders anything
//! (`validateAnnotations` in istio `pkg/kube/inject/validate.go`): one that
//! does not hold what its check wants fails the injection, so the webhook
//! denies the pod and `istioctl kube-inject` stops. The messages are Istio's,
//! with the Go library errors they carry (`strconv`, `net/netip`,
//! Kubernetes' quantities) written as Go writes them.

use serde_json::{Map, Value};

use crate::gotemplate::format::go_quote;

/// A check of one annotation's value: `Err` with what Istio says.
type Check = fn(&str) -> Result<(), String>;

/// The annotations Istio checks, with their checks.
const CHECKS: &[(&str, Check)] = &[
    ("sidecar.istio.io/interceptionMode", interception_mode),
    ("status.sidecar.istio.io/port", status_port),
    (
        "readiness.status.sidecar.istio.io/initialDelaySeconds",
        uint32,
    ),
    ("readiness.status.sidecar.istio.io/periodSeconds", uint32),
    ("readiness.status.sidecar.istio.io/failureThreshold", uint32),
    (
        "traffic.sidecar.istio.io/includeOutboundIPRanges",
        include_ip_ranges,
    ),
    (
        "traffic.sidecar.istio.io/excludeOutboundIPRanges",
        exclude_ip_ranges,
    ),
    (
        "traffic.sidecar.istio.io/includeInboundPorts",
        include_inbound_ports,
    ),
    (
        "traffic.sidecar.istio.io/excludeInboundPorts",
        exclude_inbound_ports,
    ),
    (
        "traffic.sidecar.istio.io/excludeOutboundPorts",
        exclude_outbound_ports,
    ),
    ("traffic.sidecar.istio.io/excludeInterfaces", interfaces),
    ("traffic.sidecar.istio.io/kubevirtInterfaces", interfaces),
    ("istio.io/reroute-virtual-interfaces", interfaces),
    ("prometheus.istio.io/merge-metrics", boolean),
    ("proxy.istio.io/config", proxy_config),
    ("sidecar.istio.io/proxyCPU", quantity),
    ("sidecar.istio.io/proxyMemory", quantity),
    ("sidecar.istio.io/proxyCPULimit", quantity),
    ("sidecar.istio.io/proxyMemoryLimit", quantity),
];

/// Why Istio's injector refuses a pod with these annotations, in its words,
/// if it does: each failed check, by annotation name (Istio goes through
/// them in a Go map's order, which changes from run to run), joined as
/// Istio's error list joins them, on one line.
pub fn refusal(annotations: Option<&Map<String, Value>>) -> Option<String> {
    let annotations = annotations?;
    let mut failed: Vec<String> = Vec::new();
    let mut names: Vec<&String> = annotations.keys().collect();
    names.sort();
    for name in names {
        let Some((_, check)) = CHECKS.iter().find(|(n, _)| n == name) else {
            continue;
        };
        let Some(value) = annotations[name.as_str()].as_str() else {
            continue;
        };
        if let Err(why) = check(value) {
            failed.push(format!(
                "invalid value '{value}' for annotation '{name}': {why}"
            ));
        }
    }
    match failed.as_slice() {
        [] => None,
        [one] => Some(format!("1 error occurred: * {one}")),
        many => Some(format!(
            "{} errors occurred: * {}",
            many.len(),
            many.join(" * ")
        )),
    }
}

fn interception_mode(mode: &str) -> Result<(), String> {
    match mode {
        "REDIRECT" | "TPROXY" | "NONE" => Ok(()),
        _ => Err(format!(
            "interceptionMode invalid, use REDIRECT,TPROXY,NONE: {mode}"
        )),
    }
}

/// Istio's status port check (its message names another setting).
fn status_port(port: &str) -> Result<(), String> {
    parse_port(port)
        .map(drop)
        .map_err(|e| format!("excludeInboundPorts invalid: {e}"))
}

fn uint32(value: &str) -> Result<(), String> {
    parse_uint(value, u32::MAX.into()).map(drop)
}

fn boolean(value: &str) -> Result<(), String> {
    match value {
        "1" | "t" | "T" | "TRUE" | "true" | "True" | "0" | "f" | "F" | "FALSE" | "false"
        | "False" => Ok(()),
        _ => Err(format!(
            "strconv.ParseBool: parsing {}: invalid syntax",
            go_quote(value)
        )),
    }
}

fn include_ip_ranges(ranges: &str) -> Result<(), String> {
    if ranges == "*" {
        return Ok(());
    }
    cidr_list(ranges).map_err(|e| format!("includeIPRanges invalid: {e}"))
}

fn exclude_ip_ranges(ranges: &str) -> Result<(), String> {
    cidr_list(ranges).map_err(|e| format!("excludeIPRanges invalid: {e}"))
}

fn include_inbound_ports(ports: &str) -> Result<(), String> {
    if ports == "*" {
        return Ok(());
    }
    port_list("includeInboundPorts", ports)
}

fn exclude_inbound_ports(ports: &str) -> Result<(), String> {
    port_list("excludeInboundPorts", ports)
}

fn exclude_outbound_ports(ports: &str) -> Result<(), String> {
    port_list("excludeOutboundPorts", ports)
}

fn port_list(setting: &str, ports: &str) -> Result<(), String> {
    let ports = ports.trim();
    if ports.is_empty() {
        return Ok(());
    }
    for port in ports.split(',') {
        parse_port(port)
            .map_err(|e| format!("{setting} invalid: failed parsing port '{port}': {e}"))?;
    }
    Ok(())
}

/// A port as Istio reads one: trimmed, then a 16-bit number.
fn parse_port(port: &str) -> Result<u64, String> {
    parse_uint(port.trim(), u16::MAX.into())
        .map_err(|e| format!("failed parsing port '{port}': {e}"))
}

/// Go's `strconv.ParseUint(text, 10, bits)`, `max` the largest of `bits`.
fn parse_uint(text: &str, max: u64) -> Result<u64, String> {
    let error = |why: &str| {
        Err(format!(
            "strconv.ParseUint: parsing {}: {why}",
            go_quote(text)
        ))
    };
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return error("invalid syntax");
    }
    match text.parse::<u64>() {
        Ok(n) if n <= max => Ok(n),
        _ => error("value out of range"),
    }
}

/// Comma-separated prefixes, each as Go's `netip.ParsePrefix` reads one (a
/// bare address, without `/BITS`, is refused).
fn cidr_list(cidrs: &str) -> Result<(), String> {
    if cidrs.is_empty() {
        return Ok(());
    }
    for cidr in cidrs.split(',') {
        parse_prefix(cidr).map_err(|e| format!("failed parsing cidr '{cidr}': {e}"))?;
    }
    Ok(())
}

fn parse_prefix(text: &str) -> Result<(), String> {
    let fail = |why: String| Err(format!("netip.ParsePrefix({}): {why}", go_quote(text)));
    let Some((address, bits)) = text.rsplit_once('/') else {
        return fail("no '/'".into());
    };
    let v6 = match parse_address(address) {
        Ok(v6) => v6,
        Err(why) => return fail(why),
    };
    if v6 && address.contains('%') {
        return fail("IPv6 zones cannot be present in a prefix".into());
    }
    let leading = bits.as_bytes().first().copied().unwrap_or(b'0');
    if bits.is_empty() || (bits.len() > 1 && !(b'1'..=b'9').contains(&leading)) {
        return fail(format!("bad bits after slash: {}", go_quote(bits)));
    }
    let Ok(bits) = bits.parse::<u32>() else {
        return fail(format!("bad bits after slash: {}", go_quote(bits)));
    };
    if bits > if v6 { 128 } else { 32 } {
        return fail("prefix length out of range".into());
    }
    Ok(())
}

/// Go's `netip.ParseAddr`: whether the address is IPv6, or its error.
fn parse_address(text: &str) -> Result<bool, String> {
    let fail = |why: &str, at: Option<&str>| {
        let mut message = format!("ParseAddr({}): {why}", go_quote(text));
        if let Some(at) = at {
            message.push_str(&format!(" (at {})", go_quote(at)));
        }
        Err(message)
    };
    match text.bytes().find(|b| matches!(b, b'.' | b':' | b'%')) {
        Some(b'.') => {}
        Some(b':') => {
            // IPv6 is read by the standard library; Go's messages for its
            // many malformations are not reproduced one by one.
            let address = text.split('%').next().unwrap_or(text);
            return match address.parse::<std::net::Ipv6Addr>() {
                Ok(_) => Ok(true),
                Err(_) => fail("unable to parse IPv6 address", None),
            };
        }
        Some(_) => return fail("missing IPv6 address", None),
        None => return fail("unable to parse IP", None),
    }
    let bytes = text.as_bytes();
    let (mut value, mut digits, mut fields) = (0u32, 0, 0);
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'0'..=b'9' => {
                if digits == 1 && value == 0 {
                    return fail("IPv4 field has octet with leading zero", None);
                }
                value = value * 10 + u32::from(b - b'0');
                digits += 1;
                if value > 255 {
                    return fail("IPv4 field has value >255", None);
                }
            }
            b'.' => {
                let after_dot = i > 0 && bytes.get(i - 1) == Some(&b'.');
                if i == 0 || i + 1 == bytes.len() || after_dot {
                    return fail("IPv4 field must have at least one digit", text.get(i..));
                }
                if fields == 3 {
                    return fail("IPv4 address too long", None);
                }
                fields += 1;
                value = 0;
                digits = 0;
            }
            _ => return fail("unexpected character", text.get(i..)),
        }
    }
    if fields < 3 {
        return fail("IPv4 address too short", None);
    }
    Ok(false)
}

/// Linux interface names, as Istio checks them.
fn interfaces(names: &str) -> Result<(), String> {
    if names.is_empty() {
        return Ok(());
    }
    for name in names.split(',').map(str::trim) {
        if name.is_empty() {
            return Err("empty interface name".into());
        }
        if name.len() > 15 {
            return Err(format!(
                "interface name {} too long (max 15 chars)",
                go_quote(name)
            ));
        }
        let mut chars = name.chars();
        let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
        let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
        if !(first_ok && rest_ok) {
            return Err(format!(
                "interface name {} contains invalid characters",
                go_quote(name)
            ));
        }
    }
    Ok(())
}

/// The pod's proxy config must read as one, applied over Istio's defaults
/// (its YAML read as JSON into the ProxyConfig message: a field of the
/// wrong type fails, an unknown one is ignored), and then pass Istio's
/// checks of a proxy config (`ValidateMeshConfigProxyConfig`), for the
/// fields it gives.
fn proxy_config(text: &str) -> Result<(), String> {
    let read = crate::yaml::parse_stream(text)
        .map_err(|e| format!("line {}:{}: {}", e.line, e.column, e.message))
        .and_then(
            |documents| match documents.first().and_then(|d| d.root.as_ref()) {
                None => Ok(Map::new()),
                Some(root) => match crate::yaml::value::to_value(root) {
                    Ok(Value::Object(fields)) => Ok(fields),
                    Ok(Value::Null) => Ok(Map::new()),
                    Ok(_) => Err("not a mapping".to_string()),
                    Err(e) => Err(e.message),
                },
            },
        );
    let fields = read
        .and_then(|fields| {
            proxy_config_types(&fields)?;
            Ok(fields)
        })
        .map_err(|e| format!("failed to convert to apply proxy config: {e}"))?;
    let failed = proxy_config_checks(&fields);
    match failed.as_slice() {
        [] => Ok(()),
        [one] => Err(format!("1 error occurred: * {one}")),
        many => Err(format!(
            "{} errors occurred: * {}",
            many.len(),
            many.join(" * ")
        )),
    }
}

/// How a field of ProxyConfig is read from JSON.
#[derive(Clone, Copy)]
enum FieldType {
    Text,
    Int32,
    Duration,
    Bool,
    StringMap,
    Enum(&'static [&'static str]),
}

/// The fields of Istio's ProxyConfig a pod sets, by their JSON names, and
/// how they read.
const PROXY_CONFIG_FIELDS: &[(&str, FieldType)] = &[
    ("configPath", FieldType::Text),
    ("binaryPath", FieldType::Text),
    ("serviceCluster", FieldType::Text),
    ("drainDuration", FieldType::Duration),
    ("parentShutdownDuration", FieldType::Duration),
    ("discoveryAddress", FieldType::Text),
    ("discoveryRefreshDelay", FieldType::Duration),
    ("zipkinAddress", FieldType::Text),
    ("statsdUdpAddress", FieldType::Text),
    ("envoyMetricsServiceAddress", FieldType::Text),
    ("proxyAdminPort", FieldType::Int32),
    ("availabilityZone", FieldType::Text),
    (
        "controlPlaneAuthPolicy",
        FieldType::Enum(&["NONE", "MUTUAL_TLS", "INHERIT"]),
    ),
    ("customConfigFile", FieldType::Text),
    ("statNameLength", FieldType::Int32),
    ("concurrency", FieldType::Int32),
    ("proxyBootstrapTemplatePath", FieldType::Text),
    (
        "interceptionMode",
        FieldType::Enum(&["REDIRECT", "TPROXY", "NONE"]),
    ),
    ("statusPort", FieldType::Int32),
    ("terminationDrainDuration", FieldType::Duration),
    ("meshId", FieldType::Text),
    ("proxyMetadata", FieldType::StringMap),
    ("runtimeValues", FieldType::StringMap),
    ("holdApplicationUntilProxyStarts", FieldType::Bool),
    ("caCertificatesPem", FieldType::Text),
];

/// The fields of `fields` whose value their type does not read.
fn proxy_config_types(fields: &Map<String, Value>) -> Result<(), String> {
    for (name, value) in fields {
        let Some((_, kind)) = PROXY_CONFIG_FIELDS.iter().find(|(n, _)| n == name) else {
            continue;
        };
        let fits = match (kind, value) {
            (_, Value::Null) => true,
            (FieldType::Text, Value::String(_)) => true,
            (FieldType::Int32, Value::Number(n)) => {
                n.as_i64().is_some_and(|n| i32::try_from(n).is_ok())
            }
            (FieldType::Int32, Value::String(s)) => s.parse::<i32>().is_ok(),
            (FieldType::Duration, Value::String(s)) => proto_duration(s).is_some(),
            (FieldType::Bool, Value::Bool(_)) => true,
            (FieldType::StringMap, Value::Object(map)) => map.values().all(Value::is_string),
            (FieldType::Enum(names), Value::String(s)) => names.contains(&s.as_str()),
            (FieldType::Enum(names), Value::Number(n)) => {
                n.as_u64().is_some_and(|n| (n as usize) < names.len())
            }
            _ => false,
        };
        if !fits {
            return Err(format!("invalid value for field {name}: {value}"));
        }
    }
    Ok(())
}

/// A protobuf JSON duration (`45s`, `0.5s`, `-1.000000001s`) in
/// nanoseconds.
fn proto_duration(text: &str) -> Option<i128> {
    let body = text.strip_suffix('s')?;
    let (negative, body) = match body.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, body),
    };
    let (whole, fraction) = body.split_once('.').unwrap_or((body, ""));
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || (body.contains('.') && (!digits(fraction) || fraction.len() > 9)) {
        return None;
    }
    let seconds: i128 = whole.parse().ok()?;
    let nanos: i128 = format!("{fraction:0<9}").parse().ok()?;
    let total = seconds * 1_000_000_000 + nanos;
    Some(if negative { -total } else { total })
}

/// What Istio's checks of a proxy config say of the fields `fields` gives
/// (Istio's defaults pass them).
fn proxy_config_checks(fields: &Map<String, Value>) -> Vec<String> {
    let text = |name: &str| fields.get(name).and_then(Value::as_str);
    let mut failed = Vec::new();
    if text("configPath") == Some("") {
        failed.push("config path must be set".to_string());
    }
    if text("binaryPath") == Some("") {
        failed.push("binary path must be set".to_string());
    }
    if text("serviceCluster") == Some("") && !fields.contains_key("tracingServiceName") {
        failed.push("service cluster must be specified".to_string());
    }
    if let Some(nanos) = text("drainDuration").and_then(proto_duration) {
        const MILLISECOND: i128 = 1_000_000;
        if nanos < MILLISECOND {
            failed.push("invalid drain duration: duration must be greater than 1ms".to_string());
        } else if nanos % MILLISECOND != 0 {
            failed.push(
                "invalid drain duration: only durations to ms precision are supported".to_string(),
            );
        } else if nanos % (1000 * MILLISECOND) != 0 {
            failed.push("drain time only supports durations to seconds precision".to_string());
        }
    }
    match text("discoveryAddress") {
        Some("") => {
            failed.push("discovery address must be set to the proxy discovery service".to_string())
        }
        Some(address) => {
            if let Err(e) = proxy_address(address) {
                failed.push(format!("invalid discovery address: {e}"));
            }
        }
        None => {}
    }
    let zipkin = fields
        .get("tracing")
        .and_then(|t| t.get("zipkin"))
        .and_then(|z| z.get("address"))
        .and_then(Value::as_str);
    if let Some(address) = zipkin {
        if let Err(e) = proxy_address(&address.replacen("$(HOST_IP)", "127.0.0.1", 1)) {
            failed.push(format!("invalid zipkin config: {e}"));
        }
    }
    for (name, what) in [
        ("statsdUdpAddress", "statsd udp address"),
        (
            "envoyMetricsServiceAddress",
            "envoy metrics service address",
        ),
    ] {
        if let Some(address) = text(name).filter(|a| !a.is_empty()) {
            if let Err(e) = proxy_address(address) {
                failed.push(format!("invalid {what} {}: {e}", go_quote(address)));
            }
        }
    }
    for (name, what) in [
        ("proxyAdminPort", "proxy admin port"),
        ("statusPort", "status port"),
    ] {
        let port = match fields.get(name) {
            Some(Value::Number(n)) => n.as_i64(),
            Some(Value::String(s)) => s.parse().ok(),
            _ => None,
        };
        if let Some(port) = port.filter(|p| !(1..=65535).contains(p)) {
            failed.push(format!(
                "invalid {what}: port number {port} must be in the range 1..65535"
            ));
        }
    }
    if text("controlPlaneAuthPolicy") == Some("INHERIT") {
        failed.push(
            "invalid authentication policy: unrecognized control plane auth policy \"INHERIT\""
                .to_string(),
        );
    }
    failed
}

/// Istio's check of a `host:port` address (`ValidateProxyAddress`).
fn proxy_address(address: &str) -> Result<(), String> {
    let (host, port) = split_host_port(address).map_err(|e| {
        format!(
            "unable to split {}: address {address}: {e}",
            go_quote(address)
        )
    })?;
    let number: i64 = port.parse().map_err(|_| {
        format!(
            "port ({port}) is not a number: strconv.Atoi: parsing {}: invalid syntax",
            go_quote(port)
        )
    })?;
    if !(1..=65535).contains(&number) {
        return Err(format!(
            "port number {number} must be in the range 1..65535"
        ));
    }
    let ip = host.parse::<std::net::IpAddr>().is_ok();
    if !ip && !fqdn(host) {
        return Err(format!(
            "{} is not a valid hostname or an IP address",
            go_quote(host)
        ));
    }
    Ok(())
}

/// Go's `net.SplitHostPort`, for the errors Istio's addresses meet.
fn split_host_port(address: &str) -> Result<(&str, &str), &'static str> {
    if let Some(rest) = address.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or("missing ']' in address")?;
        let port = after.strip_prefix(':').ok_or("missing port in address")?;
        return Ok((host, port));
    }
    let (host, port) = address.rsplit_once(':').ok_or("missing port in address")?;
    if host.contains(':') {
        return Err("too many colons in address");
    }
    Ok((host, port))
}

/// A fully qualified name as Istio checks one: at most 255 characters, not
/// empty, DNS labels, a top-level label not all digits.
fn fqdn(name: &str) -> bool {
    if name.is_empty() || name.len() > 255 {
        return false;
    }
    let labels: Vec<&str> = name.split('.').collect();
    if labels.last().is_some_and(|top| top.parse::<i64>().is_ok()) {
        return false;
    }
    let count = labels.len();
    labels.iter().enumerate().all(|(i, label)| {
        (i + 1 == count && label.is_empty())
            || (label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
                && !label.is_empty())
    })
}

/// Whether a quantity is one Kubernetes reads (`resource.ParseQuantity`),
/// with its error otherwise.
fn quantity(text: &str) -> Result<(), String> {
    if text.chars().any(char::is_control) {
        return Err("value contains control characters".into());
    }
    if crate::admission::quantity::Quantity::parse(text).is_some() {
        return Ok(());
    }
    // The number, then the suffix: what Kubernetes' regular expression
    // allows before it reads either.
    let body = text.strip_prefix(['+', '-']).unwrap_or(text);
    let number = body
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(body.len());
    let suffix = body.get(number..).unwrap_or_default();
    let letters = suffix
        .find(|c: char| !"eEinumkKMGTP".contains(c))
        .unwrap_or(suffix.len());
    let tail = suffix.get(letters..).unwrap_or_default();
    let tail = tail.strip_prefix(['+', '-']).unwrap_or(tail);
    if number == 0 || !tail.bytes().all(|b| b.is_ascii_digit()) {
        return Err("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'".into());
    }
    Err("unable to parse quantity's suffix".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn refused(annotations: Value) -> Option<String> {
        refusal(annotations.as_object())
    }

    #[test]
    fn valid_annotations_pass_and_others_are_not_looked_at() {
        assert_eq!(
            refused(json!({
                "sidecar.istio.io/interceptionMode": "TPROXY",
                "traffic.sidecar.istio.io/includeOutboundIPRanges": "*",
                "traffic.sidecar.istio.io/excludeOutboundIPRanges": "10.0.0.0/8,fd00::/8",
                "traffic.sidecar.istio.io/includeInboundPorts": "80, 8080",
                "status.sidecar.istio.io/port": "15020",
                "prometheus.istio.io/merge-metrics": "F",
                "sidecar.istio.io/proxyCPU": "100m",
                "traffic.sidecar.istio.io/excludeInterfaces": "eth1,net-2",
                "proxy.istio.io/config": "holdApplicationUntilProxyStarts: true",
                "example.com/anything": "goes",
            })),
            None
        );
    }

    #[test]
    fn refusals_read_as_istios_with_gos_library_errors() {
        let cases = [
            (
                json!({"sidecar.istio.io/interceptionMode": "FOO"}),
                "1 error occurred: * invalid value 'FOO' for annotation 'sidecar.istio.io/interceptionMode': interceptionMode invalid, use REDIRECT,TPROXY,NONE: FOO",
            ),
            (
                json!({"traffic.sidecar.istio.io/includeInboundPorts": "80,abc"}),
                "1 error occurred: * invalid value '80,abc' for annotation 'traffic.sidecar.istio.io/includeInboundPorts': includeInboundPorts invalid: failed parsing port 'abc': failed parsing port 'abc': strconv.ParseUint: parsing \"abc\": invalid syntax",
            ),
            (
                json!({"status.sidecar.istio.io/port": "70000"}),
                "1 error occurred: * invalid value '70000' for annotation 'status.sidecar.istio.io/port': excludeInboundPorts invalid: failed parsing port '70000': strconv.ParseUint: parsing \"70000\": value out of range",
            ),
            (
                json!({"traffic.sidecar.istio.io/excludeOutboundIPRanges": "10.0.0.1"}),
                "1 error occurred: * invalid value '10.0.0.1' for annotation 'traffic.sidecar.istio.io/excludeOutboundIPRanges': excludeIPRanges invalid: failed parsing cidr '10.0.0.1': netip.ParsePrefix(\"10.0.0.1\"): no '/'",
            ),
            (
                json!({"traffic.sidecar.istio.io/includeOutboundIPRanges": "300.1.1.1/8"}),
                "1 error occurred: * invalid value '300.1.1.1/8' for annotation 'traffic.sidecar.istio.io/includeOutboundIPRanges': includeIPRanges invalid: failed parsing cidr '300.1.1.1/8': netip.ParsePrefix(\"300.1.1.1/8\"): ParseAddr(\"300.1.1.1\"): IPv4 field has value >255",
            ),
            (
                json!({"readiness.status.sidecar.istio.io/periodSeconds": "-1"}),
                "1 error occurred: * invalid value '-1' for annotation 'readiness.status.sidecar.istio.io/periodSeconds': strconv.ParseUint: parsing \"-1\": invalid syntax",
            ),
            (
                json!({"sidecar.istio.io/proxyMemory": "1Gb"}),
                "1 error occurred: * invalid value '1Gb' for annotation 'sidecar.istio.io/proxyMemory': quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
            ),
        ];
        for (annotations, want) in cases {
            assert_eq!(refused(annotations).as_deref(), Some(want));
        }
        let two = refused(json!({
            "sidecar.istio.io/interceptionMode": "x",
            "prometheus.istio.io/merge-metrics": "maybe",
        }))
        .expect("refused");
        assert!(
            two.starts_with("2 errors occurred: * invalid value 'maybe' for annotation 'prometheus.istio.io/merge-metrics': strconv.ParseBool: parsing \"maybe\": invalid syntax * invalid value 'x'"),
            "{two}"
        );
    }

    #[test]
    fn proxy_configs_are_read_and_checked_as_istio_does() {
        let config = |text: &str| refused(json!({"proxy.istio.io/config": text}));
        for fine in [
            "holdApplicationUntilProxyStarts: true",
            "concurrency: 2\nproxyMetadata: {ISTIO_META_DNS_CAPTURE: \"true\"}",
            "drainDuration: 45s\ndiscoveryAddress: istiod-canary.istio-system.svc:15012",
            "terminationDrainDuration: 0.5s\nstatusPort: \"15021\"",
            "tracing: {zipkin: {address: $(HOST_IP):9411}}",
            "someFutureField: {a: 1}",
            "",
        ] {
            assert_eq!(config(fine), None, "{fine}");
        }
        let why = |text: &str| {
            let refused = config(text).expect("refused");
            let prefix = format!(
                "1 error occurred: * invalid value '{text}' for annotation 'proxy.istio.io/config': "
            );
            refused
                .strip_prefix(&prefix)
                .expect("Istio's frame")
                .to_string()
        };
        assert_eq!(
            why("drainDuration: 1m"),
            "failed to convert to apply proxy config: invalid value for field drainDuration: \"1m\""
        );
        assert_eq!(
            why("proxyMetadata: {DNS_CAPTURE: true}"),
            "failed to convert to apply proxy config: invalid value for field proxyMetadata: {\"DNS_CAPTURE\":true}"
        );
        assert_eq!(
            why("concurrency: two"),
            "failed to convert to apply proxy config: invalid value for field concurrency: \"two\""
        );
        assert_eq!(
            why("drainDuration: 1.5s"),
            "1 error occurred: * drain time only supports durations to seconds precision"
        );
        assert_eq!(
            why("discoveryAddress: istiod.istio-system.svc"),
            "1 error occurred: * invalid discovery address: unable to split \"istiod.istio-system.svc\": address istiod.istio-system.svc: missing port in address"
        );
        assert_eq!(
            why("statusPort: 0\nproxyAdminPort: 70000"),
            "2 errors occurred: * invalid proxy admin port: port number 70000 must be in the range 1..65535 * invalid status port: port number 0 must be in the range 1..65535"
        );
        assert_eq!(
            why("discoveryAddress: Istiod_Bad:15012"),
            "1 error occurred: * invalid discovery address: \"Istiod_Bad\" is not a valid hostname or an IP address"
        );
    }

    #[test]
    fn prefixes_are_read_as_go_reads_them() {
        assert!(parse_prefix("10.0.0.0/8").is_ok());
        assert!(parse_prefix("::1/128").is_ok());
        for (text, why) in [
            ("10.0.0.0/33", "prefix length out of range"),
            ("10.0.0.0/08", "bad bits after slash: \"08\""),
            ("10.0.0/8", "ParseAddr(\"10.0.0\"): IPv4 address too short"),
            (
                "10..0.0/8",
                "ParseAddr(\"10..0.0\"): IPv4 field must have at least one digit (at \".0.0\")",
            ),
            (
                "010.0.0.0/8",
                "ParseAddr(\"010.0.0.0\"): IPv4 field has octet with leading zero",
            ),
            ("abc/8", "ParseAddr(\"abc\"): unable to parse IP"),
        ] {
            let error = parse_prefix(text).unwrap_err();
            assert!(error.ends_with(why), "{text}: {error}");
        }
    }
}

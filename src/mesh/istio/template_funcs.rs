//! The functions Istio's injector gives its templates, on top of Go's and
//! Sprig's (Istio's `indent`, `toYaml` and `contains` replace Sprig's).
//! Their behaviour follows `pkg/kube/inject/template.go` in istio/istio.

use std::collections::BTreeMap;
use std::rc::Rc;

use crate::gotemplate::format::{go_json, to_yaml};
use crate::gotemplate::funcs::{arg, arity as want, key_reads, looked_up, string};
use crate::gotemplate::value::GoMap;
use crate::gotemplate::{Func, Funcs, Value};

/// Go's and Sprig's functions with Istio's on top, as its injector sets them.
pub fn injection_funcs() -> Funcs {
    Funcs::default().with(ISTIO).reading(&[
        ("isset", key_reads),
        ("annotation", annotation_reads),
        ("otelResourceAttributes", otel_reads),
    ])
}

const ISTIO: &[(&str, Func)] = &[
    ("formatDuration", format_duration),
    ("isset", isset),
    ("excludeInboundPort", exclude_inbound_port),
    ("includeInboundPorts", include_inbound_ports),
    ("applicationPorts", application_ports),
    ("kubevirtInterfaces", identity),
    ("excludeInterfaces", identity),
    ("annotation", annotation),
    ("valueOrDefault", value_or_default),
    ("toJSON", to_json),
    ("fromJSON", from_json),
    ("structToJSON", struct_to_json),
    ("protoToJSON", struct_to_json),
    ("toYaml", to_yaml_func),
    ("indent", indent),
    ("directory", directory),
    ("contains", contains),
    ("toLower", to_lower),
    ("appendMultusNetwork", append_multus_network),
    ("env", env),
    ("omit", omit),
    ("strdict", strdict),
    ("toJsonMap", to_json_map),
    ("mergeMaps", merge_maps),
    ("omitNil", omit_nil),
    ("otelResourceAttributes", otel_resource_attributes),
];

type Result = std::result::Result<Value, String>;

/// A `map[string]string` argument's entries (nil is empty).
fn string_map(value: &Value) -> std::result::Result<BTreeMap<String, String>, String> {
    match value {
        Value::Map(map) => Ok(map
            .entries
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    v.as_str().map_or_else(|| v.print(), str::to_string),
                )
            })
            .collect()),
        Value::Nil | Value::Zero => Ok(BTreeMap::new()),
        other => Err(format!("{} is not a map", other.type_name())),
    }
}

fn map_value(entries: BTreeMap<String, String>) -> Value {
    Value::string_map(entries.iter().map(|(k, v)| (k.as_str(), v.as_str())))
}

fn identity(args: &[Value]) -> Result {
    want(args, 1)?;
    Ok(Value::str(string(args, 0)?))
}

/// A proto duration (`"90s"` in its JSON) as Go prints a duration: `1m30s`.
fn format_duration(args: &[Value]) -> Result {
    want(args, 1)?;
    let text = string(args, 0)?;
    let seconds: f64 = text
        .strip_suffix('s')
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("{text:?} is not a duration"))?;
    Ok(Value::str(go_duration(seconds)))
}

/// Go's `time.Duration.String`.
fn go_duration(seconds: f64) -> String {
    if seconds == 0.0 {
        return "0s".to_string();
    }
    let sign = if seconds < 0.0 { "-" } else { "" };
    let nanos = (seconds.abs() * 1e9).round() as u128;
    if nanos < 1_000_000_000 {
        let (unit, size) = match nanos {
            n if n < 1_000 => return format!("{sign}{n}ns"),
            n if n < 1_000_000 => ("µs", 1_000u128),
            _ => ("ms", 1_000_000u128),
        };
        return format!("{sign}{}{unit}", trim_fraction(nanos, size));
    }
    let hours = nanos / 3_600_000_000_000;
    let minutes = nanos / 60_000_000_000 % 60;
    let secs = trim_fraction(nanos % 60_000_000_000, 1_000_000_000);
    if hours > 0 {
        format!("{sign}{hours}h{minutes}m{secs}s")
    } else if minutes > 0 {
        format!("{sign}{minutes}m{secs}s")
    } else {
        format!("{sign}{secs}s")
    }
}

/// `value / size` with its fraction, trailing zeros dropped.
fn trim_fraction(value: u128, size: u128) -> String {
    let whole = value / size;
    let fraction = value % size;
    if fraction == 0 {
        return whole.to_string();
    }
    let width = size.to_string().len() - 1;
    let digits = format!("{fraction:0width$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

fn isset(args: &[Value]) -> Result {
    want(args, 2)?;
    let key = string(args, 1)?;
    Ok(Value::Bool(match arg(args, 0) {
        Value::Map(map) => map.entries.contains_key(key),
        _ => false,
    }))
}

fn exclude_inbound_port(args: &[Value]) -> Result {
    want(args, 2)?;
    Ok(Value::str(super::exclude_inbound_port(
        &arg(args, 0).print(),
        string(args, 1)?,
    )))
}

/// The TCP container ports of `containers` (all of them, or all but the proxy's).
fn container_ports(containers: &Value, all: bool) -> Result {
    let mut ports = Vec::new();
    if let Value::List(items) = containers {
        for container in items.iter() {
            if !all && container.field("Name").and_then(Value::as_str) == Some("istio-proxy") {
                continue;
            }
            if let Some(Value::List(list)) = container.field("Ports") {
                for port in list.iter() {
                    let protocol = port.field("Protocol").and_then(Value::as_str);
                    if matches!(protocol, Some("UDP" | "SCTP")) {
                        continue;
                    }
                    if let Some(number) = port.field("ContainerPort").and_then(Value::as_int) {
                        ports.push(number.to_string());
                    }
                }
            }
        }
    }
    Ok(Value::str(ports.join(",")))
}

fn include_inbound_ports(args: &[Value]) -> Result {
    want(args, 1)?;
    container_ports(arg(args, 0), true)
}

fn application_ports(args: &[Value]) -> Result {
    want(args, 1)?;
    container_ports(arg(args, 0), false)
}

fn annotation(args: &[Value]) -> Result {
    want(args, 3)?;
    let found = match arg(args, 0).field("Annotations") {
        Some(Value::Map(map)) => map.entries.get(string(args, 1)?).cloned(),
        _ => None,
    };
    Ok(found.unwrap_or_else(|| Value::str(arg(args, 2).print())))
}

/// `annotation` reads one entry of the annotations, and its default.
fn annotation_reads(args: &[Value], watched: &dyn Fn(&str) -> bool) -> bool {
    match args {
        [meta @ Value::Struct(_), key, default] if !key.holds(watched) => {
            let entry = match meta.field("Annotations") {
                Some(Value::Map(map)) => looked_up(map, key, watched),
                _ => Some(&Value::Nil),
            };
            entry.is_none_or(|entry| entry.holds(watched)) || default.holds(watched)
        }
        _ => args.iter().any(|a| a.holds(watched)),
    }
}

fn value_or_default(args: &[Value]) -> Result {
    want(args, 2)?;
    let value = arg(args, 0);
    let empty =
        matches!(value, Value::Nil | Value::Zero) || matches!(value, Value::Str(s) if s.is_empty());
    Ok(if empty { arg(args, 1) } else { value }.clone())
}

fn to_json(args: &[Value]) -> Result {
    want(args, 1)?;
    Ok(Value::str(match arg(args, 0) {
        Value::Nil | Value::Zero => "{}".to_string(),
        value => go_json(value),
    }))
}

fn from_json(args: &[Value]) -> Result {
    want(args, 1)?;
    // Istio gives "{}" (a string) for text that is not JSON.
    Ok(serde_json::from_str(string(args, 0)?)
        .map_or_else(|_| Value::str("{}"), |json| Value::from_json(&json)))
}

fn struct_to_json(args: &[Value]) -> Result {
    want(args, 1)?;
    Ok(Value::str(match arg(args, 0) {
        Value::Nil => "{}".to_string(),
        value => go_json(value),
    }))
}

fn to_yaml_func(args: &[Value]) -> Result {
    want(args, 1)?;
    Ok(Value::str(to_yaml(arg(args, 0))))
}

/// Istio's `indent`: every line but the first after N spaces.
fn indent(args: &[Value]) -> Result {
    want(args, 2)?;
    let spaces = arg(args, 0)
        .as_int()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or("the indent is not a count")?;
    let pad = " ".repeat(spaces);
    Ok(Value::str(
        string(args, 1)?.replace('\n', &format!("\n{pad}")),
    ))
}

fn directory(args: &[Value]) -> Result {
    want(args, 1)?;
    let path = string(args, 0)?;
    Ok(Value::str(
        path.rfind('/').map_or("", |i| path.get(..=i).unwrap_or("")),
    ))
}

fn contains(args: &[Value]) -> Result {
    want(args, 2)?;
    Ok(Value::Bool(string(args, 1)?.contains(string(args, 0)?)))
}

fn to_lower(args: &[Value]) -> Result {
    want(args, 1)?;
    Ok(Value::str(string(args, 0)?.to_lowercase()))
}

/// The Multus networks annotation with istio-cni's network added once.
fn append_multus_network(args: &[Value]) -> Result {
    want(args, 2)?;
    let (existing, network) = (string(args, 0)?, string(args, 1)?);
    Ok(Value::str(multus_networks(existing, network)))
}

/// `k8s.v1.cni.cncf.io/networks` with `network` (`namespace/name`) in it:
/// a JSON list gets an object before its `]`, a comma list the name.
pub fn multus_networks(existing: &str, network: &str) -> String {
    if existing.is_empty() {
        return network.to_string();
    }
    let (namespace, name) = network.split_once('/').unwrap_or(("", network));
    if let Some(close) = existing.rfind(']') {
        let Ok(serde_json::Value::Array(listed)) = serde_json::from_str(existing) else {
            // Not JSON: left as it is (Istio logs it and injects nothing here).
            return existing.to_string();
        };
        let present = listed.iter().any(|entry| {
            entry.get("name").and_then(|v| v.as_str()) == Some(name)
                && entry
                    .get("namespace")
                    .and_then(|v| v.as_str())
                    .unwrap_or("")
                    == namespace
        });
        if present {
            return existing.to_string();
        }
        let entry = if namespace.is_empty() {
            format!(r#", {{"name": "{name}"}}"#)
        } else {
            format!(r#", {{"name": "{name}", "namespace": "{namespace}"}}"#)
        };
        let (before, after) = existing.split_at_checked(close).unwrap_or((existing, ""));
        return format!("{before}{entry}{after}");
    }
    if existing.split(',').any(|n| n.trim() == network) {
        existing.to_string()
    } else {
        format!("{existing}, {network}")
    }
}

/// An environment variable of the injecting process, or the default. Istio
/// runs its templates in istiod, which reads istiod's environment; here the
/// injecting process is the tool's run, whose environment must then hold
/// the variable as istiod has it (docs/configuration.md says so). The
/// stock templates never call it.
fn env(args: &[Value]) -> Result {
    want(args, 2)?;
    let default = string(args, 1)?;
    Ok(Value::str(
        std::env::var(string(args, 0)?)
            .ok()
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| default.to_string()),
    ))
}

fn omit(args: &[Value]) -> Result {
    let Some((dict, keys)) = args.split_first() else {
        return Err("wrong number of args: want at least 1 got 0".to_string());
    };
    let mut entries = string_map(dict)?;
    for key in keys {
        entries.remove(key.as_str().unwrap_or_default());
    }
    Ok(map_value(entries))
}

fn strdict(args: &[Value]) -> Result {
    let mut entries = BTreeMap::new();
    for pair in args.chunks(2) {
        let key = pair.first().and_then(Value::as_str).unwrap_or_default();
        let value = pair.get(1).and_then(Value::as_str).unwrap_or_default();
        entries.insert(key.to_string(), value.to_string());
    }
    Ok(map_value(entries))
}

fn merged(args: &[Value]) -> std::result::Result<BTreeMap<String, String>, String> {
    let mut entries = BTreeMap::new();
    for map in args {
        entries.extend(string_map(map)?);
    }
    Ok(entries)
}

fn merge_maps(args: &[Value]) -> Result {
    if args.is_empty() {
        return Ok(Value::Nil);
    }
    Ok(map_value(merged(args)?))
}

fn to_json_map(args: &[Value]) -> Result {
    if args.is_empty() {
        return Ok(Value::str("null"));
    }
    Ok(Value::str(go_json(&map_value(merged(args)?))))
}

/// Nil values dropped from maps and lists, deeply; a map or list left
/// empty by that is nil itself.
fn omit_nil(args: &[Value]) -> Result {
    want(args, 1)?;
    Ok(without_nil(arg(args, 0)).unwrap_or(Value::Nil))
}

fn without_nil(value: &Value) -> Option<Value> {
    fn has_nil(value: &Value) -> bool {
        match value {
            Value::Nil => true,
            Value::Map(map) => map.entries.values().any(has_nil),
            Value::List(items) => items.iter().any(has_nil),
            _ => false,
        }
    }
    match value {
        Value::Nil => None,
        Value::Map(map) if has_nil(value) => {
            let entries: BTreeMap<_, _> = map
                .entries
                .iter()
                .filter_map(|(k, v)| without_nil(v).map(|v| (k.clone(), v)))
                .collect();
            (!entries.is_empty()).then(|| {
                Value::Map(Rc::new(GoMap {
                    entries,
                    missing: map.missing.clone(),
                }))
            })
        }
        Value::List(items) if has_nil(value) => {
            let kept: Vec<_> = items.iter().filter_map(without_nil).collect();
            (!kept.is_empty()).then(|| Value::List(Rc::new(kept)))
        }
        other => Some(other.clone()),
    }
}

/// Whether a tracing provider of `mesh_config` asks for OTel's service
/// attributes.
fn otel_wanted(mesh_config: &Value) -> bool {
    match mesh_config.field("ExtensionProviders") {
        Some(Value::List(providers)) => providers.iter().any(|p| {
            p.field("Opentelemetry")
                .and_then(|o| o.field("ServiceAttributeEnrichment"))
                .and_then(Value::as_str)
                == Some("OTEL_SEMANTIC_CONVENTIONS")
        }),
        _ => false,
    }
}

/// `otelResourceAttributes` reads only the mesh configuration when no
/// provider asks for the attributes.
fn otel_reads(args: &[Value], watched: &dyn Fn(&str) -> bool) -> bool {
    match args.split_first() {
        Some((mesh_config, _)) if !mesh_config.holds(watched) && !otel_wanted(mesh_config) => false,
        _ => args.iter().any(|a| a.holds(watched)),
    }
}

/// `OTEL_RESOURCE_ATTRIBUTES` when a tracing provider asks for OTel's
/// service attributes: `(meshConfig, annotations, labels, namespace, containers)`.
fn otel_resource_attributes(args: &[Value]) -> Result {
    want(args, 5)?;
    if !otel_wanted(arg(args, 0)) {
        return Ok(Value::str(""));
    }
    let annotations = string_map(arg(args, 1))?;
    let labels = string_map(arg(args, 2))?;
    let namespace = string(args, 3)?;
    let containers: Vec<(&str, &str)> = match arg(args, 4) {
        Value::List(items) => items
            .iter()
            .map(|c| {
                let text = |key: &str| c.field(key).and_then(Value::as_str).unwrap_or("");
                (text("Name"), text("Image"))
            })
            .collect(),
        _ => Vec::new(),
    };
    let annotation = |key: &str| annotations.get(key).cloned();
    let label = |key: &str| labels.get(key).cloned();
    Ok(Value::str(super::otel::resource_attributes(
        &annotation,
        &label,
        namespace,
        &containers,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gotemplate::Template;
    use serde_json::json;

    fn run(text: &str, data: &Value) -> String {
        let funcs = injection_funcs();
        Template::parse("t", text, &funcs)
            .unwrap()
            .execute(data, &funcs)
            .unwrap()
    }

    #[test]
    fn annotations_are_read_with_their_defaults() {
        let pod = Value::from_object(&json!({"metadata": {"annotations": {"a": "1"}}}));
        assert_eq!(
            run(
                "{{ annotation .ObjectMeta `a` 5 }} {{ annotation .ObjectMeta `b` 5 }} {{ isset .ObjectMeta.Annotations `a` }}",
                &pod
            ),
            "1 5 true"
        );
        let bare = Value::from_object(&json!({"metadata": {}}));
        assert_eq!(
            run(
                "{{ isset .ObjectMeta.Annotations `a` }} {{ toJSON .ObjectMeta.Annotations }}",
                &bare
            ),
            "false {}"
        );
    }

    #[test]
    fn ports_and_exclusions_read_as_istio_reads_them() {
        let pod = Value::from_object(&json!({"spec": {"containers": [
            {"name": "app", "ports": [{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}]},
            {"name": "istio-proxy", "ports": [{"containerPort": 15090}]}
        ]}}));
        assert_eq!(
            run(
                "{{ includeInboundPorts .Spec.Containers }}|{{ applicationPorts .Spec.Containers }}",
                &pod
            ),
            "80,15090|80"
        );
        assert_eq!(
            run(
                "{{ excludeInboundPort 15020 `15021` }}|{{ excludeInboundPort `15021` `15021` }}|{{ excludeInboundPort 0 `` }}",
                &pod
            ),
            "15021,15020|15021|"
        );
    }

    #[test]
    fn istio_indent_leaves_the_first_line_and_to_yaml_keeps_its_newline() {
        let data = Value::from_json(&json!({"l": {"preStop": {"exec": {"command": ["a"]}}}}));
        assert_eq!(
            run("x: {{ toYaml .l | indent 2 }}", &data),
            "x: preStop:\n    exec:\n      command:\n      - a\n  "
        );
    }

    #[test]
    fn maps_are_merged_omitted_and_written_as_json() {
        let data = Value::from_json(&json!({}));
        assert_eq!(
            run(
                "{{ toJsonMap (strdict `b` `2` `a` `1`) (omit (strdict `a` `x` `c` `3`) `c`) }}",
                &data
            ),
            r#"{"a":"x","b":"2"}"#
        );
        let nils = Value::from_json(
            &json!({"r": {"limits": {"cpu": null, "memory": "1Gi"}, "requests": {"cpu": null}}}),
        );
        assert_eq!(
            run("{{ toYaml (omitNil .r) }}", &nils),
            "limits:\n  memory: 1Gi\n"
        );
    }

    #[test]
    fn the_multus_network_is_added_once() {
        assert_eq!(
            multus_networks("", "default/istio-cni"),
            "default/istio-cni"
        );
        assert_eq!(
            multus_networks("a, default/istio-cni", "default/istio-cni"),
            "a, default/istio-cni"
        );
        assert_eq!(
            multus_networks("a", "default/istio-cni"),
            "a, default/istio-cni"
        );
        assert_eq!(
            multus_networks(r#"[{"name": "a"}]"#, "default/istio-cni"),
            r#"[{"name": "a"}, {"name": "istio-cni", "namespace": "default"}]"#
        );
        let present = r#"[{"name": "istio-cni", "namespace": "default"}]"#;
        assert_eq!(multus_networks(present, "default/istio-cni"), present);
    }

    #[test]
    fn durations_print_as_go_prints_them() {
        assert_eq!(go_duration(90.0), "1m30s");
        assert_eq!(go_duration(0.5), "500ms");
        assert_eq!(go_duration(3600.0), "1h0m0s");
        assert_eq!(go_duration(5.25), "5.25s");
    }
}

//! What Istio's injector derives (istio `pkg/kube/inject`: the sidecar
//! template's functions, `webhook.go` and `app_probe.go`).

use serde_json::{Map, Value};

use super::text_of;
use crate::admission::quantity::Quantity;
use crate::json::Field;

/// The values that hold the proxy's resource quantities.
const RESOURCES: [&str; 4] = [
    "proxyCPURequest",
    "proxyCPULimit",
    "proxyMemoryRequest",
    "proxyMemoryLimit",
];

/// Normalise Istio's values as its injector writes them: the resource
/// quantities in Kubernetes' canonical form (`2000m` → `2`, `1024Mi` →
/// `1Gi`), as they come out of the pod Istio serialises.
pub fn complete(values: &mut Map<String, Value>) {
    for name in RESOURCES {
        if let Some(quantity) = Quantity::parse(text_of(values, name).trim()) {
            values.insert(name.to_string(), Value::String(quantity.to_string()));
        }
    }
}

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
        for (key, omit_empty) in [
            ("name", true),
            ("hostPort", true),
            ("containerPort", false),
            ("protocol", true),
            ("hostIP", true),
        ] {
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

/// `text` as Go's `encoding/json` writes a string: quoted, with `<`, `>`
/// and `&` (and U+2028, U+2029) escaped as `\u003c` and the like.
pub(crate) fn go_json_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", u32::from(c)));
            }
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
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
        complete(&mut values);
        assert_eq!(values["proxyCPULimit"], "2");
        assert_eq!(values["proxyMemoryLimit"], "1Gi");
        assert_eq!(values["proxyCPURequest"], "100m");
        assert_eq!(values["proxyMemoryRequest"], "");
    }
}

//! What Istio writes of an injection: `sidecar.istio.io/status`, the image
//! pull secrets, and the pod's ports as `ISTIO_META_POD_PORTS` carries them
//! (`webhook.go`: `getInjectionStatus`; the sidecar template).

use super::*;

/// The annotation in which Istio's injector records what it injected.
pub const STATUS: &str = "sidecar.istio.io/status";

/// `sidecar.istio.io/status` as Istio's injector writes it: the names of
/// the init containers, containers and volumes its template added, where
/// it added them (the proxy among the init containers as a native
/// sidecar), its image pull secrets, and the revision (`default` when
/// empty), as Go serialises the struct: an empty list is `null`.
pub fn injection_status(injected: &Injected<'_>, values: &Map<String, Value>) -> String {
    let secrets = &injected.pull_secrets;
    let lists: [(&str, &[&str]); 4] = [
        ("initContainers", &injected.init_containers),
        ("containers", &injected.containers),
        ("volumes", &injected.volumes),
        ("imagePullSecrets", secrets),
    ];
    let revision = crate::mesh::text_of(values, "revision");
    // Written for each workload: keeping the last one written saved about
    // 1% of a run's instructions.
    written_status(&lists, &revision)
}

/// The status of [`injection_status`], written.
fn written_status(lists: &[(&str, &[&str]); 4], revision: &str) -> String {
    // Room for all of it (names rarely need escapes): written without growing.
    let names: usize = lists
        .iter()
        .flat_map(|(_, n)| *n)
        .map(|n| n.len() + 3)
        .sum();
    let mut out = String::with_capacity(names + 128);
    out.push('{');
    for &(key, names) in lists {
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
    go_json_string(&mut out, "revision");
    out.push(':');
    go_json_string(
        &mut out,
        if revision.is_empty() {
            "default"
        } else {
            revision
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

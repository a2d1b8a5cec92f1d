//! Istio's metrics merging: the app's own Prometheus settings handed to the
//! agent, which serves them merged with the proxy's, and the pod pointed at
//! the agent (`applyPrometheusMerge` in Istio's `pkg/kube/inject/webhook.go`,
//! the ports from pilot-agent's `status/server.go`).

use serde_json::{Map, Value};

use crate::gotemplate::format::json_string;

/// The env var in which Istio's injector hands the agent the pod's own
/// Prometheus settings, when it points Prometheus at the agent instead.
pub const PROMETHEUS_ENV: &str = "ISTIO_PROMETHEUS_ANNOTATIONS";

/// The port and path the pod is annotated with for Prometheus to scrape the
/// agent, which merges the app's metrics with the proxy's (the agent's
/// status port: the mesh config's, not a pod's `status.sidecar.istio.io/port`).
const AGENT_METRICS: [(&str, &str); 3] = [
    ("prometheus.io/port", "15020"),
    ("prometheus.io/path", "/stats/prometheus"),
    ("prometheus.io/scrape", "true"),
];

/// Ports of the proxy and its agent, which an app's metrics cannot be
/// scraped on (pilot-agent's list, with what each one is).
const RESERVED_PORTS: [(&str, &str); 9] = [
    ("15000", "Envoy admin"),
    ("15001", "outbound traffic capture"),
    ("15004", "pilot debug"),
    ("15006", "inbound traffic capture"),
    ("15008", "HBONE tunnel"),
    ("15020", "pilot-agent status / merged Prometheus"),
    ("15021", "Envoy health"),
    ("15053", "DNS proxy"),
    ("15090", "Envoy Prometheus (already merged)"),
];

/// What merging the app's metrics does to a pod: the env var that gives the
/// agent the pod's own Prometheus settings (none when it has none), and
/// the pod's own Prometheus annotations that change, with their new value.
///
/// Istio takes out every spelling of `prometheus.io/port`, `path` and
/// `scrape` but those three, and `prometheus.istio.io/scrape-targets`, then
/// writes the three. The tool points each spelling at the agent where it
/// stands and leaves the targets (which Prometheus does not read): what
/// Prometheus sees is the same, and uninject gives the pod back as written.
#[derive(Debug, PartialEq)]
pub struct MetricsMerge {
    pub env: Option<String>,
    pub annotations: Vec<(String, String)>,
}

/// The labels Prometheus reads the settings of a pod under, as Istio
/// knows them: an annotation whose key reads as one of these is a setting.
const KNOWN_LABELS: [&str; 4] = [
    "prometheus_io_scrape",
    "prometheus_io_port",
    "prometheus_io_path",
    "prometheus_istio_io_scrape_targets",
];

/// The known label `key` reads as, if any. Prometheus reads every character
/// that cannot be in a label name as `_` (`prometheus.io/scrape` and
/// `prometheus-io.scrape` are both `prometheus_io_scrape`). Compared
/// character by character: every annotation of every pod is asked.
fn known_label(key: &str) -> Option<&'static str> {
    // Letters read as themselves: each label's first word is the key's.
    if !key.starts_with("prometheus") {
        return None;
    }
    // Each character reads as one: the lengths in characters must agree.
    let length = match key.is_ascii() {
        true => key.len(),
        false => key.chars().count(),
    };
    let reads_as = |label: &str| {
        label.len() == length
            && key
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' {
                        c
                    } else {
                        '_'
                    }
                })
                .eq(label.chars())
    };
    KNOWN_LABELS.into_iter().find(|label| reads_as(label))
}

/// The pod's annotation that turns metrics merging on or off.
const MERGE_METRICS: &str = "prometheus.istio.io/merge-metrics";

/// Whether metrics are merged for a pod whose mesh template wrote
/// `annotations` (`decided`: as the pod's own settings decide it). Istio
/// merges after its template, reading the pod as the template left it: a
/// template that writes `prometheus.istio.io/merge-metrics` decides over
/// the pod's and the mesh's (`scrape`: the pod's `prometheus.io/scrape`).
pub fn merge_as_template_decides(
    annotations: &Map<String, Value>,
    decided: bool,
    scrape: &str,
) -> bool {
    match annotations
        .get(MERGE_METRICS)
        .and_then(Value::as_str)
        .and_then(super::go_bool)
    {
        Some(written) => super::merges_metrics(&written.to_string(), scrape),
        None => decided,
    }
}

/// Put in `annotations` the ones that point Prometheus at the agent
/// (metrics merged), or take them out.
pub fn point_at_agent(annotations: &mut Map<String, Value>, merged: bool) {
    for (key, value) in AGENT_METRICS {
        match merged {
            true => annotations.insert(key.to_string(), Value::from(value)),
            false => annotations.remove(key),
        };
    }
}

/// What Istio's injector does with the pod's Prometheus annotations when
/// it merges the app's metrics (`merged`: the values say it does). Their
/// settings go into the agent's env (`scrape`, `path`, `port`, and the
/// `prometheus.istio.io/scrape-targets` list, whose first target stands for
/// the port and path), and the pod is annotated for the agent instead.
/// Nothing when metrics are not merged or the pod already points at the
/// agent (injected before); a target or port the agent cannot scrape is
/// Istio's refusal of the pod, with its reason.
pub fn metrics_merge(
    annotations: Option<&Map<String, Value>>,
    merged: bool,
) -> Result<Option<MetricsMerge>, String> {
    if !merged {
        return Ok(None);
    }
    let ours: Vec<(&String, &str, &str)> = annotations
        .into_iter()
        .flatten()
        .filter_map(|(key, value)| {
            let label = known_label(key)?;
            Some((key, value.as_str().unwrap_or_default(), label))
        })
        .collect();
    let setting = |label: &str| {
        ours.iter()
            .find(|(_, _, l)| *l == label)
            .map(|(_, value, _)| value.to_string())
    };
    let agent_port = AGENT_METRICS[0].1;
    if setting("prometheus_io_port").as_deref() == Some(agent_port) {
        return Ok(None);
    }
    let scrape = setting("prometheus_io_scrape").unwrap_or_default();
    let mut path = setting("prometheus_io_path").unwrap_or_default();
    let mut port = setting("prometheus_io_port").unwrap_or_default();
    let targets = setting("prometheus_istio_io_scrape_targets")
        .map(|raw| scrape_targets(&raw))
        .transpose()
        .unwrap_or_default()
        .unwrap_or_default();
    // `what` the pod gives (`scrape targets`, `scrape configuration`), and
    // what a port of it is called there.
    let scrapable = |given: &str, what: &str, noun: &str| -> Result<(), String> {
        let number = given
            .parse::<i64>()
            .ok()
            .filter(|n| (1..=65535).contains(n))
            .ok_or_else(|| format!("invalid prometheus {what}: invalid {noun} {given:?}"))?;
        let canonical = number.to_string();
        if canonical == agent_port {
            return Err(format!(
                "invalid prometheus {what}: {noun} {given} conflicts with agent port"
            ));
        }
        match RESERVED_PORTS.iter().find(|(p, _)| *p == canonical) {
            Some((_, reason)) => Err(format!(
                "invalid prometheus {what}: {noun} {given} is reserved for Istio ({reason}) and cannot be scraped"
            )),
            None => Ok(()),
        }
    };
    if let Some((first_port, first_path)) = targets.first() {
        port = first_port.clone();
        path = first_path.clone();
        for (target, _) in &targets {
            scrapable(target, "scrape targets", "target port")?;
        }
    } else if !port.is_empty() {
        scrapable(&port, "scrape configuration", "port")?;
    }
    let empty = scrape.is_empty() && path.is_empty() && port.is_empty() && targets.is_empty();
    // As Go marshals pilot-agent's PrometheusScrapeConfiguration: its
    // fields in order, the targets left out when there are none.
    let env = (!empty).then(|| {
        let mut out = String::with_capacity(64);
        let field = |out: &mut String, first: bool, key: &str, value: &str| {
            if !first {
                out.push(',');
            }
            json_string(key, out);
            out.push(':');
            json_string(value, out);
        };
        out.push('{');
        field(&mut out, true, "scrape", &scrape);
        field(&mut out, false, "path", &path);
        field(&mut out, false, "port", &port);
        if !targets.is_empty() {
            out.push_str(",\"targets\":[");
            for (i, (port, path)) in targets.iter().enumerate() {
                out.push_str(if i == 0 { "{" } else { ",{" });
                field(&mut out, true, "port", port);
                field(&mut out, false, "path", path);
                out.push('}');
            }
            out.push(']');
        }
        out.push('}');
        out
    });
    // Every spelling of the three is pointed at the agent, in place: the pod
    // keeps its own keys, so that uninject gives them back as written.
    let annotations = ours
        .iter()
        .filter_map(|(key, value, label)| {
            let agent = AGENT_METRICS
                .iter()
                .find(|(k, _)| known_label(k) == Some(*label))
                .map(|(_, v)| *v)?;
            (agent != *value).then(|| (key.to_string(), agent.to_string()))
        })
        .collect();
    Ok(Some(MetricsMerge { env, annotations }))
}

/// `prometheus.istio.io/scrape-targets` (`8080:/metrics,9100`) as port and
/// path pairs, a path `/metrics` where none is given; an entry without a
/// port makes the annotation ignored, as Istio ignores it.
fn scrape_targets(raw: &str) -> Result<Vec<(String, String)>, ()> {
    let mut targets = Vec::new();
    for entry in raw.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (port, path) = match entry.split_once(':') {
            Some((port, path)) => (port.trim(), path.trim()),
            None => (entry, ""),
        };
        if port.is_empty() {
            return Err(());
        }
        let path = if path.is_empty() { "/metrics" } else { path };
        targets.push((port.to_string(), path.to_string()));
    }
    Ok(targets)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_pods_metrics_settings_go_to_the_agent() {
        let merge =
            |annotations: Value| metrics_merge(annotations.as_object(), true).expect("merged");
        // Scrape targets: the first stands for the port and path; the
        // annotation goes, the pod is pointed at the agent.
        let got = merge(json!({
            "prometheus.io/scrape": "true",
            "prometheus.istio.io/scrape-targets": "8080:/metrics, 9100:/custom-metrics",
        }))
        .expect("a change");
        assert_eq!(
            got.env.as_deref(),
            Some(
                r#"{"scrape":"true","path":"/metrics","port":"8080","targets":[{"port":"8080","path":"/metrics"},{"port":"9100","path":"/custom-metrics"}]}"#
            )
        );
        assert_eq!(got.annotations, []);
        // The pod's own port and path: replaced, every spelling of them.
        let got = merge(json!({"prometheus.io.port": "9090", "prometheus.io/path": "/m"}))
            .expect("a change");
        assert_eq!(
            got.env.as_deref(),
            Some(r#"{"scrape":"","path":"/m","port":"9090"}"#)
        );
        assert_eq!(
            got.annotations,
            [
                ("prometheus.io.port".to_string(), "15020".to_string()),
                (
                    "prometheus.io/path".to_string(),
                    "/stats/prometheus".to_string()
                ),
            ]
        );
        // Nothing of the pod's: no env, only the agent's annotations.
        assert_eq!(
            merge(json!({"app": "x"})),
            Some(MetricsMerge {
                env: None,
                annotations: Vec::new()
            })
        );
        // Pointed at the agent already, or merging off: nothing to do.
        assert_eq!(merge(json!({"prometheus.io/port": "15020"})), None);
        assert_eq!(
            metrics_merge(json!({"prometheus.io/port": "1"}).as_object(), false),
            Ok(None)
        );
        // Ports the agent cannot scrape: the pod is refused, as Istio refuses it.
        let refused =
            |annotations: Value| metrics_merge(annotations.as_object(), true).expect_err("refused");
        assert_eq!(
            refused(json!({"prometheus.io/port": "http"})),
            "invalid prometheus scrape configuration: invalid port \"http\""
        );
        assert_eq!(
            refused(json!({"prometheus.istio.io/scrape-targets": "8080,15090:/stats"})),
            "invalid prometheus scrape targets: target port 15090 is reserved for Istio (Envoy Prometheus (already merged)) and cannot be scraped"
        );
        assert_eq!(
            refused(json!({"prometheus.io/port": "015020"})),
            "invalid prometheus scrape configuration: port 015020 conflicts with agent port"
        );
        // A target without a port: the annotation is ignored.
        assert_eq!(
            merge(json!({"prometheus.istio.io/scrape-targets": ":/x"})).and_then(|m| m.env),
            None
        );
    }

    #[test]
    fn the_agents_settings_are_written_as_go_marshals_them() {
        // Go's encoding/json escapes <, > and & (and the quote and backslash,
        // as every JSON writer does); the agent reads it back either way,
        // and the pod's text is what Istio's injector writes.
        let got = metrics_merge(
            json!({
                "prometheus.io/path": "/m?a=1&b=<2>",
                "prometheus.istio.io/scrape-targets": "8080:/x?q=\"&\"",
            })
            .as_object(),
            true,
        )
        .expect("merged")
        .expect("a change");
        assert_eq!(
            got.env.as_deref(),
            Some(
                r#"{"scrape":"","path":"/x?q=\"\u0026\"","port":"8080","targets":[{"port":"8080","path":"/x?q=\"\u0026\""}]}"#
            )
        );
        let got = metrics_merge(
            json!({"prometheus.io/path": "/m?a=1&b=<2>"}).as_object(),
            true,
        )
        .expect("merged")
        .expect("a change");
        assert_eq!(
            got.env.as_deref(),
            Some(r#"{"scrape":"","path":"/m?a=1\u0026b=\u003c2\u003e","port":""}"#)
        );
        // Every value read back is the annotation's.
        let read: Value =
            serde_json::from_str(got.env.as_deref().unwrap_or_default()).expect("JSON");
        assert_eq!(read["path"], "/m?a=1&b=<2>");
    }
}

//! The tool as a KRM function (the Kubernetes Resource Model functions
//! specification, as kpt and kustomize run them): a `ResourceList` on
//! standard input, its `items` injected, its `functionConfig` read as
//! settings, and `results` written back for skips and the cluster's verdicts.

use serde_json::{Map, Value, json};

use crate::admission::Severity;
use crate::json::Field;
use crate::pipeline::Processed;
use crate::rules::Outcome;
use crate::yaml;

#[cfg(test)]
const API_VERSION: &str = "config.kubernetes.io/v1";
pub const KIND: &str = "ResourceList";

/// Whether `value` is a ResourceList.
pub fn is_resource_list(value: &Value) -> bool {
    value.field("kind").and_then(Value::as_str) == Some(KIND)
        && value
            .field("apiVersion")
            .and_then(Value::as_str)
            .is_some_and(|v| v.starts_with("config.kubernetes.io/"))
        && value.field("items").is_some_and(Value::is_array)
}

/// The ResourceList in `text`, when the text is one.
pub fn resource_list(text: &str) -> Option<Value> {
    let documents = yaml::parse_stream(text).ok()?;
    let [document] = documents.as_slice() else {
        return None;
    };
    let value = yaml::value::to_value(document.root.as_ref()?).ok()?;
    is_resource_list(&value).then_some(value)
}

/// The settings a ResourceList's `functionConfig` gives, as flags would:
/// from a ConfigMap's `data` (or a config object's `values`), `profile`,
/// `kubeVersion`, `nativeSidecar` and `namespace` are the flags of those
/// names, `warnOnly: "true"` is `--warn-only`, and every other entry is a
/// profile value (`--set`).
#[derive(Debug, Default, PartialEq)]
pub struct FunctionConfig {
    pub profile: Option<String>,
    pub kube_version: Option<String>,
    pub native_sidecar: Option<String>,
    pub namespace: Option<String>,
    pub warn_only: bool,
    pub values: Vec<String>,
    /// Entries that cannot be right.
    pub problems: Vec<String>,
}

pub fn function_config(list: &Value) -> FunctionConfig {
    let config = list.field("functionConfig");
    let entries: Map<String, Value> = config
        .and_then(|c| c.field("data").or_else(|| c.field("values")))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut out = FunctionConfig::default();
    for (key, value) in entries {
        let text = match &value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        match key.as_str() {
            "profile" => out.profile = Some(text),
            "kubeVersion" => out.kube_version = Some(text),
            "nativeSidecar" => out.native_sidecar = Some(text),
            "namespace" => out.namespace = Some(text),
            "warnOnly" => match text.as_str() {
                "true" => out.warn_only = true,
                "false" => {}
                other => out.problems.push(format!(
                    "functionConfig warnOnly: expected \"true\" or \"false\", got {other:?}"
                )),
            },
            _ => out.values.push(format!("{key}={text}")),
        }
    }
    out
}

/// The `results` for a processed ResourceList: a skip is `info`, a warning
/// `warning`, a rejection `error` (with `warn_only`, a `warning`; one the
/// workload drew before injection too, a `warning` always); each names the
/// item and the file it came from, when kpt or kustomize say so.
pub fn results(processed: &Processed, list: &Value, warn_only: bool) -> Vec<Value> {
    let items = list.field("items").and_then(Value::as_array);
    let mut results = Vec::new();
    for (index, object) in processed.objects.iter().enumerate() {
        let item = items.and_then(|i| i.get(index));
        let reference = object.reference.as_ref().map(|r| {
            let mut reference = Map::new();
            reference.insert("apiVersion".into(), json!(r.api_version));
            reference.insert("kind".into(), json!(r.kind));
            reference.insert("name".into(), json!(r.name));
            if let Some(namespace) = &r.namespace {
                reference.insert("namespace".into(), json!(namespace));
            }
            Value::Object(reference)
        });
        let file = item.and_then(file_of);
        let mut push = |severity: &str, message: String| {
            let mut result = Map::new();
            result.insert("message".into(), json!(message));
            result.insert("severity".into(), json!(severity));
            if let Some(reference) = &reference {
                result.insert("resourceRef".into(), reference.clone());
            }
            if let Some(file) = &file {
                result.insert("file".into(), file.clone());
            }
            results.push(Value::Object(result));
        };
        if let Outcome::Skipped(reason) = &object.outcome {
            if reason != crate::rules::plan::NOT_INJECTABLE {
                push("info", format!("skipped: {reason}"));
            }
        }
        for verdict in &object.verdicts {
            if verdict.severity == Severity::Rejection && verdict.before_injection {
                // The workload is refused with or without the injection.
                let preexisting = crate::report::PREEXISTING;
                push("warning", format!("{preexisting}: {}", verdict.message));
                continue;
            }
            let severity = match verdict.severity {
                Severity::Rejection if !warn_only => "error",
                _ => "warning",
            };
            push(severity, verdict.message.clone());
        }
        // The injection's own warnings (an empty trust anchor, a sidecar
        // that never completes) are the user's to hear too.
        for note in &object.notes {
            if let Some(warning) = note.strip_prefix("warning: ") {
                push("warning", warning.to_string());
            }
        }
        if object.refused_by_security_policy() {
            for hint in &object.hints {
                push("info", format!("fix: {hint}"));
            }
        }
    }
    results
}

/// Where an item came from, as kpt and kustomize annotate it.
fn file_of(item: &Value) -> Option<Value> {
    let annotations = item.field("metadata")?.field("annotations")?;
    let read = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| annotations.get(*k).and_then(Value::as_str))
    };
    let path = read(&[
        "internal.config.kubernetes.io/path",
        "config.kubernetes.io/path",
    ])?;
    let mut file = Map::new();
    file.insert("path".into(), json!(path));
    if let Some(index) = read(&[
        "internal.config.kubernetes.io/index",
        "config.kubernetes.io/index",
    ])
    .and_then(|i| i.parse::<u64>().ok())
    {
        file.insert("index".into(), json!(index));
    }
    Some(Value::Object(file))
}

/// `text` (a processed ResourceList) with `results` set, edited in place.
pub fn with_results(text: &str, results: Vec<Value>) -> Result<String, String> {
    let documents = yaml::parse_stream(text).map_err(|e| e.message)?;
    let Some(root) = documents.first().and_then(|d| d.root.as_ref()) else {
        return Ok(text.to_string());
    };
    let mut value = yaml::value::to_value(root).map_err(|e| e.message)?;
    let Some(map) = value.as_object_mut() else {
        return Ok(text.to_string());
    };
    if results.is_empty() {
        map.shift_remove("results");
    } else {
        map.insert("results".into(), Value::Array(results));
    }
    let edits = yaml::edit::diff(text, root, &value).map_err(|e| e.message)?;
    Ok(yaml::edit::apply(text, edits))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn function_config_reads_like_flags() {
        let list = json!({"apiVersion": API_VERSION, "kind": KIND, "items": [],
            "functionConfig": {"kind": "ConfigMap", "data": {"profile": "istio", "kubeVersion": "1.29", "warnOnly": "true", "proxyImage": "x"}}});
        assert!(is_resource_list(&list));
        assert_eq!(
            function_config(&list),
            FunctionConfig {
                profile: Some("istio".into()),
                kube_version: Some("1.29".into()),
                warn_only: true,
                values: vec!["proxyImage=x".into()],
                ..FunctionConfig::default()
            }
        );
        assert!(!is_resource_list(&json!({"kind": "List", "items": []})));
    }

    #[test]
    fn results_are_written_into_the_list() {
        let text = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n";
        let out =
            with_results(text, vec![json!({"message": "m", "severity": "info"})]).expect("edits");
        assert_eq!(
            out,
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nresults:\n  - message: m\n    severity: info\n"
        );
        assert_eq!(with_results(text, Vec::new()).expect("edits"), text);
    }
}

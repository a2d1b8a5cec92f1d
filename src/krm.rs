//! The tool as a KRM function (the Kubernetes Resource Model functions
//! specification, as kpt and kustomize run them): a `ResourceList` on
//! standard input, its `items` injected, its `functionConfig` read as
//! settings, and `results` written back for skips and the cluster's verdicts.

use saphyr_parser::{Event, Parser};
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
    if !may_be_resource_list(text) {
        return None;
    }
    // One document is kept, any other only counted.
    let (mut first, mut documents) = (None, 0);
    yaml::parse::each_document(text, 0, text.len(), |document| {
        documents += 1;
        if documents == 1 {
            first = Some(document);
        }
    })
    .ok()?;
    if documents != 1 {
        return None;
    }
    let value = yaml::value::to_value(first?.root.as_ref()?).ok()?;
    is_resource_list(&value).then_some(value)
}

/// Whether `text` may be a ResourceList, from the parser's events alone
/// (nothing built) and stopping as soon as the answer is known: `false` when
/// the first document's root is not a mapping, when its `apiVersion`, `kind`
/// or `items` says otherwise, or when a second document begins; `true` once
/// all three are as a ResourceList has them (or the stream ends, or a syntax
/// error stops the reading), leaving the answer to [`resource_list`]'s full
/// reading. Standard input is asked this before it is processed: a stream of
/// many documents is answered at its second one, not parsed whole once more.
fn may_be_resource_list(text: &str) -> bool {
    // Whether a value of the root mapping under `key` can be what a ResourceList has there.
    let fits = |key: Option<&str>, value: &Peeked<'_>| match (key, value) {
        (Some("apiVersion"), Peeked::Scalar(text)) => text.starts_with("config.kubernetes.io/"),
        (Some("kind"), Peeked::Scalar(text)) => text == KIND,
        (Some("apiVersion" | "kind"), Peeked::Mapping | Peeked::Sequence) => false,
        (Some("items"), Peeked::Scalar(_) | Peeked::Mapping) => false,
        _ => true,
    };
    let mut parser = Parser::new_from_str(text);
    let mut documents = 0;
    // Open collections: the root mapping's entries are at depth 1.
    let mut depth = 0usize;
    // At depth 1: whether the next node is a key, and the key whose value
    // comes next (an untagged scalar's text).
    let mut at_key = true;
    let mut key = None;
    // The root's entries seen as a ResourceList has them.
    let mut seen = [false; 3];
    while let Some(Ok((event, _))) = parser.next_event() {
        let peeked = match event {
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return false;
                }
                continue;
            }
            Event::StreamEnd => return true,
            Event::MappingEnd | Event::SequenceEnd => {
                depth = depth.saturating_sub(1);
                // A key or a value of the root mapping is done.
                if depth == 1 {
                    if at_key {
                        key = None;
                    }
                    at_key = !at_key;
                }
                continue;
            }
            Event::Scalar(text, _, _, tag) => match depth {
                // A scalar root, or an empty document.
                0 => return false,
                1 if at_key => {
                    key = tag.is_none().then_some(text);
                    at_key = false;
                    continue;
                }
                _ => Peeked::Scalar(text),
            },
            Event::MappingStart(..) => Peeked::Mapping,
            Event::SequenceStart(..) if depth == 0 => return false,
            Event::SequenceStart(..) => Peeked::Sequence,
            Event::Alias(_) if depth == 1 => {
                // What an alias stands for is not known here.
                key = None;
                at_key = !at_key;
                continue;
            }
            _ => continue,
        };
        if depth == 1 && !at_key {
            if !fits(key.as_deref(), &peeked) {
                return false;
            }
            if let Some(at) = ["apiVersion", "kind", "items"]
                .iter()
                .position(|k| key.as_deref() == Some(*k))
                .and_then(|i| seen.get_mut(i))
            {
                *at = true;
            }
            if seen.iter().all(|s| *s) {
                return true;
            }
        }
        match peeked {
            Peeked::Mapping | Peeked::Sequence => depth += 1,
            Peeked::Scalar(_) if depth == 1 => at_key = true,
            Peeked::Scalar(_) => {}
        }
    }
    true
}

/// A node as [`may_be_resource_list`] sees it.
enum Peeked<'t> {
    Scalar(std::borrow::Cow<'t, str>),
    Mapping,
    Sequence,
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
/// `warning`, a rejection `error` (with `warn_only`, a `warning`); each names
/// the item and the file it came from, when kpt or kustomize say so.
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

    /// The full reading, as it was before the events were looked at first.
    fn read_whole(text: &str) -> bool {
        let Ok(documents) = yaml::parse_stream(text) else {
            return false;
        };
        let [document] = documents.as_slice() else {
            return false;
        };
        document
            .root
            .as_ref()
            .and_then(|root| yaml::value::to_value(root).ok())
            .is_some_and(|value| is_resource_list(&value))
    }

    #[test]
    fn the_events_turn_away_only_what_is_no_resource_list() {
        let list = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n";
        // Settled by the events, before the end of the first document.
        let turned_away = [
            "apiVersion: v1\nkind: List\nitems: []\n".to_string(),
            "kind: Deployment\napiVersion: config.kubernetes.io/v1\nitems: []\n".into(),
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: {}\n".into(),
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n".into(),
            "items: []\nkind: [ResourceList]\n".into(),
            "\"kind\": 'Pod'\nitems: []\n".into(),
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nkind: List\nitems: []\n"
                .into(),
            "- a\n".into(),
            "a\n".into(),
            "# nothing\n---\n".into(),
            format!("a: 1\n---\n{list}"),
            format!("metadata: {{name: x}}\n---\n{list}"),
        ];
        for text in &turned_away {
            assert!(!may_be_resource_list(text), "{text}");
            assert!(!read_whole(text), "{text}");
            assert!(resource_list(text).is_none(), "{text}");
        }
        // Left to the full reading, which answers as it always did.
        let read = [
            (list.to_string(), true),
            (format!("# a comment\n---\n{list}"), true),
            (format!("{list}---\na: 1\n"), false),
            (format!("{list}---\n"), false),
            (format!("{list}x: [\n"), false),
            (list.replace("items: []", "items: [a, b]\nresults: []"), true),
            (list.replace("ResourceList", "!!str ResourceList"), true),
            (list.replace("kind: ResourceList", "k: &k ResourceList\nkind: *k"), true),
            (list.replace("kind: ResourceList", "k: &k Pod\nkind: *k"), false),
            (list.replace("kind:", "!!str kind:"), true),
            (list.replace("apiVersion: config", "apiVersion: 'config"), false),
            (
                "{\"apiVersion\": \"config.kubernetes.io/v1\", \"kind\": \"ResourceList\", \"items\": []}"
                    .into(),
                true,
            ),
            (String::new(), false),
        ];
        for (text, is) in &read {
            assert_eq!(read_whole(text), *is, "{text}");
            assert_eq!(resource_list(text).is_some(), *is, "{text}");
        }
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

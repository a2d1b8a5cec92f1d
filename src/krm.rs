//! The tool as a KRM function (the Kubernetes Resource Model functions
//! specification, as kpt and kustomize run them): a `ResourceList` on
//! standard input, its `items` injected, its `functionConfig` read as
//! settings, and `results` written back for skips and the cluster's verdicts.

use saphyr_parser::{Event, Parser};
use serde_json::{Map, Value, json};

use crate::diagnostic::{Cause, Diagnostic, PREEXISTING, Severity};
use crate::error::{Error, Located, in_function_terms};
use crate::json::Field;
use crate::pipeline::{Output, Processed};
use crate::workload::ObjectRef;
use crate::yaml::{self, Edit, NodeKind, emit::Layout};

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

/// A ResourceList read from standard input: what a run needs of it.
#[derive(Debug)]
pub struct ResourceList {
    /// The settings its `functionConfig` gives.
    pub config: FunctionConfig,
    /// Where each item came from, as kpt and kustomize annotate it.
    files: Files,
    /// How lines added to it are laid out.
    layout: Layout,
    /// The lines of its middle items (all but the first and the last), when
    /// the edit that sets `results` can be found without them: see
    /// [`add_results`].
    middle: Option<(usize, usize)>,
}

/// Where the items of a ResourceList came from.
#[derive(Debug)]
enum Files {
    /// Read with the list, item by item.
    Read(Vec<Option<Value>>),
    /// Read when asked, from the lines of each item: a large list is not
    /// read whole for them.
    Lines(Vec<(usize, usize)>),
}

impl ResourceList {
    /// Where item `index` of the list (the text `text`) came from.
    fn file(&self, text: &str, index: usize) -> Option<Value> {
        match &self.files {
            Files::Read(files) => files.get(index).cloned().flatten(),
            Files::Lines(items) => {
                let &(from, to) = items.get(index)?;
                let documents = yaml::parse::parse_range(text, from, to).ok()?;
                let root = documents.first()?.root.as_ref()?;
                let NodeKind::Seq { items, .. } = &root.kind else {
                    return None;
                };
                file_of(&yaml::value::to_value(items.first()?).ok()?)
            }
        }
    }
}

/// The ResourceList in `text`, when the text is one. An error (what the
/// tool got wrong, and where) when reading its layout fails.
pub fn resource_list(text: &str) -> Result<Option<ResourceList>, String> {
    if !may_be_resource_list(text) {
        return Ok(None);
    }
    if let Some(list) = resource_list_by_lines(text)? {
        return Ok(Some(list));
    }
    // One document is kept, any other only counted.
    let (mut first, mut documents) = (None, 0);
    let read = yaml::parse::each_document(text, 0, text.len(), |document| {
        documents += 1;
        if documents == 1 {
            first = Some(document);
        }
    });
    let (Ok(()), 1, Some(document)) = (read, documents, first) else {
        return Ok(None);
    };
    let Some(root) = document.root.as_ref() else {
        return Ok(None);
    };
    let Ok(value) = yaml::value::to_value(root) else {
        return Ok(None);
    };
    if !is_resource_list(&value) {
        return Ok(None);
    }
    let items = value.field("items").and_then(Value::as_array);
    Ok(Some(ResourceList {
        config: function_config(&value),
        files: Files::Read(items.into_iter().flatten().map(file_of).collect()),
        layout: yaml::edit::detect_layout(text, root).map_err(|err| defect(text, "", &err))?,
        middle: middle_items(text, &document),
    }))
}

/// The tool's defect `err` at a byte of `text` (`which`, when not the
/// source's own), said with its line and column.
fn defect(text: &str, which: &str, err: &yaml::EditError) -> String {
    let place = Located::at("", text, 1, err.offset, String::new());
    format!(
        "{} (line {}:{}{which})",
        err.message, place.line, place.column
    )
}

/// Said of a place in a ResourceList read without its middle items.
const CUT: &str = " of the list without its middle items";

/// The ResourceList in `text` read without its middle items, when its
/// lines show where each item starts (see [`yaml::parse::list_lines`]): its
/// first and last items and other entries say what it is and how it is laid
/// out, and a large list is never parsed whole. `None` when they do not:
/// it is read whole instead.
fn resource_list_by_lines(text: &str) -> Result<Option<ResourceList>, String> {
    let Ok([list]) = <[_; 1]>::try_from(yaml::parse::list_lines(text)) else {
        return Ok(None);
    };
    let (start, end) = list.document;
    let only_comments_before = yaml::parse::parse_range(text, 0, start)
        .is_ok_and(|documents| documents.iter().all(|d| d.root.is_none()));
    if list.kind != KIND || list.json || end != text.len() || !only_comments_before {
        return Ok(None);
    }
    let items = list.items;
    // The first and the last item, and at least one between them.
    let [_, (from, _), .., (to, _)] = items.as_slice() else {
        return Ok(None);
    };
    let (from, to) = (*from, *to);
    let shorter = without(text, from, to)?;
    let Ok(documents) = yaml::parse_stream(&shorter) else {
        return Ok(None);
    };
    let [document] = documents.as_slice() else {
        return Ok(None);
    };
    let Some(root) = document.root.as_ref() else {
        return Ok(None);
    };
    let Ok(value) = yaml::value::to_value(root) else {
        return Ok(None);
    };
    if !is_resource_list(&value) || document.anchored {
        return Ok(None);
    }
    Ok(Some(ResourceList {
        config: function_config(&value),
        files: Files::Lines(items),
        layout: yaml::edit::detect_layout(&shorter, root)
            .map_err(|err| defect(&shorter, CUT, &err))?,
        middle: Some((from, to)),
    }))
}

/// `text` without its bytes `from..to` (the middle items of a list), or
/// the tool's defect when they are not a stretch of it.
fn without(text: &str, from: usize, to: usize) -> Result<String, String> {
    let stretch = |from, to| yaml::edit::between(text, from, to).map_err(|err| err.to_string());
    Ok([stretch(0, from)?, stretch(to, text.len())?].concat())
}

/// The lines of the middle items of a ResourceList's block sequence of
/// `items` (all but the first and the last, at least one): from the line
/// after the first item to the line after the last but one. Nothing for a
/// document with anchors (an alias may stand for what is cut).
fn middle_items(text: &str, document: &yaml::Document<'_>) -> Option<(usize, usize)> {
    if document.anchored {
        return None;
    }
    let items = document.root.as_ref()?.get("items")?;
    let NodeKind::Seq { items, flow: false } = &items.kind else {
        return None;
    };
    let [first, .., last_but_one, last] = items.as_slice() else {
        return None;
    };
    let (from, to) = (
        line_after(text, first.end),
        line_after(text, last_but_one.end),
    );
    (first.end <= from && from < to && to <= last.start).then_some((from, to))
}

/// Where the line after `at` starts: `at` itself when a line starts there.
fn line_after(text: &str, at: usize) -> usize {
    if at == 0 || text.get(..at).is_some_and(|t| t.ends_with('\n')) {
        return at;
    }
    text.get(at..)
        .and_then(|rest| rest.find('\n'))
        .map_or(text.len(), |i| at + i + 1)
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
    // A JSON document is read after a document marker, as the pipeline
    // reads it: else the parser holds every token of it before its first
    // event (its opening brace might start a key).
    let marked;
    let text = match text.trim_start() {
        json if json.starts_with(['{', '[']) => {
            marked = format!("--- {json}");
            marked.as_str()
        }
        _ => text,
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
                    "warnOnly: expected \"true\" or \"false\", got {other:?}"
                )),
            },
            _ => out.values.push(format!("{key}={text}")),
        }
    }
    out
}

/// The `results` for a processed ResourceList: what [`Diagnostic::of_object`]
/// says of each item, of its severity (a skip and a fix are `info`, a
/// rejection `error`, or a `warning` with `warn_only`), but the hints
/// that are no fix and the notes that are only information; each names
/// the item and the file it came from, when kpt or kustomize say so.
pub fn results(processed: &Processed, list: &ResourceList, warn_only: bool) -> Vec<Value> {
    let mut results = Vec::new();
    for (index, object) in processed.objects.iter().enumerate() {
        let reference = object.reference.as_ref().map(resource_ref);
        // Read only for an item with something to say.
        let file = std::cell::OnceCell::new();
        let file = || file.get_or_init(|| list.file(&processed.source.text, index));
        let mut push = |severity: &str, message: String| {
            let mut result = Map::new();
            result.insert("message".into(), json!(in_function_terms(&message)));
            result.insert("severity".into(), json!(severity));
            if let Some(reference) = &reference {
                result.insert("resourceRef".into(), reference.clone());
            }
            if let Some(file) = file() {
                result.insert("file".into(), file.clone());
            }
            results.push(Value::Object(result));
        };
        for said in Diagnostic::of_object(object, warn_only) {
            let message = match said.cause {
                Cause::Skipped => format!("skipped: {}", said.message),
                Cause::RejectionBeforeInjection => format!("{PREEXISTING}: {}", said.message),
                Cause::Fix => format!("fix: {}", said.message),
                Cause::Rejection | Cause::RejectionWarnedOnly | Cause::ClusterWarning { .. } => {
                    said.message.to_string()
                }
                // The injection's own warnings (an annotation the mesh
                // ignores, a sidecar that never completes) are the user's
                // to hear too; its information is the text report's.
                Cause::Note { .. } if said.severity == Severity::Warning => {
                    said.message.to_string()
                }
                // The hints are said as the fixes of a refusal only.
                Cause::Note { .. } | Cause::Hint => continue,
            };
            push(said.severity.as_str(), message);
        }
    }
    results
}

/// An object's identity as a result's `resourceRef`.
fn resource_ref(r: &ObjectRef) -> Value {
    let mut reference = Map::new();
    reference.insert("apiVersion".into(), json!(r.api_version));
    reference.insert("kind".into(), json!(r.kind));
    reference.insert("name".into(), json!(r.name));
    if let Some(namespace) = &r.namespace {
        reference.insert("namespace".into(), json!(namespace));
    }
    Value::Object(reference)
}

/// The answer to the ResourceList `text` when the run stopped with `error`
/// about one of its items (a workload that cannot be injected as
/// configured): the items as they came, and the error as the one result,
/// on that item. kpt and kustomize show a failed function's results. `None`
/// when the error is not at an item: the run then only fails.
pub fn answer_with_error(text: &str, error: &Located) -> Option<String> {
    if error.document != 1 {
        return None;
    }
    let documents = yaml::parse_stream(text).ok()?;
    let root = documents.first()?.root.as_ref()?;
    let NodeKind::Seq { items, .. } = &root.get("items")?.kind else {
        return None;
    };
    let at = offset_of(text, error.line, error.column)?;
    let item = items.iter().find(|item| item.start == at)?;
    let value = yaml::value::to_value(item).ok()?;
    let mut result = Map::new();
    result.insert("message".into(), json!(in_function_terms(&error.message)));
    result.insert("severity".into(), json!("error"));
    if let Some(reference) = ObjectRef::of(&value) {
        result.insert("resourceRef".into(), resource_ref(&reference));
    }
    if let Some(file) = file_of(&value) {
        result.insert("file".into(), file);
    }
    with_results(text, vec![Value::Object(result)]).ok()
}

/// The byte offset of a 1-based line and column (in characters) of `text`.
fn offset_of(text: &str, line: usize, column: usize) -> Option<usize> {
    let line_start = if line <= 1 {
        0
    } else {
        text.match_indices('\n').nth(line - 2)?.0 + 1
    };
    let rest = text.get(line_start..)?;
    let in_line = rest
        .char_indices()
        .nth(column.checked_sub(1)?)
        .map_or(rest.len(), |(i, _)| i);
    Some(line_start + in_line)
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

/// `processed` (a ResourceList from standard input, `list` as it was
/// read) with `results` set. The edit is found on the source text, whose
/// entries outside `items` processing leaves as they were, and spliced in
/// among the processing's edits: the processed text, which the injected items
/// make larger than the source, is not parsed again. Where the two would
/// change the same bytes, the processed text is edited instead, as
/// [`with_results`] does.
/// An error is the tool's defect, said with the source's name.
pub fn add_results(
    processed: &mut Processed,
    list: &ResourceList,
    results: Vec<Value>,
) -> Result<(), Error> {
    let Output::Spliced(settled) = &processed.output else {
        return edit_processed(processed, results);
    };
    let source = processed.source.text.as_str();
    let added = results_edits(source, list, &results).map_err(|m| internal(processed, m))?;
    let Some(added) = added else {
        return Ok(());
    };
    // The processing's edits are in order and few results edits are made:
    // a plain search is enough.
    let overlaps = added.iter().any(|new| {
        settled
            .edits()
            .any(|e| e.start < new.end && new.start < e.end)
    });
    if overlaps {
        return edit_processed(processed, results);
    }
    // Joined with the results' and checked again as the processing's were:
    // on an error the run stops, its output not written.
    match std::mem::replace(&mut processed.output, Output::Text(String::new())) {
        Output::Spliced(settled) => {
            let mut edits: Vec<Edit> = settled.into_runs().into_iter().flatten().collect();
            edits.extend(added);
            // Stable: at one place, the processing's insertions come first, as
            // they stood in the text the results were once added to.
            edits.sort_by_key(|e| (e.start, e.end));
            processed.output = Output::spliced(&processed.source, vec![edits])?;
        }
        own => processed.output = own,
    }
    Ok(())
}

/// The tool's defect `message` in the processing of `processed`.
fn internal(processed: &Processed, message: String) -> Error {
    Error::Internal(format!("{}: {message}", processed.source.name()))
}

/// The edits that set `results` in `source`, a ResourceList: `None` when
/// its root is not a mapping (nothing to set them in). Found on the source
/// without its middle items where `list` has them marked and the shorter text
/// has the same layout: the edit is outside `items`, and the rest of the list
/// need not be parsed and compared again.
fn results_edits(
    source: &str,
    list: &ResourceList,
    results: &[Value],
) -> Result<Option<Vec<Edit>>, String> {
    if let Some((from, to)) = list.middle {
        let shorter = without(source, from, to)?;
        let setting = edits_setting(&shorter, results, |layout, items| {
            layout == list.layout && items == 2
        });
        // What the shorter text cannot take, the whole one is asked; what
        // the tool got wrong stops.
        let setting = match setting {
            Err(err) if err.defect => return Err(defect(&shorter, CUT, &err)),
            setting => setting.ok().flatten(),
        };
        if let Some(Setting {
            edits,
            items: (items_start, items_end),
        }) = setting
        {
            // Back to the source's places: after `items`, by what was cut.
            let outside = |e: &Edit| e.end <= items_start || e.start >= items_end;
            if edits.iter().all(outside) {
                let cut = to - from;
                let shift = |at: usize| if at >= items_end { at + cut } else { at };
                return Ok(Some(
                    edits
                        .into_iter()
                        .map(|e| Edit {
                            start: shift(e.start),
                            end: shift(e.end),
                            text: e.text,
                        })
                        .collect(),
                ));
            }
        }
    }
    let setting = edits_setting(source, results, |_, _| true).map_err(|err| match err.defect {
        true => defect(source, "", &err),
        false => err.message,
    })?;
    Ok(setting.map(|setting| setting.edits))
}

/// The edits that set `results` in a ResourceList, and where its `items` stand.
struct Setting {
    edits: Vec<Edit>,
    items: (usize, usize),
}

/// [`Setting`] `results` in the ResourceList `text`, if `fits` its layout
/// and number of items.
fn edits_setting(
    text: &str,
    results: &[Value],
    fits: impl Fn(Layout, usize) -> bool,
) -> Result<Option<Setting>, yaml::EditError> {
    let documents =
        yaml::parse_stream(text).map_err(|e| yaml::EditError::cannot(e.message, e.offset))?;
    let Some(root) = documents.first().and_then(|d| d.root.as_ref()) else {
        return Ok(None);
    };
    let items = root.get("items");
    let count = match items.map(|i| &i.kind) {
        Some(NodeKind::Seq { items, .. }) => items.len(),
        _ => 0,
    };
    if !fits(yaml::edit::detect_layout(text, root)?, count) {
        return Ok(None);
    }
    let mut value = yaml::value::to_value(root)?;
    let Some(map) = value.as_object_mut() else {
        return Ok(None);
    };
    if results.is_empty() {
        map.shift_remove("results");
    } else {
        map.insert("results".into(), Value::Array(results.to_vec()));
    }
    let edits = yaml::edit::diff(text, root, &value)?;
    Ok(Some(Setting {
        edits: yaml::edit::settle(text, edits)?,
        items: items.map_or((root.end, root.end), |i| (i.start, i.end)),
    }))
}

/// [`add_results`] the long way: the processed text, parsed and edited.
fn edit_processed(processed: &mut Processed, results: Vec<Value>) -> Result<(), Error> {
    let processed_text = processed.try_text()?;
    let text = with_results(&processed_text, results).map_err(|m| internal(processed, m))?;
    processed.output = Output::Text(text);
    Ok(())
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
    let edits = yaml::edit::diff(text, root, &value).map_err(|e| match e.defect {
        true => defect(text, "", &e),
        false => e.message,
    })?;
    yaml::edit::apply(text, edits).map_err(|err| defect(text, "", &err))
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
            // JSON, as `kubectl get -o json` writes a list.
            "\n{\"apiVersion\": \"v1\", \"items\": [{}, {}], \"kind\": \"List\"}\n".into(),
        ];
        for text in &turned_away {
            assert!(!may_be_resource_list(text), "{text}");
            assert!(!read_whole(text), "{text}");
            assert!(resource_list(text).expect("read").is_none(), "{text}");
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
            assert_eq!(resource_list(text).expect("read").is_some(), *is, "{text}");
        }
    }

    /// A ResourceList through the pipeline, with the default settings.
    fn processed(text: &str) -> Processed {
        let profile = crate::profile::Profile::embedded(crate::profile::EMBEDDED[0].0)
            .expect("embedded profile");
        let settings = crate::pipeline::Settings {
            keep_patches: false,
            ..crate::pipeline::Settings::new(crate::pipeline::Action::Inject, profile)
        };
        let source = crate::source::Source::new(None, text.to_string());
        let context = [crate::cluster::sample_trust_roots()];
        let mut results =
            crate::pipeline::process_all(vec![source], &context, &settings).expect("processed");
        results.pop().expect("one source")
    }

    #[test]
    fn results_found_on_the_source_are_those_found_on_the_output() {
        let head = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n";
        let config =
            "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: f}\n";
        let quota = "- apiVersion: v1\n  kind: ResourceQuota\n  metadata: {name: mem, namespace: shop}\n  spec:\n    hard: {limits.memory: 8Gi}\n";
        let map = "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: m}\n";
        let deployment = |name: &str| {
            format!(
                "- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {{name: {name}, namespace: shop}}\n  spec:\n    selector: {{matchLabels: {{app: web}}}}\n    template:\n      metadata: {{labels: {{app: web}}}}\n      spec:\n        containers:\n        - name: web\n          image: nginx\n"
            )
        };
        let items = format!(
            "items:\n{quota}{}{}{}",
            deployment("a"),
            deployment("b"),
            deployment("c")
        );
        let stale = "results:\n- message: stale\n  severity: info\n";
        let texts = [
            // (text, whether its middle items are left out to find the edit)
            (format!("{head}{items}{config}"), true),
            // The results go where the last item gets new lines too.
            (format!("{head}{config}{items}"), true),
            (format!("{head}{config}{items}").trim_end().to_string(), true),
            (format!("{head}{items}{config}").replace('\n', "\r\n"), true),
            (format!("{head}{stale}{items}# the end\n"), true),
            (format!("{head}items:\n{map}{map}{map}{stale}"), true),
            (format!("{head}items:\n{map}{map}{map}").trim_end().to_string() + "\n" + stale.trim_end(), true),
            (
                format!(
                    "{head}items:\n{}",
                    format!("{quota}# between\n{}{}", deployment("a"), deployment("b"))
                        .lines()
                        .map(|line| format!("  {line}\n"))
                        .collect::<String>()
                ),
                true,
            ),
            // An alias among the items left out stands for an anchor among
            // them: what is kept reads without them.
            (
                format!("{head}{items}").replacen("image: nginx", "image: &i nginx", 1).replacen(
                    "image: nginx",
                    "image: *i",
                    1,
                ),
                true,
            ),
            // An alias in the last item may stand for what is left out.
            (
                format!("{head}{items}").replacen("image: nginx", "image: &i nginx", 1).replacen(
                    "image: nginx",
                    "image: *i",
                    2,
                ),
                false,
            ),
            // Two items leave nothing out.
            (format!("{head}items:\n{quota}{}", deployment("a")), false),
            (
                "{\"apiVersion\": \"config.kubernetes.io/v1\", \"kind\": \"ResourceList\", \"items\": [{\"apiVersion\": \"v1\", \"kind\": \"ResourceQuota\", \"metadata\": {\"name\": \"q\", \"namespace\": \"shop\"}, \"spec\": {\"hard\": {\"limits.memory\": \"8Gi\"}}}, {\"apiVersion\": \"apps/v1\", \"kind\": \"Deployment\", \"metadata\": {\"name\": \"a\", \"namespace\": \"shop\"}, \"spec\": {\"template\": {\"spec\": {\"containers\": [{\"name\": \"web\", \"image\": \"nginx\"}]}}}}]}\n".to_string(),
                false,
            ),
        ];
        for (text, cut) in &texts {
            let list = resource_list(text)
                .expect("read")
                .unwrap_or_else(|| panic!("not a ResourceList: {text}"));
            assert_eq!(list.middle.is_some(), *cut, "{text}");
            let processed = processed(text);
            let found = results(&processed, &list, false);
            let expected = with_results(
                &processed.try_text().expect("the edits fit the source"),
                found.clone(),
            )
            .expect("edits");
            let mut spliced = processed.clone();
            add_results(&mut spliced, &list, found).expect("edits");
            assert_eq!(
                spliced.try_text().expect("the edits fit the source"),
                expected,
                "{text}"
            );
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

//! What an injection changes in the text without a change of meaning, kept
//! in its record so that uninject writes the text back as it was: how a
//! field that was null spelled its null (`annotations: ~`), and which keys
//! a merge key (`<<`) brought that the injection had to write out in their
//! mapping. The rules work on values and cannot see either; the pipeline
//! adds them to the record after planning ([`attach_nulls`],
//! [`attach_merged`]) and hands them to the edit when uninjecting
//! ([`for_uninject`]).

use json_patch::PatchOperation;
use serde_json::Value;

use super::verbatim::{each_object, pod_paths, record_path, value_at, value_at_mut};
use crate::rules::PodPaths;
use crate::rules::record::{RECORD_ANNOTATION, Record};
use crate::rules::uninject::created_path;
use crate::workload::WorkloadTypes;
use crate::yaml::EditError;
use crate::yaml::edit::{Kept, Verbatim, between, null_after_key};
use crate::yaml::{Node, NodeKind};

/// The key and value nodes of the entry `key` of the mapping `map`.
fn entry<'n, 't>(map: &'n Node<'t>, key: &str) -> Option<(&'n Node<'t>, &'n Node<'t>)> {
    let NodeKind::Map { entries, .. } = &map.kind else {
        return None;
    };
    entries
        .iter()
        .find(|(k, _)| k.as_str() == Some(key))
        .map(|(k, v)| (k, v))
}

/// Add to the record of each workload of `result` (the document `root` as
/// planned) what `find` finds for it, given its node, its value and its pod
/// paths: `add` writes that into the record. Workloads without a record
/// are passed over. Whether any record changed, or the first error `find`
/// gave (the records are then not all written).
pub(super) fn add_to_records<T, E>(
    root: &Node<'_>,
    result: &mut Value,
    types: &WorkloadTypes,
    mut find: impl FnMut(&Node<'_>, &Value, &PodPaths) -> Result<Option<T>, E>,
    add: impl Fn(&mut Record, T),
) -> Result<bool, E> {
    let mut changed = false;
    let mut failed = None;
    each_object(root, result, |node, object| {
        if failed.is_some() {
            return;
        }
        let Some(paths) = pod_paths(object, types) else {
            return;
        };
        let at = record_path(&paths);
        if value_at(object, &at).and_then(Value::as_str).is_none() {
            return;
        }
        let found = match find(node, object, &paths) {
            Ok(Some(found)) => found,
            Ok(None) => return,
            Err(err) => {
                failed = Some(err);
                return;
            }
        };
        let Some(slot) = value_at_mut(object, &at) else {
            return;
        };
        let mut record = Record::decode(slot.as_str().unwrap_or_default());
        add(&mut record, found);
        *slot = Value::String(record.encode());
        changed = true;
    });
    match failed {
        Some(err) => Err(err),
        None => Ok(changed),
    }
}

/// The record of `object`, a workload whose pod paths are `paths`, as written.
fn record_text<'v>(object: &'v Value, paths: &PodPaths) -> Option<&'v str> {
    value_at(object, &record_path(paths)).and_then(Value::as_str)
}

/// Add to each record of `result` (the document `root`, parsed from `text`,
/// as injecting planned it) how the fields it lists as null wrote their
/// null, where the edit takes that text out. An error when the nodes'
/// offsets are not in `text`.
pub(super) fn attach_nulls(
    text: &str,
    root: &Node<'_>,
    result: &mut Value,
    types: &WorkloadTypes,
) -> Result<bool, EditError> {
    let find = |node: &Node<'_>, object: &Value, paths: &PodPaths| {
        let Some(record) = record_text(object, paths).filter(|r| r.contains("wasNull=")) else {
            return Ok(None);
        };
        let record = Record::decode(record);
        let mut texts = Vec::new();
        for field in &record.was_null {
            let Some(mut path) = created_path(paths, field) else {
                continue;
            };
            let Some(key) = path.pop() else {
                continue;
            };
            let Some((k, v)) = node.at(&path).and_then(|map| entry(map, &key)) else {
                continue;
            };
            if let Some((from, to)) = null_after_key(text, k, v)? {
                texts.push(Record::null_text(field, between(text, from, to)?));
            }
        }
        Ok((!texts.is_empty()).then_some(texts))
    };
    add_to_records(root, result, types, find, |record, texts| {
        record.null_texts = texts;
    })
}

/// Add to each record of `result` the keys a merge brought that the edit
/// wrote out, and the mappings written `{<<: *a}` it added to
/// (`materialised`).
pub(super) fn attach_merged(
    root: &Node<'_>,
    result: &mut Value,
    types: &WorkloadTypes,
    materialised: &[String],
) {
    // (A key the record cannot hold as it is stays written out.)
    let mut keys: Vec<String> = materialised
        .iter()
        .filter(|k| !k.contains([',', ';', '%', '=']))
        .cloned()
        .collect();
    keys.sort();
    keys.dedup();
    let find = |_: &Node<'_>, _: &Value, _: &PodPaths| {
        Ok::<_, std::convert::Infallible>(Some(keys.clone()))
    };
    let added = add_to_records(root, result, types, find, |record, keys| {
        record.merged = keys;
    });
    match added {
        Ok(_) => {}
        Err(never) => match never {},
    }
}

/// The app's handlers a mesh's agent may take over (see
/// `mesh::istio::probes`), by their path in a container: the record names
/// them by their last field.
const HANDLERS: [&[&str]; 5] = [
    &["readinessProbe"],
    &["livenessProbe"],
    &["startupProbe"],
    &["lifecycle", "preStop"],
    &["lifecycle", "postStart"],
];

/// Add to each record of `result` the lines of every TCP or gRPC action of
/// a probe or hook (the document `root`, parsed from `text`) that the
/// injection replaced by another (Istio's agent's HTTP GET).
pub(super) fn attach_probes(
    text: &str,
    root: &Node<'_>,
    result: &mut Value,
    types: &WorkloadTypes,
) -> Result<bool, EditError> {
    let find = |node: &Node<'_>, object: &Value, paths: &PodPaths| {
        let mut texts = Vec::new();
        for list in ["initContainers", "containers"] {
            let Some(NodeKind::Seq { items, .. }) = node.at(&paths.spec(list)).map(|n| &n.kind)
            else {
                continue;
            };
            let now = value_at(object, &paths.spec(list)).and_then(Value::as_array);
            for item in items {
                let Some(name) = item.get("name").and_then(Node::as_str) else {
                    continue;
                };
                let Some(container) = now
                    .into_iter()
                    .flatten()
                    .find(|c| c.get("name").and_then(Value::as_str) == Some(name))
                else {
                    continue;
                };
                for field in HANDLERS {
                    let (Some(handler), Some(last)) = (item.at(field), field.last()) else {
                        continue;
                    };
                    let replaced = |kind: &str| {
                        field
                            .iter()
                            .try_fold(container, |v, k| v.get(*k))
                            .is_some_and(|h| h.get(kind).is_none() && h.get("httpGet").is_some())
                    };
                    for kind in ["tcpSocket", "grpc"] {
                        if handler.get(kind).is_none() || !replaced(kind) {
                            continue;
                        }
                        if let Some(entry) = Verbatim::of_entry(text, handler, kind)? {
                            texts.push(Record::probe_text(name, last, &entry.text));
                        }
                    }
                }
            }
        }
        Ok((!texts.is_empty()).then_some(texts))
    };
    add_to_records(root, result, types, find, |record, texts| {
        record.probe_texts = texts;
    })
}

/// The patch of an object brought in line with its record as written
/// (`result`, the document's final value): an operation that writes the
/// record, or a value holding it, writes the record with what was added
/// to it after planning.
pub(super) fn sync_ops(ops: &mut [PatchOperation], result: &Value) {
    fn sync(value: &mut Value, now: &Value) {
        match (value, now) {
            (Value::Object(map), Value::Object(now)) => {
                for (key, value) in map.iter_mut() {
                    let Some(now) = now.get(key) else { continue };
                    if key == RECORD_ANNOTATION {
                        if value.is_string() && now.is_string() {
                            *value = now.clone();
                        }
                    } else {
                        sync(value, now);
                    }
                }
            }
            (Value::Array(items), Value::Array(now)) if items.len() == now.len() => {
                for (value, now) in items.iter_mut().zip(now) {
                    sync(value, now);
                }
            }
            _ => {}
        }
    }
    for op in ops {
        let (path, value) = match op {
            PatchOperation::Add(o) => (&o.path, &mut o.value),
            PatchOperation::Replace(o) => (&o.path, &mut o.value),
            _ => continue,
        };
        let Some(now) = result.pointer(path.as_str()) else {
            continue;
        };
        let last = path.tokens().last().map(|t| t.decoded().into_owned());
        if last.as_deref() == Some(RECORD_ANNOTATION) {
            if value.is_string() && now.is_string() {
                *value = now.clone();
            }
        } else {
            sync(value, now);
        }
    }
}

/// What the records of the document `root` keep for uninject to write
/// back: the nulls, by the collection that stands in their place, and the
/// keys to leave to their merge again.
pub(super) fn for_uninject(root: &Node<'_>, types: &WorkloadTypes, kept: &mut Kept) {
    for object in objects_of(root) {
        let text = |key: &str| object.get(key).and_then(Node::as_str);
        let (Some(api_version), Some(kind)) = (text("apiVersion"), text("kind")) else {
            continue;
        };
        let Some(kind) = types.find(api_version, kind) else {
            continue;
        };
        let paths = crate::rules::PodPaths::of(kind);
        let Some(record) = object.at(&record_path(&paths)).and_then(Node::as_str) else {
            continue;
        };
        if !["nullTexts=", "merged=", "probeTexts="]
            .iter()
            .any(|field| record.contains(field))
        {
            continue;
        }
        let record = Record::decode(record);
        kept.entries.extend(
            record
                .probe_texts()
                .into_iter()
                .filter_map(|(_, _, text)| Verbatim::entry_from_text(text)),
        );
        for (field, null) in record.null_texts() {
            let node = created_path(&paths, &field).and_then(|path| object.at(&path));
            if let Some(node) = node {
                kept.nulls.push((node.start, null));
            }
        }
        kept.unmerged.extend(record.merged.iter().cloned());
    }
}

/// The objects of a document: a `List`'s items, or the document itself.
fn objects_of<'n, 't>(root: &'n Node<'t>) -> Vec<&'n Node<'t>> {
    let kind = root.get("kind").and_then(Node::as_str);
    match (kind, root.get("items")) {
        (Some(kind), Some(items)) if crate::workload::is_list_kind(kind) => (0..)
            .map_while(|i: usize| items.at(&[i.to_string()]))
            .collect(),
        _ => vec![root],
    }
}

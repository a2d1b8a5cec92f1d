//! The pod's own containers an injection merges into the mesh's (Istio's
//! user-written `istio-proxy` of a gateway or an override), kept as the
//! manifest wrote them. The rules work on values and record such a
//! container's value; its text is the pipeline's to keep: after planning an
//! injection, the record gets each one's lines ([`attach`]); before writing
//! an uninjection, the lines recorded are what the edit writes back for them
//! ([`recorded`]), comments and quoting included. Only meshes that merge
//! a pod's own containers pay for this.
//!
//! Likewise a grace period inject raised (`terminationGracePeriodSeconds`),
//! when the manifest wrote it otherwise than as the number is written
//! (`+0`, `0x0A`, `1_0`): the record holds the number, which the rules give
//! back, and the text, which [`attach_grace`] adds and [`restore_grace`]
//! writes back in place of the number.

use serde_json::Value;

use crate::json::Field;
use crate::rules::PodPaths;
use crate::rules::record::{RECORD_ANNOTATION, Record};
use crate::workload::{self, WorkloadTypes};
use crate::yaml::edit::{Text, Verbatim};
use crate::yaml::node::ScalarStyle;
use crate::yaml::value::resolve_plain;
use crate::yaml::{Edit, Node, NodeKind};

/// Where a workload's record is, below the object.
fn record_path(paths: &PodPaths) -> Vec<String> {
    let mut path = paths.metadata("annotations").into_owned();
    path.push(RECORD_ANNOTATION.to_string());
    path
}

fn value_at<'v>(value: &'v Value, path: &[String]) -> Option<&'v Value> {
    path.iter().try_fold(value, |v, step| match v {
        Value::Array(items) => items.get(step.parse::<usize>().ok()?),
        _ => v.field(step),
    })
}

fn value_at_mut<'v>(value: &'v mut Value, path: &[String]) -> Option<&'v mut Value> {
    path.iter().try_fold(value, |v, step| match v {
        Value::Array(items) => items.get_mut(step.parse::<usize>().ok()?),
        _ => v.field_mut(step),
    })
}

/// The pod paths of the workload `object` is, if it is one.
fn pod_paths(object: &Value, types: &WorkloadTypes) -> Option<std::rc::Rc<PodPaths>> {
    let text = |key: &str| object.field(key).and_then(Value::as_str);
    let kind = types.find(text("apiVersion")?, text("kind")?)?;
    Some(PodPaths::of(kind))
}

/// The record of the workload `object`, decoded, with the paths it was read by.
fn record_of(object: &Value, types: &WorkloadTypes) -> Option<(std::rc::Rc<PodPaths>, Record)> {
    let paths = pod_paths(object, types)?;
    let text = value_at(object, &record_path(&paths))?.as_str()?;
    // Most records hold no container of the pod's own: not decoded.
    text.contains("userContainers=")
        .then(|| (paths.clone(), Record::decode(text)))
}

/// Each object of a document (a `List`'s items, or the document itself),
/// beside its node.
fn each_object(root: &Node<'_>, value: &mut Value, mut visit: impl FnMut(&Node<'_>, &mut Value)) {
    if workload::list_items(value).is_none() {
        visit(root, value);
        return;
    }
    let nodes = root.get("items");
    if let Some(Value::Array(items)) = value.field_mut("items") {
        for (index, item) in items.iter_mut().enumerate() {
            if let Some(node) = nodes.and_then(|n| n.at(&[index.to_string()])) {
                visit(node, item);
            }
        }
    }
}

/// Add to each record of `result` (the document `root`, parsed from `text`,
/// as injecting planned it) the lines of the pod's own containers it holds:
/// from the manifest where the container still stands as it was, else from
/// the record of an earlier injection (one injected again).
pub(super) fn attach(text: &str, root: &Node<'_>, result: &mut Value, types: &WorkloadTypes) {
    each_object(root, result, |node, object| {
        let Some((paths, mut record)) = record_of(object, types) else {
            return;
        };
        let earlier = || -> Vec<Verbatim> {
            let node = node.at(&record_path(&paths)).and_then(Node::as_str);
            node.map(Record::decode)
                .map(|r| r.user_texts())
                .unwrap_or_default()
                .into_iter()
                .filter_map(|(_, _, text)| Verbatim::from_text(text))
                .collect()
        };
        record.user_texts.clear();
        for (list, index, container) in record.user_containers() {
            let in_place = node
                .at(&paths.spec(&list))
                .and_then(|seq| Verbatim::of_item(text, seq, index))
                .filter(|v| v.value == container);
            let found = in_place.or_else(|| earlier().into_iter().find(|v| v.value == container));
            if let Some(found) = found {
                record
                    .user_texts
                    .push(Record::user_text(&list, index, &found.text));
            }
        }
        if let Some(slot) = value_at_mut(object, &record_path(&paths)) {
            *slot = Value::String(record.encode());
        }
    });
}

/// The objects of the document `root` (a `List`'s items, or the document
/// itself) that are workloads, with their pod paths.
fn workloads<'n, 'a>(
    root: &'n Node<'a>,
    types: &WorkloadTypes,
) -> Vec<(&'n Node<'a>, std::rc::Rc<PodPaths>)> {
    let kind_of = |node: &Node<'_>| node.get("kind").and_then(Node::as_str).map(str::to_string);
    let objects: Vec<&Node<'_>> = match (kind_of(root), root.get("items")) {
        (Some(kind), Some(items)) if workload::is_list_kind(&kind) => (0..)
            .map_while(|i: usize| items.at(&[i.to_string()]))
            .collect(),
        _ => vec![root],
    };
    objects
        .into_iter()
        .filter_map(|object| {
            let api_version = object.get("apiVersion").and_then(Node::as_str)?;
            let kind = types.find(api_version, &kind_of(object)?)?;
            Some((object, PodPaths::of(kind)))
        })
        .collect()
}

/// The lines the records of the document `root` hold for the pod's own
/// containers: what uninject writes back for them.
pub(super) fn recorded(root: &Node<'_>, types: &WorkloadTypes) -> Vec<Verbatim> {
    let mut found = Vec::new();
    for (object, paths) in workloads(root, types) {
        let record = object.at(&record_path(&paths)).and_then(Node::as_str);
        let Some(record) = record.filter(|r| r.contains("userTexts=")) else {
            continue;
        };
        found.extend(
            Record::decode(record)
                .user_texts()
                .into_iter()
                .filter_map(|(_, _, text)| Verbatim::from_text(text)),
        );
    }
    found
}

const GRACE: &str = "terminationGracePeriodSeconds";

/// The text of a plain scalar without tag or anchor.
fn plain_text<'n>(node: &'n Node<'_>) -> Option<&'n str> {
    match &node.kind {
        NodeKind::Scalar {
            text,
            style: ScalarStyle::Plain,
            tag: None,
        } if node.anchor.is_none() => Some(text),
        _ => None,
    }
}

/// Add to each record of `result` (the document `root` as injecting
/// planned it) with a grace period inject raised how the manifest wrote
/// that period, where it wrote it otherwise than as the number is written.
pub(super) fn attach_grace(root: &Node<'_>, result: &mut Value, types: &WorkloadTypes) {
    each_object(root, result, |node, object| {
        let Some(paths) = pod_paths(object, types) else {
            return;
        };
        let Some(slot) = value_at_mut(object, &record_path(&paths)) else {
            return;
        };
        let Some(text) = slot.as_str().filter(|t| t.contains("grace=")) else {
            return;
        };
        let mut record = Record::decode(text);
        let Some(grace) = &record.grace else {
            return;
        };
        let written = node.at(&paths.spec(GRACE)).and_then(plain_text);
        match written {
            Some(written) if written != grace && resolve_plain(written) == resolve_plain(grace) => {
                record.set_grace_text(written);
                *slot = Value::String(record.encode());
            }
            _ => {}
        }
    });
}

/// Write back, in `edits` (which uninject the document `root`), each grace
/// period its record holds the text of as the manifest wrote it.
pub(super) fn restore_grace(root: &Node<'_>, types: &WorkloadTypes, edits: &mut [Edit]) {
    for (object, paths) in workloads(root, types) {
        let record = object.at(&record_path(&paths)).and_then(Node::as_str);
        let Some(record) = record.filter(|r| r.contains("graceText=")) else {
            continue;
        };
        let record = Record::decode(record);
        let (Some(grace), Some(written)) = (&record.grace, record.grace_as_written()) else {
            continue;
        };
        let Some(node) = object.at(&paths.spec(GRACE)) else {
            continue;
        };
        for edit in edits
            .iter_mut()
            .filter(|e| e.start == node.start && e.end == node.end)
        {
            if let Text::Own(text) = &edit.text
                && text.trim() == grace
            {
                edit.text = Text::Own(text.replacen(grace.as_str(), &written, 1));
            }
        }
    }
}

//! The pod's own containers an injection merges into the mesh's (Istio's
//! user-written `istio-proxy` of a gateway or an override), kept as the
//! manifest wrote them. The rules work on values and record such a
//! container's value; its text is the pipeline's to keep: after planning an
//! injection, the record gets each one's lines ([`attach`]); before writing
//! an uninjection, the lines recorded are what the edit writes back for them
//! ([`recorded`]), comments and quoting included. Only meshes that merge
//! a pod's own containers pay for this.
//!
//! Likewise the scalars inject replaces and uninject gives back by value (a
//! grace period inject raised, the port and path of a probe Istio's agent
//! takes over), where the manifest wrote them otherwise than the tool
//! writes their value (`+0`, `0x0A`, `1_0`, `"/live"` in a flow mapping):
//! [`attach_texts`] adds their text to the record, and [`restore_texts`]
//! writes it back over what uninject wrote.

use serde_json::Value;

use crate::json::Field;
use crate::rules::PodPaths;
use crate::rules::record::{RECORD_ANNOTATION, Record};
use crate::workload::{self, WorkloadTypes};
use crate::yaml::edit::{Text, Verbatim, between};
use crate::yaml::{Edit, EditError, Node, NodeKind};

/// Where a workload's record is, below the object.
pub(super) fn record_path(paths: &PodPaths) -> Vec<String> {
    let mut path = paths.metadata("annotations").into_owned();
    path.push(RECORD_ANNOTATION.to_string());
    path
}

pub(super) fn value_at<'v>(value: &'v Value, path: &[String]) -> Option<&'v Value> {
    path.iter().try_fold(value, |v, step| match v {
        Value::Array(items) => items.get(step.parse::<usize>().ok()?),
        _ => v.field(step),
    })
}

pub(super) fn value_at_mut<'v>(value: &'v mut Value, path: &[String]) -> Option<&'v mut Value> {
    path.iter().try_fold(value, |v, step| match v {
        Value::Array(items) => items.get_mut(step.parse::<usize>().ok()?),
        _ => v.field_mut(step),
    })
}

/// The pod paths of the workload `object` is, if it is one.
pub(super) fn pod_paths(object: &Value, types: &WorkloadTypes) -> Option<PodPaths> {
    let text = |key: &str| object.field(key).and_then(Value::as_str);
    let kind = types.find(text("apiVersion")?, text("kind")?)?;
    Some(PodPaths::of(kind))
}

/// Each object of a document (a `List`'s items, or the document itself),
/// beside its node.
pub(super) fn each_object(
    root: &Node<'_>,
    value: &mut Value,
    mut visit: impl FnMut(&Node<'_>, &mut Value),
) {
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
/// the record of an earlier injection (one injected again). An error when
/// the nodes' offsets are not in `text`.
pub(super) fn attach(
    text: &str,
    root: &Node<'_>,
    result: &mut Value,
    types: &WorkloadTypes,
) -> Result<(), EditError> {
    let find = |node: &Node<'_>, object: &Value, paths: &PodPaths| {
        let record = value_at(object, &record_path(paths)).and_then(Value::as_str);
        // Most records hold no container of the pod's own: not decoded.
        let Some(record) = record.filter(|r| r.contains("userContainers=")) else {
            return Ok(None);
        };
        let record = Record::decode(record);
        let earlier = || -> Vec<Verbatim> {
            let node = node.at(&record_path(paths)).and_then(Node::as_str);
            node.map(Record::decode)
                .map(|r| r.user_texts())
                .unwrap_or_default()
                .into_iter()
                .filter_map(|(_, _, text)| Verbatim::from_text(text))
                .collect()
        };
        let mut texts = Vec::new();
        for (list, index, container) in record.user_containers() {
            let in_place = match node.at(&paths.spec(&list)) {
                Some(seq) => Verbatim::of_item(text, seq, index)?,
                None => None,
            };
            let in_place = in_place.filter(|v| v.value == container);
            let found = in_place.or_else(|| earlier().into_iter().find(|v| v.value == container));
            if let Some(found) = found {
                texts.push(Record::user_text(&list, index, &found.text));
            }
        }
        Ok(Some(texts))
    };
    super::kept::add_to_records(root, result, types, find, |record, texts| {
        record.user_texts = texts;
    })
    .map(|_| ())
}

/// The objects of the document `root` (a `List`'s items, or the document
/// itself) that are workloads, with their pod paths.
fn workloads<'n, 'a>(root: &'n Node<'a>, types: &WorkloadTypes) -> Vec<(&'n Node<'a>, PodPaths)> {
    let kind_of = |node: &Node<'_>| node.get("kind").and_then(Node::as_str).map(str::to_string);
    let objects: Vec<&Node<'_>> = match (&root.kind, kind_of(root), root.get("items")) {
        // A list's item, read from its `-` on: a sequence of one.
        (NodeKind::Seq { items, .. }, _, _) => items.iter().collect(),
        (_, Some(kind), Some(items)) if workload::is_list_kind(&kind) => (0..)
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

/// The paths (below a workload's pod spec) of the scalars inject may
/// replace that uninject gives back by value, in the manifest `spec`: its
/// grace period, and with `probes` (a mesh whose agent takes them over) its
/// probes' HTTP actions.
fn replaceable(spec: &Node<'_>, probes: bool) -> Vec<Vec<String>> {
    let mut out = vec![vec!["terminationGracePeriodSeconds".to_string()]];
    let lists = if probes {
        &["containers", "initContainers"][..]
    } else {
        &[]
    };
    for &list in lists {
        let Some(NodeKind::Seq { items, .. }) = spec.get(list).map(|n| &n.kind) else {
            continue;
        };
        for (index, container) in items.iter().enumerate() {
            for probe in ["readinessProbe", "livenessProbe", "startupProbe"] {
                // A TCP or gRPC action the agent takes over is kept whole,
                // lines and all (`kept::attach_probes`): not here again.
                if container.at(&[probe, "httpGet"]).is_none() {
                    continue;
                }
                for field in ["port", "path", "scheme", "host"] {
                    let path = [list, &index.to_string(), probe, "httpGet", field];
                    out.push(path.iter().map(|s| s.to_string()).collect());
                }
            }
        }
    }
    out
}

/// Add to each record of `result` (the document `root`, parsed from `text`,
/// as injecting planned it) the text of each scalar inject replaced that
/// uninject gives back by value, where the manifest wrote it otherwise than
/// the tool writes its value. Probes are looked at with `probes` only (a
/// mesh whose agent takes them over). An error when the nodes' offsets are
/// not in `text`.
pub(super) fn attach_texts(
    text: &str,
    root: &Node<'_>,
    result: &mut Value,
    types: &WorkloadTypes,
    probes: bool,
) -> Result<(), EditError> {
    let find = |node: &Node<'_>, object: &Value, paths: &PodPaths| {
        let Some(spec) = node.at(&paths.spec) else {
            return Ok(None);
        };
        let mut texts = Vec::new();
        for path in replaceable(spec, probes) {
            let Some(scalar) = spec.at(&path) else {
                continue;
            };
            let NodeKind::Scalar { tag: None, .. } = &scalar.kind else {
                continue;
            };
            if scalar.anchor.is_some() {
                continue;
            }
            let Ok(value) = crate::yaml::value::to_value(scalar) else {
                continue;
            };
            let mut full = paths.spec.to_vec();
            full.extend(path);
            if value_at(object, &full) == Some(&value) {
                continue;
            }
            let written = between(text, scalar.start, scalar.end)?;
            if written != crate::yaml::emit::Layout::default().flow(&value) {
                texts.push((full, written));
            }
        }
        Ok::<_, EditError>((!texts.is_empty()).then_some(texts))
    };
    super::kept::add_to_records(root, result, types, find, |record, texts| {
        for (path, written) in texts {
            record.push_text(&path, written);
        }
    })
    .map(|_| ())
}

/// `uninjected`, the text uninject made of a document whose injected tree
/// is `root`, with the scalars the records of `root` keep written back as
/// the manifest wrote them (where uninject gave back their value); `None`
/// when no record keeps any, or when `uninjected` does not read as one
/// document (uninject's text is then written as it is: the same values, some
/// spelled as the tool writes them). An error for edits the tool got wrong.
pub(super) fn restore_texts(
    root: &Node<'_>,
    types: &WorkloadTypes,
    uninjected: &str,
) -> Result<Option<String>, EditError> {
    let kept: Vec<Vec<(Vec<String>, String)>> = workloads(root, types)
        .into_iter()
        .map(|(object, paths)| {
            object
                .at(&record_path(&paths))
                .and_then(Node::as_str)
                .filter(|r| r.starts_with("texts=") || r.contains(";texts="))
                .map(|r| Record::decode(r).texts())
                .unwrap_or_default()
        })
        .collect();
    if kept.iter().all(Vec::is_empty) {
        return Ok(None);
    }
    let Ok(documents) = crate::yaml::parse_stream(uninjected) else {
        return Ok(None);
    };
    let [document] = documents.as_slice() else {
        return Ok(None);
    };
    let Some(bare) = document.root.as_ref() else {
        return Ok(None);
    };
    let mut edits = Vec::new();
    for ((object, _), texts) in workloads(bare, types).into_iter().zip(kept) {
        for (path, written) in texts {
            let Some(node) = object.at(&path) else {
                continue;
            };
            let NodeKind::Scalar { .. } = &node.kind else {
                continue;
            };
            if between(uninjected, node.start, node.end)? == written {
                continue;
            }
            let same = crate::yaml::parse_stream(&format!("k: {written}\n"))
                .ok()
                .and_then(|d| d.first()?.root.as_ref()?.get("k").cloned())
                .and_then(|n| crate::yaml::value::to_value(&n).ok());
            let value = crate::yaml::value::to_value(node).ok();
            if same.is_some() && same == value {
                edits.push(Edit {
                    start: node.start,
                    end: node.end,
                    text: Text::Own(written),
                });
            }
        }
    }
    crate::yaml::edit::apply(uninjected, edits).map(Some)
}

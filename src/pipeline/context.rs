//! Each source parsed, and the cluster's objects (policies, the meshes'
//! ConfigMaps) gathered from the input and the `--context` files, checked
//! before anything is planned with them.

use super::*;

/// Add the context objects of `document` (itself, or the items of a `List`)
/// that `cluster` wants to `found`.
pub(super) fn gather_found(
    source: &Source,
    document: &Document<'_>,
    cluster: &ClusterContext,
    found: &mut Vec<Value>,
) -> Result<(), Error> {
    let Some(root) = &document.root else {
        return Ok(());
    };
    let Some(identity) = identity_of(root) else {
        return Ok(());
    };
    let is_list = workload::is_list_kind(&identity.kind);
    if !is_list && !cluster.wants(&identity.kind, &identity.name) {
        return Ok(());
    }
    let value = yaml::value::to_value(root).map_err(|e| {
        Error::Document(Located::at(
            &source.name(),
            &source.text,
            document.index,
            e.offset,
            e.message,
        ))
    })?;
    let wanted = |item: &Value| {
        let kind = item.field("kind").and_then(Value::as_str);
        let name = item.pointer("/metadata/name").and_then(Value::as_str);
        cluster.wants(kind.unwrap_or_default(), name.unwrap_or_default())
    };
    match workload::list_items(&value) {
        Some(items) => {
            let nodes = match root.get("items").map(|i| &i.kind) {
                Some(yaml::NodeKind::Seq { items, .. }) => items.as_slice(),
                _ => &[],
            };
            for (index, item) in items.iter().enumerate().filter(|(_, i)| wanted(i)) {
                let node = nodes.get(index).unwrap_or(root);
                check_documents(source, document.index, node, item, cluster)?;
                found.extend(overlays::placed(item.clone(), &source.kustomized));
            }
        }
        None if wanted(&value) => {
            check_documents(source, document.index, root, &value, cluster)?;
            found.extend(overlays::placed(value, &source.kustomized));
        }
        None => {}
    }
    Ok(())
}

/// The data entries of a ConfigMap (`object`, at `node` of document
/// `index` of `source`) that a profile reads as YAML documents must read:
/// one that does not stops the run, naming the ConfigMap and where in the
/// file reading stopped (never a value quietly dropped).
pub(super) fn check_documents(
    source: &Source,
    index: usize,
    node: &yaml::Node<'_>,
    object: &Value,
    cluster: &ClusterContext,
) -> Result<(), Error> {
    if object.field("kind").and_then(Value::as_str) != Some("ConfigMap") {
        return Ok(());
    }
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_string();
    let name = text(object.pointer("/metadata/name"));
    for key in cluster.documents_of(&name) {
        let Some(entry) = object
            .pointer(&format!("/data/{key}"))
            .and_then(Value::as_str)
        else {
            continue;
        };
        let Some((problem, at)) = crate::cluster::unreadable_document(entry) else {
            continue;
        };
        let entry_node = node.get("data").and_then(|d| d.get(key));
        let offset =
            entry_node.map_or(node.start, |n| offset_in_source(&source.text, n, entry, at));
        let namespace = text(object.pointer("/metadata/namespace"));
        let namespace = if namespace.is_empty() {
            String::new()
        } else {
            format!("{namespace}/")
        };
        return Err(Error::Document(Located::at(
            &source.name(),
            &source.text,
            index,
            offset,
            format!(
                "ConfigMap {namespace}{name}: data.{key} does not read as YAML: {problem}; \
                 nothing was written (fix the ConfigMap, or save it again with kubectl get -o yaml)"
            ),
        )));
    }
    Ok(())
}

/// Where byte `at` of a scalar's `content` (the scalar `node` of `text`)
/// stands in `text`: for a block scalar, on the same line of its body and
/// past its indentation; for another style, the scalar itself.
pub(super) fn offset_in_source(
    text: &str,
    node: &yaml::Node<'_>,
    content: &str,
    at: usize,
) -> usize {
    let block = matches!(
        &node.kind,
        yaml::NodeKind::Scalar {
            style: yaml::node::ScalarStyle::Literal | yaml::node::ScalarStyle::Folded,
            ..
        }
    );
    if !block {
        return node.start;
    }
    // Past the last line (an unclosed collection): at the end of that line.
    let at = at.min(content.trim_end().len());
    let before = content.get(..at).unwrap_or(content);
    let line = before.matches('\n').count();
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1);
    // The body starts on the line after the indicator (where the node
    // starts at it), else on the node's line.
    let at_indicator = text
        .get(node.start..)
        .is_some_and(|rest| rest.starts_with(['|', '>']));
    let mut offset = if at_indicator {
        text.get(node.start..)
            .and_then(|rest| rest.find('\n'))
            .map_or(node.start, |i| node.start + i + 1)
    } else {
        text.get(..node.start)
            .and_then(|before| before.rfind('\n'))
            .map_or(0, |i| i + 1)
    };
    for _ in 0..line {
        match text.get(offset..).and_then(|rest| rest.find('\n')) {
            Some(i) => offset += i + 1,
            None => return node.start,
        }
    }
    let indent = text
        .get(offset..)
        .map_or(0, |rest| rest.len() - rest.trim_start_matches(' ').len());
    offset + indent + column
}

/// Streams above this size are parsed in parallel, cut at document boundaries.
pub(super) const PARALLEL_MIN_BYTES: usize = 1 << 20;

pub(crate) fn parse(source: &Source) -> Result<Vec<Document<'_>>, Error> {
    let text = source.text.as_str();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let points = if text.len() >= PARALLEL_MIN_BYTES {
        yaml::parse::split_points(text, threads)
    } else {
        vec![0, text.len()]
    };
    let ranges: Vec<(usize, usize)> = ranges(&points).collect();
    let parts = on_all_cores(
        &ranges,
        || (),
        |(), &(from, to)| source.parse_range(from, to),
    );
    let mut documents = Vec::new();
    for part in parts {
        let seen = documents.len();
        let part = part.map_err(|e| {
            Error::Document(Located::at(
                &source.name(),
                text,
                seen + e.document,
                e.offset,
                e.message,
            ))
        })?;
        documents.extend(part.into_iter().map(|mut d| {
            d.index += seen;
            d
        }));
    }
    Ok(documents)
}

/// What is known of the cluster: the context objects of the `--context`
/// sources, then of the input `sources` (parsed as `parsed`), with the
/// ConfigMaps `profile` reads values from.
pub(crate) fn cluster_context(
    sources: &[Source],
    parsed: &[Vec<Document<'_>>],
    context: &[Source],
    profile: &Profile,
    namespace: &str,
) -> Result<ClusterContext, Error> {
    let context_docs: Vec<Vec<Document<'_>>> =
        context.iter().map(parse).collect::<Result<_, _>>()?;
    let mut cluster = ClusterContext::new(profile.config_map_names())
        .reading_documents(profile.config_map_documents())
        .given(!context.is_empty());
    for (source, docs) in context
        .iter()
        .zip(&context_docs)
        .chain(sources.iter().zip(parsed))
    {
        gather_context(source, docs, &mut cluster, namespace)?;
    }
    Ok(cluster)
}

/// Add the context objects among `docs` to `cluster`.
pub(super) fn gather_context(
    source: &Source,
    docs: &[Document<'_>],
    cluster: &mut ClusterContext,
    namespace: &str,
) -> Result<(), Error> {
    let mut found = Vec::new();
    for document in docs {
        gather_found(source, document, cluster, &mut found)?;
    }
    for object in &found {
        cluster.add(object, namespace);
    }
    Ok(())
}

//! The sources cut into units (whole sources; a large one at document
//! boundaries; a large `List`'s items in stretches), and each unit parsed,
//! planned and rendered, the units spread over the cores.

use super::*;

/// A stretch of whole documents of one source (a source, or a part of a
/// large one), or of the items of a large `List`.
pub(super) struct Unit<'s> {
    /// The source, and where it stands among the sources.
    pub(super) source: &'s Source,
    pub(super) index: usize,
    pub(super) from: usize,
    pub(super) to: usize,
    /// Set for a stretch of a `List`'s items.
    pub(super) items: Option<ItemsPart>,
}

/// A stretch of a large `List`'s items, parsed as a sequence of its own
/// (JSON items one by one): the list is never parsed, planned or held whole.
pub(super) struct ItemsPart {
    /// The index of its first item in the list.
    pub(super) first: usize,
    /// Where each of its items is (see [`yaml::parse::ListLines::items`]).
    pub(super) items: Vec<(usize, usize)>,
    /// How the list lays out its lines, which new lines in its items follow.
    pub(super) layout: yaml::emit::Layout,
    /// The list is JSON: its items are flow mappings between other text.
    pub(super) json: bool,
}

/// What a document given to planning holds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Holds {
    /// An object, or a `List` of them.
    Document,
    /// The item of a large `List` at `index`, planned as an object of its
    /// own (its bytes are its lines from its `-` on, or a JSON item's
    /// braces), new lines laid out as the list's.
    Item {
        index: usize,
        layout: yaml::emit::Layout,
    },
}

impl Holds {
    /// The layout new lines follow, when not the document's own.
    pub(super) fn layout(self) -> Option<yaml::emit::Layout> {
        match self {
            Holds::Item { layout, .. } => Some(layout),
            Holds::Document => None,
        }
    }
}

/// The ranges between consecutive cut points.
pub(super) fn ranges(points: &[usize]) -> impl Iterator<Item = (usize, usize)> + '_ {
    points.windows(2).filter_map(|w| match w {
        [from, to] => Some((*from, *to)),
        _ => None,
    })
}

/// What processing a unit gives.
pub(super) struct UnitResult {
    pub(super) rendered: Rendered,
    /// How many documents the unit holds.
    pub(super) documents: usize,
    /// Context objects among them, when gathering.
    pub(super) found: Vec<Value>,
    /// The first syntax error, then the first other error.
    pub(super) syntax: Option<Error>,
    pub(super) failure: Option<Stop>,
    /// A stretch of a list's items did not parse as the items it was cut
    /// at: the list must be read whole.
    pub(super) cut_failed: bool,
}

/// What stopped the processing of a document.
pub(super) struct Stop {
    pub(super) error: Error,
    /// A workload was refused ([`rules::PlanError::Refused`]): the user's to
    /// fix, and what it lacks may come from a context object of the input.
    pub(super) refusal: bool,
}

impl From<Error> for Stop {
    fn from(error: Error) -> Self {
        Stop {
            error,
            refusal: false,
        }
    }
}

/// What one pass over the sources gives: each source's rendering, the
/// context objects found when gathering, and what stopped it, if anything.
pub(super) struct Pass {
    pub(super) rendered: Vec<SourceRendered>,
    pub(super) found: Vec<Value>,
    pub(super) stopped: Option<Stop>,
}

/// Sources above this size are cut at document boundaries, so that one large
/// stream uses every core.
pub(super) const SPLIT_MIN_BYTES: usize = 128 << 10;

/// A large source is cut into about this many stretches per core: the cores
/// take them in turn as they finish, so none waits on a slower stretch.
pub(super) const STRETCHES_PER_CORE: usize = 64;

/// Nor into stretches smaller than this: each costs a start of the parser.
pub(super) const STRETCH_MIN_BYTES: usize = 32 << 10;

/// Parse, plan and render every document of `sources`, spread over the
/// cores in stretches, results in source order. With `gather`, also return
/// the context objects the sources hold.
pub(super) fn process_sources(
    sources: &[Source],
    planner: Planner<'_>,
    gather: bool,
    progress: Option<&Progress>,
) -> Pass {
    // The values of whole documents are kept: a list is then planned whole.
    let settings = planner.settings;
    let cut_lists = !settings.keep_values && !settings.whole_lists;
    let pass = process_units(sources, planner, gather, progress, cut_lists);
    match pass {
        // A list cut where its lines showed items, but its text holds them
        // otherwise: it is read whole, as the parser reads it.
        Err(CutFailed) => process_units(sources, planner, gather, progress, false)
            .unwrap_or_else(|CutFailed| unreachable_pass()),
        Ok(pass) => pass,
    }
}

/// A stretch of a list's items did not parse as the items it was cut at.
pub(super) struct CutFailed;

/// A pass that cannot happen: stretches of lists only fail when lists are cut.
pub(super) fn unreachable_pass() -> Pass {
    Pass {
        rendered: Vec::new(),
        found: Vec::new(),
        stopped: Some(Stop::from(Error::Internal(
            "a list read whole failed as a cut one".into(),
        ))),
    }
}

/// The units `sources` are processed in: each source whole, or cut at
/// document boundaries when large, with a large `List`'s items (when
/// `cut_lists`) in stretches of their own.
pub(super) fn units_of(
    sources: &[Source],
    threads: usize,
    cut_lists: bool,
) -> Result<Vec<Unit<'_>>, Error> {
    let mut units = Vec::new();
    for (index, source) in sources.iter().enumerate() {
        let text = source.text.as_str();
        let unit = |from, to, items| Unit {
            source,
            index,
            from,
            to,
            items,
        };
        // Lists are read item by item whatever their size: a small one as
        // a large one, in one stretch.
        let lists: Vec<yaml::parse::ListLines> = match cut_lists {
            true => yaml::parse::list_lines(text)
                .into_iter()
                .filter(|list| workload::is_list_kind(&list.kind))
                .collect(),
            false => Vec::new(),
        };
        let large = text.len() >= SPLIT_MIN_BYTES;
        if !large && lists.is_empty() {
            units.push(unit(0, text.len(), None));
            continue;
        }
        let parts = (text.len() / STRETCH_MIN_BYTES).clamp(threads, threads * STRETCHES_PER_CORE);
        let mut points = match threads {
            _ if !large => vec![0, text.len()],
            1 => vec![0, text.len()],
            _ => yaml::parse::split_points(text, parts),
        };
        points.extend(lists.iter().flat_map(|l| [l.document.0, l.document.1]));
        points.sort_unstable();
        points.dedup();
        for (from, to) in ranges(&points) {
            // A list with a lone CR is read whole, which refuses it where
            // an item changes.
            let list = lists.iter().find(|l| {
                l.document == (from, to) && lone_carriage_return(text, from, to).is_none()
            });
            let layout = match list {
                Some(list) => list_layout(text, list).map_err(|err| {
                    Error::internal_at(&source.name(), text, err.offset, &err.message)
                })?,
                None => None,
            };
            let (Some(list), Some(layout)) = (list, layout) else {
                units.push(unit(from, to, None));
                continue;
            };
            // About `parts` stretches to the source, never fewer than one a
            // core for a large list that is most of it.
            let size = (text.len() / parts).max(STRETCH_MIN_BYTES);
            let mut first = 0;
            let items = &list.items;
            while let Some(&(begin, _)) = items.get(first) {
                let mut next = first + 1;
                while items
                    .get(next)
                    .is_some_and(|&(start, _)| start - begin < size)
                {
                    next += 1;
                }
                let stretch = items.get(first..next).unwrap_or_default();
                let end = stretch.last().map_or(to, |&(_, end)| end);
                let part = ItemsPart {
                    first,
                    items: stretch.to_vec(),
                    layout,
                    json: list.json,
                };
                units.push(unit(begin, end, Some(part)));
                first = next;
            }
        }
    }
    Ok(units)
}

/// Most items read to learn how a list lays out its lines before it is
/// read whole instead.
pub(super) const LAYOUT_ITEMS_MAX: usize = 8;

/// How the whole of `list` lays out its lines, learnt from its first items
/// as from the whole document (the entries before them, then the items in
/// order); `None` when they do not show it. A JSON list's is JSON's.
pub(super) fn list_layout(
    text: &str,
    list: &yaml::parse::ListLines,
) -> Result<Option<yaml::emit::Layout>, yaml::EditError> {
    let (start, _) = list.document;
    if list.json {
        return yaml::edit::json_layout(text, start).map(Some);
    }
    for &(_, end) in list.items.iter().take(LAYOUT_ITEMS_MAX) {
        // Items that do not read alone say nothing of the layout.
        let Ok(documents) = yaml::parse::parse_range(text, start, end) else {
            continue;
        };
        let Some(root) = documents.first().and_then(|d| d.root.as_ref()) else {
            continue;
        };
        if let (layout, true) = yaml::edit::detect_layout_shown(text, root)? {
            return Ok(Some(layout));
        }
    }
    Ok(None)
}

/// [`process_sources`], with large lists cut into stretches of items when
/// `cut_lists`.
pub(super) fn process_units(
    sources: &[Source],
    planner: Planner<'_>,
    gather: bool,
    progress: Option<&Progress>,
    cut_lists: bool,
) -> Result<Pass, CutFailed> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let units = match units_of(sources, threads, cut_lists) {
        Ok(units) => units,
        Err(error) => {
            return Ok(Pass {
                rendered: Vec::new(),
                found: Vec::new(),
                stopped: Some(Stop::from(error)),
            });
        }
    };
    if let Some(progress) = progress {
        progress.start_pass(sources.iter().map(|s| s.text.len()).sum());
    }
    let mode = planner.settings.reuse;
    let results = on_all_cores(
        &units,
        || Scratch::new(mode),
        |scratch, unit| {
            let result = process_unit(unit, planner, gather, scratch);
            if let Some(progress) = progress {
                progress.advance(unit.to - unit.from);
            }
            result
        },
    );
    if results.iter().any(|r| r.cut_failed) {
        return Err(CutFailed);
    }

    // Room for each source's objects, so that gathering them from its units
    // copies each once (its edits are kept as its units made them).
    let mut room = vec![0; sources.len()];
    for (unit, result) in units.iter().zip(&results) {
        if let Some(objects) = room.get_mut(unit.index) {
            *objects += result.rendered.objects.len();
        }
    }
    // Units come source after source, each source in one or more.
    let mut rendered: Vec<SourceRendered> = Vec::with_capacity(sources.len());
    let mut found = Vec::new();
    let mut seen = 0;
    let (mut syntax, mut failure) = (None, None);
    for (unit, result) in units.iter().zip(results) {
        if rendered.len() <= unit.index {
            let objects = room.get(unit.index).copied().unwrap_or_default();
            rendered.push(SourceRendered {
                objects: Vec::with_capacity(objects),
                values: Vec::new(),
                edits: Vec::new(),
            });
            seen = 0;
        }
        // Documents count from 1 in each unit; in the source, after those before it.
        let before = seen;
        seen += result.documents;
        let renumber = |err: Error| match err {
            Error::Document(mut at) => {
                at.document += before;
                Error::Document(at)
            }
            other => other,
        };
        syntax = syntax.or(result.syntax.map(renumber));
        failure = failure.or(result.failure.map(|stop| Stop {
            error: renumber(stop.error),
            ..stop
        }));
        if let Some(into) = rendered.last_mut() {
            into.objects
                .extend(result.rendered.objects.into_iter().map(|mut o| {
                    o.document += before;
                    o
                }));
            into.values.extend(result.rendered.values);
            into.edits.push(result.rendered.edits);
        }
        found.extend(result.found);
    }
    Ok(Pass {
        rendered,
        found,
        stopped: syntax.map(Stop::from).or(failure),
    })
}

/// What a worker keeps from one document to the next, to spend less on
/// each (see [`crate::reuse`]): made when it starts, for its units alone.
pub(super) struct Scratch {
    /// Blocks of new lines written so far.
    pub(super) blocks: yaml::Blocks,
    /// What the rules keep: spares, Istio's shared renderings.
    pub(super) caches: rules::Caches,
    /// The value of the last document planned, done with: the next one's is
    /// built over it (its worth: see [`crate::reuse`]). Never kept with
    /// [`Mode::Reference`].
    pub(super) done_value: Option<Value>,
    pub(super) mode: Mode,
}

impl Scratch {
    pub(super) fn new(mode: Mode) -> Self {
        Scratch {
            blocks: blocks_for(mode),
            caches: rules::Caches::new(mode),
            done_value: None,
            mode,
        }
    }
}

/// A cache of written blocks that keeps what `mode` says.
pub(super) fn blocks_for(mode: Mode) -> yaml::Blocks {
    match mode {
        Mode::Reuse => yaml::Blocks::default(),
        Mode::Reference => yaml::Blocks::keeping_nothing(),
    }
}

/// Parse, plan and render the documents of one unit, each tree dropped once
/// its document is done. After an error, the rest is only parsed: a syntax
/// error anywhere is what the user hears first.
pub(super) fn process_unit(
    unit: &Unit<'_>,
    planner: Planner<'_>,
    gather: bool,
    scratch: &mut Scratch,
) -> UnitResult {
    let source = unit.source;
    let name = source.name();
    let text = source.text.as_str();
    // Its objects that name no namespace are in the one its overlay sets
    // (several overlays: see `overlays.rs`).
    let kustomized = &source.kustomized;
    let from;
    let env;
    let planner = match kustomized.builds.as_slice() {
        [one] => {
            from = format!("kustomization {}", one.set_by);
            env = overlays::in_namespace(planner.env, &one.namespace, Some(&from));
            Planner {
                env: &env,
                kustomized,
                ..planner
            }
        }
        _ => Planner {
            kustomized,
            ..planner
        },
    };
    let mut result = UnitResult {
        rendered: Rendered::default(),
        documents: 0,
        found: Vec::new(),
        syntax: None,
        failure: None,
        cut_failed: false,
    };
    let Some(part) = &unit.items else {
        let parsed = source.each_document(unit.from, unit.to, |document| {
            let here = (unit, name.as_str());
            process_document(
                document,
                Holds::Document,
                here,
                planner,
                gather,
                scratch,
                &mut result,
            );
        });
        if let Err(e) = parsed {
            result.syntax = Some(Error::Document(Located::at(
                &name, text, e.document, e.offset, e.message,
            )));
        }
        return result;
    };
    // The list's items, and only them, each planned as the object it is.
    let items = match part.json {
        true => json_item_documents(source, &part.items),
        false => block_item_documents(source, unit, &part.items),
    };
    let Some(items) = items else {
        // Read whole instead, which says what is wrong, if anything.
        result.cut_failed = true;
        return result;
    };
    // The list document is counted by its first stretch.
    let opens = part.first == 0;
    if opens {
        result.documents = 1;
    }
    for (index, mut item) in (part.first..).zip(items) {
        // An empty item is no object, as in a list read whole.
        if item.root.as_ref().is_some_and(is_null) {
            continue;
        }
        item.index = usize::from(opens);
        let here = (unit, name.as_str());
        let holds = Holds::Item {
            index,
            layout: part.layout,
        };
        process_document(item, holds, here, planner, gather, scratch, &mut result);
    }
    result
}

/// The items of a stretch of a block list (`unit`, the lines of `items`),
/// parsed as one sequence, as documents of their own: `None` unless it is
/// that sequence (see [`item_documents`]).
pub(super) fn block_item_documents<'a>(
    source: &'a Source,
    unit: &Unit<'_>,
    items: &[(usize, usize)],
) -> Option<Vec<Document<'a>>> {
    let mut documents = source.parse_range(unit.from, unit.to).ok()?.into_iter();
    match (documents.next(), documents.next()) {
        (Some(document), None) => item_documents(document, items),
        _ => None,
    }
}

/// The items of a stretch of a JSON list, each parsed alone: `None` unless
/// each is one flow mapping without anchors or aliases.
pub(super) fn json_item_documents<'a>(
    source: &'a Source,
    items: &[(usize, usize)],
) -> Option<Vec<Document<'a>>> {
    items
        .iter()
        .map(|&(from, to)| {
            let mut documents = source.parse_range(from, to).ok()?.into_iter();
            match (documents.next(), documents.next()) {
                (Some(mut document), None)
                    if !document.anchored
                        && document.root.as_ref().is_some_and(|root| {
                            matches!(root.kind, yaml::NodeKind::Map { flow: true, .. })
                        }) =>
                {
                    (document.start, document.end) = (from, to);
                    Some(document)
                }
                _ => None,
            }
        })
        .collect()
}

/// The items of `document`, a stretch of a list's items parsed as a
/// sequence, as documents of their own (each over its lines in `lines`):
/// `None` unless it is that sequence, one item to each of `lines`, without
/// anchors or aliases.
pub(super) fn item_documents<'a>(
    document: Document<'a>,
    lines: &[(usize, usize)],
) -> Option<Vec<Document<'a>>> {
    let Some(Node {
        kind: yaml::NodeKind::Seq { items, flow: false },
        ..
    }) = document.root
    else {
        return None;
    };
    // An alias may stand for an anchor in another stretch.
    if document.index != 1 || document.anchored || items.len() != lines.len() {
        return None;
    }
    Some(
        items
            .into_iter()
            .zip(lines.iter().copied())
            .map(|(item, (start, end))| Document {
                index: document.index,
                root: Some(item),
                start,
                end,
                anchored: document.anchored,
            })
            .collect(),
    )
}

/// Whether `node` is a null scalar (`~`, `null`, empty).
pub(super) fn is_null(node: &Node<'_>) -> bool {
    match &node.kind {
        yaml::NodeKind::Scalar { text, style, tag } => {
            yaml::value::resolve_scalar(text, *style, tag.as_deref()).is_null()
        }
        _ => false,
    }
}

/// Gather (with `gather`) and render one document of `unit`, what it
/// `holds`, into `result`.
pub(super) fn process_document(
    document: Document<'_>,
    holds: Holds,
    (unit, name): (&Unit<'_>, &str),
    planner: Planner<'_>,
    gather: bool,
    scratch: &mut Scratch,
    result: &mut UnitResult,
) {
    let source = unit.source;
    result.documents = result.documents.max(document.index);
    // After a refusal, gathering goes on: a later context object may
    // supply what the refused workload lacked.
    let refused = result.failure.as_ref().is_some_and(|stop| stop.refusal);
    if result.failure.is_some() && !(gather && refused) {
        return;
    }
    if gather {
        let found = &mut result.found;
        if let Err(err) = gather_found(source, &document, planner.env.cluster, found) {
            result.failure = Some(err.into());
            return;
        }
    }
    if !refused {
        let out = &mut result.rendered;
        let done = render_document(source, name, &document, holds, planner, scratch, out);
        result.failure = done.err();
    }
}

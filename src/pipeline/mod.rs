//! Sources through the pipeline: documents → objects → workloads → plan →
//! admission review → render.
//!
//! Two passes: every source is parsed once, the cluster context (policy objects
//! and ConfigMaps in the input and in `--context` files) is gathered, then each
//! input source is planned and rendered with that context.

use json_patch::PatchOperation;
use serde_json::Value;

use crate::admission::{self, Verdict};
use crate::cluster::ClusterContext;
use crate::error::{Error, Located};
use crate::json::Field;
use crate::note::Note;
use crate::profile::{Prepared, Profile};
use crate::progress::Progress;
use crate::rules::{self, Env, Outcome, Plan};
use crate::source::{Kustomized, Source};
use crate::workload::{self, ObjectRef, WorkloadTypes};
use crate::yaml::{self, Document, Node};

mod kept;
mod overlays;
mod parallel;
mod patches;
mod results;
mod verbatim;

use parallel::on_all_cores;
pub use results::{Action, ObjectResult, Output, Processed, Settings, Settled};

/// Run `sources` through the pipeline, with the objects of `context` sources
/// (and of the inputs themselves) as what is known of the cluster.
///
/// Every document is parsed, planned and rendered in one pass, its syntax tree
/// dropped before the next is built, with the `--context` objects as the
/// cluster. When the inputs hold context objects themselves (a LimitRange
/// beside the Deployments), they apply to every workload, whatever the order:
/// the pass is then run again with them.
pub fn process_all(
    sources: Vec<Source>,
    context: &[Source],
    settings: &Settings,
) -> Result<Vec<Processed>, Error> {
    let loaded = load(context, settings);
    process_or_return(sources, loaded, settings, &Prepared::default(), None)
        .map_err(|failed| failed.error)
}

/// What a run knows before it reads its input: the cluster of its
/// `--context` objects, and the profile as the cluster's own injector
/// configuration there sets it (`None`: the profile as it is).
pub struct Loaded {
    cluster: ClusterContext,
    profile: Option<Box<Profile>>,
}

/// The cluster of the `context` sources and the profile it configures:
/// loaded while the input is read.
pub fn load(context: &[Source], settings: &Settings) -> Result<Loaded, Error> {
    let cluster = cluster_context(&[], &[], context, &settings.profile, settings.namespace())?;
    let profile = configured_profile(settings, &cluster)?;
    Ok(Loaded { cluster, profile })
}

/// The profile as the cluster's own injector configuration sets it, when
/// `cluster` holds one.
fn configured_profile(
    settings: &Settings,
    cluster: &ClusterContext,
) -> Result<Option<Box<Profile>>, Error> {
    settings
        .profile
        .configured_by(cluster, &settings.flags)
        .map(|found| found.map(Box::new))
}

/// A run that stopped, with its sources given back (a KRM function answers
/// with its input then).
#[derive(Debug)]
pub struct Failed {
    pub error: Error,
    pub sources: Vec<Source>,
}

/// [`process_all`], giving the sources back with an error. `prepared` holds
/// the profile filled and rendered for the run's workloads: the caller
/// decides when it goes (a process about to end need not free it).
/// `progress`, when given, is told how far each pass has got.
pub fn process_or_return(
    sources: Vec<Source>,
    loaded: Result<Loaded, Error>,
    settings: &Settings,
    prepared: &Prepared,
    progress: Option<&Progress>,
) -> Result<Vec<Processed>, Failed> {
    let Loaded {
        mut cluster,
        profile,
    } = match loaded {
        Ok(loaded) => loaded,
        Err(error) => return Err(Failed { error, sources }),
    };
    let types = WorkloadTypes::with(&settings.profile.workloads);
    // The cluster's configuration, checked before anything is planned with it.
    let checked = |cluster: &ClusterContext, profile: Option<&Profile>| {
        profile
            .unwrap_or(&settings.profile)
            .check_objects(cluster, &settings.flags)
    };
    let run = |cluster: &ClusterContext,
               profile: Option<&Profile>,
               prepared: &Prepared,
               gather: bool,
               run_notes: &[Note]| {
        // An Istio revision tag asked for is the revision it points at.
        let flags = crate::mesh::istio::revision::resolve_flags(&settings.flags, cluster);
        let env = Env {
            run_notes,
            prepared,
            keep_patches: settings.keep_patches,
            profile: profile.unwrap_or(&settings.profile),
            flags: &flags,
            native: settings.native,
            version: settings.version,
            security: settings.security,
            namespace: settings.namespace(),
            namespace_assumed: settings.namespace.is_none(),
            namespace_from: settings.namespace_from.as_deref(),
            cluster,
        };
        let planner = Planner {
            settings,
            env: &env,
            types: &types,
            kustomized: &NOT_KUSTOMIZED,
        };
        process_sources(&sources, planner, gather, progress)
    };
    let notes = match checked(&cluster, profile.as_deref()) {
        Ok(notes) => notes,
        Err(error) => return Err(Failed { error, sources }),
    };
    let first = run(&cluster, profile.as_deref(), prepared, true, &notes);
    match first.stopped {
        // What a refused workload lacks may be in a context object of the
        // input (the trust anchors' ConfigMap after the Deployment): all of
        // them were gathered, and the pass with them decides.
        Some(stop) if !stop.refusal || first.found.is_empty() => {
            return Err(Failed {
                error: stop.error,
                sources,
            });
        }
        _ => {}
    }
    let mut rendered = first.rendered;
    if !first.found.is_empty() {
        for object in &first.found {
            cluster.add(object, settings.namespace());
        }
        // Another cluster: fillings found by the flags alone held the
        // first one's objects.
        let profile = match configured_profile(settings, &cluster) {
            Ok(profile) => profile,
            Err(error) => return Err(Failed { error, sources }),
        };
        let notes = match checked(&cluster, profile.as_deref()) {
            Ok(notes) => notes,
            Err(error) => return Err(Failed { error, sources }),
        };
        let second = run(
            &cluster,
            profile.as_deref(),
            &Prepared::default(),
            false,
            &notes,
        );
        if let Some(stop) = second.stopped {
            return Err(Failed {
                error: stop.error,
                sources,
            });
        }
        rendered = second.rendered;
    }
    let mut outputs = Vec::with_capacity(rendered.len());
    for (source, part) in sources.iter().zip(&mut rendered) {
        match Output::spliced(source, std::mem::take(&mut part.edits)) {
            Ok(output) => outputs.push(output),
            Err(error) => return Err(Failed { error, sources }),
        }
    }
    Ok(sources
        .into_iter()
        .zip(rendered)
        .zip(outputs)
        .map(|((source, part), output)| Processed {
            source,
            output,
            objects: part.objects,
            values: part.values,
        })
        .collect())
}

/// What planning a document reads besides the document.
#[derive(Clone, Copy)]
struct Planner<'a> {
    settings: &'a Settings,
    env: &'a Env<'a>,
    types: &'a WorkloadTypes,
    /// The namespaces kustomize gives the source's objects.
    kustomized: &'a Kustomized,
}

/// A source no kustomization includes.
static NOT_KUSTOMIZED: Kustomized = Kustomized {
    builds: Vec::new(),
    index_patches: Vec::new(),
    problems: Vec::new(),
};

/// A stretch of whole documents of one source (a source, or a part of a
/// large one), or of the items of a large `List`.
struct Unit<'s> {
    /// The source, and where it stands among the sources.
    source: &'s Source,
    index: usize,
    from: usize,
    to: usize,
    /// Set for a stretch of a `List`'s items.
    items: Option<ItemsPart>,
}

/// A stretch of a large `List`'s items, parsed as a sequence of its own
/// (JSON items one by one): the list is never parsed, planned or held whole.
struct ItemsPart {
    /// The index of its first item in the list.
    first: usize,
    /// Where each of its items is (see [`yaml::parse::ListLines::items`]).
    items: Vec<(usize, usize)>,
    /// How the list lays out its lines, which new lines in its items follow.
    layout: yaml::emit::Layout,
    /// The list is JSON: its items are flow mappings between other text.
    json: bool,
}

/// What a document given to planning holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Holds {
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
    fn layout(self) -> Option<yaml::emit::Layout> {
        match self {
            Holds::Item { layout, .. } => Some(layout),
            Holds::Document => None,
        }
    }
}

/// The ranges between consecutive cut points.
fn ranges(points: &[usize]) -> impl Iterator<Item = (usize, usize)> + '_ {
    points.windows(2).filter_map(|w| match w {
        [from, to] => Some((*from, *to)),
        _ => None,
    })
}

/// What processing a unit gives.
struct UnitResult {
    rendered: Rendered,
    /// How many documents the unit holds.
    documents: usize,
    /// Context objects among them, when gathering.
    found: Vec<Value>,
    /// The first syntax error, then the first other error.
    syntax: Option<Error>,
    failure: Option<Stop>,
    /// A stretch of a list's items did not parse as the items it was cut
    /// at: the list must be read whole.
    cut_failed: bool,
}

/// What stopped the processing of a document.
struct Stop {
    error: Error,
    /// A workload was refused ([`rules::PlanError::Refused`]): the user's to
    /// fix, and what it lacks may come from a context object of the input.
    refusal: bool,
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
struct Pass {
    rendered: Vec<SourceRendered>,
    found: Vec<Value>,
    stopped: Option<Stop>,
}

/// Sources above this size are cut at document boundaries, so that one large
/// stream uses every core.
const SPLIT_MIN_BYTES: usize = 128 << 10;

/// A large source is cut into about this many stretches per core: the cores
/// take them in turn as they finish, so none waits on a slower stretch.
const STRETCHES_PER_CORE: usize = 64;

/// Nor into stretches smaller than this: each costs a start of the parser.
const STRETCH_MIN_BYTES: usize = 32 << 10;

/// Parse, plan and render every document of `sources`, spread over the
/// cores in stretches, results in source order. With `gather`, also return
/// the context objects the sources hold.
fn process_sources(
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
struct CutFailed;

/// A pass that cannot happen: stretches of lists only fail when lists are cut.
fn unreachable_pass() -> Pass {
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
fn units_of(sources: &[Source], threads: usize, cut_lists: bool) -> Result<Vec<Unit<'_>>, Error> {
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
const LAYOUT_ITEMS_MAX: usize = 8;

/// How the whole of `list` lays out its lines, learnt from its first items
/// as from the whole document (the entries before them, then the items in
/// order); `None` when they do not show it. A JSON list's is JSON's.
fn list_layout(
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
fn process_units(
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
    let results = on_all_cores(&units, Scratch::default, |scratch, unit| {
        let result = process_unit(unit, planner, gather, scratch);
        if let Some(progress) = progress {
            progress.advance(unit.to - unit.from);
        }
        result
    });
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

/// What a core keeps from one document to the next, to spend less on each.
#[derive(Default)]
struct Scratch {
    /// Blocks of new lines written so far.
    blocks: yaml::Blocks,
    /// The value of the last document planned, done with: the next one's is
    /// built over it.
    done_value: Option<Value>,
}

/// Parse, plan and render the documents of one unit, each tree dropped once
/// its document is done. After an error, the rest is only parsed: a syntax
/// error anywhere is what the user hears first.
fn process_unit(
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
fn block_item_documents<'a>(
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
fn json_item_documents<'a>(
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
fn item_documents<'a>(
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
fn is_null(node: &Node<'_>) -> bool {
    match &node.kind {
        yaml::NodeKind::Scalar { text, style, tag } => {
            yaml::value::resolve_scalar(text, *style, tag.as_deref()).is_null()
        }
        _ => false,
    }
}

/// Gather (with `gather`) and render one document of `unit`, what it
/// `holds`, into `result`.
fn process_document(
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

/// Add the context objects of `document` (itself, or the items of a `List`)
/// that `cluster` wants to `found`.
fn gather_found(
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
fn check_documents(
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
fn offset_in_source(text: &str, node: &yaml::Node<'_>, content: &str, at: usize) -> usize {
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
const PARALLEL_MIN_BYTES: usize = 1 << 20;

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
fn gather_context(
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

/// What planning documents gives: their objects and values, and the new
/// text of each changed document (its byte range in the source, and the text).
/// Edits are applied document by document, so they never pile up.
#[derive(Default)]
struct Rendered {
    objects: Vec<ObjectResult>,
    values: Vec<Value>,
    /// Settled edits, document after document.
    edits: Vec<yaml::Edit>,
}

/// What a source's units rendered, gathered: its edits as each unit made
/// them, not copied into one list (a large stream's are many).
struct SourceRendered {
    objects: Vec<ObjectResult>,
    values: Vec<Value>,
    edits: Vec<Vec<yaml::Edit>>,
}

/// The first lone CR on the lines of `text[from..to]`: a line break to YAML,
/// but not to the editor, which splices whole lines.
fn lone_carriage_return(text: &str, from: usize, to: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let line = text
        .get(..from)
        .and_then(|t| t.rfind('\n'))
        .map_or(0, |i| i + 1);
    (line..to).find(|&i| bytes.get(i) == Some(&b'\r') && bytes.get(i + 1) != Some(&b'\n'))
}

/// Plan one document and add its objects, value and text edits to `out`.
fn render_document(
    source: &Source,
    name: &str,
    document: &Document<'_>,
    holds: Holds,
    planner: Planner<'_>,
    scratch: &mut Scratch,
    out: &mut Rendered,
) -> Result<(), Stop> {
    let Planner {
        settings, types, ..
    } = planner;
    let text = source.text.as_str();
    let Some(root) = &document.root else {
        return Ok(());
    };
    let locate = |offset: usize, message: String| {
        Error::Document(Located::at(name, text, document.index, offset, message))
    };
    // An edit of the source's text the tool got wrong.
    let internal = |err: yaml::EditError| Error::internal_at(name, text, err.offset, &err.message);
    let identity = identity_of(root);
    let wants_value = settings.keep_values
        || identity.as_ref().is_none_or(|r| {
            workload::is_list_kind(&r.kind)
                || types.find(&r.api_version, &r.kind).is_some()
                || (r.kind == "Service"
                    && r.api_version == "v1"
                    && settings.profile.mesh.annotates_services())
        });
    if !wants_value {
        let outcome = not_injectable(settings.action, identity.as_ref());
        out.objects.push(ObjectResult {
            document: document.index,
            reference: identity,
            outcome,
            ops: Vec::new(),
            notes: Vec::new(),
            verdicts: Vec::new(),
            hints: Vec::new(),
            replaced: None,
            uneditable: false,
            patched: Vec::new(),
        });
        return Ok(());
    }
    // A workload's value is built over the last workload's, whose shape it
    // most likely shares; another object's (a Service) is built afresh and
    // leaves that spare to the next workload.
    let workload = identity
        .as_ref()
        .and_then(|r| types.find(&r.api_version, &r.kind));
    let spare = match workload {
        Some(_) => scratch.done_value.take(),
        None => None,
    };
    let value = yaml::value::to_value_over(root, spare).map_err(|e| locate(e.offset, e.message))?;
    let first_object = out.objects.len();
    let planned = plan_document(
        value,
        document.index,
        holds,
        settings.action,
        planner,
        &mut out.objects,
    )
    .map_err(|unplanned| {
        // At the list item the error is about, else at the document.
        let at = match holds {
            Holds::Item { .. } => None,
            Holds::Document => unplanned
                .item
                .and_then(|index| match &root.get("items")?.kind {
                    yaml::NodeKind::Seq { items, .. } => items.get(index),
                    _ => None,
                }),
        }
        .map_or(root.start, |item| item.start);
        let refusal = unplanned.error.is_refusal();
        Stop {
            error: locate(at, unplanned.error.to_string()),
            refusal,
        }
    })?;
    let mut result = planned.value;
    // Only a plan that injected or took something out changes its object
    // (every other outcome hands the object back as it came).
    let planned_change = out.objects.iter().skip(first_object).any(|o| {
        matches!(
            o.outcome,
            Outcome::Injected | Outcome::Annotated | Outcome::Uninjected
        )
    });
    if planned_change {
        let (from, to) = (document.start.min(root.start), document.end.max(root.end));
        // A list cut into items has none (see `units_of`): a JSON list's
        // item may stand on a line of megabytes, not scanned again for each.
        let lone = match holds {
            Holds::Document => lone_carriage_return(text, from, to),
            Holds::Item { .. } => None,
        };
        if let Some(at) = lone {
            return Err(locate(
                at,
                "a carriage return without a line feed: YAML reads it as a line break, the edit \
                 would not; use LF or CRLF line endings"
                    .into(),
            )
            .into());
        }
        let anew = match planned.reinjected {
            true => reinjected_text(name, text, (from, to), root, holds, planner)?,
            false => None,
        };
        // The pod's own containers merged into the mesh's: their text is
        // recorded by inject, and written back by uninject.
        let merges = settings.profile.mesh.merges_user_containers();
        let mut kept = yaml::edit::Kept::default();
        // The record gained what only the text shows: the patch follows.
        let mut recorded = false;
        if anew.is_none() {
            match settings.action {
                Action::Inject => {
                    if merges {
                        verbatim::attach(text, root, &mut result, types).map_err(internal)?;
                        recorded = true;
                    }
                    recorded |=
                        kept::attach_nulls(text, root, &mut result, types).map_err(internal)?;
                    if settings.profile.mesh.takes_over_probes() {
                        recorded |= kept::attach_probes(text, root, &mut result, types)
                            .map_err(internal)?;
                    }
                }
                Action::Uninject => {
                    if merges {
                        kept.items = verbatim::recorded(root, types);
                    }
                    kept::for_uninject(root, types, &mut kept);
                }
            }
        }
        // Scalars inject replaced: their text as the manifest wrote it.
        if anew.is_none() && settings.action == Action::Inject {
            let probes = settings.profile.mesh.takes_over_probes();
            verbatim::attach_texts(text, root, &mut result, types, probes).map_err(internal)?;
            // The patch writes the records as the text does.
            if settings.keep_patches {
                for object in out.objects.iter_mut().skip(first_object) {
                    kept::sync_ops(&mut object.ops, &result);
                }
            }
        }
        let reinjecting = anew.is_some();
        if let Some(anew) = anew.as_deref()
            && settings.keep_patches
            && settings.action == Action::Inject
        {
            let documents = yaml::parse_stream(anew).ok();
            let root = documents.as_deref().and_then(|d| d.first()?.root.as_ref());
            let root = match holds {
                Holds::Item { .. } => root.and_then(item_read_alone),
                Holds::Document => root,
            };
            if let Some(value) = root.and_then(|root| yaml::value::to_value(root).ok()) {
                for object in out.objects.iter_mut().skip(first_object) {
                    kept::sync_ops(&mut object.ops, &value);
                }
            }
        }
        let changes = match anew {
            Some(anew) => Ok(vec![yaml::Edit {
                start: from,
                end: to,
                text: anew.into(),
            }]),
            None => {
                let mut diff = |result: &Value| {
                    yaml::edit::diff_kept(
                        text,
                        root,
                        document.anchored,
                        result,
                        &mut scratch.blocks,
                        &kept,
                        holds.layout(),
                    )
                };
                match diff(&result) {
                    // Keys a merge brought were written out: the record
                    // says which, for uninject to leave them to it again.
                    Ok(diffed)
                        if !diffed.materialised.is_empty() && settings.action == Action::Inject =>
                    {
                        kept::attach_merged(root, &mut result, types, &diffed.materialised);
                        recorded = true;
                        diff(&result).map(|d| d.edits)
                    }
                    other => other.map(|d| d.edits),
                }
            }
        };
        if recorded && settings.keep_patches {
            for object in out.objects.iter_mut().skip(first_object) {
                kept::sync_ops(&mut object.ops, &result);
            }
        }
        match changes {
            Ok(mut changes) => {
                if !reinjecting && settings.action == Action::Uninject {
                    let uninjected = yaml::edit::apply_range(text, from, to, changes.clone())
                        .map_err(internal)?;
                    let restored = verbatim::restore_texts(root, types, &uninjected)
                        .map_err(|err| internal_in(name, text, from, UNINJECTED, &err))?;
                    if let Some(restored) = restored {
                        changes = vec![yaml::Edit {
                            start: from,
                            end: to,
                            text: restored.into(),
                        }];
                    }
                }
                out.edits
                    .extend(yaml::edit::settle(text, changes).map_err(internal)?)
            }
            // Not the text's: the tool's, said as such.
            Err(err) if err.defect => return Err(internal(err).into()),
            Err(err) => {
                // The text cannot take the change without altering something
                // else (a shared anchor): leave the document as it is and say why.
                let at = Located::at(name, text, document.index, err.offset, err.message);
                let reason = format!("{} (line {}:{})", at.message, at.line, at.column);
                for object in out.objects.iter_mut().skip(first_object) {
                    if matches!(
                        object.outcome,
                        Outcome::Injected | Outcome::Annotated | Outcome::Uninjected
                    ) {
                        object.outcome = Outcome::Skipped(reason.clone());
                        object.uneditable = true;
                        object.ops.clear();
                        object.verdicts.clear();
                    }
                }
                result = yaml::value::to_value(root).map_err(|e| locate(e.offset, e.message))?;
            }
        }
    }
    // A list's item read alone: its operations, synced with its text, are
    // the list's.
    if let (Holds::Item { index, .. }, true) = (holds, settings.keep_patches) {
        for object in out.objects.iter_mut().skip(first_object) {
            object.ops = rooted_at_item(std::mem::take(&mut object.ops), index);
        }
    }
    if settings.keep_values {
        out.values.push(result);
        return Ok(());
    }
    // Written: it can hold the next workload's value.
    if workload.is_some() {
        scratch.done_value = Some(result);
    }
    Ok(())
}

/// The text of a document (`text[range]`, whose tree is `root`) that held an
/// injection to be replaced, written the way injecting its workloads anew
/// writes it: the old injection is taken out of the text first, exactly as
/// uninject does, then the workloads are injected into that text. Editing
/// the old injection in place would leave its traces (line layout, scalar
/// styles) and give other bytes than injecting the original manifest.
/// `None` when a step cannot be taken (a plan or an edit the text cannot
/// take): the caller edits the values in place. An error for an edit the
/// tool got wrong, in the source (`name`) or in the text made from it.
fn reinjected_text(
    name: &str,
    text: &str,
    (from, to): (usize, usize),
    root: &Node<'_>,
    holds: Holds,
    planner: Planner<'_>,
) -> Result<Option<String>, Error> {
    let internal = |err: yaml::EditError| Error::internal_at(name, text, err.offset, &err.message);
    let internal_bare = |err: yaml::EditError| internal_in(name, text, from, BARE, &err);
    let mut objects = Vec::new();
    let Ok(value) = yaml::value::to_value(root) else {
        return Ok(None);
    };
    let Ok(bare) = plan_document(value, 1, holds, Action::Uninject, planner, &mut objects) else {
        return Ok(None);
    };
    let merges = planner.settings.profile.mesh.merges_user_containers();
    let mut kept = yaml::edit::Kept::default();
    if merges {
        kept.items = verbatim::recorded(root, planner.types);
    }
    kept::for_uninject(root, planner.types, &mut kept);
    let edits = yaml::edit::diff_keeping(text, root, &bare.value, &kept, holds.layout());
    let Some(edits) = editable(edits).map_err(internal)? else {
        return Ok(None);
    };
    let bare_text = yaml::edit::apply_range(text, from, to, edits).map_err(internal)?;
    let bare_text = verbatim::restore_texts(root, planner.types, &bare_text)
        .map_err(|err| internal_in(name, text, from, UNINJECTED, &err))?
        .unwrap_or(bare_text);
    let Ok(documents) = yaml::parse::parse_stream(&bare_text) else {
        return Ok(None);
    };
    let [document] = documents.as_slice() else {
        return Ok(None);
    };
    let bare_root = match (holds, document.root.as_ref()) {
        (Holds::Item { .. }, Some(root)) => item_read_alone(root),
        (Holds::Document, root) => root,
        (_, None) => None,
    };
    let Some(bare_root) = bare_root else {
        return Ok(None);
    };
    let Ok(value) = yaml::value::to_value(bare_root) else {
        return Ok(None);
    };
    let Ok(mut injected) = plan_document(value, 1, holds, Action::Inject, planner, &mut objects)
    else {
        return Ok(None);
    };
    let types = planner.types;
    if merges {
        verbatim::attach(&bare_text, bare_root, &mut injected.value, types)
            .map_err(internal_bare)?;
    }
    kept::attach_nulls(&bare_text, bare_root, &mut injected.value, types).map_err(internal_bare)?;
    let probes = planner.settings.profile.mesh.takes_over_probes();
    if probes {
        kept::attach_probes(&bare_text, bare_root, &mut injected.value, types)
            .map_err(internal_bare)?;
    }
    verbatim::attach_texts(&bare_text, bare_root, &mut injected.value, types, probes)
        .map_err(internal_bare)?;
    let anchored = document.anchored;
    let mut blocks = crate::yaml::Blocks::default();
    let none = yaml::edit::Kept::default();
    let mut diff = |value: &Value| {
        let diffed = yaml::edit::diff_kept(
            &bare_text,
            bare_root,
            anchored,
            value,
            &mut blocks,
            &none,
            holds.layout(),
        );
        editable(diffed).map_err(internal_bare)
    };
    let Some(diffed) = diff(&injected.value)? else {
        return Ok(None);
    };
    let edits = if diffed.materialised.is_empty() {
        diffed.edits
    } else {
        kept::attach_merged(bare_root, &mut injected.value, types, &diffed.materialised);
        let Some(diffed) = diff(&injected.value)? else {
            return Ok(None);
        };
        diffed.edits
    };
    yaml::edit::apply(&bare_text, edits)
        .map(Some)
        .map_err(internal_bare)
}

/// What an edit gives, where what the text cannot take is `None` (the
/// caller has another way) and a defect of the tool an error.
fn editable<T>(edited: Result<T, yaml::EditError>) -> Result<Option<T>, yaml::EditError> {
    match edited {
        Ok(edited) => Ok(Some(edited)),
        Err(err) if err.defect => Err(err),
        Err(_) => Ok(None),
    }
}

/// What [`internal_in`] names a text made from a document by.
const UNINJECTED: &str = "the text uninject made of the document starting here";
const BARE: &str = "the document starting here with its old injection taken out";

/// The tool's defect `err`, found in `made` (a text made from the document of
/// `text` starting at byte `from`): said at the document's start, with the
/// place in the text made.
fn internal_in(name: &str, text: &str, from: usize, made: &str, err: &yaml::EditError) -> Error {
    let message = format!("{}, at byte {} of {made}", err.message, err.offset);
    Error::internal_at(name, text, from, &message)
}

/// The item of a list in `root`, the tree of the item's text read alone: a
/// block item's lines read from its `-` on are a sequence of one, a JSON
/// item's braces the mapping itself.
fn item_read_alone<'n, 'a>(root: &'n Node<'a>) -> Option<&'n Node<'a>> {
    match &root.kind {
        yaml::NodeKind::Seq { items, flow: false } => match items.as_slice() {
            [item] => Some(item),
            _ => None,
        },
        yaml::NodeKind::Map { flow: true, .. } => Some(root),
        _ => None,
    }
}

/// Why a document could not be planned, and the item of a list whose plan
/// failed (`None` for the document itself).
struct Unplanned {
    item: Option<usize>,
    error: rules::PlanError,
}

/// What planning a document gives besides its objects' results.
struct PlannedDocument {
    value: Value,
    /// Some object of it had an injection taken out and put in anew.
    reinjected: bool,
}

/// Plan `action` on one document (an object, a `List` of them, or what it
/// `holds`) and return its final value.
fn plan_document(
    value: Value,
    document: usize,
    holds: Holds,
    action: Action,
    planner: Planner<'_>,
    objects: &mut Vec<ObjectResult>,
) -> Result<PlannedDocument, Unplanned> {
    let mut reinjected = false;
    let is_list = holds == Holds::Document && workload::list_items(&value).is_some();
    if !is_list {
        // An object, or a list's item (whose operations are the list's).
        // A list's item read alone: its operations are rooted at the list
        // once the text is written (see `render_document`).
        let item = match holds {
            Holds::Item { index, .. } => Some(index),
            Holds::Document => None,
        };
        let (value, plan) = plan_item(value, document, item, false, action, planner)?;
        objects.push(plan);
        return Ok(value);
    }
    // A `List`, a `DeploymentList`, a KRM function's `ResourceList`: its
    // items are the objects.
    let mut result = value;
    if let Some(Value::Array(items)) = result.get_mut("items") {
        for (index, item) in items.iter_mut().enumerate() {
            if item.is_null() {
                continue;
            }
            let taken = std::mem::take(item);
            let (planned, plan) = plan_item(taken, document, Some(index), true, action, planner)?;
            reinjected |= planned.reinjected;
            objects.push(plan);
            *item = planned.value;
        }
    }
    Ok(PlannedDocument {
        value: result,
        reinjected,
    })
}

/// Plan `action` on `object`, the list item at `item` or the document
/// itself; with `rooted`, an item's operations are rooted at the list.
fn plan_item(
    object: Value,
    document: usize,
    item: Option<usize>,
    rooted: bool,
    action: Action,
    planner: Planner<'_>,
) -> Result<(PlannedDocument, ObjectResult), Unplanned> {
    let reference = ObjectRef::of(&object);
    let (mut plan, verdicts) = plan_object(object, reference.as_ref(), action, planner)
        .map_err(|error| Unplanned { item, error })?;
    // Kustomize patches that would hit another container once injected.
    let patched = match (&reference, &plan.outcome) {
        (Some(workload), Outcome::Injected | Outcome::AlreadyInjected)
            if !planner.kustomized.index_patches.is_empty() =>
        {
            patches::of_injected(&plan.result, workload, planner)
        }
        _ => Vec::new(),
    };
    plan.notes
        .extend(patched.iter().cloned().map(crate::note::Note::warning));
    let ops = match (planner.settings.keep_patches, item.filter(|_| rooted)) {
        (false, _) => Vec::new(),
        (true, None) => plan.ops,
        (true, Some(index)) => rooted_at_item(plan.ops, index),
    };
    let result = ObjectResult {
        document,
        reference,
        outcome: plan.outcome,
        ops,
        notes: plan.notes,
        verdicts,
        hints: plan.hints,
        replaced: plan.replaced,
        uneditable: false,
        patched,
    };
    let planned = PlannedDocument {
        value: plan.result,
        reinjected: plan.reinjected,
    };
    Ok((planned, result))
}

/// Plan one object (`reference` is its identity), and review an injected
/// workload as the cluster would.
fn plan_object(
    object: Value,
    reference: Option<&ObjectRef>,
    action: Action,
    planner: Planner<'_>,
) -> Result<(Plan, Vec<Verdict>), rules::PlanError> {
    let Planner {
        settings,
        env,
        types,
        kustomized,
    } = planner;
    let kind = reference.and_then(|r| types.find(&r.api_version, &r.kind));
    // What the mesh's webhook writes on a Service.
    if kind.is_none()
        && settings.profile.mesh.annotates_services()
        && rules::service::is_service(&object)
    {
        let plan = match action {
            Action::Inject => rules::service::annotate(object, env)?,
            Action::Uninject => rules::service::unannotate(&object, settings.keep_patches)?,
        };
        return Ok((plan, Vec::new()));
    }
    let Some(kind) = kind else {
        let outcome = match &object {
            Value::Object(map) if map.field("kind").is_some_and(|k| !k.is_string()) => {
                Outcome::Skipped("kind is not a string".into())
            }
            Value::Object(map) if map.contains_key("kind") => not_injectable(action, reference),
            Value::Object(_) => Outcome::Ignored("document has no kind".into()),
            _ => Outcome::Ignored("not a Kubernetes object".into()),
        };
        return Ok((Plan::unchanged(object, outcome), Vec::new()));
    };
    // What kubectl would refuse to read is refused, not injected.
    if let Some(why) = workload::metadata_not_text(&object, kind) {
        let workload = reference.map(ToString::to_string).unwrap_or_default();
        return Err(rules::PlanError::Refused(format!("{workload}: {why}")));
    }
    let notes = match action {
        Action::Inject => overlays::source_notes(&object, kustomized),
        Action::Uninject => Vec::new(),
    };
    // Overlays that set different namespaces: one injection for all of them.
    let across = match kustomized.builds.as_slice() {
        builds @ [_, _, ..] if !overlays::names_namespace(&object) => Some(builds),
        _ => None,
    };
    let mut plan = match action {
        Action::Inject => match across {
            Some(builds) => overlays::inject_across(object, kind, builds, env),
            None => rules::inject(object, kind, env),
        }
        .map_err(|error| match error {
            internal @ rules::PlanError::Internal(_) => internal,
            refused => {
                let workload = reference.map(ToString::to_string).unwrap_or_default();
                rules::PlanError::Refused(format!("{workload} cannot be injected: {refused}"))
            }
        })?,
        Action::Uninject => {
            rules::uninject(&object, kind, &settings.profile, settings.keep_patches)?
        }
    };
    let review = |plan: &Plan, namespace: &str| verdicts_of(plan, kind, namespace, planner);
    let verdicts = match across.filter(|_| action == Action::Inject) {
        Some(builds) => overlays::verdicts_in_each(&plan, builds, &review),
        None => review(&plan, env.namespace),
    };
    if matches!(plan.outcome, Outcome::Injected | Outcome::AlreadyInjected) {
        plan.notes.extend(notes);
    }
    Ok((plan, verdicts))
}

/// What the cluster says of `plan`'s workload (of `kind`), for one that
/// names no namespace in `namespace`.
fn verdicts_of(
    plan: &Plan,
    kind: &workload::WorkloadType,
    namespace: &str,
    planner: Planner<'_>,
) -> Vec<Verdict> {
    let Planner { settings, env, .. } = planner;
    match plan.outcome {
        Outcome::Injected | Outcome::AlreadyInjected => {
            let target = admission::review::Target {
                default_namespace: namespace,
                cluster: env.cluster,
                version: env.version,
                webhooks: &[],
                injector: &admission::review::no_injector,
                trace: false,
            };
            let mut verdicts = admission::review::review(&plan.result, kind, &target).verdicts;
            // Which of them the workload drew before injection: the
            // injection taken out again is the workload as it was.
            if !verdicts.is_empty() {
                let original = rules::uninject(&plan.result, kind, &settings.profile, false)
                    .ok()
                    .filter(|bare| bare.outcome == Outcome::Uninjected);
                if let Some(original) = original {
                    admission::review::mark_preexisting(
                        &mut verdicts,
                        &plan.result,
                        &original.result,
                        kind,
                        &target,
                    );
                }
            }
            verdicts
        }
        // The mesh's own words, after whose webhook says them.
        Outcome::Denied(ref why) => vec![Verdict::rejection(
            "MutatingAdmissionWebhook",
            format!("{}'s webhook denies the pod: {why}", settings.profile.name),
        )],
        _ => Vec::new(),
    }
}

/// The outcome for an object of a kind without a pod template: left as
/// expected, unless it names a workload kind under an API version the tool
/// does not know (`apps/v1beta2` Deployments), which the user would not
/// expect to be left alone.
fn not_injectable(action: Action, reference: Option<&ObjectRef>) -> Outcome {
    match (action, reference) {
        (Action::Uninject, _) => Outcome::NotInjected,
        (Action::Inject, Some(r)) if workload::is_builtin_kind(&r.kind) => {
            Outcome::Skipped(format!(
                "{}: {} is not an API version of {} that the tool knows",
                rules::plan::NOT_INJECTABLE,
                r.api_version,
                r.kind
            ))
        }
        (Action::Inject, _) => Outcome::Ignored(rules::plan::NOT_INJECTABLE.into()),
    }
}

/// Read `apiVersion`, `kind` and the names straight from the syntax tree, so
/// that large documents which are not workloads are never converted.
fn identity_of(root: &Node<'_>) -> Option<ObjectRef> {
    // Only scalars that read as strings: `kind: 5` is not a kind.
    let scalar = |node: Option<&Node<'_>>| match &node?.kind {
        yaml::NodeKind::Scalar { text, style, tag } => {
            match yaml::value::resolve_scalar(text, *style, tag.as_deref()) {
                Value::String(s) => Some(s),
                _ => None,
            }
        }
        _ => None,
    };
    let metadata = root.get("metadata");
    let field = |name: &str| scalar(metadata.and_then(|m| m.get(name)));
    Some(ObjectRef {
        api_version: scalar(root.get("apiVersion")).unwrap_or_default(),
        kind: scalar(root.get("kind"))?,
        name: field("name")
            .or_else(|| field("generateName"))
            .unwrap_or_default(),
        namespace: field("namespace"),
    })
}

/// Operations on the list item at `index`, rooted at the list document.
fn rooted_at_item(ops: Vec<PatchOperation>, index: usize) -> Vec<PatchOperation> {
    let prefix = ["items".to_string(), index.to_string()];
    ops.into_iter().map(|op| prefixed(op, &prefix)).collect()
}

/// An operation on a list item, re-rooted at the list document.
fn prefixed(op: PatchOperation, prefix: &[String]) -> PatchOperation {
    use json_patch::jsonptr::PointerBuf;
    let join = |path: &json_patch::jsonptr::Pointer| {
        PointerBuf::from_tokens(
            prefix
                .iter()
                .cloned()
                .chain(path.tokens().map(|t| t.decoded().into_owned())),
        )
    };
    let mut op = op;
    match &mut op {
        PatchOperation::Add(o) => o.path = join(&o.path),
        PatchOperation::Remove(o) => o.path = join(&o.path),
        PatchOperation::Replace(o) => o.path = join(&o.path),
        PatchOperation::Test(o) => o.path = join(&o.path),
        PatchOperation::Move(o) => {
            o.from = join(&o.from);
            o.path = join(&o.path);
        }
        PatchOperation::Copy(o) => {
            o.from = join(&o.from);
            o.path = join(&o.path);
        }
    }
    op
}

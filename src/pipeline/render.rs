//! A document's plans rendered onto its text: the edits that make each
//! planned value, written the way the document writes (a document injected
//! before is written as injecting anew writes it).

use super::*;

/// What planning documents gives: their objects and values, and the new
/// text of each changed document (its byte range in the source, and the text).
/// Edits are applied document by document, so they never pile up.
#[derive(Default)]
pub(super) struct Rendered {
    pub(super) objects: Vec<ObjectResult>,
    pub(super) values: Vec<Value>,
    /// Settled edits, document after document.
    pub(super) edits: Vec<yaml::Edit>,
}

/// What a source's units rendered, gathered: its edits as each unit made
/// them, not copied into one list (a large stream's are many).
pub(super) struct SourceRendered {
    pub(super) objects: Vec<ObjectResult>,
    pub(super) values: Vec<Value>,
    pub(super) edits: Vec<Vec<yaml::Edit>>,
}

/// The first lone CR on the lines of `text[from..to]`: a line break to YAML,
/// but not to the editor, which splices whole lines.
pub(super) fn lone_carriage_return(text: &str, from: usize, to: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let line = text
        .get(..from)
        .and_then(|t| t.rfind('\n'))
        .map_or(0, |i| i + 1);
    (line..to).find(|&i| bytes.get(i) == Some(&b'\r') && bytes.get(i + 1) != Some(&b'\n'))
}

/// [`lone_carriage_return`] in a document that `holds`: a list cut into
/// items has none (see `units_of`), and a JSON list's item may stand on a
/// line of megabytes, not scanned again for each item (a scan for each
/// made a one-line list of 5,000 workloads take 2.7 s instead of 0.24).
fn lone_carriage_return_in(holds: Holds, text: &str, from: usize, to: usize) -> Option<usize> {
    match holds {
        Holds::Document => lone_carriage_return(text, from, to),
        Holds::Item { .. } => None,
    }
}

/// Plan one document and add its objects, value and text edits to `out`.
pub(super) fn render_document(
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
        out.objects
            .push(left_as_is(document.index, identity, outcome));
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
        &mut scratch.caches,
        &mut out.objects,
    )
    .map_err(|unplanned| {
        let at = unplanned_at(&unplanned, root, holds);
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
        if let Some(at) = lone_carriage_return_in(holds, text, from, to) {
            return Err(locate(at, LONE_CARRIAGE_RETURN.into()).into());
        }
        let anew = match planned.reinjected {
            true => reinjected_text(name, text, (from, to), root, holds, planner, scratch)?,
            false => None,
        };
        let objects = out.objects.get_mut(first_object..).unwrap_or_default();
        let (kept, mut recorded) = match anew {
            None => what_the_text_shows(text, root, &mut result, settings, types, objects)
                .map_err(internal)?,
            Some(_) => Default::default(),
        };
        let reinjecting = anew.is_some();
        if let Some(anew) = anew.as_deref()
            && settings.keep_patches
            && settings.action == Action::Inject
        {
            sync_ops_with_text(anew, holds, objects);
        }
        let on = DocumentText {
            text,
            root,
            anchored: document.anchored,
            holds,
            range: (from, to),
        };
        let (changes, merged) = on.edits(anew, &mut result, &mut scratch.blocks, &kept, planner);
        recorded |= merged;
        if recorded && settings.keep_patches {
            for object in out.objects.iter_mut().skip(first_object) {
                kept::sync_ops(&mut object.ops, &result);
            }
        }
        match changes {
            Ok(changes) => {
                let changes = match !reinjecting && settings.action == Action::Uninject {
                    true => with_texts_restored(name, text, (from, to), root, types, changes)?,
                    false => changes,
                };
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
                let objects = out.objects.iter_mut().skip(first_object);
                objects.for_each(|object| object.leave_uneditable(&reason));
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
    if let Some(kind) = workload {
        let injected = planned_change && settings.action == Action::Inject;
        hand_back(scratch, result, kind, injected.then_some(&settings.profile));
    }
    Ok(())
}

/// A workload's value, written: the containers `profile` injected into it
/// (when it was injected) can hold the next workload's, the rest the next
/// workload's value.
fn hand_back(
    scratch: &mut Scratch,
    mut value: Value,
    kind: &workload::WorkloadType,
    profile: Option<&crate::profile::Profile>,
) {
    if let Some(profile) = profile {
        rules::inject::keep_injected(&mut value, kind, profile, &mut scratch.caches.spares);
    }
    if scratch.mode == Mode::Reuse {
        scratch.done_value = Some(value);
    }
}

/// A document's text as the edits of its plans are made on it: the
/// source's `text`, the document's tree, whether it holds anchors, what it
/// holds, and the stretch of the text it stands on.
struct DocumentText<'t, 'n, 'a> {
    text: &'t str,
    root: &'n Node<'a>,
    anchored: bool,
    holds: Holds,
    range: (usize, usize),
}

impl DocumentText<'_, '_, '_> {
    /// The edits that write the planned `result`: the text a re-injection
    /// wrote (`anew`) as one edit, else the difference from the text, new
    /// lines taken from `blocks` and what `kept` holds written back. Keys a
    /// merge brought that the difference writes out are recorded in
    /// `result` (and the second value says so).
    fn edits(
        &self,
        anew: Option<String>,
        result: &mut Value,
        blocks: &mut yaml::Blocks,
        kept: &yaml::edit::Kept,
        planner: Planner<'_>,
    ) -> (Result<Vec<yaml::Edit>, yaml::EditError>, bool) {
        let (from, to) = self.range;
        if let Some(anew) = anew {
            let edit = yaml::Edit {
                start: from,
                end: to,
                text: anew.into(),
            };
            return (Ok(vec![edit]), false);
        }
        let Self {
            text,
            root,
            anchored,
            holds,
            ..
        } = *self;
        let diff = |result: &Value, blocks: &mut yaml::Blocks| {
            yaml::edit::diff_kept(text, root, anchored, result, blocks, kept, holds.layout())
        };
        match diff(result, blocks) {
            // Keys a merge brought were written out: the record says which,
            // for uninject to leave them to it again.
            Ok(diffed)
                if !diffed.materialised.is_empty() && planner.settings.action == Action::Inject =>
            {
                kept::attach_merged(root, result, planner.types, &diffed.materialised);
                (diff(result, blocks).map(|d| d.edits), true)
            }
            other => (other.map(|d| d.edits), false),
        }
    }
}

/// Why a document with a carriage return alone is not edited.
const LONE_CARRIAGE_RETURN: &str = "a carriage return without a line feed: YAML reads it as a \
    line break, the edit would not; use LF or CRLF line endings";

/// `changes`, uninject's edits of `text[from..to]` (whose tree is `root`),
/// as one edit of that stretch with the scalars inject replaced written back
/// as the manifest wrote them, where the record holds their texts.
fn with_texts_restored(
    name: &str,
    text: &str,
    (from, to): (usize, usize),
    root: &Node<'_>,
    types: &WorkloadTypes,
    changes: Vec<yaml::Edit>,
) -> Result<Vec<yaml::Edit>, Error> {
    let internal = |err: yaml::EditError| Error::internal_at(name, text, err.offset, &err.message);
    let uninjected = yaml::edit::apply_range(text, from, to, changes.clone()).map_err(internal)?;
    let restored = verbatim::restore_texts(root, types, &uninjected)
        .map_err(|err| internal_in(name, text, from, UNINJECTED, &err))?;
    Ok(match restored {
        Some(restored) => vec![yaml::Edit {
            start: from,
            end: to,
            text: restored.into(),
        }],
        None => changes,
    })
}

/// The result of an object left as it is, with its `outcome`.
fn left_as_is(document: usize, reference: Option<ObjectRef>, outcome: Outcome) -> ObjectResult {
    ObjectResult {
        document,
        reference,
        outcome,
        ops: Vec::new(),
        notes: Vec::new(),
        verdicts: Vec::new(),
        hints: Vec::new(),
        replaced: None,
        uneditable: false,
        patched: Vec::new(),
    }
}

/// Where an object that could not be planned is said to be: at the list
/// item the error is about, else at the document (`root`).
fn unplanned_at(unplanned: &Unplanned, root: &Node<'_>, holds: Holds) -> usize {
    let item = match holds {
        Holds::Item { .. } => None,
        Holds::Document => unplanned
            .item
            .and_then(|index| match &root.get("items")?.kind {
                yaml::NodeKind::Seq { items, .. } => items.get(index),
                _ => None,
            }),
    };
    item.map_or(root.start, |item| item.start)
}

/// What only the document's text (`text`, whose tree is `root`) shows,
/// recorded in the planned `result` so that the change can be undone
/// exactly, or gathered for uninject to write back: the pod's own containers
/// merged into the mesh's, nulls, probes, scalars as the manifest wrote
/// them. Returns what uninject keeps, and whether inject's record gained
/// anything (the patches of `objects` are synced with it).
fn what_the_text_shows(
    text: &str,
    root: &Node<'_>,
    result: &mut Value,
    settings: &Settings,
    types: &WorkloadTypes,
    objects: &mut [ObjectResult],
) -> Result<(yaml::edit::Kept, bool), yaml::EditError> {
    let merges = settings.profile.mesh.merges_user_containers();
    let probes = settings.profile.mesh.takes_over_probes();
    let mut kept = yaml::edit::Kept::default();
    let mut recorded = false;
    match settings.action {
        Action::Inject => {
            if merges {
                verbatim::attach(text, root, result, types)?;
                recorded = true;
            }
            recorded |= kept::attach_nulls(text, root, result, types)?;
            if probes {
                recorded |= kept::attach_probes(text, root, result, types)?;
            }
            // Scalars inject replaced: their text as the manifest wrote it.
            verbatim::attach_texts(text, root, result, types, probes)?;
            // The patch writes the records as the text does.
            if settings.keep_patches {
                for object in objects {
                    kept::sync_ops(&mut object.ops, result);
                }
            }
        }
        Action::Uninject => {
            if merges {
                kept.items = verbatim::recorded(root, types);
            }
            kept::for_uninject(root, types, &mut kept);
        }
    }
    Ok((kept, recorded))
}

/// The patches of `objects` synced with the text a re-injection wrote
/// (`anew`, the document or, for `Holds::Item`, a list's item).
fn sync_ops_with_text(anew: &str, holds: Holds, objects: &mut [ObjectResult]) {
    let documents = yaml::parse_stream(anew).ok();
    let root = documents.as_deref().and_then(|d| d.first()?.root.as_ref());
    let root = match holds {
        Holds::Item { .. } => root.and_then(item_read_alone),
        Holds::Document => root,
    };
    if let Some(value) = root.and_then(|root| yaml::value::to_value(root).ok()) {
        for object in objects {
            kept::sync_ops(&mut object.ops, &value);
        }
    }
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
pub(super) fn reinjected_text(
    name: &str,
    text: &str,
    (from, to): (usize, usize),
    root: &Node<'_>,
    holds: Holds,
    planner: Planner<'_>,
    scratch: &mut Scratch,
) -> Result<Option<String>, Error> {
    let internal = |err: yaml::EditError| Error::internal_at(name, text, err.offset, &err.message);
    let internal_bare = |err: yaml::EditError| internal_in(name, text, from, BARE, &err);
    let mut objects = Vec::new();
    let Ok(value) = yaml::value::to_value(root) else {
        return Ok(None);
    };
    let caches = &mut scratch.caches;
    let Ok(bare) = plan_document(
        value,
        1,
        holds,
        Action::Uninject,
        planner,
        caches,
        &mut objects,
    ) else {
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
    let injected = plan_document(
        value,
        1,
        holds,
        Action::Inject,
        planner,
        caches,
        &mut objects,
    );
    let Ok(mut injected) = injected else {
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
    let mut blocks = blocks_for(scratch.mode);
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
pub(super) fn editable<T>(
    edited: Result<T, yaml::EditError>,
) -> Result<Option<T>, yaml::EditError> {
    match edited {
        Ok(edited) => Ok(Some(edited)),
        Err(err) if err.defect => Err(err),
        Err(_) => Ok(None),
    }
}

/// What [`internal_in`] names a text made from a document by.
pub(super) const UNINJECTED: &str = "the text uninject made of the document starting here";
pub(super) const BARE: &str = "the document starting here with its old injection taken out";

/// The tool's defect `err`, found in `made` (a text made from the document of
/// `text` starting at byte `from`): said at the document's start, with the
/// place in the text made.
pub(super) fn internal_in(
    name: &str,
    text: &str,
    from: usize,
    made: &str,
    err: &yaml::EditError,
) -> Error {
    let message = format!("{}, at byte {} of {made}", err.message, err.offset);
    Error::internal_at(name, text, from, &message)
}

/// The item of a list in `root`, the tree of the item's text read alone: a
/// block item's lines read from its `-` on are a sequence of one, a JSON
/// item's braces the mapping itself.
pub(super) fn item_read_alone<'n, 'a>(root: &'n Node<'a>) -> Option<&'n Node<'a>> {
    match &root.kind {
        yaml::NodeKind::Seq { items, flow: false } => match items.as_slice() {
            [item] => Some(item),
            _ => None,
        },
        yaml::NodeKind::Map { flow: true, .. } => Some(root),
        _ => None,
    }
}

//! A document's objects planned: each workload injected or uninjected by
//! the rules, with the cluster's verdicts, and each object's result.

use super::*;

/// Why a document could not be planned, and the item of a list whose plan
/// failed (`None` for the document itself).
pub(super) struct Unplanned {
    pub(super) item: Option<usize>,
    pub(super) error: rules::PlanError,
}

/// What planning a document gives besides its objects' results.
pub(super) struct PlannedDocument {
    pub(super) value: Value,
    /// Some object of it had an injection taken out and put in anew.
    pub(super) reinjected: bool,
}

/// Plan `action` on one document (an object, a `List` of them, or what it
/// `holds`) and return its final value.
pub(super) fn plan_document(
    value: Value,
    document: usize,
    holds: Holds,
    action: Action,
    planner: Planner<'_>,
    caches: &mut rules::Caches,
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
        let (value, plan) = plan_item(value, document, item, false, action, planner, caches)?;
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
            let (planned, plan) =
                plan_item(taken, document, Some(index), true, action, planner, caches)?;
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
pub(super) fn plan_item(
    object: Value,
    document: usize,
    item: Option<usize>,
    rooted: bool,
    action: Action,
    planner: Planner<'_>,
    caches: &mut rules::Caches,
) -> Result<(PlannedDocument, ObjectResult), Unplanned> {
    let reference = ObjectRef::of(&object);
    let (mut plan, verdicts) = plan_object(object, reference.as_ref(), action, planner, caches)
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
/// workload as the cluster would; `caches` are the worker's.
pub(super) fn plan_object(
    object: Value,
    reference: Option<&ObjectRef>,
    action: Action,
    planner: Planner<'_>,
    caches: &mut rules::Caches,
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
            Some(builds) => overlays::inject_across(object, kind, builds, env, caches),
            None => rules::inject(object, kind, env, caches),
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
pub(super) fn verdicts_of(
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
pub(super) fn not_injectable(action: Action, reference: Option<&ObjectRef>) -> Outcome {
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
pub(super) fn identity_of(root: &Node<'_>) -> Option<ObjectRef> {
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
pub(super) fn rooted_at_item(ops: Vec<PatchOperation>, index: usize) -> Vec<PatchOperation> {
    let prefix = ["items".to_string(), index.to_string()];
    ops.into_iter().map(|op| prefixed(op, &prefix)).collect()
}

/// An operation on a list item, re-rooted at the list document.
pub(super) fn prefixed(op: PatchOperation, prefix: &[String]) -> PatchOperation {
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

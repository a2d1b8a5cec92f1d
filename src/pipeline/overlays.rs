//! A workload that kustomize includes: injected in the namespace its
//! overlay sets, or, when overlays that build on it set different
//! namespaces, once for all of them and checked in each.

use serde_json::Value;

use crate::admission::Verdict;
use crate::json::Field;
use crate::note::Note;
use crate::rules::{self, Env, Outcome, Plan, PlanError};
use crate::source::{Build, Kustomized};
use crate::workload::WorkloadType;

/// `env` for a workload that names no namespace in `namespace`, given by
/// `from` (said with it, when given).
pub(super) fn in_namespace<'a>(
    env: &Env<'a>,
    namespace: &'a str,
    from: Option<&'a str>,
) -> Env<'a> {
    Env {
        namespace,
        namespace_assumed: false,
        namespace_from: from,
        ..env.clone()
    }
}

/// Inject `object` (which names no namespace) for every overlay of `builds`
/// (two or more, each another namespace): one plan for all of them (their
/// admission checks are [`verdicts_in_each`]).
///
/// The injection made in each namespace is compared: the same in all, it
/// is the one. Otherwise, with Linkerd, the injection made in no namespace
/// (as `linkerd inject` makes it) is taken when it is each namespace's but
/// for the namespace label. Otherwise the first overlay's namespace is
/// taken, and a warning names the overlays it is wrong for.
pub(super) fn inject_across(
    object: Value,
    kind: &WorkloadType,
    builds: &[Build],
    env: &Env<'_>,
    caches: &mut rules::Caches,
) -> Result<Plan, PlanError> {
    let mut plans = Vec::with_capacity(builds.len());
    for build in builds {
        let env = in_namespace(env, &build.namespace, None);
        let plan = rules::inject(object.clone(), kind, &env, caches)?;
        plans.push(plan);
    }
    let overlays = overlays_text(builds);
    let mut plans = plans.into_iter();
    let Some(mut first) = plans.next() else {
        return Err(PlanError::Internal("no overlay to inject for".into()));
    };
    let others: Vec<Plan> = plans.collect();
    let differs = others
        .iter()
        .find_map(|other| first_difference(&first.result, &other.result, String::new()));
    let Some(difference) = differs else {
        first.notes.push(Note::info(format!(
            "namespace from each overlay: {overlays}; the injection is the same in each"
        )));
        return Ok(first);
    };
    if let Some(label) = env.profile.mesh.namespace_label() {
        let neutral = in_namespace(env, "", None);
        let plan = rules::inject(object, kind, &neutral, caches)?;
        let blank = |plan: &Plan| with_label_blank(&plan.result, kind, label);
        let alike = std::iter::once(&first)
            .chain(&others)
            .all(|p| blank(p) == plan.result);
        if alike {
            let mut plan = plan;
            // What a namespace's policies ask of the user (CNI mode under
            // Pod Security) still holds there.
            for hint in std::iter::once(&first)
                .chain(&others)
                .flat_map(|p| &p.hints)
            {
                if !plan.hints.contains(hint) {
                    plan.hints.push(hint.clone());
                }
            }
            plan.notes.push(Note::info(format!(
                "namespace from each overlay: {overlays}; injected for all of them as the mesh's CLI \
                 injects a manifest without a namespace ({label} empty)"
            )));
            return Ok(plan);
        }
    }
    let chosen = builds.first().map_or("", |b| b.namespace.as_str());
    first.notes.push(Note::warning(format!(
        "overlays set different namespaces ({overlays}) and the injection differs between them \
         (at {difference}): injected as in namespace {chosen}, the first overlay's; it is wrong \
         for the others (inject a copy of the base for each, or set the namespace in the base)"
    )));
    Ok(first)
}

/// The verdicts of `plan` in the namespace of each of `builds`, each
/// message naming the namespace and the overlay.
pub(super) fn verdicts_in_each(
    plan: &Plan,
    builds: &[Build],
    review: &dyn Fn(&Plan, &str) -> Vec<Verdict>,
) -> Vec<Verdict> {
    if !matches!(plan.outcome, Outcome::Injected | Outcome::AlreadyInjected) {
        // The mesh's own refusal, which no namespace changes.
        return builds
            .first()
            .map(|b| review(plan, &b.namespace))
            .unwrap_or_default();
    }
    builds
        .iter()
        .flat_map(|build| {
            review(plan, &build.namespace).into_iter().map(|mut v| {
                v.message = format!(
                    "in namespace {} (overlay {}): {}",
                    build.namespace, build.overlay, v.message
                );
                v
            })
        })
        .collect()
}

/// What the user hears of a workload of a kustomized source besides its
/// injection: the kustomizations that could not be read, and a namespace of
/// its own that kustomize will write over.
pub(super) fn source_notes(object: &Value, kustomized: &Kustomized) -> Vec<Note> {
    let mut notes: Vec<Note> = kustomized
        .problems
        .iter()
        .map(|p| Note::warning(p.clone()).about_the_run())
        .collect();
    if let Some(own) = own_namespace(object) {
        for build in kustomized.builds.iter().filter(|b| b.namespace != own) {
            notes.push(Note::warning(format!(
                "metadata.namespace is {own}, but overlay {} sets namespace {} ({}), which \
                 kustomize writes over it: injected as in namespace {own}",
                build.overlay, build.namespace, build.set_by
            )));
        }
    }
    notes
}

/// A context object of a kustomized source (a LimitRange beside the
/// Deployment) as kustomize deploys it: one that names no namespace is in
/// each overlay's.
pub(super) fn placed(object: Value, kustomized: &Kustomized) -> Vec<Value> {
    if kustomized.builds.is_empty() || names_namespace(&object) {
        return vec![object];
    }
    kustomized
        .builds
        .iter()
        .map(|build| {
            let mut object = object.clone();
            if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
                metadata.insert("namespace".into(), Value::String(build.namespace.clone()));
            }
            object
        })
        .collect()
}

/// Whether `object` names its namespace.
pub(super) fn names_namespace(object: &Value) -> bool {
    own_namespace(object).is_some()
}

/// The namespace `object` names, if any.
fn own_namespace(object: &Value) -> Option<&str> {
    object
        .field("metadata")
        .and_then(|m| m.field("namespace"))
        .and_then(Value::as_str)
        .filter(|ns| !ns.is_empty())
}

/// `builds` as a report lists them: `shop (overlays/prod), dev (overlays/dev)`.
fn overlays_text(builds: &[Build]) -> String {
    builds
        .iter()
        .map(|b| format!("{} ({})", b.namespace, b.overlay))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `object` with its pod's namespace `label` empty, where it has it.
fn with_label_blank(object: &Value, kind: &WorkloadType, label: &str) -> Value {
    let mut object = object.clone();
    let mut at = Some(&mut object);
    for token in kind.template_path() {
        at = at.and_then(|v| v.get_mut(token));
    }
    let label = at
        .and_then(|pod| pod.get_mut("metadata"))
        .and_then(|m| m.get_mut("labels"))
        .and_then(|l| l.get_mut(label));
    if let Some(label) = label {
        *label = Value::String(String::new());
    }
    object
}

/// Where `a` and `b` first differ, as a path (`spec.template.metadata.labels`).
fn first_difference(a: &Value, b: &Value, at: String) -> Option<String> {
    let join = |key: &str| match at.is_empty() {
        true => key.to_string(),
        false => format!("{at}.{key}"),
    };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => x
            .iter()
            .find_map(|(key, value)| match y.get(key) {
                Some(other) => first_difference(value, other, join(key)),
                None => Some(join(key)),
            })
            .or_else(|| y.keys().find(|k| !x.contains_key(*k)).map(|k| join(k))),
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q, format!("{at}[{i}]"))),
        _ if a == b => None,
        _ => Some(if at.is_empty() {
            "the object".into()
        } else {
            at
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn differences_are_named_by_path() {
        let a = json!({"spec": {"template": {"metadata": {"labels": {"x": "shop"}}}}, "c": [1, 2]});
        let b = json!({"spec": {"template": {"metadata": {"labels": {"x": "dev"}}}}, "c": [1, 2]});
        assert_eq!(
            first_difference(&a, &b, String::new()).as_deref(),
            Some("spec.template.metadata.labels.x")
        );
        assert_eq!(first_difference(&a, &a, String::new()), None);
        let c = json!({"spec": {"template": {"metadata": {"labels": {"x": "shop"}}}}, "c": [1, 3]});
        assert_eq!(
            first_difference(&a, &c, String::new()).as_deref(),
            Some("c[1]")
        );
        assert_eq!(
            first_difference(&a, &json!({}), String::new()).as_deref(),
            Some("spec")
        );
    }
}

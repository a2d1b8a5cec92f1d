//! What a mesh's webhook writes on a Service. Linkerd's marks the ports that
//! carry opaque traffic (`config.linkerd.io/opaque-ports`), so that the
//! proxies of the Service's clients skip protocol detection on them; the
//! annotation is recorded, so that uninject takes it out again.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::Env;
use super::inject::{ensure, namespace_out_of_scope};
use super::plan::{Outcome, Patcher, Plan, PlanError};
use super::record::{RECORD_ANNOTATION, Record};
use super::uninject::{remove_created, remove_keys};
use crate::json::Field;
use crate::note::Note;
use crate::profile::Filled;

/// Whether `object` is a core Service.
pub fn is_service(object: &Value) -> bool {
    object.field("kind").and_then(Value::as_str) == Some("Service")
        && object.field("apiVersion").and_then(Value::as_str) == Some("v1")
}

/// Plan what the mesh's webhook writes on the Service `object`. One that
/// the tool annotated before is taken back first, so that annotating again
/// with other settings gives what annotating the original gives.
pub fn annotate(object: Value, env: &Env<'_>) -> Result<Plan, PlanError> {
    let before = record_of(&object).is_some().then(|| object.clone());
    let bare = match &before {
        Some(_) => unannotate(&object, false)?.result,
        None => object,
    };
    let namespace = bare
        .field("metadata")
        .and_then(|m| m.field("namespace"))
        .and_then(Value::as_str)
        .filter(|ns| !ns.is_empty())
        .unwrap_or(env.namespace)
        .to_string();
    let left = |reason: String| {
        Ok(Plan::unchanged(
            before.clone().unwrap_or(bare.clone()),
            Outcome::Skipped(reason),
        ))
    };
    if let Some(reason) = namespace_out_of_scope(&namespace, env) {
        return left(reason);
    }
    let annotations = bare
        .field("metadata")
        .and_then(|m| m.field("annotations"))
        .and_then(Value::as_object);
    let filled = match filled_for_any_object(env) {
        Ok(filled) => filled,
        Err(reason) => return left(reason),
    };
    let wanted = env.profile.mesh.service_annotations(
        &bare,
        annotations,
        env.cluster.namespace_annotations(&namespace),
        filled.values(),
    );
    let mut patcher = Patcher::new(bare, env.keep_patches);
    if wanted.is_empty() {
        return Ok(match before {
            // Annotated before, nothing to mark now: as the original.
            Some(_) => {
                let note = "the mesh's annotation taken out: no port to mark with these settings";
                Plan {
                    reinjected: true,
                    ..Plan::changed(Outcome::Annotated, patcher, vec![Note::info(note)])
                }
            }
            None => {
                let reason = format!("{}'s webhook writes nothing on it", env.profile.name);
                Plan::unchanged(patcher.value, Outcome::Ignored(reason))
            }
        });
    }
    let mut record = Record::default();
    let metadata = vec!["metadata".to_string()];
    ensure(
        &mut patcher,
        &metadata,
        "metadata",
        Value::Object(Map::new()),
        &mut record,
    )?;
    let path = vec!["metadata".to_string(), "annotations".to_string()];
    ensure(
        &mut patcher,
        &path,
        "annotations",
        Value::Object(Map::new()),
        &mut record,
    )?;
    record.annotations = patcher.add_missing(&path, wanted.clone())?;
    let mut record_path = path.clone();
    record_path.push(RECORD_ANNOTATION.into());
    patcher.add(&record_path, Value::String(record.encode()))?;
    let notes = wanted
        .iter()
        .map(|(key, value)| {
            Note::info(format!(
                "{key}: {} (as {}'s webhook writes it)",
                value.as_str().unwrap_or_default(),
                env.profile.name
            ))
        })
        .collect();
    let same = before.as_ref().is_some_and(|b| *b == patcher.value);
    let outcome = if same {
        Outcome::AlreadyInjected
    } else {
        Outcome::Annotated
    };
    Ok(Plan {
        reinjected: before.is_some() && !same,
        ..Plan::changed(outcome, patcher, notes)
    })
}

/// Take out what [`annotate`] added to the Service `object`, by its record.
pub fn unannotate(object: &Value, keep_patches: bool) -> Result<Plan, PlanError> {
    let Some(record) = record_of(object) else {
        return Ok(Plan::unchanged(object.clone(), Outcome::NotInjected));
    };
    let mut patcher = Patcher::new(object.clone(), keep_patches);
    let path = vec!["metadata".to_string(), "annotations".to_string()];
    let mut keys = record.annotations.clone();
    keys.push(RECORD_ANNOTATION.into());
    remove_keys(&mut patcher, &path, &keys)?;
    remove_created(&mut patcher, &record, |field| match field {
        "metadata" => Some(vec!["metadata".to_string()]),
        "annotations" => Some(path.clone()),
        _ => None,
    })?;
    Ok(Plan::changed(Outcome::Uninjected, patcher, Vec::new()))
}

/// The record on a Service, if the tool annotated it.
fn record_of(object: &Value) -> Option<Record> {
    object
        .field("metadata")
        .and_then(|m| m.field("annotations"))
        .and_then(|a| a.field(RECORD_ANNOTATION))
        .and_then(Value::as_str)
        .map(Record::decode)
}

/// The values the webhook has for any object: the profile's, the cluster's
/// and the flags' (a Service has no pod annotations).
fn filled_for_any_object(env: &Env<'_>) -> Result<Arc<Filled>, String> {
    let object_value = |source: &crate::profile::ValueFromObject, namespace: &str| {
        env.cluster.source_value(source, namespace)
    };
    let (filled, _) =
        env.prepared
            .for_workload(env.profile, None, env.flags, Some(&object_value), &|_| None)?;
    Ok(filled)
}

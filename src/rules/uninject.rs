//! Remove what inject added: the recorded pieces, and the profile's own
//! containers and volumes even without a record (a pod injected by the mesh's
//! own tooling), so that re-injecting never gives a second proxy.

use std::collections::HashSet;

use serde_json::Value;

use super::plan::{Outcome, Patcher, Plan, PlanError};
use super::record::{RECORD_ANNOTATION, Record};
use super::{PodPaths, template_problem};
use crate::json::Field;
use crate::profile::{Profile, image_name};
use crate::workload::WorkloadType;

/// Plan the removal of an injection from `object`.
/// `record_ops` keeps the patch (for `-o patch`).
pub fn uninject(
    object: &Value,
    kind: &WorkloadType,
    profile: &Profile,
    record_ops: bool,
) -> Result<Plan, PlanError> {
    if template_problem(object, kind).is_some() {
        return Ok(Plan::unchanged(object.clone(), Outcome::NotInjected));
    }
    let mut patcher = Patcher::new(object.clone(), record_ops);
    remove_injection(&mut patcher, kind, profile)?;
    if patcher.changes == 0 {
        return Ok(Plan::unchanged(patcher.value, Outcome::NotInjected));
    }
    Ok(Plan {
        outcome: Outcome::Uninjected,
        ops: patcher.ops,
        result: patcher.value,
        notes: Vec::new(),
        hints: Vec::new(),
    })
}

/// Whether the pod holds an injection of `profile` that
/// [`remove_injection`] would take out.
pub(crate) fn injection_found(patcher: &Patcher, kind: &WorkloadType, profile: &Profile) -> bool {
    let paths = PodPaths::of(kind);
    let record = read_record(patcher, &paths);
    let ours: Vec<&str> = profile.container_names().collect();
    injected_by(patcher, &paths, profile, record.as_ref(), &ours)
}

/// Whether the pod carries a record annotation, whatever it says.
pub(crate) fn record_present(patcher: &Patcher, kind: &WorkloadType) -> bool {
    read_record(patcher, &PodPaths::of(kind)).is_some()
}

/// The record inject left on the pod, if any.
fn read_record(patcher: &Patcher, paths: &PodPaths) -> Option<Record> {
    let mut record_path = paths.metadata("annotations");
    record_path.push(RECORD_ANNOTATION.to_string());
    patcher
        .get(&record_path)
        .and_then(Value::as_str)
        .map(Record::decode)
}

/// Add to `patcher` the operations that take an injection out again.
pub(crate) fn remove_injection(
    patcher: &mut Patcher,
    kind: &WorkloadType,
    profile: &Profile,
) -> Result<(), PlanError> {
    let paths = PodPaths::of(kind);
    let annotations = paths.metadata("annotations");
    let record = read_record(patcher, &paths);
    let had_record = record.is_some();
    let record = record.unwrap_or_default();

    let ours: Vec<&str> = profile.container_names().collect();
    if !injected_by(
        patcher,
        &paths,
        profile,
        had_record.then_some(&record),
        &ours,
    ) {
        return Ok(());
    }
    // Containers the profile names are always ours: never leave a second proxy.
    let with_ours = |names: &[String]| -> HashSet<String> {
        names
            .iter()
            .cloned()
            .chain(ours.iter().map(|s| s.to_string()))
            .collect()
    };
    let containers = with_ours(&record.containers);
    let init_containers = with_ours(&record.init_containers);
    // Volumes by record; without one, the profile's volume names.
    let volumes: HashSet<String> = if had_record {
        record.volumes.iter().cloned().collect()
    } else {
        profile.volume_names().map(str::to_string).collect()
    };
    remove_named(patcher, &paths.spec("containers"), &containers)?;
    remove_named(patcher, &paths.spec("initContainers"), &init_containers)?;
    remove_named(patcher, &paths.spec("volumes"), &volumes)?;

    let (profile_annotations, profile_labels) = profile.marker_keys(&kind.label());
    let mut annotation_keys: Vec<String> = record.annotations.clone();
    let mut label_keys: Vec<String> = record.labels.clone();
    if !had_record {
        annotation_keys.extend(profile_annotations);
        label_keys.extend(profile_labels);
    }
    annotation_keys.push(RECORD_ANNOTATION.to_string());
    remove_keys(patcher, &annotations, &annotation_keys)?;
    remove_keys(patcher, &paths.metadata("labels"), &label_keys)?;

    if let Some(grace) = &record.grace {
        let path = paths.spec("terminationGracePeriodSeconds");
        match grace.parse::<u64>() {
            Ok(seconds) => patcher.add(&path, Value::from(seconds))?,
            Err(_) if patcher.get(&path).is_some() => patcher.remove(&path)?,
            Err(_) => {}
        }
    }

    // Fields inject created go again once nothing else is in them.
    for field in record.created.iter().rev() {
        let path = match field.as_str() {
            "metadata" => paths.metadata.clone(),
            "annotations" | "labels" => paths.metadata(field),
            "initContainers" | "volumes" => paths.spec(field),
            _ => continue,
        };
        let empty = match patcher.get(&path) {
            Some(Value::Object(map)) => map.is_empty(),
            Some(Value::Array(items)) => items.is_empty(),
            _ => false,
        };
        if empty {
            if record.was_null.contains(field) {
                patcher.add(&path, Value::Null)?;
            } else {
                patcher.remove(&path)?;
            }
        }
    }
    Ok(())
}

/// Whether this profile's injection is in the pod: a record of this tool
/// naming the profile's containers (a record naming others is another
/// profile's, say Istio's under the linkerd profile: not ours to remove), or,
/// without a record, the mesh's own tooling's work: one of its containers
/// there with the mesh's injection marker on the pod, or running the mesh's
/// proxy image from any registry, or with no image at all (what a
/// half-removed injection leaves). Annotations alone prove nothing
/// (`prometheus.io/*` are everyone's). A
/// container that merely has the proxy's name (a gateway, a user-defined
/// proxy) is not an injection.
fn injected_by(
    patcher: &Patcher,
    paths: &PodPaths,
    profile: &Profile,
    record: Option<&Record>,
    ours: &[&str],
) -> bool {
    if let Some(record) = record {
        return record
            .containers
            .iter()
            .chain(&record.init_containers)
            .any(|n| ours.contains(&n.as_str()));
    }
    let marked = profile.injection_marker.as_ref().is_some_and(|marker| {
        patcher
            .get(&paths.metadata("annotations"))
            .and_then(|a| a.get(marker))
            .is_some()
    });
    // Rendered from the profile only when a container has one of our names.
    let proxy_image = std::cell::OnceCell::new();
    ["containers", "initContainers"].iter().any(|list| {
        patcher
            .get(&paths.spec(list))
            .and_then(Value::as_array)
            .is_some_and(|items| {
                items.iter().any(|item| {
                    let named = item
                        .field("name")
                        .and_then(Value::as_str)
                        .is_some_and(|n| ours.contains(&n));
                    // No image at all is a leftover of an injection, not a container of its own.
                    let image = item.field("image").and_then(Value::as_str);
                    named
                        && (marked
                            || image.is_none_or(|i| {
                                proxy_image
                                    .get_or_init(|| profile.proxy_image_name())
                                    .as_deref()
                                    .is_some_and(|p| image_name(i).starts_with(p))
                            }))
                })
            })
    })
}

/// Remove the items of the list at `path` whose `name` is in `names`.
fn remove_named(
    patcher: &mut Patcher,
    path: &[String],
    names: &HashSet<String>,
) -> Result<(), PlanError> {
    let Some(Value::Array(items)) = patcher.get(path) else {
        return Ok(());
    };
    let doomed: Vec<usize> = items
        .iter()
        .enumerate()
        .filter(|(_, item)| {
            item.field("name")
                .and_then(Value::as_str)
                .is_some_and(|n| names.contains(n))
        })
        .map(|(i, _)| i)
        .collect();
    for i in doomed.into_iter().rev() {
        let mut item = path.to_vec();
        item.push(i.to_string());
        patcher.remove(&item)?;
    }
    Ok(())
}

fn remove_keys(patcher: &mut Patcher, path: &[String], keys: &[String]) -> Result<(), PlanError> {
    for key in keys {
        let mut entry = path.to_vec();
        entry.push(key.clone());
        if patcher.get(&entry).is_some() {
            patcher.remove(&entry)?;
        }
    }
    Ok(())
}

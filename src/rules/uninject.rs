//! Remove what an injection demonstrably added, and nothing else: the pieces
//! this tool's record names, or, without a record, what the mesh's own
//! injector marked as its injection (its status annotation's lists, or the
//! profile's containers and volumes beside the mesh's marker). A container
//! that merely has the proxy's name or image (a gateway) stays.

use std::collections::HashSet;

use serde_json::Value;

use super::plan::{Outcome, Patcher, Plan, PlanError};
use super::record::{RECORD_ANNOTATION, Record};
use super::{PodPaths, template_problem};
use crate::json::Field;
use crate::mesh::{Mesh, istio};
use crate::note::Note;
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
    let paths = PodPaths::of(kind);
    if let Some(reason) = unknown_own_containers(&patcher, &paths, profile) {
        return Ok(Plan::unchanged(object.clone(), Outcome::Skipped(reason)));
    }
    let before = container_names(&patcher, &paths);
    remove_injection(&mut patcher, kind, profile)?;
    let left = patcher
        .get(&paths.spec("containers"))
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if patcher.changes > 0 && left == 0 {
        // The apiserver rejects a pod without containers: what the pod ran
        // is not known, and the injection stays.
        let marker = profile.injection_marker.as_deref().unwrap_or("its marker");
        let reason = format!(
            "uninject would leave the pod no container: the injection's record ({RECORD_ANNOTATION} or {marker}) names every one ({}) and {} records none of the pod's own; left as it is",
            before.join(", "),
            istio::OVERRIDES
        );
        return Ok(Plan::unchanged(object.clone(), Outcome::Skipped(reason)));
    }
    if patcher.changes == 0 {
        let mut plan = Plan::unchanged(patcher.value, Outcome::NotInjected);
        // A warning: the user asked for the proxy to go, and it stays.
        plan.notes.extend(
            unproven_containers(object, kind, profile)
                .into_iter()
                .map(Note::warning),
        );
        return Ok(plan);
    }
    Ok(Plan::changed(Outcome::Uninjected, patcher, Vec::new()))
}

/// Whether the pod holds an injection of `profile` that
/// [`remove_injection`] would take out.
pub(crate) fn injection_found(patcher: &Patcher, paths: &PodPaths, profile: &Profile) -> bool {
    injection_of(patcher, paths, profile).is_some()
}

/// Why containers with the profile's names stay in a pod with no injection
/// to remove: a note for each.
fn unproven_containers(object: &Value, kind: &WorkloadType, profile: &Profile) -> Vec<String> {
    let ours: Vec<&str> = profile.container_names().collect();
    let spec = kind
        .template_path()
        .try_fold(object, |at, token| at.field(token))
        .and_then(|template| template.field("spec"));
    let marker = profile.injection_marker.as_deref().unwrap_or("a marker");
    ["containers", "initContainers"]
        .iter()
        .filter_map(|list| spec.and_then(|s| s.field(list)).and_then(Value::as_array))
        .flatten()
        .filter_map(|c| c.field("name").and_then(Value::as_str))
        .filter(|name| ours.contains(name))
        .map(|name| {
            format!(
                "container {name} has the proxy's name, but nothing records it as injected (no {RECORD_ANNOTATION}, no {marker}): left as it is"
            )
        })
        .collect()
}

/// What the mesh's own injector says it injected, from its marker
/// annotation: the lists of a status (`{"containers": [...], ...}`, as
/// Istio writes it), or, for a marker that lists nothing (Linkerd's proxy
/// version), the profile's own names. `None` without the marker.
fn marked_by_mesh(patcher: &Patcher, paths: &PodPaths, profile: &Profile) -> Option<Marked> {
    let marker = profile.injection_marker.as_ref()?;
    let value = patcher
        .get(&paths.metadata)
        .and_then(|m| m.field("annotations"))
        .and_then(|a| a.get(marker))?;
    let names = |field: &str, status: &Value| -> Vec<String> {
        status
            .get(field)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    };
    let status = value
        .as_str()
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
        .filter(Value::is_object);
    Some(match status {
        Some(status) => Marked {
            record: Record {
                containers: names("containers", &status),
                init_containers: names("initContainers", &status),
                volumes: names("volumes", &status),
                ..Record::default()
            },
            lists: true,
        },
        None => Marked {
            record: profile_names(profile),
            lists: false,
        },
    })
}

/// What a mesh's marker says its injection added.
struct Marked {
    record: Record,
    /// Whether the marker lists the names itself (a status), rather than
    /// standing for the profile's.
    lists: bool,
}

/// Whether the pod carries a record annotation, whatever it says.
pub(crate) fn record_present(patcher: &Patcher, paths: &PodPaths) -> bool {
    read_record(patcher, paths).is_some()
}

/// The record inject left on the pod, if any.
fn read_record(patcher: &Patcher, paths: &PodPaths) -> Option<Record> {
    patcher
        .get(&paths.metadata)
        .and_then(|m| m.field("annotations"))
        .and_then(|a| a.field(RECORD_ANNOTATION))
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
    let had_record = read_record(patcher, &paths).is_some();
    let Some(record) = injection_of(patcher, &paths, profile) else {
        return Ok(());
    };
    let names = |names: &[String]| -> HashSet<String> { names.iter().cloned().collect() };
    let mut containers = names(&record.containers);
    let mut init_containers = names(&record.init_containers);
    if profile.mesh == Mesh::Istio {
        // The app's probes back from the agent, while the proxy that holds
        // them is there and the app's containers have their indices.
        let edits = restored_probes(patcher, &paths, profile, &record);
        super::inject::apply_edits(patcher, &paths, edits)?;
    }
    // Without this tool's record, the pod's own containers Istio merged its
    // rendered ones into come back from its overrides annotation, in place
    // of the merged ones: those are restored, not removed.
    let overrides = if had_record || profile.mesh != Mesh::Istio {
        None
    } else {
        istio_overrides(patcher, &paths)
    };
    if let Some(overrides) = &overrides {
        for (list, name) in restore_overrides(patcher, &paths, overrides)? {
            match list {
                "containers" => containers.remove(&name),
                _ => init_containers.remove(&name),
            };
        }
    }
    let volumes = names(&record.volumes);
    remove_named(patcher, &paths.spec("containers"), &containers)?;
    remove_named(patcher, &paths.spec("initContainers"), &init_containers)?;
    remove_named(patcher, &paths.spec("volumes"), &volumes)?;
    remove_named(
        patcher,
        &paths.spec("imagePullSecrets"),
        &names(&record.pull_secrets),
    )?;
    // The pod's fields the mesh's template set, as they were.
    for (field, was) in record.pod_fields() {
        let path = paths.spec(&field);
        match was {
            Some(was) => patcher.add(&path, was)?,
            None if patcher.get(&path).is_some() => patcher.remove(&path)?,
            None => {}
        }
    }
    // The pod's own containers the mesh's were merged into, back where
    // they were.
    for (list, index, container) in record.user_containers() {
        let path = paths.spec(&list);
        if patcher.get(&path).and_then(Value::as_array).is_none() {
            patcher.add(&path, Value::Array(Vec::new()))?;
        }
        let len = patcher
            .get(&path)
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        patcher.add_below(&path, &index.min(len).to_string(), container)?;
    }

    let (profile_annotations, profile_labels) = profile.marker_keys(&kind.label());
    let mut annotation_keys: Vec<String> = record.annotations.clone();
    let mut label_keys: Vec<String> = record.labels.clone();
    if !had_record {
        annotation_keys.extend(profile_annotations);
        label_keys.extend(profile_labels);
    }
    if overrides.is_some() {
        annotation_keys.push(istio::OVERRIDES.to_string());
    }
    annotation_keys.push(RECORD_ANNOTATION.to_string());
    remove_keys(patcher, &annotations, &annotation_keys)?;
    // The pod's own annotations inject changed, as they were (where they
    // were, if taken out since).
    for (index, key, value) in record.user_annotations() {
        let mut path = annotations.to_vec();
        path.push(key.clone());
        if patcher.get(&path).is_some() {
            patcher.add(&path, value)?;
        } else if patcher.get(&annotations).is_some() {
            patcher.add_at(&annotations, index, &key, value)?;
        }
    }
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
    remove_created(patcher, &record, |field| created_path(&paths, field))?;
    Ok(())
}

/// Where the field `field` of a record's `created` is in a workload.
pub(crate) fn created_path(paths: &PodPaths, field: &str) -> Option<Vec<String>> {
    match field {
        "metadata" => Some(paths.metadata.clone()),
        "annotations" | "labels" => Some(paths.metadata(field).into_owned()),
        "initContainers" | "volumes" | "imagePullSecrets" => Some(paths.spec(field).into_owned()),
        _ => None,
    }
}

/// The injection of this profile in the pod, and what it added, when it is
/// demonstrably one:
/// 1. this tool's record, when it names the profile's containers (a record
///    naming others is another profile's, say Istio's under the linkerd
///    profile: not ours to remove);
/// 2. the mesh's marker annotation, with one of the containers it lists
///    there (any its status lists, a proxyless or custom template's too, or
///    the profile's names for a marker that lists nothing);
/// 3. without either, the shape the mesh's own tooling leaves: a container
///    with the proxy's name running the mesh's proxy image (from any
///    registry), or no image at all, beside the pod's own containers.
///    Linkerd re-injects such pods too.
///
/// Annotations alone prove nothing (`prometheus.io/*` are everyone's), and
/// neither does a proxy that is the pod's only container: that is a gateway,
/// the proxy run as the application.
fn injection_of(patcher: &Patcher, paths: &PodPaths, profile: &Profile) -> Option<Record> {
    let ours: Vec<&str> = profile.container_names().collect();
    if let Some(record) = read_record(patcher, paths) {
        // The record is this profile's when it names one of its containers,
        // or its mesh's marker (a template of the mesh's own may inject
        // none of the profile's containers: Istio's proxyless gRPC).
        let names_ours = record
            .containers
            .iter()
            .chain(&record.init_containers)
            .any(|n| ours.contains(&n.as_str()))
            || profile
                .injection_marker
                .as_ref()
                .is_some_and(|marker| record.annotations.contains(marker));
        return names_ours.then_some(record);
    }
    let spec = patcher.get(&paths.spec);
    let containers = |list: &str| -> &[Value] {
        spec.and_then(|s| s.field(list))
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    };
    let present = |list: &str, names: &[String]| {
        containers(list)
            .iter()
            .filter_map(name_of)
            .any(|n| ours.contains(&n) && names.iter().any(|m| m == n))
    };
    if let Some(marked) = marked_by_mesh(patcher, paths, profile) {
        // A status lists what the mesh's templates injected, whatever their
        // names (Istio's proxyless grpc-simple, a custom template's); the
        // profile's names stand for a marker that lists nothing.
        let listed = |list: &str, names: &[String]| {
            containers(list)
                .iter()
                .filter_map(name_of)
                .any(|n| names.iter().any(|m| m == n))
        };
        let found = if marked.lists {
            listed("containers", &marked.record.containers)
                || listed("initContainers", &marked.record.init_containers)
        } else {
            present("containers", &marked.record.containers)
                || present("initContainers", &marked.record.init_containers)
        };
        return found.then_some(marked.record);
    }
    let has_app = containers("containers")
        .iter()
        .any(|c| name_of(c).is_none_or(|n| !ours.contains(&n)));
    let named_ours = |item: &&Value| name_of(item).is_some_and(|n| ours.contains(&n));
    let lists = ["containers", "initContainers"];
    if !has_app
        || !lists
            .iter()
            .any(|list| containers(list).iter().any(|c| named_ours(&c)))
    {
        return None;
    }
    // Only now: the image's name comes from rendering the profile's.
    let proxy_image = profile.proxy_image_name()?;
    let runs_proxy = lists.iter().any(|list| {
        containers(list).iter().filter(named_ours).any(|item| {
            // No image at all is what a half-removed injection leaves.
            item.field("image")
                .and_then(Value::as_str)
                .is_none_or(|i| image_name(i).starts_with(proxy_image.as_str()))
        })
    });
    runs_proxy.then(|| profile_names(profile))
}

/// The pod's `proxy.istio.io/overrides`, read; `None` without it or when
/// it is not what Istio writes.
fn istio_overrides(patcher: &Patcher, paths: &PodPaths) -> Option<istio::Overrides> {
    overrides_text(patcher, paths).and_then(istio::parse_overrides)
}

/// The text of the pod's `proxy.istio.io/overrides`, if it has one.
fn overrides_text<'a>(patcher: &'a Patcher, paths: &PodPaths) -> Option<&'a str> {
    patcher
        .get(&paths.metadata)
        .and_then(|m| m.field("annotations"))
        .and_then(|a| a.field(istio::OVERRIDES))
        .and_then(Value::as_str)
}

/// Why uninject cannot know the pod's own containers of a pod Istio
/// injected (no record of this tool): an overrides annotation that does not
/// read as Istio writes it. Taking the injection out would delete the
/// pod's containers it records.
fn unknown_own_containers(
    patcher: &Patcher,
    paths: &PodPaths,
    profile: &Profile,
) -> Option<String> {
    if profile.mesh != Mesh::Istio
        || read_record(patcher, paths).is_some()
        || injection_of(patcher, paths, profile).is_none()
    {
        return None;
    }
    let text = overrides_text(patcher, paths)?;
    istio::parse_overrides(text).is_none().then(|| {
        format!(
            "{} does not read as Istio writes it (a JSON object of containers and initContainers lists), so the pod's own containers it records are not known: left as it is",
            istio::OVERRIDES
        )
    })
}

/// The names of the pod's containers (not its init containers), for a
/// report: the items without one are not named.
fn container_names(patcher: &Patcher, paths: &PodPaths) -> Vec<String> {
    patcher
        .get(&paths.spec("containers"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(name_of)
        .map(str::to_string)
        .collect()
}

/// Put the pod's own containers `overrides` records back in place of the
/// containers of the same name Istio merged them into: in the same list
/// at the same index; Istio's proxy it moved to the init containers as a
/// native sidecar back among the containers, after them (where it was
/// among them is not recorded); one no longer there at the end of its
/// list, as Istio's re-injection puts it. Returns each list and name
/// restored, which the removal of the injection must keep.
fn restore_overrides(
    patcher: &mut Patcher,
    paths: &PodPaths,
    overrides: &istio::Overrides,
) -> Result<Vec<(&'static str, String)>, PlanError> {
    let mut restored = Vec::new();
    let lists = [
        ("containers", &overrides.containers),
        ("initContainers", &overrides.init_containers),
    ];
    for (list, recorded) in lists {
        for recorded in recorded {
            let Some(name) = name_of(recorded) else {
                continue;
            };
            let own = istio::recorded_container(recorded);
            let path = paths.spec(list);
            let at = patcher
                .get(&path)
                .and_then(Value::as_array)
                .and_then(|items| items.iter().position(|c| name_of(c) == Some(name)));
            let mut item = path.to_vec();
            let target = match at {
                Some(index) => {
                    item.push(index.to_string());
                    let moved = list == "initContainers"
                        && patcher.get(&item).is_some_and(|injected| {
                            istio::moved_from_containers(recorded, injected)
                        });
                    patcher.remove(&item)?;
                    if moved {
                        ensure_list(patcher, &paths.spec("containers"))?;
                        patcher.add_below(&paths.spec("containers"), "-", own)?;
                        "containers"
                    } else {
                        patcher.add(&item, own)?;
                        list
                    }
                }
                None => {
                    ensure_list(patcher, &path)?;
                    patcher.add_below(&path, "-", own)?;
                    list
                }
            };
            restored.push((target, name.to_string()));
        }
    }
    Ok(restored)
}

/// A list at `path`, made empty when there is none (or it is null).
fn ensure_list(patcher: &mut Patcher, path: &[String]) -> Result<(), PlanError> {
    if patcher.get(path).and_then(Value::as_array).is_none() {
        patcher.add(path, Value::Array(Vec::new()))?;
    }
    Ok(())
}

/// The profile's containers and volumes, as a record of what it adds.
fn profile_names(profile: &Profile) -> Record {
    let ours: Vec<String> = profile.container_names().map(str::to_string).collect();
    Record {
        containers: ours.clone(),
        init_containers: ours,
        volumes: profile.volume_names().map(str::to_string).collect(),
        ..Record::default()
    }
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

/// Take out the fields `record` says inject created (their paths from
/// `path_of`), once nothing else is in them; a field that was null before
/// is null again.
pub(crate) fn remove_created(
    patcher: &mut Patcher,
    record: &Record,
    path_of: impl Fn(&str) -> Option<Vec<String>>,
) -> Result<(), PlanError> {
    for field in record.created.iter().rev() {
        let Some(path) = path_of(field) else {
            continue;
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

pub(crate) fn remove_keys(
    patcher: &mut Patcher,
    path: &[String],
    keys: &[String],
) -> Result<(), PlanError> {
    for key in keys {
        let mut entry = path.to_vec();
        entry.push(key.clone());
        if patcher.get(&entry).is_some() {
            patcher.remove(&entry)?;
        }
    }
    Ok(())
}

/// A container's name.
fn name_of(item: &Value) -> Option<&str> {
    item.field("name").and_then(Value::as_str)
}

/// The edits that give the app back the probes Istio's agent took over:
/// the originals are in the env of the injected proxy being removed.
fn restored_probes(
    patcher: &Patcher,
    paths: &PodPaths,
    profile: &Profile,
    record: &Record,
) -> Vec<istio::Edit> {
    let Some(spec) = patcher.get(&paths.spec) else {
        return Vec::new();
    };
    let Some(proxy) = profile.proxy.field("name").and_then(Value::as_str) else {
        return Vec::new();
    };
    let removed = |list: &str, name: &str| {
        let names = if list == "containers" {
            &record.containers
        } else {
            &record.init_containers
        };
        names.iter().any(|n| n == name)
    };
    let probers = ["initContainers", "containers"]
        .iter()
        .filter_map(|list| {
            spec.field(list)
                .and_then(Value::as_array)
                .map(|items| (list, items))
        })
        .flat_map(|(list, items)| items.iter().map(move |c| (list, c)))
        .filter(|(list, c)| name_of(c) == Some(proxy) && removed(list, proxy))
        .filter_map(|(_, c)| c.field("env").and_then(Value::as_array))
        .flatten()
        .find(|e| e.field("name").and_then(Value::as_str) == Some(istio::APP_PROBERS))
        .and_then(|e| e.field("value").and_then(Value::as_str));
    match probers {
        Some(probers) => {
            let kept: Vec<(String, String, Value)> = record
                .probe_texts()
                .into_iter()
                .filter_map(|(container, field, text)| {
                    let entry = crate::yaml::edit::Verbatim::entry_from_text(text)?;
                    Some((container, field, entry.value))
                })
                .collect();
            istio::restore_app_probes(spec, probers, &record.probe_ports, &kept)
        }
        None => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::WorkloadTypes;
    use serde_json::json;

    /// `pod` uninjected with the embedded istio profile.
    fn uninjected(pod: &Value) -> Plan {
        let profile = Profile::embedded("istio").expect("istio profile");
        let types = WorkloadTypes::with(&[]);
        let kind = types.find("v1", "Pod").expect("Pod");
        uninject(pod, kind, &profile, false).expect("plans")
    }

    /// A pod as Istio's injector writes it, with these annotations and spec.
    fn istio_pod(annotations: Value, spec: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "p", "annotations": annotations}, "spec": spec})
    }

    #[test]
    fn the_pods_own_container_istio_merged_comes_back_from_its_overrides() {
        // Istio's grpc-agent template merges into the app's container.
        let pod = istio_pod(
            json!({
                "proxy.istio.io/overrides": r#"{"containers":[{"name":"traffic","image":"t:1","resources":{},"readinessProbe":{"httpGet":{"port":80}}}]}"#,
                "sidecar.istio.io/status": r#"{"initContainers":null,"containers":["istio-proxy","traffic"],"volumes":["istio-xds"],"imagePullSecrets":null,"revision":"default"}"#,
            }),
            json!({
                "containers": [
                    {"name": "traffic", "image": "t:1", "env": [{"name": "GRPC_XDS_BOOTSTRAP", "value": "/x"}],
                     "readinessProbe": {"httpGet": {"port": 80}}},
                    {"name": "istio-proxy", "image": "proxyv2"}
                ],
                "volumes": [{"name": "istio-xds", "emptyDir": {}}]
            }),
        );
        let plan = uninjected(&pod);
        assert_eq!(plan.outcome, Outcome::Uninjected);
        assert_eq!(
            plan.result,
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "annotations": {}},
            "spec": {"containers": [
                {"name": "traffic", "image": "t:1", "readinessProbe": {"httpGet": {"port": 80}}}
            ], "volumes": []}})
        );
    }

    #[test]
    fn a_proxy_istio_made_native_goes_back_among_the_containers_with_image_auto() {
        let pod = istio_pod(
            json!({
                "proxy.istio.io/overrides": r#"{"initContainers":[{"name":"istio-proxy","args":["-c","x"],"resources":{}}]}"#,
                "sidecar.istio.io/status": r#"{"initContainers":["istio-init","istio-proxy"],"containers":null,"volumes":null,"imagePullSecrets":null,"revision":"default"}"#,
            }),
            json!({
                "initContainers": [
                    {"name": "istio-init", "image": "proxyv2"},
                    {"name": "istio-proxy", "image": "proxyv2", "args": ["-c", "x"], "restartPolicy": "Always"}
                ],
                "containers": [{"name": "app", "image": "a:1"}]
            }),
        );
        let plan = uninjected(&pod);
        assert_eq!(plan.outcome, Outcome::Uninjected);
        assert_eq!(
            plan.result["spec"],
            json!({"initContainers": [], "containers": [
                {"name": "app", "image": "a:1"},
                {"name": "istio-proxy", "image": "auto", "args": ["-c", "x"]}
            ]})
        );
    }

    #[test]
    fn a_pod_that_would_have_no_container_left_stays_with_the_reason() {
        // An Istio that wrote no overrides: the app it merged is not known.
        let pod = istio_pod(
            json!({
                "sidecar.istio.io/status": r#"{"containers":["istio-proxy","traffic"],"volumes":null}"#,
            }),
            json!({"containers": [
                {"name": "traffic", "image": "t:1"},
                {"name": "istio-proxy", "image": "proxyv2"}
            ]}),
        );
        let plan = uninjected(&pod);
        assert_eq!(plan.result, pod);
        let Outcome::Skipped(reason) = &plan.outcome else {
            panic!("not skipped: {:?}", plan.outcome);
        };
        assert!(reason.contains("no container"), "{reason}");
        assert!(reason.contains("traffic, istio-proxy"), "{reason}");
    }

    #[test]
    fn overrides_that_do_not_read_as_istios_leave_the_pod_as_it_is() {
        let pod = istio_pod(
            json!({
                "proxy.istio.io/overrides": "{not json",
                "sidecar.istio.io/status": r#"{"containers":["istio-proxy"],"volumes":null}"#,
            }),
            json!({"containers": [
                {"name": "app", "image": "a:1"},
                {"name": "istio-proxy", "image": "proxyv2"}
            ]}),
        );
        let plan = uninjected(&pod);
        assert_eq!(plan.result, pod);
        let Outcome::Skipped(reason) = &plan.outcome else {
            panic!("not skipped: {:?}", plan.outcome);
        };
        assert!(reason.contains("proxy.istio.io/overrides"), "{reason}");
    }
}

//! The built containers placed into the pod with JSON Patch operations:
//! containers, volumes, marker annotations and labels, the pod's own
//! containers the mesh's merge into, and the record uninject reads.

use super::*;

/// What [`place`] reads of the pod.
pub(super) struct PlacedIn {
    /// The first app container, which `kubectl logs/exec` default to
    /// (`None` when the mesh does not name it).
    pub(super) app_container: Option<String>,
    pub(super) name: String,
    /// The mesh's volumes go before the pod's own (Istio), not after.
    pub(super) volumes_first: bool,
    /// The pod's own containers of the names of the mesh's are merged into
    /// them (Istio).
    pub(super) merges_user_containers: bool,
    /// Istio's capture by TPROXY.
    pub(super) tproxy: bool,
    /// The pod is in an OpenShift project (its namespace gives the IDs its
    /// pods run as).
    pub(super) openshift: bool,
    /// The image pull secrets the mesh adds to the pod, before its own.
    pub(super) pull_secrets: Vec<String>,
}

impl PlacedIn {
    /// What placing needs of the pod (the rest borrows the object being
    /// patched): `tproxy`, Istio's capture by TPROXY; `openshift`, the
    /// namespace is an OpenShift project's.
    pub(super) fn of(
        pod: Pod,
        env: &Env<'_>,
        pull_secrets: Vec<String>,
        tproxy: bool,
        openshift: bool,
    ) -> Self {
        let mesh = env.profile.mesh;
        PlacedIn {
            app_container: pod
                .app_container_names
                .into_iter()
                .next()
                .filter(|_| mesh.names_default_container()),
            name: pod.vars.name,
            volumes_first: mesh.puts_its_volumes_first(),
            merges_user_containers: merges_user_containers(env),
            pull_secrets,
            tproxy,
            openshift,
        }
    }
}

/// Put the sidecar into the pod: marker annotations and labels, the init
/// containers and the proxy where their mode puts them, the volumes they
/// mount, the grace period, and the record of all of it. Returns the notes.
pub(super) fn place(
    patcher: &mut Patcher,
    paths: &PodPaths,
    pod: &PlacedIn,
    rendered: &mut Rendered,
    sidecar: Sidecar,
    grace: Option<GraceRaise>,
) -> Result<Vec<Note>, PlanError> {
    let Sidecar {
        mut proxy,
        mut inits,
        appended,
        app_overlays,
        native,
        first,
        annotations: extra,
        mut notes,
        hints: _,
        app_edits,
        probe_ports,
        changed_annotations,
    } = sidecar;
    let mut record = Record::default();
    // The app's containers are edited once the sidecar is in place (the
    // renderer keeps an item's text when the list's edits come in that
    // order): each edit finds its container again by name.
    let edited: Vec<Option<String>> = app_edits
        .iter()
        .map(|edit| {
            let (istio::Edit::Set(path, _) | istio::Edit::Remove(path)) = edit;
            let mut at = paths.spec.clone();
            at.extend(path.iter().take(2).cloned());
            patcher.get(&at).map(|c| name_of(c).to_string())
        })
        .collect();
    record.probe_ports = probe_ports;
    let merged = match pod.merges_user_containers {
        true => {
            let mesh = MeshContainers {
                proxy: proxy.as_mut(),
                inits: &mut inits,
                app_overlays: &app_overlays,
                native,
            };
            merge_user_containers(patcher, paths, pod, mesh, &mut record)?
        }
        false => MergedUserContainers::default(),
    };
    let annotations = pod_annotations(rendered, extra, merged.overrides, native, pod);
    ensure(patcher, &paths.metadata, "metadata", json!({}), &mut record)?;
    let annotations_path = paths.metadata("annotations");
    change_own_annotations(patcher, &annotations_path, changed_annotations, &mut record)?;
    record.annotations = set_entries(
        patcher,
        &annotations_path,
        "annotations",
        annotations,
        &mut record,
    )?;
    record.labels = set_entries(
        patcher,
        &paths.metadata("labels"),
        "labels",
        rendered.pod_labels(&pod.name),
        &mut record,
    )?;
    // The mesh's template's volumes all go in; the profile's, those mounted.
    let every_volume = rendered.by_mesh_template;
    let mounted = match every_volume {
        true => Vec::new(),
        false => mounted_volumes(inits.iter().chain(proxy.iter()).chain(appended.iter())),
    };
    let containers = Placed {
        inits,
        proxy,
        appended,
        overlaid: merged.overlaid,
        native,
        first,
    };
    place_containers(patcher, paths, containers, &mut record)?;
    let volumes =
        rendered.take_volumes(|v| every_volume || mounted.iter().any(|m| m == name_of(v)));
    place_volumes(
        patcher,
        paths,
        volumes,
        pod.volumes_first,
        &mut notes,
        &mut record,
    )?;
    place_pull_secrets(patcher, paths, &pod.pull_secrets, &mut record)?;
    place_pod_fields(patcher, paths, rendered, grace, &mut record)?;
    let moved = edits_found_again(patcher, paths, app_edits, edited);
    apply_edits(patcher, paths, moved)?;
    patcher.add_below(
        &annotations_path,
        RECORD_ANNOTATION,
        Value::String(record.encode()),
    )?;
    Ok(notes)
}

/// The mesh's containers that the pod's own of the same names merge into.
struct MeshContainers<'a> {
    proxy: Option<&'a mut Value>,
    inits: &'a mut [Value],
    /// The mesh template's entries for the pod's own app containers.
    app_overlays: &'a [Value],
    native: bool,
}

/// What merging the pod's own containers into the mesh's left to place.
#[derive(Default)]
struct MergedUserContainers {
    /// The pod's own containers the mesh's template overlays, merged, each
    /// with the place it had.
    overlaid: Vec<(usize, Value)>,
    /// Istio's annotation of the pod's own containers it merged.
    overrides: Option<String>,
}

/// The pod's own containers of the names of the mesh's: taken out, and
/// merged into the mesh's as its injector merges them (Istio), each kept in
/// the record as it was.
fn merge_user_containers(
    patcher: &mut Patcher,
    paths: &PodPaths,
    pod: &PlacedIn,
    mesh: MeshContainers<'_>,
    record: &mut Record,
) -> Result<MergedUserContainers, PlanError> {
    let MeshContainers {
        mut proxy,
        inits,
        app_overlays,
        native,
    } = mesh;
    let mut overlaid: Vec<(usize, Value)> = Vec::new();
    let proxy_name = proxy.as_ref().map(|p| name_of(p).to_string());
    let mut names: Vec<String> = inits.iter().map(|c| name_of(c).to_string()).collect();
    names.extend(proxy_name.clone());
    names.extend(app_overlays.iter().map(|c| name_of(c).to_string()));
    // On OpenShift, Istio's webhook forgets the user and group of the
    // pod's own proxy when its user is the app's (OpenShift gave every
    // container the same): the proxy runs as the project's proxy user.
    let reset_user = pod.openshift
        && patcher
            .get(&paths.spec)
            .is_some_and(istio::proxy_user_matches_app_user);
    let taken = take_containers(patcher, paths, &names)?;
    let as_istio_reads = |user: &Value| -> Value {
        if reset_user && name_of(user) == istio::PROXY {
            istio::without_app_user(user)
        } else {
            user.clone()
        }
    };
    let (mut in_containers, mut in_inits) = (Vec::new(), Vec::new());
    for (list, index, original) in &taken {
        let user = &as_istio_reads(original);
        let name = name_of(user);
        if let Some(proxy) = proxy
            .as_deref_mut()
            .filter(|_| Some(name) == proxy_name.as_deref())
        {
            *proxy = istio::merge_user_container(proxy, user);
            if native {
                in_inits.push(user.clone());
            } else {
                in_containers.push(user.clone());
            }
        } else if let Some(init) = inits.iter_mut().find(|c| name_of(c) == name) {
            *init = istio::merge_user_container(init, user);
            in_inits.push(user.clone());
        } else if let Some(overlay) = app_overlays.iter().find(|c| name_of(c) == name) {
            overlaid.push((*index, istio::merge_user_container(overlay, user)));
            in_containers.push(user.clone());
        }
        record
            .user_containers
            .push(Record::user_container(list, *index, original));
    }
    let user_proxy = taken
        .iter()
        .find(|(_, _, c)| Some(name_of(c)) == proxy_name.as_deref());
    if let (Some((_, _, user)), Some(proxy)) = (user_proxy, proxy) {
        if let Some(init) = inits
            .iter_mut()
            .find(|c| matches!(name_of(c), "istio-init" | "istio-validation"))
        {
            istio::adjust_capture_user(init, proxy, &as_istio_reads(user), pod.tproxy);
        }
    }
    let overrides =
        (!taken.is_empty()).then(|| istio::overrides_annotation(&in_containers, &in_inits));
    Ok(MergedUserContainers {
        overlaid,
        overrides,
    })
}

/// The annotations the injection adds to the pod: the rendering's, the
/// stages' (`extra`), Istio's overrides, and the default container.
fn pod_annotations(
    rendered: &mut Rendered,
    extra: Map<String, Value>,
    overrides: Option<String>,
    native: bool,
    pod: &PlacedIn,
) -> Map<String, Value> {
    // The rendering's own when no other workload shares it.
    let mut annotations = match std::sync::Arc::get_mut(&mut rendered.metadata) {
        Some(metadata) => std::mem::take(&mut metadata.annotations),
        None => rendered.metadata.annotations.clone(),
    };
    annotations.extend(extra);
    if let Some(overrides) = overrides {
        annotations
            .entry(istio::OVERRIDES)
            .or_insert(Value::String(overrides));
    }
    if !native && !rendered.by_mesh_template {
        // `kubectl logs/exec` keep pointing at the app, not the proxy.
        if let Some(app) = &pod.app_container {
            annotations
                .entry(DEFAULT_CONTAINER)
                .or_insert_with(|| Value::String(app.clone()));
        }
    }
    annotations
}

/// The pod's own annotations the mesh changes (`changed`, each with its new
/// value), each kept in the record with its place and value for uninject
/// to put back.
fn change_own_annotations(
    patcher: &mut Patcher,
    annotations_path: &[String],
    changed: Vec<(String, String)>,
    record: &mut Record,
) -> Result<(), PlanError> {
    if changed.is_empty() {
        return Ok(());
    }
    let own = patcher
        .get(annotations_path)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for (key, value) in changed {
        let index = own.keys().position(|k| *k == key);
        let (Some(index), Some(original)) = (index, own.get(&key)) else {
            continue;
        };
        record
            .user_annotations
            .push(Record::user_annotation(index, &key, original));
        patcher.add_below(annotations_path, &key, Value::String(value))?;
    }
    Ok(())
}

/// The containers to place, and how.
struct Placed {
    inits: Vec<Value>,
    proxy: Option<Value>,
    /// Containers that go after the pod's own (a debug container).
    appended: Vec<Value>,
    /// The pod's own containers merged with the template's, each with its place.
    overlaid: Vec<(usize, Value)>,
    native: bool,
    /// Classic and first among the containers.
    first: bool,
}

/// The containers in the pod. Native: capture setup, then the proxy, then
/// the pod's own init containers. Classic: capture setup after the pod's
/// own (they are not intercepted), the proxy first or last among the
/// containers.
fn place_containers(
    patcher: &mut Patcher,
    paths: &PodPaths,
    placed: Placed,
    record: &mut Record,
) -> Result<(), PlanError> {
    let Placed {
        inits,
        proxy,
        appended,
        mut overlaid,
        native,
        first,
    } = placed;
    let init_path = paths.spec("initContainers");
    let existing_inits = patcher
        .get(&init_path)
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    ensure(patcher, &init_path, "initContainers", json!([]), record)?;
    let init_start = if native { 0 } else { existing_inits };
    let containers_path = paths.spec("containers");
    overlaid.sort_by_key(|(index, _)| *index);
    for (index, container) in overlaid {
        let len = patcher
            .get(&containers_path)
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        record.containers.push(name_of(&container).to_string());
        patcher.add_below(&containers_path, &index.min(len).to_string(), container)?;
    }
    let proxy_index = inits.len();
    record
        .init_containers
        .extend(inits.iter().map(|c| name_of(c).to_string()));
    patcher.add_items(&init_path, Some(init_start), inits)?;
    if let Some(proxy) = proxy {
        let proxy_name = name_of(&proxy).to_string();
        if native {
            patcher.add_below(&init_path, &proxy_index.to_string(), proxy)?;
            record.init_containers.push(proxy_name);
        } else {
            let at = if first { "0" } else { "-" };
            patcher.add_below(&containers_path, at, proxy)?;
            record.containers.push(proxy_name);
        }
    }
    for container in appended {
        record.containers.push(name_of(&container).to_string());
        patcher.add_below(&containers_path, "-", container)?;
    }
    let created_inits = record.created.iter().any(|f| f == "initContainers");
    if created_inits
        && patcher
            .get(&init_path)
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty)
    {
        // Nothing went into a list inject created: put it back as it was.
        if record.was_null.iter().any(|f| f == "initContainers") {
            patcher.add(&init_path, Value::Null)?;
        } else {
            patcher.remove(&init_path)?;
        }
        record.created.retain(|f| f != "initContainers");
        record.was_null.retain(|f| f != "initContainers");
    }
    Ok(())
}

/// The `volumes` the injected containers mount, first or last among the
/// pod's; one of a name the pod has already is left out, and said.
fn place_volumes(
    patcher: &mut Patcher,
    paths: &PodPaths,
    volumes: Vec<Value>,
    first: bool,
    notes: &mut Vec<Note>,
    record: &mut Record,
) -> Result<(), PlanError> {
    let volumes_path = paths.spec("volumes");
    if !volumes.is_empty() {
        ensure(patcher, &volumes_path, "volumes", json!([]), record)?;
    }
    // The names the pod's volumes have, and then those added.
    let mut taken: Vec<String> = patcher
        .get(&volumes_path)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|v| name_of(v).to_string())
        .collect();
    let mut added = Vec::with_capacity(volumes.len());
    for volume in volumes {
        let name = name_of(&volume);
        if taken.iter().any(|t| t == name) {
            notes.push(Note::warning(format!(
                "the pod already has a volume named {name}; it was kept"
            )));
        } else {
            let name = name.to_string();
            taken.push(name.clone());
            record.volumes.push(name);
            added.push(volume);
        }
    }
    if !added.is_empty() {
        patcher.add_items(&volumes_path, first.then_some(0), added)?;
    }
    Ok(())
}

/// The image pull secrets the mesh adds, before the pod's own; one the pod
/// has already is not added again.
fn place_pull_secrets(
    patcher: &mut Patcher,
    paths: &PodPaths,
    secrets: &[String],
    record: &mut Record,
) -> Result<(), PlanError> {
    let secrets_path = paths.spec("imagePullSecrets");
    let has_secret = |patcher: &Patcher, name: &str| {
        patcher
            .get(&secrets_path)
            .and_then(Value::as_array)
            .is_some_and(|items| items.iter().any(|s| name_of(s) == name))
    };
    let mut next_secret = 0;
    for name in secrets {
        if has_secret(patcher, name) {
            continue;
        }
        ensure(
            patcher,
            &secrets_path,
            "imagePullSecrets",
            json!([]),
            record,
        )?;
        patcher.add_below(
            &secrets_path,
            &next_secret.to_string(),
            json!({"name": name}),
        )?;
        next_secret += 1;
        record.pull_secrets.push(name.clone());
    }
    Ok(())
}

/// The pod's fields the mesh's template sets, merged over the pod's own,
/// and the grace period the shutdown wait needs.
fn place_pod_fields(
    patcher: &mut Patcher,
    paths: &PodPaths,
    rendered: &Rendered,
    grace: Option<GraceRaise>,
    record: &mut Record,
) -> Result<(), PlanError> {
    for (field, value) in &rendered.pod_fields {
        let path = paths.spec(field);
        let was = patcher.get(&path).cloned();
        let merged = match &was {
            Some(was) => istio::overlay::merged_field(field, was, value),
            None => value.clone(),
        };
        if was.as_ref() != Some(&merged) {
            record
                .pod_fields
                .push(Record::pod_field(field, was.as_ref()));
            patcher.add(&path, merged)?;
        }
    }
    if let Some(GraceRaise { needed, current }) = grace {
        patcher.add(&paths.spec("terminationGracePeriodSeconds"), json!(needed))?;
        record.grace = Some(current.map_or("unset".to_string(), |g| g.to_string()));
    }
    Ok(())
}

/// The app containers' edits (`edits`, each with the name of the container
/// it was made for), pointed at where those containers are once the
/// sidecar is placed.
fn edits_found_again(
    patcher: &Patcher,
    paths: &PodPaths,
    edits: Vec<istio::Edit>,
    names: Vec<Option<String>>,
) -> Vec<istio::Edit> {
    edits
        .into_iter()
        .zip(names)
        .filter_map(|(edit, name)| {
            let name = name?;
            let moved = |path: Vec<String>| -> Option<Vec<String>> {
                let list = path.first()?;
                let items = patcher.get(&paths.spec(list))?.as_array()?;
                let index = items.iter().position(|c| name_of(c) == name)?;
                let mut path = path;
                *path.get_mut(1)? = index.to_string();
                Some(path)
            };
            Some(match edit {
                istio::Edit::Set(path, value) => istio::Edit::Set(moved(path)?, value),
                istio::Edit::Remove(path) => istio::Edit::Remove(moved(path)?),
            })
        })
        .collect()
}

/// Whether the pod's own containers of the names of the mesh's are merged
/// into them: a mesh that does so (Istio), unless the profile's
/// `mergeUserProxy` is turned off (uninject gives such a container back as
/// the manifest wrote it: see `pipeline::verbatim`).
pub(super) fn merges_user_containers(env: &Env<'_>) -> bool {
    env.profile.mesh.merges_user_containers()
        && env
            .flags
            .get("mergeUserProxy")
            .or_else(|| env.profile.values.get("mergeUserProxy"))
            .is_some_and(|v| *v == Value::Bool(true) || v.as_str() == Some("true"))
}

/// Take the containers named `names` out of the pod's init containers and
/// containers: each with its list and the index it had.
pub(super) fn take_containers(
    patcher: &mut Patcher,
    paths: &PodPaths,
    names: &[String],
) -> Result<Vec<(&'static str, usize, Value)>, PlanError> {
    let mut taken = Vec::new();
    for list in ["initContainers", "containers"] {
        let path = paths.spec(list);
        let found: Vec<(usize, Value)> = patcher
            .get(&path)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
            .filter(|(_, c)| names.iter().any(|n| n == name_of(c)))
            .map(|(i, c)| (i, c.clone()))
            .collect();
        for (index, _) in found.iter().rev() {
            patcher.remove(&child(&path, *index))?;
        }
        taken.extend(found.into_iter().map(|(i, c)| (list, i, c)));
    }
    Ok(taken)
}

/// Create the field at `path` as `empty` if it is missing or null, and note
/// in `record` that inject created it.
pub(crate) fn ensure(
    patcher: &mut Patcher,
    path: &[String],
    field: &str,
    empty: Value,
    record: &mut Record,
) -> Result<(), PlanError> {
    let current = patcher.get(path);
    let was_null = current.is_some_and(Value::is_null);
    if current.is_none() || was_null {
        patcher.add(path, empty)?;
        record.created.push(field.to_string());
        if was_null {
            record.was_null.push(field.to_string());
        }
    }
    Ok(())
}

/// Add the `entries` the mapping at `path` lacks; returns the keys added.
pub(super) fn set_entries(
    patcher: &mut Patcher,
    path: &[String],
    field: &str,
    entries: Map<String, Value>,
    record: &mut Record,
) -> Result<Vec<String>, PlanError> {
    if entries.is_empty() {
        return Ok(Vec::new());
    }
    ensure(patcher, path, field, Value::Object(Map::new()), record)?;
    // A key the pod already has keeps its value: the workload's own
    // settings win (a `prometheus.io/scrape: "false"`, a tlsMode), and
    // uninject has nothing of the user's to restore.
    patcher.add_missing(path, entries)
}

/// Apply a mesh's `edits` (paths relative to the pod's spec).
pub(crate) fn apply_edits(
    patcher: &mut Patcher,
    paths: &PodPaths,
    edits: Vec<istio::Edit>,
) -> Result<(), PlanError> {
    // The spec's path, with each edit's own after it in turn.
    let mut at = paths.spec.clone();
    let spec = at.len();
    for edit in edits {
        at.truncate(spec);
        match edit {
            istio::Edit::Set(path, value) => {
                at.extend(path);
                patcher.add(&at, value)?;
            }
            istio::Edit::Remove(path) => {
                at.extend(path);
                patcher.remove(&at)?;
            }
        }
    }
    Ok(())
}

pub(super) fn child(path: &[String], index: usize) -> Vec<String> {
    child_key(path, &index.to_string())
}

pub(super) fn child_key(path: &[String], key: &str) -> Vec<String> {
    crate::rules::below(path, key)
}

/// The `name` of a container, volume or mount.
pub(super) fn name_of(item: &Value) -> &str {
    item.field("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

pub(super) fn mounted_volumes<'a>(containers: impl Iterator<Item = &'a Value>) -> Vec<String> {
    containers
        .filter_map(|c| c.field("volumeMounts").and_then(Value::as_array))
        .flatten()
        .map(|mount| name_of(mount).to_string())
        .collect()
}

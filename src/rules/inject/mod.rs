//! Inject a profile's proxy into a workload's pod template.
//!
//! The containers are built first, as a webhook would build them, then
//! placed into the pod with JSON Patch operations:
//! 1. values for this workload (profile ← objects ← pod annotations ← flags);
//! 2. [`Sidecar::build`]: the rendered proxy and init containers, native or classic;
//! 3. [`Sidecar::fit_resources`]: API defaulting, the namespace's LimitRange
//!    defaults, then what its quotas require;
//! 4. [`Sidecar::secure`]: PodSecurityPolicy defaulting or the app's settings,
//!    then the namespace's Pod Security level;
//! 5. [`Sidecar::add_shutdown_wait`]: a preStop wait and a grace period it fits in;
//! 6. [`place`]: the containers, volumes, marker annotations and labels, and the record.
//!
//! Here: the run of those stages for one workload. `decide.rs`: what the
//! rules read of the pod and whether the webhook would inject it;
//! `sidecar.rs`: the stages; `place.rs`: placing, and the record;
//! `../mesh_template.rs`: a sidecar the cluster's own templates render.

use serde_json::{Map, Value, json};

use super::plan::{Outcome, Patcher, Plan, PlanError};
use super::record::{RECORD_ANNOTATION, Record};
use super::uninject::{injection_found, record_present, remove_injection};
use super::{
    Env, PodPaths, SecurityMode, linkerd_chart, mesh_template, resources, security, shutdown,
    template_problem,
};
use crate::admission::pod_security::{self, Level};
use crate::admission::{limit_ranger, psp, quota};
use crate::json::Field;
use crate::mesh::{Injected, Mesh, istio};
use crate::note::Note;
use crate::profile::{self, NativeChoice, Position, Profile, Rendered, WorkloadVars};
use crate::reuse::spare;
use crate::workload::WorkloadType;
use crate::yaml;

mod decide;
mod place;
mod sidecar;

pub(crate) use decide::namespace_out_of_scope;
use decide::*;
use place::*;
pub(crate) use place::{apply_edits, ensure};
use sidecar::*;

/// A note of the run as it holds for this workload: the one on what came
/// from the embedded profile says nothing of the proxy version to a
/// workload whose annotation sets another.
fn run_note_for(note: &Note, values: &Map<String, Value>, env: &Env<'_>) -> Option<Note> {
    if values.get("proxyVersion") == env.profile.values.get("proxyVersion") {
        return Some(note.clone());
    }
    let text = crate::profile::without_version(&note.text)?;
    Some(Note {
        text,
        ..note.clone()
    })
}

/// Set the value of `container`'s env var `name`, where it has one.
fn set_env_value(container: &mut Value, name: &str, value: String) {
    let entries = container
        .get_mut("env")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten();
    for entry in entries.filter(|e| e.field("name").and_then(Value::as_str) == Some(name)) {
        if let Some(Value::Object(entry)) = Some(entry) {
            entry.insert("value".into(), Value::String(value.clone()));
        }
    }
}

/// Annotation naming the container `kubectl logs/exec` use by default.
const DEFAULT_CONTAINER: &str = "kubectl.kubernetes.io/default-container";

/// Plan the injection of the profile into `object`, a workload of `kind`.
///
/// A previous injection is removed first, so injecting again gives the same
/// object and never a second proxy.
pub fn inject(object: Value, kind: &WorkloadType, env: &Env<'_>) -> Result<Plan, PlanError> {
    if let Some(reason) = template_problem(&object, kind) {
        return Ok(Plan::unchanged(object, Outcome::Skipped(reason)));
    }
    let paths = PodPaths::of(kind);
    let mut patcher = Patcher::new(object, env.keep_patches);
    // A previous injection is taken out first; the object as it came is then
    // kept aside (to leave it as it was, or to see that injecting changed
    // nothing). Otherwise the patcher's value is the object until `place`.
    let before = injection_found(&patcher, &paths, env.profile).then(|| patcher.value.clone());
    if before.is_some() {
        remove_injection(&mut patcher, kind, env.profile)?;
    }
    let unchanged = |patcher: Patcher, before: Option<Value>, reason: String| {
        Ok(Plan::unchanged(
            before.unwrap_or(patcher.value),
            Outcome::Skipped(reason),
        ))
    };
    if let Some(reason) = skip_reason(&patcher, &paths, env) {
        return unchanged(patcher, before, reason);
    }
    if let Some(injector) = &env.profile.cluster_injector {
        // The cluster's injection policy and selectors.
        let metadata = patcher.get(&paths.metadata);
        let map = |key: &str| {
            metadata
                .and_then(|m| m.field(key))
                .and_then(Value::as_object)
        };
        if let Some(reason) = injector.declines(map("labels"), map("annotations")) {
            return unchanged(patcher, before, reason);
        }
    }
    // Annotations the mesh's injector refuses: its webhook denies the pod.
    let refusal = {
        let annotations = patcher
            .get(&paths.metadata)
            .and_then(|m| m.field("annotations"))
            .and_then(Value::as_object);
        env.profile.mesh.refuses_annotations(annotations)
    };
    if let Some(why) = refusal {
        return Ok(Plan::unchanged(
            before.unwrap_or(patcher.value),
            Outcome::Denied(why),
        ));
    }
    if before.is_none() && record_present(&patcher, &paths) {
        // Overwriting it would lose it: uninject could not give it back.
        return unchanged(
            patcher,
            before,
            format!(
                "the pod has a {RECORD_ANNOTATION} annotation that records no injection of this profile (edited by hand?); remove it to inject"
            ),
        );
    }
    let pod = Pod::read(&patcher, &paths, kind, env);
    let mut unreadable = Vec::new();
    let inherited =
        inherited_annotations(pod.annotations, &pod.vars.namespace, env, &mut unreadable);
    let object_value = |source: &profile::ValueFromObject, namespace: &str| {
        env.cluster.source_value(source, namespace)
    };
    // Without any object the profile reads, there is nothing to look for.
    let holds_objects = env
        .profile
        .values_from_objects
        .iter()
        .any(|source| env.cluster.holds(&source.kind, &source.name));
    let named_port = |name: &str| named_container_port(pod.spec, name);
    // On OpenShift, Istio runs the proxy as the project's own user and group
    // (a flag naming them still wins).
    let mut flags = std::borrow::Cow::Borrowed(env.flags);
    let mut openshift = false;
    if env.profile.mesh == Mesh::Istio {
        let namespace = env.cluster.namespace_annotations(&pod.vars.namespace);
        let (uid, gid) = istio::openshift_proxy_ids(namespace);
        openshift = uid.is_some() || gid.is_some();
        for (name, id) in [("proxyUID", uid), ("proxyGID", gid)] {
            if let Some(id) = id.filter(|_| !env.flags.contains_key(name)) {
                flags.to_mut().insert(name.to_string(), Value::from(id));
            }
        }
    }
    let filled_with = |annotations: Option<&Map<String, Value>>| {
        env.prepared.for_workload(
            env.profile,
            annotations,
            &flags,
            holds_objects.then_some(&object_value as &profile::ObjectValue<'_>),
            &named_port,
        )
    };
    let annotations = inherited.as_ref().or(pod.annotations);
    let (mut filled, mut ignored) = match filled_with(annotations) {
        Ok(filled) => filled,
        Err(reason) => return unchanged(patcher, before, reason),
    };
    // Settings given on the command line, where the mesh's controllers read them.
    let recorded = if env.flags.is_empty() {
        Map::new()
    } else {
        env.profile.recorded_flags(env.flags)
    };
    // What the mesh's webhook writes on the pod besides (the namespace's
    // settings it inherited, the opaque ports the pod exposes) it writes
    // before rendering: a setting among them is in force for the proxy.
    let has = |key: &str| {
        pod.annotations.is_some_and(|a| a.contains_key(key)) || recorded.contains_key(key)
    };
    let webhook =
        env.profile
            .mesh
            .webhook_annotations(pod.spec, &has, inherited.as_ref(), filled.values());
    let is_setting = |key: &String| env.profile.overrides.iter().any(|o| o.annotation == *key);
    let new_settings: Map<String, Value> = webhook
        .iter()
        .filter(|(key, _)| is_setting(key) && annotations.is_none_or(|a| !a.contains_key(*key)))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    // The annotations the values were read from, when other than the pod's.
    let mut with_webhook = None;
    if !new_settings.is_empty() && env.profile.mesh.renders_after_webhook_annotations() {
        let mut all = annotations.cloned().unwrap_or_default();
        all.extend(new_settings);
        (filled, ignored) = match filled_with(Some(&all)) {
            Ok(filled) => filled,
            Err(reason) => return unchanged(patcher, before, reason),
        };
        with_webhook = Some(all);
    }
    // With the cluster's own templates, theirs are the containers.
    let rendered = match &env.profile.cluster_injector {
        Some(_) => filled.render_settings(&pod.vars, mesh_template::KEPT_OF_THE_EMBEDDED),
        None => filled.render(&pod.vars),
    };
    let mut rendered = match rendered {
        Ok(rendered) => rendered,
        Err(reason) => return unchanged(patcher, before, reason),
    };
    // A release's chart that renders no native sidecar places its proxy
    // as a classic one, whatever asked for a native one.
    let classic_env;
    let mut env = env;
    let mut chart_notes = Vec::new();
    if let Some(chart) = &env.profile.linkerd_chart {
        // A Linkerd release's own chart renders the containers and volumes.
        let settings = with_webhook.as_ref().or(annotations);
        let from_annotations = env
            .profile
            .annotation_values(settings, &mut Vec::new())
            .unwrap_or_default();
        let set = |name: &str| {
            env.flags.contains_key(name) || from_annotations.iter().any(|(n, _)| n == name)
        };
        let namespace = crate::mesh::text_of(filled.values(), "controlPlaneNamespace");
        let input = linkerd_chart::ChartInput {
            chart,
            profile: env.profile,
            values: filled.values(),
            set: &set,
            cluster_values: linkerd_chart::cluster_values(env.cluster, &namespace)
                .map_err(PlanError::Refused)?,
            pod_inbound_ports: &pod.vars.inbound_ports,
            native: native_by_default(&rendered, env),
        };
        let native;
        (rendered, native) = linkerd_chart::render(&input, &rendered)?;
        if input.native && !native {
            chart_notes.push(Note::info(format!(
                "the chart {} renders no native sidecar (its partials.proxy writes no restartPolicy: Always): the proxy is a classic sidecar, as that release's webhook injects it",
                chart.origin
            )));
            classic_env = Env {
                native: Some(NativeChoice::Never),
                ..env.clone()
            };
            env = &classic_env;
        }
    }
    if let Some(injector) = &env.profile.cluster_injector {
        // The cluster's own templates render the sidecar; the profile's
        // rendering keeps what Istio's code (not its template) decides.
        let input = mesh_template::PodInput {
            object: &patcher.value,
            metadata: patcher.get(&paths.metadata),
            spec: pod.spec,
            namespace: &pod.vars.namespace,
            native: native_by_default(&rendered, env),
        };
        rendered = mesh_template::render(injector, &rendered, &input, filled.values())?;
        // A pod whose only container is the proxy (a gateway's), which the
        // template makes a native sidecar, would be left no container: the
        // apiserver rejects that pod.
        let only_proxy = pod
            .spec
            .field("containers")
            .and_then(Value::as_array)
            .is_some_and(|c| c.iter().all(|c| name_of(c) == istio::PROXY));
        if only_proxy && rendered.sidecar.native == NativeChoice::Always {
            return unchanged(
                patcher,
                before,
                format!(
                    "the pod's only container is {}, which the mesh's template makes a native sidecar: the pod would have no container left, which the apiserver rejects",
                    istio::PROXY
                ),
            );
        }
    }
    // The workload gets a proxy from here on, and one without what the
    // profile requires cannot start: rather than write it broken, the
    // workload is refused with the hint on where the value comes from (the
    // caller names the workload).
    let missing = env.profile.missing_required(filled.values());
    if !missing.is_empty() {
        return Err(PlanError::Refused(missing.join("\n")));
    }
    let notes = unreadable
        .into_iter()
        .chain(ignored)
        .map(Note::warning)
        .chain(chart_notes)
        .chain(
            env.run_notes
                .iter()
                .filter_map(|n| run_note_for(n, filled.values(), env)),
        )
        .collect();

    // In no namespace (one injection for overlays of different
    // namespaces): the mesh's namespace label is written empty, as its CLI
    // writes it for a manifest without one (the profile leaves out a label
    // whose value is empty).
    let label = env.profile.mesh.namespace_label();
    if let Some(label) = label.filter(|_| pod.vars.namespace.is_empty()) {
        let metadata = std::sync::Arc::make_mut(&mut rendered.metadata);
        metadata
            .labels
            .insert(label.to_string(), Value::String(String::new()));
    }
    let mut sidecar = Sidecar::build(&mut rendered, &pod, kind, env, notes);
    if env.profile.mesh == Mesh::Linkerd {
        // Linkerd's webhook adds the pod's own service name and
        // OpenTelemetry attributes to the spans' (its labels and
        // annotations, the namespace's inherited ones among them).
        let labels = patcher
            .get(&paths.metadata)
            .and_then(|m| m.field("labels"))
            .and_then(Value::as_object);
        let attributes = |values: &Map<String, Value>| {
            crate::mesh::linkerd::trace_attributes(values.get("tracingLabels"), labels, annotations)
        };
        // Only a proxy that traces has the entry (most do not): the
        // attributes are made for it alone.
        const TRACE_ATTRIBUTES: &str = "LINKERD2_PROXY_TRACE_EXTRA_ATTRIBUTES";
        let traces = |proxy: &&mut Value| {
            proxy
                .field("env")
                .and_then(Value::as_array)
                .is_some_and(|env| {
                    env.iter()
                        .any(|e| e.field("name").and_then(Value::as_str) == Some(TRACE_ATTRIBUTES))
                })
        };
        if let Some(proxy) = sidecar.proxy.as_mut().filter(traces) {
            set_env_value(proxy, TRACE_ATTRIBUTES, attributes(filled.values()));
        }
    }
    if env.profile.mesh == Mesh::Istio {
        // Istio decides on the pod as its template left it, the template's
        // annotation over the pod's own (the embedded profile's annotations
        // are not the pod's until placed).
        let template_decides = rendered.by_mesh_template
            && rendered
                .metadata
                .annotations
                .contains_key(istio::REWRITE_ANNOTATION);
        let deciding = match template_decides {
            true => Some(&rendered.metadata.annotations),
            false => pod.annotations,
        };
        sidecar.take_over_app_probes(&pod, deciding, filled.values());
        let mut merged = !crate::mesh::text_of(filled.values(), "metricsScrape").is_empty();
        if rendered.by_mesh_template {
            let scrape = crate::mesh::text_of(filled.values(), "prometheusScrape");
            let annotations = &rendered.metadata.annotations;
            let decided = istio::merge_as_template_decides(annotations, merged, &scrape);
            if decided != merged {
                // The agent's annotations (the embedded rendering's) follow.
                let metadata = std::sync::Arc::make_mut(&mut rendered.metadata);
                istio::point_at_agent(&mut metadata.annotations, decided);
                merged = decided;
            }
        }
        match istio::metrics_merge(pod.annotations, merged) {
            Ok(Some(merge)) => sidecar.merge_metrics(merge),
            Ok(None) => {}
            Err(reason) => return unchanged(patcher, before, reason),
        }
    }
    if rendered.by_mesh_template {
        // The template's pod is overlaid on the pod: an annotation of the
        // pod's own that the template writes takes the template's value
        // (Istio's Multus network list, extended), the pod's kept for
        // uninject. The metrics annotations are the metrics merge's.
        for (key, value) in &rendered.metadata.annotations {
            let own = pod
                .annotations
                .and_then(|a| a.get(key))
                .and_then(Value::as_str);
            let (Some(own), Some(value)) = (own, value.as_str()) else {
                continue;
            };
            let changed = sidecar.changed_annotations.iter().any(|(k, _)| k == key);
            if own != value && !changed && !key.starts_with("prometheus.io/") {
                sidecar
                    .changed_annotations
                    .push((key.clone(), value.to_string()));
            }
        }
    }
    if let Some(injector) = &env.profile.cluster_injector {
        sidecar
            .notes
            .extend(injector.unread_settings().into_iter().map(Note::warning));
    }
    if pod.namespace_assumed {
        // What the injection writes of the namespace is only right there.
        sidecar.notes.push(Note::info(format!(
            "no namespace: injected as in namespace {}, where kubectl puts it only when that is \
             the current context's namespace; give the namespace with -n",
            pod.vars.namespace
        )));
    } else if let Some(from) = &pod.namespace_from {
        sidecar.notes.push(Note::info(format!(
            "namespace {} from {from}",
            pod.vars.namespace
        )));
    }
    // A flag over the pod's own annotation rewrites it, as `linkerd inject`
    // writes its flags: the proxy and the annotation then agree (the pod's
    // value is kept for uninject, and a re-injection starts from it).
    for (key, value) in &recorded {
        let own = pod
            .annotations
            .and_then(|a| a.get(key))
            .and_then(Value::as_str);
        let (Some(own), Some(new)) = (own, value.as_str()) else {
            continue;
        };
        if own != new && !sidecar.changed_annotations.iter().any(|(k, _)| k == key) {
            sidecar
                .changed_annotations
                .push((key.clone(), new.to_string()));
            // Said whatever the verbosity: the file's own setting changes.
            sidecar.notes.push(
                Note::info(format!(
                    "{}/{}: its annotation {key}: {own:?} is rewritten {new:?}, as --set gives it",
                    pod.vars.kind, pod.vars.name
                ))
                .about_the_run(),
            );
        }
    }
    sidecar.annotations = recorded;
    // The mesh's own template writes these itself.
    if !rendered.by_mesh_template {
        for (key, value) in webhook {
            // Istio's template writes its CNI annotations over the pod's own
            // (the excluded inbound ports with the status port, the Multus
            // networks with Istio's); the pod's own is kept for uninject.
            let own = pod
                .annotations
                .and_then(|a| a.get(&key))
                .and_then(Value::as_str);
            if let (Some(own), Some(new)) = (own, value.as_str()) {
                let written = env.profile.mesh == Mesh::Istio
                    && !istio::DEFAULT_CONTAINER_KEYS.contains(&key.as_str());
                if written && own != new {
                    sidecar
                        .changed_annotations
                        .push((key.clone(), new.to_string()));
                }
            }
            sidecar.annotations.entry(key).or_insert(value);
        }
    }
    // The image pull secrets the injection adds: the mesh's template's, or
    // those of the values (Istio's global.imagePullSecrets).
    let pull_secrets: Vec<String> = match &rendered.pull_secrets {
        Some(secrets) => secrets.clone(),
        None if env.profile.mesh == Mesh::Istio => istio::pull_secrets(filled.values())
            .into_iter()
            .map(str::to_string)
            .collect(),
        None => Vec::new(),
    };
    // The mesh's record of what it injected, where.
    let mut injected = sidecar.injected(&rendered);
    injected.pull_secrets = pull_secrets.iter().map(String::as_str).collect();
    let status = env
        .profile
        .mesh
        .injection_status(&injected, filled.values());
    if let Some((key, value)) = status {
        sidecar
            .annotations
            .insert(key.to_string(), Value::String(value));
    }
    sidecar.fit_resources(&pod, env, &rendered.quota_defaults);
    sidecar.secure(&pod, env);
    let grace = sidecar.add_shutdown_wait(&rendered, &pod, env);
    let hints = std::mem::take(&mut sidecar.hints);
    // What placing needs of the pod; the rest borrows the object being patched.
    let placed_in = PlacedIn {
        app_container: pod
            .app_container_names
            .into_iter()
            .next()
            .filter(|_| env.profile.mesh.names_default_container()),
        name: pod.vars.name,
        volumes_first: env.profile.mesh.puts_its_volumes_first(),
        merges_user_containers: merges_user_containers(env),
        pull_secrets,
        tproxy: crate::mesh::text_of(filled.values(), "interceptionMode") == "TPROXY",
        openshift,
    };
    let notes = place(
        &mut patcher,
        &paths,
        &placed_in,
        &mut rendered,
        sidecar,
        grace,
    )?;

    // Without a previous injection, `place` added the proxy: it changed.
    let reinjected = before.is_some();
    let same = |before: &Value| {
        yaml::value::same_in_order(&patcher.value, before) || patcher.value == *before
    };
    let replaced = match before {
        Some(before) if same(&before) => {
            let mut plan = Plan::unchanged(before, Outcome::AlreadyInjected);
            plan.notes = notes;
            plan.hints = hints;
            return Ok(plan);
        }
        Some(before) => Some(super::stale::summary(&before, &patcher.value)),
        None => None,
    };
    Ok(Plan {
        hints,
        reinjected,
        replaced,
        ..Plan::changed(Outcome::Injected, patcher, notes)
    })
}

/// Keep the containers of the profile's that `object` (a workload of `kind`)
/// has, and its volumes, as spares for the next workload's (see [`spare`]).
/// Called once the object is written and no longer needed.
pub fn keep_injected(object: &mut Value, kind: &WorkloadType, profile: &Profile) {
    let names: Vec<&str> = profile.container_names().collect();
    let spec = kind
        .template_path()
        .try_fold(&mut *object, |at, token| at.field_mut(token))
        .and_then(|template| template.field_mut("spec"));
    let Some(spec) = spec else {
        return;
    };
    if let Some(volumes @ Value::Array(_)) = spec.field_mut("volumes") {
        spare::keep(std::mem::take(volumes));
    }
    for list in ["initContainers", "containers"] {
        let Some(Value::Array(items)) = spec.field_mut(list) else {
            continue;
        };
        for item in items {
            let ours = item
                .field("name")
                .and_then(Value::as_str)
                .is_some_and(|name| names.contains(&name));
            if ours {
                spare::keep(std::mem::take(item));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{ClusterContext, KubeVersion};
    use crate::profile::Profile;
    use crate::rules::uninject;
    use crate::workload::WorkloadTypes;

    fn deployment() -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "web", "ports": [{"containerPort": 8080}]}]}}}
        })
    }

    struct Fixture {
        prepared: crate::profile::Prepared,
        profile: Profile,
        flags: Map<String, Value>,
        cluster: ClusterContext,
        version: KubeVersion,
    }

    impl Fixture {
        fn new() -> Self {
            let profile = Profile::default_profile().expect("profile");
            let trust_roots = [crate::cluster::sample_trust_roots()];
            let cluster =
                crate::pipeline::cluster_context(&[], &[], &trust_roots, &profile, "default")
                    .expect("the sample trust roots");
            Fixture {
                prepared: Default::default(),
                profile,
                flags: Map::new(),
                cluster,
                version: KubeVersion::CURRENT,
            }
        }

        fn env(&self) -> Env<'_> {
            Env {
                keep_patches: true,
                prepared: &self.prepared,
                profile: &self.profile,
                flags: &self.flags,
                native: None,
                version: self.version,
                security: SecurityMode::Auto,
                namespace: "default",
                namespace_assumed: false,
                namespace_from: None,
                cluster: &self.cluster,
                run_notes: &[],
            }
        }

        fn inject(&self, object: &Value) -> Plan {
            let types = WorkloadTypes::with(&[]);
            let kind = types
                .find(
                    object["apiVersion"].as_str().expect("v"),
                    object["kind"].as_str().expect("k"),
                )
                .expect("workload");
            inject(object.clone(), kind, &self.env()).expect("plan")
        }
    }

    fn names(list: &Value) -> Vec<&str> {
        list.as_array()
            .expect("list")
            .iter()
            .map(|c| c["name"].as_str().expect("name"))
            .collect()
    }

    #[test]
    fn injects_native_sidecar_and_marks_the_pod() {
        let fixture = Fixture::new();
        let plan = fixture.inject(&deployment());
        assert_eq!(plan.outcome, Outcome::Injected);
        let pod = &plan.result["spec"]["template"];
        assert_eq!(
            names(&pod["spec"]["initContainers"]),
            ["linkerd-init", "linkerd-proxy"]
        );
        assert_eq!(pod["spec"]["initContainers"][1]["restartPolicy"], "Always");
        assert_eq!(
            pod["metadata"]["labels"]["linkerd.io/proxy-deployment"],
            "web"
        );
        assert_eq!(pod["metadata"]["labels"]["linkerd.io/workload-ns"], "shop");
        let env = pod["spec"]["initContainers"][1]["env"]
            .as_array()
            .expect("env");
        assert!(
            env.iter()
                .any(|e| e["name"] == "LINKERD2_PROXY_INBOUND_PORTS" && e["value"] == "8080")
        );
        assert_eq!(names(&pod["spec"]["containers"]), ["app"]);
        assert!(
            pod["metadata"]["annotations"]
                .get(DEFAULT_CONTAINER)
                .is_none()
        );
        let mut patched = deployment();
        json_patch::patch(&mut patched, &plan.ops).expect("applies");
        assert_eq!(patched, plan.result);
    }

    #[test]
    fn classic_sidecar_before_1_29_first_with_a_wait() {
        let mut fixture = Fixture::new();
        fixture.version = KubeVersion::new(1, 28);
        let plan = fixture.inject(&deployment());
        let pod = &plan.result["spec"]["template"];
        assert_eq!(names(&pod["spec"]["containers"]), ["linkerd-proxy", "app"]);
        assert_eq!(names(&pod["spec"]["initContainers"]), ["linkerd-init"]);
        assert!(pod["spec"]["containers"][0]["lifecycle"]["postStart"].is_object());
        assert!(
            pod["spec"]["containers"][0]
                .field("restartPolicy")
                .is_none()
        );
        // Linkerd's injector never names the default container.
        assert!(
            pod["metadata"]["annotations"]
                .get(DEFAULT_CONTAINER)
                .is_none()
        );
        let back = uninject(
            &plan.result,
            &WorkloadTypes::with(&[])
                .find("apps/v1", "Deployment")
                .cloned()
                .expect("kind"),
            &fixture.profile,
            true,
        )
        .expect("plan");
        assert_eq!(back.result, deployment());
    }

    #[test]
    fn injecting_twice_changes_nothing_and_uninject_restores() {
        let fixture = Fixture::new();
        let first = fixture.inject(&deployment());
        let second = fixture.inject(&first.result);
        assert_eq!(second.outcome, Outcome::AlreadyInjected);
        assert!(second.ops.is_empty());
        let kind = WorkloadTypes::with(&[])
            .find("apps/v1", "Deployment")
            .cloned()
            .expect("kind");
        let back = uninject(&first.result, &kind, &fixture.profile, true).expect("plan");
        assert_eq!(back.outcome, Outcome::Uninjected);
        assert_eq!(back.result, deployment());
    }

    #[test]
    fn skips_with_reasons() {
        let fixture = Fixture::new();
        let mut host = deployment();
        host["spec"]["template"]["spec"]["hostNetwork"] = json!(true);
        let mut disabled = deployment();
        disabled["spec"]["template"]["metadata"]["annotations"] =
            json!({"linkerd.io/inject": "disabled"});
        let mut istio = deployment();
        istio["spec"]["template"]["spec"]["containers"][0]["name"] = json!("istio-proxy");
        for (object, reason) in [
            (host, "hostNetwork is enabled"),
            (disabled, "linkerd.io/inject: disabled"),
            (istio, "third-party proxy"),
        ] {
            let plan = fixture.inject(&object);
            match plan.outcome {
                Outcome::Skipped(r) => assert!(r.contains(reason), "{r}"),
                other => panic!("expected a skip, got {other:?}"),
            }
            assert_eq!(plan.result, object);
        }
    }

    #[test]
    fn wait_before_exit_raises_the_grace_period_and_uninject_restores_it() {
        let fixture = Fixture::new();
        let mut object = deployment();
        // A classic proxy: Linkerd's native one gets no wait.
        object["spec"]["template"]["metadata"]["annotations"] = json!({
            "config.alpha.linkerd.io/proxy-wait-before-exit-seconds": "40",
            "config.linkerd.io/proxy-enable-native-sidecar": "false",
        });
        let plan = fixture.inject(&object);
        let spec = &plan.result["spec"]["template"]["spec"];
        assert_eq!(
            spec["containers"][0]["lifecycle"]["preStop"],
            json!({"sleep": {"seconds": 40}})
        );
        assert_eq!(spec["terminationGracePeriodSeconds"], json!(50));
        assert!(
            plan.notes
                .iter()
                .any(|n| n.text.contains("raised from 30 to 50")),
            "{:?}",
            plan.notes
        );
        let kind = WorkloadTypes::with(&[])
            .find("apps/v1", "Deployment")
            .cloned()
            .expect("kind");
        assert_eq!(
            uninject(&plan.result, &kind, &fixture.profile, true)
                .expect("plan")
                .result,
            object
        );
    }

    #[test]
    fn limit_ranges_and_quotas_fill_the_injected_containers() {
        let mut fixture = Fixture::new();
        fixture.cluster.add(&json!({"kind": "LimitRange", "metadata": {"name": "lr", "namespace": "shop"},
            "spec": {"limits": [{"type": "Container", "max": {"memory": "1Gi"}, "defaultRequest": {"cpu": "50m"}}]}}), "default");
        fixture.cluster.add(
            &json!({"kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "shop"},
            "spec": {"hard": {"limits.cpu": "4"}}}),
            "default",
        );
        let plan = fixture.inject(&deployment());
        let proxy = &plan.result["spec"]["template"]["spec"]["initContainers"][1];
        assert_eq!(
            proxy["resources"],
            json!({"limits": {"memory": "1Gi", "cpu": "1"}, "requests": {"memory": "1Gi", "cpu": "50m"}})
        );
        let init = &plan.result["spec"]["template"]["spec"]["initContainers"][0];
        assert_eq!(init["resources"]["limits"]["memory"], "1Gi");
        // An explicit value from an annotation wins over the LimitRange, and keeps the others.
        let mut annotated = deployment();
        annotated["spec"]["template"]["metadata"]["annotations"] =
            json!({"config.linkerd.io/proxy-memory-limit": "300Mi"});
        let proxy = fixture.inject(&annotated).result["spec"]["template"]["spec"]["initContainers"]
            [1]["resources"]
            .clone();
        assert_eq!(proxy["limits"]["memory"], "300Mi");
        assert_eq!(proxy["requests"]["cpu"], "50m");
    }

    #[test]
    fn restricted_namespaces_get_restricted_containers() {
        let mut fixture = Fixture::new();
        fixture.cluster.add(
            &json!({"kind": "Namespace", "metadata": {"name": "shop",
            "labels": {"pod-security.kubernetes.io/enforce": "restricted"}}}),
            "default",
        );
        let plan = fixture.inject(&deployment());
        let proxy = &plan.result["spec"]["template"]["spec"]["initContainers"][1];
        assert_eq!(
            proxy["securityContext"]["capabilities"]["drop"],
            json!(["ALL"])
        );
        assert!(
            plan.hints
                .iter()
                .any(|n| n.contains("linkerd-init") && n.contains("CNI")),
            "{:?}",
            plan.hints
        );
        fixture.flags.insert("cni".into(), json!(true));
        let cni = fixture.inject(&deployment());
        assert_eq!(
            names(&cni.result["spec"]["template"]["spec"]["initContainers"]),
            ["linkerd-network-validator", "linkerd-proxy"]
        );
        assert!(cni.hints.is_empty(), "{:?}", cni.hints);
        let volumes = names(&cni.result["spec"]["template"]["spec"]["volumes"]);
        assert!(
            !volumes.contains(&"linkerd-proxy-init-xtables-lock"),
            "{volumes:?}"
        );
    }
}

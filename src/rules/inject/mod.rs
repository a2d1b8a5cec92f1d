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
    Caches, Env, PodPaths, SecurityMode, linkerd_chart, mesh_template, resources, security,
    shutdown, template_problem,
};
use crate::admission::pod_security::{self, Level};
use crate::admission::{limit_ranger, psp, quota};
use crate::json::Field;
use crate::mesh::{Injected, Mesh, istio};
use crate::note::Note;
use crate::profile::{self, NativeChoice, Position, Profile, Rendered, WorkloadVars};
use crate::reuse::spare::Spares;
use crate::workload::WorkloadType;
use crate::yaml;

mod annotations;
mod decide;
mod place;
mod sidecar;

use annotations::namespace_note;
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

/// Annotation naming the container `kubectl logs/exec` use by default.
const DEFAULT_CONTAINER: &str = "kubectl.kubernetes.io/default-container";

/// Why the mesh's webhook would leave the pod as it is (skipped), or deny
/// it, once a previous injection is out (`reinjecting`: there was one).
fn declined(
    patcher: &Patcher,
    paths: &PodPaths,
    env: &Env<'_>,
    reinjecting: bool,
) -> Option<Outcome> {
    if let Some(reason) = skip_reason(patcher, paths, env) {
        return Some(Outcome::Skipped(reason));
    }
    let metadata = patcher.get(&paths.metadata);
    let map = |key: &str| {
        metadata
            .and_then(|m| m.field(key))
            .and_then(Value::as_object)
    };
    if let Some(injector) = &env.profile.cluster_injector {
        // The cluster's injection policy and selectors.
        if let Some(reason) = injector.declines(map("labels"), map("annotations")) {
            return Some(Outcome::Skipped(reason));
        }
    }
    // Annotations the mesh's injector refuses: its webhook denies the pod.
    if let Some(why) = env.profile.mesh.refuses_annotations(map("annotations")) {
        return Some(Outcome::Denied(why));
    }
    if !reinjecting && record_present(patcher, paths) {
        // Overwriting it would lose it: uninject could not give it back.
        return Some(Outcome::Skipped(format!(
            "the pod has a {RECORD_ANNOTATION} annotation that records no injection of this profile (edited by hand?); remove it to inject"
        )));
    }
    None
}

/// Plan the injection of the profile into `object`, a workload of `kind`,
/// with what the calling worker keeps from workload to workload (`caches`).
///
/// A previous injection is removed first, so injecting again gives the same
/// object and never a second proxy.
pub fn inject(
    object: Value,
    kind: &WorkloadType,
    env: &Env<'_>,
    caches: &mut Caches,
) -> Result<Plan, PlanError> {
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
    if let Some(outcome) = declined(&patcher, &paths, env, before.is_some()) {
        return Ok(Plan::unchanged(before.unwrap_or(patcher.value), outcome));
    }
    let pod = Pod::read(&patcher, &paths, kind, env);
    let values = match WorkloadValues::of(&pod, env) {
        Ok(values) => values,
        Err(reason) => return unchanged(patcher, before, reason),
    };
    let WorkloadValues {
        filled,
        ignored,
        unreadable,
        recorded,
        webhook,
        inherited,
        with_webhook,
        openshift,
    } = values;
    let annotations = inherited.as_ref().or(pod.annotations);
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
        let note;
        (rendered, note) = render_by_chart(chart, env, settings, filled.values(), &pod, rendered)?;
        if let Some(note) = note {
            chart_notes.push(note);
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
        rendered = mesh_template::render(injector, &rendered, &input, filled.values(), caches)?;
        if let Some(reason) = no_container_left(pod.spec, &rendered) {
            return unchanged(patcher, before, reason);
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
    let warnings = unreadable.into_iter().chain(ignored);
    let notes = workload_notes(warnings, chart_notes, filled.values(), env);

    label_in_no_namespace(&mut rendered, env.profile.mesh, &pod.vars.namespace);
    let mut sidecar = Sidecar::build(&mut rendered, &pod, kind, env, notes, &mut caches.spares);
    match env.profile.mesh {
        Mesh::Linkerd => {
            let labels = patcher
                .get(&paths.metadata)
                .and_then(|m| m.field("labels"))
                .and_then(Value::as_object);
            sidecar.add_trace_attributes(filled.values(), labels, annotations);
        }
        Mesh::Istio => {
            let decided =
                sidecar.take_over_probes_and_metrics(&mut rendered, &pod, filled.values());
            if let Err(reason) = decided {
                return unchanged(patcher, before, reason);
            }
        }
        Mesh::None => {}
    }
    if let Some(injector) = &env.profile.cluster_injector {
        sidecar
            .notes
            .extend(injector.unread_settings().into_iter().map(Note::warning));
    }
    sidecar.notes.extend(namespace_note(&pod));
    sidecar.write_annotations(&rendered, &pod, recorded, webhook, env.profile.mesh);
    let pull_secrets = pull_secrets_added(&rendered, env.profile.mesh, filled.values());
    sidecar.add_injection_status(&rendered, &pull_secrets, env.profile.mesh, filled.values());
    sidecar.fit_resources(&pod, env, &rendered.quota_defaults);
    sidecar.secure(&pod, env);
    let grace = sidecar.add_shutdown_wait(&rendered, &pod, env);
    let hints = std::mem::take(&mut sidecar.hints);
    let tproxy = crate::mesh::text_of(filled.values(), "interceptionMode") == "TPROXY";
    let placed_in = PlacedIn::of(pod, env, pull_secrets, tproxy, openshift);
    let notes = place(
        &mut patcher,
        &paths,
        &placed_in,
        &mut rendered,
        sidecar,
        grace,
    )?;

    Ok(plan_injected(before, patcher, notes, hints))
}

/// What the user hears with an injected workload: `warnings` on its
/// values, the notes of the chart that rendered it, and the run's notes
/// that concern its `values`.
fn workload_notes(
    warnings: impl Iterator<Item = String>,
    chart_notes: Vec<Note>,
    values: &Map<String, Value>,
    env: &Env<'_>,
) -> Vec<Note> {
    let run_notes = env.run_notes.iter();
    warnings
        .map(Note::warning)
        .chain(chart_notes)
        .chain(run_notes.filter_map(|n| run_note_for(n, values, env)))
        .collect()
}

/// A workload's values, filled from the profile, the cluster's objects, the
/// pod's annotations (with those it inherits from its namespace) and the
/// flags; with what the mesh's webhook writes on the pod besides.
struct WorkloadValues {
    filled: std::sync::Arc<profile::Filled>,
    /// Annotations and values the filling ignored, each said why.
    ignored: Vec<String>,
    /// Namespace annotations that could not be read.
    unreadable: Vec<String>,
    /// Settings given on the command line, where the mesh's controllers read them.
    recorded: Map<String, Value>,
    /// What the mesh's webhook writes on the pod besides (the namespace's
    /// settings it inherited, the opaque ports the pod exposes).
    webhook: Map<String, Value>,
    /// The pod's annotations with those it inherits from its namespace,
    /// when it inherits any.
    inherited: Option<Map<String, Value>>,
    /// The annotations the values were read from, when other than the pod's.
    with_webhook: Option<Map<String, Value>>,
    /// The namespace is an OpenShift project's (see [`flags_on_openshift`]).
    openshift: bool,
}

impl WorkloadValues {
    fn of(pod: &Pod, env: &Env<'_>) -> Result<Self, String> {
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
        let (flags, openshift) = flags_on_openshift(env, &pod.vars.namespace);
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
        let (mut filled, mut ignored) = filled_with(annotations)?;
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
        let webhook = env.profile.mesh.webhook_annotations(
            pod.spec,
            &has,
            inherited.as_ref(),
            filled.values(),
        );
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
            (filled, ignored) = filled_with(Some(&all))?;
            with_webhook = Some(all);
        }
        Ok(WorkloadValues {
            filled,
            ignored,
            unreadable,
            recorded,
            webhook,
            inherited,
            with_webhook,
            openshift,
        })
    }
}

/// The plan of an injection placed by `patcher`: `before` is the object as
/// it came when it held an injection already, which a re-injection that
/// changes nothing leaves as it was. Without one, placing added the proxy.
fn plan_injected(
    before: Option<Value>,
    patcher: Patcher,
    notes: Vec<Note>,
    hints: Vec<String>,
) -> Plan {
    let reinjected = before.is_some();
    let same = |before: &Value| {
        yaml::value::same_in_order(&patcher.value, before) || patcher.value == *before
    };
    let replaced = match before {
        Some(before) if same(&before) => {
            let mut plan = Plan::unchanged(before, Outcome::AlreadyInjected);
            plan.notes = notes;
            plan.hints = hints;
            return plan;
        }
        Some(before) => Some(super::stale::summary(&before, &patcher.value)),
        None => None,
    };
    Plan {
        hints,
        reinjected,
        replaced,
        ..Plan::changed(Outcome::Injected, patcher, notes)
    }
}

/// On OpenShift, Istio runs the proxy as the project's own user and group
/// (a flag naming them still wins): the flags with those, and whether the
/// namespace is an OpenShift project's.
fn flags_on_openshift<'e>(
    env: &Env<'e>,
    namespace: &str,
) -> (std::borrow::Cow<'e, Map<String, Value>>, bool) {
    let mut flags = std::borrow::Cow::Borrowed(env.flags);
    if env.profile.mesh != Mesh::Istio {
        return (flags, false);
    }
    let (uid, gid) = istio::openshift_proxy_ids(env.cluster.namespace_annotations(namespace));
    let openshift = uid.is_some() || gid.is_some();
    for (name, id) in [("proxyUID", uid), ("proxyGID", gid)] {
        if let Some(id) = id.filter(|_| !env.flags.contains_key(name)) {
            flags.to_mut().insert(name.to_string(), Value::from(id));
        }
    }
    (flags, openshift)
}

/// The sidecar as a Linkerd release's own chart renders it from `values`
/// (`settings`: the annotations they were read from), and, when a native
/// sidecar was asked for and the chart renders none, the note that says so:
/// the proxy is then a classic one, as that release's webhook injects it.
fn render_by_chart(
    chart: &crate::mesh::linkerd::chart::LinkerdChart,
    env: &Env<'_>,
    settings: Option<&Map<String, Value>>,
    values: &Map<String, Value>,
    pod: &Pod,
    rendered: Rendered,
) -> Result<(Rendered, Option<Note>), PlanError> {
    let from_annotations = env
        .profile
        .annotation_values(settings, &mut Vec::new())
        .unwrap_or_default();
    let set = |name: &str| {
        env.flags.contains_key(name) || from_annotations.iter().any(|(n, _)| n == name)
    };
    let namespace = crate::mesh::text_of(values, "controlPlaneNamespace");
    let input = linkerd_chart::ChartInput {
        chart,
        profile: env.profile,
        values,
        set: &set,
        cluster_values: linkerd_chart::cluster_values(env.cluster, &namespace)
            .map_err(PlanError::Refused)?,
        pod_inbound_ports: &pod.vars.inbound_ports,
        native: native_by_default(&rendered, env),
    };
    let (rendered, native) = linkerd_chart::render(&input, &rendered)?;
    let note = (input.native && !native).then(|| {
        Note::info(format!(
            "the chart {} renders no native sidecar (its partials.proxy writes no restartPolicy: Always): the proxy is a classic sidecar, as that release's webhook injects it",
            chart.origin
        ))
    });
    Ok((rendered, note))
}

/// Why a pod whose only container is the proxy (a gateway's), which the
/// mesh's template makes a native sidecar, cannot be injected: it would be
/// left no container, which the apiserver rejects.
fn no_container_left(spec: &Value, rendered: &Rendered) -> Option<String> {
    let only_proxy = spec
        .field("containers")
        .and_then(Value::as_array)
        .is_some_and(|c| c.iter().all(|c| name_of(c) == istio::PROXY));
    (only_proxy && rendered.sidecar.native == NativeChoice::Always).then(|| {
        format!(
            "the pod's only container is {}, which the mesh's template makes a native sidecar: the pod would have no container left, which the apiserver rejects",
            istio::PROXY
        )
    })
}

/// In no namespace (one injection for overlays of different namespaces):
/// the mesh's namespace label is written empty, as its CLI writes it for a
/// manifest without one (the profile leaves out a label whose value is
/// empty).
fn label_in_no_namespace(rendered: &mut Rendered, mesh: Mesh, namespace: &str) {
    let label = mesh.namespace_label();
    if let Some(label) = label.filter(|_| namespace.is_empty()) {
        let metadata = std::sync::Arc::make_mut(&mut rendered.metadata);
        metadata
            .labels
            .insert(label.to_string(), Value::String(String::new()));
    }
}

/// The image pull secrets the injection adds: the mesh's template's, or
/// those of the values (Istio's global.imagePullSecrets).
fn pull_secrets_added(rendered: &Rendered, mesh: Mesh, values: &Map<String, Value>) -> Vec<String> {
    match &rendered.pull_secrets {
        Some(secrets) => secrets.clone(),
        None if mesh == Mesh::Istio => istio::pull_secrets(values)
            .into_iter()
            .map(str::to_string)
            .collect(),
        None => Vec::new(),
    }
}

/// Keep the containers of the profile's that `object` (a workload of `kind`)
/// has, and its volumes, in `spares` for the next workload's. Called once
/// the object is written and no longer needed.
pub fn keep_injected(
    object: &mut Value,
    kind: &WorkloadType,
    profile: &Profile,
    spares: &mut Spares,
) {
    let names: Vec<&str> = profile.container_names().collect();
    let spec = kind
        .template_path()
        .try_fold(&mut *object, |at, token| at.field_mut(token))
        .and_then(|template| template.field_mut("spec"));
    let Some(spec) = spec else {
        return;
    };
    if let Some(volumes @ Value::Array(_)) = spec.field_mut("volumes") {
        spares.keep(std::mem::take(volumes));
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
                spares.keep(std::mem::take(item));
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
            inject(object.clone(), kind, &self.env(), &mut Caches::default()).expect("plan")
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

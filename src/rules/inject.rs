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

use serde_json::{Map, Value, json};

use super::plan::{Outcome, Patcher, Plan, PlanError};
use super::record::{RECORD_ANNOTATION, Record};
use super::uninject::{injection_found, record_present, remove_injection};
use super::{
    Env, PodPaths, SecurityMode, mesh_template, resources, security, shutdown, template_problem,
};
use crate::admission::pod_security::{self, Level};
use crate::admission::{limit_ranger, psp, quota};
use crate::json::{Field, spare};
use crate::mesh::{Injected, Mesh, istio};
use crate::profile::{self, NativeChoice, Position, Profile, Rendered, WorkloadVars};
use crate::workload::WorkloadType;
use crate::yaml;

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
    let before = injection_found(&patcher, kind, env.profile).then(|| patcher.value.clone());
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
    if before.is_none() && record_present(&patcher, kind) {
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
    let filled_with = |annotations: Option<&Map<String, Value>>| {
        env.prepared.for_workload(
            env.profile,
            annotations,
            env.flags,
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
    if !new_settings.is_empty() && env.profile.mesh.renders_after_webhook_annotations() {
        let mut with_webhook = annotations.cloned().unwrap_or_default();
        with_webhook.extend(new_settings);
        (filled, ignored) = match filled_with(Some(&with_webhook)) {
            Ok(filled) => filled,
            Err(reason) => return unchanged(patcher, before, reason),
        };
    }
    let mut rendered = match filled.render(&pod.vars) {
        Ok(rendered) => rendered,
        Err(reason) => return unchanged(patcher, before, reason),
    };
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
        rendered = mesh_template::render(injector, &rendered, &input, filled.values())
            .map_err(PlanError::Refused)?;
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
        .map(|w| format!("warning: {w}"))
        .collect();

    let mut sidecar = Sidecar::build(&rendered, &pod, kind, env, notes);
    if env.profile.mesh == Mesh::Istio {
        // Istio decides on the pod as its template left it.
        let mut merged_annotations = pod.annotations.cloned().unwrap_or_default();
        if rendered.by_mesh_template {
            merged_annotations.extend(rendered.metadata.annotations.clone());
        }
        sidecar.take_over_app_probes(&pod, Some(&merged_annotations), filled.values());
        let merged = !crate::mesh::text_of(filled.values(), "metricsScrape").is_empty();
        match istio::metrics_merge(pod.annotations, merged) {
            Ok(Some(merge)) => sidecar.merge_metrics(merge),
            Ok(None) => {}
            Err(reason) => return unchanged(patcher, before, reason),
        }
    }
    if pod.namespace_assumed {
        // What the injection writes of the namespace is only right there.
        sidecar.notes.push(format!(
            "no namespace: injected as in namespace {}, where kubectl puts it only when that is \
             the current context's namespace; give the namespace with -n",
            pod.vars.namespace
        ));
    }
    sidecar.annotations = recorded;
    // The mesh's own template writes these itself.
    if !rendered.by_mesh_template {
        for (key, value) in webhook {
            sidecar.annotations.entry(key).or_insert(value);
        }
    }
    // The mesh's record of what it injected, where.
    let status = env
        .profile
        .mesh
        .injection_status(&sidecar.injected(&rendered), filled.values());
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
        app_container: pod.app_container_names.into_iter().next(),
        name: pod.vars.name,
        volumes_first: env.profile.mesh.puts_its_volumes_first(),
        merges_user_containers: merges_user_containers(env),
        pull_secrets: if env.profile.mesh == Mesh::Istio {
            istio::pull_secrets(filled.values())
                .into_iter()
                .map(str::to_string)
                .collect()
        } else {
            Vec::new()
        },
        tproxy: crate::mesh::text_of(filled.values(), "interceptionMode") == "TPROXY",
    };
    let notes = place(&mut patcher, &paths, &placed_in, &rendered, sidecar, grace)?;

    // Without a previous injection, `place` added the proxy: it changed.
    let reinjected = before.is_some();
    let same = |before: &Value| {
        yaml::value::same_in_order(&patcher.value, before) || patcher.value == *before
    };
    if let Some(before) = before.filter(same) {
        let mut plan = Plan::unchanged(before, Outcome::AlreadyInjected);
        plan.notes = notes;
        plan.hints = hints;
        return Ok(plan);
    }
    Ok(Plan {
        hints,
        reinjected,
        ..Plan::changed(Outcome::Injected, patcher, notes)
    })
}

/// Keep the containers of the profile's that `object` (a workload of `kind`)
/// has as spares for the next workload's (see [`spare`]). Called once the
/// object is written and no longer needed.
pub fn keep_injected(object: &mut Value, kind: &WorkloadType, profile: &Profile) {
    let names: Vec<&str> = profile.container_names().collect();
    let spec = kind
        .template_path()
        .iter()
        .try_fold(&mut *object, |at, token| at.field_mut(token))
        .and_then(|template| template.field_mut("spec"));
    let Some(spec) = spec else {
        return;
    };
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

/// The containers being injected, built stage by stage as a webhook would
/// build them, with what the user should hear about them.
struct Sidecar {
    /// None when the mesh's template gives no proxy (Istio's proxyless gRPC).
    proxy: Option<Value>,
    inits: Vec<Value>,
    /// Containers that go after the pod's own (a debug container).
    appended: Vec<Value>,
    /// The mesh template's entries for the pod's own containers, which the
    /// pod's fields override (see [`RenderedContainers::app_containers`]).
    app_overlays: Vec<Value>,
    native: bool,
    /// Classic and first among the containers.
    first: bool,
    /// Annotations the stages add to the pod (recorded settings, AppArmor profiles).
    annotations: Map<String, Value>,
    notes: Vec<String>,
    /// Why the containers cannot meet the namespace's policies, and the fix.
    hints: Vec<String>,
    /// Edits to the app's containers (relative to the pod's spec): Istio's
    /// probes taken over by its agent.
    app_edits: Vec<istio::Edit>,
    /// Of those, the probes whose port was a name (for the record).
    probe_ports: Vec<String>,
    /// The pod's own annotations the injection changes, each with its new
    /// value: Istio's Prometheus annotations, pointed at its agent.
    changed_annotations: Vec<(String, String)>,
}

impl Sidecar {
    /// The rendered containers, as a native or a classic sidecar.
    fn build(
        rendered: &Rendered,
        pod: &Pod,
        kind: &WorkloadType,
        env: &Env<'_>,
        mut notes: Vec<String>,
    ) -> Self {
        // The mesh's own template placed the proxy itself.
        let choice = if rendered.by_mesh_template {
            rendered.sidecar.native
        } else {
            env.native.unwrap_or(rendered.sidecar.native)
        };
        let native = use_native(choice, env, &mut notes);
        let mut proxy = (!rendered.proxy.is_null()).then(|| spare::copy_of(&rendered.proxy));
        let first = !native && rendered.sidecar.classic_position == Position::First;
        if let Some(proxy) = &mut proxy {
            if native {
                profile::merge(proxy, &rendered.native);
            } else if first {
                profile::merge(proxy, &rendered.classic_first);
            }
        }
        let restart = pod.spec.field("restartPolicy").and_then(Value::as_str);
        if !native && (kind.runs_to_completion() || matches!(restart, Some("Never" | "OnFailure")))
        {
            let fix = if env.version.has_native_sidecars() {
                "native sidecars are off for it (--native-sidecar or the mesh's annotation); turn them on".to_string()
            } else {
                format!(
                    "Kubernetes {} has no native sidecars: target 1.29 or later (--kube-version)",
                    env.version
                )
            };
            notes.push(format!(
                "warning: a classic sidecar keeps running after the {}'s containers finish, so it never completes; {fix}",
                kind.label()
            ));
        }
        Sidecar {
            proxy,
            inits: rendered
                .init_containers
                .iter()
                .map(spare::copy_of)
                .collect(),
            appended: rendered.containers.clone(),
            app_overlays: rendered.app_containers.clone(),
            native,
            first,
            annotations: Map::new(),
            notes,
            hints: Vec::new(),
            app_edits: Vec::new(),
            probe_ports: Vec::new(),
            changed_annotations: Vec::new(),
        }
    }

    /// Istio: the app's probes and lifecycle hooks go through the agent on
    /// the status port, their originals in the proxy's env, unless the
    /// pod's annotation or the values say not to.
    /// Istio: the app's metrics merged with the proxy's; the pod's own
    /// Prometheus settings in the proxy's env, its annotations pointed at the
    /// agent.
    fn merge_metrics(&mut self, merge: istio::MetricsMerge) {
        if let Some(value) = merge.env {
            let entry = json!({"name": istio::PROMETHEUS_ENV, "value": value});
            if let Some(proxy) = &mut self.proxy {
                push_env(proxy, entry);
            }
        }
        self.changed_annotations = merge.annotations;
    }

    fn take_over_app_probes(
        &mut self,
        pod: &Pod,
        annotations: Option<&Map<String, Value>>,
        values: &Map<String, Value>,
    ) {
        let wanted = crate::mesh::text_of(values, "rewriteAppHTTPProbe") != "false";
        if !istio::rewrites_probes(annotations, wanted) {
            return;
        }
        let Ok(status_port) = crate::mesh::text_of(values, "statusPort")
            .trim()
            .parse::<u16>()
        else {
            return;
        };
        let probes = istio::app_probes(pod.spec, status_port);
        if probes.edits.is_empty() {
            return;
        }
        // Without a proxy, no agent takes the probes over.
        let Some(proxy) = &mut self.proxy else {
            return;
        };
        push_env(
            proxy,
            json!({"name": istio::APP_PROBERS, "value": probes.probers}),
        );
        self.app_edits = probes.edits;
        self.probe_ports = probes.named_ports;
    }

    /// The names of what the injection adds, where it adds them: the
    /// proxy among the init containers as a native sidecar; the volumes
    /// the injected containers mount.
    fn injected<'s>(&'s self, rendered: &'s Rendered) -> Injected<'s> {
        let name = |item: &'s Value| item.field("name").and_then(Value::as_str);
        let mut injected = Injected {
            init_containers: self.inits.iter().filter_map(name).collect(),
            ..Injected::default()
        };
        let proxy = self.proxy.as_ref().and_then(name);
        if self.native {
            injected.init_containers.extend(proxy);
        } else {
            injected.containers.extend(proxy);
        }
        injected.containers.extend(
            self.app_overlays
                .iter()
                .chain(&self.appended)
                .filter_map(name),
        );
        let mounted = mounted_volumes(
            self.inits
                .iter()
                .chain(self.proxy.iter())
                .chain(self.appended.iter()),
        );
        injected.volumes = rendered
            .volumes
            .iter()
            .filter_map(name)
            .filter(|v| rendered.by_mesh_template || mounted.iter().any(|m| m == v))
            .collect();
        injected
    }

    fn containers_mut(&mut self) -> impl Iterator<Item = &mut Value> {
        self.inits.iter_mut().chain(self.proxy.iter_mut())
    }

    /// Every container injected, those the mesh adds beside its proxy too.
    fn all_containers_mut(&mut self) -> impl Iterator<Item = &mut Value> {
        self.inits
            .iter_mut()
            .chain(self.proxy.iter_mut())
            .chain(self.appended.iter_mut())
    }

    fn containers(&self) -> impl Iterator<Item = &Value> {
        self.inits.iter().chain(self.proxy.iter())
    }

    /// Resources: the apiserver's defaulting, LimitRanger's defaults from the
    /// namespace's LimitRanges, then what its ResourceQuotas require.
    fn fit_resources(&mut self, pod: &Pod, env: &Env<'_>, quota_defaults: &Map<String, Value>) {
        let namespace = &pod.vars.namespace;
        let limit_ranges = env.cluster.objects("LimitRange", namespace);
        let defaults = limit_ranger::Defaults::combined(&limit_ranges);
        let quotas = env.cluster.objects("ResourceQuota", namespace);
        let required = if quotas.is_empty() {
            Vec::new()
        } else {
            quota::requirements(&quotas, &pod_of(pod.spec))
        };
        let mut notes = Vec::new();
        // LimitRanger defaults every container of the pod.
        for container in self.all_containers_mut() {
            let name = name_of(container);
            let set = resources::fill_defaults(container, &defaults);
            if !set.is_empty() {
                notes.push(format!(
                    "{name}: {} from the LimitRange of namespace {namespace}",
                    set.join(", ")
                ));
            }
            let set = resources::fill_required(container, &required, quota_defaults);
            if !set.is_empty() {
                notes.push(format!(
                    "{name}: {} set because a ResourceQuota of namespace {namespace} requires it",
                    set.join(", ")
                ));
            }
            let fitted = resources::fit_limit_ranges(container, &limit_ranges);
            notes.extend(
                fitted
                    .into_iter()
                    .chain(resources::cap_requests(container))
                    .map(|c| format!("{name}: {c}")),
            );
        }
        self.notes.extend(notes);
    }

    /// Security context: a PodSecurityPolicy's defaulting, or what the app
    /// container got; then what the namespace's Pod Security level demands.
    fn secure(&mut self, pod: &Pod, env: &Env<'_>) {
        let pod_context = pod.spec.field("securityContext");
        let psps = env.cluster.objects("PodSecurityPolicy", "");
        let use_psp = match env.security {
            SecurityMode::Auto => env.version.has_pod_security_policy() && !psps.is_empty(),
            SecurityMode::Psp => !psps.is_empty(),
            SecurityMode::Copy | SecurityMode::Off => false,
        };
        if let Some(psp) = choose_psp(&psps, pod.spec).filter(|_| use_psp) {
            let mut annotations = Map::new();
            let mut dropped = Vec::new();
            for container in self.containers_mut() {
                if !psp::allows_container_seccomp(psp, container) {
                    // The policy allows no such profile: the runtime default it is.
                    if let Some(context) = container
                        .get_mut("securityContext")
                        .and_then(Value::as_object_mut)
                    {
                        context.shift_remove("seccompProfile");
                        dropped.push(name_of(container));
                    }
                }
                psp::mutate_container(container, pod_context, psp);
                if let Some((key, value)) = psp::apparmor_annotation(psp, &name_of(container)) {
                    annotations.insert(key, Value::String(value));
                }
            }
            self.annotations.extend(annotations);
            let name = psp
                .field("metadata")
                .and_then(|m| m.field("name"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            self.notes.push(format!(
                "security context of the injected containers defaulted by PodSecurityPolicy {name}"
            ));
            if !dropped.is_empty() {
                self.notes.push(format!(
                    "{}: seccompProfile left out, PodSecurityPolicy {name} does not allow it",
                    dropped.join(", ")
                ));
            }
            // Capabilities the policy cannot grant (an iptables init
            // container's NET_ADMIN): no defaulting helps, CNI mode does.
            let mut refused = Vec::new();
            for container in self.containers() {
                let alone = json!({"metadata": {}, "spec": {"containers": [container]}});
                let adds_refused = psp::validate_pod(&alone, psp)
                    .iter()
                    .any(|e| e.path.ends_with("capabilities.add"));
                if adds_refused {
                    refused.push(name_of(container));
                }
            }
            for container in refused {
                self.hints.push(format!(
                    "{container} adds capabilities PodSecurityPolicy {name} does not allow: use CNI mode (--set cni=true) so that no iptables init container is needed, or allow them in the policy"
                ));
            }
        } else if env.security != SecurityMode::Off {
            if let Some(app) = pod.spec.field("containers").and_then(|c| c.get(0)) {
                let with_added = env.profile.mesh.copies_added_capabilities();
                for container in self.containers_mut() {
                    security::copy_from_app(container, app, with_added);
                }
            }
        }
        // The strictest Pod Security level the namespace enforces, warns or
        // audits at (Pod Security admission exists from 1.23): the injected
        // containers should draw no verdict of their own.
        let policies =
            pod_security::namespace_policies(env.cluster.namespace_labels(&pod.vars.namespace));
        let with_pod_security = env.version.has_pod_security();
        let level = [policies.enforce, policies.warn, policies.audit]
            .into_iter()
            .flatten()
            .map(|p| p.level)
            .max()
            .filter(|_| with_pod_security);
        let enforced = policies
            .enforce
            .map(|p| p.level)
            .filter(|_| with_pod_security);
        let mut problems = Vec::new();
        for container in self.containers_mut() {
            let restricted = match level {
                Some(Level::Restricted) => security::restrict(container, pod_context),
                _ => None,
            };
            let baseline = || security::baseline_problem(container);
            // A container's fix names the level that rejects it when there
            // is one (the enforced level), else the level that warns.
            let problem = match (enforced, level) {
                (Some(Level::Restricted), _) => restricted,
                (Some(Level::Baseline), _) => baseline().or(restricted),
                (_, Some(Level::Restricted)) => restricted,
                (_, Some(Level::Baseline)) => baseline(),
                _ => None,
            };
            problems.extend(problem);
        }
        self.hints.extend(problems);
        if !env.version.has_seccomp_profile_field() {
            let annotations: Vec<(String, String)> = self
                .containers_mut()
                .filter_map(security::seccomp_field_to_annotation)
                .collect();
            for (key, value) in annotations {
                self.annotations.insert(key, Value::String(value));
            }
        }
    }

    /// A preStop wait on the proxy; returns the grace period the pod then
    /// needs, with the one it had, when it has to be raised.
    fn add_shutdown_wait(
        &mut self,
        rendered: &Rendered,
        pod: &Pod,
        env: &Env<'_>,
    ) -> Option<GraceRaise> {
        let wait = if self.native && !rendered.sidecar.wait_when_native {
            0
        } else {
            rendered.sidecar.wait_before_exit_seconds
        };
        let proxy = self.proxy.as_mut()?;
        if let Err(note) =
            shutdown::add_pre_stop(proxy, wait, &rendered.sidecar.sleep_command, env.version)
        {
            self.notes.push(format!("warning: {note}"));
            return None;
        }
        let current = pod
            .spec
            .field("terminationGracePeriodSeconds")
            .and_then(Value::as_u64);
        let needed = shutdown::grace_needed(wait, current)?;
        self.notes.push(format!(
            "terminationGracePeriodSeconds raised from {} to {needed} so that the {wait}s wait before the proxy exits fits",
            current.unwrap_or(shutdown::DEFAULT_GRACE_SECONDS)
        ));
        Some(GraceRaise { needed, current })
    }
}

/// A grace period inject raises, and what it was.
struct GraceRaise {
    needed: u64,
    current: Option<u64>,
}

/// What [`place`] reads of the pod.
struct PlacedIn {
    /// The first app container, which `kubectl logs/exec` default to.
    app_container: Option<String>,
    name: String,
    /// The mesh's volumes go before the pod's own (Istio), not after.
    volumes_first: bool,
    /// The pod's own containers of the names of the mesh's are merged into
    /// them (Istio).
    merges_user_containers: bool,
    /// Istio's capture by TPROXY.
    tproxy: bool,
    /// The image pull secrets the mesh adds to the pod, before its own.
    pull_secrets: Vec<String>,
}

/// Put the sidecar into the pod: marker annotations and labels, the init
/// containers and the proxy where their mode puts them, the volumes they
/// mount, the grace period, and the record of all of it. Returns the notes.
fn place(
    patcher: &mut Patcher,
    paths: &PodPaths,
    pod: &PlacedIn,
    rendered: &Rendered,
    sidecar: Sidecar,
    grace: Option<GraceRaise>,
) -> Result<Vec<String>, PlanError> {
    let Sidecar {
        proxy,
        inits,
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
            patcher.get(&at).map(name_of)
        })
        .collect();
    record.probe_ports = probe_ports;
    // The pod's own containers of the names of the mesh's: taken out, and
    // merged into the mesh's as its injector merges them.
    let (mut proxy, mut inits) = (proxy, inits);
    let mut overrides = None;
    // The pod's own containers the mesh's template overlays, merged, each
    // back where it was.
    let mut overlaid: Vec<(usize, Value)> = Vec::new();
    if pod.merges_user_containers {
        let proxy_name = proxy.as_ref().map(name_of);
        let mut names: Vec<String> = inits.iter().map(name_of).collect();
        names.extend(proxy_name.clone());
        names.extend(app_overlays.iter().map(name_of));
        let taken = take_containers(patcher, paths, &names)?;
        let (mut in_containers, mut in_inits) = (Vec::new(), Vec::new());
        for (list, index, user) in &taken {
            let name = name_of(user);
            if let Some(proxy) = proxy
                .as_mut()
                .filter(|_| Some(&name) == proxy_name.as_ref())
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
                .push(Record::user_container(list, *index, user));
        }
        let user_proxy = taken
            .iter()
            .find(|(_, _, c)| Some(name_of(c)) == proxy_name);
        if let (Some((_, _, user)), Some(proxy)) = (user_proxy, proxy.as_mut()) {
            if let Some(init) = inits
                .iter_mut()
                .find(|c| matches!(name_of(c).as_str(), "istio-init" | "istio-validation"))
            {
                istio::adjust_capture_user(init, proxy, user, pod.tproxy);
            }
        }
        if !taken.is_empty() {
            overrides = Some(istio::overrides_annotation(&in_containers, &in_inits));
        }
    }
    ensure(patcher, &paths.metadata, "metadata", json!({}), &mut record)?;
    let mut annotations = rendered.metadata.annotations.clone();
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
    let annotations_path = paths.metadata("annotations");
    // The pod's own annotations the mesh changes, each kept with its place
    // and value for uninject to put back.
    if !changed_annotations.is_empty() {
        let own = patcher
            .get(&annotations_path)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        for (key, value) in changed_annotations {
            let index = own.keys().position(|k| *k == key);
            let (Some(index), Some(original)) = (index, own.get(&key)) else {
                continue;
            };
            record
                .user_annotations
                .push(Record::user_annotation(index, &key, original));
            patcher.add(&child_key(&annotations_path, &key), Value::String(value))?;
        }
    }
    record.annotations = set_entries(
        patcher,
        &annotations_path,
        "annotations",
        &annotations,
        &mut record,
    )?;
    record.labels = set_entries(
        patcher,
        &paths.metadata("labels"),
        "labels",
        &rendered.pod_labels(&pod.name),
        &mut record,
    )?;

    let init_path = paths.spec("initContainers");
    let existing_inits = patcher
        .get(&init_path)
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    ensure(
        patcher,
        &init_path,
        "initContainers",
        json!([]),
        &mut record,
    )?;
    // Native: capture setup, then the proxy, then the pod's own init containers.
    // Classic: capture setup after the pod's own (they are not intercepted).
    let init_start = if native { 0 } else { existing_inits };
    let mounted = mounted_volumes(inits.iter().chain(proxy.iter()).chain(appended.iter()));
    let containers_path = paths.spec("containers");
    overlaid.sort_by_key(|(index, _)| *index);
    for (index, container) in overlaid {
        let len = patcher
            .get(&containers_path)
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        record.containers.push(name_of(&container));
        patcher.add(&child(&containers_path, index.min(len)), container)?;
    }
    let proxy_index = inits.len();
    for (offset, container) in inits.into_iter().enumerate() {
        record.init_containers.push(name_of(&container));
        patcher.add(&child(&init_path, init_start + offset), container)?;
    }
    if let Some(proxy) = proxy {
        let proxy_name = name_of(&proxy);
        if native {
            patcher.add(&child(&init_path, proxy_index), proxy)?;
            record.init_containers.push(proxy_name);
        } else {
            let at = if first {
                child(&containers_path, 0)
            } else {
                child_end(&containers_path)
            };
            patcher.add(&at, proxy)?;
            record.containers.push(proxy_name);
        }
    }
    for container in appended {
        record.containers.push(name_of(&container));
        patcher.add(&child_end(&paths.spec("containers")), container)?;
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

    let volumes_path = paths.spec("volumes");
    let volumes: Vec<&Value> = rendered
        .volumes
        .iter()
        .filter(|v| rendered.by_mesh_template || mounted.contains(&name_of(v)))
        .collect();
    if !volumes.is_empty() {
        ensure(patcher, &volumes_path, "volumes", json!([]), &mut record)?;
    }
    let mut next_first = 0;
    for volume in volumes {
        let name = name_of(volume);
        let taken = patcher
            .get(&volumes_path)
            .and_then(Value::as_array)
            .is_some_and(|items| items.iter().any(|v| name_of(v) == name));
        if taken {
            notes.push(format!(
                "warning: the pod already has a volume named {name}; it was kept"
            ));
        } else {
            let at = if pod.volumes_first {
                next_first += 1;
                child(&volumes_path, next_first - 1)
            } else {
                child_end(&volumes_path)
            };
            patcher.add(&at, volume.clone())?;
            record.volumes.push(name);
        }
    }

    let secrets_path = paths.spec("imagePullSecrets");
    let has_secret = |patcher: &Patcher, name: &str| {
        patcher
            .get(&secrets_path)
            .and_then(Value::as_array)
            .is_some_and(|items| items.iter().any(|s| name_of(s) == name))
    };
    let mut next_secret = 0;
    for name in &pod.pull_secrets {
        if has_secret(patcher, name) {
            continue;
        }
        ensure(
            patcher,
            &secrets_path,
            "imagePullSecrets",
            json!([]),
            &mut record,
        )?;
        patcher.add(&child(&secrets_path, next_secret), json!({"name": name}))?;
        next_secret += 1;
        record.pull_secrets.push(name.clone());
    }

    // The pod's fields the mesh's template sets, merged over the pod's own.
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

    let moved = app_edits
        .into_iter()
        .zip(edited)
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
        .collect();
    apply_edits(patcher, paths, moved)?;

    patcher.add(
        &child_key(&annotations_path, RECORD_ANNOTATION),
        Value::String(record.encode()),
    )?;
    Ok(notes)
}

/// Whether the pod's own containers of the names of the mesh's are merged
/// into them: a mesh that does so (Istio), and the profile's
/// `mergeUserProxy` on (off by default: uninject gives such a container
/// back with its fields and values, not its layout, comments and quoting).
fn merges_user_containers(env: &Env<'_>) -> bool {
    env.profile.mesh.merges_user_containers()
        && env
            .flags
            .get("mergeUserProxy")
            .or_else(|| env.profile.values.get("mergeUserProxy"))
            .is_some_and(|v| *v == Value::Bool(true) || v.as_str() == Some("true"))
}

/// Take the containers named `names` out of the pod's init containers and
/// containers: each with its list and the index it had.
fn take_containers(
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
            .filter(|(_, c)| names.contains(&name_of(c)))
            .map(|(i, c)| (i, c.clone()))
            .collect();
        for (index, _) in found.iter().rev() {
            patcher.remove(&child(&path, *index))?;
        }
        taken.extend(found.into_iter().map(|(i, c)| (list, i, c)));
    }
    Ok(taken)
}

/// What the rules read of the pod, after any previous injection was removed.
struct Pod<'a> {
    spec: &'a Value,
    /// The workload names no namespace and none was given: `default` it is.
    namespace_assumed: bool,
    annotations: Option<&'a Map<String, Value>>,
    app_container_names: Vec<String>,
    vars: WorkloadVars,
}

impl<'a> Pod<'a> {
    fn read(patcher: &'a Patcher, paths: &PodPaths, kind: &WorkloadType, env: &Env<'_>) -> Self {
        let spec = patcher.get(&paths.spec).unwrap_or(&Value::Null);
        let metadata = patcher.get(&paths.metadata);
        let annotations = metadata
            .and_then(|m| m.field("annotations"))
            .and_then(Value::as_object);
        let labels = metadata
            .and_then(|m| m.field("labels"))
            .and_then(Value::as_object);
        let label = |key: &str| {
            labels
                .and_then(|l| l.field(key))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        // Names come from the object's own metadata (the template's has none).
        let object_meta = patcher.value.field("metadata");
        let field = |name: &str| {
            object_meta
                .and_then(|m| m.field(name))
                .and_then(Value::as_str)
        };
        let name = field("name")
            .or_else(|| field("generateName"))
            .unwrap_or_default()
            .to_string();
        let containers = spec
            .field("containers")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        // The mesh's proxy written by the pod itself is merged, not an app.
        let proxy_name = env.profile.proxy_name();
        let app_container_names: Vec<String> = containers
            .iter()
            .map(name_of)
            .filter(|n| !(merges_user_containers(env) && Some(n.as_str()) == proxy_name))
            .collect();
        let inbound_ports = inbound_ports(spec);
        let namespace = field("namespace").filter(|ns| !ns.is_empty());
        let in_namespace = namespace.unwrap_or(env.namespace);
        // How the mesh names the workload, where it has a way of its own.
        let identity = env
            .profile
            .mesh
            .identity(&patcher.value, labels, in_namespace)
            .unwrap_or_default();
        let app_name = if env.profile.mesh == Mesh::Istio {
            identity.canonical_name
        } else {
            label("app.kubernetes.io/name")
                .or_else(|| label("app"))
                .unwrap_or_else(|| name.clone())
        };
        let workload_name = if env.profile.mesh == Mesh::Istio {
            identity.workload_name
        } else {
            name.clone()
        };
        let vars = WorkloadVars {
            kind: kind.label(),
            name,
            namespace: in_namespace.to_string(),
            inbound_ports,
            ports: env.profile.mesh.pod_ports(containers),
            app_name,
            app_version: label("app.kubernetes.io/version")
                .or_else(|| label("version"))
                .unwrap_or_else(|| "latest".into()),
            app_containers: app_container_names.join(","),
            owner: identity.owner,
            workload_name,
            service_account: spec
                .field("serviceAccountName")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .unwrap_or("default")
                .to_string(),
        };
        Pod {
            spec,
            namespace_assumed: namespace.is_none() && env.namespace_assumed,
            annotations,
            app_container_names,
            vars,
        }
    }
}

/// Decide whether the proxy runs as a native sidecar on the target version.
/// Whether the proxy runs as a native sidecar by the flags and the values,
/// before the pod's own annotation (which the mesh's template reads itself).
fn native_by_default(rendered: &Rendered, env: &Env<'_>) -> bool {
    use_native(
        env.native.unwrap_or(rendered.sidecar.native),
        env,
        &mut Vec::new(),
    )
}

fn use_native(choice: NativeChoice, env: &Env<'_>, notes: &mut Vec<String>) -> bool {
    match choice {
        NativeChoice::Auto => env.version.has_native_sidecars(),
        NativeChoice::Never => false,
        NativeChoice::Always => {
            if !env.version.has_native_sidecars() {
                let why = if env.version.knows_container_restart_policy() {
                    "1.28 has them only with the SidecarContainers feature gate, off by default"
                } else {
                    "this version has none"
                };
                notes.push(format!(
                    "warning: native sidecars need Kubernetes 1.29 or later ({why}); without them the apiserver drops the proxy's restartPolicy and then rejects the pod, since a plain init container may not have probes (target {})",
                    env.version
                ));
            }
            true
        }
    }
}

/// The PodSecurityPolicy admission would pick for the pod as it stands
/// (by name, one that admits it unchanged first); the first by name when
/// none admits it.
fn choose_psp<'a>(psps: &[&'a Value], spec: &Value) -> Option<&'a Value> {
    if psps.is_empty() {
        return None;
    }
    let chosen = psp::admit(&pod_of(spec), psps).ok().map(|a| a.policy);
    let name = |p: &Value| {
        p.field("metadata")
            .and_then(|m| m.field("name"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    psps.iter()
        .copied()
        .find(|p| chosen.is_some() && name(p) == chosen)
        .or_else(|| psps.iter().copied().min_by_key(|p| name(p)))
}

/// A bare pod with `spec`, for the admission checks that read a whole pod.
/// (Built by cloning: `json!` would serialize `spec` value by value.)
fn pod_of(spec: &Value) -> Value {
    let mut pod = Map::new();
    pod.insert("metadata".into(), Value::Object(Map::new()));
    pod.insert("spec".into(), spec.clone());
    Value::Object(pod)
}

/// The pod's annotations with the mesh's settings its Namespace object
/// carries and the pod does not (`config.linkerd.io/*` on the namespace),
/// as the mesh's webhook reads them; `None` when the namespace adds none.
fn inherited_annotations(
    pod: Option<&Map<String, Value>>,
    namespace: &str,
    env: &Env<'_>,
    warnings: &mut Vec<String>,
) -> Option<Map<String, Value>> {
    if !env.profile.mesh.inherits_namespace_settings() {
        return None;
    }
    let from_namespace = env.cluster.namespace_annotations(namespace)?;
    let rule_of = |key: &str| {
        env.profile
            .overrides
            .iter()
            .find(|o| o.annotation == key && o.inherited)
    };
    let pod_has = |key: &str| pod.is_some_and(|p| p.contains_key(key));
    // The namespace's value where the pod has none; for a merged list, the
    // pod's merged over the namespace's.
    let settings: Vec<(&String, Value)> = from_namespace
        .iter()
        .filter_map(|(key, value)| {
            let rule = rule_of(key)?;
            match (pod_has(key), rule.merge) {
                (false, _) => Some((key, value.clone())),
                (true, Some(merge)) => {
                    let own = pod.and_then(|p| p.get(key))?;
                    let Some(own) = json_list(own) else {
                        // The mesh warns and keeps the layers below.
                        warnings.push(format!(
                            "annotation {key}: {own} is not a JSON list: the namespace's is used, as the mesh does"
                        ));
                        return Some((key, value.clone()));
                    };
                    let merged = merge.apply(&json_list(value)?, &own);
                    Some((key, Value::String(merged.to_string())))
                }
                (true, None) => None,
            }
        })
        .collect();
    if settings.is_empty() {
        return None;
    }
    let mut merged = pod.cloned().unwrap_or_default();
    for (key, value) in settings {
        merged.insert(key.clone(), value);
    }
    Some(merged)
}

/// An annotation's text read as a JSON list.
fn json_list(value: &Value) -> Option<Value> {
    let list: Value = serde_json::from_str(value.as_str()?).ok()?;
    list.is_array().then_some(list)
}

/// Why the mesh's webhook would never see the pod, if it would not: its
/// namespace is one it leaves out (by name, by label, or by the mesh's
/// opt-out annotation on the Namespace object, unless the pod opts in), or
/// the pod is one of the mesh's own components.
fn out_of_the_webhooks_scope(
    patcher: &Patcher,
    pod_labels: Option<&Value>,
    pod_annotations: Option<&Value>,
    env: &Env<'_>,
) -> Option<String> {
    let never = &env.profile.never_inject;
    let mesh = &env.profile.name;
    if let Some(label) = never
        .pod_labels
        .iter()
        .find(|key| pod_labels.and_then(|l| l.field(key)).is_some())
    {
        return Some(format!(
            "the pod has the label {label}: one of {mesh}'s own components, which its webhook never injects"
        ));
    }
    let namespace = patcher
        .value
        .field("metadata")
        .and_then(|m| m.field("namespace"))
        .and_then(Value::as_str)
        .unwrap_or(env.namespace);
    if let Some(reason) = namespace_out_of_scope(namespace, env) {
        return Some(reason);
    }
    // The namespace's opt-out, unless the pod opts in.
    let disable = env.profile.disable_annotation.as_ref()?;
    let namespace_says = env
        .cluster
        .namespace_annotations(namespace)
        .and_then(|a| a.get(&disable.key))
        .and_then(Value::as_str);
    let pod_says = pod_annotations
        .and_then(|a| a.get(&disable.key))
        .and_then(Value::as_str);
    (namespace_says == Some(disable.value.as_str()) && pod_says.is_none()).then(|| {
        format!(
            "namespace {namespace} has the annotation \"{}: {}\"",
            disable.key, disable.value
        )
    })
}

/// Why the mesh's webhook never sees objects of `namespace`, if it does
/// not: a namespace it leaves out by name or by label.
pub(crate) fn namespace_out_of_scope(namespace: &str, env: &Env<'_>) -> Option<String> {
    let never = &env.profile.never_inject;
    let mesh = &env.profile.name;
    let value = |name: &str| {
        name.strip_prefix("values.")
            .and_then(|v| env.flags.get(v).or_else(|| env.profile.values.get(v)))
            .cloned()
    };
    let excluded = env
        .prepared
        .never_namespaces(env.profile, env.flags)
        .iter()
        .any(|name| name == namespace);
    if excluded {
        return Some(format!(
            "namespace {namespace}: {mesh}'s webhook never injects there"
        ));
    }
    let labels = env.cluster.namespace_labels(namespace);
    if let Some((key, wanted)) = never
        .namespace_labels
        .iter()
        .find(|(key, wanted)| labels.and_then(|l| l.get(*key)) == Some(*wanted))
    {
        let wanted = wanted.as_str().unwrap_or_default();
        return Some(format!(
            "namespace {namespace} has the label \"{key}: {wanted}\", which keeps {mesh}'s webhook out"
        ));
    }
    // A namespace that names another revision of the mesh is that
    // revision's webhook's to inject.
    if let Some(key) = env.profile.mesh.revision_label() {
        let ours = value("values.revision")
            .and_then(|v| v.as_str().map(str::to_string))
            .filter(|r| !r.is_empty())
            .unwrap_or_else(|| "default".into());
        let label = |key: &str| labels.and_then(|l| l.get(key)).and_then(Value::as_str);
        if let Some(theirs) = label(key) {
            // The injection label wins, handing the namespace to the
            // default revision.
            let selected_by_name = env
                .profile
                .mesh
                .injection_label()
                .is_some_and(|(k, v)| label(k) == Some(v));
            let owner = if selected_by_name { "default" } else { theirs };
            if owner != ours {
                return Some(format!(
                    "namespace {namespace} has the label \"{key}: {theirs}\": the {owner} revision's webhook injects there, not this profile's ({ours})"
                ));
            }
        }
    }
    None
}

/// Why the pod must be left alone, if it must.
fn skip_reason(patcher: &Patcher, paths: &PodPaths, env: &Env<'_>) -> Option<String> {
    // The pod's spec and metadata are found once; fields are read from them.
    let spec = patcher.get(&paths.spec);
    let metadata = patcher.get(&paths.metadata);
    let in_spec = |field: &str| spec.and_then(|s| s.field(field));
    let in_metadata = |field: &str| metadata.and_then(|m| m.field(field));
    if in_spec("hostNetwork") == Some(&Value::Bool(true)) {
        return Some("hostNetwork is enabled".into());
    }
    let (labels, annotations) = (in_metadata("labels"), in_metadata("annotations"));
    if let Some(reason) = out_of_the_webhooks_scope(patcher, labels, annotations, env) {
        return Some(reason);
    }
    if let Some(disable) = &env.profile.disable_annotation {
        // As an annotation, or as a label (which Istio prefers: with one,
        // its annotation is not read).
        let label_decides = env.profile.mesh.inject_label_wins()
            && in_metadata("labels")
                .and_then(|l| l.field(&disable.key))
                .is_some();
        let fields: &[&str] = if label_decides {
            &["labels"]
        } else {
            &["annotations", "labels"]
        };
        for &field in fields {
            let set = in_metadata(field).and_then(|m| m.field(&disable.key));
            if set.and_then(Value::as_str) == Some(disable.value.as_str()) {
                let kind = if field == "labels" {
                    "label"
                } else {
                    "annotation"
                };
                return Some(format!(
                    "pod has the {kind} \"{}: {}\"",
                    disable.key, disable.value
                ));
            }
        }
    }
    // Another of Istio's templates than its sidecar (a gateway's, proxyless
    // gRPC's) is the cluster's configuration to render: the embedded profile
    // is only the sidecar.
    let templates_known = env.profile.cluster_injector.is_some();
    let template = in_metadata("annotations")
        .and_then(|a| a.field(istio::TEMPLATES))
        .and_then(Value::as_str)
        .filter(|t| t.split(',').any(|name| name.trim() != "sidecar"));
    if let (Mesh::Istio, Some(template), false) = (env.profile.mesh, template, templates_known) {
        return Some(format!(
            "the pod asks for Istio's {template} template (inject.istio.io/templates), which the embedded profile does not reproduce; give the cluster's istio-sidecar-injector and istio ConfigMaps with --context to render it"
        ));
    }
    // A container with the proxy's name that is not an injection (a gateway
    // running the proxy as its app): injecting would give two of that name.
    // Istio merges its own into such a container.
    let ours: Vec<&str> = env.profile.container_names().collect();
    let merges = merges_user_containers(env);
    for list in ["containers", "initContainers"] {
        let items = in_spec(list).and_then(Value::as_array);
        if let Some(name) = items
            .into_iter()
            .flatten()
            .filter_map(|c| c.field("name").and_then(Value::as_str))
            .find(|n| ours.contains(n))
        {
            // The proxy as the pod's only container is a gateway's app:
            // merged into a native sidecar, it would leave the pod no
            // container, which the cluster rejects.
            // (The mesh's own templates place the proxy themselves: decided
            // once they have.)
            let alone = in_spec("containers")
                .and_then(Value::as_array)
                .is_some_and(|c| c.iter().all(|c| name_of(c) == name))
                && !templates_known;
            if !merges || alone {
                return Some(format!(
                    "the pod already has a container named {name} that was not injected (a gateway or a proxy of its own)"
                ));
            }
        }
    }
    let foreign = &env.profile.foreign_sidecars;
    for list in ["containers", "initContainers"] {
        let Some(Value::Array(items)) = in_spec(list) else {
            continue;
        };
        for item in items {
            let name = item
                .field("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let image = item
                .field("image")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if foreign.names.iter().any(|n| n == name)
                || foreign
                    .image_prefixes
                    .iter()
                    .any(|p| image.starts_with(p.as_str()))
            {
                return Some(format!(
                    "a third-party proxy is already present (container {name})"
                ));
            }
        }
    }
    // Null counts as absent, as it does for the apiserver.
    if !matches!(metadata, None | Some(Value::Null | Value::Object(_))) {
        return Some("the pod template's metadata is not a mapping".into());
    }
    for field in ["annotations", "labels"] {
        if !matches!(
            in_metadata(field),
            None | Some(Value::Null | Value::Object(_))
        ) {
            return Some(format!("metadata.{field} of the pod is not a mapping"));
        }
    }
    for field in ["initContainers", "volumes"] {
        if !matches!(in_spec(field), None | Some(Value::Null | Value::Array(_))) {
            return Some(format!("{field} of the pod is not a list"));
        }
    }
    None
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
fn set_entries(
    patcher: &mut Patcher,
    path: &[String],
    field: &str,
    entries: &Map<String, Value>,
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
    for edit in edits {
        match edit {
            istio::Edit::Set(path, value) => {
                let mut at = paths.spec.clone();
                at.extend(path);
                patcher.add(&at, value)?;
            }
            istio::Edit::Remove(path) => {
                let mut at = paths.spec.clone();
                at.extend(path);
                patcher.remove(&at)?;
            }
        }
    }
    Ok(())
}

fn child(path: &[String], index: usize) -> Vec<String> {
    child_key(path, &index.to_string())
}

fn child_end(path: &[String]) -> Vec<String> {
    child_key(path, "-")
}

fn child_key(path: &[String], key: &str) -> Vec<String> {
    super::below(path, key)
}

/// The `name` of a container, volume or mount.
fn name_of(item: &Value) -> String {
    item.field("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// The ports the pod's containers (init containers too) expose, and those
/// their readiness and liveness probes reach over HTTP by number, each once,
/// in text order: the inbound ports Linkerd's injector gives its proxy.
fn inbound_ports(spec: &Value) -> String {
    let mut ports: Vec<String> = Vec::new();
    let containers = ["initContainers", "containers"]
        .iter()
        .filter_map(|list| spec.field(list).and_then(Value::as_array))
        .flatten();
    for container in containers {
        let exposed = container
            .field("ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|p| p.field("containerPort").and_then(Value::as_u64));
        let probed = ["readinessProbe", "livenessProbe"]
            .iter()
            .filter_map(|probe| {
                container
                    .field(probe)
                    .and_then(|p| p.field("httpGet"))
                    .and_then(|h| h.field("port"))
                    .and_then(Value::as_u64)
            });
        ports.extend(exposed.chain(probed).map(|port| port.to_string()));
    }
    ports.sort_unstable();
    ports.dedup();
    ports.join(",")
}

/// The number of the container port named `name` in the pod (init
/// containers first), as the meshes read named ports.
fn named_container_port(spec: &Value, name: &str) -> Option<u16> {
    ["initContainers", "containers"]
        .iter()
        .filter_map(|list| spec.field(list).and_then(Value::as_array))
        .flatten()
        .filter_map(|c| c.field("ports").and_then(Value::as_array))
        .flatten()
        .filter(|p| p.field("name").and_then(Value::as_str) == Some(name))
        .filter_map(|p| p.field("containerPort").and_then(Value::as_u64))
        .filter_map(|port| u16::try_from(port).ok())
        .next_back()
}

/// Add `entry` to the container's env.
fn push_env(container: &mut Value, entry: Value) {
    match container.get_mut("env") {
        Some(Value::Array(env)) => env.push(entry),
        _ => {
            if let Some(fields) = container.as_object_mut() {
                fields.insert("env".into(), Value::Array(vec![entry]));
            }
        }
    }
}

fn mounted_volumes<'a>(containers: impl Iterator<Item = &'a Value>) -> Vec<String> {
    containers
        .filter_map(|c| c.field("volumeMounts").and_then(Value::as_array))
        .flatten()
        .map(name_of)
        .collect()
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
                cluster: &self.cluster,
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
        assert_eq!(pod["metadata"]["annotations"][DEFAULT_CONTAINER], "app");
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
                .any(|n| n.contains("raised from 30 to 50")),
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

//! The containers being injected, built stage by stage as a webhook would
//! build them: rendered as a native or classic sidecar, the app's probes
//! and metrics taken over (Istio), resources fitted, secured, and given
//! their shutdown wait.

use super::*;

/// The containers being injected, built stage by stage as a webhook would
/// build them, with what the user should hear about them.
pub(super) struct Sidecar {
    /// None when the mesh's template gives no proxy (Istio's proxyless gRPC).
    pub(super) proxy: Option<Value>,
    pub(super) inits: Vec<Value>,
    /// Containers that go after the pod's own (a debug container).
    pub(super) appended: Vec<Value>,
    /// The mesh template's entries for the pod's own containers, which the
    /// pod's fields override (see [`RenderedContainers::app_containers`]).
    pub(super) app_overlays: Vec<Value>,
    pub(super) native: bool,
    /// Classic and first among the containers.
    pub(super) first: bool,
    /// Annotations the stages add to the pod (recorded settings, AppArmor profiles).
    pub(super) annotations: Map<String, Value>,
    pub(super) notes: Vec<Note>,
    /// Why the containers cannot meet the namespace's policies, and the fix.
    pub(super) hints: Vec<String>,
    /// Edits to the app's containers (relative to the pod's spec): Istio's
    /// probes taken over by its agent.
    pub(super) app_edits: Vec<istio::Edit>,
    /// Of those, the probes whose port was a name (for the record).
    pub(super) probe_ports: Vec<String>,
    /// The pod's own annotations the injection changes, each with its new
    /// value: Istio's Prometheus annotations, pointed at its agent.
    pub(super) changed_annotations: Vec<(String, String)>,
}

impl Sidecar {
    /// The rendered containers, as a native or a classic sidecar.
    pub(super) fn build(
        rendered: &mut Rendered,
        pod: &Pod,
        kind: &WorkloadType,
        env: &Env<'_>,
        mut notes: Vec<Note>,
        spares: &mut Spares,
    ) -> Self {
        // The mesh's own template placed the proxy itself.
        let choice = if rendered.by_mesh_template {
            rendered.sidecar.native
        } else {
            env.native.unwrap_or(rendered.sidecar.native)
        };
        let native = use_native(choice, env, &mut notes);
        let (mut proxy, inits) = rendered.take_containers(spares);
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
            notes.push(Note::warning(format!(
                "a classic sidecar keeps running after the {}'s containers finish, so it never completes; {fix}",
                kind.label()
            )));
        }
        Sidecar {
            proxy,
            inits,
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
    pub(super) fn merge_metrics(&mut self, merge: istio::MetricsMerge) {
        if let Some(value) = merge.env {
            let entry = json!({"name": istio::PROMETHEUS_ENV, "value": value});
            if let Some(proxy) = &mut self.proxy {
                push_env(proxy, entry);
            }
        }
        self.changed_annotations = merge.annotations;
    }

    /// Istio: its agent takes the app's probes over and merges the app's
    /// metrics with the proxy's, each as the pod (or the template) says. `Err`:
    /// the pod's Prometheus annotations cannot be read, which Istio refuses.
    pub(super) fn take_over_probes_and_metrics(
        &mut self,
        rendered: &mut Rendered,
        pod: &Pod,
        values: &Map<String, Value>,
    ) -> Result<(), String> {
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
        self.take_over_app_probes(pod, deciding, values);
        let mut merged = !crate::mesh::text_of(values, "metricsScrape").is_empty();
        if rendered.by_mesh_template {
            let scrape = crate::mesh::text_of(values, "prometheusScrape");
            let annotations = &rendered.metadata.annotations;
            let decided = istio::merge_as_template_decides(annotations, merged, &scrape);
            if decided != merged {
                // The agent's annotations (the embedded rendering's) follow.
                let metadata = std::sync::Arc::make_mut(&mut rendered.metadata);
                istio::point_at_agent(&mut metadata.annotations, decided);
                merged = decided;
            }
        }
        if let Some(merge) = istio::metrics_merge(pod.annotations, merged)? {
            self.merge_metrics(merge);
        }
        Ok(())
    }

    /// Linkerd: its webhook adds the pod's own service name and
    /// OpenTelemetry attributes to the spans' (from its `labels` and
    /// `annotations`, the namespace's inherited ones among them). Only a
    /// proxy that traces has the entry (most do not): the attributes are
    /// made for it alone.
    pub(super) fn add_trace_attributes(
        &mut self,
        values: &Map<String, Value>,
        labels: Option<&Map<String, Value>>,
        annotations: Option<&Map<String, Value>>,
    ) {
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
        if let Some(proxy) = self.proxy.as_mut().filter(traces) {
            let attributes = crate::mesh::linkerd::trace_attributes(
                values.get("tracingLabels"),
                labels,
                annotations,
            );
            set_env_value(proxy, TRACE_ATTRIBUTES, attributes);
        }
    }

    /// Istio's agent takes the app's probes over, unless
    /// `sidecar.istio.io/rewriteAppHTTPProbers` among `annotations` (or
    /// the values) says not to.
    pub(super) fn take_over_app_probes(
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
    pub(super) fn injected<'s>(&'s self, rendered: &'s Rendered) -> Injected<'s> {
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
        // The mesh's template's volumes are all its; the profile's, those mounted.
        let mounted = match rendered.by_mesh_template {
            true => Vec::new(),
            false => mounted_volumes(
                self.inits
                    .iter()
                    .chain(self.proxy.iter())
                    .chain(self.appended.iter()),
            ),
        };
        injected.volumes = rendered
            .volumes
            .iter()
            .filter_map(name)
            .filter(|v| rendered.by_mesh_template || mounted.iter().any(|m| m == v))
            .collect();
        injected
    }

    pub(super) fn containers_mut(&mut self) -> impl Iterator<Item = &mut Value> {
        self.inits.iter_mut().chain(self.proxy.iter_mut())
    }

    /// Every container injected, those the mesh adds beside its proxy too.
    pub(super) fn all_containers_mut(&mut self) -> impl Iterator<Item = &mut Value> {
        self.inits
            .iter_mut()
            .chain(self.proxy.iter_mut())
            .chain(self.appended.iter_mut())
    }

    pub(super) fn containers(&self) -> impl Iterator<Item = &Value> {
        self.inits.iter().chain(self.proxy.iter())
    }

    /// Resources: the apiserver's defaulting, LimitRanger's defaults from the
    /// namespace's LimitRanges, then what its ResourceQuotas require.
    pub(super) fn fit_resources(
        &mut self,
        pod: &Pod,
        env: &Env<'_>,
        quota_defaults: &Map<String, Value>,
    ) {
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
            let name = name_of(container).to_string();
            let set = resources::fill_defaults(container, &defaults);
            if !set.is_empty() {
                notes.push(Note::info(format!(
                    "{name}: {} from the LimitRange of namespace {namespace}",
                    set.join(", ")
                )));
            }
            let set = resources::fill_required(container, &required, quota_defaults);
            if !set.is_empty() {
                notes.push(Note::info(format!(
                    "{name}: {} set because a ResourceQuota of namespace {namespace} requires it",
                    set.join(", ")
                )));
            }
            let fitted = resources::fit_limit_ranges(container, &limit_ranges);
            notes.extend(
                fitted
                    .into_iter()
                    .chain(resources::cap_requests(container))
                    .map(|c| Note::info(format!("{name}: {c}"))),
            );
        }
        self.notes.extend(notes);
    }

    /// Security context: a PodSecurityPolicy's defaulting, or what the app
    /// container got; then what the namespace's Pod Security level demands.
    pub(super) fn secure(&mut self, pod: &Pod, env: &Env<'_>) {
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
                        dropped.push(name_of(container).to_string());
                    }
                }
                psp::mutate_container(container, pod_context, psp);
                if let Some((key, value)) = psp::apparmor_annotation(psp, name_of(container)) {
                    annotations.insert(key, Value::String(value));
                }
            }
            self.annotations.extend(annotations);
            let name = psp
                .field("metadata")
                .and_then(|m| m.field("name"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            self.notes.push(Note::info(format!(
                "security context of the injected containers defaulted by PodSecurityPolicy {name}"
            )));
            if !dropped.is_empty() {
                self.notes.push(Note::info(format!(
                    "{}: seccompProfile left out, PodSecurityPolicy {name} does not allow it",
                    dropped.join(", ")
                )));
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
                    refused.push(name_of(container).to_string());
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
    pub(super) fn add_shutdown_wait(
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
            self.notes.push(Note::warning(note));
            return None;
        }
        let current = pod
            .spec
            .field("terminationGracePeriodSeconds")
            .and_then(Value::as_u64);
        let needed = shutdown::grace_needed(wait, current)?;
        self.notes.push(Note::info(format!(
            "terminationGracePeriodSeconds raised from {} to {needed} so that the {wait}s wait before the proxy exits fits",
            current.unwrap_or(shutdown::DEFAULT_GRACE_SECONDS)
        )));
        Some(GraceRaise { needed, current })
    }
}

/// A grace period inject raises, and what it was.
pub(super) struct GraceRaise {
    pub(super) needed: u64,
    pub(super) current: Option<u64>,
}

/// Decide whether the proxy runs as a native sidecar on the target version.
/// Whether the proxy runs as a native sidecar by the flags and the values,
/// before the pod's own annotation (which the mesh's template reads itself).
pub(super) fn native_by_default(rendered: &Rendered, env: &Env<'_>) -> bool {
    use_native(
        env.native.unwrap_or(rendered.sidecar.native),
        env,
        &mut Vec::new(),
    )
}

pub(super) fn use_native(choice: NativeChoice, env: &Env<'_>, notes: &mut Vec<Note>) -> bool {
    match choice {
        NativeChoice::Auto => env.profile.mesh.native_sidecars_by_default(env.version),
        NativeChoice::Never => false,
        NativeChoice::Always => {
            if !env.version.has_native_sidecars() {
                let why = if env.version.knows_container_restart_policy() {
                    "1.28 has them only with the SidecarContainers feature gate, off by default"
                } else {
                    "this version has none"
                };
                notes.push(Note::warning(format!(
                    "native sidecars need Kubernetes 1.29 or later ({why}); without them the apiserver drops the proxy's restartPolicy and then rejects the pod, since a plain init container may not have probes (target {})",
                    env.version
                )));
            }
            true
        }
    }
}

/// The PodSecurityPolicy admission would pick for the pod as it stands
/// (by name, one that admits it unchanged first); the first by name when
/// none admits it.
pub(super) fn choose_psp<'a>(psps: &[&'a Value], spec: &Value) -> Option<&'a Value> {
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
pub(super) fn pod_of(spec: &Value) -> Value {
    let mut pod = Map::new();
    pod.insert("metadata".into(), Value::Object(Map::new()));
    pod.insert("spec".into(), spec.clone());
    Value::Object(pod)
}

/// Add `entry` to the container's env.
pub(super) fn push_env(container: &mut Value, entry: Value) {
    match container.get_mut("env") {
        Some(Value::Array(env)) => env.push(entry),
        _ => {
            if let Some(fields) = container.as_object_mut() {
                fields.insert("env".into(), Value::Array(vec![entry]));
            }
        }
    }
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

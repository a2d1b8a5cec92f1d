//! What the rules read of the pod, and whether the mesh's webhook would
//! inject it at all: its scope, the opt-outs, containers it must not meet.

use super::*;

/// What the rules read of the pod, after any previous injection was removed.
pub(super) struct Pod<'a> {
    pub(super) spec: &'a Value,
    /// The workload names no namespace and none was given: `default` it is.
    pub(super) namespace_assumed: bool,
    /// The workload names no namespace: where the one it is injected as in
    /// was given, if it was.
    pub(super) namespace_from: Option<String>,
    pub(super) annotations: Option<&'a Map<String, Value>>,
    pub(super) app_container_names: Vec<String>,
    pub(super) vars: WorkloadVars,
}

impl<'a> Pod<'a> {
    pub(super) fn read(
        patcher: &'a Patcher,
        paths: &PodPaths,
        kind: &WorkloadType,
        env: &Env<'_>,
    ) -> Self {
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
            .filter(|n| !(merges_user_containers(env) && Some(*n) == proxy_name))
            .map(str::to_string)
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
            otel_resource_attributes: otel_resource_attributes(
                env,
                annotations,
                &label,
                in_namespace,
                containers,
            ),
        };
        Pod {
            spec,
            namespace_assumed: namespace.is_none() && env.namespace_assumed,
            namespace_from: env
                .namespace_from
                .filter(|_| namespace.is_none())
                .map(str::to_string),
            annotations,
            app_container_names,
            vars,
        }
    }
}

/// Istio's `OTEL_RESOURCE_ATTRIBUTES` for a pod with `annotations`, labels
/// read by `label`, in `namespace`: empty unless the profile's
/// `otelServiceAttributes` is on (the mesh config's tracing provider
/// enriches spans with OTel's semantic conventions).
fn otel_resource_attributes(
    env: &Env<'_>,
    annotations: Option<&Map<String, Value>>,
    label: &dyn Fn(&str) -> Option<String>,
    namespace: &str,
    containers: &[Value],
) -> String {
    let on = env
        .flags
        .get("otelServiceAttributes")
        .or_else(|| env.profile.values.get("otelServiceAttributes"))
        .is_some_and(|v| *v == Value::Bool(true) || v.as_str() == Some("true"));
    if env.profile.mesh != Mesh::Istio || !on {
        return String::new();
    }
    let annotation = |key: &str| {
        annotations
            .and_then(|a| a.field(key))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    fn text<'v>(container: &'v Value, key: &str) -> &'v str {
        container.field(key).and_then(Value::as_str).unwrap_or("")
    }
    let containers: Vec<(&str, &str)> = containers
        .iter()
        .map(|c| (text(c, "name"), text(c, "image")))
        .collect();
    crate::mesh::istio::otel::resource_attributes(&annotation, label, namespace, &containers)
}

/// The pod's annotations with the mesh's settings its Namespace object
/// carries and the pod does not (`config.linkerd.io/*` on the namespace),
/// as the mesh's webhook reads them; `None` when the namespace adds none.
pub(super) fn inherited_annotations(
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
pub(super) fn json_list(value: &Value) -> Option<Value> {
    let list: Value = serde_json::from_str(value.as_str()?).ok()?;
    list.is_array().then_some(list)
}

/// Why the mesh's webhook would never see the pod, if it would not: its
/// namespace is one it leaves out (by name, by label, or by the mesh's
/// opt-out annotation on the Namespace object, unless the pod opts in), or
/// the pod is one of the mesh's own components.
pub(super) fn out_of_the_webhooks_scope(
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
    if let Some(reason) = another_revisions(namespace, pod_labels.and_then(Value::as_object), env) {
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
    another_revisions(namespace, None, env)
}

/// Why a pod in `namespace` with `pod_labels` is another revision's to
/// inject, if it is: its labels or its namespace's select that revision's
/// webhook (see [`crate::mesh::Mesh::selecting_revision`]).
fn another_revisions(
    namespace: &str,
    pod_labels: Option<&Map<String, Value>>,
    env: &Env<'_>,
) -> Option<String> {
    let labels = env.cluster.namespace_labels(namespace);
    let (theirs, mut why) = env
        .profile
        .mesh
        .selecting_revision(namespace, labels, pod_labels)?;
    let ours = env
        .flags
        .get("revision")
        .or_else(|| env.profile.values.get("revision"))
        .and_then(Value::as_str)
        .filter(|r| !r.is_empty())
        .unwrap_or("default");
    // Tags stand for the revisions they point at (the cluster's webhook
    // configurations say which).
    let tags = crate::mesh::istio::revision::tags(env.cluster);
    let (theirs_resolved, ours) = (
        crate::mesh::istio::revision::resolve(&theirs, &tags),
        crate::mesh::istio::revision::resolve(ours, &tags),
    );
    if theirs_resolved != theirs {
        why = format!("{why} (a tag of revision {theirs_resolved})");
    }
    (theirs_resolved != ours).then(|| {
        format!(
            "{why}: the {theirs_resolved} revision's webhook injects it, not this run's ({ours})"
        )
    })
}

/// Why the pod must be left alone, if it must.
pub(super) fn skip_reason(patcher: &Patcher, paths: &PodPaths, env: &Env<'_>) -> Option<String> {
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

/// The ports the pod's containers (init containers too) expose, and those
/// their readiness and liveness probes reach over HTTP by number, each once,
/// in text order: the inbound ports Linkerd's injector gives its proxy.
pub(super) fn inbound_ports(spec: &Value) -> String {
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
pub(super) fn named_container_port(spec: &Value, name: &str) -> Option<u16> {
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

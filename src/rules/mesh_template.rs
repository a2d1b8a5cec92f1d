//! A workload's sidecar as the mesh's own templates render it, from the
//! cluster's injector configuration (Istio's `istio-sidecar-injector`; see
//! [`crate::mesh::istio::injector`]).
//!
//! The template's pod is split into the parts the embedded profile's
//! rendering has (proxy, init containers, containers after the pod's own,
//! volumes, annotations, labels), so that the same stages place them: the
//! probe takeover, the metrics merge, the pod's own proxy merged, the
//! ordering, the status annotation and the record uninject reads.

use serde_json::{Map, Value};

use super::Caches;
use crate::json::Field;
use crate::mesh::istio::injector::ClusterInjector;
use crate::mesh::istio::overlay;
use crate::mesh::istio::template_data::TemplateInputs;
use crate::mesh::{istio, text_of};
use crate::profile::{NativeChoice, Rendered, RenderedContainers, RenderedMetadata};

/// What the embedded rendering adds to the pod's metadata that Istio's
/// injector adds after its template, in its own code (its metrics merge,
/// its network label): kept from the embedded rendering.
const ANNOTATIONS_OF_THE_INJECTOR: [&str; 3] = [
    "prometheus.io/port",
    "prometheus.io/path",
    "prometheus.io/scrape",
];
const LABELS_OF_THE_INJECTOR: [&str; 1] = ["topology.istio.io/network"];

/// The annotations and labels of the embedded rendering that [`render`]
/// keeps: the embedded profile renders only these for the cluster's templates.
pub(super) const KEPT_OF_THE_EMBEDDED: (&[&str], &[&str]) =
    (&ANNOTATIONS_OF_THE_INJECTOR, &LABELS_OF_THE_INJECTOR);

/// The workload whose pod this is, as the template reads it.
pub(super) struct PodInput<'a> {
    /// The whole object (for the workload's name and kind).
    pub object: &'a Value,
    pub metadata: Option<&'a Value>,
    pub spec: &'a Value,
    pub namespace: &'a str,
    /// Whether the proxy would run as a native sidecar, without the pod's
    /// own say (the template reads the pod's annotation itself).
    pub native: bool,
}

/// The sidecar the cluster's templates render for `pod`, with the workload's
/// `values`; `embedded` is the profile's own rendering, whose placement
/// settings (and what Istio's code adds to the metadata) are kept. An error
/// is the template's (it failed, or the pod asked for a template the
/// configuration lacks). The worker's `caches` keep the renderings shared
/// by alike workloads.
pub(super) fn render(
    injector: &ClusterInjector,
    embedded: &Rendered,
    pod: &PodInput<'_>,
    values: &Map<String, Value>,
    caches: &mut Caches,
) -> Result<Rendered, istio::ConfigError> {
    let empty = Value::Object(Map::new());
    let metadata = pod.metadata.unwrap_or(&empty);
    let annotations = metadata.field("annotations").and_then(Value::as_object);
    let labels = metadata.field("labels").and_then(Value::as_object);
    let identity = istio::identity(pod.object, labels, pod.namespace);
    let proxy_config = Value::Object(istio::proxy_config(
        &text_of(values, "proxyConfig"),
        &text_of(values, "podProxyConfig"),
    ));
    let number = |name: &str| text_of(values, name).trim().parse::<i64>().unwrap_or(1337);
    let inbound = if text_of(values, "inboundTrafficPolicy").eq_ignore_ascii_case("localhost") {
        "localhost"
    } else {
        "passthrough"
    };
    let (revision, compliance) = (
        text_of(values, "revision"),
        text_of(values, "compliancePolicy"),
    );
    let proxy_image = injector.proxy_image(&proxy_config, annotations);
    let proxy_init_image = injector.proxy_init_image(annotations);
    let inputs = TemplateInputs {
        api_version: &identity.api_version,
        kind: &identity.kind,
        name: &identity.name,
        namespace: pod.namespace,
        pod_metadata: metadata,
        pod_spec: pod.spec,
        values: &injector.values,
        mesh: &injector.mesh,
        proxy_config: &proxy_config,
        revision: &revision,
        native_sidecars: pod.native,
        proxy_image: &proxy_image,
        proxy_init_image: &proxy_init_image,
        proxy_uid: number("proxyUID"),
        proxy_gid: number("proxyGID"),
        inbound_traffic_policy_mode: inbound,
        compliance_policy: &compliance,
    };
    let names = injector.templates_for(annotations);
    // Most renderings are this workload's alone (not shared): taken apart
    // without a copy.
    let Caches { spares, renderings } = caches;
    let rendered = injector.render(&inputs, &names, renderings, spares)?;
    let rendered = std::sync::Arc::unwrap_or_clone(rendered);
    Ok(split(rendered, embedded, injector, pod.spec, labels))
}

/// The template's pod as the parts of a rendering.
fn split(
    mut rendered: Value,
    embedded: &Rendered,
    injector: &ClusterInjector,
    spec: &Value,
    pod_labels: Option<&Map<String, Value>>,
) -> Rendered {
    let mut metadata = rendered.field_mut("metadata").map(Value::take);
    let mut strings = |key: &str| -> Map<String, Value> {
        let Some(Value::Object(map)) = metadata.as_mut().and_then(|m| m.field_mut(key)) else {
            return Map::new();
        };
        // Taken as it is (its keys are not hashed again), values made strings.
        for value in map.values_mut() {
            if !value.is_string() {
                *value = Value::String(value.to_string());
            }
        }
        std::mem::take(map)
    };
    let mut annotations = strings("annotations");
    let mut labels = strings("labels");
    for key in ANNOTATIONS_OF_THE_INJECTOR {
        if let Some(value) = embedded.metadata.annotations.get(key) {
            annotations.insert(key.to_string(), value.clone());
        }
    }
    for key in LABELS_OF_THE_INJECTOR {
        if let Some(value) = embedded.metadata.labels.get(key) {
            labels.insert(key.to_string(), value.clone());
        }
    }
    for (key, value) in &injector.injected_annotations {
        let value = value
            .as_str()
            .map_or_else(|| value.to_string(), str::to_string);
        annotations.insert(key.clone(), Value::String(value));
    }

    let mut template_spec = rendered.field_mut("spec").map(Value::take);
    let mut list = |name: &str| -> Vec<Value> {
        match template_spec.as_mut().and_then(|s| s.field_mut(name)) {
            Some(Value::Array(items)) => std::mem::take(items),
            _ => Vec::new(),
        }
    };
    let (init_list, container_list) = (list("initContainers"), list("containers"));
    let (volumes, secrets) = (list("volumes"), list("imagePullSecrets"));
    let own: Vec<String> = spec
        .field("containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(name_of)
        .collect();
    let proxy_name = istio::PROXY;
    let mut proxy = None;
    let mut native = false;
    // An init container of the pod's own name is the pod's override of the
    // mesh's, merged when placed (as a user-written proxy is).
    let mut init_containers = Vec::new();
    for container in init_list {
        if name_of(&container) == proxy_name {
            native = true;
            proxy = Some(container);
        } else {
            init_containers.push(container);
        }
    }
    let (mut containers, mut app_containers) = (Vec::new(), Vec::new());
    for container in container_list {
        let name = name_of(&container);
        if name == proxy_name {
            // A template that adds to a native proxy as if it were a classic
            // one (SPIRE's, over the sidecar template): Istio's overlay leaves
            // a second istio-proxy among the containers, holding only those
            // additions, which the apiserver rejects for the name; they are
            // the proxy's.
            proxy = Some(match proxy {
                Some(native) => overlay::merge(&native, &container),
                None => container,
            });
        } else if own.contains(&name) {
            app_containers.push(container);
        } else {
            containers.push(container);
        }
    }
    if let Some(proxy) = &mut proxy {
        overwrite_cluster_env(proxy, injector.cluster_env(pod_labels));
    }
    let pod_fields: Map<String, Value> = match template_spec {
        Some(Value::Object(fields)) => fields
            .into_iter()
            .filter(|(key, _)| {
                !matches!(
                    key.as_str(),
                    "initContainers" | "containers" | "volumes" | "imagePullSecrets"
                )
            })
            .collect(),
        _ => Map::new(),
    };
    let mut sidecar = embedded.sidecar.clone();
    sidecar.native = if native {
        NativeChoice::Always
    } else {
        NativeChoice::Never
    };
    Rendered::new(
        RenderedMetadata {
            annotations,
            labels,
            owner_label: None,
        },
        RenderedContainers {
            init_containers,
            proxy: proxy.unwrap_or(Value::Null),
            containers,
            native: Map::new(),
            classic_first: Map::new(),
            sidecar,
            quota_defaults: embedded.quota_defaults.clone(),
            volumes,
            app_containers,
            pod_fields,
            pull_secrets: Some(
                secrets
                    .iter()
                    .filter_map(|secret| secret.field("name").and_then(Value::as_str))
                    .map(str::to_string)
                    .collect(),
            ),
            by_mesh_template: true,
            marks: Default::default(),
        },
    )
}

/// Istio's cluster and network env (`ISTIO_META_CLUSTER_ID`,
/// `ISTIO_META_NETWORK`), which its injector sets after the template (its
/// `overwriteClusterInfo`): taken out where the template put them and
/// added at the end, in name order.
fn overwrite_cluster_env(proxy: &mut Value, env: Vec<(&'static str, String)>) {
    if env.is_empty() {
        return;
    }
    let Some(Value::Array(entries)) = proxy.field_mut("env") else {
        return;
    };
    entries.retain(|e| {
        let name = e.field("name").and_then(Value::as_str);
        !env.iter().any(|(n, _)| Some(*n) == name)
    });
    for (name, value) in env {
        entries.push(serde_json::json!({"name": name, "value": value}));
    }
}

fn name_of(container: &Value) -> String {
    container
        .field("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

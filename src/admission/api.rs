//! What the apiserver itself does to a pod spec around admission: API
//! defaulting that the checks read, the silent dropping of fields whose
//! feature is off in the target version, and the validation rules an
//! injected container can break (`pkg/apis/core/v1/defaults.go`,
//! `pkg/api/pod/util.go`, `pkg/apis/core/validation/validation.go`,
//! `pkg/api/pod/warnings.go`).
//!
//! Paths are built from `prefix`, where the pod spec sits in the object
//! being created: `spec` for a Pod, `spec.template.spec` for a Deployment.

use serde_json::{Map, Value, json};

use super::field::{FieldError, go_quote};
use super::resources::is_sidecar;
use crate::cluster::KubeVersion;
use crate::json::Field;

/// The API defaulting of a pod that the checks read: each resource with a
/// limit and no request gets the limit as its request (`SetDefaults_Pod`), in
/// every container and init container; with `hostNetwork`, each port's
/// `hostPort` is its `containerPort`; a volume without a source is an
/// `emptyDir` (`SetDefaults_Volume`).
pub fn default_for_checks(spec: &mut Value) {
    for list in ["containers", "initContainers"] {
        let containers = spec.get_mut(list).and_then(Value::as_array_mut);
        for container in containers.into_iter().flatten() {
            default_container_requests(container);
        }
    }
    default_host_network_ports(spec);
    default_volumes(spec);
}

/// The API defaulting of a workload's pod template that its validation
/// reads: the volumes' (always), and before 1.28 the host ports of a
/// `hostNetwork` pod (`SetDefaults_PodSpec`; from 1.28 only a Pod gets them,
/// the template's behind the `DefaultHostNetworkHostPortsInPodTemplates`
/// gate, off by default).
pub fn default_template(spec: &mut Value, version: KubeVersion) {
    if !version.knows_container_restart_policy() {
        default_host_network_ports(spec);
    }
    default_volumes(spec);
}

/// Whether a port has no `hostPort` under `hostNetwork` (and, in a pod,
/// gets its `containerPort` as one).
pub fn host_ports_default(spec: &Value) -> bool {
    let host_network = spec.field("hostNetwork") == Some(&Value::Bool(true));
    let bare_port = || {
        ["containers", "initContainers"].iter().any(|list| {
            entries(spec, list).into_iter().any(|container| {
                let ports = container.field("ports").and_then(Value::as_array);
                ports.into_iter().flatten().any(|port| {
                    port.is_object()
                        && port.field("hostPort").and_then(Value::as_i64).unwrap_or(0) == 0
                })
            })
        })
    };
    host_network && bare_port()
}

/// `defaultHostNetworkPorts` (`pkg/apis/core/v1/defaults.go`): with
/// `hostNetwork: true`, a port of a container or init container without a
/// `hostPort` (or with 0) gets its `containerPort` as one.
pub fn default_host_network_ports(spec: &mut Value) {
    if spec.field("hostNetwork") != Some(&Value::Bool(true)) {
        return;
    }
    for list in ["containers", "initContainers"] {
        let containers = spec.get_mut(list).and_then(Value::as_array_mut);
        for container in containers.into_iter().flatten() {
            let ports = container.get_mut("ports").and_then(Value::as_array_mut);
            for port in ports.into_iter().flatten().filter_map(Value::as_object_mut) {
                let unset = port.field("hostPort").and_then(Value::as_i64).unwrap_or(0) == 0;
                if let (true, Some(number)) = (unset, port.field("containerPort").cloned()) {
                    port.insert("hostPort".into(), number);
                }
            }
        }
    }
}

/// The sources a volume can name: the fields of `VolumeSource`
/// (`staging/src/k8s.io/api/core/v1/types.go`; `image` from 1.31).
pub const VOLUME_SOURCES: [&str; 30] = [
    "hostPath",
    "emptyDir",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "persistentVolumeClaim",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "downwardAPI",
    "fc",
    "azureFile",
    "configMap",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "csi",
    "ephemeral",
    "image",
];

/// Whether `volume` names a source (a null one is none).
fn has_volume_source(volume: &serde_json::Map<String, Value>) -> bool {
    VOLUME_SOURCES
        .iter()
        .any(|source| volume.get(*source).is_some_and(|s| !s.is_null()))
}

/// `SetDefaults_Volume` (`pkg/apis/core/v1/defaults.go`): a volume whose
/// every source is nil (`volumes: [{name: scratch}]`) becomes
/// `emptyDir: {}`, in a Pod and in a workload's pod template alike.
pub fn default_volumes(spec: &mut Value) {
    let volumes = spec.get_mut("volumes").and_then(Value::as_array_mut);
    for volume in volumes.into_iter().flatten() {
        let Some(volume) = volume.as_object_mut() else {
            continue;
        };
        if !has_volume_source(volume) {
            // A null source is no source: the default takes its place.
            volume.insert("emptyDir".into(), json!({}));
        }
    }
}

/// `SetDefaults_Pod`, the parts a stored pod shows and webhooks' patches may
/// rely on: the pod's restart, DNS and scheduler defaults, an empty security
/// context, the grace period; each container's requests from its limits,
/// image pull policy, termination message, port protocols and probe timings.
pub fn default_pod(spec: &mut Value) {
    let Some(map) = spec.as_object_mut() else {
        return;
    };
    for (field, value) in [
        ("restartPolicy", json!("Always")),
        ("terminationGracePeriodSeconds", json!(30)),
        ("dnsPolicy", json!("ClusterFirst")),
        ("securityContext", json!({})),
        ("schedulerName", json!("default-scheduler")),
    ] {
        map.entry(field).or_insert(value);
    }
    for list in ["initContainers", "containers"] {
        let containers = map.get_mut(list).and_then(Value::as_array_mut);
        for container in containers.into_iter().flatten() {
            default_container_requests(container);
            default_container(container);
        }
    }
    default_host_network_ports(spec);
    default_volumes(spec);
}

fn default_container(container: &mut Value) {
    let Some(map) = container.as_object_mut() else {
        return;
    };
    if !map.contains_key("imagePullPolicy") {
        let image = map
            .field("image")
            .and_then(Value::as_str)
            .unwrap_or_default();
        // The tag is what follows the last ':' after the last '/'; a digest pins the image.
        let tag = image
            .rsplit('/')
            .next()
            .and_then(|last| last.split_once(':'))
            .map(|(_, tag)| tag);
        let always = !image.contains('@') && matches!(tag, None | Some("latest"));
        let policy = if always { "Always" } else { "IfNotPresent" };
        map.insert("imagePullPolicy".into(), json!(policy));
    }
    map.entry("terminationMessagePath")
        .or_insert_with(|| json!("/dev/termination-log"));
    map.entry("terminationMessagePolicy")
        .or_insert_with(|| json!("File"));
    if let Some(ports) = map.get_mut("ports").and_then(Value::as_array_mut) {
        for port in ports.iter_mut().filter_map(Value::as_object_mut) {
            port.entry("protocol").or_insert_with(|| json!("TCP"));
        }
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        let Some(probe) = map.get_mut(probe).and_then(Value::as_object_mut) else {
            continue;
        };
        for (field, value) in [
            ("timeoutSeconds", 1),
            ("periodSeconds", 10),
            ("successThreshold", 1),
            ("failureThreshold", 3),
        ] {
            probe.entry(field).or_insert_with(|| json!(value));
        }
        if let Some(get) = probe.get_mut("httpGet").and_then(Value::as_object_mut) {
            get.entry("path").or_insert_with(|| json!("/"));
            get.entry("scheme").or_insert_with(|| json!("HTTP"));
        }
    }
}

/// The requests from limits of [`default_for_checks`], for one container.
pub fn default_container_requests(container: &mut Value) {
    let Some(resources) = container
        .field_mut("resources")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let Some(limits) = resources.field("limits").and_then(Value::as_object) else {
        return;
    };
    // Only the limits without a request are copied (most containers have none).
    let unrequested = |requests: &Map<String, Value>| -> Vec<(String, Value)> {
        limits
            .iter()
            .filter(|(k, _)| requests.field(k).is_none())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    let missing = match resources.field("requests") {
        None => unrequested(&Map::new()),
        Some(Value::Object(requests)) => unrequested(requests),
        Some(_) => return,
    };
    if missing.is_empty() {
        return;
    }
    let requests = resources
        .entry("requests")
        .or_insert_with(|| Value::Object(Default::default()));
    if let Value::Object(requests) = requests {
        for (k, v) in missing {
            requests.entry(k).or_insert(v);
        }
    }
}

/// Drop what the target version's apiserver does not keep: an init
/// container's `restartPolicy` without native sidecars (unknown before 1.28,
/// behind the SidecarContainers gate, off by default, in 1.28), the `sleep`
/// lifecycle action before 1.30, pod-level `resources` before 1.34,
/// `seccompProfile` fields before 1.19 and `startupProbe` before 1.18.
/// Returns a warning for each field dropped.
pub fn drop_disabled_fields(spec: &mut Value, prefix: &str, version: KubeVersion) -> Vec<String> {
    let mut warnings = Vec::new();
    if !version.has_native_sidecars() {
        let inits = spec.get_mut("initContainers").and_then(Value::as_array_mut);
        for (index, container) in inits.into_iter().flatten().enumerate() {
            let Some(container) = container.as_object_mut() else {
                continue;
            };
            if container.shift_remove("restartPolicy").is_none() {
                continue;
            }
            let name = container
                .field("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let path = format!("{prefix}.initContainers[{index}].restartPolicy");
            warnings.push(if !version.knows_container_restart_policy() {
                format!(
                    "unknown field \"{path}\": Kubernetes {version} has no native sidecars, so init container {name} must exit before the app containers start"
                )
            } else {
                format!(
                    "{path} is dropped by the apiserver (the SidecarContainers feature gate is off by default in 1.28): init container {name} must exit before the app containers start"
                )
            });
        }
    }
    if !version.has_pod_level_resources() {
        // Pod-level resources: alpha (off) in 1.32 and 1.33, unknown before.
        if let Some(spec) = spec.as_object_mut() {
            if spec.shift_remove("resources").is_some() {
                let path = format!("{prefix}.resources");
                warnings.push(if !version.knows_pod_level_resources() {
                    format!("unknown field \"{path}\"")
                } else {
                    format!(
                        "{path} is dropped by the apiserver (the PodLevelResources feature gate is off by default before 1.34)"
                    )
                });
            }
        }
    }
    if !version.has_seccomp_profile_field() {
        // The seccompProfile field arrived in 1.19; before, only annotations set seccomp.
        let mut drop_seccomp = |context: Option<&mut Value>, path: String| {
            let context = context.and_then(Value::as_object_mut);
            if context.is_some_and(|c| c.shift_remove("seccompProfile").is_some()) {
                warnings.push(format!("unknown field \"{path}.seccompProfile\""));
            }
        };
        drop_seccomp(
            spec.get_mut("securityContext"),
            format!("{prefix}.securityContext"),
        );
        for (path, container) in containers_mut(spec, prefix) {
            drop_seccomp(
                container.get_mut("securityContext"),
                format!("{path}.securityContext"),
            );
        }
    }
    if !version.has_startup_probes() {
        // startupProbe: alpha (off) in 1.16 and 1.17, unknown before.
        for (path, container) in containers_mut(spec, prefix) {
            if let Some(container) = container.as_object_mut() {
                if container.shift_remove("startupProbe").is_some() {
                    warnings.push(format!(
                        "{path}.startupProbe is dropped by the apiserver (startup probes arrived in 1.18)"
                    ));
                }
            }
        }
    }
    if !version.has_proc_mount_type() {
        // ProcMountType: alpha, then beta and off, until 1.33; with the gate
        // off the apiserver sets every container's procMount to Default
        // (`dropDisabledProcMountField` in `pkg/api/pod/util.go`).
        for (path, container) in containers_mut(spec, prefix) {
            let Some(context) = container
                .get_mut("securityContext")
                .and_then(Value::as_object_mut)
            else {
                continue;
            };
            let unmasked = context
                .get("procMount")
                .and_then(Value::as_str)
                .is_some_and(|p| p != "Default");
            if unmasked {
                context.insert("procMount".into(), json!("Default"));
                warnings.push(format!(
                    "{path}.securityContext.procMount is reset to Default by the apiserver (the ProcMountType feature gate is off by default before 1.33)"
                ));
            }
        }
    }
    if !version.has_sleep_action() {
        for (path, container) in containers_mut(spec, prefix) {
            let Some(lifecycle) = container
                .get_mut("lifecycle")
                .and_then(Value::as_object_mut)
            else {
                continue;
            };
            for hook in ["preStop", "postStart"] {
                let Some(handler) = lifecycle.get_mut(hook).and_then(Value::as_object_mut) else {
                    continue;
                };
                if handler.shift_remove("sleep").is_none() {
                    continue;
                }
                let field = format!("{path}.lifecycle.{hook}.sleep");
                if !version.knows_sleep_action() {
                    // An unknown field: the handler stays, empty, and fails validation.
                    warnings.push(format!("unknown field \"{field}\""));
                } else {
                    warnings.push(format!(
                        "{field} is dropped by the apiserver (the PodLifecycleSleepAction feature gate is off by default in 1.29)"
                    ));
                    if handler.is_empty() {
                        lifecycle.shift_remove(hook);
                    }
                }
            }
            if version.knows_sleep_action() && lifecycle.is_empty() {
                if let Some(container) = container.as_object_mut() {
                    container.shift_remove("lifecycle");
                }
            }
        }
    }
    warnings
}

fn containers_mut<'a>(spec: &'a mut Value, prefix: &str) -> Vec<(String, &'a mut Value)> {
    let mut all = Vec::new();
    let Some(spec) = spec.as_object_mut() else {
        return all;
    };
    for (list, items) in spec.iter_mut() {
        if list != "initContainers" && list != "containers" {
            continue;
        }
        let Some(items) = items.as_array_mut() else {
            continue;
        };
        for (index, container) in items.iter_mut().enumerate() {
            all.push((format!("{prefix}.{list}[{index}]"), container));
        }
    }
    all
}

/// Where a container stands in a pod spec (`spec.template.spec.containers[1]`),
/// written out only in a message: most pods have none.
#[derive(Debug, Clone, Copy)]
struct ContainerPath<'a> {
    prefix: &'a str,
    list: &'a str,
    index: usize,
}

impl std::fmt::Display for ContainerPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}[{}]", self.prefix, self.list, self.index)
    }
}

/// The validation errors, and the warnings the apiserver returns with an
/// accepted object, of the rules an injection can break: duplicate container
/// and port names, duplicate host ports, probes and lifecycle hooks on plain
/// init containers, and `sleep` hooks longer than the grace period.
pub fn validate(
    spec: &Value,
    prefix: &str,
    version: KubeVersion,
) -> (Vec<FieldError>, Vec<String>) {
    let mut errors = Vec::new();
    let containers = entries(spec, "containers");
    if containers.is_empty() {
        errors.push(FieldError::required(format!("{prefix}.containers"), ""));
    }
    let inits = entries(spec, "initContainers");
    let grace = spec
        .field("terminationGracePeriodSeconds")
        .and_then(Value::as_i64)
        .unwrap_or(30);
    // The pod shares the host's user namespace unless it says otherwise.
    let host_users = spec.field("hostUsers") != Some(&Value::Bool(false));

    let mut names: Vec<&str> = Vec::new();
    for (list, items) in [("containers", &containers), ("initContainers", &inits)] {
        let mut host_ports: Vec<String> = Vec::new();
        for (index, container) in items.iter().enumerate() {
            let path = ContainerPath {
                prefix,
                list,
                index,
            };
            let name = super::container_name(container);
            if !name.is_empty() {
                errors.extend(
                    dns1123_label_errors(name, version).into_iter().map(|msg| {
                        FieldError::invalid(format!("{path}.name"), go_quote(name), msg)
                    }),
                );
            }
            if !name.is_empty() && names.contains(&name) {
                errors.push(FieldError::duplicate(
                    format!("{path}.name"),
                    go_quote(name),
                ));
            }
            names.push(name);
            // Init containers run one by one: each one's host ports are its own.
            if list == "initContainers" {
                host_ports.clear();
            }
            errors.extend(port_errors(container, &path, &mut host_ports));
            errors.extend(resource_errors(container, &path));
            errors.extend(proc_mount_error(container, &path, host_users, version));
            if list == "initContainers" && !is_sidecar(container) {
                // The hooks of a plain init container are refused, not checked further.
                errors.extend(init_container_errors(container, &path, version));
            } else {
                errors.extend(sleep_errors(container, &path, grace, version));
            }
        }
    }
    (errors, port_warnings(spec, prefix, version))
}

/// The containers of `spec` without a name: the apiserver refuses a Pod,
/// or a built-in workload's pod template, with one
/// (`spec.containers[0].name: Required value`).
pub fn unnamed_containers(spec: &Value, prefix: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for list in ["containers", "initContainers"] {
        for (index, container) in entries(spec, list).iter().enumerate() {
            if super::container_name(container).is_empty() {
                errors.push(FieldError::required(
                    format!("{prefix}.{list}[{index}].name"),
                    "",
                ));
            }
        }
    }
    errors
}

/// An unmasked `/proc` only in a pod of its own user namespace
/// (`ValidateSecurityContext` in `pkg/apis/core/validation/validation.go`),
/// from 1.33, where the ProcMountType gate is on; before, the field is reset
/// (see [`drop_disabled_fields`]).
fn proc_mount_error(
    container: &Value,
    path: &ContainerPath<'_>,
    host_users: bool,
    version: KubeVersion,
) -> Option<FieldError> {
    let proc_mount = container
        .field("securityContext")
        .and_then(|c| c.field("procMount"))
        .and_then(Value::as_str)?;
    (version.has_proc_mount_type() && host_users && proc_mount == "Unmasked").then(|| {
        FieldError::invalid(
            format!("{path}.securityContext.procMount"),
            go_quote(proc_mount),
            "`hostUsers` must be false to use `Unmasked`",
        )
    })
}

/// The errors of an object's name (`metadata.name`, and `metadata.generateName`
/// as a prefix) for a built-in kind that names its objects as RFC 1123
/// subdomains: Pod, Deployment, ReplicaSet, StatefulSet, DaemonSet, Job,
/// CronJob, ReplicationController (`ValidateObjectMeta` with
/// `NameIsDNSSubdomain`, `staging/src/k8s.io/apimachinery/pkg/api/validation`).
/// A name the apiserver generates from `generateName` is not checked: its
/// random suffix cannot be known offline.
pub fn object_name_errors(object: &Value, version: KubeVersion) -> Vec<FieldError> {
    let metadata = object.field("metadata");
    let text = |field: &str| {
        metadata
            .and_then(|m| m.field(field))
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let mut errors = Vec::new();
    let generate_name = text("generateName");
    if !generate_name.is_empty() {
        // A prefix may end with '-': it is checked as if it ended with 'a'.
        let masked = match generate_name.strip_suffix('-') {
            Some(head) if !head.is_empty() => format!("{head}a"),
            _ => generate_name.to_string(),
        };
        errors.extend(
            dns1123_subdomain_errors(&masked, version)
                .into_iter()
                .map(|msg| {
                    FieldError::invalid("metadata.generateName", go_quote(generate_name), msg)
                }),
        );
    }
    let name = text("name");
    if !name.is_empty() {
        errors.extend(
            dns1123_subdomain_errors(name, version)
                .into_iter()
                .map(|msg| FieldError::invalid("metadata.name", go_quote(name), msg)),
        );
    }
    errors
}

/// The wording of the RFC 1123 messages: "a lowercase RFC 1123 …" from 1.20
/// (kubernetes PR 94182), "a DNS-1123 …" before.
fn rfc1123(version: KubeVersion) -> &'static str {
    if version.words_lowercase_rfc1123() {
        "a lowercase RFC 1123"
    } else {
        "a DNS-1123"
    }
}

const DNS1123_LABEL_FORMAT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";

/// `IsDNS1123Label` (`staging/src/k8s.io/apimachinery/pkg/util/validation/validation.go`):
/// at most 63 characters, lower case alphanumerics and '-', starting and
/// ending with an alphanumeric.
pub fn dns1123_label_errors(value: &str, version: KubeVersion) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 63 {
        errors.push("must be no more than 63 characters".to_string());
    }
    if !is_dns1123_label(value) {
        errors.push(format!(
            "{} label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '{DNS1123_LABEL_FORMAT}')",
            rfc1123(version)
        ));
    }
    errors
}

/// `IsDNS1123Subdomain`: at most 253 characters, labels joined by '.'.
pub fn dns1123_subdomain_errors(value: &str, version: KubeVersion) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 253 {
        errors.push("must be no more than 253 characters".to_string());
    }
    if !value.split('.').all(is_dns1123_label) {
        errors.push(format!(
            "{} subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '{DNS1123_LABEL_FORMAT}(\\.{DNS1123_LABEL_FORMAT})*')",
            rfc1123(version)
        ));
    }
    errors
}

/// Matches `[a-z0-9]([-a-z0-9]*[a-z0-9])?` whole (any length).
fn is_dns1123_label(value: &str) -> bool {
    let alphanumeric = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    let (Some(first), Some(last)) = (value.chars().next(), value.chars().last()) else {
        return false;
    };
    alphanumeric(first) && alphanumeric(last) && value.chars().all(|c| alphanumeric(c) || c == '-')
}

fn entries<'a>(spec: &'a Value, list: &str) -> Vec<&'a Value> {
    spec.field(list)
        .and_then(Value::as_array)
        .map(|items| items.iter().collect())
        .unwrap_or_default()
}

fn port_errors(
    container: &Value,
    path: &ContainerPath<'_>,
    host_ports: &mut Vec<String>,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut port_names: Vec<&str> = Vec::new();
    let ports = container.field("ports").and_then(Value::as_array);
    for (index, port) in ports.into_iter().flatten().enumerate() {
        // Paths are written only for an error: most ports have none.
        let at = |field: &str| format!("{path}.ports[{index}].{field}");
        if let Some(name) = port.field("name").and_then(Value::as_str) {
            if port_names.contains(&name) {
                errors.push(FieldError::duplicate(at("name"), go_quote(name)));
            }
            port_names.push(name);
        }
        let host_port = port.field("hostPort").and_then(Value::as_i64).unwrap_or(0);
        if host_port != 0 {
            let key = format!(
                "{}/{}/{host_port}",
                text_or(port, "protocol", "TCP"),
                text_or(port, "hostIP", "")
            );
            if host_ports.contains(&key) {
                errors.push(FieldError::duplicate(at("hostPort"), go_quote(&key)));
            }
            host_ports.push(key);
        }
    }
    errors
}

fn text_or<'a>(value: &'a Value, field: &str, default: &'a str) -> &'a str {
    value
        .field(field)
        .and_then(Value::as_str)
        .unwrap_or(default)
}

/// A request above its limit (after LimitRanger filled in what was missing,
/// which is how a request of 2 CPUs under a default limit of 1 fails).
fn resource_errors(container: &Value, path: &ContainerPath<'_>) -> Vec<FieldError> {
    // Read where they are (every container of every workload is checked).
    let section = |name: &str| {
        container
            .field("resources")
            .and_then(|r| r.field(name))
            .and_then(Value::as_object)
    };
    let (Some(requests), Some(limits)) = (section("requests"), section("limits")) else {
        return Vec::new();
    };
    requests
        .iter()
        .filter_map(|(name, request)| {
            let request = super::quantity::Quantity::from_value(request)?;
            let limit = super::quantity::Quantity::from_value(limits.field(name)?)?;
            (request > limit).then(|| {
                FieldError::invalid(
                    format!("{path}.resources.requests"),
                    go_quote(&request.to_string()),
                    format!("must be less than or equal to {name} limit of {limit}"),
                )
            })
        })
        .collect()
}

/// Only native sidecars may have probes and lifecycle hooks among the init containers.
fn init_container_errors(
    container: &Value,
    path: &ContainerPath<'_>,
    version: KubeVersion,
) -> Vec<FieldError> {
    [
        "lifecycle",
        "livenessProbe",
        "readinessProbe",
        "startupProbe",
    ]
    .iter()
    .filter(|field| container.field(field).is_some_and(|v| !v.is_null()))
    .map(|field| {
        let at = format!("{path}.{field}");
        if version.knows_container_restart_policy() {
            FieldError::forbidden(
                at,
                "may not be set for init containers without restartPolicy=Always",
            )
        } else {
            // The apiserver prints the whole Go struct as the value; it is abbreviated here.
            let go_type = if *field == "lifecycle" {
                "core.Lifecycle"
            } else {
                "core.Probe"
            };
            FieldError::invalid(
                at,
                format!("{go_type}{{...}}"),
                "must not be set for init containers",
            )
        }
    })
    .collect()
}

/// A `sleep` hook must fit in the grace period (and be positive before zero
/// was allowed in 1.33); an empty handler (an unknown `sleep` dropped before
/// 1.29) has no action at all. The messages are `validateSleepAction`'s
/// (`pkg/apis/core/validation/validation.go`, from 1.29 on, which reports
/// it on `lifecycle.<hook>.sleep`): from 1.32, where the
/// `PodLifecycleSleepActionAllowZero` gate is alpha and off, the refusal of a
/// non-positive sleep names the gate; from 1.33 the gate is on.
fn sleep_errors(
    container: &Value,
    path: &ContainerPath<'_>,
    grace: i64,
    version: KubeVersion,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for hook in ["preStop", "postStart"] {
        let Some(handler) = container.field("lifecycle").and_then(|l| l.field(hook)) else {
            continue;
        };
        let at = || format!("{path}.lifecycle.{hook}");
        if handler.as_object().is_some_and(|h| h.is_empty()) {
            errors.push(FieldError::required(at(), "must specify a handler type"));
            continue;
        }
        let Some(seconds) = handler
            .field("sleep")
            .and_then(|s| s.field("seconds"))
            .and_then(Value::as_i64)
        else {
            continue;
        };
        let allow_zero = version.allows_zero_sleep();
        let fits = seconds <= grace
            && if allow_zero {
                seconds >= 0
            } else {
                seconds > 0
            };
        if !fits {
            let mut detail = if allow_zero {
                format!(
                    "must be non-negative and less than terminationGracePeriodSeconds ({grace})"
                )
            } else {
                format!(
                    "must be greater than 0 and less than terminationGracePeriodSeconds ({grace})"
                )
            };
            // 1.32 has the zero gate (alpha, off), and its message names it by
            // the validation option's name.
            if version.gates_zero_sleep() {
                detail.push_str(
                    ". Enable AllowPodLifecycleSleepActionZeroValue feature gate for zero sleep.",
                );
            }
            // The error is on the action, not on its `seconds`.
            errors.push(FieldError::invalid(
                format!("{}.sleep", at()),
                seconds.to_string(),
                detail,
            ));
        }
    }
    errors
}

/// The apiserver's warnings on ports that two definitions share (the same
/// container port and protocol), and from 1.33 on a port name that two
/// definitions share, visiting init containers first
/// (`warningsForPodSpecAndMeta` in `pkg/api/pod/warnings.go`).
fn port_warnings(spec: &Value, prefix: &str, version: KubeVersion) -> Vec<String> {
    /// A port definition: where it is, and what it claims.
    struct Seen<'a> {
        list: &'a str,
        container: usize,
        index: usize,
        number: i64,
        protocol: &'a str,
        host_port: i64,
        host_ip: &'a str,
    }
    let path = |p: &Seen<'_>| format!("{prefix}.{}[{}].ports[{}]", p.list, p.container, p.index);
    let mut warnings = Vec::new();
    let mut seen: Vec<Seen<'_>> = Vec::new();
    for list in ["initContainers", "containers"] {
        for (container, entry) in entries(spec, list).into_iter().enumerate() {
            let ports = entry.field("ports").and_then(Value::as_array);
            for (index, port) in ports.into_iter().flatten().enumerate() {
                let Some(number) = port.field("containerPort").and_then(Value::as_i64) else {
                    continue;
                };
                let here = Seen {
                    list,
                    container,
                    index,
                    number,
                    protocol: text_or(port, "protocol", "TCP"),
                    host_port: port.field("hostPort").and_then(Value::as_i64).unwrap_or(0),
                    host_ip: text_or(port, "hostIP", ""),
                };
                for other in &seen {
                    if other.number != here.number || other.protocol != here.protocol {
                        continue;
                    }
                    let how = if other.host_port == here.host_port && other.host_ip == here.host_ip
                    {
                        "duplicate"
                    } else if here.host_port == 0 || other.host_port == 0 {
                        "overlapping"
                    } else {
                        continue;
                    };
                    warnings.push(format!(
                        "{}: {how} port definition with {}",
                        path(&here),
                        path(other)
                    ));
                }
                seen.push(here);
            }
        }
    }
    if version.warns_duplicate_port_names() {
        warnings.extend(port_name_warnings(spec, prefix));
    }
    warnings
}

/// A port name given twice, in one container or two: services and probes
/// that name the port get the first one.
fn port_name_warnings(spec: &Value, prefix: &str) -> Vec<String> {
    let mut warnings = Vec::new();
    // The first port of each name, and where it is.
    let mut first: Vec<(&str, ContainerPath<'_>, usize)> = Vec::new();
    for list in ["initContainers", "containers"] {
        for (container, entry) in entries(spec, list).into_iter().enumerate() {
            let ports = entry.field("ports").and_then(Value::as_array);
            for (index, port) in ports.into_iter().flatten().enumerate() {
                let Some(name) = port
                    .field("name")
                    .and_then(Value::as_str)
                    .filter(|n| !n.is_empty())
                else {
                    continue;
                };
                let path = ContainerPath {
                    prefix,
                    list,
                    index: container,
                };
                match first.iter().find(|(n, _, _)| *n == name) {
                    Some((_, other, at)) => {
                        let other = format!("{other}.ports[{at}]");
                        warnings.push(format!(
                            "{path}.ports[{index}]: duplicate port name {} with {other}, services and probes that select ports by name will use {other}",
                            go_quote(name)
                        ));
                    }
                    None => first.push((name, path, index)),
                }
            }
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn v(minor: u32) -> KubeVersion {
        KubeVersion::new(1, minor)
    }

    fn messages(errors: &[FieldError]) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn pods_get_the_defaults_a_stored_pod_shows() {
        let mut spec = json!({"containers": [
            {"name": "a", "image": "nginx", "ports": [{"containerPort": 80}],
             "readinessProbe": {"httpGet": {"port": 80}}},
            {"name": "b", "image": "reg:5000/b:1.2"},
            {"name": "c", "image": "c@sha256:00"}
        ]});
        default_pod(&mut spec);
        assert_eq!(spec["restartPolicy"], "Always");
        assert_eq!(spec["securityContext"], json!({}));
        let a = &spec["containers"][0];
        assert_eq!(a["imagePullPolicy"], "Always");
        assert_eq!(a["ports"][0]["protocol"], "TCP");
        assert_eq!(
            a["readinessProbe"],
            json!({"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})
        );
        assert_eq!(spec["containers"][1]["imagePullPolicy"], "IfNotPresent");
        assert_eq!(spec["containers"][2]["imagePullPolicy"], "IfNotPresent");
        assert_eq!(
            messages(&validate(&json!({}), "spec", v(33)).0),
            ["spec.containers: Required value"]
        );
    }

    #[test]
    fn volumes_without_a_source_are_empty_dirs() {
        let mut spec = json!({"containers": [{"name": "a"}], "volumes": [
            {"name": "scratch"},
            {"name": "nulled", "emptyDir": null},
            {"name": "config", "configMap": {"name": "c"}}
        ]});
        default_for_checks(&mut spec);
        assert_eq!(
            spec["volumes"],
            json!([
                {"name": "scratch", "emptyDir": {}},
                {"name": "nulled", "emptyDir": {}},
                {"name": "config", "configMap": {"name": "c"}}
            ])
        );
        let mut pod = json!({"containers": [], "volumes": [{"name": "scratch"}]});
        default_pod(&mut pod);
        assert_eq!(pod["volumes"][0]["emptyDir"], json!({}));
    }

    #[test]
    fn host_network_ports_are_host_ports() {
        let spec = json!({"hostNetwork": true,
            "initContainers": [{"name": "i", "ports": [{"containerPort": 9}]}],
            "containers": [{"name": "a", "ports": [{"containerPort": 80}, {"containerPort": 81, "hostPort": 8081}, {"containerPort": 82, "hostPort": 0}]}]});
        assert!(host_ports_default(&spec));
        let mut pod = spec.clone();
        default_for_checks(&mut pod);
        assert_eq!(pod["initContainers"][0]["ports"][0]["hostPort"], 9);
        let ports: Vec<&Value> = pod["containers"][0]["ports"]
            .as_array()
            .expect("ports")
            .iter()
            .map(|p| &p["hostPort"])
            .collect();
        assert_eq!(ports, [&json!(80), &json!(8081), &json!(82)]);
        // A template is defaulted so before 1.28 only.
        let mut template = spec.clone();
        default_template(&mut template, v(28));
        assert_eq!(template, spec);
        default_template(&mut template, v(27));
        assert_eq!(template, pod);
        let mut plain = json!({"containers": [{"name": "a", "ports": [{"containerPort": 80}]}]});
        assert!(!host_ports_default(&plain));
        default_for_checks(&mut plain);
        assert!(plain["containers"][0]["ports"][0].get("hostPort").is_none());
    }

    #[test]
    fn names_are_rfc_1123_labels_and_subdomains() {
        for good in ["a", "web-1", "0", "a-b-c"] {
            assert!(dns1123_label_errors(good, v(33)).is_empty(), "{good}");
        }
        for bad in ["", "-a", "a-", "A", "a_b", "a.b"] {
            assert_eq!(dns1123_label_errors(bad, v(33)).len(), 1, "{bad}");
        }
        assert_eq!(
            dns1123_label_errors(&"a".repeat(64), v(33)),
            ["must be no more than 63 characters"]
        );
        assert!(dns1123_subdomain_errors("web.example-1.com", v(33)).is_empty());
        for bad in ["a..b", ".a", "a.", "a.-b"] {
            assert_eq!(dns1123_subdomain_errors(bad, v(33)).len(), 1, "{bad}");
        }
        assert!(dns1123_subdomain_errors(&"a".repeat(253), v(33)).is_empty());
        assert_eq!(dns1123_subdomain_errors(&"A".repeat(254), v(33)).len(), 2);
        // A generateName may end with '-'.
        let named = |meta: Value| json!({"metadata": meta});
        assert!(object_name_errors(&named(json!({"generateName": "web-"})), v(33)).is_empty());
        assert_eq!(
            messages(&object_name_errors(
                &named(json!({"generateName": "Web-"})),
                v(19)
            )),
            [
                "metadata.generateName: Invalid value: \"Web-\": a DNS-1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            ]
        );
        assert!(object_name_errors(&named(json!({})), v(33)).is_empty());
    }

    #[test]
    fn requests_default_to_limits() {
        let mut spec = json!({"containers": [{"name": "a", "resources": {"limits": {"memory": "1Gi"}, "requests": {"cpu": "1"}}}]});
        default_for_checks(&mut spec);
        assert_eq!(
            spec["containers"][0]["resources"]["requests"],
            json!({"cpu": "1", "memory": "1Gi"})
        );
    }

    #[test]
    fn sidecars_lose_restart_policy_before_1_29_and_then_fail_validation() {
        let proxy = json!({"name": "linkerd-proxy", "restartPolicy": "Always", "readinessProbe": {"httpGet": {"port": 4191}}});
        let mut spec = json!({"initContainers": [proxy], "containers": [{"name": "app"}]});
        let (errors, _) = validate(&spec, "spec.template.spec", v(29));
        assert!(errors.is_empty());
        let mut at_1_28 = spec.clone();
        let warnings = drop_disabled_fields(&mut at_1_28, "spec.template.spec", v(28));
        assert_eq!(
            warnings,
            [
                "spec.template.spec.initContainers[0].restartPolicy is dropped by the apiserver (the SidecarContainers feature gate is off by default in 1.28): init container linkerd-proxy must exit before the app containers start"
            ]
        );
        let (errors, _) = validate(&at_1_28, "spec.template.spec", v(28));
        assert_eq!(
            messages(&errors),
            [
                "spec.template.spec.initContainers[0].readinessProbe: Forbidden: may not be set for init containers without restartPolicy=Always"
            ]
        );
        let warnings = drop_disabled_fields(&mut spec, "spec", v(24));
        assert!(warnings[0].starts_with("unknown field \"spec.initContainers[0].restartPolicy\""));
        let (errors, _) = validate(&spec, "spec", v(24));
        assert_eq!(
            messages(&errors),
            [
                "spec.initContainers[0].readinessProbe: Invalid value: core.Probe{...}: must not be set for init containers"
            ]
        );
        let mut kept = json!({"initContainers": [{"name": "p", "restartPolicy": "Always"}]});
        assert!(drop_disabled_fields(&mut kept, "spec", v(29)).is_empty());
        assert_eq!(kept["initContainers"][0]["restartPolicy"], "Always");
    }

    #[test]
    fn sleep_hooks_fit_the_grace_period() {
        let spec = |seconds: i64| {
            json!({"terminationGracePeriodSeconds": 30, "containers": [
                {"name": "p", "lifecycle": {"preStop": {"sleep": {"seconds": seconds}}}}]})
        };
        assert!(validate(&spec(30), "spec", v(30)).0.is_empty());
        assert_eq!(
            messages(&validate(&spec(40), "spec", v(30)).0),
            [
                "spec.containers[0].lifecycle.preStop.sleep: Invalid value: 40: must be greater than 0 and less than terminationGracePeriodSeconds (30)"
            ]
        );
        assert!(validate(&spec(0), "spec", v(33)).0.is_empty());
        assert_eq!(
            messages(&validate(&spec(40), "spec", v(33)).0),
            [
                "spec.containers[0].lifecycle.preStop.sleep: Invalid value: 40: must be non-negative and less than terminationGracePeriodSeconds (30)"
            ]
        );
        // 1.29: the gate is off, the action is dropped with its empty hook.
        let mut dropped = spec(10);
        let warnings = drop_disabled_fields(&mut dropped, "spec", v(29));
        assert_eq!(warnings.len(), 1);
        assert!(dropped["containers"][0].field("lifecycle").is_none());
        // Before 1.29 the field is unknown: the hook is left without an action.
        let mut unknown = spec(10);
        drop_disabled_fields(&mut unknown, "spec", v(27));
        assert_eq!(
            messages(&validate(&unknown, "spec", v(27)).0),
            ["spec.containers[0].lifecycle.preStop: Required value: must specify a handler type"]
        );
    }

    #[test]
    fn requests_above_limits_and_init_host_ports() {
        let spec = json!({
            "initContainers": [
                {"name": "a", "ports": [{"containerPort": 1, "hostPort": 9000}]},
                {"name": "b", "ports": [{"containerPort": 1, "hostPort": 9000}]}
            ],
            "containers": [{"name": "app", "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}]
        });
        assert_eq!(
            messages(&validate(&spec, "spec", v(33)).0),
            [
                "spec.containers[0].resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit of 1"
            ]
        );
    }

    #[test]
    fn port_names_given_twice_are_warned_about_from_1_33() {
        let spec = json!({
            "initContainers": [{"name": "proxy", "restartPolicy": "Always", "ports": [{"name": "admin", "containerPort": 4191}]}],
            "containers": [
                {"name": "app", "ports": [{"name": "admin", "containerPort": 9000}, {"containerPort": 80}]},
                {"name": "b", "ports": [{"name": "", "containerPort": 81}, {"name": "admin", "containerPort": 82}]}
            ]
        });
        assert_eq!(
            validate(&spec, "spec", v(33)).1,
            [
                "spec.containers[0].ports[0]: duplicate port name \"admin\" with spec.initContainers[0].ports[0], services and probes that select ports by name will use spec.initContainers[0].ports[0]",
                "spec.containers[1].ports[1]: duplicate port name \"admin\" with spec.initContainers[0].ports[0], services and probes that select ports by name will use spec.initContainers[0].ports[0]"
            ]
        );
        assert!(validate(&spec, "spec", v(32)).1.is_empty());
    }

    #[test]
    fn duplicates_are_errors_or_warnings() {
        let spec = json!({
            "initContainers": [{"name": "app", "ports": [{"containerPort": 4143}]}],
            "containers": [
                {"name": "app", "ports": [{"name": "http", "containerPort": 80, "hostPort": 8080}, {"name": "http", "containerPort": 81}]},
                {"name": "proxy", "ports": [{"containerPort": 4143}, {"containerPort": 82, "hostPort": 8080}]}
            ]
        });
        let (errors, warnings) = validate(&spec, "spec", v(33));
        assert_eq!(
            messages(&errors),
            [
                "spec.containers[0].ports[1].name: Duplicate value: \"http\"",
                "spec.containers[1].ports[1].hostPort: Duplicate value: \"TCP//8080\"",
                "spec.initContainers[0].name: Duplicate value: \"app\""
            ]
        );
        // (The apiserver returns none of them: the object is invalid.)
        assert_eq!(
            warnings,
            [
                "spec.containers[1].ports[0]: duplicate port definition with spec.initContainers[0].ports[0]",
                "spec.containers[0].ports[1]: duplicate port name \"http\" with spec.containers[0].ports[0], services and probes that select ports by name will use spec.containers[0].ports[0]"
            ]
        );
    }
}

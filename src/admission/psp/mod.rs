//! PodSecurityPolicy admission, offline (policy/v1beta1, Kubernetes ≤ 1.24, at
//! its v1.23/1.24 shape: `plugin/pkg/admission/security/podsecuritypolicy/`
//! and `pkg/security/podsecuritypolicy/`).
//!
//! [`admit`] and [`validate`] choose a policy the way
//! `plugin/pkg/admission/security/podsecuritypolicy/admission.go` does;
//! [`mutate_pod`] and [`validate_pod`] are the provider
//! (`pkg/security/podsecuritypolicy/provider.go` and its strategies) for one
//! policy. Pods and policies are their v1 JSON. Messages print the internal
//! API's field paths, as the apiserver does (`spec.securityContext.hostNetwork`
//! for the pod's `spec.hostNetwork`). A value of the wrong type counts as absent.
//!
//! Here: choosing the policy (`admission.go`). `provider.rs`: a policy's
//! view of itself; `mutate.rs`: the defaults it sets; `validate.rs`: the
//! checks it makes; `strategies.rs`: its user, group, SELinux and seccomp
//! rules.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::containers_with_paths;
use super::field::{FieldError, go_quote, go_string_slice};
use crate::json::Field;

mod mutate;
mod provider;
mod strategies;
mod validate;

use provider::*;
use strategies::*;

/// The annotation naming the policy that admitted a pod.
const VALIDATED_PSP: &str = "kubernetes.io/psp";
const SECCOMP_POD: &str = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER: &str = "container.seccomp.security.alpha.kubernetes.io/";
const SECCOMP_DEFAULT: &str = "seccomp.security.alpha.kubernetes.io/defaultProfileName";
const SECCOMP_ALLOWED: &str = "seccomp.security.alpha.kubernetes.io/allowedProfileNames";
const APPARMOR_CONTAINER: &str = "container.apparmor.security.beta.kubernetes.io/";
const APPARMOR_DEFAULT: &str = "apparmor.security.beta.kubernetes.io/defaultProfileName";
const APPARMOR_ALLOWED: &str = "apparmor.security.beta.kubernetes.io/allowedProfileNames";

/// The container lists the provider visits, in its order.
const CONTAINER_LISTS: [&str; 3] = ["initContainers", "containers", "ephemeralContainers"];

/// Sysctls every policy allows unless it forbids them (`SafeSysctlAllowlist`).
const SAFE_SYSCTLS: [&str; 5] = [
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_unprivileged_port_start",
];

/// A volume's source field and the policy's name for its type, in the order
/// `GetVolumeFSType` tries them.
const VOLUME_TYPES: [(&str, &str); 29] = [
    ("hostPath", "hostPath"),
    ("emptyDir", "emptyDir"),
    ("gcePersistentDisk", "gcePersistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("gitRepo", "gitRepo"),
    ("secret", "secret"),
    ("nfs", "nfs"),
    ("iscsi", "iscsi"),
    ("glusterfs", "glusterfs"),
    ("persistentVolumeClaim", "persistentVolumeClaim"),
    ("rbd", "rbd"),
    ("flexVolume", "flexVolume"),
    ("cinder", "cinder"),
    ("cephfs", "cephFS"),
    ("flocker", "flocker"),
    ("downwardAPI", "downwardAPI"),
    ("fc", "fc"),
    ("azureFile", "azureFile"),
    ("configMap", "configMap"),
    ("vsphereVolume", "vsphereVolume"),
    ("quobyte", "quobyte"),
    ("azureDisk", "azureDisk"),
    ("photonPersistentDisk", "photonPersistentDisk"),
    ("storageos", "storageos"),
    ("projected", "projected"),
    ("portworxVolume", "portworxVolume"),
    ("scaleIO", "scaleIO"),
    ("csi", "csi"),
    ("ephemeral", "ephemeral"),
];

static NULL: Value = Value::Null;

/// A pod admitted by a policy: the pod as the policy left it (with the `kubernetes.io/psp` annotation), the policy's name,
/// and whether the policy changed anything besides that annotation.
#[derive(Debug, Clone, PartialEq)]
pub struct Admitted {
    pub pod: Value,
    pub policy: String,
    pub mutated: bool,
}

/// The plugin's Admit on CREATE (`pod` is a Pod object {metadata, spec}; `psps` the PodSecurityPolicy objects, any order).
///
/// Policies are tried sorted by name, each on a copy of the pod: mutate, then
/// validate. The first policy that accepts the pod without changing it wins at
/// once; otherwise the first (by name) that accepts it with changes.
///
/// Every policy counts as authorized for the pod's service account and the
/// requesting user: the tool cannot see RBAC (`use` on `podsecuritypolicies`).
/// A policy the plugin could not build a provider from (a missing or unknown
/// strategy rule, `MustRunAs` without ranges or SELinux options) is skipped,
/// as the plugin skips it.
///
/// Err: the message after the `pods "x" is forbidden: ` prefix,
/// `PodSecurityPolicy: unable to admit pod: [<errors>]`, with the field errors
/// of every policy tried, in name order (the plugin gathers them from a Go map,
/// so its order varies), space-separated as Go's `%v` prints a
/// `field.ErrorList`.
pub fn admit(pod: &Value, psps: &[&Value]) -> Result<Admitted, String> {
    let policies = providers(psps, None)?;
    let mut errors = Vec::new();
    let mut first_mutated: Option<(Value, &str)> = None;
    for policy in &policies {
        let mut copy = pod.clone();
        let mutated = policy.mutate_pod(&mut copy);
        let found = policy.validate_pod(&copy);
        if !found.is_empty() {
            errors.extend(found);
        } else if !mutated {
            return Ok(admitted(copy, policy.name, false));
        } else if first_mutated.is_none() {
            first_mutated = Some((copy, policy.name));
        }
    }
    match first_mutated {
        Some((copy, name)) => Ok(admitted(copy, name, true)),
        None => Err(format!(
            "PodSecurityPolicy: unable to admit pod: {}",
            go_error_list(&errors)
        )),
    }
}

/// The plugin's Validate (after the webhooks, no mutation allowed): the policy named in the pod's `kubernetes.io/psp`
/// annotation is tried first, then the rest by name; the pod must validate unchanged under one of them.
///
/// A policy that would change the pod is passed over without an error of its
/// own, so a pod every policy would change is refused with `[]`.
/// Err: `PodSecurityPolicy: unable to validate pod: [...]`.
pub fn validate(pod: &Value, psps: &[&Value]) -> Result<String, String> {
    let policies = providers(psps, annotation(pod, VALIDATED_PSP))?;
    let mut errors = Vec::new();
    for policy in &policies {
        let mut copy = pod.clone();
        let mutated = policy.mutate_pod(&mut copy);
        let found = policy.validate_pod(&copy);
        if !found.is_empty() {
            errors.extend(found);
        } else if !mutated {
            return Ok(policy.name.to_string());
        }
    }
    Err(format!(
        "PodSecurityPolicy: unable to validate pod: {}",
        go_error_list(&errors)
    ))
}

/// `provider.MutatePod`: pod-level defaults (fsGroup, supplementalGroups, seLinuxOptions, the seccomp default annotation,
/// runtimeClassName) then every container's (see mutate_container). Returns whether anything changed.
pub fn mutate_pod(pod: &mut Value, psp: &Value) -> bool {
    Policy::new(psp).mutate_pod(pod)
}

/// Defaults of one container in a pod whose pod-level securityContext is `pod_context`: runAsUser, runAsGroup,
/// seLinuxOptions, runAsNonRoot, capabilities (add/drop rewritten sorted only when something new results),
/// readOnlyRootFilesystem, allowPrivilegeEscalation. Writes go to the container's securityContext; a field set at pod level counts as set.
/// Returns whether anything changed.
pub fn mutate_container(container: &mut Value, pod_context: Option<&Value>, psp: &Value) -> bool {
    Policy::new(psp).mutate_container(container, pod_context)
}

/// The AppArmor annotation (key, value) a container gets when the policy sets a default profile and the pod lacks it.
///
/// The caller adds it only when the pod's value for the key is absent or empty,
/// as [`mutate_pod`] does.
pub fn apparmor_annotation(psp: &Value, container: &str) -> Option<(String, String)> {
    Policy::new(psp).apparmor_default(container)
}

/// A refusal as a cluster at `version` words it. Older releases said
/// `unable to validate against any pod security policy: [...]` for both
/// phases and had no `PodSecurityPolicy: ` prefix; the release that changed
/// the wording is not pinned down, so 1.19 is taken (1.17 is known to have
/// the old wording and 1.20 the new).
pub fn worded_for(message: &str, version: crate::cluster::KubeVersion) -> String {
    if version.words_psp_refusals_by_phase() {
        return message.to_string();
    }
    for phase in [
        "PodSecurityPolicy: unable to admit pod: ",
        "PodSecurityPolicy: unable to validate pod: ",
    ] {
        if let Some(errors) = message.strip_prefix(phase) {
            return format!("unable to validate against any pod security policy: {errors}");
        }
    }
    message
        .strip_prefix("PodSecurityPolicy: ")
        .unwrap_or(message)
        .to_string()
}

/// Whether the policy lets `container` keep the seccomp profile its own
/// `seccompProfile` field sets (a container without one always may).
pub fn allows_container_seccomp(psp: &Value, container: &Value) -> bool {
    let Some(profile) = seccomp_field(container.field("securityContext")) else {
        return true;
    };
    let annotated = |key: &str| {
        psp.field("metadata")
            .and_then(|m| m.field("annotations"))
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
    };
    seccomp_strategy(annotated(SECCOMP_DEFAULT), annotated(SECCOMP_ALLOWED))
        .validate("", &profile)
        .is_none()
}

/// `provider.ValidatePod` with its per-container validation: every field error, in the provider's order.
pub fn validate_pod(pod: &Value, psp: &Value) -> Vec<FieldError> {
    Policy::new(psp).validate_pod(pod)
}

/// The usable policies, the `hint` first, then by name; none is the plugin's
/// own error.
fn providers<'a>(psps: &[&'a Value], hint: Option<&str>) -> Result<Vec<Policy<'a>>, String> {
    let mut policies: Vec<Policy> = psps
        .iter()
        .map(|psp| Policy::new(psp))
        .filter(|policy| policy.problems.is_empty())
        .collect();
    policies.sort_by_key(|policy| (Some(policy.name) != hint, policy.name));
    if policies.is_empty() {
        return Err(
            "PodSecurityPolicy: no providers available to validate pod request".to_string(),
        );
    }
    Ok(policies)
}

fn admitted(mut pod: Value, policy: &str, mutated: bool) -> Admitted {
    set_annotation(&mut pod, VALIDATED_PSP, policy);
    Admitted {
        pod,
        policy: policy.to_string(),
        mutated,
    }
}

/// A `field.ErrorList` as `%v` prints it: `[a b]`.
fn go_error_list(errors: &[FieldError]) -> String {
    let shown: Vec<String> = errors.iter().map(ToString::to_string).collect();
    format!("[{}]", shown.join(" "))
}

/// A string field of `value`, or `""`.
fn text<'v>(value: &'v Value, key: &str) -> &'v str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn strings(list: Option<&Value>) -> Vec<&str> {
    let items = list.and_then(Value::as_array);
    items
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

fn as_object(value: &Value) -> Option<&Value> {
    value.is_object().then_some(value)
}

fn spec(pod: &Value) -> &Value {
    pod.field("spec").unwrap_or(&NULL)
}

fn pod_context(pod: &Value) -> Option<&Value> {
    spec(pod).field("securityContext").filter(|c| c.is_object())
}

fn annotation<'v>(pod: &'v Value, key: &str) -> Option<&'v str> {
    pod.field("metadata")?
        .field("annotations")?
        .get(key)?
        .as_str()
}

fn set_annotation(pod: &mut Value, key: &str, value: &str) {
    if let Some(annotations) = object_at(pod, &["metadata", "annotations"]) {
        annotations.insert(key.to_string(), Value::String(value.to_string()));
    }
}

/// The object at `path` under `value`, created (or replacing a non-object) on
/// the way; None when `value` itself is not an object.
fn object_at<'v>(mut value: &'v mut Value, path: &[&str]) -> Option<&'v mut Map<String, Value>> {
    for key in path {
        let entry = value
            .as_object_mut()?
            .entry(*key)
            .or_insert_with(|| Value::Object(Map::new()));
        if !entry.is_object() {
            *entry = Value::Object(Map::new());
        }
        value = entry;
    }
    value.as_object_mut()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A policy allowing everything, with `spec` laid over it.
    fn policy(name: &str, spec: Value) -> Value {
        let mut base = json!({
            "runAsUser": {"rule": "RunAsAny"},
            "seLinux": {"rule": "RunAsAny"},
            "fsGroup": {"rule": "RunAsAny"},
            "supplementalGroups": {"rule": "RunAsAny"},
            "volumes": ["*"]
        });
        if let (Some(base), Value::Object(over)) = (base.as_object_mut(), spec) {
            base.extend(over);
        }
        json!({"metadata": {"name": name}, "spec": base})
    }

    fn annotated_policy(name: &str, annotations: Value, spec: Value) -> Value {
        let mut psp = policy(name, spec);
        psp["metadata"]["annotations"] = annotations;
        psp
    }

    fn pod(spec: Value) -> Value {
        json!({"metadata": {"name": "web"}, "spec": spec})
    }

    /// A pod of one container `app` with this security context.
    fn app_pod(context: Value) -> Value {
        pod(json!({"containers": [{"name": "app", "securityContext": context}]}))
    }

    fn errors(pod: &Value, psp: &Value) -> Vec<String> {
        validate_pod(pod, psp)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    const RANGE: &str = "[{1000 2000}]";

    #[test]
    fn fs_group_follows_its_strategy() {
        let ranges = json!([{"min": 1000, "max": 2000}]);
        let must = policy(
            "p",
            json!({"fsGroup": {"rule": "MustRunAs", "ranges": ranges}}),
        );
        let may = policy(
            "p",
            json!({"fsGroup": {"rule": "MayRunAs", "ranges": ranges}}),
        );
        let unset = pod(json!({"containers": [{"name": "app"}]}));
        let five = pod(json!({"securityContext": {"fsGroup": 5}, "containers": []}));
        let inside = pod(json!({"securityContext": {"fsGroup": 1500}, "containers": []}));
        let out_of_range = format!(
            "spec.securityContext.fsGroup: Invalid value: []int64{{5}}: group 5 must be in the ranges: {RANGE}"
        );
        assert_eq!(
            errors(&unset, &must),
            [
                "spec.securityContext.fsGroup: Invalid value: []int64(nil): unable to validate empty groups against required ranges"
            ]
        );
        assert_eq!(errors(&five, &must), std::slice::from_ref(&out_of_range));
        assert!(errors(&inside, &must).is_empty());
        assert!(errors(&unset, &may).is_empty());
        assert_eq!(errors(&five, &may), [out_of_range]);
        assert!(errors(&five, &policy("p", json!({}))).is_empty());
    }

    #[test]
    fn supplemental_groups_report_each_group_out_of_range() {
        let psp = policy(
            "p",
            json!({"supplementalGroups": {"rule": "MustRunAs",
                "ranges": [{"min": 1, "max": 10}, {"min": 100, "max": 100}]}}),
        );
        let groups = pod(json!({"securityContext": {"supplementalGroups": [5, 50, 200]}}));
        assert_eq!(
            errors(&groups, &psp),
            [
                "spec.securityContext.supplementalGroups: Invalid value: []int64{5, 50, 200}: group 50 must be in the ranges: [{1 10} {100 100}]",
                "spec.securityContext.supplementalGroups: Invalid value: []int64{5, 50, 200}: group 200 must be in the ranges: [{1 10} {100 100}]"
            ]
        );
        // An explicit empty list is not nil: it is neither defaulted nor printed as nil.
        let mut empty = pod(json!({"securityContext": {"supplementalGroups": []}}));
        assert!(!mutate_pod(&mut empty, &psp));
        assert_eq!(
            errors(&empty, &psp),
            [
                "spec.securityContext.supplementalGroups: Invalid value: []int64{}: unable to validate empty groups against required ranges"
            ]
        );
        let fine = pod(json!({"securityContext": {"supplementalGroups": [100, 7]}}));
        assert!(errors(&fine, &psp).is_empty());
    }

    #[test]
    fn seccomp_profiles_come_from_annotations_and_fields() {
        let annotated = json!({"metadata": {"name": "web", "annotations": {SECCOMP_POD: "runtime/default"}},
            "spec": {"containers": [{"name": "app"}]}});
        assert_eq!(
            errors(&annotated, &policy("p", json!({}))),
            [
                "pod.metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: Forbidden: seccomp may not be set",
                "pod.metadata.annotations[container.seccomp.security.alpha.kubernetes.io/app]: Forbidden: seccomp may not be set"
            ]
        );
        let allowed = |list: &str| annotated_policy("p", json!({SECCOMP_ALLOWED: list}), json!({}));
        let localhost = pod(json!({
            "securityContext": {"seccompProfile": {"type": "Localhost", "localhostProfile": "p.json"}},
            "containers": [{"name": "app", "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}}]
        }));
        assert_eq!(
            errors(&localhost, &allowed("runtime/default,docker/default")),
            [
                "pod.metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: Forbidden: localhost/p.json is not an allowed seccomp profile. Valid values are runtime/default,docker/default"
            ]
        );
        assert!(errors(&localhost, &allowed("runtime/default,localhost/p.json")).is_empty());
        assert!(errors(&localhost, &allowed("*")).is_empty());
        assert!(errors(&annotated, &allowed("*")).is_empty());
        // Without an allowed list, no profile at all is fine.
        assert!(errors(&app_pod(json!({})), &policy("p", json!({}))).is_empty());
    }

    #[test]
    fn host_namespaces_need_the_policy() {
        let host =
            pod(json!({"hostNetwork": true, "hostPID": true, "hostIPC": true, "containers": []}));
        assert_eq!(
            errors(&host, &policy("p", json!({}))),
            [
                "spec.securityContext.hostNetwork: Invalid value: true: Host network is not allowed to be used",
                "spec.securityContext.hostPID: Invalid value: true: Host PID is not allowed to be used",
                "spec.securityContext.hostIPC: Invalid value: true: Host IPC is not allowed to be used"
            ]
        );
        let open = policy(
            "p",
            json!({"hostNetwork": true, "hostPID": true, "hostIPC": true}),
        );
        assert!(errors(&host, &open).is_empty());
    }

    #[test]
    fn volumes_must_be_of_allowed_types() {
        let volumes = pod(json!({"volumes": [
            {"name": "c", "configMap": {"name": "c"}},
            {"name": "e", "emptyDir": {}},
            {"name": "h", "hostPath": {"path": "/var/log"}}
        ]}));
        let listed = policy("p", json!({"volumes": ["configMap", "emptyDir", "secret"]}));
        assert_eq!(
            errors(&volumes, &listed),
            [
                "spec.volumes[2]: Invalid value: \"hostPath\": hostPath volumes are not allowed to be used"
            ]
        );
        assert!(errors(&volumes, &policy("p", json!({"volumes": ["*"]}))).is_empty());
        let cephfs = pod(json!({"volumes": [{"name": "x", "cephfs": {"monitors": []}}]}));
        assert_eq!(
            errors(&cephfs, &listed),
            [
                "spec.volumes[0]: Invalid value: \"cephFS\": cephFS volumes are not allowed to be used"
            ]
        );
    }

    #[test]
    fn projected_service_account_tokens_pass_as_secrets() {
        let token = |config_map: &str| {
            pod(
                json!({"volumes": [{"name": "kube-api-access", "projected": {"sources": [
                    {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}},
                    {"configMap": {"name": config_map, "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                    {"downwardAPI": {"items": [{"path": "namespace",
                        "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
                ]}}]}),
            )
        };
        let secrets = policy("p", json!({"volumes": ["secret"]}));
        assert!(errors(&token("kube-root-ca.crt"), &secrets).is_empty());
        assert_eq!(
            errors(&token("other"), &secrets),
            [
                "spec.volumes[0]: Invalid value: \"projected\": projected volumes are not allowed to be used"
            ]
        );
        assert_eq!(
            errors(
                &token("kube-root-ca.crt"),
                &policy("p", json!({"volumes": ["configMap"]}))
            ),
            [
                "spec.volumes[0]: Invalid value: \"projected\": projected volumes are not allowed to be used"
            ]
        );
    }

    #[test]
    fn host_paths_follow_allowed_prefixes() {
        let psp = policy(
            "p",
            json!({"allowedHostPaths": [{"pathPrefix": "/var/log", "readOnly": true}]}),
        );
        let paths = pod(json!({
            "volumes": [
                {"name": "logs", "hostPath": {"path": "/var/log/app/"}},
                {"name": "etc", "hostPath": {"path": "/etc"}},
                {"name": "near", "hostPath": {"path": "/var/logs"}}
            ],
            "initContainers": [{"name": "i", "volumeMounts": [{"name": "logs", "mountPath": "/l", "readOnly": true}]}],
            "containers": [{"name": "app", "volumeMounts": [
                {"name": "other", "mountPath": "/o"},
                {"name": "logs", "mountPath": "/l"}
            ]}]
        }));
        assert_eq!(
            errors(&paths, &psp),
            [
                "spec.containers[0].volumeMounts[1].readOnly: Invalid value: false: must be read-only",
                "spec.volumes[1].hostPath.pathPrefix: Invalid value: \"/etc\": is not allowed to be used",
                "spec.volumes[2].hostPath.pathPrefix: Invalid value: \"/var/logs\": is not allowed to be used"
            ]
        );
        let writable = policy(
            "p",
            json!({"allowedHostPaths": [{"pathPrefix": "/var/log/"}, {"pathPrefix": "/etc"}]}),
        );
        assert_eq!(
            errors(&paths, &writable),
            [
                "spec.volumes[2].hostPath.pathPrefix: Invalid value: \"/var/logs\": is not allowed to be used"
            ]
        );
    }

    #[test]
    fn flex_and_csi_drivers_follow_their_lists() {
        let drivers = pod(json!({"volumes": [
            {"name": "f", "flexVolume": {"driver": "b"}},
            {"name": "c", "csi": {"driver": "d"}}
        ]}));
        let psp = policy(
            "p",
            json!({"allowedFlexVolumes": [{"driver": "a"}], "allowedCSIDrivers": [{"name": "c"}]}),
        );
        assert_eq!(
            errors(&drivers, &psp),
            [
                "spec.volumes[0].driver: Invalid value: \"b\": Flexvolume driver is not allowed to be used",
                "spec.volumes[1].csi.driver: Invalid value: \"d\": Inline CSI driver is not allowed to be used"
            ]
        );
        let open = policy(
            "p",
            json!({"allowedFlexVolumes": [{"driver": "b"}], "allowedCSIDrivers": [{"name": "d"}]}),
        );
        assert!(errors(&drivers, &open).is_empty());
        assert!(errors(&drivers, &policy("p", json!({}))).is_empty());
    }

    #[test]
    fn run_as_user_must_run_as() {
        let psp = policy(
            "p",
            json!({"runAsUser": {"rule": "MustRunAs", "ranges": [{"min": 1000, "max": 2000}]}}),
        );
        let path = "spec.containers[0].securityContext.runAsUser";
        assert!(errors(&app_pod(json!({"runAsUser": 1500})), &psp).is_empty());
        assert_eq!(
            errors(&app_pod(json!({})), &psp),
            [format!("{path}: Required value")]
        );
        assert_eq!(
            errors(&app_pod(json!({"runAsUser": 5})), &psp),
            [format!(
                "{path}: Invalid value: 5: must be in the ranges: {RANGE}"
            )]
        );
        // The pod's runAsUser stands in for the container's.
        let inherited = pod(json!({"securityContext": {"runAsUser": 1500},
            "initContainers": [{"name": "i"}], "containers": [{"name": "app", "securityContext": {"runAsUser": 0}}]}));
        assert_eq!(
            errors(&inherited, &psp),
            [format!(
                "{path}: Invalid value: 0: must be in the ranges: {RANGE}"
            )]
        );
        // Wrong types count as absent.
        assert_eq!(
            errors(&app_pod(json!({"runAsUser": "1500"})), &psp),
            [format!("{path}: Required value")]
        );
    }

    #[test]
    fn run_as_user_must_run_as_non_root() {
        let psp = policy("p", json!({"runAsUser": {"rule": "MustRunAsNonRoot"}}));
        let at = "spec.containers[0].securityContext";
        assert_eq!(
            errors(&app_pod(json!({})), &psp),
            [format!("{at}.runAsNonRoot: Required value: must be true")]
        );
        assert_eq!(
            errors(
                &app_pod(json!({"runAsNonRoot": false, "runAsUser": 0})),
                &psp
            ),
            [format!(
                "{at}.runAsNonRoot: Invalid value: false: must be true"
            )]
        );
        assert_eq!(
            errors(&app_pod(json!({"runAsUser": 0})), &psp),
            [format!(
                "{at}.runAsUser: Invalid value: 0: running with the root UID is forbidden"
            )]
        );
        assert!(errors(&app_pod(json!({"runAsUser": 1000})), &psp).is_empty());
        let pod_level = pod(
            json!({"securityContext": {"runAsNonRoot": true}, "containers": [{"name": "app"}]}),
        );
        assert!(errors(&pod_level, &psp).is_empty());
    }

    #[test]
    fn run_as_group_reports_at_the_security_context() {
        let psp = policy(
            "p",
            json!({"runAsGroup": {"rule": "MustRunAs", "ranges": [{"min": 1000, "max": 2000}]}}),
        );
        let at = "spec.containers[0].securityContext";
        assert_eq!(
            errors(&app_pod(json!({})), &psp),
            [format!(
                "{at}: Invalid value: []int64(nil): unable to validate empty groups against required ranges"
            )]
        );
        assert_eq!(
            errors(&app_pod(json!({"runAsGroup": 5})), &psp),
            [format!(
                "{at}: Invalid value: []int64{{5}}: group 5 must be in the ranges: {RANGE}"
            )]
        );
        let pod_level =
            pod(json!({"securityContext": {"runAsGroup": 1000}, "containers": [{"name": "app"}]}));
        assert!(errors(&pod_level, &psp).is_empty());
    }

    #[test]
    fn privileged_and_proc_mount() {
        let privileged = app_pod(json!({"privileged": true, "procMount": "Unmasked"}));
        assert_eq!(
            errors(&privileged, &policy("p", json!({}))),
            [
                "spec.containers[0].securityContext.privileged: Invalid value: true: Privileged containers are not allowed",
                "spec.containers[0].securityContext.procMount: Invalid value: \"Unmasked\": ProcMountType is not allowed"
            ]
        );
        let open = policy(
            "p",
            json!({"privileged": true, "allowedProcMountTypes": ["Default", "Unmasked"]}),
        );
        assert!(errors(&privileged, &open).is_empty());
        assert!(
            errors(
                &app_pod(json!({"privileged": false})),
                &policy("p", json!({}))
            )
            .is_empty()
        );
    }

    #[test]
    fn capabilities_added_and_required_drops() {
        let psp = policy(
            "p",
            json!({"allowedCapabilities": ["NET_BIND_SERVICE"], "requiredDropCapabilities": ["NET_RAW"]}),
        );
        let at = "spec.containers[0].securityContext.capabilities";
        let adds = app_pod(
            json!({"capabilities": {"add": ["NET_ADMIN", "NET_BIND_SERVICE"], "drop": ["ALL"]}}),
        );
        assert_eq!(
            errors(&adds, &psp),
            [
                format!("{at}.add: Invalid value: \"NET_ADMIN\": capability may not be added"),
                format!(
                    "{at}.drop: Invalid value: []core.Capability{{\"ALL\"}}: NET_RAW is required to be dropped but was not found"
                )
            ]
        );
        assert_eq!(
            errors(&app_pod(json!({"capabilities": {}})), &psp),
            [format!(
                "{at}.drop: Invalid value: []core.Capability(nil): NET_RAW is required to be dropped but was not found"
            )]
        );
        assert_eq!(
            errors(&app_pod(json!({})), &psp),
            [format!(
                "{at}: Invalid value: \"null\": required capabilities are not set on the securityContext"
            )]
        );
        let fine =
            app_pod(json!({"capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["NET_RAW"]}}));
        assert!(errors(&fine, &psp).is_empty());
        let any = policy(
            "p",
            json!({"allowedCapabilities": ["*"], "requiredDropCapabilities": ["NET_RAW"]}),
        );
        assert!(errors(&adds, &any).is_empty());
    }

    #[test]
    fn host_ports_must_fall_in_the_ranges() {
        let ports = pod(json!({"containers": [{"name": "app", "ports": [
            {"containerPort": 8080, "hostPort": 8080},
            {"containerPort": 443, "hostPort": 443},
            {"containerPort": 9000}
        ]}]}));
        let psp = policy(
            "p",
            json!({"hostPorts": [{"min": 80, "max": 90}, {"min": 443, "max": 443}]}),
        );
        assert_eq!(
            errors(&ports, &psp),
            [
                "spec.containers[0].hostPort: Invalid value: 8080: Host port 8080 is not allowed to be used. Allowed ports: [80-90,443]"
            ]
        );
        assert_eq!(
            errors(&ports, &policy("p", json!({})))[0],
            "spec.containers[0].hostPort: Invalid value: 8080: Host port 8080 is not allowed to be used. Allowed ports: []"
        );
        let wide = policy("p", json!({"hostPorts": [{"min": 1, "max": 65535}]}));
        assert!(errors(&ports, &wide).is_empty());
    }

    #[test]
    fn read_only_root_filesystem() {
        let psp = policy("p", json!({"readOnlyRootFilesystem": true}));
        let path = "spec.containers[0].securityContext.readOnlyRootFilesystem";
        assert_eq!(
            errors(&app_pod(json!({})), &psp),
            [format!(
                "{path}: Invalid value: \"null\": ReadOnlyRootFilesystem may not be nil and must be set to true"
            )]
        );
        assert_eq!(
            errors(&app_pod(json!({"readOnlyRootFilesystem": false})), &psp),
            [format!(
                "{path}: Invalid value: false: ReadOnlyRootFilesystem must be set to true"
            )]
        );
        assert!(errors(&app_pod(json!({"readOnlyRootFilesystem": true})), &psp).is_empty());
    }

    #[test]
    fn privilege_escalation_needs_an_explicit_false() {
        let psp = policy("p", json!({"allowPrivilegeEscalation": false}));
        let path = "spec.containers[0].securityContext.allowPrivilegeEscalation";
        let detail = "Allowing privilege escalation for containers is not allowed";
        assert_eq!(
            errors(&app_pod(json!({})), &psp),
            [format!("{path}: Invalid value: \"null\": {detail}")]
        );
        assert_eq!(
            errors(&app_pod(json!({"allowPrivilegeEscalation": true})), &psp),
            [format!("{path}: Invalid value: true: {detail}")]
        );
        assert!(errors(&app_pod(json!({"allowPrivilegeEscalation": false})), &psp).is_empty());
        // Unset in the policy, escalation is allowed (the v1beta1 default).
        let open = policy("p", json!({}));
        assert!(errors(&app_pod(json!({"allowPrivilegeEscalation": true})), &open).is_empty());
    }

    #[test]
    fn sysctls_safe_unsafe_and_forbidden() {
        let sysctls = pod(json!({"securityContext": {"sysctls": [
            {"name": "kernel.shm_rmid_forced", "value": "1"},
            {"name": "net.ipv4.tcp_syncookies", "value": "1"},
            {"name": "net.core.somaxconn", "value": "1024"},
            {"name": "kernel.msgmax", "value": "1"}
        ]}}));
        let psp = policy(
            "p",
            json!({"forbiddenSysctls": ["kernel.shm_rmid_forced"], "allowedUnsafeSysctls": ["net.core.*"]}),
        );
        assert_eq!(
            errors(&sysctls, &psp),
            [
                "pod.spec.securityContext.sysctls[0]: Forbidden: sysctl \"kernel.shm_rmid_forced\" is not allowed",
                "pod.spec.securityContext.sysctls[3]: Forbidden: unsafe sysctl \"kernel.msgmax\" is not allowed"
            ]
        );
        let safe = pod(
            json!({"securityContext": {"sysctls": [{"name": "net.ipv4.ip_local_port_range", "value": "1 2"}]}}),
        );
        assert!(errors(&safe, &policy("p", json!({}))).is_empty());
    }

    #[test]
    fn se_linux_must_run_as() {
        let psp = policy(
            "p",
            json!({"seLinux": {"rule": "MustRunAs", "seLinuxOptions": {"level": "s0:c1,c2", "type": "spc_t"}}}),
        );
        let options = pod(json!({
            "securityContext": {"seLinuxOptions": {"level": "s0:c2,c1", "type": "spc_t"}},
            "containers": [
                {"name": "a"},
                {"name": "b", "securityContext": {"seLinuxOptions": {"level": "s0:c3", "type": "spc_t"}}}
            ]
        }));
        assert_eq!(
            errors(&options, &psp),
            [
                "spec.containers[1].securityContext.seLinuxOptions.level: Invalid value: \"s0:c3\": must be s0:c1,c2"
            ]
        );
        assert_eq!(
            errors(&app_pod(json!({})), &psp),
            [
                "spec.securityContext.seLinuxOptions: Required value",
                "spec.containers[0].securityContext.seLinuxOptions: Required value"
            ]
        );
    }

    #[test]
    fn apparmor_profiles_follow_the_allowed_list() {
        let psp = annotated_policy("p", json!({APPARMOR_ALLOWED: "runtime/default"}), json!({}));
        let key = "container.apparmor.security.beta.kubernetes.io/app";
        let with = |profile: &str| {
            json!({"metadata": {"name": "web", "annotations": {key: profile}},
                "spec": {"containers": [{"name": "app"}]}})
        };
        assert_eq!(
            errors(&app_pod(json!({})), &psp),
            [format!(
                "pod.metadata.annotations[{key}]: Forbidden: AppArmor profile must be set"
            )]
        );
        assert_eq!(
            errors(&with("unconfined"), &psp),
            [format!(
                "pod.metadata.annotations[{key}]: Forbidden: unconfined is not an allowed profile. Allowed values: \"runtime/default\""
            )]
        );
        assert!(errors(&with("runtime/default"), &psp).is_empty());
        assert!(errors(&with("unconfined"), &policy("p", json!({}))).is_empty());
    }

    #[test]
    fn runtime_class_is_defaulted_then_checked() {
        let psp = policy(
            "p",
            json!({"runtimeClass": {"allowedRuntimeClassNames": ["gvisor"], "defaultRuntimeClassName": "gvisor"}}),
        );
        let kata = pod(json!({"runtimeClassName": "kata", "containers": []}));
        assert_eq!(
            errors(&kata, &psp),
            ["spec.runtimeClassName: Invalid value: \"kata\""]
        );
        let mut unset = pod(json!({"containers": []}));
        assert!(mutate_pod(&mut unset, &psp));
        assert_eq!(unset["spec"]["runtimeClassName"], "gvisor");
        assert!(errors(&unset, &psp).is_empty());
    }

    #[test]
    fn pod_level_defaults() {
        let psp = annotated_policy(
            "p",
            json!({SECCOMP_DEFAULT: "runtime/default", SECCOMP_ALLOWED: "runtime/default"}),
            json!({
                "fsGroup": {"rule": "MustRunAs", "ranges": [{"min": 2000, "max": 3000}]},
                "supplementalGroups": {"rule": "MustRunAs", "ranges": [{"min": 5000, "max": 6000}]},
                "seLinux": {"rule": "MustRunAs", "seLinuxOptions": {"level": "s0:c1"}}
            }),
        );
        let mut bare = pod(json!({"containers": [{"name": "app"}]}));
        assert!(mutate_pod(&mut bare, &psp));
        assert_eq!(
            bare,
            json!({
                "metadata": {"name": "web", "annotations": {SECCOMP_POD: "runtime/default"}},
                "spec": {
                    "securityContext": {"supplementalGroups": [5000], "fsGroup": 2000,
                        "seLinuxOptions": {"level": "s0:c1"}},
                    // The pod's seLinuxOptions count as the container's.
                    "containers": [{"name": "app"}]
                }
            })
        );
        assert!(validate_pod(&bare, &psp).is_empty());
        assert!(!mutate_pod(&mut bare, &psp), "defaults are applied once");
        // Values already set stay; a profile in the field becomes the annotation.
        let mut set = pod(
            json!({"securityContext": {"fsGroup": 2500, "supplementalGroups": [5500],
            "seLinuxOptions": {"level": "s0:c1"}, "seccompProfile": {"type": "Unconfined"}}}),
        );
        assert!(mutate_pod(&mut set, &psp));
        assert_eq!(set["metadata"]["annotations"][SECCOMP_POD], "unconfined");
        assert_eq!(set["spec"]["securityContext"]["fsGroup"], 2500);
        assert_eq!(
            set["spec"]["securityContext"]["supplementalGroups"],
            json!([5500])
        );
    }

    #[test]
    fn container_defaults_go_to_the_container() {
        let psp = policy(
            "p",
            json!({
                "runAsUser": {"rule": "MustRunAs", "ranges": [{"min": 1000, "max": 2000}]},
                "runAsGroup": {"rule": "MustRunAs", "ranges": [{"min": 3000, "max": 4000}]},
                "defaultAddCapabilities": ["CHOWN", "AUDIT_WRITE", "KILL"],
                "requiredDropCapabilities": ["NET_RAW", "ALL"],
                "readOnlyRootFilesystem": true,
                "allowPrivilegeEscalation": false
            }),
        );
        let mut proxy = json!({"name": "proxy", "securityContext": {
            "capabilities": {"add": ["SYS_TIME"], "drop": ["MKNOD", "KILL"]}}});
        assert!(mutate_container(&mut proxy, None, &psp));
        assert_eq!(
            proxy["securityContext"],
            json!({
                "capabilities": {"add": ["AUDIT_WRITE", "CHOWN", "SYS_TIME"], "drop": ["ALL", "KILL", "MKNOD", "NET_RAW"]},
                "runAsUser": 1000,
                "runAsGroup": 3000,
                "readOnlyRootFilesystem": true,
                "allowPrivilegeEscalation": false
            })
        );
        assert!(!mutate_container(&mut proxy, None, &psp));
        // The policy's default for escalation comes before its `false`.
        let defaulted = policy(
            "p",
            json!({"defaultAllowPrivilegeEscalation": true, "allowPrivilegeEscalation": false}),
        );
        let mut app = json!({"name": "app"});
        assert!(mutate_container(&mut app, None, &defaulted));
        assert_eq!(
            app["securityContext"],
            json!({"allowPrivilegeEscalation": true})
        );
    }

    #[test]
    fn capabilities_stay_as_written_when_nothing_is_new() {
        let psp = policy(
            "p",
            json!({"defaultAddCapabilities": ["A"], "requiredDropCapabilities": ["NET_RAW"]}),
        );
        let original = json!({"name": "app", "securityContext": {
            "capabilities": {"add": ["B", "A"], "drop": ["NET_RAW"]}}});
        let mut container = original.clone();
        assert!(!mutate_container(&mut container, None, &psp));
        assert_eq!(container, original);
        // A default add the container drops is not added.
        let mut dropping =
            json!({"name": "app", "securityContext": {"capabilities": {"drop": ["A", "NET_RAW"]}}});
        assert!(!mutate_container(&mut dropping, None, &psp));
    }

    #[test]
    fn pod_level_fields_suppress_container_defaults() {
        let non_root = policy("p", json!({"runAsUser": {"rule": "MustRunAsNonRoot"}}));
        let must = policy(
            "p",
            json!({"runAsUser": {"rule": "MustRunAs", "ranges": [{"min": 1000, "max": 2000}]},
                "seLinux": {"rule": "MustRunAs", "seLinuxOptions": {"type": "t"}}}),
        );
        let pod_context = json!({"runAsUser": 1500, "seLinuxOptions": {"type": "t"}});
        for psp in [&non_root, &must] {
            let mut container = json!({"name": "app"});
            assert!(!mutate_container(&mut container, Some(&pod_context), psp));
            assert_eq!(container, json!({"name": "app"}));
        }
        let mut alone = json!({"name": "app"});
        assert!(mutate_container(&mut alone, None, &non_root));
        assert_eq!(alone["securityContext"], json!({"runAsNonRoot": true}));
        let mut alone = json!({"name": "app"});
        assert!(mutate_container(&mut alone, None, &must));
        assert_eq!(
            alone["securityContext"],
            json!({"runAsUser": 1000, "seLinuxOptions": {"type": "t"}})
        );
    }

    #[test]
    fn apparmor_defaults_are_pod_annotations() {
        let psp = annotated_policy("p", json!({APPARMOR_DEFAULT: "runtime/default"}), json!({}));
        assert_eq!(
            apparmor_annotation(&psp, "app"),
            Some((
                "container.apparmor.security.beta.kubernetes.io/app".to_string(),
                "runtime/default".to_string()
            ))
        );
        assert_eq!(apparmor_annotation(&policy("p", json!({})), "app"), None);
        let mut two = json!({
            "metadata": {"annotations": {"container.apparmor.security.beta.kubernetes.io/b": "unconfined"}},
            "spec": {"initContainers": [{"name": "a"}], "containers": [{"name": "b"}]}
        });
        assert!(mutate_pod(&mut two, &psp));
        assert_eq!(
            two["metadata"]["annotations"],
            json!({
                "container.apparmor.security.beta.kubernetes.io/a": "runtime/default",
                "container.apparmor.security.beta.kubernetes.io/b": "unconfined"
            })
        );
    }

    #[test]
    fn an_unmutating_policy_beats_an_earlier_mutating_one() {
        let mutating = policy("a-restricted", json!({"readOnlyRootFilesystem": true}));
        let permissive = policy("b-permissive", json!({}));
        let app = app_pod(json!({}));
        let admitted = admit(&app, &[&permissive, &mutating]).expect("admitted");
        assert_eq!(admitted.policy, "b-permissive");
        assert!(!admitted.mutated);
        let mut expected = app.clone();
        expected["metadata"]["annotations"] = json!({"kubernetes.io/psp": "b-permissive"});
        assert_eq!(admitted.pod, expected);
    }

    #[test]
    fn mutating_policies_are_tried_in_name_order() {
        let user = |uid: i64| json!({"runAsUser": {"rule": "MustRunAs", "ranges": [{"min": uid, "max": uid}]}});
        let (a, b) = (policy("a", user(1000)), policy("b", user(2000)));
        let admitted = admit(&app_pod(json!({})), &[&b, &a]).expect("admitted");
        assert_eq!(admitted.policy, "a");
        assert!(admitted.mutated);
        assert_eq!(
            admitted.pod["spec"]["containers"][0]["securityContext"]["runAsUser"],
            1000
        );
        assert_eq!(
            admitted.pod["metadata"]["annotations"]["kubernetes.io/psp"],
            "a"
        );
        // A policy the pod already satisfies is still preferred, whatever its name.
        let admitted = admit(&app_pod(json!({"runAsUser": 2000})), &[&a, &b]).expect("admitted");
        assert_eq!((admitted.policy.as_str(), admitted.mutated), ("b", false));
    }

    #[test]
    fn every_policy_failing_is_one_aggregated_message() {
        let a = policy("a", json!({"hostNetwork": true}));
        let b = policy("b", json!({"privileged": true}));
        let bad = pod(json!({"hostNetwork": true,
            "containers": [{"name": "app", "securityContext": {"privileged": true}}]}));
        let refused = admit(&bad, &[&b, &a]).expect_err("refused");
        assert_eq!(
            super::super::forbidden("web", &refused),
            "pods \"web\" is forbidden: PodSecurityPolicy: unable to admit pod: [\
             spec.containers[0].securityContext.privileged: Invalid value: true: Privileged containers are not allowed \
             spec.securityContext.hostNetwork: Invalid value: true: Host network is not allowed to be used]"
        );
    }

    #[test]
    fn without_a_usable_policy_there_is_no_provider() {
        let none = "PodSecurityPolicy: no providers available to validate pod request";
        let app = app_pod(json!({}));
        assert_eq!(admit(&app, &[]), Err(none.to_string()));
        // The API requires the four strategies; a policy without one is skipped.
        let incomplete =
            json!({"metadata": {"name": "x"}, "spec": {"runAsUser": {"rule": "RunAsAny"}}});
        let no_ranges = policy("y", json!({"fsGroup": {"rule": "MustRunAs"}}));
        assert_eq!(
            validate(&app, &[&incomplete, &no_ranges]),
            Err(none.to_string())
        );
        assert_eq!(
            admit(&app, &[&incomplete, &policy("z", json!({}))]).map(|a| a.policy),
            Ok("z".to_string())
        );
    }

    #[test]
    fn validate_tries_the_annotated_policy_first() {
        let (a, b) = (policy("a", json!({})), policy("b", json!({})));
        let mut app = app_pod(json!({}));
        assert_eq!(validate(&app, &[&b, &a]), Ok("a".to_string()));
        app["metadata"]["annotations"] = json!({"kubernetes.io/psp": "b"});
        assert_eq!(validate(&app, &[&a, &b]), Ok("b".to_string()));
        // A policy that would change the pod is passed over, without an error.
        let restricted = policy("a", json!({"readOnlyRootFilesystem": true}));
        app["metadata"]["annotations"] = json!({"kubernetes.io/psp": "a"});
        assert_eq!(validate(&app, &[&restricted, &b]), Ok("b".to_string()));
        assert_eq!(
            validate(&app, &[&restricted]),
            Err("PodSecurityPolicy: unable to validate pod: []".to_string())
        );
        let privileged = app_pod(json!({"privileged": true}));
        assert_eq!(
            validate(&privileged, &[&a]),
            Err("PodSecurityPolicy: unable to validate pod: [spec.containers[0].securityContext.privileged: Invalid value: true: Privileged containers are not allowed]".to_string())
        );
    }

    #[test]
    fn admit_defaults_the_seccomp_profile() {
        let psp = annotated_policy(
            "p",
            json!({SECCOMP_DEFAULT: "runtime/default", SECCOMP_ALLOWED: "runtime/default"}),
            json!({}),
        );
        let admitted = admit(&app_pod(json!({})), &[&psp]).expect("admitted");
        assert!(admitted.mutated);
        assert_eq!(
            admitted.pod["metadata"]["annotations"][SECCOMP_POD],
            "runtime/default"
        );
        // A default with no allowed list fails its own validation.
        let unlisted =
            annotated_policy("q", json!({SECCOMP_DEFAULT: "runtime/default"}), json!({}));
        assert_eq!(
            admit(&app_pod(json!({})), &[&unlisted]).expect_err("refused"),
            "PodSecurityPolicy: unable to admit pod: [\
             pod.metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: Forbidden: seccomp may not be set \
             pod.metadata.annotations[container.seccomp.security.alpha.kubernetes.io/app]: Forbidden: seccomp may not be set]"
        );
    }

    #[test]
    fn malformed_input_does_not_panic() {
        let psp = policy(
            "p",
            json!({"runAsUser": {"rule": "MustRunAs", "ranges": [{"min": 1, "max": 2}]},
                "requiredDropCapabilities": ["ALL"], "readOnlyRootFilesystem": true}),
        );
        for mut odd in [
            json!(42),
            json!({"spec": "x"}),
            json!({"metadata": [], "spec": {"securityContext": 1, "containers": "y", "volumes": [1, {}]}}),
            json!({"spec": {"containers": [7, {"name": 3, "securityContext": "s", "ports": [{"hostPort": "80"}]}]}}),
        ] {
            let _ = validate_pod(&odd, &psp);
            let _ = mutate_pod(&mut odd, &psp);
            let _ = validate_pod(&odd, &psp);
            let _ = admit(&odd, &[&psp, &json!(null)]);
        }
        let mut number = json!(42);
        assert!(!mutate_pod(&mut number, &psp));
        assert!(!mutate_container(&mut number, None, &psp));
    }
}

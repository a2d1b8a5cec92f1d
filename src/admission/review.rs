//! One workload through the apiserver, offline: the object is created (its
//! pod template validated), then its controller creates a pod, which goes
//! through the admission plugins in the apiserver's order.

use serde_json::{Value, json};

use super::chain::{Admission, Chain, Injected, Injector};
use super::webhook::Webhook;
use super::{Verdict, api};
use crate::cluster::{ClusterContext, KubeVersion};
use crate::json::Field;
use crate::workload::WorkloadType;

/// What the apiserver would say about a workload, and what happened to its pod.
#[derive(Debug, Clone)]
pub struct Review {
    /// In the order the apiserver would reach them. The apiserver stops at
    /// the first rejection by a validating plugin; every validator's verdict
    /// is given here, so that one run shows everything to fix.
    pub verdicts: Vec<Verdict>,
    /// The pod through the admission chain, when the workload was valid.
    pub admission: Option<Admission>,
}

/// The cluster a workload is created in.
pub struct Target<'a> {
    /// Namespace of objects that name none.
    pub default_namespace: &'a str,
    pub cluster: &'a ClusterContext,
    pub version: KubeVersion,
    /// Mutating webhooks, in the apiserver's order (none for a pre-injected manifest's check).
    pub webhooks: &'a [Webhook],
    pub injector: &'a Injector<'a>,
    /// Record every step of the chain.
    pub trace: bool,
}

/// An injector for chains without the mesh's webhook.
pub fn no_injector(_: &Value) -> Result<Injected, String> {
    Ok(Injected::Left("no injector".into()))
}

/// Review `object`, a workload of `kind`, created in its namespace (or the
/// target's default one).
pub fn review(object: &Value, kind: &WorkloadType, target: &Target<'_>) -> Review {
    let mut verdicts = Vec::new();
    let template = kind
        .template_path()
        .try_fold(object, |at, token| at.field(token))
        .unwrap_or(&Value::Null);
    let is_pod = kind.is_pod();
    let namespace = object
        .field("metadata")
        .and_then(|m| m.field("namespace"))
        .and_then(Value::as_str)
        .filter(|ns| !ns.is_empty())
        .unwrap_or(target.default_namespace)
        .to_string();
    let version = target.version;
    // A built-in kind's pod template (or Pod) is validated by the apiserver
    // itself, which refuses a container without a name; a custom resource's
    // controller (Knative's, for one) names them.
    let builtin = crate::workload::builtin_types().contains(kind);
    if builtin {
        let spec = template.field("spec").unwrap_or(&Value::Null);
        let errors = api::unnamed_containers(spec, &spec_path(kind));
        if !errors.is_empty() {
            reject_invalid(&errors, object, kind, &mut verdicts);
            return Review {
                verdicts,
                admission: None,
            };
        }
    }
    // A built-in kind's name is an RFC 1123 subdomain; a custom resource's
    // is only a path segment.
    let name_errors = if builtin {
        api::object_name_errors(object, version)
    } else {
        Vec::new()
    };
    // The pod's trip through the chain can only change the verdict when a
    // plugin has something to act on; fields are dropped only before 1.34.
    // Otherwise the object's own validation is the whole review, and the
    // spec need not be copied.
    let chain_matters = target.trace
        || !target.webhooks.is_empty()
        || target.cluster.has_policies(&namespace, version);
    let drops = !version.has_pod_level_resources();
    let spec = template.field("spec").unwrap_or(&Value::Null);
    // Host ports under hostNetwork are defaulted in the pod but (from 1.28)
    // not in the template, so the two validations can differ: the chain
    // decides. (Volumes, defaulted alike in both, are not validated.)
    if !chain_matters && !drops && !api::host_ports_default(spec) {
        check_object(spec, object, kind, version, &name_errors, &mut verdicts);
        return Review {
            verdicts,
            admission: None,
        };
    }
    let mut spec = spec.clone();

    // Creating a workload: its template defaulted, fields of disabled
    // features dropped from it, then validation. (A Pod goes through this
    // after admission.) The apiserver stops at an invalid template; the
    // review goes on to list the validating plugins' verdicts on its pod.
    let mut template_refused = false;
    if !is_pod {
        api::default_template(&mut spec, version);
        for warning in api::drop_disabled_fields(&mut spec, &spec_path(kind), version) {
            verdicts.push(Verdict::warning("apiserver", warning));
        }
        template_refused = !check_object(&spec, object, kind, version, &name_errors, &mut verdicts);
    }

    // Creating its pod.
    let name = pod_name(object, kind);
    let pod = pod_of(template, spec, &name, &namespace, kind);
    let chain = Chain {
        version: target.version,
        cluster: target.cluster,
        webhooks: target.webhooks,
        injector: target.injector,
        template_checked: !is_pod,
        template_refused,
        object_errors: if is_pod { name_errors } else { Vec::new() },
        trace: target.trace,
    };
    let admission = chain.admit(pod, &namespace, &name);
    verdicts.extend(admission.verdicts.iter().cloned());
    Review {
        verdicts,
        // From an invalid template no pod is created: its review gave
        // verdicts only.
        admission: (!template_refused).then_some(admission),
    }
}

/// Mark each of `verdicts`, the review of `injected` (a workload of `kind`),
/// that `original`, the same workload before injection, draws too in
/// `target`: the apiserver would say it either way. Verdicts are compared by
/// plugin, severity and message, with each container's place in its list
/// (`containers[1]`) read as its name, since the injected containers move
/// the workload's own.
pub fn mark_preexisting(
    verdicts: &mut [Verdict],
    injected: &Value,
    original: &Value,
    kind: &WorkloadType,
    target: &Target<'_>,
) {
    if verdicts.is_empty() {
        return;
    }
    let before = review(original, kind, target).verdicts;
    let spec_of = |object: &'_ Value| -> Value {
        kind.template_path()
            .try_fold(object, |at, token| at.field(token))
            .and_then(|template| template.field("spec"))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let (before_spec, after_spec) = (spec_of(original), spec_of(injected));
    let before: Vec<(super::Severity, &str, String)> = before
        .iter()
        .map(|v| {
            (
                v.severity,
                v.plugin,
                by_container_name(&v.message, &before_spec),
            )
        })
        .collect();
    for verdict in verdicts {
        let message = by_container_name(&verdict.message, &after_spec);
        verdict.before_injection = before.iter().any(|(severity, plugin, earlier)| {
            *severity == verdict.severity && *plugin == verdict.plugin && *earlier == message
        });
    }
}

/// `message` with every `containers[<n>]`, `initContainers[<n>]` and
/// `ephemeralContainers[<n>]` of `spec` written `containers[<name>]`.
fn by_container_name(message: &str, spec: &Value) -> String {
    const LISTS: [&str; 3] = ["initContainers", "ephemeralContainers", "containers"];
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    'scan: while !rest.is_empty() {
        for list in LISTS {
            let Some(after) = rest.strip_prefix(list).and_then(|r| r.strip_prefix('[')) else {
                continue;
            };
            let digits = after.chars().take_while(char::is_ascii_digit).count();
            let name = after
                .get(..digits)
                .and_then(|n| n.parse::<usize>().ok())
                .and_then(|index| spec.field(list)?.get(index))
                .map(super::container_name);
            let tail = after.get(digits..).and_then(|t| t.strip_prefix(']'));
            if let (Some(name), Some(tail)) = (name, tail) {
                out.push_str(list);
                out.push('[');
                out.push_str(name);
                out.push(']');
                rest = tail;
                continue 'scan;
            }
        }
        let mut chars = rest.chars();
        out.extend(chars.next());
        rest = chars.as_str();
    }
    out
}

/// The validation of the object being created (a workload with its pod
/// template, or a Pod), `name_errors` those of its name: its warnings and
/// its rejection go to `verdicts`; returns whether it is valid.
fn check_object(
    spec: &Value,
    object: &Value,
    kind: &WorkloadType,
    version: KubeVersion,
    name_errors: &[super::field::FieldError],
    verdicts: &mut Vec<Verdict>,
) -> bool {
    let (spec_errors, warnings) = api::validate(spec, &spec_path(kind), version);
    // The object's metadata is validated before its spec.
    let mut errors = name_errors.to_vec();
    errors.extend(spec_errors);
    // The apiserver asks for its warnings only once the object is valid
    // (`BeforeCreate` in `staging/src/k8s.io/apiserver/pkg/registry/rest/create.go`).
    if errors.is_empty() {
        verdicts.extend(
            warnings
                .into_iter()
                .map(|w| Verdict::warning("apiserver", w)),
        );
        return true;
    }
    reject_invalid(&errors, object, kind, verdicts);
    false
}

/// The apiserver's refusal of an invalid object, as a verdict.
fn reject_invalid(
    errors: &[super::field::FieldError],
    object: &Value,
    kind: &WorkloadType,
    verdicts: &mut Vec<Verdict>,
) {
    let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
    verdicts.push(Verdict::rejection(
        "validation",
        format!(
            "{} {} is invalid: {}",
            qualified_kind(kind),
            super::field::go_quote(&super::object_name(object)),
            super::aggregate(&errors)
        ),
    ));
}

/// Where the pod spec sits in the object, as a field path.
fn spec_path(kind: &WorkloadType) -> String {
    let mut path = String::with_capacity(kind.path.len() + 6);
    for token in kind.template_path() {
        path.push_str(token);
        path.push('.');
    }
    path.push_str("spec");
    path
}

/// `Deployment.apps`, `Pod`: the kind as the apiserver's "is invalid" messages print it.
fn qualified_kind(kind: &WorkloadType) -> String {
    match kind.api_version.split_once('/') {
        Some((group, _)) => format!("{}.{group}", kind.kind),
        None => kind.kind.clone(),
    }
}

/// The name the pods of a workload get in the apiserver's messages: a Pod's
/// own name; `web-0` for the first pod of StatefulSet `web`; otherwise the
/// prefix the controller generates names from, `web-` (a Deployment's pods
/// also carry a hash of the template, `web-5d4b9c8f7-`, which the tool
/// cannot compute offline, so it is left out).
pub fn pod_name(object: &Value, kind: &WorkloadType) -> String {
    let name = super::object_name(object);
    if kind.is_pod() {
        return name;
    }
    if kind.kind == "StatefulSet" {
        return format!("{name}-0");
    }
    format!("{name}-")
}

/// The Pod the controller would create from `template` (its spec given as
/// `spec`), named `name` (see [`pod_name`]).
pub fn pod_of(
    template: &Value,
    spec: Value,
    name: &str,
    namespace: &str,
    kind: &WorkloadType,
) -> Value {
    let metadata = template.field("metadata");
    let mut meta = serde_json::Map::new();
    if kind.is_pod() || kind.kind == "StatefulSet" {
        meta.insert("name".into(), json!(name));
    } else {
        meta.insert("generateName".into(), json!(name));
    }
    meta.insert("namespace".into(), json!(namespace));
    for field in ["labels", "annotations"] {
        if let Some(value) = metadata
            .and_then(|m| m.field(field))
            .filter(|v| v.is_object())
        {
            meta.insert(field.into(), value.clone());
        }
    }
    // Built by hand: `json!` would copy the spec value by value.
    let mut pod = serde_json::Map::new();
    pod.insert("apiVersion".into(), json!("v1"));
    pod.insert("kind".into(), json!("Pod"));
    pod.insert("metadata".into(), Value::Object(meta));
    pod.insert("spec".into(), spec);
    Value::Object(pod)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::builtin_types;

    fn kind(name: &str) -> WorkloadType {
        builtin_types()
            .iter()
            .find(|t| t.kind == name)
            .cloned()
            .expect("a built-in kind")
    }

    fn check(
        object: &Value,
        kind: &WorkloadType,
        cluster: &ClusterContext,
        version: KubeVersion,
    ) -> Review {
        let target = Target {
            default_namespace: "default",
            cluster,
            version,
            webhooks: &[],
            injector: &no_injector,
            trace: false,
        };
        review(object, kind, &target)
    }

    fn context(objects: &[Value]) -> ClusterContext {
        let mut cluster = ClusterContext::new(Vec::new());
        for object in objects {
            cluster.add(object, "shop");
        }
        cluster
    }

    fn deployment(containers: Value, inits: Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": containers, "initContainers": inits}}}})
    }

    fn messages(review: &Review) -> Vec<String> {
        review.verdicts.iter().map(|v| v.message.clone()).collect()
    }

    #[test]
    fn quota_and_limit_range_verdicts_name_the_pod() {
        let cluster = context(&[
            json!({"kind": "ResourceQuota", "metadata": {"name": "mem"}, "spec": {"hard": {"limits.memory": "8Gi"}}}),
            json!({"kind": "LimitRange", "metadata": {"name": "max"}, "spec": {"limits": [{"type": "Container", "max": {"memory": "1Gi"}}]}}),
        ]);
        let web = deployment(
            json!([{"name": "app", "resources": {"limits": {"memory": "2Gi"}}}, {"name": "linkerd-proxy"}]),
            json!([]),
        );
        let review = check(&web, &kind("Deployment"), &cluster, KubeVersion::new(1, 33));
        // The LimitRange's max is the default limit: the proxy gets 1Gi, the app keeps its 2Gi.
        assert_eq!(
            messages(&review),
            [
                "pods \"web-\" is forbidden: maximum memory usage per Container is 1Gi, but limit is 2Gi"
            ]
        );
        let pod = review.admission.expect("a pod").pod;
        assert_eq!(
            pod["spec"]["containers"][1]["resources"]["limits"]["memory"],
            "1Gi"
        );
        assert_eq!(
            pod["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
            "LimitRanger plugin set: memory request for container linkerd-proxy; memory limit for container linkerd-proxy"
        );
        let quota_only = context(&[
            json!({"kind": "ResourceQuota", "metadata": {"name": "mem"}, "spec": {"hard": {"limits.memory": "8Gi"}}}),
        ]);
        let review = check(
            &web,
            &kind("Deployment"),
            &quota_only,
            KubeVersion::new(1, 33),
        );
        assert_eq!(
            messages(&review),
            [
                "pods \"web-\" is forbidden: failed quota: mem: must specify limits.memory for: linkerd-proxy"
            ]
        );
    }

    /// An invalid template creates no pod: its refusal is said once (not
    /// again as the pod's), and the validating plugins' verdicts on the pod
    /// it would make are listed beside it.
    #[test]
    fn invalid_templates_stop_before_the_pod() {
        let web = deployment(
            json!([{"name": "app"}]),
            json!([{"name": "linkerd-proxy", "restartPolicy": "Always", "startupProbe": {"httpGet": {"port": 4191}}}]),
        );
        let cluster = context(&[]);
        let ok = check(&web, &kind("Deployment"), &cluster, KubeVersion::new(1, 29));
        assert!(ok.verdicts.is_empty(), "{:?}", ok.verdicts);
        let old = check(&web, &kind("Deployment"), &cluster, KubeVersion::new(1, 28));
        assert_eq!(
            messages(&old),
            [
                "spec.template.spec.initContainers[0].restartPolicy is dropped by the apiserver (the SidecarContainers feature gate is off by default in 1.28): init container linkerd-proxy must exit before the app containers start",
                "Deployment.apps \"web\" is invalid: spec.template.spec.initContainers[0].startupProbe: Forbidden: may not be set for init containers without restartPolicy=Always"
            ]
        );
        assert!(old.admission.is_none());

        // In a namespace that enforces baseline, Pod Security's verdict on
        // the privileged app is listed beside validation's.
        let privileged = deployment(
            json!([{"name": "app", "securityContext": {"privileged": true}}]),
            json!([{"name": "linkerd-proxy", "restartPolicy": "Always", "startupProbe": {"httpGet": {"port": 4191}}}]),
        );
        let baseline = context(&[json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "shop", "labels": {"pod-security.kubernetes.io/enforce": "baseline"}}})]);
        let both = check(
            &privileged,
            &kind("Deployment"),
            &baseline,
            KubeVersion::new(1, 28),
        );
        let rejections: Vec<(&str, &str)> = both
            .verdicts
            .iter()
            .filter(|v| v.severity == crate::admission::Severity::Rejection)
            .map(|v| (v.plugin, v.message.as_str()))
            .collect();
        assert_eq!(
            rejections,
            [
                (
                    "validation",
                    "Deployment.apps \"web\" is invalid: spec.template.spec.initContainers[0].startupProbe: Forbidden: may not be set for init containers without restartPolicy=Always"
                ),
                (
                    "PodSecurity",
                    "pods \"web-\" is forbidden: violates PodSecurity \"baseline:latest\": privileged (container \"app\" must not set securityContext.privileged=true)"
                ),
            ]
        );
        assert!(both.admission.is_none());
    }

    #[test]
    fn containers_are_compared_by_name_wherever_they_stand() {
        let before = json!({"initContainers": [{"name": "init"}], "containers": [{"name": "web"}]});
        let after = json!({"initContainers": [{"name": "init"}], "containers": [{"name": "proxy"}, {"name": "web"}]});
        let message = |index: usize| {
            format!(
                "Deployment.apps \"web\" is invalid: [spec.template.spec.containers[{index}].lifecycle.preStop.sleep: x, spec.initContainers[0].name: y]"
            )
        };
        assert_eq!(
            by_container_name(&message(0), &before),
            by_container_name(&message(1), &after)
        );
        assert_eq!(
            by_container_name("containers[7] containers[x] ephemeralContainers[0]", &after),
            "containers[7] containers[x] ephemeralContainers[0]"
        );
        assert_ne!(
            by_container_name(&message(0), &after),
            by_container_name(&message(1), &after)
        );
    }

    #[test]
    fn a_verdict_the_workload_drew_before_injection_is_marked() {
        let cluster = context(&[
            json!({"kind": "ResourceQuota", "metadata": {"name": "mem"}, "spec": {"hard": {"limits.memory": "1Gi"}}}),
        ]);
        let target = Target {
            default_namespace: "default",
            cluster: &cluster,
            version: KubeVersion::new(1, 33),
            webhooks: &[],
            injector: &no_injector,
            trace: false,
        };
        let bare = deployment(json!([{"name": "app"}]), json!([]));
        let sized = json!({"limits": {"memory": "64Mi"}});
        let injected = deployment(
            json!([{"name": "app"}, {"name": "proxy", "resources": sized}]),
            json!([]),
        );
        let mut verdicts = review(&injected, &kind("Deployment"), &target).verdicts;
        mark_preexisting(
            &mut verdicts,
            &injected,
            &bare,
            &kind("Deployment"),
            &target,
        );
        assert_eq!(
            messages(&Review {
                verdicts: verdicts.clone(),
                admission: None
            }),
            ["pods \"web-\" is forbidden: failed quota: mem: must specify limits.memory for: app"]
        );
        assert!(verdicts[0].before_injection);
        // A proxy without the limit changes the message: the injection's.
        let unsized_proxy = deployment(json!([{"name": "app"}, {"name": "proxy"}]), json!([]));
        let mut verdicts = review(&unsized_proxy, &kind("Deployment"), &target).verdicts;
        mark_preexisting(
            &mut verdicts,
            &unsized_proxy,
            &bare,
            &kind("Deployment"),
            &target,
        );
        assert!(!verdicts[0].before_injection);
        assert!(verdicts[0].blocks());
    }

    /// The shortest review (the object's validation alone, where nothing
    /// in the cluster acts on the pod) says what the pod's trip through the
    /// chain says.
    #[test]
    fn the_shortest_review_says_what_the_chain_says() {
        let volume_sets = [
            json!(null),
            json!([{"name": "scratch"}]),
            json!([{"name": "nulled", "emptyDir": null}, {"name": "data", "emptyDir": {}}]),
            json!([{"name": "Bad_Name"}, {"name": "Bad_Name"}]),
            json!([{"name": "c", "configMap": {"name": "c"}}, {"name": "s", "secret": null}]),
        ];
        let container_sets = [
            json!([{"name": "app", "image": "a", "ports": [{"containerPort": 80}]}]),
            json!([{"name": "app", "image": "a", "ports": [{"containerPort": 80, "hostPort": 80}],
                "volumeMounts": [{"name": "scratch", "mountPath": "/s"}]}]),
            json!([{"name": "app", "image": "a", "volumeMounts": [{"name": "missing", "mountPath": "/m"}]}]),
            json!([{"name": "app", "image": "a", "resources": {"limits": {"memory": "64Mi"}, "requests": {"memory": "1Gi"}}}]),
            json!([{"name": "app"}, {"name": "app", "image": "b"}]),
            json!([{"name": "a", "image": "a", "ports": [{"containerPort": 80}]},
                {"name": "b", "image": "b", "ports": [{"containerPort": 80}]}]),
        ];
        let cluster = context(&[]);
        let mut compared = 0;
        for kind_name in ["Deployment", "Pod", "StatefulSet", "CronJob"] {
            let kind = kind(kind_name);
            for volumes in &volume_sets {
                for containers in &container_sets {
                    for host_network in [false, true] {
                        for name in ["web", "Web_1"] {
                            let mut spec =
                                json!({"containers": containers, "hostNetwork": host_network});
                            if !volumes.is_null() {
                                spec["volumes"] = volumes.clone();
                            }
                            let mut object = json!({"apiVersion": "v1", "kind": kind_name,
                                "metadata": {"name": name, "namespace": "shop"}});
                            let mut at = &mut object;
                            for token in kind.template_path() {
                                at = &mut at[token];
                            }
                            *at = json!({"metadata": {"labels": {"app": "web"}}, "spec": spec});
                            for version in [(1, 27), (1, 28), (1, 33), (1, 37)] {
                                let target = |trace: bool| Target {
                                    default_namespace: "default",
                                    cluster: &cluster,
                                    version: KubeVersion::new(version.0, version.1),
                                    webhooks: &[],
                                    injector: &no_injector,
                                    trace,
                                };
                                let shortest = review(&object, &kind, &target(false));
                                // A trace takes the pod through the chain.
                                let chain = review(&object, &kind, &target(true));
                                assert!(chain.admission.is_some() || !chain.verdicts.is_empty());
                                assert_eq!(
                                    shortest.verdicts, chain.verdicts,
                                    "{kind_name} {version:?} {object}"
                                );
                                compared += 1;
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(compared, 4 * 5 * 6 * 2 * 2 * 4);
    }

    #[test]
    fn pods_are_named_as_their_controllers_name_them() {
        let object = json!({"metadata": {"name": "db"}});
        assert_eq!(pod_name(&object, &kind("StatefulSet")), "db-0");
        assert_eq!(pod_name(&object, &kind("Job")), "db-");
        assert_eq!(
            pod_name(&json!({"metadata": {"generateName": "x-"}}), &kind("Pod")),
            "x-"
        );
        assert_eq!(qualified_kind(&kind("Pod")), "Pod");
        assert_eq!(qualified_kind(&kind("CronJob")), "CronJob.batch");
    }
}

//! Pod Security Admission (the `PodSecurity` plugin), offline: the namespace
//! labels read as policies, the checks of the Pod Security Standards at a
//! policy version, and the verdicts in the apiserver's words. Validating only:
//! nothing here changes the pod.
//!
//! Facts: `kubernetes/pod-security-admission` (`api/helpers.go` for the labels,
//! `policy/check_*.go` for the checks, `policy/registry.go` for their order,
//! `admission/admission.go` for the messages).
//!
//! Here: the labels read as policies and the review of a pod. `checks.rs`:
//! the table of checks and how they read a pod and phrase what they find;
//! `baseline.rs` and `restricted.rs`: the checks of each level.

use std::collections::BTreeSet;
use std::fmt;

use serde_json::{Map, Value};

use super::field::{FieldError, go_quote};
use super::{Verdict, aggregate, container_name, containers_with_paths, forbidden};
use crate::cluster::KubeVersion;
use crate::json::Field;

mod baseline;
mod checks;
mod restricted;

pub use baseline::BASELINE_CAPABILITIES;
use baseline::*;
use checks::*;
use restricted::*;

const PLUGIN: &str = "PodSecurity";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Privileged,
    Baseline,
    Restricted,
}

impl Level {
    fn name(self) -> &'static str {
        match self {
            Level::Privileged => "privileged",
            Level::Baseline => "baseline",
            Level::Restricted => "restricted",
        }
    }
}

/// A level at a policy version; `version: None` is `latest`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    pub level: Level,
    pub version: Option<KubeVersion>,
}

/// `restricted:latest`, `baseline:v1.29` — the text inside the quotes of the messages.
impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.version {
            Some(version) => write!(f, "{}:v{version}", self.level.name()),
            None => write!(f, "{}:latest", self.level.name()),
        }
    }
}

/// The enforce, warn and audit policies of a namespace, read from its labels
/// (`pod-security.kubernetes.io/<mode>` and `<mode>-version`). A mode without a label is None.
/// An invalid level or version is evaluated as the plugin does and reported in `problems`:
/// a bad enforce level is `restricted`, a bad warn or audit level is `privileged`
/// (the plugin fails open for those two), a bad version is `latest`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NamespacePolicies {
    pub enforce: Option<Policy>,
    pub warn: Option<Policy>,
    pub audit: Option<Policy>,
    pub problems: Vec<String>,
}

const LABEL_PREFIX: &str = "pod-security.kubernetes.io/";
const BAD_LEVEL: &str = "must be one of privileged, baseline, restricted";
const BAD_VERSION: &str = "must be \"latest\" or \"v1.x\"";

pub fn namespace_policies(labels: Option<&Map<String, Value>>) -> NamespacePolicies {
    // Most namespaces (and every unknown one) have no such label: all privileged.
    let labels = labels.filter(|l| l.keys().any(|k| k.starts_with(LABEL_PREFIX)));
    if labels.is_none() {
        return NamespacePolicies::default();
    }
    let mut problems = Vec::new();
    // The plugin reads enforce, audit, then warn; the problems keep that order.
    let enforce = mode_policy(labels, "enforce", Level::Restricted, &mut problems);
    let audit = mode_policy(labels, "audit", Level::Privileged, &mut problems);
    let warn = mode_policy(labels, "warn", Level::Privileged, &mut problems);
    NamespacePolicies {
        enforce,
        warn,
        audit,
        problems,
    }
}

/// One mode's policy. Without a level label the mode is the plugin's default,
/// `privileged`, which checks nothing: None. A version label alone is still
/// validated.
fn mode_policy(
    labels: Option<&Map<String, Value>>,
    mode: &str,
    level_if_invalid: Level,
    problems: &mut Vec<String>,
) -> Option<Policy> {
    // Label values are strings; anything else is treated as absent.
    let label = |key: &str| labels.and_then(|l| l.get(key)).and_then(Value::as_str);
    let level_key = format!("{LABEL_PREFIX}{mode}");
    let version_key = format!("{LABEL_PREFIX}{mode}-version");

    let level = label(&level_key).map(|text| {
        parse_level(text).unwrap_or_else(|| {
            problems.push(label_problem(&level_key, text, BAD_LEVEL));
            level_if_invalid
        })
    });
    let version = match label(&version_key) {
        None => None,
        Some(text) => parse_version(text).unwrap_or_else(|| {
            problems.push(label_problem(&version_key, text, BAD_VERSION));
            None
        }),
    };
    level.map(|level| Policy { level, version })
}

fn parse_level(text: &str) -> Option<Level> {
    match text {
        "privileged" => Some(Level::Privileged),
        "baseline" => Some(Level::Baseline),
        "restricted" => Some(Level::Restricted),
        _ => None,
    }
}

/// `latest` is `Some(None)`, `v1.N` is `Some(Some(1.N))`; anything else is None.
/// The plugin's pattern is `^v1\.([0-9]|[1-9][0-9]*)$`: no leading zeros.
fn parse_version(text: &str) -> Option<Option<KubeVersion>> {
    if text == "latest" {
        return Some(None);
    }
    let minor = text.strip_prefix("v1.")?;
    let digits = !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit());
    if !digits || (minor.len() > 1 && minor.starts_with('0')) {
        return None;
    }
    // Go parses into an int; a number past u32 is clamped rather than refused.
    let number = minor.parse::<u64>().ok()?;
    let minor = u32::try_from(number).unwrap_or(u32::MAX);
    Some(Some(KubeVersion::new(1, minor)))
}

/// `metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "foo": must be ...`
fn label_problem(key: &str, value: &str, detail: &str) -> String {
    FieldError::invalid(format!("metadata.labels[{key}]"), go_quote(value), detail).to_string()
}

/// Every violation of `policy` by the pod (`pod` is a Pod object: {metadata, spec}),
/// evaluated as a cluster at `cluster` would (a policy version newer than the cluster, or `latest`, means the cluster's own version).
/// Returns `(reason, detail)` pairs in the plugin's order: baseline check IDs sorted byte-wise, then restricted check IDs sorted,
/// with the restricted overrides replacing the baseline checks they override at the restricted level.
pub fn violations(policy: Policy, cluster: KubeVersion, pod: &Value) -> Vec<(String, String)> {
    if policy.level == Level::Privileged {
        return Vec::new();
    }
    let version = policy.version.map_or(cluster, |v| v.min(cluster));
    let view = PodView::new(pod, version, cluster);

    let mut active: Vec<&Check> = CHECKS
        .iter()
        .filter(|check| check.level <= policy.level && check.since <= version)
        .collect();
    active.sort_by_key(|check| (check.level, check.id));
    // Only restricted checks override, so this is empty below restricted.
    let overridden: Vec<&str> = active.iter().filter_map(|check| check.overrides).collect();

    active
        .iter()
        .filter(|check| !overridden.contains(&check.id))
        .filter_map(|check| (check.run)(&view))
        .collect()
}

/// The verdicts for a pod created in a namespace with these labels, on a cluster at `cluster`:
/// - enforce: `Verdict::rejection("PodSecurity", forbidden(pod_name, "violates PodSecurity \"<policy>\": <reason> (<detail>), <reason> (<detail>)"))`
/// - warn:    `Verdict::warning("PodSecurity", "would violate PodSecurity \"<policy>\": ...")`,
///   left out when enforce rejects (the plugin adds no warnings to a request it refuses)
/// - audit:   `Verdict::warning("PodSecurity", "audit: would violate PodSecurity \"<policy>\": ...")` (what goes in the audit annotation)
/// - label problems as one warning, the plugin's audit `error` annotation: `Failed to parse policy: ...`.
///
/// No Pod Security admission before Kubernetes 1.23 (alpha and off in 1.22): return nothing then.
pub fn review(
    labels: Option<&Map<String, Value>>,
    cluster: KubeVersion,
    pod: &Value,
    pod_name: &str,
) -> Vec<Verdict> {
    if !cluster.has_pod_security() {
        return Vec::new();
    }
    let policies = namespace_policies(labels);
    let summary = |policy: Option<Policy>| policy.and_then(|p| summarize(p, cluster, pod));
    let mut verdicts = Vec::new();

    let enforced = summary(policies.enforce);
    if let Some(text) = &enforced {
        let message = forbidden(pod_name, &format!("violates {text}"));
        verdicts.push(Verdict::rejection(PLUGIN, message));
    }
    let warned = match enforced {
        Some(_) => None,
        None => summary(policies.warn),
    };
    if let Some(text) = warned {
        verdicts.push(Verdict::warning(PLUGIN, format!("would violate {text}")));
    }
    if let Some(text) = summary(policies.audit) {
        verdicts.push(Verdict::warning(
            PLUGIN,
            format!("audit: would violate {text}"),
        ));
    }
    if !policies.problems.is_empty() {
        let message = format!("Failed to parse policy: {}", aggregate(&policies.problems));
        verdicts.push(Verdict::warning(PLUGIN, message));
    }
    verdicts
}

/// `PodSecurity "restricted:latest": reason (detail), reason (detail)`, when
/// the pod violates `policy`; a reason without detail prints bare.
fn summarize(policy: Policy, cluster: KubeVersion, pod: &Value) -> Option<String> {
    let found = violations(policy, cluster, pod);
    if found.is_empty() {
        return None;
    }
    let parts: Vec<String> = found
        .into_iter()
        .map(|(reason, detail)| {
            if detail.is_empty() {
                reason
            } else {
                format!("{reason} ({detail})")
            }
        })
        .collect();
    Some(format!("PodSecurity \"{policy}\": {}", parts.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::Severity;
    use serde_json::json;

    const CURRENT: KubeVersion = KubeVersion::CURRENT;
    const NONE: [(String, String); 0] = [];

    fn policy(level: Level, version: Option<u32>) -> Policy {
        Policy {
            level,
            version: version.map(v1),
        }
    }

    fn restricted_latest() -> Policy {
        policy(Level::Restricted, None)
    }

    fn baseline_latest() -> Policy {
        policy(Level::Baseline, None)
    }

    /// A container that passes every restricted check.
    fn good(name: &str) -> Value {
        json!({"name": name, "securityContext": {
            "allowPrivilegeEscalation": false,
            "capabilities": {"drop": ["ALL"]},
            "runAsNonRoot": true,
            "seccompProfile": {"type": "RuntimeDefault"},
        }})
    }

    /// `good(name)` with `securityContext` fields merged in.
    fn with(name: &str, security_context: Value) -> Value {
        let mut container = good(name);
        if let (Some(sc), Some(extra)) = (
            container
                .get_mut("securityContext")
                .and_then(Value::as_object_mut),
            security_context.as_object(),
        ) {
            for (key, value) in extra {
                sc.insert(key.clone(), value.clone());
            }
        }
        container
    }

    fn pod(spec: Value) -> Value {
        json!({"metadata": {"name": "web"}, "spec": spec})
    }

    fn found(policy: Policy, cluster: KubeVersion, pod: &Value) -> Vec<(String, String)> {
        violations(policy, cluster, pod)
    }

    /// The detail of `reason`, when the pod violates it.
    fn detail(policy: Policy, cluster: KubeVersion, pod: &Value, reason: &str) -> Option<String> {
        found(policy, cluster, pod)
            .into_iter()
            .find(|(r, _)| r == reason)
            .map(|(_, d)| d)
    }

    fn reasons(policy: Policy, cluster: KubeVersion, pod: &Value) -> Vec<String> {
        found(policy, cluster, pod)
            .into_iter()
            .map(|(r, _)| r)
            .collect()
    }

    fn labels(pairs: &[(&str, &str)]) -> Map<String, Value> {
        pairs
            .iter()
            .map(|(k, v)| (format!("pod-security.kubernetes.io/{k}"), json!(v)))
            .collect()
    }

    #[test]
    fn policies_print_like_the_plugin() {
        assert_eq!(restricted_latest().to_string(), "restricted:latest");
        assert_eq!(
            policy(Level::Baseline, Some(29)).to_string(),
            "baseline:v1.29"
        );
        assert_eq!(
            policy(Level::Privileged, Some(0)).to_string(),
            "privileged:v1.0"
        );
    }

    #[test]
    fn labels_give_the_policies_of_each_mode() {
        let l = labels(&[
            ("enforce", "baseline"),
            ("enforce-version", "v1.29"),
            ("warn", "restricted"),
            ("audit-version", "latest"),
        ]);
        let p = namespace_policies(Some(&l));
        assert_eq!(p.enforce, Some(policy(Level::Baseline, Some(29))));
        assert_eq!(p.warn, Some(restricted_latest()));
        // A version without a level is the default level, privileged: nothing to check.
        assert_eq!(p.audit, None);
        assert!(p.problems.is_empty());
        assert_eq!(namespace_policies(None).enforce, None);
        // Non-string values are absent.
        let mut odd = Map::new();
        odd.insert("pod-security.kubernetes.io/enforce".into(), json!(1));
        assert_eq!(namespace_policies(Some(&odd)), namespace_policies(None));
    }

    #[test]
    fn invalid_labels_are_evaluated_as_the_plugin_does_and_reported() {
        let l = labels(&[
            ("enforce", "strict"),
            ("enforce-version", "v1.025"),
            ("warn", "Baseline"),
            ("audit", "restricted"),
            ("audit-version", "1.29"),
        ]);
        let p = namespace_policies(Some(&l));
        assert_eq!(p.enforce, Some(restricted_latest()));
        // warn and audit fail open.
        assert_eq!(p.warn, Some(policy(Level::Privileged, None)));
        assert_eq!(p.audit, Some(restricted_latest()));
        assert_eq!(
            p.problems,
            [
                r#"metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted"#,
                r#"metadata.labels[pod-security.kubernetes.io/enforce-version]: Invalid value: "v1.025": must be "latest" or "v1.x""#,
                r#"metadata.labels[pod-security.kubernetes.io/audit-version]: Invalid value: "1.29": must be "latest" or "v1.x""#,
                r#"metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: "Baseline": must be one of privileged, baseline, restricted"#,
            ]
        );
        assert_eq!(parse_version("v1.0"), Some(Some(v1(0))));
        assert_eq!(parse_version("v1.10"), Some(Some(v1(10))));
        assert_eq!(parse_version("v1."), None);
        assert_eq!(parse_version("v2.1"), None);
    }

    #[test]
    fn invalid_labels_become_a_warning_in_review() {
        let l = labels(&[("enforce", "bogus")]);
        let p = pod(json!({"containers": [good("app")]}));
        let verdicts = review(Some(&l), CURRENT, &p, "web");
        assert_eq!(
            verdicts,
            [Verdict::warning(
                "PodSecurity",
                r#"Failed to parse policy: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "bogus": must be one of privileged, baseline, restricted"#
            )]
        );
        let l = labels(&[("enforce-version", "x"), ("warn-version", "y")]);
        let verdicts = review(Some(&l), CURRENT, &p, "web");
        assert_eq!(verdicts.len(), 1);
        assert!(
            verdicts[0]
                .message
                .starts_with("Failed to parse policy: [metadata.labels")
        );
    }

    #[test]
    fn a_compliant_pod_passes_restricted_at_every_version() {
        let p = pod(json!({
            "initContainers": [good("init")],
            "containers": [good("app"), good("mesh-proxy")],
            "volumes": [{"name": "t", "projected": {}}, {"name": "c", "configMap": {"name": "x"}}],
        }));
        for minor in [23, 25, 29, 34, 35, 37] {
            assert_eq!(found(restricted_latest(), v1(minor), &p), NONE);
        }
        assert_eq!(found(policy(Level::Restricted, Some(1)), CURRENT, &p), NONE);
    }

    #[test]
    fn privileged_never_has_violations() {
        let p = pod(
            json!({"hostNetwork": true, "containers": [{"name": "a", "securityContext": {"privileged": true}}]}),
        );
        assert_eq!(found(policy(Level::Privileged, None), CURRENT, &p), NONE);
    }

    #[test]
    fn host_namespaces() {
        let p = pod(
            json!({"hostNetwork": true, "hostIPC": true, "hostPID": true, "containers": [good("a")]}),
        );
        assert_eq!(
            detail(baseline_latest(), CURRENT, &p, "host namespaces").as_deref(),
            Some("hostNetwork=true, hostPID=true, hostIPC=true")
        );
        let p = pod(json!({"hostNetwork": false, "hostPID": "yes", "containers": [good("a")]}));
        assert_eq!(found(baseline_latest(), CURRENT, &p), NONE);
    }

    #[test]
    fn privileged_containers() {
        let p = pod(
            json!({"containers": [with("a", json!({"privileged": true})), with("b", json!({"privileged": false}))]}),
        );
        assert_eq!(
            detail(baseline_latest(), CURRENT, &p, "privileged").as_deref(),
            Some(r#"container "a" must not set securityContext.privileged=true"#)
        );
        let p = pod(json!({
            "initContainers": [with("i", json!({"privileged": true}))],
            "containers": [with("a", json!({"privileged": true}))],
        }));
        assert_eq!(
            detail(baseline_latest(), CURRENT, &p, "privileged").as_deref(),
            Some(r#"containers "i", "a" must not set securityContext.privileged=true"#)
        );
        let p = pod(json!({"containers": [with("b", json!({"privileged": false}))]}));
        assert_eq!(found(restricted_latest(), CURRENT, &p), NONE);
    }

    #[test]
    fn baseline_capabilities() {
        let add = |caps: Value| json!({"capabilities": {"add": caps}});
        let p = pod(json!({"containers": [with("a", add(json!(["NET_ADMIN", "CHOWN"])))]}));
        assert_eq!(
            detail(baseline_latest(), CURRENT, &p, "non-default capabilities").as_deref(),
            Some(
                r#"container "a" must not include "NET_ADMIN" in securityContext.capabilities.add"#
            )
        );
        let p = pod(json!({"containers": [
            with("a", add(json!(["SYS_ADMIN"]))),
            with("b", add(json!(["NET_RAW", "SYS_ADMIN"]))),
            with("c", add(json!(["CHOWN", "NET_BIND_SERVICE"]))),
        ]}));
        assert_eq!(
            detail(baseline_latest(), CURRENT, &p, "non-default capabilities").as_deref(),
            Some(
                r#"containers "a", "b" must not include "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add"#
            )
        );
        let p = pod(json!({"containers": [with("c", add(json!(["CHOWN", "KILL"])))]}));
        assert_eq!(found(baseline_latest(), CURRENT, &p), NONE);
    }

    #[test]
    fn host_path_volumes() {
        let p = pod(
            json!({"containers": [good("a")], "volumes": [{"name": "v", "hostPath": {"path": "/"}}, {"name": "e", "emptyDir": {}}]}),
        );
        assert_eq!(
            found(baseline_latest(), CURRENT, &p),
            [("hostPath volumes".to_string(), r#"volume "v""#.to_string())]
        );
        let p =
            pod(json!({"volumes": [{"name": "a", "hostPath": {}}, {"name": "b", "hostPath": {}}]}));
        assert_eq!(
            detail(baseline_latest(), CURRENT, &p, "hostPath volumes").as_deref(),
            Some(r#"volumes "a", "b""#)
        );
        let p = pod(
            json!({"volumes": [{"name": "e", "emptyDir": {}}, {"name": "n", "hostPath": null}]}),
        );
        assert_eq!(found(baseline_latest(), CURRENT, &p), NONE);
    }

    #[test]
    fn host_ports() {
        let ports = |list: Value| {
            let mut c = good("x");
            c["ports"] = list;
            c
        };
        let mut a = ports(json!([{"containerPort": 80, "hostPort": 8080}]));
        a["name"] = json!("a");
        let p = pod(json!({"containers": [a]}));
        assert_eq!(
            detail(baseline_latest(), CURRENT, &p, "hostPort").as_deref(),
            Some(r#"container "a" uses hostPort 8080"#)
        );
        // Ports are sorted as strings, as the plugin's string set sorts them.
        let mut a = ports(json!([{"hostPort": 80}, {"hostPort": 0}]));
        a["name"] = json!("a");
        let mut b = ports(json!([{"hostPort": 443}, {"hostPort": 80}]));
        b["name"] = json!("b");
        let p = pod(json!({"containers": [a, b]}));
        assert_eq!(
            detail(baseline_latest(), CURRENT, &p, "hostPort").as_deref(),
            Some(r#"containers "a", "b" use hostPorts 443, 80"#)
        );
        let p = pod(
            json!({"containers": [ports(json!([{"containerPort": 80, "hostPort": 0}, {"containerPort": 81}]))]}),
        );
        assert_eq!(found(baseline_latest(), CURRENT, &p), NONE);
    }

    #[test]
    fn app_armor_fields_and_annotations() {
        let unconfined = json!({"appArmorProfile": {"type": "Unconfined"}});
        let p = pod(json!({"containers": [with("a", unconfined.clone())]}));
        assert_eq!(
            found(baseline_latest(), CURRENT, &p),
            [(
                "forbidden AppArmor profile".to_string(),
                r#"container "a" must not set AppArmor profile type to "Unconfined""#.to_string()
            )]
        );
        let p = json!({
            "metadata": {"annotations": {
                "container.apparmor.security.beta.kubernetes.io/a": "unconfined",
                "container.apparmor.security.beta.kubernetes.io/b": "runtime/default",
                "container.apparmor.security.beta.kubernetes.io/c": "localhost/custom",
                "container.apparmor.security.beta.kubernetes.io/d": "",
            }},
            "spec": {"securityContext": unconfined, "containers": [good("a")]},
        });
        assert_eq!(
            found(baseline_latest(), CURRENT, &p),
            [(
                "forbidden AppArmor profiles".to_string(),
                r#"pod and annotation must not set AppArmor profile type to "Unconfined", "container.apparmor.security.beta.kubernetes.io/a="unconfined"""#.to_string()
            )]
        );
        // A 1.29 apiserver reads only the annotations, in its older wording.
        assert_eq!(
            found(baseline_latest(), v1(29), &p),
            [(
                "forbidden AppArmor profile".to_string(),
                r#"container.apparmor.security.beta.kubernetes.io/a="unconfined""#.to_string()
            )]
        );
        let ok = pod(
            json!({"securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}},
            "containers": [with("a", json!({"appArmorProfile": {"type": "Localhost", "localhostProfile": "p"}}))]}),
        );
        assert_eq!(found(restricted_latest(), CURRENT, &ok), NONE);
    }

    #[test]
    fn selinux_options() {
        let se = |options: Value| json!({"seLinuxOptions": options});
        let p = pod(json!({
            "securityContext": {"seLinuxOptions": {"type": "foo", "user": "u", "role": "r"}},
            "containers": [
                with("a", se(json!({"type": "container_t"}))),
                with("d", se(json!({"type": "bar"}))),
                with("e", se(json!({"user": "bar"}))),
            ],
        }));
        assert_eq!(
            detail(baseline_latest(), CURRENT, &p, "seLinuxOptions").as_deref(),
            Some(
                r#"pod and containers "d", "e" set forbidden securityContext.seLinuxOptions: types "bar", "foo"; user may not be set; role may not be set"#
            )
        );
        let p = pod(json!({"containers": [with("a", se(json!({"role": "r"})))]}));
        assert_eq!(
            detail(baseline_latest(), CURRENT, &p, "seLinuxOptions").as_deref(),
            Some(
                r#"container "a" set forbidden securityContext.seLinuxOptions: role may not be set"#
            )
        );
        // container_engine_t is allowed from v1.31.
        let p = pod(json!({"containers": [with("a", se(json!({"type": "container_engine_t"})))]}));
        assert_eq!(found(baseline_latest(), CURRENT, &p), NONE);
        assert_eq!(
            detail(
                policy(Level::Baseline, Some(30)),
                CURRENT,
                &p,
                "seLinuxOptions"
            )
            .as_deref(),
            Some(
                r#"container "a" set forbidden securityContext.seLinuxOptions: type "container_engine_t""#
            )
        );
    }

    #[test]
    fn proc_mount_and_user_namespaces() {
        let unmasked = |name: &str| with(name, json!({"procMount": "Unmasked"}));
        let p =
            pod(json!({"containers": [unmasked("a"), with("b", json!({"procMount": "Default"}))]}));
        let expected = r#"container "a" must not set securityContext.procMount to "Unmasked""#;
        assert_eq!(
            detail(baseline_latest(), CURRENT, &p, "procMount").as_deref(),
            Some(expected)
        );
        // A user-namespace pod may unmask /proc at baseline from v1.35, never at restricted.
        let p = pod(json!({"hostUsers": false, "containers": [unmasked("a")]}));
        assert_eq!(found(baseline_latest(), CURRENT, &p), NONE);
        assert_eq!(
            detail(policy(Level::Baseline, Some(34)), CURRENT, &p, "procMount").as_deref(),
            Some(expected)
        );
        let restricted = found(restricted_latest(), CURRENT, &p);
        assert_eq!(
            restricted,
            [("procMount".to_string(), expected.to_string())]
        );
        let p = pod(json!({"containers": [with("b", json!({"procMount": "Default"}))]}));
        assert_eq!(found(restricted_latest(), CURRENT, &p), NONE);
    }

    #[test]
    fn seccomp_at_baseline() {
        let p = pod(json!({
            "securityContext": {"seccompProfile": {"type": "Unconfined"}},
            "containers": [with("a", json!({"seccompProfile": {"type": "Unconfined"}})), good("b")],
        }));
        assert_eq!(
            detail(baseline_latest(), CURRENT, &p, "seccompProfile").as_deref(),
            Some(
                r#"pod and container "a" must not set securityContext.seccompProfile.type to "Unconfined""#
            )
        );
        let p = pod(
            json!({"securityContext": {"seccompProfile": {"type": "Unconfined"}}, "containers": [good("a")]}),
        );
        assert_eq!(
            detail(baseline_latest(), CURRENT, &p, "seccompProfile").as_deref(),
            Some(r#"pod must not set securityContext.seccompProfile.type to "Unconfined""#)
        );
        // Unset is fine at baseline.
        let p = pod(json!({"containers": [{"name": "a"}]}));
        assert_eq!(found(baseline_latest(), CURRENT, &p), NONE);
        // Before v1.19 the policy reads the alpha annotations instead.
        let p = json!({
            "metadata": {"annotations": {
                "seccomp.security.alpha.kubernetes.io/pod": "unconfined",
                "container.seccomp.security.alpha.kubernetes.io/a": "localhost/x",
                "container.seccomp.security.alpha.kubernetes.io/b": "",
            }},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
        });
        assert_eq!(
            detail(
                policy(Level::Baseline, Some(18)),
                CURRENT,
                &p,
                "seccompProfile"
            )
            .as_deref(),
            Some(
                r#"forbidden annotations container.seccomp.security.alpha.kubernetes.io/b="", seccomp.security.alpha.kubernetes.io/pod="unconfined""#
            )
        );
        assert_eq!(found(baseline_latest(), CURRENT, &p), NONE);
    }

    #[test]
    fn sysctls_grow_with_the_policy_version() {
        let p = pod(json!({"securityContext": {"sysctls": [
            {"name": "net.ipv4.tcp_keepalive_time", "value": "60"},
            {"name": "kernel.shm_rmid_forced", "value": "1"},
        ]}, "containers": [good("a")]}));
        assert_eq!(found(policy(Level::Baseline, Some(29)), CURRENT, &p), NONE);
        assert_eq!(
            found(policy(Level::Baseline, Some(27)), CURRENT, &p),
            [(
                "forbidden sysctls".to_string(),
                "net.ipv4.tcp_keepalive_time".to_string()
            )]
        );
        // `latest` on a 1.27 cluster is v1.27.
        assert_eq!(
            reasons(baseline_latest(), v1(27), &p),
            ["forbidden sysctls"]
        );
        let p = pod(json!({"securityContext": {"sysctls": [
            {"name": "kernel.msgmax"}, {"name": "net.ipv4.tcp_notsent_lowat"}, {"name": "kernel.msgmax"},
        ]}}));
        assert_eq!(
            detail(baseline_latest(), v1(36), &p, "forbidden sysctls").as_deref(),
            Some("kernel.msgmax, net.ipv4.tcp_notsent_lowat, kernel.msgmax")
        );
        assert_eq!(
            detail(baseline_latest(), v1(37), &p, "forbidden sysctls").as_deref(),
            Some("kernel.msgmax, kernel.msgmax")
        );
    }

    #[test]
    fn windows_host_process() {
        let host = json!({"windowsOptions": {"hostProcess": true}});
        let p = pod(
            json!({"securityContext": host, "containers": [with("a", host.clone()), good("b")]}),
        );
        assert_eq!(
            detail(baseline_latest(), CURRENT, &p, "hostProcess").as_deref(),
            Some(
                r#"pod and container "a" must not set securityContext.windowsOptions.hostProcess=true"#
            )
        );
        let p = pod(
            json!({"containers": [with("a", json!({"windowsOptions": {"hostProcess": false}}))]}),
        );
        assert_eq!(found(baseline_latest(), CURRENT, &p), NONE);
    }

    #[test]
    fn probe_and_lifecycle_hosts_from_v1_34() {
        let mut a = good("a");
        a["livenessProbe"] = json!({"httpGet": {"host": "b.com", "port": 80}});
        let mut b = good("b");
        b["lifecycle"] = json!({"preStop": {"tcpSocket": {"host": "a.com", "port": 1}}});
        b["startupProbe"] = json!({"httpGet": {"host": "b.com", "port": 80}});
        let mut c = good("c");
        c["readinessProbe"] = json!({"httpGet": {"host": "", "port": 80}});
        let p = pod(json!({"containers": [b, a, c]}));
        assert_eq!(
            detail(baseline_latest(), CURRENT, &p, "probe or lifecycle host").as_deref(),
            Some(r#"containers "a", "b" use probe or lifecycle hosts "a.com", "b.com""#)
        );
        assert_eq!(found(policy(Level::Baseline, Some(33)), CURRENT, &p), NONE);
        assert_eq!(found(baseline_latest(), v1(33), &p), NONE);
        let mut one = good("a");
        one["livenessProbe"] = json!({"tcpSocket": {"host": "127.0.0.1", "port": 1}});
        assert_eq!(
            detail(
                policy(Level::Baseline, Some(34)),
                CURRENT,
                &pod(json!({"containers": [one]})),
                "probe or lifecycle host"
            )
            .as_deref(),
            Some(r#"container "a" uses probe or lifecycle host "127.0.0.1""#)
        );
        let mut unset = good("a");
        unset["livenessProbe"] = json!({"httpGet": {"host": "", "port": 80}});
        unset["lifecycle"] = json!({"postStart": {"tcpSocket": {"port": 1}}});
        let p = pod(json!({"containers": [unset]}));
        assert_eq!(found(restricted_latest(), CURRENT, &p), NONE);
    }

    #[test]
    fn allow_privilege_escalation() {
        let p = pod(json!({"containers": [
            with("a", json!({"allowPrivilegeEscalation": true})),
            {"name": "b"},
            good("c"),
        ]}));
        assert_eq!(
            detail(
                restricted_latest(),
                CURRENT,
                &p,
                "allowPrivilegeEscalation != false"
            )
            .as_deref(),
            Some(r#"containers "a", "b" must set securityContext.allowPrivilegeEscalation=false"#)
        );
        // Windows pods are exempt from v1.25.
        let w = pod(
            json!({"os": {"name": "windows"}, "securityContext": {"runAsNonRoot": true}, "containers": [{"name": "w"}]}),
        );
        assert_eq!(found(restricted_latest(), CURRENT, &w), NONE);
        assert_eq!(
            reasons(policy(Level::Restricted, Some(24)), CURRENT, &w),
            [
                "allowPrivilegeEscalation != false",
                "unrestricted capabilities",
                "seccompProfile"
            ]
        );
    }

    #[test]
    fn restricted_capabilities() {
        let p = pod(json!({"containers": [
            {"name": "a", "securityContext": {"allowPrivilegeEscalation": false, "runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}}},
            with("b", json!({"capabilities": {"drop": ["ALL"], "add": ["NET_RAW", "NET_ADMIN", "NET_BIND_SERVICE"]}})),
            with("c", json!({"capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}})),
        ]}));
        // The restricted check replaces the baseline one: no "non-default capabilities".
        assert_eq!(
            found(restricted_latest(), CURRENT, &p),
            [(
                "unrestricted capabilities".to_string(),
                r#"container "a" must set securityContext.capabilities.drop=["ALL"]; container "b" must not include "NET_ADMIN", "NET_RAW" in securityContext.capabilities.add"#.to_string()
            )]
        );
        let p = pod(json!({"containers": [
            with("a", json!({"capabilities": {"drop": ["NET_RAW"]}})),
            with("b", json!({"capabilities": {}})),
        ]}));
        assert_eq!(
            detail(
                restricted_latest(),
                CURRENT,
                &p,
                "unrestricted capabilities"
            )
            .as_deref(),
            Some(r#"containers "a", "b" must set securityContext.capabilities.drop=["ALL"]"#)
        );
        let p = pod(json!({"containers": [
            with("a", json!({"capabilities": {"drop": ["NET_RAW", "ALL"], "add": ["NET_BIND_SERVICE"]}})),
        ]}));
        assert_eq!(found(restricted_latest(), CURRENT, &p), NONE);
        // Before v1.22 restricted had no capabilities check of its own.
        let p = pod(
            json!({"containers": [with("a", json!({"capabilities": {"add": ["SYS_ADMIN"]}}))]}),
        );
        assert_eq!(
            reasons(policy(Level::Restricted, Some(21)), CURRENT, &p),
            ["non-default capabilities"]
        );
    }

    #[test]
    fn run_as_non_root() {
        let none = |name: &str| json!({"name": name, "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}}});
        let p = pod(json!({"containers": [none("a")]}));
        assert_eq!(
            detail(restricted_latest(), CURRENT, &p, "runAsNonRoot != true").as_deref(),
            Some(r#"pod or container "a" must set securityContext.runAsNonRoot=true"#)
        );
        let p = pod(json!({"containers": [none("a"), none("b")]}));
        assert_eq!(
            detail(restricted_latest(), CURRENT, &p, "runAsNonRoot != true").as_deref(),
            Some(r#"pod or containers "a", "b" must set securityContext.runAsNonRoot=true"#)
        );
        let p = pod(json!({"securityContext": {"runAsNonRoot": false}, "containers": [good("a")]}));
        assert_eq!(
            detail(restricted_latest(), CURRENT, &p, "runAsNonRoot != true").as_deref(),
            Some("pod must not set securityContext.runAsNonRoot=false")
        );
        let p = pod(
            json!({"securityContext": {"runAsNonRoot": false}, "containers": [
                with("a", json!({"runAsNonRoot": false})), with("b", json!({"runAsNonRoot": false})), none("c"),
            ]}),
        );
        assert_eq!(
            detail(restricted_latest(), CURRENT, &p, "runAsNonRoot != true").as_deref(),
            Some(r#"pod and containers "a", "b" must not set securityContext.runAsNonRoot=false"#)
        );
        // Pod-level true covers containers that leave it unset.
        let p = pod(json!({"securityContext": {"runAsNonRoot": true}, "containers": [none("a")]}));
        assert_eq!(found(restricted_latest(), CURRENT, &p), NONE);
        // User-namespace pods are relaxed from v1.35 only.
        let p = pod(json!({"hostUsers": false, "containers": [none("a")]}));
        assert_eq!(found(restricted_latest(), CURRENT, &p), NONE);
        assert_eq!(
            reasons(policy(Level::Restricted, Some(34)), CURRENT, &p),
            ["runAsNonRoot != true"]
        );
    }

    #[test]
    fn run_as_user() {
        let p = pod(
            json!({"initContainers": [with("istio-init", json!({"runAsUser": 0}))], "containers": [with("app", json!({"runAsUser": 1000}))]}),
        );
        assert_eq!(
            found(restricted_latest(), CURRENT, &p),
            [(
                "runAsUser=0".to_string(),
                r#"container "istio-init" must not set runAsUser=0"#.to_string()
            )]
        );
        let p = pod(
            json!({"securityContext": {"runAsUser": 0}, "containers": [with("a", json!({"runAsUser": 0})), with("b", json!({"runAsUser": 0}))]}),
        );
        assert_eq!(
            detail(restricted_latest(), CURRENT, &p, "runAsUser=0").as_deref(),
            Some(r#"pod and containers "a", "b" must not set runAsUser=0"#)
        );
        // The check exists from v1.23, and user-namespace pods skip it from v1.35.
        assert_eq!(
            found(policy(Level::Restricted, Some(22)), CURRENT, &p),
            NONE
        );
        assert_eq!(found(restricted_latest(), v1(22), &p), NONE);
        let p = pod(
            json!({"hostUsers": false, "securityContext": {"runAsUser": 0}, "containers": [good("a")]}),
        );
        assert_eq!(found(restricted_latest(), CURRENT, &p), NONE);
        assert_eq!(
            detail(
                policy(Level::Restricted, Some(34)),
                CURRENT,
                &p,
                "runAsUser=0"
            )
            .as_deref(),
            Some("pod must not set runAsUser=0")
        );
    }

    #[test]
    fn seccomp_at_restricted() {
        let unset = |name: &str| json!({"name": name, "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}, "runAsNonRoot": true}});
        let p = pod(json!({"containers": [unset("a"), unset("b")]}));
        assert_eq!(
            found(restricted_latest(), CURRENT, &p),
            [(
                "seccompProfile".to_string(),
                r#"pod or containers "a", "b" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost""#.to_string()
            )]
        );
        // A valid pod-level profile covers them.
        let p = pod(
            json!({"securityContext": {"seccompProfile": {"type": "Localhost", "localhostProfile": "x"}}, "containers": [unset("a")]}),
        );
        assert_eq!(found(restricted_latest(), CURRENT, &p), NONE);
        // An explicit bad value is reported once: the baseline check is overridden.
        let p = pod(
            json!({"containers": [with("a", json!({"seccompProfile": {"type": "Unconfined"}})), unset("b")]}),
        );
        assert_eq!(
            found(restricted_latest(), CURRENT, &p),
            [(
                "seccompProfile".to_string(),
                r#"container "a" must not set securityContext.seccompProfile.type to "Unconfined""#
                    .to_string()
            )]
        );
        // Before v1.19 restricted has only the baseline annotation check.
        let p = pod(json!({"containers": [unset("a")]}));
        assert_eq!(
            found(policy(Level::Restricted, Some(18)), CURRENT, &p),
            NONE
        );
    }

    #[test]
    fn restricted_volume_types() {
        let p = pod(
            json!({"containers": [good("a")], "volumes": [{"name": "v", "hostPath": {"path": "/"}}]}),
        );
        assert_eq!(
            found(restricted_latest(), CURRENT, &p),
            [(
                "restricted volume types".to_string(),
                r#"volume "v" uses restricted volume type "hostPath""#.to_string()
            )]
        );
        let p = pod(json!({"volumes": [
            {"name": "a", "nfs": {}}, {"name": "ok", "secret": {}}, {"name": "b", "hostPath": {}},
            {"name": "c", "nfs": {}}, {"name": "d"},
        ]}));
        assert_eq!(
            detail(restricted_latest(), CURRENT, &p, "restricted volume types").as_deref(),
            Some(
                r#"volumes "a", "b", "c", "d" use restricted volume types "hostPath", "nfs", "unknown""#
            )
        );
        // Image volumes are allowed by a 1.33+ apiserver, whatever the policy version.
        let p = pod(
            json!({"containers": [good("a")], "volumes": [{"name": "i", "image": {"reference": "x"}}]}),
        );
        assert_eq!(found(policy(Level::Restricted, Some(25)), v1(33), &p), NONE);
        assert_eq!(
            detail(restricted_latest(), v1(32), &p, "restricted volume types").as_deref(),
            Some(r#"volume "i" uses restricted volume type "unknown""#)
        );
    }

    #[test]
    fn reasons_follow_the_plugin_order() {
        let p = json!({
            "metadata": {"annotations": {"container.apparmor.security.beta.kubernetes.io/a": "unconfined"}},
            "spec": {
                "hostNetwork": true,
                "securityContext": {"sysctls": [{"name": "kernel.msgmax"}], "seLinuxOptions": {"type": "spc_t"}},
                "containers": [{"name": "a", "securityContext": {"privileged": true, "runAsUser": 0, "procMount": "Unmasked",
                    "capabilities": {"add": ["NET_ADMIN"]}, "windowsOptions": {"hostProcess": true}},
                    "ports": [{"hostPort": 80}], "livenessProbe": {"httpGet": {"host": "h"}}}],
                "volumes": [{"name": "v", "hostPath": {}}],
            },
        });
        assert_eq!(
            reasons(baseline_latest(), CURRENT, &p),
            [
                "forbidden AppArmor profile",
                "non-default capabilities",
                "host namespaces",
                "hostPath volumes",
                "hostPort",
                "probe or lifecycle host",
                "privileged",
                "procMount",
                "seLinuxOptions",
                "forbidden sysctls",
                "hostProcess",
            ]
        );
        assert_eq!(
            reasons(restricted_latest(), CURRENT, &p),
            [
                "forbidden AppArmor profile",
                "host namespaces",
                "hostPort",
                "probe or lifecycle host",
                "privileged",
                "seLinuxOptions",
                "forbidden sysctls",
                "hostProcess",
                "allowPrivilegeEscalation != false",
                "unrestricted capabilities",
                "procMount",
                "restricted volume types",
                "runAsNonRoot != true",
                "runAsUser=0",
                "seccompProfile",
            ]
        );
    }

    #[test]
    fn ephemeral_containers_are_checked() {
        let p = pod(json!({"containers": [good("a")], "ephemeralContainers": [{"name": "debug"}]}));
        assert_eq!(
            detail(
                restricted_latest(),
                CURRENT,
                &p,
                "allowPrivilegeEscalation != false"
            )
            .as_deref(),
            Some(r#"container "debug" must set securityContext.allowPrivilegeEscalation=false"#)
        );
    }

    #[test]
    fn wrong_types_are_absent_and_never_panic() {
        for p in [
            json!(null),
            json!("pod"),
            json!({"spec": "x", "metadata": 3}),
            json!({"spec": {"containers": {"a": 1}, "volumes": "v", "securityContext": []}}),
            json!({"spec": {"containers": [7, null, {"name": 3, "securityContext": "x", "ports": [1, {"hostPort": "80"}]}],
                "securityContext": {"sysctls": [1, {"name": 2}], "seccompProfile": "x"}},
                "metadata": {"annotations": {"container.apparmor.security.beta.kubernetes.io/a": 1}}}),
        ] {
            for level in [Level::Baseline, Level::Restricted] {
                let _ = violations(policy(level, None), CURRENT, &p);
                let _ = violations(policy(level, Some(18)), v1(23), &p);
            }
        }
        // A container with no securityContext at all is the usual failing case.
        let p = json!({"spec": {"containers": [{"name": "a"}]}});
        assert_eq!(
            reasons(restricted_latest(), CURRENT, &p),
            [
                "allowPrivilegeEscalation != false",
                "unrestricted capabilities",
                "runAsNonRoot != true",
                "seccompProfile"
            ]
        );
    }

    #[test]
    fn review_gives_enforce_warn_and_audit_verdicts() {
        let p = pod(
            json!({"containers": [with("app", json!({"allowPrivilegeEscalation": true}))], "hostNetwork": true}),
        );
        let l = labels(&[
            ("enforce", "restricted"),
            ("warn", "baseline"),
            ("audit", "baseline"),
            ("audit-version", "v1.29"),
        ]);
        assert_eq!(
            review(Some(&l), CURRENT, &p, "web-"),
            [
                Verdict::rejection(
                    "PodSecurity",
                    r#"pods "web-" is forbidden: violates PodSecurity "restricted:latest": host namespaces (hostNetwork=true), allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false)"#
                ),
                // No warn verdict: the plugin adds no warnings to a refused request.
                Verdict::warning(
                    "PodSecurity",
                    r#"audit: would violate PodSecurity "baseline:v1.29": host namespaces (hostNetwork=true)"#
                ),
            ]
        );
        let l = labels(&[
            ("enforce", "baseline"),
            ("enforce-version", "v1.23"),
            ("warn", "restricted"),
        ]);
        let p =
            pod(json!({"containers": [with("app", json!({"allowPrivilegeEscalation": true}))]}));
        let verdicts = review(Some(&l), CURRENT, &p, "web");
        assert_eq!(
            verdicts,
            [Verdict::warning(
                "PodSecurity",
                r#"would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false)"#
            )]
        );
        assert_eq!(verdicts[0].severity, Severity::Warning);
    }

    #[test]
    fn review_needs_pod_security_admission() {
        let p = pod(json!({"hostPID": true}));
        let l = labels(&[("enforce", "baseline")]);
        assert!(review(Some(&l), v1(22), &p, "web").is_empty());
        assert_eq!(review(Some(&l), v1(23), &p, "web").len(), 1);
        // Nothing to say for a privileged or unlabelled namespace.
        let l = labels(&[("enforce", "privileged"), ("warn", "privileged")]);
        assert!(review(Some(&l), CURRENT, &p, "web").is_empty());
        assert!(review(None, CURRENT, &p, "web").is_empty());
    }
}

//! Pod Security Admission (the `PodSecurity` plugin), offline: the namespace
//! labels read as policies, the checks of the Pod Security Standards at a
//! policy version, and the verdicts in the apiserver's words. Validating only:
//! nothing here changes the pod.
//!
//! Facts: `kubernetes/pod-security-admission` (`api/helpers.go` for the labels,
//! `policy/check_*.go` for the checks, `policy/registry.go` for their order,
//! `admission/admission.go` for the messages).

use std::collections::BTreeSet;
use std::fmt;

use serde_json::{Map, Value};

use super::field::{FieldError, go_quote};
use super::{Verdict, aggregate, container_name, containers_with_paths, forbidden};
use crate::cluster::KubeVersion;
use crate::json::Field;

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

// ---------------------------------------------------------------------------
// The checks: one table, one function per check ID.

type Violation = (String, String);

type CheckFn = fn(&PodView<'_>) -> Option<Violation>;

/// One check of `policy/check_*.go`: it exists from policy version `since`,
/// and at the restricted level it replaces the baseline check `overrides`.
/// Changes inside a check at later versions are in its function.
struct Check {
    id: &'static str,
    level: Level,
    since: KubeVersion,
    overrides: Option<&'static str>,
    run: CheckFn,
}

const fn v1(minor: u32) -> KubeVersion {
    KubeVersion::new(1, minor)
}

const fn baseline(id: &'static str, since: KubeVersion, run: CheckFn) -> Check {
    Check {
        id,
        level: Level::Baseline,
        since,
        overrides: None,
        run,
    }
}

const fn restricted(
    id: &'static str,
    since: KubeVersion,
    overrides: Option<&'static str>,
    run: CheckFn,
) -> Check {
    Check {
        id,
        level: Level::Restricted,
        since,
        overrides,
        run,
    }
}

const CHECKS: &[Check] = &[
    baseline("appArmorProfile", v1(0), app_armor_profile),
    baseline("capabilities_baseline", v1(0), capabilities_baseline),
    baseline("hostNamespaces", v1(0), host_namespaces),
    baseline("hostPathVolumes", v1(0), host_path_volumes),
    baseline("hostPorts", v1(0), host_ports),
    baseline(
        "hostProbesAndHostLifecycle",
        v1(34),
        host_probes_and_lifecycle,
    ),
    baseline("privileged", v1(0), privileged),
    baseline("procMount", v1(0), proc_mount_baseline),
    baseline("seLinuxOptions", v1(0), se_linux_options),
    baseline("seccompProfile_baseline", v1(0), seccomp_profile_baseline),
    baseline("sysctls", v1(0), sysctls),
    baseline("windowsHostProcess", v1(0), windows_host_process),
    restricted(
        "allowPrivilegeEscalation",
        v1(8),
        None,
        allow_privilege_escalation,
    ),
    restricted(
        "capabilities_restricted",
        v1(22),
        Some("capabilities_baseline"),
        capabilities_restricted,
    ),
    restricted(
        "procMount_restricted",
        v1(35),
        Some("procMount"),
        unmasked_proc_mount,
    ),
    restricted(
        "restrictedVolumes",
        v1(0),
        Some("hostPathVolumes"),
        restricted_volumes,
    ),
    restricted("runAsNonRoot", v1(0), None, run_as_non_root),
    restricted("runAsUser", v1(23), None, run_as_user),
    restricted(
        "seccompProfile_restricted",
        v1(19),
        Some("seccompProfile_baseline"),
        seccomp_profile_restricted,
    ),
];

/// What the checks read: the pod, its containers in the plugin's visiting
/// order (init, regular, ephemeral), the policy version in force and the
/// cluster's own version (which decides the shape of the code that runs).
struct PodView<'a> {
    metadata: &'a Value,
    spec: &'a Value,
    containers: Vec<&'a Value>,
    version: KubeVersion,
    cluster: KubeVersion,
}

static ABSENT: Value = Value::Null;

impl<'a> PodView<'a> {
    fn new(pod: &'a Value, version: KubeVersion, cluster: KubeVersion) -> Self {
        let metadata = pod.field("metadata").unwrap_or(&ABSENT);
        let spec = pod.field("spec").unwrap_or(&ABSENT);
        let containers = containers_with_paths(spec)
            .into_iter()
            .map(|(_, container)| container)
            .collect();
        PodView {
            metadata,
            spec,
            containers,
            version,
            cluster,
        }
    }

    /// The names of the containers `bad` picks out, in visiting order.
    fn names_where(&self, mut bad: impl FnMut(&Value) -> bool) -> Vec<String> {
        self.containers
            .iter()
            .filter(|container| bad(container))
            .map(|container| container_name(container).to_string())
            .collect()
    }

    /// From v1.25, checks that Windows pods cannot meet let them pass.
    fn windows_exempt(&self) -> bool {
        self.version >= v1(25) && text(self.spec, &["os", "name"]) == Some("windows")
    }

    /// From v1.35, a pod in a user namespace (`hostUsers: false`) passes the
    /// checks that guard against root on the host (before, a perma-alpha gate, off).
    fn user_namespace_relaxed(&self) -> bool {
        self.version >= v1(35) && flag(self.spec, &["hostUsers"]) == Some(false)
    }
}

fn violation(reason: &str, detail: String) -> Option<Violation> {
    Some((reason.to_string(), detail))
}

// --- Reading user YAML: a wrong type or null is absent. ---------------------

fn at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter()
        .try_fold(value, |v, key| v.get(*key))
        .filter(|v| !v.is_null())
}

/// A set struct (a non-nil pointer in the Go types).
fn object<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    at(value, path).filter(|v| v.is_object())
}

fn flag(value: &Value, path: &[&str]) -> Option<bool> {
    at(value, path).and_then(Value::as_bool)
}

fn text<'a>(value: &'a Value, path: &[&str]) -> Option<&'a str> {
    at(value, path).and_then(Value::as_str)
}

fn list<'a>(value: &'a Value, path: &[&str]) -> &'a [Value] {
    at(value, path)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn strings<'a>(value: &'a Value, path: &[&str]) -> impl Iterator<Item = &'a str> {
    list(value, path).iter().filter_map(Value::as_str)
}

// --- The plugin's phrasing (`policy/helpers.go`). ---------------------------

fn pluralize<'a>(singular: &'a str, plural: &'a str, count: usize) -> &'a str {
    if count == 1 { singular } else { plural }
}

/// `"a", "b"`, without escaping, as `joinQuote` does.
fn join_quote<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> String {
    let quoted: Vec<String> = items
        .into_iter()
        .map(|item| format!("\"{}\"", item.as_ref()))
        .collect();
    quoted.join(", ")
}

/// `container "a"` or `containers "a", "b"`.
fn containers_phrase(names: &[String]) -> String {
    let noun = pluralize("container", "containers", names.len());
    format!("{noun} {}", join_quote(names))
}

/// Who set a forbidden value: `pod`, then the containers.
fn setters(pod: bool, containers: &[String]) -> Vec<String> {
    let mut who = Vec::new();
    if pod {
        who.push("pod".to_string());
    }
    if !containers.is_empty() {
        who.push(containers_phrase(containers));
    }
    who
}

fn sorted(set: BTreeSet<String>) -> Vec<String> {
    set.into_iter().collect()
}

// --- Baseline checks. -------------------------------------------------------

fn host_namespaces(pod: &PodView<'_>) -> Option<Violation> {
    let shared: Vec<String> = ["hostNetwork", "hostPID", "hostIPC"]
        .into_iter()
        .filter(|field| flag(pod.spec, &[field]) == Some(true))
        .map(|field| format!("{field}=true"))
        .collect();
    if shared.is_empty() {
        return None;
    }
    violation("host namespaces", shared.join(", "))
}

fn privileged(pod: &PodView<'_>) -> Option<Violation> {
    let bad = pod.names_where(|c| flag(c, &["securityContext", "privileged"]) == Some(true));
    if bad.is_empty() {
        return None;
    }
    let detail = format!(
        "{} must not set securityContext.privileged=true",
        containers_phrase(&bad)
    );
    violation("privileged", detail)
}

/// The capabilities `baseline` lets a container add.
pub const BASELINE_CAPABILITIES: &[&str] = &[
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];

fn capabilities_baseline(pod: &PodView<'_>) -> Option<Violation> {
    let mut added = BTreeSet::new();
    let bad = pod.names_where(|c| {
        let extra: Vec<&str> = strings(c, &["securityContext", "capabilities", "add"])
            .filter(|cap| !BASELINE_CAPABILITIES.contains(cap))
            .collect();
        added.extend(extra.iter().map(|cap| cap.to_string()));
        !extra.is_empty()
    });
    if bad.is_empty() {
        return None;
    }
    let detail = format!(
        "{} must not include {} in securityContext.capabilities.add",
        containers_phrase(&bad),
        join_quote(&added)
    );
    violation("non-default capabilities", detail)
}

fn host_path_volumes(pod: &PodView<'_>) -> Option<Violation> {
    let names: Vec<&str> = list(pod.spec, &["volumes"])
        .iter()
        .filter(|volume| object(volume, &["hostPath"]).is_some())
        .map(|volume| text(volume, &["name"]).unwrap_or_default())
        .collect();
    if names.is_empty() {
        return None;
    }
    let noun = pluralize("volume", "volumes", names.len());
    violation("hostPath volumes", format!("{noun} {}", join_quote(&names)))
}

fn host_ports(pod: &PodView<'_>) -> Option<Violation> {
    // The plugin keeps the ports as strings in a sorted set: "443" before "80".
    let mut ports = BTreeSet::new();
    let bad = pod.names_where(|c| {
        let mut any = false;
        for port in list(c, &["ports"]) {
            match port.field("hostPort").and_then(Value::as_i64) {
                Some(0) | None => {}
                Some(number) => {
                    ports.insert(number.to_string());
                    any = true;
                }
            }
        }
        any
    });
    if bad.is_empty() {
        return None;
    }
    let detail = format!(
        "{} {} {} {}",
        containers_phrase(&bad),
        pluralize("uses", "use", bad.len()),
        pluralize("hostPort", "hostPorts", ports.len()),
        sorted(ports).join(", ")
    );
    violation("hostPort", detail)
}

const APPARMOR_ANNOTATION_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";

/// The AppArmor annotations with a value other than empty, `runtime/default`
/// or `localhost/*`, as sorted `key="value"` entries.
fn forbidden_app_armor_annotations(pod: &PodView<'_>) -> Vec<String> {
    let annotations = at(pod.metadata, &["annotations"]).and_then(Value::as_object);
    let mut found: Vec<String> = annotations
        .into_iter()
        .flatten()
        .filter(|(key, _)| key.starts_with(APPARMOR_ANNOTATION_PREFIX))
        .filter_map(|(key, value)| Some((key, value.as_str()?)))
        .filter(|(_, value)| {
            !(value.is_empty() || *value == "runtime/default" || value.starts_with("localhost/"))
        })
        .map(|(key, value)| format!("{key}={}", go_quote(value)))
        .collect();
    found.sort();
    found
}

fn app_armor_profile(pod: &PodView<'_>) -> Option<Violation> {
    let annotations = forbidden_app_armor_annotations(pod);
    // Clusters before 1.30 know only the annotations (the fields came in 1.30).
    if pod.cluster < v1(30) {
        if annotations.is_empty() {
            return None;
        }
        let reason = pluralize(
            "forbidden AppArmor profile",
            "forbidden AppArmor profiles",
            annotations.len(),
        );
        return violation(reason, annotations.join(", "));
    }

    let mut types = BTreeSet::new();
    let mut forbidden_type =
        |owner: &Value| match object(owner, &["securityContext", "appArmorProfile"]) {
            None => false,
            Some(profile) => {
                let kind = text(profile, &["type"]).unwrap_or_default();
                let allowed = matches!(kind, "RuntimeDefault" | "Localhost");
                if !allowed {
                    types.insert(kind.to_string());
                }
                !allowed
            }
        };
    let pod_bad = forbidden_type(pod.spec);
    let containers = pod.names_where(&mut forbidden_type);
    let mut who = setters(pod_bad, &containers);
    if !annotations.is_empty() {
        who.push(pluralize("annotation", "annotations", annotations.len()).to_string());
    }
    if who.is_empty() {
        return None;
    }
    let mut values = sorted(types);
    values.extend(annotations);
    let reason = pluralize(
        "forbidden AppArmor profile",
        "forbidden AppArmor profiles",
        values.len(),
    );
    let detail = format!(
        "{} must not set AppArmor profile type to {}",
        who.join(" and "),
        join_quote(&values)
    );
    violation(reason, detail)
}

/// `container_engine_t` is allowed from v1.31.
fn selinux_type_allowed(kind: &str, version: KubeVersion) -> bool {
    match kind {
        "" | "container_t" | "container_init_t" | "container_kvm_t" => true,
        "container_engine_t" => version >= v1(31),
        _ => false,
    }
}

fn se_linux_options(pod: &PodView<'_>) -> Option<Violation> {
    let mut types = BTreeSet::new();
    let (mut user, mut role) = (false, false);
    let mut forbidden_options = |owner: &Value| {
        let Some(options) = object(owner, &["securityContext", "seLinuxOptions"]) else {
            return false;
        };
        let kind = text(options, &["type"]).unwrap_or_default();
        let bad_type = !selinux_type_allowed(kind, pod.version);
        if bad_type {
            types.insert(kind.to_string());
        }
        let set = |field: &str| text(options, &[field]).is_some_and(|s| !s.is_empty());
        let (bad_user, bad_role) = (set("user"), set("role"));
        user |= bad_user;
        role |= bad_role;
        bad_type || bad_user || bad_role
    };
    let pod_bad = forbidden_options(pod.spec);
    let containers = pod.names_where(&mut forbidden_options);
    let who = setters(pod_bad, &containers);
    if who.is_empty() {
        return None;
    }
    let mut data = Vec::new();
    if !types.is_empty() {
        let noun = pluralize("type", "types", types.len());
        data.push(format!("{noun} {}", join_quote(&types)));
    }
    if user {
        data.push("user may not be set".to_string());
    }
    if role {
        data.push("role may not be set".to_string());
    }
    let detail = format!(
        "{} set forbidden securityContext.seLinuxOptions: {}",
        who.join(" and "),
        data.join("; ")
    );
    violation("seLinuxOptions", detail)
}

/// Baseline `procMount`: from v1.35 a user-namespace pod may unmask /proc.
fn proc_mount_baseline(pod: &PodView<'_>) -> Option<Violation> {
    if pod.user_namespace_relaxed() {
        return None;
    }
    unmasked_proc_mount(pod)
}

/// Only `Default` (or unset); also `procMount_restricted`, which keeps this
/// unconditional at the restricted level from v1.35.
fn unmasked_proc_mount(pod: &PodView<'_>) -> Option<Violation> {
    let mut kinds = BTreeSet::new();
    let bad = pod.names_where(|c| match text(c, &["securityContext", "procMount"]) {
        Some(kind) if kind != "Default" => {
            kinds.insert(kind.to_string());
            true
        }
        _ => false,
    });
    if bad.is_empty() {
        return None;
    }
    let detail = format!(
        "{} must not set securityContext.procMount to {}",
        containers_phrase(&bad),
        join_quote(&kinds)
    );
    violation("procMount", detail)
}

/// Who sets `seccompProfile`, and to what (`policy/check_seccompProfile_*.go`).
struct Seccomp {
    /// The pod sets a type other than RuntimeDefault or Localhost.
    pod_forbidden: bool,
    /// The pod sets RuntimeDefault or Localhost.
    pod_allowed: bool,
    forbidden_containers: Vec<String>,
    unset_containers: Vec<String>,
    forbidden_types: BTreeSet<String>,
}

fn seccomp(pod: &PodView<'_>) -> Seccomp {
    // A profile without a type has type "", which is not allowed.
    let profile_type = |owner: &'_ Value| {
        object(owner, &["securityContext", "seccompProfile"])
            .map(|p| text(p, &["type"]).unwrap_or_default().to_string())
    };
    let allowed = |kind: &str| matches!(kind, "RuntimeDefault" | "Localhost");
    let mut found = Seccomp {
        pod_forbidden: false,
        pod_allowed: false,
        forbidden_containers: Vec::new(),
        unset_containers: Vec::new(),
        forbidden_types: BTreeSet::new(),
    };
    if let Some(kind) = profile_type(pod.spec) {
        found.pod_allowed = allowed(&kind);
        found.pod_forbidden = !found.pod_allowed;
        if found.pod_forbidden {
            found.forbidden_types.insert(kind);
        }
    }
    for container in &pod.containers {
        let name = container_name(container).to_string();
        match profile_type(container) {
            None => found.unset_containers.push(name),
            Some(kind) if !allowed(&kind) => {
                found.forbidden_types.insert(kind);
                found.forbidden_containers.push(name);
            }
            Some(_) => {}
        }
    }
    found
}

/// `pod and container "a" must not set securityContext.seccompProfile.type to "Unconfined"`.
fn forbidden_seccomp(found: &Seccomp) -> Option<Violation> {
    let who = setters(found.pod_forbidden, &found.forbidden_containers);
    if who.is_empty() {
        return None;
    }
    let detail = format!(
        "{} must not set securityContext.seccompProfile.type to {}",
        who.join(" and "),
        join_quote(&found.forbidden_types)
    );
    violation("seccompProfile", detail)
}

fn seccomp_profile_baseline(pod: &PodView<'_>) -> Option<Violation> {
    // Policies before v1.19 predate the field and read the alpha annotations.
    if pod.version < v1(19) {
        return seccomp_annotations(pod);
    }
    forbidden_seccomp(&seccomp(pod))
}

const SECCOMP_POD_ANNOTATION: &str = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER_ANNOTATION_PREFIX: &str = "container.seccomp.security.alpha.kubernetes.io/";

fn seccomp_annotations(pod: &PodView<'_>) -> Option<Violation> {
    let container_keys = pod
        .containers
        .iter()
        .map(|c| format!("{SECCOMP_CONTAINER_ANNOTATION_PREFIX}{}", container_name(c)));
    let keys = std::iter::once(SECCOMP_POD_ANNOTATION.to_string()).chain(container_keys);
    // Unlike AppArmor, an empty value is not allowed.
    let allowed = |value: &str| {
        value == "runtime/default" || value == "docker/default" || value.starts_with("localhost/")
    };
    let found: BTreeSet<String> = keys
        .filter_map(|key| {
            let value = text(pod.metadata, &["annotations", key.as_str()])?;
            (!allowed(value)).then(|| format!("{key}={}", go_quote(value)))
        })
        .collect();
    if found.is_empty() {
        return None;
    }
    let noun = pluralize("annotation", "annotations", found.len());
    let detail = format!("forbidden {noun} {}", sorted(found).join(", "));
    violation("seccompProfile", detail)
}

/// The safe sysctls and the policy version each became safe at.
const SAFE_SYSCTLS: &[(&str, KubeVersion)] = &[
    ("kernel.shm_rmid_forced", v1(0)),
    ("net.ipv4.ip_local_port_range", v1(0)),
    ("net.ipv4.tcp_syncookies", v1(0)),
    ("net.ipv4.ping_group_range", v1(0)),
    ("net.ipv4.ip_unprivileged_port_start", v1(0)),
    ("net.ipv4.ip_local_reserved_ports", v1(27)),
    ("net.ipv4.tcp_keepalive_time", v1(29)),
    ("net.ipv4.tcp_fin_timeout", v1(29)),
    ("net.ipv4.tcp_keepalive_intvl", v1(29)),
    ("net.ipv4.tcp_keepalive_probes", v1(29)),
    ("net.ipv4.tcp_rmem", v1(32)),
    ("net.ipv4.tcp_wmem", v1(32)),
    ("net.ipv4.tcp_slow_start_after_idle", v1(37)),
    ("net.ipv4.tcp_notsent_lowat", v1(37)),
];

fn sysctls(pod: &PodView<'_>) -> Option<Violation> {
    let safe = |name: &str| {
        SAFE_SYSCTLS
            .iter()
            .any(|(safe, since)| *safe == name && *since <= pod.version)
    };
    // In the pod's order, repeats kept, as the plugin lists them.
    let forbidden: Vec<&str> = list(pod.spec, &["securityContext", "sysctls"])
        .iter()
        .map(|sysctl| text(sysctl, &["name"]).unwrap_or_default())
        .filter(|name| !safe(name))
        .collect();
    if forbidden.is_empty() {
        return None;
    }
    violation("forbidden sysctls", forbidden.join(", "))
}

fn windows_host_process(pod: &PodView<'_>) -> Option<Violation> {
    let host_process = |owner: &Value| {
        flag(owner, &["securityContext", "windowsOptions", "hostProcess"]) == Some(true)
    };
    let containers = pod.names_where(host_process);
    let who = setters(host_process(pod.spec), &containers);
    if who.is_empty() {
        return None;
    }
    let detail = format!(
        "{} must not set securityContext.windowsOptions.hostProcess=true",
        who.join(" and ")
    );
    violation("hostProcess", detail)
}

/// Handlers whose `httpGet.host` and `tcpSocket.host` must be empty.
const HOST_HANDLERS: &[&[&str]] = &[
    &["livenessProbe"],
    &["readinessProbe"],
    &["startupProbe"],
    &["lifecycle", "postStart"],
    &["lifecycle", "preStop"],
];

fn host_probes_and_lifecycle(pod: &PodView<'_>) -> Option<Violation> {
    // Both sets are sorted and deduplicated here, containers included.
    let mut containers = BTreeSet::new();
    let mut hosts = BTreeSet::new();
    for container in &pod.containers {
        for handler in HOST_HANDLERS {
            for action in ["httpGet", "tcpSocket"] {
                let path: Vec<&str> = handler.iter().copied().chain([action, "host"]).collect();
                if let Some(host) = text(container, &path).filter(|h| !h.is_empty()) {
                    hosts.insert(host.to_string());
                    containers.insert(container_name(container).to_string());
                }
            }
        }
    }
    if containers.is_empty() {
        return None;
    }
    let containers = sorted(containers);
    let detail = format!(
        "{} {} {} {}",
        containers_phrase(&containers),
        pluralize("uses", "use", containers.len()),
        pluralize(
            "probe or lifecycle host",
            "probe or lifecycle hosts",
            hosts.len()
        ),
        join_quote(&hosts)
    );
    violation("probe or lifecycle host", detail)
}

// --- Restricted checks. -----------------------------------------------------

fn allow_privilege_escalation(pod: &PodView<'_>) -> Option<Violation> {
    if pod.windows_exempt() {
        return None;
    }
    let bad = pod
        .names_where(|c| flag(c, &["securityContext", "allowPrivilegeEscalation"]) != Some(false));
    if bad.is_empty() {
        return None;
    }
    let detail = format!(
        "{} must set securityContext.allowPrivilegeEscalation=false",
        containers_phrase(&bad)
    );
    violation("allowPrivilegeEscalation != false", detail)
}

fn capabilities_restricted(pod: &PodView<'_>) -> Option<Violation> {
    if pod.windows_exempt() {
        return None;
    }
    let mut missing_drop_all = Vec::new();
    let mut adding = Vec::new();
    let mut added = BTreeSet::new();
    for container in &pod.containers {
        let name = container_name(container).to_string();
        let Some(capabilities) = object(container, &["securityContext", "capabilities"]) else {
            missing_drop_all.push(name);
            continue;
        };
        if !strings(capabilities, &["drop"]).any(|cap| cap == "ALL") {
            missing_drop_all.push(name.clone());
        }
        let extra: Vec<&str> = strings(capabilities, &["add"])
            .filter(|cap| *cap != "NET_BIND_SERVICE")
            .collect();
        if !extra.is_empty() {
            added.extend(extra.into_iter().map(str::to_string));
            adding.push(name);
        }
    }
    let mut details = Vec::new();
    if !missing_drop_all.is_empty() {
        details.push(format!(
            "{} must set securityContext.capabilities.drop=[\"ALL\"]",
            containers_phrase(&missing_drop_all)
        ));
    }
    if !adding.is_empty() {
        details.push(format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_phrase(&adding),
            join_quote(&added)
        ));
    }
    if details.is_empty() {
        return None;
    }
    violation("unrestricted capabilities", details.join("; "))
}

/// Volume sources allowed at the restricted level.
const ALLOWED_VOLUME_SOURCES: &[&str] = &[
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
];

/// The restricted sources the plugin names, in the order it tests them.
const RESTRICTED_VOLUME_SOURCES: &[&str] = &[
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "nfs",
    "iscsi",
    "glusterfs",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "fc",
    "azureFile",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "storageos",
];

fn restricted_volumes(pod: &PodView<'_>) -> Option<Violation> {
    // `image` was added to the allowed list in the 1.33 apiserver, at every policy version.
    let image_allowed = pod.cluster >= v1(33);
    let mut names = Vec::new();
    let mut kinds = BTreeSet::new();
    for volume in list(pod.spec, &["volumes"]) {
        let has = |source: &str| object(volume, &[source]).is_some();
        if ALLOWED_VOLUME_SOURCES.iter().any(|s| has(s)) || (image_allowed && has("image")) {
            continue;
        }
        names.push(text(volume, &["name"]).unwrap_or_default());
        let kind = RESTRICTED_VOLUME_SOURCES.iter().find(|s| has(s));
        kinds.insert(kind.copied().unwrap_or("unknown"));
    }
    if names.is_empty() {
        return None;
    }
    let detail = format!(
        "{} {} {} {} {}",
        pluralize("volume", "volumes", names.len()),
        join_quote(&names),
        pluralize("uses", "use", names.len()),
        pluralize(
            "restricted volume type",
            "restricted volume types",
            kinds.len()
        ),
        join_quote(&kinds)
    );
    violation("restricted volume types", detail)
}

fn run_as_non_root(pod: &PodView<'_>) -> Option<Violation> {
    if pod.user_namespace_relaxed() {
        return None;
    }
    let pod_value = flag(pod.spec, &["securityContext", "runAsNonRoot"]);
    let mut explicit = Vec::new();
    let mut implicit = Vec::new();
    for container in &pod.containers {
        let name = container_name(container).to_string();
        match flag(container, &["securityContext", "runAsNonRoot"]) {
            Some(false) => explicit.push(name),
            Some(true) => {}
            None if pod_value != Some(true) => implicit.push(name),
            None => {}
        }
    }
    let who = setters(pod_value == Some(false), &explicit);
    if !who.is_empty() {
        let detail = format!(
            "{} must not set securityContext.runAsNonRoot=false",
            who.join(" and ")
        );
        return violation("runAsNonRoot != true", detail);
    }
    if implicit.is_empty() {
        return None;
    }
    let detail = format!(
        "pod or {} must set securityContext.runAsNonRoot=true",
        containers_phrase(&implicit)
    );
    violation("runAsNonRoot != true", detail)
}

fn run_as_user(pod: &PodView<'_>) -> Option<Violation> {
    if pod.user_namespace_relaxed() {
        return None;
    }
    let root = |owner: &Value| {
        at(owner, &["securityContext", "runAsUser"]).and_then(Value::as_i64) == Some(0)
    };
    let containers = pod.names_where(root);
    let who = setters(root(pod.spec), &containers);
    if who.is_empty() {
        return None;
    }
    violation(
        "runAsUser=0",
        format!("{} must not set runAsUser=0", who.join(" and ")),
    )
}

fn seccomp_profile_restricted(pod: &PodView<'_>) -> Option<Violation> {
    if pod.windows_exempt() {
        return None;
    }
    let found = seccomp(pod);
    if let Some(explicit) = forbidden_seccomp(&found) {
        return Some(explicit);
    }
    // A container may leave it unset only under a valid pod-level profile.
    if found.pod_allowed || found.unset_containers.is_empty() {
        return None;
    }
    let detail = format!(
        "pod or {} must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\"",
        containers_phrase(&found.unset_containers)
    );
    violation("seccompProfile", detail)
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

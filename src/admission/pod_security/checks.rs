//! The checks, as one table (`policy/checks.go`), and how they read a pod
//! and phrase what they find (`policy/helpers.go`).

use super::*;

// ---------------------------------------------------------------------------
// The checks: one table, one function per check ID.

pub(super) type Violation = (String, String);

pub(super) type CheckFn = fn(&PodView<'_>) -> Option<Violation>;

/// One check of `policy/check_*.go`: it exists from policy version `since`,
/// and at the restricted level it replaces the baseline check `overrides`.
/// Changes inside a check at later versions are in its function.
pub(super) struct Check {
    pub(super) id: &'static str,
    pub(super) level: Level,
    pub(super) since: KubeVersion,
    pub(super) overrides: Option<&'static str>,
    pub(super) run: CheckFn,
}

pub(super) const fn v1(minor: u32) -> KubeVersion {
    KubeVersion::new(1, minor)
}

pub(super) const fn baseline(id: &'static str, since: KubeVersion, run: CheckFn) -> Check {
    Check {
        id,
        level: Level::Baseline,
        since,
        overrides: None,
        run,
    }
}

pub(super) const fn restricted(
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

pub(super) const CHECKS: &[Check] = &[
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
pub(super) struct PodView<'a> {
    pub(super) metadata: &'a Value,
    pub(super) spec: &'a Value,
    pub(super) containers: Vec<&'a Value>,
    pub(super) version: KubeVersion,
    pub(super) cluster: KubeVersion,
}

pub(super) static ABSENT: Value = Value::Null;

impl<'a> PodView<'a> {
    pub(super) fn new(pod: &'a Value, version: KubeVersion, cluster: KubeVersion) -> Self {
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
    pub(super) fn names_where(&self, mut bad: impl FnMut(&Value) -> bool) -> Vec<String> {
        self.containers
            .iter()
            .filter(|container| bad(container))
            .map(|container| container_name(container).to_string())
            .collect()
    }

    /// From v1.25, checks that Windows pods cannot meet let them pass.
    pub(super) fn windows_exempt(&self) -> bool {
        self.version >= v1(25) && text(self.spec, &["os", "name"]) == Some("windows")
    }

    /// From v1.35, a pod in a user namespace (`hostUsers: false`) passes the
    /// checks that guard against root on the host (before, a perma-alpha gate, off).
    pub(super) fn user_namespace_relaxed(&self) -> bool {
        self.version >= v1(35) && flag(self.spec, &["hostUsers"]) == Some(false)
    }
}

pub(super) fn violation(reason: &str, detail: String) -> Option<Violation> {
    Some((reason.to_string(), detail))
}

// --- Reading user YAML: a wrong type or null is absent. ---------------------

pub(super) fn at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter()
        .try_fold(value, |v, key| v.get(*key))
        .filter(|v| !v.is_null())
}

/// A set struct (a non-nil pointer in the Go types).
pub(super) fn object<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    at(value, path).filter(|v| v.is_object())
}

pub(super) fn flag(value: &Value, path: &[&str]) -> Option<bool> {
    at(value, path).and_then(Value::as_bool)
}

pub(super) fn text<'a>(value: &'a Value, path: &[&str]) -> Option<&'a str> {
    at(value, path).and_then(Value::as_str)
}

pub(super) fn list<'a>(value: &'a Value, path: &[&str]) -> &'a [Value] {
    at(value, path)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

pub(super) fn strings<'a>(value: &'a Value, path: &[&str]) -> impl Iterator<Item = &'a str> {
    list(value, path).iter().filter_map(Value::as_str)
}

// --- The plugin's phrasing (`policy/helpers.go`). ---------------------------

pub(super) fn pluralize<'a>(singular: &'a str, plural: &'a str, count: usize) -> &'a str {
    if count == 1 { singular } else { plural }
}

/// `"a", "b"`, without escaping, as `joinQuote` does.
pub(super) fn join_quote<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> String {
    let quoted: Vec<String> = items
        .into_iter()
        .map(|item| format!("\"{}\"", item.as_ref()))
        .collect();
    quoted.join(", ")
}

/// `container "a"` or `containers "a", "b"`.
pub(super) fn containers_phrase(names: &[String]) -> String {
    let noun = pluralize("container", "containers", names.len());
    format!("{noun} {}", join_quote(names))
}

/// Who set a forbidden value: `pod`, then the containers.
pub(super) fn setters(pod: bool, containers: &[String]) -> Vec<String> {
    let mut who = Vec::new();
    if pod {
        who.push("pod".to_string());
    }
    if !containers.is_empty() {
        who.push(containers_phrase(containers));
    }
    who
}

pub(super) fn sorted(set: BTreeSet<String>) -> Vec<String> {
    set.into_iter().collect()
}

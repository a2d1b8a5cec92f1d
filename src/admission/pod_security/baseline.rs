//! The Baseline level's checks (`policy/check_*.go` of
//! `k8s.io/pod-security-admission`).

use super::*;

pub(super) fn host_namespaces(pod: &PodView<'_>) -> Option<Violation> {
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

pub(super) fn privileged(pod: &PodView<'_>) -> Option<Violation> {
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

pub(super) fn capabilities_baseline(pod: &PodView<'_>) -> Option<Violation> {
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

pub(super) fn host_path_volumes(pod: &PodView<'_>) -> Option<Violation> {
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

pub(super) fn host_ports(pod: &PodView<'_>) -> Option<Violation> {
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

pub(super) const APPARMOR_ANNOTATION_PREFIX: &str =
    "container.apparmor.security.beta.kubernetes.io/";

/// The AppArmor annotations with a value other than empty, `runtime/default`
/// or `localhost/*`, as sorted `key="value"` entries.
pub(super) fn forbidden_app_armor_annotations(pod: &PodView<'_>) -> Vec<String> {
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

pub(super) fn app_armor_profile(pod: &PodView<'_>) -> Option<Violation> {
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
pub(super) fn selinux_type_allowed(kind: &str, version: KubeVersion) -> bool {
    match kind {
        "" | "container_t" | "container_init_t" | "container_kvm_t" => true,
        "container_engine_t" => version >= v1(31),
        _ => false,
    }
}

pub(super) fn se_linux_options(pod: &PodView<'_>) -> Option<Violation> {
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
pub(super) fn proc_mount_baseline(pod: &PodView<'_>) -> Option<Violation> {
    if pod.user_namespace_relaxed() {
        return None;
    }
    unmasked_proc_mount(pod)
}

/// Only `Default` (or unset); also `procMount_restricted`, which keeps this
/// unconditional at the restricted level from v1.35.
pub(super) fn unmasked_proc_mount(pod: &PodView<'_>) -> Option<Violation> {
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
pub(super) struct Seccomp {
    /// The pod sets a type other than RuntimeDefault or Localhost.
    pub(super) pod_forbidden: bool,
    /// The pod sets RuntimeDefault or Localhost.
    pub(super) pod_allowed: bool,
    pub(super) forbidden_containers: Vec<String>,
    pub(super) unset_containers: Vec<String>,
    pub(super) forbidden_types: BTreeSet<String>,
}

pub(super) fn seccomp(pod: &PodView<'_>) -> Seccomp {
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
pub(super) fn forbidden_seccomp(found: &Seccomp) -> Option<Violation> {
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

pub(super) fn seccomp_profile_baseline(pod: &PodView<'_>) -> Option<Violation> {
    // Policies before v1.19 predate the field and read the alpha annotations.
    if pod.version < v1(19) {
        return seccomp_annotations(pod);
    }
    forbidden_seccomp(&seccomp(pod))
}

pub(super) const SECCOMP_POD_ANNOTATION: &str = "seccomp.security.alpha.kubernetes.io/pod";
pub(super) const SECCOMP_CONTAINER_ANNOTATION_PREFIX: &str =
    "container.seccomp.security.alpha.kubernetes.io/";

pub(super) fn seccomp_annotations(pod: &PodView<'_>) -> Option<Violation> {
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
pub(super) const SAFE_SYSCTLS: &[(&str, KubeVersion)] = &[
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

pub(super) fn sysctls(pod: &PodView<'_>) -> Option<Violation> {
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

pub(super) fn windows_host_process(pod: &PodView<'_>) -> Option<Violation> {
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
pub(super) const HOST_HANDLERS: &[&[&str]] = &[
    &["livenessProbe"],
    &["readinessProbe"],
    &["startupProbe"],
    &["lifecycle", "postStart"],
    &["lifecycle", "preStop"],
];

pub(super) fn host_probes_and_lifecycle(pod: &PodView<'_>) -> Option<Violation> {
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

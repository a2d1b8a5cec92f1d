//! The Restricted level's checks (`policy/check_*.go` of
//! `k8s.io/pod-security-admission`).

use super::*;

pub(super) fn allow_privilege_escalation(pod: &PodView<'_>) -> Option<Violation> {
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

pub(super) fn capabilities_restricted(pod: &PodView<'_>) -> Option<Violation> {
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
pub(super) const ALLOWED_VOLUME_SOURCES: &[&str] = &[
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
pub(super) const RESTRICTED_VOLUME_SOURCES: &[&str] = &[
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

pub(super) fn restricted_volumes(pod: &PodView<'_>) -> Option<Violation> {
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

pub(super) fn run_as_non_root(pod: &PodView<'_>) -> Option<Violation> {
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

pub(super) fn run_as_user(pod: &PodView<'_>) -> Option<Violation> {
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

pub(super) fn seccomp_profile_restricted(pod: &PodView<'_>) -> Option<Violation> {
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

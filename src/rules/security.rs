//! Security context of the injected containers.
//!
//! A PodSecurityPolicy defaults the app containers at admission; containers a
//! webhook adds afterwards miss out. Two ways to give the injected containers
//! what the policy would: apply a PodSecurityPolicy in context exactly as the
//! admission plugin defaults a container ([`crate::admission::psp`]), or,
//! without one, copy from the first app container what a policy would have
//! given it (here). Pod Security `restricted` namespaces get the settings that
//! level demands.

use serde_json::{Value, json};

use crate::admission::pod_security::BASELINE_CAPABILITIES;
use crate::json::Field;

/// Copy from `app` (the first app container) what a policy would have given it:
/// its dropped capabilities (keeping what `container` itself adds,
/// such as NET_ADMIN for an iptables init container), seccomp and SELinux
/// options; and set `allowPrivilegeEscalation: false`, `readOnlyRootFilesystem: true`
/// where the container leaves them unset. With `with_added`, the
/// capabilities the app adds too, after the container's own, as Linkerd
/// copies them (see [`crate::mesh::Mesh::copies_added_capabilities`]).
pub fn copy_from_app(container: &mut Value, app: &Value, with_added: bool) {
    let Some(app_context) = app.field("securityContext").and_then(Value::as_object) else {
        return;
    };
    let Value::Object(c) = container else { return };
    let context = c.entry("securityContext").or_insert_with(|| json!({}));
    let Value::Object(context) = context else {
        return;
    };
    let names = |v: Option<&Value>| -> Vec<String> {
        capability_names(v)
            .into_iter()
            .map(str::to_string)
            .collect()
    };
    let own_add = names(context.field("capabilities").and_then(|c| c.field("add")));
    let own_drop = names(context.field("capabilities").and_then(|c| c.field("drop")));
    let app_caps = app_context.field("capabilities");
    // What the app gives up is copied; what it adds only for a mesh that
    // copies it (a capability the app adds is otherwise its own need).
    let mut add = own_add.clone();
    if with_added {
        for cap in names(app_caps.and_then(|c| c.field("add"))) {
            if !add.contains(&cap) {
                add.push(cap);
            }
        }
    }
    let mut drop = own_drop.clone();
    for cap in names(app_caps.and_then(|c| c.field("drop"))) {
        // Never drop what the container needs (ALL would drop NET_ADMIN too, but
        // capabilities added explicitly are kept by the runtime).
        if !drop.contains(&cap) && !own_add.contains(&cap) {
            drop.push(cap);
        }
    }
    if add != own_add || drop != own_drop {
        let caps = context.entry("capabilities").or_insert_with(|| json!({}));
        if let Value::Object(caps) = caps {
            if !add.is_empty() {
                caps.insert("add".into(), json!(add));
            }
            if !drop.is_empty() {
                caps.insert("drop".into(), json!(drop));
            }
        }
    }
    // The app's seccomp and SELinux settings are what its policy gave it.
    for field in ["seccompProfile", "seLinuxOptions"] {
        if let Some(value) = app_context.field(field) {
            context.insert(field.to_string(), value.clone());
        }
    }
    context
        .entry("allowPrivilegeEscalation")
        .or_insert(Value::Bool(false));
    context
        .entry("readOnlyRootFilesystem")
        .or_insert(Value::Bool(true));
}

/// Before 1.19 seccomp was set by annotation only: move a container's
/// `seccompProfile` field into the annotation an old apiserver reads, and
/// return that annotation.
pub fn seccomp_field_to_annotation(container: &mut Value) -> Option<(String, String)> {
    let name = container.field("name")?.as_str()?.to_string();
    let context = container.get_mut("securityContext")?.as_object_mut()?;
    let profile = context.shift_remove("seccompProfile")?;
    if context.is_empty() {
        container.as_object_mut()?.shift_remove("securityContext");
    }
    let value = match profile.field("type").and_then(Value::as_str)? {
        "RuntimeDefault" => "runtime/default".to_string(),
        "Unconfined" => "unconfined".to_string(),
        "Localhost" => format!(
            "localhost/{}",
            profile.field("localhostProfile").and_then(Value::as_str)?
        ),
        _ => return None,
    };
    Some((
        format!("container.seccomp.security.alpha.kubernetes.io/{name}"),
        value,
    ))
}

/// Why `container` cannot run in a Pod Security `baseline` namespace, if it cannot.
pub fn baseline_problem(container: &Value) -> Option<String> {
    let name = container
        .field("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let context = container.field("securityContext")?;
    let added: Vec<&str> =
        capability_names(context.field("capabilities").and_then(|c| c.field("add")))
            .into_iter()
            .filter(|cap| !BASELINE_CAPABILITIES.contains(cap))
            .collect();
    let privileged = context.field("privileged") == Some(&Value::Bool(true));
    (!added.is_empty() || privileged).then(|| {
        let what = if privileged { "is privileged".to_string() } else { format!("adds {}", added.join(" and ")) };
        format!("{name} {what}, which Pod Security \"baseline\" forbids: use CNI mode (--set cni=true) so that no iptables init container is needed")
    })
}

fn capability_names(list: Option<&Value>) -> Vec<&str> {
    list.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// Make `container` meet Pod Security `restricted` where it can: drop ALL,
/// RuntimeDefault seccomp (unless the pod sets one), no privilege escalation,
/// non-root. Returns why it still cannot meet the level, if it cannot.
pub fn restrict(container: &mut Value, pod_context: Option<&Value>) -> Option<String> {
    let name = container
        .field("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let Value::Object(c) = container else {
        return None;
    };
    let context = c.entry("securityContext").or_insert_with(|| json!({}));
    let Value::Object(context) = context else {
        return None;
    };
    let caps = context.entry("capabilities").or_insert_with(|| json!({}));
    let mut problems = Vec::new();
    if let Value::Object(caps) = caps {
        let drop = caps.entry("drop").or_insert_with(|| json!([]));
        if let Value::Array(drop) = drop {
            if !drop.iter().any(|d| d == "ALL") {
                drop.push(json!("ALL"));
            }
        }
        let added: Vec<String> = caps
            .field("add")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|cap| *cap != "NET_BIND_SERVICE")
            .map(str::to_string)
            .collect();
        if !added.is_empty() {
            problems.push(format!("adds {}", added.join(" and ")));
        }
    }
    let pod_has_seccomp = pod_context
        .and_then(|p| p.field("seccompProfile"))
        .is_some();
    if !pod_has_seccomp {
        context
            .entry("seccompProfile")
            .or_insert_with(|| json!({"type": "RuntimeDefault"}));
    }
    context
        .entry("allowPrivilegeEscalation")
        .or_insert(Value::Bool(false));
    let root = context.field("runAsUser").and_then(Value::as_u64) == Some(0);
    if root {
        problems.push("runs as root".into());
    } else if context.field("runAsNonRoot") != Some(&Value::Bool(false)) {
        context.insert("runAsNonRoot".into(), Value::Bool(true));
    } else {
        problems.push("sets runAsNonRoot: false".into());
    }
    if context.field("privileged") == Some(&Value::Bool(true)) {
        problems.push("is privileged".into());
    }
    (!problems.is_empty()).then(|| {
        format!(
            "{name} {}, which Pod Security \"restricted\" forbids: use CNI mode (--set cni=true) so that no iptables init container is needed",
            problems.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_capabilities_are_copied_after_the_containers_own_when_asked() {
        let app = json!({"name": "app", "securityContext": {
            "capabilities": {"add": ["NET_BIND_SERVICE", "NET_RAW"], "drop": ["ALL", "NET_RAW"]}}});
        let mut init = json!({"name": "init", "securityContext": {"capabilities": {"add": ["NET_ADMIN", "NET_RAW"]}}});
        copy_from_app(&mut init, &app, true);
        assert_eq!(
            init["securityContext"]["capabilities"],
            json!({"add": ["NET_ADMIN", "NET_RAW", "NET_BIND_SERVICE"], "drop": ["ALL"]})
        );
        let mut proxy = json!({"name": "proxy", "securityContext": {}});
        copy_from_app(&mut proxy, &app, true);
        assert_eq!(
            proxy["securityContext"]["capabilities"],
            json!({"add": ["NET_BIND_SERVICE", "NET_RAW"], "drop": ["ALL", "NET_RAW"]})
        );
    }

    #[test]
    fn copy_keeps_what_the_init_container_needs() {
        let app = json!({"name": "app", "securityContext": {
            "capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["ALL", "NET_ADMIN"]},
            "seccompProfile": {"type": "Localhost", "localhostProfile": "p.json"}}});
        let mut init = json!({"name": "init", "securityContext": {"capabilities": {"add": ["NET_ADMIN", "NET_RAW"]}}});
        copy_from_app(&mut init, &app, false);
        assert_eq!(
            init["securityContext"]["capabilities"],
            json!({"add": ["NET_ADMIN", "NET_RAW"], "drop": ["ALL"]})
        );
        assert_eq!(
            init["securityContext"]["seccompProfile"]["type"],
            "Localhost"
        );
        assert_eq!(init["securityContext"]["readOnlyRootFilesystem"], true);
    }

    #[test]
    fn seccomp_fields_become_annotations_for_old_clusters() {
        let mut proxy =
            json!({"name": "p", "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}});
        assert_eq!(
            seccomp_field_to_annotation(&mut proxy),
            Some((
                "container.seccomp.security.alpha.kubernetes.io/p".into(),
                "runtime/default".into()
            ))
        );
        assert_eq!(proxy, json!({"name": "p"}));
        let mut bare = json!({"name": "b"});
        assert_eq!(seccomp_field_to_annotation(&mut bare), None);
    }

    #[test]
    fn restricted_is_met_or_explained() {
        let mut proxy = json!({"name": "proxy", "securityContext": {"runAsUser": 2102}});
        assert_eq!(restrict(&mut proxy, None), None);
        assert_eq!(
            proxy["securityContext"]["capabilities"]["drop"],
            json!(["ALL"])
        );
        assert_eq!(
            proxy["securityContext"]["seccompProfile"]["type"],
            "RuntimeDefault"
        );
        let mut init = json!({"name": "linkerd-init", "securityContext": {"capabilities": {"add": ["NET_ADMIN", "NET_RAW"]}}});
        let why = restrict(&mut init, None).expect("cannot");
        assert!(
            why.contains("NET_ADMIN and NET_RAW") && why.contains("CNI"),
            "{why}"
        );
    }
}

//! A pod's own `istio-proxy` (or init container) merged into the injected
//! one as Istio merges it, the `proxy.istio.io/overrides` record of it, and
//! the capture's user following the proxy's (`webhook.go`:
//! `reapplyOverwrittenContainers`, `adjustInitContainerUser`).

use super::*;

/// The image a user-written proxy container names for "the injector's".
pub const AUTO_IMAGE: &str = "auto";

/// The pod's own container `user` as Istio overlays it on the container
/// its template rendered (`rendered`, of the same name), by Kubernetes'
/// strategic merge: the user's fields win; maps (resources, security
/// context, probes, lifecycle) are merged key by key; env, ports, mounts
/// and resize policies item by item (by name, port, mount path, resource;
/// the user's new items after the rendered ones); other lists (args,
/// command, capabilities) are the user's. An `image: auto` is the
/// rendered image. Quantities are written in canonical form, as Istio's
/// serialiser writes them.
pub fn merge_user_container(rendered: &Value, user: &Value) -> Value {
    // Istio reads the pod into Go's typed structs and writes the container
    // back before it merges: a null, an empty list or an unset number is
    // absent then, and leaves the rendered field as it is (a gateway chart's
    // `env:` keeps the template's env).
    let mut user = user.clone();
    typed::as_go_writes(&mut user);
    let mut merged = rendered.clone();
    if let (Value::Object(out), Value::Object(overlay)) = (&mut merged, &user) {
        for (key, value) in overlay {
            if key == "image" && value.as_str() == Some(AUTO_IMAGE) {
                continue;
            }
            let value = match out.get(key) {
                Some(base) => overlay::merged_field(key, base, value),
                None => value.clone(),
            };
            out.insert(key.clone(), value);
        }
    }
    canonical_resources(&mut merged);
    merged
}

/// The container's resource quantities in canonical form.
pub(super) fn canonical_resources(container: &mut Value) {
    if let Some(Value::Object(resources)) = container.field_mut("resources") {
        for list in ["limits", "requests"] {
            if let Some(quantities) = resources.get_mut(list) {
                typed::canonical_quantities(quantities);
            }
        }
    }
}

/// The fields of Kubernetes' objects in a container, in the order of Go's
/// structs, by the key they are found under (`*` for the container).
pub(super) const GO_FIELDS: &[(&str, &[&str])] = &[
    (
        "*",
        &[
            "name",
            "image",
            "command",
            "args",
            "workingDir",
            "ports",
            "envFrom",
            "env",
            "resources",
            "resizePolicy",
            "restartPolicy",
            "volumeMounts",
            "volumeDevices",
            "livenessProbe",
            "readinessProbe",
            "startupProbe",
            "lifecycle",
            "terminationMessagePath",
            "terminationMessagePolicy",
            "imagePullPolicy",
            "securityContext",
            "stdin",
            "stdinOnce",
            "tty",
        ],
    ),
    (
        "ports",
        &["name", "hostPort", "containerPort", "protocol", "hostIP"],
    ),
    ("env", &["name", "value", "valueFrom"]),
    ("resources", &["limits", "requests", "claims"]),
    (
        "volumeMounts",
        &[
            "name",
            "readOnly",
            "recursiveReadOnly",
            "mountPath",
            "subPath",
            "mountPropagation",
            "subPathExpr",
        ],
    ),
    (
        "probe",
        &[
            "exec",
            "httpGet",
            "tcpSocket",
            "grpc",
            "initialDelaySeconds",
            "timeoutSeconds",
            "periodSeconds",
            "successThreshold",
            "failureThreshold",
            "terminationGracePeriodSeconds",
        ],
    ),
    (
        "httpGet",
        &["path", "port", "host", "scheme", "httpHeaders"],
    ),
    ("lifecycle", &["postStart", "preStop", "stopSignal"]),
    ("handler", &["exec", "httpGet", "tcpSocket", "sleep"]),
    (
        "securityContext",
        &[
            "capabilities",
            "privileged",
            "seLinuxOptions",
            "windowsOptions",
            "runAsUser",
            "runAsGroup",
            "runAsNonRoot",
            "readOnlyRootFilesystem",
            "allowPrivilegeEscalation",
            "procMount",
            "seccompProfile",
            "appArmorProfile",
        ],
    ),
    ("capabilities", &["add", "drop"]),
];

/// The container `container` as Go's `encoding/json` writes Kubernetes'
/// Container: fields in the struct's order (others after, in their own),
/// empty ones (and nulls) left out but `resources`, which is always written.
pub fn go_container_json(container: &Value) -> String {
    let mut out = String::new();
    go_typed(&mut out, container, "*");
    out
}

/// `value` (found under `kind`, see [`GO_FIELDS`]) written as Go writes it.
pub(super) fn go_typed(out: &mut String, value: &Value, kind: &str) {
    match value {
        Value::Object(map) if kind == "*" && map.get("resources").is_none_or(Value::is_null) => {
            // Go writes a container's resources even when empty.
            let mut with = map.clone();
            with.insert("resources".into(), Value::Object(Map::new()));
            go_typed(out, &Value::Object(with), kind);
        }
        Value::Object(map) => {
            let order = GO_FIELDS
                .iter()
                .find(|(k, _)| *k == kind)
                .map_or(&[][..], |(_, fields)| *fields);
            let mut keys: Vec<&String> = map.keys().collect();
            let rank = |key: &str| order.iter().position(|k| *k == key).unwrap_or(order.len());
            if order.is_empty() {
                // A map of Go's (limits, requests): its keys sorted.
                keys.sort();
            } else {
                keys.sort_by_key(|k| rank(k));
            }
            out.push('{');
            let mut first = true;
            for key in keys {
                let field = &map[key.as_str()];
                let empty = match field {
                    Value::Null => true,
                    Value::Array(items) => items.is_empty(),
                    Value::Object(m) => m.is_empty() && !(kind == "*" && key == "resources"),
                    // Go's strings are `omitempty` but for the required ones.
                    Value::String(s) => {
                        s.is_empty() && !matches!(key.as_str(), "name" | "mountPath")
                    }
                    _ => false,
                };
                if empty {
                    continue;
                }
                if !first {
                    out.push(',');
                }
                first = false;
                go_json_string(out, key);
                out.push(':');
                let inner = match (kind, key.as_str()) {
                    (_, "livenessProbe" | "readinessProbe" | "startupProbe") => "probe",
                    ("lifecycle", _) => "handler",
                    (_, other) => other,
                };
                go_typed(out, field, inner);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_typed(out, item, kind);
            }
            out.push(']');
        }
        Value::String(s) => go_json_string(out, s),
        other => out.push_str(&other.to_string()),
    }
}

/// `proxy.istio.io/overrides` as Istio writes it: the pod's own containers
/// it merged its rendered ones into, by the list its template put them in
/// (`containers`, `initContainers`; an empty list left out), each with an
/// `image: auto` left out and its quantities canonical.
pub fn overrides_annotation(containers: &[Value], init_containers: &[Value]) -> String {
    let mut out = String::from("{");
    let mut first = true;
    for (key, list) in [
        ("containers", containers),
        ("initContainers", init_containers),
    ] {
        if list.is_empty() {
            continue;
        }
        if !first {
            out.push(',');
        }
        first = false;
        go_json_string(&mut out, key);
        out.push_str(":[");
        for (i, container) in list.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let mut overlay = container.clone();
            if let Value::Object(map) = &mut overlay {
                if map.get("image").and_then(Value::as_str) == Some(AUTO_IMAGE) {
                    map.shift_remove("image");
                }
            }
            canonical_resources(&mut overlay);
            out.push_str(&go_container_json(&overlay));
        }
        out.push(']');
    }
    out.push('}');
    out
}

/// The pod's own containers `proxy.istio.io/overrides` records, by the
/// list Istio's template put their merged container in.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    pub containers: Vec<Value>,
    pub init_containers: Vec<Value>,
}

/// `proxy.istio.io/overrides` (`text`) read as Istio writes it: an object
/// whose `containers` and `initContainers` (either may be absent or null)
/// are lists of named containers. `None` for anything else: what the pod
/// had is then not known.
pub fn parse_overrides(text: &str) -> Option<Overrides> {
    let value: Value = serde_json::from_str(text).ok()?;
    let Value::Object(map) = value else {
        return None;
    };
    let list = |key: &str| -> Option<Vec<Value>> {
        match map.get(key) {
            None | Some(Value::Null) => Some(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .all(|c| c.field("name").and_then(Value::as_str).is_some())
                .then(|| items.clone()),
            Some(_) => None,
        }
    };
    Some(Overrides {
        containers: list("containers")?,
        init_containers: list("initContainers")?,
    })
}

/// A container `proxy.istio.io/overrides` records, as the pod had it:
/// Istio leaves an `image: auto` out (its `reapplyOverwrittenContainers`
/// empties it, and Go omits the empty string), so a recorded container
/// without an image had `image: auto`, put back after its name; and Go
/// writes every container's `resources`, so an empty one is dropped.
pub fn recorded_container(recorded: &Value) -> Value {
    let mut container = recorded.clone();
    if let Value::Object(map) = &mut container {
        if map.get("resources").is_some_and(|r| match r {
            Value::Object(m) => m.is_empty(),
            other => other.is_null(),
        }) {
            map.shift_remove("resources");
        }
        if map.get("image").is_none_or(Value::is_null) {
            let at = map.keys().position(|k| k == "name").map_or(0, |i| i + 1);
            map.shift_insert(at, "image".into(), Value::String(AUTO_IMAGE.into()));
        }
    }
    container
}

/// Whether the pod's own container `recorded`, which
/// `proxy.istio.io/overrides` lists among the init containers, was one of
/// the pod's containers: Istio's proxy as a native sidecar (`injected`,
/// with `restartPolicy: Always`) while the pod's own set no such policy.
/// Istio moves the pod's `istio-proxy` from its containers to its init
/// containers when its template makes the proxy a native sidecar
/// (`inject.go`); an init container of the pod's own without that policy
/// would have to exit before the app starts, which a proxy never does.
pub fn moved_from_containers(recorded: &Value, injected: &Value) -> bool {
    let always = |c: &Value| c.field("restartPolicy").and_then(Value::as_str) == Some("Always");
    recorded.field("name").and_then(Value::as_str) == Some(PROXY)
        && always(injected)
        && !always(recorded)
}

/// Whether the pod's own proxy runs as the same user as its app, as
/// Istio's webhook decides it on OpenShift (`isSidecarUserMatchingAppUser`
/// in `webhook.go`), where every container of a project gets the same
/// `runAsUser`: over the pod's containers, then its init containers, the
/// last `runAsUser` of an `istio-proxy` against the last of a container
/// that is neither it nor istio-init or istio-validation, either 0 when
/// none sets one (so two unset users match).
pub fn proxy_user_matches_app_user(spec: &Value) -> bool {
    let (mut proxy_user, mut app_user) = (0, 0);
    let containers = ["containers", "initContainers"]
        .into_iter()
        .filter_map(|list| spec.field(list).and_then(Value::as_array))
        .flatten();
    for container in containers {
        let user = container
            .field("securityContext")
            .and_then(|c| c.field("runAsUser"))
            .and_then(Value::as_i64);
        let Some(user) = user else {
            continue;
        };
        match container.field("name").and_then(Value::as_str) {
            Some(PROXY) => proxy_user = user,
            Some("istio-init" | "istio-validation") => {}
            _ => app_user = user,
        }
    }
    proxy_user == app_user
}

/// The pod's own proxy container with the user and group its security
/// context sets taken out, as Istio's webhook resets them on OpenShift when
/// they are the app's (see [`proxy_user_matches_app_user`]): the proxy then
/// runs as the project's own proxy user. Only a container with a security
/// context is touched (the context itself stays).
pub fn without_app_user(user: &Value) -> Value {
    let mut user = user.clone();
    if let Some(Value::Object(context)) = user.field_mut("securityContext") {
        context.shift_remove("runAsUser");
        context.shift_remove("runAsGroup");
    }
    user
}

/// What Istio does to its capture container (`init`, istio-init or
/// istio-validation) and its proxy (`proxy`, merged already) after merging
/// the pod's own proxy container (`user`) in: the validation container
/// runs as the user and group the user's proxy sets (not with TPROXY); the
/// capture's `-u` is the user's proxy's user when it sets one other than
/// 0; with TPROXY the proxy runs as root whatever the user's proxy says.
pub fn adjust_capture_user(init: &mut Value, proxy: &mut Value, user: &Value, tproxy: bool) {
    let Some(context) = user.field("securityContext") else {
        return;
    };
    let user_id = context.field("runAsUser").and_then(Value::as_i64);
    let group_id = context.field("runAsGroup").and_then(Value::as_i64);
    if user_id.is_none() && group_id.is_none() {
        return;
    }
    if tproxy && user_id.is_some() {
        if let Some(Value::Object(context)) = proxy.field_mut("securityContext") {
            context.insert("runAsUser".into(), Value::from(0));
        }
    }
    let validation = init.field("name").and_then(Value::as_str) == Some("istio-validation");
    if !tproxy && validation {
        if let Value::Object(container) = &mut *init {
            let context = container
                .entry("securityContext")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(context) = context {
                if let Some(id) = user_id {
                    context.insert("runAsUser".into(), Value::from(id));
                }
                if let Some(id) = group_id {
                    context.insert("runAsGroup".into(), Value::from(id));
                }
            }
        }
    }
    let Some(id) = user_id.filter(|id| *id != 0) else {
        return;
    };
    if let Some(Value::Array(args)) = init.field_mut("args") {
        if let Some(at) = args.iter().position(|a| a.as_str() == Some("-u")) {
            if let Some(arg) = args.get_mut(at + 1) {
                *arg = Value::String(id.to_string());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn overrides_read_as_istio_writes_them() {
        let text = r#"{"containers":[{"name":"traffic","image":"t:1","resources":{}}]}"#;
        let read = parse_overrides(text).expect("reads");
        assert_eq!(
            read.containers,
            vec![json!({"name": "traffic", "image": "t:1", "resources": {}})]
        );
        assert!(read.init_containers.is_empty());
        let null = parse_overrides(r#"{"containers":null,"initContainers":[{"name":"a"}]}"#);
        assert_eq!(null.map(|o| o.init_containers.len()), Some(1));
        // What Istio never writes: what the pod had is not known.
        for bad in [
            "",
            "[]",
            "{\"containers\":{}}",
            "{\"containers\":[{}]}",
            "{",
        ] {
            assert_eq!(parse_overrides(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_recorded_container_gets_back_its_image_auto_and_no_empty_resources() {
        let recorded =
            json!({"name": "istio-proxy", "resources": {}, "imagePullPolicy": "IfNotPresent"});
        let back = recorded_container(&recorded);
        assert_eq!(
            back,
            json!({"name": "istio-proxy", "image": "auto", "imagePullPolicy": "IfNotPresent"})
        );
        // The image right after the name, as a user writes it.
        let keys: Vec<&String> = back.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["name", "image", "imagePullPolicy"]);
        // An image and resources of its own are kept.
        let own = json!({"name": "app", "image": "a:1", "resources": {"limits": {"cpu": "1"}}});
        assert_eq!(recorded_container(&own), own);
    }

    #[test]
    fn the_proxy_recorded_among_init_containers_was_a_container_when_istio_made_it_native() {
        let native = json!({"name": "istio-proxy", "restartPolicy": "Always"});
        let own = json!({"name": "istio-proxy", "args": ["-c", "x"]});
        assert!(moved_from_containers(&own, &native));
        // The pod's own native proxy was an init container already.
        assert!(!moved_from_containers(&native, &native));
        // A classic init container, or another name, stays where it was.
        assert!(!moved_from_containers(
            &own,
            &json!({"name": "istio-proxy"})
        ));
        let init = json!({"name": "istio-init", "image": "x"});
        assert!(!moved_from_containers(&init, &native));
    }
}

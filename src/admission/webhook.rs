//! Mutating admission webhooks, offline: their configurations
//! (MutatingWebhookConfiguration objects), whether one is called for a pod,
//! and what each does. The mesh's own injector is this tool's injection;
//! other webhooks cannot be called, so their mutation is declared in a
//! `WebhookEmulation` object (`staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/mutating/`).

use serde_json::{Map, Value};

use crate::json::Field;

pub use crate::cluster::EMULATION_KIND;

/// When a webhook is called again after later mutations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reinvocation {
    Never,
    IfNeeded,
}

/// What calling a webhook does to the pod.
#[derive(Debug, Clone, PartialEq)]
pub enum Behaviour {
    /// The mesh's injector: this tool's injection, as the webhook runs it.
    MeshInjector,
    /// A declared RFC 6902 JSON Patch, applied to the pod.
    Patch(Value),
    /// A declared merge into every container (init and regular) with one of these names.
    MergeIntoContainers { names: Vec<String>, merge: Value },
    /// Nothing declared: the webhook is reported and skipped, never guessed.
    NotEmulated,
}

/// One webhook of a configuration, in the order the apiserver calls them.
#[derive(Debug, Clone, PartialEq)]
pub struct Webhook {
    pub configuration: String,
    pub name: String,
    pub reinvocation: Reinvocation,
    namespace_selector: Option<Value>,
    object_selector: Option<Value>,
    rules: Vec<Value>,
    match_conditions: bool,
    pub behaviour: Behaviour,
}

impl Webhook {
    /// `configuration/webhook`, as traces name it.
    pub fn id(&self) -> String {
        format!("{}/{}", self.configuration, self.name)
    }

    /// Whether the apiserver calls it for a pod CREATE, given the labels of
    /// the pod's namespace and of the pod; why not, when it does not.
    pub fn matches(
        &self,
        namespace_labels: &Map<String, Value>,
        pod_labels: &Map<String, Value>,
    ) -> Result<(), &'static str> {
        if !self.rules.iter().any(rule_matches_pod_create) {
            return Err("its rules do not cover pod CREATE");
        }
        if !selector_matches(self.namespace_selector.as_ref(), namespace_labels) {
            return Err("its namespaceSelector does not match the namespace's labels");
        }
        if !selector_matches(self.object_selector.as_ref(), pod_labels) {
            return Err("its objectSelector does not match the pod's labels");
        }
        Ok(())
    }

    /// Whether it selects namespaces by label (so the Namespace object matters).
    pub fn selects_namespaces(&self) -> bool {
        self.namespace_selector
            .as_ref()
            .is_some_and(|s| s.as_object().is_some_and(|m| !m.is_empty()))
    }

    /// Whether it has CEL `matchConditions`, which cannot be evaluated offline.
    pub fn has_match_conditions(&self) -> bool {
        self.match_conditions
    }
}

/// The mesh's injector when no configuration in context names it: called
/// for every pod CREATE, never reinvoked (the meshes' default).
pub fn assumed_injector(name: &str) -> Webhook {
    Webhook {
        configuration: "(assumed)".to_string(),
        name: name.to_string(),
        reinvocation: Reinvocation::Never,
        namespace_selector: None,
        object_selector: None,
        rules: vec![
            serde_json::json!({"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}),
        ],
        match_conditions: false,
        behaviour: Behaviour::MeshInjector,
    }
}

/// The webhooks of `configurations` (MutatingWebhookConfiguration objects),
/// sorted by configuration name, each configuration's in order, with what
/// each does: the mesh's injector when its name is `injector` or ends in
/// `.{injector}`, else what an emulation in `emulations` declares.
pub fn webhooks(
    configurations: &[&Value],
    emulations: &[&Value],
    injector: Option<&str>,
) -> Vec<Webhook> {
    let mut sorted: Vec<&&Value> = configurations.iter().collect();
    sorted.sort_by_key(|c| super::metadata_name(c).to_string());
    let mut all = Vec::new();
    for configuration in sorted {
        let config_name = super::metadata_name(configuration).to_string();
        let items = configuration.field("webhooks").and_then(Value::as_array);
        for item in items.into_iter().flatten() {
            let name = item
                .field("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let is_injector = injector
                .is_some_and(|suffix| name == suffix || name.ends_with(&format!(".{suffix}")));
            let behaviour = if is_injector {
                Behaviour::MeshInjector
            } else {
                declared(emulations, &config_name, &name)
            };
            all.push(Webhook {
                configuration: config_name.clone(),
                reinvocation: match item.field("reinvocationPolicy").and_then(Value::as_str) {
                    Some("IfNeeded") => Reinvocation::IfNeeded,
                    _ => Reinvocation::Never,
                },
                namespace_selector: item.field("namespaceSelector").cloned(),
                object_selector: item.field("objectSelector").cloned(),
                rules: item
                    .field("rules")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default(),
                match_conditions: item
                    .field("matchConditions")
                    .and_then(Value::as_array)
                    .is_some_and(|c| !c.is_empty()),
                name,
                behaviour,
            });
        }
    }
    all
}

/// What a `WebhookEmulation` object declares for the webhook `name` of
/// configuration `configuration`:
///
/// ```yaml
/// apiVersion: mesh-inject.io/v1alpha1
/// kind: WebhookEmulation
/// metadata: {name: prestop}
/// webhook: {configuration: a-prestop, name: prestop.example.com}
/// patch: [{op: add, path: /metadata/labels/x, value: "y"}]   # or:
/// containers: {names: [linkerd-proxy], merge: {lifecycle: {preStop: {...}}}}
/// ```
fn declared(emulations: &[&Value], configuration: &str, name: &str) -> Behaviour {
    let found = emulations.iter().find(|e| {
        let webhook = e.field("webhook");
        let field = |key: &str| webhook.and_then(|w| w.get(key)).and_then(Value::as_str);
        field("name") == Some(name) && field("configuration").is_none_or(|c| c == configuration)
    });
    let Some(emulation) = found else {
        return Behaviour::NotEmulated;
    };
    if let Some(patch) = emulation.field("patch").filter(|p| p.is_array()) {
        return Behaviour::Patch(patch.clone());
    }
    let containers = emulation.field("containers");
    let names: Vec<String> = containers
        .and_then(|c| c.field("names"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    match containers
        .and_then(|c| c.field("merge"))
        .filter(|m| m.is_object())
    {
        Some(merge) if !names.is_empty() => Behaviour::MergeIntoContainers {
            names,
            merge: merge.clone(),
        },
        _ => Behaviour::NotEmulated,
    }
}

/// What is wrong with a `WebhookEmulation`, if anything: it names a webhook
/// and declares exactly one of a JSON Patch or a merge into named containers.
pub fn emulation_problem(emulation: &Value) -> Option<String> {
    let name = super::metadata_name(emulation);
    let webhook = emulation.field("webhook");
    if webhook
        .and_then(|w| w.field("name"))
        .and_then(Value::as_str)
        .is_none()
    {
        return Some(format!("WebhookEmulation {name}: webhook.name is missing"));
    }
    let problem = match (emulation.field("patch"), emulation.field("containers")) {
        (Some(patch), None) => serde_json::from_value::<json_patch::Patch>(patch.clone())
            .err()
            .map(|e| format!("patch is not an RFC 6902 JSON Patch: {e}")),
        (None, Some(containers)) => {
            let names = containers.field("names").and_then(Value::as_array);
            let names_ok = names.is_some_and(|n| !n.is_empty() && n.iter().all(Value::is_string));
            let merge_ok = containers.field("merge").is_some_and(Value::is_object);
            (!names_ok || !merge_ok).then(|| {
                "containers needs names (a list of container names) and merge (a map)".to_string()
            })
        }
        _ => Some("declare exactly one of patch or containers".to_string()),
    };
    problem.map(|p| format!("WebhookEmulation {name}: {p}"))
}

/// A rule that covers CREATE of `pods` in the core group, v1.
fn rule_matches_pod_create(rule: &Value) -> bool {
    let has = |field: &str, wanted: &[&str]| {
        rule.get(field)
            .and_then(Value::as_array)
            .is_some_and(|items| {
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .any(|i| wanted.contains(&i))
            })
    };
    // Pods are namespaced: a rule scoped to the cluster does not cover them.
    let scope = rule.field("scope").and_then(Value::as_str).unwrap_or("*");
    has("operations", &["CREATE", "*"])
        && has("apiGroups", &["", "*"])
        && has("apiVersions", &["v1", "*"])
        && has("resources", &["pods", "*", "*/*"])
        && scope != "Cluster"
}

/// A label selector (`matchLabels`, `matchExpressions`) against labels; an
/// absent or empty selector matches everything.
pub fn selector_matches(selector: Option<&Value>, labels: &Map<String, Value>) -> bool {
    let Some(selector) = selector else {
        return true;
    };
    let label = |key: &str| labels.get(key).and_then(Value::as_str);
    let match_labels = selector.field("matchLabels").and_then(Value::as_object);
    let labels_ok = match_labels
        .into_iter()
        .flatten()
        .all(|(k, v)| label(k).is_some() && label(k) == v.as_str());
    let expressions = selector.field("matchExpressions").and_then(Value::as_array);
    let expressions_ok = expressions.into_iter().flatten().all(|e| {
        let key = e.field("key").and_then(Value::as_str).unwrap_or_default();
        super::requirement_matches(e, label(key))
    });
    labels_ok && expressions_ok
}

/// Apply a declared behaviour (not the mesh's) to `pod`; returns the new pod,
/// or the error the apiserver would report for a patch that does not apply.
pub fn apply_declared(behaviour: &Behaviour, pod: &Value) -> Result<Value, String> {
    match behaviour {
        Behaviour::Patch(ops) => {
            let patch: json_patch::Patch = serde_json::from_value(ops.clone())
                .map_err(|e| format!("the declared patch is not a JSON Patch: {e}"))?;
            let mut out = pod.clone();
            json_patch::patch(&mut out, &patch).map_err(|e| e.to_string())?;
            Ok(out)
        }
        Behaviour::MergeIntoContainers { names, merge } => {
            let mut out = pod.clone();
            for list in ["initContainers", "containers"] {
                let containers = out
                    .get_mut("spec")
                    .and_then(|s| s.get_mut(list))
                    .and_then(Value::as_array_mut);
                for container in containers.into_iter().flatten() {
                    let named = container
                        .field("name")
                        .and_then(Value::as_str)
                        .is_some_and(|n| names.iter().any(|w| w == n));
                    if named {
                        json_patch::merge(container, merge);
                    }
                }
            }
            Ok(out)
        }
        Behaviour::MeshInjector | Behaviour::NotEmulated => Ok(pod.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn configuration(name: &str, webhooks: Value) -> Value {
        json!({"kind": "MutatingWebhookConfiguration", "metadata": {"name": name}, "webhooks": webhooks})
    }

    const PODS: &str = r#"[{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}]"#;

    fn rules() -> Value {
        serde_json::from_str(PODS).expect("rules")
    }

    #[test]
    fn webhooks_are_ordered_and_recognised() {
        let linkerd = configuration(
            "linkerd-proxy-injector-webhook-config",
            json!([
            {"name": "linkerd-proxy-injector.linkerd.io", "rules": rules()}]),
        );
        let prestop = configuration(
            "a-prestop",
            json!([
            {"name": "prestop.example.com", "rules": rules(), "reinvocationPolicy": "IfNeeded"},
            {"name": "other.example.com", "rules": rules()}]),
        );
        let emulation = json!({"kind": "WebhookEmulation", "webhook": {"name": "prestop.example.com"},
            "containers": {"names": ["linkerd-proxy"], "merge": {"lifecycle": {"preStop": {"sleep": {"seconds": 5}}}}}});
        let all = webhooks(
            &[&linkerd, &prestop],
            &[&emulation],
            Some("linkerd-proxy-injector.linkerd.io"),
        );
        let ids: Vec<String> = all.iter().map(Webhook::id).collect();
        assert_eq!(
            ids,
            [
                "a-prestop/prestop.example.com",
                "a-prestop/other.example.com",
                "linkerd-proxy-injector-webhook-config/linkerd-proxy-injector.linkerd.io"
            ]
        );
        assert_eq!(all[0].reinvocation, Reinvocation::IfNeeded);
        assert!(matches!(
            all[0].behaviour,
            Behaviour::MergeIntoContainers { .. }
        ));
        assert_eq!(all[1].behaviour, Behaviour::NotEmulated);
        assert_eq!(all[2].behaviour, Behaviour::MeshInjector);
        let istio = webhooks(
            &[&configuration(
                "istio-sidecar-injector",
                json!([{"name": "rev.namespace.sidecar-injector.istio.io", "rules": rules()}]),
            )],
            &[],
            Some("sidecar-injector.istio.io"),
        );
        assert_eq!(istio[0].behaviour, Behaviour::MeshInjector);
    }

    #[test]
    fn selectors_and_rules_decide_the_call() {
        let labels = |v: Value| v.as_object().cloned().unwrap_or_default();
        let selector = json!({"matchLabels": {"istio-injection": "enabled"},
            "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["system"]}]});
        assert!(selector_matches(
            Some(&selector),
            &labels(json!({"istio-injection": "enabled"}))
        ));
        assert!(!selector_matches(
            Some(&selector),
            &labels(json!({"istio-injection": "enabled", "tier": "system"}))
        ));
        assert!(!selector_matches(Some(&selector), &labels(json!({}))));
        assert!(selector_matches(None, &labels(json!({}))));
        assert!(!rule_matches_pod_create(
            &json!({"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"], "scope": "Cluster"})
        ));
        assert!(rule_matches_pod_create(
            &json!({"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]})
        ));
        assert!(!rule_matches_pod_create(
            &json!({"operations": ["UPDATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]})
        ));
    }

    #[test]
    fn emulations_are_checked() {
        let ok = json!({"metadata": {"name": "e"}, "webhook": {"name": "w"}, "patch": []});
        assert_eq!(emulation_problem(&ok), None);
        let text = json!({"metadata": {"name": "e"}, "webhook": {"name": "w"}, "patch": "add"});
        assert!(
            emulation_problem(&text)
                .is_some_and(|p| p.starts_with("WebhookEmulation e: patch is not"))
        );
        let both = json!({"metadata": {"name": "e"}, "webhook": {"name": "w"}});
        assert_eq!(
            emulation_problem(&both).as_deref(),
            Some("WebhookEmulation e: declare exactly one of patch or containers")
        );
        let empty = json!({"metadata": {"name": "e"}, "webhook": {"name": "w"}, "containers": {"names": [], "merge": {}}});
        assert!(emulation_problem(&empty).is_some());
    }

    #[test]
    fn declared_behaviours_apply() {
        let pod = json!({"metadata": {}, "spec": {"containers": [{"name": "app"}, {"name": "linkerd-proxy"}]}});
        let merge = Behaviour::MergeIntoContainers {
            names: vec!["linkerd-proxy".into()],
            merge: json!({"lifecycle": {"preStop": {"exec": {"command": ["sleep", "5"]}}}}),
        };
        let out = apply_declared(&merge, &pod).expect("applies");
        assert!(out["spec"]["containers"][0].field("lifecycle").is_none());
        assert_eq!(
            out["spec"]["containers"][1]["lifecycle"]["preStop"]["exec"]["command"][1],
            "5"
        );
        let patch = Behaviour::Patch(
            json!([{"op": "add", "path": "/metadata/labels", "value": {"a": "b"}}]),
        );
        assert_eq!(
            apply_declared(&patch, &pod).expect("applies")["metadata"]["labels"]["a"],
            "b"
        );
        let bad = Behaviour::Patch(
            json!([{"op": "add", "path": "/metadata/annotations/x", "value": "y"}]),
        );
        assert!(apply_declared(&bad, &pod).is_err());
    }
}

//! The admission chain for one pod CREATE, replayed as the apiserver runs it
//! (`staging/src/k8s.io/apiserver/pkg/admission/{chain.go,reinvocation.go}`,
//! `pkg/kubeapiserver/options/plugins.go` for the order): API defaulting, the mutating phase (the
//! in-tree plugins, then the webhooks, with at most one reinvocation pass),
//! the dropping of fields behind disabled gates and validation, then the
//! validating plugins. Every step is recorded for `--trace`.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::webhook::{Behaviour, Reinvocation, Webhook, apply_declared};
use super::{Verdict, api, forbidden, limit_ranger, pod_security, psp, quota};
use crate::cluster::{ClusterContext, KubeVersion};
use crate::json::Field;

/// One step of the chain, as `--trace` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// 0 before the mutating phase (API defaulting), 1 or 2 for its passes,
    /// 3 for what follows it (dropped fields, validation, validating plugins).
    pub pass: u8,
    /// `LimitRanger`, `webhook a-prestop/prestop.example.com`, …
    pub plugin: String,
    pub mutated: bool,
    /// The RFC 6902 patch of the step (empty when nothing changed).
    pub patch: Value,
    /// What else to know: why a webhook was not called, a verdict.
    pub note: Option<String>,
}

/// What happened to the pod.
#[derive(Debug, Clone)]
pub struct Admission {
    /// The pod as it would be stored (or as far as it got).
    pub pod: Value,
    pub verdicts: Vec<Verdict>,
    pub trace: Vec<Step>,
}

/// What the mesh's injector did with a pod.
pub enum Injected {
    /// The injected pod and the JSON Patch the webhook returns.
    Patched(Value, Value),
    /// Left alone, and why.
    Left(String),
    /// Denied: the webhook answers that the pod is not allowed, and why.
    Denied(String),
}

/// The mesh's injector as its webhook runs it; an error is a failed call.
pub type Injector<'a> = dyn Fn(&Value) -> Result<Injected, String> + 'a;

/// What a step did besides changing the pod.
#[derive(Default)]
struct Outcome {
    note: Option<String>,
    /// The patch as the plugin returned it (a webhook's); else the
    /// difference of the pod before and after is recorded.
    patch: Option<Value>,
    /// Whether it counts as a mutation, when the step decides (a webhook's
    /// patch is judged before the defaulting that follows it).
    mutated: Option<bool>,
}

impl Outcome {
    fn note(text: impl Into<String>) -> Self {
        Outcome {
            note: Some(text.into()),
            ..Outcome::default()
        }
    }
}

/// What the chain knows of the cluster.
pub struct Chain<'a> {
    pub version: KubeVersion,
    pub cluster: &'a ClusterContext,
    /// The mutating webhooks, in the apiserver's order.
    pub webhooks: &'a [Webhook],
    pub injector: &'a Injector<'a>,
    /// The pod comes from a workload whose template the apiserver already
    /// checked: its warnings are not reported again.
    pub template_checked: bool,
    /// Validation refused the workload's template already (the apiserver
    /// creates no pod from it): the pod's validation is not said again, and
    /// the validating plugins still give their verdicts, so that one run
    /// shows everything to fix.
    pub template_refused: bool,
    /// The errors of the Pod's own metadata (its name), reported with those
    /// of its spec when the Pod is validated.
    pub object_errors: Vec<super::field::FieldError>,
    /// Record every step (`--trace`, `--report json`); off for the checks
    /// of an injection, where only the verdicts count.
    pub trace: bool,
}

/// Which webhooks the reinvocation bookkeeping has marked.
#[derive(Default)]
struct Reinvocations {
    /// IfNeeded webhooks called since the object last changed.
    since_last_change: BTreeSet<usize>,
    /// Webhooks to call again in pass 2.
    again: BTreeSet<usize>,
    /// Some webhook changed the object: run the chain a second time.
    second_pass: bool,
}

impl Chain<'_> {
    /// CREATE `pod` (a Pod object) named `name` in `namespace`.
    pub fn admit(&self, pod: Value, namespace: &str, name: &str) -> Admission {
        let mut run = Run {
            chain: self,
            pod,
            trace: Vec::new(),
            verdicts: Vec::new(),
            namespace: namespace.to_string(),
            name: name.to_string(),
        };
        // Only requests from limits matter to the checks; a shown pod, and
        // webhooks' patches, see every default.
        let full = self.trace || !self.webhooks.is_empty();
        let _ = run.step(0, "API defaulting", |pod| {
            if let Some(spec) = pod.get_mut("spec") {
                if full {
                    api::default_pod(spec);
                } else {
                    api::default_for_checks(spec);
                }
            }
            Ok(Outcome::default())
        });
        if run.mutating_phase() {
            run.validation();
        }
        Admission {
            pod: run.pod,
            verdicts: run.verdicts,
            trace: run.trace,
        }
    }
}

/// One CREATE in progress.
struct Run<'c, 'a> {
    chain: &'c Chain<'a>,
    pod: Value,
    trace: Vec<Step>,
    verdicts: Vec<Verdict>,
    namespace: String,
    name: String,
}

impl Run<'_, '_> {
    /// Run `change` on the pod and record it. Returns whether the pod changed.
    fn step(
        &mut self,
        pass: u8,
        plugin: &str,
        change: impl FnOnce(&mut Value) -> Result<Outcome, String>,
    ) -> Result<bool, String> {
        // Without a trace to keep and webhooks to track, the change is all.
        if !self.chain.trace && self.chain.webhooks.is_empty() {
            change(&mut self.pod)?;
            return Ok(false);
        }
        let before = self.pod.clone();
        let Outcome {
            note,
            patch,
            mutated,
        } = change(&mut self.pod)?;
        let mutated = mutated.unwrap_or(self.pod != before);
        let patch = match patch {
            Some(patch) => patch,
            _ if self.pod != before => {
                serde_json::to_value(json_patch::diff(&before, &self.pod)).unwrap_or(Value::Null)
            }
            _ => json!([]),
        };
        self.trace.push(Step {
            pass,
            plugin: plugin.to_string(),
            mutated,
            patch,
            note,
        });
        Ok(mutated)
    }

    fn reject(&mut self, pass: u8, plugin: &'static str, message: String) {
        self.trace.push(Step {
            pass,
            plugin: plugin.to_string(),
            mutated: false,
            patch: json!([]),
            note: Some(format!("rejected: {message}")),
        });
        self.verdicts.push(Verdict::rejection(plugin, message));
    }

    /// Both passes of the mutating phase; false when a plugin rejected the pod.
    fn mutating_phase(&mut self) -> bool {
        let mut marks = Reinvocations::default();
        let mut after_webhooks = Value::Null;
        for pass in 1..=2u8 {
            if pass == 2 && !marks.second_pass {
                break;
            }
            if !self.in_tree_mutations(pass) {
                return false;
            }
            if pass == 2 && self.pod != after_webhooks {
                // The in-tree plugins changed the object since the webhooks saw
                // it: every IfNeeded webhook called in pass 1 is called again.
                marks.again.extend(marks.since_last_change.iter().copied());
            }
            if !self.webhooks(pass, &mut marks) {
                return false;
            }
            if !self.chain.webhooks.is_empty() {
                after_webhooks = self.pod.clone();
            }
            // Reinvocation arrived in 1.15.
            if !self.chain.version.reinvokes_webhooks() {
                break;
            }
        }
        true
    }

    /// LimitRanger, ServiceAccount and (up to 1.24) PodSecurityPolicy, in
    /// the apiserver's order; false on a rejection.
    fn in_tree_mutations(&mut self, pass: u8) -> bool {
        let cluster = self.chain.cluster;
        let limit_ranges = cluster.objects("LimitRange", &self.namespace);
        let _ = self.step(pass, "LimitRanger", |pod| {
            limit_ranger::admit(pod, &limit_ranges);
            Ok(Outcome::default())
        });
        let version = self.chain.version;
        let psps = cluster.objects("PodSecurityPolicy", "");
        let with_psp = version.has_pod_security_policy() && !psps.is_empty();
        // The token volume matters to a check only through a policy's volume
        // types; a trace shows it always, as the stored pod has it.
        if self.chain.trace || with_psp {
            let _ = self.step(pass, "ServiceAccount", |pod| {
                mount_service_account_token(pod, version);
                Ok(Outcome::default())
            });
        }
        if with_psp {
            let admitted = self.step(pass, "PodSecurityPolicy", |pod| {
                let admitted = psp::admit(pod, &psps)?;
                *pod = admitted.pod;
                Ok(Outcome::note(format!("policy {}", admitted.policy)))
            });
            if let Err(message) = admitted {
                let message = forbidden(&self.name, &psp::worded_for(&message, version));
                self.reject(pass, "PodSecurityPolicy", message);
                return false;
            }
        }
        // Never decides a verdict: shown in a trace, and seen by webhooks.
        if self.chain.trace || !self.chain.webhooks.is_empty() {
            let _ = self.step(pass, "DefaultTolerationSeconds", |pod| {
                add_default_tolerations(pod);
                Ok(Outcome::default())
            });
        }
        true
    }

    /// The mutating webhooks of one pass; false on a rejection.
    fn webhooks(&mut self, pass: u8, marks: &mut Reinvocations) -> bool {
        let namespace_labels = self.namespace_labels();
        let namespace_known = self
            .chain
            .cluster
            .namespace_labels(&self.namespace)
            .is_some()
            || self.chain.cluster.has_namespace(&self.namespace);
        let reinvocation = self.chain.version.reinvokes_webhooks();
        for (index, webhook) in self.chain.webhooks.iter().enumerate() {
            if pass == 2 && !marks.again.contains(&index) {
                continue;
            }
            // No reinvocationPolicy field before 1.15.
            let plugin = match (reinvocation, webhook.reinvocation) {
                (false, _) => format!("webhook {}", webhook.id()),
                (true, Reinvocation::Never) => format!("webhook {} (Never)", webhook.id()),
                (true, Reinvocation::IfNeeded) => format!("webhook {} (IfNeeded)", webhook.id()),
            };
            let pod_labels = self
                .pod
                .field("metadata")
                .and_then(|m| m.field("labels"))
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            if let Err(why) = webhook.matches(&namespace_labels, &pod_labels) {
                let mut note = format!("not called: {why}");
                if webhook.selects_namespaces() && !namespace_known {
                    note.push_str(&format!(
                        " (namespace {} is not in the context: its labels are unknown)",
                        self.namespace
                    ));
                    if pass == 1 {
                        self.verdicts.push(Verdict::warning(
                            "MutatingAdmissionWebhook",
                            format!(
                                "webhook {} selects namespaces by label, and namespace {} is not in the context: taken as having no labels",
                                webhook.id(),
                                self.namespace
                            ),
                        ));
                    }
                }
                self.trace.push(Step {
                    pass,
                    plugin,
                    mutated: false,
                    patch: json!([]),
                    note: Some(note),
                });
                continue;
            }
            if webhook.has_match_conditions() && pass == 1 {
                self.verdicts.push(Verdict::warning(
                    "MutatingAdmissionWebhook",
                    format!(
                        "webhook {}: its matchConditions (CEL) are not evaluated offline; taken as matching",
                        webhook.id()
                    ),
                ));
            }
            if webhook.behaviour == Behaviour::NotEmulated && pass == 1 {
                self.verdicts.push(Verdict::warning(
                    "MutatingAdmissionWebhook",
                    format!("webhook {}: {NOT_EMULATED}", webhook.id()),
                ));
            }
            let injector = self.chain.injector;
            let mut failure = None;
            let called = self.step(pass, &plugin, |pod| {
                call_webhook(webhook, injector, pod, &mut failure)
            });
            let changed = match called {
                Ok(changed) => changed,
                Err(error) => {
                    let message = format!(
                        "Internal error occurred: failed calling webhook \"{}\": {error}",
                        webhook.name
                    );
                    self.reject(pass, "MutatingAdmissionWebhook", message);
                    return false;
                }
            };
            if let Some(message) = failure {
                self.reject(pass, "MutatingAdmissionWebhook", message);
                return false;
            }
            if changed && reinvocation {
                // Every IfNeeded webhook called since the last change sees
                // this one's change in pass 2; this one never by its own.
                marks.again.append(&mut marks.since_last_change);
                marks.second_pass = true;
            }
            if webhook.reinvocation == Reinvocation::IfNeeded {
                marks.since_last_change.insert(index);
            }
        }
        true
    }

    /// The namespace's labels, with the name label the apiserver sets on
    /// every namespace from 1.21.
    fn namespace_labels(&self) -> Map<String, Value> {
        let mut labels = self
            .chain
            .cluster
            .namespace_labels(&self.namespace)
            .cloned()
            .unwrap_or_default();
        if self.chain.version.labels_namespaces_by_name() {
            labels
                .entry("kubernetes.io/metadata.name")
                .or_insert_with(|| Value::String(self.namespace.clone()));
        }
        labels
    }

    /// After the mutating phase: fields of disabled features dropped, object
    /// validation, then the validating plugins.
    fn validation(&mut self) {
        let version = self.chain.version;
        // What the webhooks added is new to the apiserver even when the
        // template was checked; the template's own warnings are not repeated.
        let mut warnings = Vec::new();
        let _ = self.step(3, "dropping disabled fields", |pod| {
            if let Some(spec) = pod.get_mut("spec") {
                warnings = api::drop_disabled_fields(spec, "spec", version);
            }
            Ok(Outcome::default())
        });
        let spec = self.pod.field("spec").cloned().unwrap_or(Value::Null);
        let (spec_errors, more) = api::validate(&spec, "spec", version);
        let mut errors = self.chain.object_errors.clone();
        errors.extend(spec_errors);
        // Warnings of a valid object only (`BeforeCreate`).
        if !self.chain.template_checked && errors.is_empty() {
            warnings.extend(more);
        }
        self.verdicts.extend(
            warnings
                .into_iter()
                .map(|w| Verdict::warning("apiserver", w)),
        );
        if !errors.is_empty() && !self.chain.template_refused {
            let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
            let message = format!(
                "Pod {} is invalid: {}",
                super::field::go_quote(&self.name),
                super::aggregate(&errors)
            );
            // The apiserver stops here; the validating plugins' verdicts
            // are listed too, so that one run shows everything to fix.
            self.reject(3, "validation", message);
        }
        let cluster = self.chain.cluster;
        let limit_ranges = cluster.objects("LimitRange", &self.namespace);
        if let Some(message) = limit_ranger::validate(&self.pod, &limit_ranges, version) {
            self.reject(3, "LimitRanger", forbidden(&self.name, &message));
        }
        // PodSecurity runs before PodSecurityPolicy (1.22 to 1.24), "so
        // audit/warn get exercised even if PodSecurityPolicy denies".
        let labels = cluster.namespace_labels(&self.namespace);
        for verdict in pod_security::review(labels, version, &self.pod, &self.name) {
            if verdict.severity == super::Severity::Rejection {
                self.reject(3, "PodSecurity", verdict.message);
            } else {
                self.verdicts.push(verdict);
            }
        }
        let psps = cluster.objects("PodSecurityPolicy", "");
        if version.has_pod_security_policy() && !psps.is_empty() {
            if let Err(message) = psp::validate(&self.pod, &psps) {
                let message = psp::worded_for(&message, version);
                self.reject(3, "PodSecurityPolicy", forbidden(&self.name, &message));
            }
        }
        let quotas = cluster.objects("ResourceQuota", &self.namespace);
        if let Some(message) = quota::check(&self.pod, &quotas) {
            self.reject(3, "ResourceQuota", forbidden(&self.name, &message));
        }
    }
}

/// Equal as the apiserver's semantic comparison sees it, near enough for
/// JSON: an empty list or map is the same as none.
fn semantically_equal(a: &Value, b: &Value) -> bool {
    fn normal(value: &Value) -> Option<Value> {
        match value {
            Value::Null => None,
            Value::Array(items) if items.is_empty() => None,
            Value::Array(items) => Some(Value::Array(
                items
                    .iter()
                    .map(|i| normal(i).unwrap_or(Value::Null))
                    .collect(),
            )),
            Value::Object(map) => {
                let kept: Map<String, Value> = map
                    .iter()
                    .filter_map(|(k, v)| normal(v).map(|v| (k.clone(), v)))
                    .collect();
                (!kept.is_empty()).then_some(Value::Object(kept))
            }
            other => Some(other.clone()),
        }
    }
    normal(a) == normal(b)
}

/// The DefaultTolerationSeconds plugin: tolerate a not-ready or unreachable
/// node for 300 s, unless the pod already says how long.
fn add_default_tolerations(pod: &mut Value) {
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let tolerations = spec.entry("tolerations").or_insert_with(|| json!([]));
    let Value::Array(tolerations) = tolerations else {
        return;
    };
    for key in [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ] {
        let covered = tolerations.iter().any(|t| {
            let effect = t
                .field("effect")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let applies = effect.is_empty() || effect == "NoExecute";
            let named = t.field("key").and_then(Value::as_str) == Some(key);
            let everything = t.field("key").is_none()
                && t.field("operator").and_then(Value::as_str) == Some("Exists");
            applies && (named || everything)
        });
        if !covered {
            tolerations.push(json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}));
        }
    }
}

const NOT_EMULATED: &str = "not emulated (no WebhookEmulation declares what it does), so skipped";

/// Where the ServiceAccount plugin mounts the API token.
const TOKEN_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// The ServiceAccount plugin: the `default` account when none is named, and
/// (unless `automountServiceAccountToken: false`) a token volume mounted
/// into every container that has nothing mounted at the token path. The
/// apiserver ends the volume's name with five random characters; here they
/// are `xxxxx`. From 1.21 it is a projected volume (`kube-api-access-…`),
/// before, the account's token Secret (`default-token-…`).
fn mount_service_account_token(pod: &mut Value, version: KubeVersion) {
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let account = spec
        .field("serviceAccountName")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .unwrap_or("default")
        .to_string();
    spec.entry("serviceAccountName")
        .or_insert_with(|| Value::String(account.clone()));
    if spec.field("automountServiceAccountToken") == Some(&Value::Bool(false)) {
        return;
    }
    let prefix = if version.projects_service_account_tokens() {
        "kube-api-access-".to_string()
    } else {
        format!("{account}-token-")
    };
    let existing = spec
        .field("volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.field("name").and_then(Value::as_str))
        .find(|n| n.starts_with(&prefix))
        .map(str::to_string);
    let volume_name = existing.clone().unwrap_or_else(|| format!("{prefix}xxxxx"));
    let mut mounted = false;
    for list in ["initContainers", "containers"] {
        let containers = spec.get_mut(list).and_then(Value::as_array_mut);
        for container in containers.into_iter().flatten() {
            let Some(container) = container.as_object_mut() else {
                continue;
            };
            let has_mount = container
                .field("volumeMounts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .any(|m| m.field("mountPath").and_then(Value::as_str) == Some(TOKEN_MOUNT_PATH));
            if has_mount {
                continue;
            }
            let mounts = container.entry("volumeMounts").or_insert_with(|| json!([]));
            if let Value::Array(mounts) = mounts {
                mounts.push(
                    json!({"name": volume_name, "readOnly": true, "mountPath": TOKEN_MOUNT_PATH}),
                );
                mounted = true;
            }
        }
    }
    if mounted && existing.is_none() {
        let volume = if version.projects_service_account_tokens() {
            json!({"name": volume_name, "projected": {"sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
            ]}})
        } else {
            json!({"name": volume_name, "secret": {"secretName": volume_name}})
        };
        let volumes = spec.entry("volumes").or_insert_with(|| json!([]));
        if let Value::Array(volumes) = volumes {
            volumes.push(volume);
        }
    }
}

/// What calling `webhook` does to `pod` (the pod's mutation, then the
/// apiserver's defaulting of the patched pod), with in `failure` the
/// apiserver's message when the webhook denies the pod or its patch does
/// not apply.
fn call_webhook(
    webhook: &Webhook,
    injector: &Injector<'_>,
    pod: &mut Value,
    failure: &mut Option<String>,
) -> Result<Outcome, String> {
    let before = pod.clone();
    let mut outcome = match &webhook.behaviour {
        Behaviour::MeshInjector => match injector(pod)? {
            Injected::Patched(injected, patch) => {
                *pod = injected;
                Outcome {
                    patch: Some(patch),
                    ..Outcome::default()
                }
            }
            Injected::Left(why) => Outcome::note(format!("the injector left the pod alone: {why}")),
            Injected::Denied(why) => {
                *failure = Some(format!(
                    "admission webhook \"{}\" denied the request: {why}",
                    webhook.name
                ));
                Outcome::note("the injector denied the pod".to_string())
            }
        },
        Behaviour::NotEmulated => Outcome::note(NOT_EMULATED),
        declared => match apply_declared(declared, pod) {
            Ok(patched) => {
                *pod = patched;
                let patch = match declared {
                    Behaviour::Patch(patch) => patch.clone(),
                    _ => {
                        serde_json::to_value(json_patch::diff(&before, pod)).unwrap_or(Value::Null)
                    }
                };
                Outcome {
                    patch: Some(patch),
                    ..Outcome::default()
                }
            }
            Err(error) => {
                // The apiserver cannot apply the patch: an internal error.
                *failure = Some(format!("Internal error occurred: {error}"));
                Outcome::note(format!("its patch does not apply: {error}"))
            }
        },
    };
    // A mutation is judged before the apiserver defaults the
    // patched object again, and an empty list is no list.
    let mutated = !semantically_equal(&before, pod);
    outcome.mutated = Some(mutated);
    let patched = pod.clone();
    if let Some(spec) = pod.get_mut("spec") {
        api::default_pod(spec);
    }
    if *pod != patched {
        let defaulted =
            serde_json::to_value(json_patch::diff(&patched, pod)).unwrap_or(Value::Null);
        outcome.note = Some(match outcome.note.take() {
            Some(note) => format!("{note}; then API defaulting: {defaulted}"),
            None => format!("then API defaulting: {defaulted}"),
        });
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::webhook;

    const PODS: &str = r#"[{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}]"#;

    /// A configuration `name` with one webhook `name.example.com`.
    fn configuration(name: &str, policy: &str, extra: Value) -> Value {
        let mut hook = json!({"name": format!("{name}.example.com"), "reinvocationPolicy": policy,
            "rules": serde_json::from_str::<Value>(PODS).expect("rules")});
        if let (Some(hook), Some(extra)) = (hook.as_object_mut(), extra.as_object()) {
            hook.extend(extra.clone());
        }
        json!({"kind": "MutatingWebhookConfiguration", "metadata": {"name": name}, "webhooks": [hook]})
    }

    fn patching(name: &str, patch: Value) -> Value {
        json!({"kind": "WebhookEmulation", "metadata": {"name": name},
            "webhook": {"name": format!("{name}.example.com")}, "patch": patch})
    }

    fn leave_alone(_: &Value) -> Result<Injected, String> {
        Ok(Injected::Left("test".into()))
    }

    /// The webhook steps of a CREATE, as `pass name mutated`, and the verdicts.
    fn run(
        configurations: &[Value],
        emulations: &[Value],
        cluster: &ClusterContext,
        version: (u32, u32),
    ) -> (Vec<String>, Vec<String>) {
        let configurations: Vec<&Value> = configurations.iter().collect();
        let emulations: Vec<&Value> = emulations.iter().collect();
        let webhooks = webhook::webhooks(&configurations, &emulations, None);
        let chain = Chain {
            version: KubeVersion::new(version.0, version.1),
            cluster,
            webhooks: &webhooks,
            injector: &leave_alone,
            template_checked: false,
            template_refused: false,
            object_errors: Vec::new(),
            trace: true,
        };
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
            "spec": {"containers": [{"name": "app", "image": "app:1"}]}});
        let admission = chain.admit(pod, "ns", "p");
        let steps = admission
            .trace
            .iter()
            .filter(|s| {
                s.plugin.starts_with("webhook")
                    && !s
                        .note
                        .as_deref()
                        .is_some_and(|n| n.starts_with("not called"))
            })
            .map(|s| {
                format!(
                    "{} {} {}",
                    s.pass,
                    s.plugin.split('/').next_back().unwrap_or_default(),
                    s.mutated
                )
            })
            .collect();
        let verdicts = admission
            .verdicts
            .iter()
            .map(|v| v.message.clone())
            .collect();
        (steps, verdicts)
    }

    fn label_patch(key: &str) -> Value {
        json!([{"op": "add", "path": format!("/metadata/labels"), "value": {key: "yes"}}])
    }

    #[test]
    fn if_needed_webhooks_see_later_changes_in_pass_two() {
        let empty = ClusterContext::default();
        let configs = [
            configuration("a", "IfNeeded", json!({})),
            configuration("b", "Never", json!({})),
        ];
        let emulations = [patching("a", json!([])), patching("b", label_patch("b"))];
        let (steps, _) = run(&configs, &emulations, &empty, (1, 15));
        assert_eq!(
            steps,
            [
                "1 a.example.com (IfNeeded) false",
                "1 b.example.com (Never) true",
                "2 a.example.com (IfNeeded) false"
            ]
        );
        // Never: called once. Before 1.15: no second pass at all.
        let never = [
            configuration("a", "Never", json!({})),
            configuration("b", "Never", json!({})),
        ];
        assert_eq!(run(&never, &emulations, &empty, (1, 15)).0.len(), 2);
        assert_eq!(
            run(&configs, &emulations, &empty, (1, 14)).0,
            ["1 a.example.com false", "1 b.example.com true"]
        );
    }

    #[test]
    fn a_webhook_is_never_called_for_the_first_time_in_pass_two() {
        let empty = ClusterContext::default();
        // `a` only matches pods labelled `b`, which `b` adds after it.
        let selector = json!({"objectSelector": {"matchLabels": {"b": "yes"}}});
        let configs = [
            configuration("a", "IfNeeded", selector),
            configuration("b", "Never", json!({})),
            configuration("c", "IfNeeded", json!({})),
        ];
        let emulations = [
            patching("a", label_patch("a")),
            patching("b", label_patch("b")),
            patching("c", json!([])),
        ];
        let (steps, _) = run(&configs, &emulations, &empty, (1, 16));
        assert_eq!(
            steps,
            [
                "1 b.example.com (Never) true",
                "1 c.example.com (IfNeeded) false"
            ]
        );
    }

    #[test]
    fn in_tree_changes_in_pass_two_reach_the_if_needed_webhooks() {
        let mut cluster = ClusterContext::default();
        cluster.add(
            &json!({"kind": "LimitRange", "metadata": {"name": "l", "namespace": "ns"},
                "spec": {"limits": [{"type": "Container", "default": {"memory": "64Mi"}}]}}),
            "ns",
        );
        // `b` adds a container; LimitRanger gives it a default in pass 2; `c`,
        // called after `b`'s change, is called again for that.
        let configs = [
            configuration("b", "Never", json!({})),
            configuration("c", "IfNeeded", json!({})),
        ];
        let sidecar = json!([{"op": "add", "path": "/spec/containers/-", "value": {"name": "side", "image": "side:1"}}]);
        let emulations = [patching("b", sidecar), patching("c", json!([]))];
        let (steps, _) = run(&configs, &emulations, &cluster, (1, 20));
        assert_eq!(
            steps,
            [
                "1 b.example.com (Never) true",
                "1 c.example.com (IfNeeded) false",
                "2 c.example.com (IfNeeded) false"
            ]
        );
    }

    #[test]
    fn mutations_are_judged_as_the_apiserver_judges_them() {
        let empty = ClusterContext::default();
        // An empty list where there was none is no change: no second pass.
        let configs = [
            configuration("a", "IfNeeded", json!({})),
            configuration("b", "Never", json!({})),
        ];
        let emulations = [
            patching("a", json!([])),
            patching(
                "b",
                json!([{"op": "add", "path": "/spec/tolerations/-", "value": {"key": "x", "operator": "Exists"}}]),
            ),
        ];
        let (steps, _) = run(&configs, &emulations, &empty, (1, 20));
        assert_eq!(
            steps.last().map(String::as_str),
            Some("2 a.example.com (IfNeeded) false")
        );
        let nothing = [
            patching("a", json!([])),
            patching(
                "b",
                json!([{"op": "add", "path": "/spec/hostAliases", "value": []}]),
            ),
        ];
        let (steps, _) = run(&configs, &nothing, &empty, (1, 20));
        assert_eq!(
            steps,
            [
                "1 a.example.com (IfNeeded) false",
                "1 b.example.com (Never) false"
            ]
        );
        // A patch that does not apply: an internal error, and the step is in the trace.
        let broken = [
            patching("a", json!([])),
            patching(
                "b",
                json!([{"op": "replace", "path": "/spec/nothing/here", "value": 1}]),
            ),
        ];
        let (steps, verdicts) = run(&configs, &broken, &empty, (1, 20));
        assert_eq!(
            steps.last().map(String::as_str),
            Some("1 b.example.com (Never) false")
        );
        assert!(
            verdicts
                .iter()
                .any(|v| v.starts_with("Internal error occurred: ")),
            "{verdicts:?}"
        );
    }
}

//! `kubectl mesh-inject admit`: every pod and pod template of the input
//! through the apiserver's admission chain, offline, with the mutating
//! webhooks in context, the mesh's injector among them (see
//! [`crate::admission::chain`]).
//!
//! On a manifest that is not injected this shows the webhook path: the
//! injector runs inside the chain, seeing only the pod. On the output of
//! `kubectl mesh-inject` it shows the static path: the pod arrives with its
//! proxy and the injector leaves it alone. `--compare` runs both.

use serde_json::{Map, Value};

use crate::admission::chain::{Injected, Injector};
use crate::admission::review::{self, Review, Target};
use crate::admission::webhook::{self, Behaviour, Webhook};
use crate::cluster::ClusterContext;
use crate::error::{ConfigError, Error, Located};
use crate::json::Field;
use crate::pipeline;
use crate::profile::{Prepared, Profile};
use crate::rules::record::RECORD_ANNOTATION;
use crate::rules::{self, Env, Outcome, SecurityMode};
use crate::source::Source;
use crate::workload::{ObjectRef, WorkloadType, WorkloadTypes};

/// Everything `admit` needs besides the input.
#[derive(Debug, Clone)]
pub struct Settings {
    /// What inject would take from the same flags (the profile, `--set`,
    /// `--native-sidecar`, `--kube-version`, `-n`): the mesh's injector runs
    /// with them, and `--compare`'s static path is inject's own run.
    pub run: crate::pipeline::Settings,
    /// Also run the static path (inject with this tool first) for comparison.
    pub compare: bool,
}

/// One pod or workload of the input, through the chain.
#[derive(Debug, Clone)]
pub struct Admitted {
    pub source: String,
    /// 1-based document index.
    pub document: usize,
    pub reference: ObjectRef,
    /// The path the input takes: the webhook path unless it was injected already.
    pub review: Review,
    /// With `--compare`: the input injected by this tool first, then admitted.
    pub static_path: Option<Review>,
}

impl Admitted {
    pub fn rejected(&self) -> bool {
        let rejected = |r: &Review| crate::admission::rejected(&r.verdicts);
        rejected(&self.review) || self.static_path.as_ref().is_some_and(rejected)
    }
}

/// Admit every workload of `sources`, with the objects of `context` (and of
/// the sources) as the cluster.
pub fn admit_all(
    sources: &[Source],
    context: &[Source],
    settings: &Settings,
) -> Result<Vec<Admitted>, Error> {
    let parsed: Vec<_> = sources
        .iter()
        .map(pipeline::parse)
        .collect::<Result<_, _>>()?;
    let cluster = pipeline::cluster_context(
        sources,
        &parsed,
        context,
        &settings.run.profile,
        settings.run.namespace(),
    )?;
    // The webhook sees its own configuration (its ConfigMaps), not the namespace's policies.
    let mut webhook_view = ClusterContext::new(settings.run.profile.config_map_names());
    for object in cluster.all_of_kind("ConfigMap") {
        webhook_view.add(object, settings.run.namespace());
    }
    // A declaration that cannot be right is the user's to fix, not a verdict.
    for emulation in cluster.objects(webhook::EMULATION_KIND, "") {
        if let Some(problem) = webhook::emulation_problem(emulation) {
            return Err(ConfigError::WebhookEmulation(problem).into());
        }
    }
    let webhooks = chain_webhooks(&cluster, &settings.run.profile);
    let prepared = Prepared::new(settings.run.reuse);
    // The cluster's own injector configuration, when it holds one.
    let configured = settings
        .run
        .profile
        .configured_by(&cluster, &settings.run.flags)?;
    let profile = configured.as_ref().unwrap_or(&settings.run.profile);
    // An Istio revision tag asked for is the revision it points at.
    let flags = crate::mesh::istio::revision::resolve_flags(&settings.run.flags, &cluster);
    let run_notes = profile.check_objects(&cluster, &settings.run.flags)?;
    let env = |cluster, security| Env {
        run_notes: &run_notes,
        profile,
        flags: &flags,
        native: settings.run.native,
        version: settings.run.version,
        security,
        namespace: settings.run.namespace(),
        namespace_assumed: settings.run.namespace.is_none(),
        namespace_from: settings.run.namespace_from.as_deref(),
        cluster,
        prepared: &prepared,
        // The webhook returns its patch; the trace shows it.
        keep_patches: true,
    };
    let webhook_env = env(&webhook_view, SecurityMode::Off);
    let static_env = env(&cluster, SecurityMode::Auto);
    // A pod the injector would give a proxy that cannot start (a required
    // value missing) is not a verdict of the cluster's, whose injector has
    // its configuration: the run stops with the refusal, as inject does.
    let refused = std::cell::RefCell::new(None);
    // What the rules keep from pod to pod (the webhook is called from deep
    // in the admission chain, through `Fn`: borrowed for each call).
    let caches = std::cell::RefCell::new(rules::Caches::new(settings.run.reuse));
    let injector = |pod: &Value| {
        let caches = &mut caches.borrow_mut();
        mesh_injector(pod, &webhook_env, &cluster, caches).map_err(|error| {
            let message = error.to_string();
            if error.is_refusal() {
                refused.replace(Some(error));
            }
            message
        })
    };
    let target = Target {
        default_namespace: settings.run.namespace(),
        cluster: &cluster,
        version: settings.run.version,
        webhooks: &webhooks,
        injector: &injector as &Injector<'_>,
        trace: true,
    };
    let types = WorkloadTypes::with(&settings.run.profile.workloads);

    let mut admitted = Vec::new();
    for (source, docs) in sources.iter().zip(&parsed) {
        for document in docs {
            let Some(root) = &document.root else { continue };
            let value = crate::yaml::value::to_value(root).map_err(|e| {
                Error::Document(Located::at(
                    &source.name(),
                    &source.text,
                    document.index,
                    e.offset,
                    e.message,
                ))
            })?;
            let stopped = |reference: &ObjectRef, error: rules::PlanError| {
                let message = match error {
                    internal @ rules::PlanError::Internal(_) => internal.to_string(),
                    refused => format!("{reference} cannot be injected: {refused}"),
                };
                Error::Document(Located::at(
                    &source.name(),
                    &source.text,
                    document.index,
                    root.start,
                    message,
                ))
            };
            for object in crate::workload::objects_of(&value) {
                let Some(reference) = ObjectRef::of(object) else {
                    continue;
                };
                let Some(kind) = types.find(&reference.api_version, &reference.kind) else {
                    continue;
                };
                let static_path = settings
                    .compare
                    .then(|| static_review(object, kind, &static_env, &target, &caches))
                    .transpose()
                    .map_err(|error| stopped(&reference, error))?;
                let review = review::review(object, kind, &target);
                if let Some(error) = refused.take() {
                    return Err(stopped(&reference, error));
                }
                admitted.push(Admitted {
                    source: source.name(),
                    document: document.index,
                    reference,
                    review,
                    static_path,
                });
            }
        }
    }
    Ok(admitted)
}

/// The webhooks in context, in the apiserver's order; the mesh's injector is
/// assumed (called for every pod, never reinvoked) when no configuration names it.
fn chain_webhooks(cluster: &ClusterContext, profile: &Profile) -> Vec<Webhook> {
    let injector = profile.injector_webhook.as_ref().map(|w| w.name.as_str());
    let mut all = webhook::webhooks(
        &cluster.objects("MutatingWebhookConfiguration", ""),
        &cluster.objects(webhook::EMULATION_KIND, ""),
        injector,
    );
    if let Some(name) = injector {
        if !all.iter().any(|w| w.behaviour == Behaviour::MeshInjector) {
            all.push(webhook::assumed_injector(name));
        }
    }
    all
}

/// The mesh's injector as its webhook runs it: only pods that opted in (on
/// the pod or its namespace) and have no proxy yet; nothing but the pod and
/// the mesh's own configuration is known to it.
fn mesh_injector(
    pod: &Value,
    env: &Env<'_>,
    cluster: &ClusterContext,
    caches: &mut rules::Caches,
) -> Result<Injected, rules::PlanError> {
    let profile = env.profile;
    let annotation = |annotations: Option<&Map<String, Value>>, key: &str| {
        annotations
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let metadata = pod.field("metadata");
    let pod_annotations = metadata
        .and_then(|m| m.field("annotations"))
        .and_then(Value::as_object);
    if let Some(opt_in) = profile
        .injector_webhook
        .as_ref()
        .and_then(|w| w.opt_in.as_ref())
    {
        let namespace = metadata
            .and_then(|m| m.field("namespace"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let chosen = annotation(pod_annotations, &opt_in.key)
            .or_else(|| annotation(cluster.namespace_annotations(namespace), &opt_in.key));
        if chosen.as_deref() != Some(opt_in.value.as_str()) {
            let unknown = if cluster.has_namespace(namespace) {
                String::new()
            } else {
                format!(
                    " (namespace {namespace} is not in the context: its annotations are unknown)"
                )
            };
            return Ok(Injected::Left(format!(
                "not opted in with {}: {} on the pod or its namespace{unknown}",
                opt_in.key, opt_in.value
            )));
        }
    }
    let proxy = profile
        .proxy
        .field("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let has_proxy = ["containers", "initContainers"].iter().any(|list| {
        pod.field("spec")
            .and_then(|s| s.get(*list))
            .and_then(Value::as_array)
            .is_some_and(|items| {
                items
                    .iter()
                    .any(|c| c.field("name").and_then(Value::as_str) == Some(proxy))
            })
    });
    if has_proxy {
        return Ok(Injected::Left(format!("the pod already has {proxy}")));
    }
    let pod_kind = pod_type();
    let plan = rules::inject(pod.clone(), &pod_kind, env, caches)?;
    match plan.outcome {
        Outcome::Injected => {}
        Outcome::Skipped(reason) | Outcome::Ignored(reason) => {
            return Ok(Injected::Left(reason));
        }
        Outcome::Denied(reason) => return Ok(Injected::Denied(reason)),
        _ => return Ok(Injected::Left("nothing to add".into())),
    }
    let mut injected = plan.result;
    // The real webhook keeps no record of what it added.
    if let Some(annotations) = injected
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
        .and_then(Value::as_object_mut)
    {
        annotations.shift_remove(RECORD_ANNOTATION);
    }
    let record_path = format!(
        "/metadata/annotations/{}",
        RECORD_ANNOTATION.replace('/', "~1")
    );
    let ops: Vec<Value> = plan
        .ops
        .iter()
        .filter_map(|op| serde_json::to_value(op).ok())
        .filter(|op| op.field("path").and_then(Value::as_str) != Some(record_path.as_str()))
        .collect();
    Ok(Injected::Patched(injected, Value::Array(ops)))
}

fn pod_type() -> WorkloadType {
    crate::workload::builtin_types()
        .iter()
        .find(|t| t.kind == "Pod")
        .cloned()
        .unwrap_or(WorkloadType {
            api_version: "v1".into(),
            kind: "Pod".into(),
            path: String::new(),
        })
}

/// The static path: inject the object with this tool (knowing the
/// namespace's policies), then admit it.
fn static_review(
    object: &Value,
    kind: &WorkloadType,
    env: &Env<'_>,
    target: &Target<'_>,
    caches: &std::cell::RefCell<rules::Caches>,
) -> Result<Review, rules::PlanError> {
    // Borrowed for the rules alone: the review calls the webhook, which
    // borrows them too.
    let plan = rules::inject(object.clone(), kind, env, &mut caches.borrow_mut())?;
    Ok(review::review(&plan.result, kind, target))
}

/// What `admit` prints: a verdict line per object (`deployment/web
/// admitted`, `… rejected: <message>`) with the warnings under it; with
/// `trace`, every step of the chain first; with `--compare`, both paths and
/// where they differ. With `paint` on, rejections and warnings are coloured.
pub fn render(admitted: &[Admitted], trace: bool, paint: crate::output::Paint) -> String {
    let mut out = String::new();
    let several = admitted
        .iter()
        .map(|a| a.source.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len()
        > 1;
    for object in admitted {
        let subject = if several {
            format!("{}: {}", object.source, object.reference)
        } else {
            object.reference.to_string()
        };
        match &object.static_path {
            None => {
                if trace {
                    out.push_str(&trace_header(&subject, object));
                    out.push_str(&render_trace(&object.review));
                }
                out.push_str(&verdict_lines(&subject, &object.review, paint));
            }
            Some(static_path) => {
                if trace {
                    out.push_str(&trace_header(&subject, object));
                    out.push_str("webhook path:\n");
                    out.push_str(&render_trace(&object.review));
                    out.push_str("static path:\n");
                    out.push_str(&render_trace(static_path));
                }
                out.push_str(&verdict_lines(
                    &format!("{subject} (webhook path)"),
                    &object.review,
                    paint,
                ));
                out.push_str(&verdict_lines(
                    &format!("{subject} (static path)"),
                    static_path,
                    paint,
                ));
                out.push_str(&differences(&object.review, static_path));
            }
        }
    }
    out
}

/// `deployment/web: pod "web-" in namespace shop`, above its steps.
fn trace_header(subject: &str, object: &Admitted) -> String {
    let pod = object.review.admission.as_ref().map(|a| &a.pod);
    let field = |name: &str| {
        pod.and_then(|p| p.field("metadata"))
            .and_then(|m| m.get(name))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let name = Some(field("name"))
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| field("generateName"));
    format!(
        "{subject}: pod \"{name}\" in namespace {}\n",
        field("namespace")
    )
}

fn verdict_lines(subject: &str, review: &Review, paint: crate::output::Paint) -> String {
    let red = |text: &str| paint.paint(crate::output::Paint::REJECTION, text);
    let mut out = String::new();
    let rejections: Vec<&str> = review
        .verdicts
        .iter()
        .filter(|v| v.severity == crate::admission::Severity::Rejection)
        .map(|v| v.message.as_str())
        .collect();
    match rejections.as_slice() {
        [] => out.push_str(&format!("{subject} admitted\n")),
        [one] => out.push_str(&format!("{subject} {}\n", red(&format!("rejected: {one}")))),
        many => {
            out.push_str(&format!("{subject} {}\n", red("rejected:")));
            for message in many {
                out.push_str(&format!("  {}\n", red(message)));
            }
        }
    }
    for warning in review
        .verdicts
        .iter()
        .filter(|v| v.severity == crate::admission::Severity::Warning)
    {
        out.push_str(&format!("  {} {}\n", paint.warning(), warning.message));
    }
    out
}

/// Every step of the chain: pass, plugin, whether it mutated, its patch.
fn render_trace(review: &Review) -> String {
    let mut out = String::new();
    let Some(admission) = &review.admission else {
        out.push_str("  the workload itself is invalid: no pod is created\n");
        return out;
    };
    for step in &admission.trace {
        // Steps before and after the mutating phase are shown when they did something.
        if matches!(step.pass, 0 | 3) && !step.mutated && step.note.is_none() {
            continue;
        }
        let pass = match step.pass {
            0 => "before".to_string(),
            3 => "after".to_string(),
            n => format!("pass {n}"),
        };
        let what = if step.mutated { "mutated" } else { "no change" };
        out.push_str(&format!("  {pass:<7} {:<40} {what}\n", step.plugin));
        for op in step.patch.as_array().into_iter().flatten() {
            out.push_str(&format!("            {}\n", patch_line(op)));
        }
        if let Some(note) = &step.note {
            out.push_str(&format!("            {note}\n"));
        }
    }
    out
}

/// `add /spec/containers/1/resources {"limits":{"memory":"256Mi"}}`, cut when long.
fn patch_line(op: &Value) -> String {
    let field = |k: &str| op.get(k).and_then(Value::as_str).unwrap_or_default();
    let mut line = format!("{} {}", field("op"), field("path"));
    if let Some(value) = op.field("value") {
        let mut text = value.to_string();
        if text.chars().count() > 100 {
            text = text.chars().take(99).collect::<String>() + "…";
        }
        line.push(' ');
        line.push_str(&text);
    }
    line
}

/// Where the stored pods of the two paths differ, as the patch from the
/// webhook path's pod to the static path's.
fn differences(webhook: &Review, static_path: &Review) -> String {
    let pod = |r: &Review| {
        r.admission
            .as_ref()
            .map(|a| keyed_by_name(&a.pod))
            .unwrap_or(Value::Null)
    };
    let (from, to) = (pod(webhook), pod(static_path));
    let patch = serde_json::to_value(json_patch::diff(&from, &to)).unwrap_or(Value::Null);
    let ops: Vec<&Value> = patch
        .as_array()
        .into_iter()
        .flatten()
        .filter(|op| {
            let path = op.field("path").and_then(Value::as_str).unwrap_or_default();
            !path.contains(&RECORD_ANNOTATION.replace('/', "~1"))
        })
        .collect();
    if ops.is_empty() {
        return "  the stored pods are the same\n".to_string();
    }
    let mut out = String::from("  the static path's pod differs from the webhook path's:\n");
    for op in ops {
        out.push_str(&format!("    {}\n", patch_line(op)));
    }
    out
}

/// `value` with every list of named objects (containers, volumes, env, …)
/// turned into a map by name, so that a difference reads
/// `/spec/containers/linkerd-proxy/resources`, whatever the positions.
fn keyed_by_name(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), keyed_by_name(v)))
                .collect(),
        ),
        Value::Array(items) => {
            let names: Option<Vec<&str>> = items
                .iter()
                .map(|i| i.field("name").and_then(Value::as_str))
                .collect();
            match names {
                Some(names) if !items.is_empty() => Value::Object(
                    names
                        .iter()
                        .zip(items)
                        .map(|(n, i)| (n.to_string(), keyed_by_name(i)))
                        .collect(),
                ),
                _ => Value::Array(items.iter().map(keyed_by_name).collect()),
            }
        }
        other => other.clone(),
    }
}

/// The `kind` of `admit`'s report as JSON.
pub const REPORT_KIND: &str = "AdmissionReport";

/// The report as JSON: each object with its verdicts and trace (and the
/// static path with `--compare`).
pub fn json(admitted: &[Admitted]) -> Value {
    let review_json = |review: &Review| {
        let admission = review.admission.as_ref();
        serde_json::json!({
            "admitted": !crate::admission::rejected(&review.verdicts),
            "verdicts": review.verdicts.iter().map(|v| serde_json::json!({
                "severity": v.severity.as_str(),
                "plugin": v.plugin,
                "message": v.message,
            })).collect::<Vec<_>>(),
            "trace": admission.map(|a| a.trace.iter().map(|s| serde_json::json!({
                "pass": s.pass,
                "plugin": s.plugin,
                "mutated": s.mutated,
                "patch": s.patch,
                "note": s.note,
            })).collect::<Vec<_>>()),
            "pod": admission.map(|a| a.pod.clone()),
        })
    };
    serde_json::json!({
        "apiVersion": crate::report::JSON_REPORT_VERSION,
        "kind": REPORT_KIND,
        "objects": admitted.iter().map(|a| serde_json::json!({
            "file": a.source,
            "document": a.document,
            "apiVersion": a.reference.api_version,
            "kind": a.reference.kind,
            "name": a.reference.name,
            "namespace": a.reference.namespace,
            "review": review_json(&a.review),
            "staticPath": a.static_path.as_ref().map(review_json),
        })).collect::<Vec<_>>(),
    })
}

/// The pods as they would be stored, for `-o yaml` and `-o json`.
pub fn stored_pods(admitted: &[Admitted]) -> Vec<&Value> {
    admitted
        .iter()
        .filter_map(|a| a.review.admission.as_ref().map(|r| &r.pod))
        .collect()
}

//! `kubectl mesh-inject verify`: the tool's output proved against the
//! cluster's own webhook. Each workload the tool injects is sent to the
//! apiserver twice as a server-side dry run (which stores nothing; the
//! meshes' webhooks declare no side effects): its pod as it was before
//! injection, which the cluster's webhook injects, and its pod as the tool
//! injects it, which the webhook leaves alone (it is injected already).
//! Both come back with the apiserver's defaults and every other mutating
//! webhook's changes, so that what still differs is what the tool and the
//! cluster's injector disagree on.
//!
//! The rules here are pure ([`pod`], [`compare`]); the dry runs go through
//! [`crate::kubectl`].

mod compare;
mod pod;

use serde_json::Value;

pub use compare::{Difference, differences};

use crate::error::Error;
use crate::kubectl::{DryRun, Kubectl};
use crate::output::Paint;
use crate::pipeline::Processed;
use crate::workload::{ObjectRef, WorkloadTypes};

/// A workload of the input, both ways.
#[derive(Debug, Clone)]
pub struct Workload {
    /// The file it is in, as messages name it.
    pub source: String,
    pub reference: ObjectRef,
    /// Where its pods are created.
    pub namespace: String,
    /// Its pod as it was before injection.
    pub original: Value,
    /// Its pod as the tool injects it.
    pub injected: Value,
}

/// What the cluster said of a workload.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The cluster's webhook gives the tool's pod.
    Same,
    /// Where the two pods differ.
    Differs(Vec<Difference>),
    /// The apiserver refused a pod: which (`before injection`, `as the
    /// tool injects it`, or both), and what it said.
    Refused {
        which: &'static str,
        message: String,
    },
}

/// The workloads of the input, each with what the cluster said.
#[derive(Debug, Clone)]
pub struct Verified {
    pub workload: Workload,
    pub verdict: Verdict,
}

/// The input's workloads, split into those the tool injects (to be sent)
/// and those it leaves as they are (`file: kind/name`, not sent).
/// `injected` are the sources as the tool injects them, `originals` the
/// same again uninjected, both with their values kept; `namespace` is
/// where objects that name none are created, as the injection took it,
/// unless kustomize overlays set theirs: a workload is then sent in each.
pub fn workloads<'a>(
    injected: &'a [Processed],
    originals: &'a [Processed],
    types: &WorkloadTypes,
    namespace: &str,
) -> Result<(Vec<Workload>, Vec<String>), Error> {
    let mut sent = Vec::new();
    let mut left = Vec::new();
    for (after, before) in injected.iter().zip(originals) {
        let source = after.source.name();
        if after.values.len() != before.values.len() {
            return Err(Error::Internal(format!(
                "{source}: uninject gave {} documents of {}",
                before.values.len(),
                after.values.len()
            )));
        }
        // Where its objects that name none are created: each namespace the
        // kustomize overlays including the file set, else the run's.
        let mut overlays: Vec<&str> = Vec::new();
        for build in &after.source.kustomized.builds {
            if !overlays.contains(&build.namespace.as_str()) {
                overlays.push(&build.namespace);
            }
        }
        if overlays.is_empty() {
            overlays.push(namespace);
        }
        let objects = |values: &'a [Value]| values.iter().flat_map(crate::workload::objects_of);
        for (object, original) in objects(&after.values).zip(objects(&before.values)) {
            let Some(reference) = ObjectRef::of(object) else {
                continue;
            };
            let Some(kind) = types.find(&reference.api_version, &reference.kind) else {
                continue;
            };
            if ObjectRef::of(original).as_ref() != Some(&reference) {
                return Err(Error::Internal(format!(
                    "{source}: {reference} is not where uninject left it"
                )));
            }
            let own = reference.namespace.as_deref().filter(|ns| !ns.is_empty());
            let namespaces = own.map_or_else(|| overlays.clone(), |ns| vec![ns]);
            for namespace in namespaces {
                let pods = (
                    pod::of(original, kind, namespace),
                    pod::of(object, kind, namespace),
                );
                let (Some(original), Some(injected)) = pods else {
                    break;
                };
                if original == injected {
                    left.push(format!("{source}: {reference}"));
                    break;
                }
                sent.push(Workload {
                    source: source.clone(),
                    reference: reference.clone(),
                    namespace: namespace.to_string(),
                    original,
                    injected,
                });
            }
        }
    }
    Ok((sent, left))
}

/// Send each workload's two pods to the cluster and compare what comes back.
pub fn verify_all(workloads: Vec<Workload>, kubectl: &Kubectl) -> Result<Vec<Verified>, Error> {
    let mut verified = Vec::with_capacity(workloads.len());
    for workload in workloads {
        let theirs = kubectl.create_dry_run(&workload.original, &workload.namespace)?;
        let ours = kubectl.create_dry_run(&workload.injected, &workload.namespace)?;
        let verdict = verdict(ours, theirs);
        verified.push(Verified { workload, verdict });
    }
    Ok(verified)
}

/// What the two answers say: the tool's pod, then the cluster's.
fn verdict(ours: DryRun, theirs: DryRun) -> Verdict {
    match (ours, theirs) {
        (DryRun::Created(ours), DryRun::Created(theirs)) => {
            let found = differences(&pod::comparable(ours), &pod::comparable(theirs));
            if found.is_empty() {
                Verdict::Same
            } else {
                Verdict::Differs(found)
            }
        }
        (DryRun::Refused(message), DryRun::Created(_)) => Verdict::Refused {
            which: "as the tool injects it",
            message,
        },
        (DryRun::Created(_), DryRun::Refused(message)) => Verdict::Refused {
            which: "as it was before injection",
            message,
        },
        (DryRun::Refused(message), DryRun::Refused(_)) => Verdict::Refused {
            which: "both before injection and as the tool injects it",
            message,
        },
    }
}

/// Whether any workload differs or was refused: `verify` exits 1.
pub fn any_failed(verified: &[Verified]) -> bool {
    verified.iter().any(|v| v.verdict != Verdict::Same)
}

/// The report: one line per workload sent (and per workload left alone
/// with `verbose`), each difference under its workload, then the counts.
pub fn render(verified: &[Verified], left: &[String], verbose: bool, paint: Paint) -> String {
    let mut out = String::new();
    let (mut same, mut differ, mut refused) = (0, 0, 0);
    for Verified { workload, verdict } in verified {
        let subject = format!(
            "{} (namespace {}, {})",
            workload.reference, workload.namespace, workload.source
        );
        match verdict {
            Verdict::Same => {
                same += 1;
                out.push_str(&format!(
                    "same: {subject}: the cluster's webhook gives the tool's pod\n"
                ));
            }
            Verdict::Differs(found) => {
                differ += 1;
                let count = found.len();
                let fields = if count == 1 { "field" } else { "fields" };
                let label = paint.paint(Paint::REJECTION, "differs:");
                out.push_str(&format!(
                    "{label} {subject}: the cluster's pod differs from the tool's in {count} {fields}\n"
                ));
                for difference in found {
                    out.push_str(&format!("  {}\n", difference_line(difference)));
                }
                if not_injected(found) {
                    out.push_str(&format!(
                        "  the cluster's webhook added no container: is injection enabled for namespace {} and the webhook running?\n",
                        workload.namespace
                    ));
                }
            }
            Verdict::Refused { which, message } => {
                refused += 1;
                let label = paint.paint(Paint::REJECTION, "refused:");
                out.push_str(&format!(
                    "{label} {subject}: the cluster refused its pod {which}: {}\n",
                    message.trim_end()
                ));
            }
        }
    }
    if verbose {
        for workload in left {
            out.push_str(&format!(
                "left: {workload}: the tool leaves it as it is; not sent\n"
            ));
        }
    }
    let sent = verified.len();
    let plural = if sent == 1 { "" } else { "s" };
    out.push_str(&format!(
        "verify: {sent} workload{plural} sent to the cluster: {same} the same, {differ} different, {refused} refused; {} left as they are, not sent\n",
        left.len()
    ));
    out
}

/// `path: the tool's X, the cluster's Y`, with either side absent said so.
fn difference_line(difference: &Difference) -> String {
    let path = &difference.path;
    match (&difference.tool, &difference.cluster) {
        (Some(ours), Some(theirs)) => format!(
            "{path}: the tool's {}, the cluster's {}",
            shown(ours),
            shown(theirs)
        ),
        (Some(ours), None) => format!("{path}: only in the tool's pod: {}", shown(ours)),
        (None, Some(theirs)) => format!("{path}: only in the cluster's pod: {}", shown(theirs)),
        (None, None) => path.clone(),
    }
}

/// A value on one line, cut at 120 characters.
fn shown(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(120) {
        Some((at, _)) => format!("{}…", text.get(..at).unwrap_or_default()),
        None => text,
    }
}

/// Whether the differences show a cluster's pod that got none of the
/// containers the tool added: its webhook did not inject it.
fn not_injected(found: &[Difference]) -> bool {
    let containers = |d: &Difference| {
        ["spec.containers", "spec.initContainers"]
            .iter()
            .any(|list| d.path == *list || d.path.starts_with(&format!("{list}[")))
    };
    let only = |tool: bool| {
        move |d: &Difference| {
            containers(d) && d.tool.is_some() == tool && d.cluster.is_some() != tool
        }
    };
    found.iter().any(only(true)) && !found.iter().any(only(false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_verdict_names_the_pod_the_cluster_refused() {
        let pod = json!({"metadata": {"generateName": "web-"}, "spec": {}});
        let refused = || DryRun::Refused("Error from server (Forbidden): no".into());
        let created = || DryRun::Created(pod.clone());
        assert_eq!(verdict(created(), created()), Verdict::Same);
        let which = |v: Verdict| match v {
            Verdict::Refused { which, .. } => which,
            _ => "",
        };
        assert_eq!(
            which(verdict(refused(), created())),
            "as the tool injects it"
        );
        assert_eq!(
            which(verdict(created(), refused())),
            "as it was before injection"
        );
        assert!(which(verdict(refused(), refused())).starts_with("both"));
    }

    #[test]
    fn a_pod_the_webhook_left_alone_is_said_to_be_not_injected() {
        let ours = json!({"spec": {"containers": [{"name": "proxy"}, {"name": "app"}]}});
        let theirs = json!({"spec": {"containers": [{"name": "app"}]}});
        let found = differences(&ours, &theirs);
        assert!(not_injected(&found));
        let text = render(
            &[Verified {
                workload: Workload {
                    source: "deploy.yaml".into(),
                    reference: ObjectRef::of(
                        &json!({"kind": "Deployment", "metadata": {"name": "web"}}),
                    )
                    .expect("a reference"),
                    namespace: "shop".into(),
                    original: json!({}),
                    injected: json!({}),
                },
                verdict: Verdict::Differs(found),
            }],
            &[],
            false,
            Paint::new(false),
        );
        assert!(
            text.contains("differs: deployment/web (namespace shop, deploy.yaml)"),
            "{text}"
        );
        assert!(
            text.contains("spec.containers[proxy]: only in the tool's pod"),
            "{text}"
        );
        assert!(
            text.contains("is injection enabled for namespace shop"),
            "{text}"
        );
        assert!(
            text.ends_with("0 the same, 1 different, 0 refused; 0 left as they are, not sent\n"),
            "{text}"
        );
    }
}

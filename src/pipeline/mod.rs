//! Sources through the pipeline: documents → objects → workloads → plan →
//! admission review → render.
//!
//! One pass over the input, each document parsed, planned and rendered, its
//! syntax tree dropped before the next is read, with the `--context` files'
//! objects as the cluster; when the input holds cluster objects of its own
//! (a LimitRange beside the Deployments), the pass runs again with them.
//!
//! Here: the entry points and what a run knows before its input. Beside:
//! `process.rs` (the sources cut into units, spread over the cores by
//! `parallel.rs`), `context.rs` (parsing, and the cluster's objects
//! gathered), `plan.rs` (each object planned by the rules, with the
//! cluster's verdicts), `render.rs` (the plans as edits of the text),
//! `results.rs` (the settings and what a run gives back), `overlays.rs`
//! (kustomize overlays of other namespaces), `patches.rs` (kustomize
//! patches that address containers by place), `kept.rs` and `verbatim.rs`
//! (what uninject gives back as it was written).

use json_patch::PatchOperation;
use serde_json::Value;

use crate::admission::{self, Verdict};
use crate::cluster::ClusterContext;
use crate::error::{Error, Located};
use crate::json::Field;
use crate::note::Note;
use crate::profile::{Prepared, Profile};
use crate::progress::Progress;
use crate::reuse::Mode;
use crate::rules::{self, Env, Outcome, Plan};
use crate::source::{Kustomized, Source};
use crate::workload::{self, ObjectRef, WorkloadTypes};
use crate::yaml::{self, Document, Node};

mod context;
mod kept;
mod overlays;
mod parallel;
mod patches;
mod plan;
mod process;
mod render;
mod results;
mod verbatim;

use context::*;
pub(crate) use context::{cluster_context, parse};
use parallel::on_all_cores;
use plan::*;
use process::*;
use render::*;
pub use results::{Action, ObjectResult, Output, Processed, Settings, Settled};

/// Run `sources` through the pipeline, with the objects of `context` sources
/// (and of the inputs themselves) as what is known of the cluster.
///
/// Every document is parsed, planned and rendered in one pass, its syntax tree
/// dropped before the next is built, with the `--context` objects as the
/// cluster. When the inputs hold context objects themselves (a LimitRange
/// beside the Deployments), they apply to every workload, whatever the order:
/// the pass is then run again with them.
pub fn process_all(
    sources: Vec<Source>,
    context: &[Source],
    settings: &Settings,
) -> Result<Vec<Processed>, Error> {
    let loaded = load(context, settings);
    process_or_return(
        sources,
        loaded,
        settings,
        &Prepared::new(settings.reuse),
        None,
    )
    .map_err(|failed| failed.error)
}

/// What a run knows before it reads its input: the cluster of its
/// `--context` objects, and the profile as the cluster's own injector
/// configuration there sets it (`None`: the profile as it is).
pub struct Loaded {
    cluster: ClusterContext,
    profile: Option<Box<Profile>>,
}

/// The cluster of the `context` sources and the profile it configures:
/// loaded while the input is read.
pub fn load(context: &[Source], settings: &Settings) -> Result<Loaded, Error> {
    let cluster = cluster_context(&[], &[], context, &settings.profile, settings.namespace())?;
    let profile = configured_profile(settings, &cluster)?;
    Ok(Loaded { cluster, profile })
}

/// The profile as the cluster's own injector configuration sets it, when
/// `cluster` holds one.
fn configured_profile(
    settings: &Settings,
    cluster: &ClusterContext,
) -> Result<Option<Box<Profile>>, Error> {
    settings
        .profile
        .configured_by(cluster, &settings.flags)
        .map(|found| found.map(Box::new))
}

/// A run that stopped, with its sources given back (a KRM function answers
/// with its input then).
#[derive(Debug)]
pub struct Failed {
    pub error: Error,
    pub sources: Vec<Source>,
}

/// [`process_all`], giving the sources back with an error. `prepared` holds
/// the profile filled and rendered for the run's workloads: the caller
/// decides when it goes (a process about to end need not free it).
/// `progress`, when given, is told how far each pass has got.
pub fn process_or_return(
    sources: Vec<Source>,
    loaded: Result<Loaded, Error>,
    settings: &Settings,
    prepared: &Prepared,
    progress: Option<&Progress>,
) -> Result<Vec<Processed>, Failed> {
    let Loaded {
        mut cluster,
        profile,
    } = match loaded {
        Ok(loaded) => loaded,
        Err(error) => return Err(Failed { error, sources }),
    };
    let types = WorkloadTypes::with(&settings.profile.workloads);
    // The cluster's configuration, checked before anything is planned with it.
    let checked = |cluster: &ClusterContext, profile: Option<&Profile>| {
        profile
            .unwrap_or(&settings.profile)
            .check_objects(cluster, &settings.flags)
    };
    let run = |cluster: &ClusterContext,
               profile: Option<&Profile>,
               prepared: &Prepared,
               gather: bool,
               run_notes: &[Note]| {
        // An Istio revision tag asked for is the revision it points at.
        let flags = crate::mesh::istio::revision::resolve_flags(&settings.flags, cluster);
        let env = Env {
            run_notes,
            prepared,
            keep_patches: settings.keep_patches,
            profile: profile.unwrap_or(&settings.profile),
            flags: &flags,
            native: settings.native,
            version: settings.version,
            security: settings.security,
            namespace: settings.namespace(),
            namespace_assumed: settings.namespace.is_none(),
            namespace_from: settings.namespace_from.as_deref(),
            cluster,
        };
        let planner = Planner {
            settings,
            env: &env,
            types: &types,
            kustomized: &NOT_KUSTOMIZED,
        };
        process_sources(&sources, planner, gather, progress)
    };
    let notes = match checked(&cluster, profile.as_deref()) {
        Ok(notes) => notes,
        Err(error) => return Err(Failed { error, sources }),
    };
    let first = run(&cluster, profile.as_deref(), prepared, true, &notes);
    match first.stopped {
        // What a refused workload lacks may be in a context object of the
        // input (the trust anchors' ConfigMap after the Deployment): all of
        // them were gathered, and the pass with them decides.
        Some(stop) if !stop.refusal || first.found.is_empty() => {
            return Err(Failed {
                error: stop.error,
                sources,
            });
        }
        _ => {}
    }
    let mut rendered = first.rendered;
    if !first.found.is_empty() {
        for object in &first.found {
            cluster.add(object, settings.namespace());
        }
        // Another cluster: fillings found by the flags alone held the
        // first one's objects.
        let profile = match configured_profile(settings, &cluster) {
            Ok(profile) => profile,
            Err(error) => return Err(Failed { error, sources }),
        };
        let notes = match checked(&cluster, profile.as_deref()) {
            Ok(notes) => notes,
            Err(error) => return Err(Failed { error, sources }),
        };
        let second = run(
            &cluster,
            profile.as_deref(),
            &Prepared::new(settings.reuse),
            false,
            &notes,
        );
        if let Some(stop) = second.stopped {
            return Err(Failed {
                error: stop.error,
                sources,
            });
        }
        rendered = second.rendered;
    }
    let mut outputs = Vec::with_capacity(rendered.len());
    for (source, part) in sources.iter().zip(&mut rendered) {
        match Output::spliced(source, std::mem::take(&mut part.edits)) {
            Ok(output) => outputs.push(output),
            Err(error) => return Err(Failed { error, sources }),
        }
    }
    Ok(sources
        .into_iter()
        .zip(rendered)
        .zip(outputs)
        .map(|((source, part), output)| Processed {
            source,
            output,
            objects: part.objects,
            values: part.values,
        })
        .collect())
}

/// What planning a document reads besides the document.
#[derive(Clone, Copy)]
struct Planner<'a> {
    settings: &'a Settings,
    env: &'a Env<'a>,
    types: &'a WorkloadTypes,
    /// The namespaces kustomize gives the source's objects.
    kustomized: &'a Kustomized,
}

/// A source no kustomization includes.
static NOT_KUSTOMIZED: Kustomized = Kustomized {
    builds: Vec::new(),
    index_patches: Vec::new(),
    problems: Vec::new(),
};

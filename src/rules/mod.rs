//! The rules: pure functions from an object to a plan (a JSON Patch and its result).

pub mod inject;
mod linkerd_chart;
mod mesh_template;
pub mod plan;
pub mod record;
pub mod resources;
pub mod security;
pub mod service;
pub mod shutdown;
pub mod stale;
pub mod uninject;

pub use inject::inject;
pub use plan::{Outcome, Plan, PlanError};
pub use uninject::uninject;

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::cluster::{ClusterContext, KubeVersion};
use crate::json::Field;
use crate::mesh::istio::alike::Renderings;
use crate::profile::{NativeChoice, Prepared, Profile};
use crate::reuse::Mode;
use crate::reuse::spare::Spares;
use crate::workload::WorkloadType;

/// How the injected containers get their security context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecurityMode {
    /// A PodSecurityPolicy in context (target ≤ 1.24) if there is one, else copy.
    Auto,
    /// Apply the PodSecurityPolicy in context.
    Psp,
    /// Copy from the first app container.
    Copy,
    /// Leave the profile's security context as it is.
    Off,
}

/// Everything the rules read besides the object itself.
#[derive(Debug, Clone)]
pub struct Env<'a> {
    pub profile: &'a Profile,
    /// `--set` values: they override annotations and the profile.
    pub flags: &'a Map<String, Value>,
    /// `--native-sidecar`, overriding annotations and the profile.
    pub native: Option<NativeChoice>,
    pub version: KubeVersion,
    pub security: SecurityMode,
    /// Namespace of objects that name none; empty for an injection that
    /// must hold in any namespace (see `pipeline/overlays.rs`).
    pub namespace: &'a str,
    /// No namespace was given for them: `default` is assumed, and said.
    pub namespace_assumed: bool,
    /// Where `namespace` was given (`-n`, a kustomization), said with each
    /// workload that names none.
    pub namespace_from: Option<&'a str>,
    pub cluster: &'a ClusterContext,
    /// The profile filled with the values workloads use, shared across them.
    pub prepared: &'a Prepared,
    /// Keep each plan's patch operations (for `-o patch`).
    pub keep_patches: bool,
    /// What the run says of the cluster's configuration: every workload
    /// injected carries it, and the report says it once.
    pub run_notes: &'a [crate::note::Note],
}

/// What one worker (a core taking units in turn) keeps from one workload
/// to the next, beside what the run shares in [`Env::prepared`]: made by
/// the worker when it starts and passed to each rule that reuses, never
/// shared between threads (see [`crate::reuse`]).
#[derive(Default)]
pub struct Caches {
    /// Containers and volumes done with, holding the next copies.
    pub spares: Spares,
    /// The cluster's templates rendered for workloads of one shape.
    pub renderings: Renderings,
}

impl Caches {
    /// Caches that keep what `mode` says: everything within their bounds,
    /// or nothing (the reference).
    pub fn new(mode: Mode) -> Self {
        Caches {
            spares: Spares::new(mode),
            renderings: Renderings::new(mode),
        }
    }
}

/// Where a workload's pod metadata and spec live, and the fields of them
/// the rules place things into.
pub(crate) struct PodPaths {
    pub metadata: Vec<String>,
    pub spec: Vec<String>,
    /// The paths to the fields of [`PLACED_FIELDS`], in its order.
    placed: Vec<Vec<String>>,
}

/// The pod's fields every injection writes to (metadata's, then spec's).
const PLACED_FIELDS: [(bool, &str); 6] = [
    (true, "annotations"),
    (true, "labels"),
    (false, "initContainers"),
    (false, "containers"),
    (false, "volumes"),
    (false, "imagePullSecrets"),
];

impl PodPaths {
    /// The paths for a workload of `kind`. Made for each workload: keeping
    /// them per kind saved 1 to 3% of a run's instructions, not worth a
    /// cache.
    pub fn of(kind: &WorkloadType) -> Self {
        let below_template = |field: &str| {
            let mut path = Vec::with_capacity(4);
            path.extend(kind.template_path().map(str::to_string));
            path.push(field.to_string());
            path
        };
        let (metadata, spec) = (below_template("metadata"), below_template("spec"));
        let placed = PLACED_FIELDS
            .iter()
            .map(|(in_metadata, field)| match in_metadata {
                true => below(&metadata, field),
                false => below(&spec, field),
            })
            .collect();
        PodPaths {
            metadata,
            spec,
            placed,
        }
    }

    /// The path to `field` of the pod's metadata.
    pub fn metadata(&self, field: &str) -> Cow<'_, [String]> {
        self.field(true, field, &self.metadata)
    }

    /// The path to `field` of the pod's spec.
    pub fn spec(&self, field: &str) -> Cow<'_, [String]> {
        self.field(false, field, &self.spec)
    }

    fn field(&self, in_metadata: bool, field: &str, parent: &[String]) -> Cow<'_, [String]> {
        let made = PLACED_FIELDS
            .iter()
            .position(|&(m, f)| m == in_metadata && f == field)
            .and_then(|at| self.placed.get(at));
        match made {
            Some(path) => Cow::Borrowed(path),
            None => Cow::Owned(below(parent, field)),
        }
    }
}

/// The path to `field` of what `path` leads to, made at its size (a clone
/// then a push would grow it again).
pub(crate) fn below(path: &[String], field: &str) -> Vec<String> {
    let mut out = Vec::with_capacity(path.len() + 1);
    out.extend(path.iter().cloned());
    out.push(field.to_string());
    out
}

/// Why a workload has no pod template this tool can work on, if it has none.
pub(crate) fn template_problem(object: &Value, kind: &WorkloadType) -> Option<String> {
    let template = kind
        .template_path()
        .try_fold(object, |at, token| at.field(token));
    let where_ = if kind.is_pod() {
        "the pod".to_string()
    } else {
        kind.path.clone()
    };
    let Some(template) = template.filter(|t| t.is_object()) else {
        return Some(format!("no pod template at {where_}"));
    };
    match template.field("spec").and_then(|s| s.field("containers")) {
        Some(Value::Array(_)) => None,
        Some(_) => Some(format!("containers in {where_} is not a list")),
        None => Some(format!("no containers in {where_}")),
    }
}

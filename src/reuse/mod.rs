//! What a run reuses from one workload to the next, in one place. Most
//! workloads of a repository are alike (the same proxy, the same values), so
//! the tool keeps what it made for one and hands it to the next rather than
//! making it again. Each kind of reuse, and how long what it keeps lives:
//!
//! - [`spare`]: values the tool is done with (an injected workload's proxy
//!   and init containers), kept per worker so that their allocations hold the
//!   next workload's copy. Lives as long as the worker; at most eight. Worth
//!   7% of a Linkerd run's instructions and 5% of one with Istio's cluster
//!   templates: under the 10% a cache must be worth, but without it a
//!   Linkerd run is 2.56 times the parse-only baseline by instructions (5,000
//!   workloads), over its 2.5.
//! - `yaml::edit::Blocks` (in `src/yaml/edit/blocks.rs`): the text of new
//!   lines already written (a proxy container as YAML at a column, in a
//!   layout), shared by every edit that adds the same block. One per worker,
//!   carried from document to document for the whole run; bounded, past
//!   which blocks are written each time. Worth 18 to 28% of a run's
//!   instructions (callgrind, 500 generated workloads).
//! - `profile::Prepared` (in `src/profile/prepared.rs`): the profile filled
//!   with each distinct set of values workloads ask for, and what each
//!   filling rendered for each distinct set of answers. One per run and
//!   cluster (a second pass with the input's own context objects starts a
//!   new one), shared by every core; bounded. Worth 42% of a Linkerd run's
//!   instructions, 9 to 11% of Istio's.
//! - `mesh::istio::alike` (in `src/mesh/istio/alike.rs`): the cluster's
//!   template rendered with [`stand_ins`] for workloads of one shape, with
//!   the function calls the rendering depends on. Per worker and
//!   configuration, for the run; bounded. Worth 70% of a run with the
//!   cluster's templates.
//!
//! - the pipeline's last document value (`pipeline::process::Scratch`): the
//!   next workload's value is read over it, into its allocations. One per
//!   worker, one value. Worth 3.6% of a Linkerd run's instructions and 2.7%
//!   of one with the cluster's templates (500 generated workloads): under
//!   10%, kept because without it a run with the cluster's templates is
//!   about 3.05 times the parse-only baseline (5,000 workloads), over its 3.
//!
//! - [`stand_ins`]: what the renderings above are made with in place of a
//!   workload's own strings (its name, its namespace), so that workloads
//!   alike but for those share one rendering, each given its strings back.
//!
//! The figures are the instructions a run saves with each (callgrind, 500
//! generated workloads); smaller memos (the pod paths by kind, the last
//! quantities parsed, the last proxy configuration and status, the cluster
//! templates' pods by their inputs) saved under 10% and are gone.
//!
//! Nothing reused changes what is written: a hit is the very value a fresh
//! making would give (each cache compares what the making reads), which the
//! tests check by injecting the same inputs alone and among others, and with
//! [`Mode::Reference`], which keeps nothing, against the usual run
//! (`tests/it/reference.rs`).
//!
//! Who owns what: `Prepared` belongs to the run and is passed to the rules in
//! their `Env`; the others belong to one worker (a core taking units in
//! turn), which makes them when it starts and passes them down: the blocks
//! in the pipeline's scratch, the spares and Istio's renderings in
//! `rules::Caches`, given to every rule that reuses.

pub mod spare;
pub mod stand_ins;

/// Whether a run reuses what it made for one workload for the next.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Mode {
    /// Keep what was made, within each cache's bound, and reuse it.
    #[default]
    Reuse,
    /// Keep nothing: every workload's proxy, filling and text made for real.
    /// The reference the reuse is tested against; the output is the same.
    Reference,
}

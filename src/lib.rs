//! mesh-inject: pre-inject a service mesh proxy into Kubernetes manifests,
//! offline, changing nothing else in the files.
//!
//! The pipeline, one module per stage:
//! [`source`] (files, dirs, stdin) → [`yaml`] (documents with spans, values) →
//! [`workload`] (which objects carry a pod template) → [`rules`] (plans as
//! JSON Patch, from a [`profile`]) → [`admission`] (would the cluster admit
//! the result) → [`yaml::edit`] (render onto the original text) → [`output`]
//! (stdout, diff, in-place, check) and [`report`], which says of each object
//! what [`diagnostic`] decides.
//! [`pipeline`] runs the sources through it; [`run`] runs a command line.
//! Beside it: [`admit`] (the `admit` subcommand: the admission chain with
//! webhooks), [`context_save`] (the cluster's objects saved through
//! kubectl for `--context`), [`verify`] (the output against the cluster's
//! own webhook, by server-side dry runs), [`kubectl`] (the one way to the
//! cluster, through the user's kubectl), [`krm`] (the tool as a KRM function), [`complete`] (kubectl's
//! plugin completion).

// No panic reachable from input: no unwrap, expect or panic!, no indexing or
// slicing (of slices or of strings) that may panic, in the library's code
// (its unit tests may: see clippy.toml; string slicing is allowed per test module). Set here rather than in Cargo.toml's [lints], which would
// apply to the integration tests and examples too.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::string_slice
)]

pub mod admission;
pub mod admit;
pub mod allocator;
pub mod cli;
pub mod cluster;
pub mod complete;
pub mod context_save;
pub mod diagnostic;
pub mod error;
pub mod gotemplate;
pub mod json;
pub mod krm;
pub mod kubectl;
pub mod mesh;
pub mod note;
pub mod output;
pub mod pipeline;
pub mod profile;
pub mod progress;
pub mod report;
pub mod reuse;
pub mod rules;
pub mod run;
pub mod sentinel;
pub mod source;
pub mod suggest;
pub mod verify;
pub mod workload;
pub mod yaml;

/// What `--version` prints: the tool's version and the proxy each embedded
/// profile injects by default.
pub fn version_text() -> String {
    let mut text = env!("CARGO_PKG_VERSION").to_string();
    for (name, _) in profile::EMBEDDED {
        if let Some(image) = profile::Profile::embedded(name)
            .ok()
            .and_then(|p| p.proxy_image())
        {
            text.push_str(&format!("\n{name} proxy: {image}"));
        }
    }
    text
}

//! mesh-inject: pre-inject a service mesh proxy into Kubernetes manifests,
//! offline, changing nothing else in the files.
//!
//! The pipeline, one module per stage:
//! [`source`] (files, dirs, stdin) → [`yaml`] (documents with spans, values) →
//! [`workload`] (which objects carry a pod template) → [`rules`] (plans as
//! JSON Patch, from a [`profile`]) → [`yaml::edit`] (render onto the original
//! text) → [`output`] (stdout, diff, in-place, check) and [`report`].
//! [`pipeline`] runs one source through it; [`run`] runs a command line.

pub mod admission;
pub mod admit;
pub mod cli;
pub mod cluster;
pub mod error;
pub mod output;
pub mod pipeline;
pub mod profile;
pub mod report;
pub mod rules;
pub mod run;
pub mod source;
pub mod workload;
pub mod yaml;

//! mesh-inject: pre-inject a service mesh proxy into Kubernetes manifests.

pub mod error;
pub mod profile;
pub mod rules;
pub mod source;
pub mod workload;
pub mod yaml;

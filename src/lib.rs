//! mesh-inject: pre-inject a service mesh proxy into Kubernetes manifests.

pub mod yaml;

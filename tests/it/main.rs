//! The integration tests, in one binary so that the crate is linked once:
//! each module drives the real `kubectl-mesh_inject` (or the library) for
//! one part of the tool. Tests that need an outside tool (helm, kpt,
//! kubectl, pre-commit, a shell) check for it first and say when they skip
//! (see `common::skip_test`). `cargo test --test it NAME` runs the tests
//! whose path holds NAME (`istio_goldens`, `properties::`).

mod common;

mod admission;
mod admit;
mod cli;
mod completion;
mod context_save;
mod corpus_decisions;
mod differential;
mod docs;
mod fake_apiserver;
mod fuzz_regressions;
mod generated;
mod generated_properties;
mod golden;
mod hostile;
mod in_place;
mod integrations;
mod istio_cluster_config;
mod istio_embedded_rendered;
mod istio_goldens;
mod istio_pods;
mod istio_real_cluster;
mod istio_templates;
mod istio_uninject;
mod kubectl_reader;
mod linkerd_chart;
mod linkerd_config;
mod linkerd_goldens;
mod linkerd_settings;
mod mesh_goldens_reinjected;
mod modules;
mod namespaces;
mod noops;
mod properties;
mod reader_generators;
mod reference;
mod rules;
mod sprig_oracle;
mod template_programs;
mod trust_anchors;
mod verify;

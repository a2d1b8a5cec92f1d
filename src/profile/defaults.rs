//! The one note on what a run took from the embedded profile rather than
//! from the cluster (the proxy version, the mesh's settings, the policies),
//! pointing at `context save`, said once a run.

use serde_json::{Map, Value};

use super::{Profile, ValueFromObject};
use crate::cluster::ClusterContext;
use crate::mesh::Mesh;
use crate::note::Note;

/// How the note begins.
pub const DEFAULTS_NOTE: &str = "from the embedded profile, not from your cluster: ";

/// How its part on the proxy version begins (a workload whose annotation
/// sets its own version leaves that part out).
const VERSION_PART: &str = "the proxy version ";

/// How it ends: the command that saves the cluster's configuration.
const DEFAULTS_NOTE_END: &str = "; to use your cluster's, save its configuration once and give it with --context:\n  kubectl mesh-inject context save cluster/\n  kubectl mesh-inject -f FILE --context cluster/";

/// The kinds a namespace's policies come in.
const POLICY_KINDS: [&str; 4] = [
    "Namespace",
    "LimitRange",
    "ResourceQuota",
    "PodSecurityPolicy",
];

fn note_text(parts: &[String]) -> String {
    format!("{DEFAULTS_NOTE}{}{DEFAULTS_NOTE_END}", parts.join("; "))
}

/// The note as it holds for a workload whose proxy version is its own:
/// without the version; `None` when nothing else is left (or `text` is
/// another note, which is returned whole).
pub fn without_version(text: &str) -> Option<String> {
    let Some(parts) = text
        .strip_prefix(DEFAULTS_NOTE)
        .and_then(|t| t.strip_suffix(DEFAULTS_NOTE_END))
    else {
        return Some(text.to_string());
    };
    let rest: Vec<String> = parts
        .split("; ")
        .filter(|p| !p.starts_with(VERSION_PART))
        .map(str::to_string)
        .collect();
    (!rest.is_empty()).then(|| note_text(&rest))
}

impl Profile {
    /// What the run takes from the embedded profile rather than from
    /// `cluster`: the proxy version (Linkerd, no `--set proxyVersion` and no
    /// object giving it); and, without any `--context`, the mesh's settings
    /// (no ConfigMap of them in the input) and the policies (no Namespace,
    /// LimitRange, ResourceQuota or PodSecurityPolicy in the input). One
    /// note, or none.
    pub(super) fn defaults_note(
        &self,
        cluster: &ClusterContext,
        flags: &Map<String, Value>,
        namespace_of: &dyn Fn(&ValueFromObject) -> String,
    ) -> Option<Note> {
        let mut parts = Vec::new();
        if let Some(version) = self.embedded_version(cluster, flags, namespace_of) {
            parts.push(format!(
                "{VERSION_PART}{version} (no linkerd-config in the input or --context, no --set proxyVersion)"
            ));
        }
        if !cluster.context_given() {
            let settings = match self.mesh {
                Mesh::Linkerd => Some(crate::mesh::linkerd::chart::CLUSTER_VALUES.0),
                Mesh::Istio => Some(crate::mesh::istio::injector::INJECTOR_CONFIG_MAP),
                // A profile of no mesh reads no mesh's settings.
                Mesh::None => None,
            };
            if let Some(settings) = settings.filter(|s| !cluster.has_config_map_named(s)) {
                parts.push(format!(
                    "the mesh's settings (no ConfigMap {settings} in the input)"
                ));
            }
            if POLICY_KINDS
                .iter()
                .all(|kind| cluster.all_of_kind(kind).is_empty())
            {
                parts.push(
                    "the policies (no Namespace, LimitRange, ResourceQuota or PodSecurityPolicy in the input: none is checked)"
                        .into(),
                );
            }
        }
        (!parts.is_empty()).then(|| Note::info(note_text(&parts)).about_the_run())
    }

    /// For Linkerd, the proxy version when it is the embedded profile's own
    /// (no object in `cluster` the version is read from, no `--set
    /// proxyVersion`).
    fn embedded_version(
        &self,
        cluster: &ClusterContext,
        flags: &Map<String, Value>,
        namespace_of: &dyn Fn(&ValueFromObject) -> String,
    ) -> Option<String> {
        if self.mesh != Mesh::Linkerd || flags.contains_key("proxyVersion") {
            return None;
        }
        let from_cluster = self
            .values_from_objects
            .iter()
            .filter(|s| s.value == "proxyVersion")
            .any(|s| cluster.source_value(s, &namespace_of(s)).is_some());
        let version = self.values.get("proxyVersion")?;
        let embedded = Profile::embedded(&self.name).ok()?;
        if from_cluster || embedded.values.get("proxyVersion") != Some(version) {
            return None;
        }
        Some(version.as_str().unwrap_or_default().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workloads_own_version_leaves_the_rest_of_the_note() {
        let both = note_text(&[
            "the proxy version x (why)".into(),
            "the policies (why)".into(),
        ]);
        assert_eq!(
            without_version(&both),
            Some(note_text(&["the policies (why)".into()]))
        );
        assert_eq!(
            without_version(&note_text(&["the proxy version x".into()])),
            None
        );
        assert_eq!(
            without_version("another note").as_deref(),
            Some("another note")
        );
    }
}

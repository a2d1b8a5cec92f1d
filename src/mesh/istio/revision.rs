//! Istio's revision tags: a stable name for a revision (`prod-stable`),
//! kept by a MutatingWebhookConfiguration `istio-revision-tag-TAG` labelled
//! `istio.io/tag: TAG` and `istio.io/rev: REVISION`, whose webhooks select
//! namespaces and pods labelled `istio.io/rev: TAG` and send them to that
//! revision's istiod (`istioctl tag set`). The tag `default` takes over the
//! default revision's selectors. A run that sees the webhook configurations
//! (`kubectl get mutatingwebhookconfigurations -l istio.io/tag -o yaml`)
//! reads a tag as the revision it names.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::cluster::ClusterContext;
use crate::json::Field;

/// The tags the webhook configurations of `cluster` define: tag → revision.
pub fn tags(cluster: &ClusterContext) -> BTreeMap<String, String> {
    cluster
        .all_of_kind("MutatingWebhookConfiguration")
        .into_iter()
        .filter_map(|webhook| {
            let labels = webhook.field("metadata")?.field("labels")?;
            let label = |key: &str| labels.field(key).and_then(Value::as_str);
            Some((
                label("istio.io/tag")?.to_string(),
                label("istio.io/rev")?.to_string(),
            ))
        })
        .collect()
}

/// The revision `name` stands for: the one a tag of that name points at,
/// else `name` itself (a revision's own name; `default` for the default
/// revision, unless a `default` tag moved it).
pub fn resolve<'a>(name: &'a str, tags: &'a BTreeMap<String, String>) -> &'a str {
    tags.get(name).map_or(name, String::as_str)
}

/// `flags` with a `revision` that is a tag of `cluster` replaced by the
/// revision it points at: the proxy talks to that revision's istiod.
pub fn resolve_flags<'a>(
    flags: &'a Map<String, Value>,
    cluster: &ClusterContext,
) -> Cow<'a, Map<String, Value>> {
    let Some(asked) = flags.get("revision").and_then(Value::as_str) else {
        return Cow::Borrowed(flags);
    };
    let tags = tags(cluster);
    match tags.get(asked.trim()) {
        Some(revision) => {
            let mut resolved = flags.clone();
            resolved.insert("revision".into(), Value::String(revision.clone()));
            Cow::Owned(resolved)
        }
        None => Cow::Borrowed(flags),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tag_is_read_from_its_webhook_configurations_labels() {
        let mut cluster = ClusterContext::default();
        let tag = json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": "istio-revision-tag-prod",
                "labels": {"istio.io/tag": "prod", "istio.io/rev": "1-28"}},
        });
        let plain = json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": "istio-sidecar-injector", "labels": {"istio.io/rev": "default"}},
        });
        cluster.add(&tag, "default");
        cluster.add(&plain, "default");
        let tags = tags(&cluster);
        assert_eq!(tags.len(), 1);
        assert_eq!(resolve("prod", &tags), "1-28");
        assert_eq!(resolve("1-28", &tags), "1-28");
        assert_eq!(resolve("default", &tags), "default");
    }
}

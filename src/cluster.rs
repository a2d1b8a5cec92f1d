//! What the tool knows of the target cluster: its Kubernetes version and the
//! policy objects (LimitRange, ResourceQuota, PodSecurityPolicy, Namespace) and
//! ConfigMaps found in the input or in `--context` files.

use std::fmt;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::json::Field;

/// A Kubernetes minor version, e.g. 1.29.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct KubeVersion {
    pub major: u32,
    pub minor: u32,
}

impl KubeVersion {
    /// The default target: a current release.
    pub const CURRENT: KubeVersion = KubeVersion {
        major: 1,
        minor: 37,
    };

    /// The highest minor accepted: releases newer than the tool knows are
    /// taken (as behaving like the newest it knows), typos like 1.290 are not.
    pub const MAX_MINOR: u32 = 99;

    pub const fn new(major: u32, minor: u32) -> Self {
        KubeVersion { major, minor }
    }

    /// Native sidecars are on by default (the SidecarContainers gate is beta).
    pub fn has_native_sidecars(self) -> bool {
        self >= KubeVersion::new(1, 29)
    }

    /// The preStop `sleep` action is on by default.
    pub fn has_sleep_action(self) -> bool {
        self >= KubeVersion::new(1, 30)
    }

    /// Pod Security admission is on (beta and on by default from 1.23).
    pub fn has_pod_security(self) -> bool {
        self >= KubeVersion::new(1, 23)
    }

    /// PodSecurityPolicy still exists (removed in 1.25).
    pub fn has_pod_security_policy(self) -> bool {
        self <= KubeVersion::new(1, 24)
    }

    /// Mutating webhooks can be called again after later ones changed the
    /// object (`reinvocationPolicy`, from 1.15).
    pub fn reinvokes_webhooks(self) -> bool {
        self >= KubeVersion::new(1, 15)
    }

    /// The startup probe is on (alpha and off in 1.16 and 1.17).
    pub fn has_startup_probes(self) -> bool {
        self >= KubeVersion::new(1, 18)
    }

    /// The `seccompProfile` field exists; before 1.19 only annotations set seccomp.
    pub fn has_seccomp_profile_field(self) -> bool {
        self >= KubeVersion::new(1, 19)
    }

    /// The apiserver's RFC 1123 messages say "a lowercase RFC 1123" (from
    /// 1.20, kubernetes PR 94182), "a DNS-1123" before.
    pub fn words_lowercase_rfc1123(self) -> bool {
        self >= KubeVersion::new(1, 20)
    }

    /// Service account tokens are projected into a `kube-api-access-*`
    /// volume (BoundServiceAccountTokenVolume, on from 1.21).
    pub fn projects_service_account_tokens(self) -> bool {
        self >= KubeVersion::new(1, 21)
    }

    /// Every namespace carries its `kubernetes.io/metadata.name` label (from 1.21).
    pub fn labels_namespaces_by_name(self) -> bool {
        self >= KubeVersion::new(1, 21)
    }

    /// The API knows an init container's `restartPolicy` (1.28, where native
    /// sidecars are alpha and off); from then LimitRanger counts a pod's
    /// sidecars in its totals, probes on a plain init container are
    /// forbidden, and a pod template's host ports are not defaulted.
    pub fn knows_container_restart_policy(self) -> bool {
        self >= KubeVersion::new(1, 28)
    }

    /// The API knows the `sleep` lifecycle action (alpha and off in 1.29,
    /// on from 1.30: see [`KubeVersion::has_sleep_action`]).
    pub fn knows_sleep_action(self) -> bool {
        self >= KubeVersion::new(1, 29)
    }

    /// The API knows pod-level `resources` (alpha and off in 1.32 and 1.33).
    pub fn knows_pod_level_resources(self) -> bool {
        self >= KubeVersion::new(1, 32)
    }

    /// Pod-level `resources` are on (beta from 1.34): before, the apiserver
    /// drops the field.
    pub fn has_pod_level_resources(self) -> bool {
        self >= KubeVersion::new(1, 34)
    }

    /// The only release where a zero-second `sleep` is behind its own gate
    /// (alpha and off), which the refusal names.
    pub fn gates_zero_sleep(self) -> bool {
        self == KubeVersion::new(1, 32)
    }

    /// `procMount` is on (ProcMountType beta and on from 1.33; before, the
    /// apiserver resets it).
    pub fn has_proc_mount_type(self) -> bool {
        self >= KubeVersion::new(1, 33)
    }

    /// PodSecurityPolicy's refusals carry the `PodSecurityPolicy: ` prefix
    /// and name their phase (1.20 does, 1.17 does not; 1.19 is taken as the
    /// first).
    pub fn words_psp_refusals_by_phase(self) -> bool {
        self >= KubeVersion::new(1, 19)
    }

    /// A zero-second `sleep` action is allowed (from 1.33).
    pub fn allows_zero_sleep(self) -> bool {
        self >= KubeVersion::new(1, 33)
    }

    /// A port name given twice in a pod draws a warning (from 1.33).
    pub fn warns_duplicate_port_names(self) -> bool {
        self >= KubeVersion::new(1, 33)
    }
}

impl std::str::FromStr for KubeVersion {
    type Err = String;

    /// Accepts `1.29`, `v1.29` and `1.29.3`. Kubernetes has only 1.x
    /// releases: another major is refused, and so is a minor of more than
    /// two digits (`1.290` is a typo, not a release); a minor past the newest
    /// this tool knows is taken as it comes (a newer cluster than the tool).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let trimmed = text.trim_start_matches('v');
        let mut parts = trimmed.split('.');
        let number = |part: Option<&str>| part.and_then(|p| p.parse::<u32>().ok());
        match (number(parts.next()), number(parts.next())) {
            (Some(1), Some(minor)) if minor <= KubeVersion::MAX_MINOR => {
                Ok(KubeVersion { major: 1, minor })
            }
            (Some(1), Some(_)) => Err(format!(
                "{text} is not a Kubernetes version: minors have at most two digits \
                 (the newest this tool knows is {})",
                KubeVersion::CURRENT
            )),
            (Some(_), Some(_)) => Err(format!(
                "{text} is not a Kubernetes version: every release is 1.x \
                 (the newest this tool knows is {})",
                KubeVersion::CURRENT
            )),
            _ => Err(format!(
                "expected a Kubernetes version like 1.29, got {text:?}"
            )),
        }
    }
}

impl fmt::Display for KubeVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// A value a profile reads from a key of an object in the input or context
/// (its `valuesFromObjects`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValueFromObject {
    pub value: String,
    pub kind: String,
    /// Templated (may use `{{values.…}}`).
    pub namespace: String,
    pub name: String,
    /// Key under `data`.
    pub key: String,
    /// Where the value stands in the mapping the key holds (dot-separated
    /// keys, `proxy.image.version`), for a key that holds a whole document.
    pub path: Option<String>,
    /// The profile's word for each word the object writes (`true` →
    /// `first`); a word not listed is refused when the run starts.
    #[serde(default)]
    pub map: Map<String, Value>,
    /// Written after a number read (`s`: seconds as a duration, `60s`).
    #[serde(default)]
    pub suffix: Option<String>,
}

impl ValueFromObject {
    /// What the profile's value is for `raw`, as read from the object:
    /// mapped to the profile's word, a number given its unit. `Err` with
    /// the words allowed when the map has none for it.
    pub fn reading(&self, raw: String) -> Result<String, String> {
        let raw = match &self.suffix {
            Some(unit) if raw.parse::<f64>().is_ok() => format!("{raw}{unit}"),
            _ => raw,
        };
        if self.map.is_empty() {
            return Ok(raw);
        }
        match self.map.get(&raw) {
            Some(Value::String(word)) => Ok(word.clone()),
            Some(other) => Ok(other.to_string()),
            None => {
                let words: Vec<&str> = self.map.keys().map(String::as_str).collect();
                Err(format!("{raw:?} is not one of {}", words.join(", ")))
            }
        }
    }
}

/// The kind that declares what a mutating webhook does, for `admit`
/// (the tool's own kind: see `admission::webhook`).
pub const EMULATION_KIND: &str = "WebhookEmulation";

/// The kinds the context keeps: the namespaces' policies, and the mutating
/// webhooks with what they are declared to do (for `admit`).
const POLICY_KINDS: [&str; 6] = [
    "LimitRange",
    "ResourceQuota",
    "PodSecurityPolicy",
    "Namespace",
    "MutatingWebhookConfiguration",
    EMULATION_KIND,
];

/// Kinds without a namespace.
const CLUSTER_KINDS: [&str; 4] = [
    "PodSecurityPolicy",
    "Namespace",
    "MutatingWebhookConfiguration",
    EMULATION_KIND,
];

#[derive(Debug, Clone)]
struct ContextObject {
    kind: String,
    namespace: String,
    name: String,
    value: Value,
    /// The `data` entries that hold a YAML (or JSON) mapping, read once
    /// (Linkerd's `linkerd-config` keeps its Helm values under `values`).
    documents: Map<String, Value>,
}

/// The entries of an object's `data` whose text reads as a mapping.
fn data_documents(object: &Value) -> Map<String, Value> {
    let Some(Value::Object(data)) = object.field("data") else {
        return Map::new();
    };
    data.iter()
        .filter_map(|(key, text)| {
            let documents = crate::yaml::parse_stream(text.as_str()?).ok()?;
            let root = documents.first()?.root.as_ref()?;
            let value = crate::yaml::value::to_value(root).ok()?;
            value.is_object().then(|| (key.clone(), value))
        })
        .collect()
}

/// Why the text of a ConfigMap's data entry does not read as the mapping
/// a profile reads from it: the message, and the byte offset in the text
/// where reading stopped.
pub fn unreadable_document(text: &str) -> Option<(String, usize)> {
    let documents = match crate::yaml::parse_stream(text) {
        Ok(documents) => documents,
        Err(e) => return Some((e.message, e.offset)),
    };
    let root = documents.first().and_then(|d| d.root.as_ref())?;
    match crate::yaml::value::to_value(root) {
        Ok(Value::Object(_) | Value::Null) => None,
        Ok(_) => Some(("does not hold a mapping".to_string(), root.start)),
        Err(e) => Some((e.message, e.offset)),
    }
}

/// Policy objects and ConfigMaps, by namespace.
#[derive(Debug, Clone, Default)]
pub struct ClusterContext {
    objects: Vec<ContextObject>,
    /// ConfigMaps are kept only when a profile reads one of these names
    /// (a name ending in `*` stands for every name it begins).
    config_maps: Vec<String>,
    /// The ConfigMap data entries a profile reads as YAML documents (name,
    /// key): one that does not read stops the run.
    documents_read: Vec<(String, String)>,
    /// Whether the run was given a context (`--context`), rather than
    /// only what the input holds.
    context_given: bool,
}

impl ClusterContext {
    /// A context that keeps ConfigMaps with one of `config_maps` as name.
    pub fn new(config_maps: Vec<String>) -> Self {
        ClusterContext {
            objects: Vec::new(),
            config_maps,
            documents_read: Vec::new(),
            context_given: false,
        }
    }

    /// This context, as one the run was given with `--context` (`given`).
    pub fn given(mut self, given: bool) -> Self {
        self.context_given = given;
        self
    }

    /// Whether the run was given a context (`--context`).
    pub fn context_given(&self) -> bool {
        self.context_given
    }

    /// This context, where the data entries `documents` (ConfigMap name,
    /// key) must read as YAML mappings.
    pub fn reading_documents(mut self, documents: Vec<(String, String)>) -> Self {
        self.documents_read = documents;
        self
    }

    /// The keys of the ConfigMap `name`'s data that must read as mappings.
    pub fn documents_of(&self, name: &str) -> impl Iterator<Item = &str> {
        self.documents_read
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, key)| key.as_str())
    }

    /// Whether an object of `kind` named `name` belongs in the context.
    pub fn wants(&self, kind: &str, name: &str) -> bool {
        POLICY_KINDS.contains(&kind)
            || (kind == "ConfigMap"
                && self.config_maps.iter().any(|n| match n.strip_suffix('*') {
                    Some(prefix) => name.starts_with(prefix),
                    None => n == name,
                }))
    }

    /// Keep `object` if it is context; objects without a namespace belong to
    /// `default_namespace`, as `kubectl apply -n` would place them.
    pub fn add(&mut self, object: &Value, default_namespace: &str) {
        let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_string();
        let kind = text(object.field("kind"));
        let metadata = object.field("metadata");
        let name = text(metadata.and_then(|m| m.field("name")));
        if !self.wants(&kind, &name) {
            return;
        }
        let namespace = if CLUSTER_KINDS.contains(&kind.as_str()) {
            String::new()
        } else {
            Some(text(metadata.and_then(|m| m.field("namespace"))))
                .filter(|ns| !ns.is_empty())
                .unwrap_or_else(|| default_namespace.to_string())
        };
        // One name is one object: a later definition replaces an earlier one.
        self.objects
            .retain(|o| !(o.kind == kind && o.namespace == namespace && o.name == name));
        let documents = if kind == "ConfigMap" {
            data_documents(object)
        } else {
            Map::new()
        };
        self.objects.push(ContextObject {
            kind,
            namespace,
            name,
            value: object.clone(),
            documents,
        });
        self.objects.sort_by(|a, b| {
            (&a.kind, &a.namespace, &a.name).cmp(&(&b.kind, &b.namespace, &b.name))
        });
    }

    /// Objects of `kind` in `namespace` (`""` for cluster-scoped kinds), sorted by name:
    /// the apiserver's order is unspecified, this one is deterministic.
    pub fn objects(&self, kind: &str, namespace: &str) -> Vec<&Value> {
        self.objects
            .iter()
            .filter(|o| o.kind == kind && o.namespace == namespace)
            .map(|o| &o.value)
            .collect()
    }

    /// Whether an admission plugin has something to act on in `namespace`:
    /// a LimitRange, a ResourceQuota, Pod Security labels, or (up to 1.24) a
    /// PodSecurityPolicy.
    pub fn has_policies(&self, namespace: &str, version: KubeVersion) -> bool {
        let pod_security = self.namespace_labels(namespace).is_some_and(|labels| {
            labels
                .keys()
                .any(|k| k.starts_with("pod-security.kubernetes.io/"))
        });
        pod_security
            || self.objects.iter().any(|o| match o.kind.as_str() {
                "LimitRange" | "ResourceQuota" => o.namespace == namespace,
                "PodSecurityPolicy" => version.has_pod_security_policy(),
                _ => false,
            })
    }

    /// Every object of `kind`, whatever its namespace.
    pub fn all_of_kind(&self, kind: &str) -> Vec<&Value> {
        self.objects
            .iter()
            .filter(|o| o.kind == kind)
            .map(|o| &o.value)
            .collect()
    }

    /// Whether the context holds an object of `kind` named `name`, in any namespace.
    pub fn holds(&self, kind: &str, name: &str) -> bool {
        self.objects
            .iter()
            .any(|o| o.kind == kind && o.name == name)
    }

    /// The labels of a Namespace object, when the context has it.
    pub fn namespace_labels(&self, namespace: &str) -> Option<&Map<String, Value>> {
        self.objects
            .iter()
            .find(|o| o.kind == "Namespace" && o.name == namespace)
            .and_then(|o| o.value.field("metadata")?.field("labels")?.as_object())
    }

    /// Whether the context has the Namespace object `namespace`.
    pub fn has_namespace(&self, namespace: &str) -> bool {
        self.objects
            .iter()
            .any(|o| o.kind == "Namespace" && o.name == namespace)
    }

    /// The annotations of a Namespace object, when the context has it.
    pub fn namespace_annotations(&self, namespace: &str) -> Option<&Map<String, Value>> {
        self.objects
            .iter()
            .find(|o| o.kind == "Namespace" && o.name == namespace)
            .and_then(|o| o.value.field("metadata")?.field("annotations")?.as_object())
    }

    /// The `data` of the ConfigMap `namespace/name`, when the context has it.
    pub fn config_map_data(&self, namespace: &str, name: &str) -> Option<&Map<String, Value>> {
        self.objects
            .iter()
            .find(|o| o.kind == "ConfigMap" && o.namespace == namespace && o.name == name)
            .and_then(|o| o.value.field("data")?.as_object())
    }

    /// `data[key]` of the ConfigMap `namespace/name` as the mapping it holds,
    /// read once when the ConfigMap was added; `None` when there is no such
    /// entry or it does not read as a mapping.
    pub fn config_map_document(&self, namespace: &str, name: &str, key: &str) -> Option<&Value> {
        self.objects
            .iter()
            .find(|o| o.kind == "ConfigMap" && o.namespace == namespace && o.name == name)
            .and_then(|o| o.documents.get(key))
    }

    /// Whether the context has a ConfigMap whose name begins with `prefix`.
    pub fn has_config_map_named(&self, prefix: &str) -> bool {
        self.objects
            .iter()
            .any(|o| o.kind == "ConfigMap" && o.name.starts_with(prefix))
    }

    /// `data[key]` of an object; with a `path` (dot-separated keys), the
    /// scalar at that path of the mapping `data[key]` holds, written as a
    /// string (a mapping as JSON). Empty strings, mappings and nulls are
    /// nothing. `None` when there is no such object at all.
    pub fn data_value(
        &self,
        kind: &str,
        namespace: &str,
        name: &str,
        key: &str,
        path: Option<&str>,
    ) -> Option<Option<String>> {
        let object = self
            .objects
            .iter()
            .find(|o| o.kind == kind && o.namespace == namespace && o.name == name)?;
        Some(Self::value_in(object, key, path))
    }

    /// The value a profile's `source` reads from the object it names in
    /// `namespace` (see [`ClusterContext::data_value`]).
    pub fn source_value(
        &self,
        source: &ValueFromObject,
        namespace: &str,
    ) -> Option<Option<String>> {
        self.data_value(
            &source.kind,
            namespace,
            &source.name,
            &source.key,
            source.path.as_deref(),
        )
    }

    /// What [`ClusterContext::data_value`] reads of an object it found.
    fn value_in(object: &ContextObject, key: &str, path: Option<&str>) -> Option<String> {
        let Some(path) = path else {
            return object
                .value
                .field("data")?
                .get(key)?
                .as_str()
                .map(str::to_string);
        };
        let found = path
            .split('.')
            .try_fold(object.documents.get(key)?, |at, step| at.field(step))?;
        document_text(found)
    }
}

/// A value found in a document (a ConfigMap entry's, a chart's values) as
/// the text a profile value reads; `None` for an empty one.
pub(crate) fn document_text(found: &Value) -> Option<String> {
    match found {
        Value::String(text) if !text.is_empty() => Some(text.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        // A mapping (the proxy's params) or a list (its additional env),
        // as JSON for the value to read.
        Value::Object(map) if !map.is_empty() => Some(found.to_string()),
        Value::Array(items) if !items.is_empty() => Some(found.to_string()),
        _ => None,
    }
}

/// The namespace `given`, else `default`.
pub fn namespace_or_default(given: Option<&str>) -> &str {
    given.unwrap_or("default")
}

/// The sample trust roots of `testdata/cluster/` (Linkerd's trust-roots
/// ConfigMap), as `--context` reads them: the unit tests that inject with
/// Linkerd's profile run with them, as a user does.
#[cfg(test)]
pub(crate) fn sample_trust_roots() -> crate::source::Source {
    crate::source::Source::new(
        Some("testdata/cluster/linkerd-trust-roots.yaml".into()),
        include_str!("../testdata/cluster/linkerd-trust-roots.yaml").to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn versions_parse_and_compare() {
        let v: KubeVersion = "v1.28.3".parse().expect("parses");
        assert_eq!(v, KubeVersion::new(1, 28));
        assert!(!v.has_native_sidecars());
        assert!(
            "1.29"
                .parse::<KubeVersion>()
                .expect("parses")
                .has_native_sidecars()
        );
        assert!(
            "1.24"
                .parse::<KubeVersion>()
                .expect("parses")
                .has_pod_security_policy()
        );
        assert!("latest".parse::<KubeVersion>().is_err());
        assert_eq!("1.99".parse(), Ok(KubeVersion::new(1, 99)));
        for refused in ["2.0", "0.9", "v2.1", "1.100", "1.290"] {
            assert!(refused.parse::<KubeVersion>().is_err(), "{refused}");
        }
    }

    #[test]
    fn objects_are_kept_by_namespace_and_sorted() {
        let mut context = ClusterContext::new(vec!["roots".into()]);
        context.add(
            &json!({"kind": "LimitRange", "metadata": {"name": "b"}}),
            "shop",
        );
        context.add(
            &json!({"kind": "LimitRange", "metadata": {"name": "a", "namespace": "shop"}}),
            "default",
        );
        context.add(
            &json!({"kind": "ConfigMap", "metadata": {"name": "other"}}),
            "shop",
        );
        context.add(&json!({"kind": "ConfigMap", "metadata": {"name": "roots", "namespace": "l"}, "data": {"k": "v"}}), "x");
        context.add(
            &json!({"kind": "Namespace", "metadata": {"name": "shop", "labels": {"a": "b"}}}),
            "x",
        );
        let names: Vec<&str> = context
            .objects("LimitRange", "shop")
            .iter()
            .filter_map(|o| o["metadata"]["name"].as_str())
            .collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(
            context
                .data_value("ConfigMap", "l", "roots", "k", None)
                .flatten()
                .as_deref(),
            Some("v")
        );
        assert_eq!(
            context.data_value("ConfigMap", "l", "none", "k", None),
            None
        );
        assert!(context.objects("ConfigMap", "shop").is_empty());
        assert_eq!(
            context.namespace_labels("shop").and_then(|l| l.field("a")),
            Some(&json!("b"))
        );
    }
}

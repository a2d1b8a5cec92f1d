//! Profiles: what a mesh injects, as data.
//!
//! A profile names the proxy and init containers, volumes, the annotations and
//! labels that mark a pod as injected, the mesh's own per-workload annotations,
//! and the rules for leaving a pod alone. Two are embedded (`linkerd`, the
//! default, and `istio`); `--config FILE` loads another. Its `values` are the
//! knobs: per workload they come from the profile, then objects in the input
//! (such as the trust-anchor ConfigMap), then the mesh's annotations on the pod
//! template, then `--set` flags, each overriding the one before.
//!
//! Here: the profile's schema and loading. `values.rs`: a workload's values
//! by that precedence; `render.rs`: what they render for a workload;
//! `template.rs`: the placeholders; `check.rs`: the checks a profile passes
//! when it loads; `prepared.rs`: what a run reuses of its fillings and
//! renderings.

mod check;
mod defaults;
mod prepared;
mod render;
pub mod template;
mod values;

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::{ConfigError, Error};
use crate::json::Field;
use crate::mesh::Mesh;
use crate::mesh::istio::injector::ClusterInjector;
use crate::workload::WorkloadType;
use crate::yaml;

pub use check::check_typed;
pub use defaults::without_version;
pub use prepared::{Filled, Prepared};
pub use render::{
    NativeChoice, Position, Rendered, RenderedContainers, RenderedMetadata, SidecarSettings,
    WorkloadVars, merge,
};
pub use values::{NamedPort, ObjectValue};

pub use crate::cluster::ValueFromObject;

/// The embedded profiles, by name; the first is the default.
pub const EMBEDDED: [(&str, &str); 2] = [
    ("linkerd", include_str!("../../profiles/linkerd.yaml")),
    ("istio", include_str!("../../profiles/istio.yaml")),
];

/// A mesh's injection, as described by a profile file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Profile {
    pub name: String,
    /// The mesh whose injector this profile reproduces: the values that
    /// injector derives are added by its module (see [`crate::mesh`]).
    #[serde(default)]
    pub mesh: Mesh,
    /// Named settings the templates use.
    #[serde(default)]
    pub values: Map<String, Value>,
    /// Values a workload is not injected without, with the hint on how to
    /// supply one: a run that would inject with one empty stops, writing nothing.
    #[serde(default)]
    pub required: Map<String, Value>,
    /// The mesh's own pod-template annotations and the values they set.
    #[serde(default)]
    pub overrides: Vec<Override>,
    /// Values read from objects in the input or context (a ConfigMap key).
    #[serde(default)]
    pub values_from_objects: Vec<ValueFromObject>,
    /// What else the documents `values_from_objects` read may hold without
    /// a word: settings that never reach an injected pod.
    #[serde(default)]
    pub irrelevant_object_paths: Vec<IrrelevantPaths>,
    #[serde(default)]
    pub annotations: Map<String, Value>,
    #[serde(default)]
    pub labels: Map<String, Value>,
    /// Label naming the owning workload, e.g. `linkerd.io/proxy-{{workload.kind}}`.
    pub owner_label: Option<String>,
    pub disable_annotation: Option<KeyValue>,
    /// Where the mesh's webhook never injects.
    #[serde(default)]
    pub never_inject: NeverInject,
    /// Annotation the mesh's own injector leaves on a pod it injected.
    pub injection_marker: Option<String>,
    /// Annotations the mesh's own injector writes besides the profile's:
    /// removed with an injection that left no record of this tool's.
    #[serde(default)]
    pub mesh_annotations: Vec<String>,
    /// The mesh's injecting webhook, as `admit` recognises and runs it.
    pub injector_webhook: Option<InjectorWebhook>,
    #[serde(default)]
    pub foreign_sidecars: ForeignSidecars,
    /// Init containers that set up traffic capture, before the proxy.
    #[serde(default)]
    pub init_containers: Vec<Value>,
    /// Used instead of `initContainers` when `sidecar.cni` is true.
    #[serde(default)]
    pub cni_init_containers: Vec<Value>,
    pub proxy: Value,
    /// Containers added after the pod's own (Linkerd's debug container);
    /// one whose `$if` renders empty is left out.
    #[serde(default)]
    pub containers: Vec<Value>,
    /// Merged into the proxy when it runs as a native sidecar.
    #[serde(default)]
    pub native: Map<String, Value>,
    /// Merged into the proxy when it runs first as a classic sidecar
    /// (typically a post-start wait for its readiness).
    #[serde(default)]
    pub classic_first: Map<String, Value>,
    /// How the sidecar runs; templated like the rest.
    #[serde(default)]
    pub sidecar: Map<String, Value>,
    /// Resources to give injected containers that a ResourceQuota in context
    /// requires and nothing else set.
    #[serde(default)]
    pub quota_defaults: Map<String, Value>,
    /// Volumes; only those an injected container mounts are added.
    #[serde(default)]
    pub volumes: Vec<Value>,
    /// Custom resources with pod templates, beside the built-in kinds.
    #[serde(default)]
    pub workloads: Vec<WorkloadType>,
    /// The cluster's own injector configuration, when the input or context
    /// holds it (see [`Profile::configured_by`]): its templates render the
    /// mesh's containers instead of this profile's.
    #[serde(skip)]
    pub cluster_injector: Option<Arc<ClusterInjector>>,
    /// A Linkerd release's own control-plane chart (`--linkerd-chart`, or
    /// found in `--context`): its partials render the containers and
    /// volumes instead of this profile's.
    #[serde(skip)]
    pub linkerd_chart: Option<Arc<crate::mesh::linkerd::chart::LinkerdChart>>,
}

/// Where the mesh's webhook never injects: a workload there is skipped
/// with the reason.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NeverInject {
    /// Namespaces, which may use `{{values.NAME}}` (the control plane's).
    #[serde(default)]
    pub namespaces: Vec<String>,
    /// Labels that take a namespace out of the webhook's selector.
    #[serde(default)]
    pub namespace_labels: Map<String, Value>,
    /// Pod labels (keys) of the mesh's own components.
    #[serde(default)]
    pub pod_labels: Vec<String>,
}

/// The mesh's injecting webhook.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct InjectorWebhook {
    /// Its name in a MutatingWebhookConfiguration, or the end of it after a dot.
    pub name: String,
    /// The annotation, on the pod or its namespace, without which it leaves a
    /// pod alone (absent: its selectors decide alone).
    pub opt_in: Option<KeyValue>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyValue {
    pub key: String,
    pub value: String,
}

/// A pod-template annotation that overrides a value for one workload.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Override {
    pub annotation: String,
    pub value: String,
    /// Annotation values translated to the value's own words (`enabled` → `first`).
    #[serde(default)]
    pub map: Map<String, Value>,
    /// What the annotation must hold; a workload with another value is skipped.
    pub validate: Option<Validate>,
    /// Whether a Namespace's annotation of this name applies to its pods
    /// (the mesh's webhook copies only some).
    #[serde(default = "yes")]
    pub inherited: bool,
    /// How the annotation's value (a list) combines with the layers below
    /// it (the cluster's value, the namespace's annotation) instead of
    /// replacing them.
    pub merge: Option<Merge>,
    /// How a duration set for a workload (annotation or flag) is written
    /// for the proxy: Linkerd's injector rewrites it in whole units.
    pub convert: Option<Convert>,
}

/// A duration rewritten in whole units, truncated (`1.5s` → `1500ms`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Convert {
    Milliseconds,
    Seconds,
}

impl Convert {
    /// `duration` (as Go writes durations) in this unit, `None` when it is
    /// not a duration.
    pub fn apply(self, duration: &str) -> Option<String> {
        let seconds = crate::mesh::linkerd::go_duration_seconds(duration.trim())?;
        // A proxy cannot wait a negative time.
        if seconds < 0.0 {
            return None;
        }
        Some(match self {
            Convert::Milliseconds => format!("{}ms", (seconds * 1000.0) as i64),
            Convert::Seconds => format!("{}s", seconds as i64),
        })
    }
}

/// How a list set by an annotation combines with the list below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Merge {
    /// Entries replace those of the same `name` below; new ones are added
    /// after them (Linkerd's additional proxy env).
    ByName,
}

impl Merge {
    /// `upper` merged over `lower` (lists of named mappings).
    pub fn apply(self, lower: &Value, upper: &Value) -> Value {
        let (Value::Array(lower), Value::Array(upper)) = (lower, upper) else {
            return upper.clone();
        };
        let mut merged = lower.clone();
        for entry in upper {
            let name = entry.field("name");
            match merged
                .iter_mut()
                .find(|e| name.is_some() && e.field("name") == name)
            {
                Some(existing) => *existing = entry.clone(),
                None => merged.push(entry.clone()),
            }
        }
        Value::Array(merged)
    }
}

fn yes() -> bool {
    true
}

/// Checks for annotation values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Validate {
    /// Comma-separated ports and port ranges (`80,8000-8080`).
    Ports,
    /// The same, or `*` for all.
    PortsOrAll,
    /// Comma-separated IP ranges in CIDR form.
    Cidrs,
    /// The same, or `*` for all.
    CidrsOrAll,
    /// A duration as Go writes them (`90s`, `1m30s`).
    Duration,
    /// A Kubernetes quantity (`100m`, `1Gi`).
    Quantity,
    /// A number strictly between 0 and 1.
    Ratio,
    /// A whole number from 0 to 4294967295 (Go's uint32).
    Uint32,
}

impl Validate {
    fn check(self, raw: &str) -> Result<(), String> {
        let items = || raw.split(',').map(str::trim).filter(|i| !i.is_empty());
        let ports = || {
            items().all(|item| {
                let port = |p: &str| p.parse::<u16>().is_ok();
                match item.split_once('-') {
                    Some((a, b)) => port(a) && port(b),
                    None => port(item),
                }
            })
        };
        let cidrs = || {
            items().all(|item| match item.split_once('/') {
                Some((ip, bits)) => {
                    let max = if ip.contains(':') { 128 } else { 32 };
                    ip.parse::<std::net::IpAddr>().is_ok()
                        && bits.parse::<u8>().is_ok_and(|b| b <= max)
                }
                None => item.parse::<std::net::IpAddr>().is_ok(),
            })
        };
        let all = raw.trim() == "*";
        let valid = match self {
            Validate::Ports => ports(),
            Validate::PortsOrAll => all || ports(),
            Validate::Cidrs => cidrs(),
            Validate::CidrsOrAll => all || cidrs(),
            Validate::Duration => crate::mesh::linkerd::go_duration_seconds(raw.trim())
                .is_some_and(|seconds| seconds >= 0.0),
            Validate::Quantity => crate::admission::quantity::Quantity::parse(raw.trim()).is_some(),
            Validate::Ratio => raw.trim().parse::<f64>().is_ok_and(|r| r > 0.0 && r < 1.0),
            Validate::Uint32 => raw.parse::<u32>().is_ok(),
        };
        if valid {
            Ok(())
        } else {
            let what = match self {
                Validate::Ports | Validate::PortsOrAll => "a list of ports",
                Validate::Cidrs | Validate::CidrsOrAll => "a list of IP ranges",
                Validate::Duration => "a duration such as 90s or 1m30s, not negative",
                Validate::Quantity => "a quantity such as 100m or 1Gi",
                Validate::Ratio => "a number between 0 and 1",
                Validate::Uint32 => "a whole number of 0 or more",
            };
            Err(format!("{raw:?} is not {what}"))
        }
    }
}

/// Paths of a document that a profile's `valuesFromObjects` read from
/// (the ConfigMap `name`'s `key`) which never reach an injected pod: known,
/// so not warned about. A path stands for everything under it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IrrelevantPaths {
    pub name: String,
    pub key: String,
    pub paths: Vec<String>,
}

/// How another mesh's proxy is recognised.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ForeignSidecars {
    #[serde(default)]
    pub names: Vec<String>,
    #[serde(default)]
    pub image_prefixes: Vec<String>,
}

impl Profile {
    /// Parse a profile from YAML text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Self, Error> {
        let profile = Self::read(text, origin)?;
        profile
            .check_rendering()
            .map_err(|message| profile_error(origin, message))?;
        Ok(profile)
    }

    /// Read and check a profile, but not what it renders: embedded profiles'
    /// renderings are checked by the test suite
    /// (`embedded_profiles_render_valid_objects`), not at each run.
    fn read(text: &str, origin: &str) -> Result<Self, Error> {
        let config = |message: String| profile_error(origin, message);
        let docs = yaml::parse_stream(text)
            .map_err(|e| config(format!("line {}:{}: {}", e.line, e.column, e.message)))?;
        let root = docs
            .first()
            .and_then(|d| d.root.as_ref())
            .ok_or_else(|| config("the profile is empty".into()))?;
        let value = yaml::value::to_value(root).map_err(|e| config(e.message))?;
        let profile: Profile = serde_json::from_value(value).map_err(|e| config(e.to_string()))?;
        profile.check().map_err(config)?;
        Ok(profile)
    }

    /// An embedded profile by name.
    pub fn embedded(name: &str) -> Result<Self, Error> {
        let (_, text) = embedded_text(name)?;
        Self::read(text, &format!("embedded profile {name}"))
    }

    /// The default embedded profile.
    pub fn default_profile() -> Result<Self, Error> {
        Self::embedded(EMBEDDED[0].0)
    }

    /// The ConfigMaps a cluster context keeps for this profile: those it
    /// reads values from, and its mesh's injector configuration.
    /// The ConfigMap data entries the profile reads as YAML documents
    /// (name, key): those its `valuesFromObjects` read at a path.
    pub fn config_map_documents(&self) -> Vec<(String, String)> {
        let mut documents: Vec<(String, String)> = self
            .values_from_objects
            .iter()
            .filter(|v| v.kind == "ConfigMap" && v.path.is_some())
            .map(|v| (v.name.clone(), v.key.clone()))
            .collect();
        documents.sort();
        documents.dedup();
        documents
    }

    pub fn config_map_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .values_from_objects
            .iter()
            .map(|v| v.name.clone())
            .collect();
        if self.mesh == Mesh::Istio {
            names.push(crate::mesh::istio::injector::CONFIG_MAP_NAMES.to_string());
        }
        names
    }

    /// This profile as the cluster's own injector configuration sets it, when
    /// `cluster` holds one for the profile's mesh (Istio's
    /// `istio-sidecar-injector` ConfigMap of the profile's revision in its
    /// `istioNamespace`, `--set` taking precedence for both): its templates
    /// render the sidecar, and its chart values and mesh config replace the
    /// profile's values they correspond to (a pod's annotations and `--set`
    /// still override those). `None` when there is none.
    pub fn configured_by(
        &self,
        cluster: &crate::cluster::ClusterContext,
        flags: &Map<String, Value>,
    ) -> Result<Option<Profile>, Error> {
        if self.mesh != Mesh::Istio {
            return Ok(None);
        }
        let setting = |name: &str| {
            flags
                .get(name)
                .or_else(|| self.values.get(name))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let namespace = setting("istioNamespace");
        // A revision named by the flags, or by a profile file, is asked for.
        let asked = setting("revision");
        let asked = (flags.contains_key("revision") || !matches!(asked.as_str(), "" | "default"))
            .then_some(asked.as_str());
        let Some(revision) = ClusterInjector::choose_revision(cluster, &namespace, asked)
            .map_err(ConfigError::from)?
        else {
            return Ok(None);
        };
        let found =
            ClusterInjector::find(cluster, &namespace, &revision).map_err(ConfigError::from)?;
        let Some(injector) = found else {
            return Ok(None);
        };
        let mut profile = self.clone();
        profile
            .values
            .insert("revision".into(), Value::String(revision));
        for (name, value) in injector.profile_values() {
            if profile.values.contains_key(&name) {
                profile.values.insert(name, value);
            }
        }
        profile.cluster_injector = Some(Arc::new(injector));
        Ok(Some(profile))
    }

    /// The proxy's image with the profile's own values
    /// (`cr.l5d.io/linkerd/proxy:edge-26.5.2`).
    pub fn proxy_image(&self) -> Option<String> {
        let lookup = |name: &str| {
            name.strip_prefix("values.")
                .and_then(|v| self.values.get(v).cloned())
        };
        let image = template::render(self.proxy.field("image")?, &lookup).ok()?;
        image.as_str().map(str::to_string)
    }

    /// The name of the proxy's image, without registry, path or tag
    /// (`proxy`, `proxyv2`): how a mesh-injected proxy is recognised, whichever
    /// registry it came from.
    pub fn proxy_image_name(&self) -> Option<String> {
        self.proxy_image().as_deref().map(image_name)
    }

    /// The name of the profile's proxy container.
    pub fn proxy_name(&self) -> Option<&str> {
        self.proxy.field("name").and_then(Value::as_str)
    }

    /// Names of every container this profile may add.
    pub fn container_names(&self) -> impl Iterator<Item = &str> {
        self.init_containers
            .iter()
            .chain(&self.cni_init_containers)
            .chain(std::iter::once(&self.proxy))
            .chain(&self.containers)
            .filter_map(|c| c.field("name").and_then(Value::as_str))
    }

    pub fn volume_names(&self) -> impl Iterator<Item = &str> {
        self.volumes
            .iter()
            .filter_map(|v| v.field("name").and_then(Value::as_str))
    }

    /// The annotation and label keys the profile adds to a workload of `kind`
    /// (lower case), for removing an injection that left no record.
    pub fn marker_keys(&self, kind: &str) -> (Vec<String>, Vec<String>) {
        let annotations = self
            .annotations
            .keys()
            .chain(&self.mesh_annotations)
            .cloned()
            .collect();
        let mut labels: Vec<String> = self.labels.keys().cloned().collect();
        if let Some(owner) = &self.owner_label {
            let lookup = |name: &str| match name {
                "workload.kind" => Some(Value::String(kind.to_string())),
                _ => name
                    .strip_prefix("values.")
                    .and_then(|v| self.values.get(v).cloned()),
            };
            if let Ok(Value::String(key)) = template::render(&Value::String(owner.clone()), &lookup)
            {
                labels.push(key);
            }
        }
        (annotations, labels)
    }
}

/// An image reference's name: `cr.l5d.io/linkerd/proxy:v1` → `proxy`.
pub fn image_name(image: &str) -> String {
    let last = image.rsplit('/').next().unwrap_or(image);
    let last = last.split('@').next().unwrap_or(last);
    last.split(':').next().unwrap_or(last).to_string()
}

/// A profile that is not valid; `origin` names it.
fn profile_error(origin: &str, message: String) -> Error {
    ConfigError::Profile {
        origin: origin.to_string(),
        message,
    }
    .into()
}

/// The text of an embedded profile.
pub fn embedded_text(name: &str) -> Result<(&'static str, &'static str), Error> {
    EMBEDDED
        .iter()
        .copied()
        .find(|(n, _)| *n == name)
        .ok_or_else(|| {
            Error::from(ConfigError::NoEmbeddedProfile {
                name: name.to_string(),
                known: EMBEDDED.iter().map(|(n, _)| n.to_string()).collect(),
            })
        })
}

#[cfg(test)]
mod tests {
    use super::render::{answers, lookup};
    use super::*;

    #[test]
    fn a_releases_values_document_gives_the_profiles_defaults() {
        let profile = Profile::embedded("linkerd").unwrap();
        let document = serde_json::json!({"linkerdVersion": "edge-99.9.9",
            "proxy": {"image": {"version": ""}, "ports": {"admin": 5191}, "logLevel": "debug"},
            "identityTrustAnchorsPEM": ""});
        let with = profile.with_defaults_from(&document, "linkerd-config", "values");
        assert_eq!(with.values["proxyVersion"], "edge-99.9.9");
        assert_eq!(with.values["adminPort"], 5191);
        assert_eq!(with.values["logLevel"], "debug");
        // Empty in the document: the profile's own.
        assert_eq!(
            with.values["trustAnchorsPEM"],
            profile.values["trustAnchorsPEM"]
        );
        assert_eq!(with.values["inboundPort"], profile.values["inboundPort"]);
    }
    use serde_json::json;

    /// A run does not check what an embedded profile renders: this does.
    #[test]
    fn embedded_profiles_render_valid_objects() {
        for (name, _) in EMBEDDED {
            let profile = Profile::embedded(name).expect("embedded profile reads");
            profile
                .check_rendering()
                .unwrap_or_else(|e| panic!("embedded profile {name}: {e}"));
        }
    }

    /// The rendering cache compares answers in place: it must agree with
    /// the answers the templates get.
    #[test]
    fn answers_agree_with_lookup() {
        let vars = WorkloadVars {
            kind: "deployment".into(),
            name: "web".into(),
            namespace: "shop".into(),
            inbound_ports: "80,8080".into(),
            ports: "[\n    {\"containerPort\":80}\n]".into(),
            app_name: "web".into(),
            app_version: "v2".into(),
            app_containers: "app,log".into(),
            owner: "kubernetes://apis/apps/v1/namespaces/shop/deployments/web".into(),
            workload_name: "web".into(),
            service_account: "web".into(),
            otel_resource_attributes: "service.namespace=shop".into(),
        };
        let values = json!({"proxyImage": "proxy", "cni": false, "ports": [1, 2]});
        let Value::Object(values) = values else {
            unreachable!()
        };
        let names = [
            "values.proxyImage",
            "values.cni",
            "values.ports",
            "values.absent",
            "workload.kind",
            "workload.name",
            "workload.namespace",
            "pod.inboundPorts",
            "pod.ports",
            "pod.appName",
            "pod.appVersion",
            "pod.appContainers",
            "workload.owner",
            "pod.workloadName",
            "pod.serviceAccount",
            "pod.otelResourceAttributes",
            "no.such.name",
        ];
        let other = Value::String("other".into());
        for name in names {
            let got = lookup(&values, &vars, name);
            assert!(answers(&values, &vars, name, got.as_ref()), "{name}");
            assert!(!answers(&values, &vars, name, Some(&other)), "{name}");
        }
    }

    #[test]
    fn the_embedded_profiles_are_valid() {
        let linkerd = Profile::embedded("linkerd").expect("valid");
        let names: Vec<&str> = linkerd.container_names().collect();
        assert!(
            names.contains(&"linkerd-init") && names.contains(&"linkerd-proxy"),
            "{names:?}"
        );
        let istio = Profile::embedded("istio").expect("valid");
        assert!(istio.container_names().any(|n| n == "istio-proxy"));
        assert!(Profile::embedded("nope").is_err());
    }

    #[test]
    fn assignments_keep_types_and_reject_unknown_names() {
        let profile = Profile::default_profile().expect("valid");
        let none = Map::new();
        assert_eq!(
            profile
                .parse_assignment("proxyUID=1000", &none)
                .expect("number")
                .1,
            json!(1000)
        );
        assert_eq!(
            profile
                .parse_assignment("proxyVersion=2.14", &none)
                .expect("string")
                .1,
            json!("2.14")
        );
        assert!(profile.parse_assignment("proxyUID=abc", &none).is_err());
        let err = profile
            .parse_assignment("nope=1", &none)
            .expect_err("unknown")
            .to_string();
        assert!(err.contains("nope") && err.contains("proxyUID"), "{err}");
    }

    #[test]
    fn an_entry_of_a_mapping_value_is_set_by_its_path() {
        let profile = Profile::default_profile().expect("valid");
        let mut flags = Map::new();
        for assignment in [
            "proxyInboundParams.server.http2.keepAliveInterval=20s",
            "proxyInboundParams.server.http1.limit=3",
        ] {
            let (name, value) = profile.parse_assignment(assignment, &flags).expect("set");
            flags.insert(name, value);
        }
        assert_eq!(
            flags["proxyInboundParams"],
            json!({"server": {"http2": {"keepAliveInterval": "20s", "keepAliveTimeout": "3s"},
                "http1": {"limit": 3}}})
        );
        let (_, whole) = profile
            .parse_assignment(r#"proxyOutboundParams={"a": {"b": {"c": true}}}"#, &flags)
            .expect("JSON");
        assert_eq!(whole, json!({"a": {"b": {"c": true}}}));
        let (_, yaml) = profile
            .parse_assignment("proxyOutboundParams={a: {b: {c: x}}}", &flags)
            .expect("YAML");
        assert_eq!(yaml, json!({"a": {"b": {"c": "x"}}}));
        assert!(
            profile
                .parse_assignment("proxyOutboundParams=3", &flags)
                .is_err()
        );
    }

    #[test]
    fn precedence_is_flags_then_annotations_then_objects_then_profile() {
        let profile = Profile::default_profile().expect("valid");
        let annotations = json!({"config.linkerd.io/proxy-version": "from-annotation",
                                 "config.linkerd.io/proxy-log-level": "debug"});
        let mut flags = Map::new();
        flags.insert("proxyVersion".into(), json!("from-flag"));
        let from_objects = |source: &ValueFromObject, ns: &str| {
            (source.name == "linkerd-identity-trust-roots" && ns == "linkerd")
                .then(|| Some("PEM".to_string()))
        };
        let values = profile
            .values_for(annotations.as_object(), &flags, &from_objects)
            .expect("values");
        assert_eq!(values["proxyVersion"], json!("from-flag"));
        assert_eq!(values["logLevel"], json!("debug"));
        // As the proxy's env carries it: one final line break (Linkerd's rule).
        assert_eq!(values["trustAnchorsPEM"], json!("PEM\n"));
        // Linkerd keeps the default for a value it cannot use; Istio refuses.
        let bad = json!({"config.linkerd.io/proxy-uid": "root"});
        let kept = profile
            .values_for(bad.as_object(), &Map::new(), &|_, _| None)
            .expect("the default is kept");
        assert_eq!(kept["proxyUID"], profile.values["proxyUID"]);
        let istio = Profile::embedded("istio").expect("istio");
        let bad = json!({"traffic.sidecar.istio.io/excludeOutboundPorts": "many"});
        assert!(
            istio
                .values_for(bad.as_object(), &Map::new(), &|_, _| None)
                .is_err()
        );
    }

    #[test]
    fn a_pod_without_annotations_gets_its_own_named_ports() {
        // The filling of pods without annotations is found by the flags
        // alone, unless a port list names a port: each pod has its own.
        let profile = Profile::default_profile().expect("valid");
        let prepared = Prepared::default();
        let mut flags = Map::new();
        flags.insert("opaquePorts".into(), json!("db"));
        let filled = |port: u16| {
            prepared
                .for_workload(&profile, None, &flags, None, &|name| {
                    (name == "db").then_some(port)
                })
                .map(|(f, _)| f)
                .expect("values")
        };
        assert_eq!(filled(5432).values()["opaquePorts"], json!("5432"));
        assert_eq!(filled(3306).values()["opaquePorts"], json!("3306"));
        // Without a name, one filling for all.
        let plain = Map::new();
        let first = prepared
            .for_workload(&profile, None, &plain, None, &|_| Some(1))
            .expect("values");
        let second = prepared
            .for_workload(&profile, None, &plain, None, &|_| Some(2))
            .expect("values");
        assert!(Arc::ptr_eq(&first.0, &second.0));
    }

    #[test]
    fn workloads_with_the_same_annotation_values_share_one_filling() {
        let profile = Profile::default_profile().expect("valid");
        let prepared = Prepared::default();
        let flags = Map::new();
        let none = |_: &ValueFromObject, _: &str| None;
        let filled = |annotations: Value| {
            prepared
                .for_workload(
                    &profile,
                    annotations.as_object(),
                    &flags,
                    Some(&none),
                    &|_| None,
                )
                .map(|(f, _)| f)
        };
        let plain = filled(json!({"prometheus.io/scrape": "true"})).expect("values");
        let also_plain = filled(json!({})).expect("values");
        assert!(Arc::ptr_eq(&plain, &also_plain));
        // The profile's values, with what the mesh's rules derive from them.
        let mut expected = profile.values.clone();
        profile
            .mesh
            .complete(&mut expected, &crate::mesh::SetBy::NOTHING);
        assert_eq!(plain.values(), &expected);

        let debug = json!({"config.linkerd.io/proxy-log-level": "debug"});
        let verbose = filled(debug.clone()).expect("values");
        assert!(!Arc::ptr_eq(&plain, &verbose));
        assert_eq!(verbose.values()["logLevel"], json!("debug"));
        assert!(Arc::ptr_eq(&verbose, &filled(debug).expect("values")));
        // An annotation that sets a value to what the profile has already
        // leads to the same filling.
        let same = json!({"config.linkerd.io/proxy-log-level": profile.values["logLevel"]});
        assert!(Arc::ptr_eq(&plain, &filled(same).expect("values")));
        // A value Linkerd cannot use is ignored, with a warning.
        let (ignored, warnings) = prepared
            .for_workload(
                &profile,
                json!({"config.linkerd.io/proxy-uid": "root"}).as_object(),
                &flags,
                Some(&none),
                &|_| None,
            )
            .expect("values");
        assert!(Arc::ptr_eq(&plain, &ignored));
        assert_eq!(
            warnings,
            [
                "annotation config.linkerd.io/proxy-uid: expected a whole number of 0 or more, got \"root\": the default is used, as the mesh does"
            ]
        );
        // Other flags, or other objects in context, lead to another filling.
        let mut trace = Map::new();
        trace.insert("logLevel".into(), json!("trace"));
        let traced = prepared
            .for_workload(&profile, None, &trace, Some(&none), &|_| None)
            .map(|(f, _)| f)
            .expect("values");
        assert_eq!(traced.values()["logLevel"], json!("trace"));
        let roots = |source: &ValueFromObject, ns: &str| {
            (source.name == "linkerd-identity-trust-roots" && ns == "linkerd")
                .then(|| Some("PEM".to_string()))
        };
        // (Another cluster, another `Prepared`.)
        let anchored = Prepared::default()
            .for_workload(&profile, None, &flags, Some(&roots), &|_| None)
            .map(|(f, _)| f)
            .expect("values");
        assert_eq!(anchored.values()["trustAnchorsPEM"], json!("PEM\n"));
        assert!(!Arc::ptr_eq(&plain, &anchored));

        let vars = WorkloadVars {
            kind: "deployment".into(),
            name: "web".into(),
            namespace: "shop".into(),
            inbound_ports: "8080".into(),
            ports: String::new(),
            app_name: "web".into(),
            app_version: String::new(),
            app_containers: "app".into(),
            owner: "kubernetes://apis/apps/v1/namespaces/default/deployments/sample".into(),
            workload_name: "sample".into(),
            service_account: "default".into(),
            otel_resource_attributes: String::new(),
        };
        let rendered = plain.render(&vars).expect("rendered");
        let other_name = WorkloadVars {
            name: "api".into(),
            ..vars.clone()
        };
        let other_ports = WorkloadVars {
            inbound_ports: "9090".into(),
            ..vars.clone()
        };
        let other_namespace = WorkloadVars {
            namespace: "web-team".into(),
            ..vars.clone()
        };
        // The proxy does not read the workload's name or namespace; it reads
        // its ports. The pod's labels read its namespace.
        assert!(rendered.shares_containers(&plain.render(&other_name).expect("rendered")));
        let moved = plain.render(&other_namespace).expect("rendered");
        assert!(rendered.shares_containers(&moved));
        assert_eq!(
            moved.metadata.labels["linkerd.io/workload-ns"],
            json!("web-team")
        );
        assert!(!rendered.shares_containers(&plain.render(&other_ports).expect("rendered")));
        assert_eq!(
            rendered,
            profile.render(&profile.values, &vars).expect("rendered")
        );
    }

    #[test]
    fn unknown_fields_are_named() {
        let text = EMBEDDED[0].1.replace(
            "terminationMessagePolicy: FallbackToLogsOnError\n  volumeMounts",
            "terminationMesagePolicy: x\n  volumeMounts",
        );
        let err = Profile::parse(&text, "p.yaml")
            .expect_err("typo")
            .to_string();
        assert!(err.contains("terminationMesagePolicy"), "{err}");
        let err = Profile::parse("name: x\nproxy: {name: p}\nextra: 1\n", "p.yaml")
            .expect_err("unknown key")
            .to_string();
        assert!(err.contains("extra"), "{err}");
    }

    #[test]
    fn a_required_value_left_empty_is_said_with_its_hint_in_the_values_in_force() {
        let profile = Profile::default_profile().expect("valid");
        let mut values = profile.values.clone();
        values.insert("controlPlaneNamespace".into(), json!("l5d"));
        let missing = profile.missing_required(&values);
        assert_eq!(missing.len(), 1, "{missing:?}");
        assert!(
            missing[0].starts_with("value \"trustAnchorsPEM\" is empty: the proxy cannot start")
                && missing[0].contains("kubectl get configmap -n l5d linkerd-identity-trust-roots"),
            "{missing:?}"
        );
        values.insert("trustAnchorsPEM".into(), json!("PEM"));
        assert!(profile.missing_required(&values).is_empty());
        // A hint that cannot be rendered is refused as the profile loads.
        let text = EMBEDDED[0].1.replace(
            "-n {{values.controlPlaneNamespace}}",
            "-n {{values.controlPlaneNamspace}}",
        );
        let err = Profile::parse(&text, "p.yaml")
            .expect_err("unknown value in the hint")
            .to_string();
        assert!(
            err.contains("required value \"trustAnchorsPEM\": its hint"),
            "{err}"
        );
        // The Istio profile requires nothing.
        assert!(
            Profile::embedded("istio")
                .expect("valid")
                .required
                .is_empty()
        );
    }
}

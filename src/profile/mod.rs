//! Profiles: what a mesh injects, as data.
//!
//! A profile names the proxy and init containers, volumes, the annotations and
//! labels that mark a pod as injected, the mesh's own per-workload annotations,
//! and the rules for leaving a pod alone. Two are embedded (`linkerd`, the
//! default, and `istio`); `--config FILE` loads another. Its `values` are the
//! knobs: per workload they come from the profile, then objects in the input
//! (such as the trust-anchor ConfigMap), then the mesh's annotations on the pod
//! template, then `--set` flags, each overriding the one before.

mod prepared;
pub mod template;

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::Error;
use crate::json::Field;
use crate::mesh::Mesh;
use crate::mesh::istio::injector::ClusterInjector;
use crate::workload::WorkloadType;
use crate::yaml;

pub use prepared::{Filled, Prepared};

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

/// The annotation `key` of `annotations`: a pod has few, so comparing
/// keys costs less than hashing `key` for each of the profile's rules.
fn annotation<'a>(annotations: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if annotations.len() > 8 {
        return annotations.get(key);
    }
    annotations.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
}

/// The number of the pod's container port of a name, if it has one.
pub type NamedPort<'a> = dyn Fn(&str) -> Option<u16> + 'a;

/// A port (`80`) or a range of ports (`8000-8080`), lowest first.
fn is_port_or_range(item: &str) -> bool {
    let port = |p: &str| p.trim().parse::<u16>().ok();
    match item.split_once('-') {
        Some((low, high)) => port(low).zip(port(high)).is_some_and(|(l, h)| l <= h),
        None => port(item).is_some(),
    }
}

/// Reads a value from the cluster's objects: the source, and the namespace
/// it names (rendered).
/// `None` when there is no such object; `Some(None)` when the object is
/// there without the value.
pub type ObjectValue<'a> = dyn Fn(&ValueFromObject, &str) -> Option<Option<String>> + 'a;

/// A value read from a key of an object in the input or context.
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
}

/// What a placeholder name stands for, given the values and the workload;
/// `None` for a name templates may not use.
fn lookup(values: &Map<String, Value>, vars: &WorkloadVars, name: &str) -> Option<Value> {
    if let Some(value) = name.strip_prefix("values.") {
        return values.get(value).cloned();
    }
    Some(Value::String(match name {
        "workload.kind" => vars.kind.clone(),
        "workload.name" => vars.name.clone(),
        "workload.namespace" => vars.namespace.clone(),
        "pod.inboundPorts" => vars.inbound_ports.clone(),
        "pod.ports" => vars.ports.clone(),
        "pod.appName" => vars.app_name.clone(),
        "pod.appVersion" => vars.app_version.clone(),
        "pod.appContainers" => vars.app_containers.clone(),
        "workload.owner" => vars.owner.clone(),
        "pod.workloadName" => vars.workload_name.clone(),
        "pod.serviceAccount" => vars.service_account.clone(),
        "tool.version" => env!("CARGO_PKG_VERSION").to_string(),
        _ => return None,
    }))
}

/// Whether [`lookup`] gives `expected` for `name`, compared in place (the
/// rendering cache asks this of every workload).
fn answers(
    values: &Map<String, Value>,
    vars: &WorkloadVars,
    name: &str,
    expected: Option<&Value>,
) -> bool {
    if let Some(value) = name.strip_prefix("values.") {
        return values.get(value) == expected;
    }
    let var = match name {
        "workload.kind" => vars.kind.as_str(),
        "workload.name" => &vars.name,
        "workload.namespace" => &vars.namespace,
        "pod.inboundPorts" => &vars.inbound_ports,
        "pod.ports" => &vars.ports,
        "pod.appName" => &vars.app_name,
        "pod.appVersion" => &vars.app_version,
        "pod.appContainers" => &vars.app_containers,
        "workload.owner" => &vars.owner,
        "pod.workloadName" => &vars.workload_name,
        "pod.serviceAccount" => &vars.service_account,
        "tool.version" => env!("CARGO_PKG_VERSION"),
        _ => return expected.is_none(),
    };
    expected.and_then(Value::as_str) == Some(var)
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

/// What a workload brings to the templates.
#[derive(Debug, Clone, Default)]
pub struct WorkloadVars {
    /// Lower-case kind, e.g. `deployment`.
    pub kind: String,
    pub name: String,
    pub namespace: String,
    /// Comma-separated container ports of the pod, sorted.
    pub inbound_ports: String,
    /// The pod's container ports as the mesh's proxy reads them (Istio's
    /// `ISTIO_META_POD_PORTS` list; see [`Mesh::pod_ports`]).
    pub ports: String,
    /// The app's canonical name: `app.kubernetes.io/name`, `app`, or the workload name.
    pub app_name: String,
    /// `app.kubernetes.io/version`, `version`, or `latest`.
    pub app_version: String,
    /// Comma-separated names of the pod's own containers.
    pub app_containers: String,
    /// The workload as the mesh's proxy names its owner (Istio's
    /// `ISTIO_META_OWNER`); empty for the other meshes.
    pub owner: String,
    /// The workload's name as the mesh reads it (Istio: the pod's
    /// `service.istio.io/workload-name` label, else the workload's name).
    pub workload_name: String,
    /// The pod's service account (`default` when it names none).
    pub service_account: String,
}

/// Whether the proxy runs as a native sidecar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NativeChoice {
    /// Native where the target version has them on by default (1.29+).
    Auto,
    Always,
    Never,
}

/// Where a classic sidecar goes among the containers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// First, holding the app until the proxy is ready.
    First,
    Last,
}

/// The rendered `sidecar` section.
#[derive(Debug, Clone, PartialEq)]
pub struct SidecarSettings {
    pub native: NativeChoice,
    pub classic_position: Position,
    pub wait_before_exit_seconds: u64,
    /// Command that sleeps N seconds when given N; empty when the image has none.
    pub sleep_command: Vec<String>,
    pub cni: bool,
    /// Whether a native sidecar gets the wait too (Linkerd's does not: the
    /// kubelet stops it after the app containers anyway).
    pub wait_when_native: bool,
}

/// A profile's pieces rendered for one workload: the pod's metadata, and
/// the containers and volumes. Each is shared by every workload whose
/// answers to its templates are the same (the containers read no name or
/// namespace, only ports and the like; see [`Filled::render`]). Reads of
/// the containers go through to them (`rendered.proxy`).
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    pub metadata: Arc<RenderedMetadata>,
    shared: Arc<RenderedContainers>,
}

/// What a profile renders of the pod's metadata.
#[derive(Debug, PartialEq)]
pub struct RenderedMetadata {
    pub annotations: Map<String, Value>,
    /// The labels, less the owner label (see `pod_labels`).
    pub labels: Map<String, Value>,
    /// The key of the label naming the workload (`linkerd.io/proxy-deployment`).
    pub owner_label: Option<String>,
}

/// The containers and volumes a profile renders, and how they are placed.
#[derive(Debug, PartialEq)]
pub struct RenderedContainers {
    pub init_containers: Vec<Value>,
    pub proxy: Value,
    /// Containers added after the pod's own.
    pub containers: Vec<Value>,
    pub native: Map<String, Value>,
    pub classic_first: Map<String, Value>,
    pub sidecar: SidecarSettings,
    pub quota_defaults: Map<String, Value>,
    pub volumes: Vec<Value>,
    /// The mesh template's entries for the pod's own containers (by name):
    /// merged into them as the mesh's injector merges them, the pod's own
    /// fields winning (Istio's proxyless gRPC templates set the app's env).
    pub app_containers: Vec<Value>,
    /// The pod's other fields the mesh's template sets (Istio's gateway
    /// template, the pod's security context): merged into the pod's.
    pub pod_fields: Map<String, Value>,
    /// Rendered by the mesh's own template (the cluster's configuration),
    /// which placed the proxy itself (native or classic) and whose volumes
    /// are all added, mounted by the mesh's containers or not.
    pub by_mesh_template: bool,
}

impl std::ops::Deref for Rendered {
    type Target = RenderedContainers;

    fn deref(&self) -> &RenderedContainers {
        &self.shared
    }
}

impl Rendered {
    /// A rendering of these parts.
    pub fn new(metadata: RenderedMetadata, containers: RenderedContainers) -> Self {
        Rendered {
            metadata: Arc::new(metadata),
            shared: Arc::new(containers),
        }
    }

    /// Whether `other` shares this rendering's containers (rendered once for both).
    pub fn shares_containers(&self, other: &Rendered) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// The labels a workload named `workload` gets, the owner label among them.
    pub fn pod_labels(&self, workload: &str) -> Map<String, Value> {
        let mut labels = self.metadata.labels.clone();
        if let Some(key) = &self.metadata.owner_label {
            labels.insert(key.clone(), Value::String(workload.to_string()));
        }
        labels
    }
}

impl Profile {
    /// Parse a profile from YAML text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Self, Error> {
        let profile = Self::read(text, origin)?;
        profile
            .check_rendering()
            .map_err(|m| Error::Config(format!("{origin}: {m}")))?;
        Ok(profile)
    }

    /// Read and check a profile, but not what it renders: embedded profiles'
    /// renderings are checked by the test suite
    /// (`embedded_profiles_render_valid_objects`), not at each run.
    fn read(text: &str, origin: &str) -> Result<Self, Error> {
        let config = |m: String| Error::Config(format!("{origin}: {m}"));
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

    /// Read `NAME=VALUE` as a value override; the value takes the type of
    /// the default it replaces. `NAME.KEY.KEY=VALUE` sets one entry of a
    /// mapping value, over what `earlier` assignments set of it.
    pub fn parse_assignment(
        &self,
        assignment: &str,
        earlier: &Map<String, Value>,
    ) -> Result<(String, Value), Error> {
        let (name, raw) = assignment
            .split_once('=')
            .ok_or_else(|| Error::Usage(format!("--set expects NAME=VALUE, got {assignment:?}")))?;
        if let Some((top, path)) = name.split_once('.') {
            if let Some(Value::Object(_)) = self.values.get(top) {
                let mut value = earlier
                    .get(top)
                    .or_else(|| self.values.get(top))
                    .cloned()
                    .unwrap_or_default();
                set_at(&mut value, path, yaml::value::resolve_plain(raw));
                return Ok((top.to_string(), value));
            }
        }
        let Some(current) = self.values.get(name) else {
            let known: Vec<&str> = self.values.keys().map(String::as_str).collect();
            return Err(Error::Config(format!(
                "unknown value {name:?} in --set; the {} profile has: {}",
                self.name,
                known.join(", ")
            )));
        };
        // What the mesh's annotation could not hold is refused here too
        // (names in a port list are the pod's, resolved per workload).
        let checks = self.overrides.iter().filter(|rule| rule.value == name);
        for validate in checks.filter_map(|rule| rule.validate) {
            let resolved_later = validate == Validate::Ports && self.mesh.resolves_named_ports();
            if !raw.is_empty() && !resolved_later {
                validate
                    .check(raw)
                    .map_err(|e| Error::Config(format!("--set {name}: {e}")))?;
            }
        }
        self.mesh
            .check_value(name, raw)
            .map_err(|e| Error::Config(format!("--set {name}: {e}")))?;
        // A word the mesh's annotation could not give is refused here too
        // (an access log format the proxy cannot read).
        let words = self
            .overrides
            .iter()
            .filter(|rule| rule.value == name && current.is_string() && !rule.map.is_empty())
            .flat_map(|rule| {
                rule.map.values().map(|v| match v {
                    Value::String(word) => word.clone(),
                    other => other.to_string(),
                })
            });
        let mut words: Vec<String> = words.collect();
        words.sort();
        words.dedup();
        if !raw.is_empty() && !words.is_empty() && !words.iter().any(|w| w == raw) {
            return Err(Error::Config(format!(
                "--set {name}: {raw:?} is not one of {}",
                words.join(", ")
            )));
        }
        // A duration given for the workloads is written as the mesh writes
        // an annotation's (Linkerd: in whole milliseconds or seconds).
        let convert = self
            .overrides
            .iter()
            .find(|rule| rule.value == name)
            .and_then(|rule| rule.convert);
        let converted = match convert {
            Some(convert) => convert.apply(raw).ok_or_else(|| {
                Error::Config(format!(
                    "--set {name}: {raw:?} is not a duration such as 90s"
                ))
            })?,
            None => raw.to_string(),
        };
        let value = typed_like(current, &converted)
            .map_err(|e| Error::Config(format!("--set {name}: {e}")))?;
        Ok((name.to_string(), value))
    }

    /// The values for one workload: the profile's, then those read from
    /// objects, then the pod template's annotations, then `flags`.
    pub fn values_for(
        &self,
        pod_annotations: Option<&Map<String, Value>>,
        flags: &Map<String, Value>,
        object_value: &ObjectValue<'_>,
    ) -> Result<Map<String, Value>, String> {
        let from_annotations = self.annotation_values(pod_annotations, &mut Vec::new())?;
        let from_objects = self.object_values(&from_annotations, flags, object_value)?;
        Ok(self.values_with(&from_annotations, flags, &from_objects, &[]))
    }

    /// The pod annotations that record `flags` as the mesh's own command
    /// line records its settings, so that the mesh's controllers read what the
    /// proxy was given: each flag that differs from the profile's value and
    /// that an override annotation sets, under the first such annotation (in
    /// its own word where its values are mapped). Only for meshes that do so.
    pub fn recorded_flags(&self, flags: &Map<String, Value>) -> Map<String, Value> {
        let mut recorded = Map::new();
        if !self.mesh.records_settings() {
            return recorded;
        }
        for (name, value) in flags {
            if self.values.get(name) == Some(value) {
                continue;
            }
            let text = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let rule = self.overrides.iter().find(|rule| {
                rule.value == *name
                    && (rule.map.is_empty() || rule.map.values().any(|v| *v == text))
            });
            let Some(rule) = rule else { continue };
            let word = rule
                .map
                .iter()
                .find(|(_, v)| **v == text)
                .map_or(text.clone(), |(word, _)| word.clone());
            recorded.insert(rule.annotation.clone(), Value::String(word));
        }
        recorded
    }

    /// The values the pod template's annotations set, in the order of the
    /// profile's override rules.
    pub fn annotation_values(
        &self,
        pod_annotations: Option<&Map<String, Value>>,
        warnings: &mut Vec<String>,
    ) -> Result<Vec<(String, Value)>, String> {
        let mut set = Vec::new();
        for rule in &self.overrides {
            match self.annotation_value(rule, pod_annotations) {
                Ok(Some(value)) => set.push((rule.value.clone(), value)),
                Ok(None) => {}
                // Linkerd warns and keeps the default; Istio refuses the pod.
                Err(problem) if self.mesh.ignores_invalid_annotations() => {
                    warnings.push(format!("{problem}: the default is used, as the mesh does"));
                }
                Err(problem) => return Err(problem),
            }
        }
        Ok(set)
    }

    /// The value one override rule reads from the pod's annotations, if the
    /// annotation is there.
    fn annotation_value(
        &self,
        rule: &Override,
        pod_annotations: Option<&Map<String, Value>>,
    ) -> Result<Option<Value>, String> {
        {
            let Some(raw) = pod_annotations.and_then(|a| annotation(a, &rule.annotation)) else {
                return Ok(None);
            };
            let raw = match raw {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let mapped = match rule.map.get(&raw) {
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None if rule.map.is_empty() => raw.clone(),
                None => {
                    let allowed: Vec<&str> = rule.map.keys().map(String::as_str).collect();
                    return Err(format!(
                        "annotation {}: {raw:?} is not one of {}",
                        rule.annotation,
                        allowed.join(", ")
                    ));
                }
            };
            // Names in a port list are the pod's ports to such a mesh: they
            // are resolved, and the rest dropped, once the list is known.
            let resolved_later =
                rule.validate == Some(Validate::Ports) && self.mesh.resolves_named_ports();
            if let Some(validate) = rule.validate.filter(|_| !resolved_later) {
                validate
                    .check(&mapped)
                    .map_err(|e| format!("annotation {}: {e}", rule.annotation))?;
            }
            let mapped = match rule.convert {
                Some(convert) => convert.apply(&mapped).ok_or_else(|| {
                    format!(
                        "annotation {}: {mapped:?} is not a duration",
                        rule.annotation
                    )
                })?,
                None => mapped,
            };
            let current = self.values.get(&rule.value).unwrap_or(&Value::Null);
            let value = typed_like(current, &mapped)
                .map_err(|e| format!("annotation {}: {e}", rule.annotation))?;
            Ok(Some(value))
        }
    }

    /// What objects give for the values neither `from_annotations` nor
    /// `flags` set, each found with the values so far (a --set
    /// controlPlaneNamespace moves the ConfigMap too).
    fn object_values(
        &self,
        from_annotations: &[(String, Value)],
        flags: &Map<String, Value>,
        object_value: &ObjectValue<'_>,
    ) -> Result<Vec<(String, String)>, String> {
        let mut found: Vec<(String, String)> = Vec::new();
        // Objects known to be missing: (kind, name, namespace's index).
        let mut missing: Vec<(&String, &String, usize)> = Vec::new();
        // Sources mostly share one namespace template: rendered once each.
        let mut namespaces: Vec<(&str, String)> = Vec::new();
        for source in &self.values_from_objects {
            // A merged annotation goes over the cluster's value, not instead.
            let explicit = (!flags.is_empty() && flags.contains_key(&source.value))
                || (from_annotations
                    .iter()
                    .any(|(name, _)| *name == source.value)
                    && self.merge_of(&source.value).is_none());
            if explicit {
                continue;
            }
            // A value found so far may be the namespace's own: render anew then.
            let known = namespaces
                .iter()
                .position(|(template, _)| *template == source.namespace)
                .filter(|_| {
                    !found
                        .iter()
                        .any(|(n, _)| source.namespace.contains(n.as_str()))
                });
            let at = match known {
                Some(at) => at,
                None => {
                    // The latest setting of a value wins, as in `values_with`.
                    let lookup = |name: &str| {
                        let name = name.strip_prefix("values.")?;
                        let latest = |set: &[(String, Value)]| {
                            set.iter()
                                .rev()
                                .find(|(n, _)| n == name)
                                .map(|(_, v)| v.clone())
                        };
                        found
                            .iter()
                            .rev()
                            .find(|(n, _)| n == name)
                            .map(|(_, v)| Value::String(v.clone()))
                            .or_else(|| flags.get(name).cloned())
                            .or_else(|| latest(from_annotations))
                            .or_else(|| self.values.get(name).cloned())
                    };
                    let rendered =
                        template::render(&Value::String(source.namespace.clone()), &lookup)?;
                    let rendered = rendered.as_str().unwrap_or_default().to_string();
                    namespaces.push((&source.namespace, rendered));
                    namespaces.len() - 1
                }
            };
            // Sources mostly share one object: once it is known to be
            // missing, its other values are not looked for.
            let object = (&source.kind, &source.name, at);
            if missing.contains(&object) {
                continue;
            }
            let namespace = namespaces.get(at).map_or("", |(_, n)| n.as_str());
            match object_value(source, namespace) {
                Some(Some(value)) => found.push((source.value.clone(), value)),
                Some(None) => {}
                None => missing.push(object),
            }
        }
        Ok(found)
    }

    /// The port lists (values of `ports` overrides) whose text holds more
    /// than ports and ranges, for a mesh that reads names in them as the
    /// pod's named container ports (`named_port`): each with its names
    /// resolved, and what is neither a port, a range nor such a name left
    /// out with a warning. The text read is the one that wins in
    /// [`Profile::values_with`].
    fn resolved_port_lists(
        &self,
        from_annotations: &[(String, Value)],
        flags: &Map<String, Value>,
        from_objects: &[(String, String)],
        named_port: &NamedPort<'_>,
        warnings: &mut Vec<String>,
    ) -> Vec<(String, Value)> {
        if !self.mesh.resolves_named_ports() {
            return Vec::new();
        }
        let mut resolved = Vec::new();
        let lists = self
            .overrides
            .iter()
            .filter(|rule| rule.validate == Some(Validate::Ports));
        for rule in lists {
            let name = rule.value.as_str();
            if resolved.iter().any(|(n, _): &(String, Value)| n == name) {
                continue;
            }
            let annotated = from_annotations.iter().rev().find(|(n, _)| n == name);
            let text = match flags.get(name).or(annotated.map(|(_, v)| v)) {
                Some(Value::String(text)) => text.clone(),
                Some(other) => other.to_string(),
                None => match from_objects.iter().rev().find(|(n, _)| n == name) {
                    Some((_, text)) => text.clone(),
                    None => self.values.get(name).map_or(String::new(), |v| match v {
                        Value::String(text) => text.clone(),
                        other => other.to_string(),
                    }),
                },
            };
            let items: Vec<&str> = text
                .trim_end_matches(',')
                .split(',')
                .map(str::trim)
                .filter(|i| !i.is_empty())
                .collect();
            if items.iter().all(|item| is_port_or_range(item)) {
                continue;
            }
            let mut kept = Vec::new();
            for item in items {
                if is_port_or_range(item) {
                    kept.push(item.to_string());
                } else if let Some(port) = named_port(item) {
                    kept.push(port.to_string());
                } else {
                    warnings.push(format!(
                        "{name} ({}): {item:?} is neither a port, a port range nor the name of \
                         a container port of the pod; left out, as the mesh does",
                        rule.annotation
                    ));
                }
            }
            resolved.push((name.to_string(), Value::String(kept.join(","))));
        }
        resolved
    }

    /// The profile's values, with those set by annotations, then by
    /// `flags`, then read from objects over them, then the port lists
    /// with their names resolved.
    fn values_with(
        &self,
        from_annotations: &[(String, Value)],
        flags: &Map<String, Value>,
        from_objects: &[(String, String)],
        resolved: &[(String, Value)],
    ) -> Map<String, Value> {
        let mut values = self.values.clone();
        for (name, value) in from_annotations {
            if self.merge_of(name).is_none() {
                values.insert(name.clone(), value.clone());
            }
        }
        for (name, value) in from_objects {
            // Of the value's own type (a port is a number), as annotations are.
            let current = self.values.get(name).unwrap_or(&Value::Null);
            let typed = typed_like(current, value).unwrap_or_else(|_| Value::String(value.clone()));
            values.insert(name.clone(), typed);
        }
        for (name, value) in from_annotations {
            if let (Some(merge), Some(lower)) = (self.merge_of(name), values.get(name)) {
                let merged = merge.apply(lower, value);
                values.insert(name.clone(), merged);
            }
        }
        for (name, value) in flags {
            values.insert(name.clone(), value.clone());
        }
        for (name, value) in resolved {
            values.insert(name.clone(), value.clone());
        }
        let set = crate::mesh::SetBy {
            annotations: &|name: &str| from_annotations.iter().any(|(n, _)| n == name),
            flags: &|name: &str| flags.contains_key(name),
        };
        self.mesh.complete(&mut values, &set);
        values
    }

    /// How an annotation setting `value` merges, if it does.
    pub fn merge_of(&self, value: &str) -> Option<Merge> {
        self.overrides
            .iter()
            .find(|rule| rule.value == value && rule.merge.is_some())
            .and_then(|rule| rule.merge)
    }

    /// The required values still empty among `values`, each said with the
    /// profile's hint on how to supply it. The hint may use
    /// `{{values.NAME}}`, so that it names what is in force (the control
    /// plane's namespace); one that does not render is shown as written.
    pub fn missing_required(&self, values: &Map<String, Value>) -> Vec<String> {
        let lookup = |name: &str| {
            name.strip_prefix("values.")
                .and_then(|value| values.get(value).cloned())
        };
        self.required
            .iter()
            .filter(|(name, _)| {
                values
                    .get(*name)
                    .is_none_or(|v| v.is_null() || v.as_str().is_some_and(str::is_empty))
            })
            .map(|(name, hint)| {
                let hint = template::render(hint, &lookup)
                    .ok()
                    .filter(Value::is_string)
                    .unwrap_or_else(|| hint.clone());
                match hint.as_str().map(str::trim).filter(|h| !h.is_empty()) {
                    Some(hint) => format!("value {name:?} is empty: {hint}"),
                    None => format!("value {name:?} is empty"),
                }
            })
            .collect()
    }

    /// Render every piece for one workload with `values` (and what the
    /// mesh's rules derive from them).
    pub fn render(
        &self,
        values: &Map<String, Value>,
        vars: &WorkloadVars,
    ) -> Result<Rendered, String> {
        let mut values = values.clone();
        self.mesh
            .complete(&mut values, &crate::mesh::SetBy::NOTHING);
        self.render_with(&|name: &str| lookup(&values, vars, name))
    }

    /// The pieces rendered with `lookup` answering every placeholder.
    fn render_with(&self, lookup: &template::Lookup<'_>) -> Result<Rendered, String> {
        Ok(Rendered {
            metadata: Arc::new(self.render_metadata(lookup)?),
            shared: Arc::new(self.render_containers(lookup)?),
        })
    }

    /// The pod's annotations, labels and owner label (`workload.kind`
    /// decides whether there is one), with `lookup` answering.
    fn render_metadata(&self, lookup: &template::Lookup<'_>) -> Result<RenderedMetadata, String> {
        let map = |m: &Map<String, Value>| template::render_map(m, lookup);
        let strings = |m: Map<String, Value>| -> Map<String, Value> {
            m.into_iter()
                .map(|(k, v)| match v {
                    Value::String(_) => (k, v),
                    other => (k, Value::String(other.to_string())),
                })
                .collect()
        };
        let is_pod = lookup("workload.kind").is_some_and(|k| k == "pod");
        let owner_label = match &self.owner_label {
            Some(owner) if !is_pod => {
                match template::render(&Value::String(owner.clone()), lookup)? {
                    Value::String(key) => Some(key),
                    _ => None,
                }
            }
            _ => None,
        };
        Ok(RenderedMetadata {
            annotations: strings(map(&self.annotations)?),
            labels: strings(map(&self.labels)?),
            owner_label,
        })
    }

    /// The containers, volumes and placement settings, with `lookup` answering.
    fn render_containers(
        &self,
        lookup: &template::Lookup<'_>,
    ) -> Result<RenderedContainers, String> {
        let map = |m: &Map<String, Value>| template::render_map(m, lookup);
        let list = |items: &[Value]| template::render_list(items, lookup);
        let sidecar = SidecarSettings::read(&map(&self.sidecar)?)?;
        let init_containers = if sidecar.cni {
            list(&self.cni_init_containers)?
        } else {
            list(&self.init_containers)?
        };
        Ok(RenderedContainers {
            init_containers,
            proxy: template::render(&self.proxy, lookup)?,
            containers: list(&self.containers)?,
            native: map(&self.native)?,
            classic_first: map(&self.classic_first)?,
            sidecar,
            quota_defaults: map(&self.quota_defaults)?,
            volumes: list(&self.volumes)?,
            app_containers: Vec::new(),
            pod_fields: Map::new(),
            by_mesh_template: false,
        })
    }

    /// The ConfigMaps a cluster context keeps for this profile: those it
    /// reads values from, and its mesh's injector configuration.
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
        let found = ClusterInjector::find(cluster, &namespace, &setting("revision"))
            .map_err(Error::Config)?;
        let Some(injector) = found else {
            return Ok(None);
        };
        let mut profile = self.clone();
        for (name, value) in injector.profile_values() {
            if profile.values.contains_key(&name) {
                profile.values.insert(name, value);
            }
        }
        profile.cluster_injector = Some(Arc::new(injector));
        Ok(Some(profile))
    }

    /// This profile with every `{{values.…}}` filled from `values`, leaving
    /// the per-workload placeholders for [`Profile::render`]. Rendering many
    /// workloads with the same values starts from this once-filled copy.
    pub fn with_values(&self, values: &Map<String, Value>) -> Result<Profile, String> {
        // Per-workload names stand for themselves until `render` fills them.
        let lookup = |name: &str| -> Option<Value> {
            match name.strip_prefix("values.") {
                Some(value) => values.get(value).cloned(),
                None => Some(Value::String(format!("{{{{{name}}}}}"))),
            }
        };
        let map = |m: &Map<String, Value>| template::render_map(m, &lookup);
        let list = |items: &[Value]| template::render_list(items, &lookup);
        Ok(Profile {
            values: values.clone(),
            annotations: map(&self.annotations)?,
            labels: map(&self.labels)?,
            owner_label: match &self.owner_label {
                Some(owner) => template::render(&Value::String(owner.clone()), &lookup)?
                    .as_str()
                    .map(str::to_string),
                None => None,
            },
            init_containers: list(&self.init_containers)?,
            cni_init_containers: list(&self.cni_init_containers)?,
            proxy: template::render(&self.proxy, &lookup)?,
            containers: list(&self.containers)?,
            native: map(&self.native)?,
            classic_first: map(&self.classic_first)?,
            sidecar: map(&self.sidecar)?,
            quota_defaults: map(&self.quota_defaults)?,
            volumes: list(&self.volumes)?,
            ..self.clone()
        })
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

    /// Render for a sample workload and check every container and volume
    /// against the Kubernetes types, so mistakes surface before any input is read.
    fn check(&self) -> Result<(), String> {
        for rule in &self.overrides {
            if !self.values.contains_key(&rule.value) {
                return Err(format!(
                    "override {} sets unknown value {:?}",
                    rule.annotation, rule.value
                ));
            }
        }
        const SIDECAR_KEYS: [&str; 6] = [
            "nativeSidecar",
            "classicPosition",
            "waitBeforeExitSeconds",
            "sleepCommand",
            "cni",
            "waitWhenNative",
        ];
        if let Some(key) = self
            .sidecar
            .keys()
            .find(|k| !SIDECAR_KEYS.contains(&k.as_str()))
        {
            return Err(format!(
                "unknown field `sidecar.{key}`, expected one of {}",
                SIDECAR_KEYS.join(", ")
            ));
        }
        if let Some(key) = self
            .quota_defaults
            .keys()
            .find(|k| !["requests", "limits"].contains(&k.as_str()))
        {
            return Err(format!(
                "unknown field `quotaDefaults.{key}`, expected requests or limits"
            ));
        }
        // A hint is shown only when its value is missing: a mistake in it
        // surfaces here instead.
        let known = |name: &str| {
            name.strip_prefix("values.")
                .filter(|value| self.values.contains_key(*value))
                .map(|_| Value::String("x".into()))
        };
        for (name, hint) in &self.required {
            if !self.values.contains_key(name) {
                return Err(format!("required value {name:?} is not in values"));
            }
            if !hint.is_string() {
                return Err(format!("required value {name:?}: its hint is not a string"));
            }
            template::render(hint, &known)
                .map_err(|e| format!("required value {name:?}: its hint: {e}"))?;
        }
        if let Some(name) = self
            .mesh
            .derived_names()
            .iter()
            .find(|name| self.values.contains_key(**name))
        {
            return Err(format!(
                "value {name:?} is derived by the {:?} mesh's rules and cannot be declared (or set)",
                self.mesh
            ));
        }
        Ok(())
    }

    /// Render the profile for a sample workload and check that what it
    /// renders are valid containers and volumes.
    fn check_rendering(&self) -> Result<(), String> {
        let sample = WorkloadVars {
            kind: "deployment".into(),
            name: "sample".into(),
            namespace: "default".into(),
            inbound_ports: "8080".into(),
            ports: "[\n    {\"containerPort\":8080}\n]".into(),
            app_name: "sample".into(),
            app_version: "latest".into(),
            app_containers: "app".into(),
            owner: "kubernetes://apis/apps/v1/namespaces/default/deployments/sample".into(),
            workload_name: "sample".into(),
            service_account: "default".into(),
        };
        // Render with every value set, so that no field is left out of the
        // check: once as the profile is, once with every switch on (CNI mode,
        // optional containers and env).
        for all_on in [false, true] {
            let mut values = self.values.clone();
            for value in values.values_mut() {
                if value.as_str().is_some_and(str::is_empty) {
                    *value = Value::String("1".into());
                } else if all_on && value.is_boolean() {
                    *value = Value::Bool(true);
                }
            }
            let rendered = self.render(&values, &sample)?;
            let mut containers = rendered.init_containers.clone();
            let mut native = rendered.proxy.clone();
            merge(&mut native, &rendered.native);
            let mut classic = rendered.proxy.clone();
            merge(&mut classic, &rendered.classic_first);
            containers.extend([native, classic]);
            containers.extend(rendered.containers.iter().cloned());
            for container in &containers {
                check_typed::<k8s_openapi::api::core::v1::Container>(container, "container")?;
            }
            for volume in &rendered.volumes {
                check_typed::<k8s_openapi::api::core::v1::Volume>(volume, "volume")?;
            }
        }
        Ok(())
    }
}

/// An image reference's name: `cr.l5d.io/linkerd/proxy:v1` → `proxy`.
pub fn image_name(image: &str) -> String {
    let last = image.rsplit('/').next().unwrap_or(image);
    let last = last.split('@').next().unwrap_or(last);
    last.split(':').next().unwrap_or(last).to_string()
}

/// The text of an embedded profile.
pub fn embedded_text(name: &str) -> Result<(&'static str, &'static str), Error> {
    EMBEDDED
        .iter()
        .copied()
        .find(|(n, _)| *n == name)
        .ok_or_else(|| {
            let names: Vec<&str> = EMBEDDED.iter().map(|(n, _)| *n).collect();
            Error::Config(format!(
                "no embedded profile {name:?}; there are: {}",
                names.join(", ")
            ))
        })
}

/// Shallow-merge `fields` into the container `target`, nested maps merged key by key.
pub fn merge(target: &mut Value, fields: &Map<String, Value>) {
    let Value::Object(target) = target else {
        return;
    };
    for (k, v) in fields {
        match (target.get_mut(k), v) {
            (Some(Value::Object(existing)), Value::Object(new)) => {
                let mut existing_value = Value::Object(std::mem::take(existing));
                merge(&mut existing_value, new);
                target.insert(k.clone(), existing_value);
            }
            _ => {
                target.insert(k.clone(), v.clone());
            }
        }
    }
}

impl SidecarSettings {
    fn read(map: &Map<String, Value>) -> Result<Self, String> {
        let text = |key: &str| -> String {
            match map.get(key) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            }
        };
        let native = match text("nativeSidecar").as_str() {
            "" | "auto" => NativeChoice::Auto,
            "true" | "always" | "enabled" => NativeChoice::Always,
            "false" | "never" | "disabled" => NativeChoice::Never,
            other => {
                return Err(format!(
                    "nativeSidecar must be auto, true or false, not {other:?}"
                ));
            }
        };
        let classic_position = match text("classicPosition").as_str() {
            "" | "last" => Position::Last,
            "first" => Position::First,
            other => {
                return Err(format!(
                    "classicPosition must be first or last, not {other:?}"
                ));
            }
        };
        let wait = text("waitBeforeExitSeconds");
        let wait_before_exit_seconds = if wait.is_empty() {
            0
        } else {
            wait.parse::<u64>().map_err(|_| {
                format!("waitBeforeExitSeconds must be a whole number of seconds, not {wait:?}")
            })?
        };
        let sleep_command = match map.field("sleepCommand") {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            _ => Vec::new(),
        };
        let cni = matches!(text("cni").as_str(), "true" | "enabled");
        let wait_when_native = !matches!(text("waitWhenNative").as_str(), "false" | "disabled");
        Ok(SidecarSettings {
            native,
            classic_position,
            wait_before_exit_seconds,
            sleep_command,
            cni,
            wait_when_native,
        })
    }
}

/// Read `raw` as a value of the same type as `current`: a whole number stays
/// whole (and not negative, when the default is not), a boolean a boolean.
fn typed_like(current: &Value, raw: &str) -> Result<Value, String> {
    match current {
        Value::String(_) | Value::Null => Ok(Value::String(raw.to_string())),
        // Go's readings of a boolean, which the meshes' annotations take.
        Value::Bool(_) => match raw {
            "true" | "enabled" | "1" | "t" | "T" | "TRUE" | "True" => Ok(Value::Bool(true)),
            "false" | "disabled" | "0" | "f" | "F" | "FALSE" | "False" => Ok(Value::Bool(false)),
            _ => Err(format!("expected true or false, got {raw:?}")),
        },
        Value::Object(_) => mapping_from(raw),
        Value::Array(_) => list_from(raw),
        Value::Number(n) if n.is_u64() => raw
            .parse::<u64>()
            .map(Value::from)
            .map_err(|_| format!("expected a whole number of 0 or more, got {raw:?}")),
        Value::Number(n) if n.is_i64() => raw
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| format!("expected a whole number, got {raw:?}")),
        _ => match yaml::value::resolve_plain(raw) {
            number @ Value::Number(_) => Ok(number),
            _ => Err(format!("expected a number, got {raw:?}")),
        },
    }
}

/// A list of named mappings written as JSON or YAML
/// (`[{"name": "A", "value": "1"}]`), such as env vars.
fn list_from(raw: &str) -> Result<Value, String> {
    let parsed = serde_json::from_str::<Value>(raw).ok().or_else(|| {
        let documents = yaml::parse_stream(raw).ok()?;
        let root = documents.first()?.root.as_ref()?;
        yaml::value::to_value(root).ok()
    });
    // Each entry read as Kubernetes reads an env var: a name, a string
    // value or a valueFrom; other fields are dropped, a wrong type refuses
    // the list.
    let entry = |item: &Value| -> Option<Value> {
        let name = item
            .field("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())?;
        let mut kept = Map::new();
        kept.insert("name".into(), Value::String(name.into()));
        match item.field("value") {
            None | Some(Value::Null) => {}
            Some(value @ Value::String(_)) => {
                kept.insert("value".into(), value.clone());
            }
            Some(_) => return None,
        }
        match item.field("valueFrom") {
            None | Some(Value::Null) => {}
            Some(from @ Value::Object(_)) => {
                kept.insert("valueFrom".into(), from.clone());
            }
            Some(_) => return None,
        }
        Some(Value::Object(kept))
    };
    let entries = match parsed {
        Some(Value::Array(items)) => items.iter().map(entry).collect::<Option<Vec<Value>>>(),
        _ => None,
    };
    entries.map(Value::Array).ok_or_else(|| {
        format!(
            "expected a list of env vars (a name, and a string value or a valueFrom), got {raw:?}"
        )
    })
}

/// Set the entry at the dotted `path` of `value` to `leaf`, making
/// mappings on the way where there are none.
fn set_at(value: &mut Value, path: &str, leaf: Value) {
    if !value.is_object() {
        *value = Value::Object(Map::new());
    }
    let Value::Object(map) = value else {
        return;
    };
    match path.split_once('.') {
        Some((key, rest)) => {
            set_at(
                map.entry(key.to_string()).or_insert(Value::Null),
                rest,
                leaf,
            );
        }
        None => {
            map.insert(path.to_string(), leaf);
        }
    }
}

/// A mapping written as JSON or YAML (`{"server": {"http2": {...}}}`).
fn mapping_from(raw: &str) -> Result<Value, String> {
    let parsed = serde_json::from_str::<Value>(raw).ok().or_else(|| {
        let documents = yaml::parse_stream(raw).ok()?;
        let root = documents.first()?.root.as_ref()?;
        yaml::value::to_value(root).ok()
    });
    match parsed {
        Some(map @ Value::Object(_)) => Ok(map),
        _ => Err(format!("expected a mapping (JSON or YAML), got {raw:?}")),
    }
}

/// Check `value` against a Kubernetes type: wrong types fail to deserialize,
/// and fields the type does not know are missing after a round trip.
pub fn check_typed<T>(value: &Value, what: &str) -> Result<(), String>
where
    T: serde::de::DeserializeOwned + serde::Serialize,
{
    let name = value
        .field("name")
        .and_then(Value::as_str)
        .unwrap_or("<unnamed>");
    let typed: T =
        serde_json::from_value(value.clone()).map_err(|e| format!("{what} {name}: {e}"))?;
    let back = serde_json::to_value(&typed).map_err(|e| format!("{what} {name}: {e}"))?;
    match unknown_field(value, &back, String::new()) {
        Some(path) => Err(format!("{what} {name}: unknown field `{path}`")),
        None => Ok(()),
    }
}

fn unknown_field(given: &Value, known: &Value, at: String) -> Option<String> {
    match (given, known) {
        (Value::Object(g), Value::Object(k)) => g.iter().find_map(|(key, v)| {
            let path = if at.is_empty() {
                key.clone()
            } else {
                format!("{at}.{key}")
            };
            match k.get(key) {
                None if !v.is_null() => Some(path),
                None => None,
                Some(kv) => unknown_field(v, kv, path),
            }
        }),
        (Value::Array(g), Value::Array(k)) => g
            .iter()
            .zip(k)
            .enumerate()
            .find_map(|(i, (gv, kv))| unknown_field(gv, kv, format!("{at}[{i}]"))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
            "tool.version",
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

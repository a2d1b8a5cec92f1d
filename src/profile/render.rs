//! A profile rendered for a workload: what a workload brings to the
//! templates, the placeholders' answers, and the pod metadata, containers
//! and volumes they render (see [`super::template`] for the templating).

use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};

use super::{Profile, template};
use crate::json::Field;
use crate::reuse::spare::Spares;
use crate::reuse::stand_ins::{Marks, fill, fill_map, fill_marked, fill_str, has_token};

/// What a placeholder name stands for, given the values and the workload;
/// `None` for a name templates may not use.
pub(super) fn lookup(
    values: &Map<String, Value>,
    vars: &WorkloadVars,
    name: &str,
) -> Option<Value> {
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
        "pod.otelResourceAttributes" => vars.otel_resource_attributes.clone(),
        _ => return None,
    }))
}

/// Whether [`lookup`] gives `expected` for `name`, compared in place (the
/// rendering cache asks this of every workload).
pub(super) fn answers(
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
        "pod.otelResourceAttributes" => &vars.otel_resource_attributes,
        _ => return expected.is_none(),
    };
    expected.and_then(Value::as_str) == Some(var)
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
    /// The OpenTelemetry resource attributes the mesh gives the proxy
    /// (Istio's `OTEL_RESOURCE_ATTRIBUTES`, see
    /// [`crate::mesh::istio::otel`]); empty unless its mesh config asks.
    pub otel_resource_attributes: String,
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
    pub(super) shared: Arc<RenderedContainers>,
}

/// What a profile renders of the pod's metadata.
#[derive(Debug, Clone, PartialEq)]
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
    /// The image pull secrets the mesh's template gives the pod (`None`:
    /// the mesh's code adds those of its values).
    pub pull_secrets: Option<Vec<String>>,
    /// Rendered by the mesh's own template (the cluster's configuration),
    /// which placed the proxy itself (native or classic) and whose volumes
    /// are all added, mounted by the mesh's containers or not.
    pub by_mesh_template: bool,
    /// Where the stand-ins of the proxy and the init containers are.
    pub marks: ContainerMarks,
}

/// Where a rendering's stand-ins are in its proxy and its init containers
/// (see [`Marks`]), found the first time it is filled for a workload.
/// Derived from the rendering: any two are equal.
#[derive(Debug, Default)]
pub struct ContainerMarks(OnceLock<(Option<Marks>, Vec<Option<Marks>>)>);

impl PartialEq for ContainerMarks {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl RenderedMetadata {
    /// This rendering with `reals` for its stand-ins (see
    /// [`crate::reuse::stand_ins`]); `None` when two keys come out the same.
    /// With `kept`, only the annotations and labels of those keys are kept
    /// (what the cluster's own templates keep of it), and only they filled.
    pub(super) fn filled(
        &self,
        kept: Option<(&[&str], &[&str])>,
        reals: &[String],
    ) -> Option<Self> {
        let fill_kept = |map: &Map<String, Value>, keys: Option<&[&str]>| {
            let Some(keys) = keys else {
                return fill_map(map, reals);
            };
            let mut out = Map::new();
            for (key, value) in map {
                let key = match has_token(key) {
                    true => fill_str(key, reals)?,
                    false if keys.contains(&key.as_str()) => key.clone(),
                    false => continue,
                };
                if keys.contains(&key.as_str()) && out.insert(key, fill(value, reals)?).is_some() {
                    return None;
                }
            }
            Some(out)
        };
        Some(RenderedMetadata {
            annotations: fill_kept(&self.annotations, kept.map(|(a, _)| a))?,
            labels: fill_kept(&self.labels, kept.map(|(_, l)| l))?,
            owner_label: match &self.owner_label {
                Some(key) => Some(fill_str(key, reals)?),
                None => None,
            },
        })
    }
}

impl RenderedContainers {
    /// This rendering with `reals` for its stand-ins; `None` when two keys
    /// of a mapping come out the same.
    pub(super) fn filled(&self, reals: &[String]) -> Option<Self> {
        let list = |items: &[Value]| -> Option<Vec<Value>> {
            items.iter().map(|item| fill(item, reals)).collect()
        };
        // The largest parts, filled for every workload: only where their
        // stand-ins are.
        let (proxy_marks, init_marks) = self.marks.0.get_or_init(|| {
            let inits = self.init_containers.iter().map(Marks::of).collect();
            (Marks::of(&self.proxy), inits)
        });
        let init_containers = self.init_containers.iter().zip(init_marks);
        Some(RenderedContainers {
            init_containers: init_containers
                .map(|(item, marks)| fill_marked(item, marks.as_ref(), reals))
                .collect::<Option<_>>()?,
            proxy: fill_marked(&self.proxy, proxy_marks.as_ref(), reals)?,
            containers: list(&self.containers)?,
            native: fill_map(&self.native, reals)?,
            classic_first: fill_map(&self.classic_first, reals)?,
            volumes: list(&self.volumes)?,
            app_containers: list(&self.app_containers)?,
            pod_fields: fill_map(&self.pod_fields, reals)?,
            pull_secrets: match &self.pull_secrets {
                Some(names) => Some(fill_strings(names, reals)?),
                None => None,
            },
            ..self.settings_filled(reals)?
        })
    }

    /// The placement settings of [`RenderedContainers::filled`], without
    /// the containers and volumes.
    pub(super) fn settings_filled(&self, reals: &[String]) -> Option<Self> {
        Some(RenderedContainers {
            init_containers: Vec::new(),
            proxy: Value::Null,
            containers: Vec::new(),
            native: Map::new(),
            classic_first: Map::new(),
            sidecar: SidecarSettings {
                sleep_command: fill_strings(&self.sidecar.sleep_command, reals)?,
                ..self.sidecar.clone()
            },
            quota_defaults: fill_map(&self.quota_defaults, reals)?,
            volumes: Vec::new(),
            app_containers: Vec::new(),
            pod_fields: Map::new(),
            pull_secrets: None,
            by_mesh_template: self.by_mesh_template,
            marks: ContainerMarks::default(),
        })
    }
}

fn fill_strings(items: &[String], reals: &[String]) -> Option<Vec<String>> {
    items.iter().map(|s| fill_str(s, reals)).collect()
}

impl std::ops::Deref for Rendered {
    type Target = RenderedContainers;

    fn deref(&self) -> &RenderedContainers {
        &self.shared
    }
}

impl Rendered {
    /// The proxy (`None` when the profile renders none) and the init
    /// containers, for the workload being injected: moved out when this
    /// rendering is the workload's own (filled with its strings), which
    /// leaves them empty here; copied when it is shared with other
    /// workloads.
    pub fn take_containers(&mut self, spares: &mut Spares) -> (Option<Value>, Vec<Value>) {
        let (proxy, inits) = match Arc::get_mut(&mut self.shared) {
            Some(own) => (
                std::mem::take(&mut own.proxy),
                std::mem::take(&mut own.init_containers),
            ),
            None => (
                spares.copy_of(&self.shared.proxy),
                self.shared
                    .init_containers
                    .iter()
                    .map(|init| spares.copy_of(init))
                    .collect(),
            ),
        };
        ((!proxy.is_null()).then_some(proxy), inits)
    }

    /// The volumes `wanted` for the workload being injected: moved out
    /// when this rendering is the workload's own (see
    /// [`Rendered::take_containers`]), copied when it is shared.
    pub fn take_volumes(&mut self, wanted: impl Fn(&Value) -> bool) -> Vec<Value> {
        match Arc::get_mut(&mut self.shared) {
            Some(own) => {
                let mut volumes = std::mem::take(&mut own.volumes);
                volumes.retain(wanted);
                volumes
            }
            None => self
                .shared
                .volumes
                .iter()
                .filter(|v| wanted(v))
                .cloned()
                .collect(),
        }
    }

    /// A rendering of these parts.
    pub fn new(metadata: RenderedMetadata, containers: RenderedContainers) -> Self {
        Rendered {
            metadata: Arc::new(metadata),
            shared: Arc::new(containers),
        }
    }

    /// This rendering's metadata and placement settings with other
    /// containers and volumes (a release's own chart's, rendered in place of
    /// the profile's), to be placed as the profile's are.
    pub fn with_containers(
        &self,
        init_containers: Vec<Value>,
        proxy: Value,
        containers: Vec<Value>,
        volumes: Vec<Value>,
    ) -> Rendered {
        Rendered {
            metadata: self.metadata.clone(),
            shared: Arc::new(RenderedContainers {
                init_containers,
                proxy,
                containers,
                // The chart's proxy is rendered native or classic already.
                native: Map::new(),
                classic_first: Map::new(),
                sidecar: self.sidecar.clone(),
                quota_defaults: self.quota_defaults.clone(),
                volumes,
                app_containers: Vec::new(),
                pod_fields: Map::new(),
                pull_secrets: None,
                by_mesh_template: false,
                marks: ContainerMarks::default(),
            }),
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
    pub(super) fn read(map: &Map<String, Value>) -> Result<Self, String> {
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

impl Profile {
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
    pub(super) fn render_with(&self, lookup: &template::Lookup<'_>) -> Result<Rendered, String> {
        Ok(Rendered {
            metadata: Arc::new(self.render_metadata(lookup)?),
            shared: Arc::new(self.render_containers(lookup)?),
        })
    }

    /// The pod's annotations, labels and owner label (`workload.kind`
    /// decides whether there is one), with `lookup` answering.
    pub(super) fn render_metadata(
        &self,
        lookup: &template::Lookup<'_>,
    ) -> Result<RenderedMetadata, String> {
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

    /// The workload placeholders whose answers this profile decides on,
    /// not only copies: the kind (a pod's metadata differs) and those of its
    /// sidecar settings (read as numbers and choices).
    pub(super) fn decided_placeholders(&self) -> Vec<String> {
        let mut names = vec!["workload.kind".to_string()];
        template::placeholders(&Value::Object(self.sidecar.clone()), &mut names);
        names
    }

    /// The containers, volumes and placement settings, with `lookup` answering.
    pub(super) fn render_containers(
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
            pull_secrets: None,
            by_mesh_template: false,
            marks: ContainerMarks::default(),
        })
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
}

//! The cluster's own injector configuration: Istio's
//! `istio-sidecar-injector[-REV]` ConfigMap (its templates, which of them a
//! pod gets, the injection policy and selectors, and the chart values the
//! templates read) and `istio[-REV]` ConfigMap (the mesh config), as
//! `istioctl kube-inject --injectConfigFile --valuesFile --meshConfigFile`
//! reads them (istio `pkg/kube/inject/inject.go` and `webhook.go`).
//!
//! Found among the input's and `--context`'s objects, it replaces the
//! embedded profile's rendering: each pod gets what the cluster's templates
//! render for it, overlaid as Istio overlays them (see [`super::overlay`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::alike::Renderings;
use super::template_data::{TemplateInputs, template_data};
use super::template_funcs::injection_funcs;
use super::{overlay, typed};
use crate::cluster::ClusterContext;
use crate::gotemplate::{Funcs, Template};
use crate::json::Field;
use crate::reuse::spare::Spares;
use crate::reuse::stand_ins;

/// The ConfigMap holding the templates, and the one holding the mesh config.
pub const INJECTOR_CONFIG_MAP: &str = "istio-sidecar-injector";
pub const MESH_CONFIG_MAP: &str = "istio";

/// The ConfigMap names a context keeps for this module (every revision's).
pub const CONFIG_MAP_NAMES: &str = "istio*";

/// The next configuration's id.
static NEXT_ID: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A cluster's injector configuration, its templates parsed.
#[derive(Debug)]
pub struct ClusterInjector {
    /// Where it was read: `ConfigMap istio-system/istio-sidecar-injector`.
    pub origin: String,
    templates: BTreeMap<String, Template>,
    funcs: Funcs,
    default_templates: Vec<String>,
    aliases: BTreeMap<String, Vec<String>>,
    /// `enabled`: pods are injected unless they opt out; `disabled`: only
    /// those that opt in (or match `alwaysInjectSelector`).
    pub policy: String,
    pub never_inject_selector: Vec<Value>,
    pub always_inject_selector: Vec<Value>,
    /// Annotations added to every injected pod.
    pub injected_annotations: Map<String, Value>,
    /// The chart values (`values`), and the mesh config (`mesh` of `istio`).
    pub values: Value,
    pub mesh: Value,
    /// Tells this configuration's renderings of alike workloads from
    /// another's (see [`super::alike`]).
    id: usize,
    /// Whether its templates and values hold no text like a stand-in
    /// (which filling would replace): alike workloads share renderings.
    takes_stand_ins: bool,
    /// The proxy's and the init container's images for a pod that asks for
    /// no image type: the same for every such pod, built once.
    usual_images: (String, String),
}

impl ClusterInjector {
    /// The configuration of the revision `revision` (`default` or empty for
    /// the default one) in the control plane's `namespace`, when `cluster`
    /// holds its injector ConfigMap.
    pub fn find(
        cluster: &ClusterContext,
        namespace: &str,
        revision: &str,
    ) -> Result<Option<ClusterInjector>, ConfigError> {
        let suffix = match revision {
            "" | "default" => String::new(),
            rev => format!("-{rev}"),
        };
        let name = format!("{INJECTOR_CONFIG_MAP}{suffix}");
        let Some(data) = cluster.config_map_data(namespace, &name) else {
            return Ok(None);
        };
        let origin = format!("ConfigMap {namespace}/{name}");
        let mesh_name = format!("{MESH_CONFIG_MAP}{suffix}");
        let mesh_data = cluster.config_map_data(namespace, &mesh_name);
        // The context read each entry once as it took the ConfigMap; an
        // entry it could not read is read again only to say why.
        let document = |map: &str, data: Option<&Map<String, Value>>, key: &str| {
            if let Some(found) = cluster.config_map_document(namespace, map, key) {
                return Ok(found.clone());
            }
            let text = data
                .and_then(|d| d.get(key))
                .and_then(Value::as_str)
                .unwrap_or_default();
            read_mapping(text).map_err(|message| ConfigError::Entry {
                config_map: format!("{namespace}/{map}"),
                key: key.to_string(),
                message,
            })
        };
        let mesh = document(&mesh_name, mesh_data, "mesh")?;
        let config = document(&name, Some(data), "config")?;
        let values = document(&name, Some(data), "values")?;
        Self::read(origin, &config, values, mesh).map(Some)
    }

    /// The revisions whose injector ConfigMap `cluster` holds in the control
    /// plane's `namespace`, `default` for `istio-sidecar-injector` itself.
    pub fn revisions(cluster: &ClusterContext, namespace: &str) -> Vec<String> {
        cluster
            .objects("ConfigMap", namespace)
            .into_iter()
            .filter_map(|map| map.field("metadata")?.field("name")?.as_str())
            .filter_map(|name| match name.strip_prefix(INJECTOR_CONFIG_MAP)? {
                "" => Some("default".to_string()),
                suffix => suffix.strip_prefix('-').map(str::to_string),
            })
            .collect()
    }

    /// The revision a run injects for: `asked` (by `--set revision`), which
    /// the context must then hold if it holds any; else the one revision
    /// whose configuration the context holds. `None` when it holds none.
    pub fn choose_revision(
        cluster: &ClusterContext,
        namespace: &str,
        asked: Option<&str>,
    ) -> Result<Option<String>, ConfigError> {
        let found = Self::revisions(cluster, namespace);
        let tags = super::revision::tags(cluster);
        // A tag asked for is the revision it points at.
        let asked = asked.map(|r| match r.trim() {
            "" => "default",
            r => super::revision::resolve(r, &tags),
        });
        match (asked, found.as_slice()) {
            (_, []) => Ok(None),
            (Some(asked), _) if found.iter().any(|r| r == asked) => Ok(Some(asked.to_string())),
            (Some(asked), _) => Err(ConfigError::NoSuchRevision {
                asked: asked.to_string(),
                namespace: namespace.to_string(),
                found,
            }),
            (None, [one]) => Ok(Some(one.clone())),
            (None, _) => Err(ConfigError::SeveralRevisions {
                namespace: namespace.to_string(),
                found,
            }),
        }
    }

    /// The configuration `config` (the injector's `config`, read) with its
    /// chart `values` and `mesh` config; `origin` names it in errors.
    pub fn read(
        origin: String,
        config: &Value,
        values: Value,
        mesh: Value,
    ) -> Result<ClusterInjector, ConfigError> {
        let funcs = injection_funcs();
        let mut texts: BTreeMap<String, String> = BTreeMap::new();
        if let Some(Value::Object(templates)) = config.field("templates") {
            for (name, text) in templates {
                let text = text.as_str().ok_or_else(|| ConfigError::NotText {
                    origin: origin.clone(),
                    template: name.clone(),
                })?;
                texts.insert(name.clone(), text.to_string());
            }
        }
        // istiod reads `templates` alone. Istio's chart still writes a
        // legacy `template` beside it, a trap for an istiod older than its
        // templates, which a current injector never parses: so neither does
        // the tool. A configuration with that field alone has no template
        // istiod would run, and is refused rather than read as the sidecar's.
        if texts.is_empty() && config.field("template").is_some() {
            return Err(ConfigError::LegacyTemplateOnly { origin });
        }
        let takes_stand_ins = !texts.values().any(|t| stand_ins::has_token(t))
            && !stand_ins::value_has_token(&values)
            && !stand_ins::value_has_token(&mesh);
        let mut templates = BTreeMap::new();
        for (name, text) in texts {
            let template =
                Template::parse(&name, &text, &funcs).map_err(|error| ConfigError::Template {
                    origin: origin.clone(),
                    error,
                })?;
            templates.insert(name, template);
        }
        let strings = |key: &str| strings_of(config.field(key));
        let mut default_templates = strings("defaultTemplates");
        if default_templates.is_empty() {
            default_templates.push("sidecar".into());
        }
        let aliases = config
            .field("aliases")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(alias, names)| (alias.clone(), strings_of(Some(names))))
            .collect();
        let list = |key: &str| {
            config
                .field(key)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        let mut injector = ClusterInjector {
            origin,
            templates,
            funcs,
            default_templates,
            aliases,
            policy: config
                .field("policy")
                .and_then(Value::as_str)
                .unwrap_or("enabled")
                .to_string(),
            never_inject_selector: list("neverInjectSelector"),
            always_inject_selector: list("alwaysInjectSelector"),
            injected_annotations: config
                .field("injectedAnnotations")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            values,
            mesh,
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            takes_stand_ins,
            usual_images: Default::default(),
        };
        injector.usual_images = (
            injector.image(PROXY_IMAGE_AT, "", None),
            injector.image(PROXY_INIT_IMAGE_AT, "", None),
        );
        Ok(injector)
    }

    /// The templates a pod with `annotations` gets: those its
    /// `inject.istio.io/templates` names, else the default ones, aliases
    /// resolved.
    pub fn templates_for(&self, annotations: Option<&Map<String, Value>>) -> Vec<String> {
        let asked: Vec<String> = match annotations
            .and_then(|a| a.get(super::TEMPLATES))
            .and_then(Value::as_str)
        {
            Some(names) => names.split(',').map(|n| n.trim().to_string()).collect(),
            None => self.default_templates.clone(),
        };
        asked
            .into_iter()
            .flat_map(|name| match self.aliases.get(&name) {
                Some(names) => names.clone(),
                None => vec![name],
            })
            .collect()
    }

    /// Whether Istio's injector injects a pod with these labels and
    /// annotations, its opt-in or opt-out aside (the policy and the
    /// selectors decide then; `inject.go`'s `injectRequired`); the reason
    /// when it does not.
    pub fn declines(
        &self,
        labels: Option<&Map<String, Value>>,
        annotations: Option<&Map<String, Value>>,
    ) -> Option<String> {
        let key = "sidecar.istio.io/inject";
        let said = labels
            .and_then(|l| l.get(key))
            .or_else(|| annotations.and_then(|a| a.get(key)))
            .and_then(Value::as_str);
        if matches!(said, Some("true" | "false")) {
            // The pod decides (an opt-out is decided elsewhere).
            return None;
        }
        let matches = |selectors: &[Value]| selectors.iter().any(|s| selector_matches(s, labels));
        if matches(&self.never_inject_selector) {
            return Some(format!(
                "its labels match a neverInjectSelector of {}",
                self.origin
            ));
        }
        if matches(&self.always_inject_selector) {
            return None;
        }
        match self.policy.as_str() {
            "enabled" => None,
            "disabled" => Some(format!(
                "the injection policy of {} is disabled and the pod does not ask for injection (sidecar.istio.io/inject: \"true\")",
                self.origin
            )),
            other => Some(format!(
                "the injection policy of {} is {other:?}, neither enabled nor disabled: Istio injects nothing",
                self.origin
            )),
        }
    }

    /// What the templates `names` render for a pod, overlaid one on the
    /// next as Istio overlays them: a pod of `metadata` and `spec`. Rendered
    /// once for each distinct set of inputs, and a single template once for
    /// workloads alike but for their strings (see [`super::alike`]).
    /// The worker's `renderings` keep the shared renderings, and its
    /// `spares` hold the copies.
    pub fn render(
        &self,
        inputs: &TemplateInputs<'_>,
        names: &[String],
        renderings: &mut Renderings,
        spares: &mut Spares,
    ) -> Result<Arc<Value>, ConfigError> {
        if let [name] = names {
            if let Some(pod) = super::alike::render(self, inputs, name, renderings, spares) {
                return Ok(Arc::new(pod));
            }
        }
        self.render_for_real(inputs, names)
    }

    /// [`ClusterInjector::render`] without stand-ins: the workload's own
    /// strings in the templates' data.
    pub(super) fn render_for_real(
        &self,
        inputs: &TemplateInputs<'_>,
        names: &[String],
    ) -> Result<Arc<Value>, ConfigError> {
        // Rendered each time: keeping the pods rendered by their inputs cost
        // 3.6% of a run's instructions (callgrind, 500 generated workloads),
        // since alike workloads share renderings through `alike` already.
        let data = template_data(inputs);
        let mut pod = Value::Object(Map::new());
        for name in names {
            let template = self
                .template(name)
                .ok_or_else(|| ConfigError::NoSuchTemplate {
                    origin: self.origin.clone(),
                    template: name.clone(),
                    known: self.templates.keys().cloned().collect(),
                })?;
            let text =
                template
                    .execute(&data, &self.funcs)
                    .map_err(|error| ConfigError::Template {
                        origin: self.origin.clone(),
                        error,
                    })?;
            let rendered = read_mapping(&text).map_err(|message| ConfigError::NotAMapping {
                origin: self.origin.clone(),
                template: name.clone(),
                message,
            })?;
            pod = if pod.as_object().is_some_and(|p| p.is_empty()) {
                overlay::without_nulls(rendered)
            } else {
                overlay::merge(&pod, &rendered)
            };
        }
        Ok(Arc::new(as_istio_writes(pod)))
    }

    /// The template `name`.
    pub(super) fn template(&self, name: &str) -> Option<&Template> {
        self.templates.get(name)
    }

    /// The functions the templates call.
    pub(super) fn funcs(&self) -> &Funcs {
        &self.funcs
    }

    /// Tells this configuration from another in the same run.
    pub(super) fn id(&self) -> usize {
        self.id
    }

    /// Whether alike workloads may share renderings (see `takes_stand_ins`).
    pub(super) fn takes_stand_ins(&self) -> bool {
        self.takes_stand_ins
    }

    /// The embedded profile's values that these chart values and mesh config
    /// set (its names for them; see `profiles/istio.yaml`): the pod's
    /// annotations and `--set` still override them.
    pub fn profile_values(&self) -> Map<String, Value> {
        let at = |root: &Value, path: &str| -> Option<Value> {
            path.split('.')
                .try_fold(root, |at, key| at.field(key))
                .filter(|v| !v.is_null())
                .cloned()
        };
        let value = |path: &str| at(&self.values, path);
        let mesh = |path: &str| at(&self.mesh, path);
        let mut out = Map::new();
        // The pod's own istio-proxy is merged as this injector merges it.
        out.insert("mergeUserProxy".into(), Value::Bool(true));
        let scalars: [(&str, &str); 27] = [
            ("imagePullPolicy", "global.imagePullPolicy"),
            ("caAddress", "global.caAddress"),
            ("mountMtlsCerts", "global.mountMtlsCerts"),
            ("clusterID", "global.multiCluster.clusterName"),
            ("network", "global.network"),
            ("meshID", "global.meshID"),
            ("clusterDomain", "global.proxy.clusterDomain"),
            ("logLevel", "global.proxy.logLevel"),
            ("componentLogLevel", "global.proxy.componentLogLevel"),
            ("agentLogLevel", "global.logging.level"),
            ("statusPort", "global.proxy.statusPort"),
            (
                "rewriteAppHTTPProbe",
                "sidecarInjectorWebhook.rewriteAppHTTPProbe",
            ),
            (
                "readinessInitialDelaySeconds",
                "global.proxy.readinessInitialDelaySeconds",
            ),
            (
                "readinessPeriodSeconds",
                "global.proxy.readinessPeriodSeconds",
            ),
            (
                "readinessFailureThreshold",
                "global.proxy.readinessFailureThreshold",
            ),
            ("startupProbeEnabled", "global.proxy.startupProbe.enabled"),
            (
                "startupProbeFailureThreshold",
                "global.proxy.startupProbe.failureThreshold",
            ),
            ("includeOutboundIPRanges", "global.proxy.includeIPRanges"),
            ("excludeOutboundIPRanges", "global.proxy.excludeIPRanges"),
            ("includeInboundPorts", "global.proxy.includeInboundPorts"),
            ("excludeInboundPorts", "global.proxy.excludeInboundPorts"),
            ("includeOutboundPorts", "global.proxy.includeOutboundPorts"),
            ("excludeOutboundPorts", "global.proxy.excludeOutboundPorts"),
            ("proxyCPURequest", "global.proxy.resources.requests.cpu"),
            (
                "proxyMemoryRequest",
                "global.proxy.resources.requests.memory",
            ),
            ("proxyCPULimit", "global.proxy.resources.limits.cpu"),
            ("proxyMemoryLimit", "global.proxy.resources.limits.memory"),
        ];
        for (name, path) in scalars {
            if let Some(found) = value(path).filter(|v| !v.is_object() && !v.is_array()) {
                out.insert(name.to_string(), found);
            }
        }
        if let Some(Value::Array(secrets)) = value("global.imagePullSecrets") {
            let names: Vec<String> = secrets
                .iter()
                .filter_map(|s| s.as_str().or_else(|| s.field("name")?.as_str()))
                .map(str::to_string)
                .collect();
            out.insert("imagePullSecrets".into(), Value::String(names.join(",")));
        }
        if let Some(cni) = value("pilot.cni.enabled") {
            out.insert("cni".into(), cni);
        }
        match self.native_sidecars_setting().as_deref() {
            Some("true") => {
                out.insert("nativeSidecar".into(), Value::String("true".into()));
            }
            // istiod reads any other word as false (its log says so; so
            // does the tool: see `unread_settings`).
            Some(other) if other != "auto" => {
                out.insert("nativeSidecar".into(), Value::String("false".into()));
            }
            _ => {}
        }
        let mut default_config = mesh("defaultConfig").unwrap_or(Value::Object(Map::new()));
        // Istio's own default when the mesh config names no istiod, not the
        // revision's (which the tool would derive).
        if let Value::Object(fields) = &mut default_config {
            fields
                .entry("discoveryAddress")
                .or_insert_with(|| Value::from(super::istiod_address("", "")));
        }
        out.insert(
            "proxyConfig".into(),
            Value::String(default_config.to_string()),
        );
        if let Some(mode) = default_config.field("interceptionMode") {
            out.insert("interceptionMode".into(), mode.clone());
        }
        let hold = |v: Option<&Value>| v.and_then(Value::as_bool).unwrap_or(false);
        if hold(default_config.field("holdApplicationUntilProxyStarts"))
            || hold(value("global.proxy.holdApplicationUntilProxyStarts").as_ref())
        {
            out.insert("proxyPosition".into(), Value::String("first".into()));
        }
        let enriching = |p: &Value| {
            p.field("opentelemetry")
                .and_then(|o| o.field("serviceAttributeEnrichment"))
                .and_then(Value::as_str)
                == Some("OTEL_SEMANTIC_CONVENTIONS")
        };
        if let Some(Value::Array(providers)) = mesh("extensionProviders") {
            let on = providers.iter().any(enriching);
            out.insert("otelServiceAttributes".into(), Value::Bool(on));
        }
        if let Some(merge) = mesh("enablePrometheusMerge") {
            out.insert("mergeMetrics".into(), merge);
        }
        if let Some(mode) = mesh("inboundTrafficPolicy.mode") {
            out.insert("inboundTrafficPolicy".into(), mode);
        }
        if let Some(domain) = mesh("trustDomain") {
            out.insert("trustDomain".into(), domain);
        }
        out
    }

    /// istiod's `ENABLE_NATIVE_SIDECARS` as the chart sets it, if it does.
    fn native_sidecars_setting(&self) -> Option<String> {
        let value = ["pilot", "env", "ENABLE_NATIVE_SIDECARS"]
            .iter()
            .try_fold(&self.values, |at, key| at.field(key))?;
        Some(value.as_str().map_or(value.to_string(), str::to_string))
    }

    /// What of this configuration istiod reads otherwise than it says, as
    /// warnings: an `ENABLE_NATIVE_SIDECARS` other than `true`, `false` or
    /// `auto` is false.
    pub fn unread_settings(&self) -> Vec<String> {
        match self.native_sidecars_setting() {
            Some(word) if !matches!(word.as_str(), "true" | "false" | "auto") => vec![format!(
                "{}: pilot.env.ENABLE_NATIVE_SIDECARS is {}, which istiod reads as false: no native sidecars",
                self.origin,
                crate::gotemplate::format::go_quote(&word)
            )],
            _ => Vec::new(),
        }
    }

    /// The cluster and network Istio's injector writes into the proxy's env
    /// after its template (`extractClusterAndNetwork`): the chart's
    /// `global.multiCluster.clusterName` and `global.network`, the pod's
    /// `topology.istio.io/network` label before the latter; those set, in
    /// name order.
    pub fn cluster_env(&self, labels: Option<&Map<String, Value>>) -> Vec<(&'static str, String)> {
        let text = |path: &str| {
            path.split('.')
                .try_fold(&self.values, |at, key| at.field(key))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let cluster = text("global.multiCluster.clusterName");
        let network = labels
            .and_then(|l| l.get("topology.istio.io/network"))
            .and_then(Value::as_str)
            .map_or_else(|| text("global.network"), str::to_string);
        [
            ("ISTIO_META_CLUSTER_ID", cluster),
            ("ISTIO_META_NETWORK", network),
        ]
        .into_iter()
        .filter(|(_, value)| !value.is_empty())
        .collect()
    }

    /// Istio's proxy image for a pod with `annotations` (`ProxyImage`):
    /// `global.hub`/`global.proxy.image`:`global.tag`, the image type (the
    /// proxy config's, the pod's `sidecar.istio.io/proxyImageType`, else
    /// `global.variant`) on the tag.
    pub fn proxy_image(
        &self,
        proxy_config: &Value,
        annotations: Option<&Map<String, Value>>,
    ) -> String {
        let image_type = proxy_config
            .field("image")
            .and_then(|i| i.field("imageType"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        match (image_type, asked_image_type(annotations)) {
            ("", None) => self.usual_images.0.clone(),
            _ => self.image(PROXY_IMAGE_AT, image_type, annotations),
        }
    }

    /// The init container's image (`ProxyInitImage`).
    pub fn proxy_init_image(&self, annotations: Option<&Map<String, Value>>) -> String {
        match asked_image_type(annotations) {
            None => self.usual_images.1.clone(),
            Some(_) => self.image(PROXY_INIT_IMAGE_AT, "", annotations),
        }
    }

    fn image(
        &self,
        name_at: &str,
        image_type: &str,
        annotations: Option<&Map<String, Value>>,
    ) -> String {
        let global = self.values.field("global");
        let text = |v: Option<&Value>| match v {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        };
        let name = text(
            name_at
                .split('.')
                .try_fold(&self.values, |at, key| at.field(key)),
        );
        let name = if name.is_empty() {
            "proxyv2".into()
        } else {
            name
        };
        let tag = text(global.and_then(|g| g.field("tag")));
        let mut image_type = image_type.to_string();
        if image_type.is_empty() {
            image_type = text(global.and_then(|g| g.field("variant")));
        }
        if let Some(asked) = asked_image_type(annotations) {
            image_type = asked.to_string();
        }
        let hub = text(global.and_then(|g| g.field("hub")));
        format!("{hub}/{name}:{}", tag_of_type(&tag, &image_type))
    }
}

/// Where the values name the proxy's image, and the init container's.
const PROXY_IMAGE_AT: &str = "global.proxy.image";
const PROXY_INIT_IMAGE_AT: &str = "global.proxy_init.image";

/// The image type a pod's annotation asks for.
fn asked_image_type(annotations: Option<&Map<String, Value>>) -> Option<&str> {
    annotations
        .and_then(|a| a.field("sidecar.istio.io/proxyImageType"))
        .and_then(Value::as_str)
}

/// `tag` for the image type `image_type` (`updateImageTypeIfPresent`): a
/// known type's suffix replaced, `default` meaning none.
pub(super) fn tag_of_type(tag: &str, image_type: &str) -> String {
    if image_type.is_empty() {
        return tag.to_string();
    }
    let base = ["distroless", "debug"]
        .iter()
        .find_map(|known| tag.strip_suffix(&format!("-{known}")))
        .unwrap_or(tag);
    if image_type == "default" {
        base.to_string()
    } else {
        format!("{base}-{image_type}")
    }
}

/// Whether a label selector matches `labels`; an empty selector matches
/// nothing, as Istio reads its selectors (`!selector.Empty()`).
fn selector_matches(selector: &Value, labels: Option<&Map<String, Value>>) -> bool {
    let has = |key: &str| {
        selector.field(key).is_some_and(|v| {
            v.as_object().is_some_and(|m| !m.is_empty())
                || v.as_array().is_some_and(|a| !a.is_empty())
        })
    };
    let none = Map::new();
    (has("matchLabels") || has("matchExpressions"))
        && crate::admission::webhook::selector_matches(Some(selector), labels.unwrap_or(&none))
}

/// What is wrong with the cluster's Istio configuration, naming the
/// ConfigMap (`origin`: `ConfigMap istio-system/istio-sidecar-injector`) and,
/// for a template, its name and line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// An entry of a ConfigMap's `data` that is not a YAML mapping.
    #[error("ConfigMap {config_map}, data.{key}: {message}")]
    Entry {
        config_map: String,
        key: String,
        message: String,
    },
    /// A template given as something other than text.
    #[error("{origin}: template {template:?} is not text")]
    NotText { origin: String, template: String },
    /// `--set revision` names a revision whose configuration the context
    /// lacks, while it holds others'.
    #[error(
        "--set revision={asked}: the context has no injector configuration of that revision in {namespace} (ConfigMap istio-sidecar-injector-{asked}); it has: {}",
        found.join(", ")
    )]
    NoSuchRevision {
        asked: String,
        namespace: String,
        found: Vec<String>,
    },
    /// Several revisions' configurations, and no `--set revision` to choose.
    #[error(
        "the context holds the injector configuration of several revisions in {namespace} ({}): choose one with --set revision=NAME",
        found.join(", ")
    )]
    SeveralRevisions {
        namespace: String,
        found: Vec<String>,
    },
    /// A configuration from before Istio 1.8: the one `template` and no
    /// `templates`, which istiod no longer reads.
    #[error(
        "{origin}: its config has the legacy single `template` and no `templates`; istiod reads only `templates` (Istio 1.8 and later), so it would inject no pod with it: fetch the ConfigMap of the istiod the cluster runs"
    )]
    LegacyTemplateOnly { origin: String },
    /// A template that does not parse, or fails to run for a pod.
    #[error("{origin}: {error}")]
    Template {
        origin: String,
        error: crate::gotemplate::Error,
    },
    /// A pod asking for a template the configuration lacks.
    #[error("{origin}: the pod asks for template {template:?}, which it does not have (it has {})", known.join(", "))]
    NoSuchTemplate {
        origin: String,
        template: String,
        known: Vec<String>,
    },
    /// A template whose output is not a YAML mapping (a pod).
    #[error("{origin}: template {template:?} rendered text that is not a YAML mapping: {message}")]
    NotAMapping {
        origin: String,
        template: String,
        message: String,
    },
}

/// The strings of a list (others left out).
fn strings_of(list: Option<&Value>) -> Vec<String> {
    list.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

/// The text as a YAML (or JSON) mapping; empty text is an empty mapping.
fn read_mapping(text: &str) -> Result<Value, String> {
    let documents = crate::yaml::parse_stream(text)
        .map_err(|e| format!("line {}:{}: {}", e.line, e.column, e.message))?;
    let Some(root) = documents.first().and_then(|d| d.root.as_ref()) else {
        return Ok(Value::Object(Map::new()));
    };
    let value = crate::yaml::value::to_value(root).map_err(|e| e.message)?;
    match value {
        Value::Object(_) => Ok(value),
        Value::Null => Ok(Value::Object(Map::new())),
        _ => Err("not a mapping".into()),
    }
}

/// A single template's pod as Istio's injector writes it: nulls dropped (as
/// its overlay drops them), its containers and volumes as Go writes them.
pub(super) fn as_written(pod: Value) -> Value {
    as_istio_writes(overlay::without_nulls(pod))
}

/// The template's pod as Istio's injector writes its containers and
/// volumes back (see [`typed::as_go_writes`]).
fn as_istio_writes(mut pod: Value) -> Value {
    for list in ["initContainers", "containers", "volumes"] {
        if let Some(Value::Array(items)) = pod.field_mut("spec").and_then(|s| s.field_mut(list)) {
            items.iter_mut().for_each(typed::as_go_writes);
        }
    }
    pod
}

/// The inputs of a rendering as one text, but for the pod's metadata and
/// spec and the proxy configuration, which the caller writes (with
/// stand-ins), and the chart's values and mesh config, which are the
/// injector's own: the head of the key alike workloads share renderings by.
/// Every field is named, so that a new one cannot be left out of the key.
pub(super) fn cache_key_head(inputs: &TemplateInputs<'_>, names: &[String]) -> String {
    let TemplateInputs {
        api_version,
        kind,
        name,
        namespace,
        pod_metadata: _,
        pod_spec: _,
        values: _,
        mesh: _,
        proxy_config: _,
        revision,
        native_sidecars,
        proxy_image,
        proxy_init_image,
        proxy_uid,
        proxy_gid,
        inbound_traffic_policy_mode,
        compliance_policy,
    } = *inputs;
    let mut key = String::with_capacity(1024);
    for part in [
        api_version,
        kind,
        name,
        namespace,
        revision,
        proxy_image,
        proxy_init_image,
        inbound_traffic_policy_mode,
        compliance_policy,
    ] {
        key.push_str(part);
        key.push('\u{0}');
    }
    {
        use std::fmt::Write;
        let _ = write!(
            key,
            "{native_sidecars}\u{0}{proxy_uid}\u{0}{proxy_gid}\u{0}"
        );
    }
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            key.push(',');
        }
        key.push_str(name);
    }
    key.push('\u{0}');
    key
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn injector(config: Value) -> ClusterInjector {
        ClusterInjector::read("test".into(), &config, json!({}), json!({})).unwrap()
    }

    #[test]
    fn templates_are_chosen_by_annotation_else_by_default_with_aliases() {
        let config = json!({
            "templates": {"sidecar": "a: 1", "gateway": "b: 2", "custom": "c: 3"},
            "aliases": {"both": ["sidecar", "custom"]},
        });
        let injector = injector(config);
        assert_eq!(injector.templates_for(None), ["sidecar"]);
        let asked = json!({"inject.istio.io/templates": "gateway, both"});
        assert_eq!(
            injector.templates_for(asked.as_object()),
            ["gateway", "sidecar", "custom"]
        );
    }

    #[test]
    fn the_legacy_template_beside_templates_is_never_parsed_as_istiod_never_reads_it() {
        // Istio's chart writes this trap into every real ConfigMap.
        let trap = "{{ Template_Version_And_Istio_Version_Mismatched_Check_Installation }}";
        let injector = injector(json!({"template": trap, "templates": {"sidecar": "a: 1"}}));
        assert_eq!(injector.templates.keys().collect::<Vec<_>>(), ["sidecar"]);
        let alone = ClusterInjector::read(
            "ConfigMap istio-system/istio-sidecar-injector".into(),
            &json!({"template": "a: 1"}),
            json!({}),
            json!({}),
        )
        .unwrap_err();
        assert!(
            matches!(alone, ConfigError::LegacyTemplateOnly { .. }),
            "{alone}"
        );
        assert!(
            alone.to_string().contains("legacy single `template`"),
            "{alone}"
        );
    }

    #[test]
    fn a_template_error_names_the_configuration_the_template_and_the_line() {
        let config = json!({"templates": {"sidecar": "a: 1\nb: {{ .Nope | nofunc }}\n"}});
        let error = ClusterInjector::read(
            "ConfigMap istio-system/istio-sidecar-injector".into(),
            &config,
            json!({}),
            json!({}),
        )
        .unwrap_err();
        let ConfigError::Template { origin, error: at } = &error else {
            panic!("not a template error: {error:?}");
        };
        assert_eq!(origin, "ConfigMap istio-system/istio-sidecar-injector");
        assert_eq!((at.template.as_str(), at.line), ("sidecar", 2));
        assert!(
            error.to_string().starts_with(
                "ConfigMap istio-system/istio-sidecar-injector: template \"sidecar\", line 2:"
            ),
            "{error}"
        );
    }

    #[test]
    fn the_policy_and_selectors_decide_as_istio_decides() {
        let config = json!({"policy": "disabled",
            "alwaysInjectSelector": [{"matchLabels": {"mesh": "yes"}}],
            "neverInjectSelector": [{"matchExpressions": [{"key": "job", "operator": "Exists"}]}]});
        let injector = injector(config);
        let labels = |l: Value| l.as_object().cloned();
        assert!(injector.declines(None, None).is_some());
        assert!(
            injector
                .declines(labels(json!({"mesh": "yes"})).as_ref(), None)
                .is_none()
        );
        assert!(
            injector
                .declines(labels(json!({"mesh": "yes", "job": "x"})).as_ref(), None)
                .is_some()
        );
        let opted_in = json!({"sidecar.istio.io/inject": "true"});
        assert!(injector.declines(None, opted_in.as_object()).is_none());
        // An empty selector matches nothing.
        let config = json!({"neverInjectSelector": [{}]});
        assert!(
            super::tests::injector(config)
                .declines(None, None)
                .is_none()
        );
    }

    #[test]
    fn images_are_built_as_istio_builds_them() {
        let values = json!({"global": {"hub": "h", "tag": "1.2-distroless", "proxy": {"image": "p"}, "variant": ""}});
        let injector = ClusterInjector::read("t".into(), &json!({}), values, json!({})).unwrap();
        assert_eq!(injector.proxy_image(&json!({}), None), "h/p:1.2-distroless");
        assert_eq!(
            injector.proxy_image(&json!({"image": {"imageType": "debug"}}), None),
            "h/p:1.2-debug"
        );
        let asked = json!({"sidecar.istio.io/proxyImageType": "default"});
        assert_eq!(
            injector.proxy_init_image(asked.as_object()),
            "h/proxyv2:1.2"
        );
    }

    #[test]
    fn templates_render_overlaid_in_order_and_as_go_writes_them() {
        let config = json!({"templates": {
            "a": "spec:\n  containers:\n  - name: istio-proxy\n    image: x\n    args: []\n",
            "b": "spec:\n  containers:\n  - name: istio-proxy\n    image: \"{{ .ProxyImage }}\"\n",
        }});
        let injector = injector(config);
        let (empty, metadata) = (json!({}), json!({}));
        let inputs = TemplateInputs {
            api_version: "v1",
            kind: "Pod",
            name: "p",
            namespace: "d",
            pod_metadata: &metadata,
            pod_spec: &empty,
            values: &empty,
            mesh: &empty,
            proxy_config: &empty,
            revision: "default",
            native_sidecars: false,
            proxy_image: "img",
            proxy_init_image: "img",
            proxy_uid: 1337,
            proxy_gid: 1337,
            inbound_traffic_policy_mode: "",
            compliance_policy: "",
        };
        let mut renderings = Renderings::default();
        let mut spares = Spares::default();
        let mut render =
            |names: &[String]| injector.render(&inputs, names, &mut renderings, &mut spares);
        let pod = render(&["a".into(), "b".into()]).unwrap();
        assert_eq!(
            *pod,
            json!({"spec": {"containers": [{"name": "istio-proxy", "image": "img"}]}})
        );
        let again = render(&["a".into(), "b".into()]).unwrap();
        assert_eq!(pod, again);
        let missing = render(&["c".into()]).unwrap_err();
        assert!(
            matches!(&missing, ConfigError::NoSuchTemplate { template, .. } if template == "c"),
            "{missing}"
        );
    }
}

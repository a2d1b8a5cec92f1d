//! What each mesh's injector computes beyond the profile's data.
//!
//! A profile is data: the containers, volumes and annotations to add, with
//! placeholders. Some values a mesh's injector does not take as given but
//! works out from others (Linkerd's proxy cores from its CPU request, the
//! hash of its trust anchors). Those rules are code, one module per mesh,
//! chosen by the profile's `mesh` key: the values are completed here, once
//! per distinct set of values, before any template reads them.

pub mod istio;
pub mod linkerd;

use crate::cluster::KubeVersion;
use serde::Deserialize;
use serde_json::{Map, Value};

/// The mesh whose injector a profile reproduces.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mesh {
    Linkerd,
    Istio,
    /// A profile of one's own: its values are taken as they are.
    #[default]
    None,
}

/// Which values a workload's own settings gave, over the profile's.
pub struct SetBy<'a> {
    /// Set by the pod's annotations (or its namespace's).
    pub annotations: &'a dyn Fn(&str) -> bool,
    /// Set by the flags (`--set`).
    pub flags: &'a dyn Fn(&str) -> bool,
}

impl SetBy<'_> {
    /// Nothing set: the profile's values alone.
    pub const NOTHING: SetBy<'static> = SetBy {
        annotations: &|_| false,
        flags: &|_| false,
    };

    /// Set by the annotations or the flags.
    pub fn workload(&self, name: &str) -> bool {
        (self.annotations)(name) || (self.flags)(name)
    }
}

impl Mesh {
    /// The values the mesh's injector derives from `values`, added to them
    /// (and values it normalises, rewritten). Names a profile declares under
    /// `values` are never derived, so a derived value cannot be `--set`.
    /// `set` says which values the workload's annotations and the flags set
    /// (Linkerd derives the proxy's cores from those alone; Istio's proxy
    /// gets only the resources a pod's annotations give, when they give one).
    pub fn complete(self, values: &mut Map<String, Value>, set: &SetBy<'_>) {
        match self {
            Mesh::Linkerd => linkerd::complete(values, &|name| set.workload(name)),
            Mesh::Istio => istio::complete(values, set.annotations),
            Mesh::None => {}
        }
    }

    /// The pod's container ports as the mesh's proxy reads them from its
    /// env (`{{pod.ports}}`): Istio's `ISTIO_META_POD_PORTS` list, from
    /// `containers`, the pod's own; empty for the other meshes, which read
    /// ports otherwise (`{{pod.inboundPorts}}`).
    pub fn pod_ports(self, containers: &[Value]) -> String {
        match self {
            Mesh::Istio => istio::pod_ports(containers),
            Mesh::Linkerd | Mesh::None => String::new(),
        }
    }

    /// How the mesh's injector names the workload `object` (of
    /// `namespace`, whose pod has `labels`), where it names it otherwise
    /// than by its kind and name (Istio's owner, workload and canonical
    /// names); `None` for the other meshes.
    pub fn identity(
        self,
        object: &Value,
        labels: Option<&Map<String, Value>>,
        namespace: &str,
    ) -> Option<istio::Identity> {
        match self {
            Mesh::Istio => Some(istio::identity(object, labels, namespace)),
            Mesh::Linkerd | Mesh::None => None,
        }
    }

    /// Whether the mesh's own command line records the settings it was
    /// given as pod annotations (Linkerd's `config.linkerd.io/*`), where its
    /// controllers read them.
    pub fn records_settings(self) -> bool {
        self == Mesh::Linkerd
    }

    /// Whether the mesh's injector gives its containers the capabilities
    /// the first app container adds, beside those it drops (Linkerd does,
    /// "to ensure PSP compliance").
    pub fn copies_added_capabilities(self) -> bool {
        self == Mesh::Linkerd
    }

    /// Whether the mesh's injector points `kubectl logs/exec` at the app
    /// with `kubectl.kubernetes.io/default-container` when the proxy is a
    /// classic sidecar: Istio's does, Linkerd's never writes it.
    pub fn names_default_container(self) -> bool {
        self != Mesh::Linkerd
    }

    /// Whether an annotation with a value the mesh cannot use is ignored
    /// with a warning, the default kept (Linkerd), rather than refusing the
    /// pod (Istio's injector fails on its invalid traffic annotations).
    pub fn ignores_invalid_annotations(self) -> bool {
        self == Mesh::Linkerd
    }

    /// Whether the mesh's injector can use `raw` for its value `name` (a
    /// setting it only takes from the cluster's configuration or the flags,
    /// where its chart would fail).
    pub fn check_value(self, name: &str, raw: &str) -> Result<(), String> {
        match self {
            Mesh::Linkerd => linkerd::check_value(name, raw),
            Mesh::Istio | Mesh::None => Ok(()),
        }
    }

    /// Whether the settings among [`Mesh::webhook_annotations`] are in
    /// force for the proxy: Linkerd's webhook writes them on the pod before
    /// it renders the proxy from the pod's annotations.
    pub fn renders_after_webhook_annotations(self) -> bool {
        self == Mesh::Linkerd
    }

    /// The annotations the mesh's webhook writes on a pod (whose `spec` it
    /// is; `has` says whether the pod or the injection has a key already),
    /// beside the profile's: for Linkerd, the settings the pod inherited
    /// from its namespace (in `inherited`, the pod's annotations with them),
    /// and the opaque ports among those the pod exposes; for Istio, the
    /// containers `kubectl logs` and `kubectl exec` default to, native
    /// sidecar or not.
    pub fn webhook_annotations(
        self,
        spec: &Value,
        has: &dyn Fn(&str) -> bool,
        inherited: Option<&Map<String, Value>>,
        values: &Map<String, Value>,
    ) -> Map<String, Value> {
        match self {
            Mesh::Linkerd => linkerd::webhook_annotations(spec, has, inherited, values),
            Mesh::Istio => istio::webhook_annotations(spec, values),
            Mesh::None => Map::new(),
        }
    }

    /// The annotation in which the mesh's injector records what it
    /// injected (`injected`), when its value depends on that: Istio's
    /// `sidecar.istio.io/status`.
    pub fn injection_status(
        self,
        injected: &Injected<'_>,
        values: &Map<String, Value>,
    ) -> Option<(&'static str, String)> {
        match self {
            Mesh::Istio => Some((istio::STATUS, istio::injection_status(injected, values))),
            Mesh::Linkerd | Mesh::None => None,
        }
    }

    /// Why the mesh's injector would fail on these (completed) values, if
    /// it would: the workload is then left as the failing webhook leaves it.
    pub fn refusal(self, values: &Map<String, Value>) -> Option<String> {
        match self {
            Mesh::Linkerd => linkerd::refusal(values),
            Mesh::Istio | Mesh::None => None,
        }
    }

    /// Whether the mesh reads a port list's names as the pod's named
    /// container ports (Linkerd's opaque and skipped ports), dropping with a
    /// warning what is neither a port, a range nor such a name, rather than
    /// refusing the list.
    pub fn resolves_named_ports(self) -> bool {
        self == Mesh::Linkerd
    }

    /// Whether the settings annotations of a pod's Namespace apply to the
    /// pod (Linkerd's webhook copies them; Istio's reads the pod's only).
    pub fn inherits_namespace_settings(self) -> bool {
        self != Mesh::Istio
    }

    /// Whether the pod's label of the opt-out's name decides alone when the
    /// pod has one, its annotation then unread (Istio's label is the newer
    /// API and wins: `sidecar.istio.io/inject: "true"` as a label injects a
    /// pod whose annotation says `"false"`).
    pub fn inject_label_wins(self) -> bool {
        self == Mesh::Istio
    }

    /// Whether the mesh's injector puts its volumes before the pod's own
    /// (Istio's strategic merge of its template over the pod does), rather
    /// than after them.
    pub fn puts_its_volumes_first(self) -> bool {
        self == Mesh::Istio
    }

    /// The namespace label that hands a namespace to one revision of the
    /// mesh's control plane (Istio's `istio.io/rev`): a namespace naming
    /// another revision than the profile's is outside its webhook.
    pub fn revision_label(self) -> Option<&'static str> {
        (self == Mesh::Istio).then_some("istio.io/rev")
    }

    /// The namespace label that selects a namespace for the default
    /// revision's webhook whatever revision label it has (Istio's
    /// `istio-injection: enabled`).
    pub fn injection_label(self) -> Option<(&'static str, &'static str)> {
        (self == Mesh::Istio).then_some(("istio-injection", "enabled"))
    }

    /// The revision whose webhook selects a pod by its namespace's labels
    /// and its own, with why; `None` when no label names one (the pod is
    /// then any revision's to inject). Istio's chart gives each revision
    /// webhooks that select namespaces labelled `istio.io/rev: REV` without
    /// `istio-injection`, and pods labelled `istio.io/rev: REV` in a
    /// namespace with neither label; the default revision also selects
    /// namespaces labelled `istio-injection: enabled`, whatever their
    /// revision label, and pods labelled `sidecar.istio.io/inject: "true"`
    /// without a revision label in a namespace with neither
    /// (`mutatingwebhook.yaml` of its istio-discovery chart).
    pub fn selecting_revision(
        self,
        namespace: &str,
        namespace_labels: Option<&Map<String, Value>>,
        pod_labels: Option<&Map<String, Value>>,
    ) -> Option<(String, String)> {
        let key = self.revision_label()?;
        let (injection, enabled) = self.injection_label()?;
        fn label<'a>(labels: Option<&'a Map<String, Value>>, key: &str) -> Option<&'a str> {
            labels.and_then(|l| l.get(key)).and_then(Value::as_str)
        }
        match label(namespace_labels, injection) {
            Some(value) if value == enabled => {
                return Some((
                    "default".into(),
                    format!("namespace {namespace} has the label \"{injection}: {enabled}\""),
                ));
            }
            // Another value: no revision's webhook selects the namespace
            // (the profile's never-inject labels say so).
            Some(_) => return None,
            None => {}
        }
        if let Some(revision) = label(namespace_labels, key) {
            return Some((
                revision.into(),
                format!("namespace {namespace} has the label \"{key}: {revision}\""),
            ));
        }
        if let Some(revision) = label(pod_labels, key) {
            return Some((
                revision.into(),
                format!("the pod has the label \"{key}: {revision}\""),
            ));
        }
        // A pod that opts in by label, naming no revision, is the default
        // revision's.
        let opt_in = "sidecar.istio.io/inject";
        (label(pod_labels, opt_in) == Some("true")).then(|| {
            (
                "default".into(),
                format!("the pod has the label \"{opt_in}: true\" and no {key}"),
            )
        })
    }

    /// Why the mesh's injector refuses a pod with `annotations`, in its
    /// words, if it does (its webhook then denies the pod).
    pub fn refuses_annotations(self, annotations: Option<&Map<String, Value>>) -> Option<String> {
        match self {
            Mesh::Istio => istio::validate::refusal(annotations),
            Mesh::Linkerd | Mesh::None => None,
        }
    }

    /// Whether the mesh's injector, left to decide (`auto`), makes its proxy
    /// a native sidecar on nodes of `version`: Istio's does only where native
    /// sidecars are stable, every node at 1.33 or later
    /// (`DetectNativeSidecar` in `pkg/kube/inject/webhook.go`); the others
    /// wherever the cluster runs them by default (1.29).
    pub fn native_sidecars_by_default(self, version: KubeVersion) -> bool {
        match self {
            Mesh::Istio => version >= KubeVersion::new(1, 33),
            Mesh::Linkerd | Mesh::None => version.has_native_sidecars(),
        }
    }

    /// Whether the mesh's injector merges what it renders into the pod's own
    /// containers of the same names (Istio's user-written `istio-proxy`),
    /// rather than leaving such a pod alone.
    pub fn merges_user_containers(self) -> bool {
        self == Mesh::Istio
    }

    /// Whether the mesh's agent takes over the app's probes and hooks,
    /// replacing a TCP or gRPC action by its own HTTP GET (Istio's
    /// `rewriteAppHTTPProbe`): the pipeline keeps the actions' text.
    pub fn takes_over_probes(self) -> bool {
        self == Mesh::Istio
    }

    /// The pod label the mesh writes the workload's namespace to, when it
    /// has one that its CLI writes empty for a manifest without a
    /// namespace: the only place Linkerd's injection names the namespace
    /// (its proxy reads it at run time from the downward API), so an
    /// injection with it empty holds in any namespace. Istio names the
    /// namespace in its proxy's environment (`ISTIO_META_OWNER`, where its
    /// CLI writes `default`): it has none.
    pub fn namespace_label(self) -> Option<&'static str> {
        (self == Mesh::Linkerd).then_some("linkerd.io/workload-ns")
    }

    /// Whether the mesh's webhook writes on Services too.
    pub fn annotates_services(self) -> bool {
        self == Mesh::Linkerd
    }

    /// The annotations the mesh's webhook writes on the Service `service`
    /// (whose own annotations are `own`, its namespace's `namespace`).
    pub fn service_annotations(
        self,
        service: &Value,
        own: Option<&Map<String, Value>>,
        namespace: Option<&Map<String, Value>>,
        values: &Map<String, Value>,
    ) -> Map<String, Value> {
        match self {
            Mesh::Linkerd => linkerd::service_annotations(service, own, namespace, values),
            Mesh::Istio | Mesh::None => Map::new(),
        }
    }

    /// The names [`Mesh::complete`] adds, for checking a profile's templates.
    pub fn derived_names(self) -> &'static [&'static str] {
        match self {
            Mesh::Linkerd => linkerd::DERIVED,
            Mesh::Istio => istio::DERIVED,
            Mesh::None => &[],
        }
    }
}

/// What an injection adds to a pod, by name, where it adds it.
#[derive(Debug, Default)]
pub struct Injected<'a> {
    pub init_containers: Vec<&'a str>,
    pub containers: Vec<&'a str>,
    pub volumes: Vec<&'a str>,
    /// The image pull secrets the injection adds.
    pub pull_secrets: Vec<&'a str>,
}

/// The string a value holds, numbers and booleans written out; empty for
/// null or a missing value.
pub(crate) fn text_of(values: &Map<String, Value>, name: &str) -> String {
    match values.get(name) {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

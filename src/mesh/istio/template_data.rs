//! What Istio's injection templates read: the data its injector passes them
//! (`SidecarTemplateData` in `pkg/kube/inject/inject.go` of istio/istio),
//! built from the workload, its pod and the cluster's settings.

use serde_json::Value as Json;

use super::CONTAINER_PORT_FIELDS;
use crate::gotemplate::Value;
use crate::gotemplate::value::go_name;

/// Mesh config fields the templates read, at Istio's defaults
/// (`DefaultMeshConfig` in `pkg/config/mesh` of istio/istio), for a mesh
/// config that leaves them out.
const MESH_DEFAULTS: [(&str, &str); 2] = [
    ("trustDomain", "cluster.local"),
    ("rootNamespace", "istio-system"),
];

/// Everything a template's data is made of.
#[derive(Debug, Clone, Copy)]
pub struct TemplateInputs<'a> {
    /// The workload as Istio names it (see [`super::identity`]).
    pub api_version: &'a str,
    pub kind: &'a str,
    pub name: &'a str,
    pub namespace: &'a str,
    /// The pod template's metadata and spec, an earlier injection taken out.
    pub pod_metadata: &'a Json,
    pub pod_spec: &'a Json,
    /// The chart's values (the `values` of `istio-sidecar-injector`).
    pub values: &'a Json,
    /// The mesh config (the `mesh` of the `istio` ConfigMap); Istio's
    /// defaults for what it leaves out are added (see [`MESH_DEFAULTS`]).
    pub mesh: &'a Json,
    /// The proxy's settings: the mesh's `defaultConfig` with the pod's
    /// `proxy.istio.io/config` over it, fields at their defaults left out.
    pub proxy_config: &'a Json,
    pub revision: &'a str,
    pub native_sidecars: bool,
    pub proxy_image: &'a str,
    pub proxy_init_image: &'a str,
    pub proxy_uid: i64,
    pub proxy_gid: i64,
    /// The mesh's inbound traffic policy, lower case (`localhost`), or empty.
    pub inbound_traffic_policy_mode: &'a str,
    pub compliance_policy: &'a str,
}

/// The template data, with Go's field names.
pub fn template_data(inputs: &TemplateInputs<'_>) -> Value {
    let mut spec = inputs.pod_spec.clone();
    for list in ["containers", "initContainers"] {
        for container in spec
            .get_mut(list)
            .and_then(Json::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(Json::Array(ports)) = container.get_mut("ports") {
                for port in ports.iter_mut() {
                    *port = in_go_order(port);
                }
            }
        }
    }
    let proxy_config = with_proxy_defaults(inputs.proxy_config);
    Value::structure(vec![
        (
            "TypeMeta",
            Value::structure(vec![
                ("Kind", Value::str(inputs.kind)),
                ("APIVersion", Value::str(inputs.api_version)),
            ]),
        ),
        (
            "DeploymentMeta",
            Value::structure(vec![
                ("Namespace", Value::str(inputs.namespace)),
                ("Name", Value::str(inputs.name)),
            ]),
        ),
        ("ObjectMeta", Value::from_object(inputs.pod_metadata)),
        ("Spec", Value::from_object(&spec)),
        ("ProxyConfig", proxy_config),
        (
            "MeshConfig",
            Value::from_object(&with_mesh_defaults(inputs.mesh)),
        ),
        ("Values", Value::from_json(inputs.values)),
        ("Revision", Value::str(inputs.revision)),
        ("NativeSidecars", Value::Bool(inputs.native_sidecars)),
        ("ProxyImage", Value::str(inputs.proxy_image)),
        ("ProxyInitImage", Value::str(inputs.proxy_init_image)),
        ("ProxyUID", Value::Int(inputs.proxy_uid)),
        ("ProxyGID", Value::Int(inputs.proxy_gid)),
        (
            "InboundTrafficPolicyMode",
            Value::str(inputs.inbound_traffic_policy_mode),
        ),
        ("CompliancePolicy", Value::str(inputs.compliance_policy)),
    ])
}

/// The merged proxy config as the template reads it: with Istio's defaults
/// for the fields it leaves out (a template reads
/// `.ProxyConfig.DiscoveryAddress`), those and the fields set to them
/// marked as defaults, which `protoToJSON` does not write (see
/// [`super::proxy_defaults`]).
fn with_proxy_defaults(config: &Json) -> Value {
    let mut value = Value::from_object(config);
    if let Value::Struct(fields) = &mut value {
        for field in &mut std::rc::Rc::make_mut(fields).fields {
            let json = config.get(&field.json).unwrap_or(&Json::Null);
            field.default |= super::at_proxy_default(&field.json, json);
        }
    }
    super::proxy_defaults()
        .into_iter()
        .fold(value, |value, (json, default)| {
            value.with_default(&go_name(json), json, Value::from_object(&default))
        })
}

fn with_mesh_defaults(mesh: &Json) -> Json {
    let mut mesh = mesh.clone();
    if let Json::Object(fields) = &mut mesh {
        for (key, value) in MESH_DEFAULTS {
            let absent = fields.get(key).is_none_or(|v| v.is_null() || v == "");
            if absent {
                fields.insert(key.to_string(), Json::from(value));
            }
        }
    }
    mesh
}

/// A container port's fields in Go's order (`structToJSON` writes them
/// so), the others after them.
fn in_go_order(port: &Json) -> Json {
    let Json::Object(fields) = port else {
        return port.clone();
    };
    let mut ordered = serde_json::Map::new();
    for key in CONTAINER_PORT_FIELDS {
        if let Some(value) = fields.get(key) {
            ordered.insert(key.to_string(), value.clone());
        }
    }
    for (key, value) in fields {
        if !ordered.contains_key(key) {
            ordered.insert(key.clone(), value.clone());
        }
    }
    Json::Object(ordered)
}

#[cfg(test)]
mod tests {
    use super::super::template_funcs::injection_funcs;
    use super::*;
    use crate::gotemplate::Template;
    use serde_json::json;

    #[test]
    fn the_data_reads_as_istios_templates_read_it() {
        let metadata = json!({"labels": {"app": "hello"}});
        let spec = json!({"containers": [{"name": "hello", "ports": [{"containerPort": 80, "name": "http"}]}]});
        let values = json!({"global": {"proxy": {"statusPort": 15020}}});
        let mesh = json!({"trustDomain": "cluster.local"});
        let proxy_config = json!({});
        let inputs = TemplateInputs {
            api_version: "apps/v1",
            kind: "Deployment",
            name: "hello",
            namespace: "default",
            pod_metadata: &metadata,
            pod_spec: &spec,
            values: &values,
            mesh: &mesh,
            proxy_config: &proxy_config,
            revision: "default",
            native_sidecars: true,
            proxy_image: "proxyv2",
            proxy_init_image: "proxyv2",
            proxy_uid: 1337,
            proxy_gid: 1337,
            inbound_traffic_policy_mode: "",
            compliance_policy: "",
        };
        let data = template_data(&inputs);
        let text = "{{ .TypeMeta.APIVersion }} {{ .DeploymentMeta.Name }} {{ .Values.global.proxy.statusPort }} \
                    {{ .MeshConfig.TrustDomain }} {{ .ProxyConfig.InterceptionMode.String }} {{ protoToJSON .ProxyConfig }} \
                    {{ range .Spec.Containers }}{{ range .Ports }}{{ structToJSON . }}{{ end }}{{ end }}";
        let funcs = injection_funcs();
        let out = Template::parse("t", text, &funcs)
            .unwrap()
            .execute(&data, &funcs)
            .unwrap();
        assert_eq!(
            out,
            r#"apps/v1 hello 15020 cluster.local REDIRECT {} {"name":"http","containerPort":80}"#
        );
    }
}

//! A workload's Linkerd sidecar as a release's own chart renders it (see
//! [`crate::mesh::linkerd::chart`]): the proxy, its init container (the
//! network validator in CNI mode), the debug container and the volumes
//! come from the chart's partials, rendered with the Helm values Linkerd's
//! webhook would give them ([`crate::mesh::linkerd::chart_values`]).
//!
//! The tool composes the partials as its own code decides (which init
//! container, which volumes, in which order), and the rendering takes the
//! place of the embedded profile's containers and volumes, its metadata
//! and placement settings kept: the same stages then place them (native or
//! classic, resources, security, the record uninject reads).

use serde_json::{Map, Value, json};

use crate::gotemplate;
use crate::json::Field;
use crate::mesh::linkerd::chart::{CLUSTER_VALUES, ChartError, ChartPod, LinkerdChart};
use crate::mesh::linkerd::chart_values::{self, Workload};
use crate::mesh::text_of;
use crate::profile::{Profile, Rendered};

/// What the chart renders for one workload, besides its values.
#[derive(Clone, Copy)]
pub(super) struct ChartInput<'a> {
    pub chart: &'a LinkerdChart,
    pub profile: &'a Profile,
    /// The tool's values for the workload, completed.
    pub values: &'a Map<String, Value>,
    /// Whether the workload (its annotations, its namespace's, the flags)
    /// set a value.
    pub set: &'a dyn Fn(&str) -> bool,
    /// The cluster's Helm values (`linkerd-config`), when the context has them.
    pub cluster_values: Option<&'a Value>,
    pub pod_inbound_ports: &'a str,
    pub native: bool,
}

/// The cluster's Helm values (`linkerd-config`'s `values`) in the control
/// plane's `namespace`, when the context has them; an error when it has
/// them in a form that does not read.
pub(super) fn cluster_values<'a>(
    cluster: &'a crate::cluster::ClusterContext,
    namespace: &str,
) -> Result<Option<&'a Value>, String> {
    let (name, key) = CLUSTER_VALUES;
    if let Some(values) = cluster.config_map_document(namespace, name, key) {
        return Ok(Some(values));
    }
    match cluster
        .config_map_data(namespace, name)
        .and_then(|d| d.get(key))
    {
        None => Ok(None),
        Some(_) => Err(format!(
            "ConfigMap {namespace}/{name}: data.{key} is not a YAML mapping of Helm values, which Linkerd's chart renders with"
        )),
    }
}

/// The embedded rendering with the chart's containers and volumes, and
/// whether its proxy is a native sidecar: a release from before Linkerd's
/// native sidecars renders none when asked (no `restartPolicy: Always`),
/// and its classic proxy is rendered then, as that release's webhook
/// injects it.
pub(super) fn render(
    input: &ChartInput<'_>,
    embedded: &Rendered,
) -> Result<(Rendered, bool), ChartError> {
    let pod = rendered_pod(input, embedded)?;
    let native = pod.proxy.field("restartPolicy").and_then(Value::as_str) == Some("Always");
    let pod = match input.native && !native {
        true => rendered_pod(
            &ChartInput {
                native: false,
                ..*input
            },
            embedded,
        )?,
        false => pod,
    };
    let rendered =
        embedded.with_containers(pod.init_containers, pod.proxy, pod.containers, pod.volumes);
    Ok((rendered, input.native && native))
}

/// The chart's pod for the workload, as written (see [`as_written`]).
fn rendered_pod(input: &ChartInput<'_>, embedded: &Rendered) -> Result<ChartPod, ChartError> {
    // All the rendering reads, as text: workloads alike share it.
    let mut key = format!("{}\u{0}{}\u{0}", input.pod_inbound_ports, input.native);
    for name in input.values.keys().filter(|name| (input.set)(name)) {
        key.push_str(name);
        key.push(',');
    }
    key.push_str(&Value::Object(input.values.clone()).to_string());
    if let Some(cluster) = input.cluster_values {
        key.push('\u{0}');
        key.push_str(&cluster.to_string());
    }
    let pod = input.chart.pod(key, || {
        let mut pod = render_for_real(input)?;
        as_written(&mut pod, embedded, input.native);
        Ok(pod)
    })?;
    Ok(ChartPod::clone(&pod))
}

/// The chart's pod for the workload, with the Helm values built for it.
fn render_for_real(input: &ChartInput<'_>) -> Result<ChartPod, ChartError> {
    let sources = input.profile.values_from_objects.iter().map(|s| {
        (
            s.value.as_str(),
            s.name.as_str(),
            s.key.as_str(),
            s.path.as_deref(),
        )
    });
    let paths = chart_values::helm_paths(sources, CLUSTER_VALUES.0, CLUSTER_VALUES.1);
    let helm = chart_values::helm_values(
        &input.chart.values,
        input.cluster_values,
        &Workload {
            values: input.values,
            set: input.set,
            defaults: &input.profile.values,
            paths: &paths,
            pod_inbound_ports: input.pod_inbound_ports,
            native: input.native,
        },
    );
    let namespace = text_of(input.values, "controlPlaneNamespace");
    let debug = text_of(input.values, "enableDebugSidecar") == "true";
    compose(input.chart, &helm, &namespace, debug)
}

/// The chart's pieces as the apiserver keeps them (Go's typed pod: zero
/// timings and empty fields left out, quantities canonical), their fields
/// in the order the embedded profile writes the same pieces in (the chart's
/// YAML order is no Kubernetes order), fields it lacks after them.
fn as_written(pod: &mut ChartPod, embedded: &Rendered, native: bool) {
    use crate::mesh::istio::typed::as_go_writes;
    let mut proxy_like = embedded.proxy.clone();
    if native {
        crate::profile::merge(&mut proxy_like, &embedded.native);
    } else {
        crate::profile::merge(&mut proxy_like, &embedded.classic_first);
    }
    as_go_writes(&mut pod.proxy);
    order_like(&mut pod.proxy, &proxy_like);
    let lists = [
        (&mut pod.init_containers, &embedded.init_containers),
        (&mut pod.containers, &embedded.containers),
        (&mut pod.volumes, &embedded.volumes),
    ];
    for (items, like) in lists {
        for item in items.iter_mut() {
            as_go_writes(item);
            if let Some(like) = like.iter().find(|l| same_name(l, item)) {
                order_like(item, like);
            }
        }
    }
}

fn same_name(a: &Value, b: &Value) -> bool {
    let name = |v: &Value| v.field("name").and_then(Value::as_str).map(str::to_string);
    name(a).is_some() && name(a) == name(b)
}

/// `value`'s mapping keys in the order of `like`'s, recursively (list
/// items matched by name, else by place); keys `like` lacks keep their
/// order after.
fn order_like(value: &mut Value, like: &Value) {
    match (value, like) {
        (Value::Object(map), Value::Object(like)) => {
            let mut ordered = Map::new();
            for key in like.keys() {
                if let Some((key, item)) = map.shift_remove_entry(key) {
                    ordered.insert(key, item);
                }
            }
            ordered.extend(std::mem::take(map));
            for (key, item) in ordered.iter_mut() {
                if let Some(like) = like.get(key) {
                    order_like(item, like);
                }
            }
            *map = ordered;
        }
        (Value::Array(items), Value::Array(like)) => {
            for (i, item) in items.iter_mut().enumerate() {
                let by_name = like.iter().find(|l| same_name(l, item));
                if let Some(like) = by_name.or_else(|| like.get(i)) {
                    order_like(item, like);
                }
            }
        }
        _ => {}
    }
}

/// The partials Linkerd's injector renders for a pod, with `helm` as
/// `.Values` and the control plane's `namespace` as `.Release.Namespace`:
/// the init container (proxy-init, or in CNI mode the network validator),
/// the proxy, the debug container when asked for, and the volumes they
/// mount.
pub(super) fn compose(
    chart: &LinkerdChart,
    helm: &Value,
    namespace: &str,
    debug: bool,
) -> Result<ChartPod, ChartError> {
    let data = gotemplate::Value::from_json(&json!({
        "Values": helm,
        "Release": {"Namespace": namespace, "Service": "Helm"},
    }));
    let render = |name: &str| chart.render(name, &data);
    let truthy = |path: &str| {
        path.split('.')
            .try_fold(helm, |at, key| at.field(key))
            .is_some_and(|v| gotemplate::Value::from_json(v).truthy())
    };
    let cni = truthy("cniEnabled");
    let init = if cni {
        render("partials.network-validator")?
    } else {
        render("partials.proxy-init")?
    };
    let proxy = render("partials.proxy")?;
    let containers = match debug {
        true => vec![render("partials.debug")?],
        false => Vec::new(),
    };
    let mut volumes = Vec::new();
    if !cni {
        volumes.push(render("partials.proxyInit.volumes.xtables")?);
    }
    volumes.push(render("partials.proxy.volumes.identity")?);
    if truthy("proxy.tracing.enabled") {
        volumes.push(render("partials.proxy.volumes.podinfo")?);
    }
    if truthy("identity.serviceAccountTokenProjection") {
        volumes.push(render("partials.proxy.volumes.service-account-token")?);
    }
    Ok(ChartPod {
        init_containers: vec![init],
        proxy,
        containers,
        volumes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn chart() -> LinkerdChart {
        let define = |name: &str, body: &str| {
            format!("{{{{ define \"{name}\" -}}}}\n{body}\n{{{{- end }}}}\n")
        };
        let tpl = [
            define("partials.proxy", "name: linkerd-proxy\nlevel: {{ .Values.proxy.logLevel }}\nns: {{ .Release.Namespace }}"),
            define("partials.proxy-init", "name: linkerd-init"),
            define("partials.network-validator", "name: linkerd-network-validator"),
            define("partials.debug", "name: linkerd-debug"),
            define("partials.proxyInit.volumes.xtables", "name: xtables"),
            define("partials.proxy.volumes.identity", "name: identity"),
            define("partials.proxy.volumes.service-account-token", "name: token"),
        ]
        .concat();
        let files: BTreeMap<String, String> = [
            (
                "Chart.yaml",
                "name: linkerd-control-plane\nversion: 1\n".to_string(),
            ),
            ("values.yaml", "proxy: {logLevel: warn}\n".to_string()),
            ("charts/partials/templates/_all.tpl", tpl),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        LinkerdChart::from_files("chart".into(), &files).unwrap()
    }

    fn names(items: &[Value]) -> Vec<&str> {
        items
            .iter()
            .filter_map(|i| i.field("name").and_then(Value::as_str))
            .collect()
    }

    #[test]
    fn every_value_a_workload_can_set_reaches_the_chart() {
        let profile = Profile::embedded("linkerd").unwrap();
        let sources = profile.values_from_objects.iter().map(|s| {
            (
                s.value.as_str(),
                s.name.as_str(),
                s.key.as_str(),
                s.path.as_deref(),
            )
        });
        let paths = chart_values::helm_paths(sources, CLUSTER_VALUES.0, CLUSTER_VALUES.1);
        let unmapped: Vec<&String> = profile
            .values
            .keys()
            .filter(|name| {
                !paths.iter().any(|(v, _)| v == *name)
                    && !chart_values::IN_CODE.iter().any(|(v, _)| v == *name)
            })
            .collect();
        assert!(unmapped.is_empty(), "no Helm path: {unmapped:?}");
    }

    #[test]
    fn fields_take_the_embedded_order_nested_and_by_name() {
        let mut value =
            json!({"b": 1, "z": 0, "a": [{"y": 1, "name": "n"}], "c": {"q": 1, "p": 2}});
        let like = json!({"a": [{"name": "n", "y": 0}], "b": 0, "c": {"p": 0, "q": 0}});
        order_like(&mut value, &like);
        assert_eq!(
            value.to_string(),
            r#"{"a":[{"name":"n","y":1}],"b":1,"c":{"p":2,"q":1},"z":0}"#
        );
    }

    #[test]
    fn the_init_container_and_volumes_follow_cni_and_the_token_projection() {
        let chart = chart();
        let helm = json!({"proxy": {"logLevel": "info"}, "identity": {"serviceAccountTokenProjection": true}});
        let pod = compose(&chart, &helm, "linkerd", true).unwrap();
        assert_eq!(
            pod.proxy,
            json!({"name": "linkerd-proxy", "level": "info", "ns": "linkerd"})
        );
        assert_eq!(names(&pod.init_containers), ["linkerd-init"]);
        assert_eq!(names(&pod.containers), ["linkerd-debug"]);
        assert_eq!(names(&pod.volumes), ["xtables", "identity", "token"]);
        let helm = json!({"cniEnabled": true, "proxy": {"logLevel": "info"}});
        let pod = compose(&chart, &helm, "linkerd", false).unwrap();
        assert_eq!(names(&pod.init_containers), ["linkerd-network-validator"]);
        assert!(pod.containers.is_empty());
        assert_eq!(names(&pod.volumes), ["identity"]);
    }

    #[test]
    fn a_partial_the_composition_needs_and_the_chart_lacks_is_named() {
        let chart = chart();
        let helm = json!({"proxy": {"tracing": {"enabled": true}}});
        let error = compose(&chart, &helm, "linkerd", false).unwrap_err();
        assert!(
            matches!(&error, ChartError::MissingPartial { name, .. } if name == "partials.proxy.volumes.podinfo"),
            "{error}"
        );
    }
}

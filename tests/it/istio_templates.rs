//! Istio's own injection templates (the chart's, under
//! `../shared/fidelity/istio/chart/`) run by the tool's Go template engine:
//! every template parses, and the sidecar template, run with the chart's
//! defaults for a golden case's pod, gives the proxy Istio's golden has.

use crate::common;

use mesh_inject::admission::quantity::Quantity;
use mesh_inject::gotemplate::Template;
use mesh_inject::mesh::istio::template_data::{TemplateInputs, template_data};
use mesh_inject::mesh::istio::template_funcs::injection_funcs;
use serde_json::{Value, json};

const TEMPLATES: [(&str, &str); 4] = [
    ("sidecar", "injection-template.yaml"),
    ("gateway", "gateway-injection-template.yaml"),
    ("grpc-agent", "grpc-agent.yaml"),
    ("grpc-simple", "grpc-simple.yaml"),
];

/// The chart's default values and mesh config, as the injector's ConfigMaps
/// hold them (the parts `make-configmaps.py` takes).
fn chart_settings(chart: &std::path::Path) -> (Value, Value) {
    let text = std::fs::read_to_string(chart.join("values.yaml")).unwrap();
    let all: Value = serde_yaml_ng::from_str(&text).unwrap();
    let chart = &all["_internal_defaults_do_not_set"];
    let values = json!({
        "global": chart["global"],
        "sidecarInjectorWebhook": chart["sidecarInjectorWebhook"],
        "revision": "",
        "pilot": {"cni": chart["cni"], "env": chart["env"]},
        "gateways": {"securityContext": chart["gateways"]["securityContext"], "seccompProfile": chart["gateways"]["seccompProfile"]},
    });
    let mesh = chart.get("meshConfig").cloned().unwrap_or(json!({}));
    (values, mesh)
}

/// `value` without the numbers at 0: Istio reads the rendered template into
/// a typed pod, whose optional numbers Go leaves out when they are 0.
fn without_zero_numbers(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| v.as_f64() != Some(0.0));
            map.values_mut().for_each(without_zero_numbers);
        }
        Value::Array(items) => items.iter_mut().for_each(without_zero_numbers),
        _ => {}
    }
}

#[test]
fn the_charts_templates_parse() {
    let test = "the_charts_templates_parse";
    let Some(chart) = common::shared("fidelity/istio/chart", test) else {
        return;
    };
    let funcs = injection_funcs();
    for (name, file) in TEMPLATES {
        let text = std::fs::read_to_string(chart.join(file)).unwrap();
        if let Err(error) = Template::parse(name, &text, &funcs) {
            panic!("{file}: {error}");
        }
    }
}

#[test]
fn the_sidecar_template_gives_the_proxy_of_istios_golden() {
    let test = "the_sidecar_template_gives_the_proxy_of_istios_golden";
    let Some(fidelity) = common::shared("fidelity/istio", test) else {
        return;
    };
    let chart = fidelity.join("chart");
    let (values, mesh) = chart_settings(&chart);
    let input: Value = serde_yaml_ng::from_str(
        &std::fs::read_to_string(fidelity.join("../../corpus/istio-inject-inputs/hello.yaml"))
            .unwrap(),
    )
    .unwrap();
    let golden = common::golden_objects(
        &std::fs::read_to_string(fidelity.join("golden/hello.yaml.injected")).unwrap(),
        &[],
    );
    let pod = &input["spec"]["template"];
    let proxy_config = json!({});
    let inputs = TemplateInputs {
        api_version: "apps/v1",
        kind: "Deployment",
        name: "hello",
        namespace: "default",
        pod_metadata: &pod["metadata"],
        pod_spec: &pod["spec"],
        values: &values,
        mesh: &mesh,
        proxy_config: &proxy_config,
        revision: "default",
        native_sidecars: true,
        proxy_image: "registry.istio.io/testing/proxyv2:latest",
        proxy_init_image: "registry.istio.io/testing/proxyv2:latest",
        proxy_uid: 1337,
        proxy_gid: 1337,
        inbound_traffic_policy_mode: "",
        compliance_policy: "",
    };
    let funcs = injection_funcs();
    let text = std::fs::read_to_string(chart.join("injection-template.yaml")).unwrap();
    let rendered = Template::parse("sidecar", &text, &funcs)
        .unwrap()
        .execute(&template_data(&inputs), &funcs)
        .unwrap_or_else(|e| panic!("{e}"));
    let rendered: Value = serde_yaml_ng::from_str(&rendered)
        .unwrap_or_else(|e| panic!("the rendered template is not YAML: {e}\n{rendered}"));
    let proxy_of = |spec: &Value| -> Value {
        ["initContainers", "containers"]
            .iter()
            .filter_map(|list| spec[list].as_array())
            .flatten()
            .find(|c| c["name"] == "istio-proxy")
            .cloned()
            .unwrap_or_else(|| panic!("no istio-proxy in {spec}"))
    };
    let mut got = proxy_of(&rendered["spec"]);
    without_zero_numbers(&mut got);
    common::without_serialiser_noise(&mut got, &[]);
    // Quantities as the typed pod holds them: 2000m is 2, 1024Mi 1Gi.
    for kind in ["limits", "requests"] {
        if let Some(Value::Object(quantities)) = got["resources"].get_mut(kind) {
            for quantity in quantities.values_mut() {
                let text = quantity.as_str().unwrap().to_string();
                *quantity = json!(Quantity::parse(&text).unwrap().to_string());
            }
        }
    }
    let want = proxy_of(&golden[0]["spec"]["template"]["spec"]);
    for field in [
        "image",
        "args",
        "env",
        "ports",
        "readinessProbe",
        "startupProbe",
        "resources",
        "securityContext",
        "volumeMounts",
        "lifecycle",
        "restartPolicy",
        "imagePullPolicy",
    ] {
        let differences = common::field_differences(&got[field], &want[field], field);
        assert!(differences.is_empty(), "{field}: {differences:#?}");
    }
}

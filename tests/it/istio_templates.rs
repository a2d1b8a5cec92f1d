//! Istio's own injection templates (the chart's, under
//! `../shared/fidelity/istio/chart/`) run by the tool's Go template engine:
//! every template parses, and the sidecar template, run with the chart's
//! defaults for a golden case's pod, gives the proxy Istio's golden has.

use crate::common;

use mesh_inject::gotemplate::Template;
use mesh_inject::mesh::istio::template_data::{TemplateInputs, template_data};
use mesh_inject::mesh::istio::template_funcs::injection_funcs;
use mesh_inject::mesh::istio::typed;
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

/// The cases run with the chart's defaults, with the template each selects.
///
/// Cases whose pods have probes are not among them: the agent takes the
/// probes over after the template has run, in the injector's own code.
const CASES: [(&str, &str); 8] = [
    ("hello.yaml", "sidecar"),
    ("daemonset.yaml", "sidecar"),
    ("auth.yaml", "sidecar"),
    ("auth.non-default-service-account.yaml", "sidecar"),
    ("gateway.yaml", "gateway"),
    ("gateway-with-default-container.yaml", "gateway"),
    ("grpc-agent.yaml", "grpc-agent"),
    ("grpc-simple.yaml", "grpc-simple"),
];

/// A container or volume as Istio's typed pod holds it (see
/// `typed::as_go_writes`), Go's serialiser noise taken away as from the
/// goldens.
fn as_typed(mut value: Value) -> Value {
    typed::as_go_writes(&mut value);
    common::without_serialiser_noise(&mut value, &[]);
    value
}

#[test]
fn the_charts_templates_give_the_containers_of_istios_goldens() {
    let test = "the_charts_templates_give_the_containers_of_istios_goldens";
    let Some(fidelity) = common::shared("fidelity/istio", test) else {
        return;
    };
    let chart = fidelity.join("chart");
    let (values, mesh) = chart_settings(&chart);
    let image = |name: &str| {
        format!(
            "{}/{name}:{}",
            values["global"]["hub"].as_str().unwrap(),
            values["global"]["tag"].as_str().unwrap()
        )
    };
    let funcs = injection_funcs();
    let mut failures = Vec::new();
    for (case, template) in CASES {
        let read = |path: std::path::PathBuf| std::fs::read_to_string(path).unwrap();
        let input: Value = serde_yaml_ng::from_str(&read(
            fidelity.join("../../corpus/istio-inject-inputs").join(case),
        ))
        .unwrap();
        let golden = common::golden_objects(
            &read(fidelity.join("golden").join(format!("{case}.injected"))),
            &[],
        );
        let pod = &input["spec"]["template"];
        let proxy_config = json!({});
        let proxy_image = image("proxyv2");
        let inputs = TemplateInputs {
            api_version: input["apiVersion"].as_str().unwrap(),
            kind: input["kind"].as_str().unwrap(),
            name: input["metadata"]["name"].as_str().unwrap(),
            namespace: "default",
            pod_metadata: &pod["metadata"],
            pod_spec: &pod["spec"],
            values: &values,
            mesh: &mesh,
            proxy_config: &proxy_config,
            revision: "default",
            native_sidecars: true,
            proxy_image: &proxy_image,
            proxy_init_image: &proxy_image,
            proxy_uid: 1337,
            proxy_gid: 1337,
            inbound_traffic_policy_mode: "",
            compliance_policy: "",
        };
        let file = TEMPLATES
            .iter()
            .find(|(name, _)| *name == template)
            .unwrap()
            .1;
        let rendered = Template::parse(template, &read(chart.join(file)), &funcs)
            .unwrap()
            .execute(&template_data(&inputs), &funcs)
            .unwrap_or_else(|e| panic!("{case}: {e}"));
        let rendered: Value = serde_yaml_ng::from_str(&rendered).unwrap_or_else(|e| {
            panic!("{case}: the rendered template is not YAML: {e}\n{rendered}")
        });
        let want = &golden[0]["spec"]["template"]["spec"];
        // Each container the template gives, field by field, against the
        // golden's of the same name; each volume likewise.
        for (list, key) in [
            ("initContainers", "name"),
            ("containers", "name"),
            ("volumes", "name"),
        ] {
            for item in rendered["spec"][list].as_array().into_iter().flatten() {
                let name = item[key].as_str().unwrap();
                let got = as_typed(item.clone());
                let Some(theirs) = want[list]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|c| c[key] == name)
                else {
                    failures.push(format!("{case}: {list} {name} is not in Istio's golden"));
                    continue;
                };
                for (field, value) in got.as_object().unwrap() {
                    for difference in common::field_differences(value, &theirs[field], field) {
                        failures.push(format!("{case}: {list} {name}: {difference}"));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

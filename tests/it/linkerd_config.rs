//! Linkerd as a real cluster runs it: every value of `linkerd-config` that
//! Linkerd's proxy, init, network-validator, debug and volume partials read
//! is applied as the chart renders it; a value the tool does not know is a
//! warning naming it; an unreadable or invalid one stops the run (exit 2)
//! naming the ConfigMap. The expected fields are worked out by hand from the
//! chart's partials (`charts/partials/templates/_proxy.tpl` and the like).

use crate::common;

use serde_json::{Value, json};

/// A Deployment in namespace `shop` with `annotations` on its pod template
/// and a container exposing 8080.
pub fn deployment(annotations: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  selector:
    matchLabels: {{app: web}}
  template:
    metadata:
      labels: {{app: web}}
      annotations: {{{annotations}}}
    spec:
      containers:
        - name: app
          image: app:1
          ports:
            - {{containerPort: 8080}}
"
    )
}

/// Linkerd's `linkerd-config` ConfigMap whose `values` key holds `values`
/// (Helm values, YAML, indented as written at the left margin).
pub fn linkerd_config(values: &str) -> String {
    let indented: String = values.lines().map(|l| format!("    {l}\n")).collect();
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: linkerd-config\n  namespace: linkerd\ndata:\n  values: |\n{indented}"
    )
}

/// Run with `args` on `input` (the sample trust roots as context).
fn run(input: &str, args: &[&str]) -> common::Run {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["-f", "-"]);
    common::run(&all, Some(input))
}

/// Inject the deployment (with `annotations`) beside a `linkerd-config`
/// holding `values`; the run must succeed. The workload, and the report.
fn inject_with(values: &str, annotations: &str, args: &[&str]) -> (Value, String) {
    let input = format!("{}---\n{}", linkerd_config(values), deployment(annotations));
    let run = run(&input, args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let object = common::values(&run.stdout)
        .into_iter()
        .flatten()
        .find(|v| v["kind"] == "Deployment")
        .expect("the Deployment");
    (object, run.stderr)
}

fn pod(object: &Value) -> &Value {
    &object["spec"]["template"]
}

/// The container `name` among the init containers or containers.
fn container<'a>(object: &'a Value, name: &str) -> &'a Value {
    ["initContainers", "containers"]
        .iter()
        .filter_map(|list| pod(object)["spec"][list].as_array())
        .flatten()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no container {name} in {object:#}"))
}

/// The proxy's env var `name`, `None` when it has none.
fn env(object: &Value, name: &str) -> Option<String> {
    container(object, "linkerd-proxy")["env"]
        .as_array()
        .expect("env")
        .iter()
        .find(|e| e["name"] == name)
        .map(|e| e["value"].as_str().unwrap_or_default().to_string())
}

#[test]
fn the_cpu_ratio_is_written_as_go_writes_the_parsed_number() {
    let (object, _) = inject_with(
        "proxy:\n  runtime:\n    workers:\n      maximumCPURatio: 0.10",
        "",
        &[],
    );
    assert_eq!(
        env(&object, "LINKERD2_PROXY_CORES_MAX_RATIO").as_deref(),
        Some("0.1")
    );
    let (object, _) = inject_with(
        "",
        r#"config.linkerd.io/proxy-cpu-ratio-limit: "0.250""#,
        &[],
    );
    assert_eq!(
        env(&object, "LINKERD2_PROXY_CORES_MAX_RATIO").as_deref(),
        Some("0.25")
    );
}

#[test]
fn a_classic_linkerd_proxy_names_no_default_container() {
    let (object, _) = inject_with("", "", &["--kube-version", "1.28"]);
    let containers: Vec<&Value> = pod(&object)["spec"]["containers"]
        .as_array()
        .expect("containers")
        .iter()
        .map(|c| &c["name"])
        .collect();
    assert_eq!(containers, [&json!("linkerd-proxy"), &json!("app")]);
    assert!(
        pod(&object)["metadata"]["annotations"]
            .get("kubectl.kubernetes.io/default-container")
            .is_none(),
        "{object:#}"
    );
}

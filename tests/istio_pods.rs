//! Istio-injected pods that run: what pilot-agent reads at startup is in
//! the form it parses, and the app's probes go through the agent.

mod common;

use serde_json::Value;

/// The env value `name` of the injected istio-proxy in `output`.
fn proxy_env(output: &str, name: &str) -> Option<String> {
    let docs = common::values(output);
    let doc = docs.into_iter().flatten().next().expect("a document");
    let spec = doc
        .pointer("/spec/template/spec")
        .or_else(|| doc.pointer("/spec"))
        .expect("a pod spec")
        .clone();
    ["initContainers", "containers"]
        .iter()
        .filter_map(|list| spec.get(*list).and_then(Value::as_array))
        .flatten()
        .find(|c| c["name"] == "istio-proxy")
        .and_then(|c| c["env"].as_array())
        .into_iter()
        .flatten()
        .find(|e| e["name"] == name)
        .and_then(|e| e["value"].as_str())
        .map(str::to_string)
}

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  template:
    metadata:
      labels: {app: web}
    spec:
      initContainers:
      - name: migrate
        image: migrate
        ports:
        - containerPort: 9000
      containers:
      - name: app
        image: web
        ports:
        - name: http
          containerPort: 8080
        - containerPort: 53
          protocol: UDP
      - name: log
        image: log
";

#[test]
fn pod_ports_are_the_json_list_pilot_agent_parses() {
    let run = common::run(&["-q", "--profile", "istio"], Some(DEPLOYMENT));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let ports = proxy_env(&run.stdout, "ISTIO_META_POD_PORTS").expect("the env");
    assert_eq!(
        ports,
        "[\n    {\"name\":\"http\",\"containerPort\":8080}\n    ,{\"containerPort\":53,\"protocol\":\"UDP\"}\n]"
    );
    let parsed: Vec<Value> = serde_json::from_str(&ports).expect("a JSON list");
    assert_eq!(parsed[1]["containerPort"], 53);

    // No container port: Istio's empty list (the init container's 9000 was
    // never in it).
    let portless = DEPLOYMENT
        .split("        ports:")
        .next()
        .expect("text")
        .to_string()
        + "      containers:\n      - name: app\n        image: web\n";
    let run = common::run(&["-q", "--profile", "istio"], Some(&portless));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let ports = proxy_env(&run.stdout, "ISTIO_META_POD_PORTS").expect("the env");
    assert_eq!(ports, "[\n]");
    assert!(serde_json::from_str::<Vec<Value>>(&ports).is_ok());
}

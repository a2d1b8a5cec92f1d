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
    assert_eq!(run.code, 0, "{values}: {}", run.stderr);
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

/// `linkerd-config` values and what the chart renders for them, field by
/// field: one case per value the partials read (worked out from
/// `_proxy.tpl`, `_proxy-init.tpl`, `_network-validator.tpl`,
/// `_volumes.tpl`, `_capabilities.tpl` and the injector's `patch.json`).
#[test]
fn every_value_of_linkerd_config_is_rendered_as_the_chart_renders_it() {
    type Check = fn(&Value);
    let cases: Vec<(&str, &str, &[&str], Check)> = vec![
        ("proxy.accessLog", "proxy:\n  accessLog: json", &[], |o| {
            assert_eq!(env(o, "LINKERD2_PROXY_ACCESS_LOG").as_deref(), Some("json"));
        }),
        (
            "proxy.disableInboundProtocolDetectTimeout",
            "proxy:\n  disableInboundProtocolDetectTimeout: true",
            &[],
            |o| {
                assert_eq!(
                    env(o, "LINKERD2_PROXY_INBOUND_DETECT_TIMEOUT").as_deref(),
                    Some("365d")
                );
                assert_eq!(env(o, "LINKERD2_PROXY_OUTBOUND_DETECT_TIMEOUT"), None);
            },
        ),
        (
            "proxy.disableOutboundProtocolDetectTimeout",
            "proxy:\n  disableOutboundProtocolDetectTimeout: true",
            &[],
            |o| {
                assert_eq!(
                    env(o, "LINKERD2_PROXY_OUTBOUND_DETECT_TIMEOUT").as_deref(),
                    Some("365d")
                );
            },
        ),
        (
            "proxy.enableExternalProfiles",
            "proxy:\n  enableExternalProfiles: true",
            &[],
            |o| {
                assert_eq!(
                    env(o, "LINKERD2_PROXY_DESTINATION_PROFILE_SUFFIXES").as_deref(),
                    Some(".")
                );
            },
        ),
        (
            "proxy.requireIdentityOnInboundPorts",
            "proxy:\n  requireIdentityOnInboundPorts: \"8080,9090\"",
            &[],
            |o| {
                assert_eq!(
                    env(o, "LINKERD2_PROXY_INBOUND_PORTS_REQUIRE_IDENTITY").as_deref(),
                    Some("8080,9090")
                );
            },
        ),
        (
            "proxy.requireTLSOnInboundPorts",
            "proxy:\n  requireTLSOnInboundPorts: \"8443\"",
            &[],
            |o| {
                assert_eq!(
                    env(o, "LINKERD2_PROXY_INBOUND_PORTS_REQUIRE_TLS").as_deref(),
                    Some("8443")
                );
            },
        ),
        (
            "proxy.shutdownGracePeriod",
            "proxy:\n  shutdownGracePeriod: 45s",
            &[],
            |o| {
                // As the cluster's values say it: only an annotation's is rewritten in ms.
                assert_eq!(
                    env(o, "LINKERD2_PROXY_SHUTDOWN_GRACE_PERIOD").as_deref(),
                    Some("45s")
                );
            },
        ),
        (
            "proxy.livenessProbe and readinessProbe",
            "proxy:\n  livenessProbe: {initialDelaySeconds: 30, timeoutSeconds: 5}\n  readinessProbe: {initialDelaySeconds: 0, timeoutSeconds: 3}",
            &[],
            |o| {
                let proxy = container(o, "linkerd-proxy");
                assert_eq!(
                    proxy["livenessProbe"],
                    json!({"httpGet": {"path": "/live", "port": 4191}, "initialDelaySeconds": 30, "timeoutSeconds": 5})
                );
                // A zero is no field, as Go leaves it out.
                assert_eq!(
                    proxy["readinessProbe"],
                    json!({"httpGet": {"path": "/ready", "port": 4191}, "timeoutSeconds": 3})
                );
            },
        ),
        (
            "proxy.startupProbe",
            "proxy:\n  startupProbe: {initialDelaySeconds: 4, periodSeconds: 2, failureThreshold: 60}",
            &[],
            |o| {
                assert_eq!(
                    container(o, "linkerd-proxy")["startupProbe"],
                    json!({"httpGet": {"path": "/ready", "port": 4191}, "initialDelaySeconds": 4, "periodSeconds": 2, "failureThreshold": 60})
                );
            },
        ),
        (
            "proxy.await false",
            "proxy:\n  await: false",
            &["--kube-version", "1.28"],
            |o| {
                let names: Vec<&Value> = pod(o)["spec"]["containers"]
                    .as_array()
                    .expect("containers")
                    .iter()
                    .map(|c| &c["name"])
                    .collect();
                assert_eq!(names, [&json!("app"), &json!("linkerd-proxy")]);
                assert!(container(o, "linkerd-proxy").get("lifecycle").is_none());
            },
        ),
        (
            "proxy.await false, native",
            "proxy:\n  await: false",
            &[],
            |o| {
                assert!(container(o, "linkerd-proxy").get("startupProbe").is_none());
            },
        ),
        (
            "proxy.nativeSidecar false",
            "proxy:\n  nativeSidecar: false",
            &[],
            |o| {
                assert_eq!(pod(o)["spec"]["containers"][0]["name"], "linkerd-proxy");
            },
        ),
        (
            "proxy.nativeSidecar true before 1.29",
            "proxy:\n  nativeSidecar: true",
            &["--kube-version", "1.28", "--warn-only"],
            |o| {
                assert_eq!(container(o, "linkerd-proxy")["restartPolicy"], "Always");
            },
        ),
        (
            "proxy.capabilities",
            "proxy:\n  capabilities:\n    add: [NET_BIND_SERVICE]\n    drop: [ALL, NET_RAW]",
            &[],
            |o| {
                assert_eq!(
                    container(o, "linkerd-proxy")["securityContext"]["capabilities"],
                    json!({"add": ["NET_BIND_SERVICE"], "drop": ["ALL", "NET_RAW"]})
                );
                // The init container adds them too, and drops them but what its rules need.
                assert_eq!(
                    container(o, "linkerd-init")["securityContext"]["capabilities"],
                    json!({"add": ["NET_ADMIN", "NET_RAW", "NET_BIND_SERVICE"], "drop": ["ALL"]})
                );
            },
        ),
        (
            "proxyInit.capabilities",
            "proxyInit:\n  capabilities:\n    add: [SYS_PTRACE]\n    drop: [MKNOD]",
            &[],
            |o| {
                assert_eq!(
                    container(o, "linkerd-init")["securityContext"]["capabilities"],
                    json!({"add": ["NET_ADMIN", "NET_RAW", "SYS_PTRACE"], "drop": ["MKNOD"]})
                );
                assert!(
                    container(o, "linkerd-proxy")["securityContext"]
                        .get("capabilities")
                        .is_none()
                );
            },
        ),
        (
            "proxy.securityContext",
            "proxy:\n  securityContext: {runAsUser: 1234, runAsNonRoot: true}",
            &[],
            |o| {
                assert_eq!(
                    container(o, "linkerd-proxy")["securityContext"],
                    json!({"runAsUser": 1234, "runAsNonRoot": true})
                );
            },
        ),
        (
            "proxy.saMountPath",
            "proxy:\n  saMountPath: {name: kube-api-access, mountPath: /var/run/secrets/kubernetes.io/serviceaccount, readOnly: true}",
            &[],
            |o| {
                let mount = json!({"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": "kube-api-access", "readOnly": true});
                for name in ["linkerd-proxy", "linkerd-init"] {
                    let mounts = container(o, name)["volumeMounts"]
                        .as_array()
                        .expect("mounts")
                        .clone();
                    assert_eq!(mounts.last(), Some(&mount), "{name}");
                }
            },
        ),
        (
            "proxyInit.xtMountPath.mountPath",
            "proxyInit:\n  xtMountPath: {mountPath: /var/run/xtables, name: linkerd-proxy-init-xtables-lock}",
            &[],
            |o| {
                assert_eq!(
                    container(o, "linkerd-init")["volumeMounts"],
                    json!([{"name": "linkerd-proxy-init-xtables-lock", "mountPath": "/var/run/xtables"}])
                );
            },
        ),
        (
            "identity.serviceAccountTokenProjection false",
            "identity:\n  serviceAccountTokenProjection: false",
            &[],
            |o| {
                assert_eq!(
                    env(o, "LINKERD2_PROXY_IDENTITY_TOKEN_FILE").as_deref(),
                    Some("/var/run/secrets/kubernetes.io/serviceaccount/token")
                );
                let mounts = container(o, "linkerd-proxy")["volumeMounts"].to_string();
                assert!(!mounts.contains("linkerd-identity-token"), "{mounts}");
                let volumes = pod(o)["spec"]["volumes"].to_string();
                assert!(!volumes.contains("linkerd-identity-token"), "{volumes}");
            },
        ),
        (
            "networkValidator.*",
            "cniEnabled: true\nnetworkValidator:\n  logLevel: info\n  logFormat: json\n  connectAddr: 10.9.9.9:20001\n  listenAddr: 0.0.0.0:4141\n  timeout: 30s\n  securityContext: {runAsUser: 1000}",
            &[],
            |o| {
                let validator = container(o, "linkerd-network-validator");
                assert_eq!(
                    validator["args"],
                    json!([
                        "--log-format",
                        "json",
                        "--log-level",
                        "info",
                        "--connect-addr",
                        "10.9.9.9:20001",
                        "--listen-addr",
                        "0.0.0.0:4141",
                        "--timeout",
                        "30s"
                    ])
                );
                assert_eq!(validator["securityContext"], json!({"runAsUser": 1000}));
            },
        ),
        (
            "networkValidator defaults with IPv6",
            "cniEnabled: true\ndisableIPv6: false",
            &[],
            |o| {
                let validator = container(o, "linkerd-network-validator");
                assert_eq!(
                    validator["args"],
                    json!([
                        "--log-format",
                        "plain",
                        "--log-level",
                        "debug",
                        "--connect-addr",
                        "[fd00::1]:20001",
                        "--listen-addr",
                        "[::]:4140",
                        "--timeout",
                        "10s"
                    ])
                );
                assert_eq!(
                    validator["securityContext"]["capabilities"],
                    json!({"drop": ["ALL"]})
                );
            },
        ),
        (
            "networkValidator.enableSecurityContext false",
            "cniEnabled: true\nnetworkValidator:\n  enableSecurityContext: false",
            &["--security-context", "off"],
            |o| {
                assert!(
                    container(o, "linkerd-network-validator")
                        .get("securityContext")
                        .is_none()
                );
            },
        ),
        (
            "proxy.tracing.*",
            "proxy:\n  tracing:\n    enabled: true\n    traceServiceName: my-proxy\n    labels: {team: a}\n    collector:\n      endpoint: collector.tracing:4317\n      meshIdentity: {serviceAccountName: collector, namespace: tracing}",
            &[],
            |o| {
                assert_eq!(
                    env(o, "LINKERD2_PROXY_TRACE_ATTRIBUTES_PATH").as_deref(),
                    Some("/var/run/linkerd/podinfo/labels")
                );
                assert_eq!(
                    env(o, "LINKERD2_PROXY_TRACE_ANNOTATIONS_PATH").as_deref(),
                    Some("/var/run/linkerd/podinfo/annotations")
                );
                assert_eq!(
                    env(o, "LINKERD2_PROXY_TRACE_PROTOCOL").as_deref(),
                    Some("opentelemetry")
                );
                assert_eq!(
                    env(o, "LINKERD2_PROXY_TRACE_SERVICE_NAME").as_deref(),
                    Some("my-proxy")
                );
                assert_eq!(
                    env(o, "LINKERD2_PROXY_TRACE_COLLECTOR_SVC_ADDR").as_deref(),
                    Some("collector.tracing:4317")
                );
                assert_eq!(
                    env(o, "LINKERD2_PROXY_TRACE_COLLECTOR_SVC_NAME").as_deref(),
                    Some("collector.tracing.serviceaccount.identity.linkerd.cluster.local")
                );
                assert_eq!(
                    env(o, "LINKERD2_PROXY_TRACE_EXTRA_ATTRIBUTES").as_deref(),
                    Some("team=a\n")
                );
                let mounts = container(o, "linkerd-proxy")["volumeMounts"]
                    .as_array()
                    .expect("mounts")
                    .clone();
                assert!(mounts.contains(
                    &json!({"name": "linkerd-podinfo", "mountPath": "/var/run/linkerd/podinfo"})
                ));
                let volumes = pod(o)["spec"]["volumes"]
                    .as_array()
                    .expect("volumes")
                    .clone();
                assert!(volumes.contains(&json!({"name": "linkerd-podinfo", "downwardAPI": {"items": [{"fieldRef": {"fieldPath": "metadata.labels"}, "path": "labels"}]}})));
            },
        ),
    ];
    for (what, values, args, check) in cases {
        let (object, report) = inject_with(values, "", args);
        assert!(
            !report.contains("not known to this tool"),
            "{what}: {report}"
        );
        check(&object);
    }
}

#[test]
fn tracing_adds_the_pods_service_name_and_attributes_as_the_webhook_does() {
    let values = "proxy:\n  tracing:\n    enabled: true\n    labels: {team: a, zone: z}\n    collector:\n      endpoint: collector.tracing:4317\n      meshIdentity: {serviceAccountName: collector, namespace: tracing}";
    let input = format!(
        "{}---\n{}",
        linkerd_config(values),
        deployment(r#"resource.opentelemetry.io/zone: eu, resource.opentelemetry.io/deployment.environment: prod"#)
            .replace("labels: {app: web}\n      annotations", "labels: {app: web, app.kubernetes.io/name: shop-web}\n      annotations")
    );
    let traced = run(&input, &[]);
    assert_eq!(traced.code, 0, "{}", traced.stderr);
    let object = common::values(&traced.stdout)
        .into_iter()
        .flatten()
        .find(|v| v["kind"] == "Deployment")
        .expect("the Deployment");
    assert_eq!(
        env(&object, "LINKERD2_PROXY_TRACE_EXTRA_ATTRIBUTES").as_deref(),
        Some("deployment.environment=prod\nservice.name=shop-web\nteam=a\nzone=eu\n")
    );
    // Without its collector, Linkerd's chart fails: the workload is left as it is.
    let (_, report) = {
        let input = format!(
            "{}---\n{}",
            linkerd_config("proxy:\n  tracing:\n    enabled: true"),
            deployment("")
        );
        let run = run(&input, &[]);
        (run.code, run.stderr)
    };
    assert!(
        report.contains("proxy.tracing.collector.endpoint (tracingCollectorEndpoint) must be set if proxy tracing is enabled"),
        "{report}"
    );
}

#[test]
fn a_key_the_tool_does_not_know_is_a_warning_naming_it_once() {
    let input = format!(
        "{}---\n{}---\n{}",
        linkerd_config(
            "controllerReplicas: 3\npolicyController:\n  logLevel: debug\nproxy:\n  newKnob: 1\n  logLevel: debug\nbrandNew: {a: 1}"
        ),
        deployment(""),
        deployment("").replace("name: web\n  namespace", "name: api\n  namespace")
    );
    let run = run(&input, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let warning = "warning: ConfigMap linkerd/linkerd-config: values: proxy.newKnob, brandNew.a are not known to this tool, so not applied: a proxy injected here may differ from the one the cluster's injector writes\n";
    assert_eq!(run.stderr.matches(warning).count(), 1, "{}", run.stderr);
    // Known settings of the control plane's own say nothing.
    assert!(!run.stderr.contains("controllerReplicas"), "{}", run.stderr);
    assert!(!run.stderr.contains("policyController"), "{}", run.stderr);
}

#[test]
fn unreadable_values_stop_the_run_naming_the_configmap_file_and_line() {
    let input = format!(
        "{}---\n{}",
        linkerd_config("linkerdVersion: edge-1\nproxy: [unclosed\nother: 1"),
        deployment("")
    );
    let run = run(&input, &[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.starts_with(
            "error: <stdin>: document 1, line 10:10: ConfigMap linkerd/linkerd-config: data.values does not read as YAML: "
        ),
        "{}",
        run.stderr
    );
    // In --context too, and as a List of ConfigMaps (kubectl get cm a b -o yaml).
    let dir = tempfile::tempdir().expect("a directory");
    let list = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: linkerd-config, namespace: linkerd}\n  data:\n    values: \"proxy: [x\"\n";
    let file = dir.path().join("linkerd.yaml");
    std::fs::write(&file, list).expect("written");
    let path = file.to_str().expect("UTF-8");
    let run = common::run(&["--context", path, "-f", "-"], Some(&deployment("")));
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.starts_with(&format!("error: {path}: document 1, line 8:13: ConfigMap linkerd/linkerd-config: data.values does not read as YAML")),
        "{}",
        run.stderr
    );
}

#[test]
fn values_are_checked_as_their_set_flags_are() {
    let cases = [
        (
            "proxy:\n  ports:\n    admin: notaport",
            "values: proxy.ports.admin (the profile's adminPort): expected a whole number of 0 or more, got \"notaport\"",
        ),
        (
            "proxy:\n  logFormat: xml",
            "values: proxy.logFormat (the profile's logFormat): \"xml\" is not one of json, plain",
        ),
        (
            "proxy:\n  resources:\n    cpu:\n      limit: lots",
            "values: proxy.resources.cpu.limit (the profile's proxyCPULimit): \"lots\" is not a quantity such as 100m or 1Gi",
        ),
        (
            "proxy:\n  await: maybe",
            "values: proxy.await (the profile's proxyPosition): \"maybe\" is not one of true, false",
        ),
        (
            "proxy:\n  enableShutdownEndpoint: sometimes",
            "values: proxy.enableShutdownEndpoint (the profile's enableShutdownEndpoint): expected true or false, got \"sometimes\"",
        ),
        (
            "proxyInit:\n  closeWaitTimeoutSecs: soon",
            "values: proxyInit.closeWaitTimeoutSecs (the profile's closeWaitTimeout): \"soon\" is not a duration such as 90s or 1m30s, not negative",
        ),
        (
            "proxyInit:\n  xtMountPath: {name: other, mountPath: /run}",
            "values: proxyInit.xtMountPath.name (the profile's proxyInitXtablesMountName): \"other\": Linkerd's injector adds the volume linkerd-proxy-init-xtables-lock",
        ),
    ];
    for (values, message) in cases {
        let input = format!("{}---\n{}", linkerd_config(values), deployment(""));
        let run = run(&input, &[]);
        assert_eq!(run.code, 2, "{values}: {}", run.stderr);
        assert_eq!(run.stdout, "", "{values}");
        assert!(
            run.stderr
                .contains(&format!("ConfigMap linkerd/linkerd-config: {message}")),
            "{values}: {}",
            run.stderr
        );
    }
    // The same words as --set of the value.
    let flagged = run(&deployment(""), &["--set", "adminPort=notaport"]);
    assert!(
        flagged
            .stderr
            .contains("--set adminPort: expected a whole number of 0 or more, got \"notaport\""),
        "{}",
        flagged.stderr
    );
}

/// The cluster's version: `linkerdVersion` and `proxy.image.*` of
/// `linkerd-config`, as the chart reads them (an empty `proxy.image.version`
/// is `linkerdVersion`, an empty `pullPolicy` the control plane's).
#[test]
fn the_proxy_is_the_version_the_cluster_runs() {
    let cases = [
        (
            "linkerdVersion: edge-26.9.1",
            "cr.l5d.io/linkerd/proxy:edge-26.9.1",
            "IfNotPresent",
        ),
        (
            "linkerdVersion: edge-26.9.1\nproxy:\n  image: {version: \"\"}",
            "cr.l5d.io/linkerd/proxy:edge-26.9.1",
            "IfNotPresent",
        ),
        (
            "linkerdVersion: edge-26.9.1\nimagePullPolicy: Always\nproxy:\n  image: {name: registry.example/proxy, version: stable-2.14.10, pullPolicy: \"\"}",
            "registry.example/proxy:stable-2.14.10",
            "Always",
        ),
        (
            "linkerdVersion: edge-26.9.1\nproxy:\n  image: {pullPolicy: Never}",
            "cr.l5d.io/linkerd/proxy:edge-26.9.1",
            "Never",
        ),
    ];
    for (values, image, policy) in cases {
        let (object, report) = inject_with(values, "", &[]);
        for name in ["linkerd-proxy", "linkerd-init"] {
            assert_eq!(container(&object, name)["image"], image, "{values}: {name}");
            assert_eq!(
                container(&object, name)["imagePullPolicy"],
                policy,
                "{values}: {name}"
            );
        }
        let version = image.rsplit(':').next().expect("a tag");
        assert_eq!(
            pod(&object)["metadata"]["annotations"]["linkerd.io/proxy-version"],
            version,
            "{values}"
        );
        assert!(!report.contains("from the embedded profile"), "{report}");
    }
}

/// Without the cluster's configuration, the proxy's version is the embedded
/// profile's: the report says so once, with how to take the cluster's.
#[test]
fn an_embedded_proxy_version_is_said_once_with_how_to_take_the_clusters() {
    let roots = common::cluster().join("linkerd-trust-roots.yaml");
    let roots = roots.to_str().expect("UTF-8");
    let two = format!(
        "{}---\n{}",
        deployment(""),
        deployment("").replace("name: web\n  namespace", "name: api\n  namespace")
    );
    let run = common::run_as_given(&["--context", roots, "-f", "-"], Some(&two));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let note = "note: from the embedded profile, not from your cluster: the proxy version edge-26.5.2 (no linkerd-config in the input or --context, no --set proxyVersion); to use your cluster's, save its configuration once and give it with --context:\n  kubectl mesh-inject context save cluster/\n  kubectl mesh-inject -f FILE --context cluster/\n";
    assert_eq!(run.stderr.matches(note).count(), 1, "{}", run.stderr);
    // A version given, or the cluster's configuration: nothing to say.
    for args in [
        vec!["--context", roots, "--set", "proxyVersion=edge-26.9.1"],
        vec![
            "--context",
            roots,
            "--context",
            "testdata/linkerd-config/linkerd-config.yaml",
        ],
    ] {
        let run = common::run_as_given(&[&args[..], &["-f", "-"]].concat(), Some(&two));
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(
            !run.stderr.contains("from the embedded profile"),
            "{args:?}: {}",
            run.stderr
        );
    }
    // A workload whose annotation gives its version is not the embedded profile's.
    let annotated = deployment(r#"config.linkerd.io/proxy-version: edge-26.9.1"#);
    let run = common::run_as_given(&["--context", roots, "-f", "-"], Some(&annotated));
    assert!(
        !run.stderr.contains("from the embedded profile"),
        "{}",
        run.stderr
    );
}

/// A `--set` over a pod's own annotation rewrites the annotation, as
/// `linkerd inject` writes its flags: the proxy and the annotation agree,
/// the report says so, a re-injection with the flag changes nothing and
/// `--check` with it passes; uninject gives the pod's own back.
#[test]
fn a_flag_over_a_pods_annotation_rewrites_it() {
    let original = deployment(r#"config.linkerd.io/admin-port: "5555""#);
    let run = run(&original, &["--set", "adminPort=1234"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "note: deployment/web: its annotation config.linkerd.io/admin-port: \"5555\" is rewritten \"1234\", as --set gives it\n"
        ),
        "{}",
        run.stderr
    );
    let object = common::values(&run.stdout)
        .into_iter()
        .flatten()
        .next()
        .expect("the Deployment");
    assert_eq!(
        pod(&object)["metadata"]["annotations"]["config.linkerd.io/admin-port"],
        "1234"
    );
    let proxy = container(&object, "linkerd-proxy");
    assert_eq!(
        proxy["ports"][1],
        json!({"containerPort": 1234, "name": "linkerd-admin"})
    );
    // Injecting again with the flag changes nothing; --check with it passes.
    let again = common::run(&["--set", "adminPort=1234", "-f", "-"], Some(&run.stdout));
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(again.stdout, run.stdout);
    let check = common::run(
        &["--set", "adminPort=1234", "--check", "-f", "-"],
        Some(&run.stdout),
    );
    assert_eq!(check.code, 0, "{}", check.stderr);
    // Uninject gives the pod's own value back.
    let back = common::run(&["uninject", "-f", "-"], Some(&run.stdout));
    assert_eq!(back.code, 0, "{}", back.stderr);
    assert_eq!(back.stdout, original);
}

//! Istio-injected pods that run: what pilot-agent reads at startup is in
//! the form it parses, and the app's probes go through the agent.

use crate::common;

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

/// `DEPLOYMENT` with `lines` (its pod's annotations, say) after its pod's labels.
fn with_pod_metadata(lines: &str) -> String {
    DEPLOYMENT.replace(
        "      labels: {app: web}\n",
        &format!("      labels: {{app: web}}\n{lines}"),
    )
}

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

const PROBED: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: web
        ports:
        - name: http
          containerPort: 8080
        livenessProbe:
          httpGet:
            port: http
            path: /live
          periodSeconds: 5
        readinessProbe:
          tcpSocket:
            port: 8080
          timeoutSeconds: 2
        startupProbe:
          grpc:
            port: 9090
        lifecycle:
          preStop:
            httpGet:
              port: 8081
              scheme: HTTPS
";

#[test]
fn app_probes_go_through_the_agent_and_come_back_on_uninject() {
    let run = common::run(&["-q", "--profile", "istio"], Some(PROBED));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let doc = common::values(&run.stdout).remove(0).expect("a document");
    let app = &doc["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(
        app["livenessProbe"],
        serde_json::json!({"httpGet": {"port": 15020, "path": "/app-health/app/livez"}, "periodSeconds": 5})
    );
    assert_eq!(
        app["readinessProbe"],
        serde_json::json!({"timeoutSeconds": 2, "httpGet": {"path": "/app-health/app/readyz", "port": 15020}})
    );
    assert_eq!(
        app["startupProbe"]["httpGet"]["path"],
        "/app-health/app/startupz"
    );
    assert!(app["startupProbe"].get("grpc").is_none());
    assert_eq!(
        app["lifecycle"]["preStop"]["httpGet"],
        serde_json::json!({"port": 15020, "scheme": "HTTP", "path": "/app-lifecycle/app/prestopz"})
    );
    let probers = proxy_env(&run.stdout, "ISTIO_KUBE_APP_PROBERS").expect("the env");
    assert_eq!(
        probers,
        r#"{"/app-health/app/livez":{"httpGet":{"path":"/live","port":8080}},"/app-health/app/readyz":{"tcpSocket":{"port":8080},"timeoutSeconds":2},"/app-health/app/startupz":{"grpc":{"port":9090,"service":null}},"/app-lifecycle/app/prestopz":{"httpGet":{"port":8081,"scheme":"HTTPS"}}}"#
    );
    // Injecting again changes nothing; uninject gives the probes back,
    // port names included (a TCP or gRPC action comes back after the
    // probe's other fields: the same object, not the same text).
    let again = common::run(&["-q", "--profile", "istio"], Some(&run.stdout));
    assert_eq!(again.stdout, run.stdout);
    let back = common::run(&["uninject", "-q", "--profile", "istio"], Some(&run.stdout));
    assert_eq!(back.code, 0, "{}", back.stderr);
    assert_eq!(common::values(&back.stdout), common::values(PROBED));
    let http_only = PROBED.replace(
        "        readinessProbe:\n          tcpSocket:\n            port: 8080\n          timeoutSeconds: 2\n        startupProbe:\n          grpc:\n            port: 9090\n",
        "",
    );
    assert_ne!(http_only, PROBED);
    let run = common::run(&["-q", "--profile", "istio"], Some(&http_only));
    let back = common::run(&["uninject", "-q", "--profile", "istio"], Some(&run.stdout));
    assert_eq!(back.stdout, http_only);
}

#[test]
fn the_annotation_or_the_value_keeps_the_probes_as_they_are() {
    let off = PROBED.replace(
        "      labels: {app: web}\n",
        "      labels: {app: web}\n      annotations: {sidecar.istio.io/rewriteAppHTTPProbers: \"false\"}\n",
    );
    for (input, set) in [
        (off.as_str(), None),
        (PROBED, Some("rewriteAppHTTPProbe=false")),
    ] {
        let mut args = vec!["-q", "--profile", "istio"];
        args.extend(set.iter().flat_map(|s| ["--set", s]));
        let run = common::run(&args, Some(input));
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(proxy_env(&run.stdout, "ISTIO_KUBE_APP_PROBERS").is_none());
        let doc = common::values(&run.stdout).remove(0).expect("a document");
        let app = &doc["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(app["livenessProbe"]["httpGet"]["port"], "http");
        assert!(app["readinessProbe"].get("tcpSocket").is_some());
    }
}

#[test]
fn the_status_and_default_containers_say_what_was_injected_where() {
    let annotations = |args: &[&str]| {
        let mut all = vec!["-q", "--profile", "istio"];
        all.extend_from_slice(args);
        let run = common::run(&all, Some(DEPLOYMENT));
        assert_eq!(run.code, 0, "{}", run.stderr);
        let doc = common::values(&run.stdout).remove(0).expect("a document");
        doc["spec"]["template"]["metadata"]["annotations"].clone()
    };
    let volumes = r#""volumes":["workload-socket","credential-socket","workload-certs","istio-envoy","istio-data","istio-podinfo","istio-token","istiod-ca-cert","istio-ca-crl"],"imagePullSecrets":null,"revision":"default"}"#;
    let native = annotations(&[]);
    assert_eq!(
        native["sidecar.istio.io/status"],
        format!(r#"{{"initContainers":["istio-init","istio-proxy"],"containers":null,{volumes}"#)
    );
    let classic = annotations(&["--native-sidecar", "never"]);
    assert_eq!(
        classic["sidecar.istio.io/status"],
        format!(r#"{{"initContainers":["istio-init"],"containers":["istio-proxy"],{volumes}"#)
    );
    let cni = annotations(&["--set", "cni=true"]);
    assert!(
        cni["sidecar.istio.io/status"].as_str().is_some_and(
            |s| s.starts_with(r#"{"initContainers":["istio-validation","istio-proxy"]"#)
        ),
        "{cni}"
    );
    for annotations in [native, classic] {
        assert_eq!(
            annotations["kubectl.kubernetes.io/default-container"],
            "app"
        );
        assert_eq!(
            annotations["kubectl.kubernetes.io/default-logs-container"],
            "app"
        );
    }
}

#[test]
fn the_capture_gets_its_arguments_as_istio_writes_them() {
    let init = |input: &str, args: &[&str]| {
        let mut all = vec!["-q", "--profile", "istio"];
        all.extend_from_slice(args);
        let run = common::run(&all, Some(input));
        assert_eq!(run.code, 0, "{}", run.stderr);
        let doc = common::values(&run.stdout).remove(0).expect("a document");
        let pod = doc["spec"]["template"].clone();
        (
            pod["spec"]["initContainers"][0].clone(),
            pod["metadata"]["annotations"].clone(),
        )
    };
    let (istio_init, _) = init(DEPLOYMENT, &[]);
    assert_eq!(
        istio_init["args"],
        serde_json::json!([
            "istio-iptables",
            "-p",
            "15001",
            "-z",
            "15006",
            "-u",
            "1337",
            "-m",
            "REDIRECT",
            "-i",
            "*",
            "-x",
            "",
            "-b",
            "*",
            "-d",
            "15090,15021,15020",
            "--log_output_level=default:info"
        ])
    );
    // The pod's excluded ports beside Istio's own; no status port.
    let annotated = with_pod_metadata(
        "      annotations:\n        traffic.sidecar.istio.io/excludeInboundPorts: \"4,5\"\n        status.sidecar.istio.io/port: \"0\"\n        traffic.sidecar.istio.io/excludeOutboundPorts: \"53\"\n",
    );
    let (istio_init, _) = init(&annotated, &[]);
    let args: Vec<&str> = istio_init["args"]
        .as_array()
        .expect("args")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        args[15..],
        [
            "-d",
            "15090,15021,4,5",
            "-o",
            "53",
            "--log_output_level=default:info"
        ]
    );
    // With Istio's CNI plugin: the same arguments, validated only, and the
    // settings on the pod for the plugin.
    let (validation, annotations) = init(DEPLOYMENT, &["--set", "cni=true"]);
    assert_eq!(validation["name"], "istio-validation");
    let args = validation["args"].as_array().expect("args");
    assert_eq!(
        args[args.len() - 2..],
        ["--run-validation", "--skip-rule-apply"]
    );
    assert_eq!(
        annotations["traffic.sidecar.istio.io/excludeInboundPorts"],
        "15020"
    );
    assert_eq!(annotations["sidecar.istio.io/interceptionMode"], "REDIRECT");
}

#[test]
fn the_proxy_names_its_workload_as_istio_names_it() {
    let run = common::run(&["-q", "--profile", "istio"], Some(DEPLOYMENT));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        proxy_env(&run.stdout, "ISTIO_META_OWNER").as_deref(),
        Some("kubernetes://apis/apps/v1/namespaces/shop/deployments/web")
    );
    assert_eq!(
        proxy_env(&run.stdout, "PROXY_CONFIG").as_deref(),
        Some("{}\n")
    );
    assert!(proxy_env(&run.stdout, "ISTIO_META_NETWORK").is_none());
    let run = common::run(
        &["-q", "--profile", "istio", "--set", "network=east"],
        Some(DEPLOYMENT),
    );
    assert_eq!(
        proxy_env(&run.stdout, "ISTIO_META_NETWORK").as_deref(),
        Some("east")
    );
    // A bare pod made by a controller is that controller's.
    let pod = "apiVersion: v1
kind: Pod
metadata:
  generateName: batch-28812345-
  namespace: jobs
  labels: {app: batch}
  ownerReferences:
  - {apiVersion: batch/v1, kind: Job, name: batch-28812345, controller: true, uid: u}
spec:
  containers:
  - name: app
    image: app
";
    let run = common::run(&["-q", "--profile", "istio"], Some(pod));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        proxy_env(&run.stdout, "ISTIO_META_OWNER").as_deref(),
        Some("kubernetes://apis/batch/v1/namespaces/jobs/cronjobs/batch")
    );
    assert_eq!(
        proxy_env(&run.stdout, "ISTIO_META_WORKLOAD_NAME").as_deref(),
        Some("batch")
    );
}

#[test]
fn istios_webhook_scope_and_its_label_decide_as_istio_decides() {
    let namespace = "apiVersion: v1
kind: Namespace
metadata:
  name: shop
  labels: {istio-injection: disabled}
---
";
    let run = common::run(
        &["--profile", "istio"],
        Some(&format!("{namespace}{DEPLOYMENT}")),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stdout.contains("istio-proxy"), "{}", run.stdout);
    assert!(
        run.stderr.contains("istio-injection: disabled"),
        "{}",
        run.stderr
    );

    // The pod's label wins over its annotation, either way.
    let labelled = |label: &str, annotation: &str| {
        DEPLOYMENT.replace(
            "      labels: {app: web}\n",
            &format!(
                "      labels: {{app: web, sidecar.istio.io/inject: \"{label}\"}}\n      annotations: {{sidecar.istio.io/inject: \"{annotation}\"}}\n"
            ),
        )
    };
    let run = common::run(
        &["-q", "--profile", "istio"],
        Some(&labelled("true", "false")),
    );
    assert!(run.stdout.contains("istio-proxy"), "{}", run.stdout);
    let run = common::run(
        &["-q", "--profile", "istio"],
        Some(&labelled("false", "true")),
    );
    assert!(!run.stdout.contains("istio-proxy"), "{}", run.stdout);
}

/// The containers of `list` (`initContainers`, `containers`) in the first
/// document of `output`, by name.
fn containers(output: &str, list: &str) -> Vec<Value> {
    let docs = common::values(output);
    let doc = docs.into_iter().flatten().next().expect("a document");
    doc.pointer(&format!("/spec/template/spec/{list}"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

#[test]
fn the_capture_mode_network_and_proxy_config_are_settings() {
    let input = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  template:
    metadata:
      labels: {app: web}
      annotations:
        proxy.istio.io/config: |
          proxyMetadata: {FOO: bar}
    spec:
      serviceAccountName: web
      containers:
      - {name: app, image: web}
";
    let run = common::run(
        &[
            "-q",
            "--profile",
            "istio",
            "--set",
            "interceptionMode=TPROXY",
            "--set",
            "network=west",
            "--set",
            "mountMtlsCerts=true",
            "--set",
            "proxyInitImage=example.com/init:1",
            "--set",
            r#"proxyConfig={"drainDuration":"23s"}"#,
        ],
        Some(input),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let inits = containers(&run.stdout, "initContainers");
    let init = inits
        .iter()
        .find(|c| c["name"] == "istio-init")
        .expect("istio-init");
    assert_eq!(init["image"], "example.com/init:1");
    let args: Vec<&str> = init["args"]
        .as_array()
        .expect("args")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(args.windows(2).any(|w| w == ["-m", "TPROXY"]), "{args:?}");
    assert_eq!(
        init["env"],
        serde_json::json!([{"name": "FOO", "value": "bar"}])
    );
    let proxy = inits
        .iter()
        .find(|c| c["name"] == "istio-proxy")
        .expect("istio-proxy");
    assert_eq!(
        proxy["securityContext"]["capabilities"]["add"],
        serde_json::json!(["NET_ADMIN"])
    );
    assert_eq!(proxy["securityContext"]["runAsUser"], 0);
    assert_eq!(
        proxy_env(&run.stdout, "PROXY_CONFIG").as_deref(),
        Some("{\"drainDuration\":\"23s\",\"proxyMetadata\":{\"FOO\":\"bar\"}}\n")
    );
    assert_eq!(
        proxy_env(&run.stdout, "ISTIO_META_NETWORK").as_deref(),
        Some("west")
    );
    assert_eq!(proxy_env(&run.stdout, "FOO").as_deref(), Some("bar"));
    assert!(
        run.stdout.contains("topology.istio.io/network: west"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("secretName: istio.web"),
        "{}",
        run.stdout
    );

    // No capture: no istio-init; and uninject gives the input back.
    let none = common::run(
        &[
            "-q",
            "--profile",
            "istio",
            "--set",
            "interceptionMode=NONE",
            "--set",
            "nativeSidecar=false",
        ],
        Some(input),
    );
    assert_eq!(none.code, 0, "{}", none.stderr);
    assert!(!none.stdout.contains("istio-init"), "{}", none.stdout);
    let back = common::run(
        &["uninject", "-q", "--profile", "istio"],
        Some(&none.stdout),
    );
    assert_eq!(back.code, 0, "{}", back.stderr);
    assert_eq!(common::values(&back.stdout), common::values(input));
}

#[test]
fn a_namespace_of_another_revision_is_left_to_its_webhook() {
    let namespace = |labels: &str| {
        format!(
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  labels: {{{labels}}}\n---\n{DEPLOYMENT}"
        )
    };
    let run = common::run(
        &["--profile", "istio"],
        Some(&namespace("istio.io/rev: canary")),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stdout.contains("istio-proxy"), "{}", run.stdout);
    assert!(
        run.stderr.contains("istio.io/rev: canary"),
        "{}",
        run.stderr
    );
    // This profile's revision, or istio-injection: enabled for the default one: injected.
    for (labels, revision) in [
        ("istio.io/rev: canary", "canary"),
        ("istio.io/rev: canary, istio-injection: enabled", "default"),
    ] {
        let run = common::run(
            &[
                "-q",
                "--profile",
                "istio",
                "--set",
                &format!("revision={revision}"),
            ],
            Some(&namespace(labels)),
        );
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(
            run.stdout.contains("istio-proxy"),
            "{labels}: {}",
            run.stdout
        );
    }
}

#[test]
fn user_volumes_and_metrics_merging_follow_the_pods_annotations() {
    let annotated =
        |annotations: &str| with_pod_metadata(&format!("      annotations: {{{annotations}}}\n"));
    let input = annotated(
        r#"sidecar.istio.io/userVolume: '{"extra":{"emptyDir":{}}}', sidecar.istio.io/userVolumeMount: '{"extra":{"mountPath":"/extra"}}', prometheus.io/scrape: "false""#,
    );
    let run = common::run(&["-q", "--profile", "istio"], Some(&input));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("mountPath: /extra"), "{}", run.stdout);
    assert!(!run.stdout.contains("prometheus.io/port"), "{}", run.stdout);
    let docs = common::values(&run.stdout);
    let doc = docs.into_iter().flatten().next().expect("a document");
    let volumes: Vec<&str> = doc
        .pointer("/spec/template/spec/volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v["name"].as_str())
        .collect();
    assert_eq!(volumes.last(), Some(&"extra"), "{volumes:?}");
    let back = common::run(&["uninject", "-q", "--profile", "istio"], Some(&run.stdout));
    assert_eq!(back.code, 0, "{}", back.stderr);
    assert_eq!(common::values(&back.stdout), common::values(&input));
}

#[test]
fn a_pods_own_istio_proxy_is_merged_and_given_back() {
    let input = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  template:
    metadata:
      labels: {app: web}
    spec:
      initContainers:
      - name: istio-init
        image: example.com/init
        args: [my, args]
      containers:
      - name: istio-proxy
        image: auto
        args: [-c, my-config.yaml]   # the user's own
        resources:
          limits: {cpu: 3000m}
        securityContext:
          runAsUser: 1234
      - {name: app, image: web}
";
    // Turned off: the pod is left alone, with the reason.
    let off = common::run(
        &["--profile", "istio", "--set", "mergeUserProxy=false"],
        Some(input),
    );
    assert_eq!(off.code, 0, "{}", off.stderr);
    assert_eq!(off.stdout, input);
    assert!(
        off.stderr.contains("that was not injected"),
        "{}",
        off.stderr
    );
    // Merged by default, as Istio merges it.
    let merge = ["-q", "--profile", "istio"];
    let run = common::run(&merge, Some(input));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let inits = containers(&run.stdout, "initContainers");
    let names: Vec<&str> = inits.iter().filter_map(|c| c["name"].as_str()).collect();
    assert_eq!(names, ["istio-init", "istio-proxy"]);
    assert_eq!(inits[0]["image"], "example.com/init");
    assert_eq!(inits[0]["args"], serde_json::json!(["my", "args"]));
    let proxy = &inits[1];
    assert_eq!(proxy["image"], "docker.io/istio/proxyv2:1.28.0");
    assert_eq!(proxy["args"], serde_json::json!(["-c", "my-config.yaml"]));
    assert_eq!(proxy["resources"]["limits"]["cpu"], "3");
    assert_eq!(proxy["resources"]["requests"]["cpu"], "100m");
    assert_eq!(proxy["securityContext"]["runAsUser"], 1234);
    assert_eq!(proxy["securityContext"]["runAsGroup"], 1337);
    let app: Vec<&str> = containers(&run.stdout, "containers")
        .iter()
        .filter_map(|c| c["name"].as_str().map(str::to_string))
        .map(|n| if n == "app" { "app" } else { "other" })
        .collect();
    assert_eq!(app, ["app"]);
    assert_eq!(
        proxy_env(&run.stdout, "ISTIO_META_APP_CONTAINERS").as_deref(),
        Some("app")
    );
    assert!(
        run.stdout.contains("proxy.istio.io/overrides"),
        "{}",
        run.stdout
    );

    // Injecting again changes nothing; uninject gives the pod's own back, as written.
    let again = common::run(&merge, Some(&run.stdout));
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(again.stdout, run.stdout);
    let back = common::run(&["uninject", "-q", "--profile", "istio"], Some(&run.stdout));
    assert_eq!(back.code, 0, "{}", back.stderr);
    assert_eq!(back.stdout, input);

    // A pod asking for Istio's gateway template is left alone.
    let gateway = input.replace(
        "      labels: {app: web}\n",
        "      labels: {app: web}\n      annotations: {inject.istio.io/templates: gateway}\n",
    );
    let run = common::run(&merge[1..], Some(&gateway));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("gateway template"), "{}", run.stderr);
}

#[test]
fn image_pull_secrets_go_before_the_pods_own_and_come_back_out() {
    let input = DEPLOYMENT.replace(
        "    spec:\n      initContainers:",
        "    spec:\n      imagePullSecrets:\n      - name: mine\n      initContainers:",
    );
    let args = [
        "-q",
        "--profile",
        "istio",
        "--set",
        "imagePullSecrets=theirs,mine",
    ];
    let run = common::run(&args, Some(&input));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let docs = common::values(&run.stdout);
    let doc = docs.into_iter().flatten().next().expect("a document");
    assert_eq!(
        doc.pointer("/spec/template/spec/imagePullSecrets"),
        Some(&serde_json::json!([{"name": "theirs"}, {"name": "mine"}]))
    );
    assert!(
        run.stdout
            .contains(r#""imagePullSecrets":["theirs","mine"]"#),
        "{}",
        run.stdout
    );
    for input in [input.as_str(), DEPLOYMENT] {
        let run = common::run(&args, Some(input));
        let back = common::run(&["uninject", "-q", "--profile", "istio"], Some(&run.stdout));
        assert_eq!(back.code, 0, "{}", back.stderr);
        assert_eq!(back.stdout, input);
    }
}

#[test]
fn the_mesh_wide_policies_give_the_proxy_its_env() {
    let run = common::run(
        &[
            "-q",
            "--profile",
            "istio",
            "--set",
            "inboundTrafficPolicy=LOCALHOST",
            "--set",
            "compliancePolicy=fips-140-3",
        ],
        Some(DEPLOYMENT),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let env = |name| proxy_env(&run.stdout, name);
    assert_eq!(
        env("REWRITE_PROBE_LEGACY_LOCALHOST_DESTINATION").as_deref(),
        Some("true")
    );
    assert_eq!(env("COMPLIANCE_POLICY").as_deref(), Some("fips-140-3"));
    assert_eq!(env("GODEBUG").as_deref(), Some("fips140=only"));
    let plain = common::run(&["-q", "--profile", "istio"], Some(DEPLOYMENT));
    assert!(
        !plain.stdout.contains("COMPLIANCE_POLICY"),
        "{}",
        plain.stdout
    );
    assert!(
        !plain.stdout.contains("REWRITE_PROBE_LEGACY"),
        "{}",
        plain.stdout
    );
}

#[test]
fn one_resource_annotation_gives_the_proxy_that_resource_alone() {
    // As Istio's template: with any of the four resource annotations, the
    // proxy and its init container get what the annotations give, nothing
    // of the values'; without one, the values' four.
    let annotated =
        with_pod_metadata("      annotations: {sidecar.istio.io/proxyMemoryLimit: 512Mi}\n");
    let run = common::run(&["-q", "--profile", "istio"], Some(&annotated));
    assert_eq!(run.code, 0, "{}", run.stderr);
    // (The request is the apiserver's default for a limit alone, which the
    // tool writes into the containers it adds.)
    let only_limit =
        serde_json::json!({"limits": {"memory": "512Mi"}, "requests": {"memory": "512Mi"}});
    for list in ["initContainers", "containers"] {
        for name in ["istio-init", "istio-proxy"] {
            if let Some(c) = containers(&run.stdout, list)
                .iter()
                .find(|c| c["name"] == name)
            {
                assert_eq!(c["resources"], only_limit, "{name}");
            }
        }
    }
    // A flag is a value: the other three stay.
    let run = common::run(
        &[
            "-q",
            "--profile",
            "istio",
            "--set",
            "proxyMemoryLimit=512Mi",
        ],
        Some(DEPLOYMENT),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let proxy = containers(&run.stdout, "initContainers")
        .into_iter()
        .chain(containers(&run.stdout, "containers"))
        .find(|c| c["name"] == "istio-proxy")
        .expect("proxy");
    assert_eq!(
        proxy["resources"],
        serde_json::json!({"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "2", "memory": "512Mi"}})
    );
}

#[test]
fn the_apps_metrics_settings_go_to_the_agent_and_come_back() {
    // The pod's own Prometheus annotations go into the agent's env, and
    // every spelling of them points Prometheus at the agent, in place.
    let annotated = with_pod_metadata(
        "      annotations:\n        prometheus.io/port: \"9090\"   # the app's\n        prometheus.io.path: '/m'\n",
    );
    let run = common::run(&["-q", "--profile", "istio"], Some(&annotated));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        proxy_env(&run.stdout, "ISTIO_PROMETHEUS_ANNOTATIONS").as_deref(),
        Some(r#"{"scrape":"","path":"/m","port":"9090"}"#)
    );
    assert!(
        run.stdout
            .contains("prometheus.io/port: \"15020\"   # the app's\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("prometheus.io.path: '/stats/prometheus'\n"),
        "{}",
        run.stdout
    );
    // Injecting again changes nothing; uninject gives the text back.
    let again = common::run(&["-q", "--profile", "istio"], Some(&run.stdout));
    assert_eq!(again.stdout, run.stdout);
    let back = common::run(&["uninject", "-q", "--profile", "istio"], Some(&run.stdout));
    assert_eq!(back.stdout, annotated);
    // Merging off: the pod's annotations stay, no env.
    let off = common::run(
        &["-q", "--profile", "istio", "--set", "mergeMetrics=false"],
        Some(&annotated),
    );
    assert!(
        off.stdout.contains("prometheus.io/port: \"9090\""),
        "{}",
        off.stdout
    );
    assert_eq!(proxy_env(&off.stdout, "ISTIO_PROMETHEUS_ANNOTATIONS"), None);
    // A port the agent cannot scrape: Istio refuses the pod.
    let reserved = with_pod_metadata("      annotations: {prometheus.io/port: \"15090\"}\n");
    let run = common::run(&["--profile", "istio"], Some(&reserved));
    assert!(
        run.stderr.contains(
            "invalid prometheus scrape configuration: port 15090 is reserved for Istio (Envoy Prometheus (already merged)) and cannot be scraped"
        ),
        "{}",
        run.stderr
    );
    assert_eq!(run.stdout, reserved);
    // The env is written as Go's encoding/json writes it: `&`, `<` and `>`
    // escaped (see istio_cluster_config.rs for the cluster's templates).
    let query = with_pod_metadata("      annotations: {prometheus.io/path: \"/m?a=1&b=<2>\"}\n");
    let run = common::run(&["-q", "--profile", "istio"], Some(&query));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        proxy_env(&run.stdout, "ISTIO_PROMETHEUS_ANNOTATIONS").as_deref(),
        Some(r#"{"scrape":"","path":"/m?a=1\u0026b=\u003c2\u003e","port":""}"#),
        "{}",
        run.stdout
    );
}

/// On OpenShift, Istio runs the proxy as the project's own user and group:
/// the last IDs of the namespace's `openshift.io/sa.scc.*` ranges, with the
/// embedded profile as with the cluster's templates; `--set` still wins.
#[test]
fn an_openshift_project_gives_the_proxy_its_ids() {
    let stream = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  annotations:\n    openshift.io/sa.scc.uid-range: 1000620000/10000\n    openshift.io/sa.scc.supplemental-groups: 1000700000-1000700099\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: shop}\nspec:\n  containers: [{name: app, image: app}]\n";
    let ids = |extra: &[&str]| -> (Value, Value, Vec<Value>) {
        let mut args = vec!["-q", "--profile", "istio"];
        args.extend(extra);
        let run = common::run_as_given(&args, Some(stream));
        assert_eq!(run.code, 0, "{}", run.stderr);
        let docs = common::values(&run.stdout);
        let pod = docs
            .into_iter()
            .flatten()
            .find(|d| d["kind"] == "Pod")
            .expect("the pod");
        let inits = pod["spec"]["initContainers"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let proxy = inits
            .iter()
            .find(|c| c["name"] == "istio-proxy")
            .expect("the proxy")
            .clone();
        let capture = inits
            .iter()
            .find(|c| c["name"] == "istio-init")
            .expect("istio-init");
        let args = capture["args"].as_array().expect("args").clone();
        (
            proxy["securityContext"]["runAsUser"].clone(),
            proxy["securityContext"]["runAsGroup"].clone(),
            args,
        )
    };
    let (uid, gid, args) = ids(&[]);
    assert_eq!(
        (uid, gid),
        (serde_json::json!(1000629999), serde_json::json!(1000700099))
    );
    let u = args.iter().position(|a| a == "-u").expect("-u");
    assert_eq!(args[u + 1], "1000629999");
    let (uid, _, _) = ids(&["--set", "proxyUID=4242"]);
    assert_eq!(uid, serde_json::json!(4242));
}

/// Istio's template writes the workload's name and owner into the proxy's
/// env only when the pod has a name: a pod named by `generateName` gets
/// neither (not two env entries without a value).
#[test]
fn a_pod_without_a_name_has_no_workload_name_or_owner_env() {
    let named = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: ns\nspec:\n  containers:\n  - name: app\n    image: app:1\n";
    let run = common::run(&["-q", "--profile", "istio"], Some(named));
    assert_eq!(
        proxy_env(&run.stdout, "ISTIO_META_WORKLOAD_NAME").as_deref(),
        Some("web")
    );
    assert_eq!(
        proxy_env(&run.stdout, "ISTIO_META_OWNER").as_deref(),
        Some("kubernetes://apis/v1/namespaces/ns/pods/web")
    );
    let unnamed = named.replace("  name: web\n", "  generateName: web-\n");
    let run = common::run(&["-q", "--profile", "istio"], Some(&unnamed));
    assert_eq!(run.code, 0, "{}", run.stderr);
    for name in ["ISTIO_META_WORKLOAD_NAME", "ISTIO_META_OWNER"] {
        assert!(!run.stdout.contains(name), "{name} in:\n{}", run.stdout);
    }
}

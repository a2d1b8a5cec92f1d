//! Linkerd's settings, as its injector reads them from a workload's
//! annotations, the flags and the cluster's `linkerd-config`: each gives the
//! pod Linkerd's webhook would give it, and a value Linkerd cannot use gives
//! a warning and the default, never a proxy that cannot parse its env.

use crate::common;

use serde_json::Value;

/// Trust anchors for the runs (their content is not checked here).
const ANCHORS: &str = concat!(
    "trustAnchorsPEM=",
    include_str!("../../testdata/trust-anchors/a.pem")
);

/// A Deployment in namespace `shop` with `annotations` on its pod template
/// and a container exposing `http` (8080) and `mysql` (3306).
fn deployment(annotations: &str) -> String {
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
        - name: web
          image: web:1
          ports:
            - {{containerPort: 8080, name: http}}
            - {{containerPort: 3306, name: mysql}}
"
    )
}

/// Inject `input` with `args` (and the anchors); the run must succeed.
fn inject(input: &str, args: &[&str]) -> (Value, String) {
    let mut all = vec!["--set", ANCHORS];
    all.extend(args);
    all.extend(["-f", "-"]);
    let run = common::run(&all, Some(input));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let value = common::values(&run.stdout)
        .into_iter()
        .flatten()
        .next()
        .expect("an object");
    (value, run.stderr)
}

fn pod_spec(object: &Value) -> &Value {
    &object["spec"]["template"]["spec"]
}

fn container<'a>(object: &'a Value, list: &str, name: &str) -> &'a Value {
    pod_spec(object)[list]
        .as_array()
        .and_then(|items| items.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("no {list} {name} in {object:#}"))
}

/// The proxy's env var `name`, `None` when it has none.
fn env(object: &Value, name: &str) -> Option<String> {
    let proxy = container(object, "initContainers", "linkerd-proxy");
    proxy["env"]
        .as_array()
        .expect("env")
        .iter()
        .find(|e| e["name"] == name)
        .map(|e| e["value"].as_str().unwrap_or_default().to_string())
}

fn init_args(object: &Value) -> Vec<String> {
    container(object, "initContainers", "linkerd-init")["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|a| a.as_str().expect("string").to_string())
        .collect()
}

/// The value after `flag` in `args`.
fn after(args: &[String], flag: &str) -> Option<String> {
    let at = args.iter().position(|a| a == flag)?;
    args.get(at + 1).cloned()
}

#[test]
fn named_ports_in_port_lists_are_the_pods_ports_and_unknown_names_are_dropped() {
    let input = deployment(
        "config.linkerd.io/opaque-ports: 'mysql,9000-9100,bogus', \
         config.linkerd.io/skip-inbound-ports: 'http', \
         config.linkerd.io/skip-outbound-ports: '5432,nope'",
    );
    let (object, report) = inject(&input, &[]);
    assert_eq!(
        env(
            &object,
            "LINKERD2_PROXY_INBOUND_PORTS_DISABLE_PROTOCOL_DETECTION"
        )
        .as_deref(),
        Some("3306,9000-9100")
    );
    let args = init_args(&object);
    assert_eq!(
        after(&args, "--inbound-ports-to-ignore").as_deref(),
        Some("4190,4191,8080")
    );
    assert_eq!(
        after(&args, "--outbound-ports-to-ignore").as_deref(),
        Some("5432")
    );
    for dropped in ["\"bogus\"", "\"nope\""] {
        assert!(
            report.contains(dropped) && report.contains("left out"),
            "{report}"
        );
    }
    // The annotations stay as written: Linkerd's controllers read them.
    let annotations = &object["spec"]["template"]["metadata"]["annotations"];
    assert_eq!(
        annotations["config.linkerd.io/opaque-ports"],
        "mysql,9000-9100,bogus"
    );
}

#[test]
fn the_debug_container_goes_after_the_pods_own_and_uninject_takes_it_out() {
    let input = deployment("config.linkerd.io/enable-debug-sidecar: 'true'");
    let (object, _) = inject(&input, &["--set", "linkerdVersion=v9"]);
    let containers = pod_spec(&object)["containers"].as_array().expect("list");
    let names: Vec<&str> = containers
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(names, ["web", "linkerd-debug"]);
    let debug = container(&object, "containers", "linkerd-debug");
    assert_eq!(debug["image"], "cr.l5d.io/linkerd/debug:v9");
    // A workload's proxy version and pull policy are its proxy's only.
    let (object, _) = inject(
        &deployment(
            "config.linkerd.io/enable-debug-sidecar: 'true', config.linkerd.io/proxy-version: v7, \
             config.linkerd.io/image-pull-policy: Always",
        ),
        &["--set", "linkerdVersion=v9"],
    );
    let debug = container(&object, "containers", "linkerd-debug");
    assert_eq!(
        (&debug["image"], &debug["imagePullPolicy"]),
        (
            &serde_json::json!("cr.l5d.io/linkerd/debug:v9"),
            &serde_json::json!("IfNotPresent")
        )
    );
    assert_eq!(debug["livenessProbe"]["exec"]["command"][0], "true");

    let injected = common::run(&["--set", ANCHORS, "-f", "-"], Some(&input)).stdout;
    let back = common::run(&["uninject", "-f", "-"], Some(&injected));
    assert_eq!(back.code, 0, "{}", back.stderr);
    assert_eq!(back.stdout, input);

    // Linkerd reads a boolean as Go does; anything else is a warning.
    let (object, _) = inject(
        &deployment("config.linkerd.io/enable-debug-sidecar: 'T'"),
        &[],
    );
    assert_eq!(
        pod_spec(&object)["containers"].as_array().map(Vec::len),
        Some(2)
    );
    let (object, report) = inject(
        &deployment("config.linkerd.io/enable-debug-sidecar: 'yes please'"),
        &[],
    );
    assert_eq!(
        pod_spec(&object)["containers"].as_array().map(Vec::len),
        Some(1)
    );
    assert!(report.contains("enable-debug-sidecar"), "{report}");
}

#[test]
fn a_close_wait_timeout_needs_a_root_init_container_as_linkerds_chart_says() {
    let input = deployment("config.linkerd.io/close-wait-timeout: 1m30s");
    let run = common::run(&["--set", ANCHORS, "-f", "-"], Some(&input));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, input, "left as the failing webhook leaves it");
    assert!(
        run.stderr.contains("skipped") && run.stderr.contains("proxyInitRunAsRoot"),
        "{}",
        run.stderr
    );

    let (object, _) = inject(&input, &["--set", "proxyInitRunAsRoot=true"]);
    let args = init_args(&object);
    assert_eq!(
        after(&args, "--timeout-close-wait-secs").as_deref(),
        Some("90")
    );
    let security = &container(&object, "initContainers", "linkerd-init")["securityContext"];
    assert_eq!(security["privileged"], true);
    assert_eq!(security["allowPrivilegeEscalation"], true);
    assert_eq!(security["runAsUser"], 0);
    assert_eq!(security["runAsNonRoot"], false);

    let (object, report) = inject(
        &deployment("config.linkerd.io/close-wait-timeout: \"90\""),
        &["--set", "proxyInitRunAsRoot=true"],
    );
    assert!(after(&init_args(&object), "--timeout-close-wait-secs").is_none());
    assert!(report.contains("close-wait-timeout"), "{report}");
}

#[test]
fn proxy_parameters_become_env_and_one_can_be_set_by_its_path() {
    let input = deployment("");
    let (object, _) = inject(
        &input,
        &[
            "--set",
            "proxyInboundParams.server.http2.keepAliveInterval=20s",
        ],
    );
    assert_eq!(
        env(
            &object,
            "LINKERD2_PROXY_INBOUND_SERVER_HTTP2_KEEP_ALIVE_INTERVAL"
        )
        .as_deref(),
        Some("20s")
    );
    assert_eq!(
        env(
            &object,
            "LINKERD2_PROXY_INBOUND_SERVER_HTTP2_KEEP_ALIVE_TIMEOUT"
        )
        .as_deref(),
        Some("3s")
    );
    let bad = common::run(
        &[
            "--set",
            ANCHORS,
            "--set",
            "proxyOutboundParams=7",
            "-f",
            "-",
        ],
        Some(&input),
    );
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("proxyOutboundParams"), "{}", bad.stderr);
}

#[test]
fn cores_follow_the_workloads_cpu_and_the_clusters_workers() {
    let (object, _) = inject(
        &deployment(
            "config.linkerd.io/proxy-cpu-request: 1500m, config.linkerd.io/proxy-cpu-limit: '3', \
             config.linkerd.io/proxy-cpu-ratio-limit: '0.5'",
        ),
        &[],
    );
    assert_eq!(env(&object, "LINKERD2_PROXY_CORES").as_deref(), Some("2"));
    assert_eq!(
        env(&object, "LINKERD2_PROXY_CORES_MAX").as_deref(),
        Some("3")
    );
    assert_eq!(
        env(&object, "LINKERD2_PROXY_CORES_MAX_RATIO").as_deref(),
        Some("0.5")
    );
    let (object, report) = inject(
        &deployment(
            "config.linkerd.io/proxy-cpu-ratio-limit: '1.5', config.linkerd.io/proxy-cpu-limit: lots",
        ),
        &[],
    );
    assert_eq!(env(&object, "LINKERD2_PROXY_CORES_MAX_RATIO"), None);
    assert_eq!(env(&object, "LINKERD2_PROXY_CORES_MAX"), None);
    assert!(
        report.contains("proxy-cpu-ratio-limit") && report.contains("proxy-cpu-limit"),
        "{report}"
    );

    // The cluster's values: the workers and the params of linkerd-config.
    let config = "apiVersion: v1
kind: ConfigMap
metadata: {name: linkerd-config, namespace: linkerd}
data:
  values: |
    proxy:
      runtime:
        workers: {maximum: 4}
      resources:
        cpu: {limit: '8'}
      inbound:
        server:
          http2: {keepAliveInterval: 30s}
";
    let dir = tempfile::tempdir().expect("dir");
    let context = dir.path().join("linkerd-config.yaml");
    std::fs::write(&context, config).expect("write");
    let context = context.to_string_lossy();
    let (object, _) = inject(&deployment(""), &["--context", &context]);
    assert_eq!(
        env(&object, "LINKERD2_PROXY_CORES_MAX").as_deref(),
        Some("4")
    );
    assert_eq!(
        env(
            &object,
            "LINKERD2_PROXY_INBOUND_SERVER_HTTP2_KEEP_ALIVE_INTERVAL"
        )
        .as_deref(),
        Some("30s")
    );
    assert_eq!(
        env(
            &object,
            "LINKERD2_PROXY_INBOUND_SERVER_HTTP2_KEEP_ALIVE_TIMEOUT"
        ),
        None,
        "the cluster's map replaces the profile's"
    );
}

#[test]
fn a_workload_without_a_namespace_is_told_which_one_it_was_given() {
    let input = deployment("").replace("  namespace: shop\n", "");
    let (object, report) = inject(&input, &[]);
    assert!(
        report.contains("no namespace: injected as in namespace default"),
        "{report}"
    );
    let labels = &object["spec"]["template"]["metadata"]["labels"];
    assert_eq!(labels["linkerd.io/workload-ns"], "default");
    let (object, report) = inject(&input, &["-n", "shop"]);
    assert!(!report.contains("no namespace"), "{report}");
    let labels = &object["spec"]["template"]["metadata"]["labels"];
    assert_eq!(labels["linkerd.io/workload-ns"], "shop");
    let (_, report) = inject(&deployment(""), &[]);
    assert!(!report.contains("no namespace"), "{report}");
}

#[test]
fn ipv6_and_legacy_iptables_come_from_the_flags() {
    let (object, _) = inject(
        &deployment(""),
        &["--set", "disableIPv6=false", "--set", "iptablesMode=legacy"],
    );
    let args = init_args(&object);
    assert!(
        !args
            .iter()
            .any(|a| a == "--ipv6=false" || a == "--firewall-bin-path"),
        "{args:?}"
    );
    assert_eq!(
        env(&object, "LINKERD2_PROXY_INBOUND_LISTEN_ADDR").as_deref(),
        Some("[::]:4143")
    );
    assert_eq!(
        env(&object, "LINKERD2_PROXY_OUTBOUND_LISTEN_ADDRS").as_deref(),
        Some("127.0.0.1:4140,[::1]:4140")
    );
}

/// A Service in `namespace` with `ports` (flow mappings).
fn service(namespace: &str, ports: &[&str]) -> String {
    let ports: String = ports.iter().map(|p| format!("    - {p}\n")).collect();
    format!(
        "apiVersion: v1
kind: Service
metadata:
  name: db
  namespace: {namespace}
spec:
  selector: {{app: db}}
  ports:
{ports}"
    )
}

/// The report and output of injecting `input` with `args`.
fn run_inject(input: &str, args: &[&str]) -> common::Run {
    let mut all = vec!["--set", ANCHORS];
    all.extend(args);
    all.extend(["-f", "-"]);
    let run = common::run(&all, Some(input));
    assert_eq!(run.code, 0, "{}", run.stderr);
    run
}

fn opaque_ports_of(output: &str) -> Option<String> {
    let object = common::values(output).into_iter().flatten().next()?;
    object["metadata"]["annotations"]["config.linkerd.io/opaque-ports"]
        .as_str()
        .map(str::to_string)
}

#[test]
fn services_get_the_opaque_ports_linkerds_webhook_gives_them() {
    let input = service(
        "shop",
        &[
            "{name: a, port: 9090, targetPort: 3306}",
            "{name: b, port: 5432, targetPort: 9091}",
            "{name: c, port: 6379}",
            "{name: d, port: 11211, targetPort: memcache}",
            "{name: e, port: 25, targetPort: '25'}",
        ],
    );
    let run = run_inject(&input, &[]);
    assert_eq!(opaque_ports_of(&run.stdout).as_deref(), Some("9090,6379"));
    assert!(
        run.stderr.contains("service/db annotated"),
        "{}",
        run.stderr
    );
    // Uninject gives the Service back byte for byte.
    let back = common::run(&["uninject", "-f", "-"], Some(&run.stdout));
    assert_eq!(back.stdout, input);

    // Other settings: annotating again gives what annotating the original gives.
    let again = run_inject(&run.stdout, &["--set", "opaquePorts=5432"]);
    let fresh = run_inject(&input, &["--set", "opaquePorts=5432"]);
    assert_eq!(again.stdout, fresh.stdout);
    assert_eq!(opaque_ports_of(&fresh.stdout), None, "5432 targets 9091");
    assert_eq!(fresh.stdout, input);

    // The Service's own annotation stands; the namespace's is inherited.
    let own = input.replace(
        "  namespace: shop\n",
        "  namespace: shop\n  annotations: {config.linkerd.io/opaque-ports: '1'}\n",
    );
    assert_eq!(run_inject(&own, &[]).stdout, own);
    let namespace = "apiVersion: v1
kind: Namespace
metadata:
  name: shop
  annotations: {config.linkerd.io/opaque-ports: '4000'}
---
";
    let run = run_inject(&format!("{namespace}{input}"), &[]);
    let objects = common::values(&run.stdout);
    let annotated = objects.last().cloned().flatten().expect("the service");
    assert_eq!(
        annotated["metadata"]["annotations"]["config.linkerd.io/opaque-ports"],
        "4000"
    );

    // Where the webhook never looks, and under another mesh, nothing is written.
    let system = service("kube-system", &["{port: 3306}"]);
    let run = run_inject(&system, &[]);
    assert_eq!(run.stdout, system);
    assert!(run.stderr.contains("never injects"), "{}", run.stderr);
    let istio = common::run(&["--profile", "istio", "-f", "-"], Some(&input));
    assert_eq!((istio.code, istio.stdout.as_str()), (0, input.as_str()));
}

#[test]
fn the_webhooks_own_fixtures_for_opaque_ports_are_reproduced() {
    let test = "the_webhooks_own_fixtures_for_opaque_ports_are_reproduced";
    let Some(fixtures) = common::shared("fidelity/linkerd/webhook", test) else {
        return;
    };
    // Each fixture, and the opaque ports the webhook's expected patch adds.
    for (fixture, patch) in [
        (
            "filter-service-opaque-ports.yaml",
            "filtered-service-opaque-ports.json",
        ),
        (
            "filter-pod-opaque-ports.yaml",
            "filtered-pod-opaque-ports.json",
        ),
    ] {
        let input = std::fs::read_to_string(fixtures.join(fixture)).expect("fixture");
        let patch: Value =
            serde_json::from_str(&std::fs::read_to_string(fixtures.join(patch)).expect("patch"))
                .expect("JSON");
        let want = patch
            .as_array()
            .and_then(|ops| {
                ops.iter().find(|op| {
                    op["path"] == "/metadata/annotations/config.linkerd.io~1opaque-ports"
                })
            })
            .and_then(|op| op["value"].as_str())
            .expect("the patch adds the annotation");
        let run = run_inject(&input, &["-n", "kube-public"]);
        assert_eq!(
            opaque_ports_of(&run.stdout).as_deref(),
            Some(want),
            "{fixture}"
        );
    }
    // A Service that names its opaque ports keeps them, unchanged.
    let own =
        std::fs::read_to_string(fixtures.join("service-with-opaque-ports.yaml")).expect("fixture");
    assert_eq!(run_inject(&own, &[]).stdout, own);
}

#[test]
fn only_the_namespace_settings_linkerds_webhook_copies_apply_to_its_pods() {
    let namespace = "apiVersion: v1
kind: Namespace
metadata:
  name: shop
  annotations:
    config.linkerd.io/proxy-log-level: debug
    config.linkerd.io/enable-gateway: 'true'
    config.linkerd.io/proxy-cpu-ratio-limit: '0.5'
---
";
    let run = run_inject(&format!("{namespace}{}", deployment("")), &[]);
    let object = common::values(&run.stdout)
        .into_iter()
        .flatten()
        .last()
        .expect("the deployment");
    assert_eq!(
        env(&object, "LINKERD2_PROXY_LOG")
            .as_deref()
            .map(|l| l.starts_with("debug,")),
        Some(true)
    );
    assert_eq!(
        env(&object, "LINKERD2_PROXY_INBOUND_GATEWAY_SUFFIXES"),
        None
    );
    assert_eq!(env(&object, "LINKERD2_PROXY_CORES_MAX_RATIO"), None);
    let annotations = &object["spec"]["template"]["metadata"]["annotations"];
    assert_eq!(annotations["config.linkerd.io/proxy-log-level"], "debug");
    assert!(
        annotations
            .get("config.linkerd.io/enable-gateway")
            .is_none(),
        "{annotations}"
    );

    // Istio's injector reads the pod's annotations only.
    let istio_namespace = "apiVersion: v1
kind: Namespace
metadata:
  name: shop
  annotations: {sidecar.istio.io/proxyCPU: 700m}
---
";
    let run = common::run(
        &["--profile", "istio", "-f", "-"],
        Some(&format!("{istio_namespace}{}", deployment(""))),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let injected = common::values(&run.stdout)
        .into_iter()
        .flatten()
        .last()
        .expect("the deployment")
        .to_string();
    assert!(injected.contains("istio-proxy"), "{injected}");
    assert!(!injected.contains("700m"), "{injected}");
}

#[test]
fn additional_env_is_merged_by_name_from_the_cluster_the_namespace_and_the_workload() {
    let cluster = r#"apiVersion: v1
kind: ConfigMap
metadata: {name: linkerd-config, namespace: linkerd}
data:
  values: |
    proxy:
      additionalEnv: [{name: A, value: "1"}, {name: B, value: "1"}]
      experimentalEnv: [{name: X, value: "x"}]
---
apiVersion: v1
kind: Namespace
metadata:
  name: shop
  annotations:
    config.linkerd.io/proxy-additional-env: '[{"name": "B", "value": "2"}, {"name": "C", "value": "2"}]'
---
"#;
    let pod = r#"config.linkerd.io/proxy-additional-env: '[{"name": "C", "value": "3"}, {"name": "D", "value": "3"}]'"#;
    let last = |run: &common::Run| {
        common::values(&run.stdout)
            .into_iter()
            .flatten()
            .last()
            .expect("the deployment")
    };
    let run = run_inject(&format!("{cluster}{}", deployment(pod)), &[]);
    let object = last(&run);
    let got: Vec<(String, Option<String>)> = ["A", "B", "C", "D", "X"]
        .iter()
        .map(|name| (name.to_string(), env(&object, name)))
        .collect();
    let want: Vec<(String, Option<String>)> =
        [("A", "1"), ("B", "2"), ("C", "3"), ("D", "3"), ("X", "x")]
            .iter()
            .map(|(n, v)| (n.to_string(), Some(v.to_string())))
            .collect();
    assert_eq!(got, want);

    // JSON Linkerd cannot read is a warning; the layers below stand.
    let run = run_inject(
        &format!(
            "{cluster}{}",
            deployment("config.linkerd.io/proxy-additional-env: '[oops'")
        ),
        &[],
    );
    let object = last(&run);
    assert_eq!(
        env(&object, "B").as_deref(),
        Some("2"),
        "the namespace's stands"
    );
    assert_eq!(env(&object, "D"), None);
    assert!(
        run.stderr.contains("proxy-additional-env"),
        "{}",
        run.stderr
    );
}

#[test]
fn durations_set_for_a_workload_are_written_in_whole_units_as_linkerd_writes_them() {
    let (object, _) = inject(
        &deployment(
            "config.linkerd.io/proxy-outbound-connect-timeout: 1.5s, \
             config.linkerd.io/proxy-inbound-discovery-cache-unused-timeout: 2m30.9s, \
             config.linkerd.io/shutdown-grace-period: 1m",
        ),
        &[],
    );
    assert_eq!(
        env(&object, "LINKERD2_PROXY_OUTBOUND_CONNECT_TIMEOUT").as_deref(),
        Some("1500ms")
    );
    assert_eq!(
        env(&object, "LINKERD2_PROXY_INBOUND_DISCOVERY_IDLE_TIMEOUT").as_deref(),
        Some("150s")
    );
    assert_eq!(
        env(&object, "LINKERD2_PROXY_SHUTDOWN_GRACE_PERIOD").as_deref(),
        Some("60000ms")
    );
    let (object, _) = inject(&deployment(""), &["--set", "inboundConnectTimeout=2s"]);
    assert_eq!(
        env(&object, "LINKERD2_PROXY_INBOUND_CONNECT_TIMEOUT").as_deref(),
        Some("2000ms")
    );

    // What Linkerd cannot use is a warning and the default.
    let (object, report) = inject(
        &deployment(
            "config.linkerd.io/proxy-outbound-connect-timeout: soon, \
             config.linkerd.io/default-inbound-policy: everyone, \
             config.linkerd.io/access-log: verbose",
        ),
        &[],
    );
    assert_eq!(
        env(&object, "LINKERD2_PROXY_OUTBOUND_CONNECT_TIMEOUT").as_deref(),
        Some("1000ms")
    );
    assert_eq!(
        env(&object, "LINKERD2_PROXY_INBOUND_DEFAULT_POLICY").as_deref(),
        Some("all-unauthenticated")
    );
    assert_eq!(env(&object, "LINKERD2_PROXY_ACCESS_LOG"), None);
    for annotation in [
        "proxy-outbound-connect-timeout",
        "default-inbound-policy",
        "access-log",
    ] {
        assert!(report.contains(annotation), "{annotation}: {report}");
    }
    // A flag the proxy could not read is refused.
    for bad in ["accessLog=verbose", "inboundConnectTimeout=soon"] {
        let run = common::run(
            &["--set", ANCHORS, "--set", bad, "-f", "-"],
            Some(&deployment("")),
        );
        assert_eq!(run.code, 2, "{bad}: {}", run.stderr);
    }
}

#[test]
fn the_proxy_knows_the_ports_the_pod_exposes_or_probes_in_linkerds_order() {
    let input = deployment("").replace(
        "            - {containerPort: 3306, name: mysql}\n",
        "            - {containerPort: 9, name: discard}\n          readinessProbe:\n            httpGet: {path: /ready, port: 9090}\n",
    );
    let (object, _) = inject(&input, &[]);
    assert_eq!(
        env(&object, "LINKERD2_PROXY_INBOUND_PORTS").as_deref(),
        Some("8080,9,9090"),
        "text order, probe ports too"
    );
}

#[test]
fn the_opaque_ports_the_webhook_marks_are_the_proxys() {
    // The webhook writes the exposed opaque ports on the pod, then renders
    // the proxy from the pod's annotations.
    let (object, _) = inject(&deployment(""), &[]);
    let annotations = &object["spec"]["template"]["metadata"]["annotations"];
    assert_eq!(annotations["config.linkerd.io/opaque-ports"], "3306");
    assert_eq!(
        env(
            &object,
            "LINKERD2_PROXY_INBOUND_PORTS_DISABLE_PROTOCOL_DETECTION"
        )
        .as_deref(),
        Some("3306")
    );
}

#[test]
fn what_linkerd_or_its_proxy_cannot_use_never_reaches_the_proxy() {
    // Annotations: a warning and the default.
    let (object, report) = inject(
        &deployment(
            r#"config.linkerd.io/proxy-additional-env: '[{"name": "X", "value": 5}]',
               config.linkerd.io/proxy-outbound-connect-timeout: '-5s',
               config.linkerd.io/proxy-cpu-limit: '0'"#,
        ),
        &[],
    );
    assert_eq!(env(&object, "X"), None);
    assert_eq!(
        env(&object, "LINKERD2_PROXY_OUTBOUND_CONNECT_TIMEOUT").as_deref(),
        Some("1000ms")
    );
    assert_eq!(
        env(&object, "LINKERD2_PROXY_CORES_MAX"),
        None,
        "0 is no maximum"
    );
    assert!(
        report.contains("proxy-additional-env") && report.contains("connect-timeout"),
        "{report}"
    );
    // Only the env var's own fields are kept.
    let (object, _) = inject(
        &deployment(
            r#"config.linkerd.io/proxy-additional-env: '[{"name": "A", "value": "1", "extra": true}]'"#,
        ),
        &[],
    );
    let proxy = container(&object, "initContainers", "linkerd-proxy");
    let a = proxy["env"]
        .as_array()
        .and_then(|e| e.iter().find(|v| v["name"] == "A"))
        .expect("A");
    assert_eq!(a, &serde_json::json!({"name": "A", "value": "1"}));
    // Flags: refused.
    for bad in [
        "proxyCPURequest=lots",
        "proxyWorkersMaxCPURatio=2",
        "iptablesMode=foo",
        "closeWaitTimeout=abc",
        "outboundConnectTimeout=-1s",
    ] {
        let run = common::run(
            &["--set", ANCHORS, "--set", bad, "-f", "-"],
            Some(&deployment("")),
        );
        assert_eq!(
            (run.code, run.stdout.as_str()),
            (2, ""),
            "{bad}: {}",
            run.stderr
        );
    }
}

#[test]
fn a_native_proxy_that_does_not_await_or_wait_is_rendered_as_linkerds_chart_renders_it() {
    let (object, _) = inject(
        &deployment(
            "config.linkerd.io/proxy-await: disabled, config.alpha.linkerd.io/proxy-wait-before-exit-seconds: '40'",
        ),
        &[],
    );
    let proxy = container(&object, "initContainers", "linkerd-proxy");
    assert!(proxy.get("startupProbe").is_none(), "{proxy:#}");
    assert!(proxy.get("lifecycle").is_none(), "{proxy:#}");
    assert!(
        pod_spec(&object)
            .get("terminationGracePeriodSeconds")
            .is_none()
    );
    // Awaiting, it gets the startup probe.
    let (object, _) = inject(&deployment(""), &[]);
    let proxy = container(&object, "initContainers", "linkerd-proxy");
    assert!(proxy.get("startupProbe").is_some(), "{proxy:#}");
}

//! `kubectl mesh-inject admit`: the admission chain with webhook
//! reinvocation, on the scenarios of `testdata/admit/`, with exact output.

use crate::common;

/// Run in the repository with `args`; `stdin` feeds standard input.
fn run(args: &[&str], stdin: Option<&str>) -> common::Run {
    let mut cmd = common::command_with(args);
    cmd.current_dir(common::repo())
        .write_stdin(stdin.unwrap_or("").as_bytes().to_vec());
    cmd.output().expect("runs").into()
}

const NAMESPACE: &str = "testdata/admit/namespace.yaml";
const INJECTOR: &str = "testdata/admit/injector.yaml";
const WEB: &str = "testdata/admit/web.yaml";

fn admit(extra: &[&str], version: &str) -> common::Run {
    let mut args = vec![
        "admit",
        "-f",
        WEB,
        "--context",
        NAMESPACE,
        "--context",
        INJECTOR,
        "--kube-version",
        version,
    ];
    args.extend_from_slice(extra);
    run(&args, None)
}

/// The input injected by this tool first (knowing the namespace), as the static path.
fn injected(version: &str) -> String {
    let run = run(
        &[
            "-q",
            "-f",
            WEB,
            "--context",
            NAMESPACE,
            "--kube-version",
            version,
        ],
        None,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.stdout
}

#[test]
fn scenario_1_reinvocation_gives_the_proxy_its_limit_from_1_15() {
    let before = admit(&[], "1.14");
    assert_eq!(before.code, 1);
    assert_eq!(
        before.stdout,
        "deployment/web rejected: pods \"web-\" is forbidden: failed quota: mem: must specify limits.memory for: linkerd-init,linkerd-proxy\n"
    );
    let after = admit(&["-o", "yaml"], "1.15");
    assert_eq!(after.code, 0, "{}", after.stderr);
    assert_eq!(after.stderr, "deployment/web admitted\n");
    assert!(
        after.stdout.contains("    kubernetes.io/limit-ranger: \"LimitRanger plugin set: memory request for container linkerd-proxy; memory limit for container linkerd-proxy; memory request for init container linkerd-init; memory limit for init container linkerd-init\"\n"),
        "{}",
        after.stdout
    );
    let trace = admit(&["--trace"], "1.15").stdout;
    let steps: Vec<&str> = trace.lines().filter(|l| l.starts_with("  pass")).collect();
    assert_eq!(
        steps,
        [
            "  pass 1  LimitRanger                              mutated",
            "  pass 1  ServiceAccount                           mutated",
            "  pass 1  DefaultTolerationSeconds                 mutated",
            "  pass 1  webhook linkerd-proxy-injector-webhook-config/linkerd-proxy-injector.linkerd.io (Never) mutated",
            "  pass 2  LimitRanger                              mutated",
            "  pass 2  ServiceAccount                           mutated",
            "  pass 2  DefaultTolerationSeconds                 no change",
        ]
    );
    // Static path: injected first, the injector leaves the pod alone; admitted on both.
    for version in ["1.14", "1.15"] {
        let run = run(
            &[
                "admit",
                "--context",
                NAMESPACE,
                "--context",
                INJECTOR,
                "--kube-version",
                version,
                "--trace",
            ],
            Some(&injected(version)),
        );
        assert_eq!(run.code, 0, "{version}: {}", run.stdout);
        assert!(
            run.stdout.contains(
                "            the injector left the pod alone: the pod already has linkerd-proxy\n"
            ),
            "{}",
            run.stdout
        );
        assert!(
            run.stdout.ends_with("deployment/web admitted\n"),
            "{}",
            run.stdout
        );
    }
}

#[test]
fn scenario_2_a_webhook_before_the_injector_sees_the_proxy_only_when_reinvoked() {
    let pre_stop = |policy: &str, stdin: Option<&str>| {
        let file = format!("testdata/admit/prestop-{policy}.yaml");
        let mut args = vec![
            "admit",
            "--context",
            NAMESPACE,
            "--context",
            INJECTOR,
            "--context",
            &file,
            "--kube-version",
            "1.15",
            "-o",
            "json",
            "-q",
        ];
        if stdin.is_none() {
            args.extend(["-f", WEB]);
        }
        let run = run(&args, stdin);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let pod: serde_json::Value = serde_json::from_str(&run.stdout).expect("a pod");
        let proxy = pod["spec"]["containers"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["name"] == "linkerd-proxy"))
            .cloned()
            .expect("the proxy");
        proxy["lifecycle"]["preStop"].clone()
    };
    let hook = serde_json::json!({"exec": {"command": ["/bin/sleep", "10"]}});
    assert_eq!(pre_stop("never", None), serde_json::Value::Null);
    assert_eq!(pre_stop("ifneeded", None), hook);
    let trace = admit(
        &[
            "--context",
            "testdata/admit/prestop-ifneeded.yaml",
            "--trace",
        ],
        "1.15",
    )
    .stdout;
    assert!(
        trace.contains("  pass 1  webhook a-prestop/prestop.example.com (IfNeeded) no change\n"),
        "{trace}"
    );
    assert!(trace.contains("  pass 2  webhook a-prestop/prestop.example.com (IfNeeded) mutated\n            add /spec/containers/0/lifecycle/preStop {\"exec\":{\"command\":[\"/bin/sleep\",\"10\"]}}\n"), "{trace}");
    // Static path: the proxy is there in pass 1.
    let static_input = injected("1.15");
    assert_eq!(pre_stop("never", Some(&static_input)), hook);
    assert_eq!(pre_stop("ifneeded", Some(&static_input)), hook);
}

#[test]
fn scenario_3_pod_security_policy_defaults_the_proxy_only_when_it_sees_it() {
    let compare = |version: &str| {
        admit(
            &["--context", "testdata/admit/psp.yaml", "--compare"],
            version,
        )
    };
    let old = compare("1.14");
    assert_eq!(old.code, 1);
    assert!(old.stdout.starts_with(
        "deployment/web (webhook path) rejected:\n  pods \"web-\" is forbidden: unable to validate against any pod security policy: []\n  pods \"web-\" is forbidden: failed quota: mem: must specify limits.memory for: linkerd-init,linkerd-proxy\ndeployment/web (static path) admitted\n  the static path's pod differs from the webhook path's:\n"
    ), "{}", old.stdout);
    assert!(old.stdout.contains("    add /spec/containers/linkerd-proxy/securityContext/capabilities {\"add\":[\"CHOWN\"],\"drop\":[\"SYS_ADMIN\"]}\n"), "{}", old.stdout);
    let new = compare("1.24");
    assert_eq!(new.code, 0, "{}", new.stdout);
    assert!(
        new.stdout.starts_with(
            "deployment/web (webhook path) admitted\ndeployment/web (static path) admitted\n"
        ),
        "{}",
        new.stdout
    );
    // From 1.24's pass 2 the policy defaulted the proxy too: the pods differ only in labels and annotations.
    assert!(!new.stdout.contains("/spec/"), "{}", new.stdout);
}

#[test]
fn scenario_4_native_sidecars_need_1_29() {
    let native = |version: &str| {
        run(
            &[
                "admit",
                "-f",
                "testdata/admit/native.yaml",
                "--context",
                INJECTOR,
                "--kube-version",
                version,
            ],
            None,
        )
    };
    let dropped = native("1.28");
    assert_eq!(dropped.code, 1);
    assert_eq!(
        dropped.stdout,
        "deployment/worker rejected: Pod \"worker-\" is invalid: [spec.initContainers[1].livenessProbe: Forbidden: may not be set for init containers without restartPolicy=Always, spec.initContainers[1].readinessProbe: Forbidden: may not be set for init containers without restartPolicy=Always, spec.initContainers[1].startupProbe: Forbidden: may not be set for init containers without restartPolicy=Always]\n  warning: spec.initContainers[1].restartPolicy is dropped by the apiserver (the SidecarContainers feature gate is off by default in 1.28): init container linkerd-proxy must exit before the app containers start\n"
    );
    let kept = native("1.29");
    assert_eq!(
        (kept.code, kept.stdout.as_str()),
        (0, "deployment/worker admitted\n")
    );
}

#[test]
fn webhooks_without_an_emulation_are_reported_and_skipped() {
    let config = "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata: {name: vault}\nwebhooks:\n- name: vault.hashicorp.com\n  rules: [{operations: [CREATE], apiGroups: [\"\"], apiVersions: [v1], resources: [pods]}]\n";
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("vault.yaml");
    std::fs::write(&path, config).expect("write");
    let run = admit(&["--context", path.to_str().expect("utf-8")], "1.33");
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(
        run.stdout,
        "deployment/web admitted\n  warning: webhook vault/vault.hashicorp.com: not emulated (no WebhookEmulation declares what it does), so skipped\n"
    );
}

#[test]
fn the_readme_walkthrough_is_what_the_tool_prints() {
    let readme = common::doc("docs/admission.md");
    for (command, version) in [
        (
            "$ kubectl mesh-inject admit -f testdata/admit/web.yaml --context testdata/admit/namespace.yaml --context testdata/admit/injector.yaml --context testdata/cluster/ --kube-version 1.14\n",
            "1.14",
        ),
        (
            "$ kubectl mesh-inject admit -f testdata/admit/web.yaml --context testdata/admit/namespace.yaml --context testdata/admit/injector.yaml --context testdata/cluster/ --kube-version 1.15 --trace\n",
            "1.15",
        ),
    ] {
        let start = readme
            .find(command)
            .expect("the walkthrough is in docs/admission.md")
            + command.len();
        let end = start + readme[start..].find("```").expect("the block ends");
        let extra: &[&str] = if command.contains("--trace") {
            &["--trace"]
        } else {
            &[]
        };
        let run = admit(extra, version);
        assert_eq!(run.stdout, readme[start..end], "{command}");
    }
}

#[test]
fn typed_lists_are_admitted_item_by_item() {
    // A DeploymentList beside a LimitRangeList, as `kubectl get -o yaml` writes them.
    let input = "\
apiVersion: v1
kind: LimitRangeList
items:
- apiVersion: v1
  kind: LimitRange
  metadata: {name: limits, namespace: shop}
  spec:
    limits:
    - type: Container
      max: {memory: 1Gi}
---
apiVersion: apps/v1
kind: DeploymentList
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: web, namespace: shop}
  spec:
    template:
      spec:
        containers:
        - {name: app, image: example/app:1, resources: {limits: {memory: 2Gi}}}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: api, namespace: shop}
  spec:
    template:
      spec:
        containers:
        - {name: app, image: example/app:1}
";
    let run = run(&["admit"], Some(input));
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "deployment/web rejected: pods \"web-\" is forbidden: maximum memory usage per Container is 1Gi, but limit is 2Gi\ndeployment/api admitted\n"
    );
}

#[test]
fn host_network_ports_are_host_ports() {
    // With hostNetwork the apiserver gives every container port its number
    // as hostPort (SetDefaults_Pod), so baseline's hostPort check fires too.
    let input = "\
apiVersion: v1
kind: Namespace
metadata:
  name: shop
  labels: {pod-security.kubernetes.io/enforce: baseline}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  template:
    spec:
      hostNetwork: true
      containers:
      - name: a
        image: example/app:1
        ports: [{containerPort: 8080}]
";
    for version in ["1.27", "1.33"] {
        let run = run(&["admit", "--kube-version", version], Some(input));
        assert_eq!(run.code, 1, "{}", run.stderr);
        assert_eq!(
            run.stdout,
            "deployment/web rejected: pods \"web-\" is forbidden: violates PodSecurity \"baseline:latest\": host namespaces (hostNetwork=true), hostPort (container \"a\" uses hostPort 8080)\n",
            "{version}"
        );
    }
    // Two containers on one port then claim one host port: before 1.28 the
    // template holds the defaults and is invalid (an invalid object draws no
    // warnings); from 1.28 only the pod does.
    let twice = input.replace(
        "        ports: [{containerPort: 8080}]\n",
        "        ports: [{containerPort: 8080}]\n      - name: b\n        image: example/app:1\n        ports: [{containerPort: 8080}]\n",
    );
    let privileged = twice.replace("enforce: baseline", "enforce: privileged");
    let run_at = |version: &str| run(&["admit", "--kube-version", version], Some(&privileged));
    assert_eq!(
        run_at("1.27").stdout,
        "deployment/web rejected: Deployment.apps \"web\" is invalid: spec.template.spec.containers[1].ports[0].hostPort: Duplicate value: \"TCP//8080\"\n"
    );
    // The valid template draws the apiserver's warning when the Deployment is created.
    assert_eq!(
        run_at("1.28").stdout,
        "deployment/web rejected: Pod \"web-\" is invalid: spec.containers[1].ports[0].hostPort: Duplicate value: \"TCP//8080\"\n  warning: spec.template.spec.containers[1].ports[0]: duplicate port definition with spec.template.spec.containers[0].ports[0]\n"
    );
}

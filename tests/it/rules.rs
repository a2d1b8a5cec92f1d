//! The injection rules, checked on the real binary's output: both profiles,
//! native and classic sidecars, every workload kind, shutdown, resources,
//! security context, custom resources, identity, precedence.

use crate::common;

use std::collections::HashSet;

use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use serde_json::{Value, json};

const WORKLOADS: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: web:1
        ports: [{containerPort: 8080, name: http}]
        securityContext:
          capabilities: {add: [NET_BIND_SERVICE], drop: [ALL]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: shop}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      initContainers: [{name: migrate, image: migrate:1}]
      containers: [{name: db, image: db:1, ports: [{containerPort: 5432}]}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: shop}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: agent:1}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: shop}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: migrate:1}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: report, namespace: shop}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: report, image: report:1}]
---
apiVersion: v1
kind: Pod
metadata: {name: debug, namespace: shop}
spec:
  containers: [{name: debug, image: busybox}]
"#;

/// Run with `args` on `input` and return the objects (`-o json`) and the report.
fn inject(args: &[&str], input: &str) -> (Vec<Value>, String) {
    let mut all = vec!["-o", "json", "--warn-only"];
    all.extend_from_slice(args);
    let run = common::run(&all, Some(input));
    assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    let value: Value = serde_json::from_str(&run.stdout).expect("JSON output");
    let items = match value.get("items") {
        Some(Value::Array(items)) if value["kind"] == "List" => items.clone(),
        _ => vec![value],
    };
    (items, run.stderr)
}

/// The pod template (or pod) of a workload, with its metadata and spec.
fn pod_of(object: &Value) -> &Value {
    match object["kind"].as_str() {
        Some("Pod") => object,
        Some("CronJob") => &object["spec"]["jobTemplate"]["spec"]["template"],
        _ => &object["spec"]["template"],
    }
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str())
        .collect()
}

fn container<'a>(pod: &'a Value, name: &str) -> &'a Value {
    ["initContainers", "containers"]
        .iter()
        .flat_map(|list| pod["spec"][list].as_array().into_iter().flatten())
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no container {name} in {pod}"))
}

/// Every injected pod must be a valid Kubernetes object: it deserialises into
/// the Kubernetes type with no field lost, and has no duplicate names or ports.
fn assert_valid(object: &Value) {
    let pod = pod_of(object);
    let back = if object["kind"] == "Pod" {
        serde_json::to_value(serde_json::from_value::<Pod>(pod.clone()).expect("a Pod"))
            .expect("serialises")
    } else {
        serde_json::to_value(
            serde_json::from_value::<PodTemplateSpec>(pod.clone()).expect("a PodTemplateSpec"),
        )
        .expect("serialises")
    };
    assert_same_fields(pod, &back, "");
    let mut containers = HashSet::new();
    let mut ports = HashSet::new();
    for list in ["initContainers", "containers"] {
        for c in pod["spec"][list].as_array().into_iter().flatten() {
            assert!(
                containers.insert(c["name"].clone()),
                "duplicate container {}",
                c["name"]
            );
            for p in c["ports"].as_array().into_iter().flatten() {
                assert!(
                    ports.insert(p["containerPort"].clone()),
                    "duplicate port {}",
                    p["containerPort"]
                );
            }
        }
    }
    let volumes = names(&pod["spec"]["volumes"]);
    assert_eq!(
        volumes.len(),
        volumes.iter().collect::<HashSet<_>>().len(),
        "duplicate volumes {volumes:?}"
    );
}

fn assert_same_fields(given: &Value, typed: &Value, at: &str) {
    match (given, typed) {
        (Value::Object(g), Value::Object(t)) => {
            for (k, v) in g {
                let path = format!("{at}.{k}");
                match t.get(k) {
                    Some(tv) => assert_same_fields(v, tv, &path),
                    None => assert!(v.is_null(), "field {path} is lost by the Kubernetes type"),
                }
            }
        }
        (Value::Array(g), Value::Array(t)) => {
            assert_eq!(g.len(), t.len(), "{at}");
            for (i, (gv, tv)) in g.iter().zip(t).enumerate() {
                assert_same_fields(gv, tv, &format!("{at}[{i}]"));
            }
        }
        _ => {}
    }
}

#[test]
fn linkerd_native_sidecars_for_every_kind() {
    let (objects, report) = inject(&[], WORKLOADS);
    assert_eq!(objects.len(), 6);
    for object in &objects {
        assert_valid(object);
        let pod = pod_of(object);
        let inits = names(&pod["spec"]["initContainers"]);
        assert_eq!(
            &inits[..2],
            ["linkerd-init", "linkerd-proxy"],
            "{}",
            object["kind"]
        );
        let proxy = container(pod, "linkerd-proxy");
        assert_eq!(proxy["restartPolicy"], "Always");
        assert_eq!(proxy["startupProbe"]["httpGet"]["path"], "/ready");
        assert!(!names(&pod["spec"]["containers"]).contains(&"linkerd-proxy"));
        assert!(
            pod["metadata"]["annotations"]
                .get("kubectl.kubernetes.io/default-container")
                .is_none()
        );
    }
    // The pod's own init containers run after the proxy, inside the mesh.
    assert_eq!(
        names(&pod_of(&objects[1])["spec"]["initContainers"]),
        ["linkerd-init", "linkerd-proxy", "migrate"]
    );
    // What the app drops is copied, keeping what the init container needs;
    // what the app adds (NET_BIND_SERVICE) too, after the container's own,
    // as Linkerd's injector copies it.
    let web = pod_of(&objects[0]);
    assert_eq!(
        container(web, "linkerd-proxy")["securityContext"]["capabilities"],
        json!({"add": ["NET_BIND_SERVICE"], "drop": ["ALL"]})
    );
    assert_eq!(
        container(web, "linkerd-init")["securityContext"]["capabilities"],
        json!({"add": ["NET_ADMIN", "NET_RAW", "NET_BIND_SERVICE"], "drop": ["ALL"]})
    );
    // Inbound ports come from the pod's container ports.
    let env = container(pod_of(&objects[1]), "linkerd-proxy")["env"]
        .as_array()
        .expect("env")
        .clone();
    assert!(
        env.iter()
            .any(|e| e["name"] == "LINKERD2_PROXY_INBOUND_PORTS" && e["value"] == "5432")
    );
    assert!(!report.contains("never completes"), "{report}");
}

#[test]
fn classic_sidecars_before_1_29() {
    let (objects, report) = inject(&["--kube-version", "1.28"], WORKLOADS);
    for object in &objects {
        assert_valid(object);
        let pod = pod_of(object);
        let containers = names(&pod["spec"]["containers"]);
        assert_eq!(
            containers[0], "linkerd-proxy",
            "first, holding the app: {containers:?}"
        );
        let proxy = container(pod, "linkerd-proxy");
        assert!(proxy.get("restartPolicy").is_none());
        assert!(
            proxy["lifecycle"]["postStart"]["exec"]["command"][0]
                .as_str()
                .expect("cmd")
                .ends_with("linkerd-await")
        );
        // Linkerd's injector never names the default container.
        assert!(
            pod["metadata"]["annotations"]
                .get("kubectl.kubernetes.io/default-container")
                .is_none(),
            "{pod:#}"
        );
    }
    // The capture setup runs after the pod's own init containers, which stay outside the mesh.
    assert_eq!(
        names(&pod_of(&objects[1])["spec"]["initContainers"]),
        ["migrate", "linkerd-init"]
    );
    assert_eq!(
        report.matches("so it never completes").count(),
        2,
        "Job and CronJob warned: {report}"
    );
    // Position last, by annotation.
    let last = WORKLOADS.replace(
        "metadata: {labels: {app: web}}",
        "metadata: {labels: {app: web}, annotations: {config.linkerd.io/proxy-await: disabled}}",
    );
    let (objects, _) = inject(&["--kube-version", "1.28"], &last);
    assert_eq!(
        names(&pod_of(&objects[0])["spec"]["containers"]),
        ["web", "linkerd-proxy"]
    );
    assert!(
        container(pod_of(&objects[0]), "linkerd-proxy")
            .get("lifecycle")
            .is_none()
    );
}

#[test]
fn native_sidecar_flag_wins_over_version_and_annotations() {
    let annotated = WORKLOADS.replace("metadata: {labels: {app: web}}", "metadata: {labels: {app: web}, annotations: {config.linkerd.io/proxy-enable-native-sidecar: \"true\"}}");
    let (objects, _) = inject(
        &["--kube-version", "1.30", "--native-sidecar", "never"],
        &annotated,
    );
    assert_eq!(
        names(&pod_of(&objects[0])["spec"]["containers"])[0],
        "linkerd-proxy"
    );
    let (objects, report) = inject(
        &["--kube-version", "1.27", "--native-sidecar", "always"],
        WORKLOADS,
    );
    assert_eq!(
        container(pod_of(&objects[3]), "linkerd-proxy")["restartPolicy"],
        "Always"
    );
    assert!(
        report.contains("native sidecars need Kubernetes 1.29"),
        "{report}"
    );
    // The annotation alone switches one workload.
    let (objects, _) = inject(&["--kube-version", "1.28"], &annotated);
    assert_eq!(
        container(pod_of(&objects[0]), "linkerd-proxy")["restartPolicy"],
        "Always"
    );
    assert!(
        container(pod_of(&objects[1]), "linkerd-proxy")
            .get("restartPolicy")
            .is_none()
    );
}

#[test]
fn istio_profile_native_and_classic() {
    let (objects, _) = inject(&["--profile", "istio"], WORKLOADS);
    for object in &objects {
        assert_valid(object);
        let pod = pod_of(object);
        assert_eq!(
            &names(&pod["spec"]["initContainers"])[..2],
            ["istio-init", "istio-proxy"]
        );
        let proxy = container(pod, "istio-proxy");
        assert_eq!(proxy["securityContext"]["runAsUser"], 1337);
        assert_eq!(proxy["ports"][0]["containerPort"], 15090);
        assert_eq!(proxy["readinessProbe"]["httpGet"]["port"], 15021);
        // Istio writes quantities in canonical form.
        assert_eq!(proxy["resources"]["limits"]["memory"], "1Gi");
        assert_eq!(
            pod["metadata"]["labels"]["security.istio.io/tlsMode"],
            "istio"
        );
    }
    let (objects, _) = inject(&["--profile", "istio", "--kube-version", "1.28"], WORKLOADS);
    let pod = pod_of(&objects[0]);
    assert_eq!(
        names(&pod["spec"]["containers"]),
        ["web", "istio-proxy"],
        "Istio puts a classic proxy last"
    );
    assert_eq!(
        pod["metadata"]["labels"]["service.istio.io/canonical-name"],
        "web"
    );
    // One resource annotation gives that resource alone, as Istio's template does.
    let one = WORKLOADS.replace(
        "metadata: {labels: {app: web}}",
        "metadata: {labels: {app: web}, annotations: {sidecar.istio.io/proxyCPU: 500m}}",
    );
    let (objects, _) = inject(&["--profile", "istio"], &one);
    let resources = &container(pod_of(&objects[0]), "istio-proxy")["resources"];
    assert_eq!(resources, &serde_json::json!({"requests": {"cpu": "500m"}}));
    // Its own opt-out annotation.
    let off = WORKLOADS.replace(
        "metadata: {labels: {app: web}}",
        "metadata: {labels: {app: web}, annotations: {sidecar.istio.io/inject: \"false\"}}",
    );
    let run = common::run(&["--profile", "istio"], Some(&off));
    assert!(
        run.stderr.contains(
            "deployment/web skipped: pod has the annotation \"sidecar.istio.io/inject: false\""
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn wait_before_exit_uses_sleep_or_exec_and_fits_the_grace_period() {
    // A classic proxy: Linkerd's native one gets no wait.
    let waiting = WORKLOADS.replace("metadata: {labels: {app: web}}", "metadata: {labels: {app: web}, annotations: {config.alpha.linkerd.io/proxy-wait-before-exit-seconds: \"25\", config.linkerd.io/proxy-enable-native-sidecar: \"false\"}}");
    let (objects, report) = inject(&[], &waiting);
    let pod = pod_of(&objects[0]);
    assert_eq!(
        container(pod, "linkerd-proxy")["lifecycle"]["preStop"],
        json!({"sleep": {"seconds": 25}})
    );
    assert_eq!(pod["spec"]["terminationGracePeriodSeconds"], 35);
    assert!(
        report.contains("terminationGracePeriodSeconds raised from 30 to 35"),
        "{report}"
    );
    let (objects, _) = inject(&["--kube-version", "1.29"], &waiting);
    assert_eq!(
        container(pod_of(&objects[0]), "linkerd-proxy")["lifecycle"]["preStop"],
        json!({"exec": {"command": ["/bin/sleep", "25"]}})
    );
    // The flag overrides the annotation; Istio's image has no sleep binary before 1.30.
    let (objects, _) = inject(&["--set", "waitBeforeExitSeconds=5"], &waiting);
    assert_eq!(
        container(pod_of(&objects[0]), "linkerd-proxy")["lifecycle"]["preStop"]["sleep"]["seconds"],
        5
    );
    assert!(
        pod_of(&objects[0])["spec"]
            .get("terminationGracePeriodSeconds")
            .is_none()
    );
    let run = common::run(
        &[
            "--profile",
            "istio",
            "--kube-version",
            "1.29",
            "--native-sidecar",
            "never",
            "--set",
            "waitBeforeExitSeconds=5",
        ],
        Some(WORKLOADS),
    );
    assert!(run.stderr.contains("no sleep binary"), "{}", run.stderr);
    // Uninject restores the grace period exactly.
    let injected = common::pipe(None, &waiting);
    assert_eq!(common::pipe(Some("uninject"), &injected), waiting);
}

#[test]
fn limit_ranges_and_quotas_from_input_and_context() {
    let dir = tempfile::tempdir().expect("tempdir");
    let context = dir.path().join("policies.yaml");
    std::fs::write(
        &context,
        "apiVersion: v1\nkind: LimitRange\nmetadata: {name: limits, namespace: shop}\nspec:\n  limits:\n  - type: Container\n    max: {memory: 1Gi}\n    defaultRequest: {cpu: 50m}\n---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q, namespace: shop}\nspec:\n  hard: {limits.cpu: \"8\", requests.memory: 4Gi}\n",
    )
    .expect("write");
    let ctx = context.to_str().expect("path");
    let (objects, report) = inject(&["--context", ctx], WORKLOADS);
    for object in &objects {
        assert_valid(object);
        let proxy = container(pod_of(object), "linkerd-proxy");
        assert_eq!(
            proxy["resources"]["limits"]["memory"], "1Gi",
            "default limit from max"
        );
        assert_eq!(
            proxy["resources"]["requests"]["memory"], "1Gi",
            "default request from the default limit"
        );
        assert_eq!(proxy["resources"]["requests"]["cpu"], "50m");
        assert_eq!(
            proxy["resources"]["limits"]["cpu"], "1",
            "required by the quota, from the profile"
        );
        assert_eq!(
            container(pod_of(object), "linkerd-init")["resources"]["limits"]["memory"],
            "1Gi"
        );
    }
    assert!(
        report.contains("from the LimitRange of namespace shop"),
        "{report}"
    );
    // The same objects in the input count too, and stay in the output unchanged.
    let policies = std::fs::read_to_string(&context).expect("read");
    let (objects, _) = inject(&[], &format!("{policies}---\n{WORKLOADS}"));
    assert_eq!(objects[0]["kind"], "LimitRange");
    assert_eq!(
        container(pod_of(&objects[2]), "linkerd-proxy")["resources"]["limits"]["memory"],
        "1Gi"
    );
    // Precedence: flag > annotation > LimitRange.
    let annotated = WORKLOADS.replace("metadata: {labels: {app: web}}", "metadata: {labels: {app: web}, annotations: {config.linkerd.io/proxy-memory-limit: 300Mi}}");
    let (objects, _) = inject(&["--context", ctx], &annotated);
    assert_eq!(
        container(pod_of(&objects[0]), "linkerd-proxy")["resources"]["limits"]["memory"],
        "300Mi"
    );
    let (objects, _) = inject(
        &["--context", ctx, "--set", "proxyMemoryLimit=200Mi"],
        &annotated,
    );
    assert_eq!(
        container(pod_of(&objects[0]), "linkerd-proxy")["resources"]["limits"]["memory"],
        "200Mi"
    );
}

#[test]
fn pod_security_policy_defaults_injected_containers_up_to_1_24() {
    let psp = "apiVersion: policy/v1beta1\nkind: PodSecurityPolicy\nmetadata:\n  name: restricted\n  annotations:\n    apparmor.security.beta.kubernetes.io/defaultProfileName: runtime/default\nspec:\n  requiredDropCapabilities: [NET_RAW]\n  defaultAddCapabilities: [CHOWN]\n  runAsUser: {rule: MustRunAsNonRoot}\n  seLinux: {rule: RunAsAny}\n  supplementalGroups: {rule: RunAsAny}\n  fsGroup: {rule: RunAsAny}\n  readOnlyRootFilesystem: true\n---\n";
    let (objects, report) = inject(&["--kube-version", "1.24"], &format!("{psp}{WORKLOADS}"));
    let pod = pod_of(&objects[2]);
    assert_eq!(
        container(pod, "linkerd-proxy")["securityContext"]["capabilities"],
        json!({"add": ["CHOWN"], "drop": ["NET_RAW"]})
    );
    assert_eq!(
        pod["metadata"]["annotations"]["container.apparmor.security.beta.kubernetes.io/linkerd-proxy"],
        "runtime/default"
    );
    assert!(
        report.contains("defaulted by PodSecurityPolicy restricted"),
        "{report}"
    );
    // After 1.24 there is no PSP: the app's settings are copied instead.
    let (objects, _) = inject(&[], &format!("{psp}{WORKLOADS}"));
    assert!(
        container(pod_of(&objects[2]), "linkerd-proxy")["securityContext"]
            .get("capabilities")
            .is_none()
    );
    // Uninject removes the AppArmor annotation with the rest.
    let injected = common::run(
        &["-q", "--warn-only", "--kube-version", "1.24"],
        Some(&format!("{psp}{WORKLOADS}")),
    )
    .stdout;
    assert_eq!(
        common::pipe(Some("uninject"), &injected),
        format!("{psp}{WORKLOADS}")
    );
}

#[test]
fn restricted_namespaces_and_cni_mode() {
    let namespace = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  labels: {pod-security.kubernetes.io/enforce: restricted}\n---\n";
    let input = format!("{namespace}{WORKLOADS}");
    let (objects, report) = inject(&[], &input);
    let proxy = container(pod_of(&objects[3]), "linkerd-proxy");
    assert_eq!(
        proxy["securityContext"]["capabilities"]["drop"],
        json!(["ALL"])
    );
    assert_eq!(
        proxy["securityContext"]["seccompProfile"]["type"],
        "RuntimeDefault"
    );
    assert!(report.contains("linkerd-init adds NET_ADMIN and NET_RAW, which Pod Security \"restricted\" forbids: use CNI mode"), "{report}");
    let (objects, report) = inject(&["--set", "cni=true"], &input);
    for object in objects.iter().skip(1) {
        assert_valid(object);
        let pod = pod_of(object);
        assert_eq!(
            &names(&pod["spec"]["initContainers"])[..2],
            ["linkerd-network-validator", "linkerd-proxy"]
        );
        assert!(!names(&pod["spec"]["volumes"]).contains(&"linkerd-proxy-init-xtables-lock"));
    }
    assert!(!report.contains("forbids"), "{report}");
}

#[test]
fn custom_resources_with_pod_templates() {
    let input = "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: canary}\nspec:\n  template:\n    spec:\n      containers: [{name: app, image: app:1}]\n---\napiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: hello}\nspec:\n  template:\n    spec:\n      containers: [{image: hello:1}]\n---\napiVersion: apps.openshift.io/v1\nkind: DeploymentConfig\nmetadata: {name: dc}\nspec:\n  template:\n    spec:\n      containers: [{name: app, image: app:1}]\n";
    let run = common::run(&[], Some(input));
    assert!(
        run.stderr.contains("rollout/canary injected"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("service/hello injected"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("deploymentconfig/dc injected"),
        "{}",
        run.stderr
    );
    // A user profile can add its own.
    let config = common::run(&["config"], None).stdout;
    let dir = tempfile::tempdir().expect("tempdir");
    let profile = dir.path().join("profile.yaml");
    // The profile's `workloads` list comes last: extend it (a second
    // `workloads:` key would be refused as a duplicate).
    assert!(
        config
            .trim_end()
            .ends_with("kind: DeploymentConfig, path: spec.template}"),
        "{config}"
    );
    std::fs::write(
        &profile,
        format!("{config}  - {{apiVersion: example.com/v1, kind: Worker, path: spec.pod}}\n"),
    )
    .expect("write");
    let custom = "apiVersion: example.com/v1\nkind: Worker\nmetadata: {name: w}\nspec:\n  pod:\n    spec:\n      containers: [{name: w, image: w:1}]\n";
    let run = common::run(&["--config", profile.to_str().expect("path")], Some(custom));
    assert!(run.stderr.contains("worker/w injected"), "{}", run.stderr);
}

#[test]
fn trust_anchors_from_the_configmap_in_context() {
    let pem = common::ANCHOR_A;
    let configmap = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: linkerd-identity-trust-roots\n  namespace: linkerd\ndata:\n  ca-bundle.crt: |\n{}---\n",
        pem.lines()
            .map(|l| format!("    {l}\n"))
            .collect::<String>()
    );
    let (objects, report) = inject(&[], &format!("{configmap}{WORKLOADS}"));
    let env = container(pod_of(&objects[1]), "linkerd-proxy")["env"]
        .as_array()
        .expect("env")
        .clone();
    let anchors = env
        .iter()
        .find(|e| e["name"] == "LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS")
        .expect("env var");
    assert_eq!(anchors["value"], pem);
    assert!(!report.contains("trustAnchorsPEM"), "{report}");
    // Without it (nor the sample's), nothing is written: an error with the fix.
    let run = common::run_as_given(&[], Some(WORKLOADS));
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.contains("error: <stdin>: document 1, line 2:1: deployment/web cannot be injected: value \"trustAnchorsPEM\" is empty: the proxy cannot start without the identity trust anchors"),
        "{}",
        run.stderr
    );
}

#[test]
fn config_prints_the_effective_profile_and_user_profiles_are_checked() {
    let run = common::run(&["config", "--set", "proxyVersion=edge-99.1.1"], None);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("  proxyVersion: edge-99.1.1\n"));
    assert!(
        run.stdout.contains("# The default profile"),
        "comments kept"
    );
    let istio = common::run(&["config", "--profile", "istio"], None);
    assert!(istio.stdout.contains("name: istio"));
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        run.stdout.replace("foreignSidecars:", "foreignSidecar:"),
    )
    .expect("write");
    let err = common::run(&["--config", bad.to_str().expect("path")], Some(WORKLOADS));
    assert_eq!(err.code, 2);
    assert!(err.stderr.contains("foreignSidecar"), "{}", err.stderr);
    assert!(err.stdout.is_empty());
}

#[test]
fn every_mode_uninjects_exactly() {
    for args in [
        &[][..],
        &["--kube-version", "1.28"][..],
        &["--profile", "istio"][..],
        &["--profile", "istio", "--kube-version", "1.28"][..],
        &["--set", "cni=true"][..],
    ] {
        let mut all = vec!["-q"];
        all.extend_from_slice(args);
        let injected = common::run(&all, Some(WORKLOADS)).stdout;
        let profile: Vec<&str> = args
            .iter()
            .copied()
            .take_while(|a| *a == "--profile" || *a == "istio")
            .collect();
        let mut un = vec!["uninject", "-q"];
        un.extend(profile);
        let back = common::run(&un, Some(&injected));
        assert_eq!(back.stdout, WORKLOADS, "{args:?}");
        let again = common::run(&all, Some(&injected));
        assert_eq!(again.stdout, injected, "{args:?}: injecting twice");
    }
}

#[test]
fn requests_never_exceed_limits() {
    let limit_range = "apiVersion: v1\nkind: LimitRange\nmetadata: {name: lr, namespace: shop}\nspec:\n  limits:\n  - type: Container\n    max: {memory: 1Gi}\n---\n";
    let annotated = WORKLOADS.replace("metadata: {labels: {app: web}}", "metadata: {labels: {app: web}, annotations: {config.linkerd.io/proxy-memory-limit: 300Mi}}");
    let (objects, _) = inject(&[], &format!("{limit_range}{annotated}"));
    let resources = &container(pod_of(&objects[1]), "linkerd-proxy")["resources"];
    assert_eq!(resources["limits"]["memory"], "300Mi");
    assert_eq!(
        resources["requests"]["memory"], "300Mi",
        "the request defaults to the limit first, as the apiserver does"
    );
    // A limit under the values' request (a flag keeps the others).
    let (objects, report) = inject(
        &["--profile", "istio", "--set", "proxyCPULimit=50m"],
        WORKLOADS,
    );
    let resources = &container(pod_of(&objects[0]), "istio-proxy")["resources"];
    assert_eq!(
        (
            resources["requests"]["cpu"].as_str(),
            resources["limits"]["cpu"].as_str()
        ),
        (Some("50m"), Some("50m"))
    );
    assert!(
        report.contains("requests.cpu lowered to its limit 50m"),
        "{report}"
    );
}

#[test]
fn the_pods_own_annotations_and_labels_win_and_survive_uninject() {
    let own = WORKLOADS.replace(
        "metadata: {labels: {app: web}}",
        "metadata: {labels: {app: web, security.istio.io/tlsMode: disabled}, annotations: {prometheus.io/scrape: \"false\"}}",
    );
    let (objects, _) = inject(&["--profile", "istio"], &own);
    let meta = &pod_of(&objects[0])["metadata"];
    assert_eq!(meta["annotations"]["prometheus.io/scrape"], "false");
    assert_eq!(meta["labels"]["security.istio.io/tlsMode"], "disabled");
    let injected = common::run(&["-q", "--profile", "istio"], Some(&own)).stdout;
    assert_eq!(
        common::run(&["uninject", "-q", "--profile", "istio"], Some(&injected)).stdout,
        own
    );
}

#[test]
fn another_profiles_injection_is_skipped_not_replaced() {
    let istio = common::run(&["-q", "--profile", "istio"], Some(WORKLOADS)).stdout;
    let run = common::run(&[], Some(&istio));
    assert!(
        run.stderr
            .contains("deployment/web skipped: a third-party proxy is already present"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stdout, istio);
}

#[test]
fn a_wait_the_proxy_cannot_take_raises_no_grace_period() {
    let run = common::run(
        &["--profile", "istio", "--set", "waitBeforeExitSeconds=40"],
        Some(WORKLOADS),
    );
    assert!(
        run.stderr.contains("already has a preStop hook"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("terminationGracePeriodSeconds raised"),
        "{}",
        run.stderr
    );
}

#[test]
fn trust_anchors_follow_the_control_plane_namespace() {
    let pem = common::ANCHOR_B;
    let configmap = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: linkerd-identity-trust-roots, namespace: l5d}}\ndata: {{ca-bundle.crt: {pem:?}}}\n---\n"
    );
    let run = common::run(
        &["--set", "controlPlaneNamespace=l5d"],
        Some(&format!("{configmap}{WORKLOADS}")),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let first_line = pem.lines().next().expect("a line");
    assert!(
        run.stdout.contains(&format!(
            "LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS\n              value: |\n                {first_line}\n"
        )),
        "{}",
        run.stdout
    );
}

#[test]
fn bad_values_are_configuration_errors() {
    for set in ["proxyUID=1.5", "waitBeforeExitSeconds=-5", "cni=maybe"] {
        let run = common::run(&["--set", set], Some(WORKLOADS));
        assert_eq!(run.code, 2, "{set}: {}", run.stderr);
        assert!(run.stdout.is_empty());
    }
    let config = common::run(&["config"], None).stdout;
    let dir = tempfile::tempdir().expect("tempdir");
    let typo = dir.path().join("p.yaml");
    std::fs::write(
        &typo,
        config.replace("  classicPosition:", "  classicPositon:"),
    )
    .expect("write");
    let run = common::run(&["--config", typo.to_str().expect("path")], Some(WORKLOADS));
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("sidecar.classicPositon"),
        "{}",
        run.stderr
    );
}

#[test]
fn copied_security_context_takes_the_apps_seccomp_profile() {
    let localhost = WORKLOADS.replace(
        "capabilities: {add: [NET_BIND_SERVICE], drop: [ALL]}",
        "capabilities: {add: [NET_BIND_SERVICE], drop: [ALL]}\n          seccompProfile: {type: Localhost, localhostProfile: app.json}",
    );
    let (objects, _) = inject(&[], &localhost);
    let proxy = container(pod_of(&objects[0]), "linkerd-proxy");
    assert_eq!(
        proxy["securityContext"]["seccompProfile"]["type"],
        "Localhost"
    );
}

#[test]
fn warnings_say_what_is_wrong() {
    let off = WORKLOADS.replace(
        "kind: Job\nmetadata: {name: migrate, namespace: shop}\nspec:\n  template:\n    spec:",
        "kind: Job\nmetadata: {name: migrate, namespace: shop}\nspec:\n  template:\n    metadata: {annotations: {config.linkerd.io/proxy-enable-native-sidecar: \"false\"}}\n    spec:",
    );
    let run = common::run(&[], Some(&off));
    assert!(
        run.stderr.contains("native sidecars are off for it"),
        "{}",
        run.stderr
    );
    let once = WORKLOADS.replace(
        "  containers: [{name: debug, image: busybox}]",
        "  restartPolicy: Never\n  containers: [{name: debug, image: busybox}]",
    );
    let classic = common::run(&["--kube-version", "1.28"], Some(&once));
    assert!(
        classic
            .stderr
            .contains("pod's containers finish, so it never completes"),
        "a bare Pod too: {}",
        classic.stderr
    );
    let baseline = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  labels: {pod-security.kubernetes.io/enforce: baseline}\n---\n";
    let run = common::run(&[], Some(&format!("{baseline}{WORKLOADS}")));
    assert!(
        run.stderr.contains("Pod Security \"baseline\" forbids"),
        "{}",
        run.stderr
    );
}

#[test]
fn files_without_a_final_line_break_round_trip_in_every_mode() {
    let input = WORKLOADS.trim_end();
    for args in [
        &["--native-sidecar", "never", "--set", "proxyPosition=last"][..],
        &["--kube-version", "1.28"][..],
        &[][..],
    ] {
        let mut all = vec!["-q"];
        all.extend_from_slice(args);
        let injected = common::run(&all, Some(input)).stdout;
        assert_eq!(
            common::run(&["uninject", "-q"], Some(&injected)).stdout,
            input,
            "{args:?}"
        );
    }
}

/// A profile whose label keys are made of the workload's name and its
/// namespace: a workload whose name is its namespace renders one label for
/// real (the later key wins), and is injected alone. After a workload with
/// other answers, whose rendering has stand-ins that would fill to one key,
/// it is rendered for real too, and injected as alone.
#[test]
fn a_profile_whose_keys_fill_alike_injects_together_as_alone() {
    let config = common::run(&["config"], None).stdout;
    let line = "  linkerd.io/workload-ns: \"{{workload.namespace}}\"\n";
    assert!(config.contains(line), "{config}");
    let dir = tempfile::tempdir().expect("tempdir");
    let profile = dir.path().join("profile.yaml");
    std::fs::write(
        &profile,
        config.replace(
            line,
            &format!(
                "{line}  example.com/{{{{workload.name}}}}: by-name\n  example.com/{{{{workload.namespace}}}}: by-namespace\n"
            ),
        ),
    )
    .expect("write");
    let deployment = |name: &str, namespace: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  namespace: {namespace}\nspec:\n  selector:\n    matchLabels: {{app: x}}\n  template:\n    metadata:\n      labels: {{app: x}}\n    spec:\n      containers:\n        - name: app\n          image: app:1\n"
        )
    };
    let profile = profile.to_str().expect("path");
    let alone = common::run(&["--config", profile], Some(&deployment("same", "same")));
    assert!(
        alone.stderr.contains("deployment/same injected"),
        "{}",
        alone.stderr
    );
    let both = format!(
        "{}---\n{}",
        deployment("web", "shop"),
        deployment("same", "same")
    );
    let together = common::run(&["--config", profile], Some(&both));
    assert!(
        together.stderr.contains("deployment/same injected"),
        "{}",
        together.stderr
    );
    // (The trust anchors' `-----END CERTIFICATE-----` holds `---` too.)
    let (_, second) = together
        .stdout
        .split_once("\n---\n")
        .expect("a second document");
    assert_eq!(second, alone.stdout);
}

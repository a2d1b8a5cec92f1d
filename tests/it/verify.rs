//! `kubectl mesh-inject verify` through the real kubectl, against a fake
//! apiserver whose mutating webhook applies a recorded patch (see
//! `fake_apiserver.rs`). The patch stands for the mesh's webhook: it is
//! recorded from the tool's own injection, then changed, to show that
//! every kind of difference is found; with `../shared`, it is the
//! difference between Linkerd's own input and golden.

use std::path::Path;

use serde_json::{Value, json};

use crate::common;
use crate::fake_apiserver::{Admission, FakeApiserver, Webhook};

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: nginx:1.27
        ports:
        - containerPort: 8080
";

/// A ConfigMap, and a Deployment Linkerd is told to leave alone: nothing to send.
const LEFT_ALONE: &str = "apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
data: {a: b}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: batch, namespace: shop}
spec:
  selector: {matchLabels: {app: batch}}
  template:
    metadata:
      labels: {app: batch}
      annotations: {linkerd.io/inject: disabled, sidecar.istio.io/inject: 'false'}
    spec:
      containers: [{name: batch, image: busybox:1.36}]
";

/// The pod part of a workload's template: what its controller copies.
fn pod_of_template(workload: &Value) -> Value {
    let template = &workload["spec"]["template"];
    let mut metadata = serde_json::Map::new();
    for field in ["labels", "annotations"] {
        if let Some(value) = template["metadata"].get(field) {
            metadata.insert(field.into(), value.clone());
        }
    }
    json!({"metadata": metadata, "spec": template["spec"]})
}

/// The Deployment as the tool injects it with `args`.
fn injected(args: &[&str], input: &str) -> Value {
    let mut given = args.to_vec();
    given.extend(["-q", "-f", "-"]);
    let run = common::run(&given, Some(input));
    assert_eq!(run.code, 0, "{}", run.stderr);
    common::values(&run.stdout)
        .into_iter()
        .flatten()
        .find(|v| v["kind"] == "Deployment")
        .expect("the deployment")
}

/// The webhook's pod: the tool's, with what its injector writes in place of
/// the tool's bookkeeping (no record, Linkerd's `created-by` naming it).
fn webhook_pod(tool: &Value) -> Value {
    let mut pod = pod_of_template(tool);
    let annotations = pod["metadata"]["annotations"]
        .as_object_mut()
        .expect("annotations");
    annotations.remove("mesh-inject.io/added");
    if annotations.contains_key("linkerd.io/created-by") {
        annotations.insert(
            "linkerd.io/created-by".into(),
            json!("linkerd/proxy-injector stable-test"),
        );
    }
    pod
}

/// A webhook for `namespaces` that turns the pod of `original` into `want`.
fn webhook(original: &Value, want: &Value, marker: &str, namespaces: &[&str]) -> Webhook {
    let patch = json_patch::diff(&pod_of_template(original), want);
    Webhook {
        patch: serde_json::to_value(patch).expect("a patch"),
        namespaces: namespaces.iter().map(|n| n.to_string()).collect(),
        injected_marker: marker.to_string(),
    }
}

/// A cluster whose Linkerd webhook injects in `shop` as the tool injects
/// `original` (giving `tool`), and that refuses pods in the namespaces of
/// `refused`.
fn linkerd_in_shop(original: &Value, tool: &Value, refused: Vec<(String, String)>) -> Admission {
    Admission {
        webhook: Some(webhook(
            original,
            &webhook_pod(tool),
            "linkerd-proxy",
            &["shop"],
        )),
        refused,
    }
}

/// A fake cluster and a home for kubectl.
struct Cluster {
    server: FakeApiserver,
    home: tempfile::TempDir,
}

impl Cluster {
    fn start(test: &str, admission: Admission) -> Option<Self> {
        if !crate::integrations::available("kubectl", test, false) {
            return None;
        }
        Some(Cluster {
            server: FakeApiserver::with_admission(Vec::new(), false, admission),
            home: tempfile::tempdir().expect("a temp dir"),
        })
    }

    /// `kubectl mesh-inject verify ARGS` on `input`, against the server.
    fn verify(&self, args: &[&str], input: &str) -> common::Run {
        self.verify_with(args, input, None)
    }

    fn verify_with(&self, args: &[&str], input: &str, path: Option<&str>) -> common::Run {
        let file = self.home.path().join("input.yaml");
        std::fs::write(&file, input).expect("writes the input");
        self.verify_file(args, &file, path)
    }

    /// `verify ARGS -f FILE`, with `path` as PATH (the test's own when `None`).
    fn verify_file(&self, args: &[&str], file: &Path, path: Option<&str>) -> common::Run {
        let kubeconfig = self.server.kubeconfig(self.home.path());
        let mut given = vec!["verify", "--kubeconfig", path_str(&kubeconfig)];
        given.extend(args);
        given.extend(["-f", path_str(file)]);
        let mut command = common::command_with(&given);
        command
            .env("HOME", self.home.path())
            .env_remove("KUBECONFIG");
        if let Some(path) = path {
            command.env("PATH", path);
        }
        command.output().expect("runs").into()
    }
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

/// Where the proxy container `name` is in `pod`: `containers` or `initContainers`.
fn list_of(pod: &Value, name: &str) -> &'static str {
    let holds = |list: &str| {
        pod["spec"][list]
            .as_array()
            .is_some_and(|items| items.iter().any(|c| c["name"] == name))
    };
    if holds("initContainers") {
        "initContainers"
    } else {
        "containers"
    }
}

#[test]
fn a_pod_the_clusters_webhook_injects_as_the_tool_does_is_the_same_in_either_form() {
    let test = "a_pod_the_clusters_webhook_injects_as_the_tool_does_is_the_same_in_either_form";
    for (profile, marker) in [("linkerd", "linkerd-proxy"), ("istio", "istio-proxy")] {
        let args = ["--profile", profile];
        let original = common::values(DEPLOYMENT)[0].clone().expect("a deployment");
        let tool = injected(&args, DEPLOYMENT);
        let admission = Admission {
            webhook: Some(webhook(&original, &webhook_pod(&tool), marker, &["shop"])),
            refused: Vec::new(),
        };
        let Some(cluster) = Cluster::start(test, admission) else {
            return;
        };
        let input = format!("{DEPLOYMENT}---\n{LEFT_ALONE}");
        let run = cluster.verify(&args, &input);
        assert_eq!(run.code, 0, "{profile}: {}{}", run.stdout, run.stderr);
        assert!(
            run.stdout
                .contains("same: deployment/web (namespace shop, "),
            "{}",
            run.stdout
        );
        assert!(
            run.stdout.ends_with(
                "1 workload sent to the cluster: 1 the same, 0 different, 0 refused; 1 left as they are, not sent\n"
            ),
            "{}",
            run.stdout
        );
        // Two dry runs (the pod before injection, the tool's), nothing stored.
        let posts: Vec<String> = cluster
            .server
            .requests()
            .into_iter()
            .filter(|r| !r.starts_with("GET "))
            .collect();
        assert_eq!(posts.len(), 2, "{posts:?}");
        assert!(
            posts
                .iter()
                .all(|r| r.starts_with("POST /api/v1/namespaces/shop/pods?")
                    && r.contains("dryRun=All")),
            "{posts:?}"
        );

        // The output of inject (GitOps' form, in place) verifies as its source.
        let output = common::run(&[&args[..], &["-q", "-f", "-"]].concat(), Some(&input)).stdout;
        let run = cluster.verify(&[&args[..], &["-v"]].concat(), &output);
        assert_eq!(run.code, 0, "{profile}: {}{}", run.stdout, run.stderr);
        assert!(
            run.stdout.contains("same: deployment/web"),
            "{}",
            run.stdout
        );
        assert!(
            run.stdout
                .contains("input.yaml: deployment/batch: the tool leaves it as it is; not sent"),
            "{}",
            run.stdout
        );
        // Without --profile, the mesh is the one the tool's record names.
        let run = cluster.verify(&[], &output);
        assert_eq!(run.code, 0, "{profile}: {}{}", run.stdout, run.stderr);
        assert!(run.stdout.contains("1 the same"), "{}", run.stdout);
    }
}

#[test]
fn each_field_the_clusters_webhook_writes_otherwise_is_listed_and_the_status_is_1() {
    let test = "each_field_the_clusters_webhook_writes_otherwise_is_listed_and_the_status_is_1";
    let original = common::values(DEPLOYMENT)[0].clone().expect("a deployment");
    let tool = injected(&[], DEPLOYMENT);
    let mut want = webhook_pod(&tool);
    let list = list_of(&want, "linkerd-proxy");
    let proxy = want["spec"][list]
        .as_array_mut()
        .expect("containers")
        .iter_mut()
        .find(|c| c["name"] == "linkerd-proxy")
        .expect("the proxy");
    let env = proxy["env"].as_array_mut().expect("env");
    let log = env
        .iter_mut()
        .find(|e| e["name"] == "LINKERD2_PROXY_LOG")
        .expect("the log level");
    let ours = log["value"].clone();
    log["value"] = json!("debug");
    env.push(json!({"name": "LINKERD2_PROXY_EXTRA", "value": "1"}));
    want["metadata"]["labels"]["linkerd.io/workload-ns"] = json!("elsewhere");
    let admission = Admission {
        webhook: Some(webhook(&original, &want, "linkerd-proxy", &["shop"])),
        refused: Vec::new(),
    };
    let Some(cluster) = Cluster::start(test, admission) else {
        return;
    };
    let run = cluster.verify(&[], DEPLOYMENT);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let lines = [
        "differs: deployment/web (namespace shop, ".to_string(),
        "the cluster's pod differs from the tool's in 3 fields".to_string(),
        format!(
            "  spec.{list}[linkerd-proxy].env[LINKERD2_PROXY_LOG].value: the tool's {ours}, the cluster's \"debug\"\n"
        ),
        format!(
            "  spec.{list}[linkerd-proxy].env[LINKERD2_PROXY_EXTRA]: only in the cluster's pod: {{\"name\":\"LINKERD2_PROXY_EXTRA\",\"value\":\"1\"}}\n"
        ),
        "  metadata.labels[\"linkerd.io/workload-ns\"]: the tool's \"shop\", the cluster's \"elsewhere\"\n"
            .to_string(),
        "0 the same, 1 different, 0 refused".to_string(),
    ];
    for line in lines {
        assert!(run.stdout.contains(&line), "{line}\n{}", run.stdout);
    }
}

#[test]
fn a_namespace_the_webhook_does_not_inject_or_a_refusal_fails_naming_it() {
    let test = "a_namespace_the_webhook_does_not_inject_or_a_refusal_fails_naming_it";
    let original = common::values(DEPLOYMENT)[0].clone().expect("a deployment");
    let tool = injected(&[], DEPLOYMENT);
    let refusal = "pods \"web-\" is forbidden: violates PodSecurity \"restricted:latest\"";
    let admission = linkerd_in_shop(&original, &tool, vec![("locked".into(), refusal.into())]);
    let Some(cluster) = Cluster::start(test, admission) else {
        return;
    };
    // The webhook injects in `shop` only.
    let elsewhere = DEPLOYMENT.replace("namespace: shop", "namespace: other");
    let run = cluster.verify(&[], &elsewhere);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("differs: deployment/web (namespace other, ")
            && run
                .stdout
                .contains("  spec.initContainers: only in the tool's pod: [")
            && run.stdout.contains(
                "the cluster's webhook added no container: is injection enabled for namespace other"
            ),
        "{}",
        run.stdout
    );
    // The apiserver refuses pods in `locked`: said with its message.
    let locked = DEPLOYMENT.replace("namespace: shop", "namespace: locked");
    let run = cluster.verify(&[], &locked);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(
            "input.yaml): the cluster refused its pod both before injection and as the tool injects it: Error from server (Forbidden): pods \"web-\" is forbidden"
        ) && run.stdout.contains("refused: deployment/web (namespace locked, "),
        "{}",
        run.stdout
    );
    // Without a namespace, the pods go where inject put the workload: -n.
    let unnamed = DEPLOYMENT.replace("  namespace: shop\n", "");
    let run = cluster.verify(&["-n", "shop"], &unnamed);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
}

#[test]
fn without_a_cluster_or_kubectl_nothing_is_verified_and_the_status_is_2() {
    let test = "without_a_cluster_or_kubectl_nothing_is_verified_and_the_status_is_2";
    let Some(cluster) = Cluster::start(test, Admission::default()) else {
        return;
    };
    let run = cluster.verify(&["--kube-context", "unreachable"], DEPLOYMENT);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("nothing was verified. kubectl said:"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stdout, "");
    let empty = tempfile::tempdir().expect("a temp dir");
    let run = cluster.verify_with(&[], DEPLOYMENT, Some(path_str(empty.path())));
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("kubectl is not on PATH: verify talks to the cluster through kubectl"),
        "{}",
        run.stderr
    );
    // Files of both meshes without --profile: which one to verify is asked.
    let both = format!(
        "{}---\n{}",
        common::run(&["-q", "-f", "-"], Some(DEPLOYMENT)).stdout,
        common::run(&["--profile", "istio", "-q", "-f", "-"], Some(DEPLOYMENT)).stdout
    );
    let run = cluster.verify(&[], &both);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("injected by several meshes (linkerd, istio): verify each one's files with its --profile"),
        "{}",
        run.stderr
    );
    // No input is a mistake, not a pass.
    let run = cluster.verify(&[], "");
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("verify: no input"), "{}", run.stderr);
}

#[test]
fn linkerds_own_expected_injection_as_the_clusters_webhook_verifies_the_same() {
    let test = "linkerds_own_expected_injection_as_the_clusters_webhook_verifies_the_same";
    let Some(fidelity) = common::shared("fidelity/linkerd", test) else {
        return;
    };
    let inputs = fidelity.join("../../corpus/linkerd-inject-inputs");
    let anchors = std::fs::read_to_string(fidelity.join("valid-trust-anchors.pem")).expect("pem");
    for case in ["deployment", "statefulset"] {
        let input =
            std::fs::read_to_string(inputs.join(format!("inject_emojivoto_{case}.input.yml")))
                .expect("the input");
        let golden = std::fs::read_to_string(
            fidelity.join(format!("golden/inject_emojivoto_{case}.golden.yml")),
        )
        .expect("the golden");
        let workload = |text: &str| {
            common::values(text)
                .into_iter()
                .flatten()
                .find(|v| v["spec"]["template"].is_object())
                .expect("a workload")
        };
        // Linkerd's expected pod, as its webhook would return it.
        let admission = Admission {
            webhook: Some(webhook(
                &workload(&input),
                &pod_of_template(&workload(&golden)),
                "linkerd-proxy",
                &["emojivoto"],
            )),
            refused: Vec::new(),
        };
        let Some(cluster) = Cluster::start(test, admission) else {
            return;
        };
        // The build's version is the profile's, not a setting (which would
        // be written as an annotation), as in Linkerd's test.
        let version = format!(
            "proxyVersion={}",
            crate::linkerd_goldens::proxy_version(&golden)
        );
        let config = common::run(&["config", "--set", &version], None);
        assert_eq!(config.code, 0, "{}", config.stderr);
        let profile = cluster.home.path().join("profile.yaml");
        std::fs::write(&profile, &config.stdout).expect("writes the profile");
        let anchors = format!("trustAnchorsPEM={anchors}");
        let args = ["--config", path_str(&profile), "--set", &anchors];
        let run = cluster.verify(&args, &input);
        assert_eq!(run.code, 0, "{case}: {}{}", run.stdout, run.stderr);
        assert!(run.stdout.contains("1 the same"), "{}", run.stdout);
    }
}

#[test]
fn a_base_of_overlays_in_other_namespaces_is_verified_in_each() {
    let test = "a_base_of_overlays_in_other_namespaces_is_verified_in_each";
    let repo = tempfile::tempdir().expect("a temp dir");
    let base = DEPLOYMENT.replace("  namespace: shop\n", "");
    for (file, text) in [
        ("base/deploy.yaml", base.as_str()),
        ("base/kustomization.yaml", "resources: [deploy.yaml]\n"),
        (
            "overlays/prod/kustomization.yaml",
            "namespace: shop\nresources: [../../base]\n",
        ),
        (
            "overlays/dev/kustomization.yaml",
            "namespace: dev\nresources: [../../base]\n",
        ),
    ] {
        let path = repo.path().join(file);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("writes");
    }
    std::fs::create_dir(repo.path().join(".git")).expect("mkdir");
    let file = repo.path().join("base/deploy.yaml");
    // The base is injected once for both overlays; the webhook injects in shop only.
    let run = common::run(&["-q", "-f", path_str(&file)], None);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let tool = common::values(&run.stdout)[0]
        .clone()
        .expect("the deployment");
    let original = common::values(&base)[0].clone().expect("a deployment");
    let admission = linkerd_in_shop(&original, &tool, Vec::new());
    let Some(cluster) = Cluster::start(test, admission) else {
        return;
    };
    let run = cluster.verify_file(&[], &file, None);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    for line in [
        "same: deployment/web (namespace shop, ",
        "differs: deployment/web (namespace dev, ",
        "is injection enabled for namespace dev",
        "2 workloads sent to the cluster: 1 the same, 1 different, 0 refused",
    ] {
        assert!(run.stdout.contains(line), "{line}\n{}", run.stdout);
    }
}

#[test]
fn a_list_as_kubectl_get_prints_it_is_verified_item_by_item() {
    let test = "a_list_as_kubectl_get_prints_it_is_verified_item_by_item";
    let original = common::values(DEPLOYMENT)[0].clone().expect("a deployment");
    let tool = injected(&[], DEPLOYMENT);
    let admission = linkerd_in_shop(&original, &tool, Vec::new());
    let Some(cluster) = Cluster::start(test, admission) else {
        return;
    };
    // As `kubectl get deployments -o json` prints it: a `List` whose items
    // carry what the apiserver keeps (managed fields, uid, status).
    let mut item = original.clone();
    item["metadata"]["uid"] = json!("0b6e2f5a-0000-4000-8000-000000000009");
    item["metadata"]["resourceVersion"] = json!("4711");
    item["metadata"]["managedFields"] = json!([{"manager": "kubectl", "operation": "Update",
        "apiVersion": "apps/v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]);
    item["status"] = json!({"replicas": 1, "readyReplicas": 1});
    let list = json!({"apiVersion": "v1", "kind": "List",
        "metadata": {"resourceVersion": ""}, "items": [item]});
    let text = serde_json::to_string_pretty(&list).expect("JSON");
    let run = cluster.verify(&[], &text);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("1 the same"), "{}", run.stdout);
}

//! Uninject of pods Istio itself injected (its injection tests' goldens, in
//! `../shared/fidelity/istio`): no record of this tool, Istio's
//! `sidecar.istio.io/status` says what it injected and
//! `proxy.istio.io/overrides` records the pod's own containers it merged
//! its rendered ones into.
//!
//! 1. For every golden whose pod had containers of its own overridden (a
//!    gateway's `istio-proxy`, a proxy override, the app a gRPC or custom
//!    template merges into), uninject gives the input's pod back, field for
//!    field, compared as values (the goldens are Istio's serialisation),
//!    but for the differences listed with their reasons.
//! 2. Over every golden: uninject writes at least one container in every
//!    pod, and nothing Istio's status names that the input did not have.

use crate::common;

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Istio's annotations that its templates write only when the pod has none,
/// so that the pod's own cannot be told from Istio's: uninject leaves them.
const LEFT_ANNOTATIONS: &[&str] = &[
    "kubectl.kubernetes.io/default-container",
    "kubectl.kubernetes.io/default-logs-container",
];

/// What uninject cannot give back of a golden's pod, by the golden and the
/// path where it differs (as `common::field_differences` writes it), with
/// the reason.
const KNOWN_DIFFERENCES: &[(&str, &str, &str)] = &[
    (
        "hello-openshift-custom-injection.yaml.injected",
        "/spec/template/spec/containers[istio-proxy]/securityContext",
        "on OpenShift Istio drops a runAsUser of the pod's proxy equal to the app's before it records the proxy in its overrides: the recorded proxy does not have it",
    ),
    (
        "custom-template.yaml.injected",
        "/spec/template/metadata/annotations/",
        "the test's custom template writes foo, merge-metrics and rewriteAppHTTPProbers on the pod, which Istio's status does not list",
    ),
];

/// Annotations Istio's templates write on the pod, the pod's own value
/// where it has one, which its status does not list: uninject cannot tell
/// the pod's own from Istio's and leaves them (the sidecar template's with
/// CNI, the capture settings for the CNI plugin; the gRPC templates'
/// `rewriteAppHTTPProbers: "false"`).
const TEMPLATE_ANNOTATIONS: &[&str] = &[
    "sidecar.istio.io/interceptionMode",
    "traffic.sidecar.istio.io/includeOutboundIPRanges",
    "traffic.sidecar.istio.io/excludeOutboundIPRanges",
    "traffic.sidecar.istio.io/includeInboundPorts",
    "traffic.sidecar.istio.io/excludeInboundPorts",
    "sidecar.istio.io/rewriteAppHTTPProbers",
];

/// Paths of a golden's pods that Istio's gateway template sets on the pod
/// itself, unrecorded (its status lists containers and volumes only):
/// uninject cannot tell them from the pod's own and leaves them.
const GATEWAY_POD_FIELDS: &[&str] = &["/spec/template/spec/securityContext"];

/// The goldens of Istio's injection tests with the input each was injected
/// from: the rows of `CASES.md`, and the goldens whose input sits beside
/// them (`NAME.yaml` for `NAME.yaml.injected`).
fn goldens_with_inputs(dir: &Path, corpus: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut pairs: Vec<(PathBuf, PathBuf)> = common::istio_cases(dir)
        .into_iter()
        .map(|case| {
            (
                dir.join("golden").join(&case.golden),
                corpus.join("istio-inject-inputs").join(&case.input),
            )
        })
        .collect();
    let mut beside: Vec<(PathBuf, PathBuf)> = std::fs::read_dir(dir.join("golden"))
        .expect("goldens")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter_map(|golden| {
            let name = golden.file_name()?.to_str()?;
            let input = golden.with_file_name(name.strip_suffix(".injected")?);
            input.is_file().then_some((golden, input))
        })
        .filter(|(golden, _)| pairs.iter().all(|(g, _)| g != golden))
        .collect();
    beside.sort();
    pairs.extend(beside);
    // A golden is listed once even when two rows name it.
    pairs.dedup_by(|a, b| a.0 == b.0);
    pairs
}

/// `text` uninjected by the real binary with the istio profile.
fn uninject(golden: &Path) -> String {
    let path = golden.to_string_lossy();
    let run = common::run_as_given(&["uninject", "-q", "--profile", "istio", "-f", &path], None);
    assert_eq!(run.code, 0, "{}: {}", golden.display(), run.stderr);
    run.stdout
}

/// Every resource quantity under `value` in canonical form, as Istio's
/// serialiser writes them (`3000m` is `3`).
fn canonical_quantities(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                if key == "resources" {
                    for list in ["limits", "requests"] {
                        if let Some(quantities) = child.get_mut(list) {
                            mesh_inject::mesh::istio::typed::canonical_quantities(quantities);
                        }
                    }
                }
                canonical_quantities(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(canonical_quantities),
        _ => {}
    }
}

/// The objects of `text` as values, without serialiser noise and the
/// annotations uninject leaves, quantities canonical.
fn objects(text: &str) -> Vec<Value> {
    let left: Vec<&str> = LEFT_ANNOTATIONS
        .iter()
        .chain(TEMPLATE_ANNOTATIONS)
        .copied()
        .collect();
    let mut objects = common::golden_objects(text, &left);
    objects.iter_mut().for_each(canonical_quantities);
    objects.iter_mut().for_each(without_empty_lists);
    objects
}

/// `value` without empty lists: the apiserver reads one as no list (Go
/// omits both), and uninject leaves a list it emptied as a list.
fn without_empty_lists(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.values_mut().for_each(without_empty_lists);
            map.retain(|_, v| v.as_array().is_none_or(|items| !items.is_empty()));
        }
        Value::Array(items) => items.iter_mut().for_each(without_empty_lists),
        _ => {}
    }
}

/// The pods of an object: its own spec for a Pod, the template's of a
/// workload, a CronJob's job's, each item's of a list; with the metadata
/// beside each.
fn pods(object: &Value) -> Vec<(&Value, &Value)> {
    if let Some(items) = object.get("items").and_then(Value::as_array) {
        return items.iter().flat_map(pods).collect();
    }
    let at = match object.get("kind").and_then(Value::as_str) {
        Some("Pod") => Some(object),
        Some("CronJob") => object.pointer("/spec/jobTemplate/spec/template"),
        _ => object.pointer("/spec/template"),
    };
    at.and_then(|pod| Some((pod.get("metadata")?, pod.get("spec")?)))
        .into_iter()
        .collect()
}

/// The names in the list `list` of a pod's spec.
fn names<'a>(spec: &'a Value, list: &str) -> Vec<&'a str> {
    spec.get(list)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("name").and_then(Value::as_str))
        .collect()
}

/// The names Istio's status on a pod lists in `list`.
fn status_names(metadata: &Value, list: &str) -> Vec<String> {
    metadata
        .pointer("/annotations/sidecar.istio.io~1status")
        .and_then(Value::as_str)
        .and_then(|s| serde_json::from_str::<Value>(s).ok())
        .and_then(|s| s.get(list).cloned())
        .and_then(|l| serde_json::from_value::<Vec<String>>(l).ok())
        .unwrap_or_default()
}

#[test]
fn uninject_gives_back_the_pods_own_containers_istio_overrode() {
    let test = "uninject_gives_back_the_pods_own_containers_istio_overrode";
    let Some(dir) = common::shared("fidelity/istio", test) else {
        return;
    };
    let Some(corpus) = common::corpus(test) else {
        return;
    };
    let mut failures = Vec::new();
    let mut checked = Vec::new();
    for (golden, input) in goldens_with_inputs(&dir, &corpus) {
        let text = std::fs::read_to_string(&golden).expect("golden");
        if !text.contains("proxy.istio.io/overrides") {
            continue;
        }
        let name = golden.file_name().unwrap().to_string_lossy().into_owned();
        let got = objects(&uninject(&golden));
        let want = objects(&std::fs::read_to_string(&input).expect("input"));
        assert_eq!(got.len(), want.len(), "{name}: documents");
        let gateway = text.contains("inject.istio.io/templates: gateway");
        for (got, want) in got.iter().zip(&want) {
            for difference in common::field_differences(got, want, "") {
                let at = |path: &str| {
                    difference.starts_with(&format!("{path}:"))
                        || (path.ends_with('/') && difference.starts_with(path))
                };
                let known = KNOWN_DIFFERENCES
                    .iter()
                    .any(|(g, path, _)| *g == name && at(path))
                    || (gateway && GATEWAY_POD_FIELDS.iter().any(|path| at(path)));
                if !known {
                    failures.push(format!("{name}: {difference}"));
                }
            }
        }
        checked.push(name);
    }
    assert!(
        failures.is_empty(),
        "uninject does not give the input's pod back:\n{}",
        failures.join("\n")
    );
    // The goldens of Istio's own tests whose pods had containers overridden.
    for expected in [
        "gateway.yaml.injected",
        "grpc-agent.yaml.injected",
        "grpc-simple.yaml.injected",
        "only-proxy-container.yaml.injected",
        "proxy-override.yaml.injected",
        "proxy-override-args.yaml.injected",
        "proxy-override-runas.yaml.injected",
        "hello-openshift-custom-injection.yaml.injected",
        "custom-template.yaml.injected",
    ] {
        assert!(
            checked.iter().any(|c| c == expected),
            "{expected} was not checked: {checked:?}"
        );
    }
}

#[test]
fn uninject_of_every_istio_golden_leaves_a_container_and_nothing_istio_injected() {
    let test = "uninject_of_every_istio_golden_leaves_a_container_and_nothing_istio_injected";
    let Some(dir) = common::shared("fidelity/istio", test) else {
        return;
    };
    let Some(corpus) = common::corpus(test) else {
        return;
    };
    let mut failures = Vec::new();
    let pairs = goldens_with_inputs(&dir, &corpus);
    assert!(pairs.len() > 100, "{} goldens", pairs.len());
    for (golden, input) in pairs {
        let name = golden.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&golden).expect("golden");
        let injected = common::golden_objects(&text, &[]);
        let got = objects(&uninject(&golden));
        let want = objects(&std::fs::read_to_string(&input).expect("input"));
        if got.len() != injected.len() || want.len() != got.len() {
            failures.push(format!("{name}: documents differ in number"));
            continue;
        }
        for ((injected, got), want) in injected.iter().zip(&got).zip(&want) {
            let (injected, got, want) = (pods(injected), pods(got), pods(want));
            if got.len() != want.len() || injected.len() != got.len() {
                failures.push(format!("{name}: pods differ in number"));
                continue;
            }
            for (((metadata, _), (_, spec)), (_, input)) in injected.iter().zip(&got).zip(&want) {
                if names(spec, "containers").is_empty() {
                    failures.push(format!("{name}: a pod without containers"));
                }
                for list in ["containers", "initContainers", "volumes"] {
                    let listed = status_names(metadata, list);
                    let had = names(input, list);
                    for left in names(spec, list) {
                        if listed.iter().any(|l| l == left) && !had.contains(&left) {
                            failures.push(format!("{name}: {list} {left} of Istio's is left"));
                        }
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A pod Istio injected whose status names every container, with no
/// overrides to say which of them were the pod's own (an Istio that wrote
/// none): uninject leaves it byte for byte and says why, rather than write
/// a pod the apiserver rejects.
#[test]
fn a_pod_that_would_be_left_no_container_is_skipped_with_the_reason() {
    let input = "\
apiVersion: v1
kind: Pod
metadata:
  name: grpc
  annotations:
    sidecar.istio.io/status: '{\"containers\":[\"istio-proxy\",\"traffic\"],\"volumes\":null}'
spec:
  containers:
  - name: traffic
    image: traffic:1
  - name: istio-proxy
    image: registry.istio.io/testing/proxyv2:latest
";
    let run = common::run_as_given(&["uninject", "--profile", "istio"], Some(input));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, input);
    assert!(
        run.stderr
            .contains("pod/grpc skipped: uninject would leave the pod no container"),
        "{}",
        run.stderr
    );
}

/// The gateway Istio's chart writes (its only container `istio-proxy` with
/// `image: auto`), as Istio's webhook injects it: uninject gives the
/// chart's container back, and the text outside it is kept.
#[test]
fn a_gateway_istio_injected_gets_its_own_proxy_back() {
    let input = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: gw
spec:
  template:
    metadata:
      annotations:
        # Istio's, from its webhook
        proxy.istio.io/overrides: '{\"containers\":[{\"name\":\"istio-proxy\",\"resources\":{}}]}'
        sidecar.istio.io/status: '{\"containers\":[\"istio-proxy\"],\"volumes\":[\"istio-envoy\"]}'
        inject.istio.io/templates: gateway
    spec:
      containers:
      - name: istio-proxy
        image: registry.istio.io/testing/proxyv2:latest
        args: [proxy, router]
      volumes:
      - name: istio-envoy
        emptyDir: {}
";
    let run = common::run_as_given(&["uninject", "--profile", "istio"], Some(input));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let want = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: gw
spec:
  template:
    metadata:
      annotations:
        # Istio's, from its webhook
        inject.istio.io/templates: gateway
    spec:
      containers:
      - name: istio-proxy
        image: auto
      volumes: []
";
    assert_eq!(run.stdout, want);
}

/// The modes a pod's own proxy is merged in: a native sidecar (moved to the
/// init containers), a classic one last among the containers, and one
/// first (moved to the front).
const MERGE_MODES: [&[&str]; 3] = [
    &["--profile", "istio"],
    &["--profile", "istio", "--native-sidecar", "never"],
    &[
        "--profile",
        "istio",
        "--native-sidecar",
        "never",
        "--set",
        "proxyPosition=first",
    ],
];

/// 3. A pod's own `istio-proxy` or `istio-init` that inject merges into
///    Istio's: in every mode, injecting again changes nothing, and uninject
///    gives the file back byte for byte (comments, quoting, flow style,
///    CRLF line ends, a last line without a line break), with the repository's
///    fixture and every corpus file that has such a container.
#[test]
fn merged_containers_come_back_as_written() {
    let fixture = common::testdata("istio/user-proxy-as-written.yaml");
    let text = std::fs::read_to_string(&fixture).expect("fixture");
    let mut inputs: Vec<(String, String)> = vec![
        ("fixture".into(), text.clone()),
        ("fixture, CRLF".into(), text.replace('\n', "\r\n")),
        (
            "fixture, no final line break".into(),
            text.trim_end().to_string(),
        ),
    ];
    if let Some(corpus) = common::corpus("istio_uninject::merged_containers_come_back_as_written") {
        for path in common::manifests_under(&corpus) {
            let text = std::fs::read_to_string(&path).expect("read");
            let own_proxy = ["- name: istio-proxy", "- name: istio-init"]
                .iter()
                .any(|n| text.contains(n));
            if own_proxy && !text.contains("sidecar.istio.io/status") {
                inputs.push((path.display().to_string(), text));
            }
        }
    }
    let mut merged = 0;
    let mut failures = Vec::new();
    for (name, text) in &inputs {
        for mode in MERGE_MODES {
            let mut args = vec!["-q", "--warn-only"];
            args.extend_from_slice(mode);
            let once = common::run_as_given(&args, Some(text));
            if once.code != 0 || !once.stdout.contains("userContainers=") {
                continue;
            }
            merged += 1;
            if common::run_as_given(&args, Some(&once.stdout)).stdout != once.stdout {
                failures.push(format!("{name} {mode:?}: injecting again changes it"));
            }
            let back = common::run_as_given(
                &["uninject", "-q", "--profile", "istio"],
                Some(&once.stdout),
            );
            if back.stdout != *text {
                failures.push(format!(
                    "{name} {mode:?}: uninject does not give the file back:\n{}",
                    back.stdout
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The fixture's three forms in three modes, at least.
    assert!(merged >= 9, "only {merged} merged");
}

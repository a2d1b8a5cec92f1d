//! A Linkerd proxy that cannot start is never written. Injecting with
//! Linkerd's profile (the default) and no trust anchors writes nothing in any
//! mode and exits 2 with the commands that fetch them; each place anchors come
//! from (the trust-roots ConfigMap in the input or `--context`, the values of
//! `linkerd-config`, `--set`) lets the run through with the PEM in the
//! proxy's env; a run that injects nothing needs none. The runs here are as
//! given (`common::run_as_given`): no sample anchors are added to them.

use crate::common;

use std::path::Path;

use sha2::{Digest, Sha256};

const EXAMPLE: &str = "testdata/example/deploy.yaml";

/// What a run of the example without anchors says, exactly.
const REFUSED: &str = "error: testdata/example/deploy.yaml: document 1, line 3:1: deployment/web cannot be injected: value \"trustAnchorsPEM\" is empty: the proxy cannot start without the identity trust anchors of the cluster's Linkerd; save them with the rest of the cluster's configuration:
  kubectl mesh-inject context save cluster/ --profile linkerd --linkerd-namespace linkerd
or only them:
  kubectl get configmap -n linkerd linkerd-identity-trust-roots -o yaml > cluster/linkerd-trust-roots.yaml
then run again with --context cluster/, or give the anchors themselves with --set trustAnchorsPEM=\"$(cat ca-bundle.crt)\"
  |
3 | apiVersion: apps/v1
  | ^
";

/// Run in the repository with exactly `args`.
fn in_repo(args: &[&str], stdin: &str) -> common::Run {
    let mut cmd = common::command();
    cmd.current_dir(common::repo())
        .args(args)
        .write_stdin(stdin.as_bytes().to_vec());
    cmd.output().expect("runs").into()
}

fn example() -> String {
    std::fs::read_to_string(common::repo().join(EXAMPLE)).expect("example")
}

/// A Deployment `name` in namespace `shop`, with pod annotations (flow entries).
fn deployment(name: &str, annotations: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  namespace: shop\nspec:\n  selector:\n    matchLabels: {{app: {name}}}\n  template:\n    metadata:\n      labels: {{app: {name}}}\n      annotations: {{{annotations}}}\n    spec:\n      containers:\n      - name: app\n        image: example/app:1\n"
    )
}

/// The sample trust roots' file.
fn trust_roots() -> String {
    std::fs::read_to_string(common::cluster().join("linkerd-trust-roots.yaml"))
        .expect("the sample trust roots")
}

/// Linkerd's `linkerd-config` ConfigMap with `pem` as its trust anchors.
fn linkerd_config(pem: &str) -> String {
    let pem: String = pem.lines().map(|l| format!("      {l}\n")).collect();
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: linkerd-config\n  namespace: linkerd\ndata:\n  values: |\n    identityTrustAnchorsPEM: |\n{pem}    proxy:\n      logLevel: warn,linkerd=info\n"
    )
}

/// The proxy containers of every workload of `output`, with the workload's
/// pod annotations: (trust anchors in the env, `linkerd.io/trust-root-sha256`).
fn proxies(output: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for value in common::values(output).into_iter().flatten() {
        let objects = match value["kind"].as_str() {
            Some(kind) if kind.ends_with("List") => {
                value["items"].as_array().cloned().unwrap_or_default()
            }
            _ => vec![value],
        };
        for object in objects {
            let pod = match object["kind"].as_str() {
                Some("Pod") => object.clone(),
                _ => object["spec"]["template"].clone(),
            };
            let containers = ["initContainers", "containers"]
                .iter()
                .flat_map(|list| pod["spec"][list].as_array().cloned().unwrap_or_default());
            for container in containers.filter(|c| c["name"] == "linkerd-proxy") {
                let anchors = container["env"]
                    .as_array()
                    .expect("env")
                    .iter()
                    .find(|e| e["name"] == "LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS")
                    .and_then(|e| e["value"].as_str())
                    .expect("the anchors' entry")
                    .to_string();
                let hash = pod["metadata"]["annotations"]["linkerd.io/trust-root-sha256"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                found.push((anchors, hash));
            }
        }
    }
    found
}

/// Every proxy of `output` carries `pem` (as the proxy takes it: trimmed,
/// one final line break) and the pod the SHA-256 of `pem` as it was given
/// (as Linkerd's webhook hashes the file it mounts); there are `count` of them.
fn assert_anchored(output: &str, pem: &str, count: usize, what: &str) {
    let carried = format!("{}\n", pem.trim());
    let hash: String = Sha256::digest(pem.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let found = proxies(output);
    assert_eq!(found.len(), count, "{what}: proxies in {output}");
    for (anchors, annotation) in found {
        assert_eq!(anchors, carried, "{what}");
        assert_eq!(annotation, hash, "{what}");
    }
}

#[test]
fn without_anchors_nothing_is_written_and_the_run_exits_2_with_the_fix() {
    let modes: [&[&str]; 8] = [
        &[],
        &["-o", "json"],
        &["-o", "patch"],
        &["--diff"],
        &["--check"],
        &["-q"],
        &["--report", "json"],
        &["--warn-only"],
    ];
    for mode in modes {
        let args = [mode, &["-f", EXAMPLE]].concat();
        let run = in_repo(&args, "");
        assert_eq!(run.code, 2, "{mode:?}: {}", run.stderr);
        assert_eq!(run.stdout, "", "{mode:?}: nothing on standard output");
        if mode == ["--report", "json"] {
            // The same message, as the JSON a tool reading the report expects.
            let report: serde_json::Value =
                serde_json::from_str(&run.stderr).expect("one JSON document");
            let message = REFUSED
                .strip_prefix("error: ")
                .and_then(|rest| rest.split_once("\n  |\n"))
                .map(|(message, _)| message);
            assert_eq!(
                report["error"],
                serde_json::json!({"message": message, "file": EXAMPLE, "document": 1, "line": 3, "column": 1})
            );
            continue;
        }
        assert_eq!(run.stderr, REFUSED, "{mode:?}");
    }
    // From standard input, as a pipe gives it.
    let run = in_repo(&[], &example());
    assert_eq!(run.code, 2);
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        REFUSED.replace("error: testdata/example/deploy.yaml:", "error: <stdin>:")
    );
    // The hint names the control plane's namespace in force.
    let run = in_repo(&["-f", EXAMPLE, "--set", "controlPlaneNamespace=l5d"], "");
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("  kubectl get configmap -n l5d linkerd-identity-trust-roots -o yaml"),
        "{}",
        run.stderr
    );
    // Anchors of blanks only are none.
    let run = in_repo(&["-f", EXAMPLE, "--set", "trustAnchorsPEM= \n "], "");
    assert_eq!(run.code, 2);
    assert_eq!(run.stdout, "");
}

/// The files of `dir`, with their bytes, sorted by name.
fn files_of(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .expect("ls")
        .map(|entry| {
            let entry = entry.expect("entry");
            let name = entry.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(entry.path()).expect("read"))
        })
        .collect();
    files.sort();
    files
}

#[test]
fn in_place_without_anchors_leaves_every_file_byte_identical() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a-web.yaml"), example()).expect("write");
    std::fs::write(dir.path().join("b-api.yaml"), deployment("api", "")).expect("write");
    let before = files_of(dir.path());
    let path = dir.path().to_str().expect("a UTF-8 path");
    let run = in_repo(&["--in-place", "-f", path], "");
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr
            .contains("a-web.yaml: document 1, line 3:1: deployment/web cannot be injected"),
        "{}",
        run.stderr
    );
    assert_eq!(
        files_of(dir.path()),
        before,
        "every file as it was, and no temporary left"
    );
    // Given the anchors, the same run rewrites both.
    let cluster = common::cluster();
    let cluster = cluster.to_str().expect("a UTF-8 path");
    let run = in_repo(&["-q", "--in-place", "-f", path, "--context", cluster], "");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let after = files_of(dir.path());
    assert_eq!(after.len(), 2);
    for (name, bytes) in after {
        let text = String::from_utf8(bytes).expect("UTF-8");
        assert_anchored(&text, &common::sample_anchors(), 1, &name);
    }
}

#[test]
fn anchors_from_each_source_reach_the_proxy() {
    let pem = common::sample_anchors();
    // As linkerd-config's literal block gives it: one final line break.
    let other = common::ANCHOR_B;
    let workload = deployment("web", "");
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("linkerd-config.yaml");
    std::fs::write(&config, linkerd_config(other)).expect("write");
    let config = config.to_str().expect("a UTF-8 path");
    let roots_file = common::cluster().join("linkerd-trust-roots.yaml");
    let roots_file = roots_file.to_str().expect("a UTF-8 path");
    let cluster = common::cluster();
    let cluster = cluster.to_str().expect("a UTF-8 path");
    // As `kubectl get cm linkerd-config linkerd-identity-trust-roots -o yaml` writes both.
    let both = dir.path().join("linkerd.yaml");
    let items: String = [linkerd_config(other), trust_roots()]
        .iter()
        .map(|object| {
            let lines: Vec<&str> = object.lines().filter(|l| !l.starts_with('#')).collect();
            format!("- {}\n", lines.join("\n  "))
        })
        .collect();
    std::fs::write(
        &both,
        format!("apiVersion: v1\nkind: List\nitems:\n{items}metadata: {{}}\n"),
    )
    .expect("write");
    let both = both.to_str().expect("a UTF-8 path");
    let set = format!("trustAnchorsPEM={pem}");
    let cases: [(&str, Vec<&str>, String, &str); 8] = [
        (
            "the trust roots before the workload",
            vec![],
            format!("{}---\n{workload}", trust_roots()),
            &pem,
        ),
        (
            "the trust roots after the workload",
            vec![],
            format!("{workload}---\n{}", trust_roots()),
            &pem,
        ),
        (
            "--context with the trust roots' directory",
            vec!["--context", cluster],
            workload.clone(),
            &pem,
        ),
        (
            "--context with the trust roots' file",
            vec!["--context", roots_file],
            workload.clone(),
            &pem,
        ),
        (
            "linkerd-config's values in --context",
            vec!["--context", config],
            workload.clone(),
            other,
        ),
        (
            "linkerd-config's values in the input",
            vec![],
            format!("{workload}---\n{}", linkerd_config(other)),
            other,
        ),
        (
            "both ConfigMaps: the trust roots win",
            vec!["--context", both],
            workload.clone(),
            &pem,
        ),
        (
            "--set, over the cluster's",
            vec!["--set", &set, "--context", config],
            workload.clone(),
            &pem,
        ),
    ];
    for (what, args, input, expected) in cases {
        let args = [&["-q"][..], &args].concat();
        let run = in_repo(&args, &input);
        assert_eq!(run.code, 0, "{what}: {}", run.stderr);
        assert_anchored(&run.stdout, expected, 1, what);
        // The ConfigMaps of the input pass through as they came.
        for document in common::document_texts(&input) {
            assert!(
                run.stdout.contains(document.trim_end()) || document.contains("kind: Deployment"),
                "{what}"
            );
        }
    }
}

#[test]
fn a_run_that_injects_nothing_needs_no_anchors() {
    // Skipped workloads: opted out, outside the webhook's scope, another
    // mesh's sidecar, host network; and kinds without a pod template.
    let skipped = [
        deployment("opted-out", "linkerd.io/inject: disabled"),
        deployment("system", "").replace("namespace: shop", "namespace: kube-system"),
        deployment("meshed", "").replace(
            "      - name: app\n",
            "      - name: istio-proxy\n        image: docker.io/istio/proxyv2:1.29.1\n      - name: app\n",
        ),
        deployment("host", "").replace("    spec:\n      containers:", "    spec:\n      hostNetwork: true\n      containers:"),
        "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec:\n  ports: [{port: 80}]\n".to_string(),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\ndata: {a: b}\n".to_string(),
    ]
    .join("---\n");
    for mode in [&[][..], &["--check"], &["--diff"], &["-o", "patch"]] {
        let run = in_repo(mode, &skipped);
        assert_eq!(run.code, 0, "{mode:?}: {}", run.stderr);
    }
    let run = in_repo(&[], &skipped);
    assert_eq!(run.stdout, skipped, "every document as it came");
    assert!(
        run.stderr.contains("0 injected, 0 unchanged, 6 skipped"),
        "{}",
        run.stderr
    );
    // Uninject takes out what an injection with anchors added, without them.
    let cluster = common::cluster();
    let injected = in_repo(
        &[
            "-q",
            "-f",
            EXAMPLE,
            "--context",
            cluster.to_str().expect("path"),
        ],
        "",
    );
    assert_eq!(injected.code, 0, "{}", injected.stderr);
    let back = in_repo(&["uninject", "-q"], &injected.stdout);
    assert_eq!(back.code, 0, "{}", back.stderr);
    assert_eq!(back.stdout, example());
    // The Istio profile requires nothing of the kind.
    let istio = in_repo(&["-q", "--profile", "istio", "-f", EXAMPLE], "");
    assert_eq!(istio.code, 0, "{}", istio.stderr);
    assert!(istio.stdout.contains("name: istio-proxy"));
    // Printing the profile needs none either.
    assert_eq!(in_repo(&["config"], "").code, 0);
}

#[test]
fn a_refusal_anywhere_in_a_large_stream_writes_nothing_and_late_anchors_count() {
    // Large enough to be cut among the cores: the refusal comes from
    // whichever stretch holds the workload, the trust roots from the last.
    let workloads: Vec<String> = (0..400)
        .map(|i| {
            if i % 2 == 0 {
                deployment(&format!("web-{i}"), "")
            } else {
                format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c-{i}, namespace: shop}}\ndata: {{padding: \"{}\"}}\n", "x".repeat(1200))
            }
        })
        .collect();
    let stream = workloads.join("---\n");
    assert!(stream.len() > 256 << 10, "{} bytes", stream.len());
    let run = in_repo(&["-q"], &stream);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.starts_with(
            "error: <stdin>: document 1, line 1:1: deployment/web-0 cannot be injected"
        ),
        "{}",
        run.stderr
    );
    let anchored = format!("{stream}---\n{}", trust_roots());
    let run = in_repo(&["-q"], &anchored);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_anchored(
        &run.stdout,
        &common::sample_anchors(),
        200,
        "late trust roots",
    );
}

#[test]
fn a_refused_list_item_is_named_where_it_stands() {
    let list = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: debug}\n  spec:\n    containers: [{name: debug, image: busybox}]\n";
    let run = in_repo(&[], list);
    assert_eq!(run.code, 2);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr
            .starts_with("error: <stdin>: document 1, line 7:3: pod/debug cannot be injected:"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("7 | - apiVersion: v1\n  |   ^\n"),
        "{}",
        run.stderr
    );
}

/// A ResourceList as kpt hands it to a KRM function, items annotated with
/// their files, and `config` as the functionConfig's data (flow entries).
fn resource_list(config: &str) -> String {
    format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: settings\n    annotations: {{config.kubernetes.io/path: settings.yaml, config.kubernetes.io/index: '0'}}\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: web\n    namespace: shop\n    annotations: {{config.kubernetes.io/path: pod.yaml, config.kubernetes.io/index: '0'}}\n  spec:\n    containers:\n    - {{name: app, image: example/app:1}}\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {{name: mesh-inject}}\n  data: {{{config}}}\n"
    )
}

#[test]
fn a_krm_function_without_anchors_answers_with_an_error_result_and_its_items_as_they_came() {
    let input = resource_list("");
    let run = in_repo(&[], &input);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .starts_with("error: <stdin>: document 1, line 9:3: pod/web cannot be injected: value \"trustAnchorsPEM\" is empty"),
        "{}",
        run.stderr
    );
    let answer = common::values(&run.stdout)
        .into_iter()
        .flatten()
        .next()
        .expect("a ResourceList");
    let given = common::values(&input)
        .into_iter()
        .flatten()
        .next()
        .expect("a ResourceList");
    assert_eq!(answer["items"], given["items"], "no item injected");
    let results = answer["results"].as_array().expect("results");
    assert_eq!(results.len(), 1, "{results:?}");
    let result = &results[0];
    assert_eq!(result["severity"], "error");
    assert_eq!(
        result["resourceRef"],
        serde_json::json!({"apiVersion": "v1", "kind": "Pod", "name": "web", "namespace": "shop"})
    );
    assert_eq!(
        result["file"],
        serde_json::json!({"path": "pod.yaml", "index": 0})
    );
    let message = result["message"].as_str().expect("a message");
    assert!(
        message.starts_with("pod/web cannot be injected: value \"trustAnchorsPEM\" is empty")
            && message
                .contains("kubectl get configmap -n linkerd linkerd-identity-trust-roots -o yaml"),
        "{message}"
    );
    // The anchors as a functionConfig value: injected.
    let pem = common::sample_anchors().replace('\n', "\\n");
    let run = in_repo(&[], &resource_list(&format!("trustAnchorsPEM: \"{pem}\"")));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_anchored(&run.stdout, &common::sample_anchors(), 1, "functionConfig");
}

#[test]
fn admit_needs_anchors_only_where_the_injector_injects() {
    let opted_in = deployment("web", "linkerd.io/inject: enabled");
    for output in ["text", "yaml", "json"] {
        let run = in_repo(&["admit", "-o", output], &opted_in);
        assert_eq!(run.code, 2, "{output}: {}", run.stderr);
        assert_eq!(run.stdout, "", "{output}");
        assert!(
            run.stderr
                .starts_with("error: <stdin>: document 1, line 1:1: deployment/web cannot be injected: value \"trustAnchorsPEM\" is empty"),
            "{output}: {}",
            run.stderr
        );
    }
    let cluster = common::cluster();
    let cluster = cluster.to_str().expect("a UTF-8 path");
    let run = in_repo(&["admit", "-o", "yaml", "--context", cluster], &opted_in);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_anchored(&run.stdout, &common::sample_anchors(), 1, "admit -o yaml");
    // Not opted in, the webhook leaves the pod alone: no anchors needed,
    // unless --compare injects it on the static path.
    let plain = deployment("web", "");
    assert_eq!(in_repo(&["admit"], &plain).code, 0);
    let compare = in_repo(&["admit", "--compare"], &plain);
    assert_eq!(compare.code, 2, "{}", compare.stderr);
    assert_eq!(compare.stdout, "");
    // The output of inject needs none: the proxy is there.
    let injected = in_repo(&["-q", "--context", cluster], &plain);
    assert_eq!(in_repo(&["admit"], &injected.stdout).code, 0);
}

/// Linkerd hashes the anchors as its webhook mounts them from the
/// trust-roots ConfigMap: a `|-` bundle (no final line break) and a `|` one
/// hash differently, each as `sha256sum` of the file would.
#[test]
fn the_hash_is_of_the_anchors_as_the_configmap_holds_them() {
    let pem = common::ANCHOR_A;
    let indented: String = pem.lines().map(|l| format!("    {l}\n")).collect();
    for (style, given) in [("|", pem.to_string()), ("|-", pem.trim_end().to_string())] {
        let roots = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: linkerd-identity-trust-roots, namespace: linkerd}}\ndata:\n  ca-bundle.crt: {style}\n{indented}"
        );
        let input = format!("{roots}---\n{}", deployment("web", ""));
        let run = common::run_as_given(&["-q", "-f", "-"], Some(&input));
        assert_eq!(run.code, 0, "{style}: {}", run.stderr);
        assert_anchored(&run.stdout, &given, 1, style);
    }
    // --set takes the text as given too (a PEM without its final line break).
    let set = format!("trustAnchorsPEM={}", pem.trim_end());
    let run = common::run_as_given(
        &["-q", "--set", &set, "-f", "-"],
        Some(&deployment("web", "")),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_anchored(&run.stdout, pem.trim_end(), 1, "--set");
}

/// Trust anchors that are not X.509 certificates stop the run (exit 2,
/// nothing written), naming where they came from.
#[test]
fn anchors_that_are_not_certificates_stop_the_run_naming_their_source() {
    let fake = "-----BEGIN CERTIFICATE-----\nTEST\n-----END CERTIFICATE-----\n";
    let workload = deployment("web", "");
    let roots = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: linkerd-identity-trust-roots, namespace: linkerd}\ndata:\n  ca-bundle.crt: |\n    -----BEGIN CERTIFICATE-----\n    TEST\n    -----END CERTIFICATE-----\n";
    let dir = tempfile::tempdir().expect("tempdir");
    let profile = dir.path().join("profile.yaml");
    let config = common::run_as_given(
        &[
            "config",
            "--set",
            &format!("trustAnchorsPEM={}", common::ANCHOR_A),
        ],
        None,
    );
    assert_eq!(config.code, 0, "{}", config.stderr);
    std::fs::write(&profile, config.stdout.replace("MII", "XXMII")).expect("write");
    let profile = profile.to_str().expect("path");
    let set = format!("trustAnchorsPEM={fake}");
    let cases: [(&str, Vec<&str>, String, &str); 4] = [
        (
            "--set",
            vec!["--set", &set],
            workload.clone(),
            "--set trustAnchorsPEM: PEM block 1 is not an X.509 certificate",
        ),
        (
            "the trust roots",
            vec![],
            format!("{roots}---\n{workload}"),
            "ConfigMap linkerd/linkerd-identity-trust-roots: ca-bundle.crt (the profile's trustAnchorsPEM): PEM block 1 is not an X.509 certificate",
        ),
        (
            "linkerd-config",
            vec![],
            format!("{}---\n{workload}", linkerd_config(fake)),
            "ConfigMap linkerd/linkerd-config: values: identityTrustAnchorsPEM (the profile's trustAnchorsPEM): PEM block 1 is not an X.509 certificate",
        ),
        (
            "a profile",
            vec!["--config", profile],
            workload.clone(),
            "value trustAnchorsPEM: PEM block 1 is not an X.509 certificate",
        ),
    ];
    for (what, args, input, message) in cases {
        let args = [&["-f", "-"][..], &args].concat();
        let run = common::run_as_given(&args, Some(&input));
        assert_eq!(run.code, 2, "{what}: {}", run.stderr);
        assert_eq!(run.stdout, "", "{what}");
        assert!(run.stderr.contains(message), "{what}: {}", run.stderr);
    }
}

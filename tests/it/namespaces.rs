//! The namespace a workload that names none is injected as in: the one
//! kustomize gives it (its overlays'), else `-n` (or Helm's, see
//! `integrations.rs`), else `default`; a KRM function's from each item,
//! else its config. Each case is a real kustomize layout in a temporary
//! repository, run through the binary.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common;

/// A base's files, in a layout of [`repository`].
const BASE: &str = "base/deploy.yaml: deployment
                    base/kustomization.yaml: {resources: [deploy.yaml]}";

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx
";

/// A repository (a `.git` directory) of `layout`: a file a line, `PATH:
/// TEXT`, TEXT one line of YAML, or `deployment` for `deployment`.
fn repository(layout: &str, deployment: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join(".git")).expect("mkdir");
    for line in layout.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (name, text) = line.split_once(": ").expect("PATH: TEXT");
        let text = match text {
            "deployment" => deployment.to_string(),
            text => format!("{text}\n"),
        };
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
    }
    dir
}

/// Run with `args` (and the sample trust roots) in `dir`, `-v` for every
/// note unless `-q`.
fn run_in(dir: &Path, args: &[&str]) -> common::Run {
    let verbose: &[&str] = match args.contains(&"-q") {
        true => &[],
        false => &["-v"],
    };
    let args = [verbose, args].concat();
    common::run_to(&args, dir, "", Stdio::piped(), Stdio::piped())
}

/// That the report of `run` says `text`.
fn said(run: &common::Run, text: &str) {
    assert!(
        run.stderr.contains(text),
        "{text:?} not in:\n{}",
        run.stderr
    );
}

/// That the report of `run` does not say `text`.
fn not_said(run: &common::Run, text: &str) {
    assert!(!run.stderr.contains(text), "{text:?} in:\n{}", run.stderr);
}

/// The first document of `text`.
fn first_value(text: &str) -> Value {
    common::values(text)
        .into_iter()
        .flatten()
        .next()
        .expect("a document")
}

/// The pod labels of the first workload of `text`.
fn pod_labels(text: &str) -> Value {
    first_value(text)["spec"]["template"]["metadata"]["labels"].clone()
}

/// Inject in `dir` with `args`, which must succeed: the run, and the
/// namespace label written on the first workload's pod.
fn inject_in(dir: &Path, args: &[&str]) -> (common::Run, Value) {
    let run = run_in(dir, args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let label = pod_labels(&run.stdout)["linkerd.io/workload-ns"].clone();
    (run, label)
}

/// A repository of a base (`deployment`) and one overlay setting `shop`,
/// with the base injected, its pod labelled as in `namespace`.
fn base_with_overlay_injected(
    deployment: &str,
    namespace: &str,
) -> (tempfile::TempDir, common::Run) {
    let layout = format!(
        "{BASE}\noverlays/prod/kustomization.yaml: {{namespace: shop, resources: [../../base]}}"
    );
    let dir = repository(&layout, deployment);
    let (run, label) = inject_in(dir.path(), &["-f", "base/deploy.yaml"]);
    assert_eq!(label, namespace);
    (dir, run)
}

/// The Deployment kubectl's own kustomize builds from `overlay` in `dir`;
/// `None` (the part of `test` said to be skipped) without kubectl.
fn kustomized_deployment(dir: &Path, overlay: &str, test: &str) -> Option<Value> {
    let kubectl = Command::new("kubectl")
        .args(["version", "--client"])
        .output();
    if !kubectl.is_ok_and(|o| o.status.success()) {
        common::skip_part(test, "kubectl is not installed");
        return None;
    }
    let built = Command::new("kubectl")
        .args(["kustomize", overlay])
        .current_dir(dir)
        .output()
        .expect("kubectl runs");
    assert!(built.status.success(), "{built:?}");
    let built = String::from_utf8(built.stdout).expect("UTF-8");
    let deployment = common::values(&built)
        .into_iter()
        .flatten()
        .find(|v| v["kind"] == "Deployment");
    Some(deployment.expect("kustomize builds the Deployment"))
}

#[test]
fn a_base_is_injected_as_in_the_namespace_of_its_overlay() {
    let (dir, run) = base_with_overlay_injected(DEPLOYMENT, "shop");
    said(
        &run,
        "deployment/web injected\n  namespace shop from kustomization overlays/prod/kustomization.yaml\n",
    );
    not_said(&run, "no namespace");

    // What kustomize builds from the injected base agrees with it.
    let run = run_in(dir.path(), &["-q", "--in-place", "-f", "base/deploy.yaml"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    const TEST: &str = "a_base_is_injected_as_in_the_namespace_of_its_overlay (kubectl kustomize)";
    let Some(deployment) = kustomized_deployment(dir.path(), "overlays/prod", TEST) else {
        return;
    };
    assert_eq!(deployment["metadata"]["namespace"], "shop");
    assert_eq!(
        deployment["spec"]["template"]["metadata"]["labels"]["linkerd.io/workload-ns"],
        deployment["metadata"]["namespace"]
    );
}

#[test]
fn a_limit_range_beside_the_base_is_in_the_namespace_of_its_overlay() {
    let dir = repository(
        "base/deploy.yaml: deployment
         base/limits.yaml: {apiVersion: v1, kind: LimitRange, metadata: {name: tiny}, spec: {limits: [{type: Container, max: {memory: 1Mi}}]}}
         base/kustomization.yaml: {resources: [deploy.yaml, limits.yaml]}
         prod/kustomization.yaml: {namespace: shop, resources: [../base]}",
        DEPLOYMENT,
    );
    let files = ["-f", "base/deploy.yaml", "-f", "base/limits.yaml"];
    let (run, label) = inject_in(dir.path(), &files);
    assert_eq!(label, "shop");
    said(
        &run,
        "linkerd-proxy: limits.memory, requests.memory from the LimitRange of namespace shop",
    );
}

/// Two overlays of one base, `shop` and `dev`, and a cluster whose `shop`
/// enforces Pod Security `baseline` (which refuses Linkerd's init
/// container's capabilities) while `dev` enforces nothing.
fn two_overlays() -> tempfile::TempDir {
    let overlays = "overlays/prod/kustomization.yaml: {namespace: shop, resources: [../../base]}
         overlays/dev/kustomization.yaml: {namespace: dev, resources: [../../base]}
         cluster/shop.yaml: {apiVersion: v1, kind: Namespace, metadata: {name: shop, labels: {pod-security.kubernetes.io/enforce: baseline}}}
         cluster/dev.yaml: {apiVersion: v1, kind: Namespace, metadata: {name: dev}}";
    repository(&format!("{BASE}\n{overlays}"), DEPLOYMENT)
}

#[test]
fn overlays_of_different_namespaces_share_one_injection_checked_in_each() {
    let dir = two_overlays();
    let args = ["--context", "cluster", "-f", "base/deploy.yaml"];
    let run = run_in(dir.path(), &args);
    // Refused in shop: nothing written, the verdict names the namespace.
    assert_eq!(run.code, 1, "{}", run.stderr);
    said(
        &run,
        "rejected: in namespace shop (overlay overlays/prod): pods \"web-\" is forbidden: violates PodSecurity \"baseline:latest\"",
    );
    not_said(&run, "in namespace dev");
    said(
        &run,
        "namespace from each overlay: dev (overlays/dev), shop (overlays/prod); injected for all of them",
    );
    // As `linkerd inject` writes a manifest without a namespace.
    let run = run_in(dir.path(), &[&args[..], &["--warn-only"]].concat());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(pod_labels(&run.stdout)["linkerd.io/workload-ns"], "");

    // Written, injected again with other settings and back: the same
    // bytes; uninjected: the base as it was.
    let write = [&args[..], &["--warn-only", "-q", "--in-place"]].concat();
    let injected =
        |dir: &Path| std::fs::read_to_string(dir.join("base/deploy.yaml")).expect("read");
    assert_eq!(run_in(dir.path(), &write).code, 0);
    let first = injected(dir.path());
    let other = [&write[..], &["--set", "logLevel=debug"]].concat();
    assert_eq!(run_in(dir.path(), &other).code, 0);
    assert_ne!(injected(dir.path()), first);
    assert_eq!(run_in(dir.path(), &write).code, 0);
    assert_eq!(injected(dir.path()), first);
    let check = run_in(
        dir.path(),
        &[&args[..], &["--warn-only", "--check"]].concat(),
    );
    assert_eq!(check.code, 0, "{}", check.stderr);
    let run = run_in(
        dir.path(),
        &["uninject", "-q", "--in-place", "-f", "base/deploy.yaml"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(injected(dir.path()), DEPLOYMENT);
}

#[test]
fn istio_names_the_namespace_so_overlays_of_different_ones_are_warned_of() {
    let dir = two_overlays();
    let run = run_in(
        dir.path(),
        &[
            "--profile",
            "istio",
            "--context",
            "cluster",
            "--warn-only",
            "-f",
            "base/deploy.yaml",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    said(
        &run,
        "warning: overlays set different namespaces (dev (overlays/dev), shop (overlays/prod)) and the injection differs between them",
    );
    said(&run, "injected as in namespace dev, the first overlay's");
    let owner = "kubernetes://apis/apps/v1/namespaces/dev/deployments/web";
    assert!(run.stdout.contains(owner), "{}", run.stdout);
}

#[test]
fn the_workload_s_own_namespace_wins_and_kustomize_overriding_it_is_said() {
    let own = DEPLOYMENT.replace("  name: web\n", "  name: web\n  namespace: own\n");
    let (_dir, run) = base_with_overlay_injected(&own, "own");
    said(
        &run,
        "warning: metadata.namespace is own, but overlay overlays/prod sets namespace shop (overlays/prod/kustomization.yaml), which kustomize writes over it",
    );
    not_said(&run, "namespace shop from");
}

#[test]
fn n_is_the_namespace_where_no_kustomization_sets_one() {
    // No kustomization is above plain/: none is looked for.
    let plain = "plain/deploy.yaml: deployment
                 elsewhere/kustomization.yaml: {namespace: elsewhere, resources: [../plain/deploy.yaml]}";
    let dir = repository(&format!("{BASE}\n{plain}"), DEPLOYMENT);
    let (run, label) = inject_in(dir.path(), &["-n", "team", "-f", "base/deploy.yaml"]);
    assert_eq!(label, "team");
    said(&run, "  namespace team from -n\n");
    // Without either: default, as before, and said.
    let run = run_in(dir.path(), &["-f", "plain/deploy.yaml"]);
    assert_eq!(pod_labels(&run.stdout)["linkerd.io/workload-ns"], "default");
    said(&run, "no namespace: injected as in namespace default");
    // An overlay's namespace wins over -n, as kustomize writes it.
    std::fs::create_dir_all(dir.path().join("prod")).expect("mkdir");
    std::fs::write(
        dir.path().join("prod/kustomization.yaml"),
        "namespace: shop\nresources:\n- ../base\n",
    )
    .expect("write");
    let run = run_in(dir.path(), &["-n", "team", "-f", "base/deploy.yaml"]);
    assert_eq!(pod_labels(&run.stdout)["linkerd.io/workload-ns"], "shop");
}

#[test]
fn the_outermost_overlay_of_nested_ones_and_components_set_the_namespace() {
    let dir = repository(
        "app/base/deploy.yaml: deployment
         app/base/kustomization.yaml: {resources: [deploy.yaml]}
         app/staging/kustomization.yaml: {namespace: staging, resources: [../base]}
         app/prod-eu/kustomization.yml: {namespace: prod-eu, bases: [../staging]}
         shared/sidecar/deploy.yaml: deployment
         shared/sidecar/kustomization.yaml: {apiVersion: kustomize.config.k8s.io/v1alpha1, kind: Component, resources: [deploy.yaml]}
         env/shop/kustomization.yaml: {namespace: shop, components: [../../shared/sidecar]}",
        DEPLOYMENT,
    );
    let (run, label) = inject_in(dir.path(), &["-f", "app/base/deploy.yaml"]);
    assert_eq!(label, "prod-eu");
    said(
        &run,
        "namespace prod-eu from kustomization app/prod-eu/kustomization.yml",
    );
    let run = run_in(dir.path(), &["-f", "shared/sidecar/deploy.yaml"]);
    assert_eq!(pod_labels(&run.stdout)["linkerd.io/workload-ns"], "shop");
    // A directory given: each file finds its own.
    let run = run_in(dir.path(), &["-R", "-f", "app"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    said(&run, "namespace prod-eu from");
}

#[test]
fn a_kustomization_that_cannot_be_read_is_a_warning_naming_it() {
    let overlays = "overlays/broken/kustomization.yaml: {resources: [../../base}
                    overlays/odd/kustomization.yaml: {namespace: Shop_1, resources: [../../base]}";
    let dir = repository(&format!("{BASE}\n{overlays}"), DEPLOYMENT);
    let run = run_in(dir.path(), &["-f", "base/deploy.yaml"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    said(
        &run,
        "warning: kustomization overlays/broken/kustomization.yaml does not parse at",
    );
    said(
        &run,
        "warning: kustomization overlays/odd/kustomization.yaml: namespace \"Shop_1\" is not a namespace name",
    );
    // Neither sets a namespace known: the run's own, said as before.
    said(&run, "no namespace: injected as in namespace default");
}

#[test]
fn a_krm_function_takes_each_item_s_namespace_else_its_config_s() {
    let containers = "spec: {containers: [{name: app, image: example/app:1}]}";
    let list = format!(
        "{{apiVersion: config.kubernetes.io/v1, kind: ResourceList, \
         functionConfig: {{apiVersion: v1, kind: ConfigMap, metadata: {{name: mesh-inject}}, data: {{namespace: team}}}}, \
         items: [{{apiVersion: v1, kind: Pod, metadata: {{name: own, namespace: shop}}, {containers}}}, \
         {{apiVersion: v1, kind: Pod, metadata: {{name: bare}}, {containers}}}]}}\n"
    );
    let run = common::run(&["-v"], Some(&list));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let answer = first_value(&run.stdout);
    let label =
        |i: usize| answer["items"][i]["metadata"]["labels"]["linkerd.io/workload-ns"].clone();
    assert_eq!(label(0), "shop");
    assert_eq!(label(1), "team");
    // The text report (-v beside a function's results) says where from.
    said(
        &run,
        "pod/bare injected\n  namespace team from the function config\n",
    );
    assert_eq!(
        run.stderr.matches("namespace team from").count(),
        1,
        "{}",
        run.stderr
    );
}

/// An overlay's patch that addresses the base's containers by place
/// (`containers/0`, as a JSON 6902 patch does) hits another container once
/// injection has put the proxy first (classic mode): a warning naming the
/// patch, the place and the fix, and `--check` fails on it; kubectl's own
/// kustomize shows what it would do. A patch by name, or by a place the
/// injection leaves alone, says nothing.
#[test]
fn a_patch_of_containers_by_place_that_injection_shifts_is_a_warning_and_fails_the_check() {
    let layout = format!(
        "{BASE}
         overlays/prod/kustomization.yaml: {{namespace: shop, resources: [../../base], patches: [{{path: image.yaml, target: {{kind: Deployment, name: web}}}}]}}
         overlays/prod/image.yaml: [{{op: replace, path: /spec/template/spec/containers/0/image, value: 'web:2'}}]
         overlays/dev/kustomization.yaml: {{namespace: shop, resources: [../../base], patches: [{{path: image.yaml}}]}}
         overlays/dev/image.yaml: {{apiVersion: apps/v1, kind: Deployment, metadata: {{name: web}}, spec: {{template: {{spec: {{containers: [{{name: web, image: 'web:3'}}]}}}}}}}}"
    );
    let dir = repository(&layout, DEPLOYMENT);
    // As kustomize reads a JSON 6902 patch: a block list of operations.
    std::fs::write(
        dir.path().join("overlays/prod/image.yaml"),
        "- op: replace\n  path: /spec/template/spec/containers/0/image\n  value: web:2\n",
    )
    .expect("write");
    let classic = ["--native-sidecar", "never", "-f", "base/deploy.yaml"];
    let run = run_in(dir.path(), &classic);
    assert_eq!(run.code, 0, "{}", run.stderr);
    said(
        &run,
        "warning: kustomize patch overlays/prod/image.yaml addresses containers/0 of deployment/web by place (/spec/template/spec/containers/0/image): injected, that is container linkerd-proxy, where the manifest has container web; address the container by its name instead",
    );
    not_said(&run, "overlays/dev/image.yaml");
    // A patch file that cannot be read is said, not passed over.
    let missing = repository(
        &format!(
            "{BASE}\noverlays/qa/kustomization.yaml: {{namespace: shop, resources: [../../base], patches: [{{path: gone.yaml}}]}}"
        ),
        DEPLOYMENT,
    );
    let run_missing = run_in(missing.path(), &classic);
    said(
        &run_missing,
        "warning: kustomize patch gone.yaml of overlays/qa/kustomization.yaml cannot be read (no such file or directory): whether it addresses containers by place is unknown",
    );
    // Native sidecars leave the app's containers where they were.
    let native = run_in(
        dir.path(),
        &["--native-sidecar", "always", "-f", "base/deploy.yaml"],
    );
    assert_eq!(native.code, 0, "{}", native.stderr);
    not_said(&native, "kustomize patch");

    // The check fails on it once the base is injected, naming the patch.
    let written = run_in(
        dir.path(),
        &[
            "-q",
            "--in-place",
            "--native-sidecar",
            "never",
            "-f",
            "base/deploy.yaml",
        ],
    );
    assert_eq!(written.code, 0, "{}", written.stderr);
    let check = run_in(
        dir.path(),
        &[
            "-q",
            "--check",
            "--native-sidecar",
            "never",
            "-f",
            "base/deploy.yaml",
        ],
    );
    assert_eq!(check.code, 1, "{}", check.stderr);
    said(
        &check,
        "would inject: base/deploy.yaml\n  kustomize patch overlays/prod/image.yaml addresses containers/0",
    );
    not_said(&check, "fix: ");

    // What kubectl's kustomize builds: the proxy gets the app's image.
    const TEST: &str = "a_patch_of_containers_by_place_that_injection_shifts_is_a_warning_and_fails_the_check (kubectl kustomize)";
    let Some(deployment) = kustomized_deployment(dir.path(), "overlays/prod", TEST) else {
        return;
    };
    let first = &deployment["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(
        (first["name"].as_str(), first["image"].as_str()),
        (Some("linkerd-proxy"), Some("web:2"))
    );
}

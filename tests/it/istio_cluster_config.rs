//! Injecting with the cluster's own Istio configuration: the
//! `istio-sidecar-injector` and `istio` ConfigMaps that
//! `../shared/fidelity/istio/make-configmaps.py` writes from Istio's chart
//! (its templates and defaults, with a case's `--set`/`--mesh` settings),
//! given with `--context`. Every case of `CASES.md` whose settings the
//! generator expresses comes out as Istio's golden, field for field; a
//! template of the user's own is rendered as written; a broken one stops
//! the run (exit 2) naming the template and its line, writing nothing.

use crate::common;
use crate::istio_goldens::{NOT_YET, check_outcome, run_cases};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The generator's arguments (and the tool's own flags) for a case's
/// settings; `None` for settings the ConfigMaps cannot express.
fn settings_args(settings: &str) -> Option<(Vec<&'static str>, Vec<&'static str>)> {
    let set = |pairs: &[&'static str]| pairs.iter().flat_map(|p| ["--set", *p]).collect();
    let mesh = |pairs: &[&'static str]| pairs.iter().flat_map(|p| ["--mesh", *p]).collect();
    Some(match settings {
        "defaults" | "defaults (expect skip: hostNetwork)" => (vec![], vec![]),
        "native sidecars disabled"
        | "native sidecars disabled cluster-wide; pod annotation opts in"
        | "native sidecars disabled cluster-wide; pod annotation opts out" => {
            (set(&["env.ENABLE_NATIVE_SIDECARS=false"]), vec![])
        }
        "global.imagePullPolicy=Always" => (set(&["global.imagePullPolicy=Always"]), vec![]),
        "global.imagePullPolicy=Never" => (set(&["global.imagePullPolicy=Never"]), vec![]),
        "global.proxy.holdApplicationUntilProxyStarts=true" => (
            set(&["global.proxy.holdApplicationUntilProxyStarts=true"]),
            vec![],
        ),
        "components.cni.enabled=true" => (set(&["cni.enabled=true"]), vec![]),
        "components.cni.enabled=true, cni.provider=default, global.network=network1" => (
            set(&[
                "cni.enabled=true",
                "cni.provider=default",
                "global.network=network1",
            ]),
            vec![],
        ),
        "global.proxy.image=proxyTest" => (set(&["global.proxy.image=proxyTest"]), vec![]),
        "global.proxy_init.image=proxyInitTest" => {
            (set(&["global.proxy_init.image=proxyInitTest"]), vec![])
        }
        "mesh interceptionMode=TPROXY" | "mesh TPROXY" => {
            (mesh(&["defaultConfig.interceptionMode=TPROXY"]), vec![])
        }
        "mesh drainDuration=23s" => (mesh(&["defaultConfig.drainDuration=23s"]), vec![]),
        "proxy.includeIPRanges, excludeIPRanges, excludeInboundPorts=4,5,6, statusPort=0" => (
            set(&[
                "global.proxy.includeIPRanges=127.0.0.1/24,10.96.0.1/24",
                "global.proxy.excludeIPRanges=10.96.0.2/24,10.96.0.3/24",
                "global.proxy.excludeInboundPorts=4,5,6",
                "global.proxy.statusPort=0",
            ]),
            vec![],
        ),
        "proxy.statusPort=123, readinessInitialDelaySeconds=100, readinessPeriodSeconds=200, readinessFailureThreshold=300"
        | "proxy.statusPort=123 + readiness*" => (
            set(&[
                "global.proxy.statusPort=123",
                "global.proxy.readinessInitialDelaySeconds=100",
                "global.proxy.readinessPeriodSeconds=200",
                "global.proxy.readinessFailureThreshold=300",
            ]),
            vec![],
        ),
        "iop global.imagePullSecrets" => {
            (set(&[r#"global.imagePullSecrets=["barSecret"]"#]), vec![])
        }
        "global.mountMtlsCerts=true" => (set(&["global.mountMtlsCerts=true"]), vec![]),
        "mesh proxyMetadata ISTIO_META_TLS_CLIENT_KEY" => (
            mesh(&[
                r#"defaultConfig.proxyMetadata={"ISTIO_META_TLS_CLIENT_KEY":"/etc/identity/client/keys/client-key.pem"}"#,
            ]),
            vec![],
        ),
        "mesh defaultConfig.tracing={}" => (mesh(&["defaultConfig.tracing={}"]), vec![]),
        "mesh inboundTrafficPolicy LOCALHOST" => (
            mesh(&[r#"inboundTrafficPolicy={"mode":"LOCALHOST"}"#]),
            vec![],
        ),
        // istiod's own environment, not its ConfigMaps: the tool's flag.
        "COMPLIANCE_POLICY=fips-140-3" => (vec![], vec!["--set", "compliancePolicy=fips-140-3"]),
        "iop resources limits{cpu:null,memory:500Mi} requests{cpu:null,memory:150Mi}" => (
            set(&[
                r#"global.proxy.resources={"limits":{"cpu":null,"memory":"500Mi"},"requests":{"cpu":null,"memory":"150Mi"}}"#,
            ]),
            vec![],
        ),
        "iop resources limits{cpu:0,memory:500Mi} requests{cpu:0,memory:150Mi}" => (
            set(&[
                r#"global.proxy.resources={"limits":{"cpu":0,"memory":"500Mi"},"requests":{"cpu":0,"memory":"150Mi"}}"#,
            ]),
            vec![],
        ),
        "iop resources limits{cpu:null,memory:500Mi} requests{cpu:100m,memory:null,ephemeral-storage:1Gi}" => {
            (
                set(&[
                    r#"global.proxy.resources={"limits":{"cpu":null,"memory":"500Mi","ephemeral-storage":null},"requests":{"cpu":"100m","memory":null,"ephemeral-storage":"1Gi"}}"#,
                ]),
                vec![],
            )
        }
        "cni multus" => (set(&["cni.enabled=true", "cni.provider=multus"]), vec![]),
        "iop custom template in values" => (
            set(&[
                r#"global.podDNSSearchNamespaces=["global","{{ valueOrDefault .DeploymentMeta.Namespace \"default\" }}.global"]"#,
            ]),
            vec![],
        ),
        "mesh OTel extension provider" => (
            mesh(&[
                r#"extensionProviders=[{"name":"otel","opentelemetry":{"service":"otel.istio-system.svc.cluster.local","port":4317,"serviceAttributeEnrichment":"OTEL_SEMANTIC_CONVENTIONS"}}]"#,
            ]),
            vec![],
        ),
        "iop resources limits{cpu:100m,memory:null} requests{cpu:50m,memory:null}" => (
            set(&[
                r#"global.proxy.resources={"limits":{"cpu":"100m","memory":null},"requests":{"cpu":"50m","memory":null}}"#,
            ]),
            vec![],
        ),
        _ => return None,
    })
}

/// Cases that differ from Istio's golden with the cluster's templates, and
/// why. Five as with the embedded profile, for the reasons
/// `istio_goldens::NOT_YET` gives (what Istio's injector does there is a
/// choice the tool does not follow, not a template's doing); two that only
/// settings of the cluster's reach.
fn differing_cases() -> Vec<(&'static str, &'static str)> {
    let mut cases: Vec<(&str, &str)> = NOT_YET
        .iter()
        .copied()
        .filter(|(case, _)| {
            [
                "only-proxy-container.yaml",
                "cronjob.yaml",
                "cronjob-old-version.yaml",
                "merge-probers.yaml",
                "hello-multiport-metrics.yaml",
            ]
            .contains(case)
        })
        .collect();
    cases.extend([
        (
            "proxy-resources-mixed-null.yaml",
            "a memory limit without its request: the tool writes the request the apiserver defaults from the limit (500Mi), Istio's manifest leaves it to the apiserver; the pod admitted is the same",
        ),
        (
            "sidecar-spire.yaml",
            "SPIRE's template adds a mount to the proxy as if it were a classic container, and Istio's overlay leaves a second istio-proxy among the containers holding only that mount (the apiserver rejects the name twice); the tool merges the mount into the native proxy",
        ),
    ]);
    cases
}

/// Istio's fidelity data, when the ConfigMaps can be made here; `None`
/// (the test skipped, and said so) when `../shared` or the generator's
/// PyYAML is missing.
pub(crate) fn fidelity_for(test: &str) -> Option<PathBuf> {
    let fidelity = common::shared("fidelity/istio", test)?;
    generator_runs(test).then_some(fidelity)
}

/// The chart's ConfigMaps with the template `name` replaced by `text`
/// (written into `dir`), and the generator's `more` arguments.
fn with_template(fidelity: &Path, dir: &Path, name: &str, text: &str, more: &[&str]) -> PathBuf {
    let template = dir.join(format!("{name}.template.yaml"));
    std::fs::write(&template, text).expect("write the template");
    let template_arg = format!("{name}={}", template.display());
    let mut args = more.to_vec();
    args.extend(["--template", template_arg.as_str()]);
    config_maps(fidelity, dir, &args, &mut BTreeMap::new())
}

/// Whether the generator can run here: python3 with PyYAML.
fn generator_runs(test: &str) -> bool {
    let probe = std::process::Command::new("python3")
        .args(["-c", "import yaml"])
        .output();
    if probe.is_ok_and(|out| out.status.success()) {
        return true;
    }
    common::skip_test(
        test,
        "python3 with PyYAML is not installed (make-configmaps.py needs it)",
    );
    false
}

/// The `spire` template of the IstioOperator of Istio's SPIRE cases,
/// written into `dir` for the generator's `--template`.
fn spire_template(fidelity: &Path, dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(fidelity.join("golden/spire-template.iop.yaml"))
        .expect("the SPIRE IstioOperator");
    let iop: serde_json::Value = serde_yaml_ng::from_str(&text).expect("YAML");
    let template = iop["spec"]["values"]["sidecarInjectorWebhook"]["templates"]["spire"]
        .as_str()
        .expect("the spire template");
    let path = dir.join("spire.yaml");
    std::fs::write(&path, template).expect("write the template");
    path
}

/// The namespace of Istio's OpenShift cases, as an OpenShift project is
/// annotated, written into `dir`.
fn openshift_namespace(dir: &Path) -> PathBuf {
    let path = dir.join("openshift-namespace.yaml");
    std::fs::write(
        &path,
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: test-ns\n  annotations:\n    openshift.io/sa.scc.uid-range: 1000620000/10000\n    openshift.io/sa.scc.supplemental-groups: 1000620000/10000\n",
    )
    .expect("write the namespace");
    path
}

/// The ConfigMaps for `args`, written once into `dir`.
pub(crate) fn config_maps(
    fidelity: &Path,
    dir: &Path,
    args: &[&str],
    made: &mut BTreeMap<String, PathBuf>,
) -> PathBuf {
    let key = args.join(" ");
    if let Some(path) = made.get(&key) {
        return path.clone();
    }
    let path = dir.join(format!("config-maps-{}.yaml", made.len()));
    let out = std::process::Command::new("python3")
        .arg(fidelity.join("make-configmaps.py"))
        .arg(&path)
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "make-configmaps.py {key}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    made.insert(key, path.clone());
    path
}

#[test]
fn the_clusters_own_templates_reproduce_istios_goldens() {
    let test = "the_clusters_own_templates_reproduce_istios_goldens";
    let Some(fidelity) = fidelity_for(test) else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let mut made = BTreeMap::new();
    let listed = differing_cases();
    let outcome = run_cases(&fidelity, &listed, |case, settings, input| {
        let (spire, namespace);
        let (generator, flags) = if settings == "iop spire custom template" {
            // The IstioOperator's own template, as the ConfigMap holds it.
            spire = format!("spire={}", spire_template(&fidelity, dir.path()).display());
            (vec!["--template", spire.as_str()], vec![])
        } else if settings.starts_with("webhook only, OpenShift") {
            // Istio's CNI on an OpenShift project: the Namespace, with the
            // IDs OpenShift gives it, in context.
            namespace = openshift_namespace(dir.path()).display().to_string();
            (
                vec!["--set", "cni.enabled=true"],
                vec!["--context", namespace.as_str()],
            )
        } else {
            settings_args(settings)?
        };
        let context = config_maps(&fidelity, dir.path(), &generator, &mut made);
        let (context, input) = (
            context.to_string_lossy().to_string(),
            input.to_string_lossy().to_string(),
        );
        let mut args = vec![
            "-q",
            "--warn-only",
            "--profile",
            "istio",
            "--context",
            &context,
        ];
        args.extend(&flags);
        args.extend(["-f", &input]);
        let run = common::run_as_given(&args, None);
        assert_eq!(run.code, 0, "{case}: {}", run.stderr);
        Some(run.stdout)
    });
    check_outcome(&outcome, "with the cluster's templates");
}

/// The chart's default ConfigMaps (with `args` for the generator) in `dir`,
/// or `None` (the test skipped, and said) where they cannot be made.
fn default_config_maps(test: &str, dir: &Path, args: &[&str]) -> Option<(PathBuf, PathBuf)> {
    let fidelity = fidelity_for(test)?;
    let path = config_maps(&fidelity, dir, args, &mut BTreeMap::new());
    Some((fidelity, path))
}

/// Inject `input` (a path) with the ConfigMaps at `context`.
pub(crate) fn inject_with(context: &Path, input: &str, more: &[&str]) -> common::Run {
    let context = context.to_string_lossy().to_string();
    let mut args = vec!["--profile", "istio", "--context", &context];
    args.extend(more);
    args.extend(["-f", input]);
    common::run_as_given(&args, None)
}

pub(crate) const HELLO: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: hello
  namespace: shop
spec:
  selector:
    matchLabels: {app: hello}
  template:
    metadata:
      labels: {app: hello}
    spec:
      containers:
        - name: hello
          image: hello:1.0
";

#[test]
fn an_edited_template_is_rendered_as_written() {
    let test = "an_edited_template_is_rendered_as_written";
    let dir = tempfile::tempdir().expect("temp dir");
    let Some(fidelity) = fidelity_for(test) else {
        return;
    };
    // The chart's sidecar template, edited as a platform team edits theirs:
    // one env entry and one annotation more.
    let chart = std::fs::read_to_string(fidelity.join("chart/injection-template.yaml"))
        .expect("the chart's template");
    let edited = chart
        .replacen(
            "  annotations: {\n",
            "  annotations: {\n    example.com/team: {{ .DeploymentMeta.Namespace | quote }},\n",
            1,
        )
        .replacen(
            "    - name: PILOT_CERT_PROVIDER\n",
            "    - name: EXAMPLE_OWNER\n      value: \"{{ .DeploymentMeta.Name }}-{{ .Values.global.proxy.statusPort }}\"\n    - name: PILOT_CERT_PROVIDER\n",
            1,
        );
    assert_ne!(edited, chart, "the edit applies to the chart's template");
    let context = with_template(&fidelity, dir.path(), "sidecar", &edited, &[]);
    let input = dir.path().join("hello.yaml");
    std::fs::write(&input, HELLO).expect("write the input");
    let run = inject_with(&context, &input.to_string_lossy(), &["-q", "-o", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    let pod = &out["spec"]["template"];
    assert_eq!(pod["metadata"]["annotations"]["example.com/team"], "shop");
    let proxy = pod["spec"]["initContainers"]
        .as_array()
        .expect("init containers")
        .iter()
        .find(|c| c["name"] == "istio-proxy")
        .expect("the proxy");
    let env = proxy["env"].as_array().expect("env");
    assert_eq!(env[0]["name"], "EXAMPLE_OWNER");
    assert_eq!(env[0]["value"], "hello-15020");
}

/// The proxy of `out` (a workload as `-o json` writes it), its env by name,
/// and the pod's annotations.
fn proxy_env_and_annotations(
    out: &serde_json::Value,
) -> (BTreeMap<String, String>, serde_json::Value) {
    let pod = &out["spec"]["template"];
    let proxy = ["initContainers", "containers"]
        .iter()
        .filter_map(|list| pod["spec"][*list].as_array())
        .flatten()
        .find(|c| c["name"] == "istio-proxy")
        .expect("the proxy");
    let env = proxy["env"]
        .as_array()
        .expect("env")
        .iter()
        .filter_map(|e| {
            Some((
                e["name"].as_str()?.to_string(),
                e["value"].as_str()?.to_string(),
            ))
        })
        .collect();
    (env, pod["metadata"]["annotations"].clone())
}

#[test]
fn a_template_that_turns_metrics_merging_off_or_on_decides_it() {
    // Istio merges the app's Prometheus settings after its template, reading
    // the pod as the template left it: a template that writes
    // prometheus.istio.io/merge-metrics decides, over the mesh config.
    let test = "a_template_that_turns_metrics_merging_off_or_on_decides_it";
    let Some(fidelity) = fidelity_for(test) else {
        return;
    };
    let chart = std::fs::read_to_string(fidelity.join("chart/injection-template.yaml"))
        .expect("the chart's template");
    let input_text = HELLO.replace(
        "      labels: {app: hello}\n",
        "      labels: {app: hello}\n      annotations: {prometheus.io/scrape: \"true\", prometheus.io/port: \"9090\"}\n",
    );
    assert_ne!(input_text, HELLO);
    for (written, mesh_merges, merged) in [("false", true, false), ("true", false, true)] {
        let dir = tempfile::tempdir().expect("temp dir");
        let edited = chart.replacen(
            "  annotations: {\n",
            &format!("  annotations: {{\n    prometheus.istio.io/merge-metrics: \"{written}\",\n"),
            1,
        );
        assert_ne!(edited, chart, "the edit applies to the chart's template");
        let mesh = format!("enablePrometheusMerge={mesh_merges}");
        let context = with_template(
            &fidelity,
            dir.path(),
            "sidecar",
            &edited,
            &["--mesh", &mesh],
        );
        let input = dir.path().join("hello.yaml");
        std::fs::write(&input, &input_text).expect("write the input");
        let run = inject_with(&context, &input.to_string_lossy(), &["-q", "-o", "json"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let out: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
        let (env, annotations) = proxy_env_and_annotations(&out);
        assert_eq!(
            env.contains_key("ISTIO_PROMETHEUS_ANNOTATIONS"),
            merged,
            "template writes {written}: {env:?}"
        );
        let port = if merged { "15020" } else { "9090" };
        assert_eq!(
            annotations["prometheus.io/port"], port,
            "template writes {written}"
        );
    }
}

#[test]
fn the_merged_metrics_settings_are_written_as_go_marshals_them() {
    // Istio's injector adds ISTIO_PROMETHEUS_ANNOTATIONS in its code, after
    // the template, with Go's encoding/json: `&`, `<` and `>` escaped.
    let test = "the_merged_metrics_settings_are_written_as_go_marshals_them";
    let dir = tempfile::tempdir().expect("temp dir");
    let Some((_, context)) = default_config_maps(test, dir.path(), &[]) else {
        return;
    };
    let input = dir.path().join("hello.yaml");
    let annotated = HELLO.replace(
        "      labels: {app: hello}\n",
        "      labels: {app: hello}\n      annotations: {prometheus.io/path: \"/m?a=1&b=<2>\"}\n",
    );
    assert_ne!(annotated, HELLO);
    std::fs::write(&input, &annotated).expect("write the input");
    let run = inject_with(&context, &input.to_string_lossy(), &["-q", "-o", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    let spec = &out["spec"]["template"]["spec"];
    let proxy = ["initContainers", "containers"]
        .iter()
        .filter_map(|list| spec[*list].as_array())
        .flatten()
        .find(|c| c["name"] == "istio-proxy")
        .expect("the proxy");
    let env = proxy["env"].as_array().expect("env");
    let merged = env
        .iter()
        .find(|e| e["name"] == "ISTIO_PROMETHEUS_ANNOTATIONS")
        .expect("the merged settings");
    assert_eq!(
        merged["value"],
        r#"{"scrape":"","path":"/m?a=1\u0026b=\u003c2\u003e","port":""}"#
    );
}

#[test]
fn a_broken_template_stops_the_run_naming_its_line_and_writes_nothing() {
    let test = "a_broken_template_stops_the_run_naming_its_line_and_writes_nothing";
    let dir = tempfile::tempdir().expect("temp dir");
    let Some(fidelity) = fidelity_for(test) else {
        return;
    };
    let input = dir.path().join("hello.yaml");
    // A function that does not exist fails when the template is read; an
    // index past the end, when it runs for a pod.
    for (text, line, says) in [
        (
            "metadata:\n  labels:\n    a: {{ .Values.global.hub | nosuchfunc }}\n",
            3,
            "function \"nosuchfunc\" not defined",
        ),
        (
            "metadata:\n  labels:\n\n    a: {{ index .Spec.Containers 5 }}\n",
            4,
            "index out of range: 5",
        ),
    ] {
        std::fs::write(&input, HELLO).expect("write the input");
        let context = with_template(&fidelity, dir.path(), "sidecar", text, &[]);
        let input_arg = input.to_string_lossy().to_string();
        for mode in [&[][..], &["--in-place"][..]] {
            let run = inject_with(&context, &input_arg, mode);
            assert_eq!(run.code, 2, "{text}: {}", run.stderr);
            assert!(
                run.stderr
                    .contains(&format!("template \"sidecar\", line {line}:"))
                    && run.stderr.contains(says)
                    && run.stderr.contains("istio-system/istio-sidecar-injector"),
                "{text}: {}",
                run.stderr
            );
            assert_eq!(run.stdout, "", "nothing written");
            assert_eq!(std::fs::read_to_string(&input).unwrap(), HELLO);
        }
    }
}

#[test]
fn a_revision_takes_its_own_configuration() {
    let test = "a_revision_takes_its_own_configuration";
    let dir = tempfile::tempdir().expect("temp dir");
    let Some(fidelity) = fidelity_for(test) else {
        return;
    };
    let canary = with_template(
        &fidelity,
        dir.path(),
        "sidecar",
        "metadata:\n  labels:\n    example.com/revision: {{ .Revision | quote }}\nspec:\n  containers:\n  - name: istio-proxy\n    image: {{ .ProxyImage | quote }}\n",
        &["--revision", "canary"],
    );
    let input = dir.path().join("hello.yaml");
    std::fs::write(&input, HELLO).expect("write the input");
    let input = input.to_string_lossy().to_string();
    let json = |run: common::Run| -> serde_json::Value {
        assert_eq!(run.code, 0, "{}", run.stderr);
        serde_json::from_str(&run.stdout).expect("JSON")
    };
    let out = json(inject_with(
        &canary,
        &input,
        &["-q", "-o", "json", "--set", "revision=canary"],
    ));
    let pod = &out["spec"]["template"];
    assert_eq!(pod["metadata"]["labels"]["example.com/revision"], "canary");
    assert_eq!(pod["spec"]["containers"][1]["name"], "istio-proxy");
    // The context holds one revision's configuration: without --set, the
    // run is that revision's, never the embedded profile's.
    let out = json(inject_with(&canary, &input, &["-q", "-o", "json"]));
    let labels = &out["spec"]["template"]["metadata"]["labels"];
    assert_eq!(labels["example.com/revision"], "canary", "{labels}");
    // Another revision asked for is an error naming the ones there are.
    let other = inject_with(&canary, &input, &["-q", "--set", "revision=stable"]);
    assert_eq!(other.code, 2, "{}", other.stderr);
    assert!(
        other.stdout.is_empty()
            && other.stderr.contains("revision=stable")
            && other.stderr.contains("it has: canary"),
        "{}",
        other.stderr
    );
}

#[test]
fn the_configurations_policy_and_selectors_decide() {
    let test = "the_configurations_policy_and_selectors_decide";
    let dir = tempfile::tempdir().expect("temp dir");
    let Some((_, context)) = default_config_maps(
        test,
        dir.path(),
        &[
            "--set",
            "global.proxy.autoInject=disabled",
            "--set",
            r#"sidecarInjectorWebhook.alwaysInjectSelector=[{"matchLabels":{"mesh":"always"}}]"#,
            "--set",
            r#"sidecarInjectorWebhook.injectedAnnotations={"example.com/injected":"yes"}"#,
        ],
    ) else {
        return;
    };
    let input = dir.path().join("pods.yaml");
    let pod = |name: &str, labels: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  labels: {labels}\nspec:\n  containers:\n    - name: app\n      image: app:1\n"
        )
    };
    std::fs::write(
        &input,
        [
            pod("plain", "{app: a}"),
            pod("opted-in", r#"{sidecar.istio.io/inject: "true"}"#),
            pod("selected", "{mesh: always}"),
        ]
        .join("---\n"),
    )
    .expect("write the input");
    let run = inject_with(&context, &input.to_string_lossy(), &["-o", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("pod/plain skipped")
            && run.stderr.contains(
                "the injection policy of ConfigMap istio-system/istio-sidecar-injector is disabled"
            ),
        "{}",
        run.stderr
    );
    let out: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    let items = out["items"].as_array().expect("a List");
    let injected =
        |item: &serde_json::Value| item["metadata"]["annotations"]["example.com/injected"] == "yes";
    assert_eq!(
        items.iter().map(injected).collect::<Vec<_>>(),
        [false, true, true]
    );
}

#[test]
fn with_the_clusters_templates_uninject_gives_every_input_back_and_injecting_again_is_injecting_once()
 {
    let test = "with_the_clusters_templates_uninject_gives_every_input_back_and_injecting_again_is_injecting_once";
    let dir = tempfile::tempdir().expect("temp dir");
    let Some((fidelity, context)) = default_config_maps(test, dir.path(), &[]) else {
        return;
    };
    let other_dir = tempfile::tempdir().expect("temp dir");
    let Some((_, other)) = default_config_maps(
        test,
        other_dir.path(),
        &[
            "--set",
            "global.proxy.statusPort=15555",
            "--set",
            "env.ENABLE_NATIVE_SIDECARS=false",
            "--mesh",
            "defaultConfig.holdApplicationUntilProxyStarts=true",
        ],
    ) else {
        return;
    };
    let inputs = fidelity.join("../../corpus/istio-inject-inputs");
    let mut failures = Vec::new();
    let mut checked = 0;
    for path in common::manifests_under(&inputs) {
        let name = path.display().to_string();
        let original = std::fs::read_to_string(&path).expect("input");
        // Pods Istio injected already are the mesh's to take apart.
        if original.contains("sidecar.istio.io/status") {
            continue;
        }
        let injected = inject_with(&context, &name, &["-q", "--warn-only"]);
        if injected.code != 0 || injected.stdout == original {
            continue;
        }
        checked += 1;
        let back = common::run_as_given(
            &["uninject", "-q", "--profile", "istio"],
            Some(&injected.stdout),
        );
        // A pod's own container the template overlays comes back as written.
        if back.stdout != original {
            failures.push(format!("{name}: uninject does not give the input back"));
        }
        let injected_path = dir.path().join("injected.yaml");
        std::fs::write(&injected_path, &injected.stdout).expect("write");
        let again = inject_with(
            &context,
            &injected_path.to_string_lossy(),
            &["-q", "--warn-only"],
        );
        if again.stdout != injected.stdout {
            failures.push(format!("{name}: injecting again changes the output"));
        }
        // Injected again with other settings, as if injected with them at first.
        let changed = inject_with(
            &other,
            &injected_path.to_string_lossy(),
            &["-q", "--warn-only"],
        );
        let direct = inject_with(&other, &name, &["-q", "--warn-only"]);
        if changed.stdout != direct.stdout {
            failures.push(format!(
                "{name}: injecting again with other settings differs from injecting with them"
            ));
        }
    }
    assert!(checked >= 50, "only {checked} inputs injected");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn several_templates_are_overlaid_in_the_order_the_pod_names_them() {
    let test = "several_templates_are_overlaid_in_the_order_the_pod_names_them";
    let dir = tempfile::tempdir().expect("temp dir");
    let Some(fidelity) = fidelity_for(test) else {
        return;
    };
    // A team's template over Istio's sidecar: an env entry of the proxy
    // replaced, one added, an annotation.
    let context = with_template(
        &fidelity,
        dir.path(),
        "team",
        "metadata:\n  annotations:\n    example.com/templates: team\nspec:\n  imagePullSecrets:\n  - name: team-registry\n  initContainers:\n  - name: istio-proxy\n    env:\n    - name: ISTIO_META_APP_CONTAINERS\n      value: overridden\n    - name: TEAM\n      value: \"{{ .DeploymentMeta.Name }}\"\n",
        &[],
    );
    let input = dir.path().join("hello.yaml");
    let asking = HELLO.replace(
        "      labels: {app: hello}\n",
        "      labels: {app: hello}\n      annotations: {inject.istio.io/templates: \"sidecar, team\"}\n",
    );
    std::fs::write(&input, &asking).expect("write the input");
    let run = inject_with(&context, &input.to_string_lossy(), &["-q", "-o", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    let pod = &out["spec"]["template"];
    assert_eq!(
        pod["metadata"]["annotations"]["example.com/templates"],
        "team"
    );
    let proxy = pod["spec"]["initContainers"]
        .as_array()
        .expect("init containers")
        .iter()
        .find(|c| c["name"] == "istio-proxy")
        .expect("the proxy");
    let env: Vec<(&str, &str)> = proxy["env"]
        .as_array()
        .expect("env")
        .iter()
        .filter_map(|e| Some((e["name"].as_str()?, e["value"].as_str().unwrap_or(""))))
        .collect();
    assert!(
        env.contains(&("ISTIO_META_APP_CONTAINERS", "overridden")),
        "{env:?}"
    );
    assert_eq!(env.last(), Some(&("TEAM", "hello")), "{env:?}");
    // The template's image pull secret: on the pod, and in Istio's status.
    assert_eq!(
        pod["spec"]["imagePullSecrets"],
        serde_json::json!([{"name": "team-registry"}])
    );
    let status = pod["metadata"]["annotations"]["sidecar.istio.io/status"]
        .as_str()
        .expect("the status");
    assert!(
        status.contains(r#""imagePullSecrets":["team-registry"]"#),
        "{status}"
    );
    // The embedded profile renders the sidecar only: the pod is left alone.
    let run = common::run_as_given(
        &["--profile", "istio", "-f", &input.to_string_lossy()],
        None,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, asking);
    assert!(
        run.stderr
            .contains("asks for Istio's sidecar, team template")
            && run.stderr.contains("--context"),
        "{}",
        run.stderr
    );
}

/// The README's way to fetch the configuration, `kubectl get configmap -n
/// istio-system istio-sidecar-injector istio -o yaml`, gives one `List` of
/// the two ConfigMaps: as `--context`, it injects as the two documents do.
#[test]
fn the_configmaps_as_kubectl_get_lists_them_serve_as_context() {
    let test = "the_configmaps_as_kubectl_get_lists_them_serve_as_context";
    let dir = tempfile::tempdir().expect("temp dir");
    let Some((_, context)) = default_config_maps(test, dir.path(), &[]) else {
        return;
    };
    let text = std::fs::read_to_string(&context).expect("the ConfigMaps");
    let items: Vec<serde_json::Value> = common::values(&text).into_iter().flatten().collect();
    assert_eq!(items.len(), 2);
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items});
    let listed = dir.path().join("istio-config.yaml");
    std::fs::write(&listed, serde_yaml_ng::to_string(&list).expect("YAML")).expect("write");
    let input = dir.path().join("hello.yaml");
    std::fs::write(&input, HELLO).expect("write the input");
    let input = input.to_string_lossy().to_string();
    let from_documents = inject_with(&context, &input, &["-q"]);
    let from_list = inject_with(&listed, &input, &["-q"]);
    assert_eq!(from_list.code, 0, "{}", from_list.stderr);
    assert_eq!(from_list.stdout, from_documents.stdout);
    // The cluster's templates rendered it: the chart's image, not the profile's.
    assert!(
        from_list
            .stdout
            .contains("registry.istio.io/testing/proxyv2:latest"),
        "{}",
        from_list.stdout
    );
}

/// The chart's templates render once for workloads alike but for their
/// strings, each given its own back: a stream of such workloads (names long
/// enough to be cut, labels that read as numbers and booleans, kinds the
/// template lowers, the corpus's pods) comes out as each injected alone.
#[test]
fn workloads_alike_come_out_together_as_each_alone() {
    let test = "workloads_alike_come_out_together_as_each_alone";
    let dir = tempfile::tempdir().expect("temp dir");
    let Some((fidelity, context)) = default_config_maps(test, dir.path(), &[]) else {
        return;
    };
    let mut documents = Vec::new();
    let long = "a-workload-name-long-enough-for-its-canonical-name-to-be-cut-at-63-characters";
    for (i, (kind, name, app, version)) in [
        ("Deployment", "hello", "hello", "v1"),
        ("Deployment", "hello-2", "hello-2", "v2"),
        ("StatefulSet", "store", "8080", "1.0"),
        ("Deployment", long, long, "true"),
        ("DaemonSet", "agent", "yes", "null"),
        ("Deployment", "web", "web-", "_v3_"),
        ("Deployment", "quoted", "has space", "x#y"),
        ("Deployment", "hello-3", "hello-3", "v1"),
    ]
    .into_iter()
    .enumerate()
    {
        documents.push(format!(
            "apiVersion: apps/v1\nkind: {kind}\nmetadata:\n  name: {name}\n  namespace: ns-{i}\nspec:\n  selector:\n    matchLabels: {{app: x}}\n  template:\n    metadata:\n      labels: {{app: \"{app}\", version: \"{version}\"}}\n    spec:\n      serviceAccountName: sa-{i}\n      containers:\n        - name: {name}-c\n          image: registry.example.com/{name}:{i}.0\n          ports: [{{containerPort: 80{i}0, name: http}}]\n"
        ));
    }
    let inputs = fidelity.join("../../corpus/istio-inject-inputs");
    for path in common::manifests_under(&inputs) {
        let text = std::fs::read_to_string(&path).expect("input");
        let plain =
            !text.starts_with('\u{feff}') && !text.contains("\n...") && !text.contains("%YAML");
        if plain && text.ends_with('\n') {
            documents.push(text);
        }
    }
    let context = context.to_string_lossy().to_string();
    let anchors = common::repo()
        .join("testdata/cluster")
        .to_string_lossy()
        .to_string();
    // The cluster's templates, the embedded Istio profile, Linkerd's.
    for args in [
        vec!["--profile", "istio", "--context", &context],
        vec!["--profile", "istio"],
        vec!["--context", &anchors],
    ] {
        together_as_alone(&documents, &args, dir.path());
    }
}

/// Asserts that `documents` injected in one run with `args` come out as
/// each injected alone (those injected alone without a failure).
fn together_as_alone(documents: &[String], args: &[&str], dir: &Path) {
    let inject = |path: &Path| {
        let path = path.to_string_lossy().to_string();
        let mut all = args.to_vec();
        all.extend(["-q", "--warn-only", "-f", &path]);
        common::run_as_given(&all, None)
    };
    let mut alone = Vec::new();
    for (i, text) in documents.iter().enumerate() {
        let path = dir.join(format!("alone-{i}.yaml"));
        std::fs::write(&path, text).expect("write");
        let run = inject(&path);
        if run.code == 0 {
            alone.push((text.as_str(), run.stdout));
        }
    }
    assert!(
        alone.len() >= 50,
        "{args:?}: only {} inputs injected alone",
        alone.len()
    );
    let together: Vec<&str> = alone.iter().map(|(text, _)| *text).collect();
    let path = dir.join("together.yaml");
    std::fs::write(&path, together.join("---\n")).expect("write");
    let run = inject(&path);
    assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    let expected: Vec<&str> = alone.iter().map(|(_, out)| out.as_str()).collect();
    let expected = expected.join("---\n");
    if run.stdout != expected {
        let first = run
            .stdout
            .lines()
            .zip(expected.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        panic!(
            "{args:?}: together differs from alone from line {}:\n  together: {:?}\n  alone:    {:?}",
            first + 1,
            run.stdout.lines().nth(first),
            expected.lines().nth(first)
        );
    }
}

/// A template that ranges over a map keyed by the workload's name goes in
/// the name's order (`beta` before `m`), not a stand-in's (`qXmi…` after
/// `m`): no function call sees the order, so such a shape is rendered for
/// real, together as alone.
#[test]
fn a_template_ranging_over_a_map_keyed_by_the_name_comes_out_together_as_alone() {
    let test = "a_template_ranging_over_a_map_keyed_by_the_name_comes_out_together_as_alone";
    let dir = tempfile::tempdir().expect("temp dir");
    let Some(fidelity) = fidelity_for(test) else {
        return;
    };
    let sidecar = std::fs::read_to_string(fidelity.join("chart/injection-template.yaml"))
        .expect("the chart's template");
    let labels = "metadata:\n  labels:\n";
    assert_eq!(sidecar.matches(labels).count(), 1);
    let sidecar = sidecar.replace(
        labels,
        &format!(
            "{labels}    example.com/order: \"{{{{ range $k, $v := dict .DeploymentMeta.Name \"n\" \"m\" \"m\" }}}}{{{{ $k }}}}={{{{ $v }}}};{{{{ end }}}}\"\n"
        ),
    );
    let context = with_template(&fidelity, dir.path(), "sidecar", &sidecar, &[]);
    let alpha = HELLO.replace("name: hello\n", "name: alpha\n");
    let beta = HELLO.replace("name: hello\n", "name: beta\n");
    assert_ne!(alpha, beta);
    let alone_path = dir.path().join("beta.yaml");
    std::fs::write(&alone_path, &beta).expect("write");
    let alone = inject_with(&context, &alone_path.to_string_lossy(), &["-q"]);
    assert_eq!(alone.code, 0, "{}", alone.stderr);
    assert!(
        alone.stdout.contains("example.com/order: beta=n;m=m;"),
        "{}",
        alone.stdout
    );
    let together_path = dir.path().join("together.yaml");
    std::fs::write(&together_path, format!("{alpha}---\n{beta}")).expect("write");
    let together = inject_with(&context, &together_path.to_string_lossy(), &["-q"]);
    assert_eq!(together.code, 0, "{}", together.stderr);
    let second = together
        .stdout
        .split("---\n")
        .nth(1)
        .expect("a second document");
    let order = |text: &str| {
        text.lines()
            .find(|l| l.contains("example.com/order"))
            .map(str::to_string)
    };
    assert_eq!(order(second), order(&alone.stdout));
    assert_eq!(second, alone.stdout);
}

//! A Linkerd release's own chart renders the sidecar (`--linkerd-chart`):
//! the chart is laid out at test time from `../shared/fidelity/linkerd/chart/`
//! as `helm pull` writes it (`linkerd-control-plane/Chart.yaml`,
//! `values.yaml`, `charts/partials/templates/*.tpl`), with the release's
//! version in its values as a released chart has it.
//!
//! - Over Linkerd's golden cases, the chart gives what the embedded profile
//!   gives, byte for byte, but for [`DIFFERENCES`];
//! - a partial edited as no release has it shows in the output;
//! - the chart is taken as a directory, as a `.tgz`, and from `--context`;
//! - a missing partial and a failing one stop the run (exit 2) naming the
//!   chart, the file and the line, with nothing written.

use std::path::{Path, PathBuf};

use crate::common;
use crate::linkerd_goldens::{flags, proxy_version};

/// Cases where the chart's output differs from the embedded profile's on
/// purpose, with why (none so far).
const DIFFERENCES: &[(&str, &str)] = &[];

/// The release's chart as `helm pull --untar -d DIR` leaves it, in `dir`,
/// its values naming `version` (and the debug image `debug_version`), as
/// Linkerd's release build writes them; returns the chart's directory.
fn lay_out_chart(fidelity: &Path, dir: &Path, version: &str, debug_version: &str) -> PathBuf {
    let source = fidelity.join("chart");
    let chart = dir.join("linkerd-control-plane");
    let partials = chart.join("charts/partials/templates");
    std::fs::create_dir_all(&partials).expect("chart dirs");
    std::fs::write(
        chart.join("Chart.yaml"),
        format!("apiVersion: v2\nname: linkerd-control-plane\nversion: 2026.5.2\nappVersion: {version}\n"),
    )
    .expect("Chart.yaml");
    std::fs::write(
        chart.join("charts/partials/Chart.yaml"),
        "apiVersion: v2\nname: partials\nversion: 0.1.0\n",
    )
    .expect("partials' Chart.yaml");
    let values = std::fs::read_to_string(source.join("values.yaml")).expect("values.yaml");
    let values = values.replace(
        "linkerdVersion: linkerdVersionValue",
        &format!("linkerdVersion: {version}"),
    );
    let debug = values
        .find("debugContainer:")
        .expect("debugContainer in values.yaml");
    let (head, tail) = values.split_at(debug);
    let tail = tail.replacen("version: \"\"", &format!("version: {debug_version}"), 1);
    std::fs::write(chart.join("values.yaml"), format!("{head}{tail}")).expect("values.yaml");
    for entry in std::fs::read_dir(&source).expect("the chart's partials") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "tpl") {
            let name = path.file_name().expect("name");
            std::fs::copy(&path, partials.join(name)).expect("copy a partial");
            make_writable(&partials.join(name));
        }
    }
    chart
}

fn make_writable(path: &Path) {
    let mut permissions = std::fs::metadata(path).expect("metadata").permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    permissions.set_readonly(false);
    std::fs::set_permissions(path, permissions).expect("writable");
}

/// The chart in `chart` as the `.tgz` `helm pull` writes, at `to`.
fn pack(chart: &Path, to: &Path) {
    let file = std::fs::File::create(to).expect("create the .tgz");
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        file,
        flate2::Compression::default(),
    ));
    builder
        .append_dir_all("linkerd-control-plane", chart)
        .expect("pack the chart");
    builder.into_inner().expect("tar").finish().expect("gzip");
}

#[test]
fn the_chart_renders_linkerds_golden_cases_as_the_embedded_profile_does() {
    let test =
        "linkerd_chart::the_chart_renders_linkerds_golden_cases_as_the_embedded_profile_does";
    let Some(fidelity) = common::shared("fidelity/linkerd", test) else {
        return;
    };
    let inputs = fidelity.join("../../corpus/linkerd-inject-inputs");
    let anchors = std::fs::read_to_string(fidelity.join("valid-trust-anchors.pem")).expect("pem");
    let set_anchors = format!("trustAnchorsPEM={anchors}");
    let dir = tempfile::tempdir().expect("temp dir");
    let debug_version = "test-inject-debug-version";
    let (mut alike, mut failures) = (Vec::new(), Vec::new());
    for common::LinkerdCase {
        case,
        input,
        golden,
        settings,
    } in common::linkerd_cases(&fidelity, "inject")
    {
        let Some(flags) = flags(&settings) else {
            continue;
        };
        let golden_text =
            std::fs::read_to_string(fidelity.join("golden").join(golden)).expect("golden");
        let version = proxy_version(&golden_text);
        let chart = lay_out_chart(
            &fidelity,
            &dir.path().join(&version),
            &version,
            debug_version,
        );
        let chart = chart.to_string_lossy().to_string();
        let profile = dir.path().join(format!("{case}.yaml"));
        let config = common::run(
            &[
                "config",
                "--set",
                &format!("proxyVersion={version}"),
                "--set",
                &format!("debugImageVersion={debug_version}"),
            ],
            None,
        );
        assert_eq!(config.code, 0, "{}", config.stderr);
        std::fs::write(&profile, &config.stdout).expect("write the profile");
        let profile = profile.to_string_lossy().to_string();
        let input = inputs.join(input).to_string_lossy().to_string();
        let mut args = vec!["--warn-only", "--config", &profile, "--set", &set_anchors];
        args.extend(flags);
        args.extend(["-f", &input]);
        let embedded = common::run(&args, None);
        let with_chart = {
            let mut args = args.clone();
            args.extend(["--linkerd-chart", &chart]);
            common::run(&args, None)
        };
        assert_eq!(embedded.code, 0, "{case}: {}", embedded.stderr);
        assert_eq!(with_chart.code, 0, "{case}: {}", with_chart.stderr);
        assert_eq!(
            embedded.stderr, with_chart.stderr,
            "{case}: the reports differ"
        );
        let expected = DIFFERENCES.iter().find(|(c, _)| *c == case);
        match (embedded.stdout == with_chart.stdout, expected) {
            (true, None) => alike.push(case),
            (true, Some(_)) => failures.push(format!(
                "{case}: no longer differs: take it off DIFFERENCES"
            )),
            (false, Some(_)) => {}
            (false, None) => {
                let (got, want) = (
                    common::values(&with_chart.stdout),
                    common::values(&embedded.stdout),
                );
                let found: Vec<String> = got
                    .iter()
                    .zip(&want)
                    .filter_map(|(g, w)| Some((g.as_ref()?, w.as_ref()?)))
                    .flat_map(|(g, w)| common::field_differences(g, w, ""))
                    .collect();
                failures.push(format!("{case} ({settings}):\n  {}", found.join("\n  ")));
            }
        }
    }
    eprintln!("alike with the chart {}: {}", alike.len(), alike.join(", "));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(alike.len() >= 25, "only {} alike", alike.len());
}

/// A chart laid out from the shared partials, in a temp dir, for the tests
/// below; `None` (skipped) without `../shared`.
fn release_chart(test: &str) -> Option<(tempfile::TempDir, PathBuf)> {
    let fidelity = common::shared("fidelity/linkerd", test)?;
    let dir = tempfile::tempdir().expect("temp dir");
    let chart = lay_out_chart(&fidelity, dir.path(), "edge-26.5.2", "");
    Some((dir, chart))
}

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx
        ports: [{containerPort: 8080}]
";

fn inject(chart: &str, more: &[&str]) -> common::Run {
    let cluster = common::cluster().to_string_lossy().to_string();
    let mut args = vec!["--context", &cluster, "--linkerd-chart", chart];
    args.extend(more);
    common::run(&args, Some(DEPLOYMENT))
}

fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).expect("read");
    assert!(text.contains(from), "{} has no {from:?}", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).expect("write");
}

#[test]
fn an_edited_partial_is_what_renders() {
    let test = "linkerd_chart::an_edited_partial_is_what_renders";
    let Some((_dir, chart)) = release_chart(test) else {
        return;
    };
    let proxy = chart.join("charts/partials/templates/_proxy.tpl");
    // An env var no release has, a probe timing read from a value renamed,
    // and that value's default in the chart's values.
    edit(
        &proxy,
        "- name: _pod_containerName",
        "- name: LINKERD2_PROXY_EDITED_BY_TEST\n  value: {{ .Values.proxy.testSetting | quote }}\n- name: _pod_containerName",
    );
    edit(
        &proxy,
        "initialDelaySeconds: {{.Values.proxy.livenessProbe.initialDelaySeconds }}",
        "initialDelaySeconds: {{.Values.proxy.testLivenessDelay }}",
    );
    let values = chart.join("values.yaml");
    edit(
        &values,
        "\nproxy:\n",
        "\nproxy:\n  testSetting: from-the-chart\n  testLivenessDelay: 37\n",
    );
    let chart = chart.to_string_lossy().to_string();
    let run = inject(&chart, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("- name: LINKERD2_PROXY_EDITED_BY_TEST\n          value: from-the-chart\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("initialDelaySeconds: 37"),
        "{}",
        run.stdout
    );
    // The embedded profile knows nothing of it.
    let cluster = common::cluster().to_string_lossy().to_string();
    let embedded = common::run(&["--context", &cluster], Some(DEPLOYMENT));
    assert!(!embedded.stdout.contains("EDITED_BY_TEST"));
    // admit replays Linkerd's webhook with the same chart.
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: shop\n  annotations: {linkerd.io/inject: enabled}\nspec:\n  containers: [{name: a, image: nginx}]\n";
    let admitted = common::run(
        &[
            "admit",
            "-f",
            "-",
            "--context",
            &cluster,
            "--linkerd-chart",
            &chart,
            "-o",
            "yaml",
        ],
        Some(pod),
    );
    assert_eq!(admitted.code, 0, "{}", admitted.stderr);
    assert!(
        admitted.stdout.contains("LINKERD2_PROXY_EDITED_BY_TEST"),
        "{}",
        admitted.stdout
    );
}

#[test]
fn the_chart_is_taken_as_a_directory_a_tgz_and_from_the_context() {
    let test = "linkerd_chart::the_chart_is_taken_as_a_directory_a_tgz_and_from_the_context";
    let Some((dir, chart)) = release_chart(test) else {
        return;
    };
    edit(
        &chart.join("charts/partials/templates/_proxy.tpl"),
        "- name: _pod_containerName",
        "- name: FROM_THIS_CHART\n  value: \"yes\"\n- name: _pod_containerName",
    );
    let marker = "- name: FROM_THIS_CHART";
    let directory = inject(&chart.to_string_lossy(), &[]);
    assert_eq!(directory.code, 0, "{}", directory.stderr);
    assert!(directory.stdout.contains(marker));
    // The directory helm pull --untar -d DIR writes the chart into.
    let parent = inject(&dir.path().to_string_lossy(), &[]);
    assert_eq!(parent.stdout, directory.stdout, "{}", parent.stderr);
    // The .tgz of helm pull.
    let tgz = dir.path().join("linkerd-control-plane-2026.5.2.tgz");
    pack(&chart, &tgz);
    let archive = inject(&tgz.to_string_lossy(), &[]);
    assert_eq!(archive.stdout, directory.stdout, "{}", archive.stderr);
    // Found in a --context directory beside the trust roots, untarred or not.
    for (name, keep) in [("untarred", true), ("packed", false)] {
        let cluster = tempfile::tempdir().expect("temp dir");
        std::fs::copy(
            common::cluster().join("linkerd-trust-roots.yaml"),
            cluster.path().join("linkerd-trust-roots.yaml"),
        )
        .expect("copy the trust roots");
        if keep {
            let copy = lay_out_chart(
                &common::shared("fidelity/linkerd", test).expect("shared"),
                cluster.path(),
                "edge-26.5.2",
                "",
            );
            edit(
                &copy.join("charts/partials/templates/_proxy.tpl"),
                "- name: _pod_containerName",
                "- name: FROM_THIS_CHART\n  value: \"yes\"\n- name: _pod_containerName",
            );
            // The chart's own templates, which are no cluster objects, as
            // helm pull leaves them: read with -R, they are left out.
            std::fs::create_dir_all(copy.join("templates")).expect("templates");
            std::fs::write(
                copy.join("templates/destination.yaml"),
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Values.name }}\n",
            )
            .expect("a chart template");
        } else {
            std::fs::copy(
                &tgz,
                cluster.path().join("linkerd-control-plane-2026.5.2.tgz"),
            )
            .expect("copy the .tgz");
        }
        let context = cluster.path().to_string_lossy().to_string();
        for recursive in [&[][..], &["-R"]] {
            let mut args = vec!["--context", &context];
            args.extend(recursive);
            let run = common::run(&args, Some(DEPLOYMENT));
            assert_eq!(run.code, 0, "{name} {recursive:?}: {}", run.stderr);
            assert_eq!(run.stdout, directory.stdout, "{name} {recursive:?}");
        }
    }
}

#[test]
fn a_missing_or_failing_partial_stops_the_run_naming_the_chart_file_and_line() {
    let test =
        "linkerd_chart::a_missing_or_failing_partial_stops_the_run_naming_the_chart_file_and_line";
    let Some((_dir, chart)) = release_chart(test) else {
        return;
    };
    let templates = chart.join("charts/partials/templates");
    std::fs::remove_file(templates.join("_debug.tpl")).expect("remove _debug.tpl");
    let path = chart.to_string_lossy().to_string();
    // Only a pod asking for the debug container needs it.
    assert_eq!(inject(&path, &[]).code, 0);
    let missing = inject(&path, &["--set", "enableDebugSidecar=true"]);
    assert_eq!(missing.code, 2, "{}", missing.stderr);
    assert!(missing.stdout.is_empty(), "{}", missing.stdout);
    assert!(
        missing.stderr.contains(&format!(
            "--linkerd-chart {path}: the chart defines no template \"partials.debug\""
        )),
        "{}",
        missing.stderr
    );
    // A partial that fails: its file and line (the fail is on line 3).
    edit(
        &templates.join("_proxy.tpl"),
        "{{ define \"partials.proxy\" -}}\n",
        "{{ define \"partials.proxy\" -}}\n\n{{ fail \"this chart is broken\" }}\n",
    );
    let failed = inject(&path, &[]);
    assert_eq!(failed.code, 2, "{}", failed.stderr);
    assert!(failed.stdout.is_empty(), "{}", failed.stdout);
    assert!(
        failed.stderr.contains(&format!(
            "--linkerd-chart {path}: charts/partials/templates/_proxy.tpl: template \"partials.proxy\", line 3: error calling fail: this chart is broken"
        )),
        "{}",
        failed.stderr
    );
    // Not a chart at all.
    let nothing = inject(&templates.to_string_lossy(), &[]);
    assert_eq!(nothing.code, 2, "{}", nothing.stderr);
    assert!(
        nothing.stderr.contains("not a Helm chart"),
        "{}",
        nothing.stderr
    );
}

/// Each of Linkerd's settings a workload gives, one at a time (as a pod
/// annotation), with a value other than the default.
const SETTINGS: &[(&str, &str)] = &[
    ("config.linkerd.io/proxy-image", "registry.example/proxy"),
    ("config.linkerd.io/proxy-version", "edge-99.1.1"),
    ("config.linkerd.io/image-pull-policy", "Always"),
    ("config.linkerd.io/proxy-uid", "3000"),
    ("config.linkerd.io/proxy-gid", "3001"),
    ("config.linkerd.io/inbound-port", "5143"),
    ("config.linkerd.io/outbound-port", "5140"),
    ("config.linkerd.io/admin-port", "5191"),
    ("config.linkerd.io/control-port", "5190"),
    ("config.linkerd.io/proxy-log-level", "debug"),
    ("config.linkerd.io/proxy-log-format", "json"),
    ("config.linkerd.io/proxy-log-http-headers", "insecure"),
    ("config.linkerd.io/proxy-admin-shutdown", "enabled"),
    ("config.linkerd.io/proxy-inbound-connect-timeout", "1.5s"),
    ("config.linkerd.io/proxy-outbound-connect-timeout", "2s"),
    (
        "config.linkerd.io/proxy-outbound-discovery-cache-unused-timeout",
        "1m",
    ),
    (
        "config.linkerd.io/proxy-inbound-discovery-cache-unused-timeout",
        "30s",
    ),
    ("config.linkerd.io/proxy-metrics-hostname-labels", "true"),
    ("linkerd.io/inject", "ingress"),
    ("config.linkerd.io/access-log", "json"),
    ("config.linkerd.io/shutdown-grace-period", "45s"),
    (
        "config.linkerd.io/proxy-require-identity-inbound-ports",
        "8080",
    ),
    (
        "config.linkerd.io/proxy-disable-outbound-protocol-detect-timeout",
        "true",
    ),
    (
        "config.linkerd.io/proxy-disable-inbound-protocol-detect-timeout",
        "true",
    ),
    ("config.linkerd.io/enable-external-profiles", "true"),
    ("config.linkerd.io/enable-gateway", "true"),
    ("config.linkerd.io/skip-subnets", "10.1.0.0/16"),
    ("config.linkerd.io/default-inbound-policy", "deny"),
    ("config.linkerd.io/opaque-ports", "8080,9000-9100"),
    ("config.linkerd.io/skip-inbound-ports", "9090"),
    ("config.linkerd.io/skip-outbound-ports", "5432"),
    ("config.linkerd.io/proxy-cpu-request", "1500m"),
    ("config.linkerd.io/proxy-cpu-limit", "2"),
    ("config.linkerd.io/proxy-cpu-ratio-limit", "0.5"),
    ("config.linkerd.io/proxy-memory-request", "64Mi"),
    ("config.linkerd.io/proxy-memory-limit", "256Mi"),
    ("config.linkerd.io/proxy-ephemeral-storage-request", "1Gi"),
    ("config.linkerd.io/proxy-ephemeral-storage-limit", "2Gi"),
    (
        "config.alpha.linkerd.io/proxy-wait-before-exit-seconds",
        "20",
    ),
    ("config.linkerd.io/proxy-enable-native-sidecar", "false"),
    (
        "config.linkerd.io/proxy-additional-env",
        r#"[{"name":"EXTRA","value":"1"}]"#,
    ),
    ("config.linkerd.io/enable-debug-sidecar", "true"),
    ("config.linkerd.io/debug-image", "registry.example/debug"),
    ("config.linkerd.io/debug-image-version", "v9"),
    ("config.linkerd.io/debug-image-pull-policy", "Never"),
    ("config.linkerd.io/proxy-await", "disabled"),
];

/// Flags given to both sides, for what a workload cannot annotate.
const FLAG_SETTINGS: &[&[&str]] = &[
    &["--set", "cni=true"],
    &["--set", "disableIPv6=false"],
    &["--set", "iptablesMode=legacy"],
    &[
        "--set",
        "proxyInitLogLevel=debug",
        "--set",
        "proxyInitLogFormat=json",
    ],
    &[
        "--set",
        "closeWaitTimeout=90s",
        "--set",
        "proxyInitRunAsRoot=true",
    ],
    &["--set", "proxyGID=2103"],
    &["--set", "proxyCores=2"],
    &["--native-sidecar", "never"],
    &["--native-sidecar", "never", "--set", "proxyPosition=last"],
    &["--kube-version", "1.28"],
];

#[test]
fn every_setting_renders_from_the_chart_as_from_the_embedded_profile() {
    let test = "linkerd_chart::every_setting_renders_from_the_chart_as_from_the_embedded_profile";
    let Some((dir, chart)) = release_chart(test) else {
        return;
    };
    let chart = chart.to_string_lossy().to_string();
    let cluster = common::cluster().to_string_lossy().to_string();
    let mut cases: Vec<(String, String, Vec<&str>)> = SETTINGS
        .iter()
        .map(|(key, value)| {
            let manifest = DEPLOYMENT.replace(
                "    metadata: {labels: {app: web}}",
                &format!("    metadata:\n      labels: {{app: web}}\n      annotations: {{{key}: '{value}'}}"),
            );
            (format!("{key}: {value}"), manifest, Vec::new())
        })
        .collect();
    for flags in FLAG_SETTINGS {
        cases.push((flags.join(" "), DEPLOYMENT.to_string(), flags.to_vec()));
    }
    let mut failures = Vec::new();
    for (case, manifest, flags) in &cases {
        let path = dir.path().join("deploy.yaml");
        std::fs::write(&path, manifest).expect("write the manifest");
        let path = path.to_string_lossy().to_string();
        let mut args = vec!["--warn-only", "--context", &cluster, "-f", &path];
        args.extend(flags);
        let embedded = common::run(&args, None);
        args.extend(["--linkerd-chart", &chart]);
        let with_chart = common::run(&args, None);
        assert!(
            embedded.stdout.contains("linkerd-proxy"),
            "{case}: {}",
            embedded.stderr
        );
        if (&embedded.stdout, &embedded.stderr, embedded.code)
            != (&with_chart.stdout, &with_chart.stderr, with_chart.code)
        {
            let diff = similar::TextDiff::from_lines(&embedded.stdout, &with_chart.stdout)
                .unified_diff()
                .to_string();
            failures.push(format!(
                "{case}: exit {} and {}\n{}{}{diff}",
                embedded.code, with_chart.code, embedded.stderr, with_chart.stderr
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_corpus_is_injected_from_the_chart_as_from_the_embedded_profile() {
    let test = "linkerd_chart::the_corpus_is_injected_from_the_chart_as_from_the_embedded_profile";
    let Some((_dir, chart)) = release_chart(test) else {
        return;
    };
    let Some(corpus) = common::corpus(test) else {
        return;
    };
    let chart = chart.to_string_lossy().to_string();
    let cluster = common::cluster().to_string_lossy().to_string();
    let (mut injected, mut failures) = (0, Vec::new());
    for path in common::manifests_under(&corpus) {
        let path = path.to_string_lossy().to_string();
        let args = ["-q", "--warn-only", "--context", &cluster, "-f", &path];
        let embedded = common::run(&args, None);
        let mut with_chart = args.to_vec();
        with_chart.extend(["--linkerd-chart", &chart]);
        let with_chart = common::run(&with_chart, None);
        if embedded.stdout.contains("linkerd.io/proxy-version") {
            injected += 1;
        }
        if (&embedded.stdout, embedded.code) != (&with_chart.stdout, with_chart.code) {
            let diff = similar::TextDiff::from_lines(&embedded.stdout, &with_chart.stdout)
                .unified_diff()
                .to_string();
            let shown: String = diff.chars().take(3000).collect();
            failures.push(format!(
                "{path}: exit {} and {}\n{}{shown}",
                embedded.code, with_chart.code, with_chart.stderr
            ));
        }
    }
    eprintln!("{injected} corpus files injected, alike with the chart");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(injected > 20, "only {injected} injected");
}

#[test]
fn the_releases_defaults_are_what_the_tool_decides_with_too() {
    let test = "linkerd_chart::the_releases_defaults_are_what_the_tool_decides_with_too";
    let Some((_dir, chart)) = release_chart(test) else {
        return;
    };
    // Another release: its version, and 8080 among its opaque ports.
    let values = chart.join("values.yaml");
    edit(
        &values,
        "linkerdVersion: edge-26.5.2",
        "linkerdVersion: edge-99.9.9",
    );
    edit(
        &values,
        "opaquePorts: \"25,587,3306,4444,5432,6379,9300,11211\"",
        "opaquePorts: \"25,8080\"",
    );
    let run = inject(&chart.to_string_lossy(), &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for expected in [
        "linkerd.io/proxy-version: edge-99.9.9",
        "image: cr.l5d.io/linkerd/proxy:edge-99.9.9",
        // The webhook marks the pod's opaque ports, and the proxy gets them.
        "config.linkerd.io/opaque-ports: \"8080\"",
        "- name: LINKERD2_PROXY_INBOUND_PORTS_DISABLE_PROTOCOL_DETECTION\n          value: \"8080\"",
    ] {
        assert!(run.stdout.contains(expected), "{expected}:\n{}", run.stdout);
    }
}

/// A cluster's `linkerd-config` values (as `kubectl get -o yaml` keeps
/// them), with settings other than the chart's defaults, and a namespace's.
const CLUSTER: &str = r#"apiVersion: v1
kind: ConfigMap
metadata: {name: linkerd-config, namespace: linkerd}
data:
  values: |
    linkerdVersion: edge-26.5.2
    clusterNetworks: 10.0.0.0/8
    proxy:
      logLevel: info
      logFormat: json
      opaquePorts: "8080,3306"
      image: {name: registry.example/linkerd/proxy, version: edge-26.5.9}
      ports: {admin: 4999}
      resources:
        cpu: {request: 250m, limit: "2"}
        memory: {limit: 300Mi}
      runtime:
        workers: {minimum: 2}
      additionalEnv: [{name: A, value: "1"}, {name: B, value: "1"}]
      experimentalEnv: [{name: X, value: "x"}]
    proxyInit:
      ignoreInboundPorts: "9000"
      ignoreOutboundPorts: "25"
      iptablesMode: legacy
    debugContainer:
      image: {version: debug-1}
---
apiVersion: v1
kind: Namespace
metadata:
  name: shop
  annotations:
    config.linkerd.io/proxy-additional-env: '[{"name": "B", "value": "2"}]'
    config.linkerd.io/proxy-log-level: debug
"#;

#[test]
fn the_clusters_values_go_over_the_chart_as_over_the_embedded_profile() {
    let test = "linkerd_chart::the_clusters_values_go_over_the_chart_as_over_the_embedded_profile";
    let Some((dir, chart)) = release_chart(test) else {
        return;
    };
    let context = dir.path().join("linkerd-config.yaml");
    std::fs::write(&context, CLUSTER).expect("write the cluster's objects");
    let (context, chart) = (context.to_string_lossy(), chart.to_string_lossy());
    let anchors = common::cluster().to_string_lossy().to_string();
    for more in [
        &[][..],
        &[
            "--set",
            "enableDebugSidecar=true",
            "--set",
            "proxyCPULimit=3",
        ],
    ] {
        let mut args = vec!["--context", &anchors, "--context", &context];
        args.extend(more);
        let embedded = common::run(&args, Some(DEPLOYMENT));
        args.extend(["--linkerd-chart", &chart]);
        let with_chart = common::run(&args, Some(DEPLOYMENT));
        assert_eq!(embedded.code, 0, "{}", embedded.stderr);
        assert!(
            embedded
                .stdout
                .contains("registry.example/linkerd/proxy:edge-26.5.9")
        );
        let diff = similar::TextDiff::from_lines(&embedded.stdout, &with_chart.stdout)
            .unified_diff()
            .to_string();
        assert_eq!(embedded.stdout, with_chart.stdout, "{more:?}:\n{diff}");
        assert_eq!(embedded.stderr, with_chart.stderr);
    }
}

#[test]
fn a_release_without_native_sidecars_gets_a_classic_proxy() {
    let test = "linkerd_chart::a_release_without_native_sidecars_gets_a_classic_proxy";
    let Some((_dir, chart)) = release_chart(test) else {
        return;
    };
    // As Linkerd's charts were before native sidecars: nothing makes the
    // proxy one.
    edit(
        &chart.join("charts/partials/templates/_proxy.tpl"),
        "{{- if .Values.proxy.nativeSidecar }}\nrestartPolicy: Always\n{{- end -}}",
        "",
    );
    let path = chart.to_string_lossy().to_string();
    for native in [&[][..], &["--native-sidecar", "always"]] {
        let run = inject(&path, native);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(
            // First among the containers, the app awaiting it.
            run.stdout
                .contains("      containers:\n      - name: linkerd-proxy\n")
                && !run.stdout.contains("restartPolicy"),
            "{}",
            run.stdout
        );
        assert!(run.stdout.contains("postStart"), "{}", run.stdout);
        assert!(
            run.stderr.contains("renders no native sidecar"),
            "{}",
            run.stderr
        );
    }
}

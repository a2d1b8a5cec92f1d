//! The command line, run as a user runs it.

mod common;

use std::os::unix::fs::PermissionsExt;

use common::{run, testdata};
use serde_json::Value;

const EXAMPLE: &str = "testdata/example/deploy.yaml";

fn example_text() -> String {
    std::fs::read_to_string(common::repo().join(EXAMPLE)).expect("example")
}

fn in_repo(args: &[&str]) -> common::Run {
    let mut cmd = common::command();
    cmd.current_dir(common::repo())
        .args(args)
        .write_stdin(Vec::new());
    cmd.output().expect("runs").into()
}

#[test]
fn injects_a_file_and_reports_each_object() {
    let run = in_repo(&["-f", EXAMPLE]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("- name: linkerd-proxy"));
    assert!(run.stdout.contains("- name: linkerd-init"));
    assert!(
        run.stdout.starts_with("# The quick-start example"),
        "comments kept"
    );
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines[0], "deployment/web injected");
    assert!(
        lines[1].starts_with("  warning: value \"trustAnchorsPEM\" is empty"),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2], "service/web skipped: kind is not injectable");
    assert_eq!(
        lines.last().copied(),
        Some("1 injected, 0 unchanged, 1 skipped; 1 of 1 input changed")
    );
}

#[test]
fn reads_stdin_without_f_and_with_dash() {
    let text = example_text();
    let piped = run(&["-q"], Some(&text));
    assert_eq!(piped.code, 0, "{}", piped.stderr);
    let dashed = run(&["-q", "-f", "-"], Some(&text));
    assert_eq!(piped.stdout, dashed.stdout);
    assert!(piped.stdout.contains("linkerd-proxy"));
}

#[test]
fn directories_read_manifest_files_in_order_and_recurse_with_r() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = example_text();
    for name in ["b.yaml", "a.yml", "c.json", "skip.txt", "sub/d.yaml"] {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        let body = if name.ends_with(".json") {
            r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}"#.to_string()
        } else {
            text.replace(
                "name: web\n  namespace",
                &format!("name: {}\n  namespace", name.replace(['.', '/'], "-")),
            )
        };
        std::fs::write(path, body).expect("write");
    }
    let d = dir.path().to_str().expect("utf-8 path");
    let flat = run(&["-f", d], None);
    assert_eq!(flat.code, 0, "{}", flat.stderr);
    let order: Vec<&str> = flat
        .stderr
        .lines()
        .filter(|l| l.contains("deployment/") || l.contains("configmap/"))
        .collect();
    assert_eq!(order.len(), 3, "{}", flat.stderr);
    assert!(
        order[0].contains("a.yml") && order[1].contains("b.yaml") && order[2].contains("c.json"),
        "{order:?}"
    );
    assert!(!flat.stderr.contains("skip.txt") && !flat.stderr.contains("sub/d.yaml"));
    let deep = run(&["-R", "-f", d], None);
    assert!(
        deep.stderr
            .contains("sub/d.yaml: deployment/sub-d-yaml injected"),
        "{}",
        deep.stderr
    );
    // Four files make one stream: three `---` inside the YAML files, three between files.
    assert_eq!(deep.stdout.matches("\n---\n").count(), 3 + 3);
}

#[test]
fn output_json_is_the_objects() {
    let run = in_repo(&["-q", "-o", "json", "-f", EXAMPLE]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let list: Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(list["kind"], "List");
    let items = list["items"].as_array().expect("items");
    assert_eq!(items.len(), 2);
    assert_eq!(
        items[0]["spec"]["template"]["spec"]["initContainers"][1]["name"],
        "linkerd-proxy"
    );
}

#[test]
fn output_patch_is_rfc6902_and_reproduces_the_output() {
    let run = in_repo(&["-q", "-o", "patch", "-f", EXAMPLE]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let entries: Vec<Value> = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(entries.len(), 1, "only the Deployment changes");
    assert_eq!(entries[0]["kind"], "Deployment");
    let patch: json_patch::Patch =
        serde_json::from_value(entries[0]["patch"].clone()).expect("RFC 6902");
    let mut original = common::values(&example_text())[0].clone().expect("doc");
    json_patch::patch(&mut original, &patch).expect("applies");
    let injected = common::values(&in_repo(&["-q", "-f", EXAMPLE]).stdout)[0]
        .clone()
        .expect("doc");
    assert_eq!(original, injected);
}

#[test]
fn diff_shows_added_lines_and_colours_only_when_asked() {
    let plain = in_repo(&["-q", "--diff", "-f", EXAMPLE]);
    assert_eq!(plain.code, 0);
    assert!(
        plain.stdout.starts_with(
            "--- a/testdata/example/deploy.yaml\n+++ b/testdata/example/deploy.yaml\n"
        )
    );
    assert!(
        plain.stdout.contains("\n+      - name: linkerd-proxy\n")
            || plain.stdout.contains("\n+        - name: linkerd-proxy\n")
    );
    assert!(!plain.stdout.contains('\x1b'), "no colour off a terminal");
    let coloured = in_repo(&["-q", "--diff", "--color", "always", "-f", EXAMPLE]);
    assert!(coloured.stdout.contains("\x1b[32m+"), "green additions");
}

#[test]
fn in_place_rewrites_changed_files_only_and_keeps_their_mode() {
    let dir = tempfile::tempdir().expect("tempdir");
    let deploy = dir.path().join("deploy.yaml");
    let config = dir.path().join("config.yaml");
    std::fs::write(&deploy, example_text()).expect("write");
    std::fs::set_permissions(&deploy, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    let config_text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n";
    std::fs::write(&config, config_text).expect("write");
    let before = std::fs::metadata(&config)
        .expect("meta")
        .modified()
        .expect("mtime");

    let run = run(
        &["-q", "--in-place", "-f", dir.path().to_str().expect("path")],
        None,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.is_empty(), "nothing on stdout");
    let injected = std::fs::read_to_string(&deploy).expect("read");
    assert!(injected.contains("linkerd-proxy"));
    assert_eq!(
        std::fs::metadata(&deploy)
            .expect("meta")
            .permissions()
            .mode()
            & 0o777,
        0o640
    );
    assert_eq!(std::fs::read_to_string(&config).expect("read"), config_text);
    assert_eq!(
        std::fs::metadata(&config)
            .expect("meta")
            .modified()
            .expect("mtime"),
        before
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .expect("ls")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "no temporary files left");
}

#[test]
fn in_place_writes_nothing_when_any_file_is_bad() {
    let dir = tempfile::tempdir().expect("tempdir");
    let good = dir.path().join("a.yaml");
    std::fs::write(&good, example_text()).expect("write");
    std::fs::write(dir.path().join("b.yaml"), "kind: Pod\nspec: [unclosed\n").expect("write");
    let run = run(
        &["--in-place", "-f", dir.path().to_str().expect("path")],
        None,
    );
    assert_eq!(run.code, 2);
    assert_eq!(
        std::fs::read_to_string(&good).expect("read"),
        example_text()
    );
}

#[test]
fn check_lists_stale_files_and_exits_1() {
    let dir = tempfile::tempdir().expect("tempdir");
    let stale = dir.path().join("stale.yaml");
    let fresh = dir.path().join("fresh.yaml");
    std::fs::write(&stale, example_text()).expect("write");
    std::fs::write(&fresh, common::pipe(None, &example_text())).expect("write");
    let d = dir.path().to_str().expect("path");
    let run = run(&["-q", "--check", "-f", d], None);
    assert_eq!(run.code, 1);
    assert!(run.stdout.is_empty());
    assert_eq!(run.stderr, format!("would inject: {}\n", stale.display()));
    assert_eq!(
        std::fs::read_to_string(&stale).expect("read"),
        example_text(),
        "check writes nothing"
    );
    let clean = common::run(
        &["-q", "--check", "-f", fresh.to_str().expect("path")],
        None,
    );
    assert_eq!(clean.code, 0);
}

#[test]
fn malformed_yaml_exits_2_with_position_and_empty_stdout() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "apiVersion: v1\nkind: Pod\n---\nkind: Pod\nmetadata:\n  name: [x\n",
    )
    .expect("write");
    let good = dir.path().join("good.yaml");
    std::fs::write(&good, example_text()).expect("write");
    let run = run(
        &[
            "-f",
            good.to_str().expect("p"),
            "-f",
            bad.to_str().expect("p"),
        ],
        None,
    );
    assert_eq!(run.code, 2);
    assert!(run.stdout.is_empty(), "no partial output: {}", run.stdout);
    let first = run.stderr.lines().next().expect("message");
    assert!(
        first.starts_with(&format!("error: {}: document 2, line ", bad.display())),
        "{first}"
    );
    assert!(
        run.stderr.contains(" | "),
        "a source snippet: {}",
        run.stderr
    );
}

#[test]
fn unreadable_inputs_exit_2() {
    let missing = run(&["-f", "/no/such/dir/deploy.yaml"], None);
    assert_eq!(missing.code, 2);
    assert!(
        missing
            .stderr
            .contains("/no/such/dir/deploy.yaml: no such file or directory"),
        "{}",
        missing.stderr
    );
    let not_utf8 = tempfile::NamedTempFile::new().expect("temp");
    std::fs::write(not_utf8.path(), b"kind: Pod\nname: \xff\n").expect("write");
    let bad = run(&["-f", not_utf8.path().to_str().expect("p")], None);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("not valid UTF-8"));
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["-o", "json", "--diff"][..],
        &["--in-place"][..],
        &["--in-place", "-f", "-"][..],
        &["--check", "--diff", "-f", "x"][..],
        &["-o", "xml"][..],
    ] {
        let run = run(args, Some(""));
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty());
    }
}

#[test]
fn set_overrides_profile_values_and_rejects_unknown_names() {
    let run = run(
        &[
            "-q",
            "--set",
            "proxyVersion=edge-99.1.1",
            "--set",
            "proxyUID=1234",
        ],
        Some(&example_text()),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("image: cr.l5d.io/linkerd/proxy:edge-99.1.1")
    );
    assert!(run.stdout.contains("runAsUser: 1234"));
    let unknown = common::run(&["--set", "proxyVersoin=1"], Some(&example_text()));
    assert_eq!(unknown.code, 2);
    assert!(
        unknown.stderr.contains("proxyVersoin"),
        "{}",
        unknown.stderr
    );
    let pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    let with_anchors = common::run(
        &["--set", &format!("trustAnchorsPEM={pem}")],
        Some(&example_text()),
    );
    assert!(
        !with_anchors.stderr.contains("warning"),
        "{}",
        with_anchors.stderr
    );
    assert!(
        with_anchors.stdout.contains("value: |\n"),
        "PEM as a literal block"
    );
}

#[test]
fn uninject_removes_exactly_what_inject_added() {
    let injected = common::pipe(None, &example_text());
    let run = run(&["uninject"], Some(&injected));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, example_text());
    assert!(
        run.stderr
            .starts_with("deployment/web uninjected\nservice/web unchanged: not injected\n"),
        "{}",
        run.stderr
    );
}

#[test]
fn reinjecting_reports_unchanged_and_never_adds_a_second_proxy() {
    let injected = common::pipe(None, &example_text());
    let again = run(&[], Some(&injected));
    assert_eq!(again.stdout, injected);
    assert!(
        again
            .stderr
            .starts_with("deployment/web unchanged: already injected\n")
    );
    // A pod injected by the mesh's own tooling is re-injected, not doubled.
    let foreign = injected.replace("mesh-inject.io/added", "example.com/other");
    let out = common::pipe(None, &foreign);
    assert_eq!(out.matches("- name: linkerd-proxy\n").count(), 1, "{out}");
}

#[test]
fn quiet_silences_the_report() {
    let run = in_repo(&["--quiet", "-f", EXAMPLE]);
    assert_eq!(run.code, 0);
    assert!(run.stderr.is_empty());
}

#[test]
fn skips_are_reported_with_reasons_and_left_untouched() {
    let path = testdata("inject/skips.yaml");
    let text = std::fs::read_to_string(&path).expect("read");
    let run = run(&["-f", path.to_str().expect("p")], None);
    assert_eq!(run.code, 0);
    assert_eq!(run.stdout, text);
    assert!(
        run.stderr
            .contains("deployment/host-net skipped: hostNetwork is enabled")
    );
    assert!(run.stderr.contains(
        "deployment/opted-out skipped: pod has the annotation \"linkerd.io/inject: disabled\""
    ));
    assert!(run.stderr.contains("deployment/has-istio skipped: a third-party proxy is already present (container istio-proxy)"));
}

#[test]
fn version_and_help() {
    let version = run(&["--version"], None);
    assert_eq!(version.code, 0);
    assert!(version.stdout.starts_with("kubectl-mesh_inject "));
    let help = run(&["--help"], None);
    assert!(help.stdout.contains("kubectl mesh-inject"));
    assert!(help.stdout.contains("uninject"));
}

/// A stream of over 1 MB: 400 parts (`part(i)`), each padded with comments
/// and ended by `---`, so that it is cut into stretches for the cores.
fn large_stream(part: impl Fn(usize) -> String) -> String {
    let padding = format!("# {}\n", "x".repeat(1000)).repeat(3);
    let stream: String = (0..400)
        .map(|i| format!("{}{padding}---\n", part(i)))
        .collect();
    assert!(stream.len() > 1 << 20);
    stream
}

#[test]
fn large_streams_split_among_cores_keep_every_document_in_order() {
    // Over 1 MB and 64 documents: parsed and planned in parallel.
    let stream = large_stream(named_example);
    let run = run(&["-f", "-"], Some(&stream));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let injected: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.ends_with(" injected"))
        .collect();
    // Cut into stretches that the cores take in turn: results keep the stream's order.
    let expected: Vec<String> = (0..400)
        .map(|i| format!("deployment/web-{i} injected"))
        .collect();
    assert_eq!(injected, expected);
    assert_eq!(common::pipe(None, &run.stdout), run.stdout, "idempotent");
    assert_eq!(
        common::pipe(Some("uninject"), &run.stdout),
        stream,
        "uninject restores"
    );
}

/// The example's objects, named apart: `web-{i}` in part `i`.
fn named_example(i: usize) -> String {
    example_text().replace(
        "name: web\n  namespace",
        &format!("name: web-{i}\n  namespace"),
    )
}

#[test]
fn a_large_stream_on_standard_input_gives_what_the_same_file_gives() {
    // Standard input is read as the file is: the whole stream, cut for the
    // cores the same way, to the same output and report.
    let stream = large_stream(named_example);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("stream.yaml");
    std::fs::write(&path, &stream).expect("write");
    let path = path.to_str().expect("a UTF-8 path");
    let from_file = run(&["-f", path], None);
    assert_eq!(from_file.code, 0, "{}", from_file.stderr);
    assert_eq!(from_file.stderr.matches(" injected\n").count(), 400);
    for args in [&["-f", "-"][..], &[]] {
        let from_stdin = run(args, Some(&stream));
        assert_eq!(from_stdin.code, from_file.code, "{args:?}");
        assert!(
            from_stdin.stdout == from_file.stdout,
            "{args:?}: the output from standard input differs from the file's"
        );
        assert_eq!(from_stdin.stderr, from_file.stderr, "{args:?}");
    }
}

#[test]
fn a_large_resource_list_on_standard_input_is_the_file_s_output_with_results() {
    // As a KRM function (a ResourceList on standard input) the items are
    // injected as from a file, and the results follow them.
    let items: String = (0..300)
        .flat_map(|i| {
            named_example(i)
                .split("\n---\n")
                .map(|object| {
                    let lines: Vec<String> = object
                        .lines()
                        .filter(|line| !line.starts_with('#'))
                        .map(|line| format!("  {line}\n"))
                        .collect();
                    format!("-{}", &lines.concat()[1..])
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let list = format!("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{items}");
    assert!(list.len() > 200_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("list.yaml");
    std::fs::write(&path, &list).expect("write");
    let from_file = run(&["-q", "-f", path.to_str().expect("a UTF-8 path")], None);
    assert_eq!(from_file.code, 0, "{}", from_file.stderr);
    assert!(
        from_file.stdout.contains("- name: linkerd-proxy"),
        "injected"
    );
    let from_stdin = run(&["-q"], Some(&list));
    assert_eq!(from_stdin.code, 0, "{}", from_stdin.stderr);
    let results = from_stdin
        .stdout
        .strip_prefix(from_file.stdout.as_str())
        .expect("the file's output, then the results");
    assert!(results.starts_with("results:\n- message: "), "{results}");
    // Among them, a warning for each injected workload: no trust anchors given.
    assert_eq!(
        results
            .matches("message: 'value \"trustAnchorsPEM\" is empty")
            .count(),
        300
    );
}

#[test]
fn workloads_with_different_settings_in_one_stream_each_get_their_own_proxy() {
    // A core reuses the containers it injected into one workload for the
    // next: a stream mixing settings must give each workload what it would
    // get alone.
    let variants = [
        "",
        "        config.linkerd.io/proxy-enable-native-sidecar: \"false\"\n",
        "        config.linkerd.io/proxy-cpu-request: 200m\n        config.linkerd.io/proxy-log-level: debug\n",
        "        config.linkerd.io/proxy-enable-native-sidecar: \"false\"\n        config.linkerd.io/proxy-await: disabled\n",
        "        config.linkerd.io/proxy-uid: \"3000\"\n        config.linkerd.io/skip-outbound-ports: \"5432\"\n",
    ];
    let workload = |name: &str, variant: usize| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  \
             template:\n    metadata:\n      annotations:\n        team: shop\n{}    spec:\n      \
             containers:\n        - name: app\n          image: example/app:1\n",
            variants[variant]
        )
    };
    let stream = large_stream(|i| workload(&format!("web-{i}"), i % variants.len()));
    let run = run(&["-q", "-f", "-"], Some(&stream));
    assert_eq!(run.code, 0, "{}", run.stderr);
    // The output of a workload alone, its name left to fill in.
    let padding = format!("# {}\n", "x".repeat(1000)).repeat(3);
    let alone: Vec<String> = (0..variants.len())
        .map(|v| {
            common::pipe(
                None,
                &format!("{}{padding}---\n", workload("placeholder-name", v)),
            )
        })
        .collect();
    assert!(
        alone.windows(2).all(|w| w[0] != w[1]),
        "each variant injects differently"
    );
    let expected: String = (0..400)
        .map(|i| alone[i % variants.len()].replace("placeholder-name", &format!("web-{i}")))
        .collect();
    assert!(
        run.stdout == expected,
        "the stream's output differs from each workload's alone"
    );
}

#[test]
fn an_error_late_in_a_large_stream_names_its_document() {
    // The stream is cut into many stretches; documents are counted across them.
    let example = example_text();
    let stream = large_stream(|i| match i {
        377 => "kind: Deployment\nmetadata: {name: \"unclosed\n".to_string(),
        _ => example.clone(),
    });
    let run = run(&["-f", "-"], Some(&stream));
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stdout.is_empty(), "nothing is written");
    // The example holds two documents: the bad one is the 2 × 377 + 1st,
    // and its line is counted from the start of the stream.
    assert_eq!(example.matches("\n---\n").count(), 1);
    let quote = stream.find("{name: \"unclosed").expect("bad document") + "{name: ".len();
    let line = stream[..quote].matches('\n').count() + 1;
    let column = quote - stream[..quote].rfind('\n').expect("a line before");
    let at = format!("<stdin>: document 755, line {line}:{column}: ");
    assert!(run.stderr.contains(&at), "{at} in: {}", run.stderr);
}

#[test]
fn version_names_the_default_proxies() {
    let run = run(&["--version"], None);
    assert_eq!(run.code, 0);
    assert_eq!(
        run.stdout,
        format!(
            "kubectl-mesh_inject {}\nlinkerd proxy: cr.l5d.io/linkerd/proxy:edge-26.5.2\nistio proxy: docker.io/istio/proxyv2:1.28.0\n",
            env!("CARGO_PKG_VERSION")
        )
    );
}

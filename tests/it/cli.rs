//! The command line, run as a user runs it.

use crate::common;

use std::os::unix::fs::PermissionsExt;

use common::{run, testdata};
use serde_json::Value;

const EXAMPLE: &str = "testdata/example/deploy.yaml";

fn example_text() -> String {
    std::fs::read_to_string(common::repo().join(EXAMPLE)).expect("example")
}

fn in_repo(args: &[&str]) -> common::Run {
    let mut cmd = common::command_with(args);
    cmd.current_dir(common::repo()).write_stdin(Vec::new());
    cmd.output().expect("runs").into()
}

#[test]
fn injects_a_file_and_reports_what_changed() {
    let run = in_repo(&["-f", EXAMPLE]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("- name: linkerd-proxy"));
    assert!(run.stdout.contains("- name: linkerd-init"));
    assert!(
        run.stdout.starts_with("# The quick-start example"),
        "comments kept"
    );
    // What changed, then the summary of every object; -v lists every object.
    assert_eq!(
        run.stderr,
        "deployment/web injected\n1 injected, 0 unchanged, 1 skipped; 1 of 1 input changed\n"
    );
    let verbose = in_repo(&["-v", "-f", EXAMPLE]);
    assert_eq!(verbose.stdout, run.stdout);
    assert_eq!(
        verbose.stderr,
        "deployment/web injected\n\
         service/web skipped: linkerd's webhook writes nothing on it\n\
         1 injected, 0 unchanged, 1 skipped; 1 of 1 input changed\n"
    );
}

/// Without -v, what was left as expected (kinds without a pod, workloads
/// already injected) is counted, not listed; a skip for a reason the user
/// may not expect (an opt-out) and any warning are listed.
#[test]
fn the_report_lists_what_changed_and_what_was_skipped_for_a_reason() {
    let text = format!(
        "{}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\n---\n\
         apiVersion: v1\nkind: Pod\nmetadata:\n  name: out\n  annotations: {{linkerd.io/inject: disabled}}\n\
         spec:\n  containers: [{{name: app, image: app:1}}]\n",
        common::pipe(None, &example_text())
    );
    let run = run(&[], Some(&text));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", run.stderr);
    assert!(lines[0].starts_with("pod/out skipped: "), "{}", run.stderr);
    assert_eq!(
        lines[1],
        "0 injected, 1 unchanged, 3 skipped; 0 of 1 input changed"
    );
}

/// A workload kind under an API version Kubernetes never served it under
/// (`apps/v2`) is skipped with the reason and left as it is; under each
/// version it was served under, it is injected.
#[test]
fn a_workload_kind_under_a_version_that_does_not_exist_is_skipped_with_the_reason() {
    let workload = |api_version: &str, kind: &str| {
        let pod = "metadata: {labels: {app: a}}\n    spec:\n      containers: [{name: app, image: app:1}]\n";
        let spec = match kind {
            "Pod" => "spec:\n  containers: [{name: app, image: app:1}]\n".to_string(),
            "CronJob" => format!(
                "spec:\n  schedule: '* * * * *'\n  jobTemplate:\n   spec:\n    template:\n     {}",
                pod.replace("\n    ", "\n     ")
            ),
            _ => format!("spec:\n  selector: {{matchLabels: {{app: a}}}}\n  template:\n    {pod}"),
        };
        let name = format!("{}-{}", kind.to_lowercase(), api_version.replace('/', "-"));
        format!("apiVersion: {api_version}\nkind: {kind}\nmetadata:\n  name: {name}\n{spec}")
    };
    let real = [
        ("v1", "Pod"),
        ("v1", "ReplicationController"),
        ("apps/v1", "Deployment"),
        ("apps/v1beta1", "Deployment"),
        ("apps/v1beta2", "Deployment"),
        ("extensions/v1beta1", "Deployment"),
        ("apps/v1beta1", "StatefulSet"),
        ("apps/v1beta2", "DaemonSet"),
        ("extensions/v1beta1", "ReplicaSet"),
        ("batch/v1", "Job"),
        ("batch/v1beta1", "CronJob"),
        ("batch/v2alpha1", "CronJob"),
    ];
    let unreal = [
        ("v2", "Pod"),
        ("apps/v2", "Deployment"),
        ("apps/v1beta3", "StatefulSet"),
        ("apps/v1beta1", "DaemonSet"),
        ("extensions/v1", "Deployment"),
        ("batch/v2", "Job"),
        ("batch/v1beta2", "CronJob"),
    ];
    for (api_version, kind) in real {
        let text = workload(api_version, kind);
        let run = run(&["--warn-only"], Some(&text));
        assert_eq!(run.code, 0, "{api_version} {kind}: {}", run.stderr);
        assert_ne!(
            run.stdout, text,
            "{api_version} {kind} was not injected: {}",
            run.stderr
        );
    }
    for (api_version, kind) in unreal {
        let text = workload(api_version, kind);
        let run = run(&["--warn-only"], Some(&text));
        assert_eq!(run.code, 0, "{api_version} {kind}: {}", run.stderr);
        assert_eq!(run.stdout, text, "{api_version} {kind} was injected");
        let reason = format!(
            "{}/{}-{} skipped: kind is not injectable: {api_version} is not an API version of {kind} that the tool knows",
            kind.to_lowercase(),
            kind.to_lowercase(),
            api_version.replace('/', "-")
        );
        assert!(
            run.stderr.contains(&reason),
            "{api_version} {kind}: {}",
            run.stderr
        );
        // Uninject leaves it as it is too.
        let back = common::run(&["uninject", "-q"], Some(&text));
        assert_eq!(back.stdout, text);
    }
}

/// --check and --diff write nothing, and the report says so: what would be
/// injected, never "injected … changed".
#[test]
fn check_and_diff_say_what_would_change_not_what_changed() {
    for mode in ["--check", "--diff"] {
        let run = in_repo(&[mode, "-f", EXAMPLE]);
        assert_eq!(run.code, 1, "{mode}: {}", run.stderr);
        assert!(
            run.stderr.contains("deployment/web would be injected\n"),
            "{mode}: {}",
            run.stderr
        );
        assert!(
            run.stderr.ends_with(
                "1 to inject, 0 unchanged, 1 skipped; 1 of 1 input would change; nothing was written\n"
            ),
            "{mode}: {}",
            run.stderr
        );
    }
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
    let flat = run(&["-v", "-f", d], None);
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

/// A file named twice (again, in a directory named too, through a link)
/// is read, injected, reported and written once, and the report names the
/// repetition and the first.
#[test]
fn a_file_named_twice_is_read_and_written_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).expect("sub");
    let a = sub.join("a.yaml");
    std::fs::write(&a, example_text()).expect("write");
    let link = dir.path().join("link.yaml");
    std::os::unix::fs::symlink(&a, &link).expect("symlink");
    let (a, sub, link) = (
        a.to_str().expect("utf-8"),
        sub.to_str().expect("utf-8"),
        link.to_str().expect("utf-8"),
    );
    let once = run(&["-f", a], None);
    assert_eq!(once.code, 0, "{}", once.stderr);
    for (again, named) in [(a, a), (sub, a), (link, link)] {
        let twice = run(&["-f", a, "-f", again], None);
        assert_eq!(twice.code, 0, "{}", twice.stderr);
        assert_eq!(twice.stdout, once.stdout, "-f {a} -f {again}");
        assert!(
            twice.stderr.contains(&format!(
                "{named} skipped: the same file as {a}, named before: read and written once"
            )),
            "{}",
            twice.stderr
        );
        assert!(
            twice
                .stderr
                .contains("1 injected, 0 unchanged, 1 skipped; 1 of 1 input changed"),
            "{}",
            twice.stderr
        );
    }
    // Written once in place.
    let in_place = run(&["-q", "--in-place", "-f", a, "-f", link, "-f", a], None);
    assert_eq!(in_place.code, 0, "{}", in_place.stderr);
    assert_eq!(std::fs::read_to_string(a).expect("read"), once.stdout);
    assert!(
        std::fs::symlink_metadata(link)
            .expect("link")
            .file_type()
            .is_symlink()
    );
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
    assert_eq!(plain.code, 1, "differences: status 1, as kubectl diff");
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
    // The fix is the command line, in place: the fresh file stays as it is.
    assert_eq!(
        run.stderr,
        format!(
            "would inject: {stale}\n  deployment/web: not injected\n\
             fix: kubectl mesh-inject --context {} --context {} -q --in-place -f {d}\n",
            common::cluster().display(),
            common::testdata("cluster-settings").display(),
            stale = stale.display()
        )
    );
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

/// With `--report json`, a run that stops with an error says so as one JSON
/// document on standard error, of the report's version and kind, with the
/// message the text would give and its place; without it, as text.
#[test]
fn an_error_with_the_json_report_is_one_json_document_with_its_place() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "apiVersion: v1\nkind: Pod\n---\nkind: Pod\nmetadata:\n  name: [x\n",
    )
    .expect("write");
    let bad = bad.to_str().expect("a UTF-8 path");
    let missing = "/no/such/dir/deploy.yaml";
    let json_error = |args: &[&str]| -> Value {
        let run = run(args, None);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
        serde_json::from_str(&run.stderr).expect("standard error is one JSON document")
    };
    let message =
        format!("{bad}: document 2, line 7:1: while parsing a flow sequence, expected ',' or ']'");
    assert_eq!(
        json_error(&["--report", "json", "-f", missing]),
        serde_json::json!({
            "apiVersion": "mesh-inject.io/report/v2",
            "kind": "Report",
            "error": {
                "message": format!("{missing}: no such file or directory"),
                "file": missing,
            },
        })
    );
    let syntax = serde_json::json!({
        "message": message,
        "file": bad,
        "document": 2,
        "line": 7,
        "column": 1,
    });
    for args in [
        &["-f", bad, "--report", "json"][..],
        &["uninject", "--report=json", "-f", bad][..],
        &["--report", "json", "--check", "-f", bad][..],
    ] {
        let report = json_error(args);
        assert_eq!(report["apiVersion"], "mesh-inject.io/report/v2", "{args:?}");
        assert_eq!(report["kind"], "Report", "{args:?}");
        assert_eq!(report["error"], syntax, "{args:?}");
    }
    // admit's report is of its own kind, and so is its error.
    let report = json_error(&["admit", "--report", "json", "-f", bad]);
    assert_eq!(report["kind"], "AdmissionReport");
    assert_eq!(report["error"], syntax);
    // An error with no place: the message alone.
    let report = json_error(&["--report", "json", "--in-place", "-f", "-"]);
    assert_eq!(
        report["error"],
        serde_json::json!({"message": "--in-place needs files given with -f, not standard input"})
    );

    // What the command line parser refuses too, of the command's kind.
    let report = json_error(&["--report", "json", "--bogus"]);
    assert_eq!(report["kind"], "Report");
    let said = report["error"]["message"].as_str().expect("a message");
    assert!(
        said.starts_with("unexpected argument '--bogus' found"),
        "{said}"
    );
    let report = json_error(&["admit", "--report=json", "-o", "nope"]);
    assert_eq!(report["kind"], "AdmissionReport");
    let said = report["error"]["message"].as_str().expect("a message");
    assert!(
        said.starts_with("invalid value 'nope' for '--output"),
        "{said}"
    );
    let text = run(&["--report", "text", "--bogus"], None);
    assert_eq!(text.code, 2);
    assert!(
        text.stderr
            .starts_with("error: unexpected argument '--bogus' found"),
        "{}",
        text.stderr
    );

    // Text stays the default, as it was.
    let text = run(&["-f", missing], None);
    assert_eq!(text.code, 2);
    assert_eq!(
        text.stderr,
        format!("error: {missing}: no such file or directory\n")
    );
    let text = run(&["-f", bad, "--report", "text"], None);
    assert_eq!(text.code, 2);
    assert_eq!(text.stderr, format!("error: {message}\n  |\n7 | \n  | ^\n"));
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
    let pem = common::ANCHOR_A;
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
    let run = run(&["uninject", "-v"], Some(&injected));
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
    let again = run(&["-v"], Some(&injected));
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
    // Each Deployment with an annotation Linkerd ignores: a warning result each.
    let items: String = (0..300)
        .flat_map(|i| {
            named_example(i)
                .replace(
                    "    metadata:\n      labels:",
                    "    metadata:\n      annotations: {config.linkerd.io/proxy-uid: root}\n      labels:",
                )
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
    // Among them, a warning for each injected workload: the annotation ignored.
    assert_eq!(
        results
            .matches("message: 'annotation config.linkerd.io/proxy-uid: expected")
            .count(),
        300,
        "{results}"
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

/// A gateway: the mesh's proxy image as the pod's own (and only) container,
/// with no record of an injection.
const GATEWAY: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: istio-ingressgateway
spec:
  selector:
    matchLabels: {app: gw}
  template:
    metadata:
      labels: {app: gw}
      annotations:
        sidecar.istio.io/inject: \"false\"
    spec:
      containers:
      - name: istio-proxy
        image: docker.io/istio/proxyv2:1.29.1
        args: [proxy, router]
      volumes:
      - name: istio-envoy
        emptyDir: {}
";

#[test]
fn a_container_that_was_not_injected_is_never_removed_or_replaced() {
    // Uninject leaves it byte for byte, and says why.
    let run1 = run(&["uninject", "--profile", "istio"], Some(GATEWAY));
    assert_eq!(run1.code, 0, "{}", run1.stderr);
    assert_eq!(run1.stdout, GATEWAY);
    assert!(
        run1.stderr.contains("istio-proxy") && run1.stderr.contains("left as it is"),
        "{}",
        run1.stderr
    );
    // Without the opt-out, inject leaves it too.
    let opted_in = GATEWAY.replace("sidecar.istio.io/inject: \"false\"", "team: edge");
    let run2 = run(&["--profile", "istio"], Some(&opted_in));
    assert_eq!(run2.code, 0, "{}", run2.stderr);
    assert_eq!(run2.stdout, opted_in);
    assert!(
        run2.stderr
            .contains("container named istio-proxy that was not injected"),
        "{}",
        run2.stderr
    );
    // The same for Linkerd: its proxy image in a container of the pod's own.
    let linkerd = opted_in.replace("istio-proxy", "linkerd-proxy").replace(
        "docker.io/istio/proxyv2:1.29.1",
        "cr.l5d.io/linkerd/proxy:edge-26.5.2",
    );
    let run3 = run(&["uninject"], Some(&linkerd));
    assert_eq!(run3.stdout, linkerd, "{}", run3.stderr);
    let run4 = run(&[], Some(&linkerd));
    assert_eq!(run4.stdout, linkerd, "{}", run4.stderr);
    // What the mesh's status annotation names is its injection: removed.
    let injected = common::pipe(
        Some("--profile=istio"),
        &opted_in.replace("istio-proxy", "app"),
    );
    let back = run(&["uninject", "--profile", "istio"], Some(&injected));
    assert_eq!(back.stdout, opted_in.replace("istio-proxy", "app"));
}

// Write failures: a full disk is an error, a closed pipe the reader's choice.

const NO_SPACE: &str = "No space left on device (os error 28)";

/// A small ResourceList, as kpt and kustomize hand a KRM function its input.
const RESOURCE_LIST: &str = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: web}\n  spec:\n    containers:\n    - {name: app, image: example/app:1}\n";

/// Every way of running that prints on standard output, and its input on stdin.
fn printing_runs() -> Vec<(Vec<&'static str>, String)> {
    let none = String::new;
    vec![
        (vec!["-f", EXAMPLE], none()),
        (vec!["-q", "-f", EXAMPLE], none()),
        (vec!["-o", "json", "-f", EXAMPLE], none()),
        (vec!["-o", "patch", "-f", EXAMPLE], none()),
        (vec!["--diff", "-f", EXAMPLE], none()),
        (vec!["uninject", "-f", EXAMPLE], none()),
        (vec!["config"], none()),
        (vec!["config", "--set", "proxyUID=1234"], none()),
        (vec!["admit", "-f", EXAMPLE], none()),
        (vec!["admit", "-o", "yaml", "-f", EXAMPLE], none()),
        (vec!["admit", "-o", "json", "-f", EXAMPLE], none()),
        (vec![], RESOURCE_LIST.to_string()),
        (vec!["__complete", "--profile", ""], none()),
        (vec!["--help"], none()),
        (vec!["--version"], none()),
        (vec!["version"], none()),
    ]
}

#[test]
fn a_full_standard_output_fails_the_run_naming_it() {
    for (args, stdin) in printing_runs() {
        let run = common::run_to(
            &args,
            &common::repo(),
            &stdin,
            common::full(),
            std::process::Stdio::piped(),
        );
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert_eq!(
            run.stderr,
            format!("error: writing to standard output: {NO_SPACE}\n"),
            "{args:?}"
        );
    }
}

#[test]
fn a_full_standard_error_fails_the_run() {
    for args in [
        &["-f", EXAMPLE][..],
        &["--report", "json", "-f", EXAMPLE][..],
        &["-q", "--check", "-f", EXAMPLE][..],
        &["--diff", "-f", EXAMPLE][..],
        &["admit", "-o", "yaml", "-f", EXAMPLE][..],
        // A rejection: its messages go to standard error.
        &[
            "-f",
            "testdata/admission/web.yaml",
            "--context",
            "testdata/admission/namespace.yaml",
        ][..],
        // The run's own error message cannot be written either: still status 2, no panic.
        &["-f", "no/such/file.yaml"][..],
    ] {
        let run = common::run_to(
            args,
            &common::repo(),
            "",
            std::process::Stdio::piped(),
            common::full(),
        );
        assert_eq!(run.code, 2, "{args:?}");
    }
}

#[test]
fn in_place_with_a_full_standard_error_writes_the_files_and_fails() {
    // The files are written, then the report cannot be: status 2, the files new.
    let dir = tempfile::tempdir().expect("tempdir");
    let deploy = dir.path().join("deploy.yaml");
    std::fs::write(&deploy, example_text()).expect("write");
    let run = common::run_to(
        &["--in-place", "-f", "deploy.yaml"],
        dir.path(),
        "",
        std::process::Stdio::piped(),
        common::full(),
    );
    assert_eq!(run.code, 2);
    assert!(
        std::fs::read_to_string(&deploy)
            .expect("read")
            .contains("linkerd-proxy")
    );
}

#[test]
fn a_closed_pipe_ends_the_run_quietly() {
    // The reader went away (`| head`): nothing more is written, not even the
    // report, and that is no error; the status is the run's own.
    for (args, stdin) in printing_runs() {
        let run = common::run_to(
            &args,
            &common::repo(),
            &stdin,
            common::closed_pipe(),
            std::process::Stdio::piped(),
        );
        // `--diff` keeps its status: the input differs from the output.
        let code = i32::from(args.contains(&"--diff"));
        assert_eq!(run.code, code, "{args:?}: {}", run.stderr);
        assert_eq!(run.stderr, "", "{args:?}");
    }
    // On standard error too: `--check` still says that files would change.
    let check = common::run_to(
        &["--check", "-f", EXAMPLE],
        &common::repo(),
        "",
        std::process::Stdio::piped(),
        common::closed_pipe(),
    );
    assert_eq!(check.code, 1);
    assert_eq!(check.stdout, "");
    let rejected = common::run_to(
        &[
            "-f",
            "testdata/admission/web.yaml",
            "--context",
            "testdata/admission/namespace.yaml",
        ],
        &common::repo(),
        "",
        std::process::Stdio::piped(),
        common::closed_pipe(),
    );
    assert_eq!(rejected.code, 1);
    assert_eq!(rejected.stdout, "");
}

#[test]
fn a_reader_that_stops_early_ends_a_large_run_quietly() {
    use std::io::{Read, Write};
    use std::process::Stdio;
    // As `kubectl mesh-inject -f big.yaml | head -1`: the output is far
    // larger than a pipe holds, so the run is still writing when the reader goes.
    let example = example_text();
    let stream = large_stream(|i| {
        example.replace(
            "name: web\n  namespace",
            &format!("name: web-{i}\n  namespace"),
        )
    });
    let mut child = std::process::Command::new(common::command().get_program())
        .args(common::with_anchors(&["-f", "-"]))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    let mut input = child.stdin.take().expect("stdin");
    let feeder = std::thread::spawn(move || input.write_all(stream.as_bytes()));
    let mut stdout = child.stdout.take().expect("stdout");
    let mut first = [0u8; 64];
    stdout.read_exact(&mut first).expect("the output starts");
    assert!(first.starts_with(b"# The quick-start example"));
    drop(stdout);
    let output = child.wait_with_output().expect("runs");
    feeder
        .join()
        .expect("feeder")
        .expect("the input is read whole");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.is_empty(),
        "no report, no error, no panic; it ends: {}",
        stderr.lines().last().unwrap_or_default()
    );
}

// Empty runs: a directory that gives no manifest is a mistake, said so.

#[test]
fn a_directory_with_manifests_only_below_it_is_an_error_suggesting_r() {
    let dir = tempfile::tempdir().expect("tempdir");
    let nested = dir.path().join("apps/web/deploy.yaml");
    std::fs::create_dir_all(nested.parent().expect("parent")).expect("mkdir");
    std::fs::write(&nested, example_text()).expect("write");
    std::fs::write(dir.path().join("apps/README.md"), "# apps\n").expect("write");
    for args in [
        &["--check", "-f", "apps"][..],
        &["uninject", "--check", "-f", "apps"][..],
        &["admit", "-f", "apps"][..],
    ] {
        let mut args = args.to_vec();
        let run = common::run_to(
            &args,
            dir.path(),
            "",
            std::process::Stdio::piped(),
            std::process::Stdio::piped(),
        );
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout, "", "{args:?}");
        assert_eq!(
            run.stderr,
            "error: apps: no .yaml, .yml or .json file directly in this directory, \
             but its subdirectories hold some (apps/web/deploy.yaml): pass -R to read them\n",
            "{args:?}"
        );
        args.push("-R");
        let recursive = common::run_to(
            &args,
            dir.path(),
            "",
            std::process::Stdio::piped(),
            std::process::Stdio::piped(),
        );
        assert_ne!(recursive.code, 2, "{args:?}: {}", recursive.stderr);
    }
}

#[test]
fn directories_without_manifests_are_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    for sub in ["empty", "notes/deeper"] {
        std::fs::create_dir_all(dir.path().join(sub)).expect("mkdir");
    }
    std::fs::write(dir.path().join("notes/notes.txt"), "kind: Pod\n").expect("write");
    std::fs::write(dir.path().join("deploy.yaml"), example_text()).expect("write");
    let in_dir = |args: &[&str]| {
        common::run_to(
            args,
            dir.path(),
            "",
            std::process::Stdio::piped(),
            std::process::Stdio::piped(),
        )
    };
    let message = |path: &str| {
        format!("error: {path}: no .yaml, .yml or .json file in this directory or below it\n")
    };
    for subcommand in [&[][..], &["uninject"][..], &["admit"][..]] {
        for (paths, bad) in [
            (&["-f", "empty"][..], "empty"),
            (&["-R", "-f", "empty", "-f", "notes"][..], "empty"),
            (&["-f", "notes"][..], "notes"),
            // Beside a manifest, an empty directory is still a mistake.
            (&["-f", "deploy.yaml", "-f", "empty"][..], "empty"),
        ] {
            let mut args = subcommand.to_vec();
            args.extend(paths);
            let run = in_dir(&args);
            assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
            assert_eq!(run.stdout, "", "{args:?}");
            assert_eq!(run.stderr, message(bad), "{args:?}");
        }
    }
    // As a --context directory, too: the checks would run without the
    // policies the user meant to give.
    let context = in_dir(&["-q", "-f", "deploy.yaml", "--context", "empty"]);
    assert_eq!(context.code, 2);
    assert_eq!(
        context.stderr,
        message("empty").replace("error: ", "error: --context ")
    );
}

#[test]
fn an_empty_file_or_standard_input_is_an_input_of_no_documents() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("empty.yaml"), "").expect("write");
    std::fs::create_dir(dir.path().join("only-empty")).expect("mkdir");
    std::fs::write(dir.path().join("only-empty/empty.yml"), "").expect("write");
    // An empty standard input is one too, but for --check, where it is no
    // input (see check_with_no_input_exits_2).
    for args in [
        &["--check", "-f", "empty.yaml"][..],
        &["--check", "-f", "only-empty"][..],
        &["-f", "-"][..],
        &[][..],
        &["uninject", "-f", "empty.yaml"][..],
        &["admit", "-f", "empty.yaml"][..],
    ] {
        let run = common::run_to(
            args,
            dir.path(),
            "",
            std::process::Stdio::piped(),
            std::process::Stdio::piped(),
        );
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout, "", "{args:?}");
    }
}

// Lists: any `…List` kind with `items`, as kubectl reads it.

/// A stream of typed lists: LimitRanges of namespace `shop`, a Deployment
/// and a Pod in it, and a ConfigMap.
const TYPED_LISTS: &str = "\
apiVersion: v1
kind: LimitRangeList
items:
- apiVersion: v1
  kind: LimitRange
  metadata: {name: limits, namespace: shop}
  spec:
    limits:
    - type: Container
      default: {cpu: 700m, memory: 300Mi}
      defaultRequest: {cpu: 70m, memory: 30Mi}
---
apiVersion: apps/v1
kind: DeploymentList
metadata: {resourceVersion: \"1\"}
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: web, namespace: shop}
  spec:
    template:
      spec:
        containers:
        - name: app
          image: example/app:1  # pinned
- null
---
apiVersion: v1
kind: PodList
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: job, namespace: shop}
  spec:
    containers:
    - {name: app, image: example/app:1}
---
apiVersion: v1
kind: ConfigMapList
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: b}}
";

#[test]
fn typed_lists_are_injected_and_uninjected_item_by_item() {
    let run = run(&["-v"], Some(TYPED_LISTS));
    assert_eq!(run.code, 0, "{}", run.stderr);
    // The LimitRangeList of the input applies to the workloads in the other lists.
    assert_eq!(
        run.stderr,
        "limitrange/limits skipped: kind is not injectable\n\
         deployment/web injected\n\
         pod/job injected\n\
         configmap/c skipped: kind is not injectable\n\
         linkerd-init: limits.cpu, limits.memory, requests.cpu, requests.memory from the LimitRange of namespace shop (2 objects)\n\
         linkerd-proxy: limits.cpu, limits.memory, requests.cpu, requests.memory from the LimitRange of namespace shop (2 objects)\n\
         2 injected, 0 unchanged, 2 skipped; 1 of 1 input changed\n"
    );
    let values = common::values(&run.stdout);
    let deployment = &values[1].as_ref().expect("DeploymentList")["items"][0];
    assert_eq!(
        deployment["spec"]["template"]["spec"]["initContainers"][1]["resources"]["limits"]["cpu"],
        "700m"
    );
    assert!(run.stdout.contains("image: example/app:1  # pinned\n"));
    assert!(run.stdout.contains("\n- null\n"), "null items kept");

    let back = common::run(&["uninject"], Some(&run.stdout));
    assert_eq!(back.code, 0, "{}", back.stderr);
    assert_eq!(back.stdout, TYPED_LISTS, "uninject restores the input");
    assert!(
        back.stderr
            .contains("deployment/web uninjected\npod/job uninjected\n"),
        "{}",
        back.stderr
    );
}

#[test]
fn a_typed_list_in_context_applies_to_the_input() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (limits, rest) = TYPED_LISTS.split_once("---\n").expect("two parts");
    std::fs::write(dir.path().join("limits.yaml"), limits).expect("write");
    std::fs::write(dir.path().join("apps.yaml"), rest).expect("write");
    let run = common::run_to(
        &["-f", "apps.yaml", "--context", "limits.yaml"],
        dir.path(),
        "",
        std::process::Stdio::piped(),
        std::process::Stdio::piped(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("deployment/web injected\n")
            && run
                .stderr
                .contains("from the LimitRange of namespace shop (2 objects)\n"),
        "{}",
        run.stderr
    );
}

// Flags: values refused where they are given, errors naming the flag.

#[test]
fn kube_version_takes_only_1_x_with_a_reasonable_minor() {
    for args in [
        &["--kube-version", "2.0", "-f", EXAMPLE][..],
        &["--kube-version", "v0.9", "-f", EXAMPLE][..],
        &["--kube-version", "1.290", "-f", EXAMPLE][..],
        &["admit", "--kube-version", "3.1", "-f", EXAMPLE][..],
        &["admit", "--kube-version", "1.1000", "-f", EXAMPLE][..],
    ] {
        let run = in_repo(args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{args:?}");
        let value = args[args
            .iter()
            .position(|a| *a == "--kube-version")
            .expect("flag")
            + 1];
        assert!(
            run.stderr
                .contains(&format!("'{value}' for '--kube-version"))
                && run.stderr.contains("is not a Kubernetes version"),
            "{args:?}: {}",
            run.stderr
        );
    }
    // A release newer than the tool knows, and the forms kubectl prints.
    for version in ["1.45", "v1.29.3", "1.0"] {
        let run = in_repo(&["-q", "--kube-version", version, "-f", EXAMPLE]);
        assert_eq!(run.code, 0, "{version}: {}", run.stderr);
    }
}

#[test]
fn unreadable_config_and_context_paths_name_their_flag() {
    for (args, expected) in [
        (
            &["--config", "missing.yaml", "-f", EXAMPLE][..],
            "error: --config missing.yaml: no such file or directory\n",
        ),
        (
            &["config", "--config", "missing.yaml"][..],
            "error: --config missing.yaml: no such file or directory\n",
        ),
        (
            &["--config", "testdata", "-f", EXAMPLE][..],
            "error: --config testdata: is a directory\n",
        ),
        (
            &["-f", EXAMPLE, "--context", "no/such/dir"][..],
            "error: --context no/such/dir: no such file or directory\n",
        ),
        (
            &["admit", "-f", EXAMPLE, "--context", "missing.yaml"][..],
            "error: --context missing.yaml: no such file or directory\n",
        ),
    ] {
        let run = in_repo(args);
        assert_eq!(run.code, 2, "{args:?}");
        assert_eq!(run.stderr, expected, "{args:?}");
        assert!(run.stdout.is_empty());
    }
    // The input itself keeps its plain message.
    let input = in_repo(&["-f", "missing.yaml"]);
    assert_eq!(
        input.stderr,
        "error: missing.yaml: no such file or directory\n"
    );
}

#[test]
fn profile_names_are_checked_as_the_flag_is_read() {
    let run = in_repo(&["--profile", "nope", "-f", EXAMPLE]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .starts_with("error: invalid value 'nope' for '--profile <NAME>'\n  [possible values: linkerd, istio]"),
        "{}",
        run.stderr
    );
}

#[test]
fn version_subcommand_prints_what_the_version_flag_prints() {
    let flag = run(&["--version"], None);
    for args in [&["version"][..], &["version", "--help"][..]] {
        let sub = run(args, None);
        assert_eq!(sub.code, 0, "{args:?}: {}", sub.stderr);
        if args.len() == 1 {
            assert_eq!(sub.stdout, flag.stdout);
            assert!(sub.stderr.is_empty());
        } else {
            assert!(
                sub.stdout.contains("kubectl mesh-inject version"),
                "{}",
                sub.stdout
            );
        }
    }
    // A file named `version` is still read, given as a path.
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("version"), example_text()).expect("write");
    let file = common::run_to(
        &["-q", "./version"],
        dir.path(),
        "",
        std::process::Stdio::piped(),
        std::process::Stdio::piped(),
    );
    assert_eq!(file.code, 0, "{}", file.stderr);
    assert!(file.stdout.contains("- name: linkerd-proxy"));
}

#[test]
fn diff_exits_1_with_differences_and_0_without_as_kubectl_diff() {
    let injected = in_repo(&["-q", "-f", EXAMPLE]).stdout;
    let service = "apiVersion: v1\nkind: Service\nmetadata: {name: web}\n";
    for (args, stdin, code) in [
        (&["-q", "--diff", "-f", EXAMPLE][..], "", 1),
        (&["-q", "--diff"][..], injected.as_str(), 0),
        (&["-q", "--diff"][..], service, 0),
        (&["uninject", "-q", "--diff"][..], injected.as_str(), 1),
        (&["uninject", "-q", "--diff", "-f", EXAMPLE][..], "", 0),
        // An error is more than 1, as kubectl diff's are.
        (&["-q", "--diff", "-f", "missing.yaml"][..], "", 2),
    ] {
        let mut cmd = common::command_with(args);
        cmd.current_dir(common::repo())
            .write_stdin(stdin.as_bytes().to_vec());
        let run: common::Run = cmd.output().expect("runs").into();
        assert_eq!(run.code, code, "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout.is_empty(), code != 1, "{args:?}: {}", run.stdout);
    }
}

// Colour: errors, warnings and rejections follow --color and NO_COLOR, as
// the diff does; `auto` colours each stream when it is a terminal.

const BOLD_RED: &str = "\x1b[1m\x1b[31m";
const BOLD_YELLOW: &str = "\x1b[1m\x1b[33m";
const RED: &str = "\x1b[31m";

/// A run the cluster would reject (Pod Security "restricted" and linkerd-init's capabilities).
const REJECTED: [&str; 4] = [
    "-f",
    "testdata/admission/web.yaml",
    "--context",
    "testdata/admission/namespace.yaml",
];

/// `admit` of a workload 1.28 rejects, with a warning under it.
const ADMIT_REJECTED: [&str; 7] = [
    "admit",
    "-f",
    "testdata/admit/native.yaml",
    "--context",
    "testdata/admit/injector.yaml",
    "--kube-version",
    "1.28",
];

/// Run in the repository with `args` and `--color color` (none for `None`),
/// with NO_COLOR set when asked.
fn coloured(args: &[&str], color: Option<&str>, no_color: bool) -> common::Run {
    let mut cmd = common::command_with(args);
    cmd.current_dir(common::repo());
    if let Some(color) = color {
        cmd.args(["--color", color]);
    }
    if no_color {
        cmd.env("NO_COLOR", "1");
    }
    cmd.write_stdin(Vec::new());
    cmd.output().expect("runs").into()
}

#[test]
fn errors_warnings_and_rejections_are_coloured_when_asked() {
    let error = coloured(&["-f", "missing.yaml"], Some("always"), false);
    assert_eq!(error.code, 2);
    assert_eq!(
        error.stderr,
        format!("{BOLD_RED}error:\x1b[0m missing.yaml: no such file or directory\n")
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let warned = warned_file(dir.path());
    let warning = coloured(&["-f", &warned], Some("always"), false);
    assert!(
        warning.stderr.contains(&format!(
            "  {BOLD_YELLOW}warning:\x1b[0m annotation config.linkerd.io/proxy-uid"
        )),
        "{}",
        warning.stderr
    );
    assert!(!warning.stdout.contains('\x1b'), "the manifests stay plain");
    let rejected = coloured(&REJECTED, Some("always"), false);
    assert_eq!(rejected.code, 1);
    assert!(
        rejected
            .stderr
            .contains(&format!("  {RED}rejected: pods \"web-\" is forbidden")),
        "{}",
        rejected.stderr
    );
    assert!(
        rejected.stderr.contains(&format!(
            "{BOLD_RED}error:\x1b[0m the cluster would reject what this writes"
        )) && rejected.stderr.contains(&format!(
            "  {RED}testdata/admission/web.yaml: deployment/web: pods"
        )),
        "{}",
        rejected.stderr
    );
    // With --warn-only the rejection is a warning.
    let warned = coloured(
        &[&REJECTED[..], &["--warn-only"]].concat(),
        Some("always"),
        false,
    );
    assert!(
        warned.stderr.contains(&format!(
            "  {BOLD_YELLOW}warning:\x1b[0m would be rejected: "
        )),
        "{}",
        warned.stderr
    );
    // admit's verdicts, on standard output with -o text, on standard error otherwise.
    let admit = coloured(&ADMIT_REJECTED, Some("always"), false);
    assert_eq!(admit.code, 1);
    assert!(
        admit.stdout.starts_with(&format!(
            "deployment/worker {RED}rejected: Pod \"worker-\" is invalid"
        )) && admit.stdout.contains(&format!(
            "\n  {BOLD_YELLOW}warning:\x1b[0m spec.initContainers"
        )),
        "{}",
        admit.stdout
    );
    let admit_yaml = coloured(
        &[&ADMIT_REJECTED[..], &["-o", "yaml"]].concat(),
        Some("always"),
        false,
    );
    assert!(!admit_yaml.stdout.contains('\x1b'));
    assert!(admit_yaml.stderr.contains(RED), "{}", admit_yaml.stderr);
    // clap's own errors follow --color too.
    let usage = coloured(&["--kube-version", "2.0"], Some("always"), false);
    assert!(usage.stderr.starts_with(BOLD_RED), "{}", usage.stderr);
    // --color always wins over NO_COLOR, as a flag given for this run.
    let flag_wins = coloured(&["-f", "missing.yaml"], Some("always"), true);
    assert!(flag_wins.stderr.starts_with(BOLD_RED));
}

#[test]
fn never_no_color_and_pipes_leave_diagnostics_plain() {
    for (color, no_color) in [
        (Some("never"), false),
        (None, true),
        (None, false),
        (Some("auto"), true),
    ] {
        for args in [
            &["-f", "missing.yaml"][..],
            &["-f", EXAMPLE][..],
            &REJECTED[..],
            &[&REJECTED[..], &["--warn-only"]].concat()[..],
            &ADMIT_REJECTED[..],
            &[&ADMIT_REJECTED[..], &["-o", "yaml"]].concat()[..],
            &["--kube-version", "2.0"][..],
            &["--diff", "-f", EXAMPLE][..],
        ] {
            let run = coloured(args, color, no_color);
            assert!(
                !run.stderr.contains('\x1b') && !run.stdout.contains('\x1b'),
                "{args:?} {color:?} NO_COLOR={no_color}: {}{}",
                run.stdout,
                run.stderr
            );
        }
    }
}

/// `script` runs `command` (a shell command line) on a pseudo-terminal in
/// the repository; what the terminal showed, or `None` without `script`.
fn on_a_terminal(test: &str, command: &str, no_color: bool) -> Option<String> {
    let probe = std::process::Command::new("script")
        .arg("--version")
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        common::skip_test(
            test,
            "script (util-linux) is not installed: no pseudo-terminal",
        );
        return None;
    }
    let mut cmd = std::process::Command::new("script");
    cmd.args(["-q", "-e", "-c", command, "/dev/null"])
        .current_dir(common::repo())
        .env_remove("NO_COLOR")
        .stdin(std::process::Stdio::null());
    if no_color {
        cmd.env("NO_COLOR", "1");
    }
    let out = cmd.output().expect("script runs");
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn auto_colours_each_stream_that_is_a_terminal_unless_no_color() {
    const TEST: &str = "auto_colours_each_stream_that_is_a_terminal_unless_no_color";
    let binary = common::command()
        .get_program()
        .to_string_lossy()
        .into_owned();
    let Some(error) = on_a_terminal(TEST, &format!("{binary} -f missing.yaml"), false) else {
        return;
    };
    assert!(error.starts_with(&format!("{BOLD_RED}error:")), "{error:?}");
    let no_color = on_a_terminal(TEST, &format!("{binary} -f missing.yaml"), true).expect("ran");
    assert!(no_color.starts_with("error: missing.yaml"), "{no_color:?}");
    let never = on_a_terminal(
        TEST,
        &format!("{binary} --color never -f missing.yaml"),
        false,
    )
    .expect("ran");
    assert!(!never.contains('\x1b'), "{never:?}");
    // Standard error on the terminal, the diff into a file: the report is
    // coloured, the diff not; and the other way round.
    let dir = tempfile::tempdir().expect("tempdir");
    let warned = warned_file(dir.path());
    let diff_warned = common::with_anchors(&["--diff", "-f", &warned]).join(" ");
    let file = dir.path().join("out");
    let file = file.display();
    let report =
        on_a_terminal(TEST, &format!("{binary} {diff_warned} > {file}"), false).expect("ran");
    assert!(report.contains(BOLD_YELLOW), "{report:?}");
    let diff = std::fs::read_to_string(dir.path().join("out")).expect("diff");
    assert!(
        diff.starts_with("--- a/") && !diff.contains('\x1b'),
        "{diff:?}"
    );
    let shown =
        on_a_terminal(TEST, &format!("{binary} {diff_warned} 2> {file}"), false).expect("ran");
    assert!(
        shown.contains("\x1b[32m+"),
        "the diff is green on the terminal"
    );
    let report = std::fs::read_to_string(dir.path().join("out")).expect("report");
    assert!(
        report.contains("warning:") && !report.contains('\x1b'),
        "{report:?}"
    );
}

/// A Deployment with an annotation Linkerd ignores (a warning), written in
/// `dir`; its path.
fn warned_file(dir: &std::path::Path) -> String {
    let path = dir.join("warned.yaml");
    let input = deployment_in("apps", "config.linkerd.io/proxy-uid: root", "");
    std::fs::write(&path, input).expect("write");
    path.to_str().expect("a UTF-8 path").to_string()
}

/// A Deployment in `namespace`, with pod annotations and labels.
fn deployment_in(namespace: &str, annotations: &str, labels: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: {namespace}\nspec:\n  selector:\n    matchLabels: {{app: web}}\n  template:\n    metadata:\n      labels: {{app: web{labels}}}\n      annotations: {{{annotations}}}\n    spec:\n      containers:\n      - name: web\n        image: nginx\n"
    )
}

#[test]
fn the_webhooks_scope_decides_what_is_injected() {
    let skipped = |profile: &str, input: &str, reason: &str| {
        let run = run(&["--profile", profile], Some(input));
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(run.stdout, input, "{reason}");
        assert!(run.stderr.contains(reason), "{}", run.stderr);
    };
    skipped(
        "linkerd",
        &deployment_in("kube-system", "", ""),
        "skipped: namespace kube-system: linkerd's webhook never injects there",
    );
    skipped(
        "linkerd",
        &deployment_in("linkerd", "", ""),
        "skipped: namespace linkerd: linkerd's webhook never injects there",
    );
    skipped(
        "linkerd",
        &deployment_in(
            "apps",
            "",
            ", linkerd.io/control-plane-component: destination",
        ),
        "skipped: the pod has the label linkerd.io/control-plane-component",
    );
    skipped(
        "istio",
        &deployment_in("kube-public", "", ""),
        "skipped: namespace kube-public: istio's webhook never injects there",
    );
    // The Namespace object's label and opt-out apply; the pod may opt in.
    let namespace = |meta: &str| {
        format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n{meta}---\n")
    };
    let labelled = namespace("  labels: {config.linkerd.io/admission-webhooks: disabled}\n");
    skipped(
        "linkerd",
        &format!("{labelled}{}", deployment_in("apps", "", "")),
        "namespace apps has the label \"config.linkerd.io/admission-webhooks: disabled\"",
    );
    let disabled = namespace("  annotations: {linkerd.io/inject: disabled}\n");
    skipped(
        "linkerd",
        &format!("{disabled}{}", deployment_in("apps", "", "")),
        "namespace apps has the annotation \"linkerd.io/inject: disabled\"",
    );
    let opted_in = format!(
        "{disabled}{}",
        deployment_in("apps", "linkerd.io/inject: enabled", "")
    );
    let run2 = run(&[], Some(&opted_in));
    assert!(
        run2.stderr.contains("deployment/web injected"),
        "{}",
        run2.stderr
    );
}

#[test]
fn settings_on_the_namespace_are_inherited_and_the_pods_own_win() {
    let namespace = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n  annotations: {config.linkerd.io/proxy-log-level: debug, config.linkerd.io/proxy-uid: \"3000\"}\n---\n";
    let input = format!(
        "{namespace}{}",
        deployment_in("apps", "config.linkerd.io/proxy-uid: \"4000\"", "")
    );
    let out = common::pipe(None, &input);
    assert!(
        out.contains("value: debug,[{headers}]=off,[{request}]=off"),
        "{out}"
    );
    assert!(out.contains("runAsUser: 4000"), "{out}");
    // The same from --context.
    let dir = tempfile::tempdir().expect("tempdir");
    let context = dir.path().join("ns.yaml");
    std::fs::write(&context, namespace).expect("write");
    let run = run(
        &["-q", "--context", context.to_str().expect("path")],
        Some(&deployment_in("apps", "", "")),
    );
    assert!(
        run.stdout.contains("value: debug,[{headers}]"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("runAsUser: 3000"), "{}", run.stdout);
}

/// Linkerd's `linkerd-config` ConfigMap, as `kubectl get cm -o yaml` writes
/// it, with `pem` as its trust anchors.
fn linkerd_config(pem: &str) -> String {
    let pem: String = pem.lines().map(|l| format!("      {l}\n")).collect();
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: linkerd-config\n  namespace: linkerd\ndata:\n  values: |\n    linkerdVersion: edge-26.9.1\n    identityTrustAnchorsPEM: |\n{pem}    proxy:\n      logLevel: debug\n      ports:\n        admin: 9991\n      image:\n        version: \"\"\n    proxyInit:\n      ignoreInboundPorts: \"25\"\n"
    )
}

/// A line of `pem` that tells it from another certificate.
fn pem_line(pem: &str) -> &str {
    pem.lines().nth(2).expect("a line of the certificate")
}

#[test]
fn the_clusters_own_configuration_supplies_the_values() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("linkerd-config.yaml");
    std::fs::write(&config, linkerd_config(common::ANCHOR_A)).expect("write");
    let config = config.to_str().expect("path");
    // The anchors come from the cluster's own ConfigMaps here: no sample ones.
    let workload = deployment_in("apps", "", "");
    let out = common::run_as_given(&["-q", "--context", config], Some(&workload)).stdout;
    assert!(
        out.contains("image: cr.l5d.io/linkerd/proxy:edge-26.9.1"),
        "{out}"
    );
    assert!(out.contains("value: debug,[{headers}]"), "{out}");
    assert!(out.contains("containerPort: 9991"), "{out}");
    assert!(out.contains("- 4190,9991,25\n"), "{out}");
    assert!(out.contains(pem_line(common::ANCHOR_A)), "{out}");
    // The pod's annotation beats the cluster's configuration; a flag beats both.
    let annotated = deployment_in("apps", "config.linkerd.io/proxy-log-level: info", "");
    let out = common::run_as_given(&["-q", "--context", config], Some(&annotated)).stdout;
    assert!(out.contains("value: info,[{headers}]"), "{out}");
    let flagged = common::run_as_given(
        &["-q", "--context", config, "--set", "logLevel=trace"],
        Some(&annotated),
    )
    .stdout;
    assert!(flagged.contains("value: trace,[{headers}]"), "{flagged}");
    // The trust-roots ConfigMap, when there, is the anchors' source.
    let roots = dir.path().join("roots.yaml");
    let roots_pem: String = common::ANCHOR_B
        .lines()
        .map(|l| format!("    {l}\n"))
        .collect();
    std::fs::write(
        &roots,
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: linkerd-identity-trust-roots, namespace: linkerd}}\ndata:\n  ca-bundle.crt: |\n{roots_pem}"),
    )
    .expect("write");
    let out = common::run_as_given(
        &[
            "-q",
            "--context",
            config,
            "--context",
            roots.to_str().expect("path"),
        ],
        Some(&workload),
    )
    .stdout;
    assert!(
        out.contains(pem_line(common::ANCHOR_B)) && !out.contains(pem_line(common::ANCHOR_A)),
        "{out}"
    );
}

#[test]
fn an_annotation_linkerd_cannot_use_is_ignored_with_a_warning() {
    let input = deployment_in("apps", "config.linkerd.io/proxy-uid: root", "");
    let run = run(&[], Some(&input));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("deployment/web injected"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(
            "warning: annotation config.linkerd.io/proxy-uid: expected a whole number of 0 or more, got \"root\": the default is used"
        ),
        "{}",
        run.stderr
    );
    assert!(run.stdout.contains("runAsUser: 2102"), "{}", run.stdout);
}

#[test]
fn the_webhook_writes_inherited_settings_and_exposed_opaque_ports_on_the_pod() {
    let with_port = |annotations: &str| {
        deployment_in("apps", annotations, "").replace(
            "        image: nginx\n",
            "        image: nginx\n        ports: [{containerPort: 8080}, {containerPort: 3306}]\n",
        )
    };
    let out = common::pipe(None, &with_port(""));
    assert!(
        out.contains("config.linkerd.io/opaque-ports: \"3306\""),
        "{out}"
    );
    // The pod's own list stands, and uninject takes out what was added.
    let own = common::pipe(None, &with_port("config.linkerd.io/opaque-ports: \"8080\""));
    assert!(!own.contains("opaque-ports: \"3306\""), "{own}");
    assert_eq!(common::pipe(Some("uninject"), &out), with_port(""));
    // A namespace's setting is written on the pod, as the webhook copies it.
    let namespace = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n  annotations: {config.linkerd.io/proxy-log-level: debug}\n---\n";
    let out = common::pipe(
        None,
        &format!("{namespace}{}", deployment_in("apps", "", "")),
    );
    assert!(
        out.contains("config.linkerd.io/proxy-log-level: debug\n"),
        "{out}"
    );
}

/// Warnings are a kind of note every sink knows: the text report labels
/// them, the JSON report lists them apart from the other notes.
#[test]
fn warnings_are_labelled_in_text_and_apart_in_json() {
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: shop}\nspec:\n  containers: [{name: app, image: app}]\n";
    let args = [
        "--profile",
        "istio",
        "--kube-version",
        "1.27",
        "--native-sidecar",
        "always",
        "--warn-only",
    ];
    let run = common::run_as_given(&args, Some(pod));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("  warning: native sidecars need Kubernetes 1.29 or later"),
        "{}",
        run.stderr
    );
    let mut json_args = args.to_vec();
    json_args.extend(["--report", "json"]);
    let run = common::run_as_given(&json_args, Some(pod));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stderr).expect("JSON");
    assert_eq!(report["apiVersion"], "mesh-inject.io/report/v2");
    let object = &report["inputs"][0]["objects"][0];
    let warnings: Vec<&str> = object["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .filter_map(|w| w.as_str())
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("native sidecars need Kubernetes 1.29 or later")),
        "{warnings:?}"
    );
    let notes = object["notes"].as_array().expect("notes");
    assert!(
        notes
            .iter()
            .all(|n| !n.as_str().unwrap_or("").contains("native sidecars need")),
        "{notes:?}"
    );
}

/// What is written depends on what is injected, never on the tool's own
/// version: a newer tool (or a developer and CI on different versions)
/// leaves manifests as they are.
#[test]
fn output_never_names_the_tools_version() {
    let version = env!("CARGO_PKG_VERSION");
    for profile in ["linkerd", "istio"] {
        for format in ["yaml", "json", "patch"] {
            let run = in_repo(&["--profile", profile, "-o", format, "-f", EXAMPLE]);
            assert_eq!(run.code, 0, "{profile} -o {format}: {}", run.stderr);
            assert!(
                !run.stdout.contains(version),
                "{profile} -o {format} names the tool's version {version}:\n{}",
                run.stdout
            );
        }
    }
}

/// `--check` says why each stale file is stale (not injected, or injected
/// with other settings, and which), and the command that brings them up to
/// date; that command does.
#[test]
fn check_says_what_is_stale_and_how_to_fix_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let old = dir.path().join("old.yaml");
    let bare = dir.path().join("bare.yaml");
    let injected = common::run(
        &["--set", "proxyVersion=edge-26.1.1"],
        Some(&example_text()),
    );
    assert_eq!(injected.code, 0, "{}", injected.stderr);
    std::fs::write(&old, &injected.stdout).expect("write");
    std::fs::write(&bare, example_text()).expect("write");
    let (old, bare) = (old.to_str().expect("utf-8"), bare.to_str().expect("utf-8"));
    let context = common::cluster().display().to_string();
    let check = |extra: &[&str]| {
        let mut args = vec!["--check", "-q", "--context", context.as_str()];
        args.extend(extra);
        let mut cmd = common::command();
        cmd.args(&args);
        let run: common::Run = cmd.output().expect("runs").into();
        run
    };
    let stale = check(&["-f", old, bare]);
    assert_eq!(stale.code, 1, "{}", stale.stderr);
    let lines: Vec<&str> = stale.stderr.lines().collect();
    assert_eq!(lines[0], format!("would inject: {old}"), "{}", stale.stderr);
    assert!(
        lines[1].starts_with("  deployment/web: injected with other settings: ")
            && lines[1].contains("linkerd.io/proxy-version: edge-26.1.1 → "),
        "{}",
        stale.stderr
    );
    assert_eq!(lines[2], format!("would inject: {bare}"));
    assert_eq!(lines[3], "  deployment/web: not injected");
    let fix = lines[4]
        .strip_prefix("fix: kubectl mesh-inject ")
        .expect("a fix line");
    assert_eq!(
        fix,
        format!("--in-place -q --context {context} -f {old} {bare}"),
        "{}",
        stale.stderr
    );
    // The fix, run as printed (the tool is kubectl's plugin).
    let mut cmd = common::command();
    cmd.args(fix.split(' '));
    let fixed: common::Run = cmd.output().expect("runs").into();
    assert_eq!(fixed.code, 0, "{}", fixed.stderr);
    let again = check(&[old, bare]);
    assert_eq!((again.code, again.stderr.as_str()), (0, ""));
}

/// `-R` over a GitOps repository: a Helm chart's templates (not YAML) and
/// a kustomize overlay's patches (they look like Deployments) are left out
/// and reported with why; `--exclude` leaves out what it names, said with
/// -v; the other files are injected.
#[test]
fn a_gitops_repository_is_walked_without_chart_templates_or_kustomize_patches() {
    let dir = tempfile::tempdir().expect("temp dir");
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
    };
    let deployment = example_text();
    write(
        "charts/web/Chart.yaml",
        "apiVersion: v2\nname: web\nversion: 1.0.0\n",
    );
    write(
        "charts/web/templates/deploy.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n",
    );
    write("apps/base/deploy.yaml", &deployment);
    write(
        "apps/overlays/prod/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [../../base]\npatches:\n- path: replicas.yaml\n",
    );
    let patch = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 5\n  template:\n    spec:\n      containers: [{name: app, resources: {limits: {memory: 1Gi}}}]\n";
    write("apps/overlays/prod/replicas.yaml", patch);
    write("apps/legacy/old.yaml", &deployment);
    let root = dir.path().to_str().expect("utf-8");
    let run = in_repo(&["-R", "--in-place", "--exclude", "legacy", "-f", root]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).expect("read");
    assert!(read("apps/base/deploy.yaml").contains("linkerd-proxy"));
    assert_eq!(read("apps/overlays/prod/replicas.yaml"), patch);
    assert_eq!(read("apps/legacy/old.yaml"), deployment);
    let lines: Vec<&str> = run.stderr.lines().collect();
    let line_of = |file: &str| {
        lines
            .iter()
            .find(|l| l.starts_with(&format!("{root}/{file} skipped: ")))
            .copied()
    };
    assert!(
        line_of("charts/web/templates/deploy.yaml")
            .is_some_and(|l| l.contains("a template of the Helm chart in")),
        "{}",
        run.stderr
    );
    assert!(
        line_of("apps/overlays/prod/replicas.yaml").is_some_and(|l| l.contains(&format!(
            "a kustomize patch (listed under patches in {root}/apps/overlays/prod/kustomization.yaml)"
        ))),
        "{}",
        run.stderr
    );
    assert_eq!(line_of("apps/legacy/old.yaml"), None, "{}", run.stderr);
    assert!(
        run.stderr.ends_with("; 3 files left out\n"),
        "{}",
        run.stderr
    );
    let verbose = in_repo(&["-R", "--check", "-v", "--exclude", "legacy", "-f", root]);
    assert!(
        verbose.stderr.contains(&format!(
            "{root}/apps/legacy/old.yaml skipped: excluded by --exclude legacy"
        )),
        "{}",
        verbose.stderr
    );
    // Named one by one from the repository's root, as pre-commit passes
    // them, the same files are left out.
    let mut cmd = common::command_with(&[
        "--check",
        "--exclude",
        "legacy",
        "charts/web/templates/deploy.yaml",
        "apps/overlays/prod/replicas.yaml",
        "apps/legacy/old.yaml",
    ]);
    cmd.current_dir(dir.path());
    let named: common::Run = cmd.output().expect("runs").into();
    assert_eq!(named.code, 0, "{}", named.stderr);
    assert!(
        named.stderr.contains(
            "apps/overlays/prod/replicas.yaml skipped: a kustomize patch (listed under patches in apps/overlays/prod/kustomization.yaml)"
        ),
        "{}",
        named.stderr
    );
    assert!(
        named
            .stderr
            .contains("warning: every input file was left out"),
        "{}",
        named.stderr
    );
}

/// On a terminal, a long run shows how far it has got on standard error,
/// and clears that line before the report; with `--report json` or `-q`,
/// and in a pipe (as every other test runs the tool), never.
#[test]
fn progress_shows_on_a_terminal_only() {
    const TEST: &str = "progress_shows_on_a_terminal_only";
    // util-linux's script gives the run a pseudo-terminal.
    let probe = std::process::Command::new("script")
        .arg("--version")
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        common::skip_test(
            TEST,
            "script (util-linux), which gives a run a terminal, is not installed",
        );
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let input = dir.path().join("many.yaml");
    let many: Vec<String> = (0..200)
        .map(|i| example_text().replace("name: web", &format!("name: web{i}")))
        .collect();
    std::fs::write(&input, many.join("---\n")).expect("write");
    let bin = assert_cmd::cargo::cargo_bin("kubectl-mesh_inject");
    let on_terminal = |extra: &str| {
        let command = format!(
            "{} -f {} --context {} {extra} > /dev/null",
            bin.display(),
            input.display(),
            common::cluster().display()
        );
        let out = std::process::Command::new("script")
            .args(["-qec", &command, "/dev/null"])
            // Shown at once, where a run of a second is needed otherwise.
            .env("MESH_INJECT_PROGRESS_DELAY_MS", "0")
            .output()
            .expect("script runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let shown = on_terminal("");
    // What the line says (how far the run has got) is the unit tests'.
    assert!(shown.starts_with("\rmesh-inject: "), "{shown:?}");
    // Cleared before the report, which follows on a clean line.
    assert!(
        shown.contains("\r\u{1b}[Kdeployment/web0 injected\r\n"),
        "{shown:?}"
    );
    let json = on_terminal("--report json");
    assert!(
        json.starts_with('{') && !json.contains("mesh-inject: "),
        "{json:?}"
    );
    assert_eq!(on_terminal("-q"), "");
}

/// `--diff` names paths as git writes them (no `./` component, no doubled
/// slash), so that `git apply` takes the diff, whichever way the files
/// were named: `-f .`, `-f ./dir/`, `-f dir/x.yaml`.
#[test]
fn diff_paths_are_as_git_writes_them_and_git_apply_takes_them() {
    let git = |dir: &std::path::Path, args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
    };
    if git(&common::repo(), &["--version"]).is_err() {
        common::skip_test("diff_paths_are_as_git_writes_them", "git is not installed");
        return;
    }
    for args in [
        &["-f", "."][..],
        &["-R", "-f", "."][..],
        &["-f", "./dir/"][..],
        &["-f", ".//dir//x.yaml"][..],
        &["-f", "dir/x.yaml"][..],
    ] {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir(dir.path().join("dir")).expect("mkdir");
        std::fs::write(dir.path().join("x.yaml"), example_text()).expect("write");
        std::fs::write(dir.path().join("dir/x.yaml"), example_text()).expect("write");
        let init = git(dir.path(), &["init", "-q"]).expect("git init");
        assert!(init.status.success(), "git init");
        let mut all = vec!["-q", "--diff"];
        all.extend_from_slice(args);
        let run = common::run_to(
            &all,
            dir.path(),
            "",
            std::process::Stdio::piped(),
            std::process::Stdio::piped(),
        );
        assert_eq!(run.code, 1, "{args:?}: {}", run.stderr);
        assert!(!run.stdout.contains("/./"), "{args:?}: {}", run.stdout);
        assert!(!run.stdout.contains("//"), "{args:?}: {}", run.stdout);
        std::fs::write(dir.path().join("the.diff"), &run.stdout).expect("write");
        let check = git(dir.path(), &["apply", "--check", "the.diff"]).expect("git apply");
        assert!(
            check.status.success(),
            "{args:?}: git apply --check refuses the diff: {}\n{}",
            String::from_utf8_lossy(&check.stderr),
            run.stdout
        );
    }
}

/// uninject without --profile finds the mesh that injected each file: from
/// the tool's record, else from the mesh's own marker, and takes its
/// profile; a run over files of both meshes uninjects each by its own.
#[test]
fn uninject_finds_the_mesh_from_the_record_or_the_marker() {
    let original = example_text();
    let istio = run(&["-q", "--profile", "istio"], Some(&original));
    assert_eq!(istio.code, 0, "{}", istio.stderr);
    let back = run(&["uninject"], Some(&istio.stdout));
    assert_eq!(back.code, 0, "{}", back.stderr);
    assert_eq!(back.stdout, original, "{}", back.stderr);
    assert!(
        back.stderr.contains("deployment/web uninjected"),
        "{}",
        back.stderr
    );
    // Without the record: Istio's own status annotation says it.
    let unrecorded: String = istio
        .stdout
        .lines()
        .filter(|line| !line.contains("mesh-inject.io/added"))
        .map(|line| format!("{line}\n"))
        .collect();
    let back = run(&["uninject", "-q"], Some(&unrecorded));
    assert_eq!(back.code, 0, "{}", back.stderr);
    assert!(!back.stdout.contains("istio-proxy"), "{}", back.stdout);
    // Files of both meshes in one run.
    let linkerd = common::pipe(None, &original);
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("a.yaml"), &istio.stdout).expect("write");
    std::fs::write(dir.path().join("b.yaml"), &linkerd).expect("write");
    let both = run(
        &["uninject", "-q", "-f", dir.path().to_str().expect("path")],
        None,
    );
    assert_eq!(both.code, 0, "{}", both.stderr);
    assert_eq!(both.stdout, format!("{original}---\n{original}"));
    // One stream holding workloads of both meshes: each by its own.
    let mixed = format!("{}---\n{}", istio.stdout, linkerd);
    let back = run(&["uninject"], Some(&mixed));
    assert_eq!(back.code, 0, "{}", back.stderr);
    assert_eq!(
        back.stdout,
        format!("{original}---\n{original}"),
        "{}",
        back.stderr
    );
}

/// A file injected with a profile of the user's own (`--config`) is not
/// uninjected as an embedded profile's, whatever marker it carries: without
/// the profile, uninject stops (status 2) and asks for it; with it, the file
/// comes back as it was.
#[test]
fn uninject_asks_for_a_profile_of_ones_own() {
    let original = example_text();
    let config = run(&["config"], None);
    assert_eq!(config.code, 0, "{}", config.stderr);
    let own = config.stdout.replace(
        "proxy:\n  name: linkerd-proxy\n",
        "proxy:\n  name: mesh-proxy\n",
    );
    assert_ne!(own, config.stdout);
    let dir = tempfile::tempdir().expect("temp dir");
    let profile = dir.path().join("own.yaml");
    std::fs::write(&profile, &own).expect("write");
    let profile = profile.to_str().expect("path");
    let injected = run(&["-q", "--config", profile], Some(&original));
    assert_eq!(injected.code, 0, "{}", injected.stderr);
    assert!(
        injected.stdout.contains("name: mesh-proxy"),
        "{}",
        injected.stdout
    );
    let without = run(&["uninject"], Some(&injected.stdout));
    assert_eq!(without.code, 2, "{}", without.stdout);
    assert!(
        without.stderr.contains("mesh-proxy") && without.stderr.contains("--config FILE"),
        "{}",
        without.stderr
    );
    assert_eq!(without.stdout, "");
    let with = run(&["uninject", "--config", profile], Some(&injected.stdout));
    assert_eq!(with.code, 0, "{}", with.stderr);
    assert_eq!(with.stdout, original);
}

/// `--check` with nothing to check is a mistake (a pipe from a command
/// that printed nothing, a forgotten -f): status 2, "no input".
#[test]
fn check_with_no_input_exits_2() {
    for stdin in ["", "\n"] {
        let run = run(&["--check"], Some(stdin));
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert!(run.stderr.contains("no input"), "{}", run.stderr);
        assert!(run.stdout.is_empty());
    }
    let run = run(&["--check", "-f", "-"], Some(""));
    assert_eq!(run.code, 2, "{}", run.stderr);
}

/// A workload the webhook would inject that the tool cannot edit (its pod
/// template shared through an anchor) has no proxy: `--check` fails on it,
/// naming it.
#[test]
fn check_fails_on_a_workload_left_uninjected_because_it_cannot_be_edited() {
    let shared = "apiVersion: v1\nkind: List\nitems:\n\
        - apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: a}\n  spec:\n\
        \x20   selector: {matchLabels: {app: a}}\n    template: &pod\n\
        \x20     metadata: {labels: {app: a}}\n      spec:\n\
        \x20       containers: [{name: app, image: app:1}]\n\
        - apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: b}\n  spec:\n\
        \x20   selector: {matchLabels: {app: a}}\n    template: *pod\n";
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("shared.yaml");
    std::fs::write(&path, shared).expect("write");
    let path = path.to_str().expect("path");
    let check = run(&["--check", "-f", path], None);
    assert_eq!(check.code, 1, "{}", check.stderr);
    assert!(
        check.stderr.contains(&format!("would inject: {path}")),
        "{}",
        check.stderr
    );
    assert!(check.stderr.contains("deployment/a"), "{}", check.stderr);
    assert!(check.stderr.contains("deployment/b"), "{}", check.stderr);
    assert!(
        check.stderr.contains("cannot be edited"),
        "{}",
        check.stderr
    );
    // Without --check the run writes the input as it is, as before.
    let plain = run(&["-q", "-f", path], None);
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    assert_eq!(plain.stdout, shared);
}

/// An unknown --set name is answered with the closest the profile has,
/// when one is close enough (by edit distance); a profile a KRM function's
/// config names alike. A name close to none gets no guess.
#[test]
fn unknown_names_get_a_did_you_mean() {
    for (given, meant) in [
        ("proxyVersoin", "proxyVersion"),
        ("proxyversion", "proxyVersion"),
        ("proxyUi", "proxyUID"),
        ("logLevle", "logLevel"),
    ] {
        let run = common::run(&["--set", &format!("{given}=1")], Some(&example_text()));
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert!(
            run.stderr.contains(&format!(
                "unknown value \"{given}\" in --set; did you mean \"{meant}\"?"
            )),
            "{given}: {}",
            run.stderr
        );
    }
    let far = common::run(&["--set", "zzzzqqqq=1"], Some(&example_text()));
    assert_eq!(far.code, 2, "{}", far.stderr);
    assert!(!far.stderr.contains("did you mean"), "{}", far.stderr);
    let istio = common::run(
        &["--profile", "istio", "--set", "proxyImag=x"],
        Some(&example_text()),
    );
    assert_eq!(istio.code, 2, "{}", istio.stderr);
    assert!(istio.stderr.contains("did you mean"), "{}", istio.stderr);
    // A KRM function's profile: the same tip.
    let krm = common::run(
        &[],
        Some(
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n\
             functionConfig: {apiVersion: v1, kind: ConfigMap, metadata: {name: f}, data: {profile: istoi}}\n",
        ),
    );
    assert_eq!(krm.code, 2, "{}", krm.stderr);
    assert!(
        krm.stderr.contains("a similar value exists: 'istio'"),
        "{}",
        krm.stderr
    );
    // --profile: clap's own tip.
    let profile = common::run(&["--profile", "istoi"], Some(&example_text()));
    assert_eq!(profile.code, 2, "{}", profile.stderr);
    assert!(
        profile.stderr.contains("a similar value exists: 'istio'"),
        "{}",
        profile.stderr
    );
}

/// A file named with -f is read, even when a kustomization above it lists
/// it as a patch: the skip is for what a directory walk finds (and for
/// files passed without -f, as pre-commit passes them), never for a file
/// the user names, which would vanish from a pipe.
#[test]
fn a_file_named_with_f_is_never_dropped_as_a_kustomize_patch() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join("dir")).expect("mkdir");
    std::fs::write(
        dir.path().join("dir/kustomization.yaml"),
        "resources: [deploy.yaml]\npatches: [patch.yaml]\n",
    )
    .expect("write");
    std::fs::write(dir.path().join("dir/patch.yaml"), example_text()).expect("write");
    let stdout = std::process::Stdio::piped;
    let named = common::run_to(
        &["-f", "dir/patch.yaml"],
        dir.path(),
        "",
        stdout(),
        stdout(),
    );
    assert_eq!(named.code, 0, "{}", named.stderr);
    assert!(named.stdout.contains("linkerd-proxy"), "{}", named.stderr);
    assert!(
        !named.stderr.contains("skipped: a kustomize patch"),
        "{}",
        named.stderr
    );
    assert!(
        named.stderr.contains(
            "dir/patch.yaml is a kustomize patch (listed under patches in dir/kustomization.yaml)"
        ) && named.stderr.contains("read as it was named with -f"),
        "{}",
        named.stderr
    );
    // Found in a directory, or passed without -f: left out, as before.
    for args in [&["-f", "dir"][..], &["dir/patch.yaml"][..]] {
        let left = common::run_to(args, dir.path(), "", stdout(), stdout());
        assert!(
            left.stderr
                .contains("dir/patch.yaml skipped: a kustomize patch"),
            "{args:?}: {}",
            left.stderr
        );
        assert!(!left.stdout.contains("linkerd-proxy"), "{args:?}");
    }
}

/// `--exclude` takes the glob syntax of ripgrep and fd: alternatives in
/// braces and a pattern of many stars (matched in linear time) leave out
/// what they name, and the rest is injected.
#[test]
fn exclude_takes_braces_and_many_stars() {
    let dir = tempfile::tempdir().expect("temp dir");
    for name in [
        "apps/web.yaml",
        "apps/api.yaml",
        "apps/jobs.yaml",
        "legacy/old.yaml",
    ] {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, example_text()).expect("write");
    }
    let root = dir.path().to_str().expect("utf-8");
    let context = common::cluster().display().to_string();
    let stars = "*a".repeat(30) + "b";
    let args = [
        "-R",
        "--check",
        "-v",
        "--context",
        &context,
        "-f",
        root,
        "--exclude",
        "apps/{web,api}.yaml",
        "--exclude",
        "legacy",
        "--exclude",
        &stars,
    ];
    let run = common::run(&args, None);
    assert_eq!(
        run.code, 1,
        "only jobs.yaml is checked, and it is stale: {}",
        run.stderr
    );
    for left_out in ["apps/web.yaml", "apps/api.yaml", "legacy/old.yaml"] {
        assert!(
            run.stderr
                .contains(&format!("{root}/{left_out} skipped: excluded by --exclude")),
            "{left_out}: {}",
            run.stderr
        );
    }
    assert!(!run.stderr.contains("jobs.yaml skipped"), "{}", run.stderr);
    let bad = common::run(&["--exclude", "apps/{web", "-f", root], None);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("apps/{web"), "{}", bad.stderr);
}

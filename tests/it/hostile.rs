//! Bad and odd inputs, run through the real binary: each either works (the
//! exact effect is checked) or fails with exit 2, a message naming the file,
//! the document and line:column, and nothing on standard output. The cases
//! and their outcomes are listed in `testdata/hostile/README.md`; the small
//! inputs live there, the large or unusual ones are made here in a temp dir.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::Run;
use serde_json::{Value, json};

fn hostile(name: &str) -> PathBuf {
    common::testdata(&format!("hostile/{name}"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).expect("read")
}

/// Run on the files `paths` (with `-f`), `extra` flags first.
fn run_on(extra: &[&str], paths: &[&Path]) -> Run {
    let mut args: Vec<String> = extra.iter().map(ToString::to_string).collect();
    for path in paths {
        args.push("-f".into());
        args.push(path.to_str().expect("utf-8 path").into());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    common::run(&args, None)
}

/// Exit 2, nothing on stdout, and `error: FILE: document D, line L:C: MESSAGE`
/// first on stderr, with the offending line shown under it.
fn assert_refused(run: &Run, path: &Path, at: (usize, usize, usize), message: &str) {
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stdout.is_empty(), "nothing on stdout: {:?}", run.stdout);
    let (document, line, column) = at;
    let expected = format!(
        "error: {}: document {document}, line {line}:{column}: {message}",
        path.display()
    );
    assert_eq!(run.stderr.lines().next(), Some(expected.as_str()));
    let snippet = format!("\n{line} | ");
    assert!(run.stderr.contains(&snippet), "a snippet: {}", run.stderr);
}

/// [`assert_refused`] with `--report json`: the error as one JSON document on stderr.
fn assert_refused_as_json(run: &Run, path: &Path, at: (usize, usize, usize), message: &str) {
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stdout.is_empty(), "nothing on stdout: {:?}", run.stdout);
    let (document, line, column) = at;
    let report: Value = serde_json::from_str(&run.stderr).expect("one JSON document");
    let file = path.display().to_string();
    assert_eq!(
        report["error"],
        json!({
            "message": format!("{file}: document {document}, line {line}:{column}: {message}"),
            "file": file,
            "document": document,
            "line": line,
            "column": column,
        })
    );
}

/// Exit 2, nothing on stdout, and `error: MESSAGE` as the whole of stderr.
fn assert_fails(run: &Run, message: &str) {
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stdout.is_empty(), "nothing on stdout: {:?}", run.stdout);
    assert_eq!(run.stderr, format!("error: {message}\n"));
}

/// Exit 0, the output byte-identical to the input, and `line` in the report.
fn assert_passes_through(name: &str, line: &str) {
    let path = hostile(name);
    let run = run_on(&["-v"], &[&path]);
    assert_eq!(run.code, 0, "{name}: {}", run.stderr);
    assert_eq!(run.stdout, read(&path), "{name} comes out as it went in");
    assert!(
        run.stderr.lines().any(|l| l == line),
        "{name}: {line:?} in {}",
        run.stderr
    );
}

/// Injected quietly; expects success.
fn injected(path: &Path) -> String {
    let run = run_on(&["-q"], &[path]);
    assert_eq!(run.code, 0, "{}: {}", path.display(), run.stderr);
    run.stdout
}

/// The lines of `input` all appear in `output`, in order: it only added lines.
fn only_adds_lines(input: &str, output: &str) -> bool {
    let mut out = output.split_inclusive('\n');
    input
        .split_inclusive('\n')
        .all(|line| out.any(|o| o == line))
}

/// The pod spec of a document value (a Pod or a workload with a template).
fn pod_spec(value: &Value) -> &Value {
    value
        .pointer("/spec/template/spec")
        .unwrap_or_else(|| &value["spec"])
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|c| c["name"].as_str().unwrap_or(""))
        .collect()
}

fn has_proxy(value: &Value) -> bool {
    names(&pod_spec(value)["initContainers"]).contains(&"linkerd-proxy")
}

// --- malformed YAML: exit 2, positioned ---

#[test]
fn unclosed_quote() {
    let path = hostile("unclosed-quote.yaml");
    let run = run_on(&[], &[&path]);
    assert_refused(
        &run,
        &path,
        (1, 4, 9),
        "while scanning a quoted scalar, found unexpected end of stream",
    );
}

#[test]
fn bad_indentation() {
    let path = hostile("bad-indentation.yaml");
    let run = run_on(&[], &[&path]);
    assert_refused(
        &run,
        &path,
        (1, 5, 13),
        "mapping values are not allowed in this context",
    );
}

#[test]
fn tab_indentation() {
    let path = hostile("tab-indentation.yaml");
    let run = run_on(&[], &[&path]);
    assert_refused(
        &run,
        &path,
        (1, 4, 2),
        "tabs disallowed within this context (block indentation)",
    );
}

#[test]
fn duplicate_keys_are_refused_as_kubectl_refuses_them() {
    let path = hostile("duplicate-keys.yaml");
    let run = run_on(&[], &[&path]);
    assert_refused(
        &run,
        &path,
        (2, 16, 9),
        "mapping key \"image\" already defined at line 15",
    );
}

#[test]
fn invalid_utf8() {
    let path = hostile("invalid-utf8.yaml");
    let run = run_on(&[], &[&path]);
    assert_refused(
        &run,
        &path,
        (2, 9, 12),
        "not valid UTF-8 (byte 107 of the file)",
    );
}

#[test]
fn a_bad_file_among_good_ones_writes_nothing_to_stdout() {
    let good = hostile("anchors-merge.yaml");
    let bad = hostile("tab-indentation.yaml");
    let run = run_on(&[], &[&good, &bad]);
    assert_refused(
        &run,
        &bad,
        (1, 4, 2),
        "tabs disallowed within this context (block indentation)",
    );
}

// --- valid but unusual YAML: works, exactly ---

#[test]
fn a_byte_order_mark_is_kept() {
    let path = hostile("bom.yaml");
    let input = read(&path);
    let out = injected(&path);
    let without = input.strip_prefix('\u{feff}').expect("the file has a BOM");
    let plain = common::pipe(None, without);
    assert_eq!(out, format!("\u{feff}{plain}"));
    assert!(has_proxy(common::values(&out)[0].as_ref().expect("doc")));
}

#[test]
fn crlf_line_endings_are_kept_on_every_line() {
    let path = hostile("crlf.yaml");
    let input = read(&path);
    let out = injected(&path);
    assert!(
        !out.replace("\r\n", "").contains('\n'),
        "every line ends in CRLF"
    );
    assert_eq!(
        out,
        common::pipe(None, &input.replace("\r\n", "\n")).replace('\n', "\r\n")
    );
    assert!(out.starts_with("# a file written on Windows\r\n"));
}

#[test]
fn directives_and_document_ends_are_kept() {
    let path = hostile("directives.yaml");
    let input = read(&path);
    let out = injected(&path);
    assert!(out.starts_with("%YAML 1.1\n---\napiVersion: v1\n"), "{out}");
    // The ConfigMap, its directives and both `...` come out as they were.
    let tail = &input[input.find("...\n%YAML 1.2").expect("second part")..];
    assert!(out.ends_with(tail), "{out}");
    assert!(only_adds_lines(&input, &out));
    let values = common::values(&out);
    assert!(has_proxy(values[0].as_ref().expect("pod")));
    assert_eq!(values[1].as_ref().expect("cm")["data"]["mode"], json!("on"));
}

#[test]
fn tags_are_kept_and_read_as_tagged() {
    let path = hostile("tags.yaml");
    let input = read(&path);
    let run = run_on(&[], &[&path]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.starts_with("pod/0755 injected\n"),
        "{}",
        run.stderr
    );
    assert!(only_adds_lines(&input, &run.stdout));
    let value = common::values(&run.stdout)[0].clone().expect("pod");
    assert_eq!(value["metadata"]["name"], json!("0755"));
    assert_eq!(value["metadata"]["labels"]["version"], json!("1.10"));
    assert_eq!(
        value["spec"]["containers"][0]["ports"][0]["containerPort"],
        json!(8080)
    );
    assert!(has_proxy(&value));
}

/// A value inject rewrites (the grace period, raised for the proxy's wait
/// before exit) keeps the tag and anchor written before it, and uninject
/// gives the input back byte for byte.
#[test]
fn a_rewritten_value_keeps_its_tag_and_anchor() {
    let input = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  terminationGracePeriodSeconds: !!int &grace 1\n  containers:\n  - name: web\n    image: nginx\n";
    let run = common::run(
        &[
            "-q",
            "--set",
            "waitBeforeExitSeconds=10",
            "--native-sidecar",
            "never",
        ],
        Some(input),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("\n  terminationGracePeriodSeconds: !!int &grace 20\n"),
        "{}",
        run.stdout
    );
    assert_eq!(common::pipe(Some("uninject"), &run.stdout), input);
}

#[test]
fn anchors_aliases_and_merge_keys_in_a_pod_template_are_kept() {
    let path = hostile("anchors-merge.yaml");
    let input = read(&path);
    let out = injected(&path);
    for kept in [
        "    matchLabels: &labels\n",
        "      - &app\n",
        "        <<: &defaults\n",
        "      - <<: *defaults\n",
    ] {
        assert!(out.contains(kept), "{kept:?} kept:\n{out}");
    }
    // The alias that receives labels becomes a merge over it, so the
    // selector it shares them with does not change.
    assert!(
        out.contains("      labels: {<<: *labels, linkerd.io/control-plane-ns: linkerd,"),
        "{out}"
    );
    let value = common::values(&out)[0].clone().expect("deployment");
    let before = common::values(&input)[0].clone().expect("deployment");
    assert_eq!(value["spec"]["selector"], before["spec"]["selector"]);
    assert_eq!(
        value["spec"]["template"]["metadata"]["labels"]["app"],
        "web"
    );
    let spec = pod_spec(&value);
    assert_eq!(spec["containers"], pod_spec(&before)["containers"]);
    assert_eq!(spec["containers"][1]["image"], "nginx:1.27");
    assert!(has_proxy(&value));
    // And it comes out again as it went in.
    assert_eq!(common::pipe(Some("uninject"), &out), input);
}

#[test]
fn a_pod_with_generate_name_is_injected_and_reported_by_it() {
    let path = hostile("generate-name.yaml");
    let input = read(&path);
    let run = run_on(&[], &[&path]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.starts_with("pod/web- injected\n"),
        "{}",
        run.stderr
    );
    assert!(only_adds_lines(&input, &run.stdout));
    let value = common::values(&run.stdout)[0].clone().expect("pod");
    assert_eq!(value["metadata"]["generateName"], "web-");
    assert!(value["metadata"].get("name").is_none());
    assert!(has_proxy(&value));
}

// --- not objects, or not workloads this tool can inject: kept as they are ---

#[test]
fn a_scalar_document_passes_through() {
    assert_passes_through(
        "scalar-document.yaml",
        "document 1 skipped: not a Kubernetes object",
    );
}

#[test]
fn a_list_document_passes_through() {
    assert_passes_through(
        "list-document.yaml",
        "document 1 skipped: not a Kubernetes object",
    );
}

#[test]
fn kind_missing_passes_through() {
    assert_passes_through(
        "kind-missing.yaml",
        "document 1 skipped: document has no kind",
    );
}

#[test]
fn kind_not_a_string_passes_through() {
    assert_passes_through(
        "kind-not-string.yaml",
        "document 1 skipped: kind is not a string",
    );
}

#[test]
fn containers_not_a_list_passes_through() {
    assert_passes_through(
        "containers-not-list.yaml",
        "deployment/web skipped: containers in spec.template is not a list",
    );
}

#[test]
fn a_workload_without_a_pod_template_passes_through() {
    assert_passes_through(
        "no-pod-template.yaml",
        "deployment/web skipped: no pod template at spec.template",
    );
}

#[test]
fn empty_and_comment_only_files_pass_through() {
    for name in ["empty.yaml", "comment-only.yaml"] {
        assert_passes_through(
            name,
            "0 injected, 0 unchanged, 0 skipped; 0 of 1 input changed",
        );
    }
}

#[test]
fn a_container_without_a_name_is_refused_as_the_apiserver_refuses_it() {
    // Refused before injection too: the injection does not cause it, so it
    // is reported and the output written.
    let path = hostile("container-without-name.yaml");
    let run = run_on(&[], &[&path]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("linkerd-proxy"), "{}", run.stdout);
    assert!(
        run.stderr.contains(
            "\n  warning: rejected before injection too: Pod \"web\" is invalid: spec.containers[0].name: Required value\n"
        ),
        "{}",
        run.stderr
    );
    // A custom resource's controller names its containers (Knative's
    // `user-container`): no refusal there.
    let knative = "apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: hello}\n\
                   spec:\n  template:\n    spec:\n      containers: [{image: hello:1}]\n";
    let run = common::run(&[], Some(knative));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.starts_with("service/hello injected\n"),
        "{}",
        run.stderr
    );
}

// --- large and generated inputs ---

#[test]
fn a_50_mb_document_is_injected_and_kept_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("big.yaml");
    let head = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: big\nspec:\n  \
                template:\n    metadata:\n      annotations:\n        blob: |\n";
    let tail = "    spec:\n      containers:\n      - name: app\n        image: nginx\n";
    let line = format!("          {}\n", "x".repeat(89));
    let lines = (50 * 1024 * 1024 - head.len() - tail.len()) / line.len();
    let mut text = String::with_capacity(50 * 1024 * 1024 + line.len());
    text.push_str(head);
    for _ in 0..lines {
        text.push_str(&line);
    }
    text.push_str(tail);
    assert!(text.len() > 50 * 1024 * 1024 - line.len());
    std::fs::write(&path, &text).expect("write");
    let started = Instant::now();
    let run = run_on(&["-q"], &[&path]);
    eprintln!(
        "{} MB injected in {:.1?}",
        text.len() >> 20,
        started.elapsed()
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Everything up to the end of the blob is as it was; the proxy follows.
    let blob_end = text.len() - tail.len();
    assert!(run.stdout.starts_with(&text[..blob_end]));
    assert_eq!(run.stdout.matches("- name: linkerd-proxy\n").count(), 1);
    assert!(only_adds_lines(&text[blob_end..], &run.stdout[blob_end..]));
}

/// A "billion laughs": nine aliases of nine aliases … of nine strings.
fn alias_bomb(indent: &str) -> String {
    let mut text = format!("{indent}a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    let mut previous = 'a';
    for name in 'b'..='j' {
        let items = vec![format!("*{previous}"); 9].join(", ");
        text.push_str(&format!("{indent}{name}: &{name} [{items}]\n"));
        previous = name;
    }
    text
}

#[test]
fn an_alias_bomb_is_refused_quickly_in_bounded_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config_map = dir.path().join("configmap.yaml");
    std::fs::write(
        &config_map,
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\ndata:\n{}",
            alias_bomb("  ")
        ),
    )
    .expect("write");
    let deployment = dir.path().join("deployment.yaml");
    std::fs::write(
        &deployment,
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: lol\nspec:\n  template:\n    \
             spec:\n      containers:\n      - name: app\n        image: nginx\n        lol:\n{}",
            alias_bomb("          ")
        ),
    )
    .expect("write");
    let binary = assert_cmd::cargo::cargo_bin("kubectl-mesh_inject");
    for (path, line, column) in [(&config_map, 12, 10), (&deployment, 18, 18)] {
        // Expanding it would need billions of nodes: under a 1 GiB address
        // space limit the run could only end in an allocation failure.
        let started = Instant::now();
        let output = Command::new("sh")
            .arg("-c")
            .arg("ulimit -v 1048576 && exec \"$0\" -f \"$1\"")
            .arg(&binary)
            .arg(path)
            .stdin(Stdio::null())
            .output()
            .expect("runs");
        eprintln!("{}: refused in {:.1?}", path.display(), started.elapsed());
        let run = Run::from(output);
        assert_refused(
            &run,
            path,
            (1, line, column),
            "aliases expand to more than 1000000 nodes (an alias bomb?)",
        );
    }
}

/// Run the binary with `args` under an address space limit of 1 GB
/// (`ulimit -v`), standard input from `/dev/null`: a run that expanded
/// gigabytes could only end in an allocation failure (exit 134), not in
/// the refusal the tests look for.
fn run_in_1_gb(args: &[&str]) -> Run {
    piped_in_1_gb("true", args)
}

/// [`run_in_1_gb`], standard input from the shell command `from` (`yes`).
fn piped_in_1_gb(from: &str, args: &[&str]) -> Run {
    let binary = assert_cmd::cargo::cargo_bin("kubectl-mesh_inject");
    let output = Command::new("bash")
        .arg("-c")
        .arg(format!("ulimit -v 1000000 && {from} | \"$@\""))
        .arg("bash")
        .arg(&binary)
        .args(common::with_anchors(args))
        .stdin(Stdio::null())
        .output()
        .expect("runs");
    Run::from(output)
}

/// A Deployment with "laughs" that take bytes rather than nodes in its
/// container: a kilobyte string, a list of `tens` of it, and `lists`
/// aliases of that list (a 1,000-by-1,000 one stands for 1 GB written out,
/// in 4 kB of text). Every output builds the workload's value: without the
/// limits, each run below ends in an allocation failure (exit 134).
fn byte_bomb(name: &str, tens: usize, lists: usize) -> String {
    let list = |alias: &str, count: usize| vec![alias; count].join(", ");
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  template:\n    \
         spec:\n      containers:\n      - name: app\n        image: nginx\n        lol:\n          \
         a: &a \"{}\"\n          b: &b [{}]\n          c: [{}]\n",
        "x".repeat(1000),
        list("*a", tens),
        list("*b", lists)
    )
}

#[test]
fn aliases_that_stand_for_gigabytes_are_refused_in_every_output_format_in_bounded_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("laughs.yaml");
    std::fs::write(&path, byte_bomb("laughs", 1000, 1000)).expect("write");
    let file = path.to_str().expect("a UTF-8 path");
    // An alias of b stands for 1 MB (with the indentation -o json and
    // kubectl's block style give each line): the 32nd passes 32 MiB.
    let message = "aliases expand to more than 32 MiB written out (an alias bomb?)";
    for args in [
        vec!["-f", file],
        vec!["-f", file, "-o", "json"],
        vec!["-f", file, "-o", "patch"],
        vec!["-f", file, "--diff"],
        vec!["-f", file, "--report", "json"],
        vec!["admit", "-f", file],
        vec!["admit", "-f", file, "-o", "json"],
    ] {
        let run = run_in_1_gb(&args);
        if args.contains(&"--report") {
            assert_refused_as_json(&run, &path, (1, 14, 139), message);
        } else {
            assert_refused(&run, &path, (1, 14, 139), message);
        }
    }
}

#[test]
fn the_aliases_of_many_documents_are_refused_together() {
    // Each document's aliases stand for 10 MB, under the limit of one; 100
    // of them would hold 1 GB of values for -o json.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("many.yaml");
    let documents: Vec<String> = (0..100)
        .map(|i| byte_bomb(&format!("laughs-{i}"), 100, 100))
        .collect();
    std::fs::write(&path, documents.join("---\n")).expect("write");
    let file = path.to_str().expect("a UTF-8 path");
    let message = "the aliases of this input's documents expand to more than 32 MiB written out \
                   in all (an alias bomb?)";
    for args in [
        vec!["-f", file, "-o", "json"],
        vec!["-f", file, "-o", "patch"],
        vec!["admit", "-f", file, "-o", "yaml"],
    ] {
        let run = run_in_1_gb(&args);
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert!(run.stdout.is_empty(), "nothing on stdout");
        let first = run.stderr.lines().next().unwrap_or_default();
        assert!(
            first.starts_with(&format!("error: {file}: document ")) && first.ends_with(message),
            "{first}"
        );
    }
    // Files read together count together too: three are taken, four are not
    // (four files: a file named again is read once).
    let files: Vec<String> = (0..4)
        .map(|i| {
            let path = dir.path().join(format!("one-{i}.yaml"));
            std::fs::write(&path, byte_bomb("laughs", 100, 100)).expect("write");
            path.to_str().expect("a UTF-8 path").to_string()
        })
        .collect();
    let args = |count: usize| -> Vec<&str> {
        let mut args = vec!["-q", "-o", "json"];
        for file in files.iter().take(count) {
            args.extend(["-f", file.as_str()]);
        }
        args
    };
    assert_eq!(run_in_1_gb(&args(3)).code, 0);
    let run = run_in_1_gb(&args(4));
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains(message), "{}", run.stderr);
    // The same file named four times is read once, and taken.
    let first = files.first().map(String::as_str).unwrap_or_default();
    let same = [
        "-q", "-o", "json", "-f", first, "-f", first, "-f", first, "-f", first,
    ];
    assert_eq!(run_in_1_gb(&same).code, 0);
}

#[test]
fn nesting_100000_deep_is_refused_at_the_limit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let block = dir.path().join("block.yaml");
    std::fs::write(&block, format!("{}x\n", "- ".repeat(100_000))).expect("write");
    let run = run_on(&[], &[&block]);
    assert_refused(&run, &block, (1, 1, 1025), "nesting deeper than 512 levels");
    let flow = dir.path().join("flow.yaml");
    let text = format!("a: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
    std::fs::write(&flow, text).expect("write");
    let run = run_on(&[], &[&flow]);
    assert_refused(
        &run,
        &flow,
        (1, 1, 259),
        "flow collections nested too deep (recursion limit exceeded)",
    );
    let maps = dir.path().join("maps.yaml");
    let text = format!("{}1{}\n", "{a: ".repeat(100_000), "}".repeat(100_000));
    std::fs::write(&maps, text).expect("write");
    let run = run_on(&[], &[&maps]);
    assert_refused(
        &run,
        &maps,
        (1, 1, 1021),
        "flow collections nested too deep (recursion limit exceeded)",
    );
}

#[test]
fn nesting_just_under_the_limit_is_injected_rendered_and_dropped_on_worker_threads() {
    // 100 workloads (planned on several threads) in over 1 MB (parsed on
    // several threads), each with a list nested 500 deep in its pod: every
    // stage that walks or drops the tree meets the depth, off the main thread.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("deep.yaml");
    let padding = format!("# {}\n", "p".repeat(10_000));
    let deep = format!("        deep:\n        {}x\n", "- ".repeat(500));
    let text: String = (0..100)
        .map(|i| {
            format!(
                "---\n{padding}apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: deep-{i}\n\
                 spec:\n  template:\n    spec:\n      containers:\n      - name: app\n        \
                 image: nginx\n{deep}"
            )
        })
        .collect();
    assert!(text.len() > 1 << 20);
    std::fs::write(&path, &text).expect("write");
    let out = injected(&path);
    assert_eq!(out.matches("- name: linkerd-proxy\n").count(), 100);
    assert_eq!(out.matches(&deep).count(), 100, "the deep lists are kept");
    let diff = run_on(&["-q", "--diff"], &[&path]);
    assert_eq!(diff.code, 1, "differences: {}", diff.stderr);
    assert_eq!(
        diff.stdout
            .matches("+      - name: linkerd-proxy\n")
            .count(),
        100
    );
    let json = run_on(&["-q", "-o", "json"], &[&path]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    // serde_json's own reader stops at 128 levels, so count the objects.
    assert!(
        json.stdout
            .starts_with("{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"List\"")
    );
    assert_eq!(json.stdout.matches("\"kind\": \"Deployment\"").count(), 100);
    assert_eq!(common::pipe(Some("uninject"), &out), text);
}

// --- paths ---

#[test]
fn a_symlink_loop_in_a_directory_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("k8s");
    std::fs::create_dir_all(root.join("sub")).expect("mkdir");
    std::fs::copy(hostile("generate-name.yaml"), root.join("pod.yaml")).expect("copy");
    std::os::unix::fs::symlink("..", root.join("sub/up")).expect("symlink");
    let run = run_on(&["-R"], &[&root]);
    assert_fails(
        &run,
        &format!(
            "{}: a symbolic link loop: it leads back to {}, a directory it is in",
            root.join("sub/up").display(),
            root.display()
        ),
    );
    // Without -R the loop is never entered.
    let flat = run_on(&["-q"], &[&root]);
    assert_eq!(flat.code, 0, "{}", flat.stderr);
    // A link to itself is named as such.
    let own = dir.path().join("self");
    std::fs::create_dir(&own).expect("mkdir");
    std::os::unix::fs::symlink("self.yaml", own.join("self.yaml")).expect("symlink");
    let run = run_on(&[], &[&own]);
    assert_fails(
        &run,
        &format!(
            "{}: too many levels of symbolic links",
            own.join("self.yaml").display()
        ),
    );
}

#[test]
fn paths_that_cannot_be_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("missing.yaml");
    assert_fails(
        &run_on(&[], &[&missing]),
        &format!("{}: no such file or directory", missing.display()),
    );
    // A link to nothing, found in a directory.
    let links = dir.path().join("links");
    std::fs::create_dir(&links).expect("mkdir");
    std::os::unix::fs::symlink("gone.yaml", links.join("dangling.yaml")).expect("symlink");
    assert_fails(
        &run_on(&[], &[&links]),
        &format!(
            "{}: no such file or directory",
            links.join("dangling.yaml").display()
        ),
    );
    // A file where a directory is expected.
    let file = dir.path().join("pod.yaml");
    std::fs::copy(hostile("generate-name.yaml"), &file).expect("copy");
    let below = dir.path().join("pod.yaml/");
    assert_fails(
        &run_on(&[], &[&below]),
        &format!("{}: not a directory", below.display()),
    );
    // A file without read permission: root reads it anyway, so the case is
    // checked only where the permission holds.
    let locked = dir.path().join("locked.yaml");
    std::fs::copy(hostile("generate-name.yaml"), &locked).expect("copy");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    if std::fs::read(&locked).is_ok() {
        common::skip_part(
            "hostile",
            "this user can read a mode 000 file (root): permission denied not checked",
        );
    } else {
        assert_fails(
            &run_on(&[], &[&locked]),
            &format!("{}: permission denied", locked.display()),
        );
    }
}

#[test]
fn a_fifo_is_read_when_named_and_never_opened_from_a_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("stream.yaml");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    std::fs::copy(hostile("generate-name.yaml"), dir.path().join("pod.yaml")).expect("copy");
    // In a directory it is not a regular file: skipped, never opened (which
    // would block for ever with no writer).
    let binary = assert_cmd::cargo::cargo_bin("kubectl-mesh_inject");
    let mut child = Command::new(&binary)
        .args(common::with_anchors(&[
            "-q",
            "-f",
            dir.path().to_str().expect("a UTF-8 path"),
        ]))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the run blocked on the FIFO in the directory");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().expect("output");
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8(output.stdout).expect("utf-8"),
        common::pipe(None, &read(&hostile("generate-name.yaml")))
    );
    // Named on the command line it is read, as `-f <(helm template …)` is.
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            std::fs::write(&fifo, read(&hostile("generate-name.yaml"))).expect("write fifo");
        })
    };
    let run = run_on(&["-q"], &[&fifo]);
    writer.join().expect("writer");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        common::pipe(None, &read(&hostile("generate-name.yaml")))
    );
}

#[test]
fn binary_input_is_refused_at_its_first_bytes() {
    // Read whole, these would never end (and /dev/zero is refused at its
    // first byte, not at the size limit).
    let run = run_in_1_gb(&["-f", "/dev/zero"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stdout.is_empty());
    assert!(
        run.stderr.starts_with(
            "error: /dev/zero: document 1, line 1:1: a NUL byte (byte 0 of the file): binary \
             data, or text in UTF-16 or UTF-32 without a byte order mark, not a manifest; \
             nothing was read past its first 64 KiB\n"
        ),
        "{}",
        run.stderr
    );
    // Shown as the pictures of NUL, never as the bytes themselves.
    assert!(
        run.stderr.contains("1 | \u{2400}\u{2400}"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains('\0'));
    // Random bytes: refused at the first that cannot start a manifest.
    let run = run_in_1_gb(&["-f", "/dev/urandom"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let first = run.stderr.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("error: /dev/urandom: document 1, line ")
            && [
                "not valid UTF-8 (byte ",
                "a NUL byte (byte ",
                "control characters are not allowed (U+"
            ]
            .iter()
            .any(|why| first.contains(why)),
        "{first}"
    );
    // From standard input, and for admit, alike.
    let run = piped_in_1_gb("cat /dev/zero", &["admit"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .starts_with("error: <stdin>: document 1, line 1:1: a NUL byte (byte 0 of the input)"),
        "{}",
        run.stderr
    );
    // A NUL after some text, where it is.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("nul.yaml");
    std::fs::write(&path, "a: 1\n---\nkind: Pod\nname: x\0y\n").expect("write");
    let run = run_on(&[], &[&path]);
    assert_refused(
        &run,
        &path,
        (2, 4, 8),
        "a NUL byte (byte 26 of the file): binary data, or text in UTF-16 or UTF-32 without a \
         byte order mark, not a manifest; nothing was read past its first 64 KiB",
    );
}

#[test]
fn an_input_larger_than_the_limit_is_refused_without_reading_it_to_its_end() {
    // `yes` never ends: reading stops at the limit, and says which flag raises it.
    let run = piped_in_1_gb("yes", &[]);
    assert_fails(
        &run,
        "<stdin>: more than 256 MiB, larger than one input may be (256 MiB); nothing was read \
         past it. Give a larger --max-input-bytes to read it (e.g. --max-input-bytes 512Mi)",
    );
    let run = piped_in_1_gb("yes", &["admit", "--max-input-bytes", "1Mi"]);
    assert_fails(
        &run,
        "<stdin>: more than 1 MiB, larger than one input may be (1 MiB); nothing was read past \
         it. Give a larger --max-input-bytes to read it (e.g. --max-input-bytes 2Mi)",
    );
    // A file by its size, before it is read; a larger limit reads it.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("big.yaml");
    let text = format!(
        "# {}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\n",
        "x".repeat(2 << 20)
    );
    std::fs::write(&path, &text).expect("write");
    let run = run_on(&["--max-input-bytes", "2Mi"], &[&path]);
    assert_fails(
        &run,
        &format!(
            "{}: 3 MiB ({} bytes), larger than one input may be (2 MiB); nothing was read past \
             it. Give a larger --max-input-bytes to read it (e.g. --max-input-bytes 4Mi)",
            path.display(),
            text.len()
        ),
    );
    let run = run_on(&["-q", "--max-input-bytes", "3M"], &[&path]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, text);
    // --context files are held to it too, named with the flag.
    let run = run_on(
        &[
            "--max-input-bytes",
            "2Mi",
            "--context",
            path.to_str().expect("utf-8"),
        ],
        &[],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.starts_with("error: --context ") && run.stderr.contains("--max-input-bytes"),
        "{}",
        run.stderr
    );
    // A size that is not one.
    let run = run_on(&["--max-input-bytes", "lots"], &[&path]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("\"lots\" is not a size"),
        "{}",
        run.stderr
    );
}

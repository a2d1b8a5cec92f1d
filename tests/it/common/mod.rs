//! Helpers shared by the CLI tests: run the real binary, find test inputs.
#![allow(dead_code)]

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use assert_cmd::Command;
use serde_json::Value;

/// The result of one run of `kubectl-mesh_inject`.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(output: Output) -> Self {
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
            stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
        }
    }
}

/// The binary, with no arguments yet: run as given, without the sample
/// trust anchors ([`command_with`] gives them where they are needed).
pub fn command() -> Command {
    let mut cmd = Command::cargo_bin("kubectl-mesh_inject").expect("binary is built");
    cmd.env_remove("NO_COLOR");
    cmd
}

/// The binary with `args`, as a user runs it who knows the cluster's
/// Linkerd: see [`with_anchors`].
pub fn command_with<S: AsRef<str>>(args: &[S]) -> Command {
    let mut cmd = command();
    cmd.args(with_anchors(args));
    cmd
}

/// Self-signed certificates (`testdata/trust-anchors/`): valid trust anchors
/// that trust nothing; a rotation replaces the first by the second.
pub const ANCHOR_A: &str = include_str!("../../../testdata/trust-anchors/a.pem");
pub const ANCHOR_B: &str = include_str!("../../../testdata/trust-anchors/b.pem");

/// The sample trust roots (`testdata/cluster/`): Linkerd's
/// `linkerd-identity-trust-roots` ConfigMap, as `kubectl get -o yaml` saves it.
pub fn cluster() -> PathBuf {
    testdata("cluster")
}

/// The sample trust roots as `--context testdata/cluster/` reads them, for
/// the tests that run the library itself.
pub fn cluster_sources() -> Vec<mesh_inject::source::Source> {
    mesh_inject::source::read_all(&[cluster()], false).expect("the sample trust roots")
}

/// The PEM of the sample trust roots (their `ca-bundle.crt`), for a run
/// that takes it as a value (`--set trustAnchorsPEM=…`, a KRM function's
/// functionConfig).
pub fn sample_anchors() -> String {
    let text = std::fs::read_to_string(cluster().join("linkerd-trust-roots.yaml"))
        .expect("the sample trust roots");
    let value = values(&text)
        .into_iter()
        .flatten()
        .next()
        .expect("a ConfigMap");
    value["data"]["ca-bundle.crt"]
        .as_str()
        .expect("ca-bundle.crt")
        .to_string()
}

/// `args`, with the sample trust roots as context (`--context
/// testdata/cluster/`) when they run Linkerd's proxy injector (inject or
/// admit with the default profile): without trust anchors it refuses to
/// write a proxy that cannot start. Other runs (uninject, config, another
/// profile, help) are as given. The one place the tests get their anchors.
pub fn with_anchors<S: AsRef<str>>(args: &[S]) -> Vec<String> {
    let args: Vec<String> = args.iter().map(|a| a.as_ref().to_string()).collect();
    let other_command = args.first().is_some_and(|first| {
        ["uninject", "config", "version", "help", "__complete"].contains(&first.as_str())
    });
    let help = args
        .iter()
        .any(|a| ["--help", "-h", "--version", "-V"].contains(&a.as_str()));
    let other_profile = args.iter().enumerate().any(|(i, a)| {
        let named = match a.strip_prefix("--profile=") {
            Some(name) => Some(name),
            None if a == "--profile" => args.get(i + 1).map(String::as_str),
            None => None,
        };
        named.is_some_and(|name| name != "linkerd")
    });
    let mut given = args.clone();
    if !(other_command || help || other_profile) {
        // First, so that a test's own context (its linkerd-config) wins.
        let at = usize::from(args.first().is_some_and(|a| !a.starts_with('-')));
        let sample = cluster().to_str().expect("a UTF-8 path").to_string();
        let settings = testdata("cluster-settings");
        let settings = settings.to_str().expect("a UTF-8 path").to_string();
        given.splice(
            at..at,
            [
                "--context".to_string(),
                sample,
                "--context".to_string(),
                settings,
            ],
        );
    }
    given
}

/// Run with `args` (given the sample trust anchors where they are needed,
/// see [`with_anchors`]), feeding `stdin` (empty when `None`).
pub fn run(args: &[&str], stdin: Option<&str>) -> Run {
    let mut cmd = command_with(args);
    cmd.write_stdin(stdin.unwrap_or("").as_bytes().to_vec());
    cmd.output().expect("runs").into()
}

/// [`run`] without the sample trust anchors: exactly `args`.
pub fn run_as_given(args: &[&str], stdin: Option<&str>) -> Run {
    let mut cmd = command();
    cmd.args(args)
        .write_stdin(stdin.unwrap_or("").as_bytes().to_vec());
    cmd.output().expect("runs").into()
}

/// Run with `args` (given the sample trust anchors where they are needed)
/// in `dir`, feeding `stdin`, with standard output and standard error sent
/// where given (`Stdio::piped()` to capture them; a stream sent elsewhere
/// comes back empty).
pub fn run_to(args: &[&str], dir: &Path, stdin: &str, stdout: Stdio, stderr: Stdio) -> Run {
    let mut child = std::process::Command::new(command().get_program())
        .args(with_anchors(args))
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .stdin(Stdio::piped())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .expect("spawns");
    let mut input = child.stdin.take().expect("stdin");
    let text = stdin.as_bytes().to_vec();
    // A run that stops reading early makes this write fail: not the test's concern.
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&text);
    });
    let output = child.wait_with_output().expect("runs");
    feeder.join().expect("feeds stdin");
    output.into()
}

/// `/dev/full`, where every write fails with "No space left on device".
pub fn full() -> Stdio {
    Stdio::from(
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full"),
    )
}

/// The writing end of a pipe whose reading end is already closed: every
/// write to it fails with a broken pipe, whatever its size and timing.
pub fn closed_pipe() -> Stdio {
    use std::os::fd::FromRawFd;
    unsafe extern "C" {
        fn pipe2(fds: *mut std::ffi::c_int, flags: std::ffi::c_int) -> std::ffi::c_int;
    }
    // O_CLOEXEC: no process another test starts meanwhile inherits the reading end.
    const O_CLOEXEC: std::ffi::c_int = 0o2000000;
    let mut fds: [std::ffi::c_int; 2] = [-1, -1];
    // SAFETY: pipe2 fills `fds` with two new descriptors, each owned once below.
    assert_eq!(unsafe { pipe2(fds.as_mut_ptr(), O_CLOEXEC) }, 0, "pipe2");
    let (reader, writer) = unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) };
    drop(reader);
    Stdio::from(writer)
}

/// Inject (or uninject, with `extra = ["uninject"]`) a text given on stdin; expects success.
pub fn pipe(subcommand: Option<&str>, text: &str) -> String {
    let mut args: Vec<&str> = subcommand.into_iter().collect();
    args.push("-q");
    let run = run(&args, Some(text));
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    run.stdout
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A page of the user documentation: `README.md`, or one under `docs/`
/// (`docs/usage.md`).
pub fn doc(page: &str) -> String {
    std::fs::read_to_string(repo().join(page)).unwrap_or_else(|e| panic!("{page}: {e}"))
}

/// Every page of the user documentation: `README.md`, then `docs/*.md` by name.
pub fn docs() -> Vec<(PathBuf, String)> {
    let mut pages = vec![repo().join("README.md")];
    let mut under: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .expect("docs/")
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    under.sort();
    pages.extend(under);
    pages
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("a page");
            (path, text)
        })
        .collect()
}

pub fn testdata(rel: &str) -> PathBuf {
    repo().join("testdata").join(rel)
}

/// Say that a test returns without checking anything, and why. Besides the
/// line on standard error (shown by `cargo test -- --nocapture`), the test is
/// listed in the file `$MESH_INJECT_SKIPPED` names, when it names one:
/// `.ci/run` counts those tests as skipped, not passed.
pub fn skip_test(test: &str, why: &str) {
    note_skip("test", test, why);
}

/// Say that a part of a test is not checked here (the rest of it is), and
/// why; listed like [`skip_test`], as a part.
pub fn skip_part(test: &str, why: &str) {
    note_skip("part", test, why);
}

fn note_skip(scope: &str, test: &str, why: &str) {
    eprintln!("SKIPPED: {test}: {why}");
    if let Some(path) = std::env::var_os("MESH_INJECT_SKIPPED") {
        use std::io::Write;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path);
        if let Ok(mut file) = file {
            let _ = writeln!(file, "{scope}\t{test}\t{why}");
        }
    }
}

/// A folder of `../shared` beside the repository, if this checkout has it;
/// otherwise `test` is skipped, and says so.
pub fn shared(folder: &str, test: &str) -> Option<PathBuf> {
    let dir = repo().join("../shared").join(folder);
    if dir.is_dir() {
        Some(dir)
    } else {
        skip_test(
            test,
            &format!("../shared/{folder} is not beside this checkout"),
        );
        None
    }
}

/// `../shared/corpus` beside the repository, if this checkout has it.
pub fn corpus(test: &str) -> Option<PathBuf> {
    shared("corpus", test)
}

/// Every manifest file under `dir`, sorted.
pub fn manifests_under(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("yaml" | "yml" | "json")
            )
        })
        .collect();
    files.sort();
    files
}

/// Each document's value (`None` for empty documents), parsed with the library.
pub fn values(text: &str) -> Vec<Option<Value>> {
    mesh_inject::yaml::parse_stream(text)
        .expect("parses")
        .iter()
        .map(|d| {
            d.root
                .as_ref()
                .map(|r| mesh_inject::yaml::value::to_value(r).expect("resolves"))
        })
        .collect()
}

/// Each document's text, by the byte ranges the parser reports.
pub fn document_texts(text: &str) -> Vec<String> {
    mesh_inject::yaml::parse_stream(text)
        .expect("parses")
        .iter()
        .map(|d| text[d.start..d.end].to_string())
        .collect()
}

// ---------------------------------------------------------------------------
// Comparing objects with the meshes' goldens (`../shared/fidelity`).

/// `value` with what Go's serialiser adds or drops without meaning taken
/// away (`creationTimestamp: null`, `status: {}`, `resources: {}` added;
/// `hostNetwork: false` dropped by `omitempty`), and the annotations named
/// in `allowed` (those a comparison allows to differ) removed.
pub fn without_serialiser_noise(value: &mut Value, allowed: &[&str]) {
    match value {
        Value::Object(map) => {
            for key in allowed {
                map.shift_remove(*key);
            }
            for child in map.values_mut() {
                without_serialiser_noise(child, allowed);
            }
            map.retain(|_, v| {
                !v.is_null() && *v != false && v.as_object().is_none_or(|m| !m.is_empty())
            });
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| without_serialiser_noise(item, allowed)),
        _ => {}
    }
}

/// The documents of `text` as a mesh's golden holds them, read by an
/// independent YAML library, without what Go's serialiser adds or drops
/// without meaning and the annotations in `allowed`.
pub fn golden_objects(text: &str, allowed: &[&str]) -> Vec<Value> {
    serde_yaml_ng::Deserializer::from_str(text)
        .map(|document| {
            let value: serde_yaml_ng::Value =
                serde::Deserialize::deserialize(document).expect("valid YAML");
            let mut value = serde_json::to_value(value).expect("JSON");
            without_serialiser_noise(&mut value, allowed);
            value
        })
        .filter(|v| !v.is_null())
        .collect()
}

/// The paths where `got` (the tool's) and `want` (the mesh's) differ, with
/// both values; list items by name where they have one.
pub fn field_differences(got: &Value, want: &Value, at: &str) -> Vec<String> {
    let name = |v: &Value| v.get("name").and_then(Value::as_str).map(str::to_string);
    match (got, want) {
        (Value::Object(g), Value::Object(w)) => {
            let mut keys: Vec<&String> = g.keys().chain(w.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter()
                .flat_map(|k| match (g.get(k), w.get(k)) {
                    (Some(g), Some(w)) => field_differences(g, w, &format!("{at}/{k}")),
                    (g, w) => vec![format!("{at}/{k}: tool {g:?}, mesh {w:?}")],
                })
                .collect()
        }
        (Value::Array(g), Value::Array(w)) if g.len() == w.len() => {
            let names: Vec<Option<String>> = g.iter().map(name).collect();
            if names != w.iter().map(name).collect::<Vec<_>>() {
                return vec![format!(
                    "{at}: order or names {names:?} differ from the mesh's"
                )];
            }
            g.iter()
                .zip(w)
                .enumerate()
                .flat_map(|(i, (g, w))| {
                    let step = name(g).unwrap_or_else(|| i.to_string());
                    field_differences(g, w, &format!("{at}[{step}]"))
                })
                .collect()
        }
        _ if got == want => Vec::new(),
        _ => vec![format!("{at}: tool {got}, mesh {want}")],
    }
}

/// One row of Linkerd's `CASES.md`.
pub struct LinkerdCase {
    pub case: String,
    pub input: String,
    pub golden: String,
    pub settings: String,
}

/// The rows of Linkerd's `CASES.md` (in `dir`) whose kind column is `kind`.
pub fn linkerd_cases(dir: &Path, kind: &str) -> Vec<LinkerdCase> {
    let cases = std::fs::read_to_string(dir.join("CASES.md")).expect("CASES.md");
    cases
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            match cells.as_slice() {
                ["", case, input, golden, settings, k, ""] if *k == kind => Some(LinkerdCase {
                    case: case.to_string(),
                    input: input.to_string(),
                    golden: golden.to_string(),
                    settings: settings.to_string(),
                }),
                _ => None,
            }
        })
        .collect()
}

/// One row of Istio's `CASES.md`: an input, the golden Istio's injection
/// test wrote for it, and the settings it ran with.
pub struct IstioCase {
    pub input: String,
    pub golden: String,
    pub settings: String,
}

/// The rows of Istio's `CASES.md` (in `dir`), in its order.
pub fn istio_cases(dir: &Path) -> Vec<IstioCase> {
    let cases = std::fs::read_to_string(dir.join("CASES.md")).expect("CASES.md");
    cases
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            match cells.as_slice() {
                ["", input, golden, settings, ""]
                    if golden.ends_with(".injected") && !input.starts_with("---") =>
                {
                    Some(IstioCase {
                        input: input.to_string(),
                        golden: golden.to_string(),
                        settings: settings.to_string(),
                    })
                }
                _ => None,
            }
        })
        .collect()
}

/// The Go program in `tests/go/NAME` built with the machine's Go toolchain
/// against the Go packages Debian installs under `/usr/share/gocode` (no
/// module download), into the integration tests' scratch folder; `None`,
/// with `test` skipped and saying so, when Go or one of the packages the
/// program imports is not installed.
pub fn go_program(name: &str, test: &str) -> Option<PathBuf> {
    let source = repo().join("tests/go").join(name);
    let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    // One binary per test: tests run at once must not write the same file.
    let binary = scratch.join(format!("go-{name}-{test}"));
    let built = std::process::Command::new("go")
        .arg("build")
        .arg("-o")
        .arg(&binary)
        .arg(".")
        .current_dir(&source)
        .env("GO111MODULE", "off")
        .env("GOPATH", "/usr/share/gocode")
        .env("GOCACHE", scratch.join("go-cache"))
        .env("GOFLAGS", "")
        .output();
    match built {
        Ok(out) if out.status.success() => Some(binary),
        Ok(out) => {
            let why = String::from_utf8_lossy(&out.stderr);
            // A package missing is the machine's lack; anything else is a
            // broken program, and fails.
            assert!(
                why.contains("cannot find package"),
                "go build tests/go/{name}: {why}"
            );
            skip_test(
                test,
                &format!(
                    "a Go package tests/go/{name} imports is not installed: {}",
                    why.trim()
                ),
            );
            None
        }
        Err(_) => {
            skip_test(test, "go is not installed (Debian's golang-go)");
            None
        }
    }
}

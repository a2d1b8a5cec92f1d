//! The tool inside the tools users already run, driven for real where the
//! machine has them; a visible SKIPPED line where it does not.

use crate::common;

use std::path::Path;
use std::process::Command;

/// How each outside tool says it runs: its own way of printing its version
/// (`kubectl --version` and `kpt --version` exit 1).
fn probe(program: &str) -> &'static [&'static str] {
    match program {
        "kubectl" => &["version", "--client"],
        "kpt" | "helm" | "kubectl-krew" => &["version"],
        _ => &["--version"],
    }
}

/// Whether `program` runs here. When it does not, `test` (or, with `part`,
/// that part of it) is skipped and says so. Under CI (`CI=true`), a program
/// on the PATH that fails its probe is a failure, not a skip: `.ci/run` said
/// it found it, so its test must run.
pub(crate) fn available(program: &str, test: &str, part: bool) -> bool {
    let run = Command::new(program).args(probe(program)).output();
    if run.as_ref().is_ok_and(|o| o.status.success()) {
        return true;
    }
    let on_path = run.is_ok();
    if on_path && std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "{program} is installed but `{program} {}` fails: {run:?}",
            probe(program).join(" ")
        );
    }
    let why = format!("{program} is not installed");
    if part {
        common::skip_part(test, &why);
    } else {
        common::skip_test(test, &why);
    }
    false
}

/// The directory of the built `kubectl-mesh_inject`, first on a PATH for kubectl.
fn path_with_binary() -> String {
    let binary = assert_cmd::cargo::cargo_bin("kubectl-mesh_inject");
    let dir = binary.parent().expect("a directory").to_path_buf();
    let rest = std::env::var("PATH").unwrap_or_default();
    format!("{}:{rest}", dir.display())
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com")
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

/// `pre-commit try-repo` with this repository's hooks, in a temporary git
/// repository holding one injected and one stale manifest, and the cluster's
/// trust roots: `try-repo` takes no `args`, so they reach the tool as one
/// of the files (`--all-files`), as the input's own context.
#[test]
fn pre_commit_hooks_check_and_inject() {
    if !available("pre-commit", "pre_commit_hooks_check_and_inject", false) {
        return;
    }
    let example =
        std::fs::read_to_string(common::testdata("example/deploy.yaml")).expect("example");
    let injected = common::pipe(None, &example);
    let dir = tempfile::tempdir().expect("temp dir");
    let repo = dir.path();
    git(repo, &["init", "-q"]);
    std::fs::write(repo.join("injected.yaml"), &injected).expect("write");
    std::fs::write(repo.join("stale.yaml"), &example).expect("write");
    std::fs::create_dir(repo.join("cluster")).expect("mkdir");
    std::fs::copy(
        common::cluster().join("linkerd-trust-roots.yaml"),
        repo.join("cluster/linkerd-trust-roots.yaml"),
    )
    .expect("copy");
    git(repo, &["add", "."]);
    let try_repo = |hook: &str| -> common::Run {
        Command::new("pre-commit")
            .current_dir(repo)
            .args([
                "try-repo",
                common::repo().to_str().expect("utf-8 path"),
                hook,
                "--all-files",
            ])
            // Build the hook with the project's own target directory (the
            // one this run was built in, when it names one): no second full build.
            .env(
                "CARGO_TARGET_DIR",
                std::env::var_os("CARGO_TARGET_DIR")
                    .map_or_else(|| common::repo().join("target"), std::path::PathBuf::from),
            )
            .env("PRE_COMMIT_HOME", dir.path().join(".cache"))
            .output()
            .expect("pre-commit runs")
            .into()
    };
    let check = try_repo("mesh-inject-check");
    assert_ne!(check.code, 0, "{}", check.stdout);
    assert!(
        check.stdout.contains("would inject: stale.yaml"),
        "{}",
        check.stdout
    );
    assert!(
        !check.stdout.contains("would inject: injected.yaml"),
        "{}",
        check.stdout
    );
    // The other hook rewrites the stale file (pre-commit reports a failure when files change).
    let inject = try_repo("mesh-inject");
    assert_ne!(inject.code, 0, "{}", inject.stdout);
    assert_eq!(
        std::fs::read_to_string(repo.join("stale.yaml")).expect("read"),
        injected
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("injected.yaml")).expect("read"),
        injected
    );
    git(repo, &["add", "."]);
    let again = try_repo("mesh-inject-check");
    assert_eq!(again.code, 0, "{}", again.stdout);
}

/// The fenced code block of the documentation (README.md and docs/) that
/// holds `needle`, as a reader copies it: without the list item's indentation.
fn readme_block(needle: &str) -> String {
    let pages = common::docs();
    let mut blocks = Vec::new();
    let mut current: Option<(usize, Vec<&str>)> = None;
    for line in pages.iter().flat_map(|(_, text)| text.lines()) {
        let indent = line.len() - line.trim_start().len();
        match &mut current {
            None if line.trim_start().starts_with("```") => current = Some((indent, Vec::new())),
            Some(_) if line.trim_start() == "```" => {
                let (_, lines) = current.take().expect("in a block");
                blocks.push(lines.join("\n") + "\n");
            }
            Some((indent, lines)) => lines.push(line.get(*indent..).unwrap_or("")),
            None => {}
        }
    }
    let found: Vec<String> = blocks.into_iter().filter(|b| b.contains(needle)).collect();
    assert_eq!(
        found.len(),
        1,
        "one block of the documentation holds {needle:?}"
    );
    found.into_iter().next().expect("one block")
}

/// Both hooks take every file in one run (`require_serial`): pre-commit
/// otherwise splits the files over the cores, and a policy object or the
/// trust roots in one run would not apply to the workloads in another.
#[test]
fn pre_commit_hooks_run_serially() {
    let text =
        std::fs::read_to_string(common::repo().join(".pre-commit-hooks.yaml")).expect("the hooks");
    let hooks = common::values(&text)
        .into_iter()
        .flatten()
        .next()
        .expect("a list of hooks");
    let hooks = hooks.as_array().expect("a list of hooks");
    let ids: Vec<&str> = hooks.iter().filter_map(|h| h["id"].as_str()).collect();
    assert_eq!(ids, ["mesh-inject-check", "mesh-inject"]);
    for hook in hooks {
        assert_eq!(hook["require_serial"], true, "{}", hook["id"]);
    }
}

/// The README's pre-commit block run as written, with this repository's
/// path as its URL, in a GitOps repository with a stale manifest: the
/// check fails and names it. Its `rev` is this repository's HEAD commit,
/// so what is tested is what is committed (CI runs on a clean clone).
/// Then `require_serial` for real: without `args`, the trust roots'
/// ConfigMap is one of eight files, and every workload sees it, because
/// one run gets them all (`TRAVIS` makes pre-commit split files over two
/// jobs on any machine, for hooks that are not serial).
#[test]
fn pre_commit_config_as_the_readme_writes_it() {
    const TEST: &str = "pre_commit_config_as_the_readme_writes_it";
    if !available("pre-commit", TEST, false) {
        return;
    }
    let block = readme_block("git ls-remote \"$url\" HEAD");
    let url_lines = block.lines().filter(|l| l.starts_with("url=")).count();
    assert_eq!(url_lines, 1, "{block}");
    let this_repo = common::repo();
    let script: String = block
        .lines()
        .map(|l| match l.starts_with("url=") {
            true => format!("url={}\n", this_repo.display()),
            false => format!("{l}\n"),
        })
        .collect();

    let example =
        std::fs::read_to_string(common::testdata("example/deploy.yaml")).expect("example");
    let dir = tempfile::tempdir().expect("temp dir");
    let gitops = dir.path().join("gitops");
    std::fs::create_dir_all(gitops.join("cluster")).expect("mkdir");
    git(&gitops, &["init", "-q"]);
    std::fs::write(gitops.join("injected.yaml"), common::pipe(None, &example)).expect("write");
    std::fs::write(gitops.join("stale.yaml"), &example).expect("write");
    let roots = common::cluster().join("linkerd-trust-roots.yaml");
    std::fs::copy(&roots, gitops.join("cluster/linkerd-trust-roots.yaml")).expect("copy");
    git(&gitops, &["add", "."]);
    let bash = |script: &str| -> common::Run {
        Command::new("bash")
            .args(["-c", script])
            .current_dir(&gitops)
            // The hook is built in this run's target directory: its
            // dependencies are built once.
            .env(
                "CARGO_TARGET_DIR",
                std::env::var_os("CARGO_TARGET_DIR")
                    .map_or_else(|| this_repo.join("target"), std::path::PathBuf::from),
            )
            .env("PRE_COMMIT_HOME", dir.path().join("cache"))
            .env("TRAVIS", "true")
            .output()
            .expect("bash runs")
            .into()
    };
    let run = bash(&script);
    let shown = format!("{}{}", run.stdout, run.stderr);
    assert_eq!(run.code, 1, "{shown}");
    assert!(shown.contains("would inject: stale.yaml"), "{shown}");
    assert!(!shown.contains("would inject: injected.yaml"), "{shown}");
    let config = std::fs::read_to_string(gitops.join(".pre-commit-config.yaml")).expect("config");
    let head = Command::new("git")
        .current_dir(&this_repo)
        .args(["rev-parse", "HEAD"])
        .output()
        .expect("git runs");
    let head = String::from_utf8_lossy(&head.stdout).trim().to_string();
    assert!(config.contains(&format!("  rev: {head}\n")), "{config}");
    // pre-commit built the hook with `cargo install`, as users install the
    // tool: a release build without debug info (33 MB with it, 6 without).
    let installed = walkdir::WalkDir::new(dir.path().join("cache"))
        .into_iter()
        .filter_map(Result::ok)
        .find(|e| {
            e.file_name() == "kubectl-mesh_inject"
                && e.path().parent().is_some_and(|p| p.ends_with("bin"))
        })
        .expect("the hook's binary");
    let size = installed.metadata().expect("stat").len();
    assert!(
        size < 10_000_000,
        "{size} bytes: {}",
        installed.path().display()
    );

    // The same hook without `args`: the trust roots come as one of the files.
    std::fs::remove_file(gitops.join("injected.yaml")).expect("rm");
    std::fs::remove_file(gitops.join("stale.yaml")).expect("rm");
    for i in 1..=7 {
        std::fs::write(gitops.join(format!("app-{i}.yaml")), &example).expect("write");
    }
    git(&gitops, &["add", "-A", "."]);
    let without_args: String = config
        .lines()
        .filter(|l| !l.trim_start().starts_with("args:"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(without_args, config, "{config}");
    std::fs::write(gitops.join(".pre-commit-config.yaml"), without_args).expect("write");
    let run = bash("pre-commit run mesh-inject-check --all-files");
    let shown = format!("{}{}", run.stdout, run.stderr);
    assert_eq!(run.code, 1, "{shown}");
    for i in 1..=7 {
        assert!(
            shown.contains(&format!("would inject: app-{i}.yaml")),
            "{shown}"
        );
    }
    assert!(!shown.contains("cannot be injected"), "{shown}");
}

/// kubectl finds the plugin on PATH and runs it as `kubectl mesh-inject`.
#[test]
fn kubectl_runs_the_plugin() {
    if !available("kubectl", "kubectl_runs_the_plugin", false) {
        return;
    }
    let path = path_with_binary();
    let kubectl = |args: &[&str]| -> common::Run {
        Command::new("kubectl")
            .current_dir(common::repo())
            .args(args)
            .env("PATH", &path)
            .output()
            .expect("kubectl runs")
            .into()
    };
    let list = kubectl(&["plugin", "list"]);
    assert!(
        list.stdout.contains("kubectl-mesh_inject"),
        "{}{}",
        list.stdout,
        list.stderr
    );
    let help = kubectl(&["mesh-inject", "--help"]);
    assert_eq!(help.code, 0, "{}", help.stderr);
    assert!(
        help.stdout.contains("Usage: kubectl mesh-inject"),
        "{}",
        help.stdout
    );
    let mut args = vec!["mesh-inject".to_string()];
    args.extend(common::with_anchors(&[
        "-q",
        "-f",
        "testdata/example/deploy.yaml",
    ]));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = kubectl(&args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("- name: linkerd-proxy"),
        "{}",
        run.stdout
    );
}

/// Helm's post-renderer contract: called with the `--post-renderer-args`
/// (here the cluster's trust roots as context), the rendered stream on
/// standard input, nothing but YAML on standard output, exit 0.
#[test]
fn works_as_a_helm_post_renderer() {
    let example =
        std::fs::read_to_string(common::testdata("example/deploy.yaml")).expect("example");
    // Helm renders templates with `# Source:` comments between documents.
    let rendered = format!("---\n# Source: web/templates/deploy.yaml\n{example}");
    let mut cmd = common::command_with::<&str>(&[]);
    cmd.write_stdin(rendered.clone());
    let run: common::Run = cmd.output().expect("runs").into();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .starts_with("---\n# Source: web/templates/deploy.yaml\n")
    );
    assert!(run.stdout.contains("- name: linkerd-proxy"));
    for value in common::values(&run.stdout).into_iter().flatten() {
        assert!(
            value.get("kind").is_some(),
            "only manifests on stdout: {value}"
        );
    }
    if helm_major("works_as_a_helm_post_renderer (the real helm 3)", 3) {
        let chart = tempfile::tempdir().expect("temp dir");
        example_chart(chart.path());
        let out = Command::new("helm")
            .args([
                "template",
                "web",
                chart.path().to_str().expect("utf-8"),
                "--post-renderer",
                "kubectl-mesh_inject",
            ])
            .arg(format!(
                "--post-renderer-args=--context={}",
                common::cluster().display()
            ))
            .env("PATH", path_with_binary())
            .output()
            .expect("helm runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("- name: linkerd-proxy"));
    }
}

/// The lines of `[section]` in Cargo.toml, comments left out.
fn cargo_toml_section(section: &str) -> Vec<String> {
    let text = std::fs::read_to_string(common::repo().join("Cargo.toml")).expect("Cargo.toml");
    text.lines()
        .skip_while(|l| l.trim() != format!("[{section}]"))
        .skip(1)
        .take_while(|l| !l.starts_with('['))
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// What users install (`cargo install`, the release archive) carries no
/// debug info: about 6 MB, not 33. Profiling has a profile of its own.
/// (The pre-commit test checks the binary `cargo install` builds.)
#[test]
fn the_release_build_has_no_debug_info() {
    let release = cargo_toml_section("profile.release");
    assert!(
        release.iter().all(|l| !l.starts_with("debug")),
        "{release:?}"
    );
    assert!(
        release.contains(&"strip = \"debuginfo\"".to_string()),
        "{release:?}"
    );
    let profiling = cargo_toml_section("profile.profiling");
    for line in ["inherits = \"release\"", "debug = 1", "strip = \"none\""] {
        assert!(profiling.contains(&line.to_string()), "{profiling:?}");
    }
}

/// Whether the helm here is of `major` version; when it is not, or there is
/// none, that part of `test` is skipped, and says so.
fn helm_major(test: &str, major: u32) -> bool {
    if !available("helm", test, true) {
        return false;
    }
    let out = Command::new("helm")
        .args(["version", "--short"])
        .output()
        .expect("helm runs");
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if version.starts_with(&format!("v{major}.")) {
        return true;
    }
    common::skip_part(test, &format!("helm here is {version}, not Helm {major}"));
    false
}

/// A chart whose one template is the example Deployment and Service.
fn example_chart(dir: &Path) {
    let example =
        std::fs::read_to_string(common::testdata("example/deploy.yaml")).expect("example");
    std::fs::create_dir_all(dir.join("templates")).expect("mkdir");
    std::fs::write(
        dir.join("Chart.yaml"),
        "apiVersion: v2\nname: web\nversion: 0.1.0\n",
    )
    .expect("write");
    std::fs::write(dir.join("templates/deploy.yaml"), &example).expect("write");
}

/// Helm 4's post-renderer plugin, `plugins/helm/mesh-inject/`: its
/// `plugin.yaml` as Helm 4 reads it (the `v1` schema, decoded strictly: no
/// field it does not know), and its command run as Helm 4 runs it: the
/// command for this platform, split at spaces, `$HELM_PLUGIN_DIR` expanded,
/// its args and then the `--post-renderer-args` after it, the rendered
/// stream on standard input. Standard output must be manifests only, and
/// not empty (Helm 4 fails an empty one); a failure is a non-zero status.
#[test]
fn works_as_a_helm_4_post_renderer_plugin() {
    const TEST: &str = "works_as_a_helm_4_post_renderer_plugin (the real helm 4)";
    let dir = common::repo().join("plugins/helm/mesh-inject");
    let text = std::fs::read_to_string(dir.join("plugin.yaml")).expect("plugin.yaml");
    let plugin = common::values(&text)
        .into_iter()
        .flatten()
        .next()
        .expect("one document");
    let known = [
        "apiVersion",
        "name",
        "type",
        "runtime",
        "version",
        "sourceURL",
        "config",
        "runtimeConfig",
    ];
    for key in plugin.as_object().expect("a mapping").keys() {
        assert!(
            known.contains(&key.as_str()),
            "Helm 4 refuses the field {key}"
        );
    }
    assert_eq!(plugin["apiVersion"], "v1");
    assert_eq!(plugin["type"], "postrenderer/v1");
    assert_eq!(plugin["runtime"], "subprocess");
    // `helm plugin install DIR` installs it under the directory's name;
    // `--post-renderer NAME` finds it by its own.
    assert_eq!(plugin["name"], "mesh-inject");
    assert_eq!(plugin["version"], env!("CARGO_PKG_VERSION"));
    // postrenderer/v1's config has no field.
    assert!(
        plugin
            .get("config")
            .is_none_or(|c| c == &serde_json::json!({}))
    );
    let runtime = plugin["runtimeConfig"].as_object().expect("runtimeConfig");
    for key in runtime.keys() {
        assert!(
            ["platformCommand", "platformHooks", "protocolCommands"].contains(&key.as_str()),
            "{key}"
        );
    }

    // Helm's choice among platformCommand: this OS and arch, then this OS
    // with no arch, then neither given.
    let (os, arch) = match (std::env::consts::OS, std::env::consts::ARCH) {
        (os, "x86_64") => (os, "amd64"),
        (os, "aarch64") => (os, "arm64"),
        other => other,
    };
    let commands = runtime["platformCommand"]
        .as_array()
        .expect("platformCommand");
    let field = |c: &serde_json::Value, key: &str| c[key].as_str().unwrap_or("").to_string();
    let chosen = commands
        .iter()
        .find(|c| field(c, "os") == os && field(c, "arch") == arch)
        .or_else(|| {
            commands
                .iter()
                .find(|c| field(c, "os") == os && field(c, "arch").is_empty())
        })
        .or_else(|| {
            commands
                .iter()
                .find(|c| field(c, "os").is_empty() && field(c, "arch").is_empty())
        })
        .expect("a command for this platform");
    let expand = |s: &str| {
        s.replace("${HELM_PLUGIN_DIR}", dir.to_str().expect("utf-8"))
            .replace("$HELM_PLUGIN_DIR", dir.to_str().expect("utf-8"))
    };
    let command = field(chosen, "command");
    let mut parts = command.split(' ').map(expand);
    let program = parts.next().expect("a program");
    let mut args: Vec<String> = parts.collect();
    args.extend(
        chosen["args"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a.as_str())
            .map(expand),
    );
    let example =
        std::fs::read_to_string(common::testdata("example/deploy.yaml")).expect("example");
    // Helm sets the release's namespace in a plugin's environment.
    let post_render_in = |extra: &[String], manifest: &str, namespace: Option<&str>| {
        let rendered = format!("---\n# Source: web/templates/deploy.yaml\n{manifest}");
        let mut command = Command::new(&program);
        match namespace {
            Some(namespace) => command.env("HELM_NAMESPACE", namespace),
            None => command.env_remove("HELM_NAMESPACE"),
        };
        let mut child = command
            .args(&args)
            .args(extra)
            .env("PATH", path_with_binary())
            .env("HELM_PLUGIN_NAME", "mesh-inject")
            .env("HELM_PLUGIN_DIR", &dir)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("the plugin's command runs");
        use std::io::Write;
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(rendered.as_bytes())
            .expect("write");
        common::Run::from(child.wait_with_output().expect("runs"))
    };
    let post_render = |extra: &[String]| post_render_in(extra, &example, Some("default"));
    let context = format!("--context={}", common::cluster().display());
    // A manifest that names no namespace is injected as in the release's.
    let bare = example.replace("  namespace: shop\n", "");
    let verbose = [context.clone(), "-v".to_string()];
    let run = post_render_in(&verbose, &bare, Some("team"));
    let said = run.stderr.contains("namespace team from HELM_NAMESPACE");
    let labelled = run.stdout.contains("linkerd.io/workload-ns: team");
    assert!(
        run.code == 0 && said && labelled,
        "{}{}",
        run.stdout,
        run.stderr
    );
    // Without it (not Helm, then), the run stops rather than guess.
    let run = post_render_in(std::slice::from_ref(&context), &bare, None);
    let named = run.stderr.contains("the environment has no HELM_NAMESPACE");
    assert!(run.code == 2 && named, "{}", run.stderr);
    let run = post_render(std::slice::from_ref(&context));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("- name: linkerd-proxy"),
        "{}",
        run.stdout
    );
    for value in common::values(&run.stdout).into_iter().flatten() {
        assert!(
            value.get("kind").is_some(),
            "only manifests on stdout: {value}"
        );
    }
    // Without the trust anchors the install must fail, not go on without a proxy.
    let run = post_render(&[]);
    assert_eq!(run.code, 2, "{}", run.stdout);

    if helm_major(TEST, 4) {
        let home = tempfile::tempdir().expect("temp dir");
        let chart = home.path().join("chart");
        example_chart(&chart);
        let helm = |args: &[&str]| -> common::Run {
            Command::new("helm")
                .args(args)
                .env("PATH", path_with_binary())
                .env("HELM_PLUGINS", home.path().join("plugins"))
                .env("HELM_CONFIG_HOME", home.path().join("config"))
                .env("HELM_CACHE_HOME", home.path().join("cache"))
                .env("HELM_DATA_HOME", home.path().join("data"))
                .output()
                .expect("helm runs")
                .into()
        };
        let install = helm(&["plugin", "install", dir.to_str().expect("utf-8")]);
        assert_eq!(install.code, 0, "{}{}", install.stdout, install.stderr);
        let chart = chart.to_str().expect("utf-8");
        let args = ["template", "web", chart, "--post-renderer", "mesh-inject"];
        let run = helm(&[&args[..], &["--post-renderer-args", &context]].concat());
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(
            run.stdout.contains("- name: linkerd-proxy"),
            "{}",
            run.stdout
        );
        let run = helm(&args);
        assert_ne!(run.code, 0, "no trust anchors: {}", run.stdout);
    }
}

/// The krew manifest template names this version and this binary.
#[test]
fn the_krew_manifest_matches_the_crate() {
    let text =
        std::fs::read_to_string(common::repo().join("plugins/mesh-inject.yaml")).expect("manifest");
    let manifest = common::values(&text)
        .into_iter()
        .flatten()
        .next()
        .expect("one document");
    assert_eq!(manifest["kind"], "Plugin");
    assert_eq!(
        manifest["spec"]["version"],
        format!("v{}", env!("CARGO_PKG_VERSION"))
    );
    let platforms = manifest["spec"]["platforms"].as_array().expect("platforms");
    assert!(!platforms.is_empty());
    for platform in platforms {
        assert_eq!(platform["bin"], "kubectl-mesh_inject");
        let uri = platform["uri"].as_str().expect("uri");
        assert!(
            uri.contains(&format!("/v{}/", env!("CARGO_PKG_VERSION"))),
            "{uri}"
        );
    }
}

/// `scripts/release.sh` on the built binary (`--binary`: no second release
/// build), with a PATH without krew: the archive holds what the documentation says,
/// the krew manifest has this platform's entry with the archive's sha256 and
/// nothing of the template's placeholders; where krew is installed, it
/// installs the plugin from them.
#[test]
fn the_release_script_fills_the_krew_manifest() {
    const TEST: &str = "the_release_script_fills_the_krew_manifest";
    let out = tempfile::tempdir().expect("temp dir");
    let binary = assert_cmd::cargo::cargo_bin("kubectl-mesh_inject");
    let without_krew = std::env::join_paths(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .filter(|dir| !dir.join("kubectl-krew").exists()),
    )
    .expect("a PATH");
    let run: common::Run = Command::new("bash")
        .arg(common::repo().join("scripts/release.sh"))
        .args([
            "--repo",
            "https://example.com/acme/mesh-inject.git",
            "--binary",
        ])
        .arg(&binary)
        .arg("--out")
        .arg(out.path())
        .env("PATH", &without_krew)
        .output()
        .expect("bash runs")
        .into();
    assert_eq!(run.code, 0, "{}", run.stderr);

    let target = Command::new("rustc").arg("-vV").output().expect("rustc");
    let target = String::from_utf8_lossy(&target.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .expect("the host triple");
    let name = format!("kubectl-mesh_inject-{target}.tar.gz");
    let archive = out.path().join(&name);
    let listing = Command::new("tar")
        .arg("-tzf")
        .arg(&archive)
        .output()
        .expect("tar");
    let mut files: Vec<String> = String::from_utf8_lossy(&listing.stdout)
        .lines()
        .filter(|f| !f.ends_with('/'))
        .map(str::to_string)
        .collect();
    files.sort();
    let mut expected: Vec<String> = [
        "kubectl-mesh_inject",
        "kubectl_complete-mesh_inject",
        "README.md",
        "plugins/helm/mesh-inject/plugin.yaml",
    ]
    .map(String::from)
    .into_iter()
    .chain(["completions", "docs", "man"].into_iter().flat_map(|dir| {
        std::fs::read_dir(common::repo().join(dir))
            .expect("read dir")
            .map(move |e| format!("{dir}/{}", e.expect("entry").file_name().to_string_lossy()))
    }))
    .chain(
        common::repo()
            .join("LICENSE")
            .exists()
            .then(|| "LICENSE".to_string()),
    )
    .collect();
    expected.sort();
    assert_eq!(files, expected);

    // The packaged binary runs, as itself.
    let unpacked = tempfile::tempdir().expect("temp dir");
    let status = Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(unpacked.path())
        .status()
        .expect("tar");
    assert!(status.success());
    let version = Command::new(unpacked.path().join("kubectl-mesh_inject"))
        .arg("--version")
        .output()
        .expect("runs");
    assert!(
        String::from_utf8_lossy(&version.stdout).starts_with(&format!(
            "kubectl-mesh_inject {}\n",
            env!("CARGO_PKG_VERSION")
        ))
    );

    use sha2::Digest;
    let sum: String = sha2::Sha256::digest(std::fs::read(&archive).expect("read"))
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let sums = std::fs::read_to_string(out.path().join(format!("{name}.sha256"))).expect("sums");
    assert_eq!(sums, format!("{sum}  {name}\n"));

    let manifest_path = out.path().join("mesh-inject.yaml");
    let text = std::fs::read_to_string(&manifest_path).expect("manifest");
    assert!(!text.contains("OWNER"), "{text}");
    assert!(!text.contains(&"0".repeat(64)), "{text}");
    let manifest = common::values(&text)
        .into_iter()
        .flatten()
        .next()
        .expect("one document");
    let version = format!("v{}", env!("CARGO_PKG_VERSION"));
    assert_eq!(manifest["spec"]["version"], version.as_str());
    assert_eq!(
        manifest["spec"]["homepage"],
        "https://example.com/acme/mesh-inject"
    );
    // Only this platform's archive was made, so only its entry is left.
    let platforms = manifest["spec"]["platforms"].as_array().expect("platforms");
    assert_eq!(platforms.len(), 1, "{text}");
    assert_eq!(
        platforms[0]["uri"],
        format!("https://example.com/acme/mesh-inject/releases/download/{version}/{name}")
    );
    assert_eq!(platforms[0]["sha256"], sum.as_str());
    assert_eq!(platforms[0]["bin"], "kubectl-mesh_inject");

    // Another platform's archive, given: its entry is filled in too.
    let other = tempfile::tempdir().expect("temp dir");
    let darwin = other
        .path()
        .join("kubectl-mesh_inject-aarch64-apple-darwin.tar.gz");
    std::fs::write(&darwin, b"another platform's archive").expect("write");
    let run: common::Run = Command::new("bash")
        .arg(common::repo().join("scripts/release.sh"))
        .args(["--repo", "https://example.com/acme/mesh-inject", "--binary"])
        .arg(&binary)
        .arg("--archive")
        .arg(&darwin)
        .arg("--out")
        .arg(other.path().join("dist"))
        .output()
        .expect("bash runs")
        .into();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = std::fs::read_to_string(other.path().join("dist/mesh-inject.yaml")).expect("read");
    let manifest = common::values(&text)
        .into_iter()
        .flatten()
        .next()
        .expect("one document");
    let platforms = manifest["spec"]["platforms"].as_array().expect("platforms");
    assert_eq!(platforms.len(), 2, "{text}");
    let darwin_sum: String = sha2::Sha256::digest(b"another platform's archive")
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(platforms[1]["sha256"], darwin_sum.as_str(), "{text}");
    assert_eq!(
        platforms[1]["selector"]["matchLabels"],
        serde_json::json!({"os": "darwin", "arch": "arm64"})
    );

    // What a release refuses: a version Cargo.toml does not give.
    let refused: common::Run = Command::new("bash")
        .arg(common::repo().join("scripts/release.sh"))
        .args([
            "--repo",
            "https://example.com/acme/mesh-inject",
            "--version",
            "v9.9.9",
            "--binary",
        ])
        .arg(&binary)
        .arg("--out")
        .arg(out.path())
        .output()
        .expect("bash runs")
        .into();
    assert_eq!(refused.code, 2);
    assert!(
        refused.stderr.contains("is not Cargo.toml's"),
        "{}",
        refused.stderr
    );

    // krew itself, from the manifest and the archive, in a root of its own.
    if available("kubectl-krew", TEST, true) {
        let root = tempfile::tempdir().expect("temp dir");
        let install = Command::new("kubectl-krew")
            .arg("install")
            .arg(format!("--manifest={}", manifest_path.display()))
            .arg(format!("--archive={}", archive.display()))
            .env("KREW_ROOT", root.path())
            .output()
            .expect("krew runs");
        assert!(install.status.success(), "{install:?}");
        let installed = Command::new(root.path().join("bin/kubectl-mesh_inject"))
            .arg("--version")
            .output()
            .expect("the installed plugin runs");
        assert!(installed.status.success());
        // Where the README's line for the shim finds it.
        let store = root.path().join("store/mesh-inject").join(&version);
        assert!(store.join("kubectl_complete-mesh_inject").is_file());
    }
}

/// A ResourceList for the KRM function: the example's objects as items,
/// with a ConfigMap as functionConfig.
fn resource_list(config: &str) -> String {
    let example =
        std::fs::read_to_string(common::testdata("example/deploy.yaml")).expect("example");
    let mut items = String::new();
    for document in example.split("\n---\n") {
        let body: String = document
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| format!("  {l}\n"))
            .collect();
        items.push_str(&format!("- {}", body.trim_start()));
    }
    format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{items}functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {{name: mesh-inject}}\n  data: {config}\n"
    )
}

/// Inside a KRM function every message names the function config's
/// entries and the function's input, never a command-line flag: the
/// missing trust anchors, an unknown value, an Istio template the embedded
/// profile lacks, native sidecars a version lacks, the fix for a Pod
/// Security rejection.
#[test]
fn a_krm_functions_messages_name_its_config_not_flags() {
    let input = resource_list("{profile: istio}");
    let gateway = input.replacen(
        "        labels:\n",
        "        annotations: {inject.istio.io/templates: gateway}\n        labels:\n",
        1,
    );
    assert_ne!(gateway, input, "the template annotation is in place");
    let restricted = input.replacen(
        "items:\n",
        "items:\n- apiVersion: v1\n  kind: Namespace\n  metadata:\n    name: shop\n    labels: {pod-security.kubernetes.io/enforce: baseline}\n",
        1,
    );
    let cases = [
        // Linkerd without its trust anchors: an error result and a failure.
        resource_list("{}"),
        resource_list("{proxyVersoin: edge-1}"),
        gateway,
        // A Job's proxy would keep it running: native sidecars are the fix.
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n\
         - apiVersion: batch/v1\n  kind: Job\n  metadata: {name: once}\n  spec:\n    template:\n\
         \x20     spec:\n        restartPolicy: Never\n        containers: [{name: app, image: app:1}]\n\
         functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: mesh-inject}\n\
         \x20 data: {profile: istio, kubeVersion: \"1.28\"}\n"
            .to_string(),
        restricted,
    ];
    // The commands that save the cluster's objects are run outside the function, flags and all.
    let flag = |text: &str| {
        text.lines()
            .filter(|line| !line.trim_start().starts_with("kubectl "))
            .flat_map(|line| line.split(|c: char| c.is_whitespace() || c == '(' || c == '"'))
            .find(|word| {
                word.strip_prefix("--")
                    .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_lowercase()))
                    || *word == "-n"
            })
            .map(str::to_string)
    };
    for (case, input) in cases.iter().enumerate() {
        let run = common::run_as_given(&[], Some(input));
        // What the function says: its results' messages, and standard error.
        let results: Vec<String> = common::values(&run.stdout)
            .into_iter()
            .flatten()
            .flat_map(|list| list["results"].as_array().cloned().unwrap_or_default())
            .filter_map(|result| Some(result["message"].as_str()?.to_string()))
            .collect();
        let said = format!("{}\n{}", results.join("\n"), run.stderr);
        assert!(
            said.contains("function config") || said.contains("function's input"),
            "case {case} names the function's config or input:\n{said}"
        );
        assert_eq!(flag(&said), None, "case {case} names a flag:\n{said}");
    }
}

/// As a KRM function, the results are the report: kpt prints them, then
/// standard error, which stays empty then (unless -v).
#[test]
fn a_krm_function_says_it_once_in_its_results() {
    let input = resource_list("{profile: istio}");
    let run = common::run(&[], Some(&input));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    let verbose = common::run(&["-v"], Some(&input));
    assert_eq!(verbose.stdout, run.stdout);
    assert!(
        verbose.stderr.contains(" injected\n") && verbose.stderr.contains("1 of 1 input changed"),
        "{}",
        verbose.stderr
    );
}

/// The KRM function contract: a ResourceList in, the same ResourceList out
/// with its items injected as functionConfig says, and results.
#[test]
fn runs_as_a_krm_function() {
    let input = resource_list("{profile: istio}");
    let mut cmd = common::command();
    cmd.arg("-q").write_stdin(input.clone());
    let run: common::Run = cmd.output().expect("runs").into();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let output = common::values(&run.stdout)
        .into_iter()
        .flatten()
        .next()
        .expect("a ResourceList");
    assert_eq!(output["kind"], "ResourceList");
    let deployment = &output["items"][0];
    let names: Vec<&str> = deployment["spec"]["template"]["spec"]["initContainers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert!(names.contains(&"istio-proxy"), "{names:?}");
    assert!(
        run.stdout.contains("# pinned by the release job"),
        "comments kept"
    );
    assert!(
        output.get("results").is_none(),
        "nothing to report: {}",
        run.stdout
    );

    // A rejection the injection causes (the iptables init container in a
    // baseline namespace): an error result naming the item, and a failed function.
    let namespace = "- apiVersion: v1\n  kind: Namespace\n  metadata:\n    name: shop\n    labels: {pod-security.kubernetes.io/enforce: baseline}\n";
    let rejected = input.replacen("items:\n", &format!("items:\n{namespace}"), 1);
    // kustomize keeps results only in a results file: standard error says why too.
    let unquiet = common::run(&[], Some(&rejected));
    assert_eq!(unquiet.code, 1);
    assert!(
        unquiet
            .stderr
            .starts_with("error: the cluster would reject what this function writes (see its results):\n  <stdin>: deployment/web: pods \"web-\" is forbidden"),
        "{}",
        unquiet.stderr
    );
    let mut cmd = common::command();
    cmd.arg("-q").write_stdin(rejected);
    let run: common::Run = cmd.output().expect("runs").into();
    assert_eq!(run.code, 1);
    let output = common::values(&run.stdout)
        .into_iter()
        .flatten()
        .next()
        .expect("a ResourceList");
    assert_eq!(
        output["results"][0],
        serde_json::json!({
            "message": "pods \"web-\" is forbidden: violates PodSecurity \"baseline:latest\": non-default capabilities (container \"istio-init\" must not include \"NET_ADMIN\", \"NET_RAW\" in securityContext.capabilities.add)",
            "severity": "error",
            "resourceRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "shop"}
        })
    );

    // A rejection the workload draws before injection too (the app sets no
    // memory limit the quota requires): a warning that says so, and the function succeeds.
    let quota = "- apiVersion: v1\n  kind: ResourceQuota\n  metadata: {name: mem, namespace: shop}\n  spec:\n    hard: {limits.memory: 8Gi}\n";
    let preexisting = input.replacen("items:\n", &format!("items:\n{quota}"), 1);
    let mut cmd = common::command();
    cmd.arg("-q").write_stdin(preexisting);
    let run: common::Run = cmd.output().expect("runs").into();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let output = common::values(&run.stdout)
        .into_iter()
        .flatten()
        .next()
        .expect("a ResourceList");
    assert_eq!(
        output["results"][0],
        serde_json::json!({
            "message": "rejected before injection too: pods \"web-\" is forbidden: failed quota: mem: must specify limits.memory for: web",
            "severity": "warning",
            "resourceRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "shop"}
        })
    );
}

/// The function's configuration goes through the flags' own parsers: what
/// the command line refuses (`--native-sidecar true`, a version that is not
/// one) the function refuses, with the flag's message; what it takes, the
/// function takes.
#[test]
fn a_krm_functions_configuration_is_parsed_as_the_flags_are() {
    let run_with = |config: &str| -> common::Run {
        let mut cmd = common::command();
        cmd.arg("-q").write_stdin(resource_list(config));
        cmd.output().expect("runs").into()
    };
    for (config, says) in [
        (
            "{profile: istio, nativeSidecar: \"true\"}",
            "functionConfig: invalid value 'true' for 'nativeSidecar' [possible values: auto, always, never]",
        ),
        (
            "{profile: istio, kubeVersion: \"1.2x\"}",
            "functionConfig: invalid value '1.2x' for 'kubeVersion'",
        ),
        (
            "{profile: nope}",
            "functionConfig: invalid value 'nope' for 'profile'",
        ),
    ] {
        let run = run_with(config);
        assert_eq!(run.code, 2, "{config}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{config}: {}", run.stderr);
        assert_eq!(run.stdout, "", "{config}: nothing written");
    }
    // As the flags take them: native sidecars on a version without them
    // (a warning), off where they would be on.
    let run = run_with("{profile: istio, nativeSidecar: never, kubeVersion: \"1.30\"}");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let output = common::values(&run.stdout)
        .into_iter()
        .flatten()
        .next()
        .expect("a ResourceList");
    let spec = &output["items"][0]["spec"]["template"]["spec"];
    let in_containers = spec["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["name"] == "istio-proxy");
    assert!(in_containers, "a classic sidecar: {spec}");

    // Uninject checks inject's settings as the flags would, and applies
    // none: what it takes out is what the record says.
    let injected = run.stdout.clone();
    let with_version = |version: &str| {
        let list = common::values(&injected)
            .into_iter()
            .flatten()
            .next()
            .expect("a ResourceList");
        let mut list = list;
        list["functionConfig"]["data"]["kubeVersion"] = serde_json::json!(version);
        serde_json::to_string(&list).expect("JSON")
    };
    let uninject = |input: String| -> common::Run {
        let mut cmd = common::command();
        cmd.args(["uninject", "-q"]).write_stdin(input);
        cmd.output().expect("runs").into()
    };
    let refused = uninject(with_version("1.2x"));
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("functionConfig: invalid value '1.2x' for 'kubeVersion'"),
        "{}",
        refused.stderr
    );
    assert_eq!(refused.stdout, "");
    for version in ["1.28", "1.30"] {
        let back = uninject(with_version(version));
        assert_eq!(back.code, 0, "{version}: {}", back.stderr);
        let items = common::values(&back.stdout)
            .into_iter()
            .flatten()
            .next()
            .expect("a ResourceList")["items"]
            .clone();
        let containers = &items[0]["spec"]["template"]["spec"]["containers"];
        assert_eq!(
            containers.as_array().map(Vec::len),
            Some(1),
            "{version}: the proxy taken out whatever the version: {containers}"
        );
    }
}

/// `kpt fn eval --exec`: the package's files are injected in place (the
/// trust anchors given as a functionConfig value, `-- trustAnchorsPEM=…`),
/// and a rejection the injection causes, or anchors missing, fails the
/// function with its result shown and nothing written.
#[test]
fn kpt_runs_the_function() {
    if !available("kpt", "kpt_runs_the_function", false) {
        return;
    }
    let binary = assert_cmd::cargo::cargo_bin("kubectl-mesh_inject");
    let dir = tempfile::tempdir().expect("temp dir");
    let package = dir.path().join("pkg");
    std::fs::create_dir(&package).expect("mkdir");
    let example =
        std::fs::read_to_string(common::testdata("example/deploy.yaml")).expect("example");
    std::fs::write(package.join("deploy.yaml"), &example).expect("write");
    let anchors = format!("trustAnchorsPEM={}", common::sample_anchors());
    let eval_with = |config: &[&str]| -> common::Run {
        Command::new("kpt")
            .args(["fn", "eval", package.to_str().expect("utf-8"), "--exec"])
            .arg(&binary)
            .args(["--truncate-output=false", "--"])
            .args(config)
            .output()
            .expect("kpt runs")
            .into()
    };
    let eval = || eval_with(&[&anchors]);

    // Without trust anchors: the error result, with the commands that fetch
    // them, and the package as it was.
    let run = eval_with(&[]);
    assert_ne!(run.code, 0);
    let shown = format!("{}{}", run.stdout, run.stderr);
    assert!(
        shown.contains("[error] apps/v1/Deployment/shop/web: deployment/web cannot be injected: value \"trustAnchorsPEM\" is empty"),
        "{shown}"
    );
    assert!(
        shown.contains("kubectl get configmap -n linkerd linkerd-identity-trust-roots -o yaml"),
        "{shown}"
    );
    assert_eq!(
        std::fs::read_to_string(package.join("deploy.yaml")).expect("read"),
        example
    );

    let run = eval();
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let injected = std::fs::read_to_string(package.join("deploy.yaml")).expect("read");
    assert!(injected.contains("name: linkerd-proxy"), "{injected}");
    assert!(
        injected.contains(common::sample_anchors().lines().nth(1).expect("a PEM line")),
        "the anchors in the proxy's env: {injected}"
    );
    assert!(
        injected.contains("# pinned by the release job"),
        "kpt keeps comments"
    );

    let namespace = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  labels: {pod-security.kubernetes.io/enforce: baseline}\n";
    std::fs::write(package.join("deploy.yaml"), &example).expect("write");
    std::fs::write(package.join("namespace.yaml"), namespace).expect("write");
    let run = eval();
    assert_ne!(run.code, 0);
    let shown = format!("{}{}", run.stdout, run.stderr);
    assert!(
        shown.contains("[error] apps/v1/Deployment/shop/web: pods \"web-\" is forbidden: violates PodSecurity \"baseline:latest\": non-default capabilities (container \"linkerd-init\" must not include \"NET_ADMIN\", \"NET_RAW\" in securityContext.capabilities.add)"),
        "{shown}"
    );
    assert_eq!(
        std::fs::read_to_string(package.join("deploy.yaml")).expect("read"),
        example
    );
}

/// kustomize runs exec KRM functions as transformers only with
/// `--enable-exec`; kubectl's built-in kustomize may not have that flag.
#[test]
fn kustomize_runs_the_function_as_a_transformer() {
    if !available(
        "kubectl",
        "kustomize_runs_the_function_as_a_transformer",
        false,
    ) {
        return;
    }
    let help = Command::new("kubectl")
        .args(["kustomize", "--help"])
        .output()
        .expect("kubectl runs");
    if !String::from_utf8_lossy(&help.stdout).contains("--enable-exec") {
        common::skip_test(
            "kustomize_runs_the_function_as_a_transformer",
            "kubectl's built-in kustomize has no --enable-exec; exec functions cannot run under it",
        );
        return;
    }
    let binary = assert_cmd::cargo::cargo_bin("kubectl-mesh_inject");
    let dir = tempfile::tempdir().expect("temp dir");
    let example =
        std::fs::read_to_string(common::testdata("example/deploy.yaml")).expect("example");
    std::fs::write(dir.path().join("deploy.yaml"), example).expect("write");
    std::fs::write(
        dir.path().join("kustomization.yaml"),
        "resources: [deploy.yaml]\ntransformers: [inject.yaml]\n",
    )
    .expect("write");
    let transformer = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mesh-inject\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: {}\ndata:\n  profile: istio\n",
        binary.display()
    );
    std::fs::write(dir.path().join("inject.yaml"), transformer).expect("write");
    let out = Command::new("kubectl")
        .args(["kustomize", "--enable-alpha-plugins", "--enable-exec"])
        .arg(dir.path())
        .output()
        .expect("kubectl runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("name: istio-proxy"));
}

/// The README's install lines run as written in a new home folder (the
/// built binary standing in for `cargo install`'s), then each completion
/// where it was put: kubectl through the shim, bash through bash-completion's
/// loading on demand, fish and zsh from their folders, man from its.
#[test]
fn the_readme_installs_the_completions() {
    const TEST: &str = "the_readme_installs_the_completions";
    let block = readme_block("install -m 755 kubectl_complete-mesh_inject ~/.cargo/bin/");
    let (first, rest) = block.split_once('\n').expect("lines");
    assert!(
        first.starts_with("cargo install --locked --path ."),
        "{first}"
    );
    let home = tempfile::tempdir().expect("temp dir");
    let bin = home.path().join(".cargo/bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    std::fs::copy(
        assert_cmd::cargo::cargo_bin("kubectl-mesh_inject"),
        bin.join("kubectl-mesh_inject"),
    )
    .expect("copy");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // Each shell as a user's: the new home, no XDG folders of the test's own.
    let in_home = |program: &str, args: &[&str]| -> common::Run {
        Command::new(program)
            .args(args)
            .current_dir(common::repo())
            .env("HOME", home.path())
            .env("PATH", &path)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .env_remove("BASH_COMPLETION_USER_DIR")
            .output()
            .expect("runs")
            .into()
    };
    let run = in_home("bash", &["-euc", rest]);
    assert_eq!(run.code, 0, "{rest}\n{}", run.stderr);

    assert!(
        home.path()
            .join(".cargo/share/man/man1/kubectl-mesh_inject.1")
            .is_file()
    );
    if available("kubectl", TEST, true) {
        let run = in_home("kubectl", &["__complete", "mesh-inject", "--pro"]);
        assert_eq!(run.stdout, "--profile\n:4\n", "{}", run.stderr);
    }
    let helpers = "/usr/share/bash-completion/bash_completion";
    if Path::new(helpers).exists() {
        let load = format!(
            "source {helpers}; __load_completion kubectl-mesh_inject && complete -p kubectl-mesh_inject"
        );
        let run = in_home("bash", &["--norc", "-c", &load]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(run.stdout.contains("kubectl-mesh_inject"), "{}", run.stdout);
    } else {
        common::skip_part(TEST, "bash-completion is not installed");
    }
    if available("fish", TEST, true) {
        let run = in_home("fish", &["-c", "complete -C 'kubectl-mesh_inject --pro'"]);
        assert!(
            run.stdout.starts_with("--profile"),
            "{}{}",
            run.stdout,
            run.stderr
        );
    }
    if available("zsh", TEST, true) {
        let script = "fpath=(~/.zfunc $fpath); autoload -Uz compinit; compinit -u -d ~/.zcompdump; print -r -- $_comps[kubectl-mesh_inject]";
        let run = in_home("zsh", &["-f", "-c", script]);
        assert_eq!(run.stdout, "_kubectl-mesh_inject\n", "{}", run.stderr);
    }
}

/// The trap the README warns of beside the transformer: kubectl's built-in
/// kustomize, given `--enable-alpha-plugins` but unable to run exec
/// functions, exits 0 with the manifests uninjected. The README's check on
/// what it rendered fails (status 1) and names the workload; on injected
/// manifests it passes.
#[test]
fn kubectl_kustomize_skips_the_transformer_and_the_check_catches_it() {
    const TEST: &str = "kubectl_kustomize_skips_the_transformer_and_the_check_catches_it";
    if !available("kubectl", TEST, false) {
        return;
    }
    let help = Command::new("kubectl")
        .args(["kustomize", "--help"])
        .output()
        .expect("kubectl runs");
    if String::from_utf8_lossy(&help.stdout).contains("--enable-exec") {
        common::skip_test(
            TEST,
            "this kubectl's kustomize has --enable-exec: it runs the function",
        );
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let example =
        std::fs::read_to_string(common::testdata("example/deploy.yaml")).expect("example");
    std::fs::write(dir.path().join("deploy.yaml"), &example).expect("write");
    std::fs::write(
        dir.path().join("kustomization.yaml"),
        "resources: [deploy.yaml]\ntransformers: [inject.yaml]\n",
    )
    .expect("write");
    let transformer = readme_block("config.kubernetes.io/function: |");
    std::fs::write(dir.path().join("inject.yaml"), &transformer).expect("write");
    // The tool on the PATH, where kustomize would look for it.
    let rendered = Command::new("kubectl")
        .args(["kustomize", "--enable-alpha-plugins"])
        .arg(dir.path())
        .env("PATH", path_with_binary())
        .output()
        .expect("kubectl runs");
    assert!(rendered.status.success(), "{rendered:?}");
    let rendered = String::from_utf8(rendered.stdout).expect("UTF-8");
    assert!(rendered.contains("kind: Deployment"), "{rendered}");
    assert!(!rendered.contains("istio-proxy"), "{rendered}");

    let check = |input: &str| -> common::Run {
        let block = readme_block("| kubectl mesh-inject --check --profile istio");
        let flags: Vec<&str> = block
            .split("| kubectl mesh-inject ")
            .nth(1)
            .expect("the check")
            .split_whitespace()
            .collect();
        let mut cmd = common::command();
        cmd.args(&flags).write_stdin(input.to_string());
        cmd.output().expect("runs").into()
    };
    let run = check(&rendered);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("would inject: <stdin>"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("deployment/web: not injected"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stdout, "", "--check writes nothing");

    let injected = common::run(&["-q", "--profile", "istio"], Some(&rendered));
    assert_eq!(injected.code, 0, "{}", injected.stderr);
    let run = check(&injected.stdout);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

/// kubectl (1.26+) completes plugin arguments through
/// `kubectl_complete-mesh_inject`, which the repository carries.
#[test]
fn kubectl_completes_the_plugin() {
    if !available("kubectl", "kubectl_completes_the_plugin", false) {
        return;
    }
    let path = format!("{}:{}", common::repo().display(), path_with_binary());
    let complete = |args: &[&str]| -> String {
        let out = Command::new("kubectl")
            .arg("__complete")
            .arg("mesh-inject")
            .args(args)
            .env("PATH", &path)
            .output()
            .expect("kubectl runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(complete(&["--pro"]), "--profile\n:4\n");
    assert_eq!(complete(&["--profile", ""]), "linkerd\nistio\n:4\n");
    assert_eq!(complete(&["admit", "--comp"]), "--compare\n:4\n");
    assert_eq!(complete(&["inject", "-o", ""]), "yaml\njson\npatch\n:4\n");
    assert_eq!(complete(&["admit", "--output=t"]), "text\n:4\n");
    assert_eq!(complete(&["ver"]), "verify\nversion\n:0\n");

    // The whole way, as a user presses TAB: kubectl's own completion
    // script in a shell, asking kubectl, which asks the plugin.
    let cases: [(&str, &[&str]); 3] = [
        ("kubectl mesh-inject inject -o ", &["json", "patch", "yaml"]),
        ("kubectl mesh-inject admit --comp", &["--compare"]),
        ("kubectl mesh-inject ver", &["verify", "version"]),
    ];
    const TEST: &str = "kubectl_completes_the_plugin";
    let fish = Command::new("fish").arg("--version").output();
    if fish.is_ok_and(|o| o.status.success()) {
        for (line, expected) in cases {
            let out = Command::new("fish")
                .args([
                    "--no-config",
                    "-c",
                    "kubectl completion fish | source; complete -C $argv[1]",
                ])
                .arg(line)
                .env("PATH", &path)
                .output()
                .expect("fish runs");
            let mut got: Vec<String> = String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(|l| l.split('\t').next().unwrap_or_default().to_string())
                .collect();
            got.sort();
            assert_eq!(got, expected, "fish: {line}");
        }
    } else {
        common::skip_part(TEST, "fish is not installed");
    }
    // kubectl's bash script needs the bash-completion package's helpers.
    let helpers = Path::new("/usr/share/bash-completion/bash_completion");
    if !helpers.exists() {
        common::skip_part(
            TEST,
            "bash-completion is not installed (kubectl's bash completion needs it)",
        );
        return;
    }
    const DRIVER: &str = r#"
source /usr/share/bash-completion/bash_completion
source <(kubectl completion bash) || exit 3
read -r -a COMP_WORDS <<< "$1"
[[ "$1" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMP_LINE="$1"
COMP_POINT=${#COMP_LINE}
__start_kubectl kubectl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}" 2>/dev/null
printf '%s\n' "${COMPREPLY[@]}"
"#;
    for (line, expected) in cases {
        let out = Command::new("bash")
            .args(["--norc", "--noprofile", "-c", DRIVER, "bash", line])
            .env("PATH", &path)
            .output()
            .expect("bash runs");
        let mut got: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect();
        got.sort();
        assert_eq!(got, expected, "bash: {line}: {out:?}");
    }
}

/// The README's install line for the man pages puts them where `man` finds
/// them with no `MANPATH`: beside the folder on `PATH` that holds the tool.
#[test]
fn man_finds_the_pages_where_the_readme_installs_them() {
    let test = "man_finds_the_pages_where_the_readme_installs_them";
    if !available("man", test, false) {
        return;
    }
    let block = readme_block("# man kubectl-mesh_inject");
    let line = block
        .lines()
        .find(|l| l.contains("man/*.1"))
        .and_then(|l| l.split('#').next())
        .expect("the man pages' install line");
    let home = tempfile::tempdir().expect("tempdir");
    let bin = home.path().join(".cargo/bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let install = Command::new("sh")
        .args(["-c", line])
        .current_dir(common::repo())
        .env("HOME", home.path())
        .output()
        .expect("sh runs");
    assert!(install.status.success(), "{line}: {install:?}");
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display());
    let found = Command::new("man")
        .args(["-w", "kubectl-mesh_inject"])
        .env("HOME", home.path())
        .env("PATH", path)
        .env_remove("MANPATH")
        .output()
        .expect("man runs");
    let where_found = String::from_utf8_lossy(&found.stdout);
    let expected = home
        .path()
        .join(".cargo/share/man/man1/kubectl-mesh_inject.1");
    assert_eq!(
        where_found.trim(),
        expected.display().to_string(),
        "{found:?}"
    );
}

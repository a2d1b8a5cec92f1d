//! The completions as a user gets them: the scripts kept in `completions/`
//! are loaded into real bash, fish and zsh and asked to complete command
//! lines, and kubectl's plugin completion (`kubectl_complete-mesh_inject`)
//! is run as kubectl runs it. A shell that is not installed is skipped, and
//! says so. tests/generated.rs checks that the scripts are current.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = "kubectl-mesh_inject";

/// Whether `shell` runs here; when it does not, `test` is skipped and says
/// so. Under CI a shell on the PATH that fails to start is a failure.
fn available(shell: &str, test: &str) -> bool {
    let run = Command::new(shell).arg("--version").output();
    if run.as_ref().is_ok_and(|o| o.status.success()) {
        return true;
    }
    if run.is_ok() && std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{shell} is installed but `{shell} --version` fails: {run:?}");
    }
    common::skip_test(test, &format!("{shell} is not installed"));
    false
}

fn script(name: &str) -> PathBuf {
    common::repo().join("completions").join(name)
}

/// A directory to complete in, holding `deploy.yaml` and `dir/`, for the
/// values that are paths.
fn workdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("deploy.yaml"), "kind: Pod\n").expect("write");
    std::fs::create_dir(dir.path().join("dir")).expect("mkdir");
    dir
}

fn lines(bytes: &[u8]) -> Vec<String> {
    let mut out: Vec<String> = String::from_utf8_lossy(bytes)
        .lines()
        .map(str::to_string)
        .collect();
    out.sort();
    out
}

fn sorted(words: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = words.iter().map(|w| w.to_string()).collect();
    out.sort();
    out
}

/// What each shell must offer for a command line (`words`, the last one
/// being completed): the cases every shell is checked on.
fn cases() -> Vec<(Vec<&'static str>, Vec<&'static str>)> {
    vec![
        // Subcommands and their flags.
        (vec!["ad"], vec!["admit"]),
        (vec!["ver"], vec!["verify", "version"]),
        (vec!["veri"], vec!["verify"]),
        (vec!["inject", "-o", ""], vec!["yaml", "json", "patch"]),
        (vec!["inject", "--output", "j"], vec!["json"]),
        (vec!["admit", "-o", ""], vec!["text", "yaml", "json"]),
        (vec!["admit", "--comp"], vec!["--compare"]),
        (vec!["admit", "--tr"], vec!["--trace"]),
        (vec!["uninject", "--pro"], vec!["--profile"]),
        (vec!["uninject", "--profile", ""], vec!["linkerd", "istio"]),
        (vec!["config", "--profile", "i"], vec!["istio"]),
        (
            vec!["inject", "--native-sidecar", ""],
            vec!["auto", "always", "never"],
        ),
        (vec!["admit", "--color", "n"], vec!["never"]),
        // Paths after a subcommand's path flags.
        (vec!["inject", "-f", "dep"], vec!["deploy.yaml"]),
        (vec!["admit", "--context", "dep"], vec!["deploy.yaml"]),
        // Without a subcommand.
        (vec!["-o", ""], vec!["yaml", "json", "patch"]),
        (vec!["--warn"], vec!["--warn-only"]),
        (vec!["--profile", ""], vec!["linkerd", "istio"]),
    ]
}

/// Complete `words` with the bash script: sourced into a bash, its function
/// found through `complete -p` and called as bash calls it, with
/// COMP_WORDS and COMP_CWORD set; COMPREPLY is the answer. Returns the
/// binding `complete -p` shows, and the candidates.
fn bash_complete(dir: &Path, words: &[&str]) -> (String, Vec<String>) {
    const DRIVER: &str = r#"
source "$1" || exit 3
spec=$(complete -p kubectl-mesh_inject) || exit 3
printf '%s\n' "$spec" >&2
fn=${spec#*-F }
fn=${fn%% *}
shift
COMP_WORDS=("$@")
COMP_CWORD=$(( $# - 1 ))
COMP_LINE="$*"
COMP_POINT=${#COMP_LINE}
"$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d'
"#;
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", DRIVER, "bash"])
        .arg(script("kubectl-mesh_inject.bash"))
        .arg(BIN)
        .args(words)
        .current_dir(dir)
        .output()
        .expect("bash runs");
    assert!(out.status.success(), "{words:?}: {out:?}");
    let spec = String::from_utf8_lossy(&out.stderr).trim().to_string();
    (spec, lines(&out.stdout))
}

#[test]
fn bash_completes_subcommands_their_flags_and_values() {
    if !available("bash", "bash_completes_subcommands_their_flags_and_values") {
        return;
    }
    let dir = workdir();
    let (spec, _) = bash_complete(dir.path(), &[""]);
    assert!(
        spec.starts_with("complete ") && spec.ends_with(" kubectl-mesh_inject"),
        "{spec}"
    );
    assert!(spec.contains(" -F _kubectl__mesh_inject "), "{spec}");
    for (words, expected) in cases() {
        let (_, got) = bash_complete(dir.path(), &words);
        assert_eq!(got, sorted(&expected), "bash: {BIN} {}", words.join(" "));
    }
}

/// Complete `words` with the fish script: `complete -C` after sourcing it;
/// each candidate without its description.
fn fish_complete(dir: &Path, words: &[&str]) -> Vec<String> {
    let line = format!("{BIN} {}", words.join(" "));
    let out = Command::new("fish")
        .args([
            "--no-config",
            "-c",
            "source $argv[1]; and complete -C $argv[2]",
        ])
        .arg(script("kubectl-mesh_inject.fish"))
        .arg(&line)
        .current_dir(dir)
        .output()
        .expect("fish runs");
    assert!(out.status.success(), "{line}: {out:?}");
    let mut got: Vec<String> = lines(&out.stdout)
        .into_iter()
        .map(|l| l.split('\t').next().unwrap_or_default().to_string())
        .collect();
    got.sort();
    got.dedup();
    got
}

#[test]
fn fish_completes_subcommands_their_flags_and_values() {
    if !available("fish", "fish_completes_subcommands_their_flags_and_values") {
        return;
    }
    let dir = workdir();
    for (words, expected) in cases() {
        let got = fish_complete(dir.path(), &words);
        assert_eq!(got, sorted(&expected), "fish: {BIN} {}", words.join(" "));
    }
}

/// Complete `words` in an interactive zsh on a pseudo-terminal, with the
/// zsh script on fpath and compinit run (tests/shells/capture.zsh).
fn zsh_complete(dir: &Path, words: &[&str]) -> Vec<String> {
    let line = format!("{BIN} {}", words.join(" "));
    let out = Command::new("timeout")
        .arg("60")
        .args(["zsh", "-f"])
        .arg(common::repo().join("tests/shells/capture.zsh"))
        .arg(common::repo().join("completions"))
        .arg(&line)
        .current_dir(dir)
        .output()
        .expect("zsh runs");
    assert!(out.status.success(), "{line}: {out:?}");
    lines(&out.stdout)
}

#[test]
fn zsh_completes_subcommands_their_flags_and_values() {
    const TEST: &str = "zsh_completes_subcommands_their_flags_and_values";
    if !available("zsh", TEST) {
        return;
    }
    let zpty = Command::new("zsh")
        .args(["-f", "-c", "zmodload zsh/zpty"])
        .status();
    if !zpty.is_ok_and(|s| s.success()) {
        common::skip_test(TEST, "zsh has no zsh/zpty module to run a pseudo-terminal");
        return;
    }
    let dir = workdir();
    for (words, expected) in cases() {
        let got = zsh_complete(dir.path(), &words);
        assert_eq!(got, sorted(&expected), "zsh: {BIN} {}", words.join(" "));
    }
}

/// Run `kubectl_complete-mesh_inject` (the repository's shim) as kubectl
/// runs it, with the built binary on the PATH: its whole answer.
fn plugin_complete(words: &[&str]) -> String {
    let binary = assert_cmd::cargo::cargo_bin(BIN);
    let bin_dir = binary.parent().expect("a directory").to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("sh")
        .arg(common::repo().join("kubectl_complete-mesh_inject"))
        .args(words)
        .env("PATH", path)
        .output()
        .expect("the shim runs");
    assert!(out.status.success(), "{words:?}: {out:?}");
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn kubectls_plugin_completion_completes_subcommands_their_flags_and_values() {
    for (words, expected) in cases() {
        let answer = plugin_complete(&words);
        let (candidates, directive) = answer
            .trim_end_matches('\n')
            .rsplit_once('\n')
            .map_or(("", answer.trim_end()), |(c, d)| (c, d));
        let paths = words
            .iter()
            .rev()
            .nth(1)
            .is_some_and(|w| ["-f", "--context"].contains(w));
        if paths {
            // Paths are left to the shell: no candidate, files allowed.
            assert_eq!(answer, ":0\n", "{words:?}");
            continue;
        }
        let mut got: Vec<String> = candidates.lines().map(str::to_string).collect();
        got.sort();
        assert_eq!(got, sorted(&expected), "plugin: {words:?}");
        assert!(directive.starts_with(':'), "{words:?}: {answer}");
    }
    // `--flag=value`, as kubectl's shells hand it over: the values alone.
    assert_eq!(plugin_complete(&["--output=j"]), "json\n:4\n");
    assert_eq!(
        plugin_complete(&["admit", "--output="]),
        "text\nyaml\njson\n:4\n"
    );
    // A file named like a subcommand is a file, not the subcommand.
    assert_eq!(plugin_complete(&["-f", "admit", "--tr"]), ":4\n");
}

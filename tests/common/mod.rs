//! Helpers shared by the CLI tests: run the real binary, find test inputs.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;

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

pub fn command() -> Command {
    let mut cmd = Command::cargo_bin("kubectl-mesh_inject").expect("binary is built");
    cmd.env_remove("NO_COLOR");
    cmd
}

/// Run with `args`, feeding `stdin` (empty when `None`).
pub fn run(args: &[&str], stdin: Option<&str>) -> Run {
    let mut cmd = command();
    cmd.args(args)
        .write_stdin(stdin.unwrap_or("").as_bytes().to_vec());
    cmd.output().expect("runs").into()
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

pub fn testdata(rel: &str) -> PathBuf {
    repo().join("testdata").join(rel)
}

/// `../shared/corpus` beside the repository, if this checkout has it.
pub fn corpus() -> Option<PathBuf> {
    let dir = repo().join("../shared/corpus");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "SKIPPED: ../shared/corpus is not beside this checkout; corpus properties not checked"
        );
        None
    }
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

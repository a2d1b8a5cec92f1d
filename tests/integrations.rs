//! The tool inside the tools users already run, driven for real where the
//! machine has them; a visible SKIPPED line where it does not.

mod common;

use std::path::Path;
use std::process::Command;

/// Whether `program` runs here; says SKIPPED when it does not.
fn available(program: &str, what: &str) -> bool {
    let found = Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("SKIPPED: {program} is not installed; {what} not checked");
    }
    found
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
/// repository holding one injected and one stale manifest.
#[test]
fn pre_commit_hooks_check_and_inject() {
    if !available("pre-commit", "the pre-commit hooks") {
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
            // Build the hook with the project's own target directory: no second full build.
            .env("CARGO_TARGET_DIR", common::repo().join("target"))
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

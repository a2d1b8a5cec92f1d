//! Shell completions and the man page are generated from the CLI
//! definition and kept in the repository; these tests fail when the kept
//! files are stale. Regenerate with `UPDATE_GENERATED=1 cargo test --test generated`.

mod common;

use clap::CommandFactory;
use clap_complete::Shell;
use mesh_inject::cli::Cli;

/// Compare `content` with the kept file `rel`, or write it when asked to.
fn kept(rel: &str, content: &[u8]) {
    let path = common::repo().join(rel);
    if std::env::var_os("UPDATE_GENERATED").is_some() {
        std::fs::create_dir_all(path.parent().expect("a directory")).expect("mkdir");
        std::fs::write(&path, content).expect("write");
        return;
    }
    let on_disk = std::fs::read(&path).unwrap_or_default();
    assert!(
        on_disk == content,
        "{rel} is stale: regenerate with UPDATE_GENERATED=1 cargo test --test generated"
    );
}

#[test]
fn completions_are_current() {
    for (shell, file) in [
        (Shell::Bash, "completions/kubectl-mesh_inject.bash"),
        (Shell::Zsh, "completions/_kubectl-mesh_inject"),
        (Shell::Fish, "completions/kubectl-mesh_inject.fish"),
        (Shell::PowerShell, "completions/_kubectl-mesh_inject.ps1"),
    ] {
        let mut out = Vec::new();
        clap_complete::generate(shell, &mut Cli::command(), "kubectl-mesh_inject", &mut out);
        kept(file, &out);
    }
}

#[test]
fn man_page_is_current() {
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command().name("kubectl-mesh_inject"))
        .render(&mut out)
        .expect("renders");
    kept("man/kubectl-mesh_inject.1", &out);
}

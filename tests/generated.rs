//! Shell completions and the man pages are generated from the CLI
//! definition and kept in the repository; these tests fail when the kept
//! files are stale. Regenerate with `UPDATE_GENERATED=1 cargo test --test generated`.
//! tests/completion.rs drives the kept completion scripts in the shells.

mod common;

use clap::CommandFactory;
use clap_complete::Shell;
use mesh_inject::cli::Cli;

/// The binary the completions are for.
const BIN: &str = "kubectl-mesh_inject";

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

/// The completion script for `shell`, as clap_complete writes it for the
/// binary, with what it gets wrong for this command repaired.
fn completion(shell: Shell) -> String {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), BIN, &mut out);
    let script = String::from_utf8(out).expect("UTF-8");
    match shell {
        Shell::Bash => repair_bash(script),
        Shell::Fish => repair_fish(script),
        Shell::Zsh => repair_zsh(script),
        _ => script,
    }
}

/// bash: the function walking the words names the command it is in after
/// the binary (`-` made `__`: `kubectl__mesh_inject__subcmd__admit`), but
/// the `case` that completes each command is labelled after the command's
/// bin name with `-` made `__subcmd__` (`kubectl__subcmd__mesh_inject__subcmd__admit`),
/// so nothing after a subcommand completed. The labels take the walk's names.
fn repair_bash(script: String) -> String {
    let walk = BIN.replace('-', "__");
    let label = BIN.replace('-', "__subcmd__");
    let repaired = script.replace(&format!("{label}__subcmd__"), &format!("{walk}__subcmd__"));
    assert!(
        !repaired.contains(&label),
        "every label is one the walk gives"
    );
    repaired
}

/// fish: the test for "no subcommand yet" parses the words typed so far
/// with the top level's options, and gave up when the last of them waits
/// for its value (`kubectl-mesh_inject -o <TAB>`), so that none of the top
/// level's completions applied there. The parse stops at the first word
/// that is not an option (a subcommand), so a failure means the top level.
fn repair_fish(script: String) -> String {
    let parse = format!(
        "    argparse -s (__fish_{}_global_optspecs) -- $cmd 2>/dev/null\n    or return\n",
        BIN.replace('-', "_")
    );
    assert!(
        script.contains(&parse),
        "fish's parse of the words is found"
    );
    script.replace(
        &parse,
        &parse.replace("or return\n", "or return 0 # a value is still to come\n"),
    )
}

/// zsh: at the top level, _arguments took the first word for the optional
/// file given without -f (FILE) before it would take it for a subcommand,
/// looked for the subcommand in the second word, and went on reading the
/// words after a subcommand with the top level's options, so that `admit
/// -o <TAB>` offered the top level's values (yaml, json, patch) and `admit
/// --comp<TAB>` nothing. Now the first word is the subcommand, and once it
/// is there, the top level's options are out (`(-)`, as git's completion
/// does): the subcommand's own are completed. Files are completed after -f
/// (and as a subcommand's FILE), not as the top level's first word.
fn repair_zsh(script: String) -> String {
    let mut lines: Vec<&str> = script.split_inclusive('\n').collect();
    let file = lines
        .iter()
        .position(|l| l.starts_with("'::files -- "))
        .expect("the top level's FILE");
    lines.remove(file);
    let script: String = lines.concat();
    assert_eq!(
        script.matches("$line[2]").count(),
        3,
        "the top level's subcommand is looked for in the second word"
    );
    let commands = format!("\":: :_{BIN}_commands\" \\\n\"*::: :->{BIN}\" \\\n");
    assert!(
        script.contains(&commands),
        "the top level's subcommand and the words after it"
    );
    script.replace("$line[2]", "$line[1]").replace(
        &commands,
        &format!("\"(-):: :_{BIN}_commands\" \\\n\"(-)*::: :->{BIN}\" \\\n"),
    )
}

#[test]
fn completions_are_current() {
    for (shell, file) in [
        (Shell::Bash, "completions/kubectl-mesh_inject.bash"),
        (Shell::Zsh, "completions/_kubectl-mesh_inject"),
        (Shell::Fish, "completions/kubectl-mesh_inject.fish"),
        (Shell::PowerShell, "completions/_kubectl-mesh_inject.ps1"),
    ] {
        kept(file, completion(shell).as_bytes());
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

//! Shell completions and the man pages are generated from the CLI
//! definition and kept in the repository; these tests fail when the kept
//! files are stale. Regenerate with `UPDATE_GENERATED=1 cargo test --test generated`.
//! tests/completion.rs drives the kept completion scripts in the shells.

use crate::common;

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

/// The rows of the Exit status table (docs/usage.md): each status and its
/// meaning, as plain text (without the Markdown backticks).
fn readme_exit_statuses() -> Vec<(String, String)> {
    let readme = common::doc("docs/usage.md");
    let section = readme
        .split("\n## Exit status\n")
        .nth(1)
        .expect("docs/usage.md has an Exit status section");
    let rows: Vec<(String, String)> = section
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter_map(|row| {
            let cells: Vec<&str> = row.trim_matches('|').split(" | ").map(str::trim).collect();
            match cells.as_slice() {
                [status, meaning] if status.parse::<u8>().is_ok() => {
                    Some((status.to_string(), meaning.replace('`', "")))
                }
                _ => None,
            }
        })
        .collect();
    assert!(!rows.is_empty(), "the Exit status table has rows");
    rows
}

/// `text` as roff text: backslashes and hyphens escaped, no line taken for
/// a request.
fn roff(text: &str) -> String {
    let escaped = text.replace('\\', "\\\\").replace('-', "\\-");
    if escaped.starts_with('.') || escaped.starts_with('\'') {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

/// The man page of `command` (the top level or a subcommand), as
/// clap_mangen renders it, with EXIT STATUS (from README's table) and, for
/// commands with --color, ENVIRONMENT after the options and subcommands,
/// and SEE ALSO, naming the tool's other pages (`pages`), at the end.
fn man_page(command: &clap::Command, pages: &[String]) -> String {
    let mut out = Vec::new();
    clap_mangen::Man::new(command.clone())
        .source(format!("{BIN} {}", env!("CARGO_PKG_VERSION")))
        .render(&mut out)
        .expect("renders");
    let page = String::from_utf8(out).expect("UTF-8");
    let mut sections = String::from(".SH \"EXIT STATUS\"\n");
    for (status, meaning) in readme_exit_statuses() {
        sections.push_str(&format!(".TP\n\\fB{status}\\fR\n{}\n", roff(&meaning)));
    }
    if command.get_arguments().any(|a| a.get_id() == "color") {
        sections.push_str(&format!(
            ".SH ENVIRONMENT\n.TP\n\\fBNO_COLOR\\fR\n{}\n",
            roff(
                "When set and not empty, --color auto (the default) colours nothing: \
                 not the diff, not the errors, warnings and rejections. \
                 --color always still colours."
            )
        ));
        if command.get_arguments().any(|a| a.get_id() == "in_place") {
            sections.push_str(&format!(
                ".TP\n\\fBMESH_INJECT_PROGRESS_DELAY_MS\\fR\n{}\n",
                roff(
                    "How long a run goes, in milliseconds, before it shows how far it has got \
                     on standard error, when that is a terminal (default 1000)."
                )
            ));
        }
    }
    // Before the examples and the version, as man-pages(7) orders them.
    let at = [".SH EXTRA\n", ".SH VERSION\n", ".SH AUTHORS\n"]
        .iter()
        .filter_map(|heading| page.find(heading))
        .min()
        .unwrap_or(page.len());
    let (before, after) = page.split_at(at);
    let name = command.get_display_name().unwrap_or(command.get_name());
    let others: Vec<String> = pages
        .iter()
        .filter(|p| p.as_str() != name)
        .map(|p| format!("\\fB{}\\fR(1)", roff(p)))
        .collect();
    format!(
        "{before}{sections}{after}.SH \"SEE ALSO\"\n{}\n",
        others.join(", ")
    )
}

/// Every man page: the top level's and each subcommand's, theirs too
/// (`context save`), the `help` subcommands aside, by file name.
fn man_pages() -> Vec<(String, String)> {
    let mut root = Cli::command().disable_help_subcommand(true);
    root.build();
    let shown = |s: &&clap::Command| !s.is_hide_set() && s.get_name() != "help";
    let commands: Vec<&clap::Command> = std::iter::once(&root)
        .chain(
            root.get_subcommands()
                .filter(shown)
                .flat_map(|s| std::iter::once(s).chain(s.get_subcommands().filter(shown))),
        )
        .collect();
    let names: Vec<String> = commands
        .iter()
        .map(|c| c.get_display_name().unwrap_or(c.get_name()).to_string())
        .collect();
    commands
        .iter()
        .zip(&names)
        .map(|(command, name)| (format!("{name}.1"), man_page(command, &names)))
        .collect()
}

/// The man pages kept in man/, by file name.
fn kept_man_pages() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(common::repo().join("man"))
        .expect("man/")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".1"))
        .collect();
    names.sort();
    names
}

#[test]
fn man_pages_are_current() {
    let pages = man_pages();
    for (name, page) in &pages {
        kept(&format!("man/{name}"), page.as_bytes());
    }
    // No page is left of a subcommand that went.
    let mut generated: Vec<String> = pages.into_iter().map(|(name, _)| name).collect();
    generated.sort();
    assert_eq!(
        kept_man_pages(),
        generated,
        "man/ holds exactly the generated pages"
    );
}

#[test]
fn man_pages_refer_only_to_pages_that_exist() {
    let pages = kept_man_pages();
    for name in &pages {
        let text = std::fs::read_to_string(common::repo().join("man").join(name)).expect("page");
        let text = text
            .replace("\\fB", "")
            .replace("\\fR", "")
            .replace("\\-", "-");
        let mut referred = 0;
        for (at, _) in text.match_indices("(1)") {
            let word: String = text[..at]
                .chars()
                .rev()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect::<Vec<char>>()
                .into_iter()
                .rev()
                .collect();
            if word.is_empty() {
                continue;
            }
            referred += 1;
            assert!(
                pages.contains(&format!("{word}.1")),
                "{name} refers to {word}(1), which man/ does not hold"
            );
        }
        assert!(referred > 0, "{name} refers to the other pages");
        assert!(text.contains(".SH \"SEE ALSO\"\n"), "{name} has SEE ALSO");
    }
}

#[test]
fn man_pages_give_the_exit_status_of_the_readme() {
    let statuses = readme_exit_statuses();
    let codes: Vec<&str> = statuses.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(codes, ["0", "1", "2"]);
    for name in kept_man_pages() {
        let text = std::fs::read_to_string(common::repo().join("man").join(&name)).expect("page");
        let section = text
            .split(".SH \"EXIT STATUS\"\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{name} has no EXIT STATUS section"));
        let section = format!("{}\n", section.split("\n.SH ").next().unwrap_or_default());
        for (status, meaning) in &statuses {
            assert!(
                section.contains(&format!(".TP\n\\fB{status}\\fR\n{}\n", roff(meaning))),
                "{name}: status {status}"
            );
        }
    }
}

/// groff reads every page without a warning, where groff is installed.
#[test]
fn man_pages_render_without_warnings() {
    let groff = std::process::Command::new("groff")
        .arg("--version")
        .output();
    if !groff.is_ok_and(|o| o.status.success()) {
        common::skip_test(
            "man_pages_render_without_warnings",
            "groff is not installed",
        );
        return;
    }
    for name in kept_man_pages() {
        let out = std::process::Command::new("groff")
            .args(["-man", "-Tutf8", "-ww", "-z"])
            .arg(common::repo().join("man").join(&name))
            .output()
            .expect("groff runs");
        assert!(out.status.success(), "{name}: {out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{name}");
    }
}

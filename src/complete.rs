//! Completion for kubectl's plugin protocol (kubectl 1.26+): kubectl runs
//! `kubectl_complete-mesh_inject ARGS… WORD` to complete
//! `kubectl mesh-inject ARGS… WORD`, which runs `kubectl-mesh_inject
//! __complete ARGS… WORD`. The answer is one candidate a line, then
//! `:DIRECTIVE` (0: let the shell complete files too; 4: no files), and
//! comes from the CLI definition itself.

use clap::{Command, CommandFactory};

use crate::cli::Cli;

const FILES_TOO: u8 = 0;
const NO_FILES: u8 = 4;

/// The answer to `__complete` with `args` (the last one is the word being
/// completed). A word `--flag=partial` completes the flag's values (the
/// shell keeps the `--flag=` before them, as kubectl's scripts do).
pub fn answer(args: &[String]) -> String {
    let (current, words) = match args.split_last() {
        Some((current, words)) => (current.as_str(), words),
        None => ("", &[][..]),
    };
    let root = Cli::command();
    let (command, words, top) = innermost(&root, words);
    let (candidates, directive, current) = match current
        .strip_prefix("--")
        .and_then(|flag| flag.split_once('='))
    {
        Some((flag, partial)) => {
            let (values, directive) = candidates(command, &[format!("--{flag}")], "", false);
            (values, directive, partial)
        }
        None => {
            let (names, directive) = candidates(command, words, current, top);
            (names, directive, current)
        }
    };
    let mut out: String = candidates
        .into_iter()
        .filter(|c| c.starts_with(current))
        .map(|c| c + "\n")
        .collect();
    out.push_str(&format!(":{directive}\n"));
    out
}

/// The command `words` reach (`context save` within `context`), the words
/// after it, and whether its own subcommands are what comes next.
fn innermost<'a, 'w>(root: &'a Command, words: &'w [String]) -> (&'a Command, &'w [String], bool) {
    let Some((sub, at)) = subcommand(root, words) else {
        return (root, words, true);
    };
    if !sub.has_subcommands() {
        return (sub, words, false);
    }
    let rest = words.get(at + 1..).unwrap_or_default();
    match subcommand(sub, rest) {
        Some((nested, _)) => (nested, rest, false),
        None => (sub, rest, true),
    }
}

/// The subcommand among `words` and where it is: the first word that is
/// neither an option nor an option's value, when it names one (a file named
/// `admit` after -f is a file).
fn subcommand<'a>(root: &'a Command, words: &[String]) -> Option<(&'a Command, usize)> {
    let mut words = words.iter().enumerate();
    while let Some((at, word)) = words.next() {
        if !word.starts_with('-') || word == "-" {
            return root.find_subcommand(word).map(|s| (s, at));
        }
        let takes_value = root.get_arguments().any(|a| {
            a.get_action().takes_values()
                && (a.get_long().is_some_and(|l| *word == format!("--{l}"))
                    || a.get_short().is_some_and(|s| *word == format!("-{s}")))
        });
        if takes_value {
            words.next();
        }
    }
    None
}

fn candidates(command: &Command, words: &[String], current: &str, top: bool) -> (Vec<String>, u8) {
    // The value of the option just before, when it takes one.
    if let Some(previous) = words.last() {
        let option = command.get_arguments().find(|a| {
            a.get_long().is_some_and(|l| previous == &format!("--{l}"))
                || a.get_short().is_some_and(|s| previous == &format!("-{s}"))
        });
        if let Some(option) = option.filter(|o| o.get_action().takes_values()) {
            let values: Vec<String> = option
                .get_possible_values()
                .iter()
                .map(|v| v.get_name().to_string())
                .collect();
            return if values.is_empty() {
                // Paths and free text: the shell completes files.
                (Vec::new(), FILES_TOO)
            } else {
                (values, NO_FILES)
            };
        }
    }
    if current.starts_with('-') {
        let mut flags: Vec<String> = command
            .get_arguments()
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .collect();
        flags.extend(["--help".to_string()]);
        return (flags, NO_FILES);
    }
    if top && words.is_empty() {
        let names = command
            .get_subcommands()
            .map(|s| s.get_name().to_string())
            .filter(|n| n != "help")
            .collect();
        return (names, FILES_TOO);
    }
    (Vec::new(), FILES_TOO)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(args: &[&str]) -> String {
        answer(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn completes_flags_values_and_subcommands() {
        assert!(ask(&["--pro"]).starts_with("--profile\n"));
        assert_eq!(ask(&["--native-sidecar", ""]), "auto\nalways\nnever\n:4\n");
        assert_eq!(ask(&["-o", "j"]), "json\n:4\n");
        assert_eq!(ask(&["ad"]), "admit\n:0\n");
        assert_eq!(ask(&["context", "s"]), "save\n:0\n");
        assert!(ask(&["context", "save", "--kube-c"]).starts_with("--kube-context\n"));
        assert!(ask(&["admit", "--tr"]).starts_with("--trace\n"));
        assert_eq!(ask(&["-f", ""]), ":0\n");
        assert_eq!(ask(&["--profile", ""]), "linkerd\nistio\n:4\n");
        assert_eq!(ask(&["--output=j"]), "json\n:4\n");
        assert_eq!(ask(&["admit", "--output="]), "text\nyaml\njson\n:4\n");
        assert_eq!(ask(&["-f", "admit", "--tr"]), ":4\n");
        assert_eq!(ask(&["-n", "x", "ver"]), ":0\n");
        assert_eq!(ask(&["ver"]), "verify\nversion\n:0\n");
        assert_eq!(ask(&["vers"]), "version\n:0\n");
    }
}

//! A message of the command line in the words of a KRM function. The tool
//! run as a function takes its settings from its `functionConfig` and its
//! cluster's objects from its input, so a message that names a flag names
//! the entry that stands for it instead; one text serves both.

/// `message`, written for the command line, in the words of a KRM function,
/// whose flags are its `functionConfig`'s entries and whose context is its
/// input: `--set NAME=VALUE` is `NAME=VALUE in the function config`,
/// `--kube-version` its `kubeVersion`, `--context cluster/` the function's
/// input. The messages are the command line's, so that one text serves
/// both; only the flags' names are said otherwise.
pub fn in_function_terms(message: &str) -> String {
    // A command line to run outside the function (`kubectl …`) is the user's
    // to copy as it is.
    message
        .split_inclusive('\n')
        .map(|line| match line.trim_start().starts_with("kubectl ") {
            true => line.to_string(),
            false => line_in_function_terms(line),
        })
        .collect()
}

/// [`in_function_terms`] for one line of a message.
fn line_in_function_terms(message: &str) -> String {
    // Phrases first, then the flags alone.
    const PHRASES: [(&str, &str); 3] = [
        (
            "give the namespace with -n",
            "give the namespace in the function config (namespace)",
        ),
        ("in the input or --context", "in the function's input"),
        ("as --set gives it", "as the function config gives it"),
    ];
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find(['-', 'w', 'i', 'a', 'g', '\'']) {
        let (before, here) = rest.split_at(at);
        out.push_str(before);
        let flag = FLAG_KEYS.iter().find(|(flag, _)| here.starts_with(flag));
        if let Some((phrase, said)) = PHRASES.iter().find(|(phrase, _)| here.starts_with(phrase)) {
            out.push_str(said);
            rest = here.get(phrase.len()..).unwrap_or_default();
        } else if let Some((key, after)) = quoted_flag(here) {
            // clap's `'--kube-version <X.Y>'`: the entry's name.
            out.push_str(&format!("'{key}'"));
            rest = after;
        } else if let Some((flag, key)) = flag {
            out.push_str(&format!("{key} in the function config"));
            rest = here.get(flag.len()..).unwrap_or_default();
        } else if let Some(after) = here.strip_prefix("--set ") {
            // NAME or NAME=VALUE, a quoted value whole.
            let (setting, after) = split_setting(after);
            match setting.strip_suffix(':') {
                Some(name) => out.push_str(&format!("{name} in the function config:")),
                None => out.push_str(&format!("{setting} in the function config")),
            }
            rest = after;
        } else if let Some(after) = here.strip_prefix("in --set") {
            out.push_str("in the function config");
            rest = after;
        } else if let Some(after) = here.strip_prefix("with --context") {
            match after.strip_prefix(' ').map(split_setting) {
                // A path: its objects among the function's items.
                Some((path, after)) if path.contains(['/', '.']) => {
                    out.push_str(&format!("with {path} among the function's input"));
                    rest = after;
                }
                _ => {
                    out.push_str("among the function's input");
                    rest = after;
                }
            }
        } else if let Some(after) = here.strip_prefix("--context") {
            out.push_str("the function's input");
            rest = after;
        } else {
            let next = here.chars().next().map_or(1, char::len_utf8);
            let (char, after) = here.split_at(next);
            out.push_str(char);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// The flags a function config's entries stand for, and the entries.
const FLAG_KEYS: [(&str, &str); 5] = [
    ("--kube-version", "kubeVersion"),
    ("--native-sidecar", "nativeSidecar"),
    ("--warn-only", "warnOnly: \"true\""),
    ("--profile", "profile"),
    ("--namespace", "namespace"),
];

/// A flag as clap quotes it at the start of `text` (`'--profile <NAME>'`):
/// the entry it stands for and what follows.
fn quoted_flag(text: &str) -> Option<(&'static str, &str)> {
    let inside = text.strip_prefix('\'')?;
    let (flag, key) = FLAG_KEYS
        .iter()
        .find(|(flag, _)| inside.starts_with(flag))?;
    let after = inside.get(flag.len()..)?;
    let end = after.find('\'')?;
    // Only the flag and its value's placeholder between the quotes.
    let placeholder = after.get(..end)?.trim();
    (placeholder.is_empty() || placeholder.starts_with('<'))
        .then_some((*key, after.get(end + 1..)?))
}

/// The setting at the start of `text` (`NAME`, `NAME=VALUE`, a value in
/// double quotes whole) and what follows it: a setting ends at white space,
/// or at `)`, `,` or `;` outside quotes.
fn split_setting(text: &str) -> (&str, &str) {
    let mut quoted = false;
    let end = text
        .char_indices()
        .find(|&(_, c)| {
            if c == '"' {
                quoted = !quoted;
            }
            !quoted && (c.is_whitespace() || matches!(c, ')' | ',' | ';'))
        })
        .map_or(text.len(), |(i, _)| i);
    text.split_at(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_function_config_not_flags() {
        for (cli, function) in [
            (
                "then run again with --context cluster/, or give the anchors themselves with --set trustAnchorsPEM=\"$(cat ca bundle.crt)\"",
                "then run again with cluster/ among the function's input, or give the anchors themselves with trustAnchorsPEM=\"$(cat ca bundle.crt)\" in the function config",
            ),
            (
                "use CNI mode (--set cni=true) so that",
                "use CNI mode (cni=true in the function config) so that",
            ),
            (
                "(no linkerd-config in the input or --context, no --set proxyVersion); then run with --context cluster/",
                "(no linkerd-config in the function's input, no proxyVersion in the function config); then run with cluster/ among the function's input",
            ),
            (
                "give the cluster's istio ConfigMaps with --context to render it",
                "give the cluster's istio ConfigMaps among the function's input to render it",
            ),
            (
                "target 1.29 or later (--kube-version); off (--native-sidecar or the annotation)",
                "target 1.29 or later (kubeVersion in the function config); off (nativeSidecar in the function config or the annotation)",
            ),
            (
                "unknown value \"x\" in --set; give the namespace with -n",
                "unknown value \"x\" in the function config; give the namespace in the function config (namespace)",
            ),
            (
                "rewritten \"5\", as --set gives it",
                "rewritten \"5\", as the function config gives it",
            ),
            ("a-b --x é -- w", "a-b --x é -- w"),
            (
                "save them:\n  kubectl mesh-inject context save cluster/ --profile linkerd\nthen run again with --context cluster/",
                "save them:\n  kubectl mesh-inject context save cluster/ --profile linkerd\nthen run again with cluster/ among the function's input",
            ),
            (
                "invalid value 'true' for '--native-sidecar <WHEN>' [possible values: auto]",
                "invalid value 'true' for 'nativeSidecar' [possible values: auto]",
            ),
            (
                "--set proxyCPU: not a quantity",
                "proxyCPU in the function config: not a quantity",
            ),
        ] {
            assert_eq!(in_function_terms(cli), function);
        }
    }
}

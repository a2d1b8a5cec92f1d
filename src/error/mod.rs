//! Errors that stop a run (exit status 2). Rendering for humans happens at the edge.
//!
//! The convention: a leaf function (a value's parser, a template function,
//! a check of one field) returns its message as a `String`; the function at
//! its module's edge wraps it in the typed error that says where it was
//! given: [`ConfigError`] (which `--set`, which profile, which ConfigMap and
//! template line), [`Located`] (which file, document, line and column), or
//! [`crate::rules::PlanError`] (which workload, and whether it is the
//! user's to fix).

use std::path::{Path, PathBuf};

mod function_terms;

pub use function_terms::in_function_terms;

/// Why a run could not go on.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A path that cannot be read, or bytes that are not text.
    #[error("{}: {message}", path.display())]
    Input { path: PathBuf, message: String },
    /// A document that is not valid YAML, or one that cannot be edited safely.
    #[error("{}: document {}, line {}:{}: {}", .0.source, .0.document, .0.line, .0.column, .0.message)]
    Document(Located),
    /// A profile, `--set` value or cluster configuration that is not valid.
    #[error("configuration: {0}")]
    Config(#[from] ConfigError),
    /// Flags that do not go together.
    #[error("{0}")]
    Usage(String),
    /// The cluster could not be read through kubectl (`context save`):
    /// kubectl missing, the cluster out of reach, the mesh not found.
    #[error("{0}")]
    Cluster(String),
    /// A defect of this tool: an edit of text it had read that it could
    /// not make. Never the input's fault; worth a bug report.
    #[error("internal error: {0}")]
    Internal(String),
    /// Writing an output file failed.
    #[error("cannot write {}: {message}", path.display())]
    Output { path: PathBuf, message: String },
    /// Writing to a stream (`to`: "standard output", "standard error") failed.
    #[error("writing to {to}: {error}")]
    Write {
        to: &'static str,
        error: std::io::Error,
    },
    /// A path given with a flag (`--config`, `--context`) that cannot be
    /// read: the message names the flag, `--config x.yaml: no such file or directory`.
    #[error("{flag} {error}")]
    Flag {
        flag: &'static str,
        error: Box<Error>,
    },
    /// An error of a run as a KRM function, said in the function's words
    /// (its config's entries, not the command line's flags).
    #[error("{}", in_function_terms(&.0.to_string()))]
    InFunction(Box<Error>),
}

/// A setting that is not valid: what it is, and where it was given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A `--set NAME=VALUE` (or a KRM function's value) the profile cannot take.
    #[error("--set {name}: {message}")]
    Set { name: String, message: String },
    /// A `--set` naming a value the profile does not have.
    #[error("unknown value {name:?} in --set{}; the {profile} profile has: {}",
        crate::suggest::did_you_mean(name, known.iter().map(String::as_str)), known.join(", "))]
    UnknownValue {
        name: String,
        profile: String,
        known: Vec<String>,
    },
    /// A profile (a file, or an embedded one) that is not valid; `origin` names it.
    #[error("{origin}: {message}")]
    Profile { origin: String, message: String },
    /// `--profile NAME` naming no embedded profile.
    #[error("no embedded profile {name:?}{}; there are: {}",
        crate::suggest::did_you_mean(name, known.iter().map(String::as_str)), known.join(", "))]
    NoEmbeddedProfile { name: String, known: Vec<String> },
    /// The KRM function's `functionConfig`.
    #[error("functionConfig: {0}")]
    FunctionConfig(String),
    /// A value of the cluster's configuration (a ConfigMap in the input or
    /// context) that the profile cannot take, naming the object and place.
    #[error("{0}")]
    ClusterValue(String),
    /// A declaration of an emulated webhook (`admit`) that cannot be right.
    #[error("{0}")]
    WebhookEmulation(String),
    /// The mesh's own configuration found among the cluster's objects
    /// (Istio's injector ConfigMaps), naming the ConfigMap and template line.
    #[error(transparent)]
    Mesh(#[from] crate::mesh::istio::ConfigError),
    /// A Linkerd release's chart that cannot be read or used.
    #[error(transparent)]
    LinkerdChart(Box<crate::mesh::linkerd::chart::ChartError>),
}

/// A message tied to a place in a source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub source: String,
    pub document: usize,
    pub line: usize,
    pub column: usize,
    pub message: String,
    /// The source line the position is on, for a snippet.
    pub line_text: String,
}

/// Where an error is (see [`Error::place`]): each part only where the
/// error has it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Place {
    /// The file (or `<stdin>`) the error is about.
    pub file: Option<String>,
    /// The 1-based document of the file, and the line and column in it.
    pub document: Option<usize>,
    pub line: Option<usize>,
    pub column: Option<usize>,
}

impl Located {
    /// Locate byte `offset` of `text` (a stream from `source`) in document `document`.
    pub fn at(source: &str, text: &str, document: usize, offset: usize, message: String) -> Self {
        let offset = floor_char_boundary(text, offset.min(text.len()));
        let (before, after) = text.split_at_checked(offset).unwrap_or((text, ""));
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let in_line = before.get(line_start..).unwrap_or_default();
        let rest_of_line = after.split('\n').next().unwrap_or_default();
        Located {
            source: source.to_string(),
            document,
            line,
            column: in_line.chars().count() + 1,
            message,
            line_text: format!("{in_line}{rest_of_line}")
                .trim_end_matches('\r')
                .to_string(),
        }
    }

    /// The offending line with a caret under the column; a long line is cut
    /// to the part around the column.
    pub fn snippet(&self) -> String {
        const WIDTH: usize = 100;
        let number = self.line.to_string();
        let pad = " ".repeat(number.len());
        let chars: Vec<char> = self.line_text.chars().collect();
        let column = self.column.saturating_sub(1);
        let from = column.saturating_sub(WIDTH / 2).min(chars.len());
        let to = (from + WIDTH).min(chars.len());
        // Control characters as their pictures (U+2400 on): a NUL or an
        // escape sequence of binary input is shown, not sent to the terminal.
        let mut shown: String = chars
            .iter()
            .skip(from)
            .take(to - from)
            .map(|&c| match u32::from(c) {
                0x7f => '\u{2421}',
                code @ 0..0x20 if c != '\t' => char::from_u32(0x2400 + code).unwrap_or(c),
                0x80..0xa0 => '\u{fffd}',
                _ => c,
            })
            .collect();
        if from > 0 {
            shown.insert(0, '…');
        }
        if to < chars.len() {
            shown.push('…');
        }
        let caret = " ".repeat(column - from + usize::from(from > 0));
        format!("{pad} |\n{number} | {shown}\n{pad} | {caret}^")
    }
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while offset > 0 && !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

impl Error {
    /// A defect of the tool ([`Error::Internal`]) at byte `offset` of
    /// `text`, the text read from `source`: said with the source's name and
    /// the line and column it is at.
    pub fn internal_at(source: &str, text: &str, offset: usize, message: &str) -> Self {
        let place = Located::at(source, text, 1, offset, String::new());
        Error::Internal(format!(
            "{source}: {message} (line {}:{})",
            place.line, place.column
        ))
    }

    pub fn io(path: &Path, err: &std::io::Error) -> Self {
        let message = match err.kind() {
            std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
            std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
            // "Not a directory (os error 20)" reads as "not a directory".
            _ => {
                let text = err.to_string();
                let text = text
                    .rsplit_once(" (os error ")
                    .map_or(text.as_str(), |(before, _)| before);
                let mut chars = text.chars();
                chars.next().map_or_else(String::new, |first| {
                    first.to_lowercase().chain(chars).collect()
                })
            }
        };
        Error::Input {
            path: path.to_path_buf(),
            message,
        }
    }

    /// The error, naming `flag` when it is about a path that cannot be read
    /// (the path is the flag's value, or a file under it).
    pub fn given_with(self, flag: &'static str) -> Self {
        match self {
            Error::Input { .. } => Error::Flag {
                flag,
                error: Box::new(self),
            },
            other => other,
        }
    }

    /// Whether the error is a closed pipe: the reader went away (`| head`),
    /// which is its choice, not a failure of the run.
    pub fn is_broken_pipe(&self) -> bool {
        match self {
            Error::Write { error, .. } => error.kind() == std::io::ErrorKind::BrokenPipe,
            Error::InFunction(error) => error.is_broken_pipe(),
            _ => false,
        }
    }

    /// Where the error is, as far as it is about a place: the file, and
    /// the document, line and column of a document that is not valid YAML
    /// or cannot be injected.
    pub fn place(&self) -> Place {
        match self {
            Error::Document(located) => Place {
                file: Some(located.source.clone()),
                document: Some(located.document),
                line: Some(located.line),
                column: Some(located.column),
            },
            Error::Input { path, .. } | Error::Output { path, .. } => Place {
                file: Some(path.display().to_string()),
                ..Place::default()
            },
            Error::Flag { error, .. } | Error::InFunction(error) => error.place(),
            _ => Place::default(),
        }
    }

    /// The source snippet to show under the message, if the error has a place.
    pub fn snippet(&self) -> Option<String> {
        match self {
            Error::Document(located) => Some(located.snippet()),
            Error::Flag { error, .. } | Error::InFunction(error) => error.snippet(),
            _ => None,
        }
    }
}

impl From<crate::mesh::linkerd::chart::ChartError> for ConfigError {
    fn from(error: crate::mesh::linkerd::chart::ChartError) -> Self {
        ConfigError::LinkerdChart(Box::new(error))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn located_counts_lines_and_columns() {
        let text = "a: 1\nb: [x\n";
        let l = Located::at("f.yaml", text, 1, 8, "bad".into());
        assert_eq!((l.line, l.column), (2, 4));
        assert_eq!(l.snippet(), "  |\n2 | b: [x\n  |    ^");
        assert_eq!(
            Error::Document(l).to_string(),
            "f.yaml: document 1, line 2:4: bad"
        );
    }

    #[test]
    fn a_snippet_shows_control_characters_as_their_pictures() {
        let l = Located::at("-", "a: \0\u{1b}[2J\u{7f}\t\u{85}é\n", 1, 3, "bad".into());
        assert_eq!(
            l.snippet(),
            "  |\n1 | a: \u{2400}\u{241b}[2J\u{2421}\t\u{fffd}é\n  |    ^"
        );
    }
}

//! What the tool tells the user about an object besides its outcome: a
//! note, plain (information: where a namespace was assumed, a grace period
//! raised) or a warning (the injection works but something is off: an
//! annotation the mesh ignores, a sidecar that never completes). Every
//! sink takes the kind from here: the text report labels warnings, the
//! JSON report lists them apart, a KRM function's results give them their
//! severity.

use std::fmt;

/// A note's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoteKind {
    Info,
    Warning,
}

/// A note on an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub kind: NoteKind,
    pub text: String,
    /// About the run rather than the object (the cluster's configuration):
    /// the text report says it once, whatever the verbosity.
    pub for_run: bool,
}

impl Note {
    pub fn info(text: impl Into<String>) -> Self {
        Note {
            kind: NoteKind::Info,
            text: text.into(),
            for_run: false,
        }
    }

    pub fn warning(text: impl Into<String>) -> Self {
        Note {
            kind: NoteKind::Warning,
            text: text.into(),
            for_run: false,
        }
    }

    /// This note, about the run: said once in the text report.
    pub fn about_the_run(mut self) -> Self {
        self.for_run = true;
        self
    }

    pub fn is_warning(&self) -> bool {
        self.kind == NoteKind::Warning
    }
}

/// As the text report writes it: a warning labelled `warning: `.
impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            NoteKind::Info => f.write_str(&self.text),
            NoteKind::Warning => write!(f, "warning: {}", self.text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warning_is_labelled_as_the_report_writes_it() {
        assert_eq!(Note::warning("x").to_string(), "warning: x");
        assert_eq!(Note::info("y").to_string(), "y");
        assert!(Note::warning("x").is_warning() && !Note::info("y").is_warning());
    }
}

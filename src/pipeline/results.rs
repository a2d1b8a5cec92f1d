//! What a run is asked to do and what it gives: the settings, and for each
//! source its new text (kept as edits of the old) and the result for each of
//! its objects.

use json_patch::PatchOperation;
use serde_json::{Map, Value};

use crate::admission::{self, Verdict};
use crate::cluster::KubeVersion;
use crate::profile::{NativeChoice, Profile};
use crate::rules::{Outcome, SecurityMode};
use crate::source::Source;
use crate::workload::ObjectRef;
use crate::yaml;

/// What to do to each workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Inject,
    Uninject,
}

/// Everything a run needs to know besides the input.
#[derive(Debug, Clone)]
pub struct Settings {
    pub action: Action,
    pub profile: Profile,
    /// `--set` values, validated against the profile.
    pub flags: Map<String, Value>,
    /// `--native-sidecar`, when given.
    pub native: Option<NativeChoice>,
    pub version: KubeVersion,
    pub security: SecurityMode,
    /// Namespace of objects that name none, as `kubectl apply -n` would
    /// place them; `None` when none was given (see [`Settings::namespace`]).
    pub namespace: Option<String>,
    /// Where `namespace` was given (`-n`, the variable of
    /// `--namespace-from-env`, the function config), said with each
    /// workload injected there.
    pub namespace_from: Option<String>,
    /// Keep every document's final value (for `-o json`).
    pub keep_values: bool,
    /// Keep every object's patch (for `-o patch`); large inputs need not hold them.
    pub keep_patches: bool,
    /// Read every `List` document whole rather than item by item: the
    /// reference the reading by items is tested against (which gives the
    /// same bytes). Kept values ([`Settings::keep_values`]) read them whole.
    pub whole_lists: bool,
}

impl Settings {
    /// The namespace of objects that name none: the one given, else
    /// `default`, where `kubectl apply` without `-n` usually puts them.
    pub fn namespace(&self) -> &str {
        crate::cluster::namespace_or_default(self.namespace.as_deref())
    }
}

/// The result for one object of a source.
#[derive(Debug, Clone)]
pub struct ObjectResult {
    /// 1-based document index in the source.
    pub document: usize,
    /// `None` for a document that is not a Kubernetes object.
    pub reference: Option<ObjectRef>,
    pub outcome: Outcome,
    pub ops: Vec<PatchOperation>,
    pub notes: Vec<crate::note::Note>,
    /// What the cluster would say about the injected workload.
    pub verdicts: Vec<Verdict>,
    /// How to make it admissible where the injection alone cannot.
    pub hints: Vec<String>,
    /// For a workload injected before: how that injection differed from
    /// this one (what made it stale).
    pub replaced: Option<String>,
    /// The change it needed could not be written (the text shares what it
    /// changes through an anchor) and it was skipped: left as it was, which
    /// `--check` counts as out of date.
    pub uneditable: bool,
    /// Kustomize patches that address its containers by place and would
    /// hit another container once injected (see `pipeline/patches.rs`):
    /// `--check` fails on them.
    pub patched: Vec<String>,
}

impl ObjectResult {
    /// Whether the cluster would refuse the object (or its pods).
    pub fn rejected(&self) -> bool {
        admission::rejected(&self.verdicts)
    }
}

/// A source after processing.
#[derive(Debug, Clone)]
pub struct Processed {
    pub source: Source,
    /// The source text with every plan applied.
    pub output: Output,
    pub objects: Vec<ObjectResult>,
    /// Final value of each non-empty document, when `keep_values` is set.
    pub values: Vec<Value>,
}

/// The new text of a source: its text with the edits of every document
/// spliced in, or a text of its own. Kept as edits, an output is never copied
/// whole in memory: it is written piece by piece.
#[derive(Debug, Clone)]
pub enum Output {
    /// Settled edits (in order, none overlapping) of the source text, in
    /// runs: those of each stretch of the source processed apart.
    Spliced(Vec<Vec<yaml::Edit>>),
    Text(String),
}

impl Output {
    /// The edits of `source`'s text in runs, checked to be what writing
    /// them takes: in order, none overlapping another, each from and to a
    /// place between two characters of the text. An edit that is not is the
    /// tool's defect, said as such with the source and the place it is at,
    /// never written as text lost or doubled.
    pub fn spliced(
        source: &Source,
        runs: Vec<Vec<yaml::Edit>>,
    ) -> Result<Output, crate::error::Error> {
        let text = source.text.as_str();
        let mut at = 0;
        for edit in runs.iter().flatten() {
            let fits = at <= edit.start
                && edit.start <= edit.end
                && text.is_char_boundary(edit.start)
                && text.is_char_boundary(edit.end);
            if !fits {
                let name = source.name();
                let place = crate::error::Located::at(&name, text, 1, edit.start, String::new());
                let (line, column) = (place.line, place.column);
                return Err(crate::error::Error::Internal(format!(
                    "{}: an edit of bytes {}..{} (line {line}:{column}) does not follow the one before, \
                     which ends at byte {at}, or does not fall between characters",
                    name, edit.start, edit.end,
                )));
            }
            at = edit.end;
        }
        Ok(Output::Spliced(runs))
    }
}

impl Processed {
    /// Whether `--check` fails on it though its text would not change: a
    /// workload that needed a change the tool could not write (see
    /// [`ObjectResult::uneditable`]), or one a kustomize patch addresses by
    /// place.
    pub fn fails_check(&self) -> bool {
        self.objects
            .iter()
            .any(|object| object.uneditable || !object.patched.is_empty())
    }

    pub fn changed(&self) -> bool {
        match &self.output {
            Output::Spliced(edits) => edits.iter().flatten().any(|e| {
                !self
                    .source
                    .text
                    .get(e.start..e.end)
                    .is_some_and(|s| e.text.is(s))
            }),
            Output::Text(text) => *text != self.source.text,
        }
    }

    /// The output's pieces in order: slices of the source and inserted
    /// texts, none empty.
    pub fn pieces(&self) -> impl Iterator<Item = &str> {
        // Edits start and end between characters ([`Output::spliced`]).
        self.byte_pieces()
            .map(|piece| std::str::from_utf8(piece).unwrap_or_default())
    }

    /// [`Processed::pieces`] as bytes, for writing: slicing the source by
    /// bytes does not read it, and the writer need not (a large stream's
    /// edits each start in another part of it).
    pub fn byte_pieces(&self) -> impl Iterator<Item = &[u8]> {
        let original = self.source.text.as_bytes();
        let (edits, own): (&[Vec<yaml::Edit>], Option<&str>) = match &self.output {
            Output::Spliced(edits) => (edits, None),
            Output::Text(text) => (&[], Some(text)),
        };
        let mut at = 0;
        let spliced = edits.iter().flatten().flat_map(move |edit| {
            let kept = original.get(at..edit.start).unwrap_or_default();
            at = edit.end;
            std::iter::once(kept).chain(edit.text.pieces().map(str::as_bytes))
        });
        let rest = move || match own {
            Some(text) => text.as_bytes(),
            None => {
                let last = edits.iter().rev().find_map(|run| run.last());
                original
                    .get(last.map_or(0, |e| e.end)..)
                    .unwrap_or_default()
            }
        };
        spliced
            .chain(std::iter::once_with(rest))
            .filter(|piece| !piece.is_empty())
    }

    /// The output as one text.
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        match &self.output {
            Output::Spliced(edits) if edits.iter().all(Vec::is_empty) => {
                self.source.text.as_str().into()
            }
            Output::Text(text) => text.as_str().into(),
            Output::Spliced(_) => self.pieces().collect::<String>().into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::Edit;
    use crate::yaml::edit::Text;

    fn edit(start: usize, end: usize, text: &str) -> Edit {
        Edit {
            start,
            end,
            text: Text::Own(text.into()),
        }
    }

    #[test]
    fn edits_that_cannot_be_written_are_the_tools_defect_said_aloud() {
        let source = Source {
            path: None,
            text: "a: é\nb: 2\n".into(),
            found_in: None,
            aliases: Default::default(),
            kustomized: Default::default(),
        };
        let fine = vec![vec![edit(0, 1, "x")], vec![edit(6, 7, "c")]];
        assert!(Output::spliced(&source, fine).is_ok());
        for runs in [
            // Overlapping, across two runs, out of order, inside a character.
            vec![vec![edit(0, 3, "x"), edit(2, 4, "y")]],
            vec![vec![edit(3, 6, "x")], vec![edit(5, 6, "y")]],
            vec![vec![edit(6, 7, "x"), edit(0, 1, "y")]],
            vec![vec![edit(4, 5, "x")]],
        ] {
            let error = Output::spliced(&source, runs)
                .expect_err("refused")
                .to_string();
            assert!(
                error.starts_with("internal error: <stdin>: an edit of bytes"),
                "{error}"
            );
        }
    }
}

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
    /// What the run reuses from one workload to the next:
    /// [`crate::reuse::Mode::Reference`] keeps nothing, the reference the
    /// reuse is tested against (which gives the same bytes).
    pub reuse: crate::reuse::Mode,
}

impl Settings {
    /// The settings of a run that does `action` with `profile` and nothing
    /// else given: no flags, the current Kubernetes version, no namespace,
    /// nothing kept but the patches, reusing what it can.
    pub fn new(action: Action, profile: Profile) -> Self {
        Settings {
            action,
            profile,
            flags: Map::new(),
            native: None,
            version: KubeVersion::CURRENT,
            security: SecurityMode::Auto,
            namespace: None,
            namespace_from: None,
            keep_values: false,
            keep_patches: true,
            whole_lists: false,
            reuse: crate::reuse::Mode::Reuse,
        }
    }

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
    /// Left as it was, the change it needed being one the text cannot take
    /// (`reason`, with its place): skipped, its plan and verdicts dropped.
    pub(super) fn leave_uneditable(&mut self, reason: &str) {
        if matches!(
            self.outcome,
            Outcome::Injected | Outcome::Annotated | Outcome::Uninjected
        ) {
            self.outcome = Outcome::Skipped(reason.to_string());
            self.uneditable = true;
            self.ops.clear();
            self.verdicts.clear();
        }
    }

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
    /// The source text with [`Settled`] edits spliced in.
    Spliced(Settled),
    Text(String),
}

/// Settled edits of a source's text, in runs (those of each stretch of the
/// source processed apart), checked by [`Output::spliced`], their only maker,
/// to be what writing them takes: in order, none overlapping another, each
/// from and to a place between two characters of the text. What writes the
/// output relies on it.
#[derive(Debug, Clone)]
pub struct Settled(Vec<Vec<yaml::Edit>>);

impl Settled {
    /// The edits in runs.
    pub fn runs(&self) -> &[Vec<yaml::Edit>] {
        &self.0
    }

    /// The edits in order.
    pub fn edits(&self) -> impl Iterator<Item = &yaml::Edit> {
        self.0.iter().flatten()
    }

    /// Whether there is no edit: the output is the source text.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(Vec::is_empty)
    }

    /// The edits in runs, to be changed and checked again.
    pub fn into_runs(self) -> Vec<Vec<yaml::Edit>> {
        self.0
    }
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
        Ok(Output::Spliced(Settled(runs)))
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
            Output::Spliced(settled) => settled.edits().any(|e| {
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
    /// texts, none empty. The edits start and end between characters of
    /// the source ([`Output::spliced`] checked them): a slice of it that is
    /// not one is the tool's defect, an error (never an empty piece, which
    /// would be text lost). Slicing the source does not read it, and the
    /// writer need not (a large stream's edits each start in another part of
    /// it).
    pub fn pieces(&self) -> impl Iterator<Item = Result<&str, crate::error::Error>> {
        let original = self.source.text.as_str();
        let (edits, own): (&[Vec<yaml::Edit>], Option<&str>) = match &self.output {
            Output::Spliced(settled) => (settled.runs(), None),
            Output::Text(text) => (&[], Some(text)),
        };
        let kept = move |from: usize, to: usize| {
            original
                .get(from..to)
                .ok_or_else(|| self.not_text(from, to))
        };
        let mut at = 0;
        let spliced = edits.iter().flatten().flat_map(move |edit| {
            let before = kept(at, edit.start);
            at = edit.end;
            std::iter::once(before).chain(edit.text.pieces().map(Ok))
        });
        let rest = move || match own {
            Some(text) => Ok(text),
            None => {
                let last = edits.iter().rev().find_map(|run| run.last());
                kept(last.map_or(0, |e| e.end), original.len())
            }
        };
        spliced
            .chain(std::iter::once_with(rest))
            .filter(|piece| piece.as_ref().map_or(true, |piece| !piece.is_empty()))
    }

    /// [`Processed::pieces`] as bytes, for writing.
    pub fn byte_pieces(&self) -> impl Iterator<Item = Result<&[u8], crate::error::Error>> {
        self.pieces().map(|piece| piece.map(str::as_bytes))
    }

    /// The defect of a piece of the source, bytes `from..to`, that is not text.
    fn not_text(&self, from: usize, to: usize) -> crate::error::Error {
        let text = self.source.text.as_str();
        let message = format!(
            "bytes {from}..{to} of the text ({} bytes long), kept between checked edits, \
             are not a stretch of it between two characters",
            text.len()
        );
        crate::error::Error::internal_at(&self.source.name(), text, from, &message)
    }

    /// The output as one text, or the tool's defect that keeps it from
    /// being one (see [`Processed::pieces`]).
    pub fn try_text(&self) -> Result<std::borrow::Cow<'_, str>, crate::error::Error> {
        match &self.output {
            Output::Spliced(settled) if settled.is_empty() => Ok(self.source.text.as_str().into()),
            Output::Text(text) => Ok(text.as_str().into()),
            Output::Spliced(_) => self.pieces().collect::<Result<String, _>>().map(Into::into),
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
        let source = Source::new(None, "a: é\nb: 2\n".into());
        let fine = vec![vec![edit(0, 1, "x")], vec![edit(6, 7, "c")]];
        assert!(Output::spliced(&source, fine).is_ok());
        for runs in [
            // Overlapping, across two runs, out of order, inside a character
            // (`é` is bytes 3..5: from it, to it, both), past the end.
            vec![vec![edit(0, 3, "x"), edit(2, 4, "y")]],
            vec![vec![edit(3, 6, "x")], vec![edit(5, 6, "y")]],
            vec![vec![edit(6, 7, "x"), edit(0, 1, "y")]],
            vec![vec![edit(4, 5, "x")]],
            vec![vec![edit(2, 4, "x")]],
            vec![vec![edit(4, 4, "x")]],
            vec![vec![edit(9, 12, "x")]],
        ] {
            let (start, end) = runs
                .iter()
                .flatten()
                .last()
                .map(|e| (e.start, e.end))
                .expect("an edit");
            let error = Output::spliced(&source, runs)
                .expect_err("refused")
                .to_string();
            // The one refused is the last: each before it fits.
            assert!(
                error.starts_with(&format!(
                    "internal error: <stdin>: an edit of bytes {start}..{end} (line "
                )),
                "{error}"
            );
        }
    }

    /// The pieces of a spliced output are its text; an output whose edits
    /// do not fit its source (a source changed after the check) says so
    /// where a piece would be, never giving an empty one.
    #[test]
    fn the_pieces_of_a_spliced_output_are_its_text_or_an_error() {
        let source = Source::new(None, "a: é\nb: 2\n".into());
        let runs = vec![vec![edit(3, 5, "e")], vec![edit(9, 10, "3")]];
        let output = Output::spliced(&source, runs).expect("checked");
        let mut processed = Processed {
            source,
            output,
            objects: Vec::new(),
            values: Vec::new(),
        };
        let pieces: Result<Vec<&str>, _> = processed.pieces().collect();
        assert_eq!(pieces.expect("text"), ["a: ", "e", "\nb: ", "3", "\n"]);
        assert_eq!(processed.try_text().expect("text"), "a: e\nb: 3\n");
        assert!(processed.changed());
        // `é` now stands where the check found `a`, and the text is shorter.
        processed.source.text = "éé\n".into();
        let error = processed
            .pieces()
            .find_map(Result::err)
            .expect("an error")
            .to_string();
        assert!(
            error.starts_with("internal error: <stdin>: bytes 0..3 of the text (5 bytes long)"),
            "{error}"
        );
        assert!(processed.try_text().is_err());
        assert!(processed.byte_pieces().any(|piece| piece.is_err()));
        assert_eq!(
            processed.try_text().expect_err("a defect").to_string(),
            error
        );
    }
}

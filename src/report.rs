//! The report on stderr: as text, one line per object, then a summary; or
//! as JSON (`--report json`). Both say of each object what
//! [`crate::diagnostic`] decides, and word it. With `--report json`, an
//! error that stops the run is a JSON document too ([`error_json`]).

use std::fmt::Write;

use crate::diagnostic::{Cause, Diagnostic, PREEXISTING, Severity};
use crate::error::{Error, Place};
use crate::output::Paint;
use crate::pipeline::{ObjectResult, Processed};
use crate::rules::Outcome;
use crate::source::SkippedFile;

/// The `apiVersion` of the JSON report; it changes when a field changes meaning or goes.
pub const JSON_REPORT_VERSION: &str = "mesh-inject.io/report/v2";

/// Whether the run wrote what it changed, and if not, why: a report says
/// "would be injected" of what it did not write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// To standard output or the files (`--in-place`).
    Yes,
    /// `--check` or `--diff`: the changes are shown, never written.
    Shown,
    /// The cluster would reject a changed workload: nothing was written.
    Withheld,
}

/// How the text report is made.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Rejections read as warnings (`--warn-only`).
    pub warn_only: bool,
    /// List every object (`-v`), also those left as expected.
    pub verbose: bool,
    pub written: Written,
}

/// One line for an object: `deployment/web injected` (`deployment/web
/// would be injected` when nothing was written).
pub fn object_line(object: &ObjectResult, written: Written) -> String {
    let subject = match &object.reference {
        Some(reference) => reference.to_string(),
        None => format!("document {}", object.document),
    };
    let done = |verb: &str| match written {
        Written::Yes => verb.to_string(),
        Written::Shown | Written::Withheld => format!("would be {verb}"),
    };
    let verdict = match &object.outcome {
        Outcome::Injected => done("injected"),
        Outcome::Annotated => done("annotated"),
        Outcome::AlreadyInjected => "unchanged: already injected".to_string(),
        Outcome::Uninjected => done("uninjected"),
        Outcome::NotInjected => "unchanged: not injected".to_string(),
        Outcome::Skipped(reason) | Outcome::Ignored(reason) => format!("skipped: {reason}"),
        Outcome::Denied(_) => "not injected: the mesh's webhook denies its pods".to_string(),
    };
    format!("{subject} {verdict}")
}

/// The lines under an object: what the cluster would say (a rejection,
/// one read as a warning with `--warn-only`, one the workload drew before
/// injection too) and every hint, as [`Diagnostic::of_object`] said them.
fn verdict_lines(said: &[Diagnostic<'_>], paint: Paint) -> Vec<String> {
    said.iter()
        .filter_map(|d| {
            let text = match d.cause {
                Cause::Rejection => format!("rejected: {}", d.message),
                Cause::RejectionWarnedOnly => format!("would be rejected: {}", d.message),
                Cause::RejectionBeforeInjection => format!("{PREEXISTING}: {}", d.message),
                Cause::ClusterWarning { .. } | Cause::Hint => d.message.to_string(),
                Cause::Skipped | Cause::Note { .. } | Cause::Fix => return None,
            };
            Some(labelled(d.severity, &text, paint))
        })
        .collect()
}

/// `text` as the text report says something of `severity`: an error
/// painted as a rejection, a warning after its label, information as it is.
fn labelled(severity: Severity, text: &str, paint: Paint) -> String {
    match severity {
        Severity::Error => paint.paint(Paint::REJECTION, text),
        Severity::Warning => format!("{} {text}", paint.warning()),
        Severity::Info => text.to_string(),
    }
}

/// Whether the text report lists `object` without `-v`: what changed, what
/// was skipped for a reason the user may not expect, and any object of
/// which something more than information is said (`said`), other than
/// about the run: a verdict of the cluster's, a hint, a warning.
fn worth_a_line(object: &ObjectResult, said: &[Diagnostic<'_>]) -> bool {
    !object.outcome.is_routine()
        || said
            .iter()
            .any(|d| d.severity > Severity::Info && !d.cause.for_run())
}

/// The whole report: a line per object worth one (every object with `-v`;
/// prefixed with its file when there are several sources) with the
/// cluster's verdicts and its notes indented below; a note shared by several
/// objects (a missing profile value) is said once after them; then a
/// summary of every object. With `paint` on, warnings and rejections are
/// coloured.
pub fn render(
    results: &[Processed],
    left_out: &[SkippedFile],
    options: Options,
    paint: Paint,
) -> String {
    let Options {
        warn_only,
        verbose,
        written,
    } = options;
    let mut out = String::new();
    let several = results.len() > 1;
    // The notes of the objects listed, each with the number of objects it
    // is said of; and those about the run, of any object, once each.
    let mut note_counts: Vec<(Diagnostic<'_>, usize)> = Vec::new();
    let mut about_the_run: Vec<Diagnostic<'_>> = Vec::new();
    for object in results.iter().flat_map(|p| &p.objects) {
        let said = Diagnostic::of_object(object, warn_only);
        let listed = verbose || worth_a_line(object, &said);
        for note in said
            .into_iter()
            .filter(|d| matches!(d.cause, Cause::Note { .. }))
        {
            if note.cause.for_run() {
                if !about_the_run.contains(&note) {
                    about_the_run.push(note);
                }
            } else if listed {
                match note_counts.iter_mut().find(|(n, _)| *n == note) {
                    Some((_, count)) => *count += 1,
                    None => note_counts.push((note, 1)),
                }
            }
        }
    }
    let shared =
        |note: &Diagnostic<'_>| note_counts.iter().any(|(n, count)| n == note && *count > 1);
    let mut summary = Summary::default();
    for processed in results {
        for object in &processed.objects {
            let said = Diagnostic::of_object(object, warn_only);
            if verbose || worth_a_line(object, &said) {
                if several {
                    let _ = write!(out, "{}: ", processed.source.name());
                }
                let _ = writeln!(out, "{}", object_line(object, written));
                // --check lists it under the file already.
                if let Some(changes) = object
                    .replaced
                    .as_ref()
                    .filter(|_| written != Written::Shown)
                {
                    let _ = writeln!(out, "  its injection had other settings: {changes}");
                }
                for line in verdict_lines(&said, paint) {
                    let _ = writeln!(out, "  {line}");
                }
                let notes = said
                    .iter()
                    .filter(|d| matches!(d.cause, Cause::Note { .. }));
                for note in notes.filter(|n| !shared(n) && !n.cause.for_run()) {
                    let _ = writeln!(out, "  {}", labelled(note.severity, note.message, paint));
                }
            }
            summary.count(&object.outcome, &said);
        }
        summary.changed_inputs += usize::from(processed.changed());
    }
    // Files left out: those a user may not expect always, those asked for
    // (`--exclude`) with -v.
    for file in left_out.iter().filter(|f| verbose || !f.asked) {
        let _ = writeln!(out, "{} skipped: {}", file.path.display(), file.reason);
    }
    if results.is_empty() && !left_out.is_empty() {
        let warning = paint.warning();
        let _ = writeln!(
            out,
            "{warning} every input file was left out: nothing was read (-v lists why)"
        );
    }
    for (note, count) in note_counts.iter().filter(|(_, count)| *count > 1) {
        let note = labelled(note.severity, note.message, paint);
        let _ = writeln!(out, "{note} ({count} objects)");
    }
    // What is said of the run (the cluster's configuration), once.
    for note in about_the_run {
        let label = match note.severity {
            Severity::Info => "note: ",
            Severity::Warning | Severity::Error => "",
        };
        let _ = writeln!(
            out,
            "{label}{}",
            labelled(note.severity, note.message, paint)
        );
    }
    let Summary {
        injected,
        annotated,
        uninjected,
        unchanged,
        skipped,
        changed_inputs: changed,
        ..
    } = summary;
    // What was done, or what would be: "2 injected", "2 to inject".
    let done = |count: usize, past: &str, verb: &str| match written {
        Written::Yes => format!("{count} {past}"),
        Written::Shown | Written::Withheld => format!("{count} to {verb}"),
    };
    let mut parts = Vec::new();
    if injected > 0 || uninjected == 0 {
        parts.push(done(injected, "injected", "inject"));
    }
    if annotated > 0 {
        parts.push(done(annotated, "annotated", "annotate"));
    }
    if uninjected > 0 {
        parts.push(done(uninjected, "uninjected", "uninject"));
    }
    parts.push(format!("{unchanged} unchanged"));
    parts.push(format!("{skipped} skipped"));
    let files = results.len();
    let inputs = if files == 1 { "input" } else { "inputs" };
    let left_out = match left_out.len() {
        0 => String::new(),
        1 => "; 1 file left out".to_string(),
        n => format!("; {n} files left out"),
    };
    let parts = parts.join(", ");
    let _ = match written {
        Written::Yes => writeln!(
            out,
            "{parts}; {changed} of {files} {inputs} changed{left_out}"
        ),
        Written::Shown => writeln!(
            out,
            "{parts}; {changed} of {files} {inputs} would change{left_out}; nothing was written"
        ),
        Written::Withheld => writeln!(
            out,
            "{parts}; {changed} of {files} {inputs} would change{left_out}, but nothing was written"
        ),
    };
    out
}

/// What `--check` says of a file that would change: a line for each object
/// that would, saying why (not injected, or what its injection lacks).
pub fn stale_lines(processed: &Processed) -> Vec<String> {
    let mut lines: Vec<String> = processed
        .objects
        .iter()
        .filter_map(|object| {
            let subject = match &object.reference {
                Some(reference) => reference.to_string(),
                None => format!("document {}", object.document),
            };
            let why = match (&object.outcome, &object.replaced) {
                (Outcome::Injected, Some(changes)) => {
                    format!("injected with other settings: {changes}")
                }
                (Outcome::Injected, None) => "not injected".to_string(),
                (Outcome::Annotated, _) => "not annotated as the mesh annotates it".to_string(),
                (Outcome::Uninjected, _) => "injected".to_string(),
                (Outcome::Skipped(why), _) if object.uneditable => {
                    format!("left as it is, its text cannot be edited: {why}")
                }
                _ => return None,
            };
            Some(format!("{subject}: {why}"))
        })
        .collect();
    // Kustomize patches that address containers by place: the patch is to
    // change, not the file, which --in-place leaves as it is.
    lines.extend(
        processed
            .objects
            .iter()
            .flat_map(|object| object.patched.iter().cloned()),
    );
    lines
}

/// The command that brings the stale files up to date: the command line as
/// given (`args`, without the program), with `--in-place` for `--check`.
/// Every input stays, the files that hold context objects (trust roots, a
/// LimitRange) among them; `--in-place` leaves the files that would not
/// change as they are.
pub fn fix_command(args: &[String]) -> String {
    let mut words = vec!["kubectl".to_string(), "mesh-inject".to_string()];
    let mut options_end = false;
    for arg in args {
        let word = match arg.as_str() {
            "--check" if !options_end => "--in-place",
            "--" => {
                options_end = true;
                "--"
            }
            other => other,
        };
        words.push(shell_quoted(word));
    }
    words.join(" ")
}

/// `word` as a POSIX shell reads it back.
fn shell_quoted(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./:=,@%+-".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The rejections the injection caused, one line each with its file and
/// object, each object's fixes under them (`  fix: …`), for the error that
/// ends a run the cluster would refuse (those the workload drew before
/// injection too are the report's warnings). With `warn_only` the same
/// lines: the run then writes all the same, and does not show them.
pub fn rejections(results: &[Processed], warn_only: bool) -> Vec<String> {
    let mut lines = Vec::new();
    for processed in results {
        for object in &processed.objects {
            let subject = || match &object.reference {
                Some(reference) => reference.to_string(),
                None => format!("document {}", object.document),
            };
            for said in Diagnostic::of_object(object, warn_only) {
                match said.cause {
                    cause if cause.refuses() => lines.push(format!(
                        "{}: {}: {}",
                        processed.source.name(),
                        subject(),
                        said.message
                    )),
                    Cause::Fix => lines.push(format!("  fix: {}", said.message)),
                    _ => {}
                }
            }
        }
    }
    lines
}

/// The report as JSON (`--report json`), versioned by [`JSON_REPORT_VERSION`]:
/// every input with every object, its outcome, notes and the cluster's
/// verdicts, then the counts.
pub fn json<'a>(
    results: &'a [Processed],
    left_out: &'a [SkippedFile],
    warn_only: bool,
) -> JsonReport<'a> {
    let mut summary = Summary::default();
    let inputs = results
        .iter()
        .map(|processed| {
            summary.changed_inputs += usize::from(processed.changed());
            JsonInput {
                file: processed.source.name(),
                changed: processed.changed(),
                objects: processed
                    .objects
                    .iter()
                    .map(|object| {
                        let said = Diagnostic::of_object(object, warn_only);
                        summary.count(&object.outcome, &said);
                        JsonObject::of(object, &said)
                    })
                    .collect(),
            }
        })
        .collect();
    JsonReport {
        api_version: JSON_REPORT_VERSION,
        kind: KIND,
        warn_only,
        inputs,
        skipped_files: left_out
            .iter()
            .map(|file| JsonSkippedFile {
                file: file.path.display().to_string(),
                reason: &file.reason,
                excluded: file.asked,
            })
            .collect(),
        summary,
    }
}

/// The `kind` of the report as JSON.
pub const KIND: &str = "Report";

/// The report as JSON: see [`json`], and docs/admission.md for its fields.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonReport<'a> {
    api_version: &'static str,
    kind: &'static str,
    warn_only: bool,
    inputs: Vec<JsonInput<'a>>,
    skipped_files: Vec<JsonSkippedFile<'a>>,
    summary: Summary,
}

/// An input of the JSON report, with its objects.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonInput<'a> {
    file: String,
    changed: bool,
    objects: Vec<JsonObject<'a>>,
}

/// An object of the JSON report: its identity (`null`s for a document that
/// is no object), its outcome, and what is said of it.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonObject<'a> {
    document: usize,
    api_version: Option<&'a str>,
    kind: Option<&'a str>,
    name: Option<&'a str>,
    namespace: Option<&'a str>,
    outcome: &'static str,
    reason: Option<&'a str>,
    notes: Vec<&'a str>,
    warnings: Vec<&'a str>,
    hints: Vec<&'a str>,
    replaced: Option<&'a str>,
    verdicts: Vec<JsonVerdict<'a>>,
}

/// A verdict of the cluster's, as the apiserver gives it.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonVerdict<'a> {
    /// `rejection` or `warning`, whatever `--warn-only` makes of it.
    severity: &'static str,
    plugin: Option<&'static str>,
    message: &'a str,
    before_injection: bool,
}

/// An input file left out.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonSkippedFile<'a> {
    file: String,
    reason: &'a str,
    /// By `--exclude`.
    excluded: bool,
}

impl<'a> JsonObject<'a> {
    /// `object` as the JSON report gives it, with what is `said` of it.
    fn of(object: &'a ObjectResult, said: &[Diagnostic<'a>]) -> Self {
        let reference = object.reference.as_ref();
        let (outcome, reason) = match &object.outcome {
            Outcome::Injected => ("injected", None),
            Outcome::Annotated => ("annotated", None),
            Outcome::AlreadyInjected => ("unchanged", Some("already injected")),
            Outcome::Uninjected => ("uninjected", None),
            Outcome::NotInjected => ("unchanged", Some("not injected")),
            Outcome::Skipped(reason) | Outcome::Ignored(reason) => {
                ("skipped", Some(reason.as_str()))
            }
            Outcome::Denied(reason) => ("denied", Some(reason.as_str())),
        };
        let messages = |keep: &dyn Fn(&Diagnostic<'a>) -> bool| {
            said.iter().filter(|d| keep(d)).map(|d| d.message).collect()
        };
        let note = |d: &Diagnostic<'a>| matches!(d.cause, Cause::Note { .. });
        JsonObject {
            document: object.document,
            api_version: reference.map(|r| r.api_version.as_str()),
            kind: reference.map(|r| r.kind.as_str()),
            name: reference.map(|r| r.name.as_str()),
            namespace: reference.and_then(|r| r.namespace.as_deref()),
            outcome,
            reason,
            notes: messages(&|d| note(d) && d.severity == Severity::Info),
            warnings: messages(&|d| note(d) && d.severity == Severity::Warning),
            hints: messages(&|d| d.cause == Cause::Hint),
            replaced: object.replaced.as_deref(),
            verdicts: said
                .iter()
                .filter_map(|d| {
                    Some(JsonVerdict {
                        severity: d.cause.verdict()?.as_str(),
                        plugin: d.plugin,
                        message: d.message,
                        before_injection: d.cause.before_injection(),
                    })
                })
                .collect(),
        }
    }
}

/// What a run did to its objects, counted: the summary of the text report
/// and the JSON report's `summary`.
#[derive(Debug, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Summary {
    injected: usize,
    annotated: usize,
    uninjected: usize,
    unchanged: usize,
    /// Skipped, left alone as expected, or denied by the mesh's webhook.
    skipped: usize,
    /// Objects the cluster would refuse.
    rejected: usize,
    /// Of those, the ones it would refuse without the injection too.
    rejected_before_injection: usize,
    changed_inputs: usize,
}

impl Summary {
    /// An object with `outcome`, of which `said` is said.
    fn count(&mut self, outcome: &Outcome, said: &[Diagnostic<'_>]) {
        let count = match outcome {
            Outcome::Injected => &mut self.injected,
            Outcome::Annotated => &mut self.annotated,
            Outcome::Uninjected => &mut self.uninjected,
            Outcome::AlreadyInjected | Outcome::NotInjected => &mut self.unchanged,
            Outcome::Skipped(_) | Outcome::Ignored(_) | Outcome::Denied(_) => &mut self.skipped,
        };
        *count += 1;
        let rejected = said
            .iter()
            .any(|d| d.cause.verdict() == Some(crate::admission::Severity::Rejection));
        if rejected {
            self.rejected += 1;
            self.rejected_before_injection += usize::from(!said.iter().any(|d| d.cause.refuses()));
        }
    }
}

/// What standard error says of an error that stopped a run (exit status 2)
/// asked for `--report json`: one JSON document, of the `kind` of the
/// command's report (`Report`, or `admit`'s `AdmissionReport`), with an
/// `error` in place of the report: its `message` as the text would give it
/// after `error: `, and where the error has them, its `file`, `document`,
/// `line` and `column`.
pub fn error_json(error: &Error, kind: &'static str) -> String {
    let Place {
        file,
        document,
        line,
        column,
    } = error.place();
    let report = JsonErrorReport {
        api_version: JSON_REPORT_VERSION,
        kind,
        error: JsonError {
            message: error.to_string(),
            file,
            document,
            line,
            column,
        },
    };
    let mut text = serde_json::to_string_pretty(&report).unwrap_or_default();
    text.push('\n');
    text
}

/// A run's error as JSON: see [`error_json`].
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonErrorReport {
    api_version: &'static str,
    kind: &'static str,
    error: JsonError,
}

/// The error of [`JsonErrorReport`]; a part of its place it does not have is left out.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonError {
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    document: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    column: Option<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(words: &[&str]) -> Vec<String> {
        words.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn an_error_is_one_json_document_with_its_place() {
        let located = crate::error::Located::at("f.yaml", "a: 1\nb: [x\n", 1, 8, "bad".into());
        let json: serde_json::Value =
            serde_json::from_str(&error_json(&Error::Document(located), KIND)).expect("JSON");
        assert_eq!(
            json,
            serde_json::json!({
                "apiVersion": JSON_REPORT_VERSION,
                "kind": "Report",
                "error": {
                    "message": "f.yaml: document 1, line 2:4: bad",
                    "file": "f.yaml",
                    "document": 1,
                    "line": 2,
                    "column": 4,
                },
            })
        );
        let missing = Error::Input {
            path: "no/such.yaml".into(),
            message: "no such file or directory".into(),
        }
        .given_with("--config");
        assert_eq!(
            error_json(&missing, "AdmissionReport"),
            format!(
                "{{\n  \"apiVersion\": \"{JSON_REPORT_VERSION}\",\n  \"kind\": \"AdmissionReport\",\n  \"error\": {{\n    \"message\": \"--config no/such.yaml: no such file or directory\",\n    \"file\": \"no/such.yaml\"\n  }}\n}}\n"
            )
        );
        let usage = Error::Usage("--in-place needs files".into());
        let json: serde_json::Value =
            serde_json::from_str(&error_json(&usage, KIND)).expect("JSON");
        assert_eq!(
            json["error"],
            serde_json::json!({"message": "--in-place needs files"})
        );
    }

    #[test]
    fn the_fix_is_the_command_line_in_place() {
        let fix = |args: &[&str]| fix_command(&strings(args));
        assert_eq!(
            fix(&[
                "--check",
                "-q",
                "-n",
                "shop",
                "-R",
                "-f",
                "shop",
                "roots.yaml"
            ]),
            "kubectl mesh-inject --in-place -q -n shop -R -f shop roots.yaml"
        );
        assert_eq!(
            fix(&["uninject", "--check", "--", "--check", "it's.yaml"]),
            "kubectl mesh-inject uninject --in-place -- --check 'it'\\''s.yaml'"
        );
    }
}

//! What the run says of each object, decided once: a list of
//! [`Diagnostic`]s, each with its [`Severity`] and its [`Cause`], made by
//! [`Diagnostic::of_object`] from the object's outcome, the cluster's
//! verdicts, the injection's notes and its hints.
//!
//! The rules live here and nowhere else: a rejection the injection caused
//! is an error, or a warning with `--warn-only`; one the workload drew
//! before injection too is a warning always (the apiserver refuses it
//! either way); a hint is also a fix, shown with the refusal, when a
//! security policy (Pod Security, a PodSecurityPolicy) refuses the object
//! because of the injection. The sinks only word and filter the list: the
//! text report ([`crate::report::render`], and the lines of
//! [`crate::report::rejections`] that end a refused run), the JSON report
//! ([`crate::report::json`]) and a KRM function's results
//! ([`crate::krm::results`]). Where they show different things (the text
//! report shows every hint as a warning, a KRM function only the fixes, as
//! information), each reads the cause that says which.

use crate::admission::{self, Verdict};
use crate::note::{Note, NoteKind};
use crate::pipeline::ObjectResult;
use crate::rules::Outcome;

/// How a rejection the workload drew before injection too is introduced:
/// the apiserver refuses the workload either way, so it does not fail the run.
pub const PREEXISTING: &str = "rejected before injection too";

/// How much a diagnostic matters to the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Said for the user to know.
    Info,
    /// The run goes on, but something is off.
    Warning,
    /// The cluster would refuse what the run writes: the run fails.
    Error,
}

impl Severity {
    /// `info`, `warning` or `error`, as a KRM function's results name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// What a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// The object was left alone for a reason the user may not expect
    /// ([`Outcome::Skipped`]); the message is the reason.
    Skipped,
    /// The cluster would refuse the object because of the injection: the
    /// run fails.
    Rejection,
    /// A rejection the injection caused, read as a warning (`--warn-only`).
    RejectionWarnedOnly,
    /// A rejection the workload drew before injection too: the apiserver
    /// refuses it either way, and the run goes on.
    RejectionBeforeInjection,
    /// The cluster would accept the object but warn, or change something
    /// silently; `before_injection` when the workload drew it before
    /// injection too.
    ClusterWarning { before_injection: bool },
    /// The injection's own note on the object, information or a warning
    /// (an annotation the mesh ignores); `for_run` when it is about the run
    /// (the cluster's configuration) rather than the object.
    Note { for_run: bool },
    /// How to make the object admissible where the injection alone cannot.
    Hint,
    /// A hint as the fix of a refusal: a security policy refuses the
    /// object because of the injection, and the hint says what to change.
    /// Each fix follows the same hint as a [`Cause::Hint`].
    Fix,
}

impl Cause {
    /// The cluster's verdict as the apiserver gives it (a rejection or a
    /// warning); `None` for what the tool says itself.
    pub fn verdict(self) -> Option<admission::Severity> {
        match self {
            Cause::Rejection | Cause::RejectionWarnedOnly | Cause::RejectionBeforeInjection => {
                Some(admission::Severity::Rejection)
            }
            Cause::ClusterWarning { .. } => Some(admission::Severity::Warning),
            Cause::Skipped | Cause::Note { .. } | Cause::Hint | Cause::Fix => None,
        }
    }

    /// Whether it is a rejection the injection caused (see
    /// [`Verdict::blocks`]), whether it fails the run or, with
    /// `--warn-only`, is read as a warning.
    pub fn refuses(self) -> bool {
        matches!(self, Cause::Rejection | Cause::RejectionWarnedOnly)
    }

    /// Whether the workload drew the verdict before injection too.
    pub fn before_injection(self) -> bool {
        match self {
            Cause::RejectionBeforeInjection => true,
            Cause::ClusterWarning { before_injection } => before_injection,
            _ => false,
        }
    }

    /// Whether it is about the run rather than the object: the text report
    /// says it once.
    pub fn for_run(self) -> bool {
        matches!(self, Cause::Note { for_run: true })
    }
}

/// One thing the run says of an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Diagnostic<'a> {
    pub severity: Severity,
    pub cause: Cause,
    /// In the words of whoever says it (the apiserver's, the mesh's, the
    /// tool's), without the introduction a sink gives it.
    pub message: &'a str,
    /// For the cluster's verdicts, what says so: an admission plugin
    /// (`PodSecurity`, `LimitRanger`), `validation` or `apiserver`.
    pub plugin: Option<&'static str>,
}

impl<'a> Diagnostic<'a> {
    /// Everything the run says of `object`, in the order the sinks give
    /// it: why it was skipped, the cluster's verdicts, the injection's
    /// notes, the hints, then the hints again as fixes where a security
    /// policy refuses the object. With `warn_only`, a rejection the
    /// injection caused is a warning.
    pub fn of_object(object: &'a ObjectResult, warn_only: bool) -> Vec<Diagnostic<'a>> {
        let mut said = Vec::new();
        if let Outcome::Skipped(reason) = &object.outcome {
            said.push(Diagnostic::said(Severity::Info, Cause::Skipped, reason));
        }
        said.extend(
            object
                .verdicts
                .iter()
                .map(|v| Diagnostic::of_verdict(v, warn_only)),
        );
        said.extend(object.notes.iter().map(Diagnostic::of_note));
        let hints = || object.hints.iter();
        said.extend(hints().map(|h| Diagnostic::said(Severity::Warning, Cause::Hint, h)));
        if refused_by_security_policy(&object.verdicts) {
            said.extend(hints().map(|h| Diagnostic::said(Severity::Info, Cause::Fix, h)));
        }
        said
    }

    /// What the cluster says: a rejection the injection caused is an
    /// error (a warning with `warn_only`), one the workload drew before
    /// injection too a warning always, and a warning a warning.
    fn of_verdict(verdict: &'a Verdict, warn_only: bool) -> Self {
        let (severity, cause) = match verdict.severity {
            admission::Severity::Rejection if !verdict.blocks() => {
                (Severity::Warning, Cause::RejectionBeforeInjection)
            }
            admission::Severity::Rejection if warn_only => {
                (Severity::Warning, Cause::RejectionWarnedOnly)
            }
            admission::Severity::Rejection => (Severity::Error, Cause::Rejection),
            admission::Severity::Warning => (
                Severity::Warning,
                Cause::ClusterWarning {
                    before_injection: verdict.before_injection,
                },
            ),
        };
        Diagnostic {
            severity,
            cause,
            message: &verdict.message,
            plugin: Some(verdict.plugin),
        }
    }

    /// The injection's note, of the note's own kind.
    fn of_note(note: &'a Note) -> Self {
        let severity = match note.kind {
            NoteKind::Info => Severity::Info,
            NoteKind::Warning => Severity::Warning,
        };
        let cause = Cause::Note {
            for_run: note.for_run,
        };
        Diagnostic::said(severity, cause, &note.text)
    }

    /// What the tool says itself (no plugin).
    fn said(severity: Severity, cause: Cause, message: &'a str) -> Self {
        Diagnostic {
            severity,
            cause,
            message,
            plugin: None,
        }
    }
}

/// Whether the cluster's security policies (Pod Security, a
/// PodSecurityPolicy) refuse the object because of the injection: what
/// the injection's hints are about, and when they are shown as its fixes.
fn refused_by_security_policy(verdicts: &[Verdict]) -> bool {
    verdicts
        .iter()
        .any(|v| v.blocks() && matches!(v.plugin, "PodSecurity" | "PodSecurityPolicy"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Deployment with `verdicts`, `notes` and `hints`, injected.
    fn object(verdicts: Vec<Verdict>, notes: Vec<Note>, hints: &[&str]) -> ObjectResult {
        ObjectResult {
            document: 1,
            reference: None,
            outcome: Outcome::Injected,
            ops: Vec::new(),
            notes,
            verdicts,
            hints: hints.iter().map(ToString::to_string).collect(),
            replaced: None,
            uneditable: false,
            patched: Vec::new(),
        }
    }

    fn before_injection(mut verdict: Verdict) -> Verdict {
        verdict.before_injection = true;
        verdict
    }

    /// Each diagnostic as `severity cause: message`.
    fn said(object: &ObjectResult, warn_only: bool) -> Vec<String> {
        Diagnostic::of_object(object, warn_only)
            .iter()
            .map(|d| format!("{} {:?}: {}", d.severity.as_str(), d.cause, d.message))
            .collect()
    }

    #[test]
    fn a_rejection_the_injection_caused_is_an_error_and_a_warning_with_warn_only() {
        let refused = object(
            vec![Verdict::rejection("ResourceQuota", "exceeded quota")],
            Vec::new(),
            &[],
        );
        assert_eq!(said(&refused, false), ["error Rejection: exceeded quota"]);
        assert_eq!(
            said(&refused, true),
            ["warning RejectionWarnedOnly: exceeded quota"]
        );
        let diagnostic = Diagnostic::of_object(&refused, true)[0];
        assert_eq!(diagnostic.plugin, Some("ResourceQuota"));
        assert!(diagnostic.cause.refuses() && !diagnostic.cause.before_injection());
        assert_eq!(
            diagnostic.cause.verdict(),
            Some(admission::Severity::Rejection)
        );
    }

    #[test]
    fn a_rejection_drawn_before_injection_too_is_a_warning_always() {
        let refused = object(
            vec![
                before_injection(Verdict::rejection("PodSecurity", "privileged")),
                before_injection(Verdict::warning("apiserver", "duplicate port name")),
                Verdict::warning("apiserver", "dropped field"),
            ],
            Vec::new(),
            &["use CNI mode"],
        );
        for warn_only in [false, true] {
            assert_eq!(
                said(&refused, warn_only),
                [
                    "warning RejectionBeforeInjection: privileged",
                    "warning ClusterWarning { before_injection: true }: duplicate port name",
                    "warning ClusterWarning { before_injection: false }: dropped field",
                    // Refused before injection too: the hint is no fix of a refusal.
                    "warning Hint: use CNI mode",
                ]
            );
        }
        let causes: Vec<Cause> = Diagnostic::of_object(&refused, false)
            .iter()
            .map(|d| d.cause)
            .collect();
        assert!(causes.iter().all(|c| !c.refuses()));
        assert!(causes[0].before_injection() && causes[1].before_injection());
        assert!(!causes[2].before_injection());
    }

    #[test]
    fn hints_are_fixes_when_a_security_policy_refuses_because_of_the_injection() {
        let hints = ["use CNI mode", "run as non-root"];
        let by_pod_security = object(
            vec![
                Verdict::warning("apiserver", "a warning"),
                Verdict::rejection("PodSecurity", "violates PodSecurity"),
            ],
            vec![Note::info("from the LimitRange")],
            &hints,
        );
        assert_eq!(
            said(&by_pod_security, false),
            [
                "warning ClusterWarning { before_injection: false }: a warning",
                "error Rejection: violates PodSecurity",
                "info Note { for_run: false }: from the LimitRange",
                "warning Hint: use CNI mode",
                "warning Hint: run as non-root",
                "info Fix: use CNI mode",
                "info Fix: run as non-root",
            ]
        );
        // The fixes hold with --warn-only: the policy refuses all the same.
        let fixes = |object: &ObjectResult, warn_only| {
            Diagnostic::of_object(object, warn_only)
                .iter()
                .filter(|d| d.cause == Cause::Fix)
                .count()
        };
        assert_eq!(fixes(&by_pod_security, true), 2);
        let by_psp = object(
            vec![Verdict::rejection(
                "PodSecurityPolicy",
                "unable to validate",
            )],
            Vec::new(),
            &hints,
        );
        assert_eq!(fixes(&by_psp, false), 2);
        // Another plugin's refusal, or a policy's refusal the workload drew
        // before injection too: hints only.
        let by_quota = object(
            vec![Verdict::rejection("ResourceQuota", "exceeded quota")],
            Vec::new(),
            &hints,
        );
        assert_eq!(fixes(&by_quota, false), 0);
        let before = object(
            vec![before_injection(Verdict::rejection(
                "PodSecurity",
                "privileged",
            ))],
            Vec::new(),
            &hints,
        );
        assert_eq!(fixes(&before, false), 0);
        let warned = object(
            vec![Verdict::warning("PodSecurity", "would violate")],
            Vec::new(),
            &hints,
        );
        assert_eq!(fixes(&warned, false), 0);
    }

    #[test]
    fn a_skip_and_the_notes_are_said_with_their_own_kinds() {
        let mut skipped = object(
            Vec::new(),
            vec![
                Note::warning("the annotation is ignored"),
                Note::info("the cluster's configuration").about_the_run(),
            ],
            &[],
        );
        skipped.outcome = Outcome::Skipped("hostNetwork is enabled".into());
        assert_eq!(
            said(&skipped, false),
            [
                "info Skipped: hostNetwork is enabled",
                "warning Note { for_run: false }: the annotation is ignored",
                "info Note { for_run: true }: the cluster's configuration",
            ]
        );
        let run_note = Diagnostic::of_object(&skipped, false)[2];
        assert!(run_note.cause.for_run() && run_note.cause.verdict().is_none());
        // Left alone as expected, or denied by the mesh's webhook (which
        // says so as a verdict): no skip is said.
        for outcome in [
            Outcome::Ignored("no pod template".into()),
            Outcome::Denied("an annotation the injector refuses".into()),
        ] {
            let left = ObjectResult {
                outcome,
                ..object(Vec::new(), Vec::new(), &[])
            };
            assert!(Diagnostic::of_object(&left, false).is_empty());
        }
    }
}

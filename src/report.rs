//! The report on stderr: one line per object, then a summary.

use std::fmt::Write;

use crate::pipeline::{ObjectResult, Processed};
use crate::rules::Outcome;

/// One line for an object: `deployment/web injected`.
pub fn object_line(object: &ObjectResult) -> String {
    let subject = match &object.reference {
        Some(reference) => reference.to_string(),
        None => format!("document {}", object.document),
    };
    let verdict = match &object.outcome {
        Outcome::Injected => "injected".to_string(),
        Outcome::AlreadyInjected => "unchanged: already injected".to_string(),
        Outcome::Uninjected => "uninjected".to_string(),
        Outcome::NotInjected => "unchanged: not injected".to_string(),
        Outcome::Skipped(reason) => format!("skipped: {reason}"),
    };
    format!("{subject} {verdict}")
}

/// The whole report: a line per object (prefixed with its file when there are
/// several sources) with its notes indented below; a note shared by several
/// objects (a missing profile value) is said once after them; then a summary.
pub fn render(results: &[Processed]) -> String {
    let mut out = String::new();
    let several = results.len() > 1;
    let mut note_counts: Vec<(&str, usize)> = Vec::new();
    for note in results
        .iter()
        .flat_map(|p| &p.objects)
        .flat_map(|o| &o.notes)
    {
        match note_counts.iter_mut().find(|(n, _)| *n == note.as_str()) {
            Some((_, count)) => *count += 1,
            None => note_counts.push((note, 1)),
        }
    }
    let shared = |note: &str| {
        note_counts
            .iter()
            .any(|(n, count)| *n == note && *count > 1)
    };
    let mut counts = [0usize; 5];
    for processed in results {
        for object in &processed.objects {
            if several {
                let _ = write!(out, "{}: ", processed.source.name());
            }
            let _ = writeln!(out, "{}", object_line(object));
            for note in object.notes.iter().filter(|n| !shared(n)) {
                let _ = writeln!(out, "  {note}");
            }
            let slot = match object.outcome {
                Outcome::Injected => 0,
                Outcome::Uninjected => 1,
                Outcome::AlreadyInjected | Outcome::NotInjected => 2,
                Outcome::Skipped(_) => 3,
            };
            counts[slot] += 1;
        }
        counts[4] += usize::from(processed.changed());
    }
    for (note, count) in note_counts.iter().filter(|(_, count)| *count > 1) {
        let _ = writeln!(out, "{note} ({count} objects)");
    }
    let [injected, uninjected, unchanged, skipped, changed] = counts;
    let mut parts = Vec::new();
    if injected > 0 || uninjected == 0 {
        parts.push(format!("{injected} injected"));
    }
    if uninjected > 0 {
        parts.push(format!("{uninjected} uninjected"));
    }
    parts.push(format!("{unchanged} unchanged"));
    parts.push(format!("{skipped} skipped"));
    let files = results.len();
    let _ = writeln!(
        out,
        "{}; {changed} of {files} {} changed",
        parts.join(", "),
        if files == 1 { "input" } else { "inputs" }
    );
    out
}

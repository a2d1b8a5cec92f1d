//! Reading again what the parser refuses but kubectl takes: flow
//! collections and quoted scalars whose continuation lines sit left of
//! their parent (see `yaml/indent.rs`), given spaces until the parser reads
//! through; and a tab after a mapping's `:` (`key:<TAB>value`), which
//! libyaml reads as the space YAML 1.2's parser wants there, read as one
//! (the same length: nothing else moves); and a byte order mark that starts
//! a later document (files saved on Windows, then concatenated), which
//! kubectl, splitting the stream into documents first, reads as the start of
//! that document's encoding: read without it.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::pass::{Pass, Stop};
use super::*;
use crate::yaml::expansion::Tally;
use crate::yaml::indent;

/// Read `text[from..to]` again after `stop`, with spaces put before the
/// lines of each flow collection or quoted scalar that the parser refuses
/// for their indentation and kubectl takes (see `indent.rs`), until it reads
/// through or stops for something else. Documents already handed to `each`
/// are not handed again.
pub(super) fn read_leniently<'a>(
    text: &'a str,
    from: usize,
    to: usize,
    mut stop: Stop,
    tally: &Tally,
    each: &mut impl FnMut(Document<'a>),
) -> Result<(), SyntaxError> {
    let first = stop.error.clone();
    // Directives bind to the next document: a pass with them starts at `from`.
    let part = text.get(from..to).unwrap_or_default();
    let directives = part.starts_with('%') || part.contains("\n%");
    let mut pads: BTreeMap<usize, isize> = BTreeMap::new();
    let mut spaced_tabs: Vec<usize> = Vec::new();
    let (mut start, mut before) = (from, 0);
    loop {
        if stop.misplaced {
            return Err(first);
        }
        let done = before + stop.done;
        let tab = tab_after_colon(text, &stop).filter(|t| !spaced_tabs.contains(t));
        // A byte order mark at a line start, read without it.
        let mark =
            byte_order_mark(text, &stop).filter(|&at| !matches!(pads.get(&at), Some(&p) if p < 0));
        if tab.is_some() || mark.is_some() {
            spaced_tabs.extend(tab);
            if let Some(at) = mark {
                pads.insert(at, -1);
            }
        } else {
            let Some((at, reached, open)) = stop
                .scan
                .filter(|_| indent::is_indentation_complaint(&stop.error.message))
            else {
                return Err(stop.error);
            };
            let Some(construct) = indent::construct_at(text, reached, at, open) else {
                return Err(stop.error);
            };
            let end = match indent::construct_end(text, construct, to) {
                Ok(end) => end,
                Err(Some(message)) => {
                    return Err(SyntaxError {
                        message: message.to_string(),
                        line: line_of(text, construct),
                        column: column_of(text, construct),
                        offset: construct,
                        ..stop.error
                    });
                }
                Err(None) => return Err(stop.error),
            };
            let pad = isize::try_from(indent::padding_for(text, construct)).unwrap_or(isize::MAX);
            let mut added = false;
            for line in indent::continuation_lines(text, construct, end) {
                let spaces = pads.entry(line).or_insert(0);
                if *spaces >= 0 && *spaces < pad {
                    *spaces = pad;
                    added = true;
                }
            }
            if !added {
                return Err(stop.error);
            }
        }
        if let Some((marker, documents)) = stop.marker.filter(|_| !directives) {
            start = marker;
            before += documents;
        }
        let (mut input, offsets) = padded(text, start, to, &pads);
        space_tabs(&mut input, start, &pads, &spaced_tabs);
        let padded_lines: Vec<usize> = pads
            .range(start..to)
            .filter(|(_, n)| **n > 0)
            .map(|(&line, _)| line)
            .collect();
        let pass = Pass {
            text,
            offsets,
            before,
            skip: done - before,
            padded: &padded_lines,
            tally,
        };
        match pass.read(&input, |value| Cow::Owned(value.into_owned()), each) {
            Ok(()) => return Ok(()),
            Err(next) => stop = *next,
        }
    }
}

/// The tab after a mapping's `:` that the parser stopped at, if it did:
/// libyaml takes it for the space YAML 1.2 wants there.
fn tab_after_colon(text: &str, stop: &Stop) -> Option<usize> {
    if stop.error.message != "':' must be followed by a valid YAML whitespace" {
        return None;
    }
    let (at, _, _) = stop.scan?;
    // The parser stops at the colon, the tab or just past it.
    [at.saturating_sub(1), at, at + 1].into_iter().find(|&i| {
        text.as_bytes().get(i) == Some(&b'\t') && i > 0 && text.as_bytes().get(i - 1) == Some(&b':')
    })
}

/// The start of the line whose byte order mark the parser stopped at, if it
/// stopped at one that starts a line.
fn byte_order_mark(text: &str, stop: &Stop) -> Option<usize> {
    if stop.error.message != "a byte order mark must not appear inside a document" {
        return None;
    }
    let (at, _, _) = stop.scan?;
    let bom = '\u{feff}'.len_utf8();
    // A document starts there: the line before is a `---`, or the mark's
    // own line is one.
    let starts_document = |i: usize| {
        let before = text.get(..i).unwrap_or_default();
        let previous = before
            .strip_suffix('\n')
            .map(|b| b.strip_suffix('\r').unwrap_or(b))
            .map(|b| b.rsplit('\n').next().unwrap_or(b));
        let marker = |line: &str| {
            line.strip_prefix("---")
                .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '\r', '\n']))
        };
        previous.is_some_and(marker) || text.get(i + bom..).is_some_and(marker)
    };
    (at.saturating_sub(bom)..=at).find(|&i| {
        text.get(i..)
            .is_some_and(|rest| rest.starts_with('\u{feff}'))
            && (i == 0 || text.as_bytes().get(i - 1) == Some(&b'\n'))
            && starts_document(i)
    })
}

/// In `input` (the text from `start`, with `pads` before lines), a
/// space for each of the tabs at `tabs` (offsets of `text`).
fn space_tabs(input: &mut String, start: usize, pads: &BTreeMap<usize, isize>, tabs: &[usize]) {
    let mut bytes = std::mem::take(input).into_bytes();
    for &tab in tabs.iter().filter(|&&t| t >= start) {
        let padding: isize = pads
            .range(start..=tab)
            .map(|(_, &n)| n * if n < 0 { 3 } else { 1 })
            .sum();
        let at = isize::try_from(tab - start).unwrap_or(isize::MAX) + padding;
        if let Some(byte) = usize::try_from(at).ok().and_then(|at| bytes.get_mut(at)) {
            if *byte == b'\t' {
                *byte = b' ';
            }
        }
    }
    // Only an ASCII byte became another: still UTF-8.
    *input = String::from_utf8(bytes).unwrap_or_default();
}

/// `text[start..to]` with `pads` spaces put before the lines they name, and
/// the offsets that map the parser's markers in it back to `text`.
pub(super) fn padded<'a>(
    text: &'a str,
    start: usize,
    to: usize,
    pads: &BTreeMap<usize, isize>,
) -> (String, Offsets<'a>) {
    let part = text.get(start..to).unwrap_or_default();
    let starts = line_starts(part);
    let mut line_pads = vec![0; starts.len()];
    let mut input = String::with_capacity(part.len() + pads.len() * 8);
    let mut copied = start;
    for (&line, &spaces) in pads.range(start..to) {
        input.push_str(text.get(copied..line).unwrap_or_default());
        copied = line;
        match usize::try_from(spaces) {
            Ok(spaces) => input.extend(std::iter::repeat_n(' ', spaces)),
            // The line's byte order mark is left out.
            Err(_) => copied += '\u{feff}'.len_utf8(),
        }
        if let Some(slot) = starts
            .binary_search(&(line - start))
            .ok()
            .and_then(|i| line_pads.get_mut(i))
        {
            *slot = spaces;
        }
    }
    input.push_str(text.get(copied..to).unwrap_or_default());
    let offsets = Offsets {
        text: part,
        base: start,
        line_starts: Some(starts),
        pads: line_pads,
        inserted: None,
    };
    (input, offsets)
}

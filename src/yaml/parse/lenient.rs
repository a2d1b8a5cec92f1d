//! Reading again what the parser refuses for its indentation but kubectl
//! takes: flow collections and quoted scalars whose continuation lines sit
//! left of their parent (see `yaml/indent.rs`), given spaces until the
//! parser reads through.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::pass::{Pass, Stop};
use super::*;
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
    each: &mut impl FnMut(Document<'a>),
) -> Result<(), SyntaxError> {
    let first = stop.error.clone();
    // Directives bind to the next document: a pass with them starts at `from`.
    let part = text.get(from..to).unwrap_or_default();
    let directives = part.starts_with('%') || part.contains("\n%");
    let mut pads: BTreeMap<usize, usize> = BTreeMap::new();
    let (mut start, mut before) = (from, 0);
    loop {
        if stop.misplaced {
            return Err(first);
        }
        let Some((at, reached, open)) = stop
            .scan
            .filter(|_| indent::is_indentation_complaint(&stop.error.message))
        else {
            return Err(stop.error);
        };
        let done = before + stop.done;
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
        let pad = indent::padding_for(text, construct);
        let mut added = false;
        for line in indent::continuation_lines(text, construct, end) {
            let spaces = pads.entry(line).or_insert(0);
            if *spaces < pad {
                *spaces = pad;
                added = true;
            }
        }
        if !added {
            return Err(stop.error);
        }
        if let Some((marker, documents)) = stop.marker.filter(|_| !directives) {
            start = marker;
            before += documents;
        }
        let (input, offsets) = padded(text, start, to, &pads);
        let padded_lines: Vec<usize> = pads.range(start..to).map(|(&line, _)| line).collect();
        let pass = Pass {
            text,
            offsets,
            before,
            skip: done - before,
            padded: &padded_lines,
        };
        match pass.read(&input, |value| Cow::Owned(value.into_owned()), each) {
            Ok(()) => return Ok(()),
            Err(next) => stop = *next,
        }
    }
}

/// `text[start..to]` with `pads` spaces put before the lines they name, and
/// the offsets that map the parser's markers in it back to `text`.
pub(super) fn padded<'a>(
    text: &'a str,
    start: usize,
    to: usize,
    pads: &BTreeMap<usize, usize>,
) -> (String, Offsets<'a>) {
    let part = text.get(start..to).unwrap_or_default();
    let starts = line_starts(part);
    let mut line_pads = vec![0; starts.len()];
    let mut input = String::with_capacity(part.len() + pads.values().sum::<usize>());
    let mut copied = start;
    for (&line, &spaces) in pads.range(start..to) {
        input.push_str(text.get(copied..line).unwrap_or_default());
        input.extend(std::iter::repeat_n(' ', spaces));
        copied = line;
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
    };
    (input, offsets)
}

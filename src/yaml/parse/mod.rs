//! Split a YAML stream into documents of span-carrying nodes.
//!
//! Built on `saphyr-parser`'s event stream. Its markers count characters; the
//! renderer splices bytes, so every marker is turned into a byte offset here.
//!
//! The parts: this module's entry points and positions; `pass.rs`, one
//! reading of the parser's events into nodes; `lenient.rs`, reading again
//! what the parser refuses for indentation that kubectl takes; `checks.rs`,
//! what the stream is refused for (characters, keys, tags JSON cannot hold).

use std::borrow::Cow;

use saphyr_parser::Marker;

mod checks;
mod json;
mod lenient;
mod list;
mod pass;

pub use list::{ListLines, list_lines};

use super::expansion::Tally;
use super::node::Node;
pub(crate) use checks::unprintable;
use lenient::read_leniently;
use pass::Pass;

/// One document of a stream.
#[derive(Debug)]
pub struct Document<'a> {
    /// 1-based position of the document in its stream.
    pub index: usize,
    /// The root node; `None` for an empty or comment-only document.
    pub root: Option<Node<'a>>,
    /// Byte range from the document's `---` (or first token) to where the
    /// next document starts (or its `...`); comments before its first token
    /// in a document without `---` fall outside it.
    pub start: usize,
    pub end: usize,
    /// Whether any node of the document carries an anchor or is an alias:
    /// the editor needs the anchors' values and users only then.
    pub anchored: bool,
}

/// A syntax error, positioned for the user (1-based line and column).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SyntaxError {
    pub message: String,
    pub document: usize,
    pub line: usize,
    pub column: usize,
    /// Byte offset of the error, for snippets.
    pub offset: usize,
}

/// Turns the parser's character markers into byte offsets.
struct Offsets<'a> {
    /// The part of the stream being parsed.
    text: &'a str,
    /// Where that part starts in the whole stream.
    base: usize,
    /// Byte offset of each line start; only built for non-ASCII text, where
    /// character and byte offsets differ, and for text read with padding.
    line_starts: Option<Vec<usize>>,
    /// Characters put before each line of the text the parser reads (spaces,
    /// see `indent.rs`), or taken from its start (a byte order mark, -1),
    /// by line; empty when it reads the text as it is.
    pads: Vec<isize>,
    /// Characters put before one place of the text (see [`Inserted`]).
    inserted: Option<Inserted>,
}

/// `---` and a space put at the start of the line of the opening bracket of
/// a JSON document, at character `index` of what the parser reads (0-based
/// `line`; the bracket is at column `col` of the text, character `target`):
/// so placed, the document's collection cannot be a mapping's key, and the
/// parser hands out its events as it goes rather than holding every token of
/// the document until its closing bracket tells (a 12 MB one-line document
/// took 70 MB of tokens).
#[derive(Debug, Clone, Copy)]
struct Inserted {
    index: usize,
    line: usize,
    col: usize,
    target: usize,
}

impl Inserted {
    /// What is inserted.
    const TEXT: &'static str = "--- ";
    const LEN: usize = Self::TEXT.len();
}

impl<'a> Offsets<'a> {
    fn new(text: &'a str, base: usize) -> Self {
        Offsets {
            text,
            base,
            line_starts: (!text.is_ascii()).then(|| line_starts(text)),
            pads: Vec::new(),
            inserted: None,
        }
    }

    /// `index` of the text the parser reads, in characters, as it is in
    /// the text (the characters inserted stand where they were put).
    fn unshifted(&self, index: usize) -> usize {
        match self.inserted {
            Some(at) if index >= at.index + Inserted::LEN => index - Inserted::LEN,
            Some(at) if index >= at.index => at.target,
            _ => index,
        }
    }

    /// Column `col` of 0-based line `line` of what the parser reads, as it
    /// is in the text.
    fn unshifted_col(&self, line: usize, col: usize) -> usize {
        match self.inserted {
            Some(at) if at.line == line && col >= Inserted::LEN => col - Inserted::LEN,
            Some(at) if at.line == line => at.col,
            _ => col,
        }
    }

    fn byte(&self, mark: &Marker) -> usize {
        self.base + self.relative(mark)
    }

    fn relative(&self, mark: &Marker) -> usize {
        let Some(starts) = &self.line_starts else {
            return self.unshifted(mark.index()).min(self.text.len());
        };
        let line_index = mark.line().saturating_sub(1);
        let Some(&line_start) = starts.get(line_index) else {
            return self.text.len();
        };
        let pad = self.pads.get(line_index).copied().unwrap_or(0);
        let line = self.text.get(line_start..).unwrap_or_default();
        let col = match pad {
            0 => self.unshifted_col(line_index, mark.col()),
            // Spaces put before the line, or its byte order mark left out.
            pad => mark.col().saturating_add_signed(-pad),
        };
        let within = line.char_indices().nth(col).map_or(line.len(), |(i, _)| i);
        line_start + within
    }
}

/// Byte offset of each line start of `text`, lines as the parser counts
/// them: a CR not followed by LF ends one too.
fn line_starts(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    std::iter::once(0)
        .chain(
            text.match_indices(['\n', '\r'])
                .filter(|&(i, c)| c == "\n" || bytes.get(i + 1) != Some(&b'\n'))
                .map(|(i, _)| i + 1),
        )
        .collect()
}

/// Most nesting a document may have; deeper input is refused rather than
/// risking the stack of whoever walks the tree afterwards.
pub const MAX_DEPTH: usize = 512;

/// Most nodes the aliases of one document may stand for once expanded: a
/// "billion laughs" stream is refused here, before anything expands it
/// (and so are aliases that stand for too many bytes, see `expansion.rs`).
pub const MAX_ALIAS_EXPANSION: u64 = super::expansion::MAX_ALIAS_NODES;

/// Parse every document of `text`.
pub fn parse_stream(text: &str) -> Result<Vec<Document<'_>>, SyntaxError> {
    parse_range(text, 0, text.len())
}

/// Parse the documents in `text[from..to]`, with byte offsets (and error
/// offsets) into the whole of `text`. Document indexes count from 1 within the range.
pub fn parse_range(text: &str, from: usize, to: usize) -> Result<Vec<Document<'_>>, SyntaxError> {
    parse_range_counted(text, from, to, &Tally::default())
}

/// [`parse_range`], what the aliases stand for counted in `tally` with
/// those of the input's other documents (see [`each_document_counted`]).
pub fn parse_range_counted<'a>(
    text: &'a str,
    from: usize,
    to: usize,
    tally: &Tally,
) -> Result<Vec<Document<'a>>, SyntaxError> {
    let mut documents = Vec::new();
    each_document_counted(text, from, to, tally, |document| {
        documents.push(document);
    })?;
    Ok(documents)
}

/// Parse the documents in `text[from..to]` as [`parse_range`] does, handing
/// each to `each` as soon as it is complete: a caller that is done with a
/// document drops its tree before the next is built.
pub fn each_document<'a>(
    text: &'a str,
    from: usize,
    to: usize,
    each: impl FnMut(Document<'a>),
) -> Result<(), SyntaxError> {
    each_document_counted(text, from, to, &Tally::default(), each)
}

/// [`each_document`], what the aliases of each document stand for counted
/// in `tally`, which the input's other documents (read in other parts, on
/// other threads, or in other sources) count in too: the documents are
/// refused once their aliases together stand for too much (see
/// `expansion.rs`), each counted once however often it is read.
pub fn each_document_counted<'a>(
    text: &'a str,
    from: usize,
    to: usize,
    tally: &Tally,
    mut each: impl FnMut(Document<'a>),
) -> Result<(), SyntaxError> {
    read_part(text, from, to, tally, &mut each)
}

/// [`each_document`], with JSON streams read as kubectl reads them (see
/// `json.rs`): one value after another, each as its own document; escaped
/// surrogate pairs as the characters they write.
fn read_part<'a>(
    text: &'a str,
    from: usize,
    to: usize,
    tally: &Tally,
    each: &mut dyn FnMut(Document<'a>),
) -> Result<(), SyntaxError> {
    let part = text.get(from..to).unwrap_or_default();
    if !json::is_json(part) {
        return read_yaml(text, from, to, tally, each);
    }
    if let Some(values) = json::values(part) {
        // Each value with the space after it, as a value alone in its part
        // is read: a stream cut between values (`split_points`) reads the same.
        let ends = values
            .iter()
            .skip(1)
            .map(|&(start, _)| start)
            .chain([part.len()]);
        let values: Vec<(usize, usize)> =
            values.iter().map(|&(start, _)| start).zip(ends).collect();
        let mut before = 0;
        for (start, end) in values {
            let mut count = 0;
            let mut numbered = |mut document: Document<'a>| {
                count += 1;
                document.index += before;
                each(document);
            };
            read_part(text, from + start, from + end, tally, &mut numbered).map_err(|error| {
                SyntaxError {
                    document: error.document + before,
                    ..error
                }
            })?;
            before += count;
        }
        return Ok(());
    }
    let pairs = json::surrogate_pairs(part);
    if pairs.is_empty() {
        return read_yaml(text, from, to, tally, each);
    }
    let input = json::without_surrogates(part, &pairs);
    let absolute: Vec<usize> = pairs.iter().map(|p| from + p).collect();
    let pass = Pass {
        text,
        offsets: Offsets::new(part, from),
        before: 0,
        skip: 0,
        padded: &[],
        tally,
    };
    let mut restored = |mut document: Document<'a>| {
        if let Some(root) = &mut document.root {
            json::restore_pairs(text, root, &absolute);
        }
        each(document);
    };
    pass.read(
        &input,
        |value| Cow::Owned(value.into_owned()),
        &mut restored,
    )
    .map_err(|stop| stop.error)
}

/// [`each_document`] for YAML (and JSON read as YAML).
fn read_yaml<'a>(
    text: &'a str,
    from: usize,
    to: usize,
    tally: &Tally,
    each: &mut dyn FnMut(Document<'a>),
) -> Result<(), SyntaxError> {
    let Some(part) = text.get(from..to) else {
        return Err(SyntaxError {
            message: format!("bytes {from}..{to} are not a stretch of the text"),
            document: 1,
            line: line_of(text, from),
            column: column_of(text, from),
            offset: from.min(text.len()),
        });
    };
    if let Some((at, c)) = unprintable(part) {
        let offset = from + at;
        // Documents before it, by their `---` lines (after the first line,
        // the stream's first document may start with one).
        let document = text.get(from..offset).map_or(1, |before| {
            before
                .split('\n')
                .skip(1)
                .filter(|line| {
                    line.strip_prefix("---")
                        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '\r']))
                })
                .count()
                + 1
        });
        return Err(SyntaxError {
            message: format!(
                "control characters are not allowed (U+{:04X})",
                u32::from(c)
            ),
            document,
            line: line_of(text, offset),
            column: column_of(text, offset),
            offset,
        });
    }
    let mut pass = Pass {
        text,
        offsets: Offsets::new(part, from),
        before: 0,
        skip: 0,
        padded: &[],
        tally,
    };
    // One JSON value: read with `--- ` before its bracket (see [`Inserted`]).
    let mut prefixed = String::new();
    let line_at = if json::one_value(part) {
        // A document marker starts a line.
        let bracket = part.len() - part.trim_start().len();
        let before = part.get(..bracket).unwrap_or_default();
        let line = before.matches(['\n', '\r']).count() - before.matches("\r\n").count();
        let line_at = before.rfind(['\n', '\r']).map_or(0, |i| i + 1);
        let index = before.get(..line_at).unwrap_or_default().chars().count();
        let col = before.get(line_at..).unwrap_or_default().chars().count();
        pass.offsets.inserted = Some(Inserted {
            index,
            line,
            col,
            target: index + col,
        });
        prefixed.reserve(part.len() + Inserted::LEN);
        prefixed.push_str(part.get(..line_at).unwrap_or_default());
        prefixed.push_str(Inserted::TEXT);
        prefixed.push_str(part.get(line_at..).unwrap_or_default());
        line_at
    } else {
        0
    };
    // Unicode's line breaks, which libyaml (and so kubectl) reads as line
    // breaks and YAML 1.2's parser as characters: each document is checked
    // for one where the two readers differ.
    let breaks = checks::unicode_line_breaks(part, from);
    let mut misread: Option<SyntaxError> = None;
    let mut covered: Vec<(usize, usize)> = Vec::new();
    let mut each = |document: Document<'a>| {
        if misread.is_none() && !breaks.is_empty() {
            misread = checks::misread_line_break(text, &document, &breaks);
            covered.push((document.start, document.end));
        }
        each(document);
    };
    let read = if prefixed.is_empty() {
        pass.read(part, |value| value, &mut each)
    } else {
        // What the parser lends from the text it reads is lent from the
        // stream: the same bytes, the inserted ones aside.
        let (input, inserted, at) = (prefixed.as_str(), Inserted::LEN, line_at);
        let lent = |value: Cow<'_, str>| match value {
            Cow::Borrowed(s) => {
                let offset = (s.as_ptr() as usize).wrapping_sub(input.as_ptr() as usize);
                let offset = if offset >= at + inserted {
                    offset - inserted
                } else {
                    offset
                };
                match part.get(offset..offset + s.len()) {
                    Some(same) if same == s => Cow::Borrowed(same),
                    _ => Cow::Owned(s.to_string()),
                }
            }
            Cow::Owned(s) => Cow::Owned(s),
        };
        pass.read(input, lent, &mut each)
    };
    let read = match read {
        Ok(()) => Ok(()),
        Err(stop) => read_leniently(text, from, to, *stop, tally, &mut each),
    };
    drop(prefixed);
    // One outside every document (in the comments before the first) is
    // read otherwise too.
    let outside = breaks
        .iter()
        .copied()
        .find(|&at| !covered.iter().any(|&(start, end)| start <= at && at < end));
    match (misread, outside) {
        (Some(error), _) => Err(error),
        (None, Some(at)) if read.is_ok() => Err(checks::line_break_outside(text, at)),
        _ => read,
    }
}

/// 1-based line of byte `at` of `text`.
fn line_of(text: &str, at: usize) -> usize {
    text.get(..at).unwrap_or(text).matches('\n').count() + 1
}

/// [`split_points`] for a JSON stream: at the start of the first value
/// from each part's start on (a stream that is not whole values is not cut).
fn json_split_points(text: &str, parts: usize) -> Vec<usize> {
    let mut points = vec![0];
    let values = match parts {
        0 | 1 => Vec::new(),
        _ => json::every_value(text).unwrap_or_default(),
    };
    let step = text.len() / parts.max(1);
    let mut values = values.into_iter().map(|(start, _)| start).peekable();
    for part in 1..parts {
        let target = part * step;
        while values.next_if(|&start| start < target).is_some() {}
        match values.next() {
            Some(start) if start > points.last().copied().unwrap_or_default() => points.push(start),
            Some(_) => {}
            None => break,
        }
    }
    points.push(text.len());
    points
}

/// 1-based column, in characters, of byte `at` of `text`.
fn column_of(text: &str, at: usize) -> usize {
    let before = text.get(..at).unwrap_or(text);
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    before.get(line_start..).unwrap_or_default().chars().count() + 1
}

/// Byte offsets that cut `text` into about `parts` ranges of whole
/// documents, for parsing them in parallel: `[0, …, text.len()]`. A cut is made
/// only before a `---` line, which YAML never allows inside a document's
/// content, and never in a stream with directives (they bind to the next
/// document); in a JSON stream, between two of its values.
pub fn split_points(text: &str, parts: usize) -> Vec<usize> {
    if json::is_json(text) {
        return json_split_points(text, parts);
    }
    let mut points = vec![0];
    if parts > 1 && !text.starts_with('%') && !text.contains("\n%") {
        let step = text.len() / parts;
        let mut at = 0;
        for part in 1..parts {
            let target = (part * step).max(at);
            let mut found = None;
            let mut search = target;
            while let Some(i) = text.get(search..).and_then(|rest| rest.find("\n---")) {
                let line = search + i + 1;
                let after = text.as_bytes().get(line + 3);
                if matches!(after, None | Some(b' ' | b'\t' | b'\r' | b'\n')) {
                    found = Some(line);
                    break;
                }
                search = line;
            }
            match found {
                Some(line) if line > at => {
                    points.push(line);
                    at = line;
                }
                _ => break,
            }
        }
    }
    points.push(text.len());
    points
}

#[cfg(test)]
// Tests may slice: a panic there is a failed test (as clippy.toml says for indexing).
#[allow(clippy::string_slice)]
mod tests {
    use super::*;
    use crate::yaml::node::NodeKind;

    fn spans(text: &str) -> Vec<Document<'_>> {
        parse_stream(text).expect("parses")
    }

    #[test]
    fn documents_and_empty_documents() {
        let docs = spans("a: 1\n---\n# only a comment\n---\n- x\n");
        assert_eq!(docs.len(), 3);
        assert!(docs[0].root.is_some());
        assert!(docs[1].root.is_none());
        assert_eq!(docs[2].index, 3);
    }

    #[test]
    fn documents_with_anchors_or_aliases_are_flagged() {
        let text = "a: 1\n---\nb: &x {c: 1}\n---\nd: [*x]\n---\ne: !!str &y f\n---\ng: '&h'\n";
        let flags: Vec<bool> = spans(text).iter().map(|d| d.anchored).collect();
        assert_eq!(flags, [false, true, true, true, false]);
    }

    #[test]
    fn a_flow_collection_ends_after_its_bracket_and_a_tagged_empty_value_is_its_tag() {
        let text = "a: {b: 1,\n  }\nc: [1, # one\n  ]\nd: {e: !custom}\n";
        let docs = spans(text);
        let root = docs[0].root.as_ref().expect("root");
        let span = |node: &Node<'_>| &text[node.start..node.end];
        assert_eq!(span(root.get("a").expect("a")), "{b: 1,\n  }");
        assert_eq!(span(root.get("c").expect("c")), "[1, # one\n  ]");
        let e = root.get("d").and_then(|d| d.get("e")).expect("e");
        assert_eq!(span(e), "!custom");
        // A quoted scalar ends at its closing quote, not after spaces past it.
        let text = "a: {b: \"c,d\" ,}\n";
        let docs = spans(text);
        let b = docs[0]
            .root
            .as_ref()
            .and_then(|r| r.get("a"))
            .and_then(|a| a.get("b"));
        let b = b.expect("b");
        assert_eq!(&text[b.start..b.end], "\"c,d\"");
        // A block mapping ending with a value left out ends after its `:`.
        let text = "- a:b:\n- c\n";
        let docs = spans(text);
        let root = docs[0].root.as_ref().expect("root");
        if let NodeKind::Seq { items, .. } = &root.kind {
            assert_eq!(&text[items[0].start..items[0].end], "a:b:");
        }
        // Spaces after an inner bracket are not the inner collection's.
        let text = "x: {y: {z: 1}   }
";
        let docs = spans(text);
        let x = docs[0].root.as_ref().and_then(|r| r.get("x")).expect("x");
        let y = x.get("y").expect("y");
        assert_eq!(&text[x.start..x.end], "{y: {z: 1}   }");
        assert_eq!(&text[y.start..y.end], "{z: 1}");
    }

    #[test]
    fn block_and_flow_spans_are_bytes() {
        let text = "k: é\nm: {a: b}\ns:\n- one\n";
        let docs = spans(text);
        let root = docs[0].root.as_ref().expect("root");
        let m = root.get("m").expect("m");
        assert!(m.is_flow());
        assert_eq!(&text[m.start..m.end], "{a: b}");
        let s = root.get("s").expect("s");
        assert_eq!(&text[s.start..s.end], "one");
        assert_eq!(root.end, text.len() - 1);
    }

    /// Parsing `text` in the ranges between `points` gives `whole`'s
    /// documents, with the same spans.
    fn assert_ranges_give(text: &str, points: &[usize], whole: &[Document<'_>]) {
        let mut parts = Vec::new();
        for pair in points.windows(2) {
            parts.extend(parse_range(text, pair[0], pair[1]).expect("parses"));
        }
        assert_eq!(whole.len(), parts.len());
        for (w, p) in whole.iter().zip(&parts) {
            assert_eq!((w.start, w.end), (p.start, p.end));
            assert_eq!(
                w.root.as_ref().map(|r| (r.start, r.end)),
                p.root.as_ref().map(|r| (r.start, r.end))
            );
        }
    }

    #[test]
    fn ranges_parse_to_the_same_documents() {
        let text = "a: 1\n---\nb: [x]\n--- # c\nc: |\n  ---text\n---\nd: é\n";
        let points = split_points(text, 3);
        assert!(points.len() > 2, "{points:?}");
        let whole = parse_stream(text).expect("parses");
        assert_ranges_give(text, &points, &whole);
        assert_eq!(
            split_points("%YAML 1.2\n---\na: 1\n---\nb: 2\n", 2).len(),
            2
        );
        // A JSON stream, between its values.
        let text = "{\"a\": \"}{\"}\n{\"b\": [1]}\n{\"c\": {}}\n{\"d\": 2}\n";
        let points = split_points(text, 3);
        assert_eq!(points, [0, 23, 33, text.len()]);
        assert_ranges_give(text, &points, &parse_stream(text).expect("parses"));
        assert_eq!(split_points("{\"a\": 1", 3), [0, 7]);
    }

    #[test]
    fn errors_carry_positions() {
        let err = parse_stream("a: 1\n---\nb: [1, 2\n").expect_err("bad");
        assert_eq!(err.document, 2);
        assert!(err.line >= 3, "{err:?}");
    }

    #[test]
    fn duplicate_keys_are_refused_where_they_repeat() {
        let err = parse_stream("a: 1\n---\nm:\n  x: 1\n  y: 2\n  \"x\": 3\n").expect_err("dup");
        assert_eq!(err.message, "mapping key \"x\" already defined at line 4");
        assert_eq!((err.document, err.line, err.column), (2, 6, 3));
        let many: String = (0..40).map(|i| format!("k{i}: v\n")).collect();
        let err = parse_stream(&format!("{many}k39: again\n")).expect_err("dup");
        assert_eq!(
            err.message,
            "mapping key \"k39\" already defined at line 40"
        );
        // Merge keys may repeat; the same key in different mappings is fine.
        parse_stream("b: &b {x: 1}\nc: &c {y: 1}\nm:\n  <<: *b\n  <<: *c\nn: {x: 1}\n")
            .expect("parses");
    }

    /// The text of the node at `path` (keys of nested mappings) in `text`'s first document.
    fn span_at<'t>(text: &'t str, path: &[&str]) -> &'t str {
        let docs = parse_stream(text).unwrap_or_else(|e| panic!("{text:?}: {e:?}"));
        let mut node = docs[0].root.as_ref().expect("root");
        for key in path {
            node = node.get(key).unwrap_or_else(|| panic!("{key} in {text:?}"));
        }
        &text[node.start..node.end]
    }

    fn scalar_at(text: &str, path: &[&str]) -> String {
        let docs = parse_stream(text).unwrap_or_else(|e| panic!("{text:?}: {e:?}"));
        let mut node = docs[0].root.as_ref().expect("root");
        for key in path {
            node = node.get(key).unwrap_or_else(|| panic!("{key} in {text:?}"));
        }
        node.as_str().expect("a scalar").to_string()
    }

    #[test]
    fn quoted_scalars_continued_at_or_left_of_their_keys_column_read_as_kubectl_reads_them() {
        // Real annotation values: the lines after the first are indented to
        // the key's column, or not at all. kubectl's reader (libyaml's rules)
        // takes them; the value folds the line breaks into spaces.
        let text = "metadata:\n  annotations:\n    a: '[\n    {\"x\": 1}\n    ]'\n    b: 2\n";
        assert_eq!(
            scalar_at(text, &["metadata", "annotations", "a"]),
            "[ {\"x\": 1} ]"
        );
        assert_eq!(
            span_at(text, &["metadata", "annotations", "a"]),
            "'[\n    {\"x\": 1}\n    ]'"
        );
        assert_eq!(span_at(text, &["metadata", "annotations", "b"]), "2");
        // A comment after a quoted scalar is not part of it.
        let text = "a: \"9090\"   # the app's\nb: 'x' # y\n";
        assert_eq!(span_at(text, &["a"]), "\"9090\"");
        assert_eq!(span_at(text, &["b"]), "'x'");
        let text = "m:\n  a: \"x\ny \\\"z\\\"\n\n  w\"\no: é\n";
        assert_eq!(scalar_at(text, &["m", "a"]), "x y \"z\"\nw");
        assert_eq!(span_at(text, &["m", "a"]), "\"x\ny \\\"z\\\"\n\n  w\"");
        assert_eq!(span_at(text, &["o"]), "é");
        // In a list, with non-ASCII text before and in it, and tabs at the
        // start of a continuation line (white space there, not indentation).
        let text = "é: ü\nl:\n  - k: 'ä\n\tb\n c'\n    z: 1\n";
        let docs = parse_stream(text).expect("parses");
        let l = docs[0].root.as_ref().and_then(|r| r.get("l")).expect("l");
        let NodeKind::Seq { items, .. } = &l.kind else {
            panic!("a list")
        };
        let k = items[0].get("k").expect("k");
        assert_eq!(
            (k.as_str(), &text[k.start..k.end]),
            (Some("ä b c"), "'ä\n\tb\n c'")
        );
        let z = items[0].get("z").expect("z");
        assert_eq!(&text[z.start..z.end], "1");
    }

    #[test]
    fn flow_collections_continued_left_of_their_keys_column_read_as_kubectl_reads_them() {
        let text = "m:\n  a: [x,\n  w, 'p\nq',\n{k: v}]\n  b: {c: 1,\nd: [2,\n 3]}\no: 1\n";
        assert_eq!(span_at(text, &["m", "a"]), "[x,\n  w, 'p\nq',\n{k: v}]");
        assert_eq!(span_at(text, &["m", "b"]), "{c: 1,\nd: [2,\n 3]}");
        assert_eq!(span_at(text, &["m", "b", "d"]), "[2,\n 3]");
        assert_eq!(span_at(text, &["o"]), "1");
        let docs = parse_stream(text).expect("parses");
        let value = crate::yaml::value::to_value(docs[0].root.as_ref().expect("root"));
        assert_eq!(
            value.expect("resolves"),
            serde_json::json!({"m": {"a": ["x", "w", "p q", {"k": "v"}], "b": {"c": 1, "d": [2, 3]}}, "o": 1})
        );
    }

    #[test]
    fn what_kubectl_refuses_in_quoted_scalars_stays_refused() {
        // Never closed: refused at the opening quote, in libyaml's words.
        let err = parse_stream("a: 1\n---\nm:\n  o: \"web\nx: 1\n").expect_err("unclosed");
        assert_eq!(
            (err.message.as_str(), err.document, err.line, err.column),
            (
                "while scanning a quoted scalar, found unexpected end of stream",
                2,
                4,
                6
            )
        );
        // A document marker inside a quoted scalar ends the document.
        let err = parse_stream("m:\n  o: 'a\n---\n  b'\n").expect_err("marker");
        assert_eq!(
            err.message,
            "while scanning a quoted scalar, found unexpected document indicator"
        );
        // Tabs as block indentation, and plain scalars continued at their
        // key's column, are refused as before.
        parse_stream("m:\n\ta: 1\n").expect_err("tab");
        parse_stream("m:\n  a: x\n  y\n").expect_err("plain");
        parse_stream("m:\n  a: x\ny\n").expect_err("plain");
    }

    #[test]
    fn later_documents_after_a_lenient_read_keep_their_places() {
        let text = "a: 1\n---\nb: 'x\ny'\n---\nc: [1,\n2]\n---\nd: é\n";
        let docs = parse_stream(text).expect("parses");
        let indexes: Vec<usize> = docs.iter().map(|d| d.index).collect();
        assert_eq!(indexes, [1, 2, 3, 4]);
        let texts: Vec<&str> = docs.iter().map(|d| &text[d.start..d.end]).collect();
        assert_eq!(
            texts,
            [
                "a: 1\n",
                "---\nb: 'x\ny'\n",
                "---\nc: [1,\n2]\n",
                "---\nd: é\n"
            ]
        );
        // Ranges give the same documents and spans.
        assert_ranges_give(text, &split_points(text, 4), &docs);
        let err = parse_stream("a: 'x\ny'\n---\nb: [1,\n2\n---\nc: 1\n").expect_err("bad");
        assert_eq!(err.document, 2);
    }

    #[test]
    fn what_kubectl_cannot_turn_into_json_is_refused() {
        let refused = |text: &str| parse_stream(text).expect_err(text).message;
        // A tag the value does not fit, in kubectl's words.
        assert_eq!(
            refused("a: !!int 1.5\n"),
            "cannot decode !!float `1.5` as a !!int"
        );
        assert_eq!(
            refused("a: !!null x\n"),
            "cannot decode !!str `x` as a !!null"
        );
        assert_eq!(
            refused("a: !!bool\n"),
            "cannot decode !!null `` as a !!bool"
        );
        assert_eq!(
            refused("a: !!int yes\n"),
            "cannot decode !!bool `yes` as a !!int"
        );
        // Infinities and NaN: JSON has none.
        for text in ["a: .inf\n", "- -.Inf\n", "a: [.NaN]\n", "!!float .inf\n"] {
            assert!(refused(text).contains("JSON"), "{text}");
        }
        // Null keys and collections as keys.
        for text in [
            "~: 1\n",
            "{: 1}\n",
            "? \n: 1\n",
            "null: 1\n",
            "!!null '': 1\n",
        ] {
            assert!(refused(text).contains("null mapping key"), "{text}");
        }
        for text in ["[a]: 1\n", "? {a: 1}\n: 1\n", "a: &x [1]\nb: {*x : 2}\n"] {
            assert!(refused(text).contains("as a mapping key"), "{text}");
        }
        // What kubectl takes: quoted or keys, tags that fit, scalar aliases as keys.
        for text in [
            "a: '.inf'\n",
            ".inf: 1\n",
            "a: !!float 0x10\nb: !!int '12'\nc: !!str 1.5\nd: !!bool yes\ne: !!null ''\n",
            "a: &x k\nb: {*x : 2}\n",
        ] {
            parse_stream(text).unwrap_or_else(|e| panic!("{text}: {e:?}"));
        }
    }

    #[test]
    fn control_characters_are_refused_where_they_are() {
        let err = parse_stream("a: 1\n---\nb: \"x\u{16}\"\n").expect_err("control");
        assert_eq!(err.message, "control characters are not allowed (U+0016)");
        assert_eq!(
            (err.document, err.line, err.column, err.offset),
            (2, 3, 6, 14)
        );
        let err = parse_stream("a: é\u{85}x\u{9f}\n").expect_err("C1");
        assert_eq!(err.message, "control characters are not allowed (U+009F)");
        parse_stream("a: \"\t\u{feff}\"\r\n").expect("allowed");
    }

    #[test]
    fn control_characters_are_found_at_any_offset() {
        // The stream is looked at a chunk at a time: a character on either
        // side of a chunk's edge, or split by it, is found all the same.
        for bad in [
            '\u{1}', '\u{7f}', '\u{80}', '\u{9f}', '\u{fffe}', '\u{ffff}',
        ] {
            for at in 0..140 {
                let text = format!("{}{bad}é", "x".repeat(at));
                assert_eq!(unprintable(&text), Some((at, bad)), "{bad:?} at {at}");
            }
        }
        for fine in ['\t', '\n', '\r', '\u{85}', '\u{a0}', '\u{fffd}', '\u{feff}'] {
            for at in 0..140 {
                let text = format!("{}{fine}é", "x".repeat(at));
                assert_eq!(unprintable(&text), None, "{fine:?} at {at}");
            }
        }
    }

    #[test]
    fn alias_bombs_are_refused_before_expansion() {
        let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        let mut prev = 'a';
        for name in 'b'..='h' {
            let items = vec![format!("*{prev}"); 10].join(", ");
            text.push_str(&format!("{name}: &{name} [{items}]\n"));
            prev = name;
        }
        let err = parse_stream(&text).expect_err("bomb");
        assert_eq!(
            err.message,
            "aliases expand to more than 1000000 nodes (an alias bomb?)"
        );
        assert_eq!((err.line, err.column), (6, 36), "{err:?}");
        // Many aliases of a small anchor are fine.
        let fine: String = (0..1000).map(|i| format!("k{i}: *a\n")).collect();
        parse_stream(&format!("a: &a {{x: 1}}\n{fine}")).expect("parses");
    }

    /// Every node's span and scalar under `node`, in order.
    fn shape(node: &Node<'_>, out: &mut Vec<(usize, usize, Option<String>)>) {
        out.push((node.start, node.end, node.as_str().map(str::to_string)));
        match &node.kind {
            NodeKind::Map { entries, .. } => {
                for (key, value) in entries {
                    shape(key, out);
                    shape(value, out);
                }
            }
            NodeKind::Seq { items, .. } => items.iter().for_each(|item| shape(item, out)),
            _ => {}
        }
    }

    #[test]
    fn one_json_document_reads_as_it_did_with_a_marker_before_its_bracket() {
        // With a comment after it, a JSON document is read as it is; alone,
        // with `--- ` put before its line: the same nodes, in the same places.
        for text in [
            "{\"a\": [1, \"b\", {\"c\": null}], \"d\": \"e\"}",
            "  {\"a\": 1}\n",
            "\n\n  [{\"é\": \"ü\"}, 2,\n   {\"x\": \"é\"}]\n",
            "\r\n{\"a\": \"x\\ty\", \"b\": [true, 0644]}",
        ] {
            let commented = format!("{text}\n# end\n");
            let (mut one, mut other) = (Vec::new(), Vec::new());
            let docs = parse_stream(text).expect("parses");
            let (start, end) = (docs[0].start, docs[0].end);
            shape(docs[0].root.as_ref().expect("root"), &mut one);
            let docs = parse_stream(&commented).expect("parses");
            shape(docs[0].root.as_ref().expect("root"), &mut other);
            assert_eq!(one, other, "{text:?}");
            assert_eq!(start, docs[0].start, "{text:?}");
            assert!(end <= text.len(), "{text:?}");
        }
        // Errors are placed as they were.
        let err = parse_stream("\n  {\"a\": é, \"a\": 2}").expect_err("duplicate");
        assert_eq!((err.line, err.column), (2, 12), "{err:?}");
        let err = parse_stream("  {\"a\": [1, 2}").expect_err("unclosed");
        assert_eq!((err.line, err.column), (1, 14), "{err:?}");
    }

    /// `count` aliases of an anchor `a` holding `anchor`, in a list.
    fn aliases_of(anchor: &str, count: usize) -> String {
        format!("a: &a {anchor}\nb: [{}]\n", vec!["*a"; count].join(", "))
    }

    #[test]
    fn aliases_that_stand_for_too_many_bytes_are_refused_before_expansion() {
        // Few nodes, but a kilobyte each: 40,000 of them are 40 MB written out.
        let long = format!("\"{}\"", "x".repeat(1000));
        let err = parse_stream(&aliases_of(&long, 40_000))
            .map(|_| ())
            .expect_err("too big");
        assert_eq!(
            err.message,
            "aliases expand to more than 32 MiB written out (an alias bomb?)"
        );
        assert_eq!((err.document, err.line), (1, 2), "{err:?}");
        // 20,000 are 20 MB: taken.
        parse_stream(&aliases_of(&long, 20_000)).expect("parses");
        // Nested deep, a list of one scalar is written out on 300 lines
        // indented up to 600 spaces (90 kB): counted so, 400 of them are
        // refused, while as many of a flat list of as many scalars are taken.
        let deep = format!("\n  {}x", "- ".repeat(300));
        let err = parse_stream(&aliases_of(&deep, 400))
            .map(|_| ())
            .expect_err("deep");
        assert!(err.message.contains("32 MiB"), "{err:?}");
        let flat = format!("[{}]", vec!["x"; 300].join(", "));
        parse_stream(&aliases_of(&flat, 400)).expect("parses");
    }

    #[test]
    fn the_aliases_of_an_input_are_counted_together_each_document_once() {
        // 24 MB written out a document: one is taken, two are too much,
        // in one stream or two, read whole or in parts.
        let long = format!("\"{}\"", "x".repeat(1000));
        let one = aliases_of(&long, 24_000);
        let two = format!("{one}---\n{one}");
        let tally = Tally::default();
        let err = parse_range_counted(&two, 0, two.len(), &tally)
            .map(|_| ())
            .expect_err("two");
        assert_eq!(
            err.message,
            "the aliases of this input's documents expand to more than 32 MiB written out \
             in all (an alias bomb?)"
        );
        assert_eq!((err.document, err.line), (2, 5), "{err:?}");
        let second = one.len();
        let tally = Tally::default();
        parse_range_counted(&two, 0, second, &tally).expect("the first");
        // The first again: still counted once.
        parse_range_counted(&two, 0, second, &tally).expect("the first again");
        let err = parse_range_counted(&two, second, two.len(), &tally)
            .map(|_| ())
            .expect_err("then the second");
        assert!(err.message.contains("in all"), "{err:?}");
        // Another stream, counted with it.
        let tally = Tally::default();
        let other = one.clone();
        parse_range_counted(&one, 0, one.len(), &tally).expect("one");
        let err = parse_range_counted(&other, 0, other.len(), &tally)
            .map(|_| ())
            .expect_err("other");
        assert!(err.message.contains("in all"), "{err:?}");
        // Each stream alone, with a tally of its own, is taken.
        parse_stream(&two[second..]).expect("alone");
    }
}

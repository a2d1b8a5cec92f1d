//! Split a YAML stream into documents of span-carrying nodes.
//!
//! Built on `saphyr-parser`'s event stream. Its markers count characters; the
//! renderer splices bytes, so every marker is turned into a byte offset here.

use std::borrow::Cow;
use std::collections::BTreeMap;

use saphyr_parser::{Event, Marker, Parser, Span};

use super::indent;
use super::node::{Node, NodeKind, ScalarStyle};

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
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// Spaces put before each line of the text the parser reads (see
    /// `indent.rs`), by line; empty when it reads the text as it is.
    pads: Vec<usize>,
}

impl<'a> Offsets<'a> {
    fn new(text: &'a str, base: usize) -> Self {
        Offsets {
            text,
            base,
            line_starts: (!text.is_ascii()).then(|| line_starts(text)),
            pads: Vec::new(),
        }
    }

    fn byte(&self, mark: &Marker) -> usize {
        self.base + self.relative(mark)
    }

    fn relative(&self, mark: &Marker) -> usize {
        let Some(starts) = &self.line_starts else {
            return mark.index().min(self.text.len());
        };
        let line_index = mark.line().saturating_sub(1);
        let Some(&line_start) = starts.get(line_index) else {
            return self.text.len();
        };
        let pad = self.pads.get(line_index).copied().unwrap_or(0);
        let line = self.text.get(line_start..).unwrap_or_default();
        let within = line
            .char_indices()
            .nth(mark.col().saturating_sub(pad))
            .map_or(line.len(), |(i, _)| i);
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

/// A collection being built while its events arrive.
struct Frame<'a> {
    start: usize,
    anchor: Option<usize>,
    flow: bool,
    is_map: bool,
    /// A sequence's items so far.
    children: Vec<Node<'a>>,
    /// A mapping's entries so far, and the key waiting for its value.
    entries: Vec<(Node<'a>, Node<'a>)>,
    key: Option<Node<'a>>,
    /// How many nodes the collection stands for once its aliases are expanded.
    expanded: u64,
}

/// Most nesting a document may have; deeper input is refused rather than
/// risking the stack of whoever walks the tree afterwards.
pub const MAX_DEPTH: usize = 512;

/// Most nodes the aliases of one document may stand for once expanded: a
/// "billion laughs" stream is refused here, before anything expands it.
pub const MAX_ALIAS_EXPANSION: u64 = 5_000_000;

/// Parse every document of `text`.
pub fn parse_stream(text: &str) -> Result<Vec<Document<'_>>, SyntaxError> {
    parse_range(text, 0, text.len())
}

/// Parse the documents in `text[from..to]`, with byte offsets (and error
/// offsets) into the whole of `text`. Document indexes count from 1 within the range.
pub fn parse_range(text: &str, from: usize, to: usize) -> Result<Vec<Document<'_>>, SyntaxError> {
    let mut documents = Vec::new();
    each_document(text, from, to, |document| documents.push(document))?;
    Ok(documents)
}

/// Parse the documents in `text[from..to]` as [`parse_range`] does, handing
/// each to `each` as soon as it is complete: a caller that is done with a
/// document drops its tree before the next is built.
pub fn each_document<'a>(
    text: &'a str,
    from: usize,
    to: usize,
    mut each: impl FnMut(Document<'a>),
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
    let pass = Pass {
        text,
        offsets: Offsets::new(part, from),
        before: 0,
        skip: 0,
        padded: &[],
    };
    match pass.read(part, |value| value, &mut each) {
        Ok(()) => Ok(()),
        Err(stop) => read_leniently(text, from, to, *stop, &mut each),
    }
}

/// The first character of `text` that YAML (and so libyaml and kubectl)
/// does not allow in a stream, anywhere: C0 and C1 control characters other
/// than tab, line feed, carriage return and next line, and U+FFFE, U+FFFF.
fn unprintable(text: &str) -> Option<(usize, char)> {
    let bytes = text.as_bytes();
    let forbidden_at = |i: usize| match bytes.get(i).copied().unwrap_or(b' ') {
        b'\t' | b'\n' | b'\r' => false,
        0..0x20 | 0x7f => true,
        // U+0080 to U+009F, less U+0085.
        0xc2 => bytes
            .get(i + 1)
            .is_some_and(|&next| (0x80..0xa0).contains(&next) && next != 0x85),
        // U+FFFE, U+FFFF.
        0xef => bytes.get(i + 1) == Some(&0xbf) && matches!(bytes.get(i + 2), Some(0xbe | 0xbf)),
        _ => false,
    };
    // Every byte of the stream is looked at: a chunk at a time, without
    // branches, for a byte that may start such a character; only a chunk
    // with one is looked at byte by byte.
    let may_start = |b: u8| {
        (b < 0x20) & (b != b'\t') & (b != b'\n') & (b != b'\r')
            | (b == 0x7f)
            | (b == 0xc2)
            | (b == 0xef)
    };
    const CHUNK: usize = 64;
    let at = bytes
        .chunks(CHUNK)
        .enumerate()
        .filter(|(_, chunk)| chunk.iter().fold(false, |any, &b| any | may_start(b)))
        .find_map(|(n, chunk)| (n * CHUNK..n * CHUNK + chunk.len()).find(|&i| forbidden_at(i)))?;
    Some((at, text.get(at..)?.chars().next()?))
}

/// How long the quoted scalar that `text` starts with is, its quotes
/// included: up to the first `'` not doubled, or the first `"` not
/// escaped by a backslash.
fn closing_quote(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let quote = *bytes.first()?;
    let mut at = 1;
    while let Some(&b) = bytes.get(at) {
        match b {
            b'\\' if quote == b'"' => at += 2,
            b'\'' if quote == b'\'' && bytes.get(at + 1) == Some(&b'\'') => at += 2,
            b if b == quote => return Some(at + 1),
            _ => at += 1,
        }
    }
    None
}

/// One reading of a stretch of the stream by the parser.
struct Pass<'a, 'p> {
    /// The whole stream.
    text: &'a str,
    offsets: Offsets<'a>,
    /// Documents of the range before this pass's first.
    before: usize,
    /// How many of the pass's first documents an earlier pass handed out.
    skip: usize,
    /// Line starts given spaces for the parser, each to be found in a flow
    /// collection or a quoted scalar of the documents read.
    padded: &'p [usize],
}

/// Why a pass stopped.
struct Stop {
    error: SyntaxError,
    /// For the scanner's errors: the byte it stopped at, how far the events
    /// had got, and the bracket of the outermost flow collection open there.
    scan: Option<(usize, usize, Option<usize>)>,
    /// Documents of the pass completed before it stopped.
    done: usize,
    /// The last `---` of the pass, and how many of its documents came before it.
    marker: Option<(usize, usize)>,
    /// A padded line turned out to be in no flow collection or quoted scalar.
    misplaced: bool,
}

impl From<SyntaxError> for Stop {
    fn from(error: SyntaxError) -> Self {
        Stop {
            error,
            scan: None,
            done: 0,
            marker: None,
            misplaced: false,
        }
    }
}

impl From<SyntaxError> for Box<Stop> {
    fn from(error: SyntaxError) -> Self {
        Box::new(Stop::from(error))
    }
}

/// Read `text[from..to]` again after `stop`, with spaces put before the
/// lines of each flow collection or quoted scalar that the parser refuses
/// for their indentation and kubectl takes (see `indent.rs`), until it reads
/// through or stops for something else. Documents already handed to `each`
/// are not handed again.
fn read_leniently<'a>(
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
fn padded<'a>(
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

impl<'a> Pass<'a, '_> {
    /// Parse `input` (the pass's stretch, maybe padded), handing each
    /// document to `each`; `own` turns the parser's strings into the
    /// document's.
    fn read<'p>(
        &self,
        input: &'p str,
        own: impl Fn(Cow<'p, str>) -> Cow<'a, str>,
        each: &mut impl FnMut(Document<'a>),
    ) -> Result<(), Box<Stop>> {
        let text = self.text;
        let offsets = &self.offsets;
        let lenient = !self.padded.is_empty();
        let mut parser = Parser::new_from_str(input);
        let mut stack: Vec<Frame<'_>> = Vec::new();
        let mut root: Option<Node<'_>> = None;
        let mut index = 0;
        let mut doc_start = 0;
        // Expanded size of each anchor (by the parser's anchor id), and how many
        // nodes the current document's aliases have stood for so far.
        let mut anchor_sizes: Vec<u64> = Vec::new();
        // Whether each anchor is on a mapping or a list.
        let mut collections: Vec<bool> = Vec::new();
        let mut aliased: u64 = 0;
        let mut anchored = false;
        // How far the events have got, and the last `---` met.
        let mut reached = offsets.base;
        let mut marker = None;
        let mut completed = 0;

        let error_at = |message: String, mark: &Marker, index: usize| {
            let offset = offsets.byte(mark);
            let (line, column) = if lenient {
                (line_of(text, offset), column_of(text, offset))
            } else {
                (mark.line(), mark.col() + 1)
            };
            SyntaxError {
                message,
                document: self.before + index.max(1),
                line,
                column,
                offset,
            }
        };

        // An error found on the text itself, at byte `at`.
        let error_at_byte = |message: String, at: usize, index: usize| SyntaxError {
            line: line_of(text, at),
            column: column_of(text, at),
            message,
            document: self.before + index.max(1),
            offset: at,
        };

        while let Some(next) = parser.next_event() {
            let (event, span): (Event<'_>, Span) = match next {
                Ok(ok) => ok,
                Err(err) => {
                    let index = if stack.is_empty() && root.is_none() {
                        index + 1
                    } else {
                        index
                    };
                    let message = match err.info() {
                        // The parser's own limit, on flow collections (`[[[…`).
                        "recursion limit exceeded" => {
                            "flow collections nested too deep (recursion limit exceeded)"
                                .to_string()
                        }
                        info => info.to_string(),
                    };
                    let at = offsets.byte(err.marker());
                    let open = stack
                        .iter()
                        .find(|frame| frame.flow)
                        .map(|frame| frame.start);
                    return Err(Box::new(Stop {
                        error: error_at(message, err.marker(), index),
                        scan: Some((at, reached, open)),
                        done: completed,
                        marker,
                        misplaced: false,
                    }));
                }
            };
            let start = offsets.byte(&span.start);
            let end = offsets.byte(&span.end);
            reached = reached.max(end);
            let mut size = 1;
            let node = match event {
                Event::StreamStart | Event::Nothing => continue,
                Event::StreamEnd => break,
                Event::DocumentStart(_) => {
                    if text.get(start..).is_some_and(|t| t.starts_with("---")) {
                        marker = Some((start, completed));
                    }
                    index += 1;
                    root = None;
                    doc_start = start;
                    aliased = 0;
                    anchored = false;
                    continue;
                }
                Event::DocumentEnd => {
                    let root = root.take().filter(|node| !node.is_null());
                    // An explicit `...` belongs to the document; a following `---` does not.
                    let end = if text.get(start..end).is_some_and(|t| t.starts_with("...")) {
                        end
                    } else {
                        start
                    };
                    let end = end.max(doc_start);
                    completed += 1;
                    if index <= self.skip {
                        continue;
                    }
                    if lenient && !self.padding_is_placed(root.as_ref(), doc_start, end) {
                        return Err(Box::new(Stop {
                            misplaced: true,
                            ..Stop::from(error_at(String::new(), &span.start, index))
                        }));
                    }
                    each(Document {
                        index: self.before + index,
                        root,
                        start: doc_start,
                        end,
                        anchored,
                    });
                    continue;
                }
                Event::Alias(id) => {
                    anchored = true;
                    size = anchor_sizes.get(id).copied().unwrap_or(1);
                    aliased = aliased.saturating_add(size);
                    if aliased > MAX_ALIAS_EXPANSION {
                        return Err(error_at(
                        format!(
                            "aliases expand to more than {MAX_ALIAS_EXPANSION} nodes (an alias bomb?)"
                        ),
                        &span.start,
                        index,
                    )
                    .into());
                    }
                    Node {
                        start,
                        end,
                        anchor: None,
                        kind: NodeKind::Alias(id),
                    }
                }
                Event::Scalar(value, style, anchor, tag) => Node {
                    start,
                    // A quoted scalar ends at its closing quote; the event may
                    // run over spaces after it (`"a" ,}`).
                    end: match style {
                        ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => {
                            let quoted = text.get(start..end).unwrap_or_default();
                            // The parser's span runs on past the closing
                            // quote, over white space and a comment after it.
                            start
                                + closing_quote(quoted).unwrap_or_else(|| {
                                    quoted.trim_end_matches([' ', '\t', '\r', '\n']).len()
                                })
                        }
                        _ => end,
                    },
                    anchor: (anchor > 0).then_some(anchor),
                    kind: NodeKind::Scalar {
                        text: own(value),
                        style,
                        tag: tag.map(|t| scalar_tag(&t)),
                    },
                },
                Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                    if stack.len() >= MAX_DEPTH {
                        return Err(error_at(
                            format!("nesting deeper than {MAX_DEPTH} levels"),
                            &span.start,
                            index,
                        )
                        .into());
                    }
                    // A flow collection's start event ends with its opening
                    // bracket; a block one's is empty, or spans only its anchor or tag.
                    // (Spaces after the bracket may be part of the event.)
                    let opened = text.get(start..end).unwrap_or_default().trim_end();
                    let flow = opened.ends_with(['[', '{']);
                    stack.push(Frame {
                        start: if flow {
                            start + opened.len() - 1
                        } else {
                            start
                        },
                        anchor: (anchor > 0).then_some(anchor),
                        flow,
                        is_map: matches!(event, Event::MappingStart(..)),
                        children: Vec::new(),
                        entries: Vec::new(),
                        key: None,
                        expanded: 1,
                    });
                    continue;
                }
                Event::SequenceEnd | Event::MappingEnd => {
                    let Some(frame) = stack.pop() else { continue };
                    size = frame.expanded;
                    // A block collection runs from its first child to its last.
                    let (start, end) = if frame.flow {
                        (frame.start, flow_end(text, start, end, frame.is_map))
                    } else {
                        let first = frame
                            .entries
                            .first()
                            .map(|(key, _)| key)
                            .or(frame.children.first())
                            .map_or(frame.start, |child| child.start);
                        let last = frame.entries.last().map(|(_, value)| value);
                        (
                            first,
                            last.or(frame.children.last())
                                .map_or(first, |child| child.end),
                        )
                    };
                    let kind = if frame.is_map {
                        if let Some((message, at)) = duplicate_key(text, &frame.entries) {
                            return Err(error_at_byte(message, at, index).into());
                        }
                        NodeKind::Map {
                            entries: frame.entries,
                            flow: frame.flow,
                        }
                    } else {
                        NodeKind::Seq {
                            items: frame.children,
                            flow: frame.flow,
                        }
                    };
                    // A block mapping ending with a value left out (`a:b:`) ends
                    // where that value now stands, after its `:`.
                    let end = match &kind {
                        NodeKind::Map {
                            entries,
                            flow: false,
                        } => entries.last().map_or(end, |(_, value)| value.end),
                        _ => end,
                    };
                    Node {
                        start,
                        end,
                        anchor: frame.anchor,
                        kind,
                    }
                }
            };
            if let Some(anchor) = node.anchor {
                anchored = true;
                if anchor_sizes.len() <= anchor {
                    anchor_sizes.resize(anchor + 1, 1);
                    collections.resize(anchor + 1, false);
                }
                if let Some(slot) = anchor_sizes.get_mut(anchor) {
                    *slot = size;
                }
                if let Some(slot) = collections.get_mut(anchor) {
                    *slot = matches!(node.kind, NodeKind::Map { .. } | NodeKind::Seq { .. });
                }
            }
            let is_key = stack.last().is_some_and(|f| f.is_map && f.key.is_none());
            if let Some(message) = not_json(&node, is_key, &collections) {
                let at = node.start;
                return Err(error_at_byte(message, at, index).into());
            }
            match stack.last_mut() {
                Some(frame) => {
                    frame.expanded = frame.expanded.saturating_add(size);
                    if !frame.is_map {
                        frame.children.push(node);
                    } else if let Some(key) = frame.key.take() {
                        let mut value = node;
                        place_implicit_null(text, &key, &mut value);
                        frame.entries.push((key, value));
                    } else {
                        frame.key = Some(node);
                    }
                }
                None => root = Some(node),
            }
        }
        Ok(())
    }

    /// Whether every padded line of the document at `start..end` begins
    /// inside a flow collection or a quoted scalar of it, where the spaces
    /// put before it are no part of any value.
    fn padding_is_placed(&self, root: Option<&Node<'_>>, start: usize, end: usize) -> bool {
        let lines = self
            .padded
            .iter()
            .filter(|&&line| start <= line && line < end);
        let mut spans = Vec::new();
        if let Some(root) = root {
            lenient_spans(root, &mut spans);
        }
        lines
            .into_iter()
            .all(|&line| spans.iter().any(|&(from, to)| from < line && line < to))
    }
}

/// The spans of the flow collections and quoted scalars under `node` that
/// no other such span holds.
fn lenient_spans(node: &Node<'_>, spans: &mut Vec<(usize, usize)>) {
    match &node.kind {
        NodeKind::Map { flow: true, .. } | NodeKind::Seq { flow: true, .. } => {
            spans.push((node.start, node.end));
        }
        NodeKind::Scalar {
            style: ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted,
            ..
        } => spans.push((node.start, node.end)),
        NodeKind::Map { entries, .. } => {
            for (key, value) in entries {
                lenient_spans(key, spans);
                lenient_spans(value, spans);
            }
        }
        NodeKind::Seq { items, .. } => {
            for item in items {
                lenient_spans(item, spans);
            }
        }
        NodeKind::Scalar { .. } | NodeKind::Alias(_) => {}
    }
}

/// A scalar's tag as [`NodeKind::Scalar`] keeps it.
fn scalar_tag(tag: &saphyr_parser::Tag) -> String {
    const CORE: &str = "tag:yaml.org,2002:";
    if tag.is_yaml_core_schema() {
        return tag.suffix.clone();
    }
    match tag.suffix.strip_prefix(CORE) {
        // Verbatim (`!<tag:yaml.org,2002:int>`).
        Some(suffix) if tag.handle.is_empty() => suffix.to_string(),
        _ => format!("!{}{}", tag.handle, tag.suffix),
    }
}

/// Why kubectl could not turn `node` into JSON, if it could not: a scalar
/// whose tag its value does not fit (`!!int 1.5`), an infinity or NaN as a
/// value, a null key, or a mapping or a list as a key (`is_key`; an alias
/// to one too: `collections` says which anchors are on collections).
fn not_json(node: &Node<'_>, is_key: bool, collections: &[bool]) -> Option<String> {
    match &node.kind {
        NodeKind::Scalar { text, style, tag } => {
            let plain = *style == ScalarStyle::Plain;
            let float = tag.is_none() && plain || tag.as_deref() == Some("float");
            if !is_key && float && is_infinity_or_nan(text) {
                return Some(format!(
                    "`{text}` is an infinity or NaN, which JSON has no number for: kubectl refuses it (quote it for a string)"
                ));
            }
            if let Some(problem) = tag.as_deref().and_then(|tag| tag_misfit(text, tag)) {
                return Some(problem);
            }
            let null = match tag.as_deref() {
                Some("null") => true,
                None => plain && node.is_null(),
                Some(_) => false,
            };
            (is_key && null).then(|| {
                "a null mapping key: kubectl reads only keys that are strings, numbers or booleans"
                    .into()
            })
        }
        NodeKind::Map { .. } | NodeKind::Seq { .. } if is_key => {
            Some("a mapping or a list as a mapping key: kubectl reads only keys that are strings, numbers or booleans".into())
        }
        NodeKind::Alias(id) if is_key && collections.get(*id).copied().unwrap_or(false) => {
            Some("an alias to a mapping or a list as a mapping key: kubectl reads only keys that are strings, numbers or booleans".into())
        }
        _ => None,
    }
}

/// go-yaml's YAML 1.1 infinities and NaN.
fn is_infinity_or_nan(text: &str) -> bool {
    // Each is written with a dot after an optional sign.
    if !text.as_bytes().iter().take(2).any(|&b| b == b'.') {
        return false;
    }
    matches!(
        text.strip_prefix(['+', '-']).unwrap_or(text),
        ".inf" | ".Inf" | ".INF"
    ) || matches!(text, ".nan" | ".NaN" | ".NAN")
}

/// kubectl's refusal of a scalar tagged `!!int`, `!!float`, `!!bool` or
/// `!!null` whose text reads as something else (`!!int 1.5`); an integer
/// fits `!!float`.
fn tag_misfit(text: &str, tag: &str) -> Option<String> {
    use serde_json::Value;
    if !matches!(tag, "int" | "float" | "bool" | "null") {
        return None;
    }
    let read = super::value::resolve_plain(text);
    let kind = match &read {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() || n.is_u64() => "int",
        Value::Number(_) => "float",
        _ => "str",
    };
    let fits = kind == tag || (tag == "float" && kind == "int");
    (!fits).then(|| format!("cannot decode !!{kind} `{text}` as a !!{tag}"))
}

/// The first key among a mapping's `entries` that repeats an earlier one, as
/// kubectl refuses it: the message and the byte offset of the repeated key.
/// Keys compare by their text, so `name` and `"name"` are the same key, as
/// they are once the object is JSON; merge keys (`<<`) may repeat.
fn duplicate_key(text: &str, entries: &[(Node<'_>, Node<'_>)]) -> Option<(String, usize)> {
    if entries.len() < 2 {
        return None;
    }
    let name_of = |key: &Node<'_>| match &key.kind {
        NodeKind::Scalar { text, .. } if !super::value::is_merge_key(key) => {
            Some(text.as_ref().to_owned())
        }
        _ => None,
    };
    let found = |name: String, at: usize, first: usize| {
        let line = line_of(text, first);
        Some((
            format!("mapping key {name:?} already defined at line {line}"),
            at,
        ))
    };
    let keys = || entries.iter().map(|(key, _)| key);
    // Small mappings (nearly all of them) compare pairwise without
    // allocating; large ones hash.
    if entries.len() <= 16 {
        for (i, key) in keys().enumerate().skip(1) {
            let NodeKind::Scalar { text: name, .. } = &key.kind else {
                continue;
            };
            if super::value::is_merge_key(key) {
                continue;
            }
            let earlier = keys()
                .take(i)
                .find(|k| matches!(&k.kind, NodeKind::Scalar { text, .. } if text == name));
            if let Some(first) = earlier {
                return found(name.to_string(), key.start, first.start);
            }
        }
        return None;
    }
    let mut seen = std::collections::HashMap::new();
    for key in keys() {
        let Some(name) = name_of(key) else { continue };
        if let Some(&first) = seen.get(&name) {
            return found(name, key.start, first);
        }
        seen.insert(name, key.start);
    }
    None
}

/// 1-based line of byte `at` of `text`.
fn line_of(text: &str, at: usize) -> usize {
    text.get(..at).unwrap_or(text).matches('\n').count() + 1
}

/// 1-based column, in characters, of byte `at` of `text`.
fn column_of(text: &str, at: usize) -> usize {
    let before = text.get(..at).unwrap_or(text);
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    before.get(line_start..).unwrap_or_default().chars().count() + 1
}

/// Give the value left out of a mapping entry (`{a}`, `{a: }`, `a: # c`) the
/// empty span just after its key (and its `:`, and the spaces after it),
/// where the entry's text ends; the parser places it at the next token,
/// beyond the entry or the mapping, or before the `:`, and an edit there
/// would split the entry.
fn place_implicit_null(text: &str, key: &Node<'_>, value: &mut Node<'_>) {
    let implicit = value.anchor.is_none()
        && matches!(&value.kind, NodeKind::Scalar { text, style: ScalarStyle::Plain, tag } if text.is_empty()
            && tag.as_deref().is_none_or(super::value::is_foreign_tag));
    if !implicit {
        return;
    }
    let rest = text.get(key.end..).unwrap_or_default();
    let spaces = |t: &str| t.len() - t.trim_start_matches([' ', '\t']).len();
    let mut at = key.end + spaces(rest);
    if text.get(at..).is_some_and(|t| t.starts_with(':')) {
        at += 1;
        at += spaces(text.get(at..).unwrap_or_default());
    } else {
        at = key.end;
    }
    // An empty value with a tag of its own (`key: !custom`) is the tag.
    let tag = text
        .get(at..)
        .filter(|t| t.starts_with('!'))
        .map_or(0, |t| {
            t.find([' ', '\t', '\r', '\n', ',', '[', ']', '{', '}'])
                .unwrap_or(t.len())
        });
    value.start = at;
    value.end = at + tag;
}

/// Where a flow collection whose end event spans `start..end` ends: just
/// after its closing bracket. The event starts at the bracket and may run
/// over the spaces after it; after a trailing comma (`{a: 1, }`) it starts
/// at the comma and stops before the bracket.
fn flow_end(text: &str, start: usize, end: usize, is_map: bool) -> usize {
    let close = if is_map { '}' } else { ']' };
    let Some(rest) = text.get(start..) else {
        return end;
    };
    let mut chars = rest.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            ',' | ' ' | '\t' | '\r' | '\n' => {}
            // A comment runs to the end of its line.
            '#' => while chars.next_if(|&(_, c)| c != '\n').is_some() {},
            c if c == close => return start + i + c.len_utf8(),
            _ => break,
        }
    }
    end
}

/// Byte offsets that cut `text` into about `parts` ranges of whole
/// documents, for parsing them in parallel: `[0, …, text.len()]`. A cut is made
/// only before a `---` line, which YAML never allows inside a document's
/// content, and never in a stream with directives (they bind to the next document).
pub fn split_points(text: &str, parts: usize) -> Vec<usize> {
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
        parse_stream("a: \"\t\u{85}\u{feff}\"\r\n").expect("allowed");
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
        assert!(err.message.contains("alias bomb"), "{err:?}");
        assert_eq!(err.line, 7, "{err:?}");
        // Many aliases of a small anchor are fine.
        let fine: String = (0..1000).map(|i| format!("k{i}: *a\n")).collect();
        parse_stream(&format!("a: &a {{x: 1}}\n{fine}")).expect("parses");
    }
}

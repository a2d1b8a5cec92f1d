//! One reading of a stretch of the stream: the parser's events built into
//! span-carrying nodes, with their character markers turned into byte offsets.

use std::borrow::Cow;

use saphyr_parser::{Event, Parser, Span};

use super::checks::{duplicate_key, not_json, scalar_tag};
use super::*;
use crate::yaml::expansion::{Expanded, Size, Tally, document_key};
use crate::yaml::node::{NodeKind, ScalarStyle};

/// Entries above which a collection's list is fitted to its length.
const LARGE: usize = 1024;

/// Why the aliases of the input's documents together are too much.
fn in_all(why: &str) -> String {
    format!("the aliases of this input's documents expand to {why} in all (an alias bomb?)")
}

/// A collection being built while its events arrive.
pub(super) struct Frame<'a> {
    start: usize,
    anchor: Option<usize>,
    flow: bool,
    is_map: bool,
    /// A sequence's items so far.
    children: Vec<Node<'a>>,
    /// A mapping's entries so far, and the key waiting for its value.
    entries: Vec<(Node<'a>, Node<'a>)>,
    key: Option<Node<'a>>,
    /// What the collection stands for once its aliases are expanded.
    size: Size,
}

/// What the anchors of the document read so far stand for, by the
/// parser's anchor id.
#[derive(Default)]
struct Anchors {
    /// Each anchor's size, its aliases expanded.
    sizes: Vec<Size>,
    /// Whether each anchor is on a mapping or a list.
    collections: Vec<bool>,
}

impl Anchors {
    #[inline]
    fn record(&mut self, anchor: usize, size: Size, node: &Node<'_>) {
        if self.sizes.len() <= anchor {
            self.sizes.resize(anchor + 1, Size::scalar(0));
            self.collections.resize(anchor + 1, false);
        }
        if let Some(slot) = self.sizes.get_mut(anchor) {
            *slot = size;
        }
        if let Some(slot) = self.collections.get_mut(anchor) {
            *slot = matches!(node.kind, NodeKind::Map { .. } | NodeKind::Seq { .. });
        }
    }
}

/// What the aliases of the document read so far stand for, against the
/// bounds on expansion.
#[derive(Default)]
struct Aliases {
    /// What this document's aliases have stood for so far.
    expanded: Expanded,
    /// What those of the input's other documents stand for.
    others: Expanded,
    /// Where the last alias stands.
    last: usize,
}

impl Aliases {
    fn of_document(others: Expanded) -> Self {
        Aliases {
            others,
            ..Aliases::default()
        }
    }

    /// An alias at `at`, `depth` collections deep, of an anchor of `size`:
    /// written out where it stands, as deep as it is. Why that is too much,
    /// if it is.
    #[inline]
    fn add(&mut self, size: Size, depth: usize, at: usize) -> Option<String> {
        self.expanded = self.expanded.plus(Expanded {
            nodes: size.nodes,
            bytes: size.written_at(depth),
        });
        self.last = at;
        match self.expanded.too_much() {
            Some(why) => Some(format!("aliases expand to {why} (an alias bomb?)")),
            None => self
                .others
                .plus(self.expanded)
                .too_much()
                .map(|why| in_all(&why)),
        }
    }
}

impl<'a> Frame<'a> {
    /// `node` (of `size`) read into the collection: a sequence's item, a
    /// mapping's key, or the value of the key before it.
    #[inline]
    fn add(&mut self, text: &str, node: Node<'a>, size: Size) {
        self.size.add_child(size);
        if !self.is_map {
            self.children.push(node);
        } else if let Some(key) = self.key.take() {
            let mut value = node;
            place_implicit_null(text, &key, &mut value);
            self.entries.push((key, value));
        } else {
            self.key = Some(node);
        }
    }

    /// The frame of a collection whose start event spans `start..end` of
    /// `text`: a flow collection's ends with its opening bracket; a block
    /// one's is empty, or spans only its anchor or tag. (Spaces after the
    /// bracket may be part of the event.)
    #[inline]
    fn open(text: &str, start: usize, end: usize, anchor: usize, is_map: bool) -> Self {
        let opened = text.get(start..end).unwrap_or_default().trim_end();
        let flow = opened.ends_with(['[', '{']);
        Frame {
            start: if flow {
                start + opened.len() - 1
            } else {
                start
            },
            anchor: (anchor > 0).then_some(anchor),
            flow,
            is_map,
            children: Vec::new(),
            entries: Vec::new(),
            key: None,
            size: Size::collection(),
        }
    }

    /// The collection's node, its end event spanning `start..end` of
    /// `text`; `Err` with the message and place of a duplicate key.
    #[inline]
    fn close(mut self, text: &str, start: usize, end: usize) -> Result<Node<'a>, (String, usize)> {
        // A large collection's entries, kept as long as the
        // document, without the room their growing left.
        if self.entries.capacity() > LARGE {
            self.entries.shrink_to_fit();
        }
        if self.children.capacity() > LARGE {
            self.children.shrink_to_fit();
        }
        // A block collection runs from its first child to its last.
        let (start, end) = if self.flow {
            (self.start, flow_end(text, start, end, self.is_map))
        } else {
            let first = self
                .entries
                .first()
                .map(|(key, _)| key)
                .or(self.children.first())
                .map_or(self.start, |child| child.start);
            let last = self.entries.last().map(|(_, value)| value);
            (
                first,
                last.or(self.children.last())
                    .map_or(first, |child| child.end),
            )
        };
        let kind = if self.is_map {
            if let Some(duplicate) = duplicate_key(text, &self.entries) {
                return Err(duplicate);
            }
            NodeKind::Map {
                entries: self.entries,
                flow: self.flow,
            }
        } else {
            NodeKind::Seq {
                items: self.children,
                flow: self.flow,
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
        Ok(Node {
            start,
            end,
            anchor: self.anchor,
            kind,
        })
    }
}

/// Where a document that started at `doc_start` ends, its end event
/// spanning `start..end` of `text`: an explicit `...` belongs to the
/// document; a following `---` does not.
#[inline]
fn document_end(text: &str, doc_start: usize, start: usize, end: usize) -> usize {
    let end = match text.get(start..end).is_some_and(|t| t.starts_with("...")) {
        true => end,
        false => start,
    };
    end.max(doc_start)
}

/// Where a scalar whose event spans `start..end` of `text` ends: a quoted
/// scalar at its closing quote (the parser's span runs on past it, over
/// white space and a comment after it: `"a" ,}`).
#[inline]
fn scalar_end(text: &str, start: usize, end: usize, style: ScalarStyle) -> usize {
    match style {
        ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => {
            let quoted = text.get(start..end).unwrap_or_default();
            start
                + closing_quote(quoted)
                    .unwrap_or_else(|| quoted.trim_end_matches([' ', '\t', '\r', '\n']).len())
        }
        _ => end,
    }
}

/// How long the quoted scalar that `text` starts with is, its quotes
/// included: up to the first `'` not doubled, or the first `"` not
/// escaped by a backslash.
pub(super) fn closing_quote(text: &str) -> Option<usize> {
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
pub(super) struct Pass<'a, 'p> {
    /// The whole stream.
    pub(super) text: &'a str,
    pub(super) offsets: Offsets<'a>,
    /// Documents of the range before this pass's first.
    pub(super) before: usize,
    /// How many of the pass's first documents an earlier pass handed out.
    pub(super) skip: usize,
    /// Line starts given spaces for the parser, each to be found in a flow
    /// collection or a quoted scalar of the documents read.
    pub(super) padded: &'p [usize],
    /// What the aliases of the input's documents stand for.
    pub(super) tally: &'p Tally,
}

/// Why a pass stopped.
pub(super) struct Stop {
    pub(super) error: SyntaxError,
    /// For the scanner's errors: the byte it stopped at, how far the events
    /// had got, and the bracket of the outermost flow collection open there.
    pub(super) scan: Option<(usize, usize, Option<usize>)>,
    /// Documents of the pass completed before it stopped.
    pub(super) done: usize,
    /// The last `---` of the pass, and how many of its documents came before it.
    pub(super) marker: Option<(usize, usize)>,
    /// A padded line turned out to be in no flow collection or quoted scalar.
    pub(super) misplaced: bool,
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

impl<'a> Pass<'a, '_> {
    /// Parse `input` (the pass's stretch, maybe padded), handing each
    /// document to `each`; `own` turns the parser's strings into the
    /// document's.
    pub(super) fn read<'p>(
        &self,
        input: &'p str,
        own: impl Fn(Cow<'p, str>) -> Cow<'a, str>,
        each: &mut impl FnMut(Document<'a>),
    ) -> Result<(), Box<Stop>> {
        let text = self.text;
        let offsets = &self.offsets;
        let mut parser = Parser::new_from_str(input);
        let mut stack: Vec<Frame<'_>> = Vec::new();
        let mut root: Option<Node<'_>> = None;
        let mut index = 0;
        let mut doc_start = 0;
        // What each anchor stands for, what the current document's aliases
        // have stood for so far, and what those of the input's other
        // documents stand for.
        let mut anchors = Anchors::default();
        let mut aliases = Aliases::default();
        let mut anchored = false;
        // How far the events have got, and the last `---` met.
        let mut reached = offsets.base;
        let mut marker = None;
        let mut completed = 0;

        let error_at = |message, mark: &Marker, index| self.error_at(message, mark, index);
        let error_at_byte = |message, at, index| self.error_at_byte(message, at, index);

        while let Some(next) = parser.next_event() {
            let (event, span): (Event<'_>, Span) = match next {
                Ok(ok) => ok,
                Err(err) => {
                    // Between documents, the error is the next one's.
                    let index = match stack.is_empty() && root.is_none() {
                        true => index + 1,
                        false => index,
                    };
                    let open = stack.iter().find(|f| f.flow).map(|f| f.start);
                    let (done, reached) = (completed, reached);
                    return Err(self.scan_stop(&err, index, open, reached, done, marker));
                }
            };
            let start = offsets.byte(&span.start);
            let end = offsets.byte(&span.end);
            reached = reached.max(end);
            let mut size = Size::scalar(0);
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
                    aliases = Aliases::of_document(self.tally.others(document_key(text, start)));
                    anchored = false;
                    continue;
                }
                Event::DocumentEnd => {
                    completed += 1;
                    let document = Document {
                        index: self.before + index,
                        root: root.take().filter(|node| !node.is_null()),
                        start: doc_start,
                        end: document_end(text, doc_start, start, end),
                        anchored,
                    };
                    if aliases.expanded != Expanded::default() {
                        // Read at the same time as another document on
                        // another thread, it may be this one that is too much.
                        let key = document_key(text, doc_start);
                        if let Some(why) = self.tally.count(key, aliases.expanded).too_much() {
                            return Err(error_at_byte(in_all(&why), aliases.last, index).into());
                        }
                    }
                    if index > self.skip {
                        each(self.placed(document, &span)?);
                    }
                    continue;
                }
                Event::Alias(id) => {
                    anchored = true;
                    size = anchors.sizes.get(id).copied().unwrap_or(size);
                    if let Some(why) = aliases.add(size, stack.len(), start) {
                        return Err(error_at(why, &span.start, index).into());
                    }
                    Node {
                        start,
                        end,
                        anchor: None,
                        kind: NodeKind::Alias(id),
                    }
                }
                Event::Scalar(value, style, anchor, tag) => {
                    size = Size::scalar(value.len());
                    Node {
                        start,
                        end: scalar_end(text, start, end, style),
                        anchor: (anchor > 0).then_some(anchor),
                        kind: NodeKind::Scalar {
                            text: own(value),
                            style,
                            tag: tag.map(|t| scalar_tag(&t)),
                        },
                    }
                }
                Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                    if stack.len() >= MAX_DEPTH {
                        return Err(error_at(
                            format!("nesting deeper than {MAX_DEPTH} levels"),
                            &span.start,
                            index,
                        )
                        .into());
                    }
                    let is_map = matches!(event, Event::MappingStart(..));
                    stack.push(Frame::open(text, start, end, anchor, is_map));
                    continue;
                }
                Event::SequenceEnd | Event::MappingEnd => {
                    let Some(frame) = stack.pop() else {
                        continue;
                    };
                    size = frame.size;
                    frame
                        .close(text, start, end)
                        .map_err(|(message, at)| error_at_byte(message, at, index))?
                }
            };
            if let Some(anchor) = node.anchor {
                anchored = true;
                anchors.record(anchor, size, &node);
            }
            let is_key = stack.last().is_some_and(|f| f.is_map && f.key.is_none());
            if let Some(message) = not_json(&node, is_key, &anchors.collections) {
                let at = node.start;
                return Err(error_at_byte(message, at, index).into());
            }
            match stack.last_mut() {
                Some(frame) => frame.add(text, node, size),
                None => root = Some(node),
            }
        }
        Ok(())
    }

    /// A syntax error the parser found at `mark`, in the pass's `index`th
    /// document.
    fn error_at(&self, message: String, mark: &Marker, index: usize) -> SyntaxError {
        let (text, offsets) = (self.text, &self.offsets);
        let offset = offsets.byte(mark);
        let (line, column) = if !self.padded.is_empty() {
            (line_of(text, offset), column_of(text, offset))
        } else {
            let line = mark.line();
            (
                line,
                offsets.unshifted_col(line.saturating_sub(1), mark.col()) + 1,
            )
        };
        SyntaxError {
            message,
            document: self.before + index.max(1),
            line,
            column,
            offset,
        }
    }

    /// Why the pass stopped on the scanner's error `err` in its `index`th
    /// document: `open`, where the outermost flow collection open there
    /// starts; `reached`, how far the events had got; `done`, the documents
    /// completed; `marker`, the last `---` met.
    fn scan_stop(
        &self,
        err: &saphyr_parser::ScanError,
        index: usize,
        open: Option<usize>,
        reached: usize,
        done: usize,
        marker: Option<(usize, usize)>,
    ) -> Box<Stop> {
        let message = match err.info() {
            // The parser's own limit, on flow collections (`[[[…`).
            "recursion limit exceeded" => {
                "flow collections nested too deep (recursion limit exceeded)".to_string()
            }
            info => info.to_string(),
        };
        let at = self.offsets.byte(err.marker());
        Box::new(Stop {
            error: self.error_at(message, err.marker(), index),
            scan: Some((at, reached, open)),
            done,
            marker,
            misplaced: false,
        })
    }

    /// `document`, ended by the event at `span`, when the spaces a lenient
    /// pass put before its lines are all where they are no part of a value.
    fn placed<'d>(&self, document: Document<'d>, span: &Span) -> Result<Document<'d>, Box<Stop>> {
        let (root, start, end) = (document.root.as_ref(), document.start, document.end);
        if self.padded.is_empty() || self.padding_is_placed(root, start, end) {
            return Ok(document);
        }
        let index = document.index - self.before;
        Err(Box::new(Stop {
            misplaced: true,
            ..Stop::from(self.error_at(String::new(), &span.start, index))
        }))
    }

    /// An error found on the text itself, at byte `at`.
    fn error_at_byte(&self, message: String, at: usize, index: usize) -> SyntaxError {
        SyntaxError {
            line: line_of(self.text, at),
            column: column_of(self.text, at),
            message,
            document: self.before + index.max(1),
            offset: at,
        }
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
pub(super) fn lenient_spans(node: &Node<'_>, spans: &mut Vec<(usize, usize)>) {
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

/// Give the value left out of a mapping entry (`{a}`, `{a: }`, `a: # c`) the
/// empty span just after its key (and its `:`, and the spaces after it),
/// where the entry's text ends; the parser places it at the next token,
/// beyond the entry or the mapping, or before the `:`, and an edit there
/// would split the entry.
pub(super) fn place_implicit_null(text: &str, key: &Node<'_>, value: &mut Node<'_>) {
    let implicit = value.anchor.is_none()
        && matches!(&value.kind, NodeKind::Scalar { text, style: ScalarStyle::Plain, tag } if text.is_empty()
            && tag.as_deref().is_none_or(crate::yaml::value::is_foreign_tag));
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
pub(super) fn flow_end(text: &str, start: usize, end: usize, is_map: bool) -> usize {
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

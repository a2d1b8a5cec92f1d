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
        let lenient = !self.padded.is_empty();
        let mut parser = Parser::new_from_str(input);
        let mut stack: Vec<Frame<'_>> = Vec::new();
        let mut root: Option<Node<'_>> = None;
        let mut index = 0;
        let mut doc_start = 0;
        // Expanded size of each anchor (by the parser's anchor id), what the
        // current document's aliases have stood for so far, and what those of
        // the input's other documents stand for.
        let mut anchor_sizes: Vec<Size> = Vec::new();
        // Whether each anchor is on a mapping or a list.
        let mut collections: Vec<bool> = Vec::new();
        let mut aliased = Expanded::default();
        let mut others = Expanded::default();
        let mut last_alias = 0;
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
                    aliased = Expanded::default();
                    others = self.tally.others(document_key(text, doc_start));
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
                    if aliased != Expanded::default() {
                        // Read at the same time as another document on
                        // another thread, it may be this one that is too much.
                        let total = self.tally.count(document_key(text, doc_start), aliased);
                        if let Some(why) = total.too_much() {
                            return Err(error_at_byte(in_all(&why), last_alias, index).into());
                        }
                    }
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
                    size = anchor_sizes.get(id).copied().unwrap_or(size);
                    // Written out where the alias stands, as deep as it is.
                    aliased = aliased.plus(Expanded {
                        nodes: size.nodes,
                        bytes: size.written_at(stack.len()),
                    });
                    last_alias = start;
                    let why = match aliased.too_much() {
                        Some(why) => Some(format!("aliases expand to {why} (an alias bomb?)")),
                        None => others.plus(aliased).too_much().map(|why| in_all(&why)),
                    };
                    if let Some(why) = why {
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
                        size: Size::collection(),
                    });
                    continue;
                }
                Event::SequenceEnd | Event::MappingEnd => {
                    let Some(mut frame) = stack.pop() else {
                        continue;
                    };
                    // A large collection's entries, kept as long as the
                    // document, without the room their growing left.
                    if frame.entries.capacity() > LARGE {
                        frame.entries.shrink_to_fit();
                    }
                    if frame.children.capacity() > LARGE {
                        frame.children.shrink_to_fit();
                    }
                    size = frame.size;
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
                    anchor_sizes.resize(anchor + 1, Size::scalar(0));
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
                    frame.size.add_child(size);
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

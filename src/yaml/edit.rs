//! Turn a document's text into the text of a new value, changing only what differs.
//!
//! The renderer walks the original node tree beside the target value and emits
//! byte-range edits: block entries and items are added or removed as whole
//! lines, flow collections are rewritten entry by entry, scalars are replaced in
//! place. Everything the walk does not touch (comments, key order, quoting,
//! anchors, blank lines) stays as it was. Inserting and removing use the same
//! line arithmetic, so removing what was inserted restores the bytes exactly.

use std::collections::HashSet;
use std::ops::Deref;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::blocks::Blocks;
use super::emit::Layout;
use super::node::{Node, NodeKind, ScalarStyle};
use super::value::{Resolver, ValueError, is_merge_key};
use crate::json::Field;

/// Replace `start..end` of the original text with `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub start: usize,
    pub end: usize,
    pub text: Text,
}

/// The text an edit puts in: its own, or a block of lines shared with every
/// other edit that adds the same value with the same layout (the proxy, added
/// to thousands of workloads, is written and held once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Text {
    Own(String),
    Shared(Arc<str>),
}

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        match self {
            Text::Own(text) => text,
            Text::Shared(text) => text,
        }
    }
}

impl From<String> for Text {
    fn from(text: String) -> Self {
        Text::Own(text)
    }
}

/// A change the renderer cannot express without changing something else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditError {
    pub message: String,
    /// Byte offset of the node at fault.
    pub offset: usize,
}

impl From<ValueError> for EditError {
    fn from(err: ValueError) -> Self {
        EditError {
            message: err.message,
            offset: err.offset,
        }
    }
}

/// The edits that turn `root` (parsed from `text`) into `target`.
pub fn diff(text: &str, root: &Node<'_>, target: &Value) -> Result<Vec<Edit>, EditError> {
    diff_with(
        text,
        root,
        has_anchors(root),
        target,
        &mut Blocks::default(),
    )
}

/// [`diff`], taking new blocks from `blocks` where it has written them
/// before. `anchored` says whether the document holds any anchor or alias
/// (the parser knows: [`super::Document::anchored`]); without, the anchors'
/// values and users are not looked for.
pub fn diff_with(
    text: &str,
    root: &Node<'_>,
    anchored: bool,
    target: &Value,
    blocks: &mut Blocks,
) -> Result<Vec<Edit>, EditError> {
    let mut differ = Differ {
        blocks,
        text,
        layout: detect_layout(text, root),
        resolver: if anchored {
            Resolver::for_document(root)?
        } else {
            Resolver::unbounded()
        },
        referenced: HashSet::new(),
        edits: Vec::new(),
    };
    if anchored {
        differ.index_aliases(root);
    }
    if !differ.same(root, target)? {
        differ.node(root, target, false)?;
    }
    Ok(differ.edits)
}

/// Apply non-overlapping edits to `text`.
pub fn apply(text: &str, edits: Vec<Edit>) -> String {
    apply_range(text, 0, text.len(), edits)
}

/// The text of `text[from..to]` with `edits` (all inside that range) applied.
pub fn apply_range(text: &str, from: usize, to: usize, edits: Vec<Edit>) -> String {
    let edits = settle(text, edits);
    let mut out =
        String::with_capacity(to - from + edits.iter().map(|e| e.text.len()).sum::<usize>());
    let mut at = from;
    for edit in edits {
        let start = edit.start.clamp(at, to);
        out.push_str(between(text, at, start));
        out.push_str(&edit.text);
        at = edit.end.clamp(start, to);
    }
    out.push_str(between(text, at, to));
    out
}

/// `edits` in the order they apply, neighbouring deletions joined: what
/// [`apply_range`] and a spliced output walk through.
pub fn settle(text: &str, mut edits: Vec<Edit>) -> Vec<Edit> {
    // Lines inserted right after the line break that a deletion running to
    // the end of a file without a final line break takes along: they go
    // where the deletion starts, that line break before them, not after.
    let tail_deletions: Vec<(usize, usize)> = edits
        .iter()
        .filter(|e| e.text.is_empty() && e.end == text.len() && e.start < e.end)
        .map(|e| (e.start, e.end))
        .collect();
    for edit in edits.iter_mut() {
        if edit.start != edit.end || !edit.text.ends_with('\n') {
            continue;
        }
        let Some(&(start, _)) = tail_deletions
            .iter()
            .find(|(start, end)| *start < edit.start && edit.start < *end)
        else {
            continue;
        };
        let lb = between(text, start, edit.start);
        if lb != "\n" && lb != "\r\n" {
            continue;
        }
        let body = edit.text.strip_suffix(lb).unwrap_or(&edit.text);
        edit.text = Text::Own(format!("{lb}{body}"));
        edit.start = start;
        edit.end = start;
    }
    // Stable: insertions at one place keep the order they were made in.
    edits.sort_by_key(|e| (e.start, e.end));
    let edits = merge_deletions(text, edits);
    debug_assert!(
        edits
            .windows(2)
            .all(|w| matches!(w, [a, b] if a.end <= b.start)),
        "overlapping edits: {edits:?}"
    );
    edits
}

/// Join deletions that overlap or touch (neighbouring entries removed
/// together). When the joined range runs to the end of a file without a final
/// line break, the line break before the range goes too, as it does for a
/// single deletion there (see `block_range`).
fn merge_deletions(text: &str, edits: Vec<Edit>) -> Vec<Edit> {
    let mut out: Vec<Edit> = Vec::with_capacity(edits.len());
    let mut joined = false;
    for edit in edits {
        match out.last_mut() {
            Some(last)
                if last.text.is_empty()
                    && edit.text.is_empty()
                    && edit.start <= last.end
                    && last.end > last.start =>
            {
                last.end = last.end.max(edit.end);
                joined = true;
                continue;
            }
            _ => out.push(edit),
        }
    }
    if joined && !text.ends_with('\n') {
        if let Some(last) = out
            .last_mut()
            .filter(|e| e.text.is_empty() && e.end == text.len())
        {
            if before(text, last.start).ends_with('\n') {
                last.start -= if before(text, last.start).ends_with("\r\n") {
                    2
                } else {
                    1
                };
            }
        }
    }
    out
}

/// Learn the document's indentation habits, so added lines match their neighbours.
pub fn detect_layout(text: &str, root: &Node<'_>) -> Layout {
    let mut layout = Layout {
        // Look at the document's own lines only: scanning the whole stream per
        // document would make large streams quadratic.
        newline: match after(text, root.start).find('\n') {
            Some(i) if before(text, root.start + i).ends_with('\r') => "\r\n",
            _ => "\n",
        },
        json: matches!(&root.kind, NodeKind::Map { flow: true, entries }
            if entries.first().is_some_and(|(k, _)| matches!(&k.kind, NodeKind::Scalar { style: ScalarStyle::DoubleQuoted, .. }))),
        ..Layout::default()
    };
    let (mut indent, mut seq_indent) = (None, None);
    find_layout(text, root, &mut indent, &mut seq_indent);
    layout.indent = indent.unwrap_or(2);
    layout.seq_indent = seq_indent.unwrap_or(layout.indent);
    layout
}

fn find_layout(text: &str, node: &Node<'_>, indent: &mut Option<usize>, seq: &mut Option<usize>) {
    if indent.is_some() && seq.is_some() {
        return;
    }
    match &node.kind {
        NodeKind::Map {
            entries,
            flow: false,
        } => {
            for (key, value) in entries {
                if indent.is_some() && seq.is_some() {
                    return;
                }
                let key_col = column(text, key.start);
                match &value.kind {
                    NodeKind::Map {
                        entries: inner,
                        flow: false,
                    } if indent.is_none() => {
                        if let Some((k, _)) = inner.first() {
                            let col = column(text, k.start);
                            if col > key_col && starts_line(text, k.start) {
                                *indent = Some(col - key_col);
                            }
                        }
                    }
                    NodeKind::Seq { items, flow: false } if seq.is_none() => {
                        if let Some(dash) = items.first().and_then(|i| dash_of(text, i.start)) {
                            let col = column(text, dash);
                            if col >= key_col && starts_line(text, dash) {
                                *seq = Some(col - key_col);
                            }
                        }
                    }
                    _ => {}
                }
                find_layout(text, value, indent, seq);
            }
        }
        NodeKind::Seq { items, flow: false } => {
            for item in items {
                if indent.is_some() && seq.is_some() {
                    return;
                }
                find_layout(text, item, indent, seq);
            }
        }
        _ => {}
    }
}

struct Differ<'t> {
    text: &'t str,
    blocks: &'t mut Blocks,
    layout: Layout,
    /// Resolves nodes of the document, aliases included.
    resolver: Resolver,
    /// Anchors that some alias uses: editing inside them would change the alias too.
    referenced: HashSet<usize>,
    edits: Vec<Edit>,
}

impl Differ<'_> {
    fn index_aliases(&mut self, node: &Node<'_>) {
        match &node.kind {
            NodeKind::Alias(id) => {
                self.referenced.insert(*id);
            }
            NodeKind::Map { entries, .. } => {
                for (k, v) in entries {
                    self.index_aliases(k);
                    self.index_aliases(v);
                }
            }
            NodeKind::Seq { items, .. } => items.iter().for_each(|item| self.index_aliases(item)),
            NodeKind::Scalar { .. } => {}
        }
    }

    /// The value of a node, aliases resolved through the document's anchors.
    fn value(&mut self, node: &Node<'_>) -> Result<Value, EditError> {
        Ok(self.resolver.value(node)?)
    }

    /// Whether `node` already has the value `target`, compared in place
    /// (building the node's value only where aliases or merges are involved).
    fn same(&mut self, node: &Node<'_>, target: &Value) -> Result<bool, EditError> {
        match (&node.kind, target) {
            (NodeKind::Scalar { text, style, tag }, _) => Ok(super::value::scalar_matches(
                text,
                *style,
                tag.as_deref(),
                target,
            )),
            (NodeKind::Seq { items, .. }, Value::Array(wanted)) => {
                if items.len() != wanted.len() {
                    return Ok(false);
                }
                for (item, want) in items.iter().zip(wanted) {
                    if !self.same(item, want)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            (NodeKind::Map { entries, .. }, Value::Object(wanted))
                if !entries
                    .iter()
                    .any(|(k, _)| is_merge_key(k) || k.as_str().is_none()) =>
            {
                // The node's value has at most as many keys as the node has
                // entries: with fewer, it cannot be the target. With more,
                // two keys may read as one (`~` and `null`), so it is compared.
                if entries.len() < wanted.len() {
                    return Ok(false);
                }
                if entries.len() > wanted.len() {
                    return Ok(self.value(node)? == *target);
                }
                // Keys mostly come in the node's order: they are paired side
                // by side, and looked up only where the order differs.
                for ((key, value), (wanted_key, wanted_value)) in entries.iter().zip(wanted) {
                    let want = match key.as_str() {
                        Some(k) if k == wanted_key => Some(wanted_value),
                        Some(k) => wanted.field(k),
                        None => None,
                    };
                    let Some(want) = want else {
                        return Ok(false);
                    };
                    if !self.same(value, want)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            (NodeKind::Seq { .. }, _) => Ok(false),
            (NodeKind::Map { .. }, t) if !t.is_object() => Ok(false),
            // Aliases, and mappings with merge keys.
            _ => Ok(self.value(node)? == *target),
        }
    }

    fn push(&mut self, shared: bool, at: usize, edit: Edit) -> Result<(), EditError> {
        if shared {
            return Err(EditError {
                message: "the change lands inside an anchored node that aliases elsewhere also use"
                    .into(),
                offset: at,
            });
        }
        self.edits.push(edit);
        Ok(())
    }

    /// Edit `node`, known to differ from `target` (callers compare first).
    fn node(&mut self, node: &Node<'_>, target: &Value, shared: bool) -> Result<(), EditError> {
        let shared = shared || node.anchor.is_some_and(|a| self.referenced.contains(&a));
        match (&node.kind, target) {
            (NodeKind::Alias(id), Value::Object(wanted)) => {
                // Keep the alias and layer the changes over it with a merge
                // key, so the anchor and its other users stay as they are.
                let base = self.resolver.anchor(*id).cloned();
                let text = match base {
                    Some(Value::Object(base))
                        if !self.layout.json && base.keys().all(|k| wanted.contains_key(k)) =>
                    {
                        let mut parts =
                            vec![format!("<<: {}", between(self.text, node.start, node.end))];
                        for (k, v) in wanted.iter().filter(|(k, v)| base.get(*k) != Some(*v)) {
                            parts.push(self.layout.flow_entry(k, v));
                        }
                        format!("{{{}}}", parts.join(", "))
                    }
                    // Written out whole, the alias would be lost: undoing the
                    // change could not give it back.
                    _ => {
                        return Err(EditError {
                            message: "cannot change a value written as an alias (*name) other than by adding keys to the mapping it stands for".into(),
                            offset: node.start,
                        });
                    }
                };
                self.replace(node, text, shared)
            }
            (NodeKind::Map { entries, flow }, Value::Object(wanted))
                if *flow || !wanted.is_empty() =>
            {
                if *flow {
                    self.flow_map(node, entries, wanted, shared)
                } else {
                    self.block_map(node, entries, wanted, shared)
                }
            }
            (NodeKind::Seq { items, flow }, Value::Array(wanted))
                if *flow || !wanted.is_empty() =>
            {
                if *flow {
                    self.flow_seq(node, items, wanted, shared)
                } else {
                    self.block_seq(node, items, wanted, shared)
                }
            }
            // A block scalar's text runs from its header to its last line.
            (NodeKind::Scalar { .. }, _) if is_block_scalar(node) => {
                self.replace_block_scalar(node, target, shared)
            }
            (NodeKind::Scalar { style, .. }, _) if !target.is_object() && !target.is_array() => {
                // A string in place of a quoted one keeps its quotes, so
                // that changing it back gives the text back.
                let written = match (style, target) {
                    (ScalarStyle::DoubleQuoted, Value::String(_)) => target.to_string(),
                    (ScalarStyle::SingleQuoted, Value::String(s)) if !s.contains('\n') => {
                        format!("'{}'", s.replace('\'', "''"))
                    }
                    _ => self.inline(target),
                };
                let mut text = self.apart(node, written);
                let span = between(self.text, node.start, node.end);
                let kept = kept_properties(span, target);
                if !kept.is_empty() {
                    text = format!("{} {}", kept.join(" "), text.trim_start());
                }
                self.replace(node, text, shared)
            }
            _ => {
                let text = self.layout.flow(target);
                self.replace(node, text, shared)
            }
        }
    }

    /// Delete `start..end`.
    fn delete(&mut self, shared: bool, start: usize, end: usize) -> Result<(), EditError> {
        self.push(
            shared,
            start,
            Edit {
                start,
                end,
                text: Text::Own(String::new()),
            },
        )
    }

    /// Rewrite a block mapping that follows a `- ` as one flow mapping, when
    /// removing its lines would take the dash too.
    fn map_in_flow(
        &mut self,
        node: &Node<'_>,
        wanted: &Map<String, Value>,
        shared: bool,
    ) -> Result<(), EditError> {
        self.edits
            .retain(|e| e.start < node.start || e.start > node.end);
        let text = self.layout.flow(&Value::Object(wanted.clone()));
        self.replace(node, text, shared)
    }

    /// Insert `text` at `at`.
    fn insert(&mut self, shared: bool, at: usize, text: impl Into<Text>) -> Result<(), EditError> {
        self.push(
            shared,
            at,
            Edit {
                start: at,
                end: at,
                text: text.into(),
            },
        )
    }

    fn replace(&mut self, node: &Node<'_>, text: String, shared: bool) -> Result<(), EditError> {
        self.push(
            shared,
            node.start,
            Edit {
                start: node.start,
                end: node.end,
                text: text.into(),
            },
        )
    }

    /// Write `target` over a literal or folded scalar. Its node starts at
    /// its content (or at properties before the header) and ends at the
    /// next line's token, so the header, the content and a comment after
    /// the header are found here: text after the content (line break, blank
    /// lines, the next line's indentation) stays. A string that reads well
    /// as a literal block stays one, at the content's own column; anything
    /// else goes on the header's line, with the header's comment after it.
    fn replace_block_scalar(
        &mut self,
        node: &Node<'_>,
        target: &Value,
        shared: bool,
    ) -> Result<(), EditError> {
        let text = self.text;
        let Some(header) = block_header(text, node.start) else {
            return Err(EditError {
                message: "cannot find the header (| or >) of this block scalar".into(),
                offset: node.start,
            });
        };
        let from = node.start.min(header.indicator);
        let content = between(text, node.start.max(header.line_end), node.end);
        let content_end = if content.trim().is_empty() {
            header.line_end
        } else {
            node.start.max(header.line_end) + content.trim_end().len()
        };
        // Properties before the header (`&a !!str |`) that the value keeps.
        let kept = kept_properties(between(text, from, header.indicator), target);
        let mut out = kept.join(" ");
        if !out.is_empty() {
            out.push(' ');
        }
        let comment = between(text, header.indicator_end, header.line_end);
        match target {
            Value::String(s) if !self.layout.json && super::emit::can_be_literal(s) => {
                // The content's column when it has lines of its own, else one
                // step in from what the header belongs to.
                let col = if starts_line(text, node.start) && !content.trim().is_empty() {
                    column(text, node.start)
                } else {
                    header.owner_column + self.layout.indent
                };
                out.push_str(if s.ends_with('\n') { "|" } else { "|-" });
                out.push_str(comment);
                for line in s.strip_suffix('\n').unwrap_or(s).split('\n') {
                    out.push_str(self.layout.newline);
                    if !line.is_empty() {
                        out.push_str(&" ".repeat(col));
                        out.push_str(line);
                    }
                }
            }
            Value::Object(_) | Value::Array(_) => {
                out.push_str(&self.layout.flow(target));
                out.push_str(comment);
            }
            _ => {
                out.push_str(&self.inline(target));
                out.push_str(comment);
            }
        }
        self.push(
            shared,
            from,
            Edit {
                start: from,
                end: content_end,
                text: out.into(),
            },
        )
    }

    /// A new block entry `key: value` at column `col`.
    fn entry_text(&mut self, col: usize, key: &str, value: &Value) -> Text {
        let layout = self.layout;
        self.blocks.text(layout, col, Some(key), value, || {
            layout.block_entry(col, key, value)
        })
    }

    /// A new block sequence item at column `col`, laid out as `layout`.
    fn item_text(&mut self, layout: Layout, col: usize, value: &Value) -> Text {
        self.blocks
            .text(layout, col, None, value, || layout.block_item(col, value))
    }

    /// Whether `key:` starts its line and only spaces or a comment follow
    /// the colon, after `kind_tag` (`!!map`, `!!seq`) maybe: a bare key,
    /// whose value is on the lines under it.
    fn is_bare_key(&self, key: &Node<'_>, kind_tag: &str) -> bool {
        let line = after(self.text, key.end)
            .split('\n')
            .next()
            .unwrap_or_default();
        let Some(rest) = line.trim_start_matches([' ', '\t']).strip_prefix(':') else {
            return false;
        };
        let rest = rest.trim_end_matches('\r').trim_start_matches([' ', '\t']);
        let rest = match rest.strip_prefix(kind_tag) {
            Some(after_tag) if after_tag.is_empty() || after_tag.starts_with([' ', '\t']) => {
                after_tag.trim_start_matches([' ', '\t'])
            }
            _ => rest,
        };
        starts_line(self.text, key.start) && (rest.is_empty() || rest.starts_with('#'))
    }

    /// Whether `value` is left out after a bare `key:` (or is only a tag
    /// of `target`'s kind) and becomes `target`, a collection with something
    /// in it, written in block style under it.
    fn fills_a_bare_key(&self, key: &Node<'_>, value: &Node<'_>, target: &Value) -> bool {
        let kind_tag = match target {
            Value::Object(map) if !map.is_empty() => "!!map",
            Value::Array(items) if !items.is_empty() => "!!seq",
            _ => return false,
        };
        let span = between(self.text, value.start, value.end);
        (span.is_empty() || span == kind_tag)
            && matches!(value.kind, NodeKind::Scalar { .. })
            && !self.layout.json
            && self.is_bare_key(key, kind_tag)
    }

    /// Whether `value`, a block collection on the lines under a bare `key:`,
    /// can become empty by taking those lines away.
    fn empties_to_a_bare_key(&self, key: &Node<'_>, value: &Node<'_>) -> bool {
        let kind_tag = match value.kind {
            NodeKind::Map { flow: false, .. } => "!!map",
            NodeKind::Seq { flow: false, .. } => "!!seq",
            _ => return false,
        };
        value.anchor.is_none()
            && line_start(self.text, value.start) > key.end
            && self.is_bare_key(key, kind_tag)
    }

    /// `text` for `node`; a value left out (`key:`, `{key: }`) keeps apart
    /// from the `:` before it and a comment after it.
    fn apart(&self, node: &Node<'_>, mut text: String) -> String {
        if node.start == node.end {
            if !before(self.text, node.start).ends_with([' ', '\t']) {
                text.insert(0, ' ');
            }
            if after(self.text, node.end).starts_with('#') {
                text.push(' ');
            }
        }
        text
    }

    fn inline(&self, value: &Value) -> String {
        match value {
            // Quoted on one line: a literal block would need this node's indentation.
            Value::String(s) if self.layout.json || s.contains('\n') => value.to_string(),
            Value::Null => "null".to_string(),
            _ => {
                let line = self.layout.block_entry(0, "k", value);
                let rest = line.strip_prefix("k: ").unwrap_or(&line);
                rest.trim_end_matches(['\r', '\n']).to_string()
            }
        }
    }

    fn block_map(
        &mut self,
        node: &Node<'_>,
        entries: &[(Node<'_>, Node<'_>)],
        wanted: &Map<String, Value>,
        shared: bool,
    ) -> Result<(), EditError> {
        keys_are_scalars(node, entries)?;
        let col = column(self.text, node.start);
        let merged = self.merged_keys(entries)?;
        let mut removed = vec![false; entries.len()];
        for (i, ((key, value), removed)) in entries.iter().zip(&mut removed).enumerate() {
            if is_merge_key(key) {
                continue;
            }
            let name = key_text(key);
            match wanted.field(name) {
                None => *removed = true,
                Some(target) if self.same(value, target)? => {}
                Some(target) if self.can_edit_within(value, target) => {
                    self.node(value, target, shared)?
                }
                Some(_) if value.anchor.is_some() => return Err(anchor_lost(value)),
                Some(target) if self.fills_a_bare_key(key, value, target) => {
                    // The new lines go under `key:`, its line kept as written
                    // (spaces, a comment): emptying it again gives it back.
                    let entry = self.layout.block_entry(col, name, target);
                    let lines = entry.split_once('\n').map_or("", |(_, lines)| lines);
                    let at = line_end_after(self.text, value.end);
                    let text = self.at_line_end(at, lines.to_string());
                    self.insert(shared, at, text)?;
                }
                Some(Value::Null) if self.empties_to_a_bare_key(key, value) => {
                    // The lines under `key:` go; its line stays as written
                    // (with its line break, unless the file ends with them).
                    let mut start = line_start(self.text, value.start);
                    let end = line_end_after(self.text, value.end);
                    if end == self.text.len() && !self.text.ends_with('\n') {
                        let kept = before(self.text, start);
                        let kept = kept.strip_suffix('\n').unwrap_or(kept);
                        start = kept.strip_suffix('\r').unwrap_or(kept).len();
                    }
                    self.delete(shared, start, end)?;
                }
                Some(target) if tag_lost(self.text, value, target) => {
                    return Err(EditError {
                        message: "cannot rewrite a tagged value (!…) as a collection without losing its tag".into(),
                        offset: value.start,
                    });
                }
                Some(target) => {
                    // Rewrite the whole entry where it stands: its own lines go
                    // (not merged with neighbours, so the insertion stays outside
                    // what is deleted) and the new entry takes their place.
                    let next = entries.get(i + 1).map(|(k, _)| k);
                    let entry = self.layout.block_entry(col, name, target);
                    let (at, text) = if starts_line(self.text, key.start) {
                        (line_start(self.text, key.start), entry)
                    } else if next.is_some() {
                        // The entry follows a `- `: the next line needs its indentation back.
                        (
                            key.start,
                            format!("{}{}", after(&entry, col), " ".repeat(col)),
                        )
                    } else {
                        // The only entry of a `- ` item: write the item's map in flow style.
                        return self.map_in_flow(node, wanted, shared);
                    };
                    let (start, end) = self.block_lines(key, value, next);
                    self.insert(shared, at, text)?;
                    self.delete(shared, start, end)?;
                }
            }
        }
        let first_follows_dash = !starts_line(self.text, node.start);
        if first_follows_dash && removed.last() == Some(&true) && removed.first() == Some(&true) {
            // Removing from the `- ` line to the end would take the dash too.
            if runs(&removed).len() == 1 {
                return self.map_in_flow(node, wanted, shared);
            }
        }
        for (first, last) in runs(&removed) {
            // (`runs` gives indexes of `removed`, one per entry.)
            let (Some((first_key, _)), Some((_, last_value))) =
                (entries.get(first), entries.get(last))
            else {
                continue;
            };
            let next = entries.get(last + 1).map(|e| &e.0);
            let (start, end) = self.block_lines(first_key, last_value, next);
            self.delete(shared, start, end)?;
        }
        let mut added: Vec<Text> = Vec::new();
        for (k, v) in wanted {
            let local = entries
                .iter()
                .any(|(key, _)| !is_merge_key(key) && key_text(key) == k);
            if !local && merged.get(k) != Some(v) {
                added.push(self.entry_text(col, k, v));
            }
        }
        for k in merged.keys() {
            if !wanted.contains_key(k) && !entries.iter().any(|(key, _)| key_text(key) == k) {
                return Err(EditError {
                    message: format!("cannot remove `{k}`: it comes from a merge key (<<)"),
                    offset: node.start,
                });
            }
        }
        if !added.is_empty() {
            let last = entries.last();
            let last_end = last.map_or(node.end, |(_, v)| v.end);
            let mut at = line_end_after(self.text, last_end);
            if let Some((key, value)) =
                last.filter(|_| at == self.text.len() && !self.text.ends_with('\n'))
            {
                if is_block_scalar(value) && starts_line(self.text, key.start) {
                    // A block scalar ending the file without a line break would
                    // gain one below it: add the new entries above it instead.
                    at = line_start(self.text, key.start);
                }
            }
            if at == self.text.len() && !self.text.ends_with('\n') {
                let joined: String = added.iter().map(|t| &**t).collect();
                let text = self.at_line_end(at, joined);
                self.insert(shared, at, text)?;
            } else {
                // One insertion per entry, in order: shared blocks stay shared.
                for text in added {
                    self.insert(shared, at, text)?;
                }
            }
        }
        Ok(())
    }

    fn block_seq(
        &mut self,
        node: &Node<'_>,
        items: &[Node<'_>],
        wanted: &[Value],
        shared: bool,
    ) -> Result<(), EditError> {
        let dashes: Vec<usize> = items
            .iter()
            .map(|item| dash_of(self.text, item.start).filter(|&d| starts_line(self.text, d)))
            .collect::<Option<_>>()
            .ok_or_else(|| EditError {
                message: "cannot edit a block sequence whose items do not start their lines".into(),
                offset: node.start,
            })?;
        let col = dashes.first().map_or(0, |&d| column(self.text, d));
        // Items written `-   name: x` keep their spacing (an empty item,
        // a lone `-`, says nothing of it).
        let dash_gap = dashes
            .iter()
            .zip(items)
            .find(|(_, item)| item.start < item.end)
            .filter(|&(&dash, item)| !between(self.text, dash + 1, item.start).contains('\n'))
            .map_or(1, |(&dash, item)| (item.start - dash - 1).max(1));
        let layout = Layout {
            dash_gap,
            ..self.layout
        };
        let mut removed = vec![false; items.len()];
        // (`align` gives indexes within `items` and `wanted`; `dashes` has one per item.)
        for step in self.align_items(items, wanted)? {
            match step {
                Step::Keep(..) => {}
                Step::Change(i, j) => {
                    let (Some(item), Some(&dash), Some(want)) =
                        (items.get(i), dashes.get(i), wanted.get(j))
                    else {
                        continue;
                    };
                    if self.can_edit_within(item, want) {
                        self.node(item, want, shared)?;
                        continue;
                    }
                    if item.anchor.is_some() {
                        return Err(anchor_lost(item));
                    }
                    // Rewrite the item where it stands.
                    let at = line_start(self.text, dash);
                    let text = self.item_text(layout, col, want);
                    self.insert(shared, at, text)?;
                    let (start, end) = self.block_range(dash, item.end, dashes.get(i + 1).copied());
                    self.delete(shared, start, end)?;
                }
                Step::Remove(i) => {
                    if let Some(removed) = removed.get_mut(i) {
                        *removed = true;
                    }
                }
                Step::Insert(before, j) => {
                    let Some(want) = wanted.get(j) else {
                        continue;
                    };
                    match before.and_then(|i| dashes.get(i)) {
                        Some(&dash) => {
                            // Above the comment lines that lead into that item.
                            let at = above_comments(self.text, line_start(self.text, dash));
                            let text = self.item_text(layout, col, want);
                            self.insert(shared, at, text)?;
                        }
                        None => {
                            let last_end = items.last().map_or(node.end, |i| i.end);
                            let at = line_end_after(self.text, last_end);
                            let text = self.at_line_end(at, layout.block_item(col, want));
                            self.insert(shared, at, text)?;
                        }
                    }
                }
            }
        }
        for (first, last) in runs(&removed) {
            let (Some(&dash), Some(item)) = (dashes.get(first), items.get(last)) else {
                continue;
            };
            let next = dashes.get(last + 1).copied();
            let (start, end) = self.block_range(dash, item.end, next);
            self.delete(shared, start, end)?;
        }
        Ok(())
    }

    /// [`align`] the items of a sequence node with the wanted ones, compared
    /// in place (no value is built for the items).
    fn align_items(
        &mut self,
        items: &[Node<'_>],
        wanted: &[Value],
    ) -> Result<Vec<Step>, EditError> {
        let mut failed = None;
        let named = |item: Option<&Node<'_>>, want: Option<&Value>| {
            let name = item.and_then(|i| i.get("name")).and_then(Node::as_str);
            name.is_some() && name == want.and_then(|w| w.get("name")).and_then(Value::as_str)
        };
        let steps = align_kin(
            items.len(),
            wanted.len(),
            |i, j| match (items.get(i), wanted.get(j)) {
                (Some(item), Some(want)) => self.same(item, want).unwrap_or_else(|err| {
                    failed.get_or_insert(err);
                    false
                }),
                _ => false,
            },
            |i, j| named(items.get(i), wanted.get(j)),
        );
        match failed {
            Some(err) => Err(err),
            None => Ok(steps),
        }
    }

    /// Whether `target` can be reached by editing inside `node` rather than rewriting it.
    fn can_edit_within(&self, node: &Node<'_>, target: &Value) -> bool {
        match (&node.kind, target) {
            (NodeKind::Map { flow: false, .. }, Value::Object(m)) => !m.is_empty(),
            (NodeKind::Seq { flow: false, .. }, Value::Array(a)) => !a.is_empty(),
            // An empty `{}` or `[]` that receives content becomes block content,
            // rather than one very long line.
            (
                NodeKind::Map {
                    flow: true,
                    entries,
                },
                Value::Object(m),
            ) => !entries.is_empty() || m.is_empty(),
            (NodeKind::Seq { flow: true, items }, Value::Array(a)) => {
                !items.is_empty() || a.is_empty()
            }
            // A scalar (null included) that becomes a collection is rewritten as block content.
            (NodeKind::Scalar { .. }, t) => !t.is_object() && !t.is_array(),
            (NodeKind::Alias(_), _) => true,
            _ => false,
        }
    }

    /// The byte range of whole lines holding block entries `first..=last`.
    fn block_lines(
        &self,
        key: &Node<'_>,
        value: &Node<'_>,
        next_key: Option<&Node<'_>>,
    ) -> (usize, usize) {
        self.block_range(key.start, value.end, next_key.map(|k| k.start))
    }

    /// Lines from the one holding `start` to the one holding `end`. When the
    /// first line also holds a `- ` that is not removed, remove up to the next sibling instead.
    fn block_range(&self, start: usize, end: usize, next: Option<usize>) -> (usize, usize) {
        if !starts_line(self.text, start) {
            if let Some(next) = next {
                return (start, next);
            }
        }
        let from = line_start(self.text, start);
        let to = line_end_after(self.text, end);
        if to == self.text.len() && !self.text.ends_with('\n') && from > 0 {
            // The last line has no line break: take the one before it instead.
            let before = if before(self.text, from - 1).ends_with('\r') {
                from - 2
            } else {
                from - 1
            };
            return (before, to);
        }
        (from, to)
    }

    /// Text inserted at `at`: when that is the end of a file without a final line
    /// break, the break goes first.
    fn at_line_end(&self, at: usize, text: String) -> String {
        if at == self.text.len() && !self.text.is_empty() && !self.text.ends_with('\n') {
            let body = text.strip_suffix(self.layout.newline).unwrap_or(&text);
            format!("{}{}", self.layout.newline, body)
        } else {
            text
        }
    }

    /// What the merge keys among `entries` bring.
    fn merged_keys(
        &mut self,
        entries: &[(Node<'_>, Node<'_>)],
    ) -> Result<Map<String, Value>, EditError> {
        Ok(self.resolver.merged(entries, Map::new())?)
    }

    fn flow_map(
        &mut self,
        node: &Node<'_>,
        entries: &[(Node<'_>, Node<'_>)],
        wanted: &Map<String, Value>,
        shared: bool,
    ) -> Result<(), EditError> {
        keys_are_scalars(node, entries)?;
        let merged = self.merged_keys(entries)?;
        // `{<<: *alias, …}` is how an edit on an alias is written; in such a
        // mapping an entry that only repeats what the alias brings is dropped
        // once the mapping changes, so that undoing the edit gives `*alias` back.
        let over_alias = matches!(entries.first(), Some((k, Node { kind: NodeKind::Alias(_), .. })) if is_merge_key(k));
        let mut parts: Vec<Part> = Vec::new();
        let mut changed = false;
        let mut redundant = false;
        for (key, value) in entries {
            if is_merge_key(key) {
                parts.push(Part::Keep(key.start, value.end));
                continue;
            }
            let name = key_text(key);
            match wanted.field(name) {
                None => changed = true,
                Some(target) if over_alias && merged.get(name) == Some(target) => redundant = true,
                Some(target) if self.same(value, target)? => {
                    parts.push(Part::Keep(key.start, value.end))
                }
                Some(target) => {
                    self.flow_child(value, target, shared)?;
                    parts.push(Part::Keep(key.start, value.end));
                }
            }
        }
        changed |= redundant;
        for (k, v) in wanted {
            let local = entries
                .iter()
                .any(|(key, _)| !is_merge_key(key) && key_text(key) == k);
            if !local && merged.get(k) != Some(v) {
                parts.push(Part::New(self.layout.flow_entry(k, v)));
                changed = true;
            }
        }
        if !changed {
            return Ok(());
        }
        // A mapping left holding nothing but `<<: *alias` is that alias again.
        if let [Part::Keep(start, end)] = parts.as_slice() {
            let kept = entries
                .iter()
                .find(|(k, v)| k.start == *start && v.end == *end);
            if let Some((
                key,
                alias @ Node {
                    kind: NodeKind::Alias(_),
                    ..
                },
            )) = kept
            {
                if is_merge_key(key) {
                    let text = between(self.text, alias.start, alias.end).to_string();
                    return self.replace(node, text, shared);
                }
            }
        }
        let spans: Vec<(usize, usize)> = entries.iter().map(|(k, v)| (k.start, v.end)).collect();
        self.rewrite_flow(node, &spans, parts, shared)
    }

    /// Edit `node`, a value inside a flow collection: a scalar there is
    /// written for the flow context, where `,`, `[`, `]`, `{` and `}` would
    /// end a plain scalar.
    fn flow_child(
        &mut self,
        node: &Node<'_>,
        target: &Value,
        shared: bool,
    ) -> Result<(), EditError> {
        if matches!(node.kind, NodeKind::Scalar { .. }) && !target.is_object() && !target.is_array()
        {
            let shared = shared || node.anchor.is_some_and(|a| self.referenced.contains(&a));
            let text = self.apart(node, self.layout.flow(target));
            return self.replace(node, text, shared);
        }
        // Inside brackets, a collection without its own is a `key: value`
        // pair written as a sequence item (`[a: 1]`): block lines cannot go
        // there, and a second entry would be a second item.
        if matches!(
            node.kind,
            NodeKind::Map { flow: false, .. } | NodeKind::Seq { flow: false, .. }
        ) {
            return Err(EditError {
                message: "cannot edit a `key: value` pair written as an item of a flow sequence; \
                          write it as a mapping in braces ({key: value})"
                    .into(),
                offset: node.start,
            });
        }
        self.node(node, target, shared)
    }

    fn flow_seq(
        &mut self,
        node: &Node<'_>,
        items: &[Node<'_>],
        wanted: &[Value],
        shared: bool,
    ) -> Result<(), EditError> {
        let mut parts = Vec::new();
        let mut changed = false;
        // (`align` gives indexes within `items` and `wanted`.)
        for step in self.align_items(items, wanted)? {
            match step {
                Step::Keep(i, _) => {
                    if let Some(item) = items.get(i) {
                        parts.push(Part::Keep(item.start, item.end));
                    }
                }
                Step::Change(i, j) => {
                    if let (Some(item), Some(want)) = (items.get(i), wanted.get(j)) {
                        self.flow_child(item, want, shared)?;
                        parts.push(Part::Keep(item.start, item.end));
                    }
                }
                Step::Remove(_) => changed = true,
                Step::Insert(_, j) => {
                    if let Some(want) = wanted.get(j) {
                        parts.push(Part::New(self.layout.flow(want)));
                    }
                    changed = true;
                }
            }
        }
        if !changed {
            return Ok(());
        }
        let spans: Vec<(usize, usize)> = items.iter().map(|i| (i.start, i.end)).collect();
        self.rewrite_flow(node, &spans, parts, shared)
    }

    /// Rewrite the inside of a flow collection from kept and new parts,
    /// joined the way the original joins its entries.
    fn rewrite_flow(
        &mut self,
        node: &Node<'_>,
        spans: &[(usize, usize)],
        parts: Vec<Part>,
        shared: bool,
    ) -> Result<(), EditError> {
        let separator = match spans {
            [(_, first_end), (second_start, _), ..] => {
                between(self.text, *first_end, *second_start).to_string()
            }
            // One entry on its own line: the next goes on a line of its own too.
            [(first_start, _)] if between(self.text, node.start, *first_start).contains('\n') => {
                format!(
                    ",{}{}",
                    self.layout.newline,
                    " ".repeat(column(self.text, *first_start))
                )
            }
            _ => ", ".to_string(),
        };
        let multi_line = separator.contains('\n');
        let (start, end) = match (spans.first(), spans.last()) {
            (Some((s, _)), Some((_, e))) => (*s, *e),
            _ => (
                node.start + 1,
                node.end.saturating_sub(1).max(node.start + 1),
            ),
        };
        // Spaces between the last entry and a comment after it are the
        // rewritten text's to keep (or to give back, when entries go).
        let rest = after(self.text, end);
        let spaces = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        let end = if after(self.text, end + spaces).starts_with('#') {
            end + spaces
        } else {
            end
        };
        let entry_col = column(self.text, start);
        let mut text = String::new();
        let mut previous: Option<&Part> = None;
        for part in &parts {
            match (previous, part) {
                // Neighbours in the source keep what stood between them.
                (Some(Part::Keep(_, kept_end)), Part::Keep(kept_start, _))
                    if kept_end <= kept_start
                        && !spans.iter().any(|(s, _)| s > kept_end && s < kept_start) =>
                {
                    text.push_str(between(self.text, *kept_end, *kept_start));
                }
                (Some(_), _) => text.push_str(&separator),
                (None, _) => {}
            }
            previous = Some(part);
            match part {
                Part::Keep(s, e) => {
                    // Edits inside kept entries are applied by splicing them in here.
                    let inner: Vec<Edit> = self
                        .edits
                        .iter()
                        .filter(|ed| ed.start >= *s && ed.end <= *e)
                        .cloned()
                        .collect();
                    self.edits.retain(|ed| !(ed.start >= *s && ed.end <= *e));
                    let shifted = inner
                        .into_iter()
                        .map(|ed| Edit {
                            start: ed.start - s,
                            end: ed.end - s,
                            text: ed.text,
                        })
                        .collect();
                    text.push_str(&apply(between(self.text, *s, *e), shifted));
                }
                Part::New(new) if multi_line && self.layout.json => {
                    text.push_str(&reindent(new, entry_col, self.layout.newline));
                }
                Part::New(new) => text.push_str(new),
            }
        }
        // A comment right after the last entry (`{a: #c`) stays a comment.
        if after(self.text, end).starts_with('#') && !text.ends_with([' ', '\t']) {
            text.push(' ');
        }
        self.push(
            shared,
            start,
            Edit {
                start,
                end,
                text: text.into(),
            },
        )
    }
}

enum Part {
    Keep(usize, usize),
    New(String),
}

/// Pretty-print a compact JSON entry for a multi-line JSON document.
fn reindent(compact: &str, col: usize, newline: &str) -> String {
    // `compact` is `"key": value` or a bare value; re-parse the value part.
    let (prefix, value) = match compact.split_once("\": ") {
        Some((k, v)) if compact.starts_with('"') => (format!("{k}\": "), v),
        _ => (String::new(), compact),
    };
    let Ok(parsed) = serde_json::from_str::<Value>(value) else {
        return compact.to_string();
    };
    let pretty = serde_json::to_string_pretty(&parsed).unwrap_or_else(|_| value.to_string());
    let pad = " ".repeat(col);
    let body = pretty.replace('\n', &format!("{newline}{pad}"));
    format!("{prefix}{body}")
}

/// How one sequence becomes another.
#[derive(Debug, PartialEq, Eq)]
enum Step {
    Keep(usize, usize),
    Change(usize, usize),
    Remove(usize),
    /// Insert wanted item `.1` before original item `.0` (or at the end).
    Insert(Option<usize>, usize),
}

/// Align two sequences of `n` and `m` items, `same(i, j)` telling whether
/// old item `i` equals new item `j`: equal lengths pair up by position;
/// otherwise keep the longest common subsequence and pair leftover runs of
/// equal length.
#[cfg(test)]
fn align(n: usize, m: usize, same: impl FnMut(usize, usize) -> bool) -> Vec<Step> {
    align_kin(n, m, same, |_, _| false)
}

/// [`align`], where leftover runs of unequal length also pair an old item
/// with a new one that `kin(i, j)` says is the same item changed (a
/// container of the same name), in order, so that it is edited where it
/// stands rather than written anew beside new items.
fn align_kin(
    n: usize,
    m: usize,
    mut same: impl FnMut(usize, usize) -> bool,
    mut kin: impl FnMut(usize, usize) -> bool,
) -> Vec<Step> {
    if n == m {
        return (0..n)
            .map(|i| {
                if same(i, i) {
                    Step::Keep(i, i)
                } else {
                    Step::Change(i, i)
                }
            })
            .collect();
    }
    // Each pair compared once, row by row.
    let equal: Vec<bool> = (0..n)
        .flat_map(|i| (0..m).map(move |j| (i, j)))
        .map(|(i, j)| same(i, j))
        .collect();
    let equal = |i: usize, j: usize| i < n && j < m && equal.get(i * m + j) == Some(&true);
    // lcs(i, j): the longest common subsequence of old[i..] and new[j..],
    // rows of m + 1, the last row and column zero.
    let width = m + 1;
    let mut table = vec![0u32; (n + 1) * width];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            let at = |i: usize, j: usize| table.get(i * width + j).copied().unwrap_or(0);
            let length = if equal(i, j) {
                at(i + 1, j + 1) + 1
            } else {
                at(i + 1, j).max(at(i, j + 1))
            };
            if let Some(cell) = table.get_mut(i * width + j) {
                *cell = length;
            }
        }
    }
    let lcs = |i: usize, j: usize| table.get(i * width + j).copied().unwrap_or(0);
    let mut steps = Vec::new();
    let (mut i, mut j) = (0, 0);
    let mut pending_removed: Vec<usize> = Vec::new();
    let mut pending_inserted: Vec<usize> = Vec::new();
    let mut flush = |steps: &mut Vec<Step>,
                     removed: &mut Vec<usize>,
                     inserted: &mut Vec<usize>,
                     before: Option<usize>| {
        if removed.len() == inserted.len() {
            steps.extend(
                removed
                    .iter()
                    .zip(inserted.iter())
                    .map(|(&r, &a)| Step::Change(r, a)),
            );
        } else {
            // Kin pairs, in order; the other new items go before the next
            // pair's old item, the other old items go.
            let mut pairs: Vec<(usize, usize)> = Vec::new();
            let mut from = 0;
            for &a in inserted.iter() {
                if let Some(k) =
                    (from..removed.len()).find(|&k| removed.get(k).is_some_and(|&r| kin(r, a)))
                {
                    if let Some(&r) = removed.get(k) {
                        pairs.push((r, a));
                    }
                    from = k + 1;
                }
            }
            steps.extend(
                removed
                    .iter()
                    .filter(|r| !pairs.iter().any(|(p, _)| p == *r))
                    .map(|&r| Step::Remove(r)),
            );
            for &a in inserted.iter() {
                match pairs.iter().find(|(_, p)| *p == a) {
                    Some(&(r, _)) => steps.push(Step::Change(r, a)),
                    None => {
                        let next = pairs.iter().find(|(_, p)| *p > a).map(|&(r, _)| r);
                        steps.push(Step::Insert(next.or(before), a));
                    }
                }
            }
        }
        removed.clear();
        inserted.clear();
    };
    while i < n || j < m {
        if equal(i, j) {
            flush(
                &mut steps,
                &mut pending_removed,
                &mut pending_inserted,
                Some(i),
            );
            steps.push(Step::Keep(i, j));
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs(i, j + 1) >= lcs(i + 1, j)) {
            pending_inserted.push(j);
            j += 1;
        } else {
            pending_removed.push(i);
            i += 1;
        }
    }
    flush(
        &mut steps,
        &mut pending_removed,
        &mut pending_inserted,
        None,
    );
    steps
}

/// Runs of consecutive `true` as (first, last) index pairs.
fn runs(flags: &[bool]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, &flag) in flags.iter().enumerate() {
        match (flag, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, i - 1));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, flags.len() - 1));
    }
    out
}

/// Whether any node of the tree carries an anchor or is an alias.
fn has_anchors(node: &Node<'_>) -> bool {
    node.anchor.is_some()
        || match &node.kind {
            NodeKind::Alias(_) => true,
            NodeKind::Map { entries, .. } => entries
                .iter()
                .any(|(k, v)| has_anchors(k) || has_anchors(v)),
            NodeKind::Seq { items, .. } => items.iter().any(has_anchors),
            NodeKind::Scalar { .. } => false,
        }
}

/// A mapping is edited key by key, by the keys' text: one with a key that
/// is a collection or an alias (whose value reads it as a string of JSON)
/// would have that entry rewritten.
fn keys_are_scalars(node: &Node<'_>, entries: &[(Node<'_>, Node<'_>)]) -> Result<(), EditError> {
    match entries
        .iter()
        .find(|(key, _)| !matches!(key.kind, NodeKind::Scalar { .. }))
    {
        Some((key, _)) => Err(EditError {
            message: "cannot edit a mapping with a key that is not a plain scalar (a mapping, a list or an alias as a key)".into(),
            offset: key.start.max(node.start),
        }),
        None => Ok(()),
    }
}

/// The properties written before a scalar (`&anchor`, `!!tag`, in either
/// order) that its new value `target` keeps: the anchor always (aliases and
/// uninject need it), a core tag when `target` is of its kind.
fn kept_properties<'t>(span: &'t str, target: &Value) -> Vec<&'t str> {
    span.split_whitespace()
        .take_while(|word| word.starts_with(['&', '!']))
        .filter(|word| {
            let tag = word
                .strip_prefix("!<tag:yaml.org,2002:")
                .and_then(|t| t.strip_suffix('>'))
                .or_else(|| word.strip_prefix("!!"));
            match tag {
                None => word.starts_with('&'),
                Some("str") => target.is_string(),
                Some("int") => target.is_i64() || target.is_u64(),
                Some("float") => target.is_number(),
                Some("bool") => target.is_boolean(),
                Some("null") => target.is_null(),
                Some(_) => false,
            }
        })
        .collect()
}

/// Whether writing `target`, a collection, in place of the scalar `node`
/// would drop the tag written before it (`key: !!str`).
fn tag_lost(text: &str, node: &Node<'_>, target: &Value) -> bool {
    matches!(node.kind, NodeKind::Scalar { .. })
        && (target.is_object() || target.is_array())
        && between(text, node.start, node.end).starts_with('!')
}

/// Why an anchored node is not rewritten as another kind of value: its
/// anchor (`&name`) would go with the old text.
fn anchor_lost(node: &Node<'_>) -> EditError {
    EditError {
        message: "cannot rewrite an anchored value (&…) as another kind of value without losing its anchor".into(),
        offset: node.start,
    }
}

/// `text[from..to]`; empty if that is not a stretch of `text` (offsets
/// come from the parser, on character boundaries: never in practice).
fn between(text: &str, from: usize, to: usize) -> &str {
    text.get(from..to).unwrap_or_default()
}

/// `text[..at]`, as [`between`].
fn before(text: &str, at: usize) -> &str {
    text.get(..at).unwrap_or_default()
}

/// `text[at..]`, as [`between`].
fn after(text: &str, at: usize) -> &str {
    text.get(at..).unwrap_or_default()
}

fn key_text<'a>(key: &'a Node<'_>) -> &'a str {
    key.as_str().unwrap_or_default()
}

/// Byte offset of the start of the line holding `pos`.
pub fn line_start(text: &str, pos: usize) -> usize {
    // Lines are short: a plain loop back finds the line break sooner than
    // a searcher made for long texts.
    before(text, pos)
        .bytes()
        .rposition(|b| b == b'\n')
        .map_or(0, |i| i + 1)
}

/// Column of `pos` in bytes (indentation is ASCII spaces).
fn column(text: &str, pos: usize) -> usize {
    pos - line_start(text, pos)
}

/// Whether only spaces stand before `pos` on its line.
fn starts_line(text: &str, pos: usize) -> bool {
    between(text, line_start(text, pos), pos)
        .bytes()
        .all(|b| b == b' ')
}

/// Whether `node` is a literal (`|`) or folded (`>`) scalar.
fn is_block_scalar(node: &Node<'_>) -> bool {
    matches!(
        &node.kind,
        NodeKind::Scalar {
            style: ScalarStyle::Literal | ScalarStyle::Folded,
            ..
        }
    )
}

/// Where a block scalar's header stands.
struct BlockHeader {
    /// The `|` or `>`, and the end of its indicators.
    indicator: usize,
    indicator_end: usize,
    /// The end of the header's line, before its line break.
    line_end: usize,
    /// The column of what the header belongs to: its key, or the item's
    /// content after a `- `.
    owner_column: usize,
}

/// The header of the block scalar whose node starts at `start`: on the line
/// of `start` when properties stand before it there, else on the last line
/// before `start` that is not blank.
fn block_header(text: &str, start: usize) -> Option<BlockHeader> {
    let mut line = line_start(text, start);
    if starts_line(text, start) {
        loop {
            line = line_start(text, line.checked_sub(1)?);
            if !line_text(text, line).trim().is_empty() {
                break;
            }
        }
    }
    let whole = line_text(text, line);
    // Past a comment: ` #` starts one; a header has no other `#`.
    let code = whole.find(" #").map_or(whole, |hash| before(whole, hash));
    let code = code.trim_end();
    let word = code.rfind([' ', '\t']).map_or(0, |i| i + 1);
    if !after(code, word).starts_with(['|', '>']) {
        return None;
    }
    let indented = whole.len() - whole.trim_start().len();
    let mut owner = indented;
    // `- ` before the owner: items nested on one line (`- - key: |`).
    while let Some(rest) = whole.get(owner..).and_then(|r| r.strip_prefix('-')) {
        let gap = rest.len() - rest.trim_start().len();
        if gap == 0 {
            break;
        }
        owner += 1 + gap;
    }
    Some(BlockHeader {
        indicator: line + word,
        indicator_end: line + code.len(),
        line_end: line + whole.len(),
        owner_column: owner,
    })
}

/// The line starting at `start`, without its line break.
fn line_text(text: &str, start: usize) -> &str {
    let line = after(text, start);
    let line = line.split('\n').next().unwrap_or_default();
    line.strip_suffix('\r').unwrap_or(line)
}

/// Move a line-start position `at` up over the comment lines right above it.
fn above_comments(text: &str, mut at: usize) -> usize {
    while at > 0 {
        let previous = line_start(text, at - 1);
        if !between(text, previous, at).trim_start().starts_with('#') {
            break;
        }
        at = previous;
    }
    at
}

/// The start of the line after the one where a node ending at `end` ends.
/// Block scalars end at the indentation of the next line: that line is the answer.
fn line_end_after(text: &str, end: usize) -> usize {
    let start = line_start(text, end);
    if end > start
        && between(text, start, end)
            .bytes()
            .all(|b| b == b' ' || b == b'\t')
    {
        return start;
    }
    if end == start && end > 0 {
        return start;
    }
    after(text, end)
        .find('\n')
        .map_or(text.len(), |i| end + i + 1)
}

/// The `-` of a block sequence item whose content starts at `item_start`:
/// before it on its line, or at the end of an earlier line, past any anchor,
/// tag or comment written after the dash (`- &a`, `- # note`).
fn dash_of(text: &str, item_start: usize) -> Option<usize> {
    let mut end = item_start;
    loop {
        let start = line_start(text, end);
        let mut before = between(text, start, end);
        if end != item_start {
            // An earlier line: ignore a trailing comment.
            if let Some(hash) = before
                .find(" #")
                .or_else(|| before.trim_start().starts_with('#').then_some(0))
            {
                before = self::before(before, hash);
            }
        }
        let mut trimmed = before.trim_end();
        // Skip node properties standing between the dash and the content.
        while let Some(last) = trimmed
            .rsplit(' ')
            .next()
            .filter(|t| t.starts_with(['&', '!']))
        {
            trimmed = trimmed.strip_suffix(last).unwrap_or_default().trim_end();
        }
        if trimmed.ends_with('-') && (trimmed == "-" || trimmed.ends_with(" -")) {
            return Some(start + trimmed.len() - 1);
        }
        if !trimmed.trim_start().is_empty() || start == 0 {
            return None;
        }
        end = start - 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse::parse_stream;
    use crate::yaml::value;
    use serde_json::json;

    #[test]
    fn lines_inserted_after_a_deleted_tail_end_the_file() {
        // `b: 2` and the line break before it go (the file has no final
        // one); the inserted line goes where they were, its line break first.
        let text = "a:\n- 1\nb: 2";
        let cut = text.find("\nb").expect("b");
        let edits = vec![
            Edit {
                start: cut,
                end: text.len(),
                text: Text::Own(String::new()),
            },
            Edit {
                start: cut + 1,
                end: cut + 1,
                text: Text::Own("- 2\n".into()),
            },
        ];
        assert_eq!(apply(text, edits), "a:\n- 1\n- 2");
    }

    fn render(text: &str, change: impl FnOnce(&mut Value)) -> String {
        let docs = parse_stream(text).expect("parses");
        let root = docs[0].root.as_ref().expect("root");
        let mut target = value::to_value(root).expect("value");
        change(&mut target);
        let edits = diff(text, root, &target).expect("diff");
        let out = apply(text, edits);
        let reparsed = parse_stream(&out).expect("output parses");
        let got = value::to_value(reparsed[0].root.as_ref().expect("root")).expect("value");
        assert_eq!(got, target, "semantics of:\n{out}");
        out
    }

    fn round_trip(text: &str, change: impl FnOnce(&mut Value)) -> String {
        let out = render(text, change);
        let docs = parse_stream(text).expect("parses");
        let original = value::to_value(docs[0].root.as_ref().expect("root")).expect("value");
        let back = render(&out, |v| *v = original);
        assert_eq!(back, text, "removing what was added restores the text");
        out
    }

    /// A comment after a value stays when the value changes, whatever its
    /// style, in a block mapping (where changing it back gives the text
    /// back) and in a flow one.
    #[test]
    fn a_comment_after_a_changed_value_stays() {
        for written in ["x", "'x'", "\"x\"", "\"a\\\"b\"", "'it''s'", "\"a # b\""] {
            let text = format!("k: {written}   # the app's\n");
            let out = round_trip(&text, |v| v["k"] = json!("port-9090"));
            assert!(
                out.contains("9090") && out.ends_with("   # the app's\n"),
                "{written}: {out}"
            );
            let text = format!("m: {{v: {written} }} # flow\n");
            let out = render(&text, |v| v["m"]["v"] = json!("port-9090"));
            assert!(
                out.contains("9090") && out.ends_with(" } # flow\n"),
                "{written}: {out}"
            );
        }
    }

    /// Blocks met again, in any order, are shared; a new value gets a block
    /// of its own, and the text is always the value's.
    #[test]
    fn blocks_are_shared_whatever_the_order_they_come_in() {
        let text = "spec:\n  replicas: 1\n";
        let docs = parse_stream(text).expect("parses");
        let root = docs[0].root.as_ref().expect("root");
        let with = |key: &str, port: u16| {
            let mut target = value::to_value(root).expect("value");
            target["spec"][key] = json!([{"name": "proxy", "ports": [{"containerPort": port}]}]);
            target
        };
        let mut blocks = Blocks::default();
        let mut render = |target: &Value| {
            let edits = diff_with(text, root, false, target, &mut blocks).expect("diff");
            let [edit] = edits.as_slice() else {
                panic!("one insertion: {edits:?}")
            };
            edit.text.clone()
        };
        let (a, b, c) = (with("inits", 1), with("sidecars", 1), with("inits", 2));
        let first = [render(&a), render(&b), render(&c)];
        let again = [render(&a), render(&c), render(&b), render(&a)];
        for (text, target) in first.iter().zip([&a, &b, &c]) {
            let doc = format!("spec:\n  replicas: 1\n{}", &**text);
            let reparsed = parse_stream(&doc).expect("block parses");
            let got = value::to_value(reparsed[0].root.as_ref().expect("root")).expect("value");
            assert_eq!(got, *target);
        }
        let shared = |x: &Text, y: &Text| match (x, y) {
            (Text::Shared(x), Text::Shared(y)) => Arc::ptr_eq(x, y),
            _ => false,
        };
        assert!(shared(&again[0], &first[0]) && shared(&again[3], &first[0]));
        assert!(shared(&again[1], &first[2]) && shared(&again[2], &first[1]));
        assert!(
            !shared(&first[0], &first[2]),
            "another value, another block"
        );
    }

    #[test]
    fn adds_block_entries_after_the_last_line() {
        let text = "metadata:\n  labels:\n    app: web   # note\n  # about spec\nspec: {}\n";
        let out = round_trip(text, |v| {
            v["metadata"]["annotations"] = json!({"a": "b"});
            v["metadata"]["labels"]["x"] = json!("y");
        });
        assert_eq!(
            out,
            "metadata:\n  labels:\n    app: web   # note\n    x: y\n  annotations:\n    a: b\n  # about spec\nspec: {}\n"
        );
    }

    #[test]
    fn inserts_block_items_at_front_and_end() {
        let text = "c:\n- name: app\n  image: x\nv: 1";
        let out = round_trip(text, |v| {
            v["c"]
                .as_array_mut()
                .expect("list")
                .insert(0, json!({"name": "p", "ports": [1]}));
            v["c"]
                .as_array_mut()
                .expect("list")
                .push(json!({"name": "z"}));
        });
        assert_eq!(
            out,
            "c:\n- name: p\n  ports:\n  - 1\n- name: app\n  image: x\n- name: z\nv: 1"
        );
    }

    #[test]
    fn edits_flow_collections_and_keeps_separators() {
        let text = "a: {x: 1,y: 2}\nb: []\n";
        let out = round_trip(text, |v| {
            v["a"]["z"] = json!("w");
            v["b"] = json!([{"n": 1}]);
        });
        // An empty `[]` receiving content becomes a block list.
        assert_eq!(out, "a: {x: 1,y: 2,z: w}\nb:\n  - n: 1\n");
    }

    #[test]
    fn edit_on_an_alias_keeps_the_anchor_users() {
        let text = "sel: &s\n  app: web\ntpl:\n  labels: *s\n";
        let out = round_trip(text, |v| v["tpl"]["labels"]["l"] = json!("1"));
        assert_eq!(
            out,
            "sel: &s\n  app: web\ntpl:\n  labels: {<<: *s, l: \"1\"}\n"
        );
    }

    #[test]
    fn a_rewritten_scalar_keeps_its_anchor_and_a_tag_of_its_kind() {
        for (from, to) in [
            ("&g 1", "&g 20"),
            ("!!int &g 1", "!!int &g 20"),
            ("&g !!int 1", "&g !!int 20"),
            ("!<tag:yaml.org,2002:int> 1", "!<tag:yaml.org,2002:int> 20"),
        ] {
            let text = format!("grace: {from}\n");
            let out = round_trip(&text, |v| v["grace"] = json!(20));
            assert_eq!(out, format!("grace: {to}\n"));
        }
        // A tag of another kind would contradict the new value: it goes.
        let out = render("grace: !!str &g 1\n", |v| v["grace"] = json!(20));
        assert_eq!(out, "grace: &g 20\n");
    }

    #[test]
    fn a_bare_key_takes_lines_under_it_and_keeps_its_own() {
        let text = "metadata:\n  labels:   # none yet\n  # about the name\n  name: web\n";
        let out = round_trip(text, |v| v["metadata"]["labels"] = json!({"app": "web"}));
        assert_eq!(
            out,
            "metadata:\n  labels:   # none yet\n    app: web\n  # about the name\n  name: web\n"
        );
        let text = "spec:\n  volumes:  \n  containers: []\n";
        let out = round_trip(text, |v| v["spec"]["volumes"] = json!([{"name": "a"}]));
        assert_eq!(
            out,
            "spec:\n  volumes:  \n    - name: a\n  containers: []\n"
        );
        // At the end of a file without a line break.
        let out = round_trip("labels:  ", |v| v["labels"] = json!({"a": "b"}));
        assert_eq!(out, "labels:  \n  a: b");
        // A tag of the new value's kind stays on the key's line.
        let text = "labels: !!map # none\nname: web\n";
        let out = round_trip(text, |v| v["labels"] = json!({"a": "b"}));
        assert_eq!(out, "labels: !!map # none\n  a: b\nname: web\n");
    }

    #[test]
    fn an_empty_item_says_nothing_of_the_space_after_dashes() {
        let push = |v: &mut Value| {
            if let Some(items) = v["list"].as_array_mut() {
                items.push(json!("b"));
            }
        };
        assert_eq!(
            round_trip("list:\n-\n-   a\n", push),
            "list:\n-\n-   a\n-   b\n"
        );
        assert_eq!(round_trip("list:\n-", push), "list:\n-\n- b");
    }

    #[test]
    fn a_tagged_value_is_not_rewritten_as_a_collection() {
        let text = "labels: !!str\nname: web\n";
        let docs = parse_stream(text).expect("parses");
        let root = docs[0].root.as_ref().expect("root");
        let mut target = value::to_value(root).expect("value");
        target["labels"] = json!({"a": "b"});
        let err = diff(text, root, &target).expect_err("refused");
        assert!(err.message.contains("without losing its tag"), "{err:?}");
    }

    #[test]
    fn edit_inside_a_shared_anchor_is_refused() {
        let text = "a: &s {app: web}\nb: *s\n";
        let docs = parse_stream(text).expect("parses");
        let root = docs[0].root.as_ref().expect("root");
        let target = json!({"a": {"app": "web", "x": 1}, "b": {"app": "web"}});
        assert!(diff(text, root, &target).is_err());
    }

    #[test]
    fn block_scalars_crlf_and_end_of_file() {
        let text = "a:\r\n  s: |\r\n    hi\r\n\r\n  t: 1\r\nb:\r\n  c: 2";
        round_trip(text, |v| {
            v["a"]["u"] = json!(["x"]);
            v["b"]["d"] = json!({"e": 1});
        });
    }

    #[test]
    fn removes_entries_that_start_an_item() {
        let text = "l:\n- name: a\n  keep: 1\n";
        let out = render(text, |v| {
            v["l"][0].as_object_mut().expect("map").shift_remove("name");
        });
        assert_eq!(out, "l:\n- keep: 1\n");
    }

    #[test]
    fn json_documents_stay_json() {
        let text = "{\n  \"a\": [\n    {\"n\": 1}\n  ]\n}\n";
        let out = round_trip(text, |v| {
            v["a"].as_array_mut().expect("list").push(json!({"n": 2}))
        });
        assert!(serde_json::from_str::<Value>(&out).is_ok(), "{out}");
    }

    #[test]
    fn align_pairs_runs() {
        let old = [json!(1), json!(2)];
        let new = [json!(0), json!(1), json!(3)];
        assert_eq!(
            align(old.len(), new.len(), |i, j| old[i] == new[j]),
            vec![
                Step::Insert(Some(0), 0),
                Step::Keep(0, 1),
                Step::Change(1, 2)
            ]
        );
    }

    #[test]
    fn align_pairs_items_of_the_same_name_among_new_ones() {
        let old = [json!({"name": "app", "x": 1})];
        let new = [
            json!({"name": "init"}),
            json!({"name": "proxy"}),
            json!({"name": "app", "x": 2}),
        ];
        let name = |v: &Value| v["name"].clone();
        assert_eq!(
            align_kin(
                old.len(),
                new.len(),
                |i, j| old[i] == new[j],
                |i, j| name(&old[i]) == name(&new[j])
            ),
            vec![
                Step::Insert(Some(0), 0),
                Step::Insert(Some(0), 1),
                Step::Change(0, 2)
            ]
        );
        let text = "list:\n- name: app\n  image: \"quoted\"  # kept\n  x: 1\n";
        let out = render(text, |v| {
            let list = v["list"].as_array_mut().expect("list");
            list[0]["x"] = json!(2);
            list.insert(0, json!({"name": "proxy"}));
        });
        assert_eq!(
            out,
            "list:\n- name: proxy\n- name: app\n  image: \"quoted\"  # kept\n  x: 2\n"
        );
    }

    #[test]
    fn anchored_block_collections_stay_block() {
        let text = "meta:\n  annotations: &a\n    x: y\nlist: &l\n- name: one\n";
        let out = render(text, |v| {
            v["meta"]["annotations"]["z"] = json!("w");
            v["list"]
                .as_array_mut()
                .expect("list")
                .push(json!({"name": "two"}));
        });
        assert_eq!(
            out,
            "meta:\n  annotations: &a\n    x: y\n    z: w\nlist: &l\n- name: one\n- name: two\n"
        );
    }

    #[test]
    fn items_with_anchors_comments_and_wide_dashes() {
        let text = "l:\n  # the first one\n  - &i\n    name: a\n  - # scratch\n    name: b\nm:\n-   name: c\n";
        round_trip(text, |v| {
            v["l"]
                .as_array_mut()
                .expect("list")
                .insert(0, json!({"name": "new"}));
            v["m"]
                .as_array_mut()
                .expect("list")
                .push(json!({"name": "d", "x": 1}));
        });
        let out = render(text, |v| {
            v["l"]
                .as_array_mut()
                .expect("list")
                .insert(0, json!({"name": "new"}))
        });
        assert!(
            out.starts_with("l:\n  - name: new\n  # the first one\n"),
            "{out}"
        );
        let out = render(text, |v| {
            v["m"]
                .as_array_mut()
                .expect("list")
                .push(json!({"name": "d", "x": 1}))
        });
        assert!(
            out.ends_with("-   name: c\n-   name: d\n    x: 1\n"),
            "{out}"
        );
    }

    #[test]
    fn a_block_scalar_ending_the_file_keeps_its_value() {
        for text in ["a: 1\nb: |\n  x", "a: 1\nb: |-\n  s"] {
            let out = round_trip(text, |v| v["c"] = json!("d"));
            assert!(
                out.ends_with(text.split_once('\n').map(|(_, rest)| rest).unwrap_or(text)),
                "{out}"
            );
        }
    }

    #[test]
    fn null_values_become_block_content_and_back() {
        let text = "metadata:\nspec:\n  x: 1\n";
        let out = round_trip(text, |v| v["metadata"] = json!({"labels": {"a": "b"}}));
        assert_eq!(out, "metadata:\n  labels:\n    a: b\nspec:\n  x: 1\n");
    }

    /// The original scalar of the style property below: every style YAML has,
    /// with chomping and indentation indicators, a comment or properties
    /// after the header, and blank lines in and after block content.
    fn written_scalars() -> impl proptest::strategy::Strategy<Value = &'static str> {
        proptest::sample::select(vec![
            "plain",
            "'single'",
            "\"double\"",
            "''",
            "|\n  one\n  two",
            "|-\n  one\n  two",
            "|+\n  one\n\n",
            "|2-\n    lead\n  two",
            ">\n  folded\n  text\n\n",
            ">- # note\n  folded",
            "|",
            "| # empty\n",
            "&a |-\n  anchored",
            "!!str |\n  tagged",
            "|-\n\n  after a blank line",
        ])
    }

    fn new_values() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        prop_oneof![
            crate::json::testing::values(),
            proptest::sample::select(vec![
                "-----BEGIN X-----\nAAAA\n-----END X-----",
                "two\nlines\n",
                "kept\n\n",
                " leading space\nline",
                "\nleading newline",
                "tab\there\nline",
                "trailing space \nline",
                "{\"ns\":\"$(_pod_ns)\"}",
                "one line",
                "",
                "- dash",
                "# hash",
            ])
            .prop_map(|s| json!(s)),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config {
            failure_persistence: None,
            ..proptest::test_runner::Config::default()
        })]

        /// A scalar of any style, in any place a block scalar can stand,
        /// replaced by a value of any kind, gives YAML that reads as the new
        /// value, with what follows it kept.
        #[test]
        fn any_scalar_takes_any_value(
            written in written_scalars(),
            place in 0usize..4,
            wanted in new_values(),
        ) {
            let indented = |text: &str, by: usize| -> String {
                let pad = " ".repeat(by);
                text.replace('\n', &format!("\n{pad}"))
            };
            // The scalar as the value of `v`, with a sibling after it.
            let (text, path): (String, &[&str]) = match place {
                0 => (format!("v: {written}\nnext: 1\n"), &["v"]),
                1 => (format!("a:\n  v: {}\n  next: 1\n", indented(written, 2)), &["a", "v"]),
                2 => (format!("l:\n- v: {}\n  next: 1\n- other\n", indented(written, 2)), &["l", "0", "v"]),
                _ => (format!("l:\n  - {}\n  - other\n", indented(written, 4)), &["l", "0"]),
            };
            let Ok(docs) = parse_stream(&text) else {
                return Err(proptest::test_runner::TestCaseError::reject("not a document"));
            };
            let root = docs[0].root.as_ref().expect("root");
            let mut target = value::to_value(root).expect("value");
            let slot = path.iter().try_fold(&mut target, |at, token| match at {
                Value::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get_mut(i)),
                other => other.get_mut(*token),
            });
            *slot.expect("the scalar is there") = wanted;
            let Ok(edits) = diff(&text, root, &target) else {
                // Refused with a reason (an anchor that would be lost): fine.
                return Ok(());
            };
            let out = apply(&text, edits);
            let reparsed = parse_stream(&out);
            proptest::prop_assert!(reparsed.is_ok(), "does not parse:\n{}\nfrom:\n{}", out, text);
            let reparsed = reparsed.expect("checked");
            let got = value::to_value(reparsed[0].root.as_ref().expect("root")).expect("value");
            proptest::prop_assert_eq!(got, target, "reads otherwise:\n{}", out);
        }
    }
}

//! Where things are in the text: lines, columns, block headers, comments
//! above an entry, and what a node carries that an edit must keep.

use super::*;

/// Whether any node of the tree carries an anchor or is an alias.
pub(super) fn has_anchors(node: &Node<'_>) -> bool {
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
pub(super) fn keys_are_scalars(
    node: &Node<'_>,
    entries: &[(Node<'_>, Node<'_>)],
) -> Result<(), EditError> {
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
pub(super) fn kept_properties<'t>(span: &'t str, target: &Value) -> Vec<&'t str> {
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
pub(super) fn tag_lost(text: &str, node: &Node<'_>, target: &Value) -> bool {
    matches!(node.kind, NodeKind::Scalar { .. })
        && (target.is_object() || target.is_array())
        && between(text, node.start, node.end).starts_with('!')
}

/// Why an anchored node is not rewritten as another kind of value: its
/// anchor (`&name`) would go with the old text.
pub(super) fn anchor_lost(node: &Node<'_>) -> EditError {
    EditError {
        message: "cannot rewrite an anchored value (&…) as another kind of value without losing its anchor".into(),
        offset: node.start,
    }
}

/// `text[from..to]`; empty if that is not a stretch of `text` (offsets
/// come from the parser, on character boundaries: never in practice).
pub(super) fn between(text: &str, from: usize, to: usize) -> &str {
    text.get(from..to).unwrap_or_default()
}

/// `text[..at]`, as [`between`].
pub(super) fn before(text: &str, at: usize) -> &str {
    text.get(..at).unwrap_or_default()
}

/// `text[at..]`, as [`between`].
pub(super) fn after(text: &str, at: usize) -> &str {
    text.get(at..).unwrap_or_default()
}

pub(super) fn key_text<'a>(key: &'a Node<'_>) -> &'a str {
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
pub(super) fn column(text: &str, pos: usize) -> usize {
    pos - line_start(text, pos)
}

/// Whether only spaces stand before `pos` on its line.
pub(super) fn starts_line(text: &str, pos: usize) -> bool {
    between(text, line_start(text, pos), pos)
        .bytes()
        .all(|b| b == b' ')
}

/// Whether `node` is a literal (`|`) or folded (`>`) scalar.
pub(super) fn is_block_scalar(node: &Node<'_>) -> bool {
    matches!(
        &node.kind,
        NodeKind::Scalar {
            style: ScalarStyle::Literal | ScalarStyle::Folded,
            ..
        }
    )
}

/// Where a block scalar's header stands.
pub(super) struct BlockHeader {
    /// The `|` or `>`, and the end of its indicators.
    pub(super) indicator: usize,
    pub(super) indicator_end: usize,
    /// The end of the header's line, before its line break.
    pub(super) line_end: usize,
    /// The column of what the header belongs to: its key, or the item's
    /// content after a `- `.
    pub(super) owner_column: usize,
}

/// The header of the block scalar whose node starts at `start`: on the line
/// of `start` when properties stand before it there, else on the last line
/// before `start` that is not blank.
pub(super) fn block_header(text: &str, start: usize) -> Option<BlockHeader> {
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
pub(super) fn line_text(text: &str, start: usize) -> &str {
    let line = after(text, start);
    let line = line.split('\n').next().unwrap_or_default();
    line.strip_suffix('\r').unwrap_or(line)
}

/// Move a line-start position `at` up over the comment lines right above it.
pub(super) fn above_comments(text: &str, mut at: usize) -> usize {
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
pub(super) fn line_end_after(text: &str, end: usize) -> usize {
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
pub(super) fn dash_of(text: &str, item_start: usize) -> Option<usize> {
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

/// Where a null written after a block mapping's key stands (`key: ~`,
/// `key: null  # c`): from just past the key's `:` to the end of the null,
/// when the key starts its line and nothing but spaces or a comment follows
/// the null on it. Filling the key with lines under it takes that text out
/// (the key's line and its comment stay); emptying it puts it back.
pub fn null_after_key(text: &str, key: &Node<'_>, value: &Node<'_>) -> Option<(usize, usize)> {
    let NodeKind::Scalar {
        text: word,
        style: ScalarStyle::Plain,
        tag: None,
    } = &value.kind
    else {
        return None;
    };
    if value.anchor.is_some()
        || !matches!(word.as_ref(), "~" | "null" | "Null" | "NULL")
        || between(text, value.start, value.end) != word.as_ref()
        || !starts_line(text, key.start)
    {
        return None;
    }
    let gap = between(text, key.end, value.start);
    let colon = gap.trim_start_matches([' ', '\t']);
    let spaces = colon.strip_prefix(':')?;
    if spaces.is_empty() || !spaces.bytes().all(|b| b == b' ' || b == b'\t') {
        return None;
    }
    let rest = after(text, value.end)
        .split('\n')
        .next()
        .unwrap_or_default();
    let rest = rest.trim_end_matches('\r').trim_start_matches([' ', '\t']);
    if !(rest.is_empty() || rest.starts_with('#')) {
        return None;
    }
    Some((value.start - spaces.len(), value.end))
}

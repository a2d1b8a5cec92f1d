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
            defect: false,
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
pub(super) fn tag_lost(text: &str, node: &Node<'_>, target: &Value) -> Result<bool, EditError> {
    Ok(matches!(node.kind, NodeKind::Scalar { .. })
        && (target.is_object() || target.is_array())
        && between(text, node.start, node.end)?.starts_with('!'))
}

/// Why an anchored node is not rewritten as another kind of value: its
/// anchor (`&name`) would go with the old text.
pub(super) fn anchor_lost(node: &Node<'_>) -> EditError {
    EditError {
        message: "cannot rewrite an anchored value (&…) as another kind of value without losing its anchor".into(),
        offset: node.start,
        defect: false,
    }
}

/// A range of bytes that is not a stretch of the text it was to be read
/// from: past its end, reversed, or not between two of its characters.
/// Offsets come from the parser or from the text itself: such a range is the
/// tool's defect, said with the range and the text's length, never read as
/// an empty string (which an edit would write as text lost).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "bytes {from}..{to} are not a stretch of the text ({len} bytes long): past its end, \
     reversed, or not between two characters"
)]
pub struct OutOfText {
    pub from: usize,
    pub to: usize,
    /// The length of the text, in bytes.
    pub len: usize,
}

impl From<OutOfText> for EditError {
    fn from(err: OutOfText) -> Self {
        EditError::defect(err.to_string(), err.from)
    }
}

/// `text[from..to]`, or why that is not a stretch of `text`.
pub fn between(text: &str, from: usize, to: usize) -> Result<&str, OutOfText> {
    text.get(from..to).ok_or(OutOfText {
        from,
        to,
        len: text.len(),
    })
}

/// `text[..at]`, as [`between`].
pub(super) fn before(text: &str, at: usize) -> Result<&str, OutOfText> {
    between(text, 0, at)
}

/// `text[at..]`, as [`between`].
pub(super) fn after(text: &str, at: usize) -> Result<&str, OutOfText> {
    between(text, at, text.len())
}

pub(super) fn key_text<'a>(key: &'a Node<'_>) -> &'a str {
    key.as_str().unwrap_or_default()
}

/// Byte offset of the start of the line holding `pos`.
pub fn line_start(text: &str, pos: usize) -> Result<usize, EditError> {
    // Lines are short: a plain loop back finds the line break sooner than
    // a searcher made for long texts.
    Ok(before(text, pos)?
        .bytes()
        .rposition(|b| b == b'\n')
        .map_or(0, |i| i + 1))
}

/// Column of `pos` in bytes (indentation is ASCII spaces).
pub(super) fn column(text: &str, pos: usize) -> Result<usize, EditError> {
    Ok(pos - line_start(text, pos)?)
}

/// Whether only spaces stand before `pos` on its line.
pub(super) fn starts_line(text: &str, pos: usize) -> Result<bool, EditError> {
    Ok(between(text, line_start(text, pos)?, pos)?
        .bytes()
        .all(|b| b == b' '))
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
pub(super) fn block_header(text: &str, start: usize) -> Result<Option<BlockHeader>, EditError> {
    let mut line = line_start(text, start)?;
    if starts_line(text, start)? {
        loop {
            let Some(previous) = line.checked_sub(1) else {
                return Ok(None);
            };
            line = line_start(text, previous)?;
            if !line_text(text, line)?.trim().is_empty() {
                break;
            }
        }
    }
    let whole = line_text(text, line)?;
    // Past a comment: ` #` starts one; a header has no other `#`.
    let code = match whole.find(" #") {
        Some(hash) => before(whole, hash)?,
        None => whole,
    };
    let code = code.trim_end();
    let word = code.rfind([' ', '\t']).map_or(0, |i| i + 1);
    if !after(code, word)?.starts_with(['|', '>']) {
        return Ok(None);
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
    Ok(Some(BlockHeader {
        indicator: line + word,
        indicator_end: line + code.len(),
        line_end: line + whole.len(),
        owner_column: owner,
    }))
}

/// The line starting at `start`, without its line break.
pub(super) fn line_text(text: &str, start: usize) -> Result<&str, EditError> {
    let line = after(text, start)?;
    let line = line.split_once('\n').map_or(line, |(line, _)| line);
    Ok(line.strip_suffix('\r').unwrap_or(line))
}

/// Move a line-start position `at` up over the comment lines right above it.
pub(super) fn above_comments(text: &str, mut at: usize) -> Result<usize, EditError> {
    while at > 0 {
        let previous = line_start(text, at - 1)?;
        if !between(text, previous, at)?.trim_start().starts_with('#') {
            break;
        }
        at = previous;
    }
    Ok(at)
}

/// The start of the line after the one where a node ending at `end` ends.
/// Block scalars end at the indentation of the next line: that line is the answer.
pub(super) fn line_end_after(text: &str, end: usize) -> Result<usize, EditError> {
    let start = line_start(text, end)?;
    if end > start
        && between(text, start, end)?
            .bytes()
            .all(|b| b == b' ' || b == b'\t')
    {
        return Ok(start);
    }
    if end == start && end > 0 {
        return Ok(start);
    }
    Ok(after(text, end)?
        .find('\n')
        .map_or(text.len(), |i| end + i + 1))
}

/// The `-` of a block sequence item whose content starts at `item_start`:
/// before it on its line, or at the end of an earlier line, past any anchor,
/// tag or comment written after the dash (`- &a`, `- # note`).
pub(super) fn dash_of(text: &str, item_start: usize) -> Result<Option<usize>, EditError> {
    let mut end = item_start;
    loop {
        let start = line_start(text, end)?;
        let mut before = between(text, start, end)?;
        if end != item_start {
            // An earlier line: ignore a trailing comment.
            if let Some(hash) = before
                .find(" #")
                .or_else(|| before.trim_start().starts_with('#').then_some(0))
            {
                before = self::before(before, hash)?;
            }
        }
        let mut trimmed = before.trim_end();
        // Skip node properties standing between the dash and the content
        // (the last word, and all of it when it is the only one).
        loop {
            let (rest, last) = trimmed.rsplit_once(' ').unwrap_or(("", trimmed));
            if !last.starts_with(['&', '!']) {
                break;
            }
            trimmed = rest.trim_end();
        }
        if trimmed.ends_with('-') && (trimmed == "-" || trimmed.ends_with(" -")) {
            return Ok(Some(start + trimmed.len() - 1));
        }
        if !trimmed.trim_start().is_empty() || start == 0 {
            return Ok(None);
        }
        end = start - 1;
    }
}

/// Where a null written after a block mapping's key stands (`key: ~`,
/// `key: null  # c`): from just past the key's `:` to the end of the null,
/// when the key starts its line and nothing but spaces or a comment follows
/// the null on it. Filling the key with lines under it takes that text out
/// (the key's line and its comment stay); emptying it puts it back.
/// An error for nodes whose offsets are not in `text` (not parsed from it).
pub fn null_after_key(
    text: &str,
    key: &Node<'_>,
    value: &Node<'_>,
) -> Result<Option<(usize, usize)>, EditError> {
    let NodeKind::Scalar {
        text: word,
        style: ScalarStyle::Plain,
        tag: None,
    } = &value.kind
    else {
        return Ok(None);
    };
    if value.anchor.is_some()
        || !matches!(word.as_ref(), "~" | "null" | "Null" | "NULL")
        || between(text, value.start, value.end)? != word.as_ref()
        || !starts_line(text, key.start)?
    {
        return Ok(None);
    }
    let gap = between(text, key.end, value.start)?;
    let colon = gap.trim_start_matches([' ', '\t']);
    let Some(spaces) = colon.strip_prefix(':') else {
        return Ok(None);
    };
    if spaces.is_empty() || !spaces.bytes().all(|b| b == b' ' || b == b'\t') {
        return Ok(None);
    }
    let rest = after(text, value.end)?;
    let rest = rest.split_once('\n').map_or(rest, |(line, _)| line);
    let rest = rest.trim_end_matches('\r').trim_start_matches([' ', '\t']);
    if !(rest.is_empty() || rest.starts_with('#')) {
        return Ok(None);
    }
    Ok(Some((value.start - spaces.len(), value.end)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A range that is not a stretch of the text (past its end, reversed,
    /// inside a character) is an error naming it and the text's length,
    /// never an empty string; so is what a helper reads through one.
    #[test]
    fn a_range_not_in_the_text_is_an_error_naming_it() {
        // `é` is bytes 3..5.
        let text = "a: é\n";
        assert_eq!(between(text, 0, 3), Ok("a: "));
        assert_eq!(before(text, 5), Ok("a: é"));
        assert_eq!(after(text, 5), Ok("\n"));
        assert_eq!(between(text, 6, 6), Ok(""));
        for (read, from, to) in [
            (between(text, 2, 9), 2, 9),
            (between(text, 5, 2), 5, 2),
            (between(text, 0, 4), 0, 4),
            (before(text, 7), 0, 7),
            (before(text, 4), 0, 4),
            (after(text, 4), 4, 6),
            (after(text, 8), 8, 6),
        ] {
            let err = read.expect_err("not a stretch of the text");
            assert_eq!(err, OutOfText { from, to, len: 6 });
            let said = EditError::from(err);
            assert!(said.defect, "{said:?}");
            assert!(
                said.message.starts_with(&format!("bytes {from}..{to} "))
                    && said.message.contains("(6 bytes long)"),
                "{}",
                said.message
            );
        }
        // Once the start of the text, now an error.
        let err = line_start(text, 40).expect_err("past the end");
        assert!(err.message.starts_with("bytes 0..40 "), "{}", err.message);
        assert!(starts_line(text, 4).is_err());
        assert!(line_end_after(text, 4).is_err());
        assert!(dash_of(text, 9).is_err());
    }
}

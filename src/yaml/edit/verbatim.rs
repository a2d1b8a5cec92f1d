//! Items written again as they were: a block-sequence item's own lines,
//! kept with its value, so that an edit that puts that value back (uninject
//! restoring a pod's own container that an injection merged away and moved)
//! writes the original comments, quoting and layout rather than a new
//! rendering of the value.

use serde_json::Value;

use super::EditError;
use super::text::{between, dash_of, line_end_after, line_start, starts_line};
use crate::yaml::node::{Node, NodeKind};

/// The column of an entry of a flow mapping: written where its mapping's
/// entries are, whatever their column.
pub const FLOW: usize = usize::MAX;

/// A value and the lines that wrote it as a block-sequence item.
#[derive(Debug, Clone, PartialEq)]
pub struct Verbatim {
    /// The column of the item's `-`: the text is used only at that column.
    pub col: usize,
    pub value: Value,
    /// Whole lines, from the indentation before the `-` through the line
    /// break after the item's last line.
    pub text: String,
}

impl Verbatim {
    /// Item `index` of the block sequence `seq`, parsed from `text`: `None`
    /// when the sequence is in flow style, the item does not start its line,
    /// or its value cannot be read; an error when the nodes' offsets are not
    /// in `text` (not parsed from it).
    pub fn of_item(
        text: &str,
        seq: &Node<'_>,
        index: usize,
    ) -> Result<Option<Verbatim>, EditError> {
        let NodeKind::Seq { items, flow: false } = &seq.kind else {
            return Ok(None);
        };
        let Some(item) = items.get(index) else {
            return Ok(None);
        };
        let dash = match dash_of(text, item.start)? {
            Some(dash) if starts_line(text, dash)? => dash,
            _ => return Ok(None),
        };
        let from = line_start(text, dash)?;
        let to = line_end_after(text, item.end)?;
        let mut lines = between(text, from, to)?.to_string();
        if !lines.ends_with('\n') {
            // The last line of a file without a final line break: written
            // back elsewhere, it gets one (at the end, the edit takes it off).
            if to < text.len() {
                return Ok(None);
            }
            lines.push_str(if text.contains("\r\n") { "\r\n" } else { "\n" });
        }
        let Ok(value) = crate::yaml::value::to_value(item) else {
            return Ok(None);
        };
        Ok(Some(Verbatim {
            col: dash - from,
            value,
            text: lines,
        }))
    }

    /// The entry `key` of the block mapping `map`, parsed from `text`, as
    /// the lines that write it: `None` when the key does not start its
    /// line or its value cannot be read. Its value is a mapping of that one
    /// key.
    /// In a flow mapping, the entry's own text (`key: value`, at column
    /// [`FLOW`]). An error when the nodes' offsets are not in `text`.
    pub fn of_entry(text: &str, map: &Node<'_>, key: &str) -> Result<Option<Verbatim>, EditError> {
        let NodeKind::Map { entries, flow } = &map.kind else {
            return Ok(None);
        };
        let Some((k, v)) = entries.iter().find(|(k, _)| k.as_str() == Some(key)) else {
            return Ok(None);
        };
        if *flow {
            let entry = between(text, k.start, v.end)?;
            return Ok(Verbatim::entry_from_text(entry.to_string()));
        }
        if !starts_line(text, k.start)? {
            return Ok(None);
        }
        let from = line_start(text, k.start)?;
        let to = line_end_after(text, v.end)?;
        let lines = between(text, from, to)?;
        if !lines.ends_with('\n') {
            return Ok(None);
        }
        Ok(Verbatim::entry_from_text(lines.to_string()))
    }

    /// The lines `text` as one block-mapping entry: `None` unless they read
    /// as exactly that (a mapping of one key, in block style, at the column
    /// of the first line, ending with a line break).
    /// Without a final line break, the text of an entry of a flow mapping
    /// (`key: value`), at column [`FLOW`].
    pub fn entry_from_text(text: String) -> Option<Verbatim> {
        if !text.ends_with('\n') {
            let braced = format!("{{{text}}}");
            let documents = crate::yaml::parse_stream(&braced).ok()?;
            let [document] = documents.as_slice() else {
                return None;
            };
            let root = document.root.as_ref()?;
            match &root.kind {
                NodeKind::Map {
                    entries,
                    flow: true,
                } if entries.len() == 1 => {}
                _ => return None,
            }
            let value = crate::yaml::value::to_value(root).ok()?;
            return Some(Verbatim {
                col: FLOW,
                value,
                text,
            });
        }
        // The first line's indentation, and what follows it.
        let indented = text.trim_start_matches(' ');
        let col = text.len() - indented.len();
        if indented.starts_with(['-', '#', '\n', '\r']) {
            return None;
        }
        let documents = crate::yaml::parse_stream(&text).ok()?;
        let [document] = documents.as_slice() else {
            return None;
        };
        let root = document.root.as_ref()?;
        match &root.kind {
            NodeKind::Map {
                entries,
                flow: false,
            } if entries.len() == 1 => {}
            _ => return None,
        }
        let value = crate::yaml::value::to_value(root).ok()?;
        Some(Verbatim { col, value, text })
    }

    /// The lines `text` as one block-sequence item: `None` unless they read
    /// as exactly that (a sequence of one item, in block style, at the
    /// column of the first line's `-`, ending with a line break).
    pub fn from_text(text: String) -> Option<Verbatim> {
        let col = text.bytes().take_while(|&b| b == b' ').count();
        if text.as_bytes().get(col) != Some(&b'-') || !text.ends_with('\n') {
            return None;
        }
        let documents = crate::yaml::parse_stream(&text).ok()?;
        let [document] = documents.as_slice() else {
            return None;
        };
        let root = document.root.as_ref()?;
        match &root.kind {
            NodeKind::Seq { items, flow: false } if items.len() == 1 => {}
            _ => return None,
        }
        let value = match crate::yaml::value::to_value(root).ok()? {
            Value::Array(mut items) => items.pop()?,
            _ => return None,
        };
        Some(Verbatim { col, value, text })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq_of<'t>(documents: &'t [crate::yaml::Document<'t>]) -> &'t Node<'t> {
        let root = documents
            .first()
            .and_then(|d| d.root.as_ref())
            .expect("root");
        root.get("containers").expect("containers")
    }

    #[test]
    fn an_item_keeps_its_comments_and_quoting() {
        let text = "containers:\n  - name: app\n  - name: istio-proxy\n    # why\n    image: \"auto\"\n    args: [\"-c\", x]\nvolumes: []\n";
        let documents = crate::yaml::parse_stream(text).expect("parse");
        let item = Verbatim::of_item(text, seq_of(&documents), 1)
            .expect("offsets in the text")
            .expect("item");
        assert_eq!(item.col, 2);
        assert_eq!(
            item.text,
            "  - name: istio-proxy\n    # why\n    image: \"auto\"\n    args: [\"-c\", x]\n"
        );
        assert_eq!(
            item.value,
            serde_json::json!({"name": "istio-proxy", "image": "auto", "args": ["-c", "x"]})
        );
        // Read back from its text, it is the same.
        assert_eq!(Verbatim::from_text(item.text.clone()), Some(item));
    }

    #[test]
    fn only_block_items_that_end_their_lines() {
        let flow = "containers: [{name: a}]\n";
        let documents = crate::yaml::parse_stream(flow).expect("parse");
        assert_eq!(Verbatim::of_item(flow, seq_of(&documents), 0), Ok(None));
        // At the end of a file without a final line break, it gets one.
        let unended = "containers:\n- name: a";
        let documents = crate::yaml::parse_stream(unended).expect("parse");
        let item = Verbatim::of_item(unended, seq_of(&documents), 0)
            .expect("offsets in the text")
            .expect("item");
        assert_eq!(item.text, "- name: a\n");
        assert_eq!(Verbatim::from_text("name: a\n".into()), None);
        assert_eq!(Verbatim::from_text("- a\n- b\n".into()), None);
        assert_eq!(Verbatim::from_text("- [a\n".into()), None);
    }
}

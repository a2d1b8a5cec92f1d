//! What aliases stand for once expanded, and how much of it a run takes.
//!
//! An alias costs nothing in the text (`*a`) but everything its anchor
//! holds wherever the document is turned into a value, written as JSON or
//! as YAML in block style, or held in a report. The parser adds up, for
//! each alias, the nodes and the bytes its anchor would write out there,
//! indented as deep as the alias stands (`-o json` and kubectl's block
//! style indent every line), and refuses a document, or an input, whose
//! aliases stand for more than [`MAX_ALIAS_NODES`] nodes or
//! [`MAX_ALIAS_BYTES`] bytes, before anything is expanded. The resolver
//! (`value.rs`) keeps to the same limits for what it expands.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

/// Most nodes the aliases of one document, or of all the documents of
/// one input, may stand for once expanded.
pub const MAX_ALIAS_NODES: u64 = 1_000_000;

/// Most bytes the aliases of one document, or of all the documents of one
/// input, may stand for once written out (32 MiB): real manifests use
/// aliases for a few labels or a shared container, kilobytes; a "billion
/// laughs" stands for gigabytes.
pub const MAX_ALIAS_BYTES: u64 = 32 << 20;

/// The limits as messages name them.
pub const MAX_ALIAS_BYTES_TEXT: &str = "32 MiB";

/// How much a node stands for once its aliases are expanded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Size {
    /// Nodes, itself included.
    pub nodes: u64,
    /// Bytes written out at depth 0: a scalar its text, quotes and a
    /// separator; a collection its brackets and what it holds.
    pub bytes: u64,
    /// The depths of its nodes below it, added up: each is indented by two
    /// spaces a level when written out.
    pub depths: u64,
}

impl Size {
    /// A scalar of `len` bytes.
    pub fn scalar(len: usize) -> Self {
        Size {
            nodes: 1,
            bytes: (len as u64).saturating_add(3),
            depths: 0,
        }
    }

    /// An empty collection.
    pub fn collection() -> Self {
        Size {
            nodes: 1,
            bytes: 2,
            depths: 0,
        }
    }

    /// Add `child`, one level below this node.
    pub fn add_child(&mut self, child: Size) {
        self.nodes = self.nodes.saturating_add(child.nodes);
        self.bytes = self.bytes.saturating_add(child.bytes);
        self.depths = self
            .depths
            .saturating_add(child.depths)
            .saturating_add(child.nodes);
    }

    /// Bytes it writes out at `depth`, every line indented by two spaces a level.
    pub fn written_at(&self, depth: usize) -> u64 {
        let indent = (depth as u64)
            .saturating_mul(self.nodes)
            .saturating_add(self.depths);
        self.bytes.saturating_add(indent.saturating_mul(2))
    }

    /// The size of `value` as [`Size::scalar`] and [`Size::collection`] count it.
    pub fn of_value(value: &Value) -> Self {
        match value {
            Value::Null => Size::scalar(4),
            Value::Bool(b) => Size::scalar(if *b { 4 } else { 5 }),
            Value::Number(n) => Size::scalar(n.to_string().len()),
            Value::String(s) => Size::scalar(s.len()),
            Value::Array(items) => {
                let mut size = Size::collection();
                for item in items {
                    size.add_child(Size::of_value(item));
                }
                size
            }
            Value::Object(map) => {
                let mut size = Size::collection();
                for (key, item) in map {
                    size.add_child(Size::scalar(key.len()));
                    size.add_child(Size::of_value(item));
                }
                size
            }
        }
    }
}

/// What aliases stand for so far: nodes and bytes written out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Expanded {
    pub nodes: u64,
    pub bytes: u64,
}

impl Expanded {
    /// With `more` added.
    pub fn plus(self, more: Expanded) -> Self {
        Expanded {
            nodes: self.nodes.saturating_add(more.nodes),
            bytes: self.bytes.saturating_add(more.bytes),
        }
    }

    /// Why this is too much, if it is: over [`MAX_ALIAS_NODES`] or [`MAX_ALIAS_BYTES`].
    pub fn too_much(&self) -> Option<String> {
        if self.nodes > MAX_ALIAS_NODES {
            Some(format!("more than {MAX_ALIAS_NODES} nodes"))
        } else if self.bytes > MAX_ALIAS_BYTES {
            Some(format!("more than {MAX_ALIAS_BYTES_TEXT} written out"))
        } else {
            None
        }
    }
}

/// What the aliases of every document of one input (all the sources a run
/// reads together) stand for: each document counted once, however often it
/// is read (a run may read its input twice, in parts on several threads).
/// Clones count together.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    inner: Arc<Mutex<Counted>>,
}

#[derive(Debug, Default)]
struct Counted {
    /// By document: where its text is in memory, and where it starts in that text.
    documents: HashMap<(usize, usize), Expanded>,
    total: Expanded,
}

/// A document as a [`Tally`] knows it: its stream's text and where it starts.
pub fn document_key(text: &str, start: usize) -> (usize, usize) {
    (text.as_ptr() as usize, start)
}

impl Tally {
    /// What the documents other than `key` stand for.
    pub fn others(&self, key: (usize, usize)) -> Expanded {
        let counted = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let own = counted.documents.get(&key).copied().unwrap_or_default();
        Expanded {
            nodes: counted.total.nodes.saturating_sub(own.nodes),
            bytes: counted.total.bytes.saturating_sub(own.bytes),
        }
    }

    /// Count what document `key` stands for (once), and give the total.
    pub fn count(&self, key: (usize, usize), expanded: Expanded) -> Expanded {
        let mut counted = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let Counted { documents, total } = &mut *counted;
        if let std::collections::hash_map::Entry::Vacant(entry) = documents.entry(key) {
            entry.insert(expanded);
            *total = total.plus(expanded);
        }
        *total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_count_what_is_written_out_indented() {
        // [x, [y]] at depth 0: `[`, `"x",` and `[` a level in, `"y",` two.
        let mut inner = Size::collection();
        inner.add_child(Size::scalar(1));
        let mut outer = Size::collection();
        outer.add_child(Size::scalar(1));
        outer.add_child(inner);
        assert_eq!(outer.nodes, 4);
        assert_eq!(outer.bytes, 2 + 4 + 2 + 4);
        assert_eq!(outer.depths, 1 + 1 + 2);
        assert_eq!(outer.written_at(0), 12 + 8);
        assert_eq!(outer.written_at(3), 12 + 2 * (12 + 4));
        let value = serde_json::json!(["x", ["y"]]);
        assert_eq!(Size::of_value(&value), outer);
    }

    #[test]
    fn a_tally_counts_each_document_once() {
        let tally = Tally::default();
        let text = "a: 1\n---\nb: 2\n";
        let one = Expanded {
            nodes: 3,
            bytes: 10,
        };
        assert_eq!(tally.count(document_key(text, 0), one), one);
        // Read again: the same document, not counted again.
        assert_eq!(tally.count(document_key(text, 0), one), one);
        let two = tally.clone().count(document_key(text, 5), one);
        assert_eq!(two, one.plus(one));
        assert_eq!(tally.others(document_key(text, 5)), one);
        assert_eq!(tally.others(document_key(text, 9)), two);
        assert_eq!(Expanded { nodes: 0, bytes: 0 }.too_much(), None);
        let many = Expanded {
            nodes: MAX_ALIAS_NODES + 1,
            bytes: 0,
        };
        assert_eq!(many.too_much().as_deref(), Some("more than 1000000 nodes"));
        let big = Expanded {
            nodes: 1,
            bytes: MAX_ALIAS_BYTES + 1,
        };
        assert_eq!(
            big.too_much().as_deref(),
            Some("more than 32 MiB written out")
        );
    }
}

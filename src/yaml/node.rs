//! The span-carrying syntax tree that the renderer edits.
//!
//! Every node knows the byte range it occupies in the source text, whether a
//! collection is written in flow (`{}`/`[]`) or block style, and its anchor.
//! Nothing is re-serialised from this tree: it only tells the renderer where to
//! splice.

use std::borrow::Cow;

pub use saphyr_parser::ScalarStyle;

/// A node of a YAML document with its place in the source text.
#[derive(Debug, Clone)]
pub struct Node<'a> {
    /// Byte offset of the node's first character (after any anchor or tag).
    pub start: usize,
    /// Byte offset just past the node's last character. For block collections
    /// this is the end of their last child.
    pub end: usize,
    /// Anchor id assigned by the parser, if the node carries `&name`.
    pub anchor: Option<usize>,
    /// The node's content.
    pub kind: NodeKind<'a>,
}

#[derive(Debug, Clone)]
pub enum NodeKind<'a> {
    Scalar {
        text: Cow<'a, str>,
        style: ScalarStyle,
        /// The tag, when one is written: YAML's own by its suffix (`str`,
        /// `int`, also when written `!<tag:yaml.org,2002:int>`), any other
        /// as `!` and its handle and suffix (`!!custom` for `!custom`).
        tag: Option<String>,
    },
    Map {
        entries: Vec<(Node<'a>, Node<'a>)>,
        flow: bool,
    },
    Seq {
        items: Vec<Node<'a>>,
        flow: bool,
    },
    /// `*name`, referring to an earlier anchor id.
    Alias(usize),
}

impl Node<'_> {
    /// The text of a scalar node, if it is one.
    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            NodeKind::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// The value of `key` in a mapping node (local entries only, not merges).
    pub fn get(&self, key: &str) -> Option<&Self> {
        match &self.kind {
            NodeKind::Map { entries, .. } => entries
                .iter()
                .find(|(k, _)| k.as_str() == Some(key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// The node at `path` below this one: mapping keys (local entries
    /// only), and sequence indexes in decimal.
    pub fn at<S: AsRef<str>>(&self, path: &[S]) -> Option<&Self> {
        path.iter().try_fold(self, |node, step| match &node.kind {
            NodeKind::Seq { items, .. } => items.get(step.as_ref().parse::<usize>().ok()?),
            _ => node.get(step.as_ref()),
        })
    }

    /// True for a plain empty scalar, `~` or `null`: what an empty document holds.
    pub fn is_null(&self) -> bool {
        matches!(&self.kind, NodeKind::Scalar { text, style: ScalarStyle::Plain, tag: None }
            if matches!(text.as_ref(), "" | "~" | "null" | "Null" | "NULL"))
    }

    /// True for a `{}` or `[]` collection.
    pub fn is_flow(&self) -> bool {
        matches!(
            &self.kind,
            NodeKind::Map { flow: true, .. } | NodeKind::Seq { flow: true, .. }
        )
    }
}

//! Blocks of new lines already written, kept so that the same block is
//! written once: a run of alike workloads adds the same proxy, init container
//! and volumes to each, and their text is written once and shared by every
//! edit that adds it (see [`Text::Shared`]).
//!
//! Lifetime: one cache per core, carried from one document to the next for
//! the whole run (the pipeline's scratch); it holds at most `BLOCKS_MAX`
//! blocks, past which new ones are written each time and not kept.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::Arc;

use serde_json::Value;

use crate::yaml::edit::Text;
use crate::yaml::emit::Layout;

/// Blocks of lines already written, by layout, column, key and value. One
/// cache serves every document a thread renders.
#[derive(Debug, Default)]
pub struct Blocks {
    written: Vec<(Block, Arc<str>)>,
    /// Indexes into `written`, by hash.
    by_hash: HashMap<u64, Vec<usize>>,
    /// The blocks used last, most recent first: a run of alike workloads asks
    /// for the same few again and again, and comparing with them is cheaper
    /// than hashing the value.
    recent: Vec<usize>,
}

/// How many recently used blocks are tried before hashing. A workload asks
/// for five or six (the proxy and init containers, volumes, mounts): with
/// fewer kept, each pushes out one the next workload wants (measured: 8
/// beats 4 and 16).
const RECENT_MAX: usize = 8;

/// What a block's text depends on.
#[derive(Debug, PartialEq)]
struct Block {
    layout: Layout,
    col: usize,
    /// `None` for a sequence item.
    key: Option<String>,
    value: Value,
}

/// Enough distinct blocks for the proxies of a large repository; past this,
/// blocks are written each time.
const BLOCKS_MAX: usize = 4096;

impl Blocks {
    /// The text of the block `key: value` (or the item `value`, without a key)
    /// at `col`, written by `write` unless an equal block was.
    pub(crate) fn text(
        &mut self,
        layout: Layout,
        col: usize,
        key: Option<&str>,
        value: &Value,
        write: impl FnOnce() -> String,
    ) -> Text {
        // Small values cost less to write than to look up.
        if !is_large(value) {
            // Kept until the output is written: without spare room.
            let mut text = write();
            text.shrink_to_fit();
            return Text::Own(text);
        }
        let same = |b: &Block| {
            b.layout == layout
                && b.col == col
                && b.key.as_deref() == key
                && crate::yaml::value::same_in_order(&b.value, value)
        };
        let recent = self
            .recent
            .iter()
            .position(|&i| self.written.get(i).is_some_and(|(block, _)| same(block)));
        if let Some(at) = recent {
            let index = self.recent.remove(at);
            self.recent.insert(0, index);
            if let Some((_, text)) = self.written.get(index) {
                return Text::Shared(text.clone());
            }
        }
        // foldhash: fast, and flooding is no concern for text the tool wrote.
        let mut hasher = foldhash::fast::FixedState::with_seed(0).build_hasher();
        (col, key, layout.indent, layout.seq_indent).hash(&mut hasher);
        (layout.dash_gap, layout.json, layout.newline).hash(&mut hasher);
        hash_value(value, &mut hasher);
        let hash = hasher.finish();
        let found = self.by_hash.get(&hash).and_then(|list| {
            list.iter()
                .copied()
                .find(|&i| self.written.get(i).is_some_and(|(block, _)| same(block)))
        });
        let (index, text) = match found.and_then(|i| Some((i, self.written.get(i)?.1.clone()))) {
            Some(hit) => hit,
            None => {
                let text: Arc<str> = write().into();
                if self.written.len() >= BLOCKS_MAX {
                    return Text::Shared(text);
                }
                let block = Block {
                    layout,
                    col,
                    key: key.map(str::to_string),
                    value: value.clone(),
                };
                self.written.push((block, text.clone()));
                let index = self.written.len() - 1;
                self.by_hash.entry(hash).or_default().push(index);
                (index, text)
            }
        };
        self.recent.retain(|&i| i != index);
        self.recent.insert(0, index);
        self.recent.truncate(RECENT_MAX);
        Text::Shared(text)
    }
}

/// A collection with more than a handful of entries.
fn is_large(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.len() > 4 || map.values().any(|v| v.is_object() || v.is_array()),
        Value::Array(items) => {
            items.len() > 4 || items.iter().any(|v| v.is_object() || v.is_array())
        }
        _ => false,
    }
}

fn hash_value(value: &Value, hasher: &mut impl Hasher) {
    match value {
        Value::Null => hasher.write_u8(0),
        Value::Bool(b) => hasher.write_u8(1 + u8::from(*b)),
        Value::Number(n) => {
            hasher.write_u8(3);
            match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => hasher.write_u64(u),
                (None, Some(i), _) => hasher.write_i64(i),
                (None, None, f) => hasher.write_u64(f.map_or(0, f64::to_bits)),
            }
        }
        Value::String(s) => {
            hasher.write_u8(4);
            s.hash(hasher);
        }
        Value::Array(items) => {
            hasher.write_u8(5);
            hasher.write_usize(items.len());
            items.iter().for_each(|item| hash_value(item, hasher));
        }
        Value::Object(map) => {
            hasher.write_u8(6);
            hasher.write_usize(map.len());
            for (k, v) in map {
                k.hash(hasher);
                hash_value(v, hasher);
            }
        }
    }
}

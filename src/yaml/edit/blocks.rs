//! Blocks of new lines already written, kept so that the same block is
//! written once: a run of alike workloads adds the same proxy, init container
//! and volumes to each, and their text is written once and shared by every
//! edit that adds it (see [`Text::Shared`]).
//!
//! Alike is not always the same: Istio's proxy names its workload in two of
//! its env values. A block that differs from one kept only in its one-line
//! strings is the kept one's text, shared, with the strings that differ
//! written in place of the kept ones (the writer writes a one-line string the
//! same wherever it stands; see [`Text::Spliced`]): neither written again nor
//! copied.
//!
//! Lifetime: one cache per worker, carried from one document to the next for
//! the whole run (the pipeline's scratch); it holds at most `BLOCKS_MAX`
//! blocks, past which new ones are written each time and not kept. One
//! made by [`Blocks::keeping_nothing`] (the run's reference mode) writes
//! every block each time.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::Arc;

use serde_json::Value;

use super::{Spliced, Text};
use crate::yaml::emit::{Layout, push_block_scalar};

/// Blocks of lines already written, by layout, column, key and value. One
/// cache serves every document a thread renders.
#[derive(Debug, Default)]
pub struct Blocks {
    written: Vec<Written>,
    /// Indexes into `written`, by the hash of their shape (see [`hash_shape`]).
    by_shape: HashMap<u64, Vec<usize>>,
    /// The blocks used last, most recent first: a run of alike workloads asks
    /// for the same few again and again, and comparing with them is cheaper
    /// than hashing the value.
    recent: Vec<usize>,
    /// The small value last written under each key, at each column and
    /// layout: most come out the same for every workload (the mesh's status
    /// annotation, uninject's record), and comparing costs less than writing.
    small: HashMap<String, Vec<Small>, foldhash::fast::FixedState>,
    /// Keep nothing: every block written each time.
    keeping_nothing: bool,
}

/// A small value written under a key, and its text.
#[derive(Debug)]
struct Small {
    layout: Layout,
    col: usize,
    value: Value,
    text: Arc<str>,
}

/// How many keys `small` keeps, and how many columns and layouts for each;
/// past these, small values are written each time.
const SMALL_KEYS_MAX: usize = 1024;
const SMALL_PLACES_MAX: usize = 8;

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

/// A block kept, its text, and where its one-line strings are written in it.
#[derive(Debug)]
struct Written {
    block: Block,
    text: Arc<str>,
    /// Where each of the block's strings is written in `text`, in order
    /// (`None` for a string of several lines, never written anew); found
    /// the first time a block of its shape with other strings is asked
    /// for. `None` inside: they cannot be found.
    spans: Option<Option<Spans>>,
}

/// Where each string of a block is written in its text, by the strings'
/// order: `None` for a string of several lines.
type Spans = Vec<Option<(usize, usize)>>;

/// Enough distinct blocks for the proxies of a large repository; past this,
/// blocks are written each time.
const BLOCKS_MAX: usize = 4096;

/// Stands for a one-line string where the gaps between strings are found
/// (a block whose strings hold it is written whole: see `crate::sentinel`).
use crate::sentinel::GAP;

impl Blocks {
    /// Blocks that keep nothing: each written each time, the reference the
    /// sharing is tested against.
    pub fn keeping_nothing() -> Self {
        Blocks {
            keeping_nothing: true,
            ..Blocks::default()
        }
    }

    /// The text of the block `key: value` (or the item `value`, without a
    /// key) at `col`, as `layout` writes it.
    pub(crate) fn text(
        &mut self,
        layout: Layout,
        col: usize,
        key: Option<&str>,
        value: &Value,
    ) -> Text {
        let write = |value: &Value| match key {
            Some(key) => layout.block_entry(col, key, value),
            None => layout.block_item(col, value),
        };
        if self.keeping_nothing {
            return Text::Own(write(value));
        }
        // Small values cost less to write than to look up, but not than
        // comparing with the one written last under their key.
        if !is_large(value) {
            return match key {
                Some(key) => self.small_entry(layout, col, key, value),
                None => {
                    // Kept until the output is written: without spare room.
                    let mut text = write(value);
                    text.shrink_to_fit();
                    Text::Own(text)
                }
            };
        }
        let placed = |b: &Block| b.layout == layout && b.col == col && b.key.as_deref() == key;
        // A block of the same shape, the same one if there is.
        let mut alike = None;
        let recent = self.recent.iter().position(|&i| {
            let Some(w) = self.written.get(i) else {
                return false;
            };
            match placed(&w.block).then(|| compare(&w.block.value, value)) {
                Some(Compared::Same) => true,
                Some(Compared::Alike(differ)) => {
                    alike.get_or_insert((i, differ));
                    false
                }
                _ => false,
            }
        });
        if let Some(at) = recent {
            let index = self.recent.remove(at);
            self.recent.insert(0, index);
            if let Some(w) = self.written.get(index) {
                return Text::Shared(w.text.clone());
            }
        }
        // A recent block alike is as good as any: no hash needed.
        if let Some((i, differ)) = &alike {
            if let Some(text) = self.fill(*i, differ, &write) {
                return text;
            }
        }
        // foldhash: fast, and flooding is no concern for text the tool wrote.
        let mut hasher = foldhash::fast::FixedState::with_seed(0).build_hasher();
        (col, key, layout.indent, layout.seq_indent).hash(&mut hasher);
        (layout.dash_gap, layout.json, layout.newline).hash(&mut hasher);
        hash_shape(value, &mut hasher);
        let hash = hasher.finish();
        if alike.is_none() {
            for &i in self.by_shape.get(&hash).into_iter().flatten() {
                let Some(w) = self.written.get(i).filter(|w| placed(&w.block)) else {
                    continue;
                };
                match compare(&w.block.value, value) {
                    Compared::Same => {
                        let text = w.text.clone();
                        self.use_recent(i);
                        return Text::Shared(text);
                    }
                    Compared::Alike(differ) => {
                        alike.get_or_insert((i, differ));
                    }
                    Compared::Other => {}
                }
            }
            if let Some((i, differ)) = &alike {
                if let Some(text) = self.fill(*i, differ, &write) {
                    return text;
                }
            }
        }
        let text: Arc<str> = write(value).into();
        if self.written.len() >= BLOCKS_MAX {
            return Text::Shared(text);
        }
        self.written.push(Written {
            block: Block {
                layout,
                col,
                key: key.map(str::to_string),
                value: value.clone(),
            },
            text: text.clone(),
            spans: None,
        });
        let index = self.written.len() - 1;
        self.by_shape.entry(hash).or_default().push(index);
        self.use_recent(index);
        Text::Shared(text)
    }

    /// The text of the small value `key: value` at `col`: the last one
    /// written under `key` there when it is the same value.
    fn small_entry(&mut self, layout: Layout, col: usize, key: &str, value: &Value) -> Text {
        let placed = |s: &Small| s.layout == layout && s.col == col;
        let room = self.small.len() < SMALL_KEYS_MAX;
        let kept = self.small.get_mut(key);
        if let Some(small) = kept.as_ref().and_then(|k| k.iter().find(|s| placed(s))) {
            // Not `==`: mappings equal in another order are written otherwise.
            if compare(&small.value, value) == Compared::Same {
                return Text::Shared(small.text.clone());
            }
        }
        let text: Arc<str> = layout.block_entry(col, key, value).into();
        let small = Small {
            layout,
            col,
            value: value.clone(),
            text: text.clone(),
        };
        match kept {
            Some(kept) => match kept.iter().position(placed) {
                Some(at) => {
                    if let Some(old) = kept.get_mut(at) {
                        *old = small;
                    }
                }
                None if kept.len() < SMALL_PLACES_MAX => kept.push(small),
                None => {}
            },
            None if room => {
                self.small.insert(key.to_string(), vec![small]);
            }
            None => {}
        }
        Text::Shared(text)
    }

    fn use_recent(&mut self, index: usize) {
        self.recent.retain(|&i| i != index);
        self.recent.insert(0, index);
        self.recent.truncate(RECENT_MAX);
    }

    /// The text of a value of the same shape as the kept block `index`,
    /// whose one-line strings `differ` (by their place among them) from the
    /// block's: the block's text, shared, with those strings as the parts
    /// written in place of its own.
    fn fill(
        &mut self,
        index: usize,
        differ: &[(usize, &str)],
        write: &impl Fn(&Value) -> String,
    ) -> Option<Text> {
        let written = self.written.get_mut(index)?;
        let spans = written
            .spans
            .get_or_insert_with(|| spans_of(&written.block.value, &written.text, write))
            .as_ref()?;
        // The kept text is shared, not copied: only the strings are written.
        let parts = differ
            .iter()
            .map(|(at, string)| {
                let (start, end) = spans.get(*at).copied().flatten()?;
                let mut text = String::new();
                push_block_scalar(&mut text, string);
                Some((start, end, text))
            })
            .collect::<Option<_>>()?;
        let spliced = Spliced::new(written.text.clone(), parts)?;
        Some(Text::Spliced(Box::new(spliced)))
    }
}

/// How a value compares with a kept block's.
#[derive(Debug, PartialEq)]
enum Compared<'v> {
    Same,
    /// The same but for some of their one-line strings: the value's that
    /// differ, by their place among the strings, in order.
    Alike(Vec<(usize, &'v str)>),
    Other,
}

/// Whether `new` is `kept`, alike (see [`Compared::Alike`]) or another value.
fn compare<'v>(kept: &Value, new: &'v Value) -> Compared<'v> {
    let (mut seen, mut differ) = (0, Vec::new());
    match walk_alike(kept, new, &mut seen, &mut differ) {
        true if differ.is_empty() => Compared::Same,
        true => Compared::Alike(differ),
        false => Compared::Other,
    }
}

/// Whether `a` and `b` have the same shape but for one-line strings;
/// those of `b` that differ from `a`'s are added to `differ` with their
/// place among the strings (`seen` so far).
fn walk_alike<'v>(
    a: &Value,
    b: &'v Value,
    seen: &mut usize,
    differ: &mut Vec<(usize, &'v str)>,
) -> bool {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((ka, va), (kb, vb))| ka == kb && walk_alike(va, vb, seen, differ))
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| walk_alike(a, b, seen, differ))
        }
        (Value::String(a), Value::String(b)) => {
            let at = *seen;
            *seen += 1;
            if a == b {
                return true;
            }
            let one_line = !a.contains('\n') && !b.contains('\n');
            if one_line {
                differ.push((at, b.as_str()));
            }
            one_line
        }
        _ => a == b,
    }
}

/// The strings of `value` (not its keys), in the order they are written.
fn all_strings<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
    match value {
        Value::Object(map) => map.values().for_each(|v| all_strings(v, out)),
        Value::Array(items) => items.iter().for_each(|v| all_strings(v, out)),
        Value::String(s) => out.push(s),
        _ => {}
    }
}

/// Where each string of `value` is written in `text`, its text as `write`
/// gives it (`None` for a string of several lines): found from the text
/// `write` gives with each one-line string replaced by a mark (the writer
/// writes a one-line string the same wherever it stands). `None` when a
/// string or key holds the mark, or the pieces do not make up `text`.
fn spans_of(value: &Value, text: &str, write: &impl Fn(&Value) -> String) -> Option<Spans> {
    fn with_gaps(value: &Value) -> Option<Value> {
        Some(match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| Some((k.clone(), with_gaps(v)?)).filter(|_| !k.contains(GAP)))
                    .collect::<Option<_>>()?,
            ),
            Value::Array(items) => {
                Value::Array(items.iter().map(with_gaps).collect::<Option<_>>()?)
            }
            Value::String(s) if s.contains(GAP) => return None,
            Value::String(s) if !s.contains('\n') => Value::String(GAP.into()),
            other => other.clone(),
        })
    }
    let marked = write(&with_gaps(value)?);
    let mut strings = Vec::new();
    all_strings(value, &mut strings);
    let mut gaps = marked.split(GAP);
    let mut spans = Vec::with_capacity(strings.len());
    let mut rebuilt = String::with_capacity(text.len());
    for string in strings {
        if string.contains('\n') {
            spans.push(None);
            continue;
        }
        rebuilt.push_str(gaps.next()?);
        let start = rebuilt.len();
        push_block_scalar(&mut rebuilt, string);
        spans.push(Some((start, rebuilt.len())));
    }
    rebuilt.push_str(gaps.next()?);
    (gaps.next().is_none() && rebuilt == text).then_some(spans)
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

/// Hashes what blocks of the same shape share: everything but the text of
/// their one-line strings.
fn hash_shape(value: &Value, hasher: &mut impl Hasher) {
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
        Value::String(s) if s.contains('\n') => {
            hasher.write_u8(4);
            s.hash(hasher);
        }
        Value::String(_) => hasher.write_u8(7),
        Value::Array(items) => {
            hasher.write_u8(5);
            hasher.write_usize(items.len());
            items.iter().for_each(|item| hash_shape(item, hasher));
        }
        Value::Object(map) => {
            hasher.write_u8(6);
            hasher.write_usize(map.len());
            for (k, v) in map {
                k.hash(hasher);
                hash_shape(v, hasher);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A small value under a key is the text the writer gives, shared with
    /// the one written last under that key, column and layout when the value
    /// is the same, and written anew when any of them differs.
    #[test]
    fn small_values_under_a_key_share_the_text_last_written_for_the_same_value() {
        let layout = Layout::default();
        let json_layout = Layout {
            json: true,
            ..Layout::default()
        };
        let mut blocks = Blocks::default();
        let status = json!("{\"containers\":[\"istio-proxy\"]}");
        let text = |blocks: &mut Blocks, layout: Layout, col: usize, key: &str, value: &Value| {
            let got = blocks.text(layout, col, Some(key), value);
            assert!(
                got.is(&layout.block_entry(col, key, value)),
                "{key}: {value}"
            );
            got
        };
        let first = text(&mut blocks, layout, 8, "status", &status);
        let again = text(&mut blocks, layout, 8, "status", &status);
        let (Text::Shared(first), Text::Shared(again)) = (first, again) else {
            panic!("small values under a key are kept");
        };
        assert!(
            Arc::ptr_eq(&first, &again),
            "the same value shares its text"
        );
        for (layout, col, key, value) in [
            (layout, 8, "ports", json!({"a": "1", "b": 2})),
            (layout, 8, "ports", json!({"b": 2, "a": "1"})),
            (layout, 8, "ports", json!({"a": "1", "b": 2})),
            (layout, 8, "status", json!("other")),
            (layout, 8, "status", json!(8080)),
            (layout, 10, "status", status.clone()),
            (json_layout, 8, "status", status.clone()),
            (layout, 8, "revision", status.clone()),
            (layout, 8, "status", status.clone()),
        ] {
            text(&mut blocks, layout, col, key, &value);
        }
    }

    /// Blocks keeping nothing write each block each time, as the writer
    /// writes it, and keep none.
    #[test]
    fn blocks_keeping_nothing_write_each_block_anew() {
        let layout = Layout::default();
        let mut blocks = Blocks::keeping_nothing();
        let value = json!({"name": "istio-proxy", "args": ["proxy", "sidecar"], "env": [{"name": "A", "value": "1"}]});
        for _ in 0..2 {
            let got = blocks.text(layout, 4, None, &value);
            assert!(matches!(got, Text::Own(_)));
            assert_eq!(got.to_text(), layout.block_item(4, &value));
            let small = blocks.text(layout, 8, Some("status"), &json!("ok"));
            assert!(matches!(small, Text::Own(_)));
        }
        assert!(blocks.written.is_empty() && blocks.small.is_empty());
    }

    /// A block made from a kept one's text is the text the writer gives,
    /// whatever its strings need (quotes, escapes, nothing).
    #[test]
    fn blocks_alike_are_written_as_the_writer_writes_them() {
        let layout = Layout::default();
        let container = |name: &str, owner: &str| {
            json!({"name": "istio-proxy", "args": ["proxy", "sidecar"], "env": [
                {"name": "ISTIO_META_WORKLOAD_NAME", "value": name},
                {"name": "ISTIO_META_OWNER", "value": owner},
                {"name": "PROXY_CONFIG", "value": "{\n}\n"}]})
        };
        let mut blocks = Blocks::default();
        let first = blocks.text(layout, 4, None, &container("web-0", "kubernetes://a/b"));
        assert!(matches!(first, Text::Shared(_)));
        for (name, owner) in [
            ("web-1", "kubernetes://a/c"),
            ("8080", "yes"),
            ("", "a: b # c"),
            ("it's \"quoted\"", "tab\there"),
            ("- item", "\u{e000}"),
        ] {
            let value = container(name, owner);
            let got = blocks.text(layout, 4, None, &value);
            assert_eq!(
                got.to_text(),
                layout.block_item(4, &value),
                "{name} {owner}"
            );
            assert!(got.is(&layout.block_item(4, &value)), "{name} {owner}");
            assert!(
                matches!(&got, Text::Spliced(s) if s.parts() == 2),
                "the kept text with the two strings that differ: {name} {owner}"
            );
        }
        let again = blocks.text(layout, 4, None, &container("web-0", "kubernetes://a/b"));
        assert!(matches!(again, Text::Shared(_)), "the kept block is shared");
        let other_lines = container("web-0", "kubernetes://a/b\nsecond line");
        let got = blocks.text(layout, 4, None, &other_lines);
        assert_eq!(got.to_text(), layout.block_item(4, &other_lines));
        assert_eq!(
            blocks.written.len(),
            2,
            "another multi-line string, another shape"
        );
    }
}

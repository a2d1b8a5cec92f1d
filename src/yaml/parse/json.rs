//! JSON streams as kubectl reads them. kubectl reads a stream that starts
//! with `{` (or `[`) with a JSON decoder, not with its YAML reader: one
//! value after another (NDJSON, as `jq -c '.items[]'` writes it), and
//! `\uD83D\uDE00` escapes that together write one character (how Python's
//! `json.dumps` writes any emoji), which a YAML parser refuses. The tool's
//! parser reads JSON as YAML; here such streams are cut into their values
//! and such escapes read as JSON reads them.

use std::borrow::Cow;

use crate::yaml::node::{Node, NodeKind, ScalarStyle};

/// Whether `part` is a JSON stream: its first character that is not white
/// space opens an object or an array.
pub(super) fn is_json(part: &str) -> bool {
    matches!(
        part.bytes().find(|b| !b.is_ascii_whitespace()),
        Some(b'{' | b'[')
    )
}

/// The byte ranges of the values of the JSON stream `part`, when it holds
/// more than one: `None` for one value, or for text that is not a stream of
/// whole objects and arrays (the parser then says what is wrong).
pub(super) fn values(part: &str) -> Option<Vec<(usize, usize)>> {
    every_value(part).filter(|ranges| ranges.len() > 1)
}

/// Whether `part` is one JSON object or array and white space.
pub(super) fn one_value(part: &str) -> bool {
    every_value(part).is_some_and(|ranges| ranges.len() == 1)
}

/// The byte ranges of the values of the JSON stream `part`, however many.
pub(super) fn every_value(part: &str) -> Option<Vec<(usize, usize)>> {
    let bytes = part.as_bytes();
    let mut ranges = Vec::new();
    let mut at = 0;
    loop {
        while bytes.get(at).is_some_and(u8::is_ascii_whitespace) {
            at += 1;
        }
        match bytes.get(at) {
            None => break,
            Some(b'{' | b'[') => {}
            Some(_) => return None,
        }
        let start = at;
        at = closing(bytes, at)?;
        ranges.push((start, at));
    }
    Some(ranges)
}

/// Where the object or array opening at `start` ends (after its closing
/// bracket), its strings skipped whole.
fn closing(bytes: &[u8], start: usize) -> Option<usize> {
    let mut at = start;
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    loop {
        let &b = bytes.get(at)?;
        at += 1;
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(at);
                }
            }
            _ => {}
        }
    }
}

/// A JSON `List` object: where each object of its `items` array is, and
/// its `kind`.
pub(super) struct JsonList {
    pub items: Vec<(usize, usize)>,
    pub kind: String,
}

/// `part[start..end]` read as one JSON object whose `items` are an array of
/// objects and whose `kind` is a string, each key once: where the items
/// are (in `part`) and the kind. Strict JSON only, as kubectl writes it
/// (`kubectl get -o json`): any other text is left to the parser, which
/// reads the document whole.
pub(super) fn list_items(part: &str, (start, end): (usize, usize)) -> Option<JsonList> {
    let bytes = part.as_bytes().get(..end)?;
    let mut cursor = Cursor { bytes, at: start };
    cursor.eat(b'{')?;
    let (mut keys, mut items, mut kind) = (Vec::new(), None, None);
    loop {
        cursor.skip_space();
        if keys.is_empty() && cursor.eat(b'}').is_some() {
            break;
        }
        let (from, to) = cursor.string()?;
        let key: String = serde_json::from_str(part.get(from..to)?).ok()?;
        if keys.contains(&key) {
            return None;
        }
        cursor.skip_space();
        cursor.eat(b':')?;
        cursor.skip_space();
        match key.as_str() {
            "items" => items = Some(cursor.objects()?),
            "kind" => {
                let (from, to) = cursor.string()?;
                kind = Some(serde_json::from_str::<String>(part.get(from..to)?).ok()?);
            }
            _ => {
                cursor.value()?;
            }
        }
        keys.push(key);
        cursor.skip_space();
        if cursor.eat(b'}').is_some() {
            break;
        }
        cursor.eat(b',')?;
    }
    (cursor.at == end).then_some(JsonList {
        items: items?,
        kind: kind?,
    })
}

/// A reading position in strict JSON.
struct Cursor<'t> {
    bytes: &'t [u8],
    at: usize,
}

impl Cursor<'_> {
    fn skip_space(&mut self) {
        while matches!(self.bytes.get(self.at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// Step over `b` when it is next.
    fn eat(&mut self, b: u8) -> Option<()> {
        (self.bytes.get(self.at) == Some(&b)).then(|| self.at += 1)
    }

    /// The string that is next, quotes included.
    fn string(&mut self) -> Option<(usize, usize)> {
        let start = self.at;
        self.eat(b'"')?;
        let mut escaped = false;
        loop {
            let &b = self.bytes.get(self.at)?;
            self.at += 1;
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => return Some((start, self.at)),
                // JSON writes control characters escaped.
                (false, 0..=0x1f) => return None,
                _ => {}
            }
        }
    }

    /// The value that is next: a string, an object or array, or a number,
    /// `true`, `false` or `null`.
    fn value(&mut self) -> Option<(usize, usize)> {
        let start = self.at;
        match self.bytes.get(start)? {
            b'"' => self.string(),
            b'{' | b'[' => {
                self.at = closing(self.bytes, start)?;
                Some((start, self.at))
            }
            b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => {
                while self
                    .bytes
                    .get(self.at)
                    .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
                {
                    self.at += 1;
                }
                Some((start, self.at))
            }
            _ => None,
        }
    }

    /// The array of objects that is next: where each object is.
    fn objects(&mut self) -> Option<Vec<(usize, usize)>> {
        self.eat(b'[')?;
        let mut objects = Vec::new();
        self.skip_space();
        if self.eat(b']').is_some() {
            return Some(objects);
        }
        loop {
            self.skip_space();
            if self.bytes.get(self.at) != Some(&b'{') {
                return None;
            }
            objects.push(self.value()?);
            self.skip_space();
            if self.eat(b']').is_some() {
                return Some(objects);
            }
            self.eat(b',')?;
        }
    }
}

/// The offsets of the `\uD8xx\uDCxx` escapes in `part` (a high surrogate's
/// escape followed by a low one's): twelve bytes each.
pub(super) fn surrogate_pairs(part: &str) -> Vec<usize> {
    if !part.contains("\\u") {
        return Vec::new();
    }
    let surrogate = |at: usize, range: std::ops::RangeInclusive<u16>| {
        part.get(at..at + 6)
            .and_then(|e| e.strip_prefix("\\u"))
            .and_then(|hex| u16::from_str_radix(hex, 16).ok())
            .is_some_and(|unit| range.contains(&unit))
    };
    part.match_indices("\\u")
        .map(|(i, _)| i)
        .filter(|&i| surrogate(i, 0xD800..=0xDBFF) && surrogate(i + 6, 0xDC00..=0xDFFF))
        // A backslash escaped before it makes it no escape.
        .filter(|&i| {
            part.get(..i)
                .is_some_and(|b| b.bytes().rev().take_while(|&c| c == b'\\').count() % 2 == 0)
        })
        .collect()
}

/// `part` with each escape pair at `pairs` written as two replacement
/// characters' escapes, as long: what the parser reads in their place.
pub(super) fn without_surrogates(part: &str, pairs: &[usize]) -> String {
    let mut out = String::with_capacity(part.len());
    let mut copied = 0;
    for &at in pairs {
        out.push_str(part.get(copied..at).unwrap_or_default());
        out.push_str("\\uFFFD\\uFFFD");
        copied = at + 12;
    }
    out.push_str(part.get(copied..).unwrap_or_default());
    out
}

/// Read again, as JSON reads them, the double-quoted scalars under `node`
/// (from `text`) that hold one of the escape pairs at `pairs` (offsets in
/// `text`).
pub(super) fn restore_pairs(text: &str, node: &mut Node<'_>, pairs: &[usize]) {
    let holds = |node: &Node<'_>| pairs.iter().any(|&p| node.start <= p && p < node.end);
    match &mut node.kind {
        NodeKind::Scalar {
            text: value,
            style: ScalarStyle::DoubleQuoted,
            ..
        } => {
            if !pairs.iter().any(|&p| node.start <= p && p < node.end) {
                return;
            }
            let source = text.get(node.start..node.end).unwrap_or_default();
            let quoted = if source.starts_with('"') {
                Cow::Borrowed(source)
            } else {
                Cow::Owned(format!("\"{source}\""))
            };
            if let Ok(read) = serde_json::from_str::<String>(&quoted) {
                *value = Cow::Owned(read);
            }
        }
        NodeKind::Map { entries, .. } => {
            for (key, value) in entries.iter_mut() {
                if holds(key) {
                    restore_pairs(text, key, pairs);
                }
                if holds(value) {
                    restore_pairs(text, value, pairs);
                }
            }
        }
        NodeKind::Seq { items, .. } => {
            for item in items.iter_mut().filter(|i| holds(i)) {
                restore_pairs(text, item, pairs);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
// Tests may slice: a panic there is a failed test (as clippy.toml says for indexing).
#[allow(clippy::string_slice)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_of_values_is_cut_into_them() {
        let part = "{\"a\": \"}{\"}\n[1, [2]]  {\"b\": \"\\\"\"}\n";
        assert_eq!(values(part), Some(vec![(0, 11), (12, 20), (22, 33)]));
        assert_eq!(values("{\"a\": 1}\n"), None);
        assert_eq!(values("{\"a\": 1}\nb: 2\n"), None);
        assert_eq!(values("{\"a\": 1"), None);
    }

    #[test]
    fn a_json_list_shows_its_items_and_kind() {
        let part = "{\"apiVersion\": \"v1\", \"items\": [\n  {\"a\": \"]}\"},\n  {\"b\": [1, {}]}\n], \"kind\": \"List\", \"m\": {\"n\": null}, \"x\": -1.5e3}";
        let list = list_items(part, (0, part.len())).expect("a list");
        assert_eq!(list.kind, "List");
        let items: Vec<&str> = list.items.iter().map(|&(a, b)| &part[a..b]).collect();
        assert_eq!(items, ["{\"a\": \"]}\"}", "{\"b\": [1, {}]}"]);
        // Not strict JSON, not an array of objects, a key twice, no kind.
        for part in [
            "{items: [{}], \"kind\": \"List\"}",
            "{\"items\": [{}, null], \"kind\": \"List\"}",
            "{\"items\": [], \"kind\": \"List\", \"kind\": \"List\"}",
            "{\"items\": [{}, {}]}",
            "{\"items\": [{}], \"kind\": \"List\"} x",
            "{\"items\": [{}], \"kind\": &a \"List\"}",
        ] {
            assert!(list_items(part, (0, part.len())).is_none(), "{part}");
        }
    }

    #[test]
    fn surrogate_pairs_are_found_and_replaced_as_long() {
        let part = r#"{"e": "\ud83d\ude00 \\ud83d\ude00 \uD83D\uDE00 \ud83d"}"#;
        let pairs = surrogate_pairs(part);
        assert_eq!(pairs.len(), 2, "{pairs:?}");
        let replaced = without_surrogates(part, &pairs);
        assert_eq!(replaced.len(), part.len());
        assert!(replaced.starts_with(r#"{"e": "\uFFFD\uFFFD \\"#));
    }
}

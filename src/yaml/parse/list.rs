//! The items of a large `List` found by their lines, so that each stretch of
//! them can be parsed, planned and written on its own (a KRM function's
//! `ResourceList`, `kubectl get -o yaml`), never the whole list at once.
//!
//! A block sequence under a root `items:` key at the start of its line is
//! cut at the lines where its `-` entries start; a JSON list (`kubectl get
//! -o json`), whose items need not stand on lines of their own, at its
//! items' braces, found by a scanner of strict JSON (see `json.rs`). The lines decide where
//! to cut, the parser whether the cut holds: the document's other entries
//! are parsed here, and every stretch is parsed by whoever takes it. Where a
//! line that looks like an entry is inside a quoted scalar or a flow
//! collection, the stretch before it does not parse (the quote or bracket is
//! left open), and the caller reads the document whole instead.

use super::{each_document, json};
use crate::yaml::node::{Node, NodeKind, ScalarStyle};

/// A `List` document whose `items` can be cut at their lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListLines {
    /// The document's bytes: from its first (a `---` line, or the start of
    /// the text) to where the next document starts.
    pub document: (usize, usize),
    /// Where each item is. In a block sequence, from its `-` line to the
    /// next item's (the comments before an item go with the item before);
    /// in JSON, its braces, from the start of their line when only space
    /// is before them.
    pub items: Vec<(usize, usize)>,
    /// The document's `kind`, from its root entries.
    pub kind: String,
    /// The document is JSON: its items are flow mappings, parsed one by one.
    pub json: bool,
}

impl ListLines {
    /// Where the document's root entries before `items` start and end (the
    /// `items:` line included); those after `items` are between the last
    /// item's end and the document's end.
    fn head(&self) -> (usize, usize) {
        (self.document.0, self.items.first().map_or(0, |item| item.0))
    }

    fn tail(&self) -> (usize, usize) {
        (self.items.last().map_or(0, |item| item.1), self.document.1)
    }
}

/// Every document of `text` with a block sequence of at least two `items`
/// under a root `items:` line, whose other root entries parse and name its
/// `kind`; or, when `text` is JSON, every value of it that is a list of at
/// least two objects.
pub fn list_lines(text: &str) -> Vec<ListLines> {
    if json::is_json(text) {
        return json_lists(text);
    }
    let mut found: Vec<ListLines> = Vec::new();
    let mut search = 0;
    while let Some(line) = next_items_line(text, search) {
        search = line + 1;
        if found.last().is_some_and(|l| line < l.document.1) {
            continue;
        }
        let Some(starts) = item_starts(text, line) else {
            continue;
        };
        let end = starts.last().copied().unwrap_or(text.len());
        let document = (document_start(text, line), document_end(text, end));
        let mut list = ListLines {
            document,
            items: starts
                .windows(2)
                .filter_map(|pair| match pair {
                    [start, end] => Some((*start, *end)),
                    _ => None,
                })
                .collect(),
            kind: String::new(),
            json: false,
        };
        if let Some(kind) = kind_of_entries(text, &list) {
            list.kind = kind;
            search = list.document.1;
            found.push(list);
        }
    }
    found
}

/// The values of the JSON stream `text` that are lists of two objects or more.
fn json_lists(text: &str) -> Vec<ListLines> {
    let values = json::every_value(text).unwrap_or_default();
    values
        .into_iter()
        .filter_map(|document| {
            let list = json::list_items(text, document)?;
            (list.items.len() >= 2).then(|| ListLines {
                document,
                items: list
                    .items
                    .into_iter()
                    .map(|(start, end)| (line_start_before(text, start), end))
                    .collect(),
                kind: list.kind,
                json: true,
            })
        })
        .collect()
}

/// The start of the line holding `at` when only spaces and tabs are before
/// it there, else `at`: an item is then read from its line's start, at the
/// column it has in the list.
fn line_start_before(text: &str, at: usize) -> usize {
    let before = text.as_bytes().get(..at).unwrap_or_default();
    // Only the space before it is looked at: a list on one line is megabytes.
    let space = before
        .iter()
        .rev()
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count();
    let line = at - space;
    match line.checked_sub(1).and_then(|i| before.get(i)) {
        None | Some(b'\n') => line,
        Some(_) => at,
    }
}

/// The start of the next line from `from` on that is `items:` (a comment
/// may follow it).
fn next_items_line(text: &str, from: usize) -> Option<usize> {
    let mut candidate = match from {
        0 if text.starts_with("items:") => Some(0),
        _ => None,
    };
    let mut at = from;
    loop {
        let line = match candidate.take() {
            Some(line) => line,
            None => at + text.get(at..)?.find("\nitems:")? + 1,
        };
        let rest = line_at(text, line)
            .get("items:".len()..)
            .unwrap_or_default();
        let rest = rest.trim_start_matches([' ', '\t']);
        if rest.is_empty() || rest.starts_with('#') {
            return Some(line);
        }
        at = line;
    }
}

/// The line starting at `at`, without its line break.
fn line_at(text: &str, at: usize) -> &str {
    let rest = text.get(at..).unwrap_or_default();
    let line = rest.split('\n').next().unwrap_or_default();
    line.strip_suffix('\r').unwrap_or(line)
}

/// The start of the line after the one at `at` (the text's end after the last).
fn next_line(text: &str, at: usize) -> usize {
    text.get(at..)
        .and_then(|rest| rest.find('\n'))
        .map_or(text.len(), |i| at + i + 1)
}

/// Whether `line` is a document marker (`---` or `...`, alone or followed by
/// a space, a tab or a line break).
fn is_marker(line: &str) -> bool {
    ["---", "..."].iter().any(|marker| {
        line.strip_prefix(marker)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
    })
}

/// The start of the document holding the line at `line`: its `---` line,
/// or the text's start.
fn document_start(text: &str, line: usize) -> usize {
    let mut before = line;
    while let Some(i) = text.get(..before).and_then(|t| t.rfind("\n---")) {
        if is_marker(line_at(text, i + 1)) {
            return i + 1;
        }
        before = i;
    }
    0
}

/// Where the document holding the line at `from` ends: the next marker
/// line from there on (a `...` line with it), or the text's end.
fn document_end(text: &str, from: usize) -> usize {
    let mut at = from;
    while at < text.len() {
        let current = line_at(text, at);
        if current.starts_with("---") && is_marker(current) {
            return at;
        }
        if current.starts_with("...") && is_marker(current) {
            return next_line(text, at);
        }
        at = next_line(text, at);
    }
    text.len()
}

/// Where each item of the block sequence after the `items:` line at `line`
/// starts, then where the sequence ends (at the first line less indented
/// than its `-`, or as indented and no entry, such as a document marker);
/// `None` unless it is a block sequence of two items or more. Lines are
/// looked at as bytes, and only up to their first character: a large list
/// has hundreds of thousands.
fn item_starts(text: &str, line: usize) -> Option<Vec<usize>> {
    let bytes = text.as_bytes();
    let mut starts = Vec::new();
    let mut indent = None;
    let mut at = next_line(text, line);
    while let Some(rest) = bytes.get(at..).filter(|rest| !rest.is_empty()) {
        let column = rest.iter().take_while(|&&b| b == b' ').count();
        let content = rest.get(column..).unwrap_or_default();
        let next = content
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| at + column + i + 1);
        let blank = matches!(
            content,
            [] | [b'\n', ..] | [b'\r', b'\n', ..] | [b'\r'] | [b'#', ..]
        );
        if !blank {
            let entry = matches!(content, [b'-'] | [b'-', b' ' | b'\t' | b'\r' | b'\n', ..]);
            match indent {
                None if entry => indent = Some(column),
                // A value on the lines below `items:` that is not a block sequence.
                None => return None,
                Some(indent) if column > indent => {}
                Some(indent) if column == indent && entry => {}
                Some(_) => break,
            }
            if indent == Some(column) {
                starts.push(at);
            }
        }
        at = next;
    }
    if starts.len() < 2 {
        return None;
    }
    starts.push(at.min(text.len()));
    Some(starts)
}

/// The entries of a block mapping node.
fn block_entries<'n, 'a>(node: &'n Node<'a>) -> Option<&'n [(Node<'a>, Node<'a>)]> {
    match &node.kind {
        NodeKind::Map {
            entries,
            flow: false,
        } => Some(entries.as_slice()),
        _ => None,
    }
}

/// The `kind` the root entries of `list` outside its items give, when they
/// parse as one block mapping (the `items:` entry, empty, the last before
/// the items) and `items` is not among those after them.
fn kind_of_entries(text: &str, list: &ListLines) -> Option<String> {
    let entries = |(from, to): (usize, usize)| {
        let mut roots = Vec::new();
        each_document(text, from, to, |document| roots.push(document.root)).ok()?;
        Some(roots)
    };
    let head = entries(list.head())?;
    let tail = entries(list.tail())?;
    let [Some(head)] = head.as_slice() else {
        return None;
    };
    let tail = match tail.as_slice() {
        [] | [None] => None,
        [Some(tail)] => Some(tail),
        _ => return None,
    };
    let head_entries = block_entries(head)?;
    let (last_key, last_value) = head_entries.last()?;
    let empty = matches!(&last_value.kind,
        NodeKind::Scalar { text, style: ScalarStyle::Plain, tag: None } if text.is_empty());
    if last_key.as_str() != Some("items") || !empty {
        return None;
    }
    let tail_entries = match tail {
        Some(tail) => block_entries(tail)?,
        None => &[],
    };
    let keys = || {
        head_entries
            .iter()
            .chain(tail_entries)
            .map(|(key, _)| key.as_str())
    };
    // A key given twice, or one that is not text, is for the whole reading to judge.
    let mut seen: Vec<&str> = Vec::new();
    for key in keys() {
        let key = key?;
        if seen.contains(&key) {
            return None;
        }
        seen.push(key);
    }
    let kind = head_entries
        .iter()
        .chain(tail_entries)
        .find(|(key, _)| key.as_str() == Some("kind"))?;
    kind.1.as_str().map(str::to_string)
}

#[cfg(test)]
// Tests may slice: a panic there is a failed test (as clippy.toml says for indexing).
#[allow(clippy::string_slice)]
mod tests {
    use super::*;

    fn lists(text: &str) -> Vec<(String, Vec<&str>)> {
        list_lines(text)
            .into_iter()
            .map(|list| {
                let items = list.items.iter().map(|&(a, b)| &text[a..b]).collect();
                (list.kind, items)
            })
            .collect()
    }

    #[test]
    fn items_are_cut_at_their_entry_lines() {
        let text = "apiVersion: v1\nitems:\n- a: 1\n  b: |\n    x\n# about c\n- c: 2\n  d:\n  - e\nkind: List\nmetadata: {}\n";
        assert_eq!(
            lists(text),
            [(
                "List".to_string(),
                vec![
                    "- a: 1\n  b: |\n    x\n# about c\n",
                    "- c: 2\n  d:\n  - e\n"
                ]
            )]
        );
        // Indented entries, a comment after `items:`, among other documents.
        let text = "a: 1\n---\nkind: ResourceList\nitems: # the objects\n  -\n    a: 1\n  - b: 2\n---\nc: 3\n";
        assert_eq!(
            lists(text),
            [(
                "ResourceList".to_string(),
                vec!["  -\n    a: 1\n", "  - b: 2\n"]
            )]
        );
    }

    #[test]
    fn a_json_list_is_cut_at_its_items_braces() {
        // As `kubectl get -o json` writes it: each item from its line's start.
        let text = "{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n        {\n            \"a\": 1\n        },\n        {\"b\": \"},{\"}\n    ],\n    \"kind\": \"List\"\n}\n";
        assert_eq!(
            lists(text),
            [(
                "List".to_string(),
                vec![
                    "        {\n            \"a\": 1\n        }",
                    "        {\"b\": \"},{\"}"
                ]
            )]
        );
        // On one line, among other values of a stream.
        let text = "{\"a\": 1}\n{\"kind\":\"List\",\"items\":[{\"c\":1},{\"d\":2}]}\n";
        let list = list_lines(text).pop().expect("cut");
        assert_eq!(
            &text[list.document.0..list.document.1],
            text[9..].trim_end()
        );
        let items: Vec<&str> = list.items.iter().map(|&(a, b)| &text[a..b]).collect();
        assert_eq!(items, ["{\"c\":1}", "{\"d\":2}"]);
        assert!(list.json);
        // One item only, or JSON read leniently as YAML.
        assert!(list_lines("{\"kind\": \"List\", \"items\": [{}]}").is_empty());
        assert!(list_lines("{kind: List, items: [{}, {}]}").is_empty());
    }

    #[test]
    fn what_is_not_a_block_list_of_items_is_not_cut() {
        for text in [
            // One item only.
            "kind: List\nitems:\n- a: 1\n",
            // A flow sequence, a mapping.
            "kind: List\nitems: [a, b]\n",
            "kind: List\nitems:\n  a: 1\n  b: 2\n",
            // No kind, a kind given twice, `items` given twice.
            "items:\n- a\n- b\n",
            "kind: List\nitems:\n- a\n- b\nkind: List\n",
            "kind: List\nitems:\n- a\n- b\nitems: []\n",
            // `items:` inside a quoted scalar.
            "kind: List\nnote: \"x\nitems:\n- a\n- b\n\"\n",
            // Not `items:` alone.
            "items: x\n",
            // The entries outside the items do not parse.
            "kind: List\nitems:\n- a\n- b\nc: [\n",
        ] {
            let kinds: Vec<String> = list_lines(text).into_iter().map(|l| l.kind).collect();
            assert!(kinds.is_empty(), "{text:?} gave {kinds:?}");
        }
    }

    #[test]
    fn a_cut_inside_a_quoted_scalar_leaves_a_stretch_that_does_not_parse() {
        let text = "kind: List\nitems:\n- a: \"x\n- b\"\n- c\n";
        let list = list_lines(text).pop().expect("cut by its lines");
        let (from, to) = list.items[0];
        assert!(super::super::parse_range(text, from, to).is_err());
    }
}

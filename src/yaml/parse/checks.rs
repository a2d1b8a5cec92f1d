//! What a stream is refused for, as kubectl refuses it: characters YAML
//! does not allow, keys that repeat, and scalars whose tags or values JSON
//! (and so a Kubernetes object) cannot hold.

use super::*;
use crate::yaml::node::{NodeKind, ScalarStyle};

/// The first character of `text` that YAML (and so libyaml and kubectl)
/// does not allow in a stream, anywhere: C0 and C1 control characters other
/// than tab, line feed, carriage return and next line, and U+FFFE, U+FFFF.
pub(crate) fn unprintable(text: &str) -> Option<(usize, char)> {
    let bytes = text.as_bytes();
    let forbidden_at = |i: usize| match bytes.get(i).copied().unwrap_or(b' ') {
        b'\t' | b'\n' | b'\r' => false,
        0..0x20 | 0x7f => true,
        // U+0080 to U+009F, less U+0085.
        0xc2 => bytes
            .get(i + 1)
            .is_some_and(|&next| (0x80..0xa0).contains(&next) && next != 0x85),
        // U+FFFE, U+FFFF.
        0xef => bytes.get(i + 1) == Some(&0xbf) && matches!(bytes.get(i + 2), Some(0xbe | 0xbf)),
        _ => false,
    };
    // Every byte of the stream is looked at: a chunk at a time, without
    // branches, for a byte that may start such a character; only a chunk
    // with one is looked at byte by byte.
    let may_start = |b: u8| {
        (b < 0x20) & (b != b'\t') & (b != b'\n') & (b != b'\r')
            | (b == 0x7f)
            | (b == 0xc2)
            | (b == 0xef)
    };
    const CHUNK: usize = 64;
    let at = bytes
        .chunks(CHUNK)
        .enumerate()
        .filter(|(_, chunk)| chunk.iter().fold(false, |any, &b| any | may_start(b)))
        .find_map(|(n, chunk)| (n * CHUNK..n * CHUNK + chunk.len()).find(|&i| forbidden_at(i)))?;
    Some((at, text.get(at..)?.chars().next()?))
}

/// The offsets (in the whole stream, `part` starting at `from`) of
/// Unicode's line separator, paragraph separator and next line characters
/// in `part`.
pub(super) fn unicode_line_breaks(part: &str, from: usize) -> Vec<usize> {
    if part.is_ascii() {
        return Vec::new();
    }
    part.char_indices()
        .filter(|(_, c)| matches!(c, '\u{2028}' | '\u{2029}' | '\u{85}'))
        .map(|(i, _)| from + i)
        .collect()
}

/// Where `document` holds one of `breaks` that libyaml, and so kubectl,
/// reads otherwise than the tool: anywhere but inside a quoted scalar, where
/// both keep a line or paragraph separator (libyaml folds a next line
/// character there into a space). Refused, naming the character: kubectl
/// would read a line break there (a comment ended, a key after it).
pub(super) fn misread_line_break(
    text: &str,
    document: &Document<'_>,
    breaks: &[usize],
) -> Option<SyntaxError> {
    let within: Vec<usize> = breaks
        .iter()
        .copied()
        .filter(|&at| document.start <= at && at < document.end)
        .collect();
    if within.is_empty() {
        return None;
    }
    let mut quoted = Vec::new();
    if let Some(root) = &document.root {
        quoted_spans(root, &mut quoted);
    }
    let at = within.into_iter().find(|&at| {
        let separator = !text
            .get(at..)
            .is_some_and(|rest| rest.starts_with('\u{85}'));
        !(separator && quoted.iter().any(|&(start, end)| start < at && at < end))
    })?;
    Some(SyntaxError {
        document: document.index,
        ..line_break_outside(text, at)
    })
}

/// The refusal of the Unicode line break at `at`, outside any quoted scalar.
pub(super) fn line_break_outside(text: &str, at: usize) -> SyntaxError {
    let c = text
        .get(at..)
        .and_then(|rest| rest.chars().next())
        .unwrap_or('\u{2028}');
    let name = match c {
        '\u{2028}' => "a line separator",
        '\u{2029}' => "a paragraph separator",
        _ => "a next line character",
    };
    SyntaxError {
        message: format!(
            "{name} (U+{:04X}), which kubectl reads as a line break and this tool would not: write a line break, or quote the value that holds it",
            u32::from(c)
        ),
        document: 1,
        line: line_of(text, at),
        column: column_of(text, at),
        offset: at,
    }
}

/// The spans of the quoted scalars under `node`.
fn quoted_spans(node: &Node<'_>, out: &mut Vec<(usize, usize)>) {
    match &node.kind {
        NodeKind::Scalar { style, .. } => {
            if matches!(style, ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted) {
                out.push((node.start, node.end));
            }
        }
        NodeKind::Map { entries, .. } => {
            for (key, value) in entries {
                quoted_spans(key, out);
                quoted_spans(value, out);
            }
        }
        NodeKind::Seq { items, .. } => items.iter().for_each(|item| quoted_spans(item, out)),
        NodeKind::Alias(_) => {}
    }
}

/// A scalar's tag as [`NodeKind::Scalar`] keeps it.
pub(super) fn scalar_tag(tag: &saphyr_parser::Tag) -> String {
    const CORE: &str = "tag:yaml.org,2002:";
    if tag.is_yaml_core_schema() {
        return tag.suffix.clone();
    }
    match tag.suffix.strip_prefix(CORE) {
        // Verbatim (`!<tag:yaml.org,2002:int>`).
        Some(suffix) if tag.handle.is_empty() => suffix.to_string(),
        _ => format!("!{}{}", tag.handle, tag.suffix),
    }
}

/// Why kubectl could not turn `node` into JSON, if it could not: a scalar
/// whose tag its value does not fit (`!!int 1.5`), an infinity or NaN as a
/// value, a null key, or a mapping or a list as a key (`is_key`; an alias
/// to one too: `collections` says which anchors are on collections).
pub(super) fn not_json(node: &Node<'_>, is_key: bool, collections: &[bool]) -> Option<String> {
    match &node.kind {
        NodeKind::Scalar { text, style, tag } => {
            let plain = *style == ScalarStyle::Plain;
            let float = tag.is_none() && plain || tag.as_deref() == Some("float");
            if !is_key && float && is_infinity_or_nan(text) {
                return Some(format!(
                    "`{text}` is an infinity or NaN, which JSON has no number for: kubectl refuses it (quote it for a string)"
                ));
            }
            if let Some(problem) = tag.as_deref().and_then(|tag| tag_misfit(text, tag)) {
                return Some(problem);
            }
            let null = match tag.as_deref() {
                Some("null") => true,
                None => plain && node.is_null(),
                Some(_) => false,
            };
            (is_key && null).then(|| {
                "a null mapping key: kubectl reads only keys that are strings, numbers or booleans"
                    .into()
            })
        }
        NodeKind::Map { .. } | NodeKind::Seq { .. } if is_key => {
            Some("a mapping or a list as a mapping key: kubectl reads only keys that are strings, numbers or booleans".into())
        }
        NodeKind::Alias(id) if is_key && collections.get(*id).copied().unwrap_or(false) => {
            Some("an alias to a mapping or a list as a mapping key: kubectl reads only keys that are strings, numbers or booleans".into())
        }
        _ => None,
    }
}

/// go-yaml's YAML 1.1 infinities and NaN.
pub(super) fn is_infinity_or_nan(text: &str) -> bool {
    // Each is written with a dot after an optional sign.
    if !text.as_bytes().iter().take(2).any(|&b| b == b'.') {
        return false;
    }
    matches!(
        text.strip_prefix(['+', '-']).unwrap_or(text),
        ".inf" | ".Inf" | ".INF"
    ) || matches!(text, ".nan" | ".NaN" | ".NAN")
}

/// kubectl's refusal of a scalar tagged `!!int`, `!!float`, `!!bool` or
/// `!!null` whose text reads as something else (`!!int 1.5`); an integer
/// fits `!!float`.
pub(super) fn tag_misfit(text: &str, tag: &str) -> Option<String> {
    use serde_json::Value;
    if !matches!(tag, "int" | "float" | "bool" | "null") {
        return None;
    }
    let read = crate::yaml::value::resolve_plain(text);
    let kind = match &read {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() || n.is_u64() => "int",
        Value::Number(_) => "float",
        _ => "str",
    };
    let fits = kind == tag || (tag == "float" && kind == "int");
    (!fits).then(|| format!("cannot decode !!{kind} `{text}` as a !!{tag}"))
}

/// The first key among a mapping's `entries` that repeats an earlier one, as
/// kubectl refuses it: the message and the byte offset of the repeated key.
/// Keys compare by their text, so `name` and `"name"` are the same key, as
/// they are once the object is JSON; merge keys (`<<`) may repeat.
pub(super) fn duplicate_key(
    text: &str,
    entries: &[(Node<'_>, Node<'_>)],
) -> Option<(String, usize)> {
    if entries.len() < 2 {
        return None;
    }
    let name_of = |key: &Node<'_>| match &key.kind {
        NodeKind::Scalar { text, .. } if !crate::yaml::value::is_merge_key(key) => {
            Some(text.as_ref().to_owned())
        }
        _ => None,
    };
    let found = |name: String, at: usize, first: usize| {
        let line = line_of(text, first);
        Some((
            format!("mapping key {name:?} already defined at line {line}"),
            at,
        ))
    };
    let keys = || entries.iter().map(|(key, _)| key);
    // Small mappings (nearly all of them) compare pairwise without
    // allocating; large ones hash.
    if entries.len() <= 16 {
        for (i, key) in keys().enumerate().skip(1) {
            let NodeKind::Scalar { text: name, .. } = &key.kind else {
                continue;
            };
            if crate::yaml::value::is_merge_key(key) {
                continue;
            }
            let earlier = keys()
                .take(i)
                .find(|k| matches!(&k.kind, NodeKind::Scalar { text, .. } if text == name));
            if let Some(first) = earlier {
                return found(name.to_string(), key.start, first.start);
            }
        }
        return None;
    }
    let mut seen = std::collections::HashMap::new();
    for key in keys() {
        let Some(name) = name_of(key) else { continue };
        if let Some(&first) = seen.get(&name) {
            return found(name, key.start, first);
        }
        seen.insert(name, key.start);
    }
    None
}

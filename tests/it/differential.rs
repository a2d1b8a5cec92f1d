//! The tool's YAML reader (`src/yaml`: saphyr-parser and the tool's own
//! resolver) against libyaml's (serde_yaml_ng, whose parser is a port of
//! libyaml, the parser go-yaml ports too, and so kubectl's): on every file of
//! the corpus (`../shared/corpus`, when it is beside the checkout), of
//! `testdata/`, and on generated streams, both accept or both refuse, and
//! read the same values.
//!
//! Where they differ on purpose, the tool reads as kubectl does (go-yaml v2,
//! through sigs.k8s.io/yaml; checked with `kubectl annotate --local -o json`),
//! and serde_yaml_ng as YAML 1.2 does. Each difference is allowed only in the
//! form it takes:
//!
//! 1. YAML 1.1 scalars. serde_yaml_ng reads `yes`, `No`, `on`, `OFF`, `0644`,
//!    `1_000`, `0x_1F` as strings; kubectl and the tool read booleans and
//!    numbers. Allowed where the string reads as the tool's value by
//!    go-yaml v2's rules, written out here apart from the tool's
//!    ([`go_yaml_v2`]).
//! 2. Numbers compare as numbers: `1e3` is 1000 whether it is kept as an
//!    integer or a float (JSON has one kind of number; kubectl writes `1000`).
//! 3. Scalars with a core tag in YAML 1.1 form (`!!bool yes`, `!!int 0644`,
//!    `!!float 0x10`): serde_yaml_ng refuses them (`invalid value`), kubectl
//!    and the tool read them.
//! 4. Infinities and NaN (`.inf`, `-.Inf`, `.nan` as values): serde_yaml_ng
//!    reads floats; kubectl refuses them (JSON has no number for them: `json:
//!    unsupported value: +Inf`), and so does the tool.
//! 5. Integers past 64 bits: serde_yaml_ng refuses them; kubectl and the
//!    tool read a float.
//! 6. Keys. serde_yaml_ng's keys are values (`0x10:` is the number 16); the
//!    tool keeps a key's text. Allowed where the text reads as that value by
//!    go-yaml v2's rules. (kubectl writes such a key as its value's text,
//!    `"16"`, and `yes:` as `"true"`: the tool does not follow it there, since
//!    its editor finds keys by their text.)
//! 7. Duplicate keys. Both refuse a key that repeats; serde_yaml_ng compares
//!    keys as values, the tool as text, as JSON does, so `1:` and `'1':` are a
//!    duplicate to the tool only, `0x10:` and `16:` to serde_yaml_ng only.
//!    (kubectl's reader keeps one of the two; the API server's strict field
//!    validation, kubectl's default, refuses a duplicate field.)
//! 8. Tags of other schemas (`!custom 12`): serde_yaml_ng keeps the tag
//!    around the value; kubectl and the tool read a scalar's text as a
//!    string, and a collection as it is.
//! 9. A byte order mark: serde_yaml_ng refuses a stream starting with one;
//!    kubectl and the tool read it.
//! 10. An empty stream: serde_yaml_ng reads one null document, the tool
//!     none (kubectl: no object).
//! 11. JSON: kubectl reads a stream starting with `{` as JSON (its decoder
//!     looks at the first character), where libyaml refuses some of it (a
//!     key with its `:` on the next line). Allowed where the tool reads what
//!     a JSON parser reads.
//! 12. Not kubectl's way, left so far: a tag ended by a flow indicator
//!     rather than a space (`{note: !custom}`, an empty value with a tag):
//!     libyaml and kubectl refuse it (`did not find expected whitespace or
//!     line break`); saphyr-parser, and so the tool, read it, and the tool's
//!     output keeps it. Allowed where libyaml says so of a tag.
//!
//! Not seen here: `y`, `Y`, `n`, `N` are booleans to go-yaml v2 and the tool,
//! strings to libyaml's YAML 1.2 reading (`tests/it/kubectl_reader.rs`
//! compares the tool with kubectl's own reader); `!!binary` text, which
//! kubectl decodes from base64.

use crate::common;

use std::path::PathBuf;

use proptest::prelude::*;
use proptest::sample::select;
use serde_json::Value;
use serde_yaml_ng::Value as Yaml;

/// What one reader makes of a stream.
#[derive(Debug)]
enum Reading {
    Refused(String),
    /// Each document's value; an empty document is null.
    Read(Vec<Value>),
}

fn by_the_tool(text: &str) -> Reading {
    let documents = match mesh_inject::yaml::parse_stream(text) {
        Ok(documents) => documents,
        Err(e) => return Reading::Refused(e.message),
    };
    let mut values = Vec::new();
    for document in &documents {
        match &document.root {
            None => values.push(Value::Null),
            Some(root) => match mesh_inject::yaml::value::to_value(root) {
                Ok(value) => values.push(value),
                Err(e) => return Reading::Refused(e.message),
            },
        }
    }
    Reading::Read(values)
}

/// libyaml's reading, merge keys merged; `Yaml` values, whose keys are
/// values and whose custom tags are kept.
fn by_libyaml(text: &str) -> Result<Vec<Yaml>, String> {
    let mut values = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(text) {
        let mut value: Yaml =
            serde::Deserialize::deserialize(document).map_err(|e| e.to_string())?;
        value.apply_merge().map_err(|e| e.to_string())?;
        values.push(value);
    }
    Ok(values)
}

/// A stream of JSON values, as kubectl reads a stream starting with `{`.
fn by_json(text: &str) -> Option<Vec<Value>> {
    serde_json::Deserializer::from_str(text)
        .into_iter::<Value>()
        .collect::<Result<Vec<_>, _>>()
        .ok()
}

/// A boolean, null or number as go-yaml v2 (kubectl's reader) reads a plain
/// scalar; `None` for a string. Written from its rules: the YAML 1.1 words;
/// for text starting with a digit, a sign or a dot, underscores dropped, then
/// Go's integer syntax (`0x`, `0o`, `0b`, a leading `0` for octal), then its
/// float syntax.
fn go_yaml_v2(text: &str) -> Option<Value> {
    match text {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Some(Value::Bool(true));
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Some(Value::Bool(false));
        }
        "" | "~" | "null" | "Null" | "NULL" => return Some(Value::Null),
        _ => {}
    }
    let first = text.chars().next()?;
    if !(first.is_ascii_digit() || matches!(first, '+' | '-' | '.')) {
        return None;
    }
    let plain: String = text.chars().filter(|&c| c != '_').collect();
    let (negative, unsigned) = match plain.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, plain.strip_prefix('+').unwrap_or(&plain)),
    };
    let (radix, digits) =
        if let Some(d) = unsigned.strip_prefix("0x").or(unsigned.strip_prefix("0X")) {
            (16, d)
        } else if let Some(d) = unsigned.strip_prefix("0o").or(unsigned.strip_prefix("0O")) {
            (8, d)
        } else if let Some(d) = unsigned.strip_prefix("0b").or(unsigned.strip_prefix("0B")) {
            (2, d)
        } else if unsigned.len() > 1 && unsigned.starts_with('0') {
            (8, &unsigned[1..])
        } else {
            (10, unsigned)
        };
    if !digits.is_empty() && digits.chars().all(|c| c.is_digit(radix)) {
        if let Ok(magnitude) = u128::from_str_radix(digits, radix) {
            let signed = if negative {
                -(magnitude as i128)
            } else {
                magnitude as i128
            };
            if let Ok(n) = i64::try_from(signed) {
                return Some(Value::from(n));
            }
            if let Ok(n) = u64::try_from(signed) {
                return Some(Value::from(n));
            }
        }
    }
    // ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
    let body = plain.strip_prefix(['-', '+']).unwrap_or(&plain);
    let (mantissa, exponent) = match body.split_once(['e', 'E']) {
        Some((m, e)) => (m, Some(e)),
        None => (body, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", fraction)) => {
            !fraction.is_empty() && fraction.chars().all(|c| c.is_ascii_digit())
        }
        Some((whole, fraction)) => {
            !whole.is_empty()
                && whole.chars().all(|c| c.is_ascii_digit())
                && fraction.chars().all(|c| c.is_ascii_digit())
        }
        None => !mantissa.is_empty() && mantissa.chars().all(|c| c.is_ascii_digit()),
    };
    let exponent_ok = exponent.is_none_or(|e| {
        let digits = e.strip_prefix(['-', '+']).unwrap_or(e);
        !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
    });
    if mantissa_ok && exponent_ok {
        return plain
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number);
    }
    None
}

fn same_number(a: &serde_json::Number, b: &serde_json::Number) -> bool {
    match (a.as_i128(), b.as_i128()) {
        (Some(a), Some(b)) => a == b,
        _ => a.as_f64() == b.as_f64(),
    }
}

/// Whether the tool's `tool` is libyaml's `lib`, up to the differences
/// listed at the top; the first difference, with its place, otherwise.
fn same(tool: &Value, lib: &Yaml, at: &str) -> Result<(), String> {
    let differ = || Err(format!("at {at}: the tool reads {tool}, libyaml {lib:?}"));
    match (lib, tool) {
        (Yaml::Null, Value::Null) => Ok(()),
        (Yaml::Bool(a), Value::Bool(b)) if a == b => Ok(()),
        (Yaml::Number(n), Value::Number(m)) => {
            let n: serde_json::Number = match serde_json::to_value(n) {
                Ok(Value::Number(n)) => n,
                _ => return differ(),
            };
            // 3. A core tag on a YAML 1.1 octal (`!!float 0644`): libyaml
            // reads the digits as decimal (644), go-yaml and the tool as octal.
            let octal = n
                .as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                .and_then(|f| i64::from_str_radix(&format!("{f:.0}"), 8).ok());
            let read_as_octal = octal.is_some_and(|o| m.as_f64() == Some(o as f64));
            if same_number(&n, m) || read_as_octal {
                Ok(())
            } else {
                differ()
            }
        }
        (Yaml::String(s), Value::String(t)) if s == t => Ok(()),
        // 1. YAML 1.1 scalars.
        (Yaml::String(s), Value::Bool(_) | Value::Number(_) | Value::Null) => match go_yaml_v2(s) {
            Some(Value::Number(n)) => match tool {
                Value::Number(m) if same_number(&n, m) => Ok(()),
                _ => differ(),
            },
            Some(v) if v == *tool => Ok(()),
            _ => differ(),
        },
        (Yaml::Sequence(items), Value::Array(values)) if items.len() == values.len() => items
            .iter()
            .zip(values)
            .enumerate()
            .try_for_each(|(i, (item, value))| same(value, item, &format!("{at}/{i}"))),
        (Yaml::Mapping(entries), Value::Object(map)) if entries.len() == map.len() => {
            for (key, value) in entries {
                let found = match key {
                    Yaml::String(k) => map.get_key_value(k.as_str()),
                    // 6. Keys that are not strings to libyaml: the tool's
                    // key text reads as the same value.
                    Yaml::Bool(_) | Yaml::Number(_) => {
                        let want: Value = serde_json::to_value(key).map_err(|e| e.to_string())?;
                        map.iter().find(|(k, _)| match (go_yaml_v2(k), &want) {
                            (Some(Value::Number(a)), Value::Number(b)) => same_number(&a, b),
                            (Some(a), b) => a == *b,
                            (None, _) => false,
                        })
                    }
                    _ => return Err(format!("at {at}: libyaml has a key {key:?}")),
                };
                let Some((k, v)) = found else {
                    return Err(format!("at {at}: the tool has no key {key:?}: {tool}"));
                };
                same(v, value, &format!("{at}/{k}"))?;
            }
            Ok(())
        }
        // 8. Tags of other schemas.
        (Yaml::Tagged(tagged), _) => match (&tagged.value, tool) {
            (Yaml::Sequence(_) | Yaml::Mapping(_), _) => same(tool, &tagged.value, at),
            (Yaml::String(s), Value::String(t)) if s == t => Ok(()),
            (scalar, Value::String(t)) => match (go_yaml_v2(t), scalar) {
                (Some(Value::Number(a)), Yaml::Number(b)) => {
                    let b: Value = serde_json::to_value(b).map_err(|e| e.to_string())?;
                    if b.as_number().is_some_and(|b| same_number(&a, b)) {
                        Ok(())
                    } else {
                        differ()
                    }
                }
                (Some(Value::Bool(a)), Yaml::Bool(b)) if a == *b => Ok(()),
                (Some(Value::Null), Yaml::Null) => Ok(()),
                _ => differ(),
            },
            _ => differ(),
        },
        _ => differ(),
    }
}

/// Whether libyaml's reading holds an infinity or a NaN.
fn holds_a_non_finite_number(value: &Yaml) -> bool {
    match value {
        Yaml::Number(n) => n.as_f64().is_some_and(|f| !f.is_finite()),
        Yaml::Sequence(items) => items.iter().any(holds_a_non_finite_number),
        Yaml::Mapping(entries) => entries.values().any(holds_a_non_finite_number),
        Yaml::Tagged(tagged) => holds_a_non_finite_number(&tagged.value),
        _ => false,
    }
}

/// Whether a key of libyaml's reading is null or a collection, which JSON
/// (and kubectl) has no key for.
fn holds_a_key_json_lacks(value: &Yaml) -> bool {
    match value {
        Yaml::Sequence(items) => items.iter().any(holds_a_key_json_lacks),
        Yaml::Mapping(entries) => entries.iter().any(|(k, v)| {
            matches!(k, Yaml::Null | Yaml::Sequence(_) | Yaml::Mapping(_))
                || holds_a_key_json_lacks(k)
                || holds_a_key_json_lacks(v)
        }),
        Yaml::Tagged(tagged) => holds_a_key_json_lacks(&tagged.value),
        _ => false,
    }
}

/// Whether the two readers agree on `text`, up to the differences listed at
/// the top; what they disagree on otherwise.
fn agree(text: &str) -> Result<(), String> {
    let tool = by_the_tool(text);
    let mut lib = by_libyaml(text);
    // 10. An empty stream.
    if matches!(&tool, Reading::Read(values) if values.is_empty())
        && matches!(&lib, Ok(docs) if docs.len() == 1 && docs[0] == Yaml::Null)
    {
        lib = Ok(Vec::new());
    }
    match (&tool, &lib) {
        (Reading::Refused(_), Err(_)) => Ok(()),
        (Reading::Read(values), Ok(docs)) => {
            if values.len() != docs.len() {
                return Err(format!(
                    "the tool reads {} documents, libyaml {}",
                    values.len(),
                    docs.len()
                ));
            }
            values
                .iter()
                .zip(docs)
                .enumerate()
                .try_for_each(|(i, (value, doc))| same(value, doc, &format!("document {}", i + 1)))
        }
        (Reading::Refused(why), Ok(docs)) => {
            let allowed =
                // 4. Infinities and NaN.
                (why.contains("infinity or NaN") && docs.iter().any(holds_a_non_finite_number))
                // Keys JSON has none for: libyaml reads them, kubectl refuses.
                || ((why.contains("null mapping key") || why.contains("as a mapping key"))
                    && docs.iter().any(holds_a_key_json_lacks))
                // 7. Keys the same as text, not as values.
                || why.contains("already defined");
            if allowed {
                Ok(())
            } else {
                Err(format!("the tool refuses ({why}); libyaml reads {docs:?}"))
            }
        }
        (Reading::Read(values), Err(why)) => {
            let allowed =
                // 3. Core tags on YAML 1.1 forms.
                why.contains("expected a boolean")
                    || why.contains("expected an integer")
                    || why.contains("expected a float")
                    || why.contains("expected null")
                    // 5. Integers past 64 bits.
                    || why.contains("as u128")
                    || why.contains("as i128")
                    // 7. Keys the same as values, not as text.
                    || why.contains("duplicate entry")
                    // 9. A byte order mark.
                    || text.starts_with('\u{feff}')
                    // 11. JSON.
                    || (text.trim_start().starts_with('{') && by_json(text).as_ref() == Some(values))
                    // 12. A tag ended by a flow indicator.
                    || (why.contains("while scanning a tag")
                        && why.contains("did not find expected whitespace or line break"));
            if allowed {
                Ok(())
            } else {
                Err(format!(
                    "libyaml refuses ({why}); the tool reads {values:?}"
                ))
            }
        }
    }
}

fn files() -> Vec<PathBuf> {
    let mut files = common::manifests_under(&common::repo().join("testdata"));
    let corpus = common::repo().join("../shared/corpus");
    if corpus.is_dir() {
        files.extend(common::manifests_under(&corpus));
    } else {
        common::skip_part(
            "both_readers_agree_on_every_file",
            "../shared/corpus is not beside this checkout: the corpus files are not compared",
        );
    }
    files
}

#[test]
fn both_readers_agree_on_every_file() {
    let (mut compared, mut read, mut not_utf8) = (0, 0, 0);
    let mut disagreements = Vec::new();
    for path in files() {
        let Ok(text) = std::fs::read_to_string(&path) else {
            not_utf8 += 1;
            continue;
        };
        compared += 1;
        read += usize::from(matches!(by_the_tool(&text), Reading::Read(_)));
        if let Err(why) = agree(&text) {
            disagreements.push(format!("{}: {why}", path.display()));
        }
    }
    eprintln!(
        "compared {compared} files ({read} read by both or the tool alone; {not_utf8} not UTF-8, not compared)"
    );
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
    assert!(compared >= 60, "compared only {compared} files");
}

#[test]
fn the_listed_differences_are_allowed_and_nothing_else() {
    for text in [
        // 1., 2. and 6.
        "a: yes\nb: 0644\nc: 1_000\nd: 0x_1F\ne: 1e3\nf: Off\n0x10: g\n1.0: h\n",
        // 3.
        "a: !!bool yes\nb: !!int 0644\nc: !!float 0x10\n",
        // 4.
        "a: .inf\n",
        // 5.
        "a: 123456789012345678901234567890\n",
        // 7.
        "1: a\n'1': b\n",
        "0x10: a\n16: b\n",
        // 8.
        "a: !custom 12\nb: !custom [1]\n",
        // 9., 10., 11.
        "\u{feff}a: 1\n",
        "",
        "# only a comment\n",
        "a: {b: !custom}\n",
        // Keys JSON has none for.
        "~: a\n",
        "[a]: 1\n",
        // The indentation kubectl does not look at.
        "m:\n  a: 'x\n  y'\n  b: [1,\n2]\n",
    ] {
        agree(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    }
    // What is not listed is a disagreement.
    assert!(same(&serde_json::json!("yes"), &Yaml::Bool(true), "x").is_err());
    assert!(same(&serde_json::json!(true), &Yaml::String("yep".into()), "x").is_err());
    assert!(same(&serde_json::json!(8), &Yaml::String("010".into()), "x").is_ok());
    assert!(same(&serde_json::json!(10), &Yaml::String("010".into()), "x").is_err());
    assert!(
        same(
            &serde_json::json!({"a": 1}),
            &serde_yaml_ng::from_str("{a: 2}").expect("yaml"),
            "x"
        )
        .is_err()
    );
}

// ---------------------------------------------------------------------------
// Generated streams: mappings whose values are written in the forms where
// the readers could part: quoted scalars and flow collections over several
// lines at any indentation (tabs too), plain scalars over several lines,
// block scalars, YAML 1.1 scalars, tags, anchors, aliases and merge keys,
// comments, repeated keys.

/// How a value's later lines are indented, from the column of its key.
#[derive(Clone, Copy, Debug)]
enum Continue {
    /// Deeper than the key (what YAML 1.2 asks).
    Deeper,
    /// At the key's column.
    AtKey,
    /// At column 0.
    Flush,
    /// A tab, then at the key's column.
    Tab,
}

fn lead(how: Continue, col: usize) -> String {
    match how {
        Continue::Deeper => " ".repeat(col + 2),
        Continue::AtKey => " ".repeat(col),
        Continue::Flush => String::new(),
        Continue::Tab => format!("\t{}", " ".repeat(col)),
    }
}

const WORDS: [&str; 24] = [
    "web",
    "yes",
    "No",
    "on",
    "OFF",
    "0644",
    "0x1F",
    "1_000",
    "12",
    "-3",
    "1.5",
    "1e3",
    "~",
    "null",
    "true",
    "a b",
    "2001-12-14",
    "0o17",
    ".5",
    "09",
    "x:y",
    "it's",
    "#x",
    "é",
];

#[derive(Clone, Debug)]
enum Piece {
    Plain(&'static str),
    Single(Vec<&'static str>, Continue),
    Double(Vec<&'static str>, Continue),
    FlowSeq(Vec<&'static str>, Continue),
    FlowMap(Vec<&'static str>, Continue),
    /// A plain scalar over two lines.
    PlainLines(&'static str, &'static str, Continue),
    Literal(Vec<&'static str>),
    Tagged(&'static str, &'static str),
    Nested(Vec<(usize, Piece)>),
    AliasOfFirst,
    MergeFirst,
}

fn piece(depth: u32) -> BoxedStrategy<Piece> {
    let word = select(&WORDS[..]);
    let words = prop::collection::vec(select(&WORDS[..]), 1..4);
    let how = prop_oneof![
        Just(Continue::Deeper),
        Just(Continue::AtKey),
        Just(Continue::Flush),
        Just(Continue::Tab)
    ];
    let tags = select(&["!!str", "!!int", "!!float", "!!bool", "!custom", "!!null"][..]);
    let leaf = prop_oneof![
        3 => word.clone().prop_map(Piece::Plain),
        2 => (words.clone(), how.clone()).prop_map(|(w, h)| Piece::Single(w, h)),
        2 => (words.clone(), how.clone()).prop_map(|(w, h)| Piece::Double(w, h)),
        2 => (words.clone(), how.clone()).prop_map(|(w, h)| Piece::FlowSeq(w, h)),
        1 => (words.clone(), how.clone()).prop_map(|(w, h)| Piece::FlowMap(w, h)),
        1 => (word.clone(), word.clone(), how).prop_map(|(a, b, h)| Piece::PlainLines(a, b, h)),
        1 => words.prop_map(Piece::Literal),
        1 => (tags, word).prop_map(|(t, w)| Piece::Tagged(t, w)),
        1 => Just(Piece::AliasOfFirst),
        1 => Just(Piece::MergeFirst),
    ];
    if depth == 0 {
        return leaf.boxed();
    }
    prop_oneof![
        3 => leaf,
        1 => prop::collection::vec((0..6usize, piece(depth - 1)), 1..4).prop_map(Piece::Nested),
    ]
    .boxed()
}

const KEYS: [&str; 6] = ["a", "b", "c", "d", "e", "f"];

/// Quoted text for `words`, each after the first on a line of its own.
fn quoted(q: char, words: &[&str], how: Continue, col: usize) -> String {
    let escape = |w: &str| match q {
        '\'' => w.replace('\'', "''"),
        _ => w.replace('\\', "\\\\").replace('"', "\\\""),
    };
    let mut out = format!("{q}{}", escape(words[0]));
    for w in &words[1..] {
        out.push_str(&format!("\n{}{}", lead(how, col), escape(w)));
    }
    out.push(q);
    out
}

fn flow_item(w: &str) -> String {
    if w.contains(['#', ':', ',']) || w.starts_with(['~', '-']) {
        format!("'{}'", w.replace('\'', "''"))
    } else {
        w.to_string()
    }
}

/// Write `entries` as a block mapping at column `col`; the first entry of the
/// top level carries the anchor `&first`.
fn write_map(out: &mut String, entries: &[(usize, Piece)], col: usize, top: bool) {
    for (i, (key, value)) in entries.iter().enumerate() {
        let key = KEYS[key % KEYS.len()];
        let pad = " ".repeat(col);
        let anchor = if top && i == 0 { "&first " } else { "" };
        match value {
            Piece::MergeFirst => {
                out.push_str(&format!("{pad}<<: *first\n"));
                continue;
            }
            Piece::Nested(inner) => {
                out.push_str(&format!("{pad}{key}: {anchor}# nested\n"));
                write_map(out, inner, col + 2, false);
                continue;
            }
            _ => {}
        }
        let text = match value {
            Piece::Plain(w) => flow_item(w),
            Piece::Single(words, how) => quoted('\'', words, *how, col),
            Piece::Double(words, how) => quoted('"', words, *how, col),
            Piece::FlowSeq(words, how) | Piece::FlowMap(words, how) => {
                let map = matches!(value, Piece::FlowMap(..));
                let items: Vec<String> = words
                    .iter()
                    .enumerate()
                    .map(|(j, w)| {
                        if map {
                            format!("k{j}: {}", flow_item(w))
                        } else {
                            flow_item(w)
                        }
                    })
                    .collect();
                let (open, close) = if map { ('{', '}') } else { ('[', ']') };
                format!(
                    "{open}{}{close}",
                    items.join(&format!(",\n{}", lead(*how, col)))
                )
            }
            Piece::PlainLines(a, b, how) => {
                format!("{}\n{}{}", flow_item(a), lead(*how, col), flow_item(b))
            }
            Piece::Literal(words) => {
                let body: Vec<String> = words.iter().map(|w| format!("{pad}  {w}")).collect();
                format!("|\n{}", body.join("\n"))
            }
            Piece::Tagged(tag, w) => format!("{tag} {}", flow_item(w)),
            Piece::AliasOfFirst => "*first".to_string(),
            Piece::MergeFirst | Piece::Nested(_) => unreachable!(),
        };
        out.push_str(&format!("{pad}{key}: {anchor}{text}\n"));
    }
}

fn stream() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::collection::vec((0..6usize, piece(2)), 1..6), 1..3).prop_map(
        |documents| {
            let mut out = String::new();
            for (i, entries) in documents.iter().enumerate() {
                if i > 0 {
                    out.push_str("---\n");
                }
                write_map(&mut out, entries, 0, true);
            }
            out
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn both_readers_agree_on_generated_streams(text in stream()) {
        if let Err(why) = agree(&text) {
            prop_assert!(false, "{}\n--- the stream:\n{}", why, text);
        }
    }
}

//! Resolve a node tree to the JSON value Kubernetes would see.
//!
//! Scalars resolve the way kubectl's YAML reader (go-yaml v2, YAML 1.1
//! flavour) resolves them, so `0644` is 420, `1_000` is 1000, and `yes`
//! and `y` are true (`tests/it/kubectl_reader.rs` compares the two readers);
//! a scalar with a tag of another schema than YAML's (`!custom 12`)
//! is a string; aliases expand and merge keys (`<<: *base`) merge, with local
//! keys winning. Keys are their text: kubectl would write `0x10:` as `16` and
//! `yes:` as `true`, which the tool does not (the editor finds keys by text).

use std::collections::HashMap;

use serde_json::{Map, Number, Value};

use super::expansion::{Expanded, Size};
use super::node::{Node, NodeKind, ScalarStyle};

/// A value that could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ValueError {
    pub message: String,
    /// Byte offset of the node at fault.
    pub offset: usize,
}

/// Resolve `node` (the root of a document) to a JSON value.
pub fn to_value(node: &Node<'_>) -> Result<Value, ValueError> {
    Resolver::new().value(node)
}

/// [`to_value`], built over `earlier` (the value of an earlier document, no
/// longer needed): where the two agree in shape, its strings, lists and
/// mappings are written over in place instead of built anew and freed. A run
/// of alike workloads then costs little more than reading it.
pub fn to_value_over(node: &Node<'_>, earlier: Option<Value>) -> Result<Value, ValueError> {
    let Some(mut value) = earlier else {
        return to_value(node);
    };
    Resolver::new().write_over(node, &mut value)?;
    Ok(value)
}

/// Resolves nodes, remembering anchors as it meets them, so that a later
/// alias (or a later call for a node inside the same document) expands.
/// What its aliases expand to is held to the parser's limits (see
/// `expansion.rs`), unless it resolves a document resolved once already.
pub struct Resolver {
    anchors: HashMap<usize, (Value, Size)>,
    /// What the aliases expanded so far stand for; `None` when unbounded.
    expanded: Option<Expanded>,
}

impl Default for Resolver {
    fn default() -> Self {
        Self::new()
    }
}

impl Resolver {
    pub fn new() -> Self {
        Resolver {
            anchors: HashMap::new(),
            expanded: Some(Expanded::default()),
        }
    }

    /// A resolver without an expansion budget, for documents already resolved once.
    pub fn unbounded() -> Self {
        Resolver {
            anchors: HashMap::new(),
            expanded: None,
        }
    }

    /// A resolver that knows every anchor of the document `root`, for
    /// resolving its nodes in any order. The document was resolved once
    /// already, so no expansion budget applies.
    pub fn for_document(root: &Node<'_>) -> Result<Self, ValueError> {
        let mut resolver = Resolver::new();
        resolver.value(root)?;
        resolver.expanded = None;
        Ok(resolver)
    }

    /// The value an anchor stands for.
    pub fn anchor(&self, id: usize) -> Option<&Value> {
        self.anchors.get(&id).map(|(value, _)| value)
    }

    /// Count an alias of `size` (at byte `offset`): refused before it is
    /// expanded when the aliases would stand for too much.
    fn spend(&mut self, size: Size, offset: usize) -> Result<(), ValueError> {
        let Some(expanded) = self.expanded else {
            return Ok(());
        };
        let expanded = expanded.plus(Expanded {
            nodes: size.nodes,
            bytes: size.written_at(0),
        });
        if let Some(why) = expanded.too_much() {
            return Err(ValueError {
                message: format!("aliases expand to {why} (an alias bomb?)"),
                offset,
            });
        }
        self.expanded = Some(expanded);
        Ok(())
    }

    /// The value of `node`.
    pub fn value(&mut self, node: &Node<'_>) -> Result<Value, ValueError> {
        let value = match &node.kind {
            NodeKind::Scalar { text, style, tag } => resolve_scalar(text, *style, tag.as_deref()),
            NodeKind::Alias(id) => {
                let Some(size) = self.anchors.get(id).map(|(_, size)| *size) else {
                    return Err(ValueError {
                        message: "alias refers to an unknown anchor".into(),
                        offset: node.start,
                    });
                };
                self.spend(size, node.start)?;
                self.anchors
                    .get(id)
                    .map(|(value, _)| value.clone())
                    .unwrap_or_default()
            }
            NodeKind::Seq { items, .. } => {
                let mut values = Vec::with_capacity(items.len());
                for item in items {
                    values.push(self.value(item)?);
                }
                Value::Array(values)
            }
            NodeKind::Map { entries, .. } => {
                let mut local = Map::with_capacity(entries.len());
                for (key, value) in entries.iter().filter(|(k, _)| !is_merge_key(k)) {
                    local.insert(self.key(key)?, self.value(value)?);
                }
                Value::Object(self.merged(entries, local)?)
            }
        };
        if let Some(anchor) = node.anchor {
            if self.expanded.is_some() || !self.anchors.contains_key(&anchor) {
                self.anchors
                    .insert(anchor, (value.clone(), Size::of_value(&value)));
            }
        }
        Ok(value)
    }

    /// Write the value of `node` over `target`, keeping what of it agrees.
    fn write_over(&mut self, node: &Node<'_>, target: &mut Value) -> Result<(), ValueError> {
        // Anchors and aliases go the usual way, which records and expands them.
        if node.anchor.is_some() {
            *target = self.value(node)?;
            return Ok(());
        }
        match (&node.kind, &mut *target) {
            (NodeKind::Scalar { text, style, tag }, Value::String(s))
                if scalar_is_string(text, *style, tag.as_deref()) =>
            {
                s.clear();
                s.push_str(text);
            }
            (NodeKind::Seq { items, .. }, Value::Array(values)) => {
                values.truncate(items.len());
                for (item, value) in items.iter().zip(values.iter_mut()) {
                    self.write_over(item, value)?;
                }
                for item in items.iter().skip(values.len()) {
                    values.push(self.value(item)?);
                }
            }
            (NodeKind::Map { entries, .. }, Value::Object(map)) => {
                if !keep_keys_of(entries, map) {
                    *target = self.value(node)?;
                    return Ok(());
                }
                for ((_, node), (_, value)) in entries.iter().zip(map.iter_mut()) {
                    self.write_over(node, value)?;
                }
            }
            (_, target) => *target = self.value(node)?,
        }
        Ok(())
    }

    /// What the merge keys (`<<`) among `entries` bring, under `local`:
    /// earlier merge sources win over later ones, local keys over all.
    pub fn merged(
        &mut self,
        entries: &[(Node<'_>, Node<'_>)],
        local: Map<String, Value>,
    ) -> Result<Map<String, Value>, ValueError> {
        let mut out = Map::new();
        for (_, value) in entries.iter().filter(|(k, _)| is_merge_key(k)) {
            let sources = match self.value(value)? {
                Value::Object(m) => vec![m],
                Value::Array(list) => list
                    .into_iter()
                    .map(|item| match item {
                        Value::Object(m) => Ok(m),
                        _ => Err(merge_error(value)),
                    })
                    .collect::<Result<_, _>>()?,
                _ => return Err(merge_error(value)),
            };
            for source in sources {
                for (k, v) in source {
                    out.entry(k).or_insert(v);
                }
            }
        }
        if out.is_empty() {
            return Ok(local);
        }
        out.extend(local);
        Ok(out)
    }

    fn key(&mut self, key: &Node<'_>) -> Result<String, ValueError> {
        match &key.kind {
            NodeKind::Scalar { text, .. } => Ok(text.to_string()),
            _ => match self.value(key)? {
                Value::String(s) => Ok(s),
                other => Ok(other.to_string()),
            },
        }
    }
}

/// Take out of `map` the keys the mapping `entries` lacks, and say whether
/// what is left has the entries' keys in their order (so that the values can
/// be written over one by one). Mappings with merge keys or keys that are not
/// scalars are built anew.
fn keep_keys_of(entries: &[(Node<'_>, Node<'_>)], map: &mut Map<String, Value>) -> bool {
    if entries
        .iter()
        .any(|(k, _)| k.as_str().is_none() || is_merge_key(k))
    {
        return false;
    }
    crate::json::retain_in_order(map, entries.iter().filter_map(|(k, _)| k.as_str()))
}

/// Whether a scalar resolves to a string (see [`resolve_scalar`]).
fn scalar_is_string(text: &str, style: ScalarStyle, tag: Option<&str>) -> bool {
    match tag {
        Some("str") => true,
        Some(other) if is_foreign_tag(other) => true,
        Some("null") => false,
        Some("bool" | "int" | "float") => plain_reads_as_string(text),
        _ => style != ScalarStyle::Plain || plain_reads_as_string(text),
    }
}

/// Whether a scalar's `tag` (see [`NodeKind::Scalar`]) is of another schema
/// than YAML's own (`!custom`, `!`): written with its `!`.
pub fn is_foreign_tag(tag: &str) -> bool {
    tag.starts_with('!')
}

/// Whether `key` is the merge key `<<`.
pub fn is_merge_key(key: &Node<'_>) -> bool {
    matches!(&key.kind, NodeKind::Scalar { text, style: ScalarStyle::Plain, .. } if text == "<<")
}

fn merge_error(node: &Node<'_>) -> ValueError {
    ValueError {
        message: "a merge key (<<) must refer to a mapping or a list of mappings".into(),
        offset: node.start,
    }
}

/// Resolve one scalar; only plain scalars can be anything but strings.
pub fn resolve_scalar(text: &str, style: ScalarStyle, tag: Option<&str>) -> Value {
    match tag {
        Some("str") => return Value::String(text.to_string()),
        // kubectl reads a scalar with a tag it does not know as its text.
        Some(other) if is_foreign_tag(other) => return Value::String(text.to_string()),
        Some("null") => return Value::Null,
        Some("bool" | "int" | "float") => return resolve_plain(text),
        _ => {}
    }
    if style == ScalarStyle::Plain {
        resolve_plain(text)
    } else {
        Value::String(text.to_string())
    }
}

/// Whether a scalar resolves to `target`, without building its value when
/// `target` is a string (the common case when comparing documents).
pub fn scalar_matches(text: &str, style: ScalarStyle, tag: Option<&str>, target: &Value) -> bool {
    match target {
        Value::String(s) if s != text => false,
        Value::String(_)
            if tag == Some("str") || (tag.is_none() && style != ScalarStyle::Plain) =>
        {
            true
        }
        // A plain scalar with the target's text: the target unless it reads as
        // a null, a bool or a number.
        Value::String(_) if tag.is_none() => plain_reads_as_string(text),
        _ => resolve_scalar(text, style, tag) == *target,
    }
}

/// Whether two values are equal with their mappings' keys in the same order.
///
/// Faster than `==`, which looks each key up in the other map (hashing it):
/// here the entries are walked side by side. It is also what a rendering
/// depends on, since key order is text order.
pub fn same_in_order(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => same_maps_in_order(a, b),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same_in_order(a, b))
        }
        // Most leaves are strings: compared here, without a call.
        (Value::String(a), Value::String(b)) => a == b,
        _ => a == b,
    }
}

/// [`same_in_order`] for two mappings.
pub fn same_maps_in_order(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((ka, va), (kb, vb))| ka == kb && same_in_order(va, vb))
}

/// What a plain scalar means: null, bool, number or string.
pub fn resolve_plain(text: &str) -> Value {
    plain_non_string(text).unwrap_or_else(|| Value::String(text.to_string()))
}

/// Whether a plain scalar reads as a string (and not as null, a bool or a
/// number); asked for every string written, so it allocates nothing.
pub fn plain_reads_as_string(text: &str) -> bool {
    plain_non_string(text).is_none()
}

/// The null, bool or number a plain scalar stands for; `None` for a string.
fn plain_non_string(text: &str) -> Option<Value> {
    let Some(&first) = text.as_bytes().first() else {
        return Some(Value::Null);
    };
    let numeric = first.is_ascii_digit() || matches!(first, b'-' | b'+' | b'.');
    // No null or bool is written with more than five characters.
    if text.len() > 5 && !numeric {
        return None;
    }
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Some(Value::Null),
        "true" | "True" | "TRUE" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" | "y" | "Y" => {
            return Some(Value::Bool(true));
        }
        "false" | "False" | "FALSE" | "no" | "No" | "NO" | "off" | "Off" | "OFF" | "n" | "N" => {
            return Some(Value::Bool(false));
        }
        _ => {}
    }
    if !numeric {
        return None;
    }
    if let Some(n) = parse_int(text) {
        return Some(Value::Number(n));
    }
    if is_float(text) {
        let cleaned: String = text.chars().filter(|&c| c != '_').collect();
        return cleaned
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number);
    }
    None
}

fn parse_int(text: &str) -> Option<Number> {
    let (negative, digits) = if let Some(rest) = text.strip_prefix('-') {
        (true, rest)
    } else {
        (false, text.strip_prefix('+').unwrap_or(text))
    };
    if digits.is_empty() {
        return None;
    }
    // Go's base prefixes, in either case.
    let prefixed = |lower: char| {
        digits
            .strip_prefix('0')
            .and_then(|rest| rest.strip_prefix([lower, lower.to_ascii_uppercase()]))
    };
    let (radix, body) = if let Some(hex) = prefixed('x') {
        (16, hex)
    } else if let Some(oct) = prefixed('o') {
        (8, oct)
    } else if let Some(bin) = prefixed('b') {
        (2, bin)
    } else if let Some(oct) = digits.strip_prefix('0').filter(|rest| !rest.is_empty()) {
        (8, oct)
    } else {
        (10, digits)
    };
    // Underscores go before the digits are read, as go-yaml drops them.
    if body.is_empty() || !body.bytes().all(|b| b.is_ascii_hexdigit() || b == b'_') {
        return None;
    }
    let magnitude = if body.contains('_') {
        let cleaned: String = body.chars().filter(|&c| c != '_').collect();
        u64::from_str_radix(&cleaned, radix).ok()?
    } else {
        u64::from_str_radix(body, radix).ok()?
    };
    if negative {
        let signed = i64::try_from(-i128::from(magnitude)).ok()?;
        Some(Number::from(signed))
    } else {
        Some(Number::from(magnitude))
    }
}

fn is_float(text: &str) -> bool {
    // go-yaml reads a scalar that starts with a dot with Go's float parser
    // as it is, which takes no underscore there.
    if text.starts_with('.') && text.contains('_') {
        return false;
    }
    let body = text.strip_prefix(['-', '+']).unwrap_or(text);
    let (mantissa, exponent) = match body.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => (mantissa, Some(exponent)),
        None => (body, None),
    };
    let mut digits = 0;
    let mut dots = 0;
    for b in mantissa.bytes() {
        match b {
            b'0'..=b'9' => digits += 1,
            b'.' => dots += 1,
            b'_' => {}
            _ => return false,
        }
    }
    if digits == 0 || dots > 1 {
        return false;
    }
    match exponent {
        None => true,
        Some(exp) => {
            let exp = exp.strip_prefix(['-', '+']).unwrap_or(exp);
            !exp.is_empty() && exp.bytes().all(|b| b.is_ascii_digit())
        }
    }
}

#[cfg(test)]
// Tests may slice: a panic there is a failed test (as clippy.toml says for indexing).
#[allow(clippy::string_slice)]
mod tests {
    use super::*;
    use crate::json::testing::values;
    use crate::yaml::parse::parse_stream;
    use serde_json::json;

    fn value_of(text: &str) -> Value {
        let docs = parse_stream(text).expect("parses");
        to_value(docs[0].root.as_ref().expect("root")).expect("resolves")
    }

    #[test]
    fn scalars_resolve_like_kubectl() {
        assert_eq!(resolve_plain("0644"), json!(420));
        assert_eq!(resolve_plain("0x1F"), json!(31));
        assert_eq!(resolve_plain("-12"), json!(-12));
        assert_eq!(resolve_plain("1.5"), json!(1.5));
        assert_eq!(resolve_plain("1e3"), json!(1000.0));
        assert_eq!(resolve_plain("yes"), json!(true));
        assert_eq!(resolve_plain("~"), json!(null));
        assert_eq!(resolve_plain("100m"), json!("100m"));
        assert_eq!(resolve_plain("1.2.3"), json!("1.2.3"));
        assert_eq!(resolve_plain("-"), json!("-"));
        assert_eq!(resolve_plain(".inf"), json!(".inf"));
    }

    #[test]
    fn scalars_resolve_as_kubectls_go_yaml_v2_does() {
        // Underscores anywhere after the first character, in any base.
        assert_eq!(resolve_plain("1_000"), json!(1000));
        assert_eq!(resolve_plain("1__0_"), json!(10));
        assert_eq!(resolve_plain("_1"), json!("_1"));
        assert_eq!(resolve_plain("-9223372036854775808"), json!(i64::MIN));
        assert_eq!(resolve_plain("18446744073709551615"), json!(u64::MAX));
    }

    #[test]
    fn scalars_with_a_tag_of_another_schema_are_strings() {
        let v = value_of(
            "a: !custom 12\nb: !custom\nc: ! 12\nd: !<tag:yaml.org,2002:str> 12\ne: !custom [1]\nf: !!float 1\n",
        );
        assert_eq!(
            v,
            json!({"a": "12", "b": "", "c": "12", "d": "12", "e": [1], "f": 1})
        );
    }

    #[test]
    fn quoted_and_tagged() {
        assert_eq!(
            value_of("a: \"1\"\nb: !!str 2\nc: '~'"),
            json!({"a": "1", "b": "2", "c": "~"})
        );
    }

    #[test]
    fn aliases_and_merge_keys() {
        let v = value_of("base: &b {x: 1, y: 2}\nuse: *b\nmerged:\n  <<: *b\n  y: 3\n");
        assert_eq!(v["use"], json!({"x": 1, "y": 2}));
        assert_eq!(v["merged"], json!({"x": 1, "y": 3}));
    }

    #[test]
    fn expansion_past_the_budget_is_refused() {
        // The parser refuses real bombs first; the resolver's own budget
        // still stops any expansion past it.
        let text = "a: &a [x, x, x, x]\nb: &b [*a, *a, *a, *a]\nc: [*b, *b, *b, *b]\n";
        let docs = parse_stream(text).expect("parses");
        let root = docs[0].root.as_ref().expect("root");
        // Near the limit already: b's aliases of a (4 × 5 nodes) reach
        // it, the first alias of b passes it.
        let mut small = Resolver {
            anchors: HashMap::new(),
            expanded: Some(Expanded {
                nodes: crate::yaml::expansion::MAX_ALIAS_NODES - 20,
                bytes: 0,
            }),
        };
        let err = small.value(root).expect_err("over budget");
        assert!(err.message.contains("alias bomb"), "{err:?}");
        assert_eq!(&text[err.offset..err.offset + 2], "*b", "{err:?}");
        assert!(to_value(root).is_ok());
    }

    /// The value of `text`'s only document, built over `earlier`.
    fn value_over(text: &str, earlier: Value) -> Value {
        let docs = parse_stream(text).expect("parses");
        to_value_over(docs[0].root.as_ref().expect("root"), Some(earlier)).expect("resolves")
    }

    #[test]
    fn a_value_built_over_an_earlier_one_is_the_documents_own() {
        let earlier = value_of("a: {x: one, y: [1, 2, 3], z: zed}\nb: old\nc: [p, q]\n");
        // Keys dropped, added and moved; lists longer and shorter; a string
        // becoming a number, a null, a tagged value; anchors and merge keys.
        let text = "a: {x: 0644, z: \"zed\", w: yes}\nb: !!str 12\nc: [p, ~, {k: v}]\n\
                    d: &d {m: n}\ne:\n  <<: *d\n  o: p\nf: *d\n";
        let got = value_over(text, earlier);
        let want = value_of(text);
        assert!(same_in_order(&got, &want), "{got} != {want}");
        assert_eq!(
            got,
            json!({"a": {"x": 420, "z": "zed", "w": true}, "b": "12", "c": ["p", null, {"k": "v"}],
                   "d": {"m": false}, "e": {"m": false, "o": "p"}, "f": {"m": false}})
        );
    }

    proptest::proptest! {
        #[test]
        fn building_over_any_earlier_value_gives_the_same_value(a in values(), b in values()) {
            let layout = crate::yaml::emit::Layout::default();
            let text = |v: &Value| layout.block_entry(0, "doc", v);
            let got = value_over(&text(&b), value_of(&text(&a)));
            let want = value_of(&text(&b));
            proptest::prop_assert!(same_in_order(&got, &want), "{} != {}", got, want);
        }

        /// Comparing a scalar in place says what resolving it and comparing says.
        #[test]
        fn a_scalar_matches_what_it_resolves_to(
            text in "(~|null|true|no|0x1F|012|1_0|-1|\\.5|1e3|\\.inf|[a-z0-9 .:-]{0,6})",
            other in "(~|null|true|no|0x1F|012|1_0|-1|\\.5|1e3|\\.inf|[a-z0-9 .:-]{0,6})",
            style in proptest::sample::select(vec![
                ScalarStyle::Plain,
                ScalarStyle::SingleQuoted,
                ScalarStyle::DoubleQuoted,
            ]),
            tag in proptest::sample::select(vec![None, Some("str"), Some("int"), Some("bool"), Some("null")]),
        ) {
            for target in [
                Value::String(text.clone()),
                Value::String(other.clone()),
                resolve_plain(&text),
                resolve_plain(&other),
            ] {
                let resolved = resolve_scalar(&text, style, tag) == target;
                proptest::prop_assert_eq!(scalar_matches(&text, style, tag, &target), resolved);
            }
        }
    }
}

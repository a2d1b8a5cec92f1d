//! Stand-ins for a workload's own strings, so that what is rendered for one
//! workload serves the next: workloads alike but for their names render
//! alike but for their names. A rendering is made once with each of the
//! workload's strings replaced by a stand-in (a token numbered by where the
//! string stands), and each workload gets that rendering with its own
//! strings put back ([`fill`]).
//!
//! That is only right when the rendering did nothing with a string but copy
//! it: its users keep the strings they inspect for real (the profile, the
//! names it decides on; the cluster's templates, those its functions give
//! another answer for) and check the rest.
//!
//! A token is ASCII letters and digits (`qXmi7Sq`), which no quoting,
//! escaping or plain YAML scalar changes; a workload whose strings hold the
//! token's start is rendered for real (see [`crate::sentinel`]).

use serde_json::{Map, Value};

use crate::sentinel::{PLAIN_MARK, TOKEN_END as END, TOKEN_START as START, token_start};

/// Marks a string that was a plain scalar in a rendering of the cluster's
/// template (see [`crate::sentinel`]): filled by
/// [`fill_marked_plain_in_place`], it is read again as YAML reads a plain
/// scalar (`"8080"` for a stand-in becomes the number 8080). Every other
/// filling leaves it as it is.
pub const PLAIN: char = PLAIN_MARK;

/// The strings a rendering's stand-ins stand for, by number.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct StandIns {
    reals: Vec<String>,
}

impl StandIns {
    /// A stand-in for `real`; `None` when `real` holds a token's start (it
    /// cannot be told from one).
    pub fn stand_in(&mut self, real: &str) -> Option<String> {
        let mut token = String::with_capacity(START.len() + END.len() + 4);
        self.push_stand_in(real, &mut token)?;
        Some(token)
    }

    /// [`StandIns::stand_in`], written at the end of `out`.
    fn push_stand_in(&mut self, real: &str, out: &mut String) -> Option<()> {
        if has_token(real) {
            return None;
        }
        self.reals.push(real.to_string());
        push_token(out, self.reals.len() - 1);
        Some(())
    }

    /// The strings, by the number of their stand-in.
    pub fn reals(&self) -> &[String] {
        &self.reals
    }

    /// `value` with each string (not key) that is not empty replaced by a
    /// stand-in; `None` when a string cannot have one.
    pub fn stand_in_value(&mut self, value: &Value) -> Option<Value> {
        Some(match value {
            Value::String(s) if !s.is_empty() => Value::String(self.stand_in(s)?),
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|item| self.stand_in_value(item))
                    .collect::<Option<_>>()?,
            ),
            // A key like a stand-in would be filled too.
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| match has_token(k) {
                        true => None,
                        false => Some((k.clone(), self.stand_in_value(v)?)),
                    })
                    .collect::<Option<_>>()?,
            ),
            other => other.clone(),
        })
    }
}

impl StandIns {
    /// [`StandIns::stand_in_value`] of `value` as text, written into `out`
    /// rather than built: the same stand-ins, in the same order, and text
    /// that two values share exactly when their stand-in values are equal
    /// (strings are stand-ins or empty, keys quoted). `None` when a string
    /// cannot have a stand-in.
    pub fn write_stood_in(&mut self, value: &Value, out: &mut String) -> Option<()> {
        match value {
            Value::String(s) if !s.is_empty() => {
                out.push('"');
                self.push_stand_in(s, out)?;
                out.push('"');
            }
            Value::String(_) => out.push_str("\"\""),
            Value::Array(items) => {
                out.push('[');
                for item in items {
                    self.write_stood_in(item, out)?;
                    out.push(',');
                }
                out.push(']');
            }
            Value::Object(map) => {
                out.push('{');
                for (key, item) in map {
                    if has_token(key) {
                        return None;
                    }
                    out.push('"');
                    if key.contains(['"', '\\']) {
                        for c in key.chars() {
                            if matches!(c, '"' | '\\') {
                                out.push('\\');
                            }
                            out.push(c);
                        }
                    } else {
                        out.push_str(key);
                    }
                    out.push_str("\":");
                    self.write_stood_in(item, out)?;
                    out.push(',');
                }
                out.push('}');
            }
            other => {
                use std::fmt::Write;
                let _ = write!(out, "{other}");
            }
        }
        Some(())
    }
}

/// The stand-in numbered `n`.
pub fn token(n: usize) -> String {
    let mut token = String::with_capacity(START.len() + END.len() + 4);
    push_token(&mut token, n);
    token
}

/// The stand-in numbered `n`, written at the end of `out`.
fn push_token(out: &mut String, n: usize) {
    // Made for every string of every workload rendered alike: without the
    // formatting machinery.
    fn push_number(out: &mut String, n: usize) {
        if n >= 10 {
            push_number(out, n / 10);
        }
        out.push(char::from(b'0' + (n % 10) as u8));
    }
    out.push_str(START);
    push_number(out, n);
    out.push_str(END);
}

/// Whether `s` holds a stand-in (or something that starts like one).
pub fn has_token(s: &str) -> bool {
    token_start(s).is_some()
}

/// The text before the first stand-in in `s`, its number, and the text
/// after it: `Some(None)` when there is none, `None` for a broken one.
fn split_token(s: &str) -> Option<Option<(&str, usize, &str)>> {
    let Some(at) = token_start(s) else {
        return Some(None);
    };
    let (before, after) = (s.get(..at)?, s.get(at + START.len()..)?);
    let digits = after.bytes().take_while(u8::is_ascii_digit).count();
    let n = after.get(..digits)?.parse().ok()?;
    let rest = after.get(digits..)?.strip_prefix(END)?;
    Some(Some((before, n, rest)))
}

/// The numbers of the stand-ins in `s`, in order; `None` when `s` holds a
/// token's start that is not a whole token (a function cut or changed it).
pub fn tokens_in(s: &str) -> Option<Vec<usize>> {
    let mut found = Vec::new();
    let mut rest = s;
    while let Some((_, n, after)) = split_token(rest)? {
        found.push(n);
        rest = after;
    }
    Some(found)
}

/// `s` with each stand-in replaced by its string; `None` when a token is
/// broken or its number has no string.
pub fn fill_str(s: &str, reals: &[String]) -> Option<String> {
    if !has_token(s) {
        return Some(s.to_string());
    }
    let mut out = String::with_capacity(s.len() + 32);
    let mut rest = s;
    while let Some((before, n, after)) = split_token(rest)? {
        out.push_str(before);
        out.push_str(reals.get(n)?);
        rest = after;
    }
    out.push_str(rest);
    Some(out)
}

/// `value` with its stand-ins replaced by their strings, in strings and
/// keys. `None` when a token is broken, or two keys of a mapping fill the
/// same.
pub fn fill(value: &Value, reals: &[String]) -> Option<Value> {
    // A copy keeps the mappings' tables (no key is hashed again); only the
    // strings with stand-ins are written anew.
    let mut value = value.clone();
    fill_in_place(&mut value, reals)?;
    Some(value)
}

/// How a filling takes strings marked [`PLAIN`].
#[derive(Clone, Copy, PartialEq)]
enum Plain {
    /// As any string: only the cluster template's reading marks them.
    AsText,
    /// Read as YAML reads a plain scalar once filled.
    Read,
}

/// Where a value's stand-ins are: found once for a rendering that many
/// workloads share, so that filling it for each visits only them.
#[derive(Debug, Clone, PartialEq)]
pub enum Marks {
    /// Filled whole: a string with a stand-in (or the plain mark), or a
    /// mapping with one in a key.
    Whole,
    /// The entries (by position) or items (by index) that hold one.
    Map(Vec<(usize, Marks)>),
    List(Vec<(usize, Marks)>),
}

impl Marks {
    /// The marks of `value`; `None` when it holds no stand-in.
    pub fn of(value: &Value) -> Option<Marks> {
        match value {
            Value::String(s) if has_token(s) => Some(Marks::Whole),
            Value::Object(map) if map.keys().any(|k| has_token(k)) => Some(Marks::Whole),
            Value::Object(map) => Marks::of_each(map.values()).map(Marks::Map),
            Value::Array(items) => Marks::of_each(items.iter()).map(Marks::List),
            _ => None,
        }
    }

    /// The marks of those of `values` that hold a stand-in, by position;
    /// `None` when none does.
    fn of_each<'v>(values: impl Iterator<Item = &'v Value>) -> Option<Vec<(usize, Marks)>> {
        let marked: Vec<_> = values
            .enumerate()
            .filter_map(|(i, v)| Some((i, Marks::of(v)?)))
            .collect();
        (!marked.is_empty()).then_some(marked)
    }
}

/// [`fill`] of `value` whose stand-ins are where `marks` (its
/// [`Marks::of`]) says: the same value, without looking at the rest.
pub fn fill_marked(value: &Value, marks: Option<&Marks>, reals: &[String]) -> Option<Value> {
    let mut value = value.clone();
    fill_marked_in_place(&mut value, marks, reals)?;
    Some(value)
}

/// [`fill_marked`], in place.
pub fn fill_marked_in_place(
    value: &mut Value,
    marks: Option<&Marks>,
    reals: &[String],
) -> Option<()> {
    fill_marked_as(value, marks, reals, Plain::AsText)
}

/// [`fill_marked_in_place`] of a rendering of the cluster's template whose
/// plain scalars holding a stand-in were marked [`PLAIN`] (and nothing
/// else holds the mark): each is read as a plain scalar once filled.
pub fn fill_marked_plain_in_place(
    value: &mut Value,
    marks: Option<&Marks>,
    reals: &[String],
) -> Option<()> {
    fill_marked_as(value, marks, reals, Plain::Read)
}

fn fill_marked_as(
    value: &mut Value,
    marks: Option<&Marks>,
    reals: &[String],
    plain: Plain,
) -> Option<()> {
    match marks {
        Some(marks) => fill_at(value, marks, reals, plain),
        None => Some(()),
    }
}

fn fill_at(value: &mut Value, marks: &Marks, reals: &[String], plain: Plain) -> Option<()> {
    match (marks, value) {
        (Marks::Whole, value) => fill_value(value, reals, plain),
        (Marks::Map(marked), Value::Object(map)) => {
            let mut marked = marked.iter().peekable();
            for (at, entry) in map.values_mut().enumerate() {
                if let Some((_, marks)) = marked.next_if(|(i, _)| *i == at) {
                    fill_at(entry, marks, reals, plain)?;
                }
            }
            marked.next().is_none().then_some(())
        }
        (Marks::List(marked), Value::Array(items)) => {
            for (at, marks) in marked {
                fill_at(items.get_mut(*at)?, marks, reals, plain)?;
            }
            Some(())
        }
        _ => None,
    }
}

/// [`fill`] for a mapping.
pub fn fill_map(map: &Map<String, Value>, reals: &[String]) -> Option<Map<String, Value>> {
    let mut map = map.clone();
    fill_entries(&mut map, reals, Plain::AsText)?;
    Some(map)
}

/// [`fill`], in place.
pub fn fill_in_place(value: &mut Value, reals: &[String]) -> Option<()> {
    fill_value(value, reals, Plain::AsText)
}

fn fill_value(value: &mut Value, reals: &[String], plain: Plain) -> Option<()> {
    match value {
        Value::String(s) => match s.strip_prefix(PLAIN) {
            Some(marked) if plain == Plain::Read => {
                *value = crate::yaml::value::resolve_plain(&fill_str(marked, reals)?);
            }
            _ if has_token(s) => *s = fill_str(s, reals)?,
            _ => {}
        },
        Value::Array(items) => {
            for item in items {
                fill_value(item, reals, plain)?;
            }
        }
        Value::Object(map) => fill_entries(map, reals, plain)?,
        _ => {}
    }
    Some(())
}

fn fill_entries(map: &mut Map<String, Value>, reals: &[String], plain: Plain) -> Option<()> {
    if map.keys().any(|k| has_token(k)) {
        let mut out = Map::with_capacity(map.len());
        for (k, v) in std::mem::take(map) {
            if out.insert(fill_str(&k, reals)?, v).is_some() {
                return None;
            }
        }
        *map = out;
    }
    for value in map.values_mut() {
        fill_value(value, reals, plain)?;
    }
    Some(())
}

/// Whether `value` holds a stand-in anywhere (keys included).
pub fn value_has_token(value: &Value) -> bool {
    match value {
        Value::String(s) => has_token(s),
        Value::Array(items) => items.iter().any(value_has_token),
        Value::Object(map) => map.iter().any(|(k, v)| has_token(k) || value_has_token(v)),
        _ => false,
    }
}

/// Whether `real`, put where its stand-in stands in YAML text, reads as
/// the stand-in read there: whatever the context (plain, quoted, JSON in
/// a string, a key, a flow collection), a string of letters, digits and
/// `-._/:@+=~` that starts and ends with a letter or digit, and is not a
/// null, changes nothing of the text's structure and needs no escape.
pub fn fits_in_text(real: &str) -> bool {
    // Nor does a null (which no key may be), but it is all letters.
    if matches!(real, "null" | "Null" | "NULL") {
        return false;
    }
    let bytes = real.as_bytes();
    let edge = |b: Option<&u8>| b.is_some_and(u8::is_ascii_alphanumeric);
    edge(bytes.first())
        && edge(bytes.last())
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"-._/:@+=~".contains(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stand_ins_go_in_and_come_out() {
        let mut stand_ins = StandIns::default();
        let value = json!({"name": "web-0", "labels": {"app": "web"}, "empty": "", "port": 8080});
        let abstracted = stand_ins.stand_in_value(&value).expect("stands in");
        assert_eq!(
            abstracted,
            json!({"name": token(0), "labels": {"app": token(1)}, "empty": "", "port": 8080})
        );
        assert_eq!(fill(&abstracted, stand_ins.reals()), Some(value));
        assert_eq!(
            tokens_in(&format!("a{}b{}", token(1), token(0))),
            Some(vec![1, 0])
        );
        assert_eq!(tokens_in(&format!("a{START}7"),), None, "a cut token");
        assert!(stand_ins.stand_in(&format!("x{START}")).is_none());
    }

    /// Filling where the marks say gives what filling everything gives.
    #[test]
    fn filling_at_the_marks_is_filling_everything() {
        let reals = ["web".to_string(), "8080".into(), "null".into(), "a".into()];
        let values = [
            json!({"name": token(0), "port": format!("{PLAIN}{}", token(1)), "fixed": "x",
                "env": [{"name": "A", "value": "1"}, {"name": "B", "value": format!("{}-{}", token(0), token(3))}],
                "deep": {"a": {"b": [1, 2, {"c": token(2)}]}, "d": true}}),
            json!({token(0): {"x": token(3)}, "other": token(1)}),
            json!([token(0), "plain", [token(1)], {"k": format!("{PLAIN}{}", token(2))}]),
            json!({"nothing": ["to", "fill"], "n": 1}),
            json!(token(3)),
            json!(format!("{PLAIN}{}", token(1))),
        ];
        for value in values {
            let marks = Marks::of(&value);
            assert_eq!(
                fill_marked(&value, marks.as_ref(), &reals),
                fill(&value, &reals),
                "{value}"
            );
        }
        assert_eq!(Marks::of(&json!({"a": [1, "b"]})), None);
        let clash = json!({token(0): 1, token(3): 2});
        let same = ["a".to_string(), String::new(), String::new(), "a".into()];
        assert_eq!(fill_marked(&clash, Marks::of(&clash).as_ref(), &same), None);
    }

    /// The text of a value's stand-ins is the same for two values exactly
    /// when their stand-in values are, with the same strings stood in.
    #[test]
    fn stood_in_text_tells_values_apart_as_their_stand_ins_do() {
        let values = [
            json!({"name": "web-0", "labels": {"app": "web"}, "port": 8080, "on": true, "none": null}),
            json!({"name": "web-1", "labels": {"app": "api"}, "port": 8080, "on": true, "none": null}),
            json!({"name": "web-1", "labels": {"app": "api"}, "port": 8081, "on": true, "none": null}),
            json!({"name": "web-1", "labels": {"app": ""}, "port": 8080, "on": true, "none": null}),
            json!({"name": "web-1", "labels": {"ap\"p": "x"}, "port": 8080, "on": true, "none": null}),
            json!({"name": "web-1", "labels": {"ap\\": "x"}, "port": 8080, "on": true, "none": null}),
            json!({"name": "web-1", "labels": {}, "port": 8080.0, "on": true, "none": null}),
            json!(["a", ["b"], [], {}]),
            json!(["a", [], ["b"], {}]),
            json!(["x", "y"]),
            json!([["x"], "y"]),
            json!({"a,b": "1"}),
            json!({"a": "1", "b": "2"}),
        ];
        let stood = |v: &Value| {
            let mut built = StandIns::default();
            let value = built.stand_in_value(v).expect("stands in");
            let mut written = StandIns::default();
            let mut text = String::new();
            written.write_stood_in(v, &mut text).expect("writes");
            assert_eq!(built.reals(), written.reals(), "{v}");
            (value, text)
        };
        for a in &values {
            for b in &values {
                let ((va, ta), (vb, tb)) = (stood(a), stood(b));
                assert_eq!(va == vb, ta == tb, "{a} / {b}");
            }
        }
        let mut refused = StandIns::default();
        assert!(
            refused
                .write_stood_in(&json!({START: 1}), &mut String::new())
                .is_none()
        );
    }

    #[test]
    fn tokens_are_numbered() {
        for n in [0, 7, 10, 99, 1234, usize::MAX] {
            assert_eq!(token(n), format!("{START}{n}{END}"));
            assert_eq!(tokens_in(&token(n)), Some(vec![n]));
        }
    }

    #[test]
    fn tokens_are_found_wherever_they_stand() {
        for holds in [START, "qXmi0Sq", "aqXmi", "qqXmi", "q qXmiq", "éqXmi"] {
            assert!(has_token(holds), "{holds}");
        }
        for not in ["", "q", "qXm", "qXmj", "Xmi", "q-X-m-i", "QXMI", "qé"] {
            assert!(!has_token(not), "{not}");
        }
    }

    #[test]
    fn plain_strings_are_read_again() {
        let reals = ["8080".to_string(), "true".into(), "web".into()];
        let rendered = json!({
            "a": format!("{PLAIN}{}", token(0)),
            "b": format!("{PLAIN}{}", token(1)),
            "c": format!("{PLAIN}{}-x", token(0)),
            "d": token(0),
            token(2): "k",
        });
        let mut read = rendered.clone();
        fill_marked_plain_in_place(&mut read, Marks::of(&rendered).as_ref(), &reals);
        assert_eq!(
            read,
            json!({"a": 8080, "b": true, "c": "8080-x", "d": "8080", "web": "k"})
        );
        // Any other filling leaves the mark as text: a user's string may
        // start with the character.
        let users = json!({"image": format!("{PLAIN}true"), "name": token(2)});
        assert_eq!(
            fill(&users, &reals),
            Some(json!({"image": format!("{PLAIN}true"), "name": "web"}))
        );
        let mut read = users.clone();
        fill_marked_plain_in_place(&mut read, Marks::of(&users).as_ref(), &reals);
        assert_eq!(read["image"], users["image"], "unmarked: not a stand-in's");
        let clash = json!({token(0): 1, token(1): 2});
        assert_eq!(fill(&clash, &["a".into(), "a".into()]), None);
    }

    #[test]
    fn what_fits_in_text() {
        for fits in [
            "web-0",
            "registry.example.com/web:0.0.1",
            "8080",
            "a",
            "x@y+z=1~2",
        ] {
            assert!(fits_in_text(fits), "{fits}");
        }
        for not in [
            "", "-web", "web:", "a b", "a#b", "a\"b", "a'b", "a,b", "a\\b", "é", "a\nb", "null",
            "NULL",
        ] {
            assert!(!fits_in_text(not), "{not}");
        }
    }
}

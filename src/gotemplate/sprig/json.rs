//! Sprig's JSON: `fromJson` (as Go decodes into `interface {}`: float64
//! numbers), `toJson` (Go's `json.Marshal`: HTML characters escaped),
//! `toPrettyJson` (indented by two spaces), `toRawJson` (not escaped), and
//! their `must` forms, which fail where the plain ones answer nothing.

use std::fmt::Write as _;

use super::super::format::{go_json, json_float, json_string};
use super::super::funcs::{arg, arity, string};
use super::super::value::Value;
use super::Result;
use crate::gotemplate::Func;

pub const FUNCS: &[(&str, Func)] = &[
    ("fromJson", from_json),
    ("mustFromJson", must_from_json),
    ("toJson", to_json),
    ("mustToJson", must_to_json),
    ("toPrettyJson", to_pretty_json),
    ("mustToPrettyJson", must_to_pretty_json),
    ("toRawJson", to_raw_json),
    ("mustToRawJson", to_raw_json),
];

/// The value as `json.Marshal` writes it (see [`go_json`]).
pub fn go_json_text(value: &Value) -> String {
    go_json(value)
}

fn decode(text: &str) -> std::result::Result<Value, String> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(json) => Ok(Value::from_json(&json)),
        Err(e) if e.is_eof() => Err("unexpected end of JSON input".to_string()),
        Err(e) => Err(format!("invalid JSON: {e}")),
    }
}

fn from_json(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(decode(string(args, 0)?).unwrap_or(Value::Nil))
}

fn must_from_json(args: &[Value]) -> Result {
    arity(args, 1)?;
    decode(string(args, 0)?)
}

/// Go's message for a float JSON has no number for.
fn unsupported(value: &Value) -> Option<String> {
    match value {
        Value::Float(f) if !f.is_finite() => Some(format!(
            "json: unsupported value: {}",
            super::super::value::format_float_g(*f)
        )),
        Value::List(items) => items.iter().find_map(unsupported),
        Value::Map(map) => map.entries.values().find_map(unsupported),
        Value::Struct(s) => s.fields.iter().find_map(|f| unsupported(&f.value)),
        _ => None,
    }
}

fn to_json(args: &[Value]) -> Result {
    Ok(Value::str(
        must_to_json(args).map(|v| v.print()).unwrap_or_default(),
    ))
}

fn must_to_json(args: &[Value]) -> Result {
    arity(args, 1)?;
    let value = arg(args, 0);
    if let Some(message) = unsupported(value) {
        return Err(message);
    }
    Ok(Value::str(go_json(value)))
}

fn to_pretty_json(args: &[Value]) -> Result {
    Ok(Value::str(
        must_to_pretty_json(args)
            .map(|v| v.print())
            .unwrap_or_default(),
    ))
}

fn must_to_pretty_json(args: &[Value]) -> Result {
    arity(args, 1)?;
    let value = arg(args, 0);
    if let Some(message) = unsupported(value) {
        return Err(message);
    }
    let mut out = String::new();
    write(&value.to_json(), &mut out, Some(0), true);
    Ok(Value::str(out))
}

fn to_raw_json(args: &[Value]) -> Result {
    arity(args, 1)?;
    let value = arg(args, 0);
    if let Some(message) = unsupported(value) {
        return Err(message);
    }
    let mut out = String::new();
    write(&value.to_json(), &mut out, None, false);
    Ok(Value::str(out))
}

/// JSON as Go's encoder writes it: indented by two spaces a level when
/// `depth` is given, `<`, `>` and `&` escaped when `escape_html`.
fn write(json: &serde_json::Value, out: &mut String, depth: Option<usize>, escape_html: bool) {
    let newline = |out: &mut String, level: usize| {
        out.push('\n');
        out.push_str(&"  ".repeat(level));
    };
    match json {
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => {
                let _ = write!(out, "{i}");
            }
            None => out.push_str(&json_float(n.as_f64().unwrap_or(0.0))),
        },
        serde_json::Value::String(s) => {
            if escape_html {
                json_string(s, out);
            } else {
                raw_string(s, out);
            }
        }
        serde_json::Value::Array(items) if !items.is_empty() => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if let Some(level) = depth {
                    newline(out, level + 1);
                }
                write(item, out, depth.map(|d| d + 1), escape_html);
            }
            if let Some(level) = depth {
                newline(out, level);
            }
            out.push(']');
        }
        serde_json::Value::Object(map) if !map.is_empty() => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if let Some(level) = depth {
                    newline(out, level + 1);
                }
                if escape_html {
                    json_string(key, out);
                } else {
                    raw_string(key, out);
                }
                out.push(':');
                if depth.is_some() {
                    out.push(' ');
                }
                write(item, out, depth.map(|d| d + 1), escape_html);
            }
            if let Some(level) = depth {
                newline(out, level);
            }
            out.push('}');
        }
        serde_json::Value::Array(_) => out.push_str("[]"),
        serde_json::Value::Object(_) => out.push_str("{}"),
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// A JSON string without HTML escapes (U+2028 and U+2029 still escaped,
/// as Go's encoder does).
fn raw_string(s: &str, out: &mut String) {
    out.push('"');
    crate::gotemplate::format::push_escaped(s, out, false);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pretty_and_raw_json_are_go_json() {
        let v = Value::from_json(&json!({"b": [1, {"c": "<"}], "a": {}, "e": []}));
        assert_eq!(
            must_to_pretty_json(std::slice::from_ref(&v))
                .unwrap()
                .print(),
            "{\n  \"a\": {},\n  \"b\": [\n    1,\n    {\n      \"c\": \"\\u003c\"\n    }\n  ],\n  \"e\": []\n}"
        );
        assert_eq!(
            to_raw_json(&[v]).unwrap().print(),
            r#"{"a":{},"b":[1,{"c":"<"}],"e":[]}"#
        );
        assert!(must_to_json(&[Value::Float(f64::NAN)]).is_err());
        assert_eq!(to_json(&[Value::Float(f64::NAN)]).unwrap().print(), "");
    }
}

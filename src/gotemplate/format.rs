//! Text as Go writes it: `%q` quoting, `printf`, `json.Marshal`, and YAML
//! as `sigs.k8s.io/yaml` marshals (block style, keys in order, sequences
//! level with their key).

use std::fmt::Write as _;

use super::value::{Value, format_float_g};
use crate::yaml::emit::Layout;

/// A string quoted as Go's `strconv.Quote` (and `%q`) quotes it.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_control() || c == '\u{feff}' => {
                let code = c as u32;
                if code > 0xffff {
                    let _ = write!(out, "\\U{code:08x}");
                } else {
                    let _ = write!(out, "\\u{code:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The value as Go's `json.Marshal` writes it: no spaces, map keys sorted,
/// struct fields in order (both as [`Value::to_json`] gives them), `<`,
/// `>` and `&` escaped, floats as Go writes them.
pub fn go_json(value: &Value) -> String {
    let mut out = String::new();
    write_json(&value.to_json(), &mut out);
    out
}

fn write_json(value: &serde_json::Value, out: &mut String) {
    match value {
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => {
                let _ = write!(out, "{i}");
            }
            None => out.push_str(&json_float(n.as_f64().unwrap_or(0.0))),
        },
        serde_json::Value::String(s) => json_string(s, out),
        serde_json::Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(item, out);
            }
            out.push(']');
        }
        serde_json::Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_string(key, out);
                out.push(':');
                write_json(item, out);
            }
            out.push('}');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// `s` as Go's `encoding/json` writes a string: quoted, with `<`, `>` and
/// `&` (and U+2028, U+2029) escaped as `\u003c` and the like.
pub fn json_string(s: &str, out: &mut String) {
    out.push('"');
    // Most strings (names, paths) need no escape: copied at once. A byte
    // that may need one: a control, `"`, `\\`, `<`, `>`, `&`, or the first
    // byte of U+2028 and U+2029.
    let plain = s
        .bytes()
        .all(|b| b >= 0x20 && !matches!(b, b'"' | b'\\' | b'<' | b'>' | b'&' | 0xe2));
    if plain {
        out.push_str(s);
    } else {
        push_escaped(s, out, true);
    }
    out.push('"');
}

/// `s` as [`json_string`] writes it between its quotes, a character at a
/// time; `<`, `>` and `&` escaped only with `html` (Go's encoder escapes
/// them unless told not to, as Sprig's `toRawJson` tells it).
pub(crate) fn push_escaped(s: &str, out: &mut String, html: bool) {
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' if !html => out.push(c),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
}

/// A float as `encoding/json` writes it: plain digits between 1e-6 and
/// 1e21, exponent form outside.
pub fn json_float(f: f64) -> String {
    if !f.is_finite() {
        return "null".to_string();
    }
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let sci = format!("{f:e}");
        let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{}", exp.abs())
    } else {
        format!("{f}")
    }
}

/// The value as `sigs.k8s.io/yaml` marshals it (through JSON: map and
/// struct keys sorted, sequences level with their key), ending in a
/// newline; written by the tool's own block writer ([`Layout`]).
pub fn to_yaml(value: &Value) -> String {
    let layout = Layout {
        seq_indent: 0,
        ..Layout::default()
    };
    match sort_keys(value.to_json()) {
        serde_json::Value::Object(map) if !map.is_empty() => map
            .iter()
            .map(|(key, value)| layout.block_entry(0, key, value))
            .collect(),
        serde_json::Value::Array(items) if !items.is_empty() => items
            .iter()
            .map(|item| layout.block_item(0, item))
            .collect(),
        scalar => layout.flow(&scalar) + "\n",
    }
}

/// The value as Go's JSON encoding hands it to the YAML writer: keys
/// sorted, and a float with no fraction an integer (`encoding/json`
/// writes float64 3 as `3`, which YAML reads back as an int).
fn sort_keys(json: serde_json::Value) -> serde_json::Value {
    match json {
        serde_json::Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(0.0);
            if f.fract() == 0.0 && f.abs() < 1e15 {
                serde_json::Value::from(f as i64)
            } else {
                serde_json::Value::Number(n)
            }
        }
        serde_json::Value::Object(map) => {
            let mut entries: Vec<_> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            serde_json::Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, sort_keys(v)))
                    .collect(),
            )
        }
        serde_json::Value::Array(items) => {
            serde_json::Value::Array(items.into_iter().map(sort_keys).collect())
        }
        other => other,
    }
}

/// Go's `fmt.Sprintf` for the verbs templates use: `%v %s %d %q %t %f %e
/// %g %x %X %c %%`, with flags, width and precision.
pub fn sprintf(format: &str, args: &[Value]) -> String {
    let mut out = String::new();
    let mut args = args.iter();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = Spec::default();
        while let Some(&flag) = chars.peek() {
            match flag {
                '-' => spec.left = true,
                '+' => spec.plus = true,
                '0' => spec.zero = true,
                ' ' | '#' => {}
                _ => break,
            }
            chars.next();
        }
        spec.width = digits(&mut chars);
        if chars.peek() == Some(&'.') {
            chars.next();
            spec.precision = Some(digits(&mut chars).unwrap_or(0));
        }
        let Some(verb) = chars.next() else {
            out.push_str("%!(NOVERB)");
            break;
        };
        if verb == '%' {
            out.push('%');
            continue;
        }
        let Some(arg) = args.next() else {
            let _ = write!(out, "%!{verb}(MISSING)");
            continue;
        };
        let text = format_one(verb, &spec, arg);
        out.push_str(&spec.pad(text));
    }
    let extra: Vec<_> = args.collect();
    if !extra.is_empty() {
        out.push_str("%!(EXTRA ");
        let parts: Vec<String> = extra
            .iter()
            .map(|v| match v {
                Value::Nil => "<nil>".to_string(),
                v => format!("{}={}", super::sprig::reflect::go_type(v), v.print()),
            })
            .collect();
        out.push_str(&parts.join(", "));
        out.push(')');
    }
    out
}

#[derive(Default)]
struct Spec {
    left: bool,
    plus: bool,
    zero: bool,
    width: Option<usize>,
    precision: Option<usize>,
}

impl Spec {
    fn pad(&self, text: String) -> String {
        let Some(width) = self.width else {
            return text;
        };
        let len = text.chars().count();
        if len >= width {
            return text;
        }
        let fill = width - len;
        if self.left {
            text + &" ".repeat(fill)
        } else if self.zero {
            match text.strip_prefix('-') {
                Some(digits) => format!("-{}{digits}", "0".repeat(fill)),
                None => "0".repeat(fill) + &text,
            }
        } else {
            " ".repeat(fill) + &text
        }
    }
}

fn digits(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Option<usize> {
    let mut n: Option<usize> = None;
    while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
        n = Some(n.unwrap_or(0).saturating_mul(10).saturating_add(d as usize));
        chars.next();
    }
    n
}

fn format_one(verb: char, spec: &Spec, arg: &Value) -> String {
    let bad = || {
        format!(
            "%!{verb}({}={})",
            super::sprig::reflect::go_type(arg),
            arg.print()
        )
    };
    match verb {
        'T' => super::sprig::reflect::go_type(arg),
        'v' => match arg {
            Value::Float(f) => float_with(*f, 'g', spec.precision),
            Value::Int(i) | Value::Int64(i) if spec.plus => format!("{i:+}"),
            other => other.print(),
        },
        's' => match arg {
            Value::Str(_) | Value::Zero => {
                let s = arg.print();
                match spec.precision {
                    Some(p) => s.chars().take(p).collect(),
                    None => s,
                }
            }
            Value::Int(_) | Value::Int64(_) | Value::Float(_) | Value::Bool(_) => bad(),
            other => other.print(),
        },
        'q' => match arg {
            Value::Str(s) => go_quote(s),
            Value::Int(i) | Value::Int64(i) => u32::try_from(*i)
                .ok()
                .and_then(char::from_u32)
                .map_or_else(bad, |c| format!("{c:?}")),
            _ => bad(),
        },
        'd' => match arg.as_int() {
            Some(i) if !matches!(arg, Value::Float(_)) => {
                if spec.plus {
                    format!("{i:+}")
                } else {
                    i.to_string()
                }
            }
            _ => bad(),
        },
        't' => match arg {
            Value::Bool(b) => b.to_string(),
            _ => bad(),
        },
        'f' | 'F' | 'e' | 'g' => match arg {
            Value::Float(f) => float_with(*f, verb, spec.precision),
            _ => bad(),
        },
        'x' | 'X' => {
            let text = match arg {
                Value::Int(i) | Value::Int64(i) => format!("{i:x}"),
                Value::Str(s) => s.bytes().map(|b| format!("{b:02x}")).collect(),
                _ => return bad(),
            };
            if verb == 'X' {
                text.to_uppercase()
            } else {
                text
            }
        }
        'c' => arg
            .as_int()
            .and_then(|i| u32::try_from(i).ok())
            .and_then(char::from_u32)
            .map_or_else(bad, |c| c.to_string()),
        _ => bad(),
    }
}

fn float_with(f: f64, verb: char, precision: Option<usize>) -> String {
    match verb {
        'f' | 'F' => format!("{f:.*}", precision.unwrap_or(6)),
        'e' => {
            let sci = format!("{f:.*e}", precision.unwrap_or(6));
            let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
            let exp: i32 = exp.parse().unwrap_or(0);
            let sign = if exp < 0 { '-' } else { '+' };
            format!("{mantissa}e{sign}{:02}", exp.abs())
        }
        _ => format_float_g(f),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quoting_is_go_quoting() {
        assert_eq!(go_quote("a\"b\n"), r#""a\"b\n""#);
        assert_eq!(go_quote("é"), "\"é\"");
        assert_eq!(go_quote("\u{1}"), r#""\x01""#);
    }

    /// Strings copied at once come out as written a character at a time.
    #[test]
    fn strings_without_escapes_are_written_as_escaped_ones() {
        let strings = [
            "",
            "web-0",
            "a\"b",
            "back\\slash",
            "<tag>",
            "a&b",
            "line\nbreak",
            "\u{7}",
            "\u{7f}",
            "\u{2028}",
            "\u{2029}",
            "\u{2027}",
            "\u{20ac}uro",
            "é",
            "\u{1f600}",
        ];
        for s in strings {
            let (mut fast, mut slow) = (String::new(), String::from("\""));
            json_string(s, &mut fast);
            push_escaped(s, &mut slow, true);
            slow.push('"');
            assert_eq!(fast, slow, "{s:?}");
        }
    }

    #[test]
    fn json_is_go_json() {
        let v = Value::from_json(&json!({"b": [1, 2.5], "a": "<x&y>"}));
        assert_eq!(go_json(&v), r#"{"a":"\u003cx\u0026y\u003e","b":[1,2.5]}"#);
    }

    #[test]
    fn yaml_reads_back_as_the_value() {
        let value = json!({"b": [{"x": 1, "y": ["p", "true"]}, "s"], "a": {"k": "multi\nline", "e": {}}, "c": ""});
        let text = to_yaml(&Value::from_object(&value));
        assert!(text.starts_with("a:\n  e: {}\n"), "{text}");
        let back: serde_json::Value = serde_yaml_ng::from_str(&text).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn printf_formats_the_verbs_templates_use() {
        let args = [Value::str("x"), Value::Int(7), Value::Float(1.5)];
        assert_eq!(
            sprintf(
                "--a=%s %d %v %05.1f%%",
                &args[..2]
                    .iter()
                    .chain([&args[2], &args[2]])
                    .cloned()
                    .collect::<Vec<_>>()
            ),
            "--a=x 7 1.5 001.5%"
        );
        assert_eq!(sprintf("%q", &[Value::str("a b")]), "\"a b\"");
        assert_eq!(sprintf("%s", &[]), "%!s(MISSING)");
        assert_eq!(sprintf("%d", &[Value::str("x")]), "%!d(string=x)");
    }
}

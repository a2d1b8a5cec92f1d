//! Go's built-in template functions (Sprig's are in [`super::sprig`]), and
//! the argument checks all functions share. `and` and `or` are run by the
//! evaluator (they stop early).

use super::exec::list;
use super::format::{sprintf, to_yaml};
use super::value::{GoMap, Value};
use super::{Func, Reads};

/// Go's builtins, by name.
pub const BUILTINS: &[(&str, Func)] = &[
    ("not", not),
    ("len", len),
    ("index", index),
    ("slice", slice),
    ("print", print),
    ("printf", printf),
    ("println", println),
    ("eq", eq),
    ("ne", ne),
    ("lt", lt),
    ("le", le),
    ("gt", gt),
    ("ge", ge),
    ("urlquery", urlquery),
    ("html", html),
    ("js", js),
    ("call", call),
];

/// Helm's additions that charts (and injection templates) use.
pub const HELM: &[(&str, Func)] = &[
    ("toYaml", to_yaml_func),
    ("fromYaml", from_yaml),
    ("required", required),
    // Run by the evaluator, which holds the templates (see `exec.rs`).
    ("include", include_outside),
];

/// The functions of these that read only part of their arguments.
pub const READ_IN_PART: &[(&str, Reads)] = &[
    ("index", index_reads),
    ("hasKey", key_reads),
    ("get", key_reads),
];

type Result = std::result::Result<Value, String>;

/// Exactly `n` arguments, or Go's message.
pub fn arity(args: &[Value], n: usize) -> std::result::Result<(), String> {
    if args.len() == n {
        Ok(())
    } else {
        Err(format!("wrong number of args: want {n} got {}", args.len()))
    }
}

/// Argument `i`, nil when missing.
pub fn arg(args: &[Value], i: usize) -> &Value {
    args.get(i).unwrap_or(&Value::Nil)
}

/// A string argument; numbers and booleans are refused as Go refuses them.
pub fn string(args: &[Value], i: usize) -> std::result::Result<&str, String> {
    let value = arg(args, i);
    value.as_str().ok_or_else(|| {
        format!(
            "argument {} is a {}, not a string",
            i + 1,
            value.type_name()
        )
    })
}

/// An `int` argument: an integer, or a float with no fraction (Go takes
/// such a constant, but refuses an `int64`).
pub fn int(args: &[Value], i: usize) -> std::result::Result<i64, String> {
    let value = arg(args, i);
    if let Value::Int64(_) = value {
        return Err("wrong type for value; expected int; got int64".to_string());
    }
    value.as_int().ok_or_else(|| {
        format!(
            "argument {} is a {}, not an integer",
            i + 1,
            value.type_name()
        )
    })
}

fn not(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(Value::Bool(!arg(args, 0).truthy()))
}

fn len(args: &[Value]) -> Result {
    arity(args, 1)?;
    let n = match arg(args, 0) {
        Value::Str(s) => s.len(),
        Value::List(items) => items.len(),
        Value::Map(map) => map.entries.len(),
        Value::Zero => 0,
        other => return Err(format!("len of type {}", other.type_name())),
    };
    Ok(Value::Int(i64::try_from(n).unwrap_or(i64::MAX)))
}

fn index(args: &[Value]) -> Result {
    let Some((item, keys)) = args.split_first() else {
        return Err("wrong number of args: want at least 1 got 0".to_string());
    };
    if let Value::Nil = item {
        return Err("index of untyped nil".to_string());
    }
    let mut item = item.clone();
    for key in keys {
        item = match (&item, key) {
            (Value::Map(map), key) => {
                let key = key.as_str().ok_or("map key is not a string")?;
                map.entries
                    .get(key)
                    .cloned()
                    .unwrap_or_else(|| (*map.missing).clone())
            }
            (Value::List(items), key) => {
                let i = key
                    .as_int()
                    .ok_or("cannot index slice with a non-integer")?;
                usize::try_from(i)
                    .ok()
                    .and_then(|i| items.get(i))
                    .cloned()
                    .ok_or_else(|| format!("index out of range: {i}"))?
            }
            (Value::Str(s), key) => {
                let (Value::Int(i) | Value::Int64(i)) = key else {
                    return Err(format!(
                        "cannot index slice/array with type {}",
                        super::sprig::reflect::go_type(key)
                    ));
                };
                let i = *i;
                usize::try_from(i)
                    .ok()
                    .and_then(|i| s.as_bytes().get(i))
                    .map(|b| Value::Int(i64::from(*b)))
                    .ok_or_else(|| format!("index out of range: {i}"))?
            }
            (Value::Zero, _) => Value::Zero,
            (Value::Nil, _) => return Err("index of untyped nil".to_string()),
            (other, _) => return Err(format!("can't index item of type {}", other.type_name())),
        };
    }
    Ok(item)
}

/// `index` reads the entries its keys lead to, and the last one whole.
fn index_reads(args: &[Value], watched: &dyn Fn(&str) -> bool) -> bool {
    let Some((mut item, keys)) = args.split_first() else {
        return false;
    };
    for key in keys {
        if key.holds(watched) {
            return true;
        }
        item = match item {
            Value::Map(map) => match looked_up(map, key, watched) {
                Some(entry) => entry,
                None => return true,
            },
            Value::List(items) => {
                let at = key.as_int().and_then(|i| usize::try_from(i).ok());
                match at.and_then(|i| items.get(i)) {
                    Some(entry) => entry,
                    // An error, whatever the strings.
                    None => return false,
                }
            }
            // Zero, or an error: no string is read.
            _ => return false,
        };
    }
    item.holds(watched)
}

/// A lookup (`hasKey`, `get`, Istio's `isset`) of one key in a map, the
/// map first.
pub fn key_reads(args: &[Value], watched: &dyn Fn(&str) -> bool) -> bool {
    match args {
        [Value::Map(map), key] if !key.holds(watched) => {
            looked_up(map, key, watched).is_none_or(|entry| entry.holds(watched))
        }
        _ => args.iter().any(|a| a.holds(watched)),
    }
}

/// The entry of `map` that a lookup of `key` reads (the missing value when
/// there is none); `None` when the lookup can depend on a watched string:
/// a key of the map is one (its string could be the key looked up), or
/// the key is not a string.
pub fn looked_up<'m>(
    map: &'m GoMap,
    key: &Value,
    watched: &dyn Fn(&str) -> bool,
) -> Option<&'m Value> {
    if map.entries.keys().any(|k| watched(k)) {
        return None;
    }
    Some(map.entries.get(key.as_str()?).unwrap_or(&map.missing))
}

fn slice(args: &[Value]) -> Result {
    let Some((item, bounds)) = args.split_first() else {
        return Err("wrong number of args: want at least 1 got 0".to_string());
    };
    let bounds: Vec<usize> = bounds
        .iter()
        .map(|b| {
            b.as_int()
                .and_then(|i| usize::try_from(i).ok())
                .ok_or("bad slice index")
        })
        .collect::<std::result::Result<_, _>>()?;
    let cut = |len: usize| -> std::result::Result<(usize, usize), String> {
        let from = bounds.first().copied().unwrap_or(0);
        let to = bounds.get(1).copied().unwrap_or(len);
        if from > to || to > len {
            return Err(format!("slice bounds out of range [{from}:{to}]"));
        }
        Ok((from, to))
    };
    match item {
        Value::Str(s) => {
            let (from, to) = cut(s.len())?;
            s.get(from..to)
                .map(Value::str)
                .ok_or_else(|| "slice splits a character".to_string())
        }
        Value::List(items) => {
            let (from, to) = cut(items.len())?;
            Ok(list(
                items
                    .get(from..to)
                    .map(<[Value]>::to_vec)
                    .unwrap_or_default(),
            ))
        }
        other => Err(format!("can't slice item of type {}", other.type_name())),
    }
}

fn print(args: &[Value]) -> Result {
    // fmt.Sprint: a space between operands when neither is a string.
    let mut out = String::new();
    for (i, value) in args.iter().enumerate() {
        let is_str = |v: &Value| matches!(v, Value::Str(_));
        if i > 0 && !is_str(value) && args.get(i - 1).is_some_and(|p| !is_str(p)) {
            out.push(' ');
        }
        out.push_str(&value.print());
    }
    Ok(Value::str(out))
}

fn printf(args: &[Value]) -> Result {
    let format = string(args, 0)?;
    Ok(Value::str(sprintf(
        format,
        args.get(1..).unwrap_or_default(),
    )))
}

fn println(args: &[Value]) -> Result {
    let parts: Vec<String> = args.iter().map(Value::print).collect();
    Ok(Value::str(parts.join(" ") + "\n"))
}

/// Go's comparison of two basic values: `None` when they cannot be compared.
fn compare(a: &Value, b: &Value) -> Option<std::cmp::Ordering> {
    use Value::*;
    match (a, b) {
        (Int(x), Int(y)) => Some(x.cmp(y)),
        (Float(x), Float(y)) => x.partial_cmp(y),
        (Str(x), Str(y)) => Some(x.cmp(y)),
        (Bool(x), Bool(y)) => Some(x.cmp(y)),
        // A zero field is the zero of whatever it is compared with.
        (Zero, Str(y)) => Some("".cmp(y)),
        (Str(x), Zero) => Some((**x).cmp("")),
        (Zero, Int(y)) => Some(0.cmp(y)),
        (Int(x), Zero) => Some(x.cmp(&0)),
        (Zero, Bool(y)) => Some(false.cmp(y)),
        (Bool(x), Zero) => Some(x.cmp(&false)),
        (Zero, Zero) => Some(std::cmp::Ordering::Equal),
        _ => None,
    }
}

fn eq(args: &[Value]) -> Result {
    let Some((first, rest)) = args.split_first() else {
        return Err("missing argument for comparison".to_string());
    };
    if rest.is_empty() {
        return Err("missing argument for comparison".to_string());
    }
    for other in rest {
        let equal = match (first, other) {
            // Go: comparing with no value is false, not an error.
            (Value::Nil, Value::Nil) => true,
            (Value::Nil, _) | (_, Value::Nil) => false,
            _ => match compare(first, other) {
                Some(order) => order.is_eq(),
                None => return Err("incompatible types for comparison".to_string()),
            },
        };
        if equal {
            return Ok(Value::Bool(true));
        }
    }
    Ok(Value::Bool(false))
}

fn ne(args: &[Value]) -> Result {
    arity(args, 2)?;
    let Value::Bool(equal) = eq(args)? else {
        return Err("comparison failed".to_string());
    };
    Ok(Value::Bool(!equal))
}

fn ordered(args: &[Value], test: fn(std::cmp::Ordering) -> bool) -> Result {
    arity(args, 2)?;
    match compare(arg(args, 0), arg(args, 1)) {
        Some(order) => Ok(Value::Bool(test(order))),
        None => Err("incompatible types for comparison".to_string()),
    }
}

fn lt(args: &[Value]) -> Result {
    ordered(args, std::cmp::Ordering::is_lt)
}

fn le(args: &[Value]) -> Result {
    ordered(args, std::cmp::Ordering::is_le)
}

fn gt(args: &[Value]) -> Result {
    ordered(args, std::cmp::Ordering::is_gt)
}

fn ge(args: &[Value]) -> Result {
    ordered(args, std::cmp::Ordering::is_ge)
}

/// The arguments as one string, as Go's escaping functions take them
/// (`fmt.Sprint`; a single string as itself).
fn joined(args: &[Value]) -> std::result::Result<String, String> {
    Ok(match args {
        [Value::Str(s)] => s.to_string(),
        _ => {
            // A missing value prints as Go prints it in an action.
            let shown: Vec<Value> = args
                .iter()
                .map(|v| match v {
                    Value::Nil => Value::str("<no value>"),
                    other => other.clone(),
                })
                .collect();
            print(&shown)?.print()
        }
    })
}

fn urlquery(args: &[Value]) -> Result {
    let text = joined(args)?;
    let mut out = String::new();
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(char::from(b))
            }
            b' ' => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    Ok(Value::str(out))
}

/// Go's `html`: `<`, `>`, `&`, `'` and `"` as HTML entities.
fn html(args: &[Value]) -> Result {
    let text = joined(args)?;
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\'' => out.push_str("&#39;"),
            '"' => out.push_str("&#34;"),
            '\0' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    Ok(Value::str(out))
}

/// Whether Go's `unicode.IsPrint` holds for a character past ASCII (an
/// approximation: neither a control, a space nor a format character).
fn printable(c: char) -> bool {
    !(c.is_control()
        || c.is_whitespace()
        || matches!(c as u32, 0xad | 0x600..=0x605 | 0x200b..=0x200f | 0x202a..=0x202e | 0x2060..=0x2064 | 0xfeff | 0xfff9..=0xfffb))
}

/// Go's `js`: quotes, `\\`, `<`, `>`, `&`, `=` and controls escaped for a
/// JavaScript string.
fn js(args: &[Value]) -> Result {
    let text = joined(args)?;
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c if c.is_ascii() || printable(c) => out.push(c),
            c => out.push_str(&format!("\\u{:04X}", c as u32)),
        }
    }
    Ok(Value::str(out))
}

/// Go's `call`: the data holds no functions, so there is nothing to call.
fn call(args: &[Value]) -> Result {
    match args.first() {
        None => Err("wrong number of args for call: want at least 1 got 0".to_string()),
        Some(Value::Nil) => Err("call of nil".to_string()),
        Some(other) => Err(format!(
            "non-function of type {}",
            super::sprig::reflect::go_type(other)
        )),
    }
}

/// Helm's `toYaml`: without the final newline.
fn to_yaml_func(args: &[Value]) -> Result {
    arity(args, 1)?;
    let text = to_yaml(arg(args, 0));
    Ok(Value::str(text.strip_suffix('\n').unwrap_or(&text)))
}

/// Helm's `fromYaml`: a YAML mapping as a map (numbers as Go's JSON decoder
/// reads them, float64); text that is not one gives a map whose `Error`
/// holds why, as Helm gives it.
fn from_yaml(args: &[Value]) -> Result {
    arity(args, 1)?;
    let text = string(args, 0)?;
    let error = |message: String| Value::from_json(&serde_json::json!({ "Error": message }));
    let parsed = crate::yaml::parse_stream(text)
        .map_err(|e| format!("line {}: {}", e.line, e.message))
        .and_then(
            |documents| match documents.first().and_then(|d| d.root.as_ref()) {
                None => Ok(serde_json::Value::Object(Default::default())),
                Some(root) => crate::yaml::value::to_value(root).map_err(|e| e.message),
            },
        );
    Ok(match parsed {
        Ok(serde_json::Value::Null) => Value::from_json(&serde_json::json!({})),
        Ok(json @ serde_json::Value::Object(_)) => Value::from_json(&json),
        Ok(_) => error("cannot unmarshal a non-mapping into map[string]interface {}".into()),
        Err(message) => error(message),
    })
}

/// Helm's `required MESSAGE VALUE`: the value, or the message as the error
/// when it is nil or the empty string.
fn required(args: &[Value]) -> Result {
    arity(args, 2)?;
    let message = string(args, 0)?;
    match arg(args, 1) {
        Value::Nil | Value::Zero => Err(message.to_string()),
        Value::Str(s) if s.is_empty() => Err(message.to_string()),
        value => Ok(value.clone()),
    }
}

/// `include` called as a plain function, where no template runs it.
fn include_outside(_: &[Value]) -> Result {
    Err("include runs only inside a template".to_string())
}

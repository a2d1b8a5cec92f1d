//! Go's built-in template functions and the Sprig functions that Helm-style
//! templates use. `and` and `or` are run by the evaluator (they stop early).

use std::collections::BTreeMap;
use std::rc::Rc;

use super::exec::list;
use super::format::{go_json, go_quote, sprintf, to_yaml};
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
];

/// The functions of these that read only part of their arguments.
pub const READ_IN_PART: &[(&str, Reads)] = &[
    ("index", index_reads),
    ("hasKey", key_reads),
    ("get", key_reads),
];

/// Sprig's functions that injection templates use, by name.
pub const SPRIG: &[(&str, Func)] = &[
    ("default", default),
    ("empty", empty),
    ("coalesce", coalesce),
    ("ternary", ternary),
    ("quote", quote),
    ("squote", squote),
    ("list", make_list),
    ("append", append),
    ("push", append),
    ("prepend", prepend),
    ("first", first),
    ("last", last),
    ("has", has),
    ("join", join),
    ("split", split),
    ("splitList", split_list),
    ("contains", contains),
    ("hasPrefix", has_prefix),
    ("hasSuffix", has_suffix),
    ("trimPrefix", trim_prefix),
    ("trimSuffix", trim_suffix),
    ("trim", trim),
    ("trimAll", trim_all),
    ("trunc", trunc),
    ("lower", lower),
    ("upper", upper),
    ("replace", replace),
    ("repeat", repeat),
    ("toString", to_string),
    ("toStrings", to_strings),
    ("toJson", to_json),
    ("toYaml", to_yaml_func),
    ("dict", dict),
    ("hasKey", has_key),
    ("keys", keys),
    ("get", get),
    ("indent", indent),
    ("nindent", nindent),
    ("int", to_int),
    ("int64", to_int),
    ("atoi", atoi),
    ("float64", to_float),
    ("add", add),
    ("sub", sub),
    ("mul", mul),
    ("div", div),
    ("mod", modulo),
    ("max", max),
    ("min", min),
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

fn int(args: &[Value], i: usize) -> std::result::Result<i64, String> {
    let value = arg(args, i);
    value.as_int().ok_or_else(|| {
        format!(
            "argument {} is a {}, not an integer",
            i + 1,
            value.type_name()
        )
    })
}

/// Sprig's `strval`: the value printed, a string as itself.
fn strval(value: &Value) -> String {
    match value {
        Value::Nil => String::new(),
        other => other.print(),
    }
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

fn urlquery(args: &[Value]) -> Result {
    let text: String = args.iter().map(Value::print).collect();
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

fn default(args: &[Value]) -> Result {
    // `default D GIVEN`: GIVEN unless it is empty (or missing).
    let given = args.get(1).unwrap_or(&Value::Nil);
    Ok(if given.is_empty() {
        arg(args, 0).clone()
    } else {
        given.clone()
    })
}

fn empty(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(Value::Bool(arg(args, 0).is_empty()))
}

fn coalesce(args: &[Value]) -> Result {
    Ok(args
        .iter()
        .find(|v| !v.is_empty())
        .cloned()
        .unwrap_or(Value::Nil))
}

fn ternary(args: &[Value]) -> Result {
    arity(args, 3)?;
    Ok(if arg(args, 2).truthy() {
        arg(args, 0).clone()
    } else {
        arg(args, 1).clone()
    })
}

fn quote(args: &[Value]) -> Result {
    let parts: Vec<String> = args
        .iter()
        .filter(|v| !matches!(v, Value::Nil))
        .map(|v| go_quote(&strval(v)))
        .collect();
    Ok(Value::str(parts.join(" ")))
}

fn squote(args: &[Value]) -> Result {
    let parts: Vec<String> = args
        .iter()
        .filter(|v| !matches!(v, Value::Nil))
        .map(|v| format!("'{}'", strval(v)))
        .collect();
    Ok(Value::str(parts.join(" ")))
}

fn make_list(args: &[Value]) -> Result {
    Ok(list(args.to_vec()))
}

fn items_of(value: &Value) -> std::result::Result<Vec<Value>, String> {
    match value {
        Value::List(items) => Ok(items.to_vec()),
        Value::Nil | Value::Zero => Ok(Vec::new()),
        other => Err(format!("cannot find items of type {}", other.type_name())),
    }
}

fn append(args: &[Value]) -> Result {
    arity(args, 2)?;
    let mut items = items_of(arg(args, 0))?;
    items.push(arg(args, 1).clone());
    Ok(list(items))
}

fn prepend(args: &[Value]) -> Result {
    arity(args, 2)?;
    let mut items = vec![arg(args, 1).clone()];
    items.extend(items_of(arg(args, 0))?);
    Ok(list(items))
}

fn first(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(items_of(arg(args, 0))?
        .into_iter()
        .next()
        .unwrap_or(Value::Nil))
}

fn last(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(items_of(arg(args, 0))?.pop().unwrap_or(Value::Nil))
}

fn has(args: &[Value]) -> Result {
    arity(args, 2)?;
    let needle = strval(arg(args, 0));
    Ok(Value::Bool(
        items_of(arg(args, 1))?.iter().any(|v| strval(v) == needle),
    ))
}

fn join(args: &[Value]) -> Result {
    arity(args, 2)?;
    let separator = string(args, 0)?;
    let parts: Vec<String> = match arg(args, 1) {
        Value::List(items) => items
            .iter()
            .filter(|v| !matches!(v, Value::Nil))
            .map(strval)
            .collect(),
        other => vec![strval(other)],
    };
    Ok(Value::str(parts.join(separator)))
}

fn split(args: &[Value]) -> Result {
    arity(args, 2)?;
    let (separator, text) = (string(args, 0)?, strval(arg(args, 1)));
    let entries = text
        .split(separator)
        .enumerate()
        .map(|(i, part)| (format!("_{i}"), Value::str(part)))
        .collect();
    Ok(Value::Map(Rc::new(GoMap {
        entries,
        missing: Box::new(Value::Nil),
    })))
}

fn split_list(args: &[Value]) -> Result {
    arity(args, 2)?;
    let (separator, text) = (string(args, 0)?, strval(arg(args, 1)));
    Ok(list(text.split(separator).map(Value::str).collect()))
}

fn two_strings(args: &[Value]) -> std::result::Result<(&str, &str), String> {
    arity(args, 2)?;
    Ok((string(args, 0)?, string(args, 1)?))
}

fn contains(args: &[Value]) -> Result {
    let (needle, haystack) = two_strings(args)?;
    Ok(Value::Bool(haystack.contains(needle)))
}

fn has_prefix(args: &[Value]) -> Result {
    let (prefix, s) = two_strings(args)?;
    Ok(Value::Bool(s.starts_with(prefix)))
}

fn has_suffix(args: &[Value]) -> Result {
    let (suffix, s) = two_strings(args)?;
    Ok(Value::Bool(s.ends_with(suffix)))
}

fn trim_prefix(args: &[Value]) -> Result {
    let (prefix, s) = two_strings(args)?;
    Ok(Value::str(s.strip_prefix(prefix).unwrap_or(s)))
}

fn trim_suffix(args: &[Value]) -> Result {
    let (suffix, s) = two_strings(args)?;
    Ok(Value::str(s.strip_suffix(suffix).unwrap_or(s)))
}

fn trim(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(Value::str(string(args, 0)?.trim()))
}

fn trim_all(args: &[Value]) -> Result {
    let (cutset, s) = two_strings(args)?;
    Ok(Value::str(s.trim_matches(|c| cutset.contains(c))))
}

fn trunc(args: &[Value]) -> Result {
    arity(args, 2)?;
    let (n, s) = (int(args, 0)?, string(args, 1)?);
    let len = i64::try_from(s.len()).unwrap_or(i64::MAX);
    let cut = if n < 0 && len + n > 0 {
        s.get(usize::try_from(len + n).unwrap_or(0)..)
    } else if n >= 0 && len > n {
        s.get(..usize::try_from(n).unwrap_or(0))
    } else {
        Some(s)
    };
    Ok(Value::str(cut.unwrap_or(s)))
}

fn lower(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(Value::str(string(args, 0)?.to_lowercase()))
}

fn upper(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(Value::str(string(args, 0)?.to_uppercase()))
}

fn replace(args: &[Value]) -> Result {
    arity(args, 3)?;
    Ok(Value::str(
        string(args, 2)?.replace(string(args, 0)?, string(args, 1)?),
    ))
}

fn repeat(args: &[Value]) -> Result {
    arity(args, 2)?;
    let n = usize::try_from(int(args, 0)?).map_err(|_| "negative repeat count")?;
    Ok(Value::str(string(args, 1)?.repeat(n)))
}

fn to_string(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(Value::str(strval(arg(args, 0))))
}

fn to_strings(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(list(
        items_of(arg(args, 0))?
            .iter()
            .map(|v| Value::str(strval(v)))
            .collect(),
    ))
}

fn to_json(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(Value::str(go_json(arg(args, 0))))
}

/// Sprig's `toYaml`: without the final newline.
fn to_yaml_func(args: &[Value]) -> Result {
    arity(args, 1)?;
    let text = to_yaml(arg(args, 0));
    Ok(Value::str(text.strip_suffix('\n').unwrap_or(&text)))
}

fn dict(args: &[Value]) -> Result {
    let mut entries = BTreeMap::new();
    for pair in args.chunks(2) {
        let key = pair.first().map(strval).unwrap_or_default();
        entries.insert(key, pair.get(1).cloned().unwrap_or(Value::str("")));
    }
    Ok(Value::Map(Rc::new(GoMap {
        entries,
        missing: Box::new(Value::Nil),
    })))
}

fn has_key(args: &[Value]) -> Result {
    arity(args, 2)?;
    let key = string(args, 1)?;
    Ok(Value::Bool(match arg(args, 0) {
        Value::Map(map) => map.entries.contains_key(key),
        Value::Zero | Value::Nil => false,
        other => return Err(format!("hasKey of type {}", other.type_name())),
    }))
}

fn keys(args: &[Value]) -> Result {
    let mut all = Vec::new();
    for value in args {
        if let Value::Map(map) = value {
            all.extend(map.entries.keys().map(|k| Value::str(k.as_str())));
        }
    }
    Ok(list(all))
}

fn get(args: &[Value]) -> Result {
    arity(args, 2)?;
    let key = string(args, 1)?;
    Ok(match arg(args, 0) {
        Value::Map(map) => map.entries.get(key).cloned().unwrap_or(Value::str("")),
        _ => Value::str(""),
    })
}

/// Sprig's `indent`: every line, the first too, after N spaces.
fn indent(args: &[Value]) -> Result {
    arity(args, 2)?;
    let pad = " ".repeat(usize::try_from(int(args, 0)?).unwrap_or(0));
    let text = strval(arg(args, 1));
    Ok(Value::str(format!(
        "{pad}{}",
        text.replace('\n', &format!("\n{pad}"))
    )))
}

fn nindent(args: &[Value]) -> Result {
    let indented = indent(args)?;
    Ok(Value::str(format!("\n{}", strval(&indented))))
}

fn to_int(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(Value::Int(match arg(args, 0) {
        Value::Int(i) => *i,
        Value::Float(f) => *f as i64,
        Value::Str(s) => s.trim().parse().unwrap_or(0),
        Value::Bool(b) => i64::from(*b),
        _ => 0,
    }))
}

fn atoi(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(Value::Int(string(args, 0)?.trim().parse().unwrap_or(0)))
}

fn to_float(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(Value::Float(match arg(args, 0) {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        Value::Str(s) => s.trim().parse().unwrap_or(0.0),
        _ => 0.0,
    }))
}

fn numbers(args: &[Value]) -> std::result::Result<Vec<i64>, String> {
    (0..args.len()).map(|i| int(args, i)).collect()
}

fn add(args: &[Value]) -> Result {
    Ok(Value::Int(
        numbers(args)?.iter().fold(0i64, |a, b| a.wrapping_add(*b)),
    ))
}

fn arith(args: &[Value], op: fn(i64, i64) -> Option<i64>) -> Result {
    arity(args, 2)?;
    op(int(args, 0)?, int(args, 1)?)
        .map(Value::Int)
        .ok_or_else(|| "integer division by zero or overflow".to_string())
}

fn sub(args: &[Value]) -> Result {
    arith(args, i64::checked_sub)
}

fn mul(args: &[Value]) -> Result {
    arith(args, i64::checked_mul)
}

fn div(args: &[Value]) -> Result {
    arith(args, i64::checked_div)
}

fn modulo(args: &[Value]) -> Result {
    arith(args, i64::checked_rem)
}

fn max(args: &[Value]) -> Result {
    numbers(args)?
        .into_iter()
        .max()
        .map(Value::Int)
        .ok_or_else(|| "max of nothing".to_string())
}

fn min(args: &[Value]) -> Result {
    numbers(args)?
        .into_iter()
        .min()
        .map(Value::Int)
        .ok_or_else(|| "min of nothing".to_string())
}

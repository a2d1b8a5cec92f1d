//! Sprig's dictionary functions, over Go's `map[string]interface {}`.
//!
//! Go's maps are shared: `set`, `unset`, `merge` and `mergeOverwrite`
//! change the map they are given. The tool's values are not shared, so
//! these answer the changed map, and the evaluator stores it back into the
//! variable the map was read from (see `exec`): `{{ $_ := set $d "k" 1 }}`
//! changes `$d`, as in Go (but not another variable holding the same map).

use std::collections::BTreeMap;
use std::rc::Rc;

use super::super::exec::list;
use super::super::funcs::{arg, arity, string};
use super::super::value::{GoMap, Value};
use super::Result;
use super::reflect::go_type;
use crate::gotemplate::Func;

pub const FUNCS: &[(&str, Func)] = &[
    ("dict", dict),
    ("get", get),
    ("set", set),
    ("unset", unset),
    ("hasKey", has_key),
    ("pluck", pluck),
    ("keys", keys),
    ("pick", pick),
    ("omit", omit),
    ("merge", merge),
    ("mustMerge", merge),
    ("mergeOverwrite", merge_overwrite),
    ("mustMergeOverwrite", merge_overwrite),
    ("values", values),
    ("dig", dig),
    ("deepCopy", deep_copy),
    ("mustDeepCopy", deep_copy),
];

/// The functions that change the map of their first argument.
pub const CHANGING: &[&str] = &[
    "set",
    "unset",
    "merge",
    "mustMerge",
    "mergeOverwrite",
    "mustMergeOverwrite",
];

type Entries = BTreeMap<String, Value>;

/// A map argument's entries (none for nil), or Go's message for what is
/// not a map.
pub fn map_arg(args: &[Value], i: usize) -> std::result::Result<Option<&GoMap>, String> {
    match arg(args, i) {
        Value::Map(map) => Ok(Some(map)),
        Value::Nil | Value::Zero => Ok(None),
        other => Err(format!(
            "wrong type for value; expected map[string]interface {{}}; got {}",
            go_type(other)
        )),
    }
}

/// A `map[string]interface {}`.
pub fn new_map(entries: Entries) -> Value {
    Value::Map(Rc::new(GoMap {
        entries,
        missing: Box::new(Value::Nil),
    }))
}

fn entries_of(map: Option<&GoMap>) -> Entries {
    map.map(|m| m.entries.clone()).unwrap_or_default()
}

/// The same kind of map as `like`, with these entries.
fn remade(like: Option<&GoMap>, entries: Entries) -> Value {
    Value::Map(Rc::new(GoMap {
        entries,
        missing: Box::new(like.map_or(Value::Nil, |m| (*m.missing).clone())),
    }))
}

fn dict(args: &[Value]) -> Result {
    let mut entries = Entries::new();
    for pair in args.chunks(2) {
        let key = pair.first().map(Value::print).unwrap_or_default();
        entries.insert(key, pair.get(1).cloned().unwrap_or(Value::str("")));
    }
    Ok(new_map(entries))
}

fn get(args: &[Value]) -> Result {
    arity(args, 2)?;
    let (map, key) = (map_arg(args, 0)?, string(args, 1)?);
    Ok(map
        .and_then(|m| m.entries.get(key))
        .cloned()
        .unwrap_or(Value::str("")))
}

fn set(args: &[Value]) -> Result {
    arity(args, 3)?;
    let (map, key) = (map_arg(args, 0)?, string(args, 1)?);
    let Some(map) = map else {
        return Err("assignment to entry in nil map".to_string());
    };
    let mut entries = map.entries.clone();
    entries.insert(key.to_string(), arg(args, 2).clone());
    Ok(remade(Some(map), entries))
}

fn unset(args: &[Value]) -> Result {
    arity(args, 2)?;
    let (map, key) = (map_arg(args, 0)?, string(args, 1)?);
    let mut entries = entries_of(map);
    entries.remove(key);
    Ok(remade(map, entries))
}

fn has_key(args: &[Value]) -> Result {
    arity(args, 2)?;
    let (map, key) = (map_arg(args, 0)?, string(args, 1)?);
    Ok(Value::Bool(
        map.is_some_and(|m| m.entries.contains_key(key)),
    ))
}

fn pluck(args: &[Value]) -> Result {
    let Some(key) = args.first() else {
        return arity(args, 1).map(|()| Value::Nil);
    };
    let key = key.as_str().ok_or_else(|| {
        format!(
            "wrong type for value; expected string; got {}",
            go_type(key)
        )
    })?;
    let mut found = Vec::new();
    for i in 1..args.len() {
        if let Some(value) = map_arg(args, i)?.and_then(|m| m.entries.get(key)) {
            found.push(value.clone());
        }
    }
    Ok(list(found))
}

/// The keys of every map given, each map's in key order (Go's come in no
/// order: templates sort them).
fn keys(args: &[Value]) -> Result {
    let mut all = Vec::new();
    for i in 0..args.len() {
        if let Some(map) = map_arg(args, i)? {
            all.extend(map.entries.keys().map(|k| Value::str(k.as_str())));
        }
    }
    Ok(list(all))
}

fn key_args(args: &[Value]) -> std::result::Result<Vec<&str>, String> {
    (1..args.len()).map(|i| string(args, i)).collect()
}

fn pick(args: &[Value]) -> Result {
    let map = map_arg(args, 0)?;
    let wanted = key_args(args)?;
    let entries = entries_of(map)
        .into_iter()
        .filter(|(k, _)| wanted.contains(&k.as_str()))
        .collect();
    Ok(new_map(entries))
}

fn omit(args: &[Value]) -> Result {
    let map = map_arg(args, 0)?;
    let unwanted = key_args(args)?;
    let entries = entries_of(map)
        .into_iter()
        .filter(|(k, _)| !unwanted.contains(&k.as_str()))
        .collect();
    Ok(new_map(entries))
}

/// The values of a map, in key order (Go's come in no order).
fn values(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(list(entries_of(map_arg(args, 0)?).into_values().collect()))
}

/// Empty as the merge library sees it: zero, empty, or nil; never a
/// struct.
fn merge_empty(value: &Value) -> bool {
    match value {
        Value::Struct(_) | Value::Time(_) | Value::Version(_) => false,
        other => !other.truthy(),
    }
}

/// `src` merged into `dst` as Sprig's merge library does: a key `dst`
/// lacks (or holds empty) is taken from `src`; maps in both are merged
/// in turn; with `overwrite`, `src` wins for everything but a map or list
/// meeting a value `dst` holds that is not a map.
fn merge_entries(dst: &mut Entries, src: &GoMap, overwrite: bool) {
    for (key, from) in &src.entries {
        let held = dst.get(key).cloned();
        match from {
            Value::Nil => {
                if overwrite {
                    dst.insert(key.clone(), Value::Nil);
                }
                continue;
            }
            Value::Map(inner) => {
                if let Some(Value::Map(kept)) = &held {
                    let mut entries = kept.entries.clone();
                    merge_entries(&mut entries, inner, overwrite);
                    dst.insert(key.clone(), remade(Some(kept), entries));
                    continue;
                }
            }
            Value::List(_) if overwrite => {
                dst.insert(key.clone(), from.clone());
                continue;
            }
            _ => {}
        }
        let structured = matches!(from, Value::Map(_) | Value::List(_));
        match &held {
            Some(kept) if !merge_empty(kept) && (structured || !overwrite) => {}
            _ => {
                dst.insert(key.clone(), from.clone());
            }
        }
    }
}

fn merged(args: &[Value], overwrite: bool) -> Result {
    let Some(first) = args.first() else {
        return arity(args, 1).map(|()| Value::Nil);
    };
    let dst = map_arg(args, 0)?;
    let mut entries = entries_of(dst);
    for i in 1..args.len() {
        if let Some(src) = map_arg(args, i)? {
            merge_entries(&mut entries, src, overwrite);
        }
    }
    Ok(match first {
        Value::Map(_) => remade(dst, entries),
        _ => new_map(entries),
    })
}

fn merge(args: &[Value]) -> Result {
    merged(args, false)
}

fn merge_overwrite(args: &[Value]) -> Result {
    merged(args, true)
}

/// Go's message when an `interface {}` holding `value` is taken for a
/// `want`.
fn not_a(value: &Value, want: &str) -> String {
    let held = match value {
        Value::Nil => "nil".to_string(),
        other => go_type(other),
    };
    format!("interface conversion: interface {{}} is {held}, not {want}")
}

/// `dig "a" "b" DEFAULT MAP`: the value at that path, or the default where
/// a key is missing.
fn dig(args: &[Value]) -> Result {
    if args.len() < 3 {
        return Err("dig needs at least three arguments".to_string());
    }
    let (path, rest) = args.split_at(args.len() - 2);
    let [default, map] = rest else {
        return Err("dig needs at least three arguments".to_string());
    };
    let keys: Vec<&str> = path
        .iter()
        .map(|k| match k {
            Value::Str(s) => Ok(&**s),
            other => Err(not_a(other, "string")),
        })
        .collect::<std::result::Result<_, _>>()?;
    let mut at = map;
    for key in keys {
        let Value::Map(m) = at else {
            return Err(not_a(at, "map[string]interface {}"));
        };
        match m.entries.get(key) {
            Some(next) => at = next,
            None => return Ok(default.clone()),
        }
    }
    Ok(at.clone())
}

/// A copy (values are not shared here, so the value itself); the copying
/// library Sprig uses loses a version's private fields, so a version
/// comes out as 0.0.0.
fn deep_copy(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(match arg(args, 0) {
        Value::Nil => return Err("reflect: call of reflect.Value.Type on zero Value".to_string()),
        Value::Version(_) => Value::Version(Rc::new(super::semver::Version {
            major: 0,
            minor: 0,
            patch: 0,
            pre: String::new(),
            metadata: String::new(),
            original: String::new(),
        })),
        other => other.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn merge_json(dst: serde_json::Value, src: serde_json::Value, overwrite: bool) -> String {
        let args = [Value::from_json(&dst), Value::from_json(&src)];
        super::super::json::go_json_text(&merged(&args, overwrite).unwrap())
    }

    #[test]
    fn merging_keeps_what_the_destination_holds() {
        let dst = json!({"a": 1, "b": "", "m": {"x": 1}, "l": [1], "s": "keep"});
        let src =
            json!({"a": 2, "b": "new", "m": {"x": 2, "y": 3}, "l": [2], "s": {"no": 1}, "n": null});
        assert_eq!(
            merge_json(dst.clone(), src.clone(), false),
            r#"{"a":1,"b":"new","l":[1],"m":{"x":1,"y":3},"s":"keep"}"#
        );
        assert_eq!(
            merge_json(dst, src, true),
            r#"{"a":2,"b":"new","l":[2],"m":{"x":2,"y":3},"n":null,"s":"keep"}"#
        );
    }

    #[test]
    fn dig_walks_maps_and_falls_back() {
        let map = Value::from_json(&json!({"a": {"b": "c"}}));
        let dug = |keys: &[&str]| {
            let mut args: Vec<Value> = keys.iter().map(|k| Value::str(*k)).collect();
            args.push(Value::str("dflt"));
            args.push(map.clone());
            dig(&args)
        };
        assert_eq!(dug(&["a", "b"]).unwrap().print(), "c");
        assert_eq!(dug(&["a", "x"]).unwrap().print(), "dflt");
        assert!(dug(&["a", "b", "c"]).unwrap_err().contains("is string"));
    }
}

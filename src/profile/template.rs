//! `{{name}}` placeholders in profile strings.
//!
//! Deliberately small: a profile only drops values in, it never branches or
//! loops, so a value-level substitution is all it needs and stays cheap per
//! workload. Two rules make optional fields possible without conditionals:
//! - a string that is exactly one placeholder takes the value's own type, so
//!   `runAsUser: "{{values.proxyUID}}"` stays a number;
//! - a map entry or list item whose string uses a placeholder with an empty
//!   value (`""` or null) is left out, and a map emptied that way goes too, so
//!   `cpu: "{{values.proxyCPULimit}}"` disappears when no limit is set;
//! - a list item that is exactly one placeholder whose value is a list is
//!   spliced into its list, so optional arguments (`[--proxy-gid, "7"]` or
//!   none) stand where they belong.
//!
//! - a map with a `$if` key is kept (without that key) only when the `$if`
//!   value is not empty and not `false`, so a whole env entry can depend on a
//!   value (`{name: X, value: "{{values.x}}", $if: "{{values.x}}"}`); a
//!   condition on a workload's placeholder is kept while the values are
//!   filled in, and decided with the workload's answer.
//!
//! `{{name|string}}` writes a value as a string (`"4143"`, not `4143`), as
//! container arguments must be.

use serde_json::{Map, Value};

/// Looks a placeholder name up; `None` means the name is unknown.
pub type Lookup<'a> = dyn Fn(&str) -> Option<Value> + 'a;

/// Fill every placeholder in `value`. Fails on the first unknown name.
/// A top-level value left out by the empty-value rule comes back as null.
pub fn render(value: &Value, lookup: &Lookup<'_>) -> Result<Value, String> {
    Ok(render_opt(value, lookup)?.unwrap_or(Value::Null))
}

fn render_opt(value: &Value, lookup: &Lookup<'_>) -> Result<Option<Value>, String> {
    Ok(match value {
        Value::String(s) => render_str(s, lookup)?,
        Value::Array(items) => Some(Value::Array(render_list(items, lookup)?)),
        Value::Object(map) => render_entries(map, lookup)?.map(Value::Object),
        other => Some(other.clone()),
    })
}

/// Fill a map's entries (an emptied map comes back empty).
pub fn render_map(
    map: &Map<String, Value>,
    lookup: &Lookup<'_>,
) -> Result<Map<String, Value>, String> {
    Ok(render_entries(map, lookup)?.unwrap_or_default())
}

/// Fill a list's items, leaving out those the empty-value rule drops and
/// splicing in the lists that lone placeholders stand for.
pub fn render_list(items: &[Value], lookup: &Lookup<'_>) -> Result<Vec<Value>, String> {
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let lone = item.as_str().is_some_and(is_lone_placeholder);
        match render_opt(item, lookup)? {
            Some(Value::Array(spliced)) if lone => out.extend(spliced),
            rendered => out.extend(rendered),
        }
    }
    Ok(out)
}

/// The names of the placeholders in `value` (keys and strings), added to `names`.
pub fn placeholders(value: &Value, names: &mut Vec<String>) {
    match value {
        Value::String(s) => placeholders_in(s, names),
        Value::Array(items) => items.iter().for_each(|v| placeholders(v, names)),
        Value::Object(map) => {
            for (k, v) in map {
                placeholders_in(k, names);
                placeholders(v, names);
            }
        }
        _ => {}
    }
}

fn placeholders_in(s: &str, names: &mut Vec<String>) {
    let mut rest = s;
    while let Some((_, opened)) = rest.split_once("{{") {
        let Some((name, after)) = opened.split_once("}}") else {
            return;
        };
        let name = name.split('|').next().unwrap_or_default().trim();
        names.push(name.to_string());
        rest = after;
    }
}

/// Whether `s` is one placeholder and nothing else.
fn is_lone_placeholder(s: &str) -> bool {
    s.strip_prefix("{{")
        .and_then(|rest| rest.strip_suffix("}}"))
        .is_some_and(|name| !name.contains("{{") && !name.contains("}}"))
}

/// A map's entries filled; `None` when every entry was left out.
fn render_entries(
    map: &Map<String, Value>,
    lookup: &Lookup<'_>,
) -> Result<Option<Map<String, Value>>, String> {
    let mut out = Map::with_capacity(map.len());
    if let Some(condition) = map.get(CONDITION) {
        let rendered = render_opt(condition, lookup)?;
        // A placeholder left for later (the workload's, while the values
        // are filled in) leaves the condition for later too.
        if let Some(later) = rendered
            .as_ref()
            .filter(|v| v.as_str().is_some_and(is_lone_placeholder))
        {
            out.insert(CONDITION.to_string(), later.clone());
        } else if !rendered
            .is_some_and(|v| !is_empty(&v) && v != Value::Bool(false) && v != "false")
        {
            return Ok(None);
        }
    }
    for (k, v) in map.iter().filter(|(k, _)| *k != CONDITION) {
        let Some(key) = render_str(k, lookup)? else {
            continue;
        };
        let key = match key {
            Value::String(s) => s,
            other => other.to_string(),
        };
        if let Some(v) = render_opt(v, lookup)? {
            out.insert(key, v);
        }
    }
    Ok(if out.keys().all(|k| k == CONDITION) && !map.is_empty() {
        None
    } else {
        Some(out)
    })
}

/// The key of a map's condition (see the module's doc).
const CONDITION: &str = "$if";

fn is_empty(value: &Value) -> bool {
    value.is_null() || value.as_str().is_some_and(str::is_empty)
}

/// A string with its placeholders filled; `None` when one of them is empty.
fn render_str(s: &str, lookup: &Lookup<'_>) -> Result<Option<Value>, String> {
    if !s.contains("{{") {
        return Ok(Some(Value::String(s.to_string())));
    }
    let mut out = String::new();
    let mut rest = s;
    while let Some((before, opened)) = rest.split_once("{{") {
        let Some((name, after)) = opened.split_once("}}") else {
            return Err(format!("unclosed placeholder in {s:?}"));
        };
        let name = name.trim();
        let (name, as_string) = match name.split_once('|') {
            Some((name, filter)) if filter.trim() == "string" => (name.trim_end(), true),
            _ => (name, false),
        };
        let mut value =
            lookup(name).ok_or_else(|| format!("unknown placeholder {{{{{name}}}}} in {s:?}"))?;
        if is_empty(&value) {
            return Ok(None);
        }
        if as_string && !value.is_string() {
            value = Value::String(value.to_string());
        }
        if before.is_empty() && after.is_empty() && out.is_empty() {
            return Ok(Some(value));
        }
        out.push_str(before);
        match value {
            Value::String(v) => out.push_str(&v),
            other => out.push_str(&other.to_string()),
        }
        rest = after;
    }
    out.push_str(rest);
    Ok(Some(Value::String(out)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lookup(name: &str) -> Option<Value> {
        match name {
            "values.uid" => Some(json!(2102)),
            "values.ns" => Some(json!("linkerd")),
            "values.none" => Some(json!("")),
            _ => None,
        }
    }

    #[test]
    fn fills_strings_and_keeps_types() {
        let got = render(
            &json!({"a": "{{values.uid}}", "b": "svc.{{ values.ns }}:{{values.uid}}", "k-{{values.ns}}": [1]}),
            &lookup,
        )
        .expect("renders");
        assert_eq!(
            got,
            json!({"a": 2102, "b": "svc.linkerd:2102", "k-linkerd": [1]})
        );
    }

    #[test]
    fn lists_are_spliced_and_values_written_as_strings() {
        let lookup = |name: &str| match name {
            "values.pair" => Some(json!(["--gid", "7"])),
            "values.nothing" => Some(json!([])),
            other => lookup(other),
        };
        let got = render(
            &json!({"args": ["--a", "{{values.pair}}", "{{values.nothing}}", "{{values.uid|string}}"],
                    "nested": "{{values.pair}}", "uid": "{{ values.uid | string }}"}),
            &lookup,
        )
        .expect("renders");
        assert_eq!(
            got,
            json!({"args": ["--a", "--gid", "7", "2102"], "nested": ["--gid", "7"], "uid": "2102"})
        );
    }

    #[test]
    fn a_map_goes_when_its_condition_does_not_hold() {
        let lookup = |name: &str| match name {
            "values.off" => Some(json!(false)),
            other => lookup(other),
        };
        let got = render(
            &json!({"env": [
                {"name": "A", "value": "{{values.uid|string}}", "$if": "{{values.uid}}"},
                {"name": "B", "value": "x", "$if": "{{values.none}}"},
                {"name": "C", "value": "x", "$if": "{{values.off}}"}]}),
            &lookup,
        )
        .expect("renders");
        assert_eq!(got, json!({"env": [{"name": "A", "value": "2102"}]}));
    }

    /// A condition on a placeholder left for later (a workload's, while
    /// the values are filled in) is decided later.
    #[test]
    fn a_condition_left_for_later_is_decided_later() {
        let later = |name: &str| match name.strip_prefix("values.") {
            Some(_) => lookup(name),
            None => Some(json!(format!("{{{{{name}}}}}"))),
        };
        let env = json!([{"name": "W", "value": "{{pod.name}}", "$if": "{{pod.name}}"}]);
        let filled = render(&env, &later).expect("renders");
        assert_eq!(
            filled,
            json!([{"$if": "{{pod.name}}", "name": "W", "value": "{{pod.name}}"}])
        );
        let with = |value: &'static str| move |_: &str| Some(json!(value));
        assert_eq!(
            render(&filled, &with("web")).expect("renders"),
            json!([{"name": "W", "value": "web"}])
        );
        assert_eq!(render(&filled, &with("")).expect("renders"), json!([]));
    }

    #[test]
    fn empty_values_leave_their_entry_out() {
        let got = render(
            &json!({"resources": {"limits": {"cpu": "{{values.none}}"}, "requests": {"cpu": "x"}},
                    "args": ["--a", "--skip={{values.none}}"], "emptyDir": {}}),
            &lookup,
        )
        .expect("renders");
        assert_eq!(
            got,
            json!({"resources": {"requests": {"cpu": "x"}}, "args": ["--a"], "emptyDir": {}})
        );
    }

    #[test]
    fn unknown_names_are_errors() {
        let err = render(&json!("{{values.nope}}"), &lookup).expect_err("unknown");
        assert!(err.contains("values.nope"), "{err}");
        assert!(render(&json!("{{values.ns"), &lookup).is_err());
    }
}

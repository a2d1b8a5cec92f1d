//! What changed between an earlier injection and the one made now, said in
//! a line: `--check` tells a stale manifest by it (a proxy of an older
//! version, a setting changed since).

use serde_json::Value;

use crate::json::Field;

/// How many changes a summary names before it counts the rest.
const SHOWN: usize = 3;

/// The changes from `before` to `after` (one object, injected both times),
/// the first few named by path and value:
/// `spec.template.metadata.annotations.linkerd.io/proxy-version: edge-26.5.2 → edge-26.8.3`.
/// Items of a list that have a `name` are named by it (`containers[linkerd-proxy]`).
pub fn summary(before: &Value, after: &Value) -> String {
    let (before, after) = (&comparable(before), &comparable(after));
    let patch = json_patch::diff(before, after);
    let changes: Vec<String> = patch
        .0
        .iter()
        .map(|op| {
            let (path, old, new) = match op {
                json_patch::PatchOperation::Add(add) => (add.path.as_str(), None, Some(&add.value)),
                json_patch::PatchOperation::Remove(remove) => {
                    let path = remove.path.as_str();
                    (path, before.pointer(path), None)
                }
                json_patch::PatchOperation::Replace(replace) => {
                    let path = replace.path.as_str();
                    (path, before.pointer(path), Some(&replace.value))
                }
                // `diff` makes only the three above.
                other => (other.path().as_str(), None, None),
            };
            let place = readable_path(path, if new.is_some() { after } else { before });
            match (old, new) {
                (Some(Value::String(old)), Some(Value::String(new))) => {
                    let (old, new) = around_difference(old, new);
                    format!("{place}: {old} → {new}")
                }
                (Some(old), Some(new)) => format!("{place}: {} → {}", brief(old), brief(new)),
                (None, Some(new)) => format!("{place}: {} added", brief(new)),
                (Some(old), None) => format!("{place}: {} removed", brief(old)),
                (None, None) => format!("{place} changed"),
            }
        })
        .collect();
    let mut text = changes
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ");
    if changes.len() > SHOWN {
        text.push_str(&format!("; and {} more", changes.len() - SHOWN));
    }
    text
}

/// Marks a mapping key that stands for a list item of that name.
const ITEM: char = '\u{1}';

/// `value` as it is compared: the tool's own record of what it added left
/// out (it changes with everything else), and lists whose items all have
/// distinct names made mappings by name, so that an item that moved (the
/// proxy from `containers` to `initContainers`) reads as moved, not as
/// every later item renamed.
fn comparable(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, _)| *key != super::record::RECORD_ANNOTATION)
                .map(|(key, item)| (key.clone(), comparable(item)))
                .collect(),
        ),
        Value::Array(items) => {
            let names: Vec<&str> = items
                .iter()
                .filter_map(|item| item.field("name").and_then(Value::as_str))
                .collect();
            let mut distinct = names.clone();
            distinct.sort_unstable();
            distinct.dedup();
            if names.is_empty() || names.len() != items.len() || distinct.len() != names.len() {
                return Value::Array(items.iter().map(comparable).collect());
            }
            Value::Object(
                items
                    .iter()
                    .zip(names)
                    .map(|(item, name)| (format!("{ITEM}{name}"), comparable(item)))
                    .collect(),
            )
        }
        other => other.clone(),
    }
}

/// Two long strings cut to where they differ: `…edge-26.1.1` → `…edge-26.5.2`.
fn around_difference(old: &str, new: &str) -> (String, String) {
    const LONG: usize = 60;
    const BEFORE: usize = 20;
    let common = old
        .chars()
        .zip(new.chars())
        .take_while(|(a, b)| a == b)
        .count();
    let cut = |text: &str| {
        let skip = if text.chars().count() > LONG {
            common.saturating_sub(BEFORE)
        } else {
            0
        };
        let shown: String = text.chars().skip(skip).take(LONG).collect();
        let mut out = if skip > 0 {
            format!("…{shown}")
        } else {
            shown
        };
        if text.chars().count() > skip + LONG {
            out.push('…');
        }
        out
    };
    (cut(old), cut(new))
}

/// A JSON pointer as a dotted path, with list items named by their `name`
/// in `value` (the document the pointer is read in).
fn readable_path(pointer: &str, value: &Value) -> String {
    let mut out = String::new();
    let mut at = Some(value);
    for token in pointer.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        let here = at;
        at = match here {
            Some(Value::Array(items)) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
            Some(Value::Object(map)) => map.get(&token),
            _ => None,
        };
        if let Some(name) = token.strip_prefix(ITEM) {
            out.push_str(&format!("[{name}]"));
            continue;
        }
        match here {
            Some(Value::Array(_)) => {
                let name = at
                    .and_then(|item| item.field("name"))
                    .and_then(Value::as_str);
                out.push_str(&format!("[{}]", name.unwrap_or(&token)));
            }
            _ => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&token);
            }
        }
    }
    out
}

/// A value in a few words: a scalar as it is (long ones cut), a list or
/// mapping by its size.
fn brief(value: &Value) -> String {
    const LONG: usize = 60;
    match value {
        Value::String(text) if text.chars().count() > LONG => {
            let cut: String = text.chars().take(LONG).collect();
            format!("{cut}…")
        }
        Value::String(text) => text.clone(),
        Value::Array(items) => format!("a list of {}", items.len()),
        Value::Object(map) if map.field("name").is_some_and(Value::is_string) => map
            .field("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        // A list made a mapping by its items' names (see `comparable`).
        Value::Object(map) if map.keys().all(|key| key.starts_with(ITEM)) => {
            let names: Vec<&str> = map.keys().map(|key| key.trim_start_matches(ITEM)).collect();
            format!("a list of {} ({})", map.len(), names.join(", "))
        }
        Value::Object(map) => format!("a mapping of {}", map.len()),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_new_proxy_version_is_named_with_its_place() {
        let before = json!({"metadata": {"annotations": {"linkerd.io/proxy-version": "edge-26.5.2"}},
            "spec": {"containers": [{"name": "app"}, {"name": "linkerd-proxy", "image": "proxy:edge-26.5.2"}]}});
        let after = json!({"metadata": {"annotations": {"linkerd.io/proxy-version": "edge-26.8.3"}},
            "spec": {"containers": [{"name": "app"}, {"name": "linkerd-proxy", "image": "proxy:edge-26.8.3"}]}});
        assert_eq!(
            summary(&before, &after),
            "metadata.annotations.linkerd.io/proxy-version: edge-26.5.2 → edge-26.8.3; \
             spec.containers[linkerd-proxy].image: proxy:edge-26.5.2 → proxy:edge-26.8.3"
        );
    }

    #[test]
    fn a_container_that_moved_reads_as_moved_and_the_record_is_left_out() {
        let before = json!({"metadata": {"annotations": {"mesh-inject.io/added": "containers=p"}},
            "spec": {"containers": [{"name": "p"}, {"name": "app"}]}});
        let after = json!({"metadata": {"annotations": {"mesh-inject.io/added": "initContainers=p"}},
            "spec": {"initContainers": [{"name": "p"}], "containers": [{"name": "app"}]}});
        assert_eq!(
            summary(&before, &after),
            "spec.initContainers: a list of 1 (p) added; spec.containers[p]: p removed"
        );
    }

    #[test]
    fn long_values_are_shown_where_they_differ() {
        let old = format!("{}edge-26.1.1;end", "x".repeat(100));
        let new = format!("{}edge-26.5.2;end", "x".repeat(100));
        let text = summary(&json!({"a": old}), &json!({"a": new}));
        assert!(
            text.starts_with("a: …xxxxxxxxxxxxedge-26.1.1;end → …"),
            "{text}"
        );
        assert!(text.ends_with("edge-26.5.2;end"), "{text}");
    }

    #[test]
    fn many_changes_are_counted_after_the_first_few() {
        let before = json!({"env": [{"name": "A", "value": "1"}]});
        let after = json!({"env": [{"name": "A", "value": "2"}], "b": 1, "c": [1, 2], "d": {"x": 1}, "e": {"name": "x"}});
        let text = summary(&before, &after);
        assert!(text.starts_with("env[A].value: 1 → 2; "), "{text}");
        assert!(text.ends_with("; and 2 more"), "{text}");
        assert!(text.contains("c: a list of 2 added"), "{text}");
    }
}

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
    fn many_changes_are_counted_after_the_first_few() {
        let before = json!({"env": [{"name": "A", "value": "1"}]});
        let after = json!({"env": [{"name": "A", "value": "2"}], "b": 1, "c": [1, 2], "d": {"x": 1}, "e": {"name": "x"}});
        let text = summary(&before, &after);
        assert!(text.starts_with("env[A].value: 1 → 2; "), "{text}");
        assert!(text.ends_with("; and 2 more"), "{text}");
        assert!(text.contains("c: a list of 2 added"), "{text}");
    }
}

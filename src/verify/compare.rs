//! Two pods compared field by field, lists of named items (containers,
//! env, volumes, ports) by name, so that each difference names its place
//! as a reader finds it: `spec.containers[linkerd-proxy].env[LINKERD2_PROXY_LOG].value`.

use serde_json::Value;

/// One field where the pods differ; `None` on the side that lacks it.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    pub path: String,
    pub tool: Option<Value>,
    pub cluster: Option<Value>,
}

/// Every field where `tool`'s pod and `cluster`'s differ, in the order of
/// `tool`'s fields, then those only `cluster`'s has.
pub fn differences(tool: &Value, cluster: &Value) -> Vec<Difference> {
    let mut found = Vec::new();
    walk("", tool, cluster, &mut found);
    found
}

fn walk(path: &str, tool: &Value, cluster: &Value, found: &mut Vec<Difference>) {
    if tool == cluster {
        return;
    }
    let differs = |found: &mut Vec<Difference>| {
        found.push(Difference {
            path: path.to_string(),
            tool: Some(tool.clone()),
            cluster: Some(cluster.clone()),
        });
    };
    match (tool, cluster) {
        (Value::Object(ours), Value::Object(theirs)) => {
            let pairs = ours
                .iter()
                .map(|(k, v)| (field_path(path, k), Some(v), theirs.get(k)));
            let only_theirs = theirs
                .iter()
                .filter(|(k, _)| !ours.contains_key(*k))
                .map(|(k, v)| (field_path(path, k), None, Some(v)));
            each(pairs.chain(only_theirs), found);
        }
        (Value::Array(ours), Value::Array(theirs)) => match (names(ours), names(theirs)) {
            (Some(our_names), Some(their_names)) => {
                let pairs = ours.iter().zip(&our_names).map(|(item, name)| {
                    let other = their_names.iter().position(|n| n == name);
                    let other = other.and_then(|at| theirs.get(at));
                    (format!("{path}[{name}]"), Some(item), other)
                });
                let only_theirs = theirs
                    .iter()
                    .zip(&their_names)
                    .filter(|(_, name)| !our_names.contains(name))
                    .map(|(item, name)| (format!("{path}[{name}]"), None, Some(item)));
                each(pairs.chain(only_theirs), found);
                // The order of containers is their start order.
                let common = |names: &[&str], other: &[&str]| -> Vec<String> {
                    names
                        .iter()
                        .filter(|n| other.contains(n))
                        .map(|n| n.to_string())
                        .collect()
                };
                let (our_order, their_order) = (
                    common(&our_names, &their_names),
                    common(&their_names, &our_names),
                );
                if our_order != their_order {
                    found.push(Difference {
                        path: format!("{path} (order)"),
                        tool: Some(Value::from(our_order)),
                        cluster: Some(Value::from(their_order)),
                    });
                }
            }
            _ if ours.len() == theirs.len() => {
                for (index, (a, b)) in ours.iter().zip(theirs).enumerate() {
                    walk(&format!("{path}[{index}]"), a, b, found);
                }
            }
            _ => differs(found),
        },
        _ => differs(found),
    }
}

/// Compare each pair of `(path, tool's, cluster's)`.
fn each<'a>(
    pairs: impl Iterator<Item = (String, Option<&'a Value>, Option<&'a Value>)>,
    found: &mut Vec<Difference>,
) {
    for (path, ours, theirs) in pairs {
        match (ours, theirs) {
            (Some(a), Some(b)) => walk(&path, a, b, found),
            (a, b) => found.push(Difference {
                path,
                tool: a.cloned(),
                cluster: b.cloned(),
            }),
        }
    }
}

/// The names of a list's items when every item is a mapping with a
/// distinct text `name`.
fn names(items: &[Value]) -> Option<Vec<&str>> {
    let names: Vec<&str> = items
        .iter()
        .map(|item| item.get("name").and_then(Value::as_str))
        .collect::<Option<_>>()?;
    let distinct = names
        .iter()
        .enumerate()
        .all(|(at, name)| !names.iter().take(at).any(|n| n == name));
    (!items.is_empty() && distinct).then_some(names)
}

/// `path.key`, or `path["key"]` for a key that holds a dot or a slash
/// (labels and annotations).
fn field_path(path: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    match (path.is_empty(), plain) {
        (true, true) => key.to_string(),
        (false, true) => format!("{path}.{key}"),
        (_, false) => format!("{path}[{}]", Value::from(key)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn paths(tool: Value, cluster: Value) -> Vec<String> {
        differences(&tool, &cluster)
            .into_iter()
            .map(|d| d.path)
            .collect()
    }

    #[test]
    fn named_items_are_compared_by_name_and_their_order_is_said() {
        let tool = json!({"spec": {"containers": [
            {"name": "proxy", "env": [{"name": "LOG", "value": "warn"}]},
            {"name": "app", "image": "a"}]}});
        let cluster = json!({"spec": {"containers": [
            {"name": "app", "image": "a"},
            {"name": "proxy", "env": [{"name": "LOG", "value": "debug"}, {"name": "X", "value": "1"}]}]}});
        assert_eq!(
            paths(tool, cluster),
            [
                "spec.containers[proxy].env[LOG].value",
                "spec.containers[proxy].env[X]",
                "spec.containers (order)"
            ]
        );
    }

    #[test]
    fn each_side_names_what_only_it_has() {
        let found = differences(
            &json!({"metadata": {"labels": {"linkerd.io/workload-ns": "shop"}}}),
            &json!({"metadata": {"labels": {}, "annotations": {"a": "1"}}}),
        );
        assert_eq!(found.len(), 2);
        assert_eq!(
            found[0].path,
            r#"metadata.labels["linkerd.io/workload-ns"]"#
        );
        assert_eq!(
            (found[0].tool.is_some(), found[0].cluster.is_none()),
            (true, true)
        );
        assert_eq!(found[1].path, "metadata.annotations");
        assert!(found[1].tool.is_none());
        // Lists without names, by place; of other lengths, whole.
        assert_eq!(
            paths(json!({"args": ["a", "b"]}), json!({"args": ["a", "c"]})),
            ["args[1]"]
        );
        assert_eq!(
            paths(json!({"args": ["a"]}), json!({"args": ["a", "c"]})),
            ["args"]
        );
        assert!(differences(&json!({"a": [1]}), &json!({"a": [1]})).is_empty());
    }
}

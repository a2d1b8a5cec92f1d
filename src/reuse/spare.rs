//! Values the tool is done with, kept so that their allocations hold the
//! next copy of a similar value.
//!
//! Every workload gets its own copy of the proxy, its init containers and
//! their volumes, a few hundred strings and mappings each, and drops it once
//! the output is written. Overwriting the copy made for the workload before, which has
//! the same keys and almost the same strings, costs a fraction of copying
//! anew and freeing the old one: 7% of a Linkerd run's instructions, 5% of
//! one with Istio's cluster templates (callgrind, 500 generated workloads).
//! Under the 10% a cache must be worth, the spares stay because without
//! them a Linkerd run of 5,000 workloads is 2.56 times the parse-only
//! baseline by instructions, over the 2.5 it is held to.
//!
//! Why per thread (with `mesh/istio/alike.rs`, one of the two modules that
//! keep a `thread_local!`): each core works on its own workloads, and the
//! copies are made deep in the profile's rendering and Istio's shared
//! renderings, which every caller of the rules reaches (`admit`, `verify`,
//! the KRM function); the pipeline hands back what it is done with
//! ([`keep`]). A spare only holds allocations: what is written over it is
//! the very value a clone would give, which the unit tests below check.

use std::cell::RefCell;

use serde_json::Value;

use crate::json::{Field, retain_in_order};

/// Spares kept per thread: the containers and volume lists of a few workloads.
const KEPT_MAX: usize = 8;

thread_local! {
    static SPARES: RefCell<Vec<Value>> = const { RefCell::new(Vec::new()) };
}

/// A copy of `source`, written into a spare when there is one (the spare of
/// the same name if any, else the last one that is a mapping or a list as
/// `source` is), else cloned.
pub fn copy_of(source: &Value) -> Value {
    let spare = SPARES.with(|spares| {
        let mut spares = spares.borrow_mut();
        let name = source.field("name");
        let same_kind = |s: &Value| s.is_array() == source.is_array();
        let at = spares
            .iter()
            .rposition(|s| same_kind(s) && s.field("name") == name)
            .or_else(|| spares.iter().rposition(same_kind))?;
        Some(spares.swap_remove(at))
    });
    match spare {
        Some(mut spare) => {
            overwrite(&mut spare, source);
            spare
        }
        None => source.clone(),
    }
}

/// A copy of `pod` (a pod template's `metadata` and `spec`) whose init
/// containers, containers and volumes are copies written into spares
/// ([`copy_of`]).
pub fn copy_of_pod(pod: &Value) -> Value {
    let Value::Object(fields) = pod else {
        return pod.clone();
    };
    let copy_spec = |spec: &Value| match spec {
        Value::Object(spec) => Value::Object(
            spec.iter()
                .map(|(key, value)| match (key.as_str(), value) {
                    ("initContainers" | "containers", Value::Array(items)) => (
                        key.clone(),
                        Value::Array(items.iter().map(copy_of).collect()),
                    ),
                    ("volumes", volumes @ Value::Array(_)) => (key.clone(), copy_of(volumes)),
                    _ => (key.clone(), value.clone()),
                })
                .collect(),
        ),
        other => other.clone(),
    };
    Value::Object(
        fields
            .iter()
            .map(|(key, value)| match key.as_str() {
                "spec" => (key.clone(), copy_spec(value)),
                _ => (key.clone(), value.clone()),
            })
            .collect(),
    )
}

/// Keep `value` as a spare, in place of the oldest when enough are kept
/// (the newest are those the next workload asks for; a kind of spare no
/// copy asks for ages out).
pub fn keep(value: Value) {
    if !matches!(value, Value::Object(_) | Value::Array(_)) {
        return;
    }
    SPARES.with(|spares| {
        let mut spares = spares.borrow_mut();
        if spares.len() >= KEPT_MAX {
            spares.remove(0);
        }
        spares.push(value);
    });
}

/// Make `target` equal to `source` (keys in the same order), reusing the
/// strings, lists and mappings `target` already has where the shapes agree.
pub fn overwrite(target: &mut Value, source: &Value) {
    match (&mut *target, source) {
        (Value::String(text), Value::String(from)) => {
            text.clear();
            text.push_str(from);
        }
        (Value::Array(items), Value::Array(from)) => {
            items.truncate(from.len());
            for (item, from) in items.iter_mut().zip(from) {
                overwrite(item, from);
            }
            let kept = items.len();
            items.extend(from.iter().skip(kept).cloned());
        }
        (Value::Object(map), Value::Object(from)) => {
            // What was added to the copy before (a preStop hook, resources)
            // comes out; the keys left must then be the source's, in order.
            if retain_in_order(map, from.keys().map(String::as_str)) {
                for ((_, value), (_, from)) in map.iter_mut().zip(from) {
                    overwrite(value, from);
                }
            } else {
                *map = from.clone();
            }
        }
        (target, source) => *target = source.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::testing::values;
    use proptest::prelude::*;
    use serde_json::json;

    fn keys_in_order(value: &Value) -> Vec<String> {
        let mut keys = Vec::new();
        fn walk(value: &Value, keys: &mut Vec<String>) {
            match value {
                Value::Object(map) => {
                    for (key, value) in map {
                        keys.push(key.clone());
                        walk(value, keys);
                    }
                }
                Value::Array(items) => items.iter().for_each(|item| walk(item, keys)),
                _ => {}
            }
        }
        walk(value, &mut keys);
        keys
    }

    proptest! {
        #[test]
        fn overwriting_gives_the_source_with_its_key_order(mut target in values(), source in values()) {
            overwrite(&mut target, &source);
            prop_assert_eq!(&target, &source);
            prop_assert_eq!(keys_in_order(&target), keys_in_order(&source));
        }
    }

    #[test]
    fn a_kept_value_holds_the_next_copy_of_its_name() {
        let proxy = json!({"name": "proxy", "image": "p:1", "env": [{"name": "A", "value": "1"}]});
        let init = json!({"name": "init", "args": ["--x"]});
        keep(json!({"name": "init", "args": ["--y", "--z"]}));
        keep(json!({"name": "proxy", "image": "p:0", "env": []}));
        assert_eq!(copy_of(&init), init);
        assert_eq!(copy_of(&proxy), proxy);
        // None left: a plain copy.
        assert_eq!(copy_of(&proxy), proxy);
        let pod = json!({"metadata": {"labels": {"a": "b"}}, "spec": {
            "initContainers": [init.clone()], "containers": [proxy.clone(), {"name": "app"}],
            "volumes": [{"name": "v"}]}});
        keep(json!({"name": "proxy", "image": "p:0", "env": []}));
        assert_eq!(copy_of_pod(&pod), pod);
        assert_eq!(SPARES.with(|s| s.borrow().len()), 0, "the spare was used");
        keep(json!("a scalar is not worth keeping"));
        assert_eq!(SPARES.with(|s| s.borrow().len()), 0);
    }

    #[test]
    fn a_kept_list_holds_only_lists_and_the_newest_spares_are_kept() {
        let volumes = json!([{"name": "a", "emptyDir": {}}, {"name": "b"}]);
        // A list is no spare for a mapping: the container is cloned.
        keep(json!([{"name": "old"}]));
        let proxy = json!({"name": "proxy", "image": "p:1"});
        assert_eq!(copy_of(&proxy), proxy);
        assert_eq!(
            SPARES.with(|s| s.borrow().len()),
            1,
            "the list is still kept"
        );
        // The pod's volumes are copied into it.
        let pod = json!({"spec": {"volumes": volumes.clone()}});
        assert_eq!(copy_of_pod(&pod), pod);
        assert_eq!(SPARES.with(|s| s.borrow().len()), 0, "the list was used");
        // Past KEPT_MAX, the oldest goes: the newest are those asked for next.
        for i in 0..KEPT_MAX + 3 {
            keep(json!({"name": format!("c{i}")}));
        }
        let names: Vec<String> = SPARES.with(|s| {
            s.borrow()
                .iter()
                .map(|v| v["name"].as_str().unwrap_or_default().to_string())
                .collect()
        });
        let newest: Vec<String> = (3..KEPT_MAX + 3).map(|i| format!("c{i}")).collect();
        assert_eq!(names, newest);
        SPARES.with(|s| s.borrow_mut().clear());
    }
}

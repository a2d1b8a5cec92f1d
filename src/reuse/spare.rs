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
//! Lifetime: one [`Spares`] per worker (a core taking units in turn), made
//! when it starts and passed down to the rules that copy (the profile's
//! rendering, Istio's shared renderings) and to the pipeline, which hands
//! back what it is done with ([`Spares::keep`]). A spare only holds
//! allocations: what is written over it is the very value a clone would
//! give, which the unit tests below check.

use serde_json::Value;

use super::Mode;
use crate::json::{Field, retain_in_order};

/// Spares kept per worker: the containers and volume lists of a few workloads.
const KEPT_MAX: usize = 8;

/// The values one worker is done with, at most [`KEPT_MAX`], the newest
/// kept; none with [`Mode::Reference`].
#[derive(Debug, Default)]
pub struct Spares {
    kept: Vec<Value>,
    mode: Mode,
}

impl Spares {
    pub fn new(mode: Mode) -> Self {
        Spares {
            kept: Vec::new(),
            mode,
        }
    }

    /// A copy of `source`, written into a spare when there is one (the spare
    /// of the same name if any, else the last one that is a mapping or a
    /// list as `source` is), else cloned.
    pub fn copy_of(&mut self, source: &Value) -> Value {
        let name = source.field("name");
        let same_kind = |s: &Value| s.is_array() == source.is_array();
        let at = self
            .kept
            .iter()
            .rposition(|s| same_kind(s) && s.field("name") == name)
            .or_else(|| self.kept.iter().rposition(same_kind));
        match at {
            Some(at) => {
                let mut spare = self.kept.swap_remove(at);
                overwrite(&mut spare, source);
                spare
            }
            None => source.clone(),
        }
    }

    /// A copy of `pod` (a pod template's `metadata` and `spec`) whose init
    /// containers, containers and volumes are copies written into spares
    /// ([`Spares::copy_of`]).
    pub fn copy_of_pod(&mut self, pod: &Value) -> Value {
        let Value::Object(fields) = pod else {
            return pod.clone();
        };
        let mut copy_spec = |spec: &Value| match spec {
            Value::Object(spec) => Value::Object(
                spec.iter()
                    .map(|(key, value)| match (key.as_str(), value) {
                        ("initContainers" | "containers", Value::Array(items)) => (
                            key.clone(),
                            Value::Array(items.iter().map(|item| self.copy_of(item)).collect()),
                        ),
                        ("volumes", volumes @ Value::Array(_)) => {
                            (key.clone(), self.copy_of(volumes))
                        }
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
    /// copy asks for ages out). Dropped with [`Mode::Reference`].
    pub fn keep(&mut self, value: Value) {
        if self.mode == Mode::Reference || !matches!(value, Value::Object(_) | Value::Array(_)) {
            return;
        }
        if self.kept.len() >= KEPT_MAX {
            self.kept.remove(0);
        }
        self.kept.push(value);
    }
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
        let mut spares = Spares::new(Mode::Reuse);
        spares.keep(json!({"name": "init", "args": ["--y", "--z"]}));
        spares.keep(json!({"name": "proxy", "image": "p:0", "env": []}));
        assert_eq!(spares.copy_of(&init), init);
        assert_eq!(spares.copy_of(&proxy), proxy);
        // None left: a plain copy.
        assert_eq!(spares.copy_of(&proxy), proxy);
        let pod = json!({"metadata": {"labels": {"a": "b"}}, "spec": {
            "initContainers": [init.clone()], "containers": [proxy.clone(), {"name": "app"}],
            "volumes": [{"name": "v"}]}});
        spares.keep(json!({"name": "proxy", "image": "p:0", "env": []}));
        assert_eq!(spares.copy_of_pod(&pod), pod);
        assert_eq!(spares.kept.len(), 0, "the spare was used");
        spares.keep(json!("a scalar is not worth keeping"));
        assert_eq!(spares.kept.len(), 0);
    }

    #[test]
    fn the_reference_mode_keeps_no_spare() {
        let mut spares = Spares::new(Mode::Reference);
        spares.keep(json!({"name": "proxy", "image": "p:0"}));
        assert!(spares.kept.is_empty());
        let proxy = json!({"name": "proxy", "image": "p:1"});
        assert_eq!(spares.copy_of(&proxy), proxy);
    }

    #[test]
    fn a_kept_list_holds_only_lists_and_the_newest_spares_are_kept() {
        let mut spares = Spares::new(Mode::Reuse);
        let volumes = json!([{"name": "a", "emptyDir": {}}, {"name": "b"}]);
        // A list is no spare for a mapping: the container is cloned.
        spares.keep(json!([{"name": "old"}]));
        let proxy = json!({"name": "proxy", "image": "p:1"});
        assert_eq!(spares.copy_of(&proxy), proxy);
        assert_eq!(spares.kept.len(), 1, "the list is still kept");
        // The pod's volumes are copied into it.
        let pod = json!({"spec": {"volumes": volumes.clone()}});
        assert_eq!(spares.copy_of_pod(&pod), pod);
        assert_eq!(spares.kept.len(), 0, "the list was used");
        // Past KEPT_MAX, the oldest goes: the newest are those asked for next.
        for i in 0..KEPT_MAX + 3 {
            spares.keep(json!({"name": format!("c{i}")}));
        }
        let names: Vec<String> = spares
            .kept
            .iter()
            .map(|v| v["name"].as_str().unwrap_or_default().to_string())
            .collect();
        let newest: Vec<String> = (3..KEPT_MAX + 3).map(|i| format!("c{i}")).collect();
        assert_eq!(names, newest);
    }
}

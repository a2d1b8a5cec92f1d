//! Finding the members of JSON values by key, in the small mappings
//! Kubernetes objects are made of.
//!
//! serde_json's maps hash every key looked up with SipHash. A container, a
//! probe or an env entry has a handful of keys, where comparing them in order
//! costs a fraction of that hash; only larger mappings are looked up by hash.

use serde_json::{Map, Value};

/// Up to this many entries a mapping is searched in order.
const SCANNED_MAX: usize = 16;

/// `get` by key, for a JSON value or mapping.
pub trait Field {
    /// The member `key` of a mapping; `None` for a missing key or a value
    /// that is not a mapping (as `serde_json::Value::get` with a `&str`).
    fn field(&self, key: &str) -> Option<&Value>;

    /// [`Field::field`], to change it.
    fn field_mut(&mut self, key: &str) -> Option<&mut Value>;
}

impl Field for Map<String, Value> {
    fn field(&self, key: &str) -> Option<&Value> {
        if self.len() > SCANNED_MAX {
            return self.get(key);
        }
        self.iter().find(|(k, _)| k.as_str() == key).map(|(_, v)| v)
    }

    fn field_mut(&mut self, key: &str) -> Option<&mut Value> {
        if self.len() > SCANNED_MAX {
            return self.get_mut(key);
        }
        self.iter_mut()
            .find(|(k, _)| k.as_str() == key)
            .map(|(_, v)| v)
    }
}

impl Field for Value {
    fn field(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(map) => map.field(key),
            _ => None,
        }
    }

    fn field_mut(&mut self, key: &str) -> Option<&mut Value> {
        match self {
            Value::Object(map) => map.field_mut(key),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn field_reads_like_get_in_small_and_large_mappings() {
        let small = json!({"name": "app", "image": "web", "ports": [80]});
        let large = Value::Object((0..40).map(|i| (format!("k{i}"), json!(i))).collect());
        for (value, keys) in [
            (&small, vec!["name", "image", "ports", "absent", ""]),
            (&large, vec!["k0", "k17", "k39", "k40", "name"]),
        ] {
            for key in keys {
                assert_eq!(value.field(key), value.get(key), "{key}");
                let mut copy = value.clone();
                let expected = copy.get(key).cloned();
                if let Some(member) = copy.field_mut(key) {
                    *member = json!("changed");
                }
                assert_eq!(copy.get(key).is_some(), expected.is_some(), "{key}");
                if expected.is_some() {
                    assert_eq!(copy.get(key), Some(&json!("changed")), "{key}");
                }
            }
        }
        assert_eq!(json!([1, 2]).field("0"), None);
        assert_eq!(json!("text").field("name"), None);
        assert_eq!(Value::Null.field("name"), None);
    }
}

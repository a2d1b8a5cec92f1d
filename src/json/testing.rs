//! Generators shared by the property tests over JSON values.

use proptest::prelude::*;
use serde_json::{Value, json};

/// Values of every kind, nested, with keys from a small set so that shapes
/// often agree, and strings that read as other kinds when written plain.
pub fn values() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-1000i64..1000).prop_map(|n| json!(n)),
        prop_oneof![Just("yes"), Just("1"), Just("~"), Just(""), Just("a b")]
            .prop_map(|s| Value::String(s.to_string())),
        "[a-z]{1,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("[abc]{1,2}", inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

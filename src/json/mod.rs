//! Working with JSON values (the objects the rules plan on) at the cost the
//! tool's volume needs: members found without hashing ([`Field`]), and a
//! mapping's keys kept in order while values are written over them
//! ([`retain_in_order`]). The allocations reused from one workload to the
//! next are `reuse::spare`'s.

mod field;
#[cfg(test)]
pub mod testing;

pub use field::Field;

/// Take out of `map` the keys that are not next in `wanted`, and say whether
/// what is left is all of `wanted`, in its order (so that values can then be
/// written over one by one).
pub fn retain_in_order<'a>(
    map: &mut serde_json::Map<String, serde_json::Value>,
    wanted: impl IntoIterator<Item = &'a str>,
) -> bool {
    let mut wanted = wanted.into_iter().peekable();
    map.retain(|key, _| {
        let keep = wanted.peek() == Some(&key.as_str());
        if keep {
            wanted.next();
        }
        keep
    });
    wanted.next().is_none()
}

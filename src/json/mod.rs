//! Working with JSON values (the objects the rules plan on) at the cost the
//! tool's volume needs: members found without hashing, and the allocations
//! of the containers injected into one workload reused for the next.

mod field;
#[cfg(test)]
pub mod testing;

pub use field::Field;

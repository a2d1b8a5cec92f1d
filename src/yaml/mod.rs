//! The YAML layer: parse a stream into span-carrying nodes, resolve them to
//! JSON values, and edit the original text towards a new value.

// Indexing and slicing here are being rewritten with checked access; until then
// the lint is allowed for this module only (see [lints.clippy] in Cargo.toml).
#[allow(clippy::indexing_slicing)]
pub mod edit;
pub mod emit;
pub mod node;
// Indexing and slicing here are being rewritten with checked access; until then
// the lint is allowed for this module only (see [lints.clippy] in Cargo.toml).
#[allow(clippy::indexing_slicing)]
pub mod parse;
pub mod value;

pub use edit::{Edit, EditError};
pub use node::{Node, NodeKind};
pub use parse::{Document, SyntaxError, parse_stream};

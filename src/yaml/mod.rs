//! The YAML layer: parse a stream into span-carrying nodes, resolve them to
//! JSON values, and edit the original text towards a new value.

pub mod edit;
pub mod emit;
pub mod expansion;
mod indent;
pub mod node;
pub mod parse;
pub mod value;

pub use edit::{Blocks, Edit, EditError};
pub use node::{Node, NodeKind};
pub use parse::{Document, SyntaxError, parse_stream};

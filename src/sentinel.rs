//! The characters and tokens the tool puts in text for a while and takes
//! out again before anything is written, in one place, each with what keeps
//! the same in a user's text from being taken for it (the reference test,
//! `tests/it/reference.rs`, gives workloads strings that hold each):
//!
//! - **Stand-in tokens** (`qXmi7Sq`: [`TOKEN_START`], a number,
//!   [`TOKEN_END`]) stand for a workload's strings in renderings alike
//!   workloads share (`reuse/stand_ins.rs`). ASCII letters and digits, which
//!   no quoting or escaping changes. A string that holds a token's start is
//!   never stood in for, and a profile or template input that holds one is
//!   rendered for real.
//! - **The plain mark** ([`PLAIN_MARK`], U+F8FF, private use) marks, in a
//!   rendering of the cluster's template, a plain scalar that held a
//!   stand-in: once filled, it is read as YAML reads a plain scalar
//!   (`mesh/istio/alike.rs`). Only that reading puts it, and only its
//!   filling reads it: a rendered text that holds the mark already is
//!   rendered for real, and every other filling leaves it as it is.
//! - **The gap** ([`GAP`], U+E000, private use) stands for a one-line
//!   string while the writer finds where a block's strings are written
//!   (`yaml/edit/blocks.rs`); a block whose strings or keys hold it is
//!   written whole each time.
//!
//! Imports nothing: every layer that uses one reads it here.

/// How every stand-in token starts, and ends after its number.
pub const TOKEN_START: &str = "qXmi";
pub const TOKEN_END: &str = "Sq";

/// Marks a rendered plain scalar that held a stand-in.
pub const PLAIN_MARK: char = '\u{f8ff}';

/// Stands for a one-line string in a block's text.
pub const GAP: &str = "\u{e000}";

/// Where the first stand-in token (or what starts like one) in `s`
/// starts: the guard of every string that could be taken for a token.
#[inline]
pub fn token_start(s: &str) -> Option<usize> {
    // Called on every string of every rendering: a byte scan for the
    // token's first letter beats a substring search on short strings.
    let (bytes, start) = (s.as_bytes(), TOKEN_START.as_bytes());
    let first = start.first().copied().unwrap_or_default();
    let mut from = 0;
    while let Some(at) = bytes
        .get(from..)
        .and_then(|rest| rest.iter().position(|&b| b == first))
    {
        let at = from + at;
        if bytes.get(at..at + start.len()) == Some(start) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

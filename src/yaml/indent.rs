//! Continuation lines that YAML 1.2 wants indented and kubectl's reader does not.
//!
//! `saphyr-parser` follows YAML 1.2: the lines of a quoted scalar or of a flow
//! collection after its first must be indented deeper than the block mapping
//! or list they are in. libyaml, and go-yaml after it (kubectl's reader), look
//! at no indentation inside them: in
//!
//! ```yaml
//! metadata:
//!   annotations:
//!     a: '[
//!     {"x": 1}
//!     ]'
//! ```
//!
//! the value of `a` is `[ {"x": 1} ]`. The white space that starts such a line
//! is no part of the value, however much there is; so when the parser refuses
//! a line of one for its indentation, `parse.rs` gives it the text again with
//! spaces put before the lines of that construct, and maps the parser's
//! markers back to the original text. This module finds the construct and its
//! lines in the original text.

/// What the parser says of a line that libyaml would take, if it is in a
/// flow collection or a quoted scalar.
pub(super) fn is_indentation_complaint(message: &str) -> bool {
    matches!(
        message,
        "invalid indentation in quoted scalar"
            | "tab cannot be used as indentation"
            | "invalid indentation in flow construct"
            | "invalid indentation"
            | "tabs disallowed within this context (block indentation)"
    )
}

/// How a quoted scalar that is never closed is refused, as the parser words it.
pub(super) const UNCLOSED_QUOTE: &str =
    "while scanning a quoted scalar, found unexpected end of stream";
pub(super) const MARKER_IN_QUOTE: &str =
    "while scanning a quoted scalar, found unexpected document indicator";

/// Where the outermost flow collection or quoted scalar holding byte `at` of
/// `text` starts. `from` is a place between tokens before `at` (where the
/// parser's events had got to), and `open` the bracket of the outermost flow
/// collection already open there. `None` when `at` is in neither, or when the
/// text between cannot be read simply (a block scalar starts in it).
pub(super) fn construct_at(
    text: &str,
    from: usize,
    at: usize,
    open: Option<usize>,
) -> Option<usize> {
    if open.is_some() {
        return open;
    }
    let mut lexer = Lexer {
        bytes: text.as_bytes(),
        at: from,
        flow: 0,
    };
    let mut outer = None;
    while lexer.at <= at {
        match lexer.next()? {
            Token::Open(bracket) if bracket > at => break,
            Token::Open(bracket) => {
                if lexer.flow == 1 {
                    outer = Some(bracket);
                }
            }
            Token::Close => {
                if lexer.flow == 0 {
                    outer = None;
                }
            }
            Token::Quoted(quote, end) => {
                // An unclosed quote holds everything after it.
                if end.is_err() || at < end.unwrap_or(0) {
                    return if lexer.flow > 0 { outer } else { Some(quote) };
                }
            }
            Token::BlockScalar => return None,
            Token::Other => {}
        }
    }
    outer
}

/// Where the flow collection or quoted scalar starting at byte `start` of
/// `text[..to]` ends (just after its closing bracket or quote). `Err` when it
/// is not closed before a document marker or the end: with the parser's
/// message for a quoted scalar, `None` for a flow collection (whose own
/// error the parser gives best).
pub(super) fn construct_end(
    text: &str,
    start: usize,
    to: usize,
) -> Result<usize, Option<&'static str>> {
    let bytes = text.as_bytes().get(..to).unwrap_or_default();
    match bytes.get(start) {
        Some(b'\'' | b'"') => quoted_end(bytes, start),
        Some(b'[' | b'{') => {
            let mut lexer = Lexer {
                bytes,
                at: start,
                flow: 0,
            };
            loop {
                match lexer.next() {
                    Some(Token::Close) if lexer.flow == 0 => return Ok(lexer.at),
                    Some(Token::Quoted(_, Err(_)) | Token::BlockScalar) | None => {
                        return Err(None);
                    }
                    Some(_) => {}
                }
            }
        }
        _ => Err(None),
    }
}

/// The starts of the lines of `text` that begin inside `start..end`, after
/// the first.
pub(super) fn continuation_lines(text: &str, start: usize, end: usize) -> Vec<usize> {
    let bytes = text.as_bytes();
    (start..end.min(bytes.len()))
        .filter_map(|i| match bytes.get(i) {
            Some(b'\n') => Some(i + 1),
            Some(b'\r') if bytes.get(i + 1) != Some(&b'\n') => Some(i + 1),
            _ => None,
        })
        .filter(|&line| line < end)
        .collect()
}

/// How many spaces to put before each continuation line of the construct
/// starting at `start`: one more than its column, so that every character of
/// the line stands deeper than the block the construct is in.
pub(super) fn padding_for(text: &str, start: usize) -> usize {
    let before = text.get(..start).unwrap_or_default();
    let line = before.rfind(['\n', '\r']).map_or(0, |i| i + 1);
    before.get(line..).unwrap_or_default().chars().count() + 1
}

/// Whether a document marker (`---` or `...` alone or before a space) starts
/// at byte `i`, a line start.
fn marker_at(bytes: &[u8], i: usize) -> bool {
    let three = bytes.get(i..i + 3);
    matches!(three, Some(b"---" | b"..."))
        && matches!(bytes.get(i + 3), None | Some(b' ' | b'\t' | b'\r' | b'\n'))
}

fn is_line_start(bytes: &[u8], i: usize) -> bool {
    i == 0
        || match bytes.get(i - 1) {
            Some(b'\n') => true,
            Some(b'\r') => bytes.get(i) != Some(&b'\n'),
            _ => false,
        }
}

/// The end of the quoted scalar whose quote is at `start`, as for [`construct_end`].
fn quoted_end(bytes: &[u8], start: usize) -> Result<usize, Option<&'static str>> {
    let quote = bytes.get(start).copied();
    let mut i = start + 1;
    loop {
        let Some(&b) = bytes.get(i) else {
            return Err(Some(UNCLOSED_QUOTE));
        };
        i += 1;
        match b {
            // An escape; an escaped line break is still a line break.
            b'\\' if quote == Some(b'"') && !matches!(bytes.get(i), Some(b'\n' | b'\r')) => {
                i += 1;
            }
            b'\'' if quote == Some(b'\'') && bytes.get(i) == Some(&b'\'') => i += 1,
            b if Some(b) == quote => return Ok(i),
            b'\n' | b'\r' if is_line_start(bytes, i) && marker_at(bytes, i) => {
                return Err(Some(MARKER_IN_QUOTE));
            }
            _ => {}
        }
    }
}

enum Token {
    /// A `[` or `{`, at this offset.
    Open(usize),
    /// A `]` or `}`.
    Close,
    /// A quoted scalar: its quote and its end.
    Quoted(usize, Result<usize, Option<&'static str>>),
    /// `|` or `>` in block context.
    BlockScalar,
    /// Anything else: an indicator, a comment, a plain scalar, an anchor, a tag.
    Other,
}

/// Reads tokens far enough to tell brackets and quotes from the rest: a
/// quote inside a plain scalar (`don't`) or a comment is no quote.
struct Lexer<'t> {
    bytes: &'t [u8],
    at: usize,
    /// Depth of flow collections.
    flow: usize,
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.at + ahead).copied()
    }

    fn blank_or_end(b: Option<u8>) -> bool {
        matches!(b, None | Some(b' ' | b'\t' | b'\r' | b'\n'))
    }

    /// The next token; `None` at the end of the text.
    fn next(&mut self) -> Option<Token> {
        while matches!(self.peek(0)?, b' ' | b'\t' | b'\r' | b'\n') {
            self.at += 1;
        }
        let start = self.at;
        let b = self.peek(0)?;
        let flow = self.flow > 0;
        match b {
            b'#' => self.skip_while(|b| !matches!(b, b'\n' | b'\r')),
            b'[' | b'{' => {
                self.flow += 1;
                self.at += 1;
                return Some(Token::Open(start));
            }
            b']' | b'}' => {
                self.flow = self.flow.saturating_sub(1);
                self.at += 1;
                return Some(Token::Close);
            }
            b'\'' | b'"' => {
                let end = quoted_end(self.bytes, start);
                self.at = end.unwrap_or(self.bytes.len());
                return Some(Token::Quoted(start, end));
            }
            b'|' | b'>' if !flow => return Some(Token::BlockScalar),
            b',' | b':' | b'?' => self.at += 1,
            b'-' if Self::blank_or_end(self.peek(1)) => self.at += 1,
            b'-' | b'.' if is_line_start(self.bytes, start) && marker_at(self.bytes, start) => {
                self.at += 3;
            }
            // Anchors, aliases, tags: up to a blank, or a flow indicator in brackets.
            b'&' | b'*' | b'!' => self.skip_while(|b| {
                !(matches!(b, b' ' | b'\t' | b'\r' | b'\n')
                    || flow && matches!(b, b',' | b'[' | b']' | b'{' | b'}'))
            }),
            // A plain scalar: in brackets up to a blank or a flow indicator;
            // in a block, to the end of the line, or a `: ` or ` #` in it.
            _ if flow => self.skip_while(|b| {
                !matches!(
                    b,
                    b' ' | b'\t' | b'\r' | b'\n' | b',' | b'[' | b']' | b'{' | b'}'
                )
            }),
            _ => loop {
                match self.peek(0) {
                    None | Some(b'\n' | b'\r') => break,
                    Some(b':') if Self::blank_or_end(self.peek(1)) => break,
                    Some(b' ' | b'\t') if self.peek(1) == Some(b'#') => break,
                    Some(_) => self.at += 1,
                }
            },
        }
        Some(Token::Other)
    }

    fn skip_while(&mut self, keep: impl Fn(u8) -> bool) {
        while self.peek(0).is_some_and(&keep) {
            self.at += 1;
        }
    }
}

#[cfg(test)]
// Tests may slice: a panic there is a failed test (as clippy.toml says for indexing).
#[allow(clippy::string_slice)]
mod tests {
    use super::*;

    #[test]
    fn the_construct_holding_a_place_is_found_past_plain_scalars_and_comments() {
        let text = "a: don't # it's\nb: 'x\ny'\n";
        let at = text.find("y'").expect("y");
        let quote = text.find("'x").expect("quote");
        assert_eq!(construct_at(text, 0, at, None), Some(quote));
        assert_eq!(construct_end(text, quote, text.len()), Ok(text.len() - 1));
        assert_eq!(construct_at(text, 0, 3, None), None);
        // Inside brackets, the outermost collection; JSON-like entries too.
        let text = "a: {\"k\":\"v\", l: ['x\ny', [1,\n2]]}\nb: 1\n";
        let at = text.find("2]").expect("2");
        assert_eq!(construct_at(text, 0, at, None), Some(3));
        assert_eq!(
            &text[3..construct_end(text, 3, text.len()).expect("closed")],
            "{\"k\":\"v\", l: ['x\ny', [1,\n2]]}"
        );
        assert_eq!(continuation_lines(text, 3, text.len() - 6), [20, 28]);
        // A block scalar before the place: not read.
        assert_eq!(construct_at("a: |\n  'x\nb: 'y\nz'\n", 0, 16, None), None);
    }

    #[test]
    fn quotes_end_at_their_closing_quote_or_not_at_all() {
        assert_eq!(quoted_end(b"'a''b' c", 0), Ok(6));
        assert_eq!(quoted_end(br#""a\"b\\" c"#, 0), Ok(8));
        assert_eq!(quoted_end(b"\"a\\\n---\n\"", 0), Err(Some(MARKER_IN_QUOTE)));
        assert_eq!(quoted_end(b"'a\n--- b'", 0), Err(Some(MARKER_IN_QUOTE)));
        assert_eq!(quoted_end(b"'a\n---b'", 0), Ok(8));
        assert_eq!(quoted_end(b"'a", 0), Err(Some(UNCLOSED_QUOTE)));
        assert_eq!(construct_end("[a, 'b", 0, 6), Err(None));
        assert_eq!(padding_for("é: 'x", 4), 4);
    }
}

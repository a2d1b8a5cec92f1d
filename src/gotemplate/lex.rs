//! A template's text cut into text runs and the tokens of its actions.
//!
//! `{{- ` and ` -}}` trim the white space beside an action, as Go's do;
//! comments (`{{/* … */}}`) leave nothing but their trimming.

use std::iter::Peekable;
use std::str::CharIndices;

/// One token, with the line it starts on and whether space came before it
/// (`.A.B` is one chain, `.A .B` two arguments).
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub kind: Kind,
    pub line: usize,
    pub spaced: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Text(String),
    /// `{{`: an action begins.
    Open,
    /// `}}`: it ends.
    Close,
    /// A name: a function or a keyword (`if`, `range`, `true`, `nil`, …).
    Ident(String),
    /// `.Name`.
    Field(String),
    /// `.` alone.
    Dot,
    /// `$name`, or `$` alone.
    Var(String),
    Str(String),
    Int(i64),
    Float(f64),
    Pipe,
    LParen,
    RParen,
    /// `:=`
    Declare,
    /// `=`
    Assign,
    Comma,
}

/// Tokens of `text`, or the message and line of what cannot be read.
pub fn lex(text: &str) -> Result<Vec<Token>, (String, usize)> {
    let mut lexer = Lexer {
        text,
        chars: text.char_indices().peekable(),
        line: 1,
        tokens: Vec::new(),
    };
    lexer.run()?;
    Ok(lexer.tokens)
}

struct Lexer<'a> {
    text: &'a str,
    chars: Peekable<CharIndices<'a>>,
    line: usize,
    tokens: Vec<Token>,
}

impl Lexer<'_> {
    fn run(&mut self) -> Result<(), (String, usize)> {
        let mut trim_next = false;
        loop {
            let start = self.offset();
            let rest = self.text.get(start..).unwrap_or_default();
            let open = rest.find("{{");
            let mut text = rest.get(..open.unwrap_or(rest.len())).unwrap_or_default();
            if trim_next {
                text = text.trim_start_matches(is_space);
            }
            let Some(open) = open else {
                self.push_text(text);
                return Ok(());
            };
            let after_open = rest.get(open + 2..).unwrap_or_default();
            let trims_before = after_open.starts_with("- ")
                || after_open.starts_with("-\t")
                || after_open.starts_with("-\n")
                || after_open.starts_with("-\r");
            if trims_before {
                text = text.trim_end_matches(is_space);
            }
            self.push_text(text);
            // Move past the text and the delimiter (and its trim marker).
            self.advance_to(start + open + 2 + usize::from(trims_before));
            let line = self.line;
            trim_next = if self.comment_ahead() {
                self.comment(line)?
            } else {
                self.push(Kind::Open, false);
                self.action(line)?
            };
        }
    }

    fn push_text(&mut self, text: &str) {
        if !text.is_empty() {
            let line = self.line;
            self.tokens.push(Token {
                kind: Kind::Text(text.to_string()),
                line,
                spaced: false,
            });
        }
    }

    fn push(&mut self, kind: Kind, spaced: bool) {
        self.tokens.push(Token {
            kind,
            line: self.line,
            spaced,
        });
    }

    fn offset(&mut self) -> usize {
        self.chars.peek().map_or(self.text.len(), |(i, _)| *i)
    }

    fn rest(&mut self) -> &str {
        let offset = self.offset();
        self.text.get(offset..).unwrap_or_default()
    }

    fn bump(&mut self) -> Option<char> {
        let (_, c) = self.chars.next()?;
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn advance_to(&mut self, offset: usize) {
        while self.offset() < offset {
            if self.bump().is_none() {
                break;
            }
        }
    }

    fn comment_ahead(&mut self) -> bool {
        let rest = self.rest();
        rest.trim_start_matches(is_space).starts_with("/*")
    }

    /// A comment; whether it trims the text after it.
    fn comment(&mut self, line: usize) -> Result<bool, (String, usize)> {
        let rest = self.rest();
        let Some(end) = rest.find("*/") else {
            return Err(("unclosed comment".to_string(), line));
        };
        let after = rest.get(end + 2..).unwrap_or_default();
        let (trims, close_len) = if after.starts_with(" -}}") {
            (true, 4)
        } else if after.starts_with("}}") {
            (false, 2)
        } else {
            return Err(("comment ends before closing delimiter".to_string(), line));
        };
        let target = self.offset() + end + 2 + close_len;
        self.advance_to(target);
        Ok(trims)
    }

    /// The tokens of one action, through its `}}`; whether it trims after.
    fn action(&mut self, line: usize) -> Result<bool, (String, usize)> {
        let mut spaced = false;
        loop {
            let rest = self.rest();
            if rest.starts_with("}}") {
                self.advance_by(2);
                self.push(Kind::Close, spaced);
                return Ok(false);
            }
            if spaced && rest.starts_with("-}}") {
                self.advance_by(3);
                self.push(Kind::Close, spaced);
                return Ok(true);
            }
            let Some(c) = self.bump() else {
                return Err(("unclosed action".to_string(), line));
            };
            if is_space(c) {
                spaced = true;
                continue;
            }
            let kind = match c {
                '|' => Kind::Pipe,
                '(' => Kind::LParen,
                ')' => Kind::RParen,
                ',' => Kind::Comma,
                '=' => Kind::Assign,
                ':' => {
                    if self.bump() != Some('=') {
                        return Err(("expected :=".to_string(), self.line));
                    }
                    Kind::Declare
                }
                '"' => Kind::Str(self.quoted()?),
                '`' => Kind::Str(self.raw()?),
                '\'' => Kind::Int(self.char_constant()?),
                '$' => Kind::Var(format!("${}", self.word())),
                '.' => {
                    if self.peek_is(|c| c.is_ascii_digit()) {
                        self.number(c)?
                    } else {
                        let name = self.word();
                        if name.is_empty() {
                            Kind::Dot
                        } else {
                            Kind::Field(name)
                        }
                    }
                }
                c if c.is_ascii_digit()
                    || ((c == '-' || c == '+')
                        && self.peek_is(|c| c.is_ascii_digit() || c == '.')) =>
                {
                    self.number(c)?
                }
                c if is_word(c) => {
                    let mut name = c.to_string();
                    name.push_str(&self.word());
                    Kind::Ident(name)
                }
                other => return Err((format!("unexpected {other:?} in action"), self.line)),
            };
            self.push(kind, spaced);
            spaced = false;
        }
    }

    fn advance_by(&mut self, n: usize) {
        for _ in 0..n {
            self.bump();
        }
    }

    fn peek_is(&mut self, test: impl Fn(char) -> bool) -> bool {
        self.chars.peek().is_some_and(|(_, c)| test(*c))
    }

    fn word(&mut self) -> String {
        let mut word = String::new();
        while self.peek_is(is_word) {
            if let Some(c) = self.bump() {
                word.push(c);
            }
        }
        word
    }

    fn number(&mut self, first: char) -> Result<Kind, (String, usize)> {
        let mut text = first.to_string();
        while self.peek_is(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_') {
            if let Some(c) = self.bump() {
                text.push(c);
            }
        }
        let clean = text.replace('_', "");
        let (negative, digits) = match clean.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, clean.strip_prefix('+').unwrap_or(&clean)),
        };
        let radix = [
            ("0x", 16),
            ("0X", 16),
            ("0o", 8),
            ("0O", 8),
            ("0b", 2),
            ("0B", 2),
        ]
        .into_iter()
        .find_map(|(prefix, radix)| digits.strip_prefix(prefix).map(|d| (d, radix)));
        let int = match radix {
            Some((d, radix)) => i64::from_str_radix(d, radix).ok(),
            None if digits.len() > 1
                && digits.starts_with('0')
                && digits.bytes().all(|b| b.is_ascii_digit()) =>
            {
                i64::from_str_radix(digits, 8).ok()
            }
            None => digits.parse::<i64>().ok(),
        };
        if let Some(i) = int {
            return Ok(Kind::Int(if negative { -i } else { i }));
        }
        match clean.parse::<f64>() {
            Ok(f) => Ok(Kind::Float(f)),
            Err(_) => Err((format!("bad number syntax: {text:?}"), self.line)),
        }
    }

    fn quoted(&mut self) -> Result<String, (String, usize)> {
        let line = self.line;
        let mut out = String::new();
        loop {
            match self.bump() {
                None | Some('\n') => return Err(("unterminated quoted string".to_string(), line)),
                Some('"') => return Ok(out),
                Some('\\') => out.push(self.escape(line)?),
                Some(c) => out.push(c),
            }
        }
    }

    fn escape(&mut self, line: usize) -> Result<char, (String, usize)> {
        let bad = || ("invalid escape in quoted string".to_string(), line);
        let c = self.bump().ok_or_else(bad)?;
        Ok(match c {
            'n' => '\n',
            't' => '\t',
            'r' => '\r',
            'a' => '\u{7}',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'v' => '\u{b}',
            '\\' | '"' | '\'' => c,
            'x' | 'u' | 'U' => {
                let width = match c {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut hex = String::new();
                for _ in 0..width {
                    hex.push(self.bump().ok_or_else(bad)?);
                }
                let code = u32::from_str_radix(&hex, 16).map_err(|_| bad())?;
                char::from_u32(code).ok_or_else(bad)?
            }
            _ => return Err(bad()),
        })
    }

    fn raw(&mut self) -> Result<String, (String, usize)> {
        let line = self.line;
        let mut out = String::new();
        loop {
            match self.bump() {
                None => return Err(("unterminated raw quoted string".to_string(), line)),
                Some('`') => return Ok(out),
                Some(c) => out.push(c),
            }
        }
    }

    fn char_constant(&mut self) -> Result<i64, (String, usize)> {
        let line = self.line;
        let c = match self.bump() {
            Some('\\') => self.escape(line)?,
            Some(c) => c,
            None => return Err(("unterminated character constant".to_string(), line)),
        };
        if self.bump() != Some('\'') {
            return Err(("unterminated character constant".to_string(), line));
        }
        Ok(i64::from(u32::from(c)))
    }
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<Kind> {
        lex(text).unwrap().into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn trim_markers_take_the_space_beside_them() {
        assert_eq!(
            kinds("a  {{- 1 -}}  b"),
            vec![
                Kind::Text("a".into()),
                Kind::Open,
                Kind::Int(1),
                Kind::Close,
                Kind::Text("b".into())
            ]
        );
        // "-3" with no space is a number, not a trim marker.
        assert_eq!(
            kinds("{{-3}}"),
            vec![Kind::Open, Kind::Int(-3), Kind::Close]
        );
    }

    #[test]
    fn comments_leave_only_their_trimming() {
        assert_eq!(
            kinds("a\n{{- /* note */ -}}\nb"),
            vec![Kind::Text("a".into()), Kind::Text("b".into())]
        );
        assert_eq!(kinds("{{/* x */}}"), vec![]);
    }

    #[test]
    fn actions_hold_fields_variables_and_literals() {
        let tokens = lex(r#"{{ $x := index .A.B "k\n" `raw` 'a' 1.5 | quote }}"#).unwrap();
        let kinds: Vec<_> = tokens.iter().map(|t| t.kind.clone()).collect();
        assert_eq!(
            kinds,
            vec![
                Kind::Open,
                Kind::Var("$x".into()),
                Kind::Declare,
                Kind::Ident("index".into()),
                Kind::Field("A".into()),
                Kind::Field("B".into()),
                Kind::Str("k\n".into()),
                Kind::Str("raw".into()),
                Kind::Int(97),
                Kind::Float(1.5),
                Kind::Pipe,
                Kind::Ident("quote".into()),
                Kind::Close
            ]
        );
        // .B follows .A with no space: one chain.
        assert!(!tokens[5].spaced);
        assert!(tokens[4].spaced);
    }

    #[test]
    fn a_closing_delimiter_inside_a_string_is_text() {
        assert_eq!(
            kinds(r#"{{ "}}" }}"#),
            vec![Kind::Open, Kind::Str("}}".into()), Kind::Close]
        );
    }

    #[test]
    fn lines_are_counted() {
        let tokens = lex("a\nb\n{{ x\n y }}").unwrap();
        assert_eq!(tokens[1].line, 3);
        assert_eq!(tokens[3].line, 4);
        assert_eq!(
            lex("\n{{ x").unwrap_err(),
            ("unclosed action".to_string(), 2)
        );
    }
}

//! Sprig's regular expressions, in Go's RE2 syntax (the `regex` crate
//! reads the same syntax and matches the same way: leftmost-first). Go's
//! `\d`, `\w`, `\s` and `\b` are ASCII; they are given to the crate so.
//! The plain forms fail on a bad pattern as Sprig's do (it panics), but
//! `regexMatch`, which answers false.

use regex::Regex;

use super::super::exec::list;
use super::super::funcs::{arity, int, string};
use super::super::value::Value;
use super::Result;
use crate::gotemplate::Func;

pub const FUNCS: &[(&str, Func)] = &[
    ("regexMatch", regex_match),
    ("mustRegexMatch", must_regex_match),
    ("regexFindAll", find_all),
    ("mustRegexFindAll", find_all),
    ("regexFind", find),
    ("mustRegexFind", find),
    ("regexReplaceAll", replace_all),
    ("mustRegexReplaceAll", replace_all),
    ("regexReplaceAllLiteral", replace_all_literal),
    ("mustRegexReplaceAllLiteral", replace_all_literal),
    ("regexSplit", split),
    ("mustRegexSplit", split),
    ("regexQuoteMeta", quote_meta),
];

/// Go's pattern in the crate's syntax: the Perl classes and word
/// boundaries made ASCII, as they are in Go.
fn translate(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    let mut in_class = false;
    // Just after `[` or `[^`, where `]` is a literal.
    let mut class_start = false;
    while let Some(c) = chars.next() {
        let at_class_start = std::mem::take(&mut class_start);
        match c {
            '\\' => {
                let Some(next) = chars.next() else {
                    out.push('\\');
                    break;
                };
                let (outside, inside) = match next {
                    'd' => ("[0-9]", "0-9"),
                    'D' => ("[^0-9]", "[^0-9]"),
                    'w' => ("[0-9A-Za-z_]", "0-9A-Za-z_"),
                    'W' => ("[^0-9A-Za-z_]", "[^0-9A-Za-z_]"),
                    's' => ("[\\t\\n\\f\\r ]", "\\t\\n\\f\\r "),
                    'S' => ("[^\\t\\n\\f\\r ]", "[^\\t\\n\\f\\r ]"),
                    'b' if !in_class => ("(?-u:\\b)", ""),
                    'B' if !in_class => ("(?-u:\\B)", ""),
                    other => {
                        out.push('\\');
                        out.push(other);
                        continue;
                    }
                };
                out.push_str(if in_class { inside } else { outside });
            }
            '[' if !in_class => {
                in_class = true;
                class_start = true;
                out.push('[');
                if chars.clone().next() == Some('^') {
                    chars.next();
                    out.push('^');
                }
            }
            '[' if in_class => {
                // `[:alpha:]` inside a class; any other `[` is literal in Go.
                let rest = chars.as_str();
                if rest.starts_with(':') && rest.find(":]").is_some() {
                    out.push('[');
                } else {
                    out.push_str("\\[");
                }
            }
            ']' if in_class && !at_class_start => {
                in_class = false;
                out.push(']');
            }
            ']' if in_class => out.push_str("\\]"),
            '&' | '~' if in_class => {
                out.push('\\');
                out.push(c);
            }
            '-' if in_class && chars.clone().next() == Some('-') => out.push_str("\\-"),
            c => out.push(c),
        }
    }
    out
}

/// The pattern compiled, or Go's kind of message.
fn compile(pattern: &str) -> std::result::Result<Regex, String> {
    Regex::new(&translate(pattern)).map_err(|e| format!("error parsing regexp: {e}: `{pattern}`"))
}

fn two_strings(args: &[Value]) -> std::result::Result<(&str, &str), String> {
    arity(args, 2)?;
    Ok((string(args, 0)?, string(args, 1)?))
}

fn regex_match(args: &[Value]) -> Result {
    let (pattern, s) = two_strings(args)?;
    Ok(Value::Bool(compile(pattern).is_ok_and(|re| re.is_match(s))))
}

fn must_regex_match(args: &[Value]) -> Result {
    let (pattern, s) = two_strings(args)?;
    Ok(Value::Bool(compile(pattern)?.is_match(s)))
}

/// At most `n` items (all of them when `n` is negative).
fn limit(n: i64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

fn find_all(args: &[Value]) -> Result {
    arity(args, 3)?;
    let (pattern, s, n) = (string(args, 0)?, string(args, 1)?, int(args, 2)?);
    let re = compile(pattern)?;
    Ok(list(
        re.find_iter(s)
            .take(limit(n))
            .map(|m| Value::str(m.as_str()))
            .collect(),
    ))
}

fn find(args: &[Value]) -> Result {
    let (pattern, s) = two_strings(args)?;
    let re = compile(pattern)?;
    Ok(Value::str(re.find(s).map_or("", |m| m.as_str())))
}

fn replace_all(args: &[Value]) -> Result {
    arity(args, 3)?;
    let (pattern, s, replacement) = (string(args, 0)?, string(args, 1)?, string(args, 2)?);
    Ok(Value::str(compile(pattern)?.replace_all(s, replacement)))
}

fn replace_all_literal(args: &[Value]) -> Result {
    arity(args, 3)?;
    let (pattern, s, replacement) = (string(args, 0)?, string(args, 1)?, string(args, 2)?);
    Ok(Value::str(
        compile(pattern)?.replace_all(s, regex::NoExpand(replacement)),
    ))
}

/// Go's `Regexp.Split`: the text between matches, at most `n` pieces.
fn split(args: &[Value]) -> Result {
    arity(args, 3)?;
    let (pattern, s, n) = (string(args, 0)?, string(args, 1)?, int(args, 2)?);
    let re = compile(pattern)?;
    if n == 0 {
        return Ok(list(Vec::new()));
    }
    if !pattern.is_empty() && s.is_empty() {
        return Ok(list(vec![Value::str("")]));
    }
    let mut pieces = Vec::new();
    let (mut begin, mut end) = (0, 0);
    for m in re.find_iter(s).take(limit(n)) {
        if n > 0 && pieces.len() as i64 == n - 1 {
            break;
        }
        end = m.start();
        if m.end() != 0 {
            pieces.push(Value::str(super::part(s, begin, end)));
        }
        begin = m.end();
    }
    if end != s.len() {
        pieces.push(Value::str(super::tail(s, begin)));
    }
    Ok(list(pieces))
}

/// Go's `regexp.QuoteMeta`: the characters special to a pattern escaped.
fn quote_meta(args: &[Value]) -> Result {
    arity(args, 1)?;
    let mut out = String::new();
    for c in string(args, 0)?.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    Ok(Value::str(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perl_classes_are_ascii_as_in_go() {
        let re = compile(r"^\d+\s\w+$").unwrap();
        assert!(re.is_match("12 ab_c"));
        assert!(!re.is_match("١٢ ab"));
        assert!(compile(r"[\d\-x]").unwrap().is_match("-"));
        assert!(compile(r"[]a]").unwrap().is_match("]"));
        assert!(compile(r"[[:alpha:]]").unwrap().is_match("q"));
        assert!(compile(r"(a").is_err());
    }

    #[test]
    fn split_keeps_go_quirks() {
        let s = |p: &str, text: &str, n: i64| {
            split(&[Value::str(p), Value::str(text), Value::Int(n)])
                .unwrap()
                .print()
        };
        assert_eq!(s("b", "abcbd", -1), "[a c d]");
        assert_eq!(s("b", "abcbd", 2), "[a cbd]");
        assert_eq!(s("x*", "abc", -1), "[a b c]");
        assert_eq!(s("a", "", -1), "[]");
    }
}

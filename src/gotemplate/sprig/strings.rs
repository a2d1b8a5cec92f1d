//! Sprig's string functions: case, trimming, abbreviation, wrapping,
//! quoting, splitting and joining.

use std::collections::BTreeMap;
use std::rc::Rc;

use super::super::exec::list;
use super::super::format::go_quote;
use super::super::funcs::{arg, arity, int, string};
use super::super::value::{GoMap, Value};
use super::{Result, head, strval, tail};
use crate::gotemplate::Func;

pub const FUNCS: &[(&str, Func)] = &[
    ("hello", hello),
    ("abbrev", abbrev),
    ("abbrevboth", abbrevboth),
    ("trunc", trunc),
    ("trim", trim),
    ("upper", upper),
    ("lower", lower),
    ("title", title),
    ("untitle", untitle),
    ("substr", substr),
    ("repeat", repeat),
    ("trimall", trim_all),
    ("trimAll", trim_all),
    ("trimSuffix", trim_suffix),
    ("trimPrefix", trim_prefix),
    ("nospace", nospace),
    ("initials", initials),
    ("swapcase", swapcase),
    ("snakecase", snakecase),
    ("camelcase", camelcase),
    ("kebabcase", kebabcase),
    ("wrap", wrap),
    ("wrapWith", wrap_with),
    ("contains", contains),
    ("hasPrefix", has_prefix),
    ("hasSuffix", has_suffix),
    ("quote", quote),
    ("squote", squote),
    ("cat", cat),
    ("indent", indent),
    ("nindent", nindent),
    ("replace", replace),
    ("plural", plural),
    ("toString", to_string),
    ("split", split),
    ("splitn", splitn),
    ("splitList", split_list),
    ("join", join),
    ("toStrings", to_strings),
];

fn hello(args: &[Value]) -> Result {
    arity(args, 0)?;
    Ok(Value::str("Hello!"))
}

fn one_string(args: &[Value]) -> std::result::Result<&str, String> {
    arity(args, 1)?;
    string(args, 0)
}

fn two_strings(args: &[Value]) -> std::result::Result<(&str, &str), String> {
    arity(args, 2)?;
    Ok((string(args, 0)?, string(args, 1)?))
}

/// `s` cut to `width` bytes with `...` at the end, when it is longer
/// (from `offset` on, with `...` at the start too, for `abbrevboth`).
fn abbreviate(s: &str, offset: i64, width: i64) -> std::result::Result<String, String> {
    let len = s.len() as i64;
    if s.is_empty() {
        return Ok(String::new());
    }
    if width < 4 {
        return Err("Minimum abbreviation width is 4".to_string());
    }
    if len <= width {
        return Ok(s.to_string());
    }
    let mut offset = offset.min(len);
    if len - offset < width - 3 {
        offset = len - (width - 3);
    }
    let bytes = s.as_bytes();
    let cut = |from: i64, to: i64| {
        String::from_utf8_lossy(super::bytes_part(bytes, from as usize, to as usize)).into_owned()
    };
    if offset <= 4 {
        return Ok(cut(0, width - 3) + "...");
    }
    if width < 7 {
        return Err("Minimum abbreviation width with offset is 7".to_string());
    }
    if offset + width - 3 < len {
        let rest = cut(offset, len);
        return Ok(format!("...{}", abbreviate(&rest, 0, width - 3)?));
    }
    Ok(format!("...{}", cut(len - (width - 3), len)))
}

fn abbrev(args: &[Value]) -> Result {
    arity(args, 2)?;
    let (width, s) = (int(args, 0)?, string(args, 1)?);
    if width < 4 {
        return Ok(Value::str(s));
    }
    Ok(Value::str(abbreviate(s, 0, width).unwrap_or_default()))
}

fn abbrevboth(args: &[Value]) -> Result {
    arity(args, 3)?;
    let (left, right, s) = (int(args, 0)?, int(args, 1)?, string(args, 2)?);
    if right < 4 || left > 0 && right < 7 {
        return Ok(Value::str(s));
    }
    Ok(Value::str(abbreviate(s, left, right).unwrap_or_default()))
}

/// `s` from byte `from` to byte `to`, Go's way: a cut inside a character
/// keeps the bytes (here: replaced as invalid text).
fn bytes_between(s: &str, from: usize, to: usize) -> String {
    match s.get(from..to) {
        Some(part) => part.to_string(),
        None => String::from_utf8_lossy(super::bytes_part(s.as_bytes(), from, to)).into_owned(),
    }
}

fn trunc(args: &[Value]) -> Result {
    arity(args, 2)?;
    let (n, s) = (int(args, 0)?, string(args, 1)?);
    let len = s.len() as i64;
    Ok(Value::str(if n < 0 && len + n > 0 {
        bytes_between(s, (len + n) as usize, s.len())
    } else if n >= 0 && len > n {
        bytes_between(s, 0, n as usize)
    } else {
        s.to_string()
    }))
}

/// Go's `unicode.IsSpace`.
pub fn is_go_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{85}' | '\u{a0}'
    ) || (c as u32 > 0xff && c.is_whitespace())
}

fn trim(args: &[Value]) -> Result {
    Ok(Value::str(one_string(args)?.trim_matches(is_go_space)))
}

fn upper(args: &[Value]) -> Result {
    Ok(Value::str(one_string(args)?.to_uppercase()))
}

fn lower(args: &[Value]) -> Result {
    Ok(Value::str(one_string(args)?.to_lowercase()))
}

/// A character in title case (its upper case, for a single character).
fn to_title(c: char) -> char {
    let mut upper = c.to_uppercase();
    match (upper.next(), upper.next()) {
        (Some(u), None) => u,
        _ => c,
    }
}

fn to_lower(c: char) -> char {
    let mut lower = c.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(l), None) => l,
        _ => c,
    }
}

/// Go's `strings.Title`: the first letter of each word in title case; a
/// word starts after anything but a letter, a digit or `_`.
fn title(args: &[Value]) -> Result {
    let s = one_string(args)?;
    let separator = |c: char| {
        if c.is_ascii() {
            !(c.is_ascii_alphanumeric() || c == '_')
        } else {
            !(c.is_alphabetic() || c.is_numeric()) && is_go_space(c)
        }
    };
    let mut previous = ' ';
    let out: String = s
        .chars()
        .map(|c| {
            let out = if separator(previous) { to_title(c) } else { c };
            previous = c;
            out
        })
        .collect();
    Ok(Value::str(out))
}

/// The first letter of each word (after white space) in lower case.
fn untitle(args: &[Value]) -> Result {
    let s = one_string(args)?;
    let mut next = true;
    let out: String = s
        .chars()
        .map(|c| {
            if is_go_space(c) {
                next = true;
                c
            } else if next {
                next = false;
                to_lower(c)
            } else {
                c
            }
        })
        .collect();
    Ok(Value::str(out))
}

fn substr(args: &[Value]) -> Result {
    arity(args, 3)?;
    let (start, end, s) = (int(args, 0)?, int(args, 1)?, string(args, 2)?);
    let len = s.len() as i64;
    let (from, to) = if start < 0 {
        (0, end)
    } else if end < 0 || end > len {
        (start, len)
    } else {
        (start, end)
    };
    if to < 0 || to > len {
        return Err(format!(
            "runtime error: slice bounds out of range [:{to}] with length {len}"
        ));
    }
    if from > to {
        return Err(format!(
            "runtime error: slice bounds out of range [{from}:{to}]"
        ));
    }
    Ok(Value::str(bytes_between(s, from as usize, to as usize)))
}

fn repeat(args: &[Value]) -> Result {
    arity(args, 2)?;
    let (n, s) = (int(args, 0)?, string(args, 1)?);
    let n = usize::try_from(n).map_err(|_| "strings: negative Repeat count")?;
    if n.checked_mul(s.len()).is_none_or(|size| size > 1 << 30) {
        return Err("strings: Repeat count causes overflow".to_string());
    }
    Ok(Value::str(s.repeat(n)))
}

fn trim_all(args: &[Value]) -> Result {
    let (cutset, s) = two_strings(args)?;
    Ok(Value::str(s.trim_matches(|c| cutset.contains(c))))
}

fn trim_prefix(args: &[Value]) -> Result {
    let (prefix, s) = two_strings(args)?;
    Ok(Value::str(s.strip_prefix(prefix).unwrap_or(s)))
}

fn trim_suffix(args: &[Value]) -> Result {
    let (suffix, s) = two_strings(args)?;
    Ok(Value::str(s.strip_suffix(suffix).unwrap_or(s)))
}

/// Sprig reads these byte by byte, each byte as the character of that
/// number (so text past ASCII comes out re-encoded, as Go's does).
fn latin1(s: &str) -> impl Iterator<Item = char> + '_ {
    s.bytes().map(char::from)
}

fn nospace(args: &[Value]) -> Result {
    let s = one_string(args)?;
    if !latin1(s).any(is_go_space) {
        return Ok(Value::str(s));
    }
    Ok(Value::str(
        latin1(s).filter(|&c| !is_go_space(c)).collect::<String>(),
    ))
}

fn initials(args: &[Value]) -> Result {
    let s = one_string(args)?;
    let mut gap = true;
    let mut out = String::new();
    for c in latin1(s) {
        if is_go_space(c) {
            gap = true;
        } else if gap {
            out.push(c);
            gap = false;
        }
    }
    Ok(Value::str(out))
}

fn swapcase(args: &[Value]) -> Result {
    let s = one_string(args)?;
    let mut space = true;
    let out: String = s
        .chars()
        .map(|c| {
            if c.is_uppercase() {
                space = false;
                to_lower(c)
            } else if c.is_lowercase() {
                let out = if space { to_title(c) } else { to_upper(c) };
                space = false;
                out
            } else {
                space = is_go_space(c);
                c
            }
        })
        .collect();
    Ok(Value::str(out))
}

/// `-`, `_` and white space join words.
fn is_connector(c: char) -> bool {
    c == '-' || c == '_' || is_go_space(c)
}

/// Go's `unicode.IsPunct` (ASCII exactly; common punctuation past it).
fn is_punct(c: char) -> bool {
    if c.is_ascii() {
        return matches!(
            c,
            '!' | '"'
                | '#'
                | '%'
                | '&'
                | '\''
                | '('
                | ')'
                | '*'
                | ','
                | '-'
                | '.'
                | '/'
                | ':'
                | ';'
                | '?'
                | '@'
                | '['
                | '\\'
                | ']'
                | '_'
                | '{'
                | '}'
        );
    }
    matches!(c as u32, 0xa1 | 0xa7 | 0xab | 0xb6 | 0xb7 | 0xbb | 0xbf | 0x2010..=0x2027 | 0x2030..=0x205e | 0x3001..=0x3003 | 0x3008..=0x3011)
}

/// A letter, but not a CJK ideograph.
fn is_alphabet(c: char) -> bool {
    c.is_alphabetic()
        && !matches!(c as u32, 0x3400..=0x4dbf | 0x4e00..=0x9fff | 0xf900..=0xfaff | 0x20000..=0x2fa1f)
}

#[derive(Clone, Copy, PartialEq)]
enum Word {
    None,
    Number,
    Upper,
    Alphabet,
    Connector,
    Punct,
    Other,
}

/// The next word of `s`, its kind, and the rest.
fn next_word(s: &str) -> (Word, &str, &str) {
    let mut chars = s.char_indices().peekable();
    let Some((_, first)) = chars.next() else {
        return (Word::None, "", "");
    };
    let end_where = |stop: &dyn Fn(char) -> bool, from: usize| -> usize {
        tail(s, from)
            .char_indices()
            .find(|&(_, c)| stop(c))
            .map_or(s.len(), |(i, _)| from + i)
    };
    let after_first = first.len_utf8();
    let (kind, end) = if is_connector(first) {
        (
            Word::Connector,
            end_where(&|c| !is_connector(c), after_first),
        )
    } else if is_punct(first) {
        (Word::Punct, end_where(&|c| !is_punct(c), after_first))
    } else if first.is_uppercase() {
        match tail(s, after_first).chars().next() {
            Some(second) if second.is_uppercase() => {
                // A run of capitals; the last starts the next word when a
                // letter follows it ("HTTPServer": "HTTP", "Server").
                let run_end = end_where(&|c| !c.is_uppercase(), after_first);
                match tail(s, run_end).chars().next() {
                    Some(next) if is_alphabet(next) => {
                        let last = head(s, run_end)
                            .chars()
                            .next_back()
                            .map_or(0, char::len_utf8);
                        (Word::Upper, run_end - last)
                    }
                    _ => (Word::Upper, run_end),
                }
            }
            Some(second) if is_alphabet(second) => (
                Word::Upper,
                end_where(&|c| !is_alphabet(c) || c.is_uppercase(), after_first),
            ),
            _ => (Word::Upper, after_first),
        }
    } else if is_alphabet(first) {
        (
            Word::Alphabet,
            end_where(&|c| !is_alphabet(c) || c.is_uppercase(), after_first),
        )
    } else if first.is_numeric() {
        (Word::Number, end_where(&|c| !c.is_numeric(), after_first))
    } else {
        (
            Word::Other,
            end_where(
                &|c| is_connector(c) || is_alphabet(c) || c.is_numeric() || is_punct(c),
                after_first,
            ),
        )
    };
    (kind, head(s, end), tail(s, end))
}

/// A word written lowered: capitals lowered, connectors as `connector`.
fn push_lowered(out: &mut String, kind: Word, word: &str, connector: char) {
    if kind != Word::Upper && kind != Word::Connector {
        out.push_str(word);
        return;
    }
    for c in word.chars() {
        if is_connector(c) {
            out.push(connector);
        } else if c.is_uppercase() {
            out.push(to_lower(c));
        } else {
            out.push(c);
        }
    }
}

/// `snakecase` and `kebabcase`: words lowered, joined by `connector`;
/// numbers stay with the letters they touch.
fn words_joined(s: &str, connector: char) -> String {
    let mut out = String::new();
    if s.is_empty() {
        return out;
    }
    let (mut kind, mut word, mut rest) = next_word(s);
    while !rest.is_empty() {
        if kind != Word::Connector {
            push_lowered(&mut out, kind, word, connector);
        }
        let (previous, last) = (kind, word);
        (kind, word, rest) = next_word(rest);
        match previous {
            Word::Number => {
                while kind == Word::Alphabet || kind == Word::Number {
                    push_lowered(&mut out, kind, word, connector);
                    (kind, word, rest) = next_word(rest);
                }
                if !matches!(kind, Word::None | Word::Punct | Word::Connector) {
                    out.push(connector);
                }
            }
            Word::Connector => push_lowered(&mut out, previous, last, connector),
            Word::Punct => {}
            _ => {
                if kind != Word::Number {
                    if kind != Word::Connector && kind != Word::Punct {
                        out.push(connector);
                    }
                    continue;
                }
                if rest.is_empty() {
                    continue;
                }
                let number = word;
                (kind, word, rest) = next_word(rest);
                if kind != Word::Alphabet {
                    push_lowered(&mut out, Word::Number, number, connector);
                    if kind != Word::Connector && kind != Word::Punct {
                        out.push(connector);
                    }
                    continue;
                }
                out.push(connector);
                push_lowered(&mut out, Word::Number, number, connector);
                while kind == Word::Alphabet || kind == Word::Number {
                    push_lowered(&mut out, kind, word, connector);
                    (kind, word, rest) = next_word(rest);
                }
                if !matches!(kind, Word::None | Word::Connector | Word::Punct) {
                    out.push(connector);
                }
            }
        }
    }
    push_lowered(&mut out, kind, word, connector);
    out
}

fn snakecase(args: &[Value]) -> Result {
    Ok(Value::str(words_joined(one_string(args)?, '_')))
}

fn kebabcase(args: &[Value]) -> Result {
    Ok(Value::str(words_joined(one_string(args)?, '-')))
}

/// `camelcase`: connectors dropped, the letter after one raised, the rest
/// lowered; connectors at the start are kept.
fn camelcase(args: &[Value]) -> Result {
    let s = one_string(args)?;
    let mut out = String::new();
    let mut chars = s.chars();
    let mut current = None;
    for c in chars.by_ref() {
        if !is_connector(c) {
            current = Some(to_upper(c));
            break;
        }
        out.push(c);
    }
    let Some(mut current) = current else {
        return Ok(Value::str(out));
    };
    for c in chars {
        let previous = current;
        if is_connector(c) && is_connector(previous) {
            out.push(previous);
            current = c;
            continue;
        }
        if is_connector(previous) {
            current = to_upper(c);
        } else {
            current = to_lower(c);
            out.push(previous);
        }
    }
    out.push(current);
    Ok(Value::str(out))
}

fn to_upper(c: char) -> char {
    let mut upper = c.to_uppercase();
    match (upper.next(), upper.next()) {
        (Some(u), None) => u,
        _ => c,
    }
}

/// Lines of `s` broken at spaces to at most `width` bytes; a longer word
/// is cut (`wrapWith`) or kept whole (`wrap`); lines joined by `newline`.
fn wrap_text(s: &str, width: i64, newline: &str, cut_long_words: bool) -> String {
    if s.is_empty() {
        return String::new();
    }
    let newline = if newline.is_empty() { "\n" } else { newline };
    let width = usize::try_from(width.max(1)).unwrap_or(1);
    let bytes = s.as_bytes();
    let piece = |from: usize, to: usize| super::bytes_part(bytes, from, to);
    let mut out: Vec<u8> = Vec::new();
    let mut offset = 0;
    while bytes.len() - offset > width {
        if bytes.get(offset) == Some(&b' ') {
            offset += 1;
            continue;
        }
        let end = width + offset + 1;
        match piece(offset, end).iter().rposition(|&b| b == b' ') {
            Some(space) => {
                out.extend_from_slice(piece(offset, offset + space));
                out.extend_from_slice(newline.as_bytes());
                offset += space + 1;
            }
            None if cut_long_words => {
                out.extend_from_slice(piece(offset, offset + width));
                out.extend_from_slice(newline.as_bytes());
                offset += width;
            }
            // A long word stays whole, up to the next space.
            None => match piece(offset + width, bytes.len())
                .iter()
                .position(|&b| b == b' ')
            {
                Some(space) => {
                    let at = offset + width + space;
                    out.extend_from_slice(piece(offset, at));
                    out.extend_from_slice(newline.as_bytes());
                    offset = at + 1;
                }
                None => {
                    out.extend_from_slice(piece(offset, bytes.len()));
                    offset = bytes.len();
                }
            },
        }
    }
    out.extend_from_slice(piece(offset, bytes.len()));
    String::from_utf8_lossy(&out).into_owned()
}

fn wrap(args: &[Value]) -> Result {
    arity(args, 2)?;
    Ok(Value::str(wrap_text(
        string(args, 1)?,
        int(args, 0)?,
        "\n",
        false,
    )))
}

fn wrap_with(args: &[Value]) -> Result {
    arity(args, 3)?;
    Ok(Value::str(wrap_text(
        string(args, 2)?,
        int(args, 0)?,
        string(args, 1)?,
        true,
    )))
}

fn contains(args: &[Value]) -> Result {
    let (needle, haystack) = two_strings(args)?;
    Ok(Value::Bool(haystack.contains(needle)))
}

fn has_prefix(args: &[Value]) -> Result {
    let (prefix, s) = two_strings(args)?;
    Ok(Value::Bool(s.starts_with(prefix)))
}

fn has_suffix(args: &[Value]) -> Result {
    let (suffix, s) = two_strings(args)?;
    Ok(Value::Bool(s.ends_with(suffix)))
}

fn quote(args: &[Value]) -> Result {
    let parts: Vec<String> = args
        .iter()
        .filter(|v| !matches!(v, Value::Nil))
        .map(|v| go_quote(&strval(v)))
        .collect();
    Ok(Value::str(parts.join(" ")))
}

fn squote(args: &[Value]) -> Result {
    let parts: Vec<String> = args
        .iter()
        .filter(|v| !matches!(v, Value::Nil))
        .map(|v| format!("'{}'", v.print()))
        .collect();
    Ok(Value::str(parts.join(" ")))
}

fn cat(args: &[Value]) -> Result {
    let parts: Vec<String> = args
        .iter()
        .filter(|v| !matches!(v, Value::Nil))
        .map(Value::print)
        .collect();
    Ok(Value::str(parts.join(" ")))
}

/// Sprig's `indent`: every line, the first too, after N spaces.
pub fn indent_text(n: i64, text: &str) -> String {
    let pad = " ".repeat(usize::try_from(n).unwrap_or(0));
    format!("{pad}{}", text.replace('\n', &format!("\n{pad}")))
}

fn indent(args: &[Value]) -> Result {
    arity(args, 2)?;
    Ok(Value::str(indent_text(int(args, 0)?, string(args, 1)?)))
}

fn nindent(args: &[Value]) -> Result {
    arity(args, 2)?;
    Ok(Value::str(format!(
        "\n{}",
        indent_text(int(args, 0)?, string(args, 1)?)
    )))
}

fn replace(args: &[Value]) -> Result {
    arity(args, 3)?;
    let (old, new, s) = (string(args, 0)?, string(args, 1)?, string(args, 2)?);
    Ok(Value::str(go_replace(s, old, new)))
}

/// Go's `strings.Replace(s, old, new, -1)`: an empty `old` matches before
/// each character and at the end.
fn go_replace(s: &str, old: &str, new: &str) -> String {
    if !old.is_empty() {
        return s.replace(old, new);
    }
    let mut out = String::from(new);
    for c in s.chars() {
        out.push(c);
        out.push_str(new);
    }
    out
}

fn plural(args: &[Value]) -> Result {
    arity(args, 3)?;
    let (one, many, n) = (string(args, 0)?, string(args, 1)?, int(args, 2)?);
    Ok(Value::str(if n == 1 { one } else { many }))
}

fn to_string(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(Value::str(strval(arg(args, 0))))
}

/// Go's `strings.SplitN`: `n` < 0 for every part, 0 for none; an empty
/// separator splits between characters.
pub fn go_split<'a>(s: &'a str, separator: &str, n: i64) -> Vec<&'a str> {
    if n == 0 {
        return Vec::new();
    }
    let limit = if n < 0 { usize::MAX } else { n as usize };
    if separator.is_empty() {
        let mut parts: Vec<&str> = Vec::new();
        let mut rest = s;
        while !rest.is_empty() {
            if parts.len() + 1 == limit {
                parts.push(rest);
                break;
            }
            let size = rest.chars().next().map_or(1, char::len_utf8);
            parts.push(head(rest, size));
            rest = tail(rest, size);
        }
        return parts;
    }
    s.splitn(limit, separator).collect()
}

fn numbered(parts: Vec<&str>) -> Value {
    let entries: BTreeMap<String, Value> = parts
        .into_iter()
        .enumerate()
        .map(|(i, part)| (format!("_{i}"), Value::str(part)))
        .collect();
    Value::Map(Rc::new(GoMap {
        entries,
        missing: Box::new(Value::Zero),
    }))
}

fn split(args: &[Value]) -> Result {
    let (separator, s) = two_strings(args)?;
    Ok(numbered(go_split(s, separator, -1)))
}

fn splitn(args: &[Value]) -> Result {
    arity(args, 3)?;
    let (separator, n, s) = (string(args, 0)?, int(args, 1)?, string(args, 2)?);
    Ok(numbered(go_split(s, separator, n)))
}

fn split_list(args: &[Value]) -> Result {
    let (separator, s) = two_strings(args)?;
    Ok(list(
        go_split(s, separator, -1)
            .into_iter()
            .map(Value::str)
            .collect(),
    ))
}

/// Sprig's `strslice`: a list's items but nils as strings, or the one value
/// as a string (nothing for nil).
pub fn string_items(value: &Value) -> Vec<String> {
    match value {
        Value::List(items) => items
            .iter()
            .filter(|v| !matches!(v, Value::Nil))
            .map(strval)
            .collect(),
        Value::Nil | Value::Zero => Vec::new(),
        other => vec![strval(other)],
    }
}

fn join(args: &[Value]) -> Result {
    arity(args, 2)?;
    let separator = string(args, 0)?;
    Ok(Value::str(string_items(arg(args, 1)).join(separator)))
}

fn to_strings(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(list(
        string_items(arg(args, 0))
            .into_iter()
            .map(Value::str)
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(f: Func, args: &[Value]) -> String {
        f(args).unwrap().print()
    }

    #[test]
    fn case_conversions_split_words_as_sprig_does() {
        let s = |text: &str| [Value::str(text)];
        assert_eq!(call(snakecase, &s("HTTPServer")), "http_server");
        assert_eq!(call(snakecase, &s("FirstName")), "first_name");
        assert_eq!(call(snakecase, &s("abc123Def")), "abc123_def");
        assert_eq!(call(kebabcase, &s("some value_here")), "some-value-here");
        assert_eq!(call(camelcase, &s("http_server")), "HttpServer");
        assert_eq!(call(camelcase, &s("_x_y")), "_XY");
        assert_eq!(call(swapcase, &s("Hello World")), "hELLO wORLD");
        assert_eq!(call(title, &s("hello wide-world")), "Hello Wide-World");
    }

    #[test]
    fn abbreviations_and_wrapping_count_bytes() {
        let a = |w: i64, text: &str| call(abbrev, &[Value::Int(w), Value::str(text)]);
        assert_eq!(a(5, "hello world"), "he...");
        assert_eq!(a(3, "hello world"), "hello world");
        let both = call(
            abbrevboth,
            &[Value::Int(5), Value::Int(10), Value::str("1234 5678 9123")],
        );
        assert_eq!(both, "...5678...");
        assert_eq!(
            wrap_text("hello world again", 7, "\n", true),
            "hello\nworld\nagain"
        );
        assert_eq!(wrap_text("abcdefghij", 4, "|", true), "abcd|efgh|ij");
        assert_eq!(wrap_text("abcdefghij kl", 4, "|", false), "abcdefghij|kl");
    }

    #[test]
    fn splitting_follows_go() {
        assert_eq!(go_split("abc", "", -1), ["a", "b", "c"]);
        assert_eq!(go_split("", "", -1), Vec::<&str>::new());
        assert_eq!(go_split("", ",", -1), [""]);
        assert_eq!(go_split("a,b,c", ",", 2), ["a", "b,c"]);
        assert_eq!(go_replace("ab", "", "-"), "-a-b-");
    }
}

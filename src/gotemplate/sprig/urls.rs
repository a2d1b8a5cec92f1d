//! Sprig's URLs: `urlParse` splits one into a dictionary of its parts
//! (Go's `net/url` reading: the path and fragment unescaped, the query
//! kept raw), `urlJoin` writes such a dictionary back as Go writes a URL.

use std::collections::BTreeMap;

use super::super::funcs::{arity, string};
use super::super::value::Value;
use super::dicts::{map_arg, new_map};
use super::reflect::kind_of;
use super::{Result, head, tail};
use crate::gotemplate::Func;

pub const FUNCS: &[(&str, Func)] = &[("urlParse", url_parse), ("urlJoin", url_join)];

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Path,
    Host,
    UserPassword,
    Fragment,
}

/// Whether Go's `net/url` escapes byte `c` in a part of kind `mode`.
fn should_escape(c: u8, mode: Mode) -> bool {
    if c.is_ascii_alphanumeric() {
        return false;
    }
    if mode == Mode::Host
        && matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'['
                | b']'
                | b'<'
                | b'>'
                | b'"'
        )
    {
        return false;
    }
    match c {
        b'-' | b'_' | b'.' | b'~' => return false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => {
            return match mode {
                Mode::Path => c == b'?',
                Mode::UserPassword => matches!(c, b'@' | b'/' | b'?' | b':'),
                Mode::Fragment => false,
                Mode::Host => true,
            };
        }
        _ => {}
    }
    !(mode == Mode::Fragment && matches!(c, b'!' | b'(' | b')' | b'*'))
}

fn escape(s: &str, mode: Mode) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        if should_escape(b, mode) {
            out.push_str(&format!("%{b:02X}"));
        } else {
            out.push(char::from(b));
        }
    }
    out
}

/// `%XX` escapes decoded, or Go's message for a bad one.
fn unescape(s: &str, mode: Mode) -> std::result::Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes.get(i).copied().unwrap_or(0) {
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok());
                let value = hex.and_then(|h| u8::from_str_radix(h, 16).ok());
                match value {
                    Some(v) if hex.is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit())) => {
                        out.push(v);
                        i += 3;
                    }
                    _ => {
                        let end = (i + 3).min(bytes.len());
                        return Err(format!(
                            "invalid URL escape {:?}",
                            String::from_utf8_lossy(super::bytes_part(bytes, i, end))
                        ));
                    }
                }
            }
            b if mode == Mode::Host && b < 0x80 && should_escape(b, Mode::Host) => {
                return Err(format!(
                    "invalid character {:?} in host name",
                    String::from_utf8_lossy(super::bytes_part(bytes, i, i + 1))
                ));
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

#[derive(Default)]
struct Url {
    scheme: String,
    opaque: String,
    user: Option<(String, Option<String>)>,
    host: String,
    path: String,
    raw_query: String,
    fragment: String,
}

fn parse_url(raw: &str) -> std::result::Result<Url, String> {
    let fail = |message: &str| format!("parse {raw:?}: {message}");
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err(fail("net/url: invalid control character in URL"));
    }
    let (rest, fragment) = match raw.split_once('#') {
        Some((rest, fragment)) => (rest, Some(fragment)),
        None => (raw, None),
    };
    let mut url = Url::default();
    if let Some(fragment) = fragment {
        url.fragment = unescape(fragment, Mode::Fragment).map_err(|e| fail(&e))?;
    }
    if rest == "*" {
        url.path = "*".to_string();
        return Ok(url);
    }
    let mut rest = rest;
    for (i, c) in rest.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return Err(fail("missing protocol scheme")),
            b':' => {
                url.scheme = head(rest, i).to_ascii_lowercase();
                rest = tail(rest, i + 1);
                break;
            }
            _ => break,
        }
    }
    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        rest = head(rest, rest.len() - 1);
    } else if let Some((before, query)) = rest.split_once('?') {
        url.raw_query = query.to_string();
        rest = before;
    }
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            url.opaque = rest.to_string();
            return Ok(url);
        }
        let segment = rest.split('/').next().unwrap_or("");
        if segment.contains(':') {
            return Err(fail("first path segment in URL cannot contain colon"));
        }
    }
    if (!url.scheme.is_empty() || !rest.starts_with("///")) && rest.starts_with("//") {
        let after = tail(rest, 2);
        let end = after.find('/').unwrap_or(after.len());
        let authority = head(after, end);
        rest = tail(after, end);
        let host_part = match authority.rfind('@') {
            Some(at) => {
                let info = head(authority, at);
                let (name, password) = match info.split_once(':') {
                    Some((n, p)) => (n, Some(p)),
                    None => (info, None),
                };
                let name = unescape(name, Mode::UserPassword).map_err(|e| fail(&e))?;
                let password = password
                    .map(|p| unescape(p, Mode::UserPassword))
                    .transpose()
                    .map_err(|e| fail(&e))?;
                url.user = Some((name, password));
                tail(authority, at + 1)
            }
            None => authority,
        };
        if !host_part.starts_with('[') {
            if let Some(colon) = host_part.rfind(':') {
                let port = tail(host_part, colon + 1);
                if !port.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(fail(&format!(
                        "invalid port {:?} after host",
                        tail(host_part, colon)
                    )));
                }
            }
        }
        url.host = unescape(host_part, Mode::Host).map_err(|e| fail(&e))?;
    }
    url.path = unescape(rest, Mode::Path).map_err(|e| fail(&e))?;
    Ok(url)
}

impl Url {
    fn hostname(&self) -> &str {
        let host = &self.host;
        if let Some(inner) = host.strip_prefix('[') {
            return inner.split(']').next().unwrap_or(inner);
        }
        match host.rfind(':') {
            Some(colon) => head(host, colon),
            None => host,
        }
    }

    fn userinfo(&self) -> String {
        match &self.user {
            None => String::new(),
            Some((name, password)) => {
                let mut out = escape(name, Mode::UserPassword);
                if let Some(password) = password {
                    out.push(':');
                    out.push_str(&escape(password, Mode::UserPassword));
                }
                out
            }
        }
    }

    /// Go's `URL.String`.
    fn write(&self) -> String {
        let mut out = String::new();
        if !self.scheme.is_empty() {
            out.push_str(&self.scheme);
            out.push(':');
        }
        if !self.opaque.is_empty() {
            out.push_str(&self.opaque);
        } else {
            if !self.scheme.is_empty() || !self.host.is_empty() || self.user.is_some() {
                if !self.host.is_empty() || !self.path.is_empty() || self.user.is_some() {
                    out.push_str("//");
                }
                if self.user.is_some() {
                    out.push_str(&self.userinfo());
                    out.push('@');
                }
                out.push_str(&escape(&self.host, Mode::Host));
            }
            let path = if self.path == "*" {
                "*".to_string()
            } else {
                escape(&self.path, Mode::Path)
            };
            if !path.is_empty() && !path.starts_with('/') && !self.host.is_empty() {
                out.push('/');
            }
            if out.is_empty() && path.split('/').next().unwrap_or("").contains(':') {
                out.push_str("./");
            }
            out.push_str(&path);
        }
        if !self.raw_query.is_empty() {
            out.push('?');
            out.push_str(&self.raw_query);
        }
        if !self.fragment.is_empty() {
            out.push('#');
            out.push_str(&escape(&self.fragment, Mode::Fragment));
        }
        out
    }
}

fn url_parse(args: &[Value]) -> Result {
    arity(args, 1)?;
    let url = parse_url(string(args, 0)?).map_err(|e| format!("unable to parse url: {e}"))?;
    let entries: BTreeMap<String, Value> = [
        ("scheme", url.scheme.clone()),
        ("host", url.host.clone()),
        ("hostname", url.hostname().to_string()),
        ("path", url.path.clone()),
        ("query", url.raw_query.clone()),
        ("opaque", url.opaque.clone()),
        ("fragment", url.fragment.clone()),
        ("userinfo", url.userinfo()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), Value::str(v)))
    .collect();
    Ok(new_map(entries))
}

fn url_join(args: &[Value]) -> Result {
    arity(args, 1)?;
    let map = map_arg(args, 0)?;
    let part = |key: &str| -> std::result::Result<String, String> {
        match map.and_then(|m| m.entries.get(key)) {
            None => Ok(String::new()),
            Some(Value::Str(s)) => Ok(s.to_string()),
            Some(Value::Nil) => Err(super::NIL_DEREFERENCE.to_string()),
            Some(other) => Err(format!(
                "unable to parse {key} key, must be of type string, but {} found",
                kind_of(other)
            )),
        }
    };
    let mut url = Url {
        scheme: part("scheme")?,
        host: part("host")?,
        path: part("path")?,
        raw_query: part("query")?,
        opaque: part("opaque")?,
        fragment: part("fragment")?,
        user: None,
    };
    let userinfo = part("userinfo")?;
    if !userinfo.is_empty() {
        let parsed = parse_url(&format!("proto://{userinfo}@host"))
            .map_err(|e| format!("unable to parse userinfo in dict: {e}"))?;
        url.user = parsed.user;
    }
    Ok(Value::str(url.write()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_read_and_write_back() {
        let text = "https://user:pw@example.com:8080/a%20b/c?q=1&r=x#frag";
        let url = parse_url(text).unwrap();
        assert_eq!(url.path, "/a b/c");
        assert_eq!(url.hostname(), "example.com");
        assert_eq!(url.write(), text);
        assert_eq!(parse_url("mailto:x@y.z").unwrap().opaque, "x@y.z");
        assert!(parse_url("a:b/c").is_ok());
        assert!(parse_url(":x").is_err());
        assert!(parse_url("x%zz").is_err());
    }
}

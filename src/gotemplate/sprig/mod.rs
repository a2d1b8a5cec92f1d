//! The Sprig v3 functions (the library Helm charts and Istio's injection
//! templates are written against), as its function table names them, with
//! its behaviour: argument order (the piped value last), its coercions of
//! numbers and strings, the `mustX` variants that fail where `x` answers a
//! default, and its messages where it fails.
//!
//! Each module holds one family: [`strings`], [`lists`], [`dicts`],
//! [`math`], [`defaults`], [`json`], [`encoding`], [`hashes`], [`crypto`]
//! (`derivePassword`, `decryptAES`), [`reflect`], [`paths`], [`urls`],
//! [`regex`], [`semver`], [`dates`].
//!
//! Left out, on purpose (a template calling one fails with "function …
//! not defined"):
//! - random output: `randAlphaNum`, `randAlpha`, `randAscii`, `randNumeric`,
//!   `randInt`, `randBytes`, `uuidv4`, `shuffle`;
//! - keys and certificates, made at random: `genPrivateKey`, `genCA`,
//!   `genCAWithKey`, `genSelfSignedCert`, `genSelfSignedCertWithKey`,
//!   `genSignedCert`, `genSignedCertWithKey`, `buildCustomCert`;
//! - hashes with a random salt, and encryption with a random IV: `bcrypt`,
//!   `htpasswd`, `encryptAES`;
//! - the clock: `now`, `ago` (`date`, `dateInZone` and `htmlDate` given a
//!   time, not the clock, are here; given anything else they read the clock
//!   as Sprig does);
//! - the network: `getHostByName`;
//! - the environment: `env` and `expandenv` (a mesh that reads its own
//!   settings there, as Istio's `env`, adds its own).
//!
//! Where the tool differs from Go, knowingly:
//! - Time zones: the machine's zone ("Local", which `date` and `toDate`
//!   use) is UTC, and a named zone other than UTC reads as UTC (Go reads
//!   the zone database).
//! - Types: a list is Go's `[]interface {}` and a map `map[string]interface
//!   {}` to `typeOf`, whatever function made it (Go's `splitList` makes a
//!   `[]string`, `until` a `[]int`).
//! - Arguments: a float with no fraction is taken where Go wants an `int`,
//!   and a missing value where it wants a string, and any map where it
//!   wants a `map[string]interface {}`; Go refuses them.

use super::Func;
use super::value::Value;

pub mod crypto;
pub mod dates;
pub mod defaults;
pub mod dicts;
pub mod encoding;
pub mod hashes;
pub mod json;
pub mod lists;
pub mod math;
pub mod paths;
pub mod reflect;
pub mod regex;
pub mod semver;
pub mod strings;
pub mod urls;

/// Every Sprig function the tool has, by module.
pub const TABLES: &[&[(&str, Func)]] = &[
    strings::FUNCS,
    lists::FUNCS,
    dicts::FUNCS,
    math::FUNCS,
    defaults::FUNCS,
    json::FUNCS,
    encoding::FUNCS,
    hashes::FUNCS,
    crypto::FUNCS,
    reflect::FUNCS,
    paths::FUNCS,
    urls::FUNCS,
    regex::FUNCS,
    semver::FUNCS,
    dates::FUNCS,
];

/// What a function answers: a value or Go's message.
pub type Result = std::result::Result<Value, String>;

/// Sprig's `strval` (`toString`): a string as itself, a time or a version
/// as its `String`, anything else as `%v` prints it (`<nil>` for nil).
pub fn strval(value: &Value) -> String {
    value.print()
}

/// The number `cast.ToInt64` (Sprig's `int`, `int64`, `add`…) makes of a
/// value: integers as they are, floats cut toward zero, strings read as Go
/// reads an integer literal (`0x1f`, `017`, `1_000`, a `.0` tail dropped),
/// booleans 0 or 1; anything else, or text that is no integer, is 0.
pub fn to_int64(value: &Value) -> i64 {
    match value {
        Value::Int(i) | Value::Int64(i) => *i,
        Value::Float(f) => float_to_int(*f),
        Value::Str(s) => parse_int_literal(trim_zero_decimal(s)).unwrap_or(0),
        Value::Bool(b) => i64::from(*b),
        _ => 0,
    }
}

/// A float cut toward zero as Go converts it on amd64: out of range (and
/// NaN) is the lowest int64.
pub fn float_to_int(f: f64) -> i64 {
    if f.is_nan() || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f) {
        i64::MIN
    } else {
        f as i64
    }
}

/// The number `cast.ToFloat64` makes of a value: as [`to_int64`], but
/// strings read as Go's `strconv.ParseFloat`.
pub fn to_float64(value: &Value) -> f64 {
    match value {
        Value::Int(i) | Value::Int64(i) => *i as f64,
        Value::Float(f) => *f,
        Value::Str(s) => parse_float(s).unwrap_or(0.0),
        Value::Bool(b) => f64::from(u8::from(*b)),
        _ => 0.0,
    }
}

/// `"12.000"` → `"12"`: the zeros after a point, and the point, dropped
/// when nothing but zeros follows it.
fn trim_zero_decimal(s: &str) -> &str {
    let Some((whole, fraction)) = s.rsplit_once('.') else {
        return s;
    };
    if !fraction.is_empty() && fraction.bytes().all(|b| b == b'0') {
        whole
    } else {
        s
    }
}

/// An integer literal as Go's `strconv.ParseInt(s, 0, 64)` reads it: a
/// sign, then decimal, `0x` hex, `0o` or leading-`0` octal, `0b` binary,
/// with `_` between digits.
pub fn parse_int_literal(s: &str) -> Option<i64> {
    let (negative, body) = match s.as_bytes().first()? {
        b'-' => (true, tail(s, 1)),
        b'+' => (false, tail(s, 1)),
        _ => (false, s),
    };
    let lower = body.to_ascii_lowercase();
    let (radix, digits, prefixed) = if let Some(rest) = lower.strip_prefix("0x") {
        (16, rest, true)
    } else if let Some(rest) = lower.strip_prefix("0b") {
        (2, rest, true)
    } else if let Some(rest) = lower.strip_prefix("0o") {
        (8, rest, true)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, tail(&lower, 1), true)
    } else {
        (10, lower.as_str(), false)
    };
    if !underscores_ok(digits, prefixed) {
        return None;
    }
    let digits: String = digits.chars().filter(|&c| c != '_').collect();
    if digits.is_empty() {
        return None;
    }
    let magnitude = u64::from_str_radix(&digits, radix).ok()?;
    if negative {
        if magnitude == 1 << 63 {
            Some(i64::MIN)
        } else {
            i64::try_from(magnitude).ok().map(|m| -m)
        }
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// Go's rule for `_` in a literal: only between digits, or right after a
/// base prefix.
fn underscores_ok(digits: &str, prefixed: bool) -> bool {
    if !digits.contains('_') {
        return true;
    }
    let bytes = digits.as_bytes();
    let mut previous_digit = prefixed;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'_' {
            if !previous_digit {
                return false;
            }
            previous_digit = false;
            if i + 1 == bytes.len() {
                return false;
            }
        } else {
            previous_digit = true;
        }
    }
    true
}

/// A float as Go's `strconv.ParseFloat` reads one (decimal forms,
/// `Inf`, `NaN`); `None` where Go fails.
pub fn parse_float(s: &str) -> Option<f64> {
    let body = s.trim_start_matches(['+', '-']);
    let lower = body.to_ascii_lowercase();
    if matches!(lower.as_str(), "inf" | "infinity" | "nan") {
        if s.len() - body.len() > 1 {
            return None;
        }
        return s.parse().ok();
    }
    if s.contains('_') || lower.starts_with("0x") || s.len() - body.len() > 1 {
        return None;
    }
    if !body
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    s.parse().ok()
}

/// `s` from byte `from` on (empty past its end).
pub fn tail(s: &str, from: usize) -> &str {
    s.get(from..).unwrap_or("")
}

/// `s` up to byte `to` (all of it past its end).
pub fn head(s: &str, to: usize) -> &str {
    s.get(..to).unwrap_or(s)
}

/// `s` from byte `from` to byte `to` (empty when out of range).
pub fn part(s: &str, from: usize, to: usize) -> &str {
    s.get(from..to).unwrap_or("")
}

/// `bytes[from..to]` (empty when out of range).
pub fn bytes_part(bytes: &[u8], from: usize, to: usize) -> &[u8] {
    bytes.get(from..to).unwrap_or_default()
}

/// What Go says when Sprig asks a nil value for its type.
pub const NIL_DEREFERENCE: &str =
    "runtime error: invalid memory address or nil pointer dereference";

/// A list argument's items, or `message` and the kind of what it is
/// instead (Sprig's "Cannot find first on type map").
pub fn items<'a>(value: &'a Value, message: &str) -> std::result::Result<&'a [Value], String> {
    match value {
        Value::List(items) => Ok(items),
        Value::Zero => Ok(&[]),
        Value::Nil => Err(NIL_DEREFERENCE.to_string()),
        other => Err(format!("{message} {}", reflect::kind_of(other))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_read_as_go_literals() {
        assert_eq!(parse_int_literal("0x1F"), Some(31));
        assert_eq!(parse_int_literal("017"), Some(15));
        assert_eq!(parse_int_literal("-0b101"), Some(-5));
        assert_eq!(parse_int_literal("1_000"), Some(1000));
        assert_eq!(parse_int_literal("1__0"), None);
        assert_eq!(parse_int_literal("_1"), None);
        assert_eq!(parse_int_literal("0_7"), Some(7));
        assert_eq!(parse_int_literal("09"), None);
        assert_eq!(parse_int_literal("-9223372036854775808"), Some(i64::MIN));
        assert_eq!(to_int64(&Value::str("12.00")), 12);
        assert_eq!(to_int64(&Value::str("12.5")), 0);
        assert_eq!(to_int64(&Value::Float(-2.7)), -2);
    }

    #[test]
    fn floats_read_as_go_reads_them() {
        assert_eq!(parse_float("1e3"), Some(1000.0));
        assert_eq!(parse_float(".5"), Some(0.5));
        assert!(parse_float("-Inf").is_some_and(f64::is_infinite));
        assert_eq!(parse_float("1_0"), None);
        assert_eq!(parse_float(" 1"), None);
    }
}

//! Sprig's base64 and base32 (the standard alphabets, padded). Decoding
//! bad input answers Go's error message as the text, as Sprig does.

use super::super::funcs::{arity, string};
use super::super::value::Value;
use super::Result;
use crate::gotemplate::Func;

pub const FUNCS: &[(&str, Func)] = &[
    ("b64enc", b64enc),
    ("b64dec", b64dec),
    ("b32enc", b32enc),
    ("b32dec", b32dec),
];

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const BASE32: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/// `bytes` in base64, padded with `=`.
pub fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = (0..3).fold(0u32, |n, i| {
            n << 8 | u32::from(chunk.get(i).copied().unwrap_or(0))
        });
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(symbol(BASE64, n >> (18 - 6 * i) & 63));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The alphabet's symbol for `value`.
fn symbol(alphabet: &[u8], value: u32) -> char {
    char::from(alphabet.get(value as usize).copied().unwrap_or(b'='))
}

fn base64_value(c: u8) -> Option<u32> {
    BASE64.iter().position(|&b| b == c).map(|i| i as u32)
}

/// Base64 text decoded as Go's `StdEncoding` decodes it (line breaks
/// skipped), or Go's message, which names the first bad byte.
pub fn base64_decode(text: &str) -> std::result::Result<Vec<u8>, String> {
    let src = text.as_bytes();
    let bad = |at: usize| format!("illegal base64 data at input byte {at}");
    let mut out = Vec::new();
    let mut si = 0;
    loop {
        let mut quantum = [0u32; 4];
        let mut got = 4;
        let mut j = 0;
        let mut end = false;
        while j < 4 {
            if si == src.len() {
                if j == 0 {
                    return Ok(out);
                }
                return Err(bad(si - j));
            }
            let c = src.get(si).copied().unwrap_or(0);
            si += 1;
            if let Some(v) = base64_value(c) {
                if let Some(slot) = quantum.get_mut(j) {
                    *slot = v;
                }
                j += 1;
                continue;
            }
            if c == b'\n' || c == b'\r' {
                continue;
            }
            if c != b'=' {
                return Err(bad(si - 1));
            }
            // Padding: two `=` after two characters, one after three.
            match j {
                0 | 1 => return Err(bad(si - 1)),
                2 => {
                    while matches!(src.get(si), Some(b'\n' | b'\r')) {
                        si += 1;
                    }
                    if si == src.len() {
                        return Err(bad(src.len()));
                    }
                    if src.get(si) != Some(&b'=') {
                        return Err(bad(si - 1));
                    }
                    si += 1;
                }
                _ => {}
            }
            while matches!(src.get(si), Some(b'\n' | b'\r')) {
                si += 1;
            }
            if si < src.len() {
                return Err(bad(si));
            }
            got = j;
            end = true;
            break;
        }
        let n = quantum[0] << 18 | quantum[1] << 12 | quantum[2] << 6 | quantum[3];
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(bytes.get(..got - 1).unwrap_or_default());
        if end {
            return Ok(out);
        }
    }
}

/// `bytes` in base32, padded with `=`.
pub fn base32_encode(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(5) {
        let n = (0..5).fold(0u64, |n, i| {
            n << 8 | u64::from(chunk.get(i).copied().unwrap_or(0))
        });
        let chars = (chunk.len() * 8).div_ceil(5);
        for i in 0..8 {
            if i < chars {
                out.push(symbol(BASE32, (n >> (35 - 5 * i) & 31) as u32));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Base32 text decoded as Go's `StdEncoding` decodes it (line breaks
/// dropped first), or Go's message.
pub fn base32_decode(text: &str) -> std::result::Result<Vec<u8>, String> {
    let src: Vec<u8> = text.bytes().filter(|&b| b != b'\n' && b != b'\r').collect();
    let total = src.len();
    let bad = |at: usize| format!("illegal base32 data at input byte {at}");
    let mut out = Vec::new();
    let mut rest: &[u8] = &src;
    let mut end = false;
    while !rest.is_empty() && !end {
        let mut quantum = [0u8; 8];
        let mut got = 8;
        let mut j = 0;
        while j < 8 {
            let Some((&c, after)) = rest.split_first() else {
                return Err(bad(total - j));
            };
            rest = after;
            if c == b'=' && j >= 2 && rest.len() < 8 {
                if rest.len() + j < 7 {
                    return Err(bad(total));
                }
                for k in 0..7 - j {
                    if rest.get(k).is_some_and(|&b| b != b'=') {
                        return Err(bad(total - rest.len() + k - 1));
                    }
                }
                got = j;
                end = true;
                if matches!(got, 1 | 3 | 6) {
                    return Err(bad(total - rest.len() - 1));
                }
                break;
            }
            match BASE32.iter().position(|&b| b == c) {
                Some(v) => {
                    if let Some(slot) = quantum.get_mut(j) {
                        *slot = v as u8;
                    }
                }
                None => return Err(bad(total - rest.len() - 1)),
            }
            j += 1;
        }
        let n = quantum.iter().fold(0u64, |n, &v| n << 5 | u64::from(v));
        let bytes = n.to_be_bytes();
        let count = match got {
            8 => 5,
            7 => 4,
            5 => 3,
            4 => 2,
            _ => 1,
        };
        out.extend_from_slice(bytes.get(3..3 + count).unwrap_or_default());
    }
    Ok(out)
}

fn one_string(args: &[Value]) -> std::result::Result<&str, String> {
    arity(args, 1)?;
    string(args, 0)
}

fn text(bytes: Vec<u8>) -> Value {
    Value::str(String::from_utf8_lossy(&bytes).into_owned())
}

fn b64enc(args: &[Value]) -> Result {
    Ok(Value::str(base64_encode(one_string(args)?.as_bytes())))
}

fn b64dec(args: &[Value]) -> Result {
    Ok(match base64_decode(one_string(args)?) {
        Ok(bytes) => text(bytes),
        Err(message) => Value::str(message),
    })
}

fn b32enc(args: &[Value]) -> Result {
    Ok(Value::str(base32_encode(one_string(args)?.as_bytes())))
}

fn b32dec(args: &[Value]) -> Result {
    Ok(match base32_decode(one_string(args)?) {
        Ok(bytes) => text(bytes),
        Err(message) => Value::str(message),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_and_names_the_bad_byte() {
        for s in ["", "f", "fo", "foo", "foob", "fooba", "foobar"] {
            assert_eq!(
                base64_decode(&base64_encode(s.as_bytes())).unwrap(),
                s.as_bytes()
            );
            assert_eq!(
                base32_decode(&base32_encode(s.as_bytes())).unwrap(),
                s.as_bytes()
            );
        }
        assert_eq!(base64_encode(b"foob"), "Zm9vYg==");
        assert_eq!(base32_encode(b"foob"), "MZXW6YQ=");
        assert_eq!(base64_decode("Zm9v\nYg==").unwrap(), b"foob");
        assert_eq!(
            base64_decode("Zm9vY").unwrap_err(),
            "illegal base64 data at input byte 4"
        );
        assert_eq!(
            base64_decode("Zm!v").unwrap_err(),
            "illegal base64 data at input byte 2"
        );
        assert_eq!(
            base32_decode("MZXW6Y").unwrap_err(),
            "illegal base32 data at input byte 0"
        );
    }
}

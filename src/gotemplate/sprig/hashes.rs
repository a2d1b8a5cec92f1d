//! Sprig's checksums of a string, as hex (`sha1sum`, `sha256sum`) or a
//! decimal number (`adler32sum`).

use sha2::Digest as _;

use super::super::funcs::{arity, string};
use super::super::value::Value;
use super::Result;
use crate::gotemplate::Func;

pub const FUNCS: &[(&str, Func)] = &[
    ("sha1sum", sha1sum),
    ("sha256sum", sha256sum),
    ("adler32sum", adler32sum),
];

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-1 (FIPS 180-4) of `data`.
pub fn sha1(data: &[u8]) -> [u8; 20] {
    let mut state: [u32; 5] = [
        0x6745_2301,
        0xefcd_ab89,
        0x98ba_dcfe,
        0x1032_5476,
        0xc3d2_e1f0,
    ];
    let mut message = data.to_vec();
    message.push(0x80);
    while message.len() % 64 != 56 {
        message.push(0);
    }
    message.extend_from_slice(&((data.len() as u64).wrapping_mul(8)).to_be_bytes());
    for block in message.chunks(64) {
        let mut w: Vec<u32> = block
            .chunks_exact(4)
            .map(|word| word.iter().fold(0u32, |n, &b| n << 8 | u32::from(b)))
            .collect();
        for i in 16..80 {
            let at = |back: usize| w.get(i - back).copied().unwrap_or(0);
            let next = (at(3) ^ at(8) ^ at(14) ^ at(16)).rotate_left(1);
            w.push(next);
        }
        let [mut a, mut b, mut c, mut d, mut e] = state;
        for (i, &word) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5a82_7999),
                20..=39 => (b ^ c ^ d, 0x6ed9_eba1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8f1b_bcdc),
                _ => (b ^ c ^ d, 0xca62_c1d6),
            };
            let next = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(word);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = next;
        }
        for (s, v) in state.iter_mut().zip([a, b, c, d, e]) {
            *s = s.wrapping_add(v);
        }
    }
    let mut out = [0u8; 20];
    for (slot, byte) in out
        .iter_mut()
        .zip(state.iter().flat_map(|s| s.to_be_bytes()))
    {
        *slot = byte;
    }
    out
}

/// Adler-32 (RFC 1950) of `data`.
pub fn adler32(data: &[u8]) -> u32 {
    const MOD: u32 = 65521;
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in data.chunks(5552) {
        for &byte in chunk {
            a += u32::from(byte);
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    b << 16 | a
}

fn one_string(args: &[Value]) -> std::result::Result<&str, String> {
    arity(args, 1)?;
    string(args, 0)
}

fn sha1sum(args: &[Value]) -> Result {
    Ok(Value::str(hex(&sha1(one_string(args)?.as_bytes()))))
}

fn sha256sum(args: &[Value]) -> Result {
    Ok(Value::str(hex(&sha2::Sha256::digest(
        one_string(args)?.as_bytes(),
    ))))
}

fn adler32sum(args: &[Value]) -> Result {
    Ok(Value::str(
        adler32(one_string(args)?.as_bytes()).to_string(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksums_match_known_values() {
        assert_eq!(hex(&sha1(b"")), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(
            hex(&sha1(b"abc")),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        let long = "a".repeat(1000);
        assert_eq!(
            hex(&sha1(long.as_bytes())),
            "291e9a6c66994949b57ba5e650361e98fc36b1ba"
        );
        assert_eq!(adler32(b"Wikipedia"), 0x11e6_0398);
    }
}

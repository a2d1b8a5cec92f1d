//! Sprig's two deterministic functions of cryptography: `derivePassword`
//! (the Master Password algorithm: scrypt over the master password, an
//! HMAC-SHA256 over the site, and a template per password type) and
//! `decryptAES` (AES-256-CBC, the key the password zero-padded or cut to
//! 32 bytes, the IV the first block, the last byte telling how much to
//! drop). The primitives are written here from their specifications:
//! HMAC (RFC 2104), PBKDF2 (RFC 8018), scrypt (RFC 7914), AES (FIPS-197).
//!
//! `decryptAES` fails where Sprig's code panics, with Go's runtime
//! message (input shorter than a block, not whole blocks, a last byte
//! larger than the text); text that is no UTF-8 is read as Go reads it
//! rune by rune, each stray byte U+FFFD.

use std::sync::OnceLock;

use sha2::Digest as _;

use super::super::funcs::{arg, arity, string};
use super::super::value::Value;
use super::Result;
use super::encoding::base64_decode;
use crate::gotemplate::Func;

pub const FUNCS: &[(&str, Func)] = &[
    ("derivePassword", derive_password),
    ("decryptAES", decrypt_aes),
];

// ---------------------------------------------------------------------
// HMAC-SHA256 and PBKDF2.

const SHA256_BLOCK: usize = 64;

/// HMAC-SHA256 (RFC 2104) of the concatenated `parts` under `key`.
pub fn hmac_sha256(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut block = [0u8; SHA256_BLOCK];
    if key.len() > SHA256_BLOCK {
        let digest: [u8; 32] = sha2::Sha256::digest(key).into();
        fill(&mut block, &digest);
    } else {
        fill(&mut block, key);
    }
    let mut inner = sha2::Sha256::new();
    inner.update(block.map(|b| b ^ 0x36));
    for part in parts {
        inner.update(part);
    }
    let mut outer = sha2::Sha256::new();
    outer.update(block.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

/// `to` starting with `from`'s bytes (as many as fit).
fn fill(to: &mut [u8], from: &[u8]) {
    for (slot, &byte) in to.iter_mut().zip(from) {
        *slot = byte;
    }
}

/// PBKDF2 (RFC 8018) with HMAC-SHA256: `length` bytes from `password`
/// and `salt`, `rounds` iterations.
pub fn pbkdf2_sha256(password: &[u8], salt: &[u8], rounds: u32, length: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(length);
    let mut index: u32 = 1;
    while out.len() < length {
        let mut u = hmac_sha256(password, &[salt, &index.to_be_bytes()]);
        let mut t = u;
        for _ in 1..rounds {
            u = hmac_sha256(password, &[&u]);
            for (acc, b) in t.iter_mut().zip(u) {
                *acc ^= b;
            }
        }
        let wanted = (length - out.len()).min(t.len());
        out.extend(t.iter().take(wanted));
        index = index.wrapping_add(1);
    }
    out
}

// ---------------------------------------------------------------------
// scrypt.

/// Sixteen little-endian words: one Salsa20 block.
type Words = [u32; 16];

/// One Salsa20 quarter round on `(a, b, c, d)`.
#[inline(always)]
fn quarter(a: u32, b: u32, c: u32, d: u32) -> (u32, u32, u32, u32) {
    let b = b ^ a.wrapping_add(d).rotate_left(7);
    let c = c ^ b.wrapping_add(a).rotate_left(9);
    let d = d ^ c.wrapping_add(b).rotate_left(13);
    let a = a ^ d.wrapping_add(c).rotate_left(18);
    (a, b, c, d)
}

/// The Salsa20/8 core: four double rounds, then the input added back.
fn salsa20_8(input: &Words) -> Words {
    let [
        mut x0,
        mut x1,
        mut x2,
        mut x3,
        mut x4,
        mut x5,
        mut x6,
        mut x7,
        mut x8,
        mut x9,
        mut x10,
        mut x11,
        mut x12,
        mut x13,
        mut x14,
        mut x15,
    ] = *input;
    for _ in 0..4 {
        // Columns.
        (x0, x4, x8, x12) = quarter(x0, x4, x8, x12);
        (x5, x9, x13, x1) = quarter(x5, x9, x13, x1);
        (x10, x14, x2, x6) = quarter(x10, x14, x2, x6);
        (x15, x3, x7, x11) = quarter(x15, x3, x7, x11);
        // Rows.
        (x0, x1, x2, x3) = quarter(x0, x1, x2, x3);
        (x5, x6, x7, x4) = quarter(x5, x6, x7, x4);
        (x10, x11, x8, x9) = quarter(x10, x11, x8, x9);
        (x15, x12, x13, x14) = quarter(x15, x12, x13, x14);
    }
    let mut out = [
        x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15,
    ];
    for (word, add) in out.iter_mut().zip(input) {
        *word = word.wrapping_add(*add);
    }
    out
}

/// scrypt's BlockMix over the `2r` blocks of `input`, into `output`:
/// each block mixed into a running Salsa20/8 state, the results of even
/// positions first, then the odd ones.
fn block_mix(input: &[Words], output: &mut [Words]) {
    let half = input.len() / 2;
    let mut x = input.last().copied().unwrap_or_default();
    for (i, block) in input.iter().enumerate() {
        for (w, b) in x.iter_mut().zip(block) {
            *w ^= b;
        }
        x = salsa20_8(&x);
        let to = if i % 2 == 0 { i / 2 } else { half + i / 2 };
        if let Some(slot) = output.get_mut(to) {
            *slot = x;
        }
    }
}

/// scrypt's ROMix over one `128 r`-byte chunk, in place, with `n`
/// copies of the chunk as scratch in `v` (reused from chunk to chunk).
fn ro_mix(chunk: &mut [u8], n: usize, v: &mut Vec<Words>) {
    let blocks = chunk.len() / 64;
    let mut x: Vec<Words> = chunk
        .chunks_exact(64)
        .map(|bytes| {
            let mut words = [0u32; 16];
            for (w, le) in words.iter_mut().zip(bytes.chunks_exact(4)) {
                *w = le.iter().rev().fold(0, |n, &b| n << 8 | u32::from(b));
            }
            words
        })
        .collect();
    let mut y = vec![[0u32; 16]; blocks];
    v.clear();
    for _ in 0..n {
        v.extend_from_slice(&x);
        block_mix(&x, &mut y);
        std::mem::swap(&mut x, &mut y);
    }
    for _ in 0..n {
        // Integerify: the first word of the last block, modulo n (a
        // power of two).
        let j = x.last().map_or(0, |last| last[0] as usize & (n - 1));
        if let Some(from) = v.get(j * blocks..(j + 1) * blocks) {
            for (xb, vb) in x.iter_mut().zip(from) {
                for (w, b) in xb.iter_mut().zip(vb) {
                    *w ^= b;
                }
            }
        }
        block_mix(&x, &mut y);
        std::mem::swap(&mut x, &mut y);
    }
    for (bytes, w) in chunk.chunks_exact_mut(4).zip(x.iter().flatten()) {
        fill(bytes, &w.to_le_bytes());
    }
}

/// scrypt (RFC 7914): `length` bytes from `password` and `salt`, cost
/// `n` (a power of two above 1), block size `r`, parallelism `p`.
pub fn scrypt(
    password: &[u8],
    salt: &[u8],
    n: usize,
    r: usize,
    p: usize,
    length: usize,
) -> Vec<u8> {
    let chunk = 128 * r;
    let mut b = pbkdf2_sha256(password, salt, 1, p * chunk);
    let mut v = Vec::with_capacity(n * 2 * r);
    for part in b.chunks_exact_mut(chunk) {
        ro_mix(part, n, &mut v);
    }
    pbkdf2_sha256(password, &b, 1, length)
}

// ---------------------------------------------------------------------
// derivePassword.

/// What Master Password salts its keys with.
const SEED: &[u8] = b"com.lyndir.masterpassword";

/// The templates of each password type Sprig knows.
fn password_templates(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "maximum" => &["anoxxxxxxxxxxxxxxxxx", "axxxxxxxxxxxxxxxxxno"],
        "long" => &[
            "CvcvnoCvcvCvcv",
            "CvcvCvcvnoCvcv",
            "CvcvCvcvCvcvno",
            "CvccnoCvcvCvcv",
            "CvccCvcvnoCvcv",
            "CvccCvcvCvcvno",
            "CvcvnoCvccCvcv",
            "CvcvCvccnoCvcv",
            "CvcvCvccCvcvno",
            "CvcvnoCvcvCvcc",
            "CvcvCvcvnoCvcc",
            "CvcvCvcvCvccno",
            "CvccnoCvccCvcv",
            "CvccCvccnoCvcv",
            "CvccCvccCvcvno",
            "CvcvnoCvccCvcc",
            "CvcvCvccnoCvcc",
            "CvcvCvccCvccno",
            "CvccnoCvcvCvcc",
            "CvccCvcvnoCvcc",
            "CvccCvcvCvccno",
        ],
        "medium" => &["CvcnoCvc", "CvcCvcno"],
        "short" => &["Cvcn"],
        "basic" => &["aaanaaan", "aannaaan", "aaannaaa"],
        "pin" => &["nnnn"],
        _ => return None,
    })
}

/// The characters a template's letter stands for.
fn template_characters(class: u8) -> &'static [u8] {
    match class {
        b'V' => b"AEIOU",
        b'C' => b"BCDFGHJKLMNPQRSTVWXYZ",
        b'v' => b"aeiou",
        b'c' => b"bcdfghjklmnpqrstvwxyz",
        b'A' => b"AEIOUBCDFGHJKLMNPQRSTVWXYZ",
        b'a' => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz",
        b'n' => b"0123456789",
        b'o' => b"@&%?,=[]_:-+*$#!'^~;()/.",
        b'x' => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz0123456789!@#$%^&*()",
        _ => b"",
    }
}

/// A length as Master Password writes it: four bytes, big-endian (Go's
/// `uint32` of it, so cut to 32 bits).
fn length_bytes(bytes: &[u8]) -> [u8; 4] {
    (bytes.len() as u32).to_be_bytes()
}

/// Master Password's site password, as Sprig's `derivePassword` makes it,
/// or its message for an unknown type.
pub fn master_password(counter: u32, kind: &str, password: &str, user: &str, site: &str) -> String {
    let Some(templates) = password_templates(kind) else {
        return format!("cannot find password template {kind}");
    };
    let user = user.as_bytes();
    let salt = [SEED, &length_bytes(user), user].concat();
    let key = scrypt(password.as_bytes(), &salt, 32768, 8, 2, 64);
    let site = site.as_bytes();
    let seed = hmac_sha256(
        &key,
        &[SEED, &length_bytes(site), site, &counter.to_be_bytes()],
    );
    let first = seed.first().copied().map_or(0, usize::from);
    let template = templates
        .get(first % templates.len().max(1))
        .copied()
        .unwrap_or("");
    template
        .bytes()
        .zip(seed.iter().skip(1))
        .filter_map(|(class, &pick)| {
            let chars = template_characters(class);
            chars
                .get(usize::from(pick) % chars.len().max(1))
                .map(|&c| char::from(c))
        })
        .collect()
}

/// A `uint32` argument as Go's template takes it: a non-negative integer
/// constant, cut to 32 bits (a float with no fraction too, knowingly);
/// an `int64` (Sprig's arithmetic) is refused as Go refuses it.
fn uint32_arg(args: &[Value], i: usize) -> std::result::Result<u32, String> {
    match arg(args, i) {
        Value::Int(n) if *n >= 0 => Ok(*n as u32),
        Value::Float(f) if f.fract() == 0.0 && (0.0..18_446_744_073_709_551_616.0).contains(f) => {
            Ok(*f as u64 as u32)
        }
        Value::Int(n) => Err(format!("expected unsigned integer; found {n}")),
        Value::Float(f) => Err(format!("expected unsigned integer; found {f}")),
        Value::Nil => Err("cannot assign nil to uint32".to_string()),
        other => Err(format!(
            "wrong type for value; expected uint32; got {}",
            other.type_name()
        )),
    }
}

fn derive_password(args: &[Value]) -> Result {
    arity(args, 5)?;
    let counter = uint32_arg(args, 0)?;
    let kind = string(args, 1)?;
    let password = string(args, 2)?;
    let user = string(args, 3)?;
    let site = string(args, 4)?;
    Ok(Value::str(master_password(
        counter, kind, password, user, site,
    )))
}

// ---------------------------------------------------------------------
// AES-256 decryption.

/// Multiplication in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1.
fn gf_mul(mut a: u8, mut b: u8) -> u8 {
    let mut product = 0;
    while b != 0 {
        if b & 1 != 0 {
            product ^= a;
        }
        let carry = a & 0x80 != 0;
        a <<= 1;
        if carry {
            a ^= 0x1b;
        }
        b >>= 1;
    }
    product
}

/// The multiplicative inverse in GF(2^8) (0 for 0): `a` to the 254th.
fn gf_inverse(a: u8) -> u8 {
    let mut result = 1;
    let mut power = a;
    let mut exponent = 254u8;
    while exponent != 0 {
        if exponent & 1 != 0 {
            result = gf_mul(result, power);
        }
        power = gf_mul(power, power);
        exponent >>= 1;
    }
    result
}

/// The S-box: the inverse, then FIPS-197's affine map.
fn sub_byte(b: u8) -> u8 {
    let s = gf_inverse(b);
    s ^ s.rotate_left(1) ^ s.rotate_left(2) ^ s.rotate_left(3) ^ s.rotate_left(4) ^ 0x63
}

/// The inverse S-box: the affine map undone, then the inverse.
fn inv_sub_byte(b: u8) -> u8 {
    gf_inverse(b.rotate_left(1) ^ b.rotate_left(3) ^ b.rotate_left(6) ^ 0x05)
}

/// The S-box and its inverse, computed once.
fn boxes() -> &'static ([u8; 256], [u8; 256]) {
    static BOXES: OnceLock<([u8; 256], [u8; 256])> = OnceLock::new();
    BOXES.get_or_init(|| {
        (
            std::array::from_fn(|i| sub_byte(i as u8)),
            std::array::from_fn(|i| inv_sub_byte(i as u8)),
        )
    })
}

fn look_up(table: &[u8; 256], b: u8) -> u8 {
    table.get(usize::from(b)).copied().unwrap_or(0)
}

type Block = [u8; 16];

/// AES-256's fifteen round keys, from a 32-byte key (FIPS-197 5.2).
fn expand_key(key: &[u8; 32]) -> Vec<Block> {
    let (sbox, _) = boxes();
    let mut words: Vec<u32> = key
        .chunks_exact(4)
        .map(|b| b.iter().fold(0, |n, &b| n << 8 | u32::from(b)))
        .collect();
    let mut rcon: u8 = 1;
    for i in 8..60 {
        let mut temp = words.get(i - 1).copied().unwrap_or(0);
        if i % 8 == 0 || i % 8 == 4 {
            if i % 8 == 0 {
                temp = temp.rotate_left(8);
            }
            temp = u32::from_be_bytes(temp.to_be_bytes().map(|b| look_up(sbox, b)));
            if i % 8 == 0 {
                temp ^= u32::from(rcon) << 24;
                rcon = gf_mul(rcon, 2);
            }
        }
        let back = words.get(i - 8).copied().unwrap_or(0);
        words.push(back ^ temp);
    }
    words
        .chunks_exact(4)
        .map(|four| {
            let mut block = [0u8; 16];
            for (bytes, w) in block.chunks_exact_mut(4).zip(four) {
                fill(bytes, &w.to_be_bytes());
            }
            block
        })
        .collect()
}

fn add_round_key(state: &mut Block, key: Option<&Block>) {
    if let Some(key) = key {
        for (s, k) in state.iter_mut().zip(key) {
            *s ^= k;
        }
    }
}

/// Rows shifted back: row `r` (bytes `r`, `r + 4`…, the state being
/// column by column) turned right by `r`.
fn inv_shift_rows(state: &Block) -> Block {
    let [
        s0,
        s1,
        s2,
        s3,
        s4,
        s5,
        s6,
        s7,
        s8,
        s9,
        s10,
        s11,
        s12,
        s13,
        s14,
        s15,
    ] = *state;
    [
        s0, s13, s10, s7, s4, s1, s14, s11, s8, s5, s2, s15, s12, s9, s6, s3,
    ]
}

fn inv_mix_columns(state: &mut Block) {
    for column in state.chunks_exact_mut(4) {
        if let [a0, a1, a2, a3] = *column {
            let row = |m0: u8, m1: u8, m2: u8, m3: u8| {
                gf_mul(a0, m0) ^ gf_mul(a1, m1) ^ gf_mul(a2, m2) ^ gf_mul(a3, m3)
            };
            fill(
                column,
                &[
                    row(14, 11, 13, 9),
                    row(9, 14, 11, 13),
                    row(13, 9, 14, 11),
                    row(11, 13, 9, 14),
                ],
            );
        }
    }
}

/// One block decrypted with the round keys of [`expand_key`] (FIPS-197
/// 5.3, the inverse cipher).
fn decrypt_block(round_keys: &[Block], block: &Block) -> Block {
    let (_, inv_sbox) = boxes();
    let rounds = round_keys.len().saturating_sub(1);
    let mut state = *block;
    add_round_key(&mut state, round_keys.get(rounds));
    for round in (0..rounds).rev() {
        state = inv_shift_rows(&state).map(|b| look_up(inv_sbox, b));
        add_round_key(&mut state, round_keys.get(round));
        if round > 0 {
            inv_mix_columns(&mut state);
        }
    }
    state
}

/// AES-256-CBC decryption of whole blocks (a partial block at the end
/// is left out), no padding removed.
fn cbc_decrypt(key: &[u8; 32], iv: &Block, body: &[u8]) -> Vec<u8> {
    let round_keys = expand_key(key);
    let mut previous = *iv;
    let mut plain = Vec::with_capacity(body.len());
    for chunk in body.chunks_exact(16) {
        let mut block = [0u8; 16];
        fill(&mut block, chunk);
        let mut out = decrypt_block(&round_keys, &block);
        for (o, p) in out.iter_mut().zip(previous) {
            *o ^= p;
        }
        plain.extend_from_slice(&out);
        previous = block;
    }
    plain
}

/// Sprig's `decryptAES` of base64 text: the plain bytes, or the message
/// Go gives (a decoding error, or the runtime's where Sprig panics).
pub fn decrypt_aes_text(password: &str, text: &str) -> std::result::Result<Vec<u8>, String> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let mut key = [0u8; 32];
    fill(&mut key, password.as_bytes());
    let crypt = base64_decode(text)?;
    let Some((iv, body)) = crypt.split_first_chunk::<16>() else {
        // Go's buffer for the decoded bytes holds three per four
        // characters given.
        return Err(format!(
            "runtime error: slice bounds out of range [:16] with capacity {}",
            text.len() / 4 * 3
        ));
    };
    if body.len() % 16 != 0 {
        return Err("crypto/cipher: input not full blocks".to_string());
    }
    let mut plain = cbc_decrypt(&key, iv, body);
    let Some(&last) = plain.last() else {
        return Err("runtime error: index out of range [-1]".to_string());
    };
    let keep = plain.len() as i64 - i64::from(last);
    if keep < 0 {
        return Err(format!(
            "runtime error: slice bounds out of range [:{keep}]"
        ));
    }
    plain.truncate(keep as usize);
    Ok(plain)
}

/// Bytes as Go's text: valid UTF-8 as it is, every other byte U+FFFD (as
/// Go reads a string rune by rune, and writes it as JSON).
fn go_text(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(valid) => {
                out.push_str(valid);
                return out;
            }
            Err(error) => {
                let (valid, after) = rest
                    .split_at_checked(error.valid_up_to())
                    .unwrap_or((rest, &[]));
                out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                let bad = error.error_len().unwrap_or(after.len()).max(1);
                out.extend(std::iter::repeat_n('\u{fffd}', bad.min(after.len())));
                rest = after.get(bad..).unwrap_or_default();
                if after.is_empty() {
                    return out;
                }
            }
        }
    }
}

fn decrypt_aes(args: &[Value]) -> Result {
    arity(args, 2)?;
    let password = string(args, 0)?;
    let text = string(args, 1)?;
    decrypt_aes_text(password, text).map(|plain| Value::str(go_text(&plain)))
}

#[cfg(test)]
mod tests {
    use super::super::hashes::hex;
    use super::*;

    fn unhex(text: &str) -> Vec<u8> {
        text.as_bytes()
            .chunks(2)
            .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
            .collect()
    }

    #[test]
    fn hmac_sha256_matches_rfc_4231() {
        assert_eq!(
            hex(&hmac_sha256(&[0x0b; 20], &[b"Hi There"])),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        assert_eq!(
            hex(&hmac_sha256(
                b"Jefe",
                &[b"what do ya ", b"want for nothing?"]
            )),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // A key longer than a block is hashed first.
        assert_eq!(
            hex(&hmac_sha256(
                &[0xaa; 131],
                &[b"Test Using Larger Than Block-Size Key - Hash Key First"]
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn pbkdf2_matches_rfc_7914() {
        assert_eq!(
            hex(&pbkdf2_sha256(b"passwd", b"salt", 1, 64)),
            "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc\
             49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783"
        );
        assert_eq!(
            hex(&pbkdf2_sha256(b"Password", b"NaCl", 80000, 64)),
            "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56\
             a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d"
        );
    }

    #[test]
    fn scrypt_matches_rfc_7914() {
        assert_eq!(
            hex(&scrypt(b"", b"", 16, 1, 1, 64)),
            "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede214\
             42fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906"
        );
        assert_eq!(
            hex(&scrypt(b"password", b"NaCl", 1024, 8, 16, 64)),
            "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162\
             2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"
        );
        assert_eq!(
            hex(&scrypt(
                b"pleaseletmein",
                b"SodiumChloride",
                16384,
                8,
                1,
                64
            )),
            "7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2\
             d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887"
        );
    }

    #[test]
    fn sboxes_are_fips_197s() {
        let (sbox, inv) = boxes();
        assert_eq!(sbox[0x00], 0x63);
        assert_eq!(sbox[0x53], 0xed);
        assert_eq!(sbox[0xff], 0x16);
        for b in 0..=255u8 {
            assert_eq!(inv[usize::from(sbox[usize::from(b)])], b);
        }
    }

    #[test]
    fn aes_256_matches_fips_197() {
        // FIPS-197 appendix C.3.
        let key: [u8; 32] =
            unhex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
                .try_into()
                .unwrap();
        let block: Block = unhex("8ea2b7ca516745bfeafc49904b496089")
            .try_into()
            .unwrap();
        assert_eq!(
            hex(&decrypt_block(&expand_key(&key), &block)),
            "00112233445566778899aabbccddeeff"
        );
        // The last round key of FIPS-197 appendix A.3's expansion.
        let key: [u8; 32] =
            unhex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4")
                .try_into()
                .unwrap();
        assert_eq!(
            hex(&expand_key(&key)[14]),
            "fe4890d1e6188d0b046df344706c631e"
        );
    }

    #[test]
    fn cbc_matches_sp_800_38a() {
        // SP 800-38A F.2.6, CBC-AES256 decryption, its first two blocks.
        let key: [u8; 32] =
            unhex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4")
                .try_into()
                .unwrap();
        let iv: Block = unhex("000102030405060708090a0b0c0d0e0f")
            .try_into()
            .unwrap();
        let crypt = unhex("f58c4c04d6e5f1ba779eabfb5f7bfbd69cfc4e967edb808d679f777bc6702c7d");
        assert_eq!(
            hex(&cbc_decrypt(&key, &iv, &crypt)),
            "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
        );
    }

    #[test]
    fn decrypt_aes_fails_as_sprig_panics() {
        assert_eq!(decrypt_aes_text("k", ""), Ok(Vec::new()));
        assert_eq!(
            decrypt_aes_text("k", "YWJj"),
            Err("runtime error: slice bounds out of range [:16] with capacity 3".to_string())
        );
        assert_eq!(
            decrypt_aes_text("k", "AAAAAAAAAAAAAAAAAAAAAA=="),
            Err("runtime error: index out of range [-1]".to_string())
        );
        assert_eq!(
            decrypt_aes_text("k", "AAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
            Err("crypto/cipher: input not full blocks".to_string())
        );
        assert_eq!(
            decrypt_aes_text("k", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="),
            Err("runtime error: slice bounds out of range [:-19]".to_string())
        );
        assert!(decrypt_aes_text("k", "a$").is_err());
    }

    #[test]
    fn decrypt_aes_reads_sprigs_ciphertext() {
        // Made by Sprig's encryptAES "k" "hello".
        assert_eq!(
            decrypt_aes_text("k", "j+vfJVnWDQs42Ys1zC8JBH1OF+/pk3FALh7SCuv3IMQ="),
            Ok(b"hello".to_vec())
        );
    }

    #[test]
    fn stray_bytes_read_as_go_reads_them() {
        assert_eq!(go_text(b"a\xe2\x82b"), "a\u{fffd}\u{fffd}b");
        assert_eq!(go_text(b"\xffok\xe2\x82"), "\u{fffd}ok\u{fffd}\u{fffd}");
        assert_eq!(go_text("é".as_bytes()), "é");
    }

    #[test]
    fn derived_passwords_match_sprig() {
        // Sprig's documented example, and Go's answers.
        assert_eq!(
            master_password(1, "long", "password", "user", "example.com"),
            "ZedaFaxcZaso9*"
        );
        assert_eq!(
            master_password(0, "maximum", "secret", "jane", "site.org"),
            "ZU(IWUTGcT5#LEMsae8."
        );
        assert_eq!(
            master_password(1, "nope", "secret", "jane", "site.org"),
            "cannot find password template nope"
        );
    }
}

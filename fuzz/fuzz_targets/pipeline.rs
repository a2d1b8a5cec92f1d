//! The whole pipeline on arbitrary bytes, as `kubectl mesh-inject` runs it.
//! The first byte chooses the settings (the mesh's profile, a wait before
//! exit, the Kubernetes version, native sidecars), so that the rules'
//! branches are fuzzed too; the rest is the input, which must be UTF-8.
//! The properties checked are in `check.rs`.

#![no_main]

mod check;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&choice, data)) = data.split_first() else {
        return;
    };
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    check::check(choice, input);
});

//! Manifests assembled from the pieces of the differential test against
//! kubectl's reader (`tests/it/reader_generators.rs`), chosen by the input's
//! bytes: YAML 1.1's special scalars and Unicode's line breaks in each of
//! that test's layouts, and strings of the characters YAML gives a meaning
//! as the tool's writer writes them, as fields of a workload's pod template
//! (the meshes' annotations, the pod spec, the container), in a Deployment,
//! a `kind: List`, a `ResourceList`, two documents with a line break or a
//! byte order mark between them, CRLF lines, or a stream of JSON objects.
//!
//! The first byte chooses the settings and the properties checked are the
//! `pipeline` target's (see `check.rs`).

#![no_main]

mod check;
#[path = "../../tests/it/reader_generators.rs"]
mod generators;

use generators::{ALPHABET, BREAK_LAYOUTS, BREAKS, SCALAR_LAYOUTS, SCALARS, SLOTS};
use libfuzzer_sys::fuzz_target;
use mesh_inject::yaml::emit::Layout;
use serde_json::Value;

/// Values the meshes' annotations take, beside the generators' scalars.
const WORDS: &[&str] = &[
    "enabled", "disabled", "ingress", "true", "false", "8080", "80,443", "1-65535", "debug", "",
];

/// The input's bytes, taken one at a time; 0 once they are used up.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn next(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&byte, rest)) => {
                self.0 = rest;
                byte
            }
            None => 0,
        }
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[usize::from(self.next()) % items.len()]
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A value: a special scalar, a word, or a string of up to five of the
/// alphabet's characters.
fn value(bytes: &mut Bytes) -> String {
    match bytes.next() % 3 {
        0 => bytes.pick(SCALARS).to_string(),
        1 => bytes.pick(WORDS).to_string(),
        _ => (0..=bytes.next() % 5)
            .map(|_| bytes.pick(ALPHABET))
            .collect(),
    }
}

/// One or two lines at `indent` with keys of `keys`: a value in one of the
/// scalar layouts, a line break in one of its layouts, or a string as the
/// writer writes it.
fn lines(bytes: &mut Bytes, indent: usize, keys: &[&str]) -> String {
    let key = bytes.pick(keys);
    let next = bytes.pick(keys);
    match bytes.next() % 3 {
        0 => {
            let layout = bytes.pick(SCALAR_LAYOUTS);
            generators::field(indent, key, next, layout, &value(bytes))
        }
        1 => {
            let layout = bytes.pick(BREAK_LAYOUTS);
            let line_break = bytes.pick(BREAKS);
            generators::field(indent, key, next, layout, line_break)
        }
        _ => Layout::default().block_entry(indent, key, &Value::String(value(bytes))),
    }
}

/// A Deployment with up to six fields in its slots.
fn deployment(bytes: &mut Bytes) -> String {
    let mut slots: Vec<(&str, String)> =
        SLOTS.iter().map(|(s, _, _)| (*s, String::new())).collect();
    for _ in 0..=bytes.next() % 6 {
        let n = usize::from(bytes.next()) % SLOTS.len();
        let (_, indent, keys) = SLOTS[n];
        let more = lines(bytes, indent, keys);
        slots[n].1.push_str(&more);
    }
    let mut text = generators::DEPLOYMENT.to_string();
    for (slot, lines) in &slots {
        text = text.replace(slot, lines);
    }
    text
}

fn assemble(bytes: &mut Bytes) -> String {
    let (_, _, pod_keys) = SLOTS[1];
    match bytes.next() % 6 {
        0 => deployment(bytes),
        1 | 2 => {
            let kind = bytes.pick(&["List", "ResourceList"]);
            let mut spec = String::new();
            for _ in 0..=bytes.next() % 3 {
                spec.push_str(&lines(bytes, 4, pod_keys));
            }
            generators::in_a_list(kind, &spec)
        }
        3 => {
            let first = deployment(bytes);
            let between = bytes.pick(&["", "\u{feff}", "\u{2028}", "\u{85}", "\r\n", "\t"]);
            let second = deployment(bytes).replace("web", "api");
            format!("{first}---\n{between}{second}")
        }
        4 => {
            let json = Layout {
                json: true,
                ..Layout::default()
            };
            let mut out = String::new();
            for n in 0..=bytes.next() % 2 {
                let entry = json.flow_entry(bytes.pick(pod_keys), &Value::String(value(bytes)));
                let emoji = r#""emoji":"\ud83d\ude00""#;
                let line = generators::json_line(&format!("w{n}"));
                out.push_str(&line.replace(emoji, &format!("{emoji},{entry}")));
                out.push_str(bytes.pick(&["\n", "", "\r\n", " ", "\n\u{2028}"]));
            }
            out
        }
        _ => deployment(bytes).replace('\n', "\r\n"),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&choice, data)) = data.split_first() else {
        return;
    };
    let mut bytes = Bytes(data);
    let text = assemble(&mut bytes);
    // Bytes left over are appended as text, so that the fuzzer can add to
    // what the pieces make.
    let text = match std::str::from_utf8(bytes.0) {
        Ok(rest) if !bytes.is_empty() => text + rest,
        _ => text,
    };
    check::check(choice, &text);
});

//! The whole pipeline on arbitrary bytes, as `kubectl mesh-inject` runs it.
//! The first byte chooses the settings (the mesh's profile, a wait before
//! exit, the Kubernetes version, native sidecars), so that the rules'
//! branches are fuzzed too; the rest is the input. The admission checks run.
//!
//! Any input may be refused with an error, never with a panic or a hang.
//! When the first inject goes through, its output must satisfy the lossless
//! properties: injecting it again changes nothing, uninject restores an input
//! that was never injected, documents without a patch are byte-identical, and
//! the output reads as the input with the patch applied.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mesh_inject::cluster::KubeVersion;
use mesh_inject::pipeline::{self, Action, Processed, Settings};
use mesh_inject::profile::{self, NativeChoice, Profile};
use mesh_inject::rules::SecurityMode;
use mesh_inject::source::Source;
use mesh_inject::yaml;
use serde_json::{Map, Value};

/// The settings `choice` picks: bit 0 the profile, bit 1 a wait before
/// exit (`--set waitBeforeExitSeconds=10`, which raises grace periods),
/// bit 2 Kubernetes 1.28 (no native sidecars), bits 3-4 `--native-sidecar`.
fn settings(choice: u8) -> Settings {
    let (name, _) = profile::EMBEDDED[usize::from(choice & 1)];
    let profile = Profile::embedded(name).expect("the embedded profile loads");
    let mut flags = Map::new();
    if choice & 2 != 0 {
        let (key, value) = profile
            .parse_assignment("waitBeforeExitSeconds=10")
            .expect("the profile has the value");
        flags.insert(key, value);
    }
    Settings {
        action: Action::Inject,
        profile,
        flags,
        native: match (choice >> 3) & 3 {
            1 => Some(NativeChoice::Always),
            2 => Some(NativeChoice::Never),
            _ => None,
        },
        version: if choice & 4 != 0 {
            KubeVersion::new(1, 28)
        } else {
            KubeVersion::CURRENT
        },
        security: SecurityMode::Auto,
        namespace: "default".to_string(),
        keep_values: false,
        keep_patches: true,
    }
}

fn run(
    text: &str,
    settings: &Settings,
    action: Action,
) -> Result<Processed, mesh_inject::error::Error> {
    let source = Source {
        path: None,
        text: text.to_string(),
        found_in: None,
    };
    let settings = Settings {
        action,
        ..settings.clone()
    };
    let mut results = pipeline::process_all(vec![source], &[], &settings)?;
    Ok(results.pop().expect("one result per source"))
}

/// Each document's value as the tool reads it, by document index; `None`
/// when some document has no value the tool can give (then the oracle is not
/// checked: the pipeline only reads the values of the documents it plans).
fn values(text: &str) -> Option<Vec<(usize, Value)>> {
    let docs = yaml::parse_stream(text).ok()?;
    let mut out = Vec::new();
    for doc in &docs {
        if let Some(root) = &doc.root {
            out.push((doc.index, yaml::value::to_value(root).ok()?));
        }
    }
    Some(out)
}

/// The text of each document, by index.
fn document_texts(text: &str) -> Vec<(usize, String)> {
    yaml::parse_stream(text)
        .expect("the output parses")
        .iter()
        .map(|d| (d.index, text[d.start..d.end].to_string()))
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let Some((&choice, data)) = data.split_first() else {
        return;
    };
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let settings = settings(choice);
    let run = |text: &str, action: Action| run(text, &settings, action);
    let first = match run(input, Action::Inject) {
        Ok(first) => first,
        Err(err) => {
            // The message is rendered for the user: that must not fail either.
            let _ = err.to_string();
            return;
        }
    };
    let output = &*first.text();

    // inject(inject(x)) == inject(x)
    let second = run(output, Action::Inject)
        .unwrap_or_else(|e| panic!("the output of inject is refused: {e}"));
    assert_eq!(second.text().into_owned(), output, "injecting again changed the output");

    // uninject(inject(x)) == x, for x never injected
    if run(input, Action::Uninject).is_ok_and(|u| u.text().into_owned() == input) {
        let back = run(output, Action::Uninject)
            .unwrap_or_else(|e| panic!("uninject refuses the output of inject: {e}"));
        assert_eq!(back.text().into_owned(), input, "uninject did not restore the input");
    }

    // Documents without a patch come out byte-identical.
    let patched: Vec<usize> = first
        .objects
        .iter()
        .filter(|o| !o.ops.is_empty())
        .map(|o| o.document)
        .collect();
    let before = document_texts(input);
    let after = document_texts(output);
    assert_eq!(before.len(), after.len(), "the document count changed");
    for ((index, b), (_, a)) in before.iter().zip(&after) {
        if !patched.contains(index) {
            assert_eq!(b, a, "document {index} changed without a patch");
        }
    }

    // The output reads as the input with the patch applied.
    if let Some(mut expected) = values(input) {
        for object in first.objects.iter().filter(|o| !o.ops.is_empty()) {
            let (_, doc) = expected
                .iter_mut()
                .find(|(i, _)| *i == object.document)
                .expect("the patched document has a value");
            json_patch::patch(doc, &object.ops).expect("the patch applies to its document");
        }
        let got = values(output).expect("the output has values");
        assert_eq!(
            expected, got,
            "the output differs from the input with its patch"
        );
    }
});

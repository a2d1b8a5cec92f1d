//! The properties both fuzz targets check, on a text and a settings byte.
//! The byte chooses the settings (the mesh's profile, a wait before exit,
//! the Kubernetes version, native sidecars), so that the rules' branches
//! are fuzzed too. The admission checks run.
//!
//! Any input may be refused with an error, never with a panic or a hang.
//! When the first inject goes through, its output must satisfy the lossless
//! properties: injecting it again changes nothing, uninject restores an input
//! that was never injected, documents without a patch are byte-identical, and
//! the output reads as the input with the patch applied. The high bits of the
//! settings byte choose second settings of the same mesh (other trust
//! anchors, wait, version, native sidecars): injecting the output with them
//! gives what injecting the input with them gives, byte for byte, and
//! uninject still restores the input.

use mesh_inject::cluster::KubeVersion;
use mesh_inject::pipeline::{self, Action, Processed, Settings};
use mesh_inject::profile::{self, NativeChoice, Profile};
use mesh_inject::source::Source;
use mesh_inject::yaml;
use serde_json::{Map, Value};
use std::sync::OnceLock;

/// Two trust anchors for the linkerd profile, as a rotation replaces one by
/// the other (a literal block, then a quoted value with a final line break).
const ANCHORS: [&str; 2] = [
    include_str!("../../testdata/trust-anchors/a.pem"),
    include_str!("../../testdata/trust-anchors/b.pem"),
];

/// The settings `choice` picks: bit 0 the profile, bit 1 a wait before
/// exit (`--set waitBeforeExitSeconds=10`, which raises grace periods),
/// bit 2 Kubernetes 1.28 (no native sidecars), bits 3-4 `--native-sidecar`.
/// The `second` settings flip bits 1-3 where bits 5-7 are set, and take the
/// other trust anchors where bit 5 is.
fn settings(choice: u8, second: bool) -> Settings {
    let flips = choice >> 5;
    let (choice, anchors) = if second {
        (choice ^ (flips << 1), ANCHORS[usize::from(flips & 1)])
    } else {
        (choice, ANCHORS[0])
    };
    let (name, _) = profile::EMBEDDED[usize::from(choice & 1)];
    // Read once: a profile is plain data (what a run keeps of its renderings
    // is elsewhere), and reading it is a good part of a short input's time.
    static PROFILES: OnceLock<Vec<Profile>> = OnceLock::new();
    let profile = PROFILES.get_or_init(|| {
        profile::EMBEDDED
            .iter()
            .map(|(name, _)| Profile::embedded(name).expect("the embedded profile loads"))
            .collect()
    })[usize::from(choice & 1)]
    .clone();
    let mut flags = Map::new();
    let mut set = |assignment: &str| {
        let (key, value) = profile
            .parse_assignment(assignment, &flags)
            .expect("the profile has the value");
        flags.insert(key, value);
    };
    if choice & 2 != 0 {
        set("waitBeforeExitSeconds=10");
    }
    if name == "linkerd" {
        set(&format!("trustAnchorsPEM={anchors}"));
    }
    Settings {
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
        ..Settings::new(Action::Inject, profile)
    }
}

fn run_with(
    text: &str,
    settings: &Settings,
    action: Action,
) -> Result<Processed, mesh_inject::error::Error> {
    let source = Source::new(None, text.to_string());
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

/// Runs `input` through the pipeline with the settings `choice` picks and
/// checks the lossless properties (see the module's documentation).
pub fn check(choice: u8, input: &str) {
    let first_settings = settings(choice, false);
    let run = |text: &str, action: Action| run_with(text, &first_settings, action);
    let first = match run(input, Action::Inject) {
        Ok(first) => first,
        Err(err) => {
            // The message is rendered for the user: that must not fail either.
            let _ = err.to_string();
            return;
        }
    };
    let output = &*first.try_text().expect("the edits fit the source");

    // A List read item by item gives the bytes it gives read whole.
    if !yaml::parse::list_lines(input).is_empty() {
        let whole = Settings {
            whole_lists: true,
            ..first_settings.clone()
        };
        let read_whole = run_with(input, &whole, Action::Inject)
            .unwrap_or_else(|e| panic!("a list read whole is refused, item by item not: {e}"));
        assert_eq!(
            read_whole.try_text().expect("the edits fit the source").into_owned(),
            output,
            "a list read item by item differs from the list read whole"
        );
    }

    // inject(inject(x)) == inject(x)
    let second = run(output, Action::Inject)
        .unwrap_or_else(|e| panic!("the output of inject is refused: {e}"));
    assert_eq!(
        second.try_text().expect("the edits fit the source").into_owned(),
        output,
        "injecting again changed the output"
    );

    // uninject(inject(x)) == x, for x never injected
    let never_injected = run(input, Action::Uninject).is_ok_and(|u| u.try_text().expect("the edits fit the source").into_owned() == input);
    if never_injected {
        let back = run(output, Action::Uninject)
            .unwrap_or_else(|e| panic!("uninject refuses the output of inject: {e}"));
        assert_eq!(
            back.try_text().expect("the edits fit the source").into_owned(),
            input,
            "uninject did not restore the input"
        );
    }

    // inject(s2, inject(s1, x)) == inject(s2, x), and uninject still gives x.
    let then = settings(choice, true);
    let again = run_with(output, &then, Action::Inject)
        .unwrap_or_else(|e| panic!("the output of inject is refused with other settings: {e}"));
    let again = again.try_text().expect("the edits fit the source").into_owned();
    if let Ok(fresh) = run_with(input, &then, Action::Inject) {
        assert_eq!(
            again,
            fresh.try_text().expect("the edits fit the source").into_owned(),
            "injecting with other settings differs from injecting the input with them"
        );
    }
    if never_injected {
        let back = run_with(&again, &then, Action::Uninject)
            .unwrap_or_else(|e| panic!("uninject refuses the output of a second inject: {e}"));
        assert_eq!(
            back.try_text().expect("the edits fit the source").into_owned(),
            input,
            "uninject after a second inject did not restore the input"
        );
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
}

//! The lossless-output properties, checked on every file of the corpus
//! (`../shared/corpus`, when it is beside the checkout) and of `testdata/`.
//!
//! 1. documents that are not injected come out byte-identical;
//! 2. for a workload never injected before, the diff only adds lines (an
//!    existing line changes only where a flow collection or an alias receives entries);
//! 3. inject(inject(x)) == inject(x), byte for byte;
//! 4. uninject(inject(x)) == x, byte for byte, for x never injected;
//! 5. parsing the output gives the input with the plan's patch applied;
//! 6. every proxy written carries its trust anchors: no document the run
//!    changed has an empty `LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS`, and a
//!    run given them is never refused for lack of them.

use crate::common;

use std::path::{Path, PathBuf};

use serde_json::Value;

fn inputs() -> Vec<PathBuf> {
    let mut files = common::manifests_under(&common::testdata("inject"));
    files.retain(|p| !p.components().any(|c| c.as_os_str() == "expected"));
    files.extend(common::manifests_under(&common::testdata("example")));
    let corpus = common::repo().join("../shared/corpus");
    if corpus.is_dir() {
        files.extend(common::manifests_under(&corpus));
    } else {
        common::skip_part(
            "properties",
            "../shared/corpus is not beside this checkout: the corpus files are not checked",
        );
    }
    files
}

#[test]
fn lossless_properties_hold_on_every_file() {
    let mut checked = 0;
    let mut injected_files = 0;
    let mut independently = 0;
    for path in inputs() {
        let text = std::fs::read_to_string(&path).expect("read");
        let run = common::run(&["-q", "-f", path.to_str().expect("utf-8 path")], None);
        if run.code == 2 {
            // Malformed input: nothing on stdout, a positioned message.
            assert!(run.stdout.is_empty(), "{}: partial output", path.display());
            assert!(
                run.stderr.contains(": document ") && run.stderr.contains(", line "),
                "{}",
                run.stderr
            );
            assert_not_refused(&path, &run.stderr);
            continue;
        }
        assert_eq!(run.code, 0, "{}: {}", path.display(), run.stderr);
        assert_proxies_anchored(&path, &text, &run.stdout);
        independently += usize::from(check_file(&path, &text, &run.stdout));
        checked += 1;
        injected_files += usize::from(run.stdout != text);
    }
    assert!(checked >= 9, "checked {checked} files");
    assert!(
        injected_files >= 7,
        "only {injected_files} files had workloads"
    );
    assert!(
        independently * 10 >= checked * 8,
        "the independent parser compared only {independently} of {checked} files"
    );
}

/// The env entry that carries a Linkerd proxy's trust anchors.
const ANCHORS_ENV: &str = "LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS";

/// Property 6: every document of `output` that differs from its document in
/// `input` (what the run injected or re-injected) has no empty trust anchors.
fn assert_proxies_anchored(path: &Path, input: &str, output: &str) {
    fn empty_anchors(value: &Value) -> usize {
        match value {
            Value::Object(map) => {
                let empty = map.get("name").and_then(Value::as_str) == Some(ANCHORS_ENV)
                    && map
                        .get("value")
                        .and_then(Value::as_str)
                        .is_none_or(|pem| pem.trim().is_empty());
                usize::from(empty) + map.values().map(empty_anchors).sum::<usize>()
            }
            Value::Array(items) => items.iter().map(empty_anchors).sum(),
            _ => 0,
        }
    }
    let before = common::document_texts(input);
    let after = common::document_texts(output);
    for (index, (text, value)) in after.iter().zip(common::values(output)).enumerate() {
        if before.get(index) == Some(text) {
            continue;
        }
        let empty = value.as_ref().map_or(0, empty_anchors);
        assert_eq!(
            empty,
            0,
            "{}: document {} was written with an empty {ANCHORS_ENV}",
            path.display(),
            index + 1
        );
    }
}

/// A run given trust anchors that still stops must not stop for lack of them.
fn assert_not_refused(path: &Path, stderr: &str) {
    assert!(
        !stderr.contains("cannot be injected"),
        "{}: refused although anchors were given: {stderr}",
        path.display()
    );
}

/// Check every property on one file; returns whether the independent parser compared it.
fn check_file(path: &Path, input: &str, output: &str) -> bool {
    let name = path.display();
    // 3. idempotent
    assert_eq!(
        common::pipe(None, output),
        output,
        "{name}: injecting again changed the output"
    );

    // 5. the semantic oracle, and 1. untouched documents byte-identical
    let patches = common::run(
        &["-q", "-o", "patch", "-f", path.to_str().expect("path")],
        None,
    );
    let entries: Vec<Value> = serde_json::from_str(&patches.stdout).expect("patch JSON");
    let mut expected = common::values(input);
    let got = common::values(output);
    assert_eq!(expected.len(), got.len(), "{name}: document count changed");
    let mut patched_docs = Vec::new();
    for entry in &entries {
        let index = entry["document"].as_u64().expect("document index") as usize - 1;
        let patch: json_patch::Patch =
            serde_json::from_value(entry["patch"].clone()).expect("RFC 6902 patch");
        let doc = expected[index].as_mut().expect("patched document exists");
        json_patch::patch(doc, &patch)
            .unwrap_or_else(|e| panic!("{name}: patch does not apply: {e}"));
        patched_docs.push(index);
    }
    assert_eq!(expected, got, "{name}: output differs from input + patch");
    let compared = independent_oracle(path, input, output, &entries);
    let before = common::document_texts(input);
    let after = common::document_texts(output);
    for (index, (b, a)) in before.iter().zip(&after).enumerate() {
        if !patched_docs.contains(&index) {
            assert_eq!(
                b,
                a,
                "{name}: document {} changed without a patch",
                index + 1
            );
        }
    }

    // 4. and 2. for inputs never injected
    if common::pipe(Some("uninject"), input) == input {
        assert_eq!(
            common::pipe(Some("uninject"), output),
            input,
            "{name}: uninject did not restore the input"
        );
        if let Err(line) = only_adds_lines(input, output) {
            panic!("{name}: an existing line changed: {line:?}");
        }
    }
    compared
}

/// The semantic oracle again, with an independent YAML parser (libyaml's
/// port, not the parser the tool uses), so that a misreading shared by the
/// tool's parser and renderer cannot hide: each output document must equal
/// the input document with its patch applied.
/// Returns whether the comparison was made.
fn independent_oracle(path: &Path, input: &str, output: &str, entries: &[Value]) -> bool {
    let name = path.display();
    let parse = |text: &str| -> Option<Vec<Value>> {
        let mut docs = Vec::new();
        for document in serde_yaml_ng::Deserializer::from_str(text) {
            let mut value: serde_yaml_ng::Value = serde::Deserialize::deserialize(document).ok()?;
            value.apply_merge().ok()?;
            docs.push(serde_json::to_value(value).ok()?);
        }
        Some(docs)
    };
    // Inputs this parser reads differently (YAML 1.1 forms, odd keys) are not compared.
    let Some(mut expected) = parse(input) else {
        return false;
    };
    let got = parse(output)
        .unwrap_or_else(|| panic!("{name}: the independent parser rejects the output"));
    assert_eq!(
        expected.len(),
        got.len(),
        "{name}: document count differs for the independent parser"
    );
    for entry in entries {
        let index = entry["document"].as_u64().expect("index") as usize - 1;
        let patch: json_patch::Patch =
            serde_json::from_value(entry["patch"].clone()).expect("patch");
        if json_patch::patch(&mut expected[index], &patch).is_err() {
            return false;
        }
    }
    assert_eq!(
        expected, got,
        "{name}: the independent parser sees something else than input + patch"
    );
    true
}

/// Whether `after` only adds lines to `before`: every line of `before` appears
/// in `after`, in order, unchanged or with an edit the renderer may make to an
/// existing line (a flow collection gaining entries, an empty `[]`/`{}` or a
/// null becoming block content, an alias gaining a merge,
/// a JSON line gaining the comma before a new entry, a last line gaining its
/// line break). Returns the first line that has no counterpart.
fn only_adds_lines(before: &str, after: &str) -> Result<(), String> {
    let mut added = after.lines();
    'lines: for line in before.lines() {
        let stem = line.trim_end().trim_end_matches(['}', ']']);
        for n in added.by_ref() {
            let kept = n == line
                || n.strip_suffix(',') == Some(line)
                || line
                    .strip_suffix(" []")
                    .or_else(|| line.strip_suffix(" {}"))
                    == Some(n)
                // A flow collection gaining entries: on its line, or on the
                // last of its lines when it is written over several.
                || ((stem.contains(['{', '[']) || stem != line.trim_end()) && n.starts_with(stem))
                || line
                    .split_once(": *")
                    .is_some_and(|(key, alias)| n.starts_with(&format!("{key}: {{<<: *{alias}")));
            if kept {
                continue 'lines;
            }
        }
        return Err(line.to_string());
    }
    Ok(())
}

#[test]
fn the_line_check_catches_changed_lines() {
    assert!(only_adds_lines("a: 1\nb: 2\n", "a: 1\nx: 0\nb: 2\n").is_ok());
    assert!(only_adds_lines("a: {x: 1}\n", "a: {x: 1, y: 2}\n").is_ok());
    assert!(only_adds_lines("a: 1\nb: 2\n", "a: 1\nb: 3\n").is_err());
    assert!(only_adds_lines("a: 1 # c\n", "a: 1\n").is_err());
    assert!(only_adds_lines("a: {x: 1,\n  y: 2}\n", "a: {x: 1,\n  y: 2,\n  z: 3}\n").is_ok());
    assert!(only_adds_lines("a: {x: 1,\n  y: 2}\n", "a: {x: 1,\n  y: 3}\n").is_err());
}

/// Idempotency and the exact uninject in the other modes too: the istio
/// profile, and classic sidecars (first and last), on every file.
#[test]
fn idempotent_and_reversible_in_every_mode() {
    let modes: [&[&str]; 3] = [
        &["--profile", "istio"],
        &["--kube-version", "1.28"],
        &["--native-sidecar", "never", "--set", "proxyPosition=last"],
    ];
    let mut checked = 0;
    for path in inputs() {
        let text = std::fs::read_to_string(&path).expect("read");
        for mode in modes {
            let profile: Vec<&str> = mode
                .iter()
                .copied()
                .take_while(|a| *a == "--profile" || *a == "istio")
                .collect();
            let mut args = vec!["-q", "--warn-only"];
            args.extend_from_slice(mode);
            let once = common::run(&args, Some(&text));
            if once.code == 2 {
                assert_not_refused(&path, &once.stderr);
                continue;
            }
            assert_eq!(once.code, 0, "{} {mode:?}: {}", path.display(), once.stderr);
            assert_proxies_anchored(&path, &text, &once.stdout);
            let twice = common::run(&args, Some(&once.stdout));
            assert_eq!(
                twice.stdout,
                once.stdout,
                "{} {mode:?}: injecting twice differs",
                path.display()
            );
            let mut un = vec!["uninject", "-q"];
            un.extend(&profile);
            if common::run(&un, Some(&text)).stdout == text {
                let back = common::run(&un, Some(&once.stdout));
                assert_eq!(
                    back.stdout,
                    text,
                    "{} {mode:?}: uninject did not restore the input",
                    path.display()
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 27, "checked {checked} file-modes");
}

/// Re-injection with changed settings on every file: injecting with other
/// settings what was injected gives what injecting the original with them
/// gives, byte for byte (a trust-anchor rotation, a version or sidecar mode
/// change), and uninject still restores the original.
#[test]
fn injecting_with_other_settings_converges_on_every_file() {
    const FIRST: &str = concat!(
        "trustAnchorsPEM=",
        include_str!("../../testdata/trust-anchors/a.pem")
    );
    const THEN: &str = concat!(
        "trustAnchorsPEM=",
        include_str!("../../testdata/trust-anchors/b.pem")
    );
    let pairs: [(&[&str], &[&str], &[&str]); 2] = [
        (
            &["--set", FIRST],
            &[
                "--set",
                THEN,
                "--kube-version",
                "1.28",
                "--set",
                "waitBeforeExitSeconds=5",
            ],
            &[],
        ),
        (
            &["--profile", "istio"],
            &[
                "--profile",
                "istio",
                "--native-sidecar",
                "never",
                "--set",
                "proxyMemoryLimit=512Mi",
            ],
            &["--profile", "istio"],
        ),
    ];
    let mut checked = 0;
    for path in inputs() {
        let text = std::fs::read_to_string(&path).expect("read");
        for (first, then, profile) in pairs {
            let with = |settings: &[&str], input: &str| {
                let mut args = vec!["-q", "--warn-only"];
                args.extend_from_slice(settings);
                common::run(&args, Some(input))
            };
            let once = with(first, &text);
            if once.code == 2 {
                assert_not_refused(&path, &once.stderr);
                continue;
            }
            let again = with(then, &once.stdout);
            let fresh = with(then, &text);
            assert_eq!(again.code, 0, "{}: {}", path.display(), again.stderr);
            assert_proxies_anchored(&path, &text, &once.stdout);
            assert_proxies_anchored(&path, &text, &again.stdout);
            assert!(
                again.stdout == fresh.stdout,
                "{} {then:?}: injecting again with other settings differs from injecting the file with them",
                path.display()
            );
            let mut un = vec!["uninject", "-q"];
            un.extend_from_slice(profile);
            if common::run(&un, Some(&text)).stdout == text {
                let back = common::run(&un, Some(&again.stdout));
                assert!(
                    back.stdout == text,
                    "{} {then:?}: uninject did not restore the file",
                    path.display()
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 18, "checked {checked} file-pairs");
}

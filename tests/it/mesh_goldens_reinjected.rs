//! The meshes' own injected outputs (the goldens of Linkerd's and Istio's
//! injection tests, in `../shared/fidelity`), injected again: a GitOps
//! repository often holds manifests that the mesh's own tooling injected.
//!
//! 1. The output is valid YAML with no duplicate key, as an independent
//!    parser (serde_yaml_ng, libyaml's rules) reads it.
//! 2. Injecting that output again changes nothing.
//! 3. For the Linkerd cases run with Linkerd's defaults, the objects equal a
//!    fresh injection of the golden's input with the same settings: the
//!    mesh's injection is replaced, not edited into.

use crate::common;

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Each document of `text` as serde_yaml_ng reads it; an error names the
/// first problem (a duplicate key among them).
fn independent_values(text: &str) -> Result<Vec<Value>, String> {
    serde_yaml_ng::Deserializer::from_str(text)
        .map(|document| {
            let value: serde_yaml_ng::Value =
                serde::Deserialize::deserialize(document).map_err(|e| e.to_string())?;
            serde_json::to_value(value).map_err(|e| e.to_string())
        })
        .collect()
}

/// The objects of a stream, `List`s opened, normalised.
fn objects(text: &str, what: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for mut value in independent_values(text).unwrap_or_else(|e| panic!("{what}: {e}")) {
        if value.is_null() {
            continue;
        }
        common::without_serialiser_noise(&mut value, &["mesh-inject.io/added"]);
        match value.get("items").and_then(Value::as_array) {
            Some(items) if value["kind"] == "List" => out.extend(items.iter().cloned()),
            _ => out.push(value),
        }
    }
    out
}

/// Inject `file` with `args`; the output, which must be written.
fn inject(file: &Path, args: &[&str]) -> String {
    let path = file.to_string_lossy();
    let mut all = vec!["-q", "--warn-only", "-f", &path];
    all.extend_from_slice(args);
    let run = common::run(&all, None);
    assert_eq!(run.code, 0, "{}: {}", file.display(), run.stderr);
    run.stdout
}

/// Injecting `text` again with `args` changes nothing.
fn assert_stable(text: &str, args: &[&str], what: &str) {
    let mut all = vec!["-q", "--warn-only"];
    all.extend_from_slice(args);
    let again = common::run(&all, Some(text));
    assert_eq!(again.code, 0, "{what}: {}", again.stderr);
    assert!(
        again.stdout == text,
        "{what}: injecting the output again changes it"
    );
}

#[test]
fn linkerd_goldens_injected_again_equal_a_fresh_injection() {
    let test = "linkerd_goldens_injected_again_equal_a_fresh_injection";
    let Some(fidelity) = common::shared("fidelity", test) else {
        return;
    };
    let dir = fidelity.join("linkerd");
    let inputs = fidelity.join("../corpus/linkerd-inject-inputs");
    let anchors = std::fs::read_to_string(dir.join("valid-trust-anchors.pem")).expect("anchors");
    let set_anchors = format!("trustAnchorsPEM={anchors}");
    let args = ["--set", set_anchors.as_str()];
    let (mut checked, mut compared) = (0, 0);
    for common::LinkerdCase {
        input,
        golden,
        settings,
        ..
    } in common::linkerd_cases(&dir, "inject")
    {
        let golden_path = dir.join("golden").join(&golden);
        let again = inject(&golden_path, &args);
        let got = objects(&again, &golden);
        assert_stable(&again, &args, &golden);
        checked += 1;
        // Settings other than the defaults are not all the tool's yet.
        if settings != "defaults" {
            continue;
        }
        let input_path = inputs.join(&input);
        let fresh = inject(&input_path, &args);
        let original = objects(
            &std::fs::read_to_string(&input_path).expect("input"),
            &input,
        );
        let want = objects(&fresh, &input);
        assert_eq!(got.len(), want.len(), "{golden}: object count");
        for ((got, want), original) in got.iter().zip(&want).zip(&original) {
            // An object left alone (out of the webhook's scope) keeps the
            // golden's injection: nothing to compare.
            if want == original {
                continue;
            }
            assert!(
                got == want,
                "{golden} injected again differs from {input} injected:\n{}",
                common::field_differences(got, want, "").join("\n")
            );
        }
        compared += 1;
    }
    assert!(
        checked >= 25 && compared >= 10,
        "checked {checked}, compared {compared}"
    );
}

#[test]
fn istio_goldens_injected_again_are_valid_and_stable() {
    let test = "istio_goldens_injected_again_are_valid_and_stable";
    let Some(fidelity) = common::shared("fidelity", test) else {
        return;
    };
    let golden = fidelity.join("istio/golden");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&golden)
        .expect("istio goldens")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "injected"))
        .collect();
    files.sort();
    let args = ["--profile", "istio"];
    for file in &files {
        let what = file.display().to_string();
        let again = inject(file, &args);
        objects(&again, &what);
        assert_stable(&again, &args, &what);
    }
    assert!(files.len() >= 100, "{} goldens", files.len());
}

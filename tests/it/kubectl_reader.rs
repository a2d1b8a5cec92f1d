//! The tool's YAML reader against kubectl's own: sigs.k8s.io/yaml over
//! go-yaml v2 (YAML 1.1 scalars, libyaml's line breaks), built from
//! Debian's package in `tests/go/kubectl-read`. Generated documents, each
//! a scalar of YAML 1.1's special forms, or a string with one of Unicode's
//! line breaks or a byte order mark, in every layout (block and flow, plain,
//! quoted, after a tab, before a comment), are read by both; both accept
//! and read the same value, or both refuse.
//!
//! The tool never reads another value than kubectl. Allowed differences,
//! each in the form it takes, are refusals that name what they refuse:
//! 1. Infinities and NaN: kubectl's reader refuses them when it writes JSON
//!    (`json: unsupported value`); the tool refuses them too, but later, as
//!    it builds the object (both refuse).
//! 2. A line or paragraph separator outside a quoted scalar, or a next line
//!    character anywhere: libyaml reads a line break there (ending a
//!    comment, so that a key after it counts), YAML 1.2's parser a
//!    character; the tool refuses the document, naming the character,
//!    rather than read it otherwise than kubectl.
//! 3. A byte order mark that does not start a document (one that does, as
//!    in files concatenated after saving on Windows, is read as kubectl
//!    reads it): kubectl reads it as a character; the tool refuses it.
//! 4. A lone `-` as an item of a flow sequence (`[-]`): the tool's parser
//!    refuses it, naming it.

use crate::common;
use crate::reader_generators::{documents, strings};

use serde_json::Value;

/// What kubectl reads of each text.
fn by_kubectl(binary: &std::path::Path, texts: &[String]) -> Vec<Result<Value, String>> {
    use std::io::Write;
    let mut child = std::process::Command::new(binary)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("kubectl-read runs");
    let input = serde_json::to_string(texts).expect("JSON");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("kubectl-read ends");
    assert!(out.status.success(), "kubectl-read failed");
    let readings: Vec<Value> = serde_json::from_slice(&out.stdout).expect("its JSON");
    readings
        .into_iter()
        .map(|r| match r.get("error").and_then(Value::as_str) {
            Some(error) => Err(error.to_string()),
            None => Ok(r.get("json").cloned().unwrap_or(Value::Null)),
        })
        .collect()
}

/// What the tool reads of one document's text.
fn by_the_tool(text: &str) -> Result<Value, String> {
    let documents = mesh_inject::yaml::parse_stream(text).map_err(|e| e.message)?;
    match documents.as_slice() {
        [] => Ok(Value::Null),
        [document] => match &document.root {
            None => Ok(Value::Null),
            Some(root) => mesh_inject::yaml::value::to_value(root).map_err(|e| e.message),
        },
        _ => Err("several documents".into()),
    }
}

#[test]
fn the_tool_reads_every_scalar_and_line_break_as_kubectl_does() {
    let test = "kubectl_reader::the_tool_reads_every_scalar_and_line_break_as_kubectl_does";
    let Some(binary) = common::go_program("kubectl-read", test) else {
        return;
    };
    let texts = documents();
    let kubectl = by_kubectl(&binary, &texts);
    let mut differences = Vec::new();
    for (text, theirs) in texts.iter().zip(kubectl) {
        let ours = by_the_tool(text);
        let agree = match (&ours, &theirs) {
            (Ok(a), Ok(b)) => a == b || same_numbers(a, b),
            (Err(_), Err(_)) => true,
            // Allowed 1: kubectl refuses what JSON cannot hold.
            (Ok(_), Err(e)) => e.starts_with("json: unsupported value"),
            (Err(e), Ok(_)) => {
                e.contains("which kubectl reads as a line break")
                    || e == "a byte order mark must not appear inside a document"
                    || e == "plain scalar cannot start with '-' followed by ,[]{}"
            }
        };
        if !agree {
            differences.push(format!("{text:?}: the tool {ours:?}, kubectl {theirs:?}"));
        }
    }
    assert!(
        differences.is_empty(),
        "{} of {} documents read otherwise:\n{}",
        differences.len(),
        texts.len(),
        differences.join("\n")
    );
}

/// Numbers compare as numbers (JSON has one kind).
fn same_numbers(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| a == b || same_numbers(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| v == w || same_numbers(v, w)))
        }
        _ => false,
    }
}

/// What the tool writes for a string, kubectl reads as that string: as a
/// block entry's value, a sequence item, and in flow style, in YAML and in
/// a JSON document's layout.
#[test]
fn kubectl_reads_every_string_the_tool_writes_as_that_string() {
    let test = "kubectl_reader::kubectl_reads_every_string_the_tool_writes_as_that_string";
    let Some(binary) = common::go_program("kubectl-read", test) else {
        return;
    };
    use mesh_inject::yaml::emit::Layout;
    let yaml = Layout::default();
    let mut texts = Vec::new();
    let mut wanted = Vec::new();
    for s in strings() {
        let string = Value::String(s.clone());
        let object = serde_json::json!({ "k": s });
        texts.push(yaml.block_entry(0, "k", &string));
        wanted.push(object.clone());
        texts.push(yaml.block_item(0, &string));
        wanted.push(serde_json::json!([s]));
        texts.push(format!("k: {}\n", yaml.flow(&serde_json::json!([s]))));
        wanted.push(serde_json::json!({ "k": [s] }));
    }
    let kubectl = by_kubectl(&binary, &texts);
    let mut differences = Vec::new();
    for ((text, want), theirs) in texts.iter().zip(&wanted).zip(kubectl) {
        if theirs.as_ref() != Ok(want) {
            differences.push(format!("{text:?}: kubectl reads {theirs:?}, not {want}"));
        } else if by_the_tool(text).as_ref() != Ok(want) {
            differences.push(format!(
                "{text:?}: the tool reads {:?}, not {want}",
                by_the_tool(text)
            ));
        }
    }
    assert!(
        differences.is_empty(),
        "{} of {} written strings read otherwise:\n{}",
        differences.len(),
        texts.len(),
        differences
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// A Deployment, with `EXTRA` replaced by more pod spec lines.
const WEB: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
EXTRA      containers:
        - name: web
          image: nginx
";

fn inject(text: &str) -> common::Run {
    common::run(
        &common::with_anchors(&["-q"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        Some(text),
    )
}

/// What kubectl reads as a host-network pod is one to the tool too: no
/// proxy (it would capture the node's traffic).
#[test]
fn a_yaml_1_1_boolean_is_read_as_kubectl_reads_it() {
    let run = common::run(
        &common::with_anchors(&["--warn-only"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        Some(&WEB.replace("EXTRA", "      hostNetwork: y\n")),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stdout.contains("linkerd-proxy"), "{}", run.stdout);
    assert!(
        run.stderr.contains("hostNetwork is enabled"),
        "{}",
        run.stderr
    );
}

/// A key hidden after a Unicode line break in a comment (kubectl reads it,
/// a YAML 1.2 reader does not) stops the run, naming the character and
/// where it is, and nothing is written.
#[test]
fn a_unicode_line_break_where_kubectl_reads_a_line_break_is_refused() {
    let hidden = WEB.replace("EXTRA", "      # a note\u{2028}      hostNetwork: true\n");
    let run = inject(&hidden);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stdout.is_empty());
    assert!(
        run.stderr.contains("line 13:")
            && run
                .stderr
                .contains("a line separator (U+2028), which kubectl reads as a line break"),
        "{}",
        run.stderr
    );
    // Inside quotes both read the character.
    let quoted = WEB.replace("EXTRA", "      hostname: \"a\u{2028}b\"\n");
    assert_eq!(inject(&quoted).code, 0);
}

/// What kubectl takes, the tool takes, and its edits keep the bytes: a tab
/// after a key's colon, a byte order mark starting a later document (files
/// saved on Windows, then concatenated), JSON's escaped surrogate pairs,
/// and a stream of JSON objects one per line; uninject gives each back.
#[test]
fn inputs_kubectl_reads_are_injected_and_given_back() {
    let json_line = |name: &str| {
        format!(
            r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"{name}"}},"spec":{{"selector":{{"matchLabels":{{"app":"{name}"}}}},"template":{{"metadata":{{"labels":{{"app":"{name}","emoji":"\ud83d\ude00"}}}},"spec":{{"containers":[{{"name":"{name}","image":"nginx"}}]}}}}}}}}"#
        )
    };
    let inputs = [
        (
            "a tab after a colon",
            WEB.replace("image: nginx", "image:\tnginx"),
        ),
        (
            "a byte order mark starting a later document",
            format!(
                "{}---\n\u{feff}{}",
                WEB.replace("EXTRA", ""),
                WEB.replace("EXTRA", "").replace("web", "api")
            ),
        ),
        (
            "NDJSON with surrogate pairs",
            format!("{}\n{}\n", json_line("web"), json_line("api")),
        ),
    ];
    for ((what, text), workloads) in inputs.into_iter().zip([1, 2, 2]) {
        let text = text.replace("EXTRA", "");
        let run = inject(&text);
        assert_eq!(run.code, 0, "{what}: {}", run.stderr);
        let injected = run.stdout.matches("linkerd2-proxy-init").count();
        assert_eq!(injected, workloads, "{what}: {}", run.stdout);
        let back = common::run(&["uninject", "-q"], Some(&run.stdout));
        assert_eq!(back.stdout, text, "{what}");
    }
}

/// UTF-16 and UTF-32, which kubectl reads by their byte order mark, are
/// refused with the encoding named and how to convert it.
#[test]
fn utf16_input_is_refused_naming_its_encoding() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("utf16.yaml");
    let mut bytes = vec![0xFF, 0xFE];
    for unit in WEB.replace("EXTRA", "").encode_utf16() {
        bytes.extend(unit.to_le_bytes());
    }
    std::fs::write(&path, bytes).expect("write");
    let run = common::run(&["-f", path.to_str().expect("path")], None);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("UTF-16LE (by its byte order mark)")
            && run.stderr.contains("iconv -f UTF-16LE -t UTF-8"),
        "{}",
        run.stderr
    );
}

/// What kubectl reads only as text (a name, a label's or an annotation's
/// value) written as a number or a boolean is refused as kubectl refuses
/// the object, naming the field; and a namespace given with -n must be one
/// the apiserver takes.
#[test]
fn metadata_kubectl_reads_only_as_text_is_refused_when_it_is_not() {
    for (extra, name, field) in [
        ("", "123", "metadata.name is 123"),
        ("version: 1", "web", "template metadata.labels.version is 1"),
        ("ready: y", "web", "template metadata.labels.ready is true"),
    ] {
        let text = WEB
            .replace("EXTRA", "")
            .replace(
                "name: web\n  namespace",
                &format!("name: {name}\n  namespace"),
            )
            .replace(
                "labels: {app: web}\n    spec",
                &format!("labels: {{app: web, {extra}}}\n    spec"),
            )
            .replace(", }", "}");
        let run = inject(&text);
        assert_eq!(run.code, 2, "{text}: {}", run.stderr);
        assert!(run.stdout.is_empty());
        assert!(
            run.stderr.contains(field) && run.stderr.contains("kubectl refuses the object"),
            "{}",
            run.stderr
        );
    }
    let run = common::run(&["-n", "Bad_NS!", "-f", "-"], Some(""));
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("a namespace is a DNS-1123 label"),
        "{}",
        run.stderr
    );
}

//! Semantic no-ops that inject followed by uninject must give back byte for
//! byte, with both meshes: generated variants of a Deployment, each a
//! document of one stream (one run injects them all, one uninjects them):
//!
//! 1. every spelling of null (`~`, `null`, `Null`, `NULL`, nothing, with a
//!    comment after it or not) and the empty collections (`{}`, `[]`), in
//!    every place the injection adds to and uninject takes from (the pod
//!    template's `metadata`, `labels` and `annotations`, the pod's
//!    `volumes` and `initContainers`), of a Deployment, a Pod, a List's
//!    item, and JSON's `null`;
//! 2. merge keys (`<<: *a`, `<<: [*a, *b]`, `<<: {…}`, `<<: [{…}, {…}]`)
//!    bringing the fields the injection adds to;
//! 3. the app's probes Istio's agent takes over: every action
//!    (`httpGet`, `tcpSocket`, `grpc`), before, between or after the
//!    probe's other fields, in block or flow style, with a field the tool
//!    does not know inside the action or not.
//!
//! A failure names the documents that did not come back, with their text.

use crate::common;

const NULLS: &[&str] = &["~", "null", "Null", "NULL", "", "~ # none yet", "null  "];

/// A Deployment named `name` whose pod template has `metadata` (lines
/// under `metadata:` at column 6, or a value after it), `spec` lines at
/// column 6 before the containers, and `container` lines at column 8 after
/// the container's name and image.
fn deployment(
    name: &str,
    top: &str,
    metadata: &str,
    spec: &str,
    container: &str,
    selector: &str,
) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n{top}spec:\n  selector:\n    matchLabels: {selector}\n  template:\n    metadata:{metadata}\n    spec:\n{spec}      containers:\n      - name: app\n        image: nginx\n{container}"
    )
}

fn null_variants() -> Vec<String> {
    let mut docs = Vec::new();
    for (i, null) in NULLS.iter().enumerate() {
        let value = |v: &str| {
            if v.is_empty() {
                String::new()
            } else {
                format!(" {v}")
            }
        };
        let (seq, map) = (value(null), value(null));
        let labels = "\n      labels: {app: web}";
        docs.push(deployment(
            &format!("null-metadata-{i}"),
            "",
            &map,
            "",
            "",
            "{}",
        ));
        docs.push(deployment(
            &format!("null-labels-{i}"),
            "",
            &format!("\n      labels:{map}"),
            "",
            "",
            "{}",
        ));
        docs.push(deployment(
            &format!("null-annotations-{i}"),
            "",
            &format!("{labels}\n      annotations:{map}"),
            "",
            "",
            "{app: web}",
        ));
        for list in ["volumes", "initContainers"] {
            docs.push(deployment(
                &format!("null-{list}-{i}"),
                "",
                labels,
                &format!("      {list}:{seq}\n"),
                "",
                "{app: web}",
            ));
        }
    }
    // The empty collections, in block context and in flow.
    docs.push(deployment(
        "empty-block",
        "",
        "\n      labels: {}\n      annotations: {}",
        "      volumes: []\n      initContainers: []\n",
        "",
        "{}",
    ));
    docs.push(deployment(
        "empty-flow",
        "",
        " {labels: {}, annotations: {}}",
        "",
        "",
        "{}",
    ));
    // A Pod's own metadata, a List's item, a JSON document.
    for (i, null) in NULLS.iter().enumerate() {
        docs.push(format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: pod-{i}\n  labels: {null}\n  annotations: {null}\nspec:\n  volumes: {null}\n  containers:\n  - name: app\n    image: nginx\n"
        ));
    }
    docs.push(
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    name: listed\n  spec:\n    selector:\n      matchLabels: {app: web}\n    template:\n      metadata:\n        labels: {app: web}\n        annotations: ~   # later\n      spec:\n        initContainers: Null\n        containers:\n        - name: app\n          image: nginx\n".into(),
    );
    docs.push(
        "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"json\", \"annotations\": null},\n \"spec\": {\"volumes\": null, \"containers\": [{\"name\": \"app\", \"image\": \"nginx\"}]}}\n".into(),
    );
    docs
}

fn merge_variants() -> Vec<String> {
    let top = "  labels: &l\n    app: web\n  annotations: &a {team: x}\n";
    let forms = [
        "\n      <<: {labels: *l, annotations: *a}",
        "\n      <<: [{labels: *l}, {annotations: *a}]",
        "\n      labels:\n        <<: *l\n      annotations:\n        <<: [*a]",
        "\n      labels:\n        <<: [*l, *a]\n      annotations:\n        <<: *a\n        own: z",
        "\n      <<: [{labels: *l}]\n      annotations: {<<: *a}",
    ];
    forms
        .iter()
        .enumerate()
        .map(|(i, form)| deployment(&format!("merge-{i}"), top, form, "", "", "{app: web}"))
        .collect()
}

fn probe_variants() -> Vec<String> {
    let actions: &[(&str, &str)] = &[
        ("tcp", "tcpSocket:\n  port: 8080"),
        ("tcp-flow", "tcpSocket: {port: 8080}"),
        ("tcp-unknown", "tcpSocket:\n  port: 8080\n  future: 1"),
        ("grpc", "grpc:\n  port: 9090"),
        ("grpc-flow", "grpc: {port: 9090, service: s}"),
        ("grpc-unknown", "grpc:\n  port: 9090\n  future: 1"),
        ("grpc-unknown-flow", "grpc: {port: 9090, future: true}"),
        ("http", "httpGet:\n  path: /ready\n  port: 8080"),
        ("tcp-named", "tcpSocket:\n  port: web\n  future: 1"),
        (
            "http-named",
            "httpGet: {path: /ready, port: web, future: 1}",
        ),
    ];
    let mut docs = Vec::new();
    // A probe written in flow style, its action first or last.
    for (i, probe) in [
        "{tcpSocket: {port: 8080}, periodSeconds: 5}",
        "{periodSeconds: 5, grpc: {port: 9090, future: 1}}",
        "{httpGet: {port: web}, periodSeconds: 5}",
    ]
    .iter()
    .enumerate()
    {
        docs.push(deployment(
            &format!("probe-flow-{i}"),
            "",
            "\n      labels: {app: web}",
            "",
            &format!(
                "        ports: [{{containerPort: 8080, name: web}}]\n        readinessProbe: {probe}\n        lifecycle:\n          preStop:\n            tcpSocket: {{port: 8080}}\n"
            ),
            "{app: web}",
        ));
    }
    for (name, action) in actions {
        for (at, order) in ["first", "middle", "last"].iter().enumerate() {
            for probe in ["readinessProbe", "livenessProbe", "startupProbe"] {
                let mut fields: Vec<String> =
                    vec!["periodSeconds: 5".into(), "timeoutSeconds: 2".into()];
                fields.insert(at, action.to_string());
                let body: String = fields
                    .join("\n")
                    .lines()
                    .map(|l| format!("          {l}\n"))
                    .collect();
                let container = format!(
                    "        ports:\n        - containerPort: 8080\n          name: web\n        {probe}:\n{body}"
                );
                docs.push(deployment(
                    &format!("probe-{name}-{order}-{}", probe.to_lowercase()),
                    "",
                    "\n      labels: {app: web}",
                    "",
                    &container,
                    "{app: web}",
                ));
            }
        }
    }
    docs
}

/// Inject `docs` as one stream with `inject`'s arguments, uninject with
/// `uninject`'s, and list every document that did not come back.
fn round_trip(docs: &[String], inject: &[&str], uninject: &[&str]) -> Vec<String> {
    let stream = docs.join("---\n");
    let mut args = vec!["-q", "--warn-only"];
    args.extend_from_slice(inject);
    let injected = common::run(&args, Some(&stream));
    assert_eq!(injected.code, 0, "{inject:?}: {}", injected.stderr);
    let mut args = vec!["uninject", "-q"];
    args.extend_from_slice(uninject);
    let back = common::run(&args, Some(&injected.stdout));
    assert_eq!(back.code, 0, "{uninject:?}: {}", back.stderr);
    let before = common::document_texts(&stream);
    let mut failures = differing(&before, &back.stdout, &format!("{inject:?}: uninjected"));
    // Every variant is injected (else the round trip proves nothing).
    for (given, out) in before.iter().zip(common::document_texts(&injected.stdout)) {
        if *given == out {
            failures.push(format!("{inject:?}: not injected:\n{given}"));
        }
    }
    // Injected again, nothing changes.
    let again = common::run(&args_of(inject), Some(&injected.stdout));
    assert_eq!(again.code, 0, "{inject:?}: {}", again.stderr);
    let once = common::document_texts(&injected.stdout);
    failures.extend(differing(
        &once,
        &again.stdout,
        &format!("{inject:?}: injected twice"),
    ));
    // Injected again with other settings, it is what injecting the input
    // with them gives, and uninject still gives the input back.
    let mut other = inject.to_vec();
    other.extend(["--kube-version", "1.28", "--set", "proxyMemoryLimit=512Mi"]);
    let fresh = common::run(&args_of(&other), Some(&stream));
    let converged = common::run(&args_of(&other), Some(&injected.stdout));
    assert_eq!(converged.code, 0, "{other:?}: {}", converged.stderr);
    let fresh = common::document_texts(&fresh.stdout);
    failures.extend(differing(
        &fresh,
        &converged.stdout,
        &format!("{other:?}: injected again"),
    ));
    let mut args = vec!["uninject", "-q"];
    args.extend_from_slice(uninject);
    let back = common::run(&args, Some(&converged.stdout));
    failures.extend(differing(
        &before,
        &back.stdout,
        &format!("{other:?}: uninjected"),
    ));
    failures
}

fn args_of<'a>(inject: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["-q", "--warn-only"];
    args.extend_from_slice(inject);
    args
}

/// The documents of `got` that are not those of `want`, shown with `what`.
fn differing(want: &[String], got: &str, what: &str) -> Vec<String> {
    let got = common::document_texts(got);
    assert_eq!(want.len(), got.len(), "{what}: document count");
    want.iter()
        .zip(&got)
        .filter(|(w, g)| w != g)
        .map(|(w, g)| format!("{what}:\n--- wanted\n{w}--- got\n{g}"))
        .collect()
}

fn assert_restored(docs: Vec<String>, meshes: &[(&[&str], &[&str])]) {
    let mut failures = Vec::new();
    for (inject, uninject) in meshes {
        failures.extend(round_trip(&docs, inject, uninject));
    }
    assert!(
        failures.is_empty(),
        "{} of {} documents did not come back:\n{}",
        failures.len(),
        docs.len() * meshes.len() * 4,
        failures.join("\n")
    );
}

const BOTH: &[(&[&str], &[&str])] = &[
    (&[], &[]),
    (&["--profile", "istio"], &["--profile", "istio"]),
];

#[test]
fn every_null_spelling_and_empty_collection_comes_back() {
    assert_restored(null_variants(), BOTH);
}

#[test]
fn merge_keys_come_back_as_written() {
    assert_restored(merge_variants(), BOTH);
}

#[test]
fn the_probes_istios_agent_took_over_come_back_as_written() {
    assert_restored(
        probe_variants(),
        &[
            (&["--profile", "istio"], &["--profile", "istio"]),
            (
                &["--profile", "istio", "--native-sidecar", "never"],
                &["--profile", "istio"],
            ),
        ],
    );
}

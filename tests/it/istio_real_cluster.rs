//! Istio as a real cluster runs it: its ConfigMaps as `kubectl get -o yaml`
//! returns them from a live cluster (managed fields, Helm's annotations,
//! keys sorted, block scalars, long lines folded, written by kubectl's own
//! YAML writer), and revisions: each talks to its own istiod, and a run for
//! one revision injects exactly the pods that revision's webhooks select,
//! as Istio's chart writes their selectors.

use crate::common;
use crate::istio_cluster_config::{HELLO, config_maps, fidelity_for, inject_with};

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

/// The objects of a file of YAML documents.
fn objects(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("read");
    common::values(&text).into_iter().flatten().collect()
}

/// `object` as the apiserver returns it: with the metadata a live cluster
/// adds (its uid, version, time, Helm's ownership, and the managed fields
/// of the Helm install that applied it).
fn as_served(mut object: Value, n: usize) -> Value {
    let metadata = object["metadata"].as_object_mut().expect("metadata");
    metadata.insert(
        "uid".into(),
        json!(format!("4c1f7a3e-0d1b-4d4e-9a51-00000000000{n}")),
    );
    metadata.insert("resourceVersion".into(), json!(format!("{}", 48210 + n)));
    metadata.insert("creationTimestamp".into(), json!("2026-11-02T09:14:27Z"));
    metadata.insert(
        "annotations".into(),
        json!({"meta.helm.sh/release-name": "istiod", "meta.helm.sh/release-namespace": "istio-system"}),
    );
    let labels = metadata
        .entry("labels")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .expect("labels");
    labels.insert("app.kubernetes.io/managed-by".into(), json!("Helm"));
    labels.insert("helm.sh/chart".into(), json!("istiod-1.28.0"));
    let data_keys: serde_json::Map<String, Value> = object["data"]
        .as_object()
        .expect("data")
        .keys()
        .map(|k| (format!("f:{k}"), json!({})))
        .collect();
    object["metadata"]["managedFields"] = json!([{
        "apiVersion": "v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:data": data_keys, "f:metadata": {"f:annotations": {".": {}, "f:meta.helm.sh/release-name": {}}, "f:labels": {".": {}, "f:istio.io/rev": {}}}},
        "manager": "helm",
        "operation": "Update",
        "time": "2026-11-02T09:14:27Z"
    }]);
    object
}

/// The ConfigMaps of a live cluster, fetched with `kubectl get configmap
/// -n istio-system istio-sidecar-injector istio -o yaml`, for the chart's
/// defaults: the ConfigMaps of `make-configmaps.py` served (see
/// [`as_served`]) and written by kubectl's YAML writer (`tests/go/kubectl-yaml`).
#[test]
fn the_configmaps_kubectl_get_returns_from_a_live_cluster_inject_as_the_charts() {
    let test = "the_configmaps_kubectl_get_returns_from_a_live_cluster_inject_as_the_charts";
    let Some(fidelity) = fidelity_for(test) else {
        return;
    };
    let Some(kubectl_yaml) = common::go_program("kubectl-yaml", test) else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let chart = config_maps(&fidelity, dir.path(), &[], &mut BTreeMap::new());
    let lines: String = objects(&chart)
        .into_iter()
        .enumerate()
        .map(|(n, object)| as_served(object, n).to_string() + "\n")
        .collect();
    let mut child = std::process::Command::new(&kubectl_yaml)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("the YAML writer runs");
    use std::io::Write;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(lines.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("the YAML writer ends");
    assert!(out.status.success());
    let fetched = dir.path().join("fetched.yaml");
    std::fs::write(&fetched, &out.stdout).expect("write");
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    // The form a user has: a List, managed fields, the legacy template
    // field that traps old istiods, block scalars.
    for expected in [
        "kind: List",
        "managedFields:",
        "Template_Version_And_Istio_Version_Mismatched",
        "config: |",
        "values: |-",
    ] {
        assert!(
            text.contains(expected),
            "{expected} not in what kubectl writes"
        );
    }
    let input = dir.path().join("hello.yaml");
    std::fs::write(&input, HELLO).expect("write the input");
    let input = input.to_string_lossy().to_string();
    let from_chart = inject_with(&chart, &input, &["-q"]);
    let from_cluster = inject_with(&fetched, &input, &["-q"]);
    assert_eq!(from_cluster.code, 0, "{}", from_cluster.stderr);
    assert_eq!(from_cluster.stdout, from_chart.stdout);
    assert!(
        from_cluster
            .stdout
            .contains("registry.istio.io/testing/proxyv2:latest")
    );
    // Given as the input, the same ConfigMaps configure the run and are
    // written back unchanged.
    let both = dir.path().join("both.yaml");
    std::fs::write(
        &both,
        std::fs::read_to_string(&fetched).expect("read") + "---\n" + HELLO,
    )
    .expect("write");
    let run = common::run_as_given(
        &["--profile", "istio", "-q", "-f", &both.to_string_lossy()],
        None,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.starts_with(&text),
        "the ConfigMaps are not written back as they were"
    );
    assert!(run.stdout.ends_with(&from_chart.stdout));
}

/// The proxy's env entry `name`, in the JSON output of a run.
fn env_of(out: &Value, name: &str) -> String {
    let spec = &out["spec"]["template"]["spec"];
    let proxy = ["initContainers", "containers"]
        .iter()
        .flat_map(|list| spec[list].as_array().into_iter().flatten())
        .find(|c| c["name"] == "istio-proxy")
        .expect("the proxy");
    proxy["env"]
        .as_array()
        .expect("env")
        .iter()
        .find(|e| e["name"] == name)
        .and_then(|e| e["value"].as_str())
        .unwrap_or_else(|| panic!("no {name}"))
        .to_string()
}

fn json_of(run: common::Run) -> Value {
    assert_eq!(run.code, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).expect("JSON")
}

/// A revision's proxy gets its certificate and its configuration from that
/// revision's istiod, with the embedded profile as with the chart's
/// templates (which must agree), in any control plane namespace.
#[test]
fn a_revisions_proxy_talks_to_its_own_istiod() {
    let embedded = |args: &[&str]| {
        let mut all = vec!["--profile", "istio", "-q", "-o", "json"];
        all.extend(args);
        json_of(common::run_as_given(&all, Some(HELLO)))
    };
    let out = embedded(&["--set", "revision=canary"]);
    assert_eq!(
        env_of(&out, "CA_ADDR"),
        "istiod-canary.istio-system.svc:15012"
    );
    assert_eq!(
        env_of(&out, "PROXY_CONFIG"),
        "{\"discoveryAddress\":\"istiod-canary.istio-system.svc:15012\"}\n"
    );
    let status = out["spec"]["template"]["metadata"]["annotations"]["sidecar.istio.io/status"]
        .as_str()
        .expect("status");
    assert!(status.ends_with(r#""revision":"canary"}"#), "{status}");
    let out = embedded(&["--set", "revision=canary", "--set", "istioNamespace=mesh"]);
    assert_eq!(env_of(&out, "CA_ADDR"), "istiod-canary.mesh.svc:15012");
    // The default revision: Istio's defaults, which PROXY_CONFIG leaves out.
    let out = embedded(&[]);
    assert_eq!(env_of(&out, "CA_ADDR"), "istiod.istio-system.svc:15012");
    assert_eq!(env_of(&out, "PROXY_CONFIG"), "{}\n");
    // The chart's CA address wins over the revision's istiod for
    // certificates, not for configuration.
    let out = embedded(&[
        "--set",
        "revision=canary",
        "--set",
        "caAddress=ca.example:443",
    ]);
    assert_eq!(env_of(&out, "CA_ADDR"), "ca.example:443");
    assert!(env_of(&out, "PROXY_CONFIG").contains("istiod-canary"));

    let test = "a_revisions_proxy_talks_to_its_own_istiod";
    let Some(fidelity) = fidelity_for(test) else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let mut made = BTreeMap::new();
    let input = dir.path().join("hello.yaml");
    std::fs::write(&input, HELLO).expect("write the input");
    let input = input.to_string_lossy().to_string();
    for (revision, generator) in [
        ("canary", vec!["--revision", "canary"]),
        ("default", vec![]),
    ] {
        let context = config_maps(&fidelity, dir.path(), &generator, &mut made);
        let rendered = json_of(inject_with(&context, &input, &["-q", "-o", "json"]));
        let embedded = embedded(&["--set", &format!("revision={revision}")]);
        for name in ["CA_ADDR", "PROXY_CONFIG"] {
            assert_eq!(
                env_of(&rendered, name),
                env_of(&embedded, name),
                "{revision}: {name}"
            );
        }
    }
}

/// The selectors of the webhooks Istio's chart installs for `revision`
/// (`mutatingwebhook.yaml` of istio-discovery), each a namespace selector
/// and an object selector, written here as data.
fn webhooks(revision: &str) -> Vec<(Value, Value)> {
    let not_disabled =
        json!({"key": "sidecar.istio.io/inject", "operator": "NotIn", "values": ["false"]});
    let mut hooks = vec![
        (
            json!([{"key": "istio.io/rev", "operator": "In", "values": [revision]},
                   {"key": "istio-injection", "operator": "DoesNotExist"}]),
            json!([not_disabled]),
        ),
        (
            json!([{"key": "istio.io/rev", "operator": "DoesNotExist"},
                   {"key": "istio-injection", "operator": "DoesNotExist"}]),
            json!([not_disabled, {"key": "istio.io/rev", "operator": "In", "values": [revision]}]),
        ),
    ];
    if revision == "default" {
        hooks.push((
            json!([{"key": "istio-injection", "operator": "In", "values": ["enabled"]}]),
            json!([not_disabled]),
        ));
        hooks.push((
            json!([{"key": "istio-injection", "operator": "DoesNotExist"},
                   {"key": "istio.io/rev", "operator": "DoesNotExist"}]),
            json!([{"key": "sidecar.istio.io/inject", "operator": "In", "values": ["true"]},
                   {"key": "istio.io/rev", "operator": "DoesNotExist"}]),
        ));
    }
    hooks
}

/// Whether `labels` match every one of `expressions` (a label selector's
/// `matchExpressions`).
fn matches(expressions: &Value, labels: &Value) -> bool {
    expressions
        .as_array()
        .expect("expressions")
        .iter()
        .all(|e| {
            let value = labels
                .get(e["key"].as_str().expect("key"))
                .and_then(Value::as_str);
            let listed = |v: &str| {
                e["values"]
                    .as_array()
                    .is_some_and(|vs| vs.iter().any(|x| x == v))
            };
            match e["operator"].as_str().expect("operator") {
                "In" => value.is_some_and(listed),
                "NotIn" => !value.is_some_and(listed),
                "Exists" => value.is_some(),
                "DoesNotExist" => value.is_none(),
                other => panic!("operator {other}"),
            }
        })
}

/// Whether some webhook of `revision` takes a pod.
fn selects(revision: &str, namespace: &Value, pod: &Value) -> bool {
    webhooks(revision)
        .iter()
        .any(|(ns, object)| matches(ns, namespace) && matches(object, pod))
}

/// Every combination of namespace labels, pod labels and the run's
/// revision, with the default and a canary revision installed: the run
/// injects the pods its revision's webhooks select, leaves alone (saying
/// which revision's they are) those another revision's select, and, as
/// `istioctl kube-inject` does, injects pods no webhook selects by label
/// unless their namespace turns injection off.
#[test]
fn a_run_for_one_revision_injects_what_its_webhooks_select() {
    let namespaces = [
        json!({}),
        json!({"istio-injection": "enabled"}),
        json!({"istio-injection": "disabled"}),
        json!({"istio.io/rev": "default"}),
        json!({"istio.io/rev": "canary"}),
        json!({"istio-injection": "enabled", "istio.io/rev": "canary"}),
    ];
    let pods = [
        json!({}),
        json!({"istio.io/rev": "canary"}),
        json!({"istio.io/rev": "default"}),
        json!({"sidecar.istio.io/inject": "true"}),
        json!({"sidecar.istio.io/inject": "true", "istio.io/rev": "canary"}),
    ];
    let revisions = ["default", "canary"];
    let mut checked = 0;
    for namespace_labels in &namespaces {
        for pod_labels in &pods {
            let mut labels = pod_labels.clone();
            labels["app"] = json!("hello");
            let namespace = json!({"apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": "shop", "labels": namespace_labels}});
            let mut workload: Value = common::values(HELLO)[0].clone().expect("HELLO");
            workload["spec"]["template"]["metadata"]["labels"] = labels;
            let input = format!("{namespace}\n---\n{workload}\n");
            for revision in revisions {
                let run = common::run_as_given(
                    &[
                        "--profile",
                        "istio",
                        "--set",
                        &format!("revision={revision}"),
                        "-",
                    ],
                    Some(&input),
                );
                assert_eq!(run.code, 0, "{}", run.stderr);
                let injected = run.stdout.contains("istio-proxy");
                let others_select = revisions.iter().any(|other| {
                    *other != revision && selects(other, namespace_labels, pod_labels)
                });
                let turned_off = namespace_labels
                    .get("istio-injection")
                    .is_some_and(|v| v != "enabled");
                let expected = selects(revision, namespace_labels, pod_labels)
                    || !(others_select || turned_off);
                assert_eq!(
                    injected, expected,
                    "run for {revision}, namespace labels {namespace_labels}, pod labels {pod_labels}: {}",
                    run.stderr
                );
                if !injected && others_select {
                    assert!(
                        run.stderr.contains("revision's webhook injects it"),
                        "{}",
                        run.stderr
                    );
                }
                checked += 1;
            }
        }
    }
    assert_eq!(checked, namespaces.len() * pods.len() * revisions.len());
}

/// The context picks the revision: one revision's ConfigMaps select it;
/// several without `--set revision` are an error naming them; a revision
/// asked for that the context lacks is an error naming those it has.
#[test]
fn the_contexts_configmaps_choose_the_revision_or_the_run_stops_naming_them() {
    let test = "the_contexts_configmaps_choose_the_revision_or_the_run_stops_naming_them";
    let Some(fidelity) = fidelity_for(test) else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let mut made = BTreeMap::new();
    let default = config_maps(&fidelity, dir.path(), &[], &mut made);
    let canary = config_maps(&fidelity, dir.path(), &["--revision", "canary"], &mut made);
    let both = dir.path().join("both.yaml");
    std::fs::write(
        &both,
        std::fs::read_to_string(&default).expect("read")
            + "---\n"
            + &std::fs::read_to_string(&canary).expect("read"),
    )
    .expect("write");
    let input = dir.path().join("hello.yaml");
    std::fs::write(&input, HELLO).expect("write the input");
    let input = input.to_string_lossy().to_string();

    let out = json_of(inject_with(&canary, &input, &["-q", "-o", "json"]));
    assert_eq!(
        env_of(&out, "CA_ADDR"),
        "istiod-canary.istio-system.svc:15012"
    );
    assert_eq!(
        out["spec"]["template"]["metadata"]["annotations"]["istio.io/rev"],
        "canary"
    );

    let several = inject_with(&both, &input, &["-q"]);
    assert_eq!(several.code, 2, "{}", several.stderr);
    assert!(several.stdout.is_empty());
    assert!(
        several.stderr.contains("several revisions") && several.stderr.contains("default, canary"),
        "{}",
        several.stderr
    );
    for revision in ["canary", "default"] {
        let out = json_of(inject_with(
            &both,
            &input,
            &["-q", "-o", "json", "--set", &format!("revision={revision}")],
        ));
        let expected = istiod(revision);
        assert_eq!(env_of(&out, "CA_ADDR"), expected);
    }
    let missing = inject_with(&default, &input, &["-q", "--set", "revision=canary"]);
    assert_eq!(missing.code, 2, "{}", missing.stderr);
    assert!(
        missing.stderr.contains("it has: default"),
        "{}",
        missing.stderr
    );
}

fn istiod(revision: &str) -> String {
    match revision {
        "default" => "istiod.istio-system.svc:15012".into(),
        r => format!("istiod-{r}.istio-system.svc:15012"),
    }
}

/// The document's objects as JSON with this tool's own record taken out
/// (it holds the pod's containers as they were written, nulls and all).
fn without_record(run: &common::Run) -> Vec<Value> {
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut objects: Vec<Value> = common::values(&run.stdout).into_iter().flatten().collect();
    for object in &mut objects {
        if let Some(annotations) = object
            .pointer_mut("/spec/template/metadata/annotations")
            .and_then(Value::as_object_mut)
        {
            annotations.remove("mesh-inject.io/added");
        }
    }
    objects
}

/// Istio decodes the pod into Go's structs before it merges its template:
/// a null (or an empty list) in the pod's own `istio-proxy` is a field not
/// given, and the rendered one stays. Istio's gateway chart renders `env:`
/// with nothing under it by default; the proxy keeps the gateway
/// template's env. Every field of the pod's own proxy, null or empty,
/// injects as the field left out, with the cluster's templates and with the
/// embedded profile merging it.
#[test]
fn a_null_in_the_pods_own_proxy_is_a_field_not_given() {
    let test = "a_null_in_the_pods_own_proxy_is_a_field_not_given";
    let Some(fidelity) = fidelity_for(test) else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let context = config_maps(&fidelity, dir.path(), &[], &mut BTreeMap::new());
    let gateway = common::testdata("istio/gateway-chart-default.yaml");
    let run = inject_with(&context, &gateway.to_string_lossy(), &["-q"]);
    let injected = without_record(&run);
    let proxy = &injected[0]["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(proxy["name"], "istio-proxy");
    let env: Vec<&str> = proxy["env"]
        .as_array()
        .expect("the gateway template's env")
        .iter()
        .filter_map(|e| e["name"].as_str())
        .collect();
    for name in [
        "PILOT_CERT_PROVIDER",
        "CA_ADDR",
        "PROXY_CONFIG",
        "ISTIO_META_WORKLOAD_NAME",
    ] {
        assert!(env.contains(&name), "{name} not in {env:?}");
    }
    // The pod's own proxy with one field null, empty, or left out.
    let base: Value = common::values(&std::fs::read_to_string(&gateway).expect("read"))[0]
        .clone()
        .expect("the Deployment");
    let fields = [
        ("env", json!([])),
        ("envFrom", json!([])),
        ("args", json!([])),
        ("command", json!([])),
        ("volumeMounts", json!([])),
        ("ports", json!([])),
        ("readinessProbe", Value::Null),
        ("lifecycle", Value::Null),
        ("securityContext", Value::Null),
        ("resources", Value::Null),
        ("imagePullPolicy", json!("")),
    ];
    let paths = [
        ("cluster", context.clone()),
        ("embedded", dir.path().join("none.yaml")),
    ];
    std::fs::write(&paths[1].1, "").expect("write");
    let mut checked = 0;
    for (field, empty) in fields {
        let with = |value: Option<Value>, path: &str| {
            let mut object = base.clone();
            let proxy = object["spec"]["template"]["spec"]["containers"][0]
                .as_object_mut()
                .expect("the proxy");
            proxy.remove(field);
            if let Some(value) = value {
                proxy.insert(field.into(), value);
            }
            if path == "embedded" {
                // The embedded profile renders the sidecar template only,
                // for a pod with an app beside its proxy.
                let pod = &mut object["spec"]["template"];
                pod["metadata"]["annotations"]
                    .as_object_mut()
                    .expect("annotations")
                    .remove("inject.istio.io/templates");
                pod["spec"]["containers"]
                    .as_array_mut()
                    .expect("containers")
                    .push(json!({"name": "app", "image": "app:1"}));
            }
            object.to_string()
        };
        for (path, context) in &paths {
            let inject = |text: String| {
                let mut args = vec!["--profile", "istio", "-q"];
                let context = context.to_string_lossy().to_string();
                if *path == "cluster" {
                    args.extend(["--context", &context]);
                }
                args.push("-");
                without_record(&common::run_as_given(&args, Some(&text)))
            };
            let absent = inject(with(None, path));
            assert!(
                absent[0].to_string().contains("PROXY_CONFIG"),
                "{path}: not injected"
            );
            for given in [Value::Null, empty.clone()] {
                assert_eq!(
                    inject(with(Some(given.clone()), path)),
                    absent,
                    "{path}: the pod's own istio-proxy with {field}: {given}"
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 11 * 4);
}

/// Whether the proxy of a run's JSON output is a native sidecar.
fn native(out: &Value) -> bool {
    let spec = &out["spec"]["template"]["spec"];
    let in_inits = spec["initContainers"]
        .as_array()
        .is_some_and(|inits| inits.iter().any(|c| c["name"] == "istio-proxy"));
    let in_containers = spec["containers"]
        .as_array()
        .is_some_and(|cs| cs.iter().any(|c| c["name"] == "istio-proxy"));
    assert!(in_inits != in_containers, "one proxy: {spec}");
    in_inits
}

/// The injector decides native sidecars as Istio's does: left to decide
/// (`ENABLE_NATIVE_SIDECARS=auto`, the default), only where every node is
/// at 1.33 or later, where they are stable; the chart's `false` (which its
/// compatibility profiles for 1.25 and 1.26 set) never; `true` always. The
/// same with the embedded profile and with the cluster's configuration.
#[test]
fn native_sidecars_as_istios_injector_decides_them_by_version_and_setting() {
    let test = "native_sidecars_as_istios_injector_decides_them_by_version_and_setting";
    let versions = ["1.28", "1.29", "1.32", "1.33", "1.37"];
    let at_least_1_33 = |v: &str| v.trim_start_matches("1.").parse::<u32>().expect("minor") >= 33;
    let embedded = |version: &str| {
        json_of(common::run_as_given(
            &[
                "--profile",
                "istio",
                "-q",
                "-o",
                "json",
                "--kube-version",
                version,
            ],
            Some(HELLO),
        ))
    };
    for version in versions {
        assert_eq!(
            native(&embedded(version)),
            at_least_1_33(version),
            "embedded, {version}"
        );
    }
    let Some(fidelity) = fidelity_for(test) else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let mut made = BTreeMap::new();
    let input = dir.path().join("hello.yaml");
    std::fs::write(&input, HELLO).expect("write the input");
    let input = input.to_string_lossy().to_string();
    for (setting, expected) in [("auto", None), ("false", Some(false)), ("true", Some(true))] {
        let generator = format!("env.ENABLE_NATIVE_SIDECARS={setting}");
        let context = config_maps(&fidelity, dir.path(), &["--set", &generator], &mut made);
        for version in versions {
            let out = json_of(inject_with(
                &context,
                &input,
                &["-q", "-o", "json", "--kube-version", version, "--warn-only"],
            ));
            let want = expected.unwrap_or_else(|| at_least_1_33(version));
            assert_eq!(
                native(&out),
                want,
                "ENABLE_NATIVE_SIDECARS={setting}, {version}"
            );
        }
    }
    // Another word is false to istiod, and the run says so, naming it.
    let context = config_maps(
        &fidelity,
        dir.path(),
        &["--set", "env.ENABLE_NATIVE_SIDECARS=yes"],
        &mut made,
    );
    let run = inject_with(&context, &input, &["-o", "json", "--kube-version", "1.33"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out: Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert!(!native(&out));
    assert!(
        run.stderr
            .contains("pilot.env.ENABLE_NATIVE_SIDECARS is \"yes\", which istiod reads as false"),
        "{}",
        run.stderr
    );
}

/// A pod whose annotations Istio's injector refuses is denied as its
/// webhook denies it: the run is rejected (exit 1) with Istio's message and
/// writes nothing; with `--warn-only` the workload is written as it came.
/// The same with the cluster's configuration.
#[test]
fn annotations_istio_refuses_deny_the_pod_with_istios_message() {
    let mut workload: Value = common::values(HELLO)[0].clone().expect("HELLO");
    workload["spec"]["template"]["metadata"]["annotations"] = json!({
        "sidecar.istio.io/interceptionMode": "BPF",
        "traffic.sidecar.istio.io/excludeOutboundIPRanges": "10.0.0.1",
    });
    let input = serde_json::to_string_pretty(&workload).expect("JSON") + "\n";
    let expected = "2 errors occurred: * invalid value 'BPF' for annotation 'sidecar.istio.io/interceptionMode': interceptionMode invalid, use REDIRECT,TPROXY,NONE: BPF * invalid value '10.0.0.1' for annotation 'traffic.sidecar.istio.io/excludeOutboundIPRanges': excludeIPRanges invalid: failed parsing cidr '10.0.0.1': netip.ParsePrefix(\"10.0.0.1\"): no '/'";
    let check = |extra: &[&str]| {
        let mut args = vec!["--profile", "istio"];
        args.extend(extra);
        args.push("-");
        let denied = common::run_as_given(&args, Some(&input));
        assert_eq!(denied.code, 1, "{}", denied.stderr);
        assert!(denied.stdout.is_empty(), "written although denied");
        assert!(denied.stderr.contains(expected), "{}", denied.stderr);
        args.insert(0, "--warn-only");
        let written = common::run_as_given(&args, Some(&input));
        assert_eq!(written.code, 0, "{}", written.stderr);
        assert_eq!(written.stdout, input);
    };
    check(&[]);
    // Replayed through the admission chain, Istio's webhook denies the pod
    // as the apiserver reports a denial.
    let dir = tempfile::tempdir().expect("temp dir");
    let webhook = dir.path().join("istio-webhook.yaml");
    std::fs::write(
        &webhook,
        "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata: {name: istio-sidecar-injector}\nwebhooks:\n- name: object.sidecar-injector.istio.io\n  reinvocationPolicy: Never\n  rules:\n  - {operations: [CREATE], apiGroups: [\"\"], apiVersions: [v1], resources: [pods]}\n",
    )
    .expect("write");
    let admitted = common::run_as_given(
        &[
            "admit",
            "--profile",
            "istio",
            "--context",
            &webhook.to_string_lossy(),
            "-",
        ],
        Some(&input),
    );
    assert_eq!(admitted.code, 1, "{}", admitted.stderr);
    assert!(
        admitted.stdout.contains(&format!(
            "rejected: admission webhook \"object.sidecar-injector.istio.io\" denied the request: {expected}"
        )),
        "{}",
        admitted.stdout
    );
    let test = "annotations_istio_refuses_deny_the_pod_with_istios_message";
    let Some(fidelity) = fidelity_for(test) else {
        return;
    };
    let context = config_maps(&fidelity, dir.path(), &[], &mut BTreeMap::new());
    check(&["--context", &context.to_string_lossy()]);
}

/// An injector ConfigMap from before Istio 1.8, with the one `template` and
/// no `templates`: istiod reads only `templates`, so it would inject
/// nothing with it. The run stops (exit 2) naming the ConfigMap and why,
/// writing nothing, rather than reading the old field as the sidecar's.
#[test]
fn a_configuration_with_only_the_legacy_template_is_refused_naming_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = "policy: enabled\ntemplate: |\n  spec:\n    containers:\n    - name: istio-proxy\n      image: old\n";
    let config_map = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "istio-sidecar-injector", "namespace": "istio-system"},
        "data": {"config": config, "values": "{}"}});
    let context = dir.path().join("old-injector.yaml");
    std::fs::write(&context, config_map.to_string()).expect("write");
    let input = dir.path().join("hello.yaml");
    std::fs::write(&input, HELLO).expect("write the input");
    let run = inject_with(&context, &input.to_string_lossy(), &[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stdout.is_empty(), "written although refused");
    assert!(
        run.stderr
            .contains("ConfigMap istio-system/istio-sidecar-injector")
            && run.stderr.contains("legacy single `template`"),
        "{}",
        run.stderr
    );
}

/// A revision tag's webhook configuration, as `kubectl get
/// mutatingwebhookconfigurations -l istio.io/tag -o yaml` lists it (its
/// webhooks abridged).
fn tag_webhooks(tag: &str, revision: &str) -> String {
    format!(
        "apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  labels:
    app: sidecar-injector
    istio.io/rev: {revision}
    istio.io/tag: {tag}
  name: istio-revision-tag-{tag}
  resourceVersion: \"4242\"
webhooks:
- admissionReviewVersions: [v1]
  clientConfig:
    service: {{name: istiod-{revision}, namespace: istio-system, path: /inject, port: 443}}
  name: rev.namespace.sidecar-injector.istio.io
  namespaceSelector:
    matchExpressions:
    - {{key: istio.io/rev, operator: In, values: [{tag}]}}
    - {{key: istio-injection, operator: DoesNotExist}}
  sideEffects: None
"
    )
}

fn namespace(name: &str, revision: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {name}\n  labels: {{istio.io/rev: {revision}}}\n"
    )
}

/// A revision tag stands for its revision: namespaces labelled with it are
/// that revision's, `--set revision=TAG` injects for it, and the proxy
/// talks to that revision's istiod, with the cluster's templates and with
/// the embedded profile; a tag the context does not define is another
/// revision's, said with the reason.
#[test]
fn a_revision_tag_stands_for_the_revision_it_points_at() {
    let test = "a_revision_tag_stands_for_the_revision_it_points_at";
    let Some(fidelity) = fidelity_for(test) else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let canary = config_maps(
        &fidelity,
        dir.path(),
        &["--revision", "canary"],
        &mut BTreeMap::new(),
    );
    let cluster_state = [
        tag_webhooks("prod", "canary"),
        namespace("shop", "prod"),
        namespace("edge", "stable"),
    ]
    .join("---\n");
    let with_templates = dir.path().join("with-templates.yaml");
    let config_maps_text = std::fs::read_to_string(&canary).expect("read");
    std::fs::write(
        &with_templates,
        format!("{config_maps_text}---\n{cluster_state}"),
    )
    .expect("write");
    let embedded_only = dir.path().join("embedded.yaml");
    std::fs::write(&embedded_only, &cluster_state).expect("write");
    let hello = |ns: &str| {
        let path = dir.path().join(format!("hello-{ns}.yaml"));
        std::fs::write(
            &path,
            HELLO.replace("namespace: shop", &format!("namespace: {ns}")),
        )
        .expect("write");
        path.to_string_lossy().to_string()
    };
    let (shop, edge) = (hello("shop"), hello("edge"));

    // The context's one revision is canary; the shop namespace names its tag.
    let out = json_of(inject_with(&with_templates, &shop, &["-q", "-o", "json"]));
    assert_eq!(env_of(&out, "CA_ADDR"), istiod("canary"));
    // Asked for by its tag, with the templates and with the embedded profile.
    for context in [&with_templates, &embedded_only] {
        let out = json_of(inject_with(
            context,
            &shop,
            &["-q", "-o", "json", "--set", "revision=prod"],
        ));
        assert_eq!(
            env_of(&out, "CA_ADDR"),
            istiod("canary"),
            "{}",
            context.display()
        );
        let config = env_of(&out, "PROXY_CONFIG");
        assert!(
            config.contains("istiod-canary.istio-system.svc:15012"),
            "{config}"
        );
    }
    // A tag the cluster does not define: another revision's, and said.
    let other = inject_with(&with_templates, &edge, &["--set", "revision=prod"]);
    assert_eq!(other.code, 0, "{}", other.stderr);
    assert!(
        other.stderr.contains("\"istio.io/rev: stable\"")
            && other.stderr.contains("not this run's (canary)"),
        "{}",
        other.stderr
    );
    // The shop namespace's pods are not the default revision's.
    let default_run = inject_with(&embedded_only, &shop, &[]);
    assert!(
        default_run.stderr.contains("(a tag of revision canary)"),
        "{}",
        default_run.stderr
    );
}

//! Istio's own injection tests, reproduced: every case of
//! `../shared/fidelity/istio/CASES.md` whose settings the tool can express
//! is run with the istio profile and those settings, and each object is
//! compared with Istio's golden field by field (containers and their order,
//! env and values, args, probes, lifecycle, resources, security context,
//! mounts, volumes, annotations, labels).
//!
//! Istio's settings are the cluster's (its Helm values and mesh config), which
//! a pod's annotations override: the test writes them into a profile of its
//! own (`kubectl mesh-inject config --set …`), as the cluster's values, rather
//! than passing them as `--set` flags, which would beat the annotations.
//!
//! Cases the tool does not reproduce yet are listed in `NOT_YET` with the
//! reason; a listed case that starts matching fails the test, and so does a
//! case that differs without being listed, so that the list stays true.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

/// The profile values every case starts from: the chart's defaults that
/// Istio's tests use (hub `registry.istio.io/testing`, tag `latest`, no
/// image pull policy). A pod's own `istio-proxy` is merged as Istio merges
/// it, by default.
pub(crate) const BASE: &[&str] = &[
    "proxyImage=registry.istio.io/testing/proxyv2:latest",
    "proxyInitImage=registry.istio.io/testing/proxyv2:latest",
    "imagePullPolicy=",
];

/// The profile values for a case's Istio settings; `None` when the tool
/// cannot express them yet.
pub(crate) fn values(settings: &str) -> Option<Vec<&'static str>> {
    Some(match settings {
        "defaults" | "defaults (expect skip: hostNetwork)" => vec![],
        "native sidecars disabled"
        | "native sidecars disabled cluster-wide; pod annotation opts in"
        | "native sidecars disabled cluster-wide; pod annotation opts out" => {
            vec!["nativeSidecar=false"]
        }
        "global.imagePullPolicy=Always" => vec!["imagePullPolicy=Always"],
        "global.imagePullPolicy=Never" => vec!["imagePullPolicy=Never"],
        "global.proxy.holdApplicationUntilProxyStarts=true" => vec!["proxyPosition=first"],
        "components.cni.enabled=true" => vec!["cni=true"],
        "global.proxy.image=proxyTest" => {
            vec!["proxyImage=registry.istio.io/testing/proxyTest:latest"]
        }
        "components.cni.enabled=true, cni.provider=default, global.network=network1" => {
            vec!["cni=true", "network=network1"]
        }
        "global.proxy_init.image=proxyInitTest" => {
            vec!["proxyInitImage=registry.istio.io/testing/proxyInitTest:latest"]
        }
        "mesh interceptionMode=TPROXY" | "mesh TPROXY" => vec![
            "interceptionMode=TPROXY",
            r#"proxyConfig={"interceptionMode":"TPROXY"}"#,
        ],
        "mesh drainDuration=23s" => vec![r#"proxyConfig={"drainDuration":"23s"}"#],
        "proxy.includeIPRanges, excludeIPRanges, excludeInboundPorts=4,5,6, statusPort=0" => vec![
            "includeOutboundIPRanges=127.0.0.1/24,10.96.0.1/24",
            "excludeOutboundIPRanges=10.96.0.2/24,10.96.0.3/24",
            "excludeInboundPorts=4,5,6",
            "statusPort=0",
        ],
        "proxy.statusPort=123, readinessInitialDelaySeconds=100, readinessPeriodSeconds=200, readinessFailureThreshold=300"
        | "proxy.statusPort=123 + readiness*" => vec![
            "statusPort=123",
            "readinessInitialDelaySeconds=100",
            "readinessPeriodSeconds=200",
            "readinessFailureThreshold=300",
        ],
        "iop global.imagePullSecrets" => vec!["imagePullSecrets=barSecret"],
        "global.mountMtlsCerts=true" => vec!["mountMtlsCerts=true"],
        "mesh proxyMetadata ISTIO_META_TLS_CLIENT_KEY" => vec![
            r#"proxyConfig={"proxyMetadata":{"ISTIO_META_TLS_CLIENT_KEY":"/etc/identity/client/keys/client-key.pem"}}"#,
        ],
        "mesh defaultConfig.tracing={}" => vec![r#"proxyConfig={"tracing":{}}"#],
        "mesh inboundTrafficPolicy LOCALHOST" => vec!["inboundTrafficPolicy=LOCALHOST"],
        "COMPLIANCE_POLICY=fips-140-3" => vec!["compliancePolicy=fips-140-3"],
        "iop resources limits{cpu:null,memory:500Mi} requests{cpu:null,memory:150Mi}" => vec![
            "proxyCPULimit=",
            "proxyMemoryLimit=500Mi",
            "proxyCPURequest=",
            "proxyMemoryRequest=150Mi",
        ],
        "iop resources limits{cpu:0,memory:500Mi} requests{cpu:0,memory:150Mi}" => vec![
            "proxyCPULimit=0",
            "proxyMemoryLimit=500Mi",
            "proxyCPURequest=0",
            "proxyMemoryRequest=150Mi",
        ],
        "cni multus" => vec!["cni=true", "cniProvider=multus"],
        "iop resources limits{cpu:null,memory:500Mi} requests{cpu:100m,memory:null,ephemeral-storage:1Gi}" =>
        {
            vec![
                "proxyCPULimit=",
                "proxyMemoryLimit=500Mi",
                "proxyCPURequest=100m",
                "proxyMemoryRequest=",
                "proxyEphemeralStorageRequest=1Gi",
            ]
        }
        "iop resources limits{cpu:100m,memory:null} requests{cpu:50m,memory:null}" => vec![
            "proxyCPULimit=100m",
            "proxyMemoryLimit=",
            "proxyCPURequest=50m",
            "proxyMemoryRequest=",
        ],
        _ => return None,
    })
}

/// Cases the tool does not reproduce yet, with the parts that differ (the
/// test prints their first differences; MESH_INJECT_GOLDEN_ALL=1 prints
/// them all).
pub const NOT_YET: &[(&str, &str)] = &[
    (
        "only-proxy-container.yaml",
        "istio-proxy is the pod's only container: Istio moves it into the native sidecar and leaves `containers: []`, which the apiserver rejects; the tool leaves the pod alone",
    ),
    (
        "cronjob.yaml",
        "istioctl kube-inject writes the pod's metadata on the jobTemplate, the tool (as the webhook) on the pod template",
    ),
    (
        "cronjob-old-version.yaml",
        "istioctl kube-inject writes the pod's metadata on the jobTemplate, the tool (as the webhook) on the pod template",
    ),
    (
        "gateway.yaml",
        "Istio's gateway template (inject.istio.io/templates: gateway), which the embedded profile does not reproduce: the pod is left alone with that reason (the cluster's own templates render it: istio_cluster_config)",
    ),
    (
        "merge-probers.yaml",
        "a pod an older Istio injected (its proxy a classic container with --concurrency 2, its own readiness probe and pilot-agent wait): Istio's re-injection overlays its template on that proxy and keeps those fields, the tool takes the old injection out whole and injects anew",
    ),
    (
        "gateway-with-default-container.yaml",
        "Istio's gateway template (inject.istio.io/templates: gateway), which the embedded profile does not reproduce: the pod is left alone with that reason (the cluster's own templates render it: istio_cluster_config)",
    ),
    (
        "grpc-agent.yaml",
        "Istio's proxyless gRPC templates (grpc-agent, grpc-simple), which the embedded profile does not reproduce: the pod is left alone with that reason (the cluster's own templates render them: istio_cluster_config)",
    ),
    (
        "grpc-simple.yaml",
        "Istio's proxyless gRPC templates (grpc-agent, grpc-simple), which the embedded profile does not reproduce: the pod is left alone with that reason (the cluster's own templates render them: istio_cluster_config)",
    ),
    (
        "proxy-resources-mixed-null.yaml",
        "a memory limit without its request: the tool writes the request the apiserver defaults from the limit (500Mi), Istio's manifest leaves it to the apiserver; the pod admitted is the same",
    ),
    (
        "hello-multiport-metrics.yaml",
        "Istio takes prometheus.istio.io/scrape-targets off the pod once the agent's env holds the targets; the tool leaves it (Prometheus does not read it), so that uninject gives the pod back byte for byte",
    ),
];

/// The annotations allowed to differ: the tool's own record.
const ALLOWED: &[&str] = &["mesh-inject.io/added"];

/// The documents of `text`, without what Go's serialiser adds or drops
/// without meaning (see `common::without_serialiser_noise`).
fn objects(text: &str) -> Vec<Value> {
    let mut objects = common::golden_objects(text, ALLOWED);
    objects.iter_mut().for_each(without_go_zero_values);
    objects
}

/// `object` (a List's items too) without what Go writes of a typed object
/// that the input did not have: a `status` of zeros (its counters are not
/// `omitempty`), and without what it drops: `spec.minReadySeconds: 0`.
fn without_go_zero_values(object: &mut Value) {
    if let Some(Value::Array(items)) = object.get_mut("items") {
        items.iter_mut().for_each(without_go_zero_values);
    }
    let Some(map) = object.as_object_mut() else {
        return;
    };
    let zeros = |v: &Value| {
        v.as_object()
            .is_some_and(|m| m.values().all(|n| n.as_u64() == Some(0)))
    };
    if map.get("status").is_some_and(zeros) {
        map.shift_remove("status");
    }
    if let Some(Value::Object(spec)) = map.get_mut("spec") {
        if spec.get("minReadySeconds").and_then(Value::as_u64) == Some(0) {
            spec.shift_remove("minReadySeconds");
        }
    }
}

/// A difference's path with list items by position, not name, and without
/// the values: to count which fields differ in how many cases.
fn field_of(difference: &str) -> String {
    let path = difference.split(": ").next().unwrap_or(difference);
    let mut out = String::new();
    let mut in_brackets = false;
    for c in path.chars() {
        match c {
            '[' => {
                in_brackets = true;
                out.push_str("[]");
            }
            ']' => in_brackets = false,
            _ if in_brackets => {}
            _ => out.push(c),
        }
    }
    out
}

/// What running Istio's cases gave: the cases reproduced, those that
/// differ (with their differences), those whose settings could not be
/// given, and what makes the test fail.
#[derive(Default)]
pub struct Outcome {
    pub reproduced: Vec<String>,
    /// Each with the reason it is listed for (`None`: not listed).
    pub differing: Vec<(String, Option<&'static str>, Vec<String>)>,
    pub unsupported: Vec<String>,
    pub failures: Vec<String>,
}

/// Run every case of `CASES.md` with `inject` (the case, its settings and
/// its input file: the tool's output, `None` when the settings cannot be
/// given) and compare each object with Istio's golden. A case of `listed`
/// is expected to differ: one that does not fails, as does one that
/// differs without being listed.
pub fn run_cases(
    fidelity: &Path,
    listed: &[(&str, &'static str)],
    mut inject: impl FnMut(&str, &str, &Path) -> Option<String>,
) -> Outcome {
    let inputs = fidelity.join("../../corpus/istio-inject-inputs");
    let mut outcome = Outcome::default();
    let mut seen: Vec<String> = Vec::new();
    for common::IstioCase {
        input,
        golden,
        settings,
    } in common::istio_cases(fidelity)
    {
        let stem = golden.trim_end_matches(".injected").to_string();
        let case = if seen.contains(&stem) {
            format!("{stem}#2")
        } else {
            stem.clone()
        };
        seen.push(stem);
        // An input missing from the corpus is one of golden/'s extras.
        let input_path = [inputs.join(&input), fidelity.join("golden").join(&input)]
            .into_iter()
            .find(|p| p.is_file())
            .unwrap_or_else(|| panic!("{case}: no input {input}"));
        let Some(output) = inject(&case, &settings, &input_path) else {
            outcome.unsupported.push(format!("{case} ({settings})"));
            continue;
        };
        let golden_text =
            std::fs::read_to_string(fidelity.join("golden").join(&golden)).expect("golden");
        let (got, want) = (objects(&output), objects(&golden_text));
        let found: Vec<String> = if got.len() == want.len() {
            got.iter()
                .zip(&want)
                .flat_map(|(g, w)| common::field_differences(g, w, ""))
                .collect()
        } else {
            vec![format!("{} objects, Istio {}", got.len(), want.len())]
        };
        let reason = listed.iter().find(|(c, _)| *c == case).map(|(_, r)| *r);
        match (found.is_empty(), reason.is_some()) {
            (true, false) => outcome.reproduced.push(case),
            (true, true) => outcome.failures.push(format!(
                "{case} is reproduced now: take it off the list of differing cases (and count it)"
            )),
            (false, is_listed) => {
                if !is_listed {
                    outcome.failures.push(format!(
                        "{case} ({settings}) differs from Istio's golden:\n  {}",
                        found.join("\n  ")
                    ));
                }
                outcome.differing.push((case, reason, found));
            }
        }
    }
    outcome
}

/// Print `outcome` (see [`print_outcome`]), then fail on what makes the
/// test fail, or when too few cases ran.
pub fn check_outcome(outcome: &Outcome, how: &str) {
    print_outcome(outcome, how);
    assert!(
        outcome.failures.is_empty(),
        "{}",
        outcome.failures.join("\n")
    );
    let total = outcome.reproduced.len() + outcome.differing.len();
    assert!(total >= 80, "only {total} cases run");
}

/// Print what `outcome` holds: the cases reproduced, each differing one
/// with its reason and first differences (MESH_INJECT_GOLDEN_ALL=1 prints
/// them all), the fields that differ by the number of cases, and the
/// settings that could not be given.
fn print_outcome(outcome: &Outcome, how: &str) {
    let total = outcome.reproduced.len() + outcome.differing.len();
    eprintln!(
        "reproduced {} of {total} {how}: {}",
        outcome.reproduced.len(),
        outcome.reproduced.join(", ")
    );
    eprintln!("differing {}:", outcome.differing.len());
    for (case, reason, found) in &outcome.differing {
        let reason = reason.unwrap_or("not listed");
        eprintln!("  {case} ({reason}): {} differences", found.len());
        let shown = if std::env::var_os("MESH_INJECT_GOLDEN_ALL").is_some() {
            found.len()
        } else {
            3
        };
        for difference in found.iter().take(shown) {
            eprintln!("    {difference}");
        }
    }
    let mut fields: BTreeMap<String, usize> = BTreeMap::new();
    for (_, _, found) in &outcome.differing {
        let mut once: Vec<String> = found.iter().map(|d| field_of(d)).collect();
        once.sort();
        once.dedup();
        for field in once {
            *fields.entry(field).or_default() += 1;
        }
    }
    let mut fields: Vec<(String, usize)> = fields.into_iter().collect();
    fields.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    eprintln!("fields that differ, by the number of cases:");
    for (field, count) in &fields {
        eprintln!("  {count:3} {field}");
    }
    eprintln!(
        "settings that cannot be given {how} {}: {}",
        outcome.unsupported.len(),
        outcome.unsupported.join(", ")
    );
}

#[test]
fn istio_injection_tests_are_reproduced_field_for_field() {
    let test = "istio_injection_tests_are_reproduced_field_for_field";
    let Some(fidelity) = common::shared("fidelity/istio", test) else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let outcome = run_cases(&fidelity, NOT_YET, |case, settings, input| {
        let values = values(settings)?;
        let mut config = vec!["config", "--profile", "istio"];
        for value in BASE.iter().chain(&values) {
            config.extend(["--set", value]);
        }
        let profile = common::run(&config, None);
        assert_eq!(profile.code, 0, "{case}: {}", profile.stderr);
        let profile_path = dir.path().join(format!("{case}.yaml"));
        std::fs::write(&profile_path, &profile.stdout).expect("write the profile");
        let profile_path = profile_path.to_string_lossy().to_string();
        let input_path = input.to_string_lossy().to_string();
        let args = [
            "-q",
            "--warn-only",
            "--config",
            &profile_path,
            "-f",
            &input_path,
        ];
        let run = common::run(&args, None);
        assert_eq!(run.code, 0, "{case}: {}", run.stderr);
        Some(run.stdout)
    });
    check_outcome(&outcome, "with the embedded profile");
}

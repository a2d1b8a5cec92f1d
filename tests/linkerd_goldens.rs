//! Linkerd's own injection tests, reproduced: every case of
//! `../shared/fidelity/linkerd/CASES.md` that injects, run with the
//! equivalent settings, must give Linkerd's golden object field for field
//! (container order, every env var and its value, args, probes, lifecycle,
//! resources, security context, mounts, volumes, annotations, labels).
//!
//! The only differences allowed are listed in README.md ("Linkerd, field for
//! field"): `linkerd.io/created-by` names this tool, the tool's record
//! annotation, and what Go's serialiser adds or drops without meaning. Cases
//! whose settings the tool does not take yet, and cases it does not match
//! yet, are listed here with the reason; a listed case that starts matching
//! fails the test, so that the lists stay true.

mod common;

use serde_json::Value;

/// The settings of a case, as the tool takes them; `None` when the tool has
/// no equivalent yet.
fn flags(settings: &str) -> Option<Vec<&'static str>> {
    Some(match settings {
        // The version is the profile's, read from the golden (see below).
        "defaults"
        | "Proxy.NativeSidecar=true"
        | "Proxy.Image.Version=override + pod annotations" => vec![],
        "Proxy.Ports.Admin=1234" => vec!["--set", "adminPort=1234"],
        "CNIEnabled=true" => vec!["--set", "cni=true"],
        "Proxy.AccessLog=apache" => vec!["--set", "accessLog=apache"],
        "Proxy.IsIngress=true" => vec!["--set", "ingress=true"],
        "ProxyInit.IgnoreInbound=22,8100-8102 IgnoreOutbound=5432" => vec![
            "--set",
            "skipInboundPorts=22,8100-8102",
            "--set",
            "skipOutboundPorts=5432",
        ],
        "Proxy.OpaquePorts=3000,5000-6000,mysql" => {
            vec!["--set", "opaquePorts=3000,5000-6000,mysql"]
        }
        "Proxy.Resources cpu 110m/160m mem 100Mi/150Mi" => vec![
            "--set",
            "proxyCPURequest=110m",
            "--set",
            "proxyCPULimit=160m",
            "--set",
            "proxyMemoryRequest=100Mi",
            "--set",
            "proxyMemoryLimit=150Mi",
        ],
        _ => return None,
    })
}

/// Cases the tool runs but does not match yet, and why.
const NOT_YET: &[(&str, &str)] = &[
    (
        "gettest_good",
        "a workload with no namespace gets an empty linkerd.io/workload-ns from Linkerd, `default` from the tool",
    ),
    (
        "automount_false",
        "a workload with no namespace gets an empty linkerd.io/workload-ns from Linkerd, `default` from the tool",
    ),
    (
        "pod_with_requests",
        "the test gives the resources as cluster values, which Linkerd does not turn into LINKERD2_PROXY_CORES_MAX; \
         the tool's --set is a workload setting, recorded as config.linkerd.io/proxy-cpu-limit, from which Linkerd does",
    ),
];

/// Cases the tool decides otherwise on purpose: it injects as Linkerd's
/// webhook would, which never sees these workloads, while `linkerd inject
/// --manual` injects anything. Each must be skipped with the reason.
const OUT_OF_THE_WEBHOOKS_SCOPE: &[(&str, &str)] = &[(
    "controller_name",
    "namespace linkerd: linkerd's webhook never injects there",
)];

/// The annotations allowed to differ: `linkerd.io/created-by` names this
/// tool, and the tool's own record.
const ALLOWED: &[&str] = &["mesh-inject.io/added", "linkerd.io/created-by"];

/// The documents of `text`, without what Go's serialiser adds or drops
/// without meaning (see `common::without_serialiser_noise`).
fn objects(text: &str) -> Vec<Value> {
    serde_yaml_ng::Deserializer::from_str(text)
        .map(|document| {
            let value: serde_yaml_ng::Value =
                serde::Deserialize::deserialize(document).expect("valid YAML");
            let mut value = serde_json::to_value(value).expect("JSON");
            common::without_serialiser_noise(&mut value, ALLOWED);
            value
        })
        .filter(|v| !v.is_null())
        .collect()
}

/// The proxy version a golden was rendered with (its test's placeholder).
fn proxy_version(golden: &str) -> String {
    golden
        .lines()
        .find_map(|l| l.trim().strip_prefix("linkerd.io/proxy-version: "))
        .expect("the golden names its proxy version")
        .trim()
        .to_string()
}

#[test]
fn linkerd_injection_tests_are_reproduced_field_for_field() {
    let test = "linkerd_injection_tests_are_reproduced_field_for_field";
    let Some(fidelity) = common::shared("fidelity/linkerd", test) else {
        return;
    };
    let inputs = fidelity.join("../../corpus/linkerd-inject-inputs");
    let anchors = std::fs::read_to_string(fidelity.join("valid-trust-anchors.pem")).expect("pem");
    let set_anchors = format!("trustAnchorsPEM={anchors}");
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut reproduced, mut unsupported, mut not_yet) = (Vec::new(), Vec::new(), Vec::new());
    let mut out_of_scope = Vec::new();
    let mut failures = Vec::new();
    for common::LinkerdCase {
        case,
        input,
        golden,
        settings,
    } in common::linkerd_cases(&fidelity, "inject")
    {
        let Some(flags) = flags(&settings) else {
            unsupported.push(format!("{case} ({settings})"));
            continue;
        };
        let golden_text =
            std::fs::read_to_string(fidelity.join("golden").join(golden)).expect("golden");
        // Linkerd's build version is the profile's, not a setting: it goes
        // into a profile of the test's own.
        let profile = dir.path().join(format!("{case}.yaml"));
        let version = format!("proxyVersion={}", proxy_version(&golden_text));
        let config = common::run(&["config", "--set", &version], None);
        assert_eq!(config.code, 0, "{}", config.stderr);
        std::fs::write(&profile, &config.stdout).expect("write the profile");
        let profile = profile.to_string_lossy().to_string();
        let input = inputs.join(input);
        let input = input.to_string_lossy();
        let mut args = vec![
            "-q",
            "--warn-only",
            "--config",
            &profile,
            "--set",
            &set_anchors,
        ];
        args.extend(flags);
        args.extend(["-f", &input]);
        let run = common::run(&args, None);
        assert_eq!(run.code, 0, "{case}: {}", run.stderr);
        if let Some((_, reason)) = OUT_OF_THE_WEBHOOKS_SCOPE.iter().find(|(c, _)| *c == case) {
            let report = common::run(&args[1..], None).stderr;
            assert!(report.contains(reason), "{case}: {report}");
            out_of_scope.push(case.to_string());
            continue;
        }
        let (got, want) = (objects(&run.stdout), objects(&golden_text));
        let found: Vec<String> = if got.len() == want.len() {
            got.iter()
                .zip(&want)
                .flat_map(|(g, w)| common::field_differences(g, w, ""))
                .collect()
        } else {
            vec![format!("{} objects, Linkerd {}", got.len(), want.len())]
        };
        match NOT_YET.iter().find(|(c, _)| *c == case) {
            Some(_) if found.is_empty() => {
                failures.push(format!("{case} now matches Linkerd: take it off NOT_YET"))
            }
            Some((_, why)) => not_yet.push(format!("{case}: {why}")),
            None if found.is_empty() => reproduced.push(case.to_string()),
            None => failures.push(format!("{case} ({settings}):\n  {}", found.join("\n  "))),
        }
    }
    eprintln!(
        "reproduced {}: {}\nout of the webhook's scope: {}\nnot yet {}: {}\nsettings the tool has no equivalent for yet {}: {}",
        reproduced.len(),
        reproduced.join(", "),
        out_of_scope.join(", "),
        not_yet.len(),
        not_yet.join("; "),
        unsupported.len(),
        unsupported.join(", ")
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        reproduced.len() >= 20,
        "only {} reproduced",
        reproduced.len()
    );
}

//! Linkerd's own injection tests, reproduced: every case of
//! `../shared/fidelity/linkerd/CASES.md` that injects, run with the
//! equivalent settings, must give Linkerd's golden object field for field
//! (container order, every env var and its value, args, probes, lifecycle,
//! resources, security context, mounts, volumes, annotations, labels).
//!
//! The only differences allowed are listed in docs/linkerd.md ("Linkerd, field for
//! field"): `linkerd.io/created-by` names this tool, the tool's record
//! annotation, and what Go's serialiser adds or drops without meaning. Cases
//! whose settings the tool does not take yet, and cases it does not match
//! yet, are listed here with the reason; a listed case that starts matching
//! fails the test, so that the lists stay true.

use crate::common;

use serde_json::Value;

/// The settings of a case, as the tool takes them; `None` when the tool has
/// no equivalent yet.
pub(crate) fn flags(settings: &str) -> Option<Vec<&'static str>> {
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
        "enableDebugSidecar" | "enableDebugSidecar; control-plane component" => {
            vec!["--set", "enableDebugSidecar=true"]
        }
        // Linkerd's test replaces the whole inbound and outbound maps.
        "Proxy.Inbound/Outbound params" => vec![
            "--set",
            r#"proxyInboundParams={"scope": {"proto": {"appleSauce": "valueA", "blueberry": 3.14}}}"#,
            "--set",
            r#"proxyOutboundParams={"scope": {"proto": {"applesauce": "valueA", "blueBerry": true}}}"#,
        ],
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

/// Cases the tool decides otherwise on purpose: it injects as Linkerd's
/// webhook would, which never sees these workloads, while `linkerd inject
/// --manual` injects anything. Each must be skipped with the reason.
const OUT_OF_THE_WEBHOOKS_SCOPE: &[(&str, &str)] = &[
    (
        "controller_name",
        "namespace linkerd: linkerd's webhook never injects there",
    ),
    (
        "tap_deployment_debug",
        "the pod has the label linkerd.io/control-plane-component: one of linkerd's own components",
    ),
];

/// Fields where the tool differs from a golden on purpose, and why (each is
/// listed in docs/linkerd.md too). A difference at the path is allowed; the
/// path must still differ, so that the list stays true.
const DIFFERENT_ON_PURPOSE: &[(&str, &str, &str)] = &[
    (
        "deployment_opaque_ports",
        "/spec/template/spec/initContainers[linkerd-proxy]/env[LINKERD2_PROXY_INBOUND_PORTS_DISABLE_PROTOCOL_DETECTION]/value",
        "`mysql` names no container port of the pod: the proxy cannot parse a name, so Linkerd's \
         webhook drops it from the annotation; the tool drops it from a --set value too",
    ),
    (
        "pod_with_requests",
        "/spec/initContainers[linkerd-proxy]/env",
        "Linkerd's CLI writes the CPU limit as config.linkerd.io/proxy-cpu-limit but sizes the \
         proxy before reading it; its webhook, reading the annotation, adds \
         LINKERD2_PROXY_CORES_MAX, as the tool does",
    ),
    (
        "gettest_good",
        "/spec/template/metadata/labels/linkerd.io/workload-ns",
        "the workload names no namespace: Linkerd's CLI leaves the label empty, its webhook writes \
         the namespace the pod is created in; the tool writes -n's, else `default`, and says so",
    ),
    (
        "automount_false",
        "/spec/template/metadata/labels/linkerd.io/workload-ns",
        "the workload names no namespace (as gettest_good)",
    ),
];

/// The annotations allowed to differ: `linkerd.io/created-by` names this
/// tool, and the tool's own record.
const ALLOWED: &[&str] = &["mesh-inject.io/added", "linkerd.io/created-by"];

/// The documents of `text`, as the comparison reads them.
fn objects(text: &str) -> Vec<Value> {
    common::golden_objects(text, ALLOWED)
}

/// The proxy version a golden was rendered with (its test's placeholder).
pub(crate) fn proxy_version(golden: &str) -> String {
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
    let (mut reproduced, mut unsupported) = (Vec::new(), Vec::new());
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
        // Linkerd's build versions are the profile's, not settings: they go
        // into a profile of the test's own.
        let profile = dir.path().join(format!("{case}.yaml"));
        let version = format!("proxyVersion={}", proxy_version(&golden_text));
        let debug_version = "debugImageVersion=test-inject-debug-version";
        let config = common::run(&["config", "--set", &version, "--set", debug_version], None);
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
        let mut found: Vec<String> = if got.len() == want.len() {
            got.iter()
                .zip(&want)
                .flat_map(|(g, w)| common::field_differences(g, w, ""))
                .collect()
        } else {
            vec![format!("{} objects, Linkerd {}", got.len(), want.len())]
        };
        for (_, path, _) in DIFFERENT_ON_PURPOSE.iter().filter(|(c, _, _)| *c == case) {
            let before = found.len();
            found.retain(|d| !d.starts_with(&format!("{path}:")));
            if found.len() == before {
                failures.push(format!(
                    "{case}: {path} no longer differs: take it off DIFFERENT_ON_PURPOSE"
                ));
            }
        }
        if found.is_empty() {
            reproduced.push(case.to_string());
        } else {
            failures.push(format!("{case} ({settings}):\n  {}", found.join("\n  ")));
        }
    }
    eprintln!(
        "reproduced {}: {}\nout of the webhook's scope: {}\nsettings the tool has no equivalent for yet {}: {}",
        reproduced.len(),
        reproduced.join(", "),
        out_of_scope.join(", "),
        unsupported.len(),
        unsupported.join(", ")
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        reproduced.len() >= 25,
        "only {} reproduced",
        reproduced.len()
    );
}

//! On the meshes' own injection test inputs (in `../shared/corpus`), the
//! decision for each workload matches what those meshes' tests expect:
//! Linkerd's (`cli/cmd/testdata`) with the linkerd profile, Istio's
//! (`pkg/kube/inject/testdata/inject`) with the istio profile.

use crate::common;

/// (file, workload, reason) for every workload the mesh's own tests skip.
const LINKERD_SKIPS: [(&str, &str, &str); 5] = [
    // Deliberate differences from `linkerd inject --manual`, which injects
    // anything: the tool decides as Linkerd's webhook, which never sees the
    // control plane's namespace nor its components.
    (
        "inject_emojivoto_deployment_controller_name.input.yml",
        "deployment/not-controller",
        "namespace linkerd: linkerd's webhook never injects there",
    ),
    (
        "inject_tap_deployment.input.yml",
        "deployment/linkerd-tap",
        "the pod has the label linkerd.io/control-plane-component",
    ),
    (
        "inject_emojivoto_deployment_hostNetwork_true.input.yml",
        "deployment/web",
        "hostNetwork is enabled",
    ),
    (
        "inject_emojivoto_deployment_injectDisabled.input.yml",
        "deployment/web",
        "linkerd.io/inject: disabled",
    ),
    (
        "inject_emojivoto_istio.input.yml",
        "deployment/web",
        "third-party proxy",
    ),
];
const LINKERD_ERRORS: [&str; 1] = ["inject_gettest_deployment.bad.input.yml"];

/// Inputs whose pods Istio's injector refuses (its test expects these
/// errors): the run is rejected (exit 1) with Istio's message, and writes
/// nothing.
const ISTIO_DENIALS: [(&str, &str); 5] = [
    (
        "traffic-annotations-bad-excludeinboundports.yaml",
        "excludeInboundPorts invalid",
    ),
    (
        "traffic-annotations-bad-excludeipranges.yaml",
        "excludeIPRanges invalid",
    ),
    (
        "traffic-annotations-bad-excludeoutboundports.yaml",
        "excludeOutboundPorts invalid",
    ),
    (
        "traffic-annotations-bad-includeinboundports.yaml",
        "includeInboundPorts invalid",
    ),
    (
        "traffic-annotations-bad-includeipranges.yaml",
        "includeIPRanges invalid",
    ),
];

const ISTIO_SKIPS: [(&str, &str, &str); 10] = [
    (
        "hello-host-network.yaml",
        "deployment/hello-host-network",
        "hostNetwork is enabled",
    ),
    (
        "hello-host-network-with-ns.yaml",
        "deployment/hello-host-network",
        "hostNetwork is enabled",
    ),
    (
        "hello-ignore.yaml",
        "deployment/hello",
        "sidecar.istio.io/inject: false",
    ),
    // Istio's other templates than its sidecar are the cluster's
    // configuration to render (--context with its ConfigMaps): the embedded
    // profile leaves such pods alone, and says how to render them.
    // The proxy as the pod's only container: merged into a native sidecar,
    // it would leave the pod no container, which the apiserver refuses.
    (
        "only-proxy-container.yaml",
        "deployment/istio-ingressgateway",
        "container named istio-proxy that was not injected",
    ),
    (
        "gateway.yaml",
        "deployment/istio-ingressgateway",
        "which the embedded profile does not reproduce; give the cluster's istio-sidecar-injector",
    ),
    (
        "gateway-spire.yaml",
        "deployment/istio-ingressgateway",
        "which the embedded profile does not reproduce",
    ),
    (
        "gateway-with-default-container.yaml",
        "deployment/istio-ingressgateway",
        "which the embedded profile does not reproduce",
    ),
    (
        "grpc-agent.yaml",
        "deployment/grpc",
        "asks for Istio's grpc-agent template",
    ),
    (
        "grpc-simple.yaml",
        "deployment/grpc",
        "asks for Istio's grpc-simple template",
    ),
    (
        "sidecar-spire.yaml",
        "deployment/hello",
        "asks for Istio's sidecar,spire template",
    ),
];

fn check(
    folder: &str,
    profile: &str,
    skips: &[(&str, &str, &str)],
    errors: &[&str],
    denials: &[(&str, &str)],
) {
    let Some(corpus) = common::corpus(&format!("corpus_decisions::{folder}")) else {
        return;
    };
    let files = common::manifests_under(&corpus.join(folder));
    let mut injected = 0;
    for path in &files {
        let file = path
            .file_name()
            .expect("name")
            .to_string_lossy()
            .to_string();
        let run = common::run(
            &["--profile", profile, "-f", path.to_str().expect("path")],
            None,
        );
        if errors.contains(&file.as_str()) {
            assert_eq!(run.code, 2, "{file}: expected an error");
            continue;
        }
        if let Some((_, why)) = denials.iter().find(|(f, _)| *f == file) {
            assert_eq!(run.code, 1, "{file}: expected a rejection: {}", run.stderr);
            assert!(run.stdout.is_empty(), "{file}: written although rejected");
            assert!(run.stderr.contains(why), "{file}: {}", run.stderr);
            continue;
        }
        assert_eq!(run.code, 0, "{file}: {}", run.stderr);
        for line in run
            .stderr
            .lines()
            .filter(|l| !l.starts_with(' ') && l.contains('/'))
        {
            let Some((object, verdict)) = line.split_once(' ') else {
                continue;
            };
            let expected = skips.iter().find(|(f, o, _)| *f == file && *o == object);
            match expected {
                Some((_, _, reason)) => assert!(
                    verdict.starts_with("skipped:") && verdict.contains(reason),
                    "{file}: {line}"
                ),
                None if verdict == "skipped: kind is not injectable" => {}
                None => {
                    assert!(
                        verdict == "injected" || verdict.starts_with("unchanged"),
                        "{file}: unexpected {line}"
                    );
                    injected += 1;
                }
            }
        }
        for (f, object, _) in skips.iter().filter(|(f, _, _)| *f == file) {
            assert!(
                run.stderr.contains(&format!("{object} skipped")),
                "{f}: {object} not skipped: {}",
                run.stderr
            );
        }
    }
    assert!(
        injected >= 20,
        "{folder}: only {injected} workloads injected"
    );
}

#[test]
fn linkerd_inputs_decide_like_linkerd() {
    check(
        "linkerd-inject-inputs",
        "linkerd",
        &LINKERD_SKIPS,
        &LINKERD_ERRORS,
        &[],
    );
}

#[test]
fn istio_inputs_decide_like_istio() {
    check(
        "istio-inject-inputs",
        "istio",
        &ISTIO_SKIPS,
        &[],
        &ISTIO_DENIALS,
    );
}

//! The embedded Istio profile injects as Istio's chart does: every manifest
//! of the corpus, and generated workloads carrying, one or a few at a time,
//! every annotation (and label) Istio's sidecar template and injector read,
//! are injected twice: with the embedded profile (`--profile istio`, given
//! the values the chart's defaults correspond to) and with the chart's own
//! ConfigMaps (`make-configmaps.py`, as `--context`). The objects must come
//! out equal, field for field, but for the deliberate differences of
//! [`DIFFERENCES`], each with its reason; a listed difference that no longer
//! occurs fails the test too, so that the list stays true.
//!
//! A few workloads are injected under cluster settings other than the
//! chart's defaults (CNI, Multus, HBONE, metrics merging off, the proxy's
//! resources with ephemeral storage, an OpenTelemetry provider): each
//! setting is given to both sides, the profile's values and the generator's
//! `--set`/`--mesh`.

use crate::common;
use crate::istio_cluster_config::{config_maps, fidelity_for};

use std::collections::BTreeMap;
use std::path::Path;

/// The profile values the chart's defaults correspond to (see
/// `istio_goldens::BASE`): its hub and tag, no image pull policy.
const BASE: &[&str] = &[
    "proxyImage=registry.istio.io/testing/proxyv2:latest",
    "proxyInitImage=registry.istio.io/testing/proxyv2:latest",
    "imagePullPolicy=",
];

/// Cluster settings a generated workload is injected under: its name, the
/// embedded profile's values, and the generator's arguments.
struct Setting {
    name: &'static str,
    embedded: &'static [&'static str],
    generator: &'static [&'static str],
}

const SETTINGS: &[Setting] = &[
    Setting {
        name: "defaults",
        embedded: &[],
        generator: &[],
    },
    Setting {
        name: "cni",
        embedded: &["cni=true"],
        generator: &["--set", "cni.enabled=true"],
    },
    Setting {
        name: "multus",
        embedded: &["cni=true", "cniProvider=multus"],
        generator: &["--set", "cni.enabled=true", "--set", "cni.provider=multus"],
    },
    Setting {
        name: "hbone",
        embedded: &[r#"proxyConfig={"proxyMetadata":{"ISTIO_META_ENABLE_HBONE":"true"}}"#],
        generator: &[
            "--mesh",
            r#"defaultConfig.proxyMetadata={"ISTIO_META_ENABLE_HBONE":"true"}"#,
        ],
    },
    Setting {
        name: "no-merge",
        embedded: &["mergeMetrics=false"],
        generator: &["--mesh", "enablePrometheusMerge=false"],
    },
    Setting {
        name: "ephemeral",
        embedded: &[
            "proxyEphemeralStorageRequest=1Gi",
            "proxyEphemeralStorageLimit=2Gi",
        ],
        generator: &[
            "--set",
            r#"global.proxy.resources={"requests":{"cpu":"100m","memory":"128Mi","ephemeral-storage":"1Gi"},"limits":{"cpu":"2000m","memory":"1024Mi","ephemeral-storage":"2Gi"}}"#,
        ],
    },
    Setting {
        name: "cap-net-bind",
        embedded: &["capNetBindService=true"],
        generator: &["--set", "global.proxy.capNetBindService=true"],
    },
    Setting {
        name: "distroless",
        // The chart writes the variant into the mesh's proxy config too.
        embedded: &[
            "proxyImageType=distroless",
            r#"proxyConfig={"image":{"imageType":"distroless"}}"#,
        ],
        generator: &["--set", "global.variant=distroless"],
    },
    // An OpenShift project (its namespace, as OpenShift annotates it, in
    // context for both) with Istio's CNI.
    Setting {
        name: "openshift",
        embedded: &["cni=true"],
        generator: &["--set", "cni.enabled=true"],
    },
    Setting {
        name: "otel",
        embedded: &["otelServiceAttributes=true"],
        generator: &[
            "--mesh",
            r#"extensionProviders=[{"name":"otel","opentelemetry":{"service":"otel.istio-system.svc.cluster.local","port":4317,"serviceAttributeEnrichment":"OTEL_SEMANTIC_CONVENTIONS"}}]"#,
        ],
    },
];

/// A generated workload: its name, the setting it is injected under, its
/// pod's annotations and labels, and its app container's security context
/// and the pod's own `istio-proxy` (as YAML flow maps, empty for none).
struct Workload {
    name: &'static str,
    setting: &'static str,
    annotations: &'static [(&'static str, &'static str)],
    labels: &'static [(&'static str, &'static str)],
    app_security: &'static str,
    own_proxy: &'static str,
}

const fn annotated(
    name: &'static str,
    annotations: &'static [(&'static str, &'static str)],
) -> Workload {
    Workload {
        name,
        setting: "defaults",
        annotations,
        labels: &[],
        app_security: "",
        own_proxy: "",
    }
}

const fn under(setting: &'static str, mut workload: Workload) -> Workload {
    workload.setting = setting;
    workload
}

const fn labelled(name: &'static str, labels: &'static [(&'static str, &'static str)]) -> Workload {
    Workload {
        name,
        setting: "defaults",
        annotations: &[],
        labels,
        app_security: "",
        own_proxy: "",
    }
}

/// Every annotation Istio's `sidecar` template (and its injector around
/// it) reads, with valid values, one or a few at a time.
const WORKLOADS: &[Workload] = &[
    annotated("plain", &[]),
    annotated("proxy-cpu", &[("sidecar.istio.io/proxyCPU", "200m")]),
    annotated("proxy-memory", &[("sidecar.istio.io/proxyMemory", "256Mi")]),
    annotated(
        "proxy-cpu-limit",
        &[("sidecar.istio.io/proxyCPULimit", "1")],
    ),
    annotated(
        "proxy-memory-limit",
        &[("sidecar.istio.io/proxyMemoryLimit", "512Mi")],
    ),
    annotated(
        "proxy-resources",
        &[
            ("sidecar.istio.io/proxyCPU", "50m"),
            ("sidecar.istio.io/proxyMemory", "64Mi"),
            ("sidecar.istio.io/proxyCPULimit", "500m"),
            ("sidecar.istio.io/proxyMemoryLimit", "256Mi"),
        ],
    ),
    annotated(
        "interception-tproxy",
        &[("sidecar.istio.io/interceptionMode", "TPROXY")],
    ),
    annotated(
        "interception-redirect",
        &[("sidecar.istio.io/interceptionMode", "REDIRECT")],
    ),
    annotated(
        "interception-none",
        &[("sidecar.istio.io/interceptionMode", "NONE")],
    ),
    annotated(
        "interception-none-classic",
        &[
            ("sidecar.istio.io/interceptionMode", "NONE"),
            ("sidecar.istio.io/nativeSidecar", "false"),
        ],
    ),
    annotated(
        "cap-net-bind-service",
        &[("sidecar.istio.io/capNetBindService", "true")],
    ),
    annotated(
        "cap-net-bind-service-tproxy",
        &[
            ("sidecar.istio.io/capNetBindService", "true"),
            ("sidecar.istio.io/interceptionMode", "TPROXY"),
        ],
    ),
    annotated("native-true", &[("sidecar.istio.io/nativeSidecar", "true")]),
    annotated(
        "native-false",
        &[("sidecar.istio.io/nativeSidecar", "false")],
    ),
    annotated(
        "include-ip-ranges",
        &[(
            "traffic.sidecar.istio.io/includeOutboundIPRanges",
            "10.0.0.0/8,172.16.0.0/12",
        )],
    ),
    annotated(
        "exclude-ip-ranges",
        &[(
            "traffic.sidecar.istio.io/excludeOutboundIPRanges",
            "10.96.0.1/32",
        )],
    ),
    annotated(
        "include-inbound-ports",
        &[("traffic.sidecar.istio.io/includeInboundPorts", "8080,9090")],
    ),
    annotated(
        "exclude-inbound-ports",
        &[("traffic.sidecar.istio.io/excludeInboundPorts", "8081,8082")],
    ),
    annotated(
        "include-outbound-ports",
        &[("traffic.sidecar.istio.io/includeOutboundPorts", "443")],
    ),
    annotated(
        "exclude-outbound-ports",
        &[("traffic.sidecar.istio.io/excludeOutboundPorts", "5432,6379")],
    ),
    annotated(
        "kubevirt-interfaces",
        &[("traffic.sidecar.istio.io/kubevirtInterfaces", "net1")],
    ),
    annotated(
        "reroute-virtual-interfaces",
        &[
            ("istio.io/reroute-virtual-interfaces", "net2"),
            ("traffic.sidecar.istio.io/kubevirtInterfaces", "net1"),
        ],
    ),
    annotated(
        "exclude-interfaces",
        &[("traffic.sidecar.istio.io/excludeInterfaces", "eth1")],
    ),
    annotated("status-port", &[("status.sidecar.istio.io/port", "15555")]),
    annotated("status-port-zero", &[("status.sidecar.istio.io/port", "0")]),
    annotated(
        "status-port-with-excluded",
        &[
            ("status.sidecar.istio.io/port", "15555"),
            ("traffic.sidecar.istio.io/excludeInboundPorts", "8081"),
        ],
    ),
    annotated(
        "readiness",
        &[
            ("readiness.status.sidecar.istio.io/initialDelaySeconds", "5"),
            ("readiness.status.sidecar.istio.io/periodSeconds", "7"),
            ("readiness.status.sidecar.istio.io/failureThreshold", "9"),
        ],
    ),
    annotated(
        "proxy-image",
        &[(
            "sidecar.istio.io/proxyImage",
            "registry.example.com/istio/proxyv2:1.2.3",
        )],
    ),
    annotated(
        "proxy-image-type-distroless",
        &[("sidecar.istio.io/proxyImageType", "distroless")],
    ),
    annotated(
        "proxy-image-type-debug",
        &[("sidecar.istio.io/proxyImageType", "debug")],
    ),
    annotated("log-level", &[("sidecar.istio.io/logLevel", "debug")]),
    annotated(
        "component-log-level",
        &[("sidecar.istio.io/componentLogLevel", "misc:info,rbac:debug")],
    ),
    annotated(
        "agent-log-level",
        &[("sidecar.istio.io/agentLogLevel", "default:debug")],
    ),
    annotated(
        "default-container",
        &[
            ("kubectl.kubernetes.io/default-container", "app"),
            ("kubectl.kubernetes.io/default-logs-container", "app"),
        ],
    ),
    annotated(
        "bootstrap-override",
        &[("sidecar.istio.io/bootstrapOverride", "my-bootstrap")],
    ),
    annotated(
        "user-volume",
        &[
            (
                "sidecar.istio.io/userVolume",
                r#"{"extra":{"configMap":{"name":"extra"}}}"#,
            ),
            (
                "sidecar.istio.io/userVolumeMount",
                r#"{"extra":{"mountPath":"/etc/extra","readOnly":true}}"#,
            ),
        ],
    ),
    annotated(
        "proxy-config",
        &[(
            "proxy.istio.io/config",
            r#"{"concurrency":2,"proxyMetadata":{"FOO":"bar"}}"#,
        )],
    ),
    annotated(
        "proxy-config-hold",
        &[(
            "proxy.istio.io/config",
            "holdApplicationUntilProxyStarts: true",
        )],
    ),
    annotated(
        "proxy-config-hbone",
        &[(
            "proxy.istio.io/config",
            r#"{"proxyMetadata":{"ISTIO_META_ENABLE_HBONE":"true"}}"#,
        )],
    ),
    // Istio has no annotation of this name (a pod holds its app through
    // proxy.istio.io/config): neither side reads it.
    annotated(
        "hold-application-not-istios",
        &[
            ("sidecar.istio.io/holdApplicationUntilProxyStarts", "true"),
            ("sidecar.istio.io/nativeSidecar", "false"),
        ],
    ),
    annotated(
        "hold-application",
        &[
            (
                "proxy.istio.io/config",
                r#"{"holdApplicationUntilProxyStarts": true}"#,
            ),
            ("sidecar.istio.io/nativeSidecar", "false"),
        ],
    ),
    annotated(
        "prometheus-scrape-false",
        &[("prometheus.io/scrape", "false")],
    ),
    annotated(
        "prometheus-own",
        &[
            ("prometheus.io/scrape", "true"),
            ("prometheus.io/port", "9090"),
            ("prometheus.io/path", "/metrics"),
        ],
    ),
    annotated(
        "merge-metrics-false",
        &[("prometheus.istio.io/merge-metrics", "false")],
    ),
    annotated(
        "rewrite-probes-false",
        &[("sidecar.istio.io/rewriteAppHTTPProbers", "false")],
    ),
    annotated(
        "wait-before-exit",
        &[("proxy.istio.io/wait-before-exit-seconds", "10")],
    ),
    annotated(
        "multus-networks-alone",
        &[("k8s.v1.cni.cncf.io/networks", "macvlan-conf")],
    ),
    annotated(
        "ambient-bypass",
        &[("ambient.istio.io/bypass-inbound-capture", "true")],
    ),
    annotated(
        "otel-attributes",
        &[(
            "resource.opentelemetry.io/service.namespace",
            "shop-attributes",
        )],
    ),
    annotated(
        "datadog-env",
        &[("apm.datadoghq.com/env", r#"{"DD_ENV":"prod"}"#)],
    ),
    labelled(
        "canonical-labels",
        &[
            ("service.istio.io/canonical-name", "shop-ui"),
            ("service.istio.io/canonical-revision", "v7"),
        ],
    ),
    labelled(
        "k8s-labels",
        &[
            ("app.kubernetes.io/name", "ui"),
            ("app.kubernetes.io/version", "2.0"),
        ],
    ),
    labelled(
        "workload-name-label",
        &[("service.istio.io/workload-name", "ui-workload")],
    ),
    labelled(
        "tls-mode-label",
        &[("security.istio.io/tlsMode", "disabled")],
    ),
    labelled("tunnel-label", &[("networking.istio.io/tunnel", "http")]),
    under(
        "cni",
        annotated(
            "cni-status-port-with-excluded",
            &[
                ("status.sidecar.istio.io/port", "15555"),
                ("traffic.sidecar.istio.io/excludeInboundPorts", "8081"),
            ],
        ),
    ),
    under(
        "cni",
        annotated(
            "cni-capture-annotations",
            &[
                (
                    "traffic.sidecar.istio.io/includeOutboundIPRanges",
                    "10.0.0.0/8",
                ),
                ("traffic.sidecar.istio.io/excludeOutboundPorts", "5432"),
                ("traffic.sidecar.istio.io/includeOutboundPorts", "443"),
                ("traffic.sidecar.istio.io/kubevirtInterfaces", "net1"),
                ("traffic.sidecar.istio.io/excludeInterfaces", "eth1"),
            ],
        ),
    ),
    under("cni", annotated("cni-plain", &[])),
    under("multus", annotated("multus-plain", &[])),
    under(
        "multus",
        annotated(
            "multus-networks",
            &[("k8s.v1.cni.cncf.io/networks", "macvlan-conf")],
        ),
    ),
    under(
        "multus",
        annotated(
            "multus-networks-json",
            &[(
                "k8s.v1.cni.cncf.io/networks",
                r#"[{"name":"macvlan-conf","namespace":"net"}]"#,
            )],
        ),
    ),
    under("hbone", annotated("hbone-plain", &[])),
    under(
        "hbone",
        labelled(
            "hbone-tunnel-label",
            &[("networking.istio.io/tunnel", "none")],
        ),
    ),
    under("no-merge", annotated("no-merge-plain", &[])),
    under("ephemeral", annotated("ephemeral-plain", &[])),
    under("cap-net-bind", annotated("cap-net-bind-plain", &[])),
    under("distroless", annotated("distroless-plain", &[])),
    under(
        "distroless",
        annotated(
            "distroless-debug",
            &[("sidecar.istio.io/proxyImageType", "debug")],
        ),
    ),
    under("otel", annotated("otel-plain", &[])),
    under(
        "otel",
        annotated(
            "otel-with-attributes",
            &[(
                "resource.opentelemetry.io/service.namespace",
                "shop-attributes",
            )],
        ),
    ),
    Workload {
        name: "openshift-own-proxy-user-as-app",
        setting: "openshift",
        annotations: &[],
        labels: &[],
        app_security: "{runAsUser: 1000620000}",
        own_proxy: "{name: istio-proxy, image: auto, securityContext: {runAsUser: 1000620000, runAsGroup: 1000620000}}",
    },
    Workload {
        name: "openshift-own-proxy-user-apart",
        setting: "openshift",
        annotations: &[],
        labels: &[],
        app_security: "{runAsUser: 1000620000}",
        own_proxy: "{name: istio-proxy, image: auto, securityContext: {runAsUser: 1234}}",
    },
    under("openshift", annotated("openshift-plain", &[])),
    Workload {
        name: "own-proxy-user-as-app",
        setting: "defaults",
        annotations: &[],
        labels: &[],
        app_security: "{runAsUser: 1000620000}",
        own_proxy: "{name: istio-proxy, image: auto, securityContext: {runAsUser: 1000620000}}",
    },
    Workload {
        name: "own-proxy-user-apart",
        setting: "defaults",
        annotations: &[],
        labels: &[],
        app_security: "{runAsUser: 1000620000}",
        own_proxy: "{name: istio-proxy, image: auto, securityContext: {runAsUser: 1234}}",
    },
];

/// The differences allowed, each with its reason: the input (a corpus file
/// by its path under the corpus, `gen:NAME` for a generated workload; a
/// trailing `*` for a prefix), the field's path (a prefix of the
/// difference), and why. Those that are "not yet" say what Istio does.
const DIFFERENCES: &[(&str, &str, &str)] = &[
    // Deliberate.
    (
        "istio-inject-inputs/gateway.yaml",
        "/spec/template",
        "Istio's gateway template (inject.istio.io/templates: gateway): the embedded profile renders the sidecar template only and leaves the pod alone, saying why; the chart's ConfigMaps render it",
    ),
    (
        "istio-inject-inputs/gateway-with-default-container.yaml",
        "/spec/template",
        "Istio's gateway template, as for gateway.yaml",
    ),
    (
        "istio-inject-inputs/grpc-agent.yaml",
        "/spec/template",
        "Istio's proxyless gRPC template (grpc-agent): the embedded profile renders the sidecar template only and leaves the pod alone, saying why",
    ),
    (
        "istio-inject-inputs/grpc-simple.yaml",
        "/spec/template",
        "Istio's proxyless gRPC template (grpc-simple), as for grpc-agent.yaml",
    ),
    (
        "istio-inject-inputs/gateway-spire.yaml",
        "",
        "the pod asks for a `spire` template, which the chart's default ConfigMaps do not have (the IstioOperator of Istio's SPIRE cases adds it): with them the run stops (exit 2) naming the template, as istiod refuses the pod; the embedded profile renders its sidecar",
    ),
    (
        "istio-inject-inputs/sidecar-spire.yaml",
        "",
        "the pod asks for the `spire` template, as for gateway-spire.yaml",
    ),
];

/// A generated workload's manifest.
fn manifest(workload: &Workload) -> String {
    let map = |pairs: &[(&str, &str)]| {
        let entries: Vec<String> = pairs
            .iter()
            .map(|(k, v)| format!("{k}: {}", serde_json::to_string(v).expect("JSON")))
            .collect();
        format!("{{{}}}", entries.join(", "))
    };
    let mut labels = vec![("app", "shop")];
    labels.extend(workload.labels.iter().copied());
    let mut text = format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  namespace: shop\nspec:\n  selector:\n    matchLabels: {{app: shop}}\n  template:\n    metadata:\n      labels: {labels}\n      annotations: {annotations}\n    spec:\n      serviceAccountName: shop\n      containers:\n        - name: app\n          image: registry.example.com/shop:1.0\n          ports: [{{containerPort: 8080, name: http}}]\n          readinessProbe: {{httpGet: {{path: /ready, port: 8080}}}}\n",
        name = workload.name,
        labels = map(&labels),
        annotations = map(workload.annotations),
    );
    if !workload.app_security.is_empty() {
        text.push_str(&format!(
            "          securityContext: {}\n",
            workload.app_security
        ));
    }
    if !workload.own_proxy.is_empty() {
        text.push_str(&format!("        - {}\n", workload.own_proxy));
    }
    text
}

/// The objects of a run's output, without the tool's own record.
fn objects(text: &str) -> Vec<serde_json::Value> {
    common::golden_objects(text, &["mesh-inject.io/added"])
}

/// The differences between the two runs' outputs.
fn differences(embedded: &common::Run, rendered: &common::Run) -> Vec<String> {
    let mut found = Vec::new();
    if embedded.code != rendered.code {
        found.push(format!(
            "exit code: embedded {}, rendered {} ({})",
            embedded.code,
            rendered.code,
            rendered.stderr.trim()
        ));
    }
    let (got, want) = (objects(&embedded.stdout), objects(&rendered.stdout));
    if got.len() != want.len() {
        found.push(format!(
            "objects: embedded {}, rendered {}",
            got.len(),
            want.len()
        ));
        return found;
    }
    for (g, w) in got.iter().zip(&want) {
        found.extend(common::field_differences(g, w, "").into_iter().map(|d| {
            d.replace("tool ", "embedded ")
                .replace("mesh ", "rendered ")
        }));
    }
    found
}

/// Whether the entry `(input, field)` of [`DIFFERENCES`] covers `difference`
/// of `case`.
fn covers(input: &str, field: &str, case: &str, difference: &str) -> bool {
    let input_matches = match input.strip_suffix('*') {
        Some(prefix) => case.starts_with(prefix),
        None => case == input,
    };
    input_matches && difference.starts_with(field)
}

/// A profile with `values` over the chart's defaults, written into `dir`.
fn profile(dir: &Path, name: &str, values: &[&str]) -> String {
    let mut config = vec!["config", "--profile", "istio"];
    for value in BASE.iter().chain(values) {
        config.extend(["--set", value]);
    }
    let run = common::run_as_given(&config, None);
    assert_eq!(run.code, 0, "{name}: {}", run.stderr);
    let path = dir.join(format!("profile-{name}.yaml"));
    std::fs::write(&path, &run.stdout).expect("write the profile");
    path.to_string_lossy().to_string()
}

#[test]
fn the_embedded_profile_injects_as_the_charts_own_templates() {
    let test = "the_embedded_profile_injects_as_the_charts_own_templates";
    let Some(fidelity) = fidelity_for(test) else {
        return;
    };
    let Some(corpus) = common::corpus(test) else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let mut made = BTreeMap::new();
    // Each setting's profile and ConfigMaps.
    let mut sides: BTreeMap<&str, (String, String)> = BTreeMap::new();
    for setting in SETTINGS {
        let embedded = profile(dir.path(), setting.name, setting.embedded);
        let context = config_maps(&fidelity, dir.path(), setting.generator, &mut made);
        sides.insert(
            setting.name,
            (embedded, context.to_string_lossy().to_string()),
        );
    }
    let project = dir.path().join("openshift-project.yaml");
    std::fs::write(
        &project,
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  annotations:\n    openshift.io/sa.scc.uid-range: 1000620000/10000\n    openshift.io/sa.scc.supplemental-groups: 1000620000/10000\n",
    )
    .expect("write the namespace");
    let project = project.to_string_lossy().to_string();
    let inject = |setting: &str, path: &str| {
        let (embedded, context) = &sides[setting];
        let mut flags = vec!["-q", "--warn-only", "-f", path];
        if setting == "openshift" {
            flags.extend(["--context", project.as_str()]);
        }
        let mut with_profile = vec!["--config", embedded.as_str()];
        with_profile.extend(&flags);
        let mut with_context = vec!["--profile", "istio", "--context", context.as_str()];
        with_context.extend(&flags);
        (
            common::run_as_given(&with_profile, None),
            common::run_as_given(&with_context, None),
        )
    };
    let mut inputs: Vec<(String, &str, String)> = Vec::new();
    for path in common::manifests_under(&corpus) {
        let case = path
            .strip_prefix(&corpus)
            .expect("under the corpus")
            .display()
            .to_string();
        inputs.push((case, "defaults", path.to_string_lossy().to_string()));
    }
    for workload in WORKLOADS {
        assert!(
            SETTINGS.iter().any(|s| s.name == workload.setting),
            "{}: no setting {}",
            workload.name,
            workload.setting
        );
        let path = dir.path().join(format!("{}.yaml", workload.name));
        std::fs::write(&path, manifest(workload)).expect("write the workload");
        inputs.push((
            format!("gen:{}", workload.name),
            workload.setting,
            path.to_string_lossy().to_string(),
        ));
    }
    let mut unlisted = Vec::new();
    let mut used = vec![false; DIFFERENCES.len()];
    let mut injected = 0;
    for (case, setting, path) in &inputs {
        let (embedded, rendered) = inject(setting, path);
        if rendered.stdout.contains("sidecar.istio.io/status") {
            injected += 1;
        }
        for difference in differences(&embedded, &rendered) {
            let listed = DIFFERENCES
                .iter()
                .position(|(input, field, _)| covers(input, field, case, &difference));
            match listed {
                Some(i) => used[i] = true,
                None => unlisted.push(format!(
                    "{case} ({setting}): {}",
                    difference.split(": ").next().unwrap_or(&difference)
                )),
            }
            let shown: String = difference.chars().take(300).collect();
            eprintln!(
                "{case} ({setting}): {shown}{}",
                if listed.is_some() { " [listed]" } else { "" }
            );
        }
    }
    let stale: Vec<String> = DIFFERENCES
        .iter()
        .zip(&used)
        .filter(|(_, used)| !**used)
        .map(|((input, field, _), _)| format!("{input} {field}"))
        .collect();
    eprintln!(
        "{} inputs, {injected} injected with the chart's templates; {} differences not listed, {} listed that no longer occur",
        inputs.len(),
        unlisted.len(),
        stale.len()
    );
    assert!(injected >= 100, "only {injected} inputs injected");
    assert!(
        unlisted.is_empty(),
        "differences not listed:\n  {}",
        unlisted.join("\n  ")
    );
    assert!(
        stale.is_empty(),
        "listed differences that no longer occur (take them off):\n  {}",
        stale.join("\n  ")
    );
}

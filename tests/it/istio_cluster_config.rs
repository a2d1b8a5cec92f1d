//! Injecting with the cluster's own Istio configuration: the
//! `istio-sidecar-injector` and `istio` ConfigMaps that
//! `../shared/fidelity/istio/make-configmaps.py` writes from Istio's chart
//! (its templates and defaults, with a case's `--set`/`--mesh` settings),
//! given with `--context`. Every case of `CASES.md` whose settings the
//! generator expresses comes out as Istio's golden, field for field; a
//! template of the user's own is rendered as written; a broken one stops
//! the run (exit 2) naming the template and its line, writing nothing.

use crate::common;
use crate::istio_goldens::{print_outcome, run_cases};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The generator's arguments (and the tool's own flags) for a case's
/// settings; `None` for settings the ConfigMaps cannot express.
fn settings_args(settings: &str) -> Option<(Vec<&'static str>, Vec<&'static str>)> {
    let set = |pairs: &[&'static str]| pairs.iter().flat_map(|p| ["--set", *p]).collect();
    let mesh = |pairs: &[&'static str]| pairs.iter().flat_map(|p| ["--mesh", *p]).collect();
    Some(match settings {
        "defaults" | "defaults (expect skip: hostNetwork)" => (vec![], vec![]),
        "native sidecars disabled"
        | "native sidecars disabled cluster-wide; pod annotation opts in"
        | "native sidecars disabled cluster-wide; pod annotation opts out" => {
            (set(&["env.ENABLE_NATIVE_SIDECARS=false"]), vec![])
        }
        "global.imagePullPolicy=Always" => (set(&["global.imagePullPolicy=Always"]), vec![]),
        "global.imagePullPolicy=Never" => (set(&["global.imagePullPolicy=Never"]), vec![]),
        "global.proxy.holdApplicationUntilProxyStarts=true" => (
            set(&["global.proxy.holdApplicationUntilProxyStarts=true"]),
            vec![],
        ),
        "components.cni.enabled=true" => (set(&["cni.enabled=true"]), vec![]),
        "components.cni.enabled=true, cni.provider=default, global.network=network1" => (
            set(&[
                "cni.enabled=true",
                "cni.provider=default",
                "global.network=network1",
            ]),
            vec![],
        ),
        "global.proxy.image=proxyTest" => (set(&["global.proxy.image=proxyTest"]), vec![]),
        "global.proxy_init.image=proxyInitTest" => {
            (set(&["global.proxy_init.image=proxyInitTest"]), vec![])
        }
        "mesh interceptionMode=TPROXY" | "mesh TPROXY" => {
            (mesh(&["defaultConfig.interceptionMode=TPROXY"]), vec![])
        }
        "mesh drainDuration=23s" => (mesh(&["defaultConfig.drainDuration=23s"]), vec![]),
        "proxy.includeIPRanges, excludeIPRanges, excludeInboundPorts=4,5,6, statusPort=0" => (
            set(&[
                "global.proxy.includeIPRanges=127.0.0.1/24,10.96.0.1/24",
                "global.proxy.excludeIPRanges=10.96.0.2/24,10.96.0.3/24",
                "global.proxy.excludeInboundPorts=4,5,6",
                "global.proxy.statusPort=0",
            ]),
            vec![],
        ),
        "proxy.statusPort=123, readinessInitialDelaySeconds=100, readinessPeriodSeconds=200, readinessFailureThreshold=300"
        | "proxy.statusPort=123 + readiness*" => (
            set(&[
                "global.proxy.statusPort=123",
                "global.proxy.readinessInitialDelaySeconds=100",
                "global.proxy.readinessPeriodSeconds=200",
                "global.proxy.readinessFailureThreshold=300",
            ]),
            vec![],
        ),
        "iop global.imagePullSecrets" => {
            (set(&[r#"global.imagePullSecrets=["barSecret"]"#]), vec![])
        }
        "global.mountMtlsCerts=true" => (set(&["global.mountMtlsCerts=true"]), vec![]),
        "mesh proxyMetadata ISTIO_META_TLS_CLIENT_KEY" => (
            mesh(&[
                r#"defaultConfig.proxyMetadata={"ISTIO_META_TLS_CLIENT_KEY":"/etc/identity/client/keys/client-key.pem"}"#,
            ]),
            vec![],
        ),
        "mesh defaultConfig.tracing={}" => (mesh(&["defaultConfig.tracing={}"]), vec![]),
        "mesh inboundTrafficPolicy LOCALHOST" => (
            mesh(&[r#"inboundTrafficPolicy={"mode":"LOCALHOST"}"#]),
            vec![],
        ),
        // istiod's own environment, not its ConfigMaps: the tool's flag.
        "COMPLIANCE_POLICY=fips-140-3" => (vec![], vec!["--set", "compliancePolicy=fips-140-3"]),
        "iop resources limits{cpu:null,memory:500Mi} requests{cpu:null,memory:150Mi}" => (
            set(&[
                r#"global.proxy.resources={"limits":{"cpu":null,"memory":"500Mi"},"requests":{"cpu":null,"memory":"150Mi"}}"#,
            ]),
            vec![],
        ),
        "iop resources limits{cpu:0,memory:500Mi} requests{cpu:0,memory:150Mi}" => (
            set(&[
                r#"global.proxy.resources={"limits":{"cpu":0,"memory":"500Mi"},"requests":{"cpu":0,"memory":"150Mi"}}"#,
            ]),
            vec![],
        ),
        "iop resources limits{cpu:100m,memory:null} requests{cpu:50m,memory:null}" => (
            set(&[
                r#"global.proxy.resources={"limits":{"cpu":"100m","memory":null},"requests":{"cpu":"50m","memory":null}}"#,
            ]),
            vec![],
        ),
        _ => return None,
    })
}

/// Cases that differ from Istio's golden with the cluster's templates as
/// with the embedded profile, for the reasons `istio_goldens::NOT_YET`
/// gives (what Istio's injector does there is a choice the tool does not
/// follow, not a template's doing).
const SAME_AS_EMBEDDED: [&str; 5] = [
    "only-proxy-container.yaml",
    "cronjob.yaml",
    "cronjob-old-version.yaml",
    "merge-probers.yaml",
    "hello-multiport-metrics.yaml",
];

/// Whether the generator can run here: python3 with PyYAML.
fn generator_runs(test: &str) -> bool {
    let probe = std::process::Command::new("python3")
        .args(["-c", "import yaml"])
        .output();
    if probe.is_ok_and(|out| out.status.success()) {
        return true;
    }
    common::skip_test(
        test,
        "python3 with PyYAML is not installed (make-configmaps.py needs it)",
    );
    false
}

/// The ConfigMaps for `args`, written once into `dir`.
fn config_maps(
    fidelity: &Path,
    dir: &Path,
    args: &[&str],
    made: &mut BTreeMap<String, PathBuf>,
) -> PathBuf {
    let key = args.join(" ");
    if let Some(path) = made.get(&key) {
        return path.clone();
    }
    let path = dir.join(format!("config-maps-{}.yaml", made.len()));
    let out = std::process::Command::new("python3")
        .arg(fidelity.join("make-configmaps.py"))
        .arg(&path)
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "make-configmaps.py {key}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    made.insert(key, path.clone());
    path
}

#[test]
fn the_clusters_own_templates_reproduce_istios_goldens() {
    let test = "the_clusters_own_templates_reproduce_istios_goldens";
    let Some(fidelity) = common::shared("fidelity/istio", test) else {
        return;
    };
    if !generator_runs(test) {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let mut made = BTreeMap::new();
    let outcome = run_cases(&fidelity, &SAME_AS_EMBEDDED, |case, settings, input| {
        let (generator, flags) = settings_args(settings)?;
        let context = config_maps(&fidelity, dir.path(), &generator, &mut made);
        let (context, input) = (
            context.to_string_lossy().to_string(),
            input.to_string_lossy().to_string(),
        );
        let mut args = vec![
            "-q",
            "--warn-only",
            "--profile",
            "istio",
            "--context",
            &context,
        ];
        args.extend(&flags);
        args.extend(["-f", &input]);
        let run = common::run_as_given(&args, None);
        assert_eq!(run.code, 0, "{case}: {}", run.stderr);
        Some(run.stdout)
    });
    print_outcome(&outcome, "with the cluster's templates");
    assert!(
        outcome.failures.is_empty(),
        "{}",
        outcome.failures.join("\n")
    );
    let total = outcome.reproduced.len() + outcome.differing.len();
    assert!(total >= 80, "only {total} cases run");
}

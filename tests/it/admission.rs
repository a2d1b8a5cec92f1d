//! What the cluster would say: injected workloads checked against the
//! namespace's policies, with the apiserver's own messages, run as a user
//! runs the tool (`--context` files, `--kube-version`, `--warn-only`).

use crate::common;

use serde_json::Value;

/// A Deployment `web` in namespace `shop` whose one container is `container` (YAML flow).
fn deployment(container: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  template:\n    metadata:\n      labels: {{app: web}}\n    spec:\n      containers:\n      - {container}\n"
    )
}

const APP: &str = "{name: web, image: nginx:1.27}";
const SIZED_APP: &str = "{name: web, image: nginx:1.27, resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: 500m, memory: 256Mi}}}";

/// Inject `manifest` with `policies` as `--context`, plus `args`; the files
/// sit in a temporary directory that is the working directory.
fn inject(manifest: &str, policies: &str, args: &[&str]) -> common::Run {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("deploy.yaml"), manifest).expect("write");
    std::fs::write(dir.path().join("policies.yaml"), policies).expect("write");
    let mut all = vec!["-f", "deploy.yaml", "--context", "policies.yaml"];
    all.extend_from_slice(args);
    let mut cmd = common::command_with(&all);
    cmd.current_dir(dir.path()).write_stdin(Vec::new());
    cmd.output().expect("runs").into()
}

/// The verdict lines the report gives under the object (rejections and the
/// apiserver's warnings), without the injection's own notes.
fn verdicts(run: &common::Run) -> Vec<String> {
    verdicts_of(&inject_report(run)["inputs"][0]["objects"][0])
}

/// The verdict lines of one object of the JSON report.
fn verdicts_of(object: &Value) -> Vec<String> {
    object["verdicts"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|v| {
                    format!(
                        "{}: {}",
                        v["severity"].as_str().unwrap_or_default(),
                        v["message"].as_str().unwrap_or_default()
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn inject_report(run: &common::Run) -> Value {
    let start = run.stderr.find('{').expect("a JSON report");
    let end = run.stderr.rfind('}').expect("a JSON report");
    serde_json::from_str(&run.stderr[start..=end]).expect("the report is JSON")
}

/// Run with the JSON report and return the verdicts.
fn check(manifest: &str, policies: &str, args: &[&str]) -> Vec<String> {
    let mut all = vec!["--report", "json", "--warn-only"];
    all.extend_from_slice(args);
    let run = inject(manifest, policies, &all);
    assert_eq!(run.code, 0, "{}", run.stderr);
    verdicts(&run)
}

const QUOTA: &str = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: mem, namespace: shop}\nspec:\n  hard: {limits.memory: 8Gi, requests.cpu: \"4\"}\n";

/// A quota the app fits in alone and not with its proxy: a rejection the injection causes.
const SMALL_QUOTA: &str = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: small, namespace: shop}\nspec:\n  hard: {limits.memory: 300Mi}\n";

#[test]
fn a_rejection_fails_the_run_and_writes_nothing() {
    let run = inject(&deployment(SIZED_APP), SMALL_QUOTA, &[]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "", "nothing for kubectl apply to apply");
    assert!(
        run.stderr.contains(
            "error: the cluster would reject what this writes; nothing was written (--warn-only writes it anyway):\n  deploy.yaml: deployment/web: pods \"web-\" is forbidden: exceeded quota: small, requested: limits.memory=506Mi, used: limits.memory=0, limited: limits.memory=300Mi\n"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("\n  rejected: pods \"web-\" is forbidden: exceeded quota: small,")
    );

    // --warn-only: the same, as a warning, and the output is written.
    let run = inject(&deployment(SIZED_APP), SMALL_QUOTA, &["--warn-only"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("name: linkerd-proxy"));
    assert!(run.stderr.contains("\n  warning: would be rejected: pods \"web-\" is forbidden: exceeded quota: small, requested: limits.memory=506Mi, used: limits.memory=0, limited: limits.memory=300Mi\n"), "{}", run.stderr);

    // In place: no file is touched.
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("deploy.yaml");
    std::fs::write(&path, deployment(SIZED_APP)).expect("write");
    std::fs::write(dir.path().join("policies.yaml"), SMALL_QUOTA).expect("write");
    let mut cmd = common::command_with(&[
        "-f",
        "deploy.yaml",
        "--context",
        "policies.yaml",
        "--in-place",
    ]);
    cmd.current_dir(dir.path());
    let run: common::Run = cmd.output().expect("runs").into();
    assert_eq!(run.code, 1);
    assert_eq!(
        std::fs::read_to_string(&path).expect("read"),
        deployment(SIZED_APP)
    );

    // The app that sets no resources is refused by the quota's "must
    // specify" before injection too: reported, and written.
    let run = inject(&deployment(APP), QUOTA, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("name: linkerd-proxy"));
    assert!(run.stderr.contains("\n  warning: rejected before injection too: pods \"web-\" is forbidden: failed quota: mem: must specify limits.memory for: web; requests.cpu for: web\n"), "{}", run.stderr);
}

#[test]
fn quota_must_specify_counts_the_injected_containers() {
    // The proxy and its init container get what the quota tracks; the app sets it itself.
    for version in ["1.14", "1.29", "1.33"] {
        assert_eq!(
            check(&deployment(SIZED_APP), QUOTA, &["--kube-version", version]),
            Vec::<String>::new(),
            "{version}"
        );
    }
    // A quota scoped to Terminating pods does not apply to a Deployment's.
    let scoped = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: jobs, namespace: shop}\nspec:\n  hard: {limits.memory: 1Gi}\n  scopes: [Terminating]\n";
    assert!(check(&deployment(APP), scoped, &[]).is_empty());
    // A quota the pod does not fit in.
    let small = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: small, namespace: shop}\nspec:\n  hard: {limits.memory: 300Mi}\n";
    assert_eq!(
        check(&deployment(SIZED_APP), small, &[]),
        [
            "rejection: pods \"web-\" is forbidden: exceeded quota: small, requested: limits.memory=506Mi, used: limits.memory=0, limited: limits.memory=300Mi"
        ]
    );
}

#[test]
fn limit_range_container_min_max_and_ratio() {
    let max = "apiVersion: v1\nkind: LimitRange\nmetadata: {name: limits, namespace: shop}\nspec:\n  limits:\n  - type: Container\n    max: {memory: 1Gi}\n    min: {cpu: 50m}\n";
    // The injected containers get the LimitRange's defaults (default = max, request = min).
    assert!(check(&deployment(SIZED_APP), max, &[]).is_empty());
    let big =
        "{name: web, image: nginx:1.27, resources: {requests: {cpu: 10m}, limits: {memory: 2Gi}}}";
    assert_eq!(
        check(&deployment(big), max, &[]),
        [
            "rejection: pods \"web-\" is forbidden: [minimum cpu usage per Container is 50m, but request is 10m, maximum memory usage per Container is 1Gi, but limit is 2Gi]"
        ]
    );
    let ratio = "apiVersion: v1\nkind: LimitRange\nmetadata: {name: ratio, namespace: shop}\nspec:\n  limits:\n  - type: Container\n    default: {memory: 256Mi}\n    defaultRequest: {memory: 128Mi}\n    maxLimitRequestRatio: {memory: \"4\"}\n";
    assert!(check(&deployment(APP), ratio, &[]).is_empty());
    // The proxy's own resources are brought within the ratio, and the report says so.
    let args = [
        "--set",
        "proxyMemoryLimit=1Gi",
        "--set",
        "proxyMemoryRequest=64Mi",
    ];
    assert!(check(&deployment(APP), ratio, &args).is_empty());
    let run = inject(&deployment(APP), ratio, &args);
    assert!(
        run.stderr.contains("  linkerd-proxy: requests.memory raised from 64Mi to 256Mi, within the LimitRange's limit/request ratio of 4\n"),
        "{}",
        run.stderr
    );
    // The app's own are its own: the cluster's verdict.
    let wide = "{name: web, image: nginx:1.27, resources: {requests: {memory: 64Mi}, limits: {memory: 1Gi}}}";
    assert_eq!(
        check(&deployment(wide), ratio, &[]),
        [
            "rejection: pods \"web-\" is forbidden: memory max limit to request ratio per Container is 4, but provided ratio is 16.000000"
        ]
    );
}

#[test]
fn limit_range_pod_totals_count_sidecars_from_1_28() {
    let pod_max = "apiVersion: v1\nkind: LimitRange\nmetadata: {name: pod, namespace: shop}\nspec:\n  limits:\n  - type: Pod\n    max: {memory: 1Gi}\n";
    let app = "{name: web, image: nginx:1.27, resources: {limits: {memory: 768Mi}}}";
    // The proxy sets no memory limit: from 1.28 the pod total is what is set (768Mi);
    // before, a limit not set by every app container left the total without one.
    assert!(check(&deployment(app), pod_max, &["--kube-version", "1.29"]).is_empty());
    assert_eq!(
        check(&deployment(app), pod_max, &["--kube-version", "1.24"]),
        [
            "rejection: pods \"web-\" is forbidden: maximum memory usage per Pod is 1Gi.  No limit is specified"
        ]
    );
    // A native proxy's limit is added to the app's.
    assert_eq!(
        check(
            &deployment(app),
            pod_max,
            &["--kube-version", "1.33", "--set", "proxyMemoryLimit=512Mi"]
        ),
        [
            "rejection: pods \"web-\" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 1280Mi"
        ]
    );
}

#[test]
fn native_sidecars_before_1_29_are_dropped_and_invalid() {
    let policies = "";
    assert!(
        check(
            &deployment(APP),
            policies,
            &["--kube-version", "1.29", "--native-sidecar", "always"]
        )
        .is_empty()
    );
    let at_1_28 = check(
        &deployment(APP),
        policies,
        &["--kube-version", "1.28", "--native-sidecar", "always"],
    );
    assert_eq!(
        at_1_28.first().map(String::as_str),
        Some(
            "warning: spec.template.spec.initContainers[1].restartPolicy is dropped by the apiserver (the SidecarContainers feature gate is off by default in 1.28): init container linkerd-proxy must exit before the app containers start"
        )
    );
    assert_eq!(
        at_1_28.last().map(String::as_str),
        Some(
            "rejection: Deployment.apps \"web\" is invalid: [spec.template.spec.initContainers[1].livenessProbe: Forbidden: may not be set for init containers without restartPolicy=Always, spec.template.spec.initContainers[1].readinessProbe: Forbidden: may not be set for init containers without restartPolicy=Always, spec.template.spec.initContainers[1].startupProbe: Forbidden: may not be set for init containers without restartPolicy=Always]"
        )
    );
    let at_1_14 = check(
        &deployment(APP),
        policies,
        &["--kube-version", "1.14", "--native-sidecar", "always"],
    );
    assert!(
        at_1_14.first().is_some_and(|w| w.starts_with(
            "warning: unknown field \"spec.template.spec.initContainers[1].restartPolicy\""
        )),
        "{at_1_14:?}"
    );
    assert!(
        at_1_14.last().is_some_and(|w| w.contains("[spec.template.spec.initContainers[1].livenessProbe: Invalid value: core.Probe{...}: must not be set for init containers, spec.template.spec.initContainers[1].readinessProbe: Invalid value: core.Probe{...}: must not be set for init containers]")),
        "{at_1_14:?}"
    );
}

#[test]
fn sleep_hooks_must_fit_the_grace_period() {
    let app = "{name: web, image: nginx:1.27, lifecycle: {preStop: {sleep: {seconds: 40}}}}";
    assert_eq!(
        check(&deployment(app), "", &["--kube-version", "1.30"]),
        [
            "rejection: Deployment.apps \"web\" is invalid: spec.template.spec.containers[0].lifecycle.preStop.sleep: Invalid value: 40: must be greater than 0 and less than terminationGracePeriodSeconds (30)"
        ]
    );
    assert_eq!(
        check(&deployment(app), "", &["--kube-version", "1.33"]),
        [
            "rejection: Deployment.apps \"web\" is invalid: spec.template.spec.containers[0].lifecycle.preStop.sleep: Invalid value: 40: must be non-negative and less than terminationGracePeriodSeconds (30)"
        ]
    );
    let fits = "{name: web, image: nginx:1.27, lifecycle: {preStop: {sleep: {seconds: 20}}}}";
    assert!(check(&deployment(fits), "", &["--kube-version", "1.33"]).is_empty());
    // 1.32 has the gate that allows zero, off: its message says so.
    let zero = "{name: web, image: nginx:1.27, lifecycle: {preStop: {sleep: {seconds: 0}}}}";
    for (version, manifest, value) in [("1.32", app, 40), ("1.32", zero, 0)] {
        assert_eq!(
            check(&deployment(manifest), "", &["--kube-version", version]),
            [format!(
                "rejection: Deployment.apps \"web\" is invalid: spec.template.spec.containers[0].lifecycle.preStop.sleep: Invalid value: {value}: must be greater than 0 and less than terminationGracePeriodSeconds (30). Enable AllowPodLifecycleSleepActionZeroValue feature gate for zero sleep."
            )]
        );
    }
    assert_eq!(
        check(&deployment(zero), "", &["--kube-version", "1.31"]),
        [
            "rejection: Deployment.apps \"web\" is invalid: spec.template.spec.containers[0].lifecycle.preStop.sleep: Invalid value: 0: must be greater than 0 and less than terminationGracePeriodSeconds (30)"
        ]
    );
    assert!(check(&deployment(zero), "", &["--kube-version", "1.33"]).is_empty());
}

#[test]
fn ports_the_proxy_shares_are_warned_about() {
    let app = "{name: web, image: nginx:1.27, ports: [{containerPort: 4191}]}";
    assert_eq!(
        check(&deployment(app), "", &[]),
        [
            "warning: spec.template.spec.containers[0].ports[0]: duplicate port definition with spec.template.spec.initContainers[1].ports[1]"
        ]
    );
}

/// A namespace with every policy: Pod Security `restricted` (enforce, warn
/// and audit), a LimitRange with defaults, min, max, ratio and a Pod item, a
/// ResourceQuota on every compute resource, and (up to 1.24) a restrictive
/// PodSecurityPolicy that allows the volumes a mesh needs.
const GUARDED_NAMESPACE: &str = r#"apiVersion: v1
kind: Namespace
metadata:
  name: shop
  labels:
    pod-security.kubernetes.io/enforce: restricted
    pod-security.kubernetes.io/warn: restricted
    pod-security.kubernetes.io/audit: restricted
---
apiVersion: v1
kind: LimitRange
metadata: {name: limits, namespace: shop}
spec:
  limits:
  - type: Container
    default: {cpu: 500m, memory: 256Mi}
    defaultRequest: {cpu: 50m, memory: 64Mi}
    max: {memory: 1Gi}
    min: {cpu: 10m}
    maxLimitRequestRatio: {memory: "8"}
  - type: Pod
    max: {memory: 2Gi}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: compute, namespace: shop}
spec:
  hard: {requests.cpu: "8", requests.memory: 8Gi, limits.cpu: "16", limits.memory: 16Gi, pods: "50"}
---
apiVersion: policy/v1beta1
kind: PodSecurityPolicy
metadata:
  name: meshed
  annotations:
    seccomp.security.alpha.kubernetes.io/allowedProfileNames: runtime/default
    seccomp.security.alpha.kubernetes.io/defaultProfileName: runtime/default
spec:
  privileged: false
  allowPrivilegeEscalation: false
  requiredDropCapabilities: [ALL]
  runAsUser: {rule: MustRunAsNonRoot}
  seLinux: {rule: RunAsAny}
  supplementalGroups: {rule: RunAsAny}
  fsGroup: {rule: RunAsAny}
  volumes: [configMap, emptyDir, projected, secret, downwardAPI, persistentVolumeClaim]
"#;

/// An app that meets `restricted` itself.
const RESTRICTED_APP: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  template:
    metadata:
      labels: {app: web}
    spec:
      securityContext:
        runAsNonRoot: true
        runAsUser: 1000
        seccompProfile: {type: RuntimeDefault}
      containers:
      - name: web
        image: nginx:1.27
        resources:
          requests: {cpu: 100m, memory: 128Mi}
          limits: {cpu: 500m, memory: 512Mi}
        securityContext:
          allowPrivilegeEscalation: false
          capabilities: {drop: [ALL]}
"#;

/// A namespace of an older cluster: PodSecurityPolicy only, allowing the
/// iptables init containers' capabilities and root user.
const LEGACY_NAMESPACE: &str = r#"apiVersion: v1
kind: LimitRange
metadata: {name: limits, namespace: shop}
spec:
  limits:
  - type: Container
    default: {cpu: 500m, memory: 256Mi}
    max: {memory: 1Gi}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: compute, namespace: shop}
spec:
  hard: {requests.memory: 8Gi, limits.memory: 16Gi}
---
apiVersion: policy/v1beta1
kind: PodSecurityPolicy
metadata:
  name: meshed
  annotations: {seccomp.security.alpha.kubernetes.io/allowedProfileNames: '*'}
spec:
  privileged: false
  allowedCapabilities: [NET_ADMIN, NET_RAW]
  requiredDropCapabilities: [NET_RAW]
  runAsUser: {rule: RunAsAny}
  seLinux: {rule: RunAsAny}
  supplementalGroups: {rule: RunAsAny}
  fsGroup: {rule: RunAsAny}
  volumes: ['*']
"#;

#[test]
fn the_injection_meets_every_policy_it_can() {
    let mut checked = 0;
    for version in ["1.24", "1.29", "1.33", "1.37"] {
        for profile in ["linkerd", "istio"] {
            for native in ["auto", "never"] {
                let args = [
                    "--kube-version",
                    version,
                    "--profile",
                    profile,
                    "--native-sidecar",
                    native,
                    "--set",
                    "cni=true",
                ];
                let run = inject(RESTRICTED_APP, GUARDED_NAMESPACE, &args);
                assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
                assert!(!run.stderr.contains("rejected"), "{args:?}: {}", run.stderr);
                checked += 1;
            }
        }
    }
    // Older clusters with a PodSecurityPolicy: the iptables init containers, classic sidecars.
    for version in ["1.14", "1.22", "1.24"] {
        for profile in ["linkerd", "istio"] {
            let args = ["--kube-version", version, "--profile", profile];
            let run = inject(RESTRICTED_APP, LEGACY_NAMESPACE, &args);
            assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
            checked += 1;
        }
    }
    assert_eq!(checked, 22);
}

#[test]
fn restricted_with_an_iptables_init_container_is_rejected_with_the_fix() {
    let run = inject(RESTRICTED_APP, GUARDED_NAMESPACE, &["-q"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "error: the cluster would reject what this writes; nothing was written (--warn-only writes it anyway):\n  deploy.yaml: deployment/web: pods \"web-\" is forbidden: violates PodSecurity \"restricted:latest\": unrestricted capabilities (container \"linkerd-init\" must not include \"NET_ADMIN\", \"NET_RAW\" in securityContext.capabilities.add)\n    fix: linkerd-init adds NET_ADMIN and NET_RAW, which Pod Security \"restricted\" forbids: use CNI mode (--set cni=true) so that no iptables init container is needed\n"
    );
    let istio = check(
        RESTRICTED_APP,
        GUARDED_NAMESPACE,
        &["--profile", "istio", "--kube-version", "1.29"],
    );
    let violations = "unrestricted capabilities (container \"istio-init\" must not include \"NET_ADMIN\", \"NET_RAW\" in securityContext.capabilities.add), runAsNonRoot != true (container \"istio-init\" must not set securityContext.runAsNonRoot=false), runAsUser=0 (container \"istio-init\" must not set runAsUser=0)";
    // Enforce rejects; audit records the same (warn is not repeated over a rejection).
    assert_eq!(
        istio,
        [
            format!(
                "rejection: pods \"web-\" is forbidden: violates PodSecurity \"restricted:latest\": {violations}"
            ),
            format!(
                "warning: audit: would violate PodSecurity \"restricted:latest\": {violations}"
            )
        ]
    );
}

#[test]
fn pod_security_levels_versions_and_modes() {
    let namespace = |labels: &str| {
        format!(
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  labels: {{{labels}}}\n"
        )
    };
    let privileged_app = "{name: web, image: nginx:1.27, securityContext: {privileged: true}}";
    assert_eq!(
        check(
            &deployment(privileged_app),
            &namespace("pod-security.kubernetes.io/enforce: baseline"),
            &["--set", "cni=true"]
        ),
        [
            "rejection: pods \"web-\" is forbidden: violates PodSecurity \"baseline:latest\": privileged (container \"web\" must not set securityContext.privileged=true)"
        ]
    );
    assert_eq!(
        check(
            &deployment(privileged_app),
            &namespace(
                "pod-security.kubernetes.io/warn: baseline, pod-security.kubernetes.io/warn-version: v1.29"
            ),
            &["--set", "cni=true"]
        ),
        [
            "warning: would violate PodSecurity \"baseline:v1.29\": privileged (container \"web\" must not set securityContext.privileged=true)"
        ]
    );
    // No Pod Security admission before 1.23.
    assert!(
        check(
            &deployment(privileged_app),
            &namespace("pod-security.kubernetes.io/enforce: baseline"),
            &["--kube-version", "1.22", "--set", "cni=true"]
        )
        .is_empty()
    );
    // The iptables init container's capabilities break baseline too.
    assert_eq!(
        check(
            &deployment(APP),
            &namespace("pod-security.kubernetes.io/enforce: baseline"),
            &[]
        ),
        [
            "rejection: pods \"web-\" is forbidden: violates PodSecurity \"baseline:latest\": non-default capabilities (container \"linkerd-init\" must not include \"NET_ADMIN\", \"NET_RAW\" in securityContext.capabilities.add)"
        ]
    );
}

/// A pod that validation refuses (a container's `procMount: Unmasked` with
/// `hostUsers: true`) is checked by Pod Security too: the apiserver stops
/// at validation, the tool lists every validator's verdict, through inject's
/// report and `admit` alike.
#[test]
fn a_pod_validation_refuses_gets_pod_securitys_verdict_too() {
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      hostUsers: true\n      containers:\n      - {name: web, image: nginx:1.27, securityContext: {procMount: Unmasked}}\n";
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  hostUsers: true\n  containers:\n  - {name: web, image: nginx:1.27, securityContext: {procMount: Unmasked}}\n";
    let invalid = "containers[0].securityContext.procMount: Invalid value: \"Unmasked\": `hostUsers` must be false to use `Unmasked`";
    for (level, manifest) in [
        ("baseline", deployment),
        ("restricted", deployment),
        ("baseline", pod),
        ("restricted", pod),
    ] {
        let namespace = format!(
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  labels: {{pod-security.kubernetes.io/enforce: {level}}}\n"
        );
        let args = ["--kube-version", "1.33", "--set", "cni=true"];
        let verdicts = check(manifest, &namespace, &args);
        let pod_name = if manifest == pod { "web" } else { "web-" };
        let security = format!(
            "rejection: pods \"{pod_name}\" is forbidden: violates PodSecurity \"{level}:latest\": "
        );
        assert!(
            verdicts
                .iter()
                .any(|v| v.starts_with("rejection: ") && v.contains(invalid)),
            "{level}: {verdicts:#?}"
        );
        let pod_security = verdicts
            .iter()
            .find(|v| v.starts_with(&security))
            .unwrap_or_else(|| panic!("{level}: no Pod Security verdict: {verdicts:#?}"));
        assert!(
            pod_security.contains("procMount (container \"web\" must not set securityContext.procMount to \"Unmasked\")"),
            "{pod_security}"
        );

        // The text report lists both, and so does admit.
        let text = inject(manifest, &namespace, &args);
        assert_eq!(text.code, 0, "{}", text.stderr);
        assert!(text.stderr.contains(invalid), "{}", text.stderr);
        assert!(
            text.stderr.contains("violates PodSecurity"),
            "{}",
            text.stderr
        );
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("deploy.yaml"), manifest).expect("write");
        std::fs::write(dir.path().join("policies.yaml"), &namespace).expect("write");
        let mut admit = vec!["admit", "-f", "deploy.yaml", "--context", "policies.yaml"];
        admit.extend_from_slice(&args);
        let mut cmd = common::command_with(&admit);
        cmd.current_dir(dir.path()).write_stdin(Vec::new());
        let admitted: common::Run = cmd.output().expect("runs").into();
        assert_eq!(admitted.code, 1, "{}", admitted.stderr);
        assert!(admitted.stdout.contains(invalid), "{}", admitted.stdout);
        assert!(
            admitted
                .stdout
                .contains(&format!("violates PodSecurity \"{level}:latest\"")),
            "{}",
            admitted.stdout
        );
    }
}

#[test]
fn pod_security_policy_verdicts_up_to_1_24() {
    let psp = "apiVersion: policy/v1beta1\nkind: PodSecurityPolicy\nmetadata: {name: strict}\nspec:\n  privileged: false\n  runAsUser: {rule: RunAsAny}\n  seLinux: {rule: RunAsAny}\n  supplementalGroups: {rule: RunAsAny}\n  fsGroup: {rule: RunAsAny}\n  volumes: ['*']\n";
    // The iptables init container adds capabilities the policy does not allow.
    assert_eq!(
        check(&deployment(APP), psp, &["--kube-version", "1.24"]),
        [
            "rejection: pods \"web-\" is forbidden: PodSecurityPolicy: unable to admit pod: [spec.initContainers[0].securityContext.capabilities.add: Invalid value: \"NET_ADMIN\": capability may not be added spec.initContainers[0].securityContext.capabilities.add: Invalid value: \"NET_RAW\": capability may not be added]"
        ]
    );
    assert!(
        check(
            &deployment(APP),
            psp,
            &["--kube-version", "1.24", "--set", "cni=true"]
        )
        .is_empty()
    );
    // The fix is named under the rejection.
    let run = inject(&deployment(APP), psp, &["--kube-version", "1.24", "-q"]);
    assert!(
        run.stderr.ends_with("    fix: linkerd-init adds capabilities PodSecurityPolicy strict does not allow: use CNI mode (--set cni=true) so that no iptables init container is needed, or allow them in the policy\n"),
        "{}",
        run.stderr
    );
    // Older releases worded it without the plugin's name.
    assert_eq!(
        check(&deployment(APP), psp, &["--kube-version", "1.14"]),
        [
            "rejection: pods \"web-\" is forbidden: unable to validate against any pod security policy: [spec.initContainers[0].securityContext.capabilities.add: Invalid value: \"NET_ADMIN\": capability may not be added spec.initContainers[0].securityContext.capabilities.add: Invalid value: \"NET_RAW\": capability may not be added]"
        ]
    );
    // From 1.25 there is no PodSecurityPolicy admission.
    assert!(check(&deployment(APP), psp, &["--kube-version", "1.25"]).is_empty());
}

/// The worked example in docs/admission.md is what the tool prints.
#[test]
fn the_readme_example_is_what_the_tool_prints() {
    let readme = common::doc("docs/admission.md");
    let command = "$ kubectl mesh-inject -f testdata/admission/web.yaml --context testdata/admission/namespace.yaml --context testdata/cluster/ --context testdata/linkerd-config/\n";
    let start = readme
        .find(command)
        .expect("the example is in docs/admission.md")
        + command.len();
    let end = start + readme[start..].find("$ echo $?").expect("the example ends");
    // The README's command exactly, its trust anchors included.
    let mut cmd = common::command();
    cmd.current_dir(common::repo()).args([
        "-f",
        "testdata/admission/web.yaml",
        "--context",
        "testdata/admission/namespace.yaml",
        "--context",
        "testdata/cluster/",
        "--context",
        "testdata/linkerd-config/",
    ]);
    let run: common::Run = cmd.output().expect("runs").into();
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    assert_eq!(run.stderr, readme[start..end]);
    let mut cmd = common::command_with(&[
        "-q",
        "-f",
        "testdata/admission/web.yaml",
        "--context",
        "testdata/admission/namespace.yaml",
        "--set",
        "cni=true",
    ]);
    cmd.current_dir(common::repo());
    let run: common::Run = cmd.output().expect("runs").into();
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn context_in_list_documents_and_empty_namespaces_count() {
    // `kubectl get ns,resourcequota -o yaml` writes a List.
    let list = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ResourceQuota\n  metadata: {name: mem, namespace: shop}\n  spec:\n    hard: {limits.memory: 8Gi}\n";
    assert_eq!(
        check(&deployment(APP), list, &[]),
        [
            "rejection: pods \"web-\" is forbidden: failed quota: mem: must specify limits.memory for: web"
        ]
    );
    // Helm writes `namespace: ""`: the objects belong to -n, for the injection and the checks alike.
    let empty = deployment(APP).replace("namespace: shop", "namespace: \"\"");
    let quota = QUOTA.replace("namespace: shop", "namespace: prod");
    let run = inject(&empty, &quota, &["-n", "prod", "--warn-only"]);
    assert!(
        run.stderr.contains("linkerd-proxy: limits.memory, requests.cpu set because a ResourceQuota of namespace prod requires it"),
        "{}",
        run.stderr
    );
}

#[test]
fn requests_above_the_limits_limit_ranger_sets_are_invalid() {
    let lr = "apiVersion: v1\nkind: LimitRange\nmetadata: {name: cpu, namespace: shop}\nspec:\n  limits:\n  - type: Container\n    default: {cpu: \"1\"}\n";
    let app = "{name: web, image: nginx:1.27, resources: {requests: {cpu: \"2\"}}}";
    assert_eq!(
        check(&deployment(app), lr, &[]),
        [
            "rejection: Pod \"web-\" is invalid: spec.containers[0].resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit of 1"
        ]
    );
}

#[test]
fn a_rejected_run_with_the_json_report_writes_one_json_document() {
    let run = inject(&deployment(SIZED_APP), SMALL_QUOTA, &["--report", "json"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    let report: Value = serde_json::from_str(&run.stderr).expect("stderr is one JSON document");
    assert_eq!(report["summary"]["rejected"], 1);
    assert_eq!(report["summary"]["rejectedBeforeInjection"], 0);
}

#[test]
fn the_injected_resources_fit_the_limit_range() {
    // The profile's quota defaults (100m request, 1 CPU limit) would break a ratio of 4 and a max of 500m.
    let policies = format!(
        "{QUOTA}---\napiVersion: v1\nkind: LimitRange\nmetadata: {{name: cpu, namespace: shop}}\nspec:\n  limits:\n  - type: Container\n    max: {{cpu: 500m}}\n    maxLimitRequestRatio: {{cpu: \"4\"}}\n"
    );
    let sized = "{name: web, image: nginx:1.27, resources: {requests: {cpu: 200m}, limits: {cpu: 500m, memory: 256Mi}}}";
    for profile in ["linkerd", "istio"] {
        assert!(
            check(&deployment(sized), &policies, &["--profile", profile]).is_empty(),
            "{profile}"
        );
    }
}

#[test]
fn pod_level_resources_answer_for_the_containers_from_1_34() {
    let pod_level = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  template:\n    spec:\n      resources: {requests: {cpu: \"1\"}, limits: {memory: 512Mi}}\n      containers:\n      - {name: web, image: nginx:1.27}\n";
    let policies = format!(
        "{QUOTA}---\napiVersion: v1\nkind: LimitRange\nmetadata: {{name: pod, namespace: shop}}\nspec:\n  limits:\n  - type: Pod\n    max: {{memory: 1Gi}}\n"
    );
    // The quota's "must specify" is skipped, and the pod-level limit is the pod's.
    assert!(check(pod_level, &policies, &["--kube-version", "1.35"]).is_empty());
    // Before 1.34 the field is dropped, and the containers must answer themselves.
    assert_eq!(
        check(pod_level, &policies, &["--kube-version", "1.33"]),
        [
            "warning: spec.template.spec.resources is dropped by the apiserver (the PodLevelResources feature gate is off by default before 1.34)",
            "rejection: pods \"web-\" is forbidden: failed quota: mem: must specify limits.memory for: web; requests.cpu for: web"
        ]
    );
}

#[test]
fn policies_in_the_input_apply_wherever_they_stand() {
    // The same LimitRange as `--context`, after the workload in its stream,
    // before it, and in a second file: every workload of the namespace gets
    // the same verdict and the same injected resources.
    let max = "apiVersion: v1\nkind: LimitRange\nmetadata: {name: limits, namespace: shop}\nspec:\n  limits:\n  - type: Container\n    max: {memory: 1Gi}\n    min: {cpu: 50m}\n";
    let big =
        "{name: web, image: nginx:1.27, resources: {requests: {cpu: 10m}, limits: {memory: 2Gi}}}";
    let expected = check(&deployment(big), max, &[]);
    assert_eq!(expected.len(), 1, "{expected:?}");
    let through_context = inject(&deployment(APP), max, &["-q"]);
    assert_eq!(through_context.code, 0, "{}", through_context.stderr);
    for stream in [
        format!("{}---\n{max}", deployment(big)),
        format!("{max}---\n{}", deployment(big)),
    ] {
        let run = inject(&stream, "", &["--report", "json", "--warn-only"]);
        let report = inject_report(&run);
        let objects = report["inputs"][0]["objects"].as_array().expect("objects");
        let web = objects
            .iter()
            .find(|o| o["kind"] == "Deployment")
            .expect("the Deployment");
        let verdicts = verdicts_of(web);
        assert_eq!(verdicts, expected, "{stream}");
    }
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("a-deploy.yaml"), deployment(APP)).expect("write");
    std::fs::write(dir.path().join("b-limits.yaml"), max).expect("write");
    let mut cmd = common::command_with(&["-q", "-f", "."]);
    cmd.current_dir(dir.path()).write_stdin(Vec::new());
    let run: common::Run = cmd.output().expect("runs").into();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        format!("{}---\n{max}", through_context.stdout),
        "the LimitRange in the second file shapes the first file's proxy"
    );
}

#[test]
fn a_volume_without_a_source_is_an_empty_dir() {
    // The apiserver defaults a volume with no source to `emptyDir: {}`
    // (SetDefaults_Volume): `restricted` allows it, like any emptyDir.
    let scratch = RESTRICTED_APP.replace(
        "      containers:\n",
        "      volumes:\n      - name: scratch\n      containers:\n",
    );
    for version in ["1.24", "1.29", "1.37"] {
        let args = ["--kube-version", version, "--set", "cni=true"];
        let run = inject(&scratch, GUARDED_NAMESPACE, &args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        assert!(!run.stderr.contains("rejected"), "{args:?}: {}", run.stderr);
    }
}

#[test]
fn names_are_validated_as_the_apiserver_does() {
    let subdomain = "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'";
    let named = |name: &str| {
        deployment(APP).replace(
            "name: web\n  namespace",
            &format!("name: {name}\n  namespace"),
        )
    };
    assert_eq!(
        check(&named("Web_1"), "", &[]),
        [format!(
            "rejection: Deployment.apps \"Web_1\" is invalid: metadata.name: Invalid value: \"Web_1\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is {subdomain})"
        )]
    );
    // Before 1.20 the message named DNS-1123.
    assert_eq!(
        check(&named("Web_1"), "", &["--kube-version", "1.19"]),
        [format!(
            "rejection: Deployment.apps \"Web_1\" is invalid: metadata.name: Invalid value: \"Web_1\": a DNS-1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is {subdomain})"
        )]
    );
    // Container names are labels: 63 characters at most.
    let label = "'[a-z0-9]([-a-z0-9]*[a-z0-9])?'";
    let long = "a".repeat(64);
    let app = |name: &str| deployment(&format!("{{name: {name}, image: nginx:1.27}}"));
    assert_eq!(
        check(&app("Web"), "", &[]),
        [format!(
            "rejection: Deployment.apps \"web\" is invalid: spec.template.spec.containers[0].name: Invalid value: \"Web\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is {label})"
        )]
    );
    assert_eq!(
        check(&app(&long), "", &[]),
        [format!(
            "rejection: Deployment.apps \"web\" is invalid: spec.template.spec.containers[0].name: Invalid value: \"{long}\": must be no more than 63 characters"
        )]
    );
    // A Pod is named as a subdomain too.
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: Web, namespace: shop}\nspec:\n  containers:\n  - {name: web, image: nginx:1.27}\n";
    assert_eq!(
        check(pod, "", &[]),
        [format!(
            "rejection: Pod \"Web\" is invalid: metadata.name: Invalid value: \"Web\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is {subdomain})"
        )]
    );
}

#[test]
fn an_unmasked_proc_needs_a_user_namespace() {
    let unmasked = "{name: web, image: nginx:1.27, securityContext: {procMount: Unmasked}}";
    assert_eq!(
        check(&deployment(unmasked), "", &["--kube-version", "1.33"]),
        [
            "rejection: Deployment.apps \"web\" is invalid: spec.template.spec.containers[0].securityContext.procMount: Invalid value: \"Unmasked\": `hostUsers` must be false to use `Unmasked`"
        ]
    );
    let own_users = deployment(unmasked).replace(
        "      containers:\n",
        "      hostUsers: false\n      containers:\n",
    );
    assert!(check(&own_users, "", &["--kube-version", "1.33"]).is_empty());
    // Before 1.33 the ProcMountType gate is off: the apiserver resets the field to Default.
    assert_eq!(
        check(&deployment(unmasked), "", &["--kube-version", "1.32"]),
        [
            "warning: spec.template.spec.containers[0].securityContext.procMount is reset to Default by the apiserver (the ProcMountType feature gate is off by default before 1.33)"
        ]
    );
}

#[test]
fn a_port_name_in_two_containers_is_warned_about() {
    let two = deployment(
        "{name: a, image: nginx:1.27, ports: [{name: test, containerPort: 80}]}\n      - {name: b, image: nginx:1.27, ports: [{name: test, containerPort: 8090}]}",
    );
    assert_eq!(
        check(&two, "", &[]),
        [
            "warning: spec.template.spec.containers[1].ports[0]: duplicate port name \"test\" with spec.template.spec.containers[0].ports[0], services and probes that select ports by name will use spec.template.spec.containers[0].ports[0]"
        ]
    );
    // The warning arrived in 1.33.
    assert!(check(&two, "", &["--kube-version", "1.32"]).is_empty());
}

#[test]
fn the_fix_names_the_level_that_rejects() {
    // Enforced at baseline, warned at restricted: the rejection is baseline's, and so is the fix.
    let namespace = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  labels:\n    pod-security.kubernetes.io/enforce: baseline\n    pod-security.kubernetes.io/warn: restricted\n";
    let run = inject(&deployment(APP), namespace, &["-q"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "error: the cluster would reject what this writes; nothing was written (--warn-only writes it anyway):\n  deploy.yaml: deployment/web: pods \"web-\" is forbidden: violates PodSecurity \"baseline:latest\": non-default capabilities (container \"linkerd-init\" must not include \"NET_ADMIN\", \"NET_RAW\" in securityContext.capabilities.add)\n    fix: linkerd-init adds NET_ADMIN and NET_RAW, which Pod Security \"baseline\" forbids: use CNI mode (--set cni=true) so that no iptables init container is needed\n"
    );
    // Only warned at restricted: the warning's level.
    let warned = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  labels:\n    pod-security.kubernetes.io/warn: restricted\n";
    let run = inject(&deployment(APP), warned, &["--report", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = inject_report(&run);
    assert_eq!(
        report["inputs"][0]["objects"][0]["hints"],
        serde_json::json!([
            "linkerd-init adds NET_ADMIN and NET_RAW, which Pod Security \"restricted\" forbids: use CNI mode (--set cni=true) so that no iptables init container is needed"
        ])
    );
}

#[test]
fn a_rejection_the_workload_had_before_injection_does_not_block() {
    // A privileged app in a baseline namespace: rejected with or without the proxy
    // (CNI mode: the injected containers meet baseline).
    let namespace = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  labels: {pod-security.kubernetes.io/enforce: baseline}\n";
    let privileged =
        deployment("{name: web, image: nginx:1.27, securityContext: {privileged: true}}");
    let run = inject(&privileged, namespace, &["--set", "cni=true"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("name: linkerd-proxy"),
        "the output is written"
    );
    assert!(
        run.stderr.contains("\n  warning: rejected before injection too: pods \"web-\" is forbidden: violates PodSecurity \"baseline:latest\": privileged (container \"web\" must not set securityContext.privileged=true)\n"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("error:"), "{}", run.stderr);
    // The JSON report says which verdicts predate the injection.
    let run = inject(
        &privileged,
        namespace,
        &["--set", "cni=true", "--report", "json"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = inject_report(&run);
    let verdict = &report["inputs"][0]["objects"][0]["verdicts"][0];
    assert_eq!(verdict["severity"], "rejection");
    assert_eq!(verdict["beforeInjection"], true);
    assert_eq!(report["summary"]["rejected"], 1);
    assert_eq!(report["summary"]["rejectedBeforeInjection"], 1);

    // With the iptables init container the injection adds a violation of its own: it blocks.
    let run = inject(&privileged, namespace, &[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("  deploy.yaml: deployment/web: pods \"web-\" is forbidden: violates PodSecurity \"baseline:latest\": non-default capabilities (container \"linkerd-init\" must not include \"NET_ADMIN\", \"NET_RAW\" in securityContext.capabilities.add), privileged (container \"web\" must not set securityContext.privileged=true)\n"), "{}", run.stderr);
    let run = inject(&privileged, namespace, &["--report", "json", "--warn-only"]);
    let report = inject_report(&run);
    assert_eq!(
        report["inputs"][0]["objects"][0]["verdicts"][0]["beforeInjection"],
        false
    );
    assert_eq!(report["summary"]["rejectedBeforeInjection"], 0);
}

#[test]
fn an_invalid_workload_is_invalid_before_injection_too_wherever_its_containers_move() {
    // The classic proxy goes first: the app's container moves from
    // containers[0] to containers[1], and its own error with it.
    let app = "{name: web, image: nginx:1.27, lifecycle: {preStop: {sleep: {seconds: 40}}}}";
    let args = ["--kube-version", "1.30", "--native-sidecar", "never"];
    let run = inject(&deployment(app), "", &args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.starts_with("deployment/web injected\n  warning: rejected before injection too: Deployment.apps \"web\" is invalid: spec.template.spec.containers[1].lifecycle.preStop.sleep: Invalid value: 40: must be greater than 0 and less than terminationGracePeriodSeconds (30)\n"),
        "{}",
        run.stderr
    );
    // A quiet run says nothing of it.
    let mut quiet = args.to_vec();
    quiet.push("-q");
    let run = inject(&deployment(app), "", &quiet);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));
}

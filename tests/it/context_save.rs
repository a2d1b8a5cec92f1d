//! `context save DIR` against a fake apiserver, through the real kubectl:
//! what it reads (never a Secret), what it writes (one file per kind and
//! namespace, without what churns), how it fails (exit 2, saying why), and
//! that a run with the saved directory injects as one with the same
//! objects written by hand.

use crate::common;
use crate::fake_apiserver::FakeApiserver;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

fn yaml_file(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("reads");
    serde_yaml_ng::from_str(&text).expect("YAML")
}

fn namespace(name: &str, labels: Value, annotations: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": name, "labels": labels, "annotations": annotations},
        "spec": {"finalizers": ["kubernetes"]}})
}

fn config_map(namespace: &str, name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace}, "data": {"k": "v"}})
}

/// A cluster with Linkerd (the sample trust roots and linkerd-config),
/// a namespace with policies, a Secret and ConfigMaps no run reads.
fn linkerd_cluster() -> Vec<Value> {
    vec![
        namespace(
            "linkerd",
            json!({"linkerd.io/is-control-plane": "true"}),
            json!({}),
        ),
        namespace(
            "shop",
            json!({"pod-security.kubernetes.io/enforce": "baseline"}),
            json!({"config.linkerd.io/proxy-cpu-request": "150m"}),
        ),
        yaml_file(&common::testdata("cluster/linkerd-trust-roots.yaml")),
        yaml_file(&common::testdata("linkerd-config/linkerd-config.yaml")),
        config_map("linkerd", "linkerd-heartbeat-schedule"),
        config_map("shop", "settings"),
        json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "linkerd-identity-issuer", "namespace": "linkerd"},
            "data": {"tls.key": "c2VjcmV0"}}),
        json!({"apiVersion": "v1", "kind": "LimitRange",
            "metadata": {"name": "defaults", "namespace": "shop"},
            "spec": {"limits": [{"type": "Container",
                "default": {"memory": "256Mi"}, "defaultRequest": {"memory": "128Mi"}}]}}),
        json!({"apiVersion": "v1", "kind": "ResourceQuota",
            "metadata": {"name": "quota", "namespace": "shop"},
            "spec": {"hard": {"pods": "20"}}}),
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": "linkerd-proxy-injector-webhook-config"},
            "webhooks": [{"name": "linkerd-proxy-injector.linkerd.io",
                "clientConfig": {"service": {"name": "linkerd-proxy-injector", "namespace": "linkerd"}},
                "admissionReviewVersions": ["v1"], "sideEffects": "None"}]}),
        json!({"apiVersion": "policy/v1beta1", "kind": "PodSecurityPolicy",
            "metadata": {"name": "restricted"},
            "spec": {"privileged": false, "runAsUser": {"rule": "MustRunAsNonRoot"},
                "seLinux": {"rule": "RunAsAny"}, "supplementalGroups": {"rule": "RunAsAny"},
                "fsGroup": {"rule": "RunAsAny"}, "volumes": ["*"]}}),
    ]
}

/// A fake cluster, and a home for kubectl (its kubeconfig, its cache) with
/// the directory `cluster/` to save into.
struct Saving {
    server: FakeApiserver,
    home: tempfile::TempDir,
    dir: PathBuf,
}

impl Saving {
    /// The fake cluster of `objects` (see [`FakeApiserver::start`]), when
    /// kubectl runs here; `test` is skipped, saying so, when not.
    fn with_kubectl(test: &str, objects: Vec<Value>, serves_psp: bool) -> Option<Self> {
        Self::for_part(test, false, objects, serves_psp)
    }

    /// [`Saving::with_kubectl`] for a part of `test` when `part`: the rest
    /// of the test ran.
    fn for_part(test: &str, part: bool, objects: Vec<Value>, serves_psp: bool) -> Option<Self> {
        if !crate::integrations::available("kubectl", test, part) {
            return None;
        }
        let home = tempfile::tempdir().expect("a temp dir");
        let dir = home.path().join("cluster");
        Some(Saving {
            server: FakeApiserver::start(objects, serves_psp),
            home,
            dir,
        })
    }

    /// Run `kubectl mesh-inject context save DIR ARGS` against the server,
    /// with kubectl's home in the temporary one.
    fn save(&self, args: &[&str]) -> common::Run {
        self.save_with_path(args, None)
    }

    /// [`Saving::save`], which must succeed, and the files it wrote.
    fn saved(&self, args: &[&str]) -> (common::Run, BTreeMap<String, String>) {
        let run = self.save(args);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let saved = files(&self.dir);
        (run, saved)
    }

    /// [`Saving::save`] with `path` as PATH (the test's own when `None`).
    fn save_with_path(&self, args: &[&str], path: Option<&str>) -> common::Run {
        let kubeconfig = self.server.kubeconfig(self.home.path());
        let mut command = common::command();
        command
            .args(["context", "save"])
            .arg(&self.dir)
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(args)
            .env("HOME", self.home.path())
            .env_remove("KUBECONFIG");
        if let Some(path) = path {
            command.env("PATH", path);
        }
        command.output().expect("runs").into()
    }
}

/// The files of `dir`, by name, as text.
fn files(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(dir)
        .expect("a directory")
        .map(|e| {
            let path = e.expect("an entry").path();
            let name = path
                .file_name()
                .expect("a name")
                .to_string_lossy()
                .to_string();
            (name, std::fs::read_to_string(&path).expect("reads"))
        })
        .collect()
}

/// The names of the objects of a saved file, in order.
fn names(text: &str) -> Vec<String> {
    common::values(text)
        .into_iter()
        .flatten()
        .map(|v| v["metadata"]["name"].as_str().expect("a name").to_string())
        .collect()
}

#[test]
fn a_linkerd_cluster_is_saved_one_file_per_kind_and_namespace_without_what_churns() {
    let Some(at) = Saving::with_kubectl(
        "a_linkerd_cluster_is_saved_one_file_per_kind_and_namespace_without_what_churns",
        linkerd_cluster(),
        true,
    ) else {
        return;
    };
    let (run, saved) = at.saved(&[]);
    assert_eq!(
        saved.keys().collect::<Vec<_>>(),
        [
            "configmaps.linkerd.yaml",
            "limitranges.shop.yaml",
            "mutatingwebhookconfigurations.yaml",
            "namespaces.yaml",
            "podsecuritypolicies.yaml",
            "resourcequotas.shop.yaml",
        ]
    );
    assert_eq!(
        names(&saved["configmaps.linkerd.yaml"]),
        ["linkerd-config", "linkerd-identity-trust-roots"]
    );
    assert_eq!(names(&saved["namespaces.yaml"]), ["linkerd", "shop"]);
    assert_eq!(names(&saved["podsecuritypolicies.yaml"]), ["restricted"]);
    for (name, text) in &saved {
        for gone in [
            "managedFields",
            "resourceVersion",
            "uid:",
            "creationTimestamp",
            "last-applied-configuration",
            "status:",
        ] {
            assert!(!text.contains(gone), "{name} holds {gone}:\n{text}");
        }
        for object in common::values(text).into_iter().flatten() {
            assert!(object["kind"].is_string(), "{name}: {object}");
        }
    }
    // What the namespace holds for a run: its labels and annotations.
    let shop = common::values(&saved["namespaces.yaml"])
        .into_iter()
        .flatten()
        .find(|n| n["metadata"]["name"] == "shop")
        .expect("shop");
    assert_eq!(
        shop["metadata"],
        json!({"name": "shop",
            "labels": {"pod-security.kubernetes.io/enforce": "baseline"},
            "annotations": {"config.linkerd.io/proxy-cpu-request": "150m"}})
    );
    assert!(
        run.stderr.contains("note: no ConfigMaps of Istio"),
        "{}",
        run.stderr
    );
    let requests = at.server.requests();
    assert!(
        requests.iter().any(|r| r.contains("/configmaps")),
        "{requests:?}"
    );
    assert!(
        !requests.iter().any(|r| r.contains("secrets")),
        "{requests:?}"
    );
}

#[test]
fn istio_is_saved_with_every_revision_and_its_tags() {
    let mut objects = vec![namespace("istio-system", json!({}), json!({}))];
    for name in [
        "istio",
        "istio-sidecar-injector",
        "istio-1-28",
        "istio-sidecar-injector-1-28",
        "istio-1-29",
        "istio-sidecar-injector-1-29",
        "istio-ca-root-cert",
        "istio-leader",
    ] {
        objects.push(config_map("istio-system", name));
    }
    for (name, labels) in [
        (
            "istio-revision-tag-prod",
            json!({"istio.io/tag": "prod", "istio.io/rev": "1-28"}),
        ),
        (
            "istio-sidecar-injector-1-29",
            json!({"istio.io/rev": "1-29"}),
        ),
    ] {
        objects.push(json!({"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": name, "labels": labels}, "webhooks": []}));
    }
    let Some(at) = Saving::with_kubectl(
        "istio_is_saved_with_every_revision_and_its_tags",
        objects,
        false,
    ) else {
        return;
    };
    let (run, saved) = at.saved(&["--profile", "istio"]);
    assert_eq!(
        saved.keys().collect::<Vec<_>>(),
        [
            "configmaps.istio-system.yaml",
            "mutatingwebhookconfigurations.yaml",
            "namespaces.yaml",
        ]
    );
    assert_eq!(
        names(&saved["configmaps.istio-system.yaml"]),
        [
            "istio",
            "istio-1-28",
            "istio-1-29",
            "istio-sidecar-injector",
            "istio-sidecar-injector-1-28",
            "istio-sidecar-injector-1-29",
        ]
    );
    assert_eq!(
        names(&saved["mutatingwebhookconfigurations.yaml"]),
        ["istio-revision-tag-prod", "istio-sidecar-injector-1-29"]
    );
    // Only Istio was asked for: Linkerd's namespace is not read.
    assert!(
        !at.server
            .requests()
            .iter()
            .any(|r| r.contains("namespaces/linkerd")),
        "{:?}",
        at.server.requests()
    );
    assert!(!run.stderr.contains("Linkerd"), "{}", run.stderr);
}

#[test]
fn a_cluster_without_pod_security_policies_says_so_and_saves_none() {
    let Some(at) = Saving::with_kubectl(
        "a_cluster_without_pod_security_policies_says_so_and_saves_none",
        linkerd_cluster(),
        false,
    ) else {
        return;
    };
    let run = at.save(&["--profile", "linkerd"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "note: the cluster does not serve PodSecurityPolicies (policy/v1beta1): none saved"
        ),
        "{}",
        run.stderr
    );
    assert!(!at.dir.join("podsecuritypolicies.yaml").exists());
    assert!(at.dir.join("namespaces.yaml").exists());
    // --profile linkerd looks for Linkerd alone.
    assert!(!run.stderr.contains("Istio"), "{}", run.stderr);
}

#[test]
fn a_mesh_not_found_stops_the_save_naming_what_was_looked_for() {
    let Some(mut at) = Saving::with_kubectl(
        "a_mesh_not_found_stops_the_save_naming_what_was_looked_for",
        vec![namespace("default", json!({}), json!({}))],
        false,
    ) else {
        return;
    };
    let run = at.save(&[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("error: the cluster has no ConfigMaps of Linkerd (linkerd-config, linkerd-identity-trust-roots in namespace linkerd) nor Istio (istio-sidecar-injector[-REVISION], istio[-REVISION] in namespace istio-system): nothing was written"),
        "{}",
        run.stderr
    );
    assert!(!at.dir.exists());
    // A mesh asked for is the one looked for.
    at.server = FakeApiserver::start(linkerd_cluster(), false);
    let run = at.save(&["--profile", "istio"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("error: the cluster has no ConfigMaps of Istio (istio-sidecar-injector"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("Linkerd"), "{}", run.stderr);
    assert!(!at.dir.exists());
    // A mesh found without one of its ConfigMaps: saved, with a warning.
    let roots_only: Vec<Value> = linkerd_cluster()
        .into_iter()
        .filter(|o| o["metadata"]["name"] != "linkerd-config")
        .collect();
    at.server = FakeApiserver::start(roots_only, false);
    let (run, saved) = at.saved(&["--profile", "linkerd"]);
    assert!(
        run.stderr.contains("warning: Linkerd: no ConfigMap linkerd-config in namespace linkerd: a run with this context takes the profile's values for what it holds\n"),
        "{}",
        run.stderr
    );
    assert_eq!(
        names(&saved["configmaps.linkerd.yaml"]),
        ["linkerd-identity-trust-roots"]
    );
}

#[test]
fn without_kubectl_or_a_cluster_nothing_is_written_and_the_status_is_2() {
    let Some(at) = Saving::with_kubectl(
        "without_kubectl_or_a_cluster_nothing_is_written_and_the_status_is_2",
        linkerd_cluster(),
        false,
    ) else {
        return;
    };
    let empty = at.home.path().join("bin");
    std::fs::create_dir(&empty).expect("a directory");
    let run = at.save_with_path(&[], Some(empty.to_str().expect("UTF-8")));
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.starts_with("error: kubectl is not on PATH"),
        "{}",
        run.stderr
    );
    assert!(!at.dir.exists());
    assert!(at.server.requests().is_empty());
    // A context whose server does not answer: kubectl's own words.
    let run = at.save(&["--kube-context", "unreachable"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.starts_with(
            "error: kubectl get namespaces failed (exit 1); nothing was written. kubectl said:\n"
        ),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("127.0.0.1:1"), "{}", run.stderr);
    assert!(!at.dir.exists());
    assert!(at.server.requests().is_empty());
    // Flags after `--` reach kubectl: its own refusal of an unknown one.
    let run = at.save(&["--", "--no-such-flag"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("no-such-flag"), "{}", run.stderr);
}

#[test]
fn saving_again_replaces_its_own_files_and_leaves_the_others() {
    let Some(mut at) = Saving::with_kubectl(
        "saving_again_replaces_its_own_files_and_leaves_the_others",
        linkerd_cluster(),
        true,
    ) else {
        return;
    };
    let run = at.save(&[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    std::fs::write(at.dir.join("linkerd-trust-roots.yaml"), "# mine\n").expect("writes");
    std::fs::write(at.dir.join("notes.txt"), "mine\n").expect("writes");
    // The cluster changed: the quota is gone, the limits differ.
    let changed: Vec<Value> = linkerd_cluster()
        .into_iter()
        .filter(|o| o["kind"] != "ResourceQuota")
        .map(|mut o| {
            if o["kind"] == "LimitRange" {
                o["spec"]["limits"][0]["default"]["memory"] = json!("512Mi");
            }
            o
        })
        .collect();
    at.server = FakeApiserver::start(changed, true);
    let (run, saved) = at.saved(&[]);
    assert!(!saved.contains_key("resourcequotas.shop.yaml"), "{saved:?}");
    assert!(
        run.stderr
            .contains("resourcequotas.shop.yaml (an earlier save's"),
        "{}",
        run.stderr
    );
    assert!(saved["limitranges.shop.yaml"].contains("512Mi"));
    assert_eq!(saved["linkerd-trust-roots.yaml"], "# mine\n");
    assert_eq!(saved["notes.txt"], "mine\n");
    // No temporary file is left behind.
    assert!(!saved.keys().any(|n| n.ends_with(".tmp")), "{saved:?}");
    // A file of the user's named as a saved one is never overwritten.
    std::fs::write(at.dir.join("namespaces.yaml"), "# mine\n").expect("writes");
    let run = at.save(&[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("namespaces.yaml: exists and was not written by context save"),
        "{}",
        run.stderr
    );
    assert_eq!(files(&at.dir), {
        let mut before = saved.clone();
        before.insert("namespaces.yaml".into(), "# mine\n".into());
        before
    });
}

/// The same objects, given as a saved context or as written by hand.
#[test]
fn a_saved_context_injects_as_the_same_objects_written_by_hand() {
    let objects = linkerd_cluster();
    let Some(at) = Saving::with_kubectl(
        "a_saved_context_injects_as_the_same_objects_written_by_hand",
        objects.clone(),
        true,
    ) else {
        return;
    };
    let run = at.save(&[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let by_hand: PathBuf = at.home.path().join("by-hand.yaml");
    let text: Vec<String> = objects
        .iter()
        .filter(|o| o["kind"] != "Secret")
        .map(|o| serde_yaml_ng::to_string(o).expect("YAML"))
        .collect();
    std::fs::write(&by_hand, text.join("---\n")).expect("writes");
    let deployment = crate::linkerd_config::deployment("");
    let inject = |context: &Path| {
        let context = context.to_str().expect("UTF-8");
        common::run_as_given(
            &[
                "--context",
                context,
                "--kube-version",
                "1.24",
                "--warn-only",
                "-f",
                "-",
            ],
            Some(&deployment),
        )
    };
    let saved = inject(&at.dir);
    let written = inject(&by_hand);
    assert_eq!(saved.code, 0, "{}", saved.stderr);
    assert_eq!(written.code, 0, "{}", written.stderr);
    assert_eq!(saved.stdout, written.stdout);
    // The namespace's annotation and the LimitRange reached the proxy.
    assert!(saved.stdout.contains("150m"), "{}", saved.stdout);
    assert!(!saved.stderr.contains("context save"), "{}", saved.stderr);
}

/// Without a context, the report says once what came from the embedded
/// profile, naming `context save`; with a saved context, nothing came from it.
#[test]
fn the_defaults_are_said_once_without_a_context_and_not_with_a_saved_one() {
    let test = "the_defaults_are_said_once_without_a_context_and_not_with_a_saved_one";
    let one = crate::linkerd_config::deployment("");
    let two = format!("{one}---\n{}", one.replace("name: web\n", "name: api\n"));
    let anchors = format!("trustAnchorsPEM={}", common::ANCHOR_A);
    let note = "note: from the embedded profile, not from your cluster: ";
    for (args, parts) in [
        (
            vec!["--profile", "istio"],
            vec!["the mesh's settings (no ConfigMap istio-sidecar-injector in the input)"],
        ),
        (
            vec!["--set", anchors.as_str()],
            vec![
                "the proxy version edge-26.5.2",
                "the mesh's settings (no ConfigMap linkerd-config in the input)",
            ],
        ),
    ] {
        let run = common::run_as_given(&[&args[..], &["-f", "-"]].concat(), Some(&two));
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(run.stderr.matches(note).count(), 1, "{}", run.stderr);
        assert_eq!(
            run.stderr
                .matches("the policies (no Namespace, LimitRange, ResourceQuota or PodSecurityPolicy in the input: none is checked); to use your cluster's, save its configuration once and give it with --context:\n  kubectl mesh-inject context save cluster/\n  kubectl mesh-inject -f FILE --context cluster/\n")
                .count(),
            1,
            "{}",
            run.stderr
        );
        for part in parts {
            assert!(run.stderr.contains(part), "{part}: {}", run.stderr);
        }
    }
    let Some(at) = Saving::for_part(test, true, linkerd_cluster(), false) else {
        return;
    };
    assert_eq!(at.save(&[]).code, 0);
    let run = common::run_as_given(
        &[
            "--context",
            at.dir.to_str().expect("UTF-8"),
            "--warn-only",
            "-f",
            "-",
        ],
        Some(&two),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        !run.stderr.contains("from the embedded profile"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("2 injected"), "{}", run.stderr);
}

/// A namespace names a file: one that is no namespace's name (a path) is
/// refused before anything is written.
#[test]
fn a_namespace_that_is_a_path_is_refused() {
    let mut objects = linkerd_cluster();
    objects.push(json!({"apiVersion": "v1", "kind": "LimitRange",
        "metadata": {"name": "sneaky", "namespace": "../../outside"}, "spec": {"limits": []}}));
    let Some(at) = Saving::with_kubectl("a_namespace_that_is_a_path_is_refused", objects, false)
    else {
        return;
    };
    let run = at.save(&[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .starts_with("error: limitranges sneaky: namespace \"../../outside\": a namespace is a DNS-1123 label"),
        "{}",
        run.stderr
    );
    assert!(!at.dir.exists());
    assert!(!at.home.path().join("outside").exists());
}

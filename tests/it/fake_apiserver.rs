//! A small Kubernetes apiserver for the tests that drive the real kubectl:
//! discovery and GET of the objects a test gives it, as JSON the way the
//! apiserver writes it (typed lists whose items name no kind, metadata with
//! managedFields, uid, resourceVersion and the last-applied annotation),
//! over HTTP/1.1 without auth, one request per connection. Every request is
//! logged, so a test can say what was never asked for.
//!
//! What kubectl (1.32) asks for a `get`: `/version`, then `/api` and `/apis`
//! (preferring aggregated discovery in its Accept header; the documents
//! here are the older per-group ones as plain `application/json`, which it
//! takes instead), then `/api/v1` and `/apis/GROUP/VERSION`, then the list
//! (`?limit=500`).
//!
//! Pods are also created, as server-side dry runs only
//! (`kubectl create --dry-run=server`, `POST …/pods?dryRun=All`): the pod
//! is defaulted, given to a mutating webhook when the test sets one (a
//! recorded JSON patch, applied to pods without the mesh's proxy), given a
//! service account token volume as the ServiceAccount plugin does (with a
//! random name, `kube-api-access-xxxxx`), and returned as the apiserver
//! returns it, with a generated name, uid and status. Nothing is stored.
//! The fake webhook runs before the token volume is added, unlike the
//! real chain: a patch recorded against a pod without it applies as
//! recorded.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use serde_json::{Value, json};

/// A resource the server serves: its group ("" for the core group),
/// version, plural, kind and whether it has namespaces.
struct Resource {
    group: &'static str,
    version: &'static str,
    plural: &'static str,
    kind: &'static str,
    namespaced: bool,
}

const fn resource(
    group: &'static str,
    version: &'static str,
    plural: &'static str,
    kind: &'static str,
    namespaced: bool,
) -> Resource {
    Resource {
        group,
        version,
        plural,
        kind,
        namespaced,
    }
}

/// What the server serves; PodSecurityPolicy only when asked for (1.24 and
/// before), Secrets always (so that a request for them would be answered,
/// and seen in the log).
const RESOURCES: [Resource; 9] = [
    resource("", "v1", "namespaces", "Namespace", false),
    resource("", "v1", "pods", "Pod", true),
    resource("", "v1", "configmaps", "ConfigMap", true),
    resource("", "v1", "secrets", "Secret", true),
    resource("", "v1", "limitranges", "LimitRange", true),
    resource("", "v1", "resourcequotas", "ResourceQuota", true),
    resource(
        "admissionregistration.k8s.io",
        "v1",
        "mutatingwebhookconfigurations",
        "MutatingWebhookConfiguration",
        false,
    ),
    resource(
        "policy",
        "v1",
        "poddisruptionbudgets",
        "PodDisruptionBudget",
        true,
    ),
    resource(
        "policy",
        "v1beta1",
        "podsecuritypolicies",
        "PodSecurityPolicy",
        false,
    ),
];

/// A running fake apiserver; stopped when dropped.
pub struct FakeApiserver {
    pub port: u16,
    log: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// A mutating webhook of the fake cluster: `patch` (a JSON patch, as the
/// webhook recorded it) applied to every pod created in one of
/// `namespaces` that has no container named `injected_marker` (the
/// meshes' webhooks leave an injected pod alone).
#[derive(Clone)]
pub struct Webhook {
    pub patch: Value,
    pub namespaces: Vec<String>,
    pub injected_marker: String,
}

/// How the fake cluster admits the pods it is asked to create.
#[derive(Clone, Default)]
pub struct Admission {
    pub webhook: Option<Webhook>,
    /// Namespaces where creating a pod is refused, with the message.
    pub refused: Vec<(String, String)>,
}

/// The state the serving thread reads.
struct Cluster {
    objects: Vec<Value>,
    serves_psp: bool,
    admission: Admission,
    /// Pods created so far: each gets other random names.
    created: AtomicUsize,
}

impl FakeApiserver {
    /// Serve `objects` (each with `kind`, `apiVersion` and `metadata`),
    /// with `policy/v1beta1` (PodSecurityPolicy) when `serves_psp`.
    pub fn start(objects: Vec<Value>, serves_psp: bool) -> Self {
        Self::with_admission(objects, serves_psp, Admission::default())
    }

    /// [`FakeApiserver::start`], creating pods (as dry runs) through `admission`.
    pub fn with_admission(objects: Vec<Value>, serves_psp: bool, admission: Admission) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
        let port = listener.local_addr().expect("bound").port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let cluster = Cluster {
            objects: objects.into_iter().map(as_stored).collect(),
            serves_psp,
            admission,
            created: AtomicUsize::new(0),
        };
        let thread = {
            let (log, stop) = (Arc::clone(&log), Arc::clone(&stop));
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    if let Ok(stream) = stream {
                        cluster.answer(stream, &log);
                    }
                }
            })
        };
        FakeApiserver {
            port,
            log,
            stop,
            thread: Some(thread),
        }
    }

    /// Every request so far, as `GET /path?query`.
    pub fn requests(&self) -> Vec<String> {
        self.log.lock().expect("the log").clone()
    }

    /// A kubeconfig in `dir` with two contexts: `fake`, this server (the
    /// current one), and `unreachable`, a port nothing listens on.
    pub fn kubeconfig(&self, dir: &Path) -> PathBuf {
        let path = dir.join("kubeconfig");
        let text = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster: {{server: \"http://127.0.0.1:{}\"}}\n- name: unreachable\n  cluster: {{server: \"http://127.0.0.1:1\"}}\nusers:\n- name: anyone\n  user: {{}}\ncontexts:\n- name: fake\n  context: {{cluster: fake, user: anyone}}\n- name: unreachable\n  context: {{cluster: unreachable, user: anyone}}\ncurrent-context: fake\n",
            self.port
        );
        std::fs::write(&path, text).expect("writes the kubeconfig");
        path
    }
}

impl Drop for FakeApiserver {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // The thread waits in accept: one more connection wakes it.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// An object as the apiserver stores and returns it: with the metadata it
/// adds, and the annotation `kubectl apply` leaves.
fn as_stored(mut object: Value) -> Value {
    let copy = object.to_string();
    let metadata = object["metadata"].as_object_mut().expect("metadata");
    metadata.insert("uid".into(), json!("0b6e2f5a-0000-4000-8000-000000000001"));
    metadata.insert("resourceVersion".into(), json!("4711"));
    metadata.insert("creationTimestamp".into(), json!("2026-01-02T03:04:05Z"));
    metadata.insert(
        "managedFields".into(),
        json!([{"manager": "kubectl-client-side-apply", "operation": "Update",
                "apiVersion": "v1", "time": "2026-01-02T03:04:05Z",
                "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {}}}]),
    );
    let annotations = metadata
        .entry("annotations")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .expect("annotations");
    annotations.insert(
        "kubectl.kubernetes.io/last-applied-configuration".into(),
        Value::String(copy),
    );
    if object["kind"] == "Namespace" {
        object["status"] = json!({"phase": "Active"});
    }
    object
}

impl Cluster {
    fn resources(&self) -> impl Iterator<Item = &'static Resource> {
        let serves_psp = self.serves_psp;
        RESOURCES
            .iter()
            .filter(move |r| serves_psp || r.kind != "PodSecurityPolicy")
    }

    /// Read one request, log it, answer it, close.
    fn answer(&self, stream: TcpStream, log: &Mutex<Vec<String>>) {
        let mut reader = BufReader::new(&stream);
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).is_err() {
            return;
        }
        // The headers: read to the blank line; the body's length is kept.
        let mut header = String::new();
        let mut length = 0;
        while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
            if let Some((name, value)) = header.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
            header.clear();
        }
        let mut body = vec![0; length];
        if std::io::Read::read_exact(&mut reader, &mut body).is_err() {
            return;
        }
        let mut words = request_line.split_whitespace();
        let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
        log.lock()
            .expect("the log")
            .push(format!("{method} {target}"));
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let (status, body) = match method {
            "GET" => self.get(path),
            "POST" => self.create(path, query, &body),
            _ => (
                405,
                failure(405, "MethodNotAllowed", "only GET and POST are served"),
            ),
        };
        let reason = match status {
            200 => "OK",
            201 => "Created",
            400 => "Bad Request",
            403 => "Forbidden",
            404 => "Not Found",
            _ => "Method Not Allowed",
        };
        let body = body.to_string();
        let mut stream = stream;
        let _ = write!(
            stream,
            "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.flush();
    }

    /// The answer to a GET of `path`.
    fn get(&self, path: &str) -> (u16, Value) {
        let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        match segments.as_slice() {
            ["version"] => (
                200,
                json!({"major": "1", "minor": "32", "gitVersion": "v1.32.0", "platform": "linux/amd64"}),
            ),
            ["api"] => (
                200,
                json!({"kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}),
            ),
            ["apis"] => (200, self.groups()),
            // kubectl asks whether the server validates fields itself
            // (`fieldValidation`) before it creates: the core group's
            // document says so for pods; it validates nothing else.
            ["openapi", "v3"] => (
                200,
                json!({"paths": {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=1"}}}),
            ),
            ["openapi", "v3", "api", "v1"] => (200, pods_openapi()),
            ["api", version, rest @ ..] => self.under("", version, rest),
            ["apis", group, version, rest @ ..] => self.under(group, version, rest),
            _ => not_found(path),
        }
    }

    /// Every group but the core one, with its versions.
    fn groups(&self) -> Value {
        let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
        for r in self.resources().filter(|r| !r.group.is_empty()) {
            match groups.iter_mut().find(|(g, _)| *g == r.group) {
                Some((_, versions)) if !versions.contains(&r.version) => versions.push(r.version),
                Some(_) => {}
                None => groups.push((r.group, vec![r.version])),
            }
        }
        let groups: Vec<Value> = groups
            .iter()
            .map(|(group, versions)| {
                let entries: Vec<Value> = versions
                    .iter()
                    .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
                    .collect();
                json!({"name": group, "versions": entries, "preferredVersion": entries[0]})
            })
            .collect();
        json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
    }

    /// The answer for a path under a group version: its resources, a list,
    /// or one object.
    fn under(&self, group: &str, version: &str, rest: &[&str]) -> (u16, Value) {
        let group_version = match group {
            "" => version.to_string(),
            group => format!("{group}/{version}"),
        };
        let served: Vec<&Resource> = self
            .resources()
            .filter(|r| r.group == group && r.version == version)
            .collect();
        if served.is_empty() {
            return not_found(&group_version);
        }
        let find = |plural: &str| served.iter().copied().find(|r| r.plural == plural);
        let (resource, namespace, name) = match rest {
            [] => {
                let resources: Vec<Value> = served
                    .iter()
                    .map(|r| {
                        json!({"name": r.plural, "singularName": r.kind.to_lowercase(),
                        "namespaced": r.namespaced, "kind": r.kind,
                        "verbs": if r.kind == "Pod" { json!(["create", "get", "list"]) } else { json!(["get", "list"]) }})
                    })
                    .collect();
                return (
                    200,
                    json!({"kind": "APIResourceList", "apiVersion": "v1",
                        "groupVersion": group_version, "resources": resources}),
                );
            }
            [plural] => (find(plural), None, None),
            [plural, name] => (find(plural), None, Some(*name)),
            ["namespaces", namespace, plural] => (find(plural), Some(*namespace), None),
            ["namespaces", namespace, plural, name] => {
                (find(plural), Some(*namespace), Some(*name))
            }
            _ => (None, None, None),
        };
        let Some(resource) = resource else {
            return not_found(&rest.join("/"));
        };
        let matching = self.objects.iter().filter(|o| {
            o["kind"] == resource.kind
                && namespace.is_none_or(|ns| o["metadata"]["namespace"] == ns)
                && name.is_none_or(|n| o["metadata"]["name"] == n)
        });
        if name.is_some() {
            return match matching.into_iter().next() {
                Some(object) => (200, object.clone()),
                None => not_found(&rest.join("/")),
            };
        }
        // A typed list's items name no kind: the list does.
        let items: Vec<Value> = matching
            .map(|o| {
                let mut item = o.clone();
                let fields = item.as_object_mut().expect("an object");
                fields.remove("kind");
                fields.remove("apiVersion");
                item
            })
            .collect();
        (
            200,
            json!({"kind": format!("{}List", resource.kind), "apiVersion": group_version,
                "metadata": {"resourceVersion": "4712"}, "items": items}),
        )
    }
}

impl Cluster {
    /// The answer to a POST: a pod created as a dry run, or a refusal.
    fn create(&self, path: &str, query: &str, body: &[u8]) -> (u16, Value) {
        let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        let ["api", "v1", "namespaces", namespace, "pods"] = segments.as_slice() else {
            return (
                405,
                failure(405, "MethodNotAllowed", "only pods are created"),
            );
        };
        if !query.split('&').any(|q| q == "dryRun=All") {
            return (
                405,
                failure(405, "MethodNotAllowed", "only dry runs are served"),
            );
        }
        let Ok(mut pod) = serde_json::from_slice::<Value>(body) else {
            return (400, failure(400, "BadRequest", "the body is not JSON"));
        };
        if let Some((_, message)) = self
            .admission
            .refused
            .iter()
            .find(|(ns, _)| ns == namespace)
        {
            return (403, failure(403, "Forbidden", message));
        }
        let count = self.created.fetch_add(1, Ordering::SeqCst);
        pod["metadata"]["namespace"] = json!(namespace);
        default_pod(&mut pod);
        if let Some(webhook) = &self.admission.webhook {
            let injected = containers(&pod).any(|c| c["name"] == webhook.injected_marker.as_str());
            if !injected && webhook.namespaces.iter().any(|ns| ns == namespace) {
                let patch: json_patch::Patch =
                    serde_json::from_value(webhook.patch.clone()).expect("a JSON patch");
                if let Err(error) = json_patch::patch(&mut pod, &patch) {
                    return (
                        500,
                        failure(
                            500,
                            "InternalError",
                            &format!("the webhook's patch: {error}"),
                        ),
                    );
                }
                default_pod(&mut pod);
            }
        }
        add_token_volume(&mut pod, &random_suffix(count));
        let metadata = pod["metadata"].as_object_mut().expect("metadata");
        if let Some(prefix) = metadata.get("generateName").and_then(Value::as_str) {
            let name = format!("{prefix}{}", random_suffix(count + 1000));
            metadata.insert("name".into(), json!(name));
        }
        metadata.insert(
            "uid".into(),
            json!(format!("5f1c0000-0000-4000-8000-{count:012}")),
        );
        metadata.insert("creationTimestamp".into(), json!("2026-01-02T03:04:05Z"));
        pod["status"] = json!({"phase": "Pending", "qosClass": "BestEffort"});
        (201, pod)
    }
}

/// An OpenAPI v3 document of the core group that says, for pods, what
/// kubectl looks for: the operations and their `fieldValidation` parameter.
fn pods_openapi() -> Value {
    let operation = json!({
        "x-kubernetes-group-version-kind": {"group": "", "version": "v1", "kind": "Pod"},
        "parameters": [{"name": "fieldValidation", "in": "query", "schema": {"type": "string"}},
                       {"name": "dryRun", "in": "query", "schema": {"type": "string"}}],
        "responses": {}
    });
    json!({"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.32.0"},
        "paths": {
            "/api/v1/namespaces/{namespace}/pods": {"post": operation},
            "/api/v1/namespaces/{namespace}/pods/{name}": {"patch": operation, "put": operation}
        },
        "components": {"schemas": {}}})
}

/// Every container of a pod, init containers first.
fn containers(pod: &Value) -> impl Iterator<Item = &Value> {
    ["initContainers", "containers"]
        .into_iter()
        .filter_map(|list| pod["spec"][list].as_array())
        .flatten()
}

/// Some of the defaults the apiserver gives a pod and its containers.
fn default_pod(pod: &mut Value) {
    let spec = pod["spec"].as_object_mut().expect("a pod spec");
    for (field, value) in [
        ("restartPolicy", json!("Always")),
        ("dnsPolicy", json!("ClusterFirst")),
        ("schedulerName", json!("default-scheduler")),
        ("terminationGracePeriodSeconds", json!(30)),
        ("securityContext", json!({})),
        ("enableServiceLinks", json!(true)),
    ] {
        spec.entry(field).or_insert(value);
    }
    for container in containers_mut(spec) {
        let latest = container["image"]
            .as_str()
            .is_some_and(|i| !i.contains(':'));
        for (field, value) in [
            ("terminationMessagePath", json!("/dev/termination-log")),
            ("terminationMessagePolicy", json!("File")),
            (
                "imagePullPolicy",
                json!(if latest { "Always" } else { "IfNotPresent" }),
            ),
            ("resources", json!({})),
        ] {
            container.entry(field).or_insert(value);
        }
    }
}

/// The ServiceAccount plugin's work: the service account's name and its
/// token, as a projected volume named `kube-api-access-<suffix>` mounted in
/// every container.
fn add_token_volume(pod: &mut Value, suffix: &str) {
    let name = format!("kube-api-access-{suffix}");
    let spec = pod["spec"].as_object_mut().expect("a pod spec");
    spec.entry("serviceAccountName").or_insert(json!("default"));
    spec.entry("serviceAccount").or_insert(json!("default"));
    let volumes = spec.entry("volumes").or_insert(json!([]));
    volumes.as_array_mut().expect("volumes").push(json!({"name": name, "projected": {
        "defaultMode": 420, "sources": [{"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}]}}));
    for container in containers_mut(spec) {
        let mounts = container.entry("volumeMounts").or_insert(json!([]));
        mounts
            .as_array_mut()
            .expect("mounts")
            .push(json!({"name": name,
            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}));
    }
}

/// Every container of a pod's spec, init containers first, to change.
fn containers_mut(
    spec: &mut serde_json::Map<String, Value>,
) -> impl Iterator<Item = &mut serde_json::Map<String, Value>> {
    spec.iter_mut()
        .filter(|(list, _)| *list == "initContainers" || *list == "containers")
        .filter_map(|(_, items)| items.as_array_mut())
        .flatten()
        .map(|container| container.as_object_mut().expect("a container"))
}

/// Five characters as the apiserver's random names end, different for each `seed`.
fn random_suffix(seed: usize) -> String {
    const LETTERS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut n = seed.wrapping_mul(2_654_435_761).wrapping_add(97);
    (0..5)
        .map(|_| {
            let c = LETTERS[n % LETTERS.len()];
            n /= LETTERS.len();
            n = n.wrapping_add(seed.wrapping_mul(31));
            c as char
        })
        .collect()
}

fn failure(code: u16, reason: &str, message: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code})
}

fn not_found(what: &str) -> (u16, Value) {
    (
        404,
        failure(
            404,
            "NotFound",
            &format!("the server could not find {what}"),
        ),
    )
}

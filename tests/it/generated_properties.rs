//! The lossless properties on generated manifests, beside the fixed files of
//! `tests/properties.rs`: multi-document streams of Deployments, StatefulSets,
//! DaemonSets, Jobs, CronJobs, Pods, Services and ConfigMaps, written in
//! varied YAML (block and flow collections, plain and quoted scalars,
//! comments, two indentation widths, indented or flush sequences, LF or CRLF,
//! anchors and aliases, block literals), their containers with or without
//! ports, resources and a security context.
//!
//! 1. documents that are not injected come out byte-identical (and the
//!    workloads that may be injected are);
//! 2. inject(inject(x)) == inject(x), byte for byte;
//! 3. uninject(inject(x)) == x, byte for byte;
//! 4. the output, read by an independent parser (serde_yaml_ng), is the
//!    input with the `-o patch` patch applied.
//!
//! A failure shrinks to a small stream and prints it as YAML.

use crate::common;

use std::fmt;

use mesh_inject::cluster::KubeVersion;
use mesh_inject::pipeline::{self, Action, Processed, Settings};
use mesh_inject::profile::{self, NativeChoice, Profile};
use mesh_inject::source::Source;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Value};

// ---------------------------------------------------------------------------
// A small YAML tree and a writer with a choice of styles.

#[derive(Clone, Debug)]
enum Y {
    Str(String),
    Int(i64),
    Bool(bool),
    /// A block literal (`|`); the text without its final line break.
    Literal(String),
    /// Entries whose key starts with `#` are whole-line comments.
    Map(Vec<(String, Y)>),
    Seq(Vec<Y>),
    /// The collection written in flow style (`{a: b}`, `[a, b]`).
    Flow(Box<Y>),
    /// A comment at the end of the value's (first) line.
    Commented(String, Box<Y>),
    Anchor(String, Box<Y>),
    Alias(String),
}

fn s(text: impl Into<String>) -> Y {
    Y::Str(text.into())
}

fn map(entries: Vec<(&str, Y)>) -> Y {
    Y::Map(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

fn flow_if(flow: bool, y: Y) -> Y {
    if flow { Y::Flow(Box::new(y)) } else { y }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Quote {
    Plain,
    Single,
    Double,
}

#[derive(Clone, Copy, Debug)]
struct Style {
    indent: usize,
    /// `- ` items indented under their key, or flush with it.
    indent_seqs: bool,
    quote: Quote,
}

/// Whether a string may be written plain and still read as that string.
fn plain_ok(text: &str, in_flow: bool) -> bool {
    const RESERVED: [&str; 10] = [
        "true", "false", "yes", "no", "on", "off", "null", "y", "n", "~",
    ];
    text.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-./_=".contains(c) || (c == ':' && !in_flow))
        && !RESERVED.contains(&text.to_ascii_lowercase().as_str())
}

fn scalar(style: Style, y: &Y, in_flow: bool) -> String {
    match y {
        Y::Str(text) => match style.quote {
            Quote::Plain if plain_ok(text, in_flow) => text.clone(),
            Quote::Single if !text.contains('\'') => format!("'{text}'"),
            _ => format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\"")),
        },
        Y::Literal(text) => format!("\"{}\\n\"", text.replace('\n', "\\n")),
        Y::Int(n) => n.to_string(),
        Y::Bool(b) => b.to_string(),
        _ => unreachable!("not a scalar: {y:?}"),
    }
}

struct Writer {
    style: Style,
    out: String,
}

impl Writer {
    fn pad(&mut self, col: usize) {
        self.out.extend(std::iter::repeat_n(' ', col));
    }

    fn line_end(&mut self, comment: Option<&str>) {
        if let Some(c) = comment {
            self.out.push_str(" # ");
            self.out.push_str(c);
        }
        self.out.push('\n');
    }

    fn flow(&self, y: &Y) -> String {
        match y {
            Y::Map(entries) => {
                let inner: Vec<String> = entries
                    .iter()
                    .filter(|(k, _)| !k.starts_with('#'))
                    .map(|(k, v)| format!("{k}: {}", self.flow(v)))
                    .collect();
                format!("{{{}}}", inner.join(", "))
            }
            Y::Seq(items) => {
                let inner: Vec<String> = items.iter().map(|v| self.flow(v)).collect();
                format!("[{}]", inner.join(", "))
            }
            Y::Flow(inner) | Y::Commented(_, inner) => self.flow(inner),
            Y::Anchor(name, inner) => format!("&{name} {}", self.flow(inner)),
            Y::Alias(name) => format!("*{name}"),
            other => scalar(self.style, other, true),
        }
    }

    /// The entries of a block mapping at `col`; the first one's indentation
    /// already written when `first_inline` (after a `- `).
    fn entries(&mut self, col: usize, entries: &[(String, Y)], first_inline: bool) {
        for (i, (key, value)) in entries.iter().enumerate() {
            if !(first_inline && i == 0) {
                self.pad(col);
            }
            if key.starts_with('#') {
                self.out.push_str(key);
                self.out.push('\n');
                continue;
            }
            self.out.push_str(key);
            self.out.push(':');
            self.value(col, value, None);
        }
    }

    /// The value of an entry whose key is at `col`, from just after its `:`.
    fn value(&mut self, col: usize, y: &Y, comment: Option<&str>) {
        match y {
            Y::Commented(c, inner) => self.value(col, inner, Some(c)),
            Y::Anchor(name, inner) => {
                self.out.push_str(&format!(" &{name}"));
                self.value(col, inner, comment);
            }
            Y::Alias(name) => {
                self.out.push_str(&format!(" *{name}"));
                self.line_end(comment);
            }
            Y::Flow(inner) => {
                let text = self.flow(inner);
                self.out.push(' ');
                self.out.push_str(&text);
                self.line_end(comment);
            }
            Y::Literal(text) => {
                self.out.push_str(" |");
                self.line_end(comment);
                for line in text.lines() {
                    self.pad(col + self.style.indent);
                    self.out.push_str(line);
                    self.out.push('\n');
                }
            }
            Y::Map(entries) if entries.is_empty() => {
                self.out.push_str(" {}");
                self.line_end(comment);
            }
            Y::Seq(items) if items.is_empty() => {
                self.out.push_str(" []");
                self.line_end(comment);
            }
            Y::Map(entries) => {
                self.line_end(comment);
                self.entries(col + self.style.indent, entries, false);
            }
            Y::Seq(items) => {
                self.line_end(comment);
                let at = col
                    + if self.style.indent_seqs {
                        self.style.indent
                    } else {
                        0
                    };
                for item in items {
                    self.item(at, item);
                }
            }
            other => {
                let text = scalar(self.style, other, false);
                self.out.push(' ');
                self.out.push_str(&text);
                self.line_end(comment);
            }
        }
    }

    fn item(&mut self, col: usize, y: &Y) {
        self.pad(col);
        self.out.push('-');
        match y {
            Y::Map(entries) if !entries.is_empty() => {
                self.out.push(' ');
                self.entries(col + 2, entries, true);
            }
            Y::Seq(_) => {
                let text = self.flow(y);
                self.out.push(' ');
                self.out.push_str(&text);
                self.out.push('\n');
            }
            other => self.value(col, other, None),
        }
    }
}

// ---------------------------------------------------------------------------
// Manifests.

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Deployment,
    StatefulSet,
    DaemonSet,
    Job,
    CronJob,
    Pod,
    Service,
    ConfigMap,
}

impl Kind {
    fn is_workload(self) -> bool {
        !matches!(self, Kind::Service | Kind::ConfigMap)
    }

    fn api_version(self) -> &'static str {
        match self {
            Kind::Deployment | Kind::StatefulSet | Kind::DaemonSet => "apps/v1",
            Kind::Job | Kind::CronJob => "batch/v1",
            Kind::Pod | Kind::Service | Kind::ConfigMap => "v1",
        }
    }
}

#[derive(Clone, Debug)]
struct Container {
    name: String,
    image: String,
    ports: Vec<u16>,
    /// cpu millicores, memory MiB, and whether limits are set too.
    resources: Option<(u16, u16, bool)>,
    /// runAsNonRoot, allowPrivilegeEscalation.
    security: Option<(bool, bool)>,
}

#[derive(Clone, Debug)]
struct Doc {
    kind: Kind,
    name: String,
    namespace: Option<String>,
    containers: Vec<Container>,
    init: Option<Container>,
    annotation: Option<(&'static str, &'static str)>,
    style: Style,
    flow_labels: bool,
    flow_ports: bool,
    flow_resources: bool,
    comments: bool,
    anchors: bool,
}

impl Doc {
    /// Whether the tool is expected to inject it.
    fn injectable(&self) -> bool {
        self.kind.is_workload() && self.annotation != Some(("linkerd.io/inject", "disabled"))
    }

    fn labels(&self) -> Y {
        flow_if(
            self.flow_labels,
            map(vec![("app", s(&self.name)), ("tier", s("backend"))]),
        )
    }

    fn container(&self, c: &Container) -> Y {
        let mut entries = vec![("name", s(&c.name))];
        let image = s(&c.image);
        entries.push((
            "image",
            if self.comments {
                Y::Commented("pinned".into(), Box::new(image))
            } else {
                image
            },
        ));
        if !c.ports.is_empty() {
            let ports = c
                .ports
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    map(vec![
                        ("name", s(format!("port-{i}"))),
                        ("containerPort", Y::Int(i64::from(*p))),
                    ])
                })
                .collect();
            entries.push(("ports", flow_if(self.flow_ports, Y::Seq(ports))));
        }
        if let Some((cpu, memory, limits)) = c.resources {
            let amounts = map(vec![
                ("cpu", s(format!("{cpu}m"))),
                ("memory", s(format!("{memory}Mi"))),
            ]);
            let mut resources = vec![("requests", amounts.clone())];
            if limits {
                resources.push(("limits", amounts));
            }
            entries.push(("resources", flow_if(self.flow_resources, map(resources))));
        }
        if let Some((non_root, escalation)) = c.security {
            entries.push((
                "securityContext",
                map(vec![
                    ("runAsNonRoot", Y::Bool(non_root)),
                    ("allowPrivilegeEscalation", Y::Bool(escalation)),
                ]),
            ));
        }
        map(entries)
    }

    fn pod_spec(&self) -> Y {
        let mut entries = Vec::new();
        if self.comments {
            entries.push(("# the application's containers", s("")));
        }
        entries.push((
            "containers",
            Y::Seq(self.containers.iter().map(|c| self.container(c)).collect()),
        ));
        if let Some(init) = &self.init {
            entries.push(("initContainers", Y::Seq(vec![self.container(init)])));
        }
        if matches!(self.kind, Kind::Job | Kind::CronJob) {
            entries.push(("restartPolicy", s("Never")));
        }
        map(entries)
    }

    /// The pod template's (or the Pod's) metadata.
    fn pod_metadata(&self, labels: Y) -> Vec<(&'static str, Y)> {
        let mut entries = vec![("labels", labels)];
        if let Some((key, value)) = self.annotation {
            entries.push((
                "annotations",
                flow_if(self.flow_labels, map(vec![(key, s(value))])),
            ));
        }
        entries
    }

    fn tree(&self) -> Y {
        let anchored = self.anchors
            && matches!(
                self.kind,
                Kind::Deployment | Kind::StatefulSet | Kind::DaemonSet
            );
        let mut metadata = vec![("name", s(&self.name))];
        if let Some(ns) = &self.namespace {
            metadata.push(("namespace", s(ns)));
        }
        let (labels, reuse) = if anchored {
            (
                Y::Anchor("labels".into(), Box::new(self.labels())),
                Y::Alias("labels".into()),
            )
        } else {
            (self.labels(), self.labels())
        };
        if self.kind == Kind::Pod {
            metadata.extend(self.pod_metadata(labels));
        } else {
            metadata.push(("labels", labels));
        }
        let template = || {
            map(vec![
                ("metadata", map(self.pod_metadata(reuse.clone()))),
                ("spec", self.pod_spec()),
            ])
        };
        let mut root = Vec::new();
        if self.comments {
            root.push(("# a generated manifest", s("")));
        }
        root.push(("apiVersion", s(self.kind.api_version())));
        root.push(("kind", s(format!("{:?}", self.kind))));
        root.push(("metadata", map(metadata)));
        let selector = || map(vec![("matchLabels", reuse.clone())]);
        let body = match self.kind {
            Kind::Deployment => Some(map(vec![
                ("replicas", Y::Int(2)),
                ("selector", selector()),
                ("template", template()),
            ])),
            Kind::StatefulSet => Some(map(vec![
                ("serviceName", s(&self.name)),
                ("selector", selector()),
                ("template", template()),
            ])),
            Kind::DaemonSet => Some(map(vec![
                ("selector", selector()),
                ("template", template()),
            ])),
            Kind::Job => Some(map(vec![
                ("backoffLimit", Y::Int(1)),
                ("template", template()),
            ])),
            Kind::CronJob => Some(map(vec![
                ("schedule", Y::Str("*/5 * * * *".into())),
                (
                    "jobTemplate",
                    map(vec![("spec", map(vec![("template", template())]))]),
                ),
            ])),
            Kind::Pod => Some(self.pod_spec()),
            Kind::Service => Some(map(vec![
                (
                    "selector",
                    flow_if(self.flow_labels, map(vec![("app", s(&self.name))])),
                ),
                (
                    "ports",
                    Y::Seq(vec![map(vec![
                        ("name", s("http")),
                        ("port", Y::Int(80)),
                        ("targetPort", Y::Int(8080)),
                    ])]),
                ),
            ])),
            Kind::ConfigMap => None,
        };
        match body {
            Some(body) => root.push(("spec", body)),
            None => root.push((
                "data",
                map(vec![
                    ("mode", s("fast")),
                    ("app.properties", Y::Literal("color=blue\nsize: 3".into())),
                ]),
            )),
        }
        map(root)
    }

    fn render(&self) -> String {
        let mut writer = Writer {
            style: self.style,
            out: String::new(),
        };
        let Y::Map(entries) = self.tree() else {
            unreachable!("a manifest is a mapping")
        };
        writer.entries(0, &entries, false);
        writer.out
    }
}

#[derive(Clone)]
struct Stream {
    docs: Vec<Doc>,
    /// The first document starts with `---` too.
    leading_separator: bool,
    crlf: bool,
}

impl Stream {
    fn text(&self) -> String {
        let mut out = String::new();
        for (i, doc) in self.docs.iter().enumerate() {
            if i > 0 || self.leading_separator {
                out.push_str("---\n");
            }
            out.push_str(&doc.render());
        }
        if self.crlf {
            out = out.replace('\n', "\r\n");
        }
        out
    }
}

/// A failing case is shown as the manifest it is.
impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kinds: Vec<Kind> = self.docs.iter().map(|d| d.kind).collect();
        writeln!(f, "{kinds:?}, crlf: {}", self.crlf)?;
        f.write_str(&self.text())
    }
}

fn name() -> impl Strategy<Value = String> {
    (
        select(&["web", "api", "cache", "db", "worker"][..]),
        0..10u8,
    )
        .prop_map(|(word, n)| format!("{word}-{n}"))
}

fn container() -> impl Strategy<Value = Container> {
    (
        name(),
        proptest::collection::vec(select(&[80u16, 443, 8080, 9090][..]), 0..3),
        proptest::option::of((
            select(&[50u16, 100, 250][..]),
            select(&[64u16, 128][..]),
            any::<bool>(),
        )),
        proptest::option::of((any::<bool>(), any::<bool>())),
    )
        .prop_map(|(name, ports, resources, security)| Container {
            image: format!("registry.example/team/{name}:1.{}", name.len()),
            name,
            ports,
            resources,
            security,
        })
}

fn style() -> impl Strategy<Value = Style> {
    (
        select(&[2usize, 4][..]),
        any::<bool>(),
        select(&[Quote::Plain, Quote::Single, Quote::Double][..]),
    )
        .prop_map(|(indent, indent_seqs, quote)| Style {
            indent,
            indent_seqs,
            quote,
        })
}

const ANNOTATIONS: [Option<(&str, &str)>; 5] = [
    None,
    None,
    Some(("linkerd.io/inject", "enabled")),
    Some(("linkerd.io/inject", "disabled")),
    Some(("example.com/owner", "team-a")),
];

fn doc() -> impl Strategy<Value = Doc> {
    (
        select(
            &[
                Kind::Deployment,
                Kind::StatefulSet,
                Kind::DaemonSet,
                Kind::Job,
                Kind::CronJob,
                Kind::Pod,
                Kind::Service,
                Kind::ConfigMap,
            ][..],
        ),
        name(),
        proptest::option::of(select(&["default", "shop", "payments"][..])),
        proptest::collection::vec(container(), 1..3),
        proptest::option::weighted(0.2, container()),
        select(&ANNOTATIONS[..]),
        style(),
        // flow labels, ports, resources; comments; anchors (rarely)
        (
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            proptest::bool::weighted(0.25),
        ),
    )
        .prop_map(
            |(kind, name, namespace, mut containers, mut init, annotation, style, flags)| {
                // Container names are unique within a pod, as the apiserver requires.
                let mut seen = Vec::new();
                for (i, c) in containers.iter_mut().chain(init.iter_mut()).enumerate() {
                    if seen.contains(&c.name) {
                        c.name = format!("{}-{i}", c.name);
                    }
                    seen.push(c.name.clone());
                }
                Doc {
                    kind,
                    name,
                    namespace: namespace.map(str::to_string),
                    containers,
                    init,
                    annotation,
                    style,
                    flow_labels: flags.0,
                    flow_ports: flags.1,
                    flow_resources: flags.2,
                    comments: flags.3,
                    anchors: flags.4,
                }
            },
        )
}

fn stream() -> impl Strategy<Value = Stream> {
    (
        proptest::collection::vec(doc(), 1..5),
        any::<bool>(),
        proptest::bool::weighted(0.3),
    )
        .prop_map(|(docs, leading_separator, crlf)| Stream {
            docs,
            leading_separator,
            crlf,
        })
}

// ---------------------------------------------------------------------------
// Running the tool, as the command line does by default.

fn run(text: &str, action: Action) -> Processed {
    let processed = run_in(text, action, &Mode::default());
    assert!(
        processed.objects.iter().all(|o| !o.rejected()),
        "a generated workload is rejected: {:?}\n{text}",
        processed
            .objects
            .iter()
            .map(|o| &o.verdicts)
            .collect::<Vec<_>>()
    );
    processed
}

/// The settings a run is given: profile, `--set` values, target version and
/// `--native-sidecar`.
#[derive(Clone, Debug, Default)]
struct Mode {
    istio: bool,
    values: Vec<(&'static str, &'static str)>,
    /// `None` for the current version.
    version: Option<KubeVersion>,
    native: Option<NativeChoice>,
}

/// Two self-signed trust anchors, as a rotation replaces one by the other.
const ANCHORS: [&str; 2] = [common::ANCHOR_A, common::ANCHOR_B];

fn mode() -> impl Strategy<Value = Mode> {
    let linkerd_values = proptest::collection::vec(
        select(vec![
            ("trustAnchorsPEM", ANCHORS[0]),
            ("trustAnchorsPEM", ANCHORS[1]),
            ("proxyVersion", "edge-26.8.3"),
            ("waitBeforeExitSeconds", "5"),
            ("proxyMemoryLimit", "256Mi"),
            ("proxyPosition", "last"),
            ("logLevel", "debug"),
            ("skipOutboundPorts", "3306,5432"),
            ("cni", "true"),
        ]),
        0..3,
    );
    let istio_values = proptest::collection::vec(
        select(vec![
            ("proxyImage", "docker.io/istio/proxyv2:1.29.1"),
            ("proxyMemoryLimit", "512Mi"),
            ("proxyPosition", "first"),
            ("waitBeforeExitSeconds", "5"),
            ("excludeOutboundPorts", "3306"),
        ]),
        0..3,
    );
    (
        any::<bool>(),
        linkerd_values,
        istio_values,
        select(vec![
            None,
            Some(KubeVersion::new(1, 28)),
            Some(KubeVersion::new(1, 30)),
        ]),
        select(vec![
            None,
            Some(NativeChoice::Always),
            Some(NativeChoice::Never),
        ]),
    )
        .prop_map(
            |(istio, linkerd_values, istio_values, version, native)| Mode {
                istio,
                values: if istio { istio_values } else { linkerd_values },
                version,
                native,
            },
        )
}

fn run_in(text: &str, action: Action, mode: &Mode) -> Processed {
    run_with(text, action, mode, false)
}

/// [`run_in`], reading every `List` whole with `whole_lists` (the reference
/// the reading item by item is compared with).
fn run_with(text: &str, action: Action, mode: &Mode, whole_lists: bool) -> Processed {
    let name = if mode.istio {
        "istio"
    } else {
        profile::EMBEDDED[0].0
    };
    let profile = Profile::embedded(name).expect("embedded profile");
    let mut flags = Map::new();
    for (name, value) in &mode.values {
        let (name, value) = profile
            .parse_assignment(&format!("{name}={value}"), &flags)
            .expect("a value of the profile");
        flags.insert(name, value);
    }
    let settings = Settings {
        flags,
        native: mode.native,
        version: mode.version.unwrap_or(KubeVersion::CURRENT),
        whole_lists,
        ..Settings::new(action, profile)
    };
    let source = Source::new(None, text.to_string());
    // Linkerd's proxy needs trust anchors: the sample ones, as `--context`
    // gives them (a `--set` among the mode's values wins over them).
    let context = if mode.istio {
        Vec::new()
    } else {
        common::cluster_sources()
    };
    let mut results = pipeline::process_all(vec![source], &context, &settings)
        .unwrap_or_else(|e| panic!("the tool refuses a generated stream: {e}\n{text}"));
    // Settings other than the defaults may give workloads the cluster
    // refuses (native sidecars on 1.28): their text is written all the same.
    results.pop().expect("one result")
}

/// The documents of a generated stream, split at its `---` lines (which
/// only separate documents in these streams), each with its separator.
fn split_documents(text: &str) -> Vec<&str> {
    let mut starts = vec![0];
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_end() == "---" && at > 0 {
            starts.push(at);
        }
        at += line.len();
    }
    starts.push(text.len());
    starts.windows(2).map(|w| &text[w[0]..w[1]]).collect()
}

/// Each document as serde_yaml_ng reads it, merge keys applied.
fn independent_values(text: &str) -> Vec<Value> {
    read_independently(text).expect("serde_yaml_ng reads it")
}

/// [`independent_values`], or what serde_yaml_ng cannot read.
fn read_independently(text: &str) -> Result<Vec<Value>, String> {
    serde_yaml_ng::Deserializer::from_str(text)
        .map(|document| {
            let mut value: serde_yaml_ng::Value =
                serde::Deserialize::deserialize(document).map_err(|e| e.to_string())?;
            value.apply_merge().map_err(|e| e.to_string())?;
            serde_json::to_value(value).map_err(|e| e.to_string())
        })
        .collect()
}

/// The documents of `stream` as the items of one `List`: its `kind` before
/// or after them, its items' `-` under `items:` or indented.
fn as_list(stream: &Stream, kind_last: bool, indented: bool) -> String {
    let (dash, inside) = if indented {
        ("  - ", "    ")
    } else {
        ("- ", "  ")
    };
    let mut out = String::from("apiVersion: v1\n");
    if !kind_last {
        out.push_str("kind: List\n");
    }
    out.push_str("items:\n");
    for doc in &stream.docs {
        for (i, line) in doc.render().lines().enumerate() {
            match (i, line.is_empty()) {
                (0, _) => out.push_str(dash),
                (_, false) => out.push_str(inside),
                (_, true) => {}
            }
            out.push_str(line);
            out.push('\n');
        }
    }
    if kind_last {
        out.push_str("kind: List\nmetadata:\n  resourceVersion: \"\"\n");
    }
    if stream.crlf {
        out = out.replace('\n', "\r\n");
    }
    out
}

/// The documents of `stream` as the items of one JSON `List`, as `kubectl
/// get -o json` writes it (`pretty`: four spaces an indentation level) or
/// on one line, its `kind` before or after them.
fn as_json_list(stream: &Stream, kind_last: bool, pretty: bool) -> String {
    let items: Vec<Value> = stream
        .docs
        .iter()
        .flat_map(|doc| independent_values(&doc.render()))
        .collect();
    let mut list = Map::new();
    list.insert("apiVersion".into(), "v1".into());
    if !kind_last {
        list.insert("kind".into(), "List".into());
    }
    list.insert("items".into(), Value::Array(items));
    if kind_last {
        list.insert("kind".into(), "List".into());
        list.insert(
            "metadata".into(),
            serde_json::json!({"resourceVersion": ""}),
        );
    }
    let list = Value::Object(list);
    if !pretty {
        return format!("{list}\n");
    }
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut writer = serde_json::Serializer::with_formatter(&mut out, formatter);
    serde::Serialize::serialize(&list, &mut writer).expect("JSON written");
    let out = String::from_utf8(out).expect("UTF-8") + "\n";
    match stream.crlf {
        true => out.replace('\n', "\r\n"),
        false => out,
    }
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 64,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn documents_not_injected_pass_through_byte_identical(stream in stream()) {
        let input = stream.text();
        let output = run(&input, Action::Inject).try_text().expect("the edits fit the source").into_owned();
        let before = split_documents(&input);
        let after = split_documents(&output);
        prop_assert_eq!(before.len(), stream.docs.len());
        prop_assert_eq!(after.len(), before.len(), "the document count changed:\n{}", output);
        for ((doc, b), a) in stream.docs.iter().zip(&before).zip(&after) {
            if doc.injectable() {
                prop_assert_ne!(b, a, "a {:?} was not injected", doc.kind);
            } else {
                prop_assert_eq!(b, a, "a {:?} that is not injected changed", doc.kind);
            }
        }
    }

    #[test]
    fn injecting_twice_changes_nothing(stream in stream()) {
        let once = run(&stream.text(), Action::Inject).try_text().expect("the edits fit the source").into_owned();
        let twice = run(&once, Action::Inject).try_text().expect("the edits fit the source").into_owned();
        prop_assert_eq!(twice, once);
    }

    /// Injecting with other settings what was injected before gives what
    /// injecting the original with them gives, byte for byte, and uninject
    /// still restores the original. A workload the other mesh injected is
    /// left as it is; the others are injected as if fresh.
    #[test]
    fn reinjecting_with_other_settings_converges(stream in stream(), first in mode(), then in mode()) {
        let input = stream.text();
        let once = run_in(&input, Action::Inject, &first).try_text().expect("the edits fit the source").into_owned();
        let again = run_in(&once, Action::Inject, &then).try_text().expect("the edits fit the source").into_owned();
        let fresh = run_in(&input, Action::Inject, &then).try_text().expect("the edits fit the source").into_owned();
        if first.istio == then.istio {
            prop_assert_eq!(&again, &fresh, "injected first with {:?}", first);
            let back = run_in(&again, Action::Uninject, &then).try_text().expect("the edits fit the source").into_owned();
            prop_assert_eq!(back, input);
        } else {
            let documents = split_documents(&input).into_iter().zip(split_documents(&once));
            let expected: String = documents
                .zip(split_documents(&fresh))
                .map(|((original, injected), fresh)| if injected == original { fresh } else { injected })
                .collect();
            prop_assert_eq!(again, expected, "the other mesh's workloads changed");
        }
    }

    #[test]
    fn uninject_restores_the_input(stream in stream()) {
        let input = stream.text();
        prop_assert_eq!(&run(&input, Action::Uninject).try_text().expect("the edits fit the source").into_owned(), &input, "uninject changed an input never injected");
        let injected = run(&input, Action::Inject).try_text().expect("the edits fit the source").into_owned();
        prop_assert_eq!(run(&injected, Action::Uninject).try_text().expect("the edits fit the source").into_owned(), input);
    }

    #[test]
    fn output_reads_as_the_input_with_the_patch_applied(stream in stream()) {
        let input = stream.text();
        let processed = run(&input, Action::Inject);
        let mut expected = independent_values(&input);
        for object in processed.objects.iter().filter(|o| !o.ops.is_empty()) {
            let doc = expected
                .get_mut(object.document - 1)
                .expect("the patched document exists");
            json_patch::patch(doc, &object.ops).expect("the patch applies");
        }
        let got = independent_values(&processed.try_text().expect("the edits fit the source"));
        prop_assert_eq!(got, expected, "output:\n{}", processed.try_text().expect("the edits fit the source").into_owned());
    }

    #[test]
    fn a_list_read_item_by_item_gives_the_bytes_read_whole(
        stream in stream(),
        mode in mode(),
        kind_last in any::<bool>(),
        indented in any::<bool>(),
        form in select(vec!["block", "json", "one-line json"]),
    ) {
        let input = match form {
            "block" => as_list(&stream, kind_last, indented),
            json => as_json_list(&stream, kind_last, json == "json"),
        };
        // Cut, unless its items cannot be (one item only).
        let cut = mesh_inject::yaml::parse::list_lines(&input);
        prop_assert_eq!(cut.len(), usize::from(stream.docs.len() > 1), "not cut:\n{}", input);
        prop_assert_eq!(cut.first().map(|list| list.json), (stream.docs.len() > 1).then_some(form != "block"));
        let both = |text: &str, action: Action| {
            let by_items = run_with(text, action, &mode, false).try_text().expect("the edits fit the source").into_owned();
            let whole = run_with(text, action, &mode, true).try_text().expect("the edits fit the source").into_owned();
            (by_items, whole)
        };
        let (injected, whole) = both(&input, Action::Inject);
        prop_assert_eq!(&injected, &whole, "injected item by item, then whole");
        let (again, whole) = both(&injected, Action::Inject);
        prop_assert_eq!(&again, &whole, "injected again item by item, then whole");
        let (restored, whole) = both(&injected, Action::Uninject);
        prop_assert_eq!(&restored, &whole, "uninjected item by item, then whole");
        prop_assert_eq!(restored, input);
    }
}

/// Every `List` among the test data and the corpus, injected, injected
/// again and uninjected item by item, gives the bytes it gives read whole;
/// so does every stream of them made a JSON `List`, as `kubectl get -o
/// json` writes it and on one line.
#[test]
fn every_list_of_the_corpus_reads_item_by_item_as_whole() {
    let mut files = common::manifests_under(&common::testdata("inject"));
    files.extend(common::manifests_under(&common::testdata("example")));
    let corpus = common::repo().join("../shared/corpus");
    if corpus.is_dir() {
        files.extend(common::manifests_under(&corpus));
    } else {
        common::skip_part(
            "lists read item by item",
            "../shared/corpus is not beside this checkout: its lists are not checked",
        );
    }
    let (mut lists, mut json_lists) = (0, 0);
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let mut inputs = Vec::new();
        if !mesh_inject::yaml::parse::list_lines(&text).is_empty() {
            lists += 1;
            inputs.push(text.clone());
        }
        for json in as_json_lists(&text) {
            let cut = mesh_inject::yaml::parse::list_lines(&json);
            assert!(cut.iter().all(|list| list.json) && cut.len() == 1, "{json}");
            json_lists += 1;
            inputs.push(json);
        }
        for input in inputs {
            assert_reads_item_by_item_as_whole(&input, &path);
        }
    }
    assert!(lists >= 1, "no list found to cut");
    assert!(json_lists >= 2, "no stream made a JSON list");
    eprintln!("{lists} lists, {json_lists} JSON lists read item by item as whole");
}

/// Inject, inject again and uninject `input` item by item and whole, with
/// both meshes: the same bytes each time.
fn assert_reads_item_by_item_as_whole(input: &str, path: &std::path::Path) {
    for istio in [false, true] {
        let mode = Mode {
            istio,
            ..Mode::default()
        };
        let both = |text: &str, action: Action| {
            let by_items = run_with(text, action, &mode, false)
                .try_text()
                .expect("the edits fit the source")
                .into_owned();
            let whole = run_with(text, action, &mode, true)
                .try_text()
                .expect("the edits fit the source")
                .into_owned();
            assert_eq!(by_items, whole, "{}: {action:?}\n{text}", path.display());
            by_items
        };
        let injected = both(input, Action::Inject);
        both(&injected, Action::Inject);
        both(&injected, Action::Uninject);
    }
}

/// The documents of `text`, when it holds two objects or more (a list's
/// items), as the items of a JSON `List`, pretty and on one line: as JSON
/// they are cut too.
fn as_json_lists(text: &str) -> Vec<String> {
    let Ok(values) = read_independently(text) else {
        return Vec::new();
    };
    let mut items: Vec<Value> = Vec::new();
    for value in values {
        match value {
            Value::Null => {}
            Value::Object(mut object) if object.get("items").is_some_and(Value::is_array) => {
                if let Some(Value::Array(listed)) = object.remove("items") {
                    items.extend(listed.into_iter().filter(Value::is_object));
                }
            }
            object @ Value::Object(_) => items.push(object),
            _ => return Vec::new(),
        }
    }
    if items.len() < 2 {
        return Vec::new();
    }
    let list = serde_json::json!({"apiVersion": "v1", "items": items, "kind": "List"});
    let mut pretty = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut writer = serde_json::Serializer::with_formatter(&mut pretty, formatter);
    serde::Serialize::serialize(&list, &mut writer).expect("JSON written");
    let pretty = String::from_utf8(pretty).expect("UTF-8") + "\n";
    vec![pretty, format!("{list}\n")]
}

/// A large JSON stream (NDJSON, or documents pretty-printed one after
/// another) is cut between its values to use every core: each value comes
/// out as it does alone.
#[test]
fn a_json_stream_cut_between_its_values_gives_each_value_as_alone() {
    let text =
        std::fs::read_to_string(common::testdata("inject").join("kinds.yaml")).expect("test data");
    let values: Vec<Value> = independent_values(&text)
        .into_iter()
        .filter(Value::is_object)
        .collect();
    assert!(values.len() >= 3, "{} values", values.len());
    for pretty in [false, true] {
        let write = |value: &Value| match pretty {
            true => serde_json::to_string_pretty(value).expect("JSON") + "\n",
            false => format!("{value}\n"),
        };
        // Past the size from which a source is cut (128 KiB), in many cuts.
        let mut stream = String::new();
        let mut alone = String::new();
        let mode = Mode::default();
        let outputs: Vec<String> = values
            .iter()
            .map(|value| {
                run_in(&write(value), Action::Inject, &mode)
                    .try_text()
                    .expect("the edits fit the source")
                    .into_owned()
            })
            .collect();
        while stream.len() < 512 << 10 {
            for (value, output) in values.iter().zip(&outputs) {
                stream.push_str(&write(value));
                alone.push_str(output);
            }
        }
        let cut = mesh_inject::yaml::parse::split_points(&stream, 16);
        assert!(cut.len() > 10, "{cut:?}");
        let injected = run_in(&stream, Action::Inject, &mode)
            .try_text()
            .expect("the edits fit the source")
            .into_owned();
        assert!(
            injected == alone,
            "the stream cut differs from its values alone (pretty: {pretty})"
        );
        let restored = run_in(&injected, Action::Uninject, &mode)
            .try_text()
            .expect("the edits fit the source")
            .into_owned();
        assert!(restored == stream, "uninject does not restore the stream");
    }
}

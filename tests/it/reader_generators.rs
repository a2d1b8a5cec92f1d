//! The documents and strings the differential test against kubectl's
//! reader (`kubectl_reader`) is made of: YAML 1.1's special scalars in
//! every layout, Unicode's line breaks and the byte order mark, and short
//! strings of the characters YAML gives a meaning. Plain data, with no
//! dependency on the tests' helpers: the fuzz target `reader` and the
//! seed writer (`examples/fuzz_seeds.rs`) include this file too.

#![allow(dead_code)]

/// Scalars whose reading YAML 1.1 and 1.2 differ on, or which look like
/// something else.
pub const SCALARS: &[&str] = &[
    "y",
    "Y",
    "n",
    "N",
    "yes",
    "Yes",
    "YES",
    "no",
    "No",
    "NO",
    "on",
    "On",
    "ON",
    "off",
    "Off",
    "OFF",
    "true",
    "True",
    "TRUE",
    "false",
    "False",
    "FALSE",
    "yEs",
    "tRUE",
    "~",
    "null",
    "Null",
    "NULL",
    "nULL",
    "0644",
    "012",
    "08",
    "0o17",
    "0x1F",
    "0x_1F",
    "0X1F",
    "0b101",
    "0B101",
    "1_000",
    "+12",
    "-0",
    "+0",
    "-012",
    "1e3",
    "1E3",
    "1e+3",
    "1.",
    ".5",
    "-.5",
    "._1",
    "1.5e-3",
    "0.1_2",
    "1__0",
    "_1",
    "1_",
    "0x",
    "0b",
    "1:20",
    "1:20:30",
    "2001-12-14",
    "12e",
    "e3",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "18446744073709551616",
    "0.",
    "-",
    "+",
    ".",
    "a b",
    "@x",
    "=",
    "<<",
];

/// Unicode's line breaks and other characters libyaml reads apart.
pub const BREAKS: &[&str] = &["\u{2028}", "\u{2029}", "\u{85}", "\u{feff}", "\t", "\r"];

/// The layouts a scalar of [`SCALARS`] is written in (at `{}`): block and
/// flow, plain, quoted, after a tab, before a comment, after a byte order
/// mark, with CRLF line ends.
pub const SCALAR_LAYOUTS: &[&str] = &[
    "a: {}\n",
    "- {}\n",
    "{{a: {}}}\n",
    "a: [{}]\n",
    "a:\t{}\n",
    "a: {} # note\n",
    "a: '{}'\n",
    "a: \"{}\"\n",
    "a:\n  - {}\n",
    "\u{feff}a: {}\n",
    "a: {}\r\nb: 1\r\n",
];

/// The layouts a character of [`BREAKS`] is written in (at `{}`): in a
/// comment, a plain or quoted scalar, after a colon, between lines and
/// between a flow mapping's entries.
pub const BREAK_LAYOUTS: &[&str] = &[
    "a: 1 # note{}b: 2\n",
    "a: x{}y\n",
    "a: 'x{}y'\n",
    "a: \"x{}y\"\n",
    "a: x{}\n",
    "a:{}1\n",
    "# note{}a: 1\n",
    "a: 1\n{}b: 2\n",
    "{{a: 1,{}b: 2}}\n",
];

/// Every generated document: each scalar in each of its layouts, each
/// character in each of its.
pub fn documents() -> Vec<String> {
    let mut out = Vec::new();
    for scalar in SCALARS {
        for layout in SCALAR_LAYOUTS {
            out.push(layout.replace("{}", scalar));
        }
    }
    for line_break in BREAKS {
        for layout in BREAK_LAYOUTS {
            out.push(layout.replace("{}", line_break));
        }
    }
    out
}

/// Characters strings are made of: those YAML gives a meaning at some
/// place, Unicode's line breaks and byte order mark, and letters.
pub const ALPHABET: &[&str] = &[
    "a", "y", "n", "N", "Y", "0", "1", "x", "e", ".", "_", "+", "-", ":", "#", " ", "\t", "'",
    "\"", "\\", "[", "]", "{", "}", ",", "&", "*", "!", "|", ">", "%", "@", "`", "?", "~", "\n",
    "\u{2028}", "\u{2029}", "\u{85}", "\u{feff}", "\u{a0}", "é", "ñ",
];

/// Strings of up to four characters of [`ALPHABET`], each once in order,
/// and YAML 1.1's special words.
pub fn strings() -> Vec<String> {
    let mut out: Vec<String> = SCALARS.iter().map(|s| s.to_string()).collect();
    // A deterministic walk through the alphabet's pairs and triples.
    for (i, a) in ALPHABET.iter().enumerate() {
        for (j, b) in ALPHABET.iter().enumerate() {
            out.push(format!("{a}{b}"));
            let c = ALPHABET[(i * 7 + j * 3) % ALPHABET.len()];
            out.push(format!("{a}{b}{c}"));
            out.push(format!("{c}x{a}{b}"));
        }
    }
    out
}

/// A Deployment whose pod template has room for more lines: its
/// annotations at `ANNOTATIONS` (8 spaces), its pod spec at `POD` (6), its
/// container at `CONTAINER` (10). Each slot is replaced by whole lines.
pub const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
      annotations:
        note: x
ANNOTATIONS    spec:
POD      containers:
        - name: web
          image: nginx
CONTAINER";

/// The slots of [`DEPLOYMENT`], each with its indent and the keys whose
/// values the tool reads there (booleans, numbers, names, the meshes'
/// annotations).
pub const SLOTS: &[(&str, usize, &[&str])] = &[
    (
        "ANNOTATIONS",
        8,
        &[
            "sidecar.istio.io/inject",
            "linkerd.io/inject",
            "config.linkerd.io/skip-inbound-ports",
            "config.linkerd.io/proxy-await",
            "traffic.sidecar.istio.io/excludeOutboundPorts",
            "proxy.istio.io/config",
            "config.alpha.linkerd.io/proxy-wait-before-exit-seconds",
            "config.linkerd.io/proxy-log-level",
            "sidecar.istio.io/proxyImage",
        ],
    ),
    (
        "POD",
        6,
        &[
            "hostNetwork",
            "automountServiceAccountToken",
            "terminationGracePeriodSeconds",
            "shareProcessNamespace",
            "hostname",
            "serviceAccountName",
        ],
    ),
    (
        "CONTAINER",
        10,
        &[
            "stdin",
            "imagePullPolicy",
            "workingDir",
            "terminationMessagePath",
        ],
    ),
];

/// `text` with each line indented by `indent` spaces.
pub fn indented(text: &str, indent: usize) -> String {
    let pad = " ".repeat(indent);
    text.split_inclusive('\n')
        .map(|line| format!("{pad}{line}"))
        .collect()
}

/// A layout of [`SCALAR_LAYOUTS`] or [`BREAK_LAYOUTS`] with `piece` in it, as
/// lines at `indent` whose keys are `key` (for `a`) and `next` (for `b`).
pub fn field(indent: usize, key: &str, next: &str, layout: &str, piece: &str) -> String {
    let text = layout
        .replace("a:", "\u{0}A:")
        .replace("b:", "\u{0}B:")
        .replace("{}", piece);
    let text = if text.starts_with('\u{0}')
        || text.starts_with("\u{feff}\u{0}")
        || text.starts_with('#')
    {
        text
    } else if text.starts_with('{') {
        format!("\u{0}A: {text}")
    } else {
        format!("\u{0}A:\n{text}")
    };
    indented(&text.replace("\u{0}A", key).replace("\u{0}B", next), indent)
}

/// [`DEPLOYMENT`] with `lines` in the slot `slot` and the other slots empty.
pub fn deployment(slot: &str, lines: &str) -> String {
    let mut text = DEPLOYMENT.replace(slot, lines);
    for (other, _, _) in SLOTS {
        text = text.replace(other, "");
    }
    text
}

/// A Deployment in JSON on one line named `name`, whose label holds an
/// escaped surrogate pair; several make a stream (NDJSON).
pub fn json_line(name: &str) -> String {
    format!(
        r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"{name}"}},"spec":{{"selector":{{"matchLabels":{{"app":"{name}"}}}},"template":{{"metadata":{{"labels":{{"app":"{name}","emoji":"\ud83d\ude00"}}}},"spec":{{"containers":[{{"name":"{name}","image":"nginx"}}]}}}}}}}}"#
    )
}

/// A pod in a `kind: List` (or a KRM function's `ResourceList`), with
/// `lines` in its spec at 4 spaces.
pub fn in_a_list(kind: &str, lines: &str) -> String {
    let api = if kind == "List" {
        "v1"
    } else {
        "config.kubernetes.io/v1"
    };
    format!(
        "apiVersion: {api}\nkind: {kind}\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p\n    annotations:\n      linkerd.io/inject: enabled\n  spec:\n{lines}    containers:\n    - name: p\n      image: busybox\n"
    )
}

/// Manifests the fuzz targets start from: each scalar in each layout as a
/// field of a Deployment (the key cycling through the slots' keys), each
/// line break in each layout in each slot, the raw documents, JSON streams
/// and lists.
pub fn manifests() -> Vec<String> {
    let keys: Vec<(&str, usize, &str)> = SLOTS
        .iter()
        .flat_map(|(slot, indent, keys)| keys.iter().map(move |key| (*slot, *indent, *key)))
        .collect();
    let mut out = documents();
    let mut n = 0;
    for scalar in SCALARS {
        for layout in SCALAR_LAYOUTS {
            let (slot, indent, key) = keys[n % keys.len()];
            n += 1;
            out.push(deployment(slot, &field(indent, key, "x", layout, scalar)));
        }
        out.push(in_a_list("List", &format!("    hostNetwork: {scalar}\n")));
    }
    for line_break in BREAKS {
        for layout in BREAK_LAYOUTS {
            for (slot, indent, keys) in SLOTS {
                out.push(deployment(
                    slot,
                    &field(*indent, keys[0], keys[1], layout, line_break),
                ));
            }
            out.push(in_a_list(
                "ResourceList",
                &field(4, "hostNetwork", "hostname", layout, line_break),
            ));
        }
        // A byte order mark or line break starting a later document.
        out.push(format!(
            "{}---\n{line_break}{}",
            deployment("POD", ""),
            deployment("POD", "").replace("web", "api")
        ));
    }
    out.push(format!("{}\n{}\n", json_line("web"), json_line("api")));
    out.push(format!("{}{}\n", json_line("web"), json_line("api")));
    out.push(format!("[{}]\n", json_line("web")));
    // A JSON List, on one line and as kubectl prints it: read item by item.
    let (web, api) = (json_line("web"), json_line("api"));
    out.push(format!(
        "{{\"apiVersion\":\"v1\",\"items\":[{web},{api}],\"kind\":\"List\"}}\n"
    ));
    out.push(format!(
        "{{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n        {web},\n        {api}\n    ],\n    \"kind\": \"List\"\n}}\n"
    ));
    out.push(deployment(
        "POD",
        "      # a note\u{2028}      hostNetwork: true\n",
    ));
    out.push(deployment("CONTAINER", "").replace("image: nginx", "image:\tnginx"));
    out
}

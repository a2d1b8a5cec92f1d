//! Injection templates and streams of workloads built from bytes: the
//! generators of the reference test (`reference.rs`) and of the fuzz target
//! `templates` (which includes this file), so that both drive the cluster's
//! template path with programs no one wrote by hand.
//!
//! A template does with the workload's strings what injection templates
//! do (copies them plain, quoted and as JSON, compares, measures, cuts,
//! hashes and replaces in them, keys maps with them, ranges over them), in
//! the places a template puts them (a label's key and value, an annotation,
//! an env value, an argument). The workloads share one shape and differ in
//! their strings, which is where renderings are shared: names long and
//! short, strings that read as numbers, booleans or null, with spaces,
//! quotes and colons.
//!
//! Standard library only: the fuzz crate builds this file too.

/// Bytes read one at a time, from the start again once all are read (and
/// zeros when there are none).
pub struct Bytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Bytes<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Bytes { data, at: 0 }
    }

    pub fn next(&mut self) -> u8 {
        let byte = match self.data.len() {
            0 => 0,
            n => self.data[self.at % n],
        };
        self.at += 1;
        byte
    }

    /// One of `from`, chosen by the next byte.
    pub fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[usize::from(self.next()) % from.len()]
    }
}

/// Where a template takes a workload's strings from.
const STRINGS: [&str; 8] = [
    ".DeploymentMeta.Name",
    ".DeploymentMeta.Namespace",
    "(index .ObjectMeta.Labels \"app\")",
    "(index .ObjectMeta.Labels \"version\")",
    "(index .Spec.Containers 0).Name",
    "(index .Spec.Containers 0).Image",
    "(annotation .ObjectMeta `example.com/note` `none`)",
    "(toLower .TypeMeta.Kind)",
];

/// What a template does with a string `@S` (and a second one, `@T`): each
/// an expression of Go's templates with Sprig's and Istio's functions.
const EXPRESSIONS: [&str; 28] = [
    "{{ @S }}",
    "{{ @S | quote }}",
    "{{ toLower @S }}",
    "{{ upper @S }}",
    "{{ trunc 6 @S }}",
    "{{ @S | trunc 63 | trimSuffix \"-\" }}",
    "{{ len @S }}",
    "{{ @S | replace \"-\" \".\" }}",
    "{{ regexReplaceAll \"[0-9]+\" @S \"N\" }}",
    "{{ toJSON @S }}",
    "{{ @S | default \"none\" }}",
    "{{ sha256sum @S | trunc 8 }}",
    "{{ @S | b64enc }}",
    "{{ title @S }}",
    "{{ @S | trimAll \"-.\" }}",
    "{{ hasPrefix \"web\" @S }}",
    "{{ contains \"a\" @S }}",
    "{{ printf \"%s.%s\" @S @T }}",
    "{{ eq @S \"web-1\" }}",
    "{{ cat @S @T }}",
    "{{ substr 0 3 @S }}",
    "{{ if eq @S \"canary\" }}yes{{ else }}no{{ end }}",
    "{{ if gt (len @S) 8 }}long{{ else }}short{{ end }}",
    "{{ range $k, $v := dict @S \"a\" \"m\" \"b\" }}{{ $k }}={{ $v }};{{ end }}",
    "{{ with @S }}[{{ . }}]{{ end }}",
    "{{ index (dict @S \"x\" \"web-1\" \"y\") @S }}",
    "{{ @S | splitList \"-\" | first }}",
    "{{ @S | nospace | lower }}",
];

/// An expression of a program: one of `EXPRESSIONS` given one or two of
/// `STRINGS`.
fn expression(bytes: &mut Bytes<'_>) -> String {
    let (s, t) = (bytes.pick(&STRINGS), bytes.pick(&STRINGS));
    bytes.pick(&EXPRESSIONS).replace("@S", s).replace("@T", t)
}

/// A sidecar template of a few generated lines in a fixed skeleton (a
/// proxy named `istio-proxy`, as Istio's code expects).
pub fn sidecar_template(bytes: &mut Bytes<'_>) -> String {
    let (mut labels, mut annotations, mut args, mut env) =
        (String::new(), String::new(), String::new(), String::new());
    let lines = 1 + usize::from(bytes.next() % 6);
    for n in 0..lines {
        let expression = expression(bytes);
        match bytes.next() % 6 {
            0 => labels.push_str(&format!("    example.com/g{n}: \"{expression}\"\n")),
            1 => labels.push_str(&format!("    g{n}-{expression}: \"x\"\n")),
            2 => annotations.push_str(&format!("    example.com/g{n}: {expression}\n")),
            3 => annotations.push_str(&format!("    example.com/g{n}: '{expression}'\n")),
            4 => args.push_str(&format!("    - \"--g{n}={expression}\"\n")),
            _ => env.push_str(&format!(
                "    - name: G{n}\n      value: |-\n        {expression}\n"
            )),
        }
    }
    format!(
        "metadata:\n  labels:\n    example.com/kept: \"yes\"\n{labels}  annotations:\n    example.com/owner: \"{{{{ .DeploymentMeta.Namespace }}}}/{{{{ .DeploymentMeta.Name }}}}\"\n{annotations}spec:\n  containers:\n  - name: istio-proxy\n    image: \"{{{{ .ProxyImage }}}}\"\n    args:\n    - proxy\n{args}    env:\n    - name: NAME\n      value: {{{{ .DeploymentMeta.Name | quote }}}}\n{env}"
    )
}

/// The two ConfigMaps of an Istio control plane whose only template is
/// `sidecar`, as `kubectl get -o yaml` lists them.
pub fn config_maps(sidecar: &str) -> String {
    let mut template = String::new();
    for line in sidecar.lines() {
        template.push_str("        ");
        template.push_str(line);
        template.push('\n');
    }
    format!(
        r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: istio
  namespace: istio-system
data:
  mesh: |-
    trustDomain: cluster.local
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: istio-sidecar-injector
  namespace: istio-system
data:
  values: |-
    {{"global": {{"hub": "registry.example.com/mesh", "tag": "1.0.0", "proxy": {{"image": "proxyv2"}}, "proxy_init": {{"image": "proxyv2"}}}}}}
  config: |-
    policy: enabled
    defaultTemplates: [sidecar]
    templates:
      sidecar: |
{template}"#
    )
}

/// Workloads' names: short, long (cut by `trunc 63`), with the prefix and
/// suffix templates test for.
const NAMES: [&str; 10] = [
    "web-1",
    "web-2",
    "api",
    "a",
    "web-with-a-name-long-enough-to-be-cut-somewhere-past-sixty-three-chars",
    "store-",
    "canary",
    "x-1-2-3",
    "web-1",
    "db",
];
const NAMESPACES: [&str; 5] = ["shop", "team-a", "shop", "web", "n-1"];
/// Label values: some read as other types where a template copies them
/// plain, some hold the characters and tokens the tool puts in text for a
/// while (`src/sentinel.rs`), which must come out as the user wrote them.
const LABELS: [&str; 19] = [
    "web",
    "v1",
    "canary",
    "true",
    "null",
    "8080",
    "1e3",
    "0x1F",
    "~",
    "has space",
    "a: b",
    "it's",
    "web-",
    "yes",
    "\u{f8ff}true",
    "\u{f8ff}8080",
    "a\u{e000}b",
    "qXmi0Sq",
    "qXmi",
];
const IMAGES: [&str; 4] = [
    "registry.example.com/web:1.0",
    "web",
    "registry.example.com:5000/team/api@sha256:0123456789abcdef",
    "db:latest",
];

/// A stream of `count` Deployments of one shape, their strings chosen by
/// `bytes`; some carry the `example.com/note` annotation the templates
/// read (another shape), or settings the profiles copy. Labels and settings
/// come from a few values chosen for the stream, so that workloads share
/// them (and renderings) as a repository's do.
pub fn workloads(bytes: &mut Bytes<'_>, count: usize) -> String {
    let palette: Vec<&str> = (0..4).map(|_| bytes.pick(&LABELS)).collect();
    let mut stream = String::new();
    for i in 0..count {
        let name = bytes.pick(&NAMES);
        let namespace = bytes.pick(&NAMESPACES);
        let (app, version) = (quoted(bytes.pick(&palette)), quoted(bytes.pick(&palette)));
        let image = bytes.pick(&IMAGES);
        let container = bytes.pick(&["app", "main", "web-1", "istio"]);
        // The note the templates read, or a setting the embedded profiles
        // copy whole into the proxy.
        let note = match bytes.next() % 4 {
            0 => format!(
                "      annotations:\n        example.com/note: {}\n",
                quoted(bytes.pick(&palette))
            ),
            1 => format!(
                "      annotations:\n        sidecar.istio.io/proxyImage: {}\n        config.linkerd.io/proxy-log-level: {}\n",
                quoted(bytes.pick(&palette)),
                quoted(bytes.pick(&palette))
            ),
            _ => String::new(),
        };
        if i > 0 {
            stream.push_str("---\n");
        }
        stream.push_str(&format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  namespace: {namespace}\nspec:\n  selector:\n    matchLabels: {{app: x}}\n  template:\n    metadata:\n      labels:\n        app: {app}\n        version: {version}\n{note}    spec:\n      containers:\n        - name: {container}\n          image: {image}\n          ports: [{{containerPort: 8080, name: http}}]\n"
        ));
    }
    stream
}

/// `s` as a double-quoted YAML scalar.
fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

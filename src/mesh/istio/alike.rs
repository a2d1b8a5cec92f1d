//! The cluster's template rendered once for workloads alike but for their
//! own strings (names, namespaces, labels, images), rather than once per
//! workload: rendered with stand-ins for those strings (see
//! [`crate::reuse::stand_ins`]), the YAML read once, and each workload given
//! the pod with its strings put back.
//!
//! A template is a program, so that is only right when what it did with a
//! stand-in would have been the same with the string: copied into its text.
//! The run records every function call given a stand-in, and a workload
//! takes a rendering only when each of those functions answers its strings
//! as it answered the stand-ins (`eq $container.Name "istio-proxy"` is
//! false for both, `quote` quoted both alike). A call answered otherwise
//! (`toLower .TypeMeta.Kind`, `trunc 63` of a long name) has the strings it
//! was given rendered for real from then on for workloads of that shape,
//! and the rendering is made again. And a string put back where its
//! stand-in stood in the YAML text must read there as the stand-in read
//! ([`stand_ins::fits_in_text`]), else the workload is rendered for real.
//!
//! The first workload of each shape is rendered for real, so a workload
//! alone in its run is always rendered for real.
//!
//! Lifetime: one [`Renderings`] per worker (a core taking units in turn),
//! made when it starts and passed down to the rule that renders the
//! cluster's templates (in `rules::Caches`); its shapes are per injector,
//! for the run, and bounded (`SHAPES_MAX` shapes, `RENDERINGS_MAX`
//! renderings each, `RENDERINGS_PER_WORKER_MAX` in all), past which
//! workloads are rendered for real. Per worker rather than per run: a
//! rendering holds the template's values (`gotemplate::Value`, counted by
//! `Rc`), which cannot cross threads. None is kept with
//! [`Mode::Reference`]. Worth 70% of a run with the cluster's templates
//! (callgrind, 500 generated workloads).
//!
//! What a worker keeps never changes what is written: a hit is checked
//! against every call the rendering made (above), and the tests inject the
//! same workloads alone and among others, and with and without reuse.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use serde_json::{Map, Value as Json};

use super::injector::{ClusterInjector, as_written, cache_key_head};
use super::template_data::{TemplateInputs, template_data};
use super::typed;
use crate::gotemplate::{Call, Value};
use crate::reuse::Mode;
use crate::reuse::spare::Spares;
use crate::reuse::stand_ins::{self, Marks, PLAIN, StandIns};
use crate::yaml::node::{Node, NodeKind, ScalarStyle};

/// The workloads' strings one call keeps as answered alike: enough for the
/// few values a string takes across workloads (a namespace, a port's name),
/// while a call on each workload's own name stops there.
const ANSWERED_MAX: usize = 64;

/// Shapes met per worker (each its key, a few KB), renderings per shape,
/// and renderings per worker (each a pod and the calls it depends on, some
/// tens of KB).
const SHAPES_MAX: usize = 1024;
const RENDERINGS_MAX: usize = 8;
const RENDERINGS_PER_WORKER_MAX: usize = 256;

/// Room made for a shape's key at once: a pod's strings and keys take a few
/// KB, and growing to that by doubling copies it several times.
const KEY_ROOM: usize = 4096;

/// foldhash, seeded per run: a shape's key is a few KB, hashed for every
/// workload, and SipHash showed in profiles.
type Hasher = foldhash::fast::RandomState;

/// The shapes one worker met, by injector and key, with their renderings.
#[derive(Default)]
pub struct Renderings {
    shapes: HashMap<(usize, String), Shape, Hasher>,
    /// The renderings kept in `shapes`.
    kept: usize,
    mode: Mode,
}

impl Renderings {
    pub fn new(mode: Mode) -> Self {
        Renderings {
            mode,
            ..Renderings::default()
        }
    }
}

/// The renderings of one shape of inputs (the inputs with stand-ins).
#[derive(Default)]
struct Shape {
    /// The stand-ins rendered for real: a call answered otherwise for them.
    pinned: Vec<usize>,
    renderings: Vec<Rendering>,
    /// Rendering with stand-ins failed (the template failed, or its text
    /// is not a mapping): rendered for real, which says why.
    never: bool,
}

struct Rendering {
    /// The stand-ins rendered for real, with their strings.
    pins: Vec<(usize, String)>,
    calls: Vec<Watched>,
    /// The pod, with stand-ins, as Istio writes it ([`as_written`]); its
    /// plain scalars holding one marked.
    pod: Json,
    /// Where in `pod` the stand-ins are.
    marks: Option<Marks>,
    /// The stand-ins anywhere in the rendered text (comments and tags too).
    in_text: Vec<usize>,
}

/// The pod template `name` renders for `inputs`, as Istio writes it
/// ([`as_written`]), from a rendering of alike inputs; `None` when the
/// workload is to be rendered for real.
pub(super) fn render(
    injector: &ClusterInjector,
    inputs: &TemplateInputs<'_>,
    name: &str,
    renderings: &mut Renderings,
    spares: &mut Spares,
) -> Option<Json> {
    if renderings.mode == Mode::Reference {
        return None;
    }
    // Every input, said once: a field added to `TemplateInputs` does not
    // build until it is placed here.
    let TemplateInputs {
        // Stood in for: the workload's own strings.
        name: _,
        namespace: _,
        pod_metadata: _,
        pod_spec: _,
        // The injector's own, checked once (`takes_stand_ins`).
        values: _,
        mesh: _,
        // In the shape's key as they are: text like a stand-in there would
        // be filled too.
        api_version,
        kind,
        revision,
        proxy_image,
        proxy_init_image,
        inbound_traffic_policy_mode,
        compliance_policy,
        proxy_config,
        native_sidecars: _,
        proxy_uid: _,
        proxy_gid: _,
    } = *inputs;
    let unstood = [
        api_version,
        kind,
        revision,
        proxy_image,
        proxy_init_image,
        inbound_traffic_policy_mode,
        compliance_policy,
    ];
    if !injector.takes_stand_ins()
        || unstood.iter().any(|s| stand_ins::has_token(s))
        || stand_ins::value_has_token(proxy_config)
    {
        return None;
    }
    // The shape's key: the inputs with stand-ins, written as text (the
    // stand-in values themselves are made only to render).
    let mut stand_ins = StandIns::default();
    let workload = stand_in_text(&mut stand_ins, inputs.name)?;
    let namespace = stand_in_text(&mut stand_ins, inputs.namespace)?;
    let head = TemplateInputs {
        name: &workload,
        namespace: &namespace,
        ..*inputs
    };
    let mut key = cache_key_head(&head, &[name.to_string()]);
    key.reserve(KEY_ROOM);
    for value in [inputs.pod_metadata, inputs.pod_spec] {
        stand_ins.write_stood_in(value, &mut key)?;
        key.push('\u{0}');
    }
    {
        use std::fmt::Write;
        let _ = write!(key, "{}", inputs.proxy_config);
    }
    let key = (injector.id(), key);
    let reals = stand_ins.reals();
    let shapes = &mut renderings.shapes;
    if !shapes.contains_key(&key) && shapes.len() >= SHAPES_MAX {
        return None;
    }
    // The first workload of a shape is rendered for real (most shapes
    // have one workload); stand-ins from the second.
    let shape = match shapes.entry(key) {
        std::collections::hash_map::Entry::Vacant(first) => {
            first.insert(Shape::default());
            return None;
        }
        std::collections::hash_map::Entry::Occupied(shape) => shape.into_mut(),
    };
    if shape.never {
        return None;
    }
    let rendering = loop {
        // A rendering made with the workload's pinned strings, whose
        // calls answer its strings as they answered the stand-ins.
        let (mut failed, mut pins_match) = (Vec::new(), false);
        let pinned_now = shape.pinned.len();
        let found = shape.renderings.iter_mut().position(|r| {
            let pinned_alike = r.pins.iter().all(|(i, real)| reals.get(*i) == Some(real));
            // (Pins only grow: as many means the same.)
            pins_match |= pinned_alike && r.pins.len() == pinned_now;
            pinned_alike && holds_for(&mut r.calls, reals, &mut failed)
        });
        if let Some(at) = found {
            break shape.renderings.get(at)?;
        }
        if shape.renderings.len() >= RENDERINGS_MAX || renderings.kept >= RENDERINGS_PER_WORKER_MAX
        {
            return None;
        }
        failed.retain(|i| !shape.pinned.contains(i));
        if pins_match && failed.is_empty() {
            // Rendered with every pin, its calls still answer otherwise.
            return None;
        }
        failed.sort_unstable();
        failed.dedup();
        shape.pinned.extend(failed);
        match render_shape(injector, inputs, name, reals, &shape.pinned) {
            Some(rendering) => {
                shape.renderings.push(rendering);
                renderings.kept += 1;
            }
            None => {
                shape.never = true;
                return None;
            }
        }
    };
    if !rendering
        .in_text
        .iter()
        .all(|&i| reals.get(i).is_some_and(|r| stand_ins::fits_in_text(r)))
    {
        return None;
    }
    // Its containers copied into those of a workload done with.
    let mut pod = spares.copy_of_pod(&rendering.pod);
    stand_ins::fill_marked_plain_in_place(&mut pod, rendering.marks.as_ref(), reals)?;
    // Written once with its stand-ins: again only when a string filled
    // in is one Istio writes otherwise (`null`, an empty string, `0`
    // where Go leaves it out, a quantity not in canonical form).
    Some(match &rendering.marks {
        Some(marks) if !written_as_filled(&pod, marks, Scope::Pod) => as_written(pod),
        _ => pod,
    })
}

/// A call of a rendering, and the workloads' strings it answered as it
/// answered the stand-ins. Its answer for a workload depends only on the
/// strings of the stand-ins in its arguments and result, so a workload
/// whose strings there were seen before is answered without calling it
/// again: most calls are given strings many workloads share (a container's
/// or port's name, a namespace).
struct Watched {
    call: Call,
    /// The stand-ins in its arguments and result; `None` when a string there
    /// holds a broken one (then it is always called).
    tokens: Option<Vec<usize>>,
    /// The strings of `tokens` of workloads it answered alike, each written
    /// as its length, a colon and itself, one after the other.
    answered: std::collections::HashSet<Box<str>, Hasher>,
}

impl Watched {
    fn new(call: Call) -> Self {
        let found = RefCell::new(Some(Vec::new()));
        let collect = |s: &str| {
            let mut found = found.borrow_mut();
            match (stand_ins::tokens_in(s), found.as_mut()) {
                (Some(tokens), Some(all)) => all.extend(tokens),
                _ => *found = None,
            }
            false
        };
        call.args.iter().for_each(|a| {
            a.holds(&collect);
        });
        match &call.result {
            Ok(value) => value.holds(&collect),
            Err(message) => collect(message),
        };
        let mut tokens = found.into_inner();
        if let Some(tokens) = tokens.as_mut() {
            tokens.sort_unstable();
            tokens.dedup();
        }
        Watched {
            call,
            tokens,
            answered: Default::default(),
        }
    }

    /// The strings of its stand-ins in `reals`, as `answered` keeps them;
    /// `None` when it is not kept.
    fn key(&self, reals: &[String], key: &mut String) -> Option<()> {
        key.clear();
        for &i in self.tokens.as_ref()? {
            let real = reals.get(i)?;
            key.push_str(&real.len().to_string());
            key.push(':');
            key.push_str(real);
        }
        Some(())
    }
}

/// Where a value stands in the pod, for what Istio's writing does to it.
#[derive(Clone, Copy, PartialEq)]
enum Scope {
    /// The pod itself.
    Pod,
    /// The pod's spec.
    Spec,
    /// The spec's containers, init containers or volumes.
    GoList,
    /// Inside a container or volume: written as Go writes it.
    Go,
    /// A container's `limits` or `requests`.
    Quantities,
    /// Anywhere else: only nulls are dropped.
    Other,
}

impl Scope {
    /// The scope of the entry `key` of a mapping in this one.
    fn entry(self, key: &str) -> Scope {
        match self {
            Scope::Pod if key == "spec" => Scope::Spec,
            Scope::Spec if matches!(key, "initContainers" | "containers" | "volumes") => {
                Scope::GoList
            }
            Scope::Go if typed::holds_quantities(key) => Scope::Quantities,
            Scope::Go | Scope::Quantities => Scope::Go,
            _ => Scope::Other,
        }
    }

    /// The scope of an item of a list in this one.
    fn item(self) -> Scope {
        match self {
            Scope::GoList | Scope::Go | Scope::Quantities => Scope::Go,
            _ => Scope::Other,
        }
    }
}

/// Whether `value` (at `scope`), written as Istio writes it before its
/// stand-ins were filled where `marks` says, is still as Istio writes it:
/// only the filled strings can have changed what the writing does.
fn written_as_filled(value: &Json, marks: &Marks, scope: Scope) -> bool {
    match (marks, value) {
        // A mapping whose keys were filled: rare, and checked whole.
        (Marks::Whole, Json::Object(_) | Json::Array(_)) => {
            scope == Scope::Other && !holds_null_entry(value)
        }
        // A scalar: its entry was checked above, and no list drops an item.
        (Marks::Whole, _) => true,
        (Marks::Map(marked), Json::Object(map)) => {
            let mut marked = marked.iter().peekable();
            map.iter().enumerate().all(|(at, (key, entry))| {
                let Some((_, marks)) = marked.next_if(|(i, _)| *i == at) else {
                    return true;
                };
                let kept = match scope {
                    Scope::Go => typed::go_writes_entry(key, entry),
                    Scope::Quantities => {
                        typed::go_writes_entry(key, entry) && typed::quantity_written_as_is(entry)
                    }
                    _ => !entry.is_null(),
                };
                kept && written_as_filled(entry, marks, scope.entry(key))
            })
        }
        (Marks::List(marked), Json::Array(items)) => marked.iter().all(|(at, marks)| {
            items
                .get(*at)
                .is_some_and(|item| written_as_filled(item, marks, scope.item()))
        }),
        _ => false,
    }
}

/// Whether a mapping in `value` has an entry whose value is null.
fn holds_null_entry(value: &Json) -> bool {
    match value {
        Json::Object(map) => map.values().any(|v| v.is_null() || holds_null_entry(v)),
        Json::Array(items) => items.iter().any(holds_null_entry),
        _ => false,
    }
}

/// Whether every call answers the workload's strings as it answered the
/// stand-ins; the stand-ins given to those that do not are added to `failed`.
fn holds_for(calls: &mut [Watched], reals: &[String], failed: &mut Vec<usize>) -> bool {
    let fill = |s: &str| stand_ins::fill_str(s, reals);
    // Most calls are given the same few values (the pod's metadata, its
    // containers), each filled once.
    let mut filled: HashMap<*const (), Value, Hasher> = HashMap::default();
    let mut fill_arg = |arg: &Value| -> Option<Value> {
        let shared = match arg {
            Value::List(items) => Rc::as_ptr(items).cast::<()>(),
            Value::Map(map) => Rc::as_ptr(map).cast::<()>(),
            Value::Struct(fields) => Rc::as_ptr(fields).cast::<()>(),
            _ => return arg.map_strings(&stand_ins::has_token, &fill),
        };
        if let Some(done) = filled.get(&shared) {
            return Some(done.clone());
        }
        let done = arg.map_strings(&stand_ins::has_token, &fill)?;
        filled.insert(shared, done.clone());
        Some(done)
    };
    let mut holds = true;
    let mut key = String::new();
    for watched in calls {
        let known = watched.key(reals, &mut key).is_some();
        if known && watched.answered.contains(key.as_str()) {
            continue;
        }
        let call = &watched.call;
        let args: Option<Vec<Value>> = call.args.iter().map(&mut fill_arg).collect();
        let result = match &call.result {
            Ok(value) => value.map_strings(&stand_ins::has_token, &fill).map(Ok),
            Err(message) => fill(message).map(Err),
        };
        let answers = match (args, result) {
            (Some(args), Some(result)) => call.answers(&args, &result),
            _ => false,
        };
        if answers && known && watched.answered.len() < ANSWERED_MAX {
            watched.answered.insert(key.as_str().into());
        }
        if !answers {
            holds = false;
            let found = RefCell::new(Vec::new());
            let collect = |s: &str| {
                found
                    .borrow_mut()
                    .extend(stand_ins::tokens_in(s).unwrap_or_default());
                false
            };
            call.args.iter().for_each(|a| {
                a.holds(&collect);
            });
            failed.extend(found.into_inner());
        }
    }
    holds
}

/// `s` as the shape knows it: a stand-in, unless it is empty.
fn stand_in_text(stand_ins: &mut StandIns, s: &str) -> Option<String> {
    match s {
        "" => Some(String::new()),
        s => stand_ins.stand_in(s),
    }
}

/// Template `name` rendered for the shape of `inputs` (their strings
/// stood in, in the order of the shape's key), the stand-ins `pinned` given
/// their strings; `None` when it fails or its text is no mapping.
fn render_shape(
    injector: &ClusterInjector,
    inputs: &TemplateInputs<'_>,
    name: &str,
    reals: &[String],
    pinned: &[usize],
) -> Option<Rendering> {
    let mut stand_ins = StandIns::default();
    let workload = stand_in_text(&mut stand_ins, inputs.name)?;
    let namespace = stand_in_text(&mut stand_ins, inputs.namespace)?;
    let metadata = stand_ins.stand_in_value(inputs.pod_metadata)?;
    let spec = stand_ins.stand_in_value(inputs.pod_spec)?;
    let shape = TemplateInputs {
        name: &workload,
        namespace: &namespace,
        pod_metadata: &metadata,
        pod_spec: &spec,
        ..*inputs
    };
    render_pinned(injector, &shape, name, reals, pinned)
}

/// Template `name` rendered for the shape's inputs, the stand-ins `pinned`
/// given their strings; `None` when it fails or its text is no mapping.
fn render_pinned(
    injector: &ClusterInjector,
    shape: &TemplateInputs<'_>,
    name: &str,
    reals: &[String],
    pinned: &[usize],
) -> Option<Rendering> {
    // Each stand-in stands for itself but the pinned ones.
    let with_pins: Vec<String> = (0..reals.len())
        .map(|i| match pinned.contains(&i) {
            true => reals.get(i).cloned().unwrap_or_default(),
            false => stand_ins::token(i),
        })
        .collect();
    let text = |s: &str| stand_ins::fill_str(s, &with_pins);
    let (workload, namespace) = (text(shape.name)?, text(shape.namespace)?);
    let metadata = stand_ins::fill(shape.pod_metadata, &with_pins)?;
    let spec = stand_ins::fill(shape.pod_spec, &with_pins)?;
    let inputs = TemplateInputs {
        name: &workload,
        namespace: &namespace,
        pod_metadata: &metadata,
        pod_spec: &spec,
        ..*shape
    };
    let data = template_data(&inputs);
    let template = injector.template(name)?;
    let (text, calls) = template
        .execute_watching(&data, injector.funcs(), &stand_ins::has_token)
        .ok()?;
    let pod = as_written(read_marked(&text)?);
    // Every stand-in in the text, read or not (in a comment, a tag), must
    // be a string that reads there as the stand-in did.
    let in_text = stand_ins::tokens_in(&text)?;
    Some(Rendering {
        pins: pinned
            .iter()
            .map(|&i| (i, reals.get(i).cloned().unwrap_or_default()))
            .collect(),
        calls: calls.into_iter().map(Watched::new).collect(),
        marks: Marks::of(&pod),
        pod,
        in_text,
    })
}

/// The rendered text as a mapping, its plain scalars that hold a stand-in
/// marked [`PLAIN`] (read again once filled); `None` when a scalar holds
/// the mark itself.
fn read_marked(text: &str) -> Option<Json> {
    let mut documents = crate::yaml::parse_stream(text).ok()?;
    let Some(root) = documents.first_mut().and_then(|d| d.root.as_mut()) else {
        return Some(Json::Object(Map::new()));
    };
    if !mark_plain(root) {
        return None;
    }
    match crate::yaml::value::to_value(root).ok()? {
        Json::Null => Some(Json::Object(Map::new())),
        value @ Json::Object(_) => Some(value),
        _ => None,
    }
}

/// Marks `node`'s plain scalars that hold a stand-in; false when a scalar
/// (or key) holds the mark already.
fn mark_plain(node: &mut Node<'_>) -> bool {
    match &mut node.kind {
        NodeKind::Scalar { text, style, tag } => {
            if text.contains(PLAIN) {
                return false;
            }
            let plain = match tag.as_deref() {
                None => *style == ScalarStyle::Plain,
                Some("bool" | "int" | "float") => true,
                Some(_) => false,
            };
            if plain && stand_ins::has_token(text) {
                *text = Cow::Owned(format!("{PLAIN}{text}"));
                *style = ScalarStyle::DoubleQuoted;
                *tag = None;
            }
            true
        }
        // Keys are read as text whatever their style.
        NodeKind::Map { entries, .. } => entries
            .iter_mut()
            .all(|(k, v)| !k.as_str().is_some_and(|k| k.contains(PLAIN)) && mark_plain(v)),
        NodeKind::Seq { items, .. } => items.iter_mut().all(mark_plain),
        NodeKind::Alias(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A template that does with the pod's strings what Istio's do: copies
    /// them plain, quoted and as JSON, compares them, lowers, cuts and
    /// trims them, looks keys up, builds lists.
    const TEMPLATE: &str = r#"metadata:
  labels:
    app: {{ index .ObjectMeta.Labels "app" }}
    canonical: {{ index .ObjectMeta.Labels "app" | default .DeploymentMeta.Name | trunc 12 | trimAll "-_." | quote }}
    kind: {{ toLower .TypeMeta.Kind }}
  annotations:
    all: {{ toJson .ObjectMeta.Labels }}
    {{- if eq (index .ObjectMeta.Labels "mode") "special" }}
    special: "yes"
    {{- end }}
spec:
  containers:
  - name: istio-proxy
    image: "{{ .ProxyImage }}"
    args: ["--name", "{{ .DeploymentMeta.Name }}", {{ printf "%s.%s" .DeploymentMeta.Name .DeploymentMeta.Namespace | quote }}]
    env:
    - name: OWNER
      value: kubernetes://{{ .DeploymentMeta.Namespace }}/{{ .DeploymentMeta.Name }}
    - name: APPS
      value: "{{ $c := list }}{{ range .Spec.Containers }}{{ if ne .Name "istio-proxy" }}{{ $c = append $c .Name }}{{ end }}{{ end }}{{ join "," $c }}"
    - name: LEN
      value: "{{ len .DeploymentMeta.Name }}"
    - name: PORT
      value: {{ index .ObjectMeta.Labels "port" }}
"#;

    fn injector() -> ClusterInjector {
        let config = json!({"templates": {"sidecar": TEMPLATE}});
        ClusterInjector::read("test".into(), &config, json!({}), json!({})).expect("reads")
    }

    fn inputs<'a>(
        kind: &'a str,
        name: &'a str,
        metadata: &'a Json,
        spec: &'a Json,
        empty: &'a Json,
    ) -> TemplateInputs<'a> {
        TemplateInputs {
            api_version: "apps/v1",
            kind,
            name,
            namespace: "team-1",
            pod_metadata: metadata,
            pod_spec: spec,
            values: empty,
            mesh: empty,
            proxy_config: empty,
            revision: "default",
            native_sidecars: false,
            proxy_image: "proxyv2:1.0",
            proxy_init_image: "proxyv2:1.0",
            proxy_uid: 1337,
            proxy_gid: 1337,
            inbound_traffic_policy_mode: "",
            compliance_policy: "",
        }
    }

    /// Workloads of one shape, with strings that read differently plain
    /// (numbers, booleans, null), need quotes, cut differently, compare
    /// differently: each comes out as rendered for real, whichever came
    /// before it.
    #[test]
    fn alike_workloads_come_out_as_each_rendered_for_real() {
        let injector = injector();
        let (mut renderings, mut spares) = reusing();
        let empty = json!({});
        let cases = [
            ("Deployment", "web-0", "web", "8080", "plain"),
            ("Deployment", "web-1", "web-one", "9090", "plain"),
            ("StatefulSet", "db", "db", "true", "special"),
            (
                "Deployment",
                "a-very-long-workload-name",
                "a-very-long-app-name-",
                "null",
                "x",
            ),
            ("Deployment", "spaced", "with space", "1e3", "special"),
            ("Deployment", "quoted", "it's \"q\"", "0x1F", "plain"),
            ("Deployment", "colon", "a: b", "~", "plain"),
            ("Deployment", "istio-proxy", "x", "yes", "plain"),
            ("Deployment", "web-2", "web-2", "8081", "plain"),
        ];
        for (kind, name, app, port, mode) in cases {
            let metadata = json!({"labels": {"app": app, "mode": mode, "port": port}});
            let spec = json!({"containers": [
                {"name": name, "image": format!("registry.example.com/{name}:1")},
                {"name": "istio-proxy", "image": "proxy"}]});
            let inputs = inputs(kind, name, &metadata, &spec, &empty);
            let names = ["sidecar".to_string()];
            // Those whose text does not read fail alike.
            let got = injector.render(&inputs, &names, &mut renderings, &mut spares);
            let real = injector.render_for_real(&inputs, &names);
            assert_eq!(got, real, "{name} {app} {port}");
        }
        // Strings the template compared or measured were rendered for real.
        let pinned = renderings
            .shapes
            .iter()
            .filter(|((id, _), _)| *id == injector.id())
            .any(|(_, shape)| !shape.pinned.is_empty());
        assert!(pinned, "eq, len and trunc pinned their strings");
    }

    /// Renders each workload `(name, namespace, metadata, spec)` of `cases`
    /// in order with a fresh injector of `template`, and asserts that each
    /// comes out as rendered for real.
    fn each_as_for_real(template: &str, cases: &[(&str, &str, Json, Json)]) -> Renderings {
        let (mut renderings, mut spares) = reusing();
        let config = json!({"templates": {"sidecar": template}});
        let injector =
            ClusterInjector::read("test".into(), &config, json!({}), json!({})).expect("reads");
        let empty = json!({});
        let names = ["sidecar".to_string()];
        for (i, (name, namespace, metadata, spec)) in cases.iter().enumerate() {
            let inputs = TemplateInputs {
                namespace,
                ..inputs("Deployment", name, metadata, spec, &empty)
            };
            let got = injector.render(&inputs, &names, &mut renderings, &mut spares);
            let real = injector.render_for_real(&inputs, &names);
            assert_eq!(got, real, "workload {i} ({name}/{namespace})");
        }
        renderings
    }

    /// What one worker reuses, as the pipeline makes it.
    fn reusing() -> (Renderings, Spares) {
        (Renderings::new(Mode::Reuse), Spares::new(Mode::Reuse))
    }

    fn spec_of(name: &str) -> Json {
        json!({"containers": [{"name": name, "image": "app:1"}]})
    }

    /// `range` over a map keyed by a workload's string goes in the string's
    /// order, not the stand-in's: no call records the iteration, so such a
    /// shape is rendered for real.
    #[test]
    fn ranging_over_a_map_keyed_by_a_workload_string_keeps_the_strings_order() {
        let template = r#"metadata:
  annotations:
    order: "{{ range $k, $v := dict .DeploymentMeta.Name "n" "m" "m" }}{{ $k }}={{ $v }};{{ end }}"
"#;
        let meta = json!({});
        each_as_for_real(
            template,
            &[
                ("alpha", "team-1", meta.clone(), spec_of("c")),
                ("beta", "team-1", meta.clone(), spec_of("c")),
            ],
        );
    }

    /// A map built with two workload strings as keys has one entry when the
    /// strings are equal, where the (always distinct) stand-ins would give
    /// it two: its calls do not answer alike, and it is rendered for real.
    #[test]
    fn ranging_over_a_map_whose_stand_in_keys_are_one_string() {
        let template = r#"metadata:
  annotations:
    pairs: "{{ range $k, $v := dict .DeploymentMeta.Name "a" .DeploymentMeta.Namespace "b" }}{{ $k }}={{ $v }};{{ end }}"
"#;
        let meta = json!({});
        each_as_for_real(
            template,
            &[
                ("web", "team-1", meta.clone(), spec_of("c")),
                ("same", "same", meta.clone(), spec_of("c")),
            ],
        );
    }

    /// A label key (keys are not stood in) that looks like a stand-in is
    /// kept as it is: the pod is rendered for real.
    #[test]
    fn a_label_key_spelled_like_a_stand_in_is_kept() {
        let template =
            "metadata:\n  annotations:\n    labels: {{ toJson .ObjectMeta.Labels | quote }}\n";
        let meta = json!({"labels": {"qXmi0Sq": "v"}});
        each_as_for_real(
            template,
            &[
                ("web-0", "team-1", meta.clone(), spec_of("c")),
                ("web-1", "team-1", meta.clone(), spec_of("c")),
            ],
        );
    }

    /// A string written where the YAML reading drops it (in a comment) must
    /// still read there as its stand-in did: an annotation holding a line
    /// break, which starts a new entry, is rendered for real.
    #[test]
    fn a_string_written_in_a_comment_is_read_as_the_real_text_reads() {
        let template = r#"metadata:
  annotations:
    # note: {{ index .ObjectMeta.Annotations "note" }}
    fixed: "yes"
"#;
        each_as_for_real(
            template,
            &[
                (
                    "web-0",
                    "team-1",
                    json!({"annotations": {"note": "one"}}),
                    spec_of("c"),
                ),
                (
                    "web-1",
                    "team-1",
                    json!({"annotations": {"note": "two\n    injected: \"by the note\""}}),
                    spec_of("c"),
                ),
            ],
        );
    }

    /// A string of the cluster's configuration (here the template's own
    /// text) spelled like a stand-in is kept as it is: the configuration's
    /// pods are rendered for real.
    #[test]
    fn the_templates_own_text_spelled_like_a_stand_in_is_kept() {
        let template = "metadata:\n  annotations:\n    literal: qXmi0Sq\n    name: {{ .DeploymentMeta.Name }}\n";
        let meta = json!({});
        each_as_for_real(
            template,
            &[
                ("web-0", "team-1", meta.clone(), spec_of("c")),
                ("web-1", "team-1", meta.clone(), spec_of("c")),
            ],
        );
    }

    /// A label value `null` copied into a key is refused, as when rendered
    /// for real (no key may be null), not read as the text its stand-in was.
    #[test]
    fn a_string_copied_into_a_key_reads_as_the_real_key_reads() {
        let template =
            "metadata:\n  labels:\n    {{ index .ObjectMeta.Labels \"tier\" }}: \"yes\"\n";
        each_as_for_real(
            template,
            &[
                (
                    "web-0",
                    "team-1",
                    json!({"labels": {"tier": "front"}}),
                    spec_of("c"),
                ),
                (
                    "web-1",
                    "team-1",
                    json!({"labels": {"tier": "null"}}),
                    spec_of("c"),
                ),
            ],
        );
    }

    /// The mark of a plain scalar is a character a string can hold: a
    /// quoted string of the template that starts with it (written as an
    /// escape, so not in the text) stays a string.
    #[test]
    fn a_string_starting_with_the_plain_mark_stays_a_string() {
        let template = "metadata:\n  annotations:\n    mark: \"\\uF8FF1\"\n    name: {{ .DeploymentMeta.Name }}\n";
        let meta = json!({});
        each_as_for_real(
            template,
            &[
                ("web-0", "team-1", meta.clone(), spec_of("c")),
                ("web-1", "team-1", meta.clone(), spec_of("c")),
            ],
        );
    }

    /// A lookup (`index`, `hasKey`, `get`, `isset`, `annotation`) is
    /// recorded only when what it reads can hold a workload's string: a key
    /// that is one, a map keyed by one (the real string may be the key
    /// looked up), an entry that holds one. Each lookup alone in a template
    /// comes out as for real.
    #[test]
    fn lookups_by_or_in_workload_strings_come_out_as_for_real() {
        let lookups = [
            r#"{{ annotation .ObjectMeta (index .ObjectMeta.Labels "app") "none" }}"#,
            r#"{{ isset .ObjectMeta.Annotations (index .ObjectMeta.Labels "app") }}"#,
            r#"{{ hasKey .ObjectMeta.Annotations (index .ObjectMeta.Labels "app") }}"#,
            r#"{{ get .ObjectMeta.Annotations (index .ObjectMeta.Labels "app") }}"#,
            r#"{{ index .ObjectMeta.Annotations (index .ObjectMeta.Labels "app") }}"#,
            r#"{{ hasKey (dict .DeploymentMeta.Name "x") "web-1" }}"#,
            r#"{{ get (dict .DeploymentMeta.Name "x") "web-1" }}"#,
            r#"{{ index (dict .DeploymentMeta.Name "x") "web-1" }}"#,
            r#"{{ annotation .ObjectMeta "fixed" "none" }}/{{ index .ObjectMeta.Annotations "fixed" }}"#,
        ];
        let meta = |app: &str, fixed: &str| json!({"labels": {"app": app}, "annotations": {"b": "1", "fixed": fixed}});
        for lookup in lookups {
            let template = format!("metadata:\n  annotations:\n    got: \"{lookup}\"\n");
            each_as_for_real(
                &template,
                &[
                    ("web-0", "team-1", meta("a", "f"), spec_of("c")),
                    ("web-2", "team-1", meta("c", "f"), spec_of("c")),
                    ("web-1", "team-1", meta("b", "g"), spec_of("c")),
                    ("web-3", "team-1", meta("d", "fixed"), spec_of("c")),
                ],
            );
        }
    }

    /// A call is answered from what it answered before only for the same
    /// strings: workloads that share a namespace, with names a cut leaves
    /// whole or not, come out as for real in any order, and the calls given
    /// strings that repeat keep their answers for them.
    #[test]
    fn calls_are_answered_from_before_only_for_the_same_strings() {
        let template = r#"metadata:
  annotations:
    ns: {{ .DeploymentMeta.Namespace | quote }}
    short: {{ trunc 8 .DeploymentMeta.Name | quote }}
    both: {{ printf "%s.%s" .DeploymentMeta.Name .DeploymentMeta.Namespace | trunc 20 | quote }}
"#;
        let meta = json!({"labels": {"app": "web"}});
        let cases: Vec<(&str, &str, Json, Json)> = [
            ("web-0", "team-1"),
            ("web-1", "team-1"),
            ("web-1", "team-2"),
            ("a-very-long-name", "team-1"),
            ("web-1", "team-1"),
            ("web-2", "team-2"),
            ("web-1", "team-long-namespace"),
            ("web-3", "team-1"),
        ]
        .iter()
        .map(|(name, ns)| (*name, *ns, meta.clone(), spec_of("app")))
        .collect();
        let renderings = each_as_for_real(template, &cases);
        let kept = renderings
            .shapes
            .values()
            .flat_map(|shape| &shape.renderings)
            .flat_map(|rendering| &rendering.calls)
            .any(|watched| watched.answered.len() > 1);
        assert!(kept, "a call given the namespace keeps its answers");
    }

    /// `otelResourceAttributes` reads the workload's strings only when a
    /// tracing provider asks for the attributes: with one, the annotation
    /// that names the service's version wins over the image's tag.
    #[test]
    fn otel_attributes_come_out_as_for_real_with_and_without_a_provider() {
        let template = "metadata:\n  annotations:\n    otel: \"{{ otelResourceAttributes .MeshConfig .ObjectMeta.Annotations .ObjectMeta.Labels .DeploymentMeta.Namespace .Spec.Containers }}\"\n";
        let config = json!({"templates": {"sidecar": template}});
        let provider = json!({"extensionProviders": [{"name": "otel", "opentelemetry": {
            "service": "collector", "port": 4317, "serviceAttributeEnrichment": "OTEL_SEMANTIC_CONVENTIONS"}}]});
        for mesh in [json!({}), provider] {
            let injector = ClusterInjector::read("test".into(), &config, json!({}), mesh.clone())
                .expect("reads");
            let empty = json!({});
            let names = ["sidecar".to_string()];
            let version = "resource.opentelemetry.io/service.version";
            let cases = [
                ("web-0", json!({"annotations": {"a": "1"}}), "app:1"),
                ("web-1", json!({"annotations": {"a": "2"}}), "app:2"),
                ("web-2", json!({"annotations": {version: "9"}}), "app:3"),
                ("web-3", json!({"annotations": {version: "8"}}), "app:4"),
            ];
            let mut otel = Vec::new();
            let (mut renderings, mut spares) = reusing();
            for (name, metadata, image) in &cases {
                let spec = json!({"containers": [{"name": name, "image": image}]});
                let inputs = TemplateInputs {
                    mesh: &mesh,
                    ..inputs("Deployment", name, metadata, &spec, &empty)
                };
                let got = injector.render(&inputs, &names, &mut renderings, &mut spares);
                let real = injector.render_for_real(&inputs, &names);
                assert_eq!(got, real, "{name} with {mesh}");
                otel.push(format!("{got:?}"));
            }
            assert!(
                otel.iter().all(|o| o.contains("service.version")
                    != mesh.as_object().is_some_and(|m| m.is_empty())),
                "{otel:?}"
            );
        }
    }

    /// Strings that Istio's writing drops or changes once filled (a plain
    /// `0` host port, a plain `false` or `null`, a quantity made canonical):
    /// each workload comes out as rendered for real.
    #[test]
    fn strings_istio_writes_differently_once_filled_come_out_as_for_real() {
        let template = r#"metadata:
  annotations:
    copied: {{ index .ObjectMeta.Labels "note" }}
spec:
  containers:
  - name: istio-proxy
    image: proxy
    env:
    - name: APP
      value: "{{ index .ObjectMeta.Labels "app" }}"
    ports:
    - containerPort: 15090
      hostPort: {{ index .ObjectMeta.Labels "port" }}
    volumeMounts:
    - name: data
      mountPath: /data
      readOnly: {{ index .ObjectMeta.Labels "ro" }}
    resources:
      limits:
        cpu: "{{ index .ObjectMeta.Labels "cpu" }}"
"#;
        // Each workload after the second has one string that Istio writes
        // otherwise once filled: left out, or canonical.
        let meta = |app: &str, port: &str, ro: &str, cpu: &str, note: &str| json!({"labels": {"app": app, "port": port, "ro": ro, "cpu": cpu, "note": note}});
        let cases = [
            meta("a", "8080", "true", "1", "x"),
            meta("b", "8081", "true", "2", "y"),
            meta("c", "0", "true", "2", "y"),
            meta("d", "8082", "false", "2", "y"),
            meta("e", "8083", "true", "2000m", "y"),
            meta("f", "8084", "true", "1024Mi", "y"),
            meta("g", "null", "true", "2", "y"),
            meta("", "8085", "true", "2", "y"),
            meta("h", "8086", "true", "2", "~"),
        ];
        let cases: Vec<_> = cases
            .into_iter()
            .enumerate()
            .map(|(i, meta)| (format!("web-{i}"), meta))
            .collect();
        let cases: Vec<_> = cases
            .iter()
            .map(|(name, meta)| (name.as_str(), "team-1", meta.clone(), spec_of("c")))
            .collect();
        each_as_for_real(template, &cases);
        let plain_free = "spec:\n  containers:\n  - name: istio-proxy\n    env:\n    - name: APP\n      value: \"{{ index .ObjectMeta.Labels \"app\" }}\"\n      valueFrom: null\n";
        each_as_for_real(
            plain_free,
            &[
                (
                    "web-0",
                    "team-1",
                    meta("a", "1", "true", "1", "x"),
                    spec_of("c"),
                ),
                (
                    "web-1",
                    "team-1",
                    meta("b", "1", "true", "1", "x"),
                    spec_of("c"),
                ),
                (
                    "web-2",
                    "team-1",
                    meta("0", "1", "true", "1", "x"),
                    spec_of("c"),
                ),
            ],
        );
    }

    #[test]
    fn plain_scalars_holding_a_stand_in_are_marked() {
        let text = format!(
            "a: {t}\nb: \"{t}\"\nc: [{t}, x]\n{t}: k\n",
            t = stand_ins::token(0)
        );
        let read = read_marked(&text).expect("reads");
        let token = stand_ins::token(0);
        let plain = format!("{PLAIN}{token}");
        assert_eq!(
            read,
            json!({"a": plain, "b": token, "c": [plain, "x"], token.clone(): "k"})
        );
    }
}

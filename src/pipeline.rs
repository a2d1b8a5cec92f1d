//! Sources through the pipeline: documents → objects → workloads → plan →
//! admission review → render.
//!
//! Two passes: every source is parsed once, the cluster context (policy objects
//! and ConfigMaps in the input and in `--context` files) is gathered, then each
//! input source is planned and rendered with that context.

use json_patch::PatchOperation;
use serde_json::{Map, Value, json};

use crate::admission::{self, Severity, Verdict};
use crate::cluster::{ClusterContext, KubeVersion};
use crate::error::{Error, Located};
use crate::profile::{NativeChoice, Prepared, Profile};
use crate::rules::{self, Env, Outcome, Plan, SecurityMode};
use crate::source::Source;
use crate::workload::{ObjectRef, WorkloadTypes};
use crate::yaml::{self, Document, Node};

/// What to do to each workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Inject,
    Uninject,
}

/// Everything a run needs to know besides the input.
#[derive(Debug, Clone)]
pub struct Settings {
    pub action: Action,
    pub profile: Profile,
    /// `--set` values, validated against the profile.
    pub flags: Map<String, Value>,
    /// `--native-sidecar`, when given.
    pub native: Option<NativeChoice>,
    pub version: KubeVersion,
    pub security: SecurityMode,
    /// Namespace of objects that name none, as `kubectl apply -n` would place them.
    pub namespace: String,
    /// Keep every document's final value (for `-o json`).
    pub keep_values: bool,
    /// Keep every object's patch (for `-o patch`); large inputs need not hold them.
    pub keep_patches: bool,
}

/// The result for one object of a source.
#[derive(Debug, Clone)]
pub struct ObjectResult {
    /// 1-based document index in the source.
    pub document: usize,
    /// `None` for a document that is not a Kubernetes object.
    pub reference: Option<ObjectRef>,
    pub outcome: Outcome,
    pub ops: Vec<PatchOperation>,
    pub notes: Vec<String>,
    /// What the cluster would say about the injected workload.
    pub verdicts: Vec<Verdict>,
    /// How to make it admissible where the injection alone cannot.
    pub hints: Vec<String>,
}

impl ObjectResult {
    /// Whether the cluster would refuse the object (or its pods).
    pub fn rejected(&self) -> bool {
        admission::rejected(&self.verdicts)
    }

    /// Whether the cluster's security policies (Pod Security, a
    /// PodSecurityPolicy) refuse it: what the injection's hints are about.
    pub fn refused_by_security_policy(&self) -> bool {
        self.verdicts.iter().any(|v| {
            v.severity == Severity::Rejection
                && matches!(v.plugin, "PodSecurity" | "PodSecurityPolicy")
        })
    }
}

/// A source after processing.
#[derive(Debug, Clone)]
pub struct Processed {
    pub source: Source,
    /// The source text with every plan applied.
    pub output: String,
    pub objects: Vec<ObjectResult>,
    /// Final value of each non-empty document, when `keep_values` is set.
    pub values: Vec<Value>,
}

impl Processed {
    pub fn changed(&self) -> bool {
        self.output != self.source.text
    }
}

/// Run `sources` through the pipeline, with the objects of `context` sources
/// (and of the inputs themselves) as what is known of the cluster.
pub fn process_all(
    sources: Vec<Source>,
    context: &[Source],
    settings: &Settings,
) -> Result<Vec<Processed>, Error> {
    let parsed: Vec<Vec<Document<'_>>> = sources.iter().map(parse).collect::<Result<_, _>>()?;
    let cluster = cluster_context(
        &sources,
        &parsed,
        context,
        &settings.profile,
        &settings.namespace,
    )?;
    let prepared = Prepared::default();
    let env = Env {
        prepared: &prepared,
        keep_patches: settings.keep_patches,
        profile: &settings.profile,
        flags: &settings.flags,
        native: settings.native,
        version: settings.version,
        security: settings.security,
        namespace: &settings.namespace,
        cluster: &cluster,
    };
    let types = WorkloadTypes::with(&settings.profile.workloads);
    let mut rendered = Vec::with_capacity(sources.len());
    for (source, docs) in sources.iter().zip(&parsed) {
        rendered.push(render_source(source, docs, settings, &env, &types)?);
    }
    drop(parsed);
    Ok(sources
        .into_iter()
        .zip(rendered)
        .map(|(source, (output, objects, values))| Processed {
            source,
            output,
            objects,
            values,
        })
        .collect())
}

/// Streams above this size are parsed in parallel, cut at document boundaries.
const PARALLEL_MIN_BYTES: usize = 1 << 20;

pub(crate) fn parse(source: &Source) -> Result<Vec<Document<'_>>, Error> {
    let text = source.text.as_str();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let points = if text.len() >= PARALLEL_MIN_BYTES {
        yaml::parse::split_points(text, threads)
    } else {
        vec![0, text.len()]
    };
    let ranges: Vec<(usize, usize)> = points.windows(2).map(|w| (w[0], w[1])).collect();
    let parts = on_all_cores(&ranges, |&(from, to)| {
        yaml::parse::parse_range(text, from, to)
    });
    let mut documents = Vec::new();
    for part in parts {
        let seen = documents.len();
        let part = part.map_err(|e| {
            Error::Document(Located::at(
                &source.name(),
                text,
                seen + e.document,
                e.offset,
                e.message,
            ))
        })?;
        documents.extend(part.into_iter().map(|mut d| {
            d.index += seen;
            d
        }));
    }
    Ok(documents)
}

/// What is known of the cluster: the context objects of the `--context`
/// sources, then of the input `sources` (parsed as `parsed`), with the
/// ConfigMaps `profile` reads values from.
pub(crate) fn cluster_context(
    sources: &[Source],
    parsed: &[Vec<Document<'_>>],
    context: &[Source],
    profile: &Profile,
    namespace: &str,
) -> Result<ClusterContext, Error> {
    let context_docs: Vec<Vec<Document<'_>>> =
        context.iter().map(parse).collect::<Result<_, _>>()?;
    let config_maps = profile
        .values_from_objects
        .iter()
        .map(|v| v.name.clone())
        .collect();
    let mut cluster = ClusterContext::new(config_maps);
    for (source, docs) in context
        .iter()
        .zip(&context_docs)
        .chain(sources.iter().zip(parsed))
    {
        gather_context(source, docs, &mut cluster, namespace)?;
    }
    Ok(cluster)
}

/// Add the context objects among `docs` to `cluster`.
fn gather_context(
    source: &Source,
    docs: &[Document<'_>],
    cluster: &mut ClusterContext,
    namespace: &str,
) -> Result<(), Error> {
    for document in docs {
        let Some(root) = &document.root else { continue };
        let Some(identity) = identity_of(root) else {
            continue;
        };
        // A `List` (or `LimitRangeList`, …, as `kubectl get -o yaml` writes
        // them) brings its items.
        let is_list = identity.kind.ends_with("List");
        if is_list || cluster.wants(&identity.kind, &identity.name) {
            let value = yaml::value::to_value(root).map_err(|e| {
                Error::Document(Located::at(
                    &source.name(),
                    &source.text,
                    document.index,
                    e.offset,
                    e.message,
                ))
            })?;
            match value.get("items").and_then(Value::as_array) {
                Some(items) if is_list => {
                    for item in items {
                        cluster.add(item, namespace);
                    }
                }
                _ => cluster.add(&value, namespace),
            }
        }
    }
    Ok(())
}

/// Run `work` on each part, one thread per part (the caller sizes the parts
/// to the cores); results in the order of the parts. A panic in a worker is
/// the caller's panic, as it would be on one thread.
fn on_all_cores<T: Sync, R: Send>(parts: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    if parts.len() <= 1 {
        return parts.iter().map(&work).collect();
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = parts
            .iter()
            .map(|part| scope.spawn(|| work(part)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

/// What planning documents gives: their objects and values, and the new
/// text of each changed document (its byte range in the source, and the text).
/// Edits are applied document by document, so they never pile up.
#[derive(Default)]
struct Rendered {
    objects: Vec<ObjectResult>,
    values: Vec<Value>,
    pieces: Vec<(usize, usize, String)>,
}

/// Documents below this count are planned on one thread.
const PARALLEL_MIN_DOCUMENTS: usize = 64;

/// Plan every document of one source and render the result onto its text.
/// Documents are independent, so large streams are split among the cores;
/// the results are joined in document order.
fn render_source(
    source: &Source,
    documents: &[Document<'_>],
    settings: &Settings,
    env: &Env<'_>,
    types: &WorkloadTypes,
) -> Result<(String, Vec<ObjectResult>, Vec<Value>), Error> {
    let name = source.name();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = if documents.len() < PARALLEL_MIN_DOCUMENTS || threads < 2 {
        documents.len().max(1)
    } else {
        documents.len().div_ceil(threads)
    };
    let render_chunk = |docs: &[Document<'_>]| -> Result<Rendered, Error> {
        let mut out = Rendered::default();
        for document in docs {
            render_document(source, &name, document, settings, env, types, &mut out)?;
        }
        Ok(out)
    };
    let chunks: Vec<&[Document<'_>]> = documents.chunks(chunk).collect();
    let parts = on_all_cores(&chunks, |docs| render_chunk(docs));
    let text = source.text.as_str();
    let mut objects = Vec::new();
    let mut values = Vec::new();
    let mut output = String::new();
    let mut at = 0;
    for part in parts {
        let part = part?;
        objects.extend(part.objects);
        values.extend(part.values);
        for (start, end, piece) in part.pieces {
            if output.is_empty() {
                output.reserve(text.len() + piece.len() * 2);
            }
            output.push_str(&text[at..start]);
            output.push_str(&piece);
            at = end;
        }
    }
    if at == 0 {
        return Ok((source.text.clone(), objects, values));
    }
    output.push_str(&text[at..]);
    Ok((output, objects, values))
}

/// The first lone CR on the lines of `text[from..to]`: a line break to YAML,
/// but not to the editor, which splices whole lines.
fn lone_carriage_return(text: &str, from: usize, to: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let line = text
        .get(..from)
        .and_then(|t| t.rfind('\n'))
        .map_or(0, |i| i + 1);
    (line..to).find(|&i| bytes.get(i) == Some(&b'\r') && bytes.get(i + 1) != Some(&b'\n'))
}

/// Plan one document and add its objects, value and text edits to `out`.
fn render_document(
    source: &Source,
    name: &str,
    document: &Document<'_>,
    settings: &Settings,
    env: &Env<'_>,
    types: &WorkloadTypes,
    out: &mut Rendered,
) -> Result<(), Error> {
    let text = source.text.as_str();
    let Some(root) = &document.root else {
        return Ok(());
    };
    let locate = |offset: usize, message: String| {
        Error::Document(Located::at(name, text, document.index, offset, message))
    };
    let identity = identity_of(root);
    let wants_value = settings.keep_values
        || identity.as_ref().is_none_or(|r| {
            r.kind == "List"
                || r.kind == crate::krm::KIND
                || types.find(&r.api_version, &r.kind).is_some()
        });
    if !wants_value {
        out.objects.push(ObjectResult {
            document: document.index,
            reference: identity,
            outcome: not_injectable(settings.action),
            ops: Vec::new(),
            notes: Vec::new(),
            verdicts: Vec::new(),
            hints: Vec::new(),
        });
        return Ok(());
    }
    let value = yaml::value::to_value(root).map_err(|e| locate(e.offset, e.message))?;
    let first_object = out.objects.len();
    let mut result = plan_document(
        &value,
        document.index,
        settings,
        env,
        types,
        &mut out.objects,
    )
    .map_err(|e| {
        locate(
            root.start,
            format!("internal error while planning: {}", e.0),
        )
    })?;
    if result != value {
        let (from, to) = (document.start.min(root.start), document.end.max(root.end));
        if let Some(at) = lone_carriage_return(text, from, to) {
            return Err(locate(
                at,
                "a carriage return without a line feed: YAML reads it as a line break, the edit \
                 would not; use LF or CRLF line endings"
                    .into(),
            ));
        }
        match yaml::edit::diff(text, root, &result) {
            Ok(changes) => {
                // Edits reach from the document's start up to where the next begins.
                let (from, to) = (document.start.min(root.start), document.end.max(root.end));
                out.pieces
                    .push((from, to, yaml::edit::apply_range(text, from, to, changes)));
            }
            Err(err) => {
                // The text cannot take the change without altering something
                // else (a shared anchor): leave the document as it is and say why.
                let at = Located::at(name, text, document.index, err.offset, err.message);
                let reason = format!("{} (line {}:{})", at.message, at.line, at.column);
                for object in &mut out.objects[first_object..] {
                    if matches!(object.outcome, Outcome::Injected | Outcome::Uninjected) {
                        object.outcome = Outcome::Skipped(reason.clone());
                        object.ops.clear();
                        object.verdicts.clear();
                    }
                }
                result = value;
            }
        }
    }
    if settings.keep_values {
        out.values.push(result);
    }
    Ok(())
}

/// Plan one document (an object, or a `List` of them) and return its final value.
fn plan_document(
    value: &Value,
    document: usize,
    settings: &Settings,
    env: &Env<'_>,
    types: &WorkloadTypes,
    objects: &mut Vec<ObjectResult>,
) -> Result<Value, rules::PlanError> {
    let reference = ObjectRef::of(value);
    // A `List`, or a KRM function's `ResourceList`: its items are the objects.
    let is_list = (reference.as_ref().is_some_and(|r| r.kind == "List")
        || crate::krm::is_resource_list(value))
        && value.get("items").is_some_and(Value::is_array);
    if !is_list {
        let (plan, verdicts) = plan_object(value, settings, env, types)?;
        objects.push(ObjectResult {
            document,
            reference,
            outcome: plan.outcome,
            ops: if settings.keep_patches {
                plan.ops
            } else {
                Vec::new()
            },
            notes: plan.notes,
            verdicts,
            hints: plan.hints,
        });
        return Ok(plan.result);
    }
    let mut result = value.clone();
    if let Some(Value::Array(items)) = result.get_mut("items") {
        for (index, item) in items.iter_mut().enumerate() {
            if item.is_null() {
                continue;
            }
            let (plan, verdicts) = plan_object(item, settings, env, types)?;
            let prefix = ["items".to_string(), index.to_string()];
            objects.push(ObjectResult {
                document,
                reference: ObjectRef::of(item),
                outcome: plan.outcome,
                ops: if settings.keep_patches {
                    plan.ops
                        .into_iter()
                        .map(|op| prefixed(op, &prefix))
                        .collect()
                } else {
                    Vec::new()
                },
                notes: plan.notes,
                verdicts,
                hints: plan.hints,
            });
            *item = plan.result;
        }
    }
    Ok(result)
}

/// Plan one object, and review an injected workload as the cluster would.
fn plan_object(
    object: &Value,
    settings: &Settings,
    env: &Env<'_>,
    types: &WorkloadTypes,
) -> Result<(Plan, Vec<Verdict>), rules::PlanError> {
    let kind = ObjectRef::of(object).and_then(|r| types.find(&r.api_version, &r.kind));
    let Some(kind) = kind else {
        let outcome = match object {
            Value::Object(map) if map.get("kind").is_some_and(|k| !k.is_string()) => {
                Outcome::Skipped("kind is not a string".into())
            }
            Value::Object(map) if map.contains_key("kind") => not_injectable(settings.action),
            Value::Object(_) => Outcome::Skipped("document has no kind".into()),
            _ => Outcome::Skipped("not a Kubernetes object".into()),
        };
        return Ok((Plan::unchanged(object, outcome), Vec::new()));
    };
    let plan = match settings.action {
        Action::Inject => rules::inject(object, kind, env)?,
        Action::Uninject => {
            rules::uninject(object, kind, &settings.profile, settings.keep_patches)?
        }
    };
    let verdicts = match plan.outcome {
        Outcome::Injected | Outcome::AlreadyInjected => {
            let target = admission::review::Target {
                default_namespace: env.namespace,
                cluster: env.cluster,
                version: env.version,
                webhooks: &[],
                injector: &admission::review::no_injector,
                trace: false,
            };
            admission::review::review(&plan.result, kind, &target).verdicts
        }
        _ => Vec::new(),
    };
    Ok((plan, verdicts))
}

fn not_injectable(action: Action) -> Outcome {
    match action {
        Action::Inject => Outcome::Skipped(rules::plan::NOT_INJECTABLE.into()),
        Action::Uninject => Outcome::NotInjected,
    }
}

/// Read `apiVersion`, `kind` and the names straight from the syntax tree, so
/// that large documents which are not workloads are never converted.
fn identity_of(root: &Node<'_>) -> Option<ObjectRef> {
    // Only scalars that read as strings: `kind: 5` is not a kind.
    let scalar = |node: Option<&Node<'_>>| match &node?.kind {
        yaml::NodeKind::Scalar { text, style, tag } => {
            match yaml::value::resolve_scalar(text, *style, tag.as_deref()) {
                Value::String(s) => Some(s),
                _ => None,
            }
        }
        _ => None,
    };
    let metadata = root.get("metadata");
    let value = json!({
        "apiVersion": scalar(root.get("apiVersion")),
        "kind": scalar(root.get("kind"))?,
        "metadata": {
            "name": scalar(metadata.and_then(|m| m.get("name"))),
            "generateName": scalar(metadata.and_then(|m| m.get("generateName"))),
            "namespace": scalar(metadata.and_then(|m| m.get("namespace"))),
        }
    });
    ObjectRef::of(&value)
}

/// An operation on a list item, re-rooted at the list document.
fn prefixed(op: PatchOperation, prefix: &[String]) -> PatchOperation {
    use json_patch::jsonptr::PointerBuf;
    let join = |path: &json_patch::jsonptr::Pointer| {
        PointerBuf::from_tokens(
            prefix
                .iter()
                .cloned()
                .chain(path.tokens().map(|t| t.decoded().into_owned())),
        )
    };
    let mut op = op;
    match &mut op {
        PatchOperation::Add(o) => o.path = join(&o.path),
        PatchOperation::Remove(o) => o.path = join(&o.path),
        PatchOperation::Replace(o) => o.path = join(&o.path),
        PatchOperation::Test(o) => o.path = join(&o.path),
        PatchOperation::Move(o) => {
            o.from = join(&o.from);
            o.path = join(&o.path);
        }
        PatchOperation::Copy(o) => {
            o.from = join(&o.from);
            o.path = join(&o.path);
        }
    }
    op
}

//! What a run reuses of a profile: its fillings with each set of values
//! workloads ask for, and their renderings.
//!
//! Lifetime: one [`Prepared`] for a run (and one more for the pass that
//! context objects found in the inputs start), shared by every core; what it
//! keeps is bounded (`CACHED_MAX` of each kind), past which new ones are
//! made and used once. One made with [`Mode::Reference`] keeps nothing:
//! every workload's values filled and rendered for real.

use std::cell::RefCell;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use super::render::{answers, lookup};
use super::{
    NamedPort, ObjectValue, Profile, Rendered, RenderedContainers, RenderedMetadata, WorkloadVars,
    template,
};
use crate::reuse::Mode;
use crate::reuse::stand_ins;

/// Profiles filled with each distinct set of values met so far, and what
/// they rendered for the workloads met so far: most workloads share one set of
/// values and differ only in what the templates do not read (their names), so
/// the filling and the rendering are done once, not per workload.
///
/// One `Prepared` serves one profile over one cluster: a filling found
/// by the flags alone holds what that cluster's objects gave.
#[derive(Debug, Default)]
pub struct Prepared {
    filled: Mutex<Vec<Arc<Filled>>>,
    /// The filling for each set of settings met so far, found without
    /// building the values they lead to.
    by_settings: Mutex<Vec<FilledFor>>,
    /// The filling of a pod none of whose annotations the profile reads,
    /// by the flags and whether objects were looked in: most pods, and
    /// every Service. Found by the flags alone, as it depends on nothing
    /// of the pod (kept only when the pod's ports were not asked for).
    unannotated: PerFlags<(bool, Arc<Filled>)>,
    /// The namespaces the webhook never injects in, rendered with the
    /// profile's values and each set of flags met.
    never_namespaces: PerFlags<Arc<[String]>>,
    mode: Mode,
}

/// What is worked out once for each set of flags: a run has one set, a
/// caller of the library may pass others.
#[derive(Debug)]
struct PerFlags<T>(Mutex<Vec<(Map<String, Value>, T)>>);

impl<T> Default for PerFlags<T> {
    fn default() -> Self {
        PerFlags(Mutex::new(Vec::new()))
    }
}

impl<T: Clone> PerFlags<T> {
    /// What was kept for `flags` that `wanted` accepts.
    fn get(&self, flags: &Map<String, Value>, wanted: impl Fn(&T) -> bool) -> Option<T> {
        let known = self.0.lock().ok()?;
        known
            .iter()
            .find(|(f, kept)| f == flags && wanted(kept))
            .map(|(_, kept)| kept.clone())
    }

    fn keep(&self, flags: &Map<String, Value>, value: T) {
        if let Ok(mut known) = self.0.lock() {
            if known.len() < CACHED_MAX {
                known.push((flags.clone(), value));
            }
        }
    }
}

/// A workload-specific set (from annotations) is not worth keeping forever:
/// past this many, new sets and renderings are used once and dropped.
const CACHED_MAX: usize = 64;

/// A set of values, the profile filled with them, and its renderings.
#[derive(Debug)]
pub struct Filled {
    values: Map<String, Value>,
    profile: Arc<Profile>,
    /// The renderings of the pod's metadata, and of the containers.
    metadata: Mutex<Vec<RenderedFor<RenderedMetadata>>>,
    rendered: Mutex<Vec<RenderedFor<RenderedContainers>>>,
    /// The workload's placeholders the profile decides on rather than
    /// copies (see [`Profile::decided_placeholders`]): always answered for
    /// real.
    decided: Vec<String>,
    /// Whether the filled profile holds no text like a stand-in (which
    /// filling would replace): renderings with stand-ins are made.
    takes_stand_ins: bool,
    /// Keep its renderings (else each is made for real: the reference mode).
    keeps: bool,
}

/// What sets a workload's values besides the profile (its annotations, the
/// flags, objects in context), and the filling they lead to.
#[derive(Debug)]
struct FilledFor {
    from_annotations: Vec<(String, Value)>,
    flags: Map<String, Value>,
    from_objects: Vec<(String, String)>,
    resolved: Vec<(String, Value)>,
    filled: Arc<Filled>,
}

/// A rendering and the placeholders it asked for, with their answers: any
/// workload whose answers are the same gets the same rendering.
type RenderedFor<T> = (Vec<(String, Answer)>, Arc<T>);

impl Prepared {
    /// What a run reuses of its profile, keeping what `mode` says.
    pub fn new(mode: Mode) -> Self {
        Prepared {
            mode,
            ..Prepared::default()
        }
    }

    /// The values for a workload whose pod has `pod_annotations` (see
    /// [`Profile::values_for`]), with the profile filled with them, and
    /// what the user should hear of annotations the mesh ignores.
    pub fn for_workload(
        &self,
        profile: &Profile,
        pod_annotations: Option<&Map<String, Value>>,
        flags: &Map<String, Value>,
        object_value: Option<&ObjectValue<'_>>,
        named_port: &NamedPort<'_>,
    ) -> Result<(Arc<Filled>, Vec<String>), String> {
        let mut warnings = Vec::new();
        let from_annotations = profile.annotation_values(pod_annotations, &mut warnings)?;
        let with_objects = object_value.is_some();
        let keeps = self.mode == Mode::Reuse;
        let unannotated = from_annotations.is_empty();
        if unannotated && keeps {
            let found = self.unannotated.get(flags, |(w, _)| *w == with_objects);
            if let Some((_, found)) = found {
                return Ok((found, warnings));
            }
        }
        // Whether the pod's own ports were looked at (a port list names one).
        let asked_pod = std::cell::Cell::new(false);
        let named_port = |name: &str| {
            asked_pod.set(true);
            named_port(name)
        };
        let from_objects = match object_value {
            Some(object_value) => profile.object_values(&from_annotations, flags, object_value)?,
            None => Vec::new(),
        };
        let resolved = profile.resolved_port_lists(
            &from_annotations,
            flags,
            &from_objects,
            &named_port,
            &mut warnings,
        );
        let known = |known: &Vec<FilledFor>| {
            known
                .iter()
                .find(|k| {
                    k.from_annotations == from_annotations
                        && k.from_objects == from_objects
                        && k.flags == *flags
                        && k.resolved == resolved
                })
                .map(|k| k.filled.clone())
        };
        let remember = |filled: &Arc<Filled>| {
            if unannotated && !asked_pod.get() && keeps {
                self.unannotated.keep(flags, (with_objects, filled.clone()));
            }
        };
        let found = keeps
            .then(|| self.by_settings.lock().ok().and_then(|k| known(&k)))
            .flatten();
        if let Some(found) = found {
            remember(&found);
            return Ok((found, warnings));
        }
        let values = profile.values_with(&from_annotations, flags, &from_objects, &resolved);
        let filled = self.filled(profile, &values)?;
        remember(&filled);
        if let (true, Ok(mut known)) = (keeps, self.by_settings.lock()) {
            if known.len() < CACHED_MAX {
                known.push(FilledFor {
                    from_annotations,
                    flags: flags.clone(),
                    from_objects,
                    resolved,
                    filled: filled.clone(),
                });
            }
        }
        Ok((filled, warnings))
    }

    /// The namespaces `profile`'s webhook never injects in, with `flags`
    /// over the profile's values (a name that does not render is left out).
    pub fn never_namespaces(&self, profile: &Profile, flags: &Map<String, Value>) -> Arc<[String]> {
        let keeps = self.mode == Mode::Reuse;
        if let Some(found) = keeps
            .then(|| self.never_namespaces.get(flags, |_| true))
            .flatten()
        {
            return found;
        }
        let value = |name: &str| {
            name.strip_prefix("values.")
                .and_then(|v| flags.get(v).or_else(|| profile.values.get(v)))
                .cloned()
        };
        let names: Arc<[String]> = profile
            .never_inject
            .namespaces
            .iter()
            .filter_map(|template| {
                if !template.contains("{{") {
                    return Some(template.clone());
                }
                template::render(&Value::String(template.clone()), &value)
                    .ok()?
                    .as_str()
                    .map(str::to_string)
            })
            .collect();
        if keeps {
            self.never_namespaces.keep(flags, names.clone());
        }
        names
    }

    fn filled(
        &self,
        profile: &Profile,
        values: &Map<String, Value>,
    ) -> Result<Arc<Filled>, String> {
        let same = |f: &Filled| crate::yaml::value::same_maps_in_order(&f.values, values);
        let cached = |filled: &Vec<Arc<Filled>>| {
            filled
                .iter()
                .find(|f| same(f) || f.values == *values)
                .cloned()
        };
        let keeps = self.mode == Mode::Reuse;
        let found = keeps
            .then(|| self.filled.lock().ok().and_then(|f| cached(&f)))
            .flatten();
        if let Some(found) = found {
            return Ok(found);
        }
        if let Some(reason) = profile.mesh.refusal(values) {
            return Err(reason);
        }
        let profile = profile.with_values(values)?;
        let filled = Arc::new(Filled {
            values: values.clone(),
            decided: profile.decided_placeholders(),
            // Every string of the profile, its values filled in, is in its
            // debug text (stand-ins are plain ASCII letters and digits).
            takes_stand_ins: !stand_ins::has_token(&format!("{profile:?}")),
            profile: Arc::new(profile),
            metadata: Mutex::new(Vec::new()),
            rendered: Mutex::new(Vec::new()),
            keeps,
        });
        if let (true, Ok(mut all)) = (keeps, self.filled.lock()) {
            if all.len() < CACHED_MAX {
                all.push(filled.clone());
            }
        }
        Ok(filled)
    }
}

impl Filled {
    /// The values the profile was filled with.
    pub fn values(&self) -> &Map<String, Value> {
        &self.values
    }

    /// The profile rendered for a workload with `vars`: its metadata and
    /// its containers, each rendered once for each set of answers its
    /// templates ask for (the metadata names the namespace, the containers
    /// do not).
    pub fn render(&self, vars: &WorkloadVars) -> Result<Rendered, String> {
        self.render_parts(
            vars,
            |metadata, reals| metadata.filled(None, reals),
            RenderedContainers::filled,
        )
    }

    /// What the cluster's own templates keep of [`Filled::render`]: the
    /// metadata and the placement settings, and the containers only when
    /// they come for free (shared with a workload answering the same);
    /// theirs replace them.
    /// Of the metadata, only the annotations and labels of the keys in
    /// `kept` are sure to be there.
    pub fn render_settings(
        &self,
        vars: &WorkloadVars,
        kept: (&[&str], &[&str]),
    ) -> Result<Rendered, String> {
        self.render_parts(
            vars,
            |metadata, reals| metadata.filled(Some(kept), reals),
            RenderedContainers::settings_filled,
        )
    }

    fn render_parts(
        &self,
        vars: &WorkloadVars,
        fill_metadata: impl Fn(&RenderedMetadata, &[String]) -> Option<RenderedMetadata>,
        fill: impl Fn(&RenderedContainers, &[String]) -> Option<RenderedContainers>,
    ) -> Result<Rendered, String> {
        let profile = &self.profile;
        Ok(Rendered {
            metadata: self.rendered_once(
                &self.metadata,
                vars,
                |lookup| profile.render_metadata(lookup),
                fill_metadata,
            )?,
            shared: self.rendered_once(
                &self.rendered,
                vars,
                |lookup| profile.render_containers(lookup),
                fill,
            )?,
        })
    }

    /// What `render` gives for `vars`, from `cache` when a rendering there
    /// asked for the same answers, else rendered and kept. The workload's
    /// own strings (its name, its namespace) are rendered as stand-ins
    /// (see [`crate::reuse::stand_ins`]) and put back in each workload's
    /// copy, but for those the profile decides on ([`Filled::decided`]): a
    /// string is only copied by a placeholder, unless it is empty (which
    /// leaves its entry out) or `false` (which a condition reads), and
    /// those are answered for real.
    fn rendered_once<T>(
        &self,
        cache: &Mutex<Vec<RenderedFor<T>>>,
        vars: &WorkloadVars,
        render: impl Fn(&template::Lookup<'_>) -> Result<T, String>,
        fill: impl Fn(&T, &[String]) -> Option<T>,
    ) -> Result<Arc<T>, String> {
        let values = &self.values;
        if !self.keeps {
            return Ok(Arc::new(render(&|name: &str| lookup(values, vars, name))?));
        }
        let (found, first) = match cache.lock() {
            Ok(cached) => (cached_rendering(&cached, values, vars), cached.is_empty()),
            Err(_) => (None, false),
        };
        let mut fill_failed = false;
        if let Some((reals, found)) = found {
            if reals.is_empty() {
                return Ok(found);
            }
            match fill(&found, &reals) {
                Some(filled) => return Ok(Arc::new(filled)),
                None => fill_failed = true,
            }
        }
        // The first rendering is for real, shared by the workloads that
        // answer the same; stand-ins from the first that answers otherwise
        // (but where this workload's strings made two keys one, and for a
        // profile with text like a stand-in, which filling would replace).
        let recorder = Recorder {
            values,
            vars,
            stand_ins: !first && !fill_failed && self.takes_stand_ins,
            decided: &self.decided,
            asked: RefCell::new(Vec::new()),
            reals: RefCell::new(Vec::new()),
        };
        let rendered = Arc::new(render(&|name: &str| recorder.answer(name))?);
        let (mut asked, reals) = (recorder.asked.into_inner(), recorder.reals.into_inner());
        // The values are this filling's own: only the workload's answers
        // can differ among its renderings. Kept in the order asked, which
        // numbers the stand-ins.
        asked.retain(|(name, _)| !name.starts_with("values."));
        if let Ok(mut cached) = cache.lock() {
            if cached.len() < CACHED_MAX {
                cached.push((asked, rendered.clone()));
            }
        }
        if reals.is_empty() {
            return Ok(rendered);
        }
        match fill(&rendered, &reals) {
            Some(filled) => Ok(Arc::new(filled)),
            // Two keys made one: rendered for real, as when alone.
            None => Ok(Arc::new(render(&|name: &str| lookup(values, vars, name))?)),
        }
    }
}

/// How a rendering's placeholder was answered: with this value (any
/// workload answering the same gets the rendering), or with a stand-in
/// (any workload whose answer [`can_stand_in`]).
#[derive(Debug, Clone, PartialEq)]
enum Answer {
    Is(Option<Value>),
    StandIn,
}

/// Whether a workload's answer can be rendered as a stand-in: a string that
/// is not empty, not `false`, and not like a stand-in itself.
fn can_stand_in(real: &str) -> bool {
    !real.is_empty() && real != "false" && !stand_ins::has_token(real)
}

/// A rendering in `cached` for a workload with `vars`: one of the same
/// answers if there is one (shared as it is), else one whose stand-ins the
/// workload's strings can take, with those strings in the stand-ins' order.
fn cached_rendering<T>(
    cached: &[RenderedFor<T>],
    values: &Map<String, Value>,
    vars: &WorkloadVars,
) -> Option<(Vec<String>, Arc<T>)> {
    let exact = cached.iter().find(|(asked, _)| {
        asked.iter().all(|(name, answer)| match answer {
            Answer::Is(got) => answers(values, vars, name, got.as_ref()),
            Answer::StandIn => false,
        })
    });
    if let Some((_, rendered)) = exact {
        return Some((Vec::new(), rendered.clone()));
    }
    cached.iter().find_map(|(asked, rendered)| {
        let mut reals = Vec::new();
        for (name, answer) in asked {
            match answer {
                Answer::Is(got) if answers(values, vars, name, got.as_ref()) => {}
                Answer::StandIn => match lookup(values, vars, name) {
                    Some(Value::String(real)) if can_stand_in(&real) => reals.push(real),
                    _ => return None,
                },
                Answer::Is(_) => return None,
            }
        }
        Some((reals, rendered.clone()))
    })
}

/// Answers a rendering's placeholders for a workload, recording what was
/// asked and how it was answered: with a stand-in for a workload's string
/// where `stand_ins` allows and the profile does not decide on the name.
struct Recorder<'a> {
    values: &'a Map<String, Value>,
    vars: &'a WorkloadVars,
    stand_ins: bool,
    decided: &'a [String],
    asked: RefCell<Vec<(String, Answer)>>,
    /// The strings the stand-ins given stand for, in their order.
    reals: RefCell<Vec<String>>,
}

impl Recorder<'_> {
    fn answer(&self, name: &str) -> Option<Value> {
        let got = lookup(self.values, self.vars, name);
        let mut asked = self.asked.borrow_mut();
        // A name asked again is answered as the first time.
        if let Some(at) = asked.iter().position(|(n, _)| n == name) {
            if asked.get(at).is_some_and(|(_, a)| *a == Answer::StandIn) {
                let n = asked
                    .iter()
                    .take(at)
                    .filter(|(_, a)| *a == Answer::StandIn)
                    .count();
                return Some(Value::String(stand_ins::token(n)));
            }
            return got;
        }
        match &got {
            Some(Value::String(real))
                if self.stand_ins
                    && can_stand_in(real)
                    && !name.starts_with("values.")
                    && !self.decided.iter().any(|d| d == name) =>
            {
                let mut reals = self.reals.borrow_mut();
                reals.push(real.clone());
                asked.push((name.to_string(), Answer::StandIn));
                Some(Value::String(stand_ins::token(reals.len() - 1)))
            }
            _ => {
                asked.push((name.to_string(), Answer::Is(got.clone())));
                got
            }
        }
    }
}

//! A workload's values, by precedence: the profile's, then the cluster's
//! objects, the mesh's annotations (on the Namespace, then the pod
//! template), then `--set` flags; and `--set` assignments read as the
//! profile's values are typed.

use serde_json::{Map, Value};

use super::{Merge, Override, Profile, Validate, ValueFromObject, template};
use crate::cluster::ClusterContext;
use crate::error::{ConfigError, Error};
use crate::json::Field;
use crate::note::Note;
use crate::yaml;

/// The annotation `key` of `annotations`: a pod has few, so comparing
/// keys costs less than hashing `key` for each of the profile's rules.
pub(super) fn annotation<'a>(annotations: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if annotations.len() > 8 {
        return annotations.get(key);
    }
    annotations.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
}

/// The number of the pod's container port of a name, if it has one.
pub type NamedPort<'a> = dyn Fn(&str) -> Option<u16> + 'a;

/// A port (`80`) or a range of ports (`8000-8080`), lowest first.
pub(super) fn is_port_or_range(item: &str) -> bool {
    let port = |p: &str| p.trim().parse::<u16>().ok();
    match item.split_once('-') {
        Some((low, high)) => port(low).zip(port(high)).is_some_and(|(l, h)| l <= h),
        None => port(item).is_some(),
    }
}

/// Reads a value from the cluster's objects: the source, and the namespace
/// it names (rendered).
/// `None` when there is no such object; `Some(None)` when the object is
/// there without the value.
pub type ObjectValue<'a> = dyn Fn(&ValueFromObject, &str) -> Option<Option<String>> + 'a;

/// Read `raw` as a value of the same type as `current`: a whole number stays
/// whole (and not negative, when the default is not), a boolean a boolean.
pub(super) fn typed_like(current: &Value, raw: &str) -> Result<Value, String> {
    match current {
        Value::String(_) | Value::Null => Ok(Value::String(raw.to_string())),
        // Go's readings of a boolean, which the meshes' annotations take.
        Value::Bool(_) => match raw {
            "true" | "enabled" | "1" | "t" | "T" | "TRUE" | "True" => Ok(Value::Bool(true)),
            "false" | "disabled" | "0" | "f" | "F" | "FALSE" | "False" => Ok(Value::Bool(false)),
            _ => Err(format!("expected true or false, got {raw:?}")),
        },
        Value::Object(_) => mapping_from(raw),
        Value::Array(_) => list_from(raw),
        Value::Number(n) if n.is_u64() => raw
            .parse::<u64>()
            .map(Value::from)
            .map_err(|_| format!("expected a whole number of 0 or more, got {raw:?}")),
        Value::Number(n) if n.is_i64() => raw
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| format!("expected a whole number, got {raw:?}")),
        _ => match yaml::value::resolve_plain(raw) {
            number @ Value::Number(_) => Ok(number),
            _ => Err(format!("expected a number, got {raw:?}")),
        },
    }
}

/// A list of named mappings written as JSON or YAML
/// (`[{"name": "A", "value": "1"}]`), such as env vars.
pub(super) fn list_from(raw: &str) -> Result<Value, String> {
    let parsed = serde_json::from_str::<Value>(raw).ok().or_else(|| {
        let documents = yaml::parse_stream(raw).ok()?;
        let root = documents.first()?.root.as_ref()?;
        yaml::value::to_value(root).ok()
    });
    // Each entry read as Kubernetes reads an env var: a name, a string
    // value or a valueFrom; other fields are dropped, a wrong type refuses
    // the list.
    let entry = |item: &Value| -> Option<Value> {
        let name = item
            .field("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())?;
        let mut kept = Map::new();
        kept.insert("name".into(), Value::String(name.into()));
        match item.field("value") {
            None | Some(Value::Null) => {}
            Some(value @ Value::String(_)) => {
                kept.insert("value".into(), value.clone());
            }
            Some(_) => return None,
        }
        match item.field("valueFrom") {
            None | Some(Value::Null) => {}
            Some(from @ Value::Object(_)) => {
                kept.insert("valueFrom".into(), from.clone());
            }
            Some(_) => return None,
        }
        Some(Value::Object(kept))
    };
    let entries = match parsed {
        Some(Value::Array(items)) => items.iter().map(entry).collect::<Option<Vec<Value>>>(),
        _ => None,
    };
    entries.map(Value::Array).ok_or_else(|| {
        format!(
            "expected a list of env vars (a name, and a string value or a valueFrom), got {raw:?}"
        )
    })
}

/// Set the entry at the dotted `path` of `value` to `leaf`, making
/// mappings on the way where there are none.
pub(super) fn set_at(value: &mut Value, path: &str, leaf: Value) {
    if !value.is_object() {
        *value = Value::Object(Map::new());
    }
    let Value::Object(map) = value else {
        return;
    };
    match path.split_once('.') {
        Some((key, rest)) => {
            set_at(
                map.entry(key.to_string()).or_insert(Value::Null),
                rest,
                leaf,
            );
        }
        None => {
            map.insert(path.to_string(), leaf);
        }
    }
}

/// A mapping written as JSON or YAML (`{"server": {"http2": {...}}}`).
pub(super) fn mapping_from(raw: &str) -> Result<Value, String> {
    let parsed = serde_json::from_str::<Value>(raw).ok().or_else(|| {
        let documents = yaml::parse_stream(raw).ok()?;
        let root = documents.first()?.root.as_ref()?;
        yaml::value::to_value(root).ok()
    });
    match parsed {
        Some(map @ Value::Object(_)) => Ok(map),
        _ => Err(format!("expected a mapping (JSON or YAML), got {raw:?}")),
    }
}

impl Profile {
    /// Read `NAME=VALUE` as a value override; the value takes the type of
    /// the default it replaces. `NAME.KEY.KEY=VALUE` sets one entry of a
    /// mapping value, over what `earlier` assignments set of it.
    pub fn parse_assignment(
        &self,
        assignment: &str,
        earlier: &Map<String, Value>,
    ) -> Result<(String, Value), Error> {
        let (name, raw) = assignment
            .split_once('=')
            .ok_or_else(|| Error::Usage(format!("--set expects NAME=VALUE, got {assignment:?}")))?;
        if let Some((top, path)) = name.split_once('.') {
            if let Some(Value::Object(_)) = self.values.get(top) {
                let mut value = earlier
                    .get(top)
                    .or_else(|| self.values.get(top))
                    .cloned()
                    .unwrap_or_default();
                set_at(&mut value, path, yaml::value::resolve_plain(raw));
                return Ok((top.to_string(), value));
            }
        }
        let Some(current) = self.values.get(name) else {
            return Err(ConfigError::UnknownValue {
                name: name.to_string(),
                profile: self.name.clone(),
                known: self.values.keys().cloned().collect(),
            }
            .into());
        };
        // What the mesh's annotation could not hold is refused here too
        // (names in a port list are the pod's, resolved per workload).
        let checks = self.overrides.iter().filter(|rule| rule.value == name);
        for validate in checks.filter_map(|rule| rule.validate) {
            let resolved_later = validate == Validate::Ports && self.mesh.resolves_named_ports();
            if !raw.is_empty() && !resolved_later {
                validate
                    .check(raw)
                    .map_err(|message| set_error(name, message))?;
            }
        }
        self.mesh
            .check_value(name, raw)
            .map_err(|message| set_error(name, message))?;
        // A word the mesh's annotation could not give is refused here too
        // (an access log format the proxy cannot read).
        let words = self
            .overrides
            .iter()
            .filter(|rule| rule.value == name && current.is_string() && !rule.map.is_empty())
            .flat_map(|rule| {
                rule.map.values().map(|v| match v {
                    Value::String(word) => word.clone(),
                    other => other.to_string(),
                })
            });
        let mut words: Vec<String> = words.collect();
        words.sort();
        words.dedup();
        if !raw.is_empty() && !words.is_empty() && !words.iter().any(|w| w == raw) {
            return Err(set_error(
                name,
                format!("{raw:?} is not one of {}", words.join(", ")),
            ));
        }
        // A duration given for the workloads is written as the mesh writes
        // an annotation's (Linkerd: in whole milliseconds or seconds).
        let convert = self
            .overrides
            .iter()
            .find(|rule| rule.value == name)
            .and_then(|rule| rule.convert);
        let converted = match convert {
            Some(convert) => convert
                .apply(raw)
                .ok_or_else(|| set_error(name, format!("{raw:?} is not a duration such as 90s")))?,
            None => raw.to_string(),
        };
        let value = typed_like(current, &converted).map_err(|message| set_error(name, message))?;
        Ok((name.to_string(), value))
    }

    /// The values for one workload: the profile's, then those read from
    /// objects, then the pod template's annotations, then `flags`.
    pub fn values_for(
        &self,
        pod_annotations: Option<&Map<String, Value>>,
        flags: &Map<String, Value>,
        object_value: &ObjectValue<'_>,
    ) -> Result<Map<String, Value>, String> {
        let from_annotations = self.annotation_values(pod_annotations, &mut Vec::new())?;
        let from_objects = self.object_values(&from_annotations, flags, object_value)?;
        Ok(self.values_with(&from_annotations, flags, &from_objects, &[]))
    }

    /// The pod annotations that record `flags` as the mesh's own command
    /// line records its settings, so that the mesh's controllers read what the
    /// proxy was given: each flag that differs from the profile's value and
    /// that an override annotation sets, under the first such annotation (in
    /// its own word where its values are mapped). Only for meshes that do so.
    pub fn recorded_flags(&self, flags: &Map<String, Value>) -> Map<String, Value> {
        let mut recorded = Map::new();
        if !self.mesh.records_settings() {
            return recorded;
        }
        for (name, value) in flags {
            if self.values.get(name) == Some(value) {
                continue;
            }
            let text = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let rule = self.overrides.iter().find(|rule| {
                rule.value == *name
                    && (rule.map.is_empty() || rule.map.values().any(|v| *v == text))
            });
            let Some(rule) = rule else { continue };
            let word = rule
                .map
                .iter()
                .find(|(_, v)| **v == text)
                .map_or(text.clone(), |(word, _)| word.clone());
            recorded.insert(rule.annotation.clone(), Value::String(word));
        }
        recorded
    }

    /// The values the pod template's annotations set, in the order of the
    /// profile's override rules.
    pub fn annotation_values(
        &self,
        pod_annotations: Option<&Map<String, Value>>,
        warnings: &mut Vec<String>,
    ) -> Result<Vec<(String, Value)>, String> {
        let mut set = Vec::new();
        for rule in &self.overrides {
            match self.annotation_value(rule, pod_annotations) {
                Ok(Some(value)) => set.push((rule.value.clone(), value)),
                Ok(None) => {}
                // Linkerd warns and keeps the default; Istio refuses the pod.
                Err(problem) if self.mesh.ignores_invalid_annotations() => {
                    warnings.push(format!("{problem}: the default is used, as the mesh does"));
                }
                Err(problem) => return Err(problem),
            }
        }
        Ok(set)
    }

    /// The value one override rule reads from the pod's annotations, if the
    /// annotation is there.
    pub(super) fn annotation_value(
        &self,
        rule: &Override,
        pod_annotations: Option<&Map<String, Value>>,
    ) -> Result<Option<Value>, String> {
        {
            let Some(raw) = pod_annotations.and_then(|a| annotation(a, &rule.annotation)) else {
                return Ok(None);
            };
            let raw = match raw {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let mapped = match rule.map.get(&raw) {
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None if rule.map.is_empty() => raw.clone(),
                None => {
                    let allowed: Vec<&str> = rule.map.keys().map(String::as_str).collect();
                    return Err(format!(
                        "annotation {}: {raw:?} is not one of {}",
                        rule.annotation,
                        allowed.join(", ")
                    ));
                }
            };
            // Names in a port list are the pod's ports to such a mesh: they
            // are resolved, and the rest dropped, once the list is known.
            let resolved_later =
                rule.validate == Some(Validate::Ports) && self.mesh.resolves_named_ports();
            if let Some(validate) = rule.validate.filter(|_| !resolved_later) {
                validate
                    .check(&mapped)
                    .map_err(|e| format!("annotation {}: {e}", rule.annotation))?;
            }
            let mapped = match rule.convert {
                Some(convert) => convert.apply(&mapped).ok_or_else(|| {
                    format!(
                        "annotation {}: {mapped:?} is not a duration",
                        rule.annotation
                    )
                })?,
                None => mapped,
            };
            let current = self.values.get(&rule.value).unwrap_or(&Value::Null);
            let value = typed_like(current, &mapped)
                .map_err(|e| format!("annotation {}: {e}", rule.annotation))?;
            Ok(Some(value))
        }
    }

    /// What objects give for the values neither `from_annotations` nor
    /// `flags` set, each found with the values so far (a --set
    /// controlPlaneNamespace moves the ConfigMap too).
    pub(super) fn object_values(
        &self,
        from_annotations: &[(String, Value)],
        flags: &Map<String, Value>,
        object_value: &ObjectValue<'_>,
    ) -> Result<Vec<(String, String)>, String> {
        let mut found: Vec<(String, String)> = Vec::new();
        // Objects known to be missing: (kind, name, namespace's index).
        let mut missing: Vec<(&String, &String, usize)> = Vec::new();
        // Sources mostly share one namespace template: rendered once each.
        let mut namespaces: Vec<(&str, String)> = Vec::new();
        for source in &self.values_from_objects {
            // A merged annotation goes over the cluster's value, not instead.
            let explicit = (!flags.is_empty() && flags.contains_key(&source.value))
                || (from_annotations
                    .iter()
                    .any(|(name, _)| *name == source.value)
                    && self.merge_of(&source.value).is_none());
            if explicit {
                continue;
            }
            // A value found so far may be the namespace's own: render anew then.
            let known = namespaces
                .iter()
                .position(|(template, _)| *template == source.namespace)
                .filter(|_| {
                    !found
                        .iter()
                        .any(|(n, _)| source.namespace.contains(n.as_str()))
                });
            let at = match known {
                Some(at) => at,
                None => {
                    // The latest setting of a value wins, as in `values_with`.
                    let lookup = |name: &str| {
                        let name = name.strip_prefix("values.")?;
                        let latest = |set: &[(String, Value)]| {
                            set.iter()
                                .rev()
                                .find(|(n, _)| n == name)
                                .map(|(_, v)| v.clone())
                        };
                        found
                            .iter()
                            .rev()
                            .find(|(n, _)| n == name)
                            .map(|(_, v)| Value::String(v.clone()))
                            .or_else(|| flags.get(name).cloned())
                            .or_else(|| latest(from_annotations))
                            .or_else(|| self.values.get(name).cloned())
                    };
                    let rendered =
                        template::render(&Value::String(source.namespace.clone()), &lookup)?;
                    let rendered = rendered.as_str().unwrap_or_default().to_string();
                    namespaces.push((&source.namespace, rendered));
                    namespaces.len() - 1
                }
            };
            // Sources mostly share one object: once it is known to be
            // missing, its other values are not looked for.
            let object = (&source.kind, &source.name, at);
            if missing.contains(&object) {
                continue;
            }
            let namespace = namespaces.get(at).map_or("", |(_, n)| n.as_str());
            match object_value(source, namespace) {
                // A word the map lacks was refused when the run started.
                Some(Some(value)) => found.push((
                    source.value.clone(),
                    source.reading(value.clone()).unwrap_or(value),
                )),
                Some(None) => {}
                None => missing.push(object),
            }
        }
        Ok(found)
    }

    /// The port lists (values of `ports` overrides) whose text holds more
    /// than ports and ranges, for a mesh that reads names in them as the
    /// pod's named container ports (`named_port`): each with its names
    /// resolved, and what is neither a port, a range nor such a name left
    /// out with a warning. The text read is the one that wins in
    /// [`Profile::values_with`].
    pub(super) fn resolved_port_lists(
        &self,
        from_annotations: &[(String, Value)],
        flags: &Map<String, Value>,
        from_objects: &[(String, String)],
        named_port: &NamedPort<'_>,
        warnings: &mut Vec<String>,
    ) -> Vec<(String, Value)> {
        if !self.mesh.resolves_named_ports() {
            return Vec::new();
        }
        let mut resolved = Vec::new();
        let lists = self
            .overrides
            .iter()
            .filter(|rule| rule.validate == Some(Validate::Ports));
        for rule in lists {
            let name = rule.value.as_str();
            if resolved.iter().any(|(n, _): &(String, Value)| n == name) {
                continue;
            }
            let annotated = from_annotations.iter().rev().find(|(n, _)| n == name);
            let text = match flags.get(name).or(annotated.map(|(_, v)| v)) {
                Some(Value::String(text)) => text.clone(),
                Some(other) => other.to_string(),
                None => match from_objects.iter().rev().find(|(n, _)| n == name) {
                    Some((_, text)) => text.clone(),
                    None => self.values.get(name).map_or(String::new(), |v| match v {
                        Value::String(text) => text.clone(),
                        other => other.to_string(),
                    }),
                },
            };
            let items: Vec<&str> = text
                .trim_end_matches(',')
                .split(',')
                .map(str::trim)
                .filter(|i| !i.is_empty())
                .collect();
            if items.iter().all(|item| is_port_or_range(item)) {
                continue;
            }
            let mut kept = Vec::new();
            for item in items {
                if is_port_or_range(item) {
                    kept.push(item.to_string());
                } else if let Some(port) = named_port(item) {
                    kept.push(port.to_string());
                } else {
                    warnings.push(format!(
                        "{name} ({}): {item:?} is neither a port, a port range nor the name of \
                         a container port of the pod; left out, as the mesh does",
                        rule.annotation
                    ));
                }
            }
            resolved.push((name.to_string(), Value::String(kept.join(","))));
        }
        resolved
    }

    /// The profile's values, with those set by annotations, then by
    /// `flags`, then read from objects over them, then the port lists
    /// with their names resolved.
    pub(super) fn values_with(
        &self,
        from_annotations: &[(String, Value)],
        flags: &Map<String, Value>,
        from_objects: &[(String, String)],
        resolved: &[(String, Value)],
    ) -> Map<String, Value> {
        let mut values = self.values.clone();
        for (name, value) in from_annotations {
            if self.merge_of(name).is_none() {
                values.insert(name.clone(), value.clone());
            }
        }
        for (name, value) in from_objects {
            // Of the value's own type (a port is a number), as annotations are.
            let current = self.values.get(name).unwrap_or(&Value::Null);
            let typed = typed_like(current, value).unwrap_or_else(|_| Value::String(value.clone()));
            values.insert(name.clone(), typed);
        }
        for (name, value) in from_annotations {
            if let (Some(merge), Some(lower)) = (self.merge_of(name), values.get(name)) {
                let merged = merge.apply(lower, value);
                values.insert(name.clone(), merged);
            }
        }
        for (name, value) in flags {
            values.insert(name.clone(), value.clone());
        }
        for (name, value) in resolved {
            values.insert(name.clone(), value.clone());
        }
        let set = crate::mesh::SetBy {
            annotations: &|name: &str| from_annotations.iter().any(|(n, _)| n == name),
            flags: &|name: &str| flags.contains_key(name),
        };
        self.mesh.complete(&mut values, &set);
        values
    }

    /// This profile with its values taken from `document`, a document of
    /// the values the ConfigMap `config_map`'s `key` holds (a Linkerd
    /// release's chart's `values.yaml`, which `linkerd-config` holds for an
    /// installed release): each at the `path` its `valuesFromObjects` entry
    /// gives, of the value's own type, a later entry winning. A value the
    /// document leaves empty keeps the profile's.
    pub fn with_defaults_from(&self, document: &Value, config_map: &str, key: &str) -> Profile {
        let mut profile = self.clone();
        for source in &self.values_from_objects {
            let Some(path) = source.path.as_deref() else {
                continue;
            };
            if source.name != config_map || source.key != key {
                continue;
            }
            let found = path
                .split('.')
                .try_fold(document, |at, step| at.as_object()?.get(step))
                .and_then(crate::cluster::document_text);
            let Some(text) = found else {
                continue;
            };
            // In the profile's words, as the cluster's value is read.
            let Ok(text) = source.reading(text) else {
                continue;
            };
            let current = self.values.get(&source.value).unwrap_or(&Value::Null);
            // A value the profile leaves to the target cluster (`auto`: native
            // sidecars where Kubernetes runs them) stays so: a release's
            // default is what it gives where that release runs. A cluster's
            // own setting (linkerd-config) is followed as it is.
            if current.as_str() == Some("auto") {
                continue;
            }
            let typed = typed_like(current, &text).unwrap_or(Value::String(text));
            profile.values.insert(source.value.clone(), typed);
        }
        profile
    }

    /// How an annotation setting `value` merges, if it does.
    pub fn merge_of(&self, value: &str) -> Option<Merge> {
        self.overrides
            .iter()
            .find(|rule| rule.value == value && rule.merge.is_some())
            .and_then(|rule| rule.merge)
    }

    /// The required values still empty among `values`, each said with the
    /// profile's hint on how to supply it. The hint may use
    /// `{{values.NAME}}`, so that it names what is in force (the control
    /// plane's namespace); one that does not render is shown as written.
    pub fn missing_required(&self, values: &Map<String, Value>) -> Vec<String> {
        let lookup = |name: &str| {
            name.strip_prefix("values.")
                .and_then(|value| values.get(value).cloned())
        };
        self.required
            .iter()
            .filter(|(name, _)| {
                values
                    .get(*name)
                    .is_none_or(|v| v.is_null() || v.as_str().is_some_and(str::is_empty))
            })
            .map(|(name, hint)| {
                let hint = template::render(hint, &lookup)
                    .ok()
                    .filter(Value::is_string)
                    .unwrap_or_else(|| hint.clone());
                match hint.as_str().map(str::trim).filter(|h| !h.is_empty()) {
                    Some(hint) => format!("value {name:?} is empty: {hint}"),
                    None => format!("value {name:?} is empty"),
                }
            })
            .collect()
    }
}

impl Profile {
    /// The cluster's configuration checked once a run: every value the
    /// profile reads from the objects of `cluster` (those `flags` do not
    /// set) must be one it can take, as `--set` would take it (the same
    /// words, an error naming the object and the place in it); and every
    /// key of a document it reads that it neither reads nor knows as
    /// irrelevant to injection is a warning naming it.
    pub fn check_objects(
        &self,
        cluster: &ClusterContext,
        flags: &Map<String, Value>,
    ) -> Result<Vec<Note>, Error> {
        let lookup = |name: &str| {
            name.strip_prefix("values.")
                .and_then(|v| flags.get(v).or_else(|| self.values.get(v)))
                .cloned()
        };
        let namespace_of = |source: &ValueFromObject| {
            template::render(&Value::String(source.namespace.clone()), &lookup)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        };
        for source in self
            .values_from_objects
            .iter()
            .filter(|s| !flags.contains_key(&s.value))
        {
            let namespace = namespace_of(source);
            let Some(Some(raw)) = cluster.source_value(source, &namespace) else {
                continue;
            };
            let place = match &source.path {
                Some(path) => format!("{}: {path}", source.key),
                None => source.key.clone(),
            };
            let refused = |message: String| -> Error {
                ConfigError::ClusterValue(format!(
                    "{} {namespace}/{}: {place} (the profile's {}): {message}",
                    source.kind, source.name, source.value
                ))
                .into()
            };
            let read = source.reading(raw).map_err(refused)?;
            if let Err(error) = self.parse_assignment(&format!("{}={read}", source.value), flags) {
                let message = match error {
                    Error::Config(ConfigError::Set { message, .. }) => message,
                    other => other.to_string(),
                };
                return Err(refused(message));
            }
        }
        let mut notes = Vec::new();
        if let Some(note) = self.defaults_note(cluster, flags, &namespace_of) {
            notes.push(note);
        }
        for (name, key) in self.config_map_documents() {
            let sources = || {
                self.values_from_objects
                    .iter()
                    .filter(|s| s.name == name && s.key == key)
            };
            let Some(namespace) = sources().next().map(namespace_of) else {
                continue;
            };
            let Some(document) = cluster.config_map_document(&namespace, &name, &key) else {
                continue;
            };
            let mut known: Vec<&str> = sources().filter_map(|s| s.path.as_deref()).collect();
            known.extend(
                self.irrelevant_object_paths
                    .iter()
                    .filter(|i| i.name == name && i.key == key)
                    .flat_map(|i| i.paths.iter().map(String::as_str)),
            );
            let mut unknown = Vec::new();
            unknown_paths(document, String::new(), &known, &mut unknown);
            if !unknown.is_empty() {
                notes.push(
                    Note::warning(format!(
                        "ConfigMap {namespace}/{name}: {key}: {} not known to this tool, so not applied: \
                         a proxy injected here may differ from the one the cluster's injector writes",
                        match unknown.as_slice() {
                            [one] => format!("{one} is"),
                            many => format!("{} are", many.join(", ")),
                        }
                    ))
                    .about_the_run(),
                );
            }
        }
        Ok(notes)
    }
}

/// The paths of `value`'s leaves (at `at`) that no path of `known` is or
/// holds, added to `unknown`: empty mappings and nulls say nothing.
fn unknown_paths(value: &Value, at: String, known: &[&str], unknown: &mut Vec<String>) {
    let covered = |path: &str| {
        known.iter().any(|k| {
            path == *k
                || path
                    .strip_prefix(k)
                    .is_some_and(|rest| rest.starts_with('.'))
        })
    };
    if !at.is_empty() && covered(&at) {
        return;
    }
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                let path = if at.is_empty() {
                    key.clone()
                } else {
                    format!("{at}.{key}")
                };
                unknown_paths(inner, path, known, unknown);
            }
        }
        Value::Null => {}
        _ => unknown.push(at),
    }
}

/// A `--set NAME=VALUE` the profile cannot take, and why.
fn set_error(name: &str, message: String) -> Error {
    ConfigError::Set {
        name: name.to_string(),
        message,
    }
    .into()
}

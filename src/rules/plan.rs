//! A plan is an RFC 6902 JSON Patch, built one operation at a time.

use json_patch::jsonptr::PointerBuf;
use json_patch::{AddOperation, PatchOperation, RemoveOperation};
use serde_json::{Map, Value};

use crate::json::Field;
use crate::note::Note;

/// What happened to one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Injected,
    /// An object without a pod got what the mesh's webhook writes on it
    /// (Linkerd's opaque ports on a Service).
    Annotated,
    /// Injecting again gave the same object.
    AlreadyInjected,
    Uninjected,
    /// Uninject found nothing to remove.
    NotInjected,
    /// Left alone for a reason the user may not expect (an opt-out, host
    /// networking, another mesh, a policy): always reported.
    Skipped(String),
    /// The mesh's webhook would deny the pod (Istio: an annotation its
    /// injector refuses), with why, in its words: a rejection, as at the
    /// apiserver, and the object left as it was.
    Denied(String),
    /// Left alone as expected: nothing of the mesh's (a kind without a pod,
    /// a document that is no object, a Service the mesh writes nothing
    /// on). Counted as skipped; the text report lists it only with `-v`.
    Ignored(String),
}

impl Outcome {
    /// Whether the object was left as expected (already injected, nothing
    /// to take out, nothing of the mesh's): the text report lists it only
    /// with `-v`.
    pub fn is_routine(&self) -> bool {
        matches!(
            self,
            Outcome::AlreadyInjected | Outcome::NotInjected | Outcome::Ignored(_)
        )
    }
}

/// The operations for one object and the object they produce.
#[derive(Debug, Clone)]
pub struct Plan {
    pub outcome: Outcome,
    pub ops: Vec<PatchOperation>,
    pub result: Value,
    /// What the user should know about this object (warnings, changes made
    /// beyond the sidecar such as a raised grace period).
    pub notes: Vec<Note>,
    /// What the user can change where the injection alone cannot meet the
    /// namespace's policies (e.g. CNI mode under Pod Security `restricted`).
    pub hints: Vec<String>,
    /// A previous injection was taken out and the workload injected anew,
    /// with a different result: the text is best rewritten from the
    /// uninjected workload (see `pipeline`).
    pub reinjected: bool,
    /// How the earlier injection this one replaces differed from it, in a
    /// line (see [`crate::rules::stale`]): what made the manifest stale.
    pub replaced: Option<String>,
}

/// Why a kind is left alone by inject: it carries no pod template.
pub const NOT_INJECTABLE: &str = "kind is not injectable";

impl Plan {
    /// The object `patcher` changed, with the operations it applied.
    pub fn changed(outcome: Outcome, patcher: Patcher, notes: Vec<Note>) -> Self {
        Plan {
            outcome,
            ops: patcher.ops,
            result: patcher.value,
            notes,
            hints: Vec::new(),
            reinjected: false,
            replaced: None,
        }
    }

    /// Leave `object` as it is.
    pub fn unchanged(object: Value, outcome: Outcome) -> Self {
        Plan {
            outcome,
            ops: Vec::new(),
            result: object,
            notes: Vec::new(),
            hints: Vec::new(),
            reinjected: false,
            replaced: None,
        }
    }
}

/// Builds a patch while applying each operation to a working copy, so every
/// rule sees the object as the operations so far have left it.
pub struct Patcher {
    pub value: Value,
    /// The operations applied, when they are recorded.
    pub ops: Vec<PatchOperation>,
    /// How many operations were applied, recorded or not.
    pub changes: usize,
    /// Keep the operations (`-o patch`); without them, added values are
    /// moved into the object instead of copied.
    record: bool,
}

/// Why a plan could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// An operation that did not apply: a rule built a path that is not
    /// there. A defect of this tool, not of the input.
    #[error("internal error while planning: {0}")]
    Internal(String),
    /// The workload would be injected with something the profile requires
    /// left empty (a proxy that cannot start): the user's to supply, and the
    /// message says what and how. Nothing is written then.
    #[error("{0}")]
    Refused(String),
    /// The cluster's own injection template failed for the workload (or it
    /// asked for a template the configuration lacks): the user's to fix in
    /// the ConfigMap, so it stops the run as a refusal does.
    #[error(transparent)]
    MeshTemplate(#[from] crate::mesh::istio::ConfigError),
    /// A Linkerd release's chart that fails to render the workload's
    /// sidecar (or lacks a partial): the user's to fix, as above.
    #[error(transparent)]
    LinkerdChart(Box<crate::mesh::linkerd::chart::ChartError>),
}

impl PlanError {
    /// Whether the input (or its context) is the user's to fix, as opposed
    /// to a defect of this tool.
    pub fn is_refusal(&self) -> bool {
        !matches!(self, PlanError::Internal(_))
    }
}

impl Patcher {
    pub fn new(value: Value, record: bool) -> Self {
        Patcher {
            value,
            ops: Vec::new(),
            changes: 0,
            record,
        }
    }

    pub fn get(&self, path: &[String]) -> Option<&Value> {
        path.iter().try_fold(&self.value, |at, token| match at {
            Value::Object(map) => map.field(token),
            Value::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        })
    }

    /// RFC 6902 `add`: set a member, or insert into a list at an index or at `-` (the end).
    pub fn add(&mut self, path: &[String], value: Value) -> Result<(), PlanError> {
        let (last, parent) = path
            .split_last()
            .ok_or_else(|| PlanError::Internal("add at the root".into()))?;
        self.add_below(parent, last, value)
    }

    /// [`Patcher::add`] at `parent` followed by `last`, without making that
    /// path (unless the operation is recorded): a member `last` of the
    /// mapping at `parent`, or an item at index `last` (or `-`) of its list.
    pub fn add_below(
        &mut self,
        parent: &[String],
        last: &str,
        value: Value,
    ) -> Result<(), PlanError> {
        let op_value = self.record.then(|| value.clone());
        match self.parent(parent, parent)? {
            Value::Object(map) => {
                map.insert(last.to_string(), value);
            }
            Value::Array(items) if last == "-" => items.push(value),
            Value::Array(items) => match last.parse::<usize>() {
                Ok(index) if index <= items.len() => items.insert(index, value),
                _ => {
                    return Err(PlanError::Internal(format!(
                        "add: no index {last} in {}",
                        pointer(parent)
                    )));
                }
            },
            _ => {
                return Err(PlanError::Internal(format!(
                    "add: {} is not a container",
                    pointer(parent)
                )));
            }
        }
        self.changes += 1;
        if let Some(value) = op_value {
            self.ops.push(PatchOperation::Add(AddOperation {
                path: PointerBuf::from_tokens(parent.iter().map(String::as_str).chain([last])),
                value,
            }));
        }
        Ok(())
    }

    /// `add` each of `items` to the list at `path`, walking to it once:
    /// from index `at` on, in order, or at the end (`-`) for `None`.
    pub fn add_items(
        &mut self,
        path: &[String],
        at: Option<usize>,
        items: Vec<Value>,
    ) -> Result<(), PlanError> {
        let record = self.record;
        let Value::Array(list) = self.parent(path, path)? else {
            return Err(PlanError::Internal(format!(
                "add: {} is not a list",
                pointer(path)
            )));
        };
        let mut ops = Vec::new();
        let count = items.len();
        for (offset, item) in items.into_iter().enumerate() {
            let slot = at.map(|at| at + offset);
            if record {
                let last = slot.map_or_else(|| "-".to_string(), |i| i.to_string());
                ops.push(PatchOperation::Add(AddOperation {
                    path: PointerBuf::from_tokens(
                        path.iter().map(String::as_str).chain([last.as_str()]),
                    ),
                    value: item.clone(),
                }));
            }
            match slot {
                None => list.push(item),
                Some(index) if index <= list.len() => list.insert(index, item),
                Some(index) => {
                    return Err(PlanError::Internal(format!(
                        "add: no index {index} in {}",
                        pointer(path)
                    )));
                }
            }
        }
        self.changes += count;
        self.ops.extend(ops);
        Ok(())
    }

    /// `add` each of `entries` the mapping at `path` lacks (in their order),
    /// walking to the mapping once; returns the keys added.
    pub fn add_missing(
        &mut self,
        path: &[String],
        entries: Map<String, Value>,
    ) -> Result<Vec<String>, PlanError> {
        let record = self.record;
        let Value::Object(map) = self.parent(path, path)? else {
            return Err(PlanError::Internal(format!(
                "add: {} is not a mapping",
                pointer(path)
            )));
        };
        let mut added = Vec::new();
        let mut ops = Vec::new();
        for (key, value) in entries {
            // One lookup: the key is hashed once.
            if let serde_json::map::Entry::Vacant(vacant) = map.entry(key) {
                added.push(vacant.key().clone());
                if record {
                    let at = path
                        .iter()
                        .map(String::as_str)
                        .chain([vacant.key().as_str()]);
                    ops.push(PatchOperation::Add(AddOperation {
                        path: PointerBuf::from_tokens(at),
                        value: value.clone(),
                    }));
                }
                vacant.insert(value);
            }
        }
        self.changes += added.len();
        self.ops.extend(ops);
        Ok(added)
    }

    /// `add` the member `key` to the mapping at `path`, at `index` among its
    /// members (last when it has fewer): a member goes back where it was.
    pub fn add_at(
        &mut self,
        path: &[String],
        index: usize,
        key: &str,
        value: Value,
    ) -> Result<(), PlanError> {
        let op_value = self.record.then(|| value.clone());
        let Value::Object(map) = self.parent(path, path)? else {
            return Err(PlanError::Internal(format!(
                "add: {} is not a mapping",
                pointer(path)
            )));
        };
        map.shift_insert(index.min(map.len()), key.to_string(), value);
        self.changes += 1;
        if let Some(value) = op_value {
            let mut at = path.to_vec();
            at.push(key.to_string());
            self.ops.push(PatchOperation::Add(AddOperation {
                path: PointerBuf::from_tokens(&at),
                value,
            }));
        }
        Ok(())
    }

    /// RFC 6902 `remove`; members keep the order of the rest.
    pub fn remove(&mut self, path: &[String]) -> Result<(), PlanError> {
        let (last, parent) = path
            .split_last()
            .ok_or_else(|| PlanError::Internal("remove at the root".into()))?;
        let removed = match self.parent(parent, path)? {
            Value::Object(map) => map.shift_remove(last).is_some(),
            Value::Array(items) => match last.parse::<usize>() {
                Ok(index) if index < items.len() => {
                    items.remove(index);
                    true
                }
                _ => false,
            },
            _ => false,
        };
        if !removed {
            return Err(PlanError::Internal(format!(
                "remove: nothing at {}",
                pointer(path)
            )));
        }
        self.changes += 1;
        if self.record {
            self.ops.push(PatchOperation::Remove(RemoveOperation {
                path: PointerBuf::from_tokens(path),
            }));
        }
        Ok(())
    }

    fn parent(&mut self, parent: &[String], path: &[String]) -> Result<&mut Value, PlanError> {
        let mut at = &mut self.value;
        for token in parent {
            at = match at {
                Value::Object(map) => map.field_mut(token),
                Value::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get_mut(i)),
                _ => None,
            }
            .ok_or_else(|| PlanError::Internal(format!("{} does not exist", pointer(path))))?;
        }
        Ok(at)
    }
}

fn pointer(path: &[String]) -> String {
    PointerBuf::from_tokens(path).to_string()
}

/// `prefix` followed by `rest`, as owned pointer tokens.
pub fn path(prefix: &[&str], rest: &[&str]) -> Vec<String> {
    prefix.iter().chain(rest).map(|s| s.to_string()).collect()
}

impl From<crate::mesh::linkerd::chart::ChartError> for PlanError {
    fn from(error: crate::mesh::linkerd::chart::ChartError) -> Self {
        PlanError::LinkerdChart(Box::new(error))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn add_missing_keeps_what_is_there_and_records_each_addition() {
        let object = json!({"metadata": {"annotations": {"a": "mine"}}});
        let mut patcher = Patcher::new(object, true);
        let entries = json!({"a": "theirs", "b": "new", "c": "too"});
        let Value::Object(entries) = entries else {
            unreachable!()
        };
        let annotations = path(&["metadata", "annotations"], &[]);
        let added = patcher
            .add_missing(&annotations, entries.clone())
            .expect("a mapping");
        assert_eq!(added, ["b", "c"]);
        assert_eq!(
            patcher.value,
            json!({"metadata": {"annotations": {"a": "mine", "b": "new", "c": "too"}}})
        );
        let ops = serde_json::to_value(&patcher.ops).expect("ops");
        assert_eq!(
            ops,
            json!([
                {"op": "add", "path": "/metadata/annotations/b", "value": "new"},
                {"op": "add", "path": "/metadata/annotations/c", "value": "too"}
            ])
        );
        assert_eq!(patcher.changes, 2);
        let a_string = path(&["metadata", "annotations", "a"], &[]);
        assert!(patcher.add_missing(&a_string, entries).is_err());
    }

    #[test]
    fn items_added_together_are_what_adding_each_gives() {
        let object = json!({"spec": {"volumes": [{"name": "own"}], "inits": []}});
        let items = || vec![json!({"name": "a"}), json!({"name": "b"})];
        for at in [None, Some(0), Some(1)] {
            let mut together = Patcher::new(object.clone(), true);
            let volumes = path(&["spec", "volumes"], &[]);
            together.add_items(&volumes, at, items()).expect("added");
            let mut each = Patcher::new(object.clone(), true);
            for (offset, item) in items().into_iter().enumerate() {
                let last = at.map_or("-".to_string(), |at| (at + offset).to_string());
                each.add_below(&volumes, &last, item).expect("added");
            }
            assert_eq!(together.value, each.value, "{at:?}");
            assert_eq!(
                serde_json::to_value(&together.ops).ok(),
                serde_json::to_value(&each.ops).ok(),
                "{at:?}"
            );
            assert_eq!(together.changes, 2);
        }
        let mut patcher = Patcher::new(object, false);
        let volumes = path(&["spec", "volumes"], &[]);
        assert!(patcher.add_items(&volumes, Some(5), items()).is_err());
        let not_a_list = path(&["spec"], &[]);
        assert!(patcher.add_items(&not_a_list, None, items()).is_err());
    }
}

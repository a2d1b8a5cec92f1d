//! A plan is an RFC 6902 JSON Patch, built one operation at a time.

use json_patch::jsonptr::PointerBuf;
use json_patch::{AddOperation, PatchOperation, RemoveOperation};
use serde_json::Value;

/// What happened to one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Injected,
    /// Injecting again gave the same object.
    AlreadyInjected,
    Uninjected,
    /// Uninject found nothing to remove.
    NotInjected,
    Skipped(String),
}

/// The operations for one object and the object they produce.
#[derive(Debug, Clone)]
pub struct Plan {
    pub outcome: Outcome,
    pub ops: Vec<PatchOperation>,
    pub result: Value,
    /// What the user should know about this object (warnings, changes made
    /// beyond the sidecar such as a raised grace period).
    pub notes: Vec<String>,
}

impl Plan {
    /// Leave `object` as it is.
    pub fn unchanged(object: &Value, outcome: Outcome) -> Self {
        Plan {
            outcome,
            ops: Vec::new(),
            result: object.clone(),
            notes: Vec::new(),
        }
    }
}

/// Builds a patch while applying each operation to a working copy, so every
/// rule sees the object as the operations so far have left it.
pub struct Patcher {
    pub value: Value,
    pub ops: Vec<PatchOperation>,
}

/// An operation that did not apply: a rule built a path that is not there.
#[derive(Debug)]
pub struct PlanError(pub String);

impl Patcher {
    pub fn new(value: Value) -> Self {
        Patcher {
            value,
            ops: Vec::new(),
        }
    }

    pub fn get(&self, path: &[String]) -> Option<&Value> {
        path.iter().try_fold(&self.value, |at, token| match at {
            Value::Object(map) => map.get(token),
            Value::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        })
    }

    pub fn add(&mut self, path: &[String], value: Value) -> Result<(), PlanError> {
        self.apply(PatchOperation::Add(AddOperation {
            path: PointerBuf::from_tokens(path),
            value,
        }))
    }

    pub fn remove(&mut self, path: &[String]) -> Result<(), PlanError> {
        self.apply(PatchOperation::Remove(RemoveOperation {
            path: PointerBuf::from_tokens(path),
        }))
    }

    fn apply(&mut self, op: PatchOperation) -> Result<(), PlanError> {
        json_patch::patch(&mut self.value, std::slice::from_ref(&op))
            .map_err(|e| PlanError(format!("{op}: {e}")))?;
        self.ops.push(op);
        Ok(())
    }
}

/// `prefix` followed by `rest`, as owned pointer tokens.
pub fn path(prefix: &[&str], rest: &[&str]) -> Vec<String> {
    prefix.iter().chain(rest).map(|s| s.to_string()).collect()
}

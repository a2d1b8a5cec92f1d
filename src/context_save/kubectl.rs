//! Reading the cluster through the user's `kubectl`: its kubeconfig, its
//! credentials and its flags, so that this tool holds none of them.

use std::ffi::OsString;
use std::process::Command;

use serde_json::Value;

use crate::error::Error;

/// How kubectl is called: the flags that go before every `get`.
#[derive(Debug, Clone, Default)]
pub struct Kubectl {
    pub flags: Vec<OsString>,
}

/// What one `get` of a kind found.
#[derive(Debug)]
pub enum Listed {
    /// The objects, as the list holds them.
    Items(Vec<Value>),
    /// The cluster does not serve the kind (PodSecurityPolicy after 1.24).
    NotServed,
}

/// What kubectl says when discovery does not list a resource.
const NOT_SERVED: &str = "the server doesn't have a resource type";

impl Kubectl {
    /// Every object of `resource` (a name kubectl takes, as
    /// `podsecuritypolicies.v1beta1.policy`), in `namespace`, or in every
    /// namespace when `None` and the kind has namespaces (`all`).
    pub fn list(
        &self,
        resource: &str,
        namespace: Option<&str>,
        all: bool,
    ) -> Result<Listed, Error> {
        let mut command = Command::new("kubectl");
        // The user's flags after the verb: before it, kubectl takes an
        // unknown one for a plugin's name.
        command.args(["get", resource, "-o", "json"]);
        match namespace {
            Some(namespace) => {
                command.args(["--namespace", namespace]);
            }
            None if all => {
                command.arg("--all-namespaces");
            }
            None => {}
        }
        command.args(&self.flags);
        let shown = format!(
            "kubectl get {resource}{}",
            match (namespace, all) {
                (Some(ns), _) => format!(" -n {ns}"),
                (None, true) => " -A".into(),
                (None, false) => String::new(),
            }
        );
        let output = command.output().map_err(|e| {
            Error::Cluster(match e.kind() {
                std::io::ErrorKind::NotFound => "kubectl is not on PATH: context save reads the cluster through kubectl, with your kubeconfig; install kubectl, or run where it is; nothing was written".to_string(),
                _ => format!("{shown}: cannot run kubectl: {e}; nothing was written"),
            })
        })?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        if !output.status.success() {
            if stderr.contains(NOT_SERVED) {
                return Ok(Listed::NotServed);
            }
            let status = output
                .status
                .code()
                .map_or_else(|| "killed".to_string(), |c| format!("exit {c}"));
            return Err(Error::Cluster(format!(
                "{shown} failed ({status}); nothing was written. kubectl said:\n{}",
                stderr.trim_end()
            )));
        }
        let list: Value = serde_json::from_slice(&output.stdout).map_err(|e| {
            Error::Cluster(format!(
                "{shown}: kubectl's output is not JSON ({e}); nothing was written"
            ))
        })?;
        items_of(&list)
            .map(Listed::Items)
            .map_err(|message| Error::Cluster(format!("{shown}: {message}; nothing was written")))
    }
}

/// The objects of a `kubectl get -o json` list, each with the `kind` and
/// `apiVersion` the list's items imply where the item names none (the
/// apiserver leaves them out of a typed list's items).
fn items_of(list: &Value) -> Result<Vec<Value>, String> {
    let kind = list.get("kind").and_then(Value::as_str).unwrap_or_default();
    let Some(items) = list.get("items").and_then(Value::as_array) else {
        return Err(format!("kubectl's output is not a list (kind {kind:?})"));
    };
    let item_kind = kind.strip_suffix("List").filter(|k| !k.is_empty());
    let api_version = list.get("apiVersion").cloned();
    let mut objects = Vec::with_capacity(items.len());
    for item in items {
        let mut item = item.clone();
        let Some(fields) = item.as_object_mut() else {
            return Err("an item of the list is not an object".into());
        };
        if !fields.contains_key("kind") {
            let Some(item_kind) = item_kind else {
                return Err("an item names no kind, nor does its list".into());
            };
            fields.insert("kind".into(), Value::String(item_kind.into()));
        }
        if let (false, Some(version)) = (fields.contains_key("apiVersion"), &api_version) {
            fields.insert("apiVersion".into(), version.clone());
        }
        objects.push(item);
    }
    Ok(objects)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_typed_lists_items_get_its_kind_and_version() {
        let list = json!({"kind": "ConfigMapList", "apiVersion": "v1",
            "items": [{"metadata": {"name": "a"}},
                      {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "b"}}]});
        let items = items_of(&list).expect("a list");
        assert_eq!(items[0]["kind"], "ConfigMap");
        assert_eq!(items[0]["apiVersion"], "v1");
        assert_eq!(items[1]["metadata"]["name"], "b");
        // kubectl's own `List` names no kind for its items: they must.
        let bare = json!({"kind": "List", "apiVersion": "v1", "items": [{"metadata": {}}]});
        assert!(items_of(&bare).is_err());
        assert!(items_of(&json!({"kind": "ConfigMap"})).is_err());
    }
}

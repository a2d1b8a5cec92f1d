//! Talking to the cluster through the user's `kubectl`: its kubeconfig, its
//! credentials and its flags, so that this tool holds none of them. Used by
//! `context save` (lists) and `verify` (server-side dry runs).

use std::ffi::OsString;
use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::cli::KubectlArgs;
use crate::error::Error;

/// How kubectl is called.
#[derive(Debug, Clone)]
pub struct Kubectl {
    /// The user's flags, after the verb of every call.
    pub flags: Vec<OsString>,
    /// The command, as messages name it (`context save`).
    pub command: &'static str,
    /// What a failure leaves, said after it (`nothing was written`).
    pub on_failure: &'static str,
}

/// What the cluster made of a pod created as a dry run.
#[derive(Debug, Clone, PartialEq)]
pub enum DryRun {
    /// The pod as the apiserver would store it.
    Created(Value),
    /// The apiserver refused it (a validation, a policy, a webhook's denial):
    /// what kubectl said.
    Refused(String),
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
    /// kubectl with the kubeconfig, its context and the flags after `--`
    /// that `args` name, for `command`.
    pub fn new(args: &KubectlArgs, command: &'static str, on_failure: &'static str) -> Self {
        let mut flags: Vec<OsString> = Vec::new();
        if let Some(path) = &args.kubeconfig {
            flags.push("--kubeconfig".into());
            flags.push(path.into());
        }
        if let Some(context) = &args.kube_context {
            flags.push("--context".into());
            flags.push(context.into());
        }
        flags.extend(args.kubectl_flags.iter().map(Into::into));
        Kubectl {
            flags,
            command,
            on_failure,
        }
    }

    /// Create `pod` in `namespace` as a server-side dry run (`kubectl
    /// create --dry-run=server`): the apiserver runs its whole admission
    /// chain, webhooks included, and stores nothing.
    pub fn create_dry_run(&self, pod: &Value, namespace: &str) -> Result<DryRun, Error> {
        let mut command = Command::new("kubectl");
        command.args(["create", "--dry-run=server", "-o", "json", "-f", "-"]);
        command.args(["--namespace", namespace]);
        command.args(&self.flags);
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let shown = format!("kubectl create --dry-run=server -n {namespace}");
        let mut child = command.spawn().map_err(|e| self.not_run(&shown, &e))?;
        let body = pod.to_string();
        // Written while kubectl runs, then closed; kubectl reads it all
        // before it answers.
        if let Some(mut stdin) = child.stdin.take() {
            stdin
                .write_all(body.as_bytes())
                .map_err(|e| self.not_run(&shown, &e))?;
        }
        let output = child
            .wait_with_output()
            .map_err(|e| self.not_run(&shown, &e))?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        if !output.status.success() {
            // The apiserver's answer, as kubectl prints it; anything else
            // (no connection, no credentials) is not the cluster's verdict.
            if let Some(refusal) = stderr.trim().strip_prefix("Error from server") {
                // kubectl names its input, which is this tool's.
                let refusal = refusal.replacen("error when creating \"STDIN\": ", "", 1);
                return Ok(DryRun::Refused(format!("Error from server{refusal}")));
            }
            return Err(self.failed(&shown, &output.status, &stderr));
        }
        serde_json::from_slice(&output.stdout)
            .map(DryRun::Created)
            .map_err(|e| {
                Error::Cluster(format!(
                    "{shown}: kubectl's output is not JSON ({e}); {}",
                    self.on_failure
                ))
            })
    }

    fn not_run(&self, shown: &str, e: &std::io::Error) -> Error {
        Error::Cluster(match e.kind() {
            std::io::ErrorKind::NotFound => format!(
                "kubectl is not on PATH: {} talks to the cluster through kubectl, with your kubeconfig; install kubectl, or run where it is; {}",
                self.command, self.on_failure
            ),
            _ => format!("{shown}: cannot run kubectl: {e}; {}", self.on_failure),
        })
    }

    fn failed(&self, shown: &str, status: &std::process::ExitStatus, stderr: &str) -> Error {
        let status = status
            .code()
            .map_or_else(|| "killed".to_string(), |c| format!("exit {c}"));
        Error::Cluster(format!(
            "{shown} failed ({status}); {}. kubectl said:\n{}",
            self.on_failure,
            stderr.trim_end()
        ))
    }

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
        let output = command.output().map_err(|e| self.not_run(&shown, &e))?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        if !output.status.success() {
            if stderr.contains(NOT_SERVED) {
                return Ok(Listed::NotServed);
            }
            return Err(self.failed(&shown, &output.status, &stderr));
        }
        let list: Value = serde_json::from_slice(&output.stdout).map_err(|e| {
            Error::Cluster(format!(
                "{shown}: kubectl's output is not JSON ({e}); {}",
                self.on_failure
            ))
        })?;
        items_of(&list)
            .map(Listed::Items)
            .map_err(|message| Error::Cluster(format!("{shown}: {message}; {}", self.on_failure)))
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

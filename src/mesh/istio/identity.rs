//! How Istio's injector names a pod's workload and whom its proxy runs as
//! (`pkg/kube/inject/inject.go`: `DeploymentMeta`, `GetProxyIDs`;
//! `openshift.go`).

use super::*;

/// The annotations OpenShift gives a project: the user IDs its pods run as,
/// and their supplemental groups.
pub(super) const UID_RANGE: &str = "openshift.io/sa.scc.uid-range";
pub(super) const SUPPLEMENTAL_GROUPS: &str = "openshift.io/sa.scc.supplemental-groups";

/// The proxy's user and group in a namespace with these `annotations`, as
/// Istio's injector picks them (`GetProxyIDs` in `inject.go`, with
/// OpenShift's block syntax, `START/SIZE` or `START-END`): on OpenShift the
/// last ID of the project's UID range, and the last of its first
/// supplemental group block (the UID range when it has none); `None` for
/// each that the namespace does not give (1337 then).
pub fn openshift_proxy_ids(annotations: Option<&Map<String, Value>>) -> (Option<i64>, Option<i64>) {
    let annotation = |key: &str| {
        annotations
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
    };
    let uid = annotation(UID_RANGE)
        .and_then(id_block)
        .map(|(_, end)| i64::from(end));
    let groups = annotation(SUPPLEMENTAL_GROUPS).or_else(|| annotation(UID_RANGE));
    // Every block must read, as OpenShift parses them; the first one counts.
    let gid = groups.and_then(|groups| {
        let blocks: Option<Vec<(u32, u32)>> = groups.split(',').map(id_block).collect();
        blocks?.first().map(|(_, end)| i64::from(*end))
    });
    (uid, gid)
}

/// An OpenShift ID block, `START/SIZE` (the last is START+SIZE-1) or
/// `START-END`, read as Go's `fmt.Sscanf` reads `%d/%d` and `%d-%d`.
pub(super) fn id_block(text: &str) -> Option<(u32, u32)> {
    let number = |t: &str| t.trim_start().parse::<u32>().ok();
    if let Some((start, size)) = text.split_once('/') {
        let (start, size) = (number(start)?, number(size)?);
        return Some((start, start.wrapping_add(size).wrapping_sub(1)));
    }
    let (start, end) = text.split_once('-')?;
    Some((number(start)?, number(end)?))
}

/// How Istio's injector names a pod's workload (its `DeploymentMeta` and
/// `TypeMeta`, and what its template makes of them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    /// The workload's API version, kind and name (Istio's `TypeMeta` and
    /// `DeploymentMeta`); empty when the object has none.
    pub api_version: String,
    pub kind: String,
    pub name: String,
    /// `ISTIO_META_OWNER`: `kubernetes://apis/API_VERSION/namespaces/NS/KINDs/NAME`;
    /// empty without an API version or a name.
    pub owner: String,
    /// `ISTIO_META_WORKLOAD_NAME`: the pod's `service.istio.io/workload-name`
    /// label, else the workload's name.
    pub workload_name: String,
    /// `service.istio.io/canonical-name`: the pod's label of that name,
    /// `app.kubernetes.io/name` or `app`, else the workload's name; cut to
    /// 63 characters, without leading or trailing `-`, `_` or `.`.
    pub canonical_name: String,
}

/// The workload `object` (of `namespace`, whose pod has `labels`) as Istio's
/// injector names it: a workload by its own API version, kind and name; a
/// bare pod with a generated name by the controller among its owners (a
/// ReplicaSet with the pod's template hash by its Deployment, a Job with a
/// timestamp suffix by its CronJob, a ReplicationController of an OpenShift
/// DeploymentConfig by that), else as the pod `v1` it is.
pub fn identity(object: &Value, labels: Option<&Map<String, Value>>, namespace: &str) -> Identity {
    let label = |key: &str| {
        labels
            .and_then(|l| l.field(key))
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
    };
    let meta = |key: &str| {
        object
            .field("metadata")
            .and_then(|m| m.field(key))
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let text = |value: &Value, key: &str| {
        value
            .field(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let mut api_version = text(object, "apiVersion");
    let mut kind = text(object, "kind");
    let mut name = meta("name").to_string();
    if kind == "Pod" && api_version == "v1" && !meta("generateName").is_empty() {
        let controller = object
            .field("metadata")
            .and_then(|m| m.field("ownerReferences"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|r| r.field("controller").and_then(Value::as_bool) == Some(true));
        if let Some(owner) = controller {
            api_version = text(owner, "apiVersion");
            kind = text(owner, "kind");
            name = text(owner, "name");
            let hash = |key: &str| label(key).filter(|h| name.ends_with(h));
            if kind == "ReplicaSet" {
                if let Some(hash) = hash("pod-template-hash") {
                    name = name
                        .strip_suffix(&format!("-{hash}"))
                        .unwrap_or(&name)
                        .to_string();
                    kind = "Deployment".into();
                } else if let Some(hash) = hash("rollouts-pod-template-hash") {
                    name = name
                        .strip_suffix(&format!("-{hash}"))
                        .unwrap_or(&name)
                        .to_string();
                    kind = "Rollout".into();
                    api_version = "v1alpha1".into();
                }
            } else if kind == "ReplicationController" {
                if let Some(config) = label("deploymentconfig") {
                    name = config.to_string();
                    kind = "DeploymentConfig".into();
                }
            } else if kind == "Job" {
                if let Some(cron) = cron_job_of(&name) {
                    name = cron.to_string();
                    kind = "CronJob".into();
                    api_version = "batch/v1".into();
                }
            }
        }
        if name.is_empty() {
            name = meta("name").to_string();
        }
    }
    let owner = if api_version.is_empty() || name.is_empty() {
        String::new()
    } else {
        format!(
            "kubernetes://apis/{api_version}/namespaces/{namespace}/{}s/{name}",
            kind.to_lowercase()
        )
    };
    let workload_name = label("service.istio.io/workload-name")
        .unwrap_or(&name)
        .to_string();
    let canonical = label("service.istio.io/canonical-name")
        .or_else(|| label("app.kubernetes.io/name"))
        .or_else(|| label("app"))
        .unwrap_or(&name);
    // Cut at 63 bytes, as Go slices a string (back to a character's start).
    let mut end = canonical.len().min(63);
    while !canonical.is_char_boundary(end) {
        end -= 1;
    }
    let canonical_name = canonical
        .get(..end)
        .unwrap_or(canonical)
        .trim_matches(|c| matches!(c, '-' | '_' | '.'))
        .to_string();
    Identity {
        owner,
        workload_name,
        canonical_name,
        api_version,
        kind,
        name,
    }
}

/// The CronJob a Job of this name was made by: the name less a `-` and 8
/// to 10 digits at its end (a CronJob's Jobs are named so).
pub(super) fn cron_job_of(job: &str) -> Option<&str> {
    let digits = job.len() - job.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (cron, suffix) = job.split_at(job.len() - digits);
    let cron = cron.strip_suffix('-')?;
    ((8..=10).contains(&suffix.len()) && !cron.is_empty()).then_some(cron)
}

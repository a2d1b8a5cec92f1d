//! Kustomize patches that address a pod's containers by place, against the
//! workloads they target once injected: a patch of `containers/0` that
//! meant the app hits the proxy where the injection put the proxy first,
//! and a list replaced whole drops what the injection added. Said as a
//! warning naming the patch, the place and the fix; `--check` fails on it.

use serde_json::Value;

use super::Planner;
use super::verbatim::value_at;
use crate::rules::PodPaths;
use crate::source::IndexPatch;
use crate::workload::ObjectRef;

/// [`shifted`] for `injected`, the injected value of `workload`, against
/// the patches of the kustomizations building on its source: the pod as
/// the manifest wrote it is the injection taken out again.
pub(super) fn of_injected(
    injected: &Value,
    workload: &ObjectRef,
    planner: Planner<'_>,
) -> Vec<String> {
    let patches = &planner.kustomized.index_patches;
    let Some(kind) = planner.types.find(&workload.api_version, &workload.kind) else {
        return Vec::new();
    };
    let profile = &planner.settings.profile;
    let Ok(original) = crate::rules::uninject(injected, kind, profile, false) else {
        return Vec::new();
    };
    shifted(
        patches,
        workload,
        &original.result,
        injected,
        &PodPaths::of(kind),
    )
}

/// What goes wrong with each of `patches` that targets `workload` when it
/// is applied to the injected pod (`injected`) instead of the pod as the
/// manifest wrote it (`original`).
pub(super) fn shifted(
    patches: &[IndexPatch],
    workload: &ObjectRef,
    original: &Value,
    injected: &Value,
    paths: &PodPaths,
) -> Vec<String> {
    let names = |object: &Value, list: &str| -> Vec<String> {
        value_at(object, &paths.spec(list))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|c| {
                c.get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_string()
            })
            .collect()
    };
    let targets = |patch: &IndexPatch| {
        patch.kind.as_deref().is_none_or(|k| k == workload.kind)
            && patch.name.as_deref().is_none_or(|n| n == workload.name)
    };
    let mut found = Vec::new();
    for patch in patches.iter().filter(|p| targets(p)) {
        let (before, after) = (names(original, &patch.list), names(injected, &patch.list));
        let list = &patch.list;
        match patch.index {
            Some(index) => {
                let (was, is) = (before.get(index), after.get(index));
                if was == is {
                    continue;
                }
                let was = was.map_or("no container".to_string(), |n| format!("container {n}"));
                let is = is.map_or("no container".to_string(), |n| format!("container {n}"));
                found.push(format!(
                    "kustomize patch {} addresses {list}/{index} of {workload} by place ({}): \
                     injected, that is {is}, where the manifest has {was}; address the container \
                     by its name instead (a strategic merge patch naming it, or a JSON 6902 \
                     patch whose first operation tests {list}/{index}/name)",
                    patch.file, patch.what
                ));
            }
            None => {
                let added: Vec<&String> = after.iter().filter(|n| !before.contains(n)).collect();
                if added.is_empty() {
                    continue;
                }
                let added: Vec<&str> = added.iter().map(|n| n.as_str()).collect();
                found.push(format!(
                    "kustomize patch {} replaces the {list} of {workload} whole ({}): it drops \
                     {} that the injection added; patch the containers by name instead",
                    patch.file,
                    patch.what,
                    added.join(", ")
                ));
            }
        }
    }
    found
}

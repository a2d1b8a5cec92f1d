//! Inject a profile's proxy into a workload's pod template.

use serde_json::{Map, Value};

use super::plan::{Outcome, Patcher, Plan, PlanError};
use super::record::{RECORD_ANNOTATION, Record};
use super::uninject::remove_injection;
use super::{PodPaths, template_problem};
use crate::profile::{Profile, Workload};
use crate::workload::WorkloadKind;

/// Plan the injection of `profile` into `object`, a workload of `kind`.
/// `namespace` is used when the object names none.
///
/// A previous injection is removed first, so injecting again gives the same
/// object and never a second proxy.
pub fn inject(
    object: &Value,
    kind: WorkloadKind,
    profile: &Profile,
    namespace: &str,
) -> Result<Plan, PlanError> {
    if let Some(reason) = template_problem(object, kind) {
        return Ok(Plan::unchanged(object, Outcome::Skipped(reason)));
    }
    let paths = PodPaths::of(kind);
    let mut patcher = Patcher::new(object.clone());
    remove_injection(&mut patcher, kind, profile)?;
    if let Some(reason) = skip_reason(&patcher, &paths, profile) {
        return Ok(Plan::unchanged(object, Outcome::Skipped(reason)));
    }

    let metadata = object.get("metadata");
    let field = |name: &str| metadata.and_then(|m| m.get(name)).and_then(Value::as_str);
    let workload = Workload {
        kind: kind.label(),
        name: field("name")
            .or_else(|| field("generateName"))
            .unwrap_or_default(),
        namespace: field("namespace").unwrap_or(namespace),
        inbound_ports: inbound_ports(patcher.get(&paths.spec("containers"))),
    };
    let rendered = profile.render(&workload).map_err(PlanError)?;
    let mut record = Record::default();

    if patcher.get(&paths.metadata).is_none() {
        patcher.add(&paths.metadata, Value::Object(Map::new()))?;
        record.created.push("metadata".into());
    }
    let annotations = paths.metadata("annotations");
    record.annotations = set_entries(
        &mut patcher,
        &annotations,
        "annotations",
        &rendered.annotations,
        &mut record.created,
    )?;
    let labels = paths.metadata("labels");
    record.labels = set_entries(
        &mut patcher,
        &labels,
        "labels",
        &rendered.labels,
        &mut record.created,
    )?;

    // Native sidecars: the proxy's init containers first, then the proxy, then the pod's own.
    let init_path = paths.spec("initContainers");
    ensure(
        &mut patcher,
        &init_path,
        "initContainers",
        Value::Array(Vec::new()),
        &mut record.created,
    )?;
    for (index, container) in rendered
        .init_containers
        .iter()
        .chain([&rendered.proxy])
        .enumerate()
    {
        let mut at = init_path.clone();
        at.push(index.to_string());
        patcher.add(&at, container.clone())?;
        record.init_containers.push(name_of(container));
    }

    let volumes_path = paths.spec("volumes");
    ensure(
        &mut patcher,
        &volumes_path,
        "volumes",
        Value::Array(Vec::new()),
        &mut record.created,
    )?;
    for volume in &rendered.volumes {
        let name = name_of(volume);
        let taken = matches!(patcher.get(&volumes_path), Some(Value::Array(items))
            if items.iter().any(|v| v.get("name").and_then(Value::as_str) == Some(name.as_str())));
        if !taken {
            let mut at = volumes_path.clone();
            at.push("-".into());
            patcher.add(&at, volume.clone())?;
            record.volumes.push(name);
        }
    }

    let mut record_path = annotations;
    record_path.push(RECORD_ANNOTATION.into());
    patcher.add(&record_path, Value::String(record.encode()))?;

    if patcher.value == *object {
        return Ok(Plan::unchanged(object, Outcome::AlreadyInjected));
    }
    Ok(Plan {
        outcome: Outcome::Injected,
        ops: patcher.ops,
        result: patcher.value,
    })
}

/// Why the pod must be left alone, if it must.
fn skip_reason(patcher: &Patcher, paths: &PodPaths, profile: &Profile) -> Option<String> {
    if patcher.get(&paths.spec("hostNetwork")) == Some(&Value::Bool(true)) {
        return Some("hostNetwork is enabled".into());
    }
    if let Some(disable) = &profile.disable_annotation {
        let mut at = paths.metadata("annotations");
        at.push(disable.key.clone());
        if patcher.get(&at).and_then(Value::as_str) == Some(disable.value.as_str()) {
            return Some(format!(
                "pod has the annotation \"{}: {}\"",
                disable.key, disable.value
            ));
        }
    }
    let foreign = &profile.foreign_sidecars;
    for list in ["containers", "initContainers"] {
        let Some(Value::Array(items)) = patcher.get(&paths.spec(list)) else {
            continue;
        };
        for item in items {
            let name = item.get("name").and_then(Value::as_str).unwrap_or_default();
            let image = item
                .get("image")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if foreign.names.iter().any(|n| n == name)
                || foreign
                    .image_prefixes
                    .iter()
                    .any(|p| image.starts_with(p.as_str()))
            {
                return Some(format!(
                    "a third-party proxy is already present (container {name})"
                ));
            }
        }
    }
    for field in ["annotations", "labels"] {
        if !matches!(
            patcher.get(&paths.metadata(field)),
            None | Some(Value::Object(_))
        ) {
            return Some(format!("metadata.{field} of the pod is not a mapping"));
        }
    }
    for field in ["initContainers", "volumes"] {
        if !matches!(
            patcher.get(&paths.spec(field)),
            None | Some(Value::Array(_))
        ) {
            return Some(format!("{field} of the pod is not a list"));
        }
    }
    None
}

/// Create the field at `path` as `empty` if it is missing, and note that inject created it.
fn ensure(
    patcher: &mut Patcher,
    path: &[String],
    field: &str,
    empty: Value,
    created: &mut Vec<String>,
) -> Result<(), PlanError> {
    if patcher.get(path).is_none() {
        patcher.add(path, empty)?;
        created.push(field.to_string());
    }
    Ok(())
}

/// Set `entries` in the mapping at `path`; returns the keys that were not there before.
fn set_entries(
    patcher: &mut Patcher,
    path: &[String],
    field: &str,
    entries: &Map<String, Value>,
    created: &mut Vec<String>,
) -> Result<Vec<String>, PlanError> {
    if entries.is_empty() {
        return Ok(Vec::new());
    }
    ensure(patcher, path, field, Value::Object(Map::new()), created)?;
    let mut added = Vec::new();
    for (key, value) in entries {
        let mut at = path.to_vec();
        at.push(key.clone());
        match patcher.get(&at) {
            Some(existing) if existing == value => {}
            Some(_) => patcher.add(&at, value.clone())?,
            None => {
                patcher.add(&at, value.clone())?;
                added.push(key.clone());
            }
        }
    }
    Ok(added)
}

fn name_of(item: &Value) -> String {
    item.get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// The pod's container ports, sorted and comma-separated.
fn inbound_ports(containers: Option<&Value>) -> String {
    let mut ports: Vec<u64> = containers
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("ports").and_then(Value::as_array))
        .flatten()
        .filter_map(|p| p.get("containerPort").and_then(Value::as_u64))
        .collect();
    ports.sort_unstable();
    ports.dedup();
    ports
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::uninject;
    use serde_json::json;

    fn deployment() -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "web", "ports": [{"containerPort": 8080}]}]}}}
        })
    }

    fn profile() -> Profile {
        Profile::default_profile().expect("profile")
    }

    #[test]
    fn injects_native_sidecar_and_marks_the_pod() {
        let plan = inject(
            &deployment(),
            WorkloadKind::Deployment,
            &profile(),
            "default",
        )
        .expect("plan");
        assert_eq!(plan.outcome, Outcome::Injected);
        let pod = &plan.result["spec"]["template"];
        let inits: Vec<&str> = pod["spec"]["initContainers"]
            .as_array()
            .expect("list")
            .iter()
            .map(|c| c["name"].as_str().expect("name"))
            .collect();
        assert_eq!(inits, ["linkerd-init", "linkerd-proxy"]);
        assert_eq!(pod["spec"]["initContainers"][1]["restartPolicy"], "Always");
        assert_eq!(
            pod["metadata"]["labels"]["linkerd.io/proxy-deployment"],
            "web"
        );
        assert_eq!(pod["metadata"]["labels"]["linkerd.io/workload-ns"], "shop");
        let env = pod["spec"]["initContainers"][1]["env"]
            .as_array()
            .expect("env");
        assert!(
            env.iter()
                .any(|e| e["name"] == "LINKERD2_PROXY_INBOUND_PORTS" && e["value"] == "8080")
        );
        assert_eq!(pod["spec"]["containers"].as_array().expect("list").len(), 1);
        // The patch reproduces the result.
        let mut patched = deployment();
        json_patch::patch(&mut patched, &plan.ops).expect("applies");
        assert_eq!(patched, plan.result);
    }

    #[test]
    fn injecting_twice_changes_nothing_and_uninject_restores() {
        let first = inject(
            &deployment(),
            WorkloadKind::Deployment,
            &profile(),
            "default",
        )
        .expect("plan");
        let second = inject(
            &first.result,
            WorkloadKind::Deployment,
            &profile(),
            "default",
        )
        .expect("plan");
        assert_eq!(second.outcome, Outcome::AlreadyInjected);
        assert!(second.ops.is_empty());
        let back = uninject(&first.result, WorkloadKind::Deployment, &profile()).expect("plan");
        assert_eq!(back.outcome, Outcome::Uninjected);
        assert_eq!(back.result, deployment());
    }

    #[test]
    fn skips_with_reasons() {
        let mut host = deployment();
        host["spec"]["template"]["spec"]["hostNetwork"] = json!(true);
        let mut disabled = deployment();
        disabled["spec"]["template"]["metadata"]["annotations"] =
            json!({"linkerd.io/inject": "disabled"});
        let mut istio = deployment();
        istio["spec"]["template"]["spec"]["containers"][0]["name"] = json!("istio-proxy");
        for (object, reason) in [
            (host, "hostNetwork is enabled"),
            (disabled, "linkerd.io/inject: disabled"),
            (istio, "third-party proxy"),
        ] {
            let plan =
                inject(&object, WorkloadKind::Deployment, &profile(), "default").expect("plan");
            match plan.outcome {
                Outcome::Skipped(r) => assert!(r.contains(reason), "{r}"),
                other => panic!("expected a skip, got {other:?}"),
            }
            assert_eq!(plan.result, object);
        }
    }

    #[test]
    fn cronjob_template_without_metadata() {
        let cron = json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
            "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "a"}]}}}}}});
        let plan = inject(&cron, WorkloadKind::CronJob, &profile(), "default").expect("plan");
        let template = &plan.result["spec"]["jobTemplate"]["spec"]["template"];
        assert_eq!(
            template["metadata"]["labels"]["linkerd.io/proxy-cronjob"],
            "c"
        );
        assert!(plan.result["metadata"].get("labels").is_none());
        let back = uninject(&plan.result, WorkloadKind::CronJob, &profile()).expect("plan");
        assert_eq!(back.result, cron);
    }
}

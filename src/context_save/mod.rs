//! `context save DIR`: the cluster's objects this tool reads, read once
//! through kubectl and written into DIR for `--context DIR`. Everything is
//! read before anything is written, so a failure leaves DIR as it was.

mod files;
mod select;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use crate::cli::SaveArgs;
use crate::error::Error;
use crate::kubectl::{Kubectl, Listed};
use crate::profile::Profile;

/// A mesh whose ConfigMaps are looked for.
struct MeshWanted {
    /// As the user knows it: `Linkerd`.
    title: &'static str,
    namespace: String,
    /// The names it reads, as messages give them.
    names: String,
}

/// What a save read: the objects by file name, and what to tell the user.
struct Saved {
    files: BTreeMap<String, Vec<Value>>,
    notes: Vec<String>,
}

/// Save the cluster's configuration into `args.dir`; returns the report
/// (one line per file, then notes and warnings).
pub fn save(args: &SaveArgs) -> Result<String, Error> {
    let kubectl = Kubectl::new(&args.kubectl, "context save", "nothing was written");
    let mut saved = Saved {
        files: BTreeMap::new(),
        notes: Vec::new(),
    };
    // Namespaces first: the one call that shows whether the cluster answers.
    saved.add_listed("namespaces", kubectl.list("namespaces", None, false)?)?;
    saved.add_meshes(&kubectl, args)?;
    for resource in [
        "limitranges",
        "resourcequotas",
        "mutatingwebhookconfigurations",
    ] {
        saved.add_listed(resource, kubectl.list(resource, None, true)?)?;
    }
    // Removed in 1.25: a cluster that no longer serves it has none to save.
    match kubectl.list("podsecuritypolicies.v1beta1.policy", None, false)? {
        Listed::NotServed => saved.notes.push(
            "note: the cluster does not serve PodSecurityPolicies (policy/v1beta1): none saved"
                .into(),
        ),
        listed => saved.add_listed("podsecuritypolicies", listed)?,
    }
    let texts: Vec<(String, String)> = saved
        .files
        .iter()
        .map(|(name, objects)| (name.clone(), files::text_of(objects)))
        .collect();
    let removed = files::write_all(&args.dir, &texts)?;
    Ok(saved.report(&args.dir, &removed))
}

/// The namespace an embedded profile's `value` names, unless `given`.
fn profile_namespace(profile: &str, value: &str, given: Option<&String>) -> Result<String, Error> {
    if let Some(given) = given {
        return Ok(given.clone());
    }
    let profile = Profile::embedded(profile)?;
    profile
        .values
        .get(value)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| Error::Internal(format!("the embedded profile has no {value}")))
}

impl Saved {
    /// The objects of a list into their files, by namespace; a kind every
    /// cluster serves that this one does not stops the save.
    fn add_listed(&mut self, plural: &str, listed: Listed) -> Result<(), Error> {
        let Listed::Items(objects) = listed else {
            return Err(Error::Cluster(format!(
                "the cluster does not serve {plural}: nothing was written"
            )));
        };
        self.add(plural, objects)
    }

    /// `objects` of `plural` into their files, stripped, sorted by name.
    fn add(&mut self, plural: &str, objects: Vec<Value>) -> Result<(), Error> {
        for object in objects {
            let object = select::stripped(object);
            let namespace = select::namespace_of(&object);
            // The namespace names a file: it must be one (no `/`, no `..`).
            if !namespace.is_empty() {
                crate::source::namespace_name(namespace).map_err(|e| {
                    Error::Cluster(format!(
                        "{plural} {}: namespace {namespace:?}: {e}; nothing was written",
                        select::name_of(&object)
                    ))
                })?;
            }
            let name = files::file_name(plural, namespace);
            self.files.entry(name).or_default().push(object);
        }
        for objects in self.files.values_mut() {
            objects.sort_by(|a, b| select::name_of(a).cmp(select::name_of(b)));
        }
        Ok(())
    }

    /// The ConfigMaps of the mesh `--profile` names, or of both meshes
    /// (those the cluster has): a mesh asked for that is not found, or
    /// neither when none is asked for, stops the run.
    fn add_meshes(&mut self, kubectl: &Kubectl, args: &SaveArgs) -> Result<(), Error> {
        // The profile reads many values of one map: each name once.
        let mut linkerd_names = Profile::embedded("linkerd")?.config_map_names();
        linkerd_names.sort();
        linkerd_names.dedup();
        let linkerd = MeshWanted {
            title: "Linkerd",
            namespace: profile_namespace(
                "linkerd",
                "controlPlaneNamespace",
                args.linkerd_namespace.as_ref(),
            )?,
            names: linkerd_names.join(", "),
        };
        let istio = MeshWanted {
            title: "Istio",
            namespace: profile_namespace("istio", "istioNamespace", args.istio_namespace.as_ref())?,
            names: "istio-sidecar-injector[-REVISION], istio[-REVISION]".into(),
        };
        let wanted: Vec<&MeshWanted> = match args.profile.as_deref() {
            Some("istio") => vec![&istio],
            Some(_) => vec![&linkerd],
            None => vec![&linkerd, &istio],
        };
        let mut missing = Vec::new();
        for mesh in wanted.iter().copied() {
            let maps = match kubectl.list("configmaps", Some(&mesh.namespace), false)? {
                Listed::Items(maps) => maps,
                Listed::NotServed => Vec::new(),
            };
            let found = if mesh.title == "Istio" {
                select::istio(maps)
            } else {
                select::named(maps, &linkerd_names)
            };
            if found.is_empty() {
                missing.push(mesh);
                continue;
            }
            self.warn_incomplete(mesh, &found, &linkerd_names);
            self.add("configmaps", found)?;
        }
        let looked_for = |meshes: &[&MeshWanted]| {
            meshes
                .iter()
                .map(|m| format!("{} ({} in namespace {})", m.title, m.names, m.namespace))
                .collect::<Vec<_>>()
                .join(" nor ")
        };
        if missing.len() == wanted.len() {
            return Err(Error::Cluster(format!(
                "the cluster has no ConfigMaps of {}: nothing was written (a control plane in another namespace: --linkerd-namespace, --istio-namespace)",
                looked_for(&missing)
            )));
        }
        for mesh in missing {
            self.notes.push(format!(
                "note: no ConfigMaps of {}: none saved",
                looked_for(&[mesh])
            ));
        }
        Ok(())
    }

    /// A warning for each ConfigMap of a found mesh that the cluster lacks:
    /// a run with the saved context takes the profile's values for it.
    fn warn_incomplete(&mut self, mesh: &MeshWanted, found: &[Value], linkerd_names: &[String]) {
        let absent: Vec<String> = if mesh.title == "Istio" {
            select::istio_without_mesh_config(found)
        } else {
            linkerd_names
                .iter()
                .filter(|n| !found.iter().any(|m| select::name_of(m) == n.as_str()))
                .cloned()
                .collect()
        };
        for name in absent {
            self.notes.push(format!(
                "warning: {}: no ConfigMap {name} in namespace {}: a run with this context takes the profile's values for what it holds",
                mesh.title, mesh.namespace
            ));
        }
    }

    /// One line per file written, then the files removed and the notes.
    fn report(&self, dir: &std::path::Path, removed: &[PathBuf]) -> String {
        let mut out = String::new();
        for (name, objects) in &self.files {
            let count = objects.len();
            let plural = if count == 1 { "" } else { "s" };
            out.push_str(&format!(
                "wrote {} ({count} object{plural})\n",
                dir.join(name).display()
            ));
        }
        for path in removed {
            out.push_str(&format!(
                "removed {} (an earlier save's; the cluster has none now)\n",
                path.display()
            ));
        }
        for note in &self.notes {
            out.push_str(note);
            out.push('\n');
        }
        out.push_str(&format!(
            "inject with it: kubectl mesh-inject -f FILE --context {}\n",
            dir.display()
        ));
        out
    }
}

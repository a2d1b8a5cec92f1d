//! What the injection writes among the pod's annotations besides the
//! containers: the template's over the pod's own, the flags' over the pod's
//! own, the mesh webhook's settings, the mesh's status; and the note on the
//! namespace the pod is injected as in.

use super::*;

impl Sidecar {
    /// The annotations the injection writes besides the containers: the
    /// template's over the pod's own, the settings the flags gave
    /// (`recorded`) over the pod's own, and what the mesh's webhook writes
    /// (`webhook`), unless the mesh's own template writes it itself.
    pub(super) fn write_annotations(
        &mut self,
        rendered: &Rendered,
        pod: &Pod,
        recorded: Map<String, Value>,
        webhook: Map<String, Value>,
        mesh: Mesh,
    ) {
        if rendered.by_mesh_template {
            self.take_template_annotations(rendered, pod);
        }
        self.rewrite_annotations_flags_set(&recorded, pod);
        self.annotations = recorded;
        if !rendered.by_mesh_template {
            self.add_webhook_annotations(webhook, pod, mesh);
        }
    }

    /// The mesh's record of what it injected, where (Istio's
    /// `sidecar.istio.io/status`), with the image pull secrets it adds.
    pub(super) fn add_injection_status(
        &mut self,
        rendered: &Rendered,
        pull_secrets: &[String],
        mesh: Mesh,
        values: &Map<String, Value>,
    ) {
        let mut injected = self.injected(rendered);
        injected.pull_secrets = pull_secrets.iter().map(String::as_str).collect();
        if let Some((key, value)) = mesh.injection_status(&injected, values) {
            self.annotations
                .insert(key.to_string(), Value::String(value));
        }
    }

    /// The template's pod is overlaid on the pod: an annotation of the
    /// pod's own that the template writes takes the template's value
    /// (Istio's Multus network list, extended), the pod's kept for
    /// uninject. The metrics annotations are the metrics merge's.
    fn take_template_annotations(&mut self, rendered: &Rendered, pod: &Pod) {
        for (key, value) in &rendered.metadata.annotations {
            let own = pod
                .annotations
                .and_then(|a| a.get(key))
                .and_then(Value::as_str);
            let (Some(own), Some(value)) = (own, value.as_str()) else {
                continue;
            };
            let changed = self.changed_annotations.iter().any(|(k, _)| k == key);
            if own != value && !changed && !key.starts_with("prometheus.io/") {
                self.changed_annotations
                    .push((key.clone(), value.to_string()));
            }
        }
    }

    /// A flag over the pod's own annotation rewrites it, as `linkerd inject`
    /// writes its flags: the proxy and the annotation then agree (the pod's
    /// value is kept for uninject, and a re-injection starts from it).
    /// `recorded`: the settings the flags gave, as annotations.
    fn rewrite_annotations_flags_set(&mut self, recorded: &Map<String, Value>, pod: &Pod) {
        for (key, value) in recorded {
            let own = pod
                .annotations
                .and_then(|a| a.get(key))
                .and_then(Value::as_str);
            let (Some(own), Some(new)) = (own, value.as_str()) else {
                continue;
            };
            if own != new && !self.changed_annotations.iter().any(|(k, _)| k == key) {
                self.changed_annotations
                    .push((key.clone(), new.to_string()));
                // Said whatever the verbosity: the file's own setting changes.
                self.notes.push(
                    Note::info(format!(
                        "{}/{}: its annotation {key}: {own:?} is rewritten {new:?}, as --set gives it",
                        pod.vars.kind, pod.vars.name
                    ))
                    .about_the_run(),
                );
            }
        }
    }

    /// The annotations the mesh's webhook writes on the pod (the
    /// namespace's settings it inherited, the opaque ports), where the
    /// mesh's own template does not write them itself.
    fn add_webhook_annotations(&mut self, webhook: Map<String, Value>, pod: &Pod, mesh: Mesh) {
        for (key, value) in webhook {
            // Istio's template writes its CNI annotations over the pod's own
            // (the excluded inbound ports with the status port, the Multus
            // networks with Istio's); the pod's own is kept for uninject.
            let own = pod
                .annotations
                .and_then(|a| a.get(&key))
                .and_then(Value::as_str);
            if let (Some(own), Some(new)) = (own, value.as_str()) {
                let written =
                    mesh == Mesh::Istio && !istio::DEFAULT_CONTAINER_KEYS.contains(&key.as_str());
                if written && own != new {
                    self.changed_annotations
                        .push((key.clone(), new.to_string()));
                }
            }
            self.annotations.entry(key).or_insert(value);
        }
    }
}

/// What the report says of the namespace the pod is injected as in: what
/// the injection writes of it is only right there.
pub(super) fn namespace_note(pod: &Pod) -> Option<Note> {
    if pod.namespace_assumed {
        return Some(Note::info(format!(
            "no namespace: injected as in namespace {}, where kubectl puts it only when that is \
             the current context's namespace; give the namespace with -n",
            pod.vars.namespace
        )));
    }
    let from = pod.namespace_from.as_ref()?;
    Some(Note::info(format!(
        "namespace {} from {from}",
        pod.vars.namespace
    )))
}

//! The annotation that records what inject added, so uninject removes exactly that.
//!
//! Its value reads `containers=a;initContainers=b,c;volumes=...;annotations=...;
//! labels=...;created=...;wasNull=...;grace=...`, where `created` lists the
//! fields (such as `annotations` or `initContainers`) that did not exist (or
//! were null, listed again in `wasNull`) before injection, and `grace` the
//! pod's `terminationGracePeriodSeconds` before inject raised it; `texts`
//! how the manifest wrote the scalars inject replaced, where the tool would
//! write them otherwise.

/// Annotation key holding the record.
pub const RECORD_ANNOTATION: &str = "mesh-inject.io/added";

use serde_json::Value;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Record {
    pub containers: Vec<String>,
    pub init_containers: Vec<String>,
    pub volumes: Vec<String>,
    pub annotations: Vec<String>,
    pub labels: Vec<String>,
    /// Fields created by inject, removed again by uninject once empty.
    pub created: Vec<String>,
    /// Of those, the ones that were there but null (`annotations:` with no
    /// value): uninject puts the null back.
    pub was_null: Vec<String>,
    /// The pod's `terminationGracePeriodSeconds` before inject raised it
    /// (`unset` when it had none).
    pub grace: Option<String>,
    /// Scalars inject replaced (the grace period, a probe's port or path)
    /// that the manifest wrote otherwise than the tool writes their value
    /// (`+0`, `0x0A`, `1_0`, `"/live"` in a flow mapping), each as
    /// `PATH:TEXT` with the path's steps joined by `/` and the text escaped
    /// as `user_containers` are: uninject writes them back so (that is the
    /// pipeline's, which sees the text).
    pub texts: Vec<String>,
    /// The app probes the mesh's agent took over whose port was a name, as
    /// `container:field:name` (Istio's env holds the number): uninject
    /// gives the name back.
    pub probe_ports: Vec<String>,
    /// The pod's own containers that the mesh's were merged into (Istio's
    /// user-written proxy), each as `LIST:INDEX:JSON` with `%`, `,` and `;`
    /// escaped: uninject puts them back as they were.
    pub user_containers: Vec<String>,
    /// The text of those containers where the pod's manifest wrote them in
    /// block style, each as `LIST:INDEX:TEXT` (the lines of the item, escaped
    /// as `user_containers` are, line breaks too): uninject puts them back
    /// as written, comments and quoting included.
    pub user_texts: Vec<String>,
    /// The image pull secrets inject added to the pod.
    pub pull_secrets: Vec<String>,
    /// The pod's own annotations inject changed (Istio's Prometheus
    /// annotations), each as `INDEX:JSON` with its place among them and its
    /// value, escaped as `user_containers` are.
    pub user_annotations: Vec<String>,
    /// The pod's fields the mesh's template set (Istio's gateway template
    /// sets the pod's security context), each as `FIELD:JSON` with what it
    /// was (`null` when the pod had none), escaped as `user_containers` are.
    pub pod_fields: Vec<String>,
    /// How the `wasNull` fields' nulls were written, each as `FIELD:TEXT`
    /// with the text from past the key's `:` (` ~`, ` null`), escaped as
    /// `user_containers` are: uninject writes them back.
    pub null_texts: Vec<String>,
    /// Keys that a merge key (`<<`) brought and that inject wrote out in
    /// their mapping: uninject takes them out again once their value is
    /// what the merge brings.
    pub merged: Vec<String>,
    /// The actions of the app's probes and hooks the mesh's agent took over
    /// (Istio's TCP and gRPC ones, which become HTTP GETs), each as
    /// `CONTAINER:FIELD:TEXT` with the lines that wrote the action's entry,
    /// escaped as `user_containers` are: uninject gives them back as they
    /// were, fields the mesh does not know included.
    pub probe_texts: Vec<String>,
}

impl Record {
    fn fields(&self) -> [(&'static str, &Vec<String>); 17] {
        [
            ("containers", &self.containers),
            ("initContainers", &self.init_containers),
            ("volumes", &self.volumes),
            ("annotations", &self.annotations),
            ("labels", &self.labels),
            ("created", &self.created),
            ("wasNull", &self.was_null),
            ("probePorts", &self.probe_ports),
            ("userContainers", &self.user_containers),
            ("userTexts", &self.user_texts),
            ("pullSecrets", &self.pull_secrets),
            ("userAnnotations", &self.user_annotations),
            ("podFields", &self.pod_fields),
            ("nullTexts", &self.null_texts),
            ("merged", &self.merged),
            ("probeTexts", &self.probe_texts),
            ("texts", &self.texts),
        ]
    }

    pub fn encode(&self) -> String {
        let mut text = String::with_capacity(256);
        let fields = self.fields();
        let grace = self.grace.as_slice();
        let parts = fields
            .iter()
            .map(|(field, names)| (*field, names.as_slice()))
            .chain(std::iter::once(("grace", grace)))
            .filter(|(_, names)| !names.is_empty());
        for (field, names) in parts {
            if !text.is_empty() {
                text.push(';');
            }
            text.push_str(field);
            text.push('=');
            for (i, name) in names.iter().enumerate() {
                if i > 0 {
                    text.push(',');
                }
                text.push_str(name);
            }
        }
        text
    }

    /// Keep how the manifest wrote the scalar at `path` (below the object).
    pub fn push_text(&mut self, path: &[String], written: &str) {
        self.texts
            .push(format!("{}:{}", escaped(&path.join("/")), escaped(written)));
    }

    /// The scalars the record keeps as the manifest wrote them: path, text.
    pub fn texts(&self) -> Vec<(Vec<String>, String)> {
        self.texts
            .iter()
            .filter_map(|entry| {
                let (path, text) = entry.split_once(':')?;
                let path = unescaped(path).split('/').map(str::to_string).collect();
                Some((path, unescaped(text)))
            })
            .collect()
    }

    /// A pod's own container `container`, at `index` of `list`, as
    /// [`Record::user_containers`] holds it.
    pub fn user_container(list: &str, index: usize, container: &Value) -> String {
        format!("{list}:{index}:{}", escaped(&container.to_string()))
    }

    /// The pod's own containers the record holds: list, index, container.
    pub fn user_containers(&self) -> Vec<(String, usize, Value)> {
        let mut out: Vec<(String, usize, Value)> = self
            .user_containers
            .iter()
            .filter_map(|entry| {
                let mut parts = entry.splitn(3, ':');
                let list = parts.next()?.to_string();
                let index = parts.next()?.parse().ok()?;
                let json = unescaped(parts.next()?);
                Some((list, index, serde_json::from_str(&json).ok()?))
            })
            .collect();
        out.sort_by_key(|(_, index, _)| *index);
        out
    }

    /// The text of the pod's own container at `index` of `list`, as
    /// [`Record::user_texts`] holds it.
    pub fn user_text(list: &str, index: usize, text: &str) -> String {
        format!("{list}:{index}:{}", escaped(text))
    }

    /// The texts of the pod's own containers the record holds: list, index, text.
    pub fn user_texts(&self) -> Vec<(String, usize, String)> {
        self.user_texts
            .iter()
            .filter_map(|entry| {
                let mut parts = entry.splitn(3, ':');
                let list = parts.next()?.to_string();
                let index = parts.next()?.parse().ok()?;
                Some((list, index, unescaped(parts.next()?)))
            })
            .collect()
    }

    /// A pod's own annotation `key`, at `index` among them, with its value,
    /// as [`Record::user_annotations`] holds it.
    pub fn user_annotation(index: usize, key: &str, value: &Value) -> String {
        let entry = serde_json::json!([key, value]);
        format!("{index}:{}", escaped(&entry.to_string()))
    }

    /// The pod's own annotations the record holds, by their place: index,
    /// key, value.
    pub fn user_annotations(&self) -> Vec<(usize, String, Value)> {
        let mut out: Vec<(usize, String, Value)> = self
            .user_annotations
            .iter()
            .filter_map(|entry| {
                let (index, json) = entry.split_once(':')?;
                let entry: Value = serde_json::from_str(&unescaped(json)).ok()?;
                let key = entry.get(0)?.as_str()?.to_string();
                Some((index.parse().ok()?, key, entry.get(1)?.clone()))
            })
            .collect();
        out.sort_by_key(|(index, _, _)| *index);
        out
    }

    /// The pod's field `field` as it was before the mesh's template set it
    /// (`None`: it had none), as [`Record::pod_fields`] holds it.
    pub fn pod_field(field: &str, was: Option<&Value>) -> String {
        format!(
            "{field}:{}",
            escaped(&was.unwrap_or(&Value::Null).to_string())
        )
    }

    /// The pod's fields the record holds, with what they were.
    pub fn pod_fields(&self) -> Vec<(String, Option<Value>)> {
        self.pod_fields
            .iter()
            .filter_map(|entry| {
                let (field, json) = entry.split_once(':')?;
                let was: Value = serde_json::from_str(&unescaped(json)).ok()?;
                Some((field.to_string(), (!was.is_null()).then_some(was)))
            })
            .collect()
    }

    /// How the null of the field `field` was written, as
    /// [`Record::null_texts`] holds it.
    pub fn null_text(field: &str, text: &str) -> String {
        format!("{field}:{}", escaped(text))
    }

    /// The nulls the record holds: field, text.
    pub fn null_texts(&self) -> Vec<(String, String)> {
        self.null_texts
            .iter()
            .filter_map(|entry| {
                let (field, text) = entry.split_once(':')?;
                Some((field.to_string(), unescaped(text)))
            })
            .collect()
    }

    /// The lines of a probe's action, `text`, of the field `field` of the
    /// container `container`, as [`Record::probe_texts`] holds them.
    pub fn probe_text(container: &str, field: &str, text: &str) -> String {
        format!("{container}:{field}:{}", escaped(text))
    }

    /// The probes' actions the record holds: container, field, lines.
    pub fn probe_texts(&self) -> Vec<(String, String, String)> {
        self.probe_texts
            .iter()
            .filter_map(|entry| {
                let mut parts = entry.splitn(3, ':');
                let container = parts.next()?.to_string();
                let field = parts.next()?.to_string();
                Some((container, field, unescaped(parts.next()?)))
            })
            .collect()
    }

    /// Read a record back; unknown fields are ignored so newer records still uninject.
    pub fn decode(text: &str) -> Self {
        let mut record = Record::default();
        for part in text.split(';') {
            let Some((field, names)) = part.split_once('=') else {
                continue;
            };
            let names: Vec<String> = names
                .split(',')
                .filter(|n| !n.is_empty())
                .map(str::to_string)
                .collect();
            match field.trim() {
                "containers" => record.containers = names,
                "initContainers" => record.init_containers = names,
                "volumes" => record.volumes = names,
                "annotations" => record.annotations = names,
                "labels" => record.labels = names,
                "created" => record.created = names,
                "wasNull" => record.was_null = names,
                "grace" => record.grace = names.into_iter().next(),
                "texts" => record.texts = names,
                "probePorts" => record.probe_ports = names,
                "userContainers" => record.user_containers = names,
                "userTexts" => record.user_texts = names,
                "pullSecrets" => record.pull_secrets = names,
                "userAnnotations" => record.user_annotations = names,
                "podFields" => record.pod_fields = names,
                "nullTexts" => record.null_texts = names,
                "merged" => record.merged = names,
                "probeTexts" => record.probe_texts = names,
                _ => {}
            }
        }
        record
    }
}

/// `text` with the record's separators (`,` and `;`) and `%` escaped.
fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '%' => out.push_str("%25"),
            ',' => out.push_str("%2C"),
            ';' => out.push_str("%3B"),
            '\n' => out.push_str("%0A"),
            '\r' => out.push_str("%0D"),
            c => out.push(c),
        }
    }
    out
}

/// [`escaped`] undone.
fn unescaped(text: &str) -> String {
    text.replace("%2C", ",")
        .replace("%3B", ";")
        .replace("%0A", "\n")
        .replace("%0D", "\r")
        .replace("%25", "%")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let record = Record {
            init_containers: vec!["linkerd-init".into(), "linkerd-proxy".into()],
            annotations: vec!["linkerd.io/created-by".into()],
            created: vec!["annotations".into()],
            ..Record::default()
        };
        let text = record.encode();
        assert_eq!(
            text,
            "initContainers=linkerd-init,linkerd-proxy;annotations=linkerd.io/created-by;created=annotations"
        );
        assert_eq!(Record::decode(&text), record);
    }

    #[test]
    fn texts_as_written_round_trip() {
        let mut record = Record {
            grace: Some("10".into()),
            ..Record::default()
        };
        let grace = ["spec".to_string(), "terminationGracePeriodSeconds".into()];
        record.push_text(&grace, "0x0A");
        assert_eq!(
            record.encode(),
            "texts=spec/terminationGracePeriodSeconds:0x0A;grace=10"
        );
        let path = [
            "spec",
            "containers",
            "0",
            "readinessProbe",
            "httpGet",
            "path",
        ]
        .map(str::to_string);
        record.push_text(&path, "\"/a,b;%:c\"");
        let back = Record::decode(&record.encode());
        assert_eq!(
            back.texts(),
            vec![
                (grace.to_vec(), "0x0A".to_string()),
                (path.to_vec(), "\"/a,b;%:c\"".to_string())
            ]
        );
    }

    #[test]
    fn pod_fields_round_trip() {
        let was = serde_json::json!({"runAsUser": 1, "sysctls": [{"name": "a,b", "value": "0"}]});
        let record = Record {
            pod_fields: vec![
                Record::pod_field("securityContext", Some(&was)),
                Record::pod_field("dnsPolicy", None),
            ],
            ..Record::default()
        };
        let back = Record::decode(&record.encode());
        assert_eq!(
            back.pod_fields(),
            vec![
                ("securityContext".to_string(), Some(was)),
                ("dnsPolicy".to_string(), None)
            ]
        );
    }

    #[test]
    fn user_texts_round_trip() {
        let text = "  - name: istio-proxy # a, b; 100%\r\n    args: [\"-c\"]\n";
        let record = Record {
            user_texts: vec![Record::user_text("containers", 1, text)],
            ..Record::default()
        };
        let encoded = record.encode();
        assert!(
            !encoded.contains('\n') && !encoded.contains('\r'),
            "{encoded}"
        );
        assert_eq!(
            Record::decode(&encoded).user_texts(),
            vec![("containers".to_string(), 1, text.to_string())]
        );
    }

    #[test]
    fn user_containers_round_trip() {
        let container =
            serde_json::json!({"name": "istio-proxy", "args": ["a,b;c%d"], "tty": true});
        let record = Record {
            user_containers: vec![Record::user_container("containers", 1, &container)],
            ..Record::default()
        };
        let back = Record::decode(&record.encode());
        assert_eq!(back, record);
        assert_eq!(
            back.user_containers(),
            vec![("containers".to_string(), 1, container)]
        );
    }
}

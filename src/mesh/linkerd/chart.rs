//! Linkerd's control-plane Helm chart (`linkerd-control-plane`), as `helm
//! pull` writes it: a directory, or its `.tgz`. Its partials
//! (`charts/partials/templates/*.tpl`) define the proxy, its init container,
//! the debug container and the volumes Linkerd's injector renders, and its
//! `values.yaml` their defaults; a release's own chart renders that
//! release's sidecar.
//!
//! Reading is the edge ([`LinkerdChart::read`]); the rest works on the
//! files' text ([`LinkerdChart::from_files`]).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::gotemplate::{self, Funcs, Template};

/// The chart's name in its `Chart.yaml`.
pub const CHART_NAME: &str = "linkerd-control-plane";

/// The ConfigMap holding an installed release's Helm values, and its key:
/// what the chart's `values.yaml` is to a release not yet installed.
pub const CLUSTER_VALUES: (&str, &str) = ("linkerd-config", "values");

/// Where the partials are, inside the chart.
const PARTIALS_DIR: &str = "charts/partials/templates/";

/// A chart's files beyond this size are refused: a chart is some hundred KB.
const MAX_FILE_BYTES: u64 = 16 << 20;

/// How many pods' renderings are kept, for workloads whose values are alike.
const CACHED_MAX: usize = 256;

/// What the chart renders for one pod: its init containers, the proxy, the
/// containers after the pod's own, and the volumes.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartPod {
    pub init_containers: Vec<Value>,
    pub proxy: Value,
    pub containers: Vec<Value>,
    pub volumes: Vec<Value>,
}

/// The chart, its partials parsed.
#[derive(Debug)]
pub struct LinkerdChart {
    /// The path it was read from, as given.
    pub origin: String,
    /// The chart's `version` (`Chart.yaml`).
    pub version: String,
    /// The chart's default values (`values.yaml`), as Helm reads them.
    pub values: Value,
    templates: Template,
    /// The file each template was defined in, for errors.
    files: BTreeMap<String, String>,
    funcs: Funcs,
    /// Pods rendered, by what they were rendered from.
    pods: Mutex<Vec<(String, Arc<ChartPod>)>>,
}

/// What is wrong with a chart, naming its path (and the file and line).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChartError {
    /// Not readable, or not Linkerd's control-plane chart.
    #[error("--linkerd-chart {origin}: {message}")]
    Read { origin: String, message: String },
    /// A partial the injection needs that the chart does not define.
    #[error(
        "--linkerd-chart {origin}: the chart defines no template {name:?} (its {PARTIALS_DIR}*.tpl define: {})",
        known.join(", ")
    )]
    MissingPartial {
        origin: String,
        name: String,
        known: Vec<String>,
    },
    /// A template that does not parse, or fails to render.
    #[error("--linkerd-chart {origin}: {file}: {error}")]
    Template {
        origin: String,
        file: String,
        error: gotemplate::Error,
    },
    /// A partial whose output is not a YAML mapping or list.
    #[error(
        "--linkerd-chart {origin}: {file}: template {name:?} rendered text that is not YAML: {message}"
    )]
    NotYaml {
        origin: String,
        file: String,
        name: String,
        message: String,
    },
}

impl LinkerdChart {
    /// The chart at `path`: a directory holding `Chart.yaml` (or holding
    /// `linkerd-control-plane/`, as `helm pull --untar -d DIR` leaves it),
    /// or a gzip'd tar of one (`helm pull` without `--untar`).
    pub fn read(path: &Path) -> Result<LinkerdChart, ChartError> {
        let origin = path.display().to_string();
        let fail = |message: String| ChartError::Read {
            origin: origin.clone(),
            message,
        };
        let files = if path.is_dir() {
            read_dir(path).map_err(fail)?
        } else {
            let file = std::fs::File::open(path).map_err(|e| fail(io_message(&e)))?;
            read_tgz(file).map_err(fail)?
        };
        Self::from_files(origin, &files)
    }

    /// The chart of `files` (paths inside the chart, `Chart.yaml`,
    /// `values.yaml`, `charts/partials/templates/_proxy.tpl`…, to text).
    pub fn from_files(
        origin: String,
        files: &BTreeMap<String, String>,
    ) -> Result<LinkerdChart, ChartError> {
        let fail = |message: String| ChartError::Read {
            origin: origin.clone(),
            message,
        };
        let chart = files
            .get("Chart.yaml")
            .ok_or_else(|| fail("no Chart.yaml: not a Helm chart (give the directory `helm pull --untar` writes, or its .tgz)".into()))?;
        let chart = read_yaml(chart).map_err(|m| fail(format!("Chart.yaml: {m}")))?;
        let name = text(chart.get("name"));
        if name != CHART_NAME {
            return Err(fail(format!(
                "Chart.yaml names the chart {name:?}, not {CHART_NAME:?}: give Linkerd's control-plane chart"
            )));
        }
        let values = match files.get("values.yaml") {
            Some(text) => read_yaml(text).map_err(|m| fail(format!("values.yaml: {m}")))?,
            None => {
                return Err(fail(
                    "no values.yaml: the chart's defaults are missing".into(),
                ));
            }
        };
        let funcs = Funcs::default();
        let mut templates: Option<Template> = None;
        let mut defined = BTreeMap::new();
        for (path, text) in files {
            let Some(file) = path.strip_prefix(PARTIALS_DIR) else {
                continue;
            };
            if !file.ends_with(".tpl") || file.contains('/') {
                continue;
            }
            let parsed =
                Template::parse(path, text, &funcs).map_err(|error| ChartError::Template {
                    origin: origin.clone(),
                    file: path.clone(),
                    error,
                })?;
            for name in parsed.names().filter(|n| *n != path) {
                defined.insert(name.to_string(), path.clone());
            }
            templates = Some(match templates {
                Some(set) => set.with_templates_of(parsed),
                None => parsed,
            });
        }
        let templates = templates.ok_or_else(|| {
            fail(format!(
                "no {PARTIALS_DIR}*.tpl: the chart holds none of Linkerd's partials"
            ))
        })?;
        Ok(LinkerdChart {
            origin,
            version: text(chart.get("version")),
            values,
            templates,
            files: defined,
            funcs,
            pods: Mutex::new(Vec::new()),
        })
    }

    /// The pod `render` renders from `key` (all it reads, as text): rendered
    /// once for workloads whose values are alike (most differ in nothing
    /// the partials read).
    pub fn pod(
        &self,
        key: String,
        render: impl FnOnce() -> Result<ChartPod, ChartError>,
    ) -> Result<Arc<ChartPod>, ChartError> {
        let found = self.pods.lock().ok().and_then(|pods| {
            pods.iter()
                .find(|(k, _)| *k == key)
                .map(|(_, pod)| pod.clone())
        });
        if let Some(pod) = found {
            return Ok(pod);
        }
        let pod = Arc::new(render()?);
        if let Ok(mut pods) = self.pods.lock() {
            if pods.len() < CACHED_MAX {
                pods.push((key, pod.clone()));
            }
        }
        Ok(pod)
    }

    /// Whether the chart defines the template `name`.
    pub fn defines(&self, name: &str) -> bool {
        self.files.contains_key(name)
    }

    /// The partial `name` rendered with `data` as dot (`.Values`,
    /// `.Release`), read as YAML.
    pub fn render(&self, name: &str, data: &gotemplate::Value) -> Result<Value, ChartError> {
        if !self.defines(name) {
            return Err(ChartError::MissingPartial {
                origin: self.origin.clone(),
                name: name.to_string(),
                known: self.files.keys().cloned().collect(),
            });
        }
        let file_of = |template: &str| {
            self.files
                .get(template)
                .cloned()
                .unwrap_or_else(|| template.to_string())
        };
        let text = self
            .templates
            .execute_template(name, data, &self.funcs)
            .map_err(|error| ChartError::Template {
                origin: self.origin.clone(),
                file: file_of(&error.template),
                error,
            })?;
        read_yaml(&text).map_err(|message| ChartError::NotYaml {
            origin: self.origin.clone(),
            file: file_of(name),
            name: name.to_string(),
            message,
        })
    }
}

fn text(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// YAML text as a value; empty text is null.
fn read_yaml(text: &str) -> Result<Value, String> {
    let documents = crate::yaml::parse_stream(text)
        .map_err(|e| format!("line {}:{}: {}", e.line, e.column, e.message))?;
    match documents.first().and_then(|d| d.root.as_ref()) {
        Some(root) => crate::yaml::value::to_value(root).map_err(|e| e.message),
        None => Ok(Value::Null),
    }
}

fn io_message(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        _ => error.to_string(),
    }
}

/// The chart's files under `dir`: the chart itself, or the chart in
/// `dir/linkerd-control-plane/`.
fn read_dir(dir: &Path) -> Result<BTreeMap<String, String>, String> {
    let root = if dir.join("Chart.yaml").is_file() {
        dir.to_path_buf()
    } else if dir.join(CHART_NAME).join("Chart.yaml").is_file() {
        dir.join(CHART_NAME)
    } else {
        return Err(format!(
            "no Chart.yaml in it nor in {CHART_NAME}/: not a Helm chart (fetch it with helm pull linkerd-edge/{CHART_NAME} --untar)"
        ));
    };
    let mut files = BTreeMap::new();
    let wanted = ["Chart.yaml", "values.yaml"];
    for name in wanted {
        if let Some(text) = read_text(&root.join(name))? {
            files.insert(name.to_string(), text);
        }
    }
    let partials = root.join(PARTIALS_DIR);
    let entries = match std::fs::read_dir(&partials) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(files),
        Err(e) => return Err(format!("{}: {}", partials.display(), io_message(&e))),
    };
    for entry in entries {
        let entry = entry.map_err(|e| io_message(&e))?;
        let name = entry.file_name().to_string_lossy().to_string();
        if name.ends_with(".tpl") {
            if let Some(text) = read_text(&entry.path())? {
                files.insert(format!("{PARTIALS_DIR}{name}"), text);
            }
        }
    }
    Ok(files)
}

fn read_text(path: &Path) -> Result<Option<String>, String> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.len() > MAX_FILE_BYTES => {
            return Err(format!("{}: larger than a chart's file", path.display()));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {}", path.display(), io_message(&e))),
    }
    std::fs::read_to_string(path)
        .map(Some)
        .map_err(|e| format!("{}: {}", path.display(), io_message(&e)))
}

/// The chart's files in a gzip'd tar, as `helm pull` writes it (every
/// path under `linkerd-control-plane/`), by their paths inside the chart.
pub fn read_tgz(reader: impl Read) -> Result<BTreeMap<String, String>, String> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(reader));
    let mut files = BTreeMap::new();
    let entries = archive
        .entries()
        .map_err(|e| format!("not a gzip'd tar: {e}"))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("not a gzip'd tar: {e}"))?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry
            .path()
            .map_err(|e| format!("a path in the archive: {e}"))?
            .to_string_lossy()
            .to_string();
        // The chart's own directory is the first component.
        let Some((top, inside)) = path.split_once('/') else {
            continue;
        };
        if top != CHART_NAME {
            continue;
        }
        let wanted = matches!(inside, "Chart.yaml" | "values.yaml")
            || inside
                .strip_prefix(PARTIALS_DIR)
                .is_some_and(|f| f.ends_with(".tpl") && !f.contains('/'));
        if !wanted {
            continue;
        }
        if entry.header().size().unwrap_or(0) > MAX_FILE_BYTES {
            return Err(format!("{path}: larger than a chart's file"));
        }
        let mut text = String::new();
        entry
            .take(MAX_FILE_BYTES)
            .read_to_string(&mut text)
            .map_err(|e| format!("{path}: {e}"))?;
        files.insert(inside.to_string(), text);
    }
    if files.is_empty() {
        return Err(format!(
            "no {CHART_NAME}/ in the archive: not Linkerd's control-plane chart as helm pull writes it"
        ));
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn files(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn chart(proxy: &str) -> BTreeMap<String, String> {
        files(&[
            (
                "Chart.yaml",
                "name: linkerd-control-plane\nversion: 2026.5.2\n",
            ),
            ("values.yaml", "proxy:\n  logLevel: warn\n"),
            ("charts/partials/templates/_proxy.tpl", proxy),
            (
                "charts/partials/templates/_helpers.tpl",
                "{{- define \"partials.level\" -}}{{ .Values.proxy.logLevel }}{{- end -}}",
            ),
        ])
    }

    #[test]
    fn partials_render_with_includes_across_files() {
        let proxy = "{{ define \"partials.proxy\" -}}\nname: linkerd-proxy\nlevel: {{ include \"partials.level\" . }}\n{{- end }}";
        let chart = LinkerdChart::from_files("c".into(), &chart(proxy)).unwrap();
        assert_eq!(chart.version, "2026.5.2");
        let data = gotemplate::Value::from_json(&json!({"Values": chart.values}));
        assert_eq!(
            chart.render("partials.proxy", &data).unwrap(),
            json!({"name": "linkerd-proxy", "level": "warn"})
        );
    }

    #[test]
    fn a_missing_partial_and_a_failing_one_name_the_chart_the_file_and_the_line() {
        let proxy = "{{ define \"partials.proxy\" -}}\nname: x\n{{ fail \"broken\" }}\n{{- end }}";
        let chart = LinkerdChart::from_files("cluster/chart".into(), &chart(proxy)).unwrap();
        let data = gotemplate::Value::from_json(&json!({"Values": {}}));
        let missing = chart.render("partials.debug", &data).unwrap_err();
        assert!(
            missing.to_string().starts_with(
                "--linkerd-chart cluster/chart: the chart defines no template \"partials.debug\""
            ),
            "{missing}"
        );
        let failed = chart
            .render("partials.proxy", &data)
            .unwrap_err()
            .to_string();
        assert_eq!(
            failed,
            "--linkerd-chart cluster/chart: charts/partials/templates/_proxy.tpl: template \"partials.proxy\", line 3: error calling fail: broken"
        );
    }

    #[test]
    fn only_linkerds_control_plane_chart_is_taken() {
        let mut other = chart("");
        other.insert("Chart.yaml".into(), "name: linkerd-crds\n".into());
        let error = LinkerdChart::from_files("c".into(), &other).unwrap_err();
        assert!(
            error.to_string().contains("not \"linkerd-control-plane\""),
            "{error}"
        );
        let error = LinkerdChart::from_files("c".into(), &BTreeMap::new()).unwrap_err();
        assert!(error.to_string().contains("no Chart.yaml"), "{error}");
    }

    #[test]
    fn a_tgz_is_read_as_helm_pull_writes_it() {
        let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::default(),
        ));
        for (path, text) in chart("{{ define \"partials.proxy\" }}a: 1{{ end }}") {
            let mut header = tar::Header::new_gnu();
            header.set_size(text.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            builder
                .append_data(&mut header, format!("{CHART_NAME}/{path}"), text.as_bytes())
                .unwrap();
        }
        let bytes = builder.into_inner().unwrap().finish().unwrap();
        let files = read_tgz(bytes.as_slice()).unwrap();
        assert_eq!(files, chart("{{ define \"partials.proxy\" }}a: 1{{ end }}"));
        assert!(read_tgz(&b"not gzip"[..]).is_err());
    }
}

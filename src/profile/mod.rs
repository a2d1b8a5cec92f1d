//! Profiles: what a mesh injects, as data.
//!
//! A profile names the proxy and init containers, volumes, the annotations and
//! labels that mark a pod as injected, and the rules for leaving a pod alone.
//! The default one is embedded; `--set NAME=VALUE` overrides its `values`.

pub mod template;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::Error;
use crate::yaml;

/// The embedded default profile.
pub const DEFAULT_PROFILE: &str = include_str!("../../profiles/linkerd.yaml");

/// A mesh's injection, as described by a profile file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Profile {
    pub name: String,
    /// Named settings the templates use; `--set` overrides them.
    #[serde(default)]
    pub values: Map<String, Value>,
    /// Values that must not be empty, with the hint to show when they are.
    #[serde(default)]
    pub required: Map<String, Value>,
    #[serde(default)]
    pub annotations: Map<String, Value>,
    #[serde(default)]
    pub labels: Map<String, Value>,
    /// Label naming the owning workload, e.g. `linkerd.io/proxy-{{workload.kind}}`.
    pub owner_label: Option<String>,
    pub disable_annotation: Option<KeyValue>,
    #[serde(default)]
    pub foreign_sidecars: ForeignSidecars,
    #[serde(default)]
    pub init_containers: Vec<Value>,
    pub proxy: Value,
    /// Fields merged into the proxy when it runs as a native sidecar.
    #[serde(default)]
    pub native_sidecar: Map<String, Value>,
    #[serde(default)]
    pub volumes: Vec<Value>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyValue {
    pub key: String,
    pub value: String,
}

/// How another mesh's proxy is recognised.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ForeignSidecars {
    #[serde(default)]
    pub names: Vec<String>,
    #[serde(default)]
    pub image_prefixes: Vec<String>,
}

/// The workload a profile is rendered for.
#[derive(Debug, Clone)]
pub struct Workload<'a> {
    /// Lower-case kind, e.g. `deployment`.
    pub kind: &'a str,
    pub name: &'a str,
    pub namespace: &'a str,
    /// Comma-separated container ports of the pod, sorted.
    pub inbound_ports: String,
}

/// A profile's pieces rendered for one workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    pub annotations: Map<String, Value>,
    pub labels: Map<String, Value>,
    pub init_containers: Vec<Value>,
    /// The proxy container, native-sidecar fields included.
    pub proxy: Value,
    pub volumes: Vec<Value>,
}

impl Profile {
    /// Parse a profile from YAML text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Self, Error> {
        let config = |m: String| Error::Config(format!("{origin}: {m}"));
        let docs = yaml::parse_stream(text)
            .map_err(|e| config(format!("line {}:{}: {}", e.line, e.column, e.message)))?;
        let root = docs
            .first()
            .and_then(|d| d.root.as_ref())
            .ok_or_else(|| config("the profile is empty".into()))?;
        let value = yaml::value::to_value(root).map_err(|e| config(e.message))?;
        let profile: Profile = serde_json::from_value(value).map_err(|e| config(e.to_string()))?;
        profile.check().map_err(config)?;
        Ok(profile)
    }

    /// The embedded default profile.
    pub fn default_profile() -> Result<Self, Error> {
        Self::parse(DEFAULT_PROFILE, "embedded profile")
    }

    /// Apply `--set NAME=VALUE`. The value takes the type of the default it replaces.
    pub fn set(&mut self, assignment: &str) -> Result<(), Error> {
        let (name, raw) = assignment
            .split_once('=')
            .ok_or_else(|| Error::Usage(format!("--set expects NAME=VALUE, got {assignment:?}")))?;
        let Some(current) = self.values.get(name) else {
            let known: Vec<&str> = self.values.keys().map(String::as_str).collect();
            return Err(Error::Config(format!(
                "unknown value {name:?} in --set; the {} profile has: {}",
                self.name,
                known.join(", ")
            )));
        };
        let value = match current {
            Value::String(_) => Value::String(raw.to_string()),
            _ => match yaml::value::resolve_plain(raw) {
                Value::String(_) => {
                    return Err(Error::Config(format!(
                        "--set {name}: expected a {}, got {raw:?}",
                        kind_name(current)
                    )));
                }
                other => other,
            },
        };
        self.values.insert(name.to_string(), value);
        self.check().map_err(Error::Config)
    }

    /// Warnings about required values that are still empty.
    pub fn missing_required(&self) -> Vec<String> {
        self.required
            .iter()
            .filter(|(name, _)| {
                self.values
                    .get(*name)
                    .is_none_or(|v| v.is_null() || v.as_str().is_some_and(str::is_empty))
            })
            .map(|(name, hint)| match hint.as_str() {
                Some(hint) => format!("value {name:?} is empty: {hint}"),
                None => format!("value {name:?} is empty"),
            })
            .collect()
    }

    /// Render every piece for one workload.
    pub fn render(&self, workload: &Workload<'_>) -> Result<Rendered, String> {
        let lookup = |name: &str| -> Option<Value> {
            if let Some(value) = name.strip_prefix("values.") {
                return self.values.get(value).cloned();
            }
            Some(Value::String(match name {
                "workload.kind" => workload.kind.to_string(),
                "workload.name" => workload.name.to_string(),
                "workload.namespace" => workload.namespace.to_string(),
                "pod.inboundPorts" => workload.inbound_ports.clone(),
                "tool.version" => env!("CARGO_PKG_VERSION").to_string(),
                _ => return None,
            }))
        };
        let strings = |map: &Map<String, Value>| -> Result<Map<String, Value>, String> {
            let rendered = template::render(&Value::Object(map.clone()), &lookup)?;
            let Value::Object(rendered) = rendered else {
                return Ok(Map::new());
            };
            Ok(rendered
                .into_iter()
                .map(|(k, v)| match v {
                    Value::String(_) => (k, v),
                    other => (k, Value::String(other.to_string())),
                })
                .collect())
        };
        let mut labels = strings(&self.labels)?;
        if let Some(owner) = &self.owner_label {
            if workload.kind != "pod" {
                if let Value::String(key) =
                    template::render(&Value::String(owner.clone()), &lookup)?
                {
                    labels.insert(key, Value::String(workload.name.to_string()));
                }
            }
        }
        let mut proxy = template::render(&self.proxy, &lookup)?;
        if let Value::Object(proxy) = &mut proxy {
            let native = template::render(&Value::Object(self.native_sidecar.clone()), &lookup)?;
            if let Value::Object(native) = native {
                proxy.extend(native);
            }
        }
        Ok(Rendered {
            annotations: strings(&self.annotations)?,
            labels,
            init_containers: self
                .init_containers
                .iter()
                .map(|c| template::render(c, &lookup))
                .collect::<Result<_, _>>()?,
            proxy,
            volumes: self
                .volumes
                .iter()
                .map(|v| template::render(v, &lookup))
                .collect::<Result<_, _>>()?,
        })
    }

    /// The annotation and label keys the profile adds to a workload of `kind`
    /// (lower case), for removing an injection that left no record.
    pub fn marker_keys(&self, kind: &str) -> (Vec<String>, Vec<String>) {
        let annotations = self.annotations.keys().cloned().collect();
        let mut labels: Vec<String> = self.labels.keys().cloned().collect();
        if let Some(owner) = &self.owner_label {
            let lookup = |name: &str| match name {
                "workload.kind" => Some(Value::String(kind.to_string())),
                _ => name
                    .strip_prefix("values.")
                    .and_then(|v| self.values.get(v).cloned()),
            };
            if let Ok(Value::String(key)) = template::render(&Value::String(owner.clone()), &lookup)
            {
                labels.push(key);
            }
        }
        (annotations, labels)
    }

    /// Names of every container this profile adds (init containers and the proxy).
    pub fn container_names(&self) -> impl Iterator<Item = &str> {
        self.init_containers
            .iter()
            .chain(std::iter::once(&self.proxy))
            .filter_map(|c| c.get("name").and_then(Value::as_str))
    }

    pub fn volume_names(&self) -> impl Iterator<Item = &str> {
        self.volumes
            .iter()
            .filter_map(|v| v.get("name").and_then(Value::as_str))
    }

    /// Render for a sample workload and check every container and volume
    /// against the Kubernetes types, so mistakes surface before any input is read.
    fn check(&self) -> Result<(), String> {
        let sample = Workload {
            kind: "deployment",
            name: "sample",
            namespace: "default",
            inbound_ports: "8080".into(),
        };
        let rendered = self.render(&sample)?;
        for container in rendered.init_containers.iter().chain([&rendered.proxy]) {
            check_typed::<k8s_openapi::api::core::v1::Container>(container, "container")?;
        }
        for volume in &rendered.volumes {
            check_typed::<k8s_openapi::api::core::v1::Volume>(volume, "volume")?;
        }
        Ok(())
    }
}

fn kind_name(value: &Value) -> &'static str {
    match value {
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        _ => "value",
    }
}

/// Check `value` against a Kubernetes type: wrong types fail to deserialize,
/// and fields the type does not know are missing after a round trip.
fn check_typed<T>(value: &Value, what: &str) -> Result<(), String>
where
    T: serde::de::DeserializeOwned + serde::Serialize,
{
    let name = value
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("<unnamed>");
    let typed: T =
        serde_json::from_value(value.clone()).map_err(|e| format!("{what} {name}: {e}"))?;
    let back = serde_json::to_value(&typed).map_err(|e| format!("{what} {name}: {e}"))?;
    match unknown_field(value, &back, String::new()) {
        Some(path) => Err(format!("{what} {name}: unknown field `{path}`")),
        None => Ok(()),
    }
}

fn unknown_field(given: &Value, known: &Value, at: String) -> Option<String> {
    match (given, known) {
        (Value::Object(g), Value::Object(k)) => g.iter().find_map(|(key, v)| {
            let path = if at.is_empty() {
                key.clone()
            } else {
                format!("{at}.{key}")
            };
            match k.get(key) {
                None if !v.is_null() => Some(path),
                None => None,
                Some(kv) => unknown_field(v, kv, path),
            }
        }),
        (Value::Array(g), Value::Array(k)) => g
            .iter()
            .zip(k)
            .enumerate()
            .find_map(|(i, (gv, kv))| unknown_field(gv, kv, format!("{at}[{i}]"))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_profile_is_valid() {
        let profile = Profile::default_profile().expect("valid");
        assert_eq!(profile.name, "linkerd");
        let names: Vec<&str> = profile.container_names().collect();
        assert_eq!(names, ["linkerd-init", "linkerd-proxy"]);
    }

    #[test]
    fn set_keeps_types_and_rejects_unknown_names() {
        let mut profile = Profile::default_profile().expect("valid");
        profile.set("proxyUID=1000").expect("number");
        assert_eq!(profile.values["proxyUID"], serde_json::json!(1000));
        profile.set("proxyVersion=2.14").expect("string");
        assert_eq!(profile.values["proxyVersion"], serde_json::json!("2.14"));
        assert!(profile.set("proxyUID=abc").is_err());
        let err = profile.set("nope=1").expect_err("unknown").to_string();
        assert!(err.contains("nope") && err.contains("proxyUID"), "{err}");
    }

    #[test]
    fn unknown_fields_are_named() {
        let text = DEFAULT_PROFILE.replace(
            "terminationMessagePolicy: FallbackToLogsOnError\n  volumeMounts",
            "terminationMesagePolicy: x\n  volumeMounts",
        );
        let err = Profile::parse(&text, "p.yaml")
            .expect_err("typo")
            .to_string();
        assert!(err.contains("terminationMesagePolicy"), "{err}");
        let err = Profile::parse("name: x\nproxy: {name: p}\nextra: 1\n", "p.yaml")
            .expect_err("unknown key")
            .to_string();
        assert!(err.contains("extra"), "{err}");
    }
}

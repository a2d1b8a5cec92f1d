//! A profile's checks when it loads: its values, overrides and templates
//! make sense, and what it renders are valid Kubernetes objects.

use serde_json::Value;

use super::{Profile, WorkloadVars, merge, template};
use crate::json::Field;

/// Check `value` against a Kubernetes type: wrong types fail to deserialize,
/// and fields the type does not know are missing after a round trip.
pub fn check_typed<T>(value: &Value, what: &str) -> Result<(), String>
where
    T: serde::de::DeserializeOwned + serde::Serialize,
{
    let name = value
        .field("name")
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

pub(super) fn unknown_field(given: &Value, known: &Value, at: String) -> Option<String> {
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

impl Profile {
    /// Render for a sample workload and check every container and volume
    /// against the Kubernetes types, so mistakes surface before any input is read.
    pub(super) fn check(&self) -> Result<(), String> {
        for rule in &self.overrides {
            if !self.values.contains_key(&rule.value) {
                return Err(format!(
                    "override {} sets unknown value {:?}",
                    rule.annotation, rule.value
                ));
            }
        }
        const SIDECAR_KEYS: [&str; 6] = [
            "nativeSidecar",
            "classicPosition",
            "waitBeforeExitSeconds",
            "sleepCommand",
            "cni",
            "waitWhenNative",
        ];
        if let Some(key) = self
            .sidecar
            .keys()
            .find(|k| !SIDECAR_KEYS.contains(&k.as_str()))
        {
            return Err(format!(
                "unknown field `sidecar.{key}`, expected one of {}",
                SIDECAR_KEYS.join(", ")
            ));
        }
        if let Some(key) = self
            .quota_defaults
            .keys()
            .find(|k| !["requests", "limits"].contains(&k.as_str()))
        {
            return Err(format!(
                "unknown field `quotaDefaults.{key}`, expected requests or limits"
            ));
        }
        // A hint is shown only when its value is missing: a mistake in it
        // surfaces here instead.
        let known = |name: &str| {
            name.strip_prefix("values.")
                .filter(|value| self.values.contains_key(*value))
                .map(|_| Value::String("x".into()))
        };
        for (name, hint) in &self.required {
            if !self.values.contains_key(name) {
                return Err(format!("required value {name:?} is not in values"));
            }
            if !hint.is_string() {
                return Err(format!("required value {name:?}: its hint is not a string"));
            }
            template::render(hint, &known)
                .map_err(|e| format!("required value {name:?}: its hint: {e}"))?;
        }
        // What the mesh cannot take from --set it cannot take from a profile.
        for (name, value) in &self.values {
            if let Some(text) = value.as_str().filter(|t| !t.trim().is_empty()) {
                self.mesh
                    .check_value(name, text)
                    .map_err(|e| format!("value {name}: {e}"))?;
            }
        }
        if let Some(name) = self
            .mesh
            .derived_names()
            .iter()
            .find(|name| self.values.contains_key(**name))
        {
            return Err(format!(
                "value {name:?} is derived by the {:?} mesh's rules and cannot be declared (or set)",
                self.mesh
            ));
        }
        Ok(())
    }

    /// Render the profile for a sample workload and check that what it
    /// renders are valid containers and volumes.
    pub(super) fn check_rendering(&self) -> Result<(), String> {
        let sample = WorkloadVars {
            kind: "deployment".into(),
            name: "sample".into(),
            namespace: "default".into(),
            inbound_ports: "8080".into(),
            ports: "[\n    {\"containerPort\":8080}\n]".into(),
            app_name: "sample".into(),
            app_version: "latest".into(),
            app_containers: "app".into(),
            owner: "kubernetes://apis/apps/v1/namespaces/default/deployments/sample".into(),
            workload_name: "sample".into(),
            service_account: "default".into(),
            otel_resource_attributes: "service.namespace=default".into(),
        };
        // Render with every value set, so that no field is left out of the
        // check: once as the profile is, once with every switch on (CNI mode,
        // optional containers and env).
        for all_on in [false, true] {
            let mut values = self.values.clone();
            for value in values.values_mut() {
                if value.as_str().is_some_and(str::is_empty) {
                    *value = Value::String("1".into());
                } else if all_on && value.is_boolean() {
                    *value = Value::Bool(true);
                }
            }
            let rendered = self.render(&values, &sample)?;
            let mut containers = rendered.init_containers.clone();
            let mut native = rendered.proxy.clone();
            merge(&mut native, &rendered.native);
            let mut classic = rendered.proxy.clone();
            merge(&mut classic, &rendered.classic_first);
            containers.extend([native, classic]);
            containers.extend(rendered.containers.iter().cloned());
            for container in &containers {
                check_typed::<k8s_openapi::api::core::v1::Container>(container, "container")?;
            }
            for volume in &rendered.volumes {
                check_typed::<k8s_openapi::api::core::v1::Volume>(volume, "volume")?;
            }
        }
        Ok(())
    }
}

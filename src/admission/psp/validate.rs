//! Whether a pod and its containers meet a policy, field by field:
//! `ValidatePod` and `ValidateContainer` of
//! `pkg/security/podsecuritypolicy/provider.go`, with the volume and host
//! path rules of `pkg/security/podsecuritypolicy/util/util.go`.

use super::*;

/// The volume's source and the policy's name for its type.
pub(super) fn volume_type(volume: &Value) -> Option<(&Value, &'static str)> {
    VOLUME_TYPES.iter().find_map(|(key, fs_type)| {
        let source = volume.get(*key).filter(|s| !s.is_null())?;
        Some((source, *fs_type))
    })
}

/// The type is listed, or it is a projected volume of what a bound service
/// account token volume holds and secret volumes are allowed.
pub(super) fn allows_volume_type(allowed: &[&str], fs_type: &str, source: &Value) -> bool {
    allowed.contains(&fs_type)
        || (fs_type == "projected"
            && allowed.contains(&"secret")
            && only_service_account_token_sources(source))
}

/// Only the sources the ServiceAccount admission plugin projects: the token,
/// the `kube-root-ca.crt` ConfigMap and the namespace.
pub(super) fn only_service_account_token_sources(projected: &Value) -> bool {
    let namespace_item = |item: &Value| {
        let field_ref = item.field("fieldRef").filter(|f| f.is_object());
        text(item, "path") == "namespace"
            && field_ref.is_some_and(|f| {
                // The API defaults an unset apiVersion to v1.
                let version = f
                    .field("apiVersion")
                    .and_then(Value::as_str)
                    .unwrap_or("v1");
                version == "v1" && text(f, "fieldPath") == "metadata.namespace"
            })
    };
    let sources = projected.field("sources").and_then(Value::as_array);
    sources.into_iter().flatten().all(|source| {
        let part = |key: &str| source.get(key).filter(|p| !p.is_null());
        let (token, config_map, downward) = (
            part("serviceAccountToken"),
            part("configMap"),
            part("downwardAPI"),
        );
        (token.is_some() || config_map.is_some() || downward.is_some())
            && token.is_none_or(|t| text(t, "path") == "token" && text(t, "audience").is_empty())
            && config_map.is_none_or(|c| text(c, "name") == "kube-root-ca.crt")
            && downward.is_none_or(|d| {
                let items = d.field("items").and_then(Value::as_array);
                items.into_iter().flatten().all(namespace_item)
            })
    })
}

/// `path` equals `prefix` or lies under it at a path-segment boundary (one
/// trailing slash ignored on each).
pub(super) fn has_path_prefix(path: &str, prefix: &str) -> bool {
    let path = path.strip_suffix('/').unwrap_or(path);
    let prefix = prefix.strip_suffix('/').unwrap_or(prefix);
    path.starts_with(prefix)
        && (path.len() == prefix.len() || path.as_bytes().get(prefix.len()) == Some(&b'/'))
}

impl<'a> Policy<'a> {
    pub(super) fn validate_pod(&self, pod: &Value) -> Vec<FieldError> {
        let context = pod_context(pod);
        let field = |key: &str| context.and_then(|c| c.get(key));
        let sc_path = "spec.securityContext";
        let fs_group: Option<Vec<i64>> = field("fsGroup").and_then(Value::as_i64).map(|g| vec![g]);
        let supplemental: Option<Vec<i64>> = field("supplementalGroups")
            .and_then(Value::as_array)
            .map(|groups| groups.iter().filter_map(Value::as_i64).collect());

        let mut errors = self
            .fs_group
            .validate_groups(&format!("{sc_path}.fsGroup"), fs_group.as_deref());
        errors.extend(self.supplemental_groups.validate_groups(
            &format!("{sc_path}.supplementalGroups"),
            supplemental.as_deref(),
        ));
        let seccomp_path = format!("pod.metadata.annotations[{SECCOMP_POD}]");
        errors.extend(
            self.seccomp
                .validate(&seccomp_path, &pod_seccomp_profile(pod)),
        );
        errors.extend(self.validate_se_linux(
            &format!("{sc_path}.seLinuxOptions"),
            field("seLinuxOptions").and_then(as_object),
        ));
        errors.extend(self.validate_host_namespaces(pod));
        errors.extend(self.validate_sysctls(field("sysctls")));
        errors.extend(self.validate_volumes(pod));
        errors.extend(self.validate_runtime_class(pod));
        for (path, container) in containers_with_paths(spec(pod)) {
            errors.extend(self.validate_container(pod, container, &path));
        }
        errors
    }

    pub(super) fn validate_host_namespaces(&self, pod: &Value) -> Vec<FieldError> {
        let checks = [
            ("hostNetwork", "Host network is not allowed to be used"),
            ("hostPID", "Host PID is not allowed to be used"),
            ("hostIPC", "Host IPC is not allowed to be used"),
        ];
        checks
            .into_iter()
            .filter(|(key, _)| {
                self.flag(key) != Some(true)
                    && spec(pod).get(*key).and_then(Value::as_bool) == Some(true)
            })
            .map(|(key, detail)| {
                FieldError::invalid(format!("spec.securityContext.{key}"), "true".into(), detail)
            })
            .collect()
    }

    /// The SELinux strategy: under MustRunAs, every field must match the policy's.
    pub(super) fn validate_se_linux(&self, path: &str, actual: Option<&Value>) -> Vec<FieldError> {
        let Some(required) = self.se_linux else {
            return Vec::new();
        };
        let Some(actual) = actual else {
            return vec![FieldError::required(path, "")];
        };
        let mut errors = Vec::new();
        for key in ["level", "role", "type", "user"] {
            let (want, got) = (text(required, key), text(actual, key));
            let same = if key == "level" {
                equal_levels(want, got)
            } else {
                want == got
            };
            if !same {
                let path = format!("{path}.{key}");
                errors.push(FieldError::invalid(
                    path,
                    go_quote(got),
                    format!("must be {want}"),
                ));
            }
        }
        errors
    }

    /// The sysctls strategy: forbidden patterns first, then the safe set and
    /// the allowed unsafe patterns.
    pub(super) fn validate_sysctls(&self, sysctls: Option<&Value>) -> Vec<FieldError> {
        let forbidden = self.list("forbiddenSysctls");
        let allowed_unsafe = self.list("allowedUnsafeSysctls");
        let matches = |patterns: &[&str], name: &str| {
            patterns.iter().any(|p| match p.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => name == *p,
            })
        };
        let items = sysctls.and_then(Value::as_array);
        let mut errors = Vec::new();
        for (index, sysctl) in items.into_iter().flatten().enumerate() {
            let name = sysctl
                .field("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let path = format!("pod.spec.securityContext.sysctls[{index}]");
            let detail = if matches(&forbidden, name) {
                format!("sysctl {} is not allowed", go_quote(name))
            } else if SAFE_SYSCTLS.contains(&name) || matches(&allowed_unsafe, name) {
                continue;
            } else {
                format!("unsafe sysctl {} is not allowed", go_quote(name))
            };
            errors.push(FieldError::forbidden(path, detail));
        }
        errors
    }

    pub(super) fn validate_volumes(&self, pod: &Value) -> Vec<FieldError> {
        let allowed = self.list("volumes");
        let allows_all = allowed.contains(&"*");
        let volumes = spec(pod).field("volumes").and_then(Value::as_array);
        let mut errors = Vec::new();
        for (index, volume) in volumes.into_iter().flatten().enumerate() {
            let path = format!("spec.volumes[{index}]");
            // A volume of no known type fails API validation before this.
            let Some((source, fs_type)) = volume_type(volume) else {
                continue;
            };
            if !allows_all && !allows_volume_type(&allowed, fs_type, source) {
                let detail = format!("{fs_type} volumes are not allowed to be used");
                errors.push(FieldError::invalid(path, go_quote(fs_type), detail));
                continue;
            }
            match fs_type {
                "hostPath" => errors.extend(self.validate_host_path(pod, volume, source, &path)),
                "flexVolume" => errors.extend(self.validate_driver(
                    source,
                    ("allowedFlexVolumes", "driver"),
                    format!("{path}.driver"),
                    "Flexvolume driver is not allowed to be used",
                )),
                "csi" => errors.extend(self.validate_driver(
                    source,
                    ("allowedCSIDrivers", "name"),
                    format!("{path}.csi.driver"),
                    "Inline CSI driver is not allowed to be used",
                )),
                _ => {}
            }
        }
        errors
    }

    /// allowedHostPaths: the path must fall under a prefix; under read-only
    /// prefixes only, every mount of the volume must be read-only.
    pub(super) fn validate_host_path(
        &self,
        pod: &Value,
        volume: &Value,
        source: &Value,
        path: &str,
    ) -> Vec<FieldError> {
        let host_path = source
            .field("path")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let (allowed, read_only) = self.host_path_allowance(host_path);
        if !allowed {
            let path = format!("{path}.hostPath.pathPrefix");
            return vec![FieldError::invalid(
                path,
                go_quote(host_path),
                "is not allowed to be used",
            )];
        }
        if !read_only {
            return Vec::new();
        }
        let name = volume
            .field("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let mut errors = Vec::new();
        for (container_path, container) in containers_with_paths(spec(pod)) {
            let mounts = container.field("volumeMounts").and_then(Value::as_array);
            for (index, mount) in mounts.into_iter().flatten().enumerate() {
                let writable = mount.field("readOnly").and_then(Value::as_bool) != Some(true);
                if writable && mount.field("name").and_then(Value::as_str) == Some(name) {
                    let path = format!("{container_path}.volumeMounts[{index}].readOnly");
                    errors.push(FieldError::invalid(
                        path,
                        "false".into(),
                        "must be read-only",
                    ));
                }
            }
        }
        errors
    }

    /// (allowed, must be read-only) for a host path; no list allows any path.
    pub(super) fn host_path_allowance(&self, host_path: &str) -> (bool, bool) {
        let prefixes = self
            .spec
            .field("allowedHostPaths")
            .and_then(Value::as_array);
        let prefixes: Vec<&Value> = prefixes.into_iter().flatten().collect();
        if prefixes.is_empty() {
            return (true, false);
        }
        let mut allowed = false;
        for entry in prefixes {
            let prefix = entry
                .field("pathPrefix")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if has_path_prefix(host_path, prefix) {
                if entry.field("readOnly").and_then(Value::as_bool) != Some(true) {
                    return (true, false);
                }
                allowed = true;
            }
        }
        (allowed, allowed)
    }

    /// A flexVolume or CSI driver against its allowed list (empty allows all).
    pub(super) fn validate_driver(
        &self,
        source: &Value,
        (list, key): (&str, &str),
        path: String,
        detail: &str,
    ) -> Option<FieldError> {
        let allowed = self.spec.get(list).and_then(Value::as_array)?;
        if allowed.is_empty() {
            return None;
        }
        let driver = source
            .field("driver")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let found = allowed
            .iter()
            .any(|a| a.get(key).and_then(Value::as_str) == Some(driver));
        (!found).then(|| FieldError::invalid(path, go_quote(driver), detail))
    }

    pub(super) fn validate_runtime_class(&self, pod: &Value) -> Option<FieldError> {
        let class = self.spec.field("runtimeClass").filter(|c| c.is_object())?;
        let actual = spec(pod).field("runtimeClassName")?.as_str()?;
        let names = strings(class.field("allowedRuntimeClassNames"));
        let allowed = names.iter().any(|n| *n == "*" || *n == actual);
        (!allowed).then(|| FieldError::invalid("spec.runtimeClassName", go_quote(actual), ""))
    }

    /// `validateContainer`, on the container's effective security context.
    pub(super) fn validate_container(
        &self,
        pod: &Value,
        container: &Value,
        path: &str,
    ) -> Vec<FieldError> {
        let context = Effective::new(container.field("securityContext"), pod_context(pod));
        let sc_path = format!("{path}.securityContext");
        let mut errors = self.run_as_user.validate_user(
            &sc_path,
            context.inherited("runAsNonRoot", Value::as_bool),
            context.inherited("runAsUser", Value::as_i64),
        );
        // The group strategy reports at the security context itself.
        let gid = context
            .inherited("runAsGroup", Value::as_i64)
            .map(|g| vec![g]);
        errors.extend(self.run_as_group.validate_groups(&sc_path, gid.as_deref()));
        errors.extend(self.validate_se_linux(
            &format!("{sc_path}.seLinuxOptions"),
            context.inherited("seLinuxOptions", as_object),
        ));
        let name = crate::admission::container_name(container);
        errors.extend(self.validate_apparmor(pod, name));
        let seccomp_path = format!("pod.metadata.annotations[{SECCOMP_CONTAINER}{name}]");
        let profile = container_seccomp_profile(pod, container);
        errors.extend(self.seccomp.validate(&seccomp_path, &profile));
        errors.extend(self.validate_privileged(&context, &sc_path));
        errors.extend(self.validate_proc_mount(&context, &sc_path));
        let capabilities = context.own("capabilities").and_then(Value::as_object);
        errors.extend(self.validate_capabilities(&format!("{sc_path}.capabilities"), capabilities));
        errors.extend(self.validate_host_ports(container, path));
        errors.extend(self.validate_read_only_root(&context, &sc_path));
        errors.extend(self.validate_escalation(&context, &sc_path));
        errors
    }

    pub(super) fn validate_apparmor(&self, pod: &Value, container: &str) -> Option<FieldError> {
        // Without an allowed list, any profile goes.
        let allowed_text = self.annotation(APPARMOR_ALLOWED)?;
        let allowed: Vec<&str> = allowed_text.split(',').collect();
        let key = format!("{APPARMOR_CONTAINER}{container}");
        let path = format!("pod.metadata.annotations[{key}]");
        let profile = annotation(pod, &key).unwrap_or_default();
        if profile.is_empty() {
            return Some(FieldError::forbidden(path, "AppArmor profile must be set"));
        }
        let detail = format!(
            "{profile} is not an allowed profile. Allowed values: {}",
            go_quote(allowed_text)
        );
        (!allowed.contains(&profile)).then(|| FieldError::forbidden(path, detail))
    }

    pub(super) fn validate_privileged(
        &self,
        context: &Effective,
        sc_path: &str,
    ) -> Option<FieldError> {
        let privileged = context.own("privileged").and_then(Value::as_bool) == Some(true);
        (privileged && self.flag("privileged") != Some(true)).then(|| {
            let path = format!("{sc_path}.privileged");
            FieldError::invalid(path, "true".into(), "Privileged containers are not allowed")
        })
    }

    pub(super) fn validate_proc_mount(
        &self,
        context: &Effective,
        sc_path: &str,
    ) -> Option<FieldError> {
        let proc_mount = context
            .own("procMount")
            .and_then(Value::as_str)
            .unwrap_or("Default");
        let mut allowed = self.list("allowedProcMountTypes");
        if allowed.is_empty() {
            allowed.push("Default");
        }
        (!allowed.contains(&proc_mount)).then(|| {
            let path = format!("{sc_path}.procMount");
            FieldError::invalid(path, go_quote(proc_mount), "ProcMountType is not allowed")
        })
    }

    pub(super) fn validate_capabilities(
        &self,
        path: &str,
        capabilities: Option<&Map<String, Value>>,
    ) -> Vec<FieldError> {
        let default_add = self.list("defaultAddCapabilities");
        let required_drop = self.list("requiredDropCapabilities");
        let allowed = self.list("allowedCapabilities");
        let Some(capabilities) = capabilities else {
            if default_add.is_empty() && required_drop.is_empty() {
                return Vec::new();
            }
            let detail = "required capabilities are not set on the securityContext";
            return vec![FieldError::invalid(path, go_null(), detail)];
        };
        // A wildcard skips the add and the required-drop checks alike.
        if allowed.contains(&"*") {
            return Vec::new();
        }
        let mut errors = Vec::new();
        for capability in strings(capabilities.field("add")) {
            if !default_add.contains(&capability) && !allowed.contains(&capability) {
                let path = format!("{path}.add");
                errors.push(FieldError::invalid(
                    path,
                    go_quote(capability),
                    "capability may not be added",
                ));
            }
        }
        let drop = capabilities.field("drop");
        let dropped = strings(drop);
        for required in required_drop.iter().filter(|c| !dropped.contains(c)) {
            let detail = format!("{required} is required to be dropped but was not found");
            errors.push(FieldError::invalid(
                format!("{path}.drop"),
                go_capabilities(drop),
                detail,
            ));
        }
        errors
    }

    pub(super) fn validate_host_ports(&self, container: &Value, path: &str) -> Vec<FieldError> {
        let ranges = self.spec.field("hostPorts").and_then(Value::as_array);
        let ranges: Vec<(i64, i64)> = ranges
            .into_iter()
            .flatten()
            .filter_map(|r| Some((r.field("min")?.as_i64()?, r.field("max")?.as_i64()?)))
            .collect();
        let shown: Vec<String> = ranges
            .iter()
            .map(|(min, max)| match min == max {
                true => min.to_string(),
                false => format!("{min}-{max}"),
            })
            .collect();
        let ports = container.field("ports").and_then(Value::as_array);
        ports
            .into_iter()
            .flatten()
            .filter_map(|p| p.field("hostPort").and_then(Value::as_i64))
            .filter(|port| *port > 0 && !ranges.iter().any(|(min, max)| min <= port && port <= max))
            .map(|port| {
                let detail = format!(
                    "Host port {port} is not allowed to be used. Allowed ports: [{}]",
                    shown.join(",")
                );
                FieldError::invalid(format!("{path}.hostPort"), port.to_string(), detail)
            })
            .collect()
    }

    pub(super) fn validate_read_only_root(
        &self,
        context: &Effective,
        sc_path: &str,
    ) -> Option<FieldError> {
        if self.flag("readOnlyRootFilesystem") != Some(true) {
            return None;
        }
        let path = format!("{sc_path}.readOnlyRootFilesystem");
        match context
            .own("readOnlyRootFilesystem")
            .and_then(Value::as_bool)
        {
            None => Some(FieldError::invalid(
                path,
                go_null(),
                "ReadOnlyRootFilesystem may not be nil and must be set to true",
            )),
            Some(false) => Some(FieldError::invalid(
                path,
                "false".into(),
                "ReadOnlyRootFilesystem must be set to true",
            )),
            Some(true) => None,
        }
    }

    /// A policy that disallows escalation needs an explicit `false`.
    pub(super) fn validate_escalation(
        &self,
        context: &Effective,
        sc_path: &str,
    ) -> Option<FieldError> {
        let value = context
            .own("allowPrivilegeEscalation")
            .and_then(Value::as_bool);
        if self.allows_escalation() || value == Some(false) {
            return None;
        }
        let shown = value.map_or_else(go_null, |v| v.to_string());
        let path = format!("{sc_path}.allowPrivilegeEscalation");
        let detail = "Allowing privilege escalation for containers is not allowed";
        Some(FieldError::invalid(path, shown, detail))
    }
}

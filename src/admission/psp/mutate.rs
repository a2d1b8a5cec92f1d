//! What a policy sets on a pod and its containers that leave it unset:
//! `DefaultPodSecurityContext` and `DefaultContainerSecurityContext` of
//! `pkg/security/podsecuritypolicy/provider.go`.

use super::*;

impl<'a> Policy<'a> {
    pub(super) fn mutate_pod(&self, pod: &mut Value) -> bool {
        let before = pod.clone();
        let defaults = self.pod_context_defaults(pod);
        if !defaults.is_empty() {
            if let Some(context) = object_at(pod, &["spec", "securityContext"]) {
                context.extend(defaults.into_iter().map(|(k, v)| (k.to_string(), v)));
            }
        }
        // The profile is generated at pod level only; containers inherit it.
        if let Some(profile) = self.seccomp_default(pod) {
            set_annotation(pod, SECCOMP_POD, &profile);
        }
        if let Some(class) = self.runtime_class_default(pod) {
            if let Some(spec) = object_at(pod, &["spec"]) {
                spec.insert("runtimeClassName".into(), Value::String(class));
            }
        }
        let pod_context = pod_context(pod).cloned();
        let mut names = Vec::new();
        if let Some(spec) = pod.get_mut("spec") {
            for list in CONTAINER_LISTS {
                let containers = spec.get_mut(list).and_then(Value::as_array_mut);
                for container in containers.into_iter().flatten() {
                    self.mutate_container(container, pod_context.as_ref());
                    names.push(crate::admission::container_name(container).to_string());
                }
            }
        }
        for (key, profile) in names.iter().filter_map(|n| self.apparmor_default(n)) {
            if annotation(pod, &key).unwrap_or_default().is_empty() {
                set_annotation(pod, &key, &profile);
            }
        }
        *pod != before
    }

    /// supplementalGroups, fsGroup and seLinuxOptions the pod's context lacks.
    pub(super) fn pod_context_defaults(&self, pod: &Value) -> Vec<(&'static str, Value)> {
        let context = pod_context(pod);
        let field = |key: &str| context.and_then(|c| c.get(key));
        let mut defaults = Vec::new();
        // Only a nil list is defaulted; an explicit `[]` stays.
        if !field("supplementalGroups").is_some_and(Value::is_array) {
            if let Some(group) = self.supplemental_groups.generate() {
                defaults.push(("supplementalGroups", Value::from(vec![group])));
            }
        }
        if field("fsGroup").and_then(Value::as_i64).is_none() {
            if let Some(group) = self.fs_group.generate() {
                defaults.push(("fsGroup", Value::from(group)));
            }
        }
        if !field("seLinuxOptions").is_some_and(Value::is_object) {
            if let Some(options) = self.se_linux {
                defaults.push(("seLinuxOptions", options.clone()));
            }
        }
        defaults
    }

    /// The seccomp Generate: the pod annotation to write, if it changes.
    pub(super) fn seccomp_default(&self, pod: &Value) -> Option<String> {
        if !annotation(pod, SECCOMP_POD).unwrap_or_default().is_empty() {
            return None;
        }
        // A profile in the field (v1.19+) is copied to the annotation.
        let profile =
            seccomp_field(pod_context(pod)).unwrap_or_else(|| self.seccomp.default.to_string());
        (!profile.is_empty()).then_some(profile)
    }

    pub(super) fn runtime_class_default(&self, pod: &Value) -> Option<String> {
        let class = self.spec.field("runtimeClass").filter(|c| c.is_object())?;
        if spec(pod)
            .field("runtimeClassName")
            .is_some_and(|n| !n.is_null())
        {
            return None;
        }
        Some(
            class
                .field("defaultRuntimeClassName")?
                .as_str()?
                .to_string(),
        )
    }

    pub(super) fn apparmor_default(&self, container: &str) -> Option<(String, String)> {
        let profile = self
            .annotation(APPARMOR_DEFAULT)
            .filter(|p| !p.is_empty())?;
        Some((
            format!("{APPARMOR_CONTAINER}{container}"),
            profile.to_string(),
        ))
    }

    pub(super) fn mutate_container(
        &self,
        container: &mut Value,
        pod_context: Option<&Value>,
    ) -> bool {
        let defaults = self.container_defaults(container, pod_context);
        if defaults.is_empty() {
            return false;
        }
        let Some(context) = object_at(container, &["securityContext"]) else {
            return false;
        };
        context.extend(defaults.into_iter().map(|(k, v)| (k.to_string(), v)));
        true
    }

    /// What `mutateContainer` sets, judged on the effective context.
    pub(super) fn container_defaults(
        &self,
        container: &Value,
        pod_context: Option<&Value>,
    ) -> Vec<(&'static str, Value)> {
        let context = Effective::new(container.field("securityContext"), pod_context);
        let mut defaults = Vec::new();
        let mut uid = context.inherited("runAsUser", Value::as_i64);
        if uid.is_none() {
            uid = self.run_as_user.generate();
            defaults.extend(uid.map(|u| ("runAsUser", Value::from(u))));
        }
        if context.inherited("runAsGroup", Value::as_i64).is_none() {
            let gid = self.run_as_group.generate();
            defaults.extend(gid.map(|g| ("runAsGroup", Value::from(g))));
        }
        if context.inherited("seLinuxOptions", as_object).is_none() {
            defaults.extend(self.se_linux.map(|o| ("seLinuxOptions", o.clone())));
        }
        // Marks the container for the kubelet's own non-root check.
        if self.run_as_user == IdRule::MustRunAsNonRoot
            && context.inherited("runAsNonRoot", Value::as_bool).is_none()
            && uid.is_none()
        {
            defaults.push(("runAsNonRoot", Value::Bool(true)));
        }
        let own_capabilities = context.own("capabilities").and_then(Value::as_object);
        if let Some(capabilities) = self.capabilities_default(own_capabilities) {
            defaults.push(("capabilities", capabilities));
        }
        let own_flag = |key: &str| context.own(key).and_then(Value::as_bool);
        if self.flag("readOnlyRootFilesystem") == Some(true)
            && own_flag("readOnlyRootFilesystem").is_none()
        {
            defaults.push(("readOnlyRootFilesystem", Value::Bool(true)));
        }
        if own_flag("allowPrivilegeEscalation").is_none() {
            let escalation = self
                .flag("defaultAllowPrivilegeEscalation")
                .or_else(|| (!self.allows_escalation()).then_some(false));
            defaults.extend(escalation.map(|e| ("allowPrivilegeEscalation", Value::Bool(e))));
        }
        defaults
    }

    /// The capabilities Generate: add = (defaultAdd − own drop) ∪ own add,
    /// drop = requiredDrop ∪ own drop, both sorted; None when nothing new
    /// results, so the container keeps its own object.
    pub(super) fn capabilities_default(&self, own: Option<&Map<String, Value>>) -> Option<Value> {
        let own_list = |key: &str| -> BTreeSet<&str> {
            strings(own.and_then(|c| c.get(key))).into_iter().collect()
        };
        let (own_add, own_drop) = (own_list("add"), own_list("drop"));
        let mut add = own_add.clone();
        add.extend(
            self.list("defaultAddCapabilities")
                .into_iter()
                .filter(|c| !own_drop.contains(c)),
        );
        let mut drop = own_drop.clone();
        drop.extend(self.list("requiredDropCapabilities"));
        if add.len() == own_add.len() && drop.len() == own_drop.len() {
            return None;
        }
        let mut capabilities = Map::new();
        for (key, set) in [("add", add), ("drop", drop)] {
            if !set.is_empty() {
                capabilities.insert(key.into(), set.into_iter().collect());
            }
        }
        Some(Value::Object(capabilities))
    }

    // ---- Validation --------------------------------------------------------
}

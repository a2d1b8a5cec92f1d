//! One policy's view of itself: its fields, annotations and flags, and a
//! container's security context as it stands with the pod's beneath it
//! (`pkg/security/podsecuritypolicy/provider.go` and `factory.go`).

use super::*;

/// A policy, read once; a strategy that does not parse reads as RunAsAny and
/// is noted in `problems`.
pub(super) struct Policy<'a> {
    pub(super) name: &'a str,
    pub(super) spec: &'a Value,
    pub(super) annotations: Option<&'a Map<String, Value>>,
    pub(super) run_as_user: IdRule,
    pub(super) run_as_group: IdRule,
    pub(super) fs_group: IdRule,
    pub(super) supplemental_groups: IdRule,
    /// The options `seLinux: MustRunAs` requires; None under RunAsAny.
    pub(super) se_linux: Option<&'a Value>,
    pub(super) seccomp: Seccomp<'a>,
    /// Why the plugin could not build a provider from this policy (it skips it).
    pub(super) problems: Vec<String>,
}

/// A container's security context as the provider reads it: runAsUser,
/// runAsGroup, runAsNonRoot and seLinuxOptions fall back to the pod's; the
/// other fields are the container's own.
pub(super) struct Effective<'v> {
    pub(super) own: Option<&'v Map<String, Value>>,
    pub(super) pod: Option<&'v Map<String, Value>>,
}

impl<'v> Effective<'v> {
    pub(super) fn new(own: Option<&'v Value>, pod: Option<&'v Value>) -> Self {
        Effective {
            own: own.and_then(Value::as_object),
            pod: pod.and_then(Value::as_object),
        }
    }

    pub(super) fn own(&self, key: &str) -> Option<&'v Value> {
        self.own?.get(key)
    }

    pub(super) fn inherited<T>(
        &self,
        key: &str,
        read: impl Fn(&'v Value) -> Option<T>,
    ) -> Option<T> {
        self.own(key)
            .and_then(&read)
            .or_else(|| self.pod?.get(key).and_then(&read))
    }
}

impl<'a> Policy<'a> {
    pub(super) fn new(psp: &'a Value) -> Self {
        let spec = psp.field("spec").unwrap_or(&NULL);
        let metadata = psp.field("metadata").unwrap_or(&NULL);
        let annotations = metadata.field("annotations").and_then(Value::as_object);
        let mut problems = Vec::new();
        let mut rule = |key: &str, rules: &[&str], optional: bool| {
            IdRule::parse(spec.get(key), rules, optional).unwrap_or_else(|problem| {
                problems.push(format!("{key}: {problem}"));
                IdRule::RunAsAny
            })
        };
        let run_as_user = rule("runAsUser", &USER_RULES, false);
        let run_as_group = rule("runAsGroup", &GROUP_RULES, true);
        let fs_group = rule("fsGroup", &GROUP_RULES, false);
        let supplemental_groups = rule("supplementalGroups", &GROUP_RULES, false);
        let se_linux = se_linux_options(spec.field("seLinux")).unwrap_or_else(|problem| {
            problems.push(format!("seLinux: {problem}"));
            None
        });
        let annotated = |key: &str| annotations.and_then(|a| a.get(key)).and_then(Value::as_str);
        Policy {
            name: metadata
                .field("name")
                .and_then(Value::as_str)
                .unwrap_or_default(),
            spec,
            annotations,
            run_as_user,
            run_as_group,
            fs_group,
            supplemental_groups,
            se_linux,
            seccomp: seccomp_strategy(annotated(SECCOMP_DEFAULT), annotated(SECCOMP_ALLOWED)),
            problems,
        }
    }

    pub(super) fn annotation(&self, key: &str) -> Option<&'a str> {
        self.annotations?.get(key)?.as_str()
    }

    pub(super) fn flag(&self, key: &str) -> Option<bool> {
        self.spec.get(key).and_then(Value::as_bool)
    }

    pub(super) fn list(&self, key: &str) -> Vec<&'a str> {
        strings(self.spec.get(key))
    }

    /// `allowPrivilegeEscalation`, which the v1beta1 defaults make true when unset.
    pub(super) fn allows_escalation(&self) -> bool {
        self.flag("allowPrivilegeEscalation").unwrap_or(true)
    }

    // ---- Mutation ----------------------------------------------------------
}

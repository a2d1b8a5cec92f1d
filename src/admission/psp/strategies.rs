//! The strategies a policy's fields stand for: user and group ID rules
//! (`pkg/security/podsecuritypolicy/user/` and `group/`), SELinux
//! (`selinux/`), seccomp (`seccomp/`), and how their messages print Go values.

use super::*;

/// One `policy.IDRange`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct IdRange {
    pub(super) min: i64,
    pub(super) max: i64,
}

/// An id strategy: runAsUser, runAsGroup, fsGroup or supplementalGroups.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum IdRule {
    RunAsAny,
    MustRunAsNonRoot,
    MustRunAs(Vec<IdRange>),
    MayRunAs(Vec<IdRange>),
}

pub(super) const USER_RULES: [&str; 3] = ["MustRunAs", "MustRunAsNonRoot", "RunAsAny"];
pub(super) const GROUP_RULES: [&str; 3] = ["MustRunAs", "MayRunAs", "RunAsAny"];

impl IdRule {
    /// A strategy's options: the rule must be one of `rules`, and MustRunAs or
    /// MayRunAs need ranges. An absent optional strategy (runAsGroup) is RunAsAny.
    pub(super) fn parse(
        options: Option<&Value>,
        rules: &[&str],
        optional: bool,
    ) -> Result<IdRule, String> {
        let options = options.filter(|o| !o.is_null());
        if options.is_none() && optional {
            return Ok(IdRule::RunAsAny);
        }
        let rule = options
            .and_then(|o| o.field("rule"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let ranges = || {
            let ranges = id_ranges(options.and_then(|o| o.field("ranges")));
            if ranges.is_empty() {
                Err(format!("ranges must be supplied for {rule}"))
            } else {
                Ok(ranges)
            }
        };
        match rule {
            _ if !rules.contains(&rule) => Err(format!("unrecognized strategy type {rule:?}")),
            "MustRunAs" => ranges().map(IdRule::MustRunAs),
            "MayRunAs" => ranges().map(IdRule::MayRunAs),
            "MustRunAsNonRoot" => Ok(IdRule::MustRunAsNonRoot),
            _ => Ok(IdRule::RunAsAny),
        }
    }

    /// `Generate`/`GenerateSingle`: MustRunAs gives the first range's min.
    pub(super) fn generate(&self) -> Option<i64> {
        match self {
            IdRule::MustRunAs(ranges) => ranges.first().map(|r| r.min),
            _ => None,
        }
    }

    /// The user strategies' Validate of a container's effective runAsNonRoot and runAsUser.
    pub(super) fn validate_user(
        &self,
        sc_path: &str,
        non_root: Option<bool>,
        uid: Option<i64>,
    ) -> Vec<FieldError> {
        let user_path = format!("{sc_path}.runAsUser");
        let non_root_path = format!("{sc_path}.runAsNonRoot");
        let error = match (self, non_root, uid) {
            (IdRule::MustRunAs(_), _, None) => FieldError::required(user_path, ""),
            (IdRule::MustRunAs(ranges), _, Some(uid)) if !in_ranges(uid, ranges) => {
                let detail = format!("must be in the ranges: {}", go_ranges(ranges));
                FieldError::invalid(user_path, uid.to_string(), detail)
            }
            (IdRule::MustRunAsNonRoot, None, None) => {
                FieldError::required(non_root_path, "must be true")
            }
            (IdRule::MustRunAsNonRoot, Some(false), _) => {
                FieldError::invalid(non_root_path, "false".into(), "must be true")
            }
            (IdRule::MustRunAsNonRoot, _, Some(0)) => FieldError::invalid(
                user_path,
                "0".into(),
                "running with the root UID is forbidden",
            ),
            _ => return Vec::new(),
        };
        vec![error]
    }

    /// The group strategies' Validate: `groups` is None when the field is nil.
    pub(super) fn validate_groups(&self, path: &str, groups: Option<&[i64]>) -> Vec<FieldError> {
        let (ranges, required) = match self {
            IdRule::MustRunAs(ranges) => (ranges, true),
            IdRule::MayRunAs(ranges) => (ranges, false),
            _ => return Vec::new(),
        };
        let shown = go_int64s(groups);
        let list = groups.unwrap_or_default();
        let mut errors = Vec::new();
        if required && list.is_empty() {
            let detail = "unable to validate empty groups against required ranges";
            errors.push(FieldError::invalid(path, shown.clone(), detail));
        }
        for group in list.iter().filter(|g| !in_ranges(**g, ranges)) {
            let detail = format!("group {group} must be in the ranges: {}", go_ranges(ranges));
            errors.push(FieldError::invalid(path, shown.clone(), detail));
        }
        errors
    }
}

/// The seccomp strategy, from the policy's annotations.
pub(super) struct Seccomp<'a> {
    pub(super) default: &'a str,
    /// The allowed list without `*`, as written.
    pub(super) allowed: Vec<&'a str>,
    pub(super) allow_any: bool,
    /// The allowed annotation, printed as is in messages.
    pub(super) allowed_text: &'a str,
}

impl Seccomp<'_> {
    /// Whether `profile` (an annotation value, `""` for none) may be used: the
    /// error at `path` if not.
    pub(super) fn validate(&self, path: &str, profile: &str) -> Option<FieldError> {
        if !self.allow_any && self.allowed.is_empty() && !profile.is_empty() {
            return Some(FieldError::forbidden(path, "seccomp may not be set"));
        }
        // A policy without an allowed list lets a pod go without a profile.
        let allowed = (self.allowed.is_empty() && profile.is_empty())
            || self.allow_any
            || self.allowed.contains(&profile);
        let detail = format!(
            "{profile} is not an allowed seccomp profile. Valid values are {}",
            self.allowed_text
        );
        (!allowed).then(|| FieldError::forbidden(path, detail))
    }
}

pub(super) fn seccomp_strategy<'a>(
    default: Option<&'a str>,
    allowed: Option<&'a str>,
) -> Seccomp<'a> {
    let listed: Vec<&str> = allowed.map(|a| a.split(',').collect()).unwrap_or_default();
    Seccomp {
        default: default.unwrap_or_default(),
        allow_any: listed.contains(&"*"),
        allowed: listed.into_iter().filter(|p| *p != "*").collect(),
        allowed_text: allowed.unwrap_or_default(),
    }
}

/// The SELinux strategy: Some(options) under MustRunAs, None under RunAsAny.
pub(super) fn se_linux_options(options: Option<&Value>) -> Result<Option<&Value>, String> {
    let rule = options
        .and_then(|o| o.field("rule"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    match rule {
        "RunAsAny" => Ok(None),
        "MustRunAs" => match options.and_then(|o| o.field("seLinuxOptions")) {
            Some(selinux) if selinux.is_object() => Ok(Some(selinux)),
            _ => Err("MustRunAs requires SELinuxOptions".into()),
        },
        other => Err(format!("unrecognized strategy type {other:?}")),
    }
}

/// SELinux levels compare equal when the sensitivity matches and the
/// categories are the same set in any order (`s0:c1,c0` = `s0:c0,c1`).
pub(super) fn equal_levels(expected: &str, actual: &str) -> bool {
    if expected == actual {
        return true;
    }
    let (Some((want_sensitivity, want)), Some((got_sensitivity, got))) =
        (expected.split_once(':'), actual.split_once(':'))
    else {
        return false;
    };
    want_sensitivity == got_sensitivity && categories(want) == categories(got)
}

pub(super) fn categories(list: &str) -> Vec<&str> {
    let mut all: Vec<&str> = list.split(',').collect();
    all.sort_unstable();
    all
}

/// The annotation value the `seccompProfile` field of a security context
/// stands for (`SeccompAnnotationForField`), when the field is set.
pub(super) fn seccomp_field(context: Option<&Value>) -> Option<String> {
    let field = context?.field("seccompProfile").filter(|f| f.is_object())?;
    Some(seccomp_annotation_for_field(field))
}

pub(super) fn seccomp_annotation_for_field(field: &Value) -> String {
    let localhost = field.field("localhostProfile").and_then(Value::as_str);
    match (field.field("type").and_then(Value::as_str), localhost) {
        (Some("Unconfined"), _) => "unconfined".into(),
        (Some("RuntimeDefault"), _) => "runtime/default".into(),
        (Some("Localhost"), Some(profile)) => format!("localhost/{profile}"),
        _ => String::new(),
    }
}

/// The pod's profile: its annotation, else its field.
pub(super) fn pod_seccomp_profile(pod: &Value) -> String {
    let annotated = annotation(pod, SECCOMP_POD).unwrap_or_default();
    if !annotated.is_empty() {
        return annotated.to_string();
    }
    seccomp_field(pod_context(pod)).unwrap_or_default()
}

/// A container's profile: its field, its annotation, the pod's field, the pod's annotation.
pub(super) fn container_seccomp_profile(pod: &Value, container: &Value) -> String {
    if let Some(profile) = seccomp_field(container.field("securityContext")) {
        return profile;
    }
    let key = format!(
        "{SECCOMP_CONTAINER}{}",
        crate::admission::container_name(container)
    );
    if let Some(annotated) = annotation(pod, &key) {
        return annotated.to_string();
    }
    seccomp_field(pod_context(pod))
        .unwrap_or_else(|| annotation(pod, SECCOMP_POD).unwrap_or_default().to_string())
}

pub(super) fn id_ranges(ranges: Option<&Value>) -> Vec<IdRange> {
    let ranges = ranges.and_then(Value::as_array);
    ranges
        .into_iter()
        .flatten()
        .filter_map(|r| {
            Some(IdRange {
                min: r.field("min")?.as_i64()?,
                max: r.field("max")?.as_i64()?,
            })
        })
        .collect()
}

pub(super) fn in_ranges(id: i64, ranges: &[IdRange]) -> bool {
    ranges.iter().any(|r| r.min <= id && id <= r.max)
}

/// `[]policy.IDRange` as `%v` prints it: `[{1000 2000} {3000 3000}]`.
pub(super) fn go_ranges(ranges: &[IdRange]) -> String {
    let shown: Vec<String> = ranges
        .iter()
        .map(|r| format!("{{{} {}}}", r.min, r.max))
        .collect();
    format!("[{}]", shown.join(" "))
}

/// `[]int64` as `%#v` prints it: `[]int64{5, 6}`, `[]int64{}`, `[]int64(nil)`.
pub(super) fn go_int64s(groups: Option<&[i64]>) -> String {
    match groups {
        None => "[]int64(nil)".to_string(),
        Some(groups) => {
            let shown: Vec<String> = groups.iter().map(i64::to_string).collect();
            format!("[]int64{{{}}}", shown.join(", "))
        }
    }
}

/// A capability list as `%#v` prints it; an empty list that is present is `{}`.
pub(super) fn go_capabilities(list: Option<&Value>) -> String {
    match list.and_then(Value::as_array) {
        Some(items) if items.is_empty() => "[]core.Capability{}".to_string(),
        _ => go_string_slice("core.Capability", &strings(list)),
    }
}

/// How `field.Error` prints a nil value.
pub(super) fn go_null() -> String {
    "\"null\"".to_string()
}

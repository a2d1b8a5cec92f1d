//! Field errors as the apiserver prints them (`field.Error` in
//! k8s.io/apimachinery): `<path>: <type>: <value>: <detail>`.

use std::fmt;

use serde_json::Value;

// Go's `%q`, as the apiserver's messages quote values.
pub use crate::gotemplate::format::go_quote;

/// The kind of a field error, with the bad value where the type prints one.
#[derive(Debug, Clone, PartialEq)]
pub enum ErrorType {
    /// `Invalid value: <value>`; the value is printed the Go way (see [`go_value`]).
    Invalid(String),
    /// `Required value`.
    Required,
    /// `Forbidden`.
    Forbidden,
    /// `Duplicate value: <value>`.
    Duplicate(String),
    /// `Unsupported value: <value>`.
    NotSupported(String),
}

/// One field error.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    pub path: String,
    pub kind: ErrorType,
    pub detail: String,
}

impl FieldError {
    pub fn invalid(path: impl Into<String>, value: String, detail: impl Into<String>) -> Self {
        FieldError {
            path: path.into(),
            kind: ErrorType::Invalid(value),
            detail: detail.into(),
        }
    }

    pub fn required(path: impl Into<String>, detail: impl Into<String>) -> Self {
        FieldError {
            path: path.into(),
            kind: ErrorType::Required,
            detail: detail.into(),
        }
    }

    pub fn forbidden(path: impl Into<String>, detail: impl Into<String>) -> Self {
        FieldError {
            path: path.into(),
            kind: ErrorType::Forbidden,
            detail: detail.into(),
        }
    }

    pub fn duplicate(path: impl Into<String>, value: String) -> Self {
        FieldError {
            path: path.into(),
            kind: ErrorType::Duplicate(value),
            detail: String::new(),
        }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.path)?;
        match &self.kind {
            ErrorType::Invalid(value) => write!(f, "Invalid value: {value}")?,
            ErrorType::Required => f.write_str("Required value")?,
            ErrorType::Forbidden => f.write_str("Forbidden")?,
            ErrorType::Duplicate(value) => write!(f, "Duplicate value: {value}")?,
            ErrorType::NotSupported(value) => write!(f, "Unsupported value: {value}")?,
        }
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

/// A bad value printed the way `field.Error` prints it: numbers and booleans
/// bare, strings quoted, a missing (nil) value as `"null"`. Lists print in Go
/// syntax for the element type given, e.g. `[]core.Capability{"NET_RAW"}`;
/// other values print as JSON.
pub fn go_value(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => "\"null\"".to_string(),
        Some(Value::String(s)) => go_quote(s),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => n.to_string(),
        Some(other) => other.to_string(),
    }
}

/// A Go slice literal of strings of type `element`, as `%#v` prints it:
/// `[]core.Capability{"A", "B"}`, or `[]core.Capability(nil)` when empty.
pub fn go_string_slice(element: &str, items: &[&str]) -> String {
    if items.is_empty() {
        return format!("[]{element}(nil)");
    }
    let quoted: Vec<String> = items.iter().map(|s| go_quote(s)).collect();
    format!("[]{element}{{{}}}", quoted.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn errors_print_like_field_error() {
        let e = FieldError::invalid(
            "spec.containers[0].securityContext.privileged",
            go_value(Some(&json!(true))),
            "Privileged containers are not allowed",
        );
        assert_eq!(
            e.to_string(),
            "spec.containers[0].securityContext.privileged: Invalid value: true: Privileged containers are not allowed"
        );
        let e = FieldError::invalid("x.readOnlyRootFilesystem", go_value(None), "may not be nil");
        assert_eq!(
            e.to_string(),
            "x.readOnlyRootFilesystem: Invalid value: \"null\": may not be nil"
        );
        assert_eq!(
            FieldError::required("x.runAsNonRoot", "must be true").to_string(),
            "x.runAsNonRoot: Required value: must be true"
        );
        assert_eq!(
            FieldError::duplicate("spec.containers[1].name", go_quote("p")).to_string(),
            "spec.containers[1].name: Duplicate value: \"p\""
        );
        assert_eq!(
            go_string_slice("core.Capability", &["NET_RAW"]),
            "[]core.Capability{\"NET_RAW\"}"
        );
        assert_eq!(go_string_slice("int64", &[]), "[]int64(nil)");
    }
}

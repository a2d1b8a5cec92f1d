//! Values as Go's templates see them.
//!
//! A template reads Go data: structs (fields by Go name, `.ObjectMeta.Labels`),
//! maps (ranged in key order; a missing key is "no value", or the zero of
//! the map's element type through `index`), slices, strings and numbers.
//! JSON is turned into these two ways: as Go decodes JSON into `any`
//! ([`Value::from_json`]: objects are maps, every number a float64, as in
//! Istio's chart values), or as a typed Kubernetes or proto object
//! ([`Value::from_object`]: objects are structs but for the fields that are
//! maps in Go, such as `labels`, and integers stay integers).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::rc::Rc;

use serde_json::Value as Json;

pub use super::sprig::dates::GoTime;
pub use super::sprig::semver::Version;

/// A value in a template's evaluation.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// No value: a missing map key, a nil interface (printed `<no value>`).
    Nil,
    /// The zero value of a typed field the data leaves out (an absent
    /// string, list or map of a Kubernetes object): empty, and false.
    Zero,
    Bool(bool),
    /// A Go `int`.
    Int(i64),
    /// A Go `int64`, what Sprig's integer arithmetic answers: printed and
    /// compared as an `int`, but Go's type checks tell the two apart.
    Int64(i64),
    Float(f64),
    Str(Rc<str>),
    List(Rc<Vec<Value>>),
    Map(Rc<GoMap>),
    Struct(Rc<GoStruct>),
    /// A Go `time.Time` (Sprig's `toDate`, `dateModify`).
    Time(Rc<GoTime>),
    /// A `*semver.Version` (Sprig's `semver`).
    Version(Rc<Version>),
}

/// A Go map with string keys.
#[derive(Debug, Clone, PartialEq)]
pub struct GoMap {
    pub entries: BTreeMap<String, Value>,
    /// What `index` gives for a missing key: the element type's zero
    /// (`Zero` for `map[string]string`, `Nil` for `map[string]any`).
    pub missing: Box<Value>,
}

/// A Go struct: its fields in declaration order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GoStruct {
    pub fields: Vec<Field>,
}

/// A struct field: its Go name, its JSON name, its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub go: String,
    pub json: String,
    pub value: Value,
    /// A proto field at its default, which JSON leaves out (an enum's
    /// first value): read by the template, not written by `toJson`.
    pub default: bool,
}

/// Fields of Kubernetes and proxy-config objects that are maps in Go
/// (every other JSON object in such an object is a struct).
const MAP_FIELDS: &[&str] = &[
    "annotations",
    "labels",
    "nodeSelector",
    "matchLabels",
    "limits",
    "requests",
    "data",
    "binaryData",
    "proxyMetadata",
    "runtimeValues",
];

impl Value {
    /// Whether a string in this value (keys included) is one `watched` picks.
    pub fn holds(&self, watched: &dyn Fn(&str) -> bool) -> bool {
        match self {
            Value::Str(s) => watched(s),
            Value::List(items) => items.iter().any(|v| v.holds(watched)),
            Value::Map(map) => {
                map.entries
                    .iter()
                    .any(|(k, v)| watched(k) || v.holds(watched))
                    || map.missing.holds(watched)
            }
            Value::Struct(s) => s.fields.iter().any(|f| f.value.holds(watched)),
            _ => false,
        }
    }

    /// Whether a map in this value has a key `watched` picks.
    pub fn keyed_by(&self, watched: &dyn Fn(&str) -> bool) -> bool {
        match self {
            Value::List(items) => items.iter().any(|v| v.keyed_by(watched)),
            Value::Map(map) => map
                .entries
                .iter()
                .any(|(k, v)| watched(k) || v.keyed_by(watched)),
            Value::Struct(s) => s.fields.iter().any(|f| f.value.keyed_by(watched)),
            _ => false,
        }
    }

    /// This value with each string (keys included) that `touched` picks
    /// passed through `map` (the rest shared, not copied); `None` when `map`
    /// gives none for one.
    pub fn map_strings(
        &self,
        touched: &dyn Fn(&str) -> bool,
        map: &dyn Fn(&str) -> Option<String>,
    ) -> Option<Value> {
        let text = |s: &str| match touched(s) {
            true => map(s),
            false => Some(s.to_string()),
        };
        Some(match self {
            Value::Str(s) if touched(s) => Value::str(map(s)?),
            Value::List(_) | Value::Map(_) | Value::Struct(_) if !self.holds(touched) => {
                self.clone()
            }
            Value::List(items) => Value::List(Rc::new(
                items
                    .iter()
                    .map(|v| v.map_strings(touched, map))
                    .collect::<Option<_>>()?,
            )),
            Value::Map(m) => {
                let entries: BTreeMap<String, Value> = m
                    .entries
                    .iter()
                    .map(|(k, v)| Some((text(k)?, v.map_strings(touched, map)?)))
                    .collect::<Option<_>>()?;
                // Two keys that come out the same are not the same map.
                if entries.len() != m.entries.len() {
                    return None;
                }
                Value::Map(Rc::new(GoMap {
                    entries,
                    missing: Box::new(m.missing.map_strings(touched, map)?),
                }))
            }
            Value::Struct(s) => Value::Struct(Rc::new(GoStruct {
                fields: s
                    .fields
                    .iter()
                    .map(|f| {
                        Some(Field {
                            value: f.value.map_strings(touched, map)?,
                            ..f.clone()
                        })
                    })
                    .collect::<Option<_>>()?,
            })),
            other => other.clone(),
        })
    }

    pub fn str(s: impl Into<Rc<str>>) -> Value {
        Value::Str(s.into())
    }

    /// A Go `map[string]string`.
    pub fn string_map<'a>(entries: impl IntoIterator<Item = (&'a str, &'a str)>) -> Value {
        Value::Map(Rc::new(GoMap {
            entries: entries
                .into_iter()
                .map(|(k, v)| (k.to_string(), Value::str(v)))
                .collect(),
            missing: Box::new(Value::Zero),
        }))
    }

    /// A struct with these fields (JSON names: the Go name, first letter lowered).
    pub fn structure(fields: Vec<(&str, Value)>) -> Value {
        Value::Struct(Rc::new(GoStruct {
            fields: fields
                .into_iter()
                .map(|(go, value)| Field {
                    go: go.to_string(),
                    json: json_name(go),
                    value,
                    default: false,
                })
                .collect(),
        }))
    }

    /// This struct with `go` (JSON `json`) set to `value` when it has no
    /// such field: a proto default, read but not written.
    pub fn with_default(self, go: &str, json: &str, value: Value) -> Value {
        match self {
            Value::Struct(s) if s.fields.iter().all(|f| f.json != json) => {
                let mut s = (*s).clone();
                s.fields.push(Field {
                    go: go.to_string(),
                    json: json.to_string(),
                    value,
                    default: true,
                });
                Value::Struct(Rc::new(s))
            }
            other => other,
        }
    }

    /// JSON as Go decodes it into `any`: maps, float64 numbers.
    pub fn from_json(json: &Json) -> Value {
        match json {
            Json::Null => Value::Nil,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => Value::Float(n.as_f64().unwrap_or(0.0)),
            Json::String(s) => Value::str(s.as_str()),
            Json::Array(items) => {
                Value::List(Rc::new(items.iter().map(Value::from_json).collect()))
            }
            Json::Object(map) => Value::Map(Rc::new(GoMap {
                entries: map
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::from_json(v)))
                    .collect(),
                missing: Box::new(Value::Nil),
            })),
        }
    }

    /// JSON as a typed object: structs, but for the fields Go declares as
    /// maps; integers stay integers.
    pub fn from_object(json: &Json) -> Value {
        match json {
            Json::Null => Value::Zero,
            Json::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(n.as_f64().unwrap_or(0.0)),
            },
            Json::Array(items) => {
                Value::List(Rc::new(items.iter().map(Value::from_object).collect()))
            }
            Json::Object(map) => Value::Struct(Rc::new(GoStruct {
                fields: map
                    .iter()
                    .map(|(key, value)| Field {
                        go: go_name(key),
                        json: key.clone(),
                        value: match value {
                            Json::Object(entries) if MAP_FIELDS.contains(&key.as_str()) => {
                                Value::Map(Rc::new(GoMap {
                                    entries: entries
                                        .iter()
                                        .map(|(k, v)| (k.clone(), Value::from_object(v)))
                                        .collect(),
                                    missing: Box::new(Value::Zero),
                                }))
                            }
                            other => Value::from_object(other),
                        },
                        default: false,
                    })
                    .collect(),
            })),
            other => Value::from_json(other),
        }
    }

    /// Go's truth: false, 0, nil and empty things are false; structs are true.
    pub fn truthy(&self) -> bool {
        match self {
            Value::Nil | Value::Zero => false,
            Value::Bool(b) => *b,
            Value::Int(i) | Value::Int64(i) => *i != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::List(items) => !items.is_empty(),
            Value::Map(map) => !map.entries.is_empty(),
            Value::Struct(_) | Value::Time(_) | Value::Version(_) => true,
        }
    }

    /// Sprig's `empty`: as Go's truth, but a struct is empty when all its
    /// fields are.
    pub fn is_empty(&self) -> bool {
        match self {
            Value::Struct(s) => s.fields.iter().all(|f| f.value.is_empty()),
            other => !other.truthy(),
        }
    }

    /// The Go type's name, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Nil => "nil",
            Value::Zero => "zero value",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Int64(_) => "int64",
            Value::Float(_) => "float64",
            Value::Str(_) => "string",
            Value::List(_) => "slice",
            Value::Map(_) => "map",
            Value::Struct(_) => "struct",
            Value::Time(_) => "time.Time",
            Value::Version(_) => "*semver.Version",
        }
    }

    /// The value as a string argument (`Zero` and `Nil` are empty).
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            Value::Zero | Value::Nil => Some(""),
            _ => None,
        }
    }

    /// The value as an integer argument.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) | Value::Int64(i) => Some(*i),
            Value::Float(f) if f.fract() == 0.0 => Some(*f as i64),
            Value::Zero => Some(0),
            _ => None,
        }
    }

    /// A struct's field, by Go name (`GetName`, proto's nil-safe getter, too).
    pub fn field(&self, name: &str) -> Option<&Value> {
        let Value::Struct(s) = self else {
            return None;
        };
        let found = |name: &str| {
            s.fields
                .iter()
                .find(|f| f.go == name)
                .or_else(|| s.fields.iter().find(|f| f.go.eq_ignore_ascii_case(name)))
                .map(|f| &f.value)
        };
        found(name).or_else(|| name.strip_prefix("Get").and_then(found))
    }

    /// A method without arguments of a Go value the template calls as a
    /// field (`(semver "1.2.3").Major`, `(toDate …).Year`).
    pub fn method(&self, name: &str) -> Option<Value> {
        match self {
            Value::Version(v) => Some(match name {
                "Major" => Value::Int64(v.major as i64),
                "Minor" => Value::Int64(v.minor as i64),
                "Patch" => Value::Int64(v.patch as i64),
                "Prerelease" => Value::str(v.pre.as_str()),
                "Metadata" => Value::str(v.metadata.as_str()),
                "Original" => Value::str(v.original.as_str()),
                "String" => Value::str(v.to_string()),
                _ => return None,
            }),
            Value::Time(t) => t.method(name),
            _ => None,
        }
    }

    /// The text the template prints for the value: Go's `%v`.
    pub fn print(&self) -> String {
        let mut out = String::new();
        self.write_go(&mut out);
        out
    }

    fn write_go(&self, out: &mut String) {
        match self {
            Value::Nil => out.push_str("<nil>"),
            Value::Zero => {}
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) | Value::Int64(i) => {
                let _ = write!(out, "{i}");
            }
            Value::Time(t) => out.push_str(&t.to_string()),
            Value::Version(v) => out.push_str(&v.to_string()),
            Value::Float(f) => out.push_str(&format_float_g(*f)),
            Value::Str(s) => out.push_str(s),
            Value::List(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    item.write_go(out);
                }
                out.push(']');
            }
            Value::Map(map) => {
                out.push_str("map[");
                for (i, (key, value)) in map.entries.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    out.push_str(key);
                    out.push(':');
                    value.write_go(out);
                }
                out.push(']');
            }
            Value::Struct(s) => {
                out.push('{');
                for (i, field) in s.fields.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    field.value.write_go(out);
                }
                out.push('}');
            }
        }
    }

    /// The value as JSON (`toJson`, `toYaml`): maps with their keys, structs
    /// with their JSON names.
    pub fn to_json(&self) -> Json {
        match self {
            Value::Nil | Value::Zero => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Int(i) | Value::Int64(i) => Json::from(*i),
            Value::Time(t) => Json::String(t.rfc3339()),
            Value::Version(v) => Json::String(v.to_string()),
            Value::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
            Value::Str(s) => Json::String(s.to_string()),
            Value::List(items) => Json::Array(items.iter().map(Value::to_json).collect()),
            Value::Map(map) => Json::Object(
                map.entries
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_json()))
                    .collect(),
            ),
            Value::Struct(s) => Json::Object(
                s.fields
                    .iter()
                    .filter(|f| !f.default && !matches!(f.value, Value::Zero))
                    .map(|f| (f.json.clone(), f.value.to_json()))
                    .collect(),
            ),
        }
    }
}

/// A JSON field's Go name: `serviceAccountName` → `ServiceAccountName`,
/// `apiVersion` → `APIVersion`, `metadata` → `ObjectMeta`.
pub fn go_name(json: &str) -> String {
    match json {
        "metadata" => "ObjectMeta".to_string(),
        "apiVersion" => "APIVersion".to_string(),
        _ => {
            let mut chars = json.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        }
    }
}

/// A Go field's JSON name: the first letter lowered.
fn json_name(go: &str) -> String {
    let mut chars = go.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_ascii_lowercase().to_string() + chars.as_str()
    })
}

/// A float as Go's `%v` prints it: the shortest digits that read back,
/// in exponent form when the exponent is below -4 or at least 6 (`%g`).
pub fn format_float_g(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_string();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.to_string();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    // Rust's `{:e}` gives the shortest digits: "1.5e6".
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    } else {
        format!("{f}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_print_as_go_prints_them() {
        assert_eq!(format_float_g(15.0), "15");
        assert_eq!(format_float_g(0.5), "0.5");
        assert_eq!(format_float_g(1e6), "1e+06");
        assert_eq!(format_float_g(123456.0), "123456");
        assert_eq!(format_float_g(0.00001), "1e-05");
        assert_eq!(format_float_g(-2.5), "-2.5");
    }

    #[test]
    fn json_as_any_gives_maps_and_floats() {
        let v = Value::from_json(&json!({"b": 1, "a": [true, "x"]}));
        assert_eq!(v.print(), "map[a:[true x] b:1]");
        let Value::Map(map) = &v else { panic!() };
        assert!(matches!(map.entries["b"], Value::Float(_)));
        assert!(matches!(*map.missing, Value::Nil));
    }

    #[test]
    fn typed_objects_are_structs_with_go_names_and_map_fields() {
        let pod = Value::from_object(&json!({
            "apiVersion": "v1",
            "metadata": {"labels": {"app": "x"}},
            "spec": {"serviceAccountName": "sa", "containers": [{"name": "c", "ports": [{"containerPort": 80}]}]}
        }));
        assert_eq!(pod.field("APIVersion").unwrap().print(), "v1");
        let meta = pod.field("ObjectMeta").unwrap();
        assert!(matches!(meta.field("Labels"), Some(Value::Map(_))));
        let spec = pod.field("Spec").unwrap();
        assert_eq!(spec.field("ServiceAccountName").unwrap().print(), "sa");
        assert_eq!(spec.field("GetServiceAccountName").unwrap().print(), "sa");
        assert_eq!(
            pod.to_json()["spec"]["containers"][0]["ports"][0]["containerPort"],
            80
        );
    }

    #[test]
    fn truth_is_go_truth() {
        assert!(!Value::Zero.truthy());
        assert!(!Value::str("").truthy());
        assert!(Value::structure(vec![]).truthy());
        assert!(Value::structure(vec![]).is_empty());
        assert!(!Value::Float(0.0).truthy());
    }
}

//! Sprig's reflection: `typeOf`, `kindOf` and their tests, `deepEqual`;
//! and the Go type names and kinds the other modules' messages use.

use super::super::funcs::{arg, arity, string};
use super::super::value::Value;
use super::Result;
use crate::gotemplate::Func;

pub const FUNCS: &[(&str, Func)] = &[
    ("typeOf", type_of),
    ("typeIs", type_is),
    ("typeIsLike", type_is_like),
    ("kindOf", kind_of_func),
    ("kindIs", kind_is),
    ("deepEqual", deep_equal_func),
];

/// The Go type `%T` names for a value.
pub fn go_type(value: &Value) -> String {
    match value {
        Value::Nil | Value::Zero => "<nil>",
        Value::Bool(_) => "bool",
        Value::Int(_) => "int",
        Value::Int64(_) => "int64",
        Value::Float(_) => "float64",
        Value::Str(_) => "string",
        Value::List(_) => "[]interface {}",
        Value::Map(map) if matches!(*map.missing, Value::Zero) => "map[string]string",
        Value::Map(_) => "map[string]interface {}",
        Value::Struct(_) => "struct {}",
        Value::Time(_) => "time.Time",
        Value::Version(_) => "*semver.Version",
    }
    .to_string()
}

/// The Go kind (`reflect.Kind`) of a value.
pub fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Nil | Value::Zero => "invalid",
        Value::Bool(_) => "bool",
        Value::Int(_) => "int",
        Value::Int64(_) => "int64",
        Value::Float(_) => "float64",
        Value::Str(_) => "string",
        Value::List(_) => "slice",
        Value::Map(_) => "map",
        Value::Struct(_) | Value::Time(_) => "struct",
        Value::Version(_) => "ptr",
    }
}

/// Go's `reflect.DeepEqual` of two interface values: the same type, and
/// equal values all the way down.
pub fn deep_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| deep_equal(p, q))
        }
        (Value::Map(x), Value::Map(y)) => {
            go_type(a) == go_type(b)
                && x.entries.len() == y.entries.len()
                && x.entries
                    .iter()
                    .all(|(k, v)| y.entries.get(k).is_some_and(|w| deep_equal(v, w)))
        }
        (Value::Float(x), Value::Float(y)) => x == y,
        (Value::Zero, Value::Nil) | (Value::Nil, Value::Zero) => true,
        _ => a == b,
    }
}

fn type_of(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(Value::str(go_type(arg(args, 0))))
}

fn type_is(args: &[Value]) -> Result {
    arity(args, 2)?;
    Ok(Value::Bool(string(args, 0)? == go_type(arg(args, 1))))
}

fn type_is_like(args: &[Value]) -> Result {
    arity(args, 2)?;
    let (target, actual) = (string(args, 0)?, go_type(arg(args, 1)));
    Ok(Value::Bool(
        target == actual || actual.strip_prefix('*') == Some(target),
    ))
}

fn kind_of_func(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(Value::str(kind_of(arg(args, 0))))
}

fn kind_is(args: &[Value]) -> Result {
    arity(args, 2)?;
    Ok(Value::Bool(string(args, 0)? == kind_of(arg(args, 1))))
}

fn deep_equal_func(args: &[Value]) -> Result {
    arity(args, 2)?;
    Ok(Value::Bool(deep_equal(arg(args, 0), arg(args, 1))))
}

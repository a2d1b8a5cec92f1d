//! Sprig's defaults and flow: `default`, `empty`, `coalesce`, `all`,
//! `any`, `ternary`, `fail`.

use super::super::funcs::{arg, arity, string};
use super::super::value::Value;
use super::Result;
use super::reflect::go_type;
use crate::gotemplate::Func;

pub const FUNCS: &[(&str, Func)] = &[
    ("default", default),
    ("empty", empty),
    ("coalesce", coalesce),
    ("all", all),
    ("any", any),
    ("ternary", ternary),
    ("fail", fail),
];

/// `default D GIVEN`: GIVEN unless it is empty (or missing).
fn default(args: &[Value]) -> Result {
    let Some((fallback, given)) = args.split_first() else {
        return arity(args, 1).map(|()| Value::Nil);
    };
    Ok(match given.first() {
        Some(value) if !value.is_empty() => value.clone(),
        _ => fallback.clone(),
    })
}

fn empty(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(Value::Bool(arg(args, 0).is_empty()))
}

fn coalesce(args: &[Value]) -> Result {
    Ok(args
        .iter()
        .find(|v| !v.is_empty())
        .cloned()
        .unwrap_or(Value::Nil))
}

fn all(args: &[Value]) -> Result {
    Ok(Value::Bool(args.iter().all(|v| !v.is_empty())))
}

fn any(args: &[Value]) -> Result {
    Ok(Value::Bool(args.iter().any(|v| !v.is_empty())))
}

/// `ternary TRUE FALSE CONDITION`; the condition must be a boolean.
fn ternary(args: &[Value]) -> Result {
    arity(args, 3)?;
    let condition = match arg(args, 2) {
        Value::Bool(b) => *b,
        Value::Zero => false,
        Value::Nil => return Err("invalid value; expected bool".to_string()),
        other => {
            return Err(format!(
                "wrong type for value; expected bool; got {}",
                go_type(other)
            ));
        }
    };
    Ok(arg(args, if condition { 0 } else { 1 }).clone())
}

fn fail(args: &[Value]) -> Result {
    arity(args, 1)?;
    Err(string(args, 0)?.to_string())
}

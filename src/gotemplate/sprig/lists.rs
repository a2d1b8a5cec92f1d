//! Sprig's list functions. Every one but `list` takes any list (Go's
//! slices and arrays) and answers a new one; what is not a list is refused
//! with Sprig's message, which names its kind.

use super::super::exec::list;
use super::super::funcs::{arg, arity, int};
use super::super::value::Value;
use super::reflect::{deep_equal, kind_of};
use super::strings::string_items;
use super::{NIL_DEREFERENCE, Result, float_to_int, items, to_int64};
use crate::gotemplate::Func;

pub const FUNCS: &[(&str, Func)] = &[
    ("list", make_list),
    ("tuple", make_list),
    ("append", push),
    ("push", push),
    ("mustAppend", push),
    ("mustPush", push),
    ("prepend", prepend),
    ("mustPrepend", prepend),
    ("first", first),
    ("mustFirst", first),
    ("rest", rest),
    ("mustRest", rest),
    ("last", last),
    ("mustLast", last),
    ("initial", initial),
    ("mustInitial", initial),
    ("reverse", reverse),
    ("mustReverse", reverse),
    ("uniq", uniq),
    ("mustUniq", uniq),
    ("without", without),
    ("mustWithout", without),
    ("has", has),
    ("mustHas", has),
    ("slice", slice),
    ("mustSlice", slice),
    ("concat", concat),
    ("chunk", chunk),
    ("mustChunk", chunk),
    ("compact", compact),
    ("mustCompact", compact),
    ("sortAlpha", sort_alpha),
    ("until", until),
    ("untilStep", until_step),
    ("seq", seq),
];

/// Lists longer than this are refused (`until 1000000000`): Go would try.
const MAX_ITEMS: i64 = 1 << 24;

fn make_list(args: &[Value]) -> Result {
    Ok(list(args.to_vec()))
}

fn push(args: &[Value]) -> Result {
    arity(args, 2)?;
    let mut all = items(arg(args, 0), "Cannot push on type")?.to_vec();
    all.push(arg(args, 1).clone());
    Ok(list(all))
}

fn prepend(args: &[Value]) -> Result {
    arity(args, 2)?;
    let mut all = vec![arg(args, 1).clone()];
    all.extend_from_slice(items(arg(args, 0), "Cannot prepend on type")?);
    Ok(list(all))
}

fn first(args: &[Value]) -> Result {
    arity(args, 1)?;
    let all = items(arg(args, 0), "Cannot find first on type")?;
    Ok(all.first().cloned().unwrap_or(Value::Nil))
}

fn last(args: &[Value]) -> Result {
    arity(args, 1)?;
    let all = items(arg(args, 0), "Cannot find last on type")?;
    Ok(all.last().cloned().unwrap_or(Value::Nil))
}

fn rest(args: &[Value]) -> Result {
    arity(args, 1)?;
    let all = items(arg(args, 0), "Cannot find rest on type")?;
    Ok(list(all.get(1..).unwrap_or_default().to_vec()))
}

fn initial(args: &[Value]) -> Result {
    arity(args, 1)?;
    let all = items(arg(args, 0), "Cannot find initial on type")?;
    let n = all.len().saturating_sub(1);
    Ok(list(all.get(..n).unwrap_or_default().to_vec()))
}

fn reverse(args: &[Value]) -> Result {
    arity(args, 1)?;
    let all = items(arg(args, 0), "Cannot find reverse on type")?;
    Ok(list(all.iter().rev().cloned().collect()))
}

fn uniq(args: &[Value]) -> Result {
    arity(args, 1)?;
    let mut kept: Vec<Value> = Vec::new();
    for item in items(arg(args, 0), "Cannot find uniq on type")? {
        if !kept.iter().any(|k| deep_equal(k, item)) {
            kept.push(item.clone());
        }
    }
    Ok(list(kept))
}

fn without(args: &[Value]) -> Result {
    let Some((from, omitted)) = args.split_first() else {
        return arity(args, 1).map(|()| Value::Nil);
    };
    let all = items(from, "Cannot find without on type")?;
    Ok(list(
        all.iter()
            .filter(|item| !omitted.iter().any(|o| deep_equal(o, item)))
            .cloned()
            .collect(),
    ))
}

fn has(args: &[Value]) -> Result {
    arity(args, 2)?;
    let (needle, haystack) = (arg(args, 0), arg(args, 1));
    if matches!(haystack, Value::Nil) {
        return Ok(Value::Bool(false));
    }
    let all = items(haystack, "Cannot find has on type")?;
    Ok(Value::Bool(all.iter().any(|item| deep_equal(needle, item))))
}

fn slice(args: &[Value]) -> Result {
    let Some((from, bounds)) = args.split_first() else {
        return arity(args, 1).map(|()| Value::Nil);
    };
    let all = match from {
        Value::List(all) => all,
        Value::Zero => return Ok(Value::Nil),
        Value::Nil => return Err(NIL_DEREFERENCE.to_string()),
        other => {
            return Err(format!(
                "list should be type of slice or array but {}",
                kind_of(other)
            ));
        }
    };
    if all.is_empty() {
        return Ok(Value::Nil);
    }
    let len = all.len() as i64;
    let start = bounds.first().map_or(0, to_int64);
    let end = if bounds.len() < 2 {
        len
    } else {
        bounds.get(1).map_or(0, to_int64)
    };
    if start < 0 || end < start || end > len {
        return Err("reflect.Value.Slice: slice index out of bounds".to_string());
    }
    Ok(list(
        all.get(start as usize..end as usize)
            .unwrap_or_default()
            .to_vec(),
    ))
}

fn concat(args: &[Value]) -> Result {
    let mut all = Vec::new();
    for value in args {
        match value {
            Value::List(items) => all.extend_from_slice(items),
            Value::Zero => {}
            Value::Nil => return Err(NIL_DEREFERENCE.to_string()),
            other => return Err(format!("Cannot concat type {} as list", kind_of(other))),
        }
    }
    Ok(list(all))
}

fn chunk(args: &[Value]) -> Result {
    arity(args, 2)?;
    let size = int(args, 0)?;
    let all = items(arg(args, 1), "Cannot chunk type")?;
    let len = all.len() as i64;
    // Sprig counts the chunks in floating point; its quirks with sizes of
    // zero or less are kept.
    let count = float_to_int(((len - 1) as f64 / size as f64).floor() + 1.0);
    if count < 0 {
        return Err("runtime error: makeslice: len out of range".to_string());
    }
    if count > MAX_ITEMS {
        return Err("chunk: too many chunks".to_string());
    }
    let mut chunks = Vec::new();
    for i in 0..count {
        let mut length = size;
        if i == count - 1 {
            length = float_to_int((len as f64 % size as f64).floor());
            if length == 0 {
                length = size;
            }
        }
        if length < 0 {
            return Err("runtime error: makeslice: len out of range".to_string());
        }
        let mut one = Vec::new();
        for j in 0..length {
            let at = i * size + j;
            let item = usize::try_from(at)
                .ok()
                .and_then(|at| all.get(at))
                .ok_or_else(|| "reflect: slice index out of range".to_string())?;
            one.push(item.clone());
        }
        chunks.push(list(one));
    }
    Ok(list(chunks))
}

fn compact(args: &[Value]) -> Result {
    arity(args, 1)?;
    let all = items(arg(args, 0), "Cannot compact on type")?;
    Ok(list(
        all.iter().filter(|v| !v.is_empty()).cloned().collect(),
    ))
}

fn sort_alpha(args: &[Value]) -> Result {
    arity(args, 1)?;
    let mut strings = match arg(args, 0) {
        value @ (Value::List(_) | Value::Zero) => string_items(value),
        other => vec![other.print()],
    };
    strings.sort();
    Ok(list(strings.into_iter().map(Value::str).collect()))
}

/// The integers from `start` toward `stop` (not reaching it) by `step`;
/// none when the step goes the other way or is zero.
fn counted(start: i64, stop: i64, step: i64) -> std::result::Result<Vec<i64>, String> {
    let forward = stop >= start;
    if (forward && step <= 0) || (!forward && step >= 0) {
        return Ok(Vec::new());
    }
    let span = (i128::from(stop) - i128::from(start)).unsigned_abs();
    let count = span.div_ceil(i128::from(step).unsigned_abs());
    if count > MAX_ITEMS as u128 {
        return Err(format!("a list of {count} numbers is too long"));
    }
    Ok((0..count as i64).map(|i| start + i * step).collect())
}

fn ints(numbers: Vec<i64>) -> Value {
    list(numbers.into_iter().map(Value::Int).collect())
}

fn until(args: &[Value]) -> Result {
    arity(args, 1)?;
    let count = int(args, 0)?;
    let step = if count < 0 { -1 } else { 1 };
    Ok(ints(counted(0, count, step)?))
}

fn until_step(args: &[Value]) -> Result {
    arity(args, 3)?;
    Ok(ints(counted(int(args, 0)?, int(args, 1)?, int(args, 2)?)?))
}

fn seq(args: &[Value]) -> Result {
    let params = (0..args.len())
        .map(|i| int(args, i))
        .collect::<std::result::Result<Vec<i64>, String>>()?;
    let numbers = match params.as_slice() {
        [end] => {
            let step = if *end < 1 { -1 } else { 1 };
            counted(1, end.saturating_add(step), step)?
        }
        [start, end] => {
            let step = if end < start { -1 } else { 1 };
            counted(*start, end.saturating_add(step), step)?
        }
        [start, step, end] => {
            let increment = if end < start {
                if *step > 0 {
                    return Ok(Value::str(""));
                }
                -1
            } else {
                1
            };
            counted(*start, end.saturating_add(increment), *step)?
        }
        _ => Vec::new(),
    };
    let text: Vec<String> = numbers.iter().map(i64::to_string).collect();
    Ok(Value::str(text.join(" ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints_of(f: Func, args: &[i64]) -> String {
        let args: Vec<Value> = args.iter().map(|&i| Value::Int(i)).collect();
        f(&args).unwrap().print()
    }

    #[test]
    fn counting_follows_sprig() {
        assert_eq!(ints_of(until, &[3]), "[0 1 2]");
        assert_eq!(ints_of(until, &[-3]), "[0 -1 -2]");
        assert_eq!(ints_of(until_step, &[0, 10, 3]), "[0 3 6 9]");
        assert_eq!(ints_of(until_step, &[10, 0, -4]), "[10 6 2]");
        assert_eq!(ints_of(until_step, &[0, 10, -1]), "[]");
        assert_eq!(ints_of(seq, &[3]), "1 2 3");
        assert_eq!(ints_of(seq, &[0]), "1 0");
        assert_eq!(ints_of(seq, &[5, 3]), "5 4 3");
        assert_eq!(ints_of(seq, &[1, 2, 6]), "1 3 5");
        assert_eq!(ints_of(seq, &[6, -2, 1]), "6 4 2");
        assert_eq!(ints_of(seq, &[6, 2, 1]), "");
    }

    #[test]
    fn chunks_keep_sprig_arithmetic() {
        let three = list(vec![Value::Int(1), Value::Int(2), Value::Int(3)]);
        let out = chunk(&[Value::Int(2), three.clone()]).unwrap();
        assert_eq!(out.print(), "[[1 2] [3]]");
        assert!(chunk(&[Value::Int(0), three]).is_err());
    }
}

//! `{{name}}` placeholders in profile strings.
//!
//! Deliberately tiny: a profile only needs to drop values in, never to branch
//! or loop. A string that is exactly one placeholder takes the value's own type,
//! so `runAsUser: "{{values.proxyUID}}"` stays a number.

use serde_json::Value;

/// Fill every placeholder in `value`, looking names up with `lookup`.
/// Fails with the first name `lookup` does not know.
pub fn render(value: &Value, lookup: &dyn Fn(&str) -> Option<Value>) -> Result<Value, String> {
    Ok(match value {
        Value::String(s) => render_str(s, lookup)?,
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| render(item, lookup))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => {
            let mut out = serde_json::Map::with_capacity(map.len());
            for (k, v) in map {
                let key = match render_str(k, lookup)? {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                out.insert(key, render(v, lookup)?);
            }
            Value::Object(out)
        }
        other => other.clone(),
    })
}

fn render_str(s: &str, lookup: &dyn Fn(&str) -> Option<Value>) -> Result<Value, String> {
    if !s.contains("{{") {
        return Ok(Value::String(s.to_string()));
    }
    let mut out = String::new();
    let mut rest = s;
    while let Some(open) = rest.find("{{") {
        let Some(close) = rest[open..].find("}}") else {
            return Err(format!("unclosed placeholder in {s:?}"));
        };
        let name = rest[open + 2..open + close].trim();
        let value =
            lookup(name).ok_or_else(|| format!("unknown placeholder {{{{{name}}}}} in {s:?}"))?;
        if open == 0 && open + close + 2 == rest.len() && out.is_empty() {
            return Ok(value);
        }
        out.push_str(&rest[..open]);
        match value {
            Value::String(v) => out.push_str(&v),
            other => out.push_str(&other.to_string()),
        }
        rest = &rest[open + close + 2..];
    }
    out.push_str(rest);
    Ok(Value::String(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lookup(name: &str) -> Option<Value> {
        match name {
            "values.uid" => Some(json!(2102)),
            "values.ns" => Some(json!("linkerd")),
            _ => None,
        }
    }

    #[test]
    fn fills_strings_and_keeps_types() {
        let got = render(
            &json!({"a": "{{values.uid}}", "b": "svc.{{ values.ns }}:{{values.uid}}", "k-{{values.ns}}": [1]}),
            &lookup,
        )
        .expect("renders");
        assert_eq!(
            got,
            json!({"a": 2102, "b": "svc.linkerd:2102", "k-linkerd": [1]})
        );
    }

    #[test]
    fn unknown_names_are_errors() {
        let err = render(&json!("{{values.nope}}"), &lookup).expect_err("unknown");
        assert!(err.contains("values.nope"), "{err}");
        assert!(render(&json!("{{values.ns"), &lookup).is_err());
    }
}

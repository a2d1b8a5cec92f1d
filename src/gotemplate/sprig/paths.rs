//! Sprig's paths: `base`, `dir`, `clean`, `ext`, `isAbs` (Go's `path`,
//! slash-separated) and their `os` forms (Go's `path/filepath`, the same
//! on the systems the tool runs on).

use super::super::funcs::{arity, string};
use super::super::value::Value;
use super::Result;
use crate::gotemplate::Func;

pub const FUNCS: &[(&str, Func)] = &[
    ("base", base),
    ("dir", dir),
    ("clean", clean),
    ("ext", ext),
    ("isAbs", is_abs),
    ("osBase", base),
    ("osDir", dir),
    ("osClean", clean),
    ("osExt", ext),
    ("osIsAbs", is_abs),
];

/// Go's `path.Clean`: the shortest path naming the same file, by
/// dropping `.`, extra slashes, and `name/..`.
pub fn clean_path(path: &str) -> String {
    if path.is_empty() {
        return ".".to_string();
    }
    let rooted = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|p| *p != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            name => parts.push(name),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_string(),
        (false, false) => joined,
    }
}

/// Go's `path.Base`: the last element, trailing slashes dropped.
pub fn base_name(path: &str) -> String {
    if path.is_empty() {
        return ".".to_string();
    }
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return "/".to_string();
    }
    trimmed.rsplit('/').next().unwrap_or(trimmed).to_string()
}

fn one_string(args: &[Value]) -> std::result::Result<&str, String> {
    arity(args, 1)?;
    string(args, 0)
}

fn base(args: &[Value]) -> Result {
    Ok(Value::str(base_name(one_string(args)?)))
}

fn dir(args: &[Value]) -> Result {
    let path = one_string(args)?;
    let cut = path.rfind('/').map_or(0, |i| i + 1);
    Ok(Value::str(clean_path(super::head(path, cut))))
}

fn clean(args: &[Value]) -> Result {
    Ok(Value::str(clean_path(one_string(args)?)))
}

fn ext(args: &[Value]) -> Result {
    let path = one_string(args)?;
    let last = path.rsplit('/').next().unwrap_or(path);
    Ok(Value::str(
        last.rfind('.').map_or("", |i| super::tail(last, i)),
    ))
}

fn is_abs(args: &[Value]) -> Result {
    Ok(Value::Bool(one_string(args)?.starts_with('/')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_clean_as_go_cleans_them() {
        for (given, want) in [
            ("", "."),
            ("a//b/./c/..", "a/b"),
            ("/../a", "/a"),
            ("../../a", "../../a"),
            ("a/../..", ".."),
            ("/", "/"),
        ] {
            assert_eq!(clean_path(given), want, "{given}");
        }
        assert_eq!(base_name("a/b/"), "b");
        assert_eq!(base_name("///"), "/");
    }
}

//! Sprig's semantic versions: `semver` reads one (leniently: `v1.2` is
//! 1.2.0), `semverCompare` checks one against a constraint (`>= 1.2, <
//! 2`, `^1.2`, `~1.2.3`, `1.2.x`, `1.2 - 1.4`, `a || b`), with the rules
//! of the semver library Sprig uses: a prerelease version satisfies only a
//! constraint that names a prerelease.

use std::cmp::Ordering;
use std::fmt;
use std::rc::Rc;
use std::sync::LazyLock;

use regex::Regex;

use super::super::funcs::{arity, string};
use super::super::value::Value;
use super::Result;
use crate::gotemplate::Func;

pub const FUNCS: &[(&str, Func)] = &[("semver", semver), ("semverCompare", semver_compare)];

/// A `*semver.Version`.
#[derive(Debug, Clone, PartialEq)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pub pre: String,
    pub metadata: String,
    pub original: String,
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if !self.pre.is_empty() {
            write!(f, "-{}", self.pre)?;
        }
        if !self.metadata.is_empty() {
            write!(f, "+{}", self.metadata)?;
        }
        Ok(())
    }
}

/// Dot-separated identifiers of letters, digits and `-`.
const IDENTIFIERS: &str = r"[0-9A-Za-z\-]+(?:\.[0-9A-Za-z\-]+)*";

/// A version: numbers (`x`, `X`, `*` too in a constraint), then an
/// optional prerelease and build.
fn version_pattern(number: &str) -> String {
    format!(r"v?({number})(\.{number})?(\.{number})?(?:-({IDENTIFIERS}))?(?:\+({IDENTIFIERS}))?")
}

/// The library's number in a constraint (it takes `|` there too).
const LOOSE_NUMBER: &str = r"[0-9|xX*]+";

/// The comparison operators, the empty one among them.
const OPERATORS: &str = r"=||!=|>|<|>=|=>|<=|=<|~|~>|\^";

static VERSION: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(&format!("^{}$", version_pattern("[0-9]+"))).ok());
static ONE_CONSTRAINT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(&format!(
        r"^\s*({OPERATORS})\s*({})\s*$",
        version_pattern(LOOSE_NUMBER)
    ))
    .ok()
});
static RANGE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let v = version_pattern(LOOSE_NUMBER);
    Regex::new(&format!(r"\s*({v})\s+-\s+({v})\s*")).ok()
});
static FIND: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?:{OPERATORS})\s*(?:{})",
        version_pattern(LOOSE_NUMBER)
    ))
    .ok()
});
static VALID: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let v = version_pattern(LOOSE_NUMBER);
    Regex::new(&format!(
        r"^(?:\s*(?:{OPERATORS})\s*(?:{v})\s*)(?:(?:\s+|,\s*)(?:{OPERATORS})\s*(?:{v})\s*)*$"
    ))
    .ok()
});

/// A pattern built at first use (they are fixed: they always build).
fn pattern(built: &LazyLock<Option<Regex>>) -> std::result::Result<&Regex, String> {
    built
        .as_ref()
        .ok_or_else(|| "semver: a pattern failed to build".to_string())
}

fn number(text: &str) -> std::result::Result<u64, String> {
    text.parse().map_err(|_| {
        format!(
            "Error parsing version segment: strconv.ParseUint: parsing {text:?}: value out of range"
        )
    })
}

/// A version as the library reads one, or its message.
pub fn parse_version(text: &str) -> std::result::Result<Version, String> {
    let m = pattern(&VERSION)?
        .captures(text)
        .ok_or_else(|| "Invalid Semantic Version".to_string())?;
    let part = |i: usize| m.get(i).map_or("", |g| g.as_str());
    let dotted = |i: usize| -> std::result::Result<u64, String> {
        match part(i) {
            "" => Ok(0),
            p => number(super::tail(p, 1)),
        }
    };
    let version = Version {
        major: number(part(1))?,
        minor: dotted(2)?,
        patch: dotted(3)?,
        pre: part(4).to_string(),
        metadata: part(5).to_string(),
        original: text.to_string(),
    };
    for piece in version.pre.split('.').filter(|_| !version.pre.is_empty()) {
        if piece.bytes().all(|b| b.is_ascii_digit()) && piece.len() > 1 && piece.starts_with('0') {
            return Err("Version segment starts with 0".to_string());
        }
    }
    Ok(version)
}

fn compare_identifier(a: &str, b: &str) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    if a.is_empty() {
        return Ordering::Less;
    }
    if b.is_empty() {
        return Ordering::Greater;
    }
    match (a.parse::<u64>(), b.parse::<u64>()) {
        (Err(_), Err(_)) => {
            if a > b {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
        (Ok(_), Err(_)) => Ordering::Less,
        (Err(_), Ok(_)) => Ordering::Greater,
        (Ok(x), Ok(y)) => {
            if x > y {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
    }
}

fn compare_prerelease(a: &str, b: &str) -> Ordering {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.split('.').collect(), b.split('.').collect());
    for i in 0..a.len().max(b.len()) {
        let order = compare_identifier(a.get(i).unwrap_or(&""), b.get(i).unwrap_or(&""));
        if order != Ordering::Equal {
            return order;
        }
    }
    Ordering::Equal
}

impl Version {
    /// Precedence: numbers, then a release above its prereleases.
    pub fn compare(&self, other: &Version) -> Ordering {
        let numbers =
            (self.major, self.minor, self.patch).cmp(&(other.major, other.minor, other.patch));
        if numbers != Ordering::Equal {
            return numbers;
        }
        match (self.pre.is_empty(), other.pre.is_empty()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => compare_prerelease(&self.pre, &other.pre),
        }
    }
}

/// One comparison of a constraint: its operator and version, and which
/// parts were left open (`1.x`, `1`).
struct Constraint {
    op: String,
    version: Version,
    dirty: bool,
    minor_dirty: bool,
    patch_dirty: bool,
}

fn is_wild(text: &str) -> bool {
    matches!(text, "x" | "X" | "*")
}

fn parse_constraint(text: &str) -> std::result::Result<Constraint, String> {
    let m = pattern(&ONE_CONSTRAINT)?
        .captures(text)
        .ok_or_else(|| format!("improper constraint: {text}"))?;
    let part = |i: usize| m.get(i).map_or("", |g| g.as_str());
    let (major, minor, patch) = (part(3), part(4), part(5));
    let pre = match part(6) {
        "" => String::new(),
        p => format!("-{p}"),
    };
    let (version, minor_dirty, patch_dirty) = if is_wild(major) || major.is_empty() {
        (format!("0.0.0{pre}"), false, false)
    } else if minor.is_empty() || is_wild(super::tail(minor, 1)) {
        (format!("{major}.0.0{pre}"), true, false)
    } else if patch.is_empty() || is_wild(super::tail(patch, 1)) {
        (format!("{major}{minor}.0{pre}"), false, true)
    } else {
        (part(2).to_string(), false, false)
    };
    let dirty = is_wild(major) || major.is_empty() || minor_dirty || patch_dirty;
    let version = parse_version(&version).map_err(|_| "constraint Parser Error".to_string())?;
    Ok(Constraint {
        op: part(1).to_string(),
        version,
        dirty,
        minor_dirty,
        patch_dirty,
    })
}

impl Constraint {
    fn check(&self, v: &Version) -> bool {
        let c = &self.version;
        let prerelease_refused = !v.pre.is_empty() && c.pre.is_empty();
        match self.op.as_str() {
            "!=" => self.not_equal(v),
            _ if prerelease_refused => false,
            "" | "=" => {
                if self.dirty {
                    self.tilde(v)
                } else {
                    v.compare(c) == Ordering::Equal
                }
            }
            ">" => {
                if !self.dirty {
                    return v.compare(c) == Ordering::Greater;
                }
                if v.major != c.major {
                    return v.major > c.major;
                }
                if self.minor_dirty {
                    return false;
                }
                if self.patch_dirty {
                    return v.minor > c.minor;
                }
                v.compare(c) == Ordering::Greater
            }
            "<" => v.compare(c) == Ordering::Less,
            ">=" | "=>" => v.compare(c) != Ordering::Less,
            "<=" | "=<" => {
                if !self.dirty {
                    return v.compare(c) != Ordering::Greater;
                }
                !(v.major > c.major || v.major == c.major && v.minor > c.minor && !self.minor_dirty)
            }
            "~" | "~>" => self.tilde(v),
            "^" => self.caret(v),
            _ => false,
        }
    }

    fn tilde(&self, v: &Version) -> bool {
        let c = &self.version;
        if !v.pre.is_empty() && c.pre.is_empty() {
            return false;
        }
        if v.compare(c) == Ordering::Less {
            return false;
        }
        if c.major == 0 && c.minor == 0 && c.patch == 0 && !self.minor_dirty && !self.patch_dirty {
            return true;
        }
        v.major == c.major && (v.minor == c.minor || self.minor_dirty)
    }

    fn caret(&self, v: &Version) -> bool {
        let c = &self.version;
        if v.compare(c) == Ordering::Less {
            return false;
        }
        if c.major > 0 || self.minor_dirty {
            return v.major == c.major;
        }
        if v.major > 0 {
            return false;
        }
        if c.minor > 0 || self.patch_dirty {
            return v.minor == c.minor;
        }
        if v.minor > 0 {
            return false;
        }
        c.patch == v.patch
    }

    fn not_equal(&self, v: &Version) -> bool {
        let c = &self.version;
        if self.dirty {
            if !v.pre.is_empty() && c.pre.is_empty() {
                return false;
            }
            if c.major != v.major {
                return true;
            }
            if c.minor != v.minor && !self.minor_dirty {
                return true;
            } else if self.minor_dirty {
                return false;
            } else if c.patch != v.patch && !self.patch_dirty {
                return true;
            } else if self.patch_dirty {
                if !v.pre.is_empty() || !c.pre.is_empty() {
                    return compare_prerelease(&v.pre, &c.pre) != Ordering::Equal;
                }
                return false;
            }
        }
        v.compare(c) != Ordering::Equal
    }
}

/// A constraint: alternatives (`||`), each a list that must all hold.
fn parse_constraints(text: &str) -> std::result::Result<Vec<Vec<Constraint>>, String> {
    // `A - B` is `>= A, <= B`.
    let mut text = text.to_string();
    let ranges: Vec<(String, String, String)> = pattern(&RANGE)?
        .captures_iter(&text.clone())
        .map(|m| {
            let group = |i: usize| m.get(i).map_or("", |g| g.as_str()).to_string();
            (group(0), group(1), group(7))
        })
        .collect();
    for (whole, from, to) in ranges {
        text = text.replacen(&whole, &format!(">= {from}, <= {to}"), 1);
    }
    text.split("||")
        .map(|alternative| {
            if !pattern(&VALID)?.is_match(alternative) {
                return Err(format!("improper constraint: {alternative}"));
            }
            let found: Vec<&str> = pattern(&FIND)?
                .find_iter(alternative)
                .map(|m| m.as_str())
                .collect();
            let found = if found.is_empty() {
                vec![alternative]
            } else {
                found
            };
            found.into_iter().map(parse_constraint).collect()
        })
        .collect()
}

fn semver(args: &[Value]) -> Result {
    arity(args, 1)?;
    Ok(Value::Version(Rc::new(parse_version(string(args, 0)?)?)))
}

fn semver_compare(args: &[Value]) -> Result {
    arity(args, 2)?;
    let constraints = parse_constraints(string(args, 0)?)?;
    let version = parse_version(string(args, 1)?)?;
    Ok(Value::Bool(
        constraints
            .iter()
            .any(|all| all.iter().all(|c| c.check(&version))),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(constraint: &str, version: &str) -> bool {
        semver_compare(&[Value::str(constraint), Value::str(version)])
            .unwrap()
            .truthy()
    }

    #[test]
    fn versions_read_leniently() {
        assert_eq!(parse_version("v1.2").unwrap().to_string(), "1.2.0");
        assert_eq!(parse_version("1.2.3-beta.1+b5").unwrap().pre, "beta.1");
        assert!(parse_version("1.2.3-01").is_err());
        assert!(parse_version("1.2.3.4").is_err());
    }

    #[test]
    fn constraints_follow_the_library() {
        assert!(check(">= 1.2, < 2", "1.5.0"));
        assert!(!check(">= 1.2, < 2", "2.0.0"));
        assert!(check("^1.2", "1.9.9"));
        assert!(!check("^0.2.3", "0.3.0"));
        assert!(check("~1.2.3", "1.2.9"));
        assert!(!check("~1.2.3", "1.3.0"));
        assert!(check("1.2.x", "1.2.7"));
        assert!(check("1.2 - 1.4", "1.4.0"));
        // `<= 1.4` leaves the patch open: 1.4.1 is in the range.
        assert!(check("1.2 - 1.4", "1.4.1"));
        assert!(!check("1.2 - 1.4", "1.5.0"));
        assert!(check("<1 || >=3", "3.1.0"));
        assert!(!check(">=1.0.0", "1.2.0-beta"));
        assert!(check(">=1.0.0-0", "1.2.0-beta"));
        assert!(check("*", "4.0.0"));
        assert!(check("!=1.2.3", "1.2.4"));
        assert!(semver_compare(&[Value::str("??"), Value::str("1.0.0")]).is_err());
    }
}

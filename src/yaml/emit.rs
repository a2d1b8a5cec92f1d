//! Write new values as YAML text that blends into an existing document.
//!
//! Only the pieces the renderer adds are written here; the rest of a document is
//! never re-serialised. The caller passes the layout it found in the document
//! (indent step, whether block sequences are indented, line ending, JSON or YAML
//! flow) so that added lines look like their neighbours.

use serde_json::Value;

use super::value::plain_reads_as_string;

/// How added text is laid out, learnt from the document it goes into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Spaces per nesting level of a block mapping.
    pub indent: usize,
    /// Spaces between a key and the `-` of its block sequence (0 = `key:\n- a`).
    pub seq_indent: usize,
    /// `"\n"` or `"\r\n"`.
    pub newline: &'static str,
    /// Flow collections are JSON (the document is JSON): quote every string.
    pub json: bool,
    /// Spaces after the `-` of a block sequence item.
    pub dash_gap: usize,
}

impl Default for Layout {
    fn default() -> Self {
        Layout {
            indent: 2,
            seq_indent: 2,
            newline: "\n",
            json: false,
            dash_gap: 1,
        }
    }
}

impl Layout {
    /// One block-mapping entry `key: value` whose key starts at column `col`,
    /// ending with a line break.
    pub fn block_entry(&self, col: usize, key: &str, value: &Value) -> String {
        let mut out = String::with_capacity(256);
        self.write_entry(&mut out, col, key, value, true);
        out
    }

    /// One block-sequence item whose `-` is at column `col`, ending with a line break.
    pub fn block_item(&self, col: usize, value: &Value) -> String {
        let mut out = String::with_capacity(1024);
        self.write_item(&mut out, col, value, true);
        out
    }

    /// A value in flow style on one line: `{a: b, c: [1, 2]}` (JSON for JSON documents).
    pub fn flow(&self, value: &Value) -> String {
        if self.json {
            return value.to_string();
        }
        let mut out = String::new();
        self.write_flow(&mut out, value);
        out
    }

    /// A flow-mapping entry `key: value` on one line.
    pub fn flow_entry(&self, key: &str, value: &Value) -> String {
        let mut out = if self.json {
            Value::String(key.to_string()).to_string()
        } else {
            let mut out = String::new();
            push_flow_scalar(&mut out, key);
            out
        };
        out.push_str(": ");
        out.push_str(&self.flow(value));
        out
    }

    /// `indent_first: false` when the entry continues a line (after a `- `).
    fn write_entry(
        &self,
        out: &mut String,
        col: usize,
        key: &str,
        value: &Value,
        indent_first: bool,
    ) {
        if indent_first {
            push_spaces(out, col);
        }
        push_block_scalar(out, key);
        out.push(':');
        self.write_nested(out, col, value);
    }

    /// Whatever follows `key:` or `- `: inline scalars, or nested block content.
    fn write_nested(&self, out: &mut String, col: usize, value: &Value) {
        match value {
            Value::Object(map) if !map.is_empty() => {
                out.push_str(self.newline);
                for (k, v) in map {
                    self.write_entry(out, col + self.indent, k, v, true);
                }
            }
            Value::Array(items) if !items.is_empty() => {
                out.push_str(self.newline);
                for item in items {
                    self.write_item(out, col + self.seq_indent, item, true);
                }
            }
            Value::String(s) if literal_block_fits(s) => {
                out.push_str(if s.ends_with('\n') { " |" } else { " |-" });
                out.push_str(self.newline);
                for line in s.strip_suffix('\n').unwrap_or(s).split('\n') {
                    if !line.is_empty() {
                        push_spaces(out, col + self.indent);
                        out.push_str(line);
                    }
                    out.push_str(self.newline);
                }
            }
            // `key:` with nothing after it, as Kubernetes manifests write null.
            Value::Null => out.push_str(self.newline),
            scalar => {
                out.push(' ');
                self.write_inline(out, scalar);
                out.push_str(self.newline);
            }
        }
    }

    fn write_item(&self, out: &mut String, col: usize, value: &Value, indent_first: bool) {
        if indent_first {
            push_spaces(out, col);
        }
        out.push('-');
        push_spaces(out, self.dash_gap);
        let content = col + 1 + self.dash_gap;
        // Items nested in this one use the usual single space.
        let inner = Layout {
            dash_gap: 1,
            ..*self
        };
        match value {
            // The first entry (or item) continues the dash's line.
            Value::Object(map) if !map.is_empty() => {
                for (i, (k, v)) in map.iter().enumerate() {
                    inner.write_entry(out, content, k, v, i > 0);
                }
            }
            Value::Array(items) if !items.is_empty() => {
                for (i, item) in items.iter().enumerate() {
                    inner.write_item(out, content, item, i > 0);
                }
            }
            scalar => {
                self.write_inline(out, scalar);
                out.push_str(self.newline);
            }
        }
    }

    /// A scalar or empty collection written inline in block context.
    fn write_inline(&self, out: &mut String, value: &Value) {
        match value {
            Value::String(s) => push_block_scalar(out, s),
            Value::Object(_) | Value::Array(_) if self.json => out.push_str(&value.to_string()),
            Value::Object(_) | Value::Array(_) => self.write_flow(out, value),
            other => out.push_str(&other.to_string()),
        }
    }

    fn write_flow(&self, out: &mut String, value: &Value) {
        match value {
            Value::Object(map) => {
                out.push('{');
                for (i, (k, v)) in map.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    push_flow_scalar(out, k);
                    out.push_str(": ");
                    self.write_flow(out, v);
                }
                out.push('}');
            }
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.write_flow(out, item);
                }
                out.push(']');
            }
            Value::String(s) => push_flow_scalar(out, s),
            other => out.push_str(&other.to_string()),
        }
    }
}

fn push_spaces(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

/// A string as a plain scalar when that reads back as the same string,
/// otherwise quoted (see `push_quoted`). A one-line string in a block is
/// always written so, whatever surrounds it (which `edit::Blocks` relies on).
pub(crate) fn push_block_scalar(out: &mut String, s: &str) {
    if plain_is_safe(s, false) {
        out.push_str(s);
    } else {
        push_quoted(out, s);
    }
}

fn push_flow_scalar(out: &mut String, s: &str) {
    if plain_is_safe(s, true) {
        out.push_str(s);
    } else {
        push_quoted(out, s);
    }
}

/// Double quotes, as Kubernetes manifests usually have them (JSON escapes are
/// valid YAML escapes); single quotes for text full of `"` or `\` (JSON in a
/// string), unless it needs escapes.
fn push_quoted(out: &mut String, s: &str) {
    let needs_escapes = s
        .chars()
        .any(|c| c.is_control() || is_unicode_break_or_mark(c));
    if s.contains(['"', '\\']) && !needs_escapes {
        out.push('\'');
        out.push_str(&s.replace('\'', "''"));
        out.push('\'');
    } else if needs_escapes && !s.is_ascii() || s.contains('\u{7f}') {
        // JSON's writer leaves these as they are; libyaml would read
        // Unicode's breaks as line breaks, fold a next line into a space,
        // and refuse a delete or a C1 control character.
        let written = Value::String(s.to_string()).to_string();
        for c in written.chars() {
            if c.is_control() || is_unicode_break_or_mark(c) {
                out.push_str(&format!("\\u{:04x}", u32::from(c)));
            } else {
                out.push(c);
            }
        }
    } else {
        out.push_str(&Value::String(s.to_string()).to_string());
    }
}

/// Unicode's line and paragraph separators and the byte order mark: never
/// written as they are (see [`push_quoted`]).
fn is_unicode_break_or_mark(c: char) -> bool {
    matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}')
}

/// Whether `s` can be written unquoted and still read back as the string `s`.
/// Asked for every string written, so it looks at each byte once.
pub fn plain_is_safe(s: &str, in_flow: bool) -> bool {
    let bytes = s.as_bytes();
    let (Some(&first), Some(last)) = (bytes.first(), s.chars().next_back()) else {
        return false;
    };
    if s.starts_with(char::is_whitespace) || last.is_whitespace() || last == ':' || s == "<<" {
        return false;
    }
    // `-`, `?` and `:` only start a plain scalar when a non-space follows.
    let second_is_space = bytes.get(1).is_none_or(|b| b.is_ascii_whitespace());
    if matches!(first, b'-' | b'?' | b':') && (second_is_space || in_flow && first != b'-') {
        return false;
    }
    if b",[]{}#&*!|>'\"%@`".contains(&first) {
        return false;
    }
    // In brackets, a last word `-` is taken for a sequence entry (`{k: a -}`).
    if in_flow && last == '-' && s.trim_end_matches('-').ends_with([' ', '\t']) {
        return false;
    }
    // Most strings have none of the bytes that can break one (a space, `#`,
    // a control character; `,` and brackets in a flow): found without
    // branches, a byte at a time only when one is there.
    // In brackets libyaml ends a plain scalar at a `?` too.
    let may_break = |b: u8| {
        (b <= b' ')
            | (b == b'#')
            | (b == 0x7f)
            | in_flow & matches!(b, b',' | b'[' | b']' | b'{' | b'}' | b'?')
    };
    let unusual = |c: char| c.is_control() || is_unicode_break_or_mark(c);
    if !bytes.iter().fold(false, |any, &b| any | may_break(b)) {
        return (s.is_ascii() || !s.chars().any(unusual)) && plain_reads_as_string(s);
    }
    let mut previous = 0u8;
    for &b in bytes {
        let breaks = match b {
            b' ' => previous == b':',
            b'#' => previous == b' ',
            b',' | b'[' | b']' | b'{' | b'}' | b'?' => in_flow,
            _ => b.is_ascii_control(),
        };
        if breaks {
            return false;
        }
        previous = b;
    }
    // Non-ASCII control characters (U+0080–U+009F), Unicode's line breaks
    // and the byte order mark need escapes too.
    if !s.is_ascii() && s.chars().any(unusual) {
        return false;
    }
    plain_reads_as_string(s)
}

/// Multi-line text reads best as a literal block (`|`), when it can be one.
fn literal_block_fits(s: &str) -> bool {
    s.contains('\n') && can_be_literal(s)
}

/// Whether `s` can be written as a literal block (`|` or `|-`) whose
/// indentation is found from its first line.
pub(super) fn can_be_literal(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with([' ', '\t', '\n'])
        && !s.ends_with("\n\n")
        && !s
            .chars()
            .any(|c| (c.is_control() && c != '\n') || is_unicode_break_or_mark(c))
        && s.split('\n').all(|line| !line.ends_with([' ', '\t']))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn block_entry_nests_maps_and_lists() {
        let layout = Layout::default();
        let text = layout.block_entry(
            2,
            "spec",
            &json!({"ports": [{"name": "a", "port": 1}], "empty": {}, "n": "1", "m": "n"}),
        );
        // `n` reads as false to kubectl (YAML 1.1): quoted, as key and value.
        assert_eq!(
            text,
            "  spec:\n    ports:\n      - name: a\n        port: 1\n    empty: {}\n    \"n\": \"1\"\n    m: \"n\"\n"
        );
    }

    #[test]
    fn indentless_sequences() {
        let layout = Layout {
            seq_indent: 0,
            ..Layout::default()
        };
        let text = layout.block_item(0, &json!({"name": "p", "args": ["a", "b"]}));
        assert_eq!(text, "- name: p\n  args:\n  - a\n  - b\n");
    }

    #[test]
    fn multi_line_strings_become_literal_blocks() {
        let layout = Layout::default();
        assert_eq!(
            layout.block_entry(0, "pem", &json!("line1\nline2\n")),
            "pem: |\n  line1\n  line2\n"
        );
        assert_eq!(
            layout.block_entry(0, "x", &json!("a\n\n")),
            "x: \"a\\n\\n\"\n"
        );
    }

    #[test]
    fn flow_and_json() {
        let value = json!({"name": "a b", "list": ["x,y", 1, true]});
        assert_eq!(
            Layout::default().flow(&value),
            "{name: a b, list: [\"x,y\", 1, true]}"
        );
        let json = Layout {
            json: true,
            ..Layout::default()
        };
        assert_eq!(json.flow(&value), r#"{"name":"a b","list":["x,y",1,true]}"#);
    }

    #[test]
    fn quoting_keeps_strings_strings() {
        for s in [
            "true", "2102", "", " x", "a: b", "#c", "- x", "-", "0644", "null", "1.0", "-1",
            "1_000",
        ] {
            assert!(!plain_is_safe(s, false), "{s:?} must be quoted");
        }
        for s in [
            "linkerd.io/inject",
            "cr.l5d.io/linkerd/proxy:edge-26.5.2",
            "100m",
            "a b",
            "--ipv6=false",
        ] {
            assert!(plain_is_safe(s, false), "{s:?} can be plain");
        }
        // In brackets, flow indicators and a last word `-` need quotes too.
        for s in ["a,b", "a -", "api   --"] {
            assert!(plain_is_safe(s, false), "{s:?} can be plain in a block");
            assert!(!plain_is_safe(s, true), "{s:?} must be quoted in brackets");
        }
        assert!(plain_is_safe("a-", true));
    }

    /// The value of `text`'s one document, read back by the tool's parser.
    fn read_back(text: &str) -> Option<Value> {
        let documents = crate::yaml::parse::parse_stream(text).ok()?;
        crate::yaml::value::to_value(documents.first()?.root.as_ref()?).ok()
    }

    proptest::proptest! {
        /// What may be written plain reads back as the same string, in a
        /// block and in brackets; the characters that can break a plain
        /// scalar are drawn often.
        #[test]
        fn plain_strings_read_back_as_themselves(
            s in "[a-z0-9 :#,\\[\\]{}\t.\\-?|>'\"%@`!&*~]{0,12}"
        ) {
            if plain_is_safe(&s, false) {
                proptest::prop_assert_eq!(read_back(&format!("k: {s}\n")), Some(json!({"k": s})));
            }
            if plain_is_safe(&s, true) {
                proptest::prop_assert_eq!(read_back(&format!("[{s}]\n")), Some(json!([s])));
            }
        }
    }
}

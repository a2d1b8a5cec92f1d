//! Go's `text/template`, for the injection templates a mesh's control plane
//! keeps in the cluster (Istio's `istio-sidecar-injector` ConfigMap).
//!
//! The semantics are Go's (see `text/template` and its `parse` package in
//! the Go standard library): actions and pipelines, variables declared and
//! assigned, `if`/`range`/`with` with Go's truth and `else` chains,
//! `define`/`template`/`block`, `break`/`continue`, white space trimmed by
//! `{{-` and `-}}`, fields of structs by Go name and of maps by key (a
//! missing key prints `<no value>`), maps ranged in key order. Go's
//! built-in functions are in [`funcs`], Sprig's in [`sprig`]; a mesh adds
//! its own through [`Funcs::with`].
//!
//! Why not an existing crate: `gtmpl`, the one Rust implementation, has no
//! variable assignment (`$x = …`, which Istio's templates use to build the
//! list of app containers), ranges maps in hash order, and reports neither
//! line nor function when a template fails.

mod exec;
pub mod format;
pub mod funcs;
mod lex;
mod parse;
pub mod sprig;
pub mod value;

use std::collections::HashMap;
use std::fmt;

pub use value::Value;

/// A template function: its arguments (the piped value last), its result
/// or a message.
pub type Func = fn(&[Value]) -> Result<Value, String>;

/// For a function that reads only part of its arguments (one entry of a
/// map), whether its answer can depend on a string `watched` picks: true
/// when the part it reads holds one (see [`funcs::looked_up`]).
pub type Reads = fn(&[Value], &dyn Fn(&str) -> bool) -> bool;

/// The functions templates may call, by name.
#[derive(Clone)]
pub struct Funcs {
    map: HashMap<&'static str, Func>,
    /// The functions that read only part of their arguments.
    reads: HashMap<&'static str, Reads>,
}

impl Default for Funcs {
    /// Go's builtins and Sprig's.
    fn default() -> Self {
        Funcs {
            map: funcs::BUILTINS
                .iter()
                .chain(sprig::TABLES.iter().flat_map(|table| table.iter()))
                .chain(funcs::HELM)
                .copied()
                .collect(),
            reads: funcs::READ_IN_PART.iter().copied().collect(),
        }
    }
}

impl fmt::Debug for Funcs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Funcs({} functions)", self.map.len())
    }
}

impl Funcs {
    /// These functions added, replacing any of the same name (as Go's
    /// `Funcs` does when a second map is given).
    pub fn with(mut self, more: &[(&'static str, Func)]) -> Self {
        for (name, _) in more {
            self.reads.remove(name);
        }
        self.map.extend(more.iter().copied());
        self
    }

    /// What these functions read of their arguments (see [`Reads`]); a
    /// function not named reads them whole.
    pub fn reading(mut self, reads: &[(&'static str, Reads)]) -> Self {
        self.reads.extend(reads.iter().copied());
        self
    }

    /// Whether a call of `name` with `args` can depend on a string
    /// `watched` picks.
    fn depends_on(&self, name: &str, args: &[Value], watched: &dyn Fn(&str) -> bool) -> bool {
        match self.reads.get(name) {
            Some(reads) => reads(args, watched),
            None => args.iter().any(|v| v.holds(watched)),
        }
    }

    fn get(&self, name: &str) -> Option<Func> {
        self.map.get(name).copied()
    }

    fn has(&self, name: &str) -> bool {
        name == "and" || name == "or" || self.map.contains_key(name)
    }
}

/// A template that failed to parse or run: its name, the line, what went wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("template {template:?}, line {line}: {message}")]
pub struct Error {
    pub template: String,
    pub line: usize,
    pub message: String,
}

/// A parsed template and the templates it defines.
#[derive(Debug, Clone)]
pub struct Template {
    name: String,
    trees: parse::Trees,
}

impl Template {
    /// Parse `text` as template `name`, knowing the functions of `funcs`.
    pub fn parse(name: &str, text: &str, funcs: &Funcs) -> Result<Template, Error> {
        let at = |(message, line): (String, usize)| Error {
            template: name.to_string(),
            line,
            message,
        };
        let tokens = lex::lex(text).map_err(at)?;
        let trees = parse::parse(name, tokens, &|f| funcs.has(f)).map_err(at)?;
        Ok(Template {
            name: name.to_string(),
            trees,
        })
    }

    /// Run it with `data` as dot.
    pub fn execute(&self, data: &Value, funcs: &Funcs) -> Result<String, Error> {
        exec::execute(&self.trees, funcs, &self.name, data, None)
    }

    /// The names of the templates it holds: its own and those it defines.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.trees.keys().map(String::as_str)
    }

    /// Whether it holds a template of that name.
    pub fn has(&self, name: &str) -> bool {
        self.trees.contains_key(name)
    }

    /// This set with the templates of `other` added, one of the same name
    /// replaced by other's: as Helm gathers a chart's files into one set,
    /// where any file's template may `include` another file's.
    pub fn with_templates_of(mut self, other: Template) -> Template {
        self.trees.extend(other.trees);
        self
    }

    /// Run its template `name` (one it defines) with `data` as dot.
    pub fn execute_template(
        &self,
        name: &str,
        data: &Value,
        funcs: &Funcs,
    ) -> Result<String, Error> {
        exec::execute(&self.trees, funcs, name, data, None)
    }

    /// Run it with `data` as dot, and say which function calls were given
    /// a string `watched` picks (in the part of an argument they read),
    /// with what they answered: all that the text can depend on of such
    /// strings, but for where they were copied into it.
    pub fn execute_watching(
        &self,
        data: &Value,
        funcs: &Funcs,
        watched: &dyn Fn(&str) -> bool,
    ) -> Result<(String, Vec<Call>), Error> {
        let mut calls = Vec::new();
        let text = exec::execute(
            &self.trees,
            funcs,
            &self.name,
            data,
            Some((watched, &mut calls)),
        )?;
        Ok((text, calls))
    }
}

/// A function call of a watched run (see [`Template::execute_watching`]).
#[derive(Debug, Clone)]
pub struct Call {
    pub func: Func,
    pub args: Vec<Value>,
    pub result: Result<Value, String>,
}

impl Call {
    /// Whether the function answers `args` with `result` (`and`/`or`
    /// decide by truth alone and are never recorded).
    pub fn answers(&self, args: &[Value], result: &Result<Value, String>) -> bool {
        (self.func)(args) == *result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(text: &str, data: serde_json::Value) -> Result<String, Error> {
        let funcs = Funcs::default();
        Template::parse("t", text, &funcs)?.execute(&Value::from_json(&data), &funcs)
    }

    fn ok(text: &str, data: serde_json::Value) -> String {
        run(text, data).unwrap()
    }

    #[test]
    fn a_proto_wrapper_read_as_its_bare_json_value_answers_get_value() {
        let funcs = Funcs::default();
        let data = Value::from_object(&json!({"hold": true, "n": 3}));
        let out = Template::parse(
            "t",
            "{{ .Hold.GetValue }} {{ .N.GetValue }} {{ .Missing.GetValue }}",
            &funcs,
        )
        .unwrap()
        .execute(&data, &funcs);
        assert_eq!(out.unwrap(), "true 3 ");
    }

    #[test]
    fn actions_print_values_and_missing_keys_print_no_value() {
        assert_eq!(ok("a{{ .x }}b{{ .y }}", json!({"x": 1})), "a1b<no value>");
        assert_eq!(ok("{{ .a.b }}", json!({"a": {"b": "c"}})), "c");
        assert_eq!(
            run("{{ .a.b }}", json!({})).unwrap_err().message,
            "nil pointer evaluating interface {}.b"
        );
    }

    #[test]
    fn variables_are_declared_assigned_and_scoped() {
        let text = "{{- $c := list }}{{- range .xs }}{{ if ne . \"p\" }}{{ $c = append $c . }}{{ end }}{{ end }}{{ $c | join \",\" }}";
        assert_eq!(ok(text, json!({"xs": ["a", "p", "b"]})), "a,b");
        let text = "{{ $first := true }}{{ range .xs }}{{ if not $first }},{{ end }}{{ . }}{{ $first = false }}{{ end }}";
        assert_eq!(ok(text, json!({"xs": [1, 2, 3]})), "1,2,3");
    }

    #[test]
    fn range_over_maps_is_in_key_order_with_else_break_and_continue() {
        assert_eq!(
            ok(
                "{{ range $k, $v := . }}{{ $k }}={{ $v }};{{ end }}",
                json!({"b": 2, "a": 1})
            ),
            "a=1;b=2;"
        );
        assert_eq!(
            ok("{{ range .xs }}x{{ else }}none{{ end }}", json!({"xs": []})),
            "none"
        );
        assert_eq!(
            ok(
                "{{ range .xs }}{{ if eq . 2.0 }}{{ continue }}{{ end }}{{ if eq . 3.0 }}{{ break }}{{ end }}{{ . }}{{ end }}",
                json!({"xs": [1, 2, 3, 4]})
            ),
            "1"
        );
        assert_eq!(
            ok(
                "{{ range $i, $v := .xs }}{{ $i }}{{ end }}",
                json!({"xs": ["a", "b"]})
            ),
            "01"
        );
    }

    #[test]
    fn if_with_and_else_chains_follow_go_truth() {
        let text = "{{ if .a }}A{{ else if .b }}B{{ else }}C{{ end }}";
        assert_eq!(ok(text, json!({"a": 0, "b": "x"})), "B");
        assert_eq!(ok(text, json!({"a": [], "b": ""})), "C");
        assert_eq!(
            ok(
                "{{ with .a }}{{ . }}{{ else }}none{{ end }}",
                json!({"a": "v"})
            ),
            "v"
        );
        assert_eq!(
            ok(
                "{{ with .a }}{{ . }}{{ else with .b }}{{ . }}{{ end }}",
                json!({"b": "w"})
            ),
            "w"
        );
    }

    #[test]
    fn defines_templates_and_blocks() {
        let text = r#"{{ define "r" }}[{{ .n }}]{{ end }}{{ template "r" . }}{{ block "b" .n }}<{{ . }}>{{ end }}"#;
        assert_eq!(ok(text, json!({"n": 5})), "[5]<5>");
    }

    #[test]
    fn include_gives_a_templates_output_to_the_pipeline() {
        let text = r#"{{ define "r" }}a: {{ .n }}{{ end }}{{ include "r" . | nindent 2 }}|{{ include "r" (dict "n" 2) | upper }}"#;
        assert_eq!(ok(text, json!({"n": 5})), "\n  a: 5|A: 2");
        // Nested includes, and the caller's output untouched.
        let text = r#"{{ define "in" }}<{{ . }}>{{ end }}{{ define "out" }}[{{ include "in" . }}]{{ end }}x{{ include "out" "y" }}z"#;
        assert_eq!(ok(text, json!({})), "x[<y>]z");
        let missing = run(r#"{{ include "nope" . }}"#, json!({})).unwrap_err();
        assert!(
            missing.message.contains("no template \"nope\""),
            "{missing:?}"
        );
        // An error inside names the template that failed, and its line.
        let text = "{{ define \"bad\" }}\n{{ fail \"no\" }}{{ end }}{{ include \"bad\" . }}";
        let error = run(text, json!({})).unwrap_err();
        assert_eq!((error.template.as_str(), error.line), ("bad", 2));
    }

    #[test]
    fn required_and_from_yaml_behave_as_in_helm() {
        assert_eq!(ok(r#"{{ required "need x" .x }}"#, json!({"x": 3})), "3");
        let error = run(r#"{{ required "need x" .x }}"#, json!({})).unwrap_err();
        assert_eq!(error.message, "error calling required: need x");
        assert!(run(r#"{{ required "need x" .x }}"#, json!({"x": ""})).is_err());
        assert_eq!(
            ok(
                r#"{{ (fromYaml "a: 1\nb: [x]").b }}|{{ (fromYaml "a: 1").a }}"#,
                json!({})
            ),
            "[x]|1"
        );
        assert_eq!(
            ok(r#"{{ (fromYaml "- x").Error }}"#, json!({})),
            "cannot unmarshal a non-mapping into map[string]interface {}"
        );
    }

    #[test]
    fn template_sets_gather_the_defines_of_several_files() {
        let funcs = Funcs::default();
        let a = Template::parse(
            "a.tpl",
            r#"{{ define "a" }}A{{ include "b" . }}{{ end }}"#,
            &funcs,
        )
        .unwrap();
        let b = Template::parse("b.tpl", r#"{{ define "b" }}B{{ end }}"#, &funcs).unwrap();
        let set = a.with_templates_of(b);
        assert!(set.has("a") && set.has("b"));
        let out = set.execute_template("a", &Value::Nil, &funcs).unwrap();
        assert_eq!(out, "AB");
    }

    #[test]
    fn and_or_stop_at_the_deciding_argument() {
        // The second argument would fail to evaluate: it is never reached.
        assert_eq!(
            ok("{{ if and .a .a.b }}y{{ else }}n{{ end }}", json!({})),
            "n"
        );
        assert_eq!(ok("{{ or .a \"dflt\" }}", json!({})), "dflt");
    }

    #[test]
    fn sprig_functions_behave_as_in_helm_charts() {
        let data = json!({"s": "a/b", "m": {"k": "v"}, "n": ""});
        assert_eq!(
            ok(r#"{{ .n | default "d" | quote }}"#, data.clone()),
            "\"d\""
        );
        assert_eq!(
            ok(
                r#"{{ contains "/" .s }} {{ hasKey .m "k" }} {{ trimPrefix "a/" .s }}"#,
                data.clone()
            ),
            "true true b"
        );
        assert_eq!(
            ok(r#"{{ toJson .m }}|{{ toYaml .m }}"#, data.clone()),
            "{\"k\":\"v\"}|k: v"
        );
        assert_eq!(
            ok("{{ \"x\\ny\" | nindent 2 }}", data.clone()),
            "\n  x\n  y"
        );
        assert_eq!(
            ok(
                r#"{{ (split "/" .s)._1 }} {{ trunc 3 "abcdef" }} {{ printf "%s-%d" "a" 3 }}"#,
                data
            ),
            "b abc a-3"
        );
    }

    #[test]
    fn comparisons_refuse_mixed_types_but_not_missing_values() {
        assert_eq!(ok("{{ eq .missing true }}", json!({})), "false");
        assert_eq!(ok("{{ eq .a 1.0 2.0 }}", json!({"a": 2})), "true");
        assert!(
            run("{{ eq .a 1 }}", json!({"a": 1}))
                .unwrap_err()
                .message
                .contains("incompatible types")
        );
    }

    #[test]
    fn errors_name_the_template_line_and_function() {
        let err = run("line one\n{{ index .xs 5 }}", json!({"xs": []})).unwrap_err();
        assert_eq!(err.line, 2);
        assert_eq!(
            err.to_string(),
            "template \"t\", line 2: error calling index: index out of range: 5"
        );
        let err = run("\n\n{{ nosuch 1 }}", json!({})).unwrap_err();
        assert_eq!(
            (err.line, err.message.as_str()),
            (3, "function \"nosuch\" not defined")
        );
        assert!(
            run(
                "{{ define \"x\" }}{{ template \"x\" }}{{ end }}{{ template \"x\" }}",
                json!({})
            )
            .unwrap_err()
            .message
            .contains("too deeply")
        );
    }

    proptest::proptest! {
        /// Any text, of the characters templates are made of, parses and
        /// runs to a result or an error: never a panic or a hang.
        #[test]
        fn any_text_gives_a_result_or_an_error(text in "[{}. $a-z()|:=\"`\\-0-9\n ]{0,80}") {
            let _ = run(&text, json!({"a": {"b": [1, "x"]}, "z": ""}));
            let braced = format!("{{{{{text}}}}}");
            let _ = run(&braced, json!({}));
        }
    }

    #[test]
    fn structs_read_fields_by_go_name() {
        let pod = Value::from_object(
            &json!({"metadata": {"annotations": {"a": "1"}}, "spec": {"containers": [{"name": "app"}]}}),
        );
        let funcs = Funcs::default();
        let text = r#"{{ index .ObjectMeta.Annotations "a" }}|{{ index .ObjectMeta.Annotations "none" }}|{{ range .Spec.Containers }}{{ .Name }}{{ end }}|{{ .Spec.ServiceAccountName }}"#;
        let out = Template::parse("t", text, &funcs)
            .unwrap()
            .execute(&pod, &funcs)
            .unwrap();
        assert_eq!(out, "1||app|");
    }
}

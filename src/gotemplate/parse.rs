//! Tokens into a tree of nodes, one tree per named template.
//!
//! The grammar is Go's `text/template`: text and actions; `if`, `range`
//! and `with` with `else` (and `else if`, `else with`); `define`,
//! `template` and `block`; `break` and `continue` inside a `range`;
//! pipelines of commands joined by `|`, with variables declared (`:=`)
//! or assigned (`=`) at their head.

use std::collections::BTreeMap;

use super::lex::{Kind, Token};

/// A sequence of nodes.
pub type List = Vec<Node>;

#[derive(Debug, Clone)]
pub enum Node {
    Text(String),
    /// An action whose value is printed (unless it declares or assigns).
    Action(Pipe),
    If(Branch),
    Range(Branch),
    With(Branch),
    /// `template "name" pipeline`.
    Template {
        name: String,
        data: Option<Pipe>,
        line: usize,
    },
    Break,
    Continue,
}

/// A control structure: its pipeline, its body and its `else`.
#[derive(Debug, Clone)]
pub struct Branch {
    pub pipe: Pipe,
    pub body: List,
    pub otherwise: List,
}

/// `$a, $b := cmd | cmd`.
#[derive(Debug, Clone)]
pub struct Pipe {
    pub line: usize,
    /// The variables the pipeline declares or assigns.
    pub vars: Vec<String>,
    /// True for `=`, false for `:=`.
    pub assigns: bool,
    pub commands: Vec<Command>,
}

/// A function and its arguments, or one operand.
#[derive(Debug, Clone)]
pub struct Command {
    pub args: Vec<Operand>,
}

#[derive(Debug, Clone)]
pub enum Operand {
    /// `.`
    Dot,
    /// `.A.B`: fields of dot.
    Fields(Vec<String>),
    /// `$x.A.B`
    Var(String, Vec<String>),
    /// A function's name.
    Func(String),
    /// `(pipeline).A.B`
    Group(Box<Pipe>, Vec<String>),
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Nil,
}

/// A parse failure: the message and the line.
type Failure = (String, usize);

/// What ended a list: `end` or `else`, and its line; `None` at the end of input.
type Ending = Option<Failure>;

/// Templates by name: the main one and those it defines.
pub type Trees = BTreeMap<String, List>;

/// Parse `tokens` as the template `name`; `is_func` says which names are
/// functions. Errors carry the line.
pub fn parse(
    name: &str,
    tokens: Vec<Token>,
    is_func: &dyn Fn(&str) -> bool,
) -> Result<Trees, Failure> {
    let mut parser = Parser {
        tokens,
        at: 0,
        is_func,
        trees: Trees::new(),
        vars: vec![vec!["$".to_string()]],
        range_depth: 0,
        depth: 0,
    };
    let (list, end) = parser.list()?;
    if let Some((word, line)) = end {
        return Err((format!("unexpected {{{{{word}}}}}"), line));
    }
    parser.trees.insert(name.to_string(), list);
    Ok(parser.trees)
}

struct Parser<'a> {
    tokens: Vec<Token>,
    at: usize,
    is_func: &'a dyn Fn(&str) -> bool,
    trees: Trees,
    /// Variables in scope, one frame per control structure.
    vars: Vec<Vec<String>>,
    range_depth: usize,
    /// Controls and parentheses open around the token being read.
    depth: usize,
}

/// Controls and parentheses nested deeper than this are refused: the
/// parser and the evaluator recurse into them.
const MAX_NESTING: usize = 100;

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn peek_kind(&self) -> Option<&Kind> {
        self.peek().map(|t| &t.kind)
    }

    fn next(&mut self) -> Option<Token> {
        let token = self.tokens.get(self.at).cloned();
        self.at += 1;
        token
    }

    fn line(&self) -> usize {
        self.peek()
            .or_else(|| self.tokens.last())
            .map_or(1, |t| t.line)
    }

    fn error<T>(&self, message: impl Into<String>) -> Result<T, Failure> {
        Err((message.into(), self.line()))
    }

    fn expect_close(&mut self, context: &str) -> Result<(), Failure> {
        match self.next() {
            Some(Token {
                kind: Kind::Close, ..
            }) => Ok(()),
            Some(t) => Err((format!("unexpected {:?} in {context}", t.kind), t.line)),
            None => self.error(format!("unexpected end in {context}")),
        }
    }

    /// Nodes up to an `{{end}}` or `{{else …}}` (its word and line), or the end.
    fn list(&mut self) -> Result<(List, Ending), Failure> {
        let mut list = List::new();
        while let Some(token) = self.next() {
            match token.kind {
                Kind::Text(text) => list.push(Node::Text(text)),
                Kind::Open => {
                    let line = self.line();
                    match self.peek_kind() {
                        Some(Kind::Ident(word)) if word == "end" => {
                            self.at += 1;
                            self.expect_close("end")?;
                            return Ok((list, Some(("end".to_string(), line))));
                        }
                        Some(Kind::Ident(word)) if word == "else" => {
                            self.at += 1;
                            return Ok((list, Some(("else".to_string(), line))));
                        }
                        _ => {}
                    }
                    if let Some(node) = self.action()? {
                        list.push(node);
                    }
                }
                other => return Err((format!("unexpected {other:?}"), token.line)),
            }
        }
        Ok((list, None))
    }

    /// The action after `{{`; `None` for a `define`.
    fn action(&mut self) -> Result<Option<Node>, Failure> {
        let line = self.line();
        let keyword = match self.peek_kind() {
            Some(Kind::Ident(word)) => word.clone(),
            _ => String::new(),
        };
        match keyword.as_str() {
            "if" | "range" | "with" => {
                self.at += 1;
                self.control(&keyword).map(Some)
            }
            "define" => {
                self.at += 1;
                let name = self.template_name()?;
                self.expect_close("define")?;
                let saved = std::mem::replace(&mut self.vars, vec![vec!["$".to_string()]]);
                let (body, end) = self.list()?;
                self.vars = saved;
                self.require_end(end, "define")?;
                self.trees.insert(name, body);
                Ok(None)
            }
            "block" => {
                self.at += 1;
                let name = self.template_name()?;
                let data = self.pipe("block", false)?;
                let saved = std::mem::replace(&mut self.vars, vec![vec!["$".to_string()]]);
                let (body, end) = self.list()?;
                self.vars = saved;
                self.require_end(end, "block")?;
                self.trees.insert(name.clone(), body);
                Ok(Some(Node::Template {
                    name,
                    data: Some(data),
                    line,
                }))
            }
            "template" => {
                self.at += 1;
                let name = self.template_name()?;
                let data = if matches!(self.peek_kind(), Some(Kind::Close)) {
                    self.at += 1;
                    None
                } else {
                    Some(self.pipe("template", false)?)
                };
                Ok(Some(Node::Template { name, data, line }))
            }
            "break" | "continue" => {
                self.at += 1;
                if self.range_depth == 0 {
                    return self.error(format!("{{{{{keyword}}}}} outside {{{{range}}}}"));
                }
                self.expect_close(&keyword)?;
                Ok(Some(if keyword == "break" {
                    Node::Break
                } else {
                    Node::Continue
                }))
            }
            _ => Ok(Some(Node::Action(self.pipe("command", true)?))),
        }
    }

    fn template_name(&mut self) -> Result<String, Failure> {
        match self.next() {
            Some(Token {
                kind: Kind::Str(name),
                ..
            }) => Ok(name),
            _ => self.error("expected a quoted template name"),
        }
    }

    fn require_end(&self, end: Option<Failure>, context: &str) -> Result<(), Failure> {
        match end {
            Some((word, _)) if word == "end" => Ok(()),
            Some((word, line)) => Err((format!("unexpected {{{{{word}}}}} in {context}"), line)),
            None => self.error(format!("unexpected end of input in {context}")),
        }
    }

    /// `if`, `range`, `with` after their keyword.
    fn control(&mut self, keyword: &str) -> Result<Node, Failure> {
        self.nested()?;
        let node = self.control_body(keyword);
        self.depth -= 1;
        node
    }

    /// One level deeper, unless that is too deep.
    fn nested(&mut self) -> Result<(), Failure> {
        if self.depth >= MAX_NESTING {
            return self.error(format!("nested more than {MAX_NESTING} deep"));
        }
        self.depth += 1;
        Ok(())
    }

    fn control_body(&mut self, keyword: &str) -> Result<Node, Failure> {
        self.vars.push(Vec::new());
        let pipe = self.pipe(keyword, true)?;
        if keyword == "range" {
            self.range_depth += 1;
        }
        let body = self.list();
        if keyword == "range" {
            self.range_depth -= 1;
        }
        let (body, end) = body?;
        let otherwise = match end {
            Some((word, _)) if word == "end" => List::new(),
            Some((word, _)) if word == "else" => {
                // `else if …` and `else with …` chain a new control into the else.
                match self.peek_kind() {
                    Some(Kind::Ident(next))
                        if (next == "if" || next == "with") && keyword != "range" =>
                    {
                        let next = next.clone();
                        self.at += 1;
                        vec![self.control(&next)?]
                    }
                    _ => {
                        self.expect_close("else")?;
                        let (otherwise, end) = self.list()?;
                        self.require_end(end, keyword)?;
                        otherwise
                    }
                }
            }
            _ => return self.error(format!("unexpected end of input in {{{{{keyword}}}}}")),
        };
        self.vars.pop();
        let branch = Branch {
            pipe,
            body,
            otherwise,
        };
        Ok(match keyword {
            "if" => Node::If(branch),
            "range" => Node::Range(branch),
            _ => Node::With(branch),
        })
    }

    fn declared(&self, name: &str) -> bool {
        self.vars
            .iter()
            .any(|frame| frame.iter().any(|v| v == name))
    }

    /// A pipeline up to `}}` (or `)` when `in_group`), with its declaration.
    fn pipe(&mut self, context: &str, may_declare: bool) -> Result<Pipe, Failure> {
        self.pipeline(context, may_declare, false)
    }

    fn pipeline(
        &mut self,
        context: &str,
        may_declare: bool,
        in_group: bool,
    ) -> Result<Pipe, Failure> {
        let line = self.line();
        let mut vars = Vec::new();
        let mut assigns = false;
        if may_declare {
            let start = self.at;
            while let Some(Kind::Var(name)) = self.peek_kind().cloned() {
                self.at += 1;
                match self.peek_kind() {
                    Some(Kind::Declare) => {
                        vars.push(name);
                        self.at += 1;
                        break;
                    }
                    Some(Kind::Assign) => {
                        vars.push(name);
                        assigns = true;
                        self.at += 1;
                        break;
                    }
                    Some(Kind::Comma) if context == "range" && vars.is_empty() => {
                        vars.push(name);
                        self.at += 1;
                    }
                    _ => {
                        // Not a declaration: `$x.Field | f`.
                        vars.clear();
                        self.at = start;
                        break;
                    }
                }
            }
            for var in &vars {
                if assigns {
                    if !self.declared(var) {
                        return self.error(format!("undefined variable: {var}"));
                    }
                } else if let Some(frame) = self.vars.last_mut() {
                    frame.push(var.clone());
                }
            }
        }
        let mut commands = Vec::new();
        loop {
            let command = self.command(context)?;
            commands.push(command);
            match self.next() {
                Some(Token {
                    kind: Kind::Pipe, ..
                }) => continue,
                Some(Token {
                    kind: Kind::Close, ..
                }) if !in_group => break,
                Some(Token {
                    kind: Kind::RParen, ..
                }) if in_group => break,
                Some(t) => return Err((format!("unexpected {:?} in {context}", t.kind), t.line)),
                None => return self.error(format!("unexpected end in {context}")),
            }
        }
        Ok(Pipe {
            line,
            vars,
            assigns,
            commands,
        })
    }

    fn command(&mut self, context: &str) -> Result<Command, Failure> {
        let mut args = Vec::new();
        while let Some(kind) = self.peek_kind() {
            if matches!(kind, Kind::Pipe | Kind::Close | Kind::RParen) {
                break;
            }
            args.push(self.operand()?);
        }
        if args.is_empty() {
            return self.error(format!("missing value for {context}"));
        }
        Ok(Command { args })
    }

    fn operand(&mut self) -> Result<Operand, Failure> {
        let Some(token) = self.next() else {
            return self.error("unexpected end");
        };
        let operand = match token.kind {
            Kind::Dot => Operand::Dot,
            Kind::Field(name) => {
                let mut chain = vec![name];
                chain.extend(self.chain());
                return Ok(Operand::Fields(chain));
            }
            Kind::Var(name) => {
                if !self.declared(&name) {
                    return Err((format!("undefined variable {name:?}"), token.line));
                }
                let chain = self.chain();
                return Ok(Operand::Var(name, chain));
            }
            Kind::LParen => {
                self.nested()?;
                let pipe = self.pipeline("parenthesized pipeline", true, true);
                self.depth -= 1;
                let pipe = pipe?;
                let chain = self.chain();
                return Ok(Operand::Group(Box::new(pipe), chain));
            }
            Kind::Ident(name) => match name.as_str() {
                "true" => Operand::Bool(true),
                "false" => Operand::Bool(false),
                "nil" => Operand::Nil,
                _ if (self.is_func)(&name) => Operand::Func(name),
                _ => return Err((format!("function {name:?} not defined"), token.line)),
            },
            Kind::Str(s) => Operand::Str(s),
            Kind::Int(i) => Operand::Int(i),
            Kind::Float(f) => Operand::Float(f),
            other => return Err((format!("unexpected {other:?} in operand"), token.line)),
        };
        Ok(operand)
    }

    /// Field names that follow with no space: `.A.B`, `(…).A`.
    fn chain(&mut self) -> Vec<String> {
        let mut chain = Vec::new();
        while let Some(Token {
            kind: Kind::Field(name),
            spaced: false,
            ..
        }) = self.peek()
        {
            chain.push(name.clone());
            self.at += 1;
        }
        chain
    }
}

#[cfg(test)]
mod tests {
    use super::super::lex::lex;
    use super::*;

    fn trees(text: &str) -> Result<Trees, Failure> {
        parse("t", lex(text).unwrap(), &|name| ["f", "g"].contains(&name))
    }

    #[test]
    fn controls_nest_with_else_chains() {
        let trees = trees("{{if .A}}a{{else if .B}}b{{else}}c{{end}}").unwrap();
        let Node::If(branch) = &trees["t"][0] else {
            panic!()
        };
        assert!(matches!(branch.otherwise[0], Node::If(_)));
    }

    #[test]
    fn defines_are_trees_of_their_own() {
        let trees = trees(r#"{{define "x"}}in{{end}}out{{template "x" .}}"#).unwrap();
        assert_eq!(trees.len(), 2);
        assert!(matches!(trees["x"][0], Node::Text(_)));
        assert!(matches!(trees["t"][1], Node::Template { .. }));
    }

    #[test]
    fn variables_must_be_declared_before_use() {
        assert!(trees("{{$x := 1}}{{$x = 2}}{{$x}}").is_ok());
        assert_eq!(trees("{{$y}}").unwrap_err().0, "undefined variable \"$y\"");
        assert!(trees("{{range $i, $v := .}}{{$i}}{{end}}").is_ok());
        // A variable declared in a control is gone after its end.
        assert!(trees("{{if 1}}{{$z := 1}}{{end}}{{$z}}").is_err());
    }

    #[test]
    fn unknown_functions_and_stray_ends_are_errors_with_a_line() {
        assert_eq!(
            trees("\n{{ h 1 }}").unwrap_err(),
            ("function \"h\" not defined".to_string(), 2)
        );
        assert!(trees("{{end}}").is_err());
        assert!(trees("{{if 1}}").is_err());
        assert!(trees("{{break}}").is_err());
    }

    #[test]
    fn nesting_has_a_limit() {
        let deep = "{{ if 1 }}".repeat(150) + &"{{ end }}".repeat(150);
        assert!(trees(&deep).unwrap_err().0.contains("nested more than"));
        let parens = format!("{{{{ {}1{} }}}}", "(".repeat(150), ")".repeat(150));
        assert!(trees(&parens).unwrap_err().0.contains("nested more than"));
        let fine = "{{ if 1 }}".repeat(50) + &"{{ end }}".repeat(50);
        assert!(trees(&fine).is_ok());
    }

    #[test]
    fn groups_take_a_chain() {
        let trees = trees("{{ (f .A).B | g }}").unwrap();
        let Node::Action(pipe) = &trees["t"][0] else {
            panic!()
        };
        assert_eq!(pipe.commands.len(), 2);
        let Operand::Group(_, chain) = &pipe.commands[0].args[0] else {
            panic!()
        };
        assert_eq!(chain, &["B".to_string()]);
    }
}

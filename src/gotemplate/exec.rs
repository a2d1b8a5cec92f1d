//! Running a parsed template over data, as Go's `text/template` runs it.

use std::rc::Rc;

use super::parse::{Branch, Command, List, Node, Operand, Pipe, Trees};
use super::value::Value;
use super::{Call, Error, Funcs};

/// Templates calling templates deeper than this stop with an error
/// (Go allows far more, but a stack this deep is a loop).
const MAX_DEPTH: usize = 200;

/// Which strings a run watches, and the calls given one so far.
pub type Watch<'w> = (&'w dyn Fn(&str) -> bool, &'w mut Vec<Call>);

/// Run template `name` of `trees` with `data` as dot, recording the calls
/// given a watched string (see [`super::Template::execute_watching`]).
pub fn execute(
    trees: &Trees,
    funcs: &Funcs,
    name: &str,
    data: &Value,
    watch: Option<Watch<'_>>,
) -> Result<String, Error> {
    let mut exec = Exec {
        trees,
        funcs,
        template: name.to_string(),
        vars: vec![("$".to_string(), data.clone())],
        out: String::new(),
        depth: 0,
        watch,
    };
    let list = trees.get(name).ok_or_else(|| Error {
        template: name.to_string(),
        line: 0,
        message: format!("no template {name:?}"),
    })?;
    exec.walk(list, data)?;
    Ok(exec.out)
}

/// How a list ended: normally, or by `break` or `continue`.
#[derive(PartialEq)]
enum Flow {
    Next,
    Break,
    Continue,
}

struct Exec<'a> {
    trees: &'a Trees,
    funcs: &'a Funcs,
    /// The template running, for messages.
    template: String,
    /// Variables in scope, innermost last.
    vars: Vec<(String, Value)>,
    out: String,
    depth: usize,
    watch: Option<Watch<'a>>,
}

impl Exec<'_> {
    fn error(&self, line: usize, message: impl Into<String>) -> Error {
        Error {
            template: self.template.clone(),
            line,
            message: message.into(),
        }
    }

    fn walk(&mut self, list: &List, dot: &Value) -> Result<Flow, Error> {
        for node in list {
            let flow = self.node(node, dot)?;
            if flow != Flow::Next {
                return Ok(flow);
            }
        }
        Ok(Flow::Next)
    }

    fn node(&mut self, node: &Node, dot: &Value) -> Result<Flow, Error> {
        match node {
            Node::Text(text) => self.out.push_str(text),
            Node::Action(pipe) => {
                let value = self.pipe(pipe, dot)?;
                if pipe.vars.is_empty() {
                    self.unwatched_order(&value, pipe.line)?;
                    match value {
                        Value::Nil => self.out.push_str("<no value>"),
                        value => self.out.push_str(&value.print()),
                    }
                }
            }
            Node::If(branch) => return self.scoped(|exec| exec.if_with(branch, dot, false)),
            Node::With(branch) => return self.scoped(|exec| exec.if_with(branch, dot, true)),
            Node::Range(branch) => return self.scoped(|exec| exec.range(branch, dot)),
            Node::Template { name, data, line } => {
                let data = match data {
                    Some(pipe) => self.pipe(pipe, dot)?,
                    None => Value::Nil,
                };
                self.run_template(name, data, *line)?;
            }
            Node::Break => return Ok(Flow::Break),
            Node::Continue => return Ok(Flow::Continue),
        }
        Ok(Flow::Next)
    }

    /// Run the template `name` with `data` as dot, writing to the output.
    fn run_template(&mut self, name: &str, data: Value, line: usize) -> Result<(), Error> {
        let list = self
            .trees
            .get(name)
            .ok_or_else(|| self.error(line, format!("no such template {name:?}")))?;
        if self.depth >= MAX_DEPTH {
            return Err(self.error(line, format!("template {name:?} calls itself too deeply")));
        }
        let saved_vars = std::mem::replace(&mut self.vars, vec![("$".to_string(), data.clone())]);
        let saved_name = std::mem::replace(&mut self.template, name.to_string());
        self.depth += 1;
        let result = self.walk(list, &data);
        self.depth -= 1;
        self.template = saved_name;
        self.vars = saved_vars;
        result.map(|_| ())
    }

    /// Helm's `include NAME DATA`: the template's output as a string (Go's
    /// `template` action writes it; `include` lets a pipeline go on with it).
    fn include(&mut self, args: &[Value], line: usize) -> Result<Value, Error> {
        let (Some(name), data) = (args.first(), args.get(1)) else {
            return Err(self.error(
                line,
                "error calling include: wrong number of args: want 2 got 0",
            ));
        };
        if args.len() != 2 {
            return Err(self.error(
                line,
                format!(
                    "error calling include: wrong number of args: want 2 got {}",
                    args.len()
                ),
            ));
        }
        let Some(name) = name.as_str() else {
            return Err(self.error(
                line,
                "error calling include: the template's name is not a string",
            ));
        };
        if !self.trees.contains_key(name) {
            return Err(self.error(
                line,
                format!("error calling include: template: no template {name:?} associated with template {:?}", self.template),
            ));
        }
        let outer = std::mem::take(&mut self.out);
        let result = self.run_template(name, data.cloned().unwrap_or(Value::Nil), line);
        let text = std::mem::replace(&mut self.out, outer);
        result.map(|()| Value::str(text))
    }

    /// Run `f` with the variables it declares dropped afterwards.
    fn scoped(&mut self, f: impl FnOnce(&mut Self) -> Result<Flow, Error>) -> Result<Flow, Error> {
        let mark = self.vars.len();
        let result = f(self);
        self.vars.truncate(mark);
        result
    }

    fn if_with(&mut self, branch: &Branch, dot: &Value, with: bool) -> Result<Flow, Error> {
        let value = self.pipe(&branch.pipe, dot)?;
        if value.truthy() {
            let dot = if with { &value } else { dot };
            self.walk(&branch.body, dot)
        } else {
            self.walk(&branch.otherwise, dot)
        }
    }

    /// In a watched run, a map keyed by a watched string is neither ranged
    /// nor printed: both go in key order, which the string may change, and
    /// no call records it.
    fn unwatched_order(&self, value: &Value, line: usize) -> Result<(), Error> {
        match &self.watch {
            Some((watched, _)) if value.keyed_by(*watched) => Err(self.error(
                line,
                "a map keyed by a watched string is ranged or printed in key order",
            )),
            _ => Ok(()),
        }
    }

    fn range(&mut self, branch: &Branch, dot: &Value) -> Result<Flow, Error> {
        let value = self.commands(&branch.pipe, dot)?;
        if let Value::Map(_) = &value {
            self.unwatched_order(&value, branch.pipe.line)?;
        }
        let items: Vec<(Value, Value)> = match &value {
            Value::List(items) => items
                .iter()
                .enumerate()
                .map(|(i, v)| (Value::Int(i64::try_from(i).unwrap_or(i64::MAX)), v.clone()))
                .collect(),
            Value::Map(map) => map
                .entries
                .iter()
                .map(|(k, v)| (Value::str(k.as_str()), v.clone()))
                .collect(),
            // Counted as it goes: `range 1000000000` holds no list.
            Value::Int(n) if *n > 0 => return self.range_count(branch, *n),
            Value::Int(_) => Vec::new(),
            Value::Nil | Value::Zero => Vec::new(),
            other => {
                return Err(self.error(
                    branch.pipe.line,
                    format!("range can't iterate over {}", other.print()),
                ));
            }
        };
        if items.is_empty() {
            return self.walk(&branch.otherwise, dot);
        }
        for (key, item) in items {
            let mark = self.vars.len();
            match branch.pipe.vars.as_slice() {
                [] => {}
                [one] => self.vars.push((one.clone(), item.clone())),
                [first, second, ..] => {
                    self.vars.push((first.clone(), key));
                    self.vars.push((second.clone(), item.clone()));
                }
            }
            let flow = self.walk(&branch.body, &item);
            self.vars.truncate(mark);
            if flow? == Flow::Break {
                break;
            }
        }
        Ok(Flow::Next)
    }

    /// `range N`: the body for 0 to N-1.
    fn range_count(&mut self, branch: &Branch, n: i64) -> Result<Flow, Error> {
        for i in 0..n {
            let item = Value::Int(i);
            let mark = self.vars.len();
            for var in &branch.pipe.vars {
                self.vars.push((var.clone(), item.clone()));
            }
            let flow = self.walk(&branch.body, &item);
            self.vars.truncate(mark);
            if flow? == Flow::Break {
                break;
            }
        }
        Ok(Flow::Next)
    }

    /// A pipeline's value, with its variables declared or assigned.
    fn pipe(&mut self, pipe: &Pipe, dot: &Value) -> Result<Value, Error> {
        let value = self.commands(pipe, dot)?;
        for var in &pipe.vars {
            if pipe.assigns {
                let slot = self.vars.iter_mut().rev().find(|(name, _)| name == var);
                match slot {
                    Some((_, slot)) => *slot = value.clone(),
                    None => return Err(self.error(pipe.line, format!("undefined variable: {var}"))),
                }
            } else {
                self.vars.push((var.clone(), value.clone()));
            }
        }
        Ok(value)
    }

    fn commands(&mut self, pipe: &Pipe, dot: &Value) -> Result<Value, Error> {
        let mut previous = None;
        for command in &pipe.commands {
            previous = Some(self.command(command, dot, previous, pipe.line)?);
        }
        Ok(previous.unwrap_or(Value::Nil))
    }

    fn command(
        &mut self,
        command: &Command,
        dot: &Value,
        previous: Option<Value>,
        line: usize,
    ) -> Result<Value, Error> {
        let Some((first, rest)) = command.args.split_first() else {
            return Err(self.error(line, "empty command"));
        };
        match first {
            Operand::Func(name) => self.call(name, rest, dot, previous, line),
            operand => {
                if !rest.is_empty() || previous.is_some() {
                    return Err(self.error(line, "can't give argument to non-function"));
                }
                self.operand(operand, dot, line)
            }
        }
    }

    fn call(
        &mut self,
        name: &str,
        args: &[Operand],
        dot: &Value,
        previous: Option<Value>,
        line: usize,
    ) -> Result<Value, Error> {
        // `and` and `or` stop at the first argument that decides them.
        if name == "and" || name == "or" {
            let count = args.len() + usize::from(previous.is_some());
            if count == 0 {
                return Err(self.error(
                    line,
                    format!("wrong number of args for {name}: want at least 1 got 0"),
                ));
            }
            let mut last = Value::Nil;
            for arg in args {
                last = self.operand(arg, dot, line)?;
                if last.truthy() != (name == "and") {
                    return Ok(last);
                }
            }
            return Ok(previous.unwrap_or(last));
        }
        let mut values = Vec::with_capacity(args.len() + 1);
        for arg in args {
            values.push(self.operand(arg, dot, line)?);
        }
        values.extend(previous);
        if name == "include" {
            return self.include(&values, line);
        }
        let func = self
            .funcs
            .get(name)
            .ok_or_else(|| self.error(line, format!("function {name:?} not defined")))?;
        let result = func(&values);
        if let (Ok(changed), Some(Operand::Var(var, chain))) = (&result, args.first()) {
            if super::sprig::dicts::CHANGING.contains(&name) {
                self.store(var, chain, changed.clone());
            }
        }
        if let Some((watched, calls)) = &mut self.watch {
            if self.funcs.depends_on(name, &values, *watched) {
                calls.push(Call {
                    func,
                    args: values,
                    result: result.clone(),
                });
            }
        }
        result.map_err(|message| self.error(line, format!("error calling {name}: {message}")))
    }

    /// Store a map a function changed (Sprig's `set`, `merge`…) back where
    /// it was read from: variable `var`, at the keys of `chain` in it.
    fn store(&mut self, var: &str, chain: &[String], changed: Value) {
        let Some((_, slot)) = self.vars.iter_mut().rev().find(|(name, _)| name == var) else {
            return;
        };
        if let Some(updated) = with_entry(slot, chain, changed) {
            *slot = updated;
        }
    }

    fn operand(&mut self, operand: &Operand, dot: &Value, line: usize) -> Result<Value, Error> {
        match operand {
            Operand::Dot => Ok(dot.clone()),
            Operand::Fields(chain) => self.fields(dot.clone(), chain, line),
            Operand::Var(name, chain) => {
                let value = self
                    .vars
                    .iter()
                    .rev()
                    .find(|(var, _)| var == name)
                    .map(|(_, value)| value.clone())
                    .ok_or_else(|| self.error(line, format!("undefined variable: {name}")))?;
                self.fields(value, chain, line)
            }
            Operand::Func(name) => self.call(name, &[], dot, None, line),
            Operand::Group(pipe, chain) => {
                let value = self.commands(pipe, dot)?;
                self.fields(value, chain, line)
            }
            Operand::Str(s) => Ok(Value::str(s.as_str())),
            Operand::Int(i) => Ok(Value::Int(*i)),
            Operand::Float(f) => Ok(Value::Float(*f)),
            Operand::Bool(b) => Ok(Value::Bool(*b)),
            Operand::Nil => Ok(Value::Nil),
        }
    }

    /// `value.A.B…`: struct fields, map keys (a missing key is no value).
    fn fields(&self, mut value: Value, chain: &[String], line: usize) -> Result<Value, Error> {
        for name in chain {
            value = match &value {
                Value::Struct(_) => value.field(name).cloned().unwrap_or(Value::Zero),
                Value::Map(map) => map.entries.get(name).cloned().unwrap_or(Value::Nil),
                Value::Time(_) | Value::Version(_) => match value.method(name) {
                    Some(result) => result,
                    None => {
                        return Err(self.error(
                            line,
                            format!("can't evaluate field {name} in type {}", value.type_name()),
                        ));
                    }
                },
                Value::Zero => Value::Zero,
                // A proto enum or duration prints as its name: `.Mode.String`.
                Value::Str(_) if name == "String" => value.clone(),
                // A proto wrapper (`google.protobuf.BoolValue`, `Int32Value`,
                // …) is its bare value in JSON: `.GetValue` reads it.
                Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_)
                    if matches!(name.as_str(), "Value" | "GetValue") =>
                {
                    value.clone()
                }
                Value::Nil => {
                    return Err(self.error(
                        line,
                        format!("nil pointer evaluating interface {{}}.{name}"),
                    ));
                }
                other => {
                    return Err(self.error(
                        line,
                        format!("can't evaluate field {name} in type {}", other.type_name()),
                    ));
                }
            };
        }
        Ok(value)
    }
}

/// `value` with the entry at the map keys of `chain` replaced by `entry`;
/// `None` when the chain does not lead through maps.
fn with_entry(value: &Value, chain: &[String], entry: Value) -> Option<Value> {
    let Some((key, rest)) = chain.split_first() else {
        return Some(entry);
    };
    let Value::Map(map) = value else {
        return None;
    };
    let inner = with_entry(map.entries.get(key)?, rest, entry)?;
    let mut map = (**map).clone();
    map.entries.insert(key.clone(), inner);
    Some(Value::Map(Rc::new(map)))
}

/// A list value (for functions that build them).
pub fn list(items: Vec<Value>) -> Value {
    Value::List(Rc::new(items))
}

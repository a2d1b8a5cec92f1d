//! The crate's top-level modules form no cycle: a module below another (the
//! YAML reader below the pipeline, the cluster's objects below the rules)
//! never names it, so that each can be read, tested and changed from the
//! bottom up. Every `crate::x` a module's code names counts (its `use`s, the
//! paths in its code, those in macros and attributes); its unit tests do not.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// The top-level module of each file under `src/` (`src/yaml/edit/mod.rs`
/// is `yaml`), the crate roots left out.
fn top_level_files() -> Vec<(String, PathBuf)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path.strip_prefix(&src).unwrap();
            let first = relative.components().next().unwrap().as_os_str();
            let module = first.to_str().unwrap().trim_end_matches(".rs").to_string();
            if module != "lib" && module != "main" {
                files.push((module, path));
            }
        }
    }
    files.sort();
    files
}

/// The top-level modules a file's code names as `crate::x`.
#[derive(Default)]
struct Named(BTreeSet<String>);

impl Named {
    /// `crate :: x` in tokens (a macro's body, an attribute's arguments).
    fn in_tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        for (at, tree) in trees.iter().enumerate() {
            match tree {
                TokenTree::Group(group) => self.in_tokens(group.stream()),
                TokenTree::Ident(ident) if ident == "crate" => {
                    if let [
                        TokenTree::Punct(a),
                        TokenTree::Punct(b),
                        TokenTree::Ident(module),
                        ..,
                    ] = &trees[at + 1..]
                        && a.as_char() == ':'
                        && b.as_char() == ':'
                    {
                        self.0.insert(module.to_string());
                    }
                }
                _ => {}
            }
        }
    }
}

/// Whether an item is only compiled for the tests.
fn for_tests(attributes: &[syn::Attribute]) -> bool {
    attributes.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|meta| meta.path().is_ident("test"))
    })
}

impl<'ast> Visit<'ast> for Named {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attributes = match item {
            syn::Item::Const(i) => &i.attrs,
            syn::Item::Enum(i) => &i.attrs,
            syn::Item::Fn(i) => &i.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Mod(i) => &i.attrs,
            syn::Item::Static(i) => &i.attrs,
            syn::Item::Struct(i) => &i.attrs,
            syn::Item::Trait(i) => &i.attrs,
            syn::Item::Type(i) => &i.attrs,
            syn::Item::Use(i) => &i.attrs,
            syn::Item::Macro(i) => &i.attrs,
            _ => return syn::visit::visit_item(self, item),
        };
        if !for_tests(attributes) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_impl_item_fn(&mut self, function: &'ast syn::ImplItemFn) {
        if !for_tests(&function.attrs) {
            syn::visit::visit_impl_item_fn(self, function);
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        if let syn::UseTree::Path(path) = &item.tree
            && path.ident == "crate"
        {
            let mut trees = vec![&*path.tree];
            while let Some(tree) = trees.pop() {
                match tree {
                    syn::UseTree::Path(p) => drop(self.0.insert(p.ident.to_string())),
                    syn::UseTree::Name(n) => drop(self.0.insert(n.ident.to_string())),
                    syn::UseTree::Rename(r) => drop(self.0.insert(r.ident.to_string())),
                    syn::UseTree::Group(g) => trees.extend(g.items.iter()),
                    syn::UseTree::Glob(_) => {}
                }
            }
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let mut segments = path.segments.iter();
        if let (Some(first), Some(second)) = (segments.next(), segments.next())
            && first.ident == "crate"
        {
            self.0.insert(second.ident.to_string());
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.in_tokens(mac.tokens.clone());
        syn::visit::visit_macro(self, mac);
    }

    fn visit_attribute(&mut self, attribute: &'ast syn::Attribute) {
        if let syn::Meta::List(list) = &attribute.meta {
            self.in_tokens(list.tokens.clone());
        }
    }
}

/// Each top-level module's edges: the modules it names, each with the
/// files that name it.
fn module_graph() -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = top_level_files();
    let modules: BTreeSet<String> = files.iter().map(|(m, _)| m.clone()).collect();
    let mut graph: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (module, path) in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut named = Named::default();
        named.visit_file(&file);
        let edges = graph.entry(module.clone()).or_default();
        for other in named.0 {
            if other != *module && modules.contains(&other) {
                let shown = path.strip_prefix(&src).unwrap().display().to_string();
                edges.entry(other).or_default().insert(shown);
            }
        }
    }
    graph
}

/// The groups of modules that name each other in a ring (Tarjan's strongly
/// connected components of more than one module).
fn cycles(graph: &BTreeMap<String, BTreeMap<String, BTreeSet<String>>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, module: &'a str) {
            let at = self.index.len();
            self.index.insert(module, at);
            self.low.insert(module, at);
            self.stack.push(module);
            for next in self.graph.get(module).into_iter().flat_map(|e| e.keys()) {
                let next = next.as_str();
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[module].min(self.low[next]);
                    self.low.insert(module, low);
                } else if self.stack.contains(&next) {
                    let low = self.low[module].min(self.index[next]);
                    self.low.insert(module, low);
                }
            }
            if self.low[module] == self.index[module] {
                let mut group = Vec::new();
                while let Some(member) = self.stack.pop() {
                    group.push(member.to_string());
                    if member == module {
                        break;
                    }
                }
                if group.len() > 1 {
                    group.sort();
                    self.found.push(group);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for module in graph.keys() {
        if !walk.index.contains_key(module.as_str()) {
            walk.visit(module);
        }
    }
    walk.found
}

#[test]
fn top_level_modules_form_no_cycle() {
    let graph = module_graph();
    let mut said = String::new();
    for group in cycles(&graph) {
        said.push_str(&format!(
            "these modules name each other: {}\n",
            group.join(", ")
        ));
        for from in &group {
            for (to, files) in &graph[from] {
                if group.contains(to) {
                    let files: Vec<&str> = files.iter().map(String::as_str).collect();
                    said.push_str(&format!("  {from} -> {to} (in {})\n", files.join(", ")));
                }
            }
        }
    }
    assert!(
        said.is_empty(),
        "{said}move what both need into the lower one, or into a module below both"
    );
}

/// No state a reader cannot see in a function's signature: every cache
/// is a value its owner (the run, or one worker) makes and passes where it
/// is used (see `src/reuse/mod.rs`), and none lives in a `thread_local!`
/// or a `static` that changes.
#[test]
fn no_cache_is_kept_out_of_sight() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    for (_, path) in top_level_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let shown = path.strip_prefix(&src).unwrap().display().to_string();
        for hidden in ["thread_local!", "static mut ", "RefCell<", "Mutex<"] {
            let in_statics = text
                .lines()
                .filter(|line| {
                    line.trim_start().starts_with("static ") || hidden == "thread_local!"
                })
                .any(|line| line.contains(hidden));
            if in_statics {
                found.push(format!("{shown}: {hidden}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "state out of sight in {found:?}: pass the cache where it is used instead"
    );
}

/// The longest a function may be, from `fn` to its closing brace: past
/// that, a reader no longer sees its steps; name them as functions.
const FUNCTION_LINES_MAX: usize = 150;

/// The functions of a file longer than [`FUNCTION_LINES_MAX`], its tests
/// left out: each with its first line and length.
#[derive(Default)]
struct LongFunctions(Vec<(String, usize, usize)>);

impl LongFunctions {
    fn measure(&mut self, name: &syn::Ident, fn_token: &syn::token::Fn, block: &syn::Block) {
        let first = fn_token.span.start().line;
        let last = block.brace_token.span.close().end().line;
        let lines = last + 1 - first;
        if lines > FUNCTION_LINES_MAX {
            self.0.push((name.to_string(), first, lines));
        }
    }
}

impl<'ast> Visit<'ast> for LongFunctions {
    fn visit_item_fn(&mut self, function: &'ast syn::ItemFn) {
        if !for_tests(&function.attrs) {
            self.measure(&function.sig.ident, &function.sig.fn_token, &function.block);
            syn::visit::visit_item_fn(self, function);
        }
    }

    fn visit_impl_item_fn(&mut self, function: &'ast syn::ImplItemFn) {
        if !for_tests(&function.attrs) {
            self.measure(&function.sig.ident, &function.sig.fn_token, &function.block);
            syn::visit::visit_impl_item_fn(self, function);
        }
    }

    fn visit_item_mod(&mut self, module: &'ast syn::ItemMod) {
        if !for_tests(&module.attrs) {
            syn::visit::visit_item_mod(self, module);
        }
    }
}

#[test]
fn no_function_is_over_150_lines() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut said = String::new();
    for (_, path) in top_level_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let file = syn::parse_file(&text).unwrap();
        let mut long = LongFunctions::default();
        long.visit_file(&file);
        let shown = path.strip_prefix(&src).unwrap().display().to_string();
        for (name, line, lines) in long.0 {
            said.push_str(&format!("  {shown}:{line}: {name} is {lines} lines\n"));
        }
    }
    assert!(
        said.is_empty(),
        "functions over {FUNCTION_LINES_MAX} lines; tell their steps as functions:\n{said}"
    );
}

/// The measure counts from `fn` to the closing brace, and leaves tests out.
#[test]
fn a_long_function_is_found_and_a_long_test_is_not() {
    let body = "    let x = 1;\n".repeat(FUNCTION_LINES_MAX);
    let text = format!(
        "fn long() {{\n{body}}}\nfn short() {{}}\n#[cfg(test)]\nmod tests {{\n    fn long_test() {{\n{body}}}\n}}\n"
    );
    let file = syn::parse_file(&text).unwrap();
    let mut long = LongFunctions::default();
    long.visit_file(&file);
    assert_eq!(long.0, [("long".to_string(), 1, FUNCTION_LINES_MAX + 2)]);
}

/// The reading of names counts each way a module names another, and leaves
/// the tests out: a cycle made only by a test, or only by a macro, is told
/// apart.
#[test]
fn names_are_read_from_uses_paths_macros_and_attributes_not_tests() {
    let file: syn::File = syn::parse_str(
        r#"
        use crate::{alpha::A, beta};
        fn f() { crate::gamma::g(); format!("{}", crate::delta::D); }
        #[error("{}", crate::epsilon::e(.0))]
        struct S;
        #[cfg(test)]
        mod tests { use crate::zeta; }
        #[cfg(test)]
        fn only_tested() { crate::eta::h(); }
        impl S {
            #[cfg(test)]
            fn also_tested() { crate::theta::t(); }
        }
        "#,
    )
    .unwrap();
    let mut named = Named::default();
    named.visit_file(&file);
    let named: Vec<&str> = named.0.iter().map(String::as_str).collect();
    assert_eq!(named, ["alpha", "beta", "delta", "epsilon", "gamma"]);
}

#[test]
fn a_ring_of_modules_is_found_and_a_chain_is_not() {
    let edge = |to: &str| (to.to_string(), BTreeSet::from(["x.rs".to_string()]));
    let graph = BTreeMap::from([
        ("a".to_string(), BTreeMap::from([edge("b")])),
        ("b".to_string(), BTreeMap::from([edge("c")])),
        ("c".to_string(), BTreeMap::from([edge("a"), edge("d")])),
        ("d".to_string(), BTreeMap::from([edge("e")])),
        ("e".to_string(), BTreeMap::new()),
    ]);
    assert_eq!(cycles(&graph), [["a", "b", "c"]]);
}

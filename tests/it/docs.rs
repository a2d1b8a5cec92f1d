//! The user documentation holds together: README.md is a door of at most
//! 300 lines with a table of contents, and every link of it and of the
//! pages under docs/ leads to a file of the repository, and to a heading
//! of that page when it names one.

use crate::common;

use std::path::Path;

#[test]
fn the_readme_is_short_with_a_table_of_contents() {
    let readme = common::doc("README.md");
    let lines = readme.lines().count();
    assert!(lines <= 300, "README.md has {lines} lines");
    assert!(
        readme.contains("\n## Contents\n"),
        "README.md has no table of contents"
    );
    for (page, _) in common::docs().iter().skip(1) {
        let name = page.file_name().expect("a name").to_string_lossy();
        assert!(
            readme.contains(&format!("(docs/{name})")),
            "README.md does not link docs/{name}"
        );
    }
}

#[test]
fn every_link_leads_somewhere() {
    let pages = common::docs();
    let mut broken = Vec::new();
    let mut checked = 0;
    for (page, text) in &pages {
        let dir = page.parent().expect("a folder");
        for target in links(text) {
            if target.starts_with("http://") || target.starts_with("https://") {
                continue;
            }
            checked += 1;
            let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
            let path = match file {
                "" => page.clone(),
                file => dir.join(file),
            };
            if !path.exists() {
                broken.push(format!("{}: {target}: no such file", page.display()));
                continue;
            }
            if !anchor.is_empty() && !anchors(&path).iter().any(|a| a == anchor) {
                broken.push(format!("{}: {target}: no such heading", page.display()));
            }
        }
    }
    assert!(checked > 20, "only {checked} links found");
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// The targets of the Markdown links `[text](target)` of `text`, outside
/// code blocks and code spans.
fn links(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if in_block {
            continue;
        }
        // Code spans are what the odd pieces between backticks are.
        for (i, piece) in line.split('`').enumerate() {
            if i % 2 == 1 {
                continue;
            }
            let mut rest = piece;
            while let Some(at) = rest.find("](") {
                let after = &rest[at + 2..];
                let Some(end) = after.find(')') else { break };
                found.push(&after[..end]);
                rest = &after[end..];
            }
        }
    }
    found
}

/// The anchors GitHub makes of a page's headings: lower case, spaces as
/// `-`, punctuation other than `-` and `_` dropped.
fn anchors(page: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(page).expect("a page");
    let mut in_block = false;
    let mut found = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        let Some(title) = line.strip_prefix('#').filter(|_| !in_block) else {
            continue;
        };
        let title = title.trim_start_matches('#').trim();
        let anchor: String = title
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        found.push(anchor);
    }
    found
}

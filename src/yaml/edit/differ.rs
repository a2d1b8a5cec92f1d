//! The walk: the original node tree beside the target value, emitting the
//! edits that turn one into the other (block entries and items as whole
//! lines, flow collections entry by entry, scalars in place).

use super::*;

pub(super) struct Differ<'t> {
    pub(super) text: &'t str,
    pub(super) blocks: &'t mut Blocks,
    /// What to write as it was written before (see [`Kept`]).
    pub(super) kept: &'t Kept,
    /// Keys a merge brought that were written out (see [`Diffed`]).
    pub(super) materialised: Vec<String>,
    pub(super) layout: Layout,
    /// Resolves nodes of the document, aliases included.
    pub(super) resolver: Resolver,
    /// Anchors that some alias uses: editing inside them would change the alias too.
    pub(super) referenced: HashSet<usize>,
    pub(super) edits: Vec<Edit>,
}

impl Differ<'_> {
    pub(super) fn index_aliases(&mut self, node: &Node<'_>) {
        match &node.kind {
            NodeKind::Alias(id) => {
                self.referenced.insert(*id);
            }
            NodeKind::Map { entries, .. } => {
                for (k, v) in entries {
                    self.index_aliases(k);
                    self.index_aliases(v);
                }
            }
            NodeKind::Seq { items, .. } => items.iter().for_each(|item| self.index_aliases(item)),
            NodeKind::Scalar { .. } => {}
        }
    }

    /// The value of a node, aliases resolved through the document's anchors.
    pub(super) fn value(&mut self, node: &Node<'_>) -> Result<Value, EditError> {
        Ok(self.resolver.value(node)?)
    }

    /// Whether `node` already has the value `target`, compared in place
    /// (building the node's value only where aliases or merges are involved).
    pub(super) fn same(&mut self, node: &Node<'_>, target: &Value) -> Result<bool, EditError> {
        match (&node.kind, target) {
            (NodeKind::Scalar { text, style, tag }, _) => Ok(crate::yaml::value::scalar_matches(
                text,
                *style,
                tag.as_deref(),
                target,
            )),
            (NodeKind::Seq { items, .. }, Value::Array(wanted)) => {
                if items.len() != wanted.len() {
                    return Ok(false);
                }
                for (item, want) in items.iter().zip(wanted) {
                    if !self.same(item, want)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            (NodeKind::Map { entries, .. }, Value::Object(wanted))
                if !entries
                    .iter()
                    .any(|(k, _)| is_merge_key(k) || k.as_str().is_none()) =>
            {
                // The node's value has at most as many keys as the node has
                // entries: with fewer, it cannot be the target. With more,
                // two keys may read as one (`~` and `null`), so it is compared.
                if entries.len() < wanted.len() {
                    return Ok(false);
                }
                if entries.len() > wanted.len() {
                    return Ok(self.value(node)? == *target);
                }
                // Keys mostly come in the node's order: they are paired side
                // by side, and looked up only where the order differs.
                for ((key, value), (wanted_key, wanted_value)) in entries.iter().zip(wanted) {
                    let want = match key.as_str() {
                        Some(k) if k == wanted_key => Some(wanted_value),
                        Some(k) => wanted.field(k),
                        None => None,
                    };
                    let Some(want) = want else {
                        return Ok(false);
                    };
                    if !self.same(value, want)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            (NodeKind::Seq { .. }, _) => Ok(false),
            (NodeKind::Map { .. }, t) if !t.is_object() => Ok(false),
            // Aliases, and mappings with merge keys.
            _ => Ok(self.value(node)? == *target),
        }
    }

    pub(super) fn push(&mut self, shared: bool, at: usize, edit: Edit) -> Result<(), EditError> {
        if shared {
            return Err(EditError {
                message: "the change lands inside an anchored node that aliases elsewhere also use"
                    .into(),
                offset: at,
                defect: false,
            });
        }
        self.edits.push(edit);
        Ok(())
    }

    /// Edit `node`, known to differ from `target` (callers compare first).
    pub(super) fn node(
        &mut self,
        node: &Node<'_>,
        target: &Value,
        shared: bool,
    ) -> Result<(), EditError> {
        let shared = shared || node.anchor.is_some_and(|a| self.referenced.contains(&a));
        match (&node.kind, target) {
            (NodeKind::Alias(id), Value::Object(wanted)) => {
                // Keep the alias and layer the changes over it with a merge
                // key, so the anchor and its other users stay as they are.
                let base = self.resolver.anchor(*id).cloned();
                let text = match base {
                    Some(Value::Object(base))
                        if !self.layout.json && base.keys().all(|k| wanted.contains_key(k)) =>
                    {
                        let mut parts =
                            vec![format!("<<: {}", between(self.text, node.start, node.end)?)];
                        for (k, v) in wanted.iter().filter(|(k, v)| base.get(*k) != Some(*v)) {
                            parts.push(self.layout.flow_entry(k, v));
                        }
                        format!("{{{}}}", parts.join(", "))
                    }
                    // Written out whole, the alias would be lost: undoing the
                    // change could not give it back.
                    _ => {
                        return Err(EditError {
                            message: "cannot change a value written as an alias (*name) other than by adding keys to the mapping it stands for".into(),
                            offset: node.start,
                            defect: false,
                        });
                    }
                };
                self.replace(node, text, shared)
            }
            (NodeKind::Map { entries, flow }, Value::Object(wanted))
                if *flow || !wanted.is_empty() =>
            {
                if *flow {
                    self.flow_map(node, entries, wanted, shared)
                } else {
                    self.block_map(node, entries, wanted, shared)
                }
            }
            (NodeKind::Seq { items, flow }, Value::Array(wanted))
                if *flow || !wanted.is_empty() =>
            {
                if *flow {
                    self.flow_seq(node, items, wanted, shared)
                } else {
                    self.block_seq(node, items, wanted, shared)
                }
            }
            // A block scalar's text runs from its header to its last line.
            (NodeKind::Scalar { .. }, _) if is_block_scalar(node) => {
                self.replace_block_scalar(node, target, shared)
            }
            (NodeKind::Scalar { style, .. }, _) if !target.is_object() && !target.is_array() => {
                // A string in place of a quoted one keeps its quotes, so
                // that changing it back gives the text back.
                let written = match (style, target) {
                    (ScalarStyle::DoubleQuoted, Value::String(_)) => target.to_string(),
                    (ScalarStyle::SingleQuoted, Value::String(s)) if !s.contains('\n') => {
                        format!("'{}'", s.replace('\'', "''"))
                    }
                    _ => self.inline(target),
                };
                let mut text = self.apart(node, written)?;
                let span = between(self.text, node.start, node.end)?;
                let kept = kept_properties(span, target);
                if !kept.is_empty() {
                    text = format!("{} {}", kept.join(" "), text.trim_start());
                }
                self.replace(node, text, shared)
            }
            _ => {
                let text = self.layout.flow(target);
                self.replace(node, text, shared)
            }
        }
    }

    /// Delete `start..end`.
    pub(super) fn delete(
        &mut self,
        shared: bool,
        start: usize,
        end: usize,
    ) -> Result<(), EditError> {
        self.push(
            shared,
            start,
            Edit {
                start,
                end,
                text: Text::Own(String::new()),
            },
        )
    }

    /// Rewrite a block mapping that follows a `- ` as one flow mapping, when
    /// removing its lines would take the dash too.
    pub(super) fn map_in_flow(
        &mut self,
        node: &Node<'_>,
        wanted: &Map<String, Value>,
        shared: bool,
    ) -> Result<(), EditError> {
        self.edits
            .retain(|e| e.start < node.start || e.start > node.end);
        let text = self.layout.flow(&Value::Object(wanted.clone()));
        self.replace(node, text, shared)
    }

    /// Insert `text` at `at`.
    pub(super) fn insert(
        &mut self,
        shared: bool,
        at: usize,
        text: impl Into<Text>,
    ) -> Result<(), EditError> {
        self.push(
            shared,
            at,
            Edit {
                start: at,
                end: at,
                text: text.into(),
            },
        )
    }

    pub(super) fn replace(
        &mut self,
        node: &Node<'_>,
        text: String,
        shared: bool,
    ) -> Result<(), EditError> {
        self.push(
            shared,
            node.start,
            Edit {
                start: node.start,
                end: node.end,
                text: text.into(),
            },
        )
    }

    /// Write `target` over a literal or folded scalar. Its node starts at
    /// its content (or at properties before the header) and ends at the
    /// next line's token, so the header, the content and a comment after
    /// the header are found here: text after the content (line break, blank
    /// lines, the next line's indentation) stays. A string that reads well
    /// as a literal block stays one, at the content's own column; anything
    /// else goes on the header's line, with the header's comment after it.
    pub(super) fn replace_block_scalar(
        &mut self,
        node: &Node<'_>,
        target: &Value,
        shared: bool,
    ) -> Result<(), EditError> {
        let text = self.text;
        let Some(header) = block_header(text, node.start)? else {
            return Err(EditError {
                message: "cannot find the header (| or >) of this block scalar".into(),
                offset: node.start,
                defect: false,
            });
        };
        let from = node.start.min(header.indicator);
        let content = between(text, node.start.max(header.line_end), node.end)?;
        let content_end = if content.trim().is_empty() {
            header.line_end
        } else {
            node.start.max(header.line_end) + content.trim_end().len()
        };
        // Properties before the header (`&a !!str |`) that the value keeps.
        let kept = kept_properties(between(text, from, header.indicator)?, target);
        let mut out = kept.join(" ");
        if !out.is_empty() {
            out.push(' ');
        }
        let comment = between(text, header.indicator_end, header.line_end)?;
        match target {
            Value::String(s) if !self.layout.json && crate::yaml::emit::can_be_literal(s) => {
                // The content's column when it has lines of its own, else one
                // step in from what the header belongs to.
                let col = if starts_line(text, node.start)? && !content.trim().is_empty() {
                    column(text, node.start)?
                } else {
                    header.owner_column + self.layout.indent
                };
                out.push_str(if s.ends_with('\n') { "|" } else { "|-" });
                out.push_str(comment);
                for line in s.strip_suffix('\n').unwrap_or(s).split('\n') {
                    out.push_str(self.layout.newline);
                    if !line.is_empty() {
                        out.push_str(&" ".repeat(col));
                        out.push_str(line);
                    }
                }
            }
            Value::Object(_) | Value::Array(_) => {
                out.push_str(&self.layout.flow(target));
                out.push_str(comment);
            }
            _ => {
                out.push_str(&self.inline(target));
                out.push_str(comment);
            }
        }
        self.push(
            shared,
            from,
            Edit {
                start: from,
                end: content_end,
                text: out.into(),
            },
        )
    }

    /// A new block entry `key: value` at column `col`.
    pub(super) fn entry_text(&mut self, col: usize, key: &str, value: &Value) -> Text {
        let kept = self.kept.entries.iter().find(|v| {
            v.col == col
                && v.value
                    .as_object()
                    .is_some_and(|entry| entry.len() == 1 && entry.get(key) == Some(value))
        });
        if let Some(kept) = kept {
            return Text::Own(kept.text.clone());
        }
        let layout = self.layout;
        self.blocks.text(layout, col, Some(key), value)
    }

    /// A new block sequence item at column `col`, laid out as `layout`.
    pub(super) fn item_text(&mut self, layout: Layout, col: usize, value: &Value) -> Text {
        match self.verbatim_of(col, value) {
            Some(text) => Text::Own(text),
            None => self.blocks.text(layout, col, None, value),
        }
    }

    /// The text `value` had as an item at column `col`, if it is known.
    fn verbatim_of(&self, col: usize, value: &Value) -> Option<String> {
        self.kept
            .items
            .iter()
            .find(|v| v.col == col && v.value == *value)
            .map(|v| v.text.clone())
    }

    /// Whether `key:` starts its line and only spaces or a comment follow
    /// the colon, after `kind_tag` (`!!map`, `!!seq`) maybe: a bare key,
    /// whose value is on the lines under it.
    pub(super) fn is_bare_key(&self, key: &Node<'_>, kind_tag: &str) -> Result<bool, EditError> {
        let line = after(self.text, key.end)?;
        let line = line.split_once('\n').map_or(line, |(line, _)| line);
        let Some(rest) = line.trim_start_matches([' ', '\t']).strip_prefix(':') else {
            return Ok(false);
        };
        let rest = rest.trim_end_matches('\r').trim_start_matches([' ', '\t']);
        let rest = match rest.strip_prefix(kind_tag) {
            Some(after_tag) if after_tag.is_empty() || after_tag.starts_with([' ', '\t']) => {
                after_tag.trim_start_matches([' ', '\t'])
            }
            _ => rest,
        };
        Ok(starts_line(self.text, key.start)? && (rest.is_empty() || rest.starts_with('#')))
    }

    /// Whether `value` is left out after a bare `key:` (or is only a tag
    /// of `target`'s kind) and becomes `target`, a collection with something
    /// in it, written in block style under it.
    pub(super) fn fills_a_bare_key(
        &self,
        key: &Node<'_>,
        value: &Node<'_>,
        target: &Value,
    ) -> Result<bool, EditError> {
        let kind_tag = match target {
            Value::Object(map) if !map.is_empty() => "!!map",
            Value::Array(items) if !items.is_empty() => "!!seq",
            _ => return Ok(false),
        };
        let span = between(self.text, value.start, value.end)?;
        Ok((span.is_empty() || span == kind_tag)
            && matches!(value.kind, NodeKind::Scalar { .. })
            && !self.layout.json
            && self.is_bare_key(key, kind_tag)?)
    }

    /// Where the null after `key` stands (see [`null_after_key`]) when it
    /// becomes `target`, a collection with something in it, written in
    /// block style under the key.
    pub(super) fn fills_a_null(
        &self,
        key: &Node<'_>,
        value: &Node<'_>,
        target: &Value,
    ) -> Result<Option<(usize, usize)>, EditError> {
        let filled = match target {
            Value::Object(map) => !map.is_empty(),
            Value::Array(items) => !items.is_empty(),
            _ => false,
        };
        if !filled || self.layout.json {
            return Ok(None);
        }
        null_after_key(self.text, key, value)
    }

    /// Whether `value`, a block collection on the lines under a bare `key:`,
    /// can become empty by taking those lines away.
    pub(super) fn empties_to_a_bare_key(
        &self,
        key: &Node<'_>,
        value: &Node<'_>,
    ) -> Result<bool, EditError> {
        let kind_tag = match value.kind {
            NodeKind::Map { flow: false, .. } => "!!map",
            NodeKind::Seq { flow: false, .. } => "!!seq",
            _ => return Ok(false),
        };
        Ok(value.anchor.is_none()
            && line_start(self.text, value.start)? > key.end
            && self.is_bare_key(key, kind_tag)?)
    }

    /// `text` for `node`; a value left out (`key:`, `{key: }`) keeps apart
    /// from the `:` before it and a comment after it.
    pub(super) fn apart(&self, node: &Node<'_>, mut text: String) -> Result<String, EditError> {
        if node.start == node.end {
            if !before(self.text, node.start)?.ends_with([' ', '\t']) {
                text.insert(0, ' ');
            }
            if after(self.text, node.end)?.starts_with('#') {
                text.push(' ');
            }
        }
        Ok(text)
    }

    pub(super) fn inline(&self, value: &Value) -> String {
        match value {
            // Quoted on one line: a literal block would need this node's indentation.
            Value::String(s) if self.layout.json || s.contains('\n') => value.to_string(),
            Value::Null => "null".to_string(),
            _ => {
                let line = self.layout.block_entry(0, "k", value);
                let rest = line.strip_prefix("k: ").unwrap_or(&line);
                rest.trim_end_matches(['\r', '\n']).to_string()
            }
        }
    }

    pub(super) fn block_map(
        &mut self,
        node: &Node<'_>,
        entries: &[(Node<'_>, Node<'_>)],
        wanted: &Map<String, Value>,
        shared: bool,
    ) -> Result<(), EditError> {
        keys_are_scalars(node, entries)?;
        let col = column(self.text, node.start)?;
        let merged = self.merged_keys(entries)?;
        let mut removed = vec![false; entries.len()];
        for (i, ((key, value), removed)) in entries.iter().zip(&mut removed).enumerate() {
            if is_merge_key(key) {
                continue;
            }
            let name = key_text(key);
            match wanted.field(name) {
                None => *removed = true,
                // A key the injection wrote out over its merge: the merge
                // alone gives it again.
                Some(target)
                    if merged.get(name) == Some(target)
                        && self.kept.unmerged.iter().any(|k| k == name) =>
                {
                    *removed = true
                }
                Some(target) if self.same(value, target)? => {}
                Some(target) if self.can_edit_within(value, target) => {
                    self.node(value, target, shared)?
                }
                Some(_) if value.anchor.is_some() => return Err(anchor_lost(value)),
                Some(target) if self.fills_a_null(key, value, target)?.is_some() => {
                    // `key: ~` filled: the null goes, the key's line stays
                    // as written (a comment after it too), the new lines go
                    // under it; emptying it again puts the null back.
                    let Some((from, to)) = self.fills_a_null(key, value, target)? else {
                        continue;
                    };
                    let entry = self.layout.block_entry(col, name, target);
                    let lines = entry.split_once('\n').map_or("", |(_, lines)| lines);
                    let at = line_end_after(self.text, value.end)?;
                    let text = self.at_line_end(at, lines.to_string());
                    self.delete(shared, from, to)?;
                    self.insert(shared, at, text)?;
                }
                Some(target) if self.fills_a_bare_key(key, value, target)? => {
                    // The new lines go under `key:`, its line kept as written
                    // (spaces, a comment): emptying it again gives it back.
                    let entry = self.layout.block_entry(col, name, target);
                    let lines = entry.split_once('\n').map_or("", |(_, lines)| lines);
                    let at = line_end_after(self.text, value.end)?;
                    let text = self.at_line_end(at, lines.to_string());
                    self.insert(shared, at, text)?;
                }
                Some(Value::Null) if self.empties_to_a_bare_key(key, value)? => {
                    // The lines under `key:` go; its line stays as written
                    // (with its line break, unless the file ends with them).
                    let mut start = line_start(self.text, value.start)?;
                    let end = line_end_after(self.text, value.end)?;
                    if end == self.text.len() && !self.text.ends_with('\n') {
                        let kept = before(self.text, start)?;
                        let kept = kept.strip_suffix('\n').unwrap_or(kept);
                        start = kept.strip_suffix('\r').unwrap_or(kept).len();
                    }
                    self.delete(shared, start, end)?;
                    if let Some((_, null)) =
                        self.kept.nulls.iter().find(|(at, _)| *at == value.start)
                    {
                        // The null the injection took out, where it stood.
                        let gap = between(self.text, key.end, value.start)?;
                        if let Some(colon) = gap.find(':') {
                            self.insert(shared, key.end + colon + 1, null.clone())?;
                        }
                    }
                }
                Some(target) if tag_lost(self.text, value, target)? => {
                    return Err(EditError {
                        message: "cannot rewrite a tagged value (!…) as a collection without losing its tag".into(),
                        offset: value.start,
                        defect: false,
                    });
                }
                Some(target) => {
                    // Rewrite the whole entry where it stands: its own lines go
                    // (not merged with neighbours, so the insertion stays outside
                    // what is deleted) and the new entry takes their place.
                    let next = entries.get(i + 1).map(|(k, _)| k);
                    let entry = self.layout.block_entry(col, name, target);
                    let (at, text) = if starts_line(self.text, key.start)? {
                        (line_start(self.text, key.start)?, entry)
                    } else if next.is_some() {
                        // The entry follows a `- `: the next line needs its indentation back.
                        (
                            key.start,
                            format!("{}{}", after(&entry, col)?, " ".repeat(col)),
                        )
                    } else {
                        // The only entry of a `- ` item: write the item's map in flow style.
                        return self.map_in_flow(node, wanted, shared);
                    };
                    let (start, end) = self.block_lines(key, value, next)?;
                    self.insert(shared, at, text)?;
                    self.delete(shared, start, end)?;
                }
            }
        }
        let first_follows_dash = !starts_line(self.text, node.start)?;
        if first_follows_dash && removed.last() == Some(&true) && removed.first() == Some(&true) {
            // Removing from the `- ` line to the end would take the dash too.
            if runs(&removed).len() == 1 {
                return self.map_in_flow(node, wanted, shared);
            }
        }
        for (first, last) in runs(&removed) {
            // (`runs` gives indexes of `removed`, one per entry.)
            let (Some((first_key, _)), Some((_, last_value))) =
                (entries.get(first), entries.get(last))
            else {
                continue;
            };
            let next = entries.get(last + 1).map(|e| &e.0);
            let (start, end) = self.block_lines(first_key, last_value, next)?;
            self.delete(shared, start, end)?;
        }
        let mut added = self.entries_to_add(node, col, entries, wanted, &merged)?;
        // A key replaced by another (an action of a probe by another) keeps
        // its place: the new entry goes where the old one stood.
        if let ([i], 1) = (gone(&removed).as_slice(), added.len()) {
            self.put_in_place_of(entries, *i, &mut added, shared)?;
        }
        if !added.is_empty() {
            self.append_entries(node, entries, added, shared)?;
        }
        Ok(())
    }

    /// The entries `wanted` has that the mapping `node` (its `entries`, at
    /// `col`) neither has nor gets from a merge key (`merged`), written; a
    /// key a merge brings that `wanted` no longer has is an error.
    fn entries_to_add(
        &mut self,
        node: &Node<'_>,
        col: usize,
        entries: &[(Node<'_>, Node<'_>)],
        wanted: &Map<String, Value>,
        merged: &Map<String, Value>,
    ) -> Result<Vec<Text>, EditError> {
        let mut added: Vec<Text> = Vec::new();
        for (k, v) in wanted {
            let local = entries
                .iter()
                .any(|(key, _)| !is_merge_key(key) && key_text(key) == k);
            if !local && merged.get(k) != Some(v) {
                if merged.contains_key(k) {
                    self.materialised.push(k.clone());
                }
                added.push(self.entry_text(col, k, v));
            }
        }
        for k in merged.keys() {
            if !wanted.contains_key(k) && !entries.iter().any(|(key, _)| key_text(key) == k) {
                return Err(EditError {
                    message: format!("cannot remove `{k}`: it comes from a merge key (<<)"),
                    offset: node.start,
                    defect: false,
                });
            }
        }
        Ok(added)
    }

    /// `added` written where the entry `i` of `entries` stood, when that
    /// entry starts its own lines (taken out of `added` then).
    fn put_in_place_of(
        &mut self,
        entries: &[(Node<'_>, Node<'_>)],
        i: usize,
        added: &mut Vec<Text>,
        shared: bool,
    ) -> Result<(), EditError> {
        let Some((key, value)) = entries.get(i) else {
            return Ok(());
        };
        let next = entries.get(i + 1).map(|(k, _)| k);
        let at = line_start(self.text, key.start)?;
        let (start, _) = self.block_lines(key, value, next)?;
        if starts_line(self.text, key.start)? && start == at {
            for text in added.drain(..) {
                self.insert(shared, at, text)?;
            }
        }
        Ok(())
    }

    /// `added` written after the last of the mapping's `entries` (`node`).
    fn append_entries(
        &mut self,
        node: &Node<'_>,
        entries: &[(Node<'_>, Node<'_>)],
        added: Vec<Text>,
        shared: bool,
    ) -> Result<(), EditError> {
        let last = entries.last();
        let last_end = last.map_or(node.end, |(_, v)| v.end);
        let mut at = line_end_after(self.text, last_end)?;
        if let Some((key, value)) =
            last.filter(|_| at == self.text.len() && !self.text.ends_with('\n'))
        {
            if is_block_scalar(value) && starts_line(self.text, key.start)? {
                // A block scalar ending the file without a line break would
                // gain one below it: add the new entries above it instead.
                at = line_start(self.text, key.start)?;
            }
        }
        if at == self.text.len() && !self.text.ends_with('\n') {
            let joined: String = added.iter().flat_map(Text::pieces).collect();
            let text = self.at_line_end(at, joined);
            self.insert(shared, at, text)?;
        } else {
            // One insertion per entry, in order: shared blocks stay shared.
            for text in added {
                self.insert(shared, at, text)?;
            }
        }
        Ok(())
    }

    pub(super) fn block_seq(
        &mut self,
        node: &Node<'_>,
        items: &[Node<'_>],
        wanted: &[Value],
        shared: bool,
    ) -> Result<(), EditError> {
        let mut dashes: Vec<usize> = Vec::with_capacity(items.len());
        for item in items {
            match dash_of(self.text, item.start)? {
                Some(dash) if starts_line(self.text, dash)? => dashes.push(dash),
                _ => {
                    return Err(EditError {
                        message:
                            "cannot edit a block sequence whose items do not start their lines"
                                .into(),
                        offset: node.start,
                        defect: false,
                    });
                }
            }
        }
        let col = match dashes.first() {
            Some(&dash) => column(self.text, dash)?,
            None => 0,
        };
        // Items written `-   name: x` keep their spacing (an empty item,
        // a lone `-`, says nothing of it).
        let first_written = dashes
            .iter()
            .zip(items)
            .find(|(_, item)| item.start < item.end);
        let dash_gap = match first_written {
            Some((&dash, item)) if !between(self.text, dash + 1, item.start)?.contains('\n') => {
                (item.start - dash - 1).max(1)
            }
            _ => 1,
        };
        let layout = Layout {
            dash_gap,
            ..self.layout
        };
        let mut removed = vec![false; items.len()];
        // (`align` gives indexes within `items` and `wanted`; `dashes` has one per item.)
        for step in self.align_items(items, wanted)? {
            match step {
                Step::Keep(..) => {}
                Step::Change(i, j) => {
                    let (Some(item), Some(&dash), Some(want)) =
                        (items.get(i), dashes.get(i), wanted.get(j))
                    else {
                        continue;
                    };
                    // An item known as it was written is written so, not
                    // edited toward it (an edit would requote and re-lay out).
                    let verbatim = self.verbatim_of(col, want).is_some();
                    if !verbatim && self.can_edit_within(item, want) {
                        self.node(item, want, shared)?;
                        continue;
                    }
                    if item.anchor.is_some() {
                        return Err(anchor_lost(item));
                    }
                    // Rewrite the item where it stands.
                    let at = line_start(self.text, dash)?;
                    let mut text = self.item_text(layout, col, want);
                    let (start, end) =
                        self.block_range(dash, item.end, dashes.get(i + 1).copied())?;
                    if start < at {
                        // The item's last line ends the file without a line
                        // break (the range took the break before it): the
                        // new item ends without one too, and only its own
                        // lines are replaced.
                        let joined: String = text.pieces().collect();
                        let body = joined.strip_suffix('\n').unwrap_or(&joined);
                        text = Text::Own(body.strip_suffix('\r').unwrap_or(body).to_string());
                        self.insert(shared, at, text)?;
                        self.delete(shared, at, end)?;
                    } else {
                        self.insert(shared, at, text)?;
                        self.delete(shared, start, end)?;
                    }
                }
                Step::Remove(i) => {
                    if let Some(removed) = removed.get_mut(i) {
                        *removed = true;
                    }
                }
                Step::Insert(before, j) => {
                    let Some(want) = wanted.get(j) else {
                        continue;
                    };
                    match before.and_then(|i| dashes.get(i)) {
                        Some(&dash) => {
                            // Above the comment lines that lead into that item.
                            let at = above_comments(self.text, line_start(self.text, dash)?)?;
                            let text = self.item_text(layout, col, want);
                            self.insert(shared, at, text)?;
                        }
                        None => {
                            let last_end = items.last().map_or(node.end, |i| i.end);
                            let at = line_end_after(self.text, last_end)?;
                            let item = self
                                .verbatim_of(col, want)
                                .unwrap_or_else(|| layout.block_item(col, want));
                            let text = self.at_line_end(at, item);
                            self.insert(shared, at, text)?;
                        }
                    }
                }
            }
        }
        for (first, last) in runs(&removed) {
            let (Some(&dash), Some(item)) = (dashes.get(first), items.get(last)) else {
                continue;
            };
            let next = dashes.get(last + 1).copied();
            let (start, end) = self.block_range(dash, item.end, next)?;
            self.delete(shared, start, end)?;
        }
        Ok(())
    }

    /// [`align`] the items of a sequence node with the wanted ones, compared
    /// in place (no value is built for the items).
    pub(super) fn align_items(
        &mut self,
        items: &[Node<'_>],
        wanted: &[Value],
    ) -> Result<Vec<Step>, EditError> {
        let mut failed = None;
        let named = |item: Option<&Node<'_>>, want: Option<&Value>| {
            let name = item.and_then(|i| i.get("name")).and_then(Node::as_str);
            name.is_some() && name == want.and_then(|w| w.get("name")).and_then(Value::as_str)
        };
        let steps = align_kin(
            items.len(),
            wanted.len(),
            |i, j| match (items.get(i), wanted.get(j)) {
                (Some(item), Some(want)) => self.same(item, want).unwrap_or_else(|err| {
                    failed.get_or_insert(err);
                    false
                }),
                _ => false,
            },
            |i, j| named(items.get(i), wanted.get(j)),
        );
        match failed {
            Some(err) => Err(err),
            None => Ok(steps),
        }
    }

    /// Whether `target` can be reached by editing inside `node` rather than rewriting it.
    pub(super) fn can_edit_within(&self, node: &Node<'_>, target: &Value) -> bool {
        match (&node.kind, target) {
            (NodeKind::Map { flow: false, .. }, Value::Object(m)) => !m.is_empty(),
            (NodeKind::Seq { flow: false, .. }, Value::Array(a)) => !a.is_empty(),
            // An empty `{}` or `[]` that receives content becomes block content,
            // rather than one very long line.
            (
                NodeKind::Map {
                    flow: true,
                    entries,
                },
                Value::Object(m),
            ) => !entries.is_empty() || m.is_empty(),
            (NodeKind::Seq { flow: true, items }, Value::Array(a)) => {
                !items.is_empty() || a.is_empty()
            }
            // A scalar (null included) that becomes a collection is rewritten as block content.
            (NodeKind::Scalar { .. }, t) => !t.is_object() && !t.is_array(),
            (NodeKind::Alias(_), _) => true,
            _ => false,
        }
    }

    /// The byte range of whole lines holding block entries `first..=last`.
    pub(super) fn block_lines(
        &self,
        key: &Node<'_>,
        value: &Node<'_>,
        next_key: Option<&Node<'_>>,
    ) -> Result<(usize, usize), EditError> {
        self.block_range(key.start, value.end, next_key.map(|k| k.start))
    }

    /// Lines from the one holding `start` to the one holding `end`. When the
    /// first line also holds a `- ` that is not removed, remove up to the next sibling instead.
    pub(super) fn block_range(
        &self,
        start: usize,
        end: usize,
        next: Option<usize>,
    ) -> Result<(usize, usize), EditError> {
        if !starts_line(self.text, start)? {
            if let Some(next) = next {
                return Ok((start, next));
            }
        }
        let from = line_start(self.text, start)?;
        let to = line_end_after(self.text, end)?;
        if to == self.text.len() && !self.text.ends_with('\n') && from > 0 {
            // The last line has no line break: take the one before it instead.
            let before = if before(self.text, from - 1)?.ends_with('\r') {
                from - 2
            } else {
                from - 1
            };
            return Ok((before, to));
        }
        Ok((from, to))
    }

    /// Text inserted at `at`: when that is the end of a file without a final line
    /// break, the break goes first.
    pub(super) fn at_line_end(&self, at: usize, text: String) -> String {
        if at == self.text.len() && !self.text.is_empty() && !self.text.ends_with('\n') {
            let body = text.strip_suffix(self.layout.newline).unwrap_or(&text);
            format!("{}{}", self.layout.newline, body)
        } else {
            text
        }
    }

    /// What the merge keys among `entries` bring.
    pub(super) fn merged_keys(
        &mut self,
        entries: &[(Node<'_>, Node<'_>)],
    ) -> Result<Map<String, Value>, EditError> {
        Ok(self.resolver.merged(entries, Map::new())?)
    }

    pub(super) fn flow_map(
        &mut self,
        node: &Node<'_>,
        entries: &[(Node<'_>, Node<'_>)],
        wanted: &Map<String, Value>,
        shared: bool,
    ) -> Result<(), EditError> {
        keys_are_scalars(node, entries)?;
        let merged = self.merged_keys(entries)?;
        // `{<<: *alias, …}` is how an edit on an alias is written; in such a
        // mapping an entry that only repeats what the alias brings is dropped
        // once the mapping changes, so that undoing the edit gives `*alias` back.
        let over_alias = matches!(entries.first(), Some((k, Node { kind: NodeKind::Alias(_), .. })) if is_merge_key(k));
        let mut parts: Vec<Part> = Vec::new();
        let mut changed = false;
        let mut redundant = false;
        let mut gone = Vec::new();
        for (key, value) in entries {
            if is_merge_key(key) {
                parts.push(Part::Keep(key.start, value.end));
                continue;
            }
            let name = key_text(key);
            match wanted.field(name) {
                None => {
                    gone.push(parts.len());
                    changed = true
                }
                Some(target) if over_alias && merged.get(name) == Some(target) => redundant = true,
                Some(target)
                    if merged.get(name) == Some(target)
                        && self.kept.unmerged.iter().any(|k| k == name) =>
                {
                    changed = true
                }
                Some(target) if self.same(value, target)? => {
                    parts.push(Part::Keep(key.start, value.end))
                }
                Some(target) => {
                    self.flow_child(value, target, shared)?;
                    parts.push(Part::Keep(key.start, value.end));
                }
            }
        }
        changed |= redundant;
        // The keys written here, looked up by hash in a large mapping (a
        // one-line JSON document's thousands of annotations).
        let local: Option<std::collections::HashSet<&str>> = (entries.len() > 16).then(|| {
            entries
                .iter()
                .filter(|(key, _)| !is_merge_key(key))
                .map(|(key, _)| key_text(key))
                .collect()
        });
        for (k, v) in wanted {
            let local = match &local {
                Some(keys) => keys.contains(k.as_str()),
                None => entries
                    .iter()
                    .any(|(key, _)| !is_merge_key(key) && key_text(key) == k),
            };
            if !local && merged.get(k) != Some(v) {
                if merged.contains_key(k) && !over_alias {
                    self.materialised.push(k.clone());
                }
                let kept = self.kept.entries.iter().find(|e| {
                    e.col == verbatim::FLOW
                        && e.value.as_object().is_some_and(|entry| {
                            entry.len() == 1 && entry.get(k.as_str()) == Some(v)
                        })
                });
                let text = match kept {
                    Some(kept) => kept.text.clone(),
                    None => self.layout.flow_entry(k, v),
                };
                parts.push(Part::New(text));
                changed = true;
            }
        }
        // A key replaced by another keeps its place (see `block_map`).
        let new = parts.iter().filter(|p| matches!(p, Part::New(_))).count();
        if let ([at], 1, Some(Part::New(_))) = (gone.as_slice(), new, parts.last()) {
            if let Some(part) = parts.pop() {
                parts.insert((*at).min(parts.len()), part);
            }
        }
        if !changed {
            return Ok(());
        }
        if let [
            (
                key,
                alias @ Node {
                    kind: NodeKind::Alias(_),
                    ..
                },
            ),
        ] = entries
        {
            // `{<<: *alias}` as written, not as an edit wrote an alias:
            // undoing the change keeps it so (see `Kept::unmerged`).
            if is_merge_key(key) {
                let text = between(self.text, alias.start, alias.end)?;
                self.materialised.push(format!("{{<<: {text}}}"));
            }
        }
        // A mapping left holding nothing but `<<: *alias` is that alias again.
        if let [Part::Keep(start, end)] = parts.as_slice() {
            let kept = entries
                .iter()
                .find(|(k, v)| k.start == *start && v.end == *end);
            if let Some((
                key,
                alias @ Node {
                    kind: NodeKind::Alias(_),
                    ..
                },
            )) = kept
            {
                let text = between(self.text, alias.start, alias.end)?.to_string();
                if is_merge_key(key) && !self.kept.unmerged.contains(&format!("{{<<: {text}}}")) {
                    return self.replace(node, text, shared);
                }
            }
        }
        let spans: Vec<(usize, usize)> = entries.iter().map(|(k, v)| (k.start, v.end)).collect();
        self.rewrite_flow(node, &spans, parts, shared)
    }

    /// Edit `node`, a value inside a flow collection: a scalar there is
    /// written for the flow context, where `,`, `[`, `]`, `{` and `}` would
    /// end a plain scalar.
    pub(super) fn flow_child(
        &mut self,
        node: &Node<'_>,
        target: &Value,
        shared: bool,
    ) -> Result<(), EditError> {
        if matches!(node.kind, NodeKind::Scalar { .. }) && !target.is_object() && !target.is_array()
        {
            let shared = shared || node.anchor.is_some_and(|a| self.referenced.contains(&a));
            let text = self.apart(node, self.layout.flow(target))?;
            return self.replace(node, text, shared);
        }
        // Inside brackets, a collection without its own is a `key: value`
        // pair written as a sequence item (`[a: 1]`): block lines cannot go
        // there, and a second entry would be a second item.
        if matches!(
            node.kind,
            NodeKind::Map { flow: false, .. } | NodeKind::Seq { flow: false, .. }
        ) {
            return Err(EditError {
                message: "cannot edit a `key: value` pair written as an item of a flow sequence; \
                          write it as a mapping in braces ({key: value})"
                    .into(),
                offset: node.start,
                defect: false,
            });
        }
        self.node(node, target, shared)
    }

    pub(super) fn flow_seq(
        &mut self,
        node: &Node<'_>,
        items: &[Node<'_>],
        wanted: &[Value],
        shared: bool,
    ) -> Result<(), EditError> {
        let mut parts = Vec::new();
        let mut changed = false;
        // (`align` gives indexes within `items` and `wanted`.)
        for step in self.align_items(items, wanted)? {
            match step {
                Step::Keep(i, _) => {
                    if let Some(item) = items.get(i) {
                        parts.push(Part::Keep(item.start, item.end));
                    }
                }
                Step::Change(i, j) => {
                    if let (Some(item), Some(want)) = (items.get(i), wanted.get(j)) {
                        self.flow_child(item, want, shared)?;
                        parts.push(Part::Keep(item.start, item.end));
                    }
                }
                Step::Remove(_) => changed = true,
                Step::Insert(_, j) => {
                    if let Some(want) = wanted.get(j) {
                        parts.push(Part::New(self.layout.flow(want)));
                    }
                    changed = true;
                }
            }
        }
        if !changed {
            return Ok(());
        }
        let spans: Vec<(usize, usize)> = items.iter().map(|i| (i.start, i.end)).collect();
        self.rewrite_flow(node, &spans, parts, shared)
    }

    /// Rewrite the inside of a flow collection from kept and new parts,
    /// joined the way the original joins its entries.
    pub(super) fn rewrite_flow(
        &mut self,
        node: &Node<'_>,
        spans: &[(usize, usize)],
        parts: Vec<Part>,
        shared: bool,
    ) -> Result<(), EditError> {
        let separator = match spans {
            [(_, first_end), (second_start, _), ..] => {
                between(self.text, *first_end, *second_start)?.to_string()
            }
            // One entry on its own line: the next goes on a line of its own too.
            [(first_start, _)] if between(self.text, node.start, *first_start)?.contains('\n') => {
                format!(
                    ",{}{}",
                    self.layout.newline,
                    " ".repeat(column(self.text, *first_start)?)
                )
            }
            _ => ", ".to_string(),
        };
        let multi_line = separator.contains('\n');
        let (start, end) = match (spans.first(), spans.last()) {
            (Some((s, _)), Some((_, e))) => (*s, *e),
            _ => (
                node.start + 1,
                node.end.saturating_sub(1).max(node.start + 1),
            ),
        };
        // Spaces between the last entry and a comment after it are the
        // rewritten text's to keep (or to give back, when entries go).
        let rest = after(self.text, end)?;
        let spaces = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        let end = if after(self.text, end + spaces)?.starts_with('#') {
            end + spaces
        } else {
            end
        };
        // The column is looked for only where it is needed: on a one-line
        // document, the start of the line is far behind.
        let entry_col = || column(self.text, start);
        // Edits inside kept entries were made while this collection's
        // entries were edited, the last ones made: only those are looked at.
        let own = self
            .edits
            .iter()
            .rev()
            .take_while(|ed| ed.start >= start && ed.end <= end)
            .count();
        let mut inner_edits = self.edits.split_off(self.edits.len() - own);
        // Whether an entry starts strictly between `a` and `b` (the spans
        // are in order).
        let entry_between = |a: usize, b: usize| {
            let next = spans.partition_point(|(s, _)| *s <= a);
            spans.get(next).is_some_and(|(s, _)| *s < b)
        };
        // As long as what it replaces and what it adds, grown once: a
        // large collection's text is not copied again and again as it grows.
        let added: usize = parts
            .iter()
            .map(|part| match part {
                Part::New(new) => new.len() + separator.len(),
                Part::Keep(..) => 0,
            })
            .sum();
        let mut text = String::with_capacity(end.saturating_sub(start) + added);
        let mut previous: Option<&Part> = None;
        for part in &parts {
            match (previous, part) {
                // Neighbours in the source keep what stood between them.
                (Some(Part::Keep(_, kept_end)), Part::Keep(kept_start, _))
                    if kept_end <= kept_start && !entry_between(*kept_end, *kept_start) =>
                {
                    text.push_str(between(self.text, *kept_end, *kept_start)?);
                }
                (Some(_), _) => text.push_str(&separator),
                (None, _) => {}
            }
            previous = Some(part);
            match part {
                Part::Keep(s, e) => {
                    // Edits inside kept entries are applied by splicing them in here.
                    let (inner, rest): (Vec<Edit>, Vec<Edit>) = inner_edits
                        .into_iter()
                        .partition(|ed| ed.start >= *s && ed.end <= *e);
                    inner_edits = rest;
                    let shifted = inner
                        .into_iter()
                        .map(|ed| Edit {
                            start: ed.start - s,
                            end: ed.end - s,
                            text: ed.text,
                        })
                        .collect();
                    let entry = between(self.text, *s, *e)?;
                    let applied = apply(entry, shifted).map_err(|err| {
                        let message =
                            format!("{}, counted from the entry at byte {s}", err.message);
                        EditError::defect(message, err.offset + s)
                    })?;
                    text.push_str(&applied);
                }
                Part::New(new) if multi_line && self.layout.json => {
                    text.push_str(&reindent(new, entry_col()?, self.layout.newline));
                }
                Part::New(new) => text.push_str(new),
            }
        }
        // A comment right after the last entry (`{a: #c`) stays a comment.
        if after(self.text, end)?.starts_with('#') && !text.ends_with([' ', '\t']) {
            text.push(' ');
        }
        // Those in no kept entry stay as they were.
        self.edits.extend(inner_edits);
        self.push(
            shared,
            start,
            Edit {
                start,
                end,
                text: text.into(),
            },
        )
    }
}

pub(super) enum Part {
    Keep(usize, usize),
    New(String),
}

/// Pretty-print a compact JSON entry for a multi-line JSON document.
pub(super) fn reindent(compact: &str, col: usize, newline: &str) -> String {
    // `compact` is `"key": value` or a bare value; re-parse the value part.
    let (prefix, value) = match compact.split_once("\": ") {
        Some((k, v)) if compact.starts_with('"') => (format!("{k}\": "), v),
        _ => (String::new(), compact),
    };
    let Ok(parsed) = serde_json::from_str::<Value>(value) else {
        return compact.to_string();
    };
    let pretty = serde_json::to_string_pretty(&parsed).unwrap_or_else(|_| value.to_string());
    let pad = " ".repeat(col);
    let body = pretty.replace('\n', &format!("{newline}{pad}"));
    format!("{prefix}{body}")
}

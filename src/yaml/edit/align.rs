//! How one sequence becomes another: the items of a list kept, added and
//! removed, matched by their kin (the same name, the same value).

/// How one sequence becomes another.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Step {
    Keep(usize, usize),
    Change(usize, usize),
    Remove(usize),
    /// Insert wanted item `.1` before original item `.0` (or at the end).
    Insert(Option<usize>, usize),
}

/// Align two sequences of `n` and `m` items, `same(i, j)` telling whether
/// old item `i` equals new item `j`: equal lengths pair up by position;
/// otherwise keep the longest common subsequence and pair leftover runs of
/// equal length.
#[cfg(test)]
pub(super) fn align(n: usize, m: usize, same: impl FnMut(usize, usize) -> bool) -> Vec<Step> {
    align_kin(n, m, same, |_, _| false)
}

/// [`align`], where leftover runs of unequal length also pair an old item
/// with a new one that `kin(i, j)` says is the same item changed (a
/// container of the same name), in order, so that it is edited where it
/// stands rather than written anew beside new items.
/// Whether old item `i` is kin to a new item other than the one beside it.
fn kin_elsewhere(kin: &mut impl FnMut(usize, usize) -> bool, i: usize, m: usize) -> bool {
    (0..m).any(|j| j != i && kin(i, j))
}

pub(super) fn align_kin(
    n: usize,
    m: usize,
    mut same: impl FnMut(usize, usize) -> bool,
    mut kin: impl FnMut(usize, usize) -> bool,
) -> Vec<Step> {
    if n == m {
        // Side by side, unless items of other names stand there (a list
        // reordered: the proxy moved to the front keeps its own text).
        let paired: Vec<Step> = (0..n)
            .map_while(|i| {
                if same(i, i) {
                    Some(Step::Keep(i, i))
                } else if !kin_elsewhere(&mut kin, i, n) || kin(i, i) {
                    Some(Step::Change(i, i))
                } else {
                    None
                }
            })
            .collect();
        if paired.len() == n {
            return paired;
        }
    }
    // Each pair compared once, row by row.
    let equal: Vec<bool> = (0..n)
        .flat_map(|i| (0..m).map(move |j| (i, j)))
        .map(|(i, j)| same(i, j))
        .collect();
    let equal = |i: usize, j: usize| i < n && j < m && equal.get(i * m + j) == Some(&true);
    // lcs(i, j): the longest common subsequence of old[i..] and new[j..],
    // rows of m + 1, the last row and column zero.
    let width = m + 1;
    let mut table = vec![0u32; (n + 1) * width];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            let at = |i: usize, j: usize| table.get(i * width + j).copied().unwrap_or(0);
            let length = if equal(i, j) {
                at(i + 1, j + 1) + 1
            } else {
                at(i + 1, j).max(at(i, j + 1))
            };
            if let Some(cell) = table.get_mut(i * width + j) {
                *cell = length;
            }
        }
    }
    let lcs = |i: usize, j: usize| table.get(i * width + j).copied().unwrap_or(0);
    let mut steps = Vec::new();
    let (mut i, mut j) = (0, 0);
    let mut pending_removed: Vec<usize> = Vec::new();
    let mut pending_inserted: Vec<usize> = Vec::new();
    let mut flush = |steps: &mut Vec<Step>,
                     removed: &mut Vec<usize>,
                     inserted: &mut Vec<usize>,
                     before: Option<usize>| {
        if removed.len() == inserted.len() {
            steps.extend(
                removed
                    .iter()
                    .zip(inserted.iter())
                    .map(|(&r, &a)| Step::Change(r, a)),
            );
        } else {
            // Kin pairs, in order; the other new items go before the next
            // pair's old item, the other old items go.
            let mut pairs: Vec<(usize, usize)> = Vec::new();
            let mut from = 0;
            for &a in inserted.iter() {
                if let Some(k) =
                    (from..removed.len()).find(|&k| removed.get(k).is_some_and(|&r| kin(r, a)))
                {
                    if let Some(&r) = removed.get(k) {
                        pairs.push((r, a));
                    }
                    from = k + 1;
                }
            }
            steps.extend(
                removed
                    .iter()
                    .filter(|r| !pairs.iter().any(|(p, _)| p == *r))
                    .map(|&r| Step::Remove(r)),
            );
            for &a in inserted.iter() {
                match pairs.iter().find(|(_, p)| *p == a) {
                    Some(&(r, _)) => steps.push(Step::Change(r, a)),
                    None => {
                        let next = pairs.iter().find(|(_, p)| *p > a).map(|&(r, _)| r);
                        steps.push(Step::Insert(next.or(before), a));
                    }
                }
            }
        }
        removed.clear();
        inserted.clear();
    };
    while i < n || j < m {
        if equal(i, j) {
            flush(
                &mut steps,
                &mut pending_removed,
                &mut pending_inserted,
                Some(i),
            );
            steps.push(Step::Keep(i, j));
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs(i, j + 1) >= lcs(i + 1, j)) {
            pending_inserted.push(j);
            j += 1;
        } else {
            pending_removed.push(i);
            i += 1;
        }
    }
    flush(
        &mut steps,
        &mut pending_removed,
        &mut pending_inserted,
        None,
    );
    steps
}

/// The indexes of the entries flagged (`flags`: one per entry).
pub(super) fn gone(flags: &[bool]) -> Vec<usize> {
    flags
        .iter()
        .enumerate()
        .filter(|(_, flagged)| **flagged)
        .map(|(i, _)| i)
        .collect()
}

/// Runs of consecutive `true` as (first, last) index pairs.
pub(super) fn runs(flags: &[bool]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, &flag) in flags.iter().enumerate() {
        match (flag, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, i - 1));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, flags.len() - 1));
    }
    out
}

//! "Did you mean": the known name closest to a mistyped one.

/// The number of single-character insertions, deletions, substitutions
/// and swaps of neighbours that turn `a` into `b` (the optimal string
/// alignment distance), over characters: `istoi` is one from `istio`.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    // d[i * width + j]: the distance from a's first i to b's first j.
    let mut d = vec![0usize; (a.len() + 1) * width];
    let at = |i: usize, j: usize| i * width + j;
    for (i, ca) in std::iter::once(None).chain(a.iter().map(Some)).enumerate() {
        for (j, cb) in std::iter::once(None).chain(b.iter().map(Some)).enumerate() {
            let value = match (ca, cb) {
                (None, _) => j,
                (_, None) => i,
                (Some(ca), Some(cb)) => {
                    let get = |i: usize, j: usize| d.get(at(i, j)).copied().unwrap_or(usize::MAX);
                    let mut best = (get(i - 1, j - 1) + usize::from(ca != cb))
                        .min(get(i - 1, j).saturating_add(1))
                        .min(get(i, j - 1).saturating_add(1));
                    let swapped = i > 1
                        && j > 1
                        && a.get(i - 2) == Some(cb)
                        && b.get(j - 2) == Some(ca)
                        && ca != cb;
                    if swapped {
                        best = best.min(get(i - 2, j - 2).saturating_add(1));
                    }
                    best
                }
            };
            if let Some(cell) = d.get_mut(at(i, j)) {
                *cell = value;
            }
        }
    }
    d.last().copied().unwrap_or(0)
}

/// The name of `known` closest to `given`, ignoring case, when it is close
/// enough to be the one meant: at most a third of `given`'s characters
/// (and at least one) edited. The first of equally close ones.
pub fn closest<'a, I>(given: &str, known: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let given_lower = given.to_lowercase();
    let allowed = (given.chars().count() / 3).max(1);
    known
        .into_iter()
        .map(|name| (edit_distance(&given_lower, &name.to_lowercase()), name))
        .filter(|(distance, _)| *distance <= allowed)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| name)
}

/// `; did you mean "NAME"?` for the closest of `known`, or nothing.
pub fn did_you_mean<'a, I>(given: &str, known: I) -> String
where
    I: IntoIterator<Item = &'a str>,
{
    closest(given, known).map_or_else(String::new, |name| format!("; did you mean {name:?}?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_count_single_character_edits() {
        for (a, b, distance) in [
            ("", "", 0),
            ("abc", "", 3),
            ("", "abc", 3),
            ("kitten", "sitting", 3),
            ("proxyVersoin", "proxyVersion", 1),
            ("istoi", "istio", 1),
            ("ab", "ba", 1),
            ("proxyUi", "proxyUID", 2),
            ("logLevle", "logLevel", 1),
            ("same", "same", 0),
            ("ünï", "uni", 2),
        ] {
            assert_eq!(edit_distance(a, b), distance, "{a} {b}");
            assert_eq!(edit_distance(b, a), distance, "{b} {a}");
        }
    }

    #[test]
    fn the_closest_is_named_only_when_close_enough() {
        let known = ["proxyVersion", "proxyImage", "proxyUID", "logLevel"];
        assert_eq!(closest("proxyversion", known), Some("proxyVersion"));
        assert_eq!(closest("proxyImag", known), Some("proxyImage"));
        assert_eq!(closest("proxyUi", known), Some("proxyUID"));
        assert_eq!(closest("zzzzqqqq", known), None);
        assert_eq!(closest("x", known), None);
        assert_eq!(closest("istoi", ["linkerd", "istio"]), Some("istio"));
        assert_eq!(did_you_mean("zzz", known), "");
        assert_eq!(
            did_you_mean("logLevle", known),
            "; did you mean \"logLevel\"?"
        );
    }
}

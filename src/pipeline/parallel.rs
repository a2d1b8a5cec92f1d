//! The work of a run spread over every core: parts taken in turn, results
//! in the order of the parts.

/// Run `work` on each part on every core, results in the order of the parts.
/// Each core takes the next part as it finishes one, with a `state` of its
/// own made by `init`. A panic in a worker is the caller's panic, as it would
/// be on one thread.
pub(super) fn on_all_cores<T: Sync, R: Send, S>(
    parts: &[T],
    init: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, &T) -> R + Sync,
) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let workers = threads.min(parts.len());
    if workers <= 1 {
        let mut state = init();
        return parts.iter().map(|part| work(&mut state, part)).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let take = || {
        let mut state = init();
        let mut done = Vec::new();
        loop {
            let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(part) = parts.get(index) else {
                return done;
            };
            done.push((index, work(&mut state, part)));
        }
    };
    let mut results: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers).map(|_| scope.spawn(take)).collect();
        handles
            .into_iter()
            .flat_map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    results.sort_unstable_by_key(|(index, _)| *index);
    results.into_iter().map(|(_, result)| result).collect()
}

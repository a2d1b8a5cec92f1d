//! A sign of life on a terminal: a long run (many thousands of workloads)
//! shows how far it has got on standard error, on one line it rewrites, and
//! clears it before the report. Never in a pipe, never with `--report json`.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How far the run has got: bytes of input done in the current pass.
#[derive(Debug, Default)]
pub struct Progress {
    done: AtomicUsize,
    total: AtomicUsize,
    /// 1, or 2 when the input holds policy objects that apply to every
    /// workload and the pass runs again with them.
    pass: AtomicUsize,
}

impl Progress {
    /// A pass over `total` bytes of input begins.
    pub fn start_pass(&self, total: usize) {
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
        self.pass.fetch_add(1, Ordering::Relaxed);
    }

    /// `bytes` more of the input are done.
    pub fn advance(&self, bytes: usize) {
        self.done.fetch_add(bytes, Ordering::Relaxed);
    }

    /// The line to show: `mesh-inject: 45% of 57 MB`.
    fn line(&self) -> String {
        let total = self.total.load(Ordering::Relaxed);
        if total == 0 {
            return "mesh-inject: reading the input…".into();
        }
        let done = self.done.load(Ordering::Relaxed).min(total);
        let percent = done * 100 / total;
        let size = megabytes(total);
        match self.pass.load(Ordering::Relaxed) {
            0 | 1 => format!("mesh-inject: {percent}% of {size}"),
            _ => {
                format!("mesh-inject: {percent}% of {size}, again with the input's policy objects")
            }
        }
    }
}

/// A size for people: `57 MB`, `0.3 MB`.
fn megabytes(bytes: usize) -> String {
    let mb = bytes as f64 / 1e6;
    if mb >= 10.0 {
        format!("{mb:.0} MB")
    } else {
        format!("{mb:.1} MB")
    }
}

/// The thread that draws the line; dropping it (at the end of the run, or
/// on an error) stops it and clears the line.
pub struct Ticker {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<bool>>,
}

/// Show `progress` on standard error once the run has taken `delay`,
/// redrawn five times a second.
pub fn show(progress: Arc<Progress>, delay: Duration) -> Ticker {
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = Arc::clone(&stop);
    let thread = std::thread::spawn(move || {
        let start = Instant::now();
        let mut shown = false;
        while !stopped.load(Ordering::Relaxed) {
            if start.elapsed() >= delay {
                // Carriage return, the line, then erase what a longer line left.
                let line = format!("\r{}\x1b[K", progress.line());
                let _ = std::io::stderr().write_all(line.as_bytes());
                shown = true;
                std::thread::park_timeout(Duration::from_millis(200));
            } else {
                std::thread::park_timeout(delay.saturating_sub(start.elapsed()));
            }
        }
        shown
    });
    Ticker {
        stop,
        thread: Some(thread),
    }
}

impl Drop for Ticker {
    /// Stop drawing, and clear the line if one was drawn.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            if thread.join().unwrap_or(false) {
                let _ = std::io::stderr().write_all(b"\r\x1b[K");
            }
        }
    }
}

/// How long a run goes before it shows progress: a second, or
/// `MESH_INJECT_PROGRESS_DELAY_MS`.
pub fn delay() -> Duration {
    std::env::var("MESH_INJECT_PROGRESS_DELAY_MS")
        .ok()
        .and_then(|ms| ms.trim().parse().ok())
        .map_or(Duration::from_secs(1), Duration::from_millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_says_how_far_each_pass_has_got() {
        let progress = Progress::default();
        assert_eq!(progress.line(), "mesh-inject: reading the input…");
        progress.start_pass(57_000_000);
        progress.advance(25_650_000);
        assert_eq!(progress.line(), "mesh-inject: 45% of 57 MB");
        progress.start_pass(300_000);
        progress.advance(400_000);
        assert_eq!(
            progress.line(),
            "mesh-inject: 100% of 0.3 MB, again with the input's policy objects"
        );
    }
}

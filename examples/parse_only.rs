//! The parse-only baseline for the benchmark: read a YAML stream and run the
//! event parser (`saphyr-parser`) over every document, on all cores, and do
//! nothing else. Injecting cannot be faster than this.
//!
//! It uses the tool's own allocator: the parser allocates a string for every
//! scalar, and with the system allocator the baseline would be slower (by
//! about 6% on 5,000 workloads) for a reason that is not parsing.
//!
//! usage: parse_only FILE

use saphyr_parser::{Event, Parser};

#[global_allocator]
static ALLOCATOR: mesh_inject::allocator::Allocator = mesh_inject::allocator::Allocator;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: parse_only FILE");
        std::process::exit(2);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) => {
            eprintln!("{path}: {err}");
            std::process::exit(2);
        }
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let points = mesh_inject::yaml::parse::split_points(&text, threads);
    let events: usize = std::thread::scope(|scope| {
        let handles: Vec<_> = points
            .windows(2)
            .map(|w| {
                let part = &text[w[0]..w[1]];
                scope.spawn(move || count_events(part))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or(0)).sum()
    });
    println!("{events} events");
}

fn count_events(text: &str) -> usize {
    let mut parser = Parser::new_from_str(text);
    let mut events = 0;
    while let Some(Ok((event, _))) = parser.next_event() {
        events += 1;
        if matches!(event, Event::StreamEnd) {
            break;
        }
    }
    events
}

//! Writes the fuzzer's seeds from the generators of the differential test
//! against kubectl's reader (`tests/it/reader_generators.rs`): YAML 1.1's
//! special scalars and Unicode's line breaks in every layout, as documents
//! and as fields of workloads, JSON streams and lists, and the strings the
//! tool's writer writes, as a pod's annotation, label and argument.
//! `fuzz/run.sh` runs it; each seed is one file in DIR.
//!
//! usage: fuzz_seeds DIR

#[path = "../tests/it/reader_generators.rs"]
mod generators;

use mesh_inject::yaml::emit::Layout;
use serde_json::{Value, json};

fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: fuzz_seeds DIR");
        std::process::exit(2);
    };
    let dir = std::path::Path::new(&dir);
    let mut seeds = generators::manifests();
    // The writer's strings: every seventh, and YAML 1.1's special words.
    let yaml = Layout::default();
    let json = Layout {
        json: true,
        ..Layout::default()
    };
    for (n, s) in generators::strings().into_iter().enumerate() {
        if n >= generators::SCALARS.len() && n % 7 != 0 {
            continue;
        }
        let string = Value::String(s.clone());
        let annotation = yaml.block_entry(8, "sidecar.istio.io/inject", &string);
        let labels = format!(
            "      labels: {}\n",
            yaml.flow(&json!({ "app": "web", "k": s }))
        );
        let item = yaml.block_item(10, &string);
        let lines = match n % 3 {
            0 => annotation,
            1 => labels,
            _ => format!("          args:\n{item}"),
        };
        let slot = ["ANNOTATIONS", "POD", "CONTAINER"][n % 3];
        let text = if slot == "POD" {
            // A second labels key would be a duplicate: replace the first.
            generators::deployment("POD", "").replace("      labels: {app: web}\n", &lines)
        } else {
            generators::deployment(slot, &lines)
        };
        seeds.push(text);
        if n % 2 == 0 {
            // In a JSON document, as the writer writes JSON.
            seeds.push(
                generators::json_line("web")
                    .replace(r#""emoji":"\ud83d\ude00""#, &json.flow_entry("k", &string)),
            );
        }
    }
    for (n, seed) in seeds.iter().enumerate() {
        let path = dir.join(format!("generated-{n:05}.yaml"));
        if let Err(err) = std::fs::write(&path, seed) {
            eprintln!("{}: {err}", path.display());
            std::process::exit(2);
        }
    }
    println!("{} seeds in {}", seeds.len(), dir.display());
}

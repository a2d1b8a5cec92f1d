//! The cluster's template path: Istio's `istio-sidecar-injector` whose
//! sidecar template is built from the input's bytes, over a stream of
//! workloads alike but for their strings, also built from them (see
//! `tests/it/template_programs.rs`). The first byte splits the rest in two:
//! the program's bytes and the stream's; with its high bit set, the
//! program's bytes are the template's text itself (when UTF-8), so that
//! programs no generator writes are tried too.
//!
//! Either run may refuse the input with an error, never panic; and a run
//! that reuses what it made (the renderings alike workloads share, the
//! filled profile, the written blocks) gives the very bytes and results of
//! the reference run, which keeps nothing (`reuse::Mode::Reference`).

#![no_main]

#[path = "../../tests/it/template_programs.rs"]
mod programs;

use libfuzzer_sys::fuzz_target;
use mesh_inject::pipeline::{self, Action, Settings};
use mesh_inject::profile::Profile;
use mesh_inject::reuse::Mode;
use mesh_inject::source::Source;
use programs::{Bytes, config_maps, sidecar_template, workloads};
use std::sync::OnceLock;

fn source(text: String) -> Source {
    Source::new(None, text)
}

/// The output and each object's results of a run in `mode`, or its error.
fn run(mode: Mode, workloads: &str, context: &str) -> Result<Vec<String>, String> {
    // Read once: a profile is plain data, and reading it is a good part of
    // a short input's time.
    static ISTIO: OnceLock<Profile> = OnceLock::new();
    let profile = ISTIO
        .get_or_init(|| Profile::embedded("istio").expect("the embedded profile loads"))
        .clone();
    let settings = Settings {
        reuse: mode,
        ..Settings::new(Action::Inject, profile)
    };
    let sources = vec![source(workloads.to_string())];
    let context = [source(context.to_string())];
    let processed = pipeline::process_all(sources, &context, &settings).map_err(|e| e.to_string())?;
    processed
        .iter()
        .map(|p| {
            let text = p.try_text().map_err(|e| e.to_string())?;
            Ok(format!("{text}\n{:#?}", p.objects))
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let Some((&split, data)) = data.split_first() else {
        return;
    };
    let at = usize::from(split & 0x7f).min(data.len());
    let (program, stream) = data.split_at(at);
    let template = if split & 0x80 != 0 {
        let Ok(text) = std::str::from_utf8(program) else {
            return;
        };
        text.to_string()
    } else {
        sidecar_template(&mut Bytes::new(program))
    };
    let context = config_maps(&template);
    let workloads = workloads(&mut Bytes::new(stream), 12);
    let reused = run(Mode::Reuse, &workloads, &context);
    let reference = run(Mode::Reference, &workloads, &context);
    assert_eq!(
        reused, reference,
        "reusing differs from the reference with the template:\n{template}"
    );
});

//! The reuse held to the reference: a run that keeps nothing from one
//! workload to the next (`Settings::reuse` at `Mode::Reference`, the
//! command line's hidden `--no-reuse`) renders every proxy, filling and
//! block of text for real. A run that reuses what it made must give the
//! very same bytes, and the same results for each object (outcome, notes,
//! verdicts), on:
//!
//! - streams of generated workloads through generated template programs
//!   (`template_programs.rs`), as the cluster's `istio-sidecar-injector`;
//! - the repository's own inputs and a template written for these tests
//!   (`testdata/reference/istio-config.yaml`), with Linkerd's profile,
//!   Istio's, and Istio's with that template;
//! - and where `../shared` is beside the checkout, the whole corpus (the
//!   meshes' test inputs among it) with those, and with the ConfigMaps
//!   Istio's chart writes under the settings the meshes' cases use; and
//!   Istio's own injection cases, each input with its case's settings.
//!
//! Each run is of many files at once: the workers carry what they keep
//! from file to file, as they do for a repository.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mesh_inject::pipeline::{self, Action, Settings};
use mesh_inject::profile::Profile;
use mesh_inject::reuse::Mode;
use mesh_inject::source::Source;
use proptest::prelude::*;

use crate::common;
use crate::template_programs::{Bytes, config_maps, sidecar_template, workloads};

/// The settings of a run with `profile`, reusing as `mode` says.
fn settings(profile: &Profile, mode: Mode) -> Settings {
    Settings {
        reuse: mode,
        ..Settings::new(Action::Inject, profile.clone())
    }
}

fn embedded(name: &str) -> Profile {
    Profile::embedded(name).expect("an embedded profile")
}

fn source(path: Option<&Path>, text: String) -> Source {
    Source::new(path.map(Path::to_path_buf), text)
}

/// What a run of `sources` gives: each source's text and the results of
/// its objects, or the run's error; with the number of workloads injected.
fn run(
    profile: &Profile,
    mode: Mode,
    sources: &[Source],
    context: &[Source],
) -> (Result<Vec<String>, String>, usize) {
    let settings = settings(profile, mode);
    let processed = match pipeline::process_all(sources.to_vec(), context, &settings) {
        Ok(processed) => processed,
        Err(error) => return (Err(error.to_string()), 0),
    };
    let injected = processed
        .iter()
        .flat_map(|p| &p.objects)
        .filter(|o| o.outcome == mesh_inject::rules::Outcome::Injected)
        .count();
    let each = processed
        .iter()
        .map(|p| {
            let text = p.try_text().map_err(|e| e.to_string())?;
            Ok(format!("{text}\n{:#?}", p.objects))
        })
        .collect();
    (each, injected)
}

/// Asserts that `sources` come out of a run that reuses as out of the
/// reference, and returns how many workloads were injected.
fn same_both_ways(what: &str, profile: &Profile, sources: &[Source], context: &[Source]) -> usize {
    let (reused, injected) = run(profile, Mode::Reuse, sources, context);
    let (reference, _) = run(profile, Mode::Reference, sources, context);
    if reused == reference {
        return injected;
    }
    let (Ok(reused), Ok(reference)) = (&reused, &reference) else {
        panic!("{what}: reusing gives {reused:?}, the reference {reference:?}");
    };
    for (at, (got, want)) in reused.iter().zip(reference).enumerate() {
        if got == want {
            continue;
        }
        let name = sources.get(at).map(Source::name).unwrap_or_default();
        let line = got
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        panic!(
            "{what}: {name} differs from line {}:\n  reusing:   {:?}\n  reference: {:?}",
            line + 1,
            got.lines().nth(line),
            want.lines().nth(line)
        );
    }
    panic!("{what}: another number of outputs");
}

/// The files of `paths` that a run of each alone with `profile` and
/// `context` injects without an error (a file with a syntax error, or a
/// workload refused, stops a run).
fn runnable(profile: &Profile, paths: &[PathBuf], context: &[Source]) -> Vec<Source> {
    paths
        .iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(path).ok()?;
            let one = [source(Some(path), text)];
            run(profile, Mode::Reuse, &one, context).0.ok()?;
            let [one] = one;
            Some(one)
        })
        .collect()
}

fn context_of(path: &Path) -> Vec<Source> {
    let text = std::fs::read_to_string(path).expect("the context");
    vec![source(Some(path), text)]
}

/// The profiles and contexts every set of inputs is run with: Linkerd's
/// (with the sample trust anchors), Istio's, and Istio's with the cluster
/// template written for these tests.
fn configurations() -> Vec<(&'static str, Profile, Vec<Source>)> {
    vec![
        ("linkerd", embedded("linkerd"), common::cluster_sources()),
        ("istio", embedded("istio"), Vec::new()),
        (
            "istio with the tests' template",
            embedded("istio"),
            context_of(&common::testdata("reference/istio-config.yaml")),
        ),
    ]
}

/// A stream of alike workloads, as the generator makes them from `seed`.
fn generated_stream(seed: u8, count: usize) -> Source {
    let bytes: Vec<u8> = (0..=255u8)
        .map(|b| b.wrapping_mul(seed | 1) ^ seed)
        .collect();
    source(None, workloads(&mut Bytes::new(&bytes), count))
}

/// [`generated_stream`] without the workloads a run of each alone with
/// `profile` and `context` refuses (a label that breaks the template's
/// YAML where it copies it plain).
fn runnable_stream(profile: &Profile, context: &[Source], seed: u8, count: usize) -> Source {
    let stream = generated_stream(seed, count).text;
    let kept: Vec<&str> = stream
        .split("---\n")
        .filter(|one| {
            let one = [source(None, one.to_string())];
            run(profile, Mode::Reuse, &one, context).0.is_ok()
        })
        .collect();
    source(None, kept.join("---\n"))
}

#[test]
fn the_repositorys_inputs_come_out_of_the_reference_as_reused() {
    let mut paths = common::manifests_under(&common::testdata("inject"));
    paths.extend(common::manifests_under(&common::testdata("example")));
    paths.extend(common::manifests_under(&common::testdata("istio")));
    for (what, profile, context) in configurations() {
        let mut sources = runnable(&profile, &paths, &context);
        sources.extend((1..12).map(|seed| runnable_stream(&profile, &context, seed, 24)));
        let injected = same_both_ways(what, &profile, &sources, &context);
        assert!(
            injected >= 100,
            "{what}: only {injected} workloads injected"
        );
    }
}

/// The whole corpus, the meshes' test inputs among it, with each
/// configuration and with the ConfigMaps Istio's chart writes (as they are,
/// and with the settings the meshes' cases use most).
#[test]
fn the_corpus_comes_out_of_the_reference_as_reused() {
    let test = "the_corpus_comes_out_of_the_reference_as_reused";
    let Some(corpus) = common::corpus(test) else {
        return;
    };
    let paths = common::manifests_under(&corpus);
    let mut configurations = configurations();
    let dir = tempfile::tempdir().expect("temp dir");
    match crate::istio_cluster_config::fidelity_for(test) {
        Some(fidelity) => {
            let mut made = Default::default();
            for (what, args) in [
                ("istio with the chart's ConfigMaps", &[][..]),
                (
                    "istio with the chart's, status port 123",
                    &["--set", "global.proxy.statusPort=123"][..],
                ),
                (
                    "istio with the chart's, holding the application",
                    &[
                        "--mesh",
                        "defaultConfig.holdApplicationUntilProxyStarts=true",
                    ][..],
                ),
                (
                    "istio with the chart's, TPROXY",
                    &["--mesh", "defaultConfig.interceptionMode=TPROXY"][..],
                ),
            ] {
                let path = crate::istio_cluster_config::config_maps(
                    &fidelity,
                    dir.path(),
                    args,
                    &mut made,
                );
                configurations.push((what, embedded("istio"), context_of(&path)));
            }
        }
        None => common::skip_part(test, "the chart's ConfigMaps cannot be made here"),
    }
    for (what, profile, context) in configurations {
        let sources = runnable(&profile, &paths, &context);
        assert!(
            sources.len() >= 60,
            "{what}: only {} files run",
            sources.len()
        );
        let injected = same_both_ways(what, &profile, &sources, &context);
        assert!(injected >= 50, "{what}: only {injected} workloads injected");
    }
}

/// Istio's own injection cases (`../shared/fidelity/istio/CASES.md`),
/// each with its settings written into the profile's values as the golden
/// test writes them: the inputs of the cases that share settings run
/// together, reusing and in the reference.
#[test]
fn the_meshes_cases_come_out_of_the_reference_as_reused() {
    let test = "the_meshes_cases_come_out_of_the_reference_as_reused";
    let Some(fidelity) = common::shared("fidelity/istio", test) else {
        return;
    };
    let inputs = fidelity.join("../../corpus/istio-inject-inputs");
    let mut by_settings: BTreeMap<Vec<&str>, Vec<PathBuf>> = BTreeMap::new();
    for case in common::istio_cases(&fidelity) {
        let Some(values) = crate::istio_goldens::values(&case.settings) else {
            continue;
        };
        let path = [
            inputs.join(&case.input),
            fidelity.join("golden").join(&case.input),
        ]
        .into_iter()
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("no input {}", case.input));
        let paths = by_settings.entry(values).or_default();
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
    assert!(
        by_settings.len() >= 15,
        "only {} settings",
        by_settings.len()
    );
    let mut injected = 0;
    for (values, paths) in &by_settings {
        let mut profile = embedded("istio");
        for value in crate::istio_goldens::BASE.iter().chain(values) {
            let (name, value) = profile
                .parse_assignment(value, &serde_json::Map::new())
                .unwrap_or_else(|e| panic!("{value}: {e}"));
            profile.values.insert(name, value);
        }
        let sources = runnable(&profile, paths, &[]);
        let what = format!("Istio's cases with {values:?}");
        injected += same_both_ways(&what, &profile, &sources, &[]);
    }
    assert!(injected >= 100, "only {injected} workloads injected");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Generated template programs, as the cluster's sidecar template, over
    /// streams of workloads of one shape: the renderings alike workloads
    /// share give what rendering each for real gives (or the same error).
    #[test]
    fn generated_templates_render_alike_workloads_as_the_reference(
        program in prop::collection::vec(any::<u8>(), 1..48),
        stream in prop::collection::vec(any::<u8>(), 1..256),
    ) {
        let template = sidecar_template(&mut Bytes::new(&program));
        let context = [source(None, config_maps(&template))];
        let sources = [source(None, workloads(&mut Bytes::new(&stream), 16))];
        let istio = embedded("istio");
        let (reused, _) = run(&istio, Mode::Reuse, &sources, &context);
        let (reference, _) = run(&istio, Mode::Reference, &sources, &context);
        prop_assert_eq!(reused, reference, "template:\n{}", template);
    }
}

/// Some generated programs render (the property above is not all errors),
/// and some stream shares renderings.
#[test]
fn generated_templates_mostly_render() {
    let mut rendered = 0;
    let istio = embedded("istio");
    for seed in 0..32u8 {
        let program: Vec<u8> = (0..24u8)
            .map(|b| b.wrapping_mul(31).wrapping_add(seed.wrapping_mul(7)))
            .collect();
        let template = sidecar_template(&mut Bytes::new(&program));
        let context = [source(None, config_maps(&template))];
        let sources = [generated_stream(seed, 16)];
        let (result, injected) = run(&istio, Mode::Reuse, &sources, &context);
        if result.is_ok() && injected > 0 {
            rendered += 1;
        }
    }
    assert!(rendered >= 16, "only {rendered} of 32 programs render");
}

/// The command line's `--no-reuse` runs the reference: the same bytes.
#[test]
fn no_reuse_on_the_command_line_gives_the_same_bytes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let input = dir.path().join("stream.yaml");
    let context = common::testdata("reference/istio-config.yaml");
    let stream = runnable_stream(&embedded("istio"), &context_of(&context), 5, 30);
    std::fs::write(&input, &stream.text).expect("write");
    let input = input.to_string_lossy().to_string();
    let context = context.to_string_lossy().to_string();
    let args = ["--profile", "istio", "--context", &context, "-f", &input];
    let reused = common::run(&args, None);
    let mut reference_args = vec!["--no-reuse"];
    reference_args.extend(args);
    let reference = common::run(&reference_args, None);
    assert_eq!(reused.code, 0, "{}", reused.stderr);
    assert_eq!(reference.code, 0, "{}", reference.stderr);
    assert_eq!(reused.stdout, reference.stdout);
    assert_eq!(reused.stderr, reference.stderr);
    assert!(reused.stdout.contains("istio-proxy"));
}

/// A user's string that starts with the character the cluster-template
/// reading marks plain scalars with (U+F8FF) comes out as written in every
/// workload, the first and those that share its rendering, through the
/// real binary: it was once read as YAML (`"\u{f8ff}true"` became `true`)
/// from the second workload on.
#[test]
fn a_string_holding_the_plain_mark_comes_out_as_written_in_every_workload() {
    let dir = tempfile::tempdir().expect("temp dir");
    let workload = |name: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  namespace: shop\nspec:\n  selector:\n    matchLabels: {{app: {name}}}\n  template:\n    metadata:\n      labels: {{app: {name}}}\n      annotations:\n        sidecar.istio.io/proxyImage: \"\\uF8FFtrue\"\n    spec:\n      containers:\n        - name: {name}\n          image: {name}:1.0\n"
        )
    };
    let input = dir.path().join("marked.yaml");
    let stream: Vec<String> = ["web-1", "web-2", "web-3"].map(workload).into();
    std::fs::write(&input, stream.join("---\n")).expect("write");
    let input = input.to_string_lossy().to_string();
    for reuse in [&[][..], &["--no-reuse"][..]] {
        let mut args = reuse.to_vec();
        args.extend(["-q", "--warn-only", "--profile", "istio", "-f", &input]);
        let run = common::run(&args, None);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        let images: Vec<serde_json::Value> = common::values(&run.stdout)
            .into_iter()
            .flatten()
            .flat_map(|deployment| {
                // A native sidecar where the version has them.
                let spec = &deployment["spec"]["template"]["spec"];
                let lists = [&spec["initContainers"], &spec["containers"]];
                lists.map(|list| list.as_array().cloned().unwrap_or_default())
            })
            .flatten()
            .filter(|c| c["name"] == "istio-proxy")
            .map(|c| c["image"].clone())
            .collect();
        assert_eq!(
            images,
            vec![serde_json::json!("\u{f8ff}true"); 3],
            "{args:?}"
        );
    }
}

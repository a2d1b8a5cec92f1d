//! A whole run: read every source, process it, then write the chosen output.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::cli::{
    AdmitArgs, AdmitFormat, Cli, ColorChoice, Command, CommonArgs, ContextCommand, Format,
    InjectArgs, InjectOptions, InputArgs, NativeSidecar, ProfileArgs, ReportArgs, ReportFormat,
    SecurityContext, VerifyArgs,
};
use crate::error::{ConfigError, Error};
use crate::output::{self, Paint};
use crate::pipeline::{self, Action, Processed, Settings};
use crate::profile::{self, NativeChoice, Prepared, Profile};
use crate::progress::Progress;
use crate::report::{self, Written};
use crate::rules::SecurityMode;
use crate::source::SkippedFile;
use crate::{source, yaml};

/// Exit status of a run that went through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Done,
    /// `--check` found files that would change, or `--diff` differences
    /// (status 1, as `kubectl diff` and `diff` exit with differences).
    WouldChange,
    /// The cluster would reject an injected workload; nothing was written.
    Rejected,
    /// `verify`: the cluster's webhook gives another pod than the tool's,
    /// or the cluster refused one.
    Differs,
}

/// Run the command line; errors mean exit status 2.
pub fn run(cli: Cli) -> Result<Status, Error> {
    match cli.command {
        Some(Command::Config(args)) => print_config(&args),
        Some(Command::Admit(args)) => admit(args),
        Some(Command::Verify(args)) => verify(args),
        Some(Command::Context(ContextCommand::Save(args))) => {
            let report = crate::context_save::save(&args)?;
            after_writing(Status::Done, output::to_stderr(&report))
        }
        Some(Command::Version) => after_writing(
            Status::Done,
            output::to_stdout(&format!("kubectl-mesh_inject {}\n", crate::version_text())),
        ),
        Some(Command::Inject(args)) => transform(TransformArgs::inject(args)),
        Some(Command::Uninject(args)) => transform(TransformArgs {
            common: args.common,
            profile: args.profile,
            inject: None,
        }),
        None => transform(TransformArgs::inject(cli.inject)),
    }
}

/// The profile the flags name, its text, and the `--set` values checked against it.
fn load_profile(args: &ProfileArgs) -> Result<(Profile, String, Map<String, Value>), Error> {
    let (profile, text) = match &args.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| Error::io(path, &e).given_with("--config"))?;
            (Profile::parse(&text, &path.display().to_string())?, text)
        }
        None => {
            let name = args.profile.as_deref().unwrap_or(profile::EMBEDDED[0].0);
            let (_, text) = profile::embedded_text(name)?;
            (Profile::embedded(name)?, text.to_string())
        }
    };
    let mut flags = Map::new();
    for assignment in &args.set {
        let (name, value) = profile.parse_assignment(assignment, &flags)?;
        flags.insert(name, value);
    }
    Ok((profile, text, flags))
}

/// `config`: the profile's own text, with `--set` values edited in place.
fn print_config(args: &ProfileArgs) -> Result<Status, Error> {
    let (_, text, flags) = load_profile(args)?;
    let mut out = text.clone();
    if !flags.is_empty() {
        let docs = yaml::parse_stream(&text).map_err(|e| Error::Internal(e.message))?;
        if let Some(root) = docs.first().and_then(|d| d.root.as_ref()) {
            let mut value = yaml::value::to_value(root).map_err(|e| Error::Internal(e.message))?;
            if let Some(Value::Object(values)) = value.get_mut("values") {
                values.extend(flags);
            }
            let edits =
                yaml::edit::diff(&text, root, &value).map_err(|e| Error::Internal(e.message))?;
            out = yaml::edit::apply(&text, edits).map_err(|err| {
                let origin = match &args.config {
                    Some(path) => path.display().to_string(),
                    None => format!(
                        "the {} profile",
                        args.profile.as_deref().unwrap_or(profile::EMBEDDED[0].0)
                    ),
                };
                Error::internal_at(&origin, &text, err.offset, &err.message)
            })?;
        }
    }
    after_writing(Status::Done, output::to_stdout(&out))
}

/// The run's status once its output is written. A closed pipe (`| head`) is
/// the reader's choice: the writing stops there, quietly, and the status is
/// the run's own, as ripgrep ends with 0 then; any other write failure (a
/// full disk) is an error.
fn after_writing(status: Status, written: Result<(), Error>) -> Result<Status, Error> {
    match written {
        Err(err) if !err.is_broken_pipe() => Err(err),
        _ => Ok(status),
    }
}

/// What a run that writes its input back changed takes: the input and the
/// output, the profile, and inject's options. Uninject has none of those
/// options: it takes out what the record says was added, whatever the
/// cluster's version, policies or context.
struct TransformArgs {
    common: CommonArgs,
    profile: ProfileArgs,
    /// `None`: uninject.
    inject: Option<InjectOptions>,
}

impl TransformArgs {
    fn inject(args: InjectArgs) -> Self {
        TransformArgs {
            common: args.common,
            profile: args.profile,
            inject: Some(args.options),
        }
    }

    fn action(&self) -> Action {
        match self.inject {
            Some(_) => Action::Inject,
            None => Action::Uninject,
        }
    }

    /// `--warn-only` (inject's: uninject rejects nothing).
    fn warn_only(&self) -> bool {
        self.inject
            .as_ref()
            .is_some_and(|options| options.warn_only)
    }
}

fn transform(args: TransformArgs) -> Result<Status, Error> {
    let mut in_function = false;
    let done = transform_input(args, &mut in_function);
    // A KRM function's caller knows its config, not the command line's flags.
    match in_function {
        true => done.map_err(|error| Error::InFunction(Box::new(error))),
        false => done,
    }
}

/// A sign of life for long runs, on a terminal only, cleared before the
/// report (see progress.rs): not over what is being typed on a terminal
/// (`-f -`), nor on a terminal that cannot rewrite a line.
fn progress_for(common: &CommonArgs) -> Option<Arc<Progress>> {
    let report = &common.report;
    let typing =
        std::io::stdin().is_terminal() && common.input.paths().iter().any(|p| p.as_os_str() == "-");
    let dumb = std::env::var_os("TERM").is_some_and(|term| term == "dumb");
    (std::io::stderr().is_terminal()
        && !typing
        && !dumb
        && !report.quiet
        && report.format == ReportFormat::Text)
        .then(|| Arc::new(Progress::default()))
}

/// [`transform`], saying through `in_function` whether the input was a
/// KRM function's call.
fn transform_input(mut args: TransformArgs, in_function: &mut bool) -> Result<Status, Error> {
    let action = args.action();
    check_flags(&args.common)?;
    let progress = progress_for(&args.common);
    let ticker = progress
        .clone()
        .map(|progress| crate::progress::show(progress, crate::progress::delay()));
    let input = &args.common.input;
    let paths = input_paths(input)?;
    let read = || read_input(input, &paths);
    // Files are read while the profile and the context are loaded. Standard
    // input is read first: it may be a KRM function's call, whose config
    // stands for flags.
    let (read, loaded) = if paths.iter().any(|p| p.as_os_str() == "-") {
        (read(), None)
    } else {
        std::thread::scope(|scope| {
            let reading = scope.spawn(read);
            let loaded = settings_and_cluster(action, &args);
            let read = reading
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (read, Some(loaded))
        })
    };
    let (sources, skipped) = read?;
    // Nothing to check is a mistake (a forgotten -f, a pipe from a command
    // that printed nothing), which a pass would hide.
    if args.common.check
        && !sources.is_empty()
        && sources
            .iter()
            .all(|source| source.path.is_none() && source.text.trim().is_empty())
    {
        return Err(Error::Usage(
            "--check: no input: standard input is empty; name the files to check with -f".into(),
        ));
    }
    // A ResourceList on standard input: run as a KRM function, its
    // functionConfig standing for flags.
    let resource_list = match sources.as_slice() {
        [only] if only.path.is_none() => crate::krm::resource_list(&only.text)
            .map_err(|message| Error::Internal(format!("{}: {message}", only.name())))?,
        _ => None,
    };
    if let Some(list) = &resource_list {
        *in_function = true;
        let common = &args.common;
        if common.check || common.diff || common.in_place || common.output != Format::Yaml {
            return Err(Error::Usage(
                "a ResourceList on standard input is answered with a ResourceList: --check, --diff, --in-place and -o do not apply".into(),
            ));
        }
        apply_function_config(&mut args, &list.config)?;
    }
    let prepared = Prepared::new(args.common.reuse());
    let meshes = meshes_to_uninject(action, &args.profile, &sources)?;
    let first_mesh = |found: &Vec<&'static str>| -> &'static str {
        found.first().copied().unwrap_or(profile::EMBEDDED[0].0)
    };
    let processed = match meshes.first().map(first_mesh) {
        Some(first)
            if meshes
                .iter()
                .any(|found| first_mesh(found) != first || found.len() > 1) =>
        {
            uninject_by_mesh(&mut args, sources, &meshes, progress.as_deref())
        }
        _ => {
            let loaded = match meshes.first().map(first_mesh) {
                Some(mesh) if mesh != profile::EMBEDDED[0].0 => {
                    args.profile.profile = Some(mesh.to_string());
                    None
                }
                _ => loaded,
            };
            let (settings, loaded) =
                loaded.unwrap_or_else(|| settings_and_cluster(action, &args))?;
            pipeline::process_or_return(sources, loaded, &settings, &prepared, progress.as_deref())
        }
    };
    let common = &args.common;
    drop(ticker);
    let mut results = match processed {
        Ok(results) => results,
        Err(failed) => {
            if let (Some(_), [list], Error::Document(at)) =
                (&resource_list, failed.sources.as_slice(), &failed.error)
            {
                // A KRM function's caller shows its results: an error about
                // an item is one, with the items as they came. The run fails
                // all the same and says why on standard error, so a failed
                // write of the answer changes nothing.
                if let Some(answer) = crate::krm::answer_with_error(&list.text, at) {
                    let _ = output::to_stdout(&answer);
                }
            }
            return Err(failed.error);
        }
    };

    note_patches_named(&mut results, &args.common.input.filenames);
    if let Some(list) = &resource_list {
        return answer_function(list, &mut results, &skipped, &args);
    }

    let rejections = report::rejections(&results, args.warn_only());
    if !rejections.is_empty() && !args.warn_only() {
        // Nothing is written: a pipe into `kubectl apply` must apply nothing.
        let written = write_rejections(&common.report, &results, &skipped, &rejections);
        return after_writing(Status::Rejected, written);
    }

    let status = if (common.check || common.diff) && results.iter().any(Processed::changed)
        || common.check && results.iter().any(Processed::fails_check)
    {
        Status::WouldChange
    } else {
        Status::Done
    };
    let written_as = if common.check || common.diff {
        Written::Shown
    } else {
        Written::Yes
    };
    let written = write_output(action, common, &results).and_then(|()| {
        let warn_only = args.warn_only();
        write_report(&common.report, &results, &skipped, warn_only, written_as)
    });
    // The process ends with this run: its memory goes back to the system at
    // once, where freeing every object and edit of a large stream one by one
    // (and every rendering of the profile) took milliseconds after the
    // output was written.
    std::mem::forget(results);
    std::mem::forget(prepared);
    after_writing(status, written)
}

/// A file named with -f is read even if it is a kustomize patch: said, on
/// its first object.
fn note_patches_named(results: &mut [Processed], filenames: &[PathBuf]) {
    for processed in results {
        let source = &processed.source;
        let Some(path) = source.path.as_ref().filter(|_| source.found_in.is_none()) else {
            continue;
        };
        if !filenames.contains(path) {
            continue;
        }
        let Some(why) = source::kustomize_patch(path) else {
            continue;
        };
        let text = format!("{} is {why}; read as it was named with -f", path.display());
        if let Some(object) = processed.objects.first_mut() {
            object.notes.push(crate::note::Note::info(text));
        }
    }
}

/// The answer of a run as a KRM function: the ResourceList with its
/// results, even on a rejection (kpt and kustomize show them), failing then.
fn answer_function(
    list: &crate::krm::ResourceList,
    results: &mut [Processed],
    skipped: &[source::SkippedFile],
    args: &TransformArgs,
) -> Result<Status, Error> {
    let [processed] = results else {
        return Err(Error::Internal(format!(
            "a KRM function's input read as {} sources, not one",
            results.len()
        )));
    };
    let krm_results = crate::krm::results(processed, list, args.warn_only());
    crate::krm::add_results(processed, list, krm_results)?;
    // Written piece by piece, and checked: a full disk fails the run.
    let written = output::pieces_to_stdout(processed.byte_pieces());
    // The results say what the text report would (kpt prints them, and
    // then standard error): the text report only with -v.
    let report = &args.common.report;
    let written = written.and_then(|()| {
        if report.format == ReportFormat::Text && !report.verbose {
            return Ok(());
        }
        write_report(report, results, skipped, args.warn_only(), Written::Yes)
    });
    let rejections = report::rejections(results, args.warn_only());
    let rejected = !args.warn_only() && !rejections.is_empty();
    // The results are not shown by every caller (kustomize keeps them
    // only in a results file): a failing function says why here too.
    let written = written.and_then(|()| {
        if !rejected || report.quiet || report.format == ReportFormat::Json {
            return Ok(());
        }
        let lines: String = rejections
            .iter()
            .map(|r| format!("  {}\n", crate::error::in_function_terms(&r.to_string())))
            .collect();
        output::to_stderr(&format!(
            "error: the cluster would reject what this function writes (see its results):\n{lines}"
        ))
    });
    let status = if rejected {
        Status::Rejected
    } else {
        Status::Done
    };
    after_writing(status, written)
}

/// The meshes whose injections uninject takes out of each source when no
/// profile is named: each file's by the mesh that injected it, as its
/// record (or the mesh's own marker) says. None for inject, or with a
/// profile named.
fn meshes_to_uninject(
    action: Action,
    profile: &ProfileArgs,
    sources: &[source::Source],
) -> Result<Vec<Vec<&'static str>>, Error> {
    if action != Action::Uninject || profile.profile.is_some() || profile.config.is_some() {
        return Ok(Vec::new());
    }
    for source in sources {
        // A file the tool injected with a profile of the user's own is not
        // uninjected as if an embedded one had: the profile must be given.
        // The record says what was added, whatever markers the profile wrote.
        if let Some(containers) = added_by_own_profile(&source.text) {
            return Err(Error::Usage(format!(
                "{}: injected with a profile of your own (the tool's record adds {containers}, \
                 which no embedded profile injects): give it to uninject with --config FILE",
                source.name()
            )));
        }
    }
    Ok(sources
        .iter()
        .map(|source| injected_by(&source.text))
        .collect())
}

/// Each embedded profile's mesh, with the marker its own injector leaves
/// on a pod and the proxy container the tool's record names.
const MESH_SIGNS: [(&str, &str, &str); 2] = [
    ("linkerd", "linkerd.io/proxy-version", "linkerd-proxy"),
    ("istio", "sidecar.istio.io/status", "istio-proxy"),
];

/// The embedded profiles of the meshes that injected `text`, each once:
/// first the one whose proxy the tool's first record names, then those of
/// the other records, then those whose marker `text` holds, in the order
/// they come; none when nothing shows an injection.
fn injected_by(text: &str) -> Vec<&'static str> {
    use crate::rules::record::RECORD_ANNOTATION;
    let mut found: Vec<&'static str> = Vec::new();
    let mut add = |name: &'static str| {
        if !found.contains(&name) {
            found.push(name);
        }
    };
    let mut rest = text;
    while let Some((_, after)) = rest.split_once(RECORD_ANNOTATION) {
        let line = after.split('\n').next().unwrap_or_default();
        for (name, _, proxy) in MESH_SIGNS {
            if line.contains(proxy) {
                add(name);
            }
        }
        rest = after;
    }
    let mut markers: Vec<(usize, &'static str)> = MESH_SIGNS
        .iter()
        .filter_map(|(name, marker, _)| text.find(marker).map(|at| (at, *name)))
        .collect();
    markers.sort_unstable();
    for (_, name) in markers {
        add(name);
    }
    found
}

/// The containers a record of the tool in `text` adds when none of them is
/// an embedded profile's proxy: the file was injected with a profile of
/// the user's own (`--config`), which uninject needs to be given.
fn added_by_own_profile(text: &str) -> Option<String> {
    use crate::rules::record::RECORD_ANNOTATION;
    text.split(RECORD_ANNOTATION).skip(1).find_map(|after| {
        let line = after.split('\n').next().unwrap_or_default();
        let containers: Vec<&str> = line
            .split(';')
            .filter_map(|entry| {
                let entry = entry.trim_start_matches([':', ' ', '"', '\'']);
                entry
                    .strip_prefix("containers=")
                    .or_else(|| entry.strip_prefix("initContainers="))
            })
            .flat_map(|names| names.split(','))
            .map(|name| name.trim_end_matches(['"', '\'', ',', '}', ' ']))
            .filter(|name| !name.is_empty())
            .collect();
        let known = containers
            .iter()
            .any(|name| MESH_SIGNS.iter().any(|(_, _, proxy)| name == proxy));
        (!containers.is_empty() && !known).then(|| containers.join(", "))
    })
}

/// uninject of files that different meshes injected (`meshes`, those of
/// each source, see [`injected_by`]): each file with its first mesh's
/// profile, then, where it shows another, its output again with that one's
/// (a workload is uninjected by the pass of its own mesh, which the others
/// leave as it is); the results in the order of the files.
fn uninject_by_mesh(
    args: &mut TransformArgs,
    sources: Vec<source::Source>,
    meshes: &[Vec<&'static str>],
    progress: Option<&Progress>,
) -> Result<Vec<Processed>, pipeline::Failed> {
    let count = sources.len();
    let mut groups: Vec<(&'static str, Vec<usize>, Vec<source::Source>)> = Vec::new();
    for (index, (source, found)) in sources.into_iter().zip(meshes).enumerate() {
        let mesh = found.first().copied().unwrap_or(profile::EMBEDDED[0].0);
        match groups.iter_mut().find(|(name, _, _)| *name == mesh) {
            Some((_, indices, group)) => {
                indices.push(index);
                group.push(source);
            }
            None => groups.push((mesh, vec![index], vec![source])),
        }
    }
    let mut results: Vec<Option<Processed>> = (0..count).map(|_| None).collect();
    for (mesh, indices, group) in groups {
        let processed = uninject_with(args, mesh, group, progress)?;
        for (index, processed) in indices.into_iter().zip(processed) {
            if let Some(slot) = results.get_mut(index) {
                *slot = Some(processed);
            }
        }
    }
    let mut done = Vec::with_capacity(count);
    for (processed, found) in results.into_iter().flatten().zip(meshes) {
        let mut processed = processed;
        for &mesh in found.iter().skip(1) {
            processed = uninject_again(args, processed, mesh, progress)?;
        }
        done.push(processed);
    }
    args.profile.profile = None;
    Ok(done)
}

/// `sources` uninjected with the embedded profile `mesh`.
fn uninject_with(
    args: &mut TransformArgs,
    mesh: &str,
    sources: Vec<source::Source>,
    progress: Option<&Progress>,
) -> Result<Vec<Processed>, pipeline::Failed> {
    args.profile.profile = Some(mesh.to_string());
    let (settings, loaded) = match settings_and_cluster(Action::Uninject, args) {
        Ok(both) => both,
        Err(error) => return Err(pipeline::Failed { error, sources }),
    };
    let prepared = Prepared::new(settings.reuse);
    pipeline::process_or_return(sources, loaded, &settings, &prepared, progress)
}

/// `processed`'s output uninjected again with the embedded profile `mesh`:
/// the source as it was, the text of the second pass, and for each object
/// the pass that uninjected it (the first's where the second found nothing).
fn uninject_again(
    args: &mut TransformArgs,
    processed: Processed,
    mesh: &str,
    progress: Option<&Progress>,
) -> Result<Processed, pipeline::Failed> {
    let text = match processed.try_text() {
        Ok(text) => text.into_owned(),
        Err(error) => {
            return Err(pipeline::Failed {
                error,
                sources: vec![processed.source],
            });
        }
    };
    let source = source::Source {
        path: processed.source.path.clone(),
        text,
        found_in: processed.source.found_in.clone(),
        aliases: processed.source.aliases.clone(),
        kustomized: processed.source.kustomized.clone(),
    };
    let Some(again) = uninject_with(args, mesh, vec![source], progress)?.pop() else {
        return Ok(processed);
    };
    let text = match again.try_text() {
        Ok(text) => text.into_owned(),
        Err(error) => {
            return Err(pipeline::Failed {
                error,
                sources: vec![processed.source],
            });
        }
    };
    let objects = if again.objects.len() == processed.objects.len() {
        processed
            .objects
            .into_iter()
            .zip(again.objects)
            .map(|(first, second)| {
                if matches!(second.outcome, crate::rules::plan::Outcome::NotInjected) {
                    first
                } else {
                    second
                }
            })
            .collect()
    } else {
        again.objects
    };
    Ok(Processed {
        source: processed.source,
        output: pipeline::Output::Text(text),
        objects,
        values: again.values,
    })
}

/// What the mode writes: the files that would change (`--check`), the files
/// themselves (`--in-place`), the diff, or the output on standard output.
fn write_output(action: Action, common: &CommonArgs, results: &[Processed]) -> Result<(), Error> {
    if common.check {
        let verb = match action {
            Action::Inject => "inject",
            Action::Uninject => "uninject",
        };
        // With --report json, standard error is the JSON report alone.
        if common.report.format == ReportFormat::Json {
            return Ok(());
        }
        let mut lines = String::new();
        let stale: Vec<&Processed> = results
            .iter()
            .filter(|p| p.changed() || p.fails_check())
            .collect();
        for processed in &stale {
            lines.push_str(&format!("would {verb}: {}\n", processed.source.name()));
            for why in report::stale_lines(processed) {
                lines.push_str(&format!("  {why}\n"));
            }
        }
        // Files can be fixed in place; standard input cannot. A command
        // line that is not all text cannot be shown to be run again.
        let args: Option<Vec<String>> = std::env::args_os()
            .skip(1)
            .map(|arg| arg.into_string().ok())
            .collect();
        let files_only = stale.iter().all(|p| p.source.path.is_some());
        // --in-place cannot write what cannot be edited.
        let fixable = stale.iter().any(|p| p.changed());
        if let Some(command) = args.filter(|_| files_only && fixable) {
            lines.push_str(&format!("fix: {}\n", report::fix_command(&command)));
        }
        output::to_stderr(&lines)
    } else if common.in_place {
        // On a failure, nothing below runs: no note or report claims a write.
        let notes = output::write_in_place(results, common.overwrite_read_only)?;
        if common.report.quiet {
            return Ok(());
        }
        let lines: String = notes.iter().map(|n| format!("note: {n}\n")).collect();
        output::to_stderr(&lines)
    } else if common.diff {
        output::to_stdout(&output::diff(
            results,
            use_color(common.report.color, Stream::Stdout),
        )?)
    } else {
        match common.output {
            Format::Yaml => {
                let mut out = output::Gathered::new(std::io::stdout().lock());
                output::write_yaml_stream(results, &mut out, output::STDOUT)?;
                out.finish().map_err(|error| Error::Write {
                    to: output::STDOUT,
                    error,
                })
            }
            Format::Json => output::to_stdout(&output::json_stream(results)),
            Format::Patch => output::to_stdout(&output::patches(results)),
        }
    }
}

/// The report of a run the cluster would reject, then the rejections.
fn write_rejections(
    report: &ReportArgs,
    results: &[Processed],
    skipped: &[SkippedFile],
    rejections: &[String],
) -> Result<(), Error> {
    write_report(report, results, skipped, false, Written::Withheld)?;
    if report.format == ReportFormat::Json {
        // The JSON report carries the rejections; stderr stays one JSON document.
        return Ok(());
    }
    let paint = Paint::new(use_color(report.color, Stream::Stderr));
    let mut text = format!(
        "{} the cluster would reject what this writes; nothing was written (--warn-only writes it anyway):\n",
        paint.error()
    );
    for line in rejections {
        // The hints under a rejection (`  fix: …`) stay plain.
        if line.starts_with(' ') {
            text.push_str(&format!("  {line}\n"));
        } else {
            text.push_str(&format!("  {}\n", paint.paint(Paint::REJECTION, line)));
        }
    }
    output::to_stderr(&text)
}

/// A KRM function's configuration, applied as the flags it stands for:
/// parsed by the very definitions of those flags (`--profile`,
/// `--kube-version`, `--native-sidecar`, `--namespace`, `--warn-only`,
/// `--set`), so that what the command line refuses the function refuses too.
fn apply_function_config(
    args: &mut TransformArgs,
    config: &crate::krm::FunctionConfig,
) -> Result<(), Error> {
    use clap::{Args, FromArgMatches};
    if let Some(problem) = config.problems.first() {
        return Err(ConfigError::FunctionConfig(problem.clone()).into());
    }
    let mut flags: Vec<String> = Vec::new();
    let mut flag = |name: &str, value: &Option<String>| {
        if let Some(value) = value {
            flags.extend([format!("--{name}"), value.clone()]);
        }
    };
    flag("profile", &config.profile);
    flag("kube-version", &config.kube_version);
    flag("native-sidecar", &config.native_sidecar);
    flag("namespace", &config.namespace);
    for value in &config.values {
        flags.extend(["--set".to_string(), value.clone()]);
    }
    let command = InjectArgs::augment_args(clap::Command::new("functionConfig"))
        .no_binary_name(true)
        .disable_help_flag(true);
    let given = command
        .try_get_matches_from(&flags)
        .and_then(|matches| InjectArgs::from_arg_matches(&matches))
        .map_err(|e| ConfigError::FunctionConfig(clap_message(&e)))?;
    if config.profile.is_some() {
        args.profile.profile = given.profile.profile;
    }
    // Uninject takes out what the record says whatever the cluster: the
    // version, the sidecars and warnOnly are inject's (checked all the same).
    if let Some(options) = &mut args.inject {
        if config.kube_version.is_some() {
            options.kube_version = given.options.kube_version;
        }
        if config.native_sidecar.is_some() {
            options.native_sidecar = given.options.native_sidecar;
        }
        options.warn_only |= config.warn_only;
    }
    if config.namespace.is_some() {
        args.common.input.namespace = given.common.input.namespace;
        args.common.input.namespace_in_function_config = true;
    }
    args.profile.set.extend(given.profile.set);
    Ok(())
}

/// A clap error's message without its `error: ` and its usage lines, its
/// tip (`a similar value exists: 'istio'`) kept.
fn clap_message(error: &clap::Error) -> String {
    let text = error.render().to_string();
    text.lines()
        .take_while(|line| !line.starts_with("Usage:") && !line.starts_with("For more information"))
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.strip_prefix("error: ").unwrap_or(line).trim())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The report on standard error, as text or JSON, unless `--quiet`;
/// `written` says whether the output was written, and if not, why.
fn write_report(
    report: &ReportArgs,
    results: &[Processed],
    skipped: &[SkippedFile],
    warn_only: bool,
    written: Written,
) -> Result<(), Error> {
    if report.quiet {
        return Ok(());
    }
    let text = match report.format {
        ReportFormat::Text => report::render(
            results,
            skipped,
            report::Options {
                warn_only,
                verbose: report.verbose,
                written,
            },
            Paint::new(use_color(report.color, Stream::Stderr)),
        ),
        ReportFormat::Json => {
            let mut text = serde_json::to_string_pretty(&report::json(results, skipped, warn_only))
                .unwrap_or_default();
            text.push('\n');
            text
        }
    };
    output::to_stderr(&text)
}

/// `admit`: the admission chain for every pod of the input.
fn admit(args: AdmitArgs) -> Result<Status, Error> {
    let mut settings = crate::admit::Settings {
        run: settings(
            Action::Inject,
            &args.profile,
            args.native_sidecar,
            args.kube_version,
            &args.input,
        )?,
        compare: args.compare,
    };
    with_linkerd_chart(
        &mut settings.run.profile,
        args.linkerd_chart.as_deref(),
        &args.context,
    )?;
    let input = &args.input;
    let (sources, skipped) = read_input(input, &input_paths(input)?)?;
    let context = read_context(&args.context, input)?;
    // As text only: with --report json, standard error is the JSON alone.
    if !args.report.quiet && args.report.format == ReportFormat::Text {
        let lines: String = skipped
            .iter()
            .filter(|f| args.report.verbose || !f.asked)
            .map(|f| format!("{} skipped: {}\n", f.path.display(), f.reason))
            .collect();
        output::to_stderr(&lines)?;
    }
    let admitted = crate::admit::admit_all(&sources, &context, &settings)?;
    // The verdicts go to standard output with `-o text`, else to standard error.
    let stream = match args.output {
        AdmitFormat::Text => Stream::Stdout,
        AdmitFormat::Yaml | AdmitFormat::Json => Stream::Stderr,
    };
    let paint = Paint::new(use_color(args.report.color, stream));
    let text = crate::admit::render(&admitted, args.trace, paint);
    let written = match args.output {
        AdmitFormat::Text => output::to_stdout(&text),
        AdmitFormat::Yaml => output::to_stdout(&output::yaml_documents(
            &crate::admit::stored_pods(&admitted),
        )),
        AdmitFormat::Json => {
            let pods = crate::admit::stored_pods(&admitted);
            let value = match pods.as_slice() {
                [one] => (*one).clone(),
                many => {
                    serde_json::json!({"apiVersion": "v1", "kind": "List", "items": many, "metadata": {}})
                }
            };
            output::to_stdout(&(serde_json::to_string_pretty(&value).unwrap_or_default() + "\n"))
        }
    };
    let written = written.and_then(|()| {
        if args.report.quiet {
            return Ok(());
        }
        let report = match args.report.format {
            ReportFormat::Json => {
                serde_json::to_string_pretty(&crate::admit::json(&admitted)).unwrap_or_default()
                    + "\n"
            }
            ReportFormat::Text if args.output != AdmitFormat::Text => text,
            ReportFormat::Text => String::new(),
        };
        output::to_stderr(&report)
    });
    let status = if admitted.iter().any(crate::admit::Admitted::rejected) {
        Status::Rejected
    } else {
        Status::Done
    };
    after_writing(status, written)
}

/// The settings the flags every command shares give (the profile and its
/// `--set` values, `--native-sidecar`, `--kube-version`, `-n`); inject sets
/// the rest from its own flags, and admit runs its injector with these.
fn settings(
    action: Action,
    profile: &ProfileArgs,
    native: Option<NativeSidecar>,
    version: crate::cluster::KubeVersion,
    input: &InputArgs,
) -> Result<Settings, Error> {
    let (profile, _, flags) = load_profile(profile)?;
    let (namespace, namespace_from) = run_namespace(input)?;
    Ok(Settings {
        action,
        profile,
        flags,
        native: native.map(native_choice),
        version,
        security: SecurityMode::Auto,
        namespace,
        namespace_from,
        keep_values: false,
        whole_lists: false,
        keep_patches: false,
        reuse: crate::reuse::Mode::Reuse,
    })
}

/// The namespace of objects that name none, and where it was given: `-n`
/// (or a KRM function's config), else the variable `--namespace-from-env`
/// names, which must then be set to a namespace's name.
fn run_namespace(input: &InputArgs) -> Result<(Option<String>, Option<String>), Error> {
    if let Some(namespace) = &input.namespace {
        let from = match input.namespace_in_function_config {
            true => "the function config",
            false => "-n",
        };
        return Ok((Some(namespace.clone()), Some(from.to_string())));
    }
    let Some(var) = &input.namespace_from_env else {
        return Ok((None, None));
    };
    let value = std::env::var(var).map_err(|_| {
        Error::Usage(format!(
            "--namespace-from-env {var}: the environment has no {var} (or it is not UTF-8); give the namespace with -n"
        ))
    })?;
    let namespace = crate::source::namespace_name(&value).map_err(|why| {
        Error::Usage(format!(
            "--namespace-from-env {var}: {var} is {value:?}, not a namespace's name: {why}"
        ))
    })?;
    Ok((Some(namespace), Some(var.clone())))
}

fn native_choice(choice: NativeSidecar) -> NativeChoice {
    match choice {
        NativeSidecar::Auto => NativeChoice::Auto,
        NativeSidecar::Always => NativeChoice::Always,
        NativeSidecar::Never => NativeChoice::Never,
    }
}

fn check_flags(common: &CommonArgs) -> Result<(), Error> {
    let mode = if common.diff {
        Some("--diff")
    } else if common.in_place {
        Some("--in-place")
    } else if common.check {
        Some("--check")
    } else {
        None
    };
    if let (Some(mode), true) = (mode, common.output != Format::Yaml) {
        return Err(Error::Usage(format!(
            "-o/--output cannot be combined with {mode}"
        )));
    }
    if common.in_place
        && (common.input.paths().is_empty()
            || common.input.paths().iter().any(|f| f.as_os_str() == "-"))
    {
        return Err(Error::Usage(
            "--in-place needs files given with -f, not standard input".into(),
        ));
    }
    Ok(())
}

/// `verify`: the input injected as inject would with the same flags, then
/// uninjected again (exactly, as the tool's record allows), so that each
/// workload is at hand both ways, whichever way the input came; then each
/// workload the tool injects through the cluster (see [`crate::verify`]).
fn verify(args: VerifyArgs) -> Result<Status, Error> {
    let VerifyArgs {
        input,
        mut profile,
        options,
        kubectl,
        verbose,
        color,
    } = args;
    let (sources, _) = read_input(&input, &input_paths(&input)?)?;
    if sources.iter().all(|s| s.text.trim().is_empty()) {
        return Err(Error::Usage(
            "verify: no input: the input holds no manifests; name them with -f".into(),
        ));
    }
    // Without a profile named, the mesh that injected the input, as its
    // record says (inject's default, Linkerd, for input not injected yet).
    if profile.profile.is_none() && profile.config.is_none() {
        let mut meshes: Vec<&'static str> = Vec::new();
        for mesh in sources.iter().flat_map(|s| injected_by(&s.text)) {
            if !meshes.contains(&mesh) {
                meshes.push(mesh);
            }
        }
        match meshes.as_slice() {
            [] => {}
            [mesh] => profile.profile = Some(mesh.to_string()),
            several => {
                return Err(Error::Usage(format!(
                    "verify: the input was injected by several meshes ({}): verify each one's files with its --profile",
                    several.join(", ")
                )));
            }
        }
    }
    let prepared = Prepared::default();
    let each_way = |action: Action, sources: Vec<source::Source>| {
        let (mut settings, loaded) =
            settings_and_cluster_of(action, &input, &profile, Some(&options), Format::Yaml)?;
        // Both ways, each document's value is what is compared.
        settings.keep_values = true;
        let processed = pipeline::process_or_return(sources, loaded, &settings, &prepared, None)
            .map_err(|failed| failed.error)?;
        Ok::<_, Error>((settings, processed))
    };
    let (settings, injected) = each_way(Action::Inject, sources)?;
    let again = injected
        .iter()
        .map(|processed| {
            Ok(source::Source {
                text: processed.try_text()?.into_owned(),
                ..processed.source.clone()
            })
        })
        .collect::<Result<_, Error>>()?;
    let (_, originals) = each_way(Action::Uninject, again)?;
    let types = crate::workload::WorkloadTypes::with(&settings.profile.workloads);
    let (workloads, left) =
        crate::verify::workloads(&injected, &originals, &types, settings.namespace())?;
    let kubectl = crate::kubectl::Kubectl::new(&kubectl, "verify", "nothing was verified");
    let verified = crate::verify::verify_all(workloads, &kubectl)?;
    let paint = Paint::new(use_color(color, Stream::Stdout));
    let status = if crate::verify::any_failed(&verified) {
        Status::Differs
    } else {
        Status::Done
    };
    let text = crate::verify::render(&verified, &left, verbose, paint);
    after_writing(status, output::to_stdout(&text))
}

/// The settings of a run of `action` with `args`, and what it knows before
/// its input (see [`pipeline::load`]).
fn settings_and_cluster(
    action: Action,
    args: &TransformArgs,
) -> Result<(Settings, Result<pipeline::Loaded, Error>), Error> {
    let common = &args.common;
    let (settings, loaded) = settings_and_cluster_of(
        action,
        &common.input,
        &args.profile,
        args.inject.as_ref(),
        common.output,
    )?;
    let settings = Settings {
        reuse: common.reuse(),
        ..settings
    };
    Ok((settings, loaded))
}

/// [`settings_and_cluster`] from its parts: the input's flags, the
/// profile's, inject's options (`None` for uninject, which reads no
/// context: what it takes out is what the record says) and the output
/// format (what it keeps).
fn settings_and_cluster_of(
    action: Action,
    input: &InputArgs,
    profile: &ProfileArgs,
    options: Option<&InjectOptions>,
    output: Format,
) -> Result<(Settings, Result<pipeline::Loaded, Error>), Error> {
    let (native, version) = match options {
        Some(options) => (options.native_sidecar, options.kube_version),
        None => (None, crate::cluster::KubeVersion::CURRENT),
    };
    let mut settings = Settings {
        keep_values: output == Format::Json,
        whole_lists: false,
        keep_patches: output == Format::Patch,
        ..settings(action, profile, native, version, input)?
    };
    let Some(options) = options else {
        let loaded = pipeline::load(&[], &settings);
        return Ok((settings, loaded));
    };
    settings.security = match options.security_context {
        SecurityContext::Auto => SecurityMode::Auto,
        SecurityContext::Psp => SecurityMode::Psp,
        SecurityContext::Copy => SecurityMode::Copy,
        SecurityContext::Off => SecurityMode::Off,
    };
    with_linkerd_chart(
        &mut settings.profile,
        options.linkerd_chart.as_deref(),
        &options.context,
    )?;
    let loaded = read_context(&options.context, input)
        .and_then(|context| pipeline::load(&context, &settings));
    Ok((settings, loaded))
}

/// `profile` with Linkerd's chart, when `--linkerd-chart` (`given`) or a
/// `--context` directory gives one: the release's defaults become the
/// profile's (what the tool decides in its own code, the opaque ports it
/// marks and the proxy version it records, follows them) and its partials
/// render the sidecar.
fn with_linkerd_chart(
    profile: &mut Profile,
    given: Option<&Path>,
    context: &[PathBuf],
) -> Result<(), Error> {
    let Some(path) = linkerd_chart_path(given, context)? else {
        return Ok(());
    };
    let chart = read_linkerd_chart(&path, profile.mesh)?;
    let (config_map, key) = crate::mesh::linkerd::chart::CLUSTER_VALUES;
    *profile = profile.with_defaults_from(&chart.values, config_map, key);
    profile.linkerd_chart = Some(Arc::new(chart));
    Ok(())
}

/// Linkerd's chart: the one `--linkerd-chart` names, else the one a
/// `--context` directory holds as `helm pull` leaves it
/// (`linkerd-control-plane/`, or `linkerd-control-plane-VERSION.tgz`).
fn linkerd_chart_path(given: Option<&Path>, context: &[PathBuf]) -> Result<Option<PathBuf>, Error> {
    use crate::mesh::linkerd::chart::{CHART_NAME, ChartError};
    if let Some(given) = given {
        return Ok(Some(given.to_path_buf()));
    }
    let mut found = Vec::new();
    for dir in context.iter().filter(|p| p.is_dir()) {
        let untarred = dir.join(CHART_NAME);
        if untarred.join("Chart.yaml").is_file() {
            found.push(untarred);
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut archives: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                    n.starts_with(&format!("{CHART_NAME}-")) && n.ends_with(".tgz")
                })
            })
            .collect();
        archives.sort();
        found.extend(archives);
    }
    match found.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one.clone())),
        several => Err(ConfigError::from(ChartError::Read {
            origin: several
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            message:
                "--context holds several Linkerd charts: keep one, or name it with --linkerd-chart"
                    .into(),
        })
        .into()),
    }
}

/// The chart at `path`, for a profile of `mesh`.
fn read_linkerd_chart(
    path: &Path,
    mesh: crate::mesh::Mesh,
) -> Result<crate::mesh::linkerd::chart::LinkerdChart, Error> {
    use crate::mesh::linkerd::chart::{ChartError, LinkerdChart};
    if mesh != crate::mesh::Mesh::Linkerd {
        return Err(ConfigError::from(ChartError::Read {
            origin: path.display().to_string(),
            message: "a Linkerd chart renders Linkerd's proxy: use it with the linkerd profile"
                .into(),
        })
        .into());
    }
    Ok(LinkerdChart::read(path).map_err(ConfigError::from)?)
}

/// The `--context` files: read like the input (`-R`, `--max-input-bytes`),
/// a path that cannot be read named with the flag. A Linkerd chart a
/// context directory holds (`helm pull --untar -d`) is no cluster objects:
/// read with `-R`, its files are left out.
fn read_context(paths: &[PathBuf], input: &InputArgs) -> Result<Vec<source::Source>, Error> {
    let (recursive, max_bytes) = (input.recursive, input.max_input_bytes);
    use crate::mesh::linkerd::chart::CHART_NAME;
    let holds_chart = paths
        .iter()
        .any(|p| p.join(CHART_NAME).join("Chart.yaml").is_file());
    let read = if recursive && holds_chart {
        let chart: source::Glob = CHART_NAME
            .parse()
            .map_err(|message: String| Error::Usage(message))?;
        source::read_selected(paths, &[], recursive, &[chart], max_bytes)
            .map(|(sources, _)| sources)
    } else {
        source::read_all_within(paths, recursive, max_bytes)
    };
    read.map_err(|e| e.given_with("--context"))
}

/// The input files at `paths` (see [`input_paths`]), as `input`'s flags
/// select them, and those left out with why.
fn read_input(
    input: &InputArgs,
    paths: &[PathBuf],
) -> Result<(Vec<source::Source>, Vec<SkippedFile>), Error> {
    source::read_selected(
        paths,
        &input.filenames,
        input.recursive,
        &input.exclude,
        input.max_input_bytes,
    )
}

/// The paths given, or standard input when none are and it is not a terminal.
fn input_paths(input: &InputArgs) -> Result<Vec<PathBuf>, Error> {
    let paths = input.paths();
    if !paths.is_empty() {
        return Ok(paths);
    }
    if std::io::stdin().is_terminal() {
        return Err(Error::Usage(
            "no input: give manifests with -f PATH, or pipe them on standard input".into(),
        ));
    }
    Ok(vec![PathBuf::from("-")])
}

/// How a run says on standard error what stopped it (exit status 2): as
/// text, `error: …` coloured as `--color` decides, with the line it is at
/// shown under it; or, asked for `--report json`, as one JSON document of
/// the command's report kind with an `error` (see [`report::error_json`]),
/// so that a tool that reads standard error as JSON always gets JSON.
#[derive(Debug, Clone, Copy)]
pub struct ErrorReport {
    color: ColorChoice,
    /// With `--report json`: the `kind` of the command's report.
    json: Option<&'static str>,
}

impl ErrorReport {
    /// As text, coloured as `color` decides: for what has no command line
    /// to read (kubectl's completion, `--help`).
    pub fn text(color: ColorChoice) -> Self {
        ErrorReport { color, json: None }
    }

    /// As one JSON document of the report kind `kind`: for what stops a
    /// run before its command line is read (clap's own errors).
    pub fn json(kind: &'static str) -> Self {
        ErrorReport {
            color: ColorChoice::Never,
            json: Some(kind),
        }
    }

    /// As the command line `cli` asks.
    pub fn of(cli: &Cli) -> Self {
        let kind = match cli.command {
            Some(Command::Admit(_)) => crate::admit::REPORT_KIND,
            _ => report::KIND,
        };
        ErrorReport {
            color: cli.color(),
            json: (cli.report_format() == ReportFormat::Json).then_some(kind),
        }
    }

    /// What standard error says of `error`.
    pub fn render(self, error: &Error) -> String {
        if let Some(kind) = self.json {
            return report::error_json(error, kind);
        }
        let paint = Paint::new(use_color(self.color, Stream::Stderr));
        let mut text = format!("{} {error}\n", paint.error());
        if let Some(snippet) = error.snippet() {
            text.push_str(&snippet);
            text.push('\n');
        }
        text
    }
}

/// Where a text is written, for deciding whether to colour it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Whether to colour what goes to `stream`: `auto` colours a terminal,
/// unless `NO_COLOR` is set (and not empty).
pub fn use_color(choice: ColorChoice, stream: Stream) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && match stream {
                    Stream::Stdout => std::io::stdout().is_terminal(),
                    Stream::Stderr => std::io::stderr().is_terminal(),
                }
        }
    }
}

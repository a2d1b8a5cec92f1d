//! A whole run: read every source, process it, then write the chosen output.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use crate::cli::{Cli, ColorChoice, Command, CommonArgs, Format};
use crate::error::Error;
use crate::output;
use crate::pipeline::{self, Action, Processed, Settings};
use crate::profile::Profile;
use crate::report;
use crate::rules::Outcome;
use crate::source;

/// Exit status of a run that went through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Done,
    /// `--check` found files that would change.
    WouldChange,
}

/// Run the command line; errors mean exit status 2.
pub fn run(cli: Cli) -> Result<Status, Error> {
    let (action, common, sets) = match cli.command {
        Some(Command::Inject(args)) => (Action::Inject, args.common, args.set),
        Some(Command::Uninject(common)) => (Action::Uninject, common, Vec::new()),
        None => (Action::Inject, cli.inject.common, cli.inject.set),
    };
    check_flags(&common)?;
    let mut profile = Profile::default_profile()?;
    for assignment in &sets {
        profile.set(assignment)?;
    }
    let settings = Settings {
        action,
        profile,
        namespace: common.namespace.clone(),
        keep_values: common.output == Format::Json
            && !(common.diff || common.in_place || common.check),
    };

    let paths = input_paths(&common)?;
    let results = source::expand(&paths, common.recursive)?
        .iter()
        .map(|path| source::read(path.as_deref()).and_then(|s| pipeline::process(s, &settings)))
        .collect::<Result<Vec<Processed>, Error>>()?;

    let mut status = Status::Done;
    if common.check {
        let changed: Vec<&Processed> = results.iter().filter(|p| p.changed()).collect();
        if !changed.is_empty() {
            status = Status::WouldChange;
            let verb = match action {
                Action::Inject => "inject",
                Action::Uninject => "uninject",
            };
            let mut err = std::io::stderr().lock();
            for processed in &changed {
                let _ = writeln!(err, "would {verb}: {}", processed.source.name());
            }
        }
    } else if common.in_place {
        output::write_in_place(&results)?;
    } else {
        let text = if common.diff {
            output::diff(&results, use_color(common.color))
        } else {
            match common.output {
                Format::Yaml => output::yaml_stream(&results),
                Format::Json => output::json_stream(&results),
                Format::Patch => output::patches(&results),
            }
        };
        write_stdout(&text);
    }

    if !common.quiet {
        let injected = results
            .iter()
            .flat_map(|p| &p.objects)
            .any(|o| o.outcome == Outcome::Injected);
        let warnings = if injected {
            settings.profile.missing_required()
        } else {
            Vec::new()
        };
        let _ = std::io::stderr()
            .lock()
            .write_all(report::render(&results, &warnings).as_bytes());
    }
    Ok(status)
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
        && (common.filenames.is_empty() || common.filenames.iter().any(|f| f.as_os_str() == "-"))
    {
        return Err(Error::Usage(
            "--in-place needs files given with -f, not standard input".into(),
        ));
    }
    Ok(())
}

/// The `-f` paths, or standard input when none are given and it is not a terminal.
fn input_paths(common: &CommonArgs) -> Result<Vec<PathBuf>, Error> {
    if !common.filenames.is_empty() {
        return Ok(common.filenames.clone());
    }
    if std::io::stdin().is_terminal() {
        return Err(Error::Usage(
            "no input: give manifests with -f PATH, or pipe them on standard input".into(),
        ));
    }
    Ok(vec![PathBuf::from("-")])
}

fn use_color(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    }
}

fn write_stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    // A closed pipe (`| head`) is the reader's choice, not an error.
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

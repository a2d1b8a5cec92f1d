//! `kubectl-mesh_inject`: argument parsing and exit codes; the library does the work.

use std::process::ExitCode;

#[global_allocator]
static ALLOCATOR: mesh_inject::allocator::Allocator = mesh_inject::allocator::Allocator;

use clap::{CommandFactory, FromArgMatches};
use mesh_inject::cli::{Cli, ColorChoice};
use mesh_inject::error::Error;
use mesh_inject::output;
use mesh_inject::run::{ErrorReport, Status, Stream, run, use_color};

fn main() -> ExitCode {
    no_transparent_huge_pages();
    // kubectl's plugin completion protocol, answered before any parsing.
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == "__complete")
    {
        let words: Vec<String> = std::env::args_os()
            .skip(2)
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let answer = mesh_inject::complete::answer(&words);
        return exit_code(
            output::to_stdout(&answer).map(|()| Status::Done),
            ErrorReport::text(ColorChoice::Never),
        );
    }
    // The version names the proxies the embedded profiles inject, read from
    // them: worth parsing both profiles only when it is asked for.
    let asks_version = std::env::args_os()
        .skip(1)
        .any(|a| a == "--version" || a == "-V");
    let version: &'static str = if asks_version {
        Box::leak(mesh_inject::version_text().into_boxed_str())
    } else {
        env!("CARGO_PKG_VERSION")
    };
    // Before the arguments are parsed, `--color` is looked for among them,
    // so that clap's own errors and --help follow it too.
    let color = color_in_args();
    let clap_color = match color {
        ColorChoice::Auto => clap::ColorChoice::Auto,
        ColorChoice::Always => clap::ColorChoice::Always,
        ColorChoice::Never => clap::ColorChoice::Never,
    };
    let command = Cli::command().version(version).color(clap_color);
    let matches = match command.try_get_matches() {
        Ok(matches) => matches,
        // --help and --version: written and checked like any output (clap
        // would ignore a failure), coloured as clap colours them.
        Err(err) if !err.use_stderr() => {
            let text = err.render();
            let text = if use_color(color, Stream::Stdout) {
                text.ansi().to_string()
            } else {
                text.to_string()
            };
            let written = output::to_stdout(&text).map(|()| Status::Done);
            return exit_code(written, ErrorReport::text(color));
        }
        Err(err) => return usage_error(err),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(err) => return usage_error(err),
    };
    let errors = ErrorReport::of(&cli);
    exit_code(run(cli), errors)
}

/// The last `--color WHEN` (or `--color=WHEN`) among the arguments; `auto`
/// when there is none or its value is not one (clap then says so).
fn color_in_args() -> ColorChoice {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let mut choice = ColorChoice::Auto;
    for (index, arg) in args.iter().enumerate() {
        let value = if arg == "--color" {
            args.get(index + 1).and_then(|v| v.to_str())
        } else {
            arg.to_str().and_then(|a| a.strip_prefix("--color="))
        };
        choice = match value {
            Some("auto") => ColorChoice::Auto,
            Some("always") => ColorChoice::Always,
            Some("never") => ColorChoice::Never,
            _ => choice,
        };
    }
    choice
}

/// A command line clap refuses: said by clap (exit status 2), or with
/// `--report json` among the arguments as the JSON document every other
/// error is, so that a tool reading standard error as JSON gets JSON.
fn usage_error(err: clap::Error) -> ExitCode {
    let Some(kind) = json_report_in_args() else {
        err.exit()
    };
    let text = err.render().to_string();
    let message = text.trim().trim_start_matches("error: ").to_string();
    exit_code(Err(Error::Usage(message)), ErrorReport::json(kind))
}

/// The kind of report `--report json` asks for among the arguments (the
/// last `--report` wins, as for clap), `None` without one: admit's when the
/// command is `admit`.
fn json_report_in_args() -> Option<&'static str> {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut json = false;
    for (index, arg) in args.iter().enumerate() {
        let value = match arg.strip_prefix("--report=") {
            Some(value) => Some(value),
            None if arg == "--report" => args.get(index + 1).map(String::as_str),
            None => None,
        };
        if let Some(value) = value {
            json = value == "json";
        }
    }
    let admit = args
        .iter()
        .find(|a| !a.starts_with('-'))
        .is_some_and(|a| a == "admit");
    json.then_some(match admit {
        true => mesh_inject::admit::REPORT_KIND,
        false => mesh_inject::report::KIND,
    })
}

/// The exit status of a run, after saying what stopped it as `errors`
/// says (text, or with `--report json` a JSON document).
fn exit_code(result: Result<Status, Error>, errors: ErrorReport) -> ExitCode {
    match result {
        Ok(Status::Done) => ExitCode::SUCCESS,
        Ok(Status::WouldChange | Status::Rejected | Status::Differs) => ExitCode::from(1),
        // The reader of the output went away (`| head`): its choice.
        Err(err) if err.is_broken_pipe() => ExitCode::SUCCESS,
        Err(err) => {
            // When standard error is what fails, the status still tells.
            let _ = output::to_stderr(&errors.render(&err));
            ExitCode::from(2)
        }
    }
}

/// The allocator asks for transparent huge pages, and the kernel then zeroes
/// and keeps 2 MiB at a time of memory the run touches only here and there: on
/// a large stream that was a third of the peak memory and most page-fault
/// time. Linux lets a process turn them off for itself (`PR_SET_THP_DISABLE`).
fn no_transparent_huge_pages() {
    #[cfg(target_os = "linux")]
    {
        const PR_SET_THP_DISABLE: std::ffi::c_int = 41;
        unsafe extern "C" {
            fn prctl(option: std::ffi::c_int, ...) -> std::ffi::c_int;
        }
        // SAFETY: prctl with PR_SET_THP_DISABLE takes one integer argument
        // and only changes this process's memory policy; a failure (an old
        // kernel) leaves the default, which is fine.
        unsafe {
            prctl(
                PR_SET_THP_DISABLE,
                1 as std::ffi::c_ulong,
                0 as std::ffi::c_ulong,
                0 as std::ffi::c_ulong,
                0 as std::ffi::c_ulong,
            );
        }
    }
}

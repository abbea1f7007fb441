//! The `nvmebench` binary: parse, run, map the outcome to an exit status.
//!
//! Exit status of `run`: 0 clean, 1 the run finished with I/O errors (or could not write its results),
//! 2 a usage or set-up error (nothing was written), 128+N interrupted by signal N (partial results
//! were written). `doctor`: 0 nothing failed, 1 a check failed, 2 a usage error.

use clap::error::ErrorKind;
use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches};
use nvmebench::cli::{Cli, Command};
use nvmebench::compare::compare_command;
use nvmebench::devices::devices_command;
use nvmebench::docs::{self, DocsError};
use nvmebench::doctor;
use nvmebench::fio;
use nvmebench::report_cmd::{ResultsCommandError, merge_command, report_command};
use nvmebench::run::SetupError;
use nvmebench::suite::{SuiteError, suite_command};
use std::process::ExitCode;

fn main() -> ExitCode {
    // Remember the cores this process may use before anything (SPDK's environment) narrows the
    // main thread's mask: worker placement and the other threads' placement are decided from it.
    let _ = nvmebench::cpu::allowed_cores();
    let (argv, notes) = match fio::argv::normalize_noted(std::env::args_os().collect()) {
        Ok(a) => a,
        Err(m) => {
            eprintln!("nvmebench: {m}");
            return ExitCode::from(2);
        }
    };
    let parsed = Cli::command().try_get_matches_from(&argv).and_then(|m| Ok((Cli::from_arg_matches(&m)?, m)));
    let (cli, matches) = match parsed {
        Ok(c) => c,
        Err(e) => {
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                let _ = e.print();
                return ExitCode::from(2);
            }
            if let Some(line) = no_command(&e, &argv) {
                eprintln!("nvmebench: {line}");
                return ExitCode::from(2);
            }
            if let Some(line) = negative_value(&e, &argv) {
                eprintln!("nvmebench: {line}");
                return ExitCode::from(2);
            }
            // clap's first paragraph names the option and the problem (and, for a missing argument,
            // which one on the lines below); of the rest, only its tips ("a similar argument
            // exists: '--iodepth'") help: one line it is.
            let rendered = e.render().to_string();
            let first = rendered.split("\n\n").next().unwrap_or("invalid arguments");
            let mut line = first.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ");
            for tip in rendered.lines().map(str::trim).filter_map(|l| l.strip_prefix("tip: ")) {
                line = format!("{line}; {tip}");
            }
            eprintln!("nvmebench: {} (see --help)", line.trim_start_matches("error: "));
            return ExitCode::from(2);
        }
    };
    let result = match cli.command {
        Command::Run(args) => fio::run_command(*args, &typed(&matches, "run"), &notes).map(|o| o.exit_code()),
        Command::Compare(mut args) => match fio::argv::fold(&mut args.run) {
            Ok(()) => nvmebench::config::check_latency_off(
                &args.run,
                typed(&matches, "compare").iter().any(|g| g == "percentiles"),
            )
            .map_err(|e| anyhow::Error::from(SetupError::from(e)))
            .and_then(|()| compare_command(&args))
            .map(|o| o.exit_code()),
            Err(c) => Err(fio::FioError::Usage(c.to_string()).into()),
        },
        Command::Devices(args) => devices_command(&args).map(|()| 0),
        Command::Report(args) => report_command(&args).map(|()| 0),
        Command::Merge(args) => merge_command(&args).map(|()| 0),
        Command::Doctor(args) => doctor::doctor_command(&args).map_err(anyhow::Error::from),
        Command::Suite(args) => suite_command(&args),
        Command::Completions(args) => docs::completions_command(&args).map(|()| 0),
        Command::Man(args) => docs::man_command(&args).map(|()| 0),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            // Every error's message already carries its cause; printing the chain would repeat it.
            eprintln!("nvmebench: {e}");
            if let Some(sig) = e.downcast_ref::<SetupError>().and_then(SetupError::interrupted_by) {
                return ExitCode::from(128u8.saturating_add(sig as u8));
            }
            let usage = e.downcast_ref::<SetupError>().is_some()
                || e.downcast_ref::<fio::FioError>().is_some()
                || e.downcast_ref::<ResultsCommandError>().is_some()
                || e.downcast_ref::<doctor::DoctorError>().is_some()
                || e.downcast_ref::<DocsError>().is_some()
                || e.downcast_ref::<SuiteError>().is_some_and(SuiteError::is_usage);
            ExitCode::from(if usage { 2 } else { 1 })
        }
    }
}

/// A fio habit without a command: `nvmebench job.fio` or `nvmebench --rw=randread ...` (fio takes
/// both bare). clap would call the first an unknown command and the second an unexpected argument;
/// say where they go instead.
fn no_command(e: &clap::Error, argv: &[std::ffi::OsString]) -> Option<String> {
    if !matches!(e.kind(), ErrorKind::InvalidSubcommand | ErrorKind::UnknownArgument) {
        return None;
    }
    let first = argv.get(1)?.to_string_lossy();
    if first.starts_with("--") {
        // Only the first word: an unknown option after a command is that command's to explain.
        let clap::error::ContextValue::String(bad) = e.get(clap::error::ContextKind::InvalidArg)? else { return None };
        let name = first.split('=').next().unwrap_or(&first);
        return (bad.split('=').next() == Some(name) && name != "--help" && name != "--version").then(|| {
            format!(
                "{name} needs a command before it: fio's options go after `nvmebench run` (nvmebench run {first} ...)"
            )
        });
    }
    let looks_like_job = first.ends_with(".fio") || std::path::Path::new(first.as_ref()).is_file();
    (e.kind() == ErrorKind::InvalidSubcommand && looks_like_job)
        .then(|| format!("'{first}' is not a command; to run a fio job file, use `nvmebench run {first}`"))
}

/// clap reads a value that starts with a hyphen (`--time -5`, `--bs -4k`) as an unknown option and
/// suggests `-- -5`, which would not help: every number nvmebench takes is positive, so say that.
fn negative_value(e: &clap::Error, argv: &[std::ffi::OsString]) -> Option<String> {
    if e.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let clap::error::ContextValue::String(bad) = e.get(clap::error::ContextKind::InvalidArg)? else { return None };
    if !bad.strip_prefix('-').is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit() || c == '.')) {
        return None;
    }
    let at = argv.iter().position(|a| a.to_str().is_some_and(|a| a.starts_with(bad.as_str())))?;
    let option = argv[..at].last().and_then(|o| o.to_str()).filter(|o| o.starts_with("--"))?;
    let value = argv[at].to_string_lossy();
    Some(format!("{option} cannot be negative ('{value}'); see --help for the values it takes"))
}

/// The ids of the flags typed on the command line for `sub`.
fn typed(matches: &ArgMatches, sub: &str) -> Vec<String> {
    let Some(m) = matches.subcommand_matches(sub) else { return Vec::new() };
    // Argument groups (the flattened structs) have ids too; only arguments count.
    let cmd = Cli::command();
    let args: Vec<String> = cmd
        .find_subcommand(sub)
        .map(|c| c.get_arguments().map(|a| a.get_id().to_string()).collect())
        .unwrap_or_default();
    m.ids()
        .map(|id| id.to_string())
        .filter(|id| args.contains(id) && m.value_source(id) == Some(ValueSource::CommandLine))
        .collect()
}

//! The `nvmebench` binary: parse, run, map the outcome to an exit status.
//!
//! Exit status of `run`: 0 clean, 1 the run finished with I/O errors (or could not write its results),
//! 2 a usage or set-up error (nothing was written), 128+N interrupted by signal N (partial results
//! were written). `doctor`: 0 nothing failed, 1 a check failed, 2 a usage error.

use clap::Parser;
use clap::error::ErrorKind;
use nvmebench::cli::{Cli, Command};
use nvmebench::doctor;
use nvmebench::run::{SetupError, run_command};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
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
            // clap's first line names the option and the problem; its usage block adds nothing.
            let rendered = e.render().to_string();
            let first = rendered.lines().next().unwrap_or("invalid arguments");
            eprintln!("nvmebench: {} (see --help)", first.trim_start_matches("error: "));
            return ExitCode::from(2);
        }
    };
    match cli.command {
        Command::Run(args) => match run_command(&args) {
            Ok(outcome) => ExitCode::from(outcome.exit_code()),
            Err(e) => {
                eprintln!("nvmebench: {e:#}");
                ExitCode::from(if e.downcast_ref::<SetupError>().is_some() { 2 } else { 1 })
            }
        },
        Command::Doctor(args) => match doctor::doctor_command(&args) {
            Ok(code) => ExitCode::from(code),
            Err(e) => {
                eprintln!("nvmebench: {e}");
                ExitCode::from(2)
            }
        },
    }
}

//! fio compatibility: fio's option spellings on the command line, fio job files, and fio-shaped
//! output (JSON and logs, written by `report::fio`).
//!
//! Everything fio says is translated into `run`'s own flags and parsed by the same clap definitions,
//! so a job file is checked exactly as a command line is. What fio means that nvmebench cannot do is
//! refused in one sentence naming the option (in a job file as written, at its line, also when the
//! check that refuses it runs against the target; for two options that do not go together, both as
//! written, at the line of the one at fault); what cannot change a measurement here is accepted and
//! listed in the notes.

pub mod argv;
pub mod batch;
pub mod exec;
pub mod files;
pub mod ini;
pub mod options;
pub mod plan;
pub mod sources;
pub mod steady;

use crate::cli::RunArgs;
use crate::run::Outcome;

/// Errors of fio-compatible input; all are usage errors (exit 2, nothing written).
#[derive(Debug, thiserror::Error)]
pub enum FioError {
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Ini(#[from] ini::IniError),
    #[error("{at}: option '{key}': {message}")]
    Option { at: ini::Origin, key: String, message: String },
    #[error("{at}: section [{name}]: {message}")]
    Section { at: ini::Origin, name: String, message: String },
    /// Options of job `job` refused when it is resolved (one, or two that do not go together), at
    /// the line of the one at fault; the message names them as written.
    #[error("{at}: [{job}]: {message}")]
    Options { at: ini::Origin, job: String, message: String },
}

/// `nvmebench run` with fio's per-job values folded in, or a job file when one is given. `given`
/// holds the ids of the flags typed on the command line; `notes` are the command line's (`argv::normalize_noted`).
///
/// # Errors
/// A [`FioError`] or the run's own errors.
pub fn run_command(mut args: RunArgs, given: &[String], notes: &[String]) -> anyhow::Result<Outcome> {
    check_output_paths(&args)?;
    if args.fleet.fleet.is_some() && args.fio.job_file.is_some() {
        return Err(FioError::Usage(
            "--fleet gathers one workload per process, given as flags; a job file's groups are not run as a fleet, so give the job's options as flags (nvmebench run --rw=randread --bs=4k ... --fleet DIR)".into(),
        )
        .into());
    }
    crate::config::check_latency_off(&args, given.iter().any(|g| g == "percentiles"))
        .map_err(crate::run::SetupError::from)?;
    for n in notes {
        eprintln!("nvmebench: note: {n}");
    }
    if let Some(path) = args.fio.job_file.clone() {
        return exec::run_job_file(&path, &args, given);
    }
    // Steady state stops a job of a job file (`exec`); a command-line run would ignore it.
    if let Some(flag) = ["ss", "ss_dur", "ss_ramp"].into_iter().find(|f| given.iter().any(|g| g == f)) {
        return Err(FioError::Usage(format!(
            "--{flag}: fio's steady state is taken in a job file, where the job stops once steady as in fio; put ss, ss_dur and ss_ramp in one and run nvmebench run job.fio"
        ))
        .into());
    }
    let pct_given = given.iter().any(|g| g == "percentiles");
    argv::fold(&mut args).map_err(|c| FioError::Usage(c.to_string()))?;
    if args.fio.fio_json() && !pct_given {
        args.percentiles = crate::cli::Percentiles(crate::report::fio::FIO_PERCENTILES.to_vec());
    }
    crate::run::run_command(&args)
}

/// Refuses an `--output-file` that is a directory or whose extension names another format than the
/// report's, or an output file or log prefix whose directory does not exist, before anything runs.
fn check_output_paths(args: &RunArgs) -> Result<(), FioError> {
    let f = &args.fio;
    if let Some(p) = f.output_file.as_ref().filter(|p| p.is_dir()) {
        return Err(FioError::Usage(format!("--output-file {} is a directory; name a file", p.display())));
    }
    if let Some(p) = &f.output_file {
        check_output_format(args, p)?;
    }
    let out = f.output_file.as_ref().map(|p| ("--output-file", p.clone()));
    let logs = [
        ("--write_bw_log", &f.write_bw_log),
        ("--write_iops_log", &f.write_iops_log),
        ("--write_lat_log", &f.write_lat_log),
    ]
    .into_iter()
    .filter_map(|(flag, p)| p.as_ref().map(|p| (flag, std::path::PathBuf::from(p))));
    for (flag, p) in out.into_iter().chain(logs) {
        let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
        if !dir.is_dir() {
            return Err(FioError::Usage(format!(
                "{flag} {}: the directory {} does not exist; create it or pick another path",
                p.display(),
                dir.display()
            )));
        }
    }
    Ok(())
}

/// The report `--output-file` gets is text, or JSON with `--output json` or `--output-format json`;
/// refuses a name whose extension says otherwise (`r.json` for text, `r.html` for anything). fio
/// itself would write its text into `r.json`; nvmebench does not guess which JSON was meant.
fn check_output_format(args: &RunArgs, p: &std::path::Path) -> Result<(), FioError> {
    use crate::options::OutputFormat;
    use crate::report::FileFormat;
    let Some(named) = FileFormat::of_path(p) else { return Ok(()) };
    let json = match args.fio.output_format.as_deref() {
        Some(f) if args.fio.fio_json() => Some(format!("fio's JSON (--output-format {f})")),
        _ if args.output == OutputFormat::Json => Some("nvmebench's JSON (--output json)".to_string()),
        _ => None,
    };
    let path = p.display();
    let message = match (named, json) {
        (FileFormat::Json, Some(_)) => return Ok(()),
        (FileFormat::Json, None) => format!(
            "--output-file {path}: the extension says JSON, but the report is text; add --output-format json (fio's JSON) or --output json (nvmebench's), or name it {}",
            p.with_extension("txt").display()
        ),
        (_, Some(what)) => format!(
            "--output-file {path}: the extension says {}, but the report is {what}; name it {}",
            named.name(),
            FileFormat::Json.rename(p).display()
        ),
        (_, None) => format!(
            "--output-file {path}: the extension says {}, but the report is text; name it {}",
            named.name(),
            p.with_extension("txt").display()
        ),
    };
    Err(FioError::Usage(message))
}

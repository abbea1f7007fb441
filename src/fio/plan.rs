//! A parsed job file as a plan: each job section becomes `run`'s flags (parsed by the same clap
//! definitions, so every check stays in one place), and the sections form groups: a section with
//! `stonewall` (or `wait_for_previous`) starts a new group after the earlier ones finished; the
//! sections of one group run together.
//!
//! Nothing here touches a target; resolving the flags against the machine is the executor's.

use super::ini::{Entry, Origin, Section};
use super::options::{self, FlowOption, Mapped, PlanOption};
use super::sources::{JobNames, Sources};
use super::{FioError, argv, batch, files};
use crate::cli::{Cli, Command, RunArgs};
use crate::config::ConfigError;
use crate::config::clash::{Clash, Naming};
use crate::config::fault::Fault;
use crate::io::Direction;
use crate::units::SizeOrPercent;
use crate::workload::Mix;
use crate::workload::bssplit::BsSplit;
use crate::workload::rate::parse_think;
use clap::Parser;

/// fio's engine when a job file names none.
const FIO_DEFAULT_ENGINE: &str = "psync";

/// Command-line flags a job-file run takes (the rest of `run`'s flags describe a workload, which
/// the job file does).
pub const GLOBAL_FLAGS: [&str; 20] = [
    "job_file",
    "section",
    "engine",
    "output",
    "json",
    "quiet",
    "allow_destroy",
    "confirm_serial",
    "interval",
    "drain_timeout",
    "on_error",
    "percentiles",
    "output_format",
    "output_file",
    "write_bw_log",
    "write_iops_log",
    "write_lat_log",
    "log_avg_msec",
    "per_job_logs",
    "verify_state",
];

/// The SPDK engine's flags, which a job-file run takes from the command line too.
pub const SPDK_FLAGS: [&str; 8] =
    ["trids", "mem_size", "shm_id", "no_huge", "iova_mode", "io_queue_size", "spdk_log", "max_completions"];

/// One job section, translated.
#[derive(Clone, Debug)]
pub struct Job {
    pub name: String,
    pub at: Origin,
    pub args: RunArgs,
    /// The section's own options as written, for fio-shaped JSON's "job options".
    pub options: Vec<(String, String)>,
    /// fio's thread number of the job's first clone, from 1: its `numjobs` clones are numbered on
    /// from it, and the next job's first clone after them (fio's log file numbers). Sections
    /// `--section` leaves out take none, as fio never makes their jobs.
    pub number: usize,
    /// fio's reporting group (`groupid`): it counts up at a job with `stonewall` or `new_group`
    /// that follows a job, over the jobs that run (`--section`'s), as fio counts when it adds them.
    pub group_id: usize,
    /// Whether `percentile_list` applies to the job (in its section or a `[global]` before it).
    pub percentile_list: bool,
    /// Which line set each of `args`' flags, for refusals that name two options.
    pub sources: Sources,
    /// The mean I/O size of a job that ends after one pass over its working set: fio's end for a
    /// job neither `time_based` nor sized in bytes (no `size`, or `size=N%`), whose I/O count is
    /// known once its target's size is (the executor sets it).
    pub one_pass: Option<f64>,
    /// The one pass is counted in bytes (its block sizes vary, so a count of I/Os at the mean
    /// size would move another amount than fio moves).
    pub pass_in_bytes: bool,
    /// fio's `loops`: the job's I/Os (its size, or its one pass) that many times over.
    pub loops: u64,
    /// The share of each file's working set its one pass moves (fio's `io_size=N%`; 100 without).
    pub pass_percent: u64,
    /// fio's flow control, when the job has a `flow` weight above 0.
    pub flow: Option<JobFlow>,
}

/// A job's `flow`, `flow_id` and `flow_sleep`.
#[derive(Clone, Debug, PartialEq)]
pub struct JobFlow {
    pub id: u32,
    pub weight: u32,
    pub sleep: std::time::Duration,
    /// The `flow` line, for refusals.
    pub at: Origin,
}

impl Job {
    /// Its clones (fio's `numjobs`): one worker thread each.
    pub fn clones(&self) -> usize {
        self.args.cores.as_ref().map_or(self.args.jobs.unwrap_or(1), |c| c.0.len())
    }
}

/// The groups of a job file, in order.
#[derive(Debug)]
pub struct Plan {
    pub groups: Vec<Vec<Job>>,
    /// The first [global] section's options as written.
    pub globals: Vec<(String, String)>,
    /// Options accepted without effect, and where fio's meaning is approximated.
    pub notes: Vec<String>,
}

/// Builds the plan of `sections` (only those named in `only`, when given) with the command line's
/// flags `cli`, of which `given` were typed.
///
/// # Errors
/// A sentence naming the file, line and option (or section) that cannot run.
pub fn build(sections: &[Section], only: &[String], cli: &RunArgs, given: &[String]) -> Result<Plan, FioError> {
    if let Some(flag) = given.iter().find(|g| !GLOBAL_FLAGS.contains(&g.as_str()) && !SPDK_FLAGS.contains(&g.as_str()))
    {
        return Err(FioError::Usage(format!(
            "--{} with a job file: set it in the job file (its [global] section applies to every job), or run without one",
            flag.replace('_', "-")
        )));
    }
    for name in only {
        if !sections.iter().any(|s| !s.is_global() && &s.name == name) {
            let names: Vec<&str> = sections.iter().filter(|s| !s.is_global()).map(|s| s.name.as_str()).collect();
            return Err(FioError::Usage(format!(
                "--section {name}: the job file has no such section (it has {})",
                names.join(", ")
            )));
        }
    }
    let mut globals: Vec<&Entry> = Vec::new();
    let mut first_globals: Option<Vec<(String, String)>> = None;
    let mut groups: Vec<Vec<Job>> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut number = 1;
    // fio's groupid and the jobs added to it so far (init.c's prev_group_jobs).
    let (mut group_id, mut in_group) = (0, 0);
    // The wait_for of the job before, and that job's name.
    let mut waited: Option<(Entry, String)> = None;
    for s in sections {
        if s.is_global() {
            globals.extend(&s.entries);
            if first_globals.is_none() {
                first_globals = Some(written(&s.entries));
            }
            continue;
        }
        let entries: Vec<&Entry> = globals.iter().copied().chain(&s.entries).collect();
        let (mut job, starts, wait_for) = translate(s, &entries, cli, given, number, &mut notes)?;
        if !only.is_empty() && !only.contains(&s.name) {
            continue;
        }
        // wait_for runs a job after the one it names, as a stonewall would; fio's groupid counts
        // stonewall and new_group only.
        let stonewall = starts.stonewall || wait_for.is_some();
        check_wait_for(&groups, &job, wait_for.as_ref(), stonewall, waited.as_ref())?;
        waited = wait_for.map(|e| (e, job.name.clone()));
        number += job.clones();
        if (starts.stonewall || starts.new_group) && in_group > 0 {
            group_id += 1;
            in_group = 0;
        }
        job.group_id = group_id;
        in_group += 1;
        check_group_percentiles(&job, groups.iter().flatten())?;
        match groups.last_mut() {
            Some(g) if !stonewall => g.push(job),
            _ => groups.push(vec![job]),
        }
    }
    if groups.is_empty() {
        return Err(FioError::Usage(
            "the job file has no job sections; add one such as [job1] with rw=randread".into(),
        ));
    }
    check_flows(&groups)?;
    Ok(Plan { groups, globals: first_globals.unwrap_or_default(), notes })
}

/// fio sums a group's jobs with `group_reporting` into one entry, and refuses a job that says it
/// when `lat_percentiles` differs from another job of its group (init.c's
/// `verify_per_group_options`): one entry cannot both have lat_ns's percentiles and not.
fn check_group_percentiles<'a>(job: &Job, earlier: impl Iterator<Item = &'a Job>) -> Result<(), FioError> {
    let lat = |j: &Job| j.args.fio.lat_percentiles.unwrap_or(false);
    if !job.args.fio.group_reporting.unwrap_or(false) {
        return Ok(());
    }
    match earlier.filter(|o| o.group_id == job.group_id).find(|o| lat(o) != lat(job)) {
        Some(other) => Err(FioError::Section {
            at: job.at.clone(),
            name: job.name.clone(),
            message: format!(
                "has lat_percentiles={} and [{}] in its reporting group {}, which group_reporting would sum into one entry (fio refuses it: \"lat_percentiles in job: {} differs from group\"); give them the same lat_percentiles, or add new_group to report it apart",
                u8::from(lat(job)),
                other.name,
                u8::from(lat(other)),
                job.name
            ),
        }),
        None => Ok(()),
    }
}

/// fio counts the weight of every job in a flow from when it reads the job file, so a job whose
/// flow holds a job of a later group (one that waits for it) is held back from its first I/Os
/// until that job runs, which it never does while this one runs; refused at the later job.
fn check_flows(groups: &[Vec<Job>]) -> Result<(), FioError> {
    for (g, group) in groups.iter().enumerate() {
        for job in group {
            let Some(flow) = &job.flow else { continue };
            let earlier = groups[..g].iter().flatten().find(|o| o.flow.as_ref().is_some_and(|f| f.id == flow.id));
            if let Some(other) = earlier {
                return Err(FioError::Options {
                    at: flow.at.clone(),
                    job: job.name.clone(),
                    message: format!(
                        "flow={} shares flow_id {} with [{}], which runs before it (a stonewall between them), and fio counts both weights from the start, so [{}] stalls after its first I/Os; give it another flow_id, or run them together",
                        flow.weight, flow.id, other.name, other.name
                    ),
                });
            }
        }
    }
    Ok(())
}

/// fio's `wait_for=NAME` starts a job when job NAME has finished, while other jobs go on. Groups
/// start after all the jobs before them, so it is taken where that is the same: NAME is the job
/// just before, alone in its group, and the next job does not join this one's group (it says
/// stonewall or wait_for itself), since in fio it would start at once, beside NAME.
///
/// # Errors
/// A sentence at the `wait_for` (or at the job that would join it) saying what to write instead.
fn check_wait_for(
    groups: &[Vec<Job>],
    job: &Job,
    wait_for: Option<&Entry>,
    stonewall: bool,
    waited: Option<&(Entry, String)>,
) -> Result<(), FioError> {
    if let Some((e, waiter)) = waited.filter(|_| !stonewall) {
        return Err(FioError::Section {
            at: job.at.clone(),
            name: job.name.clone(),
            message: format!(
                "starts at once in fio, while [{waiter}] waits ({}, line {}), and here it would start with [{waiter}]; add stonewall, or wait_for",
                as_written(e),
                e.at.line
            ),
        });
    }
    let Some(e) = wait_for else { return Ok(()) };
    let name = e.value.as_deref().unwrap_or_default();
    match groups.last().map(Vec::as_slice) {
        Some([before]) if before.name == name => Ok(()),
        _ => Err(FioError::Options {
            at: e.at.clone(),
            job: job.name.clone(),
            message: format!(
                "{}: nvmebench starts a job after all the jobs before it, which is fio's wait_for only when [{name}] is the job just before and runs alone; put [{name}] just before it with stonewall, or write stonewall instead",
                as_written(e)
            ),
        }),
    }
}

/// An entry as written: `key=value`, or `key` for a bare flag.
fn as_written(e: &Entry) -> String {
    e.value.as_ref().map_or_else(|| e.key.clone(), |v| format!("{}={v}", e.key))
}

/// The options with a value, as written (fio's JSON leaves bare flags out).
fn written(entries: &[Entry]) -> Vec<(String, String)> {
    entries.iter().filter_map(|e| e.value.clone().map(|v| (e.key.clone(), v))).collect()
}

/// Whether a section starts a new group: one that runs after the earlier ones (`stonewall`), or
/// only one reported apart (`new_group`).
#[derive(Clone, Copy, Debug, Default)]
struct Starts {
    stonewall: bool,
    new_group: bool,
}

/// The flags of one section (after the globals before it); whether it starts a new group.
fn translate(
    s: &Section,
    entries: &[&Entry],
    cli: &RunArgs,
    given: &[String],
    number: usize,
    notes: &mut Vec<String>,
) -> Result<(Job, Starts, Option<Entry>), FioError> {
    let section_err = |message: String| FioError::Section { at: s.at.clone(), name: s.name.clone(), message };
    // Later settings replace earlier ones (a job overrides [global]), keyed by the flag they set.
    let mut flags: Vec<(String, String)> = Vec::new();
    let mut sources = Sources::default();
    let mut engine_options: Vec<(String, &Entry)> = Vec::new();
    let mut starts = Starts::default();
    let mut time_based: Option<&Entry> = None;
    // The runtime=0 that left the job without a runtime, if one did.
    let mut no_runtime: Option<&Entry> = None;
    let mut io_size: Option<u64> = None;
    // io_size=N%: a share of each file's working set (the later of it and io_size in bytes wins).
    let mut io_share: Option<u64> = None;
    let mut loops: u64 = 1;
    // fio keeps its random map unless told not to.
    let mut random_map = true;
    let mut no_ops: Vec<&str> = Vec::new();
    // fio's directory: where the job's files are (their names are put after it, even absolute ones).
    let mut directory: Option<String> = None;
    let mut filesize: Option<(&Entry, u64, usize)> = None;
    let mut wait_for: Option<&Entry> = None;
    // fio's flow options: the weight and its line, the flow and the sleep.
    let (mut flow_weight, mut flow_id, mut flow_sleep_us): (Option<(u32, &Entry)>, u32, u64) = (None, 0, 0);
    // fio's nrfiles (files per job without a filename), filename_format and file_service_type.
    let mut nrfiles: Option<(&Entry, usize)> = None;
    let mut filename_format: Option<&Entry> = None;
    let mut file_service: Option<&Entry> = None;
    // fio's batching options, and the lines that set them.
    let mut batching = batch::Batch::default();
    let mut batch_lines: Vec<&Entry> = Vec::new();
    // fio's continue_on_error bits and ignore_error lists, in the order the lines set them.
    let mut errors: Option<(crate::options::ErrorFilter, &Entry, usize)> = None;
    for (order, &e) in entries.iter().enumerate() {
        let opt_err = |message: String| FioError::Option { at: e.at.clone(), key: e.key.clone(), message };
        let key = e.key.as_str();
        if key == "directory" {
            directory = Some(fio_directory(e.value.as_deref().unwrap_or_default()).map_err(opt_err)?);
            continue;
        }
        if key == "filesize" {
            let v = e.value.as_deref().unwrap_or_default();
            let bytes = crate::units::parse_size(v).map_err(|_| {
                opt_err(format!(
                    "filesize={v} is not one size (fio draws a range's sizes per file, which is not taken); write it like filesize=1g"
                ))
            })?;
            filesize = Some((e, bytes, order));
            continue;
        }
        if key == "nrfiles" || key == "nr_files" {
            let v = e.value.as_deref().unwrap_or_default();
            let n = v.parse::<usize>().ok().filter(|n| (1..=files::MAX_FILES).contains(n)).ok_or_else(|| {
                opt_err(format!(
                    "{key}={v} is not a number of files; use a whole number from 1 to {}",
                    files::MAX_FILES
                ))
            })?;
            nrfiles = Some((e, n));
            continue;
        }
        if key == "filename_format" {
            if e.value.as_deref().is_none_or(str::is_empty) {
                return Err(opt_err(format!(
                    "filename_format needs a format, as in fio; write filename_format={}, or remove it",
                    files::DEFAULT_FORMAT
                )));
            }
            filename_format = Some(e);
            continue;
        }
        if key == "file_service_type" {
            files::check_service_type(e.value.as_deref().unwrap_or_default(), 1).map_err(&opt_err)?;
            file_service = Some(e);
            continue;
        }
        if matches!(
            key,
            "iodepth_batch_submit"
                | "iodepth_batch"
                | "iodepth_batch_complete_min"
                | "iodepth_batch_complete"
                | "iodepth_batch_complete_max"
                | "iodepth_low"
        ) {
            let n = batch::parse(key, e.value.as_deref().unwrap_or_default()).map_err(&opt_err)?;
            let slot = match key {
                "iodepth_batch_submit" | "iodepth_batch" => &mut batching.submit,
                "iodepth_batch_complete_min" | "iodepth_batch_complete" => &mut batching.complete_min,
                "iodepth_batch_complete_max" => &mut batching.complete_max,
                _ => &mut batching.low,
            };
            *slot = Some(n);
            batch_lines.retain(|b| !batch::same_option(&b.key, key));
            batch_lines.push(e);
            continue;
        }
        if key == "continue_on_error" || key == "ignore_error" {
            let f = errors.map_or_else(crate::options::ErrorFilter::none, |(f, _, _)| f);
            let f = options::error_option(f, key, e.value.as_deref().unwrap_or_default()).map_err(&opt_err)?;
            errors = Some((f, e, order));
            continue;
        }
        if key == "wait_for" {
            wait_for = e.value.as_deref().filter(|v| !v.is_empty()).map(|_| e);
            continue;
        }
        if key == "filename" {
            let v = e.value.as_deref().unwrap_or_default();
            for (flag, val) in options::filename_flags(v).map_err(opt_err)? {
                sources.written(&flag, e, order);
                set(&mut flags, flag, val);
            }
            // The list's own sentence: the line already names the option.
            let list = crate::config::split_filenames(&[v.into()]).map_err(|e| match e {
                ConfigError::Fault(Fault::Invalid { message, .. }) => opt_err(message),
                e => opt_err(e.to_string()),
            })?;
            // fio opens every file of the list in each of the job's `numjobs` jobs.
            if list.len() > 1 && !v.starts_with("trtype=") {
                sources.written("each-worker-all-targets", e, order);
                set(&mut flags, "--each-worker-all-targets".into(), "true".into());
            }
            continue;
        }
        match options::map(key, e.value.as_deref()).map_err(&opt_err)? {
            None => {
                return Err(opt_err(format!(
                    "'{key}' is not a fio option nvmebench takes; remove it (docs/fio.md lists those it takes)"
                )));
            }
            Some(Mapped::Args(args)) => {
                // Each rw sets its own offset modifier, none without one (fio's str_rw_cb).
                if key == "rw" || key == "readwrite" {
                    flags.retain(|(f, _)| f != "--seq-add");
                }
                if key == "ioengine" && options::SYNC_ENGINES.contains(&e.value.as_deref().unwrap_or_default()) {
                    notes.push(format!(
                        "[{}]: {}",
                        s.name,
                        options::sync_engine_note(e.value.as_deref().unwrap_or_default())
                    ));
                }
                if key == "verify" {
                    notes.push(format!(
                        "[{}]: {}",
                        s.name,
                        options::verify_note(e.value.as_deref().unwrap_or_default())
                    ));
                }
                for a in args {
                    check_alone(&a).map_err(&opt_err)?;
                    let (flag, val) = a.split_once('=').expect("the fio table writes --flag=value");
                    sources.written(flag, e, order);
                    if flag == "--cpus_allowed" {
                        // It becomes the run's core list (`argv::fold`), which is what is checked.
                        sources.written("--cores", e, order);
                    }
                    if flag == "--time" {
                        no_runtime = None;
                    }
                    set(&mut flags, flag.to_string(), val.to_string());
                }
            }
            Some(Mapped::EngineOption(o)) => {
                let key = o.split_once('=').map_or(o.as_str(), |(k, _)| k);
                sources.written(&format!("engine:{key}"), e, order);
                engine_options.push((o, e));
            }
            Some(Mapped::NoOp) => {
                if key != "name" {
                    no_ops.push(options::NO_OPS.iter().find(|(k, _)| *k == key).map_or(key, |(k, _)| k));
                }
            }
            Some(Mapped::Plan(PlanOption::Flow(FlowOption::Weight(w)))) => flow_weight = Some((w, e)),
            Some(Mapped::Plan(PlanOption::Flow(FlowOption::Id(id)))) => flow_id = id,
            Some(Mapped::Plan(PlanOption::Flow(FlowOption::SleepUs(us)))) => flow_sleep_us = us,
            Some(Mapped::Plan(PlanOption::Stonewall)) => starts.stonewall = true,
            Some(Mapped::Plan(PlanOption::NewGroup)) => starts.new_group = true,
            Some(Mapped::Plan(PlanOption::NoRandomMap(off))) => random_map = !off,
            Some(Mapped::Plan(PlanOption::TimeBased(on))) => time_based = on.then_some(e),
            Some(Mapped::Plan(PlanOption::IoSize(b))) => (io_size, io_share) = (Some(b), None),
            Some(Mapped::Plan(PlanOption::IoSizePercent(p))) => (io_size, io_share) = (None, Some(p)),
            Some(Mapped::Plan(PlanOption::Loops(n))) => loops = n,
            Some(Mapped::Plan(PlanOption::NoRuntime)) => {
                flags.retain(|(f, _)| f != "--time");
                no_runtime = Some(e);
            }
        }
    }
    // fio goes on after errors only when a type's bit is set (continue_on_error, or a list of
    // ignore_error's); none set is its default, stopping at the first error.
    if let Some((f, e, order)) = errors.filter(|(f, _, _)| f.types != 0) {
        sources.written("--on-error", e, order);
        set(&mut flags, "--on-error".into(), f.flag());
    }
    // The job's files: filename's list, or fio's own nrfiles (one unless given).
    let listed = flags
        .iter()
        .find(|(f, _)| f == "--filename")
        .map(|(_, v)| crate::config::split_filenames(&[v.into()]).map_or(1, |l| l.len()));
    if let (Some(count), Some((e, n))) = (listed, nrfiles) {
        if count != n {
            let names = JobNames { sources: &sources, at: &e.at };
            let list = flags.iter().find(|(f, _)| f == "--filename").map(|(_, v)| v.clone()).unwrap_or_default();
            return Err(FioError::Options {
                at: e.at.clone(),
                job: s.name.clone(),
                message: format!(
                    "{} with {}: fio takes the {count} files of filename's list (and splits size by a count that is not theirs); remove {}",
                    as_written(e),
                    names.given("filename", &list),
                    e.key
                ),
            });
        }
    }
    let file_count = listed.unwrap_or(nrfiles.map_or(1, |(_, n)| n));
    if let Some(e) = file_service {
        files::check_service_type(e.value.as_deref().unwrap_or_default(), file_count)
            .map_err(|m| FioError::Option { at: e.at.clone(), key: e.key.clone(), message: m })?;
    }
    // fio splits a job's size over its files (each size / files, and the job moves them all);
    // filesize sizes each file, and the job moves them all unless size says less.
    if file_count > 1 {
        let size = flags.iter().find(|(f, _)| f == "--size").and_then(|(_, v)| crate::units::parse_size(v).ok());
        let split = match (filesize, size) {
            (Some((_, each, _)), size) => {
                let all = each.saturating_mul(file_count as u64);
                Some((each, size.map_or(all, |b| b.min(all))))
            }
            (None, Some(bytes)) => Some(files::split(bytes, file_count).map_err(|m| {
                let written = flags.iter().find(|(f, _)| f == "--size").map_or(String::new(), |(_, v)| v.clone());
                match sources.at("size") {
                    Some(at) => FioError::Option {
                        at: at.clone(),
                        key: sources.key("size"),
                        message: format!("size={written} {m}"),
                    },
                    None => section_err(format!("size={written} {m}")),
                }
            })?),
            (None, None) => None,
        };
        if let Some((each, all)) = split {
            if let Some((e, _, order)) = filesize {
                sources.written("--size", e, order);
            }
            set(&mut flags, "--size".into(), each.to_string());
            if io_share.is_none() {
                io_size = io_size.or(Some(all));
            }
        }
        filesize = None;
    }
    // fio's filesize is each file's size, and a job without a size moves all of its files (one
    // here): the same as size.
    if let Some((e, bytes, order)) = filesize {
        match flags.iter().find(|(f, _)| f == "--size").map(|(_, v)| v.clone()) {
            None => {
                sources.written("--size", e, order);
                set(&mut flags, "--size".into(), bytes.to_string());
            }
            Some(size) if crate::units::parse_size(&size).ok() == Some(bytes) => {}
            Some(size) => {
                return Err(FioError::Options {
                    at: e.at.clone(),
                    job: s.name.clone(),
                    message: format!(
                        "{} and {} differ, and the file nvmebench makes is size bytes; give one of them",
                        as_written(e),
                        JobNames { sources: &sources, at: &e.at }.given("size", &size)
                    ),
                });
            }
        }
    }
    // fio warns that time_based needs a runtime and runs the job without time_based (to its size,
    // or one pass), which is not what the file asks for.
    if let Some(tb) = time_based.filter(|_| !flags.iter().any(|(f, _)| f == "--time")) {
        let none = match no_runtime {
            Some(r) if r.at.file == tb.at.file => format!("{} (line {}) sets none", as_written(r), r.at.line),
            Some(r) => format!("{} ({}) sets none", as_written(r), r.at),
            None => "none is given".into(),
        };
        let written = as_written(tb);
        return Err(FioError::Options {
            at: tb.at.clone(),
            job: s.name.clone(),
            message: format!(
                "{written} runs the job for its runtime, and {none} (fio warns that time_based requires a runtime and ignores it); add a runtime, like runtime=60, or drop {written} to end the job after its size or one pass"
            ),
        });
    }
    // Without a filename fio makes the job a file of `size` in the current directory, named
    // jobname.jobnumber.filenumber; so does this (a file per clone, as fio). Without a
    // size in bytes either, fio refuses the job ("you need to specify size="), where a run of
    // nvmebench's own would take a scratch file. The engine is the command line's, if it gives one.
    let engine = engine_of(&flags, cli, given);
    let uses_target = !(engine.starts_with("null") || engine.starts_with("spdk"));
    if let (Some(dir), Some((_, names))) = (&directory, flags.iter_mut().find(|(f, _)| f == "--filename")) {
        *names = in_directory(dir, names);
    }
    // fio's names (filename_format, nrfiles): each clone its own files, dealt to it as targets are
    // dealt to workers.
    let mut own_files = false;
    if uses_target && !flags.iter().any(|(f, _)| f == "--filename" || f == "--trid") {
        let format = filename_format.and_then(|e| e.value.as_deref()).unwrap_or(files::DEFAULT_FORMAT);
        let clones = flags.iter().find(|(f, _)| f == "--jobs").and_then(|(_, v)| v.parse().ok()).unwrap_or(1);
        if let Some(e) = filename_format.filter(|_| clones > 1 && !files::per_clone(format)) {
            return Err(FioError::Option {
                at: e.at.clone(),
                key: e.key.clone(),
                message: format!(
                    "{}: without $jobnum the job's {clones} clones (numjobs) name the same files, and fio 3.33 runs only the first of them (the others find the files done and do no I/O); add $jobnum to it, or give the files in filename= to share them",
                    as_written(e)
                ),
            });
        }
        let (names, shared) = files::names(format, &job_name(s), clones, file_count);
        own_files = names.len() > 1 && !shared;
        if shared {
            set(&mut flags, "--each-worker-all-targets".into(), "true".into());
        }
        let escaped: Vec<String> = names.iter().map(|n| n.replace(':', "\\:")).collect();
        let placed = |name: &str| directory.as_ref().map_or_else(|| name.to_string(), |dir| in_directory(dir, name));
        let (file, place) = match &directory {
            Some(dir) => (in_directory(dir, &escaped.join(":")), format!("in {dir}")),
            None => (escaped.join(":"), "in the current directory".to_string()),
        };
        let shown = match names.as_slice() {
            [first, .., last] => format!("{} files, {} to {},", names.len(), placed(first), placed(last)),
            _ => file.clone(),
        };
        let file_note = format!("[{}]: no filename, so fio's: {shown} {place}", s.name);
        match flags.iter().find(|(f, _)| f == "--size").map(|(_, v)| v.as_str()) {
            Some(size) if !size.ends_with('%') => {
                notes.push(file_note);
                sources.defaulted("--filename", &file);
                set(&mut flags, "--filename".into(), file);
            }
            size => {
                let names = JobNames { sources: &sources, at: &s.at };
                let what = match size {
                    Some(share) => {
                        format!("no filename, and {} is a share of a file's size", names.given("size", share))
                    }
                    None => "neither a filename nor a size".into(),
                };
                return Err(section_err(format!(
                    "has {what}, so there is nothing to run on (fio refuses it: \"you need to specify size=\"); add filename= with a file or device, or size= in bytes to have {file} made in the current directory, as fio makes it"
                )));
            }
        }
    }
    // fio's defaults where they differ from nvmebench's (the same job file, the same job).
    for (flag, fio_default) in [("--rw", "read"), ("--qd", "1")] {
        if !flags.iter().any(|(f, _)| f == flag) {
            sources.defaulted(flag, fio_default);
            set(&mut flags, flag.into(), fio_default.into());
        }
    }
    if random_map {
        set(&mut flags, "--random-map".into(), "true".into());
    }
    fio_precedence(&mut flags);
    if !flags.iter().any(|(f, _)| f == "--engine") {
        sources.defaulted("--engine", FIO_DEFAULT_ENGINE);
        set(&mut flags, "--engine".into(), FIO_DEFAULT_ENGINE.into());
        // The command line's --engine replaces it (see `overlay`): no default to speak of then.
        if !given.iter().any(|g| g == "engine") {
            notes.push(format!("[{}]: no ioengine, so fio's default, psync", s.name));
        }
    }
    if let Some((_, e)) = engine_options.first() {
        let (_, spec) = flags.iter_mut().find(|(f, _)| f == "--engine").expect("an engine is set");
        // The command line's --engine replaces the job file's, options and all (see `overlay`).
        if !spec.starts_with("uring") && !given.iter().any(|g| g == "engine") {
            let names = JobNames { sources: &sources, at: &e.at };
            let engine = names.given("engine", spec);
            return Err(FioError::Options {
                at: e.at.clone(),
                job: s.name.clone(),
                message: format!(
                    "{} is an option of the io_uring engines, and {engine} is not one of them; drop it, or use {}",
                    e.key,
                    names.setting("engine", "io_uring")
                ),
            });
        }
        let sep = if spec.contains(':') { "," } else { ":" };
        let opts: Vec<&str> = engine_options.iter().map(|(o, _)| o.as_str()).collect();
        *spec = format!("{spec}{sep}{}", opts.join(","));
    }
    // The job file's engine: the command line's replaces it with its options (see `overlay`).
    let engine = flags.iter().find(|(f, _)| f == "--engine").map(|(_, v)| v.clone()).unwrap_or_default();
    // The io_uring and libaio engines take fio's batching whether the job writes it or not: fio's
    // defaults submit each I/O as it is queued and reap one completion per call, where the engines'
    // own defaults reap every completion found.
    if batching.given() || engine.starts_with("uring") || engine.starts_with("aio") {
        batch_options(s, &mut flags, &batching, &batch_lines, &engine, notes)?;
    }
    // fio's default is direct=0: buffered I/O through the page cache, on the engines that have one
    // (the run ignores it on the others, as fio's null, SPDK and passthrough engines do).
    if !flags.iter().any(|(f, _)| f == "--buffered") {
        sources.defaulted("--buffered", "true");
        set(&mut flags, "--buffered".into(), "true".into());
        if crate::config::EngineSpec::parse(&engine_of(&flags, cli, given)).is_ok_and(|e| e.has_page_cache()) {
            notes.push(format!(
                "[{}]: no direct=1, so buffered I/O through the page cache, as fio's default direct=0",
                s.name
            ));
        }
    }
    for n in no_ops {
        let note = format!("{n} accepted; it changes no measurement here");
        if !notes.contains(&note) {
            notes.push(note);
        }
    }

    let mut argv: Vec<String> = vec!["nvmebench".into(), "run".into()];
    argv.extend(flags.iter().map(|(f, v)| format!("{f}={v}")));
    // Each flag parsed alone above; what fails now is two of them together.
    let cli_parse = Cli::try_parse_from(&argv).map_err(|e| match conflict_of(&e) {
        Some((first, second)) => sources.refusal(&s.name, &s.at, &Clash::Conflict { first, second }),
        None => section_err(first_line(&e)),
    })?;
    let Command::Run(mut args) = cli_parse.command else { unreachable!("the arguments start with `run`") };
    overlay(&mut args, cli, given);
    // fio keeps iodepth in flight per job, over all of its files.
    args.fio.iodepth_per_job = args.each_worker_all_targets || own_files;
    // What the command line replaced is named as the command line's (see `overlay`).
    if given.iter().any(|g| g == "engine") {
        sources.command_line("engine", cli.engine.as_deref());
    }
    if given.iter().any(|g| g == "trids") {
        sources.command_line("trid", Some(&cli.spdk.trids.join(" ")));
    }

    // fio ends a job that is not time_based after it has moved `size` (or `io_size`) bytes, or
    // after one pass over the file or device (or over `size=N%` of it) when the size is not given
    // in bytes. number_ios only ends it earlier (fio: it "does not extend the amount of I/O that
    // will be done").
    let mut one_pass = None;
    let mut pass_in_bytes = false;
    let number_ios = args.fio.number_ios_per_job;
    if time_based.is_none() {
        // fio's io_size=N% is that share of each file's working set (filesetup.c), added up.
        let amount = io_size.or(match args.size {
            Some(SizeOrPercent::Bytes(b)) => {
                Some(io_share.map_or(b, |p| (b * p / 100).saturating_mul(file_count as u64)))
            }
            _ => None,
        });
        // Sizes that do not parse are named at their own line.
        let size_err = |(flag, message): (&str, String)| match sources.at(flag) {
            Some(at) => FioError::Option { at: at.clone(), key: sources.key(flag), message },
            None => section_err(format!("{}: {message}", sources.key(flag))),
        };
        match amount {
            Some(bytes) => {
                let (mean_bs, exact) = mean_block_size(&args).map_err(&size_err)?;
                // fio's loops repeat the job's size, and its number_ios too (backend.c counts
                // both against the loops).
                if exact {
                    let ios = ((bytes as f64 / mean_bs).floor() as u64).max(1);
                    args.fio.number_ios_per_job = Some(number_ios.map_or(ios, |n| n.min(ios)).saturating_mul(loops));
                } else {
                    // Sizes that vary: fio's count of bytes issued ends the job, whatever the
                    // sizes drawn (and, with its random map, however they were cut short).
                    args.fio.bytes_per_job = Some(bytes.saturating_mul(loops));
                    args.fio.number_ios_per_job = number_ios.map(|n| n.saturating_mul(loops));
                }
            }
            None if number_ios.is_some() && args.engine.as_deref().is_some_and(|e| e.starts_with("null")) => {
                args.fio.number_ios_per_job = number_ios.map(|n| n.saturating_mul(loops));
            }
            None if args.engine.as_deref().is_some_and(|e| e.starts_with("null")) => {
                return Err(section_err(
                    "has no end nvmebench can follow: its engine has no target to make one pass over, as fio's null engine needs size= too; add size=, number_ios=, or time_based with runtime=".into(),
                ));
            }
            None => {
                let (mean_bs, exact) = mean_block_size(&args).map_err(&size_err)?;
                one_pass = Some(mean_bs);
                pass_in_bytes = !exact;
            }
        }
    }
    argv::fold(&mut args).map_err(|c| sources.refusal(&s.name, &s.at, &c))?;
    let options = written(&s.entries);
    let percentile_list = entries.iter().any(|e| e.key == "percentile_list");
    let job = Job {
        name: job_name(s),
        at: s.at.clone(),
        args: *args,
        options,
        number,
        group_id: 0,
        percentile_list,
        sources,
        one_pass,
        pass_in_bytes,
        loops: if time_based.is_some() { 1 } else { loops },
        pass_percent: io_share.unwrap_or(100),
        flow: flow_weight.filter(|(w, _)| *w > 0).map(|(weight, e)| JobFlow {
            id: flow_id,
            weight,
            sleep: std::time::Duration::from_micros(flow_sleep_us),
            at: e.at.clone(),
        }),
    };
    Ok((job, starts, wait_for.cloned()))
}

/// fio's batching options on the job's engine: the io_uring engines' submit_batch, reap_batch and
/// reap_max, with fio's defaults for those not given; nothing on the sync engines and null, where
/// fio's do one I/O at a time or complete at once; refused on the others, which have no such
/// knobs, unless fio's defaults.
fn batch_options(
    s: &Section,
    flags: &mut [(String, String)],
    batching: &batch::Batch,
    lines: &[&Entry],
    engine: &str,
    notes: &mut Vec<String>,
) -> Result<(), FioError> {
    let at = |e: &Entry, message: String| FioError::Option { at: e.at.clone(), key: e.key.clone(), message };
    let line_of = |want: &[&str]| lines.iter().rev().find(|e| want.contains(&e.key.as_str())).copied();
    let qd: u32 = flags.iter().find(|(f, _)| f == "--qd").and_then(|(_, v)| v.parse().ok()).unwrap_or(1);
    let (submit, min, max) = batching.engine_values(qd).map_err(|(which, message)| {
        let keys: &[&str] = match which {
            batch::Which::Low => &["iodepth_low"],
            batch::Which::CompleteMin => &["iodepth_batch_complete_min", "iodepth_batch_complete"],
            batch::Which::Submit => &["iodepth_batch_submit", "iodepth_batch"],
        };
        let e = line_of(keys).expect("a refused option was written");
        at(e, message)
    })?;
    if engine.starts_with("uring") {
        let (_, spec) = flags.iter_mut().find(|(f, _)| f == "--engine").expect("an engine is set");
        let sep = if spec.contains(':') { "," } else { ":" };
        *spec = format!("{spec}{sep}submit_batch={submit},reap_batch={min},reap_max={max}");
        return Ok(());
    }
    // libaio submits each I/O as it is queued and waits for one (fio's defaults): of fio's three,
    // only iodepth_batch_complete_max (1 unless written) has a knob here, the aio engine's reap_max.
    if engine.starts_with("aio") && (submit, min) == (1, 1) {
        let (_, spec) = flags.iter_mut().find(|(f, _)| f == "--engine").expect("an engine is set");
        let sep = if spec.contains(':') { "," } else { ":" };
        *spec = format!("{spec}{sep}reap_max={max}");
        return Ok(());
    }
    let Some(&first) = lines.first() else { return Ok(()) };
    let sync = ["psync", "falloc", "ftruncate", "null"].iter().any(|e| engine.starts_with(e));
    if sync {
        notes.push(format!(
            "[{}]: {} accepted; {} changes no batching here",
            s.name,
            first.key,
            if engine.starts_with("null") {
                "the null engine completes each I/O at once, so it"
            } else {
                "a sync engine does one I/O at a time, as fio's, so it"
            }
        ));
        return Ok(());
    }
    if batching.is_default_submit_and_wait(qd) {
        return Ok(());
    }
    let e = lines.iter().find(|e| !matches!(e.key.as_str(), "iodepth_low")).copied().unwrap_or(first);
    Err(at(
        e,
        format!(
            "{}={}: ioengine={} has no knob for fio's batching here (it submits each I/O as it is queued); remove it, or use ioengine=io_uring, whose submit_batch, reap_batch and reap_max take it",
            e.key,
            e.value.as_deref().unwrap_or_default(),
            options::fio_engine_name(engine.split(':').next().unwrap_or(engine))
        ),
    ))
}

/// fio's name of the job of section `s`: its own `name=` (the last), else the section's name (a
/// `[global]` name never reaches a job: fio names each job after its section header).
fn job_name(s: &Section) -> String {
    s.entries.iter().rev().find(|e| e.key == "name").and_then(|e| e.value.clone()).unwrap_or_else(|| s.name.clone())
}

/// The two flags of a clap conflict (`--bssplit` cannot be used with `--bs`), by their long names.
fn conflict_of(e: &clap::Error) -> Option<(String, String)> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::ArgumentConflict {
        return None;
    }
    // clap shows each as `--bs <SIZE>`.
    let long = |v: &ContextValue| {
        let shown = match v {
            ContextValue::String(s) => s.as_str(),
            ContextValue::Strings(v) => v.first()?.as_str(),
            _ => return None,
        };
        shown.split_whitespace().next()?.strip_prefix("--").map(str::to_string)
    };
    Some((long(e.get(ContextKind::InvalidArg)?)?, long(e.get(ContextKind::PriorArg)?)?))
}

/// fio's `directory=DIR`: one directory, with `\\:` for a colon in its name.
///
/// # Errors
/// An empty value, or a list (fio deals a job's files over the directories of a list, which is not
/// taken).
fn fio_directory(v: &str) -> Result<String, String> {
    if v.is_empty() {
        return Err("directory needs a directory, as in fio; write directory=/mnt/ssd, or remove it".into());
    }
    let unescaped = v.replace("\\:", "");
    if unescaped.contains(':') {
        return Err(format!(
            "directory={v} is a list: fio spreads a job's files over its directories, and nvmebench takes one directory; give one, or name each file in filename=a:b"
        ));
    }
    Ok(v.replace("\\:", ":"))
}

/// Each name of a `filename` list (`a:b`, `\\:` for a colon) in `dir`, as fio puts it: the directory,
/// a `/`, then the name as written (an absolute name too, as fio 3.33 does).
fn in_directory(dir: &str, names: &str) -> String {
    let escaped = dir.replace(':', "\\:");
    let mut out = String::new();
    let mut rest = names;
    loop {
        let cut = rest.char_indices().find(|&(i, c)| c == ':' && !rest[..i].ends_with('\\')).map(|(i, _)| i);
        let (name, tail) = match cut {
            Some(i) => (&rest[..i], Some(&rest[i + 1..])),
            None => (rest, None),
        };
        out.push_str(&format!("{escaped}/{name}"));
        match tail {
            Some(t) => {
                out.push(':');
                rest = t;
            }
            None => return out,
        }
    }
}

/// The job's engine: the command line's, if it gives one, else the job's, else fio's default.
fn engine_of(flags: &[(String, String)], cli: &RunArgs, given: &[String]) -> String {
    match cli.engine.as_deref().filter(|_| given.iter().any(|g| g == "engine")) {
        Some(e) => e.to_string(),
        None => flags.iter().find(|(f, _)| f == "--engine").map_or(FIO_DEFAULT_ENGINE, |(_, v)| v.as_str()).to_string(),
    }
}

/// What fio lets one option decide over another, where the command line would refuse the pair:
/// `bssplit` (or `bsrange`) chooses the block sizes whatever `bs` says (fio keeps `bs` only for
/// the sizes when neither is given), so `[global] bs=4k` with a job's `bssplit=` is that split;
/// and `rwmixread`/`rwmixwrite` mean nothing to a job that only reads or only writes (fio ignores
/// them there), so a `[global]` mix may serve a file that also holds such jobs; `thinktime=0` is
/// no think time (fio's default), which `thinktime_spin`, `thinktime_blocks` and its type do not shape, so a
/// job may turn off a `[global]` think time with its shapes.
fn fio_precedence(flags: &mut Vec<(String, String)>) {
    if flags.iter().any(|(f, _)| f == "--bssplit") {
        flags.retain(|(f, _)| f != "--bs");
    }
    let mixed = flags
        .iter()
        .any(|(f, v)| f == "--rw" && matches!(v.split(':').next().unwrap_or_default(), "rw" | "readwrite" | "randrw"));
    if !mixed {
        flags.retain(|(f, _)| f != "--rwmixread");
    }
    let no_think = flags.iter().any(|(f, v)| f == "--thinktime" && parse_think(v).is_ok_and(|t| t.is_zero()));
    if no_think {
        flags.retain(|(f, _)| {
            !matches!(f.as_str(), "--thinktime-spin" | "--thinktime-blocks" | "--thinktime-blocks-type")
        });
    }
}

fn set(flags: &mut Vec<(String, String)>, flag: String, value: String) {
    flags.retain(|(f, _)| *f != flag);
    flags.push((flag, value));
}

/// Parses one translated flag alone, so a bad value is reported against its own line. A value its
/// parser refuses gets the parser's own sentence, without clap's "invalid value '0' for '--qd
/// <QD>'" around it: the job file names the option, as written.
fn check_alone(flag: &str) -> Result<(), String> {
    Cli::try_parse_from(["nvmebench", "run", flag]).map(|_| ()).map_err(|e| {
        match std::error::Error::source(&e).filter(|_| e.kind() == clap::error::ErrorKind::ValueValidation) {
            Some(why) => why.to_string(),
            None => first_line(&e),
        }
    })
}

/// clap's message without its usage block, on one line.
fn first_line(e: &clap::Error) -> String {
    let rendered = e.render().to_string();
    let first = rendered.split("\n\n").next().unwrap_or("invalid value");
    first
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
        .trim_start_matches("error: ")
        .to_string()
}

/// The mean I/O size of the job's mix (a flush moves no bytes), and whether it is exact (one
/// size).
///
/// # Errors
/// The flag (`bs` or `bssplit`) whose sizes do not parse, and why.
fn mean_block_size(a: &RunArgs) -> Result<(f64, bool), (&'static str, String)> {
    let sizes = argv::block_sizes(a)?;
    let mix = match (a.rw.fixed_mix(), a.rwmix) {
        (Some(m), _) | (None, Some(m)) => m,
        (None, None) => Mix::read_write(a.rwmixread.unwrap_or(crate::config::DEFAULT_RWMIXREAD)),
    };
    let mean = |s: &BsSplit| s.entries.iter().map(|e| f64::from(e.bytes) * e.percent / 100.0).sum::<f64>();
    // Each direction with a range, its share and its sizes (write-zeroes take the write sizes).
    let used = [(Direction::Read, 0), (Direction::Write, 1), (Direction::WriteZeroes, 1), (Direction::Trim, 2)]
        .map(|(d, i)| (f64::from(mix.share(d)) / 100.0, &sizes[i]));
    let m = used.iter().map(|(share, s)| share * mean(s)).sum::<f64>();
    let all: Vec<u32> =
        used.iter().filter(|(share, _)| *share > 0.0).flat_map(|(_, s)| s.entries.iter().map(|e| e.bytes)).collect();
    let exact = all.windows(2).all(|w| w[0] == w[1]) && !mix.issues(Direction::Flush);
    Ok((m, exact))
}

/// The command line's global flags replace the job file's.
fn overlay(s: &mut RunArgs, c: &RunArgs, given: &[String]) {
    let has = |id: &str| given.iter().any(|g| g == id);
    // Each given flag replaces the job file's value of that field alone: `--mem-size` must not
    // drop the controller a job's filename=trtype=... names.
    macro_rules! given {
        ($($id:literal => $($field:ident).+;)*) => {
            $(if has($id) {
                s.$($field).+ = c.$($field).+.clone();
            })*
        };
    }
    given! {
        "engine" => engine;
        "trids" => spdk.env.trids;
        "mem_size" => spdk.env.mem_size;
        "shm_id" => spdk.env.shm_id;
        "iova_mode" => spdk.env.iova_mode;
        "spdk_log" => spdk.env.spdk_log;
        "io_queue_size" => spdk.io_queue_size;
        "max_completions" => spdk.max_completions;
        "output" => output;
        "json" => json;
        "confirm_serial" => confirm_serial;
        "interval" => interval;
        "drain_timeout" => drain_timeout;
        "on_error" => on_error;
        "percentiles" => percentiles;
        "verify_state" => verify_state;
    }
    s.spdk.env.no_huge |= c.spdk.env.no_huge;
    s.quiet |= c.quiet;
    s.allow_destroy |= c.allow_destroy;
    let f = &c.fio;
    let t = &mut s.fio;
    t.job_file = f.job_file.clone();
    t.output_format = f.output_format.clone().or(t.output_format.take());
    t.output_file = f.output_file.clone();
    t.write_bw_log = f.write_bw_log.clone().or(t.write_bw_log.take());
    t.write_iops_log = f.write_iops_log.clone().or(t.write_iops_log.take());
    t.write_lat_log = f.write_lat_log.clone().or(t.write_lat_log.take());
    t.log_avg_msec = f.log_avg_msec.or(t.log_avg_msec);
    t.per_job_logs = f.per_job_logs.or(t.per_job_logs);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::ini;

    fn plan_of(text: &str, cli: &[&str]) -> Result<Plan, FioError> {
        plan_of_sections(text, cli, &[])
    }

    /// As [`plan_of`], with only the sections `only` (`--section`).
    fn plan_of_sections(text: &str, cli: &[&str], only: &[&str]) -> Result<Plan, FioError> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("job.fio");
        std::fs::write(&p, text).unwrap();
        let sections = ini::parse(&p, &|_| None).unwrap();
        let mut v = vec!["nvmebench", "run"];
        v.extend_from_slice(cli);
        let Command::Run(args) = Cli::try_parse_from(v).unwrap().command else { panic!() };
        let given: Vec<String> = cli
            .iter()
            .filter_map(|a| a.strip_prefix("--"))
            .map(|a| a.split('=').next().unwrap().replace('-', "_"))
            // clap's id of --trid.
            .map(|id| if id == "trid" { "trids".to_string() } else { id })
            .collect();
        let only: Vec<String> = only.iter().map(|s| s.to_string()).collect();
        build(&sections, &only, &args, &given)
    }

    const TWO_GROUPS: &str = "[global]\nioengine=null\ndirect=1\ntime_based\nruntime=2\nthread\n\
        [a]\nrw=randread\nnumjobs=2\nrate_iops=100\n[b]\nrw=randwrite\n[c]\nstonewall\nsize=1m\nbs=64k\n";

    #[test]
    fn sections_group_at_stonewall() {
        let p = plan_of(TWO_GROUPS, &[]).unwrap();
        let names: Vec<Vec<&str>> = p.groups.iter().map(|g| g.iter().map(|j| j.name.as_str()).collect()).collect();
        assert_eq!(names, [vec!["a", "b"], vec!["c"]]);
        let a = &p.groups[0][0].args;
        assert_eq!((a.engine.as_deref(), a.jobs, a.rate_iops), (Some("null"), Some(2), None));
        // fio's rate_iops: per job and direction, paced as bytes at the direction's smallest size.
        let each = Some(100 * 4096);
        assert_eq!(a.rate, Some(crate::workload::rate::ByteRate { read: each, write: each, trim: each }));
        assert_eq!(
            (a.qd, p.groups[1][0].args.rw),
            (1, crate::workload::RwMode::Read),
            "fio's defaults: iodepth=1, rw=read"
        );
        assert_eq!(a.time, Some(std::time::Duration::from_secs(2)));
        assert_eq!(p.notes.iter().filter(|n| n.starts_with("thread accepted")).count(), 1, "{:?}", p.notes);
        assert_eq!(p.globals[0], ("ioengine".to_string(), "null".to_string()));
        // fio's thread numbers: [a]'s two clones are 1 and 2, [b] is 3, [c] 4.
        let numbers: Vec<Vec<usize>> = p.groups.iter().map(|g| g.iter().map(|j| j.number).collect()).collect();
        assert_eq!(numbers, [vec![1, 3], vec![4]]);
        assert_eq!(p.groups[0][0].clones(), 2);
        // A section --section leaves out takes no number, as fio never makes its jobs.
        let p = plan_of_sections(TWO_GROUPS, &[], &["c"]).unwrap();
        assert_eq!(p.groups[0][0].number, 1);
    }

    /// A job without an ioengine runs fio's default, and the report says so, unless the command
    /// line's --engine replaced it.
    #[test]
    fn the_default_engine_is_noted_only_when_it_runs() {
        let text = "[a]\nfilename=/dev/null\nsize=1m\n";
        let p = plan_of(text, &[]).unwrap();
        assert!(p.notes.iter().any(|n| n == "[a]: no ioengine, so fio's default, psync"), "{:?}", p.notes);
        let p = plan_of(text, &["--engine=null"]).unwrap();
        assert_eq!(p.groups[0][0].args.engine.as_deref(), Some("null"));
        assert!(!p.notes.iter().any(|n| n.contains("no ioengine")), "{:?}", p.notes);
    }

    #[test]
    fn without_time_based_size_ends_the_job() {
        let p = plan_of("[a]\nioengine=null\nrw=read\nsize=1m\nbs=64k\n", &[]).unwrap();
        assert_eq!(p.groups[0][0].args.ios, Some(16));
        assert!(p.groups[0][0].args.filename.is_empty(), "the null engine needs no file");
        let p = plan_of("[a]\nioengine=libaio\nsize=1m\n", &[]).unwrap();
        assert_eq!(p.groups[0][0].args.filename, [std::path::PathBuf::from("a.0.0")], "fio's file name");
        let e = plan_of("[a]\nioengine=null\nrw=read\n", &[]).unwrap_err().to_string();
        assert!(e.contains("section [a]: has no end nvmebench can follow"), "{e}");
        // fio makes one pass over the file (or size=N% of it): the I/O count waits for its size.
        for text in ["[a]\nioengine=libaio\nfilename=/f\n", "[a]\nfilename=/f\nsize=50%\nruntime=5\n"] {
            let p = plan_of(text, &[]).unwrap();
            let a = &p.groups[0][0];
            assert_eq!((a.one_pass, a.args.ios), (Some(4096.0), None), "{text}");
        }
        let p = plan_of("[a]\nioengine=libaio\nfilename=/f\ntime_based\nruntime=1\n", &[]).unwrap();
        assert_eq!(p.groups[0][0].one_pass, None);
    }

    /// fio's groupid (init.c): it counts up at a job with stonewall or new_group that follows a
    /// job, over the jobs that run; new_group does not wait, so [d] and [e] run with [c]. fio 3.33
    /// on this file writes groupids 0 0 0 0 1 2 2 for a a b b c d e.
    #[test]
    fn reporting_groups_count_as_fios_groupid() {
        let ids = |text: &str, only: &[&str]| {
            let p = plan_of_sections(text, &[], only).unwrap();
            p.groups
                .iter()
                .map(|g| g.iter().map(|j| (j.name.clone(), j.group_id)).collect::<Vec<_>>())
                .collect::<Vec<_>>()
        };
        let pair = |n: &str, g: usize| (n.to_string(), g);
        let text = "[global]\nioengine=null\nsize=1m\n[a]\nnumjobs=2\n[b]\n[c]\nstonewall\n[d]\nnew_group\n[e]\n";
        assert_eq!(ids(text, &[]), [vec![pair("a", 0), pair("b", 0)], vec![pair("c", 1), pair("d", 2), pair("e", 2)]]);
        // A job that runs first starts no group, whatever it says: fio counts only after a job.
        assert_eq!(ids(text, &["d", "e"]), [vec![pair("d", 0), pair("e", 0)]]);
        assert_eq!(ids(text, &["c"]), [vec![pair("c", 0)]]);
        // new_group in [global]: each job its own group, all running together.
        let text = "[global]\nioengine=null\nsize=1m\nnew_group\n[a]\n[b]\n[c]\n";
        assert_eq!(ids(text, &[]), [vec![pair("a", 0), pair("b", 1), pair("c", 2)]]);
    }

    /// fio refuses a job with group_reporting whose lat_percentiles differs from another job of
    /// its group (fio 3.33: "lat_percentiles in job: b differs from group"), whichever of them says
    /// group_reporting; a new group, or the same setting, runs.
    #[test]
    fn lat_percentiles_must_agree_within_a_summed_group() {
        let base = "[global]\nioengine=null\nsize=1m\n";
        for text in [
            format!("{base}group_reporting\n[a]\n[b]\nlat_percentiles=1\n"),
            format!("{base}[a]\n[b]\nlat_percentiles=1\ngroup_reporting\n"),
        ] {
            let e = plan_of(&text, &[]).unwrap_err().to_string();
            assert!(
                e.ends_with("section [b]: has lat_percentiles=1 and [a] in its reporting group 0, which group_reporting would sum into one entry (fio refuses it: \"lat_percentiles in job: b differs from group\"); give them the same lat_percentiles, or add new_group to report it apart"),
                "{text}: {e}"
            );
        }
        assert!(plan_of(&format!("{base}group_reporting\n[a]\n[b]\nnew_group\nlat_percentiles=1\n"), &[]).is_ok());
        assert!(plan_of(&format!("{base}group_reporting\nlat_percentiles=1\n[a]\n[b]\n"), &[]).is_ok());
        assert!(plan_of(&format!("{base}[a]\n[b]\nlat_percentiles=1\n"), &[]).is_ok(), "not summed");
    }

    /// fio's latency switches, read in order as fio reads them: gtod_reduce=1 is the three
    /// disable_* options, and a later disable_lat=0 (here a job's, after [global]) takes lat back.
    #[test]
    fn latency_switches_are_read_in_order() {
        let kept = |text: &str| {
            let p = plan_of(text, &[]).unwrap();
            p.groups
                .iter()
                .flatten()
                .map(|j| j.args.fio.fio_latencies())
                .map(|l| (l.slat, l.clat, l.lat))
                .collect::<Vec<_>>()
        };
        let base = "[global]\nioengine=null\nsize=1m\n";
        assert_eq!(kept(&format!("{base}[a]\n")), [(true, true, true)]);
        assert_eq!(
            kept(&format!("{base}gtod_reduce=1\n[a]\n[b]\ndisable_lat=0\n")),
            [(false, false, false), (false, false, true)]
        );
        assert_eq!(kept(&format!("{base}disable_lat=0\n[a]\ngtod_reduce=1\n")), [(false, false, false)]);
        assert_eq!(kept(&format!("{base}[a]\ndisable_clat=1\ndisable_slat=1\n")), [(false, false, true)]);
        let e = plan_of(&format!("{base}[a]\ndisable_slat\n"), &[]).unwrap_err().to_string();
        assert!(e.ends_with("job.fio:5: option 'disable_slat': disable_slat needs a value, as in fio (which refuses it bare); write disable_slat=1 or disable_slat=0"), "{e}");
    }

    /// name= in a section names its job (fio's jobname, its logs and its file), as in fio; a
    /// [global] name= does not, as fio names each job after its section.
    #[test]
    fn name_in_a_section_names_its_job() {
        let p = plan_of("[global]\nname=g\nsize=1m\n[a]\nname=b\n[c]\n", &[]).unwrap();
        let names: Vec<&str> = p.groups[0].iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["b", "c"]);
        assert_eq!(p.groups[0][0].args.filename, [std::path::PathBuf::from("b.0.0")], "fio's file of job b");
    }

    /// fio keeps its random map unless the job says norandommap; the command line draws with
    /// replacement unless told otherwise.
    #[test]
    fn job_files_keep_fios_random_map_unless_norandommap() {
        let map = |extra: &str| {
            let p = plan_of(&format!("[a]\nioengine=null\nrw=randwrite\nsize=1m\n{extra}"), &[]).unwrap();
            p.groups[0][0].args.random_map
        };
        assert!(map(""));
        assert!(!map("norandommap\n"));
        assert!(!map("norandommap=1\n"));
        assert!(map("norandommap=0\n"));
        assert!(map("random_generator=lfsr\n"));
        let e = plan_of("[a]\nioengine=null\nsize=1m\nrandom_generator=mt\n", &[]).unwrap_err().to_string();
        assert!(e.ends_with("random_generator=mt is not one of fio's generators; write tausworthe, lfsr or tausworthe64, or remove it"), "{e}");
    }

    /// fio's verify=METHOD is nvmebench's own check, with a note saying so; verify=0 is none.
    #[test]
    fn verify_methods_are_nvmebenchs_check_with_a_note() {
        let p = plan_of("[a]\nioengine=null\nsize=1m\nrw=write\nverify=md5\n", &[]).unwrap();
        assert!(p.groups[0][0].args.verify);
        assert!(
            p.notes.iter().any(|n| n.starts_with("[a]: verify=md5 is taken as nvmebench's own check")),
            "{:?}",
            p.notes
        );
        let p = plan_of("[a]\nioengine=null\nsize=1m\nrw=write\nverify=0\n", &[]).unwrap();
        assert!(!p.groups[0][0].args.verify);
        let e = plan_of("[a]\nioengine=null\nsize=1m\nverify=md6\n", &[]).unwrap_err().to_string();
        assert!(e.contains("job.fio:4: option 'verify': verify=md6 is not one of fio's verify methods"), "{e}");
    }

    /// number_ios only ends a job earlier than its size does (fio: it "does not extend the amount
    /// of I/O that will be done"): size=1m at 4k is 256 I/Os whatever a larger number_ios says.
    #[test]
    fn number_ios_only_ends_a_job_earlier() {
        let ios = |extra: &str| {
            let p = plan_of(&format!("[a]\nioengine=null\nrw=read\nbs=4k\n{extra}"), &[]).unwrap();
            p.groups[0][0].args.ios
        };
        assert_eq!(ios("size=1m\nnumber_ios=1000\n"), Some(256));
        assert_eq!(ios("size=1m\nnumber_ios=100\n"), Some(100));
        assert_eq!(ios("size=1m\nnumber_ios=1000\nnumjobs=2\n"), Some(512), "per job");
        assert_eq!(ios("number_ios=10\n"), Some(10), "the null engine's end, without a size");
        assert_eq!(ios("number_ios=10\ntime_based\nruntime=1\n"), Some(10), "before the runtime");
        let p = plan_of("[a]\nioengine=libaio\nfilename=/f\nnumber_ios=10\n", &[]).unwrap();
        assert_eq!((p.groups[0][0].one_pass, p.groups[0][0].args.ios), (Some(4096.0), Some(10)), "or one pass");
    }

    /// A job with no filename runs on fio's file of `size`; with no size in bytes either, fio
    /// refuses it, and so does a job file here (a command-line run takes a scratch file instead).
    /// The command line's engine decides whether the job needs a target.
    #[test]
    fn a_job_without_filename_or_size_is_refused_as_fio_refuses_it() {
        let e = plan_of("[a]\ntime_based\nruntime=1\n", &[]).unwrap_err().to_string();
        assert!(
            e.ends_with("/job.fio:1: section [a]: has neither a filename nor a size, so there is nothing to run on (fio refuses it: \"you need to specify size=\"); add filename= with a file or device, or size= in bytes to have a.0.0 made in the current directory, as fio makes it"),
            "{e}"
        );
        let e = plan_of("[global]\nsize=50%\n[j]\nioengine=libaio\nrw=randread\n", &[]).unwrap_err().to_string();
        assert!(
            e.contains("/job.fio:3: section [j]: has no filename, and size=50% (line 2) is a share of a file's size, so there is nothing to run on"),
            "{e}"
        );
        let null = "[a]\nioengine=null\ntime_based\nruntime=1\n";
        assert!(plan_of(null, &[]).is_ok(), "the null engine needs no target");
        let e = plan_of(null, &["--engine=psync"]).unwrap_err().to_string();
        assert!(e.contains("section [a]: has neither a filename nor a size"), "{e}");
        assert!(plan_of("[a]\ntime_based\nruntime=1\n", &["--engine=null"]).is_ok());
        // With a size, fio's file; the command line's engine, not the job file's null, needs it.
        let p = plan_of(&format!("{null}size=1m\n"), &["--engine=psync"]).unwrap();
        assert_eq!(p.groups[0][0].args.filename, [std::path::PathBuf::from("a.0.0")]);
        let p = plan_of("[a]\nsize=1m\n", &["--engine=null"]).unwrap();
        assert!(p.groups[0][0].args.filename.is_empty(), "null needs no file");
    }

    /// fio warns that time_based needs a runtime and runs the job without time_based; a job file
    /// that says time_based without one is refused at its line. runtime=0 is fio's default: none.
    #[test]
    fn time_based_needs_a_runtime() {
        let e = plan_of("[a]\nioengine=null\ntime_based\nsize=1m\n", &[]).unwrap_err().to_string();
        assert!(
            e.ends_with("/job.fio:3: [a]: time_based runs the job for its runtime, and none is given (fio warns that time_based requires a runtime and ignores it); add a runtime, like runtime=60, or drop time_based to end the job after its size or one pass"),
            "{e}"
        );
        let e =
            plan_of("[global]\nruntime=10\ntime_based\n[a]\nioengine=null\nruntime=0\n", &[]).unwrap_err().to_string();
        assert!(
            e.contains("/job.fio:3: [a]: time_based runs the job for its runtime, and runtime=0 (line 6) sets none"),
            "{e}"
        );
        let e = plan_of("[a]\nioengine=null\nruntime=0.3\ntime_based\n", &[]).unwrap_err().to_string();
        assert!(e.contains("/job.fio:3: option 'runtime': runtime=0.3: fio reads a time only up to its '.'"), "{e}");
        // Without time_based, runtime=0 leaves the job to end after its size, as in fio.
        let p = plan_of("[global]\nruntime=10\n[a]\nioengine=null\nsize=1m\nruntime=0\n", &[]).unwrap();
        assert_eq!((p.groups[0][0].args.time, p.groups[0][0].args.ios), (None, Some(256)));
        let p = plan_of("[a]\nioengine=null\ntime_based\nruntime=0\nruntime=300ms\n", &[]).unwrap();
        assert_eq!(p.groups[0][0].args.time, Some(std::time::Duration::from_millis(300)));
    }

    #[test]
    fn unknown_options_and_bad_values_name_their_line() {
        let e = plan_of("[a]\nioengine=null\npre_read=1\n", &[]).unwrap_err().to_string();
        assert!(e.ends_with("job.fio:3: option 'pre_read': 'pre_read' is not a fio option nvmebench takes; remove it (docs/fio.md lists those it takes)"), "{e}");
        let e = plan_of("[global]\niodepth=0\n[a]\nioengine=null\n", &[]).unwrap_err().to_string();
        assert!(
            e.ends_with("/job.fio:2: option 'iodepth': '0' is not a queue depth; use a whole number from 1 to 65536"),
            "{e}"
        );
        // The value's own sentence: the line names the option, and run's flag (--qd, --seed) is not
        // the user's.
        let e = plan_of("[a]\nioengine=null\nrandseed=x\n", &[]).unwrap_err().to_string();
        assert!(
            e.ends_with(
                "/job.fio:3: option 'randseed': 'x' is not a seed; use a whole number from 0 to 18446744073709551615"
            ),
            "{e}"
        );
        let e = plan_of("[a]\nrate_process=x\n", &[]).unwrap_err().to_string();
        assert!(
            e.ends_with("/job.fio:2: option 'rate_process': 'x' is not a rate process; use linear or poisson"),
            "{e}"
        );
        let e = plan_of("[a]\nsize=1m\ndirect=2\n", &[]).unwrap_err().to_string();
        assert!(e.ends_with("job.fio:3: option 'direct': direct=2 is not 0 or 1"), "{e}");
        let p = plan_of("[a]\nfilename=/a:/b\\:c\nnumjobs=2\ntime_based\nruntime=1\n", &[]).unwrap();
        assert_eq!(p.groups[0][0].args.filename, [std::path::PathBuf::from("/a:/b\\:c")]);
        assert!(p.groups[0][0].args.each_worker_all_targets, "each of fio's jobs opens every file of its list");
        assert!(p.groups[0][0].args.fio.iodepth_per_job, "and keeps its iodepth over all of them");
        let p = plan_of("[a]\nfilename=/a\ntime_based\nruntime=1\n", &[]).unwrap();
        assert!(!p.groups[0][0].args.fio.iodepth_per_job);
        let e = plan_of("[a]\nfilename=/a::/b\n", &[]).unwrap_err().to_string();
        assert!(e.contains("/job.fio:2: option 'filename': '/a::/b' has an empty name in its list"), "{e}");
        let e = plan_of("[a]\nioengine=null\ntime_based\n", &["--qd=4"]).unwrap_err().to_string();
        assert!(e.starts_with("--qd with a job file"), "{e}");
    }

    /// An SPDK flag on the command line sets itself only: the job's controller stays.
    #[test]
    fn command_line_spdk_flags_keep_the_jobs_controller() {
        let text = "[a]\nioengine=spdk\nfilename=trtype=TCP adrfam=IPv4 traddr=127.0.0.1 trsvcid=4420 subnqn=nqn.x ns=1\ntime_based\nruntime=1\n";
        let p = plan_of(text, &["--mem-size=512", "--max-completions=8"]).unwrap();
        let a = &p.groups[0][0].args;
        assert_eq!(a.spdk.trids.len(), 1, "{:?}", a.spdk.trids);
        assert!(a.spdk.trids[0].contains("traddr:127.0.0.1"), "{:?}", a.spdk.trids);
        assert_eq!((a.spdk.mem_size, a.spdk.max_completions), (Some(512), Some(8)));
        let p = plan_of(text, &["--trid=trtype:TCP adrfam:IPv4 traddr:10.0.0.1 trsvcid:4420 subnqn:nqn.y"]).unwrap();
        assert!(
            p.groups[0][0].args.spdk.trids[0].contains("10.0.0.1"),
            "the command line's controller replaces the job's"
        );
    }

    /// Pairs fio settles by precedence, not refusal: bssplit and bsrange over bs, in either
    /// section and either order; rwmixread/rwmixwrite ignored by a job that does not mix.
    #[test]
    fn pairs_fio_settles_by_precedence_are_taken_as_fio_takes_them() {
        let base = "[global]\nioengine=null\ntime_based\nruntime=1\n";
        for text in [
            format!("{base}[a]\nbs=4k\nbssplit=8k/50:16k/50\n"),
            format!("{base}[a]\nbssplit=8k/50:16k/50\nbs=4k\n"),
            format!("{base}bs=4k\n[a]\nbssplit=8k/50:16k/50\n"),
        ] {
            let p = plan_of(&text, &[]).unwrap();
            let a = &p.groups[0][0].args;
            assert_eq!((a.bs.as_deref(), a.bssplit.as_deref()), (None, Some("8k/50:16k/50")), "{text}");
        }
        let p = plan_of(&format!("{base}bsrange=4k-8k\n[a]\nbs=16k\n"), &[]).unwrap();
        assert_eq!(p.groups[0][0].args.bs, None);
        assert_eq!(p.groups[0][0].args.bssplit.as_deref(), Some("4k:8k"));
        // A [global] mix serves the job that mixes and is ignored by the one that only reads.
        let p = plan_of(&format!("{base}rwmixwrite=30\n[r]\nrw=randread\n[m]\nrw=randrw\n[d]\n"), &[]).unwrap();
        let mixes: Vec<Option<u32>> = p.groups[0].iter().map(|j| j.args.rwmixread).collect();
        assert_eq!(mixes, [None, Some(70), None]);
    }

    #[test]
    fn two_options_that_clash_are_named_as_written_at_the_later_ones_line() {
        let base = "[global]\nioengine=null\ntime_based\nruntime=1\n[a]\n";
        // In [global], the option is placed by its own line, whichever section names the other.
        let e =
            plan_of("[global]\nioengine=null\nsize=1m\nrate=1m\n[a]\nrate_iops=100\n", &[]).unwrap_err().to_string();
        assert!(e.ends_with("job.fio:6: [a]: rate_iops=100 and rate=1m (line 4) both pace the run; give one"), "{e}");
        let e = plan_of(&format!("{base}rate_iops=100\nrate=1m\n"), &[]).unwrap_err().to_string();
        assert!(e.ends_with("job.fio:7: [a]: rate=1m and rate_iops=100 (line 6) both pace the run; give one"), "{e}");
    }

    #[test]
    fn io_uring_options_name_the_engine_they_do_not_fit() {
        let e = plan_of("[global]\nioengine=libaio\nsize=1m\n[a]\nhipri\n", &[]).unwrap_err().to_string();
        assert!(
            e.ends_with("job.fio:5: [a]: hipri is an option of the io_uring engines, and ioengine=libaio (line 2) is not one of them; drop it, or use ioengine=io_uring"),
            "{e}"
        );
        let e = plan_of("[a]\nsize=1m\nfixedbufs\n", &[]).unwrap_err().to_string();
        assert!(e.contains("job.fio:3: [a]: fixedbufs is an option of the io_uring engines, and ioengine=psync (fio's default) is not"), "{e}");
        let p = plan_of("[a]\nioengine=io_uring\nsize=1m\nhipri\n", &[]).unwrap();
        // fio's batching too, which a job file gets whether it writes it or not.
        assert_eq!(
            p.groups[0][0].args.engine.as_deref(),
            Some("uring:fixedbufs=0,regfile=0,poll=1,submit_batch=1,reap_batch=1,reap_max=1")
        );
    }

    #[test]
    fn block_sizes_that_do_not_parse_name_their_line() {
        let e = plan_of("[a]\nioengine=null\nsize=1m\nbs=4k,8k,16k,32k\n", &[]).unwrap_err().to_string();
        assert!(e.ends_with("job.fio:4: option 'bs': '4k,8k,16k,32k' gives more than three sizes; write READ[,WRITE[,TRIM]], like 4k,64k,1m"), "{e}");
        let e = plan_of("[a]\nioengine=null\nsize=1m\nbssplit=4k/50:8k/40\n", &[]).unwrap_err().to_string();
        assert!(e.contains("job.fio:4: option 'bssplit': "), "{e}");
    }

    /// fio's directory holds the job's files: its own (JOBNAME.0.0) or each of filename's, whose
    /// names fio puts after the directory as written, an absolute one too (fio 3.33 made
    /// d/var/tmp/g of directory=d and filename=/var/tmp/g).
    #[test]
    fn directory_holds_the_jobs_files_as_in_fio() {
        let files = |text: &str| plan_of(text, &[]).unwrap().groups[0][0].args.filename.clone();
        let p = |s: &str| std::path::PathBuf::from(s);
        assert_eq!(files("[global]\ndirectory=/mnt/d\nsize=1m\n[a]\n"), [p("/mnt/d/a.0.0")]);
        assert_eq!(files("[a]\ndirectory=/mnt/d\nfilename=x:y\\:z\nsize=1m\n"), [p("/mnt/d/x:/mnt/d/y\\:z")]);
        assert_eq!(
            files("[a]\nfilename=/v/g\nsize=1m\ndirectory=d\\:e\n"),
            [p("d\\:e//v/g")],
            "after it, either order"
        );
        assert!(files("[a]\ndirectory=/mnt/d\nioengine=null\nsize=1m\n").is_empty(), "null has no files");
        let p = plan_of("[a]\ndirectory=/mnt/d\nsize=1m\n", &[]).unwrap();
        assert!(p.notes.iter().any(|n| n == "[a]: no filename, so fio's: /mnt/d/a.0.0 in /mnt/d"), "{:?}", p.notes);
        let e = plan_of("[a]\ndirectory=/a:/b\nsize=1m\n", &[]).unwrap_err().to_string();
        assert!(
            e.ends_with("job.fio:2: option 'directory': directory=/a:/b is a list: fio spreads a job's files over its directories, and nvmebench takes one directory; give one, or name each file in filename=a:b"),
            "{e}"
        );
        let e = plan_of("[a]\ndirectory=\nsize=1m\n", &[]).unwrap_err().to_string();
        assert!(e.ends_with("job.fio:2: option 'directory': directory needs a directory, as in fio; write directory=/mnt/ssd, or remove it"), "{e}");
    }

    /// fio's rw=read:SIZE skips (or steps back) that much after each sequential I/O; each rw
    /// sets its own, so a job's rw=write drops a [global] rw=read:8k's.
    #[test]
    fn rw_offset_modifiers_are_fios() {
        let add = |text: &str| plan_of(text, &[]).map(|p| p.groups[0][0].args.seq_add);
        assert_eq!(add("[a]\nioengine=null\nsize=1m\nrw=read:-8k\n").unwrap(), Some(-8192));
        assert_eq!(add("[global]\nrw=write:4k\n[a]\nioengine=null\nsize=1m\nrw=write\n").unwrap(), None);
        let e = add("[a]\nioengine=null\nsize=1m\nrw=read:x\n").unwrap_err().to_string();
        assert!(e.contains("job.fio:4: option 'rw': "), "{e}");
        let e = resolved_err("[a]\nioengine=null\nsize=64k\nrw=read:64k\n");
        assert!(e.ends_with("--seq-add: 64k is not smaller than the working set (64k); give a smaller step"), "{e}");
    }

    fn resolved_err(text: &str) -> String {
        let p = plan_of(text, &[]).unwrap();
        crate::config::RunConfig::resolve(&p.groups[0][0].args).unwrap_err().to_string()
    }

    /// fio's filesize is the size of the job's one file, and so its size when none is given;
    /// threads=1 is fio's thread (fio takes an option by the start of its name).
    #[test]
    fn filesize_is_the_size_of_the_jobs_file() {
        let size = |text: &str| plan_of(text, &[]).map(|p| p.groups[0][0].args.size);
        assert_eq!(size("[a]\nioengine=null\nfilesize=1m\nthreads=1\n").unwrap(), Some(SizeOrPercent::Bytes(1 << 20)));
        assert_eq!(size("[a]\nioengine=null\nfilesize=1m\nsize=1024k\n").unwrap(), Some(SizeOrPercent::Bytes(1 << 20)));
        let e = size("[a]\nioengine=null\nsize=2m\nfilesize=1m\n").unwrap_err().to_string();
        assert!(
            e.ends_with("job.fio:4: [a]: filesize=1m and size=2m (line 3) differ, and the file nvmebench makes is size bytes; give one of them"),
            "{e}"
        );
        let e = size("[a]\nioengine=null\nfilesize=1k-10k\n").unwrap_err().to_string();
        assert!(e.ends_with("job.fio:3: option 'filesize': filesize=1k-10k is not one size (fio draws a range's sizes per file, which is not taken); write it like filesize=1g"), "{e}");
    }

    /// fio's nrfiles: files named by filename_format, each clone its own when the format has
    /// $jobnum, size split over them; filename's list splits size the same way.
    #[test]
    fn nrfiles_names_and_sizes_fios_files() {
        let job = |text: &str| plan_of(text, &[]).map(|p| p.groups[0][0].clone());
        let j = job("[a]\nsize=256k\nnrfiles=2\nnumjobs=2\n").unwrap();
        assert_eq!(j.args.filename, [std::path::PathBuf::from("a.0.0:a.1.0:a.0.1:a.1.1")]);
        assert!(!j.args.each_worker_all_targets, "dealt: each clone its own");
        assert!(j.args.fio.iodepth_per_job, "iodepth over the clone's files");
        assert_eq!(j.args.size, Some(SizeOrPercent::Bytes(128 << 10)), "256k over two files");
        assert_eq!(j.args.fio.number_ios_per_job, Some(64), "the job moves all of its files");
        let j = job("[a]\nsize=256k\nnrfiles=2\nfilename_format=f.$FILENUM\n").unwrap();
        assert_eq!(j.args.filename, [std::path::PathBuf::from("f.0:f.1")]);
        assert!(j.args.each_worker_all_targets, "the job's worker drives both");
        let j = job("[a]\nsize=256k\nnumjobs=3\n").unwrap();
        assert_eq!(j.args.filename, [std::path::PathBuf::from("a.0.0:a.1.0:a.2.0")], "one file per clone, as fio");
        let m = job("[a]\nsize=256k\nnrfiles=2\nnumjobs=2\nfilename_format=f.$filenum\n").unwrap_err().to_string();
        assert!(m.ends_with("job.fio:5: option 'filename_format': filename_format=f.$filenum: without $jobnum the job's 2 clones (numjobs) name the same files, and fio 3.33 runs only the first of them (the others find the files done and do no I/O); add $jobnum to it, or give the files in filename= to share them"), "{m}");
        let j = job("[a]\nfilesize=64k\nnrfiles=4\n").unwrap();
        assert_eq!((j.args.size, j.args.fio.number_ios_per_job), (Some(SizeOrPercent::Bytes(64 << 10)), Some(64)));
        let j = job("[a]\nfilename=x:y\nsize=1m\n").unwrap();
        assert_eq!((j.args.size, j.args.fio.number_ios_per_job), (Some(SizeOrPercent::Bytes(512 << 10)), Some(256)));
        let e = |text: &str| job(text).unwrap_err().to_string();
        assert!(e("[a]\nsize=1m\nnrfiles=0\n").ends_with(
            "job.fio:3: option 'nrfiles': nrfiles=0 is not a number of files; use a whole number from 1 to 1024"
        ));
        let m = e("[a]\nsize=1000k\nnrfiles=3\n");
        assert!(m.ends_with("job.fio:2: option 'size': size=1000k does not split evenly over 3 files (fio makes its first files a block larger than the others); give a size that is a multiple of 3 blocks"), "{m}");
        let m = e("[a]\nfilename=x:y\nnrfiles=3\nsize=1m\n");
        assert!(m.ends_with("job.fio:3: [a]: nrfiles=3 with filename=x:y (line 2): fio takes the 2 files of filename's list (and splits size by a count that is not theirs); remove nrfiles"), "{m}");
        let m = e("[a]\nsize=1m\nnrfiles=2\nfile_service_type=random\n");
        assert!(m.ends_with("job.fio:4: option 'file_service_type': file_service_type=random: nvmebench takes a job's files in turn, one I/O each (fio's default roundrobin); write file_service_type=roundrobin, or remove it"), "{m}");
        assert!(job("[a]\nsize=1m\nfile_service_type=random\n").is_ok(), "one file: nothing to choose");
    }

    /// fio's loops repeat the job's size (and its number_ios, and its one pass); time_based
    /// ignores them; loops=0 is one pass, as fio takes it.
    #[test]
    fn loops_repeat_the_jobs_ios() {
        let job = |text: &str| plan_of(text, &[]).map(|p| p.groups[0][0].clone());
        let j = job("[a]\nioengine=null\nsize=1m\nloops=3\n").unwrap();
        assert_eq!(j.args.fio.number_ios_per_job, Some(768));
        let j = job("[a]\nioengine=null\nsize=1m\nnumber_ios=10\nloops=4\n").unwrap();
        assert_eq!(j.args.fio.number_ios_per_job, Some(40));
        let j = job("[a]\nfilename=/dev/null\nloops=2\n").unwrap();
        assert_eq!((j.one_pass.is_some(), j.loops), (true, 2), "the executor repeats the pass");
        let j = job("[a]\nioengine=null\nsize=1m\nloops=0\n").unwrap();
        assert_eq!(j.args.fio.number_ios_per_job, Some(256));
        let j = job("[a]\nioengine=null\ntime_based\nruntime=1\nloops=5\n").unwrap();
        assert_eq!(j.loops, 1, "a time_based job runs for its runtime");
        let e = job("[a]\nioengine=null\nsize=1m\nloops=two\n").unwrap_err().to_string();
        assert!(
            e.ends_with(
                "job.fio:4: option 'loops': loops=two is not a number of passes; write a whole number, like loops=2"
            ),
            "{e}"
        );
    }

    /// fio's offset_increment: a share is of the target, a whole number of blocks; every clone's
    /// working set on the target.
    #[test]
    fn offset_increment_gives_each_clone_its_own_working_set() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("oi.dat");
        std::fs::write(&f, vec![0u8; 1 << 20]).unwrap();
        let f = f.display();
        let resolve = |text: &str| {
            let p = plan_of(text, &[]).unwrap();
            crate::config::RunConfig::resolve(&p.groups[0][0].args).map_err(|e| e.to_string())
        };
        let c = resolve(&format!("[a]\nfilename={f}\nsize=25%\nnumjobs=4\noffset_increment=25%\n")).unwrap();
        assert_eq!((c.workload.range_bytes, c.workload.clone_step_bytes), (256 << 10, 256 << 10));
        let e = resolve(&format!("[a]\nfilename={f}\nsize=256k\nnumjobs=4\noffset_increment=300k\n")).unwrap_err();
        assert!(e.contains("the last of 4 workers' working sets ends at 1156k, past the end of"), "{e}");
        let e = resolve(&format!("[a]\nfilename={f}\nsize=4k\nnumjobs=2\noffset_increment=0.1%\n")).unwrap_err();
        assert!(e.contains("0.1% of 1m is 1048 bytes, not a multiple of the block size (4096)"), "{e}");
    }

    /// fio's batching options become the io_uring engines' knobs with fio's defaults and fix-ups;
    /// the sync engines and null take them without effect; libaio takes iodepth_batch_complete_max
    /// (its reap_max, fio's 1 unless written) and the others only at fio's defaults.
    #[test]
    fn batching_options_are_the_uring_engines_knobs() {
        let job = |text: &str| plan_of(text, &[]).map(|p| p.groups[0][0].args.engine.clone().unwrap_or_default());
        let base = "[a]\nsize=1m\niodepth=16\n";
        assert_eq!(
            job(&format!("{base}ioengine=io_uring\niodepth_batch=8\n")).unwrap(),
            "uring:fixedbufs=0,regfile=0,submit_batch=8,reap_batch=1,reap_max=1"
        );
        assert_eq!(
            job(&format!(
                "{base}ioengine=io_uring\niodepth_batch_complete=4\niodepth_batch_complete_max=64\niodepth_low=16\n"
            ))
            .unwrap(),
            "uring:fixedbufs=0,regfile=0,submit_batch=1,reap_batch=4,reap_max=16"
        );
        assert_eq!(job(&format!("{base}ioengine=libaio\niodepth_batch_submit=1\n")).unwrap(), "aio:reap_max=1");
        assert_eq!(
            job(&format!("{base}ioengine=libaio\n")).unwrap(),
            "aio:reap_max=1",
            "fio's libaio reaps 1 per call"
        );
        assert_eq!(job(&format!("{base}ioengine=libaio\niodepth_batch_complete_max=8\n")).unwrap(), "aio:reap_max=8");
        assert_eq!(job(&format!("{base}iodepth_batch=8\n")).unwrap(), "psync");
        let e = |text: &str| job(text).unwrap_err().to_string();
        let m = e(&format!("{base}ioengine=libaio\niodepth_batch=8\n"));
        assert!(m.ends_with("job.fio:5: option 'iodepth_batch': iodepth_batch=8: ioengine=libaio has no knob for fio's batching here (it submits each I/O as it is queued); remove it, or use ioengine=io_uring, whose submit_batch, reap_batch and reap_max take it"), "{m}");
        let m = e(&format!("{base}ioengine=io_uring\niodepth_low=4\n"));
        assert!(m.contains("job.fio:5: option 'iodepth_low': iodepth_low=4 lets the queue drain to 4"), "{m}");
        let m = e(&format!("{base}ioengine=io_uring\niodepth_batch_complete_min=0\n"));
        assert!(
            m.contains("job.fio:5: option 'iodepth_batch_complete_min': iodepth_batch_complete_min=0 has fio check"),
            "{m}"
        );
        let m = e(&format!("{base}ioengine=io_uring\niodepth_batch=many\n"));
        assert!(m.ends_with("job.fio:5: option 'iodepth_batch': iodepth_batch=many is not a number of I/Os; write a whole number, like iodepth_batch=8"), "{m}");
    }

    /// fio's shares of the target: an offset share rounded up to a block, a size share cut to what
    /// lies past the offset and down to a block.
    #[test]
    fn size_and_offset_shares_are_fios() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("p.dat");
        std::fs::write(&f, vec![0u8; 1000 << 10]).unwrap();
        let f = f.display();
        let range = |opts: &str| {
            let p = plan_of(&format!("[a]\nfilename={f}\nbs=4k\n{opts}"), &[]).unwrap();
            let c = crate::config::RunConfig::resolve(&p.groups[0][0].args).unwrap();
            (c.workload.range_start, c.workload.range_bytes)
        };
        assert_eq!(range("offset=33%\n"), (83 * 4096, (1000 << 10) - 83 * 4096), "337920 up to a block");
        assert_eq!(range("offset=60%\nsize=50%\n"), (150 * 4096, 100 * 4096), "what is left past 60%");
        assert_eq!(range("size=33%\n"), (0, 82 * 4096), "337920 down to a block");
    }

    /// wait_for=NAME is taken where starting after every job before is the same: NAME just before,
    /// alone in its group, and no job joining the waiting one's group (fio starts that one at once).
    #[test]
    fn wait_for_is_taken_where_it_is_a_stonewall() {
        let base = "[global]\nioengine=null\nsize=1m\n";
        let p = plan_of(&format!("{base}[w]\n[r]\nwait_for=w\n[w2]\nwait_for=r\n"), &[]).unwrap();
        let groups: Vec<Vec<&str>> = p.groups.iter().map(|g| g.iter().map(|j| j.name.as_str()).collect()).collect();
        assert_eq!(groups, [["w"], ["r"], ["w2"]]);
        let e = plan_of(&format!("{base}[a]\n[w]\n[r]\nwait_for=w\n"), &[]).unwrap_err().to_string();
        assert!(e.ends_with("job.fio:7: [r]: wait_for=w: nvmebench starts a job after all the jobs before it, which is fio's wait_for only when [w] is the job just before and runs alone; put [w] just before it with stonewall, or write stonewall instead"), "{e}");
        let e = plan_of(&format!("{base}[w]\n[r]\nwait_for=w\n[x]\n"), &[]).unwrap_err().to_string();
        assert!(e.ends_with("job.fio:7: section [x]: starts at once in fio, while [r] waits (wait_for=w, line 6), and here it would start with [r]; add stonewall, or wait_for"), "{e}");
    }

    #[test]
    fn flow_options_give_each_job_its_weight_flow_and_sleep() {
        let p = plan_of(
            "[global]\nioengine=null\nsize=1m\nflow_sleep=1000\n[a]\nflow=1\n[b]\nflow=8\nflow_id=2\nflow_sleep=0\n[c]\nflow=0\n[d]\nflow_id=3\n",
            &[],
        )
        .unwrap();
        let flows: Vec<Option<(u32, u32, u64)>> =
            p.groups[0].iter().map(|j| j.flow.as_ref().map(|f| (f.id, f.weight, f.sleep.as_micros() as u64))).collect();
        assert_eq!(
            flows,
            [Some((0, 1, 1000)), Some((2, 8, 0)), None, None],
            "flow=0, or none, is no flow (fio's default)"
        );
        let e = plan_of("[a]\nioengine=null\nsize=1m\nflow=1001\n", &[]).unwrap_err().to_string();
        assert!(e.ends_with("job.fio:4: option 'flow': flow=1001 is above fio's largest, 1000"), "{e}");
        let e = plan_of("[a]\nioengine=null\nsize=1m\nflow=-1\n", &[]).unwrap_err().to_string();
        assert!(e.ends_with("job.fio:4: option 'flow': flow=-1 is not a whole number; write it like flow=1"), "{e}");
    }

    #[test]
    fn a_flow_across_a_stonewall_is_refused_at_the_later_job() {
        let base = "[global]\nioengine=null\nsize=1m\n";
        let e = plan_of(&format!("{base}[a]\nflow=1\n[b]\nstonewall\nflow=2\n"), &[]).unwrap_err().to_string();
        assert!(
            e.ends_with("job.fio:8: [b]: flow=2 shares flow_id 0 with [a], which runs before it (a stonewall between them), and fio counts both weights from the start, so [a] stalls after its first I/Os; give it another flow_id, or run them together"),
            "{e}"
        );
        // Another flow_id, a job without a flow, or new_group (which runs together) are fine.
        plan_of(&format!("{base}[a]\nflow=1\n[b]\nstonewall\nflow=2\nflow_id=1\n"), &[]).unwrap();
        plan_of(&format!("{base}[a]\nflow=1\n[b]\nstonewall\n"), &[]).unwrap();
        plan_of(&format!("{base}[a]\nflow=1\n[b]\nnew_group\nflow=2\n"), &[]).unwrap();
    }

    #[test]
    fn command_line_engine_replaces_the_job_files() {
        let p =
            plan_of("[a]\nioengine=libaio\nfilename=/dev/null\ntime_based\nruntime=1\n", &["--engine=null"]).unwrap();
        assert_eq!(p.groups[0][0].args.engine.as_deref(), Some("null"));
    }

    /// Whether a job file may hold fio's option `name` (with the value 1): taken when nvmebench
    /// does not answer that it is not an option it takes (a refused value is still a taken option).
    fn takes(name: &str) -> bool {
        let r = plan_of(&format!("[j]\nioengine=null\nsize=1m\n{name}=1\n"), &[]);
        !matches!(&r, Err(e) if e.to_string().contains("is not a fio option nvmebench takes"))
    }

    /// docs/fio.md's table of fio's options holds every option of fio 3.33 that a job file may use
    /// here (`fio --cmdhelp=all`, and `--enghelp` of io_uring and libaio: fio-options.txt), and each
    /// name it lists, aliases included, is taken.
    #[test]
    fn the_guide_tables_every_fio_option_taken_and_no_other() {
        // Read when the test runs, not built in: the binary does not carry the guide.
        let guide = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/fio.md")).unwrap();
        let start = guide.find("## Every fio option taken").expect("docs/fio.md has the table");
        let table = &guide[start..];
        let table = &table[..table[3..].find("\n## ").map_or(table.len(), |e| e + 3)];
        // Rows marked "no" are options refused in a sentence of their own, naming what is nearest.
        let (mut listed, mut refused) = (std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
        for row in table.lines().filter(|l| l.starts_with("| `")) {
            let cells: Vec<&str> = row.split('|').collect();
            let names = cells[1].split('`').skip(1).step_by(2).map(str::to_string);
            if cells[2].trim() == "no" { refused.extend(names) } else { listed.extend(names) }
        }
        let names = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/fio/fio-options.txt")).unwrap();
        let missing: Vec<&str> =
            names.lines().filter(|n| takes(n) && !listed.contains(*n) && !refused.contains(*n)).collect();
        assert!(missing.is_empty(), "taken, and not in docs/fio.md's table: {missing:?}");
        let not_taken: Vec<&String> = listed.iter().filter(|n| !takes(n)).collect();
        assert!(not_taken.is_empty(), "in docs/fio.md's table, and not taken: {not_taken:?}");
    }
}

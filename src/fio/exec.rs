//! Running a job file's plan, and writing fio-shaped results (of a job file or of one command-line
//! run): fio's JSON document, fio's logs, the text report or nvmebench's own document.
//!
//! Every job is resolved before anything runs (so a bad job writes nothing). A group of one job
//! runs as `run` runs; the jobs of a larger group run as a suite runs its concurrent streams (one
//! start gate, one coordinator), each job on its own engine, files, pacing and end, as fio's jobs;
//! they share the start (startdelay) and ramp_time.

use super::plan::{self, Job, Plan};
use super::{FioError, ini, steady};
use crate::cli::{Percentiles, RunArgs};
use crate::config::{ConfigError, DEFAULT_ENGINE, RunConfig};
use crate::coordinator::{RunResult, RunWatch};
use crate::launch::SpdkRun;
use crate::options::OutputFormat;
use crate::report::diskstats as disk;
use crate::report::fio::{self as fio_report, DiskUtil, FioClone, FioJobSpec};
use crate::report::fio_output::{self, disk_of, write_logs, write_report};
use crate::report::{self, format_count, format_latency, live::LiveLine};
use crate::run::{Outcome, SetupError};
use crate::stats::Stats;
use crate::suite::exec::{self as suite_exec, Bench, Measurement, ResolvedStream, Timing};
use crate::suite::profile::Threads;
use crate::target::{self, RemoveOnDrop, TargetKind};
use crate::workload::flow::{Flow, FlowShare};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// One group's run.
struct GroupRun {
    jobs: Vec<(Job, RunConfig)>,
    result: RunResult,
    /// Per job: its workers' indices in `result.workers`.
    workers: Vec<Vec<usize>>,
    /// For groups run as concurrent streams: what `suite::exec::document` needs.
    measured: Option<Together>,
    /// The steady-state window of a job with `ss_dur` (alone in its group), for fio's JSON.
    steady: Option<Arc<Mutex<steady::Window>>>,
}

/// A group run as concurrent streams: its streams, timing, and each stream's threads and depth.
struct Together {
    streams: Vec<ResolvedStream>,
    timing: Timing,
    threads: Vec<usize>,
    qds: Vec<u32>,
}

/// Runs the job file at `path` with the command line's global flags `cli` (`given`: typed ones).
///
/// # Errors
/// A [`FioError`] or [`SetupError`] before anything ran; an I/O error writing the results.
pub fn run_job_file(path: &Path, cli: &RunArgs, given: &[String]) -> anyhow::Result<Outcome> {
    let sections = ini::parse(path, &|n| std::env::var(n).ok().or_else(|| fio_keyword(n))).map_err(FioError::from)?;
    let mut plan = plan::build(&sections, &cli.fio.section, cli, given)?;
    if cli.fio.fio_json() {
        for job in plan.groups.iter_mut().flatten() {
            if !job.percentile_list && !given.iter().any(|g| g == "percentiles") {
                job.args.percentiles = Percentiles(fio_report::FIO_PERCENTILES.to_vec());
            }
        }
    }
    let (groups, mut spdk) = resolve_all(&plan)?;
    crate::run::check_json_dir(cli.json.as_deref())?;
    for n in &plan.notes {
        eprintln!("nvmebench: note: {}: {n}", path.display());
    }
    let signal = crate::run::install_signal_handlers()?;
    let quiet = cli.quiet || cli.output == OutputFormat::Json || cli.fio.fio_json();
    let disk_before = groups.iter().flatten().find_map(|(_, c)| disk_of(c)).and_then(|d| disk::sample(&d));
    let mut runs: Vec<GroupRun> = Vec::new();
    for mut group in groups {
        // fio's startdelay counts from when the job's group starts (after the groups before it
        // finished), not from when the file was read.
        for (job, cfg) in &mut group {
            cfg.start_at = job.args.start_delay.map(|d| std::time::SystemTime::now() + d);
        }
        let scratch: Vec<RemoveOnDrop> = group
            .iter()
            .filter(|(_, c)| c.scratch)
            .filter_map(|(_, c)| c.target.as_ref().map(|t| RemoveOnDrop(t.path.clone())))
            .take(1)
            .collect();
        for (_, c) in &group {
            for t in c.targets.iter().filter(|t| t.kind == TargetKind::NewFile && !t.path.exists()) {
                target::prepare_file(t).map_err(|e| SetupError::Config(e.into()))?;
            }
        }
        let first = &group[0].1;
        let live = LiveLine::new(
            crate::run::live_mode(cli, quiet),
            crate::report::live::Plan { ramp: first.ramp, runtime: first.runtime },
        );
        let run = if group.len() == 1 && !flow_holds(&group) {
            // Checked when resolved (`check_steady`): a job with ss_dur runs alone in its group.
            let steady = steady_spec(&group[0].0).ok().flatten().map(|s| Arc::new(Mutex::new(steady::Window::new(s))));
            let watch = steady
                .clone()
                .map(|window| Box::new(steady::Watch { window, ramp_time: group[0].1.ramp }) as Box<dyn RunWatch>);
            let result = crate::run::execute_watched(&group[0].1, spdk.as_ref(), signal.clone(), &live, None, watch)?;
            crate::run::save_verify_state(&group[0].1, &result)?;
            let workers = vec![(0..result.workers.len()).collect()];
            GroupRun { jobs: group, result, workers, measured: None, steady }
        } else {
            let exits = exit_ends(&group, exitall(&plan), None)?;
            run_together(group, &exits, &mut spdk, signal.clone(), &live)?
        };
        live.finish();
        drop(scratch);
        let stop = run.result.interrupted_by.is_some() || run.result.failure.is_some();
        runs.push(run);
        if stop {
            break;
        }
    }
    let disks: Vec<DiskUtil> = match (&disk_before, runs.first().and_then(|r| disk_of(&r.jobs[0].1))) {
        (Some(b), Some(d)) => disk::sample(&d).map(|a| disk::between(b, &a)).into_iter().collect(),
        _ => Vec::new(),
    };
    write_results(path, cli, &plan, &runs, &disks)?;
    for r in &runs {
        // fio's document has no place for these; the exit status alone would not say why.
        if let Some(f) = &r.result.failure {
            eprintln!("nvmebench: [{}]: the run failed: {f}; results are partial", r.jobs[0].0.name);
        }
        if r.result.error_count() > 0 {
            eprintln!("nvmebench: [{}]: {} I/O errors", r.jobs[0].0.name, r.result.error_count());
        }
        if let Some(v) = r.result.verify.as_ref().filter(|_| r.result.verify_failed()) {
            eprintln!(
                "nvmebench: [{}]: verify found {} mismatches (data that is not what was written) and {} reads that failed",
                r.jobs[0].0.name, v.mismatch_count, v.read_errors
            );
        }
    }
    let interrupted = runs.iter().find_map(|r| r.result.interrupted_by);
    // A verify that found damage fails the job file as it fails a run (fio ends with an error).
    let failed = runs.iter().any(|r| r.result.failed() || r.result.verify_failed());
    Ok(match (interrupted, failed) {
        (Some(sig), _) => Outcome::Interrupted(sig),
        (None, true) => Outcome::IoErrors,
        (None, false) => Outcome::Clean,
    })
}

/// fio's own `$` keywords, for names the environment does not set (public for the fuzz tests,
/// which look variables up as `run` does).
pub fn fio_keyword(name: &str) -> Option<String> {
    match name {
        // fio's $ncpus is the online CPUs (sysconf), whatever this process's affinity.
        "ncpus" => crate::report::json::online_cpus().map(|n| n.to_string()),
        // The kernel's page size, as the memory map reports it (no unsafe sysconf outside engines).
        "pagesize" => std::fs::read_to_string("/proc/self/smaps").ok().and_then(|m| {
            let kib: u64 =
                m.lines().find(|l| l.starts_with("KernelPageSize:"))?.split_whitespace().nth(1)?.parse().ok()?;
            Some((kib * 1024).to_string())
        }),
        "mb_memory" => std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
            let kib: u64 = m.lines().find(|l| l.starts_with("MemTotal:"))?.split_whitespace().nth(1)?.parse().ok()?;
            Some((kib / 1024).to_string())
        }),
        _ => None,
    }
}

type Resolved = (Vec<Vec<(Job, RunConfig)>>, Option<SpdkRun>);

/// Resolves every job; SPDK attaches once, at the first job that uses it, and later jobs run on the
/// namespaces it attached.
fn resolve_all(plan: &Plan) -> Result<Resolved, FioError> {
    let mut spdk: Option<SpdkRun> = None;
    let mut attached: Option<Vec<crate::target::Target>> = None;
    let mut groups = Vec::new();
    let exitall = exitall(plan);
    for (g, group) in plan.groups.iter().enumerate() {
        let mut resolved = Vec::new();
        for job in group {
            // Refusals of options are named as the job file writes them, at the line at fault.
            let err = |e: ConfigError| match e {
                ConfigError::Clash(c) => job.sources.refusal(&job.name, &job.at, &c),
                ConfigError::Fault(f) => job.sources.fault(&job.name, &job.at, &f),
                e => FioError::Section { at: job.at.clone(), name: job.name.clone(), message: e.to_string() },
            };
            let engine = job.args.engine.as_deref().unwrap_or(DEFAULT_ENGINE);
            check_no_device(job, engine)?;
            let cfg = match &attached {
                Some(t) if engine.starts_with("spdk") => {
                    let t = t.clone();
                    RunConfig::resolve_with(&job.args, engine, Some(&mut |_: &[usize]| Ok(t.clone()))).map_err(err)?
                }
                _ => {
                    let (cfg, s) = crate::run::resolve(&job.args, engine).map_err(|e| match e {
                        SetupError::Config(c) => err(c),
                        e => FioError::Section { at: job.at.clone(), name: job.name.clone(), message: e.to_string() },
                    })?;
                    if s.is_some() {
                        attached = Some(cfg.targets.clone());
                        spdk = s;
                    }
                    cfg
                }
            };
            let cfg = with_one_pass(job, cfg);
            check_flow(job, &cfg)?;
            resolved.push((job.clone(), cfg));
        }
        check_together(&resolved)?;
        check_flow_steady(&resolved)?;
        for (job, cfg) in &resolved {
            check_steady(job, cfg, &resolved)?;
            check_latency_alone(job, cfg, &resolved)?;
        }
        exit_ends(&resolved, exitall, plan.groups.get(g + 1).and_then(|n| n.first()))?;
        groups.push(resolved);
    }
    number_dedupe_threads(&mut groups);
    Ok((groups, spdk))
}

/// fio's steadystate.fio reads /dev/zero and writes /dev/null: I/O that reaches no device, which
/// is the null engine here (the target check would only say "character device").
fn check_no_device(job: &Job, engine: &str) -> Result<(), FioError> {
    let Some(dev) = job.args.filename.iter().find(|p| p.as_os_str() == "/dev/null" || p.as_os_str() == "/dev/zero")
    else {
        return Ok(());
    };
    if engine.starts_with("null") || engine.starts_with("spdk") {
        return Ok(());
    }
    let message = format!(
        "{} is a character device, which nvmebench does not open (it runs on files and block devices); for I/O that reaches no device use ioengine=null with size=, or name a file",
        dev.display()
    );
    Err(match job.sources.at("filename") {
        Some(at) => FioError::Option { at: at.clone(), key: "filename".into(), message },
        None => FioError::Section { at: job.at.clone(), name: job.name.clone(), message },
    })
}

/// fio numbers the threads of a job file from its first job's first clone, and a shared dedupe
/// working set (`dedupe_global`) takes blocks from every one of them: each job learns the number of
/// its group's first thread (its workers count on from there, in the group's job order) and how
/// many the file has.
fn number_dedupe_threads(groups: &mut [Vec<(Job, RunConfig)>]) {
    let total: usize = groups.iter().flatten().map(|(_, c)| c.cores.len()).sum();
    let mut base = 0;
    for group in groups.iter_mut() {
        for (_, cfg) in group.iter_mut() {
            cfg.workload.buffers.dedupe_thread_base = base;
            cfg.workload.buffers.dedupe_threads = total;
        }
        base += group.iter().map(|(_, c)| c.cores.len()).sum::<usize>();
    }
}

/// A job that ends after one pass over its working set (fio's end without `time_based` or a size
/// in bytes) gets its I/O count from the resolved working set, on every target (fio's job moves the
/// sizes of all its files), per job; without `runtime` the pass alone ends it.
fn with_one_pass(job: &Job, mut cfg: RunConfig) -> RunConfig {
    if let Some(mean_bs) = job.one_pass {
        // fio's io_size=N% moves that share of each file's working set.
        let share = cfg.workload.range_bytes * job.pass_percent / 100;
        let bytes = share as f64 * cfg.targets.len().max(1) as f64;
        if job.pass_in_bytes {
            // Sizes that vary: the pass is its bytes, as fio counts them (number_ios, already
            // the run's I/O count, may still end it earlier); fio's loops repeat both.
            cfg.io_bytes_per_job = Some((bytes as u64).saturating_mul(job.loops));
            cfg.ios = cfg.ios.map(|n| n.saturating_mul(job.loops));
        } else {
            let per_job = ((bytes / mean_bs).floor() as u64).max(1);
            let pass = per_job.saturating_mul(cfg.cores.len() as u64);
            // number_ios (already the run's I/O count) only ends the job earlier; fio's loops
            // repeat both.
            cfg.ios = Some(cfg.ios.map_or(pass, |n| n.min(pass)).saturating_mul(job.loops));
        }
        if job.args.time.is_none() {
            cfg.runtime = None;
        }
    }
    cfg
}

/// Whether the group's flow control can hold a worker back: a flow with two workers or more (a
/// job's clones count one each, as fio's do). A lone job alone in its flow is never held back, and
/// runs as `run` runs; otherwise the group runs as streams, whose workers share the flow.
fn flow_holds(group: &[(Job, RunConfig)]) -> bool {
    group.iter().filter_map(|(j, _)| j.flow.as_ref()).any(|f| flow_workers(group, f.id) > 1)
}

/// The workers of the group's flow `id` (one per clone of each job in it).
fn flow_workers(group: &[(Job, RunConfig)], id: u32) -> usize {
    group.iter().filter(|(j, _)| j.flow.as_ref().is_some_and(|f| f.id == id)).map(|(_, c)| c.cores.len().max(1)).sum()
}

/// fio counts a job's I/Os over all its files in one place; here each file of a job is driven on
/// its own (a lane of the job's worker), so a job with a flow has one file.
fn check_flow(job: &Job, cfg: &RunConfig) -> Result<(), FioError> {
    match &job.flow {
        Some(f) if cfg.targets.len() > 1 => Err(FioError::Options {
            at: f.at.clone(),
            job: job.name.clone(),
            message: format!(
                "flow={} on a job of {} files: fio counts the job's I/Os over all of them in one place, and nvmebench drives each file of a job on its own; give the job one file, or remove flow",
                f.weight,
                cfg.targets.len()
            ),
        }),
        _ => Ok(()),
    }
}

/// A lone job whose clones share a flow runs as streams (`flow_holds`), which have no steady-state
/// watch; fio would stop it once steady, so it is refused.
fn check_flow_steady(group: &[(Job, RunConfig)]) -> Result<(), FioError> {
    let [(job, _)] = group else { return Ok(()) };
    match &job.flow {
        Some(f) if flow_holds(group) && steady_spec(job)?.is_some() => Err(FioError::Options {
            at: f.at.clone(),
            job: job.name.clone(),
            message: format!(
                "flow={} between the job's {} clones, with steady state (ss): nvmebench runs clones that share a flow as streams, which do not stop once steady as fio would; remove flow or ss",
                f.weight,
                job.clones()
            ),
        }),
        _ => Ok(()),
    }
}

/// Jobs of one group run as one coordinated run (one start gate, one coordinator): they must
/// agree on what that run shares. Each job has its own engine and its own way to its target
/// (fio's ioengine, direct), its own pacing (rate, thinktime) and its own end (its I/O count, its
/// runtime, or the exitall of another), as in fio. A job alone in its group runs as `run` runs.
fn check_together(group: &[(Job, RunConfig)]) -> Result<(), FioError> {
    let Some(((first, a), rest)) = group.split_first().filter(|(_, rest)| !rest.is_empty()) else { return Ok(()) };
    for (job, b) in rest {
        let differ = |what: &str| FioError::Section {
            at: job.at.clone(),
            name: job.name.clone(),
            message: format!(
                "runs together with [{}] but differs in {what}; make them equal, or add stonewall to run it after",
                first.name
            ),
        };
        // SPDK attaches its controllers for the whole run and its workers poll them on cores of
        // their own; beside a kernel engine the run would have two ways to one target.
        if a.engine != b.engine && (a.engine.is_spdk() || b.engine.is_spdk()) {
            return Err(differ("ioengine (spdk runs together only with spdk jobs here)"));
        }
        // One timeline for the group's intervals: its measured part starts for every job at once.
        if a.ramp != b.ramp {
            return Err(differ("ramp_time (jobs that run together share one here)"));
        }
        if first.args.start_delay != job.args.start_delay {
            return Err(differ("startdelay (jobs that run together start together here)"));
        }
        // The command line's total --rate-iops, shared over the group's workers.
        if a.rate_iops.is_some() != b.rate_iops.is_some() {
            return Err(differ("pacing (rate_iops on one and not the other)"));
        }
    }
    Ok(())
}

/// Whether any job says `exitall`: fio then applies every job's `exit_what` (options.c's
/// `str_exitall_cb` sets one switch for the whole run).
fn exitall(plan: &Plan) -> bool {
    plan.groups.iter().flatten().any(|j| j.args.fio.exitall == Some(true))
}

/// Per job of a group that runs together, whether its end ends the run, as fio's exitall ends the
/// jobs its `exit_what` names (libfio.c's `fio_terminate_threads`): `group`, the jobs of its
/// reporting group; `stonewall`, every job running; `all`, those and every job after them. A job
/// that is stopped ends too, and stops what its own `exit_what` names. The run here ends all its
/// jobs at once, so a job whose end would stop some of the others and not the rest is refused, and
/// so is `all` with jobs after the group (fio writes those as zeros, never run).
fn exit_ends(group: &[(Job, RunConfig)], exitall: bool, next: Option<&Job>) -> Result<Vec<bool>, FioError> {
    if !exitall {
        return Ok(vec![false; group.len()]);
    }
    let what = |j: &Job| j.args.fio.exit_what.clone().unwrap_or_else(|| "group".into());
    let stops =
        |j: usize, k: usize| k != j && (what(&group[j].0) != "group" || group[k].0.group_id == group[j].0.group_id);
    let mut ends = Vec::with_capacity(group.len());
    for (j, (job, _)) in group.iter().enumerate() {
        if let Some(next) = next.filter(|_| what(job) == "all") {
            return Err(FioError::Section {
                at: job.at.clone(),
                name: job.name.clone(),
                message: format!(
                    "has exit_what=all under exitall, so fio never starts [{}] and the jobs after it, and writes them as zeros; move [{}] and the jobs after it to a file of their own, or use exit_what=stonewall",
                    next.name, next.name
                ),
            });
        }
        // The jobs its end stops, and those their ends stop in turn.
        let mut stopped: Vec<bool> = (0..group.len()).map(|k| stops(j, k)).collect();
        loop {
            let more: Vec<usize> = (0..group.len())
                .filter(|&k| !stopped[k] && k != j && (0..group.len()).any(|i| stopped[i] && stops(i, k)))
                .collect();
            if more.is_empty() {
                break;
            }
            more.into_iter().for_each(|k| stopped[k] = true);
        }
        let n = stopped.iter().filter(|&&s| s).count();
        if n > 0 && n + 1 < group.len() {
            let (left, _) =
                group.iter().enumerate().find(|&(k, _)| k != j && !stopped[k]).map(|(_, x)| x).expect("one is left");
            return Err(FioError::Section {
                at: job.at.clone(),
                name: job.name.clone(),
                message: format!(
                    "ends under exitall with exit_what={}, which in fio stops some of the jobs that run with it but not [{}]; jobs that run together here end together, so run [{}] apart with stonewall, or use exit_what=stonewall",
                    what(job),
                    left.name,
                    left.name
                ),
            });
        }
        ends.push(n > 0);
    }
    Ok(ends)
}

/// A job's steady-state rule: fio's `ss` (or its default) over `ss_dur`, after `ss_ramp`; `None`
/// without an `ss_dur` (fio's default 0: no steady state, whatever `ss` says).
fn steady_spec(job: &Job) -> Result<Option<steady::Spec>, FioError> {
    let f = &job.args.fio;
    let Some(dur) = f.ss_dur.filter(|d| !d.is_zero()) else { return Ok(None) };
    let ss = f.ss.as_deref().unwrap_or(steady::FIO_DEFAULT_SS);
    steady::Spec::parse(ss, dur, f.ss_ramp.unwrap_or_default()).map(Some).map_err(|message| FioError::Section {
        at: job.at.clone(),
        name: job.name.clone(),
        message,
    })
}

/// fio judges a job's steady state on its own per-second samples, and stops only that job (with
/// group_reporting, its reporting group's jobs; without it, each clone apart). Here the samples
/// are the run's one-second intervals, and the run stops as a whole: so the job runs alone in its
/// group, its clones are judged together as group_reporting judges them, and the interval is 1 s.
fn check_steady(job: &Job, cfg: &RunConfig, group: &[(Job, RunConfig)]) -> Result<(), FioError> {
    if steady_spec(job)?.is_none() {
        return Ok(());
    }
    let refuse = |message: String| Err(FioError::Section { at: job.at.clone(), name: job.name.clone(), message });
    if let Some((other, _)) = group.iter().find(|(o, _)| o.name != job.name || o.at != job.at) {
        return refuse(format!(
            "has ss_dur and runs together with [{}]: fio stops only the steady job, and jobs that run together here end together; add stonewall to run it alone",
            other.name
        ));
    }
    if job.clones() > 1 && !job.args.fio.group_reporting.unwrap_or(false) {
        return refuse(format!(
            "has ss_dur and numjobs={} without group_reporting: fio judges and stops each clone apart, and nvmebench judges the job's clones together; add group_reporting, or numjobs=1",
            job.clones()
        ));
    }
    if cfg.interval != std::time::Duration::from_secs(1) {
        return refuse(format!(
            "has ss_dur, whose samples are one second each as in fio, and the run's interval is {:?} (log_avg_msec or --interval); drop it to keep 1 s",
            cfg.interval
        ));
    }
    Ok(())
}

/// fio's latency target moves one job's depth, judged on that job's own I/Os; jobs that run
/// together here run as one run's streams, whose workers keep their depth. So such a job runs
/// alone in its group.
fn check_latency_alone(job: &Job, cfg: &RunConfig, group: &[(Job, RunConfig)]) -> Result<(), FioError> {
    if cfg.latency_target.is_none() {
        return Ok(());
    }
    match group.iter().find(|(o, _)| o.name != job.name || o.at != job.at) {
        Some((other, _)) => Err(FioError::Section {
            at: job.at.clone(),
            name: job.name.clone(),
            message: format!(
                "has latency_target and runs together with [{}]: fio searches this job's depth on its own I/Os, and jobs that run together here keep theirs; add stonewall to run it alone",
                other.name
            ),
        }),
        None => Ok(()),
    }
}

/// Runs a group's jobs together, as a suite runs a step's streams.
fn run_together(
    group: Vec<(Job, RunConfig)>,
    exits: &[bool],
    spdk: &mut Option<SpdkRun>,
    signal: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    live: &LiveLine,
) -> anyhow::Result<GroupRun> {
    let first = &group[0].1;
    // One flow per flow_id of the group with two workers or more, made before any worker joins
    // it; a worker alone in its flow is never held back, and keeps the loop's plain paths.
    let mut flows: Vec<(u32, std::sync::Arc<Flow>)> = Vec::new();
    for f in group.iter().filter_map(|(j, _)| j.flow.as_ref()) {
        if flow_workers(&group, f.id) > 1 && !flows.iter().any(|(id, _)| *id == f.id) {
            flows.push((f.id, Flow::new()));
        }
    }
    let streams: Vec<ResolvedStream> = group
        .iter()
        .map(|(j, c)| ResolvedStream {
            name: j.name.clone(),
            cfg: c.clone(),
            threads: Threads::Count(c.cores.len()),
            qd: Some(c.queue_depth),
            // Each job moves its own size (or number_ios), as fio's jobs do, and ends at its own
            // runtime; with neither it runs until the exitall of another ends it.
            ios: c.ios,
            runtime: c.runtime,
            flow: j.flow.as_ref().and_then(|f| {
                let (_, flow) = flows.iter().find(|(id, _)| *id == f.id)?;
                Some(FlowShare { flow: flow.clone(), weight: f.weight, sleep: f.sleep })
            }),
        })
        .collect();
    let cores: Vec<usize> = group.iter().flat_map(|(_, c)| c.cores.iter().copied()).collect();
    let rates: Option<Vec<f64>> = first.rate_iops.map(|_| {
        group
            .iter()
            .flat_map(|(_, c)| {
                let n = c.cores.len();
                std::iter::repeat_n(c.rate_iops.unwrap_or(0.0) / n as f64, n)
            })
            .collect()
    });
    let timing = Timing {
        ramp: first.ramp,
        // The group's runtime where its jobs share one; else each stream has its own (above).
        runtime: if group.iter().all(|(_, c)| c.runtime == first.runtime) { first.runtime } else { None },
        // Every stream has its own count (`ios` above); this is the group's, for its document.
        ios: group.iter().map(|(_, c)| c.ios).sum(),
    };
    let bench = Bench {
        // Every job's files, each once; each job's workers drive only their own (`measure`).
        target_paths: if first.engine.is_spdk() {
            Vec::new()
        } else {
            let mut paths: Vec<std::path::PathBuf> = Vec::new();
            for t in group.iter().flat_map(|(_, c)| &c.targets) {
                if !paths.contains(&t.path) {
                    paths.push(t.path.clone());
                }
            }
            paths
        },
        cores,
        signal,
        interval: first.interval,
        seed: first.workload.seed,
        spdk: spdk.take(),
        // The group's startdelay, which its jobs share (`check_together`).
        start_at: first.start_at,
        exit_streams: exits.to_vec(),
    };
    let m = suite_exec::measure(&bench, &streams, 1, first.queue_depth, timing, rates.as_deref(), |p| live.update(p));
    *spdk = bench.spdk;
    let Measurement { result, stream_workers, threads, qds } = m.map_err(anyhow::Error::from)?;
    Ok(GroupRun {
        jobs: group,
        result,
        workers: stream_workers.clone(),
        measured: Some(Together { streams, timing, threads, qds }),
        steady: None,
    })
}

/// A job's workers' figures summed, and its longest worker's measured time (for the text report).
fn job_stats(r: &RunResult, workers: &[usize]) -> (Stats, u64) {
    let mut s = Stats::default();
    let mut elapsed = 0;
    for &w in workers {
        s += &r.workers[w].stats;
        elapsed = elapsed.max(r.workers[w].summary.as_ref().map_or(0, |x| x.measured_ns));
    }
    (s, if elapsed == 0 { r.elapsed_ns } else { elapsed })
}

fn write_results(path: &Path, cli: &RunArgs, plan: &Plan, runs: &[GroupRun], disks: &[DiskUtil]) -> anyhow::Result<()> {
    let clock = crate::run::clock_source();
    // Every job's clones (worker threads), in fio's thread order: the file's jobs, each job's
    // clones in turn; a job is its index over the file's jobs that ran.
    let clones: Vec<Vec<FioClone<'_>>> = runs
        .iter()
        .flat_map(|r| r.workers.iter().map(move |lanes| (&r.result, lanes)))
        .enumerate()
        .map(|(job, (result, lanes))| fio_output::clones_of(result, lanes, job))
        .collect();
    // fio's logs: one per job clone, each its own worker thread's series.
    for ((job, cfg), clones) in runs.iter().flat_map(|r| &r.jobs).zip(&clones) {
        write_logs(&job.args, cfg, job.number, &job.name, clones)?;
    }
    let own = || -> Value {
        let docs: Vec<crate::report::doc::RunDocument> = runs
            .iter()
            .map(|r| {
                let label = r.jobs.iter().map(|(j, _)| format!("[{}]", j.name)).collect::<Vec<_>>().join(" ");
                match &r.measured {
                    Some(Together { streams, timing, threads, qds }) => {
                        let m = Measurement {
                            result: clone_shape(&r.result),
                            stream_workers: r.workers.clone(),
                            threads: threads.clone(),
                            qds: qds.clone(),
                        };
                        suite_exec::document(&label, streams, &m, *timing)
                    }
                    None => {
                        let mut d = report::json::document(&r.jobs[0].1, &r.result, clock);
                        d.label = Some(label);
                        d
                    }
                }
            })
            .collect();
        json!({ "schema_version": crate::report::doc::SCHEMA_VERSION, "job_file": path.display().to_string(), "notes": plan.notes, "runs": docs })
    };
    if let Some(p) = &cli.json {
        let text = serde_json::to_string_pretty(&own()).expect("a JSON value always serialises");
        std::fs::write(p, text + "\n").map_err(|e| anyhow::anyhow!("cannot write {}: {e}", p.display()))?;
    }
    let out = if cli.fio.fio_json() {
        let started = runs.first().map_or(std::time::SystemTime::now(), |r| r.result.started_at);
        let specs: Vec<FioJobSpec<'_>> = runs
            .iter()
            .flat_map(|r| &r.jobs)
            .map(|(job, cfg)| FioJobSpec {
                name: &job.name,
                group_id: job.group_id,
                group_reporting: job.args.fio.group_reporting.unwrap_or(false),
                options: &job.options,
                cfg,
                lat_percentiles: job.args.fio.lat_percentiles.unwrap_or(false),
                latencies: job.args.fio.fio_latencies(),
            })
            .collect();
        let threads: Vec<FioClone<'_>> = clones.into_iter().flatten().collect();
        let jobs = fio_report::entries(&specs, &threads);
        let plus = cli.fio.output_format.as_deref() == Some("json+");
        let mut doc = fio_report::render(&plan.globals, &jobs, disks, plus, started);
        add_steady_states(&mut doc, runs);
        serde_json::to_string_pretty(&doc).expect("a JSON value always serialises") + "\n"
    } else if cli.output == OutputFormat::Json {
        serde_json::to_string_pretty(&own()).expect("a JSON value always serialises") + "\n"
    } else {
        let mut out = String::new();
        for (g, r) in runs.iter().enumerate() {
            let names = r.jobs.iter().map(|(j, _)| format!("[{}]", j.name)).collect::<Vec<_>>().join(" ");
            let _ = writeln!(out, "== group {g}: {names}");
            if r.jobs.len() == 1 {
                out.push_str(&report::text::render(&r.jobs[0].1, &r.result, clock, report::text::Width::Compact));
            } else {
                for ((job, _), lanes) in r.jobs.iter().zip(&r.workers) {
                    let (s, ns) = &job_stats(&r.result, lanes);
                    for (dir, d) in crate::io::Direction::ALL.map(|d| (d.label(), s.of(d))) {
                        if d.ios == 0 {
                            continue;
                        }
                        let (iops, bw) = report::rates(d, *ns);
                        let _ = writeln!(
                            out,
                            "[{}] {dir}: {} IOPS, {}B/s, mean {}, p99 {}, max {}",
                            job.name,
                            format_count(iops),
                            format_count(bw),
                            format_latency(d.mean_ns()),
                            format_latency(d.percentile_ns(99.0) as f64),
                            format_latency(d.max_ns as f64)
                        );
                    }
                }
            }
            out.push('\n');
        }
        out
    };
    write_report(&cli.fio, &out)
}

/// fio's `steadystate` object in the entry of each job with `ss_dur` (its group's one entry with
/// group_reporting, or its own: the job runs alone in its group).
fn add_steady_states(doc: &mut Value, runs: &[GroupRun]) {
    let Some(entries) = doc.get_mut("jobs").and_then(Value::as_array_mut) else { return };
    for r in runs {
        let (Some(window), Some((job, _))) = (&r.steady, r.jobs.first()) else { continue };
        let ss = window.lock().expect("the window's lock is never held across a panic").json();
        for e in entries.iter_mut().filter(|e| e["jobname"] == job.name.as_str() && e["groupid"] == job.group_id) {
            if let Some(o) = e.as_object_mut() {
                o.insert("steadystate".into(), ss.clone());
            }
        }
    }
}

/// A copy of what `suite::exec::document` reads from a result (it takes a `Measurement` by value).
fn clone_shape(r: &RunResult) -> RunResult {
    RunResult {
        engine: r.engine.clone(),
        workers: r.workers.clone(),
        targets: r.targets.clone(),
        total: r.total.clone(),
        elapsed_ns: r.elapsed_ns,
        intervals: r.intervals.clone(),
        threads: r.threads.clone(),
        // The logs are written from the run itself.
        io_logs: Vec::new(),
        interrupted_by: r.interrupted_by,
        failure: None,
        started_at: r.started_at,
        verify: None,
        placement: r.placement.clone(),
        // Job files sample no drive telemetry yet.
        telemetry: None,
        cpu: r.cpu,
        cost: r.cost.clone(),
        events: r.events.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds and resolves the job file `text` with the command line's `flags` (`--engine=uring`).
    fn resolved(text: &str, flags: &[&str]) -> Result<(), FioError> {
        configs(text, flags).map(|_| ())
    }

    /// The resolved jobs of the job file `text`, by group, with the command line's `flags`.
    fn configs(text: &str, flags: &[&str]) -> Result<Vec<Vec<(Job, RunConfig)>>, FioError> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("job.fio");
        std::fs::write(&p, text).unwrap();
        let sections = ini::parse(&p, &|_| None).unwrap();
        let argv = ["nvmebench", "run"].iter().chain(flags);
        let crate::cli::Command::Run(cli) = <crate::cli::Cli as clap::Parser>::parse_from(argv).command else {
            unreachable!("the arguments start with `run`")
        };
        let given: Vec<String> =
            flags.iter().map(|f| f.trim_start_matches("--").split('=').next().unwrap().replace('-', "_")).collect();
        resolve_all(&plan::build(&sections, &[], &cli, &given)?).map(|(groups, _)| groups)
    }

    /// Jobs that run together start together: a startdelay they share is the group's; one that
    /// differs is refused, where it was dropped.
    #[test]
    fn startdelay_of_jobs_that_run_together_is_the_groups_or_refused() {
        let base = "[global]\nioengine=null\ntime_based\nruntime=1\n";
        let g = configs(&format!("{base}startdelay=2\n[a]\n[b]\n"), &[]).unwrap();
        assert!(g[0].iter().all(|(j, _)| j.args.start_delay == Some(std::time::Duration::from_secs(2))));
        let e = resolved(&format!("{base}[a]\n[b]\nstartdelay=2\n"), &[]).unwrap_err().to_string();
        assert!(
            e.ends_with("job.fio:6: section [b]: runs together with [a] but differs in startdelay (jobs that run together start together here); make them equal, or add stonewall to run it after"),
            "{e}"
        );
        assert!(resolved(&format!("{base}[a]\n[b]\nstonewall\nstartdelay=2\n"), &[]).is_ok());
    }

    /// Jobs that run together each keep their own files and their own I/O count (fio's aio-read.fio:
    /// four jobs, four files), however many files each has.
    #[test]
    fn jobs_that_run_together_keep_their_own_files_and_counts() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display();
        let base = format!("[global]\nioengine=psync\nbs=4k\nsize=64k\ndirectory={d}\n");
        let g = configs(&format!("{base}[a]\n[b]\nsize=32k\n[c]\nfilename=x\n"), &[]).unwrap();
        let got: Vec<(String, Option<u64>)> =
            g[0].iter().map(|(_, c)| (c.targets[0].path.display().to_string(), c.ios)).collect();
        let want = [(format!("{d}/a.0.0"), Some(16)), (format!("{d}/b.0.0"), Some(8)), (format!("{d}/x"), Some(16))];
        assert_eq!(got, want);
        // Each its own number of files too (fio's size is a job's bytes over all its files).
        let g = configs(&format!("{base}[a]\n[b]\nfilename=x:y\n"), &[]).unwrap();
        let files: Vec<(usize, Option<u64>)> = g[0].iter().map(|(_, c)| (c.targets.len(), c.ios)).collect();
        assert_eq!(files, [(1, Some(16)), (2, Some(16))]);
    }

    /// Jobs that run together each keep their own engine, way to their target, pacing and end, as
    /// fio's do (exitwhat.fio: a sync job with a think time and number_ios beside paced libaio
    /// jobs): each resolves as it would alone. What the run shares (ramp_time, startdelay) and SPDK
    /// beside a kernel engine stay refused.
    #[test]
    fn jobs_that_run_together_keep_their_own_engine_pacing_and_end() {
        let dir = tempfile::tempdir().unwrap();
        let base = format!("[global]\nbs=4k\nsize=64k\ndirectory={}\n", dir.path().display());
        let jobs = "[a]\nioengine=sync\nthinktime=2000\nnumber_ios=10\n\
                    [b]\nioengine=libaio\ndirect=1\niodepth=8\nrw=randrw\nrate=300,600\n\
                    [c]\nioengine=io_uring\ndirect=1\ntime_based\nruntime=2\nrate_iops=50\n\
                    [d]\nruntime=1\n";
        let g = configs(&format!("{base}{jobs}"), &[]).unwrap();
        assert_eq!(g.len(), 1, "one group: they run together");
        let ms = std::time::Duration::from_millis;
        let got: Vec<_> = g[0]
            .iter()
            .map(|(j, c)| (j.name.as_str(), c.engine.name(), c.buffered, c.ios, c.runtime, c.workload.pacing.is_set()))
            .collect();
        let want = [
            ("a", "psync", true, Some(10), None, true),
            ("b", "aio", false, Some(16), None, true),
            ("c", "uring", false, None, Some(ms(2000)), true),
            ("d", "psync", true, Some(16), Some(ms(1000)), false),
        ];
        assert_eq!(got, want);
        let (a, b) = (&g[0][0].1.workload.pacing, &g[0][1].1.workload.pacing);
        assert_ne!(a, b, "each its own pacing");
        // What the run shares.
        let e = resolved(&format!("{base}[a]\n[b]\nramp_time=1\n"), &[]).unwrap_err().to_string();
        assert!(e.contains("job.fio:6: section [b]: runs together with [a] but differs in ramp_time (jobs that run together share one here); make them equal, or add stonewall to run it after"), "{e}");
        // SPDK attaches for the whole run: beside a kernel engine, refused in one sentence.
        let mut g = configs(&format!("{base}ioengine=null\n[a]\n[b]\n"), &[]).unwrap();
        g[0][1].1.engine = crate::config::EngineSpec::Spdk(crate::config::SpdkMode::Polled);
        let e = check_together(&g[0]).unwrap_err().to_string();
        assert!(e.contains("section [b]: runs together with [a] but differs in ioengine (spdk runs together only with spdk jobs here)"), "{e}");
        g[0][0].1.engine = crate::config::EngineSpec::Spdk(crate::config::SpdkMode::Polled);
        assert!(check_together(&g[0]).is_ok(), "spdk beside spdk");
    }

    /// fio's ss_dur stops the steady job alone, each clone apart without group_reporting, on
    /// one-second samples: where nvmebench cannot do the same it refuses, in one sentence.
    #[test]
    fn steady_state_runs_where_it_means_what_fio_means() {
        let base = "[global]\nioengine=null\ntime_based\nruntime=5\n";
        let g = configs(&format!("{base}[a]\nss=iops:10%\nss_dur=3\nss_ramp=1\n"), &[]).unwrap();
        let spec = steady_spec(&g[0][0].0).unwrap().unwrap();
        assert_eq!((spec.dur_s, spec.ramp, spec.limit), (3, std::time::Duration::from_secs(1), 10.0));
        let dflt = configs(&format!("{base}[a]\nss_dur=3\n"), &[]).unwrap();
        assert!(steady_spec(&dflt[0][0].0).unwrap().unwrap().slope, "fio's default iops_slope:0.01%");
        let none = configs(&format!("{base}[a]\nss=iops:10%\n"), &[]).unwrap();
        assert!(steady_spec(&none[0][0].0).unwrap().is_none(), "no ss_dur, no steady state, as in fio");
        let cases = [
            (format!("{base}[a]\n[b]\nss_dur=3\n"), "job.fio:6: section [b]: has ss_dur and runs together with [a]"),
            (
                format!("{base}[a]\nnumjobs=2\nss_dur=3\n"),
                "has ss_dur and numjobs=2 without group_reporting: fio judges and stops each clone apart",
            ),
            (format!("{base}[a]\nss_dur=3\n"), "the run's interval is 500ms"),
            (
                format!("{base}[a]\nss_dur=1500ms\n"),
                "ss_dur=1500ms: fio keeps whole seconds of it and would take this as 1s",
            ),
            (format!("{base}[a]\nss=lat:1ms\nss_dur=3\n"), "a latency criterion is newer than fio 3.33"),
        ];
        for (i, (job, want)) in cases.iter().enumerate() {
            let flags: &[&str] = if i == 2 { &["--interval=500ms"] } else { &[] };
            let e = resolved(job, flags).unwrap_err().to_string();
            assert!(e.contains(want), "{job}: {e}");
        }
        assert!(resolved(&format!("{base}group_reporting\n[a]\nnumjobs=2\nss_dur=3\n"), &[]).is_ok());
    }

    /// fio's exitall: a job's end stops what its exit_what names (its reporting group, or every
    /// job running), and the stopped jobs' ends stop what theirs name; the run stops all at once,
    /// so a stop of some jobs and not others is refused, and so is exit_what=all before more jobs.
    #[test]
    fn exitall_ends_the_run_where_fio_stops_every_other_job() {
        let base = "[global]\nioengine=null\nsize=1m\n";
        let ends = |text: &str| {
            let g = configs(text, &[]).unwrap_or_else(|e| panic!("{text}: {e}"));
            let exitall = g.iter().flatten().any(|(j, _)| j.args.fio.exitall == Some(true));
            g.iter().map(|group| exit_ends(group, exitall, None).unwrap()).collect::<Vec<_>>()
        };
        assert_eq!(ends(&format!("{base}[a]\n[b]\n")), [[false, false]], "no exitall");
        assert_eq!(ends(&format!("{base}exitall\n[a]\n[b]\n")), [[true, true]], "one reporting group");
        // exitwhat.fio's first group: slow1 stops every job running; fast1 only its own group.
        let what = format!("{base}[slow]\nexitall\nexit_what=stonewall\n[fast]\nnew_group\n");
        assert_eq!(ends(&what), [[true, false]]);
        // A stopped job's end stops its own group in turn.
        let chain = format!("{base}exitall\n[a]\n[b]\nexit_what=stonewall\n[c]\nnew_group\n");
        assert_eq!(ends(&chain), [[true, true, false]], "[a] stops [b], whose end stops [c]");
        let e = resolved(&format!("{base}exitall\n[a]\n[b]\n[c]\nnew_group\n"), &[]).unwrap_err().to_string();
        assert!(e.contains("job.fio:5: section [a]: ends under exitall with exit_what=group, which in fio stops some of the jobs that run with it but not [c]"), "{e}");
        let e = resolved(&format!("{base}exitall\nexit_what=all\n[a]\n[b]\nstonewall\n"), &[]).unwrap_err().to_string();
        assert!(e.contains("section [a]: has exit_what=all under exitall, so fio never starts [b]"), "{e}");
        assert!(resolved(&format!("{base}exitall\n[a]\n[b]\nexit_what=all\n"), &[]).is_ok(), "all in the last group");
        let e = resolved(&format!("{base}[a]\nexitall=0\n"), &[]).unwrap_err().to_string();
        assert!(e.contains("exitall=0: fio turns exitall on for every job whatever its value"), "{e}");
        let e = resolved(&format!("{base}[a]\nexit_what=some\n"), &[]).unwrap_err().to_string();
        assert!(e.contains("job.fio:5:") && e.contains("exit_what"), "{e}");
    }

    /// fio's strided zones: zonemode=none with a zonesize, strided without one, and zones with an
    /// offset modifier are refused at their line; a zonesize alone is strided, zonerange its size.
    #[test]
    fn strided_zones_are_settled_as_fio_settles_them() {
        let base = "[global]\nioengine=null\nsize=1m\n";
        let g = configs(&format!("{base}[a]\nzonesize=64k\nzoneskip=1k\n"), &[]).unwrap();
        let z = g[0][0].1.workload.zones.unwrap();
        assert_eq!((z.size_bytes, z.range_bytes, z.skip_bytes), (64 << 10, 64 << 10, 1 << 10));
        let cases = [
            (
                "[a]\nzonemode=none\nzonesize=64k\n",
                "job.fio:6: [a]: zonesize=64k: sets strided zones, and zonemode=none",
            ),
            ("[a]\nzonemode=strided\n", "job.fio:5: [a]: zonemode=strided: strided needs the bytes of each zone"),
            (
                "[a]\nrw=read:8k\nzonesize=64k\n",
                "job.fio:6: [a]: zonesize=64k: strides over zones, and the pattern's offset modifier",
            ),
        ];
        for (job, want) in cases {
            let e = resolved(&format!("{base}{job}"), &[]).unwrap_err().to_string();
            assert!(e.contains(want), "{job}: {e}");
        }
    }

    #[test]
    fn options_that_clash_when_resolved_are_named_as_written() {
        let base = "[global]\nioengine=null\ntime_based\nruntime=1\n";
        let cases = [
            (
                "[a]\nrw=randread\nrate=,20m\n",
                "job.fio:7: [a]: rate=,20m: it paces only writes and trims, and rw=randread (line 6) issues only reads;",
            ),
            (
                "[a]\nrate_process=poisson\n",
                "job.fio:6: [a]: rate_process=poisson: poisson spaces paced I/Os, and nothing is paced; add rate or rate_iops",
            ),
            (
                "[a]\nthinktime_blocks=4\n",
                "job.fio:6: [a]: thinktime_blocks=4: it shapes thinktime, which is not given; add thinktime",
            ),
            (
                "[a]\nthinktime_blocks_type=issue\n",
                "job.fio:6: [a]: thinktime_blocks_type=issue: it shapes thinktime, which is not given; add thinktime",
            ),
            (
                "[a]\nthinktime_spin=200\nthinktime=100\n",
                "job.fio:6: [a]: thinktime_spin=200 is longer than thinktime=100 (line 7); spin for at most",
            ),
            (
                "[a]\nrw=read\ndedupe_percentage=10\n",
                "job.fio:7: [a]: dedupe_percentage=10: it shapes written data, and rw=read (line 6) writes nothing;",
            ),
            (
                "[a]\nrw=trimwrite\nbs=4k,8k,16k\n",
                "job.fio:7: [a]: bs=4k,8k,16k: rw=trimwrite (line 6) writes each trimmed block",
            ),
            (
                "[a]\nfilename=trtype=PCIe traddr=0000.01.00.0\n",
                "job.fio:6: [a]: filename=trtype=PCIe traddr=0000.01.00.0 is an option of the spdk engine, and this run uses ioengine=null (line 2); drop it or add ioengine=spdk",
            ),
        ];
        for (job, want) in cases {
            let e = resolved(&format!("{base}{job}"), &[]).unwrap_err().to_string();
            assert!(e.contains(want), "{job}: {e}");
            assert!(!e.contains("--"), "fio's words, not run's flags: {e}");
        }
        // The command line's engine replaces the job file's, and is named as the command line's.
        let e = resolved(&format!("{base}[a]\nfilename=trtype=PCIe traddr=0000.01.00.0\n"), &["--engine=psync"])
            .unwrap_err()
            .to_string();
        assert!(e.ends_with("and this run uses --engine=psync (command line); drop it or add ioengine=spdk"), "{e}");
    }

    /// Refusals of one option found when the job is resolved (block sizes against the target, cores,
    /// engine options) name it as the job file writes it, at its line.
    #[test]
    fn one_option_refused_when_resolved_is_named_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("data");
        std::fs::File::create(&f).unwrap().set_len(1 << 20).unwrap();
        // O_DIRECT (fio's direct=1) is what asks for whole logical blocks.
        let file = format!("[global]\nioengine=libaio\ndirect=1\nfilename={}\ntime_based\nruntime=1\n", f.display());
        let null = "[global]\nioengine=null\ntime_based\nruntime=1\n";
        let cases = [
            (format!("{file}[a]\nbs=1000\n"), "job.fio:8: [a]: bs=1000 is not a multiple of "),
            (format!("{file}[a]\nrw=randrw\nbs=4k,1000\n"), "job.fio:9: [a]: bs=4k,1000: 1000 is not a multiple of "),
            (format!("{file}[a]\nba=100\n"), "job.fio:8: [a]: ba=100 is not a multiple of "),
            (format!("{file}[a]\noffset=100\n"), "job.fio:8: [a]: offset=100 is not a multiple of "),
            (
                format!("{file}blockalign=0\n[a]\n"),
                "job.fio:7: [a]: blockalign=0: 0 is not an alignment; use a size such as 4k",
            ),
            (
                format!("{null}[a]\nstartdelay=25h\n"),
                "job.fio:6: [a]: startdelay=25h: 25.0 hours is too long a wait; give at most 24 hours",
            ),
            (format!("{null}[a]\ncpus_allowed=99999\n"), "job.fio:6: [a]: core 99999 does not exist or is not allowed"),
            (
                format!("{file}ioengine=io_uring\n[a]\nsqthread_poll_cpu=x\n"),
                "job.fio:9: [a]: sqthread_poll_cpu=x is not a core number; write sqthread_poll_cpu=N with N a core",
            ),
            (
                format!("{file}ioengine=io_uring\n[a]\nsqthread_poll_cpu=99999\n"),
                "job.fio:9: [a]: sqthread_poll_cpu=99999: core 99999 does not exist",
            ),
            (format!("{file}[a]\nioengine=io_uring_cmd\n"), "job.fio:8: [a]: ioengine=io_uring_cmd on "),
            (
                "[a]\nioengine=libaio\nfilename=/nonexistent/nvmebench/x\ntime_based\nruntime=1\n".to_string(),
                "job.fio:3: [a]: /nonexistent/nvmebench/x does not exist; create it, or add size to have nvmebench create",
            ),
            (
                format!("{null}ioengine=libaio\n[a]\nfilename={}:{}\n", f.display(), f.display()),
                "; give each file or device once (each of a section's numjobs jobs drives every file of its list;",
            ),
        ];
        for (job, want) in cases {
            let e = resolved(&job, &[]).unwrap_err().to_string();
            assert!(e.contains(want), "{job}: {e}");
            assert!(!e.contains("--"), "fio's words, not run's flags: {e}");
        }
        // Through the page cache (fio's default direct=0) any size goes, as in fio.
        let buffered = file.replace("direct=1", "direct=0");
        let (job, cfg) = &configs(&format!("{buffered}[a]\nbs=1000\n"), &[]).unwrap()[0][0];
        assert!(cfg.buffered, "{}", job.name);
        assert_eq!(cfg.workload.bs_read.max_bytes(), 1000);
        // An engine the command line gives is named as the command line gives it.
        let e = resolved(&format!("{file}[a]\n"), &["--engine=uring:sqpoll_cpu=x"]).unwrap_err().to_string();
        assert!(e.contains("section [a]: --engine 'uring:sqpoll_cpu=x': sqpoll_cpu=x is not a core number"), "{e}");
    }

    /// fio's logs are written wherever jobs run, alone or together (each clone has its own
    /// series), numbered by fio's thread numbers: a job's clones are its resolved workers.
    #[test]
    fn jobs_alone_or_together_write_logs_numbered_by_their_clones() {
        let base = "[global]\nioengine=null\ntime_based\nruntime=1\n";
        for log in ["write_bw_log=x", "write_iops_log=x", "write_lat_log=x"] {
            resolved(&format!("{base}[a]\n[b]\n{log}\n"), &[]).unwrap_or_else(|e| panic!("{log}: {e}"));
        }
        resolved(&format!("{base}[a]\n[b]\n"), &["--write_lat_log=x", "--per_job_logs=0"]).unwrap();
        let text = format!("{base}[a]\nnumjobs=3\n[b]\ncpus_allowed=0\nnumjobs=2\n[c]\nstonewall\n");
        let groups = configs(&text, &[]).unwrap();
        let jobs: Vec<(usize, usize)> = groups.iter().flatten().map(|(j, c)| (j.number, c.cores.len())).collect();
        assert_eq!(jobs, [(1, 3), (4, 2), (6, 1)]);
        assert!(groups.iter().flatten().all(|(j, c)| j.clones() == c.cores.len()));
    }

    /// thinktime=0 is fio's default, no think time; a job's replaces a [global] think time, and
    /// the shapes that came with it, which then shape nothing (fio ignores them too).
    #[test]
    fn thinktime_0_is_no_think_time() {
        let think = |text: &str| {
            let groups = configs(text, &[]).unwrap_or_else(|e| panic!("{text}: {e}"));
            groups.iter().flatten().map(|(_, c)| c.workload.pacing.thinktime.map(|t| t.think)).collect::<Vec<_>>()
        };
        let base = "[global]\nioengine=null\ntime_based\nruntime=1\n";
        assert_eq!(think(&format!("{base}[a]\nthinktime=0\n")), [None]);
        let shaped = format!("{base}thinktime=1ms\nthinktime_blocks=4\nthinktime_spin=100\n");
        let us = |n| Some(std::time::Duration::from_micros(n));
        assert_eq!(think(&format!("{shaped}[a]\n[b]\nstonewall\nthinktime=0\n")), [us(1000), None]);
        assert_eq!(think(&format!("{base}[a]\nthinktime=0\nthinktime_spin=10\n")), [None]);
        assert_eq!(think(&format!("{base}[a]\nthinktime=0\nthinktime=50\n")), [us(50)], "the later one");
    }

    #[test]
    fn fios_own_keywords() {
        let n = |k: &str| fio_keyword(k).and_then(|v| v.parse::<u64>().ok()).unwrap();
        assert!(n("ncpus") >= 1);
        assert_eq!(n("pagesize") % 4096, 0);
        assert!(n("mb_memory") > 0);
        assert_eq!(fio_keyword("HOME_OF_NOTHING"), None);
    }
}

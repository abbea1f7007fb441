//! `nvmebench run`: prepare the target, start the coordinator with the chosen engine, write reports.
//!
//! This is the glue between a resolved `RunConfig`, the engines and the reports; it owns the order of
//! side effects (nothing is written before every check has passed) and the signal handlers.

use crate::cli::RunArgs;
use crate::config::{ConfigError, RunConfig};
use crate::coordinator::{self, RunPlan, RunResult};
use crate::cost::DeviceIrqs;
use crate::fleet::rendezvous::{Member, Timing};
use crate::fleet::{FleetError, FleetPlan};
use crate::launch::{self, EngineTarget, SpdkRun};
use crate::options::OutputFormat;
use crate::report;
use crate::report::live::{self, LiveLine, LiveMode};
use crate::report::text::Width;
pub use crate::report::write_stdout;
use crate::target::{self, RemoveOnDrop, TargetKind};
use crate::worker::{VerifyPlan, WorkerPlan};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize};

/// A start this much later than `--start-at` is worth a note: hosts no longer start together.
const START_LATE_NOTE: std::time::Duration = std::time::Duration::from_millis(100);

/// How a run ended, for the exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every I/O succeeded.
    Clean,
    /// The run finished, but I/Os failed or a worker died mid-run.
    IoErrors,
    /// A signal cut the run short; partial results were written.
    Interrupted(i32),
}

impl Outcome {
    /// 0 clean, 1 I/O errors, 128 + signal when interrupted (as shells report it).
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Clean => 0,
            Outcome::IoErrors => 1,
            Outcome::Interrupted(sig) => 128u8.saturating_add(sig as u8),
        }
    }
}

/// Errors that stop a run before it starts; all of them exit with status 2.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Coordinator(#[from] coordinator::CoordinatorError),
    #[error("--json {path}: the directory {dir} does not exist; create it or pick another path")]
    JsonDir { path: String, dir: String },
    #[error("--json {path} is a directory; name a file, such as {path}/run.json")]
    JsonIsDir { path: String },
    #[error(
        "--json {path}: the extension says {named}, but --json writes JSON; name it {json}, and render that with `nvmebench report {json} -o {path}`"
    )]
    JsonNotJson { path: String, named: &'static str, json: String },
    #[error("cannot install signal handlers: {0}")]
    Signals(std::io::Error),
    #[error(transparent)]
    Rebind(#[from] crate::rebind::RebindError),
    #[error("cannot start the telemetry thread: {0}")]
    Telemetry(std::io::Error),
    #[error(transparent)]
    Fleet(#[from] FleetError),
}

impl SetupError {
    /// The signal that stopped the run before its workers started, if that is what happened: the
    /// exit status is then 128 + the signal, as for a run cut short, not a set-up failure's 2.
    pub fn interrupted_by(&self) -> Option<i32> {
        match self {
            SetupError::Coordinator(coordinator::CoordinatorError::Interrupted(sig)) => Some(*sig),
            _ => None,
        }
    }
}

/// How `run`'s options (`--quiet`, `--progress`, `--status-interval`) show the live line.
pub fn live_mode(args: &RunArgs, quiet: bool) -> LiveMode {
    use crate::cli::ProgressMode;
    let never = args.progress == ProgressMode::Never;
    LiveMode::choose(
        quiet || never,
        args.progress == ProgressMode::Auto,
        args.progress == ProgressMode::Always,
        args.status_interval,
    )
}

/// Runs `nvmebench run` to completion and writes its reports.
pub fn run_command(args: &RunArgs) -> anyhow::Result<Outcome> {
    let fleet = FleetPlan::resolve(&args.fleet).map_err(SetupError::from)?;
    if fleet.is_some() && args.fio.output_format.is_some() {
        let why = "--fleet writes nvmebench's results (each rank's, and rank 0's merge in fleet.json), not fio's; drop --output-format";
        return Err(SetupError::from(FleetError::Usage(why.into())).into());
    }
    let (cfg, spdk) = resolve(args, args.engine.as_deref().unwrap_or(crate::config::DEFAULT_ENGINE))?;
    check_json_dir(cfg.json_path.as_deref())?;
    if cfg.workers_per_core() > 1 {
        eprintln!(
            "nvmebench: note: {} workers on {} cores; workers share cores, so figures include their contention",
            cfg.cores.len(),
            cfg.workers_per_core().max(1)
        );
    }
    let signal = install_signal_handlers()?;
    // A fleet's process claims its rank before it sets anything up: a rank given twice stops here.
    let member = fleet.map(Member::claim).transpose().map_err(SetupError::from)?;
    // A set-up failure tells the fleet, so that rank 0 need not wait for this process in vain.
    let told = |e: SetupError| {
        if let Some(m) = &member {
            if !matches!(e, SetupError::Coordinator(coordinator::CoordinatorError::Gate(_))) {
                m.failed(&e.to_string());
            }
        }
        e
    };

    // The only writes before the run: creating a missing file (the user gave --size, or it is the
    // scratch file).
    let _scratch =
        cfg.scratch.then(|| RemoveOnDrop(cfg.target.as_ref().expect("scratch runs have a target").path.clone()));
    for t in cfg.targets.iter().filter(|t| t.kind == TargetKind::NewFile) {
        target::prepare_file(t).map_err(|e| told(SetupError::Config(e.into())))?;
    }

    let live = LiveLine::new(live_mode(args, cfg.quiet), live::Plan { ramp: cfg.ramp, runtime: cfg.runtime });
    let disk_before = crate::report::fio_output::disk_before(args, &cfg);
    let timing = Timing { ramp: cfg.ramp, interval: cfg.interval, planned: cfg.runtime.map(|r| cfg.ramp + r) };
    let gate = member.as_ref().map(|m| m.gate(timing));
    let result = execute_watched(&cfg, spdk.as_ref(), signal.clone(), &live, gate, None).map_err(told)?;
    let disk = crate::report::fio_output::disk_since(disk_before, &cfg);
    live.finish();
    if let Some(late) = cfg.start_at.and_then(|at| result.started_at.duration_since(at).ok()) {
        if late > START_LATE_NOTE {
            eprintln!(
                "nvmebench: note: started {:.0} ms after --start-at because set-up took longer; start further ahead so hosts start together",
                late.as_secs_f64() * 1e3
            );
        }
    }

    let clock = clock_source();
    save_verify_state(&cfg, &result)?;
    let mut document = report::json::document(&cfg, &result, clock);
    document.fleet_member = member.as_ref().and_then(|m| m.doc(result.started_at));
    let json = serde_json::to_value(&document).expect("a result document always serialises");
    if let Some(p) = &cfg.json_path {
        let text = serde_json::to_string_pretty(&json).expect("a JSON value always serialises");
        std::fs::write(p, text + "\n").map_err(|e| anyhow::anyhow!("cannot write {}: {e}", p.display()))?;
    }
    let failed = result.failed() || result.verify_failed();
    let own = match (result.interrupted_by, failed) {
        (Some(sig), _) => Outcome::Interrupted(sig),
        (None, true) => Outcome::IoErrors,
        (None, false) => Outcome::Clean,
    };
    if let Some(m) = &member {
        return finish_fleet(m, &cfg, &args.fio, &document, own, &signal);
    }
    let out = match (crate::report::fio_output::single_run_output(args, &cfg, &result, disk)?, cfg.output) {
        (Some(fio_json), _) => fio_json,
        (None, OutputFormat::Text) => {
            report::text::render(&cfg, &result, clock, if args.wide { Width::Wide } else { Width::Compact })
        }
        (None, OutputFormat::Json) => {
            serde_json::to_string_pretty(&json).expect("a JSON value always serialises")
                + "
"
        }
    };
    crate::report::fio_output::write_report(&args.fio, &out)?;
    Ok(own)
}

/// A fleet's process after its run: writes its result into the fleet's directory; rank 0 then
/// gathers every rank's, writes `fleet.json` and `fleet.html` and prints the fleet's report. The
/// fleet's exit status is 1 when a rank is missing or did not end clean.
fn finish_fleet(
    m: &Member,
    cfg: &RunConfig,
    fio: &crate::cli::FioArgs,
    doc: &crate::report::doc::RunDocument,
    own: Outcome,
    signal: &AtomicUsize,
) -> anyhow::Result<Outcome> {
    let written = crate::fleet::gather::write_result(&m.plan, doc)?;
    let rank = m.plan.member.rank;
    if rank != 0 {
        if !cfg.quiet {
            eprintln!(
                "nvmebench: rank {rank} of {}: result written to {}; rank 0 merges the fleet's",
                m.plan.member.size,
                written.display()
            );
        }
        return Ok(own);
    }
    let gate = m.met().gate.expect("the run started, so the gate opened");
    let g = crate::fleet::gather::gather(&m.plan, &gate, signal)?;
    let out = match cfg.output {
        OutputFormat::Json => serde_json::to_string_pretty(&g.doc).expect("a result document always serialises") + "\n",
        OutputFormat::Text => report::fleet::render(&g.runs[0], &g.runs[1..]),
    };
    // The text report lists them; JSON on stdout leaves them to stderr.
    if cfg.output == OutputFormat::Json {
        for note in g.doc.fleet.iter().flat_map(|f| f.missing.iter().map(|m| &m.why).chain(&f.warnings)) {
            eprintln!("nvmebench: warning: {note}");
        }
    }
    crate::report::fio_output::write_report(fio, &out)?;
    Ok(match own {
        Outcome::Clean if !g.complete => Outcome::IoErrors,
        other => other,
    })
}

/// Refuses a `--json` path that is a directory, whose directory does not exist, or whose extension
/// names another format (`--json r.html`), before anything runs.
pub fn check_json_dir(path: Option<&std::path::Path>) -> Result<(), SetupError> {
    use crate::report::FileFormat;
    if let Some(p) = path {
        if p.is_dir() {
            return Err(SetupError::JsonIsDir { path: p.display().to_string() });
        }
        if let Some((named, json)) = FileFormat::Json.named_otherwise(p) {
            let json = json.display().to_string();
            return Err(SetupError::JsonNotJson { path: p.display().to_string(), named: named.name(), json });
        }
        let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
        if !dir.is_dir() {
            return Err(SetupError::JsonDir { path: p.display().to_string(), dir: dir.display().to_string() });
        }
    }
    Ok(())
}

#[cfg(feature = "spdk")]
impl SpdkRun {
    /// The attached `session` with the queue-pair knobs and fault injection of `a`; `interrupt` for
    /// `spdk:interrupt`, `align_bytes` the workload's offset alignment (0: not known).
    pub fn new(
        session: crate::engine::spdk::SpdkSession,
        a: &crate::cli::SpdkArgs,
        interrupt: bool,
        align_bytes: u64,
    ) -> SpdkRun {
        use crate::engine::spdk::PollPolicy;
        let options = crate::engine::spdk::SpdkOptions {
            io_queue_size: a.io_queue_size.unwrap_or(0),
            poll_policy: a.poll_policy.map(|p| match p {
                crate::cli::PollPolicyArg::Perf => PollPolicy::Perf,
                crate::cli::PollPolicyArg::Tuned => PollPolicy::Tuned,
            }),
            max_completions: a.max_completions,
            delay_cmd_submit: a.delay_cmd_submit == crate::cli::DelaySubmit::On,
            poll_gap_ns: a.poll_gap.map(|d| d.as_nanos() as u32),
            inject: a.spdk_inject_error.map(|i| (i.write, i.count, i.sct, i.sc)),
            interrupt,
            align_bytes,
            writes: false,
        };
        SpdkRun { session, options, reset_after: a.spdk_reset_after }
    }
}

/// Resolves the flags for `engine_text`; for the SPDK engine this starts SPDK and attaches the
/// controllers (after every other check), which the run then uses.
pub fn resolve(args: &RunArgs, engine_text: &str) -> Result<(RunConfig, Option<SpdkRun>), SetupError> {
    #[cfg(feature = "spdk")]
    {
        let mut session = None;
        let interrupts = crate::config::EngineSpec::parse(engine_text)
            .is_ok_and(|e| e == crate::config::EngineSpec::Spdk(crate::config::SpdkMode::Interrupt));
        let mut attach = |cores: &[usize]| {
            let (s, t) = spdk_attach(&args.spdk, cores, interrupts)?;
            session = Some(s);
            Ok(t)
        };
        let cfg = RunConfig::resolve_with(args, engine_text, Some(&mut attach))?;
        let lanes = crate::worker::targets::place(cfg.cores.len(), cfg.targets.len(), cfg.each_worker_all_targets);
        if interrupts && lanes.len() > cfg.cores.len() {
            // A worker on several queue pairs cannot sleep in one's wait: it would poll them all.
            return Err(SetupError::Config(ConfigError::Invalid {
                option: "engine",
                message: format!(
                    "spdk:interrupt sleeps in one queue pair's wait, and here {} namespaces share {} worker{}; give each namespace a worker of its own (--cores with as many cores) or use --engine spdk",
                    cfg.targets.len(),
                    cfg.cores.len(),
                    if cfg.cores.len() == 1 { "" } else { "s" }
                ),
            }));
        }
        let run = session.map(|session| SpdkRun::new(session, &args.spdk, interrupts, cfg.workload.align_bytes));
        if let Some(r) = &run {
            for warning in r.session.queue_warnings(cfg.queue_depth, cfg.workload.max_bs(), &r.options) {
                eprintln!("nvmebench: warning: {warning}");
            }
        }
        Ok((cfg, run))
    }
    #[cfg(not(feature = "spdk"))]
    {
        Ok((RunConfig::resolve_engine(args, engine_text)?, None))
    }
}

/// Runs the workload of `cfg` through its engine (with `--spdk-reset-after`, resetting the
/// controllers mid-run from a thread of its own).
pub fn execute(
    cfg: &RunConfig,
    spdk: Option<&SpdkRun>,
    signal: Arc<AtomicUsize>,
    live: &LiveLine,
) -> Result<RunResult, SetupError> {
    execute_watched(cfg, spdk, signal, live, None, None)
}

/// As [`execute`], with the start moment decided by `gate` once the workers are ready (a fleet's
/// rendezvous) rather than by `cfg.start_at`, and `watch` shown each measured interval, which may
/// end the run there (a fio job's steady state).
pub fn execute_watched(
    cfg: &RunConfig,
    spdk: Option<&SpdkRun>,
    signal: Arc<AtomicUsize>,
    live: &LiveLine,
    gate: Option<Box<dyn coordinator::StartGate>>,
    watch: Option<Box<dyn coordinator::RunWatch>>,
) -> Result<RunResult, SetupError> {
    #[cfg(feature = "spdk")]
    if let Some((s, after)) = spdk.and_then(|s| s.reset_after.map(|a| (s, a))) {
        return execute_with_reset(cfg, s, after, signal, live, gate, watch);
    }
    execute_with(cfg, spdk, signal, live, gate, watch)
}

/// Runs with a resetter that resets every controller `after` into the run, or does nothing when
/// the run ends first; the outcome becomes one event line per controller.
///
/// "Into the run" counts from the moment the start gate opens, which [`ResetClock`] hands to the
/// resetter: counted from before the workers' set-up, a loaded machine (or a slow emulated
/// controller) could spend the whole delay connecting queue pairs, and the reset then landed on a
/// queue pair being connected, which SPDK refuses (EINVAL), instead of on a running workload.
#[cfg(feature = "spdk")]
fn execute_with_reset(
    cfg: &RunConfig,
    s: &SpdkRun,
    after: std::time::Duration,
    signal: Arc<AtomicUsize>,
    live: &LiveLine,
    gate: Option<Box<dyn coordinator::StartGate>>,
    watch: Option<Box<dyn coordinator::RunWatch>>,
) -> Result<RunResult, SetupError> {
    let (done_tx, done_rx) = crossbeam_channel::bounded::<()>(0);
    let (start_tx, start_rx) = crossbeam_channel::bounded::<std::time::SystemTime>(1);
    let controllers = s.session.controllers.clone();
    let resetter = std::thread::spawn(move || {
        // No moment: the run ended before its gate opened (its gate, and the sender, are gone).
        let Ok(start) = start_rx.recv() else { return Vec::new() };
        let wait = (start + after).duration_since(std::time::SystemTime::now()).unwrap_or_default();
        match done_rx.recv_timeout(wait) {
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                controllers.iter().map(|c| c.reset()).collect::<Vec<_>>()
            }
            _ => Vec::new(),
        }
    });
    let clock = ResetClock { inner: gate, start_at: cfg.start_at, start: start_tx };
    let result = execute_with(cfg, Some(s), signal, live, Some(Box::new(clock)), watch);
    drop(done_tx);
    let outcomes = resetter.join().unwrap_or_default();
    result.map(|mut r| {
        r.events.extend(outcomes.iter().map(|o| match &o.error {
            None => format!(
                "controller {} reset {:.2} s into the run (--spdk-reset-after): back after {:.1} ms",
                o.trid,
                after.as_secs_f64(),
                o.duration_ns as f64 / 1e6
            ),
            Some(e) => format!("controller {} reset (--spdk-reset-after) failed: {e}", o.trid),
        }));
        if outcomes.is_empty() {
            r.events.push(format!("no controller reset: the run ended before --spdk-reset-after {after:?}"));
        }
        r
    })
}

/// The start gate of a run with `--spdk-reset-after`: it opens when the run's own gate would (a
/// fleet's moment, `--start-at`, or at once) and tells the resetter that moment.
#[cfg(feature = "spdk")]
struct ResetClock {
    inner: Option<Box<dyn coordinator::StartGate>>,
    start_at: Option<std::time::SystemTime>,
    start: crossbeam_channel::Sender<std::time::SystemTime>,
}

#[cfg(feature = "spdk")]
impl coordinator::StartGate for ResetClock {
    fn moment(&mut self, signal: &AtomicUsize) -> Result<std::time::SystemTime, coordinator::GateRefusal> {
        let at = match self.inner.as_mut() {
            Some(gate) => gate.moment(signal)?,
            None => self.start_at.unwrap_or_else(std::time::SystemTime::now),
        };
        // The resetter waits for this one moment in a channel of one; it cannot be full.
        let _ = self.start.try_send(at);
        Ok(at)
    }
}

fn execute_with(
    cfg: &RunConfig,
    spdk: Option<&SpdkRun>,
    signal: Arc<AtomicUsize>,
    live: &LiveLine,
    gate: Option<Box<dyn coordinator::StartGate>>,
    watch: Option<Box<dyn coordinator::RunWatch>>,
) -> Result<RunResult, SetupError> {
    let spec = Arc::new(cfg.workload.clone());
    let workers = plan_lanes(cfg, &spec);
    let plan = RunPlan {
        workers,
        interval: cfg.interval,
        signal,
        start_at: cfg.start_at,
        irqs: DeviceIrqs::of_targets(cfg.targets.iter().map(|t| t.path.as_path())),
        gate,
        watch,
    };
    let paths: Vec<std::path::PathBuf> =
        if spdk.is_some() { Vec::new() } else { cfg.targets.iter().map(|t| t.path.clone()).collect() };
    let on = EngineTarget {
        paths: &paths,
        writes: cfg.workload.writes(),
        direct: !cfg.buffered,
        buffer_seed: cfg.workload.seed,
        spdk,
    };
    let probes = if cfg.telemetry_interval.is_some() { telemetry_probes(cfg, spdk) } else { Vec::new() };
    let sampler = match (cfg.telemetry_interval, probes.is_empty()) {
        (Some(every), false) => Some(crate::telemetry::Sampler::start(probes, every).map_err(SetupError::Telemetry)?),
        _ => None,
    };
    let mut result = launch::run_engine(&cfg.engine, on, plan, |p| live.update(p))?;
    result.telemetry = sampler.map(|s| s.finish(result.error_count() > 0));
    Ok(result)
}

/// Saves what a verified run leaves where `--verify-state` says, when it says.
///
/// # Errors
/// A state file that cannot be written.
pub fn save_verify_state(cfg: &RunConfig, result: &coordinator::RunResult) -> anyhow::Result<()> {
    if let (Some(v), Some(vc)) = (&result.verify, cfg.verify.as_ref()) {
        if let Some(p) = &vc.state_path {
            verify_state(cfg, v, &vc.carried)
                .save(p)
                .map_err(|e| anyhow::anyhow!("cannot write --verify-state {}: {e}", p.display()))?;
        }
    }
    Ok(())
}

/// What `--verify-state` keeps after a run: its seed and each target's table (unnamed with one
/// target, keyed by the target's name with several), then the sections of targets it did not drive.
fn verify_state(
    cfg: &RunConfig,
    v: &coordinator::VerifyResult,
    carried: &[(String, crate::verify::GenTable)],
) -> crate::verify::VerifyState {
    let several = cfg.targets.len() > 1 || !carried.is_empty();
    let mut sections: Vec<(Option<String>, crate::verify::GenTable)> = cfg
        .targets
        .iter()
        .zip(&v.tables)
        .filter_map(|(t, table)| {
            let key = several.then(|| crate::config::VerifyConfig::state_key(t));
            Some((key, table.clone()?))
        })
        .collect();
    sections.extend(carried.iter().map(|(k, t)| (Some(k.clone()), t.clone())));
    crate::verify::VerifyState { seed: cfg.workload.seed, sections }
}

/// The run's lanes (one worker on one target, see `worker::targets`): targets placed over the
/// workers, each lane with its slice, its share of `--ios` and `--rate-iops` (and of its worker's `--rate`), and
/// `--qd` slots.
pub fn plan_lanes(cfg: &RunConfig, spec: &Arc<crate::workload::WorkloadSpec>) -> Vec<WorkerPlan> {
    let lanes = crate::worker::targets::place(cfg.cores.len(), cfg.targets.len(), cfg.each_worker_all_targets);
    let slices = crate::worker::targets::slices(&lanes);
    let n = lanes.len();
    let lanes_of = |w: usize| lanes.iter().filter(|l| l.worker == w).count().max(1);
    lanes
        .iter()
        .zip(slices)
        .enumerate()
        .map(|(index, (lane, (slice, slices)))| WorkerPlan {
            index,
            thread: lane.worker,
            target: lane.target,
            slice,
            slices,
            core: Some(cfg.cores[lane.worker]),
            queue_depth: cfg.queue_depth,
            worker_qd: cfg.queue_depth_shared.then_some(cfg.queue_depth),
            spec: clone_spec(spec, lane.worker),
            ramp: cfg.ramp,
            runtime: cfg.runtime,
            io_limit: cfg.ios.map(|t| t / n as u64 + u64::from((index as u64) < t % n as u64)),
            byte_limit: cfg.io_bytes_per_job.map(|b| share_of(b, lanes_of(lane.worker), rank_in(&lanes, index))),
            rate_iops: cfg.rate_iops.map(|r| r / n as f64),
            rate_share: 1.0 / lanes_of(lane.worker) as f64,
            interval: cfg.interval,
            latency: cfg.latency,
            on_error: cfg.on_error,
            drain_timeout: cfg.drain_timeout,
            verify: cfg.verify.as_ref().map(|v| VerifyPlan {
                unit: v.unit,
                seed: cfg.workload.seed,
                known: v.known.get(lane.target).cloned().flatten(),
                pass: true,
            }),
            // A lone job's clones keep one ratio (their equal weights) only in a job file, whose
            // groups with a flow run as streams (`fio::exec`).
            flow: None,
            latency_target: cfg.latency_target,
            io_log: cfg.io_log,
        })
        .collect()
}

/// Lane `rank`'s part of `total` split over `lanes` (the remainder to the first).
pub fn share_of(total: u64, lanes: usize, rank: usize) -> u64 {
    let lanes = lanes.max(1) as u64;
    total / lanes + if rank == 0 { total % lanes } else { 0 }
}

/// Where lane `index` comes among its worker's lanes.
fn rank_in(lanes: &[crate::worker::targets::Lane], index: usize) -> usize {
    lanes[..index].iter().filter(|l| l.worker == lanes[index].worker).count()
}

/// Worker `worker`'s workload: the run's, or, with fio's offset_increment, its own working set
/// `worker` steps on (on every target it drives: a clone's files all start there, as in fio).
fn clone_spec(spec: &Arc<crate::workload::WorkloadSpec>, worker: usize) -> Arc<crate::workload::WorkloadSpec> {
    if spec.clone_step_bytes == 0 {
        return spec.clone();
    }
    let start = spec.range_start + spec.clone_step_bytes * worker as u64;
    Arc::new(crate::workload::WorkloadSpec { range_start: start, ..(**spec).clone() })
}

/// What telemetry reads: every controller SPDK attached, or each of the kernel engines' targets;
/// the null engine touches no drive.
fn telemetry_probes(cfg: &RunConfig, spdk: Option<&SpdkRun>) -> Vec<crate::telemetry::Probe> {
    match spdk {
        #[cfg(feature = "spdk")]
        Some(s) => crate::telemetry::spdk_probes(&s.session.controllers),
        _ if matches!(cfg.engine, crate::config::EngineSpec::Null(_)) => Vec::new(),
        _ => cfg.targets.iter().map(crate::telemetry::kernel_probe).collect(),
    }
}

/// SIGINT and SIGTERM stop the run and still write the report; a second one exits at once.
pub fn install_signal_handlers() -> Result<Arc<AtomicUsize>, SetupError> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let seen = Arc::new(AtomicBool::new(false));
    let which = Arc::new(AtomicUsize::new(0));
    for sig in [SIGINT, SIGTERM] {
        // Registered first so that it sees the flag as it was before this signal set it.
        signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, seen.clone()).map_err(SetupError::Signals)?;
        signal_hook::flag::register(sig, seen.clone()).map_err(SetupError::Signals)?;
        signal_hook::flag::register_usize(sig, which.clone(), sig as usize).map_err(SetupError::Signals)?;
    }
    Ok(which)
}

/// What times I/Os: the TSC where the CPU says it is invariant or the kernel keeps its time with
/// it, the vDSO's CLOCK_MONOTONIC otherwise ([`crate::clock`]).
pub fn clock_source() -> &'static str {
    crate::clock::Clock::new().source()
}

/// Starts SPDK and attaches the `--trid` controllers; the target is their selected namespaces.
#[cfg(feature = "spdk")]
pub fn spdk_attach(
    a: &crate::cli::SpdkArgs,
    cores: &[usize],
    interrupts: bool,
) -> Result<(crate::engine::spdk::SpdkSession, Vec<crate::target::Target>), ConfigError> {
    use crate::config::fault::Fault;
    use crate::engine::spdk::{SpdkSession, ctrlr::TridSpec, env::EnvOptions};
    let trids =
        a.trids.iter().map(|t| TridSpec::parse(t)).collect::<Result<Vec<_>, _>>().map_err(ConfigError::Engine)?;
    let fabrics_only = trids.iter().all(|t| !t.trid.to_ascii_lowercase().contains("trtype:pcie"));
    let mut sorted = cores.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let env = EnvOptions {
        cores: sorted,
        mem_size_mb: a.mem_size,
        shm_id: a.shm_id,
        no_huge: a.no_huge,
        iova_mode: a.iova_mode.clone(),
        no_pci: fabrics_only,
        log_level: a.spdk_log.clone(),
        single_file_segments: a.single_file_segments
            || EnvOptions::needs_single_file_segments(trids.iter().map(|t| t.trid.as_str())),
    };
    for (i, t) in trids.iter().enumerate() {
        if let Some(first) = trids[..i].iter().find(|o| o.trid.eq_ignore_ascii_case(&t.trid) && o.nsid == t.nsid) {
            return Err(Fault::SameTargetTwice { first: first.trid.clone(), again: t.trid.clone() }.into());
        }
    }
    let s = SpdkSession::attach(&env, &trids, interrupts).map_err(|e| ConfigError::Engine(e.to_string()))?;
    // The same namespace reached twice (a --trid with ns:N and one without) is one target.
    let names: Vec<String> = s.namespaces.iter().map(|ns| format!("{} ns:{}", ns.ctrlr.info.trid, ns.nsid)).collect();
    for (i, n) in names.iter().enumerate() {
        if names[..i].contains(n) {
            return Err(Fault::SameTargetTwice { first: n.clone(), again: n.clone() }.into());
        }
    }
    // One target per selected namespace; the working set fits the smallest (config checks it).
    let targets = s
        .namespaces
        .iter()
        .zip(names)
        .map(|(ns, name)| crate::target::Target {
            path: name.into(),
            kind: TargetKind::SpdkNamespace,
            size_bytes: ns.sectors * u64::from(ns.sector_bytes),
            logical_block_bytes: u64::from(ns.sector_bytes),
            device: None,
            nvme_sibling: None,
            model: None,
            serial: None,
            unsupported_ops: crate::engine::spdk::unsupported_ops(&ns.ctrlr.info),
        })
        .collect();
    Ok((s, targets))
}

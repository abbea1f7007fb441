//! `nvmebench run`: prepare the target, start the coordinator with the chosen engine, write reports.
//!
//! This is the glue between a resolved `RunConfig`, the engines and the reports; it owns the order of
//! side effects (nothing is written before every check has passed) and the signal handlers.

use crate::cli::{OutputFormat, RunArgs};
use crate::config::{ConfigError, EngineSpec, RunConfig};
use crate::coordinator::{self, RunPlan, RunResult};
use crate::engine::EngineBuilder;
use crate::engine::aio::AioBuilder;
use crate::engine::null::NullBuilder;
use crate::engine::psync::PsyncBuilder;
use crate::engine::uring::UringBuilder;
use crate::engine::uring_cmd::UringCmdBuilder;
use crate::report::{self, live::LiveLine};
use crate::target::{self, RemoveOnDrop, TargetKind};
use crate::worker::WorkerPlan;
use anyhow::Context;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize};

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
    #[error("cannot install signal handlers: {0}")]
    Signals(std::io::Error),
}

/// Runs `nvmebench run` to completion and writes its reports.
pub fn run_command(args: &RunArgs) -> anyhow::Result<Outcome> {
    let cfg = RunConfig::resolve(args).map_err(SetupError::from)?;
    check_json_dir(cfg.json_path.as_deref())?;
    if cfg.workers_per_core() > 1 {
        eprintln!(
            "nvmebench: note: {} workers on {} cores; workers share cores, so figures include their contention",
            cfg.cores.len(),
            cfg.workers_per_core().max(1)
        );
    }
    let signal = install_signal_handlers()?;

    // The only writes before the run: creating a missing file (the user gave --size, or it is the
    // scratch file).
    let _scratch =
        cfg.scratch.then(|| RemoveOnDrop(cfg.target.as_ref().expect("scratch runs have a target").path.clone()));
    if let Some(t) = cfg.target.as_ref().filter(|t| t.kind == TargetKind::NewFile) {
        target::prepare_file(t).map_err(|e| SetupError::Config(e.into()))?;
    }

    let live = LiveLine::new(cfg.quiet || cfg.output == OutputFormat::Json);
    let result = execute(&cfg, signal, &live)?;
    live.finish();

    let clock = clock_source();
    let json = report::json::render(&cfg, &result, clock);
    if let Some(p) = &cfg.json_path {
        let text = serde_json::to_string_pretty(&json).expect("a JSON value always serialises");
        std::fs::write(p, text + "\n").with_context(|| format!("cannot write {}", p.display()))?;
    }
    let out = match cfg.output {
        OutputFormat::Text => report::text::render(&cfg, &result, clock),
        OutputFormat::Json => serde_json::to_string_pretty(&json).expect("a JSON value always serialises") + "\n",
    };
    write_stdout(&out)?;

    Ok(match (result.interrupted_by, result.error_count() > 0 || result.failure.is_some()) {
        (Some(sig), _) => Outcome::Interrupted(sig),
        (None, true) => Outcome::IoErrors,
        (None, false) => Outcome::Clean,
    })
}

/// Refuses a `--json` path whose directory does not exist, before anything runs.
pub fn check_json_dir(path: Option<&std::path::Path>) -> Result<(), SetupError> {
    if let Some(p) = path {
        let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
        if !dir.is_dir() {
            return Err(SetupError::JsonDir { path: p.display().to_string(), dir: dir.display().to_string() });
        }
    }
    Ok(())
}

/// Runs the workload of `cfg` through its engine: the one place that turns an engine spec into a
/// builder (static dispatch: each arm instantiates the coordinator for its engine type).
pub fn execute(cfg: &RunConfig, signal: Arc<AtomicUsize>, live: &LiveLine) -> Result<RunResult, SetupError> {
    let target = || cfg.target.as_ref().expect("every engine but null has a target");
    let path = || target().path.clone();
    let writes = cfg.workload.writes();
    let buffer_seed = cfg.workload.seed;
    match &cfg.engine {
        EngineSpec::Null(o) => execute_with(Arc::new(NullBuilder { options: *o }), cfg, signal, live),
        EngineSpec::Uring(o) => {
            execute_with(Arc::new(UringBuilder { path: path(), writes, options: *o, buffer_seed }), cfg, signal, live)
        }
        EngineSpec::UringCmd(o) => execute_with(
            Arc::new(UringCmdBuilder { path: path(), writes, options: *o, buffer_seed }),
            cfg,
            signal,
            live,
        ),
        EngineSpec::Aio => execute_with(Arc::new(AioBuilder { path: path(), writes, buffer_seed }), cfg, signal, live),
        EngineSpec::Psync => {
            execute_with(Arc::new(PsyncBuilder { path: path(), writes, buffer_seed }), cfg, signal, live)
        }
    }
}

fn execute_with<B: EngineBuilder + 'static>(
    builder: Arc<B>,
    cfg: &RunConfig,
    signal: Arc<AtomicUsize>,
    live: &LiveLine,
) -> Result<RunResult, SetupError> {
    let spec = Arc::new(cfg.workload.clone());
    let n = cfg.cores.len();
    let workers = cfg
        .cores
        .iter()
        .enumerate()
        .map(|(index, &core)| WorkerPlan {
            index,
            workers: n,
            core: Some(core),
            queue_depth: cfg.queue_depth,
            spec: spec.clone(),
            ramp: cfg.ramp,
            runtime: cfg.runtime,
            io_limit: cfg.ios.map(|t| t / n as u64 + u64::from((index as u64) < t % n as u64)),
            rate_iops: cfg.rate_iops.map(|r| r / n as f64),
            interval: cfg.interval,
            on_error: cfg.on_error,
            drain_timeout: cfg.drain_timeout,
        })
        .collect();
    let plan = RunPlan { workers, interval: cfg.interval, signal };
    Ok(coordinator::run(builder, plan, quanta::Clock::new(), |p| live.update(p))?)
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

/// What times I/Os: the TSC (through quanta, calibrated against CLOCK_MONOTONIC) when the CPU says
/// it is invariant, the vDSO's CLOCK_MONOTONIC otherwise.
pub fn clock_source() -> &'static str {
    let flags = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let line = flags.lines().find(|l| l.starts_with("flags")).unwrap_or("");
    let has = |f: &str| line.split_whitespace().any(|x| x == f);
    if has("constant_tsc") && has("nonstop_tsc") && has("rdtscp") { "tsc" } else { "clock_monotonic" }
}

/// Writes to stdout; a closed pipe (`nvmebench run | head`) is not an error.
pub fn write_stdout(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e).context("cannot write to stdout"),
        _ => Ok(()),
    }
}

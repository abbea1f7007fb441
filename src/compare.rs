//! `nvmebench compare`: one workload through several engines in turn, and one table with a column
//! per engine.
//!
//! Every engine gets the same resolved flags (seed, offsets, cores, queue depth, duration), so the
//! columns differ only in the I/O path; psync alone runs at queue depth 1, which its column says. All
//! engines are resolved and checked before the first one runs, so a bad engine in the list costs
//! nothing. For an NVMe namespace, `uring-cmd` runs on the generic device (`/dev/ngXnY`) and the
//! others on the block device (`/dev/nvmeXnY`), whichever of the two was given.
//!
//! With several targets (`--filename` repeated or a `:` list), every engine runs on all of them at
//! once, placed as `run` places them, and the report adds each target's figures per engine.
//!
//! With `--rebind`, the namespace's PCIe function goes to vfio-pci for the SPDK runs and back to
//! its kernel driver for the others and at the end, whatever happens ([`crate::rebind`]); it hands
//! over one namespace, so it takes one target.
//!
//! With `--rates` or `--curve` every engine runs at each of several offered loads, open-loop
//! (latency from each I/O's due time) or closed (`max`), and the report has one table per load
//! with the cores used and the CPU per I/O; `loads` names, per load, the engine with the lowest p99
//! and the one with the lowest CPU, when one is clear of the noise.

use crate::cli::{CompareArgs, RunArgs};
use crate::config::{ConfigError, EngineSpec, RunConfig, format_core_list};
use crate::coordinator::RunResult;
use crate::launch::SpdkRun;
use crate::options::Load;
use crate::options::OutputFormat;
use crate::rebind::{PcieNamespace, Rebind};
use crate::report::doc::{
    CompareDocument, CompareLatency, CompareLoad, CompareLoadEntry, CompareRatios, CompareRun, CompareSummary,
    CompareTargetSummary, Tool,
};
use crate::report::{self, format_count, format_latency, live::LiveLine, rates};
use crate::run::{
    Outcome, SetupError, check_json_dir, clock_source, execute, install_signal_handlers, resolve, write_stdout,
};
use crate::stats::DirStats;
use crate::target::{self, RemoveOnDrop, TargetKind};
use crate::units::format_size;
use anyhow::Context;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

mod loads;

/// Engine names that start a new entry in an `--engines` list (anything else after a comma is an
/// option of the engine before it, as in `uring:fixedbufs=0,regfile=0,aio`).
const ENGINE_NAMES: &[&str] =
    &["null", "uring", "io_uring", "uring-cmd", "io_uring_cmd", "aio", "libaio", "posixaio", "psync", "spdk"];

/// Percentiles in the table.
const TABLE_PERCENTILES: [(f64, &str); 4] = [(50.0, "p50"), (99.0, "p99"), (99.9, "p99.9"), (99.99, "p99.99")];

/// Splits `psync,aio,uring:fixedbufs=0,regfile=0,uring:poll` into engine specs.
pub fn split_engines(text: &str) -> Result<Vec<String>, ConfigError> {
    let mut out: Vec<String> = Vec::new();
    for part in text.split(',').map(str::trim) {
        if part.is_empty() {
            return Err(ConfigError::Invalid {
                option: "engines",
                message: format!("'{text}' has an empty entry; list engines separated by commas, like psync,aio,uring"),
            });
        }
        let name = part.split(':').next().unwrap_or(part);
        match out.last_mut() {
            // An option list continues only after an engine that has one.
            Some(last) if !ENGINE_NAMES.contains(&name) && last.contains(':') => {
                last.push(',');
                last.push_str(part);
            }
            _ => out.push(part.to_string()),
        }
    }
    Ok(out)
}

/// One engine's run (at one load), for the table and the JSON.
struct Column {
    spec: String,
    /// Its engine's position in the list.
    engine: usize,
    /// With `--rates` or `--curve`, the load it was offered.
    load: Option<Load>,
    cfg: RunConfig,
    result: RunResult,
    /// Reads and writes together.
    all: DirStats,
}

/// Runs `nvmebench compare` and writes its report.
pub fn compare_command(args: &CompareArgs) -> anyhow::Result<Outcome> {
    if args.run.fleet.fleet.is_some() {
        let why = "--fleet gathers one workload from many processes, which compare does not run; run the fleet with `nvmebench run --fleet DIR` once per engine, and compare the fleets' fleet.json with `nvmebench report`";
        return Err(SetupError::from(crate::fleet::FleetError::Usage(why.into())).into());
    }
    let filenames = crate::config::split_filenames(&args.run.filename)?;
    if args.rebind && filenames.len() > 1 {
        return Err(SetupError::from(ConfigError::Invalid {
            option: "rebind",
            message: format!(
                "it hands one namespace to vfio-pci and back, and this compare has {} targets; give one --filename with --rebind, or bind the devices yourself (scripts/nvme-bind.sh) and give --trid",
                filenames.len()
            ),
        })
        .into());
    }
    let schedule = plan_schedule(args)?;
    let (specs, engines) = parse_engines(args)?;
    let mut rebind = plan_rebind(args, &engines)?;
    let phases = resolve_phases(args, &specs, &engines, rebind.as_ref())?;
    check_json_dir(args.run.json.as_deref())?;
    let signal = install_signal_handlers()?;
    let _scratch = prepare_target(&phases)?;

    // The curve's loads are known once every engine's maximum is: the closed loop goes first.
    let first: Vec<Option<Load>> = match &schedule {
        Schedule::Plain => vec![None],
        Schedule::Rates(loads) => loads.iter().copied().map(Some).collect(),
        Schedule::Curve => vec![Some(Load::Max)],
    };
    let planned =
        specs.len() * (first.len() + if schedule == Schedule::Curve { loads::CURVE_PERCENTS.len() } else { 0 });
    let mut turns = Turns {
        args,
        quiet: args.run.quiet || args.run.output == OutputFormat::Json,
        rebind: rebind.as_mut(),
        columns: Vec::with_capacity(planned),
        planned,
        curve_base: None,
        stopped: None,
        interrupted: None,
        rebind_log: Vec::new(),
        kernel_path: args.run.filename.first().cloned(),
    };
    if turns.pass(&specs, &engines, phases, &first, &signal)? && schedule == Schedule::Curve {
        let maxima: Vec<f64> = turns.columns.iter().map(|c| figures(c).iops).collect();
        match loads::curve_loads(&maxima) {
            Some((base, curve)) => {
                turns.curve_base = Some(base);
                let later = later_phases(args, &engines, turns.rebind.as_deref());
                let curve: Vec<Option<Load>> = curve.into_iter().map(Some).collect();
                turns.pass(&specs, &engines, later, &curve, &signal)?;
            }
            None => {
                turns.stopped =
                    Some("no engine completed an I/O closed-loop; the curve has no maximum to pace at".into())
            }
        }
    }
    turns.hand_back();

    let Turns { columns, stopped, interrupted, rebind_log, curve_base, .. } = turns;
    let loads_planned = planned / specs.len().max(1);
    let report = Report {
        columns: &columns,
        specs: &specs,
        stopped: stopped.as_deref(),
        rebind: &rebind_log,
        curve_base,
        loads_planned,
    };
    write_report(args, &report)?;
    Ok(outcome(&columns, stopped.is_some(), interrupted))
}

/// How the engines are run: once each (closed loop, or paced as the flags say), at each of
/// `--rates`, or along `--curve`.
#[derive(Clone, Debug, PartialEq)]
enum Schedule {
    Plain,
    Rates(Vec<Load>),
    Curve,
}

/// `--rates` or `--curve`; with `--latency off` neither (their tables compare latencies).
fn plan_schedule(args: &CompareArgs) -> Result<Schedule, SetupError> {
    let schedule = match (&args.rates, args.curve) {
        (Some(r), _) => Schedule::Rates(r.0.clone()),
        (None, true) => Schedule::Curve,
        (None, false) => Schedule::Plain,
    };
    if schedule != Schedule::Plain && !crate::config::resolve_latency(&args.run).stamps() {
        let flag = if args.curve { "--curve" } else { "--rates" };
        return Err(SetupError::from(ConfigError::Invalid {
            option: "latency",
            message: format!(
                "off measures no latency, and {flag} compares each engine's latency percentiles at each load; drop {flag}, or use --latency total"
            ),
        }));
    }
    Ok(schedule)
}

/// The phases of a second pass (the curve's paced loads): each resolved at its turn, since the
/// namespace may be on vfio-pci or renamed by then.
fn later_phases(args: &CompareArgs, engines: &[EngineSpec], rebind: Option<&Rebind>) -> Vec<Phase> {
    engines
        .iter()
        .map(|engine| {
            let mut run = kernel_args(&args.run, engine, None);
            if let Some(r) = rebind.filter(|_| engine.is_spdk()) {
                run.filename = Vec::new();
                run.spdk.trids = vec![r.namespace().trid()];
            }
            Phase::Deferred(Box::new(run))
        })
        .collect()
}

/// The engine list: `--engine` is refused (compare takes its engines from `--engines`), and every
/// entry must parse.
fn parse_engines(args: &CompareArgs) -> Result<(Vec<String>, Vec<EngineSpec>), SetupError> {
    if args.run.engine.is_some() {
        return Err(SetupError::from(ConfigError::Invalid {
            option: "engine",
            message: "compare takes its engines from --engines LIST; drop --engine".into(),
        }));
    }
    if let Some(what) = args.run.fio.first_given() {
        return Err(SetupError::from(ConfigError::Invalid {
            option: "engines",
            message: format!("compare does not take {what}; use `nvmebench run` for it"),
        }));
    }
    let specs = split_engines(&args.engines).map_err(SetupError::from)?;
    let engines =
        specs.iter().map(|s| EngineSpec::parse(s)).collect::<Result<Vec<_>, _>>().map_err(SetupError::from)?;
    Ok((specs, engines))
}

/// Resolves and checks every engine before anything is created or run. With --rebind the SPDK
/// phases attach only once the function is theirs; everything that can be checked before is. Of
/// several SPDK phases (`spdk,spdk:interrupt`), only the first attaches here: a controller is
/// attached once per process, and each phase attaches it with options of its own (interrupts), so
/// a later one attaches at its turn, once the earlier session has let it go.
fn resolve_phases(
    args: &CompareArgs,
    specs: &[String],
    engines: &[EngineSpec],
    rebind: Option<&Rebind>,
) -> Result<Vec<Phase>, SetupError> {
    let mut phases = Vec::with_capacity(specs.len());
    let mut attached = false;
    for (spec, engine) in specs.iter().zip(engines) {
        if let Some(r) = rebind.filter(|_| engine.is_spdk()) {
            let mut run = args.run.clone();
            run.filename = Vec::new();
            run.spdk.trids = vec![r.namespace().trid()];
            phases.push(Phase::Deferred(Box::new(run)));
            continue;
        }
        if engine.is_spdk() && std::mem::replace(&mut attached, true) {
            // Checked now with every flag but the attach, which waits for its turn.
            crate::config::RunConfig::resolve_engine(&kernel_args(&args.run, engine, None), spec).map(drop).or_else(
                |e| match e {
                    ConfigError::Engine(_) => Ok(()),
                    e => Err(e),
                },
            )?;
            phases.push(Phase::Deferred(Box::new(kernel_args(&args.run, engine, None))));
            continue;
        }
        let run = kernel_args(&args.run, engine, None);
        // The SPDK engine attaches its controllers here, so a missing target fails before any run.
        let (cfg, spdk) = resolve(&run, spec)?;
        phases.push(Phase::Ready(Box::new(cfg), spdk));
    }
    Ok(phases)
}

/// Readies the targets of the first resolved phase that has any (the null engine may have none),
/// which every kernel engine shares: new files are created now, a scratch file is removed when the
/// returned guard drops (at the end of the compare).
fn prepare_target(phases: &[Phase]) -> Result<Option<RemoveOnDrop>, SetupError> {
    let first = phases.iter().find_map(|p| match p {
        Phase::Ready(cfg, _) if !cfg.targets.is_empty() => Some(cfg),
        Phase::Ready(..) | Phase::Deferred(_) => None,
    });
    let scratch = first
        .filter(|c| c.scratch)
        .map(|c| RemoveOnDrop(c.target.as_ref().expect("scratch runs have a target").path.clone()));
    for t in first.iter().flat_map(|c| &c.targets).filter(|t| t.kind == TargetKind::NewFile) {
        target::prepare_file(t).map_err(|e| SetupError::Config(e.into()))?;
    }
    Ok(scratch)
}

/// What the engines' turns carry from one to the next.
struct Turns<'a> {
    args: &'a CompareArgs,
    quiet: bool,
    rebind: Option<&'a mut Rebind>,
    columns: Vec<Column>,
    /// How many runs the comparison plans (engines times loads), for the progress lines.
    planned: usize,
    /// With `--curve`, once every engine's maximum is known: the slowest one's.
    curve_base: Option<f64>,
    /// Why the comparison ended before the last engine, or what went wrong handing the function back.
    stopped: Option<String>,
    /// A signal that came between two engines' runs (before the later one's workers started).
    interrupted: Option<i32>,
    rebind_log: Vec<String>,
    /// Where the kernel shows the namespace now (it may come back under another name after SPDK).
    kernel_path: Option<PathBuf>,
}

impl Turns<'_> {
    /// Every engine in turn, each at every one of `loads` before the next engine's turn (one
    /// hand-over per engine). `Ok(false)`: the comparison ended early.
    fn pass(
        &mut self,
        specs: &[String],
        engines: &[EngineSpec],
        phases: Vec<Phase>,
        loads: &[Option<Load>],
        signal: &Arc<AtomicUsize>,
    ) -> anyhow::Result<bool> {
        for (i, ((spec, engine), phase)) in specs.iter().zip(engines).zip(phases).enumerate() {
            if !self.take(i, spec, engine, phase, loads, signal)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// One engine's turn: hand over, run at each load, and keep each run's column. `Ok(false)`
    /// ends the comparison (a signal, or a later run that could not start).
    fn take(
        &mut self,
        index: usize,
        spec: &str,
        engine: &EngineSpec,
        phase: Phase,
        loads: &[Option<Load>],
        signal: &Arc<AtomicUsize>,
    ) -> anyhow::Result<bool> {
        let (cfg, spdk) = match self.hand_over(spec, engine, phase) {
            Ok(r) => r,
            Err(e) => return self.could_not_start(spec, e),
        };
        for load in loads {
            let mut cfg = cfg.clone();
            let what = match load {
                Some(l) => {
                    cfg.rate_iops = l.iops();
                    format!("{spec} at {}", load_label(*l, self.curve_base))
                }
                None => spec.to_string(),
            };
            if !self.quiet {
                eprintln!("nvmebench: compare: {what} ({} of {})", self.columns.len() + 1, self.planned);
            }
            let live = LiveLine::new(
                crate::run::live_mode(&self.args.run, self.quiet),
                crate::report::live::Plan { ramp: cfg.ramp, runtime: cfg.runtime },
            );
            let result = match execute(&cfg, spdk.as_ref(), signal.clone(), &live) {
                Ok(r) => r,
                Err(e) => return self.could_not_start(&what, e),
            };
            live.finish();
            let all = result.total.all();
            let interrupted = result.interrupted_by.is_some();
            self.columns.push(Column { spec: spec.to_string(), engine: index, load: *load, cfg, result, all });
            if interrupted {
                self.stopped = Some(format!("interrupted during {what}; nothing after it ran"));
                return Ok(false);
            }
        }
        // The SPDK session (and with it the controller) goes before any hand-back. Without the spdk
        // feature there is never a session, hence the allow.
        #[allow(clippy::drop_non_drop)]
        drop(spdk);
        Ok(true)
    }

    /// A run that could not start: for the first, nothing has run yet, so it is a plain set-up
    /// error (exit 2); a later one ends the comparison, whose report shows what ran.
    /// A signal before the run's workers started ends the comparison the same way, but as an
    /// interruption (exit 128 + the signal).
    fn could_not_start(&mut self, spec: &str, e: SetupError) -> anyhow::Result<bool> {
        if self.columns.is_empty() {
            return Err(e.into());
        }
        self.stopped = Some(match e.interrupted_by() {
            Some(sig) => {
                self.interrupted = Some(sig);
                format!("interrupted before {spec} started; nothing from it on ran")
            }
            None => format!("{spec} could not start: {e}"),
        });
        Ok(false)
    }

    /// Hands the function to whoever runs next, and resolves what could not be resolved before: a
    /// deferred SPDK phase once vfio-pci has it, a kernel phase whose namespace came back renamed,
    /// a later pass's phase at its turn.
    fn hand_over(
        &mut self,
        spec: &str,
        engine: &EngineSpec,
        phase: Phase,
    ) -> Result<(RunConfig, Option<SpdkRun>), SetupError> {
        match (phase, self.rebind.as_deref_mut()) {
            (Phase::Deferred(run), Some(r)) if engine.is_spdk() => r
                .to_userspace()
                .map_err(SetupError::from)
                .inspect(|()| self.rebind_log.push(format!("{}: to vfio-pci for {spec}", r.namespace().bdf)))
                .and_then(|()| resolve(&run, spec)),
            (phase, Some(r)) if !engine.is_spdk() => {
                let (dev, moved) = r.to_kernel()?;
                if moved {
                    let bdf = &r.namespace().bdf;
                    self.rebind_log.push(format!("{bdf}: back on the kernel as {} for {spec}", dev.display()));
                }
                match phase {
                    Phase::Ready(cfg, spdk) if Some(&dev) == self.kernel_path.as_ref() => Ok((*cfg, spdk)),
                    _ => {
                        self.kernel_path = Some(dev);
                        resolve(&kernel_args(&self.args.run, engine, self.kernel_path.as_deref()), spec)
                    }
                }
            }
            (Phase::Ready(cfg, spdk), _) => Ok((*cfg, spdk)),
            // A later SPDK phase (the earlier session is gone, the controller free to attach), or a
            // later pass's phase.
            (Phase::Deferred(run), _) => resolve(&run, spec),
        }
    }

    /// Always back to the kernel before the report, so that it can say so; a failure there stops
    /// the comparison unless something already had.
    fn hand_back(&mut self) {
        if let Some(r) = self.rebind.as_deref_mut().filter(|r| r.lent()) {
            match r.to_kernel() {
                Ok((dev, true)) => {
                    self.rebind_log.push(format!("{}: back on the kernel as {}", r.namespace().bdf, dev.display()))
                }
                Ok((_, false)) => {}
                Err(e) => {
                    self.rebind_log.push(format!("{}: {e}", r.namespace().bdf));
                    self.stopped.get_or_insert_with(|| e.to_string());
                }
            }
        }
    }
}

/// What the report is made of.
struct Report<'a> {
    columns: &'a [Column],
    specs: &'a [String],
    stopped: Option<&'a str>,
    rebind: &'a [String],
    /// With `--curve`: the slowest engine's closed-loop IOPS, which its loads are shares of.
    curve_base: Option<f64>,
    /// How many runs each engine was to make (1 without loads).
    loads_planned: usize,
}

/// Writes the JSON document with `--json`, and the report on stdout in `--output`'s format.
fn write_report(args: &CompareArgs, report: &Report<'_>) -> anyhow::Result<()> {
    let clock = clock_source();
    let doc = render_json(report, clock);
    if let Some(p) = &args.run.json {
        let text = serde_json::to_string_pretty(&doc).expect("a result document always serialises");
        std::fs::write(p, text + "\n").with_context(|| format!("cannot write {}", p.display()))?;
    }
    let out = match args.run.output {
        OutputFormat::Text => render_text(report, args.run.qd, clock, &doc.loads),
        OutputFormat::Json => serde_json::to_string_pretty(&doc).expect("a result document always serialises") + "\n",
    };
    write_stdout(&out)
}

/// The exit status: a signal first (during a run or between two), then I/O errors or an engine
/// that did not run, else clean.
fn outcome(columns: &[Column], stopped: bool, between: Option<i32>) -> Outcome {
    let sig = columns.iter().find_map(|c| c.result.interrupted_by).or(between);
    let errors = columns.iter().any(|c| c.result.failed());
    match (sig, errors || stopped) {
        (Some(sig), _) => Outcome::Interrupted(sig),
        (None, true) => Outcome::IoErrors,
        (None, false) => Outcome::Clean,
    }
}

/// One engine's turn: resolved up front, or at its turn (an SPDK phase under --rebind once the
/// function is bound to vfio-pci, an SPDK phase after another, every phase of the curve's second
/// pass).
enum Phase {
    Ready(Box<RunConfig>, Option<SpdkRun>),
    Deferred(Box<RunArgs>),
}

/// The flags of a kernel engine's turn: `uring-cmd` on the generic device, the others on the block
/// device, whichever of the two was given, for every target. `path` replaces the one target (the
/// namespace's current name after a hand-back).
fn kernel_args(run: &RunArgs, engine: &EngineSpec, path: Option<&Path>) -> RunArgs {
    let mut run = run.clone();
    if !engine.is_spdk() {
        run.spdk = Default::default();
    }
    if let Some(path) = path {
        run.filename = vec![path.to_path_buf()];
    }
    // A list that does not split is left as given, for `resolve` to refuse in its own words.
    if let Ok(paths) = crate::config::split_filenames(&run.filename) {
        let generic = matches!(engine, EngineSpec::UringCmd(_));
        run.filename = paths
            .into_iter()
            .map(|path| {
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                let is_ng = name.starts_with("ng");
                if generic != is_ng && (is_ng || name.starts_with("nvme")) {
                    if let Some(sibling) = target::nvme_sibling(&path) {
                        return sibling;
                    }
                }
                // A name with a colon goes back escaped, as the user would type it.
                match path.to_str().filter(|p| p.contains(':')) {
                    Some(p) => PathBuf::from(p.replace(':', "\\:")),
                    None => path,
                }
            })
            .collect();
    }
    run
}

/// Checks `--rebind` against the engine list and the target, before anything runs: the function
/// it would hand over, or why not (one sentence each).
fn plan_rebind(args: &CompareArgs, engines: &[EngineSpec]) -> Result<Option<Rebind>, SetupError> {
    let has_spdk = engines.iter().any(EngineSpec::is_spdk);
    if let Some(flag) = args.run.spdk.first_given().filter(|_| !has_spdk) {
        return Err(ConfigError::Invalid {
            option: "engines",
            message: format!("{flag} is an option of the spdk engine, and the list has none; drop it or add spdk"),
        }
        .into());
    }
    let kernel_ns = crate::config::split_filenames(&args.run.filename)
        .unwrap_or_default()
        .iter()
        .find_map(|p| PcieNamespace::of_device(p, Path::new("/sys")).ok());
    if !args.rebind {
        if let (true, Some(ns), true) = (has_spdk, &kernel_ns, args.run.spdk.trids.is_empty()) {
            return Err(ConfigError::Invalid {
                option: "engines",
                message: format!(
                    "spdk cannot drive {} while the kernel's nvme driver owns {}; add --rebind to hand it to vfio-pci for the spdk runs and back, or bind it yourself (scripts/nvme-bind.sh bind {}) and give --trid",
                    args.run.filename.first().map(PathBuf::as_path).map(|p| p.display().to_string()).unwrap_or_default(),
                    ns.bdf,
                    ns.bdf
                ),
            }
            .into());
        }
        return Ok(None);
    }
    let invalid = |message: String| SetupError::from(ConfigError::Invalid { option: "rebind", message });
    if !has_spdk {
        return Err(invalid(
            "it hands the controller to the spdk engine, and --engines has none; drop --rebind or add spdk".into(),
        ));
    }
    if !args.run.spdk.trids.is_empty() {
        return Err(invalid("the spdk runs use the namespace of --filename; drop --trid".into()));
    }
    let Some(path) = args.run.filename.first().map(PathBuf::as_path) else {
        return Err(invalid("it needs the namespace's block device; add --filename /dev/nvmeXnY".into()));
    };
    let ns = PcieNamespace::of_device(path, Path::new("/sys"))?;
    #[cfg(feature = "spdk")]
    if !args.run.spdk.no_huge {
        crate::engine::spdk::env::check_hugepages().map_err(|e| invalid(e.to_string()))?;
    }
    Ok(Some(Rebind::check(ns)?))
}

/// The figures of one column, as numbers (`None` where there were no I/Os).
struct Figures {
    iops: f64,
    /// Bytes per second, as the run's document has it (MB/s is only how the text prints it, so
    /// the summary never round-trips through it).
    bw_bytes: f64,
    mean_ns: Option<f64>,
    percentiles_ns: Vec<Option<f64>>,
    max_ns: Option<f64>,
    cpu_ns_per_io: Option<f64>,
    /// The run's cores used over its measured window (`results.cost`); `None` for a target's
    /// figures and for a run without a cost (stopped in its ramp).
    cores_used: Option<f64>,
}

fn figures(c: &Column) -> Figures {
    let mut f = figures_of(&c.all, c.result.elapsed_ns, c.result.cpu.ns_per_io(), c.cfg.latency.stamps());
    f.cores_used = c.result.cost.as_ref().map(|k| k.cores_used());
    f
}

/// Figures of `d` over `elapsed_ns`; a target's have no CPU time of their own. Latencies are
/// `None` without I/O or without stamps (`--latency off`).
fn figures_of(d: &DirStats, elapsed_ns: u64, cpu_ns_per_io: Option<f64>, stamped: bool) -> Figures {
    let (iops, bw) = rates(d, elapsed_ns);
    let has = d.ios > 0 && stamped;
    Figures {
        iops,
        bw_bytes: bw,
        mean_ns: has.then(|| d.mean_ns()),
        percentiles_ns: TABLE_PERCENTILES.iter().map(|(p, _)| has.then(|| d.percentile_ns(*p) as f64)).collect(),
        max_ns: has.then_some(d.max_ns as f64),
        cpu_ns_per_io,
        cores_used: None,
    }
}

/// Each target's figures in a column (empty with one target: the column's own are its).
fn target_figures(c: &Column) -> Vec<Figures> {
    if c.result.targets.len() < 2 {
        return Vec::new();
    }
    c.result.targets.iter().map(|t| figures_of(&t.stats.all(), t.elapsed_ns, None, c.cfg.latency.stamps())).collect()
}

fn ratio(v: Option<f64>, base: Option<f64>) -> Option<f64> {
    match (v, base) {
        (Some(v), Some(b)) if b > 0.0 => Some(v / b),
        _ => None,
    }
}

fn render_text(report: &Report<'_>, qd: u32, clock: &str, loads: &[CompareLoad]) -> String {
    let (columns, stopped, rebind) = (report.columns, report.stopped, report.rebind);
    let mut out = String::new();
    let Some(first) = columns.first() else {
        return "nothing ran\n".into();
    };
    let (cfg, w) = (&first.cfg, &first.cfg.workload);
    let target = match &cfg.target {
        Some(t) if cfg.scratch => format!("scratch {}", t.describe()),
        _ if cfg.targets.len() > 1 => format!(
            "{} targets: {}",
            cfg.targets.len(),
            cfg.targets.iter().map(|t| t.path.display().to_string()).collect::<Vec<_>>().join(", ")
        ),
        Some(t) => t.describe(),
        None => "no target".into(),
    };
    let _ = writeln!(out, "nvmebench {} compare on {target}", env!("CARGO_PKG_VERSION"));
    let _ = writeln!(
        out,
        "{} bs={} qd={} workers={} (cores {}) range={}+{} seed={:#x} clock={clock}",
        w.rw,
        w.bs_text(),
        qd,
        cfg.cores.len(),
        format_core_list(&cfg.cores),
        format_size(w.range_start),
        format_size(w.range_bytes),
        w.seed
    );
    out.push('\n');
    if loads.is_empty() {
        plain_table(&mut out, columns);
        out.push('\n');
        for c in columns {
            let _ = writeln!(out, "{}: {}", c.spec, c.result.engine);
            if let Some(f) = &c.result.failure {
                let _ = writeln!(out, "  run failed: {f}; partial results");
            }
        }
        let _ = writeln!(
            out,
            "CPU per I/O is the whole process's user+sys time (getrusage) over the run, ramp included, divided by the I/Os completed in it; cores used is the counted cores' busy time over the measured window (see `run`'s cost line)."
        );
    } else {
        load_tables(&mut out, report, loads);
    }
    for r in rebind {
        let _ = writeln!(out, "rebind: {r}");
    }
    if let Some(s) = stopped {
        let _ = writeln!(out, "stopped early: {s}");
    }
    out
}

/// One column per run: the figures, then each one's ratio to the first run's.
fn plain_table(out: &mut String, columns: &[Column]) {
    let width = columns.iter().map(|c| c.spec.len() + 2).max().unwrap_or(0).max(12);
    let figs: Vec<Figures> = columns.iter().map(figures).collect();
    let base = &figs[0];
    let row = |out: &mut String, label: &str, cell: &dyn Fn(&Column, &Figures) -> String| {
        let _ = write!(out, "{label:<16}");
        for (c, f) in columns.iter().zip(&figs) {
            let _ = write!(out, "{:>width$}", cell(c, f));
        }
        out.push('\n');
    };
    let lat = |v: Option<f64>| v.map_or("-".to_string(), format_latency);
    let times = |v: Option<f64>| v.map_or("-".to_string(), |r| format!("{r:.2}x"));
    row(out, "", &|c, _| c.spec.clone());
    row(out, "qd", &|c, _| c.cfg.queue_depth.to_string());
    row(out, "measured", &|c, _| format!("{:.2}s", c.result.elapsed_ns as f64 / 1e9));
    row(out, "IOPS", &|_, f| format_count(f.iops));
    row(out, "MB/s", &|_, f| format!("{:.1}", f.bw_bytes / 1e6));
    row(out, "lat mean", &|_, f| lat(f.mean_ns));
    for (i, (_, name)) in TABLE_PERCENTILES.iter().enumerate() {
        row(out, &format!("lat {name}"), &|_, f| lat(f.percentiles_ns[i]));
    }
    row(out, "lat max", &|_, f| lat(f.max_ns));
    row(out, "CPU per I/O", &|_, f| lat(f.cpu_ns_per_io));
    row(out, "cores used", &|_, f| f.cores_used.map_or("-".to_string(), |u| format!("{u:.3}")));
    row(out, "errors", &|c, _| c.result.error_count().to_string());
    let _ = writeln!(out, "ratio to {}:", columns[0].spec);
    row(out, "  IOPS", &|_, f| times(ratio(Some(f.iops), Some(base.iops))));
    row(out, "  lat mean", &|_, f| times(ratio(f.mean_ns, base.mean_ns)));
    row(out, "  lat p99", &|_, f| times(ratio(f.percentiles_ns[1], base.percentiles_ns[1])));
    row(out, "  CPU per I/O", &|_, f| times(ratio(f.cpu_ns_per_io, base.cpu_ns_per_io)));
    target_rows(out, columns, width);
}

/// A row of figures: its label and how a cell is written.
type FigureRow<'a> = (&'a str, &'a dyn Fn(&Figures) -> String);

/// With several targets, each target's IOPS, mean and p99 under every engine.
fn target_rows(out: &mut String, columns: &[Column], width: usize) {
    let per: Vec<Vec<Figures>> = columns.iter().map(target_figures).collect();
    let Some(targets) = columns.first().map(|c| &c.cfg.targets).filter(|_| per.iter().any(|p| !p.is_empty())) else {
        return;
    };
    let lat = |v: Option<f64>| v.map_or("-".to_string(), format_latency);
    for (t, target) in targets.iter().enumerate() {
        let _ = writeln!(out, "target {t}: {}", target.path.display());
        let rows: [FigureRow<'_>; 4] = [
            ("  IOPS", &|f| format_count(f.iops)),
            ("  MB/s", &|f| format!("{:.1}", f.bw_bytes / 1e6)),
            ("  lat mean", &|f| lat(f.mean_ns)),
            ("  lat p99", &|f| lat(f.percentiles_ns[1])),
        ];
        for (label, cell) in rows {
            let _ = write!(out, "{label:<16}");
            for p in &per {
                let _ = write!(out, "{:>width$}", p.get(t).map_or("-".to_string(), cell));
            }
            out.push('\n');
        }
    }
}

fn render_json(report: &Report<'_>, clock: &str) -> CompareDocument {
    let columns = report.columns;
    let figs: Vec<Figures> = columns.iter().map(figures).collect();
    // Ratios are to the first engine at the same load (the first run, without loads).
    let base_of = |c: &Column| columns.iter().position(|b| b.load == c.load).unwrap_or(0);
    let summary = columns
        .iter()
        .zip(&figs)
        .map(|(c, f)| {
            let b = base_of(c);
            let base = figs.get(b);
            let first_targets = target_figures(&columns[b]);
            CompareSummary {
                targets: c
                    .cfg
                    .targets
                    .iter()
                    .zip(target_figures(c))
                    .enumerate()
                    .map(|(t, (target, f))| {
                        let base = first_targets.get(t);
                        CompareTargetSummary {
                            target: t,
                            path: target.path.display().to_string(),
                            iops: f.iops,
                            bw_bytes: f.bw_bytes,
                            lat_ns: latency(&f),
                            errors: c.result.targets[t].stats.errors.total(),
                            ratio_to_first: CompareRatios {
                                iops: base.and_then(|b| ratio(Some(f.iops), Some(b.iops))),
                                lat_mean: base.and_then(|b| ratio(f.mean_ns, b.mean_ns)),
                                lat_p99: base.and_then(|b| ratio(f.percentiles_ns[1], b.percentiles_ns[1])),
                                cpu_per_io: None,
                            },
                        }
                    })
                    .collect(),
                engine: c.spec.clone(),
                queue_depth: c.cfg.queue_depth,
                iops: f.iops,
                bw_bytes: f.bw_bytes,
                lat_ns: latency(f),
                cpu_ns_per_io: f.cpu_ns_per_io,
                cores_used: f.cores_used,
                load: c.load.map(|l| load_label(l, report.curve_base)),
                errors: c.result.error_count(),
                ratio_to_first: CompareRatios {
                    iops: base.and_then(|b| ratio(Some(f.iops), Some(b.iops))),
                    lat_mean: base.and_then(|b| ratio(f.mean_ns, b.mean_ns)),
                    lat_p99: base.and_then(|b| ratio(f.percentiles_ns[1], b.percentiles_ns[1])),
                    cpu_per_io: base.and_then(|b| ratio(f.cpu_ns_per_io, b.cpu_ns_per_io)),
                },
            }
        })
        .collect();
    let runs = columns
        .iter()
        .map(|c| CompareRun { engine_spec: c.spec.clone(), run: report::json::document(&c.cfg, &c.result, clock) })
        .collect();
    let loads = load_entries(columns, &figs, report.curve_base);
    // An engine has completed when it ran at every load planned for it.
    let completed = (0..report.specs.len())
        .filter(|&i| columns.iter().filter(|c| c.engine == i).count() >= report.loads_planned)
        .count();
    CompareDocument {
        schema_version: report::json::SCHEMA_VERSION,
        tool: Tool::this(),
        command: "compare".into(),
        engines: report.specs.to_vec(),
        completed,
        stopped_early: report.stopped.map(str::to_string),
        rebind: report.rebind.to_vec(),
        summary,
        runs,
        load_rule: (!loads.is_empty()).then(|| loads::RULE.to_string()),
        curve_base_iops: report.curve_base,
        loads,
    }
}

/// The percentiles of a load's table.
const LOAD_PERCENTILES: [(f64, &str); 3] = [(50.0, "p50"), (99.0, "p99"), (99.9, "p99.9")];

/// Every load's entries, paced loads from the lowest up and `max` last, with each load's verdicts.
fn load_entries(columns: &[Column], figs: &[Figures], curve_base: Option<f64>) -> Vec<CompareLoad> {
    let mut keys: Vec<Load> = Vec::new();
    for l in columns.iter().filter_map(|c| c.load) {
        if !keys.contains(&l) {
            keys.push(l);
        }
    }
    keys.sort_by(|a, b| match (a.iops(), b.iops()) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (x, y) => y.is_some().cmp(&x.is_some()),
    });
    keys.into_iter().map(|load| load_entry(load, columns, figs, curve_base)).collect()
}

/// A load as reports name it: `10k`, `max`, and on a curve its share of the base, `10%`.
fn load_label(load: Load, curve_base: Option<f64>) -> String {
    match (load, curve_base) {
        (Load::Iops(r), Some(base)) if base > 0.0 => format!("{:.0}%", r / base * 100.0),
        _ => load.label(),
    }
}

fn load_entry(load: Load, columns: &[Column], figs: &[Figures], curve_base: Option<f64>) -> CompareLoad {
    let mut engines = Vec::new();
    let mut p99 = Vec::new();
    let mut cpu = Vec::new();
    for (i, (c, f)) in columns.iter().zip(figs).enumerate().filter(|(_, (c, _))| c.load == Some(load)) {
        let cost = c.result.cost.as_ref();
        let timed = c.cfg.latency.stamps() && c.all.ios > 0;
        let interval = if timed { loads::quantile_interval(&c.all, 0.99) } else { None };
        let margin = cost.map(|k| match &k.cores {
            Some(cores) => loads::cores_margin(k.tick_ns, cores.counted.len(), k.window_ns),
            // getrusage's thread times are in whole microseconds.
            None => loads::cores_margin(1_000, k.workers.len(), k.window_ns),
        });
        let e = CompareLoadEntry {
            engine: c.spec.clone(),
            run: i,
            iops: f.iops,
            reached: loads::reached(load, f.iops),
            lat_ns: LOAD_PERCENTILES
                .iter()
                .map(|(p, _)| (report::percentile_key(*p), timed.then(|| c.all.percentile_ns(*p) as f64)))
                .collect(),
            p99_interval_ns: interval.map(|(lo, hi)| [lo, hi]),
            cores_used: cost.map(|k| k.cores_used()),
            cores_used_margin: margin,
            cpu_ns_per_io: cost.and_then(|k| k.ns_per_io()),
            thread_cores_used: cost.map(|k| k.threads.cores_used),
            errors: c.result.error_count(),
        };
        p99.push(match (e.reached, interval) {
            (true, Some((lo, hi))) => Some(loads::Figure { value: c.all.percentile_ns(99.0) as f64, lo, hi }),
            _ => None,
        });
        cpu.push(match (e.reached, e.cores_used, margin) {
            (false, ..) | (_, None, _) | (_, _, None) => None,
            (true, Some(used), Some(m)) => match load {
                Load::Iops(_) => Some(loads::Figure { value: used, lo: used - m, hi: used + m }),
                // Closed, every engine runs flat out: what differs is the CPU each I/O took.
                Load::Max => e.cpu_ns_per_io.filter(|_| used > 0.0).map(|per| {
                    let m = m * per / used;
                    loads::Figure { value: per, lo: per - m, hi: per + m }
                }),
            },
        });
        engines.push(e);
    }
    let names: Vec<String> = engines.iter().map(|e| e.engine.clone()).collect();
    let p99_verdict = loads::lowest(&p99);
    let cpu_verdict = loads::lowest(&cpu);
    let show_p99 = |i: usize| {
        let f = p99[i].expect("a verdict names candidates");
        format!("{}, 95% {}-{}", format_latency(f.value), format_latency(f.lo), format_latency(f.hi))
    };
    let show_cpu = |i: usize| {
        let f = cpu[i].expect("a verdict names candidates");
        match load {
            Load::Iops(_) => format!("{:.3} +- {:.3} cores", f.value, f.hi - f.value),
            Load::Max => format!("{} +- {} per I/O", format_latency(f.value), format_latency(f.hi - f.value)),
        }
    };
    let named = |v: &loads::Verdict| match v {
        loads::Verdict::Lowest(i) => Some(names[*i].clone()),
        _ => None,
    };
    CompareLoad {
        load: load_label(load, curve_base),
        offered_iops: load.iops(),
        lowest_p99: named(&p99_verdict),
        lowest_cpu: named(&cpu_verdict),
        p99_verdict: loads::describe("p99", &p99_verdict, &names, &show_p99),
        cpu_verdict: loads::describe("CPU", &cpu_verdict, &names, &show_cpu),
        engines,
    }
}

/// One table per load (from the JSON's own entries, so the two agree), then what the figures
/// mean and how the verdicts are reached.
fn load_tables(out: &mut String, report: &Report<'_>, loads: &[CompareLoad]) {
    let width = report.specs.iter().map(|s| s.len() + 2).max().unwrap_or(0).max(12);
    let lat = |v: Option<f64>| v.map_or("-".to_string(), format_latency);
    let fixed = |v: Option<f64>| v.map_or("-".to_string(), |u| format!("{u:.3}"));
    for l in loads {
        match l.offered_iops {
            Some(r) => {
                let _ = writeln!(out, "load {}: {} IOPS offered in total, open loop", l.load, format_count(r.round()));
            }
            None => {
                let _ = writeln!(out, "load max: closed loop");
            }
        }
        let row = |out: &mut String, label: &str, cell: &dyn Fn(&CompareLoadEntry) -> String| {
            let _ = write!(out, "{label:<16}");
            for e in &l.engines {
                let _ = write!(out, "{:>width$}", cell(e));
            }
            out.push('\n');
        };
        row(out, "", &|e| e.engine.clone());
        row(out, "IOPS", &|e| format_count(e.iops));
        if l.offered_iops.is_some() {
            row(out, "reached", &|e| if e.reached { "yes" } else { "no" }.to_string());
        }
        for (p, name) in LOAD_PERCENTILES {
            let key = report::percentile_key(p);
            row(out, &format!("lat {name}"), &|e| lat(e.lat_ns.get(&key).copied().flatten()));
        }
        row(out, "cores used", &|e| fixed(e.cores_used));
        row(out, "CPU per I/O", &|e| lat(e.cpu_ns_per_io));
        row(out, "worker threads", &|e| fixed(e.thread_cores_used));
        row(out, "errors", &|e| e.errors.to_string());
        let _ = writeln!(out, "{}\n{}\n", l.p99_verdict, l.cpu_verdict);
    }
    let mut seen: Vec<&str> = Vec::new();
    for c in report.columns {
        if !seen.contains(&c.spec.as_str()) {
            seen.push(&c.spec);
            let _ = writeln!(out, "{}: {}", c.spec, c.result.engine);
        }
        if let Some(f) = &c.result.failure {
            let at = c.load.map(|l| format!(" at {}", load_label(l, report.curve_base))).unwrap_or_default();
            let _ = writeln!(out, "  {}{at}: run failed: {f}; partial results", c.spec);
        }
    }
    if let Some(base) = report.curve_base {
        let _ = writeln!(
            out,
            "curve: loads at 10..100% of the slowest engine's closed-loop maximum, {} IOPS.",
            format_count(base)
        );
    }
    let _ = writeln!(
        out,
        "Paced loads are open loop: each I/O is due at its time and its latency counts from then, so an engine that falls behind shows it as latency. cores used is the counted cores' busy time (user, system, irq, softirq) per second of the measured window: the workers' cores, those the process's io_uring threads may run on, and those that took the target's interrupts (each run's results.cost names them); CPU per I/O is that time per I/O; worker threads is the workers' own user+system time per second."
    );
    let _ = writeln!(out, "{}", loads::RULE);
}

fn latency(f: &Figures) -> CompareLatency {
    CompareLatency {
        mean: f.mean_ns,
        percentiles: TABLE_PERCENTILES
            .iter()
            .zip(&f.percentiles_ns)
            .map(|((p, _), v)| (report::percentile_key(*p), *v))
            .collect(),
        max: f.max_ns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_lists_keep_options_with_their_engine() {
        assert_eq!(
            split_engines("psync,aio,uring,uring:poll,uring-cmd:poll").unwrap(),
            ["psync", "aio", "uring", "uring:poll", "uring-cmd:poll"]
        );
        assert_eq!(
            split_engines("uring:fixedbufs=0,regfile=0,aio, uring:sqpoll,sqpoll_cpu=1").unwrap(),
            ["uring:fixedbufs=0,regfile=0", "aio", "uring:sqpoll,sqpoll_cpu=1"]
        );
        assert!(split_engines("uring,,aio").unwrap_err().to_string().contains("has an empty entry"));
        // Without an option list before it, an unknown word is an engine of its own (and is refused
        // as one when parsed).
        assert_eq!(split_engines("uring,bogus").unwrap(), ["uring", "bogus"]);
    }

    #[test]
    fn every_target_reaches_each_engine_as_given() {
        use clap::Parser;
        let cli =
            crate::cli::Cli::try_parse_from(["nvmebench", "compare", "--engines", "aio", "--filename", "/t/a:/t/b"])
                .unwrap();
        let crate::cli::Command::Compare(c) = cli.command else { panic!("parsed as compare") };
        let mut run = c.run;
        run.filename.push(PathBuf::from("/t/c\\:d"));
        let aio = EngineSpec::parse("aio").unwrap();
        let out = kernel_args(&run, &aio, None);
        // Split into one path each; a colon inside a name stays escaped for `resolve` to split again.
        assert_eq!(out.filename, [PathBuf::from("/t/a"), PathBuf::from("/t/b"), PathBuf::from("/t/c\\:d")]);
        assert_eq!(crate::config::split_filenames(&out.filename).unwrap()[2], PathBuf::from("/t/c:d"));
        // After a hand-back the one namespace's new name replaces the list.
        let out = kernel_args(&run, &aio, Some(Path::new("/dev/nvme1n1")));
        assert_eq!(out.filename, [PathBuf::from("/dev/nvme1n1")]);
    }
}

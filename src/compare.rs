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

use crate::cli::{CompareArgs, RunArgs};
use crate::config::{ConfigError, EngineSpec, RunConfig, format_core_list};
use crate::coordinator::RunResult;
use crate::launch::SpdkRun;
use crate::options::OutputFormat;
use crate::rebind::{PcieNamespace, Rebind};
use crate::report::doc::{
    CompareDocument, CompareLatency, CompareRatios, CompareRun, CompareSummary, CompareTargetSummary, Tool,
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

/// Engine names that start a new entry in an `--engines` list (anything else after a comma is an
/// option of the engine before it, as in `uring:fixedbufs=0,regfile=0,aio`).
const ENGINE_NAMES: &[&str] =
    &["null", "uring", "io_uring", "uring-cmd", "io_uring_cmd", "aio", "libaio", "psync", "spdk"];

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

/// One engine's run, for the table and the JSON.
struct Column {
    spec: String,
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
    let (specs, engines) = parse_engines(args)?;
    let mut rebind = plan_rebind(args, &engines)?;
    let phases = resolve_phases(args, &specs, &engines, rebind.as_ref())?;
    check_json_dir(args.run.json.as_deref())?;
    let signal = install_signal_handlers()?;
    let _scratch = prepare_target(&phases)?;

    let mut turns = Turns {
        args,
        quiet: args.run.quiet || args.run.output == OutputFormat::Json,
        rebind: rebind.as_mut(),
        columns: Vec::with_capacity(phases.len()),
        stopped: None,
        interrupted: None,
        rebind_log: Vec::new(),
        kernel_path: args.run.filename.first().cloned(),
    };
    for (i, ((spec, engine), phase)) in specs.iter().zip(&engines).zip(phases).enumerate() {
        if !turns.quiet {
            eprintln!("nvmebench: compare: {spec} ({} of {})", i + 1, specs.len());
        }
        if !turns.take(i, spec, engine, phase, &signal)? {
            break;
        }
    }
    turns.hand_back();

    let Turns { columns, stopped, interrupted, rebind_log, .. } = turns;
    write_report(args, &columns, &specs, stopped.as_deref(), &rebind_log)?;
    Ok(outcome(&columns, stopped.is_some(), interrupted))
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
/// phases attach only once the function is theirs; everything that can be checked before is.
fn resolve_phases(
    args: &CompareArgs,
    specs: &[String],
    engines: &[EngineSpec],
    rebind: Option<&Rebind>,
) -> Result<Vec<Phase>, SetupError> {
    let mut phases = Vec::with_capacity(specs.len());
    for (spec, engine) in specs.iter().zip(engines) {
        if let (EngineSpec::Spdk, Some(r)) = (engine, rebind) {
            let mut run = args.run.clone();
            run.filename = Vec::new();
            run.spdk.trids = vec![r.namespace().trid()];
            phases.push(Phase::Deferred(Box::new(run)));
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
    /// Why the comparison ended before the last engine, or what went wrong handing the function back.
    stopped: Option<String>,
    /// A signal that came between two engines' runs (before the later one's workers started).
    interrupted: Option<i32>,
    rebind_log: Vec<String>,
    /// Where the kernel shows the namespace now (it may come back under another name after SPDK).
    kernel_path: Option<PathBuf>,
}

impl Turns<'_> {
    /// One engine's turn: hand over, run, and keep its column. `Ok(false)` ends the comparison
    /// (a signal, or a later engine that could not start).
    fn take(
        &mut self,
        i: usize,
        spec: &str,
        engine: &EngineSpec,
        phase: Phase,
        signal: &Arc<AtomicUsize>,
    ) -> anyhow::Result<bool> {
        let (cfg, spdk) = match self.hand_over(spec, engine, phase) {
            Ok(r) => r,
            Err(e) => return self.could_not_start(i, spec, e),
        };
        let live = LiveLine::new(
            crate::run::live_mode(&self.args.run, self.quiet),
            crate::report::live::Plan { ramp: cfg.ramp, runtime: cfg.runtime },
        );
        let result = match execute(&cfg, spdk.as_ref(), signal.clone(), &live) {
            Ok(r) => r,
            Err(e) => return self.could_not_start(i, spec, e),
        };
        // The SPDK session (and with it the controller) goes before any hand-back. Without the spdk
        // feature there is never a session, hence the allow.
        #[allow(clippy::drop_non_drop)]
        drop(spdk);
        live.finish();
        let all = result.total.all();
        let interrupted = result.interrupted_by.is_some();
        self.columns.push(Column { spec: spec.to_string(), cfg, result, all });
        if interrupted {
            self.stopped = Some(format!("interrupted during {spec}; later engines did not run"));
            return Ok(false);
        }
        Ok(true)
    }

    /// An engine that could not start: for the first, nothing has run yet, so it is a plain set-up
    /// error (exit 2); a later one ends the comparison, whose report shows what ran.
    /// A signal before the engine's workers started ends the comparison the same way, but as an
    /// interruption (exit 128 + the signal).
    fn could_not_start(&mut self, i: usize, spec: &str, e: SetupError) -> anyhow::Result<bool> {
        if i == 0 {
            return Err(e.into());
        }
        self.stopped = Some(match e.interrupted_by() {
            Some(sig) => {
                self.interrupted = Some(sig);
                format!("interrupted before {spec} started; it and later engines did not run")
            }
            None => format!("{spec} could not start: {e}"),
        });
        Ok(false)
    }

    /// Hands the function to whoever runs next, and resolves what could not be resolved before: a
    /// deferred SPDK phase once vfio-pci has it, a kernel phase whose namespace came back renamed.
    fn hand_over(
        &mut self,
        spec: &str,
        engine: &EngineSpec,
        phase: Phase,
    ) -> Result<(RunConfig, Option<SpdkRun>), SetupError> {
        match (phase, self.rebind.as_deref_mut()) {
            (Phase::Deferred(run), Some(r)) => r
                .to_userspace()
                .map_err(SetupError::from)
                .inspect(|()| self.rebind_log.push(format!("{}: to vfio-pci for {spec}", r.namespace().bdf)))
                .and_then(|()| resolve(&run, spec)),
            (Phase::Ready(cfg, spdk), Some(r)) if *engine != EngineSpec::Spdk => {
                let (dev, moved) = r.to_kernel()?;
                if moved {
                    let bdf = &r.namespace().bdf;
                    self.rebind_log.push(format!("{bdf}: back on the kernel as {} for {spec}", dev.display()));
                }
                if Some(&dev) == self.kernel_path.as_ref() {
                    Ok((*cfg, spdk))
                } else {
                    self.kernel_path = Some(dev);
                    resolve(&kernel_args(&self.args.run, engine, self.kernel_path.as_deref()), spec)
                }
            }
            (Phase::Ready(cfg, spdk), _) => Ok((*cfg, spdk)),
            (Phase::Deferred(_), None) => unreachable!("phases are deferred only with --rebind"),
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

/// Writes the JSON document with `--json`, and the report on stdout in `--output`'s format.
fn write_report(
    args: &CompareArgs,
    columns: &[Column],
    specs: &[String],
    stopped: Option<&str>,
    rebind_log: &[String],
) -> anyhow::Result<()> {
    let clock = clock_source();
    let doc = render_json(columns, specs, stopped, rebind_log, clock);
    if let Some(p) = &args.run.json {
        let text = serde_json::to_string_pretty(&doc).expect("a result document always serialises");
        std::fs::write(p, text + "\n").with_context(|| format!("cannot write {}", p.display()))?;
    }
    let out = match args.run.output {
        OutputFormat::Text => render_text(columns, args.run.qd, stopped, rebind_log, clock),
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

/// One engine's turn: resolved up front, or (an SPDK phase under --rebind) once the function is
/// bound to vfio-pci.
enum Phase {
    Ready(Box<RunConfig>, Option<SpdkRun>),
    Deferred(Box<RunArgs>),
}

/// The flags of a kernel engine's turn: `uring-cmd` on the generic device, the others on the block
/// device, whichever of the two was given, for every target. `path` replaces the one target (the
/// namespace's current name after a hand-back).
fn kernel_args(run: &RunArgs, engine: &EngineSpec, path: Option<&Path>) -> RunArgs {
    let mut run = run.clone();
    if *engine != EngineSpec::Spdk {
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
    let has_spdk = engines.contains(&EngineSpec::Spdk);
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
    mb_s: f64,
    mean_ns: Option<f64>,
    percentiles_ns: Vec<Option<f64>>,
    max_ns: Option<f64>,
    cpu_ns_per_io: Option<f64>,
}

fn figures(c: &Column) -> Figures {
    figures_of(&c.all, c.result.elapsed_ns, c.result.cpu.ns_per_io(), c.cfg.latency.stamps())
}

/// Figures of `d` over `elapsed_ns`; a target's have no CPU time of their own. Latencies are
/// `None` without I/O or without stamps (`--latency off`).
fn figures_of(d: &DirStats, elapsed_ns: u64, cpu_ns_per_io: Option<f64>, stamped: bool) -> Figures {
    let (iops, bw) = rates(d, elapsed_ns);
    let has = d.ios > 0 && stamped;
    Figures {
        iops,
        mb_s: bw / 1e6,
        mean_ns: has.then(|| d.mean_ns()),
        percentiles_ns: TABLE_PERCENTILES.iter().map(|(p, _)| has.then(|| d.percentile_ns(*p) as f64)).collect(),
        max_ns: has.then_some(d.max_ns as f64),
        cpu_ns_per_io,
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

fn render_text(columns: &[Column], qd: u32, stopped: Option<&str>, rebind: &[String], clock: &str) -> String {
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
    row(&mut out, "", &|c, _| c.spec.clone());
    row(&mut out, "qd", &|c, _| c.cfg.queue_depth.to_string());
    row(&mut out, "measured", &|c, _| format!("{:.2}s", c.result.elapsed_ns as f64 / 1e9));
    row(&mut out, "IOPS", &|_, f| format_count(f.iops));
    row(&mut out, "MB/s", &|_, f| format!("{:.1}", f.mb_s));
    row(&mut out, "lat mean", &|_, f| lat(f.mean_ns));
    for (i, (_, name)) in TABLE_PERCENTILES.iter().enumerate() {
        row(&mut out, &format!("lat {name}"), &|_, f| lat(f.percentiles_ns[i]));
    }
    row(&mut out, "lat max", &|_, f| lat(f.max_ns));
    row(&mut out, "CPU per I/O", &|_, f| lat(f.cpu_ns_per_io));
    row(&mut out, "errors", &|c, _| c.result.error_count().to_string());
    let _ = writeln!(out, "ratio to {}:", first.spec);
    row(&mut out, "  IOPS", &|_, f| times(ratio(Some(f.iops), Some(base.iops))));
    row(&mut out, "  lat mean", &|_, f| times(ratio(f.mean_ns, base.mean_ns)));
    row(&mut out, "  lat p99", &|_, f| times(ratio(f.percentiles_ns[1], base.percentiles_ns[1])));
    row(&mut out, "  CPU per I/O", &|_, f| times(ratio(f.cpu_ns_per_io, base.cpu_ns_per_io)));
    target_rows(&mut out, columns, width);
    out.push('\n');
    for c in columns {
        let _ = writeln!(out, "{}: {}", c.spec, c.result.engine);
        if let Some(f) = &c.result.failure {
            let _ = writeln!(out, "  run failed: {f}; partial results");
        }
    }
    let _ = writeln!(
        out,
        "CPU per I/O is the whole process's user+sys time (getrusage) over the run, ramp included, divided by the I/Os completed in it."
    );
    for r in rebind {
        let _ = writeln!(out, "rebind: {r}");
    }
    if let Some(s) = stopped {
        let _ = writeln!(out, "stopped early: {s}");
    }
    out
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
            ("  MB/s", &|f| format!("{:.1}", f.mb_s)),
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

fn render_json(
    columns: &[Column],
    specs: &[String],
    stopped: Option<&str>,
    rebind: &[String],
    clock: &str,
) -> CompareDocument {
    let figs: Vec<Figures> = columns.iter().map(figures).collect();
    let base = figs.first();
    let first_targets = columns.first().map(target_figures).unwrap_or_default();
    let summary = columns
        .iter()
        .zip(&figs)
        .map(|(c, f)| CompareSummary {
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
                        bw_bytes: f.mb_s * 1e6,
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
            bw_bytes: f.mb_s * 1e6,
            lat_ns: latency(f),
            cpu_ns_per_io: f.cpu_ns_per_io,
            errors: c.result.error_count(),
            ratio_to_first: CompareRatios {
                iops: base.and_then(|b| ratio(Some(f.iops), Some(b.iops))),
                lat_mean: base.and_then(|b| ratio(f.mean_ns, b.mean_ns)),
                lat_p99: base.and_then(|b| ratio(f.percentiles_ns[1], b.percentiles_ns[1])),
                cpu_per_io: base.and_then(|b| ratio(f.cpu_ns_per_io, b.cpu_ns_per_io)),
            },
        })
        .collect();
    let runs = columns
        .iter()
        .map(|c| CompareRun { engine_spec: c.spec.clone(), run: report::json::document(&c.cfg, &c.result, clock) })
        .collect();
    CompareDocument {
        schema_version: report::json::SCHEMA_VERSION,
        tool: Tool::this(),
        command: "compare".into(),
        engines: specs.to_vec(),
        completed: columns.len(),
        stopped_early: stopped.map(str::to_string),
        rebind: rebind.to_vec(),
        summary,
        runs,
    }
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

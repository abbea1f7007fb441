//! Methodology: `nvmebench suite NAME` runs a named sequence of measurements the way drive reviews do
//! (SNIA PTS preconditioning to steady state, the reviews' profiles, thread × queue-depth sweeps,
//! VDBench-style iorate curves) into a results directory, one JSON file per step.
//!
//! `profile` reads the workloads (TOML data), `plan` decides and checks the steps, `exec` runs one
//! measurement on the coordinator, `sweep`, `curve` and `steady` hold each method's rules. This
//! module owns the order of side effects: the whole plan is resolved and checked before the results
//! directory or the target file is created, and a step's file appears (whole, by rename) only when
//! the step finished, so a rerun skips exactly the finished steps. It does not render reports: step
//! files are `report::doc` documents (the shapes of `schema/result.schema.json`), and `nvmebench
//! report DIR` draws them.

pub mod curve;
pub mod exec;
pub mod plan;
pub mod profile;
pub mod steady;
pub mod sweep;

use crate::cli::SuiteArgs;
use crate::config::{EngineSpec, NULL_DEVICE_BYTES};
use crate::report::doc::{
    Collection, Fill, IorateCurve, IoratePoint, IorateStop, RunDocument, Steady, SteadyState, SuiteStep, Sweep,
    SweepMark, SweepPoint,
};
use crate::report::json::SCHEMA_VERSION;
use crate::report::progress::StepProgress;
use crate::report::{format_count, format_latency};
use crate::target::{self, Target, TargetKind};
use exec::{Bench, Measurement, ResolvedStream, Timing};
use plan::{Plan, PlannedStep, StepKind};
use profile::Profile;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The file in a results directory that records the plan, so a rerun can tell it resumes the same
/// suite. Not `.json`: `report DIR` reads every `.json` as a result.
pub const PLAN_FILE: &str = "suite.plan";
/// The summary table, rewritten after every step.
pub const SUMMARY_FILE: &str = "summary.md";

#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// A bad option, profile or target; nothing was written (exit status 2).
    #[error("{0}")]
    Usage(String),
    /// A run failed part-way (exit status 1); finished steps are kept.
    #[error("{0}")]
    Run(String),
    /// A signal came before a measurement started; nothing of it ran.
    #[error("interrupted before the workers started")]
    Interrupted,
}

impl SuiteError {
    pub fn is_usage(&self) -> bool {
        matches!(self, SuiteError::Usage(_))
    }
}

/// Runs `nvmebench suite`; returns the exit status (0 clean, 1 I/O errors, 128+N interrupted).
///
/// # Errors
/// [`SuiteError::Usage`] before anything was written; [`SuiteError::Run`] or an I/O error after.
pub fn suite_command(args: &SuiteArgs) -> anyhow::Result<u8> {
    let usage = |m: String| anyhow::Error::new(SuiteError::Usage(m));
    let mut profiles = Profile::built_in();
    for f in &args.profiles {
        let text = std::fs::read_to_string(f)
            .map_err(|e| usage(format!("--profile {}: cannot read it ({e}); check the path", f.display())))?;
        let p = Profile::parse(&text, &f.display().to_string()).map_err(usage)?;
        if profiles.iter().any(|q| q.name == p.name) || plan::SUITES.iter().any(|s| s.name == p.name) {
            return Err(usage(format!(
                "--profile {}: the name '{}' is taken by a built-in suite or profile; rename it",
                f.display(),
                p.name
            )));
        }
        profiles.push(p);
    }
    if args.list {
        if let Some(name) = &args.name {
            return Err(usage(format!("--list lists every suite and takes no NAME ('{name}'); drop one of them")));
        }
        print!("{}", plan::list(&profiles));
        return Ok(0);
    }
    let name = args.name.as_deref().expect("clap requires NAME without --list");
    // The name first: a misspelt suite is the likeliest mistake, and its sentence the useful one.
    plan::check_name(name, &profiles)?;

    if (args.max_rounds as usize) < steady::WINDOW {
        return Err(usage(format!(
            "--max-rounds {} is less than one steady-state window; use a whole number from {} to 1000",
            args.max_rounds,
            steady::WINDOW
        )));
    }
    let engine = EngineSpec::parse(&args.engine).map_err(|e| usage(e.to_string()))?;
    let spdk = engine.is_spdk();
    if engine == EngineSpec::Spdk(crate::config::SpdkMode::Interrupt) {
        return Err(usage(
            "suites run the polled spdk engine; use --engine spdk (spdk:interrupt is for run and compare)".into(),
        ));
    }
    if let Some(flag) = args.spdk.first_given().filter(|_| !spdk) {
        return Err(usage(format!(
            "{flag} is an option of the spdk engine, and this suite uses {}; drop it or add --engine spdk",
            args.engine
        )));
    }
    if spdk && !args.filename.is_empty() {
        return Err(usage("--engine spdk takes its namespaces from --trid; drop --filename".into()));
    }
    if spdk && args.spdk.trids.is_empty() {
        return Err(usage(crate::config::clash::Clash::SpdkNeedsTrid.to_string()));
    }
    if args.spdk.spdk_reset_after.is_some() {
        return Err(usage("--spdk-reset-after is a fault injection for `run`, not for suites; drop it".into()));
    }
    let cores = allowed_cores().map_err(usage)?;
    // SPDK attaches once, here, after the flags are checked; every step uses that session.
    let (attached, spdk_run) = attach_spdk(args, spdk, &cores)?;
    let paths = crate::config::split_filenames(&args.filename).map_err(|e| usage(e.to_string()))?;
    let create = match args.size {
        Some(crate::units::SizeOrPercent::Bytes(b)) => Some(b),
        _ => None,
    };
    let targets: Vec<Target> = match (paths.is_empty(), engine.needs_target()) {
        _ if spdk => attached.iter().cloned().collect(),
        (true, true) => {
            return Err(usage(format!(
                "--engine {} needs a target; add --filename FILE --size SIZE (suites use no scratch file)",
                args.engine
            )));
        }
        (true, false) => Vec::new(),
        (false, _) => paths
            .iter()
            .map(|p| Target::inspect(p, create))
            .collect::<Result<_, _>>()
            .map_err(|e| usage(e.to_string()))?,
    };
    // Several targets: the capacity must fit the smallest, and block sizes suit the largest block.
    let total = targets.iter().map(|t| t.size_bytes).min().unwrap_or(NULL_DEVICE_BYTES);
    let lbs = targets.iter().map(|t| t.logical_block_bytes).max().unwrap_or(512);
    let plan = plan::build(args, name, &profiles, &engine, total, lbs, attached.as_ref())?;
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from(format!("nvmebench-suite-{name}")));
    check_dir(&dir, &plan)?;
    let signal = crate::run::install_signal_handlers().map_err(|e| usage(e.to_string()))?;
    if args.jobs > cores.len() {
        eprintln!(
            "nvmebench: note: up to {} workers per step on {} cores; workers share cores, so figures include their contention",
            args.jobs,
            cores.len()
        );
    }
    for n in &plan.notes {
        eprintln!("nvmebench: note: {n}");
    }

    // Checks are done; from here on things are written.
    // The first write: a directory that cannot be made (a read-only or virtual file system) is the
    // caller's to fix, and nothing has been written yet.
    std::fs::create_dir_all(&dir).map_err(|e| {
        SuiteError::Usage(format!("--dir {}: cannot create it ({e}); pick a writable path", dir.display()))
    })?;
    write_atomic(&dir.join(PLAN_FILE), &plan.fingerprint)?;
    for t in targets.iter().filter(|t| t.kind == TargetKind::NewFile) {
        let t = Target { size_bytes: plan.capacity_bytes, ..t.clone() };
        target::prepare_file(&t).map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    let targets: Vec<Target> = if paths.is_empty() {
        attached.into_iter().collect()
    } else {
        paths.iter().map(|p| Target::inspect(p, None)).collect::<Result<_, _>>().map_err(|e| anyhow::anyhow!("{e}"))?
    };
    let bench = Bench {
        target_paths: paths,
        cores,
        signal,
        // Ten points per run for the report's plots over time, at most one a second.
        interval: (args.time / 10).clamp(Duration::from_millis(100), Duration::from_secs(1)),
        seed: args.seed.unwrap_or(crate::config::DEFAULT_SEED),
        spdk: spdk_run,
        start_at: None,
        exit_streams: Vec::new(),
    };
    let mut runner = Runner { args, bench: &bench, plan: &plan, targets: &targets, dir: &dir, errors: false };
    let code = runner.run_all()?;
    Ok(code)
}

/// Refuses a directory that holds something other than this suite's earlier results (written by
/// this nvmebench, or by an earlier one that spelt the same plan otherwise). A resumed directory
/// gets the plan as this one spells it.
fn check_dir(dir: &Path, plan: &Plan) -> Result<(), SuiteError> {
    let shown = dir.display();
    if !dir.exists() {
        let parent = dir.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if !parent.is_dir() {
            return Err(SuiteError::Usage(format!(
                "--dir {shown}: the directory {} does not exist; create it or pick another path",
                parent.display()
            )));
        }
        return Ok(());
    }
    if !dir.is_dir() {
        return Err(SuiteError::Usage(format!("--dir {shown} is not a directory; pick a directory for the results")));
    }
    match std::fs::read_to_string(dir.join(PLAN_FILE)) {
        Ok(text) if text == plan.fingerprint || plan.earlier_fingerprints.contains(&text) => Ok(()),
        Ok(_) => Err(SuiteError::Usage(format!(
            "--dir {shown} holds results of a different suite plan (other suite, options or profiles); rerun with the same options to resume, or pick another --dir"
        ))),
        Err(_) if std::fs::read_dir(dir).map(|mut d| d.next().is_none()).unwrap_or(false) => Ok(()),
        Err(_) => Err(SuiteError::Usage(format!(
            "--dir {shown} is not empty and holds no suite results; pick a new or empty directory"
        ))),
    }
}

/// For `--engine spdk`: starts SPDK on the suite's cores and attaches the `--trid` controllers.
#[cfg(feature = "spdk")]
fn attach_spdk(
    args: &SuiteArgs,
    spdk: bool,
    cores: &[usize],
) -> Result<(Option<Target>, Option<crate::launch::SpdkRun>), SuiteError> {
    if !spdk {
        return Ok((None, None));
    }
    let (session, ts) =
        crate::run::spdk_attach(&args.spdk, cores, false).map_err(|e| SuiteError::Usage(e.to_string()))?;
    // A suite's streams share the namespaces (dealt over its workers): one target, sized to fit all.
    let t = Target { path: session.describe().into(), size_bytes: session.usable_bytes(), ..ts[0].clone() };
    // Suites' profiles change block sizes and alignment from step to step: taken as unknown.
    Ok((Some(t), Some(crate::launch::SpdkRun::new(session, &args.spdk, false, 0))))
}

/// Without the feature `--engine spdk` is refused when parsed.
#[cfg(not(feature = "spdk"))]
fn attach_spdk(
    _: &SuiteArgs,
    _: bool,
    _: &[usize],
) -> Result<(Option<Target>, Option<crate::launch::SpdkRun>), SuiteError> {
    Ok((None, None))
}

fn allowed_cores() -> Result<Vec<usize>, String> {
    let c = crate::cpu::allowed_cores().to_vec();
    if c.is_empty() {
        return Err("no cores are allowed for this process".into());
    }
    Ok(c)
}

/// Writes `text` to `path` whole or not at all.
fn write_atomic(path: &Path, text: &str) -> anyhow::Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
}

/// How a measurement inside a step ended, when it did not simply finish.
enum Cut {
    Signal(i32),
}

struct Runner<'a> {
    args: &'a SuiteArgs,
    bench: &'a Bench,
    plan: &'a Plan,
    /// Every target (none for the null engine); SPDK's namespaces are one.
    targets: &'a [Target],
    dir: &'a Path,
    errors: bool,
}

/// Whether a step's saved document records I/O errors or I/Os given up after the drain timeout.
/// A document that cannot be read counts as clean here: the step is skipped as before, and
/// `nvmebench report` names what is wrong with it.
fn recorded_trouble(path: &Path) -> bool {
    crate::report::load::load(&[path.to_path_buf()]).is_ok_and(|set| {
        set.runs.iter().any(|r| {
            r.errors_total() > 0
                || r.doc.results.workers.iter().filter_map(|w| w.summary.as_ref()).any(|s| s.lost_in_flight > 0)
        })
    })
}

impl Runner<'_> {
    fn run_all(&mut self) -> anyhow::Result<u8> {
        let planned: Vec<Duration> = self.plan.steps.iter().map(|s| s.planned).collect();
        let mut progress = StepProgress::new(planned, self.args.quiet);
        let n = self.plan.steps.len();
        for (i, step) in self.plan.steps.iter().enumerate() {
            let path = self.dir.join(format!("{}.json", step.id));
            if path.exists() {
                // A resumed suite still owes the exit status of the steps it skips.
                let troubled = recorded_trouble(&path);
                self.errors |= troubled;
                let note = if troubled { " (it recorded I/O errors or lost I/Os)" } else { "" };
                progress
                    .suspend(|| eprintln!("nvmebench: step {}/{n} {}: done earlier, skipped{note}", i + 1, step.id));
                progress.skip_step(i);
                continue;
            }
            progress.begin_step(i, &step.label);
            let outcome = match &step.kind {
                StepKind::Run => self.run_step(step, &mut progress),
                StepKind::Sweep(points) => self.sweep_step(step, points, &mut progress),
                StepKind::Curve => self.curve_step(step, &mut progress),
                StepKind::Precondition { purge, fill } => {
                    self.precondition_step(step, *purge, fill.as_deref(), &mut progress)
                }
            };
            progress.end_step();
            match outcome? {
                Ok((doc, summary)) => {
                    let info = SuiteStep {
                        suite: self.plan.name.clone(),
                        id: step.id.clone(),
                        label: step.label.clone(),
                        summary: summary.clone(),
                    };
                    let text = match doc {
                        StepDoc::Run(mut d) => {
                            d.suite_step = Some(info);
                            serde_json::to_string_pretty(&d)
                        }
                        StepDoc::Collection(mut c) => {
                            c.schema_version = Some(SCHEMA_VERSION);
                            c.suite_step = Some(info);
                            serde_json::to_string_pretty(&c)
                        }
                    }
                    .expect("a result document always serialises")
                        + "\n";
                    write_atomic(&path, &text)?;
                    progress.suspend(|| println!("{}: {summary}", step.label));
                }
                Err(Cut::Signal(sig)) => {
                    progress.finish();
                    eprintln!(
                        "nvmebench: interrupted in step {} ({}); it is not recorded, and a rerun with the same options resumes there",
                        i + 1,
                        step.id
                    );
                    self.write_summary()?;
                    return Ok(128u8.saturating_add(sig as u8));
                }
            }
            self.write_summary()?;
        }
        progress.finish();
        println!("results in {} (render them with `nvmebench report {}`)", self.dir.display(), self.dir.display());
        Ok(if self.errors { 1 } else { 0 })
    }

    /// Runs one measurement, checking how it ended.
    fn measure(
        &mut self,
        streams: &[ResolvedStream],
        jobs: usize,
        qd: u32,
        timing: Timing,
        rates: Option<&[f64]>,
        progress: &mut StepProgress,
    ) -> anyhow::Result<Result<Measurement, Cut>> {
        let sig = self.bench.signal.load(std::sync::atomic::Ordering::Relaxed);
        if sig != 0 {
            return Ok(Err(Cut::Signal(sig as i32)));
        }
        let m = match exec::measure(self.bench, streams, jobs, qd, timing, rates, |_| progress.tick()) {
            Ok(m) => m,
            Err(SuiteError::Interrupted) => {
                let sig = self.bench.signal.load(std::sync::atomic::Ordering::Relaxed).max(2);
                return Ok(Err(Cut::Signal(sig as i32)));
            }
            Err(e) => return Err(e.into()),
        };
        if let Some(sig) = m.result.interrupted_by {
            return Ok(Err(Cut::Signal(sig)));
        }
        if let Some(f) = &m.result.failure {
            return Err(SuiteError::Run(format!("a worker failed mid-run ({f}); finished steps are kept")).into());
        }
        if m.result.error_count() > 0 {
            self.errors = true;
            progress.suspend(|| {
                eprintln!("nvmebench: {} I/O errors in this measurement; the step records them", m.result.error_count())
            });
        }
        if m.result.lost_in_flight() > 0 {
            // As `run` does: I/Os given up after the drain timeout are a device that stopped answering.
            self.errors = true;
            progress.suspend(|| {
                eprintln!(
                    "nvmebench: {} I/Os were still in flight when the drain timed out; the step records them",
                    m.result.lost_in_flight()
                )
            });
        }
        Ok(Ok(m))
    }

    fn timing(&self) -> Timing {
        Timing { ramp: self.args.ramp, runtime: Some(self.args.time), ios: None }
    }

    fn run_step(&mut self, step: &PlannedStep, progress: &mut StepProgress) -> StepOutcome {
        let t = self.timing();
        let m = match self.measure(&step.streams, self.args.jobs, self.args.qd, t, None, progress)? {
            Ok(m) => m,
            Err(c) => return Ok(Err(c)),
        };
        let doc = StepDoc::Run(Box::new(exec::document(&step.label, &step.streams, &m, t)));
        let d = m.combined();
        let summary = format!(
            "{} IOPS, mean {}, p99 {}, max {}{}",
            format_count(m.iops()),
            format_latency(d.mean_ns()),
            format_latency(d.percentile_ns(99.0) as f64),
            format_latency(d.max_ns as f64),
            per_target(&m, self.bench)
        );
        Ok(Ok((doc, summary)))
    }

    fn sweep_step(&mut self, step: &PlannedStep, points: &[sweep::Point], progress: &mut StepProgress) -> StepOutcome {
        let t = self.timing();
        let mut measured = Vec::new();
        let mut runs = Vec::new();
        for (i, p) in points.iter().enumerate() {
            progress.round(i as u32 + 1, Some(points.len() as u32));
            let m = match self.measure(&step.streams, p.threads, p.qd, t, None, progress)? {
                Ok(m) => m,
                Err(c) => return Ok(Err(c)),
            };
            let d = m.combined();
            measured.push(sweep::Measured {
                threads: p.threads,
                qd: p.qd,
                iops: m.iops(),
                mean_ns: d.mean_ns(),
                max_ns: d.max_ns as f64,
                stddev_ns: d.stddev_ns(),
                p99_ns: d.percentile_ns(99.0) as f64,
            });
            runs.push(exec::document(&format!("{} {}x{}", step.label, p.threads, p.qd), &step.streams, &m, t));
        }
        let table = sweep::table(&step.label, &measured);
        progress.suspend(|| println!("{table}"));
        let at = |i: Option<usize>| {
            i.map(|i| SweepMark {
                threads: measured[i].threads,
                qd: measured[i].qd,
                iops: measured[i].iops,
                mean_ns: measured[i].mean_ns,
            })
        };
        let (peak, knee) = (sweep::peak(&measured), sweep::knee(&measured));
        let mut doc = Collection {
            label: Some(step.label.clone()),
            sweep_points: Some(
                measured
                    .iter()
                    .map(|m| SweepPoint {
                        threads: m.threads,
                        qd: m.qd,
                        iops: m.iops,
                        mean_ns: m.mean_ns,
                        max_ns: m.max_ns,
                        stddev_ns: m.stddev_ns,
                        p99_ns: m.p99_ns,
                    })
                    .collect(),
            ),
            peak: Some(at(peak)),
            knee: Some(at(knee)),
            knee_rule: Some(format!(
                "first point, by threads x queue depth, whose mean latency rose more than its IOPS over the point before, and by at least {:.0}%",
                sweep::KNEE_MIN_RISE * 100.0
            )),
            point_runs: Some(runs),
            ..Collection::default()
        };
        if let Some((ts, qs)) = sweep::grid(&measured) {
            let cell = |t: usize, q: u32, f: fn(&sweep::Measured) -> f64| {
                measured.iter().find(|m| m.threads == t && m.qd == q).map_or(0.0, f)
            };
            let matrix = |f: fn(&sweep::Measured) -> f64| -> Vec<Vec<f64>> {
                ts.iter().map(|&t| qs.iter().map(|&q| cell(t, q, f)).collect()).collect()
            };
            doc.sweeps = Some(vec![Sweep {
                label: step.label.clone(),
                threads: ts.iter().map(|&t| t as u64).collect(),
                queue_depths: qs.iter().map(|&q| u64::from(q)).collect(),
                iops: matrix(|m| m.iops),
                p99_ns: Some(matrix(|m| m.p99_ns)),
            }]);
        }
        let mark = |i: usize| format!("{}x{}", measured[i].threads, measured[i].qd);
        let summary = format!(
            "{} points, {}, {}",
            measured.len(),
            peak.map_or("no I/O".into(), |i| format!("peak {} IOPS at {}", format_count(measured[i].iops), mark(i))),
            // Say what the rule found, not a placeholder: no point's latency outran its IOPS.
            knee.map_or("no knee (latency never rose faster than IOPS)".into(), |i| format!("knee at {}", mark(i)))
        );
        Ok(Ok((StepDoc::Collection(Box::new(doc)), summary)))
    }

    fn curve_step(&mut self, step: &PlannedStep, progress: &mut StepProgress) -> StepOutcome {
        let t = self.timing();
        let total_rounds = 1 + curve::CURVE_PERCENTS.len() as u32;
        progress.round(1, Some(total_rounds));
        let max = match self.measure(&step.streams, self.args.jobs, self.args.qd, t, None, progress)? {
            Ok(m) => m,
            Err(c) => return Ok(Err(c)),
        };
        let max_iops = max.iops();
        let per_worker = max.worker_iops();
        let max_doc = exec::document(&format!("{} max", step.label), &step.streams, &max, t);
        let mut points = Vec::new();
        let mut runs = Vec::new();
        let mut stop = None;
        for (i, pct) in curve::CURVE_PERCENTS.iter().enumerate() {
            progress.round(i as u32 + 2, Some(total_rounds));
            let f = f64::from(*pct) / 100.0;
            let rates: Vec<f64> = per_worker.iter().map(|r| r * f).collect();
            let m = match self.measure(&step.streams, self.args.jobs, self.args.qd, t, Some(&rates), progress)? {
                Ok(m) => m,
                Err(c) => return Ok(Err(c)),
            };
            let d = m.combined();
            let (mean, p99) = (d.mean_ns(), d.percentile_ns(99.0) as f64);
            points.push(IoratePoint {
                percent: Some(*pct),
                target_iops: Some(max_iops * f),
                iops: m.iops(),
                mean_ns: mean,
                p99_ns: p99,
            });
            runs.push(exec::document(&format!("{} {pct}%", step.label), &step.streams, &m, t));
            if let Some(rule) = self.plan.stop.filter(|r| r.passed(mean, p99)) {
                stop = Some(IorateStop { iops: m.iops(), rule: rule.describe() });
                break;
            }
        }
        let mut table = format!(
            "iorate {} (max {} IOPS)\n{:>6} {:>10} {:>10} {:>10} {:>10}\n",
            step.label,
            format_count(max_iops),
            "rate",
            "target",
            "IOPS",
            "mean",
            "p99"
        );
        for p in &points {
            table.push_str(&format!(
                "{:>5}% {:>10} {:>10} {:>10} {:>10}\n",
                p.percent.unwrap_or(0),
                format_count(p.target_iops.unwrap_or(0.0)),
                format_count(p.iops),
                format_latency(p.mean_ns),
                format_latency(p.p99_ns)
            ));
        }
        if let Some(stop) = &stop {
            table.push_str(&format!("stopped: {}\n", stop.rule));
        }
        progress.suspend(|| println!("{table}"));
        let summary = format!(
            "max {} IOPS, {} paced steps{}",
            format_count(max_iops),
            points.len(),
            stop.as_ref().map_or(String::new(), |s| format!(", stopped at {}", s.rule))
        );
        let doc = Collection {
            label: Some(step.label.clone()),
            iorate: Some(vec![IorateCurve { label: step.label.clone(), points, stop }]),
            max_iops: Some(max_iops),
            max_run: Some(Box::new(max_doc)),
            point_runs: Some(runs),
            ..Collection::default()
        };
        Ok(Ok((StepDoc::Collection(Box::new(doc)), summary)))
    }

    fn precondition_step(
        &mut self,
        step: &PlannedStep,
        purge: bool,
        fill: Option<&[ResolvedStream]>,
        progress: &mut StepProgress,
    ) -> StepOutcome {
        let mut doc = Collection { label: Some(step.label.clone()), ..Collection::default() };
        if purge {
            let p = match self.targets {
                [] | [_] => steady::purge(self.targets.first(), 0, self.plan.capacity_bytes, self.args.allow_destroy),
                all => all
                    .iter()
                    .map(|t| {
                        let p = steady::purge(Some(t), 0, self.plan.capacity_bytes, self.args.allow_destroy);
                        format!("{}: {p}", t.path.display())
                    })
                    .collect::<Vec<_>>()
                    .join("; "),
            };
            progress.suspend(|| eprintln!("nvmebench: purge {p}"));
            doc.purge = Some(p);
        }
        if let Some(fill) = fill {
            let bytes = (self.args.fill * self.plan.capacity_bytes as f64) as u64;
            let ios = bytes.div_ceil(steady::FILL_BS).max(1);
            // `ios` is split over every worker-target pair: each target gets its whole fill.
            let targets = self.bench.target_paths.len().max(1) as u64;
            let t = Timing { ramp: Duration::ZERO, runtime: None, ios: Some(ios * targets) };
            progress.suspend(|| {
                eprintln!(
                    "nvmebench: workload-independent preconditioning: {} sequential 128k writes ({}x the capacity){}",
                    ios,
                    self.args.fill,
                    if targets > 1 { " on each target" } else { "" }
                )
            });
            let m = match self.measure(fill, 1, 32, t, None, progress)? {
                Ok(m) => m,
                Err(c) => return Ok(Err(c)),
            };
            doc.fill = Some(Fill {
                passes: self.args.fill,
                bytes: ios * steady::FILL_BS,
                seconds: m.result.elapsed_ns as f64 / 1e9,
            });
            doc.fill_run = Some(Box::new(exec::document(&format!("{} fill", step.label), fill, &m, t)));
        }
        let round_time = self.args.round_time.unwrap_or(self.args.time);
        let t = Timing { ramp: Duration::ZERO, runtime: Some(round_time), ios: None };
        let mut rounds: Vec<f64> = Vec::new();
        let mut runs = Vec::new();
        let mut reached = None;
        for r in 1..=self.args.max_rounds {
            progress.round(r, Some(self.args.max_rounds));
            let m = match self.measure(&step.streams, self.args.jobs, self.args.qd, t, None, progress)? {
                Ok(m) => m,
                Err(c) => return Ok(Err(c)),
            };
            rounds.push(m.iops());
            runs.push(exec::document(&format!("{} round {r}", step.label), &step.streams, &m, t));
            let v = steady::verdict(&rounds, steady::WINDOW);
            progress.suspend(|| {
                eprintln!(
                    "nvmebench: {} round {r}: {} IOPS{}",
                    step.label,
                    format_count(m.iops()),
                    v.map_or(String::new(), |v| format!(
                        " (window {}-{}: range {:.1}%, slope {:.1}% of the average{})",
                        v.first + 1,
                        r,
                        v.range_fraction * 100.0,
                        v.slope_fraction * 100.0,
                        if v.steady { ", steady" } else { "" }
                    ))
                )
            });
            if v.is_some_and(|v| v.steady) {
                reached = Some((r, v.expect("checked above")));
                break;
            }
        }
        doc.steady_state = Some(vec![SteadyState {
            label: step.label.clone(),
            metric: "IOPS".into(),
            rounds: rounds.clone(),
            window: steady::WINDOW,
        }]);
        doc.steady = Some(match reached {
            Some((r, v)) => Steady {
                reached: true,
                round: Some(r),
                window_first_round: Some(v.first + 1),
                average: Some(v.average),
                range_fraction: Some(v.range_fraction),
                slope_fraction: Some(v.slope_fraction),
                rounds: None,
            },
            None => Steady {
                reached: false,
                round: None,
                window_first_round: None,
                average: None,
                range_fraction: None,
                slope_fraction: None,
                rounds: Some(rounds.len()),
            },
        });
        doc.round_runs = Some(runs);
        let summary = match reached {
            Some((r, v)) => format!(
                "steady state at round {r} ({} IOPS average over rounds {}-{r})",
                format_count(v.average),
                v.first + 1
            ),
            None => format!("no steady state in {} rounds (--max-rounds {})", rounds.len(), self.args.max_rounds),
        };
        Ok(Ok((StepDoc::Collection(Box::new(doc)), summary)))
    }

    /// Rewrites the summary from every finished step's file.
    fn write_summary(&self) -> anyhow::Result<()> {
        let mut s = format!("# nvmebench suite {}\n\n| step | result |\n| --- | --- |\n", self.plan.name);
        for step in &self.plan.steps {
            let path = self.dir.join(format!("{}.json", step.id));
            let line = std::fs::read_to_string(&path)
                .ok()
                .and_then(|t| serde_json::from_str::<StepSummary>(&t).ok())
                .map(|d| d.suite_step.summary)
                .unwrap_or_else(|| "not run yet".into());
            s.push_str(&format!("| {} | {} |\n", step.label, line));
        }
        write_atomic(&self.dir.join(SUMMARY_FILE), &s)
    }
}

/// With several targets, each one's IOPS and p99 for a step's summary: ` (a: 1.2k IOPS p99 80µs;
/// b: ...)`; nothing with one.
fn per_target(m: &Measurement, bench: &Bench) -> String {
    if m.result.targets.len() < 2 {
        return String::new();
    }
    let parts: Vec<String> = m
        .result
        .targets
        .iter()
        .map(|t| {
            let name = bench
                .target_paths
                .get(t.index)
                .map_or_else(|| format!("target {}", t.index), |p| p.display().to_string());
            let d = t.stats.all();
            let (iops, _) = crate::report::rates(&d, t.elapsed_ns);
            format!("{name}: {} IOPS p99 {}", format_count(iops), format_latency(d.percentile_ns(99.0) as f64))
        })
        .collect();
    format!(" ({})", parts.join("; "))
}

/// A step's document and one-line summary, or why it was cut short.
type StepOutcome = anyhow::Result<Result<(StepDoc, String), Cut>>;

/// What a finished step writes: a run (a profile measured once), or a collection with the step's
/// extras (sweeps, curves, preconditioning).
enum StepDoc {
    Run(Box<RunDocument>),
    Collection(Box<Collection>),
}

/// The part of any step file the summary table reads.
#[derive(serde::Deserialize)]
struct StepSummary {
    suite_step: SuiteStep,
}

//! Running one measurement of a suite: the streams of a step, each with its threads, queue depth,
//! region and optional pacing, as one coordinated run (one start gate, one set of merged
//! histograms), and its JSON document.
//!
//! Every stream was resolved by `config::RunConfig::resolve` (so a profile is checked exactly as
//! `run`'s flags are); this module only lays the streams' workers side by side. Sequential streams
//! get one slice of their region per worker here, so each worker plan describes its own range
//! (`workers: 1`) and the worker and generator stay as `run` uses them.

use super::SuiteError;
use crate::config::{EngineSpec, RunConfig};
use crate::coordinator::{self, IntervalPoint, RunPlan, RunResult};
use crate::launch::{self, EngineTarget};
use crate::report;
use crate::report::doc::{RunDocument, Rw, StreamDir, StreamDoc};
use crate::stats::{DirStats, Stats};
use crate::worker::WorkerPlan;
use crate::workload::{RwMode, WorkloadSpec};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

/// One stream of a step, resolved.
#[derive(Clone, Debug)]
pub struct ResolvedStream {
    pub name: String,
    pub cfg: RunConfig,
    /// Threads with the suite's `--jobs`; `None` when the stream has a fixed count.
    pub threads: super::profile::Threads,
    pub qd: Option<u32>,
    /// The stream's own I/O count, over all its workers (a fio job's size or number_ios), split over
    /// its lanes; `None`: its lanes' share of `Timing::ios`.
    pub ios: Option<u64>,
    /// The stream's own runtime (a fio job's, which ends it alone); `None`: `Timing::runtime`.
    pub runtime: Option<Duration>,
    /// fio's flow control: the flow the stream's workers join, each with the stream's weight (a
    /// fio job's clones; the job file's executor refuses a job with a flow on several files).
    pub flow: Option<crate::workload::flow::FlowShare>,
}

/// What the run is measured over.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    pub ramp: Duration,
    /// `None`: until `ios` are done.
    pub runtime: Option<Duration>,
    /// Total I/Os, split evenly over the workers.
    pub ios: Option<u64>,
}

/// The machine side of a suite: target and the cores workers go on (each stream's engine is its
/// resolved `cfg.engine`).
pub struct Bench {
    /// The kernel engines' targets; with several (a fio job's `filename=a:b`), every worker drives
    /// every one of them.
    pub target_paths: Vec<std::path::PathBuf>,
    pub cores: Vec<usize>,
    pub signal: Arc<AtomicUsize>,
    pub interval: Duration,
    pub seed: u64,
    /// The attached controllers, for `--engine spdk`.
    pub spdk: Option<crate::launch::SpdkRun>,
    /// When the workers start (a fio group's startdelay); `None`: at once.
    pub start_at: Option<std::time::SystemTime>,
    /// Per stream, whether its end ends the run (a fio job's `exitall`); empty: none's does.
    pub exit_streams: Vec<bool>,
}

/// Ends the run once every lane of a stream in `ends` has ended (fio's `exitall`).
struct ExitWatch {
    /// Per stream: its lanes, and whether its end ends the run.
    streams: Vec<(Vec<usize>, bool)>,
    finished: Vec<bool>,
}

impl coordinator::RunWatch for ExitWatch {
    fn ends_run(&mut self, _point: &IntervalPoint) -> bool {
        false
    }

    fn lane_finished(&mut self, lane: usize) -> bool {
        if let Some(f) = self.finished.get_mut(lane) {
            *f = true;
        }
        self.streams.iter().any(|(lanes, ends)| *ends && lanes.iter().all(|&l| self.finished[l]))
    }
}

/// One worker of a measurement.
#[derive(Clone, Debug)]
struct Slot {
    stream: usize,
    spec: Arc<WorkloadSpec>,
    qd: u32,
}

/// A finished measurement.
pub struct Measurement {
    pub result: RunResult,
    /// Per stream: the worker indices in `result.workers`.
    pub stream_workers: Vec<Vec<usize>>,
    pub threads: Vec<usize>,
    pub qds: Vec<u32>,
}

impl Measurement {
    /// Total IOPS over both directions.
    pub fn iops(&self) -> f64 {
        let secs = self.result.elapsed_ns as f64 / 1e9;
        if secs > 0.0 { self.result.total.ios() as f64 / secs } else { 0.0 }
    }

    /// Every direction's latencies together.
    pub fn combined(&self) -> DirStats {
        self.result.total.all()
    }

    /// Each worker's IOPS over the run, summed over the targets it drove (its lanes).
    pub fn worker_iops(&self) -> Vec<f64> {
        let threads = self.result.workers.iter().map(|w| w.thread + 1).max().unwrap_or(0);
        let mut iops = vec![0.0; threads];
        for w in &self.result.workers {
            let ns = w.summary.as_ref().map_or(0, |s| s.measured_ns);
            if ns > 0 {
                iops[w.thread] += w.stats.ios() as f64 / (ns as f64 / 1e9);
            }
        }
        iops
    }
}

/// The bytes of each worker's slice when a sequential stream runs on `threads` workers.
///
/// # Errors
/// When a slice would hold less than one I/O.
pub fn slice_bytes(s: &ResolvedStream, threads: usize) -> Result<u64, String> {
    let w = &s.cfg.workload;
    let per = w.range_bytes / w.align_bytes / threads as u64 * w.align_bytes;
    if per < u64::from(w.max_bs()) {
        return Err(format!(
            "stream {}: {threads} sequential workers leave each less than one {}-byte I/O of its {}-byte region; raise --size or use fewer threads",
            s.name,
            w.max_bs(),
            w.range_bytes
        ));
    }
    Ok(per)
}

/// Runs `streams` with `jobs` threads (for streams that follow the suite's count) at queue depth
/// `qd` (for streams without their own); `rates`, when given, paces each worker at that many IOPS.
///
/// # Errors
/// A worker that failed before the start, or an engine the suite cannot drive.
pub fn measure(
    bench: &Bench,
    streams: &[ResolvedStream],
    jobs: usize,
    qd: u32,
    timing: Timing,
    rates: Option<&[f64]>,
    mut observe: impl FnMut(&IntervalPoint),
) -> Result<Measurement, SuiteError> {
    let mut slots: Vec<Slot> = Vec::new();
    let mut threads_of = Vec::new();
    let mut qds = Vec::new();
    for (i, s) in streams.iter().enumerate() {
        let n = s.threads.resolve(jobs);
        let q = s.qd.unwrap_or(qd);
        let w = &s.cfg.workload;
        for j in 0..n {
            let spec = if w.clone_step_bytes > 0 {
                // fio's offset_increment: worker j's own working set, from j steps on.
                let start = w.range_start + w.clone_step_bytes * j as u64;
                WorkloadSpec { range_start: start, ..w.clone() }
            } else if w.rw.is_random() || w.zones.is_some() || n == 1 {
                w.clone()
            } else {
                let per = slice_bytes(s, n).map_err(SuiteError::Usage)?;
                let start = w.range_start + per * j as u64;
                let bytes = if j + 1 == n { w.range_start + w.range_bytes - start } else { per };
                WorkloadSpec { range_start: start, range_bytes: bytes, ..w.clone() }
            };
            slots.push(Slot { stream: i, spec: Arc::new(spec), qd: q });
        }
        threads_of.push(n);
        qds.push(q);
    }
    // One lane per worker and target of its stream: every worker on every target of its stream
    // (fio's jobs open all their files, and jobs that run together each have their own); SPDK's
    // namespaces are dealt over the workers, as `run` deals them.
    let of_stream: Vec<Vec<usize>> = streams.iter().map(|s| stream_targets(&bench.target_paths, &s.cfg)).collect();
    let n: usize = slots.iter().map(|s| of_stream[s.stream].len()).sum();
    let mut stream_lanes: Vec<Vec<usize>> = vec![Vec::new(); streams.len()];
    let mut workers: Vec<WorkerPlan> = Vec::with_capacity(n);
    let lanes_of_stream: Vec<u64> = (0..streams.len()).map(|i| (threads_of[i] * of_stream[i].len()) as u64).collect();
    for (thread, s) in slots.iter().enumerate() {
        let own = &of_stream[s.stream];
        let targets = own.len();
        for &t in own {
            let index = workers.len();
            let (k, m) = (stream_lanes[s.stream].len() as u64, lanes_of_stream[s.stream]);
            stream_lanes[s.stream].push(index);
            workers.push(WorkerPlan {
                index,
                thread,
                target: if bench.target_paths.len() > 1 {
                    t
                } else {
                    thread % launch::spdk_targets(bench.spdk.as_ref())
                },
                // The slice is already the worker's own; see the module documentation.
                slice: 0,
                slices: 1,
                core: Some(bench.cores[thread % bench.cores.len()]),
                queue_depth: s.qd,
                worker_qd: (targets > 1 && streams[s.stream].cfg.queue_depth_shared).then_some(s.qd),
                spec: s.spec.clone(),
                ramp: timing.ramp,
                runtime: streams[s.stream].runtime.or(timing.runtime),
                io_limit: match streams[s.stream].ios {
                    Some(t) => Some(t / m + u64::from(k < t % m)),
                    None => timing.ios.map(|t| t / n as u64 + u64::from((index as u64) < t % n as u64)),
                },
                // The job clone's bytes, over the targets it drives.
                byte_limit: streams[s.stream]
                    .cfg
                    .io_bytes_per_job
                    .map(|b| crate::run::share_of(b, targets, own.iter().position(|&o| o == t).unwrap_or(0))),
                rate_iops: rates.map(|r| (r[thread] / targets as f64).max(1.0)),
                rate_share: 1.0 / targets as f64,
                interval: bench.interval,
                latency: streams[s.stream].cfg.latency,
                on_error: streams[s.stream].cfg.on_error,
                drain_timeout: streams[s.stream].cfg.drain_timeout,
                // Suites measure; `run --verify` checks data.
                verify: None,
                // Joined here, before the gate: every weight counts from the first I/O on.
                flow: streams[s.stream].flow.as_ref().map(|f| f.seat()),
                // fio's latency target is refused on jobs that run together (`fio::plan`).
                latency_target: None,
                io_log: streams[s.stream].cfg.io_log,
            });
        }
    }
    let stream_workers = stream_lanes;
    let irqs =
        crate::cost::DeviceIrqs::of_targets(streams.iter().flat_map(|s| &s.cfg.targets).map(|t| t.path.as_path()));
    let plan = RunPlan {
        workers,
        interval: bench.interval,
        signal: bench.signal.clone(),
        start_at: bench.start_at,
        irqs,
        gate: None,
        watch: bench.exit_streams.iter().any(|&e| e).then(|| {
            let streams = stream_workers.iter().cloned().zip(bench.exit_streams.iter().copied()).collect();
            Box::new(ExitWatch { streams, finished: vec![false; n] }) as Box<dyn coordinator::RunWatch>
        }),
    };
    let on = |s: &ResolvedStream| EngineTarget {
        paths: &bench.target_paths,
        writes: s.cfg.workload.writes(),
        direct: !s.cfg.buffered,
        buffer_seed: bench.seed,
        spdk: bench.spdk.as_ref(),
    };
    // Each stream on its own resolved engine and way to its target: a fio group's jobs each on
    // their ioengine and direct (a suite's streams all resolve to the suite's engine).
    let engines: Vec<(&EngineSpec, EngineTarget<'_>)> = streams.iter().map(|s| (&s.cfg.engine, on(s))).collect();
    let engine_of: Vec<usize> = slots.iter().map(|s| s.stream).collect();
    let result = launch::run_engines(&engines, &engine_of, plan, &mut observe).map_err(|e| match e {
        coordinator::CoordinatorError::Interrupted(_) => SuiteError::Interrupted,
        e => SuiteError::Run(e.to_string()),
    })?;
    Ok(Measurement { result, stream_workers, threads: threads_of, qds })
}

/// The indices in `paths` of the targets a stream drives: its own, when the run holds them all (a
/// job file's jobs that run together, each on its own files); else every one, as a suite's streams
/// share the suite's targets. Always at least one index (SPDK and null have no paths).
fn stream_targets(paths: &[std::path::PathBuf], cfg: &RunConfig) -> Vec<usize> {
    let own: Option<Vec<usize>> = cfg.targets.iter().map(|t| paths.iter().position(|p| *p == t.path)).collect();
    match own {
        Some(own) if !own.is_empty() && paths.len() > 1 => own,
        _ => (0..paths.len().max(1)).collect(),
    }
}

/// The measurement's document: `run --json`'s (config of the first stream, whole histograms), with a
/// `label`, and `streams` giving each stream's workload, threads, queue depth and what it did (per
/// direction I/Os and bytes, so the mix can be checked).
pub fn document(label: &str, streams: &[ResolvedStream], m: &Measurement, timing: Timing) -> RunDocument {
    let mut cfg = streams[0].cfg.clone();
    cfg.cores = m.result.workers.iter().filter_map(|w| w.core).collect();
    cfg.queue_depth = m.qds[0];
    cfg.runtime = timing.runtime;
    cfg.ramp = timing.ramp;
    cfg.ios = timing.ios;
    let mut doc = report::json::document(&cfg, &m.result, crate::run::clock_source());
    let per_stream = streams
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut st = Stats::default();
            for &w in &m.stream_workers[i] {
                st += &m.result.workers[w].stats;
            }
            let w = &s.cfg.workload;
            let dir = |d: &DirStats| StreamDir {
                ios: d.ios,
                io_bytes: d.bytes,
                mean_ns: d.mean_ns(),
                p99_ns: d.percentile_ns(99.0),
            };
            StreamDoc {
                name: s.name.clone(),
                rw: doc_rw(w.rw),
                read_percent: w.read_percent(),
                bssplit: format!("{},{}", w.bs_read.to_fio(), w.bs_write.to_fio()),
                range_start: w.range_start,
                range_bytes: w.range_bytes,
                threads: m.threads[i],
                qd: m.qds[i],
                read: dir(st.read()),
                write: dir(st.write()),
            }
        })
        .collect();
    doc.label = Some(label.into());
    doc.streams = Some(per_stream);
    doc
}

fn doc_rw(rw: RwMode) -> Rw {
    match rw {
        RwMode::Read => Rw::Read,
        RwMode::Write => Rw::Write,
        RwMode::RandRead => Rw::RandRead,
        RwMode::RandWrite => Rw::RandWrite,
        RwMode::Rw => Rw::Rw,
        RwMode::RandRw => Rw::RandRw,
        RwMode::Trim => Rw::Trim,
        RwMode::RandTrim => Rw::RandTrim,
        RwMode::TrimWrite => Rw::TrimWrite,
    }
}

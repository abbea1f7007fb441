//! Runs the workers of one job: start gate, interval reports, histogram merging, stop conditions and
//! signals.
//!
//! The coordinator spawns one thread per worker, waits until every worker has pinned itself and built
//! its engine, then opens the gate for all at once. Each interval every worker sends its statistics on
//! a bounded channel and the coordinator hands back an emptied set (double buffering), merges the
//! reports into per-worker totals and into a per-interval series, and tells an observer (the live
//! line) how the last interval went. It never formats or prints: that is the caller's business.

use crate::cpu::{CpuTimes, CpuUsage};
use crate::engine::{EngineBuilder, EngineInfo};
use crate::stats::{DirStats, Stats};
use crate::verify::{GenTable, Mismatch, Verifier};
use crate::worker::{self, Links, Phase, Report, Shared, WorkerError, WorkerPlan, WorkerSummary};
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, bounded};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

/// How often the coordinator looks at signals and stuck workers when no report arrives.
const TICK: Duration = Duration::from_millis(20);
/// Grace beyond the planned end (ramp + runtime + drain timeout) before workers count as stuck.
const STUCK_GRACE: Duration = Duration::from_secs(10);

/// One direction of one interval, summed over workers.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct DirPoint {
    pub ios: u64,
    pub bytes: u64,
    pub iops: f64,
    pub bw_bytes: f64,
    pub mean_ns: f64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

impl DirPoint {
    fn from(d: &DirStats, secs: f64) -> DirPoint {
        DirPoint {
            ios: d.ios,
            bytes: d.bytes,
            iops: d.ios as f64 / secs,
            bw_bytes: d.bytes as f64 / secs,
            mean_ns: d.mean_ns(),
            p99_ns: d.percentile_ns(99.0),
            max_ns: d.max_ns,
        }
    }
}

/// One interval of the run, summed over workers.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct IntervalPoint {
    /// End of the interval, in seconds since the measurement started (negative during the ramp).
    pub t_s: f64,
    #[serde(skip)]
    pub ramp: bool,
    pub read: DirPoint,
    pub write: DirPoint,
    pub errors: u64,
}

/// One worker's results.
#[derive(Debug)]
pub struct WorkerResult {
    pub index: usize,
    pub core: Option<usize>,
    pub stats: Stats,
    pub summary: Option<WorkerSummary>,
}

/// The results of a run.
#[derive(Debug)]
pub struct RunResult {
    pub engine: EngineInfo,
    pub workers: Vec<WorkerResult>,
    pub total: Stats,
    /// The longest worker's measured time.
    pub elapsed_ns: u64,
    pub intervals: Vec<IntervalPoint>,
    /// The signal that cut the run short, if any.
    pub interrupted_by: Option<i32>,
    /// A worker that failed after the start; the results are partial.
    pub failure: Option<WorkerError>,
    /// Wall-clock moment the start gate opened.
    pub started_at: SystemTime,
    /// Data verification, with `--verify`.
    pub verify: Option<VerifyResult>,
    /// The process's CPU time from the start gate to the last worker's end, and the I/Os completed
    /// in it (ramp included).
    pub cpu: CpuUsage,
    /// Faults injected from outside the workers during the run (a controller reset) and what became
    /// of them, one sentence each.
    pub events: Vec<String>,
}

/// What verification found, over all workers.
#[derive(Debug)]
pub struct VerifyResult {
    pub units_checked: u64,
    pub mismatch_count: u64,
    /// The first mismatches in detail (up to `verify::MISMATCHES_KEPT` per worker).
    pub mismatches: Vec<Mismatch>,
    /// Reads of the verify pass that failed outright.
    pub read_errors: u64,
    /// Time spent stamping and checking data, summed over workers.
    pub cost_ns: u64,
    /// What every unit should now hold, for `--verify-state`.
    pub table: GenTable,
}

impl RunResult {
    pub fn error_count(&self) -> u64 {
        self.total.errors.total()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CoordinatorError {
    /// A worker failed before the start: nothing ran.
    #[error(transparent)]
    Setup(WorkerError),
    #[error("interrupted before the workers started; nothing ran")]
    Interrupted,
    #[error("cannot start worker thread {worker}: {source}")]
    Spawn { worker: usize, source: std::io::Error },
}

/// Everything about the run that is not per worker.
pub struct RunPlan {
    pub workers: Vec<WorkerPlan>,
    pub interval: Duration,
    /// Set (to the signal number) by the signal handler; read every tick.
    pub signal: Arc<AtomicUsize>,
    /// Open the start gate at this wall-clock moment (once every worker is ready), so that processes
    /// on several hosts start together; `None` opens it as soon as all are ready.
    pub start_at: Option<SystemTime>,
}

struct Channels {
    reports: Receiver<Report>,
    spares: Vec<Sender<Box<Stats>>>,
}

/// Aggregates one interval across workers until every running worker has reported it.
struct Pending {
    stats: Box<Stats>,
    reported: usize,
}

/// Runs the job and returns its results. `observe` sees each completed interval (the live line).
pub fn run<B: EngineBuilder + 'static>(
    builder: Arc<B>,
    plan: RunPlan,
    clock: quanta::Clock,
    mut observe: impl FnMut(&IntervalPoint),
) -> Result<RunResult, CoordinatorError> {
    let n = plan.workers.len();
    let shared = Arc::new(Shared::default());
    let (report_tx, report_rx) = bounded(n * 4 + 4);
    let mut handles: Vec<Option<JoinHandle<()>>> = Vec::with_capacity(n);
    let mut spares = Vec::with_capacity(n);
    for wp in &plan.workers {
        let (spare_tx, spare_rx) = bounded(2);
        spares.push(spare_tx);
        let links = Links { reports: report_tx.clone(), spares: spare_rx };
        let worker = wp.index;
        let (b, s, wp, c) = (builder.clone(), shared.clone(), wp.clone(), clock.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("nvmebench-w{worker}"))
            .spawn(move || worker::run(&*b, &wp, &s, &links, &c));
        match spawned {
            Ok(h) => handles.push(Some(h)),
            Err(source) => {
                shared.abort();
                join_all(&mut handles);
                return Err(CoordinatorError::Spawn { worker, source });
            }
        }
    }
    drop(report_tx);
    let ch = Channels { reports: report_rx, spares };

    // Start gate: every worker pinned and its engine built, or none starts.
    let mut info = None;
    let mut ready = 0;
    while ready < n {
        match ch.reports.recv_timeout(TICK) {
            Ok(Report::Ready { info: i, .. }) => {
                info.get_or_insert(i);
                ready += 1;
            }
            Ok(Report::Failed { error, .. }) => {
                shared.abort();
                join_all(&mut handles);
                return Err(CoordinatorError::Setup(error));
            }
            Ok(_) => unreachable!("workers report intervals only after the gate opens"),
            Err(RecvTimeoutError::Timeout) => {
                if let Some(error) = panicked(&mut handles) {
                    shared.abort();
                    join_all(&mut handles);
                    return Err(CoordinatorError::Setup(error));
                }
                if plan.signal.load(Ordering::Relaxed) != 0 {
                    shared.abort();
                    join_all(&mut handles);
                    return Err(CoordinatorError::Interrupted);
                }
            }
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    if let Some(at) = plan.start_at {
        if wait_until(at, &plan.signal).is_err() {
            shared.abort();
            join_all(&mut handles);
            return Err(CoordinatorError::Interrupted);
        }
    }
    let cpu_start = CpuTimes::now();
    shared.open_gate();
    let started = Instant::now();
    let started_at = SystemTime::now();
    let mut ramp_ios = 0u64;
    let planned_end =
        plan.workers.iter().map(|w| w.ramp + w.runtime.unwrap_or(Duration::MAX / 4) + w.drain_timeout).max();

    let interval_s = plan.interval.as_secs_f64();
    let mut totals: Vec<Stats> = (0..n).map(|_| Stats::default()).collect();
    let mut summaries: Vec<Option<WorkerSummary>> = vec![None; n];
    let mut seq = vec![[0u64; 2]; n];
    let mut running = n;
    let mut pending: BTreeMap<(u8, u64), Pending> = BTreeMap::new();
    let mut intervals = Vec::new();
    let mut failure = None;
    let mut interrupted_by = None;
    let mut finished = vec![false; n];
    let mut verifiers = Vec::new();

    let mut finalize =
        |pending: &mut BTreeMap<(u8, u64), Pending>, running: usize, all: bool, intervals: &mut Vec<IntervalPoint>| {
            let ready: Vec<(u8, u64)> =
                pending.iter().filter(|(_, p)| all || p.reported >= running).map(|(k, _)| *k).collect();
            for key in ready {
                let p = pending.remove(&key).expect("key was just listed");
                if all && p.reported < running {
                    continue;
                }
                let ramp = key.0 == 0;
                let point = IntervalPoint {
                    // Rounded to the microsecond so that 0.3 prints as 0.3.
                    t_s: if ramp { -1.0 } else { ((key.1 + 1) as f64 * interval_s * 1e6).round() / 1e6 },
                    ramp,
                    read: DirPoint::from(p.stats.read(), interval_s),
                    write: DirPoint::from(p.stats.write(), interval_s),
                    errors: p.stats.errors.total(),
                };
                observe(&point);
                if !ramp {
                    intervals.push(point);
                }
            }
        };

    while running > 0 {
        match ch.reports.recv_timeout(TICK) {
            Ok(Report::Interval { worker, phase, mut stats }) => {
                let p = phase_key(phase);
                let key = (p, seq[worker][p as usize]);
                seq[worker][p as usize] += 1;
                if phase == Phase::Measure {
                    totals[worker] += &stats;
                } else {
                    ramp_ios += stats.ios() + stats.errors.total();
                }
                let entry = pending.entry(key).or_insert_with(|| Pending { stats: Box::default(), reported: 0 });
                *entry.stats += &stats;
                entry.reported += 1;
                stats.reset();
                let _ = ch.spares[worker].try_send(stats);
                finalize(&mut pending, running, false, &mut intervals);
            }
            Ok(Report::Done { worker, stats, summary, verify }) => {
                if let Some(v) = verify {
                    verifiers.push(*v);
                }
                totals[worker] += &stats;
                summaries[worker] = Some(summary);
                finished[worker] = true;
                running -= 1;
                finalize(&mut pending, running, false, &mut intervals);
            }
            Ok(Report::Failed { worker, error, partial }) => {
                if let Some((stats, summary)) = partial {
                    totals[worker] += &stats;
                    summaries[worker] = Some(summary);
                }
                shared.request_stop();
                failure.get_or_insert(error);
                finished[worker] = true;
                running -= 1;
            }
            Ok(Report::Ready { .. }) => {}
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        let sig = plan.signal.load(Ordering::Relaxed);
        if sig != 0 && interrupted_by.is_none() {
            interrupted_by = Some(sig as i32);
            shared.request_stop();
        }
        if let Some(error) = panicked_unfinished(&mut handles, &finished) {
            shared.request_stop();
            failure.get_or_insert(error.1);
            finished[error.0] = true;
            running -= 1;
        }
        if planned_end.is_some_and(|e| started.elapsed() > e + STUCK_GRACE) {
            shared.request_stop();
            let stuck: Vec<usize> = (0..n).filter(|&w| !finished[w]).collect();
            failure.get_or_insert(WorkerError::Panicked {
                worker: stuck[0],
                message: format!("did not stop within {STUCK_GRACE:?} of the planned end; the device may be hung"),
            });
            // Stuck threads are abandoned, not joined: the process ends with the report.
            running = 0;
        }
    }
    finalize(&mut pending, running, true, &mut intervals);
    for (i, h) in handles.iter_mut().enumerate() {
        if finished[i] {
            if let Some(h) = h.take() {
                let _ = h.join();
            }
        }
    }
    let cpu_used = CpuTimes::now().since(cpu_start);

    let mut total = Stats::default();
    for t in &totals {
        total += t;
    }
    let elapsed_ns = summaries.iter().flatten().map(|s| s.measured_ns).max().unwrap_or(0);
    let workers = totals
        .into_iter()
        .zip(summaries)
        .enumerate()
        .map(|(i, (stats, summary))| WorkerResult { index: i, core: plan.workers[i].core, stats, summary })
        .collect();
    let cpu = CpuUsage::new(cpu_used, ramp_ios + total.ios() + total.errors.total());
    Ok(RunResult {
        engine: info.unwrap_or_default(),
        workers,
        total,
        elapsed_ns,
        intervals,
        interrupted_by,
        failure,
        started_at,
        verify: merge_verifiers(verifiers),
        cpu,
        events: Vec::new(),
    })
}

fn merge_verifiers(vs: Vec<Verifier>) -> Option<VerifyResult> {
    let table = GenTable::merge(vs.iter().map(|v| &v.table))?;
    let mut mismatches: Vec<Mismatch> = vs.iter().flat_map(|v| v.mismatches.iter().copied()).collect();
    // A unit found bad during the run is found again by the verify pass: list it once.
    mismatches.sort_by_key(|m| m.offset);
    mismatches.dedup();
    Some(VerifyResult {
        units_checked: vs.iter().map(|v| v.units_checked).sum(),
        mismatch_count: vs.iter().map(|v| v.mismatch_count).sum(),
        mismatches,
        read_errors: vs.iter().map(|v| v.read_errors).sum(),
        cost_ns: vs.iter().map(|v| v.cost_ns).sum(),
        table,
    })
}

/// Sleeps until the wall clock reaches `at`, looking at signals every tick; `Err` if one came.
/// The last stretch is slept in one go so that the gate opens within the scheduler's wake-up
/// latency of `at`.
fn wait_until(at: SystemTime, signal: &AtomicUsize) -> Result<(), ()> {
    loop {
        if signal.load(Ordering::Relaxed) != 0 {
            return Err(());
        }
        match at.duration_since(SystemTime::now()) {
            Ok(left) if !left.is_zero() => std::thread::sleep(left.min(TICK)),
            _ => return Ok(()),
        }
    }
}

fn phase_key(p: Phase) -> u8 {
    match p {
        Phase::Ramp => 0,
        Phase::Measure => 1,
    }
}

fn join_all(handles: &mut [Option<JoinHandle<()>>]) {
    for h in handles.iter_mut().filter_map(Option::take) {
        let _ = h.join();
    }
}

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// A worker thread that ended by panicking (before the gate).
fn panicked(handles: &mut [Option<JoinHandle<()>>]) -> Option<WorkerError> {
    let all_unfinished = vec![false; handles.len()];
    panicked_unfinished(handles, &all_unfinished).map(|(_, e)| e)
}

/// A worker thread that ended without its final report: it panicked.
fn panicked_unfinished(handles: &mut [Option<JoinHandle<()>>], finished: &[bool]) -> Option<(usize, WorkerError)> {
    for (worker, slot) in handles.iter_mut().enumerate() {
        if finished[worker] || !slot.as_ref().is_some_and(|h| h.is_finished()) {
            continue;
        }
        let h = slot.take().expect("checked above");
        if let Err(p) = h.join() {
            return Some((worker, WorkerError::Panicked { worker, message: panic_message(p) }));
        }
        // A clean exit without a final report can only mean its report is still in the channel;
        // leave it to the receive loop.
        *slot = None;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::fake::{FakeBuilder, Script, SeenOps, Step};
    use crate::engine::null::{NullBuilder, NullOptions};
    use crate::io::Direction;
    use crate::io::IoError;
    use crate::options::OnError;
    use crate::worker::StopReason;
    use crate::workload::bssplit::BsSplit;
    use crate::workload::dist::RandomDist;
    use crate::workload::{RwMode, WorkloadSpec};
    use std::sync::Mutex;

    fn spec(rw: RwMode, read_percent: u32) -> Arc<WorkloadSpec> {
        Arc::new(WorkloadSpec {
            rw,
            read_percent,
            bs_read: BsSplit::single(4096),
            bs_write: BsSplit::single(4096),
            align_bytes: 4096,
            range_start: 0,
            range_bytes: 1 << 30,
            random_dist: RandomDist::Uniform,
            seed: 1,
        })
    }

    fn plan(workers: usize, qd: u32, spec: Arc<WorkloadSpec>) -> RunPlan {
        RunPlan {
            workers: (0..workers)
                .map(|index| WorkerPlan {
                    index,
                    workers,
                    core: None,
                    queue_depth: qd,
                    spec: spec.clone(),
                    ramp: Duration::ZERO,
                    runtime: None,
                    io_limit: None,
                    rate_iops: None,
                    interval: Duration::from_millis(100),
                    on_error: OnError::Stop,
                    drain_timeout: Duration::from_secs(5),
                    verify: None,
                })
                .collect(),
            interval: Duration::from_millis(100),
            signal: Arc::new(AtomicUsize::new(0)),
            start_at: None,
        }
    }

    fn fake(script: Script) -> (Arc<FakeBuilder>, quanta::Clock, SeenOps) {
        let (clock, mock) = quanta::Clock::mock();
        let seen = Arc::new(Mutex::new(Vec::new()));
        (Arc::new(FakeBuilder { script, mock, seen: seen.clone() }), clock, seen)
    }

    #[test]
    fn scripted_latencies_land_exactly_in_the_histogram() {
        let steps = (0..1000).map(|i| Step { latency_ns: 1000 + (i % 10) * 100, result: Ok(()) }).collect();
        let (b, clock, _) = fake(Script { steps, default_latency_ns: 5000, busy_calls: vec![] });
        let mut p = plan(1, 1, spec(RwMode::RandRead, 100));
        p.workers[0].io_limit = Some(1000);
        let r = run(b, p, clock, |_| {}).unwrap();
        let d = r.total.read();
        assert_eq!(d.ios, 1000);
        assert_eq!(d.bytes, 1000 * 4096);
        assert_eq!((d.min_ns, d.max_ns), (1000, 1900));
        assert_eq!(d.mean_ns(), 1450.0);
        assert_eq!(d.percentile_ns(50.0), 1400);
        assert_eq!(r.workers[0].summary.as_ref().unwrap().stop_reason, StopReason::IoLimit);
        // 1000 I/Os one at a time, 1450 ns each on average, in a mocked clock: exactly 1.45 ms.
        assert_eq!(r.elapsed_ns, 1_450_000);
    }

    #[test]
    fn busy_queue_is_retried_with_the_same_op() {
        let (b, clock, seen) = fake(Script { steps: vec![], default_latency_ns: 10, busy_calls: vec![0, 3, 4] });
        let mut p = plan(1, 4, spec(RwMode::RandRead, 100));
        p.workers[0].io_limit = Some(100);
        let r = run(b, p, clock, |_| {}).unwrap();
        assert_eq!(r.total.read().ios, 100);
        assert_eq!(r.error_count(), 0);
        // The ops after Busy are the generator's sequence, without a gap or a repeat.
        let mut g = crate::workload::Generator::new(&spec(RwMode::RandRead, 100), 0, 1);
        let expected: Vec<_> = (0..100).map(|_| g.next_op()).collect();
        assert_eq!(seen.lock().unwrap()[0], expected);
    }

    #[test]
    fn errors_stop_the_run_under_the_stop_policy() {
        let mut steps: Vec<Step> = (0..50).map(|_| Step { latency_ns: 100, result: Ok(()) }).collect();
        steps[20].result = Err(IoError::Errno { errno: libc::EIO });
        let (b, clock, _) = fake(Script { steps, default_latency_ns: 100, busy_calls: vec![] });
        let mut p = plan(1, 1, spec(RwMode::RandWrite, 0));
        p.workers[0].io_limit = Some(1000);
        let r = run(b, p, clock, |_| {}).unwrap();
        assert_eq!(r.total.write().ios, 20);
        assert_eq!(r.error_count(), 1);
        let s = r.workers[0].summary.as_ref().unwrap();
        assert_eq!(s.stop_reason, StopReason::Error);
        let f = s.first_error.unwrap();
        assert_eq!((f.error, f.dir), (IoError::Errno { errno: libc::EIO }, Direction::Write));
    }

    #[test]
    fn errors_are_counted_under_the_continue_policy() {
        let steps: Vec<Step> = (0..300)
            .map(|i| Step {
                latency_ns: 100,
                result: if i % 3 == 0 { Err(IoError::Nvme { sct: 0, sc: 0x81 }) } else { Ok(()) },
            })
            .collect();
        let (b, clock, _) = fake(Script { steps, default_latency_ns: 100, busy_calls: vec![] });
        let mut p = plan(1, 2, spec(RwMode::RandRead, 100));
        p.workers[0].io_limit = Some(300);
        p.workers[0].on_error = OnError::Continue;
        let r = run(b, p, clock, |_| {}).unwrap();
        assert_eq!(r.total.read().ios, 200);
        assert_eq!(r.total.errors.kinds(), vec![(IoError::Nvme { sct: 0, sc: 0x81 }, 100)]);
    }

    #[test]
    fn runtime_and_intervals_follow_the_clock() {
        let (b, clock, _) = fake(Script { steps: vec![], default_latency_ns: 1_000_000, busy_calls: vec![] });
        let mut p = plan(1, 4, spec(RwMode::RandRead, 100));
        p.workers[0].runtime = Some(Duration::from_secs(1));
        let mut seen = Vec::new();
        let r = run(b, p, clock, |pt| seen.push(*pt)).unwrap();
        // 4 slots each completing every 1 ms for 1 s: 4000 I/Os. An interval holds what was reaped
        // before its end: the first misses the completions at 100 ms (reaped just after the report),
        // the final report carries those at 1 s.
        assert_eq!(r.total.read().ios, 4000);
        assert_eq!(r.workers[0].summary.as_ref().unwrap().stop_reason, StopReason::Time);
        let times: Vec<f64> = r.intervals.iter().map(|i| i.t_s).collect();
        assert_eq!(times, vec![0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]);
        let ios: Vec<u64> = r.intervals.iter().map(|i| i.read.ios).collect();
        assert_eq!(ios, vec![396, 400, 400, 400, 400, 400, 400, 400, 400, 400]);
        assert!(r.intervals.iter().all(|i| i.read.p99_ns == 1_000_000 && i.read.iops == i.read.ios as f64 * 10.0));
        assert_eq!(seen.len(), 10);
    }

    #[test]
    fn ramp_is_not_counted() {
        let (b, clock, _) = fake(Script { steps: vec![], default_latency_ns: 1_000_000, busy_calls: vec![] });
        let mut p = plan(1, 1, spec(RwMode::RandRead, 100));
        p.workers[0].ramp = Duration::from_millis(500);
        p.workers[0].runtime = Some(Duration::from_millis(200));
        let r = run(b, p, clock, |_| {}).unwrap();
        // 200 issued in the 200 ms window, plus the one issued at 499 ms that completes at 500 ms,
        // inside the window (as in fio, what completes after the ramp counts).
        assert_eq!(r.total.read().ios, 201);
    }

    #[test]
    fn paced_runs_measure_from_the_intended_time() {
        // 1000 IOPS on a device that takes 3 ms: with one slot, I/Os fall ever further behind their
        // schedule, and latency must grow with it instead of staying at 3 ms.
        let (b, clock, _) = fake(Script { steps: vec![], default_latency_ns: 3_000_000, busy_calls: vec![] });
        let mut p = plan(1, 1, spec(RwMode::RandRead, 100));
        p.workers[0].rate_iops = Some(1000.0);
        p.workers[0].io_limit = Some(100);
        let r = run(b, p, clock, |_| {}).unwrap();
        let d = r.total.read();
        assert_eq!(d.ios, 100);
        assert_eq!(d.min_ns, 3_000_000);
        // The 100th I/O was due at 99 ms and completed at 300 ms.
        assert_eq!(d.max_ns, 201_000_000);
    }

    #[test]
    fn null_engine_workers_merge() {
        let mut p = plan(2, 8, spec(RwMode::RandRw, 50));
        for w in &mut p.workers {
            w.io_limit = Some(50_000);
        }
        let b = Arc::new(NullBuilder { options: NullOptions::default() });
        let r = run(b, p, quanta::Clock::new(), |_| {}).unwrap();
        assert_eq!(r.total.ios(), 100_000);
        let sum: u64 = r.workers.iter().map(|w| w.stats.ios()).sum();
        assert_eq!(sum, 100_000);
        assert!(r.total.read().ios > 45_000 && r.total.write().ios > 45_000);
        assert_eq!(r.engine.name, "null");
    }

    #[test]
    fn the_gate_opens_at_the_start_time() {
        let mut p = plan(2, 4, spec(RwMode::RandRead, 100));
        for w in &mut p.workers {
            w.io_limit = Some(1000);
        }
        let at = SystemTime::now() + Duration::from_millis(300);
        p.start_at = Some(at);
        let b = Arc::new(NullBuilder { options: NullOptions::default() });
        let r = run(b, p, quanta::Clock::new(), |_| {}).unwrap();
        let late = r.started_at.duration_since(at).expect("the gate never opens before the start time");
        assert!(late < Duration::from_millis(100), "opened {late:?} after the start time");
        assert_eq!(r.total.ios(), 2000);
    }

    #[test]
    fn a_signal_while_waiting_for_the_start_time_runs_nothing() {
        let mut p = plan(1, 4, spec(RwMode::RandRead, 100));
        p.start_at = Some(SystemTime::now() + Duration::from_secs(3600));
        p.signal.store(15, Ordering::Relaxed);
        let b = Arc::new(NullBuilder { options: NullOptions::default() });
        let e = run(b, p, quanta::Clock::new(), |_| {}).unwrap_err();
        assert!(matches!(e, CoordinatorError::Interrupted), "{e}");
    }

    #[test]
    fn a_signal_stops_the_run_with_results() {
        let p = plan(1, 4, spec(RwMode::RandRead, 100));
        let sig = p.signal.clone();
        let b = Arc::new(NullBuilder { options: NullOptions { service_time: Duration::from_micros(100) } });
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            sig.store(2, Ordering::Relaxed);
        });
        let r = run(b, p, quanta::Clock::new(), |_| {}).unwrap();
        t.join().unwrap();
        assert_eq!(r.interrupted_by, Some(2));
        assert!(r.total.read().ios > 0);
        assert_eq!(r.workers[0].summary.as_ref().unwrap().stop_reason, StopReason::Requested);
    }

    struct FailingBuilder;
    impl EngineBuilder for FailingBuilder {
        type Engine = crate::engine::null::NullEngine;
        fn build(&self, worker: usize, qd: u32, _: u32) -> Result<Self::Engine, crate::engine::EngineError> {
            if worker == 1 {
                return Err(crate::engine::EngineError::Setup {
                    engine: "null",
                    what: "test set-up",
                    source: std::io::Error::from_raw_os_error(libc::ENOMEM),
                });
            }
            Ok(crate::engine::null::NullEngine::new(NullOptions::default(), qd))
        }
    }

    #[test]
    fn a_worker_failing_set_up_stops_everyone_before_the_start() {
        let p = plan(3, 4, spec(RwMode::RandRead, 100));
        let e = run(Arc::new(FailingBuilder), p, quanta::Clock::new(), |_| {}).unwrap_err();
        assert!(e.to_string().starts_with("worker 1: null: test set-up failed"), "{e}");
    }
}

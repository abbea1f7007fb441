//! Runs the workers of one job: start gate, thread placement, interval reports, histogram merging,
//! stop conditions and signals.
//!
//! The coordinator spawns one thread per worker, waits until every worker has pinned itself and built
//! its engine, moves every other thread of the process off the workers' cores, then opens the gate
//! for all at once with a common epoch. Each interval every worker sends its statistics on a bounded
//! channel and the coordinator hands back an emptied set (double buffering), merges the reports into
//! per-worker totals and, by their place on the common timeline, into a per-interval series, and tells
//! an observer (the live line) how the last interval went. It never formats or prints: that is the
//! caller's business.

use crate::clock::Clock;
use crate::cost::{self, CoreReason, DeviceIrqs, Interrupts, RunCost, WorkerWindow};
use crate::cpu::{self, CpuTimes, CpuUsage, Placement};
use crate::engine::{EngineBuilder, EngineInfo};
use crate::io::Direction;
use crate::stats::Stats;
use crate::verify::{GenTable, Mismatch, Verifier};
pub use crate::worker::ThreadBody;
use crate::worker::iolog::{self, IoRecord};
use crate::worker::{IntervalReport, Links, Phase, Report, Shared, WorkerError, WorkerPlan, WorkerSummary};
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TryRecvError, bounded};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

/// How often the coordinator looks at reports, signals and stuck workers (or every quarter interval
/// when intervals are shorter).
const TICK: Duration = Duration::from_millis(20);
/// The longest the coordinator naps between looks at the workers' reports while they run (a
/// quarter interval when intervals are shorter). Each look wakes a thread on the cores the workers
/// leave free, which on a small machine is where the controller's own poller runs (SPDK's TCP or
/// vfio-user target): at 20 ms the looks preempted the target about 50 times a second, against
/// SPDK perf's one. A worker's end wakes the coordinator at once (it unparks it), so the run's end
/// waits for no nap, and a signal is seen within one.
const NAP_MAX: Duration = Duration::from_millis(250);
/// Grace beyond the planned end (ramp + runtime + drain timeout) before workers count as stuck.
const STUCK_GRACE: Duration = Duration::from_secs(10);

/// One direction of one interval, summed over workers.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct DirPoint {
    pub ios: u64,
    pub bytes: u64,
    /// The sum of each worker's I/Os divided by that worker's measured span.
    pub iops: f64,
    pub bw_bytes: f64,
    pub mean_ns: f64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

/// One interval of the run, summed over workers.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct IntervalPoint {
    /// End of the interval, in seconds since the measurement started (negative during the ramp):
    /// the boundary, or for the final interval the moment the run ended.
    pub t_s: f64,
    /// The longest span a worker measured this interval over, in seconds.
    pub span_s: f64,
    /// The run ended inside this interval: it is shorter than the others (its rates divide by its
    /// own span, so they stay comparable).
    pub partial: bool,
    /// Workers whose reports are in it.
    pub workers: usize,
    #[serde(skip)]
    pub ramp: bool,
    pub read: DirPoint,
    pub write: DirPoint,
    pub trim: DirPoint,
    pub write_zeroes: DirPoint,
    pub flush: DirPoint,
    pub errors: u64,
}

impl IntervalPoint {
    /// One direction's point.
    pub fn of(&self, dir: Direction) -> &DirPoint {
        match dir {
            Direction::Read => &self.read,
            Direction::Write => &self.write,
            Direction::Trim => &self.trim,
            Direction::WriteZeroes => &self.write_zeroes,
            Direction::Flush => &self.flush,
        }
    }
}

/// One interval of one worker thread (fio's job clone), its lanes summed: what fio's per-job logs
/// carry, one log per clone. Kept without histograms (a set per thread and interval would cost
/// hundreds of KiB each), so it has counts, rates and mean latencies, not percentiles.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ThreadPoint {
    /// End of the interval, in seconds since the measurement started: the boundary, or for the
    /// thread's last interval the moment the thread ended.
    pub t_s: f64,
    /// The thread's measured span of the interval, from its first lane's start to its last lane's
    /// end, in ns: fio's `spent` between two samples of a thread.
    pub span_ns: u64,
    /// Per direction, in [`Direction`]'s order.
    pub dir: [ThreadDir; Direction::COUNT],
}

impl ThreadPoint {
    /// One direction's figures.
    pub fn of(&self, dir: Direction) -> &ThreadDir {
        &self.dir[dir as usize]
    }
}

/// One direction of a [`ThreadPoint`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ThreadDir {
    pub ios: u64,
    pub bytes: u64,
    /// The I/Os' latencies added up, in ns.
    pub sum_ns: u128,
    /// With `--latency split`, fio's submission and completion latencies: how many I/Os have each
    /// (a synchronous engine has no submission latency), and their sums in ns.
    pub slat_ios: u64,
    pub slat_sum_ns: u128,
    pub clat_ios: u64,
    pub clat_sum_ns: u128,
}

impl ThreadDir {
    /// Exact mean latency, or 0 without I/O.
    pub fn mean_ns(&self) -> f64 {
        if self.ios == 0 { 0.0 } else { self.sum_ns as f64 / self.ios as f64 }
    }

    /// Exact mean submission latency, or 0 without one.
    pub fn slat_mean_ns(&self) -> f64 {
        if self.slat_ios == 0 { 0.0 } else { self.slat_sum_ns as f64 / self.slat_ios as f64 }
    }

    /// Exact mean completion latency, or 0 without one.
    pub fn clat_mean_ns(&self) -> f64 {
        if self.clat_ios == 0 { 0.0 } else { self.clat_sum_ns as f64 / self.clat_ios as f64 }
    }
}

/// One lane's results: a worker on a target (with one target, simply a worker).
#[derive(Clone, Debug)]
pub struct WorkerResult {
    pub index: usize,
    /// The worker (thread) and the target of the lane.
    pub thread: usize,
    pub target: usize,
    pub core: Option<usize>,
    pub stats: Stats,
    pub summary: Option<WorkerSummary>,
    /// Its engine's facts of this lane (`Engine::lane_facts`: the SPDK engine's NUMA nodes).
    pub engine_facts: Vec<(String, String)>,
}

/// One target's results: the sum of the lanes on it.
#[derive(Clone, Debug)]
pub struct TargetResult {
    pub index: usize,
    pub stats: Stats,
    /// The lanes (indices into `RunResult::workers`) that drove it.
    pub lanes: Vec<usize>,
    /// The longest of its lanes' measured times.
    pub elapsed_ns: u64,
    /// Its own interval series, one point per point of the run's (`RunResult::intervals`, same
    /// times): only with several targets (with one, the run's series is the target's).
    pub intervals: Vec<IntervalPoint>,
}

/// The results of a run.
#[derive(Debug)]
pub struct RunResult {
    pub engine: EngineInfo,
    /// Per lane (one worker on one target); with one target, per worker.
    pub workers: Vec<WorkerResult>,
    /// Per target, summed over its lanes (one entry per target, in the run's order).
    pub targets: Vec<TargetResult>,
    pub total: Stats,
    /// The longest worker's measured time.
    pub elapsed_ns: u64,
    pub intervals: Vec<IntervalPoint>,
    /// Per worker thread (fio's job clone; `WorkerResult::thread`), its own measured series: a
    /// point for each interval it reported in, on the run's boundaries.
    pub threads: Vec<Vec<ThreadPoint>>,
    /// Per worker thread, with fio's per-I/O logs (`WorkerPlan::io_log`), every measured I/O it
    /// completed without error, in the order it handled them (empty without such a log).
    pub io_logs: Vec<Vec<LoggedIo>>,
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
    /// The worker threads' and the counted cores' CPU time over the measured window (`None` when
    /// nothing was measured).
    pub cost: Option<RunCost>,
    /// Where the threads ran: `None` when workers were not pinned (tests).
    pub placement: Option<Placement>,
    /// Faults injected from outside the workers during the run (a controller reset) and what became
    /// of them, one sentence each.
    pub events: Vec<String>,
    /// The drives' health logs over the run (`None`: not read, as with `--telemetry-interval off`).
    pub telemetry: Option<crate::telemetry::Telemetry>,
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
    /// Time spent stamping and checking data during the measurement, summed over workers.
    pub cost_ns: u64,
    /// Bytes per checked unit.
    pub unit_bytes: u64,
    /// Per target (the run's order), what every unit should now hold, for `--verify-state`;
    /// `None` for a target no lane verified.
    pub tables: Vec<Option<GenTable>>,
}

impl RunResult {
    pub fn error_count(&self) -> u64 {
        self.total.errors.total()
    }

    /// I/Os given up on when the drain timed out: they never completed, so the run did not end
    /// clean (exit status 1) even though no I/O reported an error.
    pub fn lost_in_flight(&self) -> u64 {
        self.workers.iter().filter_map(|w| w.summary.as_ref()).map(|s| s.lost_in_flight).sum()
    }

    /// Whether the run did not end clean (exit status 1): I/O errors, I/Os given up after the drain
    /// timeout, or a worker that failed mid-run.
    pub fn failed(&self) -> bool {
        // Errors `--on-error continue:...` went on after do not fail the run, as in fio.
        self.error_count() - self.total.errors.continued + self.lost_in_flight() > 0 || self.failure.is_some()
    }

    /// Whether `--verify` found data that is not what was written, or reads that failed (exit
    /// status 1 too, for a run and for a job file).
    pub fn verify_failed(&self) -> bool {
        self.verify.as_ref().is_some_and(|v| v.mismatch_count > 0 || v.read_errors > 0)
    }

    /// The workers' own CPU time over their measured windows, summed.
    pub fn worker_cpu_ns(&self) -> u64 {
        self.workers.iter().filter_map(|w| w.summary.as_ref()).map(|s| s.thread_cpu_ns).sum()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CoordinatorError {
    /// A worker failed before the start: nothing ran.
    #[error(transparent)]
    Setup(WorkerError),
    /// A signal (its number) came before the start gate opened: nothing ran.
    #[error("interrupted before the workers started; nothing ran")]
    Interrupted(i32),
    #[error("cannot start worker thread {worker}: {source}")]
    Spawn { worker: usize, source: std::io::Error },
    /// The start gate's rendezvous refused to give a moment: nothing ran.
    #[error("{0}")]
    Gate(Box<dyn std::error::Error + Send + Sync>),
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
    /// The targets' interrupt lines: the cores that take them are counted in the run's cost.
    pub irqs: DeviceIrqs,
    /// Asked for the moment once every worker is ready (a fleet's rendezvous with its other
    /// processes), instead of `start_at`.
    pub gate: Option<Box<dyn StartGate>>,
    /// Shown each measured interval as it is merged; may end the run there (a fio job's steady
    /// state), as its planned end would, which is no interruption.
    pub watch: Option<Box<dyn RunWatch>>,
}

/// Looks at a run as it goes, its measured intervals as they are merged (in order) and its lanes
/// as they end, and says when the run has done what it was for: fio's `ss` (the job stops once
/// steady), fio's `exitall` (the others stop when one job ends).
pub trait RunWatch: Send {
    /// Whether the run ends now, after `point`.
    fn ends_run(&mut self, point: &IntervalPoint) -> bool;

    /// Whether the run ends now that `lane` has ended (its last report is in).
    fn lane_finished(&mut self, _lane: usize) -> bool {
        false
    }
}

/// Decides when the start gate opens, once every worker is ready: a fleet's processes meet and
/// agree on a moment. The coordinator waits for that moment as for `start_at`.
pub trait StartGate: Send {
    /// The wall-clock moment to open the gate. `signal` is the run's (set by the signal handler).
    ///
    /// # Errors
    /// Why the run must not start: a signal (its number), or a reason in one sentence.
    fn moment(&mut self, signal: &AtomicUsize) -> Result<SystemTime, GateRefusal>;
}

/// Why a [`StartGate`] gave no moment.
#[derive(Debug)]
pub enum GateRefusal {
    /// A signal came while waiting.
    Interrupted(i32),
    /// The run must not start, for this reason.
    Refused(Box<dyn std::error::Error + Send + Sync>),
}

/// The worker threads and the channels to them.
struct Crew {
    /// Per worker thread.
    handles: Vec<Option<JoinHandle<()>>>,
    /// Per worker thread, its lanes.
    lanes_of: Vec<Vec<usize>>,
    reports: Receiver<Report>,
    spares: Vec<Sender<Box<Stats>>>,
    /// Per lane, where its emptied per-I/O record buffers go back (see `worker::iolog`).
    log_pools: Vec<Sender<Vec<IoRecord>>>,
    shared: Arc<Shared>,
}

impl Crew {
    /// Stops the workers before the start and waits for them.
    fn call_off(&mut self) {
        self.shared.abort();
        for h in self.handles.iter_mut().filter_map(Option::take) {
            let _ = h.join();
        }
    }
}

/// Runs the job and returns its results. `observe` sees each completed interval (the live line).
pub fn run<B: EngineBuilder + 'static>(
    builder: Arc<B>,
    plan: RunPlan,
    clock: Clock,
    observe: impl FnMut(&IntervalPoint),
) -> Result<RunResult, CoordinatorError> {
    let threads = plan.workers.iter().map(|w| w.thread + 1).max().unwrap_or(0);
    let body: Arc<dyn ThreadBody> = builder;
    run_threads(vec![body; threads], plan, clock, observe)
}

/// Runs the job as [`run`] does, each worker thread `t` with its own body `bodies[t]` (its engine:
/// the jobs of a fio group, each on its own ioengine); one start gate and one coordinator for all.
///
/// # Panics
/// When `bodies` has fewer entries than the plan has worker threads.
pub fn run_threads(
    bodies: Vec<Arc<dyn ThreadBody>>,
    mut plan: RunPlan,
    clock: Clock,
    observe: impl FnMut(&IntervalPoint),
) -> Result<RunResult, CoordinatorError> {
    // Measured before any worker exists, on a core of the same CPU.
    let stamp_ns = cost::stamp_cost_ns(&clock);
    let mut crew = spawn(&bodies, &plan, &clock)?;
    let (info, tids, facts) = match await_ready(&mut crew, &plan) {
        Ok(r) => r,
        Err(e) => {
            crew.call_off();
            return Err(e);
        }
    };
    let cores: Vec<usize> = plan.workers.iter().filter_map(|w| w.core).collect();
    let placement = (cores.len() == plan.workers.len()).then(|| cpu::keep_others_off(&tids, &cores));
    let start_at = match plan.gate.take() {
        None => plan.start_at,
        Some(mut gate) => match gate.moment(&plan.signal) {
            Ok(at) => Some(at),
            Err(refusal) => {
                crew.call_off();
                return Err(match refusal {
                    GateRefusal::Interrupted(sig) => CoordinatorError::Interrupted(sig),
                    GateRefusal::Refused(why) => CoordinatorError::Gate(why),
                });
            }
        },
    };
    if let Some(at) = start_at {
        if let Err(sig) = wait_until(at, &plan.signal) {
            crew.call_off();
            return Err(CoordinatorError::Interrupted(sig));
        }
    }
    let irqs_before = if plan.irqs.is_empty() { None } else { Interrupts::read() };
    let cpu_start = CpuTimes::now();
    let epoch = clock.raw();
    crew.shared.open_gate(epoch);
    let started_at = SystemTime::now();
    let mut collector = Collector::new(&plan, observe);
    collector.log_clock = Some((clock.clone(), epoch));
    collector.watch = plan.watch.take();
    collector.collect(&mut crew, &plan);
    let cpu_used = CpuTimes::now().since(cpu_start);
    // Beyond the workers' own cores: where the io_uring kernel threads may run (listed before the
    // gate and now: io-wq workers come and go), and where the device's interrupts landed.
    let mut extra = cost::io_thread_cores(&cost::process_threads());
    if let Some(p) = &placement {
        let listed: Vec<(String, String)> = p.threads.iter().map(|t| (t.name.clone(), t.cpus.clone())).collect();
        extra.extend(cost::io_thread_cores(&listed));
    }
    if let (Some(before), Some(after)) = (irqs_before, Interrupts::read().filter(|_| !plan.irqs.is_empty())) {
        extra.extend(cost::irq_cores(&after.device_counts_since(&before, &plan.irqs)));
    }
    let stamped = plan.workers.iter().all(|w| w.latency.stamps());
    let mut result = collector.finish(&plan, (info, facts), started_at, cpu_used, placement, &extra);
    result.cost = result.cost.map(|c| c.with_timing(stamp_ns, stamped));
    Ok(result)
}

/// Spawns one thread per worker; a worker with several lanes (targets) drives them all.
fn spawn(bodies: &[Arc<dyn ThreadBody>], plan: &RunPlan, clock: &Clock) -> Result<Crew, CoordinatorError> {
    let n = plan.workers.len();
    let shared = Arc::new(Shared::default());
    let (report_tx, reports) = bounded(n * 4 + 4);
    let threads = plan.workers.iter().map(|w| w.thread + 1).max().unwrap_or(0);
    let mut lanes_of: Vec<Vec<usize>> = vec![Vec::new(); threads];
    for (i, w) in plan.workers.iter().enumerate() {
        lanes_of[w.thread].push(i);
    }
    let mut crew = Crew {
        handles: Vec::with_capacity(threads),
        lanes_of,
        reports,
        spares: Vec::with_capacity(n),
        log_pools: Vec::with_capacity(n),
        shared,
    };
    let mut links: Vec<Option<Links>> = Vec::with_capacity(n);
    for w in &plan.workers {
        let (spare_tx, spare_rx) = bounded(2);
        crew.spares.push(spare_tx);
        let (pool_tx, log_pool) = bounded(iolog::POOL_BUFFERS);
        if w.io_log {
            // The pool starts full, so the worker's hand-overs find a buffer waiting.
            for _ in 0..iolog::POOL_BUFFERS {
                let _ = pool_tx.try_send(Vec::with_capacity(iolog::RECORDS_PER_BUFFER));
            }
        }
        crew.log_pools.push(pool_tx);
        let coordinator = std::thread::current();
        links.push(Some(Links { reports: report_tx.clone(), spares: spare_rx, log_pool, coordinator }));
    }
    for (worker, lanes) in crew.lanes_of.clone().into_iter().enumerate() {
        let plans: Vec<WorkerPlan> = lanes.iter().map(|&l| plan.workers[l].clone()).collect();
        let links: Vec<Links> = lanes.iter().map(|&l| links[l].take().expect("each lane has one thread")).collect();
        let b = bodies.get(worker).expect("a body for every worker thread").clone();
        let (s, c) = (crew.shared.clone(), clock.clone());
        let coordinator = std::thread::current();
        let spawned = std::thread::Builder::new().name(format!("nvmebench-w{worker}")).spawn(move || {
            b.run_thread(&plans, &s, &links, &c);
            // Its last report is sent: the coordinator need not finish its nap to take it.
            coordinator.unpark();
        });
        match spawned {
            Ok(h) => crew.handles.push(Some(h)),
            Err(source) => {
                crew.call_off();
                return Err(CoordinatorError::Spawn { worker, source });
            }
        }
    }
    Ok(crew)
}

/// The start gate's condition: every worker pinned and its engine built, or none starts. Returns
/// the engine's description, the workers' thread ids and each lane's engine facts.
fn await_ready(crew: &mut Crew, plan: &RunPlan) -> Result<(EngineInfo, Vec<i32>, LaneFacts), CoordinatorError> {
    let n = plan.workers.len();
    let mut info = None;
    let mut tids = Vec::with_capacity(n);
    let mut facts = vec![Vec::new(); n];
    while tids.len() < n {
        match crew.reports.recv_timeout(TICK) {
            Ok(Report::Ready { worker, info: i, facts: f, tid }) => {
                // The first worker's engine, whichever is ready first: the run's engine where its
                // workers have more than one (a fio group's jobs on their own ioengines).
                if info.as_ref().is_none_or(|(w, _)| worker < *w) {
                    info = Some((worker, i));
                }
                tids.push(tid);
                if let Some(slot) = facts.get_mut(worker) {
                    *slot = f;
                }
            }
            Ok(Report::Failed { error, .. }) => return Err(CoordinatorError::Setup(error)),
            Ok(_) => unreachable!("workers report intervals only after the gate opens"),
            Err(RecvTimeoutError::Timeout) => {
                if let Some((_, error)) = panicked(&mut crew.handles, &crew.lanes_of, &vec![false; n]) {
                    return Err(CoordinatorError::Setup(error));
                }
                if let sig @ 1.. = plan.signal.load(Ordering::Relaxed) {
                    return Err(CoordinatorError::Interrupted(sig as i32));
                }
            }
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    Ok((info.map(|(_, i)| i).unwrap_or_default(), tids, facts))
}

/// Per lane, its engine's own facts (`Engine::lane_facts`).
type LaneFacts = Vec<Vec<(String, String)>>;

/// One interval of one group of lanes (all of them, or one target's), merged over the lanes that
/// reported it so far.
#[derive(Default)]
struct Part {
    stats: Box<Stats>,
    workers: usize,
    /// Per direction, the sum of each worker's I/Os and bytes divided by its own span.
    iops: [f64; Direction::COUNT],
    bw: [f64; Direction::COUNT],
    span_ns: u64,
    end_ns: u64,
    /// A worker's last report that ended before the interval was due to end is in it.
    partial: bool,
    /// A worker's last report is in it: the interval ends when the run did, not on a boundary.
    last: bool,
}

impl Part {
    /// An emptied part of `parts`, or a new one. Each part holds a whole set of histograms; making
    /// one per interval meant fresh pages (faulted in, zeroed) and, once freed, unmapped ones,
    /// whose TLB shootdown interrupts the workers' cores.
    fn reused(parts: &mut Vec<Part>) -> Part {
        parts.pop().unwrap_or_default()
    }

    /// Empties the part for [`Part::reused`].
    fn clear(&mut self) {
        self.stats.reset();
        self.workers = 0;
        self.iops = [0.0; Direction::COUNT];
        self.bw = [0.0; Direction::COUNT];
        self.span_ns = 0;
        self.end_ns = 0;
        self.partial = false;
        self.last = false;
    }

    /// Adds one worker's report; `ended_inside`: the worker's run ended before this interval was
    /// due to end.
    fn add(&mut self, stats: &Stats, from_ns: u64, to_ns: u64, last: bool, ended_inside: bool) {
        let span = to_ns.saturating_sub(from_ns);
        *self.stats += stats;
        self.workers += 1;
        if span > 0 {
            for (d, s) in stats.dir.iter().enumerate() {
                self.iops[d] += s.ios as f64 * 1e9 / span as f64;
                self.bw[d] += s.bytes as f64 * 1e9 / span as f64;
            }
        }
        self.span_ns = self.span_ns.max(span);
        self.end_ns = self.end_ns.max(to_ns);
        self.partial |= ended_inside;
        self.last |= last;
    }

    /// The point at `t_s` (the run's time for this interval, which a target's part shares).
    fn point(&self, t_s: f64, ramp: bool) -> IntervalPoint {
        let dir = |d: usize| DirPoint {
            ios: self.stats.dir[d].ios,
            bytes: self.stats.dir[d].bytes,
            iops: self.iops[d],
            bw_bytes: self.bw[d],
            mean_ns: self.stats.dir[d].mean_ns(),
            p99_ns: self.stats.dir[d].percentile_ns(99.0),
            max_ns: self.stats.dir[d].max_ns,
        };
        IntervalPoint {
            t_s,
            span_s: self.span_ns as f64 / 1e9,
            partial: self.partial,
            workers: self.workers,
            ramp,
            read: dir(Direction::Read as usize),
            write: dir(Direction::Write as usize),
            trim: dir(Direction::Trim as usize),
            write_zeroes: dir(Direction::WriteZeroes as usize),
            flush: dir(Direction::Flush as usize),
            errors: self.stats.errors.total(),
        }
    }
}

/// One interval of one worker thread, summed over its lanes' reports so far.
#[derive(Clone, Copy, Default)]
struct ThreadPart {
    dir: [ThreadDir; Direction::COUNT],
    reported: bool,
    /// A lane's last report is in it, ending at `end_ns` at the latest.
    last: bool,
    end_ns: u64,
    /// The span its lanes' reports cover: the earliest start, the latest end.
    from_ns: u64,
    to_ns: u64,
}

impl ThreadPart {
    fn add(&mut self, stats: &Stats, from_ns: u64, to_ns: u64, last: bool) {
        self.from_ns = if self.reported { self.from_ns.min(from_ns) } else { from_ns };
        self.to_ns = self.to_ns.max(to_ns);
        // Rates are the reader's to take over the thread's span (`ThreadPoint::span_ns`), as fio
        // takes them over the time between two of a thread's samples.
        for (i, (d, s)) in self.dir.iter_mut().zip(&stats.dir).enumerate() {
            d.ios += s.ios;
            d.bytes += s.bytes;
            d.sum_ns += s.sum_ns;
            if let Some(split) = &stats.split {
                d.slat_ios += split.slat[i].ios;
                d.slat_sum_ns += split.slat[i].sum_ns;
                d.clat_ios += split.clat[i].ios;
                d.clat_sum_ns += split.clat[i].sum_ns;
            }
        }
        self.reported = true;
        self.last |= last;
        if last {
            self.end_ns = self.end_ns.max(to_ns);
        }
    }
}

/// One interval: the run's part and, with several targets, each target's.
struct Pending {
    all: Part,
    /// Per target (empty with one target); a target none of whose lanes reported stays empty.
    targets: Vec<Part>,
    /// Per worker thread, of measured intervals (empty for the ramp's).
    threads: Vec<ThreadPart>,
}

/// The coordinator's side of a running job: what workers reported, merged as it comes.
struct Collector<F> {
    observe: F,
    interval_ns: u64,
    /// Per worker, its own ramp (fio jobs run together may each have one).
    ramps_ns: Vec<u64>,
    totals: Vec<Stats>,
    summaries: Vec<Option<WorkerSummary>>,
    finished: Vec<bool>,
    /// Per worker, the highest interval index reported in each phase.
    reached: Vec<[Option<u64>; 2]>,
    pending: BTreeMap<(u8, u64), Pending>,
    /// Parts of finished intervals, emptied, for the next ones.
    parts: Vec<Part>,
    intervals: Vec<IntervalPoint>,
    /// Per lane, its target; and with several targets, each target's series (else empty).
    target_of: Vec<usize>,
    target_intervals: Vec<Vec<IntervalPoint>>,
    /// Per lane, its worker thread; and per thread, its series.
    thread_of: Vec<usize>,
    thread_intervals: Vec<Vec<ThreadPoint>>,
    ramp_ios: u64,
    failure: Option<WorkerError>,
    interrupted_by: Option<i32>,
    /// Each lane's verifier, with the lane's target.
    verifiers: Vec<(usize, Verifier)>,
    planned_end: Option<Duration>,
    /// Workers that did not stop in time were given up on: their threads are not joined.
    gave_up: bool,
    /// The run's interval watch, and whether it asked to end the run since the last look.
    watch: Option<Box<dyn RunWatch>>,
    watch_ended: bool,
    /// Per lane, its per-I/O log so far; and the clock and time zero its stamps are read against.
    io_logs: Vec<Vec<LoggedIo>>,
    log_clock: Option<(Clock, u64)>,
}

impl<F: FnMut(&IntervalPoint)> Collector<F> {
    fn new(plan: &RunPlan, observe: F) -> Self {
        let n = plan.workers.len();
        Collector {
            observe,
            interval_ns: plan.interval.as_nanos().max(1) as u64,
            ramps_ns: plan.workers.iter().map(|w| w.ramp.as_nanos() as u64).collect(),
            totals: (0..n).map(|_| Stats::default()).collect(),
            summaries: vec![None; n],
            finished: vec![false; n],
            reached: vec![[None; 2]; n],
            pending: BTreeMap::new(),
            parts: Vec::new(),
            intervals: Vec::new(),
            target_of: plan.workers.iter().map(|w| w.target).collect(),
            target_intervals: match plan.workers.iter().map(|w| w.target + 1).max().unwrap_or(0) {
                n if n > 1 => vec![Vec::new(); n],
                _ => Vec::new(),
            },
            thread_of: plan.workers.iter().map(|w| w.thread).collect(),
            thread_intervals: vec![Vec::new(); plan.workers.iter().map(|w| w.thread + 1).max().unwrap_or(0)],
            ramp_ios: 0,
            failure: None,
            interrupted_by: None,
            verifiers: Vec::new(),
            planned_end: plan
                .workers
                .iter()
                .map(|w| w.ramp + w.runtime.unwrap_or(Duration::MAX / 4) + w.drain_timeout)
                .max(),
            gave_up: false,
            watch: None,
            watch_ended: false,
            io_logs: vec![Vec::new(); n],
            log_clock: None,
        }
    }

    fn running(&self) -> usize {
        self.finished.iter().filter(|f| !**f).count()
    }

    /// Receives reports until every worker has finished (or is given up on).
    ///
    /// It sleeps between looks and then takes what has arrived, rather than blocking in `recv`:
    /// a blocked receiver spins and yields before it parks, every time, and the core it does that
    /// on is the one left free of workers, which on a small machine is where the controller's own
    /// poller runs (SPDK's vfio-user or TCP target). Sleeping wakes once per look and lets the
    /// workers send without waking anyone. Measured over vfio-user (null target on the free core,
    /// QD1, 10 alternating 3 s rounds with perf): 1.004x the IOPS of blocking in `recv` (median of
    /// the paired rounds; 0.995x perf's against 0.992x); over NVMe/TCP QD32 level.
    fn collect(&mut self, crew: &mut Crew, plan: &RunPlan) {
        let started = Instant::now();
        // Often enough that a worker finds its emptied set waiting at its next interval.
        let nap = NAP_MAX.min(Duration::from_nanos(self.interval_ns / 4)).max(Duration::from_micros(50));
        'collect: while self.running() > 0 {
            // Unparked early by a worker thread that ends (see `spawn`).
            std::thread::park_timeout(nap);
            loop {
                match crew.reports.try_recv() {
                    Ok(report) => self.on_report(crew, report),
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => break 'collect,
                }
            }
            self.watch(crew, plan, started);
            self.finalize(false);
            if std::mem::take(&mut self.watch_ended) {
                crew.shared.request_stop();
            }
        }
        self.finalize(true);
        if !self.gave_up {
            for h in crew.handles.iter_mut().filter_map(Option::take) {
                let _ = h.join();
            }
        }
    }

    /// Takes one worker's report: an interval (its emptied set goes back), its end, or its failure.
    fn on_report(&mut self, crew: &Crew, report: Report) {
        match report {
            Report::Interval(r) => {
                let worker = r.worker;
                let stats = self.on_interval(r);
                let _ = crew.spares[worker].try_send(stats);
            }
            Report::IoLog { worker, mut records } => {
                if let Some((clock, epoch)) = &self.log_clock {
                    self.io_logs[worker].extend(records.iter().map(|r| LoggedIo::of(r, clock, *epoch)));
                }
                records.clear();
                let _ = crew.log_pools[worker].try_send(records);
            }
            Report::Restart { worker, unsent_ios } => {
                // Still I/Os of the run, for its CPU per I/O, as the ramp's are.
                let t = &mut self.totals[worker];
                self.ramp_ios += unsent_ios + t.ios() + t.errors.total();
                t.reset();
            }
            Report::Done { worker, summary, verify } => {
                self.verifiers.extend(verify.map(|v| (self.target_of[worker], *v)));
                self.summaries[worker] = Some(summary);
                self.finished[worker] = true;
                if let Some(w) = self.watch.as_mut() {
                    self.watch_ended |= w.lane_finished(worker);
                }
            }
            Report::Failed { worker, error, partial } => {
                if let Some((stats, summary)) = partial {
                    self.totals[worker] += &stats;
                    self.summaries[worker] = Some(summary);
                }
                crew.shared.request_stop();
                self.failure.get_or_insert(error);
                self.finished[worker] = true;
            }
            Report::Ready { .. } => {}
        }
    }

    /// Merges one worker's interval; returns its statistics, emptied, for the worker to reuse.
    fn on_interval(&mut self, r: IntervalReport) -> Box<Stats> {
        let IntervalReport { worker, phase, index, from_ns, to_ns, last, mut stats } = r;
        let p = phase as usize;
        if phase == Phase::Measure {
            self.totals[worker] += &stats;
        } else {
            self.ramp_ios += stats.ios() + stats.errors.total();
        }
        // Partial is where the run ended, not how long the span was: a cut that came late (a long
        // pass, a slow completion) starts the next interval late, so a last interval that runs to
        // the planned end is whole although its span is shorter than the interval.
        let ended_inside = last && to_ns < self.due_end_ns(worker, phase);
        self.reached[worker][p] = Some(self.reached[worker][p].map_or(index, |r| r.max(index)));
        let n = self.target_intervals.len();
        let parts = &mut self.parts;
        let e = self.pending.entry((p as u8, index)).or_insert_with(|| Pending {
            all: Part::reused(parts),
            targets: Vec::new(),
            threads: Vec::new(),
        });
        e.all.add(&stats, from_ns, to_ns, last, ended_inside);
        if n > 1 && phase == Phase::Measure {
            e.targets.resize_with(n, || Part::reused(parts));
            e.targets[self.target_of[worker]].add(&stats, from_ns, to_ns, last, ended_inside);
        }
        if phase == Phase::Measure {
            e.threads.resize(self.thread_intervals.len(), ThreadPart::default());
            e.threads[self.thread_of[worker]].add(&stats, from_ns, to_ns, last);
        }
        stats.reset();
        stats
    }

    /// Where `worker`'s current interval of `phase` is due to end on the common timeline: the
    /// boundary after the one its previous report was cut at (however late that cut came).
    fn due_end_ns(&self, worker: usize, phase: Phase) -> u64 {
        let (interval, ramp) = (self.interval_ns, self.ramps_ns[worker]);
        let reached = self.reached[worker][phase as usize];
        match phase {
            // Ramp reports are indexed by the boundaries crossed; the ramp ends on its own.
            Phase::Ramp => reached.map_or(interval, |r| r.saturating_add(1).saturating_mul(interval)).min(ramp),
            // Measured interval k ends at ramp + (k + 1) * interval.
            Phase::Measure => {
                let k = reached.map_or(0, |r| r.saturating_add(1));
                ramp.saturating_add(k.saturating_add(1).saturating_mul(interval))
            }
        }
    }

    /// Whether every running worker has moved past interval `index` of `phase`.
    fn complete(&self, phase: u8, index: u64) -> bool {
        (0..self.finished.len()).all(|w| {
            self.finished[w]
                || self.reached[w][phase as usize].is_some_and(|r| r >= index)
                || (phase == Phase::Ramp as u8 && self.reached[w][Phase::Measure as usize].is_some())
        })
    }

    /// Turns every interval that all running workers have passed into a point (with `all`, every
    /// interval left).
    fn finalize(&mut self, all: bool) {
        let ready: Vec<(u8, u64)> = self.pending.keys().copied().filter(|&(p, i)| all || self.complete(p, i)).collect();
        // The measured timeline starts once the longest ramp is over.
        let ramp_ns = self.ramps_ns.iter().copied().max().unwrap_or(0);
        for key in ready {
            let e = self.pending.remove(&key).expect("key was just listed");
            let ramp = key.0 == Phase::Ramp as u8;
            let end_s = if e.all.last {
                e.all.end_ns.saturating_sub(ramp_ns) as f64 / 1e9
            } else {
                (key.1 + 1) as f64 * self.interval_ns as f64 / 1e9
            };
            // Rounded to the microsecond so that 0.3 prints as 0.3.
            let round_us = |s: f64| (s * 1e6).round() / 1e6;
            let t_s = if ramp { -1.0 } else { round_us(end_s) };
            let point = e.all.point(t_s, ramp);
            (self.observe)(&point);
            if !ramp {
                if let Some(w) = self.watch.as_mut() {
                    self.watch_ended |= w.ends_run(&point);
                }
                self.intervals.push(point);
                for (t, series) in self.target_intervals.iter_mut().enumerate() {
                    series.push(
                        e.targets.get(t).map_or_else(|| Part::default().point(t_s, false), |p| p.point(t_s, false)),
                    );
                }
                let boundary_s = (key.1 + 1) as f64 * self.interval_ns as f64 / 1e9;
                for (part, series) in e.threads.iter().zip(&mut self.thread_intervals).filter(|(p, _)| p.reported) {
                    // A thread's last interval ends when the thread did, as the run's ends when the
                    // run did.
                    let end_s = if part.last { part.end_ns.saturating_sub(ramp_ns) as f64 / 1e9 } else { boundary_s };
                    let span_ns = part.to_ns.saturating_sub(part.from_ns);
                    series.push(ThreadPoint { t_s: round_us(end_s), span_ns, dir: part.dir });
                }
            }
            for mut part in std::iter::once(e.all).chain(e.targets) {
                part.clear();
                self.parts.push(part);
            }
        }
    }

    /// Looks at signals, dead workers and workers that do not stop.
    fn watch(&mut self, crew: &mut Crew, plan: &RunPlan, started: Instant) {
        let sig = plan.signal.load(Ordering::Relaxed);
        if sig != 0 && self.interrupted_by.is_none() {
            self.interrupted_by = Some(sig as i32);
            crew.shared.request_stop();
        }
        if let Some((thread, error)) = panicked(&mut crew.handles, &crew.lanes_of, &self.finished) {
            crew.shared.request_stop();
            self.failure.get_or_insert(error);
            for &lane in &crew.lanes_of[thread] {
                self.finished[lane] = true;
            }
        }
        if self.planned_end.is_some_and(|e| started.elapsed() > e + STUCK_GRACE) {
            crew.shared.request_stop();
            let stuck = (0..self.finished.len()).find(|&w| !self.finished[w]).unwrap_or(0);
            self.failure.get_or_insert(WorkerError::Panicked {
                worker: stuck,
                message: format!("did not stop within {STUCK_GRACE:?} of the planned end; the device may be hung"),
            });
            // Stuck threads are abandoned, not joined: the process ends with the report.
            self.finished.iter_mut().for_each(|f| *f = true);
            self.gave_up = true;
        }
    }

    fn finish(
        self,
        plan: &RunPlan,
        (engine, facts): (EngineInfo, LaneFacts),
        started_at: SystemTime,
        cpu_used: CpuTimes,
        placement: Option<Placement>,
        extra_cores: &[CoreReason],
    ) -> RunResult {
        let mut total = Stats::default();
        for t in &self.totals {
            total += t;
        }
        let elapsed_ns = self.summaries.iter().flatten().map(|s| s.measured_ns).max().unwrap_or(0);
        let cpu = CpuUsage::new(cpu_used, self.ramp_ios + total.ios() + total.errors.total());
        let workers: Vec<WorkerResult> = self
            .totals
            .into_iter()
            .zip(self.summaries)
            .zip(facts.into_iter().chain(std::iter::repeat_with(Vec::new)))
            .enumerate()
            .map(|(i, ((stats, summary), engine_facts))| {
                let w = &plan.workers[i];
                WorkerResult {
                    index: i,
                    thread: w.thread,
                    target: w.target,
                    core: w.core,
                    stats,
                    summary,
                    engine_facts,
                }
            })
            .collect();
        let cost = run_cost(&workers, extra_cores);
        let io_logs = thread_logs(self.io_logs, &self.thread_of, self.thread_intervals.len());
        let mut targets = per_target(&workers);
        for (t, series) in targets.iter_mut().zip(self.target_intervals) {
            t.intervals = series;
        }
        RunResult {
            engine,
            targets,
            workers,
            total,
            elapsed_ns,
            intervals: self.intervals,
            threads: self.thread_intervals,
            io_logs,
            interrupted_by: self.interrupted_by,
            failure: self.failure,
            started_at,
            verify: merge_verifiers(self.verifiers, plan.workers.iter().map(|w| w.target + 1).max().unwrap_or(0)),
            cpu,
            cost,
            placement,
            events: Vec::new(),
            telemetry: None,
        }
    }
}

/// One I/O of fio's per-I/O logs in nanoseconds (a worker's `iolog::IoRecord` scaled), as the
/// coordinator keeps it for the report: its stamps, each
/// scaled on its own since the run's time zero, so that I/Os stamped together (a batch's send)
/// keep equal times; its latencies are their differences (within a nanosecond of what the worker
/// booked for it, which scaled the differences of the raw stamps), and lat is slat and clat added up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoggedIo {
    pub start_ns: u64,
    /// `start_ns` without `FLAG_SLAT`.
    pub sent_ns: u64,
    pub end_ns: u64,
    pub offset: u64,
    pub len: u32,
    pub prio: u16,
    pub dir: Direction,
    pub flags: u8,
}

impl LoggedIo {
    /// fio's lat: from the issue stamp to the completion.
    pub fn lat_ns(&self) -> u64 {
        self.end_ns - self.start_ns
    }

    /// fio's clat: from the send to the completion (the whole latency where submission is not
    /// measured apart).
    pub fn clat_ns(&self) -> u64 {
        self.end_ns - self.sent_ns
    }

    /// fio's slat: from the issue stamp to the send (0 where it is not measured).
    pub fn slat_ns(&self) -> u64 {
        self.sent_ns - self.start_ns
    }

    pub fn has_slat(&self) -> bool {
        self.flags & iolog::FLAG_SLAT != 0
    }

    /// A worker's record in nanoseconds, `epoch` being the raw reading of time zero.
    pub fn of(r: &IoRecord, clock: &Clock, epoch: u64) -> LoggedIo {
        let end = r.end.max(r.start);
        let sent = if r.flags & iolog::FLAG_SLAT != 0 { r.sent.clamp(r.start, end) } else { r.start };
        LoggedIo {
            start_ns: clock.delta_as_nanos(epoch, r.start),
            sent_ns: clock.delta_as_nanos(epoch, sent),
            end_ns: clock.delta_as_nanos(epoch, end),
            offset: r.offset,
            len: r.len,
            prio: r.prio,
            dir: r.dir,
            flags: r.flags,
        }
    }
}

/// Each worker thread's per-I/O log from its lanes' (`thread_of`: each lane's thread): a thread
/// handles its lanes' completions one after another, so their records merge in completion order.
fn thread_logs(lanes: Vec<Vec<LoggedIo>>, thread_of: &[usize], threads: usize) -> Vec<Vec<LoggedIo>> {
    let mut out: Vec<Vec<LoggedIo>> = vec![Vec::new(); threads];
    let mut merged = vec![false; threads];
    for (lane, log) in lanes.into_iter().enumerate() {
        let t = thread_of[lane];
        if out[t].is_empty() {
            out[t] = log;
        } else if !log.is_empty() {
            out[t].extend(log);
            merged[t] = true;
        }
    }
    for (log, _) in out.iter_mut().zip(merged).filter(|(_, m)| *m) {
        // Stable: records of one lane with the same stamp keep their order.
        log.sort_by_key(|r| r.end_ns);
    }
    out
}

/// The run's cost from the workers' CPU windows: one per worker thread (its first lane carries
/// it), with the I/Os of all its lanes.
fn run_cost(workers: &[WorkerResult], extra: &[CoreReason]) -> Option<RunCost> {
    let windows: Vec<WorkerWindow<'_>> = workers
        .iter()
        .filter_map(|w| {
            let window = w.summary.as_ref()?.cpu.as_ref()?;
            let ios =
                workers.iter().filter(|o| o.thread == w.thread).map(|o| o.stats.ios() + o.stats.errors.total()).sum();
            Some(WorkerWindow { worker: w.thread, core: w.core, window, ios })
        })
        .collect();
    cost::run_cost(&windows, extra, cpu::tick_ns())
}

/// Sums the lanes of each target.
pub fn per_target(lanes: &[WorkerResult]) -> Vec<TargetResult> {
    let n = lanes.iter().map(|l| l.target + 1).max().unwrap_or(0);
    let mut targets: Vec<TargetResult> = (0..n)
        .map(|index| TargetResult {
            index,
            stats: Stats::default(),
            lanes: Vec::new(),
            elapsed_ns: 0,
            intervals: Vec::new(),
        })
        .collect();
    for l in lanes {
        let t = &mut targets[l.target];
        t.stats += &l.stats;
        t.lanes.push(l.index);
        t.elapsed_ns = t.elapsed_ns.max(l.summary.as_ref().map_or(0, |s| s.measured_ns));
    }
    targets
}

/// Merges the lanes' verifiers (each with its target) of a run on `targets` targets: one table per
/// target, and with several targets every mismatch names its target.
fn merge_verifiers(vs: Vec<(usize, Verifier)>, targets: usize) -> Option<VerifyResult> {
    let unit_bytes = vs.first()?.1.table.unit_bytes();
    let tables =
        (0..targets).map(|t| GenTable::merge(vs.iter().filter(|(at, _)| *at == t).map(|(_, v)| &v.table))).collect();
    let several = targets > 1;
    let mut mismatches: Vec<Mismatch> = vs
        .iter()
        .flat_map(|(t, v)| v.mismatches.iter().map(move |m| Mismatch { target: several.then_some(*t), ..*m }))
        .collect();
    // A unit found bad during the run is found again by the verify pass: list it once.
    mismatches.sort_by_key(|m| (m.target, m.offset));
    mismatches.dedup();
    Some(VerifyResult {
        units_checked: vs.iter().map(|(_, v)| v.units_checked).sum(),
        mismatch_count: vs.iter().map(|(_, v)| v.mismatch_count).sum(),
        mismatches,
        read_errors: vs.iter().map(|(_, v)| v.read_errors).sum(),
        cost_ns: vs.iter().map(|(_, v)| v.cost_ns).sum(),
        unit_bytes,
        tables,
    })
}

/// Sleeps until the wall clock reaches `at`, looking at signals every tick; `Err` with the signal
/// if one came.
/// The last stretch is slept in one go so that the gate opens within the scheduler's wake-up
/// latency of `at`.
fn wait_until(at: SystemTime, signal: &AtomicUsize) -> Result<(), i32> {
    loop {
        if let sig @ 1.. = signal.load(Ordering::Relaxed) {
            return Err(sig as i32);
        }
        match at.duration_since(SystemTime::now()) {
            Ok(left) if !left.is_zero() => std::thread::sleep(left.min(TICK)),
            _ => return Ok(()),
        }
    }
}

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// A worker thread that ended without the final reports of all its lanes: it panicked.
fn panicked(
    handles: &mut [Option<JoinHandle<()>>],
    lanes_of: &[Vec<usize>],
    finished: &[bool],
) -> Option<(usize, WorkerError)> {
    for (worker, slot) in handles.iter_mut().enumerate() {
        if lanes_of[worker].iter().all(|&l| finished[l]) || !slot.as_ref().is_some_and(|h| h.is_finished()) {
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
    use crate::io::IoError;
    use crate::options::OnError;
    use crate::worker::StopReason;
    use crate::workload::bssplit::BsSplit;
    use crate::workload::dist::RandomDist;
    use crate::workload::{RwMode, WorkloadSpec};
    use std::sync::Mutex;

    /// A part emptied for reuse reports what a new one would: nothing of the interval before
    /// leaks into the next.
    #[test]
    fn a_reused_part_starts_from_nothing() {
        let mut busy = Stats::default();
        busy.dir[Direction::Write as usize].record(9_000_000, 7, 7 * 4096);
        busy.dir[Direction::Read as usize].record(50_000, 3, 3 * 4096);
        let mut quiet = Stats::default();
        quiet.dir[Direction::Read as usize].record(1_000, 2, 2 * 4096);
        let mut parts = Vec::new();
        let mut old = Part::reused(&mut parts);
        old.add(&busy, 0, 3_000, true, true);
        old.clear();
        parts.push(old);
        let mut reused = Part::reused(&mut parts);
        assert!(parts.is_empty());
        let mut fresh = Part::default();
        for p in [&mut reused, &mut fresh] {
            p.add(&quiet, 1_000_000, 2_000_000, false, false);
        }
        let json = |p: &Part| serde_json::to_value(p.point(2.0, false)).unwrap();
        assert_eq!(json(&reused), json(&fresh));
        assert_eq!(reused.stats.dir[Direction::Write as usize].hist.len(), 0);
    }

    fn spec(rw: RwMode, read_percent: u32) -> Arc<WorkloadSpec> {
        Arc::new(WorkloadSpec {
            rw,
            mix: rw.fixed_mix().unwrap_or(crate::workload::Mix::read_write(read_percent)),
            bs_read: BsSplit::single(4096),
            bs_write: BsSplit::single(4096),
            bs_trim: BsSplit::single(4096),
            align_bytes: 4096,
            range_start: 0,
            range_bytes: 1 << 30,
            random_dist: RandomDist::Uniform,
            random_map: false,
            seq_add_bytes: 0,
            zones: None,
            clone_step_bytes: 0,
            seed: 1,
            pacing: Default::default(),
            buffers: Default::default(),
            prio: Default::default(),
            buffer_pattern: None,
        })
    }

    fn plan(workers: usize, qd: u32, spec: Arc<WorkloadSpec>) -> RunPlan {
        RunPlan {
            workers: (0..workers)
                .map(|index| WorkerPlan {
                    index,
                    thread: index,
                    target: 0,
                    slice: index,
                    slices: workers,
                    core: None,
                    queue_depth: qd,
                    worker_qd: None,
                    spec: spec.clone(),
                    ramp: Duration::ZERO,
                    runtime: None,
                    io_limit: None,
                    byte_limit: None,
                    rate_iops: None,
                    rate_share: 1.0,
                    interval: Duration::from_millis(100),
                    latency: Default::default(),
                    on_error: OnError::Stop,
                    drain_timeout: Duration::from_secs(5),
                    verify: None,
                    flow: None,
                    latency_target: None,
                    io_log: false,
                })
                .collect(),
            interval: Duration::from_millis(100),
            signal: Arc::new(AtomicUsize::new(0)),
            start_at: None,
            irqs: DeviceIrqs::default(),
            gate: None,
            watch: None,
        }
    }

    fn fake(script: Script) -> (Arc<FakeBuilder>, Clock, SeenOps) {
        let (clock, mock) = Clock::mock();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let slept = Arc::new(std::sync::atomic::AtomicU64::new(0));
        (Arc::new(FakeBuilder { script, mock, seen: seen.clone(), slept }), clock, seen)
    }

    #[test]
    fn scripted_latencies_land_exactly_in_the_histogram() {
        let steps = (0..1000).map(|i| Step { latency_ns: 1000 + (i % 10) * 100, result: Ok(()) }).collect();
        let (b, clock, _) = fake(Script { steps, default_latency_ns: 5000, busy_calls: vec![], ..Script::default() });
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
        let (b, clock, seen) =
            fake(Script { steps: vec![], default_latency_ns: 10, busy_calls: vec![0, 3, 4], ..Script::default() });
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

    /// A run of one worker with fio's latency target (1 ms, windows of 10 ms) on I/Os that each
    /// take `latency_ns`.
    fn latency_target_run(latency_ns: u64, percentile: f64, qd: u32, io_limit: Option<u64>) -> RunResult {
        latency_target_run_cut(latency_ns, percentile, qd, io_limit, Duration::from_millis(100))
    }

    /// [`latency_target_run`] with intervals of `interval`.
    fn latency_target_run_cut(
        latency_ns: u64,
        percentile: f64,
        qd: u32,
        io_limit: Option<u64>,
        interval: Duration,
    ) -> RunResult {
        let (b, clock, _) = fake(Script { default_latency_ns: latency_ns, ..Script::default() });
        let mut p = plan(1, qd, spec(RwMode::RandRead, 100));
        p.interval = interval;
        p.workers[0].interval = interval;
        p.workers[0].io_limit = io_limit;
        p.workers[0].runtime = Some(Duration::from_secs(1));
        p.workers[0].latency_target =
            Some(crate::options::LatencyTarget { target_ns: 1_000_000, window_ns: 10_000_000, percentile, run: false });
        run(b, p, clock, |_| {}).unwrap()
    }

    /// Every I/O meets the target: the worker issues at depth 1, 2, 4 and 8 for a window each, then
    /// (8 again) drains and runs one more window at 8, and stops (fio's latency_run=0): 100 µs
    /// I/Os, so 100, 200, 400, 800 and 800 of them, where a worker that ignored the depth would
    /// have done 80 per ms throughout. As in fio, only the last window counts: 800 I/Os in 10 ms,
    /// the 1500 before it among the ramp's.
    #[test]
    fn the_latency_target_moves_the_depth_in_flight_and_ends_the_run_when_settled() {
        let r = latency_target_run(100_000, 99.0, 8, None);
        let s = r.workers[0].summary.as_ref().unwrap();
        assert_eq!((s.stop_reason, s.latency_depth), (StopReason::LatencyTarget, Some(8)));
        let ios = r.total.read().ios;
        assert!((795..=810).contains(&ios), "{ios}");
        assert!((10_000_000..10_200_000).contains(&r.elapsed_ns), "{}", r.elapsed_ns);
        assert!((1_490..=1_510).contains(&r.cpu.ios.saturating_sub(ios)), "{}", r.cpu.ios);
    }

    /// The same with intervals of 3 ms: those the coordinator took before the last window are
    /// dropped with the rest, and the I/Os of the search still count for the CPU per I/O.
    #[test]
    fn the_last_window_alone_counts_when_intervals_were_sent_before_it() {
        let r = latency_target_run_cut(100_000, 99.0, 8, None, Duration::from_millis(3));
        let ios = r.total.read().ios;
        assert!((795..=810).contains(&ios), "{ios}");
        assert!((2_290..=2_310).contains(&r.cpu.ios), "{}", r.cpu.ios);
        assert_eq!(r.workers[0].summary.as_ref().unwrap().latency_depth, Some(8));
    }

    /// With a ramp, no window is judged before it ends (fio calls lat_target_check outside the ramp
    /// only): 20 ms at depth 1, 200 I/Os, then the search as without it from the ramp's end.
    #[test]
    fn the_latency_search_waits_for_the_ramps_end() {
        let (b, clock, _) = fake(Script { default_latency_ns: 100_000, ..Script::default() });
        let mut p = plan(1, 8, spec(RwMode::RandRead, 100));
        p.workers[0].ramp = Duration::from_millis(20);
        p.workers[0].latency_target = Some(crate::options::LatencyTarget {
            target_ns: 1_000_000,
            window_ns: 10_000_000,
            percentile: 99.0,
            run: false,
        });
        let r = run(b, p, clock, |_| {}).unwrap();
        assert_eq!(r.workers[0].summary.as_ref().unwrap().latency_depth, Some(8));
        let ios = r.total.read().ios;
        assert!((795..=810).contains(&ios), "{ios}");
        assert!((2_490..=2_510).contains(&r.cpu.ios), "{}", r.cpu.ios);
    }

    /// No I/O meets the target: the worker stays at depth 1 (one I/O at a time: 50 I/Os of 2 ms
    /// take 100 ms), and fio's depth is 1.
    #[test]
    fn a_latency_target_no_io_meets_keeps_one_io_in_flight() {
        let r = latency_target_run(2_000_000, 99.0, 8, Some(50));
        let s = r.workers[0].summary.as_ref().unwrap();
        assert_eq!((s.stop_reason, s.latency_depth), (StopReason::IoLimit, Some(1)));
        assert_eq!((r.total.read().ios, r.elapsed_ns), (50, 100_000_000));
    }

    /// With a percentile of 100, the first I/O over the target at depth 1 fails with ETIMEDOUT and
    /// stops the run (fio's lat_fatal).
    #[test]
    fn a_latency_target_of_100_percent_fails_the_first_slow_io_at_depth_1() {
        let r = latency_target_run(2_000_000, 100.0, 8, None);
        let s = r.workers[0].summary.as_ref().unwrap();
        assert_eq!((s.stop_reason, s.latency_depth), (StopReason::Error, Some(1)));
        assert_eq!(s.first_error.unwrap().error, IoError::Errno { errno: libc::ETIMEDOUT });
        assert_eq!((r.total.read().ios, r.error_count()), (0, 1));
    }

    #[test]
    fn errors_stop_the_run_under_the_stop_policy() {
        let mut steps: Vec<Step> = (0..50).map(|_| Step { latency_ns: 100, result: Ok(()) }).collect();
        steps[20].result = Err(IoError::Errno { errno: libc::EIO });
        let (b, clock, _) = fake(Script { steps, default_latency_ns: 100, busy_calls: vec![], ..Script::default() });
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
        let (b, clock, _) = fake(Script { steps, default_latency_ns: 100, busy_calls: vec![], ..Script::default() });
        let mut p = plan(1, 2, spec(RwMode::RandRead, 100));
        p.workers[0].io_limit = Some(300);
        p.workers[0].on_error = OnError::Continue;
        let r = run(b, p, clock, |_| {}).unwrap();
        assert_eq!(r.total.read().ios, 200);
        assert_eq!(r.total.errors.kinds(), vec![(IoError::Nvme { sct: 0, sc: 0x81 }, 100)]);
    }

    /// fio's continue_on_error=read: read EIOs are counted and the job goes on; the first read
    /// error whose errno is not listed stops it, counted as fio's total_err counts it.
    #[test]
    fn a_filtered_policy_goes_on_only_after_the_errors_it_names() {
        let mut steps: Vec<Step> = (0..300).map(|_| Step { latency_ns: 100, result: Ok(()) }).collect();
        for i in [10, 20, 30] {
            steps[i].result = Err(IoError::Errno { errno: libc::EIO });
        }
        steps[40].result = Err(IoError::ShortTransfer { expected: 4096, done: 0 });
        steps[50].result = Err(IoError::Errno { errno: libc::ENOSPC });
        let (b, clock, _) = fake(Script { steps, default_latency_ns: 100, busy_calls: vec![], ..Script::default() });
        let mut p = plan(1, 1, spec(RwMode::RandRead, 100));
        p.workers[0].io_limit = Some(300);
        p.workers[0].on_error = OnError::parse("continue:read").unwrap();
        let r = run(b, p, clock, |_| {}).unwrap();
        assert_eq!((r.total.read().ios, r.error_count()), (46, 5));
        let e = &r.total.errors;
        assert_eq!((e.continued, e.typed), (4, 5));
        assert_eq!(
            (e.first_typed, e.fatal),
            (Some(IoError::Errno { errno: libc::EIO }), Some(IoError::Errno { errno: libc::ENOSPC }))
        );
        assert_eq!(r.workers[0].summary.as_ref().unwrap().stop_reason, StopReason::Error);
        assert!(r.failed(), "an error that stopped the job fails the run");

        // Listed, every one is continued: the run does not fail, as fio exits 0.
        let steps: Vec<Step> = (0..100)
            .map(|i| Step {
                latency_ns: 100,
                result: if i % 10 == 0 { Err(IoError::Errno { errno: libc::ENOSPC }) } else { Ok(()) },
            })
            .collect();
        let (b, clock, _) = fake(Script { steps, default_latency_ns: 100, busy_calls: vec![], ..Script::default() });
        let mut p = plan(1, 2, spec(RwMode::RandWrite, 0));
        p.workers[0].io_limit = Some(100);
        p.workers[0].on_error = OnError::parse("continue:write=ENOSPC").unwrap();
        let r = run(b, p, clock, |_| {}).unwrap();
        assert_eq!((r.total.write().ios, r.error_count(), r.total.errors.continued), (90, 10, 10));
        assert!(!r.failed());
    }

    #[test]
    fn runtime_and_intervals_follow_the_clock() {
        let (b, clock, _) =
            fake(Script { steps: vec![], default_latency_ns: 1_000_000, busy_calls: vec![], ..Script::default() });
        let mut p = plan(1, 4, spec(RwMode::RandRead, 100));
        p.workers[0].runtime = Some(Duration::from_secs(1));
        let mut seen = Vec::new();
        let r = run(b, p, clock, |pt| seen.push(*pt)).unwrap();
        // 4 slots each completing every 1 ms for 1 s: 4000 I/Os. An interval holds what completed
        // in (start, end]: the completions at 100 ms are stamped and reaped before the pass that
        // sees the boundary (the passes in between are idle and take no decision), so they count
        // in the first interval. Every measured I/O is in exactly one interval.
        assert_eq!(r.total.read().ios, 4000);
        assert_eq!(r.workers[0].summary.as_ref().unwrap().stop_reason, StopReason::Time);
        let times: Vec<f64> = r.intervals.iter().map(|i| i.t_s).collect();
        assert_eq!(times, vec![0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]);
        let ios: Vec<u64> = r.intervals.iter().map(|i| i.read.ios).collect();
        assert_eq!(ios, vec![400; 10]);
        assert!(r.intervals.iter().all(|i| !i.partial && i.span_s == 0.1 && i.workers == 1));
        assert!(r.intervals.iter().all(|i| i.read.p99_ns == 1_000_000 && i.read.iops == i.read.ios as f64 * 10.0));
        assert_eq!(seen.len(), 10);
    }

    #[test]
    fn ramp_is_not_counted() {
        let (b, clock, _) =
            fake(Script { steps: vec![], default_latency_ns: 1_000_000, busy_calls: vec![], ..Script::default() });
        let mut p = plan(1, 1, spec(RwMode::RandRead, 100));
        p.workers[0].ramp = Duration::from_millis(500);
        p.workers[0].runtime = Some(Duration::from_millis(200));
        let r = run(b, p, clock, |_| {}).unwrap();
        // What completes in (500 ms, 700 ms] counts (as in fio, what completes after the ramp):
        // 200 I/Os. The one completing at 500 ms exactly is the ramp's last.
        assert_eq!(r.total.read().ios, 200);
    }

    #[test]
    fn paced_runs_measure_from_the_intended_time() {
        // 1000 IOPS on a device that takes 3 ms: with one slot, I/Os fall ever further behind their
        // schedule, and latency must grow with it instead of staying at 3 ms.
        let (b, clock, _) =
            fake(Script { steps: vec![], default_latency_ns: 3_000_000, busy_calls: vec![], ..Script::default() });
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

    /// A paced worker on an interrupt-driven engine sleeps between its I/Os (in `wait_for`, until
    /// the completion or the next due time); on a polled one it polls and never sleeps. Latency is
    /// the same either way: the fake engine wakes exactly when asked.
    #[test]
    fn paced_workers_sleep_on_interrupt_driven_engines_only() {
        for interrupt_driven in [true, false] {
            let script = Script { default_latency_ns: 100_000, interrupt_driven, ..Script::default() };
            let (b, clock, _) = fake(script);
            let mut p = plan(1, 4, spec(RwMode::RandRead, 100));
            p.workers[0].rate_iops = Some(1000.0);
            p.workers[0].io_limit = Some(100);
            let r = run(b.clone(), p, clock, |_| {}).unwrap();
            let d = r.total.read();
            assert_eq!((d.ios, d.min_ns, d.max_ns), (100, 100_000, 100_000), "{interrupt_driven}");
            let slept = b.slept.load(Ordering::Relaxed);
            if interrupt_driven {
                // 100 I/Os a millisecond apart: asleep for all of it but the last I/O's gap.
                assert!((98_000_000..=100_000_000).contains(&slept), "slept {slept} ns");
            } else {
                assert_eq!(slept, 0);
            }
        }
    }

    #[test]
    fn null_engine_workers_merge() {
        let mut p = plan(2, 8, spec(RwMode::RandRw, 50));
        for w in &mut p.workers {
            w.io_limit = Some(50_000);
        }
        let b = Arc::new(NullBuilder { options: NullOptions::default() });
        let r = run(b, p, Clock::new(), |_| {}).unwrap();
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
        let r = run(b, p, Clock::new(), |_| {}).unwrap();
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
        let e = run(b, p, Clock::new(), |_| {}).unwrap_err();
        assert!(matches!(e, CoordinatorError::Interrupted(15)), "{e}");
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
        let r = run(b, p, Clock::new(), |_| {}).unwrap();
        t.join().unwrap();
        assert_eq!(r.interrupted_by, Some(2));
        assert!(r.total.read().ios > 0);
        assert_eq!(r.workers[0].summary.as_ref().unwrap().stop_reason, StopReason::Requested);
    }

    #[test]
    fn a_polled_device_that_stops_answering_is_watched_and_given_up() {
        // Every I/O takes 5 s on an engine that never blocks in a wait (null, as uring:poll and SPDK
        // poll): while nothing completes the worker must still cut its intervals, see its deadline
        // and give up the drain after its timeout, not wait for a completion.
        let mut p = plan(1, 4, spec(RwMode::RandRead, 100));
        p.workers[0].runtime = Some(Duration::from_millis(300));
        p.workers[0].drain_timeout = Duration::from_millis(100);
        let b = Arc::new(NullBuilder { options: NullOptions { service_time: Duration::from_secs(5) } });
        let started = Instant::now();
        let r = run(b, p, Clock::new(), |_| {}).unwrap();
        assert!(started.elapsed() < Duration::from_secs(3), "took {:?}", started.elapsed());
        let s = r.workers[0].summary.as_ref().unwrap();
        assert_eq!((s.stop_reason, s.lost_in_flight), (StopReason::Time, 4));
        let times: Vec<f64> = r.intervals.iter().map(|i| i.t_s).collect();
        assert!(times.len() >= 3 && times[..2] == [0.1, 0.2], "{times:?}");
        assert_eq!(r.total.read().ios, 0);
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
        let e = run(Arc::new(FailingBuilder), p, Clock::new(), |_| {}).unwrap_err();
        assert!(e.to_string().starts_with("worker 1: null: test set-up failed"), "{e}");
    }

    #[test]
    fn inline_refills_keep_counts_limits_and_stamps_exact() {
        // The SPDK engine's way: each completed slot gets its next I/O from inside the completion
        // handling. Same scripted latencies, same figures, same stop.
        let steps = (0..1000).map(|i| Step { latency_ns: 1000 + (i % 10) * 100, result: Ok(()) }).collect();
        let script = Script { steps, default_latency_ns: 5000, inline_refill: true, ..Script::default() };
        let (b, clock, seen) = fake(script);
        let mut p = plan(1, 1, spec(RwMode::RandRead, 100));
        p.workers[0].io_limit = Some(1000);
        let r = run(b, p, clock, |_| {}).unwrap();
        let d = r.total.read();
        assert_eq!(d.ios, 1000);
        assert_eq!((d.min_ns, d.max_ns), (1000, 1900));
        assert_eq!(d.mean_ns(), 1450.0);
        assert_eq!(r.workers[0].summary.as_ref().unwrap().stop_reason, StopReason::IoLimit);
        // Not one I/O beyond the limit was handed to the engine.
        assert_eq!(seen.lock().unwrap()[0].len(), 1000);
    }

    /// Busy time (polled SPDK's accounting) is the whole span of every poll that reaped something,
    /// its refills included, over the measured window only; polls that reap nothing add nothing.
    /// Here each completion costs 100 ns to handle and its successor 50 ns to queue, and every
    /// empty poll moves the fake's clock 1 us.
    #[test]
    fn busy_time_is_the_span_of_the_polls_that_reaped_and_nothing_else() {
        let script = Script {
            default_latency_ns: 10_000,
            reap_cost_ns: 100,
            queue_cost_ns: 50,
            inline_refill: true,
            account_busy: true,
            ..Script::default()
        };
        let (b, clock, _) = fake(script.clone());
        let mut p = plan(1, 1, spec(RwMode::RandRead, 100));
        // A ramp of about 50 I/Os, whose polls are not counted.
        p.workers[0].ramp = Duration::from_micros(500);
        p.workers[0].io_limit = Some(100);
        let r = run(b, p, clock, |_| {}).unwrap();
        let s = r.workers[0].summary.clone().unwrap();
        let busy = s.busy.expect("the engine accounts busy time");
        assert_eq!(r.total.read().ios, 100);
        // One productive poll per I/O at QD1; the last completion queues no successor (the limit).
        assert_eq!(busy.busy_polls, 100);
        assert_eq!(busy.busy_ns, 99 * 150 + 100);
        assert!(s.measured_ns > 100 * 10_000, "the rest of the window is idle: {}", s.measured_ns);
        // In the document: per worker and in total, idle the rest of the measured window.
        let d = crate::report::json::spdk_doc(&r).expect("busy time makes an SPDK section");
        let b = d.busy.unwrap();
        assert_eq!((b.busy_ns, b.idle_ns, b.ios), (14_950, s.measured_ns - 14_950, 100));
        assert_eq!(b.busy_ns_per_io, 149.5);
        assert_eq!(b.workers.len(), 1);
        // perf -m's accounting, as perf keeps it: each productive poll books the span since the
        // previous poll's start, here the empty poll and the wait for the completion (10 us); each
        // empty poll books the productive poll before it (150 ns, or 100 for the last I/O's).
        assert_eq!((busy.perf_busy_ns, busy.perf_idle_ns), (100 * 10_000, 99 * 150));
        assert_eq!((b.perf_busy_ns, b.perf_idle_ns), (100 * 10_000, 99 * 150));
        assert_eq!(b.perf_busy_pct, 100.0 * 1_000_000.0 / 1_014_850.0);
        assert_eq!(b.workers[0].perf_busy_pct, b.perf_busy_pct);

        // Deeper: several completions per poll, each poll busy for all of them at once.
        let (b4, clock, _) = fake(Script { reap_cost_ns: 100, queue_cost_ns: 0, ..script.clone() });
        let mut p = plan(1, 4, spec(RwMode::RandRead, 100));
        p.workers[0].io_limit = Some(400);
        let r = run(b4, p, clock, |_| {}).unwrap();
        let busy = r.workers[0].summary.as_ref().unwrap().busy.unwrap();
        assert_eq!(r.total.read().ios, 400);
        assert_eq!(busy.busy_ns, 400 * 100, "every completion's handling, none of the waiting");
        // perf's way, every span between poll starts is booked one way or the other.
        assert!(busy.perf_busy_ns > busy.busy_ns && busy.perf_idle_ns > 0, "{busy:?}");
        assert!(busy.busy_polls < 400, "completions due together are reaped by one poll: {}", busy.busy_polls);

        // An engine that keeps no busy time has none.
        let (b0, clock, _) = fake(Script { account_busy: false, ..script });
        let mut p = plan(1, 1, spec(RwMode::RandRead, 100));
        p.workers[0].io_limit = Some(10);
        let r = run(b0, p, clock, |_| {}).unwrap();
        assert_eq!(r.workers[0].summary.as_ref().unwrap().busy, None);
        assert!(crate::report::json::spdk_doc(&r).is_none());
    }

    /// Writes and mixes take the in-callback refill path when the engine keeps spare buffers: each
    /// write handed over there goes out in a spare prepared ahead, holding exactly what the
    /// ordinary path writes (the pattern and a stamp of its own, never a stale buffer), and the
    /// operations are the generator's own sequence. Three spares at QD4 also run out mid-poll, where
    /// the write waits for the ordinary refill.
    #[test]
    fn writes_handed_over_from_completion_handling_go_out_in_buffers_prepared_ahead() {
        type Written = Vec<(Vec<u8>, bool)>;
        let run_with = |rw: RwMode, inline: bool, ios: u64| -> (Vec<crate::io::IoOp>, Written) {
            let written: Arc<Mutex<Written>> = Arc::default();
            let script = Script {
                default_latency_ns: 2_000,
                inline_refill: inline,
                write_spares: if inline { 3 } else { 0 },
                written: Some(written.clone()),
                ..Script::default()
            };
            let (b, clock, seen) = fake(script);
            let mut p = plan(1, 4, spec(rw, 50));
            p.workers[0].io_limit = Some(ios);
            let r = run(b, p, clock, |_| {}).unwrap();
            assert_eq!(r.total.read().ios + r.total.write().ios, ios);
            let ops = seen.lock().unwrap()[0].clone();
            let w = written.lock().unwrap().clone();
            (ops, w)
        };
        for rw in [RwMode::RandWrite, RwMode::RandRw] {
            let (ops, written) = run_with(rw, true, 2000);
            let (plain_ops, plain) = run_with(rw, false, 2000);
            let first = ops.iter().zip(&plain_ops).position(|(a, b)| a != b);
            assert_eq!(
                first,
                None,
                "{rw}: the generator's sequence either way: {:?}",
                first.map(|i| (&ops[i.saturating_sub(2)..i + 3], &plain_ops[i.saturating_sub(2)..i + 3]))
            );
            assert_eq!(ops.len(), 2000);
            let handed = written.iter().filter(|(_, refill)| *refill).count();
            assert!(handed > written.len() / 2, "{rw}: most writes went out from completion handling: {handed}");
            assert!(written.len() > handed, "{rw}: some waited for the ordinary refill (three spares at QD4)");
            // Every write holds the pattern (the same for all) outside its stamps (the first 8
            // bytes of each 512-byte chunk), and a stamp of its own: never the engine's unprepared
            // fill, never a read's data, never a buffer sent twice with the same stamp.
            assert!(written.len() > 900 && plain.len() > 900, "{rw}");
            let chunk = crate::workload::contents::COMPRESS_CHUNK;
            let unstamped = |b: &[u8]| -> Vec<u8> { b.chunks(chunk).flat_map(|c| c[8..].to_vec()).collect() };
            let pattern = unstamped(&written[0].0);
            let mut stamps = std::collections::HashSet::new();
            for (i, (b, handed)) in written.iter().enumerate() {
                assert!(unstamped(b) == pattern, "{rw}: write {i} (handed over: {handed}) is not in the pattern");
                assert!(stamps.insert(b[..8].to_vec()), "{rw}: write {i}'s stamp went out twice (a stale buffer)");
            }
        }
    }

    #[test]
    fn inline_refills_stop_at_the_deadline_and_cut_intervals_on_time() {
        let script = Script { default_latency_ns: 1_000_000, inline_refill: true, ..Script::default() };
        let (b, clock, _) = fake(script);
        let mut p = plan(1, 4, spec(RwMode::RandRead, 100));
        p.workers[0].runtime = Some(Duration::from_secs(1));
        let r = run(b, p, clock, |_| {}).unwrap();
        assert_eq!(r.total.read().ios, 4000);
        assert_eq!(r.workers[0].summary.as_ref().unwrap().stop_reason, StopReason::Time);
        let ios: Vec<u64> = r.intervals.iter().map(|i| i.read.ios).collect();
        assert_eq!(ios, vec![400; 10]);
    }

    #[test]
    fn inline_refills_keep_the_generators_sequence_across_interval_cuts() {
        // The next operation is drawn ahead while the I/O is in flight; at every interval boundary
        // the slot is refilled the ordinary way, which must take that drawn operation first. A
        // sequential read then covers the range block after block, none skipped or repeated.
        let script = Script { default_latency_ns: 1_000_000, inline_refill: true, ..Script::default() };
        let (b, clock, seen) = fake(script);
        let mut p = plan(1, 2, spec(RwMode::Read, 100));
        p.workers[0].runtime = Some(Duration::from_secs(1));
        let r = run(b, p, clock, |_| {}).unwrap();
        assert_eq!(r.intervals.len(), 10, "ten boundaries crossed");
        let seen = seen.lock().unwrap();
        let offsets: Vec<u64> = seen[0].iter().map(|op| op.offset).collect();
        assert_eq!(offsets.len(), 2000);
        assert_eq!(offsets, (0..2000).map(|i| i * 4096).collect::<Vec<u64>>());
    }

    #[test]
    fn each_io_is_stamped_on_its_own_at_issue() {
        // Four I/Os queued in one pass, 100 ns apart (the engine takes 100 ns per queue call), all
        // submitted together and completing together 1 µs after the submit: each latency counts from
        // its own hand-over, so the four differ by 100 ns.
        let script = Script { default_latency_ns: 1_000, queue_cost_ns: 100, ..Script::default() };
        let (b, clock, _) = fake(script);
        let mut p = plan(1, 4, spec(RwMode::RandRead, 100));
        p.workers[0].io_limit = Some(4);
        let r = run(b, p, clock, |_| {}).unwrap();
        let d = r.total.read();
        assert_eq!(d.ios, 4);
        // Stamps at 0, 100, 200, 300 (read before each queue call); submitted at 400; done at 1400.
        assert_eq!((d.min_ns, d.max_ns), (1_100, 1_400));
        assert_eq!(d.sum_ns, 1_400 + 1_300 + 1_200 + 1_100);
    }

    #[test]
    fn each_io_is_stamped_on_its_own_at_completion() {
        // Four I/Os issued at the same moment complete together, and one poll reaps them all;
        // handling each completion takes 50 ns, and each is stamped when it is handled.
        let script = Script { default_latency_ns: 1_000, reap_cost_ns: 50, ..Script::default() };
        let (b, clock, _) = fake(script);
        let mut p = plan(1, 4, spec(RwMode::RandRead, 100));
        p.workers[0].io_limit = Some(4);
        let r = run(b, p, clock, |_| {}).unwrap();
        let d = r.total.read();
        assert_eq!(d.ios, 4);
        assert_eq!((d.min_ns, d.max_ns), (1_050, 1_200));
        assert_eq!(d.sum_ns, 1_050 + 1_100 + 1_150 + 1_200);
    }

    /// `--latency split` on a batch of four: each I/O's issue stamp is its own (read before each
    /// 100 ns queue call), the submit call takes 300 ns, and its return is one stamp shared by the
    /// batch (fio's), from which the device's 1 µs is the completion latency.
    #[test]
    fn split_latency_stamps_a_batch_once_on_the_return_of_its_submit() {
        use crate::engine::Sends;
        use crate::options::LatencyMode;
        for (sends, inline) in [(None, false), (Some(Sends::OnPoll), false), (Some(Sends::OnPoll), true)] {
            let script = Script {
                default_latency_ns: 1_000,
                queue_cost_ns: 100,
                submit_cost_ns: 300,
                sends,
                inline_refill: inline,
                ..Script::default()
            };
            let (b, clock, _) = fake(script);
            let mut p = plan(1, 4, spec(RwMode::RandRead, 100));
            p.workers[0].io_limit = Some(4);
            p.workers[0].latency = LatencyMode::Split;
            let r = run(b, p, clock, |_| {}).unwrap();
            let (lat, slat, clat) =
                (r.total.read(), r.total.slat(Direction::Read).unwrap(), r.total.clat(Direction::Read).unwrap());
            let case = format!("{sends:?}, inline {inline}");
            assert_eq!((lat.ios, slat.ios, clat.ios), (4, 4, 4), "{case}");
            // Stamps at 0, 100, 200, 300; the batch sent at 700 (400 + the submit's 300).
            assert_eq!((slat.min_ns, slat.max_ns, slat.sum_ns), (400, 700, 400 + 500 + 600 + 700), "{case}");
            assert_eq!((clat.min_ns, clat.max_ns, clat.sum_ns), (1_000, 1_000, 4_000), "{case}");
            assert_eq!((lat.min_ns, lat.max_ns), (1_400, 1_700), "{case}");
            assert_eq!(lat.sum_ns, slat.sum_ns + clat.sum_ns, "{case}: lat is slat and clat together");
        }
    }

    #[test]
    fn per_io_records_become_nanoseconds_as_the_worker_books_them() {
        let rec = |start, sent, end, flags| IoRecord {
            start,
            sent,
            end,
            offset: 4096,
            len: 4096,
            prio: 0,
            dir: Direction::Read,
            flags,
        };
        let (clock, _mock) = crate::clock::Clock::mock();
        let l = LoggedIo::of(&rec(1_000, 1_300, 2_000, iolog::FLAG_SLAT), &clock, 400);
        assert_eq!((l.end_ns, l.lat_ns(), l.slat_ns(), l.clat_ns(), l.sent_ns), (1_600, 1_000, 300, 700, 900));
        // Without a submission stamp clat is the whole latency.
        let l = LoggedIo::of(&rec(1_000, 1_000, 2_000, 0), &clock, 0);
        assert_eq!((l.lat_ns(), l.slat_ns(), l.clat_ns(), l.has_slat()), (1_000, 0, 1_000, false));
        // A send stamp after the completion (a batch stamped late) is held to it.
        let l = LoggedIo::of(&rec(1_000, 5_000, 2_000, iolog::FLAG_SLAT), &clock, 0);
        assert_eq!((l.slat_ns(), l.clat_ns()), (1_000, 0));
    }

    /// fio's per-I/O logs: with `io_log`, every measured I/O has its record, on each path of the
    /// loop (plain, inline refill, split on every kind of engine), over several buffers' worth (the
    /// hand-overs and the pool), none from the ramp; each record's latencies are the ones booked.
    /// Without it, none.
    #[test]
    fn per_io_logs_record_every_measured_io_on_every_path() {
        use crate::engine::Sends;
        use crate::options::LatencyMode;
        let ios = 3 * iolog::RECORDS_PER_BUFFER as u64 + 17;
        let cases = [
            (LatencyMode::Total, None, false),
            (LatencyMode::Total, None, true),
            (LatencyMode::Split, Some(Sends::OnSubmit), false),
            (LatencyMode::Split, Some(Sends::OnPoll), true),
            (LatencyMode::Split, Some(Sends::Synchronous), false),
        ];
        for (latency, sends, inline) in cases {
            for io_log in [true, false] {
                let script = Script {
                    default_latency_ns: 1_000,
                    queue_cost_ns: 20,
                    submit_cost_ns: 300,
                    sends,
                    inline_refill: inline,
                    ..Script::default()
                };
                let (b, clock, _) = fake(script);
                let mut p = plan(1, 4, spec(RwMode::RandRead, 100));
                p.workers[0].ramp = Duration::from_micros(100);
                p.workers[0].io_limit = Some(ios);
                p.workers[0].latency = latency;
                p.workers[0].io_log = io_log;
                let r = run(b, p, clock, |_| {}).unwrap();
                let case = format!("{latency:?} {sends:?} inline {inline} log {io_log}");
                let log = &r.io_logs[0];
                if !io_log {
                    assert!(log.is_empty(), "{case}");
                    continue;
                }
                let read = r.total.read();
                assert_eq!(log.len() as u64, read.ios, "{case}: a record per measured I/O");
                assert!(read.ios >= ios, "{case}: the ramp's I/Os are not counted");
                let s = r.workers[0].summary.as_ref().unwrap();
                assert!(log.iter().all(|io| io.end_ns > s.log_epochs_ns[0]), "{case}: none from the ramp");
                assert!(log.windows(2).all(|w| w[0].end_ns <= w[1].end_ns), "{case}: in completion order");
                let lat_sum: u128 = log.iter().map(|io| u128::from(io.lat_ns())).sum();
                assert_eq!(lat_sum, read.sum_ns, "{case}: the latencies booked");
                assert_eq!(log.iter().map(|io| io.lat_ns()).min(), Some(read.min_ns), "{case}");
                let slat = log.iter().filter(|io| io.has_slat()).count() as u64;
                match r.total.slat(Direction::Read) {
                    Some(booked) => {
                        assert_eq!(slat, booked.ios, "{case}");
                        let clat = r.total.clat(Direction::Read).unwrap();
                        assert_eq!(log.iter().map(|io| u128::from(io.clat_ns())).sum::<u128>(), clat.sum_ns, "{case}");
                    }
                    None => assert_eq!(slat, 0, "{case}"),
                }
                assert!(log.iter().all(|io| io.len == 4096 && io.dir == Direction::Read), "{case}");
                assert_eq!(s.log_buffers_allocated, 0, "{case}: the coordinator kept the pool filled");
            }
        }
    }

    /// Split, the batches of a longer run each share their stamp, every I/O's latency is its
    /// submission and completion latencies together, and the device time is all completion
    /// latency, whichever way the engine sends; a synchronous engine has no submission latency.
    #[test]
    fn split_latency_adds_up_over_a_run_on_every_kind_of_engine() {
        use crate::engine::Sends;
        use crate::options::LatencyMode;
        let kinds = [None, Some(Sends::OnPoll), Some(Sends::OnQueue), Some(Sends::Synchronous)];
        for (sends, inline) in kinds.iter().flat_map(|&s| [(s, false), (s, true)]) {
            let steps = (0..2000).map(|i| Step { latency_ns: 1_000 + (i % 7) * 150, result: Ok(()) }).collect();
            let script = Script {
                steps,
                queue_cost_ns: 20,
                submit_cost_ns: 300,
                reap_cost_ns: 10,
                sends,
                inline_refill: inline,
                ..Script::default()
            };
            let (b, clock, _) = fake(script);
            let mut p = plan(1, 8, spec(RwMode::RandRead, 100));
            p.workers[0].io_limit = Some(2000);
            p.workers[0].latency = LatencyMode::Split;
            let r = run(b, p, clock, |_| {}).unwrap();
            let (lat, slat, clat) =
                (r.total.read(), r.total.slat(Direction::Read).unwrap(), r.total.clat(Direction::Read).unwrap());
            let case = format!("{sends:?}, inline {inline}");
            assert_eq!((lat.ios, clat.ios), (2000, 2000), "{case}");
            if sends == Some(Sends::Synchronous) {
                assert_eq!(slat.ios, 0, "{case}: fio records no slat for a synchronous engine");
                assert_eq!((clat.sum_ns, clat.min_ns, clat.max_ns), (lat.sum_ns, lat.min_ns, lat.max_ns), "{case}");
                continue;
            }
            assert_eq!(slat.ios, 2000, "{case}");
            assert_eq!(lat.sum_ns, slat.sum_ns + clat.sum_ns, "{case}");
            // The send takes 300 ns after the I/O is stamped; a doorbell per command at most
            // queue cost plus send after it; a batch shares one stamp, so slat is never below it.
            assert!(slat.min_ns >= 300, "{case}: {}", slat.min_ns);
            // The device time is completion latency: at least the smallest scripted latency.
            assert!(clat.min_ns >= 1_000, "{case}: {}", clat.min_ns);
        }
        // Total accounting keeps no split figures.
        let (b, clock, _) = fake(Script { default_latency_ns: 1_000, ..Script::default() });
        let mut p = plan(1, 4, spec(RwMode::RandRead, 100));
        p.workers[0].io_limit = Some(100);
        let r = run(b, p, clock, |_| {}).unwrap();
        assert!(r.total.split.is_none() && r.total.slat(Direction::Read).is_none());
    }

    /// Each worker thread runs on its own body (a fio group's jobs, each on its own ioengine):
    /// here a synchronous engine beside one that sends on submit, under one start gate, each
    /// worker measured as its own engine is (no submission latency on the synchronous one).
    #[test]
    fn each_thread_runs_on_its_own_engine() {
        use crate::engine::Sends;
        let script = |sends| Script { default_latency_ns: 1_000, submit_cost_ns: 300, sends, ..Script::default() };
        let (sync, clock, _) = fake(script(Some(Sends::Synchronous)));
        let submit = Arc::new(FakeBuilder {
            script: script(Some(Sends::OnSubmit)),
            mock: sync.mock.clone(),
            seen: Arc::new(Mutex::new(Vec::new())),
            slept: Arc::new(std::sync::atomic::AtomicU64::new(0)),
        });
        let mut p = plan(3, 4, spec(RwMode::RandRead, 100));
        for w in &mut p.workers {
            w.io_limit = Some(100);
            w.latency = crate::options::LatencyMode::Split;
        }
        let bodies: Vec<Arc<dyn ThreadBody>> = vec![submit.clone(), sync, submit];
        let r = run_threads(bodies, p, clock, |_| {}).unwrap();
        let slat: Vec<(u64, u64)> =
            r.workers.iter().map(|w| (w.stats.read().ios, w.stats.slat(Direction::Read).unwrap().ios)).collect();
        assert_eq!(slat, [(100, 100), (100, 0), (100, 100)]);
    }

    #[test]
    fn a_final_partial_interval_is_marked_and_divides_by_its_own_span() {
        let script = Script { default_latency_ns: 1_000_000, ..Script::default() };
        let (b, clock, _) = fake(script);
        let mut p = plan(1, 4, spec(RwMode::RandRead, 100));
        p.workers[0].runtime = Some(Duration::from_millis(1050));
        let r = run(b, p, clock, |_| {}).unwrap();
        let last = r.intervals.last().unwrap();
        assert_eq!(r.intervals.len(), 11);
        assert!(r.intervals[..10].iter().all(|i| !i.partial));
        assert!(last.partial);
        assert_eq!((last.t_s, last.span_s), (1.05, 0.05));
        // 4 I/Os per ms over (1.0 s, 1.05 s]: the rate is over 50 ms, not 100.
        assert_eq!(last.read.ios, 200);
        assert_eq!(last.read.iops, 200.0 / 0.05);
        let sum: u64 = r.intervals.iter().map(|i| i.read.ios).sum();
        assert_eq!(sum, r.total.read().ios);
    }

    #[test]
    fn a_last_interval_that_runs_to_the_planned_end_is_whole_after_a_late_cut() {
        // Three slots completing together every 33 ms: the worker sees each boundary at the next
        // batch (132 ms, 231 ms, ..., 924 ms), late, so every interval after the first spans 99 ms.
        // The last runs from the cut at 924 ms past the planned end at 1 s (to 1023 ms, when the
        // batch in flight at the stop completes): the run did not end inside it, so it is whole,
        // though its span is 99 ms like the others'.
        let script = Script { default_latency_ns: 33_000_000, ..Script::default() };
        let (b, clock, _) = fake(script);
        let mut p = plan(1, 3, spec(RwMode::RandRead, 100));
        p.workers[0].runtime = Some(Duration::from_secs(1));
        let r = run(b, p, clock, |_| {}).unwrap();
        let last = r.intervals.last().unwrap();
        assert_eq!((last.t_s, last.span_s, last.read.ios), (1.023, 0.099, 9));
        assert!(r.intervals[1..].iter().all(|i| i.span_s == 0.099), "every cut after the first is late");
        let partial: Vec<f64> = r.intervals.iter().filter(|i| i.partial).map(|i| i.t_s).collect();
        assert_eq!(partial, Vec::<f64>::new(), "no interval is partial");
        let sum: u64 = r.intervals.iter().map(|i| i.read.ios).sum();
        assert_eq!(sum, r.total.read().ios);
    }

    #[test]
    fn partial_is_where_the_run_ended_on_each_workers_timeline() {
        // Worker 1 (no ramp) cut interval 3 late, at 420 ms; its last report is partial if it
        // stopped inside interval 4 (400..500 ms), whole if it ran past 500 ms, however short.
        let mut p = plan(2, 1, spec(RwMode::RandRead, 100));
        p.workers[0].ramp = Duration::from_millis(500);
        let partial_when_ending_at = |end_ms: u64| {
            let mut c = Collector::new(&p, |_: &IntervalPoint| {});
            c.on_interval(report(1, 3, 300, 420, 1000, false));
            c.on_interval(report(1, 4, 420, end_ms, 100, true));
            c.finalize(true);
            assert!(!c.intervals[0].partial);
            c.intervals[1].partial
        };
        assert!(partial_when_ending_at(450), "stopped inside the interval");
        assert!(!partial_when_ending_at(510), "ran past its planned end: whole, though it spans 90 ms");
        // Worker 0 ramps 500 ms and measures 100 ms; its ramp cut came 30 ms late, so its one
        // measured interval spans 80 ms, ending past the planned end at 600 ms: whole.
        let mut c = Collector::new(&p, |_: &IntervalPoint| {});
        let mut ramp = report(0, 5, 0, 530, 100, false);
        ramp.phase = Phase::Ramp;
        c.on_interval(ramp);
        c.on_interval(report(0, 0, 530, 610, 800, true));
        c.finalize(true);
        assert_eq!(c.intervals.len(), 1);
        assert!(!c.intervals[0].partial, "ran to its planned end");
    }

    #[test]
    fn a_worker_ending_after_the_deadline_books_its_last_report_in_the_last_planned_interval() {
        // Two lanes on one thread, so that one mocked clock moves deterministically. Both run 1 s
        // in 100 ms intervals: ten planned. Lane 0 completes an I/O every millisecond and is done
        // with its 950 I/Os inside the tenth. Lane 1's device takes 150 ms per I/O: it cuts
        // late (at 150, 300, ..., 900 ms) and its I/O in flight at the deadline completes at
        // 1050 ms, after the run's end. Its last report, (900 ms, 1050 ms], belongs to the last
        // planned interval, the one due to end at 1 s, beside lane 0's, not to an eleventh.
        let script =
            Script { default_latency_ns: 1_000_000, latency_by_worker: vec![(1, 150_000_000)], ..Script::default() };
        let (b, clock, _) = fake(script);
        let mut p = plan(2, 1, spec(RwMode::RandRead, 100));
        p.workers[1].thread = 0;
        for w in &mut p.workers {
            w.runtime = Some(Duration::from_secs(1));
        }
        p.workers[0].io_limit = Some(950);
        let r = run(b, p, clock, |_| {}).unwrap();
        // The mocked clock moves a microsecond per empty poll of either lane, so stamps drift a
        // little past the scripted times.
        let near = |got: f64, want: f64| (got - want).abs() < 0.001;
        let slow = r.workers[1].summary.as_ref().unwrap();
        assert_eq!(slow.stop_reason, StopReason::Time);
        assert!(near(slow.measured_ns as f64 / 1e9, 1.05), "{}", slow.measured_ns);
        let t: Vec<f64> = r.intervals.iter().map(|i| i.t_s).collect();
        assert_eq!(t.len(), 10, "ten planned intervals, no more: {t:?}");
        assert_eq!(t[..9], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]);
        let last = r.intervals.last().unwrap();
        assert!(near(last.t_s, 1.05) && near(last.span_s, 0.15), "ends when the slow lane did: {last:?}");
        assert_eq!(last.workers, 2, "both lanes' last reports");
        assert_eq!(r.intervals.iter().map(|i| i.read.ios).sum::<u64>(), r.total.read().ios);
        assert_eq!(r.total.read().ios, 950 + 7);
    }

    /// Lanes that share their worker's queue depth (fio's iodepth over a job's files) keep that
    /// many I/Os in flight together, taking turns, where lanes of their own keep it each.
    #[test]
    fn lanes_sharing_a_queue_depth_keep_it_in_flight_together() {
        let elapsed = |shared: bool| {
            let (b, clock, seen) = fake(Script { default_latency_ns: 100_000, ..Script::default() });
            let mut p = plan(2, 4, spec(RwMode::RandRead, 100));
            p.workers[1].thread = 0;
            p.workers[1].target = 1;
            for w in &mut p.workers {
                w.io_limit = Some(400);
                w.worker_qd = shared.then_some(4);
            }
            let r = run(b, p, clock, |_| {}).unwrap();
            assert_eq!(seen.lock().unwrap().iter().map(Vec::len).collect::<Vec<_>>(), [400, 400]);
            let lanes: Vec<u64> = r.workers.iter().map(|w| w.summary.as_ref().unwrap().measured_ns).collect();
            (r.elapsed_ns, lanes)
        };
        // 800 I/Os of 100 us: 4 in flight take 20 ms, 8 take 10 ms (a microsecond per empty poll
        // of the mocked clock on top).
        let (apart, _) = elapsed(false);
        assert!((10_000_000..10_500_000).contains(&apart), "{apart}");
        let (together, lanes) = elapsed(true);
        assert!((20_000_000..21_000_000).contains(&together), "{together}");
        // They took turns: each lane ran the whole time, rather than one after the other.
        assert!(lanes.iter().all(|&ns| ns > 19_000_000), "{lanes:?}");
    }

    /// One worker's interval report, `ios` reads completed in `(from_ms, to_ms]`.
    fn report(worker: usize, index: u64, from_ms: u64, to_ms: u64, ios: u64, last: bool) -> IntervalReport {
        let mut stats = Box::<Stats>::default();
        stats.dir[0].record(1_000, ios, ios * 4096);
        IntervalReport {
            worker,
            phase: Phase::Measure,
            index,
            from_ns: from_ms * 1_000_000,
            to_ns: to_ms * 1_000_000,
            last,
            stats,
        }
    }

    #[test]
    fn intervals_are_aligned_by_time_with_a_slow_worker() {
        // Worker 0 cuts at every 100 ms boundary. Worker 1 is slow: its loop passes take 250 ms, so it
        // first sees a boundary at 250 ms (having crossed 100 and 200) and reports once, as interval 1;
        // its next pass, at 500 ms, closes interval 4.
        let mut points = Vec::new();
        let p = plan(2, 1, spec(RwMode::RandRead, 100));
        let mut c = Collector::new(&p, |pt: &IntervalPoint| points.push(*pt));
        c.on_interval(report(0, 0, 0, 100, 1000, false));
        c.on_interval(report(0, 1, 100, 200, 1000, false));
        c.finalize(false);
        assert!(c.intervals.is_empty(), "nothing is final until the slow worker has passed it");
        c.on_interval(report(1, 1, 0, 250, 500, false));
        c.finalize(false);
        assert_eq!(c.intervals.len(), 2);
        // Interval 0 has worker 0 alone; interval 1 adds the slow worker at its own rate (500 over
        // 250 ms), not over a nominal 100 ms.
        assert_eq!((c.intervals[0].t_s, c.intervals[0].workers, c.intervals[0].read.iops), (0.1, 1, 10_000.0));
        assert_eq!((c.intervals[1].t_s, c.intervals[1].workers, c.intervals[1].read.iops), (0.2, 2, 12_000.0));
        c.on_interval(report(0, 2, 200, 300, 1000, false));
        c.on_interval(report(0, 3, 300, 400, 1000, false));
        c.on_interval(report(0, 4, 400, 500, 1000, false));
        c.on_interval(report(1, 4, 250, 500, 500, false));
        c.on_interval(report(0, 5, 500, 550, 500, true));
        c.on_interval(report(1, 5, 500, 550, 0, true));
        c.finalize(true);
        let t: Vec<f64> = c.intervals.iter().map(|i| i.t_s).collect();
        assert_eq!(t, vec![0.1, 0.2, 0.3, 0.4, 0.5, 0.55]);
        assert_eq!(c.intervals[4].read.iops, 10_000.0 + 2_000.0);
        assert!(c.intervals[5].partial && !c.intervals[4].partial);
        assert_eq!(c.intervals[5].read.iops, 10_000.0);
        drop(c);
        assert_eq!(points.len(), 6);
    }

    #[test]
    fn each_target_gets_its_own_series_on_the_runs_boundaries() {
        // Lanes 0 and 1 drive target 0, lane 2 drives target 1; lane 2 ends early, in the second
        // interval, and target 1 then has empty points at the run's later times.
        let mut p = plan(3, 1, spec(RwMode::RandRead, 100));
        p.workers[2].target = 1;
        let mut c = Collector::new(&p, |_: &IntervalPoint| {});
        c.on_interval(report(0, 0, 0, 100, 1000, false));
        c.on_interval(report(1, 0, 0, 100, 500, false));
        c.on_interval(report(2, 0, 0, 100, 200, false));
        c.on_interval(report(2, 1, 100, 150, 100, true));
        c.on_interval(report(0, 1, 100, 200, 1000, false));
        c.on_interval(report(1, 1, 100, 200, 500, false));
        c.on_interval(report(0, 2, 200, 300, 1000, true));
        c.on_interval(report(1, 2, 200, 300, 500, true));
        c.finalize(true);
        let t: Vec<f64> = c.intervals.iter().map(|i| i.t_s).collect();
        assert_eq!(t, vec![0.1, 0.2, 0.3]);
        assert_eq!(c.target_intervals.len(), 2);
        for series in &c.target_intervals {
            assert_eq!(series.iter().map(|i| i.t_s).collect::<Vec<_>>(), t, "the run's boundaries");
        }
        let ios = |s: &[IntervalPoint]| s.iter().map(|i| i.read.ios).collect::<Vec<_>>();
        assert_eq!(ios(&c.target_intervals[0]), [1500, 1500, 1500]);
        assert_eq!(ios(&c.target_intervals[1]), [200, 100, 0]);
        assert_eq!(ios(&c.intervals), [1700, 1600, 1500]);
        // Rates are each target's own: lane 2's last 100 I/Os took 50 ms.
        let t1 = &c.target_intervals[1];
        assert_eq!((t1[1].read.iops, t1[1].workers, t1[1].partial), (2_000.0, 1, true));
        assert_eq!((t1[2].workers, t1[2].read.iops, t1[2].span_s), (0, 0.0, 0.0));
        assert_eq!(c.target_intervals[0][0].read.iops, 15_000.0);
        // The run's total is the sum of its targets', interval by interval.
        for (i, all) in c.intervals.iter().enumerate() {
            let iops: f64 = c.target_intervals.iter().map(|s| s[i].read.iops).sum();
            assert_eq!(all.read.iops, iops);
        }
    }

    #[test]
    fn each_thread_gets_its_own_series_of_its_lanes_summed() {
        // Thread 0 drives lanes 0 and 1 (two targets), thread 1 lane 2, which ends early, 50 ms
        // into the second interval: fio's per-clone logs read each thread's own figures.
        let mut p = plan(3, 1, spec(RwMode::RandRead, 100));
        p.workers[1].thread = 0;
        p.workers[1].target = 1;
        p.workers[2].thread = 1;
        let mut c = Collector::new(&p, |_: &IntervalPoint| {});
        c.on_interval(report(0, 0, 0, 100, 1000, false));
        c.on_interval(report(1, 0, 0, 100, 500, false));
        c.on_interval(report(2, 0, 0, 100, 200, false));
        c.on_interval(report(2, 1, 100, 150, 100, true));
        c.on_interval(report(0, 1, 100, 200, 1000, true));
        c.on_interval(report(1, 1, 100, 200, 500, true));
        c.finalize(true);
        assert_eq!(c.thread_intervals.len(), 2);
        let t = |s: &[ThreadPoint]| s.iter().map(|p| p.t_s).collect::<Vec<_>>();
        let read = |s: &[ThreadPoint]| {
            s.iter()
                .map(|p| (p.of(Direction::Read).ios, p.of(Direction::Read).ios as f64 * 1e9 / p.span_ns as f64))
                .collect::<Vec<_>>()
        };
        assert_eq!(t(&c.thread_intervals[0]), [0.1, 0.2]);
        assert_eq!(read(&c.thread_intervals[0]), [(1500, 15_000.0), (1500, 15_000.0)]);
        // Thread 1's last interval ends when it did, and its rate is over its own 50 ms.
        assert_eq!(t(&c.thread_intervals[1]), [0.1, 0.15]);
        assert_eq!(read(&c.thread_intervals[1]), [(200, 2_000.0), (100, 2_000.0)]);
        assert_eq!(c.thread_intervals[1][0].of(Direction::Read).mean_ns(), 1_000.0);
        // Each point's span is its thread's, over all its lanes: fio's time between two samples.
        let spans = |s: &[ThreadPoint]| s.iter().map(|p| p.span_ns / 1_000_000).collect::<Vec<_>>();
        assert_eq!((spans(&c.thread_intervals[0]), spans(&c.thread_intervals[1])), (vec![100, 100], vec![100, 50]));
        // The threads' figures add up to the run's.
        for (i, all) in c.intervals.iter().enumerate() {
            let ios: u64 = c.thread_intervals.iter().map(|s| s[i].of(Direction::Read).ios).sum();
            assert_eq!(all.read.ios, ios);
        }
    }

    #[test]
    fn one_target_has_no_series_of_its_own() {
        let mut p = plan(2, 1, spec(RwMode::RandRead, 100));
        p.workers[1].io_limit = Some(10);
        let mut c = Collector::new(&p, |_: &IntervalPoint| {});
        c.on_interval(report(0, 0, 0, 100, 1000, true));
        c.on_interval(report(1, 0, 0, 100, 1000, true));
        c.finalize(true);
        assert_eq!(c.intervals.len(), 1);
        assert!(c.target_intervals.is_empty());
    }
}

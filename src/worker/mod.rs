//! One pinned, polled, closed-loop worker, generic over its engine.
//!
//! The worker pins itself, then builds its engine, generator, slots and statistics (so they are
//! first touched on its own NUMA node), says it is ready and waits at the start gate. The loop
//! itself is in [`hot`]: it keeps every slot busy (a completed slot is refilled at once, each batch
//! goes out with one `submit`), stamps every I/O on its own (issue time just before the I/O is
//! handed to the engine, completion time in its own completion handling), never allocates, locks
//! or formats, and talks to the coordinator only at interval boundaries on the run's common
//! timeline, swapping its full statistics for an emptied set.
//! What the worker does not do: decide what to issue (the generator does) or print anything.

mod hot;
pub mod iolog;
pub mod latency;
pub mod targets;

use crate::clock::Clock;
use crate::cpu::CpuWindow;
use crate::engine::{EngineBuilder, EngineError, EngineInfo};
use crate::io::{Direction, IoError};
use crate::options::{LatencyMode, LatencyTarget, OnError};
use crate::stats::Stats;
use crate::verify::{GenTable, Verifier};
use crate::workload::WorkloadSpec;
use crossbeam_channel::{Receiver, Sender};
use serde::Serialize;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::time::Duration;

/// Everything one worker needs to know, decided before it starts.
#[derive(Clone, Debug)]
pub struct WorkerPlan {
    /// This lane's number in the run (one lane: one worker on one target; see [`targets`]).
    pub index: usize,
    /// The worker (thread) that drives the lane; lanes of one worker share its core.
    pub thread: usize,
    /// The target the lane drives (an index into the run's targets).
    pub target: usize,
    /// The lane's slice of its target's working set, of `slices` (sequential patterns, and random
    /// ones under `--verify`, give each lane on a target its own slice).
    pub slice: usize,
    pub slices: usize,
    /// The core to pin to; `None` leaves the thread unpinned (tests).
    pub core: Option<usize>,
    /// Slots of this lane: `--qd` is per worker per target.
    pub queue_depth: u32,
    /// The I/Os all of this worker's lanes may have in flight together, when they share one queue
    /// depth (fio's `iodepth` over a job's files); `None`: each lane fills its own slots.
    pub worker_qd: Option<u32>,
    pub spec: Arc<WorkloadSpec>,
    pub ramp: Duration,
    pub runtime: Option<Duration>,
    /// This lane's share of `--ios`.
    pub io_limit: Option<u64>,
    /// The bytes this lane moves before it ends (fio's end of a job of several block sizes by
    /// its `size` in bytes, counted at issue); `None`: no such end.
    pub byte_limit: Option<u64>,
    /// This lane's share of `--rate-iops`.
    pub rate_iops: Option<f64>,
    /// This lane's share of its worker's `--rate` (bytes per second, which is per worker as fio's
    /// `rate` is per job): 1 over the number of targets the worker drives, so that its lanes
    /// together hold the rate rather than each of them holding all of it.
    pub rate_share: f64,
    pub interval: Duration,
    /// `--latency`: whether each I/O is stamped, and whether its submission is stamped apart.
    pub latency: LatencyMode,
    pub on_error: OnError,
    /// How long to wait for I/Os still in flight after the stop.
    pub drain_timeout: Duration,
    /// Data verification (`--verify`): this worker's slice and its known state.
    pub verify: Option<VerifyPlan>,
    /// fio's flow control: the worker's place in the flow it shares with other workers (a fio
    /// job's clone, on one target), taken before the start gate.
    pub flow: Option<crate::workload::flow::FlowSeat>,
    /// fio's latency target: the lane searches for its depth, up to `queue_depth` (see
    /// [`latency`]); `None`: it keeps `queue_depth` in flight.
    pub latency_target: Option<LatencyTarget>,
    /// fio's per-I/O logs: the lane records each measured I/O (see [`iolog`]).
    pub io_log: bool,
}

/// What a worker needs to verify data.
#[derive(Clone, Debug)]
pub struct VerifyPlan {
    /// Bytes per header-carrying unit (a logical block or the alignment).
    pub unit: u64,
    pub seed: u64,
    /// Generations known from an earlier run (`--verify-state`), for the whole range.
    pub known: Option<Arc<GenTable>>,
    /// Re-read everything written, after the run.
    pub pass: bool,
}

/// The start gate, the stop flag and the run's epoch, shared by the coordinator and all workers.
///
/// Aligned to two cache lines of its own (the pair the adjacent-line prefetcher moves together):
/// workers read the stop flag on every completion, and a neighbour on the heap that another
/// thread writes would cost them a miss there.
#[derive(Debug)]
#[repr(align(128))]
pub struct Shared {
    gate: AtomicU8,
    stop: AtomicBool,
    /// The clock's raw reading when the gate opened: time zero of every worker, so that interval
    /// boundaries (and the stop) fall at the same moment for all of them.
    epoch: AtomicU64,
}

impl Default for Shared {
    fn default() -> Self {
        Shared { gate: AtomicU8::new(GATE_CLOSED), stop: AtomicBool::new(false), epoch: AtomicU64::new(0) }
    }
}

const GATE_CLOSED: u8 = 0;
const GATE_OPEN: u8 = 1;
const GATE_ABORT: u8 = 2;

impl Shared {
    /// Opens the gate with `epoch` (a raw clock reading) as everyone's time zero.
    pub fn open_gate(&self, epoch: u64) {
        self.epoch.store(epoch, Ordering::Relaxed);
        self.gate.store(GATE_OPEN, Ordering::Release);
    }

    pub fn abort(&self) {
        self.gate.store(GATE_ABORT, Ordering::Release);
        self.stop.store(true, Ordering::Release);
    }

    pub fn request_stop(&self) {
        self.stop.store(true, Ordering::Release);
    }

    pub fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// Whether an interval's numbers count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Ramp,
    Measure,
}

/// Why a worker stopped issuing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    Time,
    IoLimit,
    Error,
    Requested,
    /// fio's latency target settled (`latency_run=0`): one more window at the depth found met it.
    LatencyTarget,
}

/// A worker's closing facts.
#[derive(Clone, Debug, Serialize)]
pub struct WorkerSummary {
    /// From the end of the ramp to the last completion.
    pub measured_ns: u64,
    /// CPU time of the worker's own thread over the measured window (user plus system, from
    /// `cpu`); kernel threads working for it (SQPOLL) are not in it. With several lanes on one
    /// thread, the first lane carries the thread's time and the others 0.
    pub thread_cpu_ns: u64,
    /// The thread's and the cores' CPU counters over the measured window (`None` when the worker
    /// never measured, or, with several lanes on one thread, on every lane but the first). Not
    /// written as it is: the run's cost (`crate::cost`) is made of these.
    #[serde(skip)]
    pub cpu: Option<CpuWindow>,
    /// What the engine's submit calls and reaps carried over the measured window, where it counts
    /// them (fio's iodepth_submit and iodepth_complete).
    #[serde(skip)]
    pub batches: Option<crate::batches::BatchCounts>,
    pub stop_reason: StopReason,
    /// I/Os still in flight when the drain timed out (their buffers are leaked, not reused).
    pub lost_in_flight: u64,
    /// The first failed I/O, for the error line.
    pub first_error: Option<FailedIo>,
    /// With fio's latency target, the depth the search was at when the worker stopped (fio's
    /// `latency_depth`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_depth: Option<u32>,
    /// Busy time over the measured window, for engines that account it (`Engine::accounts_busy`);
    /// the result document has it in the engine's section (`engine.spdk.busy`).
    #[serde(skip)]
    pub busy: Option<BusyTime>,
    /// With `--verify`, the reads of the verify pass after the run: in none of nvmebench's own
    /// figures, and in fio's JSON, whose job counts them as fio counts its verify reads.
    #[serde(skip)]
    pub verify_reads: Option<VerifyReads>,
    /// When measuring began and, with fio's latency target, when its last window restarted it
    /// (else the same), in nanoseconds since the gate opened: the epochs of fio's per-I/O log
    /// lines (fio's `td->epoch`, reset at the ramp's end and by `reset_all_stats`).
    #[serde(skip)]
    pub log_epochs_ns: [u64; 2],
    /// With a per-I/O log, the record buffers the worker allocated itself because the pool the
    /// coordinator refills was empty (see [`iolog::IoLog::take_full`]).
    #[serde(skip)]
    pub log_buffers_allocated: u64,
}

/// The verify pass's reads, booked as the run's are (counts, bytes, latencies), and how long the
/// pass took.
#[derive(Clone, Debug)]
pub struct VerifyReads {
    pub stats: Box<Stats>,
    pub span_ns: u64,
}

/// A polled worker's busy time over its measured window: the whole span of every poll that reaped
/// at least one completion (SPDK's completion processing, the completion callbacks, the refills
/// queued from them, and the booking of their latencies right after); polls that reaped nothing
/// add nothing. Its idle time is the rest of the measured window. Beside it, SPDK perf's `-m`
/// accounting, kept as perf keeps it: each poll's start is a tick, and the span from the previous
/// poll's start to this one's is busy when this poll reaped a completion, idle when it did not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BusyTime {
    pub busy_ns: u64,
    /// Polls that reaped at least one completion.
    pub busy_polls: u64,
    /// perf -m's busy and idle time (`ns_ctx->stats.busy_tsc`, `idle_tsc`) over the measured window.
    pub perf_busy_ns: u64,
    pub perf_idle_ns: u64,
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct FailedIo {
    pub error: IoError,
    pub dir: Direction,
    pub offset: u64,
    pub len: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("worker {worker} could not be pinned to core {core}")]
    Pin { worker: usize, core: usize },
    #[error("worker {worker}: {source}")]
    Engine { worker: usize, source: EngineError },
    #[error("worker {worker} panicked: {message}")]
    Panicked { worker: usize, message: String },
}

/// One interval of one worker: what completed in `(from_ns, to_ns]` on the run's timeline.
#[derive(Debug)]
pub struct IntervalReport {
    pub worker: usize,
    pub phase: Phase,
    /// Which interval of the phase this is, from the boundaries on the common timeline: during the
    /// ramp the boundaries crossed so far; measuring, the last boundary crossed (0 for the one at
    /// ramp + interval). A worker that crossed several boundaries in one pass reports once, under
    /// the last; the final report of a worker is indexed by the interval it ends in.
    pub index: u64,
    /// Nanoseconds since the gate opened.
    pub from_ns: u64,
    pub to_ns: u64,
    /// The worker's last report: it covers the rest of its run, up to its last completion.
    pub last: bool,
    pub stats: Box<Stats>,
}

/// What workers tell the coordinator.
#[derive(Debug)]
pub enum Report {
    Ready {
        worker: usize,
        info: EngineInfo,
        /// The engine's own facts of this lane (`Engine::lane_facts`).
        facts: Vec<(String, String)>,
        /// The worker thread's kernel id, so that the coordinator can tell it from other threads.
        tid: i32,
    },
    Interval(IntervalReport),
    /// A buffer of per-I/O records (fio's per-I/O logs), full or the last; the coordinator sends
    /// it back emptied on `Links::log_pool`.
    IoLog {
        worker: usize,
        records: Vec<iolog::IoRecord>,
    },
    /// Sent after the worker's last interval: everything it measured was in the intervals.
    Done {
        worker: usize,
        summary: WorkerSummary,
        verify: Option<Box<Verifier>>,
    },
    /// fio's latency target began its last window (`latency_run=0`): what the worker measured
    /// before no longer counts, as fio resets a job's statistics there (`reset_io_stats`).
    /// `unsent_ios`: the I/Os (and failures) it dropped without sending, for the run's CPU per I/O.
    Restart {
        worker: usize,
        unsent_ios: u64,
    },
    /// The worker stopped on an error; after the start, what it measured until then comes along.
    Failed {
        worker: usize,
        error: WorkerError,
        partial: Option<(Box<Stats>, WorkerSummary)>,
    },
}

/// The channels a worker talks on.
pub struct Links {
    pub reports: Sender<Report>,
    /// Emptied statistics handed back by the coordinator.
    pub spares: Receiver<Box<Stats>>,
    /// Emptied per-I/O record buffers handed back by the coordinator (only a lane with
    /// `WorkerPlan::io_log` takes from it).
    pub log_pool: Receiver<Vec<iolog::IoRecord>>,
    /// The coordinator's thread, woken when a per-I/O record buffer is handed over: it naps up to
    /// a quarter interval between looks, and a fast worker fills the report channel and the pool
    /// in much less (once per `iolog::RECORDS_PER_BUFFER` I/Os, one wake-up).
    pub coordinator: std::thread::Thread,
}

/// One worker thread's body: its lanes (one per target) run to completion on the calling thread,
/// each on an engine from one builder. The coordinator holds one per thread behind `dyn`, so the
/// threads of one run may each have their own engine type (a fio group's jobs, each on its own
/// ioengine) while every loop stays generic over its engine: the one dynamic call is the thread's
/// start, never an I/O.
pub trait ThreadBody: Send + Sync {
    /// Runs the lanes `plans` (all of one thread, `links` in the same order).
    fn run_thread(&self, plans: &[WorkerPlan], shared: &Shared, links: &[Links], clock: &Clock);
}

impl<B: EngineBuilder> ThreadBody for B {
    fn run_thread(&self, plans: &[WorkerPlan], shared: &Shared, links: &[Links], clock: &Clock) {
        if let ([plan], [link]) = (plans, links) {
            run(self, plan, shared, link, clock);
        } else {
            targets::run_lanes(self, plans, shared, links, clock);
        }
    }
}

/// Runs one worker to completion on the calling thread. Every outcome, failure included, ends in a
/// report on `links.reports`.
pub fn run<B: EngineBuilder>(builder: &B, plan: &WorkerPlan, shared: &Shared, links: &Links, clock: &Clock) {
    let worker = plan.index;
    let fail = |error: WorkerError| {
        shared.abort();
        let _ = links.reports.send(Report::Failed { worker, error, partial: None });
    };
    if let Some(core) = plan.core {
        if !core_affinity::set_for_current(core_affinity::CoreId { id: core }) {
            return fail(WorkerError::Pin { worker, core });
        }
    }
    // fio sets the job's priority before its engine starts (backend.c).
    if plan.spec.prio.set_thread {
        if let Err(source) = crate::engine::set_thread_ioprio(plan.spec.prio.job) {
            return fail(WorkerError::Engine { worker, source });
        }
    }
    let engine = match builder.build(worker, plan.queue_depth, plan.spec.max_bs()) {
        Ok(e) => e,
        Err(source) => return fail(WorkerError::Engine { worker, source }),
    };
    let mut state = hot::Loop::new(engine, plan, clock);
    if plan.io_log {
        state.keep_io_log(links);
    }
    let tid = nix::unistd::gettid().as_raw();
    let (info, facts) = (state.engine_info(), state.lane_facts());
    if links.reports.send(Report::Ready { worker, info, facts, tid }).is_err() {
        return;
    }
    let Some(epoch) = wait_for_gate(shared) else { return };
    match state.run(plan, shared, links, epoch) {
        Ok(summary) => {
            let verify = state.take_verifier().map(Box::new);
            if summary.lost_in_flight > 0 {
                // I/Os that never completed may still land in the engine's buffers: leak the engine
                // and its memory rather than free what a device could write into.
                std::mem::forget(state);
            }
            let _ = links.reports.send(Report::Done { worker, summary, verify });
        }
        Err(source) => {
            shared.request_stop();
            // What was logged until the failure goes with the partial figures.
            state.hand_over_log(links, worker);
            let partial = Some(state.partial());
            // The engine failed with I/Os possibly still owned by the device: never free its memory.
            std::mem::forget(state);
            let _ =
                links.reports.send(Report::Failed { worker, error: WorkerError::Engine { worker, source }, partial });
        }
    }
}

/// Waits at the start gate; the run's epoch once it opens, `None` when the run was called off.
fn wait_for_gate(shared: &Shared) -> Option<u64> {
    loop {
        match shared.gate.load(Ordering::Acquire) {
            GATE_OPEN => return Some(shared.epoch.load(Ordering::Relaxed)),
            GATE_ABORT => return None,
            _ => std::thread::sleep(Duration::from_micros(50)),
        }
    }
}

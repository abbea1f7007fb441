//! One pinned, polled, closed-loop worker, generic over its engine.
//!
//! The worker pins itself, then builds its engine, generator, slots and statistics (so they are
//! first touched on its own NUMA node), says it is ready and waits at the start gate. In the loop it
//! keeps every slot busy: a completed slot is refilled at once, and each batch goes out with one
//! `submit`. The loop reads the clock once per batch, never allocates, locks or formats, and talks to
//! the coordinator only once per interval, swapping its full statistics for an emptied set.
//! What the worker does not do: decide what to issue (the generator does) or print anything.

use crate::engine::{Engine, EngineBuilder, EngineError, EngineInfo, Queued};
use crate::io::{Direction, IoError, IoOp};
use crate::options::OnError;
use crate::stats::Stats;
use crate::verify::{GenTable, Verifier};
use crate::workload::rate::Pacer;
use crate::workload::{Generator, WorkloadSpec};
use crossbeam_channel::{Receiver, Sender};
use serde::Serialize;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::Duration;

/// Everything one worker needs to know, decided before it starts.
#[derive(Clone, Debug)]
pub struct WorkerPlan {
    pub index: usize,
    pub workers: usize,
    /// The core to pin to; `None` leaves the thread unpinned (tests).
    pub core: Option<usize>,
    pub queue_depth: u32,
    pub spec: Arc<WorkloadSpec>,
    pub ramp: Duration,
    pub runtime: Option<Duration>,
    /// This worker's share of `--ios`.
    pub io_limit: Option<u64>,
    /// This worker's share of `--rate-iops`.
    pub rate_iops: Option<f64>,
    pub interval: Duration,
    pub on_error: OnError,
    /// How long to wait for I/Os still in flight after the stop.
    pub drain_timeout: Duration,
    /// Data verification (`--verify`): this worker's slice and its known state.
    pub verify: Option<VerifyPlan>,
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

/// The start gate and the stop flag, shared by the coordinator and all workers.
#[derive(Debug)]
pub struct Shared {
    gate: AtomicU8,
    stop: AtomicBool,
}

impl Default for Shared {
    fn default() -> Self {
        Shared { gate: AtomicU8::new(GATE_CLOSED), stop: AtomicBool::new(false) }
    }
}

const GATE_CLOSED: u8 = 0;
const GATE_OPEN: u8 = 1;
const GATE_ABORT: u8 = 2;

impl Shared {
    pub fn open_gate(&self) {
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
}

/// A worker's closing facts.
#[derive(Clone, Debug, Serialize)]
pub struct WorkerSummary {
    /// From the end of the ramp to the last completion.
    pub measured_ns: u64,
    pub stop_reason: StopReason,
    /// I/Os still in flight when the drain timed out (their buffers are leaked, not reused).
    pub lost_in_flight: u64,
    /// The first failed I/O, for the error line.
    pub first_error: Option<FailedIo>,
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

/// What workers tell the coordinator.
#[derive(Debug)]
pub enum Report {
    Ready {
        worker: usize,
        info: EngineInfo,
    },
    Interval {
        worker: usize,
        phase: Phase,
        stats: Box<Stats>,
    },
    Done {
        worker: usize,
        stats: Box<Stats>,
        summary: WorkerSummary,
        verify: Option<Box<Verifier>>,
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
}

/// Runs one worker to completion on the calling thread. Every outcome, failure included, ends in a
/// report on `links.reports`.
pub fn run<B: EngineBuilder>(builder: &B, plan: &WorkerPlan, shared: &Shared, links: &Links, clock: &quanta::Clock) {
    let worker = plan.index;
    if let Some(core) = plan.core {
        if !core_affinity::set_for_current(core_affinity::CoreId { id: core }) {
            shared.abort();
            let _ =
                links.reports.send(Report::Failed { worker, error: WorkerError::Pin { worker, core }, partial: None });
            return;
        }
    }
    let max_bs = plan.spec.max_bs();
    let engine = match builder.build(worker, plan.queue_depth, max_bs) {
        Ok(e) => e,
        Err(source) => {
            shared.abort();
            let error = WorkerError::Engine { worker, source };
            let _ = links.reports.send(Report::Failed { worker, error, partial: None });
            return;
        }
    };
    let mut state = Loop::new(engine, plan, clock);
    if links.reports.send(Report::Ready { worker, info: state.engine.info() }).is_err() {
        return;
    }
    loop {
        match shared.gate.load(Ordering::Acquire) {
            GATE_OPEN => break,
            GATE_ABORT => return,
            _ => std::thread::sleep(Duration::from_micros(50)),
        }
    }
    match state.run(plan, shared, links) {
        Ok(summary) => {
            let stats = std::mem::take(&mut state.stats);
            let verify = state.verifier.take().map(Box::new);
            if summary.lost_in_flight > 0 {
                // I/Os that never completed may still land in the engine's buffers: leak the engine
                // and its memory rather than free what a device could write into.
                std::mem::forget(state);
            }
            let _ = links.reports.send(Report::Done { worker, stats, summary, verify });
        }
        Err(source) => {
            shared.request_stop();
            let (measure_start, last) = state.progress;
            let summary = WorkerSummary {
                measured_ns: last.saturating_sub(measure_start),
                stop_reason: StopReason::Error,
                lost_in_flight: 0,
                first_error: None,
            };
            let partial = Some((std::mem::take(&mut state.stats), summary));
            // The engine failed with I/Os possibly still owned by the device: never free its memory.
            std::mem::forget(state);
            let _ =
                links.reports.send(Report::Failed { worker, error: WorkerError::Engine { worker, source }, partial });
        }
    }
}

/// The loop's state, built before the start gate.
struct Loop<'c, E: Engine> {
    engine: E,
    generator: Generator,
    clock: &'c quanta::Clock,
    /// Issue time (ns since start) and operation of each slot.
    slots: Vec<(u64, IoOp)>,
    free: Vec<u32>,
    stats: Box<Stats>,
    spare: Option<Box<Stats>>,
    pacer: Option<Pacer>,
    verifier: Option<Verifier>,
    t0: u64,
    /// `(measure start, last completion)` in ns, kept for a report after an engine failure.
    progress: (u64, u64),
    /// Retries so far of each slot's I/O, and slots whose failed I/O waits to be queued again.
    tries: Vec<u32>,
    retry: Vec<u32>,
}

impl<'c, E: Engine> Loop<'c, E> {
    fn new(engine: E, plan: &WorkerPlan, clock: &'c quanta::Clock) -> Self {
        let qd = plan.queue_depth as usize;
        let idle = IoOp { dir: Direction::Read, offset: 0, len: 0 };
        // Verified workers own disjoint slices, so no unit is written by two workers at once.
        let generator = Generator::with_slices(&plan.spec, plan.index, plan.workers, plan.verify.is_some());
        let verifier = plan.verify.as_ref().map(|v| {
            let (start, end) = generator.range();
            let mut table = GenTable::new(start, end - start, v.unit);
            if let Some(known) = &v.known {
                table.absorb(known);
            }
            Verifier::new(table, v.seed, qd)
        });
        Loop {
            engine,
            generator,
            verifier,
            progress: (0, 0),
            tries: vec![0; qd],
            retry: Vec::with_capacity(qd),
            clock,
            slots: vec![(0, idle); qd],
            free: (0..plan.queue_depth).rev().collect(),
            stats: Box::default(),
            spare: Some(Box::default()),
            pacer: plan.rate_iops.map(|r| Pacer::new(r, 0)),
            t0: 0,
        }
    }

    #[inline]
    fn now_ns(&self) -> u64 {
        self.clock.delta_as_nanos(self.t0, self.clock.raw())
    }

    /// Hands the current statistics to the coordinator and carries on with an emptied set.
    ///
    /// The coordinator hands each set back as soon as it has merged it, so an emptied one is
    /// normally waiting; blocking for it happens only when the coordinator is a whole interval
    /// behind, and is preferred to a series whose intervals silently change length.
    fn send_interval(&mut self, links: &Links, worker: usize, phase: Phase) {
        let spare = match self.spare.take() {
            Some(s) => Some(s),
            None => links.spares.recv().ok(),
        };
        match spare {
            Some(spare) => {
                let full = std::mem::replace(&mut self.stats, spare);
                let _ = links.reports.send(Report::Interval { worker, phase, stats: full });
            }
            // The coordinator is gone; nobody will read these numbers.
            None => self.stats.reset(),
        }
    }

    fn run(&mut self, plan: &WorkerPlan, shared: &Shared, links: &Links) -> Result<WorkerSummary, EngineError> {
        let worker = plan.index;
        let qd = plan.queue_depth;
        let interval_ns = plan.interval.as_nanos().max(1) as u64;
        let ramp_ns = plan.ramp.as_nanos() as u64;
        let drain_ns = plan.drain_timeout.as_nanos() as u64;
        let stop_on_error = plan.on_error == OnError::Stop;
        let max_retries = match plan.on_error {
            OnError::Retry(n) => n,
            _ => 0,
        };

        self.t0 = self.clock.raw();
        let mut measuring = ramp_ns == 0;
        let mut measure_start = 0u64;
        let mut deadline = plan.runtime.map(|r| ramp_ns + r.as_nanos() as u64);
        let mut next_report = interval_ns.min(if measuring { u64::MAX } else { ramp_ns });
        let mut issued_measured = 0u64;
        let mut in_flight = 0u32;
        let mut staged = 0u32;
        let mut to_submit = false;
        let mut pending: Option<IoOp> = None;
        let mut stop: Option<(StopReason, u64)> = None;
        let mut first_error: Option<FailedIo> = None;
        let mut last_completion = 0u64;

        loop {
            let now = self.now_ns();

            if !measuring && now >= ramp_ns {
                self.send_interval(links, worker, Phase::Ramp);
                measuring = true;
                measure_start = now;
                issued_measured = 0;
                deadline = plan.runtime.map(|r| now + r.as_nanos() as u64);
                next_report = now + interval_ns;
                if let Some(p) = &mut self.pacer {
                    p.restart(now);
                }
            } else if now >= next_report {
                self.send_interval(links, worker, if measuring { Phase::Measure } else { Phase::Ramp });
                next_report = (next_report + interval_ns).max(now + 1);
                if !measuring {
                    next_report = next_report.min(ramp_ns);
                }
            }

            if stop.is_none() {
                let reason = if shared.stop_requested() {
                    Some(if first_error.is_some() && stop_on_error { StopReason::Error } else { StopReason::Requested })
                } else if deadline.is_some_and(|d| now >= d) {
                    Some(StopReason::Time)
                } else if measuring && plan.io_limit.is_some_and(|l| issued_measured >= l) {
                    Some(StopReason::IoLimit)
                } else {
                    None
                };
                if let Some(r) = reason {
                    stop = Some((r, now));
                }
            }

            match stop {
                None => {
                    // Fill every free slot; each refill is one generator call and one queue call.
                    while let Some(&slot) = self.free.last() {
                        let start = match &self.pacer {
                            Some(p) if p.due_ns() > now => break,
                            Some(p) => p.due_ns(),
                            None => now,
                        };
                        if measuring && plan.io_limit.is_some_and(|l| issued_measured >= l) {
                            break;
                        }
                        let op = pending.take().unwrap_or_else(|| self.generator.next_op());
                        if let Some(v) = &mut self.verifier {
                            // Never two overlapping I/Os in flight: the op waits for the other's end.
                            if v.overlaps(&op) {
                                pending = Some(op);
                                break;
                            }
                            let t = self.clock.raw();
                            v.prepare(slot, &op, self.engine.slot_buf(slot));
                            v.cost_ns += self.clock.delta_as_nanos(t, self.clock.raw());
                        }
                        match self.engine.queue(slot, &op)? {
                            Queued::Ok => {
                                self.free.pop();
                                self.slots[slot as usize] = (start, op);
                                staged += 1;
                                issued_measured += u64::from(measuring);
                                if let Some(p) = &mut self.pacer {
                                    p.advance();
                                }
                            }
                            Queued::Busy => {
                                if let Some(v) = &mut self.verifier {
                                    v.cancel(slot);
                                }
                                pending = Some(op);
                                break;
                            }
                        }
                    }
                    // Submitted after the reap below, together with a wait when nothing is ready: one
                    // syscall per round trip instead of two (fio's submit-and-getevents).
                    in_flight += staged;
                    to_submit = staged > 0;
                    staged = 0;
                }
                Some((_, at)) => {
                    if in_flight == 0 {
                        break;
                    }
                    if now.saturating_sub(at) > drain_ns {
                        // The device did not answer in time; the caller leaks the engine (see `run`).
                        return Ok(self.summary(
                            stop,
                            measure_start,
                            last_completion,
                            u64::from(in_flight),
                            first_error,
                        ));
                    }
                }
            }

            // Reap. The completion time is read once per batch, when the first completion shows up.
            let mut done_at: Option<u64> = None;
            let mut error_seen = false;
            let (clock, t0) = (self.clock, self.t0);
            let slots = &self.slots;
            let free = &mut self.free;
            let stats = &mut self.stats;
            let verifier = &mut self.verifier;
            let (tries, retry) = (&mut self.tries, &mut self.retry);
            let reaped = self.engine.poll(qd, |slot, result| {
                let t = *done_at.get_or_insert_with(|| clock.delta_as_nanos(t0, clock.raw()));
                let (start, op) = slots[slot as usize];
                if let Some(v) = verifier.as_mut() {
                    v.complete(slot, &op, result.is_ok());
                }
                match result {
                    Ok(()) => stats.dir[op.dir as usize].record(t.saturating_sub(start), 1, u64::from(op.len)),
                    // Retried with its original issue time, so the retries count in its latency.
                    Err(_) if tries[slot as usize] < max_retries => {
                        tries[slot as usize] += 1;
                        stats.errors.retried += 1;
                        retry.push(slot);
                        return;
                    }
                    Err(e) => {
                        stats.errors.count(op.dir, e, 1);
                        if first_error.is_none() {
                            first_error = Some(FailedIo { error: e, dir: op.dir, offset: op.offset, len: op.len });
                        }
                        error_seen = true;
                    }
                }
                tries[slot as usize] = 0;
                free.push(slot);
            })?;
            in_flight -= reaped;
            while let Some(&slot) = self.retry.last() {
                let op = self.slots[slot as usize].1;
                if let Some(v) = &mut self.verifier {
                    v.prepare(slot, &op, self.engine.slot_buf(slot));
                }
                if self.engine.queue(slot, &op)? == Queued::Busy {
                    if let Some(v) = &mut self.verifier {
                        v.cancel(slot);
                    }
                    break;
                }
                self.retry.pop();
                in_flight += 1;
                to_submit = true;
            }
            if let Some(t) = done_at {
                last_completion = t;
            }
            self.check_reads();
            if error_seen && stop_on_error {
                shared.request_stop();
            }
            if reaped == 0 && in_flight > 0 {
                if self.pacer.is_none() {
                    self.engine.wait()?;
                } else {
                    self.engine.progress()?;
                }
            } else if to_submit {
                self.engine.submit()?;
            }
            to_submit = false;
            self.progress = (measure_start, last_completion);
        }
        let summary = self.summary(stop, measure_start, last_completion, 0, first_error);
        if plan.verify.as_ref().is_some_and(|v| v.pass) {
            self.verify_pass(qd)?;
        }
        Ok(summary)
    }

    /// Checks the reads that completed in the last poll against what their blocks must hold.
    fn check_reads(&mut self) {
        let Some(v) = self.verifier.as_mut().filter(|v| v.pending() > 0) else { return };
        let t = self.clock.raw();
        for i in 0..v.pending() {
            let slot = v.pending_slot(i);
            let op = self.slots[slot as usize].1;
            v.check_read(&op, self.engine.slot_buf(slot));
        }
        v.clear_pending();
        v.cost_ns += self.clock.delta_as_nanos(t, self.clock.raw());
    }

    /// Re-reads every unit this worker's slice is known to hold and checks it, `qd` at a time.
    fn verify_pass(&mut self, qd: u32) -> Result<(), EngineError> {
        let Some(v) = self.verifier.as_mut() else { return Ok(()) };
        let unit = v.table.unit_bytes() as u32;
        let todo: Vec<u64> = v.table.written().map(|(off, _)| off).collect();
        let mut next = 0;
        let mut in_flight = 0u32;
        let mut free: Vec<u32> = (0..qd).collect();
        while next < todo.len() || in_flight > 0 {
            while next < todo.len() {
                let Some(&slot) = free.last() else { break };
                let op = IoOp { dir: Direction::Read, offset: todo[next], len: unit };
                if self.engine.queue(slot, &op)? == Queued::Busy {
                    break;
                }
                free.pop();
                self.slots[slot as usize].1 = op;
                next += 1;
                in_flight += 1;
            }
            self.engine.submit()?;
            let slots = &self.slots;
            let v = self.verifier.as_mut().expect("checked above");
            let mut failed = 0u64;
            let reaped = self.engine.poll(qd, |slot, result| {
                v.complete(slot, &slots[slot as usize].1, result.is_ok());
                failed += u64::from(result.is_err());
                free.push(slot);
            })?;
            v.read_errors += failed;
            in_flight -= reaped;
            self.check_reads();
            if reaped == 0 && in_flight > 0 {
                self.engine.wait()?;
            }
        }
        Ok(())
    }

    fn summary(
        &self,
        stop: Option<(StopReason, u64)>,
        measure_start: u64,
        last_completion: u64,
        lost: u64,
        first_error: Option<FailedIo>,
    ) -> WorkerSummary {
        let (reason, stopped_at) = stop.unwrap_or((StopReason::Requested, last_completion));
        let end = last_completion.max(stopped_at);
        WorkerSummary {
            measured_ns: end.saturating_sub(measure_start),
            stop_reason: reason,
            lost_in_flight: lost,
            first_error,
        }
    }
}

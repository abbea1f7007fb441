//! The worker's loop, as a handful of named steps: watch for the stop, cut an interval at a
//! boundary, refill free slots, reap completions, re-queue retries, check reads, kick the engine.
//!
//! Everything here runs per I/O or per pass, so nothing here allocates, locks or formats; the
//! channel is touched only at interval boundaries. Time is nanoseconds since the run's epoch (the
//! moment the coordinator opened the gate), read from the shared clock (the TSC where invariant):
//! once per pass for decisions (stop, boundaries, pacing), and once per I/O for its stamps — its
//! issue time just before it is handed to the engine (`Engine::queue`), its completion time in its
//! own completion callback. No I/O's latency comes from another I/O's stamp.
//!
//! I/O stamps are kept as raw clock readings and a latency is scaled to nanoseconds from their
//! difference when it is booked: between a completion and its slot's next hand-over (the path a
//! QD1 round trip waits on) there is then nothing but two clock reads, no scaling. Decisions taken
//! on a completion stamp there (the interval boundary, the deadline) compare raw readings with
//! the boundary's raw equivalent, worked out once per boundary (see [`Timeline`]).

use super::iolog::{FLAG_SLAT, IoLog, IoRecord};
use super::latency::{DepthSearch, Step};
use super::{
    BusyTime, FailedIo, IntervalReport, Links, Phase, Report, Shared, StopReason, VerifyReads, WorkerPlan,
    WorkerSummary,
};
use crate::batches::BatchCounts;
use crate::clock::Clock;
use crate::cpu::CpuProbe;
use crate::engine::{Engine, EngineError, EngineInfo, Queued, Sends};
use crate::io::{Direction, IoError, IoOp, IoPrio};
use crate::options::{LatencyMode, OnError, Verdict};
use crate::stats::{HistTally, PrioStats, Stats};
use crate::verify::{GenTable, Verifier};
use crate::workload::contents::{self, Filler};
use crate::workload::flow::FlowMember;
use crate::workload::rate::{Gate, Pacer};
use crate::workload::{Generator, RwMode};

/// The plan's limits, in nanoseconds of the run's timeline.
struct Limits {
    interval_ns: u64,
    ramp_ns: u64,
    runtime_ns: Option<u64>,
    drain_ns: u64,
    /// This worker's share of `--ios`.
    io_limit: Option<u64>,
    /// Which failed I/Os stop the worker (decided only when one fails).
    on_error: OnError,
    max_retries: u32,
    qd: u32,
    verify_pass: bool,
}

/// What one pass of the loop left to do. Kept to a byte: a pass returns it per I/O at QD1, and a
/// payload here costs copies on that path.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Pass {
    /// Still issuing or draining.
    Busy,
    /// Stopped and nothing in flight: `end` comes next.
    Drained,
    /// The drain timed out with I/Os in flight: `give_up` comes next (and the engine must be leaked).
    GaveUp,
}

/// The loop's state, built before the start gate.
pub(super) struct Loop<'c, E: Engine> {
    engine: E,
    generator: Generator,
    clock: &'c Clock,
    /// Raw clock reading of time zero (the gate's opening), and the scale to go back and forth.
    timeline: Timeline,
    limits: Limits,
    /// Issue stamp (a raw clock reading) and operation of each slot.
    slots: Vec<(u64, IoOp)>,
    free: Vec<u32>,
    stats: Box<Stats>,
    /// The histogram counts of each direction's total latencies since the last hand-over, moved
    /// into `stats` before it is sent (see `HistTally`).
    tallies: [HistTally; Direction::COUNT],
    spare: Option<Box<Stats>>,
    pacer: Option<Pacer>,
    verifier: Option<Verifier>,
    /// Keeps write buffers in the `--buffer-*` pattern, stamped per write (not with `--verify`,
    /// whose blocks the verifier fills).
    filler: Option<Filler>,
    /// Retries so far of each slot's I/O, and slots whose failed I/O waits to be queued again.
    tries: Vec<u32>,
    retry: Vec<u32>,
    /// An operation the engine or the verifier could not take yet; it goes out first next time.
    pending: Option<IoOp>,
    measuring: bool,
    measure_start: u64,
    /// The epochs of fio's per-I/O log lines: the end of the ramp, and where the measurement
    /// restarted (the latency target's last window; else the same), as fio resets `td->epoch`.
    log_epochs: [u64; 2],
    deadline: Option<u64>,
    /// The next interval boundary, and where the current interval began.
    next_cut: u64,
    /// The raw clock readings from which the clock is at or past `next_cut` and `deadline`
    /// (`u64::MAX` for none), for decisions on raw completion stamps.
    cut_raw: u64,
    deadline_raw: u64,
    cut_from: u64,
    issued_measured: u64,
    in_flight: u32,
    /// The most this lane may have in flight now: its slots, or, when its worker's lanes share one
    /// queue depth (`WorkerPlan::worker_qd`), what the others leave of it (`super::targets`).
    cap: u32,
    /// Whether `cap` is shared with other lanes: then every slot is refilled by the ordinary
    /// refill, so that a freed slot can go to the next lane (no refill inside completion handling).
    shares_qd: bool,
    to_submit: bool,
    stop: Option<(StopReason, u64)>,
    first_error: Option<FailedIo>,
    /// An I/O failed with an error the policy stops on.
    fatal: bool,
    /// The last completion's time (ns), and its raw stamp (scaled in `pass`, once per poll).
    last_completion: u64,
    last_raw: u64,
    /// The thread's and the cores' CPU counters, read when measuring begins and ends.
    probe: CpuProbe,
    /// The engine's submit and reap counts when measuring began (fio's iodepth_submit/complete).
    batches_start: Option<BatchCounts>,
    /// Whether each I/O is stamped (`--latency off`: no; I/Os are counted, decisions are taken on
    /// the pass's own clock reading).
    stamp: bool,
    /// The index of the last measured interval sent.
    last_index: Option<u64>,
    /// The stamp of the last completion the previous pass handled, if it handled any: the next
    /// pass takes its decisions (stop, boundary, pacing) on it instead of reading the clock again,
    /// which saves a clock read per busy pass (at QD1, a third of them). I/O stamps are always read
    /// afresh.
    recent: Option<u64>,
    /// Idle passes left before the next one that reads the clock (see `coasting`).
    coast: u32,
    /// The generator's next operation, drawn ahead while waiting for a completion so that the
    /// refill inside completion handling has it ready. Every refill takes it first, so the
    /// sequence of operations is the generator's own.
    ahead: Option<IoOp>,
    /// Successful completions handled inside `poll_refill` (operation, raw issue and completion
    /// stamps), booked into the histograms once it returns: between a completion's stamp and its
    /// successor's hand-over there is then only the successor's own stamp, and the scaling and
    /// booking run while the device works. The third stamp is the I/O's sent stamp (split only).
    done: Vec<(IoOp, u64, u64, u64)>,
    /// Spin-loop hints between a poll that found nothing and the next, with more than one I/O in
    /// flight (the engine's `idle_poll_gap_ns`, in this CPU's hints).
    gap_spins: u32,
    /// Paced on an interrupt-driven engine: the worker sleeps while nothing is due (see
    /// `idle_for`), with a timer slack of 1 ns so that the kernel wakes it when asked (the default
    /// 50 µs would be added to the latency of every paced I/O, which counts from its due time).
    sleeps: bool,
    /// The engine's spare write buffers (`Engine::write_spares`), and how many are prepared and
    /// free for writes handed over from completion handling.
    spares: u32,
    spares_ready: u32,
    /// Whether busy time is kept (`Engine::accounts_busy`, and latencies stamped), and the raw
    /// clock ticks and polls of the busy polls measured so far (see `BusyTime`).
    busy_on: bool,
    busy_ticks: u64,
    busy_polls: u64,
    /// perf -m's accounting (see `BusyTime`): the raw start of the last measured poll, and the raw
    /// ticks booked busy and idle from one poll's start to the next.
    perf_last: Option<u64>,
    perf_busy_ticks: u64,
    perf_idle_ticks: u64,
    /// With `--latency split`: when the engine sends what it takes (`None`: one latency per I/O).
    split: Option<Sends>,
    /// Each slot's sent stamp (raw): the return of the call that sent its I/O (split only).
    sent: Vec<u64>,
    /// The plain closed loop: stamped (one latency per I/O), no pacing, verification, buffer
    /// filling or retries. Its refills and completions take the short paths (`refill_plain`,
    /// `reap_plain`), which do what the general ones do in that case without their checks.
    plain: bool,
    /// Slots queued and not yet stamped as sent, in queue order (split only).
    unsent: Vec<u32>,
    /// fio's flow control: this worker's count in the flow it shares (`None`: no flow, and the
    /// loop pays nothing for it but a branch per pass).
    flow: Option<FlowMember>,
    /// Held back by the flow at the last refill: with `flow_sleep`, nothing more goes out until
    /// the I/Os in flight are back and the sleep is over (fio's quiesce and usleep); without, the
    /// next pass checks again.
    flow_held: bool,
    /// fio's latency target: the depth search, which sets `cap` (see `steer`). Such a lane never
    /// takes the plain or inline paths, so that a lane without it pays nothing per I/O for it.
    search: Option<DepthSearch>,
    /// The search lowered the depth (or began its last window): nothing is issued until every
    /// I/O in flight has completed, then a new window starts (fio's `io_u_quiesce`).
    draining: bool,
    /// The search's last window began and the measurement restarted with it (once).
    restarted: bool,
    /// fio's per-I/O logs: a record of each measured I/O (`None`: no such log, and the loop pays
    /// a predictable branch per pass and per completion for it).
    io_log: Option<IoLog>,
    /// The records' flags: `FLAG_SLAT` where the engine sends apart from queuing (split).
    log_flags: u8,
}

/// Idle passes between clock reads. An idle pass (the last one reaped nothing, every slot is in
/// flight, no pacing, no stop) has no decision to take but the stop and the interval boundary,
/// which can wait eight passes (a few hundred nanoseconds) without changing any figure; skipping
/// the clock read there shortens the polling pass, and with it the time a completion waits to be
/// noticed. I/O stamps are never skipped.
const COAST_PASSES: u32 = 7;

impl<'c, E: Engine> Loop<'c, E> {
    pub(super) fn new(engine: E, plan: &WorkerPlan, clock: &'c Clock) -> Self {
        let qd = plan.queue_depth as usize;
        let idle = IoOp { dir: Direction::Read, offset: 0, len: 0, prio: IoPrio::NONE };
        // Verified workers own disjoint slices, so no unit is written by two workers at once.
        let mut generator = Generator::with_slices(&plan.spec, plan.slice, plan.slices, plan.verify.is_some());
        if let Some(bytes) = plan.byte_limit {
            generator.set_byte_budget(bytes);
        }
        let verifier = plan.verify.as_ref().map(|v| {
            let (start, end) = generator.range();
            let mut table = GenTable::new(start, end - start, v.unit);
            if let Some(known) = &v.known {
                table.absorb(known);
            }
            Verifier::new(table, v.seed, plan.spec.buffers, qd)
        });
        let seed = plan.spec.seed ^ (plan.index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let filler = (plan.spec.writes() && verifier.is_none())
            .then(|| {
                Filler::new(
                    plan.spec.buffers,
                    qd,
                    plan.spec.max_bs() as usize,
                    seed ^ contents::run_nonce(),
                    plan.thread,
                )
            })
            .map(|f| match &plan.spec.buffer_pattern {
                Some(p) => f.with_pattern(p),
                None => f,
            });
        // trimwrite's order (each trim, then its write) is fixed: no direction gives way.
        let switch = (plan.spec.rw != RwMode::TrimWrite).then_some(&plan.spec.mix);
        let limits = Limits {
            interval_ns: plan.interval.as_nanos().max(1) as u64,
            ramp_ns: plan.ramp.as_nanos() as u64,
            runtime_ns: plan.runtime.map(|r| r.as_nanos() as u64),
            drain_ns: plan.drain_timeout.as_nanos() as u64,
            io_limit: plan.io_limit,
            on_error: plan.on_error,
            max_retries: match plan.on_error {
                OnError::Retry(n) => n,
                _ => 0,
            },
            qd: plan.queue_depth,
            verify_pass: plan.verify.as_ref().is_some_and(|v| v.pass),
        };
        let gap_spins = spins_for(engine.idle_poll_gap_ns());
        let think_depth = plan.queue_depth.min(engine.max_in_flight());
        let pacer = Pacer::new(plan.rate_iops, &plan.spec.pacing, switch, seed)
            .map(|p| p.shared(plan.rate_share).think_depth(think_depth));
        let sleeps = engine.interrupt_driven() && pacer.as_ref().is_some_and(Pacer::is_open_loop);
        if sleeps {
            // A refusal leaves the default slack: later wake-ups, counted in latency as they come.
            let _ = nix::sys::prctl::set_timerslack(1);
        }
        let spares = if filler.is_some() { engine.write_spares() } else { 0 };
        let split = (plan.latency == LatencyMode::Split).then(|| engine.sends());
        let plain = pacer.is_none()
            && verifier.is_none()
            && filler.is_none()
            && split.is_none()
            && plan.latency.stamps()
            && limits.max_retries == 0
            && plan.flow.is_none()
            && plan.latency_target.is_none()
            && !generator.bounded();
        let search = plan.latency_target.map(|t| DepthSearch::new(t, plan.queue_depth, 0));
        let mut state = Loop {
            plain,
            tallies: Direction::ALL.map(|d| if plan.spec.mix.issues(d) { HistTally::new() } else { HistTally::none() }),
            spares,
            spares_ready: 0,
            split,
            sent: vec![0; if split.is_some() { qd } else { 0 }],
            unsent: Vec::with_capacity(if split.is_some() { qd } else { 0 }),
            gap_spins,
            // `--latency off` reads no clock at a poll's start: no busy time either.
            busy_on: engine.accounts_busy() && plan.latency.stamps(),
            busy_ticks: 0,
            busy_polls: 0,
            perf_last: None,
            perf_busy_ticks: 0,
            perf_idle_ticks: 0,
            engine,
            generator,
            verifier,
            filler,
            clock,
            timeline: Timeline::new(clock),
            limits,
            slots: vec![(0, idle); qd],
            free: (0..plan.queue_depth).rev().collect(),
            stats: Box::new(prio_stats(Stats::new(split.is_some()), plan)),
            spare: Some(Box::new(prio_stats(Stats::new(split.is_some()), plan))),
            pacer,
            sleeps,
            tries: vec![0; qd],
            retry: Vec::with_capacity(qd),
            pending: None,
            measuring: false,
            measure_start: 0,
            log_epochs: [0; 2],
            deadline: None,
            next_cut: 0,
            cut_raw: 0,
            deadline_raw: u64::MAX,
            cut_from: 0,
            issued_measured: 0,
            in_flight: 0,
            cap: search.as_ref().map_or(plan.queue_depth, DepthSearch::depth),
            search,
            draining: false,
            restarted: false,
            shares_qd: plan.worker_qd.is_some(),
            to_submit: false,
            stop: None,
            first_error: None,
            fatal: false,
            last_completion: 0,
            last_raw: 0,
            probe: CpuProbe::new(),
            batches_start: None,
            stamp: plan.latency.stamps(),
            last_index: None,
            recent: None,
            coast: 0,
            ahead: None,
            done: Vec::with_capacity(qd),
            flow: plan.flow.clone().map(FlowMember::new),
            flow_held: false,
            io_log: None,
            log_flags: match split {
                Some(Sends::OnQueue | Sends::OnSubmit | Sends::OnPoll) => FLAG_SLAT,
                Some(Sends::Synchronous) | None => 0,
            },
        };
        state.prepare_spares();
        state
    }

    /// perf -m's accounting, as perf's work loop keeps it: the span since the previous poll's start
    /// is busy when this poll reaped, idle when it did not (the first measured poll only starts it).
    #[inline]
    fn perf_tally(&mut self, poll_start: u64, reaped: bool) {
        if let Some(last) = self.perf_last {
            let span = poll_start.saturating_sub(last);
            if reaped {
                self.perf_busy_ticks += span;
            } else {
                self.perf_idle_ticks += span;
            }
        }
        self.perf_last = Some(poll_start);
    }

    /// Prepares the spare write buffers that writes handed over from completion handling left
    /// behind (all of them, the first time): the pattern restored where a read had landed, and a
    /// write's stamp, each. Runs after the poll, while the device works.
    #[inline(never)]
    fn prepare_spares(&mut self) {
        if let Some(f) = &mut self.filler {
            self.engine.prepare_spares(|buf, dirty| f.prepare(buf, dirty));
            self.spares_ready = self.spares;
        }
    }

    /// Keeps fio's per-I/O log (`WorkerPlan::io_log`), its first buffer allocated now, before the
    /// gate; emptied buffers come back on `links.log_pool`. Only stamped I/Os are logged.
    pub(super) fn keep_io_log(&mut self, links: &Links) {
        if self.stamp {
            self.io_log = Some(IoLog::new(links.log_pool.clone()));
        }
    }

    /// Hands the log's buffer to the coordinator (full, or the last), taking an emptied one.
    #[cold]
    #[inline(never)]
    pub(super) fn hand_over_log(&mut self, links: &Links, worker: usize) {
        let Some(l) = self.io_log.as_mut() else { return };
        if l.is_empty() {
            return;
        }
        let records = l.take_full();
        let _ = links.reports.send(Report::IoLog { worker, records });
        links.coordinator.unpark();
    }

    /// I/Os in flight now.
    pub(super) fn in_flight(&self) -> u32 {
        self.in_flight
    }

    /// Sets the most this lane may have in flight (at most its slots), for lanes that share their
    /// worker's queue depth.
    pub(super) fn set_cap(&mut self, cap: u32) {
        self.cap = cap.min(self.limits.qd);
    }

    /// Notes that `slot`'s I/O was handed to the engine, for its sent stamp (split only): taken
    /// now if the engine sends in `queue`, else by [`stamp_sent`](Self::stamp_sent) after the call
    /// that sends.
    #[inline(always)]
    fn note_queued(&mut self, slot: u32) {
        match self.split {
            None | Some(Sends::Synchronous) => {}
            Some(Sends::OnQueue) => self.sent[slot as usize] = self.clock.raw(),
            Some(Sends::OnSubmit | Sends::OnPoll) => self.unsent.push(slot),
        }
    }

    /// After a call that sends: one clock read stamps every I/O it sent (fio's
    /// `fio_ioring_queued`, one `issue_time` for the batch); what the engine still holds back
    /// (the most recently queued) waits for the next.
    #[inline]
    fn stamp_sent(&mut self) {
        if self.unsent.is_empty() {
            return;
        }
        let held = self.engine.unsent() as usize;
        let n = self.unsent.len().saturating_sub(held);
        if n == 0 {
            return;
        }
        let now = self.clock.raw();
        for &slot in &self.unsent[..n] {
            self.sent[slot as usize] = now;
        }
        self.unsent.drain(..n);
    }

    /// What a completed slot's I/O took, from its raw stamps: its total and, split, fio's slat
    /// (none for a synchronous engine) and clat.
    #[inline(always)]
    fn latencies(clock: &Clock, split: Option<Sends>, start: u64, sent: u64, end: u64) -> Latency {
        let total = clock.delta_as_nanos(start, end);
        let parts = match split {
            None => None,
            Some(Sends::Synchronous) => Some((None, total)),
            Some(_) => {
                // clat is the rest of the total, so that each I/O's lat is exactly its slat and
                // clat added up (two scaled deltas could differ from the whole by a nanosecond).
                let slat = clock.delta_as_nanos(start, sent.clamp(start, end)).min(total);
                Some((Some(slat), total - slat))
            }
        };
        Latency { total, parts }
    }

    pub(super) fn engine_info(&self) -> EngineInfo {
        self.engine.info()
    }

    pub(super) fn lane_facts(&self) -> Vec<(String, String)> {
        self.engine.lane_facts()
    }

    pub(super) fn take_verifier(&mut self) -> Option<Verifier> {
        self.verifier.take()
    }

    #[inline]
    fn now_ns(&self) -> u64 {
        self.timeline.ns(self.clock, self.clock.raw())
    }

    /// Sets the next interval boundary (ns), and its raw equivalent.
    fn set_next_cut(&mut self, ns: u64) {
        self.next_cut = ns;
        self.cut_raw = self.timeline.raw_at(self.clock, ns);
    }

    /// Runs from the gate to the end: the closed (or paced) loop, the drain, the final interval and,
    /// with `--verify`, the re-read of everything written.
    pub(super) fn run(
        &mut self,
        plan: &WorkerPlan,
        shared: &Shared,
        links: &Links,
        epoch: u64,
    ) -> Result<WorkerSummary, EngineError> {
        self.begin(epoch);
        loop {
            match self.pass(plan, shared, links)? {
                Pass::Busy => {}
                Pass::Drained => return self.end(plan, links),
                Pass::GaveUp => return Ok(self.give_up(plan, links)),
            }
        }
    }

    /// Sets time zero and the first boundary.
    pub(super) fn begin(&mut self, epoch: u64) {
        self.timeline.epoch = epoch;
        if self.limits.ramp_ns == 0 {
            self.begin_measuring(0);
        } else {
            self.set_next_cut(self.limits.interval_ns.min(self.limits.ramp_ns));
        }
    }

    /// One pass of the loop: decide, refill, reap, kick. A worker driving several targets runs the
    /// passes of its per-target loops in turn (`super::targets`).
    #[inline(always)]
    pub(super) fn pass(&mut self, plan: &WorkerPlan, shared: &Shared, links: &Links) -> Result<Pass, EngineError> {
        let recent = self.recent.take();
        let coasting = recent.is_none() && self.coast > 0;
        if coasting {
            self.coast -= 1;
        } else {
            let now = match recent {
                Some(t) => t,
                None => self.now_ns(),
            };
            if self.stop.is_none() {
                self.watch_stop(now, shared);
            }
            match self.stop {
                None => {
                    if now >= self.next_cut {
                        self.cut_interval(now, links, plan.index);
                    }
                    if self.search.is_some() {
                        self.steer(now, links, plan.index);
                    }
                    self.refill(now)?;
                }
                Some((reason, _)) if self.in_flight == 0 => {
                    // Out of I/Os, the worker still thinks if its last one made up a count, as fio.
                    let last = match (reason, &mut self.pacer) {
                        (StopReason::IoLimit, Some(p)) => p.think_last(now),
                        _ => None,
                    };
                    match last {
                        None => return Ok(Pass::Drained),
                        Some(false) => {}
                        Some(true) => {
                            // The run ends with the stall, as fio's job runtime does.
                            self.stop = Some((reason, now));
                            return Ok(Pass::Drained);
                        }
                    }
                }
                Some((_, at)) => {
                    if now.saturating_sub(at) > self.limits.drain_ns {
                        // The device did not answer in time; the caller leaks the engine (see `run`).
                        return Ok(Pass::GaveUp);
                    }
                }
            }
        }
        // Room for every completion the poll may bring, so that recording never allocates.
        if let Some(l) = &self.io_log {
            if !l.has_room(self.limits.qd as usize) {
                self.hand_over_log(links, plan.index);
            }
        }
        // Busy time: the poll's start, read only where it is kept (one clock read per poll).
        let poll_start = if self.busy_on { self.clock.raw() } else { 0 };
        let (reaped, error_seen) =
            if self.engine.refills_inline() && self.inline_ok() { self.reap_refill(shared)? } else { self.reap()? };
        if self.busy_on && self.measuring {
            self.perf_tally(poll_start, reaped > 0);
        }
        if self.split == Some(Sends::OnPoll) {
            // The poll rang the doorbells (or flushed the socket) for everything queued before it
            // and inside it.
            self.stamp_sent();
        }
        if reaped > 0 {
            if self.busy_on && self.measuring {
                // To the end of the poll's booking: its callbacks, the refills queued from them,
                // and the latencies booked after it all count.
                self.busy_ticks += self.clock.raw().saturating_sub(poll_start);
                self.busy_polls += 1;
            }
            // Scaled once per poll, not per completion.
            self.last_completion = self.timeline.ns(self.clock, self.last_raw);
            self.recent = Some(self.last_completion);
            self.coast = 0;
        } else if !coasting && self.coast == 0 && self.coastable() {
            // Only a pass that took its decisions starts a coast: re-arming on the coast's last
            // pass would skip every decision (the deadline, a stop, the drain timeout, interval
            // boundaries) for as long as nothing completes.
            self.coast = COAST_PASSES;
        }
        self.requeue_retries()?;
        self.check_reads();
        if error_seen {
            self.fatal = true;
            shared.request_stop();
        }
        self.kick(reaped)?;
        Ok(Pass::Busy)
    }

    /// After a drain that timed out: the final interval, counting what is still in flight as lost.
    #[cold]
    pub(super) fn give_up(&mut self, plan: &WorkerPlan, links: &Links) -> WorkerSummary {
        self.finish(links, plan.index, u64::from(self.in_flight))
    }

    /// After the drain: the final interval and, with `--verify`, the re-read of everything written.
    pub(super) fn end(&mut self, plan: &WorkerPlan, links: &Links) -> Result<WorkerSummary, EngineError> {
        let mut summary = self.finish(links, plan.index, 0);
        if self.limits.verify_pass {
            summary.verify_reads = self.verify_pass()?;
        }
        Ok(summary)
    }

    /// Whether the passes after an idle one may skip their decisions: everything that could be
    /// issued is in flight, nothing is paced, and the run is not stopping (a stopping worker checks
    /// its drain timeout every pass).
    #[inline]
    fn coastable(&self) -> bool {
        self.free.is_empty()
            && self.pending.is_none()
            && self.pacer.is_none()
            && self.stop.is_none()
            && self.retry.is_empty()
    }

    /// Decides whether to stop issuing: asked to (a signal, an error elsewhere), out of time, or out
    /// of I/Os.
    #[inline]
    fn watch_stop(&mut self, now: u64, shared: &Shared) {
        let reason = if shared.stop_requested() {
            if self.fatal { StopReason::Error } else { StopReason::Requested }
        } else if self.deadline.is_some_and(|d| now >= d) {
            StopReason::Time
        } else if self.measuring && self.limits.io_limit.is_some_and(|l| self.issued_measured >= l)
            || self.generator.spent() && self.pending.is_none() && self.ahead.is_none()
        {
            StopReason::IoLimit
        } else {
            return;
        };
        self.stop = Some((reason, now));
    }

    /// At a boundary: hands the interval to the coordinator and sets the next boundary. Boundaries
    /// are on the common timeline (`interval` apart during the ramp, then `ramp + k * interval`), so
    /// every worker's interval k covers the same span of real time.
    #[inline(never)]
    fn cut_interval(&mut self, now: u64, links: &Links, worker: usize) {
        let (interval, ramp) = (self.limits.interval_ns, self.limits.ramp_ns);
        if self.measuring {
            let crossed = (now - ramp) / interval;
            self.last_index = Some(crossed - 1);
            self.send(links, worker, Phase::Measure, crossed - 1, now, false);
            self.set_next_cut(ramp + (crossed + 1) * interval);
        } else if now >= ramp {
            self.send(links, worker, Phase::Ramp, ramp.div_ceil(interval), now, false);
            self.begin_measuring(now);
        } else {
            self.send(links, worker, Phase::Ramp, now / interval, now, false);
            self.set_next_cut(((now / interval + 1) * interval).min(ramp));
        }
    }

    fn begin_measuring(&mut self, now: u64) {
        if let Some(s) = &mut self.search {
            // fio's reset of its statistics at the ramp's end restarts the search too.
            self.cap = s.reset(now);
            self.draining = false;
        }
        self.measuring = true;
        self.measure_start = now;
        self.log_epochs = [now; 2];
        self.cut_from = now;
        self.issued_measured = 0;
        // On the common timeline, like the interval boundaries: every worker stops at the same
        // moment, and the last interval ends on a boundary.
        self.deadline = self.limits.runtime_ns.map(|r| self.limits.ramp_ns + r);
        self.deadline_raw = self.deadline.map_or(u64::MAX, |d| self.timeline.raw_at(self.clock, d));
        self.set_next_cut(self.limits.ramp_ns + self.limits.interval_ns);
        if let Some(p) = &mut self.pacer {
            p.restart(now);
        }
        self.probe.start(now);
        self.batches_start = self.engine.batches();
    }

    /// Hands the statistics of `(cut_from, now]` to the coordinator and carries on with an emptied
    /// set.
    ///
    /// The coordinator hands each set back as soon as it has merged it, so an emptied one is
    /// normally waiting; blocking for it happens only when the coordinator is a whole interval
    /// behind, and is preferred to a series whose intervals silently change length.
    fn send(&mut self, links: &Links, worker: usize, phase: Phase, index: u64, now: u64, last: bool) {
        self.settle_tallies();
        let spare = match self.spare.take() {
            Some(s) => Some(s),
            None => links.spares.recv().ok(),
        };
        match spare {
            Some(spare) => {
                let stats = std::mem::replace(&mut self.stats, spare);
                let report = IntervalReport { worker, phase, index, from_ns: self.cut_from, to_ns: now, last, stats };
                let _ = links.reports.send(Report::Interval(report));
            }
            // The coordinator is gone; nobody will read these numbers.
            None => self.stats.reset(),
        }
        self.cut_from = now;
    }

    /// fio's latency target, once per pass: ends a drain once nothing is in flight (and starts
    /// the next window), and judges the window once it has lasted (not during the ramp, as fio).
    #[inline(never)]
    fn steer(&mut self, now: u64, links: &Links, worker: usize) {
        let Some(s) = &mut self.search else { return };
        if self.draining {
            if self.in_flight == 0 {
                self.draining = false;
                s.new_cycle(now);
                self.cap = s.depth();
                if s.final_run() && !self.restarted && self.measuring {
                    self.restart_measuring(now, links, worker);
                }
            }
            return;
        }
        if !self.measuring {
            return;
        }
        match s.check(now) {
            Step::Stay | Step::Fatal => {}
            Step::Depth(qd) => self.cap = qd,
            Step::Drain(_) => {
                self.cap = 0;
                self.draining = true;
            }
            Step::Done => {
                self.cap = 0;
                self.stop = Some((StopReason::LatencyTarget, now));
            }
        }
    }

    /// fio's start of the search's last window (`lat_target_success` with `latency_run=0`):
    /// after the drain, the job's statistics, measured span, CPU and batch counts start again
    /// (`reset_all_stats`, `reset_io_stats`), so the figures are the settled depth's. What the
    /// worker already sent is dropped by the coordinator. The I/O count towards the job's size goes
    /// on, as fio's does; the runtime is the run's timeline and goes on too, where fio's restarts.
    #[cold]
    #[inline(never)]
    fn restart_measuring(&mut self, now: u64, links: &Links, worker: usize) {
        self.restarted = true;
        self.settle_tallies();
        let unsent_ios = self.stats.ios() + self.stats.errors.total();
        self.stats.reset();
        let _ = links.reports.send(Report::Restart { worker, unsent_ios });
        self.cut_from = now;
        self.measure_start = now;
        self.log_epochs[1] = now;
        self.probe.start(now);
        self.batches_start = self.engine.batches();
        self.busy_ticks = 0;
        self.busy_polls = 0;
        self.perf_last = None;
        self.perf_busy_ticks = 0;
        self.perf_idle_ticks = 0;
    }

    /// Fills every free slot: one generator call, one clock read and one queue call per I/O.
    #[inline]
    fn refill(&mut self, now: u64) -> Result<(), EngineError> {
        if self.plain && self.pending.is_none() {
            return self.refill_plain();
        }
        let mut cap = self.cap;
        if let Some(f) = &self.flow {
            if self.flow_held && !f.sleep().is_zero() {
                return Ok(());
            }
            let budget = f.budget();
            self.flow_held = budget == 0;
            if self.flow_held {
                return Ok(());
            }
            cap = cap.min(self.in_flight.saturating_add(u32::try_from(budget).unwrap_or(u32::MAX)));
        }
        let mut staged = 0u32;
        while let Some(&slot) = self.free.last() {
            if self.in_flight + staged >= cap
                || self.measuring && self.limits.io_limit.is_some_and(|l| self.issued_measured >= l)
            {
                break;
            }
            let mut op = match self.pending.take().or_else(|| self.ahead.take()) {
                Some(op) => op,
                // A job that moved its bytes draws nothing more (fio's io_bytes_exceeded).
                None if self.generator.spent() => break,
                None => self.generator.next_op(),
            };
            let due = match self.pacer.as_mut().map(|p| p.gate(op.dir, now, self.in_flight + staged)) {
                None | Some(Gate::Go(None)) => None,
                Some(Gate::Go(Some(d))) => Some(d),
                Some(Gate::Switch(_)) if self.generator.spent() => {
                    self.pending = Some(op);
                    break;
                }
                Some(Gate::Switch(dir)) => {
                    // The held I/O waits for its direction's turn; one of the other goes first (if
                    // the verifier or the engine cannot take that one yet, it is dropped).
                    self.pending = Some(std::mem::replace(&mut op, self.generator.next_op_in(dir)));
                    self.pacer.as_ref().and_then(|p| p.due_ns(dir))
                }
                Some(Gate::Wait) => {
                    self.pending = Some(op);
                    break;
                }
            };
            if let Some(v) = &mut self.verifier {
                // Never two overlapping I/Os in flight: the op waits for the other's end.
                if v.overlaps(&op) {
                    self.pending.get_or_insert(op);
                    break;
                }
                let t = self.clock.raw();
                v.prepare(slot, &op, self.engine.slot_buf(slot));
                v.cost_ns += self.clock.delta_as_nanos(t, self.clock.raw());
            } else if let Some(f) = &mut self.filler {
                match op.dir {
                    Direction::Write => f.fill(slot, op.len, self.engine.slot_buf(slot)),
                    Direction::Read => f.read_into(slot),
                    // No data leaves the buffer (a trim's range list is the engine's own).
                    Direction::Trim | Direction::WriteZeroes | Direction::Flush => {}
                }
            }
            // This I/O's own issue stamp, just before the engine takes it; a paced I/O counts from
            // when it was due (no coordinated omission).
            let issued = match due {
                _ if !self.stamp => 0,
                Some(d) => self.timeline.raw_at(self.clock, d),
                None => self.clock.raw(),
            };
            match self.engine.queue(slot, &op)? {
                Queued::Ok => {
                    self.free.pop();
                    self.slots[slot as usize] = (issued, op);
                    if self.split.is_some() {
                        self.note_queued(slot);
                    }
                    staged += 1;
                    self.issued_measured += u64::from(self.measuring);
                    if let Some(p) = &mut self.pacer {
                        p.issued(op.dir, op.len);
                    }
                }
                Queued::Busy => {
                    if let Some(v) = &mut self.verifier {
                        v.cancel(slot);
                    }
                    self.pending.get_or_insert(op);
                    break;
                }
            }
        }
        if let Some(f) = &mut self.flow {
            f.issued(u64::from(staged));
        }
        // Submitted after the reap, together with a wait when nothing is ready: one syscall per
        // round trip instead of two (fio's submit-and-getevents).
        self.in_flight += staged;
        self.to_submit |= staged > 0;
        Ok(())
    }

    /// [`refill`](Self::refill) in the plain closed loop with nothing held back: as many I/Os as
    /// the lane's cap, its free slots and the I/O limit allow, each drawn (or taken from `ahead`),
    /// stamped just before the engine takes it and queued.
    #[inline]
    fn refill_plain(&mut self) -> Result<(), EngineError> {
        let mut room = self.cap.saturating_sub(self.in_flight).min(self.free.len() as u32);
        if let (true, Some(limit)) = (self.measuring, self.limits.io_limit) {
            room = room.min(limit.saturating_sub(self.issued_measured).min(u64::from(u32::MAX)) as u32);
        }
        let mut staged = 0u32;
        while staged < room {
            let slot = self.free[self.free.len() - 1];
            let op = match self.ahead.take() {
                Some(op) => op,
                None => self.generator.next_op(),
            };
            // This I/O's own issue stamp, just before the engine takes it.
            let issued = self.clock.raw();
            match self.engine.queue(slot, &op)? {
                Queued::Ok => {
                    self.free.pop();
                    self.slots[slot as usize] = (issued, op);
                    staged += 1;
                }
                Queued::Busy => {
                    self.pending = Some(op);
                    break;
                }
            }
        }
        self.issued_measured += if self.measuring { u64::from(staged) } else { 0 };
        self.in_flight += staged;
        self.to_submit |= staged > 0;
        Ok(())
    }

    /// [`reap`](Self::reap) in the plain closed loop: each completion stamped as it is handled
    /// and its latency booked, or its error counted (no retries in this loop).
    #[inline]
    fn reap_plain(&mut self) -> Result<(u32, bool), EngineError> {
        let (clock, measuring) = (self.clock, self.measuring);
        let on_error = &self.limits.on_error;
        let Loop { slots, free, stats, tallies, tries, retry, first_error, last_raw, io_log, .. } = self;
        let mut error_seen = false;
        let reaped = self.engine.poll(self.limits.qd, |slot, result| {
            let (start, op) = slots[slot as usize];
            let end = clock.raw();
            *last_raw = end;
            let total = clock.delta_as_nanos(start, end);
            match result {
                Ok(()) => {
                    stats.dir[op.dir as usize].record_tallied(total, u64::from(op.len), &mut tallies[op.dir as usize]);
                    if let Some(p) = prio_of(stats, &op) {
                        p.record(total, None, u64::from(op.len));
                    }
                    if let Some(l) = io_log.as_mut() {
                        if measuring {
                            l.push(record(&op, start, start, end, 0));
                        }
                    }
                }
                Err(_) => {
                    let mut books =
                        Books { stats, tallies, tries, retry, first_error, max_retries: 0, stamp: true, on_error };
                    error_seen |= books.settle_failure(slot, &op, result);
                }
            }
            free.push(slot);
        })?;
        self.in_flight -= reaped;
        Ok((reaped, error_seen))
    }

    /// Reaps what has completed, stamping each completion as it is handled. Returns how many were
    /// reaped and whether an I/O failed for good.
    #[inline]
    fn reap(&mut self) -> Result<(u32, bool), EngineError> {
        if self.plain {
            return self.reap_plain();
        }
        let (clock, max_retries, stamp, split) = (self.clock, self.limits.max_retries, self.stamp, self.split);
        let (measuring, log_flags) = (self.measuring, self.log_flags);
        let on_error = &self.limits.on_error;
        let Loop {
            slots,
            free,
            stats,
            tallies,
            verifier,
            tries,
            retry,
            first_error,
            last_raw,
            sent,
            search,
            io_log,
            ..
        } = self;
        let mut error_seen = false;
        let mut drain = false;
        let reaped = self.engine.poll(self.limits.qd, |slot, mut result| {
            let (start, op) = slots[slot as usize];
            let (end, sent_at) = if stamp {
                let end = clock.raw();
                *last_raw = end;
                (end, if split.is_some() { sent[slot as usize] } else { start })
            } else {
                (0, 0)
            };
            let latency = if stamp { Self::latencies(clock, split, start, sent_at, end) } else { Latency::UNMEASURED };
            // Without a latency target, this one branch is all the search costs an I/O.
            if let Some(s) = search.as_mut() {
                if result.is_ok() {
                    match s.complete(latency.total) {
                        Step::Stay => {}
                        // fio's lat_fatal: the I/O itself fails.
                        Step::Fatal => result = Err(IoError::Errno { errno: libc::ETIMEDOUT }),
                        _ => drain = true,
                    }
                }
            }
            if let Some(v) = verifier.as_mut() {
                v.complete(slot, &op, result.is_ok());
            }
            let mut books = Books { stats, tallies, tries, retry, first_error, max_retries, stamp, on_error };
            match books.settle(slot, &op, latency, result) {
                Settled::Retry => return,
                Settled::Failed => error_seen = true,
                Settled::Done => {
                    // A log is kept only where I/Os are stamped (`keep_io_log`).
                    if let Some(l) = io_log.as_mut() {
                        if measuring {
                            l.push(record(&op, start, sent_at, end, log_flags));
                        }
                    }
                }
            }
            free.push(slot);
        })?;
        if !self.stamp && reaped > 0 {
            // One reading for the whole poll: the time its completions were seen by.
            self.last_raw = self.clock.raw();
        }
        if drain {
            // An I/O over the target with a percentile of 100 lowered the depth at once.
            self.cap = 0;
            self.draining = true;
        }
        self.in_flight -= reaped;
        Ok((reaped, error_seen))
    }

    /// Whether completed slots may be refilled from inside the completion handling: only the
    /// plain closed loop (no pacing or think time, no verification, nothing held back, not
    /// stopping), where the refill needs nothing but the generator and a clock read. Writes need a
    /// stamped buffer: they go this way only with an engine that keeps spare buffers the worker
    /// prepares ahead (`Engine::write_spares`), as the operation itself is drawn ahead.
    #[inline]
    fn inline_ok(&self) -> bool {
        !self.shares_qd
            && self.search.is_none()
            && !self.generator.bounded()
            && self.pacer.is_none()
            && self.flow.is_none()
            && self.verifier.is_none()
            && (self.filler.is_none() || self.spares > 0)
            && self.pending.is_none()
            && self.stop.is_none()
            // A doorbell per command rings inside the engine's own queuing of the refill, where no
            // stamp can follow it: split, those go the ordinary way.
            && self.split != Some(Sends::OnQueue)
    }

    /// [`reap`](Self::reap) for engines that queue from inside their completion handling: each
    /// completed slot gets its next I/O there and then (its own issue stamp read just before it is
    /// handed back), so that it goes out with the doorbell SPDK rings at the end of the same poll,
    /// as in SPDK perf's callback. A slot is left free for the pass's ordinary refill when the run
    /// is about to stop, at an interval boundary, or when its I/O failed.
    #[inline]
    fn reap_refill(&mut self, shared: &Shared) -> Result<(u32, bool), EngineError> {
        let (clock, max_retries, stamp) = (self.clock, self.limits.max_retries, self.stamp);
        let on_error = &self.limits.on_error;
        // Unstamped, the poll's decisions (boundary, deadline) go on one reading taken before it.
        let before = if stamp { 0 } else { clock.raw() };
        let measuring = self.measuring;
        let (cut_raw, deadline_raw) = (self.cut_raw, self.deadline_raw);
        let io_limit = if measuring { self.limits.io_limit.unwrap_or(u64::MAX) } else { u64::MAX };
        let Loop {
            slots,
            free,
            stats,
            tallies,
            tries,
            retry,
            first_error,
            last_raw,
            generator,
            issued_measured,
            ahead,
            done,
            filler,
            pending,
            spares_ready,
            sent,
            unsent,
            ..
        } = self;
        let split = self.split;
        // Refills sent by a later call wait for its stamp (the inline path never sends in `queue`).
        let track_sends = matches!(split, Some(Sends::OnSubmit | Sends::OnPoll));
        let mut error_seen = false;
        let (reaped, refilled) = self.engine.poll_refill(self.limits.qd, |slot, result| {
            let end = if stamp { clock.raw() } else { before };
            *last_raw = end;
            let (start, op) = slots[slot as usize];
            let sent_at = if split.is_some() { sent[slot as usize] } else { 0 };
            if result.is_ok() {
                // Scaled and booked once the poll is over (see `done`).
                done.push((op, start, sent_at, end));
                tries[slot as usize] = 0;
            } else {
                let mut books = Books { stats, tallies, tries, retry, first_error, max_retries, stamp, on_error };
                match books.settle(slot, &op, Self::latencies(clock, split, start, sent_at, end), result) {
                    Settled::Retry => return None,
                    Settled::Failed => error_seen = true,
                    Settled::Done => {}
                }
            }
            if error_seen
                || end >= cut_raw
                || end >= deadline_raw
                || *issued_measured >= io_limit
                || pending.is_some()
                || shared.stop_requested()
            {
                free.push(slot);
                return None;
            }
            let next = match ahead.take() {
                Some(op) => op,
                None => generator.next_op(),
            };
            if let Some(f) = filler.as_mut() {
                match next.dir {
                    // Out in a spare prepared ahead; without one left, the ordinary refill fills it.
                    Direction::Write if *spares_ready == 0 => {
                        *pending = Some(next);
                        free.push(slot);
                        return None;
                    }
                    Direction::Write => *spares_ready -= 1,
                    Direction::Read => f.read_into(slot),
                    Direction::Trim | Direction::WriteZeroes | Direction::Flush => {}
                }
            }
            slots[slot as usize] = (if stamp { clock.raw() } else { 0 }, next);
            if track_sends {
                unsent.push(slot);
            }
            *issued_measured += u64::from(measuring);
            Some(next)
        })?;
        if stamp {
            for &(op, start, sent, end) in &self.done {
                book(&mut self.stats, &mut self.tallies, &op, Self::latencies(self.clock, split, start, sent, end));
            }
            if let Some(l) = self.io_log.as_mut() {
                if measuring {
                    for &(op, start, sent, end) in &self.done {
                        l.push(record(&op, start, sent, end, self.log_flags));
                    }
                }
            }
        } else {
            for (op, _, _, _) in &self.done {
                count(&mut self.stats, op);
            }
            if reaped > 0 {
                self.last_raw = self.clock.raw();
            }
        }
        self.done.clear();
        if self.ahead.is_none() && !self.generator.spent() {
            self.ahead = Some(self.generator.next_op());
        }
        if self.spares_ready < self.spares {
            self.prepare_spares();
        }
        self.in_flight = self.in_flight + refilled - reaped;
        self.to_submit |= refilled > 0;
        Ok((reaped, error_seen))
    }

    /// Queues the failed I/Os that have retries left again, with their original issue time.
    #[inline]
    fn requeue_retries(&mut self) -> Result<(), EngineError> {
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
            if self.split.is_some() {
                self.note_queued(slot);
            }
            self.in_flight += 1;
            self.to_submit = true;
        }
        Ok(())
    }

    /// Sends what was queued; when nothing completed, waits (interrupt-driven engines) or lets the
    /// kernel post completions without blocking (a paced worker must issue its next I/O on time).
    #[inline]
    fn kick(&mut self, reaped: u32) -> Result<(), EngineError> {
        if self.split == Some(Sends::OnSubmit) {
            return self.kick_split(reaped);
        }
        self.kick_unsplit(reaped)
    }

    /// [`kick`](Self::kick) without a submission stamp (or after it was taken): one call submits and,
    /// when nothing completed, waits.
    #[inline(always)]
    fn kick_unsplit(&mut self, reaped: u32) -> Result<(), EngineError> {
        if reaped == 0 && self.in_flight > 0 {
            if self.pacer.as_ref().is_some_and(Pacer::is_open_loop) {
                match self.idle_for() {
                    // Every slot is out (or the run is draining): only a completion can be next.
                    _ if self.sleeps && (self.free.is_empty() || self.stop.is_some()) => self.engine.wait()?,
                    Some(ns) => self.engine.wait_for(ns)?,
                    None => self.engine.progress()?,
                }
            } else {
                self.engine.wait()?
            }
            if self.in_flight > 1 {
                for _ in 0..self.gap_spins {
                    std::hint::spin_loop();
                }
            }
        } else if self.to_submit {
            self.engine.submit()?;
        } else if self.in_flight == 0 {
            if self.flow_held {
                self.flow_pause();
            } else if let Some(ns) = self.idle_for() {
                self.engine.wait_for(ns)?;
                // The last completion's stamp is no longer now: the next pass reads the clock.
                self.recent = None;
            }
        }
        self.to_submit = false;
        Ok(())
    }

    /// Held back by the flow with nothing in flight: sleeps `flow_sleep` (fio's usleep after its
    /// quiesce), or without one gives the core away once, since the workers it waits for may share
    /// it (a flow can have more workers than the machine has cores); then the next pass checks
    /// again. The sleep ends at the next decision (interval boundary, deadline) if that comes first.
    #[cold]
    #[inline(never)]
    fn flow_pause(&mut self) {
        self.flow_held = false;
        let sleep = self.flow.as_ref().map_or(std::time::Duration::ZERO, FlowMember::sleep);
        if sleep.is_zero() {
            std::thread::yield_now();
        } else {
            let until = self.next_cut.min(self.deadline.unwrap_or(u64::MAX));
            let ns = (sleep.as_nanos() as u64).min(until.saturating_sub(self.now_ns()));
            std::thread::sleep(std::time::Duration::from_nanos(ns));
        }
        self.recent = None;
    }

    /// How long a paced worker on an interrupt-driven engine may sleep now: until its next I/O is
    /// due, or its next decision (interval boundary, deadline) if that comes first. `None` when it
    /// may not: a polled engine, no pacing, something due already, or stopping.
    #[inline]
    fn idle_for(&self) -> Option<u64> {
        if !self.sleeps || self.stop.is_some() {
            return None;
        }
        let due = self.pacer.as_ref()?.next_due_ns()?;
        let until = due.min(self.next_cut).min(self.deadline.unwrap_or(u64::MAX));
        let now = self.now_ns();
        (until > now).then(|| until - now)
    }

    /// [`kick`](Self::kick) with fio's submission stamp: what was queued goes out with a `submit`
    /// of its own, and its return stamps the batch, before any wait for a completion (one call
    /// that submitted and waited would put the wait into the submission latency, where fio's
    /// io_uring and libaio engines submit with one call and reap with another).
    #[inline(never)]
    fn kick_split(&mut self, reaped: u32) -> Result<(), EngineError> {
        if self.to_submit {
            self.engine.submit()?;
            self.stamp_sent();
            self.to_submit = false;
        }
        self.kick_unsplit(reaped)?;
        // A batch the engine held back left with the wait.
        self.stamp_sent();
        Ok(())
    }

    /// Sends the last interval (the rest of the run, up to the last completion) and sums up.
    fn finish(&mut self, links: &Links, worker: usize, lost: u64) -> WorkerSummary {
        // Out of the flow as soon as its last I/O is back (fio's flow_exit_job at the job's end):
        // the others run on among themselves.
        if let Some(f) = &mut self.flow {
            f.leave();
        }
        // The log's last records go before the last interval, so they are in before `Done`.
        self.hand_over_log(links, worker);
        let (reason, stopped_at) = self.stop.unwrap_or((StopReason::Requested, self.last_completion));
        let end = self.last_completion.max(stopped_at).max(self.cut_from);
        let (phase, index) = if self.measuring {
            let interval = self.limits.interval_ns;
            // The interval the run ends in (an end on a boundary belongs to the interval before).
            let ends_in = end.saturating_sub(self.limits.ramp_ns).div_ceil(interval).saturating_sub(1);
            let index = self.last_index.map_or(ends_in, |l| ends_in.max(l + 1));
            // Except after the deadline: what completes then (the I/Os in flight at the stop, a
            // slow device's last one) ends the last planned interval, the one due to end at the
            // deadline, with the other workers' last reports; the run plans none beyond it. Every
            // cut before the stop came before the deadline, so this never goes back past one.
            let last_planned = self.limits.runtime_ns.map(|r| r.div_ceil(interval).saturating_sub(1));
            (Phase::Measure, last_planned.map_or(index, |p| index.min(p)))
        } else {
            // Stopped during the ramp: nothing was measured; the rest is ramp.
            (Phase::Ramp, u64::MAX)
        };
        if end > self.cut_from || self.stats.ios() + self.stats.errors.total() > 0 {
            self.send(links, worker, phase, index, end, true);
        }
        self.summary(reason, end, lost)
    }

    fn summary(&self, reason: StopReason, end: u64, lost: u64) -> WorkerSummary {
        let cpu = if self.measuring { self.probe.end(self.now_ns()) } else { None };
        WorkerSummary {
            measured_ns: if self.measuring { end.saturating_sub(self.measure_start) } else { 0 },
            thread_cpu_ns: cpu.as_ref().map_or(0, |c| c.user_ns + c.sys_ns),
            cpu,
            batches: match (self.measuring, self.engine.batches(), &self.batches_start) {
                (true, Some(now), Some(start)) => Some(now.since(start)),
                _ => None,
            },
            stop_reason: reason,
            lost_in_flight: lost,
            first_error: self.first_error,
            latency_depth: self.search.as_ref().map(DepthSearch::depth),
            verify_reads: None,
            log_epochs_ns: self.log_epochs,
            log_buffers_allocated: self.io_log.as_ref().map_or(0, |l| l.allocated),
            busy: self.busy_on.then(|| BusyTime {
                busy_ns: if self.measuring { self.clock.delta_as_nanos(0, self.busy_ticks) } else { 0 },
                busy_polls: if self.measuring { self.busy_polls } else { 0 },
                perf_busy_ns: if self.measuring { self.clock.delta_as_nanos(0, self.perf_busy_ticks) } else { 0 },
                perf_idle_ns: if self.measuring { self.clock.delta_as_nanos(0, self.perf_idle_ticks) } else { 0 },
            }),
        }
    }

    /// Moves the tallied histogram counts into the statistics, before they leave the worker.
    #[inline(never)]
    fn settle_tallies(&mut self) {
        for (dir, tally) in self.stats.dir.iter_mut().zip(&mut self.tallies) {
            dir.settle(tally);
        }
    }

    /// What was measured until an engine failure: the statistics not yet sent, and a summary.
    pub(super) fn partial(&mut self) -> (Box<Stats>, WorkerSummary) {
        if let Some(f) = &mut self.flow {
            f.leave();
        }
        self.settle_tallies();
        let summary = self.summary(StopReason::Error, self.last_completion, 0);
        (std::mem::take(&mut self.stats), WorkerSummary { first_error: None, ..summary })
    }

    /// Checks the reads that completed in the last poll against what their blocks must hold.
    #[inline]
    fn check_reads(&mut self) {
        if self.verifier.as_ref().is_some_and(|v| v.pending() > 0) {
            self.check_pending_reads();
        }
    }

    #[inline(never)]
    fn check_pending_reads(&mut self) {
        let Some(v) = self.verifier.as_mut() else { return };
        let t = self.clock.raw();
        for i in 0..v.pending() {
            let slot = v.pending_slot(i);
            let op = self.slots[slot as usize].1;
            v.check_read(&op, self.engine.slot_buf(slot));
        }
        v.clear_pending();
        v.cost_ns += self.clock.delta_as_nanos(t, self.clock.raw());
    }

    /// Re-reads every unit this worker's slice is known to hold and checks it, a queue depth at a
    /// time. Runs after the measurement, so its time is in none of the run's figures; its reads are
    /// booked apart, each timed from its queueing to its completion (and, split, to the return of
    /// the submit call that sent it), with the pass's span: fio counts its verify pass's reads in
    /// the job's reads, which fio's JSON follows (`WorkerSummary::verify_reads`).
    fn verify_pass(&mut self) -> Result<Option<VerifyReads>, EngineError> {
        let qd = self.limits.qd;
        let Some(v) = self.verifier.as_mut() else { return Ok(None) };
        let unit = v.table.unit_bytes() as u32;
        let todo: Vec<u64> = v.table.written().map(|(off, _)| off).collect();
        let (clock, stamp, split) = (self.clock, self.stamp, self.split);
        let mut stats = Box::new(Stats::new(split.is_some()));
        let mut tallies = Direction::ALL.map(|_| HistTally::none());
        let mut sent = vec![0u64; qd as usize];
        let mut unsent: Vec<u32> = Vec::with_capacity(qd as usize);
        let start = clock.raw();
        let mut next = 0;
        let mut in_flight = 0u32;
        let mut free: Vec<u32> = (0..qd).collect();
        while next < todo.len() || in_flight > 0 {
            while next < todo.len() {
                let Some(&slot) = free.last() else { break };
                let op = IoOp { dir: Direction::Read, offset: todo[next], len: unit, prio: IoPrio::NONE };
                let issued = if stamp { clock.raw() } else { 0 };
                if self.engine.queue(slot, &op)? == Queued::Busy {
                    break;
                }
                free.pop();
                unsent.push(slot);
                self.slots[slot as usize] = (issued, op);
                next += 1;
                in_flight += 1;
            }
            self.engine.submit()?;
            if split.is_some() {
                let now = clock.raw();
                for slot in unsent.drain(..) {
                    sent[slot as usize] = now;
                }
            }
            unsent.clear();
            let slots = &self.slots;
            let v = self.verifier.as_mut().expect("checked above");
            let mut failed = 0u64;
            let reaped = self.engine.poll(qd, |slot, result| {
                let (issued, op) = slots[slot as usize];
                v.complete(slot, &op, result.is_ok());
                match (&result, stamp) {
                    (Err(_), _) => failed += 1,
                    (Ok(()), true) => {
                        let latency = Self::latencies(clock, split, issued, sent[slot as usize], clock.raw());
                        book(&mut stats, &mut tallies, &op, latency);
                    }
                    (Ok(()), false) => count(&mut stats, &op),
                }
                free.push(slot);
            })?;
            v.read_errors += failed;
            in_flight -= reaped;
            self.check_reads();
            if reaped == 0 && in_flight > 0 {
                self.engine.wait()?;
            }
        }
        Ok(Some(VerifyReads { stats, span_ns: clock.delta_as_nanos(start, clock.raw()) }))
    }
}

/// What became of one completion in the books.
enum Settled {
    /// Counted; the slot is free.
    Done,
    /// Failed with retries left: the slot waits in `retry` for its I/O to go out again.
    Retry,
    /// Failed for good with an error the policy stops on, counted; the slot is free.
    Failed,
}

/// The parts of the loop one completion is booked into, borrowed for the length of a poll (both
/// reaping paths book completions the same way).
struct Books<'a> {
    stats: &'a mut Stats,
    tallies: &'a mut [HistTally; Direction::COUNT],
    tries: &'a mut [u32],
    retry: &'a mut Vec<u32>,
    first_error: &'a mut Option<FailedIo>,
    max_retries: u32,
    /// Whether `latency_ns` was measured (else the I/O is only counted).
    stamp: bool,
    on_error: &'a OnError,
}

impl Books<'_> {
    /// Books slot `slot`'s completed `op`: its latency, or its error (or a retry while any are left).
    #[inline(always)]
    fn settle(&mut self, slot: u32, op: &IoOp, latency: Latency, result: Result<(), IoError>) -> Settled {
        let settled = match result {
            Ok(()) if self.stamp => {
                book(self.stats, self.tallies, op, latency);
                Settled::Done
            }
            Ok(()) => {
                count(self.stats, op);
                Settled::Done
            }
            // Retried with its original issue time, so the retries count in its latency.
            Err(_) if self.tries[slot as usize] < self.max_retries => {
                self.tries[slot as usize] += 1;
                self.stats.errors.retried += 1;
                self.retry.push(slot);
                return Settled::Retry;
            }
            Err(e) => {
                self.stats.errors.count(op.dir, e, 1);
                if self.first_error.is_none() {
                    *self.first_error = Some(FailedIo { error: e, dir: op.dir, offset: op.offset, len: op.len });
                }
                self.judge(op, e)
            }
        };
        self.tries[slot as usize] = 0;
        settled
    }

    /// [`settle`](Self::settle) of a failed I/O, off the path of successful ones: whether it
    /// stops the worker.
    #[cold]
    #[inline(never)]
    fn settle_failure(&mut self, slot: u32, op: &IoOp, result: Result<(), IoError>) -> bool {
        matches!(self.settle(slot, op, Latency::UNMEASURED, result), Settled::Failed)
    }

    /// Whether a failed I/O, already counted, stops the worker; with fio's filter, the counts
    /// fio's report and exit status need (`total_err`, `first_error`, the error that stopped it).
    #[cold]
    #[inline(never)]
    fn judge(&mut self, op: &IoOp, e: IoError) -> Settled {
        let verdict = match self.on_error {
            OnError::Stop => Verdict::Stop,
            // Given up after its retries, or any error under plain `continue`: counted, go on.
            OnError::Continue | OnError::Retry(_) => return Settled::Done,
            OnError::ContinueOn(f) => f.verdict(op.dir == Direction::Read, e.errno_as_fio()),
        };
        let errors = &mut self.stats.errors;
        if verdict != Verdict::Stop {
            errors.typed += 1;
            errors.first_typed.get_or_insert(e);
        }
        if verdict == Verdict::Continue {
            errors.continued += 1;
            return Settled::Done;
        }
        errors.fatal.get_or_insert(e);
        Settled::Failed
    }
}

/// One I/O's latency in nanoseconds: its total (fio's `lat`) and, with `--latency split`, fio's
/// `slat` (none on a synchronous engine) and `clat`.
#[derive(Clone, Copy)]
struct Latency {
    total: u64,
    parts: Option<(Option<u64>, u64)>,
}

impl Latency {
    /// An I/O that was not stamped (`--latency off`): counted, never booked.
    const UNMEASURED: Latency = Latency { total: 0, parts: None };
}

/// Counts a successful `op` that took `latency`.
#[inline(always)]
fn book(stats: &mut Stats, tallies: &mut [HistTally; Direction::COUNT], op: &IoOp, latency: Latency) {
    let (d, bytes) = (op.dir as usize, u64::from(op.len));
    stats.dir[d].record_tallied(latency.total, bytes, &mut tallies[d]);
    if let Some((slat, clat)) = latency.parts {
        book_split(stats, d, bytes, slat, clat);
    }
    if let Some(p) = prio_of(stats, op) {
        p.record(latency.total, latency.parts.map(|(_, clat)| clat), bytes);
    }
}

/// `op`'s per-priority statistics, when its direction keeps them (cmdprio chooses priorities):
/// found by value among a handful, where fio keeps an index in each I/O.
#[inline(always)]
fn prio_of<'s>(stats: &'s mut Stats, op: &IoOp) -> Option<&'s mut PrioStats> {
    stats.prios.get_mut(op.dir as usize).and_then(|p| p.iter_mut().find(|s| s.value == op.prio.value))
}

/// `stats` with room for the per-priority statistics `plan`'s workload keeps (made before the
/// run, so booking never allocates).
fn prio_stats(mut stats: Stats, plan: &WorkerPlan) -> Stats {
    for (i, dir) in [Direction::Read, Direction::Write].into_iter().enumerate() {
        stats.prios[i] = plan
            .spec
            .prio
            .stat_values(dir)
            .into_iter()
            .map(|value| PrioStats { value, ..PrioStats::default() })
            .collect();
    }
    stats
}

#[inline(never)]
fn book_split(stats: &mut Stats, d: usize, bytes: u64, slat: Option<u64>, clat: u64) {
    let split = stats.split.as_mut().expect("a split worker's statistics keep the split latencies");
    if let Some(s) = slat {
        split.slat[d].record(s, 1, bytes);
    }
    split.clat[d].record(clat, 1, bytes);
}

/// The per-I/O log's record of `op`, from its raw stamps (`sent` is `start` without `FLAG_SLAT`).
#[inline(always)]
fn record(op: &IoOp, start: u64, sent: u64, end: u64, flags: u8) -> IoRecord {
    let sent = if flags & FLAG_SLAT != 0 { sent } else { start };
    IoRecord { start, sent, end, offset: op.offset, len: op.len, prio: op.prio.value, dir: op.dir, flags }
}

/// Counts a successful `op` whose latency was not measured (`--latency off`).
#[inline(always)]
fn count(stats: &mut Stats, op: &IoOp) {
    stats.dir[op.dir as usize].count(1, u64::from(op.len));
}

/// The run's timeline on the clock: time zero's raw reading, and the way from nanoseconds since
/// then back to raw readings, for comparing raw stamps with boundaries and for paced I/Os' due
/// times.
struct Timeline {
    epoch: u64,
    /// Raw ticks per nanosecond, to guess a raw reading before [`raw_at`](Self::raw_at) settles it.
    ticks_per_ns: f64,
}

impl Timeline {
    fn new(clock: &Clock) -> Self {
        // The clock's own scaling of a long span (a mock clock and the monotonic fallback count
        // nanoseconds: 1.0).
        const SPAN: u64 = 1 << 40;
        let ns = clock.delta_as_nanos(0, SPAN).max(1);
        Timeline { epoch: 0, ticks_per_ns: SPAN as f64 / ns as f64 }
    }

    /// Nanoseconds since time zero at raw reading `raw`.
    #[inline]
    fn ns(&self, clock: &Clock, raw: u64) -> u64 {
        clock.delta_as_nanos(self.epoch, raw)
    }

    /// The first raw reading at which the timeline is at or past `ns`: `raw >= raw_at(ns)` exactly
    /// when `ns(raw) >= ns` (`u64::MAX` if no reading gets there). The scale's guess is settled by
    /// galloping to a bracket and halving it, with the clock's own scaling as the judge, so the
    /// answer agrees with it to the tick; a few scalings when the guess is good.
    fn raw_at(&self, clock: &Clock, ns: u64) -> u64 {
        if ns == 0 {
            return self.epoch;
        }
        let reaches = |raw: u64| clock.delta_as_nanos(self.epoch, raw) >= ns;
        let guess = self.epoch.saturating_add((ns as f64 * self.ticks_per_ns) as u64).max(self.epoch + 1);
        // Invariant once bracketed: !reaches(lo) && reaches(hi).
        let (mut lo, mut hi);
        if reaches(guess) {
            hi = guess;
            let mut step = 1u64;
            loop {
                let below = hi.saturating_sub(step).max(self.epoch);
                if below == self.epoch || !reaches(below) {
                    lo = below;
                    break;
                }
                hi = below;
                step = step.saturating_mul(2);
            }
        } else {
            lo = guess;
            let mut step = 1u64;
            loop {
                if lo == u64::MAX {
                    return u64::MAX;
                }
                let above = lo.saturating_add(step);
                if reaches(above) {
                    hi = above;
                    break;
                }
                lo = above;
                step = step.saturating_mul(2);
            }
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if reaches(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        hi
    }
}

/// How many spin-loop hints take about `ns` nanoseconds on this CPU (one costs about 10 ns on some
/// x86 generations and about 40 on others), measured once per process, before any run starts.
fn spins_for(ns: u32) -> u32 {
    if ns == 0 {
        return 0;
    }
    static PER_HINT_NS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    let per = *PER_HINT_NS.get_or_init(|| {
        // The least of a few tries: a preemption only ever makes one look slower.
        (0..5)
            .map(|_| {
                const HINTS: u32 = 4096;
                let t = std::time::Instant::now();
                for _ in 0..HINTS {
                    std::hint::spin_loop();
                }
                t.elapsed().as_nanos() as f64 / f64::from(HINTS)
            })
            .fold(f64::INFINITY, f64::min)
            .max(0.1)
    });
    (f64::from(ns) / per).round().clamp(1.0, 100_000.0) as u32
}

#[cfg(test)]
mod tests {
    use super::{Timeline, spins_for};

    /// `raw_at` is the exact inverse of the clock's scaling at every boundary it is asked for,
    /// however far off the scale's guess is.
    #[test]
    fn raw_readings_of_boundaries_agree_with_the_clock_to_the_tick() {
        let clock = crate::clock::Clock::new();
        let real = Timeline::new(&clock);
        for ticks_per_ns in [real.ticks_per_ns, real.ticks_per_ns * 0.5, real.ticks_per_ns * 3.0, 1e-3, 1e3] {
            let t = Timeline { epoch: clock.raw(), ticks_per_ns };
            for ns in [1, 2, 7, 999, 1_000_000, 1_000_000_007, 3_600_000_000_000] {
                let raw = t.raw_at(&clock, ns);
                assert!(t.ns(&clock, raw) >= ns, "{ticks_per_ns} {ns}");
                assert!(t.ns(&clock, raw - 1) < ns, "{ticks_per_ns} {ns}");
            }
            assert_eq!(t.raw_at(&clock, 0), t.epoch);
        }
        // A mock clock counts nanoseconds.
        let (mock_clock, _mock) = crate::clock::Clock::mock();
        let t = Timeline { epoch: 5, ..Timeline::new(&mock_clock) };
        assert_eq!(t.ticks_per_ns, 1.0);
        assert_eq!(t.raw_at(&mock_clock, 10), 15);
        assert_eq!(t.ns(&mock_clock, 15), 10);
    }

    #[test]
    fn spin_gaps_scale_with_the_time_asked_for() {
        assert_eq!(spins_for(0), 0);
        let (short, long) = (spins_for(100), spins_for(10_000));
        assert!(short >= 1, "{short}");
        // The same per-hint cost divides both, so the ratio holds whatever the CPU (up to rounding).
        assert!((long as f64 / short as f64 - 100.0).abs() <= 100.0 / short as f64 + 1.0, "{short} {long}");
    }
}

//! Several targets in one run: which worker drives which target (placement), and the worker thread
//! that drives more than one.
//!
//! A run is planned as *lanes*: one lane is one worker on one target, with its own engine instance
//! (its own ring or queue pair), its own `--qd` slots, generator, statistics and, with `--verify`,
//! verifier, as SPDK perf gives every worker one `ns_worker_ctx` per namespace it drives. A worker
//! with a single lane runs the plain loop of [`super::hot`] unchanged; a worker with several runs
//! their passes in turn here and never blocks in one engine (interrupt-driven engines are asked to
//! make progress instead of waiting, as a polled worker would), so one idle target cannot hold up
//! the others. What this module does not do: decide offsets (each lane's generator does) or merge
//! results (the coordinator sums lanes per worker and per target).

use super::hot::{Loop, Pass};
use super::{Links, Report, Shared, WorkerError, WorkerPlan, wait_for_gate};
use crate::engine::{Engine, EngineBuilder, EngineError, EngineInfo, Queued};
use crate::io::{IoError, IoOp};

/// One worker on one target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lane {
    /// The worker (thread) that drives it.
    pub worker: usize,
    pub target: usize,
}

/// Deals `targets` over `workers` as SPDK perf does: lane i is worker `i % workers` on target
/// `i % targets`, for `max(workers, targets)` lanes, so every target gets a worker and every worker
/// a target (a worker gets several when targets outnumber workers). With `each_worker_all_targets`,
/// every worker drives every target. Lanes come ordered by worker, then target.
pub fn place(workers: usize, targets: usize, each_worker_all_targets: bool) -> Vec<Lane> {
    let (workers, targets) = (workers.max(1), targets.max(1));
    let mut lanes: Vec<Lane> = if each_worker_all_targets {
        (0..workers).flat_map(|worker| (0..targets).map(move |target| Lane { worker, target })).collect()
    } else {
        (0..workers.max(targets)).map(|i| Lane { worker: i % workers, target: i % targets }).collect()
    };
    lanes.sort_by_key(|l| (l.worker, l.target));
    lanes
}

/// Each lane's slice of its target's working set: its rank among the lanes on the same target, and
/// how many there are (sequential patterns give each its own slice, as workers on one target do).
pub fn slices(lanes: &[Lane]) -> Vec<(usize, usize)> {
    lanes
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let rank = lanes[..i].iter().filter(|o| o.target == l.target).count();
            (rank, lanes.iter().filter(|o| o.target == l.target).count())
        })
        .collect()
}

/// An engine sharing its thread with others: where the plain loop would block for a completion
/// (`wait`), it only lets the kernel post completions (`progress`), so the thread moves on to the
/// next target's queue.
struct Shared1<E>(E);

impl<E: Engine> Engine for Shared1<E> {
    #[inline]
    fn queue(&mut self, slot: u32, op: &IoOp) -> Result<Queued, EngineError> {
        self.0.queue(slot, op)
    }

    #[inline]
    fn submit(&mut self) -> Result<(), EngineError> {
        self.0.submit()
    }

    #[inline]
    fn poll<F: FnMut(u32, Result<(), IoError>)>(&mut self, max: u32, done: F) -> Result<u32, EngineError> {
        self.0.poll(max, done)
    }

    #[inline]
    fn refills_inline(&self) -> bool {
        self.0.refills_inline()
    }

    #[inline]
    fn poll_refill<F: FnMut(u32, Result<(), IoError>) -> Option<IoOp>>(
        &mut self,
        max: u32,
        done: F,
    ) -> Result<(u32, u32), EngineError> {
        self.0.poll_refill(max, done)
    }

    #[inline]
    fn wait(&mut self) -> Result<(), EngineError> {
        self.0.progress()
    }

    #[inline]
    fn progress(&mut self) -> Result<(), EngineError> {
        self.0.progress()
    }

    fn idle_poll_gap_ns(&self) -> u32 {
        self.0.idle_poll_gap_ns()
    }

    fn accounts_busy(&self) -> bool {
        self.0.accounts_busy()
    }

    fn interrupt_driven(&self) -> bool {
        self.0.interrupt_driven()
    }

    fn wait_for(&mut self, timeout_ns: u64) -> Result<(), EngineError> {
        self.0.wait_for(timeout_ns)
    }

    fn write_spares(&self) -> u32 {
        self.0.write_spares()
    }

    fn prepare_spares<F: FnMut(&mut [u8], bool)>(&mut self, prepare: F) {
        self.0.prepare_spares(prepare)
    }

    fn sends(&self) -> crate::engine::Sends {
        self.0.sends()
    }

    fn unsent(&mut self) -> u32 {
        self.0.unsent()
    }

    fn info(&self) -> EngineInfo {
        self.0.info()
    }

    fn lane_facts(&self) -> Vec<(String, String)> {
        self.0.lane_facts()
    }

    fn slot_buf(&mut self, slot: u32) -> &mut [u8] {
        self.0.slot_buf(slot)
    }
}

/// Runs one worker's lanes (`plans`, all on the same core, `links` in the same order) to completion
/// on the calling thread. Every lane ends in a report, as [`super::run`]'s single lane does.
pub fn run_lanes<B: EngineBuilder>(
    builder: &B,
    plans: &[WorkerPlan],
    shared: &Shared,
    links: &[Links],
    clock: &crate::clock::Clock,
) {
    let fail = |lane: usize, error: WorkerError| {
        shared.abort();
        let _ = links[lane].reports.send(Report::Failed { worker: plans[lane].index, error, partial: None });
    };
    let thread = plans[0].thread;
    if let Some(core) = plans[0].core {
        if !core_affinity::set_for_current(core_affinity::CoreId { id: core }) {
            return fail(0, WorkerError::Pin { worker: thread, core });
        }
    }
    // fio sets the job's priority before its engine starts (backend.c); lanes share a job.
    if plans[0].spec.prio.set_thread {
        if let Err(source) = crate::engine::set_thread_ioprio(plans[0].spec.prio.job) {
            return fail(0, WorkerError::Engine { worker: thread, source });
        }
    }
    let mut lanes = Vec::with_capacity(plans.len());
    for (i, plan) in plans.iter().enumerate() {
        match builder.build(plan.index, plan.queue_depth, plan.spec.max_bs()) {
            Ok(e) => {
                let mut lane = Loop::new(Shared1(e), plan, clock);
                if plan.io_log {
                    lane.keep_io_log(&links[i]);
                }
                lanes.push(Some(lane));
            }
            Err(source) => return fail(i, WorkerError::Engine { worker: thread, source }),
        }
    }
    let tid = nix::unistd::gettid().as_raw();
    for (i, lane) in lanes.iter().enumerate() {
        let lane = lane.as_ref().expect("every lane was built");
        let (info, facts) = (lane.engine_info(), lane.lane_facts());
        if links[i].reports.send(Report::Ready { worker: plans[i].index, info, facts, tid }).is_err() {
            return;
        }
    }
    let Some(epoch) = wait_for_gate(shared) else { return };
    for lane in lanes.iter_mut().flatten() {
        lane.begin(epoch);
    }
    let mut done: Vec<Option<(super::WorkerSummary, Option<Box<crate::verify::Verifier>>)>> =
        (0..plans.len()).map(|_| None).collect();
    let mut left = plans.len();
    // With one queue depth for the worker (fio's iodepth over a job's files), each lane may fill
    // what the others leave of it: a slot freed by one lane's reap goes to the next lane's refill,
    // so the lanes take turns as fio's jobs take their files in turn.
    let budget = plans[0].worker_qd;
    let mut in_flight = 0u32;
    while left > 0 {
        for i in 0..plans.len() {
            let Some(lane) = lanes[i].as_mut() else { continue };
            let before = lane.in_flight();
            if let Some(b) = budget {
                lane.set_cap(b.saturating_sub(in_flight - before));
            }
            let pass = lane.pass(&plans[i], shared, &links[i]);
            in_flight = in_flight - before + lane.in_flight();
            let outcome = match pass {
                Ok(Pass::Busy) => continue,
                Ok(Pass::Drained) => lane.end(&plans[i], &links[i]),
                Ok(Pass::GaveUp) => Ok(lane.give_up(&plans[i], &links[i])),
                Err(e) => Err(e),
            };
            left -= 1;
            let mut lane = lanes[i].take().expect("the lane was running");
            // A lane that gave up leaves its I/Os to the device; they no longer count here.
            in_flight -= lane.in_flight();
            match outcome {
                Ok(summary) => {
                    let verify = lane.take_verifier().map(Box::new);
                    if summary.lost_in_flight > 0 {
                        // As in `super::run`: a device may still write into these buffers.
                        std::mem::forget(lane);
                    }
                    done[i] = Some((summary, verify));
                }
                Err(source) => {
                    shared.request_stop();
                    lane.hand_over_log(&links[i], plans[i].index);
                    let partial = Some(lane.partial());
                    std::mem::forget(lane);
                    let error = WorkerError::Engine { worker: thread, source };
                    let _ = links[i].reports.send(Report::Failed { worker: plans[i].index, error, partial });
                }
            }
        }
    }
    // One thread's CPU time, measured by every lane over nearly the same window: kept once (the
    // largest, on the first lane that finished), so sums over lanes stay the thread's.
    let widest =
        done.iter().flatten().max_by_key(|(s, _)| s.thread_cpu_ns).map(|(s, _)| (s.thread_cpu_ns, s.cpu.clone()));
    let (cpu, mut window) = widest.unwrap_or((0, None));
    let mut first = true;
    for (i, d) in done.into_iter().enumerate() {
        let Some((mut summary, verify)) = d else { continue };
        summary.thread_cpu_ns = if first { cpu } else { 0 };
        summary.cpu = if first { window.take() } else { None };
        first = false;
        let _ = links[i].reports.send(Report::Done { worker: plans[i].index, summary, verify });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(lanes: &[Lane]) -> Vec<(usize, usize)> {
        lanes.iter().map(|l| (l.worker, l.target)).collect()
    }

    #[test]
    fn targets_are_dealt_like_spdk_perf() {
        assert_eq!(pairs(&place(1, 1, false)), [(0, 0)]);
        // More workers than targets: targets are shared.
        assert_eq!(pairs(&place(4, 2, false)), [(0, 0), (1, 1), (2, 0), (3, 1)]);
        // More targets than workers: a worker drives several.
        assert_eq!(pairs(&place(2, 3, false)), [(0, 0), (0, 2), (1, 1)]);
        assert_eq!(pairs(&place(1, 3, false)), [(0, 0), (0, 1), (0, 2)]);
        assert_eq!(pairs(&place(2, 2, true)), [(0, 0), (0, 1), (1, 0), (1, 1)]);
    }

    #[test]
    fn lanes_on_one_target_split_it() {
        let lanes = place(4, 2, false);
        assert_eq!(slices(&lanes), [(0, 2), (0, 2), (1, 2), (1, 2)]);
        assert_eq!(slices(&place(1, 3, false)), [(0, 1), (0, 1), (0, 1)]);
    }
}

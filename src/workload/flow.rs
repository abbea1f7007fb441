//! fio's token-based flow control (`flow`, `flow_id`, `flow_sleep`): jobs that share a flow keep
//! the I/Os they issue in the ratio of their weights.
//!
//! As fio's flow.c: a flow has one counter, started at 1, that every member adds its issued I/Os
//! to, and the sum of its members' weights, both taken when the members join (before the run
//! starts, as fio takes them when it reads the job file). A member with weight `w` and its own
//! count `c` may issue its next I/O while `c / counter <= w / total`; past it, it is held back
//! (and, with `flow_sleep`, waits for its I/Os in flight, then sleeps) until the others caught
//! up. A member that ends takes its count and weight out, so the others run on among themselves.
//!
//! fio checks and counts once per I/O; here a worker asks once per pass how many I/Os it may issue
//! ([`FlowMember::budget`], the same I/Os fio's per-I/O check would let out one by one) and adds
//! what it issued with one atomic add. This module keeps the counts; the worker acts on them.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// fio's largest `flow` weight (`FLOW_MAX_WEIGHT`).
pub const MAX_WEIGHT: u32 = 1000;

/// One flow (one `flow_id` of the jobs that run together), shared by its members' workers.
///
/// Aligned to two cache lines of its own: every member writes the counter, and a neighbour that
/// another thread writes would cost them a miss on top.
#[derive(Debug)]
#[repr(align(128))]
pub struct Flow {
    /// Every member's issued I/Os, plus 1 (fio starts it there, so no ratio divides by zero).
    counter: AtomicU64,
    /// The weights of the members still in the flow.
    total_weight: AtomicU64,
}

impl Flow {
    /// A flow without members.
    pub fn new() -> Arc<Flow> {
        Arc::new(Flow { counter: AtomicU64::new(1), total_weight: AtomicU64::new(0) })
    }
}

/// A job's part in a flow: the flow, and the job's `flow` and `flow_sleep`. Each of the job's
/// workers joins with the weight (each of fio's `numjobs` clones is a job with it).
#[derive(Clone, Debug)]
pub struct FlowShare {
    pub flow: Arc<Flow>,
    pub weight: u32,
    pub sleep: Duration,
}

impl FlowShare {
    /// A worker's seat in the flow.
    pub fn seat(&self) -> FlowSeat {
        FlowSeat::join(&self.flow, self.weight, self.sleep)
    }
}

/// A worker's place in a flow, taken before the run (its weight counts from then on).
#[derive(Clone, Debug)]
pub struct FlowSeat {
    flow: Arc<Flow>,
    weight: u64,
    /// fio's `flow_sleep`: how long a held-back worker sleeps once its I/Os in flight are done;
    /// zero (fio's default): it only checks again.
    pub sleep: Duration,
}

impl FlowSeat {
    /// Joins `flow` with `weight` (fio's `flow`, above 0).
    pub fn join(flow: &Arc<Flow>, weight: u32, sleep: Duration) -> FlowSeat {
        flow.total_weight.fetch_add(u64::from(weight), Ordering::Relaxed);
        FlowSeat { flow: flow.clone(), weight: u64::from(weight), sleep }
    }
}

/// A worker's own count in its flow; it leaves the flow when it ends (or is dropped).
#[derive(Debug)]
pub struct FlowMember {
    seat: FlowSeat,
    own: u64,
    left: bool,
}

impl FlowMember {
    pub fn new(seat: FlowSeat) -> FlowMember {
        FlowMember { seat, own: 0, left: false }
    }

    /// How many I/Os the member may issue now: those fio's per-I/O check would let out one after
    /// the other if nobody else issued meanwhile (0: held back). fio lets the next one out while
    /// `own * total <= weight * counter`, each adding 1 to both counts; after `k` of them that is
    /// `k * (total - weight) <= weight * counter - own * total`.
    #[inline]
    pub fn budget(&self) -> u64 {
        let counter = self.seat.flow.counter.load(Ordering::Relaxed);
        let total = self.seat.flow.total_weight.load(Ordering::Relaxed);
        let w = self.seat.weight;
        let slack = i128::from(w) * i128::from(counter) - i128::from(self.own) * i128::from(total);
        if slack < 0 {
            0
        } else if total <= w {
            // Alone in its flow: never held back.
            u64::MAX
        } else {
            u64::try_from(slack / i128::from(total - w) + 1).unwrap_or(u64::MAX)
        }
    }

    /// Counts `n` I/Os issued (one atomic add for all of them).
    #[inline]
    pub fn issued(&mut self, n: u64) {
        if n > 0 {
            self.own += n;
            self.seat.flow.counter.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// How long to sleep when held back with nothing in flight (fio's `flow_sleep`).
    pub fn sleep(&self) -> Duration {
        self.seat.sleep
    }

    /// Takes the member's count and weight out of the flow (fio's `flow_exit_job`), once.
    pub fn leave(&mut self) {
        if !std::mem::replace(&mut self.left, true) {
            self.seat.flow.counter.fetch_sub(self.own, Ordering::Relaxed);
            self.seat.flow.total_weight.fetch_sub(self.seat.weight, Ordering::Relaxed);
        }
    }
}

impl Drop for FlowMember {
    fn drop(&mut self) {
        self.leave();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio's own check (flow.c's `flow_threshold_exceeded`), one I/O at a time, as a reference.
    fn fio_step(counter: &mut u64, own: &mut u64, weight: u64, total: u64) -> bool {
        let held = (*own as f64 / *counter as f64) > (weight as f64 / total as f64);
        if !held {
            *counter += 1;
            *own += 1;
        }
        !held
    }

    #[test]
    fn the_budget_is_what_fios_check_lets_out_one_by_one() {
        for (weights, own, others) in
            [(vec![1, 3], 0, 0), (vec![1, 3], 5, 2), (vec![2, 2], 7, 3), (vec![1, 8], 40, 100), (vec![5, 1, 2], 3, 9)]
        {
            let flow = Flow::new();
            let mut members: Vec<FlowMember> =
                weights.iter().map(|&w| FlowMember::new(FlowSeat::join(&flow, w, Duration::ZERO))).collect();
            members[1].issued(others);
            members[0].issued(own);
            let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
            let (mut counter, mut mine) = (1 + own + others, own);
            let mut fio = 0;
            while fio < 10_000 && fio_step(&mut counter, &mut mine, u64::from(weights[0]), total) {
                fio += 1;
            }
            assert_eq!(members[0].budget(), fio, "weights {weights:?}, own {own}, others {others}");
        }
    }

    #[test]
    fn members_issuing_their_budgets_keep_the_ratio_of_their_weights() {
        let flow = Flow::new();
        let mut a = FlowMember::new(FlowSeat::join(&flow, 1, Duration::ZERO));
        let mut b = FlowMember::new(FlowSeat::join(&flow, 3, Duration::ZERO));
        // Each issues up to 16 a pass (its queue depth), in turn.
        for _ in 0..1000 {
            let n = a.budget().min(16);
            a.issued(n);
            let n = b.budget().min(16);
            b.issued(n);
        }
        let ratio = b.own as f64 / a.own as f64;
        assert!((2.9..=3.1).contains(&ratio), "{} against {}", b.own, a.own);
    }

    #[test]
    fn a_member_alone_is_never_held_and_one_that_leaves_frees_the_others() {
        let flow = Flow::new();
        let mut a = FlowMember::new(FlowSeat::join(&flow, 2, Duration::ZERO));
        let mut b = FlowMember::new(FlowSeat::join(&flow, 2, Duration::ZERO));
        b.issued(100);
        a.issued(150);
        assert_eq!(a.budget(), 0, "ahead of its half");
        b.leave();
        assert_eq!(a.budget(), u64::MAX);
        assert_eq!(flow.counter.load(Ordering::Relaxed), 151);
        drop(b);
        drop(a);
        assert_eq!(flow.counter.load(Ordering::Relaxed), 1, "fio asserts the counter is back at 1");
        assert_eq!(flow.total_weight.load(Ordering::Relaxed), 0);
    }
}

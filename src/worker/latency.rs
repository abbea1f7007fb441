//! fio's latency target (`latency_target`, `latency_window`, `latency_percentile`,
//! `latency_run`): the search for the deepest queue depth, up to the job's `iodepth`, at which a
//! share of the I/Os of each window completes within a target.
//!
//! The steps are fio 3.33's (io_u.c's `lat_target_*` and `__lat_target_failed`, backend.c's call of
//! `lat_target_check` once per pass of its loop outside the ramp): the search starts at depth 1;
//! a window is judged once it has lasted `latency_window`; on success the depth doubles while no
//! window has failed yet (then it bisects towards the last failing depth); on failure it halves
//! towards the last good one, and the I/Os in flight drain first (fio's `io_u_quiesce`). With a
//! percentile of 100 a single I/O over the target is a failure at once, and one at depth 1 ends
//! the job with ETIMEDOUT. With `latency_run=0` the first success that leaves the depth where it
//! was drains, starts a last window, and the next such success ends the job.
//!
//! This module owns only the arithmetic; the worker (`super::hot`) feeds it each completion's
//! latency and the pass's clock, and applies the depth it returns, and it restarts the measurement
//! when the last window begins (fio's `reset_io_stats` there), which is not this module's.

pub use crate::options::LatencyTarget;

/// What the worker does after a step of the search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Nothing changes.
    Stay,
    /// Issue up to this depth from now on.
    Depth(u32),
    /// Let every I/O in flight complete, issuing nothing, then call
    /// [`DepthSearch::new_cycle`] and issue up to this depth.
    Drain(u32),
    /// The search settled twice at one depth (`latency_run=0`): stop issuing.
    Done,
    /// An I/O over the target at depth 1 with a percentile of 100: the I/O fails with ETIMEDOUT.
    Fatal,
}

/// The search's state: fio's `latency_qd`, `_low`, `_high`, `latency_stable_count`,
/// `latency_end_run`, and the current window (its start, its I/Os, and those over the target).
#[derive(Clone, Debug)]
pub struct DepthSearch {
    opts: LatencyTarget,
    iodepth: u32,
    qd: u32,
    low: u32,
    high: u32,
    stable: u32,
    end_run: bool,
    window_from_ns: u64,
    ios: u64,
    failed: u64,
    /// Every I/O must meet the target (`latency_percentile=100`).
    strict: bool,
}

impl DepthSearch {
    /// The search at its start (fio's `lat_target_init`), its first window from `now_ns`.
    pub fn new(opts: LatencyTarget, iodepth: u32, now_ns: u64) -> Self {
        let mut s = DepthSearch {
            opts,
            iodepth: iodepth.max(1),
            qd: 1,
            low: 1,
            high: iodepth.max(1),
            stable: 0,
            end_run: false,
            window_from_ns: now_ns,
            ios: 0,
            failed: 0,
            strict: opts.percentile >= 100.0,
        };
        s.init(now_ns);
        s
    }

    fn init(&mut self, now_ns: u64) {
        self.qd = 1;
        self.high = self.iodepth;
        self.low = 1;
        self.new_cycle(now_ns);
    }

    /// The depth to issue up to now (fio's `latency_qd`, which its JSON writes as `latency_depth`).
    pub fn depth(&self) -> u32 {
        self.qd
    }

    /// Whether the last window has begun (`latency_run=0` settled once).
    pub fn final_run(&self) -> bool {
        self.end_run
    }

    /// At the end of the ramp, fio resets its statistics and, unless the last window has begun,
    /// the search (`lat_target_reset`): back to depth 1.
    pub fn reset(&mut self, now_ns: u64) -> u32 {
        if !self.end_run {
            self.init(now_ns);
        }
        self.qd
    }

    /// Starts a new window at `now_ns` (fio's `lat_new_cycle`).
    pub fn new_cycle(&mut self, now_ns: u64) {
        self.window_from_ns = now_ns;
        self.ios = 0;
        self.failed = 0;
    }

    /// Books one successful I/O of `latency_ns` (fio's `account_io_completion`). Over the target,
    /// with a percentile of 100, the depth goes down at once.
    #[inline(always)]
    pub fn complete(&mut self, latency_ns: u64) -> Step {
        self.ios += 1;
        if latency_ns > self.opts.target_ns {
            return self.over_target();
        }
        Step::Stay
    }

    #[cold]
    #[inline(never)]
    fn over_target(&mut self) -> Step {
        if self.strict {
            return match self.fail() {
                Some(qd) => Step::Drain(qd),
                None => Step::Fatal,
            };
        }
        self.failed += 1;
        Step::Stay
    }

    /// Judges the window if it has lasted `latency_window` by `now_ns` (fio's `lat_target_check`).
    pub fn check(&mut self, now_ns: u64) -> Step {
        if now_ns.saturating_sub(self.window_from_ns) < self.opts.window_ns {
            return Step::Stay;
        }
        // A window without an I/O is 0/0 in fio, which no percentile meets: a failure.
        let met = self.ios > 0 && (self.ios - self.failed) as f64 / self.ios as f64 * 100.0 >= self.opts.percentile;
        if met {
            return self.success(now_ns);
        }
        // At depth 1 fio leaves the window running (no new cycle): the next pass judges again,
        // over the longer window.
        self.fail().map_or(Step::Stay, Step::Drain)
    }

    /// fio's `__lat_target_failed`: `None` at depth 1, else the lower depth (after a drain, and a
    /// new window the caller starts).
    fn fail(&mut self) -> Option<u32> {
        if self.qd == 1 {
            return None;
        }
        self.high = self.qd;
        if self.qd == self.low {
            self.low -= 1;
        }
        self.qd = (self.qd + self.low) / 2;
        self.stable = 0;
        Some(self.qd)
    }

    /// fio's `lat_target_success`.
    fn success(&mut self, now_ns: u64) -> Step {
        let before = self.qd;
        self.low = self.qd;
        // One below the failing depth: fio lets the ceiling creep up after three such successes.
        if self.qd + 1 == self.high {
            self.stable += 1;
            if self.stable >= 3 {
                self.high += 1;
                self.stable = 0;
            }
        }
        // Doubling until a window fails, bisecting after.
        self.qd = if self.high != self.iodepth { (self.qd + self.high) / 2 } else { self.qd * 2 };
        self.qd = self.qd.min(self.iodepth);
        if !self.opts.run && self.qd == before {
            if self.end_run {
                return Step::Done;
            }
            self.end_run = true;
            return Step::Drain(self.qd);
        }
        self.new_cycle(now_ns);
        Step::Depth(self.qd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn opts(percentile: f64, run: bool) -> LatencyTarget {
        LatencyTarget { target_ns: 500_000, window_ns: 10 * MS, percentile, run }
    }

    /// Feeds one window of `good` I/Os under the target and `bad` over it, then judges it at `at`.
    fn window(s: &mut DepthSearch, good: u64, bad: u64, at: u64) -> Step {
        for _ in 0..good {
            assert_eq!(s.complete(100_000), Step::Stay);
        }
        for _ in 0..bad {
            assert_eq!(s.complete(900_000), Step::Stay);
        }
        s.check(at)
    }

    /// After a drain the worker starts the next window.
    fn drained(s: &mut DepthSearch, step: Step, at: u64) -> Step {
        if let Step::Drain(_) = step {
            s.new_cycle(at);
        }
        step
    }

    #[test]
    fn a_window_is_judged_only_once_it_has_lasted_latency_window() {
        let mut s = DepthSearch::new(opts(99.0, false), 16, 0);
        assert_eq!(window(&mut s, 10, 0, 10 * MS - 1), Step::Stay);
        assert_eq!(s.check(10 * MS), Step::Depth(2));
        // The next window counts from the success.
        assert_eq!(s.check(19 * MS), Step::Stay);
    }

    #[test]
    fn every_window_met_doubles_to_iodepth_and_settles_there() {
        let mut s = DepthSearch::new(opts(99.0, false), 16, 0);
        let mut at = 0;
        let mut seen = vec![];
        loop {
            at += 10 * MS;
            let step = window(&mut s, 100, 0, at);
            let step = drained(&mut s, step, at);
            seen.push(step);
            if step == Step::Done {
                break;
            }
        }
        // 1 -> 2 -> 4 -> 8 -> 16; 16 again: drain and a last window; 16 again: done.
        assert_eq!(
            seen,
            vec![Step::Depth(2), Step::Depth(4), Step::Depth(8), Step::Depth(16), Step::Drain(16), Step::Done]
        );
        assert_eq!(s.depth(), 16);
    }

    #[test]
    fn every_window_failed_stays_at_depth_1_and_keeps_the_window_open() {
        let mut s = DepthSearch::new(opts(99.0, false), 16, 0);
        assert_eq!(window(&mut s, 0, 10, 10 * MS), Step::Stay);
        assert_eq!(s.depth(), 1);
        // No new cycle at depth 1: the 10 failures still count, so 990 good ones reach 99%.
        assert_eq!(window(&mut s, 989, 0, 11 * MS), Step::Stay);
        assert_eq!(window(&mut s, 1, 0, 11 * MS), Step::Depth(2));
    }

    #[test]
    fn an_empty_window_fails() {
        let mut s = DepthSearch::new(opts(0.0, false), 16, 0);
        assert_eq!(window(&mut s, 1, 0, 10 * MS), Step::Depth(2));
        assert_eq!(s.check(20 * MS), Step::Drain(1));
    }

    /// One more 10 ms window, all of it within the target (`good`) or half of it over, judged
    /// and drained.
    fn judge_next(s: &mut DepthSearch, at: &mut u64, good: bool) -> Step {
        *at += 10 * MS;
        let step = if good { window(s, 100, 0, *at) } else { window(s, 50, 50, *at) };
        drained(s, step, *at)
    }

    #[test]
    fn a_failure_bisects_down_and_successes_bisect_back_up() {
        // fio's steps, worked by hand from io_u.c: (low, qd, high) after each window.
        let mut s = DepthSearch::new(opts(99.0, false), 128, 0);
        let mut at = 0;
        let mut judge = |s: &mut DepthSearch, good: bool| judge_next(s, &mut at, good);
        assert_eq!(judge(&mut s, true), Step::Depth(2));
        assert_eq!(judge(&mut s, true), Step::Depth(4));
        assert_eq!(judge(&mut s, true), Step::Depth(8));
        // 8 fails: high 8, low 4 -> (8 + 4) / 2 = 6.
        assert_eq!(judge(&mut s, false), Step::Drain(6));
        // 6 passes: low 6 -> (6 + 8) / 2 = 7.
        assert_eq!(judge(&mut s, true), Step::Depth(7));
        // 7 passes, one below the ceiling: stable 1, qd (7 + 8) / 2 = 7, unchanged: the last window.
        assert_eq!(judge(&mut s, true), Step::Drain(7));
        assert!(s.final_run());
        // It fails: high 7, low == qd so low 6 -> (7 + 6) / 2 = 6.
        assert_eq!(judge(&mut s, false), Step::Drain(6));
        // 6 passes: qd + 1 == high, stable 1; (6 + 7) / 2 = 6, unchanged after the last window began.
        assert_eq!(judge(&mut s, true), Step::Done);
        assert_eq!(s.depth(), 6);
    }

    #[test]
    fn latency_run_keeps_going_and_the_ceiling_creeps_up_after_three_stable_successes() {
        let mut s = DepthSearch::new(opts(99.0, true), 128, 0);
        let mut at = 0;
        let mut judge = |s: &mut DepthSearch, good: bool| judge_next(s, &mut at, good);
        assert_eq!(judge(&mut s, true), Step::Depth(2));
        assert_eq!(judge(&mut s, true), Step::Depth(4));
        // 4 fails: high 4, low 2 -> 3.
        assert_eq!(judge(&mut s, false), Step::Drain(3));
        // 3 passes, one below 4: stable 1, 2; (3 + 4) / 2 = 3 each time, and no end with latency_run.
        assert_eq!(judge(&mut s, true), Step::Depth(3));
        assert_eq!(judge(&mut s, true), Step::Depth(3));
        // The third: high 5 -> (3 + 5) / 2 = 4.
        assert_eq!(judge(&mut s, true), Step::Depth(4));
        assert!(!s.final_run());
    }

    #[test]
    fn success_never_goes_past_iodepth() {
        let mut s = DepthSearch::new(opts(50.0, true), 3, 0);
        assert_eq!(window(&mut s, 1, 0, 10 * MS), Step::Depth(2));
        assert_eq!(window(&mut s, 1, 0, 20 * MS), Step::Depth(3));
        assert_eq!(window(&mut s, 1, 0, 30 * MS), Step::Depth(3));
    }

    #[test]
    fn with_percentile_100_one_slow_io_halves_the_depth_at_once_and_is_fatal_at_depth_1() {
        let mut s = DepthSearch::new(opts(100.0, false), 8, 0);
        assert_eq!(window(&mut s, 10, 0, 10 * MS), Step::Depth(2));
        assert_eq!(window(&mut s, 10, 0, 20 * MS), Step::Depth(4));
        // At depth 4, low 2: (4 + 2) / 2 = 3, at the completion itself.
        assert_eq!(s.complete(900_000), Step::Drain(3));
        // Another during the drain (fio's nested quiesce): (3 + 2) / 2 = 2, then low 1: 1.
        assert_eq!(s.complete(900_000), Step::Drain(2));
        assert_eq!(s.complete(900_000), Step::Drain(1));
        assert_eq!(s.complete(900_000), Step::Fatal);
        assert_eq!(s.depth(), 1);
    }

    #[test]
    fn the_ramps_end_restarts_the_search_unless_the_last_window_began() {
        let mut s = DepthSearch::new(opts(99.0, false), 4, 0);
        assert_eq!(window(&mut s, 10, 0, 10 * MS), Step::Depth(2));
        assert_eq!(s.reset(15 * MS), 1);
        assert_eq!(s.check(24 * MS), Step::Stay);
        // The reset started a new window: its I/Os only.
        assert_eq!(window(&mut s, 0, 1, 25 * MS), Step::Stay);
        assert_eq!(s.depth(), 1);
    }
}

//! Open-loop pacing: when each I/O is *meant* to be issued.
//!
//! With `--rate-iops`, I/Os follow a fixed schedule instead of the closed loop. Latency is measured from
//! the scheduled time, not from when a free slot finally let the I/O out, so time spent queued behind a
//! slow device is counted (no coordinated omission). The schedule never skips ahead to catch up.

/// A fixed-interval schedule, in nanoseconds since the worker's start.
#[derive(Clone, Debug)]
pub struct Pacer {
    /// Interval in 1/2^16 ns, so rates that do not divide a second evenly do not drift.
    interval_fp: u64,
    next_fp: u64,
}

impl Pacer {
    /// A schedule of `iops` operations per second starting at `start_ns`.
    pub fn new(iops: f64, start_ns: u64) -> Pacer {
        let interval_fp = (1e9 / iops * 65536.0).max(1.0) as u64;
        Pacer { interval_fp, next_fp: start_ns << 16 }
    }

    /// When the next I/O is due.
    #[inline]
    pub fn due_ns(&self) -> u64 {
        self.next_fp >> 16
    }

    /// Marks the due I/O as issued and moves to the following one.
    #[inline]
    pub fn advance(&mut self) {
        self.next_fp += self.interval_fp;
    }

    /// Restarts the schedule at `start_ns` (after the ramp).
    pub fn restart(&mut self, start_ns: u64) {
        self.next_fp = start_ns << 16;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_does_not_drift() {
        let mut p = Pacer::new(3.0, 0);
        for _ in 0..3_000 {
            p.advance();
        }
        // 3000 I/Os at 3/s end at 1000 s to within a nanosecond.
        assert!((p.due_ns() as i64 - 1_000_000_000_000).abs() <= 1, "{}", p.due_ns());
    }

    #[test]
    fn restart_moves_the_origin() {
        let mut p = Pacer::new(1000.0, 0);
        p.advance();
        p.restart(5_000);
        assert_eq!(p.due_ns(), 5_000);
        p.advance();
        assert_eq!(p.due_ns(), 1_005_000);
    }
}

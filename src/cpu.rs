//! CPU time of the whole process (every thread, kernel threads of its io_uring rings included), for
//! "CPU per I/O" figures: `getrusage(RUSAGE_SELF)` user and system time.

use serde::Serialize;
use std::time::Duration;

/// User and system CPU time consumed so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTimes {
    pub user: Duration,
    pub system: Duration,
}

impl CpuTimes {
    /// The process's CPU time so far; zero if the kernel refuses (it does not for RUSAGE_SELF).
    pub fn now() -> CpuTimes {
        use nix::sys::resource::{UsageWho, getrusage};
        use nix::sys::time::TimeValLike;
        let Ok(ru) = getrusage(UsageWho::RUSAGE_SELF) else { return CpuTimes::default() };
        let tv = |t: nix::sys::time::TimeVal| Duration::from_micros(t.num_microseconds().max(0) as u64);
        CpuTimes { user: tv(ru.user_time()), system: tv(ru.system_time()) }
    }

    /// What was used between `earlier` and `self`.
    pub fn since(self, earlier: CpuTimes) -> CpuTimes {
        CpuTimes { user: self.user.saturating_sub(earlier.user), system: self.system.saturating_sub(earlier.system) }
    }
}

/// CPU used by a run, and the I/Os it completed in that time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct CpuUsage {
    pub user_ns: u64,
    pub sys_ns: u64,
    /// I/Os completed while the time was counted (ramp included, errors included).
    pub ios: u64,
}

impl CpuUsage {
    pub fn new(t: CpuTimes, ios: u64) -> CpuUsage {
        CpuUsage { user_ns: t.user.as_nanos() as u64, sys_ns: t.system.as_nanos() as u64, ios }
    }

    /// User plus system nanoseconds per I/O; `None` without I/Os.
    pub fn ns_per_io(&self) -> Option<f64> {
        (self.ios > 0).then(|| (self.user_ns + self.sys_ns) as f64 / self.ios as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_work_shows_up_as_user_time() {
        // Spin until the process has been charged 20 ms of CPU: on a loaded machine that takes
        // longer in wall time, but it must happen (within a generous bound) if the counter works.
        let t0 = CpuTimes::now();
        let mut x = 1u64;
        let start = std::time::Instant::now();
        let used = loop {
            for _ in 0..100_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
            let used = CpuTimes::now().since(t0);
            if used.user + used.system >= Duration::from_millis(20) {
                break used;
            }
            assert!(start.elapsed() < Duration::from_secs(30), "no CPU time charged after 30 s: {used:?}");
        };
        std::hint::black_box(x);
        let u = CpuUsage::new(used, 10);
        assert!(u.ns_per_io().unwrap() >= 2e6);
        assert_eq!(CpuUsage::default().ns_per_io(), None);
    }
}

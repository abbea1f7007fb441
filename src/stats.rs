//! Counters and latency histograms per direction, and how they merge.
//!
//! Every histogram in the program has the same fixed bounds ([`HIST_LOWEST_NS`]..[`HIST_HIGHEST_NS`]
//! at [`HIST_SIGFIGS`] significant digits), so merging with `+=` can never fail and recording never
//! allocates. Values beyond the top are clamped to it and counted in `clamped`, not dropped. Exact
//! min, max and sum are kept beside the histogram because its buckets round them.

use crate::io::Direction;
use crate::io::IoError;
use hdrhistogram::Histogram;
use std::ops::AddAssign;

/// Lowest distinguishable latency: 1 ns.
pub const HIST_LOWEST_NS: u64 = 1;
/// Highest trackable latency: one hour. Anything slower is clamped (and counted).
pub const HIST_HIGHEST_NS: u64 = 3_600_000_000_000;
/// Three significant digits: 0.1% relative error, as fio's and SPDK perf's percentile tables.
pub const HIST_SIGFIGS: u8 = 3;

/// A histogram with the program-wide bounds.
pub fn new_histogram() -> Histogram<u64> {
    let mut h = Histogram::new_with_bounds(HIST_LOWEST_NS, HIST_HIGHEST_NS, HIST_SIGFIGS)
        .expect("the bounds are constants that hdrhistogram accepts");
    h.auto(false);
    h
}

/// One direction's results over some period.
#[derive(Clone, Debug)]
pub struct DirStats {
    pub ios: u64,
    pub bytes: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    pub sum_ns: u128,
    /// Latencies over [`HIST_HIGHEST_NS`], recorded as the top value.
    pub clamped: u64,
    pub hist: Histogram<u64>,
}

impl Default for DirStats {
    fn default() -> Self {
        DirStats { ios: 0, bytes: 0, min_ns: u64::MAX, max_ns: 0, sum_ns: 0, clamped: 0, hist: new_histogram() }
    }
}

impl DirStats {
    /// Records `count` I/Os of `bytes_each` that all took `latency_ns`.
    #[inline]
    pub fn record(&mut self, latency_ns: u64, count: u64, bytes_total: u64) {
        self.ios += count;
        self.bytes += bytes_total;
        self.min_ns = self.min_ns.min(latency_ns);
        self.max_ns = self.max_ns.max(latency_ns);
        self.sum_ns += u128::from(latency_ns) * u128::from(count);
        let v = if latency_ns > HIST_HIGHEST_NS {
            self.clamped += count;
            HIST_HIGHEST_NS
        } else {
            latency_ns
        };
        self.hist.record_n(v, count).expect("value is within the histogram's fixed bounds");
    }

    /// Counts `count` I/Os of `bytes_total` bytes whose latency was not measured (`--latency
    /// off`): min, max, sum and the histogram stay as they are.
    #[inline]
    pub fn count(&mut self, count: u64, bytes_total: u64) {
        self.ios += count;
        self.bytes += bytes_total;
    }

    pub fn reset(&mut self) {
        self.ios = 0;
        self.bytes = 0;
        self.min_ns = u64::MAX;
        self.max_ns = 0;
        self.sum_ns = 0;
        self.clamped = 0;
        // An empty histogram is all zeroes already; clearing one is a pass over every bucket
        // (hundreds of KiB), which most directions of most intervals would pay for nothing.
        if !self.hist.is_empty() {
            self.hist.reset();
        }
    }

    /// Exact mean latency, or 0 without I/O.
    pub fn mean_ns(&self) -> f64 {
        if self.ios == 0 { 0.0 } else { self.sum_ns as f64 / self.ios as f64 }
    }

    /// Latency at percentile `p` (0-100), from the histogram.
    pub fn percentile_ns(&self, p: f64) -> u64 {
        if self.hist.is_empty() {
            return 0;
        }
        self.hist.value_at_quantile(p / 100.0).min(self.max_ns)
    }

    /// Standard deviation of latency, from the histogram.
    pub fn stddev_ns(&self) -> f64 {
        if self.hist.is_empty() { 0.0 } else { self.hist.stdev() }
    }
}

impl AddAssign<&DirStats> for DirStats {
    fn add_assign(&mut self, o: &DirStats) {
        self.ios += o.ios;
        self.bytes += o.bytes;
        self.min_ns = self.min_ns.min(o.min_ns);
        self.max_ns = self.max_ns.max(o.max_ns);
        self.sum_ns += o.sum_ns;
        self.clamped += o.clamped;
        // Adding walks every bucket of `o`; an empty one adds nothing.
        if !o.hist.is_empty() {
            self.hist.add(&o.hist).expect("all histograms share the same bounds");
        }
    }
}

/// How many distinct error kinds are kept apart before the rest are lumped as "other".
pub const ERROR_KINDS: usize = 16;

/// I/O errors by kind, in a fixed array so counting one never allocates.
#[derive(Clone, Debug, Default)]
pub struct ErrorCounts {
    kinds: [Option<(IoError, u64)>; ERROR_KINDS],
    /// Errors of kinds beyond the first [`ERROR_KINDS`].
    pub other: u64,
    /// Errors per direction.
    pub by_dir: [u64; Direction::COUNT],
    /// Failed I/Os that were retried (`--on-error retry:N`); not counted as errors.
    pub retried: u64,
}

impl ErrorCounts {
    #[cold]
    pub fn count(&mut self, dir: Direction, e: IoError, n: u64) {
        self.by_dir[dir as usize] += n;
        self.add_kind(e, n);
    }

    fn add_kind(&mut self, e: IoError, n: u64) {
        for k in self.kinds.iter_mut() {
            match k {
                Some((kind, c)) if *kind == e => {
                    *c += n;
                    return;
                }
                None => {
                    *k = Some((e, n));
                    return;
                }
                _ => {}
            }
        }
        self.other += n;
    }

    pub fn total(&self) -> u64 {
        self.by_dir.iter().sum()
    }

    /// `(kind, count)`, most frequent first.
    pub fn kinds(&self) -> Vec<(IoError, u64)> {
        let mut v: Vec<_> = self.kinds.iter().flatten().copied().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }

    pub fn reset(&mut self) {
        *self = ErrorCounts::default();
    }
}

impl AddAssign<&ErrorCounts> for ErrorCounts {
    fn add_assign(&mut self, o: &ErrorCounts) {
        for &(kind, n) in o.kinds.iter().flatten() {
            self.add_kind(kind, n);
        }
        self.other += o.other;
        self.retried += o.retried;
        for (a, b) in self.by_dir.iter_mut().zip(o.by_dir) {
            *a += b;
        }
    }
}

/// Every direction's results and the errors over some period: what a worker hands the coordinator
/// each interval. Indexed by [`Direction`]; a direction the workload never issues stays empty.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub dir: [DirStats; Direction::COUNT],
    pub errors: ErrorCounts,
}

impl Stats {
    pub fn read(&self) -> &DirStats {
        &self.dir[Direction::Read as usize]
    }

    pub fn write(&self) -> &DirStats {
        &self.dir[Direction::Write as usize]
    }

    pub fn of(&self, dir: Direction) -> &DirStats {
        &self.dir[dir as usize]
    }

    pub fn ios(&self) -> u64 {
        self.dir.iter().map(|d| d.ios).sum()
    }

    /// Every direction summed (for whole-run figures such as `compare`'s).
    pub fn all(&self) -> DirStats {
        let mut all = self.dir[0].clone();
        for d in &self.dir[1..] {
            all += d;
        }
        all
    }

    pub fn reset(&mut self) {
        for d in &mut self.dir {
            d.reset();
        }
        self.errors.reset();
    }
}

impl AddAssign<&Stats> for Stats {
    fn add_assign(&mut self, o: &Stats) {
        for (a, b) in self.dir.iter_mut().zip(&o.dir) {
            *a += b;
        }
        self.errors += &o.errors;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn exact_min_max_mean() {
        let mut d = DirStats::default();
        d.record(100, 1, 4096);
        d.record(300, 3, 3 * 4096);
        assert_eq!((d.ios, d.bytes, d.min_ns, d.max_ns), (4, 16384, 100, 300));
        assert_eq!(d.mean_ns(), 250.0);
        assert_eq!(d.percentile_ns(50.0), 300);
        assert_eq!(d.percentile_ns(25.0), 100);
    }

    #[test]
    fn percentiles_are_within_the_histogram_precision() {
        let mut d = DirStats::default();
        for v in 1..=100_000u64 {
            d.record(v * 10, 1, 512);
        }
        for p in [50.0, 90.0, 99.0, 99.9, 99.99] {
            let exact = (p / 100.0 * 100_000.0_f64).ceil() * 10.0;
            let got = d.percentile_ns(p) as f64;
            assert!((got - exact).abs() / exact < 0.001, "p{p}: {got} vs {exact}");
        }
        let sd = d.stddev_ns();
        let exact_sd = 10.0 * ((100_000f64.powi(2) - 1.0) / 12.0).sqrt();
        assert!((sd - exact_sd).abs() / exact_sd < 0.002, "{sd} vs {exact_sd}");
    }

    #[test]
    fn huge_latencies_are_clamped_not_lost() {
        let mut d = DirStats::default();
        d.record(HIST_HIGHEST_NS * 10, 2, 0);
        assert_eq!(d.clamped, 2);
        assert_eq!(d.max_ns, HIST_HIGHEST_NS * 10);
        assert_eq!(d.hist.len(), 2);
    }

    #[test]
    fn long_run_counters_do_not_overflow() {
        let mut d = DirStats::default();
        // A year at 10M IOPS, each I/O one second: the sum is far beyond u64, fine in u128.
        let ios = 10_000_000u64 * 86_400 * 365;
        d.record(1_000_000_000, ios, 0);
        d.record(1_000_000_000, ios, 0);
        assert_eq!(d.ios, 2 * ios);
        assert_eq!(d.mean_ns(), 1e9);
    }

    #[test]
    fn errors_are_counted_by_kind() {
        let mut e = ErrorCounts::default();
        let eio = IoError::Errno { errno: 5 };
        e.count(Direction::Read, eio, 1);
        e.count(Direction::Write, eio, 2);
        e.count(Direction::Write, IoError::Nvme { sct: 0, sc: 2 }, 1);
        assert_eq!(e.total(), 4);
        assert_eq!(e.kinds(), vec![(eio, 3), (IoError::Nvme { sct: 0, sc: 2 }, 1)]);
        let mut sum = ErrorCounts::default();
        sum += &e;
        sum += &e;
        assert_eq!(sum.total(), 8);
        assert_eq!(sum.by_dir, [2, 6, 0, 0, 0]);
        assert_eq!(sum.kinds()[0], (eio, 6));
        for errno in 0..40 {
            e.count(Direction::Read, IoError::Errno { errno: 100 + errno }, 1);
        }
        assert_eq!(e.other, 40 - (ERROR_KINDS as u64 - 2));
    }

    proptest! {
        /// Splitting a run's latencies across workers and merging the parts equals recording them
        /// all in one place: counts, exact fields and every percentile.
        #[test]
        fn merging_splits_equals_the_whole(
            lats in prop::collection::vec(0u64..50_000_000, 1..2000),
            parts in 1usize..8,
        ) {
            let mut whole = Stats::default();
            let mut split: Vec<Stats> = (0..parts).map(|_| Stats::default()).collect();
            for (i, &l) in lats.iter().enumerate() {
                let dir = (l % Direction::COUNT as u64) as usize;
                whole.dir[dir].record(l, 1, 4096);
                split[i % parts].dir[dir].record(l, 1, 4096);
            }
            let mut merged = Stats::default();
            for s in &split {
                merged += s;
            }
            for d in 0..Direction::COUNT {
                let (a, b) = (&whole.dir[d], &merged.dir[d]);
                prop_assert_eq!(a.ios, b.ios);
                prop_assert_eq!(a.bytes, b.bytes);
                prop_assert_eq!(a.min_ns, b.min_ns);
                prop_assert_eq!(a.max_ns, b.max_ns);
                prop_assert_eq!(a.sum_ns, b.sum_ns);
                prop_assert_eq!(&a.hist, &b.hist);
                for p in [0.0, 50.0, 99.0, 99.99, 100.0] {
                    prop_assert_eq!(a.percentile_ns(p), b.percentile_ns(p));
                }
            }
        }
    }
}

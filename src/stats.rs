//! Counters and latency histograms per direction, and how they merge.
//!
//! Every histogram in the program has the same fixed bounds ([`HIST_LOWEST_NS`]..[`HIST_HIGHEST_NS`]
//! at [`HIST_SIGFIGS`] significant digits), so merging with `+=` can never fail and recording never
//! allocates. Values beyond the top are clamped to it and counted in `clamped`, not dropped. Exact
//! min, max, sum and sum of squares are kept beside the histogram because its buckets round them:
//! the mean and the standard deviation come from those sums, as fio computes its own from every
//! sample, and merge exactly because sums add.

use crate::io::Direction;
use crate::io::IoError;
use hdrhistogram::Histogram;
use std::ops::AddAssign;

/// Lowest distinguishable latency: 1 ns.
pub const HIST_LOWEST_NS: u64 = 1;
/// Highest trackable latency: one hour. Anything slower is clamped (and counted).
pub const HIST_HIGHEST_NS: u64 = 3_600_000_000_000;
/// Three significant digits: every nanosecond up to 2047 ns, then 1024 buckets per power of two
/// (from 2^k ns up, each 2^(k-10) ns wide: 1/1024 to 1/2048 of its values), and a percentile is
/// its bucket's upper end, so at most 0.1% (1/1024) above the latency it stands for. The peers are
/// coarser: fio keeps 64 buckets per power of two (`FIO_IO_U_PLAT_BITS` 6 in fio's stat.h: each
/// 1/64 to 1/128 of its values wide, 0.78-1.56%) and reports a bucket's middle, within 1/128
/// (0.78%) of the value either way, and tracks up to 2^34 ns (17 s); SPDK perf keeps 128 per power
/// of two (`SPDK_HISTOGRAM_GRANULARITY_DEFAULT` 7 in include/spdk/histogram_data.h: each 1/128 to
/// 1/256 of its values wide, 0.39-0.78%) of TSC ticks and prints a bucket's upper end, up to 1/128
/// (0.78%) above the value. Percentiles compared with either differ by up to that tool's
/// resolution plus ours with nothing wrong on either side.
pub const HIST_SIGFIGS: u8 = 3;

/// A histogram with the program-wide bounds.
pub fn new_histogram() -> Histogram<u64> {
    let mut h = Histogram::new_with_bounds(HIST_LOWEST_NS, HIST_HIGHEST_NS, HIST_SIGFIGS)
        .expect("the bounds are constants that hdrhistogram accepts");
    h.auto(false);
    h
}

/// Histogram counts kept in a plain array indexed as the histogram indexes its buckets, so that
/// recording one latency is an index computation and an increment (hdrhistogram's own record also
/// tracks its min, max and total and checks for resizing, which `DirStats` does not need per I/O:
/// it keeps the exact min and max itself). [`DirStats::settle`] moves the counts into the
/// histogram, bucket by bucket, which gives the histogram a record would have given.
pub struct HistTally {
    counts: Box<[u64]>,
}

/// Sub-buckets per power of two at [`HIST_SIGFIGS`] (2048: 2 x 10^3 rounded up to a power of two),
/// as a shift; the histogram's buckets use the upper half of each power of two but the first.
const TALLY_HALF_BITS: u32 = 10;
/// hdrhistogram's `leading_zero_count_base` for a lowest value of 1 ns (unit magnitude 0).
const TALLY_LZ_BASE: u32 = 64 - TALLY_HALF_BITS - 1;
const TALLY_SUB_MASK: u64 = (1 << (TALLY_HALF_BITS + 1)) - 1;

impl HistTally {
    /// A tally for the program-wide histogram bounds.
    pub fn new() -> HistTally {
        let len = new_histogram().distinct_values();
        debug_assert!(Self::index(HIST_HIGHEST_NS) < len, "the tally indexes as hdrhistogram does");
        HistTally { counts: vec![0; len].into_boxed_slice() }
    }

    /// A tally that counts nothing: [`DirStats::record_tallied`] records straight into the
    /// histogram (for directions a worker never issues, which need no array).
    pub fn none() -> HistTally {
        HistTally { counts: Box::new([]) }
    }

    /// hdrhistogram's bucket index of `v` for the program-wide bounds (`index_for`).
    #[inline(always)]
    fn index(v: u64) -> usize {
        let bucket = TALLY_LZ_BASE - (v | TALLY_SUB_MASK).leading_zeros();
        let sub = v >> bucket;
        (((bucket + 1) as usize) << TALLY_HALF_BITS) + sub as usize - (1 << TALLY_HALF_BITS)
    }

    /// The lowest value of bucket `index` (hdrhistogram's `value_for`).
    fn value(index: usize) -> u64 {
        let half = 1usize << TALLY_HALF_BITS;
        let bucket = (index >> TALLY_HALF_BITS) as i64 - 1;
        let sub = (index & (half - 1)) + half;
        if bucket < 0 { (sub - half) as u64 } else { (sub as u64) << bucket }
    }

    /// Counts `v` (at most [`HIST_HIGHEST_NS`]); false when this tally counts nothing.
    #[inline(always)]
    fn count(&mut self, v: u64) -> bool {
        match self.counts.get_mut(Self::index(v)) {
            Some(c) => {
                *c += 1;
                true
            }
            None => false,
        }
    }

    /// Records every count between the buckets of `lo` and `hi` (the values counted lie there)
    /// into `hist`, and zeroes them.
    fn drain_into(&mut self, hist: &mut Histogram<u64>, lo: u64, hi: u64) {
        if self.counts.is_empty() || lo > hi {
            return;
        }
        for i in Self::index(lo)..=Self::index(hi) {
            let c = std::mem::take(&mut self.counts[i]);
            if c > 0 {
                hist.record_n(Self::value(i), c).expect("a bucket's own value is within the bounds");
            }
        }
    }
}

impl Default for HistTally {
    fn default() -> Self {
        HistTally::new()
    }
}

/// One direction's results over some period.
#[derive(Clone, Debug)]
pub struct DirStats {
    pub ios: u64,
    pub bytes: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    pub sum_ns: u128,
    /// The sum of every latency squared (ns²), for the exact standard deviation. [`SUM_SQ_UNKNOWN`]
    /// when it is not known: a document written without it, or (beyond any real run) a sum past
    /// u128; the deviation then comes from the histogram.
    pub sum_sq_ns2: u128,
    /// Latencies over [`HIST_HIGHEST_NS`], recorded as the top value.
    pub clamped: u64,
    pub hist: Histogram<u64>,
}

impl Default for DirStats {
    fn default() -> Self {
        DirStats {
            ios: 0,
            bytes: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            sum_ns: 0,
            sum_sq_ns2: 0,
            clamped: 0,
            hist: new_histogram(),
        }
    }
}

/// [`DirStats::sum_sq_ns2`] when the sum of squares is not known. Saturating arithmetic keeps it
/// so through records and merges.
pub const SUM_SQ_UNKNOWN: u128 = u128::MAX;

/// The sample standard deviation (divided by n - 1, as fio's `calc_lat`) of `n` values whose sum
/// is `sum` and sum of squares `sum_sq`, exact but for the last rounding to `f64`; `None` when the
/// sums cannot belong to `n` values (the squares' sum below what the sum implies) or are unknown.
pub fn exact_stddev(n: u64, sum: u128, sum_sq: u128) -> Option<f64> {
    if sum_sq == SUM_SQ_UNKNOWN {
        return None;
    }
    if n < 2 {
        return Some(0.0);
    }
    let n128 = u128::from(n);
    // sum = q n + r, so sum_sq - sum^2 / n = (sum_sq - q^2 n - 2 q r) - r^2 / n: the first part in
    // integers, without the overflow of sum^2, and the last, below n, in floating point.
    let (q, r) = (sum / n128, sum % n128);
    let m2_int = q
        .checked_mul(q)
        .and_then(|qq| qq.checked_mul(n128))
        .and_then(|a| q.checked_mul(r).and_then(|qr| qr.checked_mul(2)).and_then(|b| a.checked_add(b)))
        .and_then(|sub| sum_sq.checked_sub(sub))?;
    // Integers have n (sum_sq - sum^2 / n) = n m2_int - r^2 >= 0; r < n, so m2_int >= r settles
    // it and below that both sides fit in u128.
    if m2_int < r && m2_int * n128 < r * r {
        return None;
    }
    let m2 = m2_int as f64 - (r as f64) * (r as f64) / n as f64;
    Some((m2.max(0.0) / (n - 1) as f64).sqrt())
}

impl DirStats {
    /// Records `count` I/Os of `bytes_each` that all took `latency_ns`.
    #[inline]
    pub fn record(&mut self, latency_ns: u64, count: u64, bytes_total: u64) {
        self.ios += count;
        self.bytes += bytes_total;
        self.min_ns = self.min_ns.min(latency_ns);
        self.max_ns = self.max_ns.max(latency_ns);
        let l = u128::from(latency_ns);
        self.sum_ns += l * u128::from(count);
        // l * l cannot overflow (both below 2^64); only the sum of a run past any physical one can.
        self.sum_sq_ns2 = self.sum_sq_ns2.saturating_add((l * l).saturating_mul(u128::from(count)));
        let v = if latency_ns > HIST_HIGHEST_NS {
            self.clamped += count;
            HIST_HIGHEST_NS
        } else {
            latency_ns
        };
        self.hist.record_n(v, count).expect("value is within the histogram's fixed bounds");
    }

    /// [`record`](Self::record) of one I/O, its histogram count kept in `tally` until
    /// [`settle`](Self::settle) moves it into the histogram: the worker's booking of a completion.
    #[inline(always)]
    pub fn record_tallied(&mut self, latency_ns: u64, bytes: u64, tally: &mut HistTally) {
        self.ios += 1;
        self.bytes += bytes;
        self.min_ns = self.min_ns.min(latency_ns);
        self.max_ns = self.max_ns.max(latency_ns);
        let l = u128::from(latency_ns);
        self.sum_ns += l;
        self.sum_sq_ns2 = self.sum_sq_ns2.saturating_add(l * l);
        let v = if latency_ns > HIST_HIGHEST_NS {
            self.clamped += 1;
            HIST_HIGHEST_NS
        } else {
            latency_ns
        };
        if !tally.count(v) {
            self.hist.record(v).expect("value is within the histogram's fixed bounds");
        }
    }

    /// Moves what `tally` counted since the last settle into the histogram, and empties it.
    pub fn settle(&mut self, tally: &mut HistTally) {
        if self.ios > 0 {
            tally.drain_into(&mut self.hist, self.min_ns, self.max_ns.min(HIST_HIGHEST_NS));
        }
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
        self.sum_sq_ns2 = 0;
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

    /// Sample standard deviation of latency (over n - 1, as fio's), exact from the sums; from the
    /// histogram's buckets only when the sum of squares is unknown (a document written before it
    /// was kept). 0 for fewer than two I/Os, as fio writes it.
    pub fn stddev_ns(&self) -> f64 {
        if self.ios < 2 {
            return 0.0;
        }
        exact_stddev(self.ios, self.sum_ns, self.sum_sq_ns2).unwrap_or_else(|| {
            let n = self.hist.len() as f64;
            if n < 2.0 { 0.0 } else { self.hist.stdev() * (n / (n - 1.0)).sqrt() }
        })
    }

    /// Whether [`stddev_ns`](Self::stddev_ns) is exact (the sum of squares is known).
    pub fn stddev_is_exact(&self) -> bool {
        self.sum_sq_ns2 != SUM_SQ_UNKNOWN
    }
}

impl AddAssign<&DirStats> for DirStats {
    fn add_assign(&mut self, o: &DirStats) {
        self.ios += o.ios;
        self.bytes += o.bytes;
        self.min_ns = self.min_ns.min(o.min_ns);
        self.max_ns = self.max_ns.max(o.max_ns);
        self.sum_ns += o.sum_ns;
        self.sum_sq_ns2 = self.sum_sq_ns2.saturating_add(o.sum_sq_ns2);
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
    /// Errors `--on-error continue:...` went on after (fio's non-fatal errors); the run's exit
    /// status leaves them out, as fio's does.
    pub continued: u64,
    /// Errors of a type `--on-error continue:...` names, continued or not: fio's `total_err`.
    pub typed: u64,
    /// The first of those (fio's `first_error`).
    pub first_typed: Option<IoError>,
    /// The error that stopped the job, if one did (fio's `error` when not continued).
    pub fatal: Option<IoError>,
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
        self.continued += o.continued;
        self.typed += o.typed;
        self.first_typed = self.first_typed.or(o.first_typed);
        self.fatal = self.fatal.or(o.fatal);
        for (a, b) in self.by_dir.iter_mut().zip(o.by_dir) {
            *a += b;
        }
    }
}

/// fio's submission and completion latencies per direction (`--latency split`), beside the total
/// in [`Stats::dir`]. `slat` holds no I/O of a synchronous engine (fio records none for those).
#[derive(Clone, Debug, Default)]
pub struct SplitStats {
    pub slat: [DirStats; Direction::COUNT],
    pub clat: [DirStats; Direction::COUNT],
}

impl SplitStats {
    pub fn reset(&mut self) {
        for d in self.slat.iter_mut().chain(&mut self.clat) {
            d.reset();
        }
    }
}

impl AddAssign<&SplitStats> for SplitStats {
    fn add_assign(&mut self, o: &SplitStats) {
        for (a, b) in self.slat.iter_mut().zip(&o.slat).chain(self.clat.iter_mut().zip(&o.clat)) {
            *a += b;
        }
    }
}

/// Every direction's results and the errors over some period: what a worker hands the coordinator
/// each interval. Indexed by [`Direction`]; a direction the workload never issues stays empty.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Per direction, the latency from just before the I/O was handed to the engine to its
    /// completion (fio's `lat`).
    pub dir: [DirStats; Direction::COUNT],
    pub errors: ErrorCounts,
    /// With `--latency split`: fio's `slat` and `clat` too (boxed: most runs keep none).
    pub split: Option<Box<SplitStats>>,
    /// Reads' and writes' latencies per I/O priority, when cmdprio chooses priorities (fio's
    /// `clat_prio`), in fio's order; empty otherwise. An I/O is counted in its direction's entry
    /// of its `IoPrio::value`.
    pub prios: [Vec<PrioStats>; 2],
}

/// One I/O priority's latencies in one direction (fio's `clat_prio_stat`).
#[derive(Clone, Debug, Default)]
pub struct PrioStats {
    /// The priority, `class << 13 | level`.
    pub value: u16,
    /// The total latency (fio's `lat`).
    pub lat: DirStats,
    /// fio's `clat`, with `--latency split`.
    pub clat: DirStats,
}

impl PrioStats {
    /// Books one I/O of `bytes` that took `total` ns, `clat` of it after submission (when split).
    #[inline]
    pub fn record(&mut self, total: u64, clat: Option<u64>, bytes: u64) {
        self.lat.record(total, 1, bytes);
        if let Some(c) = clat {
            self.clat.record(c, 1, bytes);
        }
    }
}

impl Stats {
    /// An empty set, with room for the split latencies when `split`.
    pub fn new(split: bool) -> Stats {
        Stats { split: split.then(Box::default), ..Stats::default() }
    }

    /// fio's `slat` of `dir`, when measured.
    pub fn slat(&self, dir: Direction) -> Option<&DirStats> {
        self.split.as_ref().map(|s| &s.slat[dir as usize])
    }

    /// fio's `clat` of `dir`, when measured.
    pub fn clat(&self, dir: Direction) -> Option<&DirStats> {
        self.split.as_ref().map(|s| &s.clat[dir as usize])
    }

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
        if let Some(s) = &mut self.split {
            s.reset();
        }
        for p in self.prios.iter_mut().flatten() {
            p.lat.reset();
            p.clat.reset();
        }
    }
}

impl AddAssign<&Stats> for Stats {
    fn add_assign(&mut self, o: &Stats) {
        for (a, b) in self.dir.iter_mut().zip(&o.dir) {
            *a += b;
        }
        self.errors += &o.errors;
        if let Some(b) = &o.split {
            **self.split.get_or_insert_with(Box::default) += &**b;
        }
        // By priority, as fio's sum_thread_stats merges clat_prio: a value new to this side is
        // appended, in the other side's order.
        for (mine, theirs) in self.prios.iter_mut().zip(&o.prios) {
            for p in theirs {
                match mine.iter_mut().find(|m| m.value == p.value) {
                    Some(m) => {
                        m.lat += &p.lat;
                        m.clat += &p.clat;
                    }
                    None => mine.push(p.clone()),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Booking through a tally and settling it gives what recording each value gives: the same
    /// histogram, bucket for bucket, and the same sums; a tally that counts nothing records directly.
    #[test]
    fn a_tallied_record_is_a_record() {
        let (mut direct, mut tallied, mut untallied) = (DirStats::default(), DirStats::default(), DirStats::default());
        let (mut tally, mut none) = (HistTally::new(), HistTally::none());
        let mut values = vec![0, 1, 2, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 1 << 20, HIST_HIGHEST_NS];
        values.extend([HIST_HIGHEST_NS + 1, u64::MAX]);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push(x >> (x % 64));
        }
        for &v in &values {
            direct.record(v, 1, 4096);
            tallied.record_tallied(v, 4096, &mut tally);
            untallied.record_tallied(v, 4096, &mut none);
        }
        tallied.settle(&mut tally);
        untallied.settle(&mut none);
        let sums = |d: &DirStats| (d.ios, d.bytes, d.min_ns, d.max_ns, d.sum_ns, d.sum_sq_ns2, d.clamped);
        for t in [&tallied, &untallied] {
            assert!(t.hist == direct.hist, "the same buckets, count, min and max");
            assert_eq!(sums(t), sums(&direct));
        }
        assert!(tally.counts.iter().all(|&c| c == 0), "settling empties the tally");
        tallied.settle(&mut tally);
        assert!(tallied.hist == direct.hist, "a second settle adds nothing");
    }
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
    }

    /// The layout HIST_SIGFIGS's documentation states: unit buckets below 2048 ns, then 1024 per
    /// power of two, and a percentile at its bucket's upper end, at most 1/1024 above the value.
    #[test]
    fn the_histogram_has_1024_buckets_per_power_of_two_above_2048_ns() {
        let h = new_histogram();
        assert_eq!(h.highest_equivalent(2047), 2047);
        for k in 11..40u32 {
            let base = 1u64 << k;
            let width = h.highest_equivalent(base) - h.lowest_equivalent(base) + 1;
            assert_eq!(width, base >> 10, "2^{k}: {width} ns wide");
            let top = (base << 1) - 1;
            assert!((h.highest_equivalent(base) - base) as f64 / base as f64 <= 1.0 / 1024.0);
            assert_eq!(h.highest_equivalent(top), top, "2^{k}: the last bucket ends at the next power");
        }
        let mut d = DirStats::default();
        d.record(3_000_001, 1, 0);
        d.record(9_000_000, 1, 0);
        let p = d.percentile_ns(50.0);
        assert_eq!(p, h.highest_equivalent(3_000_001), "the bucket's upper end");
        assert!(p > 3_000_001 && p - 3_000_001 < 3_000_001 / 1024, "{p}");
    }

    /// The deviation is exact, sample (n - 1) as fio's: 10, 20, ..., 10^6 ns has variance
    /// 100 (N^2 - 1) / 12 * N / (N - 1) = 100 N (N + 1) / 12.
    #[test]
    fn stddev_is_exact() {
        let mut d = DirStats::default();
        let n = 100_000u64;
        for v in 1..=n {
            d.record(v * 10, 1, 512);
        }
        let exact = (100.0 * n as f64 * (n + 1) as f64 / 12.0).sqrt();
        assert!((d.stddev_ns() - exact).abs() <= exact * 1e-12, "{} vs {exact}", d.stddev_ns());
        // Two values far above their spread, where bucket midpoints are off by more than the spread.
        let mut d = DirStats::default();
        d.record(1_000_000_001, 1, 0);
        d.record(1_000_000_003, 1, 0);
        assert_eq!(d.stddev_ns(), 2f64.sqrt());
        assert!(d.stddev_is_exact());
        let mut one = DirStats::default();
        one.record(5, 1, 0);
        assert_eq!(one.stddev_ns(), 0.0);
        assert_eq!(DirStats::default().stddev_ns(), 0.0);
        // Without the squares (an older document), the histogram's estimate, over n - 1 too.
        d.sum_sq_ns2 = SUM_SQ_UNKNOWN;
        assert!(!d.stddev_is_exact());
        assert!(d.stddev_ns().is_finite());
    }

    #[test]
    fn exact_stddev_refuses_impossible_sums() {
        // Three values summing to 30 have squares summing to at least 300.
        assert_eq!(exact_stddev(3, 30, 299), None);
        assert_eq!(exact_stddev(3, 30, 300), Some(0.0));
        assert_eq!(exact_stddev(2, 3, 5), Some(0.5f64.sqrt()));
        assert_eq!(exact_stddev(2, u128::MAX - 1, 7), None);
        assert_eq!(exact_stddev(5, 1, SUM_SQ_UNKNOWN), None);
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
                prop_assert_eq!(a.sum_sq_ns2, b.sum_sq_ns2);
                prop_assert_eq!(a.stddev_ns().to_bits(), b.stddev_ns().to_bits());
                prop_assert_eq!(&a.hist, &b.hist);
                for p in [0.0, 50.0, 99.0, 99.99, 100.0] {
                    prop_assert_eq!(a.percentile_ns(p), b.percentile_ns(p));
                }
            }
        }
    }
}

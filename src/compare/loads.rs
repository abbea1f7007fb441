//! `compare --rates` and `--curve`: the loads every engine is offered, and, per load, which engine
//! has the lowest p99 and which the lowest CPU, named only beyond the noise of the figures.
//!
//! The arithmetic lives here, apart from the plumbing in `compare`, so that it can be tested on
//! numbers alone.

use crate::options::Load;
use crate::stats::DirStats;

/// The curve's loads, in percent of the slowest engine's closed-loop maximum (VDBench's `curve`:
/// 10 to 100 in steps of 10).
pub const CURVE_PERCENTS: [u32; 10] = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100];

/// An engine is a candidate at a paced load only if it achieved at least this share of it: one
/// that falls behind is queueing, and the CPU it spent on fewer I/Os is no saving.
pub const REACHED: f64 = 0.95;

/// Below this relative difference no engine is called lowest, whatever the intervals say: the
/// intervals are those of one run (independent samples, counter resolution), and runs on a
/// shared machine differ by more.
pub const MIN_MARGIN: f64 = 0.05;

/// z for a two-sided 95% interval.
const Z95: f64 = 1.96;

/// How the verdicts are reached, for the reports.
pub const RULE: &str = "An engine is named lowest at a load only when its figure is at least 5% below every other candidate's and their uncertainty intervals do not overlap: for p99 the 95% distribution-free interval of the quantile from each run's own histogram (the order statistics at 99% +- 1.96 sqrt(0.99 * 0.01 / n)), for CPU +-1 tick of /proc/stat at each end of the window on each counted core. At a paced load, engines that achieved under 95% of it are not candidates; at max, CPU is compared per I/O. These are the noise of one run; runs on a busy machine differ by more, so compare rounds before trusting a small lead.";

/// The slowest engine's closed-loop IOPS, and the curve's loads at 10..100% of it; `None` when no
/// engine completed an I/O.
pub fn curve_loads(maxima: &[f64]) -> Option<(f64, Vec<Load>)> {
    let base = maxima.iter().copied().filter(|m| *m > 0.0).fold(f64::INFINITY, f64::min);
    if !base.is_finite() {
        return None;
    }
    let loads = CURVE_PERCENTS.iter().map(|p| Load::Iops((base * f64::from(*p) / 100.0).max(1.0))).collect();
    Some((base, loads))
}

/// Whether a run at `load` achieved it (the closed loop always does).
pub fn reached(load: Load, achieved_iops: f64) -> bool {
    load.iops().is_none_or(|offered| achieved_iops >= REACHED * offered)
}

/// The 95% interval of the `q` quantile (0..1) from a run's histogram: the values at the ranks
/// `n q -+ 1.96 sqrt(n q (1 - q))`, which hold the true quantile with 95% probability for
/// independent samples whatever their distribution; `None` without I/O.
pub fn quantile_interval(d: &DirStats, q: f64) -> Option<(f64, f64)> {
    if d.ios == 0 {
        return None;
    }
    let half = Z95 * (q * (1.0 - q) / d.ios as f64).sqrt();
    let lo = (q - half).clamp(0.0, 1.0);
    let hi = (q + half).clamp(0.0, 1.0);
    Some((d.percentile_ns(lo * 100.0) as f64, d.percentile_ns(hi * 100.0) as f64))
}

/// One engine's figure at a load, with its interval; `None` when it is no candidate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Figure {
    pub value: f64,
    pub lo: f64,
    pub hi: f64,
}

/// Which engine is lowest, or why none is.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// The engine at this index is lowest beyond the noise.
    Lowest(usize),
    /// The lowest (first) is not clear of the second: within 5% or overlapping intervals.
    Tie(usize, usize),
    /// No engine is a candidate.
    NoCandidate,
}

/// The verdict over `figures` (one per engine, `None` for those that are no candidates).
pub fn lowest(figures: &[Option<Figure>]) -> Verdict {
    let mut order: Vec<(usize, Figure)> = figures.iter().enumerate().filter_map(|(i, f)| f.map(|f| (i, f))).collect();
    order.sort_by(|a, b| a.1.value.total_cmp(&b.1.value));
    let Some(&(best, b)) = order.first() else { return Verdict::NoCandidate };
    match order[1..].iter().find(|(_, r)| r.lo <= b.hi || r.value < b.value * (1.0 + MIN_MARGIN)) {
        Some(&(rival, _)) => Verdict::Tie(best, rival),
        None => Verdict::Lowest(best),
    }
}

/// How a verdict reads: `lowest p99: uring (1.20ms)`, or why no engine is named.
pub fn describe(what: &str, v: &Verdict, names: &[String], show: &dyn Fn(usize) -> String) -> String {
    match v {
        Verdict::Lowest(i) => format!("lowest {what}: {} ({})", names[*i], show(*i)),
        Verdict::Tie(a, b) => format!(
            "lowest {what}: none beyond noise ({} {} and {} {} are within 5% or their intervals overlap)",
            names[*a],
            show(*a),
            names[*b],
            show(*b)
        ),
        Verdict::NoCandidate => format!("lowest {what}: none (no engine achieved the load with latencies measured)"),
    }
}

/// The uncertainty of a core count over a window: each counted core's `/proc/stat` counters move
/// in whole ticks, so its busy time can be off by about a tick at either end.
pub fn cores_margin(tick_ns: u64, counted_cores: usize, window_ns: u64) -> f64 {
    if window_ns == 0 {
        return f64::INFINITY;
    }
    2.0 * tick_ns as f64 * counted_cores as f64 / window_ns as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fig(value: f64, margin: f64) -> Option<Figure> {
        Some(Figure { value, lo: value - margin, hi: value + margin })
    }

    #[test]
    fn the_curve_is_a_tenth_to_all_of_the_slowest_maximum() {
        let (base, loads) = curve_loads(&[50_000.0, 0.0, 20_000.0, 90_000.0]).unwrap();
        assert_eq!(base, 20_000.0);
        assert_eq!(loads.len(), 10);
        assert_eq!(loads[0], Load::Iops(2_000.0));
        assert_eq!(loads[9], Load::Iops(20_000.0));
        assert!(curve_loads(&[0.0]).is_none() && curve_loads(&[]).is_none());
        // A very slow engine still gets a load of at least 1 IOPS.
        assert_eq!(curve_loads(&[3.0]).unwrap().1[0], Load::Iops(1.0));
    }

    #[test]
    fn a_paced_load_is_reached_at_95_percent() {
        assert!(reached(Load::Iops(1000.0), 950.0));
        assert!(!reached(Load::Iops(1000.0), 949.0));
        assert!(reached(Load::Max, 0.0));
    }

    #[test]
    fn the_lowest_is_named_only_clear_of_noise() {
        // Clear: 10% lower and intervals apart.
        assert_eq!(lowest(&[fig(110.0, 1.0), fig(100.0, 1.0), fig(130.0, 1.0)]), Verdict::Lowest(1));
        // Intervals overlap: 100 +- 6 against 110 +- 6.
        assert_eq!(lowest(&[fig(110.0, 6.0), fig(100.0, 6.0)]), Verdict::Tie(1, 0));
        // Intervals apart but under 5% lower.
        assert_eq!(lowest(&[fig(104.0, 0.1), fig(100.0, 0.1)]), Verdict::Tie(1, 0));
        // Exactly 5% lower is enough.
        assert_eq!(lowest(&[fig(105.0, 0.1), fig(100.0, 0.1)]), Verdict::Lowest(1));
        // Non-candidates do not count, one candidate is the lowest, none is none.
        assert_eq!(lowest(&[None, fig(100.0, 50.0), None]), Verdict::Lowest(1));
        assert_eq!(lowest(&[None, None]), Verdict::NoCandidate);
        // The rival named in a tie is the one that is not clear, not merely the second.
        assert_eq!(lowest(&[fig(100.0, 1.0), fig(120.0, 1.0), fig(101.0, 30.0)]), Verdict::Tie(0, 2));
        let names = ["uring".to_string(), "aio".to_string(), "psync".to_string()];
        let v = describe("p99", &Verdict::Tie(0, 2), &names, &|i| format!("{i}us"));
        assert_eq!(
            v,
            "lowest p99: none beyond noise (uring 0us and psync 2us are within 5% or their intervals overlap)"
        );
    }

    #[test]
    fn the_quantile_interval_narrows_with_more_samples() {
        // Latencies 1..=n µs: the p99 interval spans about 2 * 1.96 * sqrt(0.0099 / n) of the range.
        let mut small = DirStats::default();
        let mut large = DirStats::default();
        for i in 1..=1_000u64 {
            small.record(i * 1000, 1, 4096);
        }
        for i in 1..=100_000u64 {
            large.record(i * 10, 1, 4096);
        }
        let (lo, hi) = quantile_interval(&small, 0.99).unwrap();
        // n = 1000: ranks 0.99 -+ 0.00617, i.e. about 984 to 996 µs.
        assert!((982_000.0..=986_000.0).contains(&lo), "{lo}");
        assert!((995_000.0..=997_500.0).contains(&hi), "{hi}");
        let (lo, hi) = quantile_interval(&large, 0.99).unwrap();
        // n = 100000: 0.99 -+ 0.000617 of 1 ms: about 989.4 to 990.6 µs.
        assert!((989_000.0..=989_700.0).contains(&lo), "{lo}");
        assert!((990_300.0..=991_200.0).contains(&hi), "{hi}");
        assert!(quantile_interval(&DirStats::default(), 0.99).is_none());
    }

    #[test]
    fn a_core_count_is_uncertain_by_two_ticks_per_core_over_the_window() {
        // 10 ms ticks, 3 cores, 2 s: 60 ms of 2 s = 0.03 cores.
        assert!((cores_margin(10_000_000, 3, 2_000_000_000) - 0.03).abs() < 1e-12);
        assert!(cores_margin(10_000_000, 1, 0).is_infinite());
    }
}

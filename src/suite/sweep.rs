//! Threads × queue-depth sweeps: the points to visit, and what to mark on the results (the point of
//! peak IOPS and the knee of the latency curve).
//!
//! The knee: walking the points in order of I/Os outstanding (threads × queue depth, then threads),
//! the first point whose mean latency grew, relative to the point before, by more than its IOPS did
//! (latency/latency_prev > IOPS/IOPS_prev) and by at least [`KNEE_MIN_RISE`]. By Little's law, while
//! the device scales, more outstanding I/O buys IOPS at an unchanged latency; past the knee it buys
//! mostly queueing. The minimum rise keeps noise on a flat latency curve from being called a knee.
//! This module runs nothing; `exec` does.

use crate::report::{format_count, format_latency};
use serde::Serialize;

/// A latency rise smaller than this (10%) is not a knee, whatever the IOPS did.
pub const KNEE_MIN_RISE: f64 = 0.10;

/// The reviews' scaling grid, 2T/2Q to 16T/16Q.
pub const REVIEW_SWEEP: &str = "2..16x2..16";

/// One point to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Point {
    pub threads: usize,
    pub qd: u32,
}

/// Parses `2x2,2x4,4x16` (threads x queue depth), or ranges of powers of two, `2..16x2..16`
/// (threads 2, 4, 8, 16 with each queue depth 2, 4, 8, 16), or a mix of both, comma-separated.
///
/// # Errors
/// One sentence naming the bad item and the form to use.
pub fn parse(text: &str) -> Result<Vec<Point>, String> {
    let mut out: Vec<Point> = Vec::new();
    for item in text.split(',').map(str::trim) {
        let bad = || {
            format!(
                "'{item}' is not a sweep point; write THREADSxQD like 2x16, or powers-of-two ranges like 2..16x2..16"
            )
        };
        let (t, q) = item.split_once(['x', 'X']).ok_or_else(bad)?;
        let ts = range(t, 4096).ok_or_else(bad)?;
        let qs = range(q, 65536).ok_or_else(bad)?;
        for &threads in &ts {
            for &qd in &qs {
                let p = Point { threads: threads as usize, qd: qd as u32 };
                if out.contains(&p) {
                    return Err(format!("sweep point {}x{} is listed twice; list each point once", p.threads, p.qd));
                }
                out.push(p);
            }
        }
    }
    Ok(out)
}

/// `8` → [8]; `2..16` → [2, 4, 8, 16] (both ends powers of two, or the start 1).
fn range(text: &str, max: u64) -> Option<Vec<u64>> {
    let num = |s: &str| s.trim().parse::<u64>().ok().filter(|v| (1..=max).contains(v));
    match text.split_once("..") {
        None => num(text).map(|v| vec![v]),
        Some((a, b)) => {
            let (a, b) = (num(a)?, num(b)?);
            if a > b || !a.is_power_of_two() || !b.is_power_of_two() {
                return None;
            }
            Some(std::iter::successors(Some(a), |v| Some(v * 2)).take_while(|v| *v <= b).collect())
        }
    }
}

/// One measured point.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Measured {
    pub threads: usize,
    pub qd: u32,
    pub iops: f64,
    pub mean_ns: f64,
    pub max_ns: f64,
    pub stddev_ns: f64,
    pub p99_ns: f64,
}

/// The index of the point with the most IOPS.
pub fn peak(points: &[Measured]) -> Option<usize> {
    (0..points.len()).max_by(|&a, &b| points[a].iops.total_cmp(&points[b].iops))
}

/// The index of the knee (see the module documentation), if the curve has one.
pub fn knee(points: &[Measured]) -> Option<usize> {
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by_key(|&i| (points[i].threads as u64 * u64::from(points[i].qd), points[i].threads));
    order.windows(2).find_map(|w| {
        let (a, b) = (&points[w[0]], &points[w[1]]);
        if a.mean_ns <= 0.0 || a.iops <= 0.0 {
            return None;
        }
        let lat = b.mean_ns / a.mean_ns;
        let iops = b.iops / a.iops;
        (lat > iops && lat >= 1.0 + KNEE_MIN_RISE).then_some(w[1])
    })
}

/// Whether the points form a whole grid (every listed thread count with every listed depth), and
/// if so its axes in ascending order.
pub fn grid(points: &[Measured]) -> Option<(Vec<usize>, Vec<u32>)> {
    let mut ts: Vec<usize> = points.iter().map(|p| p.threads).collect();
    let mut qs: Vec<u32> = points.iter().map(|p| p.qd).collect();
    ts.sort_unstable();
    ts.dedup();
    qs.sort_unstable();
    qs.dedup();
    (ts.len() * qs.len() == points.len()).then_some((ts, qs))
}

/// The table printed after a sweep: one row per point, peak and knee marked.
pub fn table(label: &str, points: &[Measured]) -> String {
    let (pk, kn) = (peak(points), knee(points));
    let mut out = format!(
        "sweep {label}\n{:>8} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
        "TxQ", "IOPS", "mean", "p99", "max", "stddev"
    );
    for (i, p) in points.iter().enumerate() {
        let mut marks = Vec::new();
        if Some(i) == pk {
            marks.push("peak IOPS");
        }
        if Some(i) == kn {
            marks.push("knee");
        }
        out.push_str(&format!(
            "{:>8} {:>10} {:>10} {:>10} {:>10} {:>10}{}\n",
            format!("{}x{}", p.threads, p.qd),
            format_count(p.iops),
            format_latency(p.mean_ns),
            format_latency(p.p99_ns),
            format_latency(p.max_ns),
            format_latency(p.stddev_ns),
            if marks.is_empty() { String::new() } else { format!("  <- {}", marks.join(", ")) }
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(threads: usize, qd: u32, iops: f64, mean_us: f64) -> Measured {
        Measured { threads, qd, iops, mean_ns: mean_us * 1e3, max_ns: 0.0, stddev_ns: 0.0, p99_ns: 0.0 }
    }

    #[test]
    fn parses_lists_and_ranges() {
        let p = parse("2x2,2x4,16x16").unwrap();
        assert_eq!(p, vec![Point { threads: 2, qd: 2 }, Point { threads: 2, qd: 4 }, Point { threads: 16, qd: 16 }]);
        let g = parse(REVIEW_SWEEP).unwrap();
        assert_eq!(g.len(), 16);
        assert_eq!((g[0], g[15]), (Point { threads: 2, qd: 2 }, Point { threads: 16, qd: 16 }));
        assert_eq!(parse("1..4x8").unwrap().len(), 3);
        assert!(parse("2x").unwrap_err().contains("'2x' is not a sweep point"));
        assert!(parse("3..16x2").is_err(), "ranges run over powers of two");
        assert!(parse("2x2,2x2").unwrap_err().contains("listed twice"));
        assert!(parse("0x4").is_err());
    }

    #[test]
    fn knee_is_where_latency_outgrows_iops() {
        // Scales linearly to 4 outstanding, then IOPS flattens and latency doubles.
        let pts = [
            m(1, 1, 10_000.0, 100.0),
            m(1, 2, 20_000.0, 100.0),
            m(1, 4, 39_000.0, 102.0),
            m(1, 8, 42_000.0, 190.0),
            m(1, 16, 43_000.0, 370.0),
        ];
        assert_eq!(knee(&pts), Some(3));
        assert_eq!(peak(&pts), Some(4));
        // Noise: latency wobbles by 5% while IOPS is flat; not a knee.
        let flat = [m(1, 1, 10_000.0, 100.0), m(1, 2, 10_000.0, 105.0), m(1, 4, 10_100.0, 100.0)];
        assert_eq!(knee(&flat), None);
        // Order is by outstanding I/O, not by listing.
        let shuffled = [pts[3], pts[0], pts[4], pts[1], pts[2]];
        assert_eq!(knee(&shuffled), Some(0));
        let t = table("x", &pts);
        assert!(t.lines().nth(5).unwrap().ends_with("<- knee"), "{t}");
        assert!(t.lines().nth(6).unwrap().ends_with("<- peak IOPS"), "{t}");
    }

    #[test]
    fn grids() {
        let pts: Vec<Measured> = parse("1..2x1..4").unwrap().iter().map(|p| m(p.threads, p.qd, 1.0, 1.0)).collect();
        assert_eq!(grid(&pts), Some((vec![1, 2], vec![1, 2, 4])));
        assert_eq!(grid(&pts[..5]), None);
    }
}

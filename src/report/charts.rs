//! The report's charts by name: which ones a set of results gets, built from `plot` and `bars`.
//!
//! The HTML page shows them section by section, and `report --format svg|png --chart NAME` writes
//! one of them alone, so both take them from here and a name means the same chart in both. Charts
//! that would mislead are left out rather than drawn: a single interval is no time series, a sweep
//! with one thread count has no heat map (its bars show it), one run needs no comparison.

use super::bars::{Bars, bars};
use super::load::{Interval, ResultSet, RunDoc, SteadyState, Sweep};
use super::plot::{self, PlotError, Series};
use super::rates;
use super::ticks::Unit;
use crate::stats::DirStats;

/// The fewest intervals that make a time series worth drawing.
pub const MIN_TIME_POINTS: usize = 3;
/// The directions as reports name them, in the order of `RunDoc::dirs` (and `doc::DIRECTIONS`).
pub const DIRECTION_LABELS: [&str; 5] = ["read", "write", "trim", "write-zeroes", "flush"];

/// One drawn chart.
#[derive(Clone, Debug)]
pub struct Chart {
    /// The name `--chart` takes and the page's element id: `percentiles`, `iops-bars`, `sweep-0`.
    pub name: String,
    pub svg: String,
    /// What the chart shows and how to read it.
    pub caption: String,
}

fn chart(name: impl Into<String>, svg: String, caption: &str) -> Chart {
    Chart { name: name.into(), svg, caption: caption.into() }
}

/// Every chart of `set`, in the page's order.
///
/// # Errors
/// A plot that cannot be drawn (which only bad numbers that `load` lets through could cause).
pub fn all(set: &ResultSet) -> Result<Vec<Chart>, PlotError> {
    let mut out = latency(&set.runs)?;
    out.extend(comparison(&set.runs)?);
    out.extend(over_time(&set.runs)?);
    out.extend(drive(&set.runs)?);
    out.extend(breakdown(&set.runs)?);
    out.extend(iorate(set)?);
    out.extend(frontiers(set)?);
    for (i, s) in set.sweeps.iter().enumerate() {
        out.extend(sweep(i, s)?);
    }
    for (i, s) in set.steady_state.iter().enumerate() {
        out.push(steady(i, s)?);
    }
    Ok(out)
}

/// Every run's directions with I/O, labelled `run read` / `run write`.
pub fn direction_series(runs: &[RunDoc]) -> Vec<(String, &DirStats)> {
    runs.iter()
        .flat_map(|r| {
            DIRECTION_LABELS
                .into_iter()
                .enumerate()
                .filter(|(i, _)| r.dirs[*i].ios > 0)
                .map(move |(i, name)| (format!("{} {name}", r.label), &r.dirs[i]))
        })
        .collect()
}

/// Percentiles, histogram and CDF of every run and direction.
pub fn latency(runs: &[RunDoc]) -> Result<Vec<Chart>, PlotError> {
    if runs.is_empty() {
        return Ok(Vec::new());
    }
    let dirs = direction_series(runs);
    Ok(vec![
        chart(
            "percentiles",
            plot::percentiles(&dirs)?,
            "Latency at each percentile from the whole histograms; the x axis is in nines, so the tail gets as much room as the median. Each line ends where its I/O count stops resolving further nines.",
        ),
        chart(
            "histogram",
            plot::histogram(&dirs)?,
            "Share of I/Os in each latency bucket, on a log scale so that rare slow I/Os show; buckets widen with latency (ten per decade).",
        ),
        chart("cdf", plot::cdf(&dirs)?, "Share of I/Os that completed at or below each latency."),
    ])
}

/// A figure of one direction over its run's elapsed nanoseconds.
type Figure = fn(&DirStats, u64) -> f64;

/// The figures the comparison charts show (chart name, what, unit), each from the whole histograms.
const COMPARED: [(&str, &str, Unit, Figure); 5] = [
    ("iops-bars", "IOPS", Unit::Count, |d, ns| rates(d, ns).0),
    ("mbps-bars", "bandwidth", Unit::BytesPerSecond, |d, ns| rates(d, ns).1),
    ("mean-bars", "mean latency", Unit::Latency, |d, _| d.mean_ns()),
    ("p99-bars", "p99 latency", Unit::Latency, |d, _| d.percentile_ns(99.0) as f64),
    ("p99.99-bars", "p99.99 latency", Unit::Latency, |d, _| d.percentile_ns(99.99) as f64),
];

/// Bars of IOPS, bandwidth, mean, p99 and p99.99 by run and direction, when there are runs to compare.
pub fn comparison(runs: &[RunDoc]) -> Result<Vec<Chart>, PlotError> {
    if runs.len() < 2 {
        return Ok(Vec::new());
    }
    let dirs: Vec<usize> = (0..DIRECTION_LABELS.len()).filter(|&i| runs.iter().any(|r| r.dirs[i].ios > 0)).collect();
    let mut out = Vec::new();
    for (name, what, unit, pick) in COMPARED {
        let values = runs
            .iter()
            .map(|r| dirs.iter().map(|&i| (r.dirs[i].ios > 0).then(|| pick(&r.dirs[i], r.elapsed_ns))).collect())
            .collect();
        let b = Bars {
            title: format!("{} by run", capitalise(what)),
            x_desc: "run".into(),
            y_desc: what.into(),
            unit,
            groups: runs.iter().map(|r| r.label.clone()).collect(),
            series: dirs.iter().map(|&i| DIRECTION_LABELS[i].to_string()).collect(),
            values,
        };
        out.push(chart(name, bars(&b)?, &format!("{} of each run, read and write side by side.", capitalise(what))));
    }
    Ok(out)
}

/// `s` with a capital first letter, except a percentile's name (`p99` stays `p99`).
fn capitalise(s: &str) -> String {
    if s.starts_with('p') && s[1..].starts_with(|c: char| c.is_ascii_digit()) {
        return s.to_string();
    }
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

/// IOPS, bandwidth and p99 per interval, when some run has enough intervals to make a line: a line
/// per run and direction, and for a run on several targets a line per target and direction too.
pub fn over_time(runs: &[RunDoc]) -> Result<Vec<Chart>, PlotError> {
    if !runs.iter().any(|r| r.doc.intervals.len() >= MIN_TIME_POINTS) {
        return Ok(Vec::new());
    }
    type Pick = fn(&super::load::DirInterval) -> f64;
    let make = |pick: Pick| -> Vec<Series> {
        let mut out = Vec::new();
        for r in runs.iter().filter(|r| r.doc.intervals.len() >= MIN_TIME_POINTS) {
            for (i, name) in DIRECTION_LABELS.into_iter().enumerate() {
                if r.dirs[i].ios > 0 {
                    let of = |p: &Interval| p.dir(i).unwrap_or_default();
                    let points = r.doc.intervals.iter().map(|p| (p.t_s, pick(&of(p)))).collect();
                    out.push(Series { label: format!("{} {name}", r.label), points });
                }
                // With several targets, each target's own line beside the run's total.
                for t in r.doc.results.targets.iter().filter(|t| t.intervals.len() == r.doc.intervals.len()) {
                    if t.dir(i).is_some_and(|d| d.ios > 0) {
                        let of = |p: &Interval| p.dir(i).unwrap_or_default();
                        let points = t.intervals.iter().map(|p| (p.t_s, pick(&of(p)))).collect();
                        out.push(Series { label: format!("{} {} {name}", r.label, t.path), points });
                    }
                }
            }
        }
        out
    };
    let mut p99 = make(|d| d.p99_ns as f64);
    for s in &mut p99 {
        s.points.retain(|p| p.1 > 0.0);
    }
    Ok(vec![
        chart(
            "iops-time",
            plot::time_series("IOPS per interval", "IOPS", Unit::Count, &make(|d| d.iops))?,
            "I/Os completed in each reporting interval, per second.",
        ),
        chart(
            "mbps-time",
            plot::time_series("Bandwidth per interval", "bandwidth", Unit::BytesPerSecond, &make(|d| d.bw_bytes))?,
            "Bandwidth in each interval (MB/s and GB/s are 10^6 and 10^9 bytes per second).",
        ),
        chart(
            "p99-time",
            plot::time_series("p99 latency per interval", "p99 latency", Unit::Latency, &p99)?,
            "The 99th percentile of each interval's latencies (log scale).",
        ),
    ])
}

/// The drives' composite temperature and throttle state over the run, from the documents' telemetry
/// samples, on the intervals' timeline.
pub fn drive(runs: &[RunDoc]) -> Result<Vec<Chart>, PlotError> {
    let (mut temps, mut states) = (Vec::new(), Vec::new());
    for r in runs {
        for t in r.doc.telemetry.iter().flat_map(|t| &t.targets).filter(|t| !t.samples.is_empty()) {
            let label = format!("{} {}", r.label, t.target);
            let points = t.samples.iter().filter_map(|s| Some((s.t_s, f64::from(s.temperature_c?)))).collect();
            temps.push(Series { label: label.clone(), points });
            // 1 while the drive throttled (thermal management counters grew since the sample before)
            // or held a critical warning, else 0.
            let mut prev = &t.samples[0];
            let points = t
                .samples
                .iter()
                .map(|s| {
                    let throttled = (0..2).any(|i| {
                        s.thermal_transitions[i] > prev.thermal_transitions[i]
                            || s.thermal_time_s[i] > prev.thermal_time_s[i]
                    });
                    prev = s;
                    (s.t_s, f64::from(u8::from(throttled || s.critical_warning != 0)))
                })
                .collect();
            states.push(Series { label, points });
        }
    }
    if temps.is_empty() {
        return Ok(Vec::new());
    }
    Ok(vec![
        chart(
            "temperature-time",
            plot::time_series("Drive composite temperature", "°C", Unit::Count, &temps)?,
            "The SMART / Health log's composite temperature at each telemetry sample (before, during and after the run).",
        ),
        chart(
            "throttle-time",
            plot::time_series("Drive throttling or critical warning", "1 = yes", Unit::Count, &states)?,
            "1 where the drive entered or spent time in thermal management since the previous sample, or held a critical warning bit.",
        ),
    ])
}

/// Per-worker IOPS (runs with several workers) and per-input IOPS (merged results).
pub fn breakdown(runs: &[RunDoc]) -> Result<Vec<Chart>, PlotError> {
    let mut out = Vec::new();
    let with_workers: Vec<&RunDoc> = runs.iter().filter(|r| worker_iops(r).len() > 1).collect();
    if !with_workers.is_empty() {
        let most = with_workers.iter().map(|r| worker_iops(r).len()).max().unwrap_or(0);
        let b = Bars {
            title: "IOPS by worker".into(),
            x_desc: "worker".into(),
            y_desc: "IOPS".into(),
            unit: Unit::Count,
            groups: (0..most).map(|w| format!("w{w}")).collect(),
            series: with_workers.iter().map(|r| r.label.clone()).collect(),
            values: (0..most).map(|w| with_workers.iter().map(|r| worker_iops(r).get(w).copied()).collect()).collect(),
        };
        out.push(chart(
            "workers",
            bars(&b)?,
            "Read and write IOPS of each worker; an uneven bar points at a slow core, a shared core or a NUMA miss.",
        ));
    }
    let merged: Vec<&RunDoc> = runs.iter().filter(|r| !input_iops(r).is_empty()).collect();
    if let Some(r) = merged.first().filter(|_| merged.len() == 1) {
        let inputs = input_iops(r);
        let b = Bars {
            title: format!("{}: IOPS by input", r.label),
            x_desc: "input (host, target)".into(),
            y_desc: "IOPS".into(),
            unit: Unit::Count,
            groups: inputs.iter().map(|(n, _)| n.clone()).collect(),
            series: vec![r.label.clone()],
            values: inputs.iter().map(|(_, v)| vec![Some(*v)]).collect(),
        };
        out.push(chart("inputs", bars(&b)?, "IOPS of each merged input over its own measured time."));
    }
    Ok(out)
}

/// Each worker's read plus write IOPS over its own measured time.
fn worker_iops(r: &RunDoc) -> Vec<f64> {
    let doc = serde_json::to_value(&r.doc.results.workers).unwrap_or_default();
    let workers = doc.as_array();
    workers
        .into_iter()
        .flatten()
        .map(|w| ["read", "write"].iter().filter_map(|d| w[d]["iops"].as_f64()).sum())
        .collect()
}

/// Each merged input's name and IOPS.
fn input_iops(r: &RunDoc) -> Vec<(String, f64)> {
    let doc = serde_json::to_value(r.doc.merged.as_ref().map(|m| &m.inputs)).unwrap_or_default();
    let inputs = doc.as_array();
    inputs
        .into_iter()
        .flatten()
        .map(|i| {
            let host = i["host"]["hostname"].as_str().unwrap_or("?");
            let target = i["config"]["target"]["path"].as_str().unwrap_or("");
            let secs = i["elapsed_ns"].as_f64().unwrap_or(0.0) / 1e9;
            let iops = if secs > 0.0 { i["ios"].as_f64().unwrap_or(0.0) / secs } else { 0.0 };
            (if target.is_empty() { host.to_string() } else { format!("{host} {target}") }, iops)
        })
        .collect()
}

/// The iorate curves, all on one chart.
pub fn iorate(set: &ResultSet) -> Result<Vec<Chart>, PlotError> {
    if set.iorate.is_empty() {
        return Ok(Vec::new());
    }
    Ok(vec![chart(
        "iorate-plot",
        plot::iorate(&set.iorate)?,
        "Mean (solid, circles) and p99 (dashed, triangles) latency at each achieved rate as the offered rate rises; the dashed vertical line marks where the curve stopped and by which rule.",
    )])
}

/// Each comparison at several loads: p99 against cores used per engine, one point per load with a
/// p99 and a cost.
pub fn frontiers(set: &ResultSet) -> Result<Vec<Chart>, PlotError> {
    let mut out = Vec::new();
    for (k, (label, loads)) in set.frontiers.iter().enumerate() {
        let mut lines: Vec<plot::FrontierLine> = Vec::new();
        for l in loads {
            for e in &l.engines {
                let p99 = e.lat_ns.get("99.0").copied().flatten();
                let Some((used, p99)) = e.cores_used.zip(p99) else { continue };
                let at = match lines.iter_mut().find(|f| f.engine == e.engine) {
                    Some(f) => f,
                    None => {
                        lines.push(plot::FrontierLine { engine: e.engine.clone(), points: Vec::new() });
                        lines.last_mut().expect("just pushed")
                    }
                };
                at.points.push((l.load.clone(), used, p99));
            }
        }
        if lines.is_empty() {
            continue;
        }
        out.push(chart(
            format!("frontier-{k}"),
            plot::frontier(&format!("{label}: p99 against cores used"), &lines)?,
            "The efficiency frontier: each engine's p99 latency (from each I/O's due time at paced loads) against the cores it used (the counted cores' busy time per second of the measured window), one point per offered load, labelled with the load; lower and further left is better. A point far right of another engine's at the same load is CPU spent polling.",
        ));
    }
    Ok(out)
}

/// A sweep's heat map (with two thread counts and two queue depths at least) and its bars of IOPS
/// and p99 by queue depth, one bar per thread count.
pub fn sweep(i: usize, s: &Sweep) -> Result<Vec<Chart>, PlotError> {
    let mut out = Vec::new();
    if s.threads.len() > 1 && s.queue_depths.len() > 1 {
        out.push(chart(format!("sweep-{i}"), plot::heat_map(s)?, "IOPS in each cell; darker is faster."));
    }
    let threads = match s.threads.as_slice() {
        [1] => " (1 thread)".to_string(),
        [t] => format!(" ({t} threads)"),
        _ => " and threads".to_string(),
    };
    let by_qd = |title: &str, what: &str, unit: Unit, m: &[Vec<f64>]| Bars {
        title: format!("{}: {title}", s.label),
        x_desc: "queue depth per thread".into(),
        y_desc: what.into(),
        unit,
        groups: s.queue_depths.iter().map(u64::to_string).collect(),
        series: s.threads.iter().map(|t| format!("{t} thread{}", if *t == 1 { "" } else { "s" })).collect(),
        values: (0..s.queue_depths.len()).map(|q| m.iter().map(|row| row.get(q).copied()).collect()).collect(),
    };
    out.push(chart(
        format!("sweep-{i}-iops"),
        bars(&by_qd(&format!("IOPS by queue depth{threads}"), "IOPS", Unit::Count, &s.iops))?,
        "IOPS at each queue depth, one bar per thread count.",
    ));
    if let Some(p99) = &s.p99_ns {
        out.push(chart(
            format!("sweep-{i}-p99"),
            bars(&by_qd(&format!("p99 by queue depth{threads}"), "p99 latency", Unit::Latency, p99))?,
            "p99 latency at each queue depth, one bar per thread count.",
        ));
    }
    Ok(out)
}

/// A steady-state series with its window and verdict.
pub fn steady(i: usize, s: &SteadyState) -> Result<Chart, PlotError> {
    Ok(chart(
        format!("steady-{i}"),
        plot::steady_state(s)?,
        "Each round's value; the shaded window holds the last rounds, with their average, the ±10% lines and the best-fit line.",
    ))
}

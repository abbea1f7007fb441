//! A fleet's text report, as rank 0 prints it: what the fleet was and how its gates opened, a table
//! with a row per host (told apart by rank where ranks shared a host) and direction, then the
//! fleet's rows, then every missing rank and every warning.
//!
//! It lays out documents `fleet::gather` merged; it decides nothing about them.

use super::columns::{self, Cell, Column, Kind};
use super::doc::FleetDoc;
use super::load::RunDoc;
use super::{format_latency, percentile_key, rates};
use crate::stats::DirStats;
use std::fmt::Write;

/// The report of `fleet` (the merged run, carrying its `fleet` block) and its merged `ranks`.
pub fn render(fleet: &RunDoc, ranks: &[RunDoc]) -> String {
    let mut out = String::new();
    let Some(f) = fleet.doc.fleet.as_ref() else { return out };
    header(&mut out, fleet, f);
    out.push('\n');
    for line in columns::render(&table(fleet, ranks)) {
        let _ = writeln!(out, "{line}");
    }
    let errors = fleet.errors_total();
    if errors > 0 {
        let _ = writeln!(out, "errors: {errors} I/Os failed across the fleet (each rank's result says which)");
    }
    for m in &f.missing {
        let _ = writeln!(out, "missing: {}", m.why);
    }
    for w in &f.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}

fn header(out: &mut String, fleet: &RunDoc, f: &FleetDoc) {
    let merged = f.ranks.iter().filter(|r| r.state == "merged").count();
    let mut launchers: Vec<&str> = f.ranks.iter().filter_map(|r| r.launcher.as_deref()).collect();
    launchers.sort_unstable();
    launchers.dedup();
    let _ = writeln!(
        out,
        "nvmebench {}: fleet of {} in {} ({}): {merged} of {} ranks merged, {} measured {:.2}s",
        env!("CARGO_PKG_VERSION"),
        f.size,
        f.dir,
        if launchers.is_empty() { "?".into() } else { launchers.join("+") },
        f.size,
        fleet.doc.engine.name,
        fleet.elapsed_ns as f64 / 1e9
    );
    let mut line = format!(
        "start {}.{:03}",
        super::html::utc(f.start_at_unix_ns / 1_000_000_000).trim_end_matches(" UTC"),
        f.start_at_unix_ns / 1_000_000 % 1000
    );
    let late: Vec<i64> = f.ranks.iter().filter_map(|r| r.gate_late_ns).collect();
    if let (Some(lo), Some(hi)) = (late.iter().min(), late.iter().max()) {
        let _ = write!(line, " UTC: gates opened {} to {} after it", signed(*lo), signed(*hi));
    }
    if let Some(s) = &f.largest_skew {
        let _ = write!(
            line,
            "; largest clock skew {} ± {} (ranks {} and {})",
            format_latency(s.skew_ns as f64),
            format_latency(s.uncertainty_ns as f64),
            s.ranks[0],
            s.ranks[1]
        );
    }
    let _ = writeln!(out, "{line}");
}

fn signed(ns: i64) -> String {
    if ns < 0 { format!("-{}", format_latency(ns.unsigned_abs() as f64)) } else { format_latency(ns as f64) }
}

fn table(fleet: &RunDoc, ranks: &[RunDoc]) -> Vec<Column> {
    let labels = super::charts::DIRECTION_LABELS;
    let dirs: Vec<usize> = (0..fleet.dirs.len()).filter(|&i| fleet.dirs[i].ios > 0).collect();
    let dirs = if dirs.is_empty() { vec![0] } else { dirs };
    let mut rows: Vec<(String, usize, &DirStats, u64)> = Vec::new();
    for r in ranks {
        rows.extend(dirs.iter().map(|&d| (r.label.clone(), d, &r.dirs[d], r.elapsed_ns)));
    }
    rows.extend(dirs.iter().map(|&d| ("fleet".to_string(), d, &fleet.dirs[d], fleet.elapsed_ns)));
    let col = |title: &str, kind: Kind, f: &dyn Fn(&DirStats, u64) -> Cell| Column {
        title: title.into(),
        kind,
        cells: rows.iter().map(|(_, _, s, e)| f(s, *e)).collect(),
    };
    let lat =
        |f: fn(&DirStats) -> f64| move |s: &DirStats, _: u64| if s.ios == 0 { Cell::Empty } else { Cell::Number(f(s)) };
    let mut cols = vec![
        Column {
            title: String::new(),
            kind: Kind::Text,
            cells: rows.iter().map(|x| Cell::Text(x.0.clone())).collect(),
        },
        Column {
            title: "dir".into(),
            kind: Kind::Text,
            cells: rows.iter().map(|x| Cell::Text(labels[x.1].into())).collect(),
        },
        col("IOPS", Kind::Count, &|s, e| Cell::Number(rates(s, e).0)),
        col("bw", Kind::DecimalRate, &|s, e| Cell::Number(rates(s, e).1)),
        col("I/Os", Kind::Whole, &|s, _| Cell::Number(s.ios as f64)),
        col("mean", Kind::Latency, &lat(DirStats::mean_ns)),
    ];
    for p in super::text::compact_percentiles(&fleet.percentiles()) {
        let title = format!("p{}", percentile_key(p).trim_end_matches(".0"));
        cols.push(col(&title, Kind::Latency, &move |s, _| {
            if s.ios == 0 { Cell::Empty } else { Cell::Number(s.percentile_ns(p) as f64) }
        }));
    }
    cols.push(col("max", Kind::Latency, &lat(|s| s.max_ns as f64)));
    cols
}

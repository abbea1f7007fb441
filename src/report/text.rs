//! The human report: a header, then a table with a row per worker and direction and a total row per
//! direction (compact by default, every column with `--wide`), then errors, CPU cost and notes.

use super::columns::{self, Cell, Column, Kind};
use super::{format_latency, percentile_key, rates};
use crate::config::{RunConfig, format_core_list};
use crate::coordinator::RunResult;
use crate::io::Direction;
use crate::stats::{DirStats, ErrorCounts};
use crate::units::format_size;
use crate::verify::{Mismatch, MismatchKind};
use std::fmt::Write;

/// How wide the table is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Width {
    /// IOPS, MB/s, mean, p50 and the percentiles from p99 up (five at most) and max: fits 100
    /// columns.
    #[default]
    Compact,
    /// Every column: MiB/s and MB/s, I/O count, min, mean, max, stddev and every percentile.
    Wide,
}

/// Renders the whole text report.
pub fn render(cfg: &RunConfig, r: &RunResult, clock_source: &str, width: Width) -> String {
    let mut out = header(cfg, r, clock_source);
    out.push('\n');
    for line in columns::render(&table(cfg, r, width)) {
        out.push_str(&line);
        out.push('\n');
    }
    let _ = writeln!(out, "{}", errors_line(&r.total.errors));
    if !cfg.latency.stamps() {
        let _ = writeln!(out, "latency: not measured (--latency off: I/Os counted, none stamped)");
    }
    cost_lines(&mut out, r);
    cpu_lines(&mut out, r);
    spdk_lines(&mut out, r);
    placement_line(&mut out, r);
    worker_notes(&mut out, cfg, r);
    verify_lines(&mut out, cfg, r);
    let clamped: u64 = r.total.dir.iter().map(|d| d.clamped).sum();
    if clamped > 0 {
        let _ = writeln!(
            out,
            "{clamped} I/Os took over an hour; the histogram holds them at one hour (min/max/mean are exact)"
        );
    }
    out
}

/// The tool, engine and target line, the workload line, and how the run ended.
fn header(cfg: &RunConfig, r: &RunResult, clock_source: &str) -> String {
    let mut out = String::new();
    let w = &cfg.workload;
    let target = match &cfg.target {
        Some(t) if cfg.scratch => format!("scratch {}", t.describe()),
        Some(t) => t.describe(),
        None => "no target".into(),
    };
    let _ = writeln!(out, "nvmebench {}: {} on {target}", env!("CARGO_PKG_VERSION"), r.engine);
    if cfg.targets.len() > 1 {
        // The first is on the line above; the rest, and how workers were placed on them.
        for (i, t) in cfg.targets.iter().enumerate().skip(1) {
            let _ = writeln!(out, "target {i}: {}", t.describe());
        }
        let placement = if cfg.each_worker_all_targets {
            "every worker drives every target"
        } else {
            "targets dealt round-robin over the workers"
        };
        let _ =
            writeln!(out, "{} targets, {placement}, qd {} per worker per target", cfg.targets.len(), cfg.queue_depth);
    }
    let mut line = format!("{} bs={}", w.rw, w.bs_text());
    if w.rw.is_mixed() && w.mix.beyond_read_write() {
        let _ = write!(line, " rwmix={}", w.mix.to_arg());
    } else if w.rw.is_mixed() {
        let _ = write!(line, " rwmixread={}", w.read_percent());
    }
    let _ = write!(
        line,
        " qd={} workers={} (cores {}) range={}+{}",
        cfg.queue_depth,
        cfg.cores.len(),
        format_core_list(&cfg.cores),
        format_size(w.range_start),
        format_size(w.range_bytes)
    );
    if w.rw.is_random() {
        let _ = write!(line, " dist={}", w.random_dist);
    }
    if let Some(rate) = cfg.rate_iops {
        let _ = write!(line, " rate={rate}iops");
    }
    let _ = write!(line, "{}", pacing_words(cfg));
    let _ = writeln!(out, "{line} measured={:.2}s seed={:#x} clock={clock_source}", r.elapsed_ns as f64 / 1e9, w.seed);
    if let Some(sig) = r.interrupted_by {
        let _ = writeln!(out, "interrupted by signal {sig}: partial results");
    }
    if let Some(f) = &r.failure {
        let _ = writeln!(out, "run failed: {f}; partial results");
    }
    for e in &r.events {
        let _ = writeln!(out, "event: {e}");
    }
    for line in r.telemetry.iter().flat_map(super::telemetry::text_lines) {
        let _ = writeln!(out, "telemetry: {line}");
    }
    out
}

/// The pacing and buffer options in effect, in fio's words: ` rate=100m,20m/s per worker
/// rate_process=poisson thinktime=100.00µs every 4 I/Os completed buffers=compress50%,dedupe30%`; a run
/// without pacing says nothing of it, and a run that writes always says what its buffers hold.
fn pacing_words(cfg: &RunConfig) -> String {
    let (w, mut out) = (&cfg.workload, String::new());
    let p = &w.pacing;
    if p.rate.is_set() {
        let _ = write!(out, " rate={}/s per worker", p.rate.to_fio());
    }
    if p.rate.is_set() || cfg.rate_iops.is_some() {
        let _ = write!(out, " rate_process={}", p.rate_process);
    }
    if let Some(t) = p.thinktime {
        let _ = write!(out, " thinktime={}", format_latency(t.think.as_nanos() as f64));
        if !t.spin.is_zero() {
            let _ = write!(out, "(spin {})", format_latency(t.spin.as_nanos() as f64));
        }
        let _ = write!(out, " every {} I/O{} {}", t.blocks, if t.blocks == 1 { "" } else { "s" }, t.count.counted());
    }
    if w.writes() {
        let b = w.buffers;
        let _ = write!(out, " buffers=");
        let _ = match (b.compress_percent, b.dedupe_percent) {
            (0, 0) => write!(out, "random"),
            (c, 0) => write!(out, "compress{c}%"),
            (0, d) => write!(out, "dedupe{d}%"),
            (c, d) => write!(out, "compress{c}%,dedupe{d}%"),
        };
    }
    out
}

/// The percentiles a compact table shows: the median and the tail from p99, five at most.
pub(super) fn compact_percentiles(all: &[f64]) -> Vec<f64> {
    all.iter().copied().filter(|p| *p == 50.0 || *p >= 99.0).take(5).collect()
}

/// A row per worker and direction (when there are several workers), then a total row per direction.
fn table(cfg: &RunConfig, r: &RunResult, width: Width) -> Vec<Column> {
    let w = &cfg.workload;
    let dirs: Vec<Direction> =
        Direction::ALL.into_iter().filter(|&d| w.mix.issues(d) || r.total.of(d).ios > 0).collect();
    let mut rows: Vec<(String, Direction, &DirStats, u64)> = Vec::new();
    let several = r.targets.len() > 1;
    if r.workers.len() > 1 {
        for wr in &r.workers {
            let elapsed = wr.summary.as_ref().map_or(0, |s| s.measured_ns);
            let name = if several {
                format!("worker {} target {}", wr.thread, wr.target)
            } else {
                format!("worker {}", wr.index)
            };
            rows.extend(dirs.iter().map(|&d| (name.clone(), d, &wr.stats.dir[d as usize], elapsed)));
        }
    }
    if several {
        for t in &r.targets {
            rows.extend(
                dirs.iter().map(|&d| (format!("target {}", t.index), d, &t.stats.dir[d as usize], t.elapsed_ns)),
            );
        }
    }
    rows.extend(dirs.iter().map(|&d| ("total".to_string(), d, &r.total.dir[d as usize], r.elapsed_ns)));
    let percentiles = match width {
        Width::Compact => compact_percentiles(&cfg.percentiles),
        Width::Wide => cfg.percentiles.clone(),
    };
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
            cells: rows.iter().map(|x| Cell::Text(x.1.label().into())).collect(),
        },
        col("IOPS", Kind::Count, &|s, e| Cell::Number(rates(s, e).0)),
    ];
    if width == Width::Wide {
        cols.push(col("bw", Kind::BinaryRate, &|s, e| Cell::Number(rates(s, e).1)));
    }
    cols.push(col("bw", Kind::DecimalRate, &|s, e| Cell::Number(rates(s, e).1)));
    if width == Width::Wide {
        cols.push(col("ios", Kind::Whole, &|s, _| Cell::Number(s.ios as f64)));
    }
    if !cfg.latency.stamps() {
        // Nothing was stamped: no latency column at all, rather than zeroes (see `cost_lines`).
        return cols;
    }
    if width == Width::Wide {
        cols.push(col("min", Kind::Latency, &lat(|s| s.min_ns as f64)));
    }
    cols.push(col("mean", Kind::Latency, &lat(DirStats::mean_ns)));
    for p in percentiles {
        let title = format!("p{}", percentile_key(p).trim_end_matches(".0"));
        cols.push(col(&title, Kind::Latency, &move |s, _| {
            if s.ios == 0 { Cell::Empty } else { Cell::Number(s.percentile_ns(p) as f64) }
        }));
    }
    cols.push(col("max", Kind::Latency, &lat(|s| s.max_ns as f64)));
    if width == Width::Wide {
        cols.push(col("stddev", Kind::Latency, &lat(DirStats::stddev_ns)));
    }
    cols
}

/// What the run cost over its measured window: the counted cores (and why each is counted), the
/// worker threads, and the benchmark's own timing.
fn cost_lines(out: &mut String, r: &RunResult) {
    for line in r.cost.as_ref().map(cost_text).unwrap_or_default() {
        let _ = writeln!(out, "{line}");
    }
}

/// The cost block's lines, shared with `compare`.
pub fn cost_text(c: &crate::cost::RunCost) -> Vec<String> {
    let mut lines = Vec::new();
    let secs = c.window_ns as f64 / 1e9;
    let per_io = |v: Option<f64>| v.map_or("-".to_string(), format_latency);
    let share = |ns: u64| if c.window_ns > 0 { ns as f64 / c.window_ns as f64 } else { 0.0 };
    if let Some(k) = &c.cores {
        let which: Vec<String> =
            k.counted.iter().map(|core| format!("{} ({})", core.core, core.why.join(", "))).collect();
        lines.push(format!(
            "cost: {:.3} cores used = {} CPU per I/O over {secs:.2} s on cores {} [user {:.3}, system {:.3}, irq {:.3}, softirq {:.3}; /proc/stat, {} ms ticks]",
            k.cores_used,
            per_io(k.ns_per_io),
            which.join(", "),
            share(k.user_ns),
            share(k.system_ns),
            share(k.irq_ns),
            share(k.softirq_ns),
            c.tick_ns / 1_000_000,
        ));
    }
    let per_worker: Vec<String> = c
        .workers
        .iter()
        .map(|w| {
            let core = match (w.core, w.core_used) {
                (Some(n), Some(u)) => format!(", core {n} {u:.2} busy"),
                _ => String::new(),
            };
            format!("w{} {:.3}{core}", w.worker, w.cores_used)
        })
        .collect();
    lines.push(format!(
        "cost: worker threads {:.3} cores (user {:.3} + sys {:.3}) = {} per I/O [{}]",
        c.threads.cores_used,
        share(c.threads.user_ns),
        share(c.threads.sys_ns),
        per_io(c.threads.ns_per_io),
        per_worker.join("; ")
    ));
    if let Some(t) = &c.timing {
        lines.push(match t.share_of_worker_time {
            Some(s) => format!(
                "timing: {} per I/O, {:.1}% of this run's worker time (two clock reads and a histogram record on this CPU)",
                format_latency(t.ns_per_io),
                100.0 * s
            ),
            None => format!(
                "timing: none (latency off); stamping would cost {} per I/O on this CPU",
                format_latency(t.ns_per_io)
            ),
        });
    }
    lines
}

/// The whole process's CPU per I/O from the gate to the end (ramp, drain, coordinator and helper
/// threads included); the measured window's figures are the cost lines above it.
fn cpu_lines(out: &mut String, r: &RunResult) {
    if let Some(per_io) = r.cpu.ns_per_io() {
        let _ = writeln!(
            out,
            "cpu: process {:.3} s user + {:.3} s sys from start to end for {} I/Os (ramp included) = {} per I/O",
            r.cpu.user_ns as f64 / 1e9,
            r.cpu.sys_ns as f64 / 1e9,
            r.cpu.ios,
            format_latency(per_io)
        );
    }
}

/// The SPDK engine's busy time (polled workers) and NUMA placement, a line each.
fn spdk_lines(out: &mut String, r: &RunResult) {
    let Some(d) = super::json::spdk_doc(r) else { return };
    let name = |worker: usize, target: Option<usize>| match target {
        Some(t) => format!("w{worker}/t{t}"),
        None => format!("w{worker}"),
    };
    if let Some(b) = &d.busy {
        let measured = b.busy_ns + b.idle_ns;
        let share = if measured > 0 { 100.0 * b.busy_ns as f64 / measured as f64 } else { 0.0 };
        let mut line = format!(
            "spdk busy: {} per I/O, {:.3} s of {:.3} s measured ({share:.1}%) in {} polls that reaped",
            format_latency(b.busy_ns_per_io),
            b.busy_ns as f64 / 1e9,
            measured as f64 / 1e9,
            b.busy_polls
        );
        if b.workers.len() > 1 {
            let per: Vec<String> = b
                .workers
                .iter()
                .map(|w| format!("{} {}", name(w.worker, w.target), format_latency(w.busy_ns_per_io)))
                .collect();
            let _ = write!(line, " [{}]", per.join(", "));
        }
        let _ = writeln!(
            out,
            "{line}; a poll that reaped a completion is busy for its whole span, one that reaped none adds nothing (not perf -m's busy %, which books the loop pass before a productive poll as busy: computed as perf does, {:.2}%)",
            b.perf_busy_pct
        );
    }
    let node = |n: Option<i32>| n.map_or("unknown".to_string(), |n| n.to_string());
    let mut controllers: Vec<(&str, Option<i32>)> = Vec::new();
    for n in &d.numa {
        if !controllers.iter().any(|(c, _)| *c == n.controller) {
            controllers.push((&n.controller, n.controller_node));
        }
    }
    if !d.numa.is_empty() {
        let ctrl: Vec<String> = controllers.iter().map(|(c, n)| format!("'{c}' node {}", node(*n))).collect();
        let lanes: Vec<String> = d
            .numa
            .iter()
            .map(|n| {
                let core = n.core.map_or("?".to_string(), |c| c.to_string());
                let sq = n.sq_node.map(|s| format!(", submission queue node {s}")).unwrap_or_default();
                format!(
                    "{} core {core} node {}, buffers node {}{sq}",
                    name(n.worker, n.target),
                    node(n.core_node),
                    node(n.buffer_node)
                )
            })
            .collect();
        let _ = writeln!(out, "spdk numa: controller {}; {}", ctrl.join(", "), lanes.join("; "));
    }
}

/// Where the threads ran, in one line: whether the workers had their cores to themselves.
fn placement_line(out: &mut String, r: &RunResult) {
    let Some(p) = &r.placement else { return };
    let others: Vec<String> = p.threads.iter().filter(|t| !t.worker).map(|t| t.name.clone()).collect();
    let cores = format_core_list(&p.housekeeping_cores);
    let _ = if p.workers_alone {
        writeln!(
            out,
            "threads: workers alone on their cores; {} other threads ({}) on cores {cores}",
            others.len(),
            others.join(", ")
        )
    } else {
        writeln!(
            out,
            "threads: no core is free of workers, so {} other threads ({}) share the workers' cores {cores}; their work can delay a worker",
            others.len(),
            others.join(", ")
        )
    };
}

/// I/Os lost in flight and each worker's first error.
/// `2`, or with several targets `2 on /dev/nvme1n1`.
fn lane_name(cfg: &RunConfig, w: &crate::coordinator::WorkerResult) -> String {
    match cfg.targets.get(w.target).filter(|_| cfg.targets.len() > 1) {
        Some(t) => format!("{} on {}", w.thread, t.path.display()),
        None => w.index.to_string(),
    }
}

fn worker_notes(out: &mut String, cfg: &RunConfig, r: &RunResult) {
    for wr in &r.workers {
        let Some(s) = &wr.summary else { continue };
        if s.lost_in_flight > 0 {
            let _ = writeln!(
                out,
                "worker {}: {} I/Os still in flight after --drain-timeout {:?}; the device may be hung",
                lane_name(cfg, wr),
                s.lost_in_flight,
                cfg.drain_timeout
            );
        }
        if let (Some(t), Some(depth)) = (&cfg.latency_target, s.latency_depth) {
            let line = super::fio::latency_target_line(t, depth);
            let _ = writeln!(out, "worker {}: {line}", lane_name(cfg, wr));
        }
        if let Some(f) = &s.first_error {
            let _ = writeln!(
                out,
                "worker {}: first error: {} on {} of {} bytes at offset {}",
                lane_name(cfg, wr),
                f.error,
                f.dir.name(),
                f.len,
                f.offset
            );
        }
    }
}

fn verify_lines(out: &mut String, cfg: &RunConfig, r: &RunResult) {
    let Some(v) = &r.verify else { return };
    let ios = r.total.ios().max(1);
    let _ = writeln!(
        out,
        "verify: {} block checks, {} failed on {} blocks{}; stamping and checking took {:.0} ns per I/O inside the measured window, so the figures above include it (the re-read after the run is not in them)",
        v.units_checked,
        v.mismatch_count,
        v.mismatches.len(),
        if v.read_errors > 0 { format!(", {} verify-pass reads failed", v.read_errors) } else { String::new() },
        v.cost_ns as f64 / ios as f64
    );
    for m in v.mismatches.iter().take(10) {
        // With several targets, each line names the target first.
        let on = m.target.map_or_else(String::new, |t| {
            cfg.targets.get(t).map_or_else(|| format!("target {t}: "), |x| format!("{}: ", x.path.display()))
        });
        let _ = writeln!(out, "  {on}{}", describe_mismatch(m));
    }
    if v.mismatches.len() > 10 {
        let _ = writeln!(out, "  ... {} more blocks (listed in the JSON)", v.mismatches.len() - 10);
    }
}

/// One line per mismatch: where, what was expected, what was found.
pub fn describe_mismatch(m: &Mismatch) -> String {
    let what = match m.kind {
        MismatchKind::Foreign => "no nvmebench header: overwritten by something else, or never written".to_string(),
        MismatchKind::Misdirected { found_offset } => {
            format!("misdirected write: holds the data of offset {found_offset}")
        }
        MismatchKind::LostWrite { found_generation } => format!("lost write: found generation {found_generation}"),
        MismatchKind::FutureGeneration { found_generation } => {
            format!("generation {found_generation} from a write that reported failure")
        }
        MismatchKind::Stale { found_seed } => format!("stale data from another run (seed {found_seed:#x})"),
        MismatchKind::Payload { first, last, bytes } => {
            format!("torn or corrupted: {bytes} bytes differ between bytes {first} and {last} of the block")
        }
    };
    format!("offset {} (expected generation {}): {what}", m.offset, m.expected_generation)
}

fn errors_line(e: &ErrorCounts) -> String {
    let retried = if e.retried > 0 { format!(" ({} failed I/Os retried)", e.retried) } else { String::new() };
    if e.total() == 0 {
        return format!("errors: none{retried}");
    }
    let by_dir: Vec<String> = Direction::ALL
        .iter()
        .filter(|&&d| d.moves_data() || e.by_dir[d as usize] > 0)
        .map(|&d| format!("{} {}", d.label(), e.by_dir[d as usize]))
        .collect();
    let mut s = format!("errors: {} ({})", e.total(), by_dir.join(", "));
    for (kind, n) in e.kinds() {
        let _ = write!(s, "; {n} x {kind}");
    }
    if e.other > 0 {
        let _ = write!(s, "; {} of other kinds", e.other);
    }
    s + &retried
}

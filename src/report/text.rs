//! The human table: one header, then a row per worker and direction and a total row per direction.

use super::{format_count, format_latency, percentile_key, rates};
use crate::config::{RunConfig, format_core_list};
use crate::coordinator::RunResult;
use crate::io::Direction;
use crate::stats::{DirStats, ErrorCounts};
use crate::units::format_size;
use crate::verify::{Mismatch, MismatchKind};
use std::fmt::Write;

/// Renders the whole text report.
pub fn render(cfg: &RunConfig, r: &RunResult, clock_source: &str) -> String {
    let mut out = String::new();
    let w = &cfg.workload;
    let target = match &cfg.target {
        Some(t) if cfg.scratch => format!("scratch {}", t.describe()),
        Some(t) => t.describe(),
        None => "no target".into(),
    };
    let _ = writeln!(out, "nvmebench {}: {} on {target}", env!("CARGO_PKG_VERSION"), r.engine);
    let bs = if w.read_percent == 100 {
        w.bs_read.to_fio()
    } else if w.read_percent == 0 {
        w.bs_write.to_fio()
    } else if w.bs_read == w.bs_write {
        w.bs_read.to_fio()
    } else {
        format!("{},{}", w.bs_read.to_fio(), w.bs_write.to_fio())
    };
    let mut line = format!("{} bs={bs}", w.rw);
    if w.rw.is_mixed() {
        let _ = write!(line, " rwmixread={}", w.read_percent);
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
    out.push('\n');

    let mut header = format!(
        "{:<10} {:<5} {:>10} {:>9} {:>9} {:>11} {:>9} {:>9} {:>9} {:>9}",
        "", "dir", "IOPS", "MiB/s", "MB/s", "ios", "min", "mean", "max", "stddev"
    );
    for p in &cfg.percentiles {
        let _ = write!(header, " {:>9}", format!("p{}", percentile_key(*p).trim_end_matches(".0")));
    }
    let _ = writeln!(out, "{header}");

    let show_workers = r.workers.len() > 1;
    let dirs: Vec<Direction> = Direction::ALL
        .into_iter()
        .filter(|d| match d {
            Direction::Read => w.read_percent > 0,
            Direction::Write => w.read_percent < 100,
        })
        .collect();
    if show_workers {
        for wr in &r.workers {
            let elapsed = wr.summary.as_ref().map_or(0, |s| s.measured_ns);
            for &d in &dirs {
                row(&mut out, &format!("worker {}", wr.index), d, &wr.stats.dir[d as usize], elapsed, &cfg.percentiles);
            }
        }
    }
    for &d in &dirs {
        row(&mut out, "total", d, &r.total.dir[d as usize], r.elapsed_ns, &cfg.percentiles);
    }
    let _ = writeln!(out, "{}", errors_line(&r.total.errors));
    out.push_str(&cpu_lines(r));
    out.push_str(&placement_line(r));
    for wr in &r.workers {
        if let Some(s) = &wr.summary {
            if s.lost_in_flight > 0 {
                let _ = writeln!(
                    out,
                    "worker {}: {} I/Os still in flight after --drain-timeout {:?}; the device may be hung",
                    wr.index, s.lost_in_flight, cfg.drain_timeout
                );
            }
            if let Some(f) = &s.first_error {
                let _ = writeln!(
                    out,
                    "worker {}: first error: {} on {} of {} bytes at offset {}",
                    wr.index,
                    f.error,
                    f.dir.name(),
                    f.len,
                    f.offset
                );
            }
        }
    }
    if let Some(v) = &r.verify {
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
            let _ = writeln!(out, "  {}", describe_mismatch(m));
        }
        if v.mismatches.len() > 10 {
            let _ = writeln!(out, "  ... {} more blocks (listed in the JSON)", v.mismatches.len() - 10);
        }
    }
    let clamped: u64 = r.total.dir.iter().map(|d| d.clamped).sum();
    if clamped > 0 {
        let _ = writeln!(
            out,
            "{clamped} I/Os took over an hour; the histogram holds them at one hour (min/max/mean are exact)"
        );
    }
    out
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

/// CPU per I/O, measured two ways: the workers' own threads over their measured windows (what an
/// I/O costs the loop), and the whole process from the gate to the end (ramp, drain, coordinator
/// and helper threads included).
fn cpu_lines(r: &RunResult) -> String {
    let mut out = String::new();
    let ios = r.total.ios() + r.total.errors.total();
    let thread_ns = r.worker_cpu_ns();
    if ios > 0 && thread_ns > 0 {
        let per_worker: Vec<String> = r
            .workers
            .iter()
            .filter_map(|w| {
                let s = w.summary.as_ref()?;
                let busy = if s.measured_ns > 0 { 100.0 * s.thread_cpu_ns as f64 / s.measured_ns as f64 } else { 0.0 };
                Some(format!("w{} {:.3} s ({busy:.0}% busy)", w.index, s.thread_cpu_ns as f64 / 1e9))
            })
            .collect();
        let _ = writeln!(
            out,
            "cpu: workers {:.3} s over the measured window for {ios} I/Os = {} per I/O [{}]",
            thread_ns as f64 / 1e9,
            format_latency(thread_ns as f64 / ios as f64),
            per_worker.join(", ")
        );
    }
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
    out
}

/// Where the threads ran, in one line: whether the workers had their cores to themselves.
fn placement_line(r: &RunResult) -> String {
    let Some(p) = &r.placement else { return String::new() };
    let others: Vec<String> = p.threads.iter().filter(|t| !t.worker).map(|t| t.name.clone()).collect();
    let cores = format_core_list(&p.housekeeping_cores);
    if p.workers_alone {
        format!(
            "threads: workers alone on their cores; {} other threads ({}) on cores {cores}\n",
            others.len(),
            others.join(", ")
        )
    } else {
        format!(
            "threads: no core is free of workers, so {} other threads ({}) share the workers' cores {cores}; their work can delay a worker\n",
            others.len(),
            others.join(", ")
        )
    }
}

fn row(out: &mut String, who: &str, d: Direction, s: &DirStats, elapsed_ns: u64, percentiles: &[f64]) {
    let (iops, bw) = rates(s, elapsed_ns);
    let lat = |v: f64| if s.ios == 0 { "-".to_string() } else { format_latency(v) };
    let _ = write!(
        out,
        "{:<10} {:<5} {:>10} {:>9.1} {:>9.1} {:>11} {:>9} {:>9} {:>9} {:>9}",
        who,
        d.name(),
        format_count(iops),
        bw / (1024.0 * 1024.0),
        bw / 1e6,
        s.ios,
        lat(s.min_ns as f64),
        lat(s.mean_ns()),
        lat(s.max_ns as f64),
        lat(s.stddev_ns()),
    );
    for p in percentiles {
        let _ = write!(out, " {:>9}", lat(s.percentile_ns(*p) as f64));
    }
    out.push('\n');
}

fn errors_line(e: &ErrorCounts) -> String {
    let retried = if e.retried > 0 { format!(" ({} failed I/Os retried)", e.retried) } else { String::new() };
    if e.total() == 0 {
        return format!("errors: none{retried}");
    }
    let mut s = format!("errors: {} (read {}, write {})", e.total(), e.by_dir[0], e.by_dir[1]);
    for (kind, n) in e.kinds() {
        let _ = write!(s, "; {n} x {kind}");
    }
    if e.other > 0 {
        let _ = write!(s, "; {} of other kinds", e.other);
    }
    s + &retried
}

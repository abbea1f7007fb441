//! The JSON result: the resolved config, per-worker and total results, the interval series, and every
//! histogram whole (HdrHistogram V2 deflate, base64), so runs, workers and hosts can be merged exactly
//! later instead of averaging percentiles.
//!
//! Field names follow fio's where fio has one (`iops`, `bw_bytes`, `lat_ns`, `percentiles`).
//! [`SCHEMA_VERSION`] changes whenever a field changes meaning or disappears.

use super::{percentile_key, rates};
use crate::config::RunConfig;
use crate::coordinator::RunResult;
use crate::stats::{DirStats, ErrorCounts, HIST_HIGHEST_NS, HIST_LOWEST_NS, HIST_SIGFIGS, new_histogram};
use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use serde_json::{Map, Value, json};

pub const SCHEMA_VERSION: u32 = 1;
pub const HIST_ENCODING: &str = "hdrhistogram-v2-deflate-base64";

/// The whole JSON document of one run.
pub fn render(cfg: &RunConfig, r: &RunResult, clock_source: &str) -> Value {
    let workers: Vec<Value> = r
        .workers
        .iter()
        .map(|w| {
            let elapsed = w.summary.as_ref().map_or(0, |s| s.measured_ns);
            let mut o = dir_pair(&w.stats.dir[0], &w.stats.dir[1], &w.stats.errors, elapsed, &cfg.percentiles);
            o.insert("worker".into(), json!(w.index));
            o.insert("core".into(), json!(w.core));
            o.insert("elapsed_ns".into(), json!(elapsed));
            o.insert("summary".into(), json!(w.summary));
            Value::Object(o)
        })
        .collect();
    let total = dir_pair(&r.total.dir[0], &r.total.dir[1], &r.total.errors, r.elapsed_ns, &cfg.percentiles);
    let options: Map<String, Value> = r.engine.options.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    json!({
        "schema_version": SCHEMA_VERSION,
        "tool": { "name": "nvmebench", "version": env!("CARGO_PKG_VERSION") },
        "started_at_unix_s": unix_ns(r.started_at) / 1_000_000_000,
        "host": host(),
        "clock": { "source": clock_source },
        "engine": { "name": r.engine.name, "options": options },
        "config": cfg,
        "histogram": {
            "lowest_ns": HIST_LOWEST_NS,
            "highest_ns": HIST_HIGHEST_NS,
            "significant_digits": HIST_SIGFIGS,
            "encoding": HIST_ENCODING,
        },
        "results": {
            "elapsed_ns": r.elapsed_ns,
            "started_at_unix_ns": unix_ns(r.started_at),
            "interrupted_by_signal": r.interrupted_by,
            "failure": r.failure.as_ref().map(|f| f.to_string()),
            "events": r.events,
            "verify": r.verify.as_ref().map(|v| json!({
                "units_checked": v.units_checked,
                "mismatch_count": v.mismatch_count,
                "read_errors": v.read_errors,
                "cost_ns": v.cost_ns,
                "unit_bytes": v.table.unit_bytes(),
                "mismatches": v.mismatches,
            })),
            "cpu": {
                "user_ns": r.cpu.user_ns,
                "sys_ns": r.cpu.sys_ns,
                "ios": r.cpu.ios,
                "ns_per_io": r.cpu.ns_per_io(),
            },
            "total": Value::Object(total),
            "workers": workers,
        },
        "intervals": r.intervals,
    })
}

fn dir_pair(
    read: &DirStats,
    write: &DirStats,
    errors: &ErrorCounts,
    elapsed_ns: u64,
    pcts: &[f64],
) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("read".into(), dir(read, elapsed_ns, pcts));
    o.insert("write".into(), dir(write, elapsed_ns, pcts));
    let kinds: Vec<Value> = errors.kinds().iter().map(|(k, n)| json!({ "error": k, "count": n })).collect();
    o.insert(
        "errors".into(),
        json!({ "total": errors.total(), "read": errors.by_dir[0], "write": errors.by_dir[1], "kinds": kinds, "other": errors.other, "retried": errors.retried }),
    );
    o
}

/// One direction's JSON: counters, rates over `elapsed_ns`, latency summary, `pcts` and the whole histogram.
pub(crate) fn dir(d: &DirStats, elapsed_ns: u64, pcts: &[f64]) -> Value {
    let (iops, bw) = rates(d, elapsed_ns);
    let percentiles: Map<String, Value> =
        pcts.iter().map(|p| (percentile_key(*p), json!(d.percentile_ns(*p)))).collect();
    json!({
        "ios": d.ios,
        "io_bytes": d.bytes,
        "iops": iops,
        "bw_bytes": bw,
        "lat_ns": {
            "min": if d.ios == 0 { 0 } else { d.min_ns },
            "mean": d.mean_ns(),
            "max": d.max_ns,
            "stddev": d.stddev_ns(),
            "sum": d.sum_ns.to_string(),
            "clamped": d.clamped,
            "percentiles": percentiles,
        },
        "hist": encode_histogram(&d.hist),
    })
}

/// Serialises a histogram as HdrHistogram V2 deflate, base64 (the form HdrHistogram's own tools read).
pub fn encode_histogram(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new().serialize(h, &mut bytes).expect("serialising into a Vec cannot fail");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Reads a histogram written by [`encode_histogram`] back into the program-wide bounds.
pub fn decode_histogram(text: &str) -> Result<Histogram<u64>, String> {
    let bytes =
        base64::engine::general_purpose::STANDARD.decode(text).map_err(|e| format!("histogram is not base64: {e}"))?;
    let h: Histogram<u64> =
        Deserializer::new().deserialize(&mut &bytes[..]).map_err(|e| format!("histogram does not decode: {e:?}"))?;
    let mut out = new_histogram();
    out.add(&h).map_err(|e| format!("histogram has other bounds than nvmebench's: {e:?}"))?;
    Ok(out)
}

/// Nanoseconds since the UNIX epoch (0 for a time before it).
fn unix_ns(t: std::time::SystemTime) -> u64 {
    t.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

fn host() -> Value {
    let read = |p: &str| std::fs::read_to_string(p).map(|s| s.trim().to_string()).ok();
    let cpu = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    });
    json!({
        "hostname": read("/proc/sys/kernel/hostname"),
        "kernel": read("/proc/sys/kernel/osrelease"),
        "cpu": cpu,
        "cpus_online": std::thread::available_parallelism().map(|n| n.get()).ok(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_round_trip() {
        let mut d = DirStats::default();
        for v in [1u64, 10, 100, 1_000, 123_456, 9_999_999, HIST_HIGHEST_NS] {
            d.record(v, 3, 0);
        }
        let back = decode_histogram(&encode_histogram(&d.hist)).unwrap();
        assert_eq!(back, d.hist);
        assert!(decode_histogram("not base64!").is_err());
    }
}

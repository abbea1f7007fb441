//! The JSON result: the resolved config, per-worker and total results, the interval series, and every
//! histogram whole (HdrHistogram V2 deflate, base64), so runs, workers and hosts can be merged exactly
//! later instead of averaging percentiles.
//!
//! This module builds the typed document (`report::doc::RunDocument`) from a run's results; the
//! shape itself, and its schema, live in `doc`. Field names follow fio's where fio has one (`iops`,
//! `bw_bytes`, `lat_ns`, `percentiles`). [`SCHEMA_VERSION`] changes whenever a field changes meaning
//! or disappears.

use super::doc::{
    self, ConfigDoc, CpuDoc, DirDoc, DirInterval, DirPair, EngineDoc, ErrorKindCount, ErrorsDoc, HistogramInfo, Host,
    Interval, LatencyDoc, LatencyPartDoc, NsSqSum, NsSum, Results, RunDocument, TimestampsDoc, Tool, VerifyDoc,
    WorkerCpuDoc, WorkerDoc,
};
use super::{percentile_key, rates};
use crate::config::RunConfig;
use crate::coordinator::{DirPoint, IntervalPoint, RunResult};
use crate::io::Direction;
use crate::stats::{DirStats, ErrorCounts, HIST_HIGHEST_NS, HIST_LOWEST_NS, HIST_SIGFIGS, Stats, new_histogram};
use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use super::doc::{HIST_ENCODING, SCHEMA_VERSION};

/// The whole JSON document of one run.
pub fn render(cfg: &RunConfig, r: &RunResult, clock_source: &str) -> Value {
    serde_json::to_value(document(cfg, r, clock_source)).expect("a result document always serialises")
}

/// The typed document of one run, as [`render`] writes it.
pub fn document(cfg: &RunConfig, r: &RunResult, clock_source: &str) -> RunDocument {
    let several = r.targets.len() > 1;
    let shown = shown_dirs(cfg, &r.total);
    let workers = r
        .workers
        .iter()
        .map(|w| {
            let elapsed = w.summary.as_ref().map_or(0, |s| s.measured_ns);
            let pair = dir_pair(&w.stats, shown, elapsed, &cfg.percentiles);
            WorkerDoc {
                worker: if several { w.thread } else { w.index },
                target: several.then_some(w.target),
                core: w.core,
                elapsed_ns: elapsed,
                summary: w.summary.as_ref().map(recast),
                dirs: pair,
                input: None,
            }
        })
        .collect();
    let started_ns = unix_ns(r.started_at);
    RunDocument {
        schema_version: SCHEMA_VERSION,
        tool: Some(Tool::this()),
        started_at_unix_s: Some(started_ns / 1_000_000_000),
        host: host(),
        clock: doc::Clock { source: clock_source.into() },
        engine: EngineDoc {
            name: r.engine.name.clone(),
            options: r.engine.options.iter().cloned().collect(),
            spdk: spdk_doc(r),
        },
        config: Some(config(cfg)),
        histogram: histogram_info(),
        results: Results {
            elapsed_ns: r.elapsed_ns,
            started_at_unix_ns: Some(started_ns),
            interrupted_by_signal: r.interrupted_by,
            failure: r.failure.as_ref().map(|f| f.to_string()),
            events: r.events.clone(),
            verify: r.verify.as_ref().map(|v| VerifyDoc {
                units_checked: v.units_checked,
                mismatch_count: v.mismatch_count,
                read_errors: v.read_errors,
                cost_ns: v.cost_ns,
                unit_bytes: v.unit_bytes,
                mismatches: v.mismatches.iter().map(recast).collect(),
            }),
            telemetry_alert: r.telemetry.as_ref().is_some_and(|t| t.alert()),
            cpu: Some(CpuDoc {
                user_ns: r.cpu.user_ns,
                sys_ns: r.cpu.sys_ns,
                ios: r.cpu.ios,
                ns_per_io: r.cpu.ns_per_io(),
            }),
            worker_cpu: Some(worker_cpu(r)),
            cost: r.cost.as_ref().map(recast),
            timestamps: Some(timestamps(cfg.latency)),
            placement: r.placement.as_ref().map(recast),
            total: dir_pair(&r.total, shown, r.elapsed_ns, &cfg.percentiles),
            workers,
            targets: if several { targets(cfg, r, shown) } else { Vec::new() },
        },
        intervals: intervals(&r.intervals, shown),
        label: None,
        streams: None,
        suite_step: None,
        merged: None,
        telemetry: r.telemetry.as_ref().map(|t| super::telemetry::document(t, r.started_at, cfg.ramp)),
        fleet_member: None,
        fleet: None,
    }
}

/// One block per target: its lanes summed, rates over its own measured time.
fn targets(cfg: &RunConfig, r: &RunResult, shown: [bool; Direction::COUNT]) -> Vec<doc::TargetResultDoc> {
    r.targets
        .iter()
        .map(|t| {
            let pair = dir_pair(&t.stats, shown, t.elapsed_ns, &cfg.percentiles);
            let target = cfg.targets.get(t.index);
            let mut workers: Vec<usize> = t.lanes.iter().map(|&l| r.workers[l].thread).collect();
            workers.dedup();
            doc::TargetResultDoc {
                target: t.index,
                path: target.map_or_else(|| format!("target {}", t.index), |t| t.path.display().to_string()),
                kind: target.map_or(doc::TargetKind::File, |t| recast(&t.kind)),
                host: None,
                workers,
                inputs: Vec::new(),
                elapsed_ns: t.elapsed_ns,
                dirs: pair,
                intervals: intervals(&t.intervals, shown),
            }
        })
        .collect()
}

/// An interval series as the document holds it (the run's, or one target's).
fn intervals(points: &[IntervalPoint], shown: [bool; Direction::COUNT]) -> Vec<Interval> {
    points
        .iter()
        .map(|p| Interval {
            t_s: p.t_s,
            span_s: Some(p.span_s),
            partial: p.partial,
            workers: Some(p.workers),
            read: interval_dir(&p.read),
            write: interval_dir(&p.write),
            trim: shown[Direction::Trim as usize].then(|| interval_dir(&p.trim)),
            write_zeroes: shown[Direction::WriteZeroes as usize].then(|| interval_dir(&p.write_zeroes)),
            flush: shown[Direction::Flush as usize].then(|| interval_dir(&p.flush)),
            errors: p.errors,
        })
        .collect()
}

/// The SPDK engine's own section: busy time where the workers kept it, and each lane's NUMA nodes
/// where its engine said them (`None` for other engines).
pub fn spdk_doc(r: &RunResult) -> Option<doc::SpdkDoc> {
    let several = r.targets.len() > 1;
    let worker = |w: &crate::coordinator::WorkerResult| if several { w.thread } else { w.index };
    let busy_of: Vec<_> = r.workers.iter().filter_map(|w| Some((w, w.summary.as_ref()?.busy?))).collect();
    let numa: Vec<doc::NumaDoc> = r
        .workers
        .iter()
        .filter(|w| !w.engine_facts.is_empty())
        .map(|w| {
            let fact = |k: &str| w.engine_facts.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
            let node = |k: &str| fact(k).and_then(|v| v.parse().ok());
            doc::NumaDoc {
                worker: worker(w),
                target: several.then_some(w.target),
                controller: fact("controller").unwrap_or_default().to_string(),
                controller_node: node("controller_node"),
                core: fact("core").and_then(|v| v.parse().ok()).or(w.core),
                core_node: node("core_node"),
                buffer_node: node("buffer_node"),
                sq_node: node("sq_node"),
            }
        })
        .collect();
    if busy_of.is_empty() && numa.is_empty() {
        return None;
    }
    let per_io = |busy: u64, ios: u64| if ios == 0 { 0.0 } else { busy as f64 / ios as f64 };
    // perf -m's Busy %: busy over busy and idle, as perf divides them.
    let pct = |busy: u64, idle: u64| if busy + idle == 0 { 0.0 } else { 100.0 * busy as f64 / (busy + idle) as f64 };
    let busy = (!busy_of.is_empty()).then(|| {
        let workers: Vec<doc::WorkerBusyDoc> = busy_of
            .iter()
            .map(|(w, b)| {
                let measured = w.summary.as_ref().map_or(0, |s| s.measured_ns);
                let ios = w.stats.ios();
                doc::WorkerBusyDoc {
                    worker: worker(w),
                    target: several.then_some(w.target),
                    busy_ns: b.busy_ns,
                    idle_ns: measured.saturating_sub(b.busy_ns),
                    ios,
                    busy_ns_per_io: per_io(b.busy_ns, ios),
                    busy_polls: b.busy_polls,
                    perf_busy_ns: b.perf_busy_ns,
                    perf_idle_ns: b.perf_idle_ns,
                    perf_busy_pct: pct(b.perf_busy_ns, b.perf_idle_ns),
                }
            })
            .collect();
        let (busy_ns, ios) = (workers.iter().map(|w| w.busy_ns).sum(), workers.iter().map(|w| w.ios).sum());
        let perf_busy_ns = workers.iter().map(|w| w.perf_busy_ns).sum();
        let perf_idle_ns = workers.iter().map(|w| w.perf_idle_ns).sum();
        doc::BusyDoc {
            busy_ns,
            idle_ns: workers.iter().map(|w| w.idle_ns).sum(),
            ios,
            busy_ns_per_io: per_io(busy_ns, ios),
            busy_polls: workers.iter().map(|w| w.busy_polls).sum(),
            perf_busy_ns,
            perf_idle_ns,
            perf_busy_pct: pct(perf_busy_ns, perf_idle_ns),
            workers,
        }
    });
    Some(doc::SpdkDoc { busy, numa })
}

/// The workers' own CPU time over their measured windows.
pub fn worker_cpu(r: &RunResult) -> WorkerCpuDoc {
    let thread_ns = r.worker_cpu_ns();
    let ios = r.total.ios() + r.total.errors.total();
    let measured: u64 = r.workers.iter().filter_map(|w| w.summary.as_ref()).map(|s| s.measured_ns).max().unwrap_or(0);
    WorkerCpuDoc {
        thread_ns,
        ios,
        ns_per_io: (ios > 0).then(|| thread_ns as f64 / ios as f64),
        cores_busy: if measured > 0 { thread_ns as f64 / measured as f64 } else { 0.0 },
    }
}

/// How the worker loop stamps I/Os (see `worker::hot`).
pub fn timestamps(latency: crate::options::LatencyMode) -> TimestampsDoc {
    if !latency.stamps() {
        return TimestampsDoc {
            mode: "off".into(),
            issue: "not stamped (--latency off)".into(),
            completion: "not stamped (--latency off): I/Os are counted, no latency is measured".into(),
            sent: None,
        };
    }
    TimestampsDoc {
        mode: "per_io".into(),
        issue: "each I/O, just before it is handed to the engine (queued; a paced I/O counts from when it was due)"
            .into(),
        completion: "each I/O, in its own completion callback".into(),
        sent: (latency == crate::options::LatencyMode::Split).then(|| {
            "once per submitted batch, on the return of the call that sent it (the submit syscall, or the poll \
             that rang the doorbell or flushed the socket), shared by the batch as fio shares it; none on a \
             synchronous engine"
                .into()
        }),
    }
}

/// The resolved config as the document holds it: `RunConfig`'s own serialisation, typed.
pub fn config(cfg: &RunConfig) -> ConfigDoc {
    recast(cfg)
}

/// The histogram settings of this nvmebench.
pub fn histogram_info() -> HistogramInfo {
    HistogramInfo {
        lowest_ns: HIST_LOWEST_NS,
        highest_ns: HIST_HIGHEST_NS,
        significant_digits: u64::from(HIST_SIGFIGS),
        encoding: HIST_ENCODING.into(),
    }
}

/// Converts a crate type into the document type that mirrors its serialisation.
///
/// # Panics
/// When the two have drifted apart; `tests::a_rendered_run_reads_back` renders every mirrored type.
fn recast<T: Serialize, U: DeserializeOwned>(v: &T) -> U {
    serde_json::from_value(serde_json::to_value(v).expect("crate types serialise to JSON"))
        .expect("the document types in report::doc mirror the serialisation of the crate's types")
}

fn interval_dir(p: &DirPoint) -> DirInterval {
    DirInterval {
        ios: p.ios,
        bytes: p.bytes,
        iops: p.iops,
        bw_bytes: p.bw_bytes,
        mean_ns: p.mean_ns,
        p99_ns: p.p99_ns,
        max_ns: p.max_ns,
    }
}

/// Which directions the document carries: reads, writes and trims always (fio's three blocks),
/// write-zeroes and flushes when the workload issues them (or, in a merge, any input did).
pub(crate) fn shown_dirs(cfg: &RunConfig, total: &Stats) -> [bool; Direction::COUNT] {
    Direction::ALL.map(|d| {
        matches!(d, Direction::Read | Direction::Write | Direction::Trim)
            || cfg.workload.mix.issues(d)
            || total.of(d).ios > 0
    })
}

/// Every shown direction of `stats`, with rates over `elapsed_ns`.
pub(crate) fn dir_pair(stats: &Stats, shown: [bool; Direction::COUNT], elapsed_ns: u64, pcts: &[f64]) -> DirPair {
    let one = |d: Direction| {
        let split = stats.slat(d).zip(stats.clat(d));
        dir_split(stats.of(d), split, elapsed_ns, pcts)
    };
    let doc = |d: Direction| shown[d as usize].then(|| one(d));
    DirPair {
        read: one(Direction::Read),
        write: one(Direction::Write),
        trim: doc(Direction::Trim),
        write_zeroes: doc(Direction::WriteZeroes),
        flush: doc(Direction::Flush),
        errors: errors_doc(&stats.errors),
    }
}

fn errors_doc(errors: &ErrorCounts) -> ErrorsDoc {
    let by = |d: Direction| errors.by_dir[d as usize];
    ErrorsDoc {
        total: errors.total(),
        read: by(Direction::Read),
        write: by(Direction::Write),
        trim: by(Direction::Trim),
        write_zeroes: by(Direction::WriteZeroes),
        flush: by(Direction::Flush),
        kinds: errors.kinds().iter().map(|(k, n)| ErrorKindCount { error: recast(k), count: *n }).collect(),
        other: errors.other,
        retried: errors.retried,
    }
}

/// One direction: counters, rates over `elapsed_ns`, latency summary, `pcts` and the whole histogram.
pub(crate) fn dir(d: &DirStats, elapsed_ns: u64, pcts: &[f64]) -> DirDoc {
    let (iops, bw) = rates(d, elapsed_ns);
    DirDoc {
        ios: d.ios,
        io_bytes: d.bytes,
        iops,
        bw_bytes: bw,
        lat_ns: latency_doc(d, pcts),
        hist: encode_histogram(&d.hist),
        slat: None,
        clat: None,
    }
}

/// [`dir`], with fio's submission and completion latencies when they were measured (`split`).
pub(crate) fn dir_split(d: &DirStats, split: Option<(&DirStats, &DirStats)>, elapsed_ns: u64, pcts: &[f64]) -> DirDoc {
    let part =
        |p: &DirStats| LatencyPartDoc { ios: p.ios, lat_ns: latency_doc(p, pcts), hist: encode_histogram(&p.hist) };
    DirDoc { slat: split.map(|(s, _)| part(s)), clat: split.map(|(_, c)| part(c)), ..dir(d, elapsed_ns, pcts) }
}

fn latency_doc(d: &DirStats, pcts: &[f64]) -> LatencyDoc {
    LatencyDoc {
        // Nothing recorded (no I/O, or `--latency off`): 0, not the empty minimum's sentinel.
        min: if d.ios == 0 || d.min_ns == u64::MAX { 0 } else { d.min_ns },
        mean: d.mean_ns(),
        max: d.max_ns,
        stddev: d.stddev_ns(),
        sum: NsSum(d.sum_ns),
        sum_sq: d.stddev_is_exact().then_some(NsSqSum(d.sum_sq_ns2)),
        clamped: d.clamped,
        percentiles: pcts.iter().map(|p| (percentile_key(*p), d.percentile_ns(*p))).collect(),
    }
}

/// Serialises a histogram as HdrHistogram V2 deflate, base64 (the form HdrHistogram's own tools read).
pub fn encode_histogram(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new().serialize(h, &mut bytes).expect("serialising into a Vec cannot fail");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// HdrHistogram's V2 cookies (its serialization module's `V2_COOKIE` and `V2_COMPRESSED_COOKIE`).
const V2_COOKIE: u32 = 0x1c84_9313;
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9314;
/// A V2 encoding's header: cookie, payload length, normalizing offset, significant digits, lowest
/// and highest value, integer-to-double ratio.
const V2_HEADER_BYTES: usize = 40;

/// The most bytes a V2 encoding of one of nvmebench's histograms can take: the header and one
/// varint (at most 9 bytes) per bucket.
fn max_v2_bytes() -> usize {
    V2_HEADER_BYTES + 9 * new_histogram().distinct_values()
}

/// Reads a histogram written by [`encode_histogram`] back into the program-wide bounds.
///
/// The bytes come from a file users pass around, so they are checked before HdrHistogram's reader
/// sees them, which sizes its buffers from the header: a 40-byte header claiming a 4 GiB payload
/// made it allocate 4 GiB, a header with other bounds a counts array of up to 50 MB, and 200 KB of
/// deflated zeros took minutes to read. The deflated bytes must be as many as their length says
/// and inflate to no more than [`max_v2_bytes`], and the header must carry nvmebench's bounds and
/// a payload length equal to what follows it.
pub fn decode_histogram(text: &str) -> Result<Histogram<u64>, String> {
    use std::io::Read as _;
    let bytes =
        base64::engine::general_purpose::STANDARD.decode(text).map_err(|e| format!("histogram is not base64: {e}"))?;
    let be32 = |b: &[u8], at: usize| b.get(at..at + 4).map(|w| u32::from_be_bytes(w.try_into().expect("4 bytes")));
    let be64 = |b: &[u8], at: usize| b.get(at..at + 8).map(|w| u64::from_be_bytes(w.try_into().expect("8 bytes")));
    match be32(&bytes, 0) {
        Some(V2_COMPRESSED_COOKIE) => {}
        Some(c) => return Err(format!("histogram is not HdrHistogram V2 deflate (its cookie is {c:#010x})")),
        None => return Err(format!("histogram is {} bytes, too short to be one", bytes.len())),
    }
    let deflated_len = be32(&bytes, 4).ok_or("histogram is cut short after its cookie")? as usize;
    let deflated = &bytes[8.min(bytes.len())..];
    if deflated.len() != deflated_len {
        return Err(format!("histogram says {deflated_len} compressed bytes follow, but {} do", deflated.len()));
    }
    let max = max_v2_bytes();
    let mut v2 = Vec::new();
    flate2::read::ZlibDecoder::new(deflated)
        .take(max as u64 + 1)
        .read_to_end(&mut v2)
        .map_err(|e| format!("histogram does not inflate: {e}"))?;
    if v2.len() > max {
        return Err(format!("histogram inflates to more than the {max} bytes any nvmebench histogram takes"));
    }
    if v2.len() < V2_HEADER_BYTES || be32(&v2, 0) != Some(V2_COOKIE) {
        return Err("histogram inflates to something other than an HdrHistogram V2 encoding".into());
    }
    let payload = be32(&v2, 4).expect("header length checked") as usize;
    if payload != v2.len() - V2_HEADER_BYTES {
        return Err(format!(
            "histogram says {payload} payload bytes follow its header, but {} do",
            v2.len() - V2_HEADER_BYTES
        ));
    }
    let bounds = (be32(&v2, 12), be64(&v2, 16), be64(&v2, 24));
    if bounds != (Some(u32::from(HIST_SIGFIGS)), Some(HIST_LOWEST_NS), Some(HIST_HIGHEST_NS)) {
        let (d, lo, hi) = (bounds.0.unwrap_or(0), bounds.1.unwrap_or(0), bounds.2.unwrap_or(0));
        return Err(format!(
            "histogram has other bounds than nvmebench's ({lo}..{hi} ns at {d} significant digits, not {HIST_LOWEST_NS}..{HIST_HIGHEST_NS} at {HIST_SIGFIGS})"
        ));
    }
    let h: Histogram<u64> =
        Deserializer::new().deserialize(&mut &v2[..]).map_err(|e| format!("histogram does not decode: {e}"))?;
    let mut out = new_histogram();
    out.add(&h).map_err(|e| format!("histogram has other bounds than nvmebench's: {e:?}"))?;
    Ok(out)
}

/// Nanoseconds since the UNIX epoch (0 for a time before it).
fn unix_ns(t: std::time::SystemTime) -> u64 {
    t.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

/// This machine: its name, kernel, CPU model and online CPUs.
pub fn host() -> Host {
    let read = |p: &str| std::fs::read_to_string(p).map(|s| s.trim().to_string()).ok();
    let cpu = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    });
    Host {
        hostname: read("/proc/sys/kernel/hostname"),
        kernel: read("/proc/sys/kernel/osrelease"),
        cpu,
        cpus_online: online_cpus(),
    }
}

/// The machine's online CPUs (sysfs's list, as fio's `$ncpus` and `nproc --all` count them). Not
/// the calling thread's affinity: by the time a report is written the coordinator has moved itself
/// off the workers' cores, so a run with one worker on a 2-CPU machine was reported as having 1
/// CPU online.
pub fn online_cpus() -> Option<u64> {
    let list = std::fs::read_to_string("/sys/devices/system/cpu/online").ok();
    cpus_online(list.as_deref().map(str::trim))
}

/// The number of CPUs in sysfs's `online` list (`0-3,8`), or the thread's parallelism without one.
fn cpus_online(list: Option<&str>) -> Option<u64> {
    match list.map(crate::units::parse_core_list) {
        Some(Ok(cores)) => Some(cores.len() as u64),
        _ => std::thread::available_parallelism().map(|n| n.get() as u64).ok(),
    }
}

#[cfg(test)]
mod host_tests {
    #[test]
    fn cpus_online_counts_the_machines_cpus_not_the_threads_affinity() {
        assert_eq!(super::cpus_online(Some("0-3,8")), Some(5));
        assert_eq!(super::cpus_online(Some("0")), Some(1));
        // The thread's affinity: what a thread pinned away from the workers' cores sees.
        core_affinity::set_for_current(core_affinity::CoreId { id: 0 });
        let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
        let want = crate::units::parse_core_list(online.trim()).unwrap().len() as u64;
        assert_eq!(super::host().cpus_online, Some(want));
    }
}

/// A run document around `read` and `write` totals, with a fixed config, for tests of readers.
#[cfg(test)]
pub(crate) fn sample_document(read: &DirStats, write: &DirStats, elapsed_ns: u64, hostname: &str) -> RunDocument {
    use super::doc::{BsEntryDoc, BsSplitDoc, OnError, RandomDist, Rw, WorkloadDoc};
    let pcts = [50.0, 99.0, 99.99];
    let bs = BsSplitDoc { entries: vec![BsEntryDoc { bytes: 4096, percent: 100.0 }] };
    let config = ConfigDoc {
        engine: "null".into(),
        target: None,
        targets: vec![],
        each_worker_all_targets: false,
        scratch: false,
        workload: WorkloadDoc {
            rw: Rw::RandRw,
            read_percent: 75,
            mix: None,
            bs_read: bs.clone(),
            bs_write: bs,
            bs_trim: None,
            align_bytes: 4096,
            range_start: 0,
            range_bytes: 1 << 30,
            random_dist: RandomDist::Uniform,
            seq_add_bytes: 0,
            random_map: false,
            seed: 1,
            pacing: Default::default(),
            buffers: Default::default(),
        },
        cores: vec![0],
        queue_depth: 1,
        queue_depth_shared: false,
        latency_target: None,
        runtime: Some(1.0),
        ramp: 0.0,
        ios: None,
        rate_iops: None,
        interval: 1.0,
        percentiles: pcts.to_vec(),
        latency: Default::default(),
        on_error: OnError::Stop,
        allow_destroy: false,
        drain_timeout: 5.0,
        start_at_unix_s: None,
    };
    RunDocument {
        schema_version: SCHEMA_VERSION,
        tool: Some(Tool::this()),
        started_at_unix_s: Some(1_700_000_000),
        host: Host { hostname: Some(hostname.into()), ..Host::default() },
        clock: doc::Clock { source: "tsc".into() },
        engine: EngineDoc { name: "null".into(), ..Default::default() },
        config: Some(config),
        histogram: histogram_info(),
        results: Results {
            elapsed_ns,
            started_at_unix_ns: Some(1_700_000_000_000_000_000),
            interrupted_by_signal: None,
            failure: None,
            events: vec![],
            verify: None,
            telemetry_alert: false,
            cpu: None,
            worker_cpu: None,
            cost: None,
            timestamps: Some(timestamps(Default::default())),
            placement: None,
            total: DirPair {
                read: dir(read, elapsed_ns, &pcts),
                write: dir(write, elapsed_ns, &pcts),
                trim: Some(dir(&DirStats::default(), elapsed_ns, &pcts)),
                write_zeroes: None,
                flush: None,
                errors: ErrorsDoc::default(),
            },
            workers: vec![],
            targets: vec![],
        },
        intervals: vec![],
        label: None,
        streams: None,
        suite_step: None,
        merged: None,
        telemetry: None,
        fleet_member: None,
        fleet: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn document_keys_and_report_labels_follow_the_directions() {
        assert_eq!(Direction::ALL.map(Direction::name), super::super::doc::DIRECTIONS);
        assert_eq!(Direction::ALL.map(Direction::label), super::super::charts::DIRECTION_LABELS);
    }

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

    /// Every crate type the document mirrors, in each of its forms, renders and reads back: the
    /// document types and the crate's serialisation have not drifted apart.
    #[test]
    fn a_rendered_run_reads_back() {
        use crate::coordinator::{IntervalPoint, VerifyResult, WorkerResult};
        use crate::cpu::CpuUsage;
        use crate::engine::EngineInfo;
        use crate::io::Direction;
        use crate::io::IoError;
        use crate::stats::Stats;
        use crate::verify::{GenTable, Mismatch, MismatchKind};
        use crate::worker::{FailedIo, StopReason, WorkerSummary};
        use clap::Parser;
        let run_cfg = |extra: &[&str]| {
            let mut v = vec!["nvmebench", "run", "--engine", "null", "--cores", "0"];
            v.extend_from_slice(extra);
            match crate::cli::Cli::try_parse_from(v).unwrap().command {
                crate::cli::Command::Run(r) => RunConfig::resolve(&r).unwrap(),
                _ => unreachable!("parsed a run command"),
            }
        };
        let errors = [
            IoError::Errno { errno: 5 },
            IoError::ShortTransfer { expected: 4096, done: 512 },
            IoError::Nvme { sct: 2, sc: 0x81 },
        ];
        let mut stats = Stats::default();
        stats.dir[0].record(1_000, 10, 40_960);
        stats.dir[1].record(2_000, 5, 20_480);
        for (i, e) in errors.iter().enumerate() {
            stats.errors.count(if i == 0 { Direction::Read } else { Direction::Write }, *e, 1);
        }
        let stops = [
            StopReason::Time,
            StopReason::IoLimit,
            StopReason::Error,
            StopReason::Requested,
            StopReason::LatencyTarget,
        ];
        let workers = stops
            .iter()
            .enumerate()
            .map(|(i, &stop_reason)| WorkerResult {
                index: i,
                thread: i,
                target: i % 2,
                core: Some(i),
                stats: stats.clone(),
                engine_facts: Vec::new(),
                summary: Some(WorkerSummary {
                    measured_ns: 1_000_000,
                    thread_cpu_ns: 900_000,
                    cpu: None,
                    batches: None,
                    stop_reason,
                    lost_in_flight: 0,
                    busy: None,
                    verify_reads: None,
                    log_epochs_ns: [0; 2],
                    log_buffers_allocated: 0,
                    latency_depth: (stop_reason == StopReason::LatencyTarget).then_some(6),
                    first_error: errors.get(i).map(|&error| FailedIo {
                        error,
                        dir: Direction::Write,
                        offset: 4096,
                        len: 512,
                    }),
                }),
            })
            .collect::<Vec<_>>();
        let kinds = [
            MismatchKind::Foreign,
            MismatchKind::Misdirected { found_offset: 8192 },
            MismatchKind::LostWrite { found_generation: 1 },
            MismatchKind::FutureGeneration { found_generation: 9 },
            MismatchKind::Stale { found_seed: 7 },
            MismatchKind::Payload { first: 32, last: 100, bytes: 68 },
        ];
        let point = IntervalPoint {
            t_s: 1.0,
            span_s: 1.0,
            partial: false,
            workers: 1,
            ramp: false,
            read: Default::default(),
            write: Default::default(),
            errors: 3,
            ..IntervalPoint::default()
        };
        let result = RunResult {
            engine: EngineInfo { name: "null".into(), options: vec![("lat".into(), "0ns".into())] },
            targets: crate::coordinator::per_target(&workers),
            workers,
            total: stats,
            elapsed_ns: 1_000_000,
            intervals: vec![point],
            threads: Vec::new(),
            io_logs: Vec::new(),
            interrupted_by: Some(2),
            failure: None,
            started_at: std::time::SystemTime::now(),
            verify: Some(VerifyResult {
                units_checked: 6,
                mismatch_count: 6,
                mismatches: kinds
                    .iter()
                    .map(|&kind| Mismatch { target: None, offset: 4096, expected_generation: 3, kind })
                    .collect(),
                read_errors: 0,
                cost_ns: 10,
                unit_bytes: 4096,
                tables: vec![Some(GenTable::new(0, 1 << 20, 4096))],
            }),
            cpu: CpuUsage { user_ns: 10, sys_ns: 20, ios: 15 },
            cost: None,
            placement: Some(crate::cpu::Placement {
                housekeeping_cores: vec![1],
                workers_alone: true,
                threads: vec![crate::cpu::ThreadPlacement {
                    tid: 7,
                    name: "nvmebench-w0".into(),
                    cpus: "0".into(),
                    worker: true,
                }],
            }),
            events: vec!["controller reset at 0.5 s: done in 3 ms".into()],
            telemetry: Some(crate::telemetry::Telemetry {
                interval: std::time::Duration::from_secs(1),
                targets: vec![crate::telemetry::TargetTelemetry {
                    target: "/dev/nvme0n1".into(),
                    source: crate::telemetry::Source::Kernel,
                    unavailable: None,
                    samples: [0u8, 2]
                        .map(|w| crate::telemetry::Sample {
                            at: std::time::SystemTime::now(),
                            health: crate::telemetry::health::HealthLog {
                                critical_warning: w,
                                composite_temperature_k: 320,
                                media_errors: u64::MAX,
                                thermal_transitions: [1, 2],
                                ..Default::default()
                            },
                        })
                        .to_vec(),
                    read_failures: Some(("Interrupted".into(), 2)),
                    error_log: Some(vec![crate::telemetry::errlog::ErrorLogEntry {
                        error_count: 5,
                        sqid: 1,
                        cid: 2,
                        status_code_type: 2,
                        status_code: 0x81,
                        lba: 77,
                        nsid: 1,
                    }]),
                    error_log_unavailable: None,
                }],
            }),
        };
        for extra in [
            &["--rw", "randrw", "--bssplit", "4k/50:64k/50", "--random-dist", "zipf:1.2"][..],
            &["--rw", "read", "--on-error", "retry:3", "--random-dist", "pareto:0.8", "--ios", "100"],
            &["--rw", "write", "--on-error", "continue", "--random-dist", "normal:10", "--rate-iops", "1000"],
        ] {
            let cfg = run_cfg(extra);
            let written = render(&cfg, &result, "tsc");
            // The typed config says everything `RunConfig` serialises, and nothing else.
            assert_eq!(written["config"], serde_json::to_value(&cfg).unwrap(), "{extra:?}");
            let back: RunDocument = serde_json::from_value(written.clone()).unwrap();
            assert_eq!(serde_json::to_value(&back).unwrap(), written);
            assert_eq!(back.results.total.errors.kinds.len(), 3);
            assert_eq!(back.results.verify.as_ref().unwrap().mismatches.len(), kinds.len());
            let telemetry = back.telemetry.as_ref().expect("telemetry written");
            assert!(back.results.telemetry_alert, "the temperature bit rose during the run");
            assert_eq!(telemetry.targets[0].warnings, ["critical warning: temperature beyond a threshold"]);
            assert_eq!(telemetry.targets[0].samples[1].media_errors, u64::MAX);
        }
    }
}

//! fio-shaped results: the JSON document of fio's `--output-format=json` (and `json+`), and fio's
//! bandwidth, IOPS and latency logs, so fio's own tools (fio_jsonplus_clat2csv, fio2gnuplot,
//! fio-plot) and dashboards read nvmebench's runs.
//!
//! It reads a job's resolved config and its results, as `json.rs` does; it never runs anything.
//! `jobs[]` has an entry per job clone (worker thread), or per run of clones fio's
//! `group_reporting` sums ([`entries`]). Each of fio's three latencies is written as measured, or
//! as fio's zeros for one not measured. Fields with no honest value here are left out; docs/fio.md
//! lists them with the reason.

use crate::batches::BatchCounts;
use crate::config::RunConfig;
use crate::coordinator::{LoggedIo, ThreadPoint};
use crate::cpu::{CpuUsage, ThreadCounts};
use crate::io::{Direction, IoPrio};
use crate::stats::{DirStats, PrioStats, Stats};
use serde_json::{Map, Value, json};
use std::fmt::Write as _;
use std::time::SystemTime;

/// The engines, in fio's names, and ours.
pub const ENGINES: [(&str, &str); 9] = [
    ("io_uring", "uring"),
    ("io_uring_cmd", "uring-cmd"),
    ("libaio", "aio"),
    ("posixaio", "posixaio"),
    ("psync", "psync"),
    ("null", "null"),
    ("spdk", "spdk"),
    ("falloc", "falloc"),
    ("ftruncate", "ftruncate"),
];

/// fio's name of one of our engines (`uring` is fio's `io_uring`).
pub fn fio_engine_name(ours: &str) -> &str {
    ENGINES.iter().find(|(_, o)| *o == ours).map_or(ours, |(fio, _)| fio)
}

/// The fio release whose document shape this follows.
pub const FIO_VERSION: &str = concat!("fio-3.33 (nvmebench ", env!("CARGO_PKG_VERSION"), ")");

/// fio's default `percentile_list`.
pub const FIO_PERCENTILES: [f64; 17] =
    [1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];

/// One job as fio-shaped JSON sees it: what its clones share.
pub struct FioJobSpec<'a> {
    pub name: &'a str,
    /// fio's reporting group (`groupid`): stonewall or new_group to the next.
    pub group_id: usize,
    /// fio's `group_reporting`: its clones are summed with the clones before them in its group
    /// (see [`entries`]).
    pub group_reporting: bool,
    /// The job's options as written (fio's "job options").
    pub options: &'a [(String, String)],
    pub cfg: &'a RunConfig,
    /// fio's `lat_percentiles=1`: `lat_ns` carries the percentiles (and json+ bins) too.
    pub lat_percentiles: bool,
    /// The fio latencies the job reports (its `disable_*`); those it keeps and did not measure
    /// (`--latency total` has no `slat` or `clat`) are written as fio's zeros too.
    pub latencies: crate::options::FioLatencies,
}

/// One job clone: a worker thread, fio's `thread_data`, with what fio keeps per thread.
pub struct FioClone<'a> {
    /// Its job: an index into the specs given to [`entries`].
    pub job: usize,
    /// Its figures, summed over the files (lanes) it drove.
    pub stats: Stats,
    /// Its measured span, from the end of the ramp to its end (fio's runtime of the thread).
    pub span_ns: u64,
    /// Its verify pass's span after that (0 without one), whose reads `stats` holds: fio counts
    /// them in the job's reads, and the pass's time in its read runtime and its job_runtime.
    pub verify_ns: u64,
    /// Its own thread's CPU time over that span (zero when it was not measured).
    pub cpu: CpuUsage,
    /// Its own thread's context switches and page faults over that span.
    pub counts: ThreadCounts,
    /// What its engine's submit calls and reaps carried (`None`: its engine does not count them).
    pub batches: Option<BatchCounts>,
    /// Its own series: fio's bandwidth and IOPS samples are per thread.
    pub series: &'a [ThreadPoint],
    /// With fio's latency target, the depth its search ended at (fio's `latency_qd`).
    pub latency_depth: Option<u32>,
    /// With fio's per-I/O logs, its I/Os in the order it completed them, and the epochs of their
    /// lines (ns since the run's time zero; see `WorkerSummary::log_epochs_ns`).
    pub ios: &'a [LoggedIo],
    pub log_epochs_ns: [u64; 2],
    /// Per-I/O log buffers its worker allocated itself (`WorkerSummary::log_buffers_allocated`).
    pub log_buffers_allocated: u64,
}

/// One entry of the document's `jobs[]`: one clone, or the clones fio's `group_reporting` sums.
pub struct FioJob<'a> {
    pub name: &'a str,
    /// fio's reporting group.
    pub group_id: usize,
    /// The job's options as written (fio's "job options").
    pub options: Vec<(String, String)>,
    pub cfg: &'a RunConfig,
    /// Summed over the entry's clones.
    pub stats: Stats,
    /// The entry's measured time: its longest clone's.
    pub elapsed_ns: u64,
    /// Its reads' time, its longest clone's: the measured span, the verify pass's added (fio's
    /// `update_runtime` after `do_verify`), or the pass's alone in a job that reads only there.
    pub read_elapsed_ns: u64,
    /// Its longest clone's verify pass.
    pub verify_ns: u64,
    /// fio's `job_runtime`: its clones' spans (verify passes included) in whole milliseconds,
    /// added up as fio adds its threads' `total_run_time`.
    pub runtime_ms: u64,
    /// Its clones' own threads' CPU time, added up.
    pub cpu: CpuUsage,
    /// Its clones' own threads' context switches and page faults, added up (fio's sums).
    pub counts: ThreadCounts,
    /// Its clones' submit and reap counts, added up (`None` where the engine does not count them).
    pub batches: Option<BatchCounts>,
    /// Each of its clones' own series.
    pub series: Vec<&'a [ThreadPoint]>,
    /// fio's `agg` of the entry's whole group in each direction, bytes per second (see
    /// [`group_agg`]), for `bw_agg`: the entry's share of its group's bandwidth in that direction.
    pub group_agg: [u64; Direction::COUNT],
    /// fio's `lat_percentiles=1`: `lat_ns` carries the percentiles (and json+ bins) too.
    pub lat_percentiles: bool,
    /// The fio latencies the entry reports (see [`FioJobSpec::latencies`]).
    pub latencies: crate::options::FioLatencies,
    /// With fio's latency target, the depth its last clone's search ended at, as fio's
    /// `sum_thread_stats` keeps the last thread's.
    pub latency_depth: Option<u32>,
}

/// Where fio's `jobs[]` entries start, over clones given in fio's thread order as (reporting
/// group, group_reporting) (stat.c's `__show_run_stats`): a clone starts an entry of its own
/// unless it says group_reporting and is in the same group as the clone before it, whose entry it
/// joins (even when that clone did not say group_reporting, as fio's loop has it).
pub fn entry_ranges(clones: &[(usize, bool)]) -> Vec<std::ops::Range<usize>> {
    let mut ranges: Vec<std::ops::Range<usize>> = Vec::new();
    let mut last_group = None;
    for (i, &(group, summed)) in clones.iter().enumerate() {
        match ranges.last_mut() {
            Some(r) if summed && last_group == Some(group) => r.end = i + 1,
            _ => ranges.push(i..i + 1),
        }
        last_group = Some(group);
    }
    ranges
}

/// fio's `jobs[]`: the clones (in fio's thread order) as entries (see [`entry_ranges`]), each
/// summed as fio's `sum_thread_stats` sums threads: counts and histograms added, each direction's
/// runtime the longest, `job_runtime` and CPU times added (bandwidth and IOPS samples are summed
/// when rendered). An entry is named after its first clone's job and takes the options,
/// percentiles and depth of its last clone's, as fio does.
pub fn entries<'a>(specs: &[FioJobSpec<'a>], clones: &[FioClone<'a>]) -> Vec<FioJob<'a>> {
    let keys: Vec<(usize, bool)> =
        clones.iter().map(|c| (specs[c.job].group_id, specs[c.job].group_reporting)).collect();
    // A clone's time in a direction: its span; for reads, with its verify pass's (alone when the
    // job reads nothing before it, as fio's read runtime then holds only the pass).
    let span_of = |c: &FioClone<'_>, dir: Direction| match dir {
        Direction::Read if c.verify_ns > 0 && !specs[c.job].cfg.workload.mix.issues(Direction::Read) => c.verify_ns,
        Direction::Read => c.span_ns + c.verify_ns,
        _ => c.span_ns,
    };
    let agg_of = |group: usize| {
        Direction::ALL.map(|dir| {
            group_agg(
                clones
                    .iter()
                    .filter(|c| specs[c.job].group_id == group)
                    .map(|c| (c.stats.of(dir).bytes, span_of(c, dir))),
            )
        })
    };
    entry_ranges(&keys)
        .into_iter()
        .map(|r| {
            let members = &clones[r];
            let (first, last) = (&specs[members[0].job], &specs[members[members.len() - 1].job]);
            let mut stats = Stats::default();
            let mut cpu = CpuUsage::default();
            let mut counts = ThreadCounts::default();
            let mut batches: Option<BatchCounts> = None;
            for c in members {
                stats += &c.stats;
                counts += c.counts;
                if let Some(b) = &c.batches {
                    *batches.get_or_insert_with(BatchCounts::default) += b;
                }
                cpu.user_ns += c.cpu.user_ns;
                cpu.sys_ns += c.cpu.sys_ns;
                cpu.ios += c.cpu.ios;
            }
            FioJob {
                name: first.name,
                group_id: first.group_id,
                options: last.options.to_vec(),
                cfg: last.cfg,
                stats,
                elapsed_ns: members.iter().map(|c| c.span_ns).max().unwrap_or(0),
                read_elapsed_ns: members.iter().map(|c| span_of(c, Direction::Read)).max().unwrap_or(0),
                verify_ns: members.iter().map(|c| c.verify_ns).max().unwrap_or(0),
                runtime_ms: members.iter().map(|c| (c.span_ns + c.verify_ns) / 1_000_000).sum(),
                cpu,
                counts,
                batches,
                series: members.iter().map(|c| c.series).collect(),
                group_agg: agg_of(first.group_id),
                lat_percentiles: last.lat_percentiles,
                latencies: last.latencies,
                latency_depth: members[members.len() - 1].latency_depth,
            }
        })
        .collect()
}

/// A kernel block device's counters over one group, as fio's `disk_util` entry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DiskUtil {
    pub name: String,
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_merges: u64,
    pub write_merges: u64,
    pub read_ticks: u64,
    pub write_ticks: u64,
    pub in_queue: u64,
    /// Share of the time the device was busy, in percent.
    pub util: f64,
}

/// The whole document. `plus` adds the latency bins (json+).
pub fn render(
    globals: &[(String, String)],
    jobs: &[FioJob<'_>],
    disks: &[DiskUtil],
    plus: bool,
    started: SystemTime,
) -> Value {
    let since = started.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    let mut doc = Map::new();
    doc.insert("fio version".into(), json!(FIO_VERSION));
    doc.insert("timestamp".into(), json!(since.as_secs()));
    doc.insert("timestamp_ms".into(), json!(since.as_millis() as u64));
    doc.insert("time".into(), json!(ctime(since.as_secs())));
    if !globals.is_empty() {
        doc.insert("global options".into(), options(globals));
    }
    doc.insert("jobs".into(), Value::Array(jobs.iter().map(|j| job(j, plus)).collect()));
    if !disks.is_empty() {
        doc.insert("disk_util".into(), Value::Array(disks.iter().map(disk).collect()));
    }
    Value::Object(doc)
}

fn options(o: &[(String, String)]) -> Value {
    Value::Object(o.iter().map(|(k, v)| (k.clone(), json!(v))).collect())
}

fn job(j: &FioJob<'_>, plus: bool) -> Value {
    let mut o = Map::new();
    o.insert("jobname".into(), json!(j.name));
    o.insert("groupid".into(), json!(j.group_id));
    // fio's errno of the first error; an NVMe status or a short transfer has none, so EIO.
    let errs = &j.stats.errors;
    let errno_of = |e: crate::io::IoError| match e {
        crate::io::IoError::Errno { errno } => errno,
        _ => libc::EIO,
    };
    let first = errs.kinds().first().map(|(e, _)| errno_of(*e)).or((errs.total() > 0).then_some(libc::EIO));
    let filtered = matches!(j.cfg.on_error, crate::options::OnError::ContinueOn(_));
    // With continue_on_error, fio's `error` is the error that stopped the job, else its first
    // counted one (stat.c); `total_err` and `first_error` count only errors of the types it names.
    let (errno, total_err, first_error) = if filtered {
        let first_typed = errs.first_typed.map_or(0, errno_of);
        (errs.fatal.map(errno_of).unwrap_or(first_typed), errs.typed, first_typed)
    } else {
        (first.unwrap_or(0), errs.total(), first.unwrap_or(0))
    };
    o.insert("error".into(), json!(errno));
    // What fio 3.x writes for a job that has finished (its "no estimate", INT_MAX).
    o.insert("eta".into(), json!(i32::MAX));
    let elapsed_ns = j.cfg.ramp.as_nanos() as u64 + j.elapsed_ns + j.verify_ns;
    o.insert("elapsed".into(), json!(elapsed_ns.div_ceil(1_000_000_000)));
    o.insert("job options".into(), options(&j.options));
    // fio sorts its percentile_list; its tables run in numeric order.
    let mut pcts = j.cfg.percentiles.clone();
    pcts.sort_by(f64::total_cmp);
    let pcts = &pcts;
    for dir in [Direction::Read, Direction::Write, Direction::Trim] {
        o.insert(dir.name().into(), direction(dir, j, pcts, plus));
    }
    // fio has no write-zeroes; ours sit beside fio's blocks, in the same shape, when issued.
    if j.cfg.workload.mix.issues(Direction::WriteZeroes) {
        let dir = Direction::WriteZeroes;
        o.insert(dir.name().into(), direction(dir, j, pcts, plus));
    }
    // fio's `sync` block counts fsyncs (our flushes), with their completion latency (stat.c's
    // add_sync_clat_sample), which fio measures unless disable_clat.
    let flushes = j.stats.of(Direction::Flush).ios;
    let sync_lat = match j.stats.clat(Direction::Flush).filter(|_| j.latencies.clat) {
        Some(flush) => {
            let mut m = summary(flush);
            if flush.ios > 0 {
                let table: Map<String, Value> =
                    pcts.iter().map(|p| (format!("{p:.6}"), json!(flush.percentile_ns(*p)))).collect();
                m.insert("percentile".into(), Value::Object(table));
            }
            Value::Object(m)
        }
        None => not_measured(),
    };
    o.insert("sync".into(), json!({ "total_ios": flushes, "lat_ns": sync_lat }));
    o.insert("job_runtime".into(), json!(j.runtime_ms));
    // fio divides its threads' CPU time by their run times added up: a share of one thread's time,
    // not of the whole machine's; 0 without a run time, as fio writes it.
    let share = |ns: u64| if j.runtime_ms > 0 { ns as f64 / (j.runtime_ms * 1_000_000) as f64 * 100.0 } else { 0.0 };
    o.insert("usr_cpu".into(), json!(share(j.cpu.user_ns)));
    o.insert("sys_cpu".into(), json!(share(j.cpu.sys_ns)));
    // fio's getrusage(RUSAGE_THREAD) counts, of the clones' threads over their measured spans.
    o.insert("ctx".into(), json!(j.counts.ctx));
    o.insert("majf".into(), json!(j.counts.majf));
    o.insert("minf".into(), json!(j.counts.minf));
    // With a latency target the depth moved during the run, which the shares fio counts per
    // submission would show and one depth cannot: left out.
    if j.cfg.rate_iops.is_none() && !j.cfg.workload.pacing.is_set() && j.cfg.latency_target.is_none() {
        o.insert("iodepth_level".into(), iodepth_level(j.cfg.queue_depth));
    }
    if let Some(b) = &j.batches {
        o.insert("iodepth_submit".into(), batch_shares(&b.submit));
        o.insert("iodepth_complete".into(), batch_shares(&b.complete));
    }
    // fio 3.33's stat.c: the depth its search ended at (the job's iodepth without a target), the
    // target in ns, the percentile, and the window in µs.
    let (depth, target) = match (j.cfg.latency_target, j.latency_depth) {
        (Some(t), Some(d)) => (d, Some(t)),
        (Some(t), None) => (1, Some(t)),
        (None, _) => (j.cfg.queue_depth, None),
    };
    o.insert("latency_depth".into(), json!(depth));
    o.insert("latency_target".into(), json!(target.map_or(0, |t| t.target_ns)));
    o.insert("latency_percentile".into(), json!(target.map_or(100.0, |t| t.percentile)));
    o.insert("latency_window".into(), json!(target.map_or(0, |t| t.window_ns / 1_000)));
    // fio's io_u_mark_latency marks each I/O's completion latency, unless disable_clat.
    let clat_all = j.stats.split.as_ref().filter(|_| j.latencies.clat).map(|s| {
        let mut all = DirStats::default();
        for d in &s.clat {
            all += d;
        }
        all
    });
    let (ns, us, ms) = latency_buckets(clat_all.as_ref().unwrap_or(&DirStats::default()));
    o.insert("latency_ns".into(), ns);
    o.insert("latency_us".into(), us);
    o.insert("latency_ms".into(), ms);
    // fio adds these when its job goes on after errors (continue_on_error).
    if j.cfg.on_error != crate::options::OnError::Stop {
        o.insert("total_err".into(), json!(total_err));
        o.insert("first_error".into(), json!(first_error));
    }
    Value::Object(o)
}

/// One direction: fio's counters, rates, latencies and bandwidth and IOPS statistics.
fn direction(dir: Direction, j: &FioJob<'_>, pcts: &[f64], plus: bool) -> Value {
    let d = j.stats.of(dir);
    let elapsed_ns = if dir == Direction::Read { j.read_elapsed_ns } else { j.elapsed_ns };
    let secs = elapsed_ns as f64 / 1e9;
    let bw_bytes = if secs > 0.0 { (d.bytes as f64 / secs).round() as u64 } else { 0 };
    let iops = if secs > 0.0 { d.ios as f64 / secs } else { 0.0 };
    let mut o = Map::new();
    o.insert("io_bytes".into(), json!(d.bytes));
    o.insert("io_kbytes".into(), json!(d.bytes / 1024));
    o.insert("bw_bytes".into(), json!(bw_bytes));
    o.insert("bw".into(), json!(bw_bytes / 1024));
    o.insert("iops".into(), json!(iops));
    // fio's thread runtime is whole microseconds rounded up to ms (backend.c's `(elapsed_us + 999)
    // / 1000`), so a job shorter than a millisecond ran for 1.
    let runtime_ms = (elapsed_ns / 1_000).div_ceil(1_000);
    o.insert("runtime".into(), json!(if d.ios > 0 { runtime_ms } else { 0 }));
    // fio counts every completed io_u, a failed one too (its bytes are not counted).
    o.insert("total_ios".into(), json!(d.ios + j.stats.errors.by_dir[dir as usize]));
    o.insert("short_ios".into(), json!(0));
    o.insert("drop_ios".into(), json!(0));
    // fio's three latencies, each as fio writes it: zeros (N 0) for one it did not measure.
    let with_percentiles = |d: &DirStats, percentiles: bool| {
        let mut m = summary(d);
        if percentiles && d.ios > 0 {
            let table: Map<String, Value> =
                pcts.iter().map(|p| (format!("{p:.6}"), json!(d.percentile_ns(*p)))).collect();
            m.insert("percentile".into(), Value::Object(table));
            if plus {
                m.insert("bins".into(), bins(d));
            }
        }
        Value::Object(m)
    };
    let kept = j.latencies;
    let (slat, clat) = (j.stats.slat(dir).filter(|_| kept.slat), j.stats.clat(dir).filter(|_| kept.clat));
    // fio's slat_percentiles is off by default, and not taken here.
    o.insert("slat_ns".into(), slat.map_or_else(not_measured, |s| with_percentiles(s, false)));
    o.insert("clat_ns".into(), clat.map_or_else(not_measured, |c| with_percentiles(c, true)));
    let lat = if kept.lat { with_percentiles(d, j.lat_percentiles) } else { not_measured() };
    o.insert("lat_ns".into(), lat);
    // fio's per-priority latencies (stat.c's add_ddir_status_json): with cmdprio, once two or
    // more priorities have samples, each with samples in fio's order, as lat_ns with
    // lat_percentiles and as clat_ns otherwise; fio books none of a latency it does not measure.
    let (key, measured) = if j.lat_percentiles { ("lat_ns", kept.lat) } else { ("clat_ns", clat.is_some()) };
    fn of(p: &PrioStats, lat: bool) -> &DirStats {
        if lat { &p.lat } else { &p.clat }
    }
    let prios: Vec<&PrioStats> = j
        .stats
        .prios
        .get(dir as usize)
        .into_iter()
        .flatten()
        .filter(|p| measured && of(p, j.lat_percentiles).ios > 0)
        .collect();
    if prios.len() >= 2 {
        let entries: Vec<Value> = prios
            .iter()
            .map(|p| {
                let (class, level) = IoPrio::class_level(p.value);
                json!({ "prioclass": class, "prio": level, key: with_percentiles(of(p, j.lat_percentiles), true) })
            })
            .collect();
        o.insert("prios".into(), Value::Array(entries));
    }
    let interval_ms = j.cfg.interval.as_millis() as u64;
    // A span without I/O in the direction has no delta, so no sample (fio's `if (!delta) continue`).
    let bw = SampleStat::of_job(&j.series, interval_ms, |p| {
        (p.of(dir).bytes > 0).then(|| bw_sample_kib(p.of(dir).bytes, p.span_ns))
    });
    let io = SampleStat::of_job(&j.series, interval_ms, |p| {
        (p.of(dir).ios > 0).then(|| iops_sample(p.of(dir).ios, p.span_ns))
    });
    // fio's calc_lat fails without samples: then every figure is 0, bw_agg too.
    let agg = if bw.samples == 0 { 0.0 } else { agg_percent(j.group_agg[dir as usize], bw.mean) };
    o.insert("bw_min".into(), json!(bw.min));
    o.insert("bw_max".into(), json!(bw.max));
    o.insert("bw_agg".into(), json!(agg));
    o.insert("bw_mean".into(), json!(bw.mean));
    o.insert("bw_dev".into(), json!(bw.dev()));
    o.insert("bw_samples".into(), json!(bw.samples));
    o.insert("iops_min".into(), json!(io.min));
    o.insert("iops_max".into(), json!(io.max));
    o.insert("iops_mean".into(), json!(io.mean));
    o.insert("iops_stddev".into(), json!(io.dev()));
    o.insert("iops_samples".into(), json!(io.samples));
    Value::Object(o)
}

/// fio's slack for a sample taken a little early (stat.c's `LOG_MSEC_SLACK`, on Linux).
const LOG_MSEC_SLACK_MS: u64 = 1;

/// fio's `io_stat` of bandwidth or IOPS samples (stat.c's `add_stat_sample`, read by
/// `calc_lat`), summed over an entry's threads as `sum_stat` sums them with `pure_sum` (fio's
/// `group_reporting`): min, max, mean, the sum of squared deviations and the sample count each
/// added up.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct SampleStat {
    min: u64,
    max: u64,
    mean: f64,
    /// Sum of squared deviations from the mean (fio's `S`).
    s: f64,
    samples: u64,
}

impl SampleStat {
    /// One thread's samples, one per point of its series that moved data in the direction (fio's
    /// `__add_samples` skips a direction with no delta) and spanned the interval (fio takes no
    /// sample before `avg_time - LOG_MSEC_SLACK` has passed, so a thread's last, partial span
    /// gives none).
    fn of_thread(series: &[ThreadPoint], interval_ms: u64, sample: impl Fn(&ThreadPoint) -> Option<u64>) -> Self {
        let values: Vec<u64> = series
            .iter()
            .filter(|p| p.span_ns / 1_000_000 + LOG_MSEC_SLACK_MS >= interval_ms)
            .filter_map(sample)
            .collect();
        let Some(&first) = values.first() else { return SampleStat::default() };
        let n = values.len() as f64;
        let mean = values.iter().map(|&v| v as f64).sum::<f64>() / n;
        SampleStat {
            min: values.iter().copied().fold(first, u64::min),
            max: values.iter().copied().fold(first, u64::max),
            mean,
            s: values.iter().map(|&v| (v as f64 - mean).powi(2)).sum(),
            samples: values.len() as u64,
        }
    }

    /// A job's: its threads' stats added up, as fio's `sum_stat(.., pure_sum = true)`; a thread
    /// without samples adds nothing.
    fn of_job(threads: &[&[ThreadPoint]], interval_ms: u64, sample: impl Fn(&ThreadPoint) -> Option<u64>) -> Self {
        // A thread without samples is all zeros (the default), so it adds nothing.
        threads.iter().map(|t| SampleStat::of_thread(t, interval_ms, &sample)).fold(
            SampleStat::default(),
            |sum, one| SampleStat {
                min: sum.min + one.min,
                max: sum.max + one.max,
                mean: sum.mean + one.mean,
                s: sum.s + one.s,
                samples: sum.samples + one.samples,
            },
        )
    }

    /// fio's standard deviation: `sqrt(S / (n - 1))`, 0 for fewer than two samples.
    fn dev(&self) -> f64 {
        if self.samples > 1 { (self.s / (self.samples - 1) as f64).sqrt() } else { 0.0 }
    }
}

/// min, max, mean, stddev and N as fio writes them (all zero without I/O).
fn summary(d: &DirStats) -> Map<String, Value> {
    let mut o = Map::new();
    let any = d.ios > 0;
    o.insert("min".into(), json!(if any { d.min_ns } else { 0 }));
    o.insert("max".into(), json!(if any { d.max_ns } else { 0 }));
    o.insert("mean".into(), json!(d.mean_ns()));
    o.insert("stddev".into(), json!(d.stddev_ns()));
    o.insert("N".into(), json!(d.ios));
    o
}

/// What fio writes for a latency it did not measure.
fn not_measured() -> Value {
    json!({ "min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0 })
}

/// json+ bins: each histogram bucket's value (ns, capped at the exact maximum, as the percentiles
/// are) and its count.
fn bins(d: &DirStats) -> Value {
    let mut o = Map::new();
    for v in d.hist.iter_recorded() {
        let key = v.value_iterated_to().min(d.max_ns).to_string();
        let n = v.count_at_value() + o.get(&key).and_then(Value::as_u64).unwrap_or(0);
        o.insert(key, json!(n));
    }
    Value::Object(o)
}

/// A closed loop keeps the queue full: every submission finds `qd` I/Os in flight.
fn iodepth_level(qd: u32) -> Value {
    let keys = ["1", "2", "4", "8", "16", "32", ">=64"];
    let at = match qd {
        1 => 0,
        2..=3 => 1,
        4..=7 => 2,
        8..=15 => 3,
        16..=31 => 4,
        32..=63 => 5,
        _ => 6,
    };
    Value::Object(
        keys.iter().enumerate().map(|(i, k)| (k.to_string(), json!(if i == at { 100.0 } else { 0.0 }))).collect(),
    )
}

/// fio's iodepth_submit or iodepth_complete: the share (percent) of calls in each of its ranges of
/// I/Os carried, with fio's floor of 0.1 for a range that holds any (`stat_calc_dist`).
fn batch_shares(calls: &[u64; 7]) -> Value {
    let keys = ["0", "4", "8", "16", "32", "64", ">=64"];
    let total: u64 = calls.iter().sum();
    let share = |n: u64| match (n, total) {
        (_, 0) => 0.0,
        (0, _) => 0.0,
        (n, t) => (n as f64 / t as f64 * 100.0).max(0.1),
    };
    Value::Object(keys.iter().zip(calls).map(|(k, n)| (k.to_string(), json!(share(*n)))).collect())
}

/// fio's latency_ns, latency_us and latency_ms: the share of I/Os (percent) in each range
/// `[previous bound, bound)`, with fio's floor of 0.01 for a range that holds any.
fn latency_buckets(d: &DirStats) -> (Value, Value, Value) {
    const BOUNDS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
    let total = d.ios.max(1) as f64;
    let share = |lo: u64, hi: u64| -> f64 {
        let n: u64 = d
            .hist
            .iter_recorded()
            .filter(|v| (lo..hi).contains(&v.value_iterated_to().min(d.max_ns)))
            .map(|v| v.count_at_value())
            .sum();
        let p = n as f64 / total * 100.0;
        if p > 0.0 && p < 0.01 { 0.01 } else { p }
    };
    let table = |scale: u64, floor: u64| -> Map<String, Value> {
        let mut lo = floor;
        BOUNDS
            .iter()
            .map(|b| {
                let hi = b * scale;
                let v = share(lo, hi);
                lo = hi;
                (b.to_string(), json!(v))
            })
            .collect()
    };
    let ns = table(1, 0);
    let us = table(1_000, 1_000);
    let mut ms = table(1_000_000, 1_000_000);
    ms.insert("2000".into(), json!(share(1_000_000_000, 2_000_000_000)));
    ms.insert(">=2000".into(), json!(share(2_000_000_000, u64::MAX)));
    (Value::Object(ns), Value::Object(us), Value::Object(ms))
}

/// fio's `agg` of a group in one direction, bytes per second (stat.c's `__show_run_stats`:
/// `iobytes * 1000 / max_run`, the group's bytes over its longest runtime in whole ms, in
/// integers), from each job's bytes and runtime in ns.
pub fn group_agg(jobs: impl IntoIterator<Item = (u64, u64)>) -> u64 {
    let (bytes, max_run_ms) = jobs
        .into_iter()
        .filter(|&(bytes, _)| bytes > 0)
        .fold((0u64, 0u64), |(b, m), (bytes, ns)| (b + bytes, m.max(ns / 1_000_000)));
    if max_run_ms == 0 { 0 } else { (u128::from(bytes) * 1000 / u128::from(max_run_ms)) as u64 }
}

/// fio's `bw_agg` (stat.c's `convert_agg_kbytes_percent`, whose `mean` parameter is an `int`, so
/// the mean is truncated): the job's mean bandwidth as a share of its group's `agg`, at most 100,
/// and 100 when the group moved 1024 bytes per second or less.
fn agg_percent(group_agg: u64, mean_kib: f64) -> f64 {
    if group_agg > 1024 { (mean_kib.trunc() * 100.0 / (group_agg as f64 / 1024.0)).min(100.0) } else { 100.0 }
}

fn disk(d: &DiskUtil) -> Value {
    json!({
        "name": d.name,
        "read_ios": d.read_ios,
        "write_ios": d.write_ios,
        "read_merges": d.read_merges,
        "write_merges": d.write_merges,
        "read_ticks": d.read_ticks,
        "write_ticks": d.write_ticks,
        "in_queue": d.in_queue,
        "util": d.util,
    })
}

/// `Mon Nov 30 19:11:00 2026`, as C's ctime (UTC).
fn ctime(unix_s: u64) -> String {
    let days = (unix_s / 86_400) as i64;
    let secs = unix_s % 86_400;
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    const WEEKDAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {year}",
        WEEKDAYS[days.rem_euclid(7) as usize],
        MONTHS[(month - 1) as usize],
        day,
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// Which of fio's logs to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogKind {
    Bw,
    Iops,
    Lat,
    Clat,
    Slat,
}

impl LogKind {
    pub fn suffix(self) -> &'static str {
        match self {
            LogKind::Bw => "bw",
            LogKind::Iops => "iops",
            LogKind::Lat => "lat",
            LogKind::Clat => "clat",
            LogKind::Slat => "slat",
        }
    }
}

/// fio's bandwidth sample of a thread, KiB/s: `bytes` moved in `span_ns`, as stat.c's
/// `__add_samples` computes it, in integers and truncating at each step (`delta * 1000 / spent /
/// 1024`, `spent` in whole milliseconds, `mtime_since`'s truncation); 0 over less than a
/// millisecond, as fio's `spent == 0`.
pub fn bw_sample_kib(bytes: u64, span_ns: u64) -> u64 {
    let spent_ms = span_ns / 1_000_000;
    if spent_ms == 0 { 0 } else { (u128::from(bytes) * 1000 / u128::from(spent_ms) / 1024) as u64 }
}

/// fio's IOPS sample of a thread: `(delta * 1000) / spent`, in integers, as [`bw_sample_kib`].
pub fn iops_sample(ios: u64, span_ns: u64) -> u64 {
    let spent_ms = span_ns / 1_000_000;
    if spent_ms == 0 { 0 } else { (u128::from(ios) * 1000 / u128::from(spent_ms)) as u64 }
}

/// The directions fio logs, with the number it writes for each: its `ddir_rw` ones (stat.c's
/// `add_log_sample` drops the rest), so trims too; a flush (fio's sync) and write-zeroes (fio has
/// none) are not logged.
const LOGGED: [(Direction, u8); 3] = [(Direction::Read, 0), (Direction::Write, 1), (Direction::Trim, 2)];

/// One job clone's (worker thread's) averaged log (`log_avg_msec`), as fio writes it: a line per
/// window and direction with I/O (reads 0, writes 1, trims 2), `time_ms, value, direction, 0, 0`.
/// Bandwidth in KiB/s, latency the window's mean in ns. The block size and the priority are 0:
/// an averaged line is a fresh sample (stat.c's `__add_stat_to_log`) that takes only the window's
/// mean (or max), whatever the sizes and priorities of the samples averaged into it.
pub fn log_lines(kind: LogKind, series: &[ThreadPoint]) -> String {
    log_lines_prio(kind, series, false)
}

/// [`log_lines`], with fio's `log_prio=1` (`prio_column`): the last column is the I/O priority in
/// fio's `0x%04x`, which on an averaged line fio writes as `0x0000` (stat.c's `__add_stat_to_log`
/// logs a priority of 0), as here, where each line stands for a window of I/Os.
pub fn log_lines_prio(kind: LogKind, series: &[ThreadPoint], prio_column: bool) -> String {
    let last = if prio_column { "0x0000" } else { "0" };
    let mut out = String::new();
    for p in series {
        let t_ms = (p.t_s * 1000.0).round() as u64;
        for (dir, d) in LOGGED.map(|(dir, n)| (n, p.of(dir))) {
            // fio's slat log has a line for a window with submission latencies only (none on a
            // synchronous engine); clat, measured apart (`--latency split`), is its own mean, and
            // is the whole latency otherwise.
            if d.ios == 0 || (kind == LogKind::Slat && d.slat_ios == 0) {
                continue;
            }
            let value = match kind {
                LogKind::Bw => bw_sample_kib(d.bytes, p.span_ns),
                LogKind::Iops => iops_sample(d.ios, p.span_ns),
                LogKind::Lat => d.mean_ns().round() as u64,
                LogKind::Clat if d.clat_ios > 0 => d.clat_mean_ns().round() as u64,
                LogKind::Clat => d.mean_ns().round() as u64,
                LogKind::Slat => d.slat_mean_ns().round() as u64,
            };
            let _ = writeln!(out, "{t_ms}, {value}, {dir}, 0, {last}");
        }
    }
    out
}

/// The columns of fio's per-I/O log lines beyond the first four (`log_offset`, `log_prio`), and
/// the job's own priority, which an I/O without one of its own has (fio's `td->ioprio`).
#[derive(Clone, Copy, Debug, Default)]
pub struct IoLogColumns {
    pub offset: bool,
    pub prio: bool,
    pub job_prio: u16,
}

/// One job clone's per-I/O log, as fio 3.33 writes it without `log_avg_msec` (iolog.c's
/// `flush_samples`): a line per I/O, `msec, value, direction, bs[, offset], prio`, in the order fio
/// adds its samples. `msec` is whole milliseconds since the clone's epoch (`epochs[0]`, when it
/// began measuring, or `epochs[1]` from when the latency target's last window restarted it: fio's
/// `mtime_since_now(&td->epoch)`) at the moment fio adds the sample: the
/// completion for `lat`, `clat`, `bw` and `iops` (io_u.c's `account_io_completion`), the send for
/// `slat` (`io_u_queued`, only for I/Os sent after the ramp, and only where the engine sends apart
/// from queuing), so that log is in the order of the sends. Values: `lat` the total latency in
/// ns, `clat` from the send, `slat` up to it, `bw` the I/O's `bytes * 1000000 / clat` (fio's
/// `add_bw_sample`, 0 for a clat of 0), `iops` 1. `bs` is the I/O's size; the priority column is
/// fio's `0x%04x` of the I/O's priority with `log_prio`, else 1 for a real-time class and 0
/// otherwise. Only reads, writes and trims are logged (directions 0, 1, 2), as fio logs them.
pub fn write_io_log(
    out: &mut dyn std::io::Write,
    kind: LogKind,
    ios: &[LoggedIo],
    epochs: [u64; 2],
    cols: IoLogColumns,
) -> std::io::Result<()> {
    let logged = |io: &&LoggedIo| LOGGED.iter().any(|(d, _)| *d == io.dir);
    let mut order: Vec<&LoggedIo> = ios.iter().filter(logged).collect();
    if kind == LogKind::Slat {
        order.retain(|io| io.has_slat() && io.sent_ns >= epochs[0]);
        // By issue stamp among I/Os sent by one call (their queue order).
        order.sort_by_key(|io| (io.sent_ns, io.start_ns));
    }
    for io in order {
        let at_ns = if kind == LogKind::Slat { io.sent_ns } else { io.end_ns };
        let epoch = if at_ns >= epochs[1] { epochs[1] } else { epochs[0] };
        let t_ms = at_ns.saturating_sub(epoch) / 1_000_000;
        let value = match kind {
            LogKind::Lat => io.lat_ns(),
            LogKind::Clat => io.clat_ns(),
            LogKind::Slat => io.slat_ns(),
            LogKind::Bw if io.clat_ns() == 0 => 0,
            LogKind::Bw => u64::from(io.len) * 1_000_000 / io.clat_ns(),
            LogKind::Iops => 1,
        };
        let dir = LOGGED.iter().find(|(d, _)| *d == io.dir).map_or(0, |(_, n)| *n);
        write!(out, "{t_ms}, {value}, {dir}, {}, ", io.len)?;
        if cols.offset {
            write!(out, "{}, ", io.offset)?;
        }
        let prio = if io.prio != 0 { io.prio } else { cols.job_prio };
        if cols.prio {
            writeln!(out, "0x{prio:04x}")?;
        } else {
            // fio's `ioprio_value_is_class_rt`.
            writeln!(out, "{}", u8::from(IoPrio::class_level(prio).0 == 1))?;
        }
    }
    Ok(())
}

/// [`write_io_log`] into a string.
pub fn io_log_lines(kind: LogKind, ios: &[LoggedIo], epochs: [u64; 2], cols: IoLogColumns) -> String {
    let mut out = Vec::new();
    write_io_log(&mut out, kind, ios, epochs, cols).expect("writing to memory cannot fail");
    String::from_utf8(out).expect("the lines are ASCII")
}

/// fio 3.33's line for a job with a latency target, in its normal output (stat.c's
/// `show_thread_status_normal`): the target in ns, the window in µs, the percentile, the depth.
pub fn latency_target_line(t: &crate::options::LatencyTarget, depth: u32) -> String {
    format!(
        "latency   : target={}, window={}, percentile={:.2}%, depth={depth}",
        t.target_ns,
        t.window_ns / 1_000,
        t.percentile
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::ThreadDir;

    fn null_config(extra: &[&str]) -> RunConfig {
        use clap::Parser;
        let mut v = vec!["nvmebench", "run", "--engine", "null"];
        v.extend_from_slice(extra);
        let crate::cli::Command::Run(a) = crate::cli::Cli::try_parse_from(v).unwrap().command else { panic!() };
        RunConfig::resolve(&a).unwrap()
    }

    /// fio's continue_on_error adds the job's error count and first errno beside `error`.
    #[test]
    fn a_job_that_goes_on_after_errors_counts_them_as_fio() {
        let cfg = null_config(&["--on-error", "continue"]);
        let mut stats = Stats::new(false);
        stats.dir[0].record(1_000, 10, 4096 * 10);
        stats.errors.count(Direction::Read, crate::io::IoError::Errno { errno: libc::EIO }, 3);
        let j = FioJob {
            name: "j",
            group_id: 0,
            options: Vec::new(),
            cfg: &cfg,
            stats,
            elapsed_ns: 1_000_000_000,
            read_elapsed_ns: 1_000_000_000,
            verify_ns: 0,
            runtime_ms: 1_000,
            cpu: CpuUsage::default(),
            counts: ThreadCounts::default(),
            batches: None,
            series: Vec::new(),
            group_agg: [0; 5],
            lat_percentiles: false,
            latencies: crate::options::FioLatencies::default(),
            latency_depth: None,
        };
        let d = render(&[], &[j], &[], false, SystemTime::UNIX_EPOCH);
        let job = &d["jobs"][0];
        assert_eq!((&job["error"], &job["total_err"], &job["first_error"]), (&json!(5), &json!(3), &json!(5)));
    }

    /// fio counts its verify pass's reads in the job's reads (clones_of adds them to the clone's),
    /// and the pass's time in its read runtime, alone in a job that reads nothing before it, after
    /// the run's in one that does, and in its job_runtime.
    #[test]
    fn a_verify_pass_counts_in_the_reads_and_their_runtime_as_fios() {
        let (writes, mixed) = (null_config(&["--rw", "randwrite"]), null_config(&["--rw", "randrw"]));
        let spec = |cfg| FioJobSpec {
            name: "v",
            group_id: 0,
            group_reporting: false,
            options: &[],
            cfg,
            lat_percentiles: false,
            latencies: crate::options::FioLatencies::default(),
        };
        let mut stats = Stats::new(false);
        stats.dir[1].record(1_000, 100, 4096 * 100);
        stats.dir[0].record(500, 100, 4096 * 100);
        let clone = |job| FioClone {
            job,
            stats: stats.clone(),
            span_ns: 300_000_000,
            verify_ns: 100_000_000,
            cpu: CpuUsage::default(),
            counts: ThreadCounts::default(),
            batches: None,
            series: &[],
            latency_depth: None,
            ios: &[],
            log_epochs_ns: [0; 2],
            log_buffers_allocated: 0,
        };
        let d = render(
            &[],
            &entries(&[spec(&writes), spec(&mixed)], &[clone(0), clone(1)]),
            &[],
            false,
            SystemTime::UNIX_EPOCH,
        );
        let figures = |j: &Value| {
            [
                &j["read"]["total_ios"],
                &j["read"]["runtime"],
                &j["read"]["bw_bytes"],
                &j["write"]["runtime"],
                &j["job_runtime"],
            ]
            .map(|v| v.as_u64().unwrap())
        };
        assert_eq!(figures(&d["jobs"][0]), [100, 100, 4_096_000, 300, 400], "a write job: the pass's 100 ms");
        assert_eq!(figures(&d["jobs"][1]), [100, 400, 1_024_000, 300, 400], "a mixed job: the run's and the pass's");
        assert!(d["jobs"][0]["read"]["lat_ns"]["N"] == 100, "timed as fio times them");
    }

    #[test]
    fn a_job_in_fios_shape() {
        let cfg = null_config(&["--percentiles", "50,99.9"]);
        // fio's three latencies, measured apart (`--latency split`): slat 100 ns, clat as given.
        let mut stats = Stats::new(true);
        stats.dir[0].record(1_100, 1_000, 4096 * 1_000);
        stats.dir[0].record(2_000_100, 24, 4096 * 24);
        let split = stats.split.as_mut().unwrap();
        split.slat[0].record(100, 1_024, 4096 * 1_024);
        split.clat[0].record(1_000, 1_000, 4096 * 1_000);
        split.clat[0].record(2_000_000, 24, 4096 * 24);
        let cpu = CpuUsage { user_ns: 250_000_000, sys_ns: 500_000_000, ios: 1_024 };
        let job = |cpu: CpuUsage, plus| {
            let j = FioJob {
                name: "j",
                group_id: 0,
                options: vec![("rw".into(), "randread".into())],
                cfg: &cfg,
                stats: stats.clone(),
                elapsed_ns: 1_000_000_000,
                read_elapsed_ns: 1_000_000_000,
                verify_ns: 0,
                runtime_ms: 1_000,
                cpu,
                counts: ThreadCounts { ctx: 12, majf: 1, minf: 30 },
                batches: None,
                series: Vec::new(),
                group_agg: [4096 * 1024, 0, 0, 0, 0],
                lat_percentiles: plus,
                latencies: crate::options::FioLatencies::default(),
                latency_depth: None,
            };
            render(&[], &[j], &[], plus, SystemTime::UNIX_EPOCH)
        };
        let d = job(cpu, false);
        let r = &d["jobs"][0]["read"];
        assert_eq!(
            (r["io_bytes"].as_u64(), r["io_kbytes"].as_u64(), r["bw"].as_u64()),
            (Some(4_194_304), Some(4096), Some(4096))
        );
        assert_eq!(r["total_ios"], 1024);
        assert_eq!(r["runtime"], 1000);
        assert_eq!(r["clat_ns"]["percentile"]["50.000000"], 1000);
        assert!(r["clat_ns"]["percentile"]["99.900000"].as_u64().unwrap().abs_diff(2_000_000) < 2_000);
        assert!(r["clat_ns"].get("bins").is_none(), "bins are json+ only");
        assert_eq!(
            (&r["slat_ns"]["N"], &r["slat_ns"]["min"], &r["slat_ns"]["max"]),
            (&json!(1024), &json!(100), &json!(100))
        );
        assert!(r["slat_ns"].get("percentile").is_none(), "fio's slat_percentiles=0");
        assert_eq!((&r["clat_ns"]["min"], &r["clat_ns"]["max"]), (&json!(1_000), &json!(2_000_000)));
        assert_eq!(
            (&r["lat_ns"]["N"], &r["lat_ns"]["min"], &r["lat_ns"]["max"]),
            (&json!(1024), &json!(1_100), &json!(2_000_100))
        );
        assert_eq!((&r["bw_samples"], &r["bw_agg"]), (&json!(0), &json!(0.0)), "no series: fio's zeros");
        assert_eq!(d["jobs"][0]["write"]["bw_samples"], 0, "fio's zeros for a direction without I/O");
        assert_eq!((&d["jobs"][0]["usr_cpu"], &d["jobs"][0]["sys_cpu"]), (&json!(25.0), &json!(50.0)));
        assert_eq!(d["jobs"][0]["eta"], 2_147_483_647, "fio's value for a finished job");
        assert!(d["jobs"][0].get("total_err").is_none(), "fio writes it with continue_on_error only");
        assert_eq!(d["jobs"][0]["iodepth_level"]["32"], 100.0);
        assert_eq!(d["jobs"][0]["latency_ms"]["4"], 2.34375);
        assert!(d.get("global options").is_none() && d.get("disk_util").is_none());
        let d = job(CpuUsage::default(), true);
        assert_eq!((&d["jobs"][0]["usr_cpu"], &d["jobs"][0]["job_runtime"]), (&json!(0.0), &json!(1000)));
        assert_eq!(d["jobs"][0]["read"]["clat_ns"]["bins"]["1000"], 1000);
        assert!(r.get("lat_ns").and_then(|l| l.get("percentile")).is_none(), "fio's lat_percentiles=0");
        // lat_percentiles=1: lat_ns has percentiles and bins of its own (the total, not clat).
        let l = &d["jobs"][0]["read"]["lat_ns"];
        assert!(l["percentile"]["50.000000"].as_u64().unwrap().abs_diff(1_100) <= 1, "{l}");
        assert_eq!(l["bins"]["1100"], 1000, "{l}");
    }

    /// fio's `jobs[]` entries, as fio 3.33 writes them on the null engine (stat.c's
    /// `__show_run_stats`), for clones given as (reporting group, group_reporting).
    #[test]
    fn entries_start_where_fios_loop_starts_them() {
        // [a] and [b] with numjobs=2, [c] after a stonewall, [d] new_group and [e]: without
        // group_reporting, one entry per clone (fio: a a b b c d e, groups 0 0 0 0 1 2 2).
        let groups = [0, 0, 0, 0, 1, 2, 2];
        let each: Vec<(usize, bool)> = groups.iter().map(|&g| (g, false)).collect();
        assert_eq!(entry_ranges(&each), (0..7).map(|i| i..i + 1).collect::<Vec<_>>());
        // With group_reporting in [global]: one per group (fio: a 0, c 1, d 2).
        let all: Vec<(usize, bool)> = groups.iter().map(|&g| (g, true)).collect();
        assert_eq!(entry_ranges(&all), [0..4, 4..5, 5..7]);
        // group_reporting in [b] only: b's first clone joins the entry of a's second, as fio's loop
        // has it (fio: a with 1024 reads, then a with 1024 reads and 2048 writes).
        assert_eq!(entry_ranges(&[(0, false), (0, false), (0, true), (0, true)]), [0..1, 1..4]);
        // [a] group_reporting x2, [b] x2 without, [c] group_reporting: a+a, b, b+c.
        assert_eq!(entry_ranges(&[(0, true), (0, true), (0, false), (0, false), (0, true)]), [0..2, 2..3, 3..5]);
        assert_eq!(entry_ranges(&[(0, true), (1, true)]), [0..1, 1..2], "a new group, a new entry");
        assert!(entry_ranges(&[]).is_empty());
    }

    /// An entry sums its clones as fio's `sum_thread_stats` sums threads: counts added, the
    /// longest runtime, job_runtime and CPU times added; its name is its first clone's job's and
    /// its options its last's; bw_agg's `agg` is its whole group's.
    #[test]
    fn an_entry_sums_its_clones_as_fio_sums_threads() {
        let cfg = null_config(&[]);
        let (read, write) = ([("rw".to_string(), "read".to_string())], [("rw".to_string(), "write".to_string())]);
        let spec = |name, group_id, group_reporting, options| FioJobSpec {
            name,
            group_id,
            group_reporting,
            options,
            cfg: &cfg,
            lat_percentiles: false,
            latencies: crate::options::FioLatencies::default(),
        };
        let specs = [spec("a", 0, true, &read[..]), spec("b", 0, true, &write[..]), spec("c", 1, false, &read[..])];
        // ms of span and of user CPU; each span 0.999999 ms longer, which fio's whole ms drop.
        let clone = |job, ios: u64, span_ms: u64, user_ms: u64| {
            let mut stats = Stats::new(false);
            stats.dir[0].record(1_000, ios, 4096 * ios);
            let cpu = CpuUsage { user_ns: user_ms * 1_000_000, sys_ns: user_ms * 100_000, ios };
            let counts = ThreadCounts { ctx: ios, majf: 0, minf: 1 };
            let batches = Some(BatchCounts { submit: [0, ios, 0, 0, 0, 0, 0], complete: [0, 0, ios, 0, 0, 0, 1] });
            FioClone {
                job,
                stats,
                span_ns: span_ms * 1_000_000 + 999_999,
                verify_ns: 0,
                cpu,
                counts,
                batches,
                series: &[],
                latency_depth: None,
                ios: &[],
                log_epochs_ns: [0; 2],
                log_buffers_allocated: 0,
            }
        };
        let clones = [clone(0, 100, 300, 150), clone(0, 200, 400, 100), clone(1, 50, 200, 50), clone(2, 10, 100, 10)];
        let e = entries(&specs, &clones);
        assert_eq!(e.len(), 2);
        let (ab, c) = (&e[0], &e[1]);
        assert_eq!((ab.name, ab.group_id, &ab.options[..]), ("a", 0, &write[..]));
        assert_eq!((c.name, c.group_id), ("c", 1));
        assert_eq!(ab.stats.of(Direction::Read).ios, 350);
        assert_eq!((ab.elapsed_ns, ab.runtime_ms, ab.series.len()), (400_999_999, 900, 3));
        assert_eq!((ab.cpu.user_ns, ab.cpu.sys_ns), (300_000_000, 30_000_000));
        // fio adds its threads' context switches and faults: a and b's three clones.
        assert_eq!(ab.counts, ThreadCounts { ctx: 350, majf: 0, minf: 3 });
        // bytes over the group's longest runtime in whole ms: 350 x 4 KiB in 400 ms.
        assert_eq!(ab.group_agg[Direction::Read as usize], 350 * 4096 * 1000 / 400);
        assert_eq!(c.group_agg[Direction::Read as usize], 10 * 4096 * 1000 / 100);
        let d = render(&[], &e, &[], false, SystemTime::UNIX_EPOCH);
        let j = &d["jobs"][0];
        assert_eq!((&j["ctx"], &j["majf"], &j["minf"]), (&json!(350), &json!(0), &json!(3)));
        // Calls added up over the clones, as shares of all: 350 of 353 reaps carried 5-8, 3 more.
        assert_eq!(j["iodepth_submit"]["4"], json!(100.0));
        assert_eq!(j["iodepth_complete"]["8"], json!(350.0 / 353.0 * 100.0));
        assert_eq!(j["iodepth_complete"][">=64"], json!(3.0 / 353.0 * 100.0));
        assert_eq!(j["iodepth_complete"]["0"], json!(0.0));
        // job_runtime adds whole ms (fio's mtime); a direction's runtime rounds µs up (fio's).
        assert_eq!(
            (&j["job_runtime"], &j["read"]["runtime"], &j["read"]["total_ios"]),
            (&json!(900), &json!(401), &json!(350))
        );
        assert_eq!(j["usr_cpu"].as_f64().unwrap(), 300.0 / 900.0 * 100.0, "a share of the threads' run times");
        assert_eq!(d["jobs"][1]["usr_cpu"].as_f64().unwrap(), 10.0, "c's own thread: 10 ms of 100");
    }

    #[test]
    fn ctime_matches_c() {
        assert_eq!(ctime(0), "Thu Jan  1 00:00:00 1970");
        assert_eq!(ctime(1_700_000_000), "Tue Nov 14 22:13:20 2023");
    }

    #[test]
    fn latency_buckets_follow_fios_ranges() {
        let mut d = DirStats::default();
        d.record(1, 1, 0); // [0, 2) ns
        d.record(3, 1, 0); // [2, 4) ns
        d.record(1_500, 2, 0); // [1, 2) us
        let (ns, us, ms) = latency_buckets(&d);
        assert_eq!(ns["2"], json!(25.0));
        assert_eq!(ns["4"], json!(25.0));
        assert_eq!(us["2"], json!(50.0));
        assert_eq!(ms[">=2000"], json!(0.0));
    }

    #[test]
    fn bins_agree_with_percentiles() {
        let mut d = DirStats::default();
        for v in [100u64, 2_500, 2_501, 70_000, 1_234_567] {
            d.record(v, 3, 0);
        }
        let b = bins(&d);
        let mut rows: Vec<(u64, u64)> =
            b.as_object().unwrap().iter().map(|(k, v)| (k.parse().unwrap(), v.as_u64().unwrap())).collect();
        rows.sort_unstable();
        for p in [50.0, 90.0, 99.0] {
            let need = (p / 100.0 * d.ios as f64).ceil() as u64;
            let mut acc = 0;
            let at = rows.iter().find(|(_, n)| {
                acc += n;
                acc >= need
            });
            assert_eq!(at.unwrap().0, d.percentile_ns(p), "p{p}");
        }
    }

    /// A logged I/O: issued at `start_us`, sent `slat_ns` later (`None`: no slat measured),
    /// completed `lat_ns` after issue; times in ns since the run's time zero.
    fn io(dir: Direction, start_ns: u64, slat_ns: Option<u64>, lat_ns: u64, offset: u64, prio: u16) -> LoggedIo {
        LoggedIo {
            start_ns,
            sent_ns: start_ns + slat_ns.unwrap_or(0),
            end_ns: start_ns + lat_ns,
            offset,
            len: 4096,
            prio,
            dir,
            // The worker's FLAG_SLAT (1), named in `worker::iolog`, which reports do not import.
            flags: u8::from(slat_ns.is_some()),
        }
    }

    #[test]
    fn per_io_logs_have_a_line_per_io_in_fios_format() {
        const MS: u64 = 1_000_000;
        let ios = [
            io(Direction::Read, 5 * MS, Some(1_000), 40_000, 8192, 0),
            io(Direction::Write, 6 * MS + 999_999, Some(3_000), 2 * MS, 0, 0),
        ];
        let plain = IoLogColumns::default();
        // Times are whole ms since the epoch (1 ms here) at the completion; values in ns.
        assert_eq!(io_log_lines(LogKind::Lat, &ios, [MS; 2], plain), "4, 40000, 0, 4096, 0\n7, 2000000, 1, 4096, 0\n");
        assert_eq!(io_log_lines(LogKind::Clat, &ios, [MS; 2], plain), "4, 39000, 0, 4096, 0\n7, 1997000, 1, 4096, 0\n");
        // slat at the send: the read's 5.001 ms, the write's 7.002999 ms.
        assert_eq!(io_log_lines(LogKind::Slat, &ios, [MS; 2], plain), "4, 1000, 0, 4096, 0\n6, 3000, 1, 4096, 0\n");
        // bw: bytes * 1000000 / clat_ns, truncated (fio's add_bw_sample); iops: 1.
        assert_eq!(io_log_lines(LogKind::Bw, &ios, [MS; 2], plain), "4, 105025, 0, 4096, 0\n7, 2051, 1, 4096, 0\n");
        assert_eq!(io_log_lines(LogKind::Iops, &ios, [MS; 2], plain), "4, 1, 0, 4096, 0\n7, 1, 1, 4096, 0\n");
        // log_offset=1: the offset before the priority column.
        let offset = IoLogColumns { offset: true, ..plain };
        assert_eq!(io_log_lines(LogKind::Iops, &ios, [MS; 2], offset), "4, 1, 0, 4096, 8192, 0\n7, 1, 1, 4096, 0, 0\n");
    }

    #[test]
    fn the_priority_column_is_fios_hex_with_log_prio_else_whether_it_is_real_time() {
        let rt = IoPrio::value_of(1, 3);
        let idle = IoPrio::value_of(3, 0);
        let ios = [
            io(Direction::Read, 0, None, 100, 0, rt),
            io(Direction::Read, 0, None, 100, 0, idle),
            // None of its own: the job's.
            io(Direction::Read, 0, None, 100, 0, 0),
        ];
        let cols = IoLogColumns { offset: false, prio: true, job_prio: IoPrio::value_of(2, 4) };
        assert_eq!(
            io_log_lines(LogKind::Lat, &ios, [0; 2], cols),
            "0, 100, 0, 4096, 0x2003\n0, 100, 0, 4096, 0x6000\n0, 100, 0, 4096, 0x4004\n"
        );
        let cols = IoLogColumns { prio: false, offset: true, ..cols };
        assert_eq!(
            io_log_lines(LogKind::Lat, &ios, [0; 2], cols),
            "0, 100, 0, 4096, 0, 1\n0, 100, 0, 4096, 0, 0\n0, 100, 0, 4096, 0, 0\n"
        );
    }

    #[test]
    fn the_slat_log_is_in_send_order_and_only_where_fio_measures_it() {
        const MS: u64 = 1_000_000;
        let ios = [
            // Completed first, sent last.
            io(Direction::Read, 3 * MS, Some(MS), 2 * MS, 1, 0),
            // Sent together by one call (one stamp): in issue order, whatever the completions.
            io(Direction::Read, 2 * MS + 10, Some(MS - 10), 5 * MS, 2, 0),
            io(Direction::Read, 2 * MS, Some(MS), 6 * MS, 3, 0),
            // Sent during the ramp (before the epoch): fio's io_u_queued logs nothing then.
            io(Direction::Read, 0, Some(100), 7 * MS, 4, 0),
            // A synchronous engine's I/O: no slat.
            io(Direction::Read, 8 * MS, None, 100, 5, 0),
        ];
        let offsets =
            |text: String| text.lines().map(|l| l.split(", ").nth(4).unwrap().to_string()).collect::<Vec<_>>();
        let cols = IoLogColumns { offset: true, ..IoLogColumns::default() };
        assert_eq!(offsets(io_log_lines(LogKind::Slat, &ios, [MS; 2], cols)), ["3", "2", "1"]);
        // The others are in the order given (the order of completion), every I/O.
        assert_eq!(offsets(io_log_lines(LogKind::Clat, &ios, [MS; 2], cols)), ["1", "2", "3", "4", "5"]);
    }

    /// fio's latency target resets the job's epoch when its last window starts (`reset_all_stats`):
    /// the lines from then count from there, those before keep theirs.
    #[test]
    fn per_io_log_times_count_from_the_restarted_epoch_after_it() {
        const MS: u64 = 1_000_000;
        let ios = [io(Direction::Read, 0, Some(10), 9 * MS, 0, 0), io(Direction::Read, 11 * MS, Some(10), MS, 0, 0)];
        let times = |kind| {
            io_log_lines(kind, &ios, [MS, 10 * MS], IoLogColumns::default())
                .lines()
                .map(|l| l.split(", ").next().unwrap().to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(times(LogKind::Lat), ["8", "2"]);
        // The first I/O was sent during the ramp: no slat line for it.
        assert_eq!(times(LogKind::Slat), ["1"]);
    }

    #[test]
    fn per_io_logs_leave_out_flushes_and_write_zeroes_and_number_trims_2() {
        let ios = [
            io(Direction::Trim, 0, None, 100, 0, 0),
            io(Direction::Flush, 0, None, 100, 0, 0),
            io(Direction::WriteZeroes, 0, None, 100, 0, 0),
        ];
        assert_eq!(io_log_lines(LogKind::Iops, &ios, [0; 2], IoLogColumns::default()), "0, 1, 2, 4096, 0\n");
        // A clat of 0 has a bandwidth of 0, as fio's.
        let zero = [io(Direction::Read, 0, None, 0, 0, 0)];
        assert_eq!(io_log_lines(LogKind::Bw, &zero, [0; 2], IoLogColumns::default()), "0, 0, 0, 4096, 0\n");
    }

    #[test]
    fn logs_have_fios_columns() {
        let p = |t_s: f64| {
            let mut p = ThreadPoint { t_s, span_ns: 1_000_000_000, ..ThreadPoint::default() };
            p.dir[Direction::Read as usize] =
                ThreadDir { ios: 10, bytes: 40_960, sum_ns: 15_004, ..Default::default() };
            p
        };
        assert_eq!(log_lines(LogKind::Bw, &[p(0.5), p(1.0)]), "500, 40, 0, 0, 0\n1000, 40, 0, 0, 0\n");
        assert_eq!(log_lines(LogKind::Lat, &[p(0.25)]), "250, 1500, 0, 0, 0\n");
        // fio's log_prio=1: its hex priority, 0 on an averaged line.
        assert_eq!(log_lines_prio(LogKind::Lat, &[p(0.25)], true), "250, 1500, 0, 0, 0x0000\n");
        // Measured apart, clat and slat are their own means; without, clat is the whole latency
        // and the slat log has no line.
        assert_eq!(log_lines(LogKind::Clat, &[p(0.25)]), "250, 1500, 0, 0, 0\n");
        assert_eq!(log_lines(LogKind::Slat, &[p(0.25)]), "");
        let mut split = p(0.25);
        split.dir[0] =
            ThreadDir { slat_ios: 10, slat_sum_ns: 4_004, clat_ios: 10, clat_sum_ns: 11_000, ..split.dir[0] };
        assert_eq!(log_lines(LogKind::Lat, &[split]), "250, 1500, 0, 0, 0\n");
        assert_eq!(log_lines(LogKind::Clat, &[split]), "250, 1100, 0, 0, 0\n");
        assert_eq!(log_lines(LogKind::Slat, &[split]), "250, 400, 0, 0, 0\n");
        let mut w = p(0.1);
        w.dir.swap(Direction::Read as usize, Direction::Write as usize);
        assert_eq!(log_lines(LogKind::Iops, &[w]), "100, 10, 1, 0, 0\n", "writes are direction 1");
    }

    #[test]
    fn trims_are_logged_as_direction_2_and_flushes_not_at_all() {
        // One window with reads, writes, trims, write-zeroes and flushes: fio logs its three
        // ddir_rw directions in their order, nothing for the others.
        let d = ThreadDir { ios: 10, bytes: 40_960, sum_ns: 15_004, ..Default::default() };
        let p = ThreadPoint { t_s: 0.5, span_ns: 1_000_000_000, dir: [d; Direction::COUNT] };
        assert_eq!(log_lines(LogKind::Bw, &[p]), "500, 40, 0, 0, 0\n500, 40, 1, 0, 0\n500, 40, 2, 0, 0\n");
        let mut t = ThreadPoint { t_s: 0.5, span_ns: 1_000_000_000, ..ThreadPoint::default() };
        t.dir[Direction::Trim as usize] = d;
        assert_eq!(log_lines(LogKind::Lat, &[t]), "500, 1500, 2, 0, 0\n");
    }

    #[test]
    fn rates_truncate_as_fios_integer_arithmetic() {
        // 1535 KiB and 999 I/Os in 1000.9 ms: fio's spent is 1000 ms, and 1535.0 KiB/s and 999/s
        // are what it logs; 2047 bytes over 1 s is 1 KiB/s (1.999 truncated), where rounding
        // would write 2; nvmebench rounded its own rates.
        assert_eq!(bw_sample_kib(1535 * 1024, 1_000_900_000), 1535);
        assert_eq!(bw_sample_kib(2047, 1_000_000_000), 1);
        assert_eq!(bw_sample_kib(1_048_575, 300_000_000), 3413, "1048575000 / 300 / 1024, truncated twice");
        assert_eq!(iops_sample(999, 1_000_900_000), 999);
        assert_eq!(iops_sample(2, 3_000_000), 666, "2000 / 3, truncated");
        assert_eq!((bw_sample_kib(4096, 999_999), iops_sample(1, 999_999)), (0, 0), "spent 0: fio's rate 0");
        // The log writes those: 1 KiB/s where the rounded rate was 2.
        let mut p = ThreadPoint { t_s: 1.0, span_ns: 1_000_000_000, ..ThreadPoint::default() };
        p.dir[0] = ThreadDir { ios: 1, bytes: 2047, sum_ns: 10, ..Default::default() };
        assert_eq!(log_lines(LogKind::Bw, &[p]), "1000, 1, 0, 0, 0\n");
        p.span_ns = 3_000_000;
        p.dir[0].ios = 2;
        assert_eq!(log_lines(LogKind::Iops, &[p]), "1000, 666, 0, 0, 0\n");
    }

    /// A series of `kib` KiB per 100 ms span (KiB/s x 10) and `ios` I/Os each, reads only.
    fn reads(spans: &[(u64, u64, u64)]) -> Vec<ThreadPoint> {
        spans
            .iter()
            .enumerate()
            .map(|(i, &(span_ms, kib, ios))| {
                let mut p =
                    ThreadPoint { t_s: (i + 1) as f64 / 10.0, span_ns: span_ms * 1_000_000, ..ThreadPoint::default() };
                p.dir[0] = ThreadDir { ios, bytes: kib * 1024, ..ThreadDir::default() };
                p
            })
            .collect()
    }

    #[test]
    fn bandwidth_statistics_are_fios_per_thread_samples_summed() {
        // Thread a: 100, 200, 300 KiB in 100 ms spans (1000, 2000, 3000 KiB/s), a last, partial
        // 40 ms span (no sample: fio takes none before avg_time - slack) and a span without reads
        // (no delta, no sample). Thread b: 4000 KiB/s once, and a 99 ms span within fio's slack.
        let a = reads(&[(100, 100, 10), (100, 200, 20), (100, 0, 0), (100, 300, 30), (40, 500, 50)]);
        let b = reads(&[(100, 400, 40), (99, 396, 40)]);
        let bw = |p: &ThreadPoint| {
            (p.of(Direction::Read).bytes > 0).then(|| bw_sample_kib(p.of(Direction::Read).bytes, p.span_ns))
        };
        let one = SampleStat::of_thread(&a, 100, bw);
        assert_eq!((one.min, one.max, one.mean, one.samples), (1000, 3000, 2000.0, 3));
        assert_eq!(one.dev(), 1000.0);
        // fio's group_reporting sums them (sum_stat with pure_sum): min, max, mean, S and n added.
        let job = SampleStat::of_job(&[&a, &b], 100, bw);
        assert_eq!((job.min, job.max, job.mean, job.samples), (5000, 7000, 6000.0, 5));
        assert_eq!(job.s, 2_000_000.0, "b's two samples of 4000 add nothing to S");
        assert_eq!(job.dev(), 707.106_781_186_547_6, "sqrt(S / (n - 1))");
        assert_eq!(SampleStat::of_job(&[&[][..], &a], 100, bw), one, "a thread without samples adds nothing");
        // bw_agg: the mean, truncated to an int as fio passes it, over the group's agg in KiB/s.
        assert_eq!(agg_percent(8 * 1024 * 1000, 2000.9), 25.0);
        assert_eq!(agg_percent(1024, 5.0), 100.0, "a group of 1 KiB/s or less: 100");
        assert_eq!(agg_percent(1024 * 1000, 2000.0), 100.0, "at most 100");
        assert_eq!(group_agg([(1_000_000, 1_999_999_999), (3_000_000, 1_000_000_000), (0, 9_000_000_000)]), 2_001_000);
    }
}

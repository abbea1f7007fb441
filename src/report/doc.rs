//! The result documents as types: what `run --json` writes ([`RunDocument`]), what `compare` writes
//! ([`CompareDocument`]), and the collections suites write and `report` draws ([`Collection`]).
//!
//! Writers (`json`, `merge`, `compare`, `suite`) build these structs and serialise them; readers
//! (`load`, and through it `report`, `merge` and the suites) deserialise them, so the shape lives in
//! one place. `schema/result.schema.json` is generated from [`ResultDocument`] (see [`schema`]) and a
//! test keeps it in step. Fields that older documents of the same `schema_version` may lack are
//! `Option` or `#[serde(default)]`, so those still read. This module only describes; the checks that
//! need more than a type (histogram bounds, matrix sizes) are `load`'s.
//!
//! The types mirror the serialisation of the crate's own types (`RunConfig`, `WorkerSummary`,
//! `IoError`, `Mismatch`) without importing them: a test renders a run and reads it back, so a
//! change on either side that the other does not follow fails there.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The version of the document's shape, in every document.
///
/// 2: intervals are cut on the run's common timeline and their rates divide by measured spans (a
/// final partial interval is included and marked); per-worker thread CPU, timestamps and thread
/// placement were added.
/// 3: `config.workload` records pacing (`pacing`: fio's rate per worker and direction, rate process,
/// think time) and written-buffer contents (`buffers`); writes are no longer one fixed buffer per
/// slot but stamped per write.
///
/// 4: runs on several targets: `results.targets[]` (one block per target, whole histograms),
/// `config.targets`, and in `results.workers[]` one entry per worker and target (`target` says
/// which; `worker` is then the worker, not the entry's position).
///
/// 5: trim, write-zeroes and flush: `trim` blocks always, `write_zeroes` and `flush` blocks when the
/// workload issues them (totals, workers, targets, intervals), errors per operation, and
/// `config.workload.mix` with the shares.
///
/// 6: per-target interval series (`results.targets[].intervals`, on the run's timeline) and the
/// other operations' blocks in `results.targets[]`; `merge` keeps `results.targets[]` (targets
/// matched by host and path, histograms added exactly, `host` and `inputs` saying where each came
/// from); `results.verify.mismatches[].target` in a run on several targets; `compare` on several
/// targets: `summary[].targets[]`.
/// 7: trims have their own rate and block sizes (fio's third `rate` and `bs` values):
/// `config.workload.pacing.rate_trim_bytes_per_s` paces trims, which no longer share
/// `rate_write_bytes_per_s`, and `config.workload.bs_trim` sizes them (older documents: the write
/// sizes).
/// 8: `results.cost` (the worker threads' and the counted cores' CPU time over the measured window,
/// cores used and ns per I/O, the cost of stamping), `config.latency` (`off`: nothing stamped, every
/// `lat_ns` zeroes), `results.timestamps.mode` `off`; `compare --rates`/`--curve`: `loads[]`.
/// 9: `config.workload.random_dist` is fio's (zipf and pareto scattered by fio's hash, normal
/// fio's Irwin-Hall sum as `dev_percent`, where it was `sigma_percent`), with an optional `center`;
/// `config.queue_depth_shared` (a job file's `iodepth` shared over a job's files).
/// 10: `config.latency` `split`: fio's submission and completion latencies of each direction
/// (`slat`, `clat`: counts, summaries and whole histograms) beside `lat_ns`, the total.
/// 11: `config.workload.random_dist` may be fio's `zoned`, with its `zones`;
/// `config.workload.seq_add_bytes` (fio's `rw=read:8k`).
/// 12: fio's latency target: `config.latency_target` (`target_ns`, `window_ns`, `percentile`,
/// `run`), each worker's `summary.latency_depth` (the depth its search ended at), and the stop
/// reason `latency_target` (the search settled, with `latency_run=0`).
/// 13: `config.workload.pacing.thinktime_blocks` counts completions unless
/// `thinktime_blocks_type` says `issue` (older documents counted at issue, without the field).
pub const SCHEMA_VERSION: u32 = 13;
pub const HIST_ENCODING: &str = "hdrhistogram-v2-deflate-base64";
/// Default number of rounds in a steady-state measurement window (SNIA PTS).
pub const DEFAULT_STEADY_WINDOW: usize = 5;

/// Any document nvmebench writes: the root of the published schema.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ResultDocument {
    Run(Box<RunDocument>),
    Compare(Box<CompareDocument>),
    Collection(Box<Collection>),
}

/// One run: `run --json`, a suite's run step, an entry of `runs`, and `merge`'s output.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct RunDocument {
    /// Changes whenever a field changes meaning or disappears.
    pub schema_version: u32,
    /// Absent only in hand-made documents.
    pub tool: Option<Tool>,
    /// When the start gate opened; `null` in a merge of inputs without it.
    pub started_at_unix_s: Option<u64>,
    #[serde(default)]
    pub host: Host,
    #[serde(default)]
    pub clock: Clock,
    #[serde(default)]
    pub engine: EngineDoc,
    pub config: Option<ConfigDoc>,
    pub histogram: HistogramInfo,
    pub results: Results,
    /// One point per interval (`config.interval`), negative `t_s` during the ramp.
    #[serde(default)]
    pub intervals: Vec<Interval>,
    /// What reports call the run; without one it is named after its file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// A suite measurement's streams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<Vec<StreamDoc>>,
    /// Which suite step wrote the document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite_step: Option<SuiteStep>,
    /// How `merge` made the document, and from what.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<Merged>,
    /// The drives' health logs (`--telemetry-interval`); absent when it was off, in a merge, and
    /// before telemetry existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<TelemetryDoc>,
    /// One process's place in a fleet (`run --fleet`): its rank, what said it, its clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet_member: Option<FleetMemberDoc>,
    /// A fleet's merged result (`fleet.json`): every rank, what is missing, the clocks' skew.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet: Option<FleetDoc>,
}

/// One process of a fleet, in its own result (`DIR/result-R.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FleetMemberDoc {
    /// What gave the rank: `slurm`, `openmpi`, `pmi` (MPICH, Intel MPI), `pmix`, `kubernetes` or
    /// `flags` (`--rank`).
    pub launcher: String,
    pub rank: u64,
    /// How many processes the fleet has.
    pub size: u64,
    /// The fleet's directory, as this process named it.
    pub dir: String,
    pub pid: u32,
    /// The shared filesystem's clock minus this host's, nanoseconds, measured on a file this
    /// process stamped there.
    pub clock_offset_ns: i64,
    /// The offset is known within this many nanoseconds either side.
    pub clock_uncertainty_ns: u64,
    /// The start moment rank 0 set (UNIX nanoseconds, rank 0's clock).
    pub start_at_unix_ns: u64,
    /// How long after the start moment this process's gate opened, by its own clock.
    pub gate_late_ns: i64,
}

/// A fleet's merged result: the merge of every rank's result, and what became of each rank.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FleetDoc {
    /// The fleet's directory, as rank 0 named it.
    pub dir: String,
    /// How many processes the fleet was started with.
    pub size: u64,
    /// The start moment rank 0 set (UNIX nanoseconds, rank 0's clock).
    pub start_at_unix_ns: u64,
    /// Every rank, in order, merged or not.
    pub ranks: Vec<FleetRankDoc>,
    /// The ranks the merge lacks, with why; empty for a whole fleet.
    #[serde(default)]
    pub missing: Vec<FleetMissingDoc>,
    /// The largest difference between two ranks' clocks, each measured against the shared
    /// filesystem's; absent with fewer than two ranks announced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub largest_skew: Option<FleetSkewDoc>,
    /// The largest difference between two merged ranks' gate openings, each by its own clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate_spread_ns: Option<u64>,
    /// Warnings about the fleet (clock skew, late gates, refused processes), one sentence each.
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// One rank of a fleet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FleetRankDoc {
    pub rank: u64,
    /// `merged`, `no_result` (announced, but wrote no result in time), `failed` (its set-up failed
    /// or it gave up before the start) or `never_announced`.
    pub state: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launcher: Option<String>,
    /// Its result file in the fleet's directory, when merged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// Its position in `merged.inputs`, when merged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_offset_ns: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_uncertainty_ns: Option<u64>,
    /// When its gate opened (UNIX nanoseconds, its own clock), when merged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate_opened_unix_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate_late_ns: Option<i64>,
}

/// A rank the merge lacks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FleetMissingDoc {
    pub rank: u64,
    /// Why, in one sentence.
    pub why: String,
}

/// Two ranks' clocks against the shared filesystem's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FleetSkewDoc {
    /// The difference of their offsets, nanoseconds.
    pub skew_ns: u64,
    /// Its bound either side: the sum of the two offsets' bounds.
    pub uncertainty_ns: u64,
    /// The ranks whose clocks differ most.
    pub ranks: [u64; 2],
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

impl Tool {
    /// This nvmebench.
    pub fn this() -> Tool {
        Tool { name: "nvmebench".into(), version: env!("CARGO_PKG_VERSION").into() }
    }
}

/// The machine that ran the workers (in a merge: the hosts' names, joined, and what they share).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Host {
    pub hostname: Option<String>,
    pub kernel: Option<String>,
    /// The CPU model.
    pub cpu: Option<String>,
    pub cpus_online: Option<u64>,
}

/// How latencies were timed: `tsc` or `monotonic` (`mixed` in a merge of both).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Clock {
    #[serde(default)]
    pub source: String,
}

/// The engine and the knobs in effect.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EngineDoc {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    /// The SPDK engine's own figures: busy time and where its memory is (absent for other
    /// engines, in a merge, and before they existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spdk: Option<SpdkDoc>,
}

/// What the SPDK engine measured of itself.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SpdkDoc {
    /// Busy time of polled workers over their measured windows (absent for `spdk:interrupt`, whose
    /// polls sleep).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy: Option<BusyDoc>,
    /// Per worker (and target), the NUMA nodes of its controller, its core and its memory.
    #[serde(default)]
    pub numa: Vec<NumaDoc>,
}

/// Busy time as a core polling SPDK queue pairs spends it: a poll that reaped at least one
/// completion is busy for its whole span (SPDK's completion processing, the completion callbacks,
/// the next I/Os queued from them, and the booking of their latencies right after); a poll that
/// reaped nothing adds nothing; idle time is the rest of the measured window. Not SPDK perf's `-m`
/// busy %, which books as busy the loop pass before a productive poll (at 5M IOPS it says 1.7%);
/// that one is kept beside it, as perf keeps it (`perf_busy_pct`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BusyDoc {
    /// Summed over the workers.
    pub busy_ns: u64,
    pub idle_ns: u64,
    /// I/Os completed in the measured windows.
    pub ios: u64,
    /// `busy_ns / ios`: what a core would spend per I/O if every completion were waiting.
    pub busy_ns_per_io: f64,
    /// Polls that reaped at least one completion.
    pub busy_polls: u64,
    /// SPDK perf `-m`'s accounting, computed as perf computes it: the span from one poll's start to
    /// the next's is busy when the later poll reaped a completion, idle when it did not, summed over
    /// the measured windows (perf prints it per second). Absent in documents from before it existed.
    #[serde(default)]
    pub perf_busy_ns: u64,
    #[serde(default)]
    pub perf_idle_ns: u64,
    /// `100 * perf_busy_ns / (perf_busy_ns + perf_idle_ns)`: perf -m's `Busy` %.
    #[serde(default)]
    pub perf_busy_pct: f64,
    pub workers: Vec<WorkerBusyDoc>,
}

/// One worker's busy time (one entry per worker and target, as in `results.workers`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorkerBusyDoc {
    pub worker: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<usize>,
    pub busy_ns: u64,
    pub idle_ns: u64,
    pub ios: u64,
    pub busy_ns_per_io: f64,
    pub busy_polls: u64,
    /// As in [`BusyDoc`]: perf -m's accounting for this worker.
    #[serde(default)]
    pub perf_busy_ns: u64,
    #[serde(default)]
    pub perf_idle_ns: u64,
    #[serde(default)]
    pub perf_busy_pct: f64,
}

/// Where one worker's controller, core and memory are: NUMA nodes, `null` where unknown (a
/// controller that reports none, a kernel without NUMA).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NumaDoc {
    pub worker: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<usize>,
    pub controller: String,
    pub controller_node: Option<i32>,
    pub core: Option<usize>,
    pub core_node: Option<i32>,
    /// The node of the I/O buffers as the kernel placed them (asked for on the controller's).
    pub buffer_node: Option<i32>,
    /// The node of the submission queue's ring, where the queues are memory (PCIe, vfio-user).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sq_node: Option<i32>,
}

/// The resolved run configuration (`RunConfig`); times in seconds, sizes in bytes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ConfigDoc {
    /// The engine's name (its options are in `engine.options`).
    pub engine: String,
    /// `null` only for the null engine without a target; with several targets, the first.
    pub target: Option<TargetDoc>,
    /// Every target, with several (schema 3).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<TargetDoc>,
    /// Every worker drives every target, rather than targets dealt round-robin over workers.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub each_worker_all_targets: bool,
    /// The target is a scratch file of nvmebench's own, removed after the run.
    #[serde(default)]
    pub scratch: bool,
    pub workload: WorkloadDoc,
    /// One worker per entry, pinned to that core.
    pub cores: Vec<usize>,
    pub queue_depth: u32,
    /// `queue_depth` is each worker's in flight over all the targets it drives (fio's `iodepth`
    /// over a job's files, schema 9), not each worker's per target.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub queue_depth_shared: bool,
    /// fio's latency target (schema 12): each worker searched for the deepest queue depth, up to
    /// `queue_depth`, at which `percentile` of each window's I/Os took at most `target_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<LatencyTargetDoc>,
    pub runtime: Option<f64>,
    pub ramp: f64,
    pub ios: Option<u64>,
    pub rate_iops: Option<f64>,
    pub interval: f64,
    pub percentiles: Vec<f64>,
    /// `--latency` (schema 8 on; absent: `total`): `off` stamps no I/O, so the document holds counts
    /// and rates but no latency (every `lat_ns` is zeroes, `percentiles` empty); `split` (schema 10
    /// on) also has fio's `slat` and `clat` in each direction's `slat` and `clat`.
    #[serde(default)]
    pub latency: LatencyAccounting,
    pub on_error: OnError,
    #[serde(default)]
    pub allow_destroy: bool,
    pub drain_timeout: f64,
    pub start_at_unix_s: Option<f64>,
}

/// Drive telemetry: every target's SMART / Health Information log over the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TelemetryDoc {
    /// `--telemetry-interval`, seconds.
    pub interval_s: f64,
    pub targets: Vec<TelemetryTargetDoc>,
}

/// One target's telemetry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TelemetryTargetDoc {
    /// The target as the run names it (a path, or an SPDK transport ID).
    pub target: String,
    /// `kernel` (admin passthrough on /dev/nvmeX) or `spdk` (SPDK's admin queue).
    pub source: String,
    /// Why there are no samples: a regular file, a controller without the log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// Before the run, every interval, after the run.
    #[serde(default)]
    pub samples: Vec<HealthSampleDoc>,
    /// What went wrong between the first and the later samples, one phrase each.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// The first read that failed after the first succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_failure: Option<String>,
    /// How many reads failed after the first succeeded.
    #[serde(default)]
    pub read_failures: u64,
    /// The Error Information log's newest entries, read after a run with I/O errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_log: Option<Vec<ErrorLogEntryDoc>>,
    /// Why the Error Information log could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_log_unavailable: Option<String>,
}

/// One reading of the SMART / Health Information log (`telemetry::health::HealthLog`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HealthSampleDoc {
    /// Seconds from the end of the ramp, on the intervals' timeline (negative before it).
    pub t_s: f64,
    /// The composite temperature, °C (`null`: not reported).
    pub temperature_c: Option<i32>,
    pub critical_warning: u8,
    pub composite_temperature_k: u16,
    pub available_spare_pct: u8,
    pub available_spare_threshold_pct: u8,
    pub percentage_used: u8,
    /// Thousands of 512-byte units.
    pub data_units_read: u64,
    pub data_units_written: u64,
    pub host_read_commands: u64,
    pub host_write_commands: u64,
    pub controller_busy_time_min: u64,
    pub power_cycles: u64,
    pub power_on_hours: u64,
    pub unsafe_shutdowns: u64,
    pub media_errors: u64,
    pub error_log_entries: u64,
    pub warning_temperature_time_min: u32,
    pub critical_temperature_time_min: u32,
    /// Sensors 1-8 in kelvins; 0: no such sensor.
    pub temperature_sensors_k: [u16; 8],
    /// Entries into thermal management levels 1 and 2.
    pub thermal_transitions: [u32; 2],
    /// Seconds in thermal management levels 1 and 2.
    pub thermal_time_s: [u32; 2],
}

/// One Error Information log entry (`telemetry::errlog::ErrorLogEntry`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorLogEntryDoc {
    pub error_count: u64,
    pub sqid: u16,
    pub cid: u16,
    pub status_code_type: u8,
    pub status_code: u8,
    pub lba: u64,
    pub nsid: u32,
}

/// What each I/O's latency accounting kept (`--latency`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LatencyAccounting {
    /// Each I/O stamped at issue and completion, one histogram per direction.
    #[default]
    Total,
    /// As `total`, and fio's submission (`slat`) and completion (`clat`) latencies apart.
    Split,
    /// No stamps: I/Os and bytes counted, no latency measured.
    Off,
}

impl LatencyAccounting {
    /// Whether the document's latency figures were measured.
    pub fn measured(self) -> bool {
        self != LatencyAccounting::Off
    }
}

/// fio's `continue_on_error` in nvmebench's words: `"stop"`, `"continue"` or `{"retry": N}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    Stop,
    Continue,
    Retry(u32),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TargetDoc {
    /// A path, or SPDK transport IDs.
    pub path: String,
    pub kind: TargetKind,
    pub size_bytes: u64,
    pub logical_block_bytes: u64,
    /// `MAJ:MIN` of the block device (or of the device holding the file).
    pub device: Option<String>,
    /// The block device of the same NVMe namespace: `/dev/nvmeXnY` for `/dev/ngXnY` and back.
    pub nvme_sibling: Option<String>,
    /// The drive's model, as sysfs reports it (devices only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The drive's serial number (devices only); `report --hide-serial` leaves it out of a page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    File,
    NewFile,
    BlockDevice,
    SpdkNamespace,
    NvmeGeneric,
}

impl TargetKind {
    pub fn name(self) -> &'static str {
        match self {
            TargetKind::File => "file",
            TargetKind::NewFile => "new_file",
            TargetKind::BlockDevice => "block_device",
            TargetKind::SpdkNamespace => "spdk_namespace",
            TargetKind::NvmeGeneric => "nvme_generic",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorkloadDoc {
    pub rw: Rw,
    /// Percentage of reads.
    pub read_percent: u32,
    /// The share of each operation in percent (`read`, `write`, `trim`, `write_zeroes`, `flush`;
    /// those without a share left out). Absent before schema 3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<BTreeMap<String, u32>>,
    /// Sizes of reads.
    pub bs_read: BsSplitDoc,
    /// Sizes of writes and write-zeroes (and of trims before schema 6).
    pub bs_write: BsSplitDoc,
    /// Sizes of trims, fio's third `bs` value (absent before schema 6: `bs_write`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bs_trim: Option<BsSplitDoc>,
    pub align_bytes: u64,
    pub range_start: u64,
    pub range_bytes: u64,
    pub random_dist: RandomDist,
    /// Random offsets covered every block once per pass (fio's random map) rather than being drawn
    /// with replacement (absent in older documents: drawn with replacement).
    #[serde(default)]
    pub random_map: bool,
    /// Bytes a sequential pattern skipped after each I/O, negative backwards (fio's
    /// `rw=read:8k`; schema 11, absent: none).
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub seq_add_bytes: i64,
    pub seed: u64,
    /// Pacing beyond `config.rate_iops` (absent before schema 3: none).
    #[serde(default)]
    pub pacing: PacingDoc,
    /// What written blocks hold (absent before schema 3: random).
    #[serde(default)]
    pub buffers: BuffersDoc,
}

/// fio's `rate`, `rate_process` and `thinktime`; `null` where not set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PacingDoc {
    /// fio's `rate` for reads: bytes per second per worker.
    pub rate_read_bytes_per_s: Option<u64>,
    /// fio's `rate` for writes: bytes per second per worker. Write-zeroes and flushes share this
    /// schedule; trims did too before schema 6.
    pub rate_write_bytes_per_s: Option<u64>,
    /// fio's `rate` for trims: bytes per second per worker, on a schedule of their own (absent
    /// before schema 6).
    #[serde(default)]
    pub rate_trim_bytes_per_s: Option<u64>,
    /// How paced I/Os (`rate` or `config.rate_iops`) are spaced.
    #[serde(default)]
    pub rate_process: RateProcessDoc,
    /// The stall after every `thinktime_blocks` I/Os, seconds.
    pub thinktime_s: Option<f64>,
    /// The part of each stall spent spinning, seconds.
    pub thinktime_spin_s: Option<f64>,
    pub thinktime_blocks: Option<u32>,
    /// What `thinktime_blocks` counts: completions (fio's default) or issues. Absent from older
    /// documents, whose think times counted issues.
    #[serde(default)]
    pub thinktime_blocks_type: Option<ThinkCountDoc>,
}

/// fio's `rate_process`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RateProcessDoc {
    #[default]
    Linear,
    Poisson,
}

/// fio's `thinktime_blocks_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ThinkCountDoc {
    Complete,
    Issue,
}

/// Written data: `compress_percent`% of every 512-byte chunk is zeros (fio's
/// `buffer_compress_percentage`), `dedupe_percent`% of writes copy an earlier one (fio's
/// `dedupe_percentage`); the rest is random and unique per write.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BuffersDoc {
    pub compress_percent: u32,
    pub dedupe_percent: u32,
}

/// fio's `rw`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Rw {
    Read,
    Write,
    RandRead,
    RandWrite,
    Rw,
    RandRw,
    Trim,
    RandTrim,
    TrimWrite,
}

impl Rw {
    pub fn name(self) -> &'static str {
        match self {
            Rw::Read => "read",
            Rw::Write => "write",
            Rw::RandRead => "randread",
            Rw::RandWrite => "randwrite",
            Rw::Rw => "rw",
            Rw::RandRw => "randrw",
            Rw::Trim => "trim",
            Rw::RandTrim => "randtrim",
            Rw::TrimWrite => "trimwrite",
        }
    }
}

/// A block-size mix (fio's `bssplit`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BsSplitDoc {
    pub entries: Vec<BsEntryDoc>,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BsEntryDoc {
    pub bytes: u32,
    /// Share of I/Os in percent.
    pub percent: f64,
}

fn is_zero_i64(v: &i64) -> bool {
    *v == 0
}

/// fio's `random_distribution`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum RandomDist {
    Uniform,
    Zipf {
        theta: f64,
        /// Where the most popular block lands, as a share of the range; absent: a random place.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        center: Option<f64>,
    },
    Pareto {
        h: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        center: Option<f64>,
    },
    /// fio's normal: the mean of 12 uniform draws, jittered by up to half of `dev_percent` percent
    /// of the range either way, scattered over the range (before schema 9 `sigma_percent`, a true
    /// Gaussian around the middle).
    Normal {
        #[serde(alias = "sigma_percent")]
        dev_percent: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        center: Option<f64>,
    },
    /// fio's zoned (schema 11): each zone takes its share of the I/Os uniformly over its share of
    /// the range, the zones laid end to end from the start.
    Zoned {
        zones: Vec<ZoneDoc>,
    },
    /// fio's zoned_abs (schema 11, added later): as zoned, each zone's part of the range in bytes.
    #[serde(rename = "zoned_abs")]
    ZonedAbs {
        zones: Vec<AbsZoneDoc>,
    },
}

/// One zone of a zoned_abs distribution.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AbsZoneDoc {
    /// Its share of the I/Os, in whole percent.
    pub access_percent: u8,
    /// Its size, after the zones before it.
    pub bytes: u64,
}

/// One zone of a zoned distribution, in whole percent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ZoneDoc {
    /// Its share of the I/Os.
    pub access_percent: u8,
    /// Its share of the range, after the zones before it.
    pub range_percent: u8,
}

/// The histogram settings every `hist` was recorded with; documents with other settings are refused.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HistogramInfo {
    pub lowest_ns: u64,
    pub highest_ns: u64,
    pub significant_digits: u64,
    /// `hdrhistogram-v2-deflate-base64`.
    pub encoding: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Results {
    /// The longest worker's measured time.
    pub elapsed_ns: u64,
    /// When the start gate opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at_unix_ns: Option<u64>,
    /// The signal that cut the run short.
    #[serde(default)]
    pub interrupted_by_signal: Option<i32>,
    /// A worker that failed after the start, in one sentence; the results are partial.
    #[serde(default)]
    pub failure: Option<String>,
    /// Faults injected from outside the workers (a controller reset) and what became of them.
    #[serde(default)]
    pub events: Vec<String>,
    /// Data verification, with `--verify`.
    #[serde(default)]
    pub verify: Option<VerifyDoc>,
    /// A drive throttled, raised a critical warning or logged new media errors during the run (see
    /// `telemetry`).
    #[serde(default)]
    pub telemetry_alert: bool,
    /// The process's CPU time over the run (absent in a merge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuDoc>,
    /// The workers' own CPU time over their measured windows (absent in a merge and before
    /// schema 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_cpu: Option<WorkerCpuDoc>,
    /// What the run cost over its measured window (absent in a merge and before schema 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<CostDoc>,
    /// How each I/O was timed (absent before schema 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamps: Option<TimestampsDoc>,
    /// Where the threads ran (absent in a merge, before schema 2, and when workers were not pinned).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<PlacementDoc>,
    pub total: DirPair,
    #[serde(default)]
    pub workers: Vec<WorkerDoc>,
    /// Per target, with several targets (absent with one: the total is its block).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<TargetResultDoc>,
}

/// One target's results in a run on several: the sum of its workers' queues on it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct TargetResultDoc {
    /// Its position in `config.targets`.
    pub target: usize,
    /// The file or device path, or for SPDK the transport ID and `ns:N`.
    pub path: String,
    pub kind: TargetKind,
    /// In a merge of several hosts' results: the host it is on (the same path on two hosts is two
    /// targets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The workers that drove it (each with a queue of `config.queue_depth`); in a merge, their
    /// positions in `results.workers`.
    pub workers: Vec<usize>,
    /// In a merge: the inputs (positions in `merged.inputs`) it came from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<usize>,
    /// The longest of its workers' measured times; `iops` and `bw_bytes` divide by it.
    pub elapsed_ns: u64,
    /// Its directions and errors (trim, write-zeroes and flush blocks from schema 6 on), as fields
    /// of this object.
    #[serde(flatten)]
    pub dirs: DirPair,
    /// Its own interval series (schema 6 on): one point per point of the run's `intervals`, at the
    /// same `t_s`, summed over its workers only (`workers: 0` where none of them reported).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<Interval>,
}

impl TargetResultDoc {
    /// Direction `i` of [`DIRECTIONS`], if the document has it.
    pub fn dir(&self, i: usize) -> Option<&DirDoc> {
        self.dirs.dir(i)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct VerifyDoc {
    pub units_checked: u64,
    pub mismatch_count: u64,
    pub read_errors: u64,
    pub cost_ns: u64,
    pub unit_bytes: u64,
    /// The first mismatches in detail.
    pub mismatches: Vec<Mismatch>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Mismatch {
    /// In a run on several targets, which one (its position in `config.targets`; schema 6 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<usize>,
    /// Byte offset of the unit on the target.
    pub offset: u64,
    pub expected_generation: u32,
    #[serde(flatten)]
    pub kind: MismatchKind,
}

/// How a unit failed its check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MismatchKind {
    Foreign,
    Misdirected { found_offset: u64 },
    LostWrite { found_generation: u32 },
    FutureGeneration { found_generation: u32 },
    Stale { found_seed: u64 },
    Payload { first: u32, last: u32, bytes: u32 },
}

/// The workers' threads' CPU time over their measured windows, and the I/Os they measured.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorkerCpuDoc {
    /// Summed over workers (`CLOCK_THREAD_CPUTIME_ID`, from the end of the ramp to the end).
    pub thread_ns: u64,
    /// Measured I/Os, errors included.
    pub ios: u64,
    /// `null` without I/O.
    pub ns_per_io: Option<f64>,
    /// Thread CPU time over measured time, summed over workers (1.0 = one core busy throughout).
    pub cores_busy: f64,
}

/// What the run cost the machine over its measured window (schema 8 on): the worker threads' CPU
/// time and the counted cores' (`/proc/stat`: user, system, interrupts, softirqs, whatever ran
/// there), as cores used (CPU-seconds per second) and ns per I/O.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CostDoc {
    /// From the first worker's start reading to the last worker's end reading.
    pub window_ns: u64,
    /// I/Os completed in the workers' windows, errors included.
    pub ios: u64,
    /// One `/proc/stat` tick: the core figures' resolution (about a tick at each end, per core).
    pub tick_ns: u64,
    pub threads: ThreadsCostDoc,
    /// `null` when `/proc/stat` could not be read.
    pub cores: Option<CoresCostDoc>,
    pub workers: Vec<WorkerCostDoc>,
    /// What the benchmark's own stamping costs per I/O.
    pub timing: Option<TimingCostDoc>,
}

/// The worker threads together (user + system, `getrusage(RUSAGE_THREAD)`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ThreadsCostDoc {
    pub user_ns: u64,
    pub sys_ns: u64,
    /// CPU-seconds per second of the window.
    pub cores_used: f64,
    pub ns_per_io: Option<f64>,
}

/// The counted cores together.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CoresCostDoc {
    pub counted: Vec<CoreCostDoc>,
    /// User and nice.
    pub user_ns: u64,
    pub system_ns: u64,
    pub irq_ns: u64,
    pub softirq_ns: u64,
    /// user + nice + system + irq + softirq.
    pub busy_ns: u64,
    /// Busy time over the window: CPU-seconds per second.
    pub cores_used: f64,
    pub ns_per_io: Option<f64>,
}

/// One counted core over the run's window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CoreCostDoc {
    pub core: usize,
    /// Why it is counted: `worker 0`, `iou-sqp-1234 may run here`, `nvme0q1: 5000 interrupts`.
    pub why: Vec<String>,
    pub user_ns: u64,
    pub nice_ns: u64,
    pub system_ns: u64,
    pub irq_ns: u64,
    pub softirq_ns: u64,
    pub idle_ns: u64,
    pub iowait_ns: u64,
    pub steal_ns: u64,
    pub busy_ns: u64,
}

/// One worker thread over its own window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorkerCostDoc {
    pub worker: usize,
    pub core: Option<usize>,
    pub window_ns: u64,
    pub ios: u64,
    pub user_ns: u64,
    pub sys_ns: u64,
    /// Its thread's CPU time over its window.
    pub cores_used: f64,
    pub ns_per_io: Option<f64>,
    /// Its core's busy time over its window, whatever ran there.
    pub core_busy_ns: Option<u64>,
    pub core_used: Option<f64>,
}

/// What stamping one I/O costs on this CPU: two clock reads, their scaling and a histogram record.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TimingCostDoc {
    pub ns_per_io: f64,
    /// False with `--latency off` (nothing was stamped).
    pub stamped: bool,
    /// `ns_per_io` times the I/Os over the worker threads' CPU time.
    pub share_of_worker_time: Option<f64>,
}

/// Where each I/O's two stamps are read, and with which clock.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TimestampsDoc {
    /// `per_io`: every I/O has its own issue and completion stamp.
    pub mode: String,
    /// When the issue stamp is read.
    pub issue: String,
    /// When the completion stamp is read.
    pub completion: String,
    /// With `--latency split` (schema 10 on): when the sent stamp, where fio's `slat` ends and its
    /// `clat` starts, is read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent: Option<String>,
}

/// Where the run's threads could run: workers on their cores, every other thread on the rest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PlacementDoc {
    /// The cores the coordinator and helper threads were given.
    pub housekeeping_cores: Vec<usize>,
    /// False when no core was free of workers: other threads shared the workers' cores.
    pub workers_alone: bool,
    pub threads: Vec<ThreadDoc>,
}

/// One thread of the process and the cores it could run on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ThreadDoc {
    pub tid: i32,
    pub name: String,
    /// `Cpus_allowed_list` as the kernel writes it.
    pub cpus: String,
    pub worker: bool,
}

/// User and system CPU time of the whole process from the start gate to the last worker's end
/// (the ramp, the drain and every helper thread included), and the I/Os completed in it (ramp
/// included).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CpuDoc {
    pub user_ns: u64,
    pub sys_ns: u64,
    pub ios: u64,
    /// `null` without I/O.
    pub ns_per_io: Option<f64>,
}

/// The directions' keys, in the order of every per-direction index here (the crate's `Direction`).
pub const DIRECTIONS: [&str; 5] = ["read", "write", "trim", "write_zeroes", "flush"];

impl DirPair {
    /// Direction `i` of [`DIRECTIONS`], if the document has it.
    pub fn dir(&self, i: usize) -> Option<&DirDoc> {
        match i {
            0 => Some(&self.read),
            1 => Some(&self.write),
            2 => self.trim.as_ref(),
            3 => self.write_zeroes.as_ref(),
            4 => self.flush.as_ref(),
            _ => None,
        }
    }
}

impl ErrorsDoc {
    /// Errors of direction `i` of [`DIRECTIONS`].
    pub fn dir(&self, i: usize) -> u64 {
        [self.read, self.write, self.trim, self.write_zeroes, self.flush].get(i).copied().unwrap_or(0)
    }
}

impl Interval {
    /// Direction `i` of [`DIRECTIONS`], if the document has it.
    pub fn dir(&self, i: usize) -> Option<DirInterval> {
        match i {
            0 => Some(self.read),
            1 => Some(self.write),
            2 => self.trim,
            3 => self.write_zeroes,
            4 => self.flush,
            _ => None,
        }
    }
}

/// Reads, writes, trims, write-zeroes, flushes and errors: a run's total or one worker's.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct DirPair {
    pub read: DirDoc,
    pub write: DirDoc,
    /// Trims (deallocations), as fio's `trim` block; written by schema 3 on, empty without trims.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<DirDoc>,
    /// Write-zeroes; only when the workload issues them (schema 3 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_zeroes: Option<DirDoc>,
    /// Flushes (fsync, NVMe Flush; no bytes); only when the workload issues them (schema 3 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush: Option<DirDoc>,
    #[serde(default)]
    pub errors: ErrorsDoc,
}

/// One direction: counters, rates over the elapsed time, latency summary and the whole histogram.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct DirDoc {
    pub ios: u64,
    pub io_bytes: u64,
    #[serde(default)]
    pub iops: f64,
    #[serde(default)]
    pub bw_bytes: f64,
    /// Each I/O's latency from just before it was handed to the engine to its completion (fio's
    /// `lat`).
    pub lat_ns: LatencyDoc,
    /// HdrHistogram V2 deflate, base64, with the bounds of `histogram`.
    pub hist: String,
    /// With `config.latency` `split` (schema 10 on): fio's submission latency, from that stamp to
    /// the return of the call that sent the I/O (no I/O has one on a synchronous engine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slat: Option<LatencyPartDoc>,
    /// With `config.latency` `split`: fio's completion latency, from the return of the call that
    /// sent the I/O to its completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clat: Option<LatencyPartDoc>,
}

/// One of fio's partial latencies of a direction: how many I/Os have it, its summary and whole
/// histogram.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct LatencyPartDoc {
    pub ios: u64,
    pub lat_ns: LatencyDoc,
    /// HdrHistogram V2 deflate, base64, with the bounds of `histogram`.
    pub hist: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct LatencyDoc {
    /// 0 without I/O; every field is 0 (and `percentiles` empty) when `config.latency` is `off`.
    pub min: u64,
    #[serde(default)]
    pub mean: f64,
    pub max: u64,
    /// Sample standard deviation (over n - 1, as fio's), exact from `sum` and `sum_sq`.
    #[serde(default)]
    pub stddev: f64,
    pub sum: NsSum,
    /// Every latency squared, summed (ns²), so that `merge` keeps `stddev` exact. Absent in
    /// documents written before it was kept; their `stddev` is then recomputed from the histogram.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sum_sq: Option<NsSqSum>,
    /// Latencies above the histogram's highest value, recorded as that value.
    #[serde(default)]
    pub clamped: u64,
    /// `config.percentiles`, keyed as fio does (`"99.0"`, `"99.99"`).
    #[serde(default)]
    pub percentiles: BTreeMap<String, u64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A sum of latencies in nanoseconds, which can exceed 2^64: written as a decimal string (JSON
/// readers lose whole numbers above 2^53); a plain number is read too.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NsSum(pub u128);

impl Serialize for NsSum {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for NsSum {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<NsSum, D::Error> {
        whole_u128(d, "nanoseconds").map(NsSum)
    }
}

/// A u128 written as a decimal string or a plain number.
fn whole_u128<'de, D: serde::Deserializer<'de>>(d: D, unit: &str) -> Result<u128, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        Number(u64),
        Text(String),
    }
    match Either::deserialize(d)? {
        Either::Number(n) => Ok(u128::from(n)),
        Either::Text(t) => {
            t.parse().map_err(|_| serde::de::Error::custom(format!("'{t}' is not a whole number of {unit}")))
        }
    }
}

/// A sum of squared latencies in ns², written as a decimal string like [`NsSum`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NsSqSum(pub u128);

impl Serialize for NsSqSum {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for NsSqSum {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<NsSqSum, D::Error> {
        whole_u128(d, "square nanoseconds").map(NsSqSum)
    }
}

impl JsonSchema for NsSqSum {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NsSqSum".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A sum of squared nanoseconds as a decimal string (it may exceed 2^64); a whole number is read too.",
            "anyOf": [
                { "type": "string", "pattern": "^[0-9]+$" },
                { "type": "integer", "minimum": 0 }
            ]
        })
    }
}

impl JsonSchema for NsSum {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NsSum".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A sum of nanoseconds as a decimal string (it may exceed 2^64); a whole number is read too.",
            "anyOf": [
                { "type": "string", "pattern": "^[0-9]+$" },
                { "type": "integer", "minimum": 0 }
            ]
        })
    }
}

/// I/O errors, per direction and by kind.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorsDoc {
    #[serde(default)]
    pub total: u64,
    #[serde(default)]
    pub read: u64,
    #[serde(default)]
    pub write: u64,
    #[serde(default)]
    pub trim: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub write_zeroes: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flush: u64,
    /// Most frequent first.
    #[serde(default)]
    pub kinds: Vec<ErrorKindCount>,
    /// Errors of kinds beyond the first sixteen.
    #[serde(default)]
    pub other: u64,
    /// Failed I/Os that were retried (`--on-error retry:N`); not counted as errors.
    #[serde(default)]
    pub retried: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorKindCount {
    pub error: IoErrorDoc,
    pub count: u64,
}

/// Why one I/O failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum IoErrorDoc {
    /// The kernel returned this errno.
    Errno { errno: i32 },
    /// Fewer bytes moved than asked for.
    ShortTransfer { expected: u32, done: u32 },
    /// The NVMe controller's status code type and code.
    Nvme { sct: u8, sc: u8 },
}

/// One worker's results.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct WorkerDoc {
    pub worker: usize,
    /// With several targets, the target of this entry (one entry per worker and target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<usize>,
    pub core: Option<usize>,
    #[serde(default)]
    pub elapsed_ns: u64,
    pub summary: Option<WorkerSummaryDoc>,
    /// Its directions and errors, as fields of this object.
    #[serde(flatten)]
    pub dirs: DirPair,
    /// In a merge: the index of the input the worker came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<usize>,
}

/// fio's latency target, as the run took it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LatencyTargetDoc {
    /// The most an I/O's total latency may take (fio's `latency_target`).
    pub target_ns: u64,
    /// How long each depth ran before it was judged (fio's `latency_window`; 0: every pass).
    pub window_ns: u64,
    /// The share of a window's I/Os, in percent, that had to meet the target.
    pub percentile: f64,
    /// The search kept adjusting once settled (fio's `latency_run=1`).
    pub run: bool,
}

/// A worker's closing facts.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorkerSummaryDoc {
    /// From the end of the ramp to the last completion.
    pub measured_ns: u64,
    /// CPU time of the worker's thread over its measured window (0 before schema 2).
    #[serde(default)]
    pub thread_cpu_ns: u64,
    pub stop_reason: StopReason,
    /// I/Os still in flight when the drain timed out.
    pub lost_in_flight: u64,
    pub first_error: Option<FailedIoDoc>,
    /// With fio's latency target, the queue depth the worker's search ended at (schema 12).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_depth: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    Time,
    IoLimit,
    Error,
    Requested,
    /// fio's latency target settled (`latency_run=0`; schema 12).
    LatencyTarget,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FailedIoDoc {
    pub error: IoErrorDoc,
    pub dir: DirName,
    pub offset: u64,
    pub len: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DirName {
    Read,
    Write,
}

/// One direction of one interval, summed over workers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DirInterval {
    #[serde(default)]
    pub ios: u64,
    #[serde(default)]
    pub bytes: u64,
    #[serde(default)]
    pub iops: f64,
    #[serde(default)]
    pub bw_bytes: f64,
    #[serde(default)]
    pub mean_ns: f64,
    #[serde(default)]
    pub p99_ns: u64,
    #[serde(default)]
    pub max_ns: u64,
}

/// One interval of the run: what completed between two boundaries of the run's common timeline,
/// over all workers. Rates are each worker's count divided by the span that worker measured it
/// over, summed.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Interval {
    /// End of the interval, in seconds since the measurement started: the boundary, or for the
    /// final partial interval the moment the run ended.
    pub t_s: f64,
    /// The longest span a worker measured this interval over, in seconds (absent before schema 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span_s: Option<f64>,
    /// The run ended inside this interval, so it is shorter than the others.
    #[serde(default)]
    pub partial: bool,
    /// Workers whose reports are in it (absent before schema 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<usize>,
    #[serde(default)]
    pub read: DirInterval,
    #[serde(default)]
    pub write: DirInterval,
    /// The other directions, when the workload issues them (schema 3 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<DirInterval>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_zeroes: Option<DirInterval>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush: Option<DirInterval>,
    #[serde(default)]
    pub errors: u64,
}

/// One stream of a suite measurement and what it did.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct StreamDoc {
    pub name: String,
    pub rw: Rw,
    pub read_percent: u32,
    /// fio's `bssplit`, reads then writes.
    pub bssplit: String,
    pub range_start: u64,
    pub range_bytes: u64,
    pub threads: usize,
    pub qd: u32,
    pub read: StreamDir,
    pub write: StreamDir,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema)]
pub struct StreamDir {
    pub ios: u64,
    pub io_bytes: u64,
    pub mean_ns: f64,
    pub p99_ns: u64,
}

/// The suite step a document records.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct SuiteStep {
    pub suite: String,
    pub id: String,
    pub label: String,
    /// The step's one-line result.
    pub summary: String,
}

/// How a merged document was made.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Merged {
    /// The rule for time and for what is exact.
    pub rule: String,
    pub inputs: Vec<MergedInput>,
    /// Warnings about the inputs (they did not run at the same time), one sentence each.
    #[serde(default)]
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct MergedInput {
    pub source: String,
    pub label: String,
    pub host: Host,
    pub engine: EngineDoc,
    pub config: Option<ConfigDoc>,
    pub started_at_unix_s: Option<u64>,
    pub elapsed_ns: u64,
    pub ios: u64,
}

/// Runs and suite curves: what a suite step writes (its step's extras included) and what `report`
/// draws. Every key is optional; a document with none of `runs`, `iorate`, `sweeps` and
/// `steady_state` is not a collection.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("anyOf" = [
    { "required": ["runs"] }, { "required": ["iorate"] }, { "required": ["sweeps"] }, { "required": ["steady_state"] }
]))]
pub struct Collection {
    /// Absent in hand-made collections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_version: Option<u32>,
    /// A fio job file's runs (`run job.fio --json`): the file they came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_file: Option<String>,
    /// A fio job file's runs: options accepted without effect on the measurement, and the like.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<Vec<RunDocument>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iorate: Option<Vec<IorateCurve>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweeps: Option<Vec<Sweep>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<Vec<SteadyState>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite_step: Option<SuiteStep>,
    /// A sweep step: every point measured, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep_points: Option<Vec<SweepPoint>>,
    /// A sweep step: the point with the most IOPS (`null` without points).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak: Option<Option<SweepMark>>,
    /// A sweep step: where latency starts to rise faster than IOPS (`null` when it never does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knee: Option<Option<SweepMark>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knee_rule: Option<String>,
    /// A sweep or curve step: the run document of every point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point_runs: Option<Vec<RunDocument>>,
    /// A curve step: the unpaced run's IOPS, which the paced points are percentages of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iops: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_run: Option<Box<RunDocument>>,
    /// A preconditioning step: what the purge did, in one sentence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purge: Option<String>,
    /// A preconditioning step: the workload-independent fill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill: Option<Fill>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill_run: Option<Box<RunDocument>>,
    /// A preconditioning step: whether and where steady state was reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<Steady>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_runs: Option<Vec<RunDocument>>,
}

/// One point of an iorate curve: offered rate, achieved rate, latency there.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IoratePoint {
    /// The offered rate as a percentage of the unpaced run's (suites write it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percent: Option<u32>,
    pub target_iops: Option<f64>,
    pub iops: f64,
    pub mean_ns: f64,
    pub p99_ns: f64,
}

/// Where a curve stopped, and by which rule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IorateStop {
    pub iops: f64,
    #[serde(default)]
    pub rule: String,
}

/// IOPS against latency as the offered rate rises.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IorateCurve {
    #[serde(default)]
    pub label: String,
    pub points: Vec<IoratePoint>,
    #[serde(default)]
    pub stop: Option<IorateStop>,
}

/// A threads × queue-depth sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Sweep {
    #[serde(default)]
    pub label: String,
    pub threads: Vec<u64>,
    pub queue_depths: Vec<u64>,
    /// `iops[t][q]`: one row per entry of `threads`, one column per entry of `queue_depths`.
    pub iops: Vec<Vec<f64>>,
    /// Shaped as `iops`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ns: Option<Vec<Vec<f64>>>,
}

/// Rounds of a steady-state test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SteadyState {
    #[serde(default)]
    pub label: String,
    #[serde(default = "default_metric")]
    pub metric: String,
    /// One value per round, first round first.
    pub rounds: Vec<f64>,
    /// How many of the last rounds form the measurement window (SNIA PTS: 5).
    #[serde(default = "default_window")]
    pub window: usize,
}

fn default_metric() -> String {
    "IOPS".into()
}

fn default_window() -> usize {
    DEFAULT_STEADY_WINDOW
}

/// One point of a sweep step.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SweepPoint {
    pub threads: usize,
    pub qd: u32,
    pub iops: f64,
    pub mean_ns: f64,
    pub max_ns: f64,
    pub stddev_ns: f64,
    pub p99_ns: f64,
}

/// A marked point of a sweep (peak, knee).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SweepMark {
    pub threads: usize,
    pub qd: u32,
    pub iops: f64,
    pub mean_ns: f64,
}

/// Workload-independent preconditioning: passes over the working set.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Fill {
    pub passes: f64,
    pub bytes: u64,
    pub seconds: f64,
}

/// The steady-state outcome of a preconditioning step.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Steady {
    pub reached: bool,
    /// The round that made the window steady (1-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_first_round: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub average: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range_fraction: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slope_fraction: Option<f64>,
    /// Without steady state: how many rounds ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<usize>,
}

/// What `compare` writes: a summary per engine and every run's whole document.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct CompareDocument {
    pub schema_version: u32,
    pub tool: Tool,
    /// Always `compare`.
    pub command: String,
    /// The engines asked for, in order.
    pub engines: Vec<String>,
    /// How many of them ran.
    pub completed: usize,
    /// Why the comparison stopped before the last engine.
    pub stopped_early: Option<String>,
    /// What `--rebind` moved, one sentence each.
    pub rebind: Vec<String>,
    /// One entry per run, in the order they ran (engine by engine, each at every load).
    pub summary: Vec<CompareSummary>,
    pub runs: Vec<CompareRun>,
    /// With `--rates` or `--curve`: one entry per load, every engine's figures at it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loads: Vec<CompareLoad>,
    /// With `--curve`: the slowest engine's closed-loop IOPS, of which the loads are 10..100%.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curve_base_iops: Option<f64>,
    /// With loads: how `lowest_p99` and `lowest_cpu` are decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_rule: Option<String>,
}

/// One load of `compare --rates` or `--curve`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct CompareLoad {
    /// As written: `10k`, `2.5k`, `max`.
    pub load: String,
    /// IOPS offered in total, open loop (latency from each I/O's due time); `null` for `max`,
    /// the closed loop.
    pub offered_iops: Option<f64>,
    pub engines: Vec<CompareLoadEntry>,
    /// The engine with the lowest p99, when one is clear of the noise (`load_rule`).
    pub lowest_p99: Option<String>,
    /// The engine with the lowest CPU (cores used; at `max`, CPU per I/O), when one is clear of
    /// the noise.
    pub lowest_cpu: Option<String>,
    /// Each verdict as a sentence, with the figures it rests on.
    pub p99_verdict: String,
    pub cpu_verdict: String,
}

/// One engine at one load.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct CompareLoadEntry {
    pub engine: String,
    /// Its position in `runs` and `summary`.
    pub run: usize,
    /// Achieved, over the measured span.
    pub iops: f64,
    /// Whether it achieved at least 95% of the offered load (always true at `max`); only engines
    /// that did are candidates for the lowest p99 and CPU.
    pub reached: bool,
    /// `50.0`, `99.0`, `99.9` (ns); `null` without I/O.
    pub lat_ns: BTreeMap<String, Option<f64>>,
    /// The 95% interval of p99 from the run's histogram (ns): the values at the ranks
    /// n 0.99 -+ 1.96 sqrt(n 0.99 0.01).
    pub p99_interval_ns: Option<[f64; 2]>,
    /// CPU-seconds per second of the counted cores over the measured window (`results.cost`).
    pub cores_used: Option<f64>,
    /// The uncertainty of `cores_used` (+-): one counter tick at each end on each counted core.
    pub cores_used_margin: Option<f64>,
    /// The counted cores' CPU time per I/O.
    pub cpu_ns_per_io: Option<f64>,
    /// The worker threads' own CPU time (user + system) per second.
    pub thread_cores_used: Option<f64>,
    pub errors: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct CompareSummary {
    /// The engine as given (with its options).
    pub engine: String,
    pub queue_depth: u32,
    pub iops: f64,
    pub bw_bytes: f64,
    pub lat_ns: CompareLatency,
    pub cpu_ns_per_io: Option<f64>,
    /// The run's cores used over its measured window (`results.cost`, schema 8 on).
    #[serde(default)]
    pub cores_used: Option<f64>,
    /// With `--rates` or `--curve`: the load of this run (ratios are then to the first engine at
    /// the same load).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<String>,
    pub errors: u64,
    pub ratio_to_first: CompareRatios,
    /// With several targets, each target's figures under this engine (schema 6 on); ratios are to
    /// the same target under the first engine, `cpu_per_io` always `null`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<CompareTargetSummary>,
}

/// One target's figures in a comparison on several.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct CompareTargetSummary {
    /// Its position in the run's `config.targets`.
    pub target: usize,
    pub path: String,
    /// Over the target's own measured time.
    pub iops: f64,
    pub bw_bytes: f64,
    pub lat_ns: CompareLatency,
    pub errors: u64,
    pub ratio_to_first: CompareRatios,
}

/// Latency over both directions; `null` without I/O.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct CompareLatency {
    pub mean: Option<f64>,
    pub percentiles: BTreeMap<String, Option<f64>>,
    pub max: Option<f64>,
}

/// Each figure over the first engine's; `null` where either has none.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema)]
pub struct CompareRatios {
    pub iops: Option<f64>,
    pub lat_mean: Option<f64>,
    pub lat_p99: Option<f64>,
    pub cpu_per_io: Option<f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct CompareRun {
    pub engine_spec: String,
    pub run: RunDocument,
}

/// The JSON Schema of every result document, as committed in `schema/result.schema.json`.
pub fn schema() -> serde_json::Value {
    let mut s = schemars::schema_for!(ResultDocument);
    // The kinds are told apart the way `load` tells them apart (a run has `results`, a comparison
    // says `command: compare`), rather than by `anyOf`, so a validator names the field at fault
    // instead of reporting that no kind matched.
    s.remove("anyOf");
    let def = |name: &str| serde_json::json!({ "$ref": format!("#/$defs/{name}") });
    s.insert("type".into(), "object".into());
    s.insert("if".into(), serde_json::json!({ "required": ["results"] }));
    s.insert("then".into(), def("RunDocument"));
    s.insert(
        "else".into(),
        serde_json::json!({
            "if": { "required": ["command"], "properties": { "command": { "const": "compare" } } },
            "then": def("CompareDocument"),
            "else": def("Collection"),
        }),
    );
    s.insert("title".into(), "nvmebench result document".into());
    s.insert(
        "description".into(),
        format!(
            "What nvmebench writes (schema_version {}): one run (`run --json`, `merge`, a suite's run step), a comparison (`compare --json`), or a collection of runs and suite curves (suite steps). Generated from src/report/doc.rs.",
            SCHEMA_VERSION
        )
        .into(),
    );
    s.to_value()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed schema is the one these types generate. After changing a type, regenerate it
    /// with `UPDATE_SCHEMA=1 cargo test committed_schema`.
    #[test]
    fn committed_schema_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema/result.schema.json");
        let generated = serde_json::to_string_pretty(&schema()).expect("a schema serialises") + "\n";
        if std::env::var_os("UPDATE_SCHEMA").is_some() {
            std::fs::write(path, &generated).expect("schema/ is writable");
        }
        let committed = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            committed == generated,
            "{path} is not what src/report/doc.rs generates; regenerate it with `UPDATE_SCHEMA=1 cargo test committed_schema` and commit it"
        );
    }

    #[test]
    fn sums_are_written_as_text_and_read_either_way() {
        let big = NsSum(u128::from(u64::MAX) * 3);
        let text = serde_json::to_value(big).unwrap();
        assert_eq!(text, serde_json::json!("55340232221128654845"));
        assert_eq!(serde_json::from_value::<NsSum>(text).unwrap(), big);
        assert_eq!(serde_json::from_value::<NsSum>(serde_json::json!(42)).unwrap(), NsSum(42));
        let e = serde_json::from_value::<NsSum>(serde_json::json!("4.2")).unwrap_err().to_string();
        assert!(e.contains("'4.2' is not a whole number of nanoseconds"), "{e}");
    }
}

//! Command-line definitions only: the raw flags as typed, in fio's words.
//!
//! Each value is parsed into its unit here (so a typo is reported against the option that holds it);
//! whether the values make sense together and for the target is decided in `config`.

use crate::units::{self, SizeOrPercent};
use crate::workload::RwMode;
use crate::workload::dist::RandomDist;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

#[derive(Debug, Parser)]
#[command(
    name = "nvmebench",
    version,
    about = "NVMe benchmark: pinned, polled per-core workers over io_uring (and SPDK), with exact HDR latency histograms",
    after_help = "Run `nvmebench run` alone for a short 4 KiB random-read run through io_uring on a scratch file."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one workload on one target and report IOPS, bandwidth and latency percentiles.
    Run(Box<RunArgs>),
    /// List the NVMe controllers and namespaces SPDK can reach (needs a build with --features spdk).
    Devices(DevicesArgs),
    /// Render JSON results (files, or directories of them) as an HTML page with plots, CSV or Markdown.
    Report(ReportArgs),
    /// Merge the JSON results of runs made at the same time (processes, hosts) into one, exactly.
    Merge(MergeArgs),
    /// Run a named methodology (profiles, T/Q sweeps, iorate curves, preconditioning) into a results
    /// directory; resumable. `nvmebench suite --list` shows the suites and profiles.
    Suite(Box<SuiteArgs>),
    /// Run one workload through several engines in turn (same seed, offsets, cores and duration)
    /// and print one table with a column per engine.
    Compare(Box<CompareArgs>),
    /// Check this machine for the SPDK and kernel I/O paths; print OK/WARN/FAIL with the fixes.
    Doctor(DoctorArgs),
}

#[derive(Debug, Args)]
pub struct DevicesArgs {
    /// JSON instead of text.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub spdk: SpdkArgs,
}

/// What `nvmebench report` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// One self-contained page with inline SVG plots.
    Html,
    /// The summary, one row per run and direction.
    Csv,
    /// The summary as a Markdown table.
    Md,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Result files (`run --json`, a file with `runs: [...]`, suite results) or directories of them.
    #[arg(required = true, value_name = "RESULTS")]
    pub results: Vec<PathBuf>,

    /// Write here instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Output format (default: from the -o file's extension, else html).
    #[arg(long, value_enum)]
    pub format: Option<ReportFormat>,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Result files of runs made at the same time (or directories of them).
    #[arg(required = true, value_name = "RESULTS")]
    pub inputs: Vec<PathBuf>,

    /// Write the merged result here instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Clone, Debug, Args)]
pub struct CompareArgs {
    /// Engines to compare, in order; the first is the baseline of the ratios. Engine options follow
    /// a colon as in --engine: `psync,aio,uring,uring:poll,uring-cmd:poll`.
    #[arg(long, value_name = "LIST", required = true)]
    pub engines: String,

    /// Hand the PCIe function of --filename (/dev/nvmeXnY) to vfio-pci for the spdk runs and back
    /// to its kernel driver for the others and at the end, also after an error or Ctrl-C, through
    /// scripts/nvme-bind.sh. Refused when anything on the device is mounted or in use.
    #[arg(long)]
    pub rebind: bool,

    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The device to check: /dev/nvme0n1, a PCI address (0000:01:00.0) or an SPDK transport ID.
    #[arg(long, value_name = "DEVICE")]
    pub device: Option<String>,

    /// The worker cores the run will use: `0-3,8` (default: the first allowed core, as `run`).
    #[arg(long, value_name = "LIST", value_parser = parse_cores)]
    pub cores: Option<CoreList>,

    /// Hugepage memory the run needs (default 512M).
    #[arg(long, value_name = "SIZE", value_parser = parse_hugemem)]
    pub hugemem: Option<u64>,

    /// Print the findings as JSON.
    #[arg(long)]
    pub json: bool,
}

fn parse_hugemem(text: &str) -> Result<u64, String> {
    match units::parse_size(text)? {
        0 => Err(format!("'{text}' is zero; give the hugepage memory the run needs, like 512M")),
        n => Ok(n),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputFormat {
    Text,
    Json,
}

/// `--on-error`: stop, continue, or retry each failed I/O up to N times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnError {
    /// Stop the run at the first I/O error.
    Stop,
    /// Count errors and keep going.
    Continue,
    /// Retry a failed I/O up to N times; one that still fails is counted and the run goes on.
    Retry(u32),
}

fn parse_on_error(text: &str) -> Result<OnError, String> {
    match text {
        "stop" => Ok(OnError::Stop),
        "continue" => Ok(OnError::Continue),
        _ => text
            .strip_prefix("retry:")
            .and_then(|n| n.parse::<u32>().ok())
            .filter(|n| (1..=1000).contains(n))
            .map(OnError::Retry)
            .ok_or_else(|| {
                format!("'{text}' is not an error policy; use stop, continue or retry:N (N from 1 to 1000)")
            }),
    }
}

#[derive(Clone, Debug, Args)]
pub struct RunArgs {
    /// I/O engine: `uring` (default; options such as `uring:poll`, `uring:sqpoll_cpu=1`), `uring-cmd`
    /// (NVMe passthrough on /dev/ngXnY), `aio`, `psync`, `null`, `null:lat=20us`, or `spdk` (with
    /// --trid; needs a build with --features spdk).
    #[arg(long, value_name = "ENGINE")]
    pub engine: Option<String>,

    /// File or block device to run on. Without it: a scratch file, removed afterwards (the null
    /// engine needs no target at all).
    #[arg(long, visible_alias = "target", value_name = "PATH")]
    pub filename: Option<PathBuf>,

    /// Access pattern: read, write, randread, randwrite, rw or randrw.
    #[arg(long, default_value = "randread", value_parser = RwMode::parse)]
    pub rw: RwMode,

    /// Percentage of reads in rw/randrw (default 50).
    #[arg(long, value_name = "PCT", value_parser = parse_percent_u32)]
    pub rwmixread: Option<u32>,

    /// Block size, or `READ,WRITE` sizes (default 4k).
    #[arg(long, value_name = "SIZE", conflicts_with = "bssplit")]
    pub bs: Option<String>,

    /// Block-size mix in fio syntax: `4k/60:64k/40`, or `READMIX,WRITEMIX`.
    #[arg(long, value_name = "MIX")]
    pub bssplit: Option<String>,

    /// I/Os in flight per worker.
    #[arg(long, visible_alias = "iodepth", default_value = "32", value_parser = parse_qd)]
    pub qd: u32,

    /// Cores to run workers on, one pinned worker each: `0-3,8`.
    #[arg(long, value_name = "LIST", value_parser = parse_cores, conflicts_with = "jobs")]
    pub cores: Option<CoreList>,

    /// Number of workers, pinned to the first allowed cores (default 1).
    #[arg(long, visible_alias = "numjobs", value_name = "N", value_parser = parse_jobs)]
    pub jobs: Option<usize>,

    /// Measured run time after the ramp (default 10s; 5s for the scratch-file run).
    #[arg(long, visible_alias = "runtime", value_name = "DURATION", value_parser = parse_positive_duration)]
    pub time: Option<Duration>,

    /// Warm-up before statistics start.
    #[arg(long, visible_alias = "ramp_time", value_name = "DURATION", value_parser = units::parse_duration)]
    pub ramp: Option<Duration>,

    /// Stop after this many I/Os in total (split evenly over workers).
    #[arg(long, visible_alias = "number_ios", value_name = "N", value_parser = parse_ios)]
    pub ios: Option<u64>,

    /// Start of the working set: bytes or a percentage of the target.
    #[arg(long, value_name = "SIZE|PCT", value_parser = units::parse_size_or_percent)]
    pub offset: Option<SizeOrPercent>,

    /// Size of the working set: bytes or a percentage of the target. Creates the file if missing.
    #[arg(long, value_name = "SIZE|PCT", value_parser = units::parse_size_or_percent)]
    pub size: Option<SizeOrPercent>,

    /// Offset alignment (default: the smallest block size).
    #[arg(long, value_name = "SIZE", value_parser = units::parse_size)]
    pub align: Option<u64>,

    /// Random offset distribution: uniform, zipf:THETA, pareto:H or normal:SIGMA.
    #[arg(long, default_value = "uniform", value_parser = RandomDist::parse)]
    pub random_dist: RandomDist,

    /// Seed of the offset sequence: the same seed gives the same I/Os.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Open-loop pacing at this many IOPS in total; latency counts from each I/O's scheduled time.
    #[arg(long, value_name = "IOPS", value_parser = parse_rate)]
    pub rate_iops: Option<f64>,

    /// Reporting interval for the live line and the JSON time series.
    #[arg(long, default_value = "1s", value_name = "DURATION", value_parser = parse_positive_duration)]
    pub interval: Duration,

    /// Latency percentiles to report.
    #[arg(long, default_value = "50,90,99,99.9,99.99,99.999", value_name = "LIST", value_parser = parse_percentiles)]
    pub percentiles: Percentiles,

    /// Output on stdout.
    #[arg(long, value_enum, default_value = "text")]
    pub output: OutputFormat,

    /// Also write the full JSON result (with histograms) to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// What an I/O error does: stop, continue, or retry:N (retry each failed I/O up to N times).
    #[arg(long, default_value = "stop", value_name = "POLICY", value_parser = parse_on_error)]
    pub on_error: OnError,

    /// Confirms writing to a device that holds a filesystem, swap, LVM, RAID or partition-table
    /// signature: the device's serial number, as the refusal message names it.
    #[arg(long, value_name = "SERIAL", requires = "allow_destroy")]
    pub confirm_serial: Option<String>,

    /// Allow writes to a block device (destroys its data). Mounted devices are refused regardless.
    #[arg(long)]
    pub allow_destroy: bool,

    /// How long to wait for I/Os in flight after the run ends.
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = parse_positive_duration)]
    pub drain_timeout: Duration,

    /// No live line, even on a terminal.
    #[arg(long)]
    pub quiet: bool,

    /// Verify data: every written block carries a header and a payload derived from it; reads are
    /// checked, and everything written is re-read after the run. Mismatches exit with status 1.
    #[arg(long)]
    pub verify: bool,

    /// With --verify: load what an earlier verified run left (if FILE exists) and save what this one
    /// leaves, so a later run (e.g. after a power cycle) checks the data.
    #[arg(long, value_name = "FILE", requires = "verify")]
    pub verify_state: Option<PathBuf>,

    /// Start the workers at this UNIX time (seconds, fractions allowed), so that processes on
    /// several hosts start together; the wait comes after set-up.
    #[arg(long, value_name = "UNIX_TIME", value_parser = parse_unix_time, conflicts_with = "start_delay")]
    pub start_at: Option<SystemTime>,

    /// Start the workers this long after the command starts.
    #[arg(long, value_name = "DURATION", value_parser = units::parse_duration)]
    pub start_delay: Option<Duration>,
    #[command(flatten)]
    pub spdk: SpdkArgs,
}

/// Options of the SPDK engine (`--engine spdk`), in SPDK perf's terms.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "SPDK engine")]
pub struct SpdkArgs {
    /// NVMe transport ID, as SPDK writes it; repeat for several controllers. Add `ns:N` for one
    /// namespace: 'trtype:PCIe traddr:0000:01:00.0 ns:1', 'trtype:TCP adrfam:IPv4 traddr:127.0.0.1
    /// trsvcid:4420 subnqn:nqn.2016-06.io.spdk:cnode1'.
    #[arg(long = "trid", value_name = "TRID")]
    pub trids: Vec<String>,

    /// Hugepage memory SPDK reserves at start, in MiB.
    #[arg(long, value_name = "MB", value_parser = parse_mem_size)]
    pub mem_size: Option<u32>,

    /// Shared-memory id (multi-process SPDK).
    #[arg(long, value_name = "ID")]
    pub shm_id: Option<i32>,

    /// Run SPDK without hugepages (fabrics targets only).
    #[arg(long)]
    pub no_huge: bool,

    /// DPDK IOVA mode.
    #[arg(long, value_parser = ["pa", "va"])]
    pub iova_mode: Option<String>,

    /// One hugepage file per memory segment list (DPDK --single-file-segments, SPDK perf's -g).
    /// Always on for vfio-user transport IDs, which need it to share memory with the target.
    #[arg(long)]
    pub single_file_segments: bool,

    /// I/O queue entries per queue pair (default: the most the controller allows).
    #[arg(long, value_name = "N", value_parser = parse_io_queue_size)]
    pub io_queue_size: Option<u32>,

    /// Show SPDK's own log messages on stderr at this level (off by default).
    #[arg(long, value_parser = ["error", "warn", "notice", "info", "debug"])]
    pub spdk_log: Option<String>,

    /// Fault injection (testing the stack): fail COUNT commands of each worker's queue pair with
    /// the given NVMe status, e.g. `read:10` (status 0:0x06, internal error) or
    /// `write:5:2:0x81` (media error, unrecovered read). Uses SPDK's
    /// qpair error injection; the commands never reach the device.
    #[arg(long, value_name = "OP:COUNT[:SCT:SC]", value_parser = parse_inject)]
    pub spdk_inject_error: Option<InjectError>,

    /// Fault injection: reset every attached controller this long after the start (SPDK's
    /// spdk_nvme_ctrlr_reset, with the workers paused around it). Commands in flight come back
    /// aborted; with --on-error retry:N they are retried. The outcome is in the report.
    #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration)]
    pub spdk_reset_after: Option<Duration>,

    /// Completions reaped per poll at most (default: the queue depth).
    #[arg(long, value_name = "N", value_parser = parse_qd)]
    pub max_completions: Option<u32>,
}

impl SpdkArgs {
    /// The first SPDK-only flag given, as typed, to refuse it with other engines.
    pub fn first_given(&self) -> Option<&'static str> {
        [
            (!self.trids.is_empty(), "--trid"),
            (self.mem_size.is_some(), "--mem-size"),
            (self.shm_id.is_some(), "--shm-id"),
            (self.no_huge, "--no-huge"),
            (self.iova_mode.is_some(), "--iova-mode"),
            (self.single_file_segments, "--single-file-segments"),
            (self.io_queue_size.is_some(), "--io-queue-size"),
            (self.spdk_log.is_some(), "--spdk-log"),
            (self.spdk_inject_error.is_some(), "--spdk-inject-error"),
            (self.spdk_reset_after.is_some(), "--spdk-reset-after"),
            (self.max_completions.is_some(), "--max-completions"),
        ]
        .into_iter()
        .find_map(|(given, flag)| given.then_some(flag))
    }
}

/// `--spdk-inject-error`: which commands fail, how many, with which status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InjectError {
    pub write: bool,
    pub count: u32,
    pub sct: u8,
    pub sc: u8,
}

fn parse_inject(text: &str) -> Result<InjectError, String> {
    let bad =
        || format!("'{text}' is not an injection; write OP:COUNT[:SCT:SC] with OP read or write, e.g. read:10:2:0x81");
    let parts: Vec<&str> = text.split(':').collect();
    let num = |t: &str, max: u64| -> Option<u64> {
        let v = match t.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).ok()?,
            None => t.parse().ok()?,
        };
        (v <= max).then_some(v)
    };
    let write = match parts.first() {
        Some(&"read") => false,
        Some(&"write") => true,
        _ => return Err(bad()),
    };
    let count = parts.get(1).and_then(|c| num(c, u64::from(u32::MAX))).filter(|c| *c > 0).ok_or_else(bad)? as u32;
    let (sct, sc) = match parts.len() {
        2 => (0, 0x06), // internal error
        4 => (num(parts[2], 7).ok_or_else(bad)? as u8, num(parts[3], 0xff).ok_or_else(bad)? as u8),
        _ => return Err(bad()),
    };
    if sct == 0 && sc == 0 {
        return Err(format!("'{text}' injects status 0:0, which is success; give a failing status such as 0:0x06"));
    }
    Ok(InjectError { write, count, sct, sc })
}

/// `nvmebench suite`: the options a suite's steps share; the workloads come from the profiles.
#[derive(Debug, Args)]
pub struct SuiteArgs {
    /// A suite (review, quick, scaling, curves) or a profile's name.
    #[arg(value_name = "NAME", required_unless_present = "list")]
    pub name: Option<String>,

    /// List the suites and profiles (built-in and --profile files) and exit.
    #[arg(long)]
    pub list: bool,

    /// Load a profile from this TOML file (repeatable); NAME may then be its name.
    #[arg(long = "profile", value_name = "FILE")]
    pub profiles: Vec<PathBuf>,

    /// Results directory: one JSON per step, a summary; rerunning skips finished steps.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// I/O engine, as for `run` (uring, uring-cmd, aio, psync, null, null:lat=DURATION, or spdk
    /// with --trid).
    #[arg(long, default_value = "uring", value_name = "ENGINE")]
    pub engine: String,

    /// File or block device (without it: the null engine needs none, spdk takes --trid, others
    /// refuse).
    #[arg(long, visible_alias = "target", value_name = "PATH")]
    pub filename: Option<PathBuf>,

    /// Capacity to test (bytes or % of the target); creates a missing file. Scaled-down sizes make
    /// preconditioning quick.
    #[arg(long, value_name = "SIZE|PCT", value_parser = units::parse_size_or_percent)]
    pub size: Option<SizeOrPercent>,

    /// Share of the capacity the profiles' steps use, after preconditioning fills all of it.
    #[arg(long, value_name = "PCT", value_parser = parse_working_set)]
    pub working_set: Option<f64>,

    /// Threads (workers) of each step, for streams that follow the suite's count (default 1).
    #[arg(long, visible_alias = "numjobs", default_value = "1", value_parser = parse_jobs)]
    pub jobs: usize,

    /// Queue depth of each worker, for streams without their own.
    #[arg(long, visible_alias = "iodepth", default_value = "32", value_parser = parse_qd)]
    pub qd: u32,

    /// Measured time of each run.
    #[arg(long, visible_alias = "runtime", default_value = "60s", value_parser = parse_positive_duration)]
    pub time: Duration,

    /// Warm-up before each run's statistics start.
    #[arg(long, visible_alias = "ramp_time", default_value = "0s", value_parser = units::parse_duration)]
    pub ramp: Duration,

    /// Seed of the offset sequences.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// T/Q sweep of every step: `2x2,2x4,...` or `2..16x2..16`; `none` turns the suite's off.
    #[arg(long, value_name = "POINTS")]
    pub sweep: Option<String>,

    /// Add an iorate curve to every step (closed-loop maximum, then paced at 10..120% of it).
    #[arg(long, conflicts_with = "no_curve")]
    pub curve: bool,

    /// No iorate curves, even if the suite has them.
    #[arg(long)]
    pub no_curve: bool,

    /// End an iorate curve once a step's latency passes this: `5ms` (mean) or `p99:5ms`.
    #[arg(long, value_name = "LATENCY")]
    pub stop_latency: Option<String>,

    /// Precondition first (purge, sequential fill, rounds to steady state), even if the suite does not.
    #[arg(long, conflicts_with = "no_precondition")]
    pub precondition: bool,

    /// Skip preconditioning.
    #[arg(long)]
    pub no_precondition: bool,

    /// Times the capacity is written sequentially (128 KiB) before the rounds; 0 skips it.
    #[arg(long, default_value = "2", value_name = "N", value_parser = parse_fill)]
    pub fill: f64,

    /// Length of each steady-state round (default: --time).
    #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration)]
    pub round_time: Option<Duration>,

    /// Steady-state rounds at most.
    #[arg(long, default_value = "25", value_name = "N", value_parser = parse_rounds)]
    pub max_rounds: u32,

    /// Block sizes below the device's logical block size: round them up, or reject the profile.
    #[arg(long, value_enum, default_value = "round")]
    pub small_bs: crate::suite::profile::SmallBlocks,

    /// Allow writes to a block device and purging (discard) of the target.
    #[arg(long)]
    pub allow_destroy: bool,

    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,

    #[command(flatten)]
    pub spdk: SpdkArgs,
}

fn parse_working_set(text: &str) -> Result<f64, String> {
    match units::parse_size_or_percent(text) {
        Ok(SizeOrPercent::Percent(p)) if p > 0.0 => Ok(p),
        _ => Err(format!("'{text}' is not a share of the capacity; write a percentage above 0, like 25%")),
    }
}

fn parse_fill(text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && (0.0..=16.0).contains(v))
        .ok_or_else(|| format!("'{text}' is not a fill count; use a number of passes from 0 to 16, like 2"))
}

fn parse_rounds(text: &str) -> Result<u32, String> {
    whole_in(text, steady_window(), 1000, "a round count")
}

/// The smallest `--max-rounds`: one steady-state window.
fn steady_window() -> u32 {
    crate::suite::steady::WINDOW as u32
}

/// A core list as given (`0-3,8`), in the order given.
#[derive(Clone, Debug, PartialEq)]
pub struct CoreList(pub Vec<usize>);

fn parse_cores(text: &str) -> Result<CoreList, String> {
    units::parse_core_list(text).map(CoreList)
}

/// Percentiles as given, validated to (0, 100].
#[derive(Clone, Debug, PartialEq)]
pub struct Percentiles(pub Vec<f64>);

/// A whole number in `lo..=hi`, or a sentence saying what `what` takes.
fn whole_in<T: std::str::FromStr + PartialOrd + std::fmt::Display>(
    text: &str,
    lo: T,
    hi: T,
    what: &str,
) -> Result<T, String> {
    text.trim()
        .parse::<T>()
        .ok()
        .filter(|v| *v >= lo && *v <= hi)
        .ok_or_else(|| format!("'{text}' is not {what}; use a whole number from {lo} to {hi}"))
}

fn parse_percent_u32(text: &str) -> Result<u32, String> {
    whole_in(text, 0, 100, "a percentage")
}

fn parse_qd(text: &str) -> Result<u32, String> {
    whole_in(text, 1, 65536, "a queue depth")
}

fn parse_mem_size(text: &str) -> Result<u32, String> {
    whole_in(text, 1, 1 << 20, "a memory size in MiB")
}

fn parse_io_queue_size(text: &str) -> Result<u32, String> {
    whole_in(text, 2, 65536, "an I/O queue size")
}

fn parse_jobs(text: &str) -> Result<usize, String> {
    whole_in(text, 1, 4096, "a worker count")
}

fn parse_ios(text: &str) -> Result<u64, String> {
    whole_in(text, 1, u64::MAX, "an I/O count")
}

fn parse_rate(text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0)
        .ok_or_else(|| format!("'{text}' is not a rate; use a number of IOPS above 0"))
}

fn parse_positive_duration(text: &str) -> Result<Duration, String> {
    let d = units::parse_duration(text)?;
    if d.is_zero() {
        return Err(format!("'{text}' is zero; give a duration above 0"));
    }
    Ok(d)
}

fn parse_unix_time(text: &str) -> Result<SystemTime, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0 && *v < 1e13)
        .map(|v| SystemTime::UNIX_EPOCH + Duration::from_secs_f64(v))
        .ok_or_else(|| format!("'{text}' is not a UNIX time; give seconds since 1970, like $(( $(date +%s) + 15 ))"))
}

fn parse_percentiles(text: &str) -> Result<Percentiles, String> {
    text.split(',')
        .map(|p| {
            p.trim().parse::<f64>().ok().filter(|v| *v > 0.0 && *v <= 100.0).ok_or_else(|| {
                format!("'{p}' is not a percentile; list numbers above 0 and up to 100, like 50,99,99.9")
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Percentiles)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<RunArgs, clap::Error> {
        let mut v = vec!["nvmebench", "run"];
        v.extend_from_slice(args);
        Cli::try_parse_from(v).map(|c| match c.command {
            Command::Run(r) => *r,
            Command::Compare(c) => c.run,
            Command::Doctor(_) => unreachable!("the arguments start with `run`"),
            _ => unreachable!("parsed a run command"),
        })
    }

    #[test]
    fn doctor_args() {
        let c = Cli::try_parse_from(["nvmebench", "doctor", "--device", "0000:00:10.0", "--hugemem", "1G", "--json"])
            .unwrap();
        let Command::Doctor(d) = c.command else { panic!("parsed as doctor") };
        assert_eq!((d.device.as_deref(), d.hugemem, d.json), (Some("0000:00:10.0"), Some(1 << 30), true));
        let e = Cli::try_parse_from(["nvmebench", "doctor", "--hugemem", "0"]).unwrap_err().to_string();
        assert!(e.contains("--hugemem") && e.contains("is zero"), "{e}");
    }

    #[test]
    fn defaults() {
        let a = parse(&[]).unwrap();
        assert_eq!(a.engine, None, "config applies the default engine");
        assert_eq!(a.rw, RwMode::RandRead);
        assert_eq!(a.qd, 32);
        assert_eq!(a.percentiles.0, vec![50.0, 90.0, 99.0, 99.9, 99.99, 99.999]);
    }

    #[test]
    fn fio_aliases() {
        let a = parse(&["--iodepth", "8", "--numjobs", "2", "--runtime", "3", "--target", "/dev/x"]).unwrap();
        assert_eq!((a.qd, a.jobs, a.time), (8, Some(2), Some(Duration::from_secs(3))));
        assert_eq!(a.filename, Some(PathBuf::from("/dev/x")));
    }

    #[test]
    fn bad_values_name_the_option() {
        let e = parse(&["--qd", "0"]).unwrap_err().to_string();
        assert!(e.contains("'--qd <QD>'") && e.contains("from 1 to 65536"), "{e}");
        let e = parse(&["--rwmixread", "101"]).unwrap_err().to_string();
        assert!(e.contains("--rwmixread") && e.contains("0 to 100"), "{e}");
        let e = parse(&["--cores", "3-1"]).unwrap_err().to_string();
        assert!(e.contains("--cores"), "{e}");
        assert!(parse(&["--bs", "4k", "--bssplit", "4k/100"]).is_err());
        assert!(parse(&["--cores", "0", "--jobs", "2"]).is_err());
        assert!(parse(&["--time", "0"]).unwrap_err().to_string().contains("is zero"));
        assert!(parse(&["--percentiles", "50,101"]).is_err());
        let e = parse(&["--start-at", "soon"]).unwrap_err().to_string();
        assert!(e.contains("--start-at") && e.contains("is not a UNIX time"), "{e}");
        assert!(parse(&["--start-at", "1700000000", "--start-delay", "5s"]).is_err());
    }
}

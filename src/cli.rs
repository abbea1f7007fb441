//! Command-line definitions only: the raw flags as typed, in fio's words.
//!
//! Each value is parsed into its unit here (so a typo is reported against the option that holds it);
//! whether the values make sense together and for the target is decided in `config`.

use crate::options::{FioLatencies, LatencyMode, Loads, OnError, OutputFormat, SmallBlocks};
use crate::units::{self, SizeOrPercent};
use crate::workload::contents::DedupeMode;
use crate::workload::dist::RandomDist;
use crate::workload::rate::{self, ByteRate, IopsRate, RateProcess};
use crate::workload::{Mix, RwMode};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

#[derive(Debug, Parser)]
#[command(
    name = "nvmebench",
    version = crate::version::long(),
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
    #[command(
        after_help = "fio's spellings work too (underscores or dashes): --ioengine=io_uring|io_uring_cmd|libaio|posixaio|psync|null|spdk|falloc|ftruncate, \
--direct=1, --time_based, --norandommap, --randrepeat, --randseed, --rwmixwrite, --bsrange, --percentile_list=99:99.9, \
--random_distribution, --cpumask, --blockalign, --startdelay, --hipri, --sqthread_poll, --fixedbufs, --registerfiles, \
--output=FILE, and name, thread, group_reporting and the others that change no measurement. Where fio means \
something else, the fio spelling means what fio means: --rate_iops, --rate and --number_ios are per job \
(--rate-iops and --ios are totals), and --rate_iops is per direction, as bytes at the smallest block size. --size and --offset are the working set all workers share; on the command \
line the run lasts --time, while in a job file a job that is not time_based ends after size bytes, as in fio, \
and a time_based one needs a runtime. Job-file times are read as fio reads them, a whole number and its unit: \
a fraction, which fio drops (runtime=0.3 is 0 to fio), is refused with what to write (runtime=300ms). \
docs/fio.md (for fio users) lists every option taken."
    )]
    Run(Box<RunArgs>),
    /// List the NVMe controllers and namespaces SPDK can reach (needs a build with --features spdk).
    Devices(DevicesArgs),
    /// Render JSON results (files, or directories of them) as an HTML page with plots, CSV or Markdown.
    Report(ReportArgs),
    /// Merge the JSON results of runs made at the same time (processes, hosts) into one, exactly;
    /// per-target blocks are merged by host and path.
    Merge(MergeArgs),
    /// Run a named methodology (profiles, T/Q sweeps, iorate curves, preconditioning) into a results
    /// directory; resumable. `nvmebench suite --list` shows the suites and profiles.
    Suite(Box<SuiteArgs>),
    /// Run one workload through several engines in turn (same seed, offsets, cores and duration)
    /// and print one table with a column per engine (and per-target rows with several targets).
    Compare(Box<CompareArgs>),
    /// Check this machine for the SPDK and kernel I/O paths; print OK/WARN/FAIL with the fixes.
    Doctor(DoctorArgs),
    /// Print a shell completion script on stdout (docs/install.md says where it goes).
    Completions(CompletionsArgs),
    /// Print the manual page (roff) of nvmebench or of one command: `nvmebench man run | man -l -`.
    Man(ManArgs),
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// A command's page instead of nvmebench's own (run, report, suite, ...).
    #[arg(value_name = "COMMAND", conflicts_with = "dir")]
    pub command: Option<String>,

    /// Write every page (nvmebench.1, nvmebench-run.1, ...) into this directory.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct DevicesArgs {
    /// JSON instead of text.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub spdk: SpdkEnvArgs,
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
    /// One chart (--chart) as a standalone SVG file.
    Svg,
    /// One chart (--chart) as a PNG image, drawn at twice the SVG's size.
    Png,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Result files (`run --json`, a file with `runs: [...]`, suite results) or directories of them.
    #[arg(required = true, value_name = "RESULTS")]
    pub results: Vec<PathBuf>,

    /// Write here instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Output format [default: from the -o file's extension, else html].
    #[arg(long, value_enum)]
    pub format: Option<ReportFormat>,

    /// The page's title.
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,

    /// Name the runs of a result file (repeatable): `--label a.json="Drive A"`.
    #[arg(long = "label", value_name = "FILE=NAME")]
    pub labels: Vec<String>,

    /// Leave drive serial numbers out of the page (for publishing).
    #[arg(long)]
    pub hide_serial: bool,

    /// The chart that --format svg or png writes, by the name the page gives it as its id
    /// (percentiles, histogram, cdf, iops-bars, p99-bars, iops-time, iorate, sweep-0-iops, ...).
    #[arg(long, value_name = "NAME")]
    pub chart: Option<String>,
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

    /// Offered loads: every engine runs at each, open-loop at that many IOPS in total (latency from
    /// each I/O's due time) or `max` (closed loop): `10k,50k,100k,max`. One table per load, with
    /// the cores used and the CPU per I/O.
    #[arg(long, value_name = "LIST", value_parser = Loads::parse, conflicts_with_all = ["curve", "rate_iops", "rate"])]
    pub rates: Option<Loads>,

    /// Every engine closed-loop first, then every engine paced at 10, 20, ... 100% of the slowest
    /// engine's maximum (VDBench's curve); one table per load, as --rates.
    #[arg(long, conflicts_with_all = ["rate_iops", "rate"])]
    pub curve: bool,

    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The device to check: /dev/nvme0n1, a PCI address (0000:01:00.0) or an SPDK transport ID.
    #[arg(long, value_name = "DEVICE")]
    pub device: Option<String>,

    /// The worker cores the run will use: `0-3,8` [default: the first allowed core, as `run`]
    #[arg(long, value_name = "LIST", value_parser = parse_cores)]
    pub cores: Option<CoreList>,

    /// Hugepage memory the run needs [default: 512M]
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

/// `--progress`: when to draw the live line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ProgressMode {
    /// When stderr is a terminal.
    Auto,
    /// Always, even into a pipe or file.
    Always,
    /// Never.
    Never,
}

#[derive(Clone, Debug, Args)]
pub struct RunArgs {
    /// I/O engine: `uring` (options such as `uring:poll`, `uring:sqpoll_cpu=1`), `uring-cmd` (NVMe
    /// passthrough on /dev/ngXnY), `aio`, `posixaio` (POSIX AIO), `psync`, `null`, `null:lat=20us`,
    /// `spdk` (with --trid; needs a build with --features spdk), or fio's file-call engines `falloc`
    /// and `ftruncate` [default: uring]
    #[arg(long, value_name = "ENGINE")]
    pub engine: Option<String>,

    /// Buffered I/O through the page cache, as fio's direct=0 (its default in job files): psync,
    /// aio, posixaio and uring open the target without O_DIRECT, and drop its cached pages first (fio's
    /// invalidate=1). Other engines have no page cache to go through and ignore it.
    #[arg(long, num_args = 0..=1, require_equals = true, default_value_t = false, default_missing_value = "true",
          action = clap::ArgAction::Set)]
    pub buffered: bool,

    /// File or block device to run on; repeat it, or list several as fio does (`A:B`, `\:` for a
    /// colon in a name), to run on all at once. Without it: a scratch file, removed afterwards (the
    /// null engine needs no target at all).
    #[arg(long, visible_alias = "target", value_name = "PATH", action = clap::ArgAction::Append)]
    pub filename: Vec<PathBuf>,

    /// With several targets: every worker drives every target (a queue of --qd on each), instead of
    /// targets dealt round-robin over the workers.
    #[arg(long, num_args = 0..=1, require_equals = true, default_value_t = false, default_missing_value = "true",
          action = clap::ArgAction::Set)]
    pub each_worker_all_targets: bool,

    /// Access pattern: read, write, randread, randwrite, rw, randrw, trim, randtrim or trimwrite
    /// (each block trimmed, then written).
    #[arg(long, default_value = "randread", value_parser = RwMode::parse)]
    pub rw: RwMode,

    /// Percentage of reads in rw/randrw, the rest writes [default: 50]
    #[arg(long, value_name = "PCT", value_parser = parse_percent_u32, conflicts_with = "rwmix")]
    pub rwmixread: Option<u32>,

    /// Shares of a rw/randrw mix in percent, adding up to 100: `read=70,write=20,trim=10`
    /// (operations: read, write, trim, write-zeroes, flush).
    #[arg(long, value_name = "SHARES", value_parser = Mix::parse)]
    pub rwmix: Option<Mix>,

    /// Block size, or `READ,WRITE[,TRIM]` sizes as fio's bs: `4k,64k` gives trims 64k too,
    /// `4k,64k,` the default [default: 4k]
    #[arg(long, value_name = "SIZE", conflicts_with = "bssplit")]
    pub bs: Option<String>,

    /// Block-size mix in fio syntax: `4k/60:64k/40`, or `READMIX,WRITEMIX[,TRIMMIX]` as --bs.
    #[arg(long, value_name = "MIX")]
    pub bssplit: Option<String>,

    /// I/Os in flight per worker and target.
    #[arg(long, visible_alias = "iodepth", default_value = "32", value_parser = parse_qd)]
    pub qd: u32,

    /// Cores to run workers on, one pinned worker each: `0-3,8`.
    #[arg(long, value_name = "LIST", value_parser = parse_cores, conflicts_with = "jobs")]
    pub cores: Option<CoreList>,

    /// Number of workers, pinned to the first allowed cores [default: 1]
    #[arg(long, visible_alias = "numjobs", value_name = "N", value_parser = parse_jobs)]
    pub jobs: Option<usize>,

    /// Measured run time after the ramp [default: 10s; 5s for the scratch-file run]
    #[arg(long, visible_alias = "runtime", value_name = "DURATION", value_parser = parse_positive_duration)]
    pub time: Option<Duration>,

    /// Warm-up before statistics start.
    #[arg(long, visible_alias = "ramp_time", value_name = "DURATION", value_parser = units::parse_duration)]
    pub ramp: Option<Duration>,

    /// Stop after this many I/Os in total (split evenly over workers). fio's --number_ios counts
    /// per job.
    #[arg(long, value_name = "N", value_parser = parse_ios)]
    pub ios: Option<u64>,

    /// Start of the working set: bytes or a percentage of the target (as fio's offset, the same
    /// for every worker).
    #[arg(long, value_name = "SIZE|PCT", value_parser = units::parse_size_or_percent)]
    pub offset: Option<SizeOrPercent>,

    /// Size of the working set all workers share: bytes or a percentage of the target. Creates the
    /// file if missing. Unlike fio's size, it does not end the run (that is --time or --ios);
    /// in a job file without time_based it does, as in fio. Sequential workers each take a slice
    /// of it (fio's jobs each cover all of it).
    #[arg(long, value_name = "SIZE|PCT", value_parser = units::parse_size_or_percent)]
    pub size: Option<SizeOrPercent>,

    /// Offset alignment [default: the smallest block size]
    #[arg(long, value_name = "SIZE", value_parser = units::parse_size)]
    pub align: Option<u64>,

    /// Random offset distribution, as fio computes it: uniform, zipf:THETA, pareto:H or normal:DEV,
    /// each with an optional :CENTER (a share of the range from 0 to 1), or zoned:ACCESS/RANGE:...
    /// (each zone's percent of the I/Os over its percent of the range, from the start), or
    /// zoned_abs:ACCESS/SIZE:... (each zone's size in bytes).
    #[arg(long, default_value = "uniform", value_parser = RandomDist::parse)]
    pub random_dist: RandomDist,

    /// Random patterns cover every block of the working set once per pass, in a seeded order (fio's
    /// random map, its default in job files); without it offsets are drawn with replacement, as
    /// fio's norandommap. Only with a uniform distribution and the alignment equal to the smallest
    /// block size, as in fio.
    #[arg(long, num_args = 0..=1, require_equals = true, default_value_t = false, default_missing_value = "true",
          action = clap::ArgAction::Set)]
    pub random_map: bool,

    /// Sequential patterns skip this many bytes after each I/O (fio's rw=write:4k), or step back
    /// (a negative size, fio's rw=read:-8k: backwards), wrapping as fio wraps [default: 0]
    #[arg(long, value_name = "SIZE", value_parser = parse_signed_size, allow_hyphen_values = true)]
    pub seq_add: Option<i64>,

    /// Seed of the offset sequence: the same seed gives the same I/Os.
    #[arg(long, value_name = "N", value_parser = parse_seed)]
    pub seed: Option<u64>,

    /// Open-loop pacing at this many IOPS in total; latency counts from each I/O's scheduled time.
    /// fio's --rate_iops is per job and direction.
    #[arg(long, value_name = "IOPS", value_parser = parse_rate)]
    pub rate_iops: Option<f64>,

    /// Open-loop pacing in bytes per second per worker, as fio's rate (per job): `100m` for reads,
    /// writes and trims each, `100m,20m` for reads apart from writes and trims, `100m,20m,5m` all
    /// apart, `,20m,` for writes only, `,,5m` for trims only (write-zeroes and flushes share the
    /// write rate). Binary units (1m = 1048576 B/s); latency counts from each I/O's scheduled time.
    #[arg(long, value_name = "READ[,WRITE[,TRIM]]", value_parser = ByteRate::parse, conflicts_with = "rate_iops")]
    pub rate: Option<ByteRate>,

    /// How paced I/Os are spaced (fio's rate_process): linear (evenly) or poisson (exponential
    /// gaps with the same mean, seeded by --seed) [default: linear]
    #[arg(long, value_name = "PROCESS", value_parser = RateProcess::parse)]
    pub rate_process: Option<RateProcess>,

    /// After --thinktime-blocks I/Os, wait for all in flight to complete and stall this long before
    /// issuing more (fio's thinktime; a number without a unit is whole microseconds, as fio reads it, and
    /// one with a unit may be a fraction: 1.5ms).
    #[arg(long, value_name = "DURATION", value_parser = rate::parse_think)]
    pub thinktime: Option<Duration>,

    /// Of each think time, how much is spent spinning; the rest is slept (fio's thinktime_spin;
    /// units as --thinktime).
    #[arg(long, value_name = "DURATION", value_parser = rate::parse_think)]
    pub thinktime_spin: Option<Duration>,

    /// I/Os counted between think times (fio's thinktime_blocks) [default: 1]
    #[arg(long, value_name = "N", value_parser = parse_think_blocks)]
    pub thinktime_blocks: Option<u32>,

    /// What --thinktime-blocks counts (fio's thinktime_blocks_type): complete, I/Os completed as
    /// fio's loop reaps them; or issue, I/Os issued, which caps the depth at --thinktime-blocks
    /// [default: complete]
    #[arg(long, value_name = "TYPE", value_parser = rate::ThinkCount::parse)]
    pub thinktime_blocks_type: Option<rate::ThinkCount>,

    /// Percentage of each written 512-byte chunk that is zeros, so the data compresses to about
    /// the rest (fio's buffer_compress_percentage) [default: 0, random]
    #[arg(long, value_name = "PCT", value_parser = parse_percent_u32)]
    pub buffer_compress_percentage: Option<u32>,

    /// Percentage of writes that are exact copies of an earlier write (fio's dedupe_percentage)
    /// [default: 0, every write unique]
    #[arg(long, value_name = "PCT", value_parser = parse_percent_u32)]
    pub dedupe_percentage: Option<u32>,

    /// Which earlier write a deduplicated write copies (fio's dedupe_mode): repeat, the latest
    /// unique write; working_set, one drawn from a working set of
    /// --dedupe-working-set-percentage of --size [default: repeat]
    #[arg(long, value_name = "MODE", value_parser = DedupeMode::parse)]
    pub dedupe_mode: Option<DedupeMode>,

    /// The working set of --dedupe-mode working_set, as a percentage of --size (fio's
    /// dedupe_working_set_percentage) [default: 5]
    #[arg(long, value_name = "PCT", value_parser = parse_percent_u32)]
    pub dedupe_working_set_percentage: Option<u32>,

    /// The working set of --dedupe-mode working_set is spread over every worker's first unique
    /// writes, so that each worker's copies repeat the others' blocks too (fio's dedupe_global)
    #[arg(long = "dedupe_global", value_name = "0|1", num_args = 0..=1, default_missing_value = "1",
        value_parser = clap::builder::BoolishValueParser::new())]
    pub dedupe_global: Option<bool>,

    /// The job's I/O priority level, 0 (highest) to 7, set on each worker thread and sent with
    /// each I/O of the io_uring engine (fio's prio) [default: none, the thread's]
    #[arg(long, value_name = "LEVEL", value_parser = clap::value_parser!(u8).range(0..=7))]
    pub prio: Option<u8>,

    /// The job's I/O priority class: 1 real time, 2 best effort, 3 idle (0: best effort), as
    /// --prio (fio's prioclass) [default: none, the thread's]
    #[arg(long, value_name = "CLASS", value_parser = clap::value_parser!(u8).range(0..=3))]
    pub prioclass: Option<u8>,

    /// libaio and io_uring: the percentage of I/Os sent with --cmdprio_class and --cmdprio, as
    /// READ[,WRITE] (fio's cmdprio_percentage) [default: 0]
    #[arg(long = "cmdprio_percentage", value_name = "PCT[,PCT]")]
    pub cmdprio_percentage: Option<String>,

    /// The class of --cmdprio_percentage's and --cmdprio_bssplit's I/Os, 1 to 3, as
    /// READ[,WRITE] (fio's cmdprio_class) [default: 1, real time]
    #[arg(long = "cmdprio_class", value_name = "CLASS[,CLASS]")]
    pub cmdprio_class: Option<String>,

    /// The level of --cmdprio_percentage's and --cmdprio_bssplit's I/Os, 0 to 7, as
    /// READ[,WRITE] (fio's cmdprio) [default: 0]
    #[arg(long = "cmdprio", value_name = "LEVEL[,LEVEL]")]
    pub cmdprio: Option<String>,

    /// libaio and io_uring: per block size, the percentage of I/Os sent with a priority,
    /// bs/pct[/class/level]:... per direction READ[,WRITE] (fio's cmdprio_bssplit)
    #[arg(long = "cmdprio_bssplit", value_name = "SPLIT")]
    pub cmdprio_bssplit: Option<String>,
    /// Every write carries these bytes, repeated over it (fio's buffer_pattern: 0xdeadbeef,
    /// "a string", a decimal number, or several one after another) [default: random]
    #[arg(long, value_name = "PATTERN", value_parser = crate::workload::pattern::BufferPattern::parse)]
    pub buffer_pattern: Option<crate::workload::pattern::BufferPattern>,

    /// Reporting interval for the live line and the JSON time series.
    #[arg(long, default_value = "1s", value_name = "DURATION", value_parser = parse_positive_duration)]
    pub interval: Duration,

    /// How often to read the drive's SMART / Health log during the run (also read before and after
    /// it); at least 100ms; `off` or `0` reads none.
    #[arg(long, default_value = "1s", value_name = "DURATION", value_parser = crate::telemetry::TelemetryInterval::parse)]
    pub telemetry_interval: crate::telemetry::TelemetryInterval,

    /// Latency accounting: total (each I/O stamped at issue and completion, one histogram per
    /// direction, fio's lat), split (also fio's slat, to the return of the submit call that sent
    /// it, one clock read per batch, and clat, from there to completion) or off (no stamps: I/Os
    /// counted, latency not measured; SPDK perf without -L still stamps each I/O for its mean)
    /// [default: split with a job file or fio-shaped output (fio's default), else total]
    #[arg(long, value_name = "MODE", value_parser = PossibleValuesParser::new(LatencyMode::NAMES).map(|s| LatencyMode::parse(&s).expect("a listed name")))]
    pub latency: Option<LatencyMode>,

    /// Latency percentiles to report.
    #[arg(long, default_value = "50,90,99,99.9,99.99,99.999", value_name = "LIST", value_parser = parse_percentiles)]
    pub percentiles: Percentiles,

    /// Output on stdout.
    #[arg(long, default_value = "text", value_parser = PossibleValuesParser::new(OutputFormat::NAMES).map(|s| OutputFormat::parse(&s).expect("a listed name")))]
    pub output: OutputFormat,

    /// Also write the full JSON result (with histograms) to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// What an I/O error does: stop, continue, continue:TYPES (fio's continue_on_error: go on only
    /// after errors of these types, read, write or verify, each with =ERRNO:ERRNO if not EIO and
    /// EILSEQ, as in continue:read,write=ENOSPC; any other error stops), or retry:N (retry each
    /// failed I/O up to N times).
    #[arg(long, default_value = "stop", value_name = "POLICY", value_parser = OnError::parse)]
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

    /// The live line on stderr (elapsed/total, ETA, IOPS, MB/s, p99, errors): auto draws it when
    /// stderr is a terminal.
    #[arg(long, value_enum, default_value = "auto", value_name = "WHEN")]
    pub progress: ProgressMode,

    /// Print a plain status line on stderr every DURATION instead of the live line, for logs and CI.
    #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration)]
    pub status_interval: Option<Duration>,

    /// Every column in the text table (MiB/s, I/O count, min, stddev, every percentile); without it
    /// the table fits 100 columns.
    #[arg(long)]
    pub wide: bool,

    /// Verify data: every written block carries a header and a payload derived from it; reads are
    /// checked, and everything written is re-read after the run. Mismatches exit with status 1.
    /// (fio's `--verify=METHOD` is taken as this, with a note.)
    #[arg(long, num_args = 0..=1, require_equals = true, default_value_t = false, default_missing_value = "true",
          action = clap::ArgAction::Set)]
    pub verify: bool,

    /// With --verify: load what an earlier verified run left (if FILE exists) and save what this one
    /// leaves, so a later run (e.g. after a power cycle) checks the data. With several targets the
    /// file holds a section per target, keyed by its path (or SPDK transport ID).
    #[arg(long, value_name = "FILE")]
    pub verify_state: Option<PathBuf>,

    /// Start the workers at this UNIX time (seconds, fractions allowed), so that processes on
    /// several hosts start together; the wait comes after set-up.
    #[arg(long, value_name = "UNIX_TIME", value_parser = parse_unix_time, conflicts_with = "start_delay")]
    pub start_at: Option<SystemTime>,

    /// Start the workers this long after the command starts.
    #[arg(long, value_name = "DURATION", value_parser = units::parse_duration)]
    pub start_delay: Option<Duration>,

    #[command(flatten)]
    pub fleet: FleetArgs,

    #[command(flatten)]
    pub spdk: SpdkArgs,

    #[command(flatten)]
    pub fio: FioArgs,
}

/// One process of a fleet: many processes, started by a launcher (srun, mpirun, a Kubernetes
/// Indexed Job, pdsh), gated together and gathered through a directory they all reach.
#[derive(Clone, Debug, Default, Args)]
#[command(next_help_heading = "Fleets")]
pub struct FleetArgs {
    /// Run as one process of a fleet that meets in DIR, a directory every process reaches (a shared
    /// filesystem or volume): every process sets up and announces itself there, rank 0 picks the
    /// start moment, all open their gates at it, and rank 0 merges every result into DIR/fleet.json.
    /// The rank and size come from the launcher (Slurm, Open MPI, MPICH/Intel MPI's PMI, PMIx,
    /// Kubernetes) or from --rank and --fleet-size.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["start_at", "start_delay"])]
    pub fleet: Option<PathBuf>,

    /// This process's rank in the fleet, 0 to --fleet-size minus 1, where no launcher says it (pdsh,
    /// ssh loops); it overrides the launcher's.
    #[arg(long, value_name = "R", requires_all = ["fleet", "fleet_size"])]
    pub rank: Option<u64>,

    /// How many processes the fleet has, where the launcher does not say it (with --rank, a
    /// Kubernetes Indexed Job's JOB_COMPLETION_INDEX, PMIx's PMIX_RANK).
    #[arg(long, value_name = "N", requires = "fleet")]
    pub fleet_size: Option<u64>,

    /// How long rank 0 waits for the others to announce themselves, and for their results past the
    /// planned end; the others wait twice as long for rank 0's start moment [default: 60s]
    #[arg(long, value_name = "DURATION", requires = "fleet", value_parser = parse_positive_duration)]
    pub fleet_timeout: Option<Duration>,

    /// How far ahead rank 0 sets the start moment once all have announced: enough for every process
    /// to see it on the shared filesystem [default: 2s]
    #[arg(long, value_name = "DURATION", requires = "fleet", value_parser = parse_positive_duration)]
    pub fleet_lead: Option<Duration>,
}

/// fio's job files, per-job values and output formats. fio's other spellings (`--iodepth=8`,
/// `--ioengine=io_uring`, `--direct=1`, `--rwmixwrite`, `--bsrange`, `--percentile_list=99:99.9`, ...)
/// are translated before parsing (`fio::argv`); docs/fio.md lists them all.
#[derive(Clone, Debug, Default, Args)]
#[command(next_help_heading = "fio compatibility")]
pub struct FioArgs {
    /// A fio job file to run: [global] and job sections, run one after another at stonewall and
    /// together otherwise. Its options replace the workload flags.
    #[arg(value_name = "JOBFILE")]
    pub job_file: Option<PathBuf>,

    /// Run only this job-file section (repeatable).
    #[arg(long, value_name = "NAME", requires = "job_file")]
    pub section: Vec<String>,

    /// fio's output: `json` writes fio's JSON document (fio's tools read it), `json+` adds the
    /// latency bins, `normal` is the text report. --output json is nvmebench's own, richer document.
    #[arg(long, visible_alias = "output_format", value_name = "FORMAT", value_parser = ["normal", "json", "json+"])]
    pub output_format: Option<String>,

    /// Write the report to this file instead of stdout (fio's --output=FILE is taken as this).
    #[arg(long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,

    /// The job's name in fio-shaped output (changes nothing in the run).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,

    /// Pacing per job and direction, as fio's rate_iops: `1000` paces reads, writes and trims at
    /// 1000 IOPS each per job (`1000,200` reads apart, `,200` writes only), each as bytes per second
    /// at the direction's smallest block size, as fio does; numjobs=J paces J times that.
    #[arg(long = "rate_iops", value_name = "READ[,WRITE[,TRIM]]", value_parser = IopsRate::parse)]
    pub rate_iops_per_job: Option<IopsRate>,

    /// fio's iodepth over a job's files (a job file's `filename=a:b`): the queue depth is each
    /// worker's, shared by the targets it drives, where --qd is per worker and target. Not a flag.
    #[arg(skip)]
    pub iodepth_per_job: bool,

    /// fio's steady state (ss): a criterion and its limit, such as `iops:10%` or `bw_slope:1%`;
    /// the job stops once its last --ss_dur seconds are steady [default with --ss_dur:
    /// iops_slope:0.01%].
    #[arg(long = "ss", value_name = "CRITERION:LIMIT")]
    pub ss: Option<String>,

    /// fio's ss_dur: the steady-state window, in whole seconds (0: no steady state).
    #[arg(long = "ss_dur", value_name = "DURATION", value_parser = units::parse_duration)]
    pub ss_dur: Option<std::time::Duration>,

    /// fio's ss_ramp: steady-state samples start this long after the job's start.
    #[arg(long = "ss_ramp", value_name = "DURATION", value_parser = units::parse_duration)]
    pub ss_ramp: Option<std::time::Duration>,

    /// fio's exitall: when a job of a job file ends, the jobs --exit_what names stop too.
    #[arg(long = "exitall", value_name = "1", value_parser = clap::builder::BoolishValueParser::new())]
    pub exitall: Option<bool>,

    /// fio's exit_what: which jobs a job's end stops under exitall: `group` (its reporting group,
    /// fio's default), `stonewall` (every job running) or `all` (and every job after them).
    #[arg(long = "exit_what", value_name = "group|stonewall|all", value_parser = ["group", "stonewall", "all"])]
    pub exit_what: Option<String>,

    /// fio's zonemode: `strided` (I/O in zones of --zonerange, --zonesize bytes each, --zoneskip
    /// apart) or `none`. fio's default is strided when --zonesize is given.
    #[arg(long = "zonemode", value_name = "none|strided", value_parser = ["none", "strided"])]
    pub zonemode: Option<String>,

    /// fio's zonesize: bytes moved in one zone before the next (zonemode=strided).
    #[arg(long = "zonesize", value_name = "SIZE", value_parser = units::parse_size)]
    pub zonesize: Option<u64>,

    /// fio's zonerange: one zone's span [default: --zonesize].
    #[arg(long = "zonerange", value_name = "SIZE", value_parser = units::parse_size)]
    pub zonerange: Option<u64>,

    /// fio's zoneskip: bytes left out between one zone and the next.
    #[arg(long = "zoneskip", value_name = "SIZE", value_parser = units::parse_size)]
    pub zoneskip: Option<u64>,

    /// fio's log_offset=1: each log line has an offset column (each I/O's; 0 on averaged lines).
    #[arg(long = "log_offset", value_name = "0|1", value_parser = clap::builder::BoolishValueParser::new())]
    pub log_offset: Option<bool>,
    /// Each of the --numjobs workers starts this much after the one before (fio's offset_increment:
    /// worker j's working set is --size from --offset + j × it), a size or a share of the target.
    #[arg(long = "offset_increment", value_name = "SIZE|PCT", value_parser = units::parse_size_or_percent)]
    pub offset_increment: Option<SizeOrPercent>,

    /// I/Os per job, as fio's number_ios (--ios is the total).
    #[arg(long = "number_ios", value_name = "N", value_parser = parse_ios)]
    pub number_ios_per_job: Option<u64>,

    /// Bytes each job moves before it ends, counted at issue as fio counts them: set from a job
    /// file's size (or io_size) when its block sizes vary, where an I/O count would move another
    /// amount. Not a flag.
    #[arg(skip)]
    pub bytes_per_job: Option<u64>,

    /// Cores in fio's or SPDK's syntax (`0-3,8`, `[0-3]`, `0xf`); numjobs workers are pinned to
    /// them in turn (fio would let its jobs float over the set).
    #[arg(long = "cpus_allowed", value_name = "CPUS", value_parser = parse_cpus_allowed)]
    pub cpus_allowed: Option<CoreList>,

    /// fio's bandwidth log: PREFIX_bw.N.log, a line per I/O as fio writes it, or with
    /// --log_avg_msec one per window and direction.
    #[arg(long, visible_alias = "write_bw_log", value_name = "PREFIX")]
    pub write_bw_log: Option<String>,

    /// fio's IOPS log: PREFIX_iops.N.log.
    #[arg(long, visible_alias = "write_iops_log", value_name = "PREFIX")]
    pub write_iops_log: Option<String>,

    /// fio's latency logs: PREFIX_lat.N.log, PREFIX_clat.N.log and, with --latency split,
    /// PREFIX_slat.N.log (ns, per I/O, or the mean per --log_avg_msec window); none for a latency
    /// fio's disable_* turns off.
    #[arg(long, visible_alias = "write_lat_log", value_name = "PREFIX")]
    pub write_lat_log: Option<String>,

    /// fio's per_job_logs: 1 (the default) writes one log per job clone, numbered (PREFIX_bw.N.log);
    /// 0 appends every clone's lines to one PREFIX_bw.log.
    #[arg(long = "per_job_logs", value_name = "0|1", num_args = 0..=1, default_missing_value = "1",
        value_parser = clap::builder::BoolishValueParser::new())]
    pub per_job_logs: Option<bool>,

    /// fio's log_prio: the last column of fio's logs is each I/O's priority in fio's hex form
    /// (0x0000 on averaged lines, as fio writes it on its own).
    #[arg(long = "log_prio", value_name = "0|1", num_args = 0..=1, default_missing_value = "1",
        value_parser = clap::builder::BoolishValueParser::new())]
    pub log_prio: Option<bool>,

    /// Averaging window of the logs in milliseconds (sets --interval). Without it (or with 0, its
    /// default) every I/O has its line in the logs, as in fio.
    #[arg(long, visible_alias = "log_avg_msec", value_name = "MS", value_parser = parse_log_avg)]
    pub log_avg_msec: Option<u64>,

    /// fio's lat_percentiles: fio-shaped JSON gives the percentiles (and json+ bins) under lat_ns
    /// too, as fio does.
    #[arg(long = "lat_percentiles", value_name = "0|1", num_args = 0..=1, default_missing_value = "1",
        value_parser = clap::builder::BoolishValueParser::new())]
    pub lat_percentiles: Option<bool>,

    /// fio's group_reporting: fio-shaped JSON sums the job's clones (numjobs) into one entry, as
    /// fio does; without it each clone has its own entry.
    #[arg(long = "group_reporting", value_name = "0|1", num_args = 0..=1, default_missing_value = "1",
        value_parser = clap::builder::BoolishValueParser::new())]
    pub group_reporting: Option<bool>,

    /// fio's disable_slat=1: fio-shaped JSON writes slat_ns as fio's zeros, and no slat log.
    #[arg(long = "disable_slat", value_name = "0|1", value_parser = clap::builder::BoolishValueParser::new())]
    pub disable_slat: Option<bool>,

    /// fio's disable_clat=1: no clat_ns (fio's zeros), no sync latency, no latency_ns/us/ms
    /// shares, no clat log. fio's gtod_reduce=1 is the three disable_* options together.
    #[arg(long = "disable_clat", value_name = "0|1", value_parser = clap::builder::BoolishValueParser::new())]
    pub disable_clat: Option<bool>,

    /// fio's disable_bw=1 (disable_bw_measurement): the per-I/O bandwidth log has no lines, as
    /// fio's (fio 3.33 still samples bandwidth for its JSON and averaged logs, and so does this).
    #[arg(long = "disable_bw", value_name = "0|1", value_parser = clap::builder::BoolishValueParser::new())]
    pub disable_bw: Option<bool>,

    /// fio's disable_lat=1: fio-shaped JSON writes lat_ns as fio's zeros, and no lat log.
    #[arg(long = "disable_lat", value_name = "0|1", value_parser = clap::builder::BoolishValueParser::new())]
    pub disable_lat: Option<bool>,

    /// fio's latency_target: each worker starts at depth 1 and searches for the deepest queue
    /// depth, up to --qd, at which --latency_percentile of each window's I/Os take at most this
    /// long (total latency; a number without a unit is microseconds, as fio reads it).
    #[arg(long = "latency_target", value_name = "TIME", value_parser = parse_fio_micros)]
    pub latency_target: Option<Duration>,

    /// fio's latency_window: how long each depth runs before it is judged [default: 0, every pass].
    #[arg(long = "latency_window", value_name = "TIME", value_parser = parse_fio_micros)]
    pub latency_window: Option<Duration>,

    /// fio's latency_percentile: the share of a window's I/Os that must meet --latency_target
    /// [default: 100].
    #[arg(long = "latency_percentile", value_name = "PCT", value_parser = parse_latency_percentile)]
    pub latency_percentile: Option<f64>,

    /// fio's latency_run=1: keep adjusting the depth once the search settles; with 0 (the
    /// default) the job ends after one more window at the depth found.
    #[arg(long = "latency_run", value_name = "0|1", value_parser = clap::builder::BoolishValueParser::new())]
    pub latency_run: Option<bool>,
}

impl FioArgs {
    /// The logs' averaging window, if one is given: `log_avg_msec=0` is fio's default (no
    /// averaging) written out, and nvmebench then logs every I/O as without it.
    pub fn log_avg_window(&self) -> Option<u64> {
        self.log_avg_msec.filter(|&ms| ms > 0)
    }

    /// Whether a log is asked for without an averaging window: fio then logs every I/O (its
    /// `per_unit_log`).
    pub fn per_io_log(&self) -> bool {
        let any = self.write_bw_log.is_some() || self.write_iops_log.is_some() || self.write_lat_log.is_some();
        any && self.log_avg_window().is_none()
    }

    /// The first fio-only flag given, as typed, for commands that do not take it.
    pub fn first_given(&self) -> Option<&'static str> {
        [
            (self.job_file.is_some(), "a job file"),
            (self.output_format.is_some(), "--output-format"),
            (self.output_file.is_some(), "--output-file"),
            (self.write_bw_log.is_some(), "--write_bw_log"),
            (self.write_iops_log.is_some(), "--write_iops_log"),
            (self.write_lat_log.is_some(), "--write_lat_log"),
            (self.log_avg_msec.is_some(), "--log_avg_msec"),
            (self.per_job_logs.is_some(), "--per_job_logs"),
            (self.lat_percentiles.is_some(), "--lat_percentiles"),
            (self.latency_target.is_some(), "--latency_target"),
        ]
        .into_iter()
        .find_map(|(given, what)| given.then_some(what))
    }

    /// The fio latencies the job keeps: all three unless `disable_slat`, `disable_clat` or
    /// `disable_lat` (or `gtod_reduce`, which is the three) turns one off.
    pub fn fio_latencies(&self) -> FioLatencies {
        let kept = |disabled: Option<bool>| !disabled.unwrap_or(false);
        FioLatencies { slat: kept(self.disable_slat), clat: kept(self.disable_clat), lat: kept(self.disable_lat) }
    }

    /// Whether fio takes no time stamps at a completion (io_u.c's `gtod_reduce`: clat, slat and
    /// bandwidth all off, as `gtod_reduce=1` sets them): then its per-I/O IOPS log has no lines.
    pub fn fio_reduce(&self) -> bool {
        let on = |o: Option<bool>| o.unwrap_or(false);
        on(self.disable_clat) && on(self.disable_slat) && on(self.disable_bw)
    }

    /// Whether fio adds a per-I/O line to the bandwidth or IOPS log (`account_io_completion`): a
    /// per-I/O log of either, with bandwidth measured, or without `fio_reduce` respectively.
    pub fn per_io_rate_log(&self) -> bool {
        self.per_io_log()
            && (self.write_bw_log.is_some() && !self.disable_bw.unwrap_or(false)
                || self.write_iops_log.is_some() && !self.fio_reduce())
    }

    /// Whether fio-shaped JSON is asked for (`json` or `json+`).
    pub fn fio_json(&self) -> bool {
        self.output_format.as_deref().is_some_and(|f| f.starts_with("json"))
    }
}

/// A time as fio reads its microsecond options: a bare number is microseconds; `Nns` is exact.
fn parse_fio_micros(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse().map(Duration::from_micros).map_err(|_| format!("'{text}' is too long a time"));
    }
    if let Some(ns) = t.strip_suffix("ns").filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) {
        return ns.parse().map(Duration::from_nanos).map_err(|_| format!("'{text}' is too long a time"));
    }
    units::parse_duration(t)
}

fn parse_latency_percentile(text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|p| (0.0..=100.0).contains(p))
        .ok_or_else(|| format!("'{text}' is not a percentage; write a number from 0 to 100, as 99.9"))
}

fn parse_cpus_allowed(text: &str) -> Result<CoreList, String> {
    units::parse_cpus(text).map(CoreList)
}

fn parse_log_avg(text: &str) -> Result<u64, String> {
    // 0 is fio's default, no averaging, spelled out: taken (see `FioArgs::log_avg_window`).
    whole_in(text, 0, 3_600_000, "an averaging window in milliseconds")
}

/// Options of SPDK's environment and controllers, in SPDK perf's terms: what attaching needs
/// (`run`, `suite`, `compare`, and `devices`, which takes nothing else).
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "SPDK engine")]
pub struct SpdkEnvArgs {
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

    /// Show SPDK's own log messages on stderr at this level [default: none]
    #[arg(long, value_parser = ["error", "warn", "notice", "info", "debug"])]
    pub spdk_log: Option<String>,
}

/// Options of the SPDK engine (`--engine spdk`): the environment's, and those of a run's queue
/// pairs and fault injection.
///
/// It dereferences to its [`SpdkEnvArgs`], so that `args.spdk.trids` reads the same whether or not a
/// command takes the run's options too.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "SPDK engine")]
pub struct SpdkArgs {
    #[command(flatten)]
    pub env: SpdkEnvArgs,

    /// I/O queue entries per queue pair [default: the most the controller allows]
    #[arg(long, value_name = "N", value_parser = parse_io_queue_size)]
    pub io_queue_size: Option<u32>,

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

    /// How workers poll their queue pairs: `perf` as SPDK perf does (back to back, each poll
    /// reaping as many completions as SPDK allows: over PCIe and vfio-user a quarter of the queue's
    /// entries, at most 128), or `tuned` (half the queue depth per poll, over a fabric a sixteenth
    /// more, and over PCIe and vfio-user 100ns between a poll that found nothing and the next)
    /// [default: perf over PCIe and vfio-user; tuned over a fabric]
    #[arg(long, value_name = "POLICY", value_enum)]
    pub poll_policy: Option<PollPolicyArg>,

    /// Completions reaped per poll at most, over the policy's (SPDK caps it at its own bound);
    /// their successors go to the controller when the poll returns, so a bound below the depth
    /// overlaps the controller's work with the worker's
    #[arg(long, value_name = "N", value_parser = parse_qd)]
    pub max_completions: Option<u32>,

    /// Ring a queue pair's submission doorbell once per poll for every command queued since the
    /// last one (`on`, SPDK's delay_cmd_submit, as SPDK perf runs) or with every command (`off`)
    #[arg(long, value_name = "WHEN", value_enum, default_value_t = DelaySubmit::On)]
    pub delay_cmd_submit: DelaySubmit,

    /// After a poll that found nothing while more than one command is outstanding, spin this long
    /// before polling again, over the policy's, so the worker reads the controller's completion
    /// queue less often while it is being written (0: poll back to back; at most 10us)
    #[arg(long, value_name = "DURATION", value_parser = parse_poll_gap)]
    pub poll_gap: Option<Duration>,
}

/// `--poll-policy`: how the SPDK engine's workers poll.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PollPolicyArg {
    /// As SPDK perf: back to back, SPDK's own cap on completions per poll.
    Perf,
    /// Half the queue depth per poll (a sixteenth more over a fabric), 100ns after an empty poll
    /// where the queues are memory.
    Tuned,
}

/// `--delay-cmd-submit`: when the SPDK engine rings the submission doorbell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum DelaySubmit {
    /// Once per poll, for every command queued since the last one.
    #[default]
    On,
    /// With every command.
    Off,
}

impl std::ops::Deref for SpdkArgs {
    type Target = SpdkEnvArgs;
    fn deref(&self) -> &SpdkEnvArgs {
        &self.env
    }
}

impl std::ops::DerefMut for SpdkArgs {
    fn deref_mut(&mut self) -> &mut SpdkEnvArgs {
        &mut self.env
    }
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
            (self.poll_policy.is_some(), "--poll-policy"),
            (self.max_completions.is_some(), "--max-completions"),
            (self.delay_cmd_submit != DelaySubmit::On, "--delay-cmd-submit"),
            (self.poll_gap.is_some(), "--poll-gap"),
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

    /// I/O engine, as for `run` (uring, uring-cmd, aio, posixaio, psync, null, null:lat=DURATION, or spdk
    /// with --trid).
    #[arg(long, default_value = "uring", value_name = "ENGINE")]
    pub engine: String,

    /// File or block device (without it: the null engine needs none, spdk takes --trid, others
    /// refuse). Repeat it, or give fio's `:`-separated list, for several targets: every step runs
    /// on all of them at once (every worker on every target) and records each target's figures.
    #[arg(long, visible_alias = "target", value_name = "PATH")]
    pub filename: Vec<PathBuf>,

    /// Capacity to test (bytes or % of the target); creates a missing file. Scaled-down sizes make
    /// preconditioning quick.
    #[arg(long, value_name = "SIZE|PCT", value_parser = units::parse_size_or_percent)]
    pub size: Option<SizeOrPercent>,

    /// Share of the capacity the profiles' steps use, after preconditioning fills all of it.
    #[arg(long, value_name = "PCT", value_parser = parse_working_set)]
    pub working_set: Option<f64>,

    /// Threads (workers) of each step, for streams that follow the suite's count.
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

    /// Length of each steady-state round [default: --time]
    #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration)]
    pub round_time: Option<Duration>,

    /// Steady-state rounds at most.
    #[arg(long, default_value = "25", value_name = "N", value_parser = parse_rounds)]
    pub max_rounds: u32,

    /// Block sizes below the device's logical block size: round them up, or reject the profile.
    #[arg(long, default_value = "round", value_parser = PossibleValuesParser::new(SmallBlocks::NAMES).map(|s| SmallBlocks::parse(&s).expect("a listed name")))]
    pub small_bs: SmallBlocks,

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

/// At least one round; the suite asks for a whole steady-state window (its methodology).
fn parse_rounds(text: &str) -> Result<u32, String> {
    whole_in(text, 1, 1000, "a round count")
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

fn parse_think_blocks(text: &str) -> Result<u32, String> {
    whole_in(text, 1, u32::MAX, "a block count")
}

fn parse_seed(text: &str) -> Result<u64, String> {
    whole_in(text, 0, u64::MAX, "a seed")
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

fn parse_poll_gap(text: &str) -> Result<Duration, String> {
    let d = units::parse_duration(text)?;
    if d > Duration::from_micros(10) {
        return Err(format!("'{text}' is longer than 10us; a gap between polls is meant in nanoseconds, like 100ns"));
    }
    Ok(d)
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
        .and_then(|v| {
            // Two equal columns in the text and one key in the JSON would disagree.
            match v.iter().enumerate().find(|&(i, p)| v[..i].contains(p)) {
                Some((_, p)) => {
                    Err(format!("percentile {p} is listed twice; list each percentile once, like 50,99,99.9"))
                }
                None => Ok(Percentiles(v)),
            }
        })
}

/// A size with an optional sign: `8k`, `-8k`.
fn parse_signed_size(text: &str) -> Result<i64, String> {
    let (sign, abs) = match text.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, text),
    };
    let bytes = units::parse_size(abs)?;
    i64::try_from(bytes).map(|b| sign * b).map_err(|_| format!("'{text}' is too large a size"))
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
        assert_eq!(a.filename, [PathBuf::from("/dev/x")]);
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

//! The validated, resolved run: every default applied, every size in bytes, every check made.
//!
//! `RunConfig::resolve` turns raw flags and an inspected target into a configuration that cannot
//! fail later for a reason the user could have been told up front. It reads the target (sysfs, mount
//! tables) but writes nothing: creating a missing file happens only after resolution succeeds.

pub mod clash;
pub mod fault;

use crate::cli::RunArgs;
use crate::engine::aio::AioOptions;
use crate::engine::null::NullOptions;
use crate::engine::ring::Toggle;
use crate::engine::uring::UringOptions;
use crate::engine::uring_cmd;
use crate::io::Direction;
use crate::options::{LatencyMode, LatencyTarget, OnError, OutputFormat};
use crate::target::{PollSupport, Target, TargetError, TargetKind};
use crate::units::{self, SizeOrPercent, format_size};
use crate::verify::{GenTable, VerifyState};
use crate::workload::bssplit::BsSplit;
use crate::workload::contents::{BufferContents, DedupeMode};
use crate::workload::dist::RandomDist;
use crate::workload::prio::{CmdPrioOptions, PrioSpec, resolve as resolve_priorities};
use crate::workload::rate::{PaceSpec, RateProcess, ThinkCount, ThinkTime};
use crate::workload::{Mix, RwMode, StridedZones, WorkloadSpec};
use clash::Clash;
use fault::Fault;
use serde::{Serialize, Serializer};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// Default measured time when a target is given.
pub const DEFAULT_RUNTIME: Duration = Duration::from_secs(10);
/// Default measured time of the built-in scratch-file run.
pub const SCRATCH_RUNTIME: Duration = Duration::from_secs(5);
/// Size of the built-in scratch file.
pub const SCRATCH_BYTES: u64 = 256 << 20;
/// Size of the null engine's virtual device when no target is given.
pub const NULL_DEVICE_BYTES: u64 = 1 << 40;
/// Default block size, as in fio.
pub const DEFAULT_BS: u32 = 4096;
/// Default read share of mixed patterns, as in fio.
pub const DEFAULT_RWMIXREAD: u32 = 50;
/// The furthest ahead `--start-at` and `--start-delay` may lie: beyond it, a typo (milliseconds for
/// seconds) is likelier than a plan.
pub const MAX_START_AHEAD: Duration = Duration::from_secs(24 * 3600);
/// The engine used when `--engine` is not given.
pub const DEFAULT_ENGINE: &str = "uring";
/// Largest submit/reap batch (io_uring's largest ring).
const MAX_BATCH: u32 = 65536;

/// Default seed: fixed, so that two runs issue the same offsets unless told otherwise (fio's
/// randrepeat=1).
pub const DEFAULT_SEED: u64 = 0x6e76_6d65_6265_6e63;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(
        "--engine '{0}' is not an engine; use uring, uring-cmd, aio, posixaio, psync, null, null:lat=DURATION or spdk"
    )]
    UnknownEngine(String),
    #[error("{0}: not compiled in; build with --features {0}")]
    NotCompiledIn(&'static str),
    #[error("{0}")]
    Engine(String),
    #[error("--engine '{spec}': {problem}")]
    EngineOption { spec: String, problem: String },
    #[error("--{option}: {message}")]
    Invalid { option: &'static str, message: String },
    /// Two options that do not go together (typed, so a fio job file can name its own options).
    #[error(transparent)]
    Clash(#[from] Clash),
    /// One option whose value cannot run here (typed for the same reason).
    #[error(transparent)]
    Fault(#[from] Fault),
    #[error("cannot find the cores this process may run on; pass --cores explicitly")]
    NoCores,
    #[error(
        "{part} is a partition of {disk}, which is also a target, so their blocks overlap; give the disk or its partition, not both"
    )]
    PartitionOfTarget { part: String, disk: String },
    #[error("{path} does not support {what}; drop the {dir} share or run on a target that supports it")]
    Unsupported { path: String, what: &'static str, dir: &'static str },
    #[error(
        "{path} is on {fs}, which cannot {what}; put the file on a filesystem that can ({can}), or run without {ops}"
    )]
    FileSystemCannot { path: String, fs: String, what: &'static str, can: &'static str, ops: &'static str },
    #[error(transparent)]
    Target(#[from] TargetError),
}

/// Which engine, with its options.
#[derive(Clone, Debug, PartialEq)]
pub enum EngineSpec {
    Null(NullOptions),
    Uring(UringOptions),
    /// SPDK's userspace NVMe driver; its options come from the `--trid` and SPDK flags.
    Spdk(SpdkMode),
    /// NVMe passthrough through io_uring on `/dev/ngXnY`; the same ring knobs as `uring`.
    UringCmd(UringOptions),
    Aio(AioOptions),
    /// fio's posixaio: `aio_read`/`aio_write` of the C library, `iodepth` in flight.
    PosixAio,
    Psync,
    /// fio's falloc: each I/O a `fallocate` on a regular file, one at a time.
    Falloc,
    /// fio's ftruncate: each write an `ftruncate` to its offset, one at a time.
    Ftruncate,
}

impl EngineSpec {
    /// Parses `NAME[:KEY=VALUE,...]`.
    pub fn parse(text: &str) -> Result<EngineSpec, ConfigError> {
        let (name, opts) = match text.split_once(':') {
            Some((n, o)) => (n, o),
            None => (text, ""),
        };
        let opt_err = |problem: String| ConfigError::EngineOption { spec: text.into(), problem };
        let pairs = opts.split(',').filter(|s| !s.is_empty()).map(|kv| match kv.split_once('=') {
            Some((k, v)) => (k.trim(), v.trim()),
            None => (kv.trim(), "1"),
        });
        let flag = |k: &str, v: &str| match v {
            "1" | "on" | "true" => Ok(true),
            "0" | "off" | "false" => Ok(false),
            _ => Err(opt_err(format!("{k}={v} is not on or off; write {k}=1 or {k}=0"))),
        };
        match name {
            "null" => {
                let mut o = NullOptions::default();
                for (k, v) in pairs {
                    match k {
                        "lat" => o.service_time = units::parse_duration(v).map_err(&opt_err)?,
                        _ => return Err(opt_err(format!("unknown option '{k}'; the null engine takes lat=DURATION"))),
                    }
                }
                Ok(EngineSpec::Null(o))
            }
            "uring" | "io_uring" | "uring-cmd" | "io_uring_cmd" => {
                let mut o = UringOptions::default();
                let toggle = |k: &str, v: &str| flag(k, v).map(|on| if on { Toggle::On } else { Toggle::Off });
                let count = |k: &str, v: &str| {
                    v.parse::<u32>().ok().filter(|n| (1..=MAX_BATCH).contains(n)).ok_or_else(|| {
                        opt_err(format!("{k}={v} is not a batch size; use a whole number from 1 to {MAX_BATCH}"))
                    })
                };
                for (k, v) in pairs {
                    match k {
                        "poll" | "hipri" | "iopoll" => o.ring.iopoll = flag(k, v)?,
                        "sqpoll" | "sqthread_poll" => o.ring.sqpoll = flag(k, v)?,
                        "sqpoll_cpu" | "sqthread_poll_cpu" => {
                            o.ring.sqpoll = true;
                            o.ring.sqpoll_cpu = Some(
                                v.parse()
                                    .map_err(|_| Fault::SqpollCpuNotACore { spec: text.into(), value: v.into() })?,
                            );
                        }
                        "sqpoll_idle" => {
                            let d = units::parse_duration(v).map_err(&opt_err)?;
                            o.ring.sqpoll_idle_ms = u32::try_from(d.as_millis())
                                .map_err(|_| opt_err(format!("sqpoll_idle={v} is too long; use at most 49 days")))?;
                        }
                        "fixedbufs" => o.fixed_buffers = flag(k, v)?,
                        "regfile" | "registerfiles" => o.registered_file = flag(k, v)?,
                        "regring" => o.ring.registered_ring = toggle(k, v)?,
                        "single_issuer" => o.ring.single_issuer = toggle(k, v)?,
                        "defer_taskrun" => o.ring.defer_taskrun = toggle(k, v)?,
                        "coop_taskrun" => o.ring.coop_taskrun = toggle(k, v)?,
                        "submit_batch" => o.ring.submit_batch = count(k, v)?,
                        "reap_batch" => o.ring.reap_batch = count(k, v)?,
                        "reap_max" => o.ring.reap_max = Some(count(k, v)?),
                        "submit_max" => o.ring.submit_max = Some(count(k, v)?),
                        _ => {
                            return Err(opt_err(format!(
                                "unknown option '{k}'; the {name} engine takes poll, sqpoll, sqpoll_cpu=N, sqpoll_idle=DURATION, \
                                 fixedbufs, regfile, regring, single_issuer, defer_taskrun, coop_taskrun (each =0 or =1), \
                                 submit_batch=N, reap_batch=N, reap_max=N and submit_max=N"
                            )));
                        }
                    }
                }
                if let Some(problem) = o.ring.conflict() {
                    return Err(opt_err(problem.into()));
                }
                Ok(if name.starts_with("uring-cmd") || name == "io_uring_cmd" {
                    EngineSpec::UringCmd(o)
                } else {
                    EngineSpec::Uring(o)
                })
            }
            "spdk" if cfg!(feature = "spdk") => {
                let mut mode = SpdkMode::Polled;
                for (k, v) in pairs {
                    match k {
                        "interrupt" if flag(k, v)? => mode = SpdkMode::Interrupt,
                        "interrupt" => mode = SpdkMode::Polled,
                        _ => {
                            return Err(opt_err(format!(
                                "unknown option '{k}'; the spdk engine takes interrupt (spdk:interrupt), and its other options as flags (--trid, --io-queue-size, ...)"
                            )));
                        }
                    }
                }
                Ok(EngineSpec::Spdk(mode))
            }
            "spdk" => Err(ConfigError::NotCompiledIn("spdk")),
            "aio" | "libaio" => {
                let mut o = AioOptions::default();
                for (k, v) in pairs {
                    match k {
                        "reap_max" => {
                            o.reap_max = Some(
                                v.parse::<u32>().ok().filter(|n| (1..=MAX_BATCH).contains(n)).ok_or_else(|| {
                                    opt_err(format!(
                                        "{k}={v} is not a batch size; use a whole number from 1 to {MAX_BATCH}"
                                    ))
                                })?,
                            )
                        }
                        _ => return Err(opt_err(format!("unknown option '{k}'; the {name} engine takes reap_max=N"))),
                    }
                }
                Ok(EngineSpec::Aio(o))
            }
            "posixaio" | "psync" | "falloc" | "ftruncate" => {
                if let Some((k, _)) = pairs.into_iter().next() {
                    return Err(opt_err(format!("unknown option '{k}'; the {name} engine takes no options")));
                }
                Ok(match name {
                    "posixaio" => EngineSpec::PosixAio,
                    "psync" => EngineSpec::Psync,
                    "falloc" => EngineSpec::Falloc,
                    _ => EngineSpec::Ftruncate,
                })
            }
            _ => Err(ConfigError::UnknownEngine(text.into())),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            EngineSpec::Null(_) => "null",
            EngineSpec::Uring(_) => "uring",
            EngineSpec::Spdk(SpdkMode::Polled) => "spdk",
            EngineSpec::Spdk(SpdkMode::Interrupt) => "spdk:interrupt",
            EngineSpec::UringCmd(_) => "uring-cmd",
            EngineSpec::Aio(_) => "aio",
            EngineSpec::PosixAio => "posixaio",
            EngineSpec::Psync => "psync",
            EngineSpec::Falloc => "falloc",
            EngineSpec::Ftruncate => "ftruncate",
        }
    }

    /// Whether the engine completes I/O by polling the device (IOPOLL).
    pub fn polled(&self) -> bool {
        matches!(self, EngineSpec::Uring(o) | EngineSpec::UringCmd(o) if o.ring.iopoll)
    }

    /// Whether it is the SPDK engine, polled or interrupt-driven.
    pub fn is_spdk(&self) -> bool {
        matches!(self, EngineSpec::Spdk(_))
    }

    /// Whether the engine touches a target at all.
    pub fn needs_target(&self) -> bool {
        !matches!(self, EngineSpec::Null(_))
    }

    /// Whether the engine's I/O can go through the page cache (`--buffered`): the kernel engines
    /// that read and write a file; passthrough commands and SPDK bypass it, null has none.
    pub fn has_page_cache(&self) -> bool {
        matches!(
            self,
            EngineSpec::Psync
                | EngineSpec::Falloc
                | EngineSpec::Ftruncate
                | EngineSpec::Aio(_)
                | EngineSpec::PosixAio
                | EngineSpec::Uring(_)
        )
    }

    /// Whether the engine makes one synchronous call per I/O, so one I/O is in flight per worker
    /// whatever the queue depth asked.
    pub fn synchronous(&self) -> bool {
        matches!(self, EngineSpec::Psync | EngineSpec::Falloc | EngineSpec::Ftruncate)
    }

    /// Whether each I/O changes a file's allocation or length rather than moving data (fio's falloc
    /// and ftruncate): these run on regular files only.
    pub fn file_calls(&self) -> bool {
        matches!(self, EngineSpec::Falloc | EngineSpec::Ftruncate)
    }
}

/// How the SPDK engine learns of completions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpdkMode {
    /// By polling its queue pairs (`spdk`), as SPDK perf does by default.
    Polled,
    /// By sleeping until a queue pair's interrupt (`spdk:interrupt`, SPDK perf's `-E`): SPDK's
    /// `enable_interrupts` controller option, PCIe only.
    Interrupt,
}

impl Serialize for EngineSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

fn secs<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

fn opt_unix_s<S: Serializer>(t: &Option<SystemTime>, s: S) -> Result<S::Ok, S::Error> {
    match t.and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok()) {
        Some(d) => s.serialize_some(&d.as_secs_f64()),
        None => s.serialize_none(),
    }
}

/// The start time asked for by `--start-at` or `--start-delay`, checked against `now`.
fn resolve_start(args: &RunArgs, now: SystemTime) -> Result<Option<SystemTime>, ConfigError> {
    let (option, at) = match (args.start_at, args.start_delay) {
        (Some(at), _) => ("start-at", at),
        (None, Some(delay)) => ("start-delay", now + delay),
        (None, None) => return Ok(None),
    };
    let shown = |t: SystemTime| t.duration_since(SystemTime::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
    match at.duration_since(now) {
        Err(e) => Err(invalid(
            option,
            format!(
                "{} was {:.1} s ago; pick a moment still ahead when every host starts, like $(( $(date +%s) + 15 ))",
                shown(at),
                e.duration().as_secs_f64()
            ),
        )),
        // A delay is not a UNIX time: its advice is its own.
        Ok(ahead) if ahead > MAX_START_AHEAD && args.start_at.is_none() => Err(invalid(
            option,
            format!(
                "{:.1} hours is too long a wait; give at most {} hours",
                ahead.as_secs_f64() / 3600.0,
                MAX_START_AHEAD.as_secs() / 3600
            ),
        )),
        Ok(ahead) if ahead > MAX_START_AHEAD => Err(invalid(
            option,
            format!(
                "{} is {:.1} hours away; give UNIX seconds (date +%s), at most {} hours ahead",
                shown(at),
                ahead.as_secs_f64() / 3600.0,
                MAX_START_AHEAD.as_secs() / 3600
            ),
        )),
        Ok(_) => Ok(Some(at)),
    }
}

fn opt_secs<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_some(&d.as_secs_f64()),
        None => s.serialize_none(),
    }
}

/// How to verify data.
#[derive(Clone, Debug)]
pub struct VerifyConfig {
    /// Bytes per header-carrying unit.
    pub unit: u64,
    /// Where to load and save the generation tables (see `verify::VerifyState`).
    pub state_path: Option<PathBuf>,
    /// Per target (in the run's order), its table loaded from `state_path`, if it had one.
    pub known: Vec<Option<std::sync::Arc<GenTable>>>,
    /// Sections of the state file for targets this run does not drive: written back as they were.
    pub carried: Vec<(String, GenTable)>,
}

impl VerifyConfig {
    /// What keys a target's section in a state file: the target as the run names it.
    pub fn state_key(target: &Target) -> String {
        target.path.display().to_string()
    }
}

/// Largest generation table `--verify` may allocate (4 bytes per unit).
pub const VERIFY_TABLE_MAX_BYTES: u64 = 8 << 30;

/// Checks `--verify` against the engine and workload and loads `--verify-state`; returns the
/// verification set-up and the seed the state was written with.
#[allow(clippy::too_many_arguments)]
fn resolve_verify(
    args: &RunArgs,
    engine: &EngineSpec,
    (bs_read, bs_write, writes): (&BsSplit, &BsSplit, bool),
    align: u64,
    lbs: u64,
    offset: u64,
    size: u64,
    targets: &[Target],
) -> Result<(Option<VerifyConfig>, Option<u64>), ConfigError> {
    if !args.verify {
        // Asked here rather than by the flag's parser: a job file's verify= turns --verify on.
        if args.verify_state.is_some() {
            return Err(invalid(
                "verify-state",
                "keeps what a verified run wrote, and this run verifies nothing; add --verify (or verify= to the job file)".into(),
            ));
        }
        return Ok((None, None));
    }
    if matches!(engine, EngineSpec::Null(_)) {
        return Err(invalid("verify", "the null engine stores nothing to verify; run it on a file or a device".into()));
    }
    // A unit must never straddle two I/Os: the alignment when every size is a multiple of it.
    let all_aligned = bs_read.entries.iter().chain(&bs_write.entries).all(|e| u64::from(e.bytes) % align == 0);
    let unit = if all_aligned { align } else { lbs }.max(512);
    if GenTable::memory_for(size, unit) > VERIFY_TABLE_MAX_BYTES {
        return Err(invalid(
            "verify",
            format!(
                "{} bytes in {unit}-byte units needs {} MiB for its generation table; verify a smaller --size",
                size,
                GenTable::memory_for(size, unit) >> 20
            ),
        ));
    }
    if let Some(p) = &args.verify_state {
        // The state is saved after the run: a path it cannot be saved to is refused before anything
        // is written, not after the data it describes.
        let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
        if !dir.is_dir() {
            return Err(invalid(
                "verify-state",
                format!(
                    "the directory {} does not exist, so {} could not be saved after the run; create it or pick another path",
                    dir.display(),
                    p.display()
                ),
            ));
        }
    }
    let mut known = vec![None; targets.len()];
    let mut carried = Vec::new();
    let mut seed = None;
    if let Some(p) = args.verify_state.as_ref().filter(|p| p.exists()) {
        let state = VerifyState::load(p).map_err(|m| invalid("verify-state", m))?;
        let keys: Vec<String> = targets.iter().map(VerifyConfig::state_key).collect();
        if targets.len() > 1 && state.sections.iter().any(|(k, _)| k.is_none()) {
            return Err(invalid(
                "verify-state",
                format!(
                    "{} holds one target's generations (a run on one target wrote it), and this run has {} targets; run that target alone with it, or start a new state file",
                    p.display(),
                    targets.len()
                ),
            ));
        }
        for (i, key) in keys.iter().enumerate() {
            let Some(t) = state.section(key) else { continue };
            let (start, bytes, u) = t.span();
            if u != unit || start < offset || start + bytes > offset + size {
                let whose = if targets.len() > 1 { format!(" for {key}") } else { String::new() };
                return Err(invalid(
                    "verify-state",
                    format!(
                        "{}{whose} covers bytes {start}..{} in {u}-byte units, not this run's working set ({offset}..{} in {unit}-byte units); use the first run's --offset, --size and block sizes",
                        p.display(),
                        start + bytes,
                        offset + size
                    ),
                ));
            }
            known[i] = Some(std::sync::Arc::new(t.clone()));
        }
        if args.seed.is_some_and(|given| given != state.seed) {
            return Err(invalid(
                "verify-state",
                format!("{} was written with --seed {}; drop --seed or pass that one", p.display(), state.seed),
            ));
        }
        carried =
            state.sections.into_iter().filter_map(|(k, t)| Some((k?, t))).filter(|(k, _)| !keys.contains(k)).collect();
        seed = Some(state.seed);
    }
    if !writes {
        // Nothing written in this run and nothing known from an earlier one: every read would be
        // checked against nothing, and "0 block checks" is not verification.
        if let Some(i) = known.iter().position(Option::is_none) {
            let message = match &args.verify_state {
                Some(p) if p.exists() => format!(
                    "{} has no generations for {}, so its reads have nothing to be checked against; pass the state file written for it, or use a workload that writes",
                    p.display(),
                    VerifyConfig::state_key(&targets[i])
                ),
                _ => "a read-only workload has nothing to check its reads against; pass --verify-state FILE saved by the run that wrote the data, or use a workload that writes".into(),
            };
            return Err(invalid("verify", message));
        }
    }
    Ok((Some(VerifyConfig { unit, state_path: args.verify_state.clone(), known, carried }), seed))
}

/// Supplies the targets of engines that attach devices themselves, given the worker cores.
pub type TargetAttach<'a> = &'a mut dyn FnMut(&[usize]) -> Result<Vec<Target>, ConfigError>;

fn one_or_none(targets: &[Target]) -> bool {
    targets.len() <= 1
}

/// A fully resolved run.
#[derive(Clone, Debug, Serialize)]
pub struct RunConfig {
    pub engine: EngineSpec,
    /// `None` only for the null engine without a target. With several targets, the first.
    pub target: Option<Target>,
    /// Every target, in the order given (the first is `target`); written only when there are
    /// several. SPDK runs have one per selected namespace.
    #[serde(skip_serializing_if = "one_or_none")]
    pub targets: Vec<Target>,
    /// With several targets, every worker drives every target (`--each-worker-all-targets`);
    /// otherwise they are dealt round-robin over the workers.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub each_worker_all_targets: bool,
    /// The target is a scratch file of nvmebench's own, removed after the run.
    pub scratch: bool,
    pub workload: WorkloadSpec,
    /// One worker per entry, pinned to that core.
    pub cores: Vec<usize>,
    pub queue_depth: u32,
    /// `queue_depth` is each worker's in flight over all the targets it drives (fio's `iodepth`
    /// over a job's files), not each worker's per target.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub queue_depth_shared: bool,
    /// fio's latency target: each worker searches for its depth, up to `queue_depth`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<LatencyTarget>,
    #[serde(serialize_with = "opt_secs")]
    pub runtime: Option<Duration>,
    #[serde(serialize_with = "secs")]
    pub ramp: Duration,
    pub ios: Option<u64>,
    /// Bytes each worker thread (fio job clone) moves before it ends, counted at issue (fio's end
    /// by size for a job whose block sizes vary); split over the thread's targets.
    #[serde(skip)]
    pub io_bytes_per_job: Option<u64>,
    pub rate_iops: Option<f64>,
    #[serde(serialize_with = "secs")]
    pub interval: Duration,
    /// `--telemetry-interval`; `None`: no telemetry. The document carries it under `telemetry`.
    #[serde(skip)]
    pub telemetry_interval: Option<Duration>,
    pub percentiles: Vec<f64>,
    /// Which latencies each I/O is measured for (`--latency`; `off`: counted only, none measured).
    pub latency: LatencyMode,
    pub on_error: OnError,
    #[serde(skip)]
    pub output: OutputFormat,
    #[serde(skip)]
    pub json_path: Option<PathBuf>,
    pub allow_destroy: bool,
    #[serde(serialize_with = "secs")]
    pub drain_timeout: Duration,
    #[serde(skip)]
    pub quiet: bool,
    /// Data verification, with `--verify`.
    #[serde(skip)]
    pub verify: Option<VerifyConfig>,
    /// Wall-clock moment the workers start (`--start-at`, or now plus `--start-delay`).
    #[serde(rename = "start_at_unix_s", serialize_with = "opt_unix_s")]
    pub start_at: Option<SystemTime>,
    /// I/O goes through the page cache (`--buffered`, fio's direct=0), on an engine that has one.
    #[serde(skip)]
    pub buffered: bool,
    /// fio's per-I/O logs: a log is asked for without an averaging window (`log_avg_msec` absent
    /// or 0), so each worker records every measured I/O.
    #[serde(skip)]
    pub io_log: bool,
}

impl RunConfig {
    /// Resolves flags against the machine and the target. Writes nothing.
    pub fn resolve(args: &RunArgs) -> Result<RunConfig, ConfigError> {
        RunConfig::resolve_with(args, args.engine.as_deref().unwrap_or(DEFAULT_ENGINE), None)
    }

    /// As [`RunConfig::resolve`], with the engine given apart from the flags (`compare` runs one set
    /// of flags through several engines).
    pub fn resolve_engine(args: &RunArgs, engine_text: &str) -> Result<RunConfig, ConfigError> {
        RunConfig::resolve_with(args, engine_text, None)
    }

    /// As [`resolve_engine`](Self::resolve_engine), with the target supplied by `attach` (given the
    /// worker cores) for engines whose target is not a path: SPDK attaches its controllers there.
    /// `attach` runs only after every flag has been checked that can be checked without the target.
    pub fn resolve_with(
        args: &RunArgs,
        engine_text: &str,
        attach: Option<TargetAttach<'_>>,
    ) -> Result<RunConfig, ConfigError> {
        // Each step may refuse; they run in this order so that the first error is the one reported,
        // the target is attached only after the flag checks, and nothing is written before the last.
        let engine = EngineSpec::parse(engine_text)?;
        check_latency_off(args, false)?;
        check_spdk_flags(args, &engine)?;
        let cores = resolve_cores(args.cores.as_ref().map(|c| &c.0[..]), args.jobs)?;
        let mix = resolve_mix(args)?;
        check_verify_mix(args, &mix)?;
        let [bs_read, bs_write, bs_trim] = resolve_block_sizes(args, &mix)?;
        let (targets, scratch) = resolve_targets(args, &engine, engine_text, attach, &cores)?;
        for t in &targets {
            check_operations(t, &mix)?;
        }
        let buffered = args.buffered && engine.has_page_cache();
        let geometry = Geometry::of(&targets, !buffered);
        let (align, max_bs) = resolve_align(args, &geometry, &mix, [&bs_read, &bs_write, &bs_trim])?;
        let (offset, size) = resolve_range(args, &geometry, max_bs, align)?;
        let clone_step = resolve_clone_step(args, &geometry, align, offset, size, cores.len())?;
        check_zones_fit(args, align, size)?;
        let writes = mix.destroys();
        let (verify, state_seed) =
            resolve_verify(args, &engine, (&bs_read, &bs_write, writes), align, geometry.lbs, offset, size, &targets)?;
        let random_map = random_map(args, align, [&bs_read, &bs_write, &bs_trim], &mix);
        let latency = resolve_latency(args);
        let bs_write_min = bs_write.min_bytes();
        let workload = WorkloadSpec {
            rw: args.rw,
            mix,
            bs_read,
            bs_write,
            bs_trim,
            align_bytes: align,
            range_start: offset,
            range_bytes: size,
            random_dist: args.random_dist,
            random_map,
            seq_add_bytes: resolve_seq_add(args, size)?,
            zones: resolve_zones(args, targets.len(), geometry.total)?,
            clone_step_bytes: clone_step,
            seed: args.seed.or(state_seed).unwrap_or(DEFAULT_SEED),
            pacing: resolve_pacing(args, &mix)?,
            buffers: resolve_buffers(args, writes, size, bs_write_min, (cores.len(), targets.len()))?,
            prio: resolve_prio(args, &engine, &mix)?,
            buffer_pattern: resolve_pattern(args, writes)?,
        };
        for t in &targets {
            check_writes_allowed(args, Some(t), &workload)?;
        }
        check_sqpoll_cpu(&engine, engine_text)?;
        // pread/pwrite (fallocate, ftruncate) are synchronous: one I/O in flight per worker, whatever
        // --qd says.
        let queue_depth = if engine.synchronous() { 1 } else { args.qd };
        // fio's iodepth is per job, over all its files: those it shares with its clones, or its own
        // (more targets than workers, dealt to them in turn).
        let queue_depth_shared = args.fio.iodepth_per_job
            && targets.len() > 1
            && (args.each_worker_all_targets || targets.len() > cores.len());
        let latency_target = resolve_latency_target(args, &engine, targets.len(), cores.len())?;
        Ok(RunConfig {
            latency_target,
            engine,
            target: targets.first().cloned(),
            targets,
            each_worker_all_targets: args.each_worker_all_targets,
            scratch,
            workload,
            cores,
            queue_depth,
            queue_depth_shared,
            runtime: resolve_runtime(args, scratch),
            ramp: args.ramp.unwrap_or(Duration::ZERO),
            ios: args.ios,
            io_bytes_per_job: args.fio.bytes_per_job,
            rate_iops: args.rate_iops,
            interval: args.interval,
            telemetry_interval: args.telemetry_interval.0,
            // Nothing to take percentiles of without stamps.
            percentiles: if latency.stamps() { args.percentiles.0.clone() } else { Vec::new() },
            latency,
            on_error: args.on_error,
            output: args.output,
            json_path: args.json.clone(),
            allow_destroy: args.allow_destroy,
            drain_timeout: args.drain_timeout,
            quiet: args.quiet,
            verify,
            start_at: resolve_start(args, SystemTime::now())?,
            buffered,
            io_log: args.fio.per_io_log(),
        })
    }

    /// Whether fio's submission and completion latencies are measured apart (`--latency split`).
    pub fn split_latency(&self) -> bool {
        self.latency == LatencyMode::Split
    }

    /// How many workers share each core (1 when every worker has its own).
    pub fn workers_per_core(&self) -> usize {
        let mut c = self.cores.clone();
        c.sort_unstable();
        c.dedup();
        self.cores.len().div_ceil(c.len().max(1))
    }
}

/// fio's latency target, where a worker can follow fio's search: one worker on one target (fio's
/// search is one job's; the depth of lanes that share a worker, or of clones reported together,
/// is not one job's), on an engine that keeps several I/Os in flight. `latency_window`,
/// `latency_percentile` and `latency_run` without a target do nothing, as in fio.
fn resolve_latency_target(
    args: &RunArgs,
    engine: &EngineSpec,
    targets: usize,
    workers: usize,
) -> Result<Option<LatencyTarget>, ConfigError> {
    let Some(target) = args.fio.latency_target.filter(|t| !t.is_zero()) else { return Ok(None) };
    let refuse = |message: String| Err(Fault::Invalid { option: "latency_target", message }.into());
    if *engine == EngineSpec::Psync {
        return refuse(
            "a synchronous engine has one I/O in flight whatever the depth, so there is no depth to search; use an asynchronous engine (io_uring, libaio) or drop latency_target".into(),
        );
    }
    if workers > 1 {
        return refuse(format!(
            "fio searches one depth per job on its own, and this job runs {workers} workers (numjobs); give it numjobs=1, or drop latency_target"
        ));
    }
    if targets > 1 {
        return refuse(format!(
            "fio searches one depth per job over all its files, and this job's {targets} files each get a depth of their own here; give it one file, or drop latency_target"
        ));
    }
    Ok(Some(LatencyTarget {
        target_ns: u64::try_from(target.as_nanos()).unwrap_or(u64::MAX),
        window_ns: args.fio.latency_window.map_or(0, |w| u64::try_from(w.as_nanos()).unwrap_or(u64::MAX)),
        percentile: args.fio.latency_percentile.unwrap_or(100.0),
        run: args.fio.latency_run.unwrap_or(false),
    }))
}

/// `--rate`, `--rate-process` and `--thinktime*`: each refused where it would pace nothing.
fn resolve_pacing(args: &RunArgs, mix: &Mix) -> Result<PaceSpec, ConfigError> {
    if let Some(r) = args.rate {
        if !Direction::ALL.iter().any(|&d| mix.issues(d) && r.of(d).is_some()) {
            let paced = [("reads", r.read), ("writes", r.write), ("trims", r.trim)]
                .iter()
                .filter_map(|&(name, rate)| rate.map(|_| name))
                .collect::<Vec<_>>()
                .join(" and ");
            let issued = Direction::ALL
                .iter()
                .filter(|&&d| mix.issues(d))
                .map(|&d| match d {
                    Direction::Read => "reads",
                    Direction::Write => "writes",
                    Direction::Trim => "trims",
                    Direction::WriteZeroes => "write-zeroes",
                    Direction::Flush => "flushes",
                })
                .collect::<Vec<_>>()
                .join(" and ");
            return Err(Clash::RatePacesNothing { paced, rw: args.rw.to_string(), issued }.into());
        }
    }
    let process = args.rate_process.unwrap_or_default();
    if process == RateProcess::Poisson && args.rate.is_none() && args.rate_iops.is_none() {
        return Err(Clash::PoissonUnpaced.into());
    }
    let thinktime = match args.thinktime {
        Some(think) if !think.is_zero() => Some(ThinkTime {
            think,
            spin: args.thinktime_spin.unwrap_or(Duration::ZERO),
            blocks: args.thinktime_blocks.unwrap_or(1),
            count: args.thinktime_blocks_type.unwrap_or_default(),
        }),
        // 0 is fio's default: no think time (a job file's thinktime=0 replaces a [global] one).
        given => {
            // A shape at fio's default (spin 0, every block) shapes nothing, as in fio, where a job
            // file may spell its defaults out; any other shape of no think time is a mistake.
            let spin = args.thinktime_spin.is_some_and(|d| !d.is_zero());
            let blocks = args.thinktime_blocks.is_some_and(|b| b != 1);
            let count = args.thinktime_blocks_type.is_some_and(|c| c != ThinkCount::Complete);
            let shape = if spin {
                "thinktime-spin"
            } else if blocks {
                "thinktime-blocks"
            } else {
                "thinktime-blocks-type"
            };
            if spin || blocks || count {
                return Err(match given {
                    Some(_) => Clash::ThinkShapeOfNone { shape },
                    None => Clash::ThinkShapeAlone { shape },
                }
                .into());
            }
            None
        }
    };
    if let Some(t) = thinktime.filter(|t| t.spin > t.think) {
        return Err(Clash::SpinOverThink { spin: t.spin, think: t.think }.into());
    }
    Ok(PaceSpec::new(args.rate.unwrap_or_default(), process, thinktime))
}

/// fio's `zonemode=strided` with `zonesize`, `zonerange` and `zoneskip`, settled as fio's init.c
/// settles them: strided when a zonesize is given without a zonemode, zonerange defaulting to
/// zonesize, and no zones on a job of several files (fio's strided mode "only really works with 1
/// file", and it turns it off there).
/// fio wraps zones at the file's size (`real_file_size`), not at the end of `size`: `target_bytes`.
fn resolve_zones(args: &RunArgs, targets: usize, target_bytes: u64) -> Result<Option<StridedZones>, ConfigError> {
    let f = &args.fio;
    let size = f.zonesize.filter(|&s| s > 0);
    match (f.zonemode.as_deref(), size) {
        (Some("none"), Some(_)) => Err(invalid(
            "zonesize",
            "sets strided zones, and zonemode=none turns zones off (fio refuses the pair: \"--zonemode=none and --zonesize are not compatible\"); drop one of them".into(),
        )),
        (Some("strided"), None) => Err(invalid(
            "zonemode",
            "strided needs the bytes of each zone (fio: \"--zonesize must be specified when using --zonemode=strided\"); add zonesize, like zonesize=256m".into(),
        )),
        (_, None) => Ok(None),
        (_, Some(_)) if targets > 1 => Ok(None),
        (_, Some(_)) if args.seq_add.is_some_and(|a| a != 0) => Err(invalid(
            "zonesize",
            "strides over zones, and the pattern's offset modifier (rw=read:8k) strides too, which is not taken together; drop one of them".into(),
        )),
        (_, Some(size_bytes)) => Ok(Some(StridedZones {
            size_bytes,
            range_bytes: f.zonerange.filter(|&r| r > 0).unwrap_or(size_bytes),
            skip_bytes: f.zoneskip.unwrap_or(0),
            wrap_bytes: target_bytes,
        })),
    }
}

/// `--seq-add` (fio's `rw=read:8k`): sequential patterns only, and less than the working set.
fn resolve_seq_add(args: &RunArgs, range_bytes: u64) -> Result<i64, ConfigError> {
    let Some(add) = args.seq_add.filter(|a| *a != 0) else { return Ok(0) };
    if args.rw.is_random() {
        return Err(invalid(
            "seq-add",
            format!(
                "skips bytes between sequential I/Os, and --rw {} is random; drop it, or use a sequential pattern",
                args.rw
            ),
        ));
    }
    if add.unsigned_abs() >= range_bytes {
        return Err(invalid(
            "seq-add",
            format!(
                "{} is not smaller than the working set ({}); give a smaller step",
                format_size(add.unsigned_abs()),
                format_size(range_bytes)
            ),
        ));
    }
    Ok(add)
}

/// fio's `prio`, `prioclass` and its libaio and io_uring engines' `cmdprio_*` options.
fn resolve_prio(args: &RunArgs, engine: &EngineSpec, mix: &Mix) -> Result<PrioSpec, ConfigError> {
    let cmd = CmdPrioOptions {
        percentage: args.cmdprio_percentage.as_deref(),
        class: args.cmdprio_class.as_deref(),
        level: args.cmdprio.as_deref(),
        bssplit: args.cmdprio_bssplit.as_deref(),
    };
    let given = [
        (cmd.percentage.is_some(), "cmdprio_percentage"),
        (cmd.class.is_some(), "cmdprio_class"),
        (cmd.level.is_some(), "cmdprio"),
        (cmd.bssplit.is_some(), "cmdprio_bssplit"),
    ];
    if let Some((_, option)) = given.iter().find(|g| g.0) {
        // fio's cmdprio options belong to its libaio and io_uring engines: another engine's job
        // refuses them ("Bad option").
        if !matches!(engine, EngineSpec::Aio(_) | EngineSpec::Uring(_)) {
            return Err(invalid(
                option,
                format!(
                    "it is an option of fio's libaio and io_uring engines, and fio refuses it on {}; use ioengine=libaio or io_uring, or drop it (prio and prioclass set the whole job's priority on any engine)",
                    match engine {
                        EngineSpec::Null(_) => "null",
                        EngineSpec::Spdk(_) => "spdk",
                        EngineSpec::UringCmd(_) => "io_uring_cmd",
                        other => other.name(),
                    }
                ),
            ));
        }
    }
    resolve_priorities(args.prioclass, args.prio, &cmd, mix.issues(Direction::Read), mix.issues(Direction::Write))
        .map_err(|(option, message)| invalid(option, message))
}

/// fio's default `dedupe_working_set_percentage`.
const DEFAULT_DEDUPE_WORKING_SET_PERCENT: u32 = 5;

/// `--buffer-compress-percentage`, `--dedupe-percentage` and its mode (clap checked the ranges).
fn resolve_buffers(
    args: &RunArgs,
    writes: bool,
    range_bytes: u64,
    min_write_bytes: u32,
    (threads, files): (usize, usize),
) -> Result<BufferContents, ConfigError> {
    let dedupe_mode = args.dedupe_mode.unwrap_or_default();
    let working_set_percent = args.dedupe_working_set_percentage.unwrap_or(DEFAULT_DEDUPE_WORKING_SET_PERCENT);
    let dedupe_percent = args.dedupe_percentage.unwrap_or(0);
    if dedupe_mode == DedupeMode::WorkingSet && dedupe_percent > 0 {
        // fio's own checks (init.c): the set is a share of an explicit size, and its blocks are
        // unique ones, so the copies cannot be more than the rest.
        if args.size.is_none() {
            return Err(invalid(
                "dedupe-mode",
                "working_set draws its set from a share of the size, and no size is given; give a size, or write repeat".into(),
            ));
        }
        if files > 1 {
            return Err(invalid(
                "dedupe-mode",
                format!(
                    "working_set takes one file per job, as in fio, and this job has {files}; give one filename, or write repeat"
                ),
            ));
        }
        if working_set_percent + dedupe_percent > 100 {
            return Err(invalid(
                "dedupe-working-set-percentage",
                format!(
                    "{working_set_percent}% of the size held as the unique working set leaves no room for {dedupe_percent}% copies (fio refuses the sum over 100); lower one of them"
                ),
            ));
        }
    }
    let b = BufferContents {
        compress_percent: args.buffer_compress_percentage.unwrap_or(0),
        dedupe_percent,
        dedupe_mode,
        working_set_blocks: (range_bytes * u64::from(working_set_percent) / 100 / u64::from(min_write_bytes.max(1)))
            .max(1),
        dedupe_global: args.dedupe_global.unwrap_or(false),
        // A job file numbers its threads over the whole file (see fio::exec).
        dedupe_thread_base: 0,
        dedupe_threads: threads,
    };
    let flag =
        if args.buffer_compress_percentage.is_some() { "buffer-compress-percentage" } else { "dedupe-percentage" };
    // A verified read-only run takes them: they say how the blocks it checks were laid out.
    if !writes && !args.verify && (args.buffer_compress_percentage.is_some() || args.dedupe_percentage.is_some()) {
        return Err(Clash::BuffersUnwritten { option: flag, rw: args.rw.to_string() }.into());
    }
    Ok(b)
}

/// `--buffer-pattern` (fio's buffer_pattern) fills the written blocks alone: fio lays its
/// compressible and deduplicated buffers over the pattern, which is not taken, and `--verify`
/// writes its own blocks.
fn resolve_pattern(
    args: &RunArgs,
    writes: bool,
) -> Result<Option<crate::workload::pattern::BufferPattern>, ConfigError> {
    let Some(p) = &args.buffer_pattern else { return Ok(None) };
    let other = [
        (args.buffer_compress_percentage.is_some(), "buffer-compress-percentage"),
        (args.dedupe_percentage.is_some(), "dedupe-percentage"),
        (args.verify, "verify"),
    ];
    if let Some((_, with)) = other.iter().find(|(given, _)| *given) {
        return Err(invalid(
            "buffer-pattern",
            format!(
                "fills every written block with its bytes, and --{with} shapes them too, which is not taken together; give one of them"
            ),
        ));
    }
    if !writes {
        return Err(invalid(
            "buffer-pattern",
            format!("fills written blocks, and --rw {} writes none; drop it, or use a pattern that writes", args.rw),
        ));
    }
    Ok(Some(p.clone()))
}

/// `--latency off` stamps nothing, so nothing that reports or acts on latency can go with it:
/// `--percentiles` given (`percentiles_given`), and fio's logs, percentiles and output (its shapes
/// would carry invented zeroes). An `off` that fio's `disable_*` options chose is taken: fio writes
/// its zeros for each latency it was told not to measure, and no log of it.
///
/// # Errors
/// One sentence naming the option that needs latencies.
pub fn check_latency_off(args: &RunArgs, percentiles_given: bool) -> Result<(), ConfigError> {
    if resolve_latency(args).stamps() || args.latency.is_none() {
        return Ok(());
    }
    let needs = if percentiles_given { Some("--percentiles") } else { args.fio.first_given() };
    match needs {
        Some(what) => Err(ConfigError::Invalid {
            option: "latency",
            message: format!(
                "off measures no latency, and {what} needs latencies; drop {what}, or use --latency total"
            ),
        }),
        None => Ok(()),
    }
}

/// SPDK needs a transport ID, and its own flags mean nothing to any other engine.
fn check_spdk_flags(args: &RunArgs, engine: &EngineSpec) -> Result<(), ConfigError> {
    if engine.is_spdk() && args.spdk.trids.is_empty() {
        return Err(Clash::SpdkNeedsTrid.into());
    }
    if let Some(flag) = args.spdk.first_given().filter(|_| !engine.is_spdk()) {
        let flag = flag.trim_start_matches("--");
        return Err(Clash::SpdkOnly { flag, engine: engine.name().into() }.into());
    }
    if *engine == EngineSpec::Spdk(SpdkMode::Interrupt) {
        check_interrupt_flags(args)?;
    }
    Ok(())
}

/// `spdk:interrupt` sleeps until a completion instead of polling, over PCIe only (where SPDK 25.09
/// supports interrupts), and needs its poll group (which error injection goes without).
fn check_interrupt_flags(args: &RunArgs) -> Result<(), ConfigError> {
    let s = &args.spdk;
    let polling = [
        (s.poll_policy.is_some(), "poll-policy"),
        (s.poll_gap.is_some(), "poll-gap"),
        (s.max_completions.is_some(), "max-completions"),
    ];
    if let Some((_, flag)) = polling.iter().find(|(given, _)| *given) {
        return Err(invalid(
            flag,
            format!(
                "spdk:interrupt sleeps until a completion arrives and has no polling to tune; drop --{flag} or use --engine spdk"
            ),
        ));
    }
    if s.spdk_inject_error.is_some() {
        return Err(invalid(
            "spdk-inject-error",
            "SPDK completes injected errors only when a queue pair is polled, and spdk:interrupt sleeps instead; use --engine spdk for fault injection".into(),
        ));
    }
    for trid in &s.trids {
        let trtype = trid
            .split_whitespace()
            .find_map(|t| t.split_once([':', '=']).filter(|(k, _)| k.eq_ignore_ascii_case("trtype")).map(|(_, v)| v));
        if let Some(t) = trtype.filter(|t| !t.eq_ignore_ascii_case("pcie")) {
            return Err(invalid(
                "trid",
                format!(
                    "SPDK takes interrupts from PCIe controllers only, and '{trid}' is {t}; use --engine spdk there, or spdk:interrupt with a PCIe function bound to vfio-pci"
                ),
            ));
        }
    }
    Ok(())
}

/// The share of each operation: `--rwmix` or `--rwmixread` for a mixed pattern (refused for any
/// other, which fixes its own), else fio's 50/50.
fn resolve_mix(args: &RunArgs) -> Result<Mix, ConfigError> {
    if let Some(fixed) = args.rw.fixed_mix() {
        return match (args.rwmixread, args.rwmix) {
            (Some(_), _) => Err(Clash::MixWithoutMixedPattern { mix: "rwmixread", rw: args.rw.to_string() }.into()),
            (None, Some(_)) => Err(Clash::MixWithoutMixedPattern { mix: "rwmix", rw: args.rw.to_string() }.into()),
            (None, None) => Ok(fixed),
        };
    }
    Ok(match (args.rwmixread, args.rwmix) {
        (_, Some(m)) => m,
        (Some(r), None) => Mix::read_write(r),
        (None, None) => Mix::read_write(DEFAULT_RWMIXREAD),
    })
}

/// `--verify` knows what every written unit holds; a trimmed unit reads back as zeroes or as
/// whatever the drive likes (NVMe lets a deallocated block read as either), so the two are not
/// combined rather than half-checked.
fn check_verify_mix(args: &RunArgs, mix: &Mix) -> Result<(), ConfigError> {
    if args.verify && (mix.issues(Direction::Trim) || mix.issues(Direction::WriteZeroes)) {
        return Err(invalid(
            "verify",
            "trimmed and zeroed blocks have no header to check (a trimmed block may read back as anything); drop --verify or the trims and write-zeroes".into(),
        ));
    }
    Ok(())
}

/// Refuses trims and write-zeroes on a device that does not take them (sysfs says 0 bytes at a
/// time, which for NVMe means the controller's ONCS lacks the command), and on a file whose
/// filesystem cannot punch holes or zero ranges (asked with a call that changes nothing), before
/// anything is written or created.
fn check_operations(t: &Target, mix: &Mix) -> Result<(), ConfigError> {
    for (dir, what) in [(Direction::Trim, "deallocation (trim)"), (Direction::WriteZeroes, "write-zeroes")] {
        if mix.issues(dir) && t.supports(dir) == Some(false) {
            return Err(ConfigError::Unsupported { path: t.path.display().to_string(), what, dir: dir.name() });
        }
    }
    for (dir, what, can, ops) in [
        (Direction::Trim, "punch holes (trim)", "ext4, xfs, btrfs or tmpfs", "trims"),
        (Direction::WriteZeroes, "zero ranges (write-zeroes)", "ext4, xfs or btrfs", "write-zeroes"),
    ] {
        if mix.issues(dir) && t.file_takes(dir) == Some(false) {
            let fs = t.filesystem().map_or_else(|| "a filesystem".to_string(), |f| format!("a {f} filesystem"));
            return Err(ConfigError::FileSystemCannot { path: t.path.display().to_string(), fs, what, can, ops });
        }
    }
    Ok(())
}

/// Read, write and trim block sizes (fio's three `bs` values): `--bssplit` wins over `--bs`;
/// neither gives the default. trimwrite writes each block it trimmed with one write of the same
/// size, so its trim and write sizes must be the same.
fn resolve_block_sizes(args: &RunArgs, mix: &Mix) -> Result<[BsSplit; 3], ConfigError> {
    let (option, sizes) = match (&args.bs, &args.bssplit) {
        (_, Some(split)) => {
            ("bssplit", BsSplit::parse_per_direction(split, DEFAULT_BS).map_err(|m| invalid("bssplit", m))?)
        }
        (Some(bs), None) => ("bs", parse_bs(bs)?),
        (None, None) => ("bs", [0, 1, 2].map(|_| BsSplit::single(DEFAULT_BS))),
    };
    let [_, write, trim] = &sizes;
    if args.rw == RwMode::TrimWrite && write != trim && mix.issues(Direction::Trim) {
        return Err(Clash::TrimwriteSizes { option, write: write.to_fio(), trim: trim.to_fio() }.into());
    }
    Ok(sizes)
}

/// The targets and whether the one target is a scratch file: SPDK attaches through `attach`, each
/// `--filename` is inspected (created at `--size` bytes past `--offset` if missing), an engine that
/// needs a target and got none gets a scratch file, and the null engine needs none. The same target
/// twice is refused, however it is spelled.
fn resolve_targets(
    args: &RunArgs,
    engine: &EngineSpec,
    engine_text: &str,
    attach: Option<TargetAttach<'_>>,
    cores: &[usize],
) -> Result<(Vec<Target>, bool), ConfigError> {
    let paths = split_filenames(&args.filename)?;
    if args.each_worker_all_targets && paths.len() < 2 && !engine.is_spdk() {
        return Err(invalid(
            "each-worker-all-targets",
            "places several targets, and this run has one; drop it or give more --filename".into(),
        ));
    }
    Ok(match (paths.is_empty(), engine.needs_target()) {
        _ if engine.is_spdk() => {
            let attach = attach.ok_or_else(|| ConfigError::Engine("the spdk engine needs an attach step".into()))?;
            (attach(cores)?, false)
        }
        (false, _) => {
            // A file made for the run holds every worker's working set (fio's offset_increment
            // extends it to the last clone's end).
            let steps = match args.fio.offset_increment {
                Some(SizeOrPercent::Bytes(b)) => b.saturating_mul(cores.len().saturating_sub(1) as u64),
                _ => 0,
            };
            let create = match args.size {
                Some(SizeOrPercent::Bytes(b)) => Some(b + args.offset.map_or(0, |o| o.resolve(0)) + steps),
                _ => None,
            };
            let mut targets: Vec<Target> = Vec::with_capacity(paths.len());
            for path in &paths {
                let mut t = Target::inspect(path, create).map_err(|e| match e {
                    TargetError::Missing { path } => Fault::Missing { path }.into(),
                    e => ConfigError::from(e),
                })?;
                check_engine_target(engine, engine_text, &mut t)?;
                if let Some(first) = targets.iter().find(|o| o.same_as(&t)) {
                    return Err(Fault::SameTargetTwice {
                        first: first.path.display().to_string(),
                        again: t.path.display().to_string(),
                    }
                    .into());
                }
                let overlap = targets.iter().find_map(|o| {
                    if t.is_partition_of(o) { Some((&t, o)) } else { o.is_partition_of(&t).then_some((o, &t)) }
                });
                if let Some((part, disk)) = overlap {
                    return Err(ConfigError::PartitionOfTarget {
                        part: part.path.display().to_string(),
                        disk: disk.path.display().to_string(),
                    });
                }
                targets.push(t);
            }
            (targets, false)
        }
        (true, false) => (Vec::new(), false),
        (true, true) => {
            let mut t = scratch_target()?;
            check_engine_target(engine, engine_text, &mut t)?;
            (vec![t], true)
        }
    })
}

/// Every `--filename`, each split as fio splits its lists: at every `:` not escaped as `\:`.
pub fn split_filenames(given: &[PathBuf]) -> Result<Vec<PathBuf>, ConfigError> {
    let mut out = Vec::new();
    for p in given {
        let text = p.to_string_lossy();
        let mut cur = String::new();
        let mut chars = text.chars().peekable();
        let mut parts = Vec::new();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&':') => {
                    cur.push(':');
                    chars.next();
                }
                ':' => parts.push(std::mem::take(&mut cur)),
                c => cur.push(c),
            }
        }
        parts.push(cur);
        if parts.iter().any(String::is_empty) {
            return Err(invalid(
                "filename",
                format!(
                    "'{text}' has an empty name in its list; separate paths with single colons (A:B), and write \\: for a colon inside a name"
                ),
            ));
        }
        out.extend(parts.into_iter().map(PathBuf::from));
    }
    Ok(out)
}

/// What the range and size checks need to know of the target (the null device has no blocks to
/// align to, and buffered I/O needs no alignment: `direct` is false).
struct Geometry {
    total: u64,
    lbs: u64,
    path: String,
    direct: bool,
}

impl Geometry {
    /// With several targets, the working set must fit each: the smallest size, the largest block.
    fn of(targets: &[Target], direct: bool) -> Geometry {
        let Some(small) = targets.iter().min_by_key(|t| t.size_bytes) else {
            return Geometry { total: NULL_DEVICE_BYTES, lbs: 512, path: "the null device".to_string(), direct: false };
        };
        let big_blocks = targets.iter().max_by_key(|t| t.logical_block_bytes).unwrap_or(small);
        Geometry {
            total: small.size_bytes,
            lbs: big_blocks.logical_block_bytes,
            path: if targets.len() > 1 {
                format!("{} (the smallest target)", small.path.display())
            } else {
                small.path.display().to_string()
            },
            direct,
        }
    }
}

/// The alignment of offsets and the largest block size, after checking that every block size the
/// workload uses (reads', writes' and write-zeroes', trims') and the alignment are whole logical
/// blocks.
fn resolve_align(
    args: &RunArgs,
    geo: &Geometry,
    mix: &Mix,
    [bs_read, bs_write, bs_trim]: [&BsSplit; 3],
) -> Result<(u64, u32), ConfigError> {
    let option = if args.bssplit.is_some() { "bssplit" } else { "bs" };
    let mut used: Vec<&BsSplit> = Vec::new();
    if mix.issues(Direction::Read) {
        used.push(bs_read);
    }
    if mix.issues(Direction::Write) || mix.issues(Direction::WriteZeroes) {
        used.push(bs_write);
    }
    if mix.issues(Direction::Trim) {
        used.push(bs_trim);
    }
    let lbs = geo.lbs;
    if geo.direct {
        for split in &used {
            if let Some(e) = split.entries.iter().find(|e| u64::from(e.bytes) % lbs != 0) {
                let value = format_size(u64::from(e.bytes));
                return Err(Fault::NotBlockMultiple { option, value, path: geo.path.clone(), lbs }.into());
            }
        }
    }
    let min_bs = used.iter().map(|s| s.min_bytes()).min().unwrap_or(DEFAULT_BS);
    let max_bs = used.iter().map(|s| s.max_bytes()).max().unwrap_or(DEFAULT_BS);
    let align = args.align.unwrap_or(u64::from(min_bs));
    if align == 0 {
        return Err(invalid("align", "0 is not an alignment; use a size such as 4k".into()));
    }
    if geo.direct && align % lbs != 0 {
        return Err(Fault::NotBlockMultiple {
            option: "align",
            value: format_size(align),
            path: geo.path.clone(),
            lbs,
        }
        .into());
    }
    Ok((align, max_bs))
}

/// Whether random offsets keep fio's random map: asked for, a random pattern, a uniform
/// distribution and offsets aligned to the smallest block size in use (fio turns its map off for
/// other distributions and "any use of blockalign=").
fn random_map(args: &RunArgs, align: u64, sizes: [&BsSplit; 3], mix: &Mix) -> bool {
    let dirs = [(Direction::Read, 0), (Direction::Write, 1), (Direction::WriteZeroes, 1), (Direction::Trim, 2)];
    let min_bs = dirs.iter().filter(|(d, _)| mix.issues(*d)).map(|&(_, i)| u64::from(sizes[i].min_bytes())).min();
    args.random_map && args.rw.is_random() && args.random_dist == RandomDist::Uniform && min_bs == Some(align)
}

/// The working set `(offset, size)`: block-aligned, inside the target, and big enough for the
/// largest block.
fn resolve_range(args: &RunArgs, geo: &Geometry, max_bs: u32, align: u64) -> Result<(u64, u64), ConfigError> {
    let (total, lbs) = (geo.total, geo.lbs);
    let align = align.max(1);
    // fio's shares of the target (filesetup.c): an offset share rounded up to a block (its
    // get_start_offset), a size share cut to what lies past the offset and down to a block.
    let offset = match args.offset {
        Some(o @ SizeOrPercent::Percent(_)) => o.resolve(total).div_ceil(align) * align,
        Some(o) => o.resolve(total),
        None => 0,
    };
    let size = match args.size {
        Some(s @ SizeOrPercent::Percent(_)) => {
            let share = s.resolve(total).min(total.saturating_sub(offset));
            share - share % align
        }
        Some(s) => s.resolve(total),
        None => total.saturating_sub(offset),
    };
    if geo.direct && offset % lbs != 0 {
        let path = geo.path.clone();
        return Err(Fault::NotBlockMultiple { option: "offset", value: format_size(offset), path, lbs }.into());
    }
    let end = offset.saturating_add(size);
    if end > total {
        return Err(Clash::PastEnd {
            offset: args.offset.map_or("0".into(), |o| o.to_string()),
            size: args.size.map(|s| s.to_string()),
            end,
            total,
            path: geo.path.clone(),
        }
        .into());
    }
    if size < u64::from(max_bs) {
        let bs_option = if args.bssplit.is_some() { "bssplit" } else { "bs" };
        return Err(Clash::WorkingSetTooSmall { size, bs: u64::from(max_bs), bs_option }.into());
    }
    Ok((offset, size))
}

/// fio's zoned_abs zones must lie in the working set: fio stops the job at the first I/O drawn
/// past it ("zoned_abs sizes exceed file size").
fn check_zones_fit(args: &RunArgs, align: u64, size: u64) -> Result<(), ConfigError> {
    let RandomDist::ZonedAbs { zones } = args.random_dist else { return Ok(()) };
    let total = zones.total_bytes();
    if total / align.max(1) > size / align.max(1) {
        return Err(invalid(
            "random-dist",
            format!(
                "the zones cover {}, more than the working set ({}), and fio stops the job at the first I/O past it (\"zoned_abs sizes exceed file size\"); give smaller zones, or a larger size",
                format_size(total),
                format_size(size)
            ),
        ));
    }
    Ok(())
}

/// fio's `offset_increment` in bytes: worker j's working set starts j steps after `offset`. A
/// share of the target is taken of its size, as fio takes it; every worker's working set must lie
/// on the target, where fio would shorten the last ones (a device) or extend the file.
fn resolve_clone_step(
    args: &RunArgs,
    geo: &Geometry,
    align: u64,
    offset: u64,
    size: u64,
    workers: usize,
) -> Result<u64, ConfigError> {
    let Some(given) = args.fio.offset_increment else { return Ok(0) };
    let step = given.resolve(geo.total);
    // fio rounds each worker's start up to the block size when the step is a share; one step for
    // every worker needs it to be a whole number of blocks already.
    if matches!(given, SizeOrPercent::Percent(_)) && step % align != 0 {
        return Err(invalid(
            "offset_increment",
            format!(
                "{given} of {} is {step} bytes, not a multiple of the block size ({align}), and fio rounds each worker's start up to one; give the step in bytes",
                format_size(geo.total)
            ),
        ));
    }
    if args.verify && workers > 1 && step < size {
        return Err(invalid(
            "offset_increment",
            format!(
                "{given} is less than the working set ({}), so the workers' sets overlap, and --verify needs one writer per block; give a step of at least the size",
                format_size(size)
            ),
        ));
    }
    let end = offset.saturating_add(step.saturating_mul(workers.saturating_sub(1) as u64)).saturating_add(size);
    if step > 0 && end > geo.total {
        return Err(invalid(
            "offset_increment",
            format!(
                "the last of {workers} workers' working sets ends at {}, past the end of {} ({}); give a smaller step, size or numjobs",
                format_size(end),
                geo.path,
                format_size(geo.total)
            ),
        ));
    }
    Ok(step)
}

/// Safety of writes: refuse before anything is written (a device needs consent to be written, and
/// every target must take direct I/O).
fn check_writes_allowed(args: &RunArgs, target: Option<&Target>, workload: &WorkloadSpec) -> Result<(), ConfigError> {
    if let Some(t) = target {
        if workload.writes() {
            t.check_writable(args.allow_destroy, args.confirm_serial.as_deref())?;
        }
        t.check_direct_io()?;
    }
    Ok(())
}

/// An io_uring `sqpoll_cpu` gets the same check as --cores, so a typo is caught before the
/// kernel's bare EINVAL.
fn check_sqpoll_cpu(engine: &EngineSpec, engine_text: &str) -> Result<(), ConfigError> {
    if let EngineSpec::Uring(o) | EngineSpec::UringCmd(o) = engine {
        if let Some(cpu) = o.ring.sqpoll_cpu {
            resolve_cores(Some(&[cpu as usize]), None).map_err(|e| match e {
                ConfigError::Fault(Fault::NoSuchCore { core, allowed }) => {
                    Fault::SqpollCpuNoSuchCore { spec: engine_text.into(), core, allowed }.into()
                }
                e => e,
            })?;
        }
    }
    Ok(())
}

/// `--latency`, or the default: fio's (slat, clat and lat each measured) for a job file or
/// fio-shaped output, where the figures are read as fio's; nvmebench's one latency per I/O
/// otherwise. fio's `disable_slat`/`disable_clat`/`disable_lat` leave the latencies the job keeps
/// (`FioArgs::fio_latencies`): `total` when only fio's `lat` is left, and `off` when none is (fio's
/// `gtod_reduce`, which exists to save those clock reads).
pub fn resolve_latency(args: &RunArgs) -> LatencyMode {
    if let Some(mode) = args.latency {
        return mode;
    }
    let f = &args.fio;
    if !(f.fio_json() || f.job_file.is_some()) {
        return LatencyMode::Total;
    }
    let kept = f.fio_latencies();
    match (kept.slat || kept.clat, kept.lat) {
        (true, _) => LatencyMode::Split,
        (false, true) => LatencyMode::Total,
        // fio still reads the clock at each completion for a per-I/O bandwidth or IOPS log (its
        // bandwidth is the I/O's size over its clat); the JSON keeps its zeros.
        (false, false) if f.per_io_rate_log() => LatencyMode::Total,
        (false, false) => LatencyMode::Off,
    }
}

/// `--time`, or none when `--ios` bounds the run, else the default (shorter on a scratch file).
fn resolve_runtime(args: &RunArgs, scratch: bool) -> Option<Duration> {
    match (args.time, args.ios.or(args.fio.bytes_per_job)) {
        (Some(t), _) => Some(t),
        (None, Some(_)) => None,
        (None, None) if scratch => Some(SCRATCH_RUNTIME),
        (None, None) => Some(DEFAULT_RUNTIME),
    }
}

fn invalid(option: &'static str, message: String) -> ConfigError {
    Fault::Invalid { option, message }.into()
}

/// Checks that the engine can drive this kind of target (and, for polled modes, that the device can
/// poll); for an NVMe generic device, reads the namespace's size and LBA size from the device.
fn check_engine_target(engine: &EngineSpec, engine_text: &str, t: &mut Target) -> Result<(), ConfigError> {
    let spec = || engine_text.to_string();
    let path = t.path.display().to_string();
    let err = |problem: String| Fault::EngineTarget { spec: spec(), path: path.clone(), problem };
    let generic = t.kind == TargetKind::NvmeGeneric;
    match engine {
        EngineSpec::UringCmd(_) if !generic => {
            let generic = t.nvme_sibling.as_ref().map(|ng| ng.display().to_string());
            return Err(Fault::NotGenericDevice { spec: spec(), path, generic }.into());
        }
        EngineSpec::UringCmd(_) => {
            let ns = uring_cmd::probe_namespace(&t.path).map_err(|e| {
                err(format!("cannot identify the namespace ({e}); passthrough needs root (CAP_SYS_ADMIN)"))
            })?;
            t.size_bytes = ns.format.blocks * u64::from(ns.format.lba_bytes);
            t.logical_block_bytes = u64::from(ns.format.lba_bytes);
            if ns.format.metadata_bytes != 0 {
                return Err(err(format!(
                    "the namespace carries {} metadata bytes per block, which uring-cmd does not handle; \
                     use the uring engine on the block device",
                    ns.format.metadata_bytes
                ))
                .into());
            }
        }
        _ if generic => {
            let block = t.nvme_sibling.as_ref().map(|b| b.display().to_string());
            return Err(Fault::GenericDevice { spec: spec(), path, block }.into());
        }
        _ => {}
    }
    // fallocate and ftruncate change a file's allocation or length; on a device they would at best
    // discard its data (fio's falloc takes a block device; this refuses it rather than write one).
    if engine.file_calls() && t.kind == TargetKind::BlockDevice {
        return Err(err(format!(
            "{} changes a regular file's allocation or length, and this is a block device; name a file, or use psync",
            engine.name()
        ))
        .into());
    }
    if engine.polled() {
        if let PollSupport::No { disk, queue, nvme } = t.poll_support() {
            let queue = queue.display().to_string();
            return Err(Fault::CannotPoll { spec: spec(), path, queue, disk, nvme }.into());
        }
    }
    Ok(())
}

/// `--bs 4k`, `--bs 4k,64k` (reads; writes and trims) or `--bs 4k,64k,1m` (reads, writes, trims);
/// an empty value is the default size (fio's rules, see [`units::per_direction`]).
fn parse_bs(text: &str) -> Result<[BsSplit; 3], ConfigError> {
    let Some(parts) = units::per_direction(text) else {
        return Err(invalid(
            "bs",
            format!("'{text}' gives more than three sizes; write READ[,WRITE[,TRIM]], like 4k,64k,1m"),
        ));
    };
    let one = |t: &str| -> Result<BsSplit, ConfigError> {
        if t.is_empty() {
            return Ok(BsSplit::single(DEFAULT_BS));
        }
        let b = units::parse_size(t).map_err(|m| invalid("bs", m))?;
        let b = u32::try_from(b)
            .ok()
            .filter(|&b| b > 0)
            .ok_or_else(|| invalid("bs", format!("'{t}' is not a block size; use 1 byte to 4g, such as 4k")))?;
        Ok(BsSplit::single(b))
    };
    Ok([one(parts[0])?, one(parts[1])?, one(parts[2])?])
}

/// One worker per listed core, or `jobs` workers over the allowed cores in order. More workers than
/// cores share cores round-robin (the caller warns).
fn resolve_cores(cores: Option<&[usize]>, jobs: Option<usize>) -> Result<Vec<usize>, ConfigError> {
    // As the process started: SPDK's environment pins the main thread to one core when it starts.
    let allowed: Vec<usize> = crate::cpu::allowed_cores().to_vec();
    if allowed.is_empty() {
        return Err(ConfigError::NoCores);
    }
    match cores {
        Some(list) => {
            if let Some(&core) = list.iter().find(|c| !allowed.contains(c)) {
                return Err(Fault::NoSuchCore { core, allowed: format_core_list(&allowed) }.into());
            }
            Ok(list.to_vec())
        }
        None => Ok((0..jobs.unwrap_or(1)).map(|i| allowed[i % allowed.len()]).collect()),
    }
}

/// `0-3,8` from `[0,1,2,3,8]`.
pub fn format_core_list(cores: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cores.len() {
        let mut j = i;
        while j + 1 < cores.len() && cores[j + 1] == cores[j] + 1 {
            j += 1;
        }
        out.push(if i == j { cores[i].to_string() } else { format!("{}-{}", cores[i], cores[j]) });
        i = j + 1;
    }
    out.join(",")
}

/// Where the default run's scratch file goes: the first of $TMPDIR, /var/tmp and the current
/// directory whose filesystem takes O_DIRECT (tmpfs does not).
fn scratch_target() -> Result<Target, ConfigError> {
    let mut dirs: Vec<PathBuf> = vec![std::env::temp_dir(), PathBuf::from("/var/tmp")];
    if let Ok(cwd) = std::env::current_dir() {
        dirs.push(cwd);
    }
    dirs.dedup();
    let name = format!("nvmebench-scratch-{}.dat", std::process::id());
    for dir in &dirs {
        if let Ok(t) = Target::inspect(&dir.join(&name), Some(SCRATCH_BYTES)) {
            if t.kind == TargetKind::NewFile && t.check_direct_io().is_ok() {
                return Ok(t);
            }
        }
    }
    Err(Fault::NoScratchDir { tried: dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", ") }
        .into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_specs() {
        assert_eq!(EngineSpec::parse("uring").unwrap(), EngineSpec::Uring(UringOptions::default()));
        assert_eq!(
            EngineSpec::parse("null:lat=20us").unwrap(),
            EngineSpec::Null(NullOptions { service_time: Duration::from_micros(20) })
        );
        let u = EngineSpec::parse("uring:fixedbufs=0").unwrap();
        assert_eq!(u, EngineSpec::Uring(UringOptions { fixed_buffers: false, ..UringOptions::default() }));
        assert_eq!(
            EngineSpec::parse("spdk2").unwrap_err().to_string(),
            "--engine 'spdk2' is not an engine; use uring, uring-cmd, aio, posixaio, psync, null, null:lat=DURATION or spdk"
        );
        assert!(EngineSpec::parse("null:foo=1").unwrap_err().to_string().contains("unknown option 'foo'"));
        assert!(EngineSpec::parse("uring:fixedbufs=maybe").unwrap_err().to_string().contains("is not on or off"));
    }

    #[test]
    fn start_times_must_lie_ahead_within_a_day() {
        use clap::Parser;
        let args = |extra: &[&str]| {
            let mut v = vec!["nvmebench", "run"];
            v.extend_from_slice(extra);
            match crate::cli::Cli::try_parse_from(v).unwrap().command {
                crate::cli::Command::Run(r) => *r,
                _ => unreachable!("parsed a run command"),
            }
        };
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(resolve_start(&args(&[]), now).unwrap(), None);
        let at = resolve_start(&args(&["--start-at", "1700000010.5"]), now).unwrap();
        assert_eq!(at, Some(now + Duration::from_millis(10_500)));
        let at = resolve_start(&args(&["--start-delay", "2s"]), now).unwrap();
        assert_eq!(at, Some(now + Duration::from_secs(2)));
        let e = resolve_start(&args(&["--start-at", "1699999990"]), now).unwrap_err().to_string();
        assert_eq!(
            e,
            "--start-at: 1699999990 was 10.0 s ago; pick a moment still ahead when every host starts, like $(( $(date +%s) + 15 ))"
        );
        let e = resolve_start(&args(&["--start-at", "1700000000000"]), now).unwrap_err().to_string();
        assert!(e.starts_with("--start-at: 1700000000000 is ") && e.contains("give UNIX seconds"), "{e}");
        // A delay is no UNIX time: it is told to be shorter.
        let e = resolve_start(&args(&["--start-delay", "25h"]), now).unwrap_err().to_string();
        assert_eq!(e, "--start-delay: 25.0 hours is too long a wait; give at most 24 hours");
    }

    #[test]
    fn kernel_engine_specs() {
        let EngineSpec::Uring(o) = EngineSpec::parse("uring:poll").unwrap() else { panic!() };
        assert!(o.ring.iopoll && !o.ring.sqpoll);
        let EngineSpec::Uring(o) = EngineSpec::parse("uring:sqpoll_cpu=1,submit_batch=8,reap_batch=4").unwrap() else {
            panic!()
        };
        assert_eq!((o.ring.sqpoll, o.ring.sqpoll_cpu), (true, Some(1)));
        assert_eq!((o.ring.submit_batch, o.ring.reap_batch), (8, 4));
        let EngineSpec::Uring(o) = EngineSpec::parse("uring:defer_taskrun=1,coop_taskrun=0,regring=0").unwrap() else {
            panic!()
        };
        assert_eq!(
            (o.ring.defer_taskrun, o.ring.coop_taskrun, o.ring.registered_ring),
            (Toggle::On, Toggle::Off, Toggle::Off)
        );
        assert_eq!(o.ring.single_issuer, Toggle::Auto);
        let EngineSpec::UringCmd(o) = EngineSpec::parse("uring-cmd:poll").unwrap() else { panic!() };
        assert!(o.ring.iopoll && o.fixed_buffers);
        assert!(EngineSpec::parse("uring-cmd:poll").unwrap().polled());
        assert_eq!(EngineSpec::parse("aio").unwrap(), EngineSpec::Aio(AioOptions { reap_max: None }));
        assert_eq!(EngineSpec::parse("libaio:reap_max=2").unwrap(), EngineSpec::Aio(AioOptions { reap_max: Some(2) }));
        assert_eq!(EngineSpec::parse("psync").unwrap().name(), "psync");
        for (name, spec) in [("falloc", EngineSpec::Falloc), ("ftruncate", EngineSpec::Ftruncate)] {
            assert_eq!(EngineSpec::parse(name).unwrap(), spec);
            assert_eq!(spec.name(), name);
            assert!(spec.synchronous() && spec.file_calls() && spec.has_page_cache());
        }
        assert!(EngineSpec::Psync.synchronous() && !EngineSpec::Psync.file_calls());
        let posix = EngineSpec::parse("posixaio").unwrap();
        assert_eq!((posix.clone(), posix.name()), (EngineSpec::PosixAio, "posixaio"));
        assert!(!posix.synchronous() && posix.has_page_cache() && !posix.file_calls(), "iodepth in flight");

        let e = |t: &str| EngineSpec::parse(t).unwrap_err().to_string();
        assert!(
            e("uring:sqpoll,defer_taskrun=1").ends_with("do not go with sqpoll (the kernel refuses them); drop one")
        );
        assert!(e("uring:submit_batch=0").contains("submit_batch=0 is not a batch size"));
        assert!(e("uring:sqpoll_cpu=x").contains("sqpoll_cpu=x is not a core number"));
        assert!(e("uring:turbo").contains("unknown option 'turbo'; the uring engine takes poll, sqpoll"));
        assert_eq!(e("aio:poll"), "--engine 'aio:poll': unknown option 'poll'; the aio engine takes reap_max=N");
        assert!(e("aio:reap_max=0").contains("reap_max=0 is not a batch size"));
        assert_eq!(e("falloc:x=1"), "--engine 'falloc:x=1': unknown option 'x'; the falloc engine takes no options");
        assert_eq!(e("posixaio:x"), "--engine 'posixaio:x': unknown option 'x'; the posixaio engine takes no options");
    }

    #[cfg(not(feature = "spdk"))]
    #[test]
    fn spdk_needs_its_feature() {
        assert_eq!(
            EngineSpec::parse("spdk").unwrap_err().to_string(),
            "spdk: not compiled in; build with --features spdk"
        );
    }

    #[test]
    fn filename_lists_split_at_unescaped_colons() {
        let split = |v: &[&str]| {
            split_filenames(&v.iter().map(PathBuf::from).collect::<Vec<_>>())
                .map(|p| p.iter().map(|p| p.display().to_string()).collect::<Vec<_>>())
        };
        assert_eq!(split(&["/dev/a:/dev/b", "/c"]).unwrap(), ["/dev/a", "/dev/b", "/c"]);
        assert_eq!(split(&["/dev/a\\:b"]).unwrap(), ["/dev/a:b"]);
        assert_eq!(split(&[]).unwrap(), Vec::<String>::new());
        let e = split(&["/a::/b"]).unwrap_err().to_string();
        assert_eq!(
            e,
            "--filename: '/a::/b' has an empty name in its list; separate paths with single colons (A:B), and write \\: for a colon inside a name"
        );
        assert!(split(&["/a:"]).is_err());
    }

    /// `--thinktime 0` is fio's default, no think time; a shape given with it shapes nothing.
    #[test]
    fn a_think_time_of_0_is_none() {
        let resolve = |extra: &[&str]| {
            let argv = ["nvmebench", "run", "--engine", "null"].iter().chain(extra);
            let crate::cli::Command::Run(a) = <crate::cli::Cli as clap::Parser>::parse_from(argv).command else {
                unreachable!("the arguments start with `run`")
            };
            RunConfig::resolve(&a)
        };
        assert_eq!(resolve(&["--thinktime", "0"]).unwrap().workload.pacing.thinktime, None);
        assert_eq!(resolve(&["--thinktime", "0ms"]).unwrap().workload.pacing.thinktime, None);
        let t = resolve(&["--thinktime", "100"]).unwrap().workload.pacing.thinktime.unwrap();
        assert_eq!((t.think, t.spin, t.blocks), (Duration::from_micros(100), Duration::ZERO, 1));
        assert_eq!(
            resolve(&["--thinktime", "0", "--thinktime-blocks", "4"]).unwrap_err().to_string(),
            "--thinktime-blocks: it shapes --thinktime 0, which is no think time; drop it, or give --thinktime a time above 0"
        );
        // fio's defaults spelled out shape nothing.
        for argv in [
            &["--thinktime-blocks", "1"][..],
            &["--thinktime-spin", "0us"],
            &["--thinktime", "0", "--thinktime-blocks", "1"],
        ] {
            assert_eq!(resolve(argv).unwrap().workload.pacing.thinktime, None, "{argv:?}");
        }
    }

    #[test]
    fn core_lists_format_compactly() {
        assert_eq!(format_core_list(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(format_core_list(&[5]), "5");
    }

    #[test]
    fn cores_must_exist() {
        let e = resolve_cores(Some(&[100_000]), None).unwrap_err().to_string();
        assert!(e.starts_with("core 100000 does not exist"), "{e}");
        assert_eq!(resolve_cores(None, None).unwrap().len(), 1);
        assert_eq!(resolve_cores(None, Some(5)).unwrap().len(), 5);
    }
}

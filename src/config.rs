//! The validated, resolved run: every default applied, every size in bytes, every check made.
//!
//! `RunConfig::resolve` turns raw flags and an inspected target into a configuration that cannot
//! fail later for a reason the user could have been told up front. It reads the target (sysfs, mount
//! tables) but writes nothing: creating a missing file happens only after resolution succeeds.

use crate::cli::{OnError, OutputFormat, RunArgs};
use crate::engine::null::NullOptions;
use crate::engine::uring::UringOptions;
use crate::target::{Target, TargetError, TargetKind};
use crate::units::{self, SizeOrPercent, format_size};
use crate::verify::GenTable;
use crate::worker::ErrorPolicy;
use crate::workload::bssplit::BsSplit;
use crate::workload::{RwMode, WorkloadSpec};
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
/// Default seed: fixed, so that two runs issue the same offsets unless told otherwise (fio's
/// randrepeat=1).
pub const DEFAULT_SEED: u64 = 0x6e76_6d65_6265_6e63;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("--engine '{0}' is not an engine; use uring, null, null:lat=DURATION or spdk")]
    UnknownEngine(String),
    #[error(
        "--engine spdk: this nvmebench was built without SPDK; rebuild with `cargo build --release --features spdk` (see the README)"
    )]
    SpdkNotCompiled,
    #[error("--engine spdk needs a controller; add --trid 'trtype:PCIe traddr:0000:01:00.0' or a fabrics transport ID")]
    SpdkNeedsTrid,
    #[error("{0}")]
    Engine(String),
    #[error("--engine '{spec}': {problem}")]
    EngineOption { spec: String, problem: String },
    #[error(
        "--{option} {value} is not a multiple of {path}'s logical block size ({lbs} bytes), which O_DIRECT requires; use a multiple of {lbs}"
    )]
    NotBlockMultiple { option: &'static str, value: String, path: String, lbs: u64 },
    #[error("--{option}: {message}")]
    Invalid { option: &'static str, message: String },
    #[error(
        "--offset {offset} plus --size {size} ends at byte {end}, past the end of {path} ({total} bytes); make them smaller"
    )]
    PastEnd { offset: String, size: String, end: u64, total: u64, path: String },
    #[error("the working set ({size} bytes) is smaller than the largest I/O ({bs} bytes); raise --size or lower --bs")]
    WorkingSetTooSmall { size: u64, bs: u64 },
    #[error(
        "core {core} does not exist or is not allowed for this process (allowed: {allowed}); pick cores from that list"
    )]
    NoSuchCore { core: usize, allowed: String },
    #[error("--rwmixread applies only to --rw rw and randrw; drop it, or use --rw randrw")]
    MixWithoutMixedPattern,
    #[error("cannot find the cores this process may run on; pass --cores explicitly")]
    NoCores,
    #[error(
        "no directory for the scratch file supports O_DIRECT (tried {tried}); pass --filename on a disk-backed filesystem"
    )]
    NoScratchDir { tried: String },
    #[error(transparent)]
    Target(#[from] TargetError),
}

/// Which engine, with its options.
#[derive(Clone, Debug, PartialEq)]
pub enum EngineSpec {
    Null(NullOptions),
    Uring(UringOptions),
    /// SPDK's userspace NVMe driver; its options come from the `--trid` and SPDK flags.
    Spdk,
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
            "uring" | "io_uring" => {
                let mut o = UringOptions::default();
                for (k, v) in pairs {
                    match k {
                        "fixedbufs" => o.fixed_buffers = flag(k, v)?,
                        "regfile" => o.registered_file = flag(k, v)?,
                        _ => {
                            return Err(opt_err(format!(
                                "unknown option '{k}'; the uring engine takes fixedbufs=0|1 and regfile=0|1"
                            )));
                        }
                    }
                }
                Ok(EngineSpec::Uring(o))
            }
            "spdk" if !opts.is_empty() => {
                Err(opt_err("the spdk engine takes its options as flags (--trid, --io-queue-size, ...)".into()))
            }
            "spdk" if cfg!(feature = "spdk") => Ok(EngineSpec::Spdk),
            "spdk" => Err(ConfigError::SpdkNotCompiled),
            _ => Err(ConfigError::UnknownEngine(text.into())),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            EngineSpec::Null(_) => "null",
            EngineSpec::Uring(_) => "uring",
            EngineSpec::Spdk => "spdk",
        }
    }

    /// Whether the engine touches a target at all.
    pub fn needs_target(&self) -> bool {
        !matches!(self, EngineSpec::Null(_))
    }
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
        Err(e) => Err(ConfigError::Invalid {
            option,
            message: format!(
                "{} was {:.1} s ago; pick a moment still ahead when every host starts, like $(( $(date +%s) + 15 ))",
                shown(at),
                e.duration().as_secs_f64()
            ),
        }),
        Ok(ahead) if ahead > MAX_START_AHEAD => Err(ConfigError::Invalid {
            option,
            message: format!(
                "{} is {:.1} hours away; give UNIX seconds (date +%s), at most {} hours ahead",
                shown(at),
                ahead.as_secs_f64() / 3600.0,
                MAX_START_AHEAD.as_secs() / 3600
            ),
        }),
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
    /// Where to load and save the generation table.
    pub state_path: Option<PathBuf>,
    /// The table loaded from `state_path`, if it existed.
    pub known: Option<std::sync::Arc<GenTable>>,
}

/// Largest generation table `--verify` may allocate (4 bytes per unit).
pub const VERIFY_TABLE_MAX_BYTES: u64 = 8 << 30;

/// Checks `--verify` against the engine and workload and loads `--verify-state`; returns the
/// verification set-up and the seed the state was written with.
#[allow(clippy::too_many_arguments)]
fn resolve_verify(
    args: &RunArgs,
    engine: &EngineSpec,
    bs_read: &BsSplit,
    bs_write: &BsSplit,
    align: u64,
    lbs: u64,
    offset: u64,
    size: u64,
) -> Result<(Option<VerifyConfig>, Option<u64>), ConfigError> {
    if !args.verify {
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
    let mut known = None;
    let mut seed = None;
    if let Some(p) = args.verify_state.as_ref().filter(|p| p.exists()) {
        let (t, s) = GenTable::load(p).map_err(|m| invalid("verify-state", m))?;
        let (start, bytes, u) = t.span();
        if u != unit || start < offset || start + bytes > offset + size {
            return Err(invalid(
                "verify-state",
                format!(
                    "{} covers bytes {start}..{} in {u}-byte units, not this run's working set ({offset}..{} in {unit}-byte units); use the first run's --offset, --size and block sizes",
                    p.display(),
                    start + bytes,
                    offset + size
                ),
            ));
        }
        if args.seed.is_some_and(|given| given != s) {
            return Err(invalid(
                "verify-state",
                format!("{} was written with --seed {s}; drop --seed or pass that one", p.display()),
            ));
        }
        known = Some(std::sync::Arc::new(t));
        seed = Some(s);
    }
    Ok((Some(VerifyConfig { unit, state_path: args.verify_state.clone(), known }), seed))
}

/// Supplies the target of engines that attach devices themselves, given the worker cores.
pub type TargetAttach<'a> = &'a mut dyn FnMut(&[usize]) -> Result<Target, ConfigError>;

/// A fully resolved run.
#[derive(Clone, Debug, Serialize)]
pub struct RunConfig {
    pub engine: EngineSpec,
    /// `None` only for the null engine without a target.
    pub target: Option<Target>,
    /// The target is a scratch file of nvmebench's own, removed after the run.
    pub scratch: bool,
    pub workload: WorkloadSpec,
    /// One worker per entry, pinned to that core.
    pub cores: Vec<usize>,
    pub queue_depth: u32,
    #[serde(serialize_with = "opt_secs")]
    pub runtime: Option<Duration>,
    #[serde(serialize_with = "secs")]
    pub ramp: Duration,
    pub ios: Option<u64>,
    pub rate_iops: Option<f64>,
    #[serde(serialize_with = "secs")]
    pub interval: Duration,
    pub percentiles: Vec<f64>,
    pub on_error: ErrorPolicy,
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
}

impl RunConfig {
    /// Resolves flags against the machine and the target. Writes nothing.
    pub fn resolve(args: &RunArgs) -> Result<RunConfig, ConfigError> {
        RunConfig::resolve_with(args, None)
    }

    /// As [`resolve`](Self::resolve), with the target supplied by `attach` (given the worker cores)
    /// for engines whose target is not a path: SPDK attaches its controllers there. `attach` runs
    /// only after every flag has been checked that can be checked without the target.
    pub fn resolve_with(args: &RunArgs, attach: Option<TargetAttach<'_>>) -> Result<RunConfig, ConfigError> {
        let engine = EngineSpec::parse(&args.engine)?;
        if engine == EngineSpec::Spdk && args.spdk.trids.is_empty() {
            return Err(ConfigError::SpdkNeedsTrid);
        }
        let rw = args.rw;
        let cores = resolve_cores(args.cores.as_ref().map(|c| &c.0[..]), args.jobs)?;

        // Directions and block sizes.
        let read_percent = match (rw, args.rwmixread) {
            (RwMode::Rw | RwMode::RandRw, m) => m.unwrap_or(DEFAULT_RWMIXREAD),
            (_, Some(_)) => return Err(ConfigError::MixWithoutMixedPattern),
            (RwMode::Read | RwMode::RandRead, None) => 100,
            (RwMode::Write | RwMode::RandWrite, None) => 0,
        };
        let (bs_read, bs_write) = match (&args.bs, &args.bssplit) {
            (_, Some(split)) => BsSplit::parse_pair(split).map_err(|m| invalid("bssplit", m))?,
            (Some(bs), None) => parse_bs_pair(bs)?,
            (None, None) => (BsSplit::single(DEFAULT_BS), BsSplit::single(DEFAULT_BS)),
        };

        // The target.
        let (target, scratch) = match (&args.filename, engine.needs_target()) {
            _ if engine == EngineSpec::Spdk => {
                let attach =
                    attach.ok_or_else(|| ConfigError::Engine("the spdk engine needs an attach step".into()))?;
                (Some(attach(&cores)?), false)
            }
            (Some(path), _) => {
                let create = match args.size {
                    Some(SizeOrPercent::Bytes(b)) => Some(b + args.offset.map_or(0, |o| o.resolve(0))),
                    _ => None,
                };
                (Some(Target::inspect(path, create)?), false)
            }
            (None, false) => (None, false),
            (None, true) => (Some(scratch_target()?), true),
        };
        let (total, lbs, path) = match &target {
            Some(t) => (t.size_bytes, t.logical_block_bytes, t.path.display().to_string()),
            None => (NULL_DEVICE_BYTES, 512, "the null device".to_string()),
        };

        let direct = target.is_some();
        let mut used: Vec<(&'static str, &BsSplit)> = Vec::new();
        if read_percent > 0 {
            used.push((if args.bssplit.is_some() { "bssplit" } else { "bs" }, &bs_read));
        }
        if read_percent < 100 {
            used.push((if args.bssplit.is_some() { "bssplit" } else { "bs" }, &bs_write));
        }
        if direct {
            for (option, split) in &used {
                if let Some(e) = split.entries.iter().find(|e| u64::from(e.bytes) % lbs != 0) {
                    return Err(ConfigError::NotBlockMultiple {
                        option,
                        value: format_size(u64::from(e.bytes)),
                        path: path.clone(),
                        lbs,
                    });
                }
            }
        }
        let min_bs = used.iter().map(|(_, s)| s.min_bytes()).min().unwrap_or(DEFAULT_BS);
        let max_bs = used.iter().map(|(_, s)| s.max_bytes()).max().unwrap_or(DEFAULT_BS);
        let align = args.align.unwrap_or(u64::from(min_bs));
        if align == 0 {
            return Err(invalid("align", "0 is not an alignment; use a size such as 4k".into()));
        }
        if direct && align % lbs != 0 {
            return Err(ConfigError::NotBlockMultiple { option: "align", value: format_size(align), path, lbs });
        }

        // The working set.
        let offset = args.offset.map_or(0, |o| o.resolve(total));
        let size = match args.size {
            Some(s) => s.resolve(total),
            None => total.saturating_sub(offset),
        };
        if direct && offset % lbs != 0 {
            return Err(ConfigError::NotBlockMultiple { option: "offset", value: format_size(offset), path, lbs });
        }
        let end = offset.saturating_add(size);
        if end > total {
            return Err(ConfigError::PastEnd {
                offset: args.offset.map_or("0".into(), |o| o.to_string()),
                size: args.size.map_or("(rest)".into(), |s| s.to_string()),
                end,
                total,
                path,
            });
        }
        if size < u64::from(max_bs) {
            return Err(ConfigError::WorkingSetTooSmall { size, bs: u64::from(max_bs) });
        }

        let (verify, state_seed) = resolve_verify(args, &engine, &bs_read, &bs_write, align, lbs, offset, size)?;
        let workload = WorkloadSpec {
            rw,
            read_percent,
            bs_read,
            bs_write,
            align_bytes: align,
            range_start: offset,
            range_bytes: size,
            random_dist: args.random_dist,
            seed: args.seed.or(state_seed).unwrap_or(DEFAULT_SEED),
        };

        // Safety of writes: refuse before anything is written.
        if let Some(t) = &target {
            if workload.writes() {
                t.check_writable(args.allow_destroy)?;
            }
            t.check_direct_io()?;
        }

        let runtime = match (args.time, args.ios) {
            (Some(t), _) => Some(t),
            (None, Some(_)) => None,
            (None, None) if scratch => Some(SCRATCH_RUNTIME),
            (None, None) => Some(DEFAULT_RUNTIME),
        };

        Ok(RunConfig {
            engine,
            target,
            scratch,
            workload,
            cores,
            queue_depth: args.qd,
            runtime,
            ramp: args.ramp.unwrap_or(Duration::ZERO),
            ios: args.ios,
            rate_iops: args.rate_iops,
            interval: args.interval,
            percentiles: args.percentiles.0.clone(),
            on_error: match args.on_error {
                OnError::Stop => ErrorPolicy::Stop,
                OnError::Continue => ErrorPolicy::Continue,
            },
            output: args.output,
            json_path: args.json.clone(),
            allow_destroy: args.allow_destroy,
            drain_timeout: args.drain_timeout,
            quiet: args.quiet,
            verify,
            start_at: resolve_start(args, SystemTime::now())?,
        })
    }

    /// How many workers share each core (1 when every worker has its own).
    pub fn workers_per_core(&self) -> usize {
        let mut c = self.cores.clone();
        c.sort_unstable();
        c.dedup();
        self.cores.len().div_ceil(c.len().max(1))
    }
}

fn invalid(option: &'static str, message: String) -> ConfigError {
    ConfigError::Invalid { option, message }
}

/// `--bs 4k` or `--bs 4k,64k` (read, write).
fn parse_bs_pair(text: &str) -> Result<(BsSplit, BsSplit), ConfigError> {
    let one = |t: &str| -> Result<BsSplit, ConfigError> {
        let b = units::parse_size(t).map_err(|m| invalid("bs", m))?;
        let b = u32::try_from(b)
            .ok()
            .filter(|&b| b > 0)
            .ok_or_else(|| invalid("bs", format!("'{t}' is not a block size; use 1 byte to 4g, such as 4k")))?;
        Ok(BsSplit::single(b))
    };
    match text.split_once(',') {
        Some((r, w)) => Ok((one(r)?, one(w)?)),
        None => {
            let s = one(text)?;
            Ok((s.clone(), s))
        }
    }
}

/// One worker per listed core, or `jobs` workers over the allowed cores in order. More workers than
/// cores share cores round-robin (the caller warns).
fn resolve_cores(cores: Option<&[usize]>, jobs: Option<usize>) -> Result<Vec<usize>, ConfigError> {
    let mut allowed: Vec<usize> =
        core_affinity::get_core_ids().ok_or(ConfigError::NoCores)?.into_iter().map(|c| c.id).collect();
    allowed.sort_unstable();
    if allowed.is_empty() {
        return Err(ConfigError::NoCores);
    }
    match cores {
        Some(list) => {
            if let Some(&core) = list.iter().find(|c| !allowed.contains(c)) {
                return Err(ConfigError::NoSuchCore { core, allowed: format_core_list(&allowed) });
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
    Err(ConfigError::NoScratchDir {
        tried: dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", "),
    })
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
        assert_eq!(u, EngineSpec::Uring(UringOptions { fixed_buffers: false, registered_file: true }));
        assert_eq!(
            EngineSpec::parse("spdk2").unwrap_err().to_string(),
            "--engine 'spdk2' is not an engine; use uring, null, null:lat=DURATION or spdk"
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

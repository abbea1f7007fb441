//! fio's option words and what each one becomes here: `run` flags, an engine option, nothing (it
//! cannot change a measurement), or a part of a job file's plan.
//!
//! One table serves the command line and job files, so `--rwmixwrite=30` and `rwmixwrite=30` mean
//! the same. Values are translated, not validated: the `run` flags they become are parsed by clap,
//! so every check stays where it already is. An option that is not in the table is not taken.

use crate::options::{ErrorFilter, ErrorType, parse_errnos};
use crate::units;

/// What one fio option becomes.
#[derive(Clone, Debug, PartialEq)]
pub enum Mapped {
    /// Flags for `nvmebench run`.
    Args(Vec<String>),
    /// An option of the io_uring engines (`poll=1`), added to the engine spec.
    EngineOption(String),
    /// Accepted; it cannot change a measurement here (listed in the run's notes).
    NoOp,
    /// Shapes a job file's plan rather than one run.
    Plan(PlanOption),
}

/// The options that act on a job file's plan.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PlanOption {
    /// `stonewall`, `wait_for_previous`: start after every earlier section has finished.
    Stonewall,
    /// `time_based` (or `time_based=0`).
    TimeBased(bool),
    /// `io_size`: bytes each job transfers unless `time_based`.
    IoSize(u64),
    /// `io_size=N%`: that share of each of the job's files (its working set there), 1 to 100.
    IoSizePercent(u64),
    /// `runtime=0`: no runtime (fio's default), replacing one set before it.
    NoRuntime,
    /// `norandommap` (or `norandommap=0`, fio's default: keep the map).
    NoRandomMap(bool),
    /// `loops`: the job's I/O pass (its size, or one pass over its files) that many times; fio
    /// takes 0 as 1.
    Loops(u64),
    /// `new_group`: the job starts a new reporting group (fio's `groupid`), without waiting for
    /// the jobs before it as `stonewall` does.
    NewGroup,
    /// `flow`, `flow_id`, `flow_sleep`: the job's part in fio's flow control.
    Flow(FlowOption),
}

/// One of fio's flow-control options, as a number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowOption {
    /// `flow`: the job's weight, 0 (no flow, fio's default) to fio's largest, 1000.
    Weight(u32),
    /// `flow_id`: which flow (0, one flow for all, by default).
    Id(u32),
    /// `flow_sleep`: microseconds to sleep when held back (0, fio's default: check again at once).
    SleepUs(u64),
}

/// The options accepted because they cannot change a measurement here, with the reason
/// (docs/fio.md lists them the same way).
pub const NO_OPS: [(&str, &str); 13] = [
    ("name", "the job's name (used as jobname in fio-shaped JSON)"),
    ("description", "free text"),
    ("thread", "workers are always threads"),
    // fio takes an option by the start of its name (parse.c), so threads=1 is its thread.
    ("threads", "fio reads it as thread, and workers are always threads"),
    ("random_generator", "random offsets come from nvmebench's own generator; the random map covers what fio's does"),
    ("invalidate", "a buffered job's cached pages are always dropped at open (fio's default)"),
    ("clat_percentiles", "percentiles are always reported"),
    (
        "disable_bw_measurement",
        "fio 3.33 still samples bandwidth for its JSON and its averaged logs, and nvmebench's logs are always averaged",
    ),
    ("cpus_allowed_policy", "each worker is pinned to one core of the list, in turn"),
    ("kb_base", "only kb_base=1024 (fio's default) is taken"),
    ("unified_rw_reporting", "only unified_rw_reporting=0 (fio's default) is taken"),
    ("cmd_type", "only cmd_type=nvme (fio's default) is taken"),
    ("error_dump", "only error_dump=0 (fio's default) is taken"),
];

pub use crate::report::fio::{ENGINES, fio_engine_name};

/// fio's name for one of `run`'s flags (its long name), for messages about an option the job file
/// did not write: the table's word that becomes this flag, or the flag with underscores.
pub fn fio_name(flag: &str) -> String {
    let word = match flag {
        "engine" => "ioengine",
        "qd" => "iodepth",
        "jobs" => "numjobs",
        "time" => "runtime",
        "ramp" => "ramp_time",
        "align" => "blockalign",
        "random-dist" => "random_distribution",
        "seed" => "randseed",
        "start-delay" => "startdelay",
        "percentiles" => "percentile_list",
        // In a job file rate_iops is fio's, per job; the total has no fio word.
        "rate-iops" => "rate_iops",
        other => return other.replace('-', "_"),
    };
    word.into()
}

/// fio's option for an option of the io_uring engine spec (`poll` is fio's `hipri`): the table's
/// engine options read back, for messages about one the job file did not write.
pub fn fio_engine_option(key: &str) -> &str {
    match key {
        "poll" => "hipri",
        "sqpoll" => "sqthread_poll",
        "sqpoll_cpu" => "sqthread_poll_cpu",
        "regfile" => "registerfiles",
        other => other,
    }
}

/// Whether fio's option `key` is a flag (bare, or `=0`/`=1`) rather than one that takes a value.
pub fn is_flag(key: &str) -> bool {
    matches!(
        key,
        "time_based"
            | "norandommap"
            | "group_reporting"
            | "thread"
            | "threads"
            | "new_group"
            | "stonewall"
            | "wait_for_previous"
            | "direct"
            | "buffered"
            | "randrepeat"
            | "hipri"
            | "sqthread_poll"
            | "fixedbufs"
            | "registerfiles"
            | "invalidate"
            | "clat_percentiles"
            | "lat_percentiles"
            | "per_job_logs"
            | "disable_slat"
            | "disable_clat"
            | "disable_lat"
            | "gtod_reduce"
            | "disable_bw_measurement"
            | "disable_bw"
            | "unified_rw_reporting"
            | "exitall"
    )
}

/// The largest number of sizes `bsrange` may expand to.
const BSRANGE_MAX_SIZES: u64 = 4096;

/// Translates fio option `key` (with `value`, or bare) into what it means here; `Ok(None)` when
/// the option is not one nvmebench takes.
///
/// # Errors
/// A sentence when the option is known but this value cannot be honoured (such as `direct=0`).
pub fn map(key: &str, value: Option<&str>) -> Result<Option<Mapped>, String> {
    let v = value.unwrap_or("").trim();
    let arg = |flag: &str, val: &str| Ok(Some(Mapped::Args(vec![format!("--{flag}={val}")])));
    let flag_on = || -> Result<bool, String> {
        match v {
            "" | "1" | "true" | "on" => Ok(true),
            "0" | "false" | "off" => Ok(false),
            _ => Err(format!("{key}={v} is not 0 or 1")),
        }
    };
    // fio's FIO_OPT_BOOL options take a value: fio refuses them bare ("requires an argument").
    let fio_bool = || -> Result<bool, String> {
        if v.is_empty() {
            return Err(format!("{key} needs a value, as in fio (which refuses it bare); write {key}=1 or {key}=0"));
        }
        flag_on()
    };
    let only = |want: &str, why: &str| -> Result<Option<Mapped>, String> {
        if v.is_empty() || v == want {
            Ok(Some(Mapped::NoOp))
        } else {
            Err(format!("{key}={v}: {why}; remove it, or write {key}={want}"))
        }
    };
    match key {
        "rw" | "readwrite" => {
            let (pattern, modifier) = v.split_once(':').map_or((v, None), |(p, m)| (p, Some(m)));
            let pattern = if pattern == "readwrite" { "rw" } else { pattern };
            match modifier {
                None => arg("rw", pattern),
                // fio's random patterns take ':N' as a count of sequential I/Os per random offset.
                Some(_) if pattern.starts_with("rand") => Err(format!(
                    "{key}={v}: ':N' after a random pattern (N sequential I/Os per random offset in fio) is not taken; write {key}={pattern}"
                )),
                Some(m) => Ok(Some(Mapped::Args(vec![format!("--rw={pattern}"), format!("--seq-add={m}")]))),
            }
        }
        "rwmixread" => arg("rwmixread", v),
        "rwmixwrite" => {
            let w: u32 = v
                .parse()
                .ok()
                .filter(|w| *w <= 100)
                .ok_or_else(|| format!("rwmixwrite={v} is not a percentage; use a whole number from 0 to 100"))?;
            arg("rwmixread", &(100 - w).to_string())
        }
        "bs" | "blocksize" => arg("bs", v),
        "bssplit" => arg("bssplit", v),
        "bsrange" | "blocksize_range" => arg("bssplit", &bsrange_to_bssplit(v)?),
        "blockalign" | "ba" => arg("align", v),
        "iodepth" => arg("qd", v),
        "numjobs" => arg("jobs", v),
        "runtime" | "timeout" => match fio_time(key, v, TimeUnit::Seconds)? {
            d if d.is_zero() => Ok(Some(Mapped::Plan(PlanOption::NoRuntime))),
            d => arg("time", &format!("{}us", d.as_micros())),
        },
        "ramp_time" => arg("ramp", &format!("{}us", fio_time(key, v, TimeUnit::Seconds)?.as_micros())),
        "size" => arg("size", v),
        "offset" => arg("offset", v),
        "offset_increment" => arg("offset_increment", v),
        "buffer_pattern" => arg("buffer-pattern", v),
        "filename" => arg("filename", v),
        "random_distribution" => arg("random-dist", v),
        "randseed" => arg("seed", v),
        "randrepeat" => {
            if flag_on()? {
                Ok(Some(Mapped::NoOp))
            } else {
                // fio seeds from the clock when told not to repeat; so does this.
                let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
                arg("seed", &(now.as_nanos() as u64).to_string())
            }
        }
        "startdelay" => arg("start-delay", &format!("{}us", fio_time(key, v, TimeUnit::Seconds)?.as_micros())),
        "rate_iops" => arg("rate_iops", v),
        "rate" => arg("rate", v),
        "rate_process" => arg("rate-process", v),
        "thinktime" | "thinktime_spin" => {
            let flag = key.replace('_', "-");
            arg(&flag, &format!("{}us", fio_time(key, v, TimeUnit::Micros)?.as_micros()))
        }
        "thinktime_blocks" => arg("thinktime-blocks", v),
        "thinktime_blocks_type" => arg("thinktime-blocks-type", v),
        "buffer_compress_percentage" => arg("buffer-compress-percentage", v),
        "dedupe_percentage" => arg("dedupe-percentage", v),
        "dedupe_mode" => arg("dedupe-mode", v),
        "dedupe_working_set_percentage" => arg("dedupe-working-set-percentage", v),
        "dedupe_global" => arg("dedupe_global", if fio_bool()? { "1" } else { "0" }),
        "prio" | "prioclass" | "cmdprio_percentage" | "cmdprio_class" | "cmdprio" | "cmdprio_bssplit" => arg(key, v),
        "log_prio" => arg("log_prio", if fio_bool()? { "1" } else { "0" }),
        // fio keeps latency_target and latency_window in microseconds unless a unit says otherwise.
        "latency_target" | "latency_window" => {
            arg(key, &format!("{}ns", fio_time(key, v, TimeUnit::Micros)?.as_nanos()))
        }
        "latency_percentile" => arg(key, v),
        "latency_run" => arg(key, if fio_bool()? { "1" } else { "0" }),
        "number_ios" => arg("number_ios", v),
        "zonemode" => match v {
            "zbd" => Err(
                "zonemode=zbd is fio's mode for zoned block devices (zone resets, write pointers, open-zone limits), which nvmebench does not drive; remove it, or use zonemode=strided with zonesize and zoneskip to visit a disk in zones".into(),
            ),
            _ => arg("zonemode", v),
        },
        "zonesize" | "zonerange" | "zoneskip" => arg(key, v),
        // fio turns exitall on for every job whatever value it is given (options.c's
        // str_exitall_cb), so exitall=0 would not mean what it says.
        "exitall" => match v {
            "" | "1" => arg("exitall", "1"),
            _ => Err(format!(
                "exitall={v}: fio turns exitall on for every job whatever its value; write exitall to have it, or remove it"
            )),
        },
        "exit_what" => arg("exit_what", v),
        "ss" | "steadystate" => {
            super::steady::Spec::parse(v, std::time::Duration::ZERO, std::time::Duration::ZERO)?;
            arg("ss", v)
        }
        "ss_dur" | "steadystate_duration" => match fio_time(key, v, TimeUnit::Seconds)? {
            d if !d.is_zero() && d.subsec_nanos() != 0 => Err(format!(
                "{key}={v}: fio keeps whole seconds of it and would take this as {}s; write whole seconds, like {key}={}s",
                d.as_secs(),
                d.as_secs().max(1)
            )),
            d => arg("ss_dur", &format!("{}s", d.as_secs())),
        },
        "ss_ramp" | "steadystate_ramp_time" => {
            arg("ss_ramp", &format!("{}us", fio_time(key, v, TimeUnit::Seconds)?.as_micros()))
        }
        "log_offset" => arg("log_offset", if fio_bool()? { "1" } else { "0" }),
        "cpus_allowed" => arg("cpus_allowed", v),
        "cpumask" => {
            let mask = parse_mask(v).ok_or_else(|| format!("cpumask={v} is not a CPU mask; write it like 0xf"))?;
            arg("cpus_allowed", &format!("{mask:#x}"))
        }
        "percentile_list" => arg("percentiles", &v.replace(':', ",")),
        // fio's other synchronous engines do the same I/O, one at a time, by another call.
        "ioengine" if SYNC_ENGINES.contains(&v) => arg("engine", "psync"),
        "ioengine" => {
            let ours = ENGINES.iter().find(|(fio, _)| *fio == v).map(|(_, ours)| *ours).ok_or_else(|| {
                format!("ioengine={v} is not one of nvmebench's engines; use io_uring, io_uring_cmd, libaio, posixaio, psync, falloc, ftruncate, null or spdk")
            })?;
            // fio's io_uring defaults: no registered buffers or file; options below turn them on.
            let spec = if ours.starts_with("uring") { format!("{ours}:fixedbufs=0,regfile=0") } else { ours.into() };
            arg("engine", &spec)
        }
        "hipri" => Ok(Some(if flag_on()? { Mapped::EngineOption("poll=1".into()) } else { Mapped::NoOp })),
        "sqthread_poll" => Ok(Some(if flag_on()? { Mapped::EngineOption("sqpoll=1".into()) } else { Mapped::NoOp })),
        "sqthread_poll_cpu" => Ok(Some(Mapped::EngineOption(format!("sqpoll_cpu={v}")))),
        "fixedbufs" => Ok(Some(Mapped::EngineOption(format!("fixedbufs={}", u8::from(flag_on()?))))),
        "registerfiles" => Ok(Some(Mapped::EngineOption(format!("regfile={}", u8::from(flag_on()?))))),
        // fio's default is direct=0 (a job file's default here too, see `plan`).
        "direct" => arg("buffered", if flag_on()? { "false" } else { "true" }),
        "buffered" => arg("buffered", if flag_on()? { "true" } else { "false" }),
        "invalidate" => only(
            "1",
            "a buffered job's cached pages are always dropped when its file is opened, as fio's default drops them",
        ),
        "write_bw_log" | "write_iops_log" | "write_lat_log" => arg(&key.replace('_', "-"), v),
        "log_avg_msec" => arg("log-avg-msec", v),
        "per_job_logs" => arg("per_job_logs", if flag_on()? { "1" } else { "0" }),
        "stonewall" | "wait_for_previous" => {
            Ok(Some(if flag_on()? { Mapped::Plan(PlanOption::Stonewall) } else { Mapped::NoOp }))
        }
        "time_based" => Ok(Some(Mapped::Plan(PlanOption::TimeBased(flag_on()?)))),
        "norandommap" => Ok(Some(Mapped::Plan(PlanOption::NoRandomMap(flag_on()?)))),
        "random_generator" if !matches!(v, "tausworthe" | "lfsr" | "tausworthe64") => Err(format!(
            "{key}={v} is not one of fio's generators; write tausworthe, lfsr or tausworthe64, or remove it"
        )),
        // fio's default: the job ends at its first error.
        "loops" => {
            let n: u64 = v
                .parse()
                .map_err(|_| format!("loops={v} is not a number of passes; write a whole number, like loops=2"))?;
            Ok(Some(Mapped::Plan(PlanOption::Loops(n.max(1)))))
        }
        "io_size" | "io_limit" if v.ends_with('%') => {
            let p = v.trim_end_matches('%').trim().parse::<u64>().ok().filter(|p| (1..=100).contains(p));
            let p = p.ok_or_else(|| {
                format!("{key}={v} is not a share fio takes; write a whole percentage from 1 to 100, like {key}=50%")
            })?;
            Ok(Some(Mapped::Plan(PlanOption::IoSizePercent(p))))
        }
        "io_size" | "io_limit" => {
            let bytes = units::parse_size(v).map_err(|m| format!("{key}={v}: {m}"))?;
            Ok(Some(Mapped::Plan(PlanOption::IoSize(bytes))))
        }
        "flow" | "flow_id" | "flow_sleep" => {
            let n: u64 = v.parse().map_err(|_| format!("{key}={v} is not a whole number; write it like {key}=1"))?;
            let max = if key == "flow" { u64::from(crate::workload::flow::MAX_WEIGHT) } else { u64::from(u32::MAX) };
            if n > max {
                return Err(format!("{key}={v} is above fio's largest, {max}"));
            }
            let n32 = n as u32;
            Ok(Some(Mapped::Plan(PlanOption::Flow(match key {
                "flow" => FlowOption::Weight(n32),
                "flow_id" => FlowOption::Id(n32),
                _ => FlowOption::SleepUs(n),
            }))))
        }
        "verify" => match v {
            // fio's default: no verification.
            "0" | "none" => Ok(Some(Mapped::NoOp)),
            m if FIO_VERIFY_METHODS.contains(&m) => arg("verify", "true"),
            "null" | "pattern" => Err(format!(
                "verify={v} is not taken (fio's null only pretends to verify, and pattern needs verify_pattern, which nvmebench does not take); write verify=md5 for nvmebench's own check, or verify=0"
            )),
            "" => {
                Err("verify needs a method, as in fio; write verify=md5 (or crc32c, sha256, meta, ...), or verify=0"
                    .into())
            }
            _ => Err(format!(
                "verify={v} is not one of fio's verify methods; write one of {}, or verify=0",
                FIO_VERIFY_METHODS.join(", ")
            )),
        },
        "kb_base" => only("1024", "only fio's default 1024 is supported"),
        // fio's default logs only the errors that stop a job; 1 logs every continued one too.
        "error_dump" if fio_bool()? => Err(format!(
            "{key}={v}: nvmebench does not log each I/O error (the report counts them by kind); remove it, or write error_dump=0"
        )),
        "error_dump" => Ok(Some(Mapped::NoOp)),
        // fio's default, by the name `fio --cmdhelp` gives it.
        "unified_rw_reporting" if v == "none" || v == "0" => Ok(Some(Mapped::NoOp)),
        "unified_rw_reporting" => only("none", "reads and writes are always reported apart"),
        "cmd_type" => only("nvme", "io_uring_cmd sends NVMe commands only"),
        "clat_percentiles" => only("1", "percentiles are always reported"),
        "lat_percentiles" => arg("lat_percentiles", if flag_on()? { "1" } else { "0" }),
        "group_reporting" => arg("group_reporting", if flag_on()? { "1" } else { "0" }),
        "new_group" => Ok(Some(if flag_on()? { Mapped::Plan(PlanOption::NewGroup) } else { Mapped::NoOp })),
        "disable_slat" | "disable_clat" | "disable_lat" => arg(key, if fio_bool()? { "1" } else { "0" }),
        // fio's callback sets the three and disable_bw_measurement when gtod_reduce=1 is read, so
        // a later disable_lat=0 replaces its part; gtod_reduce=0 leaves them as they are.
        "gtod_reduce" if fio_bool()? => Ok(Some(Mapped::Args(
            ["--disable_slat=1", "--disable_clat=1", "--disable_lat=1", "--disable_bw=1"].map(String::from).to_vec(),
        ))),
        "gtod_reduce" => Ok(Some(Mapped::NoOp)),
        "disable_bw_measurement" | "disable_bw" => arg("disable_bw", if fio_bool()? { "1" } else { "0" }),
        "cpus_allowed_policy" if v == "shared" || v == "split" => Ok(Some(Mapped::NoOp)),
        _ if NO_OPS.iter().any(|(k, _)| *k == key) => Ok(Some(Mapped::NoOp)),
        _ => Ok(None),
    }
}

/// fio's synchronous engines other than psync: `read`/`write` after `lseek` (sync), `preadv`/
/// `pwritev` with one vector (pvsync) and `preadv2`/`pwritev2` (pvsync2). Each does an I/O at a time
/// in one call, as psync's `pread`/`pwrite` do, so each runs as psync, with [`sync_engine_note`].
pub const SYNC_ENGINES: [&str; 3] = ["sync", "pvsync", "pvsync2"];

/// The note for `ioengine=sync` (or pvsync, pvsync2): what differs from fio's engine.
pub fn sync_engine_note(engine: &str) -> String {
    format!(
        "ioengine={engine} runs as psync: the same I/Os, one at a time, by pread/pwrite where fio's {engine} makes {}",
        match engine {
            "sync" => "an lseek and a read or write",
            "pvsync" => "a preadv or pwritev of one vector",
            _ => "a preadv2 or pwritev2 (its hipri is not taken)",
        }
    )
}

/// fio's `continue_on_error` (which sets the type bits, replacing earlier ones) or `ignore_error`
/// (`READ,WRITE,VERIFY` lists of `:`-separated errnos; a list given replaces that type's and sets
/// its bit, an empty one leaves both), applied to the filter the lines before built.
pub fn error_option(mut f: ErrorFilter, key: &str, v: &str) -> Result<ErrorFilter, String> {
    if key == "continue_on_error" {
        f.types = match v {
            "none" | "0" => 0,
            "read" => 1,
            "write" => 2,
            "io" => 3,
            "verify" => 4,
            "all" | "1" => 7,
            _ => {
                return Err(format!(
                    "continue_on_error={v} is not one of fio's (none, read, write, io, verify, all, 0, 1)"
                ));
            }
        };
        return Ok(f);
    }
    let lists: Vec<&str> = v.split(',').collect();
    if lists.len() > ErrorType::ALL.len() {
        return Err(format!(
            "ignore_error={v} has {} lists where fio takes 3 (read, write and verify errors, comma-separated); remove the extra",
            lists.len()
        ));
    }
    for (t, list) in ErrorType::ALL.into_iter().zip(lists) {
        let errnos = parse_errnos(list.trim()).map_err(|m| format!("ignore_error={v}: {m}"))?;
        if !errnos.is_empty() {
            f.allow(t, Some(&errnos)).map_err(|m| format!("ignore_error={v}: {m}"))?;
        }
    }
    Ok(f)
}

/// fio's `verify=` methods that check data (`verify=md5`); each is taken as nvmebench's own check
/// (`--verify`: a header and a payload derived from it in every block), with a note naming the
/// difference.
pub const FIO_VERIFY_METHODS: [&str; 16] = [
    "md5",
    "crc64",
    "crc32c",
    "crc32c-intel",
    "crc32",
    "crc16",
    "crc7",
    "sha1",
    "sha256",
    "sha512",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "xxhash",
    "meta",
];

/// The note for `verify=METHOD`: what nvmebench checks instead of the method.
pub fn verify_note(method: &str) -> String {
    format!(
        "verify={method} is taken as nvmebench's own check: every written block carries its address, a generation and a payload derived from them (not {method}), reads are checked, and everything written is re-read after the run"
    )
}

/// What a fio time value without a unit counts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TimeUnit {
    /// `runtime`, `ramp_time`, `startdelay`.
    Seconds,
    /// `thinktime`, `thinktime_spin`.
    Micros,
}

/// fio's time units (`get_mult_time` in fio's parse.c), in microseconds.
const FIO_TIME_UNITS: [(&str, u64); 6] =
    [("d", 86_400_000_000), ("h", 3_600_000_000), ("m", 60_000_000), ("s", 1_000_000), ("ms", 1_000), ("us", 1)];

/// fio option `key`'s time value `text`, as fio reads it: a whole number (fio's `strtoll` stops at
/// a `.`) times the unit that follows the digits: `d`, `h`, `m`, `s`, `ms` (or `msec`), `us` (or
/// `usec`), in any case, or `unit` without one.
///
/// # Errors
/// A sentence, where fio would read the text as something else than it says: a fraction (fio reads
/// `runtime=0.3` as 0, `1.5ms` as 1 of the default unit, whatever unit follows the fraction), a unit
/// fio does not know (it reads `10sec` and `10min` as 10 microseconds), a range; or no number.
pub fn fio_time(key: &str, text: &str, unit: TimeUnit) -> Result<std::time::Duration, String> {
    let t = text.trim();
    let bare = match unit {
        TimeUnit::Seconds => "seconds",
        TimeUnit::Micros => "microseconds",
    };
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (whole, rest) = t.split_at(digits);
    let not_a_time =
        || format!("{key}={t} is not a time; write a whole number with a unit (d, h, m, s, ms or us; none is {bare})");
    if whole.is_empty() {
        return Err(not_a_time());
    }
    let n: u64 = whole.parse().map_err(|_| not_a_time())?;
    let default_us = if unit == TimeUnit::Seconds { 1_000_000 } else { 1 };
    if let Some(fraction) = rest.strip_prefix('.') {
        let f_digits = fraction.find(|c: char| !c.is_ascii_digit()).unwrap_or(fraction.len());
        let (f, suffix) = fraction.split_at(f_digits);
        let suffix_us = fio_unit_us(suffix, default_us);
        let read = n.saturating_mul(default_us);
        let none = match key {
            "runtime" | "timeout" => "no runtime",
            "ramp_time" => "no ramp",
            "startdelay" => "no delay",
            "thinktime" => "no think time",
            _ => "none",
        };
        let shown = if read == 0 { format!("0 ({none})") } else { fio_time_text(read) };
        let lost = if suffix.is_empty() { String::new() } else { format!(", drops the '{suffix}' after it,") };
        // What the text says, in microseconds; where fio reads just that (`1.0`), it is that.
        let meant = suffix_us.map(|u| (exact_micros(n, f, u), u));
        if let Some((Some(us), _)) = meant.filter(|(us, _)| *us == Some(read)) {
            return Ok(std::time::Duration::from_micros(us));
        }
        // Written in the largest unit it is whole in; a part of a microsecond fio cannot time.
        let fix = match meant {
            Some((Some(us), _)) => format!("{key}={}", fio_time_text(us.max(1))),
            Some((None, u)) => {
                let about = (format!("{n}.{f}").parse::<f64>().unwrap_or(0.0) * u as f64).round().max(1.0);
                format!("a whole number of microseconds, fio's finest unit, like {key}={about}us")
            }
            None => "a whole number with a unit".to_string(),
        };
        return Err(format!(
            "{key}={t}: fio reads a time only up to its '.'{lost} and would take this as {shown}; write {fix}"
        ));
    }
    let mult = match fio_unit_us(rest, default_us) {
        Some(us) => us,
        None if key == "startdelay" && rest.starts_with('-') => {
            return Err(format!(
                "{key}={t}: a range of start delays (fio draws one per job) is not taken here; give one time, like {key}={n}"
            ));
        }
        None if rest.starts_with(|c: char| c.is_ascii_alphabetic()) => {
            return Err(format!(
                "{key}={t}: fio does not know the unit '{rest}' and would read {n} microseconds; write the unit as d, h, m, s, ms or us"
            ));
        }
        None => return Err(not_a_time()),
    };
    let us = n
        .checked_mul(mult)
        .filter(|&us| us <= MAX_FIO_TIME_US)
        .ok_or_else(|| format!("{key}={t} is too long a time"))?;
    Ok(std::time::Duration::from_micros(us))
}

/// Microseconds per unit `suffix` (in any case) as fio reads it, `default_us` for none; `None`
/// for a suffix fio does not know.
fn fio_unit_us(suffix: &str, default_us: u64) -> Option<u64> {
    match suffix.to_ascii_lowercase().as_str() {
        "" => Some(default_us),
        "msec" => Some(1_000),
        "usec" => Some(1),
        s => FIO_TIME_UNITS.iter().find(|(u, _)| *u == s).map(|(_, us)| *us),
    }
}

/// `whole.fraction` (the fraction's decimal digits) times `unit_us`, in microseconds, when that is a
/// whole number of them; `None` when it is not, or is too large to count.
fn exact_micros(whole: u64, fraction: &str, unit_us: u64) -> Option<u64> {
    let f = fraction.trim_end_matches('0');
    // No unit, a day at most (2^13 * 3^3 * 5^8 us), makes more than 13 decimal places (past
    // trailing zeros) whole microseconds; longer fractions would not fit the sums below.
    if f.len() > 18 {
        return None;
    }
    let scale = 10u128.pow(f.len() as u32);
    let part: u128 = if f.is_empty() { 0 } else { f.parse().ok()? };
    let scaled = (u128::from(whole) * scale + part).checked_mul(u128::from(unit_us))?;
    (scaled % scale == 0).then(|| u64::try_from(scaled / scale).ok()).flatten()
}

/// The longest time value taken (what `units::parse_duration` takes: about 31 years).
const MAX_FIO_TIME_US: u64 = 1_000_000_000 * 1_000_000;

/// `us` microseconds in fio's spelling, in the largest unit it is a whole number of (`300ms`).
fn fio_time_text(us: u64) -> String {
    let (unit, per) = FIO_TIME_UNITS.iter().find(|(_, per)| us % per == 0).copied().unwrap_or(("us", 1));
    format!("{}{unit}", us / per)
}

/// `bsrange=4k-16k` (or `READ,WRITE[,TRIM]` ranges) as a bssplit: every multiple of the smallest size up
/// to the largest, equally likely, as fio picks them.
fn bsrange_to_bssplit(text: &str) -> Result<String, String> {
    let one = |r: &str| -> Result<String, String> {
        let bad = || format!("bsrange={text} is not a size range; write it like 4k-16k");
        let (lo, hi) = r.split_once('-').ok_or_else(bad)?;
        let lo = units::parse_size(lo).map_err(|_| bad())?;
        let hi = units::parse_size(hi).map_err(|_| bad())?;
        if lo == 0 || hi < lo {
            return Err(bad());
        }
        let n = hi / lo;
        if n > BSRANGE_MAX_SIZES {
            return Err(format!(
                "bsrange={text} holds {n} sizes; nvmebench takes at most {BSRANGE_MAX_SIZES} (use bssplit)"
            ));
        }
        Ok((1..=n).map(|k| units::format_size(k * lo)).collect::<Vec<_>>().join(":"))
    };
    // Reads, writes, trims; an empty range stays empty (the default size), as in bs.
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return Err(format!("bsrange={text} gives more than three ranges; write READ[,WRITE[,TRIM]]"));
    }
    let out: Result<Vec<String>, String> =
        parts.iter().map(|p| if p.is_empty() { Ok(String::new()) } else { one(p) }).collect();
    Ok(out?.join(","))
}

/// The flags of fio's `filename=`: a path, a `:`-separated list of them (`\\:` for a colon in a
/// name), or an SPDK transport ID in the SPDK fio plugin's spelling
/// (`trtype=PCIe traddr=0000.01.00.0 ns=1`). A job file runs a list as fio does, every job on every
/// file (`plan` adds `--each-worker-all-targets`).
///
/// # Errors
/// None yet; the list itself is split and checked by `config::split_filenames`.
pub fn filename_flags(v: &str) -> Result<Vec<(String, String)>, String> {
    if v.starts_with("trtype=") {
        let pairs: Vec<String> = v
            .split_whitespace()
            .map(|kv| {
                let (k, val) = kv.split_once('=').unwrap_or((kv, ""));
                let val = val.replace("\\:", ":");
                // The plugin writes PCI addresses with dots, because ':' separates file names.
                let val = if k.eq_ignore_ascii_case("traddr") && v.to_ascii_lowercase().contains("trtype=pcie") {
                    pci_with_colons(&val)
                } else {
                    val
                };
                format!("{k}:{val}")
            })
            .collect();
        return Ok(vec![("--trid".into(), pairs.join(" "))]);
    }
    Ok(vec![("--filename".into(), v.to_string())])
}

/// A `--trid` transport ID in the SPDK fio plugin's `filename=` spelling (what
/// [`filename_flags`] reads back): `trtype=PCIe traddr=0000.01.00.0`.
pub fn trid_as_filename(trid: &str) -> String {
    let pcie = trid.to_ascii_lowercase().contains("trtype:pcie");
    trid.split_whitespace()
        .map(|kv| {
            let (k, v) = kv.split_once(':').unwrap_or((kv, ""));
            let v = if k.eq_ignore_ascii_case("traddr") && pcie { v.replace(':', ".") } else { v.replace(':', "\\:") };
            format!("{k}={v}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `word` is a fio option nvmebench takes (in a job file or as `--word`).
pub fn is_fio_option(word: &str) -> bool {
    !matches!(map(word, Some("1")), Ok(None))
}

/// `0000.01.00.0` as `0000:01:00.0`.
fn pci_with_colons(addr: &str) -> String {
    let parts: Vec<&str> = addr.split('.').collect();
    if parts.len() == 4 { format!("{}:{}:{}.{}", parts[0], parts[1], parts[2], parts[3]) } else { addr.to_string() }
}

pub use crate::units::{parse_cpus, parse_mask};

#[cfg(test)]
mod tests {
    use super::*;

    fn args(key: &str, value: Option<&str>) -> Vec<String> {
        match map(key, value).unwrap() {
            Some(Mapped::Args(a)) => a,
            other => panic!("{key}: {other:?}"),
        }
    }

    #[test]
    fn continue_on_error_and_ignore_error_build_fios_filter_in_order() {
        let apply = |lines: &[(&str, &str)]| {
            lines.iter().try_fold(ErrorFilter::none(), |f, (k, v)| error_option(f, k, v)).map(|f| f.flag())
        };
        assert_eq!(apply(&[("continue_on_error", "io")]).unwrap(), "continue:read=5:84,write=5:84");
        assert_eq!(apply(&[("continue_on_error", "1")]).unwrap(), "continue:read=5:84,write=5:84,verify=5:84");
        // A list given sets its type's bit (fio's ignore_error_type); an empty one leaves it.
        assert_eq!(apply(&[("ignore_error", ",ENOSPC:EIO")]).unwrap(), "continue:write=28:5");
        assert_eq!(
            apply(&[("continue_on_error", "read"), ("ignore_error", ",ENOSPC")]).unwrap(),
            "continue:read=5:84,write=28"
        );
        // continue_on_error after it replaces the bits, not the lists.
        assert_eq!(
            apply(&[("ignore_error", "EPERM,ENOSPC"), ("continue_on_error", "write")]).unwrap(),
            "continue:write=28"
        );
        assert_eq!(apply(&[("ignore_error", "EIO"), ("continue_on_error", "none")]).unwrap(), "continue:");
        assert!(apply(&[("continue_on_error", "some")]).unwrap_err().contains("is not one of fio's"));
        assert!(
            apply(&[("ignore_error", "EIO,EBOGUS")])
                .unwrap_err()
                .starts_with("ignore_error=EIO,EBOGUS: 'EBOGUS' is not an errno")
        );
        assert!(apply(&[("ignore_error", "EIO,EIO,EIO,EIO")]).unwrap_err().contains("where fio takes 3"));
        assert_eq!(map("error_dump", Some("0")).unwrap(), Some(Mapped::NoOp), "fio's default");
        assert!(map("error_dump", Some("1")).unwrap_err().ends_with("remove it, or write error_dump=0"));
    }

    #[test]
    fn fio_words_become_run_flags() {
        assert_eq!(args("iodepth", Some("8")), ["--qd=8"]);
        assert_eq!(args("rwmixwrite", Some("30")), ["--rwmixread=70"]);
        assert_eq!(args("percentile_list", Some("99:99.9")), ["--percentiles=99,99.9"]);
        assert_eq!(args("bsrange", Some("4k-16k")), ["--bssplit=4k:8k:12k:16k"]);
        assert_eq!(args("bsrange", Some("4k-8k,512-1k")), ["--bssplit=4k:8k,512:1k"]);
        assert_eq!(args("bsrange", Some("4k-8k,512-1k,1m-2m")), ["--bssplit=4k:8k,512:1k,1m:2m"]);
        assert_eq!(args("bsrange", Some("4k-8k,,1m-2m")), ["--bssplit=4k:8k,,1m:2m"]);
        assert_eq!(args("bs", Some("4k,64k,1m")), ["--bs=4k,64k,1m"]);
        assert_eq!(args("rate", Some("1m,2m,3m")), ["--rate=1m,2m,3m"]);
        assert_eq!(args("ioengine", Some("libaio")), ["--engine=aio"]);
        assert_eq!(args("ioengine", Some("posixaio")), ["--engine=posixaio"]);
        assert_eq!(args("ioengine", Some("io_uring")), ["--engine=uring:fixedbufs=0,regfile=0"]);
        assert_eq!(args("rate", Some("1m,")), ["--rate=1m,"]);
        assert_eq!(args("rate_iops", Some("100,200")), ["--rate_iops=100,200"], "per direction, as rate");
        assert_eq!(args("thinktime", Some("100")), ["--thinktime=100us"], "fio's bare thinktime is µs");
        assert_eq!(args("dedupe_percentage", Some("30")), ["--dedupe-percentage=30"]);
        assert_eq!(args("cmdprio_bssplit", Some("4k/10/1/2")), ["--cmdprio_bssplit=4k/10/1/2"]);
        assert_eq!(args("dedupe_mode", Some("working_set")), ["--dedupe-mode=working_set"]);
        assert_eq!(args("latency_target", Some("500000")), ["--latency_target=500000000ns"], "fio's bare time is µs");
        assert_eq!(args("latency_window", Some("5s")), ["--latency_window=5000000000ns"]);
        assert_eq!(args("latency_percentile", Some("99.9")), ["--latency_percentile=99.9"]);
        assert_eq!(args("latency_run", Some("1")), ["--latency_run=1"]);
        assert!(map("latency_run", None).is_err(), "fio's bool options need a value");
        assert_eq!(args("cpumask", Some("5")), ["--cpus_allowed=0x5"]);
        assert_eq!(args("readwrite", Some("readwrite")), ["--rw=rw"]);
        assert_eq!(map("hipri", None).unwrap(), Some(Mapped::EngineOption("poll=1".into())));
        assert_eq!(map("time_based", None).unwrap(), Some(Mapped::Plan(PlanOption::TimeBased(true))));
        assert_eq!(map("io_size", Some("1m")).unwrap(), Some(Mapped::Plan(PlanOption::IoSize(1 << 20))));
        assert_eq!(map("io_limit", Some("50%")).unwrap(), Some(Mapped::Plan(PlanOption::IoSizePercent(50))));
        assert!(map("io_size", Some("150%")).unwrap_err().ends_with("from 1 to 100, like io_size=50%"));
        assert_eq!(map("stonewall", None).unwrap(), Some(Mapped::Plan(PlanOption::Stonewall)));
        assert_eq!(args("group_reporting", None), ["--group_reporting=1"]);
        assert_eq!(args("group_reporting", Some("0")), ["--group_reporting=0"]);
        assert_eq!(map("new_group", None).unwrap(), Some(Mapped::Plan(PlanOption::NewGroup)));
        assert_eq!(map("new_group", Some("0")).unwrap(), Some(Mapped::NoOp));
        assert_eq!(args("lat_percentiles", None), ["--lat_percentiles=1"]);
        assert_eq!(args("lat_percentiles", Some("0")), ["--lat_percentiles=0"], "fio's default");
        assert_eq!(args("per_job_logs", Some("0")), ["--per_job_logs=0"]);
        assert_eq!(args("per_job_logs", None), ["--per_job_logs=1"], "fio's default");
        assert_eq!(args("direct", Some("1")), ["--buffered=false"]);
        assert_eq!(args("direct", Some("0")), ["--buffered=true"], "fio's page cache");
        assert_eq!(args("buffered", None), ["--buffered=true"]);
        assert_eq!(args("buffered", Some("0")), ["--buffered=false"]);
        assert_eq!(map("invalidate", None).unwrap(), Some(Mapped::NoOp), "fio's default, what is done");
        assert_eq!(map("unified_rw_reporting", Some("none")).unwrap(), Some(Mapped::NoOp), "fio's default");
        assert_eq!(map("iodepth_batch", Some("4")).unwrap(), None);
    }

    /// fio reads a time as a whole number and the unit right after its digits (parse.c's
    /// `str_to_decimal` and `get_mult_time`): where that is not what the text says, it is refused.
    #[test]
    fn time_values_are_read_as_fio_reads_them() {
        assert_eq!(args("runtime", Some("10")), ["--time=10000000us"], "seconds without a unit");
        assert_eq!(args("runtime", Some("300ms")), ["--time=300000us"]);
        assert_eq!(args("timeout", Some("2d")), ["--time=172800000000us"], "fio knows days");
        assert_eq!(args("ramp_time", Some("5S")), ["--ramp=5000000us"], "in any case");
        assert_eq!(args("startdelay", Some("20msec")), ["--start-delay=20000us"]);
        assert_eq!(args("thinktime_spin", Some("1ms")), ["--thinktime-spin=1000us"]);
        assert_eq!(map("runtime", Some("0")).unwrap(), Some(Mapped::Plan(PlanOption::NoRuntime)), "fio's default");
        let e = |k: &str, v: &str| map(k, Some(v)).unwrap_err();
        assert_eq!(
            e("runtime", "0.3"),
            "runtime=0.3: fio reads a time only up to its '.' and would take this as 0 (no runtime); write runtime=300ms"
        );
        assert_eq!(
            e("runtime", "1.5s"),
            "runtime=1.5s: fio reads a time only up to its '.', drops the 's' after it, and would take this as 1s; write runtime=1500ms"
        );
        assert!(e("thinktime", "1.5ms").ends_with("would take this as 1us; write thinktime=1500us"));
        assert!(e("ramp_time", "0.5").ends_with("would take this as 0 (no ramp); write ramp_time=500ms"));
        assert_eq!(
            e("runtime", "10min"),
            "runtime=10min: fio does not know the unit 'min' and would read 10 microseconds; write the unit as d, h, m, s, ms or us"
        );
        assert!(e("runtime", "100ns").contains("does not know the unit 'ns'"));
        assert!(e("startdelay", "1-5").contains("a range of start delays (fio draws one per job) is not taken here"));
        assert_eq!(args("runtime", Some("2.0")), ["--time=2000000us"], "fio reads what it says");
        assert!(e("runtime", "soon").starts_with("runtime=soon is not a time; write a whole number with a unit"));
        assert!(e("thinktime", "-1").ends_with("(d, h, m, s, ms or us; none is microseconds)"));
    }

    /// fio's think times are whole microseconds without a unit; a fraction fio would cut is
    /// refused, however close to a whole number, and the fix is one fio can time.
    #[test]
    fn a_think_time_fraction_fio_would_cut_is_refused() {
        assert_eq!(args("thinktime", Some("100.0")), ["--thinktime=100us"], "fio reads what it says");
        assert_eq!(args("runtime", Some("3.000")), ["--time=3000000us"]);
        let e = |k: &str, v: &str| map(k, Some(v)).unwrap_err();
        assert!(e("runtime", "1.50").ends_with("would take this as 1s; write runtime=1500ms"));
        assert_eq!(
            e("thinktime", "1.4"),
            "thinktime=1.4: fio reads a time only up to its '.' and would take this as 1us; write a whole number of microseconds, fio's finest unit, like thinktime=1us"
        );
        assert!(e("thinktime", "1.5").ends_with("like thinktime=2us"), "{}", e("thinktime", "1.5"));
        assert!(
            e("thinktime_spin", "0.5").ends_with("would take this as 0 (none); write a whole number of microseconds, fio's finest unit, like thinktime_spin=1us"),
            "{}",
            e("thinktime_spin", "0.5")
        );
        assert!(e("runtime", "1.0000001").ends_with(
            "would take this as 1s; write a whole number of microseconds, fio's finest unit, like runtime=1000000us"
        ));
        assert!(e("runtime", "1.0000001s").contains("drops the 's' after it"));
        assert!(e("thinktime", "1.5ms").ends_with("write thinktime=1500us"), "a fraction of a larger unit");
        assert!(
            e("thinktime", "1.000ms")
                .ends_with("drops the 'ms' after it, and would take this as 1us; write thinktime=1ms")
        );
    }

    #[test]
    fn fio_names_map_back_to_their_flags() {
        for flag in [
            "qd",
            "jobs",
            "time",
            "ramp",
            "align",
            "random-dist",
            "seed",
            "start-delay",
            "rw",
            "bs",
            "bssplit",
            "size",
            "offset",
            "rate",
            "rate-process",
            "thinktime",
            "thinktime-spin",
            "thinktime-blocks",
            "thinktime-blocks-type",
            "buffer-compress-percentage",
            "dedupe-percentage",
            "rwmixread",
            "number_ios",
            "cpus_allowed",
        ] {
            let word = fio_name(flag);
            let Some(Mapped::Args(a)) = map(&word, Some("1")).unwrap() else { panic!("{flag}: {word}") };
            assert!(a[0].starts_with(&format!("--{flag}=")), "{flag}: {word} gives {a:?}");
        }
        assert_eq!(fio_name("engine"), "ioengine");
        assert_eq!(fio_name("rate-iops"), "rate_iops");
    }

    #[test]
    fn values_that_cannot_be_honoured_are_refused() {
        let e = |k: &str, v: &str| map(k, Some(v)).unwrap_err();
        assert_eq!(e("direct", "2"), "direct=2 is not 0 or 1");
        assert_eq!(
            e("invalidate", "0"),
            "invalidate=0: a buffered job's cached pages are always dropped when its file is opened, as fio's default drops them; remove it, or write invalidate=1"
        );
        assert!(e("ioengine", "mmap").contains("is not one of nvmebench's engines"));
        for sync in SYNC_ENGINES {
            assert_eq!(args("ioengine", Some(sync)), ["--engine=psync"], "{sync}");
        }
        assert_eq!(
            sync_engine_note("pvsync"),
            "ioengine=pvsync runs as psync: the same I/Os, one at a time, by pread/pwrite where fio's pvsync makes a preadv or pwritev of one vector"
        );
        assert!(e("rwmixwrite", "101").contains("is not a percentage"));
        assert!(e("bsrange", "16k-4k").contains("is not a size range"));
        assert!(e("bsrange", "4k-8k,4k-8k,4k-8k,4k-8k").contains("more than three ranges"));
        assert!(e("kb_base", "1000").contains("only fio's default 1024"));
        assert!(e("unified_rw_reporting", "mixed").ends_with("write unified_rw_reporting=none"));
        assert_eq!(map("unified_rw_reporting", Some("0")).unwrap(), Some(Mapped::NoOp), "fio's default");
        // Every refused value of these says what to write instead.
        assert!(e("clat_percentiles", "0").ends_with("remove it, or write clat_percentiles=1"));
        assert!(e("kb_base", "1000").ends_with("remove it, or write kb_base=1024"));
        assert_eq!(
            e("rw", "randread:8"),
            "rw=randread:8: ':N' after a random pattern (N sequential I/Os per random offset in fio) is not taken; write rw=randread"
        );
        assert_eq!(args("rw", Some("read:-8k")), ["--rw=read", "--seq-add=-8k"], "fio's backwards read");
        assert_eq!(args("readwrite", Some("write:4k")), ["--rw=write", "--seq-add=4k"]);
        assert_eq!(args("verify", Some("sha256")), ["--verify=true"]);
        assert_eq!(map("verify", Some("0")).unwrap(), Some(Mapped::NoOp), "fio's default");
        assert!(e("verify", "pattern").contains("pattern needs verify_pattern"));
        assert!(map("verify", None).unwrap_err().starts_with("verify needs a method"));
    }

    /// fio's disable_slat, disable_clat and disable_lat turn a latency off (fio writes its zeros
    /// for it); gtod_reduce=1 is the three (fio's callback sets them), gtod_reduce=0 leaves them.
    /// fio refuses each bare ("requires an argument"), and so does this.
    #[test]
    fn latency_switches_are_fios() {
        assert_eq!(args("disable_slat", Some("1")), ["--disable_slat=1"]);
        assert_eq!(args("disable_clat", Some("0")), ["--disable_clat=0"], "fio's default");
        assert_eq!(args("disable_lat", Some("true")), ["--disable_lat=1"]);
        assert_eq!(
            args("gtod_reduce", Some("1")),
            ["--disable_slat=1", "--disable_clat=1", "--disable_lat=1", "--disable_bw=1"]
        );
        assert_eq!(map("gtod_reduce", Some("0")).unwrap(), Some(Mapped::NoOp));
        assert_eq!(args("disable_bw_measurement", Some("1")), ["--disable_bw=1"]);
        assert_eq!(args("disable_bw", Some("0")), ["--disable_bw=0"]);
        assert_eq!(
            map("disable_lat", None).unwrap_err(),
            "disable_lat needs a value, as in fio (which refuses it bare); write disable_lat=1 or disable_lat=0"
        );
        assert!(map("gtod_reduce", None).unwrap_err().starts_with("gtod_reduce needs a value"));
        assert!(map("disable_bw", None).unwrap_err().starts_with("disable_bw needs a value"));
        assert_eq!(map("disable_slat", Some("2")).unwrap_err(), "disable_slat=2 is not 0 or 1");
    }

    #[test]
    fn spdk_plugin_filenames_become_trids() {
        let f = filename_flags("trtype=PCIe traddr=0000.01.00.0 ns=1").unwrap();
        assert_eq!(f, [("--trid".to_string(), "trtype:PCIe traddr:0000:01:00.0 ns:1".to_string())]);
        let f =
            filename_flags("trtype=TCP adrfam=IPv4 traddr=127.0.0.1 trsvcid=4420 subnqn=nqn.2016-06.io.spdk\\:cnode1")
                .unwrap();
        assert_eq!(f[0].1, "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:4420 subnqn:nqn.2016-06.io.spdk:cnode1");
        assert_eq!(filename_flags("/dev/a\\:b").unwrap(), [("--filename".to_string(), "/dev/a\\:b".to_string())]);
        for trid in
            ["trtype:PCIe traddr:0000:01:00.0 ns:1", "trtype:TCP traddr:127.0.0.1 subnqn:nqn.2016-06.io.spdk:cnode1"]
        {
            assert_eq!(filename_flags(&trid_as_filename(trid)).unwrap()[0].1, trid, "round trip");
        }
        assert_eq!(trid_as_filename("trtype:PCIe traddr:0000:01:00.0"), "trtype=PCIe traddr=0000.01.00.0");
        assert_eq!(filename_flags("/dev/a:/dev/b").unwrap(), [("--filename".to_string(), "/dev/a:/dev/b".to_string())]);
    }

    #[test]
    fn core_sets_in_fio_and_spdk_spellings() {
        assert_eq!(parse_cpus("0-2,5").unwrap(), [0, 1, 2, 5]);
        assert_eq!(parse_cpus("[1,3]").unwrap(), [1, 3]);
        assert_eq!(parse_cpus("0xa").unwrap(), [1, 3]);
        assert!(parse_cpus("0x0").is_err());
        assert!(parse_cpus("two").is_err());
    }
}

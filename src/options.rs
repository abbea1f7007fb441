//! The values of options that several layers share: the command line parses them, the
//! configuration carries them, the coordinator, suites and reports act on them.
//!
//! They live here, beside the configuration and apart from clap, so that `cli` (the flags as
//! typed) and `config` (the run as resolved) both import them and neither imports the other's
//! option types. Each has a `parse` that says in one sentence what it takes.

use serde::Serialize;

/// `--output`: what goes to stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputFormat {
    Text,
    Json,
}

impl OutputFormat {
    pub const NAMES: [&'static str; 2] = ["text", "json"];

    pub fn parse(text: &str) -> Result<OutputFormat, String> {
        match text {
            "text" => Ok(OutputFormat::Text),
            "json" => Ok(OutputFormat::Json),
            _ => Err(format!("'{text}' is not an output format; use text or json")),
        }
    }
}

/// `--on-error`: what a worker does when an I/O fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnError {
    /// Stop the run at the first I/O error (fio's default).
    Stop,
    /// Count errors and keep going.
    Continue,
    /// fio's `continue_on_error` with `ignore_error`: keep going after the errors the filter
    /// names, stop at any other (`continue:TYPE[=ERRNO:ERRNO],...`).
    ContinueOn(ErrorFilter),
    /// Retry a failed I/O up to N times; one that still fails is counted and the run goes on.
    Retry(u32),
}

// The document says `"continue"` for a filtered policy too: its schema has no place for the filter.
impl Serialize for OnError {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            OnError::Stop => s.serialize_unit_variant("OnError", 0, "stop"),
            OnError::Continue | OnError::ContinueOn(_) => s.serialize_unit_variant("OnError", 1, "continue"),
            OnError::Retry(n) => s.serialize_newtype_variant("OnError", 3, "retry", &n),
        }
    }
}

impl OnError {
    pub fn parse(text: &str) -> Result<OnError, String> {
        match text {
            "stop" => Ok(OnError::Stop),
            "continue" => Ok(OnError::Continue),
            _ if text.starts_with("continue:") => {
                ErrorFilter::parse_flag(&text["continue:".len()..]).map(OnError::ContinueOn)
            }
            _ => text
                .strip_prefix("retry:")
                .and_then(|n| n.parse::<u32>().ok())
                .filter(|n| (1..=1000).contains(n))
                .map(OnError::Retry)
                .ok_or_else(|| {
                    format!("'{text}' is not an error policy; use stop, continue, continue:TYPES or retry:N (N from 1 to 1000)")
                }),
        }
    }
}

/// fio's three error types (td_error.h): which of `continue_on_error`'s bits an error falls under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorType {
    Read = 0,
    Write = 1,
    Verify = 2,
}

impl ErrorType {
    pub const ALL: [ErrorType; 3] = [ErrorType::Read, ErrorType::Write, ErrorType::Verify];

    /// fio's `td_error_type`: EILSEQ is a verify error, any other error of a read a read error,
    /// and everything else (writes, trims, syncs) a write error.
    pub fn of(read: bool, errno: i32) -> ErrorType {
        match read {
            _ if errno == libc::EILSEQ => ErrorType::Verify,
            true => ErrorType::Read,
            false => ErrorType::Write,
        }
    }

    pub fn name(self) -> &'static str {
        ["read", "write", "verify"][self as usize]
    }
}

/// The most errnos one type's list holds (fio's lists are unbounded; a job names a handful).
pub const MAX_ERRNOS: usize = 16;

/// fio's non-fatal errors when `ignore_error` names none for a type (td_error.c).
pub const NON_FATAL: [i32; 2] = [libc::EIO, libc::EILSEQ];

/// What `OnError::ContinueOn` goes on after: the error types whose bit is set, and per type the
/// errnos that are not fatal. Fixed arrays, so the policy stays `Copy` and deciding allocates
/// nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorFilter {
    /// Bit `ErrorType as u8` set: errors of that type may be continued.
    pub types: u8,
    /// Each type's errnos (a Linux errno fits 16 bits; the policy stays small enough to copy).
    lists: [([u16; MAX_ERRNOS], u8); 3],
}

/// Whether a failed I/O stops its job, as fio decides it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Its type's bit is set and its errno is in the type's list: counted, the job goes on.
    Continue,
    /// Its type's bit is set but its errno is not listed: counted (fio's total_err), the job stops.
    StopCounted,
    /// Its type's bit is not set: the job stops, and fio's total_err does not count it.
    Stop,
}

impl ErrorFilter {
    /// No type continued; every list fio's default.
    pub fn none() -> ErrorFilter {
        let mut list = [0; MAX_ERRNOS];
        for (l, e) in list.iter_mut().zip(NON_FATAL) {
            *l = e as u16;
        }
        ErrorFilter { types: 0, lists: [(list, NON_FATAL.len() as u8); 3] }
    }

    /// Continues errors of `t` with fio's default list, or with `errnos` when given.
    pub fn allow(&mut self, t: ErrorType, errnos: Option<&[i32]>) -> Result<(), String> {
        self.types |= 1 << t as u8;
        if let Some(e) = errnos {
            self.set_list(t, e)?;
        }
        Ok(())
    }

    /// Replaces `t`'s list (fio's `ignore_error` for one type).
    pub fn set_list(&mut self, t: ErrorType, errnos: &[i32]) -> Result<(), String> {
        if errnos.len() > MAX_ERRNOS {
            return Err(format!(
                "{} errnos for {} errors are more than the {MAX_ERRNOS} taken",
                errnos.len(),
                t.name()
            ));
        }
        let (list, n) = &mut self.lists[t as usize];
        for (l, &e) in list.iter_mut().zip(errnos) {
            *l = u16::try_from(e).map_err(|_| format!("{e} is not an errno; Linux's are below 200"))?;
        }
        *n = errnos.len() as u8;
        Ok(())
    }

    /// The errnos of `t` that do not stop the job.
    pub fn list(&self, t: ErrorType) -> &[u16] {
        let (list, n) = &self.lists[t as usize];
        &list[..usize::from(*n)]
    }

    /// fio's `td_non_fatal_error` for `errno` failing a read (`read`) or any other I/O. The
    /// caller gives an error without an errno (an NVMe status, a short transfer) as EIO, as
    /// fio's engines report those (`IoError::errno_as_fio`).
    #[cold]
    pub fn verdict(&self, read: bool, errno: i32) -> Verdict {
        let t = ErrorType::of(read, errno);
        if self.types & (1 << t as u8) == 0 {
            Verdict::Stop
        } else if self.list(t).iter().any(|&n| i32::from(n) == errno) {
            Verdict::Continue
        } else {
            Verdict::StopCounted
        }
    }

    /// `--on-error continue:`'s list: `read`, `write`, `verify`, each with `=ERRNO:ERRNO` to
    /// replace fio's default EIO and EILSEQ, comma-separated.
    fn parse_flag(text: &str) -> Result<ErrorFilter, String> {
        let mut f = ErrorFilter::none();
        for part in text.split(',') {
            let (name, errnos) = match part.split_once('=') {
                Some((n, e)) => (n, Some(e)),
                None => (part, None),
            };
            let t = ErrorType::ALL.into_iter().find(|t| t.name() == name).ok_or_else(|| {
                format!("'{name}' in --on-error continue:{text} is not an error type; use read, write or verify, each with =ERRNO:ERRNO if not EIO and EILSEQ")
            })?;
            let list = errnos.map(parse_errnos).transpose()?;
            f.allow(t, list.as_deref())?;
        }
        Ok(f)
    }

    /// The flag form of this filter, which [`OnError::parse`] reads back.
    pub fn flag(&self) -> String {
        let parts: Vec<String> = ErrorType::ALL
            .into_iter()
            .filter(|t| self.types & (1 << *t as u8) != 0)
            .map(|t| {
                let list: Vec<String> = self.list(t).iter().map(u16::to_string).collect();
                format!("{}={}", t.name(), list.join(":"))
            })
            .collect();
        format!("continue:{}", parts.join(","))
    }
}

/// The names fio's `ignore_error` takes (its str2error): errnos 1 to 34, in order.
pub const ERRNO_NAMES: [&str; 34] = [
    "EPERM", "ENOENT", "ESRCH", "EINTR", "EIO", "ENXIO", "E2BIG", "ENOEXEC", "EBADF", "ECHILD", "EAGAIN", "ENOMEM",
    "EACCES", "EFAULT", "ENOTBLK", "EBUSY", "EEXIST", "EXDEV", "ENODEV", "ENOTDIR", "EISDIR", "EINVAL", "ENFILE",
    "EMFILE", "ENOTTY", "ETXTBSY", "EFBIG", "ENOSPC", "ESPIPE", "EROFS", "EMLINK", "EPIPE", "EDOM", "ERANGE",
];

/// A `:`-separated errno list as fio's `ignore_error` reads one type's: names from fio's table, or
/// numbers (a minus sign dropped, as fio drops it). An empty list is refused.
pub fn parse_errnos(text: &str) -> Result<Vec<i32>, String> {
    // fio ends a list at an empty name (a trailing `:`).
    text.split(':')
        .take_while(|e| !e.is_empty())
        .map(|e| {
            let n = match ERRNO_NAMES.iter().position(|n| *n == e) {
                Some(i) => i as i32 + 1,
                None => e.trim_start_matches('-').parse::<i32>().unwrap_or(0),
            };
            if n > 0 {
                Ok(n)
            } else {
                Err(format!(
                    "'{e}' is not an errno fio knows; write a name from EPERM to ERANGE (such as EIO or ENOSPC) or a number, such as 84 for EILSEQ"
                ))
            }
        })
        .collect()
}

/// `--latency`: which latencies each I/O is measured for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LatencyMode {
    /// One latency per I/O, from just before it is handed to the engine to its completion (fio's
    /// `lat`): one histogram per direction.
    #[default]
    Total,
    /// fio's three: `slat` from that stamp to the return of the submit call (or doorbell) that sent
    /// the I/O, one clock read per submitted batch as fio shares it, `clat` from there to the
    /// completion, and `lat` the two together. Synchronous engines have no submission apart from
    /// the I/O (fio's psync, and its null engine at iodepth=1): no `slat`, and `clat` is `lat`.
    Split,
    /// No stamps at all: I/Os and bytes are counted, no latency is measured. For the highest rate a
    /// core can drive: SPDK perf without `-L` still reads the clock twice per I/O (for its mean,
    /// min and max), this reads it not at all.
    Off,
}

impl LatencyMode {
    pub const NAMES: [&'static str; 3] = ["total", "split", "off"];

    pub fn parse(text: &str) -> Result<LatencyMode, String> {
        match text {
            "total" => Ok(LatencyMode::Total),
            "split" => Ok(LatencyMode::Split),
            "off" => Ok(LatencyMode::Off),
            _ => Err(format!("'{text}' is not a latency accounting; use total, split or off")),
        }
    }

    /// The mode's name, as `--latency` takes it.
    pub fn name(self) -> &'static str {
        match self {
            LatencyMode::Total => "total",
            LatencyMode::Split => "split",
            LatencyMode::Off => "off",
        }
    }

    /// Whether each I/O is stamped (at issue and completion).
    pub fn stamps(self) -> bool {
        self != LatencyMode::Off
    }
}

/// Which of fio's latencies a job reports in fio-shaped output: all three unless it says
/// `disable_slat`, `disable_clat`, `disable_lat` (or `gtod_reduce`, all three), as fio writes zeros
/// (`N` 0) for the ones it did not measure, and no log of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FioLatencies {
    pub slat: bool,
    pub clat: bool,
    pub lat: bool,
}

impl Default for FioLatencies {
    fn default() -> Self {
        FioLatencies { slat: true, clat: true, lat: true }
    }
}

/// `--small-bs`: what to do with block sizes below (or not a multiple of) the device's logical
/// block size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SmallBlocks {
    /// Round each up to the next multiple of the logical block size, merging the weights.
    Round,
    /// Refuse the profile.
    Reject,
}

impl SmallBlocks {
    pub const NAMES: [&'static str; 2] = ["round", "reject"];

    pub fn parse(text: &str) -> Result<SmallBlocks, String> {
        match text {
            "round" => Ok(SmallBlocks::Round),
            "reject" => Ok(SmallBlocks::Reject),
            _ => Err(format!("'{text}' is not a small-block policy; use round or reject")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_fall_under_fios_types_and_lists() {
        use Verdict::*;
        let eio = libc::EIO;
        let enospc = libc::ENOSPC;
        let eilseq = libc::EILSEQ;
        assert_eq!(ErrorType::of(true, libc::EIO), ErrorType::Read);
        assert_eq!(ErrorType::of(false, libc::EIO), ErrorType::Write);
        assert_eq!(ErrorType::of(false, libc::ENOSPC), ErrorType::Write);
        assert_eq!(ErrorType::of(true, libc::EILSEQ), ErrorType::Verify);
        let OnError::ContinueOn(f) = OnError::parse("continue:read").unwrap() else { panic!() };
        assert_eq!(f.verdict(true, eio), Continue);
        assert_eq!(f.verdict(true, enospc), StopCounted, "not in fio's default list");
        assert_eq!(f.verdict(false, eio), Stop, "the write bit is not set");
        assert_eq!(f.verdict(true, eilseq), Stop, "EILSEQ is a verify error");
        let OnError::ContinueOn(f) = OnError::parse("continue:write=ENOSPC:5,verify").unwrap() else { panic!() };
        assert_eq!((f.verdict(false, enospc), f.verdict(false, eio)), (Continue, Continue));
        assert_eq!(f.verdict(true, enospc), Stop);
        assert_eq!(f.verdict(false, libc::EFBIG), StopCounted);
        assert_eq!(f.verdict(false, eilseq), Continue);
        assert_eq!(OnError::parse(&f.flag()), Ok(OnError::ContinueOn(f)), "{}", f.flag());
        assert!(OnError::parse("continue:trim").unwrap_err().contains("not an error type"));
        assert!(OnError::parse("continue:read=EILSEQ").unwrap_err().contains("84 for EILSEQ"));
    }

    #[test]
    fn errno_lists_take_fios_names_and_numbers() {
        assert_eq!(parse_errnos("EIO:ENOSPC:-84:ERANGE"), Ok(vec![5, 28, 84, 34]));
        assert_eq!(parse_errnos("EPERM:"), Ok(vec![1]), "fio ends a list at an empty name");
        assert_eq!(parse_errnos(""), Ok(vec![]));
        assert!(parse_errnos("EIO:ENOPE").unwrap_err().contains("'ENOPE' is not an errno"));
        assert!(parse_errnos("0").is_err());
        assert_eq!(serde_json::to_value(OnError::parse("continue:read").unwrap()).unwrap(), "continue");
        assert_eq!(serde_json::to_value(OnError::Retry(3)).unwrap(), serde_json::json!({"retry": 3}));
        assert_eq!(serde_json::to_value(OnError::Stop).unwrap(), "stop");
    }

    #[test]
    fn each_parses_its_names_and_refuses_others_in_one_sentence() {
        for n in OutputFormat::NAMES {
            assert!(OutputFormat::parse(n).is_ok());
        }
        for n in SmallBlocks::NAMES {
            assert!(SmallBlocks::parse(n).is_ok());
        }
        assert_eq!(OnError::parse("retry:3"), Ok(OnError::Retry(3)));
        assert_eq!(OnError::parse("continue"), Ok(OnError::Continue));
        assert!(OnError::parse("retry:0").unwrap_err().contains("N from 1 to 1000"));
        assert!(OutputFormat::parse("xml").unwrap_err().contains("use text or json"));
    }
}

/// One load of `compare --rates`: IOPS offered in total (open loop), or `max` (closed loop).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Load {
    Iops(f64),
    Max,
}

impl Load {
    /// The offered IOPS; `None` for the closed loop.
    pub fn iops(self) -> Option<f64> {
        match self {
            Load::Iops(r) => Some(r),
            Load::Max => None,
        }
    }

    /// How reports name it: `10k`, `1.5M`, `250`, `max`.
    pub fn label(self) -> String {
        match self {
            Load::Max => "max".into(),
            Load::Iops(r) => {
                let (v, unit) = if r >= 1e6 {
                    (r / 1e6, "M")
                } else if r >= 1e3 {
                    (r / 1e3, "k")
                } else {
                    (r, "")
                };
                let digits = format!("{v:.3}");
                format!("{}{unit}", digits.trim_end_matches('0').trim_end_matches('.'))
            }
        }
    }
}

/// `--rates`: offered loads, `10k,50k,100k,max` (IOPS in total, decimal units k, m and g; `max`
/// is the closed loop), in the order given.
#[derive(Clone, Debug, PartialEq)]
pub struct Loads(pub Vec<Load>);

impl Loads {
    pub fn parse(text: &str) -> Result<Loads, String> {
        let mut out: Vec<Load> = Vec::new();
        for entry in text.split(',').map(str::trim) {
            let load = Loads::parse_one(entry)
                .map_err(|problem| format!("'{entry}' in '{text}' {problem}; list IOPS or max, like 10k,50k,max"))?;
            if out.contains(&load) {
                return Err(format!("'{text}' has {} twice; give each load once", load.label()));
            }
            out.push(load);
        }
        Ok(Loads(out))
    }

    fn parse_one(entry: &str) -> Result<Load, &'static str> {
        if entry.is_empty() {
            return Err("is an empty entry");
        }
        if entry.eq_ignore_ascii_case("max") {
            return Ok(Load::Max);
        }
        let (digits, scale) = match entry.as_bytes()[entry.len() - 1].to_ascii_lowercase() {
            b'k' => (&entry[..entry.len() - 1], 1e3),
            b'm' => (&entry[..entry.len() - 1], 1e6),
            b'g' => (&entry[..entry.len() - 1], 1e9),
            _ => (entry, 1.0),
        };
        let v: f64 = digits.parse().map_err(|_| "is not a number of IOPS")?;
        match v * scale {
            r if !r.is_finite() || r < 0.0 => Err("is not a number of IOPS"),
            0.0 => Err("is zero, which paces nothing"),
            r if r < 1.0 => Err("is under 1 IOPS"),
            r => Ok(Load::Iops(r)),
        }
    }
}

#[cfg(test)]
mod load_tests {
    use super::*;

    #[test]
    fn loads_parse_in_decimal_units_and_refuse_zero_junk_and_repeats() {
        let l = Loads::parse("10k, 50K,1.5m,250,max").unwrap();
        assert_eq!(l.0, [Load::Iops(10_000.0), Load::Iops(50_000.0), Load::Iops(1.5e6), Load::Iops(250.0), Load::Max]);
        let labels: Vec<String> = l.0.iter().map(|l| l.label()).collect();
        assert_eq!(labels, ["10k", "50k", "1.5M", "250", "max"]);
        assert_eq!(Load::Iops(12_345.0).label(), "12.345k");
        assert_eq!(Load::Max.iops(), None);
        for (bad, says) in [
            ("10k,0", "'0' in '10k,0' is zero, which paces nothing"),
            ("0k", "is zero"),
            ("10k,fast", "'fast' in '10k,fast' is not a number of IOPS"),
            ("10k,,max", "'' in '10k,,max' is an empty entry"),
            ("-5", "is not a number of IOPS"),
            ("inf", "is not a number of IOPS"),
            ("0.5", "is under 1 IOPS"),
            ("10k,10000", "'10k,10000' has 10k twice"),
            ("max,MAX", "has max twice"),
        ] {
            let e = Loads::parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
            assert_eq!(e.matches("; ").count(), 1, "one sentence: {e}");
        }
    }
}

/// fio's latency target (`latency_target`, `latency_window`, `latency_percentile`,
/// `latency_run`): each worker searches for the deepest queue depth, up to its `--qd`, at which
/// `percentile` of the I/Os of each window complete within `target_ns` (see
/// `worker::latency`). fio's job-file words only; there is no `run` flag of nvmebench's own.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LatencyTarget {
    /// The most a total latency may take, in nanoseconds (fio's `latency_target`).
    pub target_ns: u64,
    /// How long each window lasts before it is judged, in nanoseconds (fio's `latency_window`;
    /// 0, fio's default, judges after every pass).
    pub window_ns: u64,
    /// The share of a window's I/Os, in percent, that must meet the target (fio's
    /// `latency_percentile`, 100 by default).
    pub percentile: f64,
    /// Keep adjusting the depth once the search settles (fio's `latency_run=1`), instead of
    /// ending the job after one more window at that depth.
    pub run: bool,
}

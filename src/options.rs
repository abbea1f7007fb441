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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    /// Stop the run at the first I/O error (fio's default).
    Stop,
    /// Count errors and keep going.
    Continue,
    /// Retry a failed I/O up to N times; one that still fails is counted and the run goes on.
    Retry(u32),
}

impl OnError {
    pub fn parse(text: &str) -> Result<OnError, String> {
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

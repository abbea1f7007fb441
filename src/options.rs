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

/// `--latency`: what each I/O's latency accounting keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LatencyMode {
    /// One histogram per direction, from each I/O's issue to its completion (fio's `lat`).
    #[default]
    Total,
    /// No stamps at all: I/Os and bytes are counted, no latency is measured. For the highest rate a
    /// core can drive: SPDK perf without `-L` still reads the clock twice per I/O (for its mean,
    /// min and max), this reads it not at all.
    Off,
}

impl LatencyMode {
    pub const NAMES: [&'static str; 2] = ["total", "off"];

    pub fn parse(text: &str) -> Result<LatencyMode, String> {
        match text {
            "total" => Ok(LatencyMode::Total),
            "off" => Ok(LatencyMode::Off),
            _ => Err(format!("'{text}' is not a latency accounting; use total or off")),
        }
    }

    /// Whether each I/O is stamped (at issue and completion).
    pub fn stamps(self) -> bool {
        self != LatencyMode::Off
    }
}

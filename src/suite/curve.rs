//! iorate curves (VDBench's `curve`): the offered rates, as fractions of the closed-loop maximum, and
//! the stop rule. Running them is `exec`'s job; each paced run measures latency from every I/O's
//! intended issue time, so queueing behind a saturated device counts.

use crate::report::format_latency;
use std::time::Duration;

/// Offered rates in percent of the maximum: 10 to 100 in steps of 10, then past saturation.
pub const CURVE_PERCENTS: [u32; 12] = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120];

/// Which latency the stop rule watches.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StopMetric {
    Mean,
    P99,
}

/// Ends a curve once a step's latency passes a limit (that step is kept and marked).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct StopRule {
    pub metric: StopMetric,
    #[serde(serialize_with = "ns")]
    pub limit: Duration,
}

fn ns<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_nanos() as u64)
}

impl StopRule {
    /// Parses `5ms` (mean latency) or `p99:5ms`.
    ///
    /// # Errors
    /// One sentence naming the problem and the form to use.
    pub fn parse(text: &str) -> Result<StopRule, String> {
        let (metric, lat) = match text.split_once(':') {
            Some(("p99", l)) => (StopMetric::P99, l),
            Some(("mean", l)) => (StopMetric::Mean, l),
            Some((m, _)) => return Err(format!("'{m}' is not a latency to stop on; write 5ms, mean:5ms or p99:5ms")),
            None => (StopMetric::Mean, text),
        };
        let limit = crate::units::parse_duration(lat)?;
        if limit.is_zero() {
            return Err(format!("'{text}' is zero; give a latency above 0, like 5ms"));
        }
        Ok(StopRule { metric, limit })
    }

    /// Whether a step with this mean and p99 (ns) ends the curve.
    pub fn passed(&self, mean_ns: f64, p99_ns: f64) -> bool {
        let v = match self.metric {
            StopMetric::Mean => mean_ns,
            StopMetric::P99 => p99_ns,
        };
        v > self.limit.as_nanos() as f64
    }

    /// How the rule reads in reports: `mean above 5.000ms`.
    pub fn describe(&self) -> String {
        let m = match self.metric {
            StopMetric::Mean => "mean",
            StopMetric::P99 => "p99",
        };
        format!("{m} above {}", format_latency(self.limit.as_nanos() as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_rules() {
        let r = StopRule::parse("5ms").unwrap();
        assert_eq!(r, StopRule { metric: StopMetric::Mean, limit: Duration::from_millis(5) });
        assert!(r.passed(5_000_001.0, 0.0) && !r.passed(5_000_000.0, 1e9));
        let p = StopRule::parse("p99:200us").unwrap();
        assert!(p.passed(0.0, 200_001.0) && !p.passed(1e9, 100.0));
        assert_eq!(p.describe(), "p99 above 200.00µs");
        assert!(StopRule::parse("p95:1ms").unwrap_err().contains("'p95' is not a latency"));
        assert!(StopRule::parse("0ms").unwrap_err().contains("is zero"));
        assert_eq!(CURVE_PERCENTS.len(), 12);
    }
}

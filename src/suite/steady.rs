//! Preconditioning to steady state, after SNIA's Solid State Storage Performance Test Specification:
//! purge, workload-independent preconditioning (sequential 128 KiB writes over the working set, twice
//! by default), then workload-dependent rounds until the tracked metric is steady.
//!
//! Steady: over a window of the last [`WINDOW`] rounds, the values span at most 20% of their average
//! and the least-squares line's rise across the window is at most 10% of it; at most
//! [`MAX_ROUNDS`] rounds. The verdict itself is `report::load::SteadyState::verdict`, so the report
//! draws exactly the rule the suite applied. The purge discards the working set (a TRIM/deallocate
//! of a block device, a punched hole in a file) through util-linux's `blkdiscard` and `fallocate`;
//! NVMe Format and Sanitize, which SPDK could send, are not issued here.

use crate::report::load::{DEFAULT_STEADY_WINDOW, SteadyState, SteadyVerdict};
use crate::target::{Target, TargetKind};
use std::process::Command;

/// Rounds in the measurement window (PTS).
pub const WINDOW: usize = DEFAULT_STEADY_WINDOW;
/// Rounds at most (PTS).
pub const MAX_ROUNDS: u32 = 25;
/// Transfer size of workload-independent preconditioning (PTS: 128 KiB sequential writes).
pub const FILL_BS: u64 = 128 << 10;
/// How many times the working set is written by workload-independent preconditioning (PTS: 2).
pub const DEFAULT_FILL_PASSES: f64 = 2.0;

/// The first round (1-based) after which the series is steady, checking after every round as the
/// test would have.
pub fn steady_after(rounds: &[f64], window: usize) -> Option<usize> {
    (window..=rounds.len()).find(|&n| verdict(&rounds[..n], window).is_some_and(|v| v.steady))
}

/// The PTS verdict over the last `window` of `rounds`, or `None` while there are fewer.
pub fn verdict(rounds: &[f64], window: usize) -> Option<SteadyVerdict> {
    SteadyState { label: String::new(), metric: String::new(), rounds: rounds.to_vec(), window }.verdict()
}

/// What the purge did, for the step's JSON and the log.
pub fn purge(target: Option<&Target>, offset: u64, bytes: u64, allow_destroy: bool) -> String {
    let Some(t) = target else { return "not applicable: the null engine has no media".into() };
    if !allow_destroy {
        return "skipped: purging discards data; pass --allow-destroy to purge".into();
    }
    let path = t.path.display().to_string();
    let (program, args): (&str, Vec<String>) = match t.kind {
        TargetKind::BlockDevice => (
            "blkdiscard",
            vec!["--offset".into(), offset.to_string(), "--length".into(), bytes.to_string(), path.clone()],
        ),
        TargetKind::File | TargetKind::NewFile => (
            "fallocate",
            vec![
                "--punch-hole".into(),
                "--keep-size".into(),
                "--offset".into(),
                offset.to_string(),
                "--length".into(),
                bytes.to_string(),
                path.clone(),
            ],
        ),
        TargetKind::SpdkNamespace => {
            return "not done: NVMe Format and Sanitize through SPDK are not implemented".into();
        }
        TargetKind::NvmeGeneric => {
            return "not done: discard through the NVMe generic device is not implemented; purge through its block device".into();
        }
    };
    match Command::new(program).args(&args).output() {
        Ok(o) if o.status.success() => format!("done: {program} {}", args.join(" ")),
        Ok(o) => format!(
            "failed, continuing without: {program} said {}",
            String::from_utf8_lossy(&o.stderr).trim().lines().next().unwrap_or("nothing")
        ),
        Err(e) => format!("skipped: cannot run {program} ({e}); install util-linux to purge"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_series_is_steady_at_the_first_full_window() {
        assert_eq!(steady_after(&[100.0, 101.0, 99.0, 100.0, 100.0, 100.0], WINDOW), Some(5));
    }

    #[test]
    fn a_settling_series_becomes_steady_once_the_transient_leaves_the_window() {
        // Fresh-out-of-box burst, then a drop to the steady level.
        let s = [300.0, 250.0, 180.0, 120.0, 105.0, 100.0, 98.0, 101.0, 99.0, 100.0];
        assert_eq!(steady_after(&s, WINDOW), Some(9));
    }

    #[test]
    fn range_rule_rejects_a_wide_spread() {
        // Average 100, flat trend, range 21% > 20%.
        let s = [100.0, 110.5, 89.5, 100.0, 100.0];
        let v = verdict(&s, WINDOW).unwrap();
        assert!(v.slope_fraction < 0.10 && v.range_fraction > 0.20 && !v.steady, "{v:?}");
        // Range 19%: accepted.
        let v = verdict(&[100.0, 109.5, 90.5, 100.0, 100.0], WINDOW).unwrap();
        assert!(v.steady, "{v:?}");
    }

    #[test]
    fn slope_rule_rejects_a_trend_inside_the_range() {
        // Rising 2.6 per round: range 10.4% (fine) but the fitted rise over 4 intervals is 10.4%.
        let s = [94.8, 97.4, 100.0, 102.6, 105.2];
        let v = verdict(&s, WINDOW).unwrap();
        assert!(v.range_fraction < 0.20 && v.slope_fraction > 0.10 && !v.steady, "{v:?}");
        // Rising 2.4 per round: 9.6%, steady.
        assert!(verdict(&[95.2, 97.6, 100.0, 102.4, 104.8], WINDOW).unwrap().steady);
        // Falling as much is as bad as rising.
        assert!(!verdict(&[105.2, 102.6, 100.0, 97.4, 94.8], WINDOW).unwrap().steady);
    }

    #[test]
    fn too_few_rounds_or_never_steady() {
        assert_eq!(steady_after(&[100.0; 4], WINDOW), None);
        let saw: Vec<f64> = (0..25).map(|i| if i % 2 == 0 { 70.0 } else { 130.0 }).collect();
        assert_eq!(steady_after(&saw, WINDOW), None);
    }

    #[test]
    fn purge_needs_the_flag_and_a_medium() {
        assert!(purge(None, 0, 1, true).starts_with("not applicable"));
        let t = Target {
            path: "/nonexistent".into(),
            kind: TargetKind::File,
            size_bytes: 1 << 20,
            logical_block_bytes: 512,
            device: None,
            nvme_sibling: None,
            model: None,
            serial: None,
            unsupported_ops: Vec::new(),
        };
        assert!(purge(Some(&t), 0, 1 << 20, false).contains("--allow-destroy"));
    }
}

//! fio's batching options (`iodepth_batch_submit`, `iodepth_batch_complete_min`,
//! `iodepth_batch_complete_max`, `iodepth_low`) as the io_uring engines' `submit_batch`,
//! `reap_batch` and `reap_max`, with fio's defaults and fix-ups (init.c's `fixup_options`,
//! ioengines.c's `td_io_getevents`).
//!
//! It computes values; which engine takes them, and the sentence at the job file's line, are the
//! plan's.

/// The batching options a job writes (its own or its `[global]`'s), each as fio parsed it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Batch {
    pub submit: Option<u32>,
    pub complete_min: Option<u32>,
    pub complete_max: Option<u32>,
    pub low: Option<u32>,
}

/// Which option a refusal is about.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Which {
    Submit,
    CompleteMin,
    Low,
}

impl Batch {
    /// Whether the job writes any of them.
    pub fn given(&self) -> bool {
        self.submit.is_some() || self.complete_min.is_some() || self.complete_max.is_some() || self.low.is_some()
    }

    /// `(submit_batch, reap_batch, reap_max)` at queue depth `qd`, as fio settles them: a submit
    /// batch of 0 or above the depth is the depth; the largest reap is the smallest's when it is
    /// not given or below it, and at most what is in flight (the depth).
    ///
    /// # Errors
    /// fio's `iodepth_batch_complete_min=0` (it checks for completions without waiting, polling),
    /// and an `iodepth_low` below the depth (fio lets the queue drain to it before filling it
    /// again), which nvmebench's closed loop, refilling each slot at once, does not do.
    pub fn engine_values(&self, qd: u32) -> Result<(u32, u32, u32), (Which, String)> {
        let qd = qd.max(1);
        if let Some(low) = self.low.filter(|&l| l != 0 && l < qd) {
            return Err((
                Which::Low,
                format!(
                    "iodepth_low={low} lets the queue drain to {low} before fio fills it again, and nvmebench refills each completed I/O at once (fio's default, iodepth_low=iodepth); remove it, or write iodepth_low={qd}"
                ),
            ));
        }
        if self.complete_min == Some(0) {
            return Err((
                Which::CompleteMin,
                "iodepth_batch_complete_min=0 has fio check for completions without waiting for one, which is not taken (nvmebench reaps what is ready and then waits for at least one, fio's default 1); write iodepth_batch_complete_min=1, or remove it".into(),
            ));
        }
        let submit = match self.submit.unwrap_or(1) {
            0 => qd,
            n => n.min(qd),
        };
        let min = self.complete_min.unwrap_or(1).min(qd);
        let max = self.complete_max.unwrap_or(0).max(min).min(qd);
        Ok((submit, min, max))
    }

    /// Whether the values are fio's defaults, which every engine here keeps: one I/O submitted at
    /// a time, at least one reaped.
    pub fn is_default_submit_and_wait(&self, qd: u32) -> bool {
        matches!(self.engine_values(qd), Ok((1, 1, _))) && self.complete_max.is_none()
    }
}

/// Whether `a` and `b` are one option (a name and its alias, like `iodepth_batch` and
/// `iodepth_batch_submit`).
pub fn same_option(a: &str, b: &str) -> bool {
    let canonical = |k: &str| {
        match k {
            "iodepth_batch" => "iodepth_batch_submit",
            "iodepth_batch_complete" => "iodepth_batch_complete_min",
            k => k,
        }
        .to_string()
    };
    canonical(a) == canonical(b)
}

/// fio's integer value of one of them.
///
/// # Errors
/// A value that is not a whole number.
pub fn parse(key: &str, v: &str) -> Result<u32, String> {
    v.trim().parse().map_err(|_| format!("{key}={v} is not a number of I/Os; write a whole number, like {key}=8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fios_defaults_and_fixups() {
        let b = |submit, min, max| Batch { submit, complete_min: min, complete_max: max, low: None };
        assert_eq!(Batch::default().engine_values(32).unwrap(), (1, 1, 1), "fio reaps one at a time by default");
        assert_eq!(b(Some(0), None, None).engine_values(32).unwrap(), (32, 1, 1), "0 is the depth");
        assert_eq!(b(Some(64), None, None).engine_values(32).unwrap(), (32, 1, 1), "above it too");
        assert_eq!(b(Some(8), Some(4), None).engine_values(32).unwrap(), (8, 4, 4), "max follows min");
        assert_eq!(b(None, Some(4), Some(2)).engine_values(32).unwrap(), (1, 4, 4), "max below min is min");
        assert_eq!(b(None, None, Some(64)).engine_values(32).unwrap(), (1, 1, 32), "at most the depth");
        let e = b(None, Some(0), Some(32)).engine_values(32).unwrap_err();
        assert_eq!(e.0, Which::CompleteMin);
        let low = Batch { low: Some(4), ..Batch::default() };
        assert!(low.engine_values(16).unwrap_err().1.starts_with("iodepth_low=4 lets the queue drain to 4"));
        assert!(Batch { low: Some(16), ..Batch::default() }.engine_values(16).is_ok(), "fio's default");
        assert!(Batch { low: Some(0), ..Batch::default() }.engine_values(16).is_ok(), "0 is the depth");
        assert!(b(Some(1), Some(1), None).is_default_submit_and_wait(8));
        assert!(!b(Some(2), None, None).is_default_submit_and_wait(8));
        assert!(parse("iodepth_batch", "x").unwrap_err().ends_with("like iodepth_batch=8"));
    }
}

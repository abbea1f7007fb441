//! How many I/Os each submit call and each reap carried, counted in fio's seven ranges (fio's
//! `io_u_submit` and `io_u_complete` maps, written as `iodepth_submit` and `iodepth_complete`).
//!
//! An engine counts its own calls, as fio's engines mark theirs: one bump of an array per system
//! call or reap, never per I/O. The worker takes the difference over its measured window.

/// Counts of submit calls and of reaps, by the number of I/Os each carried: 0, 1-4, 5-8, 9-16,
/// 17-32, 33-64, more (fio's `__io_u_mark_map`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchCounts {
    pub submit: [u64; 7],
    pub complete: [u64; 7],
}

/// fio's range of a call that carried `n` I/Os.
#[inline]
fn range_of(n: u32) -> usize {
    match n {
        0 => 0,
        1..=4 => 1,
        5..=8 => 2,
        9..=16 => 3,
        17..=32 => 4,
        33..=64 => 5,
        _ => 6,
    }
}

impl BatchCounts {
    /// A submit call that handed `n` I/Os to the device (or the kernel).
    #[inline]
    pub fn submitted(&mut self, n: u32) {
        self.submit[range_of(n)] += 1;
    }

    /// A reap that brought `n` completions.
    #[inline]
    pub fn completed(&mut self, n: u32) {
        self.complete[range_of(n)] += 1;
    }

    /// What was counted between `earlier` and `self`.
    pub fn since(&self, earlier: &BatchCounts) -> BatchCounts {
        let diff = |a: &[u64; 7], b: &[u64; 7]| std::array::from_fn(|i| a[i].saturating_sub(b[i]));
        BatchCounts { submit: diff(&self.submit, &earlier.submit), complete: diff(&self.complete, &earlier.complete) }
    }
}

impl std::ops::AddAssign<&BatchCounts> for BatchCounts {
    fn add_assign(&mut self, o: &BatchCounts) {
        for i in 0..7 {
            self.submit[i] += o.submit[i];
            self.complete[i] += o.complete[i];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_fall_in_fios_ranges() {
        let mut b = BatchCounts::default();
        for n in [0, 1, 4, 5, 8, 9, 16, 17, 32, 33, 64, 65, 128] {
            b.submitted(n);
        }
        assert_eq!(b.submit, [1, 2, 2, 2, 2, 2, 2]);
        let before = b;
        b.completed(3);
        b.submitted(128);
        assert_eq!(b.since(&before), BatchCounts { submit: [0, 0, 0, 0, 0, 0, 1], complete: [0, 1, 0, 0, 0, 0, 0] });
    }
}

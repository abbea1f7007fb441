//! This host's clock against the shared filesystem's: the filesystem (on NFS, Lustre or CephFS,
//! its server) stamps a file's modification time by its own clock when told to set it to "now";
//! reading that stamp back between two readings of this host's clock bounds the difference.
//!
//! It samples and bounds; what a skew between hosts means for the fleet is `rendezvous`'s call.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How long the sampling keeps stamping: long enough to see a coarse clock step (a kernel tick,
/// 10 ms at most on Linux, stamps files on kernels before 6.13 and on some servers).
const SPAN: Duration = Duration::from_millis(12);
/// At most this many stamps (a server round trip each on a network filesystem).
const MAX_SAMPLES: usize = 256;

/// The filesystem's clock minus this host's, within a known bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockSample {
    /// Filesystem time minus this host's time, nanoseconds.
    pub offset_ns: i64,
    /// The offset is within this many nanoseconds either side.
    pub uncertainty_ns: u64,
}

/// One stamp: this host's clock before, the file's new modification time, this host's clock after.
#[derive(Clone, Copy, Debug)]
struct Stamp {
    before: i128,
    mtime: i128,
    after: i128,
}

fn unix_ns(t: SystemTime) -> i128 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    }
}

/// Stamps `file` with the filesystem's "now" repeatedly (`futimens` with `UTIME_NOW`, which NFS
/// sends as set-to-server-time) and bounds the offset from every stamp.
///
/// # Errors
/// The filesystem refused to set or report the file's times.
pub fn sample(file: &File) -> std::io::Result<ClockSample> {
    let now = nix::sys::time::TimeSpec::UTIME_NOW;
    let mut stamps = Vec::with_capacity(MAX_SAMPLES);
    let began = Instant::now();
    while stamps.len() < MAX_SAMPLES && (stamps.len() < 2 || began.elapsed() < SPAN) {
        let before = unix_ns(SystemTime::now());
        nix::sys::stat::futimens(file.as_raw_fd(), &now, &now).map_err(std::io::Error::from)?;
        let mtime = unix_ns(file.metadata()?.modified()?);
        let after = unix_ns(SystemTime::now());
        stamps.push(Stamp { before, mtime, after });
    }
    Ok(bound(&stamps))
}

/// The offset from stamps. A stamp set between `before` and `after` (by this host's clock) by a
/// clock that lags the true time by up to one step `g` puts the offset between `mtime - after` and
/// `mtime - before + g`; every stamp must hold, so the bounds are the tightest of all. `g` is the
/// largest jump of the stamps beyond the time that passed between them (about zero for a clock
/// that stamps in nanoseconds).
fn bound(stamps: &[Stamp]) -> ClockSample {
    let step =
        stamps.windows(2).map(|w| (w[1].mtime - w[0].mtime) - (w[1].before - w[0].after)).max().unwrap_or(0).max(0);
    let low = stamps.iter().map(|s| s.mtime - s.after).max().unwrap_or(0);
    let high = stamps.iter().map(|s| s.mtime - s.before).min().unwrap_or(0) + step;
    let (offset, half) = if low <= high {
        ((low + high) / 2, (high - low + 1) / 2)
    } else {
        // The bounds cross only when a clock jumped while stamping: take the quickest stamp alone.
        let s = stamps.iter().min_by_key(|s| s.after - s.before).expect("at least two stamps");
        (s.mtime - (s.before + s.after) / 2, (s.after - s.before + 1) / 2 + step)
    };
    ClockSample { offset_ns: offset as i64, uncertainty_ns: half.max(0) as u64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fine_clock_is_bounded_by_the_round_trips() {
        // A filesystem 5 ms ahead, stamping in nanoseconds, 2 µs round trips.
        let stamps: Vec<Stamp> = (0..10)
            .map(|i| {
                let before = 1_000_000_000 + i * 10_000;
                Stamp { before, mtime: before + 1_000 + 5_000_000, after: before + 2_000 }
            })
            .collect();
        let s = bound(&stamps);
        assert!((s.offset_ns - 5_000_000).unsigned_abs() <= s.uncertainty_ns, "{s:?} must hold the true offset");
        // A clock that stamps in nanoseconds looks as if it stepped by up to two round trips.
        assert!(s.uncertainty_ns <= 2 * 2_000, "{s:?}");
    }

    #[test]
    fn a_coarse_clock_widens_the_bound_by_its_step() {
        // A filesystem 3 ms behind whose stamps only move every 4 ms (a 250 Hz kernel tick).
        let stamps: Vec<Stamp> = (0..200)
            .map(|i| {
                let before: i128 = 2_000_000_000 + i * 60_000;
                let true_fs = before + 20_000 - 3_000_000;
                Stamp { before, mtime: true_fs - true_fs % 4_000_000, after: before + 40_000 }
            })
            .collect();
        let s = bound(&stamps);
        let (lo, hi) = (s.offset_ns - s.uncertainty_ns as i64, s.offset_ns + s.uncertainty_ns as i64);
        assert!(lo <= -3_000_000 && -3_000_000 <= hi, "{s:?} must hold the true offset");
        assert!(s.uncertainty_ns <= 2_100_000, "{s:?}: about half a step");
    }

    #[test]
    fn this_filesystem_agrees_with_this_clock() {
        let dir = tempfile::tempdir().unwrap();
        let f = File::create(dir.path().join("stamp")).unwrap();
        let s = sample(&f).unwrap();
        // The same clock stamps local files: the offset is within its own bound, and the bound
        // within a coarse kernel tick.
        assert!(s.offset_ns.unsigned_abs() <= s.uncertainty_ns + 1_000, "{s:?}");
        assert!(s.uncertainty_ns < 20_000_000, "{s:?}");
    }
}

//! A kernel block device's I/O counters (`/sys/dev/block/MAJ:MIN/stat`), sampled around a run for
//! fio's `disk_util`.

use crate::report::fio::DiskUtil;
use std::time::Instant;

/// Counters of one device at one moment.
#[derive(Clone, Debug)]
pub struct DiskSample {
    name: String,
    fields: Vec<u64>,
    at: Instant,
}

/// Samples the device `maj_min` (`259:0`); `None` when sysfs does not describe it.
pub fn sample(maj_min: &str) -> Option<DiskSample> {
    let dir = std::path::Path::new("/sys/dev/block").join(maj_min);
    let name = std::fs::read_link(&dir).ok()?.file_name()?.to_string_lossy().into_owned();
    let text = std::fs::read_to_string(dir.join("stat")).ok()?;
    let fields: Vec<u64> = text.split_whitespace().filter_map(|f| f.parse().ok()).collect();
    (fields.len() >= 11).then(|| DiskSample { name, fields, at: Instant::now() })
}

/// What the device did between `before` and `after`, in fio's terms.
pub fn between(before: &DiskSample, after: &DiskSample) -> DiskUtil {
    // The stat file's columns: reads, read merges, sectors read, read ticks (ms), writes, write
    // merges, sectors written, write ticks, in flight, io ticks (busy ms), time in queue (ms).
    let d = |i: usize| after.fields[i].saturating_sub(before.fields[i]);
    let wall_ms = after.at.duration_since(before.at).as_secs_f64() * 1e3;
    DiskUtil {
        name: after.name.clone(),
        read_ios: d(0),
        read_merges: d(1),
        read_ticks: d(3),
        write_ios: d(4),
        write_merges: d(5),
        write_ticks: d(7),
        in_queue: d(10),
        util: if wall_ms > 0.0 { (d(9) as f64 / wall_ms * 100.0).min(100.0) } else { 0.0 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_of_the_stat_columns() {
        let at = Instant::now();
        let s = |f: [u64; 11], at| DiskSample { name: "nvme0n1".into(), fields: f.to_vec(), at };
        let a = s([10, 1, 80, 5, 20, 2, 160, 7, 0, 100, 12], at);
        let b = s([30, 1, 240, 9, 25, 4, 200, 8, 1, 600, 20], at + std::time::Duration::from_secs(1));
        let u = between(&a, &b);
        assert_eq!((u.read_ios, u.write_ios, u.write_merges, u.read_ticks, u.in_queue), (20, 5, 2, 4, 8));
        assert!((u.util - 50.0).abs() < 1e-9);
    }
}

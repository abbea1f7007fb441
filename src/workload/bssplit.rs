//! Block-size mixes in fio's `bssplit` syntax and the table that samples them.
//!
//! `4k/60:64k/40` gives 60% of I/Os 4 KiB and 40% 64 KiB; an entry without a weight shares what the
//! weighted entries leave (`4k/50:8k:16k` is 50/25/25). Commas separate the read, write and trim
//! mixes (`4k/80:8k/20,64k,1m`), as in fio. Weights are percentages, may have decimals, and must add up to
//! 100. Sampling is a scan of at most a few cumulative thresholds, so it costs nothing worth measuring.

use crate::units::{format_size, parse_size};
use serde::Serialize;

/// Weight resolution: thousandths of a percent, so `0.5%` is exact and sampling stays integral.
const WEIGHT_SCALE: u64 = 100_000;

/// One block size and its share of I/Os.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct BsEntry {
    pub bytes: u32,
    /// Share of I/Os in percent.
    pub percent: f64,
}

/// A block-size mix for one direction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BsSplit {
    pub entries: Vec<BsEntry>,
    #[serde(skip)]
    thresholds: Vec<u64>,
}

impl BsSplit {
    /// A mix with a single block size.
    pub fn single(bytes: u32) -> BsSplit {
        BsSplit::from_entries(vec![BsEntry { bytes, percent: 100.0 }])
    }

    fn from_entries(entries: Vec<BsEntry>) -> BsSplit {
        let mut acc = 0u64;
        let mut thresholds: Vec<u64> = entries
            .iter()
            .map(|e| {
                acc += (e.percent * (WEIGHT_SCALE as f64) / 100.0).round() as u64;
                acc
            })
            .collect();
        // Rounding of the weights can leave the last threshold a unit short of the scale.
        if let Some(last) = thresholds.last_mut() {
            *last = WEIGHT_SCALE;
        }
        BsSplit { entries, thresholds }
    }

    /// Parses one direction's mix, e.g. `4k/60:64k/40`.
    pub fn parse(text: &str) -> Result<BsSplit, String> {
        let mut weighted = Vec::new();
        let mut sum = 0.0;
        let mut unweighted = 0usize;
        for item in text.split(':') {
            let (size, weight) = match item.split_once('/') {
                Some((s, w)) if !w.trim().is_empty() => (s, Some(w)),
                Some((s, _)) => (s, None),
                None => (item, None),
            };
            let bytes = parse_size(size).map_err(|e| format!("in bssplit '{text}': {e}"))?;
            let bytes = u32::try_from(bytes)
                .ok()
                .filter(|&b| b > 0)
                .ok_or_else(|| format!("bssplit '{text}' has block size '{size}'; sizes go from 1 byte to 4g"))?;
            let percent = match weight {
                Some(w) => {
                    let p: f64 =
                        w.trim().parse().ok().filter(|p: &f64| p.is_finite() && *p >= 0.0).ok_or_else(|| {
                            format!("bssplit '{text}' has weight '{w}'; weights are percentages such as 60")
                        })?;
                    sum += p;
                    Some(p)
                }
                None => {
                    unweighted += 1;
                    None
                }
            };
            weighted.push((bytes, percent));
        }
        let share = if unweighted > 0 { (100.0 - sum) / unweighted as f64 } else { 0.0 };
        let entries: Vec<BsEntry> = weighted
            .into_iter()
            .map(|(bytes, p)| BsEntry { bytes, percent: p.unwrap_or(share) })
            .filter(|e| e.percent > 0.0)
            .collect();
        let total: f64 = entries.iter().map(|e| e.percent).sum();
        if (total - 100.0).abs() > 1e-6 || share < 0.0 {
            return Err(format!(
                "bssplit '{text}' weights add up to {}%, not 100%; adjust them so they sum to 100",
                if unweighted > 0 { sum } else { total }
            ));
        }
        Ok(BsSplit::from_entries(entries))
    }

    /// Parses fio's per-direction form, reads, writes and trims: `MIX` (all three), `R,W` (trims
    /// take W), `R,W,T`; an empty mix (`R,W,` or `,W`) is a single `default_bytes` block, and a
    /// mix not followed by a comma carries on to the directions after it (fio's `bs` rules).
    ///
    /// # Errors
    /// A sentence for a mix that does not parse, or for more than three.
    pub fn parse_per_direction(text: &str, default_bytes: u32) -> Result<[BsSplit; 3], String> {
        let Some(parts) = crate::units::per_direction(text) else {
            return Err(format!("'{text}' gives more than three mixes; write READ[,WRITE[,TRIM]]"));
        };
        let mut out = [0, 1, 2].map(|_| BsSplit::single(default_bytes));
        for (split, part) in out.iter_mut().zip(parts) {
            if !part.is_empty() {
                *split = BsSplit::parse(part)?;
            }
        }
        Ok(out)
    }

    /// Parses the two-direction form of suite profiles: `READMIX` or `READMIX,WRITEMIX`.
    pub fn parse_pair(text: &str) -> Result<(BsSplit, BsSplit), String> {
        match text.split_once(',') {
            Some((r, w)) => Ok((BsSplit::parse(r)?, BsSplit::parse(w)?)),
            None => {
                let s = BsSplit::parse(text)?;
                Ok((s.clone(), s))
            }
        }
    }

    pub fn max_bytes(&self) -> u32 {
        self.entries.iter().map(|e| e.bytes).max().unwrap_or(0)
    }

    pub fn min_bytes(&self) -> u32 {
        self.entries.iter().map(|e| e.bytes).min().unwrap_or(0)
    }

    pub fn is_single(&self) -> bool {
        self.entries.len() == 1
    }

    /// Picks a block size from a uniform random 64-bit value.
    #[inline]
    pub fn pick(&self, random: u64) -> u32 {
        if self.entries.len() == 1 {
            return self.entries[0].bytes;
        }
        let r = ((random as u128 * WEIGHT_SCALE as u128) >> 64) as u64;
        let i = self.thresholds.iter().position(|&t| r < t).unwrap_or(self.entries.len() - 1);
        self.entries[i].bytes
    }

    /// fio's text form, e.g. `4k/60:64k/40`, or just `4k` for a single size.
    pub fn to_fio(&self) -> String {
        if let [one] = &self.entries[..] {
            return format_size(u64::from(one.bytes));
        }
        self.entries
            .iter()
            .map(|e| format!("{}/{}", format_size(u64::from(e.bytes)), e.percent))
            .collect::<Vec<_>>()
            .join(":")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_weights() {
        let s = BsSplit::parse("4k/60:64k/40").unwrap();
        assert_eq!(s.entries, vec![BsEntry { bytes: 4096, percent: 60.0 }, BsEntry { bytes: 65536, percent: 40.0 }]);
        assert_eq!(s.max_bytes(), 65536);
        assert_eq!(s.min_bytes(), 4096);
    }

    #[test]
    fn unweighted_entries_share_the_rest() {
        let s = BsSplit::parse("4k/50:8k:16k").unwrap();
        assert_eq!(s.entries[1].percent, 25.0);
        assert_eq!(s.entries[2].percent, 25.0);
        let s = BsSplit::parse("4k").unwrap();
        assert_eq!(s.entries, vec![BsEntry { bytes: 4096, percent: 100.0 }]);
    }

    #[test]
    fn weights_must_sum_to_100() {
        let e = BsSplit::parse("4k/60:64k/30").unwrap_err();
        assert_eq!(e, "bssplit '4k/60:64k/30' weights add up to 90%, not 100%; adjust them so they sum to 100");
        assert!(BsSplit::parse("4k/60:64k/60:8k").is_err());
        assert!(BsSplit::parse("4k/x").unwrap_err().contains("weight 'x'"));
        assert!(BsSplit::parse("0/100").is_err());
        assert!(BsSplit::parse("4q/100").unwrap_err().contains("unknown unit"));
    }

    #[test]
    fn read_and_write_mixes() {
        let (r, w) = BsSplit::parse_pair("4k/80:8k/20,64k").unwrap();
        assert_eq!(r.entries.len(), 2);
        assert_eq!(w.entries, vec![BsEntry { bytes: 65536, percent: 100.0 }]);
    }

    #[test]
    fn read_write_and_trim_mixes_follow_fio() {
        let sizes = |t: &str| BsSplit::parse_per_direction(t, 4096).unwrap().map(|s| s.to_fio());
        assert_eq!(sizes("4k/80:8k/20,64k,1m"), ["4k/80:8k/20", "64k", "1m"]);
        assert_eq!(sizes("8k,32k"), ["8k", "32k", "32k"], "trims take the write mix");
        assert_eq!(sizes("8k,32k,"), ["8k", "32k", "4k"], "an empty mix is the default size");
        assert_eq!(sizes(",8k"), ["4k", "8k", "8k"]);
        assert_eq!(sizes("2k/50:4k/50"), ["2k/50:4k/50"; 3]);
        assert!(BsSplit::parse_per_direction("4k,4k,4k,4k", 4096).unwrap_err().contains("more than three mixes"));
        assert!(BsSplit::parse_per_direction("4k,4k,1m/50", 4096).unwrap_err().contains("add up to 50%"));
    }

    #[test]
    fn sampling_follows_the_weights() {
        // The web-server mix from the seeds: ten sizes down to 1%.
        let s = BsSplit::parse("512/22:1k/15:2k/8:4k/23:8k/15:16k/2:32k/6:64k/7:128k/1:512k/1").unwrap();
        let mut rng = 0x1234_5678_9abc_def0u64;
        let n = 1_000_000;
        let mut counts = std::collections::HashMap::new();
        for _ in 0..n {
            // splitmix64: independent of the crate's RNG so this checks `pick` alone.
            rng = rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = rng;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            *counts.entry(s.pick(z ^ (z >> 31))).or_insert(0u64) += 1;
        }
        for e in &s.entries {
            let observed = counts[&e.bytes] as f64 / n as f64 * 100.0;
            assert!((observed - e.percent).abs() < 0.3, "{}: {observed}% vs {}%", e.bytes, e.percent);
        }
    }

    #[test]
    fn fio_form_round_trips() {
        let s = BsSplit::parse("4k/60:64k/40").unwrap();
        assert_eq!(BsSplit::parse(&s.to_fio()).unwrap(), s);
    }
}

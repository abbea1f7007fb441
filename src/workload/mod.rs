//! What to issue: the direction, offset and length of every I/O, when (rate pacing, think time),
//! and what written blocks hold (buffer contents).
//!
//! A [`Generator`] is owned by one worker and produces one [`IoOp`] per call without allocating. It
//! knows nothing of engines: the same seed yields the same sequence of operations whichever engine
//! carries them out, which is what lets `compare` put engines side by side on identical work.

pub mod bssplit;
pub mod contents;
pub mod dist;
pub mod rate;

use crate::io::{Direction, IoOp};
use bssplit::BsSplit;
use dist::{IndexSampler, RandomDist};
use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;
use std::fmt;

/// fio's `rw`: the access pattern and which directions it mixes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RwMode {
    Read,
    Write,
    RandRead,
    RandWrite,
    Rw,
    RandRw,
}

impl RwMode {
    pub fn parse(text: &str) -> Result<RwMode, String> {
        Ok(match text {
            "read" => RwMode::Read,
            "write" => RwMode::Write,
            "randread" => RwMode::RandRead,
            "randwrite" => RwMode::RandWrite,
            "rw" | "readwrite" => RwMode::Rw,
            "randrw" => RwMode::RandRw,
            _ => {
                return Err(format!(
                    "'{text}' is not an access pattern; use read, write, randread, randwrite, rw or randrw"
                ));
            }
        })
    }

    pub fn is_random(self) -> bool {
        matches!(self, RwMode::RandRead | RwMode::RandWrite | RwMode::RandRw)
    }

    pub fn is_mixed(self) -> bool {
        matches!(self, RwMode::Rw | RwMode::RandRw)
    }

    pub fn name(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::RandRead => "randread",
            RwMode::RandWrite => "randwrite",
            RwMode::Rw => "rw",
            RwMode::RandRw => "randrw",
        }
    }
}

impl fmt::Display for RwMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A validated workload: everything a generator needs, with sizes in bytes.
#[derive(Clone, Debug, Serialize)]
pub struct WorkloadSpec {
    pub rw: RwMode,
    /// Percentage of reads; 100 for read-only patterns, 0 for write-only ones.
    pub read_percent: u32,
    pub bs_read: BsSplit,
    pub bs_write: BsSplit,
    /// Offsets are multiples of this many bytes (relative to `range_start`).
    pub align_bytes: u64,
    /// The working set: `[range_start, range_start + range_bytes)` of the target.
    pub range_start: u64,
    pub range_bytes: u64,
    pub random_dist: RandomDist,
    pub seed: u64,
    /// fio's `rate` (per worker), `rate_process` and `thinktime`.
    pub pacing: rate::PaceSpec,
    /// What written blocks hold.
    pub buffers: contents::BufferContents,
}

impl WorkloadSpec {
    /// The largest I/O this workload issues, which sizes every buffer.
    pub fn max_bs(&self) -> u32 {
        let r = if self.read_percent > 0 { self.bs_read.max_bytes() } else { 0 };
        let w = if self.read_percent < 100 { self.bs_write.max_bytes() } else { 0 };
        r.max(w)
    }

    pub fn writes(&self) -> bool {
        self.read_percent < 100
    }
}

/// Produces one worker's I/O sequence.
///
/// Random patterns spread over the whole working set; sequential ones give each worker its own
/// contiguous slice of it, so that N workers make N sequential streams rather than N copies of one.
pub struct Generator {
    rng: Xoshiro256PlusPlus,
    read_threshold: u64,
    mixed: bool,
    always: Direction,
    bs: [BsSplit; 2],
    random: bool,
    sampler: IndexSampler,
    align: u64,
    start: u64,
    end: u64,
    cursor: [u64; 2],
}

impl Generator {
    /// The generator of worker `index` out of `workers`. Seeds differ per worker but follow from
    /// `spec.seed`, so a run is reproducible as a whole.
    pub fn new(spec: &WorkloadSpec, index: usize, workers: usize) -> Generator {
        Generator::with_slices(spec, index, workers, false)
    }

    /// As [`new`](Self::new); with `disjoint`, random patterns also give each worker its own slice
    /// (data verification needs every unit to have one writer).
    pub fn with_slices(spec: &WorkloadSpec, index: usize, workers: usize, disjoint: bool) -> Generator {
        let workers = workers.max(1) as u64;
        let (start, end) = if spec.rw.is_random() && !disjoint {
            (spec.range_start, spec.range_start + spec.range_bytes)
        } else {
            // Slice boundaries stay on the alignment grid.
            let blocks = spec.range_bytes / spec.align_bytes;
            let per = (blocks / workers).max(1) * spec.align_bytes;
            let s = spec.range_start + per * (index as u64 % workers);
            let e = if index as u64 + 1 == workers { spec.range_start + spec.range_bytes } else { s + per };
            (s, e.min(spec.range_start + spec.range_bytes))
        };
        let max_bs = u64::from(spec.max_bs());
        let span = end - start;
        let n = if span >= max_bs { (span - max_bs) / spec.align_bytes + 1 } else { 1 };
        let seed = spec.seed ^ (index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        Generator {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            read_threshold: ((spec.read_percent as u128 * (1u128 << 64)) / 100).min(u64::MAX as u128) as u64,
            mixed: spec.read_percent > 0 && spec.read_percent < 100,
            always: if spec.read_percent == 0 { Direction::Write } else { Direction::Read },
            bs: [spec.bs_read.clone(), spec.bs_write.clone()],
            random: spec.rw.is_random(),
            sampler: IndexSampler::new(spec.random_dist, n),
            align: spec.align_bytes,
            start,
            end,
            cursor: [start, start],
        }
    }

    /// The byte range this generator issues into: `[start, end)`.
    pub fn range(&self) -> (u64, u64) {
        (self.start, self.end)
    }

    /// The next operation.
    #[inline]
    pub fn next_op(&mut self) -> IoOp {
        let dir = if self.mixed {
            if self.rng.next_u64() < self.read_threshold { Direction::Read } else { Direction::Write }
        } else {
            self.always
        };
        self.next_op_in(dir)
    }

    /// The next operation, in direction `dir` whatever the mix says (a paced worker whose other
    /// direction is ahead of its rate issues this one meanwhile).
    #[inline]
    pub fn next_op_in(&mut self, dir: Direction) -> IoOp {
        let split = &self.bs[dir as usize];
        let len = if split.is_single() { split.pick(0) } else { split.pick(self.rng.next_u64()) };
        let offset = if self.random {
            self.start + self.sampler.sample(&mut self.rng) * self.align
        } else {
            let c = &mut self.cursor[dir as usize];
            if *c + u64::from(len) > self.end {
                *c = self.start;
            }
            let off = *c;
            // Keep the next offset on the alignment grid even after an odd-sized I/O.
            *c += u64::from(len).div_ceil(self.align) * self.align;
            off
        };
        IoOp { dir, offset, len }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(rw: RwMode, read_percent: u32, bs: &str) -> WorkloadSpec {
        let (r, w) = BsSplit::parse_pair(bs).unwrap();
        let align = u64::from(r.min_bytes().min(w.min_bytes()));
        WorkloadSpec {
            rw,
            read_percent,
            bs_read: r,
            bs_write: w,
            align_bytes: align,
            range_start: 1 << 20,
            range_bytes: 64 << 20,
            random_dist: RandomDist::Uniform,
            seed: 7,
            pacing: rate::PaceSpec::default(),
            buffers: contents::BufferContents::default(),
        }
    }

    #[test]
    fn random_ops_stay_in_range_and_aligned() {
        let s = spec(RwMode::RandRw, 70, "4k/50:64k/50");
        let mut g = Generator::new(&s, 0, 1);
        let mut reads = 0;
        for _ in 0..100_000 {
            let op = g.next_op();
            assert!(op.offset >= s.range_start);
            assert!(op.offset + u64::from(op.len) <= s.range_start + s.range_bytes);
            assert_eq!((op.offset - s.range_start) % 4096, 0);
            reads += (op.dir == Direction::Read) as u32;
        }
        let share = f64::from(reads) / 100_000.0;
        assert!((share - 0.7).abs() < 0.01, "{share}");
    }

    #[test]
    fn same_seed_same_sequence() {
        let s = spec(RwMode::RandRead, 100, "4k");
        let a: Vec<IoOp> = {
            let mut g = Generator::new(&s, 3, 4);
            (0..1000).map(|_| g.next_op()).collect()
        };
        let mut g = Generator::new(&s, 3, 4);
        let b: Vec<IoOp> = (0..1000).map(|_| g.next_op()).collect();
        assert_eq!(a, b);
        let mut other = Generator::new(&s, 2, 4);
        assert_ne!(a[0..10], (0..10).map(|_| other.next_op()).collect::<Vec<_>>()[..]);
    }

    #[test]
    fn sequential_workers_get_their_own_slices_and_wrap() {
        let s = spec(RwMode::Read, 100, "1m");
        let slice = s.range_bytes / 4;
        for w in 0..4u64 {
            let mut g = Generator::new(&s, w as usize, 4);
            let first = g.next_op();
            assert_eq!(first.offset, s.range_start + w * slice);
            for i in 1..16u64 {
                assert_eq!(g.next_op().offset, first.offset + i * (1 << 20));
            }
            assert_eq!(g.next_op().offset, first.offset, "wraps after its slice");
        }
    }

    #[test]
    fn read_only_and_write_only() {
        let mut g = Generator::new(&spec(RwMode::RandWrite, 0, "4k"), 0, 1);
        assert!((0..1000).all(|_| g.next_op().dir == Direction::Write));
        let mut g = Generator::new(&spec(RwMode::RandRead, 100, "4k"), 0, 1);
        assert!((0..1000).all(|_| g.next_op().dir == Direction::Read));
    }

    #[test]
    fn parses_rw_words() {
        assert_eq!(RwMode::parse("randrw"), Ok(RwMode::RandRw));
        assert!(RwMode::parse("randomread").unwrap_err().contains("not an access pattern"));
    }
}

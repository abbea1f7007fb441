//! What to issue: the direction, offset and length of every I/O, when (rate pacing, think time),
//! and what written blocks hold (buffer contents).
//!
//! A [`Generator`] is owned by one worker and produces one [`IoOp`] per call without allocating. It
//! knows nothing of engines: the same seed yields the same sequence of operations whichever engine
//! carries them out, which is what lets `compare` put engines side by side on identical work.

pub mod blockmap;
pub mod bssplit;
pub mod contents;
pub mod dist;
pub mod flow;
pub mod pattern;
pub mod prio;
pub mod rate;

use crate::io::{Direction, IoOp, IoPrio};
use bssplit::BsSplit;
use dist::{IndexSampler, RandomDist, RandomMap};
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
    /// Sequential trims (fio's `trim`).
    Trim,
    RandTrim,
    /// Each block trimmed, then written, sequentially (fio's `trimwrite`).
    TrimWrite,
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
            "trim" => RwMode::Trim,
            "randtrim" => RwMode::RandTrim,
            "trimwrite" => RwMode::TrimWrite,
            _ => {
                return Err(format!(
                    "'{text}' is not an access pattern; use read, write, randread, randwrite, rw, randrw, trim, randtrim or trimwrite"
                ));
            }
        })
    }

    pub fn is_random(self) -> bool {
        matches!(self, RwMode::RandRead | RwMode::RandWrite | RwMode::RandRw | RwMode::RandTrim)
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
            RwMode::Trim => "trim",
            RwMode::RandTrim => "randtrim",
            RwMode::TrimWrite => "trimwrite",
        }
    }

    /// The shares of a pattern that is not a mix (`rw`/`randrw` take theirs from `--rwmix`).
    pub fn fixed_mix(self) -> Option<Mix> {
        match self {
            RwMode::Read | RwMode::RandRead => Some(Mix::only(Direction::Read)),
            RwMode::Write | RwMode::RandWrite => Some(Mix::only(Direction::Write)),
            RwMode::Trim | RwMode::RandTrim => Some(Mix::only(Direction::Trim)),
            RwMode::TrimWrite => Some(Mix::read_write(0).with(Direction::Trim, 50).with(Direction::Write, 50)),
            RwMode::Rw | RwMode::RandRw => None,
        }
    }
}

impl fmt::Display for RwMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The share of each direction in percent, indexed by [`Direction`]; they add up to 100.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mix(pub [u32; Direction::COUNT]);

impl Mix {
    /// Every I/O in one direction.
    pub fn only(dir: Direction) -> Mix {
        Mix::read_write(0).with(Direction::Write, 0).with(dir, 100)
    }

    /// `read` percent reads, the rest writes (fio's `rwmixread`).
    pub fn read_write(read: u32) -> Mix {
        let mut m = [0; Direction::COUNT];
        m[Direction::Read as usize] = read;
        m[Direction::Write as usize] = 100 - read.min(100);
        Mix(m)
    }

    fn with(mut self, dir: Direction, percent: u32) -> Mix {
        self.0[dir as usize] = percent;
        self
    }

    /// Parses `--rwmix`: `read=70,write=20,trim=10` (names: read, write, trim, write-zeroes,
    /// flush; a direction left out has no share). The shares must add up to 100.
    pub fn parse(text: &str) -> Result<Mix, String> {
        let mut m = [0u32; Direction::COUNT];
        let mut seen = [false; Direction::COUNT];
        for item in text.split(',').map(str::trim) {
            let Some((name, value)) = item.split_once('=') else {
                return Err(format!("'{item}' is not NAME=PERCENT; write e.g. read=70,write=20,trim=10"));
            };
            let dir = match name.trim() {
                "read" => Direction::Read,
                "write" => Direction::Write,
                "trim" => Direction::Trim,
                "write-zeroes" | "write_zeroes" => Direction::WriteZeroes,
                "flush" => Direction::Flush,
                other => {
                    return Err(format!(
                        "'{other}' is not an operation; the shares are read, write, trim, write-zeroes and flush"
                    ));
                }
            };
            let pct: u32 = value
                .trim()
                .parse()
                .ok()
                .filter(|p| *p <= 100)
                .ok_or_else(|| format!("{name}={value} is not a share; write a whole percentage from 0 to 100"))?;
            if std::mem::replace(&mut seen[dir as usize], true) {
                return Err(format!("{name} is given twice in '{text}'; give each operation once"));
            }
            m[dir as usize] = pct;
        }
        let sum: u32 = m.iter().sum();
        if sum != 100 {
            return Err(format!("the shares in '{text}' add up to {sum}, not 100; make them add up to 100"));
        }
        Ok(Mix(m))
    }

    pub fn share(&self, dir: Direction) -> u32 {
        self.0[dir as usize]
    }

    pub fn issues(&self, dir: Direction) -> bool {
        self.share(dir) > 0
    }

    /// Whether any operation changes the target's contents (writes, trims, write-zeroes).
    pub fn destroys(&self) -> bool {
        Direction::ALL.iter().any(|&d| d.destroys() && self.issues(d))
    }

    /// Whether more than reads and writes are in the mix.
    pub fn beyond_read_write(&self) -> bool {
        self.issues(Direction::Trim) || self.issues(Direction::WriteZeroes) || self.issues(Direction::Flush)
    }

    /// `read=70,write=20,trim=10`: the directions with a share, in [`Direction`] order.
    pub fn to_arg(&self) -> String {
        Direction::ALL
            .iter()
            .filter(|&&d| self.issues(d))
            .map(|&d| format!("{}={}", d.label(), self.share(d)))
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl Serialize for Mix {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        for d in Direction::ALL.iter().filter(|&&d| self.issues(d)) {
            m.serialize_entry(d.name(), &self.share(*d))?;
        }
        m.end()
    }
}

/// `read_percent` (what readers of older documents know) and `mix`, the share of each operation.
fn mix_fields<S: serde::Serializer>(mix: &Mix, s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Fields<'a> {
        read_percent: u32,
        mix: &'a Mix,
    }
    Fields { read_percent: mix.share(Direction::Read), mix }.serialize(s)
}

/// A validated workload: everything a generator needs, with sizes in bytes.
#[derive(Clone, Debug, Serialize)]
pub struct WorkloadSpec {
    pub rw: RwMode,
    /// The share of each direction (written as `read_percent` and `mix`).
    #[serde(flatten, serialize_with = "mix_fields")]
    pub mix: Mix,
    /// Sizes of reads; of writes and write-zeroes; of trims (fio's three `bs` values; a flush
    /// has no size).
    pub bs_read: BsSplit,
    pub bs_write: BsSplit,
    pub bs_trim: BsSplit,
    /// Offsets are multiples of this many bytes (relative to `range_start`).
    pub align_bytes: u64,
    /// The working set: `[range_start, range_start + range_bytes)` of the target.
    pub range_start: u64,
    pub range_bytes: u64,
    pub random_dist: RandomDist,
    /// fio's random map (its default without `norandommap`): random offsets cover every block of
    /// the working set once per pass instead of being drawn with replacement. Only a uniform
    /// distribution keeps one, as in fio.
    pub random_map: bool,
    /// Bytes a sequential pattern skips after each I/O, negative to go backwards (fio's
    /// `rw=read:8k`, its `ddir_seq_add`).
    #[serde(skip_serializing_if = "is_zero")]
    pub seq_add_bytes: i64,
    /// fio's `zonemode=strided`: I/O stays in one zone until it moved the zone's bytes, then
    /// skips on. Not in nvmebench's own document yet (its schema would need a new version).
    #[serde(skip)]
    pub zones: Option<StridedZones>,
    /// fio's `offset_increment`: worker i's working set starts `i` times this much after the run's
    /// `range_start` (each worker's spec already carries its own start, set where workers are
    /// planned), and is not sliced; 0: the workers share one working set.
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub clone_step_bytes: u64,
    pub seed: u64,
    /// fio's `rate` (per worker), `rate_process` and `thinktime`.
    pub pacing: rate::PaceSpec,
    /// What written blocks hold.
    pub buffers: contents::BufferContents,
    /// The priority each I/O is sent with (fio's `prio`, `prioclass` and `cmdprio_*`); not in
    /// nvmebench's own document (its schema has no place for it yet).
    #[serde(skip)]
    pub prio: prio::PrioSpec,
    /// fio's buffer_pattern: every write carries it, repeated (not in the result document yet).
    #[serde(skip)]
    pub buffer_pattern: Option<pattern::BufferPattern>,
}

/// fio's `zonemode=strided` (io_u.c's `setup_strided_zone_mode`): I/O happens in a zone of
/// `range_bytes` from the zone's start until `size_bytes` have been moved there (a sequential
/// pattern wraps to the zone's start when it reaches the zone's end, a random one draws from the
/// zone); then the next zone starts `range_bytes + skip_bytes` further on, back at the start of the
/// working set when that is past the target's end. The job still ends after its `size` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StridedZones {
    /// fio's `zonesize`: bytes moved in a zone before the next.
    pub size_bytes: u64,
    /// fio's `zonerange` (its default: `zonesize`): the zone's span.
    pub range_bytes: u64,
    /// fio's `zoneskip`: bytes left out between one zone's end and the next zone's start.
    pub skip_bytes: u64,
    /// Where zones wrap: the target's size (fio's `real_file_size`), whatever `size` says; a zone
    /// that would start there starts over at the working set's start.
    pub wrap_bytes: u64,
}

/// Where a generator is in its strided zones.
#[derive(Clone, Copy, Debug)]
struct ZoneCursor {
    zones: StridedZones,
    /// The current zone's first byte (fio's `file_offset`).
    start: u64,
    /// Bytes moved in the current zone (fio's `zone_bytes`).
    moved: u64,
    /// Zones entered, for a fresh random map in each.
    entered: u64,
}

fn is_zero(v: &i64) -> bool {
    *v == 0
}

fn is_zero_u64(v: &u64) -> bool {
    *v == 0
}

impl WorkloadSpec {
    /// The largest I/O this workload issues, which sizes every buffer.
    pub fn max_bs(&self) -> u32 {
        self.used_sizes().map(BsSplit::max_bytes).max().unwrap_or(0)
    }

    /// The sizes of `dir` (`None` for a flush, which has none).
    pub fn sizes_of(&self, dir: Direction) -> Option<&BsSplit> {
        match dir {
            Direction::Read => Some(&self.bs_read),
            Direction::Write | Direction::WriteZeroes => Some(&self.bs_write),
            Direction::Trim => Some(&self.bs_trim),
            Direction::Flush => None,
        }
    }

    /// The size mixes the workload draws from: reads', writes' (with write-zeroes) and trims',
    /// each once and only when issued.
    pub fn used_sizes(&self) -> impl Iterator<Item = &BsSplit> {
        let mut seen = [false; 3];
        [Direction::Read, Direction::Write, Direction::WriteZeroes, Direction::Trim]
            .into_iter()
            .filter(|&d| self.mix.issues(d))
            .filter(move |&d| {
                let lane = match d {
                    Direction::Read => 0,
                    Direction::Trim => 2,
                    _ => 1,
                };
                !std::mem::replace(&mut seen[lane], true)
            })
            .filter_map(|d| self.sizes_of(d))
    }

    /// Whether writes or write-zeroes take sizes from `bs_write`.
    pub fn uses_write_sizes(&self) -> bool {
        self.mix.issues(Direction::Write) || self.mix.issues(Direction::WriteZeroes)
    }

    /// fio's `bs` text of the sizes in use: `4k`, `4k,64k` (reads; writes and trims), `4k,64k,1m`;
    /// a direction the workload does not issue takes its neighbour's so it does not show.
    pub fn bs_text(&self) -> String {
        let (r, w, t) = (Direction::Read, self.uses_write_sizes(), self.mix.issues(Direction::Trim));
        let read = if self.mix.issues(r) {
            &self.bs_read
        } else if w {
            &self.bs_write
        } else {
            &self.bs_trim
        };
        let write = if w {
            &self.bs_write
        } else if t {
            &self.bs_trim
        } else {
            read
        };
        let trim = if t { &self.bs_trim } else { write };
        bs_fio([read, write, trim])
    }

    /// fio's `bs` text of all three directions' sizes, whether issued or not (`4k,64k,1m`).
    pub fn bs_fio(&self) -> String {
        bs_fio([&self.bs_read, &self.bs_write, &self.bs_trim])
    }

    /// Percentage of reads.
    pub fn read_percent(&self) -> u32 {
        self.mix.share(Direction::Read)
    }

    /// Whether the workload changes the target's contents: the target is opened for writing and a
    /// device needs `--allow-destroy`.
    pub fn writes(&self) -> bool {
        self.mix.destroys()
    }
}

/// The shortest fio text for reads', writes' and trims' sizes: a value carries on to the
/// directions after it.
fn bs_fio([read, write, trim]: [&BsSplit; 3]) -> String {
    match (read == write, write == trim) {
        (true, true) => read.to_fio(),
        (_, true) => format!("{},{}", read.to_fio(), write.to_fio()),
        _ => format!("{},{},{}", read.to_fio(), write.to_fio(), trim.to_fio()),
    }
}

/// Produces one worker's I/O sequence.
///
/// Random patterns spread over the whole working set; sequential ones give each worker its own
/// contiguous slice of it, so that N workers make N sequential streams rather than N copies of one.
pub struct Generator {
    rng: Xoshiro256PlusPlus,
    /// Cumulative shares as thresholds on a random `u64`, indexed by direction: an I/O goes to the
    /// first direction whose threshold its draw is below.
    cut: [u64; Direction::COUNT],
    mixed: bool,
    /// The mix has more than reads and writes (a read/write mix decides with one comparison).
    many: bool,
    always: Direction,
    /// The last direction with a share: where a draw of exactly `u64::MAX` lands.
    last: Direction,
    /// trimwrite: the write that follows each trim, at the trim's offset.
    trimwrite: bool,
    then_write: Option<(u64, u32)>,
    /// Sizes by direction (the flush entry is never read).
    bs: [BsSplit; Direction::COUNT],
    random: bool,
    sampler: IndexSampler,
    /// fio's random map, when the workload keeps one (it replaces `sampler`).
    map: Option<RandomMap>,
    align: u64,
    start: u64,
    end: u64,
    /// Where each direction's last sequential I/O ended (fio's `last_pos`).
    cursor: [u64; Direction::COUNT],
    /// The common case drawn without its branches: one direction, one size, uniform offsets drawn
    /// with replacement. The same draws as the general path, so the same sequence.
    uniform: Option<UniformDraw>,
    /// Bytes a sequential pattern skips after each I/O (`WorkloadSpec::seq_add_bytes`).
    seq_add: i64,
    /// fio's strided zones, when the workload has them.
    zone: Option<ZoneCursor>,
    /// The random map's seed (a fresh map per zone is drawn from it).
    seed: u64,
    /// Each I/O's priority, when the job sends any (`WorkloadSpec::prio`).
    prio: Option<prio::PrioPicker>,
    /// fio's random map where sizes vary: random blocks and sizes drawn as fio draws them, each
    /// I/O cut short at the first block already done (it replaces `map` and `sampler`).
    fill: Option<blockmap::BlockMap>,
    /// fio's end of a job that moves a number of bytes (`set_byte_budget`).
    budget: Option<ByteBudget>,
    /// Nothing more to draw: the byte budget is spent, or the fill map's pass is done with a
    /// budget to end on.
    spent: bool,
    /// The directions the mix issues.
    issues: [bool; Direction::COUNT],
}

/// The bytes a job still moves before it ends (fio's `io_bytes_exceeded`, counted at issue): of
/// reads and writes when it does both, else of its one direction.
#[derive(Clone, Copy, Debug)]
struct ByteBudget {
    counted: [bool; Direction::COUNT],
    left: u64,
}

/// One direction and size at uniform offsets without a map: `start + bounded(draw, n) * align`.
#[derive(Clone, Copy, Debug)]
struct UniformDraw {
    dir: Direction,
    len: u32,
    n: u64,
    start: u64,
    align: u64,
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
        // fio's strided zones are each job's own walk over the whole file: no slices either.
        let (start, end) = if spec.clone_step_bytes > 0 {
            // fio's offset_increment: the worker's own working set (its start already in the
            // spec), whatever the pattern.
            (spec.range_start, spec.range_start + spec.range_bytes)
        } else if (spec.rw.is_random() || spec.zones.is_some()) && !disjoint {
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
        // In strided zones random offsets come from one zone (fio's max_blocks over zonerange).
        let span = spec.zones.map_or(end - start, |z| z.range_bytes);
        let n = if span >= max_bs { (span - max_bs) / spec.align_bytes + 1 } else { 1 };
        let seed = spec.seed ^ (index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let trimwrite = spec.rw == RwMode::TrimWrite;
        let mut cut = [0u64; Direction::COUNT];
        let mut acc = 0u128;
        for (c, &share) in cut.iter_mut().zip(&spec.mix.0) {
            acc += u128::from(share);
            *c = ((acc << 64) / 100).min(u128::from(u64::MAX)) as u64;
        }
        let issued = Direction::ALL.iter().filter(|&&d| spec.mix.issues(d)).count();
        let mut g = Generator {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            cut,
            mixed: issued > 1 && !trimwrite,
            many: spec.mix.beyond_read_write(),
            always: Direction::ALL.into_iter().find(|&d| spec.mix.issues(d)).unwrap_or(Direction::Read),
            last: Direction::ALL.into_iter().rev().find(|&d| spec.mix.issues(d)).unwrap_or(Direction::Read),
            trimwrite,
            then_write: None,
            bs: Direction::ALL.map(|d| spec.sizes_of(d).unwrap_or(&spec.bs_write).clone()),
            random: spec.rw.is_random(),
            sampler: IndexSampler::with_block(spec.random_dist, n, spec.align_bytes, seed),
            map: (spec.random_map && spec.random_dist == RandomDist::Uniform).then(|| RandomMap::new(n, seed)),
            align: spec.align_bytes,
            start,
            end,
            cursor: [start; Direction::COUNT],
            uniform: None,
            seq_add: spec.seq_add_bytes,
            zone: spec.zones.map(|zones| ZoneCursor { zones, start, moved: 0, entered: 0 }),
            seed,
            prio: prio::PrioPicker::new(&spec.prio, seed),
            fill: None,
            budget: None,
            spent: false,
            issues: Direction::ALL.map(|d| spec.mix.issues(d)),
        };
        // Sizes that vary under fio's map: its axmap's walk (see `blockmap`), over every block
        // of the span, where one size walks the bijection.
        let varied = Direction::ALL.iter().any(|&d| spec.mix.issues(d) && !g.bs[d as usize].is_single());
        if g.map.is_some() && varied && g.zone.is_none() && g.random {
            g.map = None;
            g.fill = Some(blockmap::BlockMap::new(((end - start) / spec.align_bytes.max(1)).max(1)));
        }
        g.uniform = g.uniform_draw();
        g
    }

    /// Ends the generator after `bytes` (per fio's count: reads and writes when the mix has both,
    /// else its one direction); with a fill map, also once its pass is done. A worker asks
    /// [`spent`](Self::spent) before each draw.
    pub fn set_byte_budget(&mut self, bytes: u64) {
        let issues = |d: Direction| self.issues[d as usize];
        let (r, w) = (issues(Direction::Read), issues(Direction::Write) || issues(Direction::WriteZeroes));
        let mut counted = [false; Direction::COUNT];
        let dirs: &[Direction] = match (r, w) {
            (true, true) => &[Direction::Read, Direction::Write, Direction::WriteZeroes],
            (false, true) => &[Direction::Write, Direction::WriteZeroes],
            (true, false) => &[Direction::Read],
            (false, false) => &[Direction::Trim],
        };
        for &d in dirs {
            counted[d as usize] = true;
        }
        self.budget = Some(ByteBudget { counted, left: bytes });
        self.spent = bytes == 0;
        // The fast path keeps no count.
        self.uniform = None;
    }

    /// Whether the byte budget is spent: draw nothing more.
    #[inline]
    pub fn spent(&self) -> bool {
        self.spent
    }

    /// Whether this generator ends by itself (it has a byte budget).
    pub fn bounded(&self) -> bool {
        self.budget.is_some()
    }

    /// The fast path's parameters, when the workload is the common case it covers.
    fn uniform_draw(&self) -> Option<UniformDraw> {
        let dir = self.always;
        let n = self.sampler.uniform_blocks()?;
        let plain = !self.mixed
            && !self.trimwrite
            && self.random
            && self.map.is_none()
            && self.zone.is_none()
            && dir != Direction::Flush;
        let split = &self.bs[dir as usize];
        (plain && split.is_single()).then(|| UniformDraw {
            dir,
            len: split.pick(0),
            n,
            start: self.start,
            align: self.align,
        })
    }

    /// The byte range this generator issues into: `[start, end)`.
    pub fn range(&self) -> (u64, u64) {
        (self.start, self.end)
    }

    /// The next operation.
    #[inline]
    pub fn next_op(&mut self) -> IoOp {
        let op = self.draw_op();
        self.with_prio(op)
    }

    /// The next operation, in direction `dir` whatever the mix says (a paced worker whose other
    /// direction is ahead of its rate issues this one meanwhile).
    #[inline]
    pub fn next_op_in(&mut self, dir: Direction) -> IoOp {
        let op = self.draw_op_in(dir);
        self.with_prio(op)
    }

    /// `op` with its priority drawn, after its size (which cmdprio_bssplit goes by), and counted
    /// against the byte budget.
    #[inline(always)]
    fn with_prio(&mut self, mut op: IoOp) -> IoOp {
        if let Some(p) = &mut self.prio {
            op.prio = p.pick(op.dir, op.len);
        }
        if let Some(b) = &mut self.budget {
            if b.counted[op.dir as usize] {
                b.left = b.left.saturating_sub(u64::from(op.len));
                self.spent |= b.left == 0;
            }
        }
        op
    }

    #[inline]
    fn draw_op(&mut self) -> IoOp {
        if let Some(u) = self.uniform {
            let block = dist::bounded(self.rng.next_u64(), u.n);
            return IoOp { dir: u.dir, offset: u.start + block * u.align, len: u.len, prio: IoPrio::NONE };
        }
        let dir = if self.mixed {
            let r = self.rng.next_u64();
            if r < self.cut[0] {
                Direction::Read
            } else if !self.many || r < self.cut[1] {
                Direction::Write
            } else {
                self.beyond_write(r)
            }
        } else if self.trimwrite {
            if let Some((offset, len)) = self.then_write.take() {
                return IoOp { dir: Direction::Write, offset, len, prio: IoPrio::NONE };
            }
            Direction::Trim
        } else {
            self.always
        };
        self.draw_op_in(dir)
    }

    #[inline]
    fn draw_op_in(&mut self, dir: Direction) -> IoOp {
        if dir == Direction::Flush {
            return IoOp { dir, offset: 0, len: 0, prio: IoPrio::NONE };
        }
        if self.fill.is_some() {
            return self.draw_filling(dir);
        }
        let split = &self.bs[dir as usize];
        let len = if split.is_single() { split.pick(0) } else { split.pick(self.rng.next_u64()) };
        let base = match self.zone {
            Some(_) => self.enter_zone(dir, len),
            None => self.start,
        };
        let offset = if self.random {
            let block = match &mut self.map {
                Some(map) => map.next_block(),
                None => self.sampler.sample(&mut self.rng),
            };
            base + block * self.align
        } else {
            let c = &mut self.cursor[dir as usize];
            if self.seq_add != 0 && *c != self.start {
                *c = seq_step(*c - self.start, self.seq_add, self.end - self.start) + self.start;
            }
            // Strided zones reach past `size` to the target's end, as fio's do.
            let end = self.zone.map_or(self.end, |z| z.zones.wrap_bytes);
            if *c + u64::from(len) > end {
                *c = self.start;
            }
            let off = *c;
            // Keep the next offset on the alignment grid even after an odd-sized I/O.
            *c += u64::from(len).div_ceil(self.align) * self.align;
            off
        };
        if self.trimwrite {
            self.then_write = Some((offset, len));
        }
        IoOp { dir, offset, len, prio: IoPrio::NONE }
    }

    /// An I/O in `dir` under the fill map, as fio's `get_next_rand_offset`, `get_next_buflen` and
    /// `mark_random_map` make it: a uniform block over the whole span (the next free one after it
    /// when it is done), a size drawn until one fits before the span's end, then cut to the free
    /// blocks from there. A full map starts a new pass, or spends a bounded generator.
    fn draw_filling(&mut self, dir: Direction) -> IoOp {
        let map = self.fill.as_mut().expect("called with a fill map");
        if map.is_full() {
            map.clear();
        }
        let mut block = dist::bounded(self.rng.next_u64(), map.blocks());
        if map.is_set(block) {
            block = map.next_free_after(block).expect("a map that is not full has a free block");
        }
        let offset = self.start + block * self.align;
        let split = &self.bs[dir as usize];
        let mut len = split.pick(self.rng.next_u64());
        // The smallest size is the alignment, which always fits.
        while offset + u64::from(len) > self.end && len > split.min_bytes() {
            len = split.pick(self.rng.next_u64());
        }
        let align = self.align.max(1);
        let marked = map.set_run(block, u64::from(len).div_ceil(align));
        let len = u64::from(len).min(marked * align) as u32;
        if map.is_full() && self.budget.is_some() {
            self.spent = true;
        }
        if self.trimwrite {
            self.then_write = Some((offset, len));
        }
        IoOp { dir, offset, len, prio: IoPrio::NONE }
    }

    /// fio's `setup_strided_zone_mode` before an I/O of `len` bytes in `dir`: on to the next zone
    /// once this one has moved its bytes, a sequential cursor back to the zone's start at its end,
    /// and a fresh random map each time the zone's span has been moved; the zone's start.
    fn enter_zone(&mut self, dir: Direction, len: u32) -> u64 {
        let z = self.zone.as_mut().expect("called with zones");
        let c = &mut self.cursor[dir as usize];
        if z.moved >= z.zones.size_bytes {
            z.moved = 0;
            z.start += z.zones.range_bytes + z.zones.skip_bytes;
            if z.start >= z.zones.wrap_bytes {
                z.start = self.start;
            }
            *c = z.start;
        }
        if *c >= z.start + z.zones.range_bytes {
            *c = z.start;
        }
        // fio's fio_file_reset: every direction's cursor to the zone's start, and a fresh map.
        if z.moved % z.zones.range_bytes == 0 {
            z.entered += 1;
            self.cursor = [z.start; Direction::COUNT];
            if let Some(map) = &mut self.map {
                *map = RandomMap::new(map.blocks(), self.seed ^ z.entered);
            }
        }
        z.moved += u64::from(len);
        z.start
    }

    /// The direction of a draw past the write share (trims, write-zeroes, flushes).
    #[inline]
    fn beyond_write(&self, r: u64) -> Direction {
        Direction::ALL[2..].iter().zip(&self.cut[2..]).find(|&(_, &c)| r < c).map_or(self.last, |(&d, _)| d)
    }
}

/// fio's next sequential position with an offset modifier (io_u.c's `get_next_seq_offset`), from
/// `last`, where the previous I/O ended, relative to the start of a range of `span` bytes: `add`
/// bytes on, and past the end (or before the start), back to the start when skipping forwards, or
/// to `add` before the end when going backwards.
fn seq_step(last: u64, add: i64, span: u64) -> u64 {
    match last.checked_add_signed(add) {
        Some(p) if p < span => p,
        _ if add > 0 => 0,
        _ => span.saturating_sub(add.unsigned_abs()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(rw: RwMode, read_percent: u32, bs: &str) -> WorkloadSpec {
        spec_mix(rw, rw.fixed_mix().unwrap_or(Mix::read_write(read_percent)), bs)
    }

    /// fio's offset modifier (rw=read:SIZE): the offsets fio 3.33 wrote to its iolog for
    /// size=64k bs=4k, in KiB: backwards with -8k, holes of 4k and 12k, each wrapping as fio wraps.
    #[test]
    fn sequential_offsets_with_fios_modifier() {
        for (add, fio) in [
            (-8, vec![0, 56, 52, 48, 44, 40, 36, 32, 28, 24, 20, 16, 12, 8, 4, 0, 56]),
            (4, vec![0, 8, 16, 24, 32, 40, 48, 56, 0, 8, 16, 24, 32, 40, 48, 56]),
            (12, vec![0, 16, 32, 48, 0, 16, 32, 48, 0, 16, 32, 48, 0, 16, 32, 48]),
        ] {
            let mut s = spec(RwMode::Read, 100, "4k");
            (s.range_start, s.range_bytes, s.seq_add_bytes) = (1 << 20, 64 << 10, add << 10);
            let mut g = Generator::new(&s, 0, 1);
            let got: Vec<i64> = fio.iter().map(|_| ((g.next_op().offset - (1 << 20)) >> 10) as i64).collect();
            assert_eq!(got, fio, "rw=read:{add}k");
        }
    }

    /// fio's zonemode=strided, offsets as io_u.c's setup_strided_zone_mode makes them: zonesize
    /// bytes in each zone, zoneskip between zones, back to the start past the end; a zonesize
    /// above the zonerange goes over the zone again; random offsets stay in the zone.
    #[test]
    fn strided_zones_as_fio_strides() {
        let zoned = |rw: RwMode, size: u64, range: u64, skip: u64| {
            let mut s = spec(rw, 100, "4k");
            s.range_bytes = 64 << 10;
            let wrap_bytes = s.range_start + s.range_bytes;
            s.zones = Some(StridedZones {
                size_bytes: size << 10,
                range_bytes: range << 10,
                skip_bytes: skip << 10,
                wrap_bytes,
            });
            s
        };
        let kib = |g: &mut Generator, n: usize| -> Vec<u64> {
            (0..n).map(|_| (g.next_op().offset - (1 << 20)) >> 10).collect()
        };
        let mut g = Generator::new(&zoned(RwMode::Read, 8, 8, 8), 0, 1);
        assert_eq!(kib(&mut g, 10), [0, 4, 16, 20, 32, 36, 48, 52, 0, 4]);
        let mut g = Generator::new(&zoned(RwMode::Read, 16, 8, 24), 0, 1);
        assert_eq!(kib(&mut g, 10), [0, 4, 0, 4, 32, 36, 32, 36, 0, 4], "zonesize twice the zonerange");
        let mut g = Generator::new(&zoned(RwMode::Read, 4, 8, 0), 0, 1);
        assert_eq!(kib(&mut g, 4), [0, 8, 16, 24], "zonesize under the zonerange");
        for map in [false, true] {
            let mut s = zoned(RwMode::RandRead, 16, 16, 16);
            s.random_map = map;
            let mut g = Generator::new(&s, 0, 1);
            let zones: Vec<u64> = kib(&mut g, 16).iter().map(|o| o / 16).collect();
            assert_eq!(zones, [0, 0, 0, 0, 2, 2, 2, 2, 0, 0, 0, 0, 2, 2, 2, 2], "random_map={map}");
            if map {
                let mut blocks = kib(&mut g, 4);
                blocks.sort_unstable();
                assert_eq!(blocks, [0, 4, 8, 12], "the map covers each zone's blocks once");
            }
        }
    }

    /// fio's offset_increment: a worker covers the whole of its own working set (its start
    /// already in its spec, 2 steps on here), sequential or random, rather than a slice of it.
    #[test]
    fn each_worker_starts_its_steps_on() {
        for rw in [RwMode::Write, RwMode::RandRead] {
            let mut s = spec(rw, if rw.is_random() { 100 } else { 0 }, "4k");
            (s.range_start, s.range_bytes, s.clone_step_bytes, s.random_map) =
                ((1 << 20) + 2 * (256 << 10), 64 << 10, 256 << 10, true);
            let mut g = Generator::new(&s, 2, 4);
            let mut got: Vec<u64> = (0..16).map(|_| (g.next_op().offset - (1 << 20)) >> 10).collect();
            got.sort_unstable();
            let want: Vec<u64> = (0..16).map(|i| 512 + 4 * i).collect();
            assert_eq!(got, want, "{rw:?}: worker 2 at 2 x 256k, all of its 64k");
        }
    }

    fn spec_mix(rw: RwMode, mix: Mix, bs: &str) -> WorkloadSpec {
        let [r, w, t] = BsSplit::parse_per_direction(bs, 4096).unwrap();
        let align = u64::from(r.min_bytes().min(w.min_bytes()).min(t.min_bytes()));
        WorkloadSpec {
            rw,
            mix,
            bs_read: r,
            bs_write: w,
            bs_trim: t,
            align_bytes: align,
            range_start: 1 << 20,
            range_bytes: 64 << 20,
            random_dist: RandomDist::Uniform,
            random_map: false,
            seq_add_bytes: 0,
            zones: None,
            clone_step_bytes: 0,
            seed: 7,
            pacing: rate::PaceSpec::default(),
            buffers: contents::BufferContents::default(),
            prio: Default::default(),
            buffer_pattern: None,
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

    /// fio's default without norandommap: a pass over the working set writes every block once
    /// (drawn with replacement, 4096 draws over 4096 blocks touch about 63% of them).
    #[test]
    fn the_random_map_writes_every_block_once_per_pass() {
        let mut s = spec(RwMode::RandWrite, 0, "4k");
        s.range_bytes = 16 << 20;
        let blocks = (s.range_bytes / 4096) as usize;
        let touched = |s: &WorkloadSpec| {
            let mut g = Generator::new(s, 0, 1);
            let mut seen = vec![0u32; blocks];
            for _ in 0..blocks {
                seen[((g.next_op().offset - s.range_start) / 4096) as usize] += 1;
            }
            seen
        };
        let with_replacement = touched(&s).iter().filter(|&&c| c > 0).count();
        assert!(with_replacement < blocks * 7 / 10, "{with_replacement} of {blocks}");
        s.random_map = true;
        assert!(touched(&s).iter().all(|&c| c == 1), "every block once");
        // A mix covers the blocks once between its reads and writes, as fio's one map per file.
        let mut m = spec(RwMode::RandRw, 50, "4k");
        m.range_bytes = 16 << 20;
        m.random_map = true;
        assert!(touched(&m).iter().all(|&c| c == 1));
    }

    /// fio's map with sizes that vary: each I/O starts on a free block and is cut short at the
    /// first one done, so a bounded pass covers every block exactly once, moves exactly the span's
    /// bytes, and takes more I/Os than the span over the mean size (fio's iometer example: 3506
    /// I/Os for 16 MiB where the mean size, 11.1 KiB, gives 1478). Then nothing more is drawn.
    #[test]
    fn the_map_cuts_sizes_that_vary_and_a_budget_ends_the_pass() {
        let mut s = spec(RwMode::RandRw, 80, "512/10:1k/5:2k/5:4k/60:8k/2:16k/4:32k/4:64k/10");
        (s.range_bytes, s.align_bytes, s.random_map) = (16 << 20, 512, true);
        let blocks = (s.range_bytes / 512) as usize;
        let mut g = Generator::new(&s, 0, 1);
        g.set_byte_budget(s.range_bytes);
        let mut seen = vec![0u32; blocks];
        let (mut ios, mut bytes, mut cut) = (0u64, 0u64, 0u64);
        while !g.spent() {
            let op = g.next_op();
            let first = ((op.offset - s.range_start) / 512) as usize;
            seen[first..first + (op.len as usize).div_ceil(512)].iter_mut().for_each(|c| *c += 1);
            cut += u64::from(!s.bs_write.entries.iter().any(|e| e.bytes == op.len));
            ios += 1;
            bytes += u64::from(op.len);
            assert!(ios < 1 << 20, "the pass ends");
        }
        assert!(seen.iter().all(|&c| c == 1), "every block once");
        assert_eq!(bytes, s.range_bytes);
        assert!((3000..4200).contains(&ios), "{ios} I/Os, as fio's 3333 to 3735 over six seeds");
        assert!(cut > 0, "some I/Os were cut short");
        // Without a map a budget ends on the first draw that reaches it.
        let mut s = spec(RwMode::RandWrite, 0, "4k/50:64k/50");
        s.range_bytes = 16 << 20;
        let mut g = Generator::new(&s, 0, 1);
        g.set_byte_budget(1 << 20);
        let mut bytes = 0;
        while !g.spent() {
            bytes += u64::from(g.next_op().len);
        }
        assert!(((1 << 20)..(1 << 20) + (64 << 10)).contains(&bytes), "{bytes}");
        // A read-write mix counts both; a trim in the mix does not count (fio's td_rw).
        let mut m = spec(RwMode::RandRw, 50, "4k/50:8k/50");
        m.mix = m.mix.with(Direction::Trim, 20).with(Direction::Read, 40);
        let mut g = Generator::new(&m, 0, 1);
        g.set_byte_budget(1 << 20);
        let mut counted = 0;
        while !g.spent() {
            let op = g.next_op();
            counted += if op.dir == Direction::Trim { 0 } else { u64::from(op.len) };
        }
        assert!(((1 << 20)..(1 << 20) + (8 << 10)).contains(&counted), "{counted}");
    }

    /// The uniform fast path draws what the general path draws: the same sequence, seed for seed.
    #[test]
    fn the_uniform_fast_path_is_the_general_path() {
        for (rw, bs) in [(RwMode::RandRead, "4k"), (RwMode::RandWrite, "8k"), (RwMode::RandTrim, "4k")] {
            let s = spec(rw, 100, bs);
            let mut fast = Generator::new(&s, 1, 3);
            assert!(fast.uniform.is_some(), "{rw:?} {bs} takes the fast path");
            let mut general = Generator::new(&s, 1, 3);
            general.uniform = None;
            for _ in 0..10_000 {
                assert_eq!(fast.next_op(), general.next_op());
            }
        }
        let mut mapped = spec(RwMode::RandRead, 100, "4k");
        mapped.random_map = true;
        for s in [
            spec(RwMode::RandRw, 50, "4k"),
            spec(RwMode::RandRead, 100, "4k/50:64k/50"),
            spec(RwMode::Read, 100, "4k"),
            mapped,
        ] {
            assert!(Generator::new(&s, 0, 1).uniform.is_none(), "{:?} {:?}", s.rw, s.random_map);
        }
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
        assert_eq!(RwMode::parse("randtrim"), Ok(RwMode::RandTrim));
        assert_eq!(RwMode::parse("trimwrite"), Ok(RwMode::TrimWrite));
        assert!(RwMode::parse("randomread").unwrap_err().contains("not an access pattern"));
    }

    #[test]
    fn parses_mixes() {
        let m = Mix::parse("read=70,write=20,trim=10").unwrap();
        assert_eq!(m.0, [70, 20, 10, 0, 0]);
        assert_eq!(m.to_arg(), "read=70,write=20,trim=10");
        assert_eq!(Mix::parse("read=90, write-zeroes=9, flush=1").unwrap().0, [90, 0, 0, 9, 1]);
        assert_eq!(Mix::parse("write_zeroes=100").unwrap().0, [0, 0, 0, 100, 0]);
        assert!(Mix::parse("write=100").unwrap().destroys());
        assert!(!Mix::parse("read=99,flush=1").unwrap().destroys());
        assert_eq!(
            Mix::parse("read=70,write=20").unwrap_err(),
            "the shares in 'read=70,write=20' add up to 90, not 100; make them add up to 100"
        );
        assert_eq!(
            Mix::parse("read=70,erase=30").unwrap_err(),
            "'erase' is not an operation; the shares are read, write, trim, write-zeroes and flush"
        );
        assert_eq!(
            Mix::parse("read=50,read=50").unwrap_err(),
            "read is given twice in 'read=50,read=50'; give each operation once"
        );
        assert_eq!(Mix::parse("read").unwrap_err(), "'read' is not NAME=PERCENT; write e.g. read=70,write=20,trim=10");
        assert_eq!(
            Mix::parse("read=170").unwrap_err(),
            "read=170 is not a share; write a whole percentage from 0 to 100"
        );
    }

    #[test]
    fn mixes_issue_every_share() {
        let s = spec_mix(
            RwMode::RandRw,
            Mix::parse("read=60,write=20,trim=10,write-zeroes=5,flush=5").unwrap(),
            "4k,64k,1m",
        );
        let mut g = Generator::new(&s, 0, 1);
        let mut count = [0u32; Direction::COUNT];
        for _ in 0..200_000 {
            let op = g.next_op();
            count[op.dir as usize] += 1;
            match op.dir {
                Direction::Flush => assert_eq!((op.offset, op.len), (0, 0)),
                Direction::Read => assert_eq!(op.len, 4096),
                Direction::Trim => {
                    assert_eq!(op.len, 1 << 20, "trims take the third size");
                    assert!(op.offset + (1 << 20) <= s.range_start + s.range_bytes);
                }
                _ => assert_eq!(op.len, 65536, "write-zeroes take the write size"),
            }
        }
        for (d, want) in Direction::ALL.iter().zip([60.0, 20.0, 10.0, 5.0, 5.0]) {
            let got = f64::from(count[*d as usize]) / 2000.0;
            assert!((got - want).abs() < 0.5, "{}: {got}% instead of {want}%", d.name());
        }
        assert_eq!(s.max_bs(), 1 << 20);
        assert_eq!(s.bs_text(), "4k,64k,1m");
        // A read/write mix without the rest decides as before.
        let mut g = Generator::new(&spec(RwMode::RandRw, 70, "4k"), 0, 1);
        assert!((0..10_000).all(|_| g.next_op().dir.moves_data()));
    }

    #[test]
    fn sizes_in_use_and_their_fio_text() {
        let s = spec(RwMode::RandTrim, 0, "4k,64k,1m");
        assert_eq!((s.max_bs(), s.bs_text()), (1 << 20, "1m".to_string()), "only trims are issued");
        let s = spec(RwMode::RandRead, 100, "4k,64k,1m");
        assert_eq!((s.max_bs(), s.bs_text()), (4096, "4k".to_string()));
        let s = spec(RwMode::RandRw, 50, "4k,64k,1m");
        assert_eq!((s.max_bs(), s.bs_text()), (65536, "4k,64k".to_string()));
        let s = spec_mix(RwMode::RandRw, Mix::parse("read=50,trim=50").unwrap(), "4k,64k,1m");
        assert_eq!(s.bs_text(), "4k,1m");
        assert_eq!(s.used_sizes().count(), 2);
        let s = spec_mix(RwMode::RandRw, Mix::parse("write=50,write-zeroes=25,trim=25").unwrap(), "4k,64k,64k");
        assert_eq!((s.bs_text(), s.used_sizes().count()), ("64k".to_string(), 2));
        assert_eq!(s.bs_fio(), "4k,64k");
        assert_eq!(spec(RwMode::RandRead, 100, "4k,4k,1m").bs_fio(), "4k,4k,1m");
    }

    #[test]
    fn trim_patterns() {
        let mut g = Generator::new(&spec(RwMode::Trim, 0, "1m"), 0, 1);
        let first = g.next_op();
        assert_eq!((first.dir, first.offset, first.len), (Direction::Trim, 1 << 20, 1 << 20));
        assert_eq!(g.next_op().offset, 2 << 20, "sequential");
        let mut g = Generator::new(&spec(RwMode::RandTrim, 0, "4k"), 0, 1);
        assert!((0..1000).all(|_| g.next_op().dir == Direction::Trim));
        // trimwrite: each block trimmed, then written at the same offset, walking sequentially.
        let mut g = Generator::new(&spec(RwMode::TrimWrite, 0, "64k"), 0, 1);
        for i in 0..8u64 {
            let t = g.next_op();
            let w = g.next_op();
            assert_eq!((t.dir, w.dir), (Direction::Trim, Direction::Write));
            assert_eq!((t.offset, t.len), (w.offset, w.len));
            assert_eq!(t.offset, (1 << 20) + i * 65536);
        }
    }
}

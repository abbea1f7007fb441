//! What written blocks hold: data a compressing or deduplicating drive cannot complete for free.
//!
//! By default every write is random and unique. `--buffer-compress-percentage N` (fio's
//! `buffer_compress_percentage`) makes N% of every 512-byte chunk (fio's `buffer_compress_chunk`)
//! zeros after a random start, so the data compresses to about (100 - N)% of its size.
//! `--dedupe-percentage N` (fio's `dedupe_percentage`) makes N% of writes exact copies of an
//! earlier write: with `--dedupe-mode repeat` (fio's default) of this worker's latest unique
//! write; with `working_set`, of one drawn uniformly from this worker's first
//! `--dedupe-working-set-percentage` of `--size` in unique writes, or, with `--dedupe_global`, from
//! a working set spread over every thread's first unique writes, as fio's.
//!
//! Refreshing a whole buffer per write would cost more than the rest of the I/O path, so a
//! [`Filler`] keeps every slot's buffer in the pattern and, per write, overwrites only the first
//! (up to) 8 random bytes of each 512-byte chunk with a stamp drawn for that write (fio's
//! `scramble_buffers` idea): every 512-byte sector, and so every block a drive could deduplicate,
//! differs from every other write's, at a cost of one store per 512 bytes. A copy reuses an
//! earlier write's stamp. A read landing in a slot's buffer is noted, and the pattern is copied
//! back before the slot's next write. With `--verify` the verify module fills the blocks instead
//! (header and payload, in the same layout).
//!
//! It deliberately does not know engines: the worker hands it the slot's bytes.

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;

/// fio's default `buffer_compress_chunk`: the compressible share is laid out per this many bytes.
pub const COMPRESS_CHUNK: usize = 512;

/// Which earlier write a deduplicated write copies (fio's `dedupe_mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DedupeMode {
    /// The latest unique write of this worker (fio's `repeat`, its default).
    #[default]
    Repeat,
    /// One drawn uniformly from a working set of [`BufferContents::working_set_blocks`] blocks:
    /// this worker's first that many unique writes, or, with `dedupe_global`, as many spread over
    /// every worker's first unique writes (fio's `working_set`).
    WorkingSet,
}

impl DedupeMode {
    /// Parses fio's words for it.
    ///
    /// # Errors
    /// A sentence naming the two modes.
    pub fn parse(text: &str) -> Result<DedupeMode, String> {
        match text {
            "repeat" => Ok(DedupeMode::Repeat),
            "working_set" => Ok(DedupeMode::WorkingSet),
            _ => Err(format!("'{text}' is not a dedupe mode; write repeat or working_set")),
        }
    }
}

/// The buffer options in effect.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BufferContents {
    /// Percentage of every chunk that is zeros (fio's `buffer_compress_percentage`).
    pub compress_percent: u32,
    /// Percentage of writes that copy an earlier one (fio's `dedupe_percentage`).
    pub dedupe_percent: u32,
    /// Which earlier write a copy repeats (fio's `dedupe_mode`). This and the two after it are
    /// not in nvmebench's own document (its schema has no place for them yet).
    #[serde(skip)]
    pub dedupe_mode: DedupeMode,
    /// The working set of [`DedupeMode::WorkingSet`], in blocks of the smallest write: fio's
    /// `dedupe_working_set_percentage` of the job's size, over that size (at least 1).
    #[serde(skip)]
    pub working_set_blocks: u64,
    /// Whether the working set spans every worker's unique writes (fio's `dedupe_global`).
    #[serde(skip)]
    pub dedupe_global: bool,
    /// fio's thread number (from 0) of the first worker of this run, and how many threads the
    /// whole job file (or run) has: where a shared working set's blocks come from.
    #[serde(skip)]
    pub dedupe_thread_base: usize,
    #[serde(skip)]
    pub dedupe_threads: usize,
}

impl BufferContents {
    /// Random bytes at the start of each [`COMPRESS_CHUNK`]-byte chunk; the rest are zeros.
    pub fn random_per_chunk(&self) -> usize {
        COMPRESS_CHUNK * (100 - self.compress_percent.min(100) as usize) / 100
    }

    /// `dedupe_percent` as a threshold on a uniform `u64`.
    pub fn dedupe_threshold(&self) -> u64 {
        ((u128::from(self.dedupe_percent.min(100)) << 64) / 100).min(u128::from(u64::MAX)) as u64
    }

    pub fn is_default(&self) -> bool {
        *self == BufferContents::default()
    }
}

/// splitmix64's finaliser: a fast, well-mixed 64-bit hash.
#[inline]
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A value that differs from run to run, for [`Filler::new`]'s seed: data written by two runs with
/// the same `--seed` (same offsets) still differs, so a drive that notices a block rewritten with
/// what it already holds gains nothing. Offsets, pacing and verify payloads stay reproducible.
pub fn run_nonce() -> u64 {
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    mix(t.as_nanos() as u64 ^ u64::from(std::process::id()).rotate_left(32))
}

/// One value for the whole process, drawn from [`run_nonce`] at first use: what workers that
/// share a dedupe working set derive its blocks from.
pub fn process_nonce() -> u64 {
    static NONCE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *NONCE.get_or_init(run_nonce)
}

/// The stamp key of fio thread `thread` when workers share a working set: the same in every
/// worker of the process, so that each can write the others' unique blocks.
fn thread_key(thread: u64) -> u64 {
    mix(process_nonce() ^ (thread + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x7365_7473_6b72_6f77)
}

/// Keeps one worker's write buffers in the pattern and stamps each write.
pub struct Filler {
    /// The pattern, as long as the largest I/O: random starts, zero tails, per chunk.
    base: Vec<u8>,
    /// Per slot: how many leading bytes of its buffer hold `base` (a read resets it to 0).
    clean: Vec<u32>,
    stamp_bytes: usize,
    key: u64,
    dedupe_threshold: u64,
    dedupe_mode: DedupeMode,
    /// The working set's size in blocks (at least 1).
    working_set_blocks: u64,
    /// With `dedupe_global`: this worker's fio thread number, the number of threads, and the
    /// working set's blocks per thread (fio's `pages_per_seed`).
    shared: Option<(u64, u64, u64)>,
    rng: Xoshiro256PlusPlus,
    /// Unique writes so far; a copy repeats one of them, or a working-set block.
    unique: u64,
}

impl Filler {
    /// A filler for `slots` buffers of up to `max_bytes`, its pattern and stamps drawn from `seed`.
    /// `thread` is the worker's number in its run (its fio thread number less
    /// `dedupe_thread_base`).
    ///
    /// With a shared working set (`dedupe_global`), the pattern and every worker's stamps come from
    /// the process's nonce and the workers' thread numbers instead, so that any worker can write
    /// another's unique blocks, as fio's shared set holds every job's first unique writes.
    pub fn new(contents: BufferContents, slots: usize, max_bytes: usize, seed: u64, thread: usize) -> Filler {
        let shared = contents.dedupe_global && contents.dedupe_mode == DedupeMode::WorkingSet;
        let tindex = (contents.dedupe_thread_base + thread) as u64;
        let mut base_rng =
            Xoshiro256PlusPlus::seed_from_u64(if shared { process_nonce() } else { seed } ^ 0x6275_6666_6572_7321);
        let random = contents.random_per_chunk();
        let mut base = vec![0u8; max_bytes];
        for chunk in base.chunks_mut(COMPRESS_CHUNK) {
            let n = random.min(chunk.len());
            base_rng.fill_bytes(&mut chunk[..n]);
        }
        let mut rng = if shared { Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x6275_6666_6572_7321) } else { base_rng };
        let own_key = rng.next_u64();
        let threads = (contents.dedupe_threads as u64).max(tindex + 1);
        let blocks = contents.working_set_blocks.max(1);
        Filler {
            base,
            clean: vec![0; slots],
            stamp_bytes: random.min(8),
            key: if shared { thread_key(tindex) } else { own_key },
            dedupe_threshold: contents.dedupe_threshold(),
            dedupe_mode: contents.dedupe_mode,
            working_set_blocks: blocks,
            shared: shared.then(|| (tindex, threads, (blocks / threads).max(1))),
            rng,
            unique: 0,
        }
    }

    /// The filler of fio's buffer_pattern: every write carries the pattern, repeated from its
    /// start, and nothing else (fio turns scrambling off with a pattern).
    pub fn with_pattern(mut self, pattern: &super::pattern::BufferPattern) -> Filler {
        pattern.fill(&mut self.base);
        self.stamp_bytes = 0;
        self
    }

    /// A read is about to land in `slot`'s buffer.
    #[inline]
    pub fn read_into(&mut self, slot: u32) {
        self.clean[slot as usize] = 0;
    }

    /// Fills the first `len` bytes of `slot`'s buffer `buf` for its next write.
    #[inline]
    pub fn fill(&mut self, slot: u32, len: u32, buf: &mut [u8]) {
        self.restore(slot, len, buf);
        if self.stamp_bytes == 0 {
            // All zeros (`--buffer-compress-percentage 100`): nothing to stamp, copies or not.
            return;
        }
        let w = self.next_stamp();
        stamp(&mut buf[..len as usize], w, self.stamp_bytes);
    }

    /// The next write's stamp: a new unique write's, or (deduplication) an earlier one's.
    #[inline]
    fn next_stamp(&mut self) -> u64 {
        if self.dedupe_threshold > 0 && self.unique > 0 && self.rng.next_u64() < self.dedupe_threshold {
            return match self.dedupe_mode {
                // fio regenerates the buffer from the seed its latest unique write started from.
                DedupeMode::Repeat => mix(self.key ^ (self.unique - 1)),
                // fio's working set holds the seeds of the job's first unique writes and a copy
                // draws one uniformly. Shared, block i is thread (own + i / per)'s (i % per)th
                // unique write, as fio's init_dedupe_working_set_seeds rotates over the jobs.
                DedupeMode::WorkingSet => {
                    let i = self.rng.next_u64() % self.working_set_blocks;
                    match self.shared {
                        None => mix(self.key ^ i),
                        Some((own, threads, per)) => mix(thread_key((own + i / per) % threads) ^ (i % per)),
                    }
                }
            };
        }
        self.unique += 1;
        mix(self.key ^ (self.unique - 1))
    }

    /// Prepares a spare buffer ahead for a write not yet drawn (of any size up to the largest):
    /// the pattern put back over the largest size where `dirty` (a read landed in it, or it never
    /// held the pattern), and the next write's stamp over all of it. A write of any size in it
    /// then carries exactly what `fill` would have written for it.
    pub fn prepare(&mut self, buf: &mut [u8], dirty: bool) {
        let n = self.base.len().min(buf.len());
        if dirty {
            buf[..n].copy_from_slice(&self.base[..n]);
        }
        if self.stamp_bytes == 0 {
            return;
        }
        let w = self.next_stamp();
        stamp(&mut buf[..n], w, self.stamp_bytes);
    }

    /// Puts the pattern back into the first `len` bytes of `slot`'s buffer where a read (or the
    /// engine's own initial fill) left something else.
    #[inline]
    fn restore(&mut self, slot: u32, len: u32, buf: &mut [u8]) {
        let clean = &mut self.clean[slot as usize];
        if *clean < len {
            buf[*clean as usize..len as usize].copy_from_slice(&self.base[*clean as usize..len as usize]);
            *clean = len;
        }
    }
}

/// Overwrites the first `n` bytes of each chunk of `buf` with `w`, `w + G`, `w + 2G`, ... (a Weyl
/// sequence: distinct within a write, and across writes as unlikely to meet as two random words).
#[inline]
fn stamp(buf: &mut [u8], mut w: u64, n: usize) {
    const G: u64 = 0x9e37_79b9_7f4a_7c15;
    for chunk in buf.chunks_mut(COMPRESS_CHUNK) {
        // The usual case is one 8-byte store; a variable-length copy would be a memcpy call.
        match chunk.first_chunk_mut::<8>() {
            Some(head) if n == 8 => *head = w.to_le_bytes(),
            _ => {
                let k = n.min(chunk.len());
                chunk[..k].copy_from_slice(&w.to_le_bytes()[..k]);
            }
        }
        w = w.wrapping_add(G);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::hash::{DefaultHasher, Hash, Hasher};
    use std::io::Write;

    /// Deflated size over raw size, each 4 KiB block compressed on its own (as a drive would).
    fn ratio(blocks: &[Vec<u8>]) -> f64 {
        let (mut raw, mut packed) = (0usize, 0usize);
        for b in blocks {
            let mut z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
            z.write_all(b).unwrap();
            packed += z.finish().unwrap().len().min(b.len());
            raw += b.len();
        }
        packed as f64 / raw as f64
    }

    /// A spare prepared ahead holds, in a write's first bytes, what `fill` gives that write, for
    /// any size up to the largest, dirty (the pattern put back) or clean (restamped in place),
    /// whatever the compression and deduplication.
    #[test]
    fn a_spare_prepared_ahead_holds_what_fill_would_write() {
        for (compress, dedupe) in [(0, 0), (50, 0), (0, 30), (60, 40), (100, 0)] {
            let contents = BufferContents { compress_percent: compress, dedupe_percent: dedupe, ..Default::default() };
            let max = 64 * 1024;
            let (mut filled, mut ahead) = (Filler::new(contents, 1, max, 9, 0), Filler::new(contents, 1, max, 9, 0));
            // A spare a little larger than the largest write, as the engine's buffers are rounded up.
            let mut spare = vec![0xa5u8; max + 4096];
            for (i, len) in [4096u32, 65536, 512, 12288, 65536, 4096, 8192].into_iter().enumerate() {
                let mut buf = vec![0x5au8; max];
                filled.read_into(0);
                filled.fill(0, len, &mut buf);
                // Dirty every other time (a read landed in it), else clean: it holds the pattern.
                ahead.prepare(&mut spare, i % 2 == 0);
                assert_eq!(buf[..len as usize], spare[..len as usize], "{compress}/{dedupe} write {i} of {len}");
            }
        }
    }

    /// `n` writes of `len` bytes through `slots` slots, as a worker makes them.
    fn writes(contents: BufferContents, n: usize, len: u32, slots: u32) -> Vec<Vec<u8>> {
        let mut f = Filler::new(contents, slots as usize, len as usize, 7, 0);
        let mut bufs = vec![vec![0xeeu8; len as usize]; slots as usize];
        (0..n)
            .map(|i| {
                let slot = i as u32 % slots;
                f.fill(slot, len, &mut bufs[slot as usize]);
                bufs[slot as usize].clone()
            })
            .collect()
    }

    #[test]
    fn buffers_compress_to_the_share_asked_for() {
        for pct in [0u32, 25, 50, 75, 90, 100] {
            let blocks = writes(
                BufferContents { compress_percent: pct, dedupe_percent: 0, ..Default::default() },
                256,
                4096,
                32,
            );
            let r = ratio(&blocks);
            let want = f64::from(100 - pct) / 100.0;
            assert!((r - want).abs() < 0.04, "compress {pct}%: deflate ratio {r:.3}, want about {want}");
        }
    }

    fn distinct(blocks: &[Vec<u8>]) -> usize {
        blocks
            .iter()
            .flat_map(|b| b.chunks(4096))
            .map(|c| {
                let mut h = DefaultHasher::new();
                c.hash(&mut h);
                h.finish()
            })
            .collect::<HashSet<_>>()
            .len()
    }

    #[test]
    fn writes_are_unique_unless_dedupe_asks_for_copies() {
        let n = 20_000;
        // Default: every 4 KiB block of every write differs, though 32 slots are reused.
        let blocks = writes(BufferContents::default(), 2000, 16384, 32);
        assert_eq!(distinct(&blocks), 2000 * 4);
        for pct in [10u32, 50, 90] {
            let blocks =
                writes(BufferContents { compress_percent: 0, dedupe_percent: pct, ..Default::default() }, n, 4096, 32);
            let dup_share = 1.0 - distinct(&blocks) as f64 / n as f64;
            let want = f64::from(pct) / 100.0;
            assert!((dup_share - want).abs() < 0.02, "dedupe {pct}%: {dup_share:.3} of blocks are copies");
        }
        // With compression too: the copies still copy, the chunks still compress.
        let blocks =
            writes(BufferContents { compress_percent: 50, dedupe_percent: 50, ..Default::default() }, n, 4096, 32);
        let dup_share = 1.0 - distinct(&blocks) as f64 / n as f64;
        assert!((dup_share - 0.5).abs() < 0.02, "{dup_share}");
        assert!((ratio(&blocks[..256]) - 0.5).abs() < 0.04);
    }

    /// fio's repeat mode: a copy is the latest unique write, so copies come in runs right after
    /// the write they repeat.
    #[test]
    fn a_repeat_copies_the_latest_unique_write() {
        let c = BufferContents { dedupe_percent: 50, ..Default::default() };
        let blocks = writes(c, 4000, 4096, 8);
        let mut latest_unique: Option<&Vec<u8>> = None;
        let mut seen = HashSet::new();
        let mut copies = 0;
        for b in &blocks {
            if seen.insert(b.clone()) {
                latest_unique = Some(b);
            } else {
                assert_eq!(Some(b), latest_unique, "a copy repeats the latest unique write, not an older one");
                copies += 1;
            }
        }
        assert!((copies as f64 / 4000.0 - 0.5).abs() < 0.03, "{copies} copies");
    }

    /// fio's working_set mode: copies are drawn from the worker's first `working_set_blocks`
    /// unique writes, every one of them in time.
    #[test]
    fn working_set_copies_come_from_the_first_unique_writes() {
        let c = BufferContents {
            dedupe_percent: 40,
            dedupe_mode: DedupeMode::WorkingSet,
            working_set_blocks: 50,
            ..Default::default()
        };
        let blocks = writes(c, 5000, 4096, 16);
        let mut order: Vec<&Vec<u8>> = Vec::new();
        for b in &blocks {
            if !order.contains(&b) {
                order.push(b);
            }
        }
        let first: HashSet<_> = order[..50].iter().collect();
        let copies: Vec<_> =
            blocks.iter().enumerate().filter(|(i, b)| blocks[..*i].contains(b)).map(|(_, b)| b).collect();
        assert!(copies.iter().all(|b| first.contains(b)), "every copy is one of the first 50 unique writes");
        let used: HashSet<_> = copies.iter().collect();
        assert_eq!(used.len(), 50, "the whole working set is drawn from");
        assert!((copies.len() as f64 / 5000.0 - 0.4).abs() < 0.03, "{} copies", copies.len());
    }

    /// dedupe_global, as fio's shared working set: with two threads and 20 blocks, each thread's
    /// copies are of its own first 10 unique writes and the other's first 10, so those 20 blocks,
    /// and no other, are in both threads' data.
    #[test]
    fn a_global_working_set_is_shared_by_workers() {
        let c = BufferContents {
            compress_percent: 50,
            dedupe_percent: 50,
            dedupe_mode: DedupeMode::WorkingSet,
            working_set_blocks: 20,
            dedupe_global: true,
            dedupe_thread_base: 0,
            dedupe_threads: 2,
        };
        let run = |thread: usize, c: BufferContents| {
            let mut f = Filler::new(c, 1, 4096, 77 + thread as u64, thread);
            let mut buf = vec![0u8; 4096];
            (0..2000)
                .map(|_| {
                    f.fill(0, 4096, &mut buf);
                    buf.clone()
                })
                .collect::<Vec<_>>()
        };
        let (a, b) = (run(0, c), run(1, c));
        let set_a: HashSet<_> = a.iter().collect();
        let set_b: HashSet<_> = b.iter().collect();
        let shared = set_a.intersection(&set_b).count();
        assert_eq!(shared, 20, "the 20 working-set blocks, and nothing else, are in both");
        // Without copies, a thread writes only its unique blocks, in order.
        let unique = BufferContents { dedupe_percent: 0, ..c };
        let firsts = |thread: usize| run(thread, unique).into_iter().take(10);
        let pool: HashSet<Vec<u8>> = firsts(0).chain(firsts(1)).collect();
        let common: HashSet<Vec<u8>> = set_a.intersection(&set_b).map(|b| (*b).clone()).collect();
        assert_eq!(common, pool, "each thread's first 10 unique writes");
        assert!((ratio(&a[..256]) - 0.5).abs() < 0.05);
    }

    #[test]
    fn a_read_into_a_slot_does_not_leak_into_the_next_write() {
        let c = BufferContents { compress_percent: 50, dedupe_percent: 0, ..Default::default() };
        let mut f = Filler::new(c, 1, 4096, 1, 0);
        let mut buf = vec![0u8; 4096];
        f.fill(0, 4096, &mut buf);
        buf.fill(0xff); // a read landed
        f.read_into(0);
        f.fill(0, 4096, &mut buf);
        assert!(buf[256..512].iter().all(|&b| b == 0), "the zero tail is back");
        assert!((ratio(&[buf]) - 0.5).abs() < 0.05);
    }
}

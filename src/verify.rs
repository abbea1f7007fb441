//! Data-integrity verification: what a written block holds, and what a read block is checked against.
//!
//! With `--verify`, every unit (one logical block) a write covers carries a 32-byte header — magic,
//! the unit's byte offset, its write generation, the run's seed, and a checksum of the payload — and a
//! payload derived from those fields. A read recomputes what the unit must hold from the generation
//! the writer last completed there, so no copy of the data is kept: a table of generations (4 bytes
//! per unit) is the whole state. A mismatch is classified as a misdirected write (the header names
//! another offset), a lost write or stale data (an older generation, or another run's seed), a torn
//! or corrupted unit (header fine, payload not), or foreign data (no header at all). This module is
//! pure computation; the worker decides when to call it.

use crate::io::{Direction, IoOp};
use crate::workload::contents::{BufferContents, COMPRESS_CHUNK, mix};
use serde::Serialize;

/// "NVMB": marks a unit written by nvmebench.
pub const MAGIC: u32 = 0x4e56_4d42;
/// Header bytes at the start of every unit.
pub const HEADER_BYTES: usize = 32;
/// First bytes of a `--verify-state` file of one target.
const STATE_MAGIC: &[u8; 8] = b"NVMBVST1";
/// First bytes of a `--verify-state` file of several targets, one section each.
const STATE_MAGIC_TARGETS: &[u8; 8] = b"NVMBVST2";
/// Generation value meaning "state unknown" (a write to the unit failed): never checked.
pub const GEN_UNKNOWN: u32 = u32::MAX;

/// How a unit failed its check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MismatchKind {
    /// No nvmebench header where one was written.
    Foreign,
    /// The header belongs to another offset: a write landed in the wrong place.
    Misdirected { found_offset: u64 },
    /// An older generation than the last completed write: the write was lost.
    LostWrite { found_generation: u32 },
    /// A newer generation than any completed write (a write reported failed that landed anyway).
    FutureGeneration { found_generation: u32 },
    /// Data of another run (different seed): stale.
    Stale { found_seed: u64 },
    /// Header right, payload wrong: torn or corrupted. `first`/`last` are byte offsets in the unit.
    Payload { first: u32, last: u32, bytes: u32 },
}

/// One failed check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Mismatch {
    /// In a run on several targets, which one (its position in the run's targets); set when the
    /// lanes' results are merged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<usize>,
    /// Byte offset of the unit on the target.
    pub offset: u64,
    pub expected_generation: u32,
    #[serde(flatten)]
    pub kind: MismatchKind,
}

/// Fills `unit` (one logical block at byte `offset`) for write generation `generation`; the payload
/// follows `contents` (zero tails per chunk, copies of a few shared payloads).
#[inline]
pub fn fill(unit: &mut [u8], offset: u64, generation: u32, seed: u64, contents: BufferContents) {
    let tag = unit_len_tag(unit.len());
    let (head, payload) = unit.split_at_mut(HEADER_BYTES);
    fill_payload(payload, &mut Payload::new(offset, generation, seed, contents));
    let sum = checksum(payload);
    head[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    head[4..8].copy_from_slice(&generation.to_le_bytes());
    head[8..16].copy_from_slice(&offset.to_le_bytes());
    head[16..24].copy_from_slice(&seed.to_le_bytes());
    head[24..28].copy_from_slice(&sum.to_le_bytes());
    head[28..32].copy_from_slice(&tag.to_le_bytes());
}

fn unit_len_tag(len: usize) -> u32 {
    len as u32 ^ 0x5a5a_5a5a
}

/// Checks `unit` read at byte `offset` against the last completed generation `expected`.
#[inline]
pub fn check(unit: &[u8], offset: u64, expected: u32, seed: u64, contents: BufferContents) -> Result<(), MismatchKind> {
    let head = &unit[..HEADER_BYTES];
    let word = |r: std::ops::Range<usize>| u32::from_le_bytes(head[r].try_into().expect("4-byte range"));
    let dword = |r: std::ops::Range<usize>| u64::from_le_bytes(head[r].try_into().expect("8-byte range"));
    if word(0..4) != MAGIC || word(28..32) != unit_len_tag(unit.len()) {
        return Err(MismatchKind::Foreign);
    }
    let (gen_found, off_found, seed_found, sum) = (word(4..8), dword(8..16), dword(16..24), word(24..28));
    if seed_found != seed {
        return Err(MismatchKind::Stale { found_seed: seed_found });
    }
    if off_found != offset {
        return Err(MismatchKind::Misdirected { found_offset: off_found });
    }
    if gen_found < expected {
        return Err(MismatchKind::LostWrite { found_generation: gen_found });
    }
    if gen_found > expected {
        return Err(MismatchKind::FutureGeneration { found_generation: gen_found });
    }
    let payload = &unit[HEADER_BYTES..];
    if checksum(payload) == sum {
        return Ok(());
    }
    // Find which bytes differ: regenerate what should be there.
    let mut want = [0u8; 8];
    let (mut first, mut last, mut bytes) = (u32::MAX, 0u32, 0u32);
    let mut words = Payload::new(offset, expected, seed, contents);
    for (i, chunk) in payload.chunks(8).enumerate() {
        want.copy_from_slice(&words.word(i * 8).to_le_bytes());
        for (j, (&a, &b)) in chunk.iter().zip(want.iter()).enumerate() {
            if a != b {
                let at = (HEADER_BYTES + i * 8 + j) as u32;
                first = first.min(at);
                last = at;
                bytes += 1;
            }
        }
    }
    Err(MismatchKind::Payload { first, last, bytes })
}

#[inline]
fn payload_seed(offset: u64, generation: u32, seed: u64) -> u64 {
    (offset.rotate_left(17) ^ u64::from(generation).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ seed) | 1
}

#[inline]
fn step(mut x: u64) -> u64 {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x
}

/// Payloads that copy each other (`--dedupe-percentage`) are drawn from this many.
const SHARED_PAYLOADS: u64 = 64;

/// The payload's words, in order: random, or zero where `contents` puts a chunk's zero tail.
struct Payload {
    x: u64,
    random: usize,
}

impl Payload {
    #[inline]
    fn new(offset: u64, generation: u32, seed: u64, contents: BufferContents) -> Payload {
        let own = payload_seed(offset, generation, seed);
        let threshold = contents.dedupe_threshold();
        // A copy: one of a few payloads every unit of the run may share (the header stays unique).
        let h = mix(own);
        let x = if threshold > 0 && h < threshold {
            payload_seed(mix(h) % SHARED_PAYLOADS, 0, seed ^ 0x6475_7065)
        } else {
            own
        };
        Payload { x, random: contents.random_per_chunk() }
    }

    /// The 8 bytes at payload byte `at` (a multiple of 8; calls in order).
    #[inline]
    fn word(&mut self, at: usize) -> u64 {
        self.x = step(self.x);
        let k = self.random.saturating_sub(at % COMPRESS_CHUNK);
        if k >= 8 { self.x } else { self.x & ((1u64 << (8 * k)) - 1) }
    }
}

#[inline]
fn fill_payload(payload: &mut [u8], words: &mut Payload) {
    for (i, chunk) in payload.chunks_mut(8).enumerate() {
        chunk.copy_from_slice(&words.word(i * 8).to_le_bytes()[..chunk.len()]);
    }
}

/// Fletcher-style 32-bit checksum over 8-byte words: fast, and any single changed byte changes it.
#[inline]
fn checksum(data: &[u8]) -> u32 {
    let (mut a, mut b) = (0u64, 0u64);
    for chunk in data.chunks(8) {
        let mut w = [0u8; 8];
        w[..chunk.len()].copy_from_slice(chunk);
        a = a.wrapping_add(u64::from_le_bytes(w));
        b = b.wrapping_add(a);
    }
    (a ^ (a >> 32) ^ b.rotate_left(16) ^ (b >> 32)) as u32
}

/// The last completed write generation of every unit in a range, plus generations in flight.
#[derive(Clone, Debug)]
pub struct GenTable {
    start: u64,
    unit: u64,
    gens: Vec<u32>,
}

impl GenTable {
    /// A table for `[start, start + bytes)` in units of `unit` bytes.
    pub fn new(start: u64, bytes: u64, unit: u64) -> GenTable {
        GenTable { start, unit, gens: vec![0; (bytes / unit) as usize] }
    }

    /// Bytes of memory a table for `bytes` in units of `unit` needs.
    pub fn memory_for(bytes: u64, unit: u64) -> u64 {
        bytes / unit * 4
    }

    pub fn unit_bytes(&self) -> u64 {
        self.unit
    }

    #[inline]
    fn index(&self, offset: u64) -> usize {
        ((offset - self.start) / self.unit) as usize
    }

    /// The generation last completed at `offset` (0: never written in this run).
    #[inline]
    pub fn get(&self, offset: u64) -> u32 {
        self.gens[self.index(offset)]
    }

    /// Records a completed write.
    #[inline]
    pub fn set(&mut self, offset: u64, generation: u32) {
        let i = self.index(offset);
        self.gens[i] = generation;
    }

    /// The generation the next write to `offset` carries.
    #[inline]
    pub fn next(&self, offset: u64) -> u32 {
        match self.get(offset) {
            GEN_UNKNOWN => 1,
            g => g.wrapping_add(1).max(1),
        }
    }

    /// `(offset, generation)` of every unit written in this run, for a verify pass.
    pub fn written(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.gens
            .iter()
            .enumerate()
            .filter(|(_, g)| **g != 0 && **g != GEN_UNKNOWN)
            .map(|(i, g)| (self.start + i as u64 * self.unit, *g))
    }

    /// One table over the span of `tables` (workers' slices), or `None` without any.
    pub fn merge<'a>(tables: impl Iterator<Item = &'a GenTable> + Clone) -> Option<GenTable> {
        let unit = tables.clone().next()?.unit;
        let start = tables.clone().map(|t| t.start).min()?;
        let end = tables.clone().map(|t| t.start + t.gens.len() as u64 * t.unit).max()?;
        let mut whole = GenTable::new(start, end - start, unit);
        for t in tables {
            whole.absorb(t);
        }
        Some(whole)
    }

    /// Appends the table as a state file holds it: start, unit, unit count, then the generations.
    fn encode(&self, out: &mut Vec<u8>) {
        for v in [self.start, self.unit, self.gens.len() as u64] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for g in &self.gens {
            out.extend_from_slice(&g.to_le_bytes());
        }
    }

    /// Writes the table to `path` with the run's seed, for a later `--verify-state` run on one
    /// target.
    pub fn save(&self, path: &std::path::Path, seed: u64) -> std::io::Result<()> {
        let mut out = Vec::with_capacity(40 + self.gens.len() * 4);
        out.extend_from_slice(STATE_MAGIC);
        out.extend_from_slice(&seed.to_le_bytes());
        self.encode(&mut out);
        std::fs::write(path, out)
    }

    /// Reads a table written by [`save`](Self::save): `(table, seed)`.
    pub fn load(path: &std::path::Path) -> Result<(GenTable, u64), String> {
        let state = VerifyState::load(path)?;
        match &state.sections[..] {
            [(None, t)] => Ok((t.clone(), state.seed)),
            _ => Err(format!(
                "--verify-state {} holds the generations of several targets; pass it to a run on those targets",
                path.display()
            )),
        }
    }

    /// `(start, bytes, unit)` the table covers.
    pub fn span(&self) -> (u64, u64, u64) {
        (self.start, self.gens.len() as u64 * self.unit, self.unit)
    }

    /// Merges another worker's table (disjoint slices: a unit is written by one worker only).
    pub fn absorb(&mut self, other: &GenTable) {
        for (off, g) in other.written() {
            if off >= self.start && off < self.start + self.gens.len() as u64 * self.unit {
                self.set(off, g);
            }
        }
    }
}

/// A `--verify-state` file: the run's seed and a generation table per target.
///
/// A run on one target writes one unnamed table (`NVMBVST1`: seed, start, unit, count, then the
/// generations, little-endian); a run on several writes one section per target, keyed by the
/// target as the run names it (its path, or for SPDK its transport ID and `ns:N`), so a later run
/// finds each target's table whatever order its targets come in (`NVMBVST2`: seed, section count,
/// then per section the key's length and bytes and the table as above).
#[derive(Clone, Debug)]
pub struct VerifyState {
    pub seed: u64,
    /// `None` keys the one table of a one-target file.
    pub sections: Vec<(Option<String>, GenTable)>,
}

impl VerifyState {
    /// Writes the state; one unnamed section is written as a one-target file.
    pub fn save(&self, path: &std::path::Path) -> std::io::Result<()> {
        if let [(None, t)] = &self.sections[..] {
            return t.save(path, self.seed);
        }
        let mut out = Vec::new();
        out.extend_from_slice(STATE_MAGIC_TARGETS);
        out.extend_from_slice(&self.seed.to_le_bytes());
        out.extend_from_slice(&(self.sections.len() as u64).to_le_bytes());
        for (key, t) in &self.sections {
            let key = key.as_deref().unwrap_or_default().as_bytes();
            out.extend_from_slice(&(key.len() as u64).to_le_bytes());
            out.extend_from_slice(key);
            t.encode(&mut out);
        }
        std::fs::write(path, out)
    }

    /// Reads a state file of either kind.
    pub fn load(path: &std::path::Path) -> Result<VerifyState, String> {
        let shown = path.display();
        let data = std::fs::read(path).map_err(|e| format!("cannot read --verify-state {shown}: {e}"))?;
        let bad = || {
            format!(
                "--verify-state {shown} is not an nvmebench verify state; pass a file an earlier --verify run wrote"
            )
        };
        let word = |at: &mut usize| -> Option<u64> {
            let w = u64::from_le_bytes(data.get(*at..*at + 8)?.try_into().expect("8 bytes"));
            *at += 8;
            Some(w)
        };
        let magic = data.get(..8).ok_or_else(bad)?;
        let mut at = 8;
        let seed = word(&mut at).ok_or_else(bad)?;
        let sections = if magic == STATE_MAGIC {
            1
        } else if magic == STATE_MAGIC_TARGETS {
            word(&mut at).ok_or_else(bad)?
        } else {
            return Err(bad());
        };
        let mut out = Vec::new();
        for _ in 0..sections {
            let key = if magic == STATE_MAGIC_TARGETS {
                let len = usize::try_from(word(&mut at).ok_or_else(bad)?).map_err(|_| bad())?;
                let bytes = data.get(at..at.checked_add(len).ok_or_else(bad)?).ok_or_else(bad)?;
                at += len;
                Some(String::from_utf8(bytes.to_vec()).map_err(|_| bad())?)
            } else {
                None
            };
            let (start, unit, n) = (word(&mut at), word(&mut at), word(&mut at));
            let (Some(start), Some(unit), Some(n)) = (start, unit, n) else { return Err(bad()) };
            let end = usize::try_from(n).ok().and_then(|n| n.checked_mul(4)).and_then(|b| b.checked_add(at));
            // A table's span must be a range of bytes (start + n * unit within u64): it is
            // compared with the run's working set, and offsets inside it are computed from it.
            let spans = n.checked_mul(unit).and_then(|b| b.checked_add(start)).is_some();
            let gens = end.and_then(|end| data.get(at..end)).filter(|_| unit > 0 && spans).ok_or_else(bad)?;
            at += gens.len();
            let gens = gens.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes"))).collect();
            out.push((key, GenTable { start, unit, gens }));
        }
        if at != data.len() {
            return Err(bad());
        }
        Ok(VerifyState { seed, sections: out })
    }

    /// The table kept for `key` (a one-target file's table answers to any key).
    pub fn section(&self, key: &str) -> Option<&GenTable> {
        self.sections.iter().find(|(k, _)| k.as_deref().is_none_or(|k| k == key)).map(|(_, t)| t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEED: u64 = 0xfeed;
    const PLAIN: BufferContents = BufferContents {
        compress_percent: 0,
        dedupe_percent: 0,
        dedupe_mode: crate::workload::contents::DedupeMode::Repeat,
        working_set_blocks: 0,
        dedupe_global: false,
        dedupe_thread_base: 0,
        dedupe_threads: 0,
    };

    fn unit(offset: u64, generation: u32) -> Vec<u8> {
        let mut u = vec![0u8; 4096];
        fill(&mut u, offset, generation, SEED, PLAIN);
        u
    }

    #[test]
    fn a_written_unit_checks_out() {
        assert_eq!(check(&unit(8192, 3), 8192, 3, SEED, PLAIN), Ok(()));
        let mut small = vec![0u8; 512];
        fill(&mut small, 512, 1, SEED, PLAIN);
        assert_eq!(check(&small, 512, 1, SEED, PLAIN), Ok(()));
    }

    #[test]
    fn each_fault_is_classified() {
        assert_eq!(check(&vec![0u8; 4096], 0, 1, SEED, PLAIN), Err(MismatchKind::Foreign));
        assert_eq!(check(&unit(4096, 1), 8192, 1, SEED, PLAIN), Err(MismatchKind::Misdirected { found_offset: 4096 }));
        assert_eq!(check(&unit(8192, 1), 8192, 2, SEED, PLAIN), Err(MismatchKind::LostWrite { found_generation: 1 }));
        assert_eq!(
            check(&unit(8192, 5), 8192, 2, SEED, PLAIN),
            Err(MismatchKind::FutureGeneration { found_generation: 5 })
        );
        let mut other = vec![0u8; 4096];
        fill(&mut other, 8192, 1, SEED + 1, PLAIN);
        assert_eq!(check(&other, 8192, 1, SEED, PLAIN), Err(MismatchKind::Stale { found_seed: SEED + 1 }));
    }

    #[test]
    fn compressible_and_shared_payloads_check_out_and_corruption_is_caught() {
        use std::io::Write;
        let c = BufferContents {
            compress_percent: 60,
            dedupe_percent: 50,
            dedupe_mode: crate::workload::contents::DedupeMode::Repeat,
            working_set_blocks: 0,
            dedupe_global: false,
            dedupe_thread_base: 0,
            dedupe_threads: 0,
        };
        let (mut packed, mut payloads) = (0usize, std::collections::HashSet::new());
        let n = 2000u64;
        for i in 0..n {
            let mut u = vec![0u8; 4096];
            fill(&mut u, i * 4096, 1, SEED, c);
            assert_eq!(check(&u, i * 4096, 1, SEED, c), Ok(()));
            let mut z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
            z.write_all(&u).unwrap();
            packed += z.finish().unwrap().len();
            payloads.insert(u[HEADER_BYTES..].to_vec());
            // One flipped byte, in a random start or in a zero tail, is caught and located.
            for at in [HEADER_BYTES + 3, 500, 4000] {
                let mut bad = u.clone();
                bad[at] ^= 0x01;
                let at = at as u32;
                assert_eq!(
                    check(&bad, i * 4096, 1, SEED, c),
                    Err(MismatchKind::Payload { first: at, last: at, bytes: 1 })
                );
            }
        }
        let ratio = packed as f64 / (n * 4096) as f64;
        assert!((ratio - 0.4).abs() < 0.05, "deflate ratio {ratio}");
        // Half the payloads are copies of a few shared ones.
        let unique = payloads.len() as f64 / n as f64;
        assert!((unique - 0.5).abs() < 0.05, "{unique}");
    }

    #[test]
    fn torn_units_say_which_bytes_differ() {
        // The second half of the unit still holds generation 1's payload: a torn write of generation 2.
        let mut u = unit(0, 2);
        let old = unit(0, 1);
        u[2048..].copy_from_slice(&old[2048..]);
        match check(&u, 0, 2, SEED, PLAIN) {
            Err(MismatchKind::Payload { first, last, bytes }) => {
                assert!((2048..2056).contains(&first), "{first}");
                assert_eq!(last, 4095);
                assert!(bytes > 1900 && bytes <= 2048, "{bytes}");
            }
            other => panic!("{other:?}"),
        }
        let mut one = unit(0, 2);
        one[1000] ^= 0x10;
        assert_eq!(check(&one, 0, 2, SEED, PLAIN), Err(MismatchKind::Payload { first: 1000, last: 1000, bytes: 1 }));
    }

    #[test]
    fn generations_advance_and_merge() {
        let mut t = GenTable::new(4096, 16 * 4096, 4096);
        assert_eq!(t.next(8192), 1);
        t.set(8192, 1);
        assert_eq!((t.get(8192), t.next(8192)), (1, 2));
        t.set(12288, GEN_UNKNOWN);
        assert_eq!(t.next(12288), 1);
        assert_eq!(t.written().collect::<Vec<_>>(), vec![(8192, 1)]);
        let mut whole = GenTable::new(4096, 16 * 4096, 4096);
        whole.absorb(&t);
        assert_eq!(whole.get(8192), 1);
        assert_eq!(GenTable::memory_for(1 << 40, 4096), 1 << 30);
    }

    #[test]
    fn state_files_round_trip() {
        let dir = tempfile::tempdir_in(".").unwrap();
        let p = dir.path().join("state");
        let mut t = GenTable::new(0, 8 * 512, 512);
        t.set(1024, 7);
        t.save(&p, 42).unwrap();
        let (back, seed) = GenTable::load(&p).unwrap();
        assert_eq!((seed, back.get(1024), back.span()), (42, 7, (0, 4096, 512)));
        std::fs::write(&p, b"garbage").unwrap();
        assert!(GenTable::load(&p).unwrap_err().contains("is not an nvmebench verify state"));
        let merged = GenTable::merge([&t, &GenTable::new(4096, 4096, 512)].into_iter()).unwrap();
        assert_eq!((merged.span(), merged.get(1024)), ((0, 8192, 512), 7));
    }

    #[test]
    fn state_files_of_several_targets_round_trip_by_name() {
        let dir = tempfile::tempdir_in(".").unwrap();
        let p = dir.path().join("state");
        let (mut a, mut b) = (GenTable::new(0, 8 * 512, 512), GenTable::new(4096, 4 * 4096, 4096));
        a.set(1024, 7);
        b.set(8192, 3);
        let state = VerifyState { seed: 9, sections: vec![(Some("/dev/a".into()), a), (Some("/dev/b".into()), b)] };
        state.save(&p).unwrap();
        let back = VerifyState::load(&p).unwrap();
        assert_eq!(back.seed, 9);
        assert_eq!(back.section("/dev/b").map(|t| (t.get(8192), t.span())), Some((3, (4096, 16384, 4096))));
        assert_eq!(back.section("/dev/a").map(|t| t.get(1024)), Some(7));
        assert!(back.section("/dev/c").is_none());
        assert!(GenTable::load(&p).unwrap_err().contains("holds the generations of several targets"));
        // Cut anywhere, the file is refused rather than misread.
        let whole = std::fs::read(&p).unwrap();
        for cut in [4, 12, 20, 30, whole.len() - 1] {
            std::fs::write(&p, &whole[..cut]).unwrap();
            assert!(VerifyState::load(&p).unwrap_err().contains("is not an nvmebench verify state"), "cut at {cut}");
        }
        // A one-target file answers for whichever target the run names.
        let one = GenTable::new(0, 4096, 512);
        one.save(&p, 1).unwrap();
        assert!(VerifyState::load(&p).unwrap().section("anything").is_some());
    }
}

/// At most this many mismatches are kept in detail per worker; the rest are counted.
pub const MISMATCHES_KEPT: usize = 64;

/// One worker's verification state: its slice's generation table, what is in flight, what failed.
///
/// Workers own disjoint slices in verify mode, and a worker never has two overlapping I/Os in
/// flight, so every unit's expected content is known exactly when it is read.
#[derive(Debug)]
pub struct Verifier {
    pub table: GenTable,
    seed: u64,
    contents: BufferContents,
    /// Generation each slot's write carries; reads use `u32::MAX`.
    slot_gen: Vec<u32>,
    /// In-flight `(offset, len)` per slot (`len` 0: free).
    in_flight: Vec<(u64, u32)>,
    /// Slots whose reads completed and wait to be checked.
    pending: Vec<u32>,
    pub mismatches: Vec<Mismatch>,
    pub mismatch_count: u64,
    pub units_checked: u64,
    /// Reads of the verify pass that failed outright (counted, not checked).
    pub read_errors: u64,
    /// Time spent filling and checking, so benchmark figures can be read without it.
    pub cost_ns: u64,
}

impl Verifier {
    pub fn new(table: GenTable, seed: u64, contents: BufferContents, queue_depth: usize) -> Verifier {
        Verifier {
            table,
            seed,
            contents,
            slot_gen: vec![0; queue_depth],
            in_flight: vec![(0, 0); queue_depth],
            pending: Vec::with_capacity(queue_depth),
            mismatches: Vec::with_capacity(MISMATCHES_KEPT),
            mismatch_count: 0,
            units_checked: 0,
            read_errors: 0,
            cost_ns: 0,
        }
    }

    /// Whether `op` overlaps an I/O in flight (then it must wait).
    #[inline]
    pub fn overlaps(&self, op: &IoOp) -> bool {
        let end = op.offset + u64::from(op.len);
        self.in_flight.iter().any(|&(o, l)| l > 0 && o < end && op.offset < o + u64::from(l))
    }

    /// Stamps a write's buffer and remembers what it will leave on the device.
    #[inline]
    pub fn prepare(&mut self, slot: u32, op: &IoOp, buf: &mut [u8]) {
        self.in_flight[slot as usize] = (op.offset, op.len);
        if op.dir == Direction::Write {
            let unit = self.table.unit_bytes();
            let g = (0..u64::from(op.len) / unit).map(|k| self.table.next(op.offset + k * unit)).max().unwrap_or(1);
            for (k, chunk) in buf[..op.len as usize].chunks_exact_mut(unit as usize).enumerate() {
                fill(chunk, op.offset + k as u64 * unit, g, self.seed, self.contents);
            }
            self.slot_gen[slot as usize] = g;
        }
    }

    /// Forgets a prepared I/O the engine did not take.
    #[inline]
    pub fn cancel(&mut self, slot: u32) {
        self.in_flight[slot as usize] = (0, 0);
    }

    /// Records a completion: a write's generation becomes what its units must hold; a read waits for
    /// [`check_pending`](Self::check_pending).
    #[inline]
    pub fn complete(&mut self, slot: u32, op: &IoOp, ok: bool) {
        self.in_flight[slot as usize] = (0, 0);
        let unit = self.table.unit_bytes();
        match (op.dir, ok) {
            (Direction::Write, _) => {
                // A failed write may have landed in part: its units are no longer known.
                let g = if ok { self.slot_gen[slot as usize] } else { GEN_UNKNOWN };
                for k in 0..u64::from(op.len) / unit {
                    self.table.set(op.offset + k * unit, g);
                }
            }
            (Direction::Read, true) => self.pending.push(slot),
            (Direction::Read, false) => {}
            // Refused with --verify in config: a trimmed or zeroed unit has no header to check.
            (Direction::Trim | Direction::WriteZeroes | Direction::Flush, _) => {}
        }
    }

    /// Slots whose reads completed and wait for [`check`](Self::check_read).
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    pub fn pending_slot(&self, i: usize) -> u32 {
        self.pending[i]
    }

    pub fn clear_pending(&mut self) {
        self.pending.clear();
    }

    /// Checks the data `op` read against what the last completed writes left there.
    pub fn check_read(&mut self, op: &IoOp, data: &[u8]) {
        let unit = self.table.unit_bytes();
        for (k, chunk) in data[..op.len as usize].chunks_exact(unit as usize).enumerate() {
            let offset = op.offset + k as u64 * unit;
            let expected = self.table.get(offset);
            if expected == 0 || expected == GEN_UNKNOWN {
                continue;
            }
            self.units_checked += 1;
            if let Err(kind) = check(chunk, offset, expected, self.seed, self.contents) {
                self.record(Mismatch { target: None, offset, expected_generation: expected, kind });
            }
        }
    }

    #[cold]
    fn record(&mut self, m: Mismatch) {
        self.mismatch_count += 1;
        if self.mismatches.len() < MISMATCHES_KEPT {
            self.mismatches.push(m);
        }
    }
}

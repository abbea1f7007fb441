//! Where random I/Os land: uniform, zipf, pareto, normal and zoned distributions over block
//! indexes, computed as fio computes them (its lib/zipf.c, lib/gauss.c and io_u.c's zoned
//! offsets), and fio's random map.
//!
//! The sampler returns an index in `0..n`; the generator turns it into a byte offset. fio draws a
//! zipf or pareto popularity rank, or a normal value around the middle of the range, then
//! multiplies it by the 64-bit golden ratio (its `__hash_u64`) and adds an offset (random, or
//! `n * center` when the distribution is given a centre), modulo `n`: the hot set is scattered
//! over the range, normal's too, and two ranks may share a block. This does exactly that, on
//! 32-bit uniform draws as fio's `__rand` gives them; only the random generator itself differs
//! (fio's tausworthe, nvmebench's xoshiro), so the sequence differs and its law does not.

use rand_core::RngCore;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;
use std::fmt;

/// fio's `GOLDEN_RATIO_64` (hash.h), by which it scatters ranks over the range.
const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;

/// fio's `FIO_DEF_ZIPF` and `FIO_DEF_PARETO`: the values of a bare `zipf` or `pareto`.
const FIO_DEF_ZIPF: f64 = 1.1;
const FIO_DEF_PARETO: f64 = 0.2;

/// fio sums the zipf normaliser over at most this many ranks (`ZIPF_MAX_GEN`).
const ZIPF_MAX_GEN: u64 = 10_000_000;

/// The Irwin-Hall terms of fio's normal distribution (`GAUSS_ITERS`).
const GAUSS_ITERS: u64 = 12;

/// The distribution of random offsets, in fio's `random_distribution` words.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum RandomDist {
    Uniform,
    /// fio's zipf with exponent `theta` (> 0, not 1).
    Zipf {
        theta: f64,
        /// Where rank 0 lands, as a share of the range (fio's second value); random without.
        #[serde(skip_serializing_if = "Option::is_none")]
        center: Option<f64>,
    },
    /// fio's pareto with power `h` (0 < h < 1): `n * U^(ln h / ln(1 - h))`.
    Pareto {
        h: f64,
        #[serde(skip_serializing_if = "Option::is_none")]
        center: Option<f64>,
    },
    /// fio's normal: the mean of 12 uniform draws over the range, jittered by up to half of
    /// `dev_percent` percent of it either way (fio's deviation, 0 to under 100).
    Normal {
        dev_percent: f64,
        /// Where the middle lands, as a share of the range (fio's default 0.5).
        #[serde(skip_serializing_if = "Option::is_none")]
        center: Option<f64>,
    },
    /// fio's zoned: each zone takes a share of the I/Os, uniformly over its share of the range,
    /// the zones laid end to end from the start of the range.
    Zoned {
        zones: Zones,
    },
    /// fio's zoned_abs: as zoned, each zone's part of the range in bytes.
    #[serde(rename = "zoned_abs")]
    ZonedAbs {
        zones: AbsZones,
    },
}

/// fio's `zoned_abs:ACCESS/SIZE:...` zones: each zone's share of the I/Os in whole percent, and its
/// size in bytes, laid end to end from the start of the range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AbsZones {
    count: u8,
    /// Apart rather than in pairs, which padding would make twice the size.
    access: [u8; MAX_ZONES],
    bytes: [u64; MAX_ZONES],
}

impl AbsZones {
    /// Each zone's share of the I/Os (percent) and its size (bytes).
    pub fn iter(&self) -> impl Iterator<Item = (u8, u64)> + '_ {
        let n = usize::from(self.count);
        self.access[..n].iter().copied().zip(self.bytes[..n].iter().copied())
    }

    /// The bytes the zones cover together.
    pub fn total_bytes(&self) -> u64 {
        self.iter().map(|(_, b)| b).fold(0, u64::saturating_add)
    }

    /// fio's zones in bytes (options.c's `zone_split_ddir` with `absolute`): `ACCESS/SIZE` pairs
    /// separated by `:`; the shares of the I/Os add up to 100.
    fn parse(text: &str, zones: &str) -> Result<AbsZones, String> {
        let bad = |why: String| format!("random distribution '{text}': {why}");
        let pairs: Vec<&str> = zones.split(':').filter(|p| !p.is_empty()).collect();
        if pairs.is_empty() {
            return Err(bad("no zones; write them like zoned_abs:60/20g:30/100g:10/500g".into()));
        }
        if pairs.len() > MAX_ZONES {
            return Err(bad(format!("{} zones; nvmebench takes at most {MAX_ZONES}", pairs.len())));
        }
        let mut z = AbsZones { count: pairs.len() as u8, access: [0; MAX_ZONES], bytes: [0; MAX_ZONES] };
        let mut total = 0u32;
        for (i, p) in pairs.iter().enumerate() {
            let (a, size) = p.split_once('/').ok_or_else(|| bad(format!("'{p}' is not ACCESS/SIZE, like 60/20g")))?;
            let a = a
                .trim()
                .parse::<u8>()
                .ok()
                .filter(|a| *a <= 100)
                .ok_or_else(|| bad(format!("'{a}' in '{p}' is not a whole percentage from 0 to 100")))?;
            let bytes = crate::units::parse_size(size.trim())
                .map_err(|_| bad(format!("'{size}' in '{p}' is not a size; write each zone's size, like 60/20g")))?;
            total += u32::from(a);
            (z.access[i], z.bytes[i]) = (a, bytes);
        }
        if total != 100 {
            return Err(bad(format!("the I/O shares add up to {total}, and fio needs 100")));
        }
        Ok(z)
    }
}

/// One zone_abs zone as the result document writes it.
#[derive(Serialize)]
struct AbsZoneShare {
    access_percent: u8,
    bytes: u64,
}

impl Serialize for AbsZones {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter().map(|(access_percent, bytes)| AbsZoneShare { access_percent, bytes }))
    }
}

/// The most zones a zoned distribution takes here (fio takes 256).
pub const MAX_ZONES: usize = 16;

/// fio's `zoned:ACCESS/RANGE:...` zones, in whole percent as fio keeps them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Zones {
    count: u8,
    /// Each zone's share of the I/Os and of the range, in percent.
    zones: [(u8, u8); MAX_ZONES],
}

impl Zones {
    /// Each zone's share of the I/Os and of the range, in percent.
    pub fn iter(&self) -> impl Iterator<Item = (u8, u8)> + '_ {
        self.zones[..usize::from(self.count)].iter().copied()
    }

    /// fio's zones (options.c's `zone_split_ddir`): `ACCESS/RANGE` pairs separated by `:`, in
    /// whole percent; a missing RANGE is an equal part of what the others leave.
    fn parse(text: &str, zones: &str) -> Result<Zones, String> {
        let bad = |why: String| format!("random distribution '{text}': {why}");
        let pairs: Vec<&str> = zones.split(':').filter(|p| !p.is_empty()).collect();
        if pairs.is_empty() {
            return Err(bad("no zones; write them like zoned:60/10:30/20:10/70".into()));
        }
        if pairs.len() > MAX_ZONES {
            return Err(bad(format!("{} zones; nvmebench takes at most {MAX_ZONES}", pairs.len())));
        }
        let percent = |v: &str| -> Result<Option<u8>, String> {
            match v.trim() {
                "" => Ok(None),
                t => t
                    .parse::<u8>()
                    .ok()
                    .filter(|p| *p <= 100)
                    .map(Some)
                    .ok_or_else(|| bad(format!("'{t}' is not a whole percentage from 0 to 100"))),
            }
        };
        let (mut access, mut range): (Vec<Option<u8>>, Vec<Option<u8>>) = (Vec::new(), Vec::new());
        for p in &pairs {
            let (a, r) = p.split_once('/').ok_or_else(|| bad(format!("'{p}' is not ACCESS/RANGE, like 60/10")))?;
            // fio refuses a zone without its share of the I/Os ("split conversion failed").
            let a = percent(a)?
                .ok_or_else(|| bad(format!("'{p}' gives no share of the I/Os; write ACCESS/RANGE, like 60/10")))?;
            access.push(Some(a));
            range.push(percent(r)?);
        }
        let fill = |shares: Vec<Option<u8>>| -> Result<Vec<u8>, String> {
            let given: u32 = shares.iter().flatten().map(|&p| u32::from(p)).sum();
            let missing = shares.iter().filter(|p| p.is_none()).count() as u32;
            if given > 100 {
                return Err(bad("the percentages add up to more than 100, which fio refuses".into()));
            }
            let each = (100 - given).checked_div(missing).unwrap_or(0) as u8;
            Ok(shares.into_iter().map(|p| p.unwrap_or(each)).collect())
        };
        let access = fill(access)?;
        let range = fill(range)?;
        let total: u32 = access.iter().map(|&a| u32::from(a)).sum();
        if total != 100 {
            return Err(bad(format!("the I/O shares add up to {total}, and fio needs 100")));
        }
        let mut z = Zones { count: access.len() as u8, zones: [(0, 0); MAX_ZONES] };
        for (slot, pair) in z.zones.iter_mut().zip(access.into_iter().zip(range)) {
            *slot = pair;
        }
        Ok(z)
    }
}

/// One zone as the result document writes it.
#[derive(Serialize)]
struct ZoneShare {
    access_percent: u8,
    range_percent: u8,
}

impl Serialize for Zones {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter().map(|(access_percent, range_percent)| ZoneShare { access_percent, range_percent }))
    }
}

impl RandomDist {
    /// Parses fio's words: `uniform` (or `random`), `zipf[:THETA[:CENTER]]`,
    /// `pareto[:H[:CENTER]]`, `normal[:DEV[:CENTER]]`, with fio's defaults (zipf 1.1, pareto 0.2,
    /// normal 0) and ranges.
    pub fn parse(text: &str) -> Result<RandomDist, String> {
        let (name, arg) = match text.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (text, None),
        };
        if text.contains(',') {
            return Err(format!(
                "random distribution '{text}' gives one per direction, which is not taken; give one for all, like zipf:1.2"
            ));
        }
        match (name, arg) {
            ("zoned", Some(zones)) => return Ok(RandomDist::Zoned { zones: Zones::parse(text, zones)? }),
            ("zoned_abs", Some(zones)) => {
                return Ok(RandomDist::ZonedAbs { zones: AbsZones::parse(text, zones)? });
            }
            _ => {}
        }
        let (value, center) = match arg.map(|a| a.split_once(':').map_or((a, None), |(v, c)| (v, Some(c)))) {
            None => (None, None),
            Some((v, c)) => {
                let num = |t: &str| t.trim().parse::<f64>().ok().filter(|x| x.is_finite());
                let v = num(v).ok_or_else(|| format!("random distribution '{text}': '{v}' is not a number"))?;
                let c = match c {
                    None => None,
                    Some(c) => Some(num(c).filter(|c| (0.0..=1.0).contains(c)).ok_or_else(|| {
                        format!(
                            "random distribution '{text}': the centre '{c}' is not a share of the range from 0 to 1"
                        )
                    })?),
                };
                (Some(v), c)
            }
        };
        match name {
            "uniform" | "random" if arg.is_none() => Ok(RandomDist::Uniform),
            "zipf" => match value.unwrap_or(FIO_DEF_ZIPF) {
                1.0 => Err(format!("random distribution '{text}': zipf's theta must differ from 1, as fio requires")),
                t if t > 0.0 => Ok(RandomDist::Zipf { theta: t, center }),
                _ => Err(format!("random distribution '{text}' needs a theta above 0, as in zipf:1.2")),
            },
            "pareto" => match value.unwrap_or(FIO_DEF_PARETO) {
                h if h > 0.0 && h < 1.0 => Ok(RandomDist::Pareto { h, center }),
                _ => Err(format!("random distribution '{text}' needs an h between 0 and 1, as in pareto:0.2")),
            },
            "normal" => match value.unwrap_or(0.0) {
                d if (0.0..100.0).contains(&d) => Ok(RandomDist::Normal { dev_percent: d, center }),
                _ => Err(format!(
                    "random distribution '{text}' needs a deviation from 0 to under 100 (percent of the range), as in normal:10"
                )),
            },
            _ => Err(format!(
                "'{text}' is not a random distribution; use uniform, zipf:THETA, pareto:H, normal:DEV (each with an optional :CENTER), zoned:ACCESS/RANGE:... or zoned_abs:ACCESS/SIZE:..."
            )),
        }
    }
}

impl fmt::Display for RandomDist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (name, value, center) = match *self {
            RandomDist::Uniform => return f.write_str("uniform"),
            RandomDist::Zoned { zones } => {
                let z: Vec<String> = zones.iter().map(|(a, r)| format!("{a}/{r}")).collect();
                return write!(f, "zoned:{}", z.join(":"));
            }
            RandomDist::ZonedAbs { zones } => {
                let z: Vec<String> =
                    zones.iter().map(|(a, b)| format!("{a}/{}", crate::units::format_size(b))).collect();
                return write!(f, "zoned_abs:{}", z.join(":"));
            }
            RandomDist::Zipf { theta, center } => ("zipf", theta, center),
            RandomDist::Pareto { h, center } => ("pareto", h, center),
            RandomDist::Normal { dev_percent, center } => ("normal", dev_percent, center),
        };
        write!(f, "{name}:{value}")?;
        match center {
            Some(c) => write!(f, ":{c}"),
            None => Ok(()),
        }
    }
}

/// Draws block indexes in `0..n` from a [`RandomDist`].
#[derive(Clone, Debug)]
pub enum IndexSampler {
    Uniform {
        n: u64,
    },
    Zipf {
        n: u64,
        theta: f64,
        zetan: f64,
        alpha: f64,
        eta: f64,
        rand_off: u64,
    },
    Pareto {
        n: u64,
        pow: f64,
        rand_off: u64,
    },
    Normal {
        n: u64,
        stddev: u32,
        rand_off: u32,
    },
    /// For each draw `v` of 1..=100, the first block and the block count of its zone.
    Zoned {
        table: Box<[(u64, u64); 100]>,
    },
}

impl IndexSampler {
    /// A sampler over `n` (>= 1) blocks; `seed` draws the random offset of zipf and pareto
    /// without a centre (fio's first draw of the distribution's own generator).
    pub fn new(dist: RandomDist, n: u64, seed: u64) -> IndexSampler {
        IndexSampler::with_block(dist, n, 1, seed)
    }

    /// As [`new`](Self::new), with blocks of `block_bytes`, which zoned_abs's sizes are counted in.
    pub fn with_block(dist: RandomDist, n: u64, block_bytes: u64, seed: u64) -> IndexSampler {
        let n = n.max(1);
        // fio: `__rand(&zs->rand)`, a 32-bit draw, or `nranges * center`.
        let rand_off = |center: Option<f64>| match center {
            Some(c) => (n as f64 * c) as u64,
            None => u64::from(first_draw(seed)),
        };
        match dist {
            RandomDist::Uniform => IndexSampler::Uniform { n },
            RandomDist::Zoned { zones } => {
                // fio's zone_state_index (init.c) and __get_next_rand_offset_zoned (io_u.c): the
                // zone of draw v starts at its predecessors' range share of the blocks and spans its
                // own share of them, each rounded down as fio rounds it.
                let mut table = Box::new([(0u64, 1u64); 100]);
                let (mut v, mut range_before) = (0usize, 0u64);
                for (access, range) in zones.iter() {
                    let start = (range_before * n / 100).min(n - 1);
                    let len = (n * u64::from(range) / 100).max(1);
                    for slot in table.iter_mut().skip(v).take(usize::from(access)) {
                        *slot = (start, len);
                    }
                    v += usize::from(access);
                    range_before += u64::from(range);
                }
                IndexSampler::Zoned { table }
            }
            RandomDist::ZonedAbs { zones } => {
                // fio's zone_state_index (zone-dist.c) and __get_next_rand_offset_zoned_abs: draw v's
                // zone spans the blocks from the bytes before it to the end of its own, each rounded
                // down to a block; a zone of no whole block takes its first block, as fio's does.
                let block = block_bytes.max(1);
                let mut table = Box::new([(0u64, 1u64); 100]);
                let (mut v, mut bytes_before) = (0usize, 0u64);
                for (access, bytes) in zones.iter() {
                    let start = (bytes_before / block).min(n - 1);
                    let end = bytes_before.saturating_add(bytes) / block;
                    for slot in table.iter_mut().skip(v).take(usize::from(access)) {
                        *slot = (start, end.saturating_sub(start).max(1));
                    }
                    v += usize::from(access);
                    bytes_before = bytes_before.saturating_add(bytes);
                }
                IndexSampler::Zoned { table }
            }
            RandomDist::Zipf { theta, center } => {
                let zetan: f64 = (0..n.min(ZIPF_MAX_GEN)).map(|i| (1.0 / (i + 1) as f64).powf(theta)).sum();
                let zeta2 = 1.0 + 0.5f64.powf(theta);
                let alpha = 1.0 / (1.0 - theta);
                let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
                IndexSampler::Zipf { n, theta, zetan, alpha, eta, rand_off: rand_off(center) }
            }
            RandomDist::Pareto { h, center } => {
                IndexSampler::Pareto { n, pow: h.ln() / (1.0 - h).ln(), rand_off: rand_off(center) }
            }
            RandomDist::Normal { dev_percent, center } => {
                let stddev = if dev_percent == 0.0 {
                    0
                } else {
                    ((n as f64 * dev_percent / 100.0).ceil() as u64).min(n / 2).min(u64::from(u32::MAX)) as u32
                };
                // fio keeps `nranges * (center - 0.5)` in an unsigned int: below the middle it
                // wraps, as the C conversion does on x86-64.
                let rand_off = center.map_or(0, |c| (n as f64 * (c - 0.5)) as i64 as u32);
                IndexSampler::Normal { n, stddev, rand_off }
            }
        }
    }

    /// The block count of a uniform sampler (whose draw is `bounded(rng.next_u64(), n)`).
    pub fn uniform_blocks(&self) -> Option<u64> {
        match *self {
            IndexSampler::Uniform { n } => Some(n),
            _ => None,
        }
    }

    /// The next block index in `0..n`.
    #[inline]
    pub fn sample(&self, rng: &mut Xoshiro256PlusPlus) -> u64 {
        match *self {
            IndexSampler::Uniform { n } => bounded(rng.next_u64(), n),
            IndexSampler::Zipf { n, theta, zetan, alpha, eta, rand_off } => {
                let rand_uni = f64::from(rand32(rng)) / f64::from(u32::MAX);
                let rand_z = rand_uni * zetan;
                let val = if rand_z < 1.0 {
                    1
                } else if rand_z < 1.0 + 0.5f64.powf(theta) {
                    2
                } else {
                    1 + (n as f64 * (eta * rand_uni - eta + 1.0).powf(alpha)) as u64
                };
                fio_hash(val - 1).wrapping_add(rand_off) % n
            }
            IndexSampler::Pareto { n, pow, rand_off } => {
                let rand = f64::from(rand32(rng)) / f64::from(u32::MAX);
                let rank = ((n - 1) as f64 * rand.powf(pow)) as u64;
                fio_hash(rank).wrapping_add(rand_off) % n
            }
            IndexSampler::Normal { n, stddev, rand_off } => {
                let mut sum: u64 = (0..GAUSS_ITERS).map(|_| u64::from(rand32(rng)) % (n + 1)).sum();
                sum = sum.div_ceil(GAUSS_ITERS);
                if stddev > 0 {
                    let vr = (f64::from(stddev) * (f64::from(rand32(rng)) / (f64::from(u32::MAX) + 1.0))) as i64;
                    let mut dev = vr - i64::from(stddev / 2);
                    // fio adds the int to its unsigned sum: a step below 0 wraps past the end too.
                    while sum.wrapping_add(dev as u64) >= n {
                        dev /= 2;
                    }
                    sum = sum.wrapping_add(dev as u64);
                }
                fio_hash(sum).wrapping_add(u64::from(rand_off)) % n
            }
            IndexSampler::Zoned { ref table } => {
                // fio's rand_between(1, 100), then a uniform block of that zone.
                let (start, len) = table[bounded(rng.next_u64(), 100) as usize];
                start + bounded(rng.next_u64(), len)
            }
        }
    }
}

/// fio's `__hash_u64`.
#[inline]
fn fio_hash(v: u64) -> u64 {
    v.wrapping_mul(GOLDEN_RATIO_64)
}

/// A 32-bit uniform draw, as fio's `__rand` gives one.
#[inline]
fn rand32(rng: &mut Xoshiro256PlusPlus) -> u32 {
    (rng.next_u64() >> 32) as u32
}

/// The first 32-bit draw of a generator seeded with `seed`.
fn first_draw(seed: u64) -> u32 {
    use rand_core::SeedableRng;
    rand32(&mut Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x7a1f_0ff5))
}

/// Maps a uniform u64 onto `0..n` without division (Lemire's multiply-shift).
#[inline]
pub fn bounded(random: u64, n: u64) -> u64 {
    ((random as u128 * n as u128) >> 64) as u64
}

/// fio's random map without its memory: every block index in `0..n` once per pass, in a seeded
/// order, then the next pass in another order.
///
/// fio keeps a bitmap of the blocks done (its axmap) and, with `random_generator=lfsr`, walks a
/// maximal-period LFSR instead, skipping values past the end. This walks a keyed bijection of the
/// `k`-bit integers (`2^(k-1) < n <= 2^k`: rounds of key xor, multiplication by an odd constant and
/// a right xorshift, each a bijection modulo `2^k`) over the counter `0..2^k` and skips the values
/// past the end, so it costs at most two evaluations per draw on average and holds no map.
#[derive(Clone, Debug)]
pub struct RandomMap {
    n: u64,
    mask: u64,
    shift: u32,
    keys: [u64; RANDOM_MAP_ROUNDS],
    /// The next counter value of this pass.
    next: u64,
    seed: u64,
    pass: u64,
}

/// Rounds of the keyed bijection.
const RANDOM_MAP_ROUNDS: usize = 3;

impl RandomMap {
    /// A map over `n` (>= 1) blocks, in an order that follows from `seed`.
    pub fn new(n: u64, seed: u64) -> RandomMap {
        let n = n.max(1);
        let bits = 64 - (n - 1).leading_zeros();
        let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
        let mut m =
            RandomMap { n, mask, shift: bits.div_ceil(2).max(1), keys: [0; RANDOM_MAP_ROUNDS], next: 0, seed, pass: 0 };
        m.rekey();
        m
    }

    fn rekey(&mut self) {
        let mut s = self.seed ^ self.pass.wrapping_mul(0xd1b5_4a32_d192_ed03);
        for k in &mut self.keys {
            *k = splitmix64(&mut s);
        }
    }

    /// The blocks it covers (`n`).
    pub fn blocks(&self) -> u64 {
        self.n
    }

    /// The next block index in `0..n`: none repeats until all `n` have come.
    #[inline]
    pub fn next_block(&mut self) -> u64 {
        loop {
            if self.next > self.mask {
                self.next = 0;
                self.pass += 1;
                self.rekey();
            }
            let x = self.permute(self.next);
            self.next += 1;
            if x < self.n {
                return x;
            }
        }
    }

    #[inline]
    fn permute(&self, mut x: u64) -> u64 {
        for k in self.keys {
            x = (x ^ k) & self.mask;
            // The multiplier is odd (| 1), so this is a bijection modulo 2^k.
            x = x.wrapping_mul(k | 1) & self.mask;
            x ^= x >> self.shift;
        }
        x
    }
}

/// One step of splitmix64 (the seeding generator of the xoshiro family).
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;

    fn rng() -> Xoshiro256PlusPlus {
        Xoshiro256PlusPlus::seed_from_u64(42)
    }

    #[test]
    fn parse_forms() {
        assert_eq!(RandomDist::parse("uniform"), Ok(RandomDist::Uniform));
        assert_eq!(RandomDist::parse("random"), Ok(RandomDist::Uniform), "fio's word");
        assert_eq!(RandomDist::parse("zipf:1.2"), Ok(RandomDist::Zipf { theta: 1.2, center: None }));
        assert_eq!(RandomDist::parse("zipf"), Ok(RandomDist::Zipf { theta: 1.1, center: None }), "fio's default");
        assert_eq!(RandomDist::parse("pareto"), Ok(RandomDist::Pareto { h: 0.2, center: None }), "fio's default");
        assert_eq!(RandomDist::parse("zipf:1.2:0.25"), Ok(RandomDist::Zipf { theta: 1.2, center: Some(0.25) }));
        assert_eq!(RandomDist::parse("pareto:0.8"), Ok(RandomDist::Pareto { h: 0.8, center: None }));
        assert_eq!(RandomDist::parse("normal:10"), Ok(RandomDist::Normal { dev_percent: 10.0, center: None }));
        assert_eq!(RandomDist::parse("normal"), Ok(RandomDist::Normal { dev_percent: 0.0, center: None }));
        assert!(RandomDist::parse("zipf:1").unwrap_err().contains("must differ from 1"));
        assert!(RandomDist::parse("zipf:-1").is_err());
        assert!(RandomDist::parse("pareto:1.5").is_err());
        assert!(RandomDist::parse("normal:100").is_err());
        assert!(RandomDist::parse("zipf:1.2:2").unwrap_err().contains("the centre '2' is not a share"));
        assert!(RandomDist::parse("zipf:1.2,pareto:0.3").unwrap_err().contains("one per direction"));
        assert!(RandomDist::parse("sequence:1,2").is_err());
        assert!(RandomDist::parse("gaussian").unwrap_err().contains("is not a random distribution"));
        for d in ["uniform", "zipf:1.2", "pareto:0.8", "normal:10", "zipf:1.2:0.25", "normal:5:0.5"] {
            assert_eq!(RandomDist::parse(d).unwrap().to_string(), d);
        }
    }

    /// fio's zoned zones (options.c's zone_split_ddir): a missing range share is an equal part of
    /// what the others leave, I/O shares must be given and add up to 100, range shares to at most
    /// 100 (each case as fio 3.33 took or refused it).
    #[test]
    fn zoned_parses_as_fio_parses_it() {
        let zones = |d: &str| match RandomDist::parse(d) {
            Ok(RandomDist::Zoned { zones }) => zones.iter().collect::<Vec<_>>(),
            other => panic!("{d}: {other:?}"),
        };
        assert_eq!(zones("zoned:50/5:30/15:20/80"), [(50, 5), (30, 15), (20, 80)]);
        assert_eq!(zones("zoned:50/5:30/15:20/"), [(50, 5), (30, 15), (20, 80)], "fio's rand-zones.fio");
        assert_eq!(zones("zoned:60/10:40/"), [(60, 10), (40, 90)]);
        assert_eq!(zones("zoned:40/:30/:30/10"), [(40, 45), (30, 45), (30, 10)]);
        assert!(
            RandomDist::parse("zoned:60/10:/20:/")
                .unwrap_err()
                .ends_with("'/20' gives no share of the I/Os; write ACCESS/RANGE, like 60/10")
        );
        assert_eq!(RandomDist::parse("zoned:50/5:30/15:20/").unwrap().to_string(), "zoned:50/5:30/15:20/80");
        let e = |d: &str| RandomDist::parse(d).unwrap_err();
        assert_eq!(
            e("zoned:50/5:30/15"),
            "random distribution 'zoned:50/5:30/15': the I/O shares add up to 80, and fio needs 100"
        );
        assert_eq!(
            e("zoned:50/60:50/60"),
            "random distribution 'zoned:50/60:50/60': the percentages add up to more than 100, which fio refuses"
        );
        assert_eq!(e("zoned:50:50"), "random distribution 'zoned:50:50': '50' is not ACCESS/RANGE, like 60/10");
        assert_eq!(
            e("zoned:x/5:100/5"),
            "random distribution 'zoned:x/5:100/5': 'x' is not a whole percentage from 0 to 100"
        );
        assert_eq!(
            RandomDist::parse("zoned_abs:60/20m:30/100m:10/0").unwrap().to_string(),
            "zoned_abs:60/20m:30/100m:10/0"
        );
        assert!(e("zoned_abs:50/1g:40/1g").ends_with("the I/O shares add up to 90, and fio needs 100"));
        assert!(e("zoned_abs:50/1g:50/").contains("'' in '50/' is not a size"));
        assert!(e("zoned_abs:50:50").contains("'50' is not ACCESS/SIZE"));
        assert!(e("zoned:50/5,60/10:40/90").contains("one per direction"));
        assert!(e(&format!("zoned:{}", vec!["5/5"; 20].join(":"))).contains("20 zones; nvmebench takes at most 16"));
    }

    /// Each zone takes its share of the draws, uniformly over its share of the blocks, from the
    /// start of the range (fio's __get_next_rand_offset_zoned).
    #[test]
    fn zoned_draws_each_zone_its_share_over_its_blocks() {
        let c = counts("zoned:50/5:30/15:20/80", 1000, 200_000);
        let share = |r: std::ops::Range<usize>| c[r].iter().sum::<u64>() as f64 / 200_000.0;
        let near = |got: f64, want: f64| assert!((got - want).abs() < 0.01, "{got} not {want}");
        near(share(0..50), 0.50);
        near(share(50..200), 0.30);
        near(share(200..1000), 0.20);
        // Uniform inside a zone: every block of the first zone about 1% of the draws.
        assert!(c[..50].iter().all(|&k| (1600..2400).contains(&k)), "{:?}", &c[..50]);
        // A range share under 100 leaves the rest untouched, as in fio.
        let c = counts("zoned:70/10:30/20", 1000, 10_000);
        assert!(c[300..].iter().all(|&k| k == 0));
        assert!(c[..300].iter().all(|&k| k > 0));
    }

    fn counts(dist: &str, n: u64, draws: usize) -> Vec<u64> {
        let s = IndexSampler::new(RandomDist::parse(dist).unwrap(), n, 9);
        let mut r = rng();
        let mut c = vec![0u64; n as usize];
        for _ in 0..draws {
            c[s.sample(&mut r) as usize] += 1;
        }
        c
    }

    /// fio's zoned_abs: each zone's share of the draws over its own blocks, in bytes from the start;
    /// a zone of no whole block takes its first block, as fio's does.
    #[test]
    fn zoned_abs_draws_each_zone_its_share_over_its_bytes() {
        let dist = RandomDist::parse("zoned_abs:60/64k:30/128k:10/0").unwrap();
        let s = IndexSampler::with_block(dist, 256, 4096, 9);
        let mut r = rng();
        let mut c = [0u64; 4];
        for _ in 0..100_000 {
            let b = s.sample(&mut r);
            c[match b {
                0..16 => 0,
                16..48 => 1,
                48 => 2,
                _ => 3,
            }] += 1;
        }
        assert_eq!(c[3], 0, "nothing past the zones");
        for (got, want) in c[..3].iter().zip([60_000.0, 30_000.0, 10_000.0]) {
            assert!((*got as f64 - want).abs() < want * 0.03, "{c:?}");
        }
    }

    /// Pearson's chi-square over 64 equal buckets: uniform draws must fit (df = 63; the 99.9%
    /// critical value is about 103.4).
    #[test]
    fn uniform_passes_chi_square() {
        let s = IndexSampler::new(RandomDist::Uniform, 1 << 20, 0);
        let mut r = rng();
        let draws = 640_000;
        let mut buckets = [0u64; 64];
        for _ in 0..draws {
            let i = s.sample(&mut r);
            assert!(i < 1 << 20);
            buckets[(i >> 14) as usize] += 1;
        }
        let expected = draws as f64 / 64.0;
        let chi2: f64 = buckets.iter().map(|&o| (o as f64 - expected).powi(2) / expected).sum();
        assert!(chi2 < 103.4, "chi-square {chi2}");
    }

    /// fio's zipf: rank 0 is drawn with probability 1/zeta(n, theta), rank 1 with 2^-theta of that
    /// (its two exact cases), and rank r lands on block (r * golden ratio + offset) mod n; with a
    /// centre the offset is n * centre, so rank 0 (hashed to 0) is the block at that share.
    #[test]
    fn zipf_is_fios() {
        let (n, draws) = (1000u64, 400_000);
        let c = counts("zipf:1.2:0.25", n, draws);
        let h: f64 = (1..=n).map(|k| 1.0 / (k as f64).powf(1.2)).sum();
        let top = c[250] as f64 / draws as f64;
        assert!((top - 1.0 / h).abs() < 0.005, "block 250 (rank 0) got {top}, fio's 1/zetan is {}", 1.0 / h);
        let second = c[(fio_hash(1).wrapping_add(250) % n) as usize] as f64 / draws as f64;
        assert!((second - 0.5f64.powf(1.2) / h).abs() < 0.005, "rank 1 got {second}");
        assert_eq!(c.iter().enumerate().max_by_key(|&(_, k)| *k).map(|(i, _)| i), Some(250));
    }

    /// fio's pareto: rank `(n - 1) * U^(ln h / ln(1 - h))`, so with h = 0.8 the top fifth of ranks
    /// take four fifths of the draws; ranks land as zipf's do.
    #[test]
    fn pareto_is_fios() {
        let (n, draws) = (10_000u64, 200_000);
        let c = counts("pareto:0.8:0", n, draws);
        let hot: std::collections::BTreeSet<u64> = (n * 4 / 5..n).map(|r| fio_hash(r) % n).collect();
        let share = hot.iter().map(|&b| c[b as usize]).sum::<u64>() as f64 / draws as f64;
        // What fio's law gives those blocks, ranks that share a block with them included:
        // P(rank = r) = ((r + 1) / (n - 1))^k - (r / (n - 1))^k, k = ln(1 - h) / ln h.
        let k = 0.2f64.ln() / 0.8f64.ln();
        let p = |r: u64| ((r + 1) as f64 / (n - 1) as f64).min(1.0).powf(k) - (r as f64 / (n - 1) as f64).powf(k);
        let want: f64 = (0..n).filter(|r| hot.contains(&(fio_hash(*r) % n))).map(p).sum();
        assert!(want > 0.8, "the top fifth of ranks alone has 0.8: {want}");
        assert!((share - want).abs() < 0.01, "those blocks got {share}, fio's law gives {want}");
    }

    /// fio's normal: the mean of 12 uniform draws over 0..=n (an Irwin-Hall sum: standard deviation
    /// n/12, 68% within it of n/2), hashed onto the range, so the hot blocks are scattered rather
    /// than around the middle; normal:DEV adds up to half of DEV% of n either way.
    #[test]
    fn normal_is_fios() {
        let (n, draws) = (100_000u64, 100_000);
        let near = |c: &[u64], width: u64| -> f64 {
            let blocks: std::collections::BTreeSet<u64> =
                (n / 2 - width..=n / 2 + width).map(|v| fio_hash(v) % n).collect();
            blocks.iter().map(|&b| c[b as usize]).sum::<u64>() as f64 / draws as f64
        };
        let c = counts("normal", n, draws);
        let sd = n / 12;
        assert!((near(&c, sd) - 0.683).abs() < 0.02, "{}", near(&c, sd));
        // The blocks around the middle of the range itself are no hotter than any others.
        let middle: u64 = c[(n / 2 - 500) as usize..(n / 2 + 500) as usize].iter().sum();
        assert!((middle as f64 / draws as f64) < 0.03, "{middle}");
        // A deviation of 50% adds a uniform +-25% of n: fewer values near the middle.
        let wide = counts("normal:50", n, draws);
        assert!(near(&wide, sd) < 0.5, "{}", near(&wide, sd));
    }

    /// Without norandommap fio covers every block once per pass: so does the map, for block
    /// counts on and off a power of two, and a new pass takes another order.
    #[test]
    fn the_random_map_covers_every_block_once_per_pass() {
        for n in [1u64, 2, 3, 7, 64, 1000, 4096, 4097, 100_003] {
            let mut m = RandomMap::new(n, 42);
            let mut passes: Vec<Vec<u64>> = Vec::new();
            for _ in 0..2 {
                let mut seen = vec![false; n as usize];
                let order: Vec<u64> = (0..n).map(|_| m.next_block()).collect();
                for &b in &order {
                    assert!(b < n, "n={n}: {b} is past the end");
                    assert!(!std::mem::replace(&mut seen[b as usize], true), "n={n}: {b} twice in a pass");
                }
                passes.push(order);
            }
            if n > 2 {
                assert_ne!(passes[0], passes[1], "n={n}: each pass takes its own order");
            }
        }
        // Not the identity, and another seed gives another order.
        let walk = |seed| {
            let mut m = RandomMap::new(1000, seed);
            (0..1000).map(|_| m.next_block()).collect::<Vec<_>>()
        };
        assert_ne!(walk(1), (0..1000).collect::<Vec<_>>());
        assert_ne!(walk(1), walk(2));
    }

    /// The map's first half-pass spreads over the range as uniform draws do: each of 64 buckets
    /// gets its share (chi-square, df = 63, 99.9% critical value 103.4).
    #[test]
    fn the_random_map_spreads_over_the_range() {
        let n = 1u64 << 20;
        let mut m = RandomMap::new(n, 7);
        let draws = n / 2;
        let mut buckets = [0u64; 64];
        for _ in 0..draws {
            buckets[(m.next_block() >> 14) as usize] += 1;
        }
        let expected = draws as f64 / 64.0;
        // Sampling without replacement has less spread than with; the bound holds a fortiori.
        let chi2: f64 = buckets.iter().map(|&o| (o as f64 - expected).powi(2) / expected).sum();
        assert!(chi2 < 103.4, "chi-square {chi2}");
    }
}

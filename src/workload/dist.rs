//! Where random I/Os land: uniform, zipf, pareto and normal distributions over block indexes.
//!
//! The sampler returns an index in `0..n`; the generator turns it into a byte offset. Zipf and pareto
//! rank blocks by popularity; rank `r` is then mapped to block `r * P mod n` (P a prime that cannot
//! divide n), a bijection that spreads the hot set over the whole range instead of piling it at the
//! start of the device, where it would share flash blocks and hide the effect being measured. The
//! normal distribution keeps its locality on purpose: it models a hot region around the middle.

use rand_core::RngCore;
use rand_distr::{Distribution, Normal, Zipf};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;
use std::fmt;

/// 2^61 - 1, a Mersenne prime: it divides no block count a device can have.
const SCATTER_PRIME: u64 = (1 << 61) - 1;

/// The distribution of random offsets, in fio's `random_distribution` words.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum RandomDist {
    Uniform,
    /// Zipf with exponent `theta` (> 0, != 1 is not required).
    Zipf {
        theta: f64,
    },
    /// Pareto in the 80/20 sense: a share `h` of accesses goes to a share `1 - h` of the blocks.
    Pareto {
        h: f64,
    },
    /// Normal around the middle of the range, `sigma` in percent of the range.
    Normal {
        sigma_percent: f64,
    },
}

impl RandomDist {
    /// Parses `uniform`, `zipf:1.2`, `pareto:0.8` or `normal:10`.
    pub fn parse(text: &str) -> Result<RandomDist, String> {
        let (name, arg) = match text.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (text, None),
        };
        let number = |what: &str, ok: &dyn Fn(f64) -> bool| -> Result<f64, String> {
            arg.and_then(|a| a.trim().parse::<f64>().ok())
                .filter(|v| v.is_finite() && ok(*v))
                .ok_or_else(|| format!("random distribution '{text}' needs {what}"))
        };
        match name {
            "uniform" | "random" if arg.is_none() => Ok(RandomDist::Uniform),
            "zipf" => Ok(RandomDist::Zipf { theta: number("a theta above 0, as in zipf:1.2", &|v| v > 0.0)? }),
            "pareto" => Ok(RandomDist::Pareto {
                h: number("an h between 0.5 and 1, as in pareto:0.8", &|v| v > 0.5 && v < 1.0)?,
            }),
            "normal" => Ok(RandomDist::Normal {
                sigma_percent: number("a sigma in percent of the range, as in normal:10", &|v| v > 0.0 && v <= 100.0)?,
            }),
            _ => {
                Err(format!("'{text}' is not a random distribution; use uniform, zipf:THETA, pareto:H or normal:SIGMA"))
            }
        }
    }
}

impl fmt::Display for RandomDist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RandomDist::Uniform => f.write_str("uniform"),
            RandomDist::Zipf { theta } => write!(f, "zipf:{theta}"),
            RandomDist::Pareto { h } => write!(f, "pareto:{h}"),
            RandomDist::Normal { sigma_percent } => write!(f, "normal:{sigma_percent}"),
        }
    }
}

/// Draws block indexes in `0..n` from a [`RandomDist`].
#[derive(Clone, Debug)]
pub enum IndexSampler {
    Uniform { n: u64 },
    Zipf { n: u64, zipf: Zipf<f64> },
    Pareto { n: u64, inv_exponent: f64 },
    Normal { n: u64, normal: Normal<f64> },
}

impl IndexSampler {
    /// A sampler over `n` (>= 1) blocks.
    pub fn new(dist: RandomDist, n: u64) -> IndexSampler {
        let n = n.max(1);
        match dist {
            RandomDist::Uniform => IndexSampler::Uniform { n },
            RandomDist::Zipf { theta } => IndexSampler::Zipf {
                n,
                zipf: Zipf::new(n as f64, theta).expect("n >= 1 and theta > 0 were checked when parsing"),
            },
            RandomDist::Pareto { h } => {
                // P(rank share <= 1-h) = h for rank share = U^(1/b) with b = ln h / ln(1-h).
                let b = h.ln() / (1.0 - h).ln();
                IndexSampler::Pareto { n, inv_exponent: 1.0 / b }
            }
            RandomDist::Normal { sigma_percent } => IndexSampler::Normal {
                n,
                normal: Normal::new(n as f64 / 2.0, n as f64 * sigma_percent / 100.0)
                    .expect("sigma is positive and finite, checked when parsing"),
            },
        }
    }

    /// The next block index in `0..n`.
    #[inline]
    pub fn sample(&self, rng: &mut Xoshiro256PlusPlus) -> u64 {
        match self {
            IndexSampler::Uniform { n } => bounded(rng.next_u64(), *n),
            IndexSampler::Zipf { n, zipf } => {
                let rank = (zipf.sample(rng) as u64).clamp(1, *n) - 1;
                scatter(rank, *n)
            }
            IndexSampler::Pareto { n, inv_exponent } => {
                let u = unit_f64(rng.next_u64());
                let rank = ((u.powf(*inv_exponent) * *n as f64) as u64).min(*n - 1);
                scatter(rank, *n)
            }
            IndexSampler::Normal { n, normal } => {
                let x = normal.sample(rng).round() as i64;
                x.rem_euclid(*n as i64) as u64
            }
        }
    }
}

/// Maps a uniform u64 onto `0..n` without division (Lemire's multiply-shift).
#[inline]
pub fn bounded(random: u64, n: u64) -> u64 {
    ((random as u128 * n as u128) >> 64) as u64
}

/// A uniform float in [0, 1) from the top 53 bits.
#[inline]
fn unit_f64(random: u64) -> f64 {
    (random >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Spreads popularity ranks over the range: a bijection on `0..n`.
#[inline]
pub fn scatter(rank: u64, n: u64) -> u64 {
    ((rank as u128 * SCATTER_PRIME as u128) % n as u128) as u64
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
        assert_eq!(RandomDist::parse("zipf:1.2"), Ok(RandomDist::Zipf { theta: 1.2 }));
        assert_eq!(RandomDist::parse("pareto:0.8"), Ok(RandomDist::Pareto { h: 0.8 }));
        assert_eq!(RandomDist::parse("normal:10"), Ok(RandomDist::Normal { sigma_percent: 10.0 }));
        assert!(RandomDist::parse("zipf").unwrap_err().contains("needs a theta"));
        assert!(RandomDist::parse("zipf:-1").is_err());
        assert!(RandomDist::parse("pareto:1.5").is_err());
        assert!(RandomDist::parse("gauss").unwrap_err().contains("is not a random distribution"));
        for d in ["uniform", "zipf:1.2", "pareto:0.8", "normal:10"] {
            assert_eq!(RandomDist::parse(d).unwrap().to_string(), d);
        }
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

    #[test]
    fn scatter_is_a_bijection() {
        for n in [1u64, 2, 7, 64, 1000, 4096] {
            let mut seen = vec![false; n as usize];
            for r in 0..n {
                let b = scatter(r, n) as usize;
                assert!(!seen[b], "n={n} maps two ranks to {b}");
                seen[b] = true;
            }
        }
    }

    /// Pearson's chi-square over 64 equal buckets: uniform draws must fit (df = 63; the 99.9%
    /// critical value is about 103.4).
    #[test]
    fn uniform_passes_chi_square() {
        let s = IndexSampler::new(RandomDist::Uniform, 1 << 20);
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

    /// The most popular block of a zipf(theta) over n blocks is drawn with probability 1/H(n, theta);
    /// the second with half of that at theta = 1.
    #[test]
    fn zipf_ranks_follow_the_law() {
        let n = 1000u64;
        let theta = 1.0;
        let s = IndexSampler::new(RandomDist::Zipf { theta }, n);
        let mut r = rng();
        let draws = 400_000;
        let mut counts = vec![0u64; n as usize];
        for _ in 0..draws {
            counts[s.sample(&mut r) as usize] += 1;
        }
        let h: f64 = (1..=n).map(|k| 1.0 / (k as f64).powf(theta)).sum();
        let top = counts[scatter(0, n) as usize] as f64 / draws as f64;
        let second = counts[scatter(1, n) as usize] as f64 / draws as f64;
        assert!((top - 1.0 / h).abs() < 0.01, "top {top} vs {}", 1.0 / h);
        assert!((second - 0.5 / h).abs() < 0.01, "second {second} vs {}", 0.5 / h);
    }

    #[test]
    fn pareto_puts_h_of_accesses_on_one_minus_h_of_blocks() {
        let n = 10_000u64;
        let s = IndexSampler::new(RandomDist::Pareto { h: 0.8 }, n);
        let mut r = rng();
        let draws = 200_000;
        let mut counts = vec![0u64; n as usize];
        for _ in 0..draws {
            counts[s.sample(&mut r) as usize] += 1;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let hot: u64 = counts[..(n as usize / 5)].iter().sum();
        let share = hot as f64 / draws as f64;
        assert!((share - 0.8).abs() < 0.02, "hottest 20% got {share}");
    }

    #[test]
    fn normal_centres_on_the_middle() {
        let n = 100_000u64;
        let s = IndexSampler::new(RandomDist::Normal { sigma_percent: 5.0 }, n);
        let mut r = rng();
        let draws = 100_000;
        let within: usize = (0..draws)
            .filter(|_| {
                let i = s.sample(&mut r) as i64;
                (i - 50_000).abs() <= 5_000
            })
            .count();
        // One sigma holds 68.3%.
        let share = within as f64 / draws as f64;
        assert!((share - 0.683).abs() < 0.01, "{share}");
    }
}

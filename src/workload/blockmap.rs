//! fio's random map for I/Os of several sizes: one bit per block of the working set, set once an
//! I/O covered the block (fio's axmap, as io_u.c uses it). A random block already done gives way
//! to the next free one after it, wrapping at the end (`axmap_next_free`), and an I/O is cut short
//! at the first block already done (`mark_random_map`), so a pass covers every block exactly once
//! however the sizes fall, with I/Os that grow shorter as the map fills.
//!
//! With one block size the keyed bijection of [`dist::RandomMap`](super::dist::RandomMap) covers
//! the blocks the same way and holds no map; this one is used only where sizes vary. It does not
//! draw anything itself: the generator draws the block and the size.

/// One bit per block, and one bit per word of them that is full, so that finding a free block
/// skips 4096 done blocks per summary word.
#[derive(Clone, Debug)]
pub struct BlockMap {
    words: Vec<u64>,
    full: Vec<u64>,
    blocks: u64,
    set: u64,
}

impl BlockMap {
    /// An empty map of `blocks` (>= 1) blocks.
    pub fn new(blocks: u64) -> BlockMap {
        let blocks = blocks.max(1);
        let nwords = blocks.div_ceil(64) as usize;
        let mut m = BlockMap { words: vec![0; nwords], full: vec![0; nwords.div_ceil(64)], blocks, set: 0 };
        m.clear();
        m
    }

    /// Every block free again (a new pass).
    pub fn clear(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
        self.full.iter_mut().for_each(|w| *w = 0);
        self.set = 0;
        // The last word's bits past the end count as done, so a search never finds them.
        let tail = self.blocks % 64;
        if tail != 0 {
            let last = self.words.len() - 1;
            self.words[last] = !0u64 << tail;
        }
        // So do the summary's bits past the last word.
        let words = self.words.len() % 64;
        if words != 0 {
            let last = self.full.len() - 1;
            self.full[last] = !0u64 << words;
        }
    }

    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    /// Whether every block is done.
    pub fn is_full(&self) -> bool {
        self.set == self.blocks
    }

    #[inline]
    pub fn is_set(&self, block: u64) -> bool {
        self.words[(block / 64) as usize] & (1 << (block % 64)) != 0
    }

    /// The first free block after `block`, wrapping past the end to the start (fio's
    /// `axmap_next_free`); `None` when every block is done.
    pub fn next_free_after(&self, block: u64) -> Option<u64> {
        if self.is_full() {
            return None;
        }
        let next = if block + 1 >= self.blocks { 0 } else { block + 1 };
        self.free_from(next).or_else(|| self.free_from(0))
    }

    /// The first free block at or after `block`, without wrapping.
    fn free_from(&self, block: u64) -> Option<u64> {
        let mut w = (block / 64) as usize;
        let free = !self.words[w] & (!0u64 << (block % 64));
        if free != 0 {
            return Some(w as u64 * 64 + u64::from(free.trailing_zeros()));
        }
        w += 1;
        while w < self.words.len() {
            // Whole words at a time through the summary: the next word that is not full.
            let s = w / 64;
            let open = !self.full[s] & (!0u64 << (w % 64));
            if open == 0 {
                w = (s + 1) * 64;
                continue;
            }
            w = s * 64 + open.trailing_zeros() as usize;
            let free = !self.words[w];
            debug_assert!(free != 0, "a word the summary says is open has a free bit");
            return Some(w as u64 * 64 + u64::from(free.trailing_zeros()));
        }
        None
    }

    /// Marks up to `n` blocks from `block` on as done, stopping at the first one already done
    /// (fio's `axmap_set_nr`); how many it marked, at least 1 when `block` itself is free.
    pub fn set_run(&mut self, block: u64, n: u64) -> u64 {
        let mut done = 0;
        let mut b = block;
        while done < n && b < self.blocks {
            let w = (b / 64) as usize;
            let bit = b % 64;
            let want = (n - done).min(64 - bit);
            let mask = if want == 64 { !0 } else { ((1u64 << want) - 1) << bit };
            let taken = self.words[w] & mask;
            // Up to the first block already done, if any in this word's stretch.
            let take = if taken == 0 { want } else { u64::from(taken.trailing_zeros()) - bit };
            if take == 0 {
                break;
            }
            let m = if take == 64 { !0 } else { ((1u64 << take) - 1) << bit };
            self.words[w] |= m;
            if self.words[w] == !0 {
                self.full[w / 64] |= 1 << (w % 64);
            }
            done += take;
            b += take;
            if take < want {
                break;
            }
        }
        self.set += done;
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_stops_at_the_first_block_already_done() {
        let mut m = BlockMap::new(200);
        assert_eq!(m.set_run(10, 5), 5);
        assert_eq!(m.set_run(8, 8), 2, "10 was done");
        assert_eq!(m.set_run(60, 10), 10, "across a word boundary");
        assert_eq!(m.set_run(195, 20), 5, "not past the end");
        assert!(m.is_set(69) && !m.is_set(70) && m.is_set(8) && !m.is_set(7));
        assert_eq!(m.set_run(10, 3), 0, "a done block marks nothing");
        assert_eq!(m.set, 22);
    }

    #[test]
    fn the_next_free_block_wraps_and_skips_full_words() {
        let mut m = BlockMap::new(64 * 64 * 3 + 5);
        let n = m.blocks();
        assert_eq!(m.set_run(0, n - 1), n - 1);
        assert_eq!(m.next_free_after(0), Some(n - 1));
        assert_eq!(m.next_free_after(n - 1), Some(n - 1), "after the last, from the start on");
        let mut m = BlockMap::new(n);
        m.set_run(100, n - 100);
        assert_eq!(m.next_free_after(5000), Some(0), "wraps to the start");
        assert_eq!(m.next_free_after(3), Some(4));
        m.set_run(0, 100);
        assert!(m.is_full());
        assert_eq!(m.next_free_after(7), None);
        m.clear();
        assert!(!m.is_full() && !m.is_set(n - 1));
        assert_eq!(m.next_free_after(n - 1), Some(0));
    }

    /// Random runs of random lengths fill the map block by block: what each marks is exactly the
    /// free stretch a plain bit-by-bit walk finds, and the marks add up to the whole map.
    #[test]
    fn random_runs_match_a_plain_walk_and_cover_every_block_once() {
        let n = 10_000u64;
        let mut m = BlockMap::new(n);
        let mut plain = vec![false; n as usize];
        let mut x = 0x1234_5678_9abc_def1u64;
        let mut total = 0;
        while !m.is_full() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut b = x % n;
            if plain[b as usize] {
                let want = (1..=n).map(|i| (b + i) % n).find(|&c| !plain[c as usize]);
                b = m.next_free_after(b).unwrap();
                assert_eq!(Some(b), want);
            }
            let len = 1 + (x >> 40) % 40;
            let got = m.set_run(b, len);
            let mut walk = 0;
            while walk < len && b + walk < n && !plain[(b + walk) as usize] {
                plain[(b + walk) as usize] = true;
                walk += 1;
            }
            assert_eq!(got, walk);
            total += got;
        }
        assert_eq!(total, n);
        assert!(plain.iter().all(|&p| p));
    }
}

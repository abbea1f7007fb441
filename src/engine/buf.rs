//! Page-aligned I/O buffers for O_DIRECT, one per slot, carved out of a single allocation.
//!
//! Built without `unsafe`: a `Vec` a page longer than needed, used from its first page-aligned byte.
//! The allocation never moves after construction, so the addresses handed to the kernel stay valid
//! for the life of the value.

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Alignment of every slot buffer: a page, which satisfies any logical block size up to 4 KiB and
/// the kernel's O_DIRECT and registered-buffer rules.
pub const BUF_ALIGN: usize = 4096;

/// `slots` buffers of `slot_bytes` each, page aligned.
pub struct SlotBuffers {
    storage: Vec<u8>,
    start: usize,
    slot_bytes: usize,
    slots: usize,
}

impl SlotBuffers {
    /// Allocates and fills the buffers with pseudo-random bytes, so that writes do not hand the
    /// device zeroes (which compressing or deduplicating drives complete for free).
    pub fn new(slots: usize, slot_bytes: usize, seed: u64) -> SlotBuffers {
        let slot_bytes = slot_bytes.div_ceil(BUF_ALIGN) * BUF_ALIGN;
        let total = slots * slot_bytes;
        let mut storage = vec![0u8; total + BUF_ALIGN];
        let start = storage.as_ptr().align_offset(BUF_ALIGN);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        rng.fill_bytes(&mut storage[start..start + total]);
        SlotBuffers { storage, start, slot_bytes, slots }
    }

    /// The bytes reserved for each slot (its size rounded up to the alignment).
    pub fn slot_bytes(&self) -> usize {
        self.slot_bytes
    }

    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Start address of `slot`'s buffer, for handing to the kernel or a DMA engine.
    #[inline]
    pub fn slot_ptr(&mut self, slot: u32) -> *mut u8 {
        debug_assert!((slot as usize) < self.slots);
        self.storage[self.start + slot as usize * self.slot_bytes..].as_mut_ptr()
    }

    /// The buffer of `slot`.
    pub fn slot(&self, slot: u32) -> &[u8] {
        let s = self.start + slot as usize * self.slot_bytes;
        &self.storage[s..s + self.slot_bytes]
    }

    /// The buffer of `slot`, writable.
    pub fn slot_mut(&mut self, slot: u32) -> &mut [u8] {
        let s = self.start + slot as usize * self.slot_bytes;
        &mut self.storage[s..s + self.slot_bytes]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_aligned_and_disjoint() {
        let mut b = SlotBuffers::new(8, 5000, 1);
        assert_eq!(b.slot_bytes(), 8192);
        for s in 0..8 {
            assert_eq!(b.slot_ptr(s) as usize % BUF_ALIGN, 0);
        }
        assert_eq!(b.slot_ptr(1) as usize - b.slot_ptr(0) as usize, 8192);
        b.slot_mut(3).fill(0xaa);
        assert!(b.slot(2).iter().any(|&x| x != 0xaa));
        assert!(b.slot(3).iter().all(|&x| x == 0xaa));
    }

    #[test]
    fn contents_are_not_zero() {
        let b = SlotBuffers::new(1, 4096, 9);
        assert!(b.slot(0).iter().filter(|&&x| x == 0).count() < 100);
    }
}

//! DMA-able memory from SPDK's allocator (pinned hugepage memory with known IOVA), NUMA-local to the
//! controller, freed on drop.

use super::SpdkError;
use std::ptr::NonNull;

/// One allocation holding every slot's buffer.
pub struct DmaBuf {
    ptr: NonNull<u8>,
    slot_bytes: usize,
    slots: usize,
}

impl DmaBuf {
    /// `slots` page-aligned buffers of `slot_bytes` (rounded up to 4 KiB) on `numa_node` (-1: any),
    /// filled with pseudo-random bytes so that writes do not send zeroes.
    pub fn new(slots: usize, slot_bytes: usize, numa_node: i32, seed: u64) -> Result<DmaBuf, SpdkError> {
        let slot_bytes = slot_bytes.div_ceil(4096) * 4096;
        let total = slots * slot_bytes;
        // SAFETY: plain allocation call; a NULL return is handled below.
        let p =
            unsafe { spdk_sys::spdk_zmalloc(total, 4096, std::ptr::null_mut(), numa_node, spdk_sys::SPDK_MALLOC_DMA) };
        let ptr = NonNull::new(p.cast::<u8>()).ok_or(SpdkError::DmaAlloc { bytes: total })?;
        let mut b = DmaBuf { ptr, slot_bytes, slots };
        let mut x = seed | 1;
        for chunk in b.as_mut_slice().chunks_exact_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            chunk.copy_from_slice(&x.to_le_bytes());
        }
        Ok(b)
    }

    fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: `ptr` is a live allocation of exactly slots * slot_bytes bytes owned by self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.slots * self.slot_bytes) }
    }

    /// Start of `slot`'s buffer.
    #[inline]
    pub fn slot_ptr(&self, slot: u32) -> *mut u8 {
        debug_assert!((slot as usize) < self.slots);
        // SAFETY: slot < slots, so the offset stays inside the allocation.
        unsafe { self.ptr.as_ptr().add(slot as usize * self.slot_bytes) }
    }

    /// `slot`'s buffer.
    pub fn slot_mut(&mut self, slot: u32) -> &mut [u8] {
        let (start, len) = (slot as usize * self.slot_bytes, self.slot_bytes);
        &mut self.as_mut_slice()[start..start + len]
    }

    pub fn slot_bytes(&self) -> usize {
        self.slot_bytes
    }
}

impl Drop for DmaBuf {
    fn drop(&mut self) {
        // SAFETY: allocated by spdk_zmalloc and freed once; the engine drops its qpair (so no command
        // can still reference this memory) before its buffers.
        unsafe { spdk_sys::spdk_free(self.ptr.as_ptr().cast()) };
    }
}

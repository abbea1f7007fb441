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

    /// One zeroed allocation of `bytes` aligned to `align` (a power of two, at least 4 KiB) on
    /// `numa_node` (-1: any): a submission queue's ring, which SPDK wants aligned to its own size.
    pub fn ring(bytes: usize, align: usize, numa_node: i32) -> Result<DmaBuf, SpdkError> {
        // SAFETY: plain allocation call; a NULL return is handled below.
        let p =
            unsafe { spdk_sys::spdk_zmalloc(bytes, align, std::ptr::null_mut(), numa_node, spdk_sys::SPDK_MALLOC_DMA) };
        let ptr = NonNull::new(p.cast::<u8>()).ok_or(SpdkError::DmaAlloc { bytes })?;
        Ok(DmaBuf { ptr, slot_bytes: bytes, slots: 1 })
    }

    /// The NUMA node of the memory behind the allocation's first byte, as the kernel has it placed
    /// (`None` where the kernel has no NUMA support).
    pub fn node(&self) -> Option<i32> {
        node_of(self.ptr.as_ptr() as usize)
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

/// The NUMA node of the page at address `addr` (get_mempolicy with MPOL_F_NODE | MPOL_F_ADDR):
/// where the memory really is, whatever node the allocator was asked for. The address is only
/// looked up, never read.
pub fn node_of(addr: usize) -> Option<i32> {
    const MPOL_F_NODE: libc::c_ulong = 1;
    const MPOL_F_ADDR: libc::c_ulong = 2;
    let mut node: libc::c_int = -1;
    // SAFETY: `node` is writable; no node mask is asked for (NULL, 0); `addr` is only looked up in
    // the process's mappings, never dereferenced.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_get_mempolicy,
            &mut node as *mut libc::c_int,
            std::ptr::null_mut::<libc::c_ulong>(),
            0 as libc::c_ulong,
            addr as *const std::ffi::c_void,
            MPOL_F_NODE | MPOL_F_ADDR,
        )
    };
    (rc == 0 && node >= 0).then_some(node)
}

/// The NUMA node of CPU `cpu`, from sysfs (`None` where the kernel shows none).
pub fn node_of_cpu(cpu: usize) -> Option<i32> {
    std::fs::read_dir(format!("/sys/devices/system/cpu/cpu{cpu}"))
        .ok()?
        .filter_map(Result::ok)
        .find_map(|e| e.file_name().to_str().and_then(|n| n.strip_prefix("node")).and_then(|n| n.parse().ok()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_threads_memory_and_cpu_have_a_node_where_the_kernel_has_numa() {
        let x = vec![1u8; 1 << 16];
        let mem = node_of(x.as_ptr() as usize);
        // SAFETY: plain libc call.
        let cpu = unsafe { libc::sched_getcpu() };
        let cpu_node = node_of_cpu(cpu as usize);
        if std::path::Path::new("/sys/devices/system/node/node0").exists() {
            assert!(mem.is_some_and(|n| n >= 0), "{mem:?}");
            assert!(cpu_node.is_some_and(|n| n >= 0), "{cpu_node:?}");
        }
        assert_eq!(node_of_cpu(1 << 20), None, "no such CPU");
    }
}

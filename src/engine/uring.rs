//! Linux io_uring, O_DIRECT, on a block device or a regular file.
//!
//! One ring per worker, with the target registered as a fixed file and every slot buffer registered
//! as a fixed buffer, so the kernel neither looks up the fd nor pins pages per I/O. The ring itself
//! (set-up flags and their fallback, IOPOLL, SQPOLL, when to enter the kernel) lives in
//! [`super::ring`], shared with the NVMe passthrough engine; this module builds read, write and
//! fsync SQEs and judges their results. Trims and write-zeroes are made synchronously inside `queue`
//! ([`RangeOps`]: `BLKDISCARD`/`BLKZEROOUT`, or `fallocate` on a file) and handed back by the next
//! `poll`, as fio's io_uring engine does with trims.

use super::buf::SlotBuffers;
use super::rangeops::{Finished, RangeOps};
use super::ring::{Ring, RingOptions};
use super::{Engine, EngineBuilder, EngineError, EngineInfo, Queued};
use crate::io::IoError;
use crate::io::{Direction, IoOp, IoPrio};
use io_uring::{cqueue, opcode, squeue, types};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

const NAME: &str = "uring";

/// Knobs of the io_uring engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UringOptions {
    /// Completion mode, SQPOLL, optional flags and batching.
    pub ring: RingOptions,
    /// Register the slot buffers (READ_FIXED/WRITE_FIXED). Falls back to plain reads when the
    /// kernel refuses (usually RLIMIT_MEMLOCK), and says so in the report.
    pub fixed_buffers: bool,
    /// Register the target fd.
    pub registered_file: bool,
}

impl Default for UringOptions {
    fn default() -> Self {
        UringOptions { ring: RingOptions::default(), fixed_buffers: true, registered_file: true }
    }
}

pub struct UringBuilder {
    pub path: PathBuf,
    pub writes: bool,
    /// O_DIRECT; false: through the page cache (`--buffered`, fio's direct=0).
    pub direct: bool,
    pub options: UringOptions,
    pub buffer_seed: u64,
}

impl EngineBuilder for UringBuilder {
    type Engine = UringEngine;

    fn build(&self, worker: usize, queue_depth: u32, max_io_bytes: u32) -> Result<UringEngine, EngineError> {
        let file = super::open_target(&self.path, self.writes, self.direct)?;
        UringEngine::new(file, queue_depth, max_io_bytes, self.options, self.buffer_seed ^ worker as u64)
    }
}

/// Registers every slot buffer with `ring`; `None` (and a note) when the kernel refuses.
fn register_slot_buffers<S: squeue::EntryMarker, C: cqueue::EntryMarker>(
    ring: &Ring<S, C>,
    bufs: &mut SlotBuffers,
) -> Option<String> {
    let iovecs: Vec<libc::iovec> = (0..bufs.slots() as u32)
        .map(|s| libc::iovec { iov_base: bufs.slot_ptr(s).cast(), iov_len: bufs.slot_bytes() })
        .collect();
    // SAFETY: every iovec points into `bufs`, a live allocation that never moves and that the engine
    // owns; engines drop the ring before `bufs` (field order), so the kernel's registration never
    // outlives the memory.
    match unsafe { ring.ring.submitter().register_buffers(&iovecs) } {
        Ok(()) => None,
        Err(e) => Some(format!(
            "registering {} KiB of buffers failed ({e}); using unregistered buffers (raise `ulimit -l`)",
            bufs.slots() * bufs.slot_bytes() / 1024
        )),
    }
}

/// What a worker's ring has registered with the kernel: the target's fd and the slot buffers (or,
/// when the kernel refused the buffers, why not). Shared by the uring and uring-cmd engines.
pub(crate) struct Registered {
    pub fixed_buffers: bool,
    pub fixed_buffers_fallback: Option<String>,
    pub registered_file: bool,
}

impl Registered {
    /// Registers `file` (as the fixed file 0) and the slot buffers, as `options` ask. `engine` and
    /// `what` name them in the one error that ends the set-up: a refused fd registration.
    pub(crate) fn new<S: squeue::EntryMarker, C: cqueue::EntryMarker>(
        ring: &Ring<S, C>,
        file: &File,
        bufs: &mut SlotBuffers,
        options: &UringOptions,
        engine: &'static str,
        what: &'static str,
    ) -> Result<Registered, EngineError> {
        if options.registered_file {
            ring.ring.submitter().register_files(&[file.as_raw_fd()]).map_err(|source| EngineError::Setup {
                engine,
                what,
                source,
            })?;
        }
        let fixed_buffers_fallback = options.fixed_buffers.then(|| register_slot_buffers(ring, bufs)).flatten();
        Ok(Registered {
            fixed_buffers: options.fixed_buffers && fixed_buffers_fallback.is_none(),
            fixed_buffers_fallback,
            registered_file: options.registered_file,
        })
    }

    /// The report's knobs: the ring's, then these registrations, then `extra`, then any notes.
    pub(crate) fn describe<S: squeue::EntryMarker, C: cqueue::EntryMarker>(
        &self,
        ring: &Ring<S, C>,
        extra: impl IntoIterator<Item = (String, String)>,
    ) -> Vec<(String, String)> {
        let onoff = |b: bool| if b { "1" } else { "0" }.to_string();
        let mut options = Vec::new();
        ring.describe(&mut options);
        options.push(("fixedbufs".into(), onoff(self.fixed_buffers)));
        options.push(("regfile".into(), onoff(self.registered_file)));
        options.extend(extra);
        for note in self.fixed_buffers_fallback.iter().chain(&ring.active.notes) {
            options.push(("note".into(), note.clone()));
        }
        options
    }
}

/// One worker's ring.
pub struct UringEngine {
    // Field order is drop order: the ring (and with it the kernel's references to the buffers and the
    // file) goes before the buffers and the file it points at.
    ring: Ring<squeue::Entry, cqueue::Entry>,
    bufs: SlotBuffers,
    file: File,
    /// The read and write SQEs as the crate's builders make them for this ring's registrations,
    /// with no buffer, length or offset: each I/O copies its direction's and fills in its own.
    templates: [RawSqe; 2],
    /// 0xffff with registered buffers (the slot is the buffer index), 0 without.
    buf_index_mask: u16,
    /// Slot 0's buffer address and the distance between slots (`bufs` never moves), and the
    /// number of slots.
    buf_base: u64,
    slot_bytes: u64,
    slots: u32,
    registered: Registered,
    ops: RangeOps,
    finished: Finished,
}

impl UringEngine {
    fn new(
        file: File,
        queue_depth: u32,
        max_io_bytes: u32,
        options: UringOptions,
        seed: u64,
    ) -> Result<UringEngine, EngineError> {
        let ring = Ring::new(NAME, queue_depth, &options.ring)?;
        let mut bufs = SlotBuffers::new(queue_depth as usize, max_io_bytes as usize, seed);
        let registered = Registered::new(&ring, &file, &mut bufs, &options, NAME, "registering the file")?;
        let ops = RangeOps::new(&file).map_err(|source| EngineError::Setup { engine: NAME, what: "fstat", source })?;
        let mut e = UringEngine {
            buf_base: bufs.slot_ptr(0) as u64,
            slot_bytes: bufs.slot_bytes() as u64,
            slots: queue_depth,
            ring,
            bufs,
            file,
            templates: [RawSqe::ZERO; 2],
            buf_index_mask: if registered.fixed_buffers { u16::MAX } else { 0 },
            registered,
            ops,
            finished: Finished::new(queue_depth),
        };
        let blank = IoOp { dir: Direction::Read, offset: 0, len: 0, prio: IoPrio::NONE };
        for dir in [Direction::Read, Direction::Write] {
            e.templates[dir as usize] = RawSqe::from_entry(e.entry(0, &IoOp { dir, ..blank }));
        }
        Ok(e)
    }

    /// A read or write's SQE: its direction's template with the I/O's own fields. The slot's
    /// expected length rides in the upper half of `user_data`, for `judge`.
    #[inline(always)]
    fn rw_sqe(&self, slot: u32, op: &IoOp) -> RawSqe {
        // A slot past the buffers would send the kernel another slot's memory, or none of ours.
        assert!(slot < self.slots, "a slot past the queue depth");
        let mut sqe = self.templates[op.dir as usize & 1];
        sqe.addr = self.buf_base + u64::from(slot) * self.slot_bytes;
        sqe.len = op.len;
        sqe.off = op.offset;
        // fio sets the job's priority on every read and write (the submitting context may be an
        // SQPOLL thread that never took the job's ioprio_set), cmdprio's where it chose one.
        sqe.ioprio = op.prio.value;
        // The buffer index is the slot: slots are < queue depth <= 65536 entries (io_uring's limit).
        sqe.buf_index = slot as u16 & self.buf_index_mask;
        sqe.user_data = u64::from(slot) | u64::from(op.len) << 32;
        sqe
    }

    /// Any SQE from the crate's builders (the templates, and fsync).
    fn entry(&mut self, slot: u32, op: &IoOp) -> squeue::Entry {
        let ptr = self.bufs.slot_ptr(slot);
        let fd = self.file.as_raw_fd();
        // The buffer index is the slot: slots are < queue depth <= 65536 entries (io_uring's limit).
        let idx = slot as u16;
        let e = match (op.dir, self.registered.fixed_buffers, self.registered.registered_file) {
            (Direction::Read, true, true) => {
                opcode::ReadFixed::new(types::Fixed(0), ptr, op.len, idx).offset(op.offset).build()
            }
            (Direction::Read, true, false) => {
                opcode::ReadFixed::new(types::Fd(fd), ptr, op.len, idx).offset(op.offset).build()
            }
            (Direction::Read, false, true) => opcode::Read::new(types::Fixed(0), ptr, op.len).offset(op.offset).build(),
            (Direction::Read, false, false) => opcode::Read::new(types::Fd(fd), ptr, op.len).offset(op.offset).build(),
            (Direction::Write, true, true) => {
                opcode::WriteFixed::new(types::Fixed(0), ptr, op.len, idx).offset(op.offset).build()
            }
            (Direction::Write, true, false) => {
                opcode::WriteFixed::new(types::Fd(fd), ptr, op.len, idx).offset(op.offset).build()
            }
            (Direction::Write, false, true) => {
                opcode::Write::new(types::Fixed(0), ptr, op.len).offset(op.offset).build()
            }
            (Direction::Write, false, false) => {
                opcode::Write::new(types::Fd(fd), ptr, op.len).offset(op.offset).build()
            }
            (Direction::Flush, _, true) => opcode::Fsync::new(types::Fixed(0)).build(),
            (Direction::Flush, _, false) => opcode::Fsync::new(types::Fd(fd)).build(),
            (Direction::Trim | Direction::WriteZeroes, ..) => {
                unreachable!("queue carries out trims and write-zeroes itself")
            }
        };
        e.user_data(u64::from(slot) | u64::from(op.len) << 32)
    }
}

/// The kernel's `struct io_uring_sqe` (64 bytes) with the fields of a read or write named, so that
/// an I/O fills in its own fields on a copy of a template instead of building its SQE anew.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RawSqe {
    opcode: u8,
    flags: u8,
    ioprio: u16,
    fd: i32,
    off: u64,
    addr: u64,
    len: u32,
    rw_flags: u32,
    user_data: u64,
    buf_index: u16,
    personality: u16,
    splice_fd_in: u32,
    addr3: u64,
    pad: u64,
}

const _: () = assert!(size_of::<RawSqe>() == size_of::<squeue::Entry>() && size_of::<RawSqe>() == 64);
const _: () = assert!(align_of::<RawSqe>() == align_of::<squeue::Entry>());

impl RawSqe {
    const ZERO: RawSqe = RawSqe {
        opcode: 0,
        flags: 0,
        ioprio: 0,
        fd: 0,
        off: 0,
        addr: 0,
        len: 0,
        rw_flags: 0,
        user_data: 0,
        buf_index: 0,
        personality: 0,
        splice_fd_in: 0,
        addr3: 0,
        pad: 0,
    };

    fn from_entry(e: squeue::Entry) -> RawSqe {
        // SAFETY: `squeue::Entry` is `#[repr(C)]` around the kernel's 64-byte `io_uring_sqe`, whose
        // layout RawSqe repeats field for field (sizes checked above, offsets by the test
        // `raw_sqe_is_the_kernels_layout`); both are plain integers, valid for any bits.
        unsafe { std::mem::transmute::<squeue::Entry, RawSqe>(e) }
    }

    #[cfg(test)]
    fn into_entry(self) -> squeue::Entry {
        // SAFETY: as in `from_entry`, the other way: every bit pattern is a valid `io_uring_sqe`.
        unsafe { std::mem::transmute::<RawSqe, squeue::Entry>(self) }
    }

    /// The same 64 bytes seen as the crate's entry, without a copy.
    #[inline(always)]
    fn as_entry(&self) -> &squeue::Entry {
        // SAFETY: as in `from_entry`; both types are 8-byte aligned (checked above), so the
        // reference is aligned, and it borrows `self` for its lifetime.
        unsafe { &*(self as *const RawSqe).cast::<squeue::Entry>() }
    }
}

#[cold]
fn runtime(what: &'static str, source: io::Error) -> EngineError {
    EngineError::Runtime { engine: NAME, what, source }
}

impl Engine for UringEngine {
    #[inline(always)]
    fn queue(&mut self, slot: u32, op: &IoOp) -> Result<Queued, EngineError> {
        debug_assert!(op.len as usize <= self.bufs.slot_bytes());
        if matches!(op.dir, Direction::Trim | Direction::WriteZeroes) {
            let r = self.ops.run(op);
            self.finished.push(slot, r);
            return Ok(Queued::Ok);
        }
        let pushed = if matches!(op.dir, Direction::Read | Direction::Write) {
            let sqe = self.rw_sqe(slot, op);
            // SAFETY: the entry points at `slot`'s buffer, which the engine owns and which stays
            // untouched until this slot's completion is reaped (the caller never reuses a slot in
            // flight); the fd or fixed-file index stays valid for the ring's lifetime.
            unsafe { self.ring.push(sqe.as_entry()) }
        } else {
            let entry = self.entry(slot, op);
            // SAFETY: as above (an fsync points at no buffer).
            unsafe { self.ring.push(&entry) }
        };
        if pushed { Ok(Queued::Ok) } else { Ok(Queued::Busy) }
    }

    #[inline]
    fn submit(&mut self) -> Result<(), EngineError> {
        self.ring.submit().map_err(|e| runtime("io_uring_enter (submit)", e))
    }

    #[inline]
    fn poll<F: FnMut(u32, Result<(), IoError>)>(&mut self, max: u32, mut done: F) -> Result<u32, EngineError> {
        let early = if self.finished.is_empty() { 0 } else { self.finished.drain(max, &mut done) };
        let reaped = self
            .ring
            .reap(max - early, |cqe| {
                let (slot, expected) = (cqe.user_data() as u32, (cqe.user_data() >> 32) as u32);
                done(slot, judge(cqe.result(), expected));
            })
            .map_err(|e| runtime("io_uring_enter (reap)", e))?;
        Ok(early + reaped)
    }

    fn wait(&mut self) -> Result<(), EngineError> {
        self.ring.wait().map_err(|e| runtime("io_uring_enter (wait)", e))
    }

    fn progress(&mut self) -> Result<(), EngineError> {
        self.ring.progress().map_err(|e| runtime("io_uring_enter (progress)", e))
    }

    fn interrupt_driven(&self) -> bool {
        self.ring.can_wait_for()
    }

    fn wait_for(&mut self, timeout_ns: u64) -> Result<(), EngineError> {
        self.ring
            .wait_for(std::time::Duration::from_nanos(timeout_ns))
            .map_err(|e| runtime("io_uring_enter (wait with a timeout)", e))
    }

    fn unsent(&mut self) -> u32 {
        self.ring.unsent()
    }

    fn batches(&self) -> Option<crate::batches::BatchCounts> {
        Some(self.ring.batches)
    }

    fn slot_buf(&mut self, slot: u32) -> &mut [u8] {
        self.bufs.slot_mut(slot)
    }

    fn info(&self) -> EngineInfo {
        EngineInfo { name: NAME.into(), options: self.registered.describe(&self.ring, []) }
    }
}

/// A read or write's result: an errno, a short transfer, or all `expected` bytes.
#[inline]
pub(crate) fn judge(res: i32, expected: u32) -> Result<(), IoError> {
    if res < 0 {
        Err(IoError::Errno { errno: -res })
    } else if (res as u32) < expected {
        Err(IoError::ShortTransfer { expected, done: res as u32 })
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek, SeekFrom, Write};

    /// io_uring may be disabled (kernel.io_uring_disabled, seccomp: EPERM; a kernel without it:
    /// ENOSYS): say so rather than fail. Any other failure to make a ring fails the test.
    fn uring_available() -> bool {
        match io_uring::IoUring::new(2) {
            Ok(_) => true,
            Err(e) if matches!(e.raw_os_error(), Some(libc::EPERM | libc::ENOSYS)) => {
                crate::skip::skip(crate::skip::Need::IoUring, &format!("io_uring unavailable here ({e})"));
                false
            }
            Err(e) => panic!("cannot make an io_uring of 2 entries: {e}"),
        }
    }

    fn temp_file(bytes: usize) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
        let path = dir.path().join("target.dat");
        let mut f = File::create(&path).unwrap();
        let data: Vec<u8> = (0..bytes).map(|i| (i / 4096) as u8).collect();
        f.write_all(&data).unwrap();
        (dir, path)
    }

    fn run_one(e: &mut UringEngine, op: IoOp) -> Result<(), IoError> {
        assert_eq!(e.queue(0, &op).unwrap(), Queued::Ok);
        e.submit().unwrap();
        let mut got = None;
        while got.is_none() {
            if e.poll(1, |s, r| got = Some((s, r))).unwrap() == 0 {
                e.wait().unwrap();
            }
        }
        let (slot, r) = got.unwrap();
        assert_eq!(slot, 0);
        r
    }

    #[test]
    fn writes_then_reads_back() {
        if !uring_available() {
            return;
        }
        let (_dir, path) = temp_file(1 << 20);
        let b = UringBuilder {
            path: path.clone(),
            writes: true,
            direct: true,
            options: UringOptions::default(),
            buffer_seed: 5,
        };
        let mut e = b.build(0, 4, 4096).unwrap();
        let payload = e.bufs.slot(0)[..4096].to_vec();
        run_one(&mut e, IoOp { dir: Direction::Write, offset: 8192, len: 4096, prio: IoPrio::NONE }).unwrap();
        e.bufs.slot_mut(0).fill(0);
        run_one(&mut e, IoOp { dir: Direction::Read, offset: 8192, len: 4096, prio: IoPrio::NONE }).unwrap();
        assert_eq!(&e.bufs.slot(0)[..4096], &payload[..]);
        let mut f = File::open(&path).unwrap();
        let mut on_disk = vec![0u8; 4096];
        f.seek(SeekFrom::Start(8192)).unwrap();
        f.read_exact(&mut on_disk).unwrap();
        assert_eq!(on_disk, payload);
    }

    /// An I/O's priority goes in its SQE's ioprio (fio's io_uring sends the job's and cmdprio's
    /// there), which the kernel takes for a read (the idle class needs no privilege).
    #[test]
    fn an_io_priority_goes_in_the_sqe() {
        if !uring_available() {
            return;
        }
        let (_dir, path) = temp_file(1 << 16);
        let b = UringBuilder { path, writes: false, direct: true, options: UringOptions::default(), buffer_seed: 5 };
        let mut e = b.build(0, 2, 4096).unwrap();
        let idle2 = IoPrio { value: (3 << 13) | 2 };
        let op = IoOp { dir: Direction::Read, offset: 4096, len: 4096, prio: idle2 };
        assert_eq!(e.rw_sqe(1, &op).ioprio, (3 << 13) | 2);
        assert_eq!(e.rw_sqe(1, &IoOp { prio: IoPrio::NONE, ..op }).ioprio, 0);
        run_one(&mut e, op).unwrap();
    }

    #[test]
    fn reads_past_the_end_are_short() {
        if !uring_available() {
            return;
        }
        let (_dir, path) = temp_file(8192);
        let b = UringBuilder { path, writes: false, direct: true, options: UringOptions::default(), buffer_seed: 5 };
        let mut e = b.build(0, 1, 8192).unwrap();
        let r = run_one(&mut e, IoOp { dir: Direction::Read, offset: 4096, len: 8192, prio: IoPrio::NONE });
        assert_eq!(r, Err(IoError::ShortTransfer { expected: 8192, done: 4096 }));
    }

    /// RawSqe names the kernel's fields where the crate's builders put them.
    #[test]
    fn raw_sqe_is_the_kernels_layout() {
        let e = opcode::WriteFixed::new(types::Fd(7), 0x1000 as *const u8, 4096, 9)
            .offset(1 << 40)
            .ioprio(3)
            .rw_flags(5)
            .build()
            .user_data(0xabcd);
        let raw = RawSqe::from_entry(e);
        assert_eq!(raw.opcode, opcode::WriteFixed::CODE);
        assert_eq!((raw.fd, raw.ioprio, raw.flags), (7, 3, 0));
        assert_eq!((raw.addr, raw.len, raw.off, raw.rw_flags), (0x1000, 4096, 1 << 40, 5));
        assert_eq!((raw.buf_index, raw.user_data), (9, 0xabcd));
        assert_eq!(RawSqe::from_entry(raw.into_entry()), raw);
        let fixed = RawSqe::from_entry(opcode::Read::new(types::Fixed(2), std::ptr::null_mut(), 0).build());
        assert_eq!((fixed.fd, fixed.flags), (2, squeue::Flags::FIXED_FILE.bits()));
    }

    /// A template with an I/O's fields filled in is the SQE the builders make for that I/O, with
    /// and without registrations.
    #[test]
    fn templates_make_what_the_builders_make() {
        if !uring_available() {
            return;
        }
        let (_dir, path) = temp_file(1 << 16);
        for (fixed_buffers, registered_file) in [(true, true), (true, false), (false, true), (false, false)] {
            let options = UringOptions { fixed_buffers, registered_file, ..UringOptions::default() };
            let b = UringBuilder { path: path.clone(), writes: true, direct: true, options, buffer_seed: 5 };
            let mut e = b.build(0, 4, 8192).unwrap();
            for dir in [Direction::Read, Direction::Write] {
                for (slot, offset, len) in [(0, 0, 4096), (3, 1 << 33, 8192), (2, 512, 512)] {
                    let op = IoOp { dir, offset, len, prio: IoPrio::NONE };
                    let built = RawSqe::from_entry(e.entry(slot, &op));
                    assert_eq!(e.rw_sqe(slot, &op), built, "{op:?} slot {slot}");
                    assert_eq!(RawSqe::from_entry(e.rw_sqe(slot, &op).as_entry().clone()), built);
                }
            }
        }
    }

    #[test]
    fn unregistered_mode_works_too() {
        if !uring_available() {
            return;
        }
        let (_dir, path) = temp_file(1 << 16);
        let options = UringOptions { fixed_buffers: false, registered_file: false, ..UringOptions::default() };
        let b = UringBuilder { path, writes: false, direct: true, options, buffer_seed: 5 };
        let mut e = b.build(0, 2, 4096).unwrap();
        run_one(&mut e, IoOp { dir: Direction::Read, offset: 4096, len: 4096, prio: IoPrio::NONE }).unwrap();
        assert_eq!(e.bufs.slot(0)[0], 1);
        assert!(e.info().to_string().contains("fixedbufs=0"));
    }
}

//! Trims, write-zeroes and flushes for the kernel engines that have no asynchronous form of them,
//! and the small queue their results wait in for the next `poll`.
//!
//! A block device trims with the `BLKDISCARD` ioctl and zeroes with `BLKZEROOUT`; a regular file
//! punches a hole (`fallocate(PUNCH_HOLE | KEEP_SIZE)`) or zeroes a range
//! (`fallocate(ZERO_RANGE | KEEP_SIZE)`); a flush is `fsync`. These calls are synchronous, so an
//! engine makes them inside `queue` and hands the result back from its next `poll`, as fio's
//! asynchronous engines do with trims (`FIO_ASYNCIO_SYNC_TRIM`). Each such I/O keeps its own stamps:
//! the issue stamp is read before `queue`, the completion stamp when `poll` hands it back, so its
//! latency includes the call. This module does not decide which engine uses which path; reads and
//! writes never come here.

use crate::io::{Direction, IoError, IoOp};
use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::FileTypeExt;

/// `_IO(0x12, 119)`: discard a byte range of a block device (`u64 [start, len]`).
const BLKDISCARD: libc::c_ulong = 0x1277;
/// `_IO(0x12, 127)`: zero a byte range of a block device (`u64 [start, len]`).
const BLKZEROOUT: libc::c_ulong = 0x127f;

/// How one target takes the operations without data.
pub struct RangeOps {
    fd: RawFd,
    block: bool,
}

impl RangeOps {
    /// For `file`, which the engine keeps open for as long as this lives.
    ///
    /// # Errors
    /// When `fstat` fails.
    pub fn new(file: &File) -> io::Result<RangeOps> {
        Ok(RangeOps { fd: file.as_raw_fd(), block: file.metadata()?.file_type().is_block_device() })
    }

    /// Carries out a trim, a write-zeroes or a flush, synchronously.
    #[inline]
    pub fn run(&self, op: &IoOp) -> Result<(), IoError> {
        let range = [op.offset, u64::from(op.len)];
        let rc = match (op.dir, self.block) {
            // SAFETY: the ioctls read two u64s from `range`, which lives across the call; `fd` is
            // the engine's open file.
            (Direction::Trim, true) => unsafe { libc::ioctl(self.fd, BLKDISCARD, range.as_ptr()) },
            // SAFETY: as above.
            (Direction::WriteZeroes, true) => unsafe { libc::ioctl(self.fd, BLKZEROOUT, range.as_ptr()) },
            (Direction::Trim, false) => {
                return self.fallocate(libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, op);
            }
            (Direction::WriteZeroes, false) => {
                return self.fallocate(libc::FALLOC_FL_ZERO_RANGE | libc::FALLOC_FL_KEEP_SIZE, op);
            }
            // SAFETY: `fd` is the engine's open file.
            (Direction::Flush, _) => unsafe { libc::fsync(self.fd) },
            (Direction::Read | Direction::Write, _) => return Err(IoError::Errno { errno: libc::EINVAL }),
        };
        if rc < 0 { Err(IoError::Errno { errno: last_errno() }) } else { Ok(()) }
    }

    /// `fallocate(mode)` over `op`'s range of a regular file: a trim's hole, a write-zeroes' zeroed
    /// range, and each I/O of the falloc engine (`psync`).
    #[inline]
    pub fn fallocate(&self, mode: libc::c_int, op: &IoOp) -> Result<(), IoError> {
        let Ok(offset) = libc::off_t::try_from(op.offset) else { return Err(IoError::Errno { errno: libc::EFBIG }) };
        // SAFETY: fallocate takes plain integers; `fd` is the engine's open file.
        let rc = unsafe { libc::fallocate(self.fd, mode, offset, libc::off_t::from(op.len)) };
        if rc < 0 { Err(IoError::Errno { errno: last_errno() }) } else { Ok(()) }
    }
}

/// Asks the filesystem holding `file` whether it takes `dir` on files (a trim punches a hole, a
/// write-zeroes zeroes a range), calling `fallocate` on `len` bytes at `offset` with KEEP_SIZE: at
/// or past the file's end, or on an empty scratch file, that changes nothing anyone reads.
/// `Ok(false)` when the filesystem answers EOPNOTSUPP; other operations are always taken.
///
/// # Errors
/// Any other failure of the call (the caller decides what it means).
pub fn file_takes(file: &File, dir: Direction, offset: u64, len: u64) -> io::Result<bool> {
    let mode = match dir {
        Direction::Trim => libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
        Direction::WriteZeroes => libc::FALLOC_FL_ZERO_RANGE | libc::FALLOC_FL_KEEP_SIZE,
        Direction::Read | Direction::Write | Direction::Flush => return Ok(true),
    };
    let (offset, len) = (libc::off_t::try_from(offset), libc::off_t::try_from(len));
    let (Ok(offset), Ok(len)) = (offset, len) else { return Err(io::Error::from_raw_os_error(libc::EFBIG)) };
    // SAFETY: fallocate takes plain integers; `file` stays open across the call.
    let rc = unsafe { libc::fallocate(file.as_raw_fd(), mode, offset, len) };
    if rc == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EOPNOTSUPP) { Ok(false) } else { Err(e) }
}

#[cold]
fn last_errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

/// Results of operations finished inside `queue`, waiting for `poll`. Its capacity is the queue
/// depth, and a slot holds one I/O at a time, so pushing never allocates.
pub struct Finished {
    queue: VecDeque<(u32, Result<(), IoError>)>,
}

impl Finished {
    pub fn new(queue_depth: u32) -> Finished {
        Finished { queue: VecDeque::with_capacity(queue_depth as usize) }
    }

    #[inline]
    pub fn push(&mut self, slot: u32, r: Result<(), IoError>) {
        self.queue.push_back((slot, r));
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Hands up to `max` results to `done`, oldest first; returns how many.
    #[inline]
    pub fn drain(&mut self, max: u32, done: &mut impl FnMut(u32, Result<(), IoError>)) -> u32 {
        let mut n = 0;
        while n < max {
            let Some((slot, r)) = self.queue.pop_front() else { break };
            done(slot, r);
            n += 1;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::IoPrio;
    use std::io::Write;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn probing_past_the_end_changes_nothing_and_tmpfs_zeroes_no_ranges() {
        let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
        let path = dir.path().join("p.dat");
        std::fs::write(&path, vec![0x5au8; 10_000]).unwrap();
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        let blocks = f.metadata().unwrap().blocks();
        let punch = file_takes(&f, Direction::Trim, 12_288, 4096).unwrap();
        assert!(file_takes(&f, Direction::Flush, 0, 0).unwrap(), "only trims and write-zeroes are asked about");
        assert_eq!(std::fs::read(&path).unwrap(), vec![0x5au8; 10_000], "nothing changed");
        assert_eq!(f.metadata().unwrap().blocks(), blocks, "nothing freed or allocated (punch {punch})");
        // tmpfs punches holes but zeroes no ranges (Linux 6.x): the probe says so.
        let shm = std::path::Path::new("/dev/shm");
        if !shm.is_dir() {
            crate::skip::skip(crate::skip::Need::KernelFeature, "no /dev/shm");
            return;
        }
        let t = match tempfile::tempfile_in(shm) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                crate::skip::skip(crate::skip::Need::Root, "/dev/shm is not writable");
                return;
            }
            Err(e) => panic!("cannot make a file in /dev/shm: {e}"),
        };
        assert!(file_takes(&t, Direction::Trim, 0, 4096).unwrap());
        match file_takes(&t, Direction::WriteZeroes, 0, 4096) {
            Ok(false) => {}
            Ok(true) => crate::skip::skip(crate::skip::Need::KernelFeature, "this kernel's tmpfs zeroes ranges"),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn a_file_trim_punches_a_hole_and_zeroes_read_back() {
        let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
        let path = dir.path().join("t.dat");
        let mut f = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
        f.write_all(&vec![0xa5u8; 1 << 20]).unwrap();
        f.sync_all().unwrap();
        let ops = RangeOps::new(&f).unwrap();
        let blocks = |f: &File| f.metadata().unwrap().blocks();
        let before = blocks(&f);
        match ops.run(&IoOp { dir: Direction::Trim, offset: 0, len: 512 << 10, prio: IoPrio::NONE }) {
            Err(IoError::Errno { errno: libc::EOPNOTSUPP }) => {
                crate::skip::skip(crate::skip::Need::HolePunching, "this filesystem does not punch holes");
                return;
            }
            r => r.unwrap(),
        }
        assert!(blocks(&f) < before, "the hole frees blocks: {} -> {}", before, blocks(&f));
        ops.run(&IoOp { dir: Direction::WriteZeroes, offset: 512 << 10, len: 4096, prio: IoPrio::NONE }).unwrap();
        ops.run(&IoOp { dir: Direction::Flush, offset: 0, len: 0, prio: IoPrio::NONE }).unwrap();
        let data = std::fs::read(&path).unwrap();
        assert_eq!(data.len(), 1 << 20, "KEEP_SIZE");
        assert!(data[..(512 << 10) + 4096].iter().all(|&b| b == 0));
        assert!(data[(512 << 10) + 4096..].iter().all(|&b| b == 0xa5));
        assert_eq!(
            ops.run(&IoOp { dir: Direction::Read, offset: 0, len: 4096, prio: IoPrio::NONE }),
            Err(IoError::Errno { errno: libc::EINVAL })
        );
    }

    #[test]
    fn finished_results_come_back_in_order_and_at_most_max() {
        let mut f = Finished::new(4);
        f.push(3, Ok(()));
        f.push(1, Err(IoError::Errno { errno: 5 }));
        f.push(2, Ok(()));
        let mut got = Vec::new();
        assert_eq!(f.drain(2, &mut |s, r| got.push((s, r))), 2);
        assert_eq!(got, vec![(3, Ok(())), (1, Err(IoError::Errno { errno: 5 }))]);
        assert_eq!(f.drain(8, &mut |s, _| assert_eq!(s, 2)), 1);
        assert!(f.is_empty());
    }
}

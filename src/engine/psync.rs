//! `pread`/`pwrite` with O_DIRECT: one synchronous I/O at a time, the simplest baseline (fio's
//! psync); and fio's two file-call engines built the same way, `falloc` and `ftruncate`, which
//! make each I/O a `fallocate` or an `ftruncate` on a regular file ([`SyncCall`]).
//!
//! The engine takes one I/O per submit and answers Busy to a second, so whatever queue depth the
//! worker has, one I/O is in flight; the report says `iodepth=1`. The I/O runs inside `submit` and
//! its result waits for the next `poll`. Reads and writes are the standard library's positional
//! calls; trims, write-zeroes and flushes are [`RangeOps`]' ioctls, `fallocate` and `fsync`.

use super::buf::SlotBuffers;
use super::rangeops::RangeOps;
use super::uring::judge;
use super::{Engine, EngineBuilder, EngineError, EngineInfo, Queued, Sends};
use crate::batches::BatchCounts;
use crate::io::IoError;
use crate::io::{Direction, IoOp};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

/// Which call carries each I/O. fio's engines of the same names do the same: `falloc` allocates a
/// read's range with KEEP_SIZE, a write's growing the file, and punches a trim's hole; `ftruncate`
/// sets the file's length to a write's offset and fails anything else with EINVAL. Both take a
/// flush as an `fsync`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncCall {
    /// `pread`/`pwrite` (fio's psync).
    Transfer,
    /// `fallocate` (fio's falloc).
    Fallocate,
    /// `ftruncate` (fio's ftruncate).
    Ftruncate,
}

impl SyncCall {
    pub fn name(self) -> &'static str {
        match self {
            SyncCall::Transfer => "psync",
            SyncCall::Fallocate => "falloc",
            SyncCall::Ftruncate => "ftruncate",
        }
    }
}

pub struct PsyncBuilder {
    pub path: PathBuf,
    pub writes: bool,
    /// O_DIRECT; false: through the page cache (`--buffered`, fio's direct=0).
    pub direct: bool,
    pub buffer_seed: u64,
    pub call: SyncCall,
}

impl EngineBuilder for PsyncBuilder {
    type Engine = PsyncEngine;

    fn build(&self, worker: usize, _queue_depth: u32, max_io_bytes: u32) -> Result<PsyncEngine, EngineError> {
        // fallocate and ftruncate need a writable file whatever the I/O's direction.
        let writes = self.writes || self.call != SyncCall::Transfer;
        let file = super::open_target(&self.path, writes, self.direct)?;
        let name = self.call.name();
        let ops = RangeOps::new(&file).map_err(|source| EngineError::Setup { engine: name, what: "fstat", source })?;
        if self.call != SyncCall::Transfer && !file.metadata().is_ok_and(|m| m.is_file()) {
            return Err(EngineError::Setup {
                engine: name,
                what: "open a regular file (it changes a file's allocation or length, never a device's)",
                source: io::Error::from_raw_os_error(libc::EINVAL),
            });
        }
        Ok(PsyncEngine {
            file,
            ops,
            call: self.call,
            bufs: SlotBuffers::new(1, max_io_bytes as usize, self.buffer_seed ^ worker as u64),
            staged: None,
            done: None,
            batches: BatchCounts::default(),
        })
    }
}

/// One worker's file and single buffer.
pub struct PsyncEngine {
    file: File,
    ops: RangeOps,
    call: SyncCall,
    /// One buffer: only one I/O is ever in flight, whichever slot it is for.
    bufs: SlotBuffers,
    staged: Option<(u32, IoOp)>,
    done: Option<(u32, Result<(), IoError>)>,
    /// One I/O per call, submitted and completed: fio marks a synchronous engine's so.
    batches: BatchCounts,
}

impl PsyncEngine {
    #[inline]
    fn transfer(&mut self, op: &IoOp) -> Result<(), IoError> {
        match self.call {
            SyncCall::Transfer => {}
            SyncCall::Fallocate => return self.fallocate(op),
            SyncCall::Ftruncate => return self.ftruncate(op),
        }
        let len = op.len as usize;
        loop {
            let buf = &mut self.bufs.slot_mut(0)[..len];
            let r = match op.dir {
                Direction::Read => self.file.read_at(buf, op.offset),
                Direction::Write => self.file.write_at(buf, op.offset),
                Direction::Trim | Direction::WriteZeroes | Direction::Flush => return self.ops.run(op),
            };
            match r {
                Ok(n) => return judge(n as i32, op.len),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(IoError::Errno { errno: e.raw_os_error().unwrap_or(libc::EIO) }),
            }
        }
    }
}

impl PsyncEngine {
    /// fio's falloc: a read allocates its range without growing the file, a write allocates and
    /// grows it, a trim punches a hole; a write-zeroes zeroes the range and a flush syncs, as the
    /// other kernel engines do them.
    fn fallocate(&self, op: &IoOp) -> Result<(), IoError> {
        let mode = match op.dir {
            Direction::Read => libc::FALLOC_FL_KEEP_SIZE,
            Direction::Write => 0,
            Direction::Trim | Direction::WriteZeroes | Direction::Flush => return self.ops.run(op),
        };
        self.ops.fallocate(mode, op)
    }

    /// fio's ftruncate: a write sets the file's length to its offset, a flush syncs, and any
    /// other I/O fails with EINVAL, as fio's engine fails it.
    fn ftruncate(&self, op: &IoOp) -> Result<(), IoError> {
        match op.dir {
            Direction::Write => self
                .file
                .set_len(op.offset)
                .map_err(|e| IoError::Errno { errno: e.raw_os_error().unwrap_or(libc::EIO) }),
            Direction::Flush => self.ops.run(op),
            Direction::Read | Direction::Trim | Direction::WriteZeroes => Err(IoError::Errno { errno: libc::EINVAL }),
        }
    }
}

impl Engine for PsyncEngine {
    #[inline]
    fn queue(&mut self, slot: u32, op: &IoOp) -> Result<Queued, EngineError> {
        if self.staged.is_some() || self.done.is_some() {
            return Ok(Queued::Busy);
        }
        self.staged = Some((slot, *op));
        Ok(Queued::Ok)
    }

    #[inline]
    fn submit(&mut self) -> Result<(), EngineError> {
        if let Some((slot, op)) = self.staged.take() {
            let r = self.transfer(&op);
            self.done = Some((slot, r));
            self.batches.submitted(1);
            self.batches.completed(1);
        }
        Ok(())
    }

    #[inline]
    fn poll<F: FnMut(u32, Result<(), IoError>)>(&mut self, max: u32, mut done: F) -> Result<u32, EngineError> {
        match self.done.take() {
            Some((slot, r)) if max > 0 => {
                done(slot, r);
                Ok(1)
            }
            other => {
                self.done = other;
                Ok(0)
            }
        }
    }

    /// Its I/O runs inside `submit` and nothing is ever in flight between two calls: a paced
    /// worker sleeps until its next I/O is due.
    fn interrupt_driven(&self) -> bool {
        true
    }

    fn wait_for(&mut self, timeout_ns: u64) -> Result<(), EngineError> {
        self.submit()?;
        if self.done.is_none() {
            std::thread::sleep(std::time::Duration::from_nanos(timeout_ns));
        }
        Ok(())
    }

    fn slot_buf(&mut self, slot: u32) -> &mut [u8] {
        // One I/O at a time: every slot is slot 0.
        let _ = slot;
        self.bufs.slot_mut(0)
    }

    fn max_in_flight(&self) -> u32 {
        1
    }

    fn sends(&self) -> Sends {
        Sends::Synchronous
    }

    fn batches(&self) -> Option<BatchCounts> {
        Some(self.batches)
    }

    fn info(&self) -> EngineInfo {
        let calls = match self.call {
            SyncCall::Transfer => "1 (pread/pwrite are synchronous)",
            SyncCall::Fallocate => "1 (fallocate is synchronous)",
            SyncCall::Ftruncate => "1 (ftruncate is synchronous)",
        };
        EngineInfo {
            name: self.call.name().into(),
            options: vec![("iodepth".into(), calls.into()), ("direct".into(), "1".into())],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::IoPrio;
    use std::io::Write;

    #[test]
    fn one_at_a_time_reads_and_writes() {
        let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
        let path = dir.path().join("p.dat");
        let data: Vec<u8> = (0..65536u32).map(|i| (i / 4096) as u8).collect();
        File::create(&path).unwrap().write_all(&data).unwrap();
        let mut e =
            PsyncBuilder { path: path.clone(), writes: true, direct: true, buffer_seed: 3, call: SyncCall::Transfer }
                .build(0, 8, 4096)
                .unwrap();
        let read = IoOp { dir: Direction::Read, offset: 8192, len: 4096, prio: IoPrio::NONE };
        assert_eq!(e.queue(5, &read).unwrap(), Queued::Ok);
        assert_eq!(e.queue(6, &read).unwrap(), Queued::Busy, "one I/O at a time");
        e.submit().unwrap();
        let mut got = Vec::new();
        assert_eq!(e.poll(4, |s, r| got.push((s, r))).unwrap(), 1);
        assert_eq!(got, vec![(5, Ok(()))]);
        assert!(e.bufs.slot(0)[..4096].iter().all(|&b| b == 2));
        assert_eq!(e.poll(4, |_, _| panic!("nothing left")).unwrap(), 0);

        e.bufs.slot_mut(0).fill(0xab);
        e.queue(1, &IoOp { dir: Direction::Write, offset: 4096, len: 4096, prio: IoPrio::NONE }).unwrap();
        e.submit().unwrap();
        e.poll(1, |_, r| assert_eq!(r, Ok(()))).unwrap();
        let on_disk = std::fs::read(&path).unwrap();
        assert!(on_disk[4096..8192].iter().all(|&b| b == 0xab));

        // Past the end: a short read.
        let mut big = PsyncBuilder { path, writes: false, direct: true, buffer_seed: 3, call: SyncCall::Transfer }
            .build(0, 1, 8192)
            .unwrap();
        big.queue(0, &IoOp { dir: Direction::Read, offset: 65536 - 4096, len: 8192, prio: IoPrio::NONE }).unwrap();
        big.submit().unwrap();
        big.poll(1, |_, r| assert_eq!(r, Err(IoError::ShortTransfer { expected: 8192, done: 4096 }))).unwrap();
    }

    fn run_one(e: &mut PsyncEngine, dir: Direction, offset: u64, len: u32) -> Result<(), IoError> {
        e.queue(0, &IoOp { dir, offset, len, prio: IoPrio::NONE }).unwrap();
        e.submit().unwrap();
        let mut got = None;
        assert_eq!(e.poll(1, |_, r| got = Some(r)).unwrap(), 1);
        got.unwrap()
    }

    fn shape(path: &std::path::Path) -> (u64, u64) {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).unwrap();
        (m.len(), m.blocks() * 512)
    }

    /// fio's falloc: a read allocates without growing the file, a write allocates and grows it, a
    /// trim punches a hole; each one call, one at a time.
    #[test]
    fn falloc_allocates_grows_and_punches_as_fios() {
        let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
        let path = dir.path().join("f.dat");
        File::create(&path).unwrap();
        let b = PsyncBuilder {
            path: path.clone(),
            writes: false,
            direct: false,
            buffer_seed: 1,
            call: SyncCall::Fallocate,
        };
        let mut e = b.build(0, 8, 65536).unwrap();
        assert_eq!(run_one(&mut e, Direction::Read, 0, 65536), Ok(()), "a read-only job's fd still allocates");
        assert_eq!(shape(&path), (0, 65536), "a read allocates with KEEP_SIZE");
        assert_eq!(run_one(&mut e, Direction::Write, 65536, 65536), Ok(()));
        assert_eq!(shape(&path), (131072, 131072), "a write allocates and grows the file");
        assert_eq!(
            e.queue(1, &IoOp { dir: Direction::Read, offset: 0, len: 4096, prio: IoPrio::NONE }).unwrap(),
            Queued::Ok
        );
        assert_eq!(
            e.queue(2, &IoOp { dir: Direction::Read, offset: 0, len: 4096, prio: IoPrio::NONE }).unwrap(),
            Queued::Busy
        );
        e.submit().unwrap();
        e.poll(1, |_, _| {}).unwrap();
        if run_one(&mut e, Direction::Trim, 0, 65536) == Err(IoError::Errno { errno: libc::EOPNOTSUPP }) {
            return; // this filesystem punches no holes
        }
        assert_eq!(shape(&path), (131072, 65536), "a trim punches a hole, keeping the length");
        assert_eq!(e.info().name, "falloc");
    }

    /// fio's ftruncate: a write sets the file's length to its offset (not its end); a read fails
    /// with EINVAL, as fio's engine fails it.
    #[test]
    fn ftruncate_sets_the_length_to_each_writes_offset() {
        let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
        let path = dir.path().join("t.dat");
        File::create(&path).unwrap().write_all(&[1u8; 8192]).unwrap();
        let b =
            PsyncBuilder { path: path.clone(), writes: true, direct: true, buffer_seed: 1, call: SyncCall::Ftruncate };
        let mut e = b.build(0, 1, 4096).unwrap();
        assert_eq!(run_one(&mut e, Direction::Write, 1 << 20, 4096), Ok(()));
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 1 << 20);
        assert_eq!(run_one(&mut e, Direction::Write, 4096, 4096), Ok(()));
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 4096);
        assert_eq!(run_one(&mut e, Direction::Read, 0, 4096), Err(IoError::Errno { errno: libc::EINVAL }));
        assert_eq!(run_one(&mut e, Direction::Flush, 0, 0), Ok(()));
        assert_eq!(e.info().name, "ftruncate");
    }

    /// The file-call engines change regular files only: a device (here /dev/null) is refused when
    /// the engine is built, before any call.
    #[test]
    fn file_call_engines_refuse_anything_but_a_regular_file() {
        for call in [SyncCall::Fallocate, SyncCall::Ftruncate] {
            let b = PsyncBuilder { path: "/dev/null".into(), writes: true, direct: false, buffer_seed: 1, call };
            let e = b.build(0, 1, 4096).err().expect("/dev/null is not a regular file");
            assert!(e.to_string().contains("regular file"), "{e}");
        }
    }

    /// Through the page cache (fio's direct=0) an I/O need not be whole logical blocks, which
    /// O_DIRECT refuses.
    #[test]
    fn buffered_io_takes_sizes_o_direct_refuses() {
        let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
        let path = dir.path().join("b.dat");
        File::create(&path).unwrap().write_all(&[7u8; 8192]).unwrap();
        let read = IoOp { dir: Direction::Read, offset: 100, len: 1000, prio: IoPrio::NONE };
        let mut got = Vec::new();
        for direct in [false, true] {
            let mut e =
                PsyncBuilder { path: path.clone(), writes: false, direct, buffer_seed: 3, call: SyncCall::Transfer }
                    .build(0, 1, 4096)
                    .unwrap();
            e.queue(0, &read).unwrap();
            e.submit().unwrap();
            e.poll(1, |_, r| got.push(r.is_ok())).unwrap();
            if !direct {
                assert!(e.bufs.slot(0)[..1000].iter().all(|&b| b == 7));
            }
        }
        assert_eq!(got, [true, false], "buffered reads 1000 bytes at offset 100; O_DIRECT refuses them");
    }
}

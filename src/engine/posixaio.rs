//! POSIX AIO (`aio_read`/`aio_write`/`aio_fsync`, reaped with `aio_error`/`aio_return` and
//! `aio_suspend`): fio's posixaio engine, on the C library's implementation (glibc runs each request
//! on helper threads of its own, in the process, and takes one request at a time per file
//! descriptor).
//!
//! One `aiocb` per slot, allocated once and never moved: the C library's threads write a request's
//! result into its block while it is in flight. Each read, write or flush goes to the C library as
//! it is queued (fio's posixaio has no commit step), so `submit` has nothing to do. `poll` asks
//! `aio_error` of each slot in flight and hands back those no longer in progress; `wait` sleeps in
//! `aio_suspend` on the in-flight blocks until one finishes. A flush is `aio_fsync(O_SYNC)`, as fio
//! makes it. Trims and write-zeroes have no POSIX AIO form: like fio's engine (`FIO_ASYNCIO_SYNC_TRIM`),
//! one waits until nothing is in flight (the engine answers Busy until then), then runs
//! synchronously in `queue` ([`RangeOps`]) and its result comes back from the next `poll`.

use super::buf::SlotBuffers;
use super::rangeops::{Finished, RangeOps};
use super::{Engine, EngineBuilder, EngineError, EngineInfo, Queued, Sends};
use crate::batches::BatchCounts;
use crate::io::{Direction, IoError, IoOp};
use std::cell::UnsafeCell;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

const NAME: &str = "posixaio";

pub struct PosixAioBuilder {
    pub path: PathBuf,
    pub writes: bool,
    /// O_DIRECT; false: through the page cache (`--buffered`, fio's direct=0).
    pub direct: bool,
    pub buffer_seed: u64,
}

impl EngineBuilder for PosixAioBuilder {
    type Engine = PosixAioEngine;

    fn build(&self, worker: usize, queue_depth: u32, max_io_bytes: u32) -> Result<PosixAioEngine, EngineError> {
        let file = super::open_target(&self.path, self.writes, self.direct)?;
        let ops = RangeOps::new(&file).map_err(|source| EngineError::Setup { engine: NAME, what: "fstat", source })?;
        let qd = queue_depth as usize;
        let fd = file.as_raw_fd();
        let cbs = (0..qd)
            .map(|_| {
                // SAFETY: aiocb is a C struct of integers and pointers, for which all zeroes is a
                // valid value (null buffer, offset 0); the fields that matter are set below or in
                // `queue`.
                let mut cb: libc::aiocb = unsafe { std::mem::zeroed() };
                cb.aio_fildes = fd;
                // Completion is learned by asking (aio_error), never by a signal or a thread.
                cb.aio_sigevent.sigev_notify = libc::SIGEV_NONE;
                UnsafeCell::new(cb)
            })
            .collect();
        Ok(PosixAioEngine {
            cbs,
            flight: Vec::with_capacity(qd),
            suspend: Vec::with_capacity(qd),
            lens: vec![0; qd],
            finished: Finished::new(queue_depth),
            bufs: SlotBuffers::new(qd, max_io_bytes as usize, self.buffer_seed ^ worker as u64),
            ops,
            batches: BatchCounts::default(),
            direct: self.direct,
            _file: file,
        })
    }
}

/// One worker's POSIX AIO requests.
pub struct PosixAioEngine {
    /// One control block per slot. Boxed so that no block moves while the C library holds it, and
    /// in `UnsafeCell`s because its threads write a request's result into its block while the
    /// engine reads the others.
    cbs: Box<[UnsafeCell<libc::aiocb>]>,
    /// The slots whose requests the C library has taken and whose results were not handed back.
    flight: Vec<u32>,
    /// The in-flight blocks, for `aio_suspend`: refilled before each sleep, never grown.
    suspend: Vec<*const libc::aiocb>,
    lens: Vec<u32>,
    /// Results of trims and write-zeroes made in `queue`, and of requests the C library refused.
    finished: Finished,
    bufs: SlotBuffers,
    ops: RangeOps,
    /// Each request is its own submission (fio marks one per queued I/O); each poll that found
    /// completions one reap.
    batches: BatchCounts,
    direct: bool,
    /// Kept open while requests are in flight: every block names its fd (drained in `Drop`).
    _file: File,
}

#[cold]
fn runtime(what: &'static str, source: io::Error) -> EngineError {
    EngineError::Runtime { engine: NAME, what, source }
}

#[cold]
fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

impl PosixAioEngine {
    /// The result of a request `aio_error` no longer reports in progress (`err`), collected with
    /// `aio_return`, which POSIX asks to be called once per finished request.
    #[inline]
    fn collect(&mut self, slot: u32, err: i32) -> Result<(), IoError> {
        let cb = self.cbs[slot as usize].get();
        // SAFETY: the block is the slot's own, its request has finished (aio_error said so), so
        // the C library no longer writes it.
        let ret = unsafe { libc::aio_return(cb) };
        let expected = self.lens[slot as usize];
        match err {
            0 if ret >= 0 && (ret as u64) < u64::from(expected) => {
                Err(IoError::ShortTransfer { expected, done: ret as u32 })
            }
            0 if ret >= 0 => Ok(()),
            0 => Err(IoError::Errno { errno: errno() }),
            // aio_error itself failed (EINVAL: not a request of ours): its errno says why.
            -1 => Err(IoError::Errno { errno: errno() }),
            e => Err(IoError::Errno { errno: e }),
        }
    }

    /// Sleeps in `aio_suspend` until one request in flight finishes, a signal arrives, or
    /// `timeout` passes (`None`: no limit).
    fn sleep(&mut self, timeout: Option<std::time::Duration>) -> Result<(), EngineError> {
        self.suspend.clear();
        for &slot in &self.flight {
            self.suspend.push(self.cbs[slot as usize].get().cast_const());
        }
        let limit = timeout
            .map(|d| libc::timespec { tv_sec: d.as_secs() as libc::time_t, tv_nsec: d.subsec_nanos() as libc::c_long });
        let limit_ptr = limit.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: `suspend` holds `len` pointers to blocks of `cbs`, which live as long as the engine;
        // `limit_ptr` is null or a live timespec. aio_suspend only reads them.
        let rc = unsafe { libc::aio_suspend(self.suspend.as_ptr(), self.suspend.len() as libc::c_int, limit_ptr) };
        if rc == 0 {
            return Ok(());
        }
        match errno() {
            // Timed out, or a signal: the caller polls and decides.
            libc::EAGAIN | libc::EINTR => Ok(()),
            e => Err(runtime("aio_suspend", io::Error::from_raw_os_error(e))),
        }
    }
}

impl Engine for PosixAioEngine {
    #[inline]
    fn queue(&mut self, slot: u32, op: &IoOp) -> Result<Queued, EngineError> {
        let outstanding = !self.flight.is_empty() || !self.finished.is_empty();
        if matches!(op.dir, Direction::Trim | Direction::WriteZeroes) {
            // fio's posixaio makes a trim only with nothing queued (it answers FIO_Q_BUSY until then).
            if outstanding {
                return Ok(Queued::Busy);
            }
            let r = self.ops.run(op);
            self.finished.push(slot, r);
            return Ok(Queued::Ok);
        }
        let buf = self.bufs.slot_ptr(slot);
        let cb = self.cbs[slot as usize].get();
        let data = op.dir != Direction::Flush;
        self.lens[slot as usize] = if data { op.len } else { 0 };
        // SAFETY: the slot is free (the caller guarantees it), so its block has no request in flight
        // and nothing else reads or writes it; its buffer has room for `op.len` bytes (the worker's
        // largest I/O) and stays untouched until the result is handed back.
        let rc = unsafe {
            (*cb).aio_buf = buf.cast();
            (*cb).aio_nbytes = op.len as usize;
            (*cb).aio_offset = op.offset as libc::off_t;
            match op.dir {
                Direction::Read => libc::aio_read(cb),
                Direction::Write => libc::aio_write(cb),
                _ => libc::aio_fsync(libc::O_SYNC, cb),
            }
        };
        if rc != 0 {
            let e = errno();
            // Out of resources for now (the C library could not allocate a request): fio's engine
            // answers Busy and tries again after a reap, which needs something to reap.
            if e == libc::EAGAIN && outstanding {
                return Ok(Queued::Busy);
            }
            self.finished.push(slot, Err(IoError::Errno { errno: e }));
            return Ok(Queued::Ok);
        }
        self.flight.push(slot);
        self.batches.submitted(1);
        Ok(Queued::Ok)
    }

    /// Each request left in `queue`.
    #[inline]
    fn submit(&mut self) -> Result<(), EngineError> {
        Ok(())
    }

    #[inline]
    fn poll<F: FnMut(u32, Result<(), IoError>)>(&mut self, max: u32, mut done: F) -> Result<u32, EngineError> {
        let mut reaped = self.finished.drain(max, &mut done);
        let mut i = 0;
        while reaped < max && i < self.flight.len() {
            let slot = self.flight[i];
            // SAFETY: the block is the slot's, in flight; aio_error reads the status the C library
            // keeps in it.
            let err = unsafe { libc::aio_error(self.cbs[slot as usize].get()) };
            if err == libc::EINPROGRESS {
                i += 1;
                continue;
            }
            let r = self.collect(slot, err);
            self.flight.swap_remove(i);
            done(slot, r);
            reaped += 1;
        }
        if reaped > 0 {
            self.batches.completed(reaped);
        }
        Ok(reaped)
    }

    fn wait(&mut self) -> Result<(), EngineError> {
        if self.finished.is_empty() && !self.flight.is_empty() {
            self.sleep(None)?;
        }
        Ok(())
    }

    fn interrupt_driven(&self) -> bool {
        true
    }

    fn wait_for(&mut self, timeout_ns: u64) -> Result<(), EngineError> {
        let timeout = std::time::Duration::from_nanos(timeout_ns);
        if !self.finished.is_empty() {
            return Ok(());
        }
        if self.flight.is_empty() {
            std::thread::sleep(timeout);
            return Ok(());
        }
        self.sleep(Some(timeout))
    }

    fn sends(&self) -> Sends {
        Sends::OnQueue
    }

    fn slot_buf(&mut self, slot: u32) -> &mut [u8] {
        self.bufs.slot_mut(slot)
    }

    fn batches(&self) -> Option<BatchCounts> {
        Some(self.batches)
    }

    fn info(&self) -> EngineInfo {
        EngineInfo { name: NAME.into(), options: vec![("direct".into(), u8::from(self.direct).to_string())] }
    }
}

impl Drop for PosixAioEngine {
    /// Waits for every request still in flight: the C library's threads write into the blocks and
    /// buffers until each finishes, so none may be freed (or its fd closed) before.
    fn drop(&mut self) {
        while !self.flight.is_empty() {
            if self.sleep(None).is_err() {
                std::thread::yield_now();
            }
            let mut i = 0;
            while i < self.flight.len() {
                // SAFETY: as in `poll`.
                let err = unsafe { libc::aio_error(self.cbs[self.flight[i] as usize].get()) };
                if err == libc::EINPROGRESS {
                    i += 1;
                } else {
                    let _ = self.collect(self.flight[i], err);
                    self.flight.swap_remove(i);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::IoPrio;
    use std::io::Write;

    fn engine(path: &std::path::Path, qd: u32, direct: bool) -> PosixAioEngine {
        PosixAioBuilder { path: path.into(), writes: true, direct, buffer_seed: 3 }.build(0, qd, 4096).unwrap()
    }

    fn op(dir: Direction, offset: u64, len: u32) -> IoOp {
        IoOp { dir, offset, len, prio: IoPrio::NONE }
    }

    /// Runs `ops` (slot i gets ops[i]) and returns each slot's result, waiting as the worker does.
    fn run_all(e: &mut PosixAioEngine, ops: &[IoOp]) -> Vec<Option<Result<(), IoError>>> {
        for (s, o) in ops.iter().enumerate() {
            assert_eq!(e.queue(s as u32, o).unwrap(), Queued::Ok);
        }
        e.submit().unwrap();
        let mut got = vec![None; ops.len()];
        let mut n = 0;
        while n < ops.len() {
            let k = e
                .poll(ops.len() as u32, |s, r| {
                    assert!(got[s as usize].is_none(), "slot {s} completed twice");
                    got[s as usize] = Some(r);
                })
                .unwrap();
            if k == 0 {
                e.wait().unwrap();
            }
            n += k as usize;
        }
        got
    }

    /// Eight writes in flight at once, a flush, then eight reads of the same blocks: the file holds
    /// each slot's pattern and each read brings back what its block's write put there.
    #[test]
    fn writes_then_reads_back_at_depth_8() {
        let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
        let path = dir.path().join("p.dat");
        File::create(&path).unwrap().write_all(&[0u8; 8 * 4096]).unwrap();
        for direct in [true, false] {
            let mut e = engine(&path, 8, direct);
            for s in 0..8u32 {
                e.slot_buf(s).fill(0x40 + s as u8 + u8::from(direct));
            }
            // Each slot writes the block 7 - slot, so a mixed-up slot shows.
            let writes: Vec<IoOp> = (0..8).map(|s| op(Direction::Write, (7 - s) * 4096, 4096)).collect();
            assert!(run_all(&mut e, &writes).iter().all(|r| *r == Some(Ok(()))));
            assert_eq!(run_all(&mut e, &[op(Direction::Flush, 0, 0)]), [Some(Ok(()))]);
            let data = std::fs::read(&path).unwrap();
            for b in 0..8usize {
                let want = 0x40 + (7 - b) as u8 + u8::from(direct);
                assert!(data[b * 4096..][..4096].iter().all(|&x| x == want), "block {b} (direct {direct})");
            }
            for s in 0..8 {
                e.slot_buf(s).fill(0);
            }
            let reads: Vec<IoOp> = (0..8).map(|s| op(Direction::Read, s * 4096, 4096)).collect();
            assert!(run_all(&mut e, &reads).iter().all(|r| *r == Some(Ok(()))));
            for s in 0..8u32 {
                let want = 0x40 + (7 - s) as u8 + u8::from(direct);
                assert!(e.slot_buf(s).iter().all(|&x| x == want), "slot {s} (direct {direct})");
            }
            let b = e.batches().unwrap();
            assert_eq!(b.since(&BatchCounts::default()), b);
            assert_eq!(e.info().to_string(), format!("posixaio (direct={})", u8::from(direct)));
        }
    }

    /// A read past the end transfers nothing, a read over it transfers part: each is its slot's
    /// error, as fio's residual makes it; a read at an offset the kernel refuses is its errno.
    #[test]
    fn short_and_failed_reads_are_the_slots_errors() {
        let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
        let path = dir.path().join("s.dat");
        File::create(&path).unwrap().write_all(&[7u8; 16384]).unwrap();
        let mut e = engine(&path, 4, false);
        let got = run_all(
            &mut e,
            &[
                op(Direction::Read, 0, 4096),
                op(Direction::Read, 14336, 4096),
                op(Direction::Read, 1 << 20, 4096),
                op(Direction::Read, u64::MAX - 4095, 4096),
            ],
        );
        assert_eq!(got[0], Some(Ok(())));
        assert_eq!(got[1], Some(Err(IoError::ShortTransfer { expected: 4096, done: 2048 })));
        assert_eq!(got[2], Some(Err(IoError::ShortTransfer { expected: 4096, done: 0 })));
        assert_eq!(got[3], Some(Err(IoError::Errno { errno: libc::EINVAL })));
    }

    /// A trim waits until nothing is in flight (Busy), then punches its hole in `queue`, as fio's
    /// posixaio makes it.
    #[test]
    fn a_trim_waits_for_the_queue_to_drain() {
        let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
        let path = dir.path().join("t.dat");
        File::create(&path).unwrap().write_all(&[9u8; 16384]).unwrap();
        let mut e = engine(&path, 2, false);
        assert_eq!(e.queue(0, &op(Direction::Read, 0, 4096)).unwrap(), Queued::Ok);
        assert_eq!(e.queue(1, &op(Direction::Trim, 4096, 4096)).unwrap(), Queued::Busy);
        while e.poll(2, |s, r| assert_eq!((s, r), (0, Ok(())))).unwrap() == 0 {
            e.wait().unwrap();
        }
        assert_eq!(e.queue(1, &op(Direction::Trim, 4096, 4096)).unwrap(), Queued::Ok);
        let mut got = None;
        assert_eq!(e.poll(2, |s, r| got = Some((s, r))).unwrap(), 1);
        match got.unwrap() {
            (1, Err(IoError::Errno { errno: libc::EOPNOTSUPP })) => {
                crate::skip::skip(crate::skip::Need::HolePunching, "this filesystem does not punch holes");
            }
            (1, Ok(())) => assert!(std::fs::read(&path).unwrap()[4096..8192].iter().all(|&b| b == 0)),
            other => panic!("{other:?}"),
        }
    }
}

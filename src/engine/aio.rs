//! Linux native AIO (`io_setup`/`io_submit`/`io_getevents`), O_DIRECT: the engine most older
//! comparisons used (fio's libaio), through the raw syscalls, so no C library is needed.
//!
//! One AIO context per worker with one `iocb` per slot; a batch goes out with one `io_submit` of
//! the staged iocb pointers. Completions are reaped with a non-blocking `io_getevents`; `wait`
//! blocks in `io_getevents` for at least one and keeps what it got for the next `poll`. A flush is
//! an `IOCB_CMD_FSYNC`; trims and write-zeroes, which AIO cannot carry, are made synchronously in
//! `queue` ([`RangeOps`]) and handed back by the next `poll` (fio's libaio does the same with trims).

use super::buf::SlotBuffers;
use super::rangeops::{Finished, RangeOps};
use super::uring::judge;
use super::{Engine, EngineBuilder, EngineError, EngineInfo, Queued};
use crate::batches::BatchCounts;
use crate::io::IoError;
use crate::io::{Direction, IoOp};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

const NAME: &str = "aio";

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;
const IOCB_CMD_FSYNC: u16 = 2;
/// `aio_abi.h`'s flag saying `aio_reqprio` holds an I/O priority.
const IOCB_FLAG_IOPRIO: u32 = 1 << 1;

/// The kernel's `struct iocb` (little-endian field order for `aio_key`/`aio_rw_flags`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct Iocb {
    aio_data: u64,
    aio_key: u32,
    aio_rw_flags: i32,
    aio_lio_opcode: u16,
    aio_reqprio: i16,
    aio_fildes: u32,
    aio_buf: u64,
    aio_nbytes: u64,
    aio_offset: i64,
    aio_reserved2: u64,
    aio_flags: u32,
    aio_resfd: u32,
}

/// The kernel's `struct io_event`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

#[cfg(target_endian = "little")]
const _: () = {
    assert!(std::mem::size_of::<Iocb>() == 64);
    assert!(std::mem::offset_of!(Iocb, aio_lio_opcode) == 16);
    assert!(std::mem::offset_of!(Iocb, aio_fildes) == 20);
    assert!(std::mem::offset_of!(Iocb, aio_offset) == 40);
    assert!(std::mem::offset_of!(Iocb, aio_flags) == 56);
    assert!(std::mem::size_of::<IoEvent>() == 32);
};

/// The aio engine's options (`aio:reap_max=2`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AioOptions {
    /// At most this many completions handed to the worker per poll before their replacements are
    /// submitted (fio's `iodepth_batch_complete_max`); `None`: the queue depth, as the uring
    /// engines' default. See [`super::VIRTIO_REAP_MAX`] for when a bound pays.
    pub reap_max: Option<u32>,
}

pub struct AioBuilder {
    pub path: PathBuf,
    pub writes: bool,
    /// O_DIRECT; false: through the page cache (`--buffered`, fio's direct=0).
    pub direct: bool,
    pub buffer_seed: u64,
    pub options: AioOptions,
}

impl EngineBuilder for AioBuilder {
    type Engine = AioEngine;

    fn build(&self, worker: usize, queue_depth: u32, max_io_bytes: u32) -> Result<AioEngine, EngineError> {
        let file = super::open_target(&self.path, self.writes, self.direct)?;
        let mut ctx: libc::c_ulong = 0;
        // SAFETY: io_setup writes the new context id into `ctx`, a live local; nothing else is read.
        let rc = unsafe { libc::syscall(libc::SYS_io_setup, queue_depth as libc::c_long, &mut ctx as *mut _) };
        if rc < 0 {
            let source = io::Error::last_os_error();
            return Err(EngineError::SetupRefused {
                engine: NAME,
                what: format!(
                    "io_setup({queue_depth}){}",
                    if source.raw_os_error() == Some(libc::EAGAIN) {
                        " (the system-wide fs.aio-max-nr is exhausted; raise it with sysctl)"
                    } else {
                        ""
                    }
                ),
                source,
            });
        }
        let qd = queue_depth as usize;
        let fd = file.as_raw_fd() as u32;
        let ops = RangeOps::new(&file).map_err(|source| EngineError::Setup { engine: NAME, what: "fstat", source })?;
        Ok(AioEngine {
            ops,
            finished: Finished::new(queue_depth),
            ctx: Context(ctx),
            iocbs: vec![Iocb { aio_fildes: fd, ..Iocb::default() }; qd],
            staged: Vec::with_capacity(qd),
            events: vec![IoEvent::default(); qd],
            ready: 0..0,
            in_flight: 0,
            bufs: SlotBuffers::new(qd, max_io_bytes as usize, self.buffer_seed ^ worker as u64),
            lens: vec![0; qd],
            reap_max: self.options.reap_max.unwrap_or(queue_depth).clamp(1, queue_depth.max(1)),
            _file: file,
            batches: BatchCounts::default(),
        })
    }
}

/// An AIO context, destroyed on drop (which waits for I/Os still in flight).
struct Context(libc::c_ulong);

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: the context came from io_setup and is destroyed once.
        unsafe { libc::syscall(libc::SYS_io_destroy, self.0) };
    }
}

/// One worker's AIO context.
pub struct AioEngine {
    // Drop order: the context (which waits for in-flight I/O) before the iocbs and buffers it uses.
    ctx: Context,
    /// One iocb per slot; the kernel reads them during io_submit only.
    iocbs: Vec<Iocb>,
    /// Pointers to the iocbs queued since the last submit, in order.
    staged: Vec<*mut Iocb>,
    events: Vec<IoEvent>,
    /// Events reaped by `wait` and not yet handed out.
    ready: std::ops::Range<usize>,
    in_flight: u32,
    bufs: SlotBuffers,
    lens: Vec<u32>,
    /// At most this many completions handed out per poll ([`AioOptions::reap_max`]).
    reap_max: u32,
    ops: RangeOps,
    finished: Finished,
    /// What each io_submit sent and each io_getevents brought (fio's iodepth_submit/complete).
    batches: BatchCounts,
    /// Kept open for the context's life: every iocb names its fd.
    _file: File,
}

#[cold]
fn runtime(what: &'static str, source: io::Error) -> EngineError {
    EngineError::Runtime { engine: NAME, what, source }
}

impl AioEngine {
    /// `io_getevents` for between `min` and all free event slots, waiting as long as `wait` says
    /// (`None`: until `min` arrived); returns how many arrived.
    fn get_events(&mut self, min: libc::c_long, wait: Option<std::time::Duration>) -> Result<usize, EngineError> {
        let block = wait.is_none();
        let limit = wait
            .map(|d| libc::timespec { tv_sec: d.as_secs() as libc::time_t, tv_nsec: d.subsec_nanos() as libc::c_long });
        let timeout = limit.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
        loop {
            // SAFETY: `events` has room for `len` io_events; `timeout` is null or a live timespec.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx.0,
                    min,
                    self.events.len() as libc::c_long,
                    self.events.as_mut_ptr(),
                    timeout,
                )
            };
            if rc >= 0 {
                if rc > 0 {
                    self.batches.completed(rc as u32);
                }
                return Ok(rc as usize);
            }
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINTR) {
                return Err(runtime("io_getevents", e));
            }
            if !block {
                return Ok(0);
            }
        }
    }
}

impl Engine for AioEngine {
    #[inline]
    fn queue(&mut self, slot: u32, op: &IoOp) -> Result<Queued, EngineError> {
        let buf = self.bufs.slot_ptr(slot) as u64;
        let cb = &mut self.iocbs[slot as usize];
        cb.aio_data = u64::from(slot);
        cb.aio_lio_opcode = match op.dir {
            Direction::Read => IOCB_CMD_PREAD,
            Direction::Write => IOCB_CMD_PWRITE,
            Direction::Flush => IOCB_CMD_FSYNC,
            Direction::Trim | Direction::WriteZeroes => {
                let r = self.ops.run(op);
                self.finished.push(slot, r);
                return Ok(Queued::Ok);
            }
        };
        // The kernel refuses an fsync iocb with a buffer, length or offset (EINVAL); a flush's are 0.
        let data = op.dir != Direction::Flush;
        cb.aio_buf = if data { buf } else { 0 };
        cb.aio_nbytes = u64::from(op.len);
        cb.aio_offset = if data { op.offset as i64 } else { 0 };
        // fio's libaio sends a priority in the iocb only where cmdprio chose one; the job's own is
        // its thread's (ioprio_set), which an iocb without the flag takes, so sending it is the same.
        cb.aio_reqprio = op.prio.value as i16;
        cb.aio_flags = if op.prio.value != 0 { IOCB_FLAG_IOPRIO } else { 0 };
        self.lens[slot as usize] = op.len;
        // A pointer from the Vec's own base, so later accesses to other slots leave it valid.
        self.staged.push(self.iocbs.as_mut_ptr().wrapping_add(slot as usize));
        Ok(Queued::Ok)
    }

    #[inline]
    fn submit(&mut self) -> Result<(), EngineError> {
        while !self.staged.is_empty() {
            // SAFETY: every staged pointer is to an iocb in `self.iocbs` (never resized), filled in by
            // `queue` for a free slot whose buffer stays untouched until its event is reaped.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_io_submit,
                    self.ctx.0,
                    self.staged.len() as libc::c_long,
                    self.staged.as_mut_ptr(),
                )
            };
            if rc < 0 {
                let e = io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EINTR) => continue,
                    // Out of request slots for now: the rest goes out after the next reap.
                    Some(libc::EAGAIN) if self.in_flight > 0 => return Ok(()),
                    _ => return Err(runtime("io_submit", e)),
                }
            }
            let n = rc as usize;
            self.in_flight += n as u32;
            if n > 0 {
                self.batches.submitted(n as u32);
            }
            // Partial submission: keep the rest, in order (drain does not allocate).
            self.staged.drain(..n);
            if n == 0 {
                return Ok(());
            }
        }
        Ok(())
    }

    #[inline]
    fn poll<F: FnMut(u32, Result<(), IoError>)>(&mut self, max: u32, mut done: F) -> Result<u32, EngineError> {
        if !self.finished.is_empty() {
            return Ok(self.finished.drain(max, &mut done));
        }
        if self.ready.is_empty() {
            if self.in_flight == 0 {
                return Ok(0);
            }
            let n = self.get_events(0, Some(std::time::Duration::ZERO))?;
            self.ready = 0..n;
        }
        let mut reaped = 0;
        while reaped < max.min(self.reap_max) {
            let Some(i) = self.ready.next() else { break };
            let ev = self.events[i];
            let slot = ev.data as u32;
            done(slot, judge(ev.res as i32, self.lens[slot as usize]));
            reaped += 1;
        }
        self.in_flight -= reaped;
        Ok(reaped)
    }

    fn unsent(&mut self) -> u32 {
        self.staged.len() as u32
    }

    fn wait(&mut self) -> Result<(), EngineError> {
        if !self.staged.is_empty() {
            self.submit()?;
        }
        if self.ready.is_empty() && self.in_flight > 0 {
            let n = self.get_events(1, None)?;
            self.ready = 0..n;
        }
        Ok(())
    }

    fn interrupt_driven(&self) -> bool {
        true
    }

    fn wait_for(&mut self, timeout_ns: u64) -> Result<(), EngineError> {
        if !self.staged.is_empty() {
            self.submit()?;
        }
        let timeout = std::time::Duration::from_nanos(timeout_ns);
        if self.ready.is_empty() && self.in_flight > 0 {
            let n = self.get_events(1, Some(timeout))?;
            self.ready = 0..n;
        } else if self.ready.is_empty() {
            std::thread::sleep(timeout);
        }
        Ok(())
    }

    fn slot_buf(&mut self, slot: u32) -> &mut [u8] {
        self.bufs.slot_mut(slot)
    }

    fn batches(&self) -> Option<BatchCounts> {
        Some(self.batches)
    }

    fn info(&self) -> EngineInfo {
        EngineInfo {
            name: NAME.into(),
            options: vec![("direct".into(), "1".into()), ("reap_max".into(), self.reap_max.to_string())],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::IoPrio;
    use std::io::Write;

    fn run_one(e: &mut AioEngine, slot: u32, op: IoOp) -> Result<(), IoError> {
        assert_eq!(e.queue(slot, &op).unwrap(), Queued::Ok);
        e.submit().unwrap();
        let mut got = None;
        while got.is_none() {
            if e.poll(1, |s, r| got = Some((s, r))).unwrap() == 0 {
                e.wait().unwrap();
            }
        }
        let (s, r) = got.unwrap();
        assert_eq!(s, slot);
        r
    }

    /// An I/O with a priority of its own carries it in aio_reqprio with IOCB_FLAG_IOPRIO (fio's
    /// libaio cmdprio), which the kernel takes (the idle class needs no privilege); one without
    /// leaves the flag off, so the thread's priority applies.
    #[test]
    fn an_io_priority_goes_in_the_iocb() {
        let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
        let path = dir.path().join("p.dat");
        File::create(&path).unwrap().write_all(&[0u8; 16384]).unwrap();
        let mut e = AioBuilder { path, writes: false, direct: true, buffer_seed: 3, options: AioOptions::default() }
            .build(0, 2, 4096)
            .unwrap();
        let idle2 = IoPrio { value: (3 << 13) | 2 };
        run_one(&mut e, 1, IoOp { dir: Direction::Read, offset: 4096, len: 4096, prio: idle2 }).unwrap();
        assert_eq!((e.iocbs[1].aio_reqprio, e.iocbs[1].aio_flags), ((3 << 13) | 2, IOCB_FLAG_IOPRIO));
        run_one(&mut e, 1, IoOp { dir: Direction::Read, offset: 0, len: 4096, prio: IoPrio::NONE }).unwrap();
        assert_eq!((e.iocbs[1].aio_reqprio, e.iocbs[1].aio_flags), (0, 0));
    }

    #[test]
    fn reads_writes_and_short_reads() {
        let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
        let path = dir.path().join("a.dat");
        let data: Vec<u8> = (0..65536u32).map(|i| (i / 4096) as u8).collect();
        File::create(&path).unwrap().write_all(&data).unwrap();
        let mut e = AioBuilder {
            path: path.clone(),
            writes: true,
            direct: true,
            buffer_seed: 3,
            options: AioOptions::default(),
        }
        .build(0, 4, 8192)
        .unwrap();
        run_one(&mut e, 2, IoOp { dir: Direction::Read, offset: 12288, len: 4096, prio: IoPrio::NONE }).unwrap();
        assert!(e.bufs.slot(2)[..4096].iter().all(|&b| b == 3));

        e.bufs.slot_mut(1).fill(0x5a);
        run_one(&mut e, 1, IoOp { dir: Direction::Write, offset: 0, len: 8192, prio: IoPrio::NONE }).unwrap();
        assert!(std::fs::read(&path).unwrap()[..8192].iter().all(|&b| b == 0x5a));

        let r = run_one(&mut e, 0, IoOp { dir: Direction::Read, offset: 61440, len: 8192, prio: IoPrio::NONE });
        assert_eq!(r, Err(IoError::ShortTransfer { expected: 8192, done: 4096 }));

        // A full queue in one io_submit, every slot completes once.
        for s in 0..4 {
            e.queue(s, &IoOp { dir: Direction::Read, offset: u64::from(s) * 8192, len: 8192, prio: IoPrio::NONE })
                .unwrap();
        }
        e.submit().unwrap();
        let mut seen = [0; 4];
        let mut n = 0;
        while n < 4 {
            let k = e.poll(4, |s, r| {
                assert_eq!(r, Ok(()));
                seen[s as usize] += 1;
            });
            if k.unwrap() == 0 {
                e.wait().unwrap();
            }
            n = seen.iter().sum();
        }
        assert_eq!(seen, [1, 1, 1, 1]);
        assert!(e.info().to_string().starts_with("aio"));
    }

    /// reap_max bounds the completions one poll hands out (the rest wait for the next poll, with
    /// no system call); by default a poll hands out every completion ready, up to the queue depth.
    #[test]
    fn reap_max_bounds_each_poll() {
        let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
        let path = dir.path().join("r.dat");
        File::create(&path).unwrap().write_all(&[0u8; 65536]).unwrap();
        for (reap_max, per_poll) in [(None, 8), (Some(2), 2), (Some(64), 8)] {
            let options = AioOptions { reap_max };
            let b = AioBuilder { path: path.clone(), writes: false, direct: true, buffer_seed: 3, options };
            let mut e = b.build(0, 8, 4096).unwrap();
            for s in 0..8 {
                e.queue(s, &IoOp { dir: Direction::Read, offset: u64::from(s) * 4096, len: 4096, prio: IoPrio::NONE })
                    .unwrap();
            }
            e.submit().unwrap();
            // Wait until all 8 are ready, then count what one poll hands out.
            let mut got = 0;
            while e.ready.len() < 8 && got == 0 {
                e.wait().unwrap();
                if e.ready.len() < 8 {
                    got = e.poll(8, |_, r| assert_eq!(r, Ok(()))).unwrap();
                }
            }
            if got == 0 {
                got = e.poll(8, |_, r| assert_eq!(r, Ok(()))).unwrap();
                assert_eq!(got, per_poll, "reap_max {reap_max:?}");
            } else {
                assert!(got <= per_poll, "reap_max {reap_max:?}: {got}");
            }
            assert_eq!(e.info().options.iter().find(|(k, _)| k == "reap_max").unwrap().1, per_poll.to_string());
        }
    }
}

//! How to issue I/O: the contract every engine keeps, and the engines.
//!
//! Shaped like fio's ioengine ops and SPDK perf's `ns_fn_table`. One engine instance belongs to one
//! worker and owns its queue pair or ring and its buffers: nothing is shared between threads. The
//! worker puts an I/O into a preallocated slot with [`Engine::queue`] (or hears [`Queued::Busy`]),
//! rings one doorbell or makes one syscall per batch with [`Engine::submit`], and reaps completions
//! with [`Engine::poll`], refilling each completed slot at once. Engines never decide what to issue;
//! that is the workload generator's job.

pub mod admin;
pub mod aio;
pub mod buf;
pub mod null;
pub mod posixaio;
pub mod psync;
pub mod rangeops;
pub mod ring;
#[cfg(feature = "spdk")]
pub mod spdk;
pub mod uring;
pub mod uring_cmd;

#[cfg(test)]
pub mod fake;

use crate::io::{IoError, IoOp};
use serde::Serialize;
use std::fmt;
use std::io;

/// A bound on the completions handed back per reap before their replacements are submitted
/// (fio's `iodepth_batch_complete_max`), for devices that do better when refilled a few at a time:
/// `uring:reap_max=2`. The kernel plugs a submission batch (`io_uring_enter`, `io_submit`) and passes
/// it to the driver only at the end of the call, so on a device that completes I/Os one by one
/// while others wait (virtio-blk here), reaping all 32 of a QD32 queue first delays every
/// replacement by the preparation of the whole batch and the device runs below the depth asked for.
/// On this machine's virtio-blk disk (randread 4k QD32, five alternating rounds) 2 gave 98.6k IOPS
/// against 94.6k for 4, 92.6k for 8 and ~80k for 32. On a CPU-bound device the bound is a syscall
/// per two I/Os instead of one per queue's worth, so the engines' default is t/io_uring's, the
/// queue depth ([`ring::RingOptions::reap_max`], `aio:reap_max`), and this bound an option.
pub const VIRTIO_REAP_MAX: u32 = 2;

/// Opens a kernel engine's target, writable only when the workload writes: for O_DIRECT I/O, or
/// (`direct` false, fio's direct=0) through the page cache, whose pages of the file are dropped
/// first, as fio's default invalidate=1 drops them when it opens a file.
pub fn open_target(path: &std::path::Path, writes: bool, direct: bool) -> Result<std::fs::File, EngineError> {
    use std::os::unix::fs::OpenOptionsExt;
    let open_err = |source| EngineError::Open { path: path.display().to_string(), source };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(writes)
        .custom_flags(if direct { libc::O_DIRECT } else { 0 })
        .open(path)
        .map_err(open_err)?;
    if !direct {
        nix::fcntl::posix_fadvise(
            std::os::fd::AsRawFd::as_raw_fd(&file),
            0,
            0,
            nix::fcntl::PosixFadviseAdvice::POSIX_FADV_DONTNEED,
        )
        .map_err(|e| open_err(io::Error::from(e)))?;
    }
    Ok(file)
}

/// Whether an I/O was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queued {
    /// The I/O sits in its slot and goes out with the next `submit`.
    Ok,
    /// The queue is full for now; try again after reaping completions.
    Busy,
}

/// When the I/Os an engine has taken leave for the device: where fio's submission latency ends and
/// its completion latency starts (`--latency split`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sends {
    /// With the next `submit` (or `wait`, `progress`): one syscall sends the batch, and the return
    /// of that call is each I/O's stamp, shared by the batch as fio shares it.
    OnSubmit,
    /// With the next poll: the doorbell (or the socket flush) comes at the end of the completion
    /// processing (SPDK's delayed doorbells), so the return of that poll is the stamp.
    OnPoll,
    /// In `queue` itself (a doorbell per command).
    OnQueue,
    /// Nothing is sent apart from the I/O itself: the engine does the I/O in one synchronous call
    /// (fio's psync, and its null engine at iodepth=1). fio records no submission latency for
    /// those, and their completion latency is the whole I/O.
    Synchronous,
}

/// A failure of the engine itself (not of one I/O): set-up, or a queue that stopped working.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("cannot open {path}: {source}")]
    Open { path: String, source: io::Error },
    #[error("{engine}: {what} failed: {source}")]
    Setup { engine: &'static str, what: &'static str, source: io::Error },
    /// A set-up step whose description is built at run time (which flags the kernel refused).
    #[error("{engine}: {what} failed: {source}")]
    SetupRefused { engine: &'static str, what: String, source: io::Error },
    #[error("{engine}: {what} failed: {source}")]
    Runtime { engine: &'static str, what: &'static str, source: io::Error },
}

/// Sets the calling thread's I/O priority to `value` (`class << 13 | level`), as fio's
/// `ioprio_set(IOPRIO_WHO_PROCESS, 0, ...)` sets a job thread's before its engine starts (fio's
/// `prio` and `prioclass`): what every engine's I/O gets unless it carries a priority of its own.
///
/// # Errors
/// The kernel's refusal (EPERM for the real-time class without CAP_SYS_ADMIN or CAP_SYS_NICE).
pub fn set_thread_ioprio(value: u16) -> Result<(), EngineError> {
    const IOPRIO_WHO_PROCESS: libc::c_long = 1;
    // SAFETY: ioprio_set takes three integers and touches no memory of ours; who 0 is this thread.
    let rc = unsafe {
        libc::syscall(libc::SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0 as libc::c_long, libc::c_long::from(value))
    };
    if rc < 0 {
        return Err(EngineError::Setup {
            engine: "worker",
            what: "setting the thread's I/O priority (prio, prioclass)",
            source: io::Error::last_os_error(),
        });
    }
    Ok(())
}

/// What an engine reports about itself: its name and the knobs actually in effect.
#[derive(Clone, Debug, Default, Serialize)]
pub struct EngineInfo {
    pub name: String,
    /// `(knob, value)` pairs, in the order they matter to a reader.
    pub options: Vec<(String, String)>,
}

impl fmt::Display for EngineInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        for (i, (k, v)) in self.options.iter().enumerate() {
            write!(f, "{}{k}={v}", if i == 0 { " (" } else { ", " })?;
        }
        if !self.options.is_empty() {
            f.write_str(")")?;
        }
        Ok(())
    }
}

/// One worker's I/O engine.
///
/// Slots are numbered `0..queue_depth`; a slot holds at most one I/O in flight, and its buffer
/// belongs to the engine. Implementations must not allocate, lock or format in `queue`, `submit` or
/// `poll`.
pub trait Engine {
    /// Places `op` in `slot`. The slot is free (the caller guarantees it).
    ///
    /// # Errors
    /// Only for failures of the engine itself; a full queue is `Ok(Queued::Busy)`.
    fn queue(&mut self, slot: u32, op: &IoOp) -> Result<Queued, EngineError>;

    /// Sends everything queued since the last call: one doorbell or one syscall.
    fn submit(&mut self) -> Result<(), EngineError>;

    /// Reaps up to `max` completions without blocking, calling `done(slot, result)` for each.
    /// Returns how many were reaped.
    fn poll<F: FnMut(u32, Result<(), IoError>)>(&mut self, max: u32, done: F) -> Result<u32, EngineError>;

    /// Whether [`poll_refill`](Engine::poll_refill) queues the next I/Os from inside completion
    /// handling. Only then does the worker call it.
    fn refills_inline(&self) -> bool {
        false
    }

    /// Reaps like [`poll`](Engine::poll), but `done` may return the slot's next I/O, which the
    /// engine queues there and then, before the completion handling ends (as SPDK perf submits from
    /// its completion callback, before SPDK rings the doorbells). A next I/O the queue has no room
    /// for is queued by the engine at its next poll, still counted as in flight. Returns how many
    /// completions were reaped and how many next I/Os were taken.
    ///
    /// The default, for engines that cannot queue from inside their completion handling, reaps
    /// one completion at a time and queues its successor right after it.
    fn poll_refill<F: FnMut(u32, Result<(), IoError>) -> Option<IoOp>>(
        &mut self,
        max: u32,
        mut done: F,
    ) -> Result<(u32, u32), EngineError> {
        let (mut reaped, mut refilled) = (0, 0);
        while reaped < max {
            let mut next = None;
            if self.poll(1, |slot, result| next = done(slot, result).map(|op| (slot, op)))? == 0 {
                break;
            }
            reaped += 1;
            if let Some((slot, op)) = next {
                // Engines whose queue can refuse (Busy) answer false to `refills_inline` and are never
                // asked; a refusal here would lose the I/O, so it is an engine failure.
                if self.queue(slot, &op)? == Queued::Busy {
                    return Err(EngineError::Runtime {
                        engine: "worker",
                        what: "queuing an I/O in a completed slot",
                        source: io::Error::other("the engine's queue was full"),
                    });
                }
                refilled += 1;
            }
        }
        Ok((reaped, refilled))
    }

    /// How long the worker waits, after a poll that found nothing while more than one I/O is in
    /// flight, before it polls again (0: back to back). A polled engine whose device does better
    /// when polled less often asks for a gap (see the SPDK engine's); it is spun, never slept.
    fn idle_poll_gap_ns(&self) -> u32 {
        0
    }

    /// What each submit call and each reap carried so far, for engines that count them as fio's
    /// engines do (`None`: not counted).
    fn batches(&self) -> Option<crate::batches::BatchCounts> {
        None
    }

    /// How many spare buffers the engine keeps for writes handed over inside
    /// [`poll_refill`](Engine::poll_refill): each such write goes out in a spare the worker
    /// prepared ahead with [`prepare_spares`](Engine::prepare_spares), while the device worked, and
    /// the slot's own buffer becomes a spare to prepare, so that completion handling never fills a
    /// buffer (the operation itself is drawn ahead the same way). The worker hands over at most
    /// this many writes between two `prepare_spares`. 0, the default: writes are refilled after the
    /// poll, the ordinary way.
    fn write_spares(&self) -> u32 {
        0
    }

    /// Hands each spare buffer that needs preparing to `prepare`, with whether a read landed in it
    /// since it was last prepared (or it never was); they are then ready for the writes of the next
    /// `poll_refill`. Never called during a poll.
    fn prepare_spares<F: FnMut(&mut [u8], bool)>(&mut self, prepare: F) {
        let _ = prepare;
    }

    /// Whether the worker keeps busy time for this engine: a poll that reaped at least one
    /// completion is busy for its whole span, callbacks and refills included, and one that reaped
    /// nothing adds nothing (`WorkerSummary::busy`). For polled engines whose polls never sleep
    /// (polled SPDK); it costs a clock read per poll. Off by default.
    fn accounts_busy(&self) -> bool {
        false
    }

    /// Called instead of `submit` when a poll found nothing while I/Os are queued or in flight:
    /// submits what is queued, then, for engines whose completions arrive by interrupt, blocks until
    /// one does (ideally in the same syscall). Polled engines just submit and the worker spins.
    fn wait(&mut self) -> Result<(), EngineError> {
        self.submit()
    }

    /// Called instead of `submit` by a paced worker whose poll found nothing: submits what is
    /// queued and lets the kernel post finished completions, without blocking (a paced worker must
    /// be free to issue its next I/O on time). Engines whose completions need no kernel entry to
    /// appear keep the default.
    fn progress(&mut self) -> Result<(), EngineError> {
        self.submit()
    }

    /// Whether completions arrive by interrupt and [`wait_for`](Engine::wait_for) can sleep, so that
    /// a paced worker with nothing due sleeps until its next I/O is due instead of polling (as an
    /// application on this path would; fio's rate sleeps too). Polled engines (IOPOLL, polled SPDK)
    /// keep the default: their worker polls between paced I/Os, as it would in service.
    fn interrupt_driven(&self) -> bool {
        false
    }

    /// The most I/Os the engine keeps in flight, whatever the worker's queue depth: 1 on a
    /// synchronous engine, which answers Busy to a second (fio's sync engines complete each I/O
    /// as it is queued, which its think time counts by).
    fn max_in_flight(&self) -> u32 {
        u32::MAX
    }

    /// Called instead of `progress` by a paced worker whose poll found nothing and whose next I/O
    /// is due in `timeout_ns`, on engines that are [`interrupt_driven`](Engine::interrupt_driven):
    /// submits what is queued, then sleeps until a completion arrives or the time passes (with
    /// nothing in flight, for the whole time).
    fn wait_for(&mut self, timeout_ns: u64) -> Result<(), EngineError> {
        let _ = timeout_ns;
        self.progress()
    }

    /// When the I/Os it takes leave for the device (see [`Sends`]).
    fn sends(&self) -> Sends {
        Sends::OnSubmit
    }

    /// How many of the I/Os queued so far have not left yet, after a call that sends: a batch the
    /// engine holds back (the ring's `submit_batch`, a full kernel queue). They are the most
    /// recently queued ones. Read only with `--latency split`.
    fn unsent(&mut self) -> u32 {
        0
    }

    /// The engine's name and the knobs in effect, for the report.
    fn info(&self) -> EngineInfo;

    /// Facts of this one engine instance that can differ between workers (where its core and
    /// memory are, as NUMA nodes), `(name, value)`: kept per worker in the results, not shown on
    /// the engine line. None by default.
    fn lane_facts(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// `slot`'s buffer: filled before a write is queued, read after a read completes (verification).
    /// Never called while the slot's I/O is in flight.
    fn slot_buf(&mut self, slot: u32) -> &mut [u8];
}

/// Builds one engine per worker, on the worker's own (already pinned) thread, so that rings, queues
/// and buffers are first touched on the right NUMA node.
pub trait EngineBuilder: Send + Sync {
    type Engine: Engine;

    /// An engine for worker `worker` with `queue_depth` slots of `max_io_bytes` each.
    fn build(&self, worker: usize, queue_depth: u32, max_io_bytes: u32) -> Result<Self::Engine, EngineError>;
}

//! The io_uring ring shared by the `uring` and `uring-cmd` engines: set-up with fallback, and the
//! submit / reap / wait cycle for each completion mode.
//!
//! Owns the choice of setup flags (IOPOLL, SQPOLL and its core, SINGLE_ISSUER, DEFER_TASKRUN,
//! COOP_TASKRUN), the registered ring fd, and every `io_uring_enter`; it does not know what an SQE
//! says (the engines build those) nor how a CQE's result is judged (the engines decode that).
//!
//! Flags that only make the kernel cheaper (SINGLE_ISSUER, DEFER_TASKRUN, COOP_TASKRUN, the
//! registered ring) are used by default when the kernel takes them: a kernel that refuses one with
//! EINVAL gets a ring without it and the report says so. Asked for explicitly (`=1`), a refusal is an
//! error. IOPOLL and SQPOLL change what is measured, so they are never dropped silently.

use super::EngineError;
use crate::batches::BatchCounts;
use io_uring::{EnterFlags, IoUring, cqueue, squeue};
use std::io;
use std::os::fd::AsRawFd;
use std::time::Duration;

/// An on/off knob whose default is "on where the kernel has it".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Toggle {
    /// Used when the kernel accepts it; dropped with a note otherwise.
    #[default]
    Auto,
    /// Required: a kernel that refuses it fails the set-up.
    On,
    Off,
}

impl Toggle {
    fn wanted(self) -> bool {
        self != Toggle::Off
    }
}

/// How the ring is set up and driven; shared by `uring` and `uring-cmd`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingOptions {
    /// IORING_SETUP_IOPOLL: completions are polled from the device's poll queues, no interrupts.
    pub iopoll: bool,
    /// IORING_SETUP_SQPOLL: a kernel thread takes submissions off the ring.
    pub sqpoll: bool,
    /// The core the SQPOLL thread is pinned to.
    pub sqpoll_cpu: Option<u32>,
    /// How long the SQPOLL thread spins without work before it sleeps.
    pub sqpoll_idle_ms: u32,
    pub single_issuer: Toggle,
    pub defer_taskrun: Toggle,
    pub coop_taskrun: Toggle,
    /// IORING_REGISTER_RING_FDS: `io_uring_enter` skips the fd lookup.
    pub registered_ring: Toggle,
    /// Hold back submissions until this many are queued (while others are in flight).
    pub submit_batch: u32,
    /// Block until this many completions are ready (or all in flight, if fewer).
    pub reap_batch: u32,
    /// Hand back at most this many completions per reap, so their replacements go out before the
    /// rest are handled (fio's `iodepth_batch_complete_max`); `None`, the default, is the queue
    /// depth, as t/io_uring reaps: every completion found is handled before the replacements go
    /// out together (fio's own default is 1). See [`super::VIRTIO_REAP_MAX`] for when a bound pays.
    pub reap_max: Option<u32>,
    /// Hand the kernel at most this many SQEs per `io_uring_enter`, the rest going out with the
    /// next one, as t/io_uring submits 32 at a time (`-s32`); `None` sends all that are queued.
    /// The default is [`KERNEL_PLUG_BATCH`].
    pub submit_max: Option<u32>,
}

/// The block layer's plug batch (`BLK_MAX_REQUEST_COUNT`): an `io_uring_enter` that submits more
/// than this many I/Os to a block device gets its first 32 requests' tags in one batch and each
/// later one alone, and flushes its plug every 32. Measured in the testbed on null_blk (4 KiB
/// random reads at QD128, three alternating rounds, release build): polled, sending at most 32 per
/// call cut the kernel time per I/O from 5,005 to 4,397 ns (t/io_uring's: 4,372) and took
/// nvmebench from 0.82x to 0.91x of t/io_uring; with interrupts from 5,712 to 5,581 ns, 0.85x to
/// 0.88x. At a depth of 32 or less it changes nothing.
pub const KERNEL_PLUG_BATCH: u32 = 32;

/// Default SQPOLL idle time, as in fio's `sqthread_poll` (which leaves the kernel's 1 s default).
pub const DEFAULT_SQPOLL_IDLE_MS: u32 = 1000;

impl Default for RingOptions {
    fn default() -> Self {
        RingOptions {
            iopoll: false,
            sqpoll: false,
            sqpoll_cpu: None,
            sqpoll_idle_ms: DEFAULT_SQPOLL_IDLE_MS,
            single_issuer: Toggle::Auto,
            defer_taskrun: Toggle::Auto,
            coop_taskrun: Toggle::Auto,
            registered_ring: Toggle::Auto,
            submit_batch: 1,
            reap_batch: 1,
            reap_max: None,
            submit_max: Some(KERNEL_PLUG_BATCH),
        }
    }
}

impl RingOptions {
    /// Contradictions a user can fix, as one sentence each (checked before anything runs).
    pub fn conflict(&self) -> Option<&'static str> {
        if self.sqpoll && (self.defer_taskrun == Toggle::On || self.coop_taskrun == Toggle::On) {
            return Some("defer_taskrun and coop_taskrun do not go with sqpoll (the kernel refuses them); drop one");
        }
        if self.defer_taskrun == Toggle::On && self.single_issuer == Toggle::Off {
            return Some("defer_taskrun needs single_issuer; drop single_issuer=0");
        }
        if self.sqpoll_cpu.is_some() && !self.sqpoll {
            return Some("sqpoll_cpu needs sqpoll; add sqpoll");
        }
        None
    }
}

/// The setup flags that may be dropped, in the order they are dropped on EINVAL (DEFER_TASKRUN
/// first: it needs SINGLE_ISSUER).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetupFlags {
    pub defer_taskrun: bool,
    pub single_issuer: bool,
    pub coop_taskrun: bool,
}

/// The flags actually in effect and why any wanted one is not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActiveFlags {
    pub flags: SetupFlags,
    pub notes: Vec<String>,
}

/// Tries `build` with every wanted flag, then drops automatic ones one at a time while the kernel
/// answers EINVAL. Flags asked for with `=1` are never dropped.
pub fn setup_with_fallback<R>(
    opts: &RingOptions,
    mut build: impl FnMut(SetupFlags) -> io::Result<R>,
) -> Result<(R, ActiveFlags), (io::Error, String)> {
    let ipi_ok = !opts.sqpoll;
    let mut flags = SetupFlags {
        defer_taskrun: opts.defer_taskrun.wanted() && ipi_ok && opts.single_issuer.wanted(),
        single_issuer: opts.single_issuer.wanted(),
        coop_taskrun: opts.coop_taskrun.wanted() && ipi_ok,
    };
    let mut notes = Vec::new();
    loop {
        match build(flags) {
            Ok(r) => return Ok((r, ActiveFlags { flags, notes })),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                let droppable: [(&mut bool, Toggle, &str); 3] = [
                    (&mut flags.defer_taskrun, opts.defer_taskrun, "DEFER_TASKRUN"),
                    (&mut flags.single_issuer, opts.single_issuer, "SINGLE_ISSUER"),
                    (&mut flags.coop_taskrun, opts.coop_taskrun, "COOP_TASKRUN"),
                ];
                let mut dropped = false;
                for (on, toggle, name) in droppable {
                    if *on && toggle == Toggle::Auto {
                        *on = false;
                        notes.push(format!("the kernel refused IORING_SETUP_{name} (EINVAL); running without it"));
                        dropped = true;
                        break;
                    }
                }
                if !dropped {
                    return Err((e, describe_refusal(opts, flags)));
                }
            }
            Err(e) => return Err((e, describe_refusal(opts, flags))),
        }
    }
}

fn describe_refusal(opts: &RingOptions, flags: SetupFlags) -> String {
    let mut asked = Vec::new();
    if opts.iopoll {
        asked.push("IOPOLL");
    }
    if opts.sqpoll {
        asked.push("SQPOLL");
    }
    if flags.defer_taskrun {
        asked.push("DEFER_TASKRUN");
    }
    if flags.single_issuer {
        asked.push("SINGLE_ISSUER");
    }
    if flags.coop_taskrun {
        asked.push("COOP_TASKRUN");
    }
    if asked.is_empty() { "io_uring_setup".into() } else { format!("io_uring_setup with {}", asked.join("|")) }
}

/// One worker's ring plus the bookkeeping that decides when to enter the kernel.
pub struct Ring<S: squeue::EntryMarker, C: cqueue::EntryMarker> {
    pub ring: IoUring<S, C>,
    /// Index of the registered ring fd, used with IORING_ENTER_REGISTERED_RING.
    registered_index: Option<u32>,
    pub active: ActiveFlags,
    pub registered_ring: bool,
    opts: RingOptions,
    /// Pushed and not yet reaped (submitted or still in the SQ).
    outstanding: u32,
    pub entries: u32,
    /// Completions handed back per reap at most: `opts.reap_max`, or the queue depth.
    reap_max: u32,
    /// What each `io_uring_enter` submitted and each reap brought (fio's iodepth_submit/complete).
    pub batches: BatchCounts,
}

/// The kernel's `struct io_uring_getevents_arg` (IORING_ENTER_EXT_ARG).
#[repr(C)]
struct GeteventsArg {
    sigmask: u64,
    sigmask_sz: u32,
    min_wait_usec: u32,
    ts: u64,
}

/// The kernel's `struct __kernel_timespec`.
#[repr(C)]
struct KernelTimespec {
    tv_sec: i64,
    tv_nsec: i64,
}

/// IORING_REGISTER_RING_FDS (Linux 5.18).
const IORING_REGISTER_RING_FDS: libc::c_uint = 20;

#[repr(C)]
struct RsrcUpdate {
    offset: u32,
    resv: u32,
    data: u64,
}

impl<S: squeue::EntryMarker, C: cqueue::EntryMarker> Ring<S, C> {
    /// A ring for `queue_depth` I/Os in flight (its submission queue rounded up to a power of two)
    /// set up as `opts` asks, with fallback for the optional flags. `engine` names the engine in
    /// errors.
    pub fn new(engine: &'static str, queue_depth: u32, opts: &RingOptions) -> Result<Self, EngineError> {
        let entries = queue_depth.next_power_of_two();
        let attempt = |flags: SetupFlags| {
            let mut b = IoUring::<S, C>::builder();
            if opts.iopoll {
                b.setup_iopoll();
            }
            if opts.sqpoll {
                b.setup_sqpoll(opts.sqpoll_idle_ms);
                if let Some(cpu) = opts.sqpoll_cpu {
                    b.setup_sqpoll_cpu(cpu);
                }
            }
            if flags.single_issuer {
                b.setup_single_issuer();
            }
            if flags.defer_taskrun {
                b.setup_defer_taskrun();
            }
            if flags.coop_taskrun {
                b.setup_coop_taskrun();
            }
            // Twice the submission entries, so completions never overflow at full queue depth.
            b.setup_cqsize(entries * 2);
            b.build(entries)
        };
        let (ring, active) = setup_with_fallback(opts, attempt)
            .map_err(|(source, what)| EngineError::SetupRefused { engine, what, source })?;
        let reap_max = opts.reap_max.unwrap_or(queue_depth).max(1);
        let mut r = Ring {
            ring,
            registered_index: None,
            active,
            registered_ring: false,
            opts: *opts,
            outstanding: 0,
            entries,
            reap_max,
            batches: BatchCounts::default(),
        };
        if opts.registered_ring.wanted() {
            match r.register_ring_fd() {
                Ok(index) => {
                    r.registered_index = Some(index);
                    r.registered_ring = true;
                }
                Err(e) if opts.registered_ring == Toggle::On => {
                    return Err(EngineError::Setup { engine, what: "registering the ring fd", source: e });
                }
                Err(e) => r.active.notes.push(format!("registering the ring fd failed ({e}); using the plain fd")),
            }
        }
        Ok(r)
    }

    fn register_ring_fd(&self) -> io::Result<u32> {
        let mut up = RsrcUpdate { offset: u32::MAX, resv: 0, data: self.ring.as_raw_fd() as u64 };
        // SAFETY: `up` is a live, correctly laid out io_uring_rsrc_update (16 bytes, as the kernel's)
        // and the count is 1; the kernel writes the chosen index into `up.offset` before returning.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_io_uring_register,
                self.ring.as_raw_fd(),
                IORING_REGISTER_RING_FDS,
                &mut up as *mut RsrcUpdate,
                1u32,
            )
        };
        if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(up.offset) }
    }

    /// Puts `entry` in the submission ring; false when it is full.
    ///
    /// # Safety
    /// Everything `entry` points at (buffer, command) must stay valid and untouched until its
    /// completion is reaped.
    #[inline]
    pub unsafe fn push(&mut self, entry: &S) -> bool {
        // SAFETY: passed on to the caller (see above).
        let ok = unsafe { self.ring.submission().push(entry).is_ok() };
        self.outstanding += u32::from(ok);
        ok
    }

    #[inline]
    fn pending(&mut self) -> u32 {
        self.ring.submission().len() as u32
    }

    /// One `io_uring_enter` with the ring's own rules: GETEVENTS whenever completions need the
    /// kernel (IOPOLL, deferred task work, a waiter), SQ_WAKEUP when the SQPOLL thread sleeps, and no
    /// syscall at all when the SQPOLL thread is awake and nobody waits.
    #[inline]
    fn enter(&mut self, min_complete: u32, want_events: bool) -> io::Result<()> {
        self.enter_until(min_complete, want_events, None)
    }

    /// [`enter`](Self::enter), waiting at most `timeout` for `min_complete` completions (an
    /// IORING_ENTER_EXT_ARG timeout, Linux 5.11: [`can_wait_for`](Self::can_wait_for)).
    #[inline]
    fn enter_until(&mut self, min_complete: u32, want_events: bool, timeout: Option<Duration>) -> io::Result<()> {
        let sq = self.ring.submission();
        let to_submit = sq.len() as u32;
        let mut flags = EnterFlags::empty();
        if min_complete > 0 || want_events || sq.cq_overflow() || sq.taskrun() {
            flags |= EnterFlags::GETEVENTS;
        }
        if self.opts.sqpoll {
            // The SQPOLL thread takes what is in the ring, with or without this call (fio counts
            // what it queued, as here).
            if to_submit > 0 {
                self.batches.submitted(to_submit);
            }
            if sq.need_wakeup() {
                flags |= EnterFlags::SQ_WAKEUP;
            } else if !flags.contains(EnterFlags::GETEVENTS) {
                return Ok(());
            }
        }
        drop(sq);
        let (fd, flags) = match self.registered_index {
            Some(i) => (i as libc::c_long, flags | EnterFlags::REGISTERED_RING),
            None => (self.ring.as_raw_fd() as libc::c_long, flags),
        };
        // Without SQPOLL the kernel consumes every SQE passed here (or fails the call).
        let submit_arg = if self.opts.sqpoll { 0 } else { to_submit.min(self.opts.submit_max.unwrap_or(u32::MAX)) };
        let ts = timeout.map(|t| KernelTimespec { tv_sec: t.as_secs() as i64, tv_nsec: i64::from(t.subsec_nanos()) });
        let arg = ts.as_ref().map(|ts| GeteventsArg {
            sigmask: 0,
            sigmask_sz: 0,
            min_wait_usec: 0,
            ts: ts as *const _ as u64,
        });
        let (flags, arg_ptr, arg_len) = match &arg {
            Some(a) => (
                flags | EnterFlags::EXT_ARG,
                a as *const GeteventsArg as *const libc::c_void,
                size_of::<GeteventsArg>(),
            ),
            None => (flags, std::ptr::null(), 0),
        };
        // SAFETY: io_uring_enter on this ring (or its registered index, with the matching flag),
        // with either no argument or, with EXT_ARG, a live io_uring_getevents_arg whose `ts` points
        // at a live timespec (both on this frame until the call returns); the SQEs it consumes were
        // pushed under `push`'s contract.
        let rc = unsafe {
            libc::syscall(libc::SYS_io_uring_enter, fd, submit_arg, min_complete, flags.bits(), arg_ptr, arg_len)
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        if submit_arg > 0 && rc > 0 {
            // The SQEs the kernel consumed, as fio's engine counts io_uring_enter's return.
            self.batches.submitted(rc as u32);
        }
        Ok(())
    }

    /// Sends what is queued, unless fewer than `submit_batch` are and others are still in flight.
    #[inline]
    pub fn submit(&mut self) -> io::Result<()> {
        let pending = self.pending();
        if pending == 0 || (pending < self.opts.submit_batch && self.outstanding > pending) {
            return Ok(());
        }
        // IOPOLL and DEFER_TASKRUN complete only inside GETEVENTS; asking for it with min 0 reaps what
        // is ready in the same syscall, as fio does.
        let want_events = (self.opts.iopoll && !self.opts.sqpoll) || self.active.flags.defer_taskrun;
        loop {
            match self.enter(0, want_events) {
                Ok(()) => return Ok(()),
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                // The kernel holds back while completions pile up; they are reaped next and these SQEs
                // go out with the next enter.
                Err(e) if matches!(e.raw_os_error(), Some(libc::EBUSY) | Some(libc::EAGAIN)) => return Ok(()),
                Err(e) => return Err(e),
            }
        }
    }

    /// SQEs not yet consumed by the kernel: a batch `submit` held back, or one a busy kernel
    /// refused for now.
    pub fn unsent(&mut self) -> u32 {
        self.pending()
    }

    /// Reaps up to `max` completions straight from the CQ ring, without a syscall: completions that
    /// need the kernel first (IOPOLL, deferred task work) are brought in by `submit` and `wait`,
    /// which enter with GETEVENTS anyway.
    #[inline]
    pub fn reap(&mut self, max: u32, mut each: impl FnMut(&C)) -> io::Result<u32> {
        let mut n = 0;
        for cqe in self.ring.completion().take(max.min(self.reap_max) as usize) {
            each(&cqe);
            n += 1;
        }
        self.outstanding -= n.min(self.outstanding);
        if n > 0 {
            self.batches.completed(n);
        }
        Ok(n)
    }

    /// Blocks (or, with IOPOLL, spins in the kernel) until `reap_batch` completions are ready or all
    /// in flight are. With SQPOLL and IOPOLL the kernel thread reaps, so the caller spins on the CQ.
    /// Submits what is queued and runs the kernel's completion work (DEFER_TASKRUN and COOP_TASKRUN
    /// post completions only inside a syscall) without waiting for any.
    pub fn progress(&mut self) -> io::Result<()> {
        match self.enter(0, true) {
            Ok(()) => Ok(()),
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::EBUSY) | Some(libc::EAGAIN)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Whether [`wait_for`](Self::wait_for) can sleep: completions come by interrupt (no IOPOLL)
    /// and the kernel takes a timeout on its wait (IORING_FEAT_EXT_ARG, Linux 5.11).
    pub fn can_wait_for(&self) -> bool {
        !self.opts.iopoll && self.ring.params().is_feature_ext_arg()
    }

    /// Submits what is queued and waits for a completion, at most `timeout` (a paced worker's time
    /// to its next I/O). Without [`can_wait_for`](Self::can_wait_for), [`progress`](Self::progress).
    pub fn wait_for(&mut self, timeout: Duration) -> io::Result<()> {
        if !self.can_wait_for() {
            return self.progress();
        }
        match self.enter_until(1, true, Some(timeout)) {
            Ok(()) => Ok(()),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME) | Some(libc::EINTR) | Some(libc::EBUSY) | Some(libc::EAGAIN)
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    pub fn wait(&mut self) -> io::Result<()> {
        if self.opts.sqpoll && self.opts.iopoll {
            return Ok(());
        }
        let min = self.opts.reap_batch.min(self.outstanding).max(1);
        match self.enter(min, true) {
            Ok(()) => Ok(()),
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::EBUSY) | Some(libc::EAGAIN)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// `(knob, value)` pairs for the report.
    pub fn describe(&self, out: &mut Vec<(String, String)>) {
        let onoff = |b: bool| if b { "1" } else { "0" }.to_string();
        out.push(("mode".into(), if self.opts.iopoll { "poll" } else { "interrupt" }.into()));
        out.push((
            "sqpoll".into(),
            match (self.opts.sqpoll, self.opts.sqpoll_cpu) {
                (false, _) => "0".into(),
                (true, None) => "1".into(),
                (true, Some(c)) => format!("1 (cpu {c})"),
            },
        ));
        out.push(("entries".into(), self.entries.to_string()));
        out.push(("single_issuer".into(), onoff(self.active.flags.single_issuer)));
        out.push(("defer_taskrun".into(), onoff(self.active.flags.defer_taskrun)));
        out.push(("coop_taskrun".into(), onoff(self.active.flags.coop_taskrun)));
        out.push(("regring".into(), onoff(self.registered_ring)));
        out.push(("submit_batch".into(), self.opts.submit_batch.to_string()));
        out.push(("reap_batch".into(), self.opts.reap_batch.to_string()));
        out.push(("reap_max".into(), self.reap_max.to_string()));
        if let Some(n) = self.opts.submit_max {
            out.push(("submit_max".into(), n.to_string()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn einval() -> io::Error {
        io::Error::from_raw_os_error(libc::EINVAL)
    }

    #[test]
    fn refused_automatic_flags_are_dropped_in_order_with_a_note() {
        let opts = RingOptions::default();
        let mut tried = Vec::new();
        let (_, active) = setup_with_fallback(&opts, |f| {
            tried.push(f);
            // An old kernel: knows COOP_TASKRUN (5.19) but not SINGLE_ISSUER or DEFER_TASKRUN (6.0/6.1).
            if f.defer_taskrun || f.single_issuer { Err(einval()) } else { Ok(()) }
        })
        .unwrap();
        assert_eq!(tried.len(), 3);
        assert_eq!(active.flags, SetupFlags { defer_taskrun: false, single_issuer: false, coop_taskrun: true });
        assert_eq!(
            active.notes,
            vec![
                "the kernel refused IORING_SETUP_DEFER_TASKRUN (EINVAL); running without it",
                "the kernel refused IORING_SETUP_SINGLE_ISSUER (EINVAL); running without it",
            ]
        );
    }

    #[test]
    fn required_flags_are_never_dropped() {
        let opts = RingOptions { defer_taskrun: Toggle::On, single_issuer: Toggle::On, ..RingOptions::default() };
        let (e, what) = setup_with_fallback(&opts, |f| if f.defer_taskrun { Err(einval()) } else { Ok(()) })
            .map(|_| ())
            .unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
        // COOP_TASKRUN (automatic) was dropped first; the required two are still named.
        assert_eq!(what, "io_uring_setup with DEFER_TASKRUN|SINGLE_ISSUER");
    }

    #[test]
    fn sqpoll_leaves_out_the_ipi_flags() {
        let opts = RingOptions { sqpoll: true, ..RingOptions::default() };
        let (_, active) = setup_with_fallback(&opts, |_| Ok::<_, io::Error>(())).unwrap();
        assert_eq!(active.flags, SetupFlags { defer_taskrun: false, single_issuer: true, coop_taskrun: false });
        assert!(active.notes.is_empty());
        let bad = RingOptions { sqpoll: true, defer_taskrun: Toggle::On, ..RingOptions::default() };
        assert!(bad.conflict().unwrap().contains("do not go with sqpoll"));
        let bad = RingOptions { sqpoll_cpu: Some(1), ..RingOptions::default() };
        assert_eq!(bad.conflict(), Some("sqpoll_cpu needs sqpoll; add sqpoll"));
    }

    #[test]
    fn other_errors_are_not_retried() {
        let opts = RingOptions { sqpoll: true, ..RingOptions::default() };
        let mut calls = 0;
        let (e, what) = setup_with_fallback(&opts, |_| {
            calls += 1;
            Err::<(), _>(io::Error::from_raw_os_error(libc::EPERM))
        })
        .unwrap_err();
        assert_eq!((calls, e.raw_os_error()), (1, Some(libc::EPERM)));
        assert_eq!(what, "io_uring_setup with SQPOLL|SINGLE_ISSUER");
    }
}

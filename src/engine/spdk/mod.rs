//! The SPDK engine: per-worker NVMe queue pairs driven from userspace, no kernel in the I/O path.
//!
//! [`SpdkSession`] initialises the environment and attaches every controller named by `--trid` on the
//! main thread, before the workers exist. Each worker then builds its own [`SpdkEngine`] on its pinned
//! core: one I/O queue pair per namespace it drives (each namespace is a target, which
//! `worker::targets` deals over the workers as SPDK perf does) and DMA buffers on the controller's
//! NUMA node. Commands carry the
//! address of a per-slot context as their callback argument; the `extern "C"` trampoline hands each
//! completion to the worker's handler there and then, inside `spdk_nvme_qpair_process_completions`,
//! so that each completion is stamped when it is handled (as SPDK perf reads the TSC in its
//! `task_complete`), not when the whole batch has been processed. Doorbells are delayed to the next poll (perf's
//! `delay_cmd_submit`), so a batch costs one MMIO write on PCIe. Each queue pair is polled through
//! its own SPDK poll group, as perf polls, so that the driver path is perf's on every transport
//! (over TCP a group polls its sockets through one readiness check instead of a read on each).
//! This module and `spdk-sys` are the only places that touch SPDK.

pub mod ctrlr;
pub mod dma;
pub mod env;

use super::{Engine, EngineBuilder, EngineError, EngineInfo, Queued, Sends};
use crate::io::IoError;
use crate::io::{Direction, IoOp};
use ctrlr::{Controller, ControllerInfo, TridSpec};
use dma::DmaBuf;
use env::{EnvOptions, SpdkEnv};
use std::ffi::c_void;
use std::io;
use std::ptr::NonNull;
use std::sync::Arc;

const NAME: &str = "spdk";

#[derive(Debug, thiserror::Error)]
pub enum SpdkError {
    #[error(
        "no free hugepages for SPDK; reserve some (hugepages/setup.sh --mem 1G, or echo 512 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages), or pass --no-huge for fabrics targets"
    )]
    NoHugepages,
    #[error("hugetlbfs is not mounted; mount it (hugepages/setup.sh, or mount -t hugetlbfs nodev /dev/hugepages)")]
    NoHugetlbfs,
    #[error("SPDK's environment failed to start ({}); check the hugepage set-up with `nvmebench doctor`", io::Error::from_raw_os_error(*errno))]
    EnvInit { errno: i32 },
    #[error(
        "--trid '{trid}' is not a transport ID SPDK understands; write e.g. 'trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:4420 subnqn:NQN'"
    )]
    BadTrid { trid: String },
    #[error(
        "cannot attach the NVMe controller at '{trid}'; check that the target is running and the address is right (for PCIe: bound to vfio-pci or uio)"
    )]
    Connect { trid: String },
    #[error("'{trid}' has no active namespace {nsid}; it has {have}")]
    NoNamespace { trid: String, nsid: u32, have: String },
    #[error("'{trid}' has no active namespaces")]
    NoNamespaces { trid: String },
    #[error("the selected namespaces have different LBA sizes ({sizes}); pick namespaces of one format with ns:N")]
    MixedFormats { sizes: String },
    #[error("cannot allocate {bytes} bytes of DMA memory; reserve more hugepages or raise --mem-size")]
    DmaAlloc { bytes: usize },
    #[error(
        "spdk:interrupt needs SPDK 25.05 or newer (this nvmebench was built against {version}); rebuild it against a newer SPDK or use --engine spdk"
    )]
    InterruptsUnsupported { version: String },
    #[error(
        "SPDK could not enable interrupts on '{trid}' (they need the controller bound to vfio-pci, with MSI-X); bind it with scripts/nvme-bind.sh bind BDF vfio-pci or use --engine spdk"
    )]
    NoInterrupts { trid: String },
}

/// The SPDK version nvmebench was built against, as SPDK spells it (`SPDK v25.09`).
pub fn spdk_version() -> String {
    // SAFETY: the shim returns a pointer to a static NUL-terminated string.
    unsafe { std::ffi::CStr::from_ptr(spdk_sys::nvmebench_shim_version()) }.to_string_lossy().into_owned()
}

/// One namespace a worker can be given.
#[derive(Clone)]
pub struct NsRef {
    pub ctrlr: Arc<Controller>,
    pub nsid: u32,
    pub sector_bytes: u32,
    pub sectors: u64,
    pub max_transfer_bytes: u32,
    pub io_boundary_bytes: u32,
}

impl NsRef {
    /// How many commands SPDK may make of one I/O of `io_bytes` at offsets aligned to
    /// `align_bytes` on this namespace (see [`commands_per_io`]).
    pub fn commands_per_io(&self, io_bytes: u32, align_bytes: u64) -> u32 {
        commands_per_io(io_bytes, self.max_transfer_bytes, self.io_boundary_bytes, align_bytes)
    }
}

/// How often the admin queues are polled, given the controllers' keep-alive timeouts (ms, 0 for
/// none). SPDK sends a keep-alive from the admin poll once half the timeout has passed, so a poll
/// every eighth of the shortest timeout keeps it well inside; at most once a second, as SPDK perf
/// polls, because each poll wakes a thread on the cores the workers leave free, where on a small
/// machine the controller's own poller runs (SPDK's TCP or vfio-user target); at least every 10 ms.
fn admin_poll_interval(keep_alive_ms: impl Iterator<Item = u32>) -> std::time::Duration {
    use std::time::Duration;
    match keep_alive_ms.filter(|&k| k > 0).min() {
        Some(k) => Duration::from_millis(u64::from(k / 8)).clamp(Duration::from_millis(10), Duration::from_secs(1)),
        None => Duration::from_secs(1),
    }
}

/// The environment and every attached controller, for the length of a run.
pub struct SpdkSession {
    pub env: Arc<SpdkEnv>,
    pub controllers: Vec<Arc<Controller>>,
    pub namespaces: Vec<NsRef>,
    admin: Option<AdminPoller>,
}

/// A thread that polls every controller's admin queue (keep-alives, asynchronous events) while the
/// session lives, as SPDK perf does from its main core; workers never touch the admin queue.
struct AdminPoller {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl AdminPoller {
    fn start(controllers: Vec<Arc<Controller>>) -> AdminPoller {
        use std::sync::atomic::Ordering;
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let every = admin_poll_interval(controllers.iter().map(|c| c.keep_alive_ms()));
        let thread = std::thread::Builder::new()
            .name("nvmebench-admin".into())
            .spawn(move || {
                while !flag.load(Ordering::Acquire) {
                    for c in &controllers {
                        c.poll_admin();
                    }
                    std::thread::park_timeout(every);
                }
            })
            .ok();
        AdminPoller { stop, thread }
    }
}

impl Drop for AdminPoller {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Release);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

impl Drop for SpdkSession {
    fn drop(&mut self) {
        // The poller holds controller references: stop it before they are detached.
        self.admin.take();
    }
}

impl SpdkSession {
    /// Starts the environment and attaches each `--trid`, selecting `ns:N` or every active namespace;
    /// with `interrupts`, each controller's interrupts enabled (`spdk:interrupt`).
    pub fn attach(env_opts: &EnvOptions, trids: &[TridSpec], interrupts: bool) -> Result<SpdkSession, SpdkError> {
        let env = SpdkEnv::init(env_opts)?;
        let mut controllers = Vec::new();
        let mut namespaces = Vec::new();
        for spec in trids {
            let c = Arc::new(Controller::connect(env.clone(), spec, interrupts)?);
            let selected: Vec<_> = match spec.nsid {
                Some(n) => {
                    let ns =
                        c.info.namespaces.iter().find(|ns| ns.nsid == n).ok_or_else(|| SpdkError::NoNamespace {
                            trid: spec.trid.clone(),
                            nsid: n,
                            have: if c.info.namespaces.is_empty() {
                                "none".into()
                            } else {
                                c.info
                                    .namespaces
                                    .iter()
                                    .map(|n| format!("ns:{}", n.nsid))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            },
                        })?;
                    vec![ns.clone()]
                }
                None => c.info.namespaces.clone(),
            };
            if selected.is_empty() {
                return Err(SpdkError::NoNamespaces { trid: spec.trid.clone() });
            }
            namespaces.extend(selected.into_iter().map(|ns| NsRef {
                ctrlr: c.clone(),
                nsid: ns.nsid,
                sector_bytes: ns.sector_bytes,
                sectors: ns.sectors,
                max_transfer_bytes: ns.max_transfer_bytes,
                io_boundary_bytes: ns.io_boundary_bytes,
            }));
            controllers.push(c);
        }
        let mut sizes: Vec<u32> = namespaces.iter().map(|n| n.sector_bytes).collect();
        sizes.sort_unstable();
        sizes.dedup();
        if sizes.len() > 1 {
            return Err(SpdkError::MixedFormats {
                sizes: sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "),
            });
        }
        let admin = Some(AdminPoller::start(controllers.clone()));
        Ok(SpdkSession { env, controllers, namespaces, admin })
    }

    /// The capacity every worker can use: the smallest selected namespace.
    pub fn usable_bytes(&self) -> u64 {
        self.namespaces.iter().map(|n| n.sectors * u64::from(n.sector_bytes)).min().unwrap_or(0)
    }

    pub fn sector_bytes(&self) -> u32 {
        self.namespaces.first().map_or(512, |n| n.sector_bytes)
    }

    /// Trims and write-zeroes that some selected namespace's controller does not take (ONCS).
    pub fn unsupported_ops(&self) -> Vec<Direction> {
        let mut out = Vec::new();
        for n in &self.namespaces {
            for d in unsupported_ops(&n.ctrlr.info) {
                if !out.contains(&d) {
                    out.push(d);
                }
            }
        }
        out
    }

    pub fn infos(&self) -> Vec<ControllerInfo> {
        self.controllers.iter().map(|c| c.info.clone()).collect()
    }

    /// What SPDK will do to a run of `queue_depth` I/Os of up to `max_io_bytes` that the device
    /// does not see, one sentence each, as perf warns: I/Os SPDK splits into several commands (above
    /// the controller's MDTS, or across an I/O boundary), and a depth whose commands do not all fit
    /// in the I/O queue, the rest waiting in SPDK's software queue.
    pub fn queue_warnings(&self, queue_depth: u32, max_io_bytes: u32, options: &SpdkOptions) -> Vec<String> {
        let mut out = Vec::new();
        for ns in &self.namespaces {
            let c = &ns.ctrlr.info;
            let memory = queues_in_memory(&c.transport);
            let entries = if options.io_queue_size > 0 { options.io_queue_size } else { ns.ctrlr.io_queue_entries() };
            let commands = ns.commands_per_io(max_io_bytes, options.align_bytes);
            let by_size = commands_per_io(max_io_bytes, ns.max_transfer_bytes, 0, 0);
            let name = format!("{} ns:{}", c.trid, ns.nsid);
            if by_size > 1 {
                out.push(format!(
                    "I/Os of {} are larger than one command of {name} carries ({}, its MDTS), so SPDK splits each into {commands} commands",
                    crate::units::format_size(u64::from(max_io_bytes)),
                    crate::units::format_size(u64::from(ns.max_transfer_bytes))
                ));
            } else if commands > by_size {
                out.push(format!(
                    "I/Os of {} can cross {name}'s {} I/O boundary, where SPDK splits them in two",
                    crate::units::format_size(u64::from(max_io_bytes)),
                    crate::units::format_size(u64::from(ns.io_boundary_bytes))
                ));
            }
            let holds = queue_holds(memory, entries);
            let needed = u64::from(queue_depth) * u64::from(commands);
            if needed > u64::from(holds) {
                let kept = if memory {
                    format!("{entries} entries less SPDK's cap of {} completions per poll", entries - holds)
                } else {
                    format!("{entries} entries less one")
                };
                let fix = if options.io_queue_size > 0 && options.io_queue_size < ns.ctrlr.io_queue_entries() {
                    "lower --qd or raise --io-queue-size"
                } else if commands > 1 {
                    "lower --qd or the block size"
                } else {
                    "lower --qd"
                };
                out.push(format!(
                    "--qd {queue_depth} needs {needed} commands outstanding and the I/O queue of {name} holds {holds} ({kept}), so SPDK queues the rest in software and the device sees a depth of {}; {fix}",
                    device_queue_depth(queue_depth, commands, holds),
                ));
            }
        }
        out
    }

    /// A description for reports: `trid ns:N` of each selected namespace.
    pub fn describe(&self) -> String {
        self.namespaces.iter().map(|n| format!("{} ns:{}", n.ctrlr.info.trid, n.nsid)).collect::<Vec<_>>().join("; ")
    }
}

/// The operations a controller does not take (its ONCS bits): Dataset Management, Write Zeroes.
pub fn unsupported_ops(c: &ControllerInfo) -> Vec<Direction> {
    let mut out = Vec::new();
    if !c.deallocate {
        out.push(Direction::Trim);
    }
    if !c.write_zeroes {
        out.push(Direction::WriteZeroes);
    }
    out
}

/// Queue-pair knobs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpdkOptions {
    /// Fail this many commands per queue pair: `(write?, count, sct, sc)`.
    pub inject: Option<(bool, u32, u8, u8)>,
    /// I/O queue entries (0: as many as the controller allows, like perf).
    pub io_queue_size: u32,
    /// `--poll-policy` (`None`: [`PollPolicy::default_for`] the transport).
    pub poll_policy: Option<PollPolicy>,
    /// `--max-completions`: completions reaped per poll at most, over the policy's.
    pub max_completions: Option<u32>,
    /// Ring the submission doorbell once per poll (SPDK's `delay_cmd_submit`, perf's choice) rather
    /// than with every command: one doorbell write per poll for everything queued since the last.
    pub delay_cmd_submit: bool,
    /// `--poll-gap`: the worker's wait between polls that found nothing while more than one command
    /// is outstanding (see `idle_poll_gap_ns`), over the policy's.
    pub poll_gap_ns: Option<u32>,
    /// `spdk:interrupt`: the controllers were attached with interrupts enabled, and a worker with
    /// nothing to reap sleeps until its queue pair's interrupt (perf's `-E`).
    pub interrupt: bool,
    /// The workload's offset alignment, for how many commands SPDK makes of an I/O (0: unknown,
    /// taken as unaligned).
    pub align_bytes: u64,
    /// The workload writes: each queue pair keeps spare buffers for writes queued from completion
    /// callbacks (see `Engine::write_spares`).
    pub writes: bool,
}

pub struct SpdkBuilder {
    pub namespaces: Vec<NsRef>,
    pub options: SpdkOptions,
    pub buffer_seed: u64,
}

impl EngineBuilder for SpdkBuilder {
    type Engine = SpdkEngine;

    fn build(&self, worker: usize, queue_depth: u32, max_io_bytes: u32) -> Result<SpdkEngine, EngineError> {
        let ns = self.namespaces[worker % self.namespaces.len()].clone();
        SpdkEngine::new(ns, queue_depth, max_io_bytes, self.options, self.buffer_seed ^ worker as u64)
    }
}

/// Where a command's completion goes: the engine's ring and the slot number.
struct SlotCtx {
    ring: *mut Ring,
    slot: u32,
}

/// The worker's completion handler while `poll` runs, type-erased because the trampoline cannot
/// be generic.
type Handler = dyn FnMut(u32, Result<(), IoError>);

/// The same for `poll_refill`: it may hand back the slot's next I/O.
type RefillHandler = dyn FnMut(u32, Result<(), IoError>) -> Option<IoOp>;

/// What queuing a command takes, reachable from the trampoline so that a slot's next command can
/// be queued from inside its completion. Raw pointers into the engine, which owns all of them.
#[derive(Clone, Copy)]
struct Submitter {
    ns: *mut spdk_sys::spdk_nvme_ns,
    qpair: *mut spdk_sys::spdk_nvme_qpair,
    bufs: *mut u8,
    slot_bytes: usize,
    ctx: *const SlotCtx,
    sector_shift: u32,
}

impl Submitter {
    /// Queues `op` in `slot`, with buffer `buf` (the slot's own, see [`Spares`]); SPDK's return code.
    ///
    /// # Safety
    /// On the engine's thread, with the engine (its namespace, queue pair, buffers and slot
    /// contexts) alive, `slot` free (below the queue depth, its previous command completed) and
    /// `buf` one of the allocation's buffers that no command in flight uses.
    #[inline]
    unsafe fn queue(&self, slot: u32, buf: u32, op: &IoOp) -> i32 {
        let lba = op.offset >> self.sector_shift;
        let count = op.len >> self.sector_shift;
        let (ns, qp, cb) = (self.ns, self.qpair, Some(on_complete as _));
        // SAFETY (every arm), per this function's contract: ns and qpair are live and this thread's;
        // the buffer (inside the allocation) is large enough for `op.len` and untouched until the
        // completion; the slot's context outlives the command; `on_complete` matches
        // spdk_nvme_cmd_cb.
        unsafe {
            let buf = self.bufs.add(buf as usize * self.slot_bytes).cast::<c_void>();
            let arg = self.ctx.add(slot as usize).cast_mut().cast::<c_void>();
            match op.dir {
                Direction::Read => spdk_sys::spdk_nvme_ns_cmd_read(ns, qp, buf, lba, count, cb, arg, 0),
                Direction::Write => spdk_sys::spdk_nvme_ns_cmd_write(ns, qp, buf, lba, count, cb, arg, 0),
                // Write Zeroes carries no data.
                Direction::WriteZeroes => spdk_sys::spdk_nvme_ns_cmd_write_zeroes(ns, qp, lba, count, cb, arg, 0),
                // Flush carries no range and no data.
                Direction::Flush => spdk_sys::spdk_nvme_ns_cmd_flush(ns, qp, cb, arg),
                // The shim builds the one range on its stack and SPDK copies it.
                Direction::Trim => spdk_sys::nvmebench_shim_ns_cmd_deallocate(ns, qp, lba, count, cb, arg),
            }
        }
    }
}

/// What the trampoline reaches through a slot's context.
struct Ring {
    /// The handler of the `poll` (or `poll_refill`) in progress; both `None` outside them. Their
    /// lifetimes are erased: the call sets one and clears it before returning, so it never outlives
    /// the closure it points to.
    handler: Option<NonNull<Handler>>,
    refill: Option<NonNull<RefillHandler>>,
    /// Completions handled during this `poll`, and next commands queued from them.
    reaped: u32,
    refilled: u32,
    /// Completions that arrived outside `poll` (SPDK aborting queued commands), handed over on the
    /// next one.
    late: Vec<(u32, u16)>,
    /// Next commands SPDK had no request for (`-ENOMEM`), queued again at the next poll. They
    /// keep their issue stamps: the wait is part of their latency.
    bounced: Vec<(u32, IoOp)>,
    /// A next command SPDK refused outright: the queue pair is unusable.
    refused: Option<i32>,
    submit: Submitter,
    spares: Spares,
    /// A panic of the handler, caught so it does not unwind through C, resumed after it.
    panic: Option<Box<dyn std::any::Any + Send>>,
}

/// Which buffer each slot's command uses, and the spare buffers writes queued from completion
/// callbacks go out in (`Engine::write_spares`): such a write takes a spare the worker prepared
/// ahead (its pattern restored and its stamp written while the device worked), and the slot's own
/// buffer becomes a spare to prepare after the poll, so a callback never fills a buffer. Without
/// spares (workloads that do not write) every slot keeps its own buffer and none of this is used.
struct Spares {
    /// Per slot, its buffer (empty: the slot's own index, no spares).
    map: Box<[u32]>,
    /// Per buffer, whether a read landed in it since it was last prepared (or it never was).
    dirty: Box<[bool]>,
    /// Spares prepared and free, taken in order.
    prepared: Vec<u32>,
    /// Spares waiting to be prepared.
    to_prepare: Vec<u32>,
}

impl Spares {
    /// `count` spares beside `slots` buffers (none: no map at all).
    fn new(slots: u32, count: u32) -> Spares {
        if count == 0 {
            return Spares { map: Box::new([]), dirty: Box::new([]), prepared: Vec::new(), to_prepare: Vec::new() };
        }
        Spares {
            map: (0..slots).collect(),
            // The engine's own pseudo-random fill is not the worker's pattern.
            dirty: vec![true; (slots + count) as usize].into_boxed_slice(),
            prepared: Vec::with_capacity(count as usize),
            to_prepare: (slots..slots + count).rev().collect(),
        }
    }

    /// The buffer of `slot` for a command of `dir` queued the ordinary way (its buffer as the
    /// worker filled it); a read marks it dirty.
    #[inline]
    fn buffer_of(&mut self, slot: u32, dir: Direction) -> u32 {
        if self.map.is_empty() {
            return slot;
        }
        let b = self.map[slot as usize];
        if dir == Direction::Read {
            self.dirty[b as usize] = true;
        }
        b
    }

    /// The buffer for a command queued from a completion callback: a write takes the next prepared
    /// spare (the worker hands over no more writes there than it has prepared), and the slot's old
    /// buffer waits to be prepared.
    #[inline]
    fn refill_buffer(&mut self, slot: u32, dir: Direction) -> u32 {
        if dir == Direction::Write {
            if let Some(spare) = self.prepared.pop() {
                let old = std::mem::replace(&mut self.map[slot as usize], spare);
                self.to_prepare.push(old);
                return spare;
            }
            debug_assert!(self.map.is_empty(), "the worker hands over a write only with a spare prepared for it");
        }
        self.buffer_of(slot, dir)
    }
}

/// Runs on the worker's thread inside `spdk_nvme_qpair_process_completions`.
///
/// The handler runs under `catch_unwind`, so no unwinding crosses into C; a panic is kept and
/// resumed by `poll` once SPDK has returned.
extern "C" fn on_complete(arg: *mut c_void, cpl: *const spdk_sys::spdk_nvme_cpl) {
    // SAFETY: `arg` is the address of a SlotCtx in the engine's boxed slice, which outlives every
    // command it was passed to (the qpair is freed before the contexts); `ring` points into the
    // engine's boxed Ring, and no Rust reference to it is live while SPDK runs callbacks (poll holds
    // none across the call). `cpl` is valid for the duration of the callback.
    let (ring, slot, status) = unsafe {
        let ctx = &*(arg as *const SlotCtx);
        (&mut *ctx.ring, ctx.slot, cpl_status(&*cpl))
    };
    if let Some(refill) = ring.refill {
        ring.reaped += 1;
        if ring.panic.is_some() {
            return;
        }
        let call = std::panic::AssertUnwindSafe(|| {
            // SAFETY: as for `handler` below, set by the `poll_refill` waiting for this callback.
            unsafe { (*refill.as_ptr())(slot, decode_status(status)) }
        });
        match std::panic::catch_unwind(call) {
            Ok(Some(op)) => {
                // Queued before SPDK rings this pass's doorbells, as perf submits from its callback.
                let buf = ring.spares.refill_buffer(slot, op.dir);
                // SAFETY: on the engine's thread inside its own poll; this slot's command has just
                // completed, so its buffer (or the prepared spare it took) and context are free.
                match unsafe { ring.submit.queue(slot, buf, &op) } {
                    0 => {}
                    rc if rc == -libc::ENOMEM => ring.bounced.push((slot, op)),
                    rc => ring.refused = Some(rc),
                }
                ring.refilled += 1;
            }
            Ok(None) => {}
            Err(p) => ring.panic = Some(p),
        }
        return;
    }
    let Some(handler) = ring.handler else {
        ring.late.push((slot, status));
        return;
    };
    ring.reaped += 1;
    if ring.panic.is_some() {
        // The worker is going down; what completes now is not counted.
        return;
    }
    let call = std::panic::AssertUnwindSafe(|| {
        // SAFETY: `handler` was set by the `poll` on this thread that is waiting for this very
        // callback to return, from a closure that lives until `poll` returns; nothing else uses it.
        unsafe { (*handler.as_ptr())(slot, decode_status(status)) }
    });
    if let Err(p) = std::panic::catch_unwind(call) {
        ring.panic = Some(p);
    }
}

/// The completion's status word (phase tag and status field), read in place: the upper half of
/// the entry's Dword 3, where the NVMe specification puts it (the shim's `status_raw`, without a
/// call across the language boundary on every completion).
#[inline(always)]
fn cpl_status(cpl: &spdk_sys::spdk_nvme_cpl) -> u16 {
    const _: () = assert!(std::mem::size_of::<spdk_sys::spdk_nvme_cpl>() == 16, "a completion entry is 16 bytes");
    (cpl._bindgen_opaque_blob[3] >> 16) as u16
}

/// Decodes the completion status word: `Ok` or the NVMe status code type and code.
#[inline]
pub fn decode_status(raw: u16) -> Result<(), IoError> {
    let sc = ((raw >> 1) & 0xff) as u8;
    let sct = ((raw >> 9) & 0x7) as u8;
    if sc == 0 && sct == 0 { Ok(()) } else { Err(IoError::Nvme { sct, sc }) }
}

/// One worker's queue pair on one namespace.
pub struct SpdkEngine {
    // Drop order matters: the qpair (which may reference the buffers and contexts) is freed in Drop
    // before the fields below are dropped, then its (by then empty) poll group.
    qpair: NonNull<spdk_sys::spdk_nvme_qpair>,
    /// `None` with error injection: SPDK completes injected errors only when the qpair itself is
    /// polled, and a TCP poll group polls a qpair only when its socket has data.
    group: Option<PollGroup>,
    /// The slots' callback contexts; SPDK's commands and the ring's submitter point into them.
    _ctx: Box<[SlotCtx]>,
    ring: Box<Ring>,
    bufs: DmaBuf,
    /// The submission queue's ring, where the queues are memory: allocated here so that it sits
    /// on the controller's NUMA node (SPDK puts the completion queue there itself, and the
    /// submission queue on any node). Freed after the qpair, which SPDK never frees it with.
    _sq: Option<DmaBuf>,
    ns_ref: NsRef,
    queue_depth: u32,
    entries: u32,
    polling: Polling,
    delay_cmd_submit: bool,
    /// SPDK perf's `-E`: the next poll sleeps in the poll group's wait (see `wait`).
    interrupt: bool,
    /// Set by `wait` and `wait_for` in interrupt mode: the next poll sleeps until an interrupt, or
    /// this many ns pass.
    armed: Option<u64>,
    /// What the device sees of the queue depth (see [`device_queue_depth`]), and the facts behind it.
    device_qd: u32,
    commands_per_io: u32,
    holds: u32,
    /// Buffers beside the slots' for writes queued from callbacks (see [`Spares`]).
    spare_count: u32,
    /// Where this lane's memory and core are (NUMA nodes), for the report.
    facts: Vec<(String, String)>,
    /// The controller's reset count when this queue pair was last known connected.
    reset_generation: u64,
}

/// The longest a worker sleeps in interrupt mode before it looks at the clock again (the stop,
/// the drain timeout, interval boundaries): a device that stops answering is noticed within it.
/// Whole milliseconds, so that the closed loop's sleep is one epoll_wait, as perf -E's.
const WAIT_TIMEOUT_NS: u64 = 10_000_000;

impl SpdkEngine {
    fn new(
        ns_ref: NsRef,
        queue_depth: u32,
        max_io_bytes: u32,
        options: SpdkOptions,
        seed: u64,
    ) -> Result<SpdkEngine, EngineError> {
        let setup = |what, source| EngineError::Setup { engine: NAME, what, source };
        let ctrlr = ns_ref.ctrlr.as_ptr();
        let ns =
            ns_ref.ctrlr.ns(ns_ref.nsid).ok_or_else(|| setup("looking up the namespace", io::Error::other("gone")))?;
        let memory_queues = queues_in_memory(&ns_ref.ctrlr.info.transport);
        let numa = ns_ref.ctrlr.info.numa_node.unwrap_or(-1);
        let mut opts = spdk_sys::spdk_nvme_io_qpair_opts::default();
        let size = std::mem::size_of::<spdk_sys::spdk_nvme_io_qpair_opts>();
        // SAFETY: a live controller and an opts struct writable for `size` bytes.
        unsafe { spdk_sys::spdk_nvme_ctrlr_get_default_io_qpair_opts(ctrlr, &mut opts, size) };
        // The default is already the largest the controller allows (see Controller::connect).
        if options.io_queue_size > 0 {
            opts.io_queue_size = options.io_queue_size;
        }
        let entries = opts.io_queue_size;
        let commands = ns_ref.commands_per_io(max_io_bytes, options.align_bytes);
        // Each I/O SPDK splits takes a request of its own besides its children's (as perf sizes it).
        let per_io = if commands > 1 { commands + 1 } else { 1 };
        opts.io_queue_requests = opts.io_queue_requests.max(queue_depth * per_io * 2);
        // SPDK refuses delayed doorbells with interrupts: a command's doorbell is rung as it is
        // queued, since no poll follows to ring it (perf -E turns them off too).
        let delay_cmd_submit = options.delay_cmd_submit && !options.interrupt;
        opts.__bindgen_anon_1.delay_cmd_submit = delay_cmd_submit;
        let sq = if memory_queues {
            let bytes = entries as usize * 64;
            let align = bytes.next_power_of_two().max(4096);
            Some(
                DmaBuf::ring(bytes, align, numa)
                    .map_err(|e| setup("allocating the submission queue", io::Error::other(e.to_string())))?,
            )
        } else {
            None
        };
        if let Some(sq) = &sq {
            opts.sq.vaddr = sq.slot_ptr(0).cast();
            opts.sq.paddr = 0;
            opts.sq.buffer_size = (entries as usize * 64) as u64;
        }
        let group = if options.inject.is_none() {
            // Connected below, once it is in its poll group.
            opts.create_only = true;
            Some(PollGroup::new().ok_or_else(|| setup("creating a poll group", io::Error::other("out of memory")))?)
        } else {
            None
        };
        // SAFETY: a live controller; opts valid for the call (SPDK copies it; the submission queue's
        // memory it points to lives in `sq`, which the engine keeps past the qpair).
        let qp = unsafe { spdk_sys::spdk_nvme_ctrlr_alloc_io_qpair(ctrlr, &opts, size) };
        let qpair = NonNull::new(qp).ok_or_else(|| {
            setup(
                "allocating an I/O queue pair",
                io::Error::other(format!("the controller refused a queue of {} entries", opts.io_queue_size)),
            )
        })?;
        // From here on, a failure frees the qpair (before `sq` drops).
        let free_qpair = |e| {
            // SAFETY: the qpair was just allocated and has no commands.
            unsafe { spdk_sys::spdk_nvme_ctrlr_free_io_qpair(qpair.as_ptr()) };
            e
        };
        if let Err(e) = group.as_ref().map_or(Ok(()), |g| g.connect(ctrlr, qpair)) {
            return Err(free_qpair(setup("connecting an I/O queue pair", e)));
        }
        let polling = Polling::resolve(&options, &ns_ref.ctrlr.info.transport, queue_depth, entries);
        // A poll refills at most as many slots as it reaps: that many spares cover every write
        // queued from its callbacks.
        let spare_count = if options.writes { queue_depth.min(polling.applied) } else { 0 };
        let bufs = DmaBuf::new((queue_depth + spare_count) as usize, max_io_bytes as usize, numa, seed)
            .map_err(|e| free_qpair(setup("allocating DMA buffers", io::Error::other(e.to_string()))))?;
        if let Some((write, count, sct, sc)) = options.inject {
            let opc = if write { 0x01 } else { 0x02 };
            // SAFETY: a live controller and the qpair just allocated from it; plain values otherwise.
            let rc = unsafe {
                spdk_sys::spdk_nvme_qpair_add_cmd_error_injection(ctrlr, qpair.as_ptr(), opc, true, 0, count, sct, sc)
            };
            if rc != 0 {
                return Err(free_qpair(setup("adding error injection", io::Error::from_raw_os_error(-rc))));
            }
        }
        let mut ring = Box::new(Ring {
            handler: None,
            refill: None,
            reaped: 0,
            refilled: 0,
            late: Vec::with_capacity(queue_depth as usize),
            bounced: Vec::with_capacity(queue_depth as usize),
            refused: None,
            submit: Submitter {
                ns: ns.as_ptr(),
                qpair: qpair.as_ptr(),
                bufs: bufs.slot_ptr(0),
                slot_bytes: bufs.slot_bytes(),
                ctx: std::ptr::null(),
                sector_shift: ns_ref.sector_bytes.trailing_zeros(),
            },
            panic: None,
            spares: Spares::new(queue_depth, spare_count),
        });
        let ring_ptr: *mut Ring = &mut *ring;
        let ctx: Box<[SlotCtx]> = (0..queue_depth).map(|slot| SlotCtx { ring: ring_ptr, slot }).collect();
        ring.submit.ctx = ctx.as_ptr();
        ns_ref.ctrlr.gate.join();
        let reset_generation = ns_ref.ctrlr.gate.generation();
        let holds = queue_holds(memory_queues, entries);
        let node = |n: Option<i32>| n.map_or("unknown".to_string(), |n| n.to_string());
        // SAFETY: plain libc call; the worker is pinned already (engines are built on their core).
        let cpu = unsafe { libc::sched_getcpu() };
        let mut facts = vec![
            ("controller".to_string(), ns_ref.ctrlr.info.trid.clone()),
            ("controller_node".to_string(), node(ns_ref.ctrlr.info.numa_node)),
            ("core".to_string(), cpu.to_string()),
            ("core_node".to_string(), node(usize::try_from(cpu).ok().and_then(dma::node_of_cpu))),
            ("buffer_node".to_string(), node(bufs.node())),
        ];
        if let Some(sq) = &sq {
            facts.push(("sq_node".to_string(), node(sq.node())));
        }
        Ok(SpdkEngine {
            reset_generation,
            qpair,
            group,
            _ctx: ctx,
            ring,
            bufs,
            _sq: sq,
            ns_ref,
            queue_depth,
            entries,
            polling,
            delay_cmd_submit,
            interrupt: options.interrupt,
            armed: None,
            device_qd: device_queue_depth(queue_depth, commands, holds),
            commands_per_io: commands,
            holds,
            spare_count,
            facts,
        })
    }
}

impl SpdkEngine {
    /// What every poll does first: park for a controller reset that wants the queue pair, queue
    /// again the commands SPDK had no request for last time. Returns how many late completions wait.
    #[inline]
    fn before_poll(&mut self) -> u32 {
        if self.ns_ref.ctrlr.gate.wanted() {
            self.ns_ref.ctrlr.gate.park();
        }
        if !self.ring.bounced.is_empty() {
            self.requeue_bounced();
        }
        self.ring.late.len() as u32
    }

    #[cold]
    fn requeue_bounced(&mut self) {
        let mut kept = 0;
        for i in 0..self.ring.bounced.len() {
            let (slot, op) = self.ring.bounced[i];
            // The buffer it was first queued with (a spare it took stays the slot's).
            let buf = self.ring.spares.buffer_of(slot, op.dir);
            // SAFETY: this thread's engine, alive; the slot's previous command completed.
            if unsafe { self.ring.submit.queue(slot, buf, &op) } != 0 {
                self.ring.bounced[kept] = (slot, op);
                kept += 1;
            }
        }
        self.ring.bounced.truncate(kept);
    }

    /// Lets SPDK process completions with the handler `poll` or `poll_refill` installed, then
    /// removes it. In interrupt mode, after `wait`, it sleeps until the queue pair's interrupt first.
    #[inline]
    fn process(&mut self, max: u32) -> Result<(), EngineError> {
        // No limit of ours (perf's policy) only when the caller takes all there can be.
        let limit = match self.polling.limit {
            0 if max >= self.queue_depth => 0,
            0 => max,
            l => l.min(max),
        };
        self.ring.reaped = 0;
        self.ring.refilled = 0;
        let rc = if let Some(timeout_ns) = self.armed.take() {
            self.sleep(timeout_ns)
        } else {
            // SAFETY: the group and its one qpair are live and used only by this thread; callbacks
            // run before this returns and reach the ring only through the slot contexts (no Rust
            // reference to it is held here).
            unsafe {
                match &self.group {
                    Some(g) => g.process(limit),
                    None => spdk_sys::spdk_nvme_qpair_process_completions(self.qpair.as_ptr(), limit),
                }
            }
        };
        self.ring.handler = None;
        self.ring.refill = None;
        if let Some(p) = self.ring.panic.take() {
            std::panic::resume_unwind(p);
        }
        if rc < 0 {
            self.reconnect_after_reset(rc)?;
        }
        Ok(())
    }

    /// Interrupt mode: sleeps in the poll group's wait until the queue pair's interrupt (or
    /// `timeout_ns`, at most [`WAIT_TIMEOUT_NS`]); SPDK's handler then processes its completions, which reach the
    /// installed handler exactly as a poll's do. A wake that brought none (the timeout, a wake whose
    /// completions an earlier poll took, the group's disconnect event) looks at the queue pair
    /// the polled way, which also hears of a queue pair that failed. A completion count or 0, or a
    /// negative errno as `PollGroup::process` returns.
    #[cold]
    #[inline(never)]
    fn sleep(&mut self, timeout_ns: u64) -> i32 {
        let g = self.group.as_ref().expect("interrupt mode refuses error injection, so the engine has its poll group");
        // SAFETY: a live group whose one qpair is this thread's; callbacks reach the ring only
        // through the slot contexts, as in `process`.
        let rc = unsafe { spdk_sys::nvmebench_shim_poll_group_wait(g.ptr.as_ptr(), timeout_ns as i64) };
        if rc < 0 && rc != -libc::EINTR {
            return rc;
        }
        if self.ring.reaped > 0 {
            return self.ring.reaped as i32;
        }
        // SAFETY: as above.
        unsafe { g.process(0) }
    }

    /// A failed queue pair after a reset of its controller: fabrics queue pairs come back
    /// disconnected (their commands aborted), and only their own thread may reconnect them. Any
    /// other failure ends the run.
    #[cold]
    fn reconnect_after_reset(&mut self, rc: i32) -> Result<(), EngineError> {
        let generation = self.ns_ref.ctrlr.gate.generation();
        if rc != -libc::ENXIO || generation == self.reset_generation {
            return Err(runtime("processing completions", rc));
        }
        // SAFETY: the controller and this thread's qpair are live; the reset is over (generation
        // moved on after spdk_nvme_ctrlr_reset returned).
        let rc = unsafe { spdk_sys::spdk_nvme_ctrlr_reconnect_io_qpair(self.qpair.as_ptr()) };
        match rc {
            0 => {
                self.reset_generation = generation;
                Ok(())
            }
            // Still resetting (another reset came): try again at the next poll.
            rc if rc == -libc::EAGAIN => Ok(()),
            rc => Err(runtime("reconnecting the queue pair after a controller reset", rc)),
        }
    }
}

/// Whether the transport's queues are memory the controller reads and writes (PCIe, and vfio-user,
/// which an initiator drives like PCIe), rather than messages over a fabric (TCP, RDMA, FC), where
/// the command and completion queues are the initiator's own and the wire carries capsules.
pub fn queues_in_memory(transport: &str) -> bool {
    transport.eq_ignore_ascii_case("pcie") || transport.eq_ignore_ascii_case("vfiouser")
}

/// How a worker polls its queue pair: how many completions one poll may reap, and whether it waits
/// after a poll that found nothing (`--poll-policy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PollPolicy {
    /// SPDK perf's: polls back to back, each reaping as many completions as SPDK allows (perf's
    /// `-C 0`: SPDK's own cap, a quarter of the queue's entries and at most 128 where the queues are
    /// memory, every outstanding command over a fabric).
    Perf,
    /// Tuned on emulated controllers: half the queue depth per poll ([`tuned_max_completions`]) and,
    /// where the queues are memory, 100 ns between a poll that found nothing and the next.
    Tuned,
}

impl PollPolicy {
    /// The default: perf's where the queues are memory (PCIe, vfio-user), tuned over a fabric.
    ///
    /// Where the queues are memory, the tuned policy's figures come from emulated controllers only
    /// (SPDK's vfio-user null target, whose controller is a CPU core of the same machine, and QEMU):
    /// its gap leaves alone completion-queue lines a core-emulated controller is writing, which a
    /// real drive posts by DMA, and re-measured on a faster host it moved one depth by half and
    /// none elsewhere (QD1 0.97x, QD32 1.49x, QD128 0.98x perf's IOPS; 5 rounds). So the default
    /// is perf's. Over a fabric the tuned bound stays the default because what it avoids is
    /// physical and was measured as such: a batch split at the bound sends its remainder's
    /// successors as a TCP segment of their own, which the target pays for in NET_RX softirqs on its
    /// core (see [`tuned_max_completions`]).
    pub fn default_for(memory_queues: bool) -> PollPolicy {
        if memory_queues { PollPolicy::Perf } else { PollPolicy::Tuned }
    }

    pub fn name(self) -> &'static str {
        match self {
            PollPolicy::Perf => "perf",
            PollPolicy::Tuned => "tuned",
        }
    }
}

/// The per-poll cap SPDK 25.09 applies to a queue pair of `entries` entries when asked for `limit`
/// completions (0: no limit of the caller's). Where the queues are memory (the PCIe transport, which
/// vfio-user shares), SPDK caps every poll at a quarter of the entries, at least 1 and at most 128,
/// so that the completion doorbell cannot wrap (`max_completions_cap` in nvme_pcie_common.c), and
/// takes a caller's limit only below it. Over TCP and RDMA a queue pair holds `entries - 1`
/// commands and a poll reaps at most that many.
pub fn spdk_applied_max_completions(memory_queues: bool, entries: u32, limit: u32) -> u32 {
    let cap = if memory_queues { (entries / 4).clamp(1, 128) } else { entries.saturating_sub(1).max(1) };
    if limit == 0 { cap } else { limit.min(cap) }
}

/// How many commands a queue pair of `entries` entries keeps outstanding at the device; the rest
/// wait in SPDK's software queue. Where the queues are memory, SPDK keeps back as many entries as a
/// poll may reap (its cap, see [`spdk_applied_max_completions`]), so the completion queue can never
/// overflow: `entries - cap` trackers (perf warns against the same). Over a fabric, `entries - 1`.
pub fn queue_holds(memory_queues: bool, entries: u32) -> u32 {
    if memory_queues {
        entries.saturating_sub(spdk_applied_max_completions(true, entries, 0)).max(1)
    } else {
        entries.saturating_sub(1).max(1)
    }
}

/// How many commands SPDK may make of one I/O of `io_bytes` at offsets aligned to `align_bytes`:
/// one per `max_transfer_bytes` (the controller's MDTS, or the transport's limit) or part of it,
/// and where the namespace has an I/O boundary (`boundary_bytes`, 0 for none) that such an I/O can
/// cross, one more (SPDK splits there too; perf counts the same one more). An I/O at most a
/// boundary long, dividing it and aligned to its own size never crosses one.
pub fn commands_per_io(io_bytes: u32, max_transfer_bytes: u32, boundary_bytes: u32, align_bytes: u64) -> u32 {
    let by_size = if max_transfer_bytes == 0 { 1 } else { io_bytes.div_ceil(max_transfer_bytes).max(1) };
    let io = u64::from(io_bytes.max(1));
    let b = u64::from(boundary_bytes);
    let crosses = b > 0 && !(io <= b && b % io == 0 && align_bytes > 0 && align_bytes % io == 0);
    by_size + u32::from(crosses)
}

/// The queue depth the device can see, in I/Os: `queue_depth`, or fewer when its commands
/// (`commands` per I/O) do not all fit in what the queue pair holds.
pub fn device_queue_depth(queue_depth: u32, commands: u32, holds: u32) -> u32 {
    queue_depth.min(holds / commands.max(1)).max(1)
}

/// The tuned bound on completions per poll: half the queue depth, at least one, and over a fabric
/// a sixteenth of the depth more. A poll hands each completed slot's successor over in its
/// callback, and SPDK rings the doorbell for all of them when the poll returns; reaping a whole
/// queue's completions in one poll holds the first successors back until the last completion has
/// been handled, so the controller idles while the initiator works and the initiator idles while
/// the controller does. Two half-queue polls overlap the two: the first half's successors are at
/// the controller while the second half is reaped (fio's `iodepth_batch_complete_max` idea).
/// Measured over vfio-user (null target, 4 alternating 3 s rounds against spdk_nvme_perf -L at its
/// default of no bound): a whole queue per poll gave 0.97-0.99x perf's IOPS at QD2 to QD64; half
/// the depth gave QD2 1.24x, QD4 1.36x, QD8 1.21x, QD16 1.15x, QD32 1.10x (1.01-1.02x against perf
/// given the same bound with `-C`), QD64 1.07x; QD128 is bound by the target either way. Those are
/// an emulated controller's figures (its controller runs on a core of the same machine), and on
/// a faster host they no longer held (see [`PollPolicy::default_for`]), so where the queues are
/// memory this is an option (`--poll-policy tuned`), not the default. Over NVMe/TCP, where the
/// successors are capsules sent at the next poll, the same holds below the target's saturation
/// (loopback target, 4 alternating 3 s rounds against perf: half the depth 1.14x perf's IOPS at QD8
/// and 1.36x at QD16, a whole queue 1.01x at both).
///
/// The fabric's sixteenth: the two batches a half bound makes are not exactly halves. Counted per
/// poll over the loopback TCP target at QD32 with no bound, they settled at 15 and 17; a bound of
/// exactly 16 split every 17 into 16 and a lone completion (17% of busy polls reaped such a
/// remainder), and each remainder's successor went out in a capsule write of its own: one more TCP
/// segment, which the saturated target pays for on its own core (NET_RX softirqs there per I/O,
/// three 3 s samples: 0.118-0.126 with a bound of 16, 0.093-0.094 with no bound, 0.094-0.103 under
/// perf). Half plus a sixteenth lets a batch run an I/O or two over the half without being split,
/// and stays far enough below the whole queue that the batches cannot merge into one (a bound of
/// 12 at QD16 let them drift to 12 and 4, and cost 15%). Against half, 6 alternating 3 s rounds,
/// IOPS as a ratio of perf's: QD16 1.344x (half 1.357x), QD32 1.035x (0.986x), QD64 1.008x
/// (1.012x), QD128 1.019x (1.013x). Where the queues are memory a split batch costs one more
/// doorbell write, not a segment, and the half stays (vfio-user, the same rounds: level at QD16
/// and QD128).
pub fn tuned_max_completions(queue_depth: u32, memory_queues: bool) -> u32 {
    let slack = if memory_queues { 0 } else { queue_depth / 16 };
    (queue_depth / 2 + slack).max(1)
}

/// The tuned wait between polls that found nothing (see `idle_poll_gap_ns`): 100 ns where the
/// completion queue is memory the controller writes, none over a fabric, where a poll reads a
/// socket and there is no completion-queue line to leave alone.
pub fn tuned_poll_gap_ns(memory_queues: bool) -> u32 {
    if memory_queues { 100 } else { 0 }
}

/// The polling one queue pair runs with, and the numbers SPDK applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Polling {
    /// What the engine line calls it: `perf`, `tuned`, `custom` (a policy with `--max-completions`
    /// or `--poll-gap` changing one of its numbers) or `interrupt`.
    pub label: &'static str,
    /// The limit passed to SPDK per poll (0: none of ours, SPDK's own cap, as perf passes).
    pub limit: u32,
    /// What SPDK actually reaps per poll at most.
    pub applied: u32,
    /// Spin between a poll that found nothing and the next.
    pub gap_ns: u32,
}

impl Polling {
    /// The polling of `options` on a queue pair of `entries` entries over `transport`, at
    /// `queue_depth`.
    pub fn resolve(options: &SpdkOptions, transport: &str, queue_depth: u32, entries: u32) -> Polling {
        let memory = queues_in_memory(transport);
        if options.interrupt {
            // SPDK's interrupt handler processes each queue pair with no limit of the caller's.
            return Polling {
                label: "interrupt",
                limit: 0,
                applied: spdk_applied_max_completions(memory, entries, 0),
                gap_ns: 0,
            };
        }
        let policy = options.poll_policy.unwrap_or_else(|| PollPolicy::default_for(memory));
        let (limit, gap_ns) = match policy {
            PollPolicy::Perf => (0, 0),
            PollPolicy::Tuned => (tuned_max_completions(queue_depth, memory), tuned_poll_gap_ns(memory)),
        };
        let custom =
            options.max_completions.is_some_and(|m| m != limit) || options.poll_gap_ns.is_some_and(|g| g != gap_ns);
        let limit = options.max_completions.unwrap_or(limit);
        let gap_ns = options.poll_gap_ns.unwrap_or(gap_ns);
        Polling {
            label: if custom { "custom" } else { policy.name() },
            limit,
            applied: spdk_applied_max_completions(memory, entries, limit),
            gap_ns,
        }
    }
}

#[cold]
fn runtime(what: &'static str, rc: i32) -> EngineError {
    let source = if rc == -libc::ENXIO {
        io::Error::other("the queue pair failed: the controller is gone or was reset")
    } else {
        io::Error::from_raw_os_error(-rc)
    };
    EngineError::Runtime { engine: NAME, what, source }
}

impl Engine for SpdkEngine {
    #[inline]
    fn queue(&mut self, slot: u32, op: &IoOp) -> Result<Queued, EngineError> {
        let buf = self.ring.spares.buffer_of(slot, op.dir);
        // SAFETY: this thread's engine, alive; the caller guarantees the slot is free.
        match unsafe { self.ring.submit.queue(slot, buf, op) } {
            0 => Ok(Queued::Ok),
            rc if rc == -libc::ENOMEM => Ok(Queued::Busy),
            rc => Err(runtime("submitting a command", rc)),
        }
    }

    /// With delayed doorbells, commands are rung in at the next poll; otherwise each command rang
    /// its own. Either way there is nothing to do here.
    fn submit(&mut self) -> Result<(), EngineError> {
        Ok(())
    }

    /// In interrupt mode, the next poll sleeps until the queue pair's interrupt and handles what it
    /// brings in its completion callbacks, as perf's `-E` does in `spdk_nvme_poll_group_wait`; the
    /// sleep is taken in the poll, where the worker's handler is installed, so every completion is
    /// stamped and its slot refilled in its own callback, as when polling. Polled, nothing to do.
    fn wait(&mut self) -> Result<(), EngineError> {
        self.armed = self.interrupt.then_some(WAIT_TIMEOUT_NS);
        Ok(())
    }

    /// Completions arrive by interrupt in interrupt mode only.
    fn interrupt_driven(&self) -> bool {
        self.interrupt
    }

    /// A paced worker's wait until its next I/O is due: as `wait`, the next poll sleeps, here for at
    /// most `timeout_ns` (to the nanosecond: the shim waits in `ppoll` for a timeout finer than a
    /// millisecond). With nothing in flight the poll sleeps the whole time. Polled, nothing to do.
    fn wait_for(&mut self, timeout_ns: u64) -> Result<(), EngineError> {
        if self.interrupt && timeout_ns > 0 {
            self.armed = Some(timeout_ns.min(WAIT_TIMEOUT_NS));
        }
        Ok(())
    }

    #[inline]
    fn poll<F: FnMut(u32, Result<(), IoError>)>(&mut self, max: u32, mut done: F) -> Result<u32, EngineError> {
        let late = self.before_poll();
        if late > 0 {
            for (slot, status) in self.ring.late.drain(..) {
                done(slot, decode_status(status));
            }
        }
        let handler: &mut (dyn FnMut(u32, Result<(), IoError>) + '_) = &mut done;
        // SAFETY: only the lifetime is erased; the pointer is cleared in `process`, before `done`
        // goes out of scope, and only the trampoline on this thread reads it meanwhile.
        let handler: NonNull<Handler> = unsafe {
            std::mem::transmute::<NonNull<dyn FnMut(u32, Result<(), IoError>) + '_>, NonNull<Handler>>(NonNull::from(
                handler,
            ))
        };
        self.ring.handler = Some(handler);
        self.process(max)?;
        Ok(late + self.ring.reaped)
    }

    /// Always: each completed slot's next I/O is handed over inside its completion callback, so it
    /// goes out on the doorbell SPDK rings at the end of that same poll, as SPDK perf submits from
    /// `task_complete`. Refilling after the poll cost each I/O at QD1 one more poll (0.94x perf's
    /// IOPS over vfio-user, against 0.99x) and, at depth, left the slots a poll freed idle until it
    /// returned: once the callback held nothing but the next I/O's stamp and hand-over, the refill
    /// inside it measured better at depth too (vfio-user null target, 6 alternating 3 s rounds, paired
    /// with perf: QD32 0.98x perf's IOPS against 0.955x after the poll, QD128 1.00x against 0.995x).
    #[inline]
    fn refills_inline(&self) -> bool {
        true
    }

    /// The tuned policy's gap (`--poll-policy tuned`, or `--poll-gap`). With several commands
    /// outstanding, back-to-back polls (about 22 ns apart here) keep reading the completion-queue
    /// lines the controller is writing; spacing them out measured faster on SPDK's vfio-user null
    /// target, whose controller is a core of the same machine. Counted at QD32, it did not make
    /// batches larger (29 completions per busy poll back to back, 26 with the gap), so the gain was
    /// the emulated controller's, most likely from fewer of its cache lines pulled away mid-write
    /// (5-6 alternating 3 s rounds, paired with perf: QD32 0.976-0.990x perf's IOPS back to back,
    /// 0.994x with about 50 ns, 1.000x with about 100 ns; QD128 1.002x -> 1.006x). A real drive
    /// posts its completions by DMA and has no such lines to lose; there the gap can only delay
    /// noticing a completion, so it is not the default (perf polls back to back). Over a fabric there
    /// is no such line either (a poll reads a socket), so the tuned policy has no gap there.
    #[inline]
    fn idle_poll_gap_ns(&self) -> u32 {
        self.polling.gap_ns
    }

    /// Polled, yes; in interrupt mode a poll may sleep, and busy time would count the sleep.
    fn accounts_busy(&self) -> bool {
        !self.interrupt
    }

    #[inline]
    fn poll_refill<F: FnMut(u32, Result<(), IoError>) -> Option<IoOp>>(
        &mut self,
        max: u32,
        mut done: F,
    ) -> Result<(u32, u32), EngineError> {
        let late = self.before_poll();
        let mut refilled = 0;
        if late > 0 {
            // Aborted outside a poll: their replacements go out the ordinary way.
            for i in 0..late as usize {
                let (slot, status) = self.ring.late[i];
                if let Some(op) = done(slot, decode_status(status)) {
                    let buf = self.ring.spares.refill_buffer(slot, op.dir);
                    // SAFETY: this thread's engine, alive; the slot's command has completed.
                    match unsafe { self.ring.submit.queue(slot, buf, &op) } {
                        0 => {}
                        rc if rc == -libc::ENOMEM => self.ring.bounced.push((slot, op)),
                        rc => return Err(runtime("submitting a command", rc)),
                    }
                    refilled += 1;
                }
            }
            self.ring.late.clear();
        }
        let handler: &mut (dyn FnMut(u32, Result<(), IoError>) -> Option<IoOp> + '_) = &mut done;
        // SAFETY: only the lifetime is erased; the pointer is cleared in `process`, before `done`
        // goes out of scope, and only the trampoline on this thread reads it meanwhile.
        let handler: NonNull<RefillHandler> = unsafe {
            std::mem::transmute::<
                NonNull<dyn FnMut(u32, Result<(), IoError>) -> Option<IoOp> + '_>,
                NonNull<RefillHandler>,
            >(NonNull::from(handler))
        };
        self.ring.refill = Some(handler);
        self.process(max)?;
        if let Some(rc) = self.ring.refused.take() {
            return Err(runtime("submitting a command", rc));
        }
        Ok((late + self.ring.reaped, refilled + self.ring.refilled))
    }

    fn slot_buf(&mut self, slot: u32) -> &mut [u8] {
        let b = if self.ring.spares.map.is_empty() { slot } else { self.ring.spares.map[slot as usize] };
        self.bufs.slot_mut(b)
    }

    fn write_spares(&self) -> u32 {
        self.spare_count
    }

    fn prepare_spares<F: FnMut(&mut [u8], bool)>(&mut self, mut prepare: F) {
        let s = &mut self.ring.spares;
        while let Some(b) = s.to_prepare.pop() {
            prepare(self.bufs.slot_mut(b), s.dirty[b as usize]);
            s.dirty[b as usize] = false;
            s.prepared.push(b);
        }
    }

    /// Delayed doorbells ring at the end of the next completion processing, and a fabric's commands
    /// leave with the socket flush there too; a memory queue without delayed doorbells rings one
    /// per command.
    fn sends(&self) -> Sends {
        if !self.delay_cmd_submit && queues_in_memory(&self.ns_ref.ctrlr.info.transport) {
            Sends::OnQueue
        } else {
            Sends::OnPoll
        }
    }

    fn info(&self) -> EngineInfo {
        let c = &self.ns_ref.ctrlr.info;
        let mut options = vec![
            ("transport".into(), c.transport.clone()),
            ("model".into(), c.model.clone()),
            ("nsid".into(), self.ns_ref.nsid.to_string()),
            ("io_queue_size".into(), self.entries.to_string()),
            ("queue_holds".into(), self.holds.to_string()),
            ("device_qd".into(), self.device_qd.to_string()),
        ];
        if self.commands_per_io > 1 {
            options.push(("commands_per_io".into(), self.commands_per_io.to_string()));
        }
        options.extend([
            ("delay_cmd_submit".into(), u8::from(self.delay_cmd_submit).to_string()),
            ("refill".into(), "in_callback".into()),
            ("poll_policy".into(), self.polling.label.into()),
            ("max_completions".into(), self.polling.applied.to_string()),
            ("poll_gap_ns".into(), self.polling.gap_ns.to_string()),
        ]);
        EngineInfo { name: NAME.into(), options }
    }

    fn lane_facts(&self) -> Vec<(String, String)> {
        self.facts.clone()
    }
}

impl Drop for SpdkEngine {
    fn drop(&mut self) {
        // SAFETY: the qpair belongs to this engine and thread. Freeing it aborts whatever is still
        // outstanding and takes it out of its poll group; its callbacks may run during the call and
        // only touch the ring, which is still alive (fields drop after this). The buffers and the
        // group are freed only afterwards.
        unsafe { spdk_sys::spdk_nvme_ctrlr_free_io_qpair(self.qpair.as_ptr()) };
        self.ns_ref.ctrlr.gate.leave();
    }
}

/// One engine's SPDK poll group, holding its one queue pair; destroyed on drop, after the engine
/// has freed the queue pair (which leaves the group).
struct PollGroup {
    ptr: NonNull<spdk_sys::spdk_nvme_poll_group>,
    /// Set by [`on_disconnected`]: a fabrics poll group reports a failed qpair through that
    /// callback and returns no error, where polling the qpair itself returns -ENXIO.
    disconnected: Box<std::cell::Cell<bool>>,
}

impl PollGroup {
    fn new() -> Option<PollGroup> {
        let disconnected = Box::new(std::cell::Cell::new(false));
        let ctx = std::ptr::from_ref::<std::cell::Cell<bool>>(&disconnected).cast_mut().cast::<c_void>();
        // SAFETY: plain allocation with the default transport table; `ctx` points into the box,
        // which lives as long as the group (both are fields of the PollGroup).
        let ptr = NonNull::new(unsafe { spdk_sys::spdk_nvme_poll_group_create(ctx, std::ptr::null_mut()) })?;
        Some(PollGroup { ptr, disconnected })
    }

    /// Adds the just-created (`create_only`) `qpair` and connects it, waiting for the connection.
    fn connect(
        &self,
        ctrlr: *mut spdk_sys::spdk_nvme_ctrlr,
        qpair: NonNull<spdk_sys::spdk_nvme_qpair>,
    ) -> io::Result<()> {
        // SAFETY: a live group and a qpair of the live `ctrlr` that belongs to no group yet.
        let rc = unsafe { spdk_sys::spdk_nvme_poll_group_add(self.ptr.as_ptr(), qpair.as_ptr()) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(-rc));
        }
        // SAFETY: as above; the qpair is in the group and not connected.
        let rc = unsafe { spdk_sys::spdk_nvme_ctrlr_connect_io_qpair(ctrlr, qpair.as_ptr()) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(-rc));
        }
        // Fabrics connect asynchronously; poll until the group says every qpair is connected.
        let start = std::time::Instant::now();
        loop {
            // SAFETY: a live group on this thread, and a qpair with no commands of ours yet.
            let rc = unsafe {
                spdk_sys::spdk_nvme_poll_group_process_completions(self.ptr.as_ptr(), 0, Some(on_disconnected));
                spdk_sys::spdk_nvme_poll_group_all_connected(self.ptr.as_ptr())
            };
            match rc {
                0 => {
                    // A disconnect seen while connecting is over once the qpair is connected.
                    self.disconnected.set(false);
                    return Ok(());
                }
                rc if rc == -libc::EAGAIN && start.elapsed() < CONNECT_TIMEOUT => {}
                rc if rc == -libc::EAGAIN => {
                    return Err(io::Error::other(format!("no connection within {} s", CONNECT_TIMEOUT.as_secs())));
                }
                rc => return Err(io::Error::from_raw_os_error(-rc)),
            }
        }
    }

    /// Processes up to `limit` completions of the group's qpair; their count, or a negative errno
    /// (-ENXIO: the qpair failed or was disconnected), as polling the qpair itself would return.
    ///
    /// # Safety
    /// On the engine's thread, with the qpair's callbacks' state alive.
    #[inline]
    unsafe fn process(&self, limit: u32) -> i32 {
        // SAFETY: per this function's contract; the group is live.
        let n = unsafe {
            spdk_sys::spdk_nvme_poll_group_process_completions(self.ptr.as_ptr(), limit, Some(on_disconnected))
        };
        if self.disconnected.replace(false) && n >= 0 {
            return -libc::ENXIO;
        }
        n.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
    }
}

impl Drop for PollGroup {
    fn drop(&mut self) {
        // SAFETY: the group's qpair was freed (which removed it), so the group is empty.
        unsafe { spdk_sys::spdk_nvme_poll_group_destroy(self.ptr.as_ptr()) };
    }
}

/// How long a new queue pair may take to connect.
const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// SPDK's note, during a group poll, that the group's qpair is disconnected: `process` then returns
/// -ENXIO, which the engine handles (a reconnect after a controller reset, or the end of the run).
extern "C" fn on_disconnected(_qpair: *mut spdk_sys::spdk_nvme_qpair, ctx: *mut c_void) {
    // SAFETY: `ctx` is the group's `disconnected` cell (see PollGroup::new), alive while the group
    // is, and only this thread touches it.
    unsafe { (*ctx.cast::<std::cell::Cell<bool>>()).set(true) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tuned_bound_is_half_the_queue_a_sixteenth_more_over_a_fabric_and_its_gap_is_for_memory_queues_only() {
        for memory in [true, false] {
            assert_eq!(tuned_max_completions(1, memory), 1);
            assert_eq!(tuned_max_completions(2, memory), 1);
            assert_eq!(tuned_max_completions(3, memory), 1);
            assert_eq!(tuned_max_completions(8, memory), 4, "a sixteenth of 8 is nothing");
        }
        assert_eq!(tuned_max_completions(32, true), 16);
        assert_eq!(tuned_max_completions(128, true), 64);
        assert_eq!(tuned_max_completions(32, false), 18);
        assert_eq!(tuned_max_completions(128, false), 72);
        assert_eq!(tuned_max_completions(65536, false), 36864, "below the whole queue at any depth");
        assert!(queues_in_memory("PCIe") && queues_in_memory("VFIOUSER"));
        assert!(!queues_in_memory("TCP") && !queues_in_memory("RDMA") && !queues_in_memory("FC"));
        assert_eq!((tuned_poll_gap_ns(true), tuned_poll_gap_ns(false)), (100, 0));
    }

    /// SPDK 25.09's numbers: nvme_pcie_common.c caps a poll at entries / 4 within [1, 128] and keeps
    /// that many entries back; nvme_tcp.c gives a queue pair entries - 1 requests and caps a poll
    /// there.
    #[test]
    fn what_spdk_applies_per_poll_and_what_a_queue_holds() {
        // PCIe and vfio-user: a quarter of the entries, at most 128, at least 1.
        assert_eq!(spdk_applied_max_completions(true, 256, 0), 64);
        assert_eq!(spdk_applied_max_completions(true, 1024, 0), 128);
        assert_eq!(spdk_applied_max_completions(true, 65536, 0), 128);
        assert_eq!(spdk_applied_max_completions(true, 2, 0), 1);
        assert_eq!(spdk_applied_max_completions(true, 256, 16), 16, "a limit below the cap is taken");
        assert_eq!(spdk_applied_max_completions(true, 256, 100), 64, "one above it is capped");
        assert_eq!((queue_holds(true, 256), queue_holds(true, 1024), queue_holds(true, 4)), (192, 896, 3));
        // TCP: entries - 1.
        assert_eq!(spdk_applied_max_completions(false, 128, 0), 127);
        assert_eq!(spdk_applied_max_completions(false, 128, 72), 72);
        assert_eq!(spdk_applied_max_completions(false, 32, 72), 31);
        assert_eq!(queue_holds(false, 128), 127);
    }

    #[test]
    fn split_ios_and_what_the_device_sees() {
        assert_eq!(commands_per_io(4096, 131072, 0, 4096), 1);
        assert_eq!(commands_per_io(131072, 131072, 0, 4096), 1);
        assert_eq!(commands_per_io(131073, 131072, 0, 512), 2);
        assert_eq!(commands_per_io(1 << 20, 131072, 0, 1 << 20), 8);
        assert_eq!(commands_per_io(4096, 0, 0, 4096), 1, "no limit known");
        // A 128 KiB boundary: an aligned divisor never crosses it; anything else may, once more.
        assert_eq!(commands_per_io(4096, 131072, 131072, 4096), 1);
        assert_eq!(commands_per_io(4096, 131072, 131072, 512), 2, "unaligned");
        assert_eq!(commands_per_io(12288, 131072, 131072, 12288), 2, "does not divide the boundary");
        assert_eq!(commands_per_io(4096, 131072, 131072, 0), 2, "alignment unknown");
        assert_eq!(device_queue_depth(32, 1, 192), 32);
        assert_eq!(device_queue_depth(256, 1, 192), 192);
        assert_eq!(device_queue_depth(128, 8, 192), 24);
        assert_eq!(device_queue_depth(1, 300, 192), 1, "one I/O is always at the device, in part");
    }

    #[test]
    fn the_policy_in_effect_names_what_spdk_applies() {
        let defaults = SpdkOptions::default();
        // Perf's by default where the queues are memory: no limit of ours, SPDK's cap, no gap.
        let p = Polling::resolve(&defaults, "PCIe", 32, 1024);
        assert_eq!(p, Polling { label: "perf", limit: 0, applied: 128, gap_ns: 0 });
        assert_eq!(Polling::resolve(&defaults, "VFIOUSER", 128, 256).applied, 64);
        // Tuned over a fabric by default.
        let p = Polling::resolve(&defaults, "TCP", 32, 128);
        assert_eq!(p, Polling { label: "tuned", limit: 18, applied: 18, gap_ns: 0 });
        // Tuned asked for where the queues are memory: half the depth, 100 ns, and SPDK's cap wins
        // over a half above it.
        let tuned = SpdkOptions { poll_policy: Some(PollPolicy::Tuned), ..defaults };
        assert_eq!(
            Polling::resolve(&tuned, "PCIe", 32, 1024),
            Polling { label: "tuned", limit: 16, applied: 16, gap_ns: 100 }
        );
        assert_eq!(Polling::resolve(&tuned, "VFIOUSER", 256, 256).applied, 64, "half of 256 is capped at 64");
        // A knob that changes a policy's number makes it custom; one that repeats it does not.
        let custom = SpdkOptions { max_completions: Some(8), ..defaults };
        assert_eq!(
            Polling::resolve(&custom, "PCIe", 32, 1024),
            Polling { label: "custom", limit: 8, applied: 8, gap_ns: 0 }
        );
        let same = SpdkOptions { poll_gap_ns: Some(0), ..defaults };
        assert_eq!(Polling::resolve(&same, "PCIe", 32, 1024).label, "perf");
        let interrupt = SpdkOptions { interrupt: true, ..defaults };
        assert_eq!(
            Polling::resolve(&interrupt, "PCIe", 32, 1024),
            Polling { label: "interrupt", limit: 0, applied: 128, gap_ns: 0 }
        );
    }

    #[test]
    fn the_admin_poll_keeps_inside_the_shortest_keep_alive_and_wakes_at_most_once_a_second() {
        use std::time::Duration;
        assert_eq!(admin_poll_interval([10_000].into_iter()), Duration::from_secs(1));
        assert_eq!(admin_poll_interval([10_000, 2_000].into_iter()), Duration::from_millis(250));
        assert_eq!(admin_poll_interval([0, 4_000].into_iter()), Duration::from_millis(500), "0 is none");
        assert_eq!(admin_poll_interval([40].into_iter()), Duration::from_millis(10));
        assert_eq!(admin_poll_interval([0].into_iter()), Duration::from_secs(1));
        assert_eq!(admin_poll_interval(std::iter::empty()), Duration::from_secs(1));
    }

    #[test]
    fn status_words_decode() {
        assert_eq!(decode_status(0x0000), Ok(()));
        assert_eq!(decode_status(0x0001), Ok(()), "the phase bit is not an error");
        // SCT 0, SC 0x80 (LBA out of range): bits 1-8.
        assert_eq!(decode_status(0x80 << 1), Err(IoError::Nvme { sct: 0, sc: 0x80 }));
        // SCT 2 (media error), SC 0x81 (unrecovered read error), DNR set.
        assert_eq!(decode_status((2 << 9) | (0x81 << 1) | 0x8000), Err(IoError::Nvme { sct: 2, sc: 0x81 }));
    }

    /// The status read in place is the one SPDK's own struct gives (`status_raw`, through the shim).
    #[test]
    fn completion_status_is_read_where_spdk_keeps_it() {
        for dw3 in [0u32, 0x0001_0000, 0x0103_002a, 0xc502_ffff, 0xffff_0000] {
            let cpl = spdk_sys::spdk_nvme_cpl { _bindgen_opaque_blob: [7, 0, 0x0001_0002, dw3] };
            // SAFETY: a valid completion entry on the stack, read for the duration of the call.
            let shim = unsafe { spdk_sys::nvmebench_shim_cpl_status(&cpl) };
            assert_eq!(cpl_status(&cpl), shim, "{dw3:#x}");
            assert_eq!(u32::from(shim), dw3 >> 16);
        }
    }
}

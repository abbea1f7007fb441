//! NVMe controllers attached through SPDK, by transport ID, and their namespaces.

use super::SpdkError;
use super::env::SpdkEnv;
use serde::Serialize;
use std::ffi::{CString, c_char};
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long a reset waits for every worker on the controller to step off its queue pair.
const PARK_TIMEOUT: Duration = Duration::from_secs(5);

/// How workers and a resetting thread take turns on one controller. SPDK's reset must run "while no
/// other threads are actively using the NVMe device", and on PCIe it re-creates every I/O queue
/// pair in place, so the workers park outside their queue pairs until it is done.
#[derive(Debug, Default)]
pub struct ResetGate {
    /// A reset wants the controller: workers park at their next poll.
    requested: AtomicBool,
    /// Workers parked now.
    parked: AtomicUsize,
    /// Workers with a queue pair on this controller.
    engines: AtomicUsize,
    /// Resets done; a worker that sees it change reconnects its queue pair if SPDK left it
    /// disconnected (fabrics).
    generation: AtomicU64,
}

impl ResetGate {
    pub fn join(&self) {
        self.engines.fetch_add(1, Ordering::SeqCst);
    }

    pub fn leave(&self) {
        self.engines.fetch_sub(1, Ordering::SeqCst);
    }

    /// Cheap enough for every poll: one relaxed load of a line that changes only around a reset.
    #[inline]
    pub fn wanted(&self) -> bool {
        self.requested.load(Ordering::Relaxed)
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Parks the calling worker until the reset is over.
    #[cold]
    pub fn park(&self) {
        self.parked.fetch_add(1, Ordering::SeqCst);
        while self.requested.load(Ordering::Acquire) {
            std::thread::sleep(Duration::from_micros(100));
        }
        self.parked.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What became of one controller reset.
#[derive(Clone, Debug, Serialize)]
pub struct ResetOutcome {
    pub trid: String,
    /// Whether SPDK brought the controller back.
    pub ok: bool,
    pub duration_ns: u64,
    /// Why not, when it failed.
    pub error: Option<String>,
}

/// A transport ID as users type it for SPDK's perf (`trtype:TCP adrfam:IPv4 traddr:... subnqn:...`),
/// with nvmebench's `ns:N` to pick one namespace (all active namespaces otherwise).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TridSpec {
    /// The transport ID without `ns:`.
    pub trid: String,
    pub nsid: Option<u32>,
}

/// The keys SPDK's transport ID parser reads (`spdk_nvme_transport_id_parse`), with the longest
/// value it takes for each (`None`: no limit of its own, 1023 bytes as every value). It ignores
/// any other key with a log line; a misspelt key is refused here instead.
const TRID_KEYS: [(&str, Option<u32>); 11] = [
    ("trtype", Some(spdk_sys::SPDK_NVMF_TRSTRING_MAX_LEN)),
    ("adrfam", None),
    ("traddr", Some(spdk_sys::SPDK_NVMF_TRADDR_MAX_LEN)),
    ("trsvcid", Some(spdk_sys::SPDK_NVMF_TRSVCID_MAX_LEN)),
    ("priority", Some(spdk_sys::SPDK_NVMF_PRIORITY_MAX_LEN)),
    ("subnqn", Some(spdk_sys::SPDK_NVMF_NQN_MAX_LEN)),
    ("hostaddr", None),
    ("hostsvcid", None),
    ("hostnqn", None),
    ("ns", None),
    ("alt_traddr", None),
];

impl TridSpec {
    /// Reads a `--trid`, checked as SPDK's own parser reads it (which it then runs, its log
    /// silenced), before SPDK's environment is up: a transport ID it could not use is refused in
    /// one sentence before hugepages are touched, where it failed at attach.
    pub fn parse(text: &str) -> Result<TridSpec, String> {
        // The whole text as the messages echo it: on one line, whatever it holds.
        let shown = text.escape_debug().to_string();
        let mut nsid = None;
        let mut rest = Vec::new();
        let example = "e.g. 'trtype:PCIe traddr:0000:01:00.0' or 'trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:4420 subnqn:nqn.2016-06.io.spdk:cnode1'";
        for tok in text.split_whitespace() {
            let Some((k, v)) = tok.split_once([':', '=']) else {
                return Err(format!("'{tok}' in --trid '{shown}' is not key:value; write it as SPDK does, {example}"));
            };
            let Some((_, max)) = TRID_KEYS.iter().find(|(name, _)| k.eq_ignore_ascii_case(name)) else {
                let keys: Vec<&str> = TRID_KEYS.iter().map(|(k, _)| *k).collect();
                return Err(format!(
                    "'{k}' in --trid '{shown}' is not a transport ID key SPDK knows ({})",
                    keys.join(", ")
                ));
            };
            let max = max.unwrap_or(1023) as usize;
            if v.is_empty() || v.len() > max {
                return Err(format!("{k} in --trid '{shown}' takes a value of 1 to {max} bytes, not {}", v.len()));
            }
            if k.eq_ignore_ascii_case("ns") {
                nsid = Some(v.parse::<u32>().ok().filter(|n| *n > 0).ok_or_else(|| {
                    format!("'{tok}' in --trid '{shown}' is not a namespace; write ns:1 (namespaces count from 1)")
                })?);
            } else {
                rest.push(tok);
            }
        }
        let Some(trtype) =
            rest.iter().find_map(|t| t.split_once([':', '=']).filter(|(k, _)| k.eq_ignore_ascii_case("trtype")))
        else {
            return Err(format!("--trid '{shown}' has no trtype; write it as SPDK does, {example}"));
        };
        // SPDK reads any name as a custom transport and fails at attach; the transports this SPDK
        // was built with registered themselves when it was loaded.
        if !transport_available(trtype.1) {
            let have: Vec<&str> =
                ["PCIe", "TCP", "RDMA", "VFIOUSER", "FC"].into_iter().filter(|t| transport_available(t)).collect();
            return Err(format!(
                "trtype '{}' in --trid '{shown}' is not a transport this SPDK has (it has {})",
                trtype.1,
                have.join(", ")
            ));
        }
        let trid = rest.join(" ");
        if quiet_parse(&trid).is_err() {
            return Err(format!(
                "--trid '{shown}' is not a transport ID SPDK understands (an unknown trtype or adrfam?); write it as SPDK does, {example}"
            ));
        }
        Ok(TridSpec { trid, nsid })
    }
}

/// Whether this SPDK has the transport `name` (any case).
fn transport_available(name: &str) -> bool {
    let Ok(c) = CString::new(name) else { return false };
    // SAFETY: `c` is a NUL-terminated string alive for the call; the function reads SPDK's list of
    // transports, which its constructors filled when the library was loaded.
    unsafe { spdk_sys::spdk_nvme_transport_available_by_name(c.as_ptr()) }
}

/// SPDK's parser over `text` with its log silenced (it logs why it refuses, and the keys it
/// ignores, on stderr), the log level put back after.
fn quiet_parse(text: &str) -> Result<spdk_sys::spdk_nvme_transport_id, SpdkError> {
    // SAFETY: reads and sets a global integer of SPDK's log library; SPDK's threads do not log
    // through it while a --trid is parsed (parsing happens on the coordinator before runs).
    let level = unsafe { spdk_sys::spdk_log_get_print_level() };
    // SAFETY: as above.
    unsafe { spdk_sys::spdk_log_set_print_level(spdk_sys::SPDK_LOG_DISABLED) };
    let r = parse_trid(text);
    // SAFETY: as above.
    unsafe { spdk_sys::spdk_log_set_print_level(level) };
    r
}

/// A namespace of an attached controller.
#[derive(Clone, Debug, Serialize)]
pub struct NamespaceInfo {
    pub nsid: u32,
    pub sector_bytes: u32,
    pub sectors: u64,
    pub metadata_bytes: u32,
    /// The largest transfer one command may carry (the controller's MDTS, or the transport's limit
    /// if lower); SPDK splits larger I/Os into several commands.
    pub max_transfer_bytes: u32,
    /// The namespace's optimal I/O boundary (NOIOB, or a vendor's stripe), 0 for none; SPDK splits
    /// an I/O that crosses one.
    pub io_boundary_bytes: u32,
}

impl NamespaceInfo {
    pub fn size_bytes(&self) -> u64 {
        self.sectors * u64::from(self.sector_bytes)
    }
}

/// Identity of a controller, for reports and `devices`.
#[derive(Clone, Debug, Serialize)]
pub struct ControllerInfo {
    pub trid: String,
    pub transport: String,
    pub address: String,
    pub model: String,
    pub serial: String,
    pub firmware: String,
    pub numa_node: Option<i32>,
    pub namespaces: Vec<NamespaceInfo>,
    /// Identify Controller's ONCS says it takes Dataset Management (deallocate).
    #[serde(skip)]
    pub deallocate: bool,
    /// ONCS says it takes Write Zeroes.
    #[serde(skip)]
    pub write_zeroes: bool,
}

/// An attached controller; detached on drop.
pub struct Controller {
    ptr: NonNull<spdk_sys::spdk_nvme_ctrlr>,
    pub info: ControllerInfo,
    pub gate: ResetGate,
    _env: Arc<SpdkEnv>,
}

// SAFETY: the controller handle is only used for calls SPDK documents as safe from any thread:
// allocating and freeing I/O queue pairs (serialised by the controller's own lock) and reading
// namespace geometry, processing admin completions (thread safe by SPDK's documentation), plus
// `reset`, which runs only while every worker is parked off its queue pair (see ResetGate). Each queue pair it hands out is used by exactly one thread (the worker that
// allocated it). Detach happens in Drop, after every worker (and so every qpair) is gone, because
// workers hold an Arc to the controller.
unsafe impl Send for Controller {}
// SAFETY: see Send: the shared-reference methods only make the thread-safe calls above.
unsafe impl Sync for Controller {}

impl Controller {
    /// Connects to the controller at `spec.trid`, with its interrupts enabled if `interrupts`
    /// (SPDK's `enable_interrupts`, as perf's `-E` asks; PCIe only).
    pub fn connect(env: Arc<SpdkEnv>, spec: &TridSpec, interrupts: bool) -> Result<Controller, SpdkError> {
        let trid = parse_trid(&spec.trid)?;
        let mut opts = spdk_sys::spdk_nvme_ctrlr_opts::default();
        let size = std::mem::size_of::<spdk_sys::spdk_nvme_ctrlr_opts>();
        // SAFETY: `opts` is valid and writable for `size` bytes, the size this SPDK was built with.
        unsafe { spdk_sys::spdk_nvme_ctrlr_get_default_ctrlr_opts(&mut opts, size) };
        // Ask for the largest I/O queues; the driver lowers this to what the controller allows (MQES),
        // and queue pairs inherit it, so deep queue depths never wait on the queue itself.
        opts.io_queue_size = u32::from(u16::MAX);
        // SAFETY: `opts` is the struct just filled in; the shim sets one field if this SPDK has it.
        if interrupts && !unsafe { spdk_sys::nvmebench_shim_ctrlr_opts_enable_interrupts(&mut opts) } {
            return Err(SpdkError::InterruptsUnsupported { version: super::spdk_version() });
        }
        // SAFETY: `trid` and `opts` are valid for the duration of the call; SPDK copies both.
        let ptr = unsafe { spdk_sys::spdk_nvme_connect(&trid, &opts, size) };
        let ptr = NonNull::new(ptr).ok_or_else(|| SpdkError::Connect { trid: spec.trid.clone() })?;
        // SAFETY: `ptr` is a controller SPDK just attached; trid_of only reads it.
        let (transport, address) = unsafe { trid_of(ptr.as_ptr()) };
        let mut mn = [0 as c_char; 41];
        let mut sn = [0 as c_char; 21];
        let mut fr = [0 as c_char; 9];
        // SAFETY: the buffers have the sizes the shim writes (40+1, 20+1, 8+1 bytes).
        unsafe { spdk_sys::nvmebench_shim_ctrlr_ids(ptr.as_ptr(), mn.as_mut_ptr(), sn.as_mut_ptr(), fr.as_mut_ptr()) };
        // SAFETY: a live controller; the call only reads cached data.
        let numa = unsafe { spdk_sys::nvmebench_shim_ctrlr_numa_id(ptr.as_ptr()) };
        // SAFETY: a live controller; the shim reads its cached Identify Controller data.
        let oncs = unsafe { spdk_sys::nvmebench_shim_ctrlr_oncs(ptr.as_ptr()) };
        let mut c = Controller {
            ptr,
            info: ControllerInfo {
                trid: spec.trid.clone(),
                transport,
                address,
                model: c_str(&mn),
                serial: c_str(&sn),
                firmware: c_str(&fr),
                numa_node: (numa >= 0).then_some(numa),
                namespaces: Vec::new(),
                deallocate: oncs & 1 != 0,
                write_zeroes: oncs & 2 != 0,
            },
            gate: ResetGate::default(),
            _env: env,
        };
        c.info.namespaces = c.active_namespaces();
        if interrupts && !c.interrupts() {
            // Dropping `c` detaches the controller.
            return Err(SpdkError::NoInterrupts { trid: spec.trid.clone() });
        }
        Ok(c)
    }

    fn active_namespaces(&self) -> Vec<NamespaceInfo> {
        let mut out = Vec::new();
        // SAFETY: a live controller; these walk its cached active-namespace list.
        let mut nsid = unsafe { spdk_sys::spdk_nvme_ctrlr_get_first_active_ns(self.ptr.as_ptr()) };
        while nsid != 0 {
            if let Some(ns) = self.ns(nsid) {
                // SAFETY: `ns` belongs to this live controller; the getters read cached identify data.
                let info = unsafe {
                    NamespaceInfo {
                        nsid,
                        sector_bytes: spdk_sys::spdk_nvme_ns_get_sector_size(ns.as_ptr()),
                        sectors: spdk_sys::spdk_nvme_ns_get_num_sectors(ns.as_ptr()),
                        metadata_bytes: spdk_sys::spdk_nvme_ns_get_md_size(ns.as_ptr()),
                        max_transfer_bytes: spdk_sys::spdk_nvme_ns_get_max_io_xfer_size(ns.as_ptr()),
                        io_boundary_bytes: spdk_sys::spdk_nvme_ns_get_optimal_io_boundary(ns.as_ptr())
                            .saturating_mul(spdk_sys::spdk_nvme_ns_get_sector_size(ns.as_ptr())),
                    }
                };
                out.push(info);
            }
            // SAFETY: as above.
            nsid = unsafe { spdk_sys::spdk_nvme_ctrlr_get_next_active_ns(self.ptr.as_ptr(), nsid) };
        }
        out
    }

    /// The namespace handle for `nsid`.
    pub fn ns(&self, nsid: u32) -> Option<NonNull<spdk_sys::spdk_nvme_ns>> {
        // SAFETY: a live controller; returns NULL for an invalid nsid.
        NonNull::new(unsafe { spdk_sys::spdk_nvme_ctrlr_get_ns(self.ptr.as_ptr(), nsid) })
    }

    pub fn as_ptr(&self) -> *mut spdk_sys::spdk_nvme_ctrlr {
        self.ptr.as_ptr()
    }

    /// Processes admin completions; SPDK sends the keep-alives fabrics controllers need from here
    /// (without them a target drops the association after its keep-alive timeout, 10 s by default).
    /// Skipped while a reset owns the controller.
    pub fn poll_admin(&self) {
        if self.gate.wanted() {
            return;
        }
        // SAFETY: a live controller; SPDK documents this call as thread safe while it is attached.
        unsafe { spdk_sys::spdk_nvme_ctrlr_process_admin_completions(self.ptr.as_ptr()) };
    }

    /// The entries of the I/O queues it hands out by default: the most the controller allows (its
    /// MQES), as asked for at attach.
    pub fn io_queue_entries(&self) -> u32 {
        // SAFETY: a live controller; SPDK returns a pointer to the controller's own options, which
        // live as long as it does and are only read here.
        unsafe { spdk_sys::spdk_nvme_ctrlr_get_opts(self.ptr.as_ptr()).as_ref() }.map_or(0, |o| o.io_queue_size)
    }

    /// Whether SPDK enabled the controller's interrupts at attach (asked for by `spdk:interrupt`).
    pub fn interrupts(&self) -> bool {
        // SAFETY: a live controller; the shim reads its options.
        unsafe { spdk_sys::nvmebench_shim_ctrlr_interrupts(self.ptr.as_ptr()) }
    }

    /// The keep-alive timeout the controller agreed to, in ms (0: none).
    pub fn keep_alive_ms(&self) -> u32 {
        // SAFETY: a live controller; SPDK returns a pointer to the controller's own options, which
        // live as long as it does and are only read here.
        unsafe { spdk_sys::spdk_nvme_ctrlr_get_opts(self.ptr.as_ptr()).as_ref() }.map_or(0, |o| o.keep_alive_timeout_ms)
    }

    /// Reads the first `buf.len()` bytes of log page `lid` (controller scope) through the admin
    /// queue, processing admin completions until it is back (the session's admin poller may process
    /// it first; either way the callback only sets an atomic). Never call it from a worker.
    ///
    /// # Errors
    /// A reset owns the controller, SPDK refused the command, the controller answered with an error
    /// status, or no answer came within [`ADMIN_TIMEOUT`].
    pub fn get_log_page(&self, lid: u8, buf: &mut [u8]) -> Result<(), String> {
        if self.gate.wanted() {
            return Err("the controller is being reset".into());
        }
        let mut dma =
            super::dma::DmaBuf::new(1, buf.len(), self.info.numa_node.unwrap_or(-1), 0).map_err(|e| e.to_string())?;
        let done = Arc::new(AtomicU32::new(0));
        let arg = Arc::into_raw(done.clone()) as *mut std::ffi::c_void;
        // SAFETY: a live controller; the payload is DMA-able memory of at least buf.len() bytes that
        // stays allocated until the completion (forgotten below if it never comes); `arg` is an Arc
        // reference the callback takes back exactly once.
        let rc = unsafe {
            spdk_sys::spdk_nvme_ctrlr_cmd_get_log_page(
                self.ptr.as_ptr(),
                lid,
                0xFFFF_FFFF,
                dma.slot_ptr(0).cast(),
                buf.len() as u32,
                0,
                Some(on_admin_complete),
                arg,
            )
        };
        if rc != 0 {
            // SAFETY: SPDK did not take the command, so the callback will never run: take `arg` back.
            drop(unsafe { Arc::from_raw(arg as *const AtomicU32) });
            return Err(format!("Get Log Page was not submitted: {}", std::io::Error::from_raw_os_error(-rc)));
        }
        let start = Instant::now();
        let status = loop {
            match done.load(Ordering::Acquire) {
                0 if start.elapsed() > ADMIN_TIMEOUT => {
                    // The controller may still write into the buffer: it must outlive this call.
                    std::mem::forget(dma);
                    return Err(format!("no answer to Get Log Page within {} s", ADMIN_TIMEOUT.as_secs()));
                }
                0 => {
                    self.poll_admin();
                    std::thread::sleep(Duration::from_micros(100));
                }
                v => break (v & 0xffff) as u16,
            }
        };
        super::decode_status(status).map_err(|e| e.to_string())?;
        buf.copy_from_slice(&dma.slot_mut(0)[..buf.len()]);
        Ok(())
    }

    /// Resets the controller (SPDK's full reset: CC.EN toggled on PCIe, a new association on
    /// fabrics) under a running workload: parks the workers, resets, lets them go. Commands in
    /// flight come back aborted (and count as errors, or are retried with --on-error retry:N).
    pub fn reset(&self) -> ResetOutcome {
        let start = Instant::now();
        let outcome = |ok: bool, error: Option<String>| ResetOutcome {
            trid: self.info.trid.clone(),
            ok,
            duration_ns: start.elapsed().as_nanos() as u64,
            error,
        };
        self.gate.requested.store(true, Ordering::SeqCst);
        while self.gate.parked.load(Ordering::SeqCst) < self.gate.engines.load(Ordering::SeqCst) {
            if start.elapsed() > PARK_TIMEOUT {
                self.gate.requested.store(false, Ordering::SeqCst);
                return outcome(false, Some(format!("the workers did not pause within {} s", PARK_TIMEOUT.as_secs())));
            }
            std::thread::sleep(Duration::from_micros(100));
        }
        // SAFETY: a live controller, and no other thread touches it or its queue pairs: every worker
        // with a queue pair on it is parked in ResetGate::park until `requested` clears.
        let rc = unsafe { spdk_sys::spdk_nvme_ctrlr_reset(self.ptr.as_ptr()) };
        self.gate.generation.fetch_add(1, Ordering::AcqRel);
        self.gate.requested.store(false, Ordering::SeqCst);
        if rc == 0 { outcome(true, None) } else { outcome(false, Some(format!("spdk_nvme_ctrlr_reset returned {rc}"))) }
    }
}

/// How long an admin command of telemetry's may take.
pub const ADMIN_TIMEOUT: Duration = Duration::from_secs(5);

/// Completion of [`Controller::get_log_page`]: stores the status word with bit 16 set.
extern "C" fn on_admin_complete(arg: *mut std::ffi::c_void, cpl: *const spdk_sys::spdk_nvme_cpl) {
    // SAFETY: `arg` came from Arc::into_raw in get_log_page and SPDK calls this once; `cpl` is valid
    // for the duration of the callback.
    let (done, status) = unsafe { (Arc::from_raw(arg as *const AtomicU32), spdk_sys::nvmebench_shim_cpl_status(cpl)) };
    done.store(u32::from(status) | 1 << 16, Ordering::Release);
}

impl Drop for Controller {
    fn drop(&mut self) {
        // SAFETY: the controller was attached by `connect` and every qpair allocated from it is freed
        // (workers drop their engines before the last Arc<Controller> goes).
        unsafe { spdk_sys::spdk_nvme_detach(self.ptr.as_ptr()) };
    }
}

fn parse_trid(text: &str) -> Result<spdk_sys::spdk_nvme_transport_id, SpdkError> {
    let c = CString::new(text).map_err(|_| SpdkError::BadTrid { trid: text.into() })?;
    let mut trid = spdk_sys::spdk_nvme_transport_id::default();
    // SAFETY: `trid` is writable, `c` is a NUL-terminated string alive for the call.
    let rc = unsafe { spdk_sys::spdk_nvme_transport_id_parse(&mut trid, c.as_ptr()) };
    if rc != 0 {
        return Err(SpdkError::BadTrid { trid: text.into() });
    }
    Ok(trid)
}

/// # Safety
/// `ctrlr` must be a live controller.
unsafe fn trid_of(ctrlr: *mut spdk_sys::spdk_nvme_ctrlr) -> (String, String) {
    // SAFETY: the caller guarantees a live controller; the returned trid lives as long as it.
    let t = unsafe { &*spdk_sys::spdk_nvme_ctrlr_get_transport_id(ctrlr) };
    // SPDK spells the local bus "PCIE"; users (and SPDK's own trids) write "PCIe".
    let transport = c_str(&t.trstring);
    let transport = if transport.eq_ignore_ascii_case("pcie") { "PCIe".to_string() } else { transport };
    (transport, c_str(&t.traddr))
}

fn c_str(buf: &[c_char]) -> String {
    let bytes: Vec<u8> = buf.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trid_with_namespace() {
        let t = TridSpec::parse("trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:4420 subnqn:nqn.x ns:2").unwrap();
        assert_eq!(t.nsid, Some(2));
        assert_eq!(t.trid, "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:4420 subnqn:nqn.x");
        assert_eq!(TridSpec::parse("trtype:PCIe traddr:0000:01:00.0").unwrap().nsid, None);
        assert!(TridSpec::parse("trtype:PCIe ns:0").unwrap_err().contains("not a namespace"));
        assert!(TridSpec::parse("traddr:1.2.3.4").unwrap_err().contains("has no trtype"));
    }

    /// What SPDK's parser would refuse at attach, or ignore with a log line, is refused up front.
    #[test]
    fn trids_spdk_cannot_read_are_refused_before_attach() {
        let e = TridSpec::parse("trtype:TCP traadr:127.0.0.1").unwrap_err();
        assert!(
            e.starts_with(
                "'traadr' in --trid 'trtype:TCP traadr:127.0.0.1' is not a transport ID key SPDK knows (trtype, adrfam,"
            ),
            "{e}"
        );
        let e = TridSpec::parse("trtype:TCP trsvcid:").unwrap_err();
        assert!(e.contains("trsvcid in --trid 'trtype:TCP trsvcid:' takes a value of 1 to 32 bytes, not 0"), "{e}");
        let long = format!("trtype:TCP subnqn:{}", "n".repeat(224));
        assert!(TridSpec::parse(&long).unwrap_err().contains("takes a value of 1 to 223 bytes, not 224"));
        let e = TridSpec::parse("trtype:bogus traddr:x").unwrap_err();
        assert!(
            e.starts_with(
                "trtype 'bogus' in --trid 'trtype:bogus traddr:x' is not a transport this SPDK has (it has PCIe, TCP"
            ),
            "{e}"
        );
        assert!(TridSpec::parse("trtype:tcp traddr:x").is_ok(), "any case, as SPDK reads it");
        let e = TridSpec::parse("trtype:TCP adrfam:IPv5 traddr:x").unwrap_err();
        assert!(e.contains("is not a transport ID SPDK understands"), "{e}");
        assert!(TridSpec::parse("trtype:TCP noseparator").unwrap_err().contains("is not key:value"));
        assert!(TridSpec::parse("trtype:TCP traddr:a\0b").is_err());
        let e = TridSpec::parse("trtype:PCIe t\nraddr:x").unwrap_err();
        assert!(e.starts_with("'t' in --trid 'trtype:PCIe t\\nraddr:x' is not key:value"), "one line: {e}");
        let ok = TridSpec::parse("trtype=tcp adrfam=IPv6 traddr=::1 trsvcid=4420 hostnqn=nqn.x priority=1").unwrap();
        assert_eq!(ok.trid, "trtype=tcp adrfam=IPv6 traddr=::1 trsvcid=4420 hostnqn=nqn.x priority=1");
    }

    #[test]
    fn c_strings_stop_at_nul_and_trim() {
        let buf: Vec<c_char> = b"QEMU NVMe Ctrl  \0junk".iter().map(|&b| b as c_char).collect();
        assert_eq!(c_str(&buf), "QEMU NVMe Ctrl");
    }
}

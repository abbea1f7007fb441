//! The SPDK environment (DPDK's EAL underneath): initialised once per process, before any controller
//! is attached, with the worker cores, hugepage memory and IOVA mode the run asks for.
//!
//! vfio-user controllers need one thing more. The initiator shares its DMA memory with the target by
//! passing, for each registered memory region, the file descriptor and offset of the hugepage file
//! behind the region's first page (SPDK's `spdk_mem_get_fd_and_offset`); the target maps that many
//! bytes of that file. By default DPDK backs every 2 MiB page with a file of its own, so a region of
//! several pages (all of `--mem-size`, reserved at start in one piece, or a heap growth of several
//! pages) is mapped from the wrong file, and the target reads and writes memory the initiator never
//! sees: with `--mem-size 256` the controller's reply to Identify never arrives, attaching hangs for
//! 30 s and fails (SPDK's default grows the heap a page at a time and got away with it). With
//! single-file segments each segment list is one file and every region's offset is right, so they
//! are turned on for vfio-user transport IDs (and by `--single-file-segments`). DPDK cannot unlink
//! such files (`--huge-unlink` is refused with them), so without a shared-memory id the process
//! runs `--in-memory`: the pages come from memfd files that exist in no directory and vanish with
//! the process, even when it is killed. With `--shm-id` (multi-process) the files must stay visible
//! to the other processes, so they are left in place, as SPDK's own apps do.

use super::SpdkError;
use std::ffi::CString;
use std::sync::{Arc, Mutex};

/// How to initialise the environment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EnvOptions {
    /// Cores the workers run on; the first becomes DPDK's main core.
    pub cores: Vec<usize>,
    /// Hugepage memory to reserve up front, in MiB (`None`: SPDK's default).
    pub mem_size_mb: Option<u32>,
    /// Shared-memory id for multi-process use (`None`: none).
    pub shm_id: Option<i32>,
    /// Run without hugepages (IOVA=VA; fabrics only, no PCIe).
    pub no_huge: bool,
    /// `pa` or `va`; `None` lets DPDK choose.
    pub iova_mode: Option<String>,
    /// Skip the PCI bus scan (fabrics-only runs, machines without vfio/uio).
    pub no_pci: bool,
    /// SPDK's own log messages on stderr: `None` keeps them off, so that nvmebench's one-line
    /// errors are all a user sees; `error`, `warn`, `notice`, `info` or `debug` turn them on.
    pub log_level: Option<String>,
    /// One hugepage file per memory segment list (DPDK `--single-file-segments`); needed by
    /// vfio-user controllers (see the module's documentation). Ignored with `no_huge`.
    pub single_file_segments: bool,
}

impl EnvOptions {
    /// Whether attaching these transport IDs needs single-file hugepage segments: any vfio-user one.
    pub fn needs_single_file_segments<'a>(trids: impl IntoIterator<Item = &'a str>) -> bool {
        trids.into_iter().any(|t| {
            t.split_whitespace().any(|tok| {
                tok.split_once([':', '='])
                    .is_some_and(|(k, v)| k.eq_ignore_ascii_case("trtype") && v.eq_ignore_ascii_case("vfiouser"))
            })
        })
    }

    /// Extra DPDK EAL arguments: `--in-memory` when single-file segments would otherwise leave
    /// hugepage files behind and no other process needs to see them. In that mode DPDK's EAL notes
    /// on stderr that it found no 1 GiB pages, whatever SPDK's log level; while SPDK's log is off,
    /// the EAL's is held to errors too, so that a user still sees nvmebench's one line.
    fn env_context(&self) -> Option<String> {
        let in_memory = self.single_file_segments && !self.no_huge && self.shm_id.is_none();
        let mut args = Vec::new();
        if in_memory {
            args.push("--in-memory");
            if self.log_level.is_none() {
                args.push("--log-level=lib.eal:4");
            }
        }
        (!args.is_empty()).then(|| args.join(" "))
    }
}

/// Proof that the environment is up. Dropping the last reference does not tear DPDK down: the EAL
/// cannot be re-initialised within a process, so it lives until exit.
#[derive(Debug)]
pub struct SpdkEnv {
    pub options: EnvOptions,
}

static ENV: Mutex<Option<Arc<SpdkEnv>>> = Mutex::new(None);

impl SpdkEnv {
    /// Initialises the environment, or returns the one already up (whose options win).
    pub fn init(options: &EnvOptions) -> Result<Arc<SpdkEnv>, SpdkError> {
        let mut guard = ENV.lock().expect("no panic happens while the lock is held");
        if let Some(env) = guard.as_ref() {
            return Ok(env.clone());
        }
        if !options.no_huge {
            check_hugepages()?;
        }
        let level = match options.log_level.as_deref() {
            None => spdk_sys::SPDK_LOG_DISABLED,
            Some("error") => spdk_sys::SPDK_LOG_ERROR,
            Some("warn") => spdk_sys::SPDK_LOG_WARN,
            Some("notice") => spdk_sys::SPDK_LOG_NOTICE,
            Some("info") => spdk_sys::SPDK_LOG_INFO,
            Some(_) => spdk_sys::SPDK_LOG_DEBUG,
        };
        // SAFETY: sets a global integer in SPDK's log library; no other thread uses SPDK yet.
        unsafe { spdk_sys::spdk_log_set_print_level(level) };
        let name = CString::new("nvmebench").expect("constant has no NUL");
        let mask =
            CString::new(format!("[{}]", options.cores.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",")))
                .expect("digits and commas have no NUL");
        let iova = options.iova_mode.as_deref().map(|m| CString::new(m).expect("validated by the CLI: no NUL"));
        let context = options.env_context().map(|c| CString::new(c).expect("constants have no NUL"));
        // SAFETY: every pointer is NULL or a NUL-terminated CString alive until the call returns
        // (SPDK copies what it keeps: the EAL arguments are strdup'ed); called at most once per
        // process (guarded by ENV).
        let rc = unsafe {
            spdk_sys::nvmebench_shim_env_init(
                name.as_ptr(),
                mask.as_ptr(),
                options.cores.first().map_or(-1, |&c| c as i32),
                options.shm_id.unwrap_or(-1),
                options.mem_size_mb.map_or(-1, |m| m as i32),
                options.no_huge,
                options.no_pci,
                iova.as_ref().map_or(std::ptr::null(), |i| i.as_ptr()),
                options.single_file_segments && !options.no_huge,
                context.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
            )
        };
        if rc < 0 {
            return Err(SpdkError::EnvInit { errno: -rc });
        }
        let env = Arc::new(SpdkEnv { options: options.clone() });
        *guard = Some(env.clone());
        Ok(env)
    }
}

/// SPDK's EAL fails with pages of log when there are no hugepages; say it in one sentence instead.
pub fn check_hugepages() -> Result<(), SpdkError> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let free: u64 = meminfo
        .lines()
        .find(|l| l.starts_with("HugePages_Free:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mounted = std::fs::read_to_string("/proc/mounts")
        .unwrap_or_default()
        .lines()
        .any(|l| l.split_whitespace().nth(2) == Some("hugetlbfs"));
    if free == 0 {
        return Err(SpdkError::NoHugepages);
    }
    if !mounted {
        return Err(SpdkError::NoHugetlbfs);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vfio_user_trids_need_single_file_segments() {
        let vfu = "trtype:VFIOUSER traddr:/tmp/vfu subnqn:nqn.2019-07.io.spdk:x";
        let tcp = "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:4420 subnqn:nqn.x";
        assert!(EnvOptions::needs_single_file_segments([vfu]));
        assert!(EnvOptions::needs_single_file_segments([tcp, "trtype=vfiouser traddr:/x"]));
        assert!(!EnvOptions::needs_single_file_segments([tcp, "trtype:PCIe traddr:0000:01:00.0"]));
        // A path that merely contains the word is not the transport.
        assert!(!EnvOptions::needs_single_file_segments(["trtype:TCP traddr:/vfiouser"]));
    }

    #[test]
    fn single_file_segments_run_in_memory_unless_shared() {
        let sfs = EnvOptions { single_file_segments: true, ..EnvOptions::default() };
        assert_eq!(sfs.env_context().as_deref(), Some("--in-memory --log-level=lib.eal:4"));
        let logged = EnvOptions { log_level: Some("notice".into()), ..sfs.clone() };
        assert_eq!(logged.env_context().as_deref(), Some("--in-memory"));
        assert_eq!(EnvOptions { shm_id: Some(1), ..sfs.clone() }.env_context(), None, "other processes see the files");
        assert_eq!(EnvOptions { no_huge: true, ..sfs.clone() }.env_context(), None);
        assert_eq!(EnvOptions::default().env_context(), None, "DPDK unlinks its files itself (--huge-unlink)");
    }
}

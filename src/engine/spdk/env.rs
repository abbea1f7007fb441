//! The SPDK environment (DPDK's EAL underneath): initialised once per process, before any controller
//! is attached, with the worker cores, hugepage memory and IOVA mode the run asks for.

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
        // SAFETY: every pointer is NULL or a NUL-terminated CString alive until the call returns
        // (SPDK copies what it keeps); called at most once per process (guarded by ENV).
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

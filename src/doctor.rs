//! `nvmebench doctor`: checks a machine for the bypass path (SPDK over vfio-pci or uio), the kernel
//! path (io_uring) and what both share (cores, frequency, NUMA), and says for each finding the
//! command that fixes it.
//!
//! It only reads: sysfs, procfs and resource limits, under a root directory so tests can hand it a
//! fabricated tree. It changes nothing (the fixes are printed, never run) and knows nothing of how
//! runs are issued; `hugepages/setup.sh` and `scripts/nvme-bind.sh` do the fixing.

use crate::cli::DoctorArgs;
use serde::Serialize;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// Hugepage memory a run asks for when `--hugemem` is not given: SPDK's per-process default pools
/// and a few queue pairs' DMA buffers fit in it.
pub const DEFAULT_HUGEMEM_BYTES: u64 = 512 << 20;

/// The verdict on one check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warn,
    Fail,
}

impl Status {
    fn label(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::Warn => "WARN",
            Status::Fail => "FAIL",
        }
    }
}

/// Which I/O path a check is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IoPath {
    /// SPDK's userspace driver: hugepages, IOMMU, vfio/uio.
    Bypass,
    /// The kernel's nvme driver through io_uring.
    Kernel,
    /// What matters to both: cores, frequency, NUMA.
    Both,
}

/// One finding: what was checked, what was seen, and the command that fixes it (for WARN and FAIL).
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    pub path: IoPath,
    pub name: String,
    pub status: Status,
    pub detail: String,
    pub fix: Option<String>,
}

/// What the run to be checked for looks like.
#[derive(Clone, Debug)]
pub struct DoctorConfig {
    /// `/dev/nvme0n1`, `nvme0n1`, a PCI address (`0000:01:00.0`) or an SPDK transport ID.
    pub device: Option<String>,
    /// The worker cores.
    pub cores: Vec<usize>,
    /// Hugepage memory the run needs.
    pub hugemem_bytes: u64,
}

/// A `--device` that names nothing on this machine: a usage error.
#[derive(Debug, thiserror::Error)]
pub enum DoctorError {
    #[error(
        "--device {0}: no such NVMe block device or PCI function; give /dev/nvmeXnY or a PCI address like 0000:01:00.0 (scripts/nvme-bind.sh list shows them)"
    )]
    NoDevice(String),
    #[error("--cores {core}: this machine has no CPU {core}; pick cores from {online}")]
    NoCore { core: usize, online: String },
}

/// The machine as seen through its sysfs and procfs, under `root` (`/` in real use).
pub struct Host {
    root: PathBuf,
    /// The effective user is root (exempt from the memlock limit through CAP_IPC_LOCK).
    pub is_root: bool,
    /// RLIMIT_MEMLOCK soft limit in bytes; `None` is unlimited.
    pub memlock_bytes: Option<u64>,
    /// The `spdk` feature is compiled in.
    pub spdk_compiled: bool,
    /// Where an installed SPDK may be, most likely first (absolute, under `root`): `$SPDK_DIR`,
    /// scripts/spdk-build.sh's cache (`~/.cache/nvmebench/spdk-*`, newest first), /opt/spdk,
    /// /usr/local.
    pub spdk_prefixes: Vec<PathBuf>,
    /// Whether creating an io_uring works here, and the error if not.
    pub uring: Result<(), String>,
}

impl Host {
    /// This machine.
    pub fn local() -> Host {
        let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
        let euid = status.lines().find_map(|l| l.strip_prefix("Uid:")).and_then(|l| l.split_whitespace().nth(1));
        let limits = fs::read_to_string("/proc/self/limits").unwrap_or_default();
        let memlock =
            limits.lines().find_map(|l| l.strip_prefix("Max locked memory")).and_then(|l| l.split_whitespace().next());
        Host {
            root: PathBuf::from("/"),
            is_root: euid == Some("0"),
            // "unlimited" (or an unreadable file) parses to None.
            memlock_bytes: memlock.and_then(|m| m.parse().ok()),
            spdk_compiled: cfg!(feature = "spdk"),
            spdk_prefixes: spdk_prefixes(
                std::env::var_os("SPDK_DIR").map(PathBuf::from),
                std::env::var_os("XDG_CACHE_HOME")
                    .map(PathBuf::from)
                    .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache"))),
                Path::new("/"),
            ),
            uring: io_uring::IoUring::new(2).map(drop).map_err(|e| e.to_string()),
        }
    }

    /// A fabricated machine under `root`, for tests.
    pub fn at(root: &Path) -> Host {
        Host {
            root: root.to_path_buf(),
            is_root: true,
            memlock_bytes: None,
            spdk_compiled: false,
            spdk_prefixes: spdk_prefixes(None, Some(PathBuf::from("/root/.cache")), root),
            uring: Ok(()),
        }
    }

    fn p(&self, rel: &str) -> PathBuf {
        self.root.join(rel.trim_start_matches('/'))
    }

    fn read(&self, rel: &str) -> Option<String> {
        fs::read_to_string(self.p(rel)).ok().map(|s| s.trim().to_string())
    }

    fn num(&self, rel: &str) -> Option<u64> {
        self.read(rel)?.parse().ok()
    }

    fn names(&self, rel: &str) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(self.p(rel))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// The last path component a sysfs symlink points to (`driver` -> `nvme`).
    fn link_name(&self, rel: &str) -> Option<String> {
        fs::read_link(self.p(rel)).ok()?.file_name().map(|n| n.to_string_lossy().into_owned())
    }

    fn pci_driver(&self, bdf: &str) -> String {
        self.link_name(&format!("sys/bus/pci/devices/{bdf}/driver")).unwrap_or_else(|| "none".into())
    }

    /// NVMe namespaces (`nvme0n1`) of a PCI function bound to the nvme driver.
    fn namespaces_of(&self, bdf: &str) -> Vec<String> {
        let mut out = Vec::new();
        for ctrl in self.names(&format!("sys/bus/pci/devices/{bdf}/nvme")) {
            for ns in self.names(&format!("sys/bus/pci/devices/{bdf}/nvme/{ctrl}")) {
                if ns.starts_with("nvme") && ns.contains('n') && ns[4..].contains('n') {
                    out.push(ns);
                }
            }
        }
        // Native multipath puts namespaces under the subsystem; they are still named after it.
        if out.is_empty() {
            for ctrl in self.names(&format!("sys/bus/pci/devices/{bdf}/nvme")) {
                let prefix = format!("{ctrl}n");
                out.extend(self.names("sys/block").into_iter().filter(|b| b.starts_with(&prefix)));
            }
        }
        out
    }

    /// Every PCI function of class NVMe.
    fn nvme_functions(&self) -> Vec<String> {
        self.names("sys/bus/pci/devices")
            .into_iter()
            .filter(|d| self.read(&format!("sys/bus/pci/devices/{d}/class")).as_deref() == Some("0x010802"))
            .collect()
    }

    fn cpu_node(&self, cpu: usize) -> Option<usize> {
        self.names(&format!("sys/devices/system/cpu/cpu{cpu}"))
            .iter()
            .find_map(|n| n.strip_prefix("node").and_then(|x| x.parse().ok()))
    }
}

/// The device under test, resolved: its PCI function (if PCIe) and its namespaces.
struct Device {
    given: String,
    bdf: Option<String>,
    namespaces: Vec<String>,
}

fn looks_like_bdf(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 12 && b[4] == b':' && b[7] == b':' && b[10] == b'.'
}

fn resolve_device(host: &Host, given: &str) -> Result<Device, DoctorError> {
    let no = || DoctorError::NoDevice(given.to_string());
    let traddr = given.split_whitespace().find_map(|kv| kv.strip_prefix("traddr:")).unwrap_or(given);
    let bdf = if traddr.len() == 7 { format!("0000:{traddr}") } else { traddr.to_string() };
    if looks_like_bdf(&bdf) {
        if !host.p(&format!("sys/bus/pci/devices/{bdf}")).exists() {
            return Err(no());
        }
        let namespaces = host.namespaces_of(&bdf);
        return Ok(Device { given: given.to_string(), bdf: Some(bdf), namespaces });
    }
    let name = given.trim_start_matches("/dev/");
    if name.contains('/') || !host.p(&format!("sys/class/block/{name}")).exists() {
        return Err(no());
    }
    // A partition's disk is its parent directory in sysfs.
    let disk = if host.p(&format!("sys/class/block/{name}/partition")).exists() {
        fs::canonicalize(host.p(&format!("sys/class/block/{name}")))
            .ok()
            .and_then(|p| p.parent().and_then(|d| d.file_name()).map(|n| n.to_string_lossy().into_owned()))
            .ok_or_else(no)?
    } else {
        name.to_string()
    };
    // nvmeXnY belongs to controller nvmeX, whose `device` is the PCI function (for PCIe).
    let ctrl = disk.strip_prefix("nvme").and_then(|r| r.split('n').next()).map(|x| format!("nvme{x}"));
    let bdf = ctrl
        .and_then(|c| fs::canonicalize(host.p(&format!("sys/class/nvme/{c}/device"))).ok())
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .filter(|b| looks_like_bdf(b));
    Ok(Device { given: given.to_string(), bdf, namespaces: vec![disk] })
}

fn check(path: IoPath, name: &str, status: Status, detail: String, fix: Option<String>) -> Check {
    Check { path, name: name.to_string(), status, detail, fix }
}

fn mib(bytes: u64) -> u64 {
    bytes.div_ceil(1 << 20)
}

/// Runs every check.
///
/// # Errors
/// A `--device` that names nothing here, or a core that does not exist.
pub fn diagnose(host: &Host, cfg: &DoctorConfig) -> Result<Vec<Check>, DoctorError> {
    let device = cfg.device.as_deref().map(|d| resolve_device(host, d)).transpose()?;
    let online = host.read("sys/devices/system/cpu/online").unwrap_or_default();
    if let Some(&core) = cfg.cores.iter().find(|&&c| !host.p(&format!("sys/devices/system/cpu/cpu{c}")).exists()) {
        return Err(DoctorError::NoCore { core, online });
    }
    let dev_node = device
        .as_ref()
        .and_then(|d| d.bdf.as_ref())
        .and_then(|b| host.read(&format!("sys/bus/pci/devices/{b}/numa_node")))
        .and_then(|n| n.parse::<i64>().ok())
        .filter(|n| *n >= 0)
        .map(|n| n as usize);
    let mut out = Vec::new();
    bypass(host, cfg, device.as_ref(), dev_node, &mut out);
    kernel(host, device.as_ref(), &mut out);
    both(host, cfg, dev_node, &mut out);
    Ok(out)
}

/// The bypass path's checks (SPDK over vfio-pci or uio), in report order.
fn bypass(host: &Host, cfg: &DoctorConfig, device: Option<&Device>, dev_node: Option<usize>, out: &mut Vec<Check>) {
    let need = cfg.hugemem_bytes;
    let fix_mem = format!("hugepages/setup.sh --mem {}M", mib(need));
    out.push(hugepages_free(host, need, &fix_mem));
    if let Some(node) = dev_node {
        out.push(hugepages_on_node(host, need, node));
    }
    out.push(hugetlbfs_mount(host, fix_mem));
    let iommu = !host.names("sys/kernel/iommu_groups").is_empty();
    out.push(iommu_check(iommu));
    out.push(vfio_driver(host));
    match device {
        None => out.push(nvme_functions_found(host)),
        Some(Device { bdf: None, given, .. }) => out.push(check(
            IoPath::Bypass,
            "device-driver",
            Status::Warn,
            format!("{given} is not a PCIe function; SPDK's PCIe transport cannot drive it"),
            Some("give a local PCIe NVMe device (scripts/nvme-bind.sh list)".into()),
        )),
        Some(Device { bdf: Some(bdf), .. }) => {
            out.push(device_driver(host, bdf, iommu));
            out.extend(iommu_group(host, bdf));
        }
    }
    out.push(memlock(host, need));
    out.push(spdk_build(host));
}

/// Free hugepage memory over every page size; SPDK takes whichever the mount offers.
fn hugepages_free(host: &Host, need: u64, fix_mem: &str) -> Check {
    let mut free = 0u64;
    let mut sizes = Vec::new();
    for d in host.names("sys/kernel/mm/hugepages") {
        let Some(kb) =
            d.strip_prefix("hugepages-").and_then(|s| s.strip_suffix("kB")).and_then(|s| s.parse::<u64>().ok())
        else {
            continue;
        };
        let f = host.num(&format!("sys/kernel/mm/hugepages/{d}/free_hugepages")).unwrap_or(0);
        free += f * kb * 1024;
        if f > 0 {
            sizes.push(format!("{f} x {} MiB", kb / 1024));
        }
    }
    if free >= need {
        check(
            IoPath::Bypass,
            "hugepages",
            Status::Ok,
            format!("{} MiB free ({}); the run needs {} MiB", mib(free), sizes.join(", "), mib(need)),
            None,
        )
    } else {
        check(
            IoPath::Bypass,
            "hugepages",
            Status::Fail,
            format!("{} MiB free; the run needs {} MiB", free >> 20, mib(need)),
            Some(fix_mem.to_string()),
        )
    }
}

/// Hugepages on the device's own node: DMA buffers elsewhere cross the interconnect (a warning only).
fn hugepages_on_node(host: &Host, need: u64, node: usize) -> Check {
    let f2m =
        host.num(&format!("sys/devices/system/node/node{node}/hugepages/hugepages-2048kB/free_hugepages")).unwrap_or(0);
    let f1g = host
        .num(&format!("sys/devices/system/node/node{node}/hugepages/hugepages-1048576kB/free_hugepages"))
        .unwrap_or(0);
    let on_node = f2m * (2 << 20) + f1g * (1 << 30);
    let (status, fix) = if on_node >= need {
        (Status::Ok, None)
    } else {
        (Status::Warn, Some(format!("hugepages/setup.sh --mem {}M --node {node}", mib(need))))
    };
    check(
        IoPath::Bypass,
        "hugepages-node",
        status,
        format!("{} MiB free on the device's node {node}; DMA buffers elsewhere cross the interconnect", on_node >> 20),
        fix,
    )
}

/// A hugetlbfs mount: SPDK's DPDK environment maps its hugepages through one.
fn hugetlbfs_mount(host: &Host, fix_mem: String) -> Check {
    let mounts = host.read("proc/self/mounts").unwrap_or_default();
    let hugetlbfs: Vec<&str> =
        mounts.lines().filter_map(|l| l.split_whitespace().nth(1).filter(|_| l.contains(" hugetlbfs "))).collect();
    if hugetlbfs.is_empty() {
        check(IoPath::Bypass, "hugetlbfs", Status::Fail, "not mounted".into(), Some(fix_mem))
    } else {
        check(IoPath::Bypass, "hugetlbfs", Status::Ok, format!("mounted at {}", hugetlbfs.join(", ")), None)
    }
}

/// An enabled IOMMU (populated iommu groups) decides vfio-pci over uio_pci_generic.
fn iommu_check(iommu: bool) -> Check {
    if iommu {
        check(IoPath::Bypass, "iommu", Status::Ok, "enabled (/sys/kernel/iommu_groups is populated)".into(), None)
    } else {
        check(
            IoPath::Bypass,
            "iommu",
            Status::Warn,
            "not enabled: vfio-pci cannot be used, only uio_pci_generic (no DMA protection)".into(),
            Some("add intel_iommu=on iommu=pt (AMD: amd_iommu=on) to the kernel command line and reboot".into()),
        )
    }
}

/// The vfio-pci driver: loaded, loadable (its module is in this kernel's modules.dep), or absent.
fn vfio_driver(host: &Host) -> Check {
    let vfio_loaded = host.p("sys/bus/pci/drivers/vfio-pci").exists();
    let release = host.read("proc/sys/kernel/osrelease").unwrap_or_default();
    let deps = host.read(&format!("lib/modules/{release}/modules.dep")).unwrap_or_default();
    let vfio_module = deps
        .lines()
        .any(|l| l.split(':').next().is_some_and(|m| m.ends_with("/vfio-pci.ko") || m.contains("/vfio-pci.ko.")));
    if vfio_loaded {
        check(IoPath::Bypass, "vfio-pci", Status::Ok, "driver loaded".into(), None)
    } else if vfio_module {
        check(
            IoPath::Bypass,
            "vfio-pci",
            Status::Warn,
            "module available, not loaded".into(),
            Some("modprobe vfio-pci".into()),
        )
    } else {
        check(
            IoPath::Bypass,
            "vfio-pci",
            Status::Warn,
            format!("no vfio-pci driver or module for kernel {release}"),
            Some("install this kernel's modules (Debian: linux-image-$(uname -r)), or use uio_pci_generic".into()),
        )
    }
}

/// Without `--device`: the NVMe PCI functions there are, so the user can name one.
fn nvme_functions_found(host: &Host) -> Check {
    let fns = host.nvme_functions();
    let (status, detail, fix) = if fns.is_empty() {
        (
            Status::Warn,
            "no NVMe PCI functions on this machine".to_string(),
            Some("try nvmebench on an emulated controller: scripts/testbed.sh (see docs/testbed.md)".to_string()),
        )
    } else {
        let list: Vec<String> = fns.iter().map(|f| format!("{f} ({})", host.pci_driver(f))).collect();
        (Status::Ok, format!("{}; name one with --device for its own checks", list.join(", ")), None)
    };
    check(IoPath::Bypass, "nvme-functions", status, detail, fix)
}

/// The device's driver: SPDK can only use a function bound to vfio-pci or uio_pci_generic; the
/// fix picks uio when there is no IOMMU for vfio.
fn device_driver(host: &Host, bdf: &str, iommu: bool) -> Check {
    let drv = host.pci_driver(bdf);
    match drv.as_str() {
        "vfio-pci" | "uio_pci_generic" => {
            check(IoPath::Bypass, "device-driver", Status::Ok, format!("{bdf} is bound to {drv}"), None)
        }
        _ => check(
            IoPath::Bypass,
            "device-driver",
            Status::Warn,
            format!("{bdf} is bound to {drv}: the kernel owns it, SPDK cannot use it"),
            Some(format!("scripts/nvme-bind.sh bind {bdf}{}", if iommu { "" } else { " --driver uio_pci_generic" })),
        ),
    }
}

/// The device's IOMMU group (none without an IOMMU): vfio needs every other member off host drivers.
fn iommu_group(host: &Host, bdf: &str) -> Option<Check> {
    let group = host.link_name(&format!("sys/bus/pci/devices/{bdf}/iommu_group"))?;
    let blockers: Vec<String> = host
        .names(&format!("sys/kernel/iommu_groups/{group}/devices"))
        .into_iter()
        .filter(|d| d != bdf)
        .filter_map(|d| {
            let drv = host.pci_driver(&d);
            (!matches!(drv.as_str(), "none" | "vfio-pci" | "pci-stub" | "pcieport")).then(|| format!("{d} ({drv})"))
        })
        .collect();
    Some(if blockers.is_empty() {
        check(IoPath::Bypass, "iommu-group", Status::Ok, format!("group {group} is viable for vfio"), None)
    } else {
        check(
            IoPath::Bypass,
            "iommu-group",
            Status::Fail,
            format!(
                "group {group} also holds {} bound to host drivers; vfio needs the whole group",
                blockers.join(", ")
            ),
            Some(format!("scripts/nvme-bind.sh bind {bdf} --driver uio_pci_generic (or bind the whole group)")),
        )
    })
}

/// The memlock limit: vfio pins all DMA memory, so a non-root user's limit must cover it.
fn memlock(host: &Host, need: u64) -> Check {
    match (host.is_root, host.memlock_bytes) {
        (true, _) => check(IoPath::Bypass, "memlock", Status::Ok, "running as root: not limited".into(), None),
        (false, None) => check(IoPath::Bypass, "memlock", Status::Ok, "unlimited".into(), None),
        (false, Some(b)) if b >= need => {
            check(IoPath::Bypass, "memlock", Status::Ok, format!("{} MiB, enough for {} MiB", b >> 20, mib(need)), None)
        }
        (false, Some(b)) => check(
            IoPath::Bypass,
            "memlock",
            Status::Fail,
            format!("{} KiB: vfio pins all {} MiB of DMA memory", b >> 10, mib(need)),
            Some("ulimit -l unlimited (permanently: '<user> - memlock unlimited' in /etc/security/limits.conf), or run as root".into()),
        ),
    }
}

/// Whether this binary has the SPDK engine, and if not, the exact command that builds it: with an
/// installed SPDK, or after building one with scripts/spdk-build.sh.
fn spdk_build(host: &Host) -> Check {
    if host.spdk_compiled {
        return check(IoPath::Bypass, "spdk", Status::Ok, "compiled in (this binary has the spdk engine)".into(), None);
    }
    let installed =
        host.spdk_prefixes.iter().find(|p| host.p(&p.join("lib/pkgconfig/spdk_nvme.pc").to_string_lossy()).exists());
    check(
        IoPath::Bypass,
        "spdk",
        Status::Warn,
        match installed {
            Some(p) => format!("not compiled in; an SPDK is installed at {}", p.display()),
            None => "not compiled in, and no installed SPDK found".to_string(),
        },
        Some(match installed {
            Some(p) => format!("SPDK_DIR={} cargo build --release --features spdk", p.display()),
            None => format!(
                "scripts/spdk-build.sh --install-deps && SPDK_DIR={}/nvmebench/spdk-{DEFAULT_SPDK} cargo build --release --features spdk",
                host.spdk_prefixes
                    .iter()
                    .find_map(|p| p.to_str()?.strip_suffix(&format!("/nvmebench/spdk-{DEFAULT_SPDK}")))
                    .unwrap_or("~/.cache")
            ),
        }),
    )
}

/// The SPDK release scripts/spdk-build.sh builds when given no source.
const DEFAULT_SPDK: &str = "25.09";

/// Candidate SPDK install prefixes, most likely first: `spdk_dir`, the build script's cache under
/// `cache` (the default release's place first, then the others it holds, newest first), /opt/spdk and
/// /usr/local. `root` is where the cache is looked for (`/` on a real machine).
fn spdk_prefixes(spdk_dir: Option<PathBuf>, cache: Option<PathBuf>, root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = spdk_dir.into_iter().collect();
    if let Some(cache) = cache {
        let dir = cache.join("nvmebench");
        out.push(dir.join(format!("spdk-{DEFAULT_SPDK}")));
        let mut found: Vec<PathBuf> = fs::read_dir(root.join(dir.strip_prefix("/").unwrap_or(&dir)))
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .filter(|e| e.file_name().to_string_lossy().starts_with("spdk-"))
                    .map(|e| dir.join(e.file_name()))
                    .collect()
            })
            .unwrap_or_default();
        found.sort();
        out.extend(found.into_iter().rev());
    }
    out.extend([PathBuf::from("/opt/spdk"), PathBuf::from("/usr/local")]);
    let mut seen = BTreeSet::new();
    out.retain(|p| seen.insert(p.clone()));
    out
}

/// The kernel path's checks (io_uring on the nvme driver); per-namespace checks only when there is one.
fn kernel(host: &Host, device: Option<&Device>, out: &mut Vec<Check>) {
    out.push(io_uring_available(host));
    let poll = host.num("sys/module/nvme/parameters/poll_queues");
    out.push(poll_queues(poll));
    let namespaces: Vec<String> = match device {
        Some(d) => d.namespaces.clone(),
        None => host.names("sys/block").into_iter().filter(|b| b.starts_with("nvme")).collect(),
    };
    if namespaces.is_empty() {
        out.push(no_block_device(device));
        return;
    }
    for ns in namespaces {
        queue_settings(host, &ns, poll.is_some_and(|n| n > 0), out);
    }
}

/// Whether this process can create a ring, and whether the io_uring_disabled sysctl restricts it.
fn io_uring_available(host: &Host) -> Check {
    let disabled = host.num("proc/sys/kernel/io_uring_disabled").unwrap_or(0);
    match (&host.uring, disabled) {
        (Ok(()), 0) => check(IoPath::Kernel, "io_uring", Status::Ok, "available".into(), None),
        (Ok(()), d) => check(
            IoPath::Kernel,
            "io_uring",
            Status::Warn,
            format!("available to this user, but kernel.io_uring_disabled={d} limits it to the io_uring group"),
            Some("sysctl kernel.io_uring_disabled=0".into()),
        ),
        (Err(e), d) => check(
            IoPath::Kernel,
            "io_uring",
            Status::Fail,
            format!("cannot create a ring ({e}); kernel.io_uring_disabled={d}"),
            Some(if d > 0 {
                "sysctl kernel.io_uring_disabled=0".to_string()
            } else {
                "use Linux 5.11 or newer, and allow io_uring in the container's seccomp profile".to_string()
            }),
        ),
    }
}

/// The nvme driver's poll queues (`None`: driver not loaded); without them hipri I/O is interrupt-driven.
fn poll_queues(poll: Option<u64>) -> Check {
    match poll {
        Some(n) if n > 0 => check(IoPath::Kernel, "poll-queues", Status::Ok, format!("nvme.poll_queues={n}: polled I/O works"), None),
        Some(_) => check(
            IoPath::Kernel,
            "poll-queues",
            Status::Warn,
            "nvme.poll_queues=0: polled (hipri) I/O falls back to interrupts".into(),
            Some("add nvme.poll_queues=2 to the kernel command line (or modprobe -r nvme && modprobe nvme poll_queues=2)".into()),
        ),
        None => check(
            IoPath::Kernel,
            "poll-queues",
            Status::Warn,
            "the nvme driver is not loaded".into(),
            Some("modprobe nvme poll_queues=2".into()),
        ),
    }
}

/// No namespace to check: the named device is not on the nvme driver, or the machine has none.
fn no_block_device(device: Option<&Device>) -> Check {
    let (detail, fix) = match device {
        Some(d) => (
            format!("{} has no block device: it is not bound to the nvme driver", d.given),
            format!("scripts/nvme-bind.sh restore {}", d.bdf.as_deref().unwrap_or(&d.given)),
        ),
        None => (
            "no NVMe block devices".to_string(),
            "scripts/testbed.sh gives an emulated one (see docs/testbed.md)".to_string(),
        ),
    };
    check(IoPath::Kernel, "block-device", Status::Warn, detail, Some(fix))
}

/// One namespace's block-queue settings that add per-I/O cost: io_poll (only when poll queues
/// exist), scheduler, iostats, nomerges.
fn queue_settings(host: &Host, ns: &str, polled: bool, out: &mut Vec<Check>) {
    use IoPath::Kernel;
    let q = format!("sys/block/{ns}/queue");
    if polled && host.num(&format!("{q}/io_poll")) == Some(0) {
        out.push(check(
            Kernel,
            "io-poll",
            Status::Warn,
            format!("{ns}: io_poll=0 although poll queues exist"),
            Some(format!("echo 1 > /{q}/io_poll")),
        ));
    }
    let sched = host.read(&format!("{q}/scheduler")).unwrap_or_default();
    let current = sched.split_whitespace().find(|s| s.starts_with('[')).map(|s| s.trim_matches(['[', ']']).to_string());
    out.push(match current.as_deref() {
        None | Some("none") => check(Kernel, "scheduler", Status::Ok, format!("{ns}: none"), None),
        Some(s) => check(
            Kernel,
            "scheduler",
            Status::Warn,
            format!("{ns}: {s} adds latency to every I/O"),
            Some(format!("echo none > /{q}/scheduler")),
        ),
    });
    out.push(match host.num(&format!("{q}/iostats")) {
        Some(1) => check(
            Kernel,
            "iostats",
            Status::Warn,
            format!("{ns}: iostats=1 costs a little per I/O"),
            Some(format!("echo 0 > /{q}/iostats")),
        ),
        _ => check(Kernel, "iostats", Status::Ok, format!("{ns}: off"), None),
    });
    out.push(match host.num(&format!("{q}/nomerges")) {
        Some(2) => check(Kernel, "nomerges", Status::Ok, format!("{ns}: 2 (no merge attempts)"), None),
        n => check(
            Kernel,
            "nomerges",
            Status::Warn,
            format!("{ns}: nomerges={}: the block layer tries to merge requests", n.unwrap_or(0)),
            Some(format!("echo 2 > /{q}/nomerges")),
        ),
    });
}

/// What both paths share: the worker cores' clock, isolation, SMT and NUMA placement.
fn both(host: &Host, cfg: &DoctorConfig, dev_node: Option<usize>, out: &mut Vec<Check>) {
    let cores = &cfg.cores;
    out.push(cpu_governor(host, cores));
    out.push(isolated_cores(host, cores));
    out.push(smt_siblings(host, cores));
    out.push(numa_placement(host, cores, dev_node));
}

/// The worker cores' cpufreq governors: anything but `performance` makes latency follow the clock.
fn cpu_governor(host: &Host, cores: &[usize]) -> Check {
    let mut slow = Vec::new();
    let mut governed = 0;
    for c in cores {
        if let Some(g) = host.read(&format!("sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor")) {
            governed += 1;
            if g != "performance" {
                slow.push(format!("cpu{c}: {g}"));
            }
        }
    }
    if governed == 0 {
        check(
            IoPath::Both,
            "cpu-governor",
            Status::Ok,
            "no cpufreq control (fixed clock or virtual machine)".into(),
            None,
        )
    } else if slow.is_empty() {
        check(IoPath::Both, "cpu-governor", Status::Ok, "performance".into(), None)
    } else {
        check(
            IoPath::Both,
            "cpu-governor",
            Status::Warn,
            format!("{}: latency varies with the clock", slow.join(", ")),
            Some("cpupower frequency-set -g performance".into()),
        )
    }
}

/// Worker cores outside isolcpus/nohz_full, where other tasks and timer ticks interrupt them.
fn isolated_cores(host: &Host, cores: &[usize]) -> Check {
    let mut isolated = BTreeSet::new();
    for f in ["sys/devices/system/cpu/isolated", "sys/devices/system/cpu/nohz_full"] {
        if let Some(s) = host.read(f) {
            isolated.extend(crate::units::parse_core_list(&s).unwrap_or_default());
        }
    }
    let online = host.read("sys/devices/system/cpu/online").and_then(|s| crate::units::parse_core_list(&s).ok());
    isolation_check(cores, &isolated, online.as_deref().unwrap_or(&[]))
}

/// Pairs of worker cores that are SMT siblings (same thread_siblings_list), sharing one physical core.
fn smt_siblings(host: &Host, cores: &[usize]) -> Check {
    let mut seen: Vec<(usize, String)> = Vec::new();
    let mut pairs = Vec::new();
    for &c in cores {
        let sib =
            host.read(&format!("sys/devices/system/cpu/cpu{c}/topology/thread_siblings_list")).unwrap_or_default();
        if let Some((other, _)) = seen.iter().find(|(_, s)| !sib.is_empty() && *s == sib) {
            pairs.push(format!("{other}+{c}"));
        } else {
            seen.push((c, sib));
        }
    }
    if pairs.is_empty() {
        check(IoPath::Both, "smt", Status::Ok, "no two worker cores share a physical core".into(), None)
    } else {
        check(
            IoPath::Both,
            "smt",
            Status::Warn,
            format!("SMT siblings among worker cores: {}", pairs.join(", ")),
            Some("list one thread per physical core in --cores (see lscpu -e)".into()),
        )
    }
}

/// Worker cores on another NUMA node than the device; the fix names the device node's cores.
fn numa_placement(host: &Host, cores: &[usize], dev_node: Option<usize>) -> Check {
    let Some(node) = dev_node else {
        return check(IoPath::Both, "numa", Status::Ok, "device NUMA node unknown or a single node".into(), None);
    };
    let remote: Vec<String> =
        cores.iter().filter(|&&c| host.cpu_node(c).is_some_and(|n| n != node)).map(usize::to_string).collect();
    if remote.is_empty() {
        check(IoPath::Both, "numa", Status::Ok, format!("worker cores are on the device's node {node}"), None)
    } else {
        let local = host.read(&format!("sys/devices/system/node/node{node}/cpulist")).unwrap_or_default();
        check(
            IoPath::Both,
            "numa",
            Status::Warn,
            format!("worker cores {} are not on the device's node {node}", remote.join(",")),
            Some(format!("--cores {local}")),
        )
    }
}

/// The report as text: one line per check, its fix indented below a WARN or FAIL, then a summary.
pub fn render_text(checks: &[Check]) -> String {
    let mut s = String::new();
    for c in checks {
        let path = match c.path {
            IoPath::Bypass => "bypass",
            IoPath::Kernel => "kernel",
            IoPath::Both => "both",
        };
        s.push_str(&format!("{:<5} {:<7} {:<15} {}\n", c.status.label(), path, c.name, c.detail));
        if let Some(f) = &c.fix {
            s.push_str(&format!("{:<14}fix: {f}\n", ""));
        }
    }
    let count = |st| checks.iter().filter(|c| c.status == st).count();
    s.push_str(&format!("{} ok, {} warn, {} fail\n", count(Status::Ok), count(Status::Warn), count(Status::Fail)));
    s
}

/// The report as JSON: `{"checks": [...], "ok": n, "warn": n, "fail": n}`.
pub fn render_json(checks: &[Check]) -> serde_json::Value {
    let count = |st| checks.iter().filter(|c| c.status == st).count();
    serde_json::json!({
        "checks": checks,
        "ok": count(Status::Ok),
        "warn": count(Status::Warn),
        "fail": count(Status::Fail),
    })
}

/// Runs `nvmebench doctor` on this machine, prints the report and returns the exit status.
///
/// # Errors
/// A usage error (see [`diagnose`]); nothing is printed then.
pub fn doctor_command(args: &DoctorArgs) -> Result<u8, DoctorError> {
    let cores = match &args.cores {
        Some(c) => c.0.clone(),
        // The default of `run`: one worker on the first allowed core.
        None => core_affinity::get_core_ids().and_then(|c| c.into_iter().map(|c| c.id).min()).into_iter().collect(),
    };
    let cfg = DoctorConfig {
        device: args.device.clone(),
        cores,
        hugemem_bytes: args.hugemem.unwrap_or(DEFAULT_HUGEMEM_BYTES),
    };
    let checks = diagnose(&Host::local(), &cfg)?;
    if args.json {
        println!("{:#}", render_json(&checks));
    } else {
        print!("{}", render_text(&checks));
    }
    Ok(exit_code(&checks))
}

/// 1 when any check failed, else 0.
pub fn exit_code(checks: &[Check]) -> u8 {
    u8::from(checks.iter().any(|c| c.status == Status::Fail))
}

/// The core left to the kernel's housekeeping (timers, RCU callbacks, unbound interrupts): the
/// boot CPU, which nohz_full cannot take.
pub const HOUSEKEEPING_CORE: usize = 0;

/// Whether the worker cores are isolated, and which cores to isolate: the workers' own, never the
/// housekeeping core (a worker there shares it with the kernel's work, so it is moved instead).
fn isolation_check(cores: &[usize], isolated: &BTreeSet<usize>, online: &[usize]) -> Check {
    use crate::config::format_core_list;
    let shared: Vec<usize> = cores.iter().copied().filter(|c| !isolated.contains(c)).collect();
    if shared.is_empty() {
        let list = format_core_list(cores);
        return check(
            IoPath::Both,
            "isolated-cores",
            Status::Ok,
            format!("all worker cores ({list}) are isolated"),
            None,
        );
    }
    let why = format!(
        "core {HOUSEKEEPING_CORE} stays for housekeeping: the kernel's timers, RCU callbacks and unbound interrupts need a core, and nohz_full cannot take the boot CPU"
    );
    let mut isolate: Vec<usize> = shared.iter().copied().filter(|&c| c != HOUSEKEEPING_CORE).collect();
    let on_housekeeping = cores.contains(&HOUSEKEEPING_CORE);
    let mut fix = String::new();
    if on_housekeeping {
        let spare = online.iter().copied().find(|c| *c != HOUSEKEEPING_CORE && !cores.contains(c));
        match spare {
            Some(c) => {
                let mut moved: Vec<usize> = cores.iter().map(|&w| if w == HOUSEKEEPING_CORE { c } else { w }).collect();
                moved.sort_unstable();
                fix = format!("run the workers on --cores {} instead; ", format_core_list(&moved));
                isolate.push(c);
                isolate.sort_unstable();
            }
            None => fix = format!("no core is free to take the worker off core {HOUSEKEEPING_CORE}; "),
        }
    }
    let finding = format!(
        "not isolated: {} (other tasks and timer ticks interrupt workers there){}",
        format_core_list(&shared),
        if on_housekeeping { format!("; core {HOUSEKEEPING_CORE} is the housekeeping core") } else { String::new() }
    );
    if !isolate.is_empty() {
        let list = format_core_list(&isolate);
        fix.push_str(&format!("add isolcpus={list} nohz_full={list} to the kernel command line and reboot"));
    }
    check(IoPath::Both, "isolated-cores", Status::Warn, finding, Some(format!("{fix} ({why})")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isolation_advice_leaves_the_housekeeping_core_alone() {
        let none = BTreeSet::new();
        let c = isolation_check(&[0], &none, &[0, 1, 2, 3]);
        let fix = c.fix.unwrap();
        assert!(fix.starts_with("run the workers on --cores 1 instead; add isolcpus=1 nohz_full=1"), "{fix}");
        assert!(fix.contains("core 0 stays for housekeeping"), "says why: {fix}");
        assert!(!fix.contains("isolcpus=0"), "{fix}");
        let fix = isolation_check(&[2, 3], &none, &[0, 1, 2, 3]).fix.unwrap();
        assert!(fix.starts_with("add isolcpus=2-3 nohz_full=2-3 to the kernel command line"), "{fix}");
        let fix = isolation_check(&[0, 1], &BTreeSet::from([1]), &[0, 1, 2]).fix.unwrap();
        assert!(fix.starts_with("run the workers on --cores 1-2 instead; add isolcpus=2 nohz_full=2"), "{fix}");
        assert!(isolation_check(&[0], &none, &[0]).fix.unwrap().starts_with("no core is free"));
        assert_eq!(isolation_check(&[1], &BTreeSet::from([1]), &[0, 1]).status, Status::Ok);
    }
    use std::os::unix::fs::symlink;

    fn put(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    fn link(root: &Path, rel: &str, to: &str) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        symlink(to, p).unwrap();
    }

    /// A one-node machine with an NVMe function at 0000:00:10.0 bound to `driver`.
    fn machine(driver: &str, free_2m: u64) -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        put(r, "sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", &free_2m.to_string());
        put(r, "sys/devices/system/cpu/online", "0-3");
        for c in 0..4 {
            put(
                r,
                &format!("sys/devices/system/cpu/cpu{c}/topology/thread_siblings_list"),
                &format!("{},{}", c % 2, c % 2 + 2),
            );
            put(r, &format!("sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor"), "powersave");
            fs::create_dir_all(r.join(format!("sys/devices/system/cpu/cpu{c}/node0"))).unwrap();
        }
        let dev = "sys/devices/pci0000:00/0000:00:10.0";
        put(r, &format!("{dev}/class"), "0x010802");
        put(r, &format!("{dev}/numa_node"), "0");
        fs::create_dir_all(r.join(format!("sys/bus/drivers/{driver}"))).unwrap();
        link(r, &format!("{dev}/driver"), &format!("../../bus/drivers/{driver}"));
        link(r, "sys/bus/pci/devices/0000:00:10.0", "../../../devices/pci0000:00/0000:00:10.0");
        if driver == "nvme" {
            fs::create_dir_all(r.join(format!("{dev}/nvme/nvme0/nvme0n1"))).unwrap();
            put(r, "sys/block/nvme0n1/queue/scheduler", "[mq-deadline] none");
            put(r, "sys/block/nvme0n1/queue/iostats", "1");
            put(r, "sys/block/nvme0n1/queue/nomerges", "0");
            fs::create_dir_all(r.join("sys/class/block/nvme0n1")).unwrap();
            link(r, "sys/class/nvme/nvme0/device", "../../../devices/pci0000:00/0000:00:10.0");
            put(r, "sys/module/nvme/parameters/poll_queues", "0");
        }
        t
    }

    fn statuses(checks: &[Check]) -> Vec<(String, Status)> {
        checks.iter().map(|c| (c.name.clone(), c.status)).collect()
    }

    fn cfg(device: Option<&str>, cores: &[usize]) -> DoctorConfig {
        DoctorConfig { device: device.map(String::from), cores: cores.to_vec(), hugemem_bytes: DEFAULT_HUGEMEM_BYTES }
    }

    #[test]
    fn before_setup_reports_what_is_missing_with_fixes() {
        let t = machine("nvme", 0);
        let checks = diagnose(&Host::at(t.path()), &cfg(Some("/dev/nvme0n1"), &[0, 2])).unwrap();
        let s = statuses(&checks);
        assert!(s.contains(&("hugepages".into(), Status::Fail)), "{s:?}");
        assert!(s.contains(&("hugetlbfs".into(), Status::Fail)));
        assert!(s.contains(&("device-driver".into(), Status::Warn)));
        assert!(s.contains(&("scheduler".into(), Status::Warn)));
        assert!(s.contains(&("smt".into(), Status::Warn)), "cores 0 and 2 are siblings: {s:?}");
        assert!(s.contains(&("cpu-governor".into(), Status::Warn)));
        assert!(checks.iter().all(|c| c.status == Status::Ok || c.fix.is_some()), "every finding names its fix");
        let hp = checks.iter().find(|c| c.name == "hugepages").unwrap();
        assert_eq!(hp.fix.as_deref(), Some("hugepages/setup.sh --mem 512M"));
        let drv = checks.iter().find(|c| c.name == "device-driver").unwrap();
        assert_eq!(drv.fix.as_deref(), Some("scripts/nvme-bind.sh bind 0000:00:10.0 --driver uio_pci_generic"));
        assert_eq!(exit_code(&checks), 1);
        let text = render_text(&checks);
        assert!(
            text.contains("FAIL  bypass  hugepages") && text.contains("fix: hugepages/setup.sh --mem 512M"),
            "{text}"
        );
    }

    #[test]
    fn after_setup_the_bypass_checks_pass() {
        let t = machine("vfio-pci", 256);
        put(t.path(), "proc/self/mounts", "nodev /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0\n");
        let checks = diagnose(&Host::at(t.path()), &cfg(Some("0000:00:10.0"), &[0, 1])).unwrap();
        let s = statuses(&checks);
        for name in ["hugepages", "hugetlbfs", "device-driver", "memlock", "smt", "numa"] {
            assert!(s.contains(&(name.into(), Status::Ok)), "{name}: {s:?}");
        }
        assert_eq!(exit_code(&checks), 0);
        let j = render_json(&checks);
        assert_eq!(j["fail"], 0);
        assert_eq!(j["checks"][0]["status"], "ok");
    }

    #[test]
    fn unknown_device_and_core_are_usage_errors() {
        let t = machine("nvme", 0);
        let h = Host::at(t.path());
        let e = diagnose(&h, &cfg(Some("/dev/nvme9n1"), &[0])).err().unwrap().to_string();
        assert!(e.starts_with("--device /dev/nvme9n1: no such NVMe block device"), "{e}");
        let e = diagnose(&h, &cfg(None, &[7])).err().unwrap().to_string();
        assert_eq!(e, "--cores 7: this machine has no CPU 7; pick cores from 0-3");
    }

    #[test]
    fn memlock_limit_fails_for_a_user() {
        let t = machine("vfio-pci", 256);
        let mut h = Host::at(t.path());
        h.is_root = false;
        h.memlock_bytes = Some(8 << 20);
        let checks = diagnose(&h, &cfg(None, &[0])).unwrap();
        let m = checks.iter().find(|c| c.name == "memlock").unwrap();
        assert_eq!(m.status, Status::Fail);
        assert!(m.fix.as_deref().unwrap().starts_with("ulimit -l unlimited"));
    }

    #[test]
    fn without_spdk_compiled_in_the_fix_is_the_exact_build_command() {
        let t = machine("vfio-pci", 256);
        let spdk = |h: &Host| diagnose(h, &cfg(None, &[0])).unwrap().into_iter().find(|c| c.name == "spdk").unwrap();
        let c = spdk(&Host::at(t.path()));
        assert_eq!((c.status, c.detail.as_str()), (Status::Warn, "not compiled in, and no installed SPDK found"));
        assert_eq!(
            c.fix.as_deref(),
            Some(
                "scripts/spdk-build.sh --install-deps && SPDK_DIR=/root/.cache/nvmebench/spdk-25.09 cargo build --release --features spdk"
            )
        );
        // An older release in the build script's cache is found and named.
        put(t.path(), "root/.cache/nvmebench/spdk-24.09/lib/pkgconfig/spdk_nvme.pc", "");
        let c = spdk(&Host::at(t.path()));
        assert_eq!(c.detail, "not compiled in; an SPDK is installed at /root/.cache/nvmebench/spdk-24.09");
        assert_eq!(
            c.fix.as_deref(),
            Some("SPDK_DIR=/root/.cache/nvmebench/spdk-24.09 cargo build --release --features spdk")
        );
        let mut h = Host::at(t.path());
        h.spdk_compiled = true;
        assert_eq!(spdk(&h).status, Status::Ok);
    }
}

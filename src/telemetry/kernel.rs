//! Kernel engines' telemetry: the NVMe controller behind a block or generic device, read through the
//! kernel's admin passthrough on `/dev/nvmeX`.
//!
//! Finds the controller from sysfs and opens it; the ioctl itself is `engine::admin`'s. Regular files
//! and devices that are not NVMe namespaces have no health log, and `open` says why in one phrase.

use super::LogReader;
use crate::engine::admin;
use crate::target::{Target, TargetKind};
use std::fs::{self, File};
use std::path::{Path, PathBuf};

/// The namespace id that addresses the controller as a whole.
const NSID_CONTROLLER: u32 = 0xFFFF_FFFF;

/// The controller character device `/dev/nvmeX` of a kernel engine's target.
pub struct KernelController {
    pub path: PathBuf,
    dev: File,
}

impl KernelController {
    /// The controller behind `t`.
    ///
    /// # Errors
    /// Why `t` has no health log to read: a regular file, not an NVMe device, or a controller that
    /// does not open.
    pub fn open(t: &Target) -> Result<KernelController, String> {
        let (class, what) = match t.kind {
            TargetKind::File | TargetKind::NewFile => return Err("a regular file has no NVMe health log".into()),
            TargetKind::BlockDevice => ("block", "block device"),
            TargetKind::NvmeGeneric => ("char", "device"),
            TargetKind::SpdkNamespace => return Err("SPDK namespaces are read through SPDK".into()),
        };
        let dev = t.device.as_deref().ok_or_else(|| format!("the {what} has no device number"))?;
        let sys = Path::new("/sys/dev").join(class).join(dev);
        let name = controller_name(&sys).ok_or_else(|| format!("the {what} is not an NVMe namespace"))?;
        let path = Path::new("/dev").join(&name);
        let dev = File::open(&path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        Ok(KernelController { path, dev })
    }
}

impl LogReader for KernelController {
    fn read_log(&mut self, lid: u8, buf: &mut [u8]) -> Result<(), String> {
        admin::get_log_page(&self.dev, lid, NSID_CONTROLLER, buf).map_err(|e| e.to_string())
    }
}

/// `nvmeX` for the sysfs directory of a namespace, a partition of one, or a multipath namespace
/// head (whose paths each lead to a controller; the first is taken).
fn controller_name(sys: &Path) -> Option<String> {
    let link_name = |p: PathBuf| -> Option<String> {
        let l = fs::read_link(p).ok()?;
        let n = l.file_name()?.to_str()?;
        is_controller(n).then(|| n.to_string())
    };
    if let Some(n) = link_name(sys.join("device")) {
        return Some(n);
    }
    if sys.join("partition").exists() {
        return controller_name(fs::canonicalize(sys).ok()?.parent()?);
    }
    let mut paths: Vec<PathBuf> = fs::read_dir(sys.join("multipath")).ok()?.flatten().map(|e| e.path()).collect();
    paths.sort();
    paths.into_iter().find_map(|p| link_name(p.join("device")))
}

/// Whether `n` names a controller: `nvme` and a number.
fn is_controller(n: &str) -> bool {
    n.strip_prefix("nvme").is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controllers_are_told_from_namespaces_and_subsystems() {
        assert!(is_controller("nvme0"));
        assert!(is_controller("nvme12"));
        assert!(!is_controller("nvme0n1"));
        assert!(!is_controller("nvme-subsys0"));
        assert!(!is_controller("nvme"));
    }

    #[test]
    fn the_controller_is_found_through_the_device_link_and_multipath() {
        let dir = std::env::temp_dir().join(format!("nvmebench-telemetry-sysfs-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let ns = dir.join("nvme0n1");
        fs::create_dir_all(&ns).expect("temp dir");
        std::os::unix::fs::symlink("../../nvme3", ns.join("device")).expect("symlink");
        assert_eq!(controller_name(&ns).as_deref(), Some("nvme3"));

        let head = dir.join("nvme1n1");
        fs::create_dir_all(head.join("multipath/nvme1c5n1")).expect("temp dir");
        std::os::unix::fs::symlink("../nvme-subsys1", head.join("device")).expect("symlink");
        std::os::unix::fs::symlink("../../nvme5", head.join("multipath/nvme1c5n1/device")).expect("symlink");
        assert_eq!(controller_name(&head).as_deref(), Some("nvme5"));

        let plain = dir.join("sda");
        fs::create_dir_all(&plain).expect("temp dir");
        assert_eq!(controller_name(&plain), None);
        fs::remove_dir_all(&dir).expect("cleanup");
    }

    #[test]
    fn files_have_no_health_log() {
        let t = Target {
            path: "/tmp/x".into(),
            kind: TargetKind::File,
            size_bytes: 0,
            logical_block_bytes: 512,
            device: None,
            nvme_sibling: None,
            model: None,
            serial: None,
            unsupported_ops: Vec::new(),
        };
        assert_eq!(KernelController::open(&t).err().as_deref(), Some("a regular file has no NVMe health log"));
    }
}

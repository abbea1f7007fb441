//! What the I/O goes to: a regular file, a block device or SPDK-driven NVMe namespaces, its size and logical block size, and
//! whether it is safe to write.
//!
//! Everything here reads sysfs and procfs and writes nothing, so a run can be refused before any
//! byte moves. Creating and laying out a missing file is the one write, done by [`prepare_file`]
//! after every check has passed.

use crate::units::format_bytes_human;
use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Used when the filesystem or device does not say (it is O_DIRECT's usual minimum).
pub const DEFAULT_LOGICAL_BLOCK: u64 = 512;

#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("{path} does not exist; create it, or add --size to have nvmebench create a file of that size")]
    Missing { path: String },
    #[error("{path} is a {kind}; nvmebench runs on a regular file or a block device")]
    Unsupported { path: String, kind: &'static str },
    #[error("cannot inspect {path}: {source}")]
    Inspect { path: String, source: io::Error },
    #[error(
        "cannot create {path}: its directory {dir} does not exist; create the directory or pick a path in one that does"
    )]
    NoParent { path: String, dir: String },
    #[error(
        "the filesystem holding {path} does not support O_DIRECT (tmpfs does not); put the file on a disk-backed filesystem"
    )]
    NoDirectIo { path: String },
    #[error(
        "{path} is {what}; refusing to write to it, even with --allow-destroy (unmount it or stop what holds it, or run a read-only workload)"
    )]
    InUse { path: String, what: String },
    #[error(
        "{path} is {what} and this workload writes to it, destroying its data; add --allow-destroy if that is intended"
    )]
    NeedsAllowDestroy { path: String, what: &'static str },
    #[error(
        "{path} holds {what}; if destroying it is intended, add --confirm-serial {serial} (the device's serial number)"
    )]
    Signature { path: String, what: &'static str, serial: String },
    #[error(
        "{path} holds {what} and has no serial number to confirm with; if it is no longer needed, wipe it first (wipefs -a {path})"
    )]
    SignatureNoSerial { path: String, what: &'static str },
    #[error("cannot create {path}: {source}")]
    Create { path: String, source: io::Error },
}

/// What kind of thing the target is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    File,
    /// A regular file that does not exist yet and will be created at `size_bytes`.
    NewFile,
    BlockDevice,
    /// NVMe namespaces driven by SPDK; `path` holds their transport IDs.
    SpdkNamespace,
    /// An NVMe namespace's generic character device (`/dev/ngXnY`), for passthrough commands.
    NvmeGeneric,
}

/// An inspected target.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Target {
    pub path: PathBuf,
    pub kind: TargetKind,
    pub size_bytes: u64,
    /// The device's logical block size: every O_DIRECT offset and length is a multiple of it.
    pub logical_block_bytes: u64,
    /// `MAJ:MIN` of the block device (or of the device holding the file).
    pub device: Option<String>,
    /// The block device of the same NVMe namespace: `/dev/nvmeXnY` for `/dev/ngXnY` and back.
    pub nvme_sibling: Option<PathBuf>,
    /// The drive's model and serial number as sysfs reports them (devices only); reports can leave
    /// the serial out (`report --hide-serial`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    /// Operations the target is known not to take, learnt when it was attached (an SPDK
    /// namespace's controller whose ONCS lacks Dataset Management or Write Zeroes).
    #[serde(skip)]
    pub unsupported_ops: Vec<crate::io::Direction>,
}

impl Target {
    /// Inspects `path`. A missing path is accepted only with `create_size` (then a file of that size
    /// is to be created).
    pub fn inspect(path: &Path, create_size: Option<u64>) -> Result<Target, TargetError> {
        let p = path.display().to_string();
        let meta = match fs::metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let Some(size) = create_size else { return Err(TargetError::Missing { path: p }) };
                let parent = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
                let pmeta = fs::metadata(parent).map_err(|source| match source.kind() {
                    io::ErrorKind::NotFound => {
                        TargetError::NoParent { path: p.clone(), dir: parent.display().to_string() }
                    }
                    _ => TargetError::Inspect { path: parent.display().to_string(), source },
                })?;
                return Ok(Target {
                    path: path.to_path_buf(),
                    kind: TargetKind::NewFile,
                    size_bytes: size,
                    logical_block_bytes: logical_block_of_dev(pmeta.dev()).unwrap_or(DEFAULT_LOGICAL_BLOCK),
                    device: Some(dev_name(pmeta.dev())),
                    nvme_sibling: None,
                    model: None,
                    serial: None,
                    unsupported_ops: Vec::new(),
                });
            }
            Err(source) => return Err(TargetError::Inspect { path: p, source }),
        };
        let ft = meta.file_type();
        if ft.is_file() {
            Ok(Target {
                path: path.to_path_buf(),
                kind: TargetKind::File,
                size_bytes: meta.len(),
                logical_block_bytes: logical_block_of_dev(meta.dev()).unwrap_or(DEFAULT_LOGICAL_BLOCK),
                device: Some(dev_name(meta.dev())),
                nvme_sibling: None,
                model: None,
                serial: None,
                unsupported_ops: Vec::new(),
            })
        } else if ft.is_block_device() {
            let rdev = meta.rdev();
            let sys = sysfs_dir(rdev);
            let sectors: u64 = read_number(&sys.join("size")).ok_or_else(|| TargetError::Inspect {
                path: p.clone(),
                source: io::Error::other(format!("no size in {}", sys.display())),
            })?;
            Ok(Target {
                path: path.to_path_buf(),
                kind: TargetKind::BlockDevice,
                size_bytes: sectors * 512,
                logical_block_bytes: logical_block_of_dev(rdev).unwrap_or(DEFAULT_LOGICAL_BLOCK),
                device: Some(dev_name(rdev)),
                nvme_sibling: nvme_sibling(path),
                model: model_of(rdev),
                serial: serial_of(path).filter(|s| !s.starts_with("loop:")),
                unsupported_ops: Vec::new(),
            })
        } else if ft.is_char_device() && is_nvme_generic(meta.rdev()) {
            // Size and block size come from the namespace itself (Identify Namespace, in config); the
            // block device's sysfs numbers stand in until then.
            let sibling = nvme_sibling(path);
            let block = sibling.as_ref().and_then(|b| fs::metadata(b).ok()).map(|m| m.rdev());
            let sectors = block.and_then(|d| read_number(&sysfs_dir(d).join("size"))).unwrap_or(0);
            Ok(Target {
                path: path.to_path_buf(),
                kind: TargetKind::NvmeGeneric,
                size_bytes: sectors * 512,
                logical_block_bytes: block.and_then(logical_block_of_dev).unwrap_or(DEFAULT_LOGICAL_BLOCK),
                device: Some(dev_name(meta.rdev())),
                nvme_sibling: sibling,
                model: None,
                serial: None,
                unsupported_ops: Vec::new(),
            })
        } else {
            let kind = if ft.is_dir() {
                "directory"
            } else if ft.is_char_device() {
                "character device"
            } else if ft.is_fifo() {
                "FIFO"
            } else if ft.is_socket() {
                "socket"
            } else {
                "special file"
            };
            Err(TargetError::Unsupported { path: p, kind })
        }
    }

    /// Refuses writes that would destroy data the user did not offer: any block device without
    /// `allow_destroy`; a device that is mounted, holds a mounted partition, is active swap, or is
    /// held by another device (LVM, RAID, dm-crypt), or a partition of a disk that is, always (see
    /// [`Target::in_use`]); and a device whose first blocks carry a
    /// filesystem, swap, LVM, RAID or partition-table signature unless `confirm_serial` is its serial
    /// number.
    pub fn check_writable(&self, allow_destroy: bool, confirm_serial: Option<&str>) -> Result<(), TargetError> {
        let path = self.path.display().to_string();
        match self.kind {
            TargetKind::File | TargetKind::NewFile => return Ok(()),
            // The kernel has no hold on a device SPDK drives (it is unbound from the nvme driver), so
            // the flag is the whole guard.
            TargetKind::SpdkNamespace if !allow_destroy => {
                return Err(TargetError::NeedsAllowDestroy { path, what: "an NVMe namespace" });
            }
            TargetKind::SpdkNamespace => return Ok(()),
            TargetKind::BlockDevice => {
                if let Some(what) = self.in_use()? {
                    return Err(TargetError::InUse { path, what });
                }
            }
            // Passthrough writes land on the namespace behind the block device: what holds that
            // holds this too.
            TargetKind::NvmeGeneric => {
                if let Some(block) = &self.nvme_sibling {
                    let t = Target {
                        path: block.clone(),
                        kind: TargetKind::BlockDevice,
                        nvme_sibling: None,
                        ..self.clone()
                    };
                    if let Some(what) = t.in_use()? {
                        return Err(TargetError::InUse {
                            path,
                            what: format!("the namespace of {}, which is {what}", block.display()),
                        });
                    }
                }
            }
        }
        if !allow_destroy {
            return Err(TargetError::NeedsAllowDestroy { path, what: "a block device" });
        }
        let device = match self.kind {
            TargetKind::NvmeGeneric => self.nvme_sibling.clone().unwrap_or_else(|| self.path.clone()),
            _ => self.path.clone(),
        };
        if let Some(what) = signature(&device) {
            let serial = serial_of(&device);
            match (serial, confirm_serial) {
                (Some(s), Some(c)) if s == c => {}
                (Some(serial), _) => return Err(TargetError::Signature { path, what, serial }),
                (None, _) => return Err(TargetError::SignatureNoSerial { path, what }),
            }
        }
        Ok(())
    }

    /// Why the block device must not be written, if it must not: it, a partition of it (a disk's
    /// blocks include its partitions'), or the disk it is a partition of (what holds the whole
    /// disk holds every block of it) is mounted, active swap or held by another device; or a
    /// program holds it exclusively. A partition's sibling partitions are not asked: their blocks
    /// are not this partition's, so a mounted or held sibling leaves it free to write.
    pub fn in_use(&self) -> Result<Option<String>, TargetError> {
        let meta = fs::metadata(&self.path)
            .map_err(|source| TargetError::Inspect { path: self.path.display().to_string(), source })?;
        let rdev = meta.rdev();
        let family = family_of(rdev, &self.path.display().to_string());
        let mountinfo = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        for line in mountinfo.lines() {
            let f: Vec<&str> = line.split(' ').collect();
            if f.len() > 4 {
                if let Some(m) = family.iter().find(|m| m.dev == f[2]) {
                    let (name, at) = (&m.name, f[4]);
                    return Ok(Some(match m.kin {
                        Kin::Itself => format!("mounted on {at}"),
                        Kin::Partition => format!("a disk whose partition {name} is mounted on {at}"),
                        Kin::Disk => format!("a partition of {name}, which is mounted on {at}"),
                    }));
                }
            }
        }
        let swaps = fs::read_to_string("/proc/swaps").unwrap_or_default();
        for line in swaps.lines().skip(1) {
            if let Some(dev) = line.split_whitespace().next() {
                if let Ok(m) = fs::metadata(dev) {
                    if m.file_type().is_block_device() && family.iter().any(|f| f.dev == dev_name(m.rdev())) {
                        return Ok(Some(format!("in use as swap ({dev})")));
                    }
                }
            }
        }
        for Relative { dev: d, name, .. } in &family {
            let holders = Path::new("/sys/dev/block").join(d).join("holders");
            let held: Vec<String> = fs::read_dir(&holders)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            if !held.is_empty() {
                return Ok(Some(format!("held by {} (through {name}: LVM, RAID or dm)", held.join(", "))));
            }
        }
        // What the lists above miss: a program holding the device exclusively (mkfs, a filesystem
        // or pool driver, another tool's O_EXCL). Opening it O_EXCL fails with EBUSY while one
        // does; the probe is closed at once, so workers still open it as they always do.
        if meta.file_type().is_block_device() {
            let probe = fs::OpenOptions::new().read(true).custom_flags(libc::O_EXCL).open(&self.path);
            if probe.as_ref().err().and_then(io::Error::raw_os_error) == Some(libc::EBUSY) {
                return Ok(Some(
                    "opened exclusively by another program (a filesystem, RAID member or a tool such as mkfs)".into(),
                ));
            }
        }
        Ok(None)
    }

    /// Checks that the target accepts O_DIRECT by opening it so (for a new file, its directory's
    /// filesystem, through a probe file that is removed at once).
    pub fn check_direct_io(&self) -> Result<(), TargetError> {
        if self.kind == TargetKind::NvmeGeneric {
            // Passthrough commands move data straight between the device and the buffer.
            return Ok(());
        }
        let path = self.path.display().to_string();
        let probe = match self.kind {
            TargetKind::SpdkNamespace => return Ok(()),
            TargetKind::NewFile => {
                let probe = self.path.with_extension("nvmebench-probe");
                let r = fs::OpenOptions::new().write(true).create_new(true).custom_flags(libc::O_DIRECT).open(&probe);
                let _ = fs::remove_file(&probe);
                r.map(drop)
            }
            _ => fs::OpenOptions::new().read(true).custom_flags(libc::O_DIRECT).open(&self.path).map(drop),
        };
        match probe {
            Ok(()) => Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Err(TargetError::NoDirectIo { path }),
            Err(e) if self.kind == TargetKind::NewFile => Err(TargetError::Create { path, source: e }),
            Err(source) => Err(TargetError::Inspect { path, source }),
        }
    }

    /// Whether `other` reaches the same data: the same device (by device number, also across an
    /// NVMe namespace's block and generic devices), the same file (by inode), or for files still to
    /// be created the same canonical path. SPDK namespaces compare by transport ID and nsid.
    pub fn same_as(&self, other: &Target) -> bool {
        if self.path == other.path {
            return true;
        }
        let identity = |t: &Target| -> Option<(bool, u64, u64)> {
            let m = fs::metadata(&t.path).ok()?;
            let ft = m.file_type();
            if ft.is_block_device() || ft.is_char_device() {
                Some((true, m.rdev(), 0))
            } else {
                Some((false, m.dev(), m.ino()))
            }
        };
        match (self.kind, other.kind) {
            (TargetKind::NewFile, _) | (_, TargetKind::NewFile) => {
                let canon = |p: &Path| -> Option<PathBuf> {
                    let parent = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
                    Some(fs::canonicalize(parent).ok()?.join(p.file_name()?))
                };
                canon(&self.path).is_some_and(|a| Some(a) == canon(&other.path))
            }
            _ => {
                let sibling = |a: &Target, b: &Target| {
                    a.nvme_sibling.as_ref().is_some_and(|s| {
                        let t = Target { path: s.clone(), kind: TargetKind::BlockDevice, ..a.clone() };
                        identity(&t).is_some() && identity(&t) == identity(b)
                    })
                };
                (identity(self).is_some() && identity(self) == identity(other)) || sibling(self, other)
            }
        }
    }

    /// Whether this block device is a partition of `disk`: the two are different devices, yet
    /// writing one changes what the other holds.
    pub fn is_partition_of(&self, disk: &Target) -> bool {
        let rdev =
            |t: &Target| fs::metadata(&t.path).ok().filter(|m| m.file_type().is_block_device()).map(|m| m.rdev());
        let (Some(part), Some(disk)) = (rdev(self), rdev(disk)) else { return false };
        part != disk
            && fs::canonicalize(sysfs_dir(part)).is_ok_and(|p| p.join("partition").exists())
            && whole_disk_dir(part).is_some_and(|w| fs::canonicalize(sysfs_dir(disk)).is_ok_and(|d| d == w))
    }

    pub fn describe(&self) -> String {
        let kind = match self.kind {
            TargetKind::File => "file",
            TargetKind::NewFile => "new file",
            TargetKind::BlockDevice => "block device",
            TargetKind::SpdkNamespace => "NVMe namespace",
            TargetKind::NvmeGeneric => "NVMe generic device",
        };
        format!(
            "{} ({kind}, {}, {}-byte blocks)",
            self.path.display(),
            format_bytes_human(self.size_bytes as f64),
            self.logical_block_bytes
        )
    }
}

/// Whether the device under a target can complete polled I/O (IOPOLL / fio's hipri).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PollSupport {
    Yes,
    /// `queue` is the sysfs `io_poll` file that said 0; `nvme` whether the disk is an NVMe namespace.
    No {
        disk: String,
        queue: PathBuf,
        nvme: bool,
    },
    /// No sysfs entry to ask (the answer comes from the kernel at run time).
    Unknown,
}

impl Target {
    /// Asks sysfs whether the disk under the target (the file's filesystem's disk, the block device,
    /// or the namespace behind a generic device) has poll queues.
    pub fn poll_support(&self) -> PollSupport {
        let disk = match self.kind {
            TargetKind::NvmeGeneric => {
                self.nvme_sibling.as_ref().and_then(|b| fs::metadata(b).ok()).and_then(|m| whole_disk_dir(m.rdev()))
            }
            _ => self.device.as_ref().and_then(|d| fs::canonicalize(Path::new("/sys/dev/block").join(d)).ok()).map(
                |dir| {
                    if dir.join("partition").exists() {
                        dir.parent().map(Path::to_path_buf).unwrap_or(dir)
                    } else {
                        dir
                    }
                },
            ),
        };
        let Some(disk) = disk else { return PollSupport::Unknown };
        match read_number(&disk.join("queue/io_poll")) {
            Some(1) => PollSupport::Yes,
            Some(_) => {
                let name = disk.file_name().unwrap_or_default().to_string_lossy().into_owned();
                let queue = Path::new("/sys/block").join(&name).join("queue/io_poll");
                PollSupport::No { nvme: name.starts_with("nvme"), disk: name, queue }
            }
            None => PollSupport::Unknown,
        }
    }
}

impl Target {
    /// Whether the target takes trims (`Direction::Trim`) or write-zeroes (`Direction::WriteZeroes`):
    /// for a block device (or the namespace behind a generic device) the kernel's
    /// `queue/discard_max_bytes` or `queue/write_zeroes_max_bytes`, 0 when the device cannot (for
    /// NVMe: the controller's ONCS lacks Dataset Management or Write Zeroes). `None` when there is
    /// nothing to ask: files (the filesystem answers each hole punched), SPDK namespaces (the engine
    /// reads ONCS when it attaches, into `unsupported_ops`), other operations.
    pub fn supports(&self, dir: crate::io::Direction) -> Option<bool> {
        if self.unsupported_ops.contains(&dir) {
            return Some(false);
        }
        let file = match dir {
            crate::io::Direction::Trim => "queue/discard_max_bytes",
            crate::io::Direction::WriteZeroes => "queue/write_zeroes_max_bytes",
            _ => return None,
        };
        let rdev = match self.kind {
            TargetKind::BlockDevice => fs::metadata(&self.path).ok()?.rdev(),
            TargetKind::NvmeGeneric => fs::metadata(self.nvme_sibling.as_ref()?).ok()?.rdev(),
            _ => return None,
        };
        read_number(&whole_disk_dir(rdev)?.join(file)).map(|n| n > 0)
    }

    /// Whether the filesystem under a file target takes `dir` (a trim punches a hole, a
    /// write-zeroes zeroes a range), asked before anything is written: a trim is probed on the
    /// file itself past its end, where a punched hole changes nothing; a write-zeroes, which
    /// could allocate blocks there, and anything on a file not yet created, on an empty scratch
    /// file beside it that is removed at once. `None` when it cannot be asked (the run will tell).
    pub fn file_takes(&self, dir: crate::io::Direction) -> Option<bool> {
        use crate::engine::rangeops::file_takes;
        const PROBE_BYTES: u64 = 4096;
        if !matches!(dir, crate::io::Direction::Trim | crate::io::Direction::WriteZeroes) {
            return None;
        }
        match self.kind {
            TargetKind::File if dir == crate::io::Direction::Trim => {
                let f = fs::OpenOptions::new().write(true).open(&self.path).ok()?;
                let end = f.metadata().ok()?.len().next_multiple_of(PROBE_BYTES);
                file_takes(&f, dir, end, PROBE_BYTES).ok()
            }
            TargetKind::File | TargetKind::NewFile => {
                let probe = self.path.with_extension("nvmebench-probe");
                let f = fs::OpenOptions::new().write(true).create_new(true).open(&probe).ok()?;
                let r = file_takes(&f, dir, 0, PROBE_BYTES);
                drop(f);
                let _ = fs::remove_file(&probe);
                r.ok()
            }
            _ => None,
        }
    }

    /// The type of the filesystem a file target lives on (`ext4`, `vfat`, `tmpfs`), from the
    /// mount table; `None` for devices or when no mount matches.
    pub fn filesystem(&self) -> Option<String> {
        if !matches!(self.kind, TargetKind::File | TargetKind::NewFile) {
            return None;
        }
        let dev = self.device.as_deref()?;
        let mountinfo = fs::read_to_string("/proc/self/mountinfo").ok()?;
        mountinfo_fstype(&mountinfo, dev).map(str::to_string)
    }
}

/// The filesystem type of the mount of device `dev` (`MAJ:MIN`) in a `/proc/self/mountinfo` text:
/// the field after the ` - ` separator.
fn mountinfo_fstype<'a>(mountinfo: &'a str, dev: &str) -> Option<&'a str> {
    mountinfo.lines().find_map(|line| {
        let (head, tail) = line.split_once(" - ")?;
        (head.split(' ').nth(2) == Some(dev)).then(|| tail.split(' ').next()).flatten()
    })
}

/// Whether a character device is an NVMe namespace's generic device (class `nvme-generic`).
fn is_nvme_generic(rdev: u64) -> bool {
    let class = Path::new("/sys/dev/char").join(dev_name(rdev)).join("subsystem");
    fs::read_link(class).is_ok_and(|l| l.file_name().is_some_and(|n| n == "nvme-generic"))
}

/// `/dev/ngXnY` for `/dev/nvmeXnY` and back, when that device exists.
pub fn nvme_sibling(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    let other = if let Some(rest) = name.strip_prefix("nvme") {
        format!("ng{rest}")
    } else if let Some(rest) = name.strip_prefix("ng") {
        format!("nvme{rest}")
    } else {
        return None;
    };
    // Partitions (nvme0n1p1) have no generic device; ng names never have a 'p'.
    if other.contains('p') && other.starts_with("ng") {
        return None;
    }
    let p = path.with_file_name(other);
    p.exists().then_some(p)
}

/// One spelling for every path to the same place, to compare paths however they were typed (`a`,
/// `./a`, `d/../a`, a symlink such as `/dev/disk/by-id/...`): the real path where it exists. For a
/// path that is not there (yet), the real path of its nearest existing ancestor with the rest
/// normalised lexically (`.` dropped, `..` taking off the component before it), so a file created
/// later (`--size`) keeps the spelling it had before it existed.
pub fn canonical_path(path: &Path) -> PathBuf {
    if let Ok(real) = fs::canonicalize(path) {
        return real;
    }
    let absolute = match std::env::current_dir() {
        Ok(cwd) if path.is_relative() => cwd.join(path),
        _ => path.to_path_buf(),
    };
    let (mut out, rest) = absolute
        .ancestors()
        .skip(1)
        .find_map(|a| {
            let real = fs::canonicalize(if a.as_os_str().is_empty() { Path::new(".") } else { a }).ok()?;
            Some((real, absolute.strip_prefix(a).ok()?.to_path_buf()))
        })
        .unwrap_or_else(|| (PathBuf::new(), absolute.clone()));
    for c in rest.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Creates the file at `target.size_bytes` and fills it with pseudo-random data, so that reads hit
/// allocated blocks (a sparse file's holes read back without touching the device).
pub fn prepare_file(target: &Target) -> Result<(), TargetError> {
    let path = target.path.display().to_string();
    let err = |source| TargetError::Create { path: path.clone(), source };
    let mut f = fs::OpenOptions::new().write(true).create_new(true).open(&target.path).map_err(err)?;
    let mut chunk = vec![0u8; 1 << 20];
    let mut x = 0x243f_6a88_85a3_08d3u64;
    let mut left = target.size_bytes;
    while left > 0 {
        for w in chunk.chunks_exact_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            w.copy_from_slice(&x.to_le_bytes());
        }
        let n = left.min(chunk.len() as u64) as usize;
        f.write_all(&chunk[..n]).map_err(err)?;
        left -= n as u64;
    }
    f.sync_all().map_err(err)?;
    Ok(())
}

/// Removes a file on drop: the scratch file of the default run goes away however the run ends.
pub struct RemoveOnDrop(pub PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

/// What the first blocks of a device say it holds, if anything known: a filesystem, swap, an LVM
/// physical volume, a RAID member or a partition table.
pub fn signature(device: &Path) -> Option<&'static str> {
    use std::io::Read;
    let mut head = vec![0u8; 68 * 1024];
    let mut f = fs::File::open(device).ok()?;
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]) {
            Ok(0) | Err(_) => break,
            Ok(k) => n += k,
        }
    }
    let at = |off: usize, magic: &[u8]| head.get(off..off + magic.len()) == Some(magic) && off + magic.len() <= n;
    const SIGNATURES: &[(usize, &[u8], &str)] = &[
        (1080, &[0x53, 0xef], "an ext2/3/4 filesystem"),
        (0, b"XFSB", "an XFS filesystem"),
        (65600, b"_BHRfS_M", "a btrfs filesystem"),
        (4086, b"SWAPSPACE2", "a swap area"),
        (4086, b"SWAP-SPACE", "a swap area"),
        (512 + 24, b"LVM2 001", "an LVM physical volume"),
        (4096, &[0xfc, 0x4e, 0x2b, 0xa9], "a Linux RAID (md) member"),
        (0, &[0xfc, 0x4e, 0x2b, 0xa9], "a Linux RAID (md) member"),
        (3, b"NTFS    ", "an NTFS filesystem"),
        (82, b"FAT32   ", "a FAT32 filesystem"),
        (54, b"FAT1", "a FAT filesystem"),
        (512, b"EFI PART", "a GPT partition table"),
    ];
    if let Some((_, _, what)) = SIGNATURES.iter().find(|(off, magic, _)| at(*off, magic)) {
        return Some(what);
    }
    // An MBR: the boot signature and at least one partition entry with a type.
    if at(510, &[0x55, 0xaa]) && (0..4).any(|i| head[446 + i * 16 + 4] != 0) {
        return Some("an MBR partition table");
    }
    None
}

/// The device's serial number as sysfs reports it (NVMe, SCSI, virtio), or for a loop device the
/// file behind it (`loop:/path`), which is what `--confirm-serial` must repeat.
pub fn serial_of(device: &Path) -> Option<String> {
    let meta = fs::metadata(device).ok()?;
    let disk = whole_disk_dir(meta.rdev())?;
    for f in ["device/serial", "serial", "device/wwid", "wwid"] {
        if let Ok(s) = fs::read_to_string(disk.join(f)) {
            let s = s.trim();
            if !s.is_empty() {
                return Some(s.to_string());
            }
        }
    }
    fs::read_to_string(disk.join("loop/backing_file")).ok().map(|b| format!("loop:{}", b.trim()))
}

/// The device's model as sysfs reports it (NVMe, SCSI, virtio have one).
fn model_of(dev: u64) -> Option<String> {
    let disk = whole_disk_dir(dev)?;
    ["device/model", "device/device/model"]
        .iter()
        .find_map(|f| fs::read_to_string(disk.join(f)).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()))
}

fn dev_name(dev: u64) -> String {
    format!("{}:{}", libc::major(dev), libc::minor(dev))
}

fn sysfs_dir(dev: u64) -> PathBuf {
    Path::new("/sys/dev/block").join(dev_name(dev))
}

/// How a device of [`family_of`] is related to the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kin {
    Itself,
    /// A partition of the target, which is a disk.
    Partition,
    /// The disk the target is a partition of.
    Disk,
}

/// One device whose use makes writing the target unsafe: `MAJ:MIN`, its `/dev` name, and how it
/// is related to the target.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Relative {
    dev: String,
    name: String,
    kin: Kin,
}

/// The block device `dev` (named `path`), its partitions if it is a disk, and its disk if it is a
/// partition; never a partition's siblings.
fn family_of(dev: u64, path: &str) -> Vec<Relative> {
    family_in(Path::new("/sys"), dev, path)
}

/// [`family_of`], as the sysfs mounted at `sys` describes the devices.
fn family_in(sys: &Path, dev: u64, path: &str) -> Vec<Relative> {
    let mut family = vec![Relative { dev: dev_name(dev), name: path.to_string(), kin: Kin::Itself }];
    let Ok(own_dir) = fs::canonicalize(sys.join("dev/block").join(dev_name(dev))) else { return family };
    let number = |p: &Path| fs::read_to_string(p.join("dev")).ok().map(|d| d.trim().to_string());
    let name = |p: &Path| format!("/dev/{}", p.file_name().unwrap_or_default().to_string_lossy());
    if own_dir.join("partition").exists() {
        if let Some(disk) = own_dir.parent() {
            if let Some(d) = number(disk) {
                family.push(Relative { dev: d, name: name(disk), kin: Kin::Disk });
            }
        }
        return family;
    }
    for entry in fs::read_dir(&own_dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.join("partition").exists() {
            if let Some(d) = number(&p) {
                family.push(Relative { dev: d, name: name(&p), kin: Kin::Partition });
            }
        }
    }
    family
}

/// The sysfs directory of the whole disk that `dev` is or belongs to.
fn whole_disk_dir(dev: u64) -> Option<PathBuf> {
    let dir = fs::canonicalize(sysfs_dir(dev)).ok()?;
    if dir.join("partition").exists() { dir.parent().map(Path::to_path_buf) } else { Some(dir) }
}

fn logical_block_of_dev(dev: u64) -> Option<u64> {
    let disk = whole_disk_dir(dev)?;
    read_number(&disk.join("queue/logical_block_size"))
}

fn read_number(path: &Path) -> Option<u64> {
    fs::read_to_string(path).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filesystem_type_comes_from_the_mount_of_the_device() {
        let mi = "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n\
                  97 22 7:3 / /mnt/usb rw,relatime shared:50 - vfat /dev/loop3 rw,fmask=0022\n\
                  98 22 0:45 / /dev/shm rw shared:2 - tmpfs tmpfs rw\n";
        assert_eq!(mountinfo_fstype(mi, "7:3"), Some("vfat"));
        assert_eq!(mountinfo_fstype(mi, "0:45"), Some("tmpfs"));
        assert_eq!(mountinfo_fstype(mi, "254:0"), Some("ext4"));
        assert_eq!(mountinfo_fstype(mi, "8:1"), None);
    }

    #[test]
    fn a_partitions_family_is_its_disk_and_not_its_siblings() {
        use std::os::unix::fs::symlink;
        // sysfs as the kernel lays out a disk with two partitions: /sys/dev/block/MAJ:MIN links to
        // each device's directory, and a partition's directory sits in its disk's.
        let sys = tempfile::tempdir().unwrap();
        let disk = sys.path().join("devices/virtual/block/loop0");
        for (dir, dev, partition) in [("", "7:0", false), ("loop0p1", "259:0", true), ("loop0p2", "259:1", true)] {
            let d = disk.join(dir);
            fs::create_dir_all(&d).unwrap();
            fs::write(d.join("dev"), format!("{dev}\n")).unwrap();
            if partition {
                fs::write(d.join("partition"), "1\n").unwrap();
            }
            fs::create_dir_all(sys.path().join("dev/block")).unwrap();
            symlink(&d, sys.path().join("dev/block").join(dev)).unwrap();
        }
        let of = |major, minor, path: &str| {
            family_in(sys.path(), libc::makedev(major, minor), path)
                .into_iter()
                .map(|r| (r.dev, r.name, r.kin))
                .collect::<Vec<_>>()
        };
        let own = |dev: &str, name: &str, kin| (dev.to_string(), name.to_string(), kin);
        assert_eq!(
            of(259, 1, "/dev/loop0p2"),
            [own("259:1", "/dev/loop0p2", Kin::Itself), own("7:0", "/dev/loop0", Kin::Disk)],
            "a mounted, swapped or held sibling (loop0p1) does not make loop0p2 unsafe"
        );
        let mut disk_family = of(7, 0, "/dev/loop0");
        disk_family.sort();
        assert_eq!(
            disk_family,
            [
                own("259:0", "/dev/loop0p1", Kin::Partition),
                own("259:1", "/dev/loop0p2", Kin::Partition),
                own("7:0", "/dev/loop0", Kin::Itself)
            ],
            "writing the disk writes every partition"
        );
        assert_eq!(of(8, 0, "/dev/sda"), [own("8:0", "/dev/sda", Kin::Itself)], "not in sysfs: only itself");
    }

    #[test]
    fn missing_file_needs_a_size() {
        let e = Target::inspect(Path::new("/nonexistent/nvmebench/x"), None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/nonexistent/nvmebench/x does not exist; create it, or add --size to have nvmebench create a file of that size"
        );
    }

    #[test]
    fn a_new_file_needs_its_directory() {
        let e = Target::inspect(Path::new("/nonexistent/nvmebench/x"), Some(4096)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot create /nonexistent/nvmebench/x: its directory /nonexistent/nvmebench does not exist; create the directory or pick a path in one that does"
        );
    }

    #[test]
    fn directories_are_refused() {
        let e = Target::inspect(Path::new("/"), None).unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
        let e = Target::inspect(Path::new("/dev/null"), None).unwrap_err();
        assert!(e.to_string().contains("character device"), "{e}");
    }

    #[test]
    fn the_same_file_by_another_path_is_the_same_target() {
        let dir = tempfile::tempdir_in(".").unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        fs::write(&a, [0u8; 4096]).unwrap();
        fs::write(&b, [0u8; 4096]).unwrap();
        let t = |p: &Path| Target::inspect(p, Some(4096)).unwrap();
        assert!(t(&a).same_as(&t(&dir.path().join(".").join("a"))));
        fs::hard_link(&a, dir.path().join("h")).unwrap();
        assert!(t(&a).same_as(&t(&dir.path().join("h"))), "a hard link is the same inode");
        assert!(!t(&a).same_as(&t(&b)));
        let new = dir.path().join("n");
        assert!(t(&new).same_as(&t(&dir.path().join(".").join("n"))));
        assert!(!t(&new).same_as(&t(&dir.path().join("m"))));
    }

    #[test]
    fn files_are_sized_and_prepared() {
        let dir = tempfile::tempdir_in(".").unwrap();
        let path = dir.path().join("f");
        let t = Target::inspect(&path, Some(3 << 20)).unwrap();
        assert_eq!(t.kind, TargetKind::NewFile);
        t.check_direct_io().unwrap();
        prepare_file(&t).unwrap();
        let t = Target::inspect(&path, None).unwrap();
        assert_eq!((t.kind, t.size_bytes), (TargetKind::File, 3 << 20));
        assert!(t.logical_block_bytes.is_power_of_two());
        t.check_writable(false, None).unwrap();
        let data = fs::read(&path).unwrap();
        assert!(data.iter().filter(|&&b| b == 0).count() < data.len() / 100);
    }

    #[test]
    fn canonical_paths_agree_however_spelt_and_before_a_file_exists() {
        let dir = tempfile::tempdir().unwrap();
        let d = fs::canonicalize(dir.path()).unwrap();
        fs::create_dir(d.join("sub")).unwrap();
        fs::write(d.join("a"), b"x").unwrap();
        std::os::unix::fs::symlink(d.join("a"), d.join("link")).unwrap();
        std::os::unix::fs::symlink(d.join("sub"), d.join("sublink")).unwrap();
        for spelt in ["a", "./a", "sub/../a", "link", "sublink/../a", "sub/./.././a"] {
            assert_eq!(canonical_path(&dir.path().join(spelt)), d.join("a"), "{spelt}");
        }
        // Not there yet: the same spelling as once created, through a symlinked directory too.
        let spellings = ["n", "./n", "sub/../n", "gone/../n", "sublink/../n"];
        let before: Vec<PathBuf> = spellings.iter().map(|s| canonical_path(&dir.path().join(s))).collect();
        assert!(before.iter().all(|p| *p == d.join("n")), "{before:?}");
        fs::write(d.join("n"), b"x").unwrap();
        for (s, b) in spellings.iter().zip(&before) {
            assert_eq!(canonical_path(&dir.path().join(s)), *b, "{s} once it exists");
        }
        assert_eq!(canonical_path(&dir.path().join("sublink/new")), d.join("sub/new"));
        assert_eq!(canonical_path(&dir.path().join("no/such/dir/../f")), d.join("no/such/f"));
        let cwd = fs::canonicalize(".").unwrap();
        assert_eq!(canonical_path(Path::new("no-such-file")), cwd.join("no-such-file"), "relative to the cwd");
    }
}

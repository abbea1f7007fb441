//! Handing one PCIe NVMe function between the kernel's nvme driver and vfio-pci for `compare
//! --rebind`, through the project's own binding script (`scripts/nvme-bind.sh`, carried inside the
//! binary so it works wherever the binary is), and always handing it back.
//!
//! Three layers make "always" true: [`Rebind`] restores on drop (normal end, errors, a first
//! Ctrl-C, which ends the run and unwinds normally); a guardian process, started before the first
//! bind in a process group of its own, restores when this process dies any other way (a second
//! Ctrl-C, SIGKILL, a crash), because its stdin pipe then closes without the "done" line; and the
//! script remembers the original driver in `/run/nvmebench/bind`, so `scripts/nvme-bind.sh
//! restore BDF` works by hand after a power cut of the shell.
//!
//! It does not decide what runs on which driver (that is `compare`), and it never touches a device
//! the script refuses (mounted, swap, holders, a shared IOMMU group).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The binding script, as shipped in `scripts/`.
const BIND_SCRIPT: &str = include_str!("../scripts/nvme-bind.sh");

/// How long the kernel may take to bring the namespace's block device back after a restore
/// (emulated controllers under TCG take seconds).
const REAPPEAR_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
pub enum RebindError {
    #[error(
        "--rebind hands a PCIe NVMe namespace between the kernel and SPDK; {path} is not one (give --filename /dev/nvmeXnY)"
    )]
    NotPcieNamespace { path: String },
    #[error("--rebind: {0}")]
    Script(String),
    #[error("--rebind: cannot run bash for scripts/nvme-bind.sh: {0}")]
    Spawn(std::io::Error),
    #[error(
        "--rebind: {bdf} is back on {driver}, but namespace {nsid} did not reappear as a block device within {secs} s; check dmesg"
    )]
    NoBlockDevice { bdf: String, driver: String, nsid: u32, secs: u64 },
}

/// A namespace of a local PCIe NVMe controller, as the kernel shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PcieNamespace {
    /// The PCI function, `0000:01:00.0`.
    pub bdf: String,
    /// The namespace id (the `1` of `nvme0n1`).
    pub nsid: u32,
}

impl PcieNamespace {
    /// SPDK's transport ID for this namespace.
    pub fn trid(&self) -> String {
        format!("trtype:PCIe traddr:{} ns:{}", self.bdf, self.nsid)
    }

    /// Finds the controller behind `/dev/nvmeXnY` (or `/dev/ngXnY`), looking under `sysfs`
    /// (`/sys` outside tests).
    pub fn of_device(path: &Path, sysfs: &Path) -> Result<PcieNamespace, RebindError> {
        let not = || RebindError::NotPcieNamespace { path: path.display().to_string() };
        let name = path.file_name().and_then(|n| n.to_str()).ok_or_else(not)?;
        let rest = name.strip_prefix("nvme").or_else(|| name.strip_prefix("ng")).ok_or_else(not)?;
        // nvme0n1 -> controller nvme0, namespace 1; partitions (nvme0n1p1) are not namespaces.
        let (ctrl, ns) = rest.split_once('n').ok_or_else(not)?;
        if ctrl.is_empty() || !ctrl.bytes().all(|b| b.is_ascii_digit()) {
            return Err(not());
        }
        let nsid: u32 = ns.parse().map_err(|_| not())?;
        let class = sysfs.join("class/nvme").join(format!("nvme{ctrl}"));
        let transport = std::fs::read_to_string(class.join("transport")).map_err(|_| not())?;
        if transport.trim() != "pcie" {
            return Err(not());
        }
        let device = std::fs::canonicalize(class.join("device")).map_err(|_| not())?;
        let bdf = device.file_name().and_then(|n| n.to_str()).ok_or_else(not)?.to_string();
        Ok(PcieNamespace { bdf, nsid })
    }

    /// The block device of this namespace while the kernel drives it, if it is there now.
    fn block_device(&self, sysfs: &Path) -> Option<PathBuf> {
        let ctrls = std::fs::read_dir(sysfs.join("bus/pci/devices").join(&self.bdf).join("nvme")).ok()?;
        for c in ctrls.flatten() {
            let name = c.file_name().to_string_lossy().into_owned();
            let dev = PathBuf::from(format!("/dev/{name}n{}", self.nsid));
            if c.path().join(format!("{name}n{}", self.nsid)).exists() && dev.exists() {
                return Some(dev);
            }
        }
        None
    }
}

/// Runs the binding script with `args`; its own one-line refusal becomes the error.
fn script(args: &[&str]) -> Result<String, RebindError> {
    let out = Command::new("bash")
        .arg("-c")
        .arg(BIND_SCRIPT)
        .arg("nvme-bind.sh")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(RebindError::Spawn)?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        let line = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("failed without a message");
        return Err(RebindError::Script(line.trim().to_string()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// One function on loan to vfio-pci; see the module docs for how it always comes back.
#[derive(Debug)]
pub struct Rebind {
    ns: PcieNamespace,
    /// The kernel driver it had (what `restore` gives it back to).
    original: String,
    bound: bool,
    /// Whether it was ever handed to vfio-pci.
    lent: bool,
    guardian: Option<Child>,
    sysfs: PathBuf,
}

impl Rebind {
    /// Checks everything a bind would (root, the function, its users, the IOMMU group) without
    /// changing anything, so that a refusal comes before the first engine runs.
    pub fn check(ns: PcieNamespace) -> Result<Rebind, RebindError> {
        // The dry run itself needs no root; the binds later would fail half-way through the list.
        if !nix::unistd::geteuid().is_root() {
            return Err(RebindError::Script(format!(
                "moving {} between drivers writes to sysfs and needs root; run nvmebench with sudo",
                ns.bdf
            )));
        }
        script(&["bind", &ns.bdf, "--dry-run"])?;
        let sysfs = PathBuf::from("/sys");
        let original = std::fs::read_link(sysfs.join("bus/pci/devices").join(&ns.bdf).join("driver"))
            .ok()
            .and_then(|l| l.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "nvme".into());
        Ok(Rebind { ns, original, bound: false, lent: false, guardian: None, sysfs })
    }

    pub fn namespace(&self) -> &PcieNamespace {
        &self.ns
    }

    /// Whether the function was ever handed to vfio-pci.
    pub fn lent(&self) -> bool {
        self.lent
    }

    /// Gives the function to vfio-pci (a no-op when it already is).
    pub fn to_userspace(&mut self) -> Result<(), RebindError> {
        if self.bound {
            return Ok(());
        }
        self.start_guardian()?;
        // Marked first: a bind that fails half-way still gets restored.
        self.bound = true;
        self.lent = true;
        script(&["bind", &self.ns.bdf])?;
        Ok(())
    }

    /// Gives the function back to its kernel driver and waits for the namespace's block device;
    /// returns its path (the kernel may number the controller differently than before) and whether
    /// the function moved just now.
    pub fn to_kernel(&mut self) -> Result<(PathBuf, bool), RebindError> {
        let moved = self.bound;
        if self.bound {
            script(&["restore", &self.ns.bdf])?;
            self.bound = false;
            self.stop_guardian();
        }
        let start = Instant::now();
        loop {
            if let Some(dev) = self.ns.block_device(&self.sysfs) {
                return Ok((dev, moved));
            }
            if start.elapsed() > REAPPEAR_TIMEOUT {
                return Err(RebindError::NoBlockDevice {
                    bdf: self.ns.bdf.clone(),
                    driver: self.original.clone(),
                    nsid: self.ns.nsid,
                    secs: REAPPEAR_TIMEOUT.as_secs(),
                });
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A shell that restores the function unless it reads "done" first: its stdin is a pipe whose
    /// only writer is this process, so any death of ours closes it.
    fn start_guardian(&mut self) -> Result<(), RebindError> {
        use std::os::unix::process::CommandExt;
        if self.guardian.is_some() {
            return Ok(());
        }
        let watch = r#"read -r line; [ "$line" = done ] && exit 0
echo "nvmebench: giving $2 back to its kernel driver (nvmebench ended without doing it)" >&2
bash -c "$1" nvme-bind.sh restore "$2" >&2"#;
        let child = Command::new("bash")
            .arg("-c")
            .arg(watch)
            .arg("nvmebench-rebind-guardian")
            .arg(BIND_SCRIPT)
            .arg(&self.ns.bdf)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            // Its own process group: a Ctrl-C at the terminal must not kill the guardian with us.
            .process_group(0)
            .spawn()
            .map_err(RebindError::Spawn)?;
        self.guardian = Some(child);
        Ok(())
    }

    fn stop_guardian(&mut self) {
        if let Some(mut g) = self.guardian.take() {
            if let Some(mut stdin) = g.stdin.take() {
                let _ = stdin.write_all(b"done\n");
            }
            let _ = g.wait();
        }
    }
}

impl Drop for Rebind {
    fn drop(&mut self) {
        if self.bound {
            match script(&["restore", &self.ns.bdf]) {
                Ok(_) => {
                    self.bound = false;
                    eprintln!("nvmebench: {} is back on {}", self.ns.bdf, self.original);
                }
                // The guardian tries once more when its pipe closes below.
                Err(e) => eprintln!("nvmebench: {e}; run scripts/nvme-bind.sh restore {}", self.ns.bdf),
            }
        }
        if self.bound {
            // Dropping the child closes its stdin without "done": it restores.
            if let Some(mut g) = self.guardian.take() {
                drop(g.stdin.take());
                let _ = g.wait();
            }
        } else {
            self.stop_guardian();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn fake_sysfs(transport: &str) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let pci = d.path().join("devices/pci0000:00/0000:00:10.0");
        fs::create_dir_all(&pci).unwrap();
        let class = d.path().join("class/nvme/nvme0");
        fs::create_dir_all(&class).unwrap();
        fs::write(class.join("transport"), format!("{transport}\n")).unwrap();
        std::os::unix::fs::symlink(&pci, class.join("device")).unwrap();
        d
    }

    #[test]
    fn finds_the_function_and_namespace_of_a_pcie_namespace() {
        let sys = fake_sysfs("pcie");
        let ns = PcieNamespace::of_device(Path::new("/dev/nvme0n2"), sys.path()).unwrap();
        assert_eq!(ns, PcieNamespace { bdf: "0000:00:10.0".into(), nsid: 2 });
        assert_eq!(ns.trid(), "trtype:PCIe traddr:0000:00:10.0 ns:2");
        assert_eq!(PcieNamespace::of_device(Path::new("/dev/ng0n2"), sys.path()).unwrap(), ns);
    }

    #[test]
    fn refuses_what_is_not_a_pcie_namespace() {
        let tcp = fake_sysfs("tcp");
        let pcie = fake_sysfs("pcie");
        for (path, sys) in [
            ("/dev/nvme0n1", tcp.path()),
            ("/dev/nvme0n1p1", pcie.path()),
            ("/dev/nvme0", pcie.path()),
            ("/dev/nvme1n1", pcie.path()),
            ("/dev/sda", pcie.path()),
            ("/var/tmp/file", pcie.path()),
        ] {
            let e = PcieNamespace::of_device(Path::new(path), sys).unwrap_err().to_string();
            assert!(e.contains(&format!("{path} is not one")), "{path}: {e}");
        }
    }

    #[test]
    fn the_embedded_script_runs_and_refuses_in_one_line() {
        assert!(script(&["--help"]).unwrap().contains("restore BDF"));
        let e = script(&["bind", "not-an-address", "--dry-run"]).unwrap_err().to_string();
        assert!(e.starts_with("--rebind: nvme-bind.sh: 'not-an-address' is not a PCI address"), "{e}");
    }
}

//! The one way a test skips, shared by the unit tests (`src/`, through `crate::skip`) and the
//! integration tests (`tests/integration`, through `crate::skip`).
//!
//! `skip(Need::X, why)` prints `skipped: why` and appends the test's name, what it lacked and why to
//! the file named by `NVMEBENCH_SKIP_LOG` (scripts/test.sh sets it and ends the run with a list of
//! what ran and what skipped, scripts/test-summary.sh). cargo test captures a passing test's output,
//! so without the log a skip reads as `ok`. Under `CI=true` a skip for something CI installs
//! ([`Need::ci_provides`]) is a failure: the helper panics, so the test fails where it stands and the
//! summary names it. A machine known to lack such a thing lets it skip by naming it in
//! `NVMEBENCH_CI_MAY_SKIP` (comma-separated [`Need::name`]s), and the summary still lists the skip.
//! The rest (a real NVMe drive, a second core, the host kernel's features) CI does not promise: those
//! skips are listed, never failed.

use std::io::Write as _;

/// What a test can lack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(dead_code)] // each test binary uses its own subset
pub enum Need {
    /// Root (loop devices, mounts, hugepages).
    Root,
    /// Loop devices: /dev/loop-control, losetup, mkfs.ext4, mount.
    LoopDevices,
    /// io_uring, not disabled by kernel.io_uring_disabled or seccomp.
    IoUring,
    /// SPDK built with vfio-user (scripts/spdk-vfu-target.sh).
    VfioUser,
    /// The QEMU testbed (scripts/testbed.sh --check).
    Testbed,
    /// Headless Chromium, for the HTML report's rendering tests.
    Chromium,
    /// nvme-cli (`nvme`), which the testbed's guest uses from the host.
    NvmeCli,
    /// fio and the scripts of Debian's fio package.
    Fio,
    /// fio-plot, from PyPI.
    FioPlot,
    /// A mkfs program CI installs (mkfs.vfat from dosfstools, mkfs.ext2 from e2fsprogs).
    Mkfs,
    /// Fonts for the PNG renderer.
    Fonts,
    /// Open MPI's `mpirun` (openmpi-bin), for fleet launches.
    Mpirun,
    /// `pdsh`, for fleet launches.
    Pdsh,
    /// The source tree as a git checkout of its own (CI runs on a clean clone).
    GitCheckout,
    /// A real NVMe namespace on the host (/dev/ng*): not on CI's machine.
    NvmeDevice,
    /// A second core, to keep free of workers.
    SpareCore,
    /// A filesystem under the scratch directory that punches holes.
    HolePunching,
    /// A feature of the host's kernel that varies between kernels (loop partition scanning,
    /// discards on loop devices, a filesystem driver, what tmpfs does).
    KernelFeature,
}

impl Need {
    /// The word `NVMEBENCH_CI_MAY_SKIP` and the skip log use.
    pub fn name(self) -> &'static str {
        match self {
            Need::Root => "root",
            Need::LoopDevices => "loop",
            Need::IoUring => "io_uring",
            Need::VfioUser => "vfio-user",
            Need::Testbed => "testbed",
            Need::Chromium => "chromium",
            Need::NvmeCli => "nvme-cli",
            Need::Fio => "fio",
            Need::FioPlot => "fio-plot",
            Need::Mkfs => "mkfs",
            Need::Fonts => "fonts",
            Need::Mpirun => "mpirun",
            Need::Pdsh => "pdsh",
            Need::GitCheckout => "git-checkout",
            Need::NvmeDevice => "nvme-device",
            Need::SpareCore => "spare-core",
            Need::HolePunching => "hole-punching",
            Need::KernelFeature => "kernel",
        }
    }

    /// Whether `.ci/run` provides it, so that a skip for it under `CI=true` fails.
    pub fn ci_provides(self) -> bool {
        !matches!(self, Need::NvmeDevice | Need::SpareCore | Need::HolePunching | Need::KernelFeature)
    }
}

/// What a skip is, given whether this is CI and what CI may skip: `"allowed"` or `"required"`.
pub fn verdict(need: Need, ci: bool, may_skip: &str) -> &'static str {
    let excused = may_skip.split(',').any(|n| n.trim() == need.name());
    if ci && need.ci_provides() && !excused { "required" } else { "allowed" }
}

/// Says the calling test skips for lack of `need`, and why; records it; under `CI=true` panics when
/// CI provides `need` (see the module's documentation).
#[track_caller]
pub fn skip(need: Need, why: &str) {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    let may_skip = std::env::var("NVMEBENCH_CI_MAY_SKIP").unwrap_or_default();
    let verdict = verdict(need, ci, &may_skip);
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("?");
    eprintln!("skipped: {why}");
    if let Some(path) = std::env::var_os("NVMEBENCH_SKIP_LOG") {
        let binary = match env!("CARGO_CRATE_NAME") {
            "nvmebench" => "lib",
            other => other,
        };
        let line = format!("{binary}\t{test}\t{}\t{verdict}\t{}\n", need.name(), why.replace(['\t', '\n'], " "));
        // One write of one short line to a file opened for appending: lines of tests running at once
        // do not interleave.
        let f = std::fs::OpenOptions::new().create(true).append(true).open(&path);
        if let Err(e) = f.and_then(|mut f| f.write_all(line.as_bytes())) {
            panic!("cannot record the skip in NVMEBENCH_SKIP_LOG={}: {e}", path.to_string_lossy());
        }
    }
    if verdict == "required" {
        panic!(
            "CI=true: this test must run here, but it would skip: {why}. .ci/run installs what it needs ({}); \
             on a machine known to lack it, NVMEBENCH_CI_MAY_SKIP={} lets it skip",
            need.name(),
            need.name()
        );
    }
}

#[cfg(test)]
mod skip_tests {
    use super::*;

    #[test]
    fn ci_fails_only_the_skips_it_provides_for() {
        assert_eq!(verdict(Need::Fio, false, ""), "allowed");
        assert_eq!(verdict(Need::Fio, true, ""), "required");
        assert_eq!(verdict(Need::Fio, true, "testbed, fio"), "allowed");
        assert_eq!(verdict(Need::Fio, true, "fio-plot"), "required");
        assert_eq!(verdict(Need::NvmeDevice, true, ""), "allowed");
    }
}

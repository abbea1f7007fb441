//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the binary with `args` and returns everything it did.
pub fn nvmebench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nvmebench")).args(args).output().expect("the test binary runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A scratch directory on a disk-backed filesystem (cargo's target dir), removed on drop.
pub fn scratch_dir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("cargo's target dir is writable")
}

/// Writes a file of `bytes` pseudo-random bytes.
pub fn make_file(dir: &Path, name: &str, bytes: usize) -> PathBuf {
    let path = dir.join(name);
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let data: Vec<u8> = (0..bytes)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    std::fs::write(&path, data).expect("scratch dir is writable");
    path
}

/// io_uring may be disabled on a machine (kernel.io_uring_disabled, seccomp); tests that need it
/// say so and skip.
pub fn uring_available() -> bool {
    let disabled =
        std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled").map(|s| s.trim() == "2").unwrap_or(false);
    if disabled {
        eprintln!("skipped: io_uring is disabled on this machine (kernel.io_uring_disabled=2)");
    }
    !disabled
}

/// The parsed JSON report on stdout.
pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", stdout(o)))
}

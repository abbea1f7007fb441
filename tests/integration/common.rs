//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// Runs the binary with `args` and returns everything it did.
pub fn nvmebench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nvmebench")).args(args).output().expect("the test binary runs")
}

/// Starts the binary with `args`, its output piped, for a test that signals or watches it mid-run.
pub fn spawn<S: AsRef<std::ffi::OsStr>>(args: impl IntoIterator<Item = S>) -> Child {
    Command::new(env!("CARGO_BIN_EXE_nvmebench"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the test binary runs")
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
        crate::skip::skip(
            crate::skip::Need::IoUring,
            "io_uring is disabled on this machine (kernel.io_uring_disabled=2)",
        );
    }
    !disabled
}

/// Whether the filesystem holding `dir` punches holes (a trim on a file), asked with fallocate on a
/// scratch file there; a filesystem that answers EOPNOTSUPP makes the test skip, any other failure
/// fails it.
pub fn punches_holes(dir: &Path) -> bool {
    use std::os::fd::AsRawFd;
    let f = tempfile::tempfile_in(dir).expect("the scratch dir is writable");
    f.set_len(1 << 16).expect("the scratch dir is writable");
    let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
    // SAFETY: fallocate takes plain integers; `f` stays open across the call.
    if unsafe { libc::fallocate(f.as_raw_fd(), mode, 0, 4096) } == 0 {
        return true;
    }
    let e = std::io::Error::last_os_error();
    assert_eq!(e.raw_os_error(), Some(libc::EOPNOTSUPP), "fallocate(PUNCH_HOLE) in {}: {e}", dir.display());
    crate::skip::skip(crate::skip::Need::HolePunching, &format!("{} does not punch holes", dir.display()));
    false
}

/// The parsed JSON on stdout; a result document (one with a `schema_version`, unlike `devices` or
/// `doctor` output) is checked against the schema.
pub fn json(o: &Output) -> serde_json::Value {
    let doc: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", stdout(o)));
    if doc.get("schema_version").is_some() {
        assert_conforms(&doc, "stdout");
    }
    doc
}

/// The committed result schema, compiled once.
fn result_schema() -> &'static jsonschema::Validator {
    static SCHEMA: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema/result.schema.json");
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let schema: serde_json::Value = serde_json::from_str(&text).expect("the schema is JSON");
        jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{path} is not a valid JSON Schema: {e}"))
    })
}

/// Why `doc` does not conform to `schema/result.schema.json`, one line per violation (empty when
/// it conforms).
pub fn schema_violations(doc: &serde_json::Value) -> Vec<String> {
    let short = |e: String| if e.chars().count() > 300 { e.chars().take(300).collect::<String>() + "..." } else { e };
    result_schema().iter_errors(doc).map(|e| format!("{}: {}", e.instance_path(), short(e.to_string()))).collect()
}

/// Panics unless `doc` (read from `what`) conforms to `schema/result.schema.json`.
pub fn assert_conforms(doc: &serde_json::Value, what: &str) {
    let v = schema_violations(doc);
    assert!(v.is_empty(), "{what} does not conform to schema/result.schema.json:\n{}", v.join("\n"));
}

/// Reads a result document the binary wrote, checking it against the schema.
pub fn read_result(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
    assert_conforms(&doc, &path.display().to_string());
    doc
}

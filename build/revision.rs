//! Which git revision a source tree is, for `nvmebench --version`. Used by `build.rs`, and by
//! `tests/integration/install.rs`, which checks it on a clone, an archive and a plain copy.
//!
//! The answer comes from the first of these that has one:
//! 1. `NVMEBENCH_REVISION` in the build's environment, for a packager who knows better;
//! 2. git, when `dir` is the top of its own work tree (not a copy unpacked inside some other
//!    repository): the commit, marked `-dirty` when a file the binary is built from differs from
//!    it;
//! 3. `.revision`, which `git archive` fills in (`export-subst` in `.gitattributes`), so a
//!    tarball made by git, as forges make release tarballs, knows its commit without `.git`;
//! 4. `.cargo_vcs_info.json`, which `cargo package` writes into a crate's archive.
//!
//! Otherwise the revision is unknown, and `--version` says so.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The paths the binary is built from, relative to the top of the tree: a change to any of them
/// marks the revision `-dirty`, and `build.rs` runs again when one changes. Every `include_str!`
/// of `src/` reads from one of them (the install test checks).
pub const SOURCES: [&str; 8] =
    ["build.rs", "build", "Cargo.toml", "Cargo.lock", "src", "spdk-sys", "profiles", "scripts/nvme-bind.sh"];

/// Digits of the commit shown (as `git rev-parse --short=12`).
pub const SHORT: usize = 12;

/// The revision of the tree at `dir`, such as `696e4b3e9285` or `696e4b3e9285-dirty`; `None` when
/// nothing tells. `env` is the value of `NVMEBENCH_REVISION`, if set.
pub fn revision(dir: &Path, env: Option<&str>) -> Option<String> {
    if let Some(r) = env.map(str::trim).filter(|r| !r.is_empty()) {
        return Some(r.to_string());
    }
    if let Some(r) = from_git(dir) {
        return Some(r);
    }
    if let Ok(text) = std::fs::read_to_string(dir.join(".revision")) {
        let commit = text.trim();
        // Outside an archive the file holds git's placeholder, not a commit.
        if commit.len() >= SHORT && commit.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Some(commit[..SHORT].to_string());
        }
    }
    let info = std::fs::read_to_string(dir.join(".cargo_vcs_info.json")).ok()?;
    let commit = json_string(&info, "sha1")?;
    let dirty =
        info.split("\"dirty\"").nth(1).is_some_and(|rest| rest.trim_start_matches([' ', ':']).starts_with("true"));
    (commit.len() >= SHORT).then(|| format!("{}{}", &commit[..SHORT], if dirty { "-dirty" } else { "" }))
}

/// Files whose change can change what [`revision`] answers (besides [`SOURCES`]): git's HEAD, the
/// branch it points to, and the packed references.
pub fn git_watch(dir: &Path) -> Vec<PathBuf> {
    if !is_top(dir) {
        return Vec::new();
    }
    let (Some(git_dir), Some(common)) =
        (git(dir, &["rev-parse", "--git-dir"]), git(dir, &["rev-parse", "--git-common-dir"]))
    else {
        return Vec::new();
    };
    let (git_dir, common) = (dir.join(git_dir), dir.join(common));
    let mut watch = vec![git_dir.join("HEAD"), common.join("packed-refs")];
    if let Some(branch) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        watch.push(common.join(branch));
    }
    watch.retain(|p| p.exists());
    watch
}

fn from_git(dir: &Path) -> Option<String> {
    if !is_top(dir) {
        return None;
    }
    let commit = git(dir, &["rev-parse", &format!("--short={SHORT}"), "HEAD"])?;
    let mut status = vec!["status", "--porcelain", "--"];
    status.extend(SOURCES);
    let dirty = !git(dir, &status).unwrap_or_default().is_empty();
    Some(format!("{commit}{}", if dirty { "-dirty" } else { "" }))
}

/// Whether `dir` is the top of a git work tree of its own.
fn is_top(dir: &Path) -> bool {
    let top = git(dir, &["rev-parse", "--show-toplevel"]);
    match (top.map(|t| Path::new(&t).canonicalize()), dir.canonicalize()) {
        (Some(Ok(top)), Ok(dir)) => top == dir,
        _ => false,
    }
}

/// `git -C dir ARGS`'s output, trimmed; `None` when git is missing or fails.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The string value of `"key": "value"` in a small JSON text (no escapes in the values read).
fn json_string(text: &str, key: &str) -> Option<String> {
    let rest = text.split(&format!("\"{key}\"")).nth(1)?;
    let value = rest.trim_start_matches([' ', ':', '\n', '\t']).strip_prefix('"')?;
    Some(value.split('"').next()?.to_string())
}

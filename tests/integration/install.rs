//! `nvmebench --version` names the build: the git revision (from a clone, from a `git archive`
//! tarball without `.git`, from a crate made by `cargo package`) and whether SPDK is compiled in.
//! `scripts/package-test.sh` tests the install itself (`cargo install`, the Debian package).

#[path = "../../build/revision.rs"]
#[allow(dead_code)] // git_watch is the build script's
mod revision;

use crate::common::{nvmebench, scratch_dir, stdout};
use std::path::Path;
use std::process::Command;

const TOP: &str = env!("CARGO_MANIFEST_DIR");

/// `git -C dir ARGS`, which must succeed; its output, trimmed.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?} in {}: {}", dir.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Whether this source tree is a git checkout of its own (else the tests that read its history
/// cannot run, and say so).
fn checkout() -> bool {
    let ok = Command::new("git")
        .args(["-C", TOP, "rev-parse", "--show-toplevel"])
        .output()
        .is_ok_and(|o| o.status.success() && Path::new(String::from_utf8_lossy(&o.stdout).trim()) == Path::new(TOP));
    if !ok {
        crate::skip::skip(
            crate::skip::Need::GitCheckout,
            "the source tree is not a git checkout of its own (or git is not installed)",
        );
    }
    ok
}

#[test]
fn the_version_names_the_git_revision_and_whether_spdk_is_in() {
    let out = nvmebench(&["--version"]);
    assert!(out.status.success());
    let line = stdout(&out);
    let spdk = if cfg!(feature = "spdk") { ", with SPDK" } else { ", without SPDK)" };
    assert!(line.contains(spdk), "{line}");
    if cfg!(feature = "spdk") {
        // The release, as SPDK spells it (25.09), read from the installed spdk/version.h.
        let release = line.split(", with SPDK ").nth(1).unwrap_or("");
        assert!(release.starts_with(|c: char| c.is_ascii_digit()) && release.contains('.'), "{line}");
    }
    if !checkout() || std::env::var_os("NVMEBENCH_REVISION").is_some() {
        return;
    }
    // Read from git here, not from the build script's answer.
    let top = Path::new(TOP);
    let head = git(top, &["rev-parse", "--short=12", "HEAD"]);
    let mut status = vec!["status", "--porcelain", "--"];
    status.extend(revision::SOURCES);
    let dirty = if git(top, &status).is_empty() { "" } else { "-dirty" };
    let want = format!("nvmebench {} (git {head}{dirty}{spdk}", env!("CARGO_PKG_VERSION"));
    assert!(line.starts_with(&want), "{line:?} does not start with {want:?}");
    assert_eq!(nvmebench(&["-V"]).stdout, out.stdout, "-V and --version say the same");
}

#[test]
fn the_revision_is_known_from_a_clone_and_from_an_archive_without_git() {
    if !checkout() {
        return;
    }
    let top = Path::new(TOP);
    let head = git(top, &["rev-parse", "HEAD"]);
    let short = &head[..revision::SHORT];
    let scratch = scratch_dir();

    // A clean clone: its HEAD. A change to what the binary is built from makes it -dirty, even an
    // untracked new source file; a change to the documents does not.
    let clone = scratch.path().join("clone");
    git(scratch.path(), &["clone", "-q", "--no-checkout", TOP, "clone"]);
    git(&clone, &["checkout", "-q", &head]);
    assert_eq!(revision::revision(&clone, None).as_deref(), Some(short));
    std::fs::write(clone.join("README.md"), "changed\n").expect("clone is writable");
    assert_eq!(revision::revision(&clone, None).as_deref(), Some(short), "a changed README is not the binary");
    std::fs::write(clone.join("src/new_module.rs"), "\n").expect("clone is writable");
    assert_eq!(revision::revision(&clone, None), Some(format!("{short}-dirty")));
    std::fs::remove_file(clone.join("src/new_module.rs")).expect("just written");
    let lib = std::fs::read_to_string(clone.join("src/lib.rs")).expect("src/lib.rs");
    std::fs::write(clone.join("src/lib.rs"), format!("{lib}\n")).expect("clone is writable");
    assert_eq!(revision::revision(&clone, None), Some(format!("{short}-dirty")));

    // git archive's tarball has no .git; git filled in .revision. Unpacked inside another
    // repository, it still names its own commit, not that repository's.
    let outer = scratch.path().join("outer");
    std::fs::create_dir(&outer).expect("scratch is writable");
    git(&outer, &["init", "-q"]);
    git(&outer, &["commit", "-q", "--allow-empty", "-m", "unrelated"]);
    let unpacked = outer.join("nvmebench");
    std::fs::create_dir(&unpacked).expect("scratch is writable");
    let tar = Command::new("sh")
        .arg("-c")
        .arg(format!("git -C '{TOP}' archive {head} | tar -x -C '{}'", unpacked.display()))
        .status()
        .expect("sh runs");
    assert!(tar.success());
    assert!(!unpacked.join(".git").exists());
    assert_eq!(revision::revision(&unpacked, None).as_deref(), Some(short));

    // A copy of the tree without .git that git did not make: nothing tells, and --version says so.
    let copy = scratch.path().join("copy");
    std::fs::create_dir(&copy).expect("scratch is writable");
    std::fs::copy(top.join(".revision"), copy.join(".revision")).expect(".revision is in the tree");
    assert_eq!(revision::revision(&copy, None), None);
    // A crate from `cargo package` records the commit in .cargo_vcs_info.json.
    let vcs = format!(
        "{{\n  \"git\": {{\n    \"sha1\": \"{head}\",\n    \"dirty\": true\n  }},\n  \"path_in_vcs\": \"\"\n}}"
    );
    std::fs::write(copy.join(".cargo_vcs_info.json"), vcs).expect("scratch is writable");
    assert_eq!(revision::revision(&copy, None), Some(format!("{short}-dirty")));
    // A packager's word comes first.
    assert_eq!(revision::revision(&clone, Some("1.2-debian")).as_deref(), Some("1.2-debian"));
}

#[test]
fn every_file_the_binary_includes_is_one_the_revision_watches() {
    let mut stack = vec![Path::new(TOP).join("src")];
    let mut seen = 0;
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("src is readable") {
            let path = e.expect("an entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("a source file");
            let parts = ["include_str!(\"", "include_bytes!(\""].map(|m| text.split(m).skip(1));
            for part in parts.into_iter().flatten() {
                let Some(rel) = part.split('"').next() else { continue };
                let file = path.parent().expect("a file has a parent").join(rel).canonicalize();
                let file = file.unwrap_or_else(|e| panic!("{} includes {rel}: {e}", path.display()));
                let rel = file.strip_prefix(TOP).expect("included from inside the tree");
                assert!(
                    revision::SOURCES.iter().any(|s| rel.starts_with(s)),
                    "{} includes {}, which build/revision.rs's SOURCES does not list",
                    path.display(),
                    rel.display()
                );
                seen += 1;
            }
        }
    }
    assert!(seen > 0, "the check found the includes");
}

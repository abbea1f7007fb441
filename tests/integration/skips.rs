//! The suite cannot pass by skipping: every skip goes through the one helper (tests/support/skip.rs),
//! which records it and, under `CI=true`, fails a skip of anything CI provides; scripts/test.sh ends
//! with scripts/test-summary.sh's list of what ran and what skipped.

use crate::common::scratch_dir;
use crate::skip::{Need, skip};
use std::path::Path;
use std::process::Command;

/// Every `skipped:` line a test prints comes from the helper, in the integration tests and in the
/// unit tests (the `#[cfg(test)]` part of each source file), so none escapes the log.
#[test]
fn every_skip_goes_through_the_helper() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    let mut dirs = vec![root.join("src"), root.join("tests/integration")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    let mut bad = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        // The tests of a source file follow its #[cfg(test)]; an integration test file is all tests.
        let tests = if f.starts_with(root.join("src")) {
            text.find("#[cfg(test)]").map_or("", |i| &text[i..])
        } else {
            &text[..]
        };
        let flat: String = tests.split_whitespace().collect::<Vec<_>>().join(" ");
        for pat in ["eprintln!(\"skipped", "println!(\"skipped", "eprintln!( \"skipped"] {
            if flat.contains(pat) {
                bad.push(f.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    assert!(bad.is_empty(), "print skips through crate::skip::skip(Need::..., why), not eprintln!: {bad:?}");
    assert!(files.len() > 50, "the walk found the sources: {}", files.len());
}

/// Skips when asked to by the test below (which runs this binary again for it); otherwise passes.
#[test]
fn probe_skips_when_asked() {
    if std::env::var_os("NVMEBENCH_SKIP_PROBE").is_some() {
        skip(Need::Fio, "the probe was asked to skip");
        skip(Need::NvmeDevice, "the probe has no drive");
    }
}

/// Runs `probe_skips_when_asked` in a child test process with `env`; its exit status and the log.
fn probe(env: &[(&str, &str)]) -> (bool, String, String) {
    let dir = scratch_dir();
    let log = dir.path().join("skips");
    let o = Command::new(std::env::current_exe().unwrap())
        .args(["skips::probe_skips_when_asked", "--exact", "--test-threads=1"])
        .env("NVMEBENCH_SKIP_PROBE", "1")
        .env("NVMEBENCH_SKIP_LOG", &log)
        .env_remove("CI")
        .env_remove("NVMEBENCH_CI_MAY_SKIP")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    (o.status.success(), std::fs::read_to_string(&log).unwrap_or_default(), out)
}

#[test]
fn a_skip_is_recorded_and_fails_under_ci_when_ci_provides_what_it_lacks() {
    let (ok, log, out) = probe(&[]);
    assert!(ok, "{out}");
    assert_eq!(
        log,
        "integration\tskips::probe_skips_when_asked\tfio\tallowed\tthe probe was asked to skip\n\
         integration\tskips::probe_skips_when_asked\tnvme-device\tallowed\tthe probe has no drive\n"
    );
    let (ok, log, out) = probe(&[("CI", "true")]);
    assert!(!ok, "a skip of fio under CI=true fails the test: {out}");
    assert_eq!(log, "integration\tskips::probe_skips_when_asked\tfio\trequired\tthe probe was asked to skip\n");
    assert!(out.contains("CI=true: this test must run here, but it would skip: the probe was asked to skip"), "{out}");
    let (ok, log, out) = probe(&[("CI", "true"), ("NVMEBENCH_CI_MAY_SKIP", "testbed,fio")]);
    assert!(ok, "{out}");
    assert_eq!(log.matches("\tallowed\t").count(), 2, "{log}");
}

fn summary(cargo: &str, skips: &str) -> (Option<i32>, String) {
    let dir = scratch_dir();
    let (c, s) = (dir.path().join("cargo.log"), dir.path().join("skips"));
    std::fs::write(&c, cargo).unwrap();
    std::fs::write(&s, skips).unwrap();
    let o =
        Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/test-summary.sh")).arg(&c).arg(&s).output().unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr))
}

const CARGO_LOG: &str = "\
     Running unittests src/lib.rs (target/debug/deps/nvmebench-0123456789abcdef)

running 3 tests
test stats::tests::a ... ok
test stats::tests::b ... ok
test engine::uring::tests::ring ... ok

test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s

     Running tests/integration/main.rs (target/debug/deps/integration-fedcba9876543210)

running 3 tests
test fio::fio_plot_draws_our_json ... ok
test null::runs ... ok
test testbed::boots ... FAILED

failures:

---- testbed::boots stdout ----

thread 'testbed::boots' panicked at tests/integration/testbed.rs:9:5:
the guest did not boot

failures:
    testbed::boots

test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.00s
";

/// The summary lists what ran by binary and module, every skip with its reason, and failures with
/// what they printed (the end of CI's log is what a reader sees); it fails on a failure or on a
/// skip CI required, and passes skips CI does not promise to avoid.
#[test]
fn the_summary_lists_what_ran_and_what_skipped() {
    let skips = "lib\tengine::uring::tests::ring\tio_uring\tallowed\tio_uring unavailable here\n";
    let (rc, out) = summary(CARGO_LOG, skips);
    assert_eq!(rc, Some(1), "a test failed: {out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "ran: lib stats::tests (2): a, b",
            "ran: integration fio (1): fio_plot_draws_our_json",
            "ran: integration null (1): runs",
            "skipped: lib engine::uring::tests::ring [io_uring]: io_uring unavailable here",
            "failed: integration testbed::boots",
            "    thread 'testbed::boots' panicked at tests/integration/testbed.rs:9:5:",
            "    the guest did not boot",
            "tests: 4 ran, 1 skipped in whole or in part (1 skips, 0 that CI requires to run), 1 failed, 0 ignored",
        ]
    );
    let passing = CARGO_LOG.replace("boots ... FAILED", "boots ... ok");
    let (rc, out) = summary(&passing, skips);
    assert_eq!(rc, Some(0), "{out}");
    let required = "integration\tfio::fio_plot_draws_our_json\tfio-plot\trequired\tfio-plot is not installed\n\
                    scripts/test.sh\tshellcheck\tshellcheck\trequired\tshell checks: shellcheck not installed\n";
    let (rc, out) = summary(&passing, required);
    assert_eq!(rc, Some(1), "{out}");
    assert!(
        out.contains(
            "skipped: integration fio::fio_plot_draws_our_json [fio-plot, required under CI=true]: fio-plot is not installed"
        ),
        "{out}"
    );
    assert!(out.contains("skipped: scripts/test.sh shellcheck [shellcheck, required under CI=true]"), "{out}");
    assert!(
        out.ends_with("2 skipped in whole or in part (2 skips, 2 that CI requires to run), 0 failed, 0 ignored\n"),
        "{out}"
    );
}

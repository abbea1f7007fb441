//! The io_uring engine on regular files: the default run, writes that land, reads back, errors.

use crate::common::{json, make_file, nvmebench, scratch_dir, spawn, stderr, stdout, uring_available};
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn default_run_uses_a_scratch_file_and_removes_it() {
    if !uring_available() {
        return;
    }
    let o = nvmebench(&["run", "--time", "500ms", "--output", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    assert_eq!(j["engine"]["name"], "uring");
    assert_eq!(j["config"]["scratch"], true);
    assert_eq!(j["config"]["workload"]["rw"], "randread");
    assert!(j["results"]["total"]["read"]["ios"].as_u64().unwrap() > 0);
    let path = j["config"]["target"]["path"].as_str().unwrap();
    assert!(!std::path::Path::new(path).exists(), "{path} was left behind");
}

#[test]
fn writes_land_and_read_back() {
    if !uring_available() {
        return;
    }
    let dir = scratch_dir();
    let f = dir.path().join("data.bin");
    let fs = f.to_str().unwrap();
    // Creating the file lays it out with data.
    let o = nvmebench(&["run", "--filename", fs, "--size", "4m", "--ios", "64", "--output", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let before = std::fs::read(&f).unwrap();
    assert_eq!(before.len(), 4 << 20);

    // A sequential write of every block, then every block differs from the layout.
    let o = nvmebench(&[
        "run",
        "--filename",
        fs,
        "--rw",
        "write",
        "--bs",
        "4k",
        "--qd",
        "8",
        "--ios",
        "1024",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["results"]["total"]["write"]["ios"], 1024);
    let after = std::fs::read(&f).unwrap();
    let unchanged = before.chunks(4096).zip(after.chunks(4096)).filter(|(a, b)| a == b).count();
    assert_eq!(unchanged, 0, "{unchanged} of 1024 blocks were not written");

    let o = nvmebench(&["run", "--filename", fs, "--rw", "read", "--bs", "64k", "--ios", "64", "--output", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = &json(&o)["results"]["total"]["read"];
    assert_eq!((r["ios"].as_u64(), r["io_bytes"].as_u64()), (Some(64), Some(4 << 20)));
}

#[test]
fn mixed_bssplit_on_a_file() {
    if !uring_available() {
        return;
    }
    let dir = scratch_dir();
    let f = make_file(dir.path(), "mix.bin", 16 << 20);
    let o = nvmebench(&[
        "run",
        "--filename",
        f.to_str().unwrap(),
        "--rw",
        "randrw",
        "--rwmixread",
        "70",
        "--bssplit",
        "4k/50:16k/50",
        "--qd",
        "16",
        "--ios",
        "4000",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = &json(&o)["results"]["total"];
    let (r, w) = (t["read"]["ios"].as_u64().unwrap(), t["write"]["ios"].as_u64().unwrap());
    assert_eq!(r + w, 4000);
    let read_share = r as f64 / 4000.0;
    assert!((read_share - 0.7).abs() < 0.05, "{read_share}");
    let bytes = t["read"]["io_bytes"].as_u64().unwrap() + t["write"]["io_bytes"].as_u64().unwrap();
    let mean_bs = bytes as f64 / 4000.0;
    assert!((mean_bs - 10240.0).abs() < 600.0, "mean I/O size {mean_bs}");
}

#[test]
fn io_errors_end_with_status_1() {
    if !uring_available() {
        return;
    }
    let dir = scratch_dir();
    let f = make_file(dir.path(), "shrinks.bin", 8 << 20);
    let child =
        spawn(["run", "--filename", f.to_str().unwrap(), "--time", "20", "--qd", "4", "--on-error", "continue"]);
    std::thread::sleep(Duration::from_millis(800));
    // Reads past the new end of file come back short: the run must count them as errors.
    std::fs::OpenOptions::new().write(true).open(&f).unwrap().set_len(0).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    let o = child.wait_with_output().unwrap();
    let out = stdout(&o);
    assert!(out.contains("short transfer"), "{out}\n{}", stderr(&o));
    assert!(out.contains("errors: "), "{out}");
    assert_eq!(o.status.code(), Some(143), "interrupted runs report the signal: {}", stderr(&o));

    // Without the interruption, a run with errors exits 1 under the default stop policy.
    let o = nvmebench(&["run", "--filename", f.to_str().unwrap(), "--size", "1m", "--time", "1"]);
    assert_eq!(o.status.code(), Some(2), "the file is empty now, so --size 1m is past its end");
    let g = make_file(dir.path(), "g.bin", 1 << 20);
    let child = spawn(["run", "--filename", g.to_str().unwrap(), "--time", "20", "--qd", "2"]);
    std::thread::sleep(Duration::from_millis(800));
    std::fs::OpenOptions::new().write(true).open(&g).unwrap().set_len(0).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}\n{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("first error: short transfer"), "{}", stdout(&o));

    // Errors that persist are retried N times each, then counted.
    let h = make_file(dir.path(), "h.bin", 1 << 20);
    let child = Command::new(env!("CARGO_BIN_EXE_nvmebench"))
        .args(["run", "--filename", h.to_str().unwrap(), "--time", "20", "--qd", "2", "--on-error", "retry:3"])
        .args(["--output", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    std::fs::OpenOptions::new().write(true).open(&h).unwrap().set_len(0).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    let o = child.wait_with_output().unwrap();
    let j = json(&o);
    let e = &j["results"]["total"]["errors"];
    let (total, retried) = (e["total"].as_u64().unwrap(), e["retried"].as_u64().unwrap());
    assert!(total > 0, "{e}");
    // Every counted error was tried 3 more times first (a few may be mid-retry at the stop).
    assert!(retried >= 3 * total && retried <= 3 * total + 6, "{e}");
}

#[test]
fn paced_runs_on_every_kernel_engine() {
    if !uring_available() {
        return;
    }
    let dir = scratch_dir();
    let f = make_file(dir.path(), "paced.bin", 8 << 20);
    // Paced workers on these interrupt-driven engines sleep until their next I/O is due; engines
    // whose completions only appear inside a syscall (io_uring with DEFER_TASKRUN or COOP_TASKRUN)
    // must still see theirs.
    for engine in ["uring", "uring:defer_taskrun=0", "aio", "psync"] {
        let o = nvmebench(&[
            "run",
            "--filename",
            f.to_str().unwrap(),
            "--engine",
            engine,
            "--rate-iops",
            "2000",
            "--ios",
            "1000",
            "--output",
            "json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{engine}: {}", stderr(&o));
        let j = json(&o);
        assert_eq!(j["results"]["total"]["read"]["ios"], 1000, "{engine}");
        assert_eq!(j["results"]["workers"][0]["summary"]["lost_in_flight"], 0, "{engine}");
        let elapsed = j["results"]["elapsed_ns"].as_u64().unwrap();
        assert!((499_000_000..5_000_000_000).contains(&elapsed), "{engine}: {elapsed} ns for 1000 I/Os at 2000/s");
        // Asleep between I/Os: a worker that polled would use its whole core (about 1.0), whatever
        // else runs; at 2000 IOPS a few tens of µs per I/O is well under half of one.
        let used = j["results"]["cost"]["threads"]["cores_used"].as_f64().unwrap();
        assert!(used < 0.5, "{engine}: the paced worker used {used} cores");
    }
}

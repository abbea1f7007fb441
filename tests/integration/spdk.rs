//! The SPDK engine against SPDK's own NVMe-oF/TCP target on 127.0.0.1 (a RAM-disk namespace), started
//! and stopped by scripts/spdk-tcp-target.sh, and against its vfio-user target (a null or RAM-disk
//! namespace, scripts/spdk-vfu-target.sh; skipped where SPDK was built without vfio-user). Built only
//! with `--features spdk`; scripts/test.sh turns the feature on when an installed SPDK is found and
//! says "skipped: SPDK not installed" otherwise. Needs root (hugepages).

use crate::common::{nvmebench, read_result, spawn, stderr, stdout};
use std::path::PathBuf;
use std::process::Command;

/// A running target, stopped on drop.
struct TcpTarget {
    trid: String,
    state: PathBuf,
}

fn is_root() -> bool {
    let root = std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"));
    if !root {
        crate::skip::skip(crate::skip::Need::Root, "the SPDK tests need root (hugepages)");
    }
    root
}

impl TcpTarget {
    fn start(port: u16) -> Option<TcpTarget> {
        if !is_root() {
            return None;
        }
        let state = PathBuf::from(format!("/tmp/nvmebench-test-tgt-{port}.state"));
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/spdk-tcp-target.sh");
        let _ = Command::new(script).arg("stop").env("NVMEBENCH_TGT_STATE", &state).output();
        let last_core = std::thread::available_parallelism().map_or(0, |n| n.get() - 1);
        let o = Command::new(script)
            .args(["start", "--size", "64", "--port", &port.to_string(), "--core", &last_core.to_string()])
            .env("NVMEBENCH_TGT_STATE", &state)
            .output()
            .expect("the target script runs");
        assert!(o.status.success(), "target did not start: {}", String::from_utf8_lossy(&o.stderr));
        let trid = String::from_utf8_lossy(&o.stdout).trim().to_string();
        Some(TcpTarget { trid, state })
    }
}

impl Drop for TcpTarget {
    fn drop(&mut self) {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/spdk-tcp-target.sh");
        let _ = Command::new(script).arg("stop").env("NVMEBENCH_TGT_STATE", &self.state).output();
    }
}

/// `nvmebench run --engine spdk --trid TRID --cores 0` and the flags in `extra` (split on spaces).
fn spdk_run(trid: &str, extra: &str) -> std::process::Output {
    let mut args = vec!["run", "--engine", "spdk", "--trid", trid, "--cores", "0"];
    args.extend(extra.split_whitespace());
    nvmebench(&args)
}

fn json(o: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(o), stderr(o)))
}

#[test]
fn spdk_engine_over_nvmf_tcp() {
    let Some(t) = TcpTarget::start(4431) else { return };
    let trid = t.trid.as_str();

    // `devices` sees the controller and its namespace.
    let o = nvmebench(&["devices", "--trid", trid]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("model \"nvmebench malloc\"") && out.contains("ns:1  4096-byte blocks"), "{out}");
    let o = nvmebench(&["devices", "--trid", trid, "--json"]);
    let d = json(&o);
    assert_eq!(d[0]["namespaces"][0]["sectors"], 16384);

    // Writes need the flag; with it, a sequential pass covers the whole namespace.
    let o = nvmebench(&["run", "--engine", "spdk", "--trid", trid, "--rw", "write", "--ios", "10"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is an NVMe namespace and this workload writes to it"), "{}", stderr(&o));
    let o = nvmebench(&[
        "run",
        "--engine",
        "spdk",
        "--trid",
        trid,
        "--cores",
        "0",
        "--rw",
        "write",
        "--bs",
        "4k",
        "--qd",
        "16",
        "--ios",
        "16384",
        "--allow-destroy",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    assert_eq!(j["engine"]["name"], "spdk");
    assert_eq!(j["engine"]["options"]["transport"], "TCP");
    // Over a fabric the tuned policy is the default: a poll reaps half the queue and a sixteenth
    // more (QD16: 8 + 1); no gap between polls (no completion-queue memory).
    assert_eq!(j["engine"]["options"]["poll_policy"], "tuned");
    assert_eq!(j["engine"]["options"]["max_completions"], "9");
    assert_eq!(j["engine"]["options"]["poll_gap_ns"], "0");
    // Writes take the in-callback refill path too, and the queue holds what the depth needs.
    assert_eq!(j["engine"]["options"]["refill"], "in_callback");
    assert_eq!(j["engine"]["options"]["device_qd"], "16");
    // Polled: busy time for every I/O, and where the memory is.
    let busy = &j["engine"]["spdk"]["busy"];
    assert_eq!(busy["ios"], 16384, "{busy}");
    assert!(busy["busy_ns"].as_u64().unwrap() > 0 && busy["busy_polls"].as_u64().unwrap() > 0, "{busy}");
    assert_eq!(j["engine"]["spdk"]["numa"][0]["core"], 0, "{}", j["engine"]["spdk"]);
    assert_eq!(j["results"]["total"]["write"]["ios"], 16384);
    assert_eq!(j["results"]["total"]["errors"]["total"], 0);
    assert_eq!(j["config"]["target"]["kind"], "spdk_namespace");

    // Reads back, random and mixed, with sane numbers.
    let o = nvmebench(&[
        "run", "--engine", "spdk", "--trid", trid, "--cores", "0", "--qd", "32", "--time", "2", "--output", "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = &json(&o)["results"]["total"]["read"];
    assert!(r["iops"].as_f64().unwrap() > 1000.0, "{r}");
    let lat = &r["lat_ns"];
    assert!(lat["min"].as_u64().unwrap() > 1_000 && lat["min"].as_u64() <= lat["max"].as_u64(), "{lat}");
    let o = nvmebench(&[
        "run",
        "--engine",
        "spdk",
        "--trid",
        trid,
        "--cores",
        "0",
        "--rw",
        "randrw",
        "--bssplit",
        "4k/50:64k/50",
        "--ios",
        "5000",
        "--allow-destroy",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let tot = &json(&o)["results"]["total"];
    assert_eq!(tot["read"]["ios"].as_u64().unwrap() + tot["write"]["ios"].as_u64().unwrap(), 5000);

    // Bad inputs: one sentence each, exit 2.
    let cases: &[(String, &[&str], &str)] = &[
        (trid.to_string(), &["--engine", "spdk:interrupt"], "SPDK takes interrupts from PCIe controllers only"),
        (format!("{trid} ns:2"), &[], "has no active namespace 2; it has ns:1"),
        (trid.replace("4431", "4999"), &[], "cannot attach the NVMe controller"),
        (trid.to_string(), &["--bs", "512"], "logical block size (4096 bytes)"),
        ("traddr:127.0.0.1".to_string(), &[], "has no trtype"),
        (trid.to_string(), &["--offset", "60m", "--size", "8m"], "past the end of"),
    ];
    for (tr, extra, expected) in cases {
        let mut args = vec!["run", "--trid", tr.as_str(), "--ios", "10"];
        if !extra.contains(&"--engine") {
            args.extend(["--engine", "spdk"]);
        }
        args.extend_from_slice(extra);
        let o = nvmebench(&args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains(expected), "{args:?}: expected '{expected}' in {e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{args:?}: one line: {e}");
    }
}

#[test]
fn injected_errors_are_counted_exactly() {
    let Some(t) = TcpTarget::start(4432) else { return };
    let o = spdk_run(&t.trid, "--qd 8 --ios 2000 --on-error continue --spdk-inject-error read:25:2:0x81 --output json");
    assert_eq!(o.status.code(), Some(1), "I/O errors exit 1: {}", stderr(&o));
    let j = json(&o);
    let e = &j["results"]["total"]["errors"];
    assert_eq!(e["total"], 25, "{e}");
    assert_eq!(e["kinds"][0]["error"]["kind"], "nvme");
    assert_eq!((e["kinds"][0]["error"]["sct"].as_u64(), e["kinds"][0]["error"]["sc"].as_u64()), (Some(2), Some(0x81)));
    assert_eq!(j["results"]["total"]["read"]["ios"], 2000 - 25);

    // Under the default policy the first one stops the run, and the text names it.
    let o =
        nvmebench(&["run", "--engine", "spdk", "--trid", &t.trid, "--ios", "2000", "--spdk-inject-error", "read:1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("first error: NVMe status type 0x0 code 0x06"), "{}", stdout(&o));
    let o = nvmebench(&["run", "--engine", "spdk", "--trid", &t.trid, "--ios", "10", "--spdk-inject-error", "read:0"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_target_that_dies_mid_run_ends_the_run_cleanly() {
    let Some(t) = TcpTarget::start(4433) else { return };
    let child =
        spawn(["run", "--engine", "spdk", "--trid", &t.trid, "--cores", "0", "--time", "30", "--drain-timeout", "3s"]);
    // Kill the target mid-run, not mid-start-up (which a loaded machine can stretch past any fixed
    // sleep): once the admin and the I/O queue pair's connections are up, and a moment more.
    let port: u16 = t.trid.split_whitespace().find_map(|w| w.strip_prefix("trsvcid:")).unwrap().parse().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while established_to(port) < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(1000));
    let state = std::fs::read_to_string(&t.state).unwrap();
    let pid = state.lines().find_map(|l| l.strip_prefix("pid=")).unwrap().to_string();
    Command::new("kill").args(["-KILL", &pid]).status().unwrap();
    let started = std::time::Instant::now();
    let o = child.wait_with_output().unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(25), "the run hung after the target died");
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{}", stderr(&o));
    assert!(out.contains("run failed:") && out.contains("partial results"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("total")), "partial results are printed: {out}");
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
}

/// Established TCP connections whose local port is `port` (the target's side), from /proc/net/tcp.
fn established_to(port: u16) -> usize {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    let local = format!(":{port:04X}");
    table
        .lines()
        .skip(1)
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() > 3 && f[1].ends_with(&local) && f[3] == "01"
        })
        .count()
}

#[test]
fn retries_absorb_transient_errors() {
    let Some(t) = TcpTarget::start(4434) else { return };
    // The queue pair fails its next ten reads; retried (on the same queue pair) until the injection
    // is used up, every I/O succeeds and none counts as an error.
    let o = spdk_run(&t.trid, "--qd 4 --ios 500 --on-error retry:10 --spdk-inject-error read:10 --output json");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    let e = &j["results"]["total"]["errors"];
    assert_eq!((e["total"].as_u64(), e["retried"].as_u64()), (Some(0), Some(10)), "{e}");
    assert_eq!(j["results"]["total"]["read"]["ios"], 500);
}

#[test]
fn a_controller_reset_mid_run_is_survived_and_reported() {
    let Some(t) = TcpTarget::start(4435) else { return };
    let run = |policy: &str| {
        let flags = "--qd 8 --rw randrw --allow-destroy --time 2 --spdk-reset-after 500ms --output json";
        spdk_run(&t.trid, &format!("{flags} --on-error {policy}"))
    };
    // Retried, the commands the reset aborted succeed and the run goes on to its end.
    let o = run("retry:3");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    let r = &j["results"];
    let events = r["events"].as_array().expect("events are listed");
    assert!(events.len() == 1 && events[0].as_str().unwrap().contains("back after"), "{events:?}");
    assert_eq!(r["total"]["errors"]["total"], 0, "{}", r["total"]["errors"]);
    let retried = r["total"]["errors"]["retried"].as_u64().unwrap();
    assert!(retried <= 8, "only the commands in flight are aborted: {retried}");
    assert!(r["elapsed_ns"].as_u64().unwrap() > 1_900_000_000, "the run went on after the reset");
    assert!(r["total"]["read"]["ios"].as_u64().unwrap() > 0);

    // Without retries the aborts are counted (NVMe status 0/0x08, aborted by SQ deletion) and the
    // run ends with exit 1, after the reset and without hanging.
    let o = run("continue");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let j = json(&o);
    let e = &j["results"]["total"]["errors"];
    let n = e["total"].as_u64().unwrap();
    assert!((1..=8).contains(&n), "{e}");
    let kinds = e["kinds"].as_array().unwrap();
    assert_eq!(kinds.len(), 1, "{e}");
    assert_eq!(kinds[0]["error"], serde_json::json!({"kind": "nvme", "sct": 0, "sc": 8}), "{e}");
}

/// A suite through SPDK: one session for every step, longer than the target's 10 s keep-alive
/// timeout (so the admin queue must be polled), and the suite's refusals for spdk.
#[test]
fn a_suite_runs_through_spdk_past_the_keep_alive_timeout() {
    let Some(t) = TcpTarget::start(4436) else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("q");
    let ds = d.to_str().unwrap();
    let suite = |extra: &[&str]| {
        let mut args = vec!["suite", "quick", "--engine", "spdk", "--time", "1s", "--dir", ds];
        args.extend_from_slice(extra);
        nvmebench(&args)
    };
    for (extra, expected) in [
        (vec![], "--engine spdk needs a controller; add --trid"),
        (vec!["--trid", &t.trid], "add --allow-destroy"),
        (vec!["--trid", &t.trid, "--filename", "/dev/null"], "takes its namespaces from --trid; drop --filename"),
        (vec!["--trid", &t.trid, "--spdk-reset-after", "1s"], "not for suites"),
    ] {
        let o = suite(&extra);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(expected), "{extra:?}: {}", stderr(&o));
        assert!(!d.exists(), "{extra:?}: nothing is written");
    }
    let started = std::time::Instant::now();
    let o = suite(&["--trid", &t.trid, "--allow-destroy"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(started.elapsed().as_secs() > 10, "the suite outlasts the keep-alive timeout");
    let step: serde_json::Value = read_result(&d.join("08-8k-70-30-8k-70-30.json"));
    assert_eq!(step["engine"]["name"], "spdk");
    assert_eq!(step["config"]["target"]["kind"], "spdk_namespace");
    assert_eq!(step["results"]["total"]["errors"]["total"], 0);
    assert!(step["results"]["total"]["read"]["ios"].as_u64().unwrap() > 0);
}

/// The transport ID in the SPDK fio plugin's `filename=` spelling: `key=value` pairs, colons escaped.
fn plugin_filename(trid: &str) -> String {
    trid.split_whitespace()
        .map(|kv| {
            let (k, v) = kv.split_once(':').unwrap_or((kv, ""));
            format!("{k}={}", v.replace(':', "\\:"))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn fio_job_files_run_through_the_bypass_path() {
    let Some(t) = TcpTarget::start(4437) else { return };
    let dir = crate::common::scratch_dir();
    // The SPDK fio plugin's own job file: ioengine=spdk with the transport ID as the filename.
    let job = dir.path().join("spdk.fio");
    let text = format!(
        "[global]\nioengine=spdk\nthread=1\ndirect=1\ntime_based\nruntime=1\nfilename={}\n[r]\nrw=randread\niodepth=8\n[w]\nstonewall\nrw=randwrite\n",
        plugin_filename(&t.trid)
    );
    std::fs::write(&job, text).unwrap();
    let o = nvmebench(&["run", job.to_str().unwrap(), "--allow-destroy", "--output-format=json"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stderr(&o), stdout(&o));
    let d = json(&o);
    assert_eq!(d["jobs"][0]["jobname"], "r");
    assert!(d["jobs"][0]["read"]["total_ios"].as_u64().unwrap() > 0, "{d}");
    assert!(d["jobs"][1]["write"]["total_ios"].as_u64().unwrap() > 0, "{d}");
    assert!(d.get("disk_util").is_none(), "an SPDK namespace is no kernel block device");

    // A kernel job file, run through SPDK from the command line: the same job, the other path.
    let job = dir.path().join("kernel.fio");
    std::fs::write(
        &job,
        "[k]\nioengine=libaio\nfilename=/dev/nvme9n9\nrw=randread\niodepth=4\ntime_based\nruntime=1\n",
    )
    .unwrap();
    let o = nvmebench(&["run", job.to_str().unwrap(), "--engine", "spdk", "--trid", &t.trid, "--output-format=json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(json(&o)["jobs"][0]["read"]["total_ios"].as_u64().unwrap() > 0);
}

/// Each job's name, group and read, write and trim total_ios in a fio-shaped document, in order.
fn jobs_and_counts(d: &serde_json::Value) -> Vec<(String, u64, [u64; 3])> {
    d["jobs"]
        .as_array()
        .expect("fio's JSON has jobs")
        .iter()
        .map(|j| {
            let ios = ["read", "write", "trim"].map(|dir| j[dir]["total_ios"].as_u64().unwrap_or(0));
            (j["jobname"].as_str().unwrap().to_string(), j["groupid"].as_u64().unwrap(), ios)
        })
        .collect()
}

/// One size-bounded job file, run on a scratch file through the kernel (psync, io_uring) and through
/// SPDK over TCP and vfio-user (`--engine spdk`): the same jobs[] entries, groups and I/O counts.
#[test]
fn a_job_file_counts_the_same_through_the_kernel_and_spdk() {
    let Some(tcp) = TcpTarget::start(4450) else { return };
    let dir = crate::common::scratch_dir();
    crate::common::make_file(dir.path(), "scratch.dat", 8 << 20);
    let job = dir.path().join("same.fio");
    std::fs::write(
        &job,
        "[global]\ndirect=1\nfilename=scratch.dat\nbs=4k\n\
         [r]\nrw=randread\niodepth=8\nsize=2m\nnumjobs=2\n\
         [w]\nstonewall\nrw=write\nbs=64k\nsize=4m\n\
         [m]\nnew_group\nstonewall\nrw=randrw\nrwmixread=50\nsize=1m\nnumjobs=2\ngroup_reporting\n",
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", job.to_str().unwrap(), "--allow-destroy", "--output-format=json"];
        args.extend(extra);
        let o = Command::new(env!("CARGO_BIN_EXE_nvmebench")).current_dir(dir.path()).args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{extra:?}: {}", stderr(&o));
        jobs_and_counts(&json(&o))
    };
    let kernel = run(&["--engine", "psync"]);
    let names: Vec<(&str, u64)> = kernel.iter().map(|(n, g, _)| (n.as_str(), *g)).collect();
    assert_eq!(names, [("r", 0), ("r", 0), ("w", 1), ("m", 2)], "{kernel:?}");
    assert_eq!(kernel[0].2, [512, 0, 0], "2m at 4k, each clone");
    assert_eq!(kernel[2].2, [0, 64, 0], "4m at 64k");
    let total = |c: &[(String, u64, [u64; 3])]| c[3].2.iter().sum::<u64>();
    assert_eq!(total(&kernel), 512, "two clones of 1m at 4k, reported as one");
    if crate::common::uring_available() {
        assert_eq!(run(&["--engine", "io_uring"]), kernel, "io_uring against psync");
    }
    // The direction of each randrw I/O is drawn at random, so only the mixed job's total is compared.
    let same = |spdk: Vec<(String, u64, [u64; 3])>, how: &str| {
        assert_eq!(spdk[..3], kernel[..3], "{how}");
        assert_eq!((&spdk[3].0, spdk[3].1, total(&spdk)), (&kernel[3].0, kernel[3].1, 512), "{how}");
    };
    same(run(&["--engine", "spdk", "--trid", &tcp.trid]), "SPDK over TCP");
    drop(tcp);
    if let Some(vfu) = VfuTarget::start("jobfile", None) {
        same(run(&["--engine", "spdk", "--trid", &vfu.trid]), "SPDK over vfio-user");
        vfu.stop_and_check();
    }
}

#[test]
fn telemetry_is_read_over_the_admin_queue() {
    let Some(t) = TcpTarget::start(4438) else { return };
    let o = spdk_run(&t.trid, "--time 1 --telemetry-interval 200ms --output json");
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    crate::common::assert_conforms(&j, "spdk run with telemetry");
    let target = &j["telemetry"]["targets"][0];
    assert_eq!((target["target"].as_str(), target["source"].as_str()), (Some(t.trid.as_str()), Some("spdk")));
    assert!(target.get("unavailable").is_none(), "the TCP target answers the health log: {target}");
    let samples = target["samples"].as_array().expect("samples");
    assert!(samples.len() >= 4, "before, every 200 ms of 1 s, after: {}", samples.len());
    assert_eq!(j["results"]["telemetry_alert"], false);

    let o = spdk_run(&t.trid, "--time 1 --telemetry-interval 200ms");
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("telemetry:")).collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert!(lines[0].starts_with(&format!("telemetry: {} via SPDK: ", t.trid)), "{text}");

    // After I/O errors the Error Information log is read too. The errors are injected on the host,
    // so the target's log has nothing of them: read, and empty.
    let o = spdk_run(&t.trid, "--ios 200 --on-error continue --spdk-inject-error read:5 --output json");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let j = json(&o);
    let target = &j["telemetry"]["targets"][0];
    assert_eq!(target["error_log"], serde_json::json!([]), "{target}");
}

/// A running vfio-user target (scripts/spdk-vfu-target.sh), stopped on drop.
struct VfuTarget {
    trid: String,
    state: PathBuf,
    dir: PathBuf,
}

const VFU_SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/spdk-vfu-target.sh");

impl VfuTarget {
    /// A target named `name` with a null namespace, or a RAM disk of `malloc_mib` MiB; `None` (and
    /// a `skipped:` line) where SPDK has no vfio-user or the test is not root.
    fn start(name: &str, malloc_mib: Option<u32>) -> Option<VfuTarget> {
        if !is_root() {
            return None;
        }
        let state = PathBuf::from(format!("/tmp/nvmebench-test-vfu-{name}.state"));
        let dir = PathBuf::from(format!("/tmp/nvmebench-test-vfu-{name}.d"));
        let _ = Command::new(VFU_SCRIPT).arg("stop").env("NVMEBENCH_VFU_STATE", &state).output();
        let last_core = std::thread::available_parallelism().map_or(0, |n| n.get() - 1);
        let mut args = vec!["start".to_string(), "--core".into(), last_core.to_string(), "--dir".into()];
        args.push(dir.to_string_lossy().into_owned());
        if let Some(m) = malloc_mib {
            args.extend(["--malloc".into(), m.to_string()]);
        }
        let o = Command::new(VFU_SCRIPT)
            .args(&args)
            .env("NVMEBENCH_VFU_STATE", &state)
            .output()
            .expect("the target script runs");
        let err = String::from_utf8_lossy(&o.stderr);
        if o.status.code() == Some(2) && err.contains("built without vfio-user") {
            crate::skip::skip(crate::skip::Need::VfioUser, err.trim());
            return None;
        }
        assert!(o.status.success(), "target did not start: {err}");
        let trid = String::from_utf8_lossy(&o.stdout).trim().to_string();
        Some(VfuTarget { trid, state, dir })
    }

    fn pid(&self) -> u32 {
        let state = std::fs::read_to_string(&self.state).expect("the target is running");
        state.lines().find_map(|l| l.strip_prefix("pid=")).and_then(|p| p.parse().ok()).expect("the state has pid=")
    }

    /// Stops the target and checks that it left nothing: process, listener directory, RPC socket.
    fn stop_and_check(self) {
        let pid = self.pid();
        let sock = self.state.with_extension("sock");
        let o = Command::new(VFU_SCRIPT).arg("stop").env("NVMEBENCH_VFU_STATE", &self.state).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists(), "nvmf_tgt {pid} still runs");
        assert!(!self.dir.exists() && !sock.exists() && !self.state.exists(), "the target left files behind");
        assert_eq!(hugepage_files(pid), Vec::<PathBuf>::new());
        std::mem::forget(self);
    }
}

impl Drop for VfuTarget {
    fn drop(&mut self) {
        let _ = Command::new(VFU_SCRIPT).arg("stop").env("NVMEBENCH_VFU_STATE", &self.state).output();
    }
}

/// Hugepage files DPDK made for process `pid` (`spdk_pid<PID>*`) in any hugetlbfs mount.
fn hugepage_files(pid: u32) -> Vec<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    let prefix = format!("spdk_pid{pid}");
    mounts
        .lines()
        .filter(|l| l.split_whitespace().nth(2) == Some("hugetlbfs"))
        .filter_map(|l| l.split_whitespace().nth(1))
        .filter_map(|m| std::fs::read_dir(m).ok())
        .flatten()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect()
}

/// `nvmebench run --engine spdk --trid TRID --cores 0` and `extra`; also checks that the run left
/// no hugepage files behind, whatever its outcome.
fn spdk_run_no_leftovers(trid: &str, extra: &str) -> std::process::Output {
    let mut args = vec!["run", "--engine", "spdk", "--trid", trid, "--cores", "0"];
    args.extend(extra.split_whitespace());
    let child = spawn(&args);
    let pid = child.id();
    let o = child.wait_with_output().unwrap();
    assert_eq!(hugepage_files(pid), Vec::<PathBuf>::new(), "{args:?} left hugepage files");
    o
}

/// Reads over vfio-user from a null namespace: SPDK's default memory and a fixed --mem-size (which
/// failed to attach before single-file segments), QD1 and QD32; `devices` sees the controller.
#[test]
fn spdk_engine_over_vfio_user() {
    let Some(t) = VfuTarget::start("read", None) else { return };
    let trid = t.trid.as_str();
    assert!(trid.starts_with("trtype:VFIOUSER traddr:/tmp/nvmebench-test-vfu-read.d subnqn:"), "{trid}");

    let o = nvmebench(&["devices", "--trid", trid]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("model \"nvmebench vfu null\""), "{}", stdout(&o));

    // Perf's polling by default (back to back, SPDK's own cap per poll: a quarter of the queue's
    // entries, at most 128), what SPDK applies named; the tuned policy and the flags on request.
    for (extra, policy, gap) in [
        ("--qd 32", "perf", "0"),
        ("--qd 32 --mem-size 256 --max-completions 8", "custom", "0"),
        ("--qd 32 --poll-policy tuned", "tuned", "100"),
        ("--qd 1 --mem-size 256 --bs 64k", "perf", "0"),
    ] {
        let o = spdk_run_no_leftovers(trid, &format!("{extra} --time 1 --output json"));
        assert_eq!(o.status.code(), Some(0), "{extra}: {}", stderr(&o));
        assert!(!stderr(&o).contains("EAL"), "DPDK stays quiet unless --spdk-log asks: {}", stderr(&o));
        let j = json(&o);
        let opt = &j["engine"]["options"];
        assert_eq!(opt["transport"], "VFIOUSER", "{extra}");
        assert_eq!(opt["poll_policy"], policy, "{extra}");
        assert_eq!(opt["poll_gap_ns"], gap, "{extra}");
        let entries: u32 = opt["io_queue_size"].as_str().unwrap().parse().unwrap();
        let cap = (entries / 4).clamp(1, 128);
        let per_poll = match policy {
            "custom" => 8.min(cap),
            "tuned" => 16.min(cap),
            _ => cap,
        };
        assert_eq!(opt["max_completions"], per_poll.to_string(), "{extra}: what SPDK applies");
        assert_eq!(opt["queue_holds"], (entries - cap).to_string(), "{extra}");
        let r = &j["results"]["total"]["read"];
        assert!(r["iops"].as_f64().unwrap() > 0.0 && r["ios"].as_u64().unwrap() > 0, "{extra}: {r}");
        assert_eq!(j["results"]["total"]["errors"]["total"], 0, "{extra}");
        // Busy time: under the measured window, for every I/O, per worker and in total.
        let busy = &j["engine"]["spdk"]["busy"];
        let (b, idle) = (busy["busy_ns"].as_u64().unwrap(), busy["idle_ns"].as_u64().unwrap());
        assert_eq!(b + idle, j["results"]["elapsed_ns"].as_u64().unwrap(), "{extra}: {busy}");
        assert!(b > 0 && busy["ios"] == r["ios"], "{extra}: {busy}");
        let per_io = busy["busy_ns_per_io"].as_f64().unwrap();
        assert!(per_io > 10.0 && per_io < 100_000.0, "{extra}: {busy}");
        assert_eq!(busy["workers"].as_array().unwrap().len(), 1, "{extra}");
        let numa = &j["engine"]["spdk"]["numa"][0];
        assert!(numa["controller"].as_str().unwrap().starts_with("trtype:VFIOUSER"), "{numa}");
        if std::path::Path::new("/sys/devices/system/node/node0").exists() {
            // The kernel knows where the memory is: the buffers and the submission queue (its
            // queues being memory) are on a node, and so is the worker's core.
            for k in ["core_node", "buffer_node", "sq_node"] {
                assert!(numa[k].as_i64().is_some_and(|n| n >= 0), "{k}: {numa}");
            }
        }
    }

    // A depth the queue cannot hold, and I/Os above the transfer limit: perf's warnings, one
    // sentence each, and the depth the device sees recorded.
    let o = spdk_run_no_leftovers(trid, "--qd 64 --io-queue-size 64 --time 1 --output json");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("--qd 64 needs 64 commands outstanding and the I/O queue of")
            && e.contains("holds 48 (64 entries less SPDK's cap of 16 completions per poll)")
            && e.contains("the device sees a depth of 48; lower --qd or raise --io-queue-size"),
        "{e}"
    );
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert_eq!(json(&o)["engine"]["options"]["device_qd"], "48");
    let o = spdk_run_no_leftovers(trid, "--qd 4 --bs 1m --time 1 --output json");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let opt = &json(&o)["engine"]["options"];
    let mdts = opt["commands_per_io"].as_str().map(|c| c.parse::<u32>().unwrap());
    assert!(mdts.is_some_and(|c| c > 1), "1 MiB is above the target's transfer limit: {opt}");
    assert!(stderr(&o).contains("so SPDK splits each into"), "{}", stderr(&o));

    // Interrupts are PCIe's: refused here in one sentence, and so are polling knobs with them.
    for (extra, expected) in [
        ("--engine spdk:interrupt", "SPDK takes interrupts from PCIe controllers only, and"),
        ("--engine spdk:interrupt --poll-gap 100ns", "has no polling to tune; drop --poll-gap"),
        ("--engine spdk:bogus", "unknown option 'bogus'; the spdk engine takes interrupt"),
    ] {
        let mut args = vec!["run", "--trid", trid, "--ios", "10"];
        args.extend(extra.split_whitespace());
        let o = nvmebench(&args);
        assert_eq!(o.status.code(), Some(2), "{extra}: {}", stderr(&o));
        assert!(stderr(&o).contains(expected), "{extra}: {}", stderr(&o));
        assert_eq!(stderr(&o).trim_end().lines().count(), 1, "{extra}: {}", stderr(&o));
    }

    // A directory no target listens in: one sentence, exit 2, and nothing left behind.
    let missing = trid.replace("vfu-read.d", "vfu-none.d");
    let o = spdk_run_no_leftovers(&missing, "--ios 10");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot attach the NVMe controller"), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim_end().lines().count(), 1, "{}", stderr(&o));

    t.stop_and_check();
}

/// Writes and verified reads over vfio-user on a RAM-disk namespace, with SPDK's default memory and
/// with --mem-size 256.
#[test]
fn verified_writes_over_vfio_user() {
    let Some(t) = VfuTarget::start("verify", Some(64)) else { return };
    let trid = t.trid.as_str();
    let o = spdk_run_no_leftovers(trid, "--rw write --ios 10");
    assert_eq!(o.status.code(), Some(2), "writes need --allow-destroy: {}", stderr(&o));
    for mem in ["", "--mem-size 256"] {
        let flags = format!(
            "--rw randrw --bssplit 4k/50:64k/50 --qd 16 --ios 4000 --verify --allow-destroy --output json {mem}"
        );
        let o = spdk_run_no_leftovers(trid, &flags);
        assert_eq!(o.status.code(), Some(0), "{mem}: {}", stderr(&o));
        let j = json(&o);
        let tot = &j["results"]["total"];
        assert!(tot["write"]["iops"].as_f64().unwrap() > 0.0 && tot["read"]["iops"].as_f64().unwrap() > 0.0, "{tot}");
        assert_eq!(tot["errors"]["total"], 0, "{mem}");
        let v = &j["results"]["verify"];
        assert!(v["units_checked"].as_u64().unwrap() > 1000, "{mem}: {v}");
        assert_eq!(v["mismatch_count"], 0, "{mem}: {v}");
    }
    t.stop_and_check();
}

/// The vfio-user target script's bad input: one sentence, exit 2, nothing started.
#[test]
fn vfu_target_script_refuses_bad_input() {
    let state = "/tmp/nvmebench-test-vfu-bad.state";
    for (args, expected) in [
        (vec!["start", "--size", "lots"], "take whole numbers"),
        (vec!["start", "--frobnicate"], "unknown option '--frobnicate'"),
        (vec!["restart"], "unknown command 'restart'"),
        (vec!["trid"], "no target is running"),
    ] {
        let o = Command::new(VFU_SCRIPT).args(&args).env("NVMEBENCH_VFU_STATE", state).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(expected), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).trim_end().lines().count(), 1, "{args:?}: {}", stderr(&o));
    }
    assert!(!std::path::Path::new(state).exists());
}

/// Two TCP targets in one run: one worker drives both namespaces (a queue pair each), each gets
/// half of `--ios`, and the per-target blocks name their transport IDs and add up to the total.
#[test]
fn spdk_engine_on_two_targets() {
    let Some(a) = TcpTarget::start(4439) else { return };
    let Some(b) = TcpTarget::start(4440) else { return };
    let o = nvmebench(&[
        "run", "--engine", "spdk", "--trid", &a.trid, "--trid", &b.trid, "--cores", "0", "--qd", "8", "--ios", "4000",
        "--output", "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    let t = j["results"]["targets"].as_array().expect("results.targets");
    assert_eq!(t.len(), 2, "{}", j["results"]);
    for (target, port) in t.iter().zip(["4439", "4440"]) {
        assert_eq!(target["read"]["ios"], 2000, "{target}");
        assert_eq!(target["kind"], "spdk_namespace");
        assert!(target["path"].as_str().unwrap().ends_with(" ns:1"), "{target}");
        assert!(target["path"].as_str().unwrap().contains(port), "{target}: the transport ID of port {port}");
    }
    assert_eq!(j["results"]["total"]["read"]["ios"], 4000);
    assert_eq!(j["results"]["workers"].as_array().unwrap().len(), 2, "one worker, one queue pair per target");
}

#[test]
fn trims_write_zeroes_and_flushes_over_nvmf_tcp() {
    let Some(t) = TcpTarget::start(4445) else { return };
    // Trims destroy data: the flag is needed, as for writes.
    let o = spdk_run(&t.trid, "--rw randtrim --ios 10");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("add --allow-destroy"), "{}", stderr(&o));

    let o = spdk_run(
        &t.trid,
        "--rw randrw --rwmix read=40,write=20,trim=20,write-zeroes=10,flush=10 --qd 16 --ios 4000 --allow-destroy --output json",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    crate::common::assert_conforms(&j, "spdk run with trims");
    let tot = &j["results"]["total"];
    assert_eq!(tot["errors"]["total"], 0, "{tot}");
    let ios = |d: &str| tot[d]["ios"].as_u64().unwrap_or_else(|| panic!("no {d} in {tot}"));
    assert_eq!(ios("read") + ios("write") + ios("trim") + ios("write_zeroes") + ios("flush"), 4000);
    for (d, share) in [("read", 40.0), ("write", 20.0), ("trim", 20.0), ("write_zeroes", 10.0), ("flush", 10.0)] {
        let got = ios(d) as f64 / 40.0;
        assert!((got - share).abs() < 4.0, "{d}: {got}% of I/Os, asked {share}%");
    }
    assert_eq!(tot["trim"]["io_bytes"], ios("trim") * 4096);
    assert_eq!(tot["flush"]["io_bytes"], 0);

    // A whole sequential trim pass, and fio's trimwrite.
    let o = spdk_run(&t.trid, "--rw trim --bs 64k --qd 8 --ios 1024 --allow-destroy --output json");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["results"]["total"]["trim"]["ios"], 1024);
    let o = spdk_run(&t.trid, "--rw trimwrite --bs 16k --qd 4 --ios 200 --allow-destroy --output json");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let tot = &json(&o)["results"]["total"];
    assert_eq!((tot["trim"]["ios"].as_u64(), tot["write"]["ios"].as_u64()), (Some(100), Some(100)), "{tot}");
}

/// `--verify-state` over two TCP targets: written in one order and read back in the other, each
/// namespace's generations found by its transport ID; damage on one (written again outside the
/// state) is found there and named.
#[test]
fn verify_state_over_two_spdk_targets() {
    let Some(a) = TcpTarget::start(4448) else { return };
    let Some(b) = TcpTarget::start(4449) else { return };
    let dir = crate::common::scratch_dir();
    let state = dir.path().join("state.bin");
    let s = state.to_str().unwrap();
    let run = |first: &str, second: &str, extra: &str| {
        let mut args =
            vec!["run", "--engine", "spdk", "--trid", first, "--trid", second, "--cores", "0", "--size", "4m"];
        args.extend(["--verify", "--verify-state", s, "--allow-destroy"]);
        args.extend(extra.split_whitespace());
        nvmebench(&args)
    };
    let o = run(&a.trid, &b.trid, "--rw write --ios 2048");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run(&b.trid, &a.trid, "--rw read --ios 2048 --output json");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = &json(&o)["results"]["verify"];
    assert!(v["units_checked"].as_u64().unwrap() >= 2048 && v["mismatch_count"] == 0, "{v}");

    // b's blocks rewritten by a run that keeps no state: the stored generations no longer match.
    let o = spdk_run(&b.trid, "--rw write --size 4m --ios 1024 --allow-destroy --seed 99");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run(&a.trid, &b.trid, "--rw read --ios 2048 --output json");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let j = json(&o);
    let m = &j["results"]["verify"]["mismatches"];
    assert!(m.as_array().is_some_and(|m| !m.is_empty() && m.iter().all(|m| m["target"] == 1)), "only b: {m}");
    assert!(j["results"]["targets"][1]["path"].as_str().unwrap().contains("4449"));
}

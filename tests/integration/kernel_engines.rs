//! The kernel engines besides plain io_uring (aio, posixaio, psync, uring-cmd) and io_uring's modes, on
//! regular files: what works on a file runs, what needs an NVMe device is refused in one sentence
//! or skipped with the reason.

use crate::common::{json, make_file, nvmebench, punches_holes, scratch_dir, stderr, uring_available};
use std::path::Path;

/// Writes every block with `engine`, checks they all changed, then reads them back.
fn write_then_read(engine: &str) {
    let dir = scratch_dir();
    let f = make_file(dir.path(), "w.bin", 4 << 20);
    let fs = f.to_str().unwrap();
    let before = std::fs::read(&f).unwrap();
    let o = nvmebench(&[
        "run",
        "--engine",
        engine,
        "--filename",
        fs,
        "--rw",
        "write",
        "--qd",
        "8",
        "--ios",
        "1024",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{engine}: {}", stderr(&o));
    let j = json(&o);
    assert_eq!(j["results"]["total"]["write"]["ios"], 1024, "{engine}");
    let after = std::fs::read(&f).unwrap();
    let unchanged = before.chunks(4096).zip(after.chunks(4096)).filter(|(a, b)| a == b).count();
    assert_eq!(unchanged, 0, "{engine}: {unchanged} of 1024 blocks were not written");

    let o = nvmebench(&[
        "run",
        "--engine",
        engine,
        "--filename",
        fs,
        "--rw",
        "randread",
        "--bs",
        "16k",
        "--ios",
        "500",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{engine}: {}", stderr(&o));
    let j = json(&o);
    let r = &j["results"]["total"]["read"];
    assert_eq!((r["ios"].as_u64(), r["io_bytes"].as_u64()), (Some(500), Some(500 * 16384)), "{engine}");
    assert!(j["results"]["cpu"]["ns_per_io"].as_f64().unwrap() > 0.0, "{engine}: CPU per I/O is reported");
}

#[test]
fn aio_writes_land_and_read_back() {
    write_then_read("aio");
    let dir = scratch_dir();
    let f = make_file(dir.path(), "a.bin", 1 << 20);
    let o =
        nvmebench(&["run", "--engine", "aio", "--filename", f.to_str().unwrap(), "--ios", "10", "--output", "json"]);
    let j = json(&o);
    assert_eq!(j["engine"]["name"], "aio");
    assert_eq!(j["engine"]["options"]["direct"], "1");
}

/// POSIX AIO keeps the queue depth in flight: the report says qd=8 and the engine its name.
#[test]
fn posixaio_writes_land_and_read_back() {
    write_then_read("posixaio");
    let dir = scratch_dir();
    let f = make_file(dir.path(), "x.bin", 1 << 20);
    let fs = f.to_str().unwrap();
    let o =
        nvmebench(&["run", "--engine", "posixaio", "--filename", fs, "--qd", "8", "--ios", "50", "--output", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    assert_eq!(j["engine"]["name"], "posixaio");
    assert_eq!(j["engine"]["options"]["direct"], "1");
    assert_eq!(j["config"]["queue_depth"], 8, "{}", j["config"]);
}

#[test]
fn psync_writes_land_and_read_back_one_at_a_time() {
    write_then_read("psync");
    let dir = scratch_dir();
    let f = make_file(dir.path(), "p.bin", 1 << 20);
    let o = nvmebench(&["run", "--engine", "psync", "--filename", f.to_str().unwrap(), "--qd", "16", "--ios", "50"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = crate::common::stdout(&o);
    assert!(out.contains(" qd=1 "), "psync runs at queue depth 1: {out}");
    assert!(out.contains("psync (iodepth=1"), "{out}");
}

#[test]
fn uring_modes_on_a_file() {
    if !uring_available() {
        return;
    }
    let dir = scratch_dir();
    let f = make_file(dir.path(), "m.bin", 8 << 20);
    let fs = f.to_str().unwrap();
    let cases: &[(&str, &[(&str, &str)])] = &[
        ("uring", &[("mode", "interrupt"), ("sqpoll", "0"), ("fixedbufs", "1"), ("regfile", "1")]),
        ("uring:sqpoll", &[("sqpoll", "1"), ("defer_taskrun", "0"), ("coop_taskrun", "0")]),
        ("uring:sqpoll_cpu=0,sqpoll_idle=10ms", &[("sqpoll", "1 (cpu 0)")]),
        ("uring:submit_batch=4,reap_batch=8", &[("submit_batch", "4"), ("reap_batch", "8")]),
        (
            "uring:single_issuer=0,defer_taskrun=0,coop_taskrun=0,regring=0,fixedbufs=0,regfile=0",
            &[("single_issuer", "0"), ("defer_taskrun", "0"), ("regring", "0"), ("fixedbufs", "0"), ("regfile", "0")],
        ),
    ];
    for (engine, expect) in cases {
        let o = nvmebench(&[
            "run",
            "--engine",
            engine,
            "--filename",
            fs,
            "--qd",
            "16",
            "--ios",
            "3000",
            "--output",
            "json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{engine}: {}", stderr(&o));
        let j = json(&o);
        assert_eq!(j["results"]["total"]["read"]["ios"], 3000, "{engine}");
        for (k, v) in *expect {
            assert_eq!(j["engine"]["options"][k], *v, "{engine}: {k} in {}", j["engine"]);
        }
    }
}

/// The disk under `path` can poll (NVMe with poll queues), per sysfs.
fn disk_polls(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(path).unwrap().dev();
    let sys = Path::new("/sys/dev/block").join(format!("{}:{}", libc::major(dev), libc::minor(dev)));
    let Ok(dir) = std::fs::canonicalize(sys) else { return false };
    let disk = if dir.join("partition").exists() { dir.parent().unwrap().to_path_buf() } else { dir };
    std::fs::read_to_string(disk.join("queue/io_poll")).is_ok_and(|s| s.trim() == "1")
}

#[test]
fn polled_mode_needs_poll_queues() {
    if !uring_available() {
        return;
    }
    let dir = scratch_dir();
    let f = make_file(dir.path(), "p.bin", 1 << 20);
    let before = std::fs::read(&f).unwrap();
    let o = nvmebench(&[
        "run",
        "--engine",
        "uring:poll",
        "--filename",
        f.to_str().unwrap(),
        "--rw",
        "randwrite",
        "--ios",
        "100",
    ]);
    if disk_polls(&f) {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        return;
    }
    eprintln!("note: the disk under {} has no poll queues; checking the refusal", f.display());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("polled completions need poll queues") && e.contains("queue/io_poll is 0"), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert_eq!(std::fs::read(&f).unwrap(), before, "nothing was written");
}

#[test]
fn uring_cmd_needs_a_generic_nvme_device() {
    let dir = scratch_dir();
    let f = make_file(dir.path(), "c.bin", 1 << 20);
    let o = nvmebench(&["run", "--engine", "uring-cmd", "--filename", f.to_str().unwrap(), "--ios", "10"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("uring-cmd sends NVMe commands and runs only on an NVMe generic device"),
        "{}",
        stderr(&o)
    );

    let ng = std::fs::read_dir("/dev")
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("ng"));
    let Some(ng) = ng else {
        crate::skip::skip(
            crate::skip::Need::NvmeDevice,
            "no /dev/ng* here, so uring-cmd cannot run (it needs an NVMe namespace)",
        );
        return;
    };
    let o = nvmebench(&[
        "run",
        "--engine",
        "uring-cmd",
        "--filename",
        ng.to_str().unwrap(),
        "--ios",
        "1000",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["results"]["total"]["read"]["ios"], 1000);
    let o = nvmebench(&["run", "--engine", "aio", "--filename", ng.to_str().unwrap(), "--ios", "10"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("takes only passthrough commands"), "{}", stderr(&o));
}

/// A sequential trim pass over the first MiB of a file punches holes that read back as zeroes (and
/// leaves the size alone); write-zeroes zero their range; the rest of the file is untouched.
#[test]
fn trims_and_write_zeroes_on_a_file_through_every_kernel_engine() {
    if !uring_available() || !punches_holes(scratch_dir().path()) {
        return;
    }
    for engine in ["psync", "aio", "posixaio", "uring"] {
        let dir = scratch_dir();
        let f = make_file(dir.path(), "t.bin", 4 << 20);
        let fs = f.to_str().unwrap();
        let before = std::fs::read(&f).unwrap();
        let run = |extra: &[&str]| {
            let mut args = vec!["run", "--engine", engine, "--filename", fs, "--qd", "4", "--output", "json"];
            args.extend_from_slice(extra);
            let o = nvmebench(&args);
            assert_eq!(o.status.code(), Some(0), "{engine} {extra:?}: {}", stderr(&o));
            json(&o)
        };
        let j = run(&["--rw", "trim", "--bs", "64k", "--size", "1m", "--ios", "16"]);
        let tot = &j["results"]["total"];
        assert_eq!(tot["errors"]["total"], 0, "{engine}: {tot}");
        assert_eq!(tot["trim"]["ios"], 16, "{engine}: {tot}");
        assert_eq!(tot["trim"]["io_bytes"], 1 << 20, "{engine}");
        let after = std::fs::read(&f).unwrap();
        assert_eq!(after.len(), 4 << 20, "{engine}: trims keep the size");
        assert!(after[..1 << 20].iter().all(|&b| b == 0), "{engine}: the trimmed MiB reads back as zeroes");
        assert_eq!(after[1 << 20..], before[1 << 20..], "{engine}: nothing else changed");

        // Write-zeroes and flushes, sequentially over the second MiB.
        let j = run(&[
            "--rw",
            "rw",
            "--rwmix",
            "write-zeroes=80,flush=20",
            "--offset",
            "1m",
            "--size",
            "1m",
            "--ios",
            "40",
        ]);
        let tot = &j["results"]["total"];
        assert_eq!(tot["errors"]["total"], 0, "{engine}: {tot}");
        let (wz, flush) = (tot["write_zeroes"]["ios"].as_u64().unwrap(), tot["flush"]["ios"].as_u64().unwrap());
        assert_eq!(wz + flush, 40, "{engine}");
        assert!(wz > 20 && flush > 0, "{engine}: {wz} write-zeroes, {flush} flushes");
        let after = std::fs::read(&f).unwrap();
        let zeroed = (wz as usize).min(256) * 4096;
        assert!(after[1 << 20..(1 << 20) + zeroed].iter().all(|&b| b == 0), "{engine}: zeroed");
        assert_eq!(after[2 << 20..], before[2 << 20..], "{engine}: nothing past the range changed");
    }
}

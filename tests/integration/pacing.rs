//! Pacing (`--rate`, `--rate-process`, `--thinktime`) and written-buffer contents
//! (`--buffer-compress-percentage`, `--dedupe-percentage`) through the real binary.

use crate::common::{json, nvmebench, scratch_dir, stderr, stdout, uring_available};
use std::io::Write;

fn iops(j: &serde_json::Value, dir: &str) -> f64 {
    j["results"]["total"][dir]["iops"].as_f64().unwrap()
}

#[test]
fn bandwidth_pacing_holds_each_direction_at_its_rate() {
    // fio's rate is per job: two workers at 4 MiB/s of 4 KiB reads make 2048 IOPS.
    let o = nvmebench(&["run", "--engine", "null", "--jobs", "2", "--rate", "4m", "--time", "1", "--output", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    let r = iops(&j, "read");
    assert!((r - 2048.0).abs() < 2048.0 * 0.05, "read IOPS {r}");
    let p = &j["config"]["workload"]["pacing"];
    assert_eq!(p["rate_read_bytes_per_s"], 4 << 20);
    assert_eq!(p["rate_process"], "linear");

    // Reads and writes apart, in a 50/50 mix: each direction keeps its own rate (fio's rate_ddir
    // lets the direction behind go first), whatever the mix.
    let o =
        nvmebench(&["run", "--engine", "null", "--rw", "randrw", "--rate", "4m,1m", "--time", "1", "--output", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    let (r, w) = (iops(&j, "read"), iops(&j, "write"));
    assert!((r - 1024.0).abs() < 1024.0 * 0.05, "read IOPS {r}");
    assert!((w - 256.0).abs() < 256.0 * 0.06, "write IOPS {w}");
    assert_eq!(j["config"]["workload"]["pacing"]["rate_write_bytes_per_s"], 1 << 20);

    // Paced latency counts from when each I/O was due: a 2 ms device at 1000 IOPS and QD1 cannot
    // keep up, and the queueing shows in the latency instead of vanishing.
    let o = nvmebench(&[
        "run",
        "--engine",
        "null:lat=2ms",
        "--qd",
        "1",
        "--rate",
        "4000k",
        "--time",
        "500ms",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    let mean = j["results"]["total"]["read"]["lat_ns"]["mean"].as_f64().unwrap();
    assert!(mean > 50e6, "mean latency {mean} ns should include the growing backlog");
}

#[test]
fn a_worker_on_several_targets_holds_its_rate_over_all_of_them() {
    // fio's rate is per job, whatever the number of files: one worker on two files at 400 KiB/s
    // of 4 KiB reads makes 100 IOPS in all, 50 on each (each file used to get the whole rate).
    // Not beside a suite: its iorate curve measures the machine's maximum first.
    let _one_at_a_time = crate::suite::serial();
    let dir = scratch_dir();
    let (a, b) = (dir.path().join("a.bin"), dir.path().join("b.bin"));
    for p in [&a, &b] {
        std::fs::File::create(p).unwrap().set_len(4 << 20).unwrap();
    }
    let list = format!("{}:{}", a.display(), b.display());
    let o = nvmebench(&[
        "run",
        "--engine",
        "psync",
        "--filename",
        &list,
        "--rate",
        "400k",
        "--time",
        "1",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    let r = iops(&j, "read");
    assert!((r - 100.0).abs() < 100.0 * 0.06, "read IOPS {r}");
    for t in j["results"]["targets"].as_array().unwrap() {
        let r = t["read"]["iops"].as_f64().unwrap();
        assert!((r - 50.0).abs() < 50.0 * 0.1, "a target's read IOPS {r}");
    }
}

#[test]
fn trims_keep_their_own_rate_apart_from_writes() {
    // fio's third rate value: reads, writes and trims each at their own rate in one mix, whatever
    // the shares; write-zeroes share the write schedule.
    let mix = "read=25,write=25,trim=25,write-zeroes=25";
    let o = nvmebench(&[
        "run", "--engine", "null", "--rw", "randrw", "--rwmix", mix, "--rate", "4m,2m,1m", "--time", "1", "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    let total = &j["results"]["total"];
    let bw = |d: &str| total[d]["bw_bytes"].as_f64().unwrap();
    assert!((bw("read") - 4_194_304.0).abs() < 4_194_304.0 * 0.05, "read {}", bw("read"));
    assert!((bw("trim") - 1_048_576.0).abs() < 1_048_576.0 * 0.06, "trim {}", bw("trim"));
    let writes = bw("write") + bw("write_zeroes");
    assert!((writes - 2_097_152.0).abs() < 2_097_152.0 * 0.06, "writes and write-zeroes together {writes}");
    let p = &j["config"]["workload"]["pacing"];
    assert_eq!((&p["rate_write_bytes_per_s"], &p["rate_trim_bytes_per_s"]), (&(2 << 20).into(), &(1 << 20).into()));

    // Two values: trims take the write rate, on a schedule of their own (so trimwrite, which trims
    // and writes the same bytes, moves 1 MiB/s each way); a trailing comma leaves trims free.
    let o = nvmebench(&[
        "run",
        "--engine",
        "null",
        "--rw",
        "trimwrite",
        "--rate",
        "4m,1m",
        "--time",
        "1",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    for d in ["write", "trim"] {
        let b = j["results"]["total"][d]["bw_bytes"].as_f64().unwrap();
        assert!((b - 1_048_576.0).abs() < 1_048_576.0 * 0.06, "{d} {b}");
    }
    let o = nvmebench(&["run", "--engine", "null", "--rw", "randtrim", "--rate", "4m,1m,", "--time", "1"]);
    assert_eq!(o.status.code(), Some(2), "trims unpaced: the rate paces nothing this run issues");
    assert!(
        stderr(&o).contains("it paces only reads and writes, and --rw randtrim issues only trims"),
        "{}",
        stderr(&o)
    );
    let o = nvmebench(&["run", "--engine", "null", "--rw", "randtrim", "--rate", ",,1m", "--time", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("rate=,,1m/s per worker"), "{}", stdout(&o));
}

#[test]
fn poisson_arrivals_keep_the_mean_rate_and_the_text_report_names_the_options() {
    let o = nvmebench(&[
        "run",
        "--engine",
        "null",
        "--rate-iops",
        "4000",
        "--rate-process",
        "poisson",
        "--time",
        "1",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    let r = iops(&j, "read");
    // 4000 arrivals expected; a Poisson count's sigma is 63.
    assert!((r - 4000.0).abs() < 300.0, "IOPS {r}");
    assert_eq!(j["config"]["workload"]["pacing"]["rate_process"], "poisson");

    let o = nvmebench(&[
        "run",
        "--engine",
        "null",
        "--rw",
        "randwrite",
        "--rate",
        "8m,2m",
        "--rate-process",
        "poisson",
        "--buffer-compress-percentage",
        "40",
        "--dedupe-percentage",
        "10",
        "--time",
        "200ms",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("rate=8m,2m/s per worker rate_process=poisson"), "{out}");
    assert!(out.contains("buffers=compress40%,dedupe10%"), "{out}");
}

#[test]
fn think_time_stalls_after_each_batch() {
    // Counted at issue: 4 I/Os, then a 2 ms stall once they completed: about 2000 IOPS whatever
    // the queue depth.
    let o = nvmebench(&[
        "run",
        "--engine",
        "null",
        "--qd",
        "32",
        "--thinktime",
        "2ms",
        "--thinktime-blocks",
        "4",
        "--thinktime_blocks_type",
        "issue",
        "--time",
        "1",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    // Counted, not divided by the span (which ends at the last completion): at most 4 I/Os per
    // 2 ms stall in 1 s. Sleep overshoots (timer slack) and a busy machine delays the loop, so the
    // count can only fall below that.
    let ios = j["results"]["total"]["read"]["ios"].as_u64().unwrap();
    assert!(ios > 250 && ios <= 2004, "{ios} I/Os");
    let p = &j["config"]["workload"]["pacing"];
    assert_eq!((p["thinktime_s"].as_f64(), p["thinktime_blocks"].as_u64()), (Some(0.002), Some(4)));
    assert_eq!(p["thinktime_blocks_type"], "issue");
    // Counted at completion (fio's default), as fio's loop reaps them: one per issue once the 32
    // are out, so the 4th comes at the 35th issue, and the 31 still in flight make up the next
    // count after one more: 36 I/Os per two stalls. With 10 ms stalls, 1800 IOPS at most, and
    // more than the 400 that counting at issue allows even when a busy machine stretches each
    // stall by half.
    let o = nvmebench(&[
        "run",
        "--engine",
        "null",
        "--qd",
        "32",
        "--thinktime",
        "10ms",
        "--thinktime-blocks",
        "4",
        "--time",
        "1",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    let ios = j["results"]["total"]["read"]["ios"].as_u64().unwrap();
    assert!(ios > 404 && ios <= 1836, "{ios} I/Os");
    assert_eq!(j["config"]["workload"]["pacing"]["thinktime_blocks_type"], "complete");
    // fio's spelling: a bare number is microseconds; spinning the whole time is exact.
    let o = nvmebench(&[
        "run",
        "--engine",
        "null",
        "--thinktime=500",
        "--thinktime_spin=500",
        "--thinktime_blocks_type=issue",
        "--time",
        "500ms",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ios = json(&o)["results"]["total"]["read"]["ios"].as_u64().unwrap();
    assert!(ios > 100 && ios <= 1001, "{ios} I/Os");
}

/// `--thinktime` reads a number without a unit as fio does, whole microseconds; with a unit it
/// takes fractions exactly.
#[test]
fn a_think_time_without_a_unit_is_microseconds() {
    for (given, want_s) in [("100", 100e-6), ("100.0", 100e-6), ("1.5ms", 1.5e-3), ("2.5us", 2.5e-6)] {
        let o = nvmebench(&["run", "--engine", "null", "--thinktime", given, "--ios", "2", "--output", "json"]);
        assert_eq!(o.status.code(), Some(0), "{given}: {}", stderr(&o));
        let t = json(&o)["config"]["workload"]["pacing"]["thinktime_s"].as_f64().unwrap();
        assert!((t - want_s).abs() < 1e-12, "{given}: {t} s");
    }
}

/// A think time of 0 is fio's default, no think time, on the command line and in a job file,
/// where it turns off a `[global]` think time.
#[test]
fn a_think_time_of_0_is_none_as_in_fio() {
    let o = nvmebench(&["run", "--engine", "null", "--thinktime", "0", "--ios", "1000", "--output", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let d = json(&o);
    assert!(d["config"]["workload"]["pacing"]["thinktime_s"].is_null(), "{}", d["config"]["workload"]["pacing"]);
    assert_eq!(d["results"]["total"]["read"]["ios"], 1000);
    let dir = scratch_dir();
    let job = dir.path().join("think0.fio");
    std::fs::write(&job, "[global]\nioengine=null\nsize=4m\nthinktime=1s\nthinktime_blocks=4\n[a]\nthinktime=0\n")
        .unwrap();
    let o = nvmebench(&["run", job.to_str().unwrap(), "--output", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let run = &json(&o)["runs"][0];
    assert!(run["config"]["workload"]["pacing"]["thinktime_s"].is_null());
    assert_eq!(run["results"]["total"]["read"]["ios"], 1024, "4m of 4k, without a 1 s stall per 4");
    // fio's default shape, spelled out without a think time, shapes nothing.
    std::fs::write(&job, "[a]\nioengine=null\nsize=4m\nthinktime_blocks=1\nthinktime_spin=0\n").unwrap();
    let o = nvmebench(&["run", job.to_str().unwrap(), "--output", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["runs"][0]["results"]["total"]["read"]["ios"], 1024);
}

#[test]
fn job_files_take_the_pacing_and_buffer_options() {
    let dir = scratch_dir();
    let job = dir.path().join("paced.fio");
    std::fs::write(
        &job,
        "[global]\nioengine=null\ntime_based\nruntime=1\n[paced]\nrw=randrw\nrate=4m,1m,512k\nrate_process=poisson\n\
         thinktime=10\nthinktime_blocks=64\nbuffer_compress_percentage=50\ndedupe_percentage=20\n",
    )
    .unwrap();
    let o = nvmebench(&["run", job.to_str().unwrap(), "--output", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let run = &json(&o)["runs"][0];
    let w = &run["config"]["workload"];
    assert_eq!(w["pacing"]["rate_read_bytes_per_s"], 4 << 20);
    assert_eq!(w["pacing"]["rate_write_bytes_per_s"], 1 << 20);
    assert_eq!(w["pacing"]["rate_trim_bytes_per_s"], 512 << 10);
    assert_eq!(w["pacing"]["thinktime_s"].as_f64(), Some(10e-6));
    assert_eq!(w["buffers"]["compress_percent"], 50);
    assert_eq!(w["buffers"]["dedupe_percent"], 20);
    let r = iops(run, "read");
    assert!((r - 1024.0).abs() < 120.0, "read IOPS {r}");
}

/// Deflated size over raw size, 4 KiB at a time.
fn deflate_ratio(data: &[u8]) -> f64 {
    let mut packed = 0;
    for b in data.chunks(4096) {
        let mut z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(b).unwrap();
        packed += z.finish().unwrap().len();
    }
    packed as f64 / data.len() as f64
}

#[test]
fn written_data_has_the_asked_for_compressibility_and_copies() {
    if !uring_available() {
        return;
    }
    let dir = scratch_dir();
    let data = dir.path().join("d.bin");
    let d = data.to_str().unwrap();
    for (compress, dedupe) in [(0u32, 0u32), (70, 0), (0, 40)] {
        let o = nvmebench(&[
            "run",
            "--filename",
            d,
            "--size",
            "4m",
            "--rw",
            "write",
            "--ios",
            "1024",
            "--buffer-compress-percentage",
            &compress.to_string(),
            "--dedupe-percentage",
            &dedupe.to_string(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let disk = std::fs::read(&data).unwrap();
        let ratio = deflate_ratio(&disk);
        let want = f64::from(100 - compress) / 100.0;
        assert!((ratio - want).abs() < 0.05, "compress {compress}%: ratio {ratio}");
        let distinct: std::collections::HashSet<&[u8]> = disk.chunks(4096).collect();
        let copies = 1.0 - distinct.len() as f64 / 1024.0;
        assert!((copies - f64::from(dedupe) / 100.0).abs() < 0.06, "dedupe {dedupe}%: {copies} copies");
    }
}

#[test]
fn verify_works_with_compressible_and_deduplicated_buffers() {
    if !uring_available() {
        return;
    }
    let dir = scratch_dir();
    let data = dir.path().join("d.bin");
    let state = dir.path().join("state.bin");
    let (d, s) = (data.to_str().unwrap(), state.to_str().unwrap());
    let opts = ["--buffer-compress-percentage", "50", "--dedupe-percentage", "30"];
    let run = |extra: &[&str]| {
        let mut a = vec!["run", "--filename", d, "--size", "4m", "--verify", "--verify-state", s, "--output", "json"];
        a.extend_from_slice(&opts);
        a.extend_from_slice(extra);
        nvmebench(&a)
    };
    let o = run(&["--rw", "randrw", "--jobs", "2", "--qd", "8", "--ios", "4000"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["results"]["verify"]["mismatch_count"], 0);
    let o = run(&["--rw", "write", "--ios", "1024"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut disk = std::fs::read(&data).unwrap();
    assert!(deflate_ratio(&disk) < 0.6, "verified blocks still compress: {}", deflate_ratio(&disk));

    // A flipped byte in a random start and one in a zero tail are both caught and located.
    disk[5 * 4096 + 40] ^= 0x01;
    disk[8 * 4096 + 32 + 400] ^= 0x80;
    std::fs::write(&data, &disk).unwrap();
    let o = run(&["--rw", "read", "--ios", "1024"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = json(&o)["results"]["verify"].clone();
    let found: Vec<(u64, &str, u64)> = v["mismatches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["offset"].as_u64().unwrap() / 4096, m["kind"].as_str().unwrap(), m["first"].as_u64().unwrap()))
        .collect();
    assert_eq!(found, vec![(5, "payload", 40), (8, "payload", 432)], "{v}");
}

//! The null engine through the real binary: text and JSON reports, exact I/O counts, pacing, signals.

use crate::common::{json, nvmebench, read_result, scratch_dir, spawn, stderr, stdout};
use nvmebench::report::json::decode_histogram;
use std::process::Command;
use std::time::Duration;

#[test]
fn text_report_has_a_total_row() {
    let o = nvmebench(&["run", "--engine", "null", "--time", "300ms"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("nvmebench "), "{out}");
    assert!(out.contains("randread bs=4k qd=32 workers=1"), "{out}");
    let total = out.lines().find(|l| l.starts_with("total")).expect("a total row");
    assert!(total.contains("read"), "{total}");
    assert!(out.contains("p99.999"), "{out}");
    assert!(out.contains("errors: none"));
}

#[test]
fn json_report_carries_whole_histograms() {
    let o =
        nvmebench(&["run", "--engine", "null", "--jobs", "2", "--ios", "200001", "--rw", "randrw", "--output", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    assert_eq!(j["schema_version"], nvmebench::report::doc::SCHEMA_VERSION);
    assert_eq!(j["engine"]["name"], "null");
    assert_eq!(j["config"]["queue_depth"], 32);
    let total = &j["results"]["total"];
    let (r, w) = (&total["read"], &total["write"]);
    let ios = r["ios"].as_u64().unwrap() + w["ios"].as_u64().unwrap();
    assert_eq!(ios, 200_001, "--ios is exact across workers");
    for d in [r, w] {
        let hist = decode_histogram(d["hist"].as_str().unwrap()).unwrap();
        assert_eq!(hist.len(), d["ios"].as_u64().unwrap());
        assert!(d["iops"].as_f64().unwrap() > 0.0);
        assert!(d["bw_bytes"].as_f64().unwrap() > 0.0);
        for key in ["50.0", "90.0", "99.0", "99.9", "99.99", "99.999"] {
            assert!(d["lat_ns"]["percentiles"][key].is_u64(), "percentile {key} in {d}");
        }
        assert!(d["lat_ns"]["min"].as_u64().unwrap() <= d["lat_ns"]["max"].as_u64().unwrap());
    }
    let workers = j["results"]["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 2);
    let per_worker: u64 =
        workers.iter().map(|w| w["read"]["ios"].as_u64().unwrap() + w["write"]["ios"].as_u64().unwrap()).sum();
    assert_eq!(per_worker, 200_001);
    assert_eq!(workers[0]["summary"]["stop_reason"], "io_limit");
}

#[test]
fn json_file_matches_stdout_format() {
    let dir = scratch_dir();
    let path = dir.path().join("out.json");
    let o = nvmebench(&["run", "--engine", "null", "--ios", "1000", "--json", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = read_result(&path);
    let r = &j["results"]["total"]["read"];
    assert_eq!(r["ios"], 1000);
    // The text's total row is the file's figures, as printed: IOPS with thousands separators, the
    // mean and the max in the unit the unit row names, to the digits printed.
    let out = stdout(&o);
    let cells = |prefix: &str| -> Vec<String> {
        let line = out
            .lines()
            .find(|l| l.trim_start().starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} row: {out}"));
        line.split_whitespace().map(str::to_string).collect()
    };
    // The bandwidth unit is MB/s, or GB/s once the column reaches 10,000 MB/s (a fast CPU does).
    let units = cells(if out.contains(" GB/s") { "GB/s" } else { "MB/s" });
    let (header, total) = (cells("dir"), cells("total read"));
    // The unit row has no cells under dir and IOPS; it starts under bw.
    let printed = |column: &str| -> (f64, f64) {
        let i = header.iter().position(|h| h == column).unwrap_or_else(|| panic!("no {column} column: {out}"));
        let cell = total[i + 1].replace(',', "");
        let scale = match units[i - 2].as_str() {
            "ns" => 1.0,
            "µs" => 1e3,
            "ms" => 1e6,
            u => panic!("unit {u} of {column}: {out}"),
        };
        let decimals = cell.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
        (cell.parse::<f64>().unwrap() * scale, 0.5 * 10f64.powi(-decimals) * scale)
    };
    let close = |column: &str, want: f64| {
        let (got, half_digit) = printed(column);
        assert!((got - want).abs() <= half_digit * 1.000_001, "{column}: the text says {got}, the file {want}: {out}");
    };
    assert_eq!(total[2].replace(',', ""), format!("{}", r["iops"].as_f64().unwrap().round()), "IOPS: {out}");
    close("mean", r["lat_ns"]["mean"].as_f64().unwrap());
    close("max", r["lat_ns"]["max"].as_f64().unwrap());
    close("p99", r["lat_ns"]["percentiles"]["99.0"].as_f64().unwrap());

    // --output json prints the document --json writes, byte for byte.
    let path = dir.path().join("both.json");
    let o =
        nvmebench(&["run", "--engine", "null", "--ios", "1000", "--json", path.to_str().unwrap(), "--output", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), std::fs::read_to_string(&path).unwrap(), "stdout and --json differ");
    assert_eq!(json(&o)["results"]["total"]["read"]["ios"], 1000);
}

#[test]
fn service_time_shows_in_latency() {
    let o = nvmebench(&["run", "--engine", "null:lat=200us", "--qd", "4", "--time", "500ms", "--output", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    let lat = &j["results"]["total"]["read"]["lat_ns"];
    assert!(lat["min"].as_u64().unwrap() >= 200_000, "{lat}");
    // Four slots of 200 µs can complete at most 20k I/Os per second.
    assert!(j["results"]["total"]["read"]["iops"].as_f64().unwrap() <= 20_100.0);
    assert_eq!(j["engine"]["options"]["lat"], "200µs");
}

#[test]
fn ios_given_up_after_the_drain_timeout_fail_the_run() {
    // Nothing completes within the hour: the 32 I/Os in flight at the end are given up after the
    // drain timeout. They never completed, so the run is not clean.
    let o = nvmebench(&[
        "run",
        "--engine",
        "null:lat=1h",
        "--time",
        "200ms",
        "--drain-timeout",
        "100ms",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let j = json(&o);
    assert_eq!(j["results"]["workers"][0]["summary"]["lost_in_flight"], 32);
}

#[test]
fn pacing_holds_the_rate() {
    // 2500 I/Os at 5000 IOPS cannot finish before 0.5 s: the schedule never runs ahead, whatever
    // the machine does (and a loaded machine can only make it later, never earlier).
    let o = nvmebench(&["run", "--engine", "null", "--rate-iops", "5000", "--ios", "2500", "--output", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    assert_eq!(j["results"]["total"]["read"]["ios"], 2500);
    let elapsed = j["results"]["elapsed_ns"].as_u64().unwrap();
    assert!(elapsed >= 499_800_000, "finished early: {elapsed} ns");
    assert!(elapsed < 5_000_000_000, "far behind schedule: {elapsed} ns");
    assert_eq!(j["config"]["rate_iops"], 5000.0);
}

#[test]
fn intervals_make_a_time_series() {
    let o = nvmebench(&[
        "run",
        "--engine",
        "null",
        "--time",
        "1",
        "--interval",
        "200ms",
        "--ramp",
        "200ms",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    let iv = j["intervals"].as_array().unwrap();
    // Five 200 ms intervals in 1 s; a worker descheduled across a boundary merges two into one.
    assert!((3..=5).contains(&iv.len()), "{} intervals", iv.len());
    assert_eq!(iv[0]["t_s"], 0.2);
    assert!(iv.iter().all(|p| p["read"]["ios"].as_u64().unwrap() > 0));
    let elapsed = j["results"]["elapsed_ns"].as_u64().unwrap();
    // Workers stop together at ramp + runtime on the run's timeline; one that began measuring a
    // little late (descheduled at the ramp's end on a busy machine) measured a little less.
    assert!((900_000_000..3_000_000_000).contains(&elapsed), "ramp is not measured: {elapsed}");
}

#[test]
fn sigint_still_writes_the_report() {
    let child = spawn(["run", "--engine", "null:lat=50us", "--time", "60"]);
    std::thread::sleep(Duration::from_millis(700));
    let status = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("interrupted by signal 2"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("total")), "{out}");
}

/// A signal while the workers wait for `--start-delay` (or SPDK's set-up, or a rebind) is an
/// interruption, not a set-up error: 128 + the signal, one line, and no JSON written.
#[test]
fn a_signal_before_the_start_exits_128_plus_the_signal() {
    let dir = scratch_dir();
    let path = dir.path().join("r.json");
    let interrupt = |args: &[&str], after: Duration| {
        let child = spawn(args);
        std::thread::sleep(after);
        assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
        child.wait_with_output().unwrap()
    };
    let json_path = path.to_str().unwrap();
    let o = interrupt(
        &["run", "--engine", "null", "--time", "1", "--start-delay", "60s", "--json", json_path],
        Duration::from_millis(500),
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "{e}");
    assert_eq!(e.trim(), "nvmebench: interrupted before the workers started; nothing ran");
    assert!(!path.exists(), "nothing is written");

    // The same for a comparison held before its first engine.
    let o = interrupt(
        &["compare", "--engines", "null,psync", "--time", "1", "--start-delay", "60s", "--json", json_path],
        Duration::from_millis(500),
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "{e}");
    assert_eq!(e.trim().lines().last(), Some("nvmebench: interrupted before the workers started; nothing ran"));
    assert!(!path.exists(), "nothing is written");
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    let mut child = spawn(["run", "--engine", "null", "--time", "200ms"]);
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
}

#[test]
fn only_workers_run_on_worker_cores_while_a_run_goes_on() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores < 2 {
        crate::skip::skip(crate::skip::Need::SpareCore, "one core only, no core to keep free of workers");
        return;
    }
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_nvmebench"))
        .args(["run", "--engine", "null", "--cores", "0", "--time", "3", "--output", "json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // What the kernel says while the run goes on: the worker on core 0, every other thread off it.
    let mut seen = Vec::new();
    for e in std::fs::read_dir(format!("/proc/{}/task", child.id())).unwrap() {
        let dir = e.unwrap().path();
        let name = std::fs::read_to_string(dir.join("comm")).unwrap().trim().to_string();
        let status = std::fs::read_to_string(dir.join("status")).unwrap();
        let cpus = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).unwrap().trim().to_string();
        seen.push((name, cpus));
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(seen.iter().any(|(n, c)| n == "nvmebench-w0" && c == "0"), "{seen:?}");
    for (name, cpus) in seen.iter().filter(|(n, _)| !n.starts_with("nvmebench-w")) {
        let list = nvmebench::units::parse_core_list(cpus).unwrap();
        assert!(!list.contains(&0), "{name} may run on the worker's core 0: {cpus}");
    }
    // The report says the same.
    let j = json(&o);
    let p = &j["results"]["placement"];
    assert_eq!(p["workers_alone"], true, "{p}");
    assert!(!p["housekeeping_cores"].as_array().unwrap().contains(&serde_json::json!(0)), "{p}");
}

#[test]
fn status_lines_for_logs_and_a_live_line_that_never_shares_the_report() {
    let o =
        nvmebench(&["run", "--engine", "null", "--time", "600ms", "--interval", "100ms", "--status-interval", "200ms"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let e = stderr(&o);
    let lines: Vec<&str> = e.lines().filter(|l| l.contains("/0.6s,")).collect();
    assert_eq!(lines.len(), 3, "a line every 200 ms of 600: {e}");
    assert!(lines[0].starts_with("0.2s/0.6s, 0.4s left | read ") && lines[0].ends_with(" | errors 0"), "{e}");
    assert!(!e.contains('\r') && !e.contains('\x1b'), "plain lines for logs: {e:?}");
    assert!(stdout(&o).starts_with("nvmebench "), "the report is alone on stdout");

    let o = nvmebench(&["run", "--engine", "null", "--time", "300ms", "--interval", "100ms", "--progress", "always"]);
    let e = stderr(&o);
    assert!(e.starts_with("\r") && e.contains("/0.3s, ") && e.contains("\x1b[K"), "redrawn in place: {e:?}");
    assert!(e.ends_with('\n'), "ended with a newline when stderr is not a terminal: {e:?}");
    let o = nvmebench(&["run", "--engine", "null", "--time", "300ms", "--interval", "100ms", "--progress", "never"]);
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    let o = nvmebench(&["run", "--engine", "null", "--time", "300ms", "--interval", "100ms"]);
    assert!(stderr(&o).is_empty(), "auto: stderr is a pipe here: {}", stderr(&o));
}

#[test]
fn the_text_table_fits_100_columns_unless_wide() {
    let args = ["run", "--engine", "null", "--time", "300ms", "--jobs", "2", "--rw", "randrw"];
    let o = nvmebench(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let table: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("dir"))
        .take_while(|l| !l.starts_with("errors"))
        .collect();
    assert_eq!(table.len(), 2 + 6, "titles, units, 2 workers x 2 directions and 2 totals: {out}");
    for l in &table {
        assert!(l.chars().count() <= 100, "{} columns: {l}", l.chars().count());
    }
    let units = table[1];
    assert!(units.contains("MB/s") || units.contains("GB/s"), "{units}");
    assert_eq!(
        units.split_whitespace().filter(|u| ["ns", "µs", "ms", "s"].contains(u)).count(),
        7,
        "one unit per latency column: {units}"
    );
    let total = table.iter().find(|l| l.starts_with("total")).unwrap();
    assert!(total.split_whitespace().nth(2).unwrap().contains(','), "IOPS with thousands separators: {total}");

    let mut wide = args.to_vec();
    wide.push("--wide");
    let out = stdout(&nvmebench(&wide));
    for col in ["ios", "min", "stddev", "p90", "p99.999"] {
        assert!(out.lines().any(|l| l.split_whitespace().any(|w| w == col)), "--wide has {col}: {out}");
    }
    assert!(out.contains("MiB/s") || out.contains("GiB/s"), "{out}");
}

#[test]
fn a_mix_of_every_operation_issues_each_share() {
    let o = nvmebench(&[
        "run",
        "--engine",
        "null",
        "--rw",
        "randrw",
        "--rwmix",
        "read=50,write=20,trim=15,write-zeroes=10,flush=5",
        "--bs",
        "4k,16k",
        "--ios",
        "200000",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    let total = &j["results"]["total"];
    let ios = |d: &str| total[d]["ios"].as_u64().unwrap_or_else(|| panic!("no {d} block: {total}"));
    let names = ["read", "write", "trim", "write_zeroes", "flush"];
    assert_eq!(names.iter().map(|d| ios(d)).sum::<u64>(), 200_000);
    for (d, share) in names.iter().zip([50.0, 20.0, 15.0, 10.0, 5.0]) {
        let got = ios(d) as f64 / 2000.0;
        assert!((got - share).abs() < 0.5, "{d}: {got}% of I/Os, asked {share}%");
        let hist = decode_histogram(total[d]["hist"].as_str().unwrap()).unwrap();
        assert_eq!(hist.len(), ios(d), "{d}: the whole histogram");
    }
    // Trims and write-zeroes take the write size; a flush moves no bytes.
    assert_eq!(total["trim"]["io_bytes"], ios("trim") * 16384);
    assert_eq!(total["write_zeroes"]["io_bytes"], ios("write_zeroes") * 16384);
    assert_eq!(total["flush"]["io_bytes"], 0);
    assert_eq!(j["config"]["workload"]["mix"]["write_zeroes"], 10);
    assert_eq!(j["config"]["workload"]["read_percent"], 50);
    assert!(j["intervals"][0]["flush"]["ios"].is_u64(), "{}", j["intervals"][0]);
    assert_eq!(j["results"]["workers"][0]["trim"]["ios"], total["trim"]["ios"]);

    // The text report has a row per operation.
    let o = nvmebench(&["run", "--engine", "null", "--rw", "randrw", "--rwmix", "read=90,flush=10", "--ios", "1000"]);
    let out = stdout(&o);
    assert!(out.contains("rwmix=read=90,flush=10"), "{out}");
    for row in ["total read", "total flush"] {
        assert!(out.contains(row), "{row}: {out}");
    }
    assert!(!out.contains("total write"), "no write row without writes: {out}");

    // A read/write mix keeps fio's trim block, empty, and writes no others.
    let o = nvmebench(&[
        "run",
        "--engine",
        "null",
        "--rw",
        "randrw",
        "--rwmixread",
        "70",
        "--ios",
        "1000",
        "--output",
        "json",
    ]);
    let j = json(&o);
    let total = &j["results"]["total"];
    assert_eq!(total["trim"]["ios"], 0);
    assert!(total.get("write_zeroes").is_none() && total.get("flush").is_none(), "{total}");
    assert!(j["config"]["workload"]["mix"]["read"] == 70 && j["config"]["workload"]["mix"]["write"] == 30);
}

#[test]
fn fio_shaped_output_fills_trim_and_sync() {
    let o = nvmebench(&[
        "run",
        "--engine",
        "null",
        "--rw",
        "randrw",
        "--rwmix",
        "read=60,trim=30,flush=10",
        "--ios",
        "10000",
        "--output-format=json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    let job = &j["jobs"][0];
    let (reads, trims, syncs) =
        (job["read"]["total_ios"].as_u64(), job["trim"]["total_ios"].as_u64(), job["sync"]["total_ios"].as_u64());
    assert_eq!(reads.unwrap() + trims.unwrap() + syncs.unwrap(), 10_000, "{job}");
    assert!(trims.unwrap() > 2500 && syncs.unwrap() > 700, "{job}");
    assert!(job["trim"]["clat_ns"]["percentile"]["99.000000"].as_u64().unwrap() > 0, "{}", job["trim"]);
    assert!(job["trim"]["bw_bytes"].as_u64().unwrap() > 0, "{}", job["trim"]);
    assert!(job["sync"]["lat_ns"]["mean"].as_f64().unwrap() > 0.0, "{}", job["sync"]);
    assert_eq!(job["job options"]["rwmix"], "read=60,trim=30,flush=10");
}

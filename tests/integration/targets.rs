//! Several targets in one run: every target gets I/O, the per-target blocks add up to the total, the
//! placement follows `--each-worker-all-targets`, and one refused target refuses the whole run
//! before anything is written.

use crate::common::{assert_conforms, json, make_file, nvmebench, scratch_dir, stderr, stdout, uring_available};
use serde_json::Value;

/// The per-target blocks of `j` add up to its total, direction by direction, and each got I/O.
fn targets_sum_to_total(j: &Value, n: usize) {
    let r = &j["results"];
    let targets = r["targets"].as_array().expect("results.targets with several targets");
    assert_eq!(targets.len(), n);
    for dir in ["read", "write"] {
        for field in ["ios", "io_bytes"] {
            let sum: u64 = targets.iter().map(|t| t[dir][field].as_u64().unwrap()).sum();
            assert_eq!(sum, r["total"][dir][field].as_u64().unwrap(), "{dir}.{field}");
        }
    }
    for t in targets {
        let ios = t["read"]["ios"].as_u64().unwrap() + t["write"]["ios"].as_u64().unwrap();
        assert!(ios > 0, "target {} got no I/O", t["path"]);
        assert!(t["read"]["hist"].as_str().is_some_and(|h| !h.is_empty()), "whole histograms per target");
        assert!(t["elapsed_ns"].as_u64().unwrap() > 0);
    }
    // Per worker and target entries add up too.
    let lanes: u64 = r["workers"].as_array().unwrap().iter().map(|w| w["read"]["ios"].as_u64().unwrap()).sum();
    assert_eq!(lanes, r["total"]["read"]["ios"].as_u64().unwrap());
}

#[test]
fn two_files_dealt_to_one_worker_both_get_io() {
    let engine = if uring_available() { "uring" } else { "psync" };
    let dir = scratch_dir();
    let a = make_file(dir.path(), "a.bin", 4 << 20);
    let b = make_file(dir.path(), "b.bin", 8 << 20);
    let list = format!("{}:{}", a.display(), b.display());
    let o =
        nvmebench(&["run", "--engine", engine, "--filename", &list, "--qd", "4", "--ios", "2000", "--output", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    assert_conforms(&j, "a run on two targets");
    targets_sum_to_total(&j, 2);
    let t = j["results"]["targets"].as_array().unwrap();
    assert_eq!(t[0]["path"], a.display().to_string());
    assert_eq!(t[1]["path"], b.display().to_string());
    // One worker drives both, --ios split evenly over its two queues.
    assert_eq!((t[0]["workers"].clone(), t[1]["workers"].clone()), (serde_json::json!([0]), serde_json::json!([0])));
    assert_eq!((t[0]["read"]["ios"].as_u64(), t[1]["read"]["ios"].as_u64()), (Some(1000), Some(1000)));
    // The working set fits the smaller file.
    assert_eq!(j["config"]["workload"]["range_bytes"], 4 << 20);
    assert_eq!(j["config"]["targets"].as_array().map(Vec::len), Some(2));
    // The report page has a line per target.
    let doc = dir.path().join("two.json");
    std::fs::write(&doc, j.to_string()).unwrap();
    let page = dir.path().join("two.html");
    let o = nvmebench(&["report", doc.to_str().unwrap(), "-o", page.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = std::fs::read_to_string(&page).unwrap();
    let table = &html[html.find("<table class=\"targets\">").expect("a per-target table")..];
    let table = &table[..table.find("</table>").unwrap()];
    for p in [&a, &b] {
        assert!(table.contains(&format!("<td class=\"l\">{}</td>", p.display())), "{table}");
    }
    let w = j["results"]["workers"].as_array().unwrap();
    assert_eq!(
        w.iter().map(|w| (w["worker"].as_u64(), w["target"].as_u64())).collect::<Vec<_>>(),
        [(Some(0), Some(0)), (Some(0), Some(1))]
    );
}

#[test]
fn each_worker_all_targets_gives_every_worker_a_queue_on_each() {
    let dir = scratch_dir();
    let a = make_file(dir.path(), "a.bin", 4 << 20);
    let b = make_file(dir.path(), "b.bin", 4 << 20);
    let c = make_file(dir.path(), "c.bin", 4 << 20);
    let (a, b, c) = (a.to_str().unwrap(), b.to_str().unwrap(), c.to_str().unwrap());
    let engine = if uring_available() { "uring" } else { "aio" };
    let common = ["run", "--engine", engine, "--rw", "randrw", "--jobs", "2", "--qd", "2", "--time", "1"];
    let mut args: Vec<&str> = common.to_vec();
    args.extend(["--filename", a, "--filename", b, "--filename", c, "--each-worker-all-targets", "--output", "json"]);
    let o = nvmebench(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    targets_sum_to_total(&j, 3);
    for t in j["results"]["targets"].as_array().unwrap() {
        assert_eq!(t["workers"], serde_json::json!([0, 1]), "{}", t["path"]);
    }
    assert_eq!(j["results"]["workers"].as_array().unwrap().len(), 6, "2 workers x 3 targets");
    assert_eq!(j["config"]["each_worker_all_targets"], true);

    // Dealt round-robin instead: three targets over two workers, worker 0 takes two.
    let list = format!("{a}:{b}:{c}");
    let args: Vec<&str> = common.iter().copied().chain(["--filename", &list, "--output", "json"]).collect();
    let o = nvmebench(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    targets_sum_to_total(&j, 3);
    let owners: Vec<Value> = j["results"]["targets"].as_array().unwrap().iter().map(|t| t["workers"].clone()).collect();
    assert_eq!(owners, [serde_json::json!([0]), serde_json::json!([1]), serde_json::json!([0])]);

    // The text report has a row per target and the total.
    let text: Vec<&str> = common.iter().copied().chain(["--filename", &list]).collect();
    let o = nvmebench(&text);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    for row in ["target 0 ", "target 1 ", "target 2 ", "worker 0 target 2", "total "] {
        assert!(out.lines().any(|l| l.starts_with(row)), "no '{row}' row in:\n{out}");
    }
    assert!(out.contains("3 targets, targets dealt round-robin over the workers, qd 2 per worker per target"), "{out}");
}

#[test]
fn new_files_are_created_only_when_every_target_passes() {
    let dir = scratch_dir();
    let a = dir.path().join("new-a.bin");
    let b = dir.path().join("new-b.bin");
    let list = format!("{}:{}", a.display(), b.display());
    let o = nvmebench(&[
        "run",
        "--engine",
        "psync",
        "--filename",
        &list,
        "--size",
        "1m",
        "--ios",
        "200",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    targets_sum_to_total(&json(&o), 2);
    assert!(a.exists() && b.exists(), "both files were created at --size");
    assert_eq!(std::fs::metadata(&b).unwrap().len(), 1 << 20);
}

/// `j`'s per-target interval series: on the run's times, adding up to the run's series.
fn target_series_add_up(j: &Value) {
    let total = j["intervals"].as_array().expect("intervals");
    assert!(total.len() >= 3, "a 1 s run at 200 ms intervals has several points");
    let targets = j["results"]["targets"].as_array().unwrap();
    for t in targets {
        let series = t["intervals"].as_array().expect("each target has its own series");
        let times: Vec<&Value> = series.iter().map(|p| &p["t_s"]).collect();
        assert_eq!(times, total.iter().map(|p| &p["t_s"]).collect::<Vec<_>>(), "{}", t["path"]);
        let ios: u64 = series.iter().map(|p| p["read"]["ios"].as_u64().unwrap()).sum();
        assert_eq!(ios, t["read"]["ios"].as_u64().unwrap(), "a target's series holds all its I/Os");
    }
    for (i, p) in total.iter().enumerate() {
        let ios: u64 = targets.iter().map(|t| t["intervals"][i]["read"]["ios"].as_u64().unwrap()).sum();
        assert_eq!(ios, p["read"]["ios"].as_u64().unwrap(), "interval {i}");
    }
}

#[test]
fn each_target_has_its_own_interval_series_and_lines_on_the_charts() {
    let dir = scratch_dir();
    let a = make_file(dir.path(), "a.bin", 4 << 20);
    let b = make_file(dir.path(), "b.bin", 4 << 20);
    let list = format!("{}:{}", a.display(), b.display());
    let run = ["run", "--engine", "psync", "--time", "1", "--interval", "200ms", "--output", "json", "--filename"];
    let o = nvmebench(&[&run[..], &[&list]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    assert_conforms(&j, "a run on two targets with interval series");
    target_series_add_up(&j);

    // The over-time charts draw a line per target beside the total.
    let doc = dir.path().join("two.json");
    std::fs::write(&doc, j.to_string()).unwrap();
    let svg = dir.path().join("iops.svg");
    let o = nvmebench(&[
        "report",
        doc.to_str().unwrap(),
        "--format",
        "svg",
        "--chart",
        "iops-time",
        "-o",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let svg = std::fs::read_to_string(&svg).unwrap();
    for p in [&a, &b] {
        assert!(svg.contains(&format!("{} read", p.display())), "no line for {} in the chart", p.display());
    }

    // One target: no per-target blocks, so no series of its own; the chart has the run's line only.
    let o = nvmebench(&[&run[..], &[a.to_str().unwrap()]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    assert!(j["results"].get("targets").is_none(), "{}", j["results"]);
    assert!(j["intervals"].as_array().unwrap().len() >= 3);
}

#[test]
fn merge_keeps_per_target_blocks_and_refuses_a_target_that_changed() {
    let dir = scratch_dir();
    let a = make_file(dir.path(), "a.bin", 4 << 20);
    let b = make_file(dir.path(), "b.bin", 4 << 20);
    let c = make_file(dir.path(), "c.bin", 4 << 20);
    let (a, b, c) = (a.to_str().unwrap(), b.to_str().unwrap(), c.to_str().unwrap());
    let result = |name: &str, list: &str| {
        let out = dir.path().join(name);
        let o = nvmebench(&[
            "run",
            "--engine",
            "psync",
            "--ios",
            "600",
            "--interval",
            "100ms",
            "--filename",
            list,
            "--json",
            out.to_str().unwrap(),
            "--quiet",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        out
    };
    let one = result("one.json", &format!("{a}:{b}"));
    let two = result("two.json", &format!("{b}:{c}"));
    let merged = dir.path().join("merged.json");
    let o = nvmebench(&["merge", one.to_str().unwrap(), two.to_str().unwrap(), "-o", merged.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let m: Value = serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    assert_conforms(&m, "a merge of runs on several targets");
    let t = m["results"]["targets"].as_array().expect("merge keeps per-target blocks");
    let paths: Vec<&str> = t.iter().map(|t| t["path"].as_str().unwrap()).collect();
    assert_eq!(paths, [a, b, c], "targets matched by path: b is one target");
    let ios: Vec<u64> = t.iter().map(|t| t["read"]["ios"].as_u64().unwrap()).collect();
    assert_eq!(ios, [300, 600, 300]);
    assert_eq!(t[1]["inputs"], serde_json::json!([0, 1]));
    let sum: u64 = ios.iter().sum();
    assert_eq!(sum, m["results"]["total"]["read"]["ios"].as_u64().unwrap());
    for w in m["results"]["workers"].as_array().unwrap() {
        let target = w["target"].as_u64().expect("merged workers name their merged target") as usize;
        assert!(t[target]["workers"].as_array().unwrap().iter().any(|x| x.as_u64().is_some()));
    }

    // c grows between the runs: the same path is another target now, and merge says so.
    std::fs::OpenOptions::new().write(true).open(c).unwrap().set_len(8 << 20).unwrap();
    let three = result("three.json", &format!("{b}:{c}"));
    let o = nvmebench(&["merge", one.to_str().unwrap(), two.to_str().unwrap(), three.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("cannot merge per-target results:") && e.contains(&format!("{c} on ")), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "one sentence: {e}");
    assert!(stdout(&o).is_empty(), "nothing written");
}

#[test]
fn verify_state_round_trips_over_several_targets_and_names_the_damaged_one() {
    let dir = scratch_dir();
    let a = make_file(dir.path(), "a.bin", 2 << 20);
    let b = make_file(dir.path(), "b.bin", 2 << 20);
    let state = dir.path().join("state.bin");
    let (a, b, s) = (a.to_str().unwrap(), b.to_str().unwrap(), state.to_str().unwrap());
    let run = |list: &str, rw: &str, extra: &[&str]| {
        let mut args =
            vec!["run", "--engine", "psync", "--filename", list, "--rw", rw, "--verify", "--verify-state", s];
        args.extend(["--ios", "1024"]);
        args.extend(extra);
        nvmebench(&args)
    };
    // Write both targets whole (512 4k blocks each), then read them back in the other order.
    let o = run(&format!("{a}:{b}"), "write", &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run(&format!("{b}:{a}"), "read", &["--output", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = &json(&o)["results"]["verify"];
    assert!(v["units_checked"].as_u64().unwrap() >= 1024, "every block of both read and checked: {v}");
    assert_eq!(v["mismatch_count"], 0, "{v}");

    // A flipped byte in b: found, and the report names b.
    let mut disk = std::fs::read(b).unwrap();
    disk[7 * 4096 + 100] ^= 0xff;
    std::fs::write(b, &disk).unwrap();
    let o = run(&format!("{a}:{b}"), "read", &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains(&format!("  {b}: offset 28672 (expected generation 1): torn or corrupted")), "{out}");
    let o = run(&format!("{a}:{b}"), "read", &["--output", "json"]);
    let m = &json(&o)["results"]["verify"]["mismatches"];
    assert_eq!((m[0]["target"].as_u64(), m[0]["offset"].as_u64()), (Some(1), Some(28672)), "{m}");

    // A target the state does not know has nothing to check reads against; a one-target state
    // cannot stand for several targets.
    let c = make_file(dir.path(), "c.bin", 2 << 20);
    let c = c.to_str().unwrap();
    let o = run(&format!("{a}:{c}"), "read", &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(&format!("{s} has no generations for {c}, so its reads")), "{}", stderr(&o));
    let one = dir.path().join("one.bin");
    let one = one.to_str().unwrap();
    let o = nvmebench(&[
        "run",
        "--engine",
        "psync",
        "--filename",
        a,
        "--rw",
        "write",
        "--verify",
        "--verify-state",
        one,
        "--ios",
        "16",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = nvmebench(&[
        "run",
        "--engine",
        "psync",
        "--filename",
        &format!("{a}:{b}"),
        "--rw",
        "write",
        "--verify",
        "--verify-state",
        one,
        "--ios",
        "16",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("holds one target's generations"), "{}", stderr(&o));

    // A run on one of the targets keeps the other's section: a then reads back clean on both.
    let o = run(a, "write", &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    std::fs::write(b, {
        disk[7 * 4096 + 100] ^= 0xff;
        &disk
    })
    .unwrap();
    let o = run(&format!("{a}:{b}"), "read", &["--output", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["results"]["verify"]["mismatch_count"], 0);
}

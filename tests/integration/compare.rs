//! `nvmebench compare`: one workload through several engines, one table, every run in the JSON.

use crate::common::{json, make_file, nvmebench, read_result, scratch_dir, stderr, stdout, uring_available};

#[test]
fn kernel_engines_side_by_side() {
    if !uring_available() {
        return;
    }
    let dir = scratch_dir();
    let f = make_file(dir.path(), "c.bin", 8 << 20);
    let out = dir.path().join("cmp.json");
    let o = nvmebench(&[
        "compare",
        "--engines",
        "psync,aio,uring,uring:fixedbufs=0,regfile=0",
        "--filename",
        f.to_str().unwrap(),
        "--ios",
        "2000",
        "--seed",
        "7",
        "--json",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    for row in ["IOPS", "MB/s", "lat p99.99", "CPU per I/O", "ratio to psync:"] {
        assert!(text.contains(row), "no {row} row: {text}");
    }
    let header = text.lines().find(|l| l.trim_start().starts_with("psync")).unwrap();
    assert!(header.contains("uring:fixedbufs=0,regfile=0"), "{header}");

    let j = read_result(&out);
    assert_eq!(j["command"], "compare");
    let runs = j["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    let names: Vec<&str> = runs.iter().map(|r| r["run"]["engine"]["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["psync", "aio", "uring", "uring"]);
    assert_eq!(runs[3]["run"]["engine"]["options"]["fixedbufs"], "0");
    for r in runs {
        let run = &r["run"];
        assert_eq!(run["results"]["total"]["read"]["ios"], 2000, "{}", r["engine_spec"]);
        assert_eq!(run["config"]["workload"]["seed"], 7, "the same offsets for every engine");
        assert!(run["results"]["total"]["read"]["hist"].as_str().unwrap().len() > 10, "whole histograms");
    }
    assert_eq!(runs[0]["run"]["config"]["queue_depth"], 1, "psync runs at qd 1");
    assert_eq!(runs[1]["run"]["config"]["queue_depth"], 32);
    let s = j["summary"].as_array().unwrap();
    assert_eq!(s[0]["ratio_to_first"]["iops"], 1.0);
    assert!(s.iter().all(|e| e["cpu_ns_per_io"].as_f64().unwrap() > 0.0));
    let ratio = s[2]["ratio_to_first"]["iops"].as_f64().unwrap();
    let expected = s[2]["iops"].as_f64().unwrap() / s[0]["iops"].as_f64().unwrap();
    assert!((ratio - expected).abs() < 1e-9);

    // --output json prints the same document.
    let o = nvmebench(&[
        "compare",
        "--engines",
        "uring,aio",
        "--filename",
        f.to_str().unwrap(),
        "--ios",
        "100",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json(&o)["runs"].as_array().unwrap().len(), 2);
}

/// Without --filename the kernel engines share a scratch file; the null engine, which needs none,
/// may come first.
#[test]
fn a_scratch_file_is_made_when_null_comes_first() {
    let o = nvmebench(&["compare", "--engines", "null,psync", "--ios", "200", "--output", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    assert_eq!(j["stopped_early"], serde_json::Value::Null, "{}", j["stopped_early"]);
    let ios: Vec<&serde_json::Value> =
        j["runs"].as_array().unwrap().iter().map(|r| &r["run"]["results"]["total"]["read"]["ios"]).collect();
    assert_eq!(ios, [200, 200]);
}

#[test]
fn bad_engine_lists_run_nothing() {
    let dir = scratch_dir();
    let f = make_file(dir.path(), "b.bin", 1 << 20);
    let fs = f.to_str().unwrap();
    let before = std::fs::read(&f).unwrap();
    let png = dir.path().join("c.png");
    let mut cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--engines", "uring,bogus"], "--engine 'bogus' is not an engine"),
        (vec!["--engines", "uring,,aio"], "has an empty entry"),
        (vec!["--engines", "aio,uring-cmd"], "uring-cmd sends NVMe commands"),
        (vec!["--engines", "uring", "--engine", "aio"], "compare takes its engines from --engines LIST"),
        (vec!["--engines", "uring:sqpoll,defer_taskrun=1"], "do not go with sqpoll"),
        (vec!["--engines", "uring", "--json", "/nonexistent/x.json"], "does not exist"),
        (vec!["--engines", "null", "--json", png.to_str().unwrap()], "the extension says PNG, but --json writes JSON"),
        (vec!["--engines", "uring,aio", "--rebind"], "--engines has none; drop --rebind or add spdk"),
        (vec!["--engines", "uring", "--mem-size", "64"], "--mem-size is an option of the spdk engine"),
    ];
    if cfg!(feature = "spdk") {
        cases.push((vec!["--engines", "uring,spdk", "--rebind"], "is not one (give --filename /dev/nvmeXnY)"));
        cases.push((
            vec!["--engines", "uring,spdk", "--rebind", "--trid", "trtype:PCIe traddr:0000:00:10.0"],
            "the spdk runs use the namespace of --filename; drop --trid",
        ));
    } else {
        cases.push((vec!["--engines", "uring,spdk"], "spdk: not compiled in; build with --features spdk"));
        cases.push((vec!["--engines", "uring,spdk", "--rebind"], "spdk: not compiled in"));
    }
    for (args, expected) in cases {
        let mut full = vec!["compare", "--filename", fs, "--rw", "randwrite", "--time", "1"];
        full.extend_from_slice(&args);
        let o = nvmebench(&full);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains(expected), "{args:?}: expected '{expected}' in {e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{args:?}: {e}");
        assert_eq!(stdout(&o), "", "{args:?}");
        assert!(!png.exists(), "{args:?}: wrote {}", png.display());
    }
    let o = nvmebench(&["compare", "--filename", fs]);
    assert_eq!(o.status.code(), Some(2), "--engines is required");
    assert_eq!(std::fs::read(&f).unwrap(), before, "nothing was written");
}

#[test]
fn several_targets_run_under_every_engine_with_per_target_figures() {
    let dir = scratch_dir();
    let a = make_file(dir.path(), "a.bin", 4 << 20);
    let b = make_file(dir.path(), "b.bin", 4 << 20);
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let engines = if uring_available() { "psync,aio,uring" } else { "psync,aio" };
    let o = nvmebench(&[
        "compare",
        "--engines",
        engines,
        "--filename",
        a,
        "--filename",
        b,
        "--ios",
        "1000",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    crate::common::assert_conforms(&j, "a comparison on two targets");
    for (run, summary) in j["runs"].as_array().unwrap().iter().zip(j["summary"].as_array().unwrap()) {
        let targets = run["run"]["results"]["targets"].as_array().expect("each engine ran on both targets");
        assert_eq!(targets.len(), 2, "{}", summary["engine"]);
        let per = summary["targets"].as_array().expect("per-target figures in the summary");
        assert_eq!(per.iter().map(|t| t["path"].as_str().unwrap()).collect::<Vec<_>>(), [a, b]);
        for (t, s) in targets.iter().zip(per) {
            assert_eq!(t["read"]["ios"], 500, "--ios split over the two targets");
            assert!(s["iops"].as_f64().unwrap() > 0.0 && s["lat_ns"]["mean"].as_f64().unwrap() > 0.0);
        }
        assert_eq!(per[0]["ratio_to_first"]["cpu_per_io"], serde_json::Value::Null);
    }
    assert_eq!(j["summary"][0]["targets"][1]["ratio_to_first"]["iops"], 1.0);

    let o = nvmebench(&["compare", "--engines", engines, "--filename", &format!("{a}:{b}"), "--ios", "1000"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains(&format!("compare on 2 targets: {a}, {b}")), "{text}");
    for row in [format!("target 0: {a}"), format!("target 1: {b}"), "  lat p99".into()] {
        assert!(text.lines().any(|l| l.starts_with(&row)), "no '{row}' row: {text}");
    }

    // --rebind hands over one namespace: refused with several targets, before anything runs.
    let o = nvmebench(&["compare", "--engines", "uring,spdk", "--rebind", "--filename", a, "--filename", b]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--rebind: it hands one namespace to vfio-pci and back, and this compare has 2 targets"),
        "{}",
        stderr(&o)
    );
}

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
    let names: Vec<&str> = runs.iter().map(|r| r["run"]["engine"]["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["psync", "aio", "uring", "uring"]);
    assert_eq!(runs[3]["run"]["engine"]["options"]["fixedbufs"], "0");
    for r in runs {
        let run = &r["run"];
        assert_eq!(run["results"]["total"]["read"]["ios"], 2000, "{}", r["engine_spec"]);
        assert!(run["results"]["total"]["read"]["hist"].as_str().unwrap().len() > 10, "whole histograms");
    }
    assert_eq!(runs[0]["run"]["config"]["queue_depth"], 1, "psync runs at qd 1");
    assert_eq!(runs[1]["run"]["config"]["queue_depth"], 32);
    assert_summary_is_the_runs(&j, "read");
    assert_text_ratios_are_the_jsons(&text, &j);

    // --output json prints the document --json writes.
    let out = dir.path().join("both.json");
    let args = ["compare", "--engines", "uring,aio", "--filename", f.to_str().unwrap(), "--ios", "100"];
    let o = nvmebench(&[&args[..], &["--output", "json", "--json", out.to_str().unwrap()]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let printed = json(&o);
    assert_eq!(printed, read_result(&out), "stdout and --json hold one document");
    let names: Vec<&str> =
        printed["runs"].as_array().unwrap().iter().map(|r| r["engine_spec"].as_str().unwrap()).collect();
    assert_eq!(names, ["uring", "aio"]);
}

/// The summary's figures are its runs' (engine, depth, IOPS, bandwidth, latency, errors, CPU per
/// I/O), and each ratio is the run's figure over the first run's, read from the runs themselves.
fn assert_summary_is_the_runs(j: &serde_json::Value, dir: &str) {
    let runs = j["runs"].as_array().unwrap();
    let s = j["summary"].as_array().unwrap();
    assert_eq!(s.len(), runs.len());
    let d = |i: usize| &runs[i]["run"]["results"]["total"][dir];
    let f = |v: &serde_json::Value| v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"));
    for (i, e) in s.iter().enumerate() {
        let run = &runs[i]["run"];
        assert_eq!(e["engine"], runs[i]["engine_spec"], "{i}");
        assert_eq!(e["queue_depth"], run["config"]["queue_depth"], "{i}");
        assert_eq!(e["iops"], d(i)["iops"], "{i}");
        assert_eq!(e["bw_bytes"], d(i)["bw_bytes"], "{i}");
        assert_eq!(f(&e["lat_ns"]["mean"]), f(&d(i)["lat_ns"]["mean"]), "{i}");
        assert_eq!(f(&e["lat_ns"]["max"]), f(&d(i)["lat_ns"]["max"]), "{i}");
        assert_eq!(f(&e["lat_ns"]["percentiles"]["99.0"]), f(&d(i)["lat_ns"]["percentiles"]["99.0"]), "{i}");
        assert_eq!(e["errors"], run["results"]["total"]["errors"]["total"], "{i}");
        assert_eq!(e["cpu_ns_per_io"], run["results"]["cpu"]["ns_per_io"], "{i}: the process's CPU per I/O");
        let r = &e["ratio_to_first"];
        let close = |got: &serde_json::Value, want: f64, what: &str| {
            let got = f(got);
            assert!((got - want).abs() <= want.abs() * 1e-12, "{i} {what}: {got}, the runs give {want}");
        };
        close(&r["iops"], f(&d(i)["iops"]) / f(&d(0)["iops"]), "iops");
        close(&r["lat_mean"], f(&d(i)["lat_ns"]["mean"]) / f(&d(0)["lat_ns"]["mean"]), "lat_mean");
        close(
            &r["lat_p99"],
            f(&d(i)["lat_ns"]["percentiles"]["99.0"]) / f(&d(0)["lat_ns"]["percentiles"]["99.0"]),
            "lat_p99",
        );
        close(
            &r["cpu_per_io"],
            f(&run["results"]["cpu"]["ns_per_io"]) / f(&runs[0]["run"]["results"]["cpu"]["ns_per_io"]),
            "cpu_per_io",
        );
    }
}

/// The text table's ratio rows print the JSON's ratios (two decimals, `x`), engine by engine.
fn assert_text_ratios_are_the_jsons(text: &str, j: &serde_json::Value) {
    let s = j["summary"].as_array().unwrap();
    let after = text.split_once("ratio to ").expect("a ratio block").1;
    for (row, key) in
        [("IOPS", "iops"), ("lat mean", "lat_mean"), ("lat p99", "lat_p99"), ("CPU per I/O", "cpu_per_io")]
    {
        let line = after.lines().find(|l| l.trim_start().starts_with(row) && l.starts_with("  ")).unwrap();
        let cells: Vec<&str> = line.trim_start()[row.len()..].split_whitespace().collect();
        let want: Vec<String> =
            s.iter().map(|e| format!("{:.2}x", e["ratio_to_first"][key].as_f64().unwrap())).collect();
        assert_eq!(cells, want, "{row}: {line}");
    }
}

/// Every engine of a comparison draws the same offsets from the seed: a random write of 300 blocks
/// of 2048 changes the same blocks through one engine alone as through three in a row (the three
/// write a block set no larger than one's, where three sets of different draws would be about
/// three times one), and the same blocks again under another seed's run would differ.
#[test]
fn every_engine_writes_the_same_offsets() {
    if !uring_available() {
        return;
    }
    let dir = scratch_dir();
    let orig = std::fs::read(make_file(dir.path(), "orig.bin", 8 << 20)).unwrap();
    let changed = |name: &str| -> Vec<usize> {
        let now = std::fs::read(dir.path().join(name)).unwrap();
        assert_eq!(now.len(), orig.len(), "{name}");
        (0..orig.len() / 4096).filter(|b| now[b * 4096..(b + 1) * 4096] != orig[b * 4096..(b + 1) * 4096]).collect()
    };
    let write = |cmd: &[&str], name: &str, seed: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, &orig).unwrap();
        let p = path.to_str().unwrap();
        let common = ["--filename", p, "--rw", "randwrite", "--ios", "300", "--seed", seed, "--quiet"];
        let o = nvmebench(&[cmd, &common[..]].concat());
        assert_eq!(o.status.code(), Some(0), "{cmd:?}: {}", stderr(&o));
        changed(name)
    };
    let one = write(&["run", "--engine", "psync"], "one.bin", "7");
    assert!(one.len() > 250 && one.len() <= 300, "300 draws of 2048 blocks: {} distinct", one.len());
    let three = write(&["compare", "--engines", "psync,aio,uring"], "three.bin", "7");
    assert_eq!(three, one, "compare's engines wrote other blocks than psync alone with the same seed");
    let other = write(&["run", "--engine", "psync"], "other.bin", "8");
    assert_ne!(other, one, "another seed draws other blocks (the check can fail)");
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

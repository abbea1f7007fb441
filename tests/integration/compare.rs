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
        (vec!["--engines", "uring,aio", "--rates", "10k,0"], "'0' in '10k,0' is zero, which paces nothing"),
        (vec!["--engines", "uring,aio", "--rates", "10k,fast"], "'fast' in '10k,fast' is not a number of IOPS"),
        (vec!["--engines", "uring,aio", "--rates", "10k,,max"], "is an empty entry"),
        (vec!["--engines", "uring,aio", "--rates", "1k,1000"], "has 1k twice; give each load once"),
        (
            vec!["--engines", "uring,aio", "--rates", "1k,max", "--latency", "off"],
            "off measures no latency, and --rates compares each engine's latency percentiles at each load",
        ),
        (vec!["--engines", "uring,aio", "--curve", "--latency", "off"], "drop --curve, or use --latency total"),
        (vec!["--engines", "uring,aio", "--rates", "1k", "--curve"], "cannot be used with"),
        (vec!["--engines", "uring,aio", "--rates", "1k", "--rate-iops", "500"], "cannot be used with"),
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

/// `--rates`: every engine at every load, one JSON entry per load whose figures are its runs',
/// the text's tables printing them, verdicts that name only a candidate, and the HTML report's
/// frontier drawing a line per engine through its loads.
#[test]
fn rates_run_every_engine_at_every_load_with_its_cpu() {
    if !uring_available() {
        return;
    }
    let dir = scratch_dir();
    let f = make_file(dir.path(), "r.bin", 8 << 20);
    let out = dir.path().join("rates.json");
    let o = nvmebench(&[
        "compare",
        "--engines",
        "psync,uring",
        "--filename",
        f.to_str().unwrap(),
        "--rates",
        "2k,500,max",
        "--time",
        "1",
        "--json",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let j = read_result(&out);
    crate::common::assert_conforms(&j, "compare --rates");
    let runs = j["runs"].as_array().unwrap();
    let summary = j["summary"].as_array().unwrap();
    // Engine by engine, each at the loads in the order given.
    let order: Vec<(String, String)> = summary
        .iter()
        .map(|s| (s["engine"].as_str().unwrap().to_string(), s["load"].as_str().unwrap().to_string()))
        .collect();
    let want: Vec<(String, String)> =
        ["psync", "uring"].iter().flat_map(|e| ["2k", "500", "max"].map(|l| (e.to_string(), l.to_string()))).collect();
    assert_eq!(order, want);
    assert_eq!(j["completed"], 2);
    let f64_of = |v: &serde_json::Value| v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"));
    // Paced runs are paced at their load, the closed loop is not.
    for (s, r) in summary.iter().zip(runs) {
        let rate = &r["run"]["config"]["rate_iops"];
        match s["load"].as_str().unwrap() {
            "2k" => assert_eq!(f64_of(rate), 2000.0),
            "500" => assert_eq!(f64_of(rate), 500.0),
            _ => assert!(rate.is_null(), "{rate}"),
        }
    }
    // Loads from the lowest up, max last.
    let loads = j["loads"].as_array().unwrap();
    let labels: Vec<&str> = loads.iter().map(|l| l["load"].as_str().unwrap()).collect();
    assert_eq!(labels, ["500", "2k", "max"]);
    assert_eq!(f64_of(&loads[0]["offered_iops"]), 500.0);
    assert!(loads[2]["offered_iops"].is_null());
    assert!(j["load_rule"].as_str().unwrap().contains("at least 5% below"));
    for l in loads {
        let label = l["load"].as_str().unwrap();
        let engines = l["engines"].as_array().unwrap();
        let names: Vec<&str> = engines.iter().map(|e| e["engine"].as_str().unwrap()).collect();
        assert_eq!(names, ["psync", "uring"], "{label}");
        for e in engines {
            let i = e["run"].as_u64().unwrap() as usize;
            let (s, run) = (&summary[i], &runs[i]["run"]);
            assert_eq!(s["load"], l["load"], "{label}: entry {i} points at its own run");
            assert_eq!(s["engine"], e["engine"]);
            let read = &run["results"]["total"]["read"];
            assert_eq!(e["iops"], read["iops"], "{label}");
            for p in ["50.0", "99.0", "99.9"] {
                assert_eq!(f64_of(&e["lat_ns"][p]), f64_of(&read["lat_ns"]["percentiles"][p]), "{label} {p}");
            }
            let [lo, hi] = [0, 1].map(|k| f64_of(&e["p99_interval_ns"][k]));
            let p99 = f64_of(&e["lat_ns"]["99.0"]);
            assert!(lo <= p99 && p99 <= hi, "{label}: p99 {p99} outside its interval {lo}-{hi}");
            let cost = &run["results"]["cost"];
            assert_eq!(e["cores_used"], cost["cores"]["cores_used"], "{label}: the run's counted cores");
            assert_eq!(e["cpu_ns_per_io"], cost["cores"]["ns_per_io"], "{label}");
            assert_eq!(e["thread_cores_used"], cost["threads"]["cores_used"], "{label}");
            assert_eq!(s["cores_used"], e["cores_used"], "{label}: the summary's");
            let counted = cost["cores"]["counted"].as_array().unwrap().len() as f64;
            let margin = 2.0 * f64_of(&cost["tick_ns"]) * counted / f64_of(&cost["window_ns"]);
            assert!((f64_of(&e["cores_used_margin"]) - margin).abs() < 1e-12, "{label}");
            let reached = match l["offered_iops"].as_f64() {
                Some(r) => f64_of(&e["iops"]) >= 0.95 * r,
                None => true,
            };
            assert_eq!(e["reached"], reached, "{label}");
            // Ratios are to the first engine at the same load.
            let base = &summary[engines[0]["run"].as_u64().unwrap() as usize];
            let ratio = f64_of(&s["ratio_to_first"]["iops"]);
            assert!((ratio - f64_of(&s["iops"]) / f64_of(&base["iops"])).abs() < 1e-9, "{label}");
        }
        // A verdict names a candidate, and its sentence says which.
        for (key, what) in [("lowest_p99", "p99"), ("lowest_cpu", "CPU")] {
            let verdict = l[format!("{}_verdict", &key[7..])].as_str().unwrap();
            assert!(verdict.starts_with(&format!("lowest {what}: ")), "{verdict}");
            match l[key].as_str() {
                Some(name) => {
                    let e = engines.iter().find(|e| e["engine"] == name).unwrap();
                    assert_eq!(e["reached"], true, "{label}: {name} is named lowest {what} but fell short");
                    assert!(verdict.starts_with(&format!("lowest {what}: {name} (")), "{verdict}");
                }
                None => assert!(verdict.contains("none"), "{verdict}"),
            }
            // The text prints each load's table and its verdicts as the JSON has them.
            let table = text.split(&format!("load {label}:")).nth(1).unwrap_or_else(|| panic!("no table {label}"));
            let table = table.split("\n\n").next().unwrap();
            assert!(table.lines().any(|line| line == verdict), "{label}: '{verdict}' not in {table}");
            for row in ["IOPS", "lat p99", "cores used", "CPU per I/O", "worker threads"] {
                assert!(table.lines().any(|line| line.starts_with(row)), "{label}: no {row} row in {table}");
            }
        }
    }
    assert!(text.contains("load 500: 500 IOPS offered in total, open loop"), "{text}");
    assert!(text.contains("load max: closed loop"), "{text}");

    // The HTML report draws the frontier: a line per engine, a point per load, labelled.
    let page = dir.path().join("r.html");
    let o = nvmebench(&["report", out.to_str().unwrap(), "-o", page.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = std::fs::read_to_string(&page).unwrap();
    let doc = roxmltree::Document::parse_with_options(
        &html,
        roxmltree::ParsingOptions { allow_dtd: true, ..Default::default() },
    )
    .unwrap();
    let fig = doc.descendants().find(|n| n.attribute("id") == Some("frontier-0")).expect("a frontier chart");
    let texts: Vec<&str> = fig.descendants().filter_map(|n| n.text()).map(str::trim).collect();
    for want in ["psync", "uring", "500", "2k", "max", "p99 latency"] {
        assert!(texts.contains(&want), "'{want}' in the frontier chart: {texts:?}");
    }
    let lines = fig.descendants().filter(|n| n.has_tag_name("polyline")).count();
    assert!(lines >= 2, "a line per engine ({lines} polylines)");
    let points = fig.descendants().filter(|n| n.has_tag_name("circle")).count();
    assert!(points >= 6, "a point per engine and load ({points} circles)");
    for verdict in loads.iter().map(|l| l["p99_verdict"].as_str().unwrap()) {
        let escaped = verdict.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
        assert!(html.contains(&escaped), "the page has the verdict '{verdict}'");
    }
}

/// `--curve`: every engine closed-loop first, then paced at 10..100% of the slowest's maximum.
#[test]
fn the_curve_paces_every_engine_at_shares_of_the_slowest_maximum() {
    let o_dir = scratch_dir();
    let out = o_dir.path().join("curve.json");
    let o = nvmebench(&[
        "compare",
        "--engines",
        "null:lat=20us,null:lat=50us",
        "--qd",
        "1",
        "--curve",
        "--time",
        "300ms",
        "--json",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = read_result(&out);
    let summary = j["summary"].as_array().unwrap();
    assert_eq!(summary.len(), 2 * 11);
    // The closed loop of each engine first, then each engine along the curve.
    let maxima: Vec<f64> = summary[..2].iter().map(|s| s["iops"].as_f64().unwrap()).collect();
    assert!(summary[..2].iter().all(|s| s["load"] == "max"));
    let base = j["curve_base_iops"].as_f64().unwrap();
    assert_eq!(base, maxima.iter().copied().fold(f64::INFINITY, f64::min), "the slowest engine's maximum");
    let loads = j["loads"].as_array().unwrap();
    let labels: Vec<&str> = loads.iter().map(|l| l["load"].as_str().unwrap()).collect();
    assert_eq!(labels, ["10%", "20%", "30%", "40%", "50%", "60%", "70%", "80%", "90%", "100%", "max"]);
    for (k, l) in loads[..10].iter().enumerate() {
        let offered = l["offered_iops"].as_f64().unwrap();
        let want = base * (k as f64 + 1.0) / 10.0;
        assert!((offered - want).abs() < 1e-6 * want, "{}: {offered} against {want}", l["load"]);
        for e in l["engines"].as_array().unwrap() {
            let run = &j["runs"][e["run"].as_u64().unwrap() as usize]["run"];
            assert!((run["config"]["rate_iops"].as_f64().unwrap() - offered).abs() < 1e-6 * offered);
        }
    }
    let text = stdout(&o);
    assert!(text.contains("curve: loads at 10..100% of the slowest engine's closed-loop maximum"), "{text}");
    assert!(text.contains("load 10%: "), "{text}");
}

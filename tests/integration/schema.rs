//! `schema/result.schema.json`: every kind of document nvmebench writes (a run, a merge, a
//! comparison, each kind of suite step) conforms to it and reads back through `report`; documents
//! of the wrong shape are refused by the schema and by the readers alike.

use crate::common::{assert_conforms, json, nvmebench, read_result, schema_violations, scratch_dir, stderr, stdout};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Every document the binary writes, each made with the null engine, by kind.
fn every_kind(dir: &Path) -> Vec<(&'static str, PathBuf)> {
    let p = |name: &str| dir.join(name);
    let s = |path: &Path| path.to_str().unwrap().to_string();
    let ok = |args: &[&str]| {
        let o = nvmebench(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        o
    };
    let run = |name: &str, extra: &[&str]| {
        let mut args = vec!["run", "--quiet", "--engine", "null", "--interval", "100ms", "--json"];
        let path = s(&p(name));
        args.push(&path);
        args.extend_from_slice(extra);
        ok(&args);
    };
    run("a.json", &["--time", "300ms", "--rw", "randrw", "--bssplit", "4k/50:64k/50", "--random-dist", "zipf:1.1"]);
    run("b.json", &["--ios", "5000", "--on-error", "retry:2", "--rate-iops", "20000", "--ramp", "100ms"]);
    // fio's latency target, settled (its stop reason, each worker's depth, the config's target).
    run("c.json", &["--jobs", "1", "--time", "5s", "--qd", "4", "--latency_target=1s", "--latency_window=10ms"]);
    ok(&["merge", &s(&p("a.json")), &s(&p("b.json")), "-o", &s(&p("merged.json"))]);
    ok(&["compare", "--quiet", "--engines", "null,null:lat=2us", "--ios", "2000", "--json", &s(&p("compare.json"))]);
    let suite = s(&p("suite"));
    let common = ["--quiet", "--engine", "null:lat=200us", "--size", "64m", "--time", "150ms", "--dir", &suite];
    let mut args = vec!["suite", "8k-70-30", "--precondition", "--fill", "1", "--max-rounds", "5"];
    args.extend(["--sweep", "1..2x1..2", "--curve", "--stop-latency", "1ms"]);
    args.extend(common);
    ok(&args);
    let mut kinds = vec![("run", p("a.json")), ("run", p("b.json")), ("run", p("c.json")), ("merge", p("merged.json"))];
    kinds.push(("compare", p("compare.json")));
    let mut steps: Vec<PathBuf> = std::fs::read_dir(&suite).unwrap().map(|e| e.unwrap().path()).collect();
    steps.retain(|f| f.extension().is_some_and(|e| e == "json"));
    steps.sort();
    kinds.extend(steps.into_iter().map(|f| ("suite step", f)));
    kinds
}

#[test]
fn every_document_conforms_and_reads_back() {
    let dir = scratch_dir();
    let kinds = every_kind(dir.path());
    let docs: Vec<Value> = kinds.iter().map(|(_, f)| read_result(f)).collect();
    // Each kind of suite step was written: a precondition, a run, a sweep and a curve.
    let has = |key: &str| docs.iter().any(|d| d.get(key).is_some());
    for key in ["round_runs", "streams", "sweep_points", "iorate", "merged", "summary"] {
        assert!(has(key), "no document with {key} among {kinds:?}");
    }
    let settled = &docs[2]["results"]["workers"][0]["summary"];
    assert_eq!((&settled["stop_reason"], &settled["latency_depth"]), (&json!("latency_target"), &json!(4)));
    // Stdout JSON conforms too (`json` checks it).
    let o = nvmebench(&["run", "--quiet", "--engine", "null", "--ios", "100", "--output", "json"]);
    assert_eq!(json(&o)["results"]["total"]["read"]["ios"], 100);
    // Every document reads back through the typed readers: the comparison's runs by engine.
    let mut args = vec!["report".to_string(), "--format".into(), "md".into()];
    args.extend(kinds.iter().map(|(_, f)| f.display().to_string()));
    let o = nvmebench(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let table = stdout(&o);
    for label in ["| null |", "| null:lat=2us |", "| merged |"] {
        assert!(table.contains(label), "no {label} row in:\n{table}");
    }
}

#[test]
fn the_schema_and_the_readers_refuse_a_wrong_shape() {
    let dir = scratch_dir();
    let good_path = dir.path().join("good.json");
    let o = nvmebench(&["run", "--quiet", "--engine", "null", "--ios", "1000", "--json", good_path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let good = read_result(&good_path);
    let spoil = |f: &dyn Fn(&mut Value)| {
        let mut v = good.clone();
        f(&mut v);
        v
    };
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "a count as text",
            spoil(&|v| v["results"]["total"]["read"]["ios"] = json!("many")),
            "/results/total/read/ios",
        ),
        ("a negative count", spoil(&|v| v["results"]["elapsed_ns"] = json!(-1)), "/results/elapsed_ns"),
        (
            "no histogram",
            spoil(&|v| {
                v["results"]["total"]["write"].as_object_mut().unwrap().remove("hist");
            }),
            "/results/total/write",
        ),
        ("an unknown pattern", spoil(&|v| v["config"]["workload"]["rw"] = json!("sideways")), "/config"),
        (
            "a sum with a decimal point",
            spoil(&|v| v["results"]["total"]["read"]["lat_ns"]["sum"] = json!("1.5")),
            "/sum",
        ),
        ("not a result", json!({ "a": 1 }), ""),
        ("a sweep without iops", json!({ "sweeps": [{ "threads": [1], "queue_depths": [1] }] }), ""),
    ];
    for (what, doc, at) in &cases {
        let v = schema_violations(doc);
        assert!(!v.is_empty(), "the schema accepts {what}");
        assert!(v.iter().any(|l| l.contains(at)), "{what}: expected a violation at {at}: {v:?}");
    }
    // The readers refuse the same documents, naming the field.
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, cases[0].1.to_string()).unwrap();
    let o = nvmebench(&["report", "--format", "md", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("results.total.read.ios: invalid type: string \"many\""), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    // And the untouched document conforms.
    assert_conforms(&good, "the unspoiled run");
}

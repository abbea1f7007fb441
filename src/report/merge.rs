//! `nvmebench merge`: one result from the results of several workers, processes or hosts, by adding
//! histograms exactly (decode, add, re-encode) and summing counters, never by averaging percentiles.
//!
//! # The rule for time
//!
//! Inputs are taken to have run at the same time (started together with `--start-at`), so the
//! merged elapsed time is the longest input's: IOPS and bandwidth are then the fleet's aggregate
//! over the common window. Runs made one after another are not a fleet; merging them gives their
//! summed I/Os over the longest run, which is not a rate of anything.
//!
//! Percentiles, mean, stddev, IOPS and bandwidth are recomputed from the merged histograms, counters
//! and that elapsed time, for the union of the inputs' percentile lists. Workers are concatenated
//! (each tagged with its `input`). Intervals are summed index by index when every input used the
//! same interval; their p99 becomes the largest input's p99, an upper bound, because intervals keep
//! no histograms. Inputs whose histogram settings or schema differ are refused (see `load`).

use super::json::{self, HIST_ENCODING, SCHEMA_VERSION};
use super::load::{Interval, ResultsError, RunDoc};
use crate::stats::{DirStats, HIST_HIGHEST_NS, HIST_LOWEST_NS, HIST_SIGFIGS};
use serde_json::{Map, Value, json};

/// The sentence `merged.rule` carries in every merged document.
pub const ELAPSED_RULE: &str = "inputs ran at the same time: elapsed is the longest input's; histograms and counters are summed exactly; interval p99 is the largest input's (an upper bound)";

/// Merges `runs` into one run document.
///
/// # Errors
/// [`ResultsError::NoRuns`] when `runs` is empty; a field error when an input's worker or interval
/// section does not parse.
pub fn merge(runs: &[RunDoc]) -> Result<Value, ResultsError> {
    let first = runs.first().ok_or(ResultsError::NoRuns)?;
    let elapsed_ns = runs.iter().map(|r| r.elapsed_ns).max().unwrap_or(0);
    let mut pcts: Vec<f64> = runs.iter().flat_map(RunDoc::percentiles).collect();
    pcts.sort_by(f64::total_cmp);
    pcts.dedup();

    let mut total = Map::new();
    for (i, name) in ["read", "write"].into_iter().enumerate() {
        let mut sum = DirStats::default();
        for r in runs {
            sum += &r.dirs[i].stats;
        }
        total.insert(name.into(), json::dir(&sum, elapsed_ns, &pcts));
    }
    total.insert("errors".into(), merge_errors(runs.iter().map(|r| &r.doc["results"]["total"]["errors"])));

    let mut workers = Vec::new();
    for (input, r) in runs.iter().enumerate() {
        for w in r.doc["results"]["workers"].as_array().into_iter().flatten() {
            let mut w = w.clone();
            if let Some(o) = w.as_object_mut() {
                o.insert("input".into(), json!(input));
            }
            workers.push(w);
        }
    }

    let same = |f: &dyn Fn(&RunDoc) -> &Value| -> Option<Value> {
        let v = f(first);
        runs.iter().all(|r| f(r) == v).then(|| v.clone())
    };
    let host = same(&|r| &r.doc["host"]).unwrap_or_else(|| merged_host(runs));
    let engine = same(&|r| &r.doc["engine"]).unwrap_or_else(|| {
        let mut names: Vec<&str> = runs.iter().filter_map(|r| r.doc["engine"]["name"].as_str()).collect();
        names.dedup();
        json!({ "name": names.join("+"), "options": {} })
    });
    let clock = same(&|r| &r.doc["clock"]).unwrap_or_else(|| json!({ "source": "mixed" }));
    let mut config = first.doc["config"].clone();
    if let Some(o) = config.as_object_mut() {
        o.insert("percentiles".into(), json!(pcts));
    }
    let inputs: Vec<Value> = runs
        .iter()
        .map(|r| {
            json!({
                "source": r.source,
                "label": r.label,
                "host": r.doc["host"],
                "engine": r.doc["engine"],
                "config": r.doc["config"],
                "started_at_unix_s": r.doc["started_at_unix_s"],
                "elapsed_ns": r.elapsed_ns,
                "ios": r.dirs[0].stats.ios + r.dirs[1].stats.ios,
            })
        })
        .collect();
    let started = runs.iter().filter_map(|r| r.doc["started_at_unix_s"].as_u64()).min();
    let first_of = |key: &str| runs.iter().map(|r| &r.doc["results"][key]).find(|v| !v.is_null()).cloned();
    Ok(json!({
        "schema_version": SCHEMA_VERSION,
        "tool": { "name": "nvmebench", "version": env!("CARGO_PKG_VERSION") },
        "started_at_unix_s": started,
        "host": host,
        "clock": clock,
        "engine": engine,
        "config": config,
        "histogram": {
            "lowest_ns": HIST_LOWEST_NS,
            "highest_ns": HIST_HIGHEST_NS,
            "significant_digits": HIST_SIGFIGS,
            "encoding": HIST_ENCODING,
        },
        "results": {
            "elapsed_ns": elapsed_ns,
            "interrupted_by_signal": first_of("interrupted_by_signal"),
            "failure": first_of("failure"),
            "total": Value::Object(total),
            "workers": workers,
        },
        "intervals": merge_intervals(runs),
        "merged": { "rule": ELAPSED_RULE, "inputs": inputs, "notes": overlap_note(runs).into_iter().collect::<Vec<_>>() },
    }))
}

/// Starts further apart than this share of the shortest input's measured time are reported.
pub const MAX_START_SPREAD: f64 = 0.1;

/// A sentence when the inputs did not run at the same time: their measured windows (from each
/// start for its elapsed time) did not overlap, or they started further apart than
/// [`MAX_START_SPREAD`] of the shortest. Their summed rate is then not a fleet's. Nothing when they
/// ran together (inputs of different lengths that started together are fine), or when an input
/// does not say when it started.
pub fn overlap_note(runs: &[RunDoc]) -> Option<String> {
    let windows: Vec<(u64, u64)> = runs
        .iter()
        .map(|r| {
            let start = r.doc["results"]["started_at_unix_ns"]
                .as_u64()
                .or_else(|| r.doc["started_at_unix_s"].as_u64().map(|s| s * 1_000_000_000))?;
            Some((start, start + r.elapsed_ns))
        })
        .collect::<Option<_>>()?;
    let first_start = windows.iter().map(|w| w.0).min()?;
    let last_start = windows.iter().map(|w| w.0).max()?;
    let first_end = windows.iter().map(|w| w.1).min()?;
    let shortest = windows.iter().map(|w| w.1 - w.0).min()?.max(1);
    let spread = last_start - first_start;
    if last_start >= first_end {
        Some(format!(
            "the inputs did not run at the same time (the last started {:.1} s after the first had ended), so the merged IOPS and bandwidth add up rates that never happened together; merge runs started together (--start-at)",
            (last_start - first_end) as f64 / 1e9
        ))
    } else if spread as f64 > MAX_START_SPREAD * shortest as f64 {
        Some(format!(
            "the inputs started {:.1} s apart, {:.0}% of the shortest one's measured time, so the merged IOPS and bandwidth mix rates that did not all run together; start them together (--start-at)",
            spread as f64 / 1e9,
            100.0 * spread as f64 / shortest as f64
        ))
    } else {
        None
    }
}

fn merged_host(runs: &[RunDoc]) -> Value {
    let mut names: Vec<String> =
        runs.iter().map(|r| r.doc["host"]["hostname"].as_str().unwrap_or("?").to_string()).collect();
    names.sort();
    names.dedup();
    let common = |k: &str| {
        let v = &runs[0].doc["host"][k];
        if runs.iter().all(|r| &r.doc["host"][k] == v) { v.clone() } else { Value::Null }
    };
    let cpus: u64 = runs.iter().filter_map(|r| r.doc["host"]["cpus_online"].as_u64()).sum();
    json!({
        "hostname": names.join(", "),
        "kernel": common("kernel"),
        "cpu": common("cpu"),
        "cpus_online": cpus,
    })
}

/// Sums error counts; kinds are added up by equal description.
fn merge_errors<'a>(errors: impl Iterator<Item = &'a Value>) -> Value {
    let (mut total, mut read, mut write, mut other) = (0u64, 0u64, 0u64, 0u64);
    let mut kinds: Vec<(Value, u64)> = Vec::new();
    for e in errors {
        let n = |k: &str| e[k].as_u64().unwrap_or(0);
        total += n("total");
        read += n("read");
        write += n("write");
        other += n("other");
        for k in e["kinds"].as_array().into_iter().flatten() {
            let count = k["count"].as_u64().unwrap_or(0);
            match kinds.iter_mut().find(|(v, _)| *v == k["error"]) {
                Some((_, c)) => *c += count,
                None => kinds.push((k["error"].clone(), count)),
            }
        }
    }
    kinds.sort_by_key(|k| std::cmp::Reverse(k.1));
    let kinds: Vec<Value> = kinds.into_iter().map(|(e, c)| json!({ "error": e, "count": c })).collect();
    json!({ "total": total, "read": read, "write": write, "kinds": kinds, "other": other })
}

fn merge_intervals(runs: &[RunDoc]) -> Vec<Value> {
    let interval = |r: &RunDoc| r.doc["config"]["interval"].as_f64();
    if runs.iter().any(|r| interval(r) != interval(&runs[0])) {
        return Vec::new();
    }
    let len = runs.iter().map(|r| r.intervals.len()).max().unwrap_or(0);
    let secs = interval(&runs[0]).unwrap_or(1.0);
    (0..len)
        .map(|i| {
            let points: Vec<&Interval> = runs.iter().filter_map(|r| r.intervals.get(i)).collect();
            let t_s = points[0].t_s;
            let dir = |pick: fn(&Interval) -> &super::load::DirInterval| {
                let (mut ios, mut bytes, mut sum, mut p99, mut max) = (0u64, 0u64, 0f64, 0u64, 0u64);
                for p in &points {
                    let d = pick(p);
                    ios += d.ios;
                    bytes += d.bytes;
                    sum += d.mean_ns * d.ios as f64;
                    p99 = p99.max(d.p99_ns);
                    max = max.max(d.max_ns);
                }
                json!({
                    "ios": ios,
                    "bytes": bytes,
                    "iops": ios as f64 / secs,
                    "bw_bytes": bytes as f64 / secs,
                    "mean_ns": if ios == 0 { 0.0 } else { sum / ios as f64 },
                    "p99_ns": p99,
                    "max_ns": max,
                })
            };
            json!({
                "t_s": t_s,
                "read": dir(|p| &p.read),
                "write": dir(|p| &p.write),
                "errors": points.iter().map(|p| p.errors).sum::<u64>(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::load::parse_dir;
    use proptest::prelude::*;

    /// A run document as `run --json` shapes it, around `stats` (read, write) and `elapsed_ns`.
    fn doc(read: &DirStats, write: &DirStats, elapsed_ns: u64, host: &str) -> RunDoc {
        let pcts = [50.0, 99.0, 99.99];
        let v = json!({
            "schema_version": SCHEMA_VERSION,
            "host": { "hostname": host },
            "engine": { "name": "null", "options": {} },
            "config": { "percentiles": pcts, "interval": 1.0 },
            "histogram": { "lowest_ns": HIST_LOWEST_NS, "highest_ns": HIST_HIGHEST_NS, "significant_digits": HIST_SIGFIGS, "encoding": HIST_ENCODING },
            "results": {
                "elapsed_ns": elapsed_ns,
                "total": {
                    "read": json::dir(read, elapsed_ns, &pcts),
                    "write": json::dir(write, elapsed_ns, &pcts),
                    "errors": { "total": 0, "read": 0, "write": 0, "kinds": [], "other": 0 },
                },
                "workers": [],
            },
        });
        let err = |f: &str, p: &str| ResultsError::Field { path: "t".into(), field: f.into(), problem: p.into() };
        let dirs = ["read", "write"].map(|d| super::super::load::DirResult {
            stats: parse_dir(&v["results"]["total"][d], &err).unwrap(),
            raw: v["results"]["total"][d].clone(),
        });
        RunDoc { label: host.into(), source: host.into(), elapsed_ns, dirs, intervals: vec![], doc: v }
    }

    proptest! {
        // Each case encodes and decodes a dozen whole histograms; 64 cases keep it to seconds.
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// A run split into N parts (as N processes would record it) and merged from their JSON
        /// equals the run's own JSON totals, histogram and every derived figure.
        #[test]
        fn merging_splits_of_a_run_equals_the_run(
            lats in prop::collection::vec(1u64..80_000_000, 1..1500),
            parts in 1usize..7,
            elapsed_ms in 1u64..100_000,
        ) {
            let elapsed = elapsed_ms * 1_000_000;
            let mut whole = [DirStats::default(), DirStats::default()];
            let mut split: Vec<[DirStats; 2]> = (0..parts).map(|_| Default::default()).collect();
            for (i, &l) in lats.iter().enumerate() {
                let d = usize::from(l % 4 == 0);
                let bytes = 512 << (l % 5);
                whole[d].record(l, 1, bytes);
                split[i % parts][d].record(l, 1, bytes);
            }
            let whole_doc = doc(&whole[0], &whole[1], elapsed, "h0");
            let docs: Vec<RunDoc> =
                split.iter().enumerate().map(|(i, s)| doc(&s[0], &s[1], elapsed, &format!("h{i}"))).collect();
            let merged = merge(&docs).unwrap();
            prop_assert_eq!(&merged["results"]["total"], &whole_doc.doc["results"]["total"]);
            prop_assert_eq!(&merged["results"]["elapsed_ns"], &json!(elapsed));
        }
    }

    #[test]
    fn elapsed_is_the_longest_and_rates_follow_it() {
        let mut a = DirStats::default();
        a.record(1000, 1000, 4096 * 1000);
        let mut b = DirStats::default();
        b.record(3000, 3000, 4096 * 3000);
        let none = DirStats::default();
        let m = merge(&[doc(&a, &none, 1_000_000_000, "a"), doc(&b, &none, 2_000_000_000, "b")]).unwrap();
        let r = &m["results"]["total"]["read"];
        assert_eq!(m["results"]["elapsed_ns"], 2_000_000_000u64);
        assert_eq!(r["ios"], 4000);
        assert_eq!(r["iops"], 2000.0);
        assert_eq!(r["lat_ns"]["mean"], 2500.0);
        assert_eq!(r["lat_ns"]["min"], 1000);
        assert_eq!(m["host"]["hostname"], "a, b");
        assert_eq!(m["merged"]["inputs"].as_array().unwrap().len(), 2);
        assert!(merge(&[]).is_err());
    }

    #[test]
    fn runs_that_did_not_overlap_get_a_note() {
        let d = DirStats::default();
        let at = |r: &mut RunDoc, start_ns: u64| r.doc["results"]["started_at_unix_ns"] = json!(start_ns);
        let (mut a, mut b) = (doc(&d, &d, 10_000_000_000, "a"), doc(&d, &d, 10_000_000_000, "b"));
        at(&mut a, 1_000_000_000_000);
        at(&mut b, 1_000_000_000_000 + 500_000_000);
        assert_eq!(overlap_note(&[a.clone(), b.clone()]), None, "0.5 s apart in 10 s is together");
        assert!(merge(&[a.clone(), b.clone()]).unwrap()["merged"]["notes"].as_array().unwrap().is_empty());
        at(&mut b, 1_000_000_000_000 + 5_000_000_000);
        let note = overlap_note(&[a.clone(), b.clone()]).unwrap();
        assert!(note.starts_with("the inputs started 5.0 s apart, 50% of the shortest"), "{note}");
        let short = doc(&d, &d, 2_000_000_000, "c");
        let mut short = short;
        at(&mut short, 1_000_000_000_000);
        assert_eq!(overlap_note(&[a.clone(), short]), None, "started together, ran different lengths");
        at(&mut b, 1_000_000_000_000 + 12_000_000_000);
        let note = overlap_note(&[a.clone(), b.clone()]).unwrap();
        assert!(note.starts_with("the inputs did not run at the same time (the last started 2.0 s after"), "{note}");
        assert_eq!(merge(&[a, b]).unwrap()["merged"]["notes"][0], json!(note));
    }

    #[test]
    fn errors_add_up_by_kind() {
        let e1 = json!({ "total": 3, "read": 3, "write": 0, "other": 0,
            "kinds": [{ "error": { "kind": "errno", "errno": 5 }, "count": 3 }] });
        let e2 = json!({ "total": 2, "read": 1, "write": 1, "other": 1,
            "kinds": [{ "error": { "kind": "errno", "errno": 5 }, "count": 1 }, { "error": { "kind": "short" }, "count": 1 }] });
        let m = merge_errors([&e1, &e2].into_iter());
        assert_eq!(m["total"], 5);
        assert_eq!(m["read"], 4);
        assert_eq!(m["other"], 1);
        assert_eq!(m["kinds"][0]["count"], 4);
        assert_eq!(m["kinds"][1]["error"]["kind"], "short");
    }
}

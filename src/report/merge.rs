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

use super::doc::{
    Clock, DirInterval, DirPair, EngineDoc, ErrorKindCount, ErrorsDoc, Host, Interval, Merged, MergedInput, Results,
    RunDocument, Tool,
};
use super::json::{self, SCHEMA_VERSION};
use super::load::{ResultsError, RunDoc};
use crate::stats::DirStats;

/// The sentence `merged.rule` carries in every merged document.
pub const ELAPSED_RULE: &str = "inputs ran at the same time: elapsed is the longest input's; histograms and counters are summed exactly; interval p99 is the largest input's (an upper bound)";

/// Merges `runs` into one run document.
///
/// # Errors
/// [`ResultsError::NoRuns`] when `runs` is empty.
pub fn merge(runs: &[RunDoc]) -> Result<RunDocument, ResultsError> {
    let first = runs.first().ok_or(ResultsError::NoRuns)?;
    let elapsed_ns = runs.iter().map(|r| r.elapsed_ns).max().unwrap_or(0);
    let mut pcts: Vec<f64> = runs.iter().flat_map(RunDoc::percentiles).collect();
    pcts.sort_by(f64::total_cmp);
    pcts.dedup();

    let sum = |i: usize| {
        let mut sum = DirStats::default();
        for r in runs {
            sum += &r.dirs[i];
        }
        json::dir(&sum, elapsed_ns, &pcts)
    };
    // A direction is in the merge when any input has it.
    let some = |i: usize| runs.iter().any(|r| r.doc.results.total.dir(i).is_some()).then(|| sum(i));
    let total = DirPair {
        read: sum(0),
        write: sum(1),
        trim: some(2),
        write_zeroes: some(3),
        flush: some(4),
        errors: merge_errors(runs.iter().map(|r| &r.doc.results.total.errors)),
    };

    let workers = runs
        .iter()
        .enumerate()
        .flat_map(|(input, r)| {
            r.doc.results.workers.iter().map(move |w| {
                let mut w = w.clone();
                w.input = Some(input);
                w
            })
        })
        .collect();

    let all_same = |f: &dyn Fn(&RunDocument) -> bool| runs.iter().all(|r| f(&r.doc));
    let host = if all_same(&|d| d.host == first.doc.host) { first.doc.host.clone() } else { merged_host(runs) };
    let engine = if all_same(&|d| d.engine == first.doc.engine) {
        first.doc.engine.clone()
    } else {
        let mut names: Vec<&str> = runs.iter().map(|r| r.doc.engine.name.as_str()).collect();
        names.dedup();
        EngineDoc { name: names.join("+"), options: Default::default() }
    };
    let clock = if all_same(&|d| d.clock == first.doc.clock) {
        first.doc.clock.clone()
    } else {
        Clock { source: "mixed".into() }
    };
    let config = first.doc.config.clone().map(|mut c| {
        c.percentiles = pcts.clone();
        c
    });
    let inputs = runs
        .iter()
        .map(|r| MergedInput {
            source: r.source.clone(),
            label: r.label.clone(),
            host: r.doc.host.clone(),
            engine: r.doc.engine.clone(),
            config: r.doc.config.clone(),
            started_at_unix_s: r.doc.started_at_unix_s,
            elapsed_ns: r.elapsed_ns,
            ios: r.dirs.iter().map(|d| d.ios).sum(),
        })
        .collect();
    Ok(RunDocument {
        schema_version: SCHEMA_VERSION,
        tool: Some(Tool::this()),
        started_at_unix_s: runs.iter().filter_map(|r| r.doc.started_at_unix_s).min(),
        host,
        clock,
        engine,
        config,
        histogram: json::histogram_info(),
        results: Results {
            elapsed_ns,
            started_at_unix_ns: runs.iter().filter_map(|r| r.doc.results.started_at_unix_ns).min(),
            interrupted_by_signal: runs.iter().find_map(|r| r.doc.results.interrupted_by_signal),
            failure: runs.iter().find_map(|r| r.doc.results.failure.clone()),
            events: runs.iter().flat_map(|r| r.doc.results.events.iter().cloned()).collect(),
            // Verification and CPU time belong to one process's run; a merge has neither.
            verify: None,
            // Each host's drives are its own; whether any of them alerted still holds for the whole.
            telemetry_alert: runs.iter().any(|r| r.doc.results.telemetry_alert),
            cpu: None,
            worker_cpu: None,
            timestamps: runs[0].doc.results.timestamps.clone(),
            placement: None,
            total,
            workers,
            // Targets belong to one process's run; a merge sums them into the total.
            targets: Vec::new(),
        },
        intervals: merge_intervals(runs),
        label: None,
        streams: None,
        suite_step: None,
        merged: Some(Merged { rule: ELAPSED_RULE.into(), inputs, notes: overlap_note(runs).into_iter().collect() }),
        telemetry: None,
    })
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
            let start =
                r.doc.results.started_at_unix_ns.or_else(|| r.doc.started_at_unix_s.map(|s| s * 1_000_000_000))?;
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

fn merged_host(runs: &[RunDoc]) -> Host {
    let mut names: Vec<String> =
        runs.iter().map(|r| r.doc.host.hostname.clone().unwrap_or_else(|| "?".into())).collect();
    names.sort();
    names.dedup();
    let common = |f: fn(&Host) -> &Option<String>| {
        let v = f(&runs[0].doc.host);
        if runs.iter().all(|r| f(&r.doc.host) == v) { v.clone() } else { None }
    };
    Host {
        hostname: Some(names.join(", ")),
        kernel: common(|h| &h.kernel),
        cpu: common(|h| &h.cpu),
        cpus_online: Some(runs.iter().filter_map(|r| r.doc.host.cpus_online).sum()),
    }
}

/// Sums error counts; kinds are added up by equal description.
fn merge_errors<'a>(errors: impl Iterator<Item = &'a ErrorsDoc>) -> ErrorsDoc {
    let mut out = ErrorsDoc::default();
    for e in errors {
        out.total += e.total;
        out.read += e.read;
        out.write += e.write;
        out.trim += e.trim;
        out.write_zeroes += e.write_zeroes;
        out.flush += e.flush;
        out.other += e.other;
        out.retried += e.retried;
        for k in &e.kinds {
            match out.kinds.iter_mut().find(|o| o.error == k.error) {
                Some(o) => o.count += k.count,
                None => out.kinds.push(ErrorKindCount { error: k.error, count: k.count }),
            }
        }
    }
    out.kinds.sort_by_key(|k| std::cmp::Reverse(k.count));
    out
}

fn merge_intervals(runs: &[RunDoc]) -> Vec<Interval> {
    let interval = |r: &RunDoc| r.doc.config.as_ref().map(|c| c.interval);
    if runs.iter().any(|r| interval(r) != interval(&runs[0])) {
        return Vec::new();
    }
    let len = runs.iter().map(|r| r.doc.intervals.len()).max().unwrap_or(0);
    // Documents before schema 2 carry no span: their rates were over the nominal interval.
    let secs = interval(&runs[0]).unwrap_or(1.0);
    (0..len)
        .map(|i| {
            let points: Vec<&Interval> = runs.iter().filter_map(|r| r.doc.intervals.get(i)).collect();
            let dir = |i: usize| {
                let (mut ios, mut bytes, mut sum, mut p99, mut max) = (0u64, 0u64, 0f64, 0u64, 0u64);
                let (mut iops, mut bw) = (0f64, 0f64);
                for p in &points {
                    let Some(d) = p.dir(i) else { continue };
                    // Each input's rate is over its own measured span; the fleet's is their sum.
                    let span = p.span_s.unwrap_or(secs);
                    iops += if p.span_s.is_some() { d.iops } else { d.ios as f64 / span };
                    bw += if p.span_s.is_some() { d.bw_bytes } else { d.bytes as f64 / span };
                    ios += d.ios;
                    bytes += d.bytes;
                    sum += d.mean_ns * d.ios as f64;
                    p99 = p99.max(d.p99_ns);
                    max = max.max(d.max_ns);
                }
                DirInterval {
                    ios,
                    bytes,
                    iops,
                    bw_bytes: bw,
                    mean_ns: if ios == 0 { 0.0 } else { sum / ios as f64 },
                    p99_ns: p99,
                    max_ns: max,
                }
            };
            Interval {
                t_s: points[0].t_s,
                span_s: points.iter().filter_map(|p| p.span_s).reduce(f64::max),
                partial: points.iter().any(|p| p.partial),
                workers: points.iter().map(|p| p.workers).sum(),
                read: dir(0),
                write: dir(1),
                trim: points.iter().any(|p| p.trim.is_some()).then(|| dir(2)),
                write_zeroes: points.iter().any(|p| p.write_zeroes.is_some()).then(|| dir(3)),
                flush: points.iter().any(|p| p.flush.is_some()).then(|| dir(4)),
                errors: points.iter().map(|p| p.errors).sum(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::doc::IoErrorDoc;
    use crate::report::json::sample_document;
    use crate::report::load::checked_sample;
    use proptest::prelude::*;

    /// A run document as `run --json` shapes it, around `stats` (read, write) and `elapsed_ns`.
    fn doc(read: &DirStats, write: &DirStats, elapsed_ns: u64, host: &str) -> RunDoc {
        checked_sample(sample_document(read, write, elapsed_ns, host), host)
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
            let merged = serde_json::to_value(merge(&docs).unwrap()).unwrap();
            let whole = serde_json::to_value(&whole_doc.doc).unwrap();
            prop_assert_eq!(&merged["results"]["total"], &whole["results"]["total"]);
            prop_assert_eq!(&merged["results"]["elapsed_ns"], &serde_json::json!(elapsed));
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
        let r = &m.results.total.read;
        assert_eq!(m.results.elapsed_ns, 2_000_000_000);
        assert_eq!(r.ios, 4000);
        assert_eq!(r.iops, 2000.0);
        assert_eq!(r.lat_ns.mean, 2500.0);
        assert_eq!(r.lat_ns.min, 1000);
        assert_eq!(m.host.hostname.as_deref(), Some("a, b"));
        assert_eq!(m.merged.as_ref().unwrap().inputs.len(), 2);
        assert!(merge(&[]).is_err());
    }

    #[test]
    fn errors_add_up_by_kind() {
        let eio = IoErrorDoc::Errno { errno: 5 };
        let short = IoErrorDoc::ShortTransfer { expected: 4096, done: 512 };
        let e1 = ErrorsDoc {
            total: 3,
            read: 3,
            kinds: vec![ErrorKindCount { error: eio, count: 3 }],
            retried: 2,
            ..Default::default()
        };
        let e2 = ErrorsDoc {
            total: 2,
            read: 1,
            write: 1,
            other: 1,
            kinds: vec![ErrorKindCount { error: eio, count: 1 }, ErrorKindCount { error: short, count: 1 }],
            ..Default::default()
        };
        let m = merge_errors([&e1, &e2].into_iter());
        assert_eq!((m.total, m.read, m.write, m.other, m.retried), (5, 4, 1, 1, 2));
        assert_eq!(m.kinds, [ErrorKindCount { error: eio, count: 4 }, ErrorKindCount { error: short, count: 1 }]);
    }

    #[test]
    fn runs_that_did_not_overlap_get_a_note() {
        let d = DirStats::default();
        let at = |r: &mut RunDoc, start_ns: u64| r.doc.results.started_at_unix_ns = Some(start_ns);
        let (mut a, mut b) = (doc(&d, &d, 10_000_000_000, "a"), doc(&d, &d, 10_000_000_000, "b"));
        at(&mut a, 1_000_000_000_000);
        at(&mut b, 1_000_000_000_000 + 500_000_000);
        assert_eq!(overlap_note(&[a.clone(), b.clone()]), None, "0.5 s apart in 10 s is together");
        assert!(merge(&[a.clone(), b.clone()]).unwrap().merged.unwrap().notes.is_empty());
        at(&mut b, 1_000_000_000_000 + 5_000_000_000);
        let note = overlap_note(&[a.clone(), b.clone()]).unwrap();
        assert!(note.starts_with("the inputs started 5.0 s apart, 50% of the shortest"), "{note}");
        let mut short = doc(&d, &d, 2_000_000_000, "c");
        at(&mut short, 1_000_000_000_000);
        assert_eq!(overlap_note(&[a.clone(), short]), None, "started together, ran different lengths");
        at(&mut b, 1_000_000_000_000 + 12_000_000_000);
        let note = overlap_note(&[a.clone(), b.clone()]).unwrap();
        assert!(note.starts_with("the inputs did not run at the same time (the last started 2.0 s after"), "{note}");
        assert_eq!(merge(&[a, b]).unwrap().merged.unwrap().notes, vec![note]);
    }
}

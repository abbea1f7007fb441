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
//!
//! # Targets
//!
//! Per-target blocks (`results.targets[]`) are merged too. A target's identity is its host and its
//! path (a run on one target contributes its total as that target's block, `config.target` naming
//! it), so the same device driven by two processes on one host is one target, and `/dev/nvme0n1`
//! on two hosts is two. Blocks of one identity are summed exactly like the totals (histograms
//! decoded and added, rates over the longest of their elapsed times), their interval series index
//! by index like the run's. The merged document has `results.targets[]` when the inputs hold more
//! than one target, as a run does. One identity that is a different device in two inputs (another
//! kind, size or serial), or a run that names no target beside runs with several, is refused.

use super::doc::{
    Clock, DirInterval, DirPair, EngineDoc, ErrorKindCount, ErrorsDoc, Host, Interval, Merged, MergedInput, Results,
    RunDocument, TargetDoc, TargetKind, TargetResultDoc, Tool, WorkerDoc,
};
use super::json::{self, SCHEMA_VERSION};
use super::load::{ResultsError, RunDoc, parse_dir};
use crate::stats::DirStats;

/// The sentence `merged.rule` carries in every merged document.
pub const ELAPSED_RULE: &str = "inputs ran at the same time: elapsed is the longest input's; histograms and counters are summed exactly; interval p99 is the largest input's (an upper bound)";

/// Merges `runs` into one run document.
///
/// # Errors
/// [`ResultsError::NoRuns`] when `runs` is empty.
pub fn merge(runs: &[RunDoc]) -> Result<RunDocument, ResultsError> {
    let first = runs.first().ok_or(ResultsError::NoRuns)?;
    refuse_repeats(runs)?;
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

    let mut workers: Vec<WorkerDoc> = runs
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
    let targets = merge_targets(runs, &mut workers, &pcts)?;

    let all_same = |f: &dyn Fn(&RunDocument) -> bool| runs.iter().all(|r| f(&r.doc));
    let host = if all_same(&|d| d.host == first.doc.host) { first.doc.host.clone() } else { merged_host(runs) };
    // The SPDK engine's own figures are each run's, and stay with its input.
    let engine =
        if all_same(&|d| d.engine.name == first.doc.engine.name && d.engine.options == first.doc.engine.options) {
            EngineDoc { spdk: None, ..first.doc.engine.clone() }
        } else {
            let mut names: Vec<&str> = runs.iter().map(|r| r.doc.engine.name.as_str()).collect();
            names.dedup();
            EngineDoc { name: names.join("+"), ..Default::default() }
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
            cost: None,
            timestamps: runs[0].doc.results.timestamps.clone(),
            placement: None,
            total,
            workers,
            targets,
        },
        intervals: merge_intervals(runs),
        label: None,
        streams: None,
        suite_step: None,
        merged: Some(Merged { rule: ELAPSED_RULE.into(), inputs, notes: overlap_note(runs).into_iter().collect() }),
        telemetry: None,
        fleet_member: None,
        fleet: None,
    })
}

/// What tells one run from another: its host, when it started, how long it measured and how many
/// I/Os it did. Two processes never match on all four (elapsed time is counted in nanoseconds).
type RunKey<'a> = (Option<&'a str>, Option<u64>, u64, u64);

/// The runs `r` stands for: itself, or for a merge the runs it was made of.
fn run_keys(r: &RunDoc) -> Vec<RunKey<'_>> {
    match &r.doc.merged {
        Some(m) => {
            m.inputs.iter().map(|i| (i.host.hostname.as_deref(), i.started_at_unix_s, i.elapsed_ns, i.ios)).collect()
        }
        None => vec![(
            r.doc.host.hostname.as_deref(),
            r.doc.started_at_unix_s,
            r.elapsed_ns,
            r.dirs.iter().map(|d| d.ios).sum(),
        )],
    }
}

/// Refuses a run that reaches the merge twice: one file given twice, a copy of it, or a merge
/// beside one of the runs it already holds. Its I/Os would be counted twice, and nothing in the
/// merged figures would show it.
fn refuse_repeats(runs: &[RunDoc]) -> Result<(), ResultsError> {
    let mut seen: Vec<(RunKey<'_>, usize)> = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        for key in run_keys(r) {
            if let Some(&(_, j)) = seen.iter().find(|(k, _)| *k == key) {
                let what = if j == i {
                    "it is a merge that lists one run twice".to_string()
                } else if runs[j].source == r.source {
                    "the file is given twice".to_string()
                } else {
                    format!("host, start, duration and I/O count match: {} I/Os in {} ns", key.3, key.2)
                };
                return Err(ResultsError::SameRun { first: runs[j].source.clone(), second: r.source.clone(), what });
            }
            seen.push((key, i));
        }
    }
    Ok(())
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

/// One target of one input: its block, or a one-target run's total as its block.
struct TargetPart<'a> {
    input: usize,
    /// The host it is on and its path: the identity merged targets are matched by.
    host: Option<String>,
    path: String,
    kind: TargetKind,
    /// The device's description in the input's config, when it has one (size, serial).
    described: Option<&'a TargetDoc>,
    elapsed_ns: u64,
    dirs: [DirStats; 5],
    /// Which directions the input has blocks for.
    present: [bool; 5],
    errors: &'a ErrorsDoc,
    intervals: &'a [Interval],
    /// The input's position of the target (its `target` index; 0 for a one-target run).
    local: usize,
}

/// Every input's targets: its blocks, or for a one-target run its total under `config.target`;
/// `None` for a run that names no target (the null engine without one).
fn target_parts(input: usize, r: &RunDoc) -> Result<Option<Vec<TargetPart<'_>>>, ResultsError> {
    let config = r.doc.config.as_ref();
    let described =
        |path: &str| config.and_then(|c| c.targets.iter().chain(c.target.as_ref()).find(|t| t.path == path));
    let hostname = r.doc.host.hostname.clone();
    if r.doc.results.targets.is_empty() {
        let Some(t) = config.and_then(|c| c.target.as_ref()) else { return Ok(None) };
        return Ok(Some(vec![TargetPart {
            input,
            host: hostname,
            path: t.path.clone(),
            kind: t.kind,
            described: Some(t),
            elapsed_ns: r.elapsed_ns,
            dirs: r.dirs.clone(),
            present: std::array::from_fn(|i| r.doc.results.total.dir(i).is_some()),
            errors: &r.doc.results.total.errors,
            intervals: &r.doc.intervals,
            local: 0,
        }]));
    }
    let mut parts = Vec::with_capacity(r.doc.results.targets.len());
    for (n, t) in r.doc.results.targets.iter().enumerate() {
        let mut dirs: [DirStats; 5] = Default::default();
        for (i, d) in dirs.iter_mut().enumerate() {
            if let Some(doc_dir) = t.dir(i) {
                let err = |x: &str, p: &str| ResultsError::Field {
                    path: r.source.clone(),
                    field: format!("results.targets[{n}].{}.{x}", super::doc::DIRECTIONS[i]),
                    problem: p.into(),
                };
                *d = parse_dir(doc_dir, &err)?;
            }
        }
        parts.push(TargetPart {
            input,
            // A merged input's targets say their host when its inputs' hosts differed.
            host: t.host.clone().or_else(|| hostname.clone()),
            path: t.path.clone(),
            kind: t.kind,
            described: described(&t.path),
            elapsed_ns: t.elapsed_ns,
            dirs,
            present: std::array::from_fn(|i| t.dir(i).is_some()),
            errors: &t.dirs.errors,
            intervals: &t.intervals,
            local: t.target,
        });
    }
    Ok(Some(parts))
}

/// Why two parts of one identity are not the same device, if they are not.
fn conflict(a: &TargetPart<'_>, b: &TargetPart<'_>) -> Option<String> {
    let (x, y) = (a.described, b.described);
    if a.kind != b.kind {
        return Some(format!("a {} in one and a {} in the other", a.kind.name(), b.kind.name()));
    }
    if let (Some(x), Some(y)) = (x, y) {
        if x.size_bytes != y.size_bytes {
            return Some(format!("{} bytes in one and {} bytes in the other", x.size_bytes, y.size_bytes));
        }
        if let (Some(s), Some(t)) = (&x.serial, &y.serial) {
            if s != t {
                return Some(format!("the drive with serial {s} in one and serial {t} in the other"));
            }
        }
    }
    None
}

/// Merges the inputs' per-target blocks by identity (see the module's `# Targets`), and points
/// the merged `workers` at the merged targets. Empty when the inputs hold one target or none.
fn merge_targets(
    runs: &[RunDoc],
    workers: &mut [WorkerDoc],
    pcts: &[f64],
) -> Result<Vec<TargetResultDoc>, ResultsError> {
    let mut parts: Vec<TargetPart<'_>> = Vec::new();
    let mut unnamed = None;
    for (input, r) in runs.iter().enumerate() {
        match target_parts(input, r)? {
            Some(p) => parts.extend(p),
            None => unnamed = unnamed.or(Some(input)),
        }
    }
    // Identities in order of first appearance.
    let mut ids: Vec<(Option<String>, String)> = Vec::new();
    let mut of_part = Vec::with_capacity(parts.len());
    for p in &parts {
        let id = (p.host.clone(), p.path.clone());
        let at = ids.iter().position(|i| *i == id).unwrap_or_else(|| {
            ids.push(id);
            ids.len() - 1
        });
        of_part.push(at);
    }
    if ids.len() <= 1 {
        return Ok(Vec::new());
    }
    if let Some(input) = unnamed {
        let with = parts.first().map_or(0, |p| p.input);
        return Err(ResultsError::Targets {
            detail: format!(
                "{} names no target (no config.target), while {} has results on {}",
                runs[input].source,
                runs[with].source,
                parts.iter().filter(|p| p.input == with).map(|p| p.path.as_str()).collect::<Vec<_>>().join(", ")
            ),
        });
    }
    for (i, a) in parts.iter().enumerate() {
        for (j, b) in parts.iter().enumerate().skip(i + 1) {
            if of_part[i] != of_part[j] {
                continue;
            }
            if let Some(why) = conflict(a, b) {
                let on = a.host.as_ref().map_or_else(String::new, |h| format!(" on {h}"));
                return Err(ResultsError::Targets {
                    detail: format!(
                        "{}{on} is {why} ({} and {}), so they are not one target",
                        a.path, runs[a.input].source, runs[b.input].source
                    ),
                });
            }
        }
    }
    let several_hosts = ids.iter().any(|(h, _)| *h != ids[0].0);
    let interval = |r: &RunDoc| r.doc.config.as_ref().map(|c| c.interval);
    let same_interval = runs.iter().all(|r| interval(r) == interval(&runs[0]));
    let secs = interval(&runs[0]).unwrap_or(1.0);
    // Merged workers point at the merged target they drove.
    let index_of = |input: usize, local: usize| {
        parts.iter().zip(&of_part).find(|(p, _)| p.input == input && p.local == local).map(|(_, &t)| t)
    };
    for w in workers.iter_mut() {
        let input = w.input.expect("merged workers are tagged with their input");
        w.target = index_of(input, w.target.unwrap_or(0));
    }
    let out = ids
        .iter()
        .enumerate()
        .map(|(t, (host, path))| {
            let mine: Vec<&TargetPart<'_>> =
                parts.iter().zip(&of_part).filter(|(_, at)| **at == t).map(|(p, _)| p).collect();
            let elapsed_ns = mine.iter().map(|p| p.elapsed_ns).max().unwrap_or(0);
            let sum = |i: usize| {
                let mut sum = DirStats::default();
                for p in &mine {
                    sum += &p.dirs[i];
                }
                json::dir(&sum, elapsed_ns, pcts)
            };
            let some = |i: usize| mine.iter().any(|p| p.present[i]).then(|| sum(i));
            let series: Vec<&[Interval]> = mine.iter().map(|p| p.intervals).collect();
            let intervals = if same_interval && series.iter().all(|s| !s.is_empty()) {
                merge_series(&series, secs)
            } else {
                Vec::new()
            };
            TargetResultDoc {
                target: t,
                path: path.clone(),
                kind: mine[0].kind,
                host: if several_hosts { host.clone() } else { None },
                workers: (0..workers.len()).filter(|&w| workers[w].target == Some(t)).collect(),
                inputs: {
                    let mut i: Vec<usize> = mine.iter().map(|p| p.input).collect();
                    i.dedup();
                    i
                },
                elapsed_ns,
                dirs: DirPair {
                    read: sum(0),
                    write: sum(1),
                    trim: some(2),
                    write_zeroes: some(3),
                    flush: some(4),
                    errors: merge_errors(mine.iter().map(|p| p.errors)),
                },
                intervals,
            }
        })
        .collect();
    Ok(out)
}

fn merge_intervals(runs: &[RunDoc]) -> Vec<Interval> {
    let interval = |r: &RunDoc| r.doc.config.as_ref().map(|c| c.interval);
    if runs.iter().any(|r| interval(r) != interval(&runs[0])) {
        return Vec::new();
    }
    // Documents before schema 2 carry no span: their rates were over the nominal interval.
    let secs = interval(&runs[0]).unwrap_or(1.0);
    let series: Vec<&[Interval]> = runs.iter().map(|r| &r.doc.intervals[..]).collect();
    merge_series(&series, secs)
}

/// Interval series that ran at the same time, summed index by index; `secs` is the nominal
/// interval (for documents without spans).
fn merge_series(series: &[&[Interval]], secs: f64) -> Vec<Interval> {
    let len = series.iter().map(|s| s.len()).max().unwrap_or(0);
    (0..len)
        .map(|i| {
            let points: Vec<&Interval> = series.iter().filter_map(|s| s.get(i)).collect();
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
    use crate::report::doc::NsSqSum;
    use crate::report::json::sample_document;
    use crate::report::load::checked_sample;
    use crate::stats::SUM_SQ_UNKNOWN;
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

    /// The deviation of a merge is the whole run's, exactly, and not a histogram's estimate; an input
    /// written before sums of squares were kept makes the merge's an estimate, and it says so by
    /// leaving `sum_sq` out.
    #[test]
    fn merged_stddev_is_exact_unless_an_input_lacks_the_squares() {
        let (mut a, mut b, mut whole) = (DirStats::default(), DirStats::default(), DirStats::default());
        for (i, l) in [1_000_000_001u64, 1_000_000_003, 1_000_000_002, 1_000_000_010].into_iter().enumerate() {
            [&mut a, &mut b][i % 2].record(l, 1, 4096);
            whole.record(l, 1, 4096);
        }
        let none = DirStats::default();
        let m = merge(&[doc(&a, &none, 1_000_000, "a"), doc(&b, &none, 1_000_000, "b")]).unwrap();
        let lat = &m.results.total.read.lat_ns;
        assert_eq!(lat.stddev, whole.stddev_ns());
        // Deviations -3, -1, -2, 6 from the mean 1000000004: 50 / 3.
        assert!((lat.stddev - (50.0f64 / 3.0).sqrt()).abs() < 1e-12, "{}", lat.stddev);
        assert_eq!(lat.sum_sq, Some(NsSqSum(whole.sum_sq_ns2)));
        let mut old = doc(&b, &none, 1_000_000, "b");
        old.dirs[0].sum_sq_ns2 = SUM_SQ_UNKNOWN;
        let m = merge(&[doc(&a, &none, 1_000_000, "a"), old]).unwrap();
        assert_eq!(m.results.total.read.lat_ns.sum_sq, None);
        assert!(m.results.total.read.lat_ns.stddev.is_finite());
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
    fn a_run_that_reaches_the_merge_twice_is_refused() {
        let mut a = DirStats::default();
        a.record(1000, 1000, 4096 * 1000);
        let none = DirStats::default();
        let one = doc(&a, &none, 1_000_000_123, "a");
        let same_file = merge(&[one.clone(), one.clone()]).unwrap_err().to_string();
        assert!(same_file.contains("the file is given twice"), "{same_file}");
        let mut copy = one.clone();
        copy.source = "copy.json".into();
        let copied = merge(&[one.clone(), copy]).unwrap_err().to_string();
        assert!(copied.contains("and copy.json hold the same run"), "{copied}");
        assert!(copied.contains("1000 I/Os in 1000000123 ns"), "{copied}");
        // A merge beside one of its own inputs.
        let other = doc(&a, &none, 1_000_000_456, "b");
        let mut merged = one.clone();
        merged.doc = merge(&[one.clone(), other.clone()]).unwrap();
        merged.source = "m.json".into();
        let nested = merge(&[merged.clone(), other.clone()]).unwrap_err().to_string();
        assert!(nested.starts_with("m.json and b hold the same run (host, start, duration"), "{nested}");
        // The same figures on another host, or a nanosecond longer, are another run.
        let elsewhere = doc(&a, &none, 1_000_000_123, "c");
        assert!(merge(&[one.clone(), elsewhere]).is_ok());
        let longer = doc(&a, &none, 1_000_000_124, "a");
        assert!(merge(&[one, longer]).is_ok());
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

    fn target(path: &str, kind: TargetKind, size_bytes: u64) -> TargetDoc {
        TargetDoc {
            path: path.into(),
            kind,
            size_bytes,
            logical_block_bytes: 512,
            device: None,
            nvme_sibling: None,
            model: None,
            serial: None,
        }
    }

    fn interval(t_s: f64, ios: u64) -> Interval {
        Interval {
            t_s,
            span_s: Some(1.0),
            partial: false,
            workers: Some(1),
            read: DirInterval { ios, iops: ios as f64, ..Default::default() },
            write: DirInterval::default(),
            trim: None,
            write_zeroes: None,
            flush: None,
            errors: 0,
        }
    }

    /// One second of the reads in `d` and no writes, as a document's directions.
    fn reads(d: &DirStats) -> DirPair {
        let (pcts, second) = ([50.0, 99.0, 99.99], 1_000_000_000);
        DirPair {
            read: json::dir(d, second, &pcts),
            write: json::dir(&DirStats::default(), second, &pcts),
            trim: None,
            write_zeroes: None,
            flush: None,
            errors: ErrorsDoc::default(),
        }
    }

    /// A run on `paths` (one worker each) on `host`: target `i` read `lats[i]`, one I/O per latency.
    fn multi(host: &str, paths: &[&str], lats: &[&[u64]]) -> RunDoc {
        let mut total = DirStats::default();
        let none = DirStats::default();
        let mut blocks = Vec::new();
        let mut workers = Vec::new();
        for (t, (path, lats)) in paths.iter().zip(lats).enumerate() {
            let mut d = DirStats::default();
            for &l in *lats {
                d.record(l, 1, 4096);
            }
            total += &d;
            blocks.push(TargetResultDoc {
                target: t,
                path: (*path).into(),
                kind: TargetKind::File,
                host: None,
                workers: vec![t],
                inputs: vec![],
                elapsed_ns: 1_000_000_000,
                dirs: reads(&d),
                intervals: vec![interval(1.0, lats.len() as u64)],
            });
            workers.push(WorkerDoc {
                worker: t,
                target: (paths.len() > 1).then_some(t),
                core: None,
                elapsed_ns: 1_000_000_000,
                summary: None,
                dirs: reads(&d),
                input: None,
            });
        }
        let mut d = sample_document(&total, &none, 1_000_000_000, host);
        let c = d.config.as_mut().unwrap();
        c.target = Some(target(paths[0], TargetKind::File, 1 << 30));
        if paths.len() > 1 {
            c.targets = paths.iter().map(|p| target(p, TargetKind::File, 1 << 30)).collect();
            d.results.targets = blocks;
        }
        d.results.workers = workers;
        d.intervals = vec![interval(1.0, total.ios)];
        checked_sample(d, host)
    }

    /// `r` as another process that recorded the same figures would have it: started a second later.
    fn another_process(r: &RunDoc) -> RunDoc {
        let mut r = r.clone();
        r.doc.started_at_unix_s = Some(r.doc.started_at_unix_s.unwrap_or(0) + 1);
        r
    }

    #[test]
    fn targets_merge_by_identity_with_exact_histograms() {
        let a = multi("h", &["/a", "/b"], &[&[1000, 2000], &[5000]]);
        let b = multi("h", &["/b", "/c"], &[&[7000, 9000, 11_000], &[3000]]);
        let m = merge(&[a, b]).unwrap();
        let t = &m.results.targets;
        let paths: Vec<&str> = t.iter().map(|t| t.path.as_str()).collect();
        assert_eq!(paths, ["/a", "/b", "/c"]);
        // /b's blocks are one target: every latency of both inputs, exactly.
        let mut whole = DirStats::default();
        for l in [5000, 7000, 9000, 11_000] {
            whole.record(l, 1, 4096);
        }
        let expect = json::dir(&whole, 1_000_000_000, &[50.0, 99.0, 99.99]);
        assert_eq!(serde_json::to_value(&t[1].dirs.read).unwrap(), serde_json::to_value(&expect).unwrap());
        assert_eq!((t[1].inputs.clone(), t[0].inputs.clone(), t[1].host.clone()), (vec![0, 1], vec![0], None));
        // Its series is summed too, and the merged workers point at merged targets.
        assert_eq!(t[1].intervals.iter().map(|i| i.read.ios).collect::<Vec<_>>(), [4]);
        let of: Vec<Option<usize>> = m.results.workers.iter().map(|w| w.target).collect();
        assert_eq!(of, [Some(0), Some(1), Some(1), Some(2)]);
        assert_eq!((t[1].workers.clone(), t[2].workers.clone()), (vec![1, 2], vec![3]));
        let sum: u64 = t.iter().map(|t| t.dirs.read.ios).sum();
        assert_eq!(sum, m.results.total.read.ios);
    }

    #[test]
    fn one_target_runs_are_targets_of_their_host() {
        // A fleet: each host ran its own /dev/nvme0n1, two different drives.
        let (a, b) = (multi("n1", &["/dev/nvme0n1"], &[&[1000]]), multi("n2", &["/dev/nvme0n1"], &[&[2000, 3000]]));
        let m = merge(&[a.clone(), b]).unwrap();
        let t = &m.results.targets;
        assert_eq!(t.len(), 2);
        assert_eq!((t[0].host.as_deref(), t[1].host.as_deref()), (Some("n1"), Some("n2")));
        assert_eq!((t[0].dirs.read.ios, t[1].dirs.read.ios), (1, 2));
        // Two processes on one drive of one host: one target, so the total is its block.
        let m = merge(&[a.clone(), another_process(&a)]).unwrap();
        assert!(m.results.targets.is_empty());
        assert!(m.results.workers.iter().all(|w| w.target.is_none()));
    }

    #[test]
    fn inputs_that_disagree_on_a_target_are_refused() {
        let a = multi("h", &["/a", "/b"], &[&[1000], &[2000]]);
        let mut b = another_process(&multi("h", &["/a", "/b"], &[&[1000], &[2000]]));
        b.doc.results.targets[1].kind = TargetKind::BlockDevice;
        let e = merge(&[a.clone(), b]).unwrap_err().to_string();
        assert_eq!(
            e,
            "cannot merge per-target results: /b on h is a file in one and a block_device in the other (h and h), so they are not one target; merge results of the same targets, or merge these separately"
        );
        let mut b = another_process(&multi("h", &["/a", "/b"], &[&[1000], &[2000]]));
        b.doc.config.as_mut().unwrap().targets[0].size_bytes = 1 << 20;
        let e = merge(&[a.clone(), b]).unwrap_err().to_string();
        assert!(e.contains("/a on h is 1073741824 bytes in one and 1048576 bytes in the other"), "{e}");
        // A run without a target beside runs on several.
        let mut c = another_process(&multi("h", &["/a"], &[&[1000]]));
        c.doc.config.as_mut().unwrap().target = None;
        c.source = "c.json".into();
        let e = merge(&[a, c]).unwrap_err().to_string();
        assert!(e.contains("c.json names no target (no config.target), while h has results on /a, /b"), "{e}");
    }
}

//! Reading result documents back: one run (what `nvmebench run --json` writes), a collection of runs
//! and suite results (`runs`, `iorate`, `sweeps`, `steady_state`), or a directory of such files.
//!
//! Documents are deserialised into the types of `report::doc` (published as
//! `schema/result.schema.json`). This module checks every document up front (schema version first,
//! then the shape, then what a type cannot say: histogram bounds and encoding, that each histogram
//! holds as many I/Os as its counter says, matrix sizes) and turns problems into one sentence that
//! names the file, the field and the fix. It does not render or merge; `html`, `table` and `merge`
//! do, from what it returns.
//!
//! # The collection shape
//!
//! A document with `results` is a run, one with `command: "compare"` a comparison (its runs are
//! labelled by engine). Any other JSON object with at least one of these keys is a collection
//! (`doc::Collection`); every key is optional:
//!
//! ```json
//! {
//!   "schema_version": 1,
//!   "runs": [ { "label": "uring", "...": "a whole run document, as `run --json` writes it" } ],
//!   "iorate": [ {
//!     "label": "randread 4k",
//!     "points": [ { "target_iops": 10000, "iops": 9998.5, "mean_ns": 81000, "p99_ns": 120000 } ],
//!     "stop": { "iops": 95000, "rule": "p99 above 2ms" }
//!   } ],
//!   "sweeps": [ {
//!     "label": "randread 4k",
//!     "threads": [1, 2, 4],
//!     "queue_depths": [1, 8, 32],
//!     "iops": [[...], [...], [...]],
//!     "p99_ns": [[...], [...], [...]]
//!   } ],
//!   "steady_state": [ { "label": "randwrite 4k", "metric": "IOPS", "rounds": [1234.5], "window": 5 } ]
//! }
//! ```
//!
//! `iorate` points are one per offered rate, in order (`target_iops` optional); `stop` marks where
//! the curve stopped and by which rule. A sweep's `iops` (and optional `p99_ns`) has one row per
//! entry of `threads` and one column per entry of `queue_depths`. Steady-state `rounds` hold one
//! value per round, first round first; `window` is how many of the last rounds form the measurement
//! window (default 5, as in SNIA's PTS). A run document may carry a `label`; without one it is
//! named after its file.

use super::doc::{Collection, CompareDocument, CompareLoad, DirDoc, HistogramInfo, RunDocument};
pub use super::doc::{DirInterval, Interval, IorateCurve, IoratePoint, IorateStop, SteadyState, Sweep};
use super::json::{HIST_ENCODING, SCHEMA_VERSION, decode_histogram};
use crate::stats::{DirStats, HIST_HIGHEST_NS, HIST_LOWEST_NS, HIST_SIGFIGS, SUM_SQ_UNKNOWN, exact_stddev};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::path::{Path, PathBuf};

pub use super::doc::DEFAULT_STEADY_WINDOW;

/// A problem with a result file; every variant is a bad input (exit status 2).
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    #[error("cannot read {path}: {source}; check the path")]
    Read { path: String, source: std::io::Error },
    #[error("{path} is not JSON ({detail}); pass a file written by `nvmebench run --json`")]
    NotJson { path: String, detail: String },
    #[error(
        "{path} is not an nvmebench result (it has none of results, runs, iorate, sweeps, steady_state); pass a file written by `nvmebench run --json`, or a directory of them"
    )]
    NotResult { path: String },
    #[error("{path} holds no .json files; pass result files, or a directory that holds some")]
    EmptyDir { path: String },
    #[error("{path}: schema_version {found} is newer than this nvmebench reads ({SCHEMA_VERSION}); upgrade nvmebench")]
    NewerSchema { path: String, found: u64 },
    #[error(
        "{path}: histograms are {found}, not nvmebench's {expected}; only results recorded with the same histogram settings can be read and merged"
    )]
    Histogram { path: String, found: String, expected: String },
    #[error("{path}: {field}: {problem}; the file was not written by nvmebench or was edited")]
    Field { path: String, field: String, problem: String },
    #[error(
        "no run results among the inputs (only suite curves); pass at least one file written by `nvmebench run --json`"
    )]
    NoRuns,
    /// `merge`: one run given twice (the same file, a copy, or a merge that already holds it).
    #[error(
        "{first} and {second} hold the same run ({what}); merging it twice counts its I/Os twice, so give each run once"
    )]
    SameRun { first: String, second: String, what: String },
    /// `merge`: one target name stands for two different devices, or a run names no target while
    /// others have per-target results.
    #[error("cannot merge per-target results: {detail}; merge results of the same targets, or merge these separately")]
    Targets { detail: String },
}

/// One run, checked and with its total histograms decoded.
#[derive(Clone, Debug)]
pub struct RunDoc {
    /// What the report calls it: the document's `label`, or its file name.
    pub label: String,
    /// The file it came from (and `[i]` inside a collection).
    pub source: String,
    pub elapsed_ns: u64,
    /// Every direction's total (indexed as `doc::DIRECTIONS`), rebuilt exactly from the document;
    /// empty where the document has none.
    pub dirs: [DirStats; 5],
    /// The whole document as read.
    pub doc: RunDocument,
}

impl RunDoc {
    pub fn errors_total(&self) -> u64 {
        self.doc.results.total.errors.total
    }

    /// The percentiles the run was asked to report (the default set when the document has none).
    pub fn percentiles(&self) -> Vec<f64> {
        self.doc.config.as_ref().map_or_else(|| vec![50.0, 90.0, 99.0, 99.9, 99.99, 99.999], |c| c.percentiles.clone())
    }
}

/// Everything read from the inputs, in the order given (files in a directory by name).
#[derive(Clone, Debug, Default)]
pub struct ResultSet {
    pub runs: Vec<RunDoc>,
    pub iorate: Vec<IorateCurve>,
    /// Comparisons at several loads (`compare --rates`/`--curve`), each named after its file.
    pub frontiers: Vec<(String, Vec<CompareLoad>)>,
    pub sweeps: Vec<Sweep>,
    pub steady_state: Vec<SteadyState>,
    /// Every file read.
    pub files: Vec<PathBuf>,
}

/// Reads every input (a file, or a directory searched for `*.json`), checking each document.
///
/// # Errors
/// The first unreadable, malformed or incompatible input, as one sentence.
pub fn load(inputs: &[PathBuf]) -> Result<ResultSet, ResultsError> {
    let mut set = ResultSet::default();
    for input in inputs {
        if input.is_dir() {
            let mut files = Vec::new();
            json_files(input, &mut files)?;
            if files.is_empty() {
                return Err(ResultsError::EmptyDir { path: input.display().to_string() });
            }
            for f in files {
                load_file(&f, &mut set)?;
            }
        } else {
            load_file(input, &mut set)?;
        }
    }
    dedup_labels(&mut set.runs);
    Ok(set)
}

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), ResultsError> {
    let read_err = |source| ResultsError::Read { path: dir.display().to_string(), source };
    let mut entries: Vec<PathBuf> =
        std::fs::read_dir(dir).map_err(read_err)?.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            json_files(&p, out)?;
        } else if p.extension().is_some_and(|e| e == "json") {
            out.push(p);
        }
    }
    Ok(())
}

/// A comparison's loads hold only numbers a chart can draw: finite, not negative.
fn check_loads(loads: &[CompareLoad], name: &str) -> Result<(), ResultsError> {
    for (i, l) in loads.iter().enumerate() {
        for (j, e) in l.engines.iter().enumerate() {
            let numbers = [Some(e.iops), e.cores_used, e.cpu_ns_per_io, e.thread_cores_used, l.offered_iops]
                .into_iter()
                .chain(e.lat_ns.values().copied());
            if numbers.flatten().any(|x| !x.is_finite() || x < 0.0) {
                return Err(ResultsError::Field {
                    path: name.to_string(),
                    field: format!("loads[{i}].engines[{j}]"),
                    problem: "holds a negative or non-finite number".into(),
                });
            }
        }
    }
    Ok(())
}

fn load_file(path: &Path, set: &mut ResultSet) -> Result<(), ResultsError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ResultsError::Read { path: name.clone(), source })?;
    let doc: Value =
        serde_json::from_str(&text).map_err(|e| ResultsError::NotJson { path: name.clone(), detail: e.to_string() })?;
    let stem = path.file_stem().map_or_else(|| name.clone(), |s| s.to_string_lossy().into_owned());
    set.files.push(path.to_path_buf());
    if doc.get("results").is_some() {
        set.runs.push(parse_run(doc, &name, "", stem)?);
        return Ok(());
    }
    if doc.get("command").and_then(Value::as_str) == Some("compare") {
        check_schema(&doc, &name)?;
        for (i, r) in doc["runs"].as_array().into_iter().flatten().enumerate() {
            check_schema(&r["run"], &format!("{name} runs[{i}].run"))?;
        }
        let compare: CompareDocument = typed(doc, &name, "")?;
        for (i, r) in compare.runs.into_iter().enumerate() {
            let source = format!("{name} runs[{i}]");
            // At several loads an engine runs once per load: `uring at 10k`.
            let fallback = match compare.summary.get(i).and_then(|s| s.load.as_ref()) {
                Some(load) => format!("{} at {load}", r.engine_spec),
                None => r.engine_spec.clone(),
            };
            set.runs.push(checked_run(r.run, &source, &format!("runs[{i}].run."), fallback)?);
        }
        if !compare.loads.is_empty() {
            check_loads(&compare.loads, &name)?;
            set.frontiers.push((stem, compare.loads));
        }
        return Ok(());
    }
    let keys = ["runs", "iorate", "sweeps", "steady_state"];
    if !doc.is_object() || keys.iter().all(|k| doc.get(k).is_none()) {
        return Err(ResultsError::NotResult { path: name });
    }
    check_schema(&doc, &name)?;
    for (i, r) in doc["runs"].as_array().into_iter().flatten().enumerate() {
        check_schema(r, &format!("{name} runs[{i}]"))?;
    }
    let collection: Collection = typed(doc, &name, "")?;
    let field = |f: &str, problem: String| ResultsError::Field { path: name.clone(), field: f.into(), problem };
    for (i, r) in collection.runs.into_iter().flatten().enumerate() {
        let run = checked_run(r, &format!("{name} runs[{i}]"), &format!("runs[{i}]."), format!("{stem}[{i}]"))?;
        set.runs.push(run);
    }
    if let Some(curves) = collection.iorate {
        for (i, c) in curves.iter().enumerate() {
            let f = format!("iorate[{i}]");
            if c.points.is_empty() {
                return Err(field(&f, "has no points".into()));
            }
            let bad = c.points.iter().any(|p| {
                [p.iops, p.mean_ns, p.p99_ns].iter().any(|x| !x.is_finite() || *x < 0.0)
                    || p.target_iops.is_some_and(|t| !t.is_finite() || t < 0.0)
            });
            if bad {
                return Err(field(&f, "a point holds a negative or non-finite number".into()));
            }
        }
        set.iorate.extend(curves.into_iter().enumerate().map(|(i, mut c)| {
            if c.label.is_empty() {
                c.label = format!("{stem} iorate {}", i + 1);
            }
            c
        }));
    }
    if let Some(sweeps) = collection.sweeps {
        for (i, s) in sweeps.iter().enumerate() {
            let f = format!("sweeps[{i}]");
            if s.threads.is_empty() || s.queue_depths.is_empty() {
                return Err(field(&f, "threads and queue_depths must not be empty".into()));
            }
            for (name, m) in [("iops", Some(&s.iops)), ("p99_ns", s.p99_ns.as_ref())] {
                let Some(m) = m else { continue };
                if m.len() != s.threads.len() || m.iter().any(|r| r.len() != s.queue_depths.len()) {
                    return Err(field(
                        &format!("{f}.{name}"),
                        format!(
                            "must have {} rows (threads) of {} values (queue_depths)",
                            s.threads.len(),
                            s.queue_depths.len()
                        ),
                    ));
                }
                if m.iter().flatten().any(|x| !x.is_finite() || *x < 0.0) {
                    return Err(field(&format!("{f}.{name}"), "holds a negative or non-finite number".into()));
                }
            }
        }
        set.sweeps.extend(sweeps.into_iter().enumerate().map(|(i, mut s)| {
            if s.label.is_empty() {
                s.label = format!("{stem} sweep {}", i + 1);
            }
            s
        }));
    }
    if let Some(ss) = collection.steady_state {
        for (i, s) in ss.iter().enumerate() {
            let f = format!("steady_state[{i}]");
            if s.rounds.is_empty() {
                return Err(field(&f, "has no rounds".into()));
            }
            if s.window < 2 {
                return Err(field(&f, format!("window {} is too small; a window needs at least 2 rounds", s.window)));
            }
            if s.rounds.iter().any(|x| !x.is_finite()) {
                return Err(field(&f, "a round is not a finite number".into()));
            }
        }
        set.steady_state.extend(ss.into_iter().enumerate().map(|(i, mut s)| {
            if s.label.is_empty() {
                s.label = format!("{stem} steady state {}", i + 1);
            }
            s
        }));
    }
    Ok(())
}

/// Deserialises `v` as a `T`; a mismatch becomes a field error naming where (`prefix` + path).
fn typed<T: DeserializeOwned>(v: Value, source: &str, prefix: &str) -> Result<T, ResultsError> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let at = e.path().to_string();
        let at = if at == "." { String::new() } else { at };
        let inner = e.into_inner().to_string();
        let (field, problem) = match inner.strip_prefix("missing field `").and_then(|r| r.split_once('`')) {
            Some((name, _)) if at.is_empty() => (name.to_string(), "is missing".to_string()),
            Some((name, _)) => (format!("{at}.{name}"), "is missing".to_string()),
            None => (at, inner),
        };
        let field = format!("{prefix}{field}");
        let field = if field.is_empty() { "the document".into() } else { field.trim_end_matches('.').to_string() };
        ResultsError::Field { path: source.into(), field, problem }
    })
}

fn check_schema(doc: &Value, path: &str) -> Result<(), ResultsError> {
    match doc.get("schema_version") {
        None => Ok(()),
        Some(v) => match v.as_u64() {
            Some(found) if found > u64::from(SCHEMA_VERSION) => {
                Err(ResultsError::NewerSchema { path: path.into(), found })
            }
            Some(_) => Ok(()),
            None => Err(ResultsError::Field {
                path: path.into(),
                field: "schema_version".into(),
                problem: format!("{v} is not a whole number"),
            }),
        },
    }
}

/// The histogram settings of this nvmebench, as `run --json` writes them.
pub fn expected_histogram() -> String {
    describe_histogram(HIST_LOWEST_NS, HIST_HIGHEST_NS, u64::from(HIST_SIGFIGS), HIST_ENCODING)
}

fn describe_histogram(lo: u64, hi: u64, digits: u64, enc: &str) -> String {
    format!("{lo}..{hi} ns at {digits} significant digits, {enc}")
}

/// Reads one run document: its schema version first (a newer one may have another shape), then
/// the whole shape, then what a type cannot say.
fn parse_run(doc: Value, source: &str, prefix: &str, fallback_label: String) -> Result<RunDoc, ResultsError> {
    if doc.get("schema_version").is_none() {
        let field = format!("{prefix}schema_version");
        return Err(ResultsError::Field { path: source.into(), field, problem: "is missing".into() });
    }
    check_schema(&doc, source)?;
    checked_run(typed(doc, source, prefix)?, source, prefix, fallback_label)
}

/// Checks what the type does not: the histogram settings, and that every total histogram decodes
/// and holds as many I/Os as its counter says.
fn checked_run(doc: RunDocument, source: &str, prefix: &str, fallback_label: String) -> Result<RunDoc, ResultsError> {
    let HistogramInfo { lowest_ns, highest_ns, significant_digits, encoding } = &doc.histogram;
    let found = describe_histogram(*lowest_ns, *highest_ns, *significant_digits, encoding);
    if found != expected_histogram() {
        return Err(ResultsError::Histogram { path: source.into(), found, expected: expected_histogram() });
    }
    let dir = |name: &str, d: &DirDoc| {
        let err = |x: &str, p: &str| ResultsError::Field {
            path: source.into(),
            field: format!("{prefix}results.total.{name}.{x}"),
            problem: p.into(),
        };
        parse_dir(d, &err)
    };
    let mut dirs: [DirStats; 5] = Default::default();
    for (i, d) in dirs.iter_mut().enumerate() {
        if let Some(doc_dir) = doc.results.total.dir(i) {
            *d = dir(super::doc::DIRECTIONS[i], doc_dir)?;
        }
    }
    let label = doc.label.clone().unwrap_or(fallback_label);
    Ok(RunDoc { label, source: source.into(), elapsed_ns: doc.results.elapsed_ns, dirs, doc })
}

/// Rebuilds one direction's exact statistics from its document (`ios`, `io_bytes`, `lat_ns`, `hist`).
pub(crate) fn parse_dir(d: &DirDoc, err: &dyn Fn(&str, &str) -> ResultsError) -> Result<DirStats, ResultsError> {
    let hist = decode_histogram(&d.hist).map_err(|e| err("hist", &e))?;
    if hist.len() != d.ios {
        return Err(err("hist", &format!("holds {} I/Os but ios says {}", hist.len(), d.ios)));
    }
    let lat = &d.lat_ns;
    let sum_sq_ns2 = lat.sum_sq.map_or(SUM_SQ_UNKNOWN, |s| s.0);
    if lat.sum_sq.is_some() && exact_stddev(d.ios, lat.sum.0, sum_sq_ns2).is_none() {
        return Err(err(
            "lat_ns.sum_sq",
            &format!("{sum_sq_ns2} is less than {} I/Os summing to {} can have", d.ios, lat.sum.0),
        ));
    }
    Ok(DirStats {
        ios: d.ios,
        bytes: d.io_bytes,
        min_ns: if d.ios == 0 { u64::MAX } else { lat.min },
        max_ns: lat.max,
        sum_ns: lat.sum.0,
        sum_sq_ns2,
        clamped: lat.clamped,
        hist,
    })
}

/// A document made in memory (a fleet's merge) checked and decoded as if read from `source`.
///
/// # Errors
/// As for a file: histograms of other settings, counts that disagree with them.
pub fn run_doc(doc: RunDocument, source: &str, label: String) -> Result<RunDoc, ResultsError> {
    checked_run(doc, source, "", label)
}

/// A document made in a test, checked as `load` checks it and labelled `label`.
#[cfg(test)]
pub(crate) fn checked_sample(doc: RunDocument, label: &str) -> RunDoc {
    checked_run(doc, label, "", label.into()).expect("a sample document is well-formed")
}

fn dedup_labels(runs: &mut [RunDoc]) {
    for i in 1..runs.len() {
        let base = runs[i].label.clone();
        let mut n = 1;
        while runs[..i].iter().any(|r| r.label == runs[i].label) {
            n += 1;
            runs[i].label = format!("{base} ({n})");
        }
    }
}

/// Steady-state verdict over the last `window` rounds (SNIA PTS): the range of values within 20% of
/// their average, and the best-fit line's rise across the window within 10% of it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SteadyVerdict {
    /// Index of the window's first round (0-based).
    pub first: usize,
    pub average: f64,
    /// Best-fit line over the window: value = intercept + slope * round index (0-based).
    pub slope: f64,
    pub intercept: f64,
    /// (max - min) / average over the window.
    pub range_fraction: f64,
    /// |slope| * (window - 1) / average.
    pub slope_fraction: f64,
    pub steady: bool,
}

/// The largest range of values a steady window may have, as a fraction of its average.
pub const STEADY_RANGE: f64 = 0.20;
/// The largest rise of the best-fit line across a steady window, as a fraction of its average.
pub const STEADY_SLOPE: f64 = 0.10;

impl SteadyState {
    /// The verdict, or `None` while there are fewer rounds than the window.
    pub fn verdict(&self) -> Option<SteadyVerdict> {
        let w = self.window;
        if self.rounds.len() < w || w < 2 {
            return None;
        }
        let first = self.rounds.len() - w;
        let ys = &self.rounds[first..];
        let n = w as f64;
        let xs: Vec<f64> = (first..self.rounds.len()).map(|i| i as f64).collect();
        let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
        let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
        let sxy: f64 = xs.iter().zip(ys).map(|(x, y)| (x - mx) * (y - my)).sum();
        let slope = sxy / sxx;
        let (lo, hi) = ys.iter().fold((f64::MAX, f64::MIN), |(a, b), &y| (a.min(y), b.max(y)));
        let (range_fraction, slope_fraction) = if my.abs() > 0.0 {
            ((hi - lo) / my.abs(), (slope * (n - 1.0)).abs() / my.abs())
        } else {
            (f64::INFINITY, f64::INFINITY)
        };
        Some(SteadyVerdict {
            first,
            average: my,
            slope,
            intercept: my - slope * mx,
            range_fraction,
            slope_fraction,
            steady: range_fraction <= STEADY_RANGE && slope_fraction <= STEADY_SLOPE,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ss(rounds: &[f64]) -> SteadyState {
        SteadyState { label: "x".into(), metric: "IOPS".into(), rounds: rounds.to_vec(), window: 5 }
    }

    #[test]
    fn steady_state_verdicts() {
        let flat = ss(&[50.0, 80.0, 100.0, 101.0, 99.0, 100.0, 100.0]).verdict().unwrap();
        assert!(flat.steady);
        assert_eq!(flat.first, 2);
        assert!((flat.average - 100.0).abs() < 1e-9);
        assert!((flat.range_fraction - 0.02).abs() < 1e-9);
        // Within a 20% range, but rising 5 per round: 20 over the window, 20% of the average.
        let rising = ss(&[90.0, 95.0, 100.0, 105.0, 110.0]).verdict().unwrap();
        assert!(!rising.steady);
        assert!((rising.slope - 5.0).abs() < 1e-9);
        assert!((rising.slope_fraction - 0.2).abs() < 1e-9);
        // Flat trend but a 30% spread.
        let noisy = ss(&[100.0, 85.0, 115.0, 100.0, 100.0]).verdict().unwrap();
        assert!(!noisy.steady && noisy.slope_fraction < STEADY_SLOPE);
        assert_eq!(ss(&[1.0, 2.0]).verdict(), None);
    }

    /// A sum of squares no set of latencies with that sum can have is refused as an edited field.
    #[test]
    fn impossible_sums_of_squares_are_refused() {
        let mut d = DirStats::default();
        d.record(1_000, 2, 8192);
        let none = DirStats::default();
        let mut doc = crate::report::json::sample_document(&d, &none, 1, "h");
        assert_eq!(doc.results.total.read.lat_ns.sum_sq, Some(crate::report::doc::NsSqSum(2_000_000)));
        doc.results.total.read.lat_ns.sum_sq = Some(crate::report::doc::NsSqSum(1_999_999));
        let e = checked_run(doc, "x.json", "", "x".into()).unwrap_err().to_string();
        assert_eq!(
            e,
            "x.json: results.total.read.lat_ns.sum_sq: 1999999 is less than 2 I/Os summing to 2000 can have; the file was not written by nvmebench or was edited"
        );
    }

    #[test]
    fn labels_are_made_unique() {
        let mut set = ResultSet::default();
        let none = DirStats::default();
        for _ in 0..3 {
            set.runs.push(checked_sample(crate::report::json::sample_document(&none, &none, 1, "h"), "a"));
        }
        dedup_labels(&mut set.runs);
        let labels: Vec<&str> = set.runs.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["a", "a (2)", "a (3)"]);
    }
}

//! Reading result documents back: one run (what `nvmebench run --json` writes), a collection of runs
//! and suite results (`runs`, `iorate`, `sweeps`, `steady_state`), or a directory of such files.
//!
//! This module checks every document up front (schema version, histogram bounds and encoding, that
//! each histogram holds as many I/Os as its counter says) and turns problems into one sentence that
//! names the file, the field and the fix. It does not render or merge; `html`, `table` and `merge`
//! do, from what it returns.
//!
//! # The collection shape
//!
//! Any JSON object with at least one of these keys is a collection; every key is optional:
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

use super::json::{HIST_ENCODING, SCHEMA_VERSION, decode_histogram};
use crate::stats::{DirStats, HIST_HIGHEST_NS, HIST_LOWEST_NS, HIST_SIGFIGS};
use serde::Deserialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Default number of rounds in a steady-state measurement window (SNIA PTS).
pub const DEFAULT_STEADY_WINDOW: usize = 5;

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
}

/// One direction of a run's total, as read back.
#[derive(Clone, Debug)]
pub struct DirResult {
    pub stats: DirStats,
    /// The direction's JSON as written, for fields this module does not interpret.
    pub raw: Value,
}

/// One point of a run's interval series: what the report plots over time.
#[derive(Clone, Copy, Debug, Default, Deserialize)]
pub struct DirInterval {
    #[serde(default)]
    pub ios: u64,
    #[serde(default)]
    pub bytes: u64,
    #[serde(default)]
    pub iops: f64,
    #[serde(default)]
    pub bw_bytes: f64,
    #[serde(default)]
    pub mean_ns: f64,
    #[serde(default)]
    pub p99_ns: u64,
    #[serde(default)]
    pub max_ns: u64,
}

#[derive(Clone, Copy, Debug, Deserialize)]
pub struct Interval {
    pub t_s: f64,
    #[serde(default)]
    pub read: DirInterval,
    #[serde(default)]
    pub write: DirInterval,
    #[serde(default)]
    pub errors: u64,
}

/// One run, checked and with its total histograms decoded.
#[derive(Clone, Debug)]
pub struct RunDoc {
    /// What the report calls it: the document's `label`, or its file name.
    pub label: String,
    /// The file it came from (and `[i]` inside a collection).
    pub source: String,
    pub elapsed_ns: u64,
    /// Read and write totals.
    pub dirs: [DirResult; 2],
    pub intervals: Vec<Interval>,
    /// The whole document as read.
    pub doc: Value,
}

impl RunDoc {
    pub fn errors_total(&self) -> u64 {
        self.doc["results"]["total"]["errors"]["total"].as_u64().unwrap_or(0)
    }

    /// The percentiles the run was asked to report (the default set when the document has none).
    pub fn percentiles(&self) -> Vec<f64> {
        self.doc["config"]["percentiles"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_else(|| vec![50.0, 90.0, 99.0, 99.9, 99.99, 99.999])
    }
}

/// One point of an iorate curve: offered rate, achieved rate, latency there.
#[derive(Clone, Copy, Debug, Deserialize)]
pub struct IoratePoint {
    pub target_iops: Option<f64>,
    pub iops: f64,
    pub mean_ns: f64,
    pub p99_ns: f64,
}

#[derive(Clone, Debug, Deserialize)]
pub struct IorateStop {
    pub iops: f64,
    #[serde(default)]
    pub rule: String,
}

/// IOPS against latency as the offered rate rises.
#[derive(Clone, Debug, Deserialize)]
pub struct IorateCurve {
    #[serde(default)]
    pub label: String,
    pub points: Vec<IoratePoint>,
    pub stop: Option<IorateStop>,
}

/// A threads × queue-depth sweep.
#[derive(Clone, Debug, Deserialize)]
pub struct Sweep {
    #[serde(default)]
    pub label: String,
    pub threads: Vec<u64>,
    pub queue_depths: Vec<u64>,
    /// `iops[t][q]`: one row per entry of `threads`.
    pub iops: Vec<Vec<f64>>,
    pub p99_ns: Option<Vec<Vec<f64>>>,
}

/// Rounds of a steady-state test.
#[derive(Clone, Debug, Deserialize)]
pub struct SteadyState {
    #[serde(default)]
    pub label: String,
    #[serde(default = "default_metric")]
    pub metric: String,
    pub rounds: Vec<f64>,
    #[serde(default = "default_window")]
    pub window: usize,
}

fn default_metric() -> String {
    "IOPS".into()
}

fn default_window() -> usize {
    DEFAULT_STEADY_WINDOW
}

/// Everything read from the inputs, in the order given (files in a directory by name).
#[derive(Clone, Debug, Default)]
pub struct ResultSet {
    pub runs: Vec<RunDoc>,
    pub iorate: Vec<IorateCurve>,
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

fn load_file(path: &Path, set: &mut ResultSet) -> Result<(), ResultsError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ResultsError::Read { path: name.clone(), source })?;
    let doc: Value =
        serde_json::from_str(&text).map_err(|e| ResultsError::NotJson { path: name.clone(), detail: e.to_string() })?;
    let stem = path.file_stem().map_or_else(|| name.clone(), |s| s.to_string_lossy().into_owned());
    set.files.push(path.to_path_buf());
    if doc.get("results").is_some() {
        set.runs.push(parse_run(doc, &name, stem)?);
        return Ok(());
    }
    let keys = ["runs", "iorate", "sweeps", "steady_state"];
    if !doc.is_object() || keys.iter().all(|k| doc.get(k).is_none()) {
        return Err(ResultsError::NotResult { path: name });
    }
    check_schema(&doc, &name)?;
    let field = |f: &str, problem: String| ResultsError::Field { path: name.clone(), field: f.into(), problem };
    if let Some(runs) = doc.get("runs") {
        let runs = runs.as_array().ok_or_else(|| field("runs", "is not a list".into()))?;
        for (i, r) in runs.iter().enumerate() {
            let source = format!("{name} runs[{i}]");
            let run = parse_run(r.clone(), &source, format!("{stem}[{i}]"))?;
            set.runs.push(run);
        }
    }
    if let Some(v) = doc.get("iorate") {
        let curves: Vec<IorateCurve> = serde_json::from_value(v.clone()).map_err(|e| field("iorate", e.to_string()))?;
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
    if let Some(v) = doc.get("sweeps") {
        let sweeps: Vec<Sweep> = serde_json::from_value(v.clone()).map_err(|e| field("sweeps", e.to_string()))?;
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
    if let Some(v) = doc.get("steady_state") {
        let ss: Vec<SteadyState> =
            serde_json::from_value(v.clone()).map_err(|e| field("steady_state", e.to_string()))?;
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

fn parse_run(doc: Value, source: &str, fallback_label: String) -> Result<RunDoc, ResultsError> {
    let field =
        |f: &str, problem: &str| ResultsError::Field { path: source.into(), field: f.into(), problem: problem.into() };
    if doc.get("schema_version").is_none() {
        return Err(field("schema_version", "is missing"));
    }
    check_schema(&doc, source)?;
    let h = &doc["histogram"];
    let (lo, hi, digits, enc) = (
        h["lowest_ns"].as_u64().ok_or_else(|| field("histogram.lowest_ns", "is missing"))?,
        h["highest_ns"].as_u64().ok_or_else(|| field("histogram.highest_ns", "is missing"))?,
        h["significant_digits"].as_u64().ok_or_else(|| field("histogram.significant_digits", "is missing"))?,
        h["encoding"].as_str().ok_or_else(|| field("histogram.encoding", "is missing"))?,
    );
    let found = describe_histogram(lo, hi, digits, enc);
    if found != expected_histogram() {
        return Err(ResultsError::Histogram { path: source.into(), found, expected: expected_histogram() });
    }
    let results = &doc["results"];
    let elapsed_ns = results["elapsed_ns"].as_u64().ok_or_else(|| field("results.elapsed_ns", "is missing"))?;
    let dir = |name: &str| -> Result<DirResult, ResultsError> {
        let d = &results["total"][name];
        let f = |x: &str| format!("results.total.{name}.{x}");
        Ok(DirResult { stats: parse_dir(d, &|x, p| field(&f(x), p))?, raw: d.clone() })
    };
    let dirs = [dir("read")?, dir("write")?];
    let intervals = match doc.get("intervals") {
        None | Some(Value::Null) => Vec::new(),
        Some(v) => serde_json::from_value(v.clone()).map_err(|e| field("intervals", &e.to_string()))?,
    };
    let label = doc["label"].as_str().map_or(fallback_label, str::to_string);
    Ok(RunDoc { label, source: source.into(), elapsed_ns, dirs, intervals, doc })
}

/// Rebuilds one direction's exact statistics from its JSON (`ios`, `io_bytes`, `lat_ns`, `hist`).
pub(crate) fn parse_dir(d: &Value, err: &dyn Fn(&str, &str) -> ResultsError) -> Result<DirStats, ResultsError> {
    let num = |v: &Value, name: &str| v.as_u64().ok_or_else(|| err(name, "is missing or not a whole number"));
    let ios = num(&d["ios"], "ios")?;
    let bytes = num(&d["io_bytes"], "io_bytes")?;
    let lat = &d["lat_ns"];
    let min = num(&lat["min"], "lat_ns.min")?;
    let max = num(&lat["max"], "lat_ns.max")?;
    let clamped = lat["clamped"].as_u64().unwrap_or(0);
    let sum_ns: u128 = match &lat["sum"] {
        Value::String(s) => s.parse().map_err(|_| err("lat_ns.sum", "is not a whole number"))?,
        v => u128::from(num(v, "lat_ns.sum")?),
    };
    let hist_text = d["hist"].as_str().ok_or_else(|| err("hist", "is missing"))?;
    let hist = decode_histogram(hist_text).map_err(|e| err("hist", &e))?;
    if hist.len() != ios {
        return Err(err("hist", &format!("holds {} I/Os but ios says {ios}", hist.len())));
    }
    Ok(DirStats { ios, bytes, min_ns: if ios == 0 { u64::MAX } else { min }, max_ns: max, sum_ns, clamped, hist })
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

    #[test]
    fn labels_are_made_unique() {
        let mut set = ResultSet::default();
        let doc = serde_json::json!({});
        let dir = DirResult { stats: DirStats::default(), raw: doc.clone() };
        for _ in 0..3 {
            set.runs.push(RunDoc {
                label: "a".into(),
                source: "a.json".into(),
                elapsed_ns: 1,
                dirs: [dir.clone(), dir.clone()],
                intervals: vec![],
                doc: doc.clone(),
            });
        }
        dedup_labels(&mut set.runs);
        let labels: Vec<&str> = set.runs.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["a", "a (2)", "a (3)"]);
    }
}

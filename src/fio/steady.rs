//! fio's steady state (`ss`, `ss_dur`, `ss_ramp`; fio's steadystate.c): a job stops once the last
//! `ss_dur` seconds of its per-second IOPS or bandwidth are steady, by their largest deviation from
//! their mean or by their least-squares slope, and fio's JSON says what was seen.
//!
//! Only the criterion and its window live here. The samples are the run's measured intervals
//! (one second each), shown to [`Watch`] by the coordinator, which ends the run when it says so.

use crate::coordinator::{IntervalPoint, RunWatch};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// fio's default criterion when `ss_dur` is given without `ss` (options.c's `def`).
pub const FIO_DEFAULT_SS: &str = "iops_slope:0.01%";

/// What `ss` measures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Metric {
    Iops,
    /// Bytes per second.
    Bw,
}

/// One job's steady-state rule.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    pub metric: Metric,
    /// The slope of the samples (`_slope`), rather than their largest deviation from their mean.
    pub slope: bool,
    /// The limit the criterion must stay under; a percentage of the mean when `percent`.
    pub limit: f64,
    pub percent: bool,
    /// fio's `ss_dur` in whole seconds: the window, one sample per second.
    pub dur_s: usize,
    /// fio's `ss_ramp`: samples start this long after the job's start.
    pub ramp: Duration,
}

impl Spec {
    /// Reads fio's `ss=` value (`iops:10%`, `bw_slope:1%`, `iops:500`, `bw:10m`), with `ss_dur` and
    /// `ss_ramp` already read.
    ///
    /// # Errors
    /// A sentence for a criterion or limit fio would not take, naming what to write.
    pub fn parse(ss: &str, dur: Duration, ramp: Duration) -> Result<Spec, String> {
        let (what, limit) = ss.split_once(':').ok_or_else(|| {
            format!("ss={ss} has no limit; write the criterion and its limit, like ss=iops:10% or ss=bw_slope:1%")
        })?;
        let (metric, slope) = match what.trim() {
            "iops" => (Metric::Iops, false),
            "iops_slope" => (Metric::Iops, true),
            "bw" => (Metric::Bw, false),
            "bw_slope" => (Metric::Bw, true),
            "lat" | "lat_slope" => {
                return Err(format!(
                    "ss={ss}: a latency criterion is newer than fio 3.33, whose JSON nvmebench writes; use iops, iops_slope, bw or bw_slope"
                ));
            }
            other => {
                return Err(format!("ss={ss}: {other} is not a criterion; use iops, iops_slope, bw or bw_slope"));
            }
        };
        let limit = limit.trim();
        let (limit, percent) = match limit.strip_suffix('%') {
            Some(p) => (p.trim().parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0), true),
            None if metric == Metric::Iops => (limit.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0), false),
            None => (crate::units::parse_size(limit).ok().map(|b| b as f64), false),
        };
        let limit = limit.ok_or_else(|| {
            format!("ss={ss}: the limit is not a number; write a percentage like ss={what}:10%, or a number of {}", {
                if metric == Metric::Iops { "IOPS" } else { "bytes per second like 10m" }
            })
        })?;
        Ok(Spec { metric, slope, limit, percent, dur_s: dur.as_secs() as usize, ramp })
    }

    /// fio's text of the rule (stat.c): `iops:10.000000%`, `bw_slope:1.000000%`.
    fn text(&self) -> String {
        let metric = if self.metric == Metric::Iops { "iops" } else { "bw" };
        let slope = if self.slope { "_slope" } else { "" };
        format!("{metric}{slope}:{:.6}{}", self.limit as f32, if self.percent { "%" } else { "" })
    }
}

/// A job's window of per-second samples and what fio's criterion last made of it.
#[derive(Clone, Debug)]
pub struct Window {
    spec: Spec,
    /// The last `dur_s` samples, oldest first: (IOPS, bytes per second).
    samples: std::collections::VecDeque<(u64, u64)>,
    attained: bool,
    criterion: f64,
    deviation: f64,
    slope: f64,
}

impl Window {
    pub fn new(spec: Spec) -> Window {
        let n = spec.dur_s;
        Window {
            spec,
            samples: std::collections::VecDeque::with_capacity(n + 1),
            attained: false,
            criterion: 0.0,
            deviation: 0.0,
            slope: 0.0,
        }
    }

    /// Takes one second's sample; whether the job is now steady (steadystate.c's
    /// `steadystate_deviation` and `steadystate_slope`, judged once the window is full).
    pub fn add(&mut self, iops: u64, bw: u64) -> bool {
        let n = self.spec.dur_s;
        if self.attained || n == 0 {
            return self.attained;
        }
        self.samples.push_back((iops, bw));
        if self.samples.len() > n {
            self.samples.pop_front();
        }
        if self.samples.len() < n {
            return false;
        }
        let y: Vec<u64> =
            self.samples.iter().map(|&(i, b)| if self.spec.metric == Metric::Iops { i } else { b }).collect();
        let sum_y: u64 = y.iter().sum();
        let nf = n as f64;
        let value = if self.spec.slope {
            // x is the sample's place in the window, 0 for the oldest, as fio's sums assume.
            let sum_x = (n * (n - 1) / 2) as u64;
            let sum_x_sq = ((n - 1) * n * (2 * n - 1) / 6) as u64;
            let sum_xy: u64 = y.iter().enumerate().map(|(i, v)| i as u64 * v).sum();
            self.slope = (sum_xy as f64 - sum_x as f64 * sum_y as f64 / nf)
                / (sum_x_sq as f64 - sum_x as f64 * sum_x as f64 / nf);
            // fio divides by the mean in integers here.
            self.criterion =
                if self.spec.percent { 100.0 * self.slope / (sum_y / n as u64) as f64 } else { self.slope };
            self.criterion.abs()
        } else {
            let mean = sum_y as f64 / nf;
            self.deviation = y.iter().map(|&v| (v as f64 - mean).abs()).fold(0.0, f64::max);
            self.criterion = if self.spec.percent { 100.0 * self.deviation / mean } else { self.deviation };
            self.criterion
        };
        self.attained = value < self.spec.limit;
        self.attained
    }

    /// fio's `steadystate` object of the job's JSON (stat.c): the rule, whether it was attained,
    /// the last criterion, and the window's samples oldest first (zeros where none came yet).
    pub fn json(&self) -> Value {
        let n = self.spec.dur_s;
        let pad = |f: fn(&(u64, u64)) -> u64| -> Vec<u64> {
            let mut v: Vec<u64> = self.samples.iter().map(f).collect();
            v.resize(n, 0);
            v
        };
        let (iops, bw) = (pad(|s| s.0), pad(|s| s.1));
        let mean = |v: &[u64]| if n == 0 { 0 } else { v.iter().sum::<u64>() / n as u64 };
        json!({
            "ss": self.spec.text(),
            "duration": n,
            "attained": u8::from(self.attained),
            "criterion": format!("{:.6}{}", self.criterion as f32, if self.spec.percent { "%" } else { "" }),
            "max_deviation": self.deviation,
            "slope": self.slope,
            "data": { "bw_mean": mean(&bw), "iops_mean": mean(&iops), "iops": iops, "bw": bw },
        })
    }
}

/// The coordinator's side: each whole measured second that starts after `ss_ramp` (counted from
/// the job's start, its `ramp_time` included, as fio counts from its epoch) is a sample.
pub struct Watch {
    pub window: Arc<Mutex<Window>>,
    /// The job's `ramp_time`, before the measured timeline starts.
    pub ramp_time: Duration,
}

impl RunWatch for Watch {
    fn ends_run(&mut self, p: &IntervalPoint) -> bool {
        let mut w = self.window.lock().expect("the window's lock is never held across a panic");
        let start_s = self.ramp_time.as_secs_f64() + p.t_s - 1.0;
        // A last, shorter interval is no second's sample; fio checks once a second.
        if p.partial || start_s + 1e-6 < w.spec.ramp.as_secs_f64() {
            return false;
        }
        let (ios, bytes) = [&p.read, &p.write, &p.trim].iter().fold((0, 0), |(i, b), d| (i + d.ios, b + d.bytes));
        w.add(ios, bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(ss: &str, dur: u64) -> Spec {
        Spec::parse(ss, Duration::from_secs(dur), Duration::ZERO).unwrap()
    }

    /// fio's mean deviation: the largest distance from the window's mean, in percent of it.
    #[test]
    fn deviation_is_fios() {
        let mut w = Window::new(spec("iops:10%", 4));
        assert!(!w.add(100, 0));
        assert!(!w.add(200, 0));
        assert!(!w.add(100, 0));
        assert!(!w.add(100, 0), "mean 125, 75 off: 60%");
        assert_eq!(w.json()["criterion"], "60.000000%");
        assert_eq!(w.json()["max_deviation"], 75.0);
        assert!(!w.add(110, 0), "200 still in: mean 127.5");
        assert!(w.add(105, 0), "100, 100, 110, 105: mean 103.75, 6.25 off");
        assert_eq!(w.json()["attained"], 1);
        assert_eq!(w.json()["criterion"], "6.024096%");
        assert_eq!(w.json()["data"]["iops"], json!([100, 100, 110, 105]));
        assert_eq!(w.json()["data"]["iops_mean"], 103);
        assert!(w.add(1, 0), "attained stays attained");
    }

    /// fio's slope: least squares over the window's places, in percent of the (integer) mean.
    #[test]
    fn slope_is_fios() {
        let mut w = Window::new(spec("bw_slope:1%", 3));
        w.add(0, 100);
        w.add(0, 110);
        assert!(!w.add(0, 120), "slope 10 of a mean 110: 9.09%");
        assert_eq!(w.json()["slope"], 10.0);
        assert_eq!(w.json()["criterion"], "9.090909%");
        w.add(0, 119);
        w.add(0, 120);
        assert!(w.add(0, 120), "119, 120, 120: slope 0.5 of 119 (integer mean): 0.42%");
        assert_eq!(w.json()["ss"], "bw_slope:1.000000%");
    }

    /// Before the window is full nothing is judged; fio's arrays are zero-padded to ss_dur.
    #[test]
    fn an_unfilled_window_writes_fios_zeros() {
        let mut w = Window::new(spec("iops:10%", 3));
        w.add(5, 50);
        let j = w.json();
        assert_eq!(j["attained"], 0);
        assert_eq!(j["criterion"], "0.000000%");
        assert_eq!(j["data"]["bw"], json!([50, 0, 0]));
        assert_eq!(j["data"]["bw_mean"], 16);
        assert_eq!(j["duration"], 3);
    }

    #[test]
    fn rules_fio_takes_and_those_it_does_not() {
        let s = spec("bw:10m", 5);
        assert_eq!((s.metric, s.slope, s.limit, s.percent), (Metric::Bw, false, 10485760.0, false));
        assert_eq!(spec("iops:500", 5).limit, 500.0);
        let e = |ss: &str| Spec::parse(ss, Duration::from_secs(5), Duration::ZERO).unwrap_err();
        assert_eq!(
            e("iops"),
            "ss=iops has no limit; write the criterion and its limit, like ss=iops:10% or ss=bw_slope:1%"
        );
        assert!(e("lat:1ms").contains("a latency criterion is newer than fio 3.33"));
        assert!(e("cpu:1%").contains("cpu is not a criterion"));
        assert!(e("iops:x%").contains("the limit is not a number"));
    }
}

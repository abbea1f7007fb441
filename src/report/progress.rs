//! A progress bar for long work made of planned steps (suites, comparisons, preconditioning): which
//! step, which round of it, and the time left by the plan, on stderr.
//!
//! Silent unless stderr is a terminal (and `quiet` is off), so logs and CI output get only reports.
//! The caller drives it: `begin_step` when a step starts, `round` when a round starts, `tick` from the
//! coordinator's per-interval observer, `end_step` when the step ends (`skip_step` for one done
//! earlier). The time left is what the plan still holds, corrected by what the run has learnt: the
//! rest of the current step (from its rounds once it overruns its plan) plus every step not yet
//! started, stretched by how much longer than planned the finished steps took. Lines printed while
//! the bar is up go through `suspend`, so they never share its line.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

pub struct StepProgress {
    bar: Option<ProgressBar>,
    planned: Vec<Duration>,
    /// Index of the current step, or `planned.len()` when none is running.
    step: usize,
    done: usize,
    step_started: Option<Instant>,
    label: String,
    round: Option<(u32, Option<u32>)>,
    /// Planned and actual time of the steps run (not skipped) so far.
    finished_planned: Duration,
    finished_actual: Duration,
}

impl StepProgress {
    /// A bar over steps of the given planned lengths; drawn only on a terminal and when not `quiet`.
    pub fn new(planned: Vec<Duration>, quiet: bool) -> StepProgress {
        let on = !quiet && std::io::stderr().is_terminal();
        StepProgress::with_target(planned, on.then(ProgressDrawTarget::stderr))
    }

    /// A bar that draws nowhere: for tests and for callers that decide visibility themselves.
    pub fn hidden(planned: Vec<Duration>) -> StepProgress {
        StepProgress::with_target(planned, None)
    }

    fn with_target(planned: Vec<Duration>, target: Option<ProgressDrawTarget>) -> StepProgress {
        let total_ms = planned.iter().map(|d| d.as_millis() as u64).sum::<u64>().max(1);
        let bar = target.map(|t| {
            let b = ProgressBar::with_draw_target(Some(total_ms), t);
            b.set_style(
                ProgressStyle::with_template("{wide_bar:.cyan/blue} {msg}")
                    .expect("the template is a constant")
                    .progress_chars("=> "),
            );
            b
        });
        StepProgress {
            bar,
            step: planned.len(),
            planned,
            done: 0,
            step_started: None,
            label: String::new(),
            round: None,
            finished_planned: Duration::ZERO,
            finished_actual: Duration::ZERO,
        }
    }

    /// Step `index` (0-based) starts now, described by `label`.
    pub fn begin_step(&mut self, index: usize, label: &str) {
        self.step = index.min(self.planned.len());
        self.label = label.to_string();
        self.round = None;
        self.step_started = Some(Instant::now());
        self.redraw();
    }

    /// Round `round` (1-based) of `of` (when known) of the current step starts.
    pub fn round(&mut self, round: u32, of: Option<u32>) {
        self.round = Some((round, of));
        self.redraw();
    }

    /// Redraws with the time that has passed (call it once per interval).
    pub fn tick(&mut self) {
        self.redraw();
    }

    pub fn end_step(&mut self) {
        self.end_step_after(self.in_step());
    }

    /// Step `index` was done earlier: it counts as finished, and teaches nothing about the pace.
    pub fn skip_step(&mut self, index: usize) {
        self.step = index.min(self.planned.len());
        self.done = self.done.max(self.step + 1).min(self.planned.len());
        self.step_started = None;
        self.redraw();
    }

    fn end_step_after(&mut self, actual: Duration) {
        if let Some(p) = self.planned.get(self.step).filter(|_| self.step_started.is_some()) {
            self.finished_planned += *p;
            self.finished_actual += actual;
        }
        self.done = self.done.max(self.step + 1).min(self.planned.len());
        self.step_started = None;
        self.redraw();
    }

    /// Runs `f` (which prints) with the bar taken off the screen, then draws it again.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(b) => b.suspend(f),
            None => f(),
        }
    }

    /// How much longer than planned the finished steps took: at least 1 (a plan that ran fast is
    /// not trusted to keep doing so), at most 4.
    fn pace(&self) -> f64 {
        if self.finished_planned.is_zero() {
            return 1.0;
        }
        (self.finished_actual.as_secs_f64() / self.finished_planned.as_secs_f64()).clamp(1.0, 4.0)
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }

    fn in_step(&self) -> Duration {
        self.step_started.map_or(Duration::ZERO, |s| s.elapsed())
    }

    /// The time left with `in_step` spent in the current step.
    pub fn time_left(&self, in_step: Duration) -> Duration {
        let pace = self.pace();
        let current = self.planned.get(self.step).filter(|_| self.step_started.is_some());
        let rest_of_step = current.map_or(Duration::ZERO, |p| {
            let stretched = p.mul_f64(pace);
            if in_step < stretched { stretched - in_step } else { self.rest_by_rounds(in_step) }
        });
        let first_unstarted = if current.is_some() { self.step + 1 } else { self.done };
        rest_of_step + self.planned.iter().skip(first_unstarted).sum::<Duration>().mul_f64(pace)
    }

    /// The rest of the current step at the pace of its rounds so far (the current one counted as
    /// half done); zero without a known round count.
    fn rest_by_rounds(&self, in_step: Duration) -> Duration {
        match self.round {
            Some((r, Some(of))) if r >= 1 && of >= r => {
                let per_round = in_step.as_secs_f64() / (f64::from(r) - 0.5);
                Duration::from_secs_f64(per_round * (f64::from(of - r) + 0.5))
            }
            _ => Duration::ZERO,
        }
    }

    /// The line shown beside the bar, e.g. `step 3/12 round 2/5 · 1m20s left · randread qd=32`.
    pub fn message(&self, in_step: Duration) -> String {
        let n = self.planned.len();
        let mut m = format!("step {}/{n}", (self.step + 1).min(n.max(1)));
        if let Some((r, of)) = self.round {
            m.push_str(&match of {
                Some(of) => format!(" round {r}/{of}"),
                None => format!(" round {r}"),
            });
        }
        m.push_str(&format!(" · {} left", format_left(self.time_left(in_step))));
        if let Some(over) =
            self.planned.get(self.step).filter(|_| self.step_started.is_some()).and_then(|p| in_step.checked_sub(*p))
        {
            if over >= Duration::from_secs(1) {
                m.push_str(&format!(" (step {} over plan)", format_left(over)));
            }
        }
        if !self.label.is_empty() {
            m.push_str(" · ");
            m.push_str(&self.label);
        }
        m
    }

    fn redraw(&self) {
        if let Some(b) = &self.bar {
            let in_step = self.in_step();
            let total: Duration = self.planned.iter().sum();
            b.set_position(total.saturating_sub(self.time_left(in_step)).as_millis() as u64);
            b.set_message(self.message(in_step));
        }
    }
}

/// `45s`, `3m05s`, `2h07m`.
pub fn format_left(d: Duration) -> String {
    let s = d.as_secs();
    if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{}h{:02}m", s / 3600, s / 60 % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_left_follows_the_plan() {
        let s = |n| Duration::from_secs(n);
        let mut p = StepProgress::hidden(vec![s(60), s(60), s(120)]);
        assert_eq!(p.time_left(Duration::ZERO), s(240));
        p.begin_step(0, "randread qd=1");
        assert_eq!(p.time_left(s(20)), s(220));
        // Overrunning a step leaves the later steps' time, never less.
        assert_eq!(p.time_left(s(100)), s(180));
        p.end_step();
        assert_eq!(p.time_left(Duration::ZERO), s(180));
        p.begin_step(1, "randread qd=32");
        p.round(2, Some(5));
        assert_eq!(p.message(s(30)), "step 2/3 round 2/5 · 2m30s left · randread qd=32");
        p.round(7, None);
        assert!(p.message(s(0)).starts_with("step 2/3 round 7 · 3m00s left"));
        p.end_step();
        p.begin_step(2, "");
        p.end_step();
        assert_eq!(p.time_left(Duration::ZERO), Duration::ZERO);
        assert_eq!(p.message(Duration::ZERO), "step 3/3 · 0s left");
        p.finish();
    }

    #[test]
    fn time_left_moves_when_steps_overrun() {
        let s = |n| Duration::from_secs(n);
        let mut p = StepProgress::hidden(vec![s(10), s(10), s(10)]);
        p.begin_step(0, "fill");
        p.end_step_after(s(20));
        // The first step took twice its plan: the rest is expected to as well.
        assert_eq!(p.time_left(Duration::ZERO), s(40));
        p.begin_step(1, "sweep");
        p.round(2, Some(4));
        // Over its (stretched) plan in round 2 of 4 after 30 s: 20 s a round, 50 s to go.
        assert_eq!(p.time_left(s(30)), s(50) + s(20));
        assert_eq!(p.time_left(s(36)), s(60) + s(20), "the estimate moves with the time spent");
        assert!(p.message(s(36)).contains("(step 26s over plan)"), "{}", p.message(s(36)));
        p.end_step_after(s(40));
        p.skip_step(2);
        assert_eq!(p.time_left(Duration::ZERO), Duration::ZERO);
    }

    #[test]
    fn durations_read_short() {
        assert_eq!(format_left(Duration::from_secs(45)), "45s");
        assert_eq!(format_left(Duration::from_secs(185)), "3m05s");
        assert_eq!(format_left(Duration::from_secs(7620)), "2h07m");
    }
}

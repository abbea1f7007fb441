//! The live line of `run`: elapsed/total and the time left, then IOPS, bandwidth and p99 of the
//! last interval per direction, and the errors so far. Redrawn in place on stderr, or printed as
//! plain lines every `--status-interval` for logs and CI.
//!
//! It draws on stderr only, so that it never mixes into the report on stdout, and it always leaves
//! the cursor at the start of a clean line, so the report never shares a line with it. It reads the
//! coordinator's interval points; it does not decide when they are made.

use super::ticks;
use crate::coordinator::{DirPoint, IntervalPoint};
use crate::io::Direction;
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::Duration;

/// How the live line shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiveMode {
    Off,
    /// One line redrawn in place.
    Redraw,
    /// A plain line every so often.
    Lines(Duration),
}

impl LiveMode {
    /// `quiet` turns it off; a status interval asks for lines; otherwise a redrawn line when
    /// `always`, or when `auto` and stderr is a terminal.
    pub fn choose(quiet: bool, auto: bool, always: bool, status_interval: Option<Duration>) -> LiveMode {
        match status_interval {
            _ if quiet => LiveMode::Off,
            Some(every) => LiveMode::Lines(every),
            None if always || (auto && std::io::stderr().is_terminal()) => LiveMode::Redraw,
            None => LiveMode::Off,
        }
    }
}

/// What the run plans: its warm-up and its measured time (none when it stops after `--ios`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Plan {
    pub ramp: Duration,
    pub runtime: Option<Duration>,
}

/// Sums of the intervals since the last printed line (for `Lines`).
#[derive(Clone, Copy, Debug, Default)]
struct Pending {
    secs: f64,
    ios: [u64; Direction::COUNT],
    bytes: [u64; Direction::COUNT],
    p99_ns: [u64; Direction::COUNT],
}

#[derive(Debug, Default)]
struct State {
    /// Past the ramp.
    measuring: bool,
    /// Errors of every interval so far.
    errors: u64,
    /// Seconds of ramp seen so far (ramp points carry no time of their own).
    ramp_s: f64,
    next_line_s: f64,
    pending: Pending,
    drawn: bool,
}

pub struct LiveLine {
    mode: LiveMode,
    plan: Plan,
    state: Mutex<State>,
    /// Where `Lines` go: stderr, or a buffer in tests.
    lines_to: Mutex<Box<dyn Write + Send>>,
}

impl LiveLine {
    pub fn new(mode: LiveMode, plan: Plan) -> LiveLine {
        let state = State { next_line_s: -plan.ramp.as_secs_f64(), ..State::default() };
        LiveLine { mode, plan, state: Mutex::new(state), lines_to: Mutex::new(Box::new(std::io::stderr())) }
    }

    /// A line that prints its `Lines` into `out` instead of stderr.
    pub fn with_lines_to(mode: LiveMode, plan: Plan, out: Box<dyn Write + Send>) -> LiveLine {
        LiveLine { lines_to: Mutex::new(out), ..LiveLine::new(mode, plan) }
    }

    /// Takes the coordinator's point of the interval that just ended.
    pub fn update(&self, p: &IntervalPoint) {
        if self.mode == LiveMode::Off {
            return;
        }
        let mut st = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let length = interval_length(p);
        st.errors += p.errors;
        let t_s = if p.ramp {
            st.ramp_s += length;
            (st.ramp_s - self.plan.ramp.as_secs_f64()).min(-1e-9)
        } else {
            p.t_s
        };
        match self.mode {
            LiveMode::Off => {}
            LiveMode::Redraw => {
                redraw(&status(self.plan, t_s, &Direction::ALL.map(|d| rate(p.of(d))), st.errors));
                st.drawn = true;
            }
            LiveMode::Lines(every) => self.line(&mut st, p, t_s, length, every),
        }
    }

    /// Adds the interval to the pending sums, and prints them once `every` has passed.
    fn line(&self, st: &mut State, p: &IntervalPoint, t_s: f64, length: f64, every: Duration) {
        if !p.ramp && !st.measuring {
            // The measurement starts its own schedule, and ramp intervals stay out of its lines.
            st.measuring = true;
            st.pending = Pending::default();
            st.next_line_s = every.as_secs_f64();
        }
        st.pending.secs += length;
        for (i, d) in Direction::ALL.map(|d| p.of(d)).into_iter().enumerate() {
            st.pending.ios[i] += d.ios;
            st.pending.bytes[i] += d.bytes;
            st.pending.p99_ns[i] = st.pending.p99_ns[i].max(d.p99_ns);
        }
        if t_s + 1e-6 < st.next_line_s || st.pending.secs <= 0.0 {
            return;
        }
        let pend = std::mem::take(&mut st.pending);
        let rates: [Rate; Direction::COUNT] = std::array::from_fn(|i| pending_rate(&pend, i));
        let text = status(self.plan, t_s, &rates, st.errors);
        let mut out = self.lines_to.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = writeln!(out, "{text}").and_then(|()| out.flush());
        while st.next_line_s <= t_s + 1e-6 {
            st.next_line_s += every.as_secs_f64();
        }
    }

    /// Clears a redrawn line (or ends it, when stderr is not a terminal) so that what follows starts
    /// on a line of its own.
    pub fn finish(&self) {
        let st = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if st.drawn {
            let end = if std::io::stderr().is_terminal() { "\r\x1b[K" } else { "\n" };
            let _ = write!(std::io::stderr().lock(), "{end}");
        }
    }
}

/// One direction's figures over an interval.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Rate {
    pub ios: u64,
    pub iops: f64,
    pub bw_bytes: f64,
    pub p99_ns: u64,
}

/// Draws `text` over the current line of stderr, cut to the terminal's width so it never wraps.
fn redraw(text: &str) {
    let width = console::Term::stderr().size_checked().map(|(_, cols)| usize::from(cols));
    let text: String = match width {
        Some(w) => text.chars().take(w.saturating_sub(1)).collect(),
        None => text.to_string(),
    };
    let _ = write!(std::io::stderr().lock(), "\r{text}\x1b[K");
}

/// An interval's own length, from its counts and rates (the first and last may be short).
fn interval_length(p: &IntervalPoint) -> f64 {
    [&p.read, &p.write].iter().filter(|d| d.iops > 0.0).map(|d| d.ios as f64 / d.iops).fold(0.0, f64::max)
}

fn rate(d: &DirPoint) -> Rate {
    Rate { ios: d.ios, iops: d.iops, bw_bytes: d.bw_bytes, p99_ns: d.p99_ns }
}

fn pending_rate(p: &Pending, i: usize) -> Rate {
    let secs = p.secs.max(1e-9);
    Rate { ios: p.ios[i], iops: p.ios[i] as f64 / secs, bw_bytes: p.bytes[i] as f64 / secs, p99_ns: p.p99_ns[i] }
}

/// Seconds with one decimal: `12.3s`.
fn secs(s: f64) -> String {
    format!("{:.1}s", s.max(0.0))
}

/// The status text at `t_s` seconds into the measurement (negative in the ramp):
/// `12.3s/30s, 17.7s left | read 225k IOPS 923 MB/s p99 85µs | errors 0`.
/// `dirs` are indexed by [`Direction`]; those without I/O are left out.
pub fn status(plan: Plan, t_s: f64, dirs: &[Rate], errors: u64) -> String {
    let ramp = plan.ramp.as_secs_f64();
    let mut out = if t_s < 0.0 {
        format!("ramp {}/{}, {} left", secs(ramp + t_s), secs(ramp), secs(-t_s))
    } else {
        match plan.runtime {
            Some(total) => {
                let total = total.as_secs_f64();
                format!("{}/{}, {} left", secs(t_s), secs(total), secs(total - t_s))
            }
            None => secs(t_s),
        }
    };
    for (name, d) in Direction::ALL.map(Direction::label).into_iter().zip(dirs) {
        if d.ios > 0 {
            out.push_str(&format!(
                " | {name} {} IOPS {} p99 {}",
                ticks::si(d.iops, ""),
                ticks::si(d.bw_bytes, "B/s"),
                ticks::latency(d.p99_ns as f64)
            ));
        }
    }
    out.push_str(&format!(" | errors {errors}"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(iops: f64) -> Rate {
        Rate { ios: iops as u64, iops, bw_bytes: iops * 4096.0, p99_ns: 85_000 }
    }

    #[test]
    fn status_shows_elapsed_total_time_left_and_figures() {
        let plan = Plan { ramp: Duration::from_secs(2), runtime: Some(Duration::from_secs(30)) };
        assert_eq!(
            status(plan, 12.34, &[r(225_300.0), Rate::default()], 0),
            "12.3s/30.0s, 17.7s left | read 225k IOPS 923 MB/s p99 85µs | errors 0"
        );
        assert_eq!(
            status(plan, -0.5, &[r(1000.0), r(500.0)], 3),
            "ramp 1.5s/2.0s, 0.5s left | read 1k IOPS 4.1 MB/s p99 85µs | write 500 IOPS 2.05 MB/s p99 85µs | errors 3"
        );
        let open = Plan { ramp: Duration::ZERO, runtime: None };
        assert!(status(open, 3.0, &[r(10.0), Rate::default()], 0).starts_with("3.0s | read 10 IOPS"));
    }

    /// A buffer the test keeps a handle on.
    #[derive(Clone, Default)]
    struct Shared(std::sync::Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn point(t_s: f64, ramp: bool, ios: u64, p99_ns: u64, errors: u64) -> IntervalPoint {
        let read = DirPoint {
            ios,
            bytes: ios * 4096,
            iops: ios as f64,
            bw_bytes: ios as f64 * 4096.0,
            p99_ns,
            ..DirPoint::default()
        };
        IntervalPoint {
            t_s,
            span_s: 0.1,
            partial: false,
            workers: 1,
            ramp,
            read,
            write: DirPoint::default(),
            errors,
            ..IntervalPoint::default()
        }
    }

    #[test]
    fn status_lines_average_their_intervals_and_count_every_error() {
        let out = Shared::default();
        let plan = Plan { ramp: Duration::from_secs(1), runtime: Some(Duration::from_secs(4)) };
        let live = LiveLine::with_lines_to(LiveMode::Lines(Duration::from_secs(2)), plan, Box::new(out.clone()));
        live.update(&point(-1.0, true, 500, 10_000, 1));
        for (t, ios, p99, errors) in
            [(1.0, 1000, 20_000, 0), (2.0, 3000, 90_000, 2), (3.0, 2000, 30_000, 0), (4.0, 2000, 40_000, 0)]
        {
            live.update(&point(t, false, ios, p99, errors));
        }
        live.finish();
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "ramp 1.0s/1.0s, 0.0s left | read 500 IOPS 2.05 MB/s p99 10µs | errors 1",
                "2.0s/4.0s, 2.0s left | read 2k IOPS 8.19 MB/s p99 90µs | errors 3",
                "4.0s/4.0s, 0.0s left | read 2k IOPS 8.19 MB/s p99 40µs | errors 3",
            ]
        );
    }

    #[test]
    fn quiet_wins_and_a_status_interval_asks_for_lines() {
        let every = Some(Duration::from_secs(5));
        assert_eq!(LiveMode::choose(true, false, true, every), LiveMode::Off);
        assert_eq!(LiveMode::choose(false, true, false, every), LiveMode::Lines(Duration::from_secs(5)));
        assert_eq!(LiveMode::choose(false, false, true, None), LiveMode::Redraw);
        assert_eq!(LiveMode::choose(false, false, false, None), LiveMode::Off);
    }
}

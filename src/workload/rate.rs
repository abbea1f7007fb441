//! Open-loop pacing and think time: when each I/O is *meant* to be issued, and when the worker
//! pauses.
//!
//! With `--rate-iops` (one schedule for every I/O) or `--rate` (fio's `rate`: bytes per second per
//! worker, a schedule per direction), I/Os follow a schedule instead of the closed loop. Latency is
//! measured from the scheduled time, not from when a free slot finally let the I/O out, so time
//! spent queued behind a slow device is counted (no coordinated omission). The schedule never skips
//! ahead to catch up. Gaps are fixed (`linear`) or exponential with the same mean (`poisson`, fio's
//! `rate_process=poisson`), drawn from a seeded generator so a run repeats.
//!
//! `--thinktime` is fio's: once `thinktime_blocks` I/Os have completed (or, with
//! `thinktime_blocks_type=issue`, have been issued) since the last stall, the worker issues nothing
//! more until everything in flight has completed, then stalls for the think time (busy for
//! `thinktime_spin` of it, asleep for the rest) before it goes on.
//!
//! This module decides only *when*; what is issued is the generator's business, and the worker
//! acts on the answers ([`Pacer::gate`]).

use super::Mix;
use crate::io::Direction;
use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Serialize, Serializer};
use std::fmt;
use std::time::Duration;

/// fio's `rate_process`: how the gaps between paced I/Os are drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RateProcess {
    /// Evenly spaced (fio's default).
    #[default]
    Linear,
    /// Exponential gaps with the same mean: Poisson arrivals.
    Poisson,
}

impl RateProcess {
    pub fn parse(text: &str) -> Result<RateProcess, String> {
        match text.trim() {
            "linear" => Ok(RateProcess::Linear),
            "poisson" => Ok(RateProcess::Poisson),
            _ => Err(format!("'{text}' is not a rate process; use linear or poisson")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            RateProcess::Linear => "linear",
            RateProcess::Poisson => "poisson",
        }
    }
}

impl fmt::Display for RateProcess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// fio's `rate`: bytes per second per worker, for reads, writes and trims; `None` leaves a
/// direction unpaced. Write-zeroes and flushes share the write schedule (fio has no rate of their
/// own; a flush moves no bytes, so it takes none of the writes' time).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ByteRate {
    pub read: Option<u64>,
    pub write: Option<u64>,
    pub trim: Option<u64>,
}

impl ByteRate {
    /// Parses fio's spelling: `100m` (every direction), `100m,20m` (reads; writes and trims),
    /// `100m,20m,5m` (reads, writes, trims), `100m,` (reads only), `,20m` (writes and trims),
    /// `,20m,` (writes only), `,,5m` (trims only); a value not followed by a comma carries on to
    /// the directions after it. Sizes are binary (`1m` = 1048576), as fio's.
    ///
    /// # Errors
    /// A sentence for a value that is not a size, a rate of 0, more than three values, or nothing
    /// paced at all.
    pub fn parse(text: &str) -> Result<ByteRate, String> {
        let Some([r, w, t]) = crate::units::per_direction(text) else {
            return Err(format!(
                "'{text}' gives more than three rates; write READ[,WRITE[,TRIM]] bytes per second, like 100m,20m,5m"
            ));
        };
        let one = |t: &str| -> Result<Option<u64>, String> {
            if t.is_empty() {
                return Ok(None);
            }
            match crate::units::parse_size(t) {
                Ok(0) => Err(
                    "a rate of 0 paces nothing; give bytes per second above 0 (like 100m), or leave the direction out (',20m')"
                    .to_string()),
                Ok(n) => Ok(Some(n)),
                Err(_) => Err(format!("'{t}' is not a rate; give bytes per second with an optional unit, like 100m")),
            }
        };
        let rate = ByteRate { read: one(r)?, write: one(w)?, trim: one(t)? };
        if !rate.is_set() {
            return Err(format!(
                "'{text}' gives no rate; write READ[,WRITE[,TRIM]] bytes per second, like 100m or 100m,20m"
            ));
        }
        Ok(rate)
    }

    pub fn is_set(&self) -> bool {
        self.read.is_some() || self.write.is_some() || self.trim.is_some()
    }

    /// The rate whose schedule paces `dir`.
    pub fn of(&self, dir: Direction) -> Option<u64> {
        self.lanes()[LANE[dir as usize]]
    }

    /// The three schedules' rates, in lane order (reads, writes, trims).
    fn lanes(&self) -> [Option<u64>; LANES] {
        [self.read, self.write, self.trim]
    }

    /// fio's text form: `100m`, `100m,20m`, `100m,20m,5m`, `100m,` ...; the shortest that parses
    /// back to the same rates.
    pub fn to_fio(&self) -> String {
        let one = |r: Option<u64>| r.map(crate::units::format_size).unwrap_or_default();
        let (r, w, t) = (one(self.read), one(self.write), one(self.trim));
        if self.read == self.write && self.write == self.trim {
            r
        } else if self.write == self.trim && self.write.is_some() {
            format!("{r},{w}")
        } else if self.trim.is_none() && self.write.is_none() {
            format!("{r},")
        } else {
            format!("{r},{w},{t}")
        }
    }
}

/// fio's `rate_iops=READ[,WRITE[,TRIM]]`: I/Os per second per job and direction, in the same
/// spelling as `rate` (a value not followed by a comma carries on; an empty one leaves its direction
/// unpaced). fio turns each into bytes per second at the direction's smallest block size and paces
/// those (`__setup_rate`), so a `randrw` job at `rate_iops=1000` makes 1000 reads and 1000 writes a
/// second, and a size mix makes fewer I/Os than the figure; [`IopsRate::in_bytes`] does the same.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IopsRate {
    pub read: Option<f64>,
    pub write: Option<f64>,
    pub trim: Option<f64>,
}

impl IopsRate {
    /// Parses `1000`, `1000,200`, `1000,200,50`, `1000,` (reads only), `,200` and `,,50`.
    ///
    /// # Errors
    /// A sentence for a value that is not a rate above 0, more than three values, or nothing paced.
    pub fn parse(text: &str) -> Result<IopsRate, String> {
        let Some([r, w, t]) = crate::units::per_direction(text) else {
            return Err(format!("'{text}' gives more than three rates; write READ[,WRITE[,TRIM]] IOPS, like 1000,200"));
        };
        let one = |t: &str| -> Result<Option<f64>, String> {
            if t.is_empty() {
                return Ok(None);
            }
            t.parse::<f64>().ok().filter(|v| v.is_finite() && *v > 0.0).map(Some).ok_or_else(|| {
                format!("'{t}' is not a rate; use a number of IOPS above 0, or leave the direction out (',200')")
            })
        };
        let rate = IopsRate { read: one(r)?, write: one(w)?, trim: one(t)? };
        if rate.read.is_none() && rate.write.is_none() && rate.trim.is_none() {
            return Err(format!("'{text}' gives no rate; write READ[,WRITE[,TRIM]] IOPS, like 1000 or 1000,200"));
        }
        Ok(rate)
    }

    /// The byte rates fio paces by: each direction's IOPS times its smallest block size
    /// (`smallest`: reads, writes, trims), at least a byte per second.
    pub fn in_bytes(&self, smallest: [u64; 3]) -> ByteRate {
        let bytes = |iops: Option<f64>, bs: u64| iops.map(|r| ((r * bs as f64).round() as u64).max(1));
        ByteRate {
            read: bytes(self.read, smallest[0]),
            write: bytes(self.write, smallest[1]),
            trim: bytes(self.trim, smallest[2]),
        }
    }
}

/// Under `--rate`, which schedule (lane) paces each direction, indexed by [`Direction`]: reads 0;
/// writes, write-zeroes and flushes 1; trims 2 (fio's three `rate` values).
const LANE: [usize; Direction::COUNT] = [0, 1, 2, 1, 1];
const LANES: usize = 3;

/// fio's `thinktime`, `thinktime_spin`, `thinktime_blocks` and `thinktime_blocks_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThinkTime {
    /// The whole stall.
    pub think: Duration,
    /// How much of it is spent busy (the rest asleep).
    pub spin: Duration,
    /// I/Os counted between stalls (fio's default 1).
    pub blocks: u32,
    /// Whether they are counted as they complete (fio's default) or as they are issued.
    pub count: ThinkCount,
}

/// fio's `thinktime_blocks_type`: what counts toward `thinktime_blocks`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ThinkCount {
    /// Completions, as fio's loop reaps them (fio's default).
    #[default]
    Complete,
    /// Issues: the worker keeps at most `thinktime_blocks` in flight.
    Issue,
}

impl ThinkCount {
    pub fn parse(text: &str) -> Result<ThinkCount, String> {
        match text.trim() {
            "complete" => Ok(ThinkCount::Complete),
            "issue" => Ok(ThinkCount::Issue),
            other => Err(format!("'{other}' is not a thinktime_blocks_type; use complete (fio's default) or issue")),
        }
    }

    /// What happened to the I/Os it counts: `completed` or `issued`.
    pub fn counted(&self) -> &'static str {
        match self {
            ThinkCount::Complete => "completed",
            ThinkCount::Issue => "issued",
        }
    }
}

/// Parses a think time (`--thinktime`, `--thinktime-spin`): a number without a unit is
/// microseconds, as fio reads `thinktime`, and whole, as fio reads it (`100`, or `100.0`); with a
/// unit it is exact, fractions too (`2ms`, `1.5us`, `0.5s`).
///
/// # Errors
/// A sentence when the text is not a duration, or is a fraction without a unit: fio reads `1.5` as
/// 1 µs, stopping at the `.`, and nvmebench read it as 1.5 s before it read bare numbers as fio does.
pub fn parse_think(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let bare = t.chars().all(|c| c.is_ascii_digit() || c == '.') && t.matches('.').count() <= 1;
    if bare && t.chars().any(|c| c.is_ascii_digit()) {
        let (whole, fraction) = t.split_once('.').unwrap_or((t, ""));
        if whole.is_empty() || fraction.chars().any(|c| c != '0') {
            return Err(format!(
                "'{t}' has no unit, so it is microseconds, which fio reads only as a whole number (it stops at the '.'); give the unit, like {t}us or {t}s"
            ));
        }
        let us: u64 = whole.parse().map_err(|_| format!("'{text}' is too long a think time"))?;
        return Ok(Duration::from_micros(us));
    }
    crate::units::parse_duration(t)
}

/// Everything about a worker's pacing that follows from the flags (the total `--rate-iops` comes
/// apart, already divided per worker). Serialised flat, times in seconds: `rate_read_bytes_per_s`,
/// `rate_write_bytes_per_s`, `rate_trim_bytes_per_s`, `rate_process`, `thinktime_s`,
/// `thinktime_spin_s`, `thinktime_blocks`, `thinktime_blocks_type`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PaceSpec {
    /// fio's `rate`, per worker.
    pub rate: ByteRate,
    pub rate_process: RateProcess,
    pub thinktime: Option<ThinkTime>,
}

impl Serialize for PaceSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let t = self.thinktime;
        let mut st = s.serialize_struct("PaceSpec", 8)?;
        st.serialize_field("rate_read_bytes_per_s", &self.rate.read)?;
        st.serialize_field("rate_write_bytes_per_s", &self.rate.write)?;
        st.serialize_field("rate_trim_bytes_per_s", &self.rate.trim)?;
        st.serialize_field("rate_process", &self.rate_process)?;
        st.serialize_field("thinktime_s", &t.map(|t| t.think.as_secs_f64()))?;
        st.serialize_field("thinktime_spin_s", &t.map(|t| t.spin.as_secs_f64()))?;
        st.serialize_field("thinktime_blocks", &t.map(|t| t.blocks))?;
        st.serialize_field("thinktime_blocks_type", &t.map(|t| t.count))?;
        st.end()
    }
}

impl PaceSpec {
    pub fn new(rate: ByteRate, rate_process: RateProcess, thinktime: Option<ThinkTime>) -> PaceSpec {
        PaceSpec { rate, rate_process, thinktime }
    }

    /// Whether anything paces or pauses the workers beyond `--rate-iops`.
    pub fn is_set(&self) -> bool {
        self.rate.is_set() || self.thinktime.is_some()
    }
}

/// One schedule: when its next I/O is due, in 1/2^16 ns since the worker's start (so rates that do
/// not divide a second evenly do not drift).
#[derive(Clone, Debug)]
struct Schedule {
    next_fp: u64,
    /// Mean gap per I/O (IOPS pacing) or per byte (bandwidth pacing), in 1/2^16 ns.
    step_fp: f64,
}

/// What the worker may do with the I/O it has in hand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// Issue it, counting its latency from `Some(due)` (paced) or from now (`None`: unpaced).
    Go(Option<u64>),
    /// Its direction is not due but another one is: issue an I/O of that direction first, and
    /// keep this one (fio's `rate_ddir`).
    Switch(Direction),
    /// Issue nothing yet.
    Wait,
}

/// A worker's pacing state: the schedules and the think-time countdown.
#[derive(Clone, Debug)]
pub struct Pacer {
    /// `[0]` paces every I/O (IOPS); or reads, writes and trims apart (bandwidth, see [`LANE`]).
    sched: [Option<Schedule>; LANES],
    per_byte: bool,
    /// Per lane, the direction to issue when another lane is ahead of its rate and this one is
    /// not; `None` for a lane the worker does not issue (or when it may not switch at all).
    stand_in: [Option<Direction>; LANES],
    poisson: Option<Xoshiro256PlusPlus>,
    think: Option<Thinker>,
}

/// Scale of the fixed-point times.
const FP: f64 = 65536.0;

impl Pacer {
    /// The pacing of a worker: `iops` (its share of `--rate-iops`) or `spec.rate` bytes per second
    /// per direction, gaps drawn by `spec.rate_process` from `seed`, and `spec.thinktime`. `None`
    /// when nothing paces it. `switch`: the mix the worker draws from, when a direction ahead of
    /// its rate may give way to another (not for `trimwrite`, whose order is fixed).
    pub fn new(iops: Option<f64>, spec: &PaceSpec, switch: Option<&Mix>, seed: u64) -> Option<Pacer> {
        let think = spec.thinktime.map(Thinker::new);
        let sched = match iops {
            Some(r) => [Some(Schedule { next_fp: 0, step_fp: (1e9 / r * FP).max(1.0) }), None, None],
            None => spec.rate.lanes().map(|r| r.map(|bps| Schedule { next_fp: 0, step_fp: 1e9 / bps as f64 * FP })),
        };
        if sched.iter().all(Option::is_none) && think.is_none() {
            return None;
        }
        let mut stand_in = [None; LANES];
        if let Some(mix) = switch {
            // Writes stand for their lane before write-zeroes and flushes (Direction order).
            for d in Direction::ALL.into_iter().filter(|&d| mix.issues(d)) {
                stand_in[LANE[d as usize]].get_or_insert(d);
            }
            if stand_in.iter().flatten().count() < 2 {
                stand_in = [None; LANES];
            }
        }
        let poisson = (spec.rate_process == RateProcess::Poisson)
            .then(|| Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x706f_6973_736f_6e00));
        Some(Pacer { sched, per_byte: iops.is_none(), stand_in, poisson, think })
    }

    /// The pacer of one of several lanes that share a worker's byte rates: each of its bandwidth
    /// schedules runs at `share` of the rate (a worker on two targets paces each at half, so the
    /// worker holds `--rate` as fio's job does over all its files). IOPS schedules are already
    /// each lane's own share of `--rate-iops`, and think time is the worker's own.
    pub fn shared(mut self, share: f64) -> Pacer {
        if self.per_byte && share > 0.0 && share < 1.0 {
            for s in self.sched.iter_mut().flatten() {
                s.step_fp /= share;
            }
        }
        self
    }

    /// Whether I/Os follow a schedule (open loop) rather than only pausing to think.
    pub fn is_open_loop(&self) -> bool {
        self.sched.iter().any(Option::is_some)
    }

    #[inline]
    fn index(&self, dir: Direction) -> usize {
        if self.per_byte { LANE[dir as usize] } else { 0 }
    }

    /// When the next paced I/O of any direction is due (ns); `None` when nothing is paced.
    #[inline]
    pub fn next_due_ns(&self) -> Option<u64> {
        self.sched.iter().flatten().map(|s| s.next_fp >> 16).min()
    }

    /// When the next I/O of `dir` is due (ns); `None` when that direction is unpaced.
    #[inline]
    pub fn due_ns(&self, dir: Direction) -> Option<u64> {
        self.sched[self.index(dir)].as_ref().map(|s| s.next_fp >> 16)
    }

    /// Decides about an I/O of `dir` at `now`, with `in_flight` I/Os out. May sleep, during the
    /// part of a think time that is not spun.
    #[inline]
    pub fn gate(&mut self, dir: Direction, now: u64, in_flight: u32) -> Gate {
        if let Some(t) = &mut self.think {
            if !t.may_issue(now, in_flight) {
                return Gate::Wait;
            }
        }
        match self.due_ns(dir) {
            None => Gate::Go(None),
            Some(d) if d <= now => Gate::Go(Some(d)),
            Some(_) => self.give_way(dir, now),
        }
    }

    /// fio's rate_ddir: a direction ahead of its rate gives way to one behind its own (or
    /// unpaced), the first in lane order; with nothing behind, the worker waits.
    fn give_way(&self, dir: Direction, now: u64) -> Gate {
        if !self.per_byte {
            return Gate::Wait;
        }
        let own = LANE[dir as usize];
        for (lane, other) in self.stand_in.iter().enumerate() {
            let Some(other) = *other else { continue };
            if lane != own && self.sched[lane].as_ref().is_none_or(|s| s.next_fp >> 16 <= now) {
                return Gate::Switch(other);
            }
        }
        Gate::Wait
    }

    /// Records that an I/O of `dir` and `len` bytes went out: its schedule moves on by one gap.
    #[inline]
    pub fn issued(&mut self, dir: Direction, len: u32) {
        if let Some(t) = &mut self.think {
            t.issued();
        }
        let i = self.index(dir);
        let per_byte = self.per_byte;
        let Some(s) = &mut self.sched[i] else { return };
        let mean = if per_byte { s.step_fp * f64::from(len) } else { s.step_fp };
        let gap = match &mut self.poisson {
            None => mean,
            Some(rng) => mean * exp1(rng),
        };
        s.next_fp += gap.max(1.0) as u64;
    }

    /// Sets the queue depth fio's loop would run the think time's count at: the worker's own, or
    /// 1 on an engine that keeps one I/O in flight whatever the depth (fio's sync engines).
    pub fn think_depth(mut self, depth: u32) -> Pacer {
        if let Some(t) = &mut self.think {
            t.depth = depth.max(1);
        }
        self
    }

    /// After the worker's last I/O has completed, the stall fio makes when that I/O made up a
    /// count (fio checks after each issue, the last one too, and its job's runtime holds that
    /// stall): `None` when none is owed, `Some(false)` while it lasts (sleeping through the part
    /// that is not spun), `Some(true)` when it has just ended.
    #[cold]
    pub fn think_last(&mut self, now: u64) -> Option<bool> {
        let t = self.think.as_mut()?;
        if !t.made_up() {
            return None;
        }
        // Nothing is issued after it, so nothing carries over to a count after it.
        t.outstanding = 0;
        Some(t.stall(now, 0))
    }

    /// Restarts every schedule at `start_ns` (after the ramp), and the think time's count from 0,
    /// as fio's `reset_all_stats` zeroes it (but not the count at the last stall: fio thinks
    /// again only once the count passes that, so the I/Os of the ramp go out once more unthrottled).
    pub fn restart(&mut self, start_ns: u64) {
        if let Some(t) = &mut self.think {
            t.counted = 0;
        }
        for s in self.sched.iter_mut().flatten() {
            s.next_fp = start_ns << 16;
        }
    }
}

/// A draw of the exponential distribution with mean 1.
#[inline]
fn exp1(rng: &mut Xoshiro256PlusPlus) -> f64 {
    // 53 random bits in (0, 1]: never ln(0).
    let u = ((rng.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64);
    -u.ln()
}

/// The think-time count.
///
/// Counted at completion, it follows fio's loop rather than the engine's reaping, so that it stalls
/// where fio stalls whatever the device's speed: fio issues until its queue is full, then reaps one
/// completion per issue (its defaults `iodepth_batch_complete_min` and `_max` of 1) and checks
/// the count after each issue. The I/Os it finds in flight when it decides to think complete while
/// it waits for them, and count toward the next stall (fio's `last_thinktime_blocks` is the count
/// before that wait).
#[derive(Clone, Debug)]
struct Thinker {
    blocks: u32,
    count: ThinkCount,
    /// I/Os counted since the start, or since the ramp's end (fio's `io_blocks` or `io_issues`).
    counted: u64,
    /// `counted` when the last stall was decided (fio's `last_thinktime_blocks`), which the ramp's
    /// end does not reset: fio then counts from 0 again and thinks only once the count passes it.
    last: u64,
    /// fio's queue depth.
    depth: u32,
    /// I/Os in fio's queue, issued and not yet reaped by its loop (at completion only).
    outstanding: u32,
    think_ns: u64,
    spin_ns: u64,
    /// When the current stall began.
    since: Option<u64>,
}

impl Thinker {
    fn new(t: ThinkTime) -> Thinker {
        Thinker {
            blocks: t.blocks.max(1),
            count: t.count,
            counted: 0,
            last: 0,
            depth: 1,
            outstanding: 0,
            think_ns: t.think.as_nanos() as u64,
            spin_ns: t.spin.min(t.think).as_nanos() as u64,
            since: None,
        }
    }

    #[inline]
    fn issued(&mut self) {
        match self.count {
            ThinkCount::Issue => self.counted += 1,
            ThinkCount::Complete => {
                self.outstanding += 1;
                if self.outstanding >= self.depth {
                    // fio's queue is full: it reaps one.
                    self.outstanding -= 1;
                    self.counted += 1;
                }
            }
        }
    }

    #[inline]
    fn may_issue(&mut self, now: u64, in_flight: u32) -> bool {
        !self.made_up() || self.stall(now, in_flight)
    }

    /// Whether the I/Os counted since the last stall make up `blocks`.
    #[inline]
    fn made_up(&self) -> bool {
        self.counted >= self.last + u64::from(self.blocks)
    }

    /// The count is made up: wait for the queue to drain, then think (spin, then sleep).
    #[cold]
    fn stall(&mut self, now: u64, in_flight: u32) -> bool {
        let start = match self.since {
            Some(s) => s,
            None if in_flight > 0 => return false,
            None => *self.since.insert(now),
        };
        let end = start + self.think_ns;
        if now >= end {
            self.since = None;
            // What fio reaped while it waited counts toward the next stall.
            self.last = self.counted;
            self.counted += u64::from(self.outstanding);
            self.outstanding = 0;
            return true;
        }
        if now >= start + self.spin_ns {
            std::thread::sleep(Duration::from_nanos(end - now));
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iops(rate: f64, process: RateProcess) -> Pacer {
        Pacer::new(Some(rate), &PaceSpec::new(ByteRate::default(), process, None), None, 1).unwrap()
    }

    #[test]
    fn schedule_does_not_drift() {
        let mut p = iops(3.0, RateProcess::Linear);
        for _ in 0..3_000 {
            p.issued(Direction::Read, 4096);
        }
        // 3000 I/Os at 3/s end at 1000 s to within a nanosecond.
        let due = p.due_ns(Direction::Read).unwrap();
        assert!((due as i64 - 1_000_000_000_000).abs() <= 1, "{due}");
    }

    #[test]
    fn restart_moves_the_origin() {
        let mut p = iops(1000.0, RateProcess::Linear);
        p.issued(Direction::Read, 0);
        p.restart(5_000);
        assert_eq!(p.due_ns(Direction::Write), Some(5_000));
        p.issued(Direction::Write, 0);
        assert_eq!(p.due_ns(Direction::Read), Some(1_005_000));
    }

    #[test]
    fn bandwidth_is_paced_per_direction_and_per_byte() {
        let rw = Mix::read_write(50);
        let spec = PaceSpec::new(ByteRate::parse("1m,256k").unwrap(), RateProcess::Linear, None);
        let mut p = Pacer::new(None, &spec, Some(&rw), 1).unwrap();
        for _ in 0..256 {
            p.issued(Direction::Read, 4096);
            p.issued(Direction::Write, 1024);
        }
        // 1 MiB at 1 MiB/s, and 256 KiB at 256 KiB/s: both a second.
        assert!(p.due_ns(Direction::Read).unwrap().abs_diff(1_000_000_000) <= 1);
        assert!(p.due_ns(Direction::Write).unwrap().abs_diff(1_000_000_000) <= 1);
        // An 8 KiB read takes twice a 4 KiB read's share of time.
        p.restart(0);
        p.issued(Direction::Read, 8192);
        assert!(p.due_ns(Direction::Read).unwrap().abs_diff(7_812_500) <= 1);
    }

    #[test]
    fn fio_rate_iops_is_per_direction_and_paced_in_bytes() {
        let r = IopsRate::parse("1000").unwrap();
        assert_eq!((r.read, r.write, r.trim), (Some(1000.0), Some(1000.0), Some(1000.0)));
        let r = IopsRate::parse("1000,").unwrap();
        assert_eq!((r.read, r.write, r.trim), (Some(1000.0), None, None));
        let b = IopsRate::parse(",50,2").unwrap().in_bytes([4096, 512, 1 << 20]);
        assert_eq!(b, ByteRate { read: None, write: Some(50 * 512), trim: Some(2 << 20) });
        assert!(IopsRate::parse("0").unwrap_err().contains("above 0"));
        assert!(IopsRate::parse(",,").unwrap_err().contains("gives no rate"));
        assert!(IopsRate::parse("1,2,3,4").unwrap_err().contains("more than three"));
    }

    #[test]
    fn lanes_sharing_a_workers_rate_each_take_their_share() {
        let spec = PaceSpec::new(ByteRate::parse("1m").unwrap(), RateProcess::Linear, None);
        // A worker on two targets: each lane at half of 1 MiB/s, so 512 KiB take a lane a second.
        let mut p = Pacer::new(None, &spec, None, 1).unwrap().shared(0.5);
        for _ in 0..128 {
            p.issued(Direction::Read, 4096);
        }
        assert!(p.due_ns(Direction::Read).unwrap().abs_diff(1_000_000_000) <= 1);
        // IOPS schedules are already each lane's own share of --rate-iops.
        let mut p = iops(1000.0, RateProcess::Linear).shared(0.5);
        p.issued(Direction::Read, 4096);
        assert_eq!(p.due_ns(Direction::Read), Some(1_000_000));
    }

    #[test]
    fn a_direction_ahead_gives_way_to_one_behind() {
        let rw = Mix::read_write(50);
        let spec = PaceSpec::new(ByteRate::parse("1m,1m").unwrap(), RateProcess::Linear, None);
        let mut p = Pacer::new(None, &spec, Some(&rw), 1).unwrap();
        p.issued(Direction::Read, 1 << 20);
        assert_eq!(p.gate(Direction::Read, 10, 0), Gate::Switch(Direction::Write));
        assert_eq!(p.gate(Direction::Write, 10, 0), Gate::Go(Some(0)));
        p.issued(Direction::Write, 1 << 20);
        assert_eq!(p.gate(Direction::Read, 10, 0), Gate::Wait);
        // Writes unpaced (`100m,`): always free, so a waiting read gives way to them.
        let spec = PaceSpec::new(ByteRate::parse("1m,").unwrap(), RateProcess::Linear, None);
        let mut p = Pacer::new(None, &spec, Some(&rw), 1).unwrap();
        p.issued(Direction::Read, 1 << 20);
        assert_eq!(p.gate(Direction::Read, 10, 0), Gate::Switch(Direction::Write));
        assert_eq!(p.gate(Direction::Write, 10, 0), Gate::Go(None));
        // Reads only, or switching off (trimwrite): no switching.
        for switch in [Some(&Mix::read_write(100)), None] {
            let mut p = Pacer::new(None, &spec, switch, 1).unwrap();
            p.issued(Direction::Read, 1 << 20);
            assert_eq!(p.gate(Direction::Read, 10, 0), Gate::Wait);
        }
    }

    #[test]
    fn trims_have_their_own_schedule() {
        // `1m,256k`: trims take the write rate, on a schedule of their own.
        let spec = PaceSpec::new(ByteRate::parse("1m,256k").unwrap(), RateProcess::Linear, None);
        let mix = Mix::parse("read=50,write=20,trim=20,write-zeroes=5,flush=5").unwrap();
        let mut p = Pacer::new(None, &spec, Some(&mix), 1).unwrap();
        for _ in 0..64 {
            p.issued(Direction::Trim, 4096);
        }
        assert!(p.due_ns(Direction::Trim).unwrap().abs_diff(1_000_000_000) <= 1);
        assert_eq!(p.due_ns(Direction::Write), Some(0), "trims leave the write schedule alone");
        // Write-zeroes share the write schedule; a flush (no bytes) moves it by nothing.
        p.issued(Direction::WriteZeroes, 4096);
        p.issued(Direction::Flush, 0);
        assert!(p.due_ns(Direction::Write).unwrap().abs_diff(15_625_000) <= 1);
        assert_eq!(p.due_ns(Direction::Flush), p.due_ns(Direction::WriteZeroes));
        // Trims ahead give way to reads, then to writes once reads are ahead too.
        assert_eq!(p.gate(Direction::Trim, 10, 0), Gate::Switch(Direction::Read));
        p.issued(Direction::Read, 1 << 20);
        assert_eq!(p.gate(Direction::Trim, 10, 0), Gate::Wait);
        assert_eq!(p.gate(Direction::Trim, 15_625_000, 0), Gate::Switch(Direction::Write));
        // A lane the mix does not issue is never switched to.
        let mix = Mix::parse("read=50,trim=50").unwrap();
        let spec = PaceSpec::new(ByteRate::parse(",,1m").unwrap(), RateProcess::Linear, None);
        let mut p = Pacer::new(None, &spec, Some(&mix), 1).unwrap();
        p.issued(Direction::Trim, 1 << 20);
        assert_eq!(p.gate(Direction::Trim, 10, 0), Gate::Switch(Direction::Read));
        assert_eq!(p.gate(Direction::Read, 10, 0), Gate::Go(None));
        assert_eq!(p.gate(Direction::Write, 10, 0), Gate::Go(None), "writes are unpaced");
        // The same mix, trims and writes only: write-zeroes stand in for their lane.
        let mix = Mix::parse("write-zeroes=50,trim=50").unwrap();
        let mut p = Pacer::new(None, &spec, Some(&mix), 1).unwrap();
        p.issued(Direction::Trim, 1 << 20);
        assert_eq!(p.gate(Direction::Trim, 10, 0), Gate::Switch(Direction::WriteZeroes));
    }

    #[test]
    fn poisson_gaps_have_the_mean_and_the_spread_of_an_exponential() {
        let mut p = iops(10_000.0, RateProcess::Poisson);
        let n = 200_000;
        let mut gaps = Vec::with_capacity(n);
        let mut last = p.due_ns(Direction::Read).unwrap() as f64;
        for _ in 0..n {
            p.issued(Direction::Read, 4096);
            let due = p.due_ns(Direction::Read).unwrap() as f64;
            gaps.push(due - last);
            last = due;
        }
        let mean = gaps.iter().sum::<f64>() / n as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n as f64;
        let cv = var.sqrt() / mean;
        // 100 µs mean gap; an exponential's coefficient of variation is 1 (linear pacing's is 0).
        assert!((mean - 100_000.0).abs() < 1_000.0, "mean {mean}");
        assert!((cv - 1.0).abs() < 0.02, "cv {cv}");
        // Seeded: the same seed draws the same gaps.
        let mut a = iops(10_000.0, RateProcess::Poisson);
        let mut b = iops(10_000.0, RateProcess::Poisson);
        for _ in 0..100 {
            a.issued(Direction::Read, 0);
            b.issued(Direction::Read, 0);
        }
        assert_eq!(a.due_ns(Direction::Read), b.due_ns(Direction::Read));
        let mut lin = iops(10_000.0, RateProcess::Linear);
        lin.issued(Direction::Read, 0);
        assert_eq!(lin.due_ns(Direction::Read), Some(100_000));
    }

    #[test]
    fn think_time_waits_for_the_queue_to_drain_then_stalls() {
        let t = ThinkTime {
            think: Duration::from_micros(100),
            spin: Duration::from_micros(100),
            blocks: 2,
            count: ThinkCount::Issue,
        };
        let spec = PaceSpec::new(ByteRate::default(), RateProcess::Linear, Some(t));
        let mut p = Pacer::new(None, &spec, None, 1).unwrap();
        assert!(!p.is_open_loop());
        assert_eq!(p.gate(Direction::Read, 0, 0), Gate::Go(None));
        p.issued(Direction::Read, 4096);
        assert_eq!(p.gate(Direction::Read, 0, 1), Gate::Go(None));
        p.issued(Direction::Read, 4096);
        // Two issued: nothing more while they are in flight, nor for 100 µs after the queue drained.
        assert_eq!(p.gate(Direction::Read, 50_000, 2), Gate::Wait);
        assert_eq!(p.gate(Direction::Read, 60_000, 0), Gate::Wait);
        assert_eq!(p.gate(Direction::Read, 159_999, 0), Gate::Wait);
        assert_eq!(p.gate(Direction::Read, 160_000, 0), Gate::Go(None));
        p.issued(Direction::Read, 4096);
        assert_eq!(p.gate(Direction::Read, 160_001, 1), Gate::Go(None));
    }

    /// A thinker of 1 µs (all spun, so nothing sleeps) counting `count` at `depth`, `blocks` apart.
    fn thinker(count: ThinkCount, depth: u32, blocks: u32) -> Pacer {
        let t = ThinkTime { think: Duration::from_micros(1), spin: Duration::from_micros(1), blocks, count };
        let spec = PaceSpec::new(ByteRate::default(), RateProcess::Linear, Some(t));
        Pacer::new(None, &spec, None, 1).unwrap().think_depth(depth)
    }

    /// Issues `n` I/Os through the pacer, each stall taken whole with nothing in flight, the one
    /// after the last I/O too: the stalls made, and the issues before each of the first three.
    fn stalls(mut p: Pacer, n: u32) -> (u32, Vec<u32>) {
        let (mut now, mut stalls, mut since, mut gaps) = (0u64, 0, 0, Vec::new());
        for _ in 0..n {
            if p.gate(Direction::Read, now, 0) == Gate::Wait {
                stalls += 1;
                gaps.push(since);
                since = 0;
                now += 1_000;
                assert_eq!(p.gate(Direction::Read, now, 0), Gate::Go(None), "a stall lasts its think time");
            }
            p.issued(Direction::Read, 4096);
            since += 1;
        }
        if p.think_last(now) == Some(false) {
            stalls += 1;
            assert_eq!(p.think_last(now + 1_000), Some(true));
        }
        assert_eq!(p.think_last(now + 2_000), None, "one stall at the end at most");
        gaps.truncate(3);
        (stalls, gaps)
    }

    /// fio 3.33 on 256 I/Os: counted at issue, a stall every thinktime_blocks I/Os, the last one's
    /// too; counted at completion, where fio reaps one completion per issue once its queue is
    /// full, and the I/Os in flight at a stall count toward the next, 46 stalls at iodepth=8 and
    /// thinktime_blocks=4 (fio's runtimes: 64 and 46 think times), 26 at iodepth=16, 31 at
    /// thinktime_blocks=8, 249 at thinktime_blocks=1. At depth 1 (a sync engine) the two agree.
    #[test]
    fn think_time_counts_as_fio_counts() {
        assert_eq!(stalls(thinker(ThinkCount::Issue, 8, 4), 256), (64, vec![4, 4, 4]));
        // Full at the 8th issue, then a completion per issue: 4 counted at the 11th; the 7 in
        // flight then count toward the next, made up after one issue.
        assert_eq!(stalls(thinker(ThinkCount::Complete, 8, 4), 256), (46, vec![11, 1, 10]));
        assert_eq!(stalls(thinker(ThinkCount::Complete, 16, 4), 256).0, 26);
        assert_eq!(stalls(thinker(ThinkCount::Complete, 8, 8), 256).0, 31);
        assert_eq!(stalls(thinker(ThinkCount::Complete, 8, 1), 256).0, 249);
        assert_eq!(stalls(thinker(ThinkCount::Complete, 4, 4), 256).0, 63);
        assert_eq!(stalls(thinker(ThinkCount::Complete, 1, 4), 256), stalls(thinker(ThinkCount::Issue, 1, 4), 256));
        // Fewer I/Os than fill the queue: fio reaps none before the end, so never thinks.
        assert_eq!(stalls(thinker(ThinkCount::Complete, 8, 4), 5).0, 0);
        assert_eq!(stalls(thinker(ThinkCount::Issue, 8, 4), 5).0, 1);
    }

    /// fio zeroes its count at the ramp's end but not the count at its last stall, so after the
    /// ramp it thinks again only once as many I/Os as the ramp's have gone out.
    #[test]
    fn after_the_ramp_fio_thinks_once_the_count_passes_the_ramps() {
        let mut p = thinker(ThinkCount::Issue, 1, 1);
        assert_eq!(stalls(p.clone(), 10).0, 10);
        let mut now = 0;
        for _ in 0..10 {
            if p.gate(Direction::Read, now, 0) == Gate::Wait {
                now += 1_000;
                assert_eq!(p.gate(Direction::Read, now, 0), Gate::Go(None));
            }
            p.issued(Direction::Read, 4096);
        }
        p.restart(now);
        assert_eq!(stalls(p, 20), (11, vec![10, 1, 1]), "10 before the first, then one after each I/O");
    }

    #[test]
    fn thinktime_blocks_type_takes_fios_words() {
        assert_eq!(ThinkCount::parse("complete"), Ok(ThinkCount::Complete));
        assert_eq!(ThinkCount::parse("issue"), Ok(ThinkCount::Issue));
        assert_eq!(ThinkCount::default(), ThinkCount::Complete, "fio's default");
        assert_eq!(
            ThinkCount::parse("issued").unwrap_err(),
            "'issued' is not a thinktime_blocks_type; use complete (fio's default) or issue"
        );
    }

    #[test]
    fn parses_fio_rates_and_think_times() {
        let rate = |r, w, t| ByteRate { read: r, write: w, trim: t };
        let (m100, m20, m5) = (Some(100 << 20), Some(20 << 20), Some(5 << 20));
        // fio's rules: a value not followed by a comma carries on; an empty one leaves its
        // direction unpaced.
        for (text, want) in [
            ("100m", rate(m100, m100, m100)),
            ("100m,20m", rate(m100, m20, m20)),
            ("100m,20m,5m", rate(m100, m20, m5)),
            ("100m,20m,", rate(m100, m20, None)),
            (",20m", rate(None, m20, m20)),
            (",20m,", rate(None, m20, None)),
            (",,5m", rate(None, None, m5)),
            ("100m,", rate(m100, None, None)),
            ("100m,,5m", rate(m100, None, m5)),
        ] {
            let r = ByteRate::parse(text).unwrap();
            assert_eq!(r, want, "{text}");
            assert_eq!(ByteRate::parse(&r.to_fio()).unwrap(), r, "{text} -> {}", r.to_fio());
        }
        assert_eq!(rate(m100, m20, m5).of(Direction::WriteZeroes), m20, "write-zeroes take the write rate");
        assert_eq!(rate(m100, m20, m5).of(Direction::Trim), m5);
        assert_eq!(ByteRate::parse("100m,20m,").unwrap().to_fio(), "100m,20m,");
        assert_eq!(ByteRate::parse("1k,").unwrap().to_fio(), "1k,");
        assert!(ByteRate::parse("0").unwrap_err().contains("a rate of 0 paces nothing"));
        assert!(ByteRate::parse("fast").unwrap_err().contains("is not a rate"));
        assert!(ByteRate::parse(",").unwrap_err().contains("gives no rate"));
        assert!(ByteRate::parse(",,").unwrap_err().contains("gives no rate"));
        assert_eq!(
            ByteRate::parse("1m,1m,1m,1m").unwrap_err(),
            "'1m,1m,1m,1m' gives more than three rates; write READ[,WRITE[,TRIM]] bytes per second, like 100m,20m,5m"
        );
        assert!(parse_think("soon").is_err());
        assert_eq!(RateProcess::parse("poisson"), Ok(RateProcess::Poisson));
        assert!(RateProcess::parse("bursty").unwrap_err().contains("linear or poisson"));
    }

    /// A think time without a unit is microseconds, as fio reads it, whole or not at all; with a
    /// unit, nvmebench's own flags take it exactly.
    #[test]
    fn a_think_time_without_a_unit_is_whole_microseconds() {
        assert_eq!(parse_think("100").unwrap(), Duration::from_micros(100));
        assert_eq!(parse_think("100.0").unwrap(), Duration::from_micros(100), "fio reads what it says");
        assert_eq!(parse_think("100.").unwrap(), Duration::from_micros(100));
        assert_eq!(parse_think("2ms").unwrap(), Duration::from_millis(2));
        assert_eq!(parse_think("1.5ms").unwrap(), Duration::from_micros(1500), "fractions with a unit");
        assert_eq!(parse_think("1.5us").unwrap(), Duration::from_nanos(1500));
        assert_eq!(parse_think("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(
            parse_think("1.5").unwrap_err(),
            "'1.5' has no unit, so it is microseconds, which fio reads only as a whole number (it stops at the '.'); give the unit, like 1.5us or 1.5s"
        );
        for t in ["0.5", ".5", "1.05"] {
            assert!(parse_think(t).unwrap_err().starts_with(&format!("'{t}' has no unit")), "{t}");
        }
        assert!(parse_think("1.2.3").unwrap_err().contains("is not a duration"));
    }
}

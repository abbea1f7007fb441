//! The meeting in the fleet's directory: a process claims its rank, sets up, announces itself with
//! its clock sample, and waits for the start moment rank 0 writes once every rank has announced
//! itself (or the wait ran out); rank 0 calls the fleet off, for everyone, when a rank is taken
//! twice, the ranks disagree on the fleet's size, or the clocks disagree beyond the ramp.
//!
//! It decides when the gate opens; the coordinator opens it, and `gather` merges what came of it.

use super::clock::{self, ClockSample};
use super::{FleetError, FleetPlan};
use crate::coordinator::{GateRefusal, StartGate};
use crate::report::doc::{FleetMemberDoc, FleetMissingDoc, FleetSkewDoc};
use crate::report::format_latency;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The gate file's name.
pub const GATE: &str = "gate";

/// A process's claim on its rank (`rank-R.claim`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClaimFile {
    pub rank: u64,
    pub size: u64,
    pub launcher: String,
    pub host: String,
    pub pid: u32,
}

/// A process ready to start (`rank-R.ready`): set up, with its clock against the filesystem's.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReadyFile {
    #[serde(flatten)]
    pub claim: ClaimFile,
    pub clock_offset_ns: i64,
    pub clock_uncertainty_ns: u64,
    pub ramp_ns: u64,
    pub interval_ns: u64,
    /// Ramp plus runtime; `None` for a run bounded by its I/O count.
    pub planned_ns: Option<u64>,
}

/// A process that will not start (`rank-R.failed`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FailedFile {
    #[serde(flatten)]
    pub claim: ClaimFile,
    pub why: String,
}

/// A second process with a taken rank (`dup-R-HOST-PID`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DupFile {
    #[serde(flatten)]
    pub claim: ClaimFile,
    /// Who holds the rank, as far as its claim could be read.
    pub taken_by: Option<ClaimFile>,
}

/// Rank 0's decision (`gate`): the start moment and who is in, or why the fleet was called off.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct GateFile {
    #[serde(default)]
    pub start_at_unix_ns: Option<u64>,
    #[serde(default)]
    pub called_off: Option<String>,
    /// The ranks that announced themselves in time: the fleet.
    #[serde(default)]
    pub ranks: Vec<u64>,
    /// Their announcements.
    #[serde(default)]
    pub announced: Vec<ReadyFile>,
    #[serde(default)]
    pub missing: Vec<FleetMissingDoc>,
    #[serde(default)]
    pub largest_skew: Option<FleetSkewDoc>,
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// What the run tells the rendezvous about itself, for its announcement.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    pub ramp: Duration,
    pub interval: Duration,
    /// Ramp plus runtime; `None` when the I/O count bounds the run.
    pub planned: Option<Duration>,
}

/// What the gate learnt, for the result and for rank 0's gathering.
#[derive(Clone, Debug, Default)]
pub struct Met {
    pub sample: Option<ClockSample>,
    pub gate: Option<GateFile>,
}

/// This process, having claimed its rank in the fleet's directory.
pub struct Member {
    pub plan: FleetPlan,
    met: Arc<Mutex<Met>>,
}

pub fn unix_ns(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

fn io<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> FleetError + 'a {
    move |error| FleetError::Io { what, path: path.display().to_string(), error }
}

/// A temporary name beside `path`, this process's own.
fn temporary(plan: &FleetPlan, path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.{}.tmp", plan.host, plan.pid))
}

/// Writes `bytes` whole under a temporary name and moves it to `path` (replacing it when `replace`,
/// otherwise by `link`, which fails when `path` exists). `Ok(false)`: `path` existed.
pub fn write_whole(plan: &FleetPlan, path: &Path, bytes: &[u8], replace: bool) -> Result<bool, FleetError> {
    let tmp = temporary(plan, path);
    let written = std::fs::File::create(&tmp).and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io("write", &tmp)(e));
    }
    let moved = if replace { std::fs::rename(&tmp, path) } else { std::fs::hard_link(&tmp, path) };
    let _ = std::fs::remove_file(&tmp);
    match moved {
        Ok(()) => Ok(true),
        Err(e) if !replace && e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(io("write", path)(e)),
    }
}

fn json<T: Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec_pretty(v).expect("a fleet file always serialises")
}

/// Reads and parses `path`; `None` when it does not exist (yet).
fn read<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>, FleetError> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| FleetError::Io {
            what: "read",
            path: path.display().to_string(),
            error: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io("read", path)(e)),
    }
}

/// The fleet's gate file in `dir`, when rank 0 has written one.
///
/// # Errors
/// It exists but cannot be read.
pub fn read_gate(dir: &Path) -> Result<Option<GateFile>, FleetError> {
    read(&dir.join(GATE))
}

/// How often the waits look at the directory: every 25 ms for a few processes, less often for
/// many (every look is a metadata request on a shared filesystem), at most every half second.
fn poll(size: u64) -> Duration {
    Duration::from_millis((25 * size.div_ceil(8)).clamp(25, 500))
}

/// `rank R (host, pid P)`.
fn who(c: &ClaimFile) -> String {
    format!("rank {} ({}, pid {})", c.rank, c.host, c.pid)
}

impl Member {
    /// Claims this process's rank in the fleet's directory.
    ///
    /// # Errors
    /// The rank is taken (the other process is named, and rank 0 is told to call the fleet off),
    /// or the directory cannot be written.
    pub fn claim(plan: FleetPlan) -> Result<Member, FleetError> {
        let me = claim_of(&plan);
        let path = plan.path(&format!("rank-{}.claim", me.rank));
        if !write_whole(&plan, &path, &json(&me), false)? {
            let taken_by: Option<ClaimFile> = read(&path).ok().flatten();
            let dup = plan.path(&format!("dup-{}-{}-{}", me.rank, plan.host, plan.pid));
            let _ = write_whole(&plan, &dup, &json(&DupFile { claim: me.clone(), taken_by: taken_by.clone() }), true);
            let holder =
                taken_by.map_or_else(|| "another process".to_string(), |t| format!("{}, pid {}", t.host, t.pid));
            return Err(FleetError::Usage(format!(
                "rank {} is already taken in {} by {holder}: two processes were given rank {}, or the directory holds an earlier fleet's files; the fleet is called off; give each process its own rank, in an empty directory",
                me.rank,
                plan.dir.display(),
                me.rank
            )));
        }
        Ok(Member { plan, met: Arc::default() })
    }

    /// The start gate the coordinator asks once this process is set up.
    pub fn gate(&self, timing: Timing) -> Box<dyn StartGate> {
        Box::new(Gate { plan: self.plan.clone(), timing, met: self.met.clone() })
    }

    /// What the gate learnt.
    pub fn met(&self) -> Met {
        self.met.lock().expect("no gate panics holding the lock").clone()
    }

    /// Tells the fleet this process will not start, and why (its set-up failed); rank 0 calls
    /// the fleet off. Best effort: the process is failing already.
    pub fn failed(&self, why: &str) {
        if self.met().gate.is_some() {
            return;
        }
        let _ = tell_failed(&self.plan, why);
    }

    /// This process's place in the fleet, for its result: `None` before the gate opened.
    pub fn doc(&self, started_at: SystemTime) -> Option<FleetMemberDoc> {
        let met = self.met();
        let (sample, start) = (met.sample?, met.gate?.start_at_unix_ns?);
        let m = self.plan.member;
        Some(FleetMemberDoc {
            launcher: m.launcher.name().into(),
            rank: m.rank,
            size: m.size,
            dir: self.plan.dir.display().to_string(),
            pid: self.plan.pid,
            clock_offset_ns: sample.offset_ns,
            clock_uncertainty_ns: sample.uncertainty_ns,
            start_at_unix_ns: start,
            gate_late_ns: unix_ns(started_at) as i64 - start as i64,
        })
    }
}

fn claim_of(plan: &FleetPlan) -> ClaimFile {
    ClaimFile {
        rank: plan.member.rank,
        size: plan.member.size,
        launcher: plan.member.launcher.name().into(),
        host: plan.host.clone(),
        pid: plan.pid,
    }
}

/// Writes `rank-R.failed`, or for rank 0 a gate that calls the fleet off.
fn tell_failed(plan: &FleetPlan, why: &str) -> Result<(), FleetError> {
    let me = claim_of(plan);
    if me.rank == 0 {
        let off = GateFile {
            called_off: Some(format!("rank 0 ({}, pid {}) did not start: {why}", me.host, me.pid)),
            ..Default::default()
        };
        write_whole(plan, &plan.path(GATE), &json(&off), false).map(drop)
    } else {
        let path = plan.path(&format!("rank-{}.failed", me.rank));
        write_whole(plan, &path, &json(&FailedFile { claim: me, why: why.into() }), true).map(drop)
    }
}

/// The coordinator's start gate for a fleet's process.
struct Gate {
    plan: FleetPlan,
    timing: Timing,
    met: Arc<Mutex<Met>>,
}

fn ns(d: Duration) -> u64 {
    d.as_nanos().min(u128::from(u64::MAX)) as u64
}

impl StartGate for Gate {
    fn moment(&mut self, signal: &AtomicUsize) -> Result<SystemTime, GateRefusal> {
        let refused = |e: FleetError| GateRefusal::Refused(Box::new(e));
        let ready = self.announce().map_err(refused)?;
        let gate = if self.plan.member.rank == 0 { self.decide(ready, signal) } else { self.await_gate(signal) }?;
        let at =
            UNIX_EPOCH + Duration::from_nanos(gate.start_at_unix_ns.expect("a gate that lets runs start has a moment"));
        self.met.lock().expect("no gate panics holding the lock").gate = Some(gate);
        Ok(at)
    }
}

impl Gate {
    /// Samples the clock on a file of this process's own in the directory and announces itself.
    fn announce(&mut self) -> Result<ReadyFile, FleetError> {
        let path = self.plan.path(&format!("rank-{}.ready", self.plan.member.rank));
        let tmp = temporary(&self.plan, &path).with_extension("clock");
        let sampled = std::fs::File::create(&tmp).and_then(|f| clock::sample(&f));
        let _ = std::fs::remove_file(&tmp);
        let sample = sampled.map_err(io("stamp a file in", &self.plan.dir))?;
        self.met.lock().expect("no gate panics holding the lock").sample = Some(sample);
        let ready = ReadyFile {
            claim: claim_of(&self.plan),
            clock_offset_ns: sample.offset_ns,
            clock_uncertainty_ns: sample.uncertainty_ns,
            ramp_ns: ns(self.timing.ramp),
            interval_ns: ns(self.timing.interval),
            planned_ns: self.timing.planned.map(ns),
        };
        write_whole(&self.plan, &path, &json(&ready), true)?;
        Ok(ready)
    }

    /// Any rank but 0: waits for rank 0's gate, at most twice the timeout.
    fn await_gate(&self, signal: &AtomicUsize) -> Result<GateFile, GateRefusal> {
        let refused = |e: FleetError| GateRefusal::Refused(Box::new(e));
        let wait = self.plan.timeout * 2;
        let deadline = Instant::now() + wait;
        let every = poll(self.plan.member.size);
        let rank = self.plan.member.rank;
        loop {
            if let Some(gate) = read_gate(&self.plan.dir).map_err(refused)? {
                if let Some(why) = gate.called_off {
                    return Err(refused(FleetError::CalledOff(format!("the fleet was called off: {why}"))));
                }
                if !gate.ranks.contains(&rank) {
                    return Err(refused(FleetError::CalledOff(format!(
                        "rank 0 started the fleet in {} without rank {rank}, which announced itself after rank 0 stopped waiting; start every process of a fleet together (or give a longer --fleet-timeout)",
                        self.plan.dir.display()
                    ))));
                }
                return Ok(gate);
            }
            if let sig @ 1.. = signal.load(Ordering::Relaxed) {
                let _ = tell_failed(&self.plan, &format!("interrupted by signal {sig} before the start"));
                return Err(GateRefusal::Interrupted(sig as i32));
            }
            if Instant::now() >= deadline {
                let why = format!("gave up waiting for rank 0's start moment after {:.0} s", wait.as_secs_f64());
                let _ = tell_failed(&self.plan, &why);
                return Err(refused(FleetError::CalledOff(format!(
                    "rank 0 set no start moment in {} within {:.0} s; is rank 0 running, with --fleet on this same directory? (this process gave up)",
                    self.plan.dir.display(),
                    wait.as_secs_f64()
                ))));
            }
            std::thread::sleep(every);
        }
    }

    /// Rank 0: waits for every rank (at most the timeout), then calls the fleet off or sets the
    /// start moment.
    fn decide(&self, own: ReadyFile, signal: &AtomicUsize) -> Result<GateFile, GateRefusal> {
        let plan = &self.plan;
        let size = plan.member.size;
        let deadline = Instant::now() + plan.timeout;
        let every = poll(size);
        let mut ready: BTreeMap<u64, ReadyFile> = BTreeMap::from([(0, own)]);
        let mut failed: BTreeMap<u64, FailedFile> = BTreeMap::new();
        let mut claims: BTreeMap<u64, ClaimFile> = BTreeMap::new();
        let call_off = |why: String| -> GateRefusal {
            let off = GateFile { called_off: Some(why.clone()), ..Default::default() };
            match write_whole(plan, &plan.path(GATE), &json(&off), true) {
                Ok(_) => {
                    GateRefusal::Refused(Box::new(FleetError::CalledOff(format!("the fleet is called off: {why}"))))
                }
                Err(e) => GateRefusal::Refused(Box::new(e)),
            }
        };
        loop {
            let names = list(&plan.dir).map_err(|e| GateRefusal::Refused(Box::new(e)))?;
            for name in &names {
                let path = plan.path(name);
                if let Some(dup) = name.strip_prefix("dup-") {
                    let d: Option<DupFile> = read(&path).ok().flatten();
                    let why = match d {
                        Some(d) => format!(
                            "two processes were given rank {}: {} and {}, pid {}; give each process its own rank",
                            d.claim.rank,
                            d.taken_by.map_or_else(
                                || "one whose claim cannot be read".into(),
                                |t| format!("{}, pid {}", t.host, t.pid)
                            ),
                            d.claim.host,
                            d.claim.pid
                        ),
                        None => {
                            format!("two processes were given the same rank ({dup}); give each process its own rank")
                        }
                    };
                    return Err(call_off(why));
                }
                let Some((rank, kind)) = rank_file(name) else { continue };
                if rank >= size {
                    return Err(call_off(format!(
                        "{name} is a rank outside a fleet of {size}; every process must be given the same fleet size"
                    )));
                }
                match kind {
                    "claim" if !claims.contains_key(&rank) => {
                        if let Ok(Some(c)) = read::<ClaimFile>(&path) {
                            claims.insert(rank, c);
                        }
                    }
                    "ready" if !ready.contains_key(&rank) => {
                        if let Ok(Some(r)) = read::<ReadyFile>(&path) {
                            ready.insert(rank, r);
                        }
                    }
                    "failed" if !failed.contains_key(&rank) => {
                        if let Ok(Some(f)) = read::<FailedFile>(&path) {
                            failed.insert(rank, f);
                        }
                    }
                    _ => {}
                }
            }
            for c in claims.values().chain(ready.values().map(|r| &r.claim)) {
                if c.size != size {
                    return Err(call_off(format!(
                        "{} was started for a fleet of {}, rank 0 for one of {size}; every process must be given the same fleet size",
                        who(c),
                        c.size
                    )));
                }
            }
            let settled = (0..size).all(|r| ready.contains_key(&r) || failed.contains_key(&r));
            if settled || Instant::now() >= deadline {
                break;
            }
            if let sig @ 1.. = signal.load(Ordering::Relaxed) {
                let _ = call_off(format!("rank 0 was interrupted by signal {sig} before the start"));
                return Err(GateRefusal::Interrupted(sig as i32));
            }
            std::thread::sleep(every);
        }
        // A rank that failed after it announced itself is out.
        for r in failed.keys() {
            ready.remove(r);
        }
        let announced: Vec<ReadyFile> = ready.values().cloned().collect();
        let (largest_skew, verdict) = skew(&announced);
        if let Some(SkewVerdict::Error(why)) = &verdict {
            return Err(call_off(why.clone()));
        }
        let waited = plan.timeout.as_secs_f64();
        let missing = (0..size)
            .filter(|r| !ready.contains_key(r))
            .map(|rank| FleetMissingDoc {
                rank,
                why: match (failed.get(&rank), claims.get(&rank)) {
                    (Some(f), _) => format!("{} did not start: {}", who(&f.claim), f.why),
                    (None, Some(c)) => format!(
                        "{} claimed its rank but was not set up within {waited:.0} s (its set-up still ran, or it died)",
                        who(c)
                    ),
                    (None, None) => format!(
                        "rank {rank} never announced itself in {} within {waited:.0} s (not started, or started where that directory is another)",
                        plan.dir.display()
                    ),
                },
            })
            .collect();
        let start = SystemTime::now() + plan.lead;
        let gate = GateFile {
            start_at_unix_ns: Some(unix_ns(start)),
            called_off: None,
            ranks: ready.keys().copied().collect(),
            announced,
            missing,
            largest_skew,
            warnings: match verdict {
                Some(SkewVerdict::Warning(w)) => vec![w],
                _ => Vec::new(),
            },
        };
        write_whole(plan, &plan.path(GATE), &json(&gate), true).map_err(|e| GateRefusal::Refused(Box::new(e)))?;
        Ok(gate)
    }
}

/// The names in `dir`.
fn list(dir: &Path) -> Result<Vec<String>, FleetError> {
    let entries = std::fs::read_dir(dir).map_err(io("read", dir))?;
    Ok(entries.filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned())).collect())
}

/// `rank-R.KIND` as (R, KIND).
fn rank_file(name: &str) -> Option<(u64, &str)> {
    let (rank, kind) = name.strip_prefix("rank-")?.split_once('.')?;
    Some((rank.parse().ok()?, kind))
}

/// What the clocks' skew means for the fleet.
#[derive(Clone, Debug, PartialEq)]
pub enum SkewVerdict {
    Warning(String),
    Error(String),
}

/// The largest skew between two announced ranks, and whether it is beyond a tenth of the interval
/// (a warning: intervals no longer line up) or beyond the ramp as well (an error: a host measures
/// while another has not started). A skew is beyond a threshold only when it is beyond it by more
/// than the two samples' bounds; with a ramp shorter than a tenth of the interval, a tenth of the
/// interval is the one threshold, and an error.
pub fn skew(announced: &[ReadyFile]) -> (Option<FleetSkewDoc>, Option<SkewVerdict>) {
    let (Some(lo), Some(hi)) =
        (announced.iter().min_by_key(|r| r.clock_offset_ns), announced.iter().max_by_key(|r| r.clock_offset_ns))
    else {
        return (None, None);
    };
    if announced.len() < 2 {
        return (None, None);
    }
    let doc = FleetSkewDoc {
        skew_ns: hi.clock_offset_ns.abs_diff(lo.clock_offset_ns),
        uncertainty_ns: hi.clock_uncertainty_ns + lo.clock_uncertainty_ns,
        ranks: [lo.claim.rank.min(hi.claim.rank), lo.claim.rank.max(hi.claim.rank)],
    };
    let surely = doc.skew_ns.saturating_sub(doc.uncertainty_ns);
    let ramp = announced.iter().map(|r| r.ramp_ns).min().unwrap_or(0);
    let tenth = announced.iter().map(|r| r.interval_ns).min().unwrap_or(0) / 10;
    let said = format!(
        "the clocks of {} and {} differ by {} (± {}) against the shared filesystem's",
        who(&lo.claim),
        who(&hi.claim),
        format_latency(doc.skew_ns as f64),
        format_latency(doc.uncertainty_ns as f64)
    );
    let verdict = if surely > ramp.max(tenth) {
        Some(SkewVerdict::Error(format!(
            "{said}, beyond the ramp ({}) and a tenth of the interval ({}), so one host would measure while another has not started; synchronise the hosts' clocks (NTP, PTP), or give a --ramp longer than the skew",
            format_latency(ramp as f64),
            format_latency(tenth as f64)
        )))
    } else if surely > tenth {
        Some(SkewVerdict::Warning(format!(
            "{said}, more than a tenth of the interval ({}), so the hosts' intervals do not line up; synchronise the hosts' clocks (NTP, PTP)",
            format_latency(tenth as f64)
        )))
    } else {
        None
    };
    (Some(doc), verdict)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ready(rank: u64, offset_ns: i64, uncertainty_ns: u64, ramp_ms: u64) -> ReadyFile {
        ReadyFile {
            claim: ClaimFile {
                rank,
                size: 3,
                launcher: "flags".into(),
                host: format!("h{rank}"),
                pid: 100 + rank as u32,
            },
            clock_offset_ns: offset_ns,
            clock_uncertainty_ns: uncertainty_ns,
            ramp_ns: ramp_ms * 1_000_000,
            interval_ns: 1_000_000_000,
            planned_ns: None,
        }
    }

    #[test]
    fn skews_within_their_bounds_pass_and_beyond_them_warn_or_stop() {
        let (doc, v) = skew(&[ready(0, 0, 5_000, 0), ready(1, 40_000_000, 5_000, 0), ready(2, -1_000_000, 5_000, 0)]);
        assert_eq!(doc, Some(FleetSkewDoc { skew_ns: 41_000_000, uncertainty_ns: 10_000, ranks: [1, 2] }));
        assert_eq!(v, None, "41 ms is below a tenth of a 1 s interval");
        // 150 ms: beyond a tenth of the interval; with a 2 s ramp a warning, without one an error.
        let (_, v) = skew(&[ready(0, 0, 5_000, 2000), ready(1, 150_000_000, 5_000, 2000)]);
        let Some(SkewVerdict::Warning(w)) = v else { panic!("{v:?}") };
        assert!(
            w.starts_with(
                "the clocks of rank 0 (h0, pid 100) and rank 1 (h1, pid 101) differ by 150.000ms (± 10.00µs)"
            ),
            "{w}"
        );
        let (_, v) = skew(&[ready(0, 0, 5_000, 0), ready(1, 150_000_000, 5_000, 0)]);
        let Some(SkewVerdict::Error(e)) = v else { panic!("{v:?}") };
        assert!(e.contains("beyond the ramp (0ns) and a tenth of the interval (100.000ms)"), "{e}");
        // A skew that its bounds could explain is not beyond anything.
        let (_, v) = skew(&[ready(0, 0, 30_000_000, 0), ready(1, 150_000_000, 30_000_000, 0)]);
        assert_eq!(v, None);
        assert_eq!(skew(&[ready(0, 0, 0, 0)]), (None, None));
    }

    #[test]
    fn rank_files_are_told_apart() {
        assert_eq!(rank_file("rank-12.ready"), Some((12, "ready")));
        assert_eq!(rank_file("rank-x.ready"), None);
        assert_eq!(rank_file("result-1.json"), None);
        assert_eq!(poll(3), Duration::from_millis(25));
        assert_eq!(poll(1000), Duration::from_millis(500));
    }
}

//! The end of a fleet: every process writes its result into the fleet's directory; rank 0 waits
//! for them (bounded), merges them exactly (`report::merge`), names every rank whose result is
//! missing, and writes `fleet.html` and then `fleet.json`, whose presence marks the fleet
//! finished.
//!
//! It reads and merges result documents; it does not time anything (`rendezvous` did that) or
//! lay out the table (`report::fleet` does).

use super::rendezvous::{FailedFile, GateFile, unix_ns, write_whole};
use super::{FleetError, FleetPlan};
use crate::report::doc::{FleetDoc, FleetMissingDoc, FleetRankDoc, RunDocument};
use crate::report::html::{self, PageOptions};
use crate::report::load::{self, ResultSet, RunDoc};
use crate::report::merge;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

/// The fleet's merged result; its presence marks the fleet finished.
pub const FLEET_JSON: &str = "fleet.json";
/// The fleet's report page.
pub const FLEET_HTML: &str = "fleet.html";

/// Rank `rank`'s result file.
pub fn result_name(rank: u64) -> String {
    format!("result-{rank}.json")
}

/// Writes this process's result into the fleet's directory.
///
/// # Errors
/// The directory cannot be written.
pub fn write_result(plan: &FleetPlan, doc: &RunDocument) -> Result<PathBuf, FleetError> {
    let path = plan.path(&result_name(plan.member.rank));
    let text = serde_json::to_string_pretty(doc).expect("a result document always serialises") + "\n";
    write_whole(plan, &path, text.as_bytes(), true)?;
    Ok(path)
}

/// What rank 0 gathered.
pub struct Gathered {
    /// `fleet.json`'s document.
    pub doc: RunDocument,
    /// The merged fleet first, then each merged rank, labelled for their rows.
    pub runs: Vec<RunDoc>,
    /// Every rank merged, and none of them with errors, a failure or an interruption.
    pub complete: bool,
}

/// How long rank 0, once interrupted by a signal, still waits for the others' results: a launcher
/// that stops a job signals every process at once, and each writes its result as it stops; Open
/// MPI's mpirun follows its SIGTERM with a SIGKILL one second later (odls_base_sigkill_timeout), so
/// rank 0 must merge well within that.
pub const INTERRUPTED_GRACE: Duration = Duration::from_millis(400);

/// Rank 0, after its own run: waits for the results of every rank in `gate` until `timeout` past
/// the later of now and the latest planned end, merges them and writes `fleet.html` and
/// `fleet.json`. Once `signal` is set (rank 0 was interrupted, during its run or while waiting),
/// it waits at most [`INTERRUPTED_GRACE`] more: the fleet is being stopped.
///
/// # Errors
/// The results cannot be merged (the sentence names why; they stay in the directory), or the
/// directory cannot be written.
pub fn gather(plan: &FleetPlan, gate: &GateFile, signal: &AtomicUsize) -> anyhow::Result<Gathered> {
    let start = gate.start_at_unix_ns.unwrap_or(0);
    let planned_end = gate.announced.iter().filter_map(|r| r.planned_ns).max().map(|p| start + p);
    let now = unix_ns(SystemTime::now());
    let wait_from = planned_end.map_or(now, |e| e.max(now));
    let mut deadline = Instant::now() + Duration::from_nanos(wait_from - now) + plan.timeout;
    let mut interrupted: Option<usize> = None;
    let every = Duration::from_millis(25);
    let mut found: Vec<(u64, Option<PathBuf>)> = gate.ranks.iter().map(|&r| (r, None)).collect();
    let mut gave_up: Vec<(u64, String)> = Vec::new();
    loop {
        if let (None, sig @ 1..) = (interrupted, signal.load(Ordering::Relaxed)) {
            interrupted = Some(sig);
            deadline = deadline.min(Instant::now() + INTERRUPTED_GRACE);
        }
        for (rank, path) in found.iter_mut().filter(|(_, p)| p.is_none()) {
            let p = plan.path(&result_name(*rank));
            if p.exists() {
                *path = Some(p);
            } else if let Ok(Some(f)) = read_failed(plan, *rank) {
                if !gave_up.iter().any(|(r, _)| r == rank) {
                    gave_up.push((
                        *rank,
                        format!(
                            "rank {rank} ({}, pid {}) stopped before the start: {}",
                            f.claim.host, f.claim.pid, f.why
                        ),
                    ));
                }
            }
        }
        let waiting = found.iter().any(|(r, p)| p.is_none() && !gave_up.iter().any(|(g, _)| g == r));
        if !waiting || Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(every);
    }

    let mut missing: Vec<FleetMissingDoc> = gate.missing.clone();
    let mut merged_ranks: Vec<(u64, RunDoc)> = Vec::new();
    let waited = (wait_from.saturating_sub(start) as f64 / 1e9, plan.timeout.as_secs_f64());
    for (rank, path) in &found {
        let announced = gate.announced.iter().find(|r| r.claim.rank == *rank);
        let named = announced
            .map_or_else(|| format!("rank {rank}"), |a| format!("rank {rank} ({}, pid {})", a.claim.host, a.claim.pid));
        match path {
            Some(p) => match load::load(std::slice::from_ref(p)) {
                Ok(ResultSet { mut runs, .. }) if runs.len() == 1 => merged_ranks.push((*rank, runs.remove(0))),
                Ok(_) => missing.push(FleetMissingDoc {
                    rank: *rank,
                    why: format!("{named} wrote {}, which does not hold one run", p.display()),
                }),
                Err(e) => missing.push(FleetMissingDoc {
                    rank: *rank,
                    why: format!("{named} wrote a result that cannot be read: {e}"),
                }),
            },
            None => {
                let why = gave_up.iter().find(|(r, _)| r == rank).map(|(_, w)| w.clone()).unwrap_or_else(|| match interrupted {
                    Some(sig) => format!(
                        "{named} wrote no result within {} ms of rank 0's interruption by signal {sig} (the fleet was being stopped: a launcher stopping the job, or a rank that died and made it do so)",
                        INTERRUPTED_GRACE.as_millis()
                    ),
                    None => format!(
                        "{named} announced itself and started, but wrote no result within {:.1} s of the start ({:.0} s past the fleet's planned end); it died, hung or lost the directory",
                        waited.0 + waited.1,
                        waited.1
                    ),
                });
                missing.push(FleetMissingDoc { rank: *rank, why });
            }
        }
    }
    missing.sort_by_key(|m| m.rank);
    if merged_ranks.is_empty() {
        anyhow::bail!("no rank of the fleet in {} wrote a result, so there is nothing to merge", plan.dir.display());
    }

    // A row per host, told apart by rank where two ranks ran on one host.
    let host_of = |r: &RunDoc| r.doc.host.hostname.clone().unwrap_or_else(|| "?".into());
    let hosts: Vec<String> = merged_ranks.iter().map(|(_, r)| host_of(r)).collect();
    for (i, (rank, r)) in merged_ranks.iter_mut().enumerate() {
        let host = &hosts[i];
        r.label = if hosts.iter().filter(|h| *h == host).count() > 1 {
            format!("{host} (rank {rank})")
        } else {
            host.clone()
        };
    }
    let runs: Vec<RunDoc> = merged_ranks.iter().map(|(_, r)| r.clone()).collect();
    let mut doc = merge::merge(&runs)
        .map_err(|e| anyhow::anyhow!("cannot merge the fleet's results in {}: {e}", plan.dir.display()))?;

    let ranks: Vec<FleetRankDoc> = (0..plan.member.size)
        .map(|rank| {
            let announced = gate.announced.iter().find(|r| r.claim.rank == rank);
            let input = merged_ranks.iter().position(|(r, _)| *r == rank);
            let member = input.and_then(|i| merged_ranks[i].1.doc.fleet_member.clone());
            let failed = plan.path(&format!("rank-{rank}.failed")).exists();
            let state = match (input, failed, gate.ranks.contains(&rank)) {
                (Some(_), _, _) => "merged",
                (None, true, _) => "failed",
                (None, false, true) => "no_result",
                (None, false, false) => "never_announced",
            };
            let opened = input.and_then(|i| merged_ranks[i].1.doc.results.started_at_unix_ns);
            FleetRankDoc {
                rank,
                state: state.into(),
                host: announced.map(|a| a.claim.host.clone()),
                pid: announced.map(|a| a.claim.pid),
                launcher: announced.map(|a| a.claim.launcher.clone()),
                result: input.map(|_| result_name(rank)),
                input,
                clock_offset_ns: announced.map(|a| a.clock_offset_ns),
                clock_uncertainty_ns: announced.map(|a| a.clock_uncertainty_ns),
                gate_opened_unix_ns: opened,
                gate_late_ns: member.map(|m| m.gate_late_ns),
            }
        })
        .collect();
    let opened: Vec<u64> = ranks.iter().filter_map(|r| r.gate_opened_unix_ns).collect();
    let gate_spread_ns =
        (opened.len() > 1).then(|| opened.iter().max().unwrap_or(&0) - opened.iter().min().unwrap_or(&0));
    let mut warnings = gate.warnings.clone();
    let tenth = gate.announced.iter().map(|r| r.interval_ns).min().unwrap_or(0) / 10;
    for r in &ranks {
        if let Some(late) = r.gate_late_ns.filter(|l| *l > tenth as i64) {
            warnings.push(format!(
                "rank {} opened its gate {} after the start moment (it saw the moment late, or its set-up ended late); give a longer --fleet-lead",
                r.rank,
                crate::report::format_latency(late as f64)
            ));
        }
    }
    // A second process given a taken rank after the start: the fleet ran without it, which is
    // not the fleet that was launched.
    let mut refused = 0;
    for name in std::fs::read_dir(&plan.dir).into_iter().flatten().filter_map(|e| e.ok()) {
        let name = name.file_name().to_string_lossy().into_owned();
        if let Some(rest) = name.strip_prefix("dup-") {
            refused += 1;
            warnings.push(format!(
                "a second process was given a taken rank ({rest}, rank-host-pid) and was refused after the start; the fleet ran without it"
            ));
        }
    }
    let merged = doc.merged.as_mut().expect("a merge says what it merged");
    merged.notes.extend(missing.iter().map(|m| format!("the merge is missing rank {}: {}", m.rank, m.why)));
    merged.notes.extend(warnings.iter().cloned());
    let complete = missing.is_empty()
        && refused == 0
        && runs.iter().all(|r| {
            r.errors_total() == 0 && r.doc.results.failure.is_none() && r.doc.results.interrupted_by_signal.is_none()
        });
    doc.label = Some("fleet".into());
    doc.fleet = Some(FleetDoc {
        dir: plan.dir.display().to_string(),
        size: plan.member.size,
        start_at_unix_ns: start,
        ranks,
        missing,
        largest_skew: gate.largest_skew.clone(),
        gate_spread_ns,
        warnings,
    });

    let json_path = plan.path(FLEET_JSON);
    let fleet_run = load::run_doc(doc.clone(), &json_path.display().to_string(), "fleet".into())?;
    let mut all = vec![fleet_run];
    all.extend(runs);
    let set = ResultSet { runs: all, files: vec![json_path.clone()], ..Default::default() };
    let title = format!("nvmebench fleet of {} in {}", plan.member.size, plan.dir.display());
    let page = html::render(&set, &PageOptions { title: Some(title), hide_serial: false })?;
    write_whole(plan, &plan.path(FLEET_HTML), page.as_bytes(), true)?;
    let text = serde_json::to_string_pretty(&doc).expect("a result document always serialises") + "\n";
    write_whole(plan, &json_path, text.as_bytes(), true)?;
    Ok(Gathered { doc, runs: set.runs, complete })
}

fn read_failed(plan: &FleetPlan, rank: u64) -> Result<Option<FailedFile>, FleetError> {
    let path = plan.path(&format!("rank-{rank}.failed"));
    match std::fs::read(&path) {
        Ok(b) => Ok(serde_json::from_slice(&b).ok()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(FleetError::Io { what: "read", path: path.display().to_string(), error }),
    }
}

//! Fleets: many `nvmebench run` processes, started by the launcher a cluster already runs (Slurm's
//! `srun`, `mpirun`, a Kubernetes Indexed Job, pdsh), gated together and gathered through a
//! directory every process reaches (`--fleet DIR`).
//!
//! `launcher` reads each process's rank and the fleet's size; `rendezvous` is the meeting in DIR
//! (a process claims its rank, sets up, announces itself with its clock measured against the
//! shared filesystem's, and rank 0 picks the start moment, which every process waits for as for
//! `--start-at`); `gather` is rank 0's end: every rank's result, merged exactly by `merge`, into
//! `fleet.json` and `fleet.html`. It starts no process and opens no connection: the launcher starts
//! them, the filesystem carries everything between them.
//!
//! # The files in DIR
//!
//! `rank-R.claim` (made with `link`, so two processes cannot both make it), `rank-R.ready` (after
//! set-up, with the clock sample), `rank-R.failed` (set-up failed or the process gave up before the
//! start), `dup-R-HOST-PID` (a second process with a taken rank), `gate` (rank 0's start moment, or
//! why the fleet was called off), `result-R.json` (each rank's result), then `fleet.html` and
//! `fleet.json` (rank 0's merge: the fleet is finished). Every file is written whole under a
//! temporary name and then linked or renamed into place, so a reader never sees half of one.

pub mod clock;
pub mod gather;
pub mod launcher;
pub mod rendezvous;

use crate::cli::FleetArgs;
pub use launcher::{Launcher, Membership};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long rank 0 waits for the others to announce themselves, and for their results past the
/// planned end, without `--fleet-timeout`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// How far ahead of its decision rank 0 sets the start moment, without `--fleet-lead`.
pub const DEFAULT_LEAD: Duration = Duration::from_secs(2);

/// Why a process cannot take part in its fleet, or why the fleet did not start; exit status 2.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    /// A bad flag, launcher variable or directory: nothing was written.
    #[error("{0}")]
    Usage(String),
    /// The fleet stopped before its start (a duplicate rank, skewed clocks, rank 0 gone).
    #[error("{0}")]
    CalledOff(String),
    #[error("cannot {what} {path}: {error}; every process of the fleet must be able to read and write its directory")]
    Io { what: &'static str, path: String, error: std::io::Error },
}

/// This process's part in a fleet, resolved from `--fleet` and the launcher.
#[derive(Clone, Debug)]
pub struct FleetPlan {
    /// The directory every process meets in.
    pub dir: PathBuf,
    pub member: Membership,
    /// `--fleet-timeout`.
    pub timeout: Duration,
    /// `--fleet-lead`.
    pub lead: Duration,
    /// This host's name, as results record it.
    pub host: String,
    pub pid: u32,
}

impl FleetPlan {
    /// The fleet of `args`, or `None` without `--fleet`. Reads the launcher's variables from the
    /// environment and looks at DIR; writes nothing.
    ///
    /// # Errors
    /// [`FleetError::Usage`]: no rank, a size of 0, a rank at or above the size, a DIR that is not
    /// a directory here, or one that holds a fleet that already started or finished.
    pub fn resolve(args: &FleetArgs) -> Result<Option<FleetPlan>, FleetError> {
        let Some(dir) = &args.fleet else { return Ok(None) };
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let member = launcher::membership(&env, args.rank, args.fleet_size)?;
        let host = crate::report::json::host().hostname.unwrap_or_else(|| "?".into());
        check_dir(dir, &host)?;
        Ok(Some(FleetPlan {
            dir: dir.clone(),
            member,
            timeout: args.fleet_timeout.unwrap_or(DEFAULT_TIMEOUT),
            lead: args.fleet_lead.unwrap_or(DEFAULT_LEAD),
            host,
            pid: std::process::id(),
        }))
    }

    /// `name` in the fleet's directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

/// Refuses a DIR this host cannot use, or one whose fleet is past the point of joining.
fn check_dir(dir: &Path, host: &str) -> Result<(), FleetError> {
    let shown = dir.display();
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(FleetError::Usage(format!(
                "--fleet {shown} is not a directory; name the directory every process of the fleet shares"
            )));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(FleetError::Usage(format!(
                "--fleet {shown}: no such directory on {host}; create it on the filesystem every process shares (mkdir -p {shown}) before starting the fleet, or mount that filesystem here"
            )));
        }
        Err(e) => {
            return Err(FleetError::Usage(format!(
                "--fleet {shown}: cannot reach it on {host} ({e}); name a directory every process of the fleet can read and write"
            )));
        }
    }
    if let Err(e) = nix::unistd::access(dir, nix::unistd::AccessFlags::W_OK | nix::unistd::AccessFlags::X_OK) {
        return Err(FleetError::Usage(format!(
            "--fleet {shown}: this process cannot write there on {host} ({}); name a directory every process of the fleet can write",
            std::io::Error::from(e)
        )));
    }
    if dir.join(gather::FLEET_JSON).exists() {
        return Err(FleetError::Usage(format!(
            "--fleet {shown} holds a finished fleet ({}); give each fleet a directory of its own, or empty this one",
            dir.join(gather::FLEET_JSON).display()
        )));
    }
    if let Some(gate) = rendezvous::read_gate(dir)? {
        return Err(FleetError::Usage(match gate.called_off {
            Some(why) => format!(
                "--fleet {shown} holds a fleet that was called off ({why}); give each fleet a directory of its own, or empty this one"
            ),
            None => format!(
                "--fleet {shown} holds a fleet that has already started; give each fleet a directory of its own, and start all its processes together"
            ),
        }));
    }
    Ok(())
}

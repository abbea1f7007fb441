//! Which rank this process is, and how many the fleet has: from the launcher's environment (Slurm,
//! Open MPI, MPICH and Intel MPI's PMI, PMIx, a Kubernetes Indexed Job) or from `--rank` and
//! `--fleet-size`.
//!
//! It reads variables and flags and checks them; it knows nothing of the fleet's directory.

use super::FleetError;

/// What said this process's rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Launcher {
    /// `--rank` (pdsh, ssh loops, anything else).
    Flags,
    /// Open MPI's `mpirun`: `OMPI_COMM_WORLD_RANK`, `OMPI_COMM_WORLD_SIZE`.
    OpenMpi,
    /// MPICH's and Intel MPI's Hydra (`mpiexec`): `PMI_RANK`, `PMI_SIZE`.
    Pmi,
    /// A PMIx launcher (`prterun`, `srun --mpi=pmix`): `PMIX_RANK`; the size from `--fleet-size`.
    Pmix,
    /// Slurm's `srun`: `SLURM_PROCID`, `SLURM_NTASKS`.
    Slurm,
    /// A Kubernetes Indexed Job: `JOB_COMPLETION_INDEX`; the size (the Job's completions) from
    /// `--fleet-size`.
    Kubernetes,
}

impl Launcher {
    /// The name results record.
    pub fn name(self) -> &'static str {
        match self {
            Launcher::Flags => "flags",
            Launcher::OpenMpi => "openmpi",
            Launcher::Pmi => "pmi",
            Launcher::Pmix => "pmix",
            Launcher::Slurm => "slurm",
            Launcher::Kubernetes => "kubernetes",
        }
    }

    /// The variables that give the rank and, when the launcher sets one, the size.
    fn variables(self) -> (&'static str, Option<&'static str>) {
        match self {
            Launcher::Flags => ("--rank", Some("--fleet-size")),
            Launcher::OpenMpi => ("OMPI_COMM_WORLD_RANK", Some("OMPI_COMM_WORLD_SIZE")),
            Launcher::Pmi => ("PMI_RANK", Some("PMI_SIZE")),
            Launcher::Pmix => ("PMIX_RANK", None),
            Launcher::Slurm => ("SLURM_PROCID", Some("SLURM_NTASKS")),
            Launcher::Kubernetes => ("JOB_COMPLETION_INDEX", None),
        }
    }
}

/// Launchers in the order they are believed. The innermost launcher sets its variables last, so it
/// comes first: `mpirun` inside a Slurm allocation leaves the allocation's `SLURM_PROCID` (0 for
/// every process of the batch step) beside its own correct ranks.
const ORDER: [Launcher; 5] = [Launcher::OpenMpi, Launcher::Pmi, Launcher::Pmix, Launcher::Slurm, Launcher::Kubernetes];

/// This process's place in the fleet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Membership {
    pub launcher: Launcher,
    pub rank: u64,
    pub size: u64,
}

/// Reads the rank and the size: `--rank` (with `--fleet-size`) first, then the first launcher in
/// [`ORDER`] whose rank variable is set; `env` looks a variable up.
///
/// # Errors
/// No rank anywhere, a variable that is not a whole number, a size of 0 or one that disagrees with
/// `--fleet-size`, a rank at or above the size.
pub fn membership(
    env: &dyn Fn(&str) -> Option<String>,
    rank_flag: Option<u64>,
    size_flag: Option<u64>,
) -> Result<Membership, FleetError> {
    if size_flag == Some(0) {
        return Err(FleetError::Usage(
            "--fleet-size 0: a fleet has at least one process; give the number of processes the launcher starts".into(),
        ));
    }
    let number = |var: &str, text: String| {
        text.trim().parse::<u64>().map_err(|_| {
            FleetError::Usage(format!(
                "{var}='{text}' is not a whole number, so it gives no rank; pass --rank R --fleet-size N instead"
            ))
        })
    };
    // The rank and the size, each with what gave it (a variable, or the flag) for the messages.
    let shown = |v: &str, n: u64| if v.starts_with("--") { format!("{v} {n}") } else { format!("{v}={n}") };
    let (launcher, (rank_var, rank), (size_var, size)) = if let Some(rank) = rank_flag {
        let size = size_flag.expect("clap requires --fleet-size with --rank");
        (Launcher::Flags, ("--rank", rank), ("--fleet-size", size))
    } else {
        let Some((launcher, text)) = ORDER.iter().find_map(|l| env(l.variables().0).map(|t| (*l, t))) else {
            return Err(FleetError::Usage(
                "--fleet needs this process's rank, and no launcher set one (SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, JOB_COMPLETION_INDEX); start it with srun, mpirun or a Kubernetes Indexed Job, or pass --rank R --fleet-size N"
                    .into(),
            ));
        };
        let (rank_var, size_var) = launcher.variables();
        let rank = number(rank_var, text.clone())?;
        // `srun --mpi=pmix` sets PMIX_RANK beside its own SLURM_PROCID: the same rank, and Slurm's
        // size is the job's.
        let slurm_agrees = launcher == Launcher::Pmix && env("SLURM_PROCID").is_some_and(|p| p.trim() == text.trim());
        let size_var = size_var.or(slurm_agrees.then_some("SLURM_NTASKS"));
        let said = match size_var.and_then(|v| env(v).map(|t| (v, t))) {
            Some((v, t)) => Some((v, number(v, t)?)),
            None => None,
        };
        let size = match (said, size_flag) {
            (Some((v, n)), Some(f)) if n != f => {
                return Err(FleetError::Usage(format!(
                    "--fleet-size {f}, but {v}={n} says the launcher started {n}; drop --fleet-size or make them agree"
                )));
            }
            (Some(said), _) => said,
            (None, Some(f)) => ("--fleet-size", f),
            (None, None) => {
                return Err(FleetError::Usage(format!(
                    "{rank_var} gives this process's rank, but nothing gives the fleet's size; pass --fleet-size N (the number of processes, {})",
                    if launcher == Launcher::Kubernetes {
                        "the Job's completions"
                    } else {
                        "as the launcher was asked for"
                    }
                )));
            }
        };
        if size.1 == 0 {
            return Err(FleetError::Usage(format!(
                "{}: a fleet has at least one process; check how the launcher was started",
                shown(size.0, 0)
            )));
        }
        (launcher, (rank_var, rank), size)
    };
    if rank >= size {
        return Err(FleetError::Usage(format!(
            "{} is not below {}: ranks run from 0 to {}; give each process a rank below the fleet's size",
            shown(rank_var, rank),
            shown(size_var, size),
            size - 1
        )));
    }
    Ok(Membership { launcher, rank, size })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    }

    fn of(vars: &[(&str, &str)], rank: Option<u64>, size: Option<u64>) -> Result<Membership, String> {
        membership(&with(vars), rank, size).map_err(|e| e.to_string())
    }

    #[test]
    fn each_launcher_gives_rank_and_size() {
        let m = |l, rank, size| Ok(Membership { launcher: l, rank, size });
        assert_eq!(of(&[("SLURM_PROCID", "3"), ("SLURM_NTASKS", "8")], None, None), m(Launcher::Slurm, 3, 8));
        assert_eq!(
            of(&[("OMPI_COMM_WORLD_RANK", "1"), ("OMPI_COMM_WORLD_SIZE", "3")], None, None),
            m(Launcher::OpenMpi, 1, 3)
        );
        assert_eq!(of(&[("PMI_RANK", "0"), ("PMI_SIZE", "2")], None, None), m(Launcher::Pmi, 0, 2));
        assert_eq!(of(&[("PMIX_RANK", "5")], None, Some(6)), m(Launcher::Pmix, 5, 6));
        assert_eq!(of(&[("JOB_COMPLETION_INDEX", "2")], None, Some(4)), m(Launcher::Kubernetes, 2, 4));
        assert_eq!(of(&[], Some(2), Some(3)), m(Launcher::Flags, 2, 3));
        assert_eq!(Launcher::Kubernetes.name(), "kubernetes");
    }

    #[test]
    fn the_innermost_launcher_and_the_flags_win() {
        // mpirun inside an sbatch script: the batch step's SLURM_PROCID is 0 in every process.
        let vars = [
            ("SLURM_PROCID", "0"),
            ("SLURM_NTASKS", "1"),
            ("OMPI_COMM_WORLD_RANK", "2"),
            ("OMPI_COMM_WORLD_SIZE", "4"),
        ];
        assert_eq!(of(&vars, None, None).unwrap(), Membership { launcher: Launcher::OpenMpi, rank: 2, size: 4 });
        assert_eq!(of(&vars, Some(1), Some(2)).unwrap().launcher, Launcher::Flags);
        // PMIx beside Open MPI's own variables (Open MPI 5 sets both): Open MPI's size is used.
        let vars = [("PMIX_RANK", "1"), ("OMPI_COMM_WORLD_RANK", "1"), ("OMPI_COMM_WORLD_SIZE", "2")];
        assert_eq!(of(&vars, None, None).unwrap().size, 2);
        // srun --mpi=pmix: PMIX_RANK and SLURM_PROCID agree, and Slurm gives the size.
        let vars = [("PMIX_RANK", "1"), ("SLURM_PROCID", "1"), ("SLURM_NTASKS", "3")];
        assert_eq!(of(&vars, None, None).unwrap(), Membership { launcher: Launcher::Pmix, rank: 1, size: 3 });
        let vars = [("PMIX_RANK", "1"), ("SLURM_PROCID", "0"), ("SLURM_NTASKS", "3")];
        assert!(of(&vars, None, None).unwrap_err().contains("pass --fleet-size N"));
    }

    #[test]
    fn bad_memberships_are_one_sentence_each() {
        assert_eq!(
            of(&[], Some(0), Some(0)).unwrap_err(),
            "--fleet-size 0: a fleet has at least one process; give the number of processes the launcher starts"
        );
        assert_eq!(
            of(&[], Some(3), Some(3)).unwrap_err(),
            "--rank 3 is not below --fleet-size 3: ranks run from 0 to 2; give each process a rank below the fleet's size"
        );
        assert_eq!(
            of(&[("SLURM_PROCID", "4"), ("SLURM_NTASKS", "4")], None, None).unwrap_err(),
            "SLURM_PROCID=4 is not below SLURM_NTASKS=4: ranks run from 0 to 3; give each process a rank below the fleet's size"
        );
        assert_eq!(
            of(&[("JOB_COMPLETION_INDEX", "4")], None, Some(4)).unwrap_err(),
            "JOB_COMPLETION_INDEX=4 is not below --fleet-size 4: ranks run from 0 to 3; give each process a rank below the fleet's size"
        );
        let e = of(&[], None, None).unwrap_err();
        assert!(e.starts_with("--fleet needs this process's rank, and no launcher set one"), "{e}");
        let e = of(&[("JOB_COMPLETION_INDEX", "1")], None, None).unwrap_err();
        assert!(e.contains("pass --fleet-size N (the number of processes, the Job's completions)"), "{e}");
        let e = of(&[("PMI_RANK", "x"), ("PMI_SIZE", "2")], None, None).unwrap_err();
        assert_eq!(e, "PMI_RANK='x' is not a whole number, so it gives no rank; pass --rank R --fleet-size N instead");
        let e = of(&[("PMI_RANK", "0"), ("PMI_SIZE", "2")], None, Some(3)).unwrap_err();
        assert_eq!(
            e,
            "--fleet-size 3, but PMI_SIZE=2 says the launcher started 2; drop --fleet-size or make them agree"
        );
        let e = of(&[("OMPI_COMM_WORLD_RANK", "0"), ("OMPI_COMM_WORLD_SIZE", "0")], None, None).unwrap_err();
        assert!(e.starts_with("OMPI_COMM_WORLD_SIZE=0: a fleet has at least one process"), "{e}");
    }
}

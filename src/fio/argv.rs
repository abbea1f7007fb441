//! fio's spellings on the command line: the arguments of `run` and `compare` are rewritten before
//! clap sees them, and fio's per-job values are folded into ours after.
//!
//! A flag that is ours (or one of our aliases) is left alone, so `--rate-iops` keeps its meaning (the
//! total) while fio's `--rate_iops` means what fio means (per job). Other `--key[=value]` words go
//! through the fio table ([`super::options`]); what is in neither reaches clap with underscores made
//! dashes, and clap names it (with its suggestion).

use super::options::{self, Mapped, PlanOption};
use crate::cli::{Cli, FioArgs, RunArgs};
use crate::config::clash::Clash;
use crate::workload::bssplit::BsSplit;
use clap::CommandFactory;
use std::collections::BTreeSet;
use std::ffi::OsString;

/// The subcommands whose arguments are a run's flags.
const RUN_COMMANDS: [&str; 2] = ["run", "compare"];

/// The long names and aliases `run` knows.
fn own_names() -> BTreeSet<String> {
    let cmd = Cli::command();
    let run = cmd.find_subcommand("run").expect("the CLI has a run subcommand");
    run.get_arguments()
        .flat_map(|a| {
            let mut v: Vec<String> = a.get_long().map(str::to_string).into_iter().collect();
            v.extend(a.get_all_aliases().unwrap_or_default().into_iter().map(str::to_string));
            v
        })
        .collect()
}

/// Rewrites fio's spellings in `argv` (the whole command line, program name first).
///
/// # Errors
/// One sentence, for a fio option whose value cannot be honoured (`--direct=0`) or one that needs
/// another (`--hipri` without `--ioengine`).
pub fn normalize(argv: Vec<OsString>) -> Result<Vec<OsString>, String> {
    normalize_noted(argv).map(|(argv, _)| argv)
}

/// [`normalize`], with the notes the run prints for what it takes without effect or takes as
/// nvmebench's own (`--thread`, `--time_based`, `--verify=md5`), as a job file's notes say.
///
/// # Errors
/// As [`normalize`].
pub fn normalize_noted(argv: Vec<OsString>) -> Result<(Vec<OsString>, Vec<String>), String> {
    let mut notes: Vec<String> = Vec::new();
    let mut note = |n: String| {
        if !notes.contains(&n) {
            notes.push(n);
        }
    };
    let Some(sub) = argv.iter().skip(1).position(|a| !a.to_string_lossy().starts_with('-')).map(|i| i + 1) else {
        return Ok((argv, notes));
    };
    if !RUN_COMMANDS.contains(&argv[sub].to_string_lossy().as_ref()) {
        return Ok((argv, notes));
    }
    let own = own_names();
    let mut out: Vec<OsString> = argv[..=sub].to_vec();
    let mut engine_options: Vec<String> = Vec::new();
    let mut engine_at: Option<usize> = None;
    let mut names = 0;
    let mut rest = argv[sub + 1..].iter().map(|a| a.to_string_lossy().into_owned()).peekable();
    while let Some(token) = rest.next() {
        let Some(body) = token.strip_prefix("--").filter(|b| !b.is_empty()) else {
            out.push(token.into());
            continue;
        };
        let (key, value) = match body.split_once('=') {
            Some((k, v)) => (k.to_string(), Some(v.to_string())),
            None => (body.to_string(), None),
        };
        // fio's --output=FILE (fio takes it only with '='); ours takes text or json. A value that
        // names a file (a dot or a slash in it) is fio's; anything else is ours, for clap to check.
        if key == "output" && value.as_deref().is_some_and(|v| v.contains(['.', '/'])) {
            out.push(format!("--output-file={}", value.unwrap_or_default()).into());
            continue;
        }
        if key == "filename" {
            // fio's lists and escapes, and the SPDK plugin's transport IDs, as in job files.
            let v = value.clone().or_else(|| rest.next()).unwrap_or_default();
            for (flag, val) in options::filename_flags(&v).map_err(|m| format!("--{m}"))? {
                out.push(format!("{flag}={val}").into());
            }
            continue;
        }
        // fio's --verify=METHOD (or --verify METHOD); a bare --verify (or --verify=true) is ours.
        let method = match &value {
            Some(v) => Some(v.clone()).filter(|v| !matches!(v.as_str(), "true" | "false")),
            None if key == "verify" => rest.next_if(|n| options::FIO_VERIFY_METHODS.contains(&n.as_str())),
            None => None,
        };
        if key == "verify" && method.is_some() {
            let v = method.unwrap_or_default();
            match options::map("verify", Some(&v)).map_err(|m| format!("--{m}"))? {
                Some(Mapped::Args(args)) => {
                    note(format!("--{}", options::verify_note(&v)));
                    out.extend(args.into_iter().map(OsString::from));
                }
                _ => note(format!("--verify={v} is fio's default: no verification")),
            }
            continue;
        }
        // fio's word, and run's flag of the same name: read through fio's table, which gives its
        // meaning (--name) or its order (a later disable_lat replaces gtod_reduce's part).
        let fio_first = matches!(key.as_str(), "name" | "disable_slat" | "disable_clat" | "disable_lat" | "disable_bw");
        if own.contains(&key) && !fio_first {
            if key == "engine" {
                // The value is in this word or, without '=', in the next.
                engine_at = Some(out.len() + usize::from(value.is_none()));
            }
            out.push(token.into());
            continue;
        }
        let fio_key = key.replace('-', "_");
        // A fio option given as `--key value`: the next word is its value (for a flag, only 0 or 1).
        let value = match value {
            Some(v) => Some(v),
            None if options::is_flag(&fio_key) => rest.next_if(|n| n == "0" || n == "1"),
            None => rest.next_if(|n| !n.starts_with("--")),
        };
        match options::map(&fio_key, value.as_deref()).map_err(|m| format!("--{m}"))? {
            Some(Mapped::Args(args)) => {
                if fio_key == "ioengine" {
                    engine_at = Some(out.len());
                }
                for a in args {
                    // fio reads its options in order, the later one replacing: gtod_reduce=1 sets
                    // the three disable_* options, and a disable_lat=0 after it takes lat back.
                    if let Some(flag) = a.split_once('=').map(|(f, _)| f).filter(|f| f.starts_with("--disable_")) {
                        let same = format!("{flag}=");
                        out.retain(|o| !o.to_string_lossy().starts_with(&same));
                    }
                    out.push(a.into());
                }
            }
            Some(Mapped::EngineOption(o)) => engine_options.push(o),
            Some(Mapped::NoOp) if fio_key == "name" => {
                names += 1;
                if names > 1 {
                    return Err("--name appears twice: fio starts a second job there, and a command line runs one; put the jobs in a job file".into());
                }
                out.push(format!("--name={}", value.unwrap_or_default()).into());
            }
            Some(Mapped::NoOp) => {
                if let Some((k, _)) = options::NO_OPS.iter().find(|(k, _)| *k == fio_key) {
                    note(format!("--{k} accepted; it changes no measurement here"));
                }
            }
            Some(Mapped::Plan(PlanOption::TimeBased(on))) => note(if on {
                format!(
                    "--{key} accepted: a command-line run always lasts its --runtime (--time, 10s by default), as time_based asks"
                )
            } else {
                format!(
                    "--{key}=0: a command-line run still lasts its --runtime (--time, 10s by default), where fio would end after --size; give --number_ios to end it after a count"
                )
            }),
            // The command line draws offsets with replacement (fio's norandommap) unless told.
            Some(Mapped::Plan(PlanOption::NoRandomMap(off))) => {
                if !off {
                    out.push("--random-map".into());
                }
            }
            // fio starts a new group at new_group only after a job: a lone job is group 0 anyway.
            Some(Mapped::Plan(PlanOption::NewGroup)) => {
                note(format!("--{key} accepted; a command line runs one job, which is fio's group 0 either way"))
            }
            Some(Mapped::Plan(PlanOption::Flow(_))) => {
                return Err(format!(
                    "--{key} keeps jobs of a job file in the ratio of their weights, and a command line runs one job; put the jobs in a job file"
                ));
            }
            Some(Mapped::Plan(PlanOption::Stonewall)) => {
                return Err(format!("--{key} orders the jobs of a job file; a command line runs one job"));
            }
            Some(Mapped::Plan(PlanOption::IoSize(_) | PlanOption::IoSizePercent(_))) => {
                return Err(format!("--{key}: give the I/O count with --number_ios (per job) or --ios (total)"));
            }
            Some(Mapped::Plan(PlanOption::Loops(1))) => note(format!("--{key} accepted: one pass is fio's default")),
            Some(Mapped::Plan(PlanOption::Loops(_))) => {
                return Err(format!(
                    "--{key} repeats a job's size, and a command-line run lasts its --runtime (--time, 10s by default); give the I/O count with --number_ios (per job), or put the job in a job file"
                ));
            }
            Some(Mapped::Plan(PlanOption::NoRuntime)) => {
                return Err(format!(
                    "--{key}=0 is fio's job without a runtime, and a command-line run always has one (--time, 10s by default); give a time above 0, or leave it out"
                ));
            }
            None if value.is_some() => {
                out.push(format!("--{}={}", key.replace('_', "-"), value.unwrap_or_default()).into())
            }
            None => out.push(format!("--{}", key.replace('_', "-")).into()),
        }
    }
    if !engine_options.is_empty() {
        let Some(at) = engine_at.filter(|&i| i < out.len()) else {
            return Err(format!(
                "--{} is an option of the io_uring engines; add --ioengine=io_uring (or io_uring_cmd)",
                engine_options[0].split('=').next().unwrap_or_default()
            ));
        };
        let spec = out.get(at).map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let value = if spec.starts_with("--") { spec.split_once('=').map_or("", |(_, v)| v) } else { &spec };
        let sep = if value.contains(':') { "," } else { ":" };
        let joined = format!("{spec}{sep}{}", engine_options.join(","));
        out[at] = joined.into();
    }
    Ok((out, notes))
}

/// Folds fio's per-job values (`--rate_iops`, `--number_ios`, `--cpus_allowed`) into the
/// run's own totals, rates and core list.
///
/// # Errors
/// The two options, when a per-job value collides with its total (`--rate_iops` with
/// `--rate-iops`) or with another pacing (`--rate`). `--rate` needs no folding: it is per job here
/// as in fio, and so is `--rate_iops`, which becomes a `--rate` per direction.
pub fn fold(args: &mut RunArgs) -> Result<(), Clash> {
    let f: FioArgs = args.fio.clone();
    let jobs = match (&args.cores, args.jobs) {
        (Some(c), _) => c.0.len(),
        (None, Some(j)) => j,
        (None, None) => 1,
    };
    if let Some(cpus) = &f.cpus_allowed {
        if args.cores.is_some() {
            return Err(Clash::Both { first: "cpus_allowed", second: "cores", what: "pick cores" });
        }
        let n = args.jobs.unwrap_or(1);
        args.cores = Some(crate::cli::CoreList(cpus.0.iter().copied().cycle().take(n).collect()));
        args.jobs = None;
    }
    if let Some(iops) = f.rate_iops_per_job {
        if args.rate_iops.is_some() {
            let what = "pace the run, one per job and one in total";
            return Err(Clash::Both { first: "rate_iops", second: "rate-iops", what });
        }
        if args.rate.is_some() {
            // fio refuses the pair too ("rate and rate_iops are mutually exclusive").
            return Err(Clash::Both { first: "rate_iops", second: "rate", what: "pace the run" });
        }
        // fio paces rate_iops as bytes at each direction's smallest size (`__setup_rate`). Sizes
        // that do not parse are refused when the run is resolved, at their own line.
        if let Ok(sizes) = block_sizes(args) {
            let smallest = sizes.map(|s| s.entries.iter().map(|e| u64::from(e.bytes)).min().unwrap_or(1));
            args.rate = Some(iops.in_bytes(smallest));
        }
    }
    if let Some(n) = f.number_ios_per_job {
        if args.ios.is_some() {
            let what = "count I/Os, one per job and one in total";
            return Err(Clash::Both { first: "number_ios", second: "ios", what });
        }
        args.ios = Some(n.saturating_mul(jobs as u64));
    }
    if let Some(ms) = f.log_avg_window() {
        args.interval = std::time::Duration::from_millis(ms);
    }
    if f.output_format.as_deref().is_some_and(|f| f != "normal") {
        args.quiet = true;
    }
    Ok(())
}

/// The block sizes of reads, writes and trims (`--bssplit`, else `--bs`, else the default), as
/// the run will draw them.
///
/// # Errors
/// The flag (`bs` or `bssplit`) whose value does not parse, and why.
pub fn block_sizes(a: &RunArgs) -> Result<[BsSplit; 3], (&'static str, String)> {
    let default = crate::config::DEFAULT_BS;
    Ok(match (&a.bssplit, &a.bs) {
        (Some(s), _) => BsSplit::parse_per_direction(s, default).map_err(|m| ("bssplit", m))?,
        (None, Some(bs)) => {
            let parts = crate::units::per_direction(bs).ok_or_else(|| {
                ("bs", format!("'{bs}' gives more than three sizes; write READ[,WRITE[,TRIM]], like 4k,64k,1m"))
            })?;
            let mut out = [0, 1, 2].map(|_| BsSplit::single(default));
            for (split, t) in out.iter_mut().zip(parts).filter(|(_, t)| !t.is_empty()) {
                *split = crate::units::parse_size(t).map(|b| BsSplit::single(b as u32)).map_err(|m| ("bs", m))?;
            }
            out
        }
        (None, None) => [0, 1, 2].map(|_| BsSplit::single(default)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::rate::ByteRate;
    use clap::Parser;

    fn norm(args: &[&str]) -> Result<Vec<String>, String> {
        let mut v: Vec<OsString> = vec!["nvmebench".into(), "run".into()];
        v.extend(args.iter().map(OsString::from));
        normalize(v).map(|o| o.into_iter().skip(2).map(|a| a.to_string_lossy().into_owned()).collect())
    }

    fn noted(args: &[&str]) -> Result<(Vec<String>, Vec<String>), String> {
        let mut v: Vec<OsString> = vec!["nvmebench".into(), "run".into()];
        v.extend(args.iter().map(OsString::from));
        normalize_noted(v).map(|(o, n)| (o.into_iter().skip(2).map(|a| a.to_string_lossy().into_owned()).collect(), n))
    }

    /// What the command line takes without effect, or as nvmebench's own, is said in a note, as a
    /// job file's notes say it, where it vanished.
    #[test]
    fn accepted_and_ignored_options_are_noted() {
        let (out, notes) =
            noted(&["--thread", "--new_group", "--thread", "--time_based", "--direct=1", "--runtime=1"]).unwrap();
        assert_eq!(out, ["--buffered=false", "--runtime=1"], "ours");
        assert_eq!(
            notes,
            [
                "--thread accepted; it changes no measurement here",
                "--new_group accepted; a command line runs one job, which is fio's group 0 either way",
                "--time_based accepted: a command-line run always lasts its --runtime (--time, 10s by default), as time_based asks",
            ]
        );
        let (_, notes) = noted(&["--time_based=0"]).unwrap();
        assert!(notes[0].starts_with("--time_based=0: a command-line run still lasts its --runtime"), "{notes:?}");
    }

    /// fio's --verify=METHOD is nvmebench's check with a note, where it reached the boolean
    /// --verify and failed in clap; the bare flag stays ours.
    #[test]
    fn fio_verify_methods_are_taken_with_a_note() {
        let (out, notes) = noted(&["--verify=md5"]).unwrap();
        assert_eq!(out, ["--verify=true"]);
        assert!(notes[0].starts_with("--verify=md5 is taken as nvmebench's own check"), "{notes:?}");
        assert!(parsed(&["--verify=crc32c", "--filename=/dev/null"]).verify);
        assert_eq!(noted(&["--verify"]).unwrap(), (vec!["--verify".to_string()], vec![]));
        assert_eq!(noted(&["--verify", "md5", "job.fio"]).unwrap().0, ["--verify=true", "job.fio"]);
        assert!(!parsed(&["--verify=0"]).verify, "fio's default, none");
        assert!(parsed(&["--verify"]).verify);
        let e = noted(&["--verify=md6"]).unwrap_err();
        assert!(e.starts_with("--verify=md6 is not one of fio's verify methods; write one of md5, crc64"), "{e}");
        assert!(noted(&["--verify=null"]).unwrap_err().contains("fio's null only pretends to verify"));
    }

    /// fio's group_reporting and disable_* options reach the run (they were taken without
    /// effect); gtod_reduce=1 is the three disable_* options, and a later one replaces its part, as
    /// fio reads them in order.
    #[test]
    fn group_reporting_and_the_latency_switches_reach_the_run() {
        assert_eq!(parsed(&["--group_reporting"]).fio.group_reporting, Some(true));
        assert_eq!(parsed(&["--group_reporting=0"]).fio.group_reporting, Some(false));
        assert_eq!(parsed(&[]).fio.group_reporting, None);
        let kept = |args: &[&str]| {
            let l = parsed(args).fio.fio_latencies();
            (l.slat, l.clat, l.lat)
        };
        assert_eq!(kept(&[]), (true, true, true));
        assert_eq!(kept(&["--disable_slat=1", "--disable_lat", "1"]), (false, true, false));
        assert_eq!(kept(&["--gtod_reduce=1"]), (false, false, false));
        assert_eq!(kept(&["--gtod_reduce=1", "--disable_lat=0"]), (false, false, true), "the later one");
        assert_eq!(kept(&["--disable_lat=0", "--gtod_reduce=1"]), (false, false, false), "the later one");
        assert_eq!(kept(&["--gtod_reduce=0", "--disable_clat=1"]), (true, false, true));
        assert_eq!(
            norm(&["--disable_clat"]).unwrap_err(),
            "--disable_clat needs a value, as in fio (which refuses it bare); write disable_clat=1 or disable_clat=0"
        );
        assert!(norm(&["--gtod_reduce"]).unwrap_err().starts_with("--gtod_reduce needs a value"));
    }

    fn parsed(args: &[&str]) -> RunArgs {
        let mut v: Vec<OsString> = vec!["nvmebench".into(), "run".into()];
        v.extend(args.iter().map(OsString::from));
        let cli = Cli::try_parse_from(normalize(v).unwrap()).unwrap();
        let crate::cli::Command::Run(mut a) = cli.command else { panic!("a run command") };
        fold(&mut a).unwrap();
        *a
    }

    #[test]
    fn pasted_fio_command_lines_parse() {
        let a = parsed(&[
            "--name=x",
            "--ioengine=io_uring",
            "--direct=1",
            "--time_based",
            "--group_reporting",
            "--norandommap",
            "--randrepeat=1",
            "--rw=randrw",
            "--rwmixwrite=30",
            "--bsrange=4k-8k",
            "--iodepth=4",
            "--numjobs=2",
            "--rate_iops=100",
            "--percentile_list=99:99.9",
            "--output-format=json",
            "--number_ios=50",
            "--random_distribution=zipf:1.2",
            "--ramp_time=1",
            "--hipri",
        ]);
        assert_eq!(a.engine.as_deref(), Some("uring:fixedbufs=0,regfile=0,poll=1"));
        assert_eq!((a.rwmixread, a.qd, a.jobs), (Some(70), 4, Some(2)));
        assert_eq!(a.bssplit.as_deref(), Some("4k:8k"));
        // fio's rate_iops is per job and per direction, paced as bytes at the smallest size of the
        // range (fio's __setup_rate): 100 reads and 100 writes a second of 4k-8k.
        let each = Some(100 * 4096);
        assert_eq!(a.rate, Some(ByteRate { read: each, write: each, trim: each }), "fio's rate_iops is per job");
        assert_eq!(a.rate_iops, None);
        assert_eq!(a.ios, Some(100), "fio's number_ios is per job");
        assert_eq!(a.percentiles.0, vec![99.0, 99.9]);
        assert_eq!(a.fio.output_format.as_deref(), Some("json"));
        assert_eq!(a.fio.name.as_deref(), Some("x"));
        assert!(a.quiet);
        assert!(!a.random_map, "--norandommap: with replacement, the command line's default");
        assert!(parsed(&["--norandommap=0"]).random_map, "fio's map, asked for");
        assert!(parsed(&["--random-map"]).random_map);
        assert!(!parsed(&[]).random_map);
    }

    #[test]
    fn ours_keep_their_meaning_and_unknowns_reach_clap() {
        assert_eq!(norm(&["--rate-iops=100", "--ios", "5"]).unwrap(), ["--rate-iops=100", "--ios", "5"]);
        assert_eq!(norm(&["--iodepht=4"]).unwrap(), ["--iodepht=4"]);
        assert_eq!(norm(&["--drain_timeout=1s"]).unwrap(), ["--drain-timeout=1s"]);
        assert_eq!(norm(&["--output=x.json"]).unwrap(), ["--output-file=x.json"]);
        assert_eq!(norm(&["--output", "json"]).unwrap(), ["--output", "json"]);
        assert_eq!(norm(&["--output=xml"]).unwrap(), ["--output=xml"], "clap refuses it");
        assert_eq!(norm(&["--iodepth", "8"]).unwrap(), ["--iodepth", "8"]);
        assert_eq!(norm(&["--rwmixwrite", "20"]).unwrap(), ["--rwmixread=80"]);
        assert_eq!(norm(&["--name", "x", "--time_based", "--direct", "1"]).unwrap(), ["--name=x", "--buffered=false"]);
        assert_eq!(norm(&["--direct=0"]).unwrap(), ["--buffered=true"], "fio's page cache");
        assert_eq!(norm(&["--filename", "/dev/a\\:b"]).unwrap(), ["--filename=/dev/a\\:b"]);
        assert_eq!(norm(&["--filename=/a:/b"]).unwrap(), ["--filename=/a:/b"]);
        assert_eq!(
            norm(&["--filename=trtype=PCIe traddr=0000.01.00.0"]).unwrap(),
            ["--trid=trtype:PCIe traddr:0000:01:00.0"]
        );
    }

    #[test]
    fn flow_is_refused_on_the_command_line_in_one_sentence() {
        for opt in ["--flow=2", "--flow_id=1", "--flow_sleep=1000"] {
            let e = norm(&[opt]).unwrap_err();
            assert!(
                e.ends_with("keeps jobs of a job file in the ratio of their weights, and a command line runs one job; put the jobs in a job file"),
                "{e}"
            );
        }
        assert_eq!(norm(&["--flow=x"]).unwrap_err(), "--flow=x is not a whole number; write it like flow=1");
    }

    #[test]
    fn per_job_values_fold_into_totals() {
        let a = parsed(&["--cpus_allowed=[2,3]", "--numjobs=3", "--rate=8m,", "--rate_process=poisson", "--bs=8k"]);
        assert_eq!(a.cores.unwrap().0, [2, 3, 2]);
        // fio's rate is per job, and so is ours: nothing to fold.
        assert_eq!(a.rate, Some(crate::workload::rate::ByteRate { read: Some(8 << 20), write: None, trim: None }));
        assert_eq!(a.rate_process, Some(crate::workload::rate::RateProcess::Poisson));
        assert_eq!(a.rate_iops, None);
        // Per direction as rate, each at its own smallest size.
        let a = parsed(&["--rate_iops=1000,10", "--bssplit=4k/50:64k/50,16k,1m"]);
        assert_eq!(a.rate, Some(ByteRate { read: Some(1000 * 4096), write: Some(10 * 16384), trim: Some(10 << 20) }));
        let a = parsed(&["--rate_iops=,50", "--bs=512"]);
        assert_eq!(a.rate, Some(ByteRate { read: None, write: Some(50 * 512), trim: Some(50 * 512) }));
        let a = parsed(&["--cpus_allowed=0x3"]);
        assert_eq!(a.cores.unwrap().0, [0]);
    }

    #[test]
    fn refusals_are_one_sentence() {
        assert!(norm(&["--hipri"]).unwrap_err().contains("add --ioengine=io_uring"));
        assert!(norm(&["--name=a", "--name=b"]).unwrap_err().contains("put the jobs in a job file"));
        assert!(norm(&["--stonewall"]).unwrap_err().contains("a command line runs one job"));
        let mut v: Vec<OsString> = ["nvmebench", "run", "--rate_iops=10", "--rate-iops=20"].map(OsString::from).into();
        v = normalize(v).unwrap();
        let crate::cli::Command::Run(mut a) = Cli::try_parse_from(v).unwrap().command else { panic!() };
        assert_eq!(
            fold(&mut a).unwrap_err().to_string(),
            "--rate_iops and --rate-iops both pace the run, one per job and one in total; give one"
        );
        let v = normalize(["nvmebench", "run", "--rate_iops=10", "--rate=1m"].map(OsString::from).into()).unwrap();
        let crate::cli::Command::Run(mut a) = Cli::try_parse_from(v).unwrap().command else { panic!() };
        assert_eq!(
            fold(&mut a).unwrap_err().to_string(),
            "--rate_iops and --rate both pace the run; give one",
            "as fio refuses"
        );
    }
}

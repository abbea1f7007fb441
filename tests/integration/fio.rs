//! fio compatibility against the real consumers: fio's spellings and job files run; the fio-shaped
//! JSON and logs are read by fio_jsonplus_clat2csv, fio2gnuplot and fio-plot; fio itself runs the
//! same job file and the two documents' keys are compared (what fio writes and we do not must be
//! listed in docs/fio.md). Tests whose tool is not installed say so and skip.

use super::common::{json, make_file, nvmebench, punches_holes, scratch_dir, stderr, stdout, uring_available};
use crate::skip::{Need, skip};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The tool's path, from PATH or (for a tool pip installed, such as fio-plot) the scripts directory
/// of python3, where a pyenv shim appears only after `pyenv rehash`; `None` (with a skip) when it is
/// not installed.
fn tool(name: &str) -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|d| d.join(name)).find(|p| p.is_file()));
    let found = on_path.or_else(|| {
        let o = Command::new("python3")
            .args(["-c", "import sysconfig; print(sysconfig.get_path('scripts'))"])
            .output()
            .ok()?;
        let p = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()).join(name);
        p.is_file().then_some(p)
    });
    if found.is_none() {
        let (need, how) = if name == "fio-plot" {
            (Need::FioPlot, "python3 -m pip install fio-plot")
        } else {
            (Need::Fio, "apt-get install fio: Debian's package has fio and its scripts")
        };
        skip(need, &format!("{name} is not installed ({how})"));
    }
    found
}

/// A Debian fio script, run by Debian's python3 (which has the modules the package depends on),
/// whatever python3 comes first on PATH.
fn script(path: &Path) -> Command {
    let debian = Path::new("/usr/bin/python3");
    if path.starts_with("/usr/bin") && debian.is_file() {
        let mut c = Command::new(debian);
        c.arg(path);
        c
    } else {
        Command::new(path)
    }
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("scratch dir is writable");
    p
}

/// A small job file on the null engine: two sections together, then one after a stonewall.
const GROUPS: &str = "; two groups\n[global]\nioengine=null\ndirect=1\ntime_based\nruntime=1\nthread\n\n\
[a]\nrw=randread\niodepth=4\nnumjobs=2\n\n[b]\nrw=randwrite\nbs=8k\n\n[c]\nstonewall\nrw=read\nbs=64k\nsize=16m\ntime_based=0\n";

#[test]
fn a_pasted_fio_command_line_runs() {
    let o = nvmebench(&[
        "run",
        "--name=pasted",
        "--ioengine=null",
        "--direct=1",
        "--time_based",
        "--runtime=1",
        "--group_reporting",
        "--norandommap",
        "--randrepeat=0",
        "--rw=randrw",
        "--rwmixwrite=30",
        "--bsrange=4k-8k",
        "--iodepth=4",
        "--numjobs=1",
        "--cpus_allowed=0",
        "--percentile_list=99:99.9",
        "--output-format=json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let d = json(&o);
    let job = &d["jobs"][0];
    assert_eq!(job["jobname"], "pasted");
    assert_eq!(job["job options"]["rwmixread"], "70");
    assert!(job["read"]["total_ios"].as_u64().unwrap() > job["write"]["total_ios"].as_u64().unwrap());
    let pct = job["read"]["clat_ns"]["percentile"].as_object().unwrap();
    assert_eq!(pct.keys().collect::<Vec<_>>(), ["99.000000", "99.900000"]);
}

#[test]
fn clap_suggestions_reach_the_one_line_error() {
    let o = nvmebench(&["run", "--iodepht=4"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("a similar argument exists: '--iodepth'"), "{e}");
}

#[test]
fn job_file_sections_run_together_and_after_stonewall() {
    let dir = scratch_dir();
    let job = write(dir.path(), "groups.fio", GROUPS);
    let job = job.to_str().unwrap();
    let o = nvmebench(&["run", job, "--output-format=json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let d = json(&o);
    let jobs = d["jobs"].as_array().unwrap();
    let shape: Vec<(&str, u64)> =
        jobs.iter().map(|j| (j["jobname"].as_str().unwrap(), j["groupid"].as_u64().unwrap())).collect();
    // [a]'s two clones each have an entry, as fio writes them without group_reporting.
    assert_eq!(shape, [("a", 0), ("a", 0), ("b", 0), ("c", 1)]);
    assert!(jobs[0]["read"]["total_ios"].as_u64().unwrap() > 0);
    assert!(jobs[1]["read"]["total_ios"].as_u64().unwrap() > 0);
    assert!(jobs[2]["write"]["total_ios"].as_u64().unwrap() > 0);
    assert_eq!(jobs[3]["read"]["total_ios"], 256, "not time_based: size/bs = 16m/64k I/Os, as fio");
    assert_eq!(d["global options"]["ioengine"], "null");
    assert!(stderr(&o).contains("thread accepted; it changes no measurement here"), "{}", stderr(&o));

    let o = nvmebench(&["run", job, "--section", "c", "--output", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let d = json(&o);
    assert_eq!(d["runs"].as_array().unwrap().len(), 1);
    assert_eq!(d["runs"][0]["label"], "[c]");

    let o = nvmebench(&["run", job, "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("== group 0: [a] [b]") && text.contains("== group 1: [c]"), "{text}");
}

/// Runs `args` in `dir` (where fio's logs land) and returns everything it did.
fn nvmebench_in(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_nvmebench")).current_dir(dir).args(args).output().unwrap()
}

/// The files in `dir` whose names end in `.log`, sorted.
fn logs_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".log"))
        .collect();
    v.sort();
    v
}

/// A job's logs are named as fio names them (`PREFIX_KIND.N.log`, N fio's thread number: one per
/// job clone, counted on over the file's jobs), in fio's format.
#[test]
fn a_job_alone_in_its_group_writes_fios_logs() {
    let base = "[global]\nioengine=null\ntime_based\nruntime=300ms\nlog_avg_msec=100\n";
    for (log, want) in [
        ("write_bw_log=x", &["x_bw.1.log"][..]),
        ("write_iops_log=x", &["x_iops.1.log"]),
        // fio's three latency logs; the null engine at iodepth=1 is synchronous, so the slat log
        // is empty, as fio 3.33 writes it.
        ("write_lat_log=x", &["x_clat.1.log", "x_lat.1.log", "x_slat.1.log"]),
    ] {
        let dir = scratch_dir();
        let job = write(dir.path(), "one.fio", &format!("{base}[a]\n{log}\n"));
        let o = nvmebench_in(dir.path(), &["run", job.to_str().unwrap(), "--quiet"]);
        assert!(o.status.success(), "{log}: {}", stderr(&o));
        assert_eq!(logs_in(dir.path()), want, "{log}");
        for f in want {
            let text = std::fs::read_to_string(dir.path().join(f)).unwrap();
            if f.contains("_slat.") {
                assert!(text.is_empty(), "{f}: no submission latency on a synchronous engine: {text}");
                continue;
            }
            assert!(!text.is_empty(), "{f} has lines");
            for line in text.lines() {
                let fields: Vec<&str> = line.split(", ").collect();
                assert_eq!(fields.len(), 5, "{f}: {line}");
                assert!(fields[..3].iter().all(|n| n.parse::<u64>().is_ok()), "{f}: {line}");
                assert_eq!(fields[2], "0", "reads: {line}");
            }
        }
    }
    // The command line's logs, and a second job after a stonewall: fio's job numbers 1 and 2.
    let dir = scratch_dir();
    let job = write(dir.path(), "two.fio", &format!("{base}[a]\n[b]\nstonewall\nrw=write\n"));
    let o = nvmebench_in(dir.path(), &["run", job.to_str().unwrap(), "--quiet", "--write_bw_log=cl"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(logs_in(dir.path()), ["cl_bw.1.log", "cl_bw.2.log"]);
    let b = std::fs::read_to_string(dir.path().join("cl_bw.2.log")).unwrap();
    assert!(!b.is_empty() && b.lines().all(|l| l.split(", ").nth(2) == Some("1")), "[b] writes: {b}");
}

/// fio logs trims as direction 2 (stat.c: `add_log_sample` takes every `ddir_rw` direction, and
/// `_add_stat_to_log` walks all three), where nvmebench logged reads and writes only: randtrim logs
/// only 2s, trimwrite 1s and 2s, a command-line mix with trims and a flush 0, 1 and 2 (a flush,
/// fio's sync, is not logged).
#[test]
fn trims_are_logged_as_direction_2() {
    let dir = scratch_dir();
    let text = "[global]\nioengine=null\ntime_based\nruntime=300ms\nlog_avg_msec=100\nsize=1m\nbs=4k\n\
                write_bw_log=x\nwrite_iops_log=x\nwrite_lat_log=x\n[t]\nrw=randtrim\n[tw]\nstonewall\nrw=trimwrite\n";
    let job = write(dir.path(), "trim.fio", text);
    let o = nvmebench_in(dir.path(), &["run", job.to_str().unwrap(), "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let directions = |name: &str| -> BTreeSet<String> {
        let text = std::fs::read_to_string(dir.path().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!text.is_empty(), "{name} has lines");
        text.lines().map(|l| l.split(", ").nth(2).unwrap().to_string()).collect()
    };
    for kind in ["bw", "iops", "lat", "clat"] {
        assert_eq!(directions(&format!("x_{kind}.1.log")), BTreeSet::from(["2".to_string()]), "randtrim {kind}");
        let both = BTreeSet::from(["1".to_string(), "2".to_string()]);
        assert_eq!(directions(&format!("x_{kind}.2.log")), both, "trimwrite {kind}");
    }
    let dir = scratch_dir();
    let args = [
        "run",
        "--name=m",
        "--ioengine=null",
        "--rw=randrw",
        "--rwmix",
        "read=40,write=30,trim=20,flush=10",
        "--runtime=300ms",
        "--log_avg_msec=100",
        "--write_iops_log=",
        "--quiet",
    ];
    let o = nvmebench_in(dir.path(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(dir.path().join("m_iops.1.log")).unwrap();
    let dirs: BTreeSet<&str> = text.lines().map(|l| l.split(", ").nth(2).unwrap()).collect();
    assert_eq!(dirs, BTreeSet::from(["0", "1", "2"]), "{text}");
}

/// The 4th column of fio's logs, the block size: fio's averaged lines (`log_avg_msec`) carry 0
/// (stat.c's `__add_stat_to_log` writes a fresh sample without one); without it fio logs each I/O
/// with its size, so nvmebench's lines, one per interval, carry the direction's size when it has
/// one and 0 for a mix (it wrote 0 always). log_avg_msec=0, fio's default, is taken as its absence
/// (it was refused).
#[test]
fn the_block_size_column_is_fios() {
    let dir = scratch_dir();
    let text = "[global]\nioengine=null\ntime_based\nruntime=300ms\nwrite_bw_log=x\nwrite_lat_log=x\n\
                [one]\nrw=randrw\nbs=8k,16k\n[avg]\nstonewall\nrw=randread\nbs=8k\nlog_avg_msec=100\n\
                [mix]\nstonewall\nrw=randread\nbssplit=4k/50:8k/50\n\
                [zero]\nstonewall\nrw=randread\nbs=8k\nlog_avg_msec=0\n";
    let job = write(dir.path(), "bs.fio", text);
    let o = nvmebench_in(dir.path(), &["run", job.to_str().unwrap(), "--quiet", "--interval=100ms"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let columns = |name: &str| -> BTreeSet<(String, String)> {
        let text = std::fs::read_to_string(dir.path().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!text.is_empty(), "{name} has lines");
        text.lines()
            .map(|l| {
                let f: Vec<&str> = l.split(", ").collect();
                (f[2].to_string(), f[3].to_string())
            })
            .collect()
    };
    let pair = |d: &str, bs: &str| (d.to_string(), bs.to_string());
    for kind in ["bw", "lat", "clat"] {
        assert_eq!(columns(&format!("x_{kind}.1.log")), BTreeSet::from([pair("0", "8192"), pair("1", "16384")]));
        assert_eq!(columns(&format!("x_{kind}.2.log")), BTreeSet::from([pair("0", "0")]), "averaged: {kind}");
        assert_eq!(columns(&format!("x_{kind}.3.log")), BTreeSet::from([pair("0", "0")]), "a mix: {kind}");
        // log_avg_msec=0 is fio's default written out: no averaging, as without it.
        assert_eq!(columns(&format!("x_{kind}.4.log")), BTreeSet::from([pair("0", "8192")]), "0: {kind}");
    }
}

/// The values of a log's lines, and their times.
fn log_values(path: &Path) -> (Vec<u64>, Vec<u64>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|l| {
            let f: Vec<u64> = l.split(", ").map(|n| n.parse().unwrap()).collect();
            (f[0], f[1])
        })
        .unzip()
}

/// fio writes one log per job clone (`numjobs`), numbered by thread: with numjobs=2, [a]'s clones
/// write .1 and .2, and [b]'s after them .3 and .4, each with that clone's own samples (it used
/// to be one log per section, numbered by section, of the section's clones summed). Jobs that run
/// together write theirs too, numbered on; so does a command-line run with --numjobs.
#[test]
fn each_job_clone_writes_its_own_log_numbered_as_fio_numbers_threads() {
    let dir = scratch_dir();
    let text = "[global]\nioengine=null\ntime_based\nruntime=500ms\nlog_avg_msec=100\nnumjobs=2\nwrite_iops_log=x\n\
                [a]\nrate_iops=200\n[b]\nstonewall\nrate_iops=100\n";
    let job = write(dir.path(), "clones.fio", text);
    let o = nvmebench_in(dir.path(), &["run", job.to_str().unwrap(), "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(logs_in(dir.path()), ["x_iops.1.log", "x_iops.2.log", "x_iops.3.log", "x_iops.4.log"]);
    // rate_iops paces each clone: each log holds one clone's rate, not the job's sum.
    for (n, per_clone) in [(1, 200.0), (2, 200.0), (3, 100.0), (4, 100.0)] {
        let (times, iops) = log_values(&dir.path().join(format!("x_iops.{n}.log")));
        assert!(times.len() >= 4 && times[..4] == [100, 200, 300, 400], "x_iops.{n}.log: {times:?}");
        let mean = iops.iter().sum::<u64>() as f64 / iops.len() as f64;
        assert!((mean - per_clone).abs() < per_clone * 0.3, "x_iops.{n}.log: {iops:?}, not about {per_clone}");
    }
    // Together: [a]'s two clones, then [b]'s one.
    let dir = scratch_dir();
    let text = "[global]\nioengine=null\ntime_based\nruntime=200ms\nwrite_bw_log=t\n[a]\nnumjobs=2\n[b]\n";
    let job = write(dir.path(), "together.fio", text);
    let o = nvmebench_in(dir.path(), &["run", job.to_str().unwrap(), "--output-format=json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(logs_in(dir.path()), ["t_bw.1.log", "t_bw.2.log", "t_bw.3.log"]);
    // The command line's --numjobs.
    let dir = scratch_dir();
    let args =
        ["run", "--name=cl", "--ioengine=null", "--runtime=300ms", "--numjobs=3", "--write_iops_log=", "--quiet"];
    let o = nvmebench_in(dir.path(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(logs_in(dir.path()), ["cl_iops.1.log", "cl_iops.2.log", "cl_iops.3.log"]);
}

/// fio's per_job_logs=0: every clone's lines in one log without a number, appended clone after
/// clone to what the file already holds (fio opens it to append).
#[test]
fn per_job_logs_0_appends_every_clone_to_one_log() {
    let dir = scratch_dir();
    let text = "[a]\nioengine=null\ntime_based\nruntime=300ms\nlog_avg_msec=100\nnumjobs=2\nrate_iops=100\n\
                write_iops_log=x\nper_job_logs=0\n";
    let job = write(dir.path(), "one.fio", text);
    let o = nvmebench_in(dir.path(), &["run", job.to_str().unwrap(), "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(logs_in(dir.path()), ["x_iops.log"]);
    let (times, iops) = log_values(&dir.path().join("x_iops.log"));
    // Two clones' blocks, each starting over in time, each at one clone's rate.
    let restarts = times.windows(2).filter(|w| w[1] < w[0]).count();
    assert_eq!((restarts, times[0]), (1, 100), "{times:?}");
    assert!(iops.iter().all(|&v| v < 150), "one clone's rate per line: {iops:?}");
    let once = times.len();
    let o = nvmebench_in(dir.path(), &["run", job.to_str().unwrap(), "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (times, _) = log_values(&dir.path().join("x_iops.log"));
    assert!(times.len() >= once * 2 - 2, "appended: {} lines after {once}", times.len());
    assert_eq!(logs_in(dir.path()), ["x_iops.log"]);
    // The command line's per_job_logs=0 and --numjobs.
    let dir = scratch_dir();
    let args = [
        "run",
        "--name=cl",
        "--ioengine=null",
        "--runtime=200ms",
        "--numjobs=2",
        "--write_bw_log=",
        "--per_job_logs=0",
    ];
    let o = nvmebench_in(dir.path(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(logs_in(dir.path()), ["cl_bw.log"]);
}

/// A log option without a prefix (a bare `write_bw_log`, or `write_lat_log=`) names the logs after
/// the job, as fio does (`make_log_name`); a command-line run's job is its `--name`.
#[test]
fn a_log_without_a_prefix_is_named_after_its_job() {
    let dir = scratch_dir();
    let text =
        "[global]\nioengine=null\ntime_based\nruntime=200ms\n[a]\nwrite_bw_log\n[b]\nstonewall\nwrite_lat_log=\n";
    let job = write(dir.path(), "bare.fio", text);
    let o = nvmebench_in(dir.path(), &["run", job.to_str().unwrap(), "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(logs_in(dir.path()), ["a_bw.1.log", "b_clat.2.log", "b_lat.2.log", "b_slat.2.log"]);
    let dir = scratch_dir();
    let o = nvmebench_in(dir.path(), &["run", "--name=cl", "--ioengine=null", "--runtime=200ms", "--write_iops_log="]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(logs_in(dir.path()), ["cl_iops.1.log"]);
}

#[test]
fn a_percentile_list_in_global_reaches_fios_json() {
    let dir = scratch_dir();
    let job = write(
        dir.path(),
        "pct.fio",
        "[global]\npercentile_list=99.5:50\n[a]\nioengine=null\ntime_based\nruntime=200ms\n",
    );
    let d = fio_json(&["run", job.to_str().unwrap(), "--output-format=json"]);
    let pct = d["jobs"][0]["read"]["clat_ns"]["percentile"].as_object().unwrap();
    assert_eq!(pct.keys().collect::<Vec<_>>(), ["50.000000", "99.500000"], "fio reports the list [global] gives");
}

/// fio's `rate_iops` paces each direction of each job, as bytes at the direction's smallest block
/// size: a randrw job at 200 makes 200 reads and 200 writes a second (it used to make 100 of each),
/// and a 4k/64k mix at 100 moves 100 x 4 KiB a second; `,50` paces writes alone.
#[test]
fn rate_iops_paces_each_direction_of_each_job_as_fio_does() {
    let dir = scratch_dir();
    let job = write(
        dir.path(),
        "rate.fio",
        "[global]\nioengine=null\ntime_based\nruntime=1\n\
         [mixed]\nrw=randrw\nrate_iops=200\n\
         [sizes]\nrw=randread\nbssplit=4k/50:64k/50\nrate_iops=100\n\
         [writes]\nrw=randrw\nrate_iops=,50\n",
    );
    let d = fio_json(&["run", job.to_str().unwrap(), "--output-format=json"]);
    let job = |name: &str| d["jobs"].as_array().unwrap().iter().find(|j| j["jobname"] == name).unwrap().clone();
    let near =
        |got: f64, want: f64, what: &str| assert!((got - want).abs() <= want * 0.06, "{what}: {got}, not {want}");
    let mixed = job("mixed");
    near(mixed["read"]["iops"].as_f64().unwrap(), 200.0, "mixed reads");
    near(mixed["write"]["iops"].as_f64().unwrap(), 200.0, "mixed writes");
    near(job("sizes")["read"]["bw_bytes"].as_f64().unwrap(), 409_600.0, "a size mix's bytes");
    // Writes only: reads go as fast as they can beside them.
    let writes = job("writes");
    near(writes["write"]["iops"].as_f64().unwrap(), 50.0, "paced writes");
    assert!(writes["read"]["iops"].as_f64().unwrap() > 10_000.0, "unpaced reads: {}", writes["read"]["iops"]);
}

/// A job that is neither time_based nor sized in bytes makes one pass over its file, as fio's does
/// (it used to be refused, or with runtime= to run for all of it): over the whole file, or over
/// size=N% of it from offset.
#[test]
fn a_job_without_a_size_in_bytes_makes_one_pass_over_its_file() {
    let dir = scratch_dir();
    let file = dir.path().join("pass.bin");
    std::fs::File::create(&file).unwrap().set_len(4 << 20).unwrap();
    let engine = if uring_available() { "io_uring" } else { "psync" };
    // Each clone (an entry of its own without group_reporting) makes a pass, as each fio job does.
    for (opts, clones, bytes) in
        [("", 1, 4 << 20), ("size=50%\noffset=25%\n", 1, 2 << 20), ("runtime=30\nnumjobs=2\n", 2, 4 << 20)]
    {
        let text = format!("[pass]\nioengine={engine}\ndirect=1\nrw=read\nbs=64k\nfilename={}\n{opts}", file.display());
        let job = write(dir.path(), "pass.fio", &text);
        let d = fio_json(&["run", job.to_str().unwrap(), "--output-format=json"]);
        let jobs = d["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), clones, "{opts}");
        for j in jobs {
            let r = &j["read"];
            assert_eq!(r["io_bytes"].as_u64(), Some(bytes), "{opts}: {r}");
            assert!(r["runtime"].as_u64().unwrap() < 10_000, "{opts}: ended by the pass, not the runtime");
        }
    }
}

/// fio's `bw_agg` is a job's mean bandwidth sample as a share of its group's bandwidth in the same
/// direction: a job alone in its group has about all of it, in reads and in writes (fio 3.33 on
/// the null engine for 2 s: 99.2). A run too short for a sample has none, and fio then writes 0.
#[test]
fn bw_agg_is_a_share_of_the_groups_bandwidth_in_that_direction() {
    let d = fio_json(&["run", "--ioengine=null", "--rw=randrw", "--runtime=1.5", "--output-format=json"]);
    for dir in ["read", "write"] {
        let agg = d["jobs"][0][dir]["bw_agg"].as_f64().unwrap();
        assert!(agg > 50.0 && agg <= 100.0, "{dir}: bw_agg {agg}");
        assert!(d["jobs"][0][dir]["bw_samples"].as_u64().unwrap() >= 1, "{dir}");
    }
    let d = fio_json(&["run", "--ioengine=null", "--rw=randrw", "--runtime=0.3", "--output-format=json"]);
    for dir in ["read", "write"] {
        assert_eq!(d["jobs"][0][dir]["bw_samples"].as_u64(), Some(0), "{dir}");
        assert_eq!(d["jobs"][0][dir]["bw_agg"].as_f64(), Some(0.0), "{dir}: no sample, as fio writes");
    }
}

/// Jobs that run together get fio's `bw_*`/`iops_*` statistics too (they were left out, for the
/// run had one interval series): each entry's from its own clones' per-thread samples, summed over
/// its clones as fio's group_reporting sums them (so [a]'s two clones at 200 IOPS each give a mean
/// of about 400 and twice the samples), and `bw_agg` each entry's share of the group's bandwidth.
#[test]
fn jobs_run_together_get_fios_bandwidth_statistics_from_their_own_threads() {
    let dir = scratch_dir();
    let text = "[global]\nioengine=null\ntime_based\nruntime=600ms\nlog_avg_msec=100\nrw=randread\n\
                [a]\nnumjobs=2\nrate_iops=200\ngroup_reporting\n[b]\nrate_iops=100\n";
    let job = write(dir.path(), "together.fio", text);
    let d = fio_json(&["run", job.to_str().unwrap(), "--output-format=json"]);
    let jobs = d["jobs"].as_array().unwrap();
    let stat = |j: usize, k: &str| -> f64 {
        jobs[j]["read"][k].as_f64().unwrap_or_else(|| panic!("[{j}] read.{k}: {}", jobs[j]["read"]))
    };
    for (j, clones, iops) in [(0, 2.0, 400.0), (1, 1.0, 100.0)] {
        let n = stat(j, "iops_samples");
        assert!(n >= clones * 4.0 && n <= clones * 6.0, "job {j}: {n} samples from {clones} clones");
        assert_eq!(stat(j, "bw_samples"), n, "job {j}");
        let mean = stat(j, "iops_mean");
        assert!((mean - iops).abs() < iops * 0.3, "job {j}: iops_mean {mean}, not about {iops}");
        assert!((stat(j, "bw_mean") - mean * 4.0).abs() < mean * 4.0 * 0.05, "job {j}: 4k I/Os");
        assert!(stat(j, "iops_min") <= mean && mean <= stat(j, "iops_max"), "job {j}");
        assert!(stat(j, "bw_dev") >= 0.0 && stat(j, "iops_stddev") >= 0.0, "job {j}");
    }
    let (a, b) = (stat(0, "bw_agg"), stat(1, "bw_agg"));
    assert!((a - 80.0).abs() < 15.0 && (b - 20.0).abs() < 10.0, "shares of the group: {a}, {b}");
}

/// fio's `lat_percentiles=1` puts the percentiles and json+ bins under `lat_ns` too; `=0` is fio's
/// default.
#[test]
fn lat_percentiles_shape_lat_ns_as_fio_does() {
    let dir = scratch_dir();
    for (setting, want) in [("lat_percentiles=1", true), ("lat_percentiles", true), ("lat_percentiles=0", false)] {
        let text = format!("[a]\nioengine=null\ntime_based\nruntime=200ms\n{setting}\n");
        let job = write(dir.path(), "lat.fio", &text);
        let d = fio_json(&["run", job.to_str().unwrap(), "--output-format=json+"]);
        let r = &d["jobs"][0]["read"];
        assert_eq!(r["lat_ns"].get("percentile").is_some(), want, "{setting}: {}", r["lat_ns"]);
        if want {
            assert_eq!(r["lat_ns"]["percentile"], r["clat_ns"]["percentile"], "{setting}");
            assert_eq!(r["lat_ns"]["bins"], r["clat_ns"]["bins"], "{setting}");
        }
    }
    // At iodepth 32 the null engine submits apart from the I/O (fio's null commits its batches
    // above iodepth=1), so lat is slat and clat together: each of lat's percentiles is at or above
    // clat's, and its mean is the two means added up.
    let d = fio_json(&["run", "--ioengine=null", "--runtime=0.2", "--lat_percentiles", "--output-format=json"]);
    let r = &d["jobs"][0]["read"];
    let (lat, clat, slat) = (&r["lat_ns"], &r["clat_ns"], &r["slat_ns"]);
    let keys: Vec<&String> = clat["percentile"].as_object().unwrap().keys().collect();
    assert_eq!(keys, lat["percentile"].as_object().unwrap().keys().collect::<Vec<_>>(), "{lat}");
    for k in keys {
        let (l, c) = (lat["percentile"][k].as_u64().unwrap(), clat["percentile"][k].as_u64().unwrap());
        assert!(l >= c, "p{k}: lat {l} below clat {c}");
    }
    assert_eq!((&lat["N"], &clat["N"]), (&slat["N"], &slat["N"]), "every I/O has all three");
    let mean = |v: &serde_json::Value| v["mean"].as_f64().unwrap();
    assert!((mean(lat) - mean(slat) - mean(clat)).abs() < 1e-6 * mean(lat), "lat is slat + clat: {lat} {slat} {clat}");
}

#[test]
fn bad_job_files_get_one_line_naming_file_line_and_option() {
    let dir = scratch_dir();
    let cases = [
        ("[a]\nioengine=null\n[broken\n", "bad.fio:3: '[broken' is not a section header"),
        (
            "[a]\nioengine=null\ntime_based\nruntime=1\npre_read=1\n",
            "bad.fio:5: option 'pre_read': 'pre_read' is not a fio option nvmebench takes",
        ),
        (
            "[global]\niodepth=0\n[a]\nioengine=null\n",
            "bad.fio:2: option 'iodepth': '0' is not a queue depth; use a whole number from 1 to 65536",
        ),
        ("[a]\nioengine=null\nsize=1m\ndirect=2\n", "bad.fio:4: option 'direct': direct=2 is not 0 or 1"),
        (
            "[a]\nioengine=posixaio\n",
            "bad.fio:2: option 'ioengine': ioengine=posixaio is not one of nvmebench's engines",
        ),
        ("[a]\nioengine=null\nfilename=${NVMEBENCH_UNSET_VAR}\n", "bad.fio:3: $NVMEBENCH_UNSET_VAR is not set"),
        ("[a]\nioengine=null\nrw=randread\n", "section [a]: has no end nvmebench can follow"),
        // No file and no size: fio refuses the job, where a command-line run takes a scratch file.
        (
            "[a]\nioengine=libaio\ntime_based\nruntime=1\n",
            "bad.fio:1: section [a]: has neither a filename nor a size, so there is nothing to run on (fio refuses it: \"you need to specify size=\"); add filename= with a file or device, or size= in bytes",
        ),
        // Times as fio reads them: it stops at a '.', and time_based without a runtime is its warning.
        (
            "[a]\nioengine=null\nsize=1m\ntime_based\nruntime=0.3\n",
            "bad.fio:5: option 'runtime': runtime=0.3: fio reads a time only up to its '.' and would take this as 0 (no runtime); write runtime=300ms",
        ),
        (
            "[a]\nioengine=null\nsize=1m\ntime_based\n",
            "bad.fio:4: [a]: time_based runs the job for its runtime, and none is given (fio warns that time_based requires a runtime and ignores it); add a runtime, like runtime=60, or drop time_based",
        ),
        // Two options: fio's names as written, at the line of the one at fault, the other's line named.
        (
            "[global]\nioengine=null\ntime_based\nruntime=1\nrate=1m\n[a]\nrate_iops=100\n",
            "bad.fio:7: [a]: rate_iops=100 and rate=1m (line 5) both pace the run; give one",
        ),
        (
            "[global]\nioengine=null\ntime_based\nruntime=1\n[a]\nthinktime_spin=10\n",
            "bad.fio:6: [a]: thinktime_spin=10: it shapes thinktime, which is not given; add thinktime",
        ),
        (
            "[global]\nioengine=null\ntime_based\n[a]\nruntime=1\n[b]\nruntime=2\n",
            "bad.fio:6: section [b]: runs together with [a] but differs in runtime or ramp_time; make them equal, or add stonewall",
        ),
        (
            "[a]\nioengine=null\nsize=1m\nper_job_logs=2\n",
            "bad.fio:4: option 'per_job_logs': per_job_logs=2 is not 0 or 1",
        ),
        // fio refuses its boolean options bare ("requires an argument").
        (
            "[a]\nioengine=null\nsize=1m\ngtod_reduce\n",
            "bad.fio:4: option 'gtod_reduce': gtod_reduce needs a value, as in fio (which refuses it bare); write gtod_reduce=1 or gtod_reduce=0",
        ),
    ];
    for (text, want) in cases {
        let job = write(dir.path(), "bad.fio", text);
        let o = nvmebench(&["run", job.to_str().unwrap(), "--output-format=json"]);
        assert_eq!(o.status.code(), Some(2), "{text}: {}", stderr(&o));
        let e = stderr(&o);
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.contains(want), "{text}: {e}");
        assert!(o.stdout.is_empty(), "nothing written for {text}");
    }
    let job = write(dir.path(), "ok.fio", "[a]\nioengine=null\ntime_based\nruntime=1\n");
    let o = nvmebench(&["run", job.to_str().unwrap(), "--section", "z"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--section z: the job file has no such section (it has a)"), "{}", stderr(&o));
    let o = nvmebench(&["run", job.to_str().unwrap(), "--qd", "4"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).starts_with("nvmebench: --qd with a job file: set it in the job file"), "{}", stderr(&o));
    let o = nvmebench(&["run", "--ioengine=null", "--output-format=json", "--output=/nonexistent/dir/r.json"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--output-file /nonexistent/dir/r.json: the directory /nonexistent/dir does not exist")
    );
    let o = nvmebench(&["run", dir.path().join("missing.fio").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot read the job file"), "{}", stderr(&o));
}

/// Setup checks that refuse one option (a block size the file's logical blocks do not divide, an
/// alignment of 0, an io_uring option's core) name it as the job file writes it, at its line; the
/// command line keeps its own flags.
#[test]
fn one_option_refused_at_setup_is_named_as_the_job_file_writes_it() {
    let dir = scratch_dir();
    let data = make_file(dir.path(), "data.bin", 1 << 20);
    let before = std::fs::read(&data).unwrap();
    // O_DIRECT (fio's direct=1) is what asks for whole logical blocks.
    let file = format!("[global]\nioengine=libaio\ndirect=1\nfilename={}\ntime_based\nruntime=1\n", data.display());
    let missing = dir.path().join("never-created.bin");
    let cases = [
        (format!("{file}[a]\nbs=1000\n"), "bad.fio:8: [a]: bs=1000 is not a multiple of"),
        (
            format!("{file}blockalign=0\n[a]\n"),
            "bad.fio:7: [a]: blockalign=0: 0 is not an alignment; use a size such as 4k",
        ),
        (format!("{file}[a]\nba=1000\n"), "bad.fio:8: [a]: ba=1000 is not a multiple of"),
        (
            format!("{file}[a]\nioengine=io_uring\nsqthread_poll_cpu=99999\n"),
            "bad.fio:9: [a]: sqthread_poll_cpu=99999: core 99999 does not exist",
        ),
        (
            format!("[a]\nioengine=libaio\nfilename={}\ntime_based\nruntime=1\n", missing.display()),
            "never-created.bin does not exist; create it, or add size to have nvmebench create a file",
        ),
    ];
    for (text, want) in cases {
        let job = write(dir.path(), "bad.fio", &text);
        let o = nvmebench(&["run", job.to_str().unwrap(), "--output-format=json"]);
        assert_eq!(o.status.code(), Some(2), "{text}: {}", stderr(&o));
        let e = stderr(&o);
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.contains(want), "{text}: {e}");
        assert!(!e.contains("--"), "fio's words, not run's flags: {e}");
        assert!(o.stdout.is_empty(), "nothing written for {text}");
    }
    assert_eq!(std::fs::read(&data).unwrap(), before, "the file is untouched");
    assert!(!missing.exists(), "nothing created");
    // The command line names its own flags, as it always did.
    let o = nvmebench(&["run", "--filename", data.to_str().unwrap(), "--engine", "aio", "--align", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--align: 0 is not an alignment"), "{}", stderr(&o));
}

/// Runs `args` (an nvmebench run with fio-shaped JSON) and returns the document.
#[test]
fn percentiles_and_bins_come_in_numeric_order_as_fio_writes_them() {
    // Tools that walk the table in file order (a plot of percentile against latency) would zigzag
    // through 1, 10, 20, ..., 5 in text order; fio sorts its percentile_list.
    let d = fio_json(&[
        "run",
        "--ioengine=null",
        "--runtime=0.2",
        "--percentile_list=99.9:5:50:10",
        "--output-format=json+",
    ]);
    let clat = &d["jobs"][0]["read"]["clat_ns"];
    let keys = |v: &Value| -> Vec<f64> { v.as_object().unwrap().keys().map(|k| k.parse().unwrap()).collect() };
    assert_eq!(keys(&clat["percentile"]), [5.0, 10.0, 50.0, 99.9]);
    let bins = keys(&clat["bins"]);
    assert!(bins.len() > 1 && bins.windows(2).all(|w| w[0] < w[1]), "{bins:?}");
}

#[test]
fn job_runtime_and_cpu_are_per_thread_as_in_fio() {
    // fio adds its threads' run times in job_runtime and divides their CPU time by that sum, so
    // two busy threads show about 100% and twice the runtime, not 200% and the runtime.
    let d = fio_json(&[
        "run",
        "--ioengine=null",
        "--numjobs=2",
        "--group_reporting",
        "--runtime=0.3",
        "--output-format=json",
    ]);
    let j = &d["jobs"][0];
    let runtime_ms = j["job_runtime"].as_u64().unwrap();
    assert!((580..=700).contains(&runtime_ms), "job_runtime {runtime_ms} ms for two 300 ms threads");
    let cpu = j["usr_cpu"].as_f64().unwrap() + j["sys_cpu"].as_f64().unwrap();
    assert!(cpu > 0.0 && cpu <= 101.0, "usr_cpu + sys_cpu {cpu}% of each thread's time");
}

/// Each clone's `job_runtime` is its own measured span in whole ms and its `usr_cpu`/`sys_cpu` its
/// own thread's CPU time over that span, ramp left out, as fio's per-thread stats keep them (they
/// were the job's workers' spans added up and the whole process's CPU, ramp included, over the
/// job's wall time): each entry of fio's JSON against the worker nvmebench's own document gives
/// for that run. group_reporting adds the clones' figures up, as fio does.
#[test]
fn each_clones_job_runtime_and_cpu_are_its_own_threads() {
    let dir = scratch_dir();
    let text = "[global]\nioengine=null\ntime_based\nruntime=300ms\nramp_time=300ms\nnumjobs=2\n\
                [a]\n[b]\nstonewall\ngroup_reporting\nrw=randwrite\n";
    let job = write(dir.path(), "clones.fio", text);
    let own = dir.path().join("own.json");
    let d = fio_json(&["run", job.to_str().unwrap(), "--output-format=json", &format!("--json={}", own.display())]);
    let own: Value = serde_json::from_str(&std::fs::read_to_string(&own).unwrap()).unwrap();
    let jobs = d["jobs"].as_array().unwrap();
    let names: Vec<(&str, u64)> =
        jobs.iter().map(|j| (j["jobname"].as_str().unwrap(), j["groupid"].as_u64().unwrap())).collect();
    assert_eq!(names, [("a", 0), ("a", 0), ("b", 1)]);
    // Each worker of a run: its measured span in whole ms and its thread's CPU time in ns.
    let workers = |run: usize| -> Vec<(u64, f64)> {
        own["runs"][run]["results"]["workers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| {
                (
                    w["summary"]["measured_ns"].as_u64().unwrap() / 1_000_000,
                    w["summary"]["thread_cpu_ns"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    let cpu_ns = |j: &Value| {
        let runtime_ns = j["job_runtime"].as_f64().unwrap() * 1e6;
        (j["usr_cpu"].as_f64().unwrap() + j["sys_cpu"].as_f64().unwrap()) / 100.0 * runtime_ns
    };
    let (a, b) = (workers(0), workers(1));
    assert_eq!((a.len(), b.len()), (2, 2));
    for (j, (ms, thread_cpu)) in jobs[..2].iter().zip(&a) {
        assert_eq!(j["job_runtime"].as_u64(), Some(*ms), "a clone's own span: {j}");
        // About 300 ms; with the ramp counted in it would be 600 or more. A thread starved of its
        // core on a loaded machine measures less, never more.
        assert!(*ms < 580, "the 300 ms ramp left out: {ms}");
        // fio writes 0% without a run time in whole ms.
        let want = if *ms > 0 { *thread_cpu } else { 0.0 };
        assert!((cpu_ns(j) - want).abs() <= want * 1e-9, "its thread's CPU: {} ns, not {want}", cpu_ns(j));
    }
    let summed = &jobs[2];
    assert_eq!(summed["job_runtime"].as_u64(), Some(b[0].0 + b[1].0), "group_reporting adds the spans");
    let both = if b[0].0 + b[1].0 > 0 { b[0].1 + b[1].1 } else { 0.0 };
    assert!((cpu_ns(summed) - both).abs() <= both * 1e-9, "and the CPU times: {} ns, not {both}", cpu_ns(summed));
    // The command line: --numjobs=2 without --group_reporting is two entries, each its own.
    let d = fio_json(&["run", "--ioengine=null", "--numjobs=2", "--runtime=0.3", "--output-format=json"]);
    let jobs = d["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2, "one entry per clone, as fio");
    for j in jobs {
        let ms = j["job_runtime"].as_u64().unwrap();
        assert!(ms < 580, "one clone's 300 ms, not two added up: {ms}");
        assert_eq!(j["jobname"], "nvmebench");
    }
}

/// fio's JSON document for the job file `text`, run by `fio` in `dir` (as `g.fio`) with `args`.
fn fio_in(fio: &Path, dir: &Path, text: &str, args: &[&str]) -> Value {
    write(dir, "g.fio", text);
    let theirs =
        Command::new(fio).current_dir(dir).args(["g.fio", "--output-format=json"]).args(args).output().unwrap();
    assert!(theirs.status.success(), "fio: {}", String::from_utf8_lossy(&theirs.stderr));
    serde_json::from_slice(&theirs.stdout).unwrap()
}

/// nvmebench's fio-shaped JSON for the job file `text`, run in `dir` (as `g.fio`) with `args`.
fn ours_in(dir: &Path, text: &str, args: &[&str]) -> Value {
    write(dir, "g.fio", text);
    let ours = nvmebench_in(dir, &[&["run", "g.fio", "--output-format=json"], args].concat());
    assert!(ours.status.success(), "nvmebench: {}", stderr(&ours));
    json(&ours)
}

/// fio's `jobs[]` and groups, one to one against fio 3.33 on the same job files (the null engine,
/// each job ending after its size, so every count is exact): an entry per clone without
/// group_reporting (nvmebench summed a section's clones into one), one per group with it, a clone
/// with group_reporting joining the entry before it in its group, and groupid counting up at
/// stonewall and at new_group (which nvmebench took without effect), not at a clone, nor at a
/// section `--section` leaves out.
#[test]
fn jobs_and_groups_match_fios_one_to_one() {
    let Some(fio) = tool("fio") else { return };
    let dir = scratch_dir();
    let base = "[global]\nioengine=null\nsize=4m\nbs=4k\n";
    let sections = "[a]\nrw=read\nnumjobs=2\n[b]\nrw=write\nnumjobs=2\n[c]\nstonewall\nrw=randread\n\
                    [d]\nnew_group\nrw=randwrite\n[e]\nrw=read\n";
    let cases = [
        ("without group_reporting", format!("{base}{sections}"), &[][..], 7),
        ("with group_reporting", format!("{base}group_reporting\n{sections}"), &[], 3),
        ("--section d e", format!("{base}{sections}"), &["--section=d", "--section=e"], 2),
        ("--section c d", format!("{base}{sections}"), &["--section=c", "--section=d"], 2),
        (
            "group_reporting in [b] only",
            format!("{base}[a]\nrw=read\nnumjobs=2\n[b]\ngroup_reporting\nrw=write\nnumjobs=2\n"),
            &[],
            2,
        ),
        ("new_group in [global]", format!("{base}new_group\n[a]\nrw=read\n[b]\nrw=write\nnumjobs=2\n"), &[], 3),
    ];
    // Each entry: its name, group, I/Os per direction and job options. Where clones with and
    // without group_reporting share a group, fio 3.33 counts more entries than it fills and writes
    // the rest without a jobname (groupid 4294967295): those are left out.
    let shape = |d: &Value| -> Vec<(String, u64, [u64; 3], Value)> {
        d["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|j| j.get("jobname").is_some())
            .map(|j| {
                let ios = ["read", "write", "trim"].map(|dir| j[dir]["total_ios"].as_u64().unwrap());
                (
                    j["jobname"].as_str().unwrap().to_string(),
                    j["groupid"].as_u64().unwrap(),
                    ios,
                    j["job options"].clone(),
                )
            })
            .collect()
    };
    for (what, text, args, entries) in cases {
        let (theirs, ours) = (fio_in(&fio, dir.path(), &text, args), ours_in(dir.path(), &text, args));
        let (f, n) = (shape(&theirs), shape(&ours));
        assert_eq!(f.len(), entries, "{what}: fio 3.33 writes {entries} entries: {f:?}");
        assert_eq!(n, f, "{what}");
        assert_eq!(ours["global options"], theirs["global options"], "{what}");
        assert_eq!(
            ours.get("disk_util").is_some(),
            theirs.get("disk_util").is_some(),
            "{what}: the null engine has no disk"
        );
    }
    // A group group_reporting sums cannot both have lat_ns's percentiles and not: fio refuses it.
    let text = format!("{base}group_reporting\n[a]\n[b]\nlat_percentiles=1\n");
    write(dir.path(), "g.fio", &text);
    let theirs = Command::new(&fio).current_dir(dir.path()).args(["g.fio", "--output-format=json"]).output().unwrap();
    assert!(!theirs.status.success(), "fio 3.33 refuses it");
    assert!(String::from_utf8_lossy(&theirs.stderr).contains("lat_percentiles in job: b differs from group"));
    let ours = nvmebench_in(dir.path(), &["run", "g.fio", "--output-format=json"]);
    assert_eq!(ours.status.code(), Some(2), "{}", stderr(&ours));
    assert_eq!(stderr(&ours).lines().count(), 1, "{}", stderr(&ours));
    assert!(stderr(&ours).contains("g.fio:7: section [b]: has lat_percentiles=1 and [a] in its reporting group 0"));
    assert!(ours.stdout.is_empty(), "nothing written");
}

/// fio's disable_slat, disable_clat, disable_lat and gtod_reduce (the three; which nvmebench took
/// without effect, or refused) against fio 3.33 at iodepth 8 on the null engine, where fio
/// measures all three latencies: each one turned off is fio's zeros (N 0, no percentiles) and has
/// no log, each one kept is measured, and fio's options are read in order (a disable_lat=0 after
/// gtod_reduce=1 takes lat back).
#[test]
fn latency_switches_write_what_fio_writes() {
    let Some(fio) = tool("fio") else { return };
    for switches in [
        "disable_slat=1",
        "disable_clat=1",
        "disable_lat=1",
        "disable_slat=1\ndisable_clat=1",
        "gtod_reduce=1",
        "gtod_reduce=1\ndisable_lat=0",
        "gtod_reduce=0",
    ] {
        let text = format!(
            "[global]\nioengine=null\niodepth=8\nbs=4k\nsize=16m\nlog_avg_msec=100\n\
             write_lat_log=x\n[w]\nrw=randwrite\n{switches}\n"
        );
        // Each tool in a directory of its own, for the logs it writes.
        let (fio_dir, ours_dir) = (scratch_dir(), scratch_dir());
        let (theirs, ours) = (fio_in(&fio, fio_dir.path(), &text, &[]), ours_in(ours_dir.path(), &text, &[]));
        let kept = |d: &Value| -> Vec<(&str, bool, Vec<String>)> {
            ["slat_ns", "clat_ns", "lat_ns"]
                .map(|k| {
                    let l = &d["jobs"][0]["write"][k];
                    (k, l["N"].as_u64().unwrap() > 0, l.as_object().unwrap().keys().cloned().collect())
                })
                .to_vec()
        };
        assert_eq!(kept(&ours), kept(&theirs), "{switches}");
        let ios = |d: &Value| d["jobs"][0]["write"]["total_ios"].as_u64();
        assert_eq!((ios(&ours), ios(&theirs)), (Some(4096), Some(4096)), "{switches}: 16m at 4k");
        let shares = |d: &Value| {
            d["jobs"][0]["latency_us"].as_object().unwrap().values().any(|v| v.as_f64().unwrap() > 0.0)
                || d["jobs"][0]["latency_ns"].as_object().unwrap().values().any(|v| v.as_f64().unwrap() > 0.0)
        };
        assert_eq!(shares(&ours), shares(&theirs), "{switches}: latency_ns/us, from clat");
        let fio_logs = logs_in(fio_dir.path());
        assert_eq!(logs_in(ours_dir.path()), fio_logs, "{switches}: the logs of the latencies kept");
    }
}

fn fio_json(args: &[&str]) -> Value {
    let o = nvmebench(args);
    assert!(o.status.success(), "{}", stderr(&o));
    json(&o)
}

#[test]
fn fio_jsonplus_clat2csv_reads_our_bins_and_its_percentiles_equal_ours() {
    let Some(clat2csv) = tool("fio_jsonplus_clat2csv") else { return };
    let dir = scratch_dir();
    let doc = fio_json(&[
        "run",
        "--engine=null:lat=2us",
        "--rw=randrw",
        "--runtime=1",
        "--iodepth=2",
        "--output-format=json+",
    ]);
    let src = write(dir.path(), "plus.json", &doc.to_string());
    let dest = dir.path().join("out.csv");
    for extra in [None, Some("--validate")] {
        let mut c = script(&clat2csv);
        c.arg(&src).arg(&dest);
        c.args(extra);
        let o = c.output().expect("the script runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let csv = std::fs::read_to_string(dir.path().join("out_job0.csv")).expect("the tool wrote job 0's CSV");
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').map(str::trim).collect();
    for ddir in ["read", "write"] {
        let col = header.iter().position(|h| *h == format!("{ddir}_clat_ns_cumulative")).unwrap();
        let rows: Vec<(u64, u64)> = csv
            .lines()
            .skip(1)
            .filter_map(|l| {
                let f: Vec<&str> = l.split(',').map(str::trim).collect();
                Some((f[0].parse().ok()?, f.get(col)?.parse().ok()?))
            })
            .collect();
        let clat = &doc["jobs"][0][ddir]["clat_ns"];
        let n = clat["N"].as_u64().unwrap();
        assert_eq!(rows.last().unwrap().1, n, "{ddir}: the CSV counts every I/O");
        for (key, ours) in clat["percentile"].as_object().unwrap() {
            let p: f64 = key.parse().unwrap();
            let need = (p / 100.0 * n as f64).ceil() as u64;
            let theirs = rows.iter().find(|(_, cum)| *cum >= need).unwrap().0;
            assert_eq!(theirs, ours.as_u64().unwrap(), "{ddir} p{key}");
        }
    }
}

#[test]
fn fio2gnuplot_reads_our_logs() {
    let Some(fio2gnuplot) = tool("fio2gnuplot") else { return };
    let dir = scratch_dir();
    let ours = dir.path().join("ours.json");
    let o = Command::new(env!("CARGO_BIN_EXE_nvmebench"))
        .current_dir(dir.path())
        .args(["run", "--ioengine=null", "--rw=randread", "--runtime=2", "--quiet"])
        .args(["--write_bw_log=job", "--write_iops_log=job", "--write_lat_log=job", "--log_avg_msec=250"])
        .arg(format!("--json={}", ours.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in ["job_bw.1.log", "job_iops.1.log", "job_lat.1.log", "job_clat.1.log"] {
        assert!(dir.path().join(f).is_file(), "{f} written");
    }
    let o = script(&fio2gnuplot).arg("-b").current_dir(dir.path()).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let global = std::fs::read_to_string(dir.path().join("result.global")).expect("fio2gnuplot wrote its summary");
    let field = |k: &str| -> f64 {
        global.lines().find_map(|l| l.strip_prefix(&format!("{k}="))).and_then(|v| v.parse().ok()).unwrap()
    };
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&ours).unwrap()).unwrap();
    let bw: Vec<f64> = doc["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["read"]["ios"].as_u64().unwrap() > 0)
        .map(|p| {
            // fio's arithmetic (stat.c's __add_samples): bytes * 1000 / whole ms / 1024, truncated.
            let spent_ms = (p["span_s"].as_f64().unwrap() * 1e9).round() as u64 / 1_000_000;
            (p["read"]["bytes"].as_u64().unwrap() * 1000 / spent_ms / 1024) as f64
        })
        .collect();
    assert_eq!(field("values_count") as usize, bw.len());
    let mean = bw.iter().sum::<f64>() / bw.len() as f64;
    assert!((field("avg") - mean).abs() < 0.01, "fio2gnuplot's mean {} vs ours {mean}", field("avg"));
}

#[test]
fn fio_plot_draws_our_json() {
    let Some(fio_plot) = tool("fio-plot") else { return };
    let dir = scratch_dir();
    for qd in ["1", "4"] {
        let doc = fio_json(&[
            "run",
            "--ioengine=null",
            "--rw=randread",
            "--runtime=1",
            &format!("--iodepth={qd}"),
            "--log_avg_msec=250",
            "--output-format=json",
        ]);
        write(dir.path(), &format!("randread-{qd}.json"), &doc.to_string());
    }
    let png = dir.path().join("plot.png");
    let o = Command::new(fio_plot)
        .arg("-i")
        .arg(dir.path())
        .args(["-T", "nvmebench", "-l", "-r", "randread", "-d", "1", "4", "-n", "1", "--source", "test", "-o"])
        .arg(&png)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    let bytes = std::fs::read(&png).expect("fio-plot wrote the PNG");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
}

/// Every key path of a document; percentile and bin keys (which vary) as `*`.
fn key_paths(v: &Value, path: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) if path.ends_with("percentile") || path.ends_with("bins") => {
            out.insert(format!("{path}.*"));
            let _ = m;
        }
        Value::Object(m) => {
            for (k, x) in m {
                key_paths(x, &if path.is_empty() { k.clone() } else { format!("{path}.{k}") }, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| key_paths(x, &format!("{path}[]"), out)),
        _ => {
            out.insert(path.to_string());
        }
    }
}

#[test]
fn fio_and_nvmebench_write_the_same_keys_but_those_the_fio_guide_lists() {
    let Some(fio) = tool("fio") else { return };
    let guide = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/fio.md")).unwrap();
    let dir = scratch_dir();
    let mut engines = vec!["null"];
    if uring_available() {
        engines.push("io_uring");
    }
    for engine in engines {
        let job = format!(
            "[global]\nioengine={engine}\ndirect=1\ntime_based\nruntime=1\nfilename=scratch.dat\nsize=16m\n\
             [k]\nrw=randrw\nbs=4k\niodepth=4\n"
        );
        write(dir.path(), "k.fio", &job);
        let theirs =
            Command::new(&fio).current_dir(dir.path()).args(["k.fio", "--output-format=json+"]).output().unwrap();
        assert!(theirs.status.success(), "fio: {}", String::from_utf8_lossy(&theirs.stderr));
        let ours = Command::new(env!("CARGO_BIN_EXE_nvmebench"))
            .current_dir(dir.path())
            .args(["run", "k.fio", "--output-format=json+"])
            .output()
            .unwrap();
        assert!(ours.status.success(), "nvmebench: {}", String::from_utf8_lossy(&ours.stderr));
        let (mut f, mut n) = (BTreeSet::new(), BTreeSet::new());
        key_paths(&serde_json::from_slice(&theirs.stdout).unwrap(), "", &mut f);
        key_paths(&serde_json::from_slice(&ours.stdout).unwrap(), "", &mut n);
        let ours_only: Vec<&String> = n.difference(&f).collect();
        assert!(ours_only.is_empty(), "{engine}: keys fio does not write: {ours_only:?}");
        for key in f.difference(&n) {
            let name = key.trim_start_matches("jobs[].").split('.').next().unwrap();
            assert!(
                guide.contains(&format!("`{name}`")),
                "{engine}: fio writes {key}; docs/fio.md must say why we do not"
            );
        }
    }
}

/// fio's trim patterns in a job file: `randtrim` on a file (holes punched), `trimwrite` pairing each
/// trim with a write of the same block; the fio-shaped JSON fills the `trim` block.
#[test]
fn job_files_trim() {
    let dir = scratch_dir();
    if !punches_holes(dir.path()) {
        return;
    }
    let data = dir.path().join("t.dat");
    std::fs::write(&data, vec![0x5au8; 4 << 20]).unwrap();
    let text = format!(
        "[global]\nioengine=psync\nfilename={}\nbs=64k\nsize=1m\n\n[t]\nrw=randtrim\n\n[tw]\nstonewall\nrw=trimwrite\n",
        data.display()
    );
    let job = write(dir.path(), "trim.fio", &text);
    let d = fio_json(&["run", job.to_str().unwrap(), "--output-format=json"]);
    let jobs = d["jobs"].as_array().unwrap();
    let (t, tw) = (&jobs[0], &jobs[1]);
    assert_eq!((&t["error"], &tw["error"]), (&Value::from(0), &Value::from(0)), "{d}");
    assert_eq!(t["trim"]["total_ios"], 16, "size/bs trims, as fio: {}", t["trim"]);
    assert_eq!(t["trim"]["io_bytes"], 1 << 20);
    assert!(t["trim"]["clat_ns"]["mean"].as_f64().unwrap() > 0.0);
    assert_eq!((t["read"]["total_ios"].as_u64(), t["write"]["total_ios"].as_u64()), (Some(0), Some(0)));
    assert_eq!(t["job options"]["rw"], "randtrim");
    let (trims, writes) = (tw["trim"]["total_ios"].as_u64().unwrap(), tw["write"]["total_ios"].as_u64().unwrap());
    assert_eq!((trims, writes), (8, 8), "trimwrite: 1m of I/O is 8 trims and 8 writes of 64k");
    let after = std::fs::read(&data).unwrap();
    for block in after[..8 * 65536].chunks(65536) {
        assert!(block.iter().any(|&b| b != 0x5a) && block.iter().any(|&b| b != 0), "trimmed, then written");
    }
}

/// fio's third `bs`, `bssplit` and `bsrange` value sizes trims: on the command line, in job files
/// (where `size` counts the trims' bytes), in the JSON config, the text and fio's JSON.
#[test]
fn trims_take_the_third_block_size() {
    let dir = scratch_dir();
    if !punches_holes(dir.path()) {
        return;
    }
    let data = dir.path().join("t.dat");
    std::fs::write(&data, vec![0x5au8; 4 << 20]).unwrap();
    let text = format!(
        "[global]\nioengine=psync\nfilename={}\nsize=1m\n\n[bs]\nrw=randtrim\nbs=4k,16k,64k\n\n\
         [range]\nstonewall\nrw=randtrim\nbsrange=4k-4k,,128k-128k\n",
        data.display()
    );
    let job = write(dir.path(), "trim-bs.fio", &text);
    let d = fio_json(&["run", job.to_str().unwrap(), "--output-format=json"]);
    let jobs = d["jobs"].as_array().unwrap();
    assert!(jobs.iter().all(|j| j["error"] == 0), "{d}");
    assert_eq!(
        (jobs[0]["trim"]["total_ios"].as_u64(), jobs[0]["trim"]["io_bytes"].as_u64()),
        (Some(16), Some(1 << 20))
    );
    assert_eq!(jobs[0]["job options"]["bs"], "4k,16k,64k");
    assert_eq!((jobs[1]["trim"]["total_ios"].as_u64(), jobs[1]["trim"]["io_bytes"].as_u64()), (Some(8), Some(1 << 20)));

    // The command line: a mix of all three, each at its own size; the config and text say so.
    let o = nvmebench(&[
        "run",
        "--engine",
        "null",
        "--rw",
        "randrw",
        "--rwmix",
        "read=40,write=30,trim=20,write-zeroes=10",
        "--bs",
        "4k,64k,1m",
        "--ios",
        "2000",
        "--output",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = json(&o);
    let t = &j["results"]["total"];
    for (d, size) in [("read", 4096), ("write", 65536), ("write_zeroes", 65536), ("trim", 1 << 20)] {
        let (ios, bytes) = (t[d]["ios"].as_u64().unwrap(), t[d]["io_bytes"].as_u64().unwrap());
        assert!(ios > 0 && bytes == ios * size, "{d}: {ios} I/Os, {bytes} bytes");
    }
    let w = &j["config"]["workload"];
    assert_eq!(w["bs_trim"]["entries"][0]["bytes"], 1 << 20);
    assert_eq!(w["bs_write"]["entries"][0]["bytes"], 65536);
    let o = nvmebench(&["run", "--engine", "null", "--rw", "randtrim", "--bssplit", "4k,,1m/50:2m/50", "--time", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("randtrim bs=1m/50:2m/50 "), "{}", stdout(&o));
    // fio's JSON echoes all three sizes.
    let d = fio_json(&[
        "run",
        "--engine",
        "null",
        "--rw",
        "randtrim",
        "--bs",
        "4k,4k,1m",
        "--ios",
        "100",
        "--output-format=json",
    ]);
    assert_eq!(d["jobs"][0]["job options"]["bs"], "4k,4k,1m");
    assert_eq!(d["jobs"][0]["trim"]["io_bytes"], 100u64 << 20);
}

/// Each job's read, write and trim total_ios, by job name.
type JobIos = Vec<(String, [u64; 3])>;

/// Each job's read, write and trim total_ios in a fio-shaped document, by job name, clones added
/// up.
fn ios_per_job(doc: &Value) -> JobIos {
    let mut out: JobIos = Vec::new();
    for j in doc["jobs"].as_array().expect("fio's JSON has jobs") {
        let name = j["jobname"].as_str().unwrap().to_string();
        let ios = ["read", "write", "trim"].map(|d| j[d]["total_ios"].as_u64().unwrap_or(0));
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some((_, sum)) => (0..3).for_each(|i| sum[i] += ios[i]),
            None => out.push((name, ios)),
        }
    }
    out
}

/// One job file run by fio and by nvmebench: each one's I/Os per job, nvmebench's stderr, and the
/// directory both ran in, as nvmebench left it.
struct Both {
    fio: JobIos,
    ours: JobIos,
    notes: String,
    dir: tempfile::TempDir,
}

/// Runs the job file `text` through fio and then through nvmebench, in a scratch directory of its
/// own holding the directories `dirs` (emptied between the two runs); `None` (with a skip) when
/// fio is not installed.
fn fio_and_ours(text: &str, dirs: &[&str]) -> Option<Both> {
    let fio = tool("fio")?;
    let dir = scratch_dir();
    let fresh = || {
        for f in std::fs::read_dir(dir.path()).unwrap() {
            let f = f.unwrap().path();
            if f.is_dir() {
                std::fs::remove_dir_all(f).unwrap();
            } else {
                std::fs::remove_file(f).unwrap();
            }
        }
        write(dir.path(), "both.fio", text);
        for d in dirs {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
    };
    fresh();
    let theirs =
        Command::new(&fio).current_dir(dir.path()).args(["both.fio", "--output-format=json"]).output().unwrap();
    assert!(theirs.status.success(), "fio: {}", String::from_utf8_lossy(&theirs.stderr));
    fresh();
    let ours = Command::new(env!("CARGO_BIN_EXE_nvmebench"))
        .current_dir(dir.path())
        .args(["run", "both.fio", "--output-format=json"])
        .output()
        .unwrap();
    assert!(ours.status.success(), "nvmebench: {}", String::from_utf8_lossy(&ours.stderr));
    let doc = |o: &std::process::Output| serde_json::from_slice::<Value>(&o.stdout).unwrap();
    Some(Both { fio: ios_per_job(&doc(&theirs)), ours: ios_per_job(&doc(&ours)), notes: stderr(&ours), dir })
}

/// fio's direct=0 (its default) goes through the page cache, where a block need not be whole
/// logical blocks: bs=1000, which O_DIRECT refuses, runs on psync and libaio, with fio's I/O counts.
#[test]
fn direct_0_is_buffered_io_as_in_fio() {
    let text = "[global]\nsize=1000k\nbs=1000\nfilename=buffered.dat\n\
                [w]\nrw=write\ndirect=0\n[r]\nstonewall\nrw=randread\n[aio]\nstonewall\nioengine=libaio\niodepth=4\nbuffered=1\nrw=randread\n";
    let Some(Both { fio, ours, notes, .. }) = fio_and_ours(text, &[]) else { return };
    assert_eq!(ours, fio, "per job: read, write, trim");
    let names: Vec<&str> = ours.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["w", "r", "aio"]);
    assert_eq!(ours[0].1, [0, 1024, 0], "1000k at 1000 bytes");
    assert!(
        notes.contains("[r]: no direct=1, so buffered I/O through the page cache, as fio's default direct=0"),
        "{notes}"
    );
    assert!(!notes.contains("[w]: no direct=1"), "{notes}");
}

/// fio's directory holds a job's files: its own JOBNAME.0.0 without a filename, and each name of
/// filename after it; the I/O counts are fio's.
#[test]
fn directory_holds_the_jobs_files_as_in_fio() {
    let text = "[global]\ndirectory=sub\nsize=256k\nbs=4k\ndirect=1\n\
                [own]\nrw=write\n[named]\nstonewall\nfilename=f1:f2\nrw=randwrite\n";
    let Some(both) = fio_and_ours(text, &["sub"]) else { return };
    assert_eq!(both.ours, both.fio, "per job: read, write, trim");
    assert_eq!(both.ours[1].1, [0, 64, 0], "256k at 4k over f1 and f2");
    let made: BTreeSet<String> = std::fs::read_dir(both.dir.path().join("sub"))
        .unwrap()
        .map(|f| f.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(made, BTreeSet::from(["own.0.0".to_string(), "f1".into(), "f2".into()]), "{}", both.notes);
}

/// fio's zoned random_distribution runs (fio's rand-zones.fio leaves the last range share out),
/// with fio's I/O counts; where each zone's I/Os land is checked beside the sampler.
#[test]
fn zoned_random_distribution_runs_as_in_fio() {
    let text = "[global]\nioengine=psync\ndirect=1\nfilename=zoned.dat\nsize=1m\nbs=4k\n\
                [zones]\nrw=randread\nnorandommap\nrandom_distribution=zoned:50/5:30/15:20/\n\
                [map]\nstonewall\nrw=randwrite\nrandom_distribution=zoned:60/10:40/90\n";
    let Some(both) = fio_and_ours(text, &[]) else { return };
    assert_eq!(both.ours, both.fio, "per job: read, write, trim");
    assert_eq!(both.ours, [("zones".to_string(), [256, 0, 0]), ("map".to_string(), [0, 256, 0])]);
}

/// fio's zoned_abs (zones in bytes; a zone of 0 bytes takes its first block) runs with fio's I/O
/// counts; zones past the working set are refused at the line, nothing written.
#[test]
fn zoned_abs_random_distribution_runs_as_in_fio() {
    let text = "[global]\nioengine=psync\ndirect=1\nfilename=zabs.dat\nsize=1m\nbs=4k\n\
                [z]\nrw=randread\nnorandommap\nrandom_distribution=zoned_abs:60/64k:30/128k:10/0\n\
                [m]\nstonewall\nrw=randwrite\nrandom_distribution=zoned_abs:50/512k:50/512k\n";
    let Some(both) = fio_and_ours(text, &[]) else { return };
    assert_eq!(both.ours, both.fio, "per job: read, write, trim");
    assert_eq!(both.ours, [("z".to_string(), [256, 0, 0]), ("m".to_string(), [0, 256, 0])]);
    // nvmebench's own document names the zones, in bytes.
    let o = nvmebench_in(both.dir.path(), &["run", "both.fio", "--section", "m", "--output", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let dist = &json(&o)["runs"][0]["config"]["workload"]["random_dist"];
    assert_eq!((&dist["kind"], &dist["zones"][1]["bytes"]), (&Value::from("zoned_abs"), &Value::from(512 << 10)));
    let job = write(
        both.dir.path(),
        "bad.fio",
        "[a]\nioengine=null\nsize=1m\nrw=randread\nrandom_distribution=zoned_abs:50/1m:50/64k\n",
    );
    let o = nvmebench(&["run", job.to_str().unwrap(), "--output-format=json"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("bad.fio:5: [a]: random_distribution=zoned_abs:50/1m:50/64k: the zones cover 1088k, more than the working set (1m)"),
        "{e}"
    );
    assert!(o.stdout.is_empty());
}

/// fio's offset modifier on a sequential pattern runs with fio's I/O counts: backwards
/// (rw=read:-8k, fio's backwards-read.fio) and with holes (rw=write:12k); a step as large as the
/// working set is refused at its line, and a random pattern's ':N' too.
#[test]
fn rw_offset_modifiers_run_as_in_fio() {
    let text = "[global]\nioengine=psync\ndirect=1\nfilename=seq.dat\nsize=256k\nbs=4k\n\
                [back]\nrw=read:-8k\n[holes]\nstonewall\nrw=write:12k\n";
    let Some(both) = fio_and_ours(text, &[]) else { return };
    assert_eq!(both.ours, both.fio, "per job: read, write, trim");
    assert_eq!(both.ours, [("back".to_string(), [64, 0, 0]), ("holes".to_string(), [0, 64, 0])]);
    let dir = scratch_dir();
    for (text, want) in [
        (
            "[a]\nioengine=null\nsize=64k\nrw=read:64k\n",
            "bad.fio:4: [a]: rw=read:64k: 64k is not smaller than the working set (64k); give a smaller step",
        ),
        (
            "[a]\nioengine=null\nsize=64k\nrw=randread:8\n",
            "bad.fio:4: option 'rw': rw=randread:8: ':N' after a random pattern",
        ),
    ] {
        let job = write(dir.path(), "bad.fio", text);
        let o = nvmebench(&["run", job.to_str().unwrap(), "--output-format=json"]);
        assert_eq!(o.status.code(), Some(2), "{text}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        assert!(stderr(&o).contains(want), "{text}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "nothing written for {text}");
    }
}

/// fio's waitfor.fio in small: filesize sizes the one file, threads=1 is fio's thread, and each
/// job waits for the one before it; the I/O counts per job are fio's.
#[test]
fn wait_for_and_filesize_run_as_in_fio() {
    let text = "[global]\nthreads=1\nfilename=wait.dat\nfilesize=256k\n\
                [writers]\nrw=write\nbs=64k\nnumjobs=2\n\
                [readers]\nnew_group\nwait_for=writers\nrw=randread\nbs=4k\nnumjobs=2\n";
    let Some(both) = fio_and_ours(text, &[]) else { return };
    assert_eq!(both.ours, both.fio, "per job: read, write, trim");
    assert_eq!(both.ours, [("writers".to_string(), [0, 8, 0]), ("readers".to_string(), [128, 0, 0])]);
}

/// fio's sync, pvsync and pvsync2 run as psync (the same I/Os, one at a time), with a note, and
/// fio's I/O counts.
#[test]
fn sync_engines_run_as_psync_with_fios_counts() {
    let text = "[global]\ndirect=1\nfilename=sync.dat\nsize=256k\nbs=4k\n\
                [s]\nioengine=sync\nrw=write\n[v]\nstonewall\nioengine=pvsync\nrw=randread\n\
                [v2]\nstonewall\nioengine=pvsync2\nrw=read\n";
    let Some(both) = fio_and_ours(text, &[]) else { return };
    assert_eq!(both.ours, both.fio, "per job: read, write, trim");
    assert_eq!(both.ours[0].1, [0, 64, 0]);
    assert!(both.notes.contains("[v]: ioengine=pvsync runs as psync: the same I/Os, one at a time"), "{}", both.notes);
}

/// The sizes of the files in `dir`, by name.
fn file_sizes(dir: &Path) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|f| f.unwrap())
        .filter(|f| f.path().is_file())
        .map(|f| (f.file_name().to_string_lossy().into_owned(), f.metadata().unwrap().len()))
        .filter(|(n, _)| !n.ends_with(".fio"))
        .collect();
    v.sort();
    v
}

/// fio's nrfiles and filename_format make the files fio makes (each clone its own, size split
/// over them; a job without either, one per clone), and filename's list splits size as fio does; the I/O counts per job,
/// the names and sizes of the files are fio's.
#[test]
fn nrfiles_and_filename_format_make_fios_files() {
    let text = "[global]\nioengine=psync\ndirect=1\nbs=4k\nsize=256k\n\
                [many]\nrw=randwrite\nnrfiles=4\nnumjobs=2\nfile_service_type=roundrobin\n\
                [fmt]\nstonewall\nrw=read\nnrfiles=2\nfilename_format=fmt-$filenum.dat\n\
                [list]\nstonewall\nrw=write\nfilename=l1:l2\n\
                [clones]\nstonewall\nrw=write\nnumjobs=3\n";
    let Some(fio) = tool("fio") else { return };
    let dir = scratch_dir();
    let theirs = fio_in(&fio, dir.path(), text, &[]);
    let fio_files = file_sizes(dir.path());
    let fresh = scratch_dir();
    let ours = ours_in(fresh.path(), text, &[]);
    assert_eq!(ios_per_job(&ours), ios_per_job(&theirs), "per job: read, write, trim");
    assert_eq!(
        ios_per_job(&ours),
        [
            ("many".to_string(), [0, 128, 0]),
            ("fmt".to_string(), [64, 0, 0]),
            ("list".to_string(), [0, 64, 0]),
            ("clones".to_string(), [0, 192, 0])
        ]
    );
    let shape = |d: &Value| -> Vec<(String, u64)> {
        d["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| (j["jobname"].as_str().unwrap().into(), j["groupid"].as_u64().unwrap()))
            .collect()
    };
    assert_eq!(shape(&ours), shape(&theirs));
    assert_eq!(file_sizes(fresh.path()), fio_files);
    assert!(fio_files.contains(&("many.1.3".to_string(), 64 << 10)), "{fio_files:?}");
    assert!(fio_files.contains(&("clones.2.0".to_string(), 256 << 10)), "a file per clone: {fio_files:?}");
}

/// fio's loops repeat a job's size (or filesize) and its number_ios; the I/O counts per job are
/// fio's (three times 64 writes, two passes over a 512k file, four times 10 reads).
#[test]
fn loops_repeat_the_job_as_in_fio() {
    let text = "[global]\nioengine=psync\ndirect=1\nbs=4k\n\
                [sized]\nfilename=loops.dat\nsize=256k\nrw=randwrite\nloops=3\n\
                [pass]\nstonewall\nfilename=pass.dat\nfilesize=512k\nrw=write\nloops=2\n\
                [nios]\nstonewall\nfilename=loops.dat\nsize=256k\nrw=read\nnumber_ios=10\nloops=4\n";
    let Some(both) = fio_and_ours(text, &[]) else { return };
    assert_eq!(both.ours, both.fio, "per job: read, write, trim");
    let total: Vec<u64> = both.ours.iter().map(|(_, ios)| ios.iter().sum()).collect();
    assert_eq!(total, [192, 256, 40]);
}

/// fio's offset_increment: each clone writes its own 64k, one after another, in the file fio makes
/// (four clones' worth long); the I/O counts, jobs and file are fio's. A last working set past
/// the end of an existing file is refused at the job's line, nothing written.
#[test]
fn offset_increment_runs_each_clone_on_its_own_range_as_in_fio() {
    let text = "[global]\nioengine=psync\ndirect=1\nbs=4k\n\
                [inc]\nfilename=oi.dat\nrw=write\nsize=64k\nnumjobs=4\noffset_increment=64k\n";
    let Some(both) = fio_and_ours(text, &[]) else { return };
    assert_eq!(both.ours, both.fio, "per job: read, write, trim");
    assert_eq!(both.ours, [("inc".to_string(), [0, 64, 0])]);
    assert_eq!(file_sizes(both.dir.path()), [("oi.dat".to_string(), 256 << 10)]);
    let dir = scratch_dir();
    make_file(dir.path(), "small.dat", 256 << 10);
    let job = write(
        dir.path(),
        "bad.fio",
        "[a]\nioengine=psync\nfilename=small.dat\nsize=64k\nnumjobs=4\noffset_increment=128k\n",
    );
    let o = nvmebench_in(dir.path(), &["run", job.to_str().unwrap(), "--output-format=json"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("bad.fio:6: "), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("offset_increment=128k: the last of 4 workers' working sets ends at 448k"),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.is_empty());
}

/// fio's batching options run on io_uring as its submit_batch, reap_batch and reap_max, and on
/// libaio at fio's defaults, with fio's I/O counts; the knobs nvmebench set are fio's values.
#[test]
fn batching_options_run_on_io_uring_as_in_fio() {
    if !uring_available() {
        return;
    }
    let text = "[global]\ndirect=1\nbs=4k\nsize=1m\nfilename=batch.dat\niodepth=16\n\
                [u]\nioengine=io_uring\niodepth_batch_submit=8\niodepth_batch_complete_min=4\n\
                iodepth_batch_complete_max=16\nrw=randwrite\n\
                [a]\nstonewall\nioengine=libaio\niodepth_batch=1\niodepth_low=16\nrw=randread\n";
    let Some(both) = fio_and_ours(text, &[]) else { return };
    assert_eq!(both.ours, both.fio, "per job: read, write, trim");
    assert_eq!(both.ours, [("u".to_string(), [0, 256, 0]), ("a".to_string(), [256, 0, 0])]);
    let job = write(both.dir.path(), "u.fio", text);
    let o = nvmebench_in(both.dir.path(), &["run", job.to_str().unwrap(), "--section", "u", "--output", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let engine = &json(&o)["runs"][0]["engine"]["options"];
    let knobs = ["submit_batch", "reap_batch", "reap_max"].map(|k| engine[k].as_str().unwrap_or_default().to_string());
    assert_eq!(knobs, ["8", "4", "16"], "{engine}");
}

/// fio's continue_on_error=all runs as --on-error continue, and both documents carry fio's
/// total_err and first_error (0 without errors) beside the I/O counts, which are fio's;
/// continue_on_error=read (errors of one direction) is refused at its line.
#[test]
fn continue_on_error_writes_fios_error_counts() {
    let Some(fio) = tool("fio") else { return };
    let text = "[global]\nioengine=psync\ndirect=1\nbs=4k\nsize=256k\nfilename=coe.dat\n\
                [w]\nrw=randwrite\ncontinue_on_error=all\n[n]\nstonewall\nrw=read\ncontinue_on_error=none\n";
    let dir = scratch_dir();
    let theirs = fio_in(&fio, dir.path(), text, &[]);
    let fresh = scratch_dir();
    let ours = ours_in(fresh.path(), text, &[]);
    assert_eq!(ios_per_job(&ours), ios_per_job(&theirs), "per job: read, write, trim");
    let errs = |d: &Value| -> Vec<(Value, Value)> {
        d["jobs"].as_array().unwrap().iter().map(|j| (j["total_err"].clone(), j["first_error"].clone())).collect()
    };
    assert_eq!(errs(&ours), errs(&theirs));
    assert_eq!(errs(&ours), [(Value::from(0), Value::from(0)), (Value::Null, Value::Null)]);
    let job = write(fresh.path(), "bad.fio", "[a]\nioengine=null\nsize=1m\ncontinue_on_error=read\n");
    let o = nvmebench(&["run", job.to_str().unwrap(), "--output-format=json"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o)
            .contains("bad.fio:4: option 'continue_on_error': continue_on_error=read: nvmebench's --on-error continue"),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.is_empty());
}

/// fio's shares of an existing file: offset=33% rounded up to a block, size=50% after offset=60%
/// cut to what is left, size=33% cut down to a block; the I/O counts are fio's.
#[test]
fn size_and_offset_shares_are_fios() {
    let Some(fio) = tool("fio") else { return };
    let text = "[global]\nioengine=psync\ndirect=1\nfilename=p.dat\nbs=4k\n\
                [op]\nrw=read\noffset=33%\n[cap]\nstonewall\nrw=read\noffset=60%\nsize=50%\n\
                [share]\nstonewall\nrw=randread\nsize=33%\n";
    let dir = scratch_dir();
    make_file(dir.path(), "p.dat", 1000 << 10);
    let theirs = fio_in(&fio, dir.path(), text, &[]);
    let ours = ours_in(dir.path(), text, &[]);
    assert_eq!(ios_per_job(&ours), ios_per_job(&theirs), "per job: read, write, trim");
    let reads: Vec<u64> = ios_per_job(&ours).iter().map(|(_, ios)| ios[0]).collect();
    assert_eq!(reads, [167, 100, 82]);
}

/// fio's io_size=N% (io_limit too) moves that share of each file's working set: half of an
/// existing file in one pass, a quarter of a job's size, half of each of nrfiles' files; the I/O
/// counts are fio's.
#[test]
fn io_size_shares_are_fios() {
    let Some(fio) = tool("fio") else { return };
    let text = "[global]\nioengine=psync\ndirect=1\nbs=4k\n\
                [pass]\nfilename=p.dat\nrw=read\nio_size=50%\n\
                [sized]\nstonewall\nfilename=q.dat\nsize=256k\nrw=randread\nio_limit=25%\n\
                [files]\nstonewall\nsize=256k\nnrfiles=2\nrw=write\nio_size=50%\n";
    let dir = scratch_dir();
    make_file(dir.path(), "p.dat", 1000 << 10);
    let theirs = fio_in(&fio, dir.path(), text, &[]);
    let ours = ours_in(dir.path(), text, &[]);
    assert_eq!(ios_per_job(&ours), ios_per_job(&theirs), "per job: read, write, trim");
    let total: Vec<u64> = ios_per_job(&ours).iter().map(|(_, ios)| ios.iter().sum()).collect();
    assert_eq!(total, [125, 16, 32]);
}

/// fio's buffer_pattern: the file fio writes with 0xdeadface"abc"-12 and the one nvmebench writes
/// are the same bytes; with buffer_compress_percentage it is refused at its line.
#[test]
fn buffer_pattern_writes_fios_bytes() {
    let text = "[w]\nioengine=psync\ndirect=1\nbs=4k\nsize=64k\nfilename=bp.dat\nrw=write\n\
                buffer_pattern=0xdeadface\"abc\"-12\n";
    let Some(fio) = tool("fio") else { return };
    let dir = scratch_dir();
    let theirs = fio_in(&fio, dir.path(), text, &[]);
    let fio_bytes = std::fs::read(dir.path().join("bp.dat")).unwrap();
    let fresh = scratch_dir();
    let ours = ours_in(fresh.path(), text, &[]);
    assert_eq!(ios_per_job(&ours), ios_per_job(&theirs), "per job: read, write, trim");
    let ours_bytes = std::fs::read(fresh.path().join("bp.dat")).unwrap();
    assert_eq!(&ours_bytes[..11], [0xde, 0xad, 0xfa, 0xce, b'a', b'b', b'c', 0xf4, 0xff, 0xff, 0xff]);
    assert!(ours_bytes == fio_bytes, "the file's bytes are fio's");
    let job = write(
        fresh.path(),
        "bad.fio",
        "[a]\nioengine=null\nsize=1m\nrw=write\nbuffer_pattern=0xab\nbuffer_compress_percentage=50\n",
    );
    let o = nvmebench(&["run", job.to_str().unwrap(), "--output-format=json"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("bad.fio:5: "), "{}", stderr(&o));
    assert!(stderr(&o).contains("buffer_pattern=0xab: fills every written block with its bytes"), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
}

//! Fleets (`run --fleet DIR`): processes started by mpirun, pdsh or a shell loop, each with its
//! rank from the launcher or from --rank, gated together through DIR and merged exactly by rank 0.
//! The mpirun and pdsh tests skip, saying so, only when those are not installed (Debian's
//! openmpi-bin and pdsh, which .ci/run installs).

use crate::common::{make_file, read_result, scratch_dir, stderr, stdout};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The latest a rank's gate may open after the start moment, and the most two ranks' openings may
/// differ. Three ranks on this 2-core machine, beside other builds, open theirs within about 6 ms;
/// a gate that did not wait for the start moment opens it a whole lead (2 s) early or, waiting for
/// something else, a poll or more late.
const GATE_BOUND_NS: i64 = 50_000_000;

/// Every variable a launcher sets that nvmebench reads, so that a test run under Slurm or MPI
/// itself does not lend its ranks to the processes it starts.
const LAUNCHER_VARS: [&str; 8] = [
    "SLURM_PROCID",
    "SLURM_NTASKS",
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "PMI_RANK",
    "PMI_SIZE",
    "PMIX_RANK",
    "JOB_COMPLETION_INDEX",
];

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_nvmebench")
}

fn installed(tool: &str) -> bool {
    let found = Command::new("which").arg(tool).output().is_ok_and(|o| o.status.success());
    if !found {
        let need = if tool == "pdsh" { crate::skip::Need::Pdsh } else { crate::skip::Need::Mpirun };
        crate::skip::skip(need, &format!("{tool} is not installed (apt-get install -y openmpi-bin pdsh)"));
    }
    found
}

/// The binary with `args`, no launcher variables but `env`, its output piped.
fn process(args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut c = Command::new(bin());
    c.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    for v in LAUNCHER_VARS {
        c.env_remove(v);
    }
    c.envs(env.iter().copied());
    c
}

fn start(args: &[&str], env: &[(&str, &str)]) -> Child {
    process(args, env).spawn().expect("the test binary runs")
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap().trim().to_string()
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The I/Os of every direction of a result's total.
fn ios(doc: &Value) -> u64 {
    let t = &doc["results"]["total"];
    ["read", "write", "trim", "write_zeroes", "flush"].iter().filter_map(|d| t[d]["ios"].as_u64()).sum()
}

/// `nvmebench merge` of the ranks' results must be fleet.json's totals, exactly: rank 0 merges
/// with the same merge.
fn assert_exact_merge(dir: &Path, ranks: &[u64], fleet: &Value) {
    let out = dir.join("by-hand.json");
    let mut args = vec!["merge".to_string()];
    args.extend(ranks.iter().map(|r| dir.join(format!("result-{r}.json")).display().to_string()));
    args.extend(["-o".to_string(), out.display().to_string()]);
    let o = Command::new(bin()).args(&args).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let by_hand = read_result(&out);
    std::fs::remove_file(&out).unwrap();
    assert_eq!(by_hand["results"]["total"], fleet["results"]["total"], "fleet.json's totals are merge's");
    let sum: u64 = ranks.iter().map(|r| ios(&read_result(&dir.join(format!("result-{r}.json"))))).sum();
    assert_eq!(ios(fleet), sum, "the fleet's I/Os are the sum of its ranks'");
    assert!(sum > 0);
}

/// Every merged rank opened its gate at, and within the bound after, the start moment.
fn assert_gates_together(fleet: &Value, size: u64) {
    let f = &fleet["fleet"];
    let ranks = f["ranks"].as_array().unwrap();
    assert_eq!(ranks.len() as u64, size, "{f}");
    for r in ranks.iter().filter(|r| r["state"] == "merged") {
        let late = r["gate_late_ns"].as_i64().unwrap();
        assert!(
            (0..GATE_BOUND_NS).contains(&late),
            "rank {} opened its gate {late} ns after the start: {f}",
            r["rank"]
        );
    }
    let spread = f["gate_spread_ns"].as_i64().unwrap();
    assert!(spread < GATE_BOUND_NS, "gates {spread} ns apart: {f}");
    eprintln!("gates opened within {:.2} ms of each other", spread as f64 / 1e6);
    // One host: the clocks agree, to within the samples' own bounds.
    let skew = &f["largest_skew"];
    assert!(skew["skew_ns"].as_u64().unwrap() <= skew["uncertainty_ns"].as_u64().unwrap() + 1_000_000, "{skew}");
}

/// The table's rows, one per rank on this one host, then the fleet's.
fn assert_rows(out: &str, size: u64) {
    let host = hostname();
    for r in 0..size {
        let row = format!("{host} (rank {r}) read");
        assert_eq!(out.lines().filter(|l| l.contains(&row)).count(), 1, "a row for rank {r}:\n{out}");
    }
    assert!(out.lines().any(|l| l.contains("fleet") && l.contains(" read ")), "the fleet's row:\n{out}");
}

#[test]
fn mpirun_gates_three_ranks_together_and_merges_them_exactly() {
    if !installed("mpirun") {
        return;
    }
    let dir = scratch_dir();
    let mut c = Command::new("mpirun");
    if nix::unistd::geteuid().is_root() {
        c.arg("--allow-run-as-root");
    }
    c.args(["--oversubscribe", "-n", "3", bin(), "run", "--engine", "null", "--time", "2s"]);
    c.args(["--fleet", path_str(dir.path()), "--fleet-timeout", "20s"]);
    for v in LAUNCHER_VARS {
        c.env_remove(v);
    }
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let fleet = read_result(&dir.path().join("fleet.json"));
    assert_exact_merge(dir.path(), &[0, 1, 2], &fleet);
    assert_gates_together(&fleet, 3);
    assert_rows(&stdout(&o), 3);
    for r in 0..3u64 {
        let doc = read_result(&dir.path().join(format!("result-{r}.json")));
        let m = &doc["fleet_member"];
        assert_eq!(
            (m["launcher"].as_str(), m["rank"].as_u64(), m["size"].as_u64()),
            (Some("openmpi"), Some(r), Some(3))
        );
        assert_eq!(fleet["fleet"]["ranks"][r as usize]["state"], "merged");
    }
    assert!(fleet["fleet"]["missing"].as_array().unwrap().is_empty());
    let page = std::fs::read_to_string(dir.path().join("fleet.html")).unwrap();
    assert!(page.contains("<html") && page.contains("<th>rank</th>") && page.contains(">openmpi<"), "fleet.html");
    // A finished fleet's directory takes no second fleet.
    let again =
        process(&["run", "--engine", "null", "--fleet", path_str(dir.path()), "--rank", "0", "--fleet-size", "1"], &[])
            .output()
            .unwrap();
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    let e = stderr(&again);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("holds a finished fleet") && e.contains("give each fleet a directory of its own"), "{e}");
    assert_eq!(read_result(&dir.path().join("fleet.json")), fleet, "the finished fleet is left as it was");
}

#[test]
fn pdsh_ranks_from_flags_give_the_same_fleet() {
    if !installed("pdsh") {
        return;
    }
    let dir = scratch_dir();
    let files = scratch_dir();
    for r in 0..3 {
        make_file(files.path(), &format!("f-{r}"), 8 << 20);
    }
    let file = files.path().join("f-%n");
    let o = Command::new("pdsh")
        .args(["-R", "exec", "-w", "n0,n1,n2", bin(), "run", "--engine", "psync", "--filename", path_str(&file)])
        .args(["--time", "2s", "--fleet", path_str(dir.path()), "--rank", "%n", "--fleet-size", "3"])
        .args(["--fleet-timeout", "20s"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let fleet = read_result(&dir.path().join("fleet.json"));
    assert_exact_merge(dir.path(), &[0, 1, 2], &fleet);
    assert_gates_together(&fleet, 3);
    // pdsh prefixes each line with its host: rank 0 printed the table.
    let out = stdout(&o);
    assert!(out.lines().filter(|l| l.contains(" (rank ")).all(|l| l.starts_with("n0: ")), "{out}");
    assert_rows(&out, 3);
    // Three files, one per rank, are three targets of this host.
    let targets: Vec<&str> =
        fleet["results"]["targets"].as_array().unwrap().iter().map(|t| t["path"].as_str().unwrap()).collect();
    assert_eq!(targets.len(), 3, "{targets:?}");
    for r in 0..3u64 {
        let m = &read_result(&dir.path().join(format!("result-{r}.json")))["fleet_member"];
        assert_eq!((m["launcher"].as_str(), m["rank"].as_u64()), (Some("flags"), Some(r)));
    }
}

/// Starts `size` ranks by --rank (those in `ranks`), each on the null engine for `time`.
fn by_hand(dir: &Path, ranks: &[u64], size: u64, time: &str, timeout: &str) -> Vec<Child> {
    let (d, n) = (path_str(dir), size.to_string());
    ranks
        .iter()
        .map(|r| {
            let r = r.to_string();
            let args = ["run", "--engine", "null", "--time", time, "--fleet", d, "--rank", &r, "--fleet-size", &n];
            start(&[&args[..], &["--fleet-timeout", timeout]].concat(), &[])
        })
        .collect()
}

fn wait_for(path: &Path, within: Duration) {
    let t = Instant::now();
    while !path.exists() {
        assert!(t.elapsed() < within, "{} did not appear within {within:?}", path.display());
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_rank_killed_mid_run_is_named_missing_and_the_others_are_kept() {
    let dir = scratch_dir();
    let mut ranks = by_hand(dir.path(), &[0, 1, 2], 3, "3s", "3s");
    wait_for(&dir.path().join("gate"), Duration::from_secs(30));
    let gate: Value = serde_json::from_slice(&std::fs::read(dir.path().join("gate")).unwrap()).unwrap();
    let start_ns = gate["start_at_unix_ns"].as_u64().unwrap();
    let now_ns = || std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    // One second into the measured run.
    std::thread::sleep(Duration::from_nanos((start_ns + 1_000_000_000).saturating_sub(now_ns())));
    ranks[2].kill().unwrap();
    let _ = ranks[2].wait();
    let one = ranks.remove(1).wait_with_output().unwrap();
    let zero = ranks.remove(0).wait_with_output().unwrap();
    let ended_s = (now_ns() - start_ns) as f64 / 1e9;
    assert_eq!(one.status.code(), Some(0), "{}", stderr(&one));
    assert_eq!(zero.status.code(), Some(1), "{}{}", stdout(&zero), stderr(&zero));
    // The bound: the planned end (3 s) and the timeout (3 s), with room for a debug build's merge.
    assert!(ended_s < 3.0 + 3.0 + 4.0, "rank 0 ended {ended_s:.1} s after the start");
    eprintln!("rank 0 ended {ended_s:.1} s after the start (3 s run, 3 s timeout)");
    let fleet = read_result(&dir.path().join("fleet.json"));
    assert_exact_merge(dir.path(), &[0, 1], &fleet);
    let f = &fleet["fleet"];
    let states: Vec<&str> = f["ranks"].as_array().unwrap().iter().map(|r| r["state"].as_str().unwrap()).collect();
    assert_eq!(states, ["merged", "merged", "no_result"]);
    assert_eq!(f["missing"][0]["rank"], 2);
    let why = f["missing"][0]["why"].as_str().unwrap();
    assert!(why.starts_with("rank 2 (") && why.contains("wrote no result"), "{why}");
    let notes = fleet["merged"]["notes"].as_array().unwrap();
    assert!(notes.iter().any(|n| n.as_str().unwrap().starts_with("the merge is missing rank 2: ")), "{notes:?}");
    let out = stdout(&zero);
    assert!(out.contains(&format!("missing: {why}")), "{out}");
    assert!(out.contains("2 of 3 ranks merged"), "{out}");
    let page = std::fs::read_to_string(dir.path().join("fleet.html")).unwrap();
    assert!(page.contains("missing: rank 2 (") && page.contains("no_result"), "fleet.html names it too");
}

#[test]
fn a_rank_that_never_announces_is_named_after_the_timeout() {
    let dir = scratch_dir();
    let ranks = by_hand(dir.path(), &[0, 1], 3, "1s", "2s");
    let outs: Vec<Output> = ranks.into_iter().map(|c| c.wait_with_output().unwrap()).collect();
    assert_eq!(outs[1].status.code(), Some(0), "{}", stderr(&outs[1]));
    assert_eq!(outs[0].status.code(), Some(1), "{}", stderr(&outs[0]));
    let fleet = read_result(&dir.path().join("fleet.json"));
    assert_exact_merge(dir.path(), &[0, 1], &fleet);
    let why = fleet["fleet"]["missing"][0]["why"].as_str().unwrap();
    assert!(why.starts_with("rank 2 never announced itself in ") && why.contains("within 2 s"), "{why}");
    assert_eq!(fleet["fleet"]["ranks"][2]["state"], "never_announced");
    // Coming late, it is refused in one sentence.
    let late = by_hand(dir.path(), &[2], 3, "1s", "2s").remove(0).wait_with_output().unwrap();
    assert_eq!(late.status.code(), Some(2));
    assert!(stderr(&late).contains("holds a finished fleet"), "{}", stderr(&late));
}

#[test]
fn ranks_and_sizes_come_from_each_launchers_variables() {
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a [&'a str], &'a str);
    let cases: [Case<'_>; 5] = [
        (&[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "1")], &[], "slurm"),
        (&[("OMPI_COMM_WORLD_RANK", "0"), ("OMPI_COMM_WORLD_SIZE", "1")], &[], "openmpi"),
        (&[("PMI_RANK", "0"), ("PMI_SIZE", "1")], &[], "pmi"),
        (&[("PMIX_RANK", "0")], &["--fleet-size", "1"], "pmix"),
        (&[("JOB_COMPLETION_INDEX", "0")], &["--fleet-size", "1"], "kubernetes"),
    ];
    for (env, extra, launcher) in cases {
        let dir = scratch_dir();
        let args =
            ["run", "--engine", "null", "--time", "200ms", "--fleet", path_str(dir.path()), "--fleet-lead", "100ms"];
        let o = process(&[&args[..], extra].concat(), env).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{launcher}: {}", stderr(&o));
        let m = &read_result(&dir.path().join("result-0.json"))["fleet_member"];
        assert_eq!(
            (m["launcher"].as_str(), m["rank"].as_u64(), m["size"].as_u64()),
            (Some(launcher), Some(0), Some(1))
        );
        let fleet = read_result(&dir.path().join("fleet.json"));
        assert_eq!(fleet["fleet"]["ranks"][0]["launcher"], launcher);
    }
    // Two processes of a Slurm step, nothing but Slurm's variables.
    let dir = scratch_dir();
    let d = path_str(dir.path());
    let args = ["run", "--engine", "null", "--time", "500ms", "--fleet", d, "--fleet-lead", "200ms"];
    let ranks: Vec<Child> =
        ["0", "1"].iter().map(|r| start(&args, &[("SLURM_PROCID", r), ("SLURM_NTASKS", "2")])).collect();
    let outs: Vec<Output> = ranks.into_iter().map(|c| c.wait_with_output().unwrap()).collect();
    for o in &outs {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
    }
    let fleet = read_result(&dir.path().join("fleet.json"));
    assert_exact_merge(dir.path(), &[0, 1], &fleet);
}

/// One sentence on stderr, exit status 2.
fn refused(o: &Output) -> String {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(e.lines().count(), 1, "one sentence: {e}");
    assert!(o.stdout.is_empty(), "{}", stdout(o));
    e
}

fn names(dir: &Path) -> Vec<String> {
    let mut n: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    n.sort();
    n
}

#[test]
fn bad_fleets_are_refused_in_one_sentence_and_write_nothing() {
    let dir = scratch_dir();
    let d = path_str(dir.path());
    let run = |extra: &[&str], env: &[(&str, &str)]| {
        process(&[&["run", "--engine", "null", "--time", "1s", "--fleet", d][..], extra].concat(), env)
            .output()
            .unwrap()
    };
    let e = refused(&run(&["--rank", "0", "--fleet-size", "0"], &[]));
    assert!(e.contains("--fleet-size 0: a fleet has at least one process"), "{e}");
    let e = refused(&run(&["--rank", "3", "--fleet-size", "3"], &[]));
    assert!(e.contains("--rank 3 is not below --fleet-size 3: ranks run from 0 to 2"), "{e}");
    let e = refused(&run(&[], &[("SLURM_PROCID", "2"), ("SLURM_NTASKS", "2")]));
    assert!(e.contains("SLURM_PROCID=2 is not below SLURM_NTASKS=2"), "{e}");
    let e = refused(&run(&[], &[("OMPI_COMM_WORLD_RANK", "0"), ("OMPI_COMM_WORLD_SIZE", "0")]));
    assert!(e.contains("OMPI_COMM_WORLD_SIZE=0: a fleet has at least one process"), "{e}");
    let e = refused(&run(&[], &[]));
    assert!(e.contains("--fleet needs this process's rank"), "{e}");
    assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));

    let gone: PathBuf = dir.path().join("not-mounted");
    let o = process(&["run", "--engine", "null", "--fleet", path_str(&gone), "--rank", "0", "--fleet-size", "2"], &[])
        .output()
        .unwrap();
    let e = refused(&o);
    assert!(e.contains("no such directory on") && e.contains("mkdir -p"), "{e}");
    assert!(!gone.exists());
    let e =
        refused(&process(&["run", "job.fio", "--fleet", d, "--rank", "0", "--fleet-size", "1"], &[]).output().unwrap());
    assert!(e.contains("a job file's groups are not run as a fleet"), "{e}");
    assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
}

#[test]
fn two_processes_with_one_rank_call_the_fleet_off() {
    let dir = scratch_dir();
    // Both rank 1s claim before rank 0 starts, so rank 0 sees the second one's report at once.
    let mut ranks = by_hand(dir.path(), &[1, 1], 2, "1s", "20s");
    wait_for(&dir.path().join("rank-1.claim"), Duration::from_secs(10));
    std::thread::sleep(Duration::from_millis(300));
    ranks.extend(by_hand(dir.path(), &[0], 2, "1s", "20s"));
    let outs: Vec<Output> = ranks.into_iter().map(|c| c.wait_with_output().unwrap()).collect();
    let lines: Vec<String> = outs.iter().map(refused).collect();
    assert!(lines.iter().any(|l| l.contains("rank 1 is already taken in")), "{lines:?}");
    assert!(lines.iter().filter(|l| l.contains("two processes were given rank 1")).count() == 3, "{lines:?}");
    let n = names(dir.path());
    assert!(!n.iter().any(|f| f.ends_with(".json")), "no result, no fleet.json: {n:?}");
    // The called-off fleet's directory is refused for another.
    let again = by_hand(dir.path(), &[0], 1, "1s", "20s").remove(0).wait_with_output().unwrap();
    assert!(refused(&again).contains("holds a fleet that was called off (two processes were given rank 1"));
}

/// A result's histogram of `dir`'s total, decoded by HdrHistogram itself (not by nvmebench).
fn histogram(doc: &Value, dir: &str) -> hdrhistogram::Histogram<u64> {
    use base64::Engine as _;
    let text = doc["results"]["total"][dir]["hist"].as_str().expect("a histogram");
    let bytes = base64::engine::general_purpose::STANDARD.decode(text).expect("base64");
    hdrhistogram::serialization::Deserializer::new().deserialize(&mut &bytes[..]).expect("HdrHistogram V2 deflate")
}

/// fleet.json's percentiles are those of every I/O of the fleet: the ranks' histograms, read back
/// from their result files with HdrHistogram and added bucket by bucket (the histogram of all their
/// I/Os together), give each percentile fleet.json states, exactly, and its count, max and mean;
/// the ranks ran different block sizes, so their own percentiles differ and no one rank's stands in
/// for the fleet's.
#[test]
fn the_fleets_percentiles_are_those_of_all_its_ios() {
    let dir = scratch_dir();
    let files = scratch_dir();
    let d = path_str(dir.path());
    let sizes = ["4k", "128k", "16k"];
    let ranks: Vec<Child> = sizes
        .iter()
        .enumerate()
        .map(|(r, bs)| {
            let f = make_file(files.path(), &format!("f-{r}"), 8 << 20);
            let rank = r.to_string();
            let args = ["run", "--engine", "psync", "--filename", path_str(&f), "--bs", bs, "--time", "1s"];
            start(
                &[&args[..], &["--fleet", d, "--rank", &rank, "--fleet-size", "3", "--fleet-timeout", "20s"]].concat(),
                &[],
            )
        })
        .collect();
    let outs: Vec<Output> = ranks.into_iter().map(|c| c.wait_with_output().unwrap()).collect();
    for o in &outs {
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(o), stderr(o));
    }
    let fleet = read_result(&dir.path().join("fleet.json"));
    let docs: Vec<Value> = (0..3).map(|r| read_result(&dir.path().join(format!("result-{r}.json")))).collect();
    let mut all = histogram(&docs[0], "read");
    for doc in &docs[1..] {
        all.add(histogram(doc, "read")).unwrap();
    }
    let lat = &fleet["results"]["total"]["read"]["lat_ns"];
    let ios = fleet["results"]["total"]["read"]["ios"].as_u64().unwrap();
    assert_eq!(all.len(), ios, "the fleet counts every I/O of its ranks once");
    let max: u64 = docs.iter().map(|d| d["results"]["total"]["read"]["lat_ns"]["max"].as_u64().unwrap()).max().unwrap();
    assert_eq!(lat["max"].as_u64(), Some(max));
    let sum: u128 = docs
        .iter()
        .map(|d| d["results"]["total"]["read"]["lat_ns"]["sum"].as_str().unwrap().parse::<u128>().unwrap())
        .sum();
    assert_eq!(lat["sum"].as_str().unwrap().parse::<u128>().unwrap(), sum);
    let mean = lat["mean"].as_f64().unwrap();
    assert!((mean - sum as f64 / ios as f64).abs() <= 1e-9 * mean, "mean {mean}");
    let stated = lat["percentiles"].as_object().unwrap();
    assert!(stated.len() >= 5, "{stated:?}");
    for (key, value) in stated {
        let p: f64 = key.parse().unwrap();
        let of_all = all.value_at_quantile(p / 100.0).min(max);
        assert_eq!(value.as_u64(), Some(of_all), "p{key}: fleet.json's against every I/O's");
    }
    // The ranks' medians differ (their block sizes do), so the fleet's is not one rank's by chance
    // of the workload: it is where all their I/Os put it.
    let medians: Vec<u64> =
        docs.iter().map(|d| d["results"]["total"]["read"]["lat_ns"]["percentiles"]["50.0"].as_u64().unwrap()).collect();
    assert!(medians[0] < medians[1], "4k reads are faster than 128k ones: {medians:?}");
    eprintln!("medians by rank {medians:?}, the fleet's {}", stated["50.0"]);
}

//! `nvmebench suite`: profiles produce their documented mixes, sweeps visit every point, iorate
//! curves track their targets and stop, preconditioning reaches steady state, suites resume after
//! being killed, and bad input is refused before anything is written.

use crate::common::{nvmebench, read_result, scratch_dir, spawn, stderr, stdout, uring_available};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Suites spin their workers; run one at a time so that timing checks see the machine, not each other.
static SERIAL: Mutex<()> = Mutex::new(());

pub(crate) fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn read(path: &Path) -> Value {
    read_result(path)
}

/// The step files of a results directory, by name.
fn steps(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    v.sort();
    v
}

fn suite(args: &[&str]) -> std::process::Output {
    let mut v = vec!["suite", "--quiet"];
    v.extend_from_slice(args);
    nvmebench(&v)
}

/// Mean block size of a documented mix, `(bytes, percent)`.
fn mean_bs(mix: &[(f64, f64)]) -> f64 {
    mix.iter().map(|(b, p)| b * p / 100.0).sum()
}

/// Mean block size of a bssplit text (one direction) as the step file records it.
fn mean_of_bssplit(text: &str) -> f64 {
    let parse = |s: &str| -> f64 {
        let (n, mult) = match s.chars().last().unwrap() {
            'k' => (&s[..s.len() - 1], 1024.0),
            'm' => (&s[..s.len() - 1], 1048576.0),
            _ => (s, 1.0),
        };
        n.parse::<f64>().unwrap() * mult
    };
    let entries: Vec<(f64, f64)> = text
        .split(':')
        .map(|e| match e.split_once('/') {
            Some((b, w)) => (parse(b), w.parse().unwrap()),
            None => (parse(e), 100.0),
        })
        .collect();
    mean_bs(&entries)
}

fn close(observed: f64, expected: f64, rel: f64) -> bool {
    (observed - expected).abs() <= rel * expected.max(1e-9)
}

/// Checks every stream of a run step against its recorded workload and returns the step's streams.
fn check_streams(doc: &Value) -> Vec<Value> {
    let streams = doc["streams"].as_array().expect("a run step lists its streams").clone();
    for s in &streams {
        let (r, w) = (s["read"]["ios"].as_f64().unwrap(), s["write"]["ios"].as_f64().unwrap());
        assert!(r + w > 2000.0, "too few I/Os to judge a mix: {s}");
        let want = s["read_percent"].as_f64().unwrap() / 100.0;
        let got = r / (r + w);
        assert!((got - want).abs() < 0.03, "{}: read share {got} vs {want}", doc["label"]);
        let (rmix, wmix) = s["bssplit"].as_str().unwrap().split_once(',').unwrap();
        for (dir, mix, n) in [("read", rmix, r), ("write", wmix, w)] {
            if n < 1000.0 {
                continue;
            }
            let bs = s[dir]["io_bytes"].as_f64().unwrap() / n;
            assert!(close(bs, mean_of_bssplit(mix), 0.06), "{} {dir}: mean bs {bs} vs mix {mix}", doc["label"]);
        }
    }
    streams
}

#[test]
fn every_profile_produces_its_documented_mix() {
    let _one_at_a_time = serial();
    let dir = scratch_dir();
    let profiles = [
        "four-corners",
        "8k-70-30",
        "file-server",
        "web-server",
        "database-sql",
        "database-oracle",
        "vdi",
        "working-set-25",
    ];
    for p in profiles {
        let out = dir.path().join(p);
        let o = suite(&[
            p,
            "--engine",
            "null",
            "--size",
            "4g",
            "--jobs",
            "2",
            "--qd",
            "8",
            "--time",
            "300ms",
            "--dir",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{p}: {}", stderr(&o));
        for f in steps(&out) {
            let doc = read(&f);
            let streams = check_streams(&doc);
            // The documented mixes, written out here rather than read from the profiles.
            let s = &streams[0];
            let mean = |dir: &str| s[dir]["io_bytes"].as_f64().unwrap() / s[dir]["ios"].as_f64().unwrap();
            let share = |dir: &str| {
                s[dir]["ios"].as_f64().unwrap()
                    / (s["read"]["ios"].as_f64().unwrap() + s["write"]["ios"].as_f64().unwrap())
            };
            let name = doc["label"].as_str().unwrap().to_string();
            match name.as_str() {
                "file-server/file-server" => {
                    let mix = [
                        (512.0, 10.0),
                        (1024.0, 5.0),
                        (2048.0, 5.0),
                        (4096.0, 60.0),
                        (8192.0, 2.0),
                        (16384.0, 4.0),
                        (32768.0, 4.0),
                        (65536.0, 10.0),
                    ];
                    assert!((share("read") - 0.80).abs() < 0.02, "{}", share("read"));
                    assert!(close(mean("read"), mean_bs(&mix), 0.05) && close(mean("write"), mean_bs(&mix), 0.06));
                }
                "web-server/web-server" => {
                    let mix = [
                        (512.0, 22.0),
                        (1024.0, 15.0),
                        (2048.0, 8.0),
                        (4096.0, 23.0),
                        (8192.0, 15.0),
                        (16384.0, 2.0),
                        (32768.0, 6.0),
                        (65536.0, 7.0),
                        (131072.0, 1.0),
                        (524288.0, 1.0),
                    ];
                    assert_eq!(share("read"), 1.0);
                    assert!(close(mean("read"), mean_bs(&mix), 0.06), "{} vs {}", mean("read"), mean_bs(&mix));
                }
                "8k-70-30/8k-70-30" => {
                    assert!((share("read") - 0.70).abs() < 0.02);
                    assert_eq!((mean("read"), mean("write")), (8192.0, 8192.0));
                }
                "four-corners/4k-randread" => assert_eq!((share("read"), mean("read")), (1.0, 4096.0)),
                "four-corners/64k-write" => {
                    assert_eq!((share("write"), mean("write")), (1.0, 65536.0));
                    assert_eq!(s["rw"], "write");
                }
                "database-sql/sql-80-20" | "database-oracle/oracle-90-10" => {
                    assert_eq!(streams.len(), 2, "data and log streams");
                    assert_eq!(streams[1]["read"]["ios"], 0, "the log only writes");
                    assert_eq!((streams[1]["threads"].as_u64(), streams[1]["qd"].as_u64()), (Some(1), Some(1)));
                }
                "database-sql/sql-100-0" => assert_eq!(streams.len(), 1, "read-only: no log"),
                "working-set-25/ws25-4k-randread" => {
                    assert_eq!(s["range_bytes"].as_u64(), Some(1 << 30), "25% of 4g");
                }
                _ => {}
            }
        }
    }
}

#[test]
fn a_sweep_visits_every_point_and_marks_peak_and_knee() {
    let _one_at_a_time = serial();
    let dir = scratch_dir();
    let d = dir.path().join("s");
    let o = suite(&[
        "8k-70-30",
        "--engine",
        "null:lat=200us",
        "--time",
        "200ms",
        "--sweep",
        "1..2x1..4",
        "--dir",
        d.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = read(&d.join("02-8k-70-30-8k-70-30-sweep.json"));
    let pts = doc["sweep_points"].as_array().unwrap();
    let visited: Vec<(u64, u64)> =
        pts.iter().map(|p| (p["threads"].as_u64().unwrap(), p["qd"].as_u64().unwrap())).collect();
    assert_eq!(visited, [(1, 1), (1, 2), (1, 4), (2, 1), (2, 2), (2, 4)]);
    let runs = doc["point_runs"].as_array().unwrap();
    for (run, (t, q)) in runs.iter().zip(&visited) {
        assert_eq!(run["results"]["workers"].as_array().unwrap().len() as u64, *t);
        assert_eq!(run["config"]["queue_depth"].as_u64(), Some(*q));
    }
    // Closed loop at 200 µs a slot: IOPS grows with the slots (a slot gives at most 5000).
    let iops = |i: usize| pts[i]["iops"].as_f64().unwrap();
    assert!(iops(2) > 2.0 * iops(0) && iops(0) < 5200.0, "{pts:?}");
    assert!(
        doc["peak"]["iops"].as_f64().unwrap() >= pts.iter().map(|p| p["iops"].as_f64().unwrap()).fold(0.0, f64::max)
    );
    assert!(doc["knee"].is_object() || doc["knee"].is_null());
    let grid = &doc["sweeps"][0];
    assert_eq!(grid["threads"], serde_json::json!([1, 2]));
    assert_eq!(grid["queue_depths"], serde_json::json!([1, 2, 4]));
    assert_eq!(grid["iops"][1][2].as_f64(), Some(iops(5)));
    let table = stdout(&o);
    assert!(table.contains("<- peak IOPS") && table.contains("     2x4"), "{table}");
}

#[test]
fn an_iorate_curve_tracks_its_targets_and_stops_past_the_limit() {
    let _one_at_a_time = serial();
    let dir = scratch_dir();
    let d = dir.path().join("c");
    let o = suite(&[
        "8k-70-30",
        "--engine",
        "null:lat=1ms",
        "--qd",
        "8",
        "--time",
        "400ms",
        "--curve",
        "--stop-latency",
        "3ms",
        "--dir",
        d.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = read(&d.join("02-8k-70-30-8k-70-30-curve.json"));
    let max = doc["max_iops"].as_f64().unwrap();
    // Eight slots of 1 ms: at most 8000 IOPS (less when the machine is busy).
    assert!(max > 500.0 && max < 8100.0, "{max}");
    let curve = &doc["iorate"][0];
    let points = curve["points"].as_array().unwrap();
    let percents: Vec<u64> = points.iter().map(|p| p["percent"].as_u64().unwrap()).collect();
    assert_eq!(percents[..], [10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120][..percents.len()]);
    // Well below saturation a paced run achieves its target.
    for p in points.iter().filter(|p| p["percent"].as_u64().unwrap() <= 50) {
        let (target, got) = (p["target_iops"].as_f64().unwrap(), p["iops"].as_f64().unwrap());
        assert!(close(got, target, 0.10), "achieved {got} of {target} at {}%", p["percent"]);
    }
    // At 120% of the maximum the backlog grows through the run, and latency counted from the
    // intended times passes 3 ms by then at the latest: the curve stops at the first point past it.
    let last = points.last().unwrap();
    assert_eq!(curve["stop"]["rule"], "mean above 3.000ms", "the curve did not stop: {:?}", percents);
    assert!(last["mean_ns"].as_f64().unwrap() > 3e6);
    assert!(points[..points.len() - 1].iter().all(|p| p["mean_ns"].as_f64().unwrap() <= 3e6));
    assert_eq!(curve["stop"]["iops"], last["iops"]);
    assert_eq!(doc["point_runs"].as_array().unwrap().len(), points.len());
}

#[test]
fn preconditioning_stops_at_the_first_steady_window_or_the_round_limit() {
    let _one_at_a_time = serial();
    let dir = scratch_dir();
    let d = dir.path().join("p");
    let o = suite(&[
        "8k-70-30",
        "--precondition",
        "--engine",
        "null:lat=1ms",
        "--size",
        "64m",
        "--fill",
        "1",
        "--qd",
        "8",
        "--time",
        "200ms",
        "--max-rounds",
        "8",
        "--dir",
        d.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = read(&d.join("01-precondition.json"));
    assert!(doc["purge"].as_str().unwrap().starts_with("not applicable"));
    assert_eq!(doc["fill"]["bytes"].as_u64(), Some(64 << 20));
    let rounds: Vec<f64> =
        doc["steady_state"][0]["rounds"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert_eq!(doc["round_runs"].as_array().unwrap().len(), rounds.len());
    // The suite stops at the first round whose window passes PTS's rules, or after --max-rounds.
    let steady_at = |n: usize| {
        let w = &rounds[n - 5..n];
        let avg = w.iter().sum::<f64>() / 5.0;
        let (lo, hi) = w.iter().fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
        let slope = w.iter().enumerate().map(|(i, v)| (i as f64 - 2.0) * (v - avg)).sum::<f64>() / 10.0;
        (hi - lo) <= 0.2 * avg && (slope * 4.0).abs() <= 0.1 * avg
    };
    let first = (5..=rounds.len()).find(|&n| steady_at(n));
    match first {
        Some(n) => {
            assert_eq!(
                (rounds.len(), &doc["steady"]["reached"], doc["steady"]["round"].as_u64()),
                (n, &Value::Bool(true), Some(n as u64))
            );
        }
        None => assert_eq!((rounds.len(), &doc["steady"]["reached"]), (8, &Value::Bool(false))),
    }
    assert!(stderr(&o).contains(&format!("round {}:", rounds.len())), "{}", stderr(&o));
}

#[test]
fn profiles_run_on_a_file_with_purge_and_fill() {
    let _one_at_a_time = serial();
    if !uring_available() {
        return;
    }
    let dir = scratch_dir();
    let f = dir.path().join("target.dat");
    let d = dir.path().join("f");
    let o = suite(&[
        "file-server",
        "--precondition",
        "--filename",
        f.to_str().unwrap(),
        "--size",
        "16m",
        "--fill",
        "1",
        "--qd",
        "4",
        "--time",
        "200ms",
        "--max-rounds",
        "5",
        "--allow-destroy",
        "--dir",
        d.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let pre = read(&d.join("01-precondition.json"));
    assert!(pre["purge"].as_str().unwrap().starts_with("done: fallocate --punch-hole"), "{pre}");
    assert_eq!(pre["fill"]["bytes"].as_u64(), Some(16 << 20));
    let n = pre["steady_state"][0]["rounds"].as_array().unwrap().len();
    assert!((1..=5).contains(&n));
    assert_eq!(pre["steady"]["reached"] == true, pre["steady"]["round"].as_u64() == Some(n as u64));
    let run = read(&d.join("02-file-server-file-server.json"));
    let s = &run["streams"][0];
    let (r, w) = (s["read"]["ios"].as_f64().unwrap(), s["write"]["ios"].as_f64().unwrap());
    assert!(r + w > 100.0 && r > w, "{s}");
    assert_eq!(run["results"]["total"]["errors"]["total"], 0);
}

/// Waits until `path` exists, or panics after `limit`.
fn wait_for(path: &Path, limit: Duration) {
    let start = Instant::now();
    while !path.exists() {
        assert!(start.elapsed() < limit, "{} did not appear", path.display());
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_killed_suite_resumes_after_its_finished_steps() {
    let _one_at_a_time = serial();
    let dir = scratch_dir();
    let d = dir.path().join("r");
    let args = [
        "suite",
        "--quiet",
        "four-corners",
        "--engine",
        "null:lat=50us",
        "--time",
        "300ms",
        "--dir",
        d.to_str().unwrap(),
    ];
    let mut child = Command::new(env!("CARGO_BIN_EXE_nvmebench"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let first = d.join("01-four-corners-4k-randread.json");
    wait_for(&first, Duration::from_secs(20));
    child.kill().unwrap();
    child.wait().unwrap();
    let before = std::fs::read(&first).unwrap();
    let done = steps(&d).len();
    assert!(done < 6, "killed before the end: {done} steps done");

    // Other options are another plan: refused, nothing touched.
    let mut other = args.to_vec();
    other[6] = "400ms";
    let o = nvmebench(&other);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("holds results of a different suite plan"), "{}", stderr(&o));

    let o = nvmebench(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let log = stderr(&o);
    assert!(log.contains("step 1/6 01-four-corners-4k-randread: done earlier, skipped"), "{log}");
    assert_eq!(log.matches("done earlier, skipped").count(), done);
    assert_eq!(std::fs::read(&first).unwrap(), before, "a finished step is not run again");
    assert_eq!(steps(&d).len(), 6);
    let summary = std::fs::read_to_string(d.join("summary.md")).unwrap();
    assert_eq!(summary.matches(" IOPS, mean ").count(), 6, "{summary}");
    // No temporary file is left behind by the killed run's writes.
    assert!(std::fs::read_dir(&d).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().contains(".tmp")));
}

#[test]
fn a_target_list_resumes_however_it_is_spelt_but_not_reordered() {
    let _one_at_a_time = serial();
    let dir = scratch_dir();
    let (a, b) = (dir.path().join("a.dat"), dir.path().join("b.dat"));
    for f in [&a, &b] {
        std::fs::File::create(f).unwrap().set_len(8 << 20).unwrap();
    }
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let d = dir.path().join("r");
    let d = d.to_str().unwrap();
    let run = |targets: &[&str]| {
        let mut args = vec!["four-corners", "--engine", "null", "--time", "100ms", "--dir", d];
        for t in targets {
            args.extend(["--filename", t]);
        }
        suite(&args)
    };
    let joined = format!("{a}:{b}");
    let o = run(&[&joined]);
    assert!(o.status.success(), "{}", stderr(&o));
    let done = steps(Path::new(d)).len();

    // The same two targets, typed apart: the same plan, every step done earlier.
    let o = run(&[a, b]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o).matches("done earlier, skipped").count(), done, "{}", stderr(&o));

    // Another order places the workers' lanes otherwise: another plan.
    let o = run(&[&format!("{b}:{a}")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("holds results of a different suite plan"), "{}", stderr(&o));
}

/// The plan records where the target is, not how its path was typed: `a.dat`, `./a.dat`,
/// `sub/../a.dat`, a symlink and the absolute path all resume, also for a file the first run
/// created (it did not exist when that plan was made); the step files keep the path as typed.
#[test]
fn a_target_resumes_by_any_path_to_it_and_the_steps_keep_the_path_as_typed() {
    let _one_at_a_time = serial();
    let dir = scratch_dir();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::os::unix::fs::symlink("a.dat", dir.path().join("link.dat")).unwrap();
    let run = |target: &str| {
        Command::new(env!("CARGO_BIN_EXE_nvmebench"))
            .current_dir(dir.path())
            .args(["suite", "--quiet", "four-corners", "--engine", "null", "--time", "100ms", "--size", "8m"])
            .args(["--dir", "r", "--filename", target])
            .output()
            .unwrap()
    };
    let o = run("a.dat");
    assert!(o.status.success(), "{}", stderr(&o));
    let r = dir.path().join("r");
    let done = steps(&r).len();
    assert_eq!(done, 6);
    let first = std::fs::read(r.join("01-four-corners-4k-randread.json")).unwrap();

    let absolute = dir.path().join("a.dat").display().to_string();
    for spelt in ["./a.dat", "sub/../a.dat", "link.dat", &absolute] {
        let o = run(spelt);
        assert!(o.status.success(), "{spelt}: {}", stderr(&o));
        assert_eq!(stderr(&o).matches("done earlier, skipped").count(), done, "{spelt}: {}", stderr(&o));
    }
    assert_eq!(std::fs::read(r.join("01-four-corners-4k-randread.json")).unwrap(), first, "nothing run again");
    let doc = read(&r.join("01-four-corners-4k-randread.json"));
    assert_eq!(doc["config"]["target"]["path"], "a.dat", "the path as typed");

    // Another file is another plan: refused before it is created.
    let o = run("sub/b.dat");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("holds results of a different suite plan"), "{}", stderr(&o));
    assert!(!dir.path().join("sub/b.dat").exists());
}

#[test]
fn lost_ios_fail_the_suite_and_a_resume_remembers_it() {
    // Every I/O outlives the run and the drain (10 s): the step records 32 I/Os given up.
    let _one_at_a_time = serial();
    let dir = scratch_dir();
    let d = dir.path().join("lost");
    let args = ["8k-70-30", "--engine", "null:lat=1h", "--time", "100ms", "--dir", d.to_str().unwrap()];
    let o = suite(&args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("32 I/Os were still in flight when the drain timed out"), "{}", stderr(&o));
    // Resumed, the step is skipped, and its lost I/Os still decide the exit status.
    let o = suite(&args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("done earlier, skipped (it recorded I/O errors or lost I/Os)"), "{}", stderr(&o));
}

#[test]
fn the_report_draws_suite_results() {
    let _one_at_a_time = serial();
    let dir = scratch_dir();
    let d = dir.path().join("rep");
    let o = suite(&[
        "8k-70-30",
        "--precondition",
        "--engine",
        "null:lat=1ms",
        "--size",
        "8m",
        "--qd",
        "4",
        "--time",
        "150ms",
        "--max-rounds",
        "5",
        "--sweep",
        "1x1,1x2",
        "--curve",
        "--stop-latency",
        "2ms",
        "--dir",
        d.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = dir.path().join("r.html");
    let o = nvmebench(&["report", d.to_str().unwrap(), "-o", html.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let page = std::fs::read_to_string(&html).unwrap();
    for part in ["IOPS against latency", "Steady state", "8k-70-30/8k-70-30 iorate", "precondition: 4k randwrite"] {
        assert!(page.contains(part), "missing {part}");
    }
    // 1x1 and 1x2 form a grid (one thread count): the heat map is drawn too.
    assert!(page.contains("Threads × queue depth"));
}

#[test]
fn bad_suite_input_is_refused_before_anything_is_written() {
    let _one_at_a_time = serial();
    let dir = scratch_dir();
    let d = dir.path().join("never");
    let ds = d.to_str().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "name = \"mine\"\ndescription = \"x\"\n[[step]]\nname = \"a\"\nrw = \"randread\"\nbs = \"4x\"\n",
    )
    .unwrap();
    let cases: [(&[&str], &str); 11] = [
        (&["four-corners", "--engine", "null", "--size", "1m", "--jobs", "32"], "32 sequential workers leave each"),
        (&["quick", "--engine", "spdk"], "spdk"),
        (&["nosuch", "--engine", "null"], "'nosuch' is not a suite or a profile"),
        // The name is checked before the target: its sentence is the one that helps.
        (&["nosuch"], "'nosuch' is not a suite or a profile"),
        (&["--list", "quick"], "--list lists every suite and takes no NAME ('quick')"),
        (&["quick"], "--engine uring needs a target"),
        (&["8k-70-30", "--engine", "null", "--stop-latency", "5ms"], "--stop-latency ends iorate curves"),
        (&["8k-70-30", "--engine", "null", "--sweep", "2x"], "--sweep: '2x' is not a sweep point"),
        (&["mine", "--engine", "null", "--profile", bad.to_str().unwrap()], "(mine) step a: bs"),
        (&["8k-70-30", "--engine", "null", "--curve", "--stop-latency", "p95:1ms"], "'p95' is not a latency"),
        (&["8k-70-30", "--engine", "null", "--working-set", "0%"], "--working-set"),
    ];
    for (args, want) in cases {
        let mut v = args.to_vec();
        v.extend(["--dir", ds]);
        let o = suite(&v);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains(want), "{args:?}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "one line: {e}");
        assert!(!d.exists(), "{args:?} wrote the results directory");
    }
    // A parent that exists but takes no new directory (procfs): refused before anything runs.
    let o = suite(&["quick", "--engine", "null", "--dir", "/proc/nvmebench-no-such-dir"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("--dir /proc/nvmebench-no-such-dir: cannot create it"), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "one line: {e}");
}

/// SIGTERM in preconditioning and SIGINT in a measuring step: exit 128+N within a second, the
/// finished steps and the summary kept, nothing half-written, and a rerun resumes.
#[test]
fn a_signal_in_preconditioning_or_a_step_ends_the_suite_cleanly() {
    let _one_at_a_time = serial();
    let dir = scratch_dir();
    let d = dir.path().join("s");
    let args = [
        "suite",
        "--quiet",
        "8k-70-30",
        "--precondition",
        "--engine",
        "null:lat=1ms",
        "--size",
        "64m",
        "--fill",
        "1",
        "--qd",
        "8",
        "--time",
        "1s",
        "--max-rounds",
        "5",
        "--dir",
        d.to_str().unwrap(),
    ];
    let signal_after = |sig: &str, ready: &dyn Fn() -> bool| {
        let child = spawn(args);
        let start = Instant::now();
        while !ready() {
            assert!(start.elapsed() < Duration::from_secs(60), "the suite never got there");
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(300));
        assert!(Command::new("kill").args([sig, &child.id().to_string()]).status().unwrap().success());
        let sent = Instant::now();
        let o = child.wait_with_output().unwrap();
        assert!(sent.elapsed() < Duration::from_secs(3), "took {:?} to stop", sent.elapsed());
        o
    };

    // In preconditioning (round 1 of the fill/steady-state step): nothing recorded yet.
    let o = signal_after("-TERM", &|| d.join("plan.json").exists() || d.exists());
    assert_eq!(o.status.code(), Some(143), "{}", stderr(&o));
    assert!(stderr(&o).contains("interrupted in step 1 (01-precondition)"), "{}", stderr(&o));
    assert!(steps(&d).iter().all(|p| !p.ends_with("01-precondition.json")), "an interrupted step is not recorded");

    // In the measuring step after it: preconditioning kept, the summary written.
    let pre = d.join("01-precondition.json");
    let o = signal_after("-INT", &|| pre.exists());
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(stderr(&o).contains("interrupted in step 2"), "{}", stderr(&o));
    assert!(pre.exists() && d.join("summary.md").exists());
    assert!(std::fs::read_dir(&d).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().contains(".tmp")));

    // A rerun resumes after the finished preconditioning.
    let o = nvmebench(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("01-precondition: done earlier, skipped"), "{}", stderr(&o));
}

#[test]
fn suites_run_every_step_on_several_targets_with_per_target_figures() {
    let _one_at_a_time = serial();
    let dir = scratch_dir();
    let (a, b) = (dir.path().join("a.dat"), dir.path().join("b.dat"));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let d = dir.path().join("m");
    let o = suite(&[
        "8k-70-30",
        "--engine",
        "psync",
        "--precondition",
        "--filename",
        &format!("{a}:{b}"),
        "--size",
        "8m",
        "--fill",
        "1",
        "--time",
        "300ms",
        "--max-rounds",
        "5",
        "--curve",
        "--allow-destroy",
        "--dir",
        d.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Both files were created at --size, purged and filled.
    assert_eq!((std::fs::metadata(a).unwrap().len(), std::fs::metadata(b).unwrap().len()), (8 << 20, 8 << 20));
    let pre = read(&d.join("01-precondition.json"));
    let purge = pre["purge"].as_str().unwrap();
    assert!(purge.starts_with(&format!("{a}: done: fallocate")) && purge.contains(&format!("; {b}: done:")), "{purge}");
    let fill = &pre["fill_run"]["results"]["targets"];
    assert_eq!(fill[0]["write"]["io_bytes"].as_u64(), Some(8 << 20), "the fill covers each target: {fill}");
    assert_eq!(fill[1]["write"]["io_bytes"].as_u64(), Some(8 << 20));

    // A profile step: each target's block and series, and the summary names both.
    let run = read(&d.join("02-8k-70-30-8k-70-30.json"));
    let targets = run["results"]["targets"].as_array().expect("per-target blocks in a suite step");
    assert_eq!(targets.iter().map(|t| t["path"].as_str().unwrap()).collect::<Vec<_>>(), [a, b]);
    assert!(
        targets
            .iter()
            .all(|t| t["read"]["ios"].as_u64().unwrap() > 0 && !t["intervals"].as_array().unwrap().is_empty())
    );
    let summary = run["suite_step"]["summary"].as_str().unwrap();
    assert!(summary.contains(&format!("({a}: ")) && summary.contains(&format!("; {b}: ")), "{summary}");

    // The curve paces each worker at its share of what it did over both targets.
    let curve = read(&d.join("03-8k-70-30-8k-70-30-curve.json"));
    let p = &curve["iorate"][0]["points"][0];
    let (target, got) = (p["target_iops"].as_f64().unwrap(), p["iops"].as_f64().unwrap());
    assert!(close(got, target, 0.25), "achieved {got} of {target} at 10%");
    assert_eq!(curve["point_runs"][0]["results"]["targets"].as_array().map(Vec::len), Some(2));
}

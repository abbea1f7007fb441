//! The files users pass around, fuzzed: job files (the INI parser, includes, variables, then the
//! plan and every job's resolution), result documents (`report` and `merge`: JSON, base64 and the
//! HdrHistogram bytes inside), verify-state files (read and checked against a run's working set),
//! suite profiles and, with the spdk feature, transport IDs.
//!
//! Each target starts from valid inputs and mutates them (byte flips and writes, deletions,
//! insertions of the words parsers trip on, truncation, splices from other valid inputs, lines
//! swapped, repeated and moved between inputs; for JSON also values replaced, deleted and swapped
//! between fields; for histograms the inflated HdrHistogram bytes themselves, deflated again so the
//! decoder sees them), and also draws random inputs. Every case must end in an answer or one
//! sentence (no panic), within [`CASE_SECONDS`], and allocate at most [`CASE_BYTES`] beyond what it
//! read (a counting allocator watches the fuzzing thread; a request past [`HARD_CAP_BYTES`] is
//! refused, which aborts the test binary rather than the machine). The first inputs of each
//! target that are refused in process are also passed to the binary, which must exit with status
//! 2, print one line on stderr and nothing on stdout, and write nothing.
//!
//! Cases per target and the seed they are drawn from are fixed here ([`Target::cases`], [`seed`]:
//! about two minutes for all of them in a debug build on two busy cores), so a run is the same
//! everywhere; `scripts/fuzz.sh --cases N` runs N per target from a fresh seed it prints
//! (NVMEBENCH_FUZZ_CASES, NVMEBENCH_FUZZ_SEED).

use crate::common::scratch_dir;
use nvmebench::cli::{Cli, Command, RunArgs};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::Value;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The longest one in-process case may take (a debug build on a loaded machine).
const CASE_SECONDS: f64 = 10.0;
/// The most one case may have allocated at once, beyond the input it read.
const CASE_BYTES: isize = 64 << 20;
/// A request that would take the fuzzing thread past this is refused (and the test binary aborts
/// with "memory allocation of N bytes failed"), so an unbounded allocation cannot take the machine.
const HARD_CAP_BYTES: isize = 1 << 30;
/// The longest the binary may take over one input.
const BINARY_SECONDS: u64 = 60;

// ---- The budget ----------------------------------------------------------------------------

/// A fuzz target's fixed budget.
struct Target {
    /// In-process cases in the suite.
    cases: u32,
    /// Of the inputs refused in process, how many also go through the binary.
    binary: usize,
}

impl Target {
    /// The cases to run: the suite's, or NVMEBENCH_FUZZ_CASES per target (scripts/fuzz.sh).
    fn cases(&self) -> u32 {
        std::env::var("NVMEBENCH_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(self.cases)
    }

    /// The binary's share: the suite's, or a twentieth of a longer run's cases.
    fn binary(&self) -> usize {
        let n = std::env::var("NVMEBENCH_FUZZ_CASES").ok().and_then(|v| v.parse::<usize>().ok());
        n.map_or(self.binary, |n| self.binary.max(n / 20))
    }

    /// Runs `test` on `self.cases()` inputs of `strategy` drawn from [`seed`]; a failing case is
    /// shrunk and reported with the seed that reproduces it.
    fn run<S: Strategy>(&self, strategy: S, mut test: impl FnMut(S::Value) -> Result<(), TestCaseError>)
    where
        S::Value: std::fmt::Debug,
    {
        let seed = seed();
        let config = Config {
            cases: self.cases(),
            failure_persistence: None,
            rng_seed: proptest::test_runner::RngSeed::Fixed(seed),
            ..Config::default()
        };
        let mut runner = TestRunner::new(config);
        // proptest's runner takes an `Fn`; the cases keep tallies, so the closure is borrowed
        // mutably one case at a time.
        let test = std::cell::RefCell::new(&mut test);
        if let Err(e) = runner.run(&strategy, |v| (test.borrow_mut())(v)) {
            panic!("{e} (NVMEBENCH_FUZZ_SEED={seed} reproduces it)");
        }
    }
}

/// The seed cases are drawn from: fixed in the suite, so that a run is the same on every machine
/// and a failure repeats; NVMEBENCH_FUZZ_SEED (scripts/fuzz.sh draws one) to explore further.
fn seed() -> u64 {
    std::env::var("NVMEBENCH_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(30)
}

// ---- Watching one case: its allocations and its time ---------------------------------------

struct Counting;

thread_local! {
    static ARMED: Cell<bool> = const { Cell::new(false) };
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

/// Counts `delta` bytes against the calling thread when it is being watched; `false` refuses a
/// growth past the hard cap.
fn note(delta: isize) -> bool {
    ARMED
        .try_with(|armed| {
            if !armed.get() {
                return true;
            }
            let live = LIVE.with(Cell::get) + delta;
            if delta > 0 && live > HARD_CAP_BYTES {
                return false;
            }
            LIVE.with(|l| l.set(live));
            PEAK.with(|p| p.set(p.get().max(live)));
            true
        })
        .unwrap_or(true)
}

// SAFETY: every call is passed on to the system allocator unchanged; the bookkeeping touches only
// const-initialised thread-locals (no allocation, no destructor).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if !note(l.size() as isize) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's layout, passed on.
        unsafe { System.alloc(l) }
    }

    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        if !note(l.size() as isize) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's layout, passed on.
        unsafe { System.alloc_zeroed(l) }
    }

    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        note(-(l.size() as isize));
        // SAFETY: `p` came from this allocator (the system's) with `l`.
        unsafe { System.dealloc(p, l) }
    }

    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        if !note(new as isize - l.size() as isize) {
            return std::ptr::null_mut();
        }
        // SAFETY: `p` came from this allocator (the system's) with `l`.
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f`, watching the calling thread: its result, the most it had allocated at once, its time.
fn watched<R>(f: impl FnOnce() -> R) -> (R, isize, f64) {
    LIVE.with(|l| l.set(0));
    PEAK.with(|p| p.set(0));
    ARMED.with(|a| a.set(true));
    let t = Instant::now();
    let r = f();
    let took = t.elapsed().as_secs_f64();
    ARMED.with(|a| a.set(false));
    (r, PEAK.with(Cell::get), took)
}

/// The case stayed within its time and memory (`input` bytes read count as its own).
fn bounded(what: &str, input: usize, peak: isize, took: f64) -> Result<(), TestCaseError> {
    prop_assert!(took < CASE_SECONDS, "{what}: took {took:.1} s");
    prop_assert!(
        peak <= CASE_BYTES + 8 * input as isize,
        "{what}: allocated {peak} bytes at once for {input} bytes of input"
    );
    Ok(())
}

/// One sentence: not empty, one line.
fn one_sentence(what: &str, message: &str) -> Result<(), TestCaseError> {
    prop_assert!(!message.trim().is_empty(), "{what}: an empty refusal");
    prop_assert!(!message.trim_end().contains('\n'), "{what}: a refusal of several lines: {message}");
    Ok(())
}

// ---- Through the binary --------------------------------------------------------------------

/// Runs the binary in `dir` with `args` and only `env` (and PATH) in its environment: it must
/// refuse the input with status 2, one line on stderr and nothing on stdout, within
/// [`BINARY_SECONDS`], leaving `dir` as it was but for `allowed` (files the case put there).
fn refused_by_the_binary(dir: &Path, args: &[&str], env: &[(&str, &str)], what: &str) {
    let before = listing(dir);
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_nvmebench"));
    cmd.args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().expect("the binary runs");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let o = match rx.recv_timeout(Duration::from_secs(BINARY_SECONDS)) {
        Ok(o) => o.expect("the binary's output is read"),
        Err(_) => {
            // SAFETY: kill takes plain integers; `pid` is the child started above, not yet reaped.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            panic!("{what}: the binary took over {BINARY_SECONDS} s: nvmebench {args:?}");
        }
    };
    let err = String::from_utf8_lossy(&o.stderr);
    let shown = format!("{what}: nvmebench {args:?}: status {:?}, stderr: {err}", o.status.code());
    assert_eq!(o.status.code(), Some(2), "{shown}");
    assert!(o.stdout.is_empty(), "{shown}, stdout: {}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(err.trim_end().lines().count(), 1, "{shown}");
    assert!(err.starts_with("nvmebench: ") && !err.contains("panicked"), "{shown}");
    assert_eq!(listing(dir), before, "{shown}: it wrote in its directory");
}

/// The files under `dir` with their sizes.
fn listing(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                out.push((p.clone(), e.metadata().map_or(0, |m| m.len())));
            }
        }
    }
    out.sort();
    out
}

// ---- Mutations -----------------------------------------------------------------------------

/// Words parsers trip on: numbers at and past the limits, separators, a NUL, multi-byte and
/// right-to-left characters, the syntax of the formats fuzzed here.
const WORDS: &[&[u8]] = &[
    b"0",
    b"-1",
    b"1",
    b"4294967296",
    b"18446744073709551615",
    b"18446744073709551616",
    b"99999999999999999999999999",
    b"1e309",
    b"-0.0",
    b"nan",
    b"inf",
    b"0x10",
    b"4k",
    b"16e",
    b"100%",
    b"101%",
    b"=",
    b"==",
    b",",
    b":",
    b"/",
    b"%",
    b"[",
    b"]",
    b"[global]",
    b"{",
    b"}",
    b"\"",
    b"\\",
    b"$",
    b"${",
    b"${QD}",
    b"$NEST",
    b"include ",
    b"include main.fio",
    b"include inc.fio",
    b"\n",
    b"\r\n",
    b"\t",
    b" ",
    b"\0",
    b"#",
    b";",
    "é".as_bytes(),
    "\u{202e}".as_bytes(),
    b"\xff\xfe",
    b"[[step]]",
    b"[[step.stream]]",
    b"null",
    b"true",
];

/// One edit of an input; positions and lengths are taken modulo what they index.
#[derive(Clone, Debug)]
enum Edit {
    Flip(usize, u8),
    Set(usize, u8),
    Delete(usize, usize),
    Word(usize, usize),
    Truncate(usize),
    /// Bytes `at..at + len` of seed `from` go in at `to`.
    Splice {
        from: usize,
        at: usize,
        len: usize,
        to: usize,
    },
    /// Bytes `at..at + len` repeated `times` more times.
    Repeat {
        at: usize,
        len: usize,
        times: u8,
    },
    SwapLines(usize, usize),
    /// Line `line` of seed `from` replaces line `to`.
    LineFrom {
        from: usize,
        line: usize,
        to: usize,
    },
}

fn edit() -> impl Strategy<Value = Edit> {
    let n = any::<usize>;
    prop_oneof![
        (n(), 0u8..8).prop_map(|(a, b)| Edit::Flip(a, b)),
        (n(), any::<u8>()).prop_map(|(a, b)| Edit::Set(a, b)),
        (n(), 1usize..64).prop_map(|(a, l)| Edit::Delete(a, l)),
        (n(), 0..WORDS.len()).prop_map(|(a, w)| Edit::Word(a, w)),
        n().prop_map(Edit::Truncate),
        (n(), n(), 1usize..256, n()).prop_map(|(from, at, len, to)| Edit::Splice { from, at, len, to }),
        (n(), 1usize..64, 1u8..50).prop_map(|(at, len, times)| Edit::Repeat { at, len, times }),
        (n(), n()).prop_map(|(a, b)| Edit::SwapLines(a, b)),
        (n(), n(), n()).prop_map(|(from, line, to)| Edit::LineFrom { from, line, to }),
    ]
}

/// Applies `edits` to `input`, drawing splices from `seeds`.
fn apply(mut input: Vec<u8>, seeds: &[Vec<u8>], edits: &[Edit]) -> Vec<u8> {
    let lines = |v: &[u8]| -> Vec<Vec<u8>> { v.split_inclusive(|&b| b == b'\n').map(<[u8]>::to_vec).collect() };
    for e in edits {
        let len = input.len();
        let at = |p: usize| if len == 0 { 0 } else { p % len };
        match *e {
            Edit::Flip(p, bit) if len > 0 => input[at(p)] ^= 1 << bit,
            Edit::Set(p, b) if len > 0 => input[at(p)] = b,
            Edit::Delete(p, n) if len > 0 => {
                let s = at(p);
                input.drain(s..(s + n).min(len));
            }
            Edit::Word(p, w) => {
                let s = if len == 0 { 0 } else { p % (len + 1) };
                input.splice(s..s, WORDS[w].iter().copied());
            }
            Edit::Truncate(p) => input.truncate(if len == 0 { 0 } else { p % len }),
            Edit::Splice { from, at: a, len: n, to } => {
                let src = &seeds[from % seeds.len()];
                if !src.is_empty() {
                    let s = a % src.len();
                    let piece = src[s..(s + n).min(src.len())].to_vec();
                    let t = if len == 0 { 0 } else { to % (len + 1) };
                    input.splice(t..t, piece);
                }
            }
            Edit::Repeat { at: a, len: n, times } if len > 0 => {
                let s = at(a);
                let piece = input[s..(s + n).min(len)].to_vec();
                for _ in 0..times {
                    input.splice(s..s, piece.iter().copied());
                }
            }
            Edit::SwapLines(a, b) => {
                let mut l = lines(&input);
                if !l.is_empty() {
                    let n = l.len();
                    l.swap(a % n, b % n);
                    input = l.concat();
                }
            }
            Edit::LineFrom { from, line, to } => {
                let src = lines(&seeds[from % seeds.len()]);
                let mut l = lines(&input);
                if !src.is_empty() && !l.is_empty() {
                    let n = l.len();
                    l[to % n] = src[line % src.len()].clone();
                    input = l.concat();
                }
            }
            _ => {}
        }
    }
    input
}

/// A valid input of `seeds` mutated by up to 8 edits, or (one case in six) random bytes.
fn mutated(seeds: Vec<Vec<u8>>) -> impl Strategy<Value = Vec<u8>> {
    let n = seeds.len();
    let from_seed =
        (0..n, prop::collection::vec(edit(), 0..8)).prop_map(move |(i, edits)| apply(seeds[i].clone(), &seeds, &edits));
    prop_oneof![5 => from_seed, 1 => prop::collection::vec(any::<u8>(), 0..512)]
}

/// What a text parser reads from `bytes` (a file that is not UTF-8 is refused before parsing).
fn text(bytes: &[u8]) -> Option<&str> {
    std::str::from_utf8(bytes).ok()
}

// ---- Job files -----------------------------------------------------------------------------

const JOB_SEEDS: &[&str] = &[
    "[global]\nioengine=null\nrw=randread\nbs=4k\niodepth=${QD}\ntime_based\nruntime=100ms\ninclude inc.fio\n\n\
     [job1]\nnumjobs=2\nrate_iops=100,50\nbssplit=4k/50:64k/50\n\n[job2]\nrw=randrw\nrwmixread=70\nsize=1m\n$EXTRA\n",
    "; fio's own style\n[global]\nioengine=null\ndirect=1\nnorandommap\nrandrepeat=0\n\n[seq-read]\nrw=read\n\
     bs=128k\niodepth=$QD\nnumber_ios=64\nstonewall\n\n[rand-write]\nrw=randwrite\nbs=4k,8k\nnumber_ios=64\n\
     write_lat_log=lat\nlog_avg_msec=0\n",
    "[global]\nioengine=null\ntime_based=1\nruntime=50ms\nramp_time=10ms\npercentile_list=99.5:50\n\
     lat_percentiles=1\ngroup_reporting\n[a]\ncpus_allowed=0\nthinktime=10\nthinktime_blocks=4\n\
     random_distribution=zipf:1.2\n[b]\nrw=trim\nbs=64k\nnumber_ios=4\n",
    "[job]\nioengine=null\nrw=randrw\nrwmixwrite=30\nbsrange=4k-16k\nblocksize_unaligned=0\noffset=10%\n\
     size=50%\nnumber_ios=100\nrate=1m,2m\nrate_process=poisson\nnumjobs=${NJ}\n",
    "[global]\nioengine=null\nsize=1m\nloops=2\nnrfiles=2\nfilename_format=$jobname.$jobnum.$filenum\n\
     file_service_type=roundrobin\n[z]\nrw=randread\nrandom_distribution=zoned_abs:60/64k:40/0\nio_size=50%\n\
     iodepth_batch=4\niodepth_batch_complete_max=8\niodepth_low=1\n[c]\nnumjobs=2\noffset_increment=4k\n\
     continue_on_error=all\n",
    "[lat]\nioengine=null\nsize=1m\nrw=randread\niodepth=8\nlatency_target=500\nlatency_window=10ms\n\
     latency_percentile=99.5\nlatency_run=0\n",
];

const INC_SEEDS: &[&str] = &[
    "[global]\nnorandommap\n; a comment\n# another\nlog_avg_msec=100\n",
    "include inc.fio\n",
    "[global]\ninclude main.fio\n",
    "[inc-job]\nioengine=null\nrw=read\nnumber_ios=10\nfilename=${NEST}\n",
];

/// The variables a case's job file sees (the fuzz run's whole environment, so that the binary
/// looks them up as the in-process parse does).
const JOB_ENV: &[(&str, &str)] = &[("QD", "16"), ("EXTRA", "stonewall"), ("NJ", "2"), ("NEST", "${QD}"), ("EMPTY", "")];

fn job_env(name: &str) -> Option<String> {
    JOB_ENV
        .iter()
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
        .or_else(|| nvmebench::fio::exec::fio_keyword(name))
}

fn run_args(args: &[&str]) -> RunArgs {
    let argv = nvmebench::fio::argv::normalize(
        ["nvmebench", "run"].iter().chain(args).map(std::ffi::OsString::from).collect(),
    )
    .expect("fixed arguments");
    match <Cli as clap::Parser>::try_parse_from(argv).expect("fixed arguments parse").command {
        Command::Run(a) => *a,
        _ => unreachable!("a run command"),
    }
}

/// What `run JOBFILE` checks before it runs anything, for jobs on engines other than spdk
/// (resolving an spdk job attaches a controller): `Ok(true)` when the file would run, `Ok(false)`
/// when an spdk job stops the check short.
fn check_job_file(path: &Path, cli: &RunArgs) -> Result<bool, String> {
    use nvmebench::config::{DEFAULT_ENGINE, RunConfig};
    let sections = nvmebench::fio::ini::parse(path, &job_env).map_err(|e| e.to_string())?;
    let plan = nvmebench::fio::plan::build(&sections, &[], cli, &[]).map_err(|e| e.to_string())?;
    for job in plan.groups.iter().flatten() {
        let engine = job.args.engine.as_deref().unwrap_or(DEFAULT_ENGINE);
        if engine.starts_with("spdk") {
            return Ok(false);
        }
        RunConfig::resolve_engine(&job.args, engine).map_err(|e| e.to_string())?;
    }
    Ok(true)
}

#[test]
fn job_files_with_includes_and_variables_parse_or_are_refused_in_one_sentence() {
    let target = Target { cases: 700, binary: 25 };
    let dir = scratch_dir();
    let case = dir.path().join("case");
    std::fs::create_dir(&case).unwrap();
    let cli = run_args(&["main.fio"]);
    let seeds = |s: &[&str]| s.iter().map(|t| t.as_bytes().to_vec()).collect::<Vec<_>>();
    let (mut refused, mut ran) = (Vec::new(), 0);
    target.run((mutated(seeds(JOB_SEEDS)), mutated(seeds(INC_SEEDS))), |(main, inc)| {
        std::fs::write(case.join("main.fio"), &main).unwrap();
        std::fs::write(case.join("inc.fio"), &inc).unwrap();
        // Paths in a job resolve against the process's directory: a file named in one is read,
        // never written, by these checks.
        let (r, peak, took) = watched(|| check_job_file(&case.join("main.fio"), &cli));
        bounded("job file", main.len() + inc.len(), peak, took)?;
        match r {
            Ok(_) => ran += 1,
            Err(m) => {
                one_sentence("job file", &m)?;
                if refused.len() < target.binary() {
                    refused.push((main, inc));
                }
            }
        }
        Ok(())
    });
    assert!(ran > 0, "no mutated job file was accepted: the mutations never keep one valid");
    let bin = scratch_dir();
    for (main, inc) in &refused {
        std::fs::write(bin.path().join("main.fio"), main).unwrap();
        std::fs::write(bin.path().join("inc.fio"), inc).unwrap();
        refused_by_the_binary(bin.path(), &["run", "main.fio"], JOB_ENV, "job file");
    }
    assert!(!refused.is_empty(), "no job file was refused: the mutations never break one");
}

/// A job file that includes itself, or includes one file many times over, is refused in one
/// sentence at once (a file that included itself twice read 2^16 files, three times 3^16).
#[test]
fn includes_that_loop_or_multiply_are_refused() {
    let dir = scratch_dir();
    let d = dir.path();
    let cli = run_args(&["main.fio"]);
    std::fs::write(d.join("main.fio"), "[a]\nioengine=null\ninclude main.fio\ninclude main.fio\ninclude main.fio\n")
        .unwrap();
    let t = Instant::now();
    let e = check_job_file(&d.join("main.fio"), &cli).unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    assert!(e.contains("main.fio:3: include ") && e.contains("includes itself"), "{e}");
    // No loop, and no deeper than includes may nest, but each of 14 files includes the next
    // twice: 2^14 files read without a bound.
    for i in 0..14 {
        std::fs::write(d.join(format!("f{i}.fio")), format!("include f{n}.fio\ninclude f{n}.fio\n", n = i + 1))
            .unwrap();
    }
    std::fs::write(d.join("f14.fio"), "[a]\nioengine=null\nnumber_ios=1\n").unwrap();
    let t = Instant::now();
    let e = check_job_file(&d.join("f0.fio"), &cli).unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    assert!(e.contains("reads more than"), "{e}");
    refused_by_the_binary(d, &["run", "f0.fio"], &[], "includes");
    refused_by_the_binary(d, &["run", "main.fio"], &[], "includes");
}

// ---- Result documents ----------------------------------------------------------------------

/// Valid result documents of every shape `report` and `merge` read, made by the binary once.
fn result_seeds() -> &'static [(String, Vec<u8>)] {
    static SEEDS: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let dir = scratch_dir();
        let d = dir.path();
        let json = |args: &[&str]| -> Value {
            let o = crate::common::nvmebench(args);
            assert!(o.status.success(), "{args:?}: {}", crate::common::stderr(&o));
            serde_json::from_slice(&o.stdout).expect("JSON")
        };
        let run = json(&[
            "run", "--engine", "null", "--rw", "randrw", "--jobs", "2", "--time", "300ms", "--interval", "100ms",
            "--output", "json",
        ]);
        let other = json(&["run", "--engine", "null:lat=2us", "--rw", "randwrite", "--ios", "2000", "--output", "json"]);
        let a = crate::common::make_file(d, "a.bin", 1 << 20);
        let b = crate::common::make_file(d, "b.bin", 1 << 20);
        let targets = format!("{}:{}", a.display(), b.display());
        let two = json(&["run", "--engine", "psync", "--filename", &targets, "--ios", "400", "--output", "json"]);
        let compare = json(&["compare", "--engines", "null,null:lat=1us", "--ios", "500", "--output", "json"]);
        std::fs::write(d.join("run.json"), run.to_string()).unwrap();
        std::fs::write(d.join("other.json"), other.to_string()).unwrap();
        let merged = json(&["merge", d.join("run.json").to_str().unwrap(), d.join("other.json").to_str().unwrap()]);
        let collection = serde_json::json!({
            "schema_version": 1,
            "runs": [other.clone()],
            "iorate": [{ "label": "randread 4k", "points": [
                { "target_iops": 1000, "iops": 999.5, "mean_ns": 81000, "p99_ns": 120000 },
                { "iops": 1800.0, "mean_ns": 90000, "p99_ns": 150000 } ],
                "stop": { "iops": 1800, "rule": "p99 above 2ms" } }],
            "sweeps": [{ "label": "s", "threads": [1, 2], "queue_depths": [1, 8],
                "iops": [[1.0, 2.0], [3.0, 4.0]], "p99_ns": [[10.0, 20.0], [30.0, 40.0]] }],
            "steady_state": [{ "label": "ss", "metric": "IOPS", "rounds": [100.0, 101.0, 99.0, 100.5, 100.0, 99.5], "window": 5 }],
        });
        [("run", run), ("other", other), ("two-targets", two), ("compare", compare), ("merged", merged), ("collection", collection)]
            .into_iter()
            .map(|(name, v)| (name.to_string(), serde_json::to_vec_pretty(&v).unwrap()))
            .collect()
    })
}

/// Values a field of a result document may be replaced with.
fn odd_value(i: usize) -> Value {
    use serde_json::json;
    let values = [
        json!(null),
        json!(true),
        json!(0),
        json!(1),
        json!(-1),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(1e308),
        json!(-1e308),
        json!(0.5),
        json!(""),
        json!("x"),
        json!("\u{202e}\u{0}"),
        json!([]),
        json!({}),
        json!([0]),
        json!("x".repeat(10_000)),
        json!("NaN"),
        json!(4_294_967_296u64),
        json!(1e-300),
    ];
    values[i % values.len()].clone()
}

/// One edit of a JSON document, by the index of a node in document order.
#[derive(Clone, Debug)]
enum JsonEdit {
    Replace(usize, usize),
    Delete(usize),
    /// The subtree at the first node and the one at the second trade places (a field swap).
    Swap(usize, usize),
    /// A copy of the first subtree replaces the second.
    Copy(usize, usize),
    /// The histogram string found at or after the node is decoded, its inflated bytes edited,
    /// deflated again and re-encoded (the second value: how its lengths are left).
    Histogram(usize, Vec<Edit>, u8),
}

fn json_edit() -> impl Strategy<Value = JsonEdit> {
    let n = any::<usize>;
    prop_oneof![
        (n(), n()).prop_map(|(a, b)| JsonEdit::Replace(a, b)),
        n().prop_map(JsonEdit::Delete),
        (n(), n()).prop_map(|(a, b)| JsonEdit::Swap(a, b)),
        (n(), n()).prop_map(|(a, b)| JsonEdit::Copy(a, b)),
        (n(), prop::collection::vec(edit(), 1..6), any::<u8>()).prop_map(|(a, e, l)| JsonEdit::Histogram(a, e, l)),
    ]
}

/// Every node's path (object keys and array indices), in document order.
fn paths(v: &Value) -> Vec<Vec<PathStep>> {
    fn walk(v: &Value, at: &mut Vec<PathStep>, out: &mut Vec<Vec<PathStep>>) {
        out.push(at.clone());
        match v {
            Value::Object(m) => {
                for (k, c) in m {
                    at.push(PathStep::Key(k.clone()));
                    walk(c, at, out);
                    at.pop();
                }
            }
            Value::Array(a) => {
                for (i, c) in a.iter().enumerate() {
                    at.push(PathStep::Index(i));
                    walk(c, at, out);
                    at.pop();
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, &mut Vec::new(), &mut out);
    out
}

#[derive(Clone, Debug, PartialEq)]
enum PathStep {
    Key(String),
    Index(usize),
}

fn node<'a>(v: &'a mut Value, path: &[PathStep]) -> Option<&'a mut Value> {
    path.iter().try_fold(v, |v, step| match step {
        PathStep::Key(k) => v.get_mut(k.as_str()),
        PathStep::Index(i) => v.get_mut(*i),
    })
}

fn b64() -> base64::engine::GeneralPurpose {
    base64::engine::general_purpose::STANDARD
}

/// A histogram string with its inflated bytes edited; `lengths` says whether the deflated
/// length in front is rewritten to match (and the inner payload length, which the edits may
/// have broken, left as it is).
fn edited_histogram(hist: &str, edits: &[Edit], lengths: u8, seeds: &[Vec<u8>]) -> Option<String> {
    use base64::Engine as _;
    use std::io::{Read as _, Write as _};
    let bytes = b64().decode(hist).ok()?;
    let mut inner = Vec::new();
    flate2::read::ZlibDecoder::new(bytes.get(8..)?).read_to_end(&mut inner).ok()?;
    let inner = apply(inner, seeds, edits);
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(&inner).ok()?;
    let deflated = z.finish().ok()?;
    let mut out = bytes[..4].to_vec();
    let len = match lengths % 4 {
        0 => deflated.len() as u32 + 1,
        1 => u32::MAX,
        _ => deflated.len() as u32,
    };
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&deflated);
    Some(b64().encode(out))
}

/// The inflated bytes of every histogram of the seeds, spliced into each other by the edits.
fn histogram_seeds() -> Vec<Vec<u8>> {
    use base64::Engine as _;
    use std::io::Read as _;
    let mut out = Vec::new();
    for (_, doc) in result_seeds() {
        let v: Value = serde_json::from_slice(doc).unwrap();
        for p in paths(&v) {
            if p.last() == Some(&PathStep::Key("hist".into())) {
                let mut v = v.clone();
                let h = node(&mut v, &p).unwrap().as_str().unwrap().to_string();
                let bytes = b64().decode(h).unwrap();
                let mut inner = Vec::new();
                flate2::read::ZlibDecoder::new(&bytes[8..]).read_to_end(&mut inner).unwrap();
                out.push(inner);
            }
        }
    }
    out.truncate(16);
    out
}

fn apply_json(mut v: Value, edits: &[JsonEdit], hist_seeds: &[Vec<u8>]) -> Value {
    for e in edits {
        let all = paths(&v);
        let pick = |i: usize| all[i % all.len()].clone();
        match e {
            JsonEdit::Replace(a, b) => {
                if let Some(n) = node(&mut v, &pick(*a)) {
                    *n = odd_value(*b);
                }
            }
            JsonEdit::Delete(a) => {
                let p = pick(*a);
                if let Some((last, parent)) = p.split_last() {
                    match (node(&mut v, parent), last) {
                        (Some(Value::Object(m)), PathStep::Key(k)) => {
                            m.shift_remove(k);
                        }
                        (Some(Value::Array(arr)), PathStep::Index(i)) => {
                            arr.remove(*i);
                        }
                        _ => {}
                    }
                }
            }
            JsonEdit::Swap(a, b) | JsonEdit::Copy(a, b) => {
                let (pa, pb) = (pick(*a), pick(*b));
                // A subtree cannot trade places with one inside it.
                if pa.starts_with(&pb) || pb.starts_with(&pa) {
                    continue;
                }
                let va = node(&mut v, &pa).cloned();
                let vb = node(&mut v, &pb).cloned();
                if let (Some(va), Some(vb)) = (va, vb) {
                    *node(&mut v, &pb).unwrap() = va;
                    if matches!(e, JsonEdit::Swap(..)) {
                        *node(&mut v, &pa).unwrap() = vb;
                    }
                }
            }
            JsonEdit::Histogram(a, edits, lengths) => {
                let start = *a % all.len();
                let found = all[start..]
                    .iter()
                    .chain(&all[..start])
                    .find(|p| p.last() == Some(&PathStep::Key("hist".into())))
                    .cloned();
                if let Some(p) = found {
                    let n = node(&mut v, &p).unwrap();
                    if let Some(h) = n.as_str().and_then(|h| edited_histogram(h, edits, *lengths, hist_seeds)) {
                        *n = Value::String(h);
                    }
                }
            }
        }
    }
    v
}

/// A result document: a valid one with JSON edits, or its text with byte edits, or random bytes.
fn result_document() -> impl Strategy<Value = (usize, Vec<u8>)> {
    let seeds: Vec<Vec<u8>> = result_seeds().iter().map(|(_, d)| d.clone()).collect();
    let hist_seeds = histogram_seeds();
    let n = seeds.len();
    let s1 = seeds.clone();
    let structured = (0..n, prop::collection::vec(json_edit(), 1..6)).prop_map(move |(i, edits)| {
        let v: Value = serde_json::from_slice(&s1[i]).unwrap();
        (i, serde_json::to_vec(&apply_json(v, &edits, &hist_seeds)).unwrap())
    });
    let s2 = seeds.clone();
    let bytes =
        (0..n, prop::collection::vec(edit(), 1..6)).prop_map(move |(i, edits)| (i, apply(s2[i].clone(), &s2, &edits)));
    prop_oneof![6 => structured, 3 => bytes, 1 => prop::collection::vec(any::<u8>(), 0..256).prop_map(|b| (0, b))]
}

/// Runs `report` or `merge` in process as the binary would (`args` after the command name): Ok,
/// or the refusal, which must be a bad input (exit status 2 in the binary) of one sentence.
fn results_command(args: &[&str]) -> Result<Result<(), String>, TestCaseError> {
    let argv: Vec<&str> = ["nvmebench"].iter().chain(args).copied().collect();
    let cli = <Cli as clap::Parser>::try_parse_from(argv).expect("fixed arguments parse");
    let r = match &cli.command {
        Command::Report(a) => nvmebench::report_cmd::report_command(a),
        Command::Merge(a) => nvmebench::report_cmd::merge_command(a),
        _ => unreachable!("report or merge"),
    };
    match r {
        Ok(()) => Ok(Ok(())),
        Err(e) => {
            let m = e.to_string();
            prop_assert!(
                e.downcast_ref::<nvmebench::report_cmd::ResultsCommandError>().is_some(),
                "{args:?}: refused as something other than a bad input (exit status 1): {m}"
            );
            one_sentence("result document", &m)?;
            Ok(Err(m))
        }
    }
}

#[test]
fn result_documents_are_reported_and_merged_or_refused_in_one_sentence() {
    let target = Target { cases: 500, binary: 25 };
    let dir = scratch_dir();
    let d = dir.path();
    let valid = d.join("valid.json");
    std::fs::write(&valid, &result_seeds()[1].1).unwrap();
    let (mut refused, mut accepted, mut kinds) = (Vec::new(), 0, std::collections::BTreeSet::new());
    let formats = ["out.html", "out.csv", "out.md"];
    target.run((result_document(), any::<usize>()), |((seed, doc), pick)| {
        let f = d.join("doc.json");
        std::fs::write(&f, &doc).unwrap();
        let (fs, vs) = (f.to_str().unwrap(), valid.to_str().unwrap());
        let out = d.join(formats[pick % formats.len()]);
        let merged = d.join("merged.json");
        let ((report, merge), peak, took) = watched(|| {
            let report = results_command(&["report", fs, "-o", out.to_str().unwrap()]);
            let merge = results_command(&["merge", fs, vs, "-o", merged.to_str().unwrap()]);
            (report, merge)
        });
        bounded("result document", doc.len(), peak, took)?;
        let (report, merge) = (report?, merge?);
        let _ = std::fs::remove_file(&out);
        let _ = std::fs::remove_file(&merged);
        match report {
            Ok(()) => accepted += 1,
            Err(m) => {
                kinds.insert(
                    m.split(':').nth(1).map(str::trim).unwrap_or_default().chars().take(30).collect::<String>(),
                );
                if refused.len() < target.binary() {
                    refused.push((seed, doc));
                }
            }
        }
        drop(merge);
        Ok(())
    });
    assert!(accepted > 0, "no mutated document was accepted: the mutations never keep one valid");
    assert!(kinds.len() > 5, "the refusals are all alike, so the mutations reach little: {kinds:?}");
    for (i, (seed, doc)) in refused.iter().enumerate() {
        let case = scratch_dir();
        std::fs::write(case.path().join("doc.json"), doc).unwrap();
        std::fs::write(case.path().join("valid.json"), &result_seeds()[1].1).unwrap();
        let what = format!("result document {i} (from {})", result_seeds()[*seed].0);
        let cmd: &[&str] = if i % 2 == 0 {
            &["report", "doc.json", "-o", "out.html"]
        } else {
            &["merge", "doc.json", "valid.json", "-o", "out.json"]
        };
        refused_by_the_binary(case.path(), cmd, &[], &what);
    }
}

/// The histogram bytes that made HdrHistogram's reader allocate without bound or read for
/// minutes are refused in one sentence, quickly and within the allocation bound.
#[test]
fn histograms_that_claim_more_than_they_hold_are_refused() {
    use base64::Engine as _;
    use std::io::Write as _;
    let deflate = |inner: &[u8]| {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(inner).unwrap();
        let d = z.finish().unwrap();
        let mut out = 0x1c84_9314u32.to_be_bytes().to_vec();
        out.extend_from_slice(&(d.len() as u32).to_be_bytes());
        out.extend_from_slice(&d);
        b64().encode(out)
    };
    let header = |payload: u32, digits: u32, high: u64| {
        let mut h = 0x1c84_9313u32.to_be_bytes().to_vec();
        for w in [payload, 0, digits] {
            h.extend_from_slice(&w.to_be_bytes());
        }
        h.extend_from_slice(&1u64.to_be_bytes());
        h.extend_from_slice(&high.to_be_bytes());
        h.extend_from_slice(&1f64.to_be_bytes());
        h
    };
    let ours = nvmebench::stats::HIST_HIGHEST_NS;
    let mut zeros = header(64 << 20, 3, ours);
    zeros.resize(40 + (64 << 20), 0);
    let cases = [
        (deflate(&header(0xffff_fff0, 3, ours)), "payload bytes follow its header"),
        (deflate(&header(0, 5, u64::MAX / 2)), "other bounds than nvmebench's"),
        (deflate(&zeros), "inflates to more than"),
        (b64().encode(header(0xffff_fff0, 3, ours)), "is not HdrHistogram V2 deflate"),
    ];
    for (hist, expected) in cases {
        let (r, peak, took) = watched(|| nvmebench::report::json::decode_histogram(&hist));
        let e = r.unwrap_err();
        assert!(e.contains(expected), "{e}");
        assert!(peak < 8 << 20 && took < 2.0, "{expected}: {peak} bytes, {took:.1} s");
    }
}

// ---- Verify-state files --------------------------------------------------------------------

/// Valid verify states: one table, two tables naming the run's files `a` and `b` as the runs do,
/// and an empty file.
fn verify_seeds(dir: &Path, a: &str, b: &str) -> Vec<Vec<u8>> {
    use nvmebench::verify::{GenTable, VerifyState};
    let mut out = Vec::new();
    let mut one = GenTable::new(0, 1 << 20, 4096);
    for (i, off) in [0u64, 4096, 65536, (1 << 20) - 4096].into_iter().enumerate() {
        one.set(off, i as u32 + 1);
    }
    let p = dir.join("seed");
    one.save(&p, 0xfeed).unwrap();
    out.push(std::fs::read(&p).unwrap());
    let mut other = GenTable::new(0, 1 << 20, 4096);
    other.set(8192, 7);
    let state = VerifyState { seed: 9, sections: vec![(Some(a.into()), one), (Some(b.into()), other)] };
    state.save(&p).unwrap();
    out.push(std::fs::read(&p).unwrap());
    std::fs::remove_file(&p).unwrap();
    out.push(Vec::new());
    out
}

/// A verify state: a seed mutated, or its 8-byte words set to values at and past the limits.
fn verify_state(seeds: Vec<Vec<u8>>) -> impl Strategy<Value = Vec<u8>> {
    let s = seeds.clone();
    let words =
        (0..seeds.len(), prop::collection::vec((any::<usize>(), 0usize..8), 1..4)).prop_map(move |(i, sets)| {
            let mut v = s[i].clone();
            let values = [0u64, 1, 4096, u64::MAX, u64::MAX - 4095, 1 << 32, 1 << 62, v.len() as u64];
            for (at, w) in sets {
                let words = v.len() / 8;
                if words > 0 {
                    let at = (at % words) * 8;
                    v[at..at + 8].copy_from_slice(&values[w].to_le_bytes());
                }
            }
            v
        });
    prop_oneof![3 => mutated(seeds), 2 => words]
}

#[test]
fn verify_state_files_are_read_or_refused_in_one_sentence() {
    use nvmebench::config::RunConfig;
    let target = Target { cases: 1500, binary: 20 };
    let dir = scratch_dir();
    let d = dir.path();
    for name in ["a.bin", "b.bin"] {
        crate::common::make_file(d, name, 1 << 20);
    }
    let state = d.join("state");
    let (a, b) = (d.join("a.bin"), d.join("b.bin"));
    let (a, b, s) = (a.to_str().unwrap(), b.to_str().unwrap(), state.to_str().unwrap());
    let both = format!("{a}:{b}");
    // The same arguments in process and through the binary, so that both read the same names.
    let runs: [Vec<&str>; 3] = [
        vec!["--engine", "psync", "--filename", a, "--rw", "randwrite", "--verify", "--verify-state", s],
        vec!["--engine", "psync", "--filename", a, "--rw", "randread", "--verify", "--verify-state", s],
        vec!["--engine", "psync", "--filename", &both, "--rw", "randread", "--verify", "--verify-state", s],
    ];
    let parsed: Vec<RunArgs> = runs.iter().map(|r| run_args(r)).collect();
    let seeds = verify_seeds(d, a, b);
    let (mut refused, mut loaded_ok) = (Vec::new(), 0);
    target.run((verify_state(seeds), 0..runs.len()), |(bytes, run)| {
        std::fs::write(&state, &bytes).unwrap();
        let (r, peak, took) = watched(|| {
            let loaded = nvmebench::verify::VerifyState::load(&state);
            if let Ok(st) = &loaded {
                for (_, t) in &st.sections {
                    let _ = (t.span(), t.written().count());
                }
            }
            // Resolution reads the state and checks it against the run's working set.
            (loaded.map(|_| ()), RunConfig::resolve(&parsed[run]).map(|_| ()).map_err(|e| e.to_string()))
        });
        bounded("verify state", bytes.len(), peak, took)?;
        let (loaded, resolved) = r;
        match &loaded {
            Ok(()) => loaded_ok += 1,
            Err(m) => {
                one_sentence("verify state", m)?;
                prop_assert!(resolved.is_err(), "a state that does not load was taken by the run");
            }
        }
        if let Err(m) = resolved {
            one_sentence("verify state", &m)?;
            if refused.len() < target.binary() {
                refused.push((bytes, run));
            }
        }
        Ok(())
    });
    assert!(loaded_ok > 0, "no mutated state loaded: the mutations never keep one valid");
    assert!(!refused.is_empty(), "no state was refused: the mutations never break one");
    for (bytes, run) in &refused {
        std::fs::write(&state, bytes).unwrap();
        let args: Vec<&str> = ["run"].into_iter().chain(runs[*run].iter().copied()).collect();
        refused_by_the_binary(d, &args, &[], "verify state");
    }
}

// ---- Profiles ------------------------------------------------------------------------------

#[test]
fn profiles_parse_or_are_refused_in_one_sentence() {
    use nvmebench::options::SmallBlocks;
    use nvmebench::suite::profile::{BUILT_IN, Profile};
    let target = Target { cases: 1500, binary: 20 };
    let seeds: Vec<Vec<u8>> = BUILT_IN.iter().map(|(_, t)| t.as_bytes().to_vec()).collect();
    let mut refused = Vec::new();
    let mut accepted = 0;
    target.run((mutated(seeds), any::<bool>()), |(bytes, reject)| {
        let Some(t) = text(&bytes) else { return Ok(()) };
        let (r, peak, took) = watched(|| {
            Profile::parse(t, "fuzz.toml").and_then(|mut p| {
                let policy = if reject { SmallBlocks::Reject } else { SmallBlocks::Round };
                p.fit_block_size(4096, policy, "the device").map(|_| ())
            })
        });
        bounded("profile", bytes.len(), peak, took)?;
        match r {
            Ok(()) => accepted += 1,
            Err(m) => {
                one_sentence("profile", &m)?;
                if refused.len() < target.binary() && Profile::parse(t, "fuzz.toml").is_err() {
                    refused.push(bytes.clone());
                }
            }
        }
        Ok(())
    });
    assert!(accepted > 0);
    let case = scratch_dir();
    for bytes in &refused {
        std::fs::write(case.path().join("p.toml"), bytes).unwrap();
        refused_by_the_binary(case.path(), &["suite", "--list", "--profile", "p.toml"], &[], "profile");
    }
    // A file that is not UTF-8 is refused by the binary too.
    std::fs::write(case.path().join("p.toml"), b"name = \"\xff\"\n").unwrap();
    refused_by_the_binary(case.path(), &["suite", "--list", "--profile", "p.toml"], &[], "profile");
}

// ---- SPDK transport IDs --------------------------------------------------------------------

#[cfg(feature = "spdk")]
#[test]
fn transport_ids_parse_or_are_refused_in_one_sentence() {
    use nvmebench::engine::spdk::ctrlr::TridSpec;
    let target = Target { cases: 3000, binary: 20 };
    let seeds: Vec<Vec<u8>> = [
        "trtype:PCIe traddr:0000:01:00.0",
        "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:4420 subnqn:nqn.2016-06.io.spdk:cnode1 ns:1",
        "trtype:VFIOUSER traddr:/var/run/vfu/cntrl subnqn:nqn.2019-07.io.spdk:vfu ns:2",
        "trtype=tcp adrfam=IPv6 traddr=::1 trsvcid=4420 hostnqn=nqn.x priority=1",
    ]
    .iter()
    .map(|t| t.as_bytes().to_vec())
    .collect();
    let (mut refused, mut accepted) = (Vec::new(), 0);
    target.run(mutated(seeds), |bytes| {
        let Some(t) = text(&bytes) else { return Ok(()) };
        let (r, peak, took) = watched(|| TridSpec::parse(t).map(|_| ()));
        bounded("transport ID", bytes.len(), peak, took)?;
        if r.is_ok() {
            accepted += 1;
        }
        if let Err(m) = r {
            one_sentence("transport ID", &m)?;
            if refused.len() < target.binary() && !t.contains('\0') {
                refused.push(t.to_string());
            }
        }
        Ok(())
    });
    assert!(accepted > 0, "no mutated transport ID was accepted: the mutations never keep one valid");
    assert!(!refused.is_empty(), "no transport ID was refused: the mutations never break one");
    let case = scratch_dir();
    for t in &refused {
        refused_by_the_binary(
            case.path(),
            &["run", "--engine", "spdk", "--trid", t, "--time", "1"],
            &[],
            "transport ID",
        );
    }
}

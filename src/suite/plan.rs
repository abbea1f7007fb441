//! Which steps a suite runs, in which order, with every stream resolved and checked before anything
//! is written.
//!
//! A suite is a list of profiles plus what to do around them: preconditioning first, a T/Q sweep
//! and an iorate curve per step. Each step becomes one result file, named `NN-what.json`; the
//! names and the options that shape results form the plan, which a rerun must match to resume.

use super::SuiteError;
use super::curve::StopRule;
use super::exec::ResolvedStream;
use super::profile::{Profile, Step, Stream, Threads};
use super::steady::FILL_BS;
use super::sweep::{self, Point};
use crate::cli::{Cli, Command, SuiteArgs};
use crate::config::{ConfigError, EngineSpec, RunConfig};
use crate::target::Target;
use clap::Parser;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A named suite.
pub struct SuiteDef {
    pub name: &'static str,
    pub description: &'static str,
    pub profiles: &'static [&'static str],
    pub precondition: bool,
    pub sweep: Option<&'static str>,
    pub curve: bool,
}

/// The suites shipped with nvmebench.
pub const SUITES: [SuiteDef; 4] = [
    SuiteDef {
        name: "review",
        description: "the reviews' methodology: precondition, every profile, a 2T/2Q-16T/16Q sweep and an iorate curve per step",
        profiles: &[
            "four-corners",
            "8k-70-30",
            "file-server",
            "web-server",
            "database-sql",
            "database-oracle",
            "vdi",
            "working-set-25",
        ],
        precondition: true,
        sweep: Some(sweep::REVIEW_SWEEP),
        curve: true,
    },
    SuiteDef {
        name: "quick",
        description: "precondition, then the four corners and 8K 70/30 once each",
        profiles: &["four-corners", "8k-70-30"],
        precondition: true,
        sweep: None,
        curve: false,
    },
    SuiteDef {
        name: "scaling",
        description: "precondition, then a 2T/2Q-16T/16Q sweep of the four corners, 8K 70/30, file and web server",
        profiles: &["four-corners", "8k-70-30", "file-server", "web-server"],
        precondition: true,
        sweep: Some(sweep::REVIEW_SWEEP),
        curve: false,
    },
    SuiteDef {
        name: "curves",
        description: "precondition, then an iorate curve of the four corners, 8K 70/30, file and web server and the databases",
        profiles: &["four-corners", "8k-70-30", "file-server", "web-server", "database-sql", "database-oracle"],
        precondition: true,
        sweep: None,
        curve: true,
    },
];

/// What one step does.
pub enum StepKind {
    /// Purge (first only), sequential fill (first only) and rounds of `streams` to steady state.
    Precondition {
        purge: bool,
        fill: Option<Vec<ResolvedStream>>,
    },
    Run,
    Sweep(Vec<Point>),
    Curve,
}

/// One step of the plan.
pub struct PlannedStep {
    /// The result file's stem, `NN-what`.
    pub id: String,
    pub label: String,
    pub kind: StepKind,
    pub streams: Vec<ResolvedStream>,
    /// How long it should take (an upper bound for preconditioning; the fill is not counted).
    pub planned: Duration,
}

/// Everything about the suite that shapes results.
pub struct Plan {
    pub name: String,
    pub steps: Vec<PlannedStep>,
    pub capacity_bytes: u64,
    pub stop: Option<StopRule>,
    /// Notes to print (rounded block sizes).
    pub notes: Vec<String>,
    /// The text a rerun must match to resume.
    pub fingerprint: String,
    /// The texts an earlier nvmebench wrote for this plan, where they differ: it kept `--filename`
    /// as typed (`a:b` as one string), so its results directories still resume.
    pub earlier_fingerprints: Vec<String>,
}

/// The default steady-state workload: 4 KiB random writes (PTS's IOPS test writes are what change a
/// drive's state most).
const DEFAULT_PRECONDITION: &str = "name = \"precondition\"\ndescription = \"4 KiB random writes\"\n[[step]]\nname = \"x\"\nrw = \"randwrite\"\nbs = \"4k\"\n";

/// Builds the plan. Reads the target (sizes) but writes nothing.
/// `attached` is the target of an engine that attaches it itself (SPDK's namespaces): every stream
/// resolves against it instead of attaching again.
pub fn build(
    args: &SuiteArgs,
    name: &str,
    profiles: &[Profile],
    engine: &EngineSpec,
    total_bytes: u64,
    lbs: u64,
    attached: Option<&Target>,
) -> Result<Plan, SuiteError> {
    let (names, defaults) = suite_contents(name, profiles)?;
    let opts = resolve_options(args, name, &defaults, total_bytes)?;
    let (chosen, notes) = fit_profiles(args, profiles, &names, lbs)?;
    let mut planner = Planner { args, engine, attached, opts: &opts, steps: Vec::new() };
    if opts.precondition {
        planner.precondition()?;
    }
    for p in &chosen {
        planner.profile(p)?;
    }
    let steps = planner.steps;
    let targets = crate::config::split_filenames(&args.filename).map_err(|e| SuiteError::Usage(e.to_string()))?;
    // Where the files are, not how their paths were typed: `a`, `./a` and a symlink to it are one
    // plan. The step files keep the paths as typed.
    let canonical: Vec<PathBuf> = targets.iter().map(|t| crate::target::canonical_path(t)).collect();
    let origins: Vec<String> = chosen.iter().map(canonical_origin).collect();
    let print = fingerprint(args, name, &opts, &chosen, &origins, &steps, &canonical);
    let typed_origins: Vec<String> = chosen.iter().map(|p| p.origin.clone()).collect();
    let mut earlier: Vec<String> = Vec::new();
    for typed in earlier_spellings(&args.filename, &targets) {
        let f = fingerprint(args, name, &opts, &chosen, &typed_origins, &steps, &typed);
        if f != print && !earlier.contains(&f) {
            earlier.push(f);
        }
    }
    Ok(Plan {
        name: name.to_string(),
        steps,
        capacity_bytes: opts.capacity,
        stop: opts.stop,
        notes,
        fingerprint: print,
        earlier_fingerprints: earlier,
    })
}

/// What a suite runs around its profiles before the flags override it (a lone profile: nothing).
struct SuiteDefaults {
    precondition: bool,
    sweep: Option<&'static str>,
    curve: bool,
}

/// Refuses a `name` that is neither a suite nor one of `profiles`.
///
/// # Errors
/// [`SuiteError::Usage`] naming the unknown name.
pub fn check_name(name: &str, profiles: &[Profile]) -> Result<(), SuiteError> {
    suite_contents(name, profiles).map(|_| ())
}

/// The profiles `name` runs: a suite's list, or a profile of that name on its own.
fn suite_contents(name: &str, profiles: &[Profile]) -> Result<(Vec<String>, SuiteDefaults), SuiteError> {
    match SUITES.iter().find(|s| s.name == name) {
        Some(s) => Ok((
            s.profiles.iter().map(|p| p.to_string()).collect(),
            SuiteDefaults { precondition: s.precondition, sweep: s.sweep, curve: s.curve },
        )),
        None if profiles.iter().any(|p| p.name == name) => {
            Ok((vec![name.to_string()], SuiteDefaults { precondition: false, sweep: None, curve: false }))
        }
        None => Err(SuiteError::Usage(format!(
            "'{name}' is not a suite or a profile; `nvmebench suite --list` shows them (add --profile FILE for your own)"
        ))),
    }
}

/// The suite's shape after the flags: what runs around the profiles, the capacity, the durations.
struct Options {
    precondition: bool,
    sweep: Option<Vec<Point>>,
    curve: bool,
    stop: Option<StopRule>,
    /// The tested capacity, on a 4 KiB grid.
    capacity: u64,
    /// One run: ramp plus measured time.
    run_time: Duration,
    round_time: Duration,
    /// The longest preconditioning can take: every round.
    rounds_time: Duration,
}

/// Applies the flags to the suite's defaults; `--stop-latency` needs a curve to stop, and the
/// capacity must hold at least one fill block.
fn resolve_options(
    args: &SuiteArgs,
    name: &str,
    defaults: &SuiteDefaults,
    total_bytes: u64,
) -> Result<Options, SuiteError> {
    let usage = SuiteError::Usage;
    let precondition = (defaults.precondition || args.precondition) && !args.no_precondition;
    let curve = (defaults.curve || args.curve) && !args.no_curve;
    let sweep = match args.sweep.as_deref().or(defaults.sweep) {
        None | Some("none") => None,
        Some(t) => Some(sweep::parse(t).map_err(|m| usage(format!("--sweep: {m}")))?),
    };
    let stop = match &args.stop_latency {
        None => None,
        Some(t) => Some(StopRule::parse(t).map_err(|m| usage(format!("--stop-latency: {m}")))?),
    };
    if stop.is_some() && !curve {
        return Err(usage(format!(
            "--stop-latency ends iorate curves, and suite {name} runs none; add --curve or drop --stop-latency"
        )));
    }
    let capacity = args.size.map_or(total_bytes, |s| s.resolve(total_bytes)) / 4096 * 4096;
    if capacity < FILL_BS {
        return Err(usage(format!(
            "--size {} leaves less than 128 KiB to test; give at least 1m",
            args.size.map_or("(target)".into(), |s| s.to_string())
        )));
    }
    let round_time = args.round_time.unwrap_or(args.time);
    let run_time = args.ramp + args.time;
    Ok(Options {
        precondition,
        sweep,
        curve,
        stop,
        capacity,
        run_time,
        round_time,
        rounds_time: round_time * args.max_rounds,
    })
}

/// The named profiles, each with its block sizes fitted to the target's logical block (the notes
/// say what was rounded).
fn fit_profiles(
    args: &SuiteArgs,
    profiles: &[Profile],
    names: &[String],
    lbs: u64,
) -> Result<(Vec<Profile>, Vec<String>), SuiteError> {
    let mut notes = Vec::new();
    let mut chosen: Vec<Profile> = Vec::new();
    for n in names {
        let mut p = profiles.iter().find(|p| &p.name == n).cloned().expect("suites name built-in profiles");
        let device = match crate::config::split_filenames(&args.filename).unwrap_or_default()[..] {
            [] => "the null device".into(),
            ref paths => paths.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", "),
        };
        notes.extend(p.fit_block_size(lbs, args.small_bs, &device).map_err(SuiteError::Usage)?);
        chosen.push(p);
    }
    Ok((chosen, notes))
}

/// Lays out the steps in order, resolving every stream as it goes (the first bad one stops it).
struct Planner<'a> {
    args: &'a SuiteArgs,
    engine: &'a EngineSpec,
    attached: Option<&'a Target>,
    opts: &'a Options,
    steps: Vec<PlannedStep>,
}

impl Planner<'_> {
    /// Appends a step; its id numbers it in plan order.
    fn push(&mut self, slug: String, label: String, kind: StepKind, streams: Vec<ResolvedStream>, planned: Duration) {
        let id = format!("{:02}-{slug}", self.steps.len() + 1);
        self.steps.push(PlannedStep { id, label, kind, streams, planned });
    }

    fn resolve(&self, s: &Stream, ws: u64, at: &str) -> Result<ResolvedStream, SuiteError> {
        resolve(self.args, self.engine, self.attached, s, ws, at)
    }

    /// The suite's own preconditioning over the whole capacity: purge, an optional sequential fill,
    /// then 4 KiB random writes to steady state.
    fn precondition(&mut self) -> Result<(), SuiteError> {
        let capacity = self.opts.capacity;
        let default = Profile::parse(DEFAULT_PRECONDITION, "built-in").expect("the default workload parses");
        let streams = vec![self.resolve(&default.steps[0].streams[0], capacity, "precondition")?];
        let fill = if self.args.fill > 0.0 {
            Some(vec![self.resolve(&fill_stream(), capacity, "precondition (fill)")?])
        } else {
            None
        };
        self.push(
            "precondition".into(),
            "precondition: 4k randwrite to steady state".into(),
            StepKind::Precondition { purge: true, fill },
            streams,
            self.opts.rounds_time,
        );
        Ok(())
    }

    /// One profile: its own preconditioning (when the suite preconditions), then each of its steps,
    /// over its working set.
    fn profile(&mut self, p: &Profile) -> Result<(), SuiteError> {
        let ws = capacity_share(self.opts.capacity, self.args.working_set.or(p.working_set_percent));
        if let (true, Some(pre)) = (self.opts.precondition, &p.precondition) {
            let at = format!("profile {} precondition", p.name);
            let streams = vec![self.resolve(pre, self.opts.capacity, &at)?];
            self.push(
                format!("{}-precondition", p.name),
                format!("{} precondition: {} to steady state", p.name, pre.rw),
                StepKind::Precondition { purge: false, fill: None },
                streams,
                self.opts.rounds_time,
            );
        }
        for s in &p.steps {
            self.step(p, s, ws)?;
        }
        Ok(())
    }

    /// One profile step: its run, then its sweep and iorate curve when the suite has them, all on
    /// the same streams.
    fn step(&mut self, p: &Profile, s: &Step, ws: u64) -> Result<(), SuiteError> {
        let streams = s
            .streams
            .iter()
            .map(|st| self.resolve(st, ws, &format!("profile {} step {} stream {}", p.name, s.name, st.name)))
            .collect::<Result<Vec<_>, _>>()?;
        self.check_slices(p, s, &streams)?;
        let run_time = self.opts.run_time;
        let label = format!("{}/{}", p.name, s.name);
        let slug = format!("{}-{}", p.name, s.name);
        self.push(slug.clone(), label.clone(), StepKind::Run, streams.clone(), run_time);
        if let Some(points) = &self.opts.sweep {
            let planned = run_time * points.len() as u32;
            let kind = StepKind::Sweep(points.clone());
            self.push(format!("{slug}-sweep"), format!("{label} sweep"), kind, streams.clone(), planned);
        }
        if self.opts.curve {
            let planned = run_time * (1 + super::curve::CURVE_PERCENTS.len() as u32);
            self.push(format!("{slug}-curve"), format!("{label} iorate"), StepKind::Curve, streams, planned);
        }
        Ok(())
    }

    /// A sequential stream run by several threads is sliced among them: every thread count the
    /// plan uses (--jobs and each sweep point) must slice it.
    fn check_slices(&self, p: &Profile, s: &Step, streams: &[ResolvedStream]) -> Result<(), SuiteError> {
        let mut thread_counts = vec![self.args.jobs];
        thread_counts.extend(self.opts.sweep.iter().flatten().map(|pt| pt.threads));
        for st in streams.iter().filter(|st| !st.cfg.workload.rw.is_random()) {
            for &jobs in &thread_counts {
                let n = st.threads.resolve(jobs);
                if n > 1 {
                    super::exec::slice_bytes(st, n)
                        .map_err(|m| SuiteError::Usage(format!("profile {} step {}: {m}", p.name, s.name)))?;
                }
            }
        }
        Ok(())
    }
}

/// The sequential fill before the first preconditioning round: one thread, QD 32, 128 KiB writes.
fn fill_stream() -> Stream {
    Stream {
        name: "fill".into(),
        rw: crate::workload::RwMode::Write,
        rwmixread: None,
        bs_read: crate::workload::bssplit::BsSplit::single(FILL_BS as u32),
        bs_write: crate::workload::bssplit::BsSplit::single(FILL_BS as u32),
        threads: Threads::Count(1),
        qd: Some(32),
        region: (0.0, 1.0),
        random_dist: None,
    }
}

/// How an earlier nvmebench recorded `--filename` (as typed, with `--profile` files as typed) for
/// `targets`: split as the run splits it, as typed now, and, for several targets, as the one
/// fio-style list `a:b` (however they are typed now).
fn earlier_spellings(typed: &[PathBuf], targets: &[PathBuf]) -> Vec<Vec<PathBuf>> {
    let mut out = vec![targets.to_vec(), typed.to_vec()];
    if targets.len() > 1 {
        let escaped: Vec<String> = targets.iter().map(|t| t.to_string_lossy().replace(':', "\\:")).collect();
        out.push(vec![PathBuf::from(escaped.join(":"))]);
    }
    out
}

/// A profile's origin for the plan: `built-in`, or its file's canonical path (so `--profile p.toml`
/// and `--profile ./p.toml` are one plan).
fn canonical_origin(p: &Profile) -> String {
    match p.origin.as_str() {
        "built-in" => p.origin.clone(),
        file => crate::target::canonical_path(Path::new(file)).display().to_string(),
    }
}

/// The text a rerun must match to resume: every option that shapes results, the profiles' text
/// and `origins`, the step ids and the `targets` (`--filename` split as the run splits it).
fn fingerprint(
    args: &SuiteArgs,
    name: &str,
    opts: &Options,
    chosen: &[Profile],
    origins: &[String],
    steps: &[PlannedStep],
    targets: &[PathBuf],
) -> String {
    serde_json::to_string_pretty(&serde_json::json!({
        "suite": name,
        "engine": args.engine,
        // The targets, not how they were typed: `--filename a:b` and `--filename a --filename b`
        // are one plan. Their order is kept: every worker drives a lane per target in this order,
        // and each step's per-target blocks and series (and `--ios`' split over lanes) are indexed
        // by it, so b:a would give the earlier steps' target 0 another device's figures.
        // One target as a string, as before several were taken, so earlier results still resume.
        "filename": match targets {
            [] => serde_json::Value::Null,
            [one] => serde_json::json!(one),
            many => serde_json::json!(many),
        },
        "capacity_bytes": opts.capacity,
        "working_set_percent": args.working_set,
        "jobs": args.jobs,
        "qd": args.qd,
        "time_s": args.time.as_secs_f64(),
        "ramp_s": args.ramp.as_secs_f64(),
        "seed": args.seed,
        "sweep": opts.sweep,
        "curve": opts.curve,
        "stop_latency": opts.stop,
        "precondition": opts.precondition,
        "fill": args.fill,
        "round_time_s": opts.round_time.as_secs_f64(),
        "max_rounds": args.max_rounds,
        "small_bs": args.small_bs,
        "profiles": chosen.iter().zip(origins).map(|(p, origin)| serde_json::json!({ "name": p.name, "origin": origin, "text": p.text })).collect::<Vec<_>>(),
        "steps": steps.iter().map(|s| s.id.clone()).collect::<Vec<_>>(),
    }))
    .expect("a JSON value always serialises")
}

/// The working set: `percent` of the capacity (all of it without one), on a 4 KiB grid.
fn capacity_share(capacity: u64, percent: Option<f64>) -> u64 {
    let p = percent.unwrap_or(100.0);
    ((capacity as f64 * p / 100.0) as u64 / 4096 * 4096).max(4096)
}

/// Resolves one stream exactly as `run` would resolve its flags, over `region` of `ws` bytes.
fn resolve(
    args: &SuiteArgs,
    engine: &EngineSpec,
    attached: Option<&Target>,
    s: &Stream,
    ws: u64,
    at: &str,
) -> Result<ResolvedStream, SuiteError> {
    let start = (ws as f64 * s.region.0) as u64 / 4096 * 4096;
    let end = if s.region.1 >= 1.0 { ws } else { (ws as f64 * s.region.1) as u64 / 4096 * 4096 };
    let mut argv: Vec<String> = ["nvmebench", "run", "--quiet", "--engine", &args.engine, "--rw", s.rw.name()]
        .iter()
        .map(|x| x.to_string())
        .collect();
    let mut add = |k: &str, v: String| {
        argv.push(k.to_string());
        argv.push(v);
    };
    add("--bssplit", s.bssplit_arg());
    add("--offset", start.to_string());
    add("--size", end.saturating_sub(start).to_string());
    add("--time", format!("{}ns", args.time.as_nanos()));
    if let Some(m) = s.rwmixread {
        add("--rwmixread", m.to_string());
    }
    if let Some(d) = &s.random_dist {
        add("--random-dist", d.clone());
    }
    if let Some(seed) = args.seed {
        add("--seed", seed.to_string());
    }
    for f in &args.filename {
        add("--filename", f.display().to_string());
    }
    if args.allow_destroy {
        argv.push("--allow-destroy".into());
    }
    for t in &args.spdk.trids {
        argv.extend(["--trid".to_string(), t.clone()]);
    }
    let parsed = Cli::try_parse_from(&argv).map_err(|e| {
        let text = e.render().to_string();
        let first = text.lines().next().unwrap_or("invalid").trim_start_matches("error: ").to_string();
        SuiteError::Usage(format!("{at}: {first}"))
    })?;
    let Command::Run(run_args) = parsed.command else { unreachable!("the argument list starts with `run`") };
    let mut attach =
        |_: &[usize]| attached.map(|t| vec![t.clone()]).ok_or_else(|| ConfigError::Engine("nothing attached".into()));
    let cfg = RunConfig::resolve_with(&run_args, &args.engine, Some(&mut attach))
        .map_err(|e| SuiteError::Usage(format!("{at}: {e}")))?;
    debug_assert_eq!(&cfg.engine, engine);
    Ok(ResolvedStream { name: s.name.clone(), cfg, threads: s.threads, qd: s.qd, ios: None, runtime: None, flow: None })
}

/// `nvmebench suite --list`.
pub fn list(profiles: &[Profile]) -> String {
    let mut out = String::from("suites:\n");
    for s in &SUITES {
        out.push_str(&format!("  {:<16} {}\n", s.name, s.description));
    }
    out.push_str("profiles:\n");
    for p in profiles {
        let steps: Vec<&str> = p.steps.iter().map(|s| s.name.as_str()).collect();
        out.push_str(&format!("  {:<16} {} [{}] ({})\n", p.name, p.description, steps.join(", "), p.origin));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan of `nvmebench suite four-corners --engine null` and `extra`.
    fn plan_of(extra: &[&str]) -> Plan {
        let mut argv = vec!["nvmebench", "suite", "four-corners", "--engine", "null", "--time", "1s"];
        argv.extend_from_slice(extra);
        let Command::Suite(args) = Cli::try_parse_from(argv).unwrap().command else { unreachable!("a suite command") };
        let engine = EngineSpec::parse("null").unwrap();
        build(&args, "four-corners", &Profile::built_in(), &engine, 1 << 20, 512, None).unwrap()
    }

    fn fingerprint_of(extra: &[&str]) -> String {
        plan_of(extra).fingerprint
    }

    #[test]
    fn one_target_list_is_one_plan_however_it_is_spelt() {
        let dir = tempfile::tempdir().unwrap();
        let [a, b, c] = ["a", "b", "c:d"].map(|n| {
            let p = dir.path().join(n);
            std::fs::write(&p, vec![0u8; 1 << 20]).unwrap();
            p.display().to_string()
        });
        let joined = fingerprint_of(&["--filename", &format!("{a}:{b}")]);
        assert_eq!(joined, fingerprint_of(&["--filename", &a, "--filename", &b]), "a:b is --filename a --filename b");
        assert_ne!(joined, fingerprint_of(&["--filename", &format!("{b}:{a}")]), "the order places the lanes");
        // One target whose name holds a colon is one target, and still a string (as before lists).
        let escaped = c.replace(':', "\\:");
        let one = fingerprint_of(&["--filename", &escaped]);
        assert!(one.contains(&format!("\"filename\": {}", serde_json::json!(c))), "{one}");
        assert!(plan_of(&["--filename", &a]).earlier_fingerprints.is_empty(), "one plain target: as before");
        // Results an earlier nvmebench wrote for `a:b` (the list as one string) still resume, with
        // either spelling.
        let as_one = format!("\"filename\": \"{a}:{b}\"");
        for spelt in [vec!["--filename", &format!("{a}:{b}")], vec!["--filename", &a, "--filename", &b]] {
            let earlier = plan_of(&spelt).earlier_fingerprints;
            assert!(earlier.iter().any(|f| f.contains(&as_one)), "{spelt:?}: {earlier:?}");
        }
        let earlier = plan_of(&["--filename", &escaped]).earlier_fingerprints;
        assert!(earlier[0].contains(&format!("\"filename\": {}", serde_json::json!(escaped))), "{earlier:?}");
    }

    #[test]
    fn a_target_or_profile_is_one_plan_however_its_path_is_spelt() {
        let dir = tempfile::tempdir().unwrap();
        let at = |p: &str| dir.path().join(p).display().to_string();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("a"), vec![0u8; 1 << 20]).unwrap();
        std::os::unix::fs::symlink(dir.path().join("a"), dir.path().join("link")).unwrap();
        let plain = plan_of(&["--filename", &at("a")]);
        for spelt in ["./a", "sub/../a", "link"] {
            let other = plan_of(&["--filename", &at(spelt)]);
            assert_eq!(other.fingerprint, plain.fingerprint, "{spelt}");
            // Results written before paths were compared canonically still resume, spelt as then.
            let then = plan_of(&["--filename", &at(spelt)]).earlier_fingerprints;
            assert!(then.iter().any(|f| f.contains(&serde_json::json!(at(spelt)).to_string())), "{spelt}: {then:?}");
        }
        assert_ne!(plan_of(&["--filename", &at("sub/../b"), "--size", "1m"]).fingerprint, plain.fingerprint);

        // A file the suite creates (--size) has the plan it will have once it exists.
        let new = |spelt: &str| plan_of(&["--filename", &at(spelt), "--size", "1m"]).fingerprint;
        let before = new("n");
        assert_eq!(new("./n"), before);
        assert_eq!(new("sub/../n"), before);
        std::fs::write(dir.path().join("n"), vec![0u8; 1 << 20]).unwrap();
        assert_eq!(new("n"), before, "once created");
        assert_eq!(new("./n"), before, "once created");

        // A profile file, by any path.
        let profile = dir.path().join("mine.toml");
        std::fs::write(
            &profile,
            "name = \"mine\"\ndescription = \"x\"\n[[step]]\nname = \"r\"\nrw = \"randread\"\nbs = \"4k\"\n",
        )
        .unwrap();
        let with_profile = |path: &str| {
            let text = std::fs::read_to_string(path).unwrap();
            let mut profiles = Profile::built_in();
            profiles.push(Profile::parse(&text, path).unwrap());
            let argv = ["nvmebench", "suite", "mine", "--engine", "null", "--time", "1s", "--profile", path];
            let Command::Suite(args) = Cli::try_parse_from(argv).unwrap().command else { unreachable!("a suite") };
            let engine = EngineSpec::parse("null").unwrap();
            build(&args, "mine", &profiles, &engine, 1 << 20, 512, None).unwrap()
        };
        let one = with_profile(&at("mine.toml"));
        assert_eq!(with_profile(&at("sub/../mine.toml")).fingerprint, one.fingerprint);
        assert!(with_profile(&at("./mine.toml")).earlier_fingerprints.iter().any(|f| f.contains(&at("./mine.toml"))));
    }
}

//! Which steps a suite runs, in which order, with every stream resolved and checked before anything
//! is written.
//!
//! A suite is a list of profiles plus what to do around them: preconditioning first, a T/Q sweep
//! and an iorate curve per step. Each step becomes one result file, named `NN-what.json`; the
//! names and the options that shape results form the plan, which a rerun must match to resume.

use super::SuiteError;
use super::curve::StopRule;
use super::exec::ResolvedStream;
use super::profile::{Profile, Stream, Threads};
use super::steady::FILL_BS;
use super::sweep::{self, Point};
use crate::cli::{Cli, Command, SuiteArgs};
use crate::config::{ConfigError, EngineSpec, RunConfig};
use crate::target::Target;
use clap::Parser;
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
    let usage = SuiteError::Usage;
    let (names, precondition, sweep_text, curve) = match SUITES.iter().find(|s| s.name == name) {
        Some(s) => (s.profiles.iter().map(|p| p.to_string()).collect::<Vec<_>>(), s.precondition, s.sweep, s.curve),
        None if profiles.iter().any(|p| p.name == name) => (vec![name.to_string()], false, None, false),
        None => {
            return Err(usage(format!(
                "'{name}' is not a suite or a profile; `nvmebench suite --list` shows them (add --profile FILE for your own)"
            )));
        }
    };
    let precondition = (precondition || args.precondition) && !args.no_precondition;
    let curve = (curve || args.curve) && !args.no_curve;
    let sweep_points = match args.sweep.as_deref().or(sweep_text) {
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
    let run_time = args.ramp + args.time;
    let round_time = args.round_time.unwrap_or(args.time);
    let mut notes = Vec::new();
    let mut chosen: Vec<Profile> = Vec::new();
    for n in &names {
        let mut p = profiles.iter().find(|p| &p.name == n).cloned().expect("suites name built-in profiles");
        let device = args.filename.as_ref().map_or("the null device".into(), |f| f.display().to_string());
        notes.extend(p.fit_block_size(lbs, args.small_bs, &device).map_err(usage)?);
        chosen.push(p);
    }

    let mut steps: Vec<PlannedStep> = Vec::new();
    let mut push = |slug: String, label: String, kind: StepKind, streams: Vec<ResolvedStream>, planned: Duration| {
        let id = format!("{:02}-{slug}", steps.len() + 1);
        steps.push(PlannedStep { id, label, kind, streams, planned });
    };
    let whole = |p: Option<f64>| capacity_share(capacity, args.working_set.or(p));
    let rounds_time = round_time * args.max_rounds;
    if precondition {
        let default = Profile::parse(DEFAULT_PRECONDITION, "built-in").expect("the default workload parses");
        let streams = vec![resolve(args, engine, attached, &default.steps[0].streams[0], capacity, "precondition")?];
        let fill = if args.fill > 0.0 {
            let s = Stream {
                name: "fill".into(),
                rw: crate::workload::RwMode::Write,
                rwmixread: None,
                bs_read: crate::workload::bssplit::BsSplit::single(FILL_BS as u32),
                bs_write: crate::workload::bssplit::BsSplit::single(FILL_BS as u32),
                threads: Threads::Count(1),
                qd: Some(32),
                region: (0.0, 1.0),
                random_dist: None,
            };
            Some(vec![resolve(args, engine, attached, &s, capacity, "precondition (fill)")?])
        } else {
            None
        };
        push(
            "precondition".into(),
            "precondition: 4k randwrite to steady state".into(),
            StepKind::Precondition { purge: true, fill },
            streams,
            rounds_time,
        );
    }
    for p in &chosen {
        let ws = whole(p.working_set_percent);
        if let (true, Some(pre)) = (precondition, &p.precondition) {
            let at = format!("profile {} precondition", p.name);
            let streams = vec![resolve(args, engine, attached, pre, capacity, &at)?];
            push(
                format!("{}-precondition", p.name),
                format!("{} precondition: {} to steady state", p.name, pre.rw),
                StepKind::Precondition { purge: false, fill: None },
                streams,
                rounds_time,
            );
        }
        for s in &p.steps {
            let streams = s
                .streams
                .iter()
                .map(|st| {
                    resolve(
                        args,
                        engine,
                        attached,
                        st,
                        ws,
                        &format!("profile {} step {} stream {}", p.name, s.name, st.name),
                    )
                })
                .collect::<Result<Vec<_>, _>>()?;
            let mut thread_counts = vec![args.jobs];
            thread_counts.extend(sweep_points.iter().flatten().map(|pt| pt.threads));
            for st in streams.iter().filter(|st| !st.cfg.workload.rw.is_random()) {
                for &jobs in &thread_counts {
                    let n = st.threads.resolve(jobs);
                    if n > 1 {
                        super::exec::slice_bytes(st, n)
                            .map_err(|m| usage(format!("profile {} step {}: {m}", p.name, s.name)))?;
                    }
                }
            }
            let label = format!("{}/{}", p.name, s.name);
            let slug = format!("{}-{}", p.name, s.name);
            push(slug.clone(), label.clone(), StepKind::Run, streams.clone(), run_time);
            if let Some(points) = &sweep_points {
                let planned = run_time * points.len() as u32;
                push(
                    format!("{slug}-sweep"),
                    format!("{label} sweep"),
                    StepKind::Sweep(points.clone()),
                    streams.clone(),
                    planned,
                );
            }
            if curve {
                let planned = run_time * (1 + super::curve::CURVE_PERCENTS.len() as u32);
                push(format!("{slug}-curve"), format!("{label} iorate"), StepKind::Curve, streams, planned);
            }
        }
    }

    let fingerprint = serde_json::to_string_pretty(&serde_json::json!({
        "suite": name,
        "engine": args.engine,
        "filename": args.filename,
        "capacity_bytes": capacity,
        "working_set_percent": args.working_set,
        "jobs": args.jobs,
        "qd": args.qd,
        "time_s": args.time.as_secs_f64(),
        "ramp_s": args.ramp.as_secs_f64(),
        "seed": args.seed,
        "sweep": sweep_points,
        "curve": curve,
        "stop_latency": stop,
        "precondition": precondition,
        "fill": args.fill,
        "round_time_s": round_time.as_secs_f64(),
        "max_rounds": args.max_rounds,
        "small_bs": args.small_bs,
        "profiles": chosen.iter().map(|p| serde_json::json!({ "name": p.name, "origin": p.origin, "text": p.text })).collect::<Vec<_>>(),
        "steps": steps.iter().map(|s| s.id.clone()).collect::<Vec<_>>(),
    }))
    .expect("a JSON value always serialises");
    Ok(Plan { name: name.to_string(), steps, capacity_bytes: capacity, stop, notes, fingerprint })
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
    if let Some(f) = &args.filename {
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
    let mut attach = |_: &[usize]| attached.cloned().ok_or_else(|| ConfigError::Engine("nothing attached".into()));
    let cfg = RunConfig::resolve_with(&run_args, &args.engine, Some(&mut attach))
        .map_err(|e| SuiteError::Usage(format!("{at}: {e}")))?;
    debug_assert_eq!(&cfg.engine, engine);
    Ok(ResolvedStream { name: s.name.clone(), cfg, threads: s.threads, qd: s.qd })
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

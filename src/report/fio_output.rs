//! The fio-shaped output of a run: fio's JSON document (`--output-format json|json+`), its logs
//! (`--write_bw_log` and the like) and `disk_util`, written where `--output-file` says. Used by
//! `run` for a command-line run and by `fio::exec` for job files.

use super::diskstats as disk;
use crate::cli::RunArgs;
use crate::config::RunConfig;
use crate::coordinator::{RunResult, ThreadPoint};
use crate::report::fio::{self as fio_report, DiskUtil, FioJob, LogKind};
use crate::report::{self};
use crate::target::TargetKind;
use std::io::Write as _;

/// The kernel block device under a run's target, for `disk_util`.
pub fn disk_of(cfg: &RunConfig) -> Option<String> {
    // The null engine never touches its target, and SPDK's is not a kernel device.
    cfg.target
        .as_ref()
        .filter(|t| cfg.engine.needs_target() && t.kind != TargetKind::SpdkNamespace)
        .and_then(|t| t.device.clone())
}

/// Writes the logs `args` asks for, one per job clone (worker thread; `threads`, each its own
/// series), numbered as fio numbers its threads: `first` for the job's first clone, then on. With
/// `per_job_logs=0` every clone's lines go to one file without a number, appended clone after
/// clone to what the file holds, as fio appends each thread's log. A log given without a prefix (a
/// bare `write_bw_log` in a job file) is named after the job, `jobname`, as fio names it. The
/// block-size column is fio's for the job's sizes (`cfg`; see [`fio_report::log_block_sizes`]).
///
/// # Errors
/// A log that cannot be written.
pub fn write_logs(
    args: &RunArgs,
    cfg: &RunConfig,
    first: usize,
    jobname: &str,
    threads: &[&[ThreadPoint]],
) -> anyhow::Result<()> {
    let f = &args.fio;
    let bs = fio_report::log_block_sizes(cfg, f.log_avg_window().is_some());
    let prefix = |p: &str| if p.is_empty() { jobname.to_string() } else { p.to_string() };
    let mut kinds: Vec<(String, LogKind)> = Vec::new();
    if let Some(p) = &f.write_bw_log {
        kinds.push((prefix(p), LogKind::Bw));
    }
    if let Some(p) = &f.write_iops_log {
        kinds.push((prefix(p), LogKind::Iops));
    }
    if let Some(p) = &f.write_lat_log {
        kinds.push((prefix(p), LogKind::Lat));
        kinds.push((prefix(p), LogKind::Clat));
        // fio's third latency log, when submission latencies are measured apart.
        if cfg.split_latency() {
            kinds.push((prefix(p), LogKind::Slat));
        }
    }
    let cannot = |path: &str, e: std::io::Error| anyhow::anyhow!("cannot write {path}: {e}");
    for (prefix, kind) in kinds {
        if f.per_job_logs.unwrap_or(true) {
            for (i, series) in threads.iter().enumerate() {
                let path = format!("{prefix}_{}.{}.log", kind.suffix(), first + i);
                std::fs::write(&path, fio_report::log_lines(kind, series, bs)).map_err(|e| cannot(&path, e))?;
            }
        } else {
            let path = format!("{prefix}_{}.log", kind.suffix());
            let text: String = threads.iter().map(|series| fio_report::log_lines(kind, series, bs)).collect();
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .and_then(|mut file| file.write_all(text.as_bytes()))
                .map_err(|e| cannot(&path, e))?;
        }
    }
    Ok(())
}

/// The fio-shaped output of one command-line run, when asked for: fio's JSON document (returned,
/// to go where the report goes) and fio's logs (written).
///
/// # Errors
/// A log that cannot be written.
pub fn single_run_output(
    args: &RunArgs,
    cfg: &RunConfig,
    r: &RunResult,
    disk: Option<DiskUtil>,
) -> anyhow::Result<Option<String>> {
    let name = args.fio.name.clone().unwrap_or_else(|| "nvmebench".into());
    let threads: Vec<&[ThreadPoint]> = r.threads.iter().map(Vec::as_slice).collect();
    write_logs(args, cfg, 1, &name, &threads)?;
    if !args.fio.fio_json() {
        return Ok(None);
    }
    if let Some(f) = &r.failure {
        eprintln!("nvmebench: the run failed: {f}; results are partial");
    }
    if r.error_count() > 0 {
        eprintln!("nvmebench: {} I/O errors", r.error_count());
    }
    let w = &cfg.workload;
    let bs = w.bs_fio();
    let mut options: Vec<(String, String)> = vec![
        ("name".into(), name.clone()),
        ("ioengine".into(), fio_report::fio_engine_name(cfg.engine.name()).into()),
        ("rw".into(), w.rw.to_string()),
        ("bs".into(), bs),
        ("iodepth".into(), cfg.queue_depth.to_string()),
        ("numjobs".into(), cfg.cores.len().to_string()),
        ("direct".into(), "1".into()),
    ];
    if let Some(t) = cfg.target.as_ref().filter(|_| !cfg.scratch) {
        options.push(("filename".into(), t.path.display().to_string()));
    }
    if let Some(rt) = cfg.runtime {
        options.push(("runtime".into(), format!("{}", rt.as_secs_f64())));
    }
    if w.rw.is_mixed() && w.mix.beyond_read_write() {
        options.push(("rwmix".into(), w.mix.to_arg()));
    } else if w.rw.is_mixed() {
        options.push(("rwmixread".into(), w.read_percent().to_string()));
    }
    let stats = &r.total;
    let group_agg = crate::io::Direction::ALL
        .map(|dir| fio_report::group_agg(std::iter::once((stats.of(dir).bytes, r.elapsed_ns))));
    let job = FioJob {
        name: &name,
        group_id: 0,
        options,
        cfg,
        stats,
        elapsed_ns: r.elapsed_ns,
        threads: r.workers.len(),
        runtime_ns: r.workers.iter().map(|w| w.summary.as_ref().map_or(r.elapsed_ns, |s| s.measured_ns)).sum(),
        cpu: Some(&r.cpu),
        series: threads,
        group_agg,
        lat_percentiles: args.fio.lat_percentiles.unwrap_or(false),
        latencies: args.fio.fio_latencies(),
    };
    let plus = args.fio.output_format.as_deref() == Some("json+");
    let doc = fio_report::render(&[], &[job], &disk.into_iter().collect::<Vec<_>>(), plus, r.started_at);
    Ok(Some(serde_json::to_string_pretty(&doc).expect("a JSON value always serialises") + "\n"))
}

/// Samples the disk a run's target lives on (for `disk_util`), when fio JSON is asked for.
pub fn disk_before(args: &RunArgs, cfg: &RunConfig) -> Option<disk::DiskSample> {
    args.fio.fio_json().then(|| disk_of(cfg)).flatten().and_then(|d| disk::sample(&d))
}

/// What the disk did since `before`.
pub fn disk_since(before: Option<disk::DiskSample>, cfg: &RunConfig) -> Option<DiskUtil> {
    let after = disk_of(cfg).and_then(|d| disk::sample(&d))?;
    before.map(|b| disk::between(&b, &after))
}

/// Writes the report to `--output-file`, or to stdout.
///
/// # Errors
/// The file cannot be written, or stdout is closed with an error other than a broken pipe.
pub fn write_report(f: &crate::cli::FioArgs, text: &str) -> anyhow::Result<()> {
    match &f.output_file {
        Some(p) => std::fs::write(p, text).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", p.display())),
        None => report::write_stdout(text),
    }
}

//! The fio-shaped output of a run: fio's JSON document (`--output-format json|json+`), its logs
//! (`--write_bw_log` and the like) and `disk_util`, written where `--output-file` says. Used by
//! `run` for a command-line run and by `fio::exec` for job files.

use super::diskstats as disk;
use crate::batches::BatchCounts;
use crate::cli::RunArgs;
use crate::config::RunConfig;
use crate::coordinator::RunResult;
use crate::cpu::{CpuUsage, ThreadCounts};
use crate::report::fio::{self as fio_report, DiskUtil, FioClone, FioJobSpec, IoLogColumns, LogKind};
use crate::report::{self};
use crate::stats::Stats;
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

/// Writes the logs `args` asks for, one per job clone (worker thread; `clones`, each with its own
/// series and, without `log_avg_msec`, its own per-I/O records), numbered as fio numbers its
/// threads: `first` for the job's first clone, then on. With `per_job_logs=0` every clone's lines
/// go to one file without a number, appended clone after clone to what the file holds, as fio
/// appends each thread's log. A log given without a prefix (a bare `write_bw_log` in a job file)
/// is named after the job, `jobname`, as fio names it. Without `log_avg_msec` (or with 0) every
/// I/O has its line, as fio logs it ([`fio_report::write_io_log`]); with it, each window has one
/// per direction ([`fio_report::log_lines_prio`]).
///
/// # Errors
/// A log that cannot be written.
pub fn write_logs(
    args: &RunArgs,
    cfg: &RunConfig,
    first: usize,
    jobname: &str,
    clones: &[FioClone<'_>],
) -> anyhow::Result<()> {
    let f = &args.fio;
    let per_io = f.per_io_log();
    let prio_column = f.log_prio.unwrap_or(false);
    let columns =
        IoLogColumns { offset: f.log_offset.unwrap_or(false), prio: prio_column, job_prio: cfg.workload.prio.job };
    let prefix = |p: &str| if p.is_empty() { jobname.to_string() } else { p.to_string() };
    let mut kinds: Vec<(String, LogKind)> = Vec::new();
    if let Some(p) = &f.write_bw_log {
        kinds.push((prefix(p), LogKind::Bw));
    }
    if let Some(p) = &f.write_iops_log {
        kinds.push((prefix(p), LogKind::Iops));
    }
    if let Some(p) = &f.write_lat_log {
        // fio logs only the latencies it measures (none of those its disable_* options turn off);
        // the third, when submission latencies are measured apart.
        let kept = f.fio_latencies();
        let logs =
            [(kept.lat, LogKind::Lat), (kept.clat, LogKind::Clat), (kept.slat && cfg.split_latency(), LogKind::Slat)];
        kinds.extend(logs.into_iter().filter(|(on, _)| *on).map(|(_, kind)| (prefix(p), kind)));
    }
    let cannot = |path: &str, e: std::io::Error| anyhow::anyhow!("cannot write {path}: {e}");
    // fio adds no per-I/O bandwidth sample with disable_bw, and no IOPS sample when it takes no
    // stamp at a completion (`account_io_completion`): their files have no lines.
    let silent = |kind| match kind {
        LogKind::Bw => f.disable_bw.unwrap_or(false),
        LogKind::Iops => f.fio_reduce(),
        _ => false,
    };
    // Per I/O, streamed to the file (a log can be millions of lines); averaged, a few lines.
    let write_clone = |out: &mut dyn std::io::Write, kind, clone: &FioClone<'_>| -> std::io::Result<()> {
        if per_io {
            let ios = if silent(kind) { &[][..] } else { clone.ios };
            return fio_report::write_io_log(out, kind, ios, clone.log_epochs_ns, columns);
        }
        let text = fio_report::log_lines_prio(kind, clone.series, prio_column);
        let text = if f.log_offset.unwrap_or(false) { with_offset_column(&text) } else { text };
        out.write_all(text.as_bytes())
    };
    // A perturbation of the measurement worth a line, where the run prints more than its result.
    if per_io && !kinds.is_empty() && !cfg.quiet {
        for (i, c) in clones.iter().enumerate().filter(|(_, c)| c.log_buffers_allocated > 0) {
            eprintln!(
                "nvmebench: job {jobname} clone {}: the worker allocated {} per-I/O log buffers itself (the coordinator fell behind returning them); the log is whole",
                first + i,
                c.log_buffers_allocated
            );
        }
    }
    for (prefix, kind) in kinds {
        // Each clone its own file, or all of them appended to one.
        let files: Vec<(String, &[FioClone<'_>])> = if f.per_job_logs.unwrap_or(true) {
            (0..clones.len())
                .map(|i| (format!("{prefix}_{}.{}.log", kind.suffix(), first + i), &clones[i..=i]))
                .collect()
        } else {
            vec![(format!("{prefix}_{}.log", kind.suffix()), clones)]
        };
        let append = !f.per_job_logs.unwrap_or(true);
        for (path, group) in files {
            let write = || -> std::io::Result<()> {
                let file = std::fs::OpenOptions::new()
                    .create(true)
                    .write(true)
                    .append(append)
                    .truncate(!append)
                    .open(&path)?;
                let mut out = std::io::BufWriter::new(file);
                for clone in group {
                    write_clone(&mut out, kind, clone)?;
                }
                out.flush()
            };
            write().map_err(|e| cannot(&path, e))?;
        }
    }
    Ok(())
}

/// fio's `log_offset=1` column, before the last (priority) one: the offset of the logged I/O,
/// which is 0 on fio's averaged lines (stat.c's `__add_stat_to_log` logs no offset), as every line
/// here is averaged.
fn with_offset_column(text: &str) -> String {
    text.lines()
        .map(|l| match l.rsplit_once(", ") {
            Some((head, prio)) => format!("{head}, 0, {prio}\n"),
            None => format!("{l}\n"),
        })
        .collect()
}

/// A job's clones (its worker threads, in order) from the lanes it ran (`lanes`: indices into
/// `r.workers`; a clone drives a lane per file): each clone's figures summed over its lanes, its
/// span the longest of its lanes' measured times (the run's when none finished measuring), its
/// thread's CPU time over its measured window (kept on one of its lanes) and its own series.
/// `job` is the clones' job, an index into the specs they are reported with.
pub fn clones_of<'r>(r: &'r RunResult, lanes: &[usize], job: usize) -> Vec<FioClone<'r>> {
    let mut threads: Vec<usize> = lanes.iter().map(|&l| r.workers[l].thread).collect();
    threads.sort_unstable();
    threads.dedup();
    threads
        .into_iter()
        .map(|t| {
            let mut stats = Stats::default();
            let mut cpu = CpuUsage::default();
            let mut counts = ThreadCounts::default();
            let mut batches: Option<BatchCounts> = None;
            let (mut span_ns, mut verify_ns, mut verified) = (0, 0, Stats::default());
            let mut latency_depth = None;
            let mut log_epochs_ns: Option<[u64; 2]> = None;
            let mut log_buffers_allocated = 0;
            for w in lanes.iter().map(|&l| &r.workers[l]).filter(|w| w.thread == t) {
                stats += &w.stats;
                let Some(s) = &w.summary else { continue };
                span_ns = span_ns.max(s.measured_ns);
                // A thread's lanes verify one after another, each once it has drained.
                if let Some(v) = &s.verify_reads {
                    verified += &*v.stats;
                    verify_ns += v.span_ns;
                }
                // Lanes of one clone begin measuring together (the latency target's restart is
                // a lone lane's): the first lane's.
                log_epochs_ns = log_epochs_ns.or(Some(s.log_epochs_ns));
                log_buffers_allocated += s.log_buffers_allocated;
                latency_depth = s.latency_depth.or(latency_depth);
                if let Some(b) = &s.batches {
                    *batches.get_or_insert_with(BatchCounts::default) += b;
                }
                if let Some(window) = &s.cpu {
                    cpu.user_ns += window.user_ns;
                    cpu.sys_ns += window.sys_ns;
                    counts += window.counts;
                }
            }
            cpu.ios = stats.ios();
            stats += &verified;
            FioClone {
                job,
                stats,
                span_ns: if span_ns == 0 { r.elapsed_ns } else { span_ns },
                verify_ns,
                cpu,
                counts,
                batches,
                series: r.threads.get(t).map_or(&[][..], Vec::as_slice),
                latency_depth,
                ios: r.io_logs.get(t).map_or(&[][..], Vec::as_slice),
                log_epochs_ns: log_epochs_ns.unwrap_or_default(),
                log_buffers_allocated,
            }
        })
        .collect()
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
    let lanes: Vec<usize> = (0..r.workers.len()).collect();
    let clones = clones_of(r, &lanes, 0);
    write_logs(args, cfg, 1, &name, &clones)?;
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
    let spec = FioJobSpec {
        name: &name,
        group_id: 0,
        group_reporting: args.fio.group_reporting.unwrap_or(false),
        options: &options,
        cfg,
        lat_percentiles: args.fio.lat_percentiles.unwrap_or(false),
        latencies: args.fio.fio_latencies(),
    };
    let jobs = fio_report::entries(&[spec], &clones);
    let plus = args.fio.output_format.as_deref() == Some("json+");
    let doc = fio_report::render(&[], &jobs, &disk.into_iter().collect::<Vec<_>>(), plus, r.started_at);
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

#[cfg(test)]
mod tests {
    /// fio's log_offset=1 puts the offset before the priority column; averaged lines have 0.
    #[test]
    fn log_offset_adds_fios_offset_column() {
        assert_eq!(
            super::with_offset_column("500, 40, 0, 0, 0\n1000, 41, 1, 0, 0\n"),
            "500, 40, 0, 0, 0, 0\n1000, 41, 1, 0, 0, 0\n"
        );
        assert_eq!(super::with_offset_column(""), "");
    }
}

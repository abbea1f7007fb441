//! What a run cost the machine, over the measured window only: the CPU time of the worker threads
//! (user and system, from their own counters) and of the cores the I/O path ran on (user, system,
//! interrupts and softirqs from `/proc/stat`, whoever the work was for), as "cores used"
//! (CPU-seconds per second) and "CPU ns per I/O", with the cores that were counted and why.
//!
//! The cores counted are the workers' own, the cores the process's io_uring kernel threads
//! (`iou-sqp-*`, `iou-wrk-*`) may run on, and the cores that took the target controller's
//! interrupts during the run. Interrupt handling, softirqs and kernel threads are thus counted where
//! they happen; anything else that ran on those cores meanwhile is counted too, which is why the
//! cores are named. The readings are taken by the workers themselves (`cpu::CpuProbe`) when their
//! measurement starts and ends; the run's window runs from the earliest start to the latest end.
//!
//! This module only does the arithmetic and reads the kernel's interrupt counts; it does not decide
//! when to read (the worker does) or how to print (the reports do).

use crate::cpu::{CoreTicks, CpuWindow};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// Interrupt lines of the run's targets in `/proc/interrupts`: those of a PCI function (its address
/// appears in the line: `PCI-MSIX-0000:00:10.0`, `vfio-msix[0](0000:00:10.0)`) or of an NVMe
/// controller's queues by name (`nvme0q1`, for kernels whose lines name no address).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceIrqs {
    /// PCI addresses, `0000:00:10.0`.
    pub functions: Vec<String>,
    /// NVMe controllers, `nvme0`.
    pub controllers: Vec<String>,
}

impl DeviceIrqs {
    pub fn is_empty(&self) -> bool {
        self.functions.is_empty() && self.controllers.is_empty()
    }

    /// Whether an interrupt line's description is one of these devices'.
    pub fn matches(&self, desc: &str) -> bool {
        self.functions.iter().any(|f| desc.contains(f.as_str()))
            || desc.split_ascii_whitespace().any(|word| {
                self.controllers.iter().any(|c| {
                    word.strip_prefix(c.as_str())
                        .and_then(|q| q.strip_prefix('q'))
                        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                })
            })
    }

    /// The devices behind a run's targets: paths the kernel knows (devices, files), or SPDK
    /// transport IDs.
    pub fn of_targets<'a>(targets: impl IntoIterator<Item = &'a Path>) -> DeviceIrqs {
        let mut d = DeviceIrqs::default();
        for t in targets {
            if t.exists() {
                d.add_path(t);
            } else if let Some(trid) = t.to_str() {
                d.add_trid(trid);
            }
        }
        d
    }

    /// Adds the device behind a kernel target (a block device, an NVMe generic device, or a file on
    /// a filesystem), found through sysfs; a target with no PCI function or NVMe controller behind
    /// it (a loop device, a fabric) adds nothing.
    pub fn add_path(&mut self, path: &Path) {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let Ok(meta) = std::fs::metadata(path) else { return };
        let dev = if meta.file_type().is_block_device() || meta.file_type().is_char_device() {
            meta.rdev()
        } else {
            meta.dev()
        };
        let (major, minor) = (libc::major(dev), libc::minor(dev));
        let kind = if meta.file_type().is_char_device() { "char" } else { "block" };
        let Ok(sys) = std::fs::canonicalize(format!("/sys/dev/{kind}/{major}:{minor}")) else { return };
        self.add_sysfs_path(&sys);
    }

    /// Adds what a device's canonical sysfs path shows: the last PCI function on it and the NVMe
    /// controller (`.../nvme/nvme0/...`).
    fn add_sysfs_path(&mut self, sys: &Path) {
        let parts: Vec<&str> = sys.iter().filter_map(|c| c.to_str()).collect();
        if let Some(bdf) = parts.iter().rev().find(|p| is_pci_address(p)) {
            push_new(&mut self.functions, bdf);
        }
        if let Some(w) = parts.windows(2).find(|w| w[0] == "nvme" && w[1].starts_with("nvme")) {
            push_new(&mut self.controllers, w[1]);
        }
    }

    /// Adds the PCI function of an SPDK transport ID over PCIe (`trtype:PCIe traddr:0000:00:10.0`).
    pub fn add_trid(&mut self, trid: &str) {
        let pcie = trid.split_ascii_whitespace().any(|w| w.eq_ignore_ascii_case("trtype:pcie"));
        let addr = trid.split_ascii_whitespace().find_map(|w| w.strip_prefix("traddr:"));
        if let (true, Some(a)) = (pcie, addr) {
            // SPDK also takes 00:10.0 and 0000.00.10.0; the kernel writes 0000:00:10.0.
            let a = a.replace('.', ":");
            let (head, func) = a.rsplit_once(':').unwrap_or((&a, "0"));
            let full =
                if head.matches(':').count() == 1 { format!("0000:{head}.{func}") } else { format!("{head}.{func}") };
            if is_pci_address(&full) {
                push_new(&mut self.functions, &full);
            }
        }
    }
}

fn push_new(v: &mut Vec<String>, s: &str) {
    if !v.iter().any(|x| x == s) {
        v.push(s.to_string());
    }
}

/// `0000:00:10.0`.
fn is_pci_address(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 12
        && b.iter().enumerate().all(|(i, &c)| match i {
            4 | 7 => c == b':',
            10 => c == b'.',
            _ => c.is_ascii_hexdigit(),
        })
}

/// `/proc/interrupts` as numbers: the CPUs of its header, and per line its label (`36`, `LOC`), its
/// count on each of those CPUs and its description (`PCI-MSIX-0000:00:02.0 1-edge virtio1-req.0`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Interrupts {
    pub cpus: Vec<usize>,
    pub lines: Vec<(String, Vec<u64>, String)>,
}

impl Interrupts {
    /// The kernel's counts now; `None` if `/proc/interrupts` cannot be read.
    pub fn read() -> Option<Interrupts> {
        std::fs::read_to_string("/proc/interrupts").ok().map(|t| Interrupts::parse(&t))
    }

    pub fn parse(text: &str) -> Interrupts {
        let mut lines = text.lines();
        let cpus: Vec<usize> = lines
            .next()
            .unwrap_or("")
            .split_ascii_whitespace()
            .filter_map(|c| c.strip_prefix("CPU")?.parse().ok())
            .collect();
        let mut out = Vec::new();
        for line in lines {
            let mut words = line.split_ascii_whitespace();
            let Some(label) = words.next().and_then(|w| w.strip_suffix(':')) else { continue };
            let rest: Vec<&str> = words.collect();
            let counts: Vec<u64> = rest.iter().take(cpus.len()).map_while(|w| w.parse().ok()).collect();
            let desc = rest[counts.len()..].join(" ");
            out.push((label.to_string(), counts, desc));
        }
        Interrupts { cpus, lines: out }
    }

    /// Per core, the interrupts of `devices` between `earlier` and `self`, with the busiest line's
    /// name on each core (lines matched by label, so an IRQ set up meanwhile counts from zero).
    pub fn device_counts_since(&self, earlier: &Interrupts, devices: &DeviceIrqs) -> BTreeMap<usize, (u64, String)> {
        let before: BTreeMap<&str, &Vec<u64>> = earlier.lines.iter().map(|(l, c, _)| (l.as_str(), c)).collect();
        let mut per: BTreeMap<usize, (u64, String, u64)> = BTreeMap::new();
        for (label, counts, desc) in self.lines.iter().filter(|(_, _, d)| devices.matches(d)) {
            let was = before.get(label.as_str());
            for (i, &n) in counts.iter().enumerate() {
                let d = n.saturating_sub(was.and_then(|w| w.get(i)).copied().unwrap_or(0));
                if d == 0 {
                    continue;
                }
                let Some(&cpu) = self.cpus.get(i) else { continue };
                let name = desc.split_ascii_whitespace().last().unwrap_or(label).to_string();
                let e = per.entry(cpu).or_insert((0, String::new(), 0));
                e.0 += d;
                if d > e.2 {
                    e.1 = name;
                    e.2 = d;
                }
            }
        }
        per.into_iter().map(|(c, (n, name, _))| (c, (n, name))).collect()
    }
}

/// A core the cost counts, and why: `worker 0`, `iou-sqp-1234 may run here`, `nvme0q1: 5000
/// interrupts`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoreReason {
    pub core: usize,
    pub why: String,
}

/// One worker thread's cost over its own window.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkerCost {
    /// The worker (thread) number.
    pub worker: usize,
    pub core: Option<usize>,
    pub window_ns: u64,
    /// I/Os it completed in its window (errors included), over all its targets.
    pub ios: u64,
    pub user_ns: u64,
    pub sys_ns: u64,
    /// Its thread's CPU time over its window (1.0: a whole core).
    pub cores_used: f64,
    /// Its thread's CPU time per I/O; `null` without I/O.
    pub ns_per_io: Option<f64>,
    /// Its core's busy time over its window (everything that ran there: user, nice, system,
    /// interrupts, softirqs); `null` when `/proc/stat` could not be read.
    pub core_busy_ns: Option<u64>,
    pub core_used: Option<f64>,
}

/// One counted core over the run's window, in ns.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CoreCost {
    pub core: usize,
    /// Why it is counted (`worker 0`, `iou-sqp-1234 may run here`, `nvme0q1: 5000 interrupts`).
    pub why: Vec<String>,
    pub user_ns: u64,
    pub nice_ns: u64,
    pub system_ns: u64,
    pub irq_ns: u64,
    pub softirq_ns: u64,
    pub idle_ns: u64,
    pub iowait_ns: u64,
    pub steal_ns: u64,
    /// user + nice + system + irq + softirq.
    pub busy_ns: u64,
}

/// The counted cores together over the run's window.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CoresCost {
    pub counted: Vec<CoreCost>,
    pub user_ns: u64,
    pub system_ns: u64,
    pub irq_ns: u64,
    pub softirq_ns: u64,
    pub busy_ns: u64,
    /// Busy time over the window: CPU-seconds per second.
    pub cores_used: f64,
    pub ns_per_io: Option<f64>,
}

/// The worker threads together over the run's window.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThreadsCost {
    pub user_ns: u64,
    pub sys_ns: u64,
    pub cores_used: f64,
    pub ns_per_io: Option<f64>,
}

/// What the benchmark's own timing costs per I/O, beside the run's figures.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TimingCost {
    /// Two clock reads, their difference scaled to ns and one histogram record, on this CPU (the
    /// least of five rounds, measured once per process before the first run).
    pub ns_per_io: f64,
    /// Whether this run's I/Os were stamped (`--latency off`: no, and they cost none of it).
    pub stamped: bool,
    /// `ns_per_io` times the measured I/Os over the worker threads' CPU time (when stamped).
    pub share_of_worker_time: Option<f64>,
}

/// What the run cost, over its measured window.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunCost {
    /// From the first worker's start reading to the last worker's end reading.
    pub window_ns: u64,
    /// I/Os completed in the workers' windows, errors included.
    pub ios: u64,
    /// The resolution of the core counters: one `/proc/stat` tick. Each core's figure can be off by
    /// about a tick at either end of the window (and by more on a kernel that books whole ticks to
    /// whatever it finds running, when the window holds few of them).
    pub tick_ns: u64,
    pub threads: ThreadsCost,
    /// `null` when `/proc/stat` could not be read.
    pub cores: Option<CoresCost>,
    pub workers: Vec<WorkerCost>,
    pub timing: Option<TimingCost>,
}

impl RunCost {
    /// The headline "cores used": of the counted cores when they were read, else of the workers'
    /// threads.
    pub fn cores_used(&self) -> f64 {
        self.cores.as_ref().map_or(self.threads.cores_used, |c| c.cores_used)
    }

    /// The headline CPU ns per I/O, chosen as [`cores_used`](Self::cores_used) is.
    pub fn ns_per_io(&self) -> Option<f64> {
        match &self.cores {
            Some(c) => c.ns_per_io,
            None => self.threads.ns_per_io,
        }
    }
}

/// One worker thread's share of a run, as the cost needs it: its core, its window and its I/Os.
#[derive(Clone, Debug)]
pub struct WorkerWindow<'a> {
    pub worker: usize,
    pub core: Option<usize>,
    pub window: &'a CpuWindow,
    pub ios: u64,
}

fn per(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

fn core_of(snap: &[(usize, CoreTicks)], core: usize) -> Option<&CoreTicks> {
    snap.iter().find(|(c, _)| *c == core).map(|(_, t)| t)
}

/// The run's cost from its workers' windows; `extra` names cores beyond the workers' to count.
/// `None` when no worker measured (a run stopped during its ramp).
pub fn run_cost(workers: &[WorkerWindow<'_>], extra: &[CoreReason], tick_ns: u64) -> Option<RunCost> {
    let first = workers.iter().min_by_key(|w| w.window.start_ns)?;
    let last = workers.iter().max_by_key(|w| w.window.end_ns)?;
    let window_ns = last.window.end_ns.saturating_sub(first.window.start_ns);
    let ios: u64 = workers.iter().map(|w| w.ios).sum();
    let (user_ns, sys_ns) = workers.iter().fold((0, 0), |(u, s), w| (u + w.window.user_ns, s + w.window.sys_ns));
    let threads = ThreadsCost {
        user_ns,
        sys_ns,
        cores_used: per(user_ns + sys_ns, window_ns).unwrap_or(0.0),
        ns_per_io: per(user_ns + sys_ns, ios),
    };
    let ticks = |t: u64| t.saturating_mul(tick_ns);
    let per_worker = workers
        .iter()
        .map(|w| {
            let span = w.window.span_ns();
            let busy = match (w.core, &w.window.cores_start, &w.window.cores_end) {
                (Some(c), Some(a), Some(b)) => core_of(b, c).zip(core_of(a, c)).map(|(b, a)| ticks(b.since(a).busy())),
                _ => None,
            };
            let cpu = w.window.user_ns + w.window.sys_ns;
            WorkerCost {
                worker: w.worker,
                core: w.core,
                window_ns: span,
                ios: w.ios,
                user_ns: w.window.user_ns,
                sys_ns: w.window.sys_ns,
                cores_used: per(cpu, span).unwrap_or(0.0),
                ns_per_io: per(cpu, w.ios),
                core_busy_ns: busy,
                core_used: busy.and_then(|b| per(b, span)),
            }
        })
        .collect();
    let mut reasons: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for w in workers {
        if let Some(c) = w.core {
            reasons.entry(c).or_default().push(format!("worker {}", w.worker));
        }
    }
    for r in extra {
        let v = reasons.entry(r.core).or_default();
        if !v.contains(&r.why) {
            v.push(r.why.clone());
        }
    }
    let cores = match (&first.window.cores_start, &last.window.cores_end) {
        (Some(a), Some(b)) => {
            let counted: Vec<CoreCost> = reasons
                .into_iter()
                .filter_map(|(core, why)| {
                    let d = core_of(b, core)?.since(core_of(a, core)?);
                    Some(CoreCost {
                        core,
                        why,
                        user_ns: ticks(d.user),
                        nice_ns: ticks(d.nice),
                        system_ns: ticks(d.system),
                        irq_ns: ticks(d.irq),
                        softirq_ns: ticks(d.softirq),
                        idle_ns: ticks(d.idle),
                        iowait_ns: ticks(d.iowait),
                        steal_ns: ticks(d.steal),
                        busy_ns: ticks(d.busy()),
                    })
                })
                .collect();
            let sum = |f: fn(&CoreCost) -> u64| counted.iter().map(f).sum::<u64>();
            let busy_ns = sum(|c| c.busy_ns);
            Some(CoresCost {
                user_ns: sum(|c| c.user_ns + c.nice_ns),
                system_ns: sum(|c| c.system_ns),
                irq_ns: sum(|c| c.irq_ns),
                softirq_ns: sum(|c| c.softirq_ns),
                busy_ns,
                cores_used: per(busy_ns, window_ns).unwrap_or(0.0),
                ns_per_io: per(busy_ns, ios),
                counted,
            })
        }
        _ => None,
    };
    Some(RunCost { window_ns, ios, tick_ns, threads, cores, workers: per_worker, timing: None })
}

impl RunCost {
    /// Adds what stamping costs per I/O (`ns_per_io`), as a share of the workers' time when the run
    /// stamped its I/Os.
    pub fn with_timing(mut self, ns_per_io: f64, stamped: bool) -> RunCost {
        let worker_ns = self.threads.user_ns + self.threads.sys_ns;
        let share = (stamped && worker_ns > 0).then(|| ns_per_io * self.ios as f64 / worker_ns as f64);
        self.timing = Some(TimingCost { ns_per_io, stamped, share_of_worker_time: share });
        self
    }
}

/// What stamping one I/O costs the worker loop on this CPU: two clock reads, the difference scaled
/// to ns, and a histogram record (with min, max and sum, the bucket counted in a tally), as
/// `worker::hot` books a completion.
/// Measured once per process, the least of five rounds (a preemption only makes a round slower);
/// the recorded values spread over 64 µs so that the record walks histogram buckets as a run's do.
pub fn stamp_cost_ns(clock: &crate::clock::Clock) -> f64 {
    static COST: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *COST.get_or_init(|| {
        const N: u64 = 20_000;
        let mut stats = crate::stats::DirStats::default();
        let mut tally = crate::stats::HistTally::new();
        let least = (0..5)
            .map(|_| {
                let t = std::time::Instant::now();
                for i in 0..N {
                    let a = clock.raw();
                    let b = std::hint::black_box(clock.raw());
                    let ns = clock.delta_as_nanos(a, b) + (i * 7919) % 65_536;
                    stats.record_tallied(ns, 4096, &mut tally);
                }
                t.elapsed().as_nanos() as f64 / N as f64
            })
            .fold(f64::INFINITY, f64::min);
        std::hint::black_box(&stats);
        least
    })
}

/// The cores the process's io_uring kernel threads may run on, from a listing of its threads
/// (`(name, Cpus_allowed_list)`): each such thread names the cores it was allowed.
pub fn io_thread_cores(threads: &[(String, String)]) -> Vec<CoreReason> {
    let mut out = Vec::new();
    for (name, cpus) in threads.iter().filter(|(n, _)| n.starts_with("iou-")) {
        for core in crate::units::parse_core_list(cpus).unwrap_or_default() {
            out.push(CoreReason { core, why: format!("{name} may run here") });
        }
    }
    out
}

/// The cores that took at least 1% of the target devices' interrupts over the run (fewer is a
/// stray admin or timer interrupt, not the I/O path).
pub fn irq_cores(counts: &BTreeMap<usize, (u64, String)>) -> Vec<CoreReason> {
    let total: u64 = counts.values().map(|(n, _)| n).sum();
    counts
        .iter()
        .filter(|(_, (n, _))| *n > 0 && n * 100 >= total)
        .map(|(&core, (n, name))| CoreReason { core, why: format!("{name}: {n} interrupts") })
        .collect()
}

/// This process's threads now, as `(name, Cpus_allowed_list)`.
pub fn process_threads() -> Vec<(String, String)> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else { return Vec::new() };
    dir.flatten()
        .filter_map(|e| {
            let p = e.path();
            let name = std::fs::read_to_string(p.join("comm")).ok()?.trim().to_string();
            let status = std::fs::read_to_string(p.join("status")).ok()?;
            let cpus = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?.trim().to_string();
            Some((name, cpus))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticks(user: u64, system: u64, idle: u64, irq: u64, softirq: u64) -> CoreTicks {
        CoreTicks { user, system, idle, irq, softirq, ..CoreTicks::default() }
    }

    fn window(
        start: u64,
        end: u64,
        user: u64,
        sys: u64,
        a: Vec<(usize, CoreTicks)>,
        b: Vec<(usize, CoreTicks)>,
    ) -> CpuWindow {
        CpuWindow {
            start_ns: start,
            end_ns: end,
            user_ns: user,
            sys_ns: sys,
            cores_start: Some(a),
            cores_end: Some(b),
            ..CpuWindow::default()
        }
    }

    /// Two workers on cores 0 and 1 over overlapping windows, core 2 counted for an SQPOLL thread:
    /// the run's window is the first start to the last end, each core's ticks become ns, busy
    /// leaves out idle, iowait and steal, and the per-I/O figures divide by every I/O.
    #[test]
    fn windows_add_up_to_the_run() {
        let t0 = vec![(0, ticks(100, 50, 1000, 0, 0)), (1, ticks(10, 10, 1000, 0, 0)), (2, ticks(0, 0, 0, 0, 0))];
        let t1 = vec![(0, ticks(150, 100, 1000, 5, 5)), (1, ticks(20, 40, 1010, 0, 0)), (2, ticks(0, 30, 70, 0, 0))];
        let t1b = vec![(0, ticks(160, 110, 1000, 5, 5)), (1, ticks(20, 50, 1020, 0, 0)), (2, ticks(0, 40, 80, 0, 0))];
        let w0 = window(1_000_000_000, 2_000_000_000, 400_000_000, 500_000_000, t0.clone(), t1);
        // The second worker starts later (same start counters, for simplicity) and ends last.
        let w1 = window(1_100_000_000, 2_100_000_000, 100_000_000, 300_000_000, t0, t1b);
        let ws = [
            WorkerWindow { worker: 0, core: Some(0), window: &w0, ios: 1000 },
            WorkerWindow { worker: 1, core: Some(1), window: &w1, ios: 3000 },
        ];
        let extra = [CoreReason { core: 2, why: "iou-sqp-7 may run here".into() }];
        let c = run_cost(&ws, &extra, 10_000_000).unwrap();
        assert_eq!(c.window_ns, 1_100_000_000);
        assert_eq!(c.ios, 4000);
        assert_eq!((c.threads.user_ns, c.threads.sys_ns), (500_000_000, 800_000_000));
        assert!((c.threads.cores_used - 1.3 / 1.1).abs() < 1e-9);
        assert_eq!(c.threads.ns_per_io, Some(1.3e9 / 4000.0));
        // Core 0 from w0's start to w1's end: 60 user + 60 system + 5 irq + 5 softirq ticks.
        let cores = c.cores.as_ref().unwrap();
        let core0 = &cores.counted[0];
        assert_eq!((core0.core, core0.busy_ns, core0.irq_ns), (0, 1_300_000_000, 50_000_000));
        assert_eq!(core0.why, ["worker 0"]);
        assert_eq!(cores.counted[1].busy_ns, 500_000_000);
        assert_eq!(cores.counted[1].idle_ns, 200_000_000);
        assert_eq!(
            (cores.counted[2].busy_ns, &cores.counted[2].why[..]),
            (400_000_000, &["iou-sqp-7 may run here".to_string()][..])
        );
        assert_eq!(cores.busy_ns, 2_200_000_000);
        assert!((cores.cores_used - 2.2 / 1.1).abs() < 1e-9);
        assert_eq!(cores.ns_per_io, Some(2.2e9 / 4000.0));
        assert_eq!(c.cores_used(), cores.cores_used);
        // Per worker: its own core over its own window.
        assert_eq!(c.workers[0].core_busy_ns, Some(1_100_000_000));
        assert_eq!(c.workers[0].core_used, Some(1.1));
        assert_eq!(c.workers[1].core_busy_ns, Some(500_000_000));
        assert!((c.workers[1].cores_used - 0.4).abs() < 1e-9);
        assert_eq!(c.workers[1].ns_per_io, Some(4e8 / 3000.0));
    }

    #[test]
    fn without_core_counters_the_threads_are_the_headline() {
        let w = CpuWindow { start_ns: 0, end_ns: 2_000, user_ns: 500, sys_ns: 500, ..CpuWindow::default() };
        let c = run_cost(&[WorkerWindow { worker: 0, core: Some(3), window: &w, ios: 0 }], &[], 10_000_000).unwrap();
        assert!(c.cores.is_none());
        assert_eq!(c.cores_used(), 0.5);
        assert_eq!(c.ns_per_io(), None);
        assert_eq!(c.workers[0].core_busy_ns, None);
        assert!(run_cost(&[], &[], 10_000_000).is_none());
        // Timing: 20 ns per I/O over 0 I/Os is no share; stamped runs get one, unstamped none.
        let t = c.clone().with_timing(20.0, true).timing.unwrap();
        assert_eq!((t.ns_per_io, t.share_of_worker_time), (20.0, Some(0.0)));
        assert_eq!(c.with_timing(20.0, false).timing.unwrap().share_of_worker_time, None);
    }

    #[test]
    fn stamping_costs_something_and_little() {
        let ns = stamp_cost_ns(&crate::clock::Clock::new());
        // Two clock reads and a record: above a nanosecond, far below a microsecond on any CPU
        // this runs on (debug builds included).
        assert!(ns > 1.0 && ns < 2_000.0, "{ns}");
    }

    #[test]
    fn a_core_missing_from_a_reading_is_not_counted_and_counters_never_go_negative() {
        let a = vec![(0, ticks(10, 10, 0, 0, 0))];
        let b = vec![(0, ticks(5, 20, 0, 0, 0)), (5, ticks(9, 9, 9, 0, 0))];
        let w = window(0, 1_000, 0, 0, a, b);
        let c = run_cost(
            &[WorkerWindow { worker: 0, core: Some(0), window: &w, ios: 1 }],
            &[CoreReason { core: 5, why: "x".into() }],
            1,
        )
        .unwrap();
        let cores = c.cores.unwrap();
        assert_eq!(cores.counted.len(), 1);
        assert_eq!((cores.counted[0].user_ns, cores.counted[0].system_ns), (0, 10));
    }

    #[test]
    fn proc_stat_lines_parse_and_short_ones_are_skipped() {
        let text = "cpu  1 2 3 4 5 6 7 8 0 0\ncpu0 10 0 20 30 1 2 3 4 0 0\ncpu1 1 2 3\ncpu12 5 6 7 8 9 10 11 12 13 14\nintr 1 2\n";
        let v = crate::cpu::parse_proc_stat(text);
        assert_eq!(v.len(), 2);
        assert_eq!(
            v[0],
            (0, CoreTicks { user: 10, nice: 0, system: 20, idle: 30, iowait: 1, irq: 2, softirq: 3, steal: 4 })
        );
        assert_eq!(v[1].0, 12);
        assert_eq!(v[1].1.busy(), 5 + 6 + 7 + 10 + 11);
    }

    const INTERRUPTS: &str = "           CPU0       CPU1       \n \
        36:          0     189497 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n \
        40:         12       4000 PCI-MSIX-0000:00:10.0   1-edge      nvme0q1\n \
        41:         30          0 PCI-MSI 524289-edge      nvme1q2\n \
        42:          1          0 PCI-MSIX-0000:00:10.0   0-edge      vfio-msix[0](0000:00:10.0)\n\
        LOC:     226716     240057   Local timer interrupts\n";

    #[test]
    fn device_interrupts_are_counted_per_core_and_stray_ones_leave_a_core_out() {
        let before = Interrupts::parse(INTERRUPTS);
        assert_eq!(before.cpus, [0, 1]);
        assert_eq!(
            before.lines[0],
            ("36".into(), vec![0, 189497], "PCI-MSIX-0000:00:02.0 1-edge virtio1-req.0".into())
        );
        let after =
            Interrupts::parse(&INTERRUPTS.replace("4000", "9000").replace("  12 ", "  13 ").replace("  30 ", "  99 "));
        let mut dev = DeviceIrqs::default();
        dev.add_trid("trtype:PCIe traddr:0000:00:10.0");
        let per = after.device_counts_since(&before, &dev);
        assert_eq!(per.get(&1), Some(&(5000, "nvme0q1".to_string())));
        assert_eq!(per.get(&0), Some(&(1, "nvme0q1".to_string())));
        // One interrupt on core 0 against 5000 on core 1: core 1 only.
        let cores = irq_cores(&per);
        assert_eq!(cores, [CoreReason { core: 1, why: "nvme0q1: 5000 interrupts".into() }]);
        // By controller name, where the line carries no address.
        let by_name = DeviceIrqs { functions: vec![], controllers: vec!["nvme1".into()] };
        assert_eq!(after.device_counts_since(&before, &by_name).get(&0), Some(&(69, "nvme1q2".to_string())));
        assert!(!by_name.matches("nvme10q1") && !by_name.matches("nvme1q") && by_name.matches("x nvme1q0"));
    }

    #[test]
    fn devices_are_found_from_sysfs_paths_and_transport_ids() {
        let mut d = DeviceIrqs::default();
        d.add_sysfs_path(Path::new("/sys/devices/pci0000:00/0000:00:10.0/nvme/nvme0/nvme0n1"));
        d.add_sysfs_path(Path::new("/sys/devices/pci0000:00/0000:00:10.0/nvme/nvme0/ng0n1"));
        assert_eq!(d, DeviceIrqs { functions: vec!["0000:00:10.0".into()], controllers: vec!["nvme0".into()] });
        let mut t = DeviceIrqs::default();
        t.add_trid("trtype:PCIe traddr:00:11.0");
        t.add_trid("trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:4420");
        t.add_trid("trtype:vfio-user traddr:/var/run/vfu");
        assert_eq!(t.functions, ["0000:00:11.0"]);
        assert!(t.controllers.is_empty());
        assert!(!is_pci_address("0000:00:10") && is_pci_address("0000:af:00.1"));
    }

    #[test]
    fn io_threads_name_their_cores() {
        let threads = vec![
            ("nvmebench".to_string(), "0-1".to_string()),
            ("iou-sqp-77".to_string(), "1".to_string()),
            ("nvmebench-w0".to_string(), "0".to_string()),
        ];
        assert_eq!(io_thread_cores(&threads), [CoreReason { core: 1, why: "iou-sqp-77 may run here".into() }]);
    }
}

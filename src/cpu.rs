//! CPU time, for "CPU per I/O" figures: of the whole process (every thread, kernel threads of its
//! io_uring rings included: `getrusage(RUSAGE_SELF)`), of one thread (`getrusage(RUSAGE_THREAD)`,
//! user and system apart), and of each core as the kernel books it in `/proc/stat` (user, system,
//! interrupts, softirqs: whatever ran there, whoever it ran for). Workers read their thread's and
//! the cores' counters when their measurement starts and ends ([`CpuProbe`]); what the readings
//! add up to is `crate::cost`'s business.

use serde::Serialize;
use std::time::Duration;

/// User and system CPU time consumed so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTimes {
    pub user: Duration,
    pub system: Duration,
}

impl CpuTimes {
    /// The process's CPU time so far; zero if the kernel refuses (it does not for RUSAGE_SELF).
    pub fn now() -> CpuTimes {
        use nix::sys::resource::{UsageWho, getrusage};
        use nix::sys::time::TimeValLike;
        let Ok(ru) = getrusage(UsageWho::RUSAGE_SELF) else { return CpuTimes::default() };
        let tv = |t: nix::sys::time::TimeVal| Duration::from_micros(t.num_microseconds().max(0) as u64);
        CpuTimes { user: tv(ru.user_time()), system: tv(ru.system_time()) }
    }

    /// What was used between `earlier` and `self`.
    pub fn since(self, earlier: CpuTimes) -> CpuTimes {
        CpuTimes { user: self.user.saturating_sub(earlier.user), system: self.system.saturating_sub(earlier.system) }
    }
}

/// The calling thread's CPU time so far, in nanoseconds (user and system); zero if the kernel
/// refuses (it does not for the calling thread).
pub fn thread_cpu_ns() -> u64 {
    use nix::time::{ClockId, clock_gettime};
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(|t| t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
        .unwrap_or(0)
}

/// The calling thread's user and system CPU time so far (`getrusage(RUSAGE_THREAD)`: microseconds,
/// the kernel's split of the thread's exact run time); zero if the kernel refuses (it does not).
pub fn thread_times() -> CpuTimes {
    thread_usage().0
}

/// What fio counts per thread besides CPU time (`getrusage(RUSAGE_THREAD)`, as fio's `ctx`, `majf`
/// and `minf`): context switches, voluntary and not, and page faults that did and did not read
/// from storage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ThreadCounts {
    pub ctx: u64,
    pub majf: u64,
    pub minf: u64,
}

impl ThreadCounts {
    /// What was counted between `earlier` and `self`.
    pub fn since(self, earlier: ThreadCounts) -> ThreadCounts {
        ThreadCounts {
            ctx: self.ctx.saturating_sub(earlier.ctx),
            majf: self.majf.saturating_sub(earlier.majf),
            minf: self.minf.saturating_sub(earlier.minf),
        }
    }
}

impl std::ops::AddAssign for ThreadCounts {
    fn add_assign(&mut self, o: ThreadCounts) {
        self.ctx += o.ctx;
        self.majf += o.majf;
        self.minf += o.minf;
    }
}

/// The calling thread's CPU time and [`ThreadCounts`] so far, from one `getrusage(RUSAGE_THREAD)`;
/// zero if the kernel refuses (it does not for the calling thread).
pub fn thread_usage() -> (CpuTimes, ThreadCounts) {
    use nix::sys::resource::{UsageWho, getrusage};
    use nix::sys::time::TimeValLike;
    let Ok(ru) = getrusage(UsageWho::RUSAGE_THREAD) else { return Default::default() };
    let tv = |t: nix::sys::time::TimeVal| Duration::from_micros(t.num_microseconds().max(0) as u64);
    let n = |v: libc::c_long| v.max(0) as u64;
    let counts = ThreadCounts {
        ctx: n(ru.voluntary_context_switches()) + n(ru.involuntary_context_switches()),
        majf: n(ru.major_page_faults()),
        minf: n(ru.minor_page_faults()),
    };
    (CpuTimes { user: tv(ru.user_time()), system: tv(ru.system_time()) }, counts)
}

/// One core's counters in `/proc/stat`, in the kernel's clock ticks (`USER_HZ`, see [`tick_ns`]).
/// `user` includes the time of guests run on the core, as the kernel counts it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CoreTicks {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    /// Time a hypervisor ran something else while this (virtual) core wanted to run.
    pub steal: u64,
}

impl CoreTicks {
    /// Ticks the core spent running anything: user, nice, system, interrupts and softirqs (not
    /// idle, iowait or steal).
    pub fn busy(&self) -> u64 {
        self.user + self.nice + self.system + self.irq + self.softirq
    }

    /// What was counted between `earlier` and `self` (a counter that went back counts 0).
    pub fn since(&self, earlier: &CoreTicks) -> CoreTicks {
        CoreTicks {
            user: self.user.saturating_sub(earlier.user),
            nice: self.nice.saturating_sub(earlier.nice),
            system: self.system.saturating_sub(earlier.system),
            idle: self.idle.saturating_sub(earlier.idle),
            iowait: self.iowait.saturating_sub(earlier.iowait),
            irq: self.irq.saturating_sub(earlier.irq),
            softirq: self.softirq.saturating_sub(earlier.softirq),
            steal: self.steal.saturating_sub(earlier.steal),
        }
    }
}

/// Nanoseconds per `/proc/stat` tick (`sysconf(_SC_CLK_TCK)`, 100 per second on Linux).
pub fn tick_ns() -> u64 {
    use nix::unistd::{SysconfVar, sysconf};
    match sysconf(SysconfVar::CLK_TCK) {
        Ok(Some(hz)) if hz > 0 => 1_000_000_000 / hz as u64,
        // USER_HZ, which the kernel's /proc/stat is written in on every architecture Linux runs
        // nvmebench on.
        _ => 10_000_000,
    }
}

/// Every core's line of a `/proc/stat` text (`cpuN user nice system idle iowait irq softirq steal
/// ...`), in the file's order; the summary line (`cpu `) and everything else are skipped, and so is
/// a line cut short (a snapshot whose buffer ended inside it).
pub fn parse_proc_stat(text: &str) -> Vec<(usize, CoreTicks)> {
    let mut out = Vec::new();
    for line in text.lines() {
        // `cpu0 ...`, not the summary line `cpu  ...`.
        let Some(rest) = line.strip_prefix("cpu").filter(|r| r.starts_with(|c: char| c.is_ascii_digit())) else {
            continue;
        };
        let mut f = rest.split_ascii_whitespace();
        let Some(Ok(core)) = f.next().map(str::parse::<usize>) else { continue };
        let v: Vec<u64> = f.take(8).map_while(|x| x.parse().ok()).collect();
        // Kernels since 2.6.33 write at least eight values.
        let [user, nice, system, idle, iowait, irq, softirq, steal] = v[..] else { continue };
        out.push((core, CoreTicks { user, nice, system, idle, iowait, irq, softirq, steal }));
    }
    out
}

/// A worker's two readings of its CPU counters, at the start and the end of its measured window:
/// its thread's user and system time and every core's `/proc/stat` line. The start reading is one
/// `getrusage` and one read of `/proc/stat` into a buffer sized before the run (no allocation, no
/// parsing); everything else happens at the end, after the measurement.
#[derive(Debug)]
pub struct CpuProbe {
    start_ns: u64,
    start_thread: CpuTimes,
    start_counts: ThreadCounts,
    /// The raw text of `/proc/stat` at the start.
    start_stat: Vec<u8>,
    started: bool,
}

/// What a [`CpuProbe`] saw over one worker's window.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CpuWindow {
    /// The readings' times, in ns on the run's timeline (since the start gate opened).
    pub start_ns: u64,
    pub end_ns: u64,
    /// The worker thread's CPU time between the readings.
    pub user_ns: u64,
    pub sys_ns: u64,
    /// The worker thread's context switches and page faults between the readings.
    pub counts: ThreadCounts,
    /// Every core's counters at each reading (`None`: `/proc/stat` could not be read).
    pub cores_start: Option<Vec<(usize, CoreTicks)>>,
    pub cores_end: Option<Vec<(usize, CoreTicks)>>,
}

impl CpuWindow {
    pub fn span_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// Room for `/proc/stat`'s core lines: the file's size now, twice over (counters grow digits), and
/// a page more.
fn stat_capacity() -> usize {
    std::fs::read("/proc/stat").map_or(0, |b| b.len()) * 2 + 4096
}

/// Reads the head of `/proc/stat` into `buf` (cleared first) without growing it: the core lines
/// come first, and the rest (interrupt counts per IRQ, thousands of them on a large machine) is cut
/// off where the buffer ends. False if the file cannot be read.
fn read_stat_into(buf: &mut Vec<u8>) -> bool {
    use std::io::Read;
    buf.clear();
    let Ok(mut f) = std::fs::File::open("/proc/stat") else { return false };
    let cap = buf.capacity();
    buf.resize(cap, 0);
    let mut n = 0;
    while n < cap {
        match f.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => {
                buf.clear();
                return false;
            }
        }
    }
    buf.truncate(n);
    true
}

impl Default for CpuProbe {
    fn default() -> Self {
        CpuProbe::new()
    }
}

impl CpuProbe {
    /// A probe with its buffer sized; call before the run (it reads `/proc/stat` once to size it).
    pub fn new() -> CpuProbe {
        CpuProbe {
            start_ns: 0,
            start_thread: CpuTimes::default(),
            start_counts: ThreadCounts::default(),
            start_stat: Vec::with_capacity(stat_capacity()),
            started: false,
        }
    }

    /// The start reading, at `now_ns` on the run's timeline.
    pub fn start(&mut self, now_ns: u64) {
        self.start_ns = now_ns;
        // A failed read leaves the buffer empty: the window then has no core counters.
        read_stat_into(&mut self.start_stat);
        // The thread's time last: the read above is the window's, not before it.
        (self.start_thread, self.start_counts) = thread_usage();
        self.started = true;
    }

    /// The end reading, at `now_ns`, and the window; `None` if the window never started.
    pub fn end(&self, now_ns: u64) -> Option<CpuWindow> {
        if !self.started {
            return None;
        }
        let (times, counts) = thread_usage();
        let used = times.since(self.start_thread);
        let mut buf = Vec::with_capacity(self.start_stat.capacity());
        let have_end = read_stat_into(&mut buf);
        let parse = |b: &[u8]| Some(parse_proc_stat(std::str::from_utf8(b).ok()?)).filter(|v| !v.is_empty());
        Some(CpuWindow {
            start_ns: self.start_ns,
            end_ns: now_ns.max(self.start_ns),
            user_ns: used.user.as_nanos() as u64,
            sys_ns: used.system.as_nanos() as u64,
            counts: counts.since(self.start_counts),
            cores_start: parse(&self.start_stat),
            cores_end: if have_end { parse(&buf) } else { None },
        })
    }
}

/// CPU used by a run, and the I/Os it completed in that time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct CpuUsage {
    pub user_ns: u64,
    pub sys_ns: u64,
    /// I/Os completed while the time was counted (ramp included, errors included).
    pub ios: u64,
}

impl CpuUsage {
    pub fn new(t: CpuTimes, ios: u64) -> CpuUsage {
        CpuUsage { user_ns: t.user.as_nanos() as u64, sys_ns: t.system.as_nanos() as u64, ios }
    }

    /// User plus system nanoseconds per I/O; `None` without I/Os.
    pub fn ns_per_io(&self) -> Option<f64> {
        (self.ios > 0).then(|| (self.user_ns + self.sys_ns) as f64 / self.ios as f64)
    }
}

/// The cores this process may run on, as they were the first time anyone asked (before SPDK's
/// environment pinned the main thread to its main core). Sorted; empty only if the kernel refuses
/// to say.
pub fn allowed_cores() -> &'static [usize] {
    static ALLOWED: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();
    ALLOWED.get_or_init(|| {
        let mut cores: Vec<usize> =
            core_affinity::get_core_ids().unwrap_or_default().into_iter().map(|c| c.id).collect();
        cores.sort_unstable();
        cores
    })
}

/// Where the threads of a run ended up: the workers on their cores, every other thread of the
/// process (the coordinator, SPDK's admin poller, DPDK's threads, progress) on the cores left.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Placement {
    /// The cores the other threads were given: the allowed cores minus the workers', or all of
    /// them when the workers take every core.
    pub housekeeping_cores: Vec<usize>,
    /// False when no core was free of workers, so other threads share the workers' cores.
    pub workers_alone: bool,
    /// Every thread of the process after the move, as `/proc/self/task` shows it.
    pub threads: Vec<ThreadPlacement>,
}

/// One thread and the cores it may run on.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThreadPlacement {
    pub tid: i32,
    pub name: String,
    /// `Cpus_allowed_list`, as the kernel writes it (`0-3,8`).
    pub cpus: String,
    pub worker: bool,
}

/// Moves every thread of the process that is not in `worker_tids` off `worker_cores` (SPDK perf's
/// `spdk_unaffinitize_thread`, made stricter: not just unpinned, kept away from the workers), and
/// reports where every thread now may run. Threads started later inherit the mask of the thread
/// that starts them, which is the coordinator's, so they stay off too.
pub fn keep_others_off(worker_tids: &[i32], worker_cores: &[usize]) -> Placement {
    use nix::sched::{CpuSet, sched_setaffinity};
    use nix::unistd::Pid;
    let allowed = allowed_cores();
    let free: Vec<usize> = allowed.iter().copied().filter(|c| !worker_cores.contains(c)).collect();
    let workers_alone = !free.is_empty();
    let housekeeping = if workers_alone { free } else { allowed.to_vec() };
    let mut set = CpuSet::new();
    for &c in &housekeeping {
        // A core number beyond CpuSet's capacity cannot be pinned to; it is skipped.
        let _ = set.set(c);
    }
    let tids = task_ids();
    for &tid in tids.iter().filter(|t| !worker_tids.contains(t)) {
        // A thread that ended meanwhile cannot be moved, and needs not be.
        let _ = sched_setaffinity(Pid::from_raw(tid), &set);
    }
    let threads = tids
        .into_iter()
        .filter_map(|tid| {
            let dir = format!("/proc/self/task/{tid}");
            let name = std::fs::read_to_string(format!("{dir}/comm")).ok()?.trim().to_string();
            let status = std::fs::read_to_string(format!("{dir}/status")).ok()?;
            let cpus = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?.trim().to_string();
            Some(ThreadPlacement { tid, name, cpus, worker: worker_tids.contains(&tid) })
        })
        .collect();
    Placement { housekeeping_cores: housekeeping, workers_alone, threads }
}

/// The kernel ids of this process's threads.
fn task_ids() -> Vec<i32> {
    let mut ids: Vec<i32> = std::fs::read_dir("/proc/self/task")
        .map(|d| d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect())
        .unwrap_or_default();
    ids.sort_unstable();
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_work_shows_up_as_user_time() {
        // Spin until the process has been charged 20 ms of CPU: on a loaded machine that takes
        // longer in wall time, but it must happen (within a generous bound) if the counter works.
        let t0 = CpuTimes::now();
        let mut x = 1u64;
        let start = std::time::Instant::now();
        let used = loop {
            for _ in 0..100_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
            let used = CpuTimes::now().since(t0);
            if used.user + used.system >= Duration::from_millis(20) {
                break used;
            }
            assert!(start.elapsed() < Duration::from_secs(30), "no CPU time charged after 30 s: {used:?}");
        };
        std::hint::black_box(x);
        let u = CpuUsage::new(used, 10);
        assert!(u.ns_per_io().unwrap() >= 2e6);
        assert_eq!(CpuUsage::default().ns_per_io(), None);
    }

    #[test]
    fn thread_cpu_time_counts_this_thread_only() {
        let t0 = thread_cpu_ns();
        let mut x = 1u64;
        while thread_cpu_ns() - t0 < 5_000_000 {
            x = std::hint::black_box(x.wrapping_mul(3).wrapping_add(1));
        }
        // Another thread sleeping for 50 ms is charged (almost) nothing.
        let idle = std::thread::spawn(|| {
            let t = thread_cpu_ns();
            std::thread::sleep(Duration::from_millis(50));
            thread_cpu_ns() - t
        });
        assert!(idle.join().unwrap() < 5_000_000);
    }

    #[test]
    fn other_threads_leave_the_worker_cores_when_a_core_is_free() {
        let allowed = allowed_cores().to_vec();
        if allowed.len() < 2 {
            crate::skip::skip(crate::skip::Need::SpareCore, "one core only, no core to keep free of workers");
            return;
        }
        // A "worker" on the first core and a helper thread that must move off it.
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
        let helper = std::thread::spawn(move || {
            tx.send(nix::unistd::gettid().as_raw()).unwrap();
            let _ = stop_rx.recv();
        });
        let helper_tid = rx.recv().unwrap();
        let me = nix::unistd::gettid().as_raw();
        let p = keep_others_off(&[me], &allowed[..1]);
        assert!(p.workers_alone);
        assert_eq!(p.housekeeping_cores, allowed[1..].to_vec());
        let helper_cpus = &p.threads.iter().find(|t| t.tid == helper_tid).expect("the helper is listed").cpus;
        let listed = crate::units::parse_core_list(helper_cpus).unwrap();
        assert!(!listed.contains(&allowed[0]), "helper still allowed on the worker core: {helper_cpus}");
        assert!(p.threads.iter().any(|t| t.tid == me && t.worker));
        stop_tx.send(()).unwrap();
        helper.join().unwrap();
        // Other tests run in this process: give every thread all cores back.
        let _ = keep_others_off(&[], &[]);
    }
}

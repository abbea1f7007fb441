//! Refusals of one option, found when the run is resolved against the machine and the target: a
//! block size the target's logical blocks do not divide, an alignment of 0, a core that does not
//! exist, polled completions on a disk without poll queues. They are typed for the reason
//! [`Clash`](super::clash::Clash) is: the command line names `run`'s flags (`--bs 1000`), and a fio
//! job file names the option as written, at its line (`bs=1000`, `hipri`).
//!
//! The checks stay in `config`; this module only says which option each refusal is about and words
//! it through a [`Naming`]. Options are named by `run`'s long flag (`bs`, `start-delay`); an option
//! inside the engine spec by `engine:KEY` (`engine:poll`, `engine:sqpoll_cpu`).

use super::clash::Naming;

/// One option whose value cannot run here.
#[derive(Clone, Debug, PartialEq)]
pub enum Fault {
    /// A size (`option`: `bs`, `bssplit`, `align` or `offset`) that is not a whole number of
    /// logical blocks of `path`, which O_DIRECT needs; `value` is the size at fault (one of several
    /// block sizes, or what a percentage resolved to).
    NotBlockMultiple { option: &'static str, value: String, path: String, lbs: u64 },
    /// `option`'s value is refused; `message` says why and what to write instead, without naming
    /// the option.
    Invalid { option: &'static str, message: String },
    /// A core of the worker list that does not exist or that this process may not run on.
    NoSuchCore { core: usize, allowed: String },
    /// The engine `spec`'s `sqpoll_cpu` is not a core number.
    SqpollCpuNotACore { spec: String, value: String },
    /// The engine `spec`'s `sqpoll_cpu` names a core that does not exist or is not allowed.
    SqpollCpuNoSuchCore { spec: String, core: usize, allowed: String },
    /// Polled completions (`poll` in the engine `spec`) on `path`, whose disk has no poll queues:
    /// sysfs's `queue` says 0. `nvme`: the disk is an NVMe namespace (the driver can be given poll
    /// queues); otherwise `disk` cannot poll at all.
    CannotPoll { spec: String, path: String, queue: String, disk: String, nvme: bool },
    /// The engine `spec` runs on NVMe generic devices only, and `path` is not one; `generic` is the
    /// generic device of the same namespace, when there is one.
    NotGenericDevice { spec: String, path: String, generic: Option<String> },
    /// `path` is an NVMe generic device, which takes passthrough commands only, and the engine
    /// `spec` sends none; `block` is the namespace's block device, when there is one.
    GenericDevice { spec: String, path: String, block: Option<String> },
    /// The engine `spec` cannot drive `path`; `problem` says why and what to do, naming no option.
    EngineTarget { spec: String, path: String, problem: String },
    /// A target that does not exist, and no size to create it at.
    Missing { path: String },
    /// The same target twice (`again` reaches the data of `first`).
    SameTargetTwice { first: String, again: String },
    /// No target, and no directory for a scratch file (`tried`, listed) takes O_DIRECT.
    NoScratchDir { tried: String },
}

impl Fault {
    /// The option at fault (a job file points at its line).
    pub fn option(&self) -> &str {
        match self {
            Fault::NotBlockMultiple { option, .. } | Fault::Invalid { option, .. } => option,
            Fault::NoSuchCore { .. } => "cores",
            Fault::SqpollCpuNotACore { .. } | Fault::SqpollCpuNoSuchCore { .. } => "engine:sqpoll_cpu",
            Fault::CannotPoll { .. } => "engine:poll",
            Fault::NotGenericDevice { .. } | Fault::GenericDevice { .. } | Fault::EngineTarget { .. } => "engine",
            Fault::Missing { .. } | Fault::SameTargetTwice { .. } | Fault::NoScratchDir { .. } => "filename",
        }
    }

    /// The option to point at when the one at fault is written nowhere (an engine that is fio's
    /// default is placed by its target).
    pub fn fallback(&self) -> Option<&str> {
        match self {
            Fault::CannotPoll { .. }
            | Fault::NotGenericDevice { .. }
            | Fault::GenericDevice { .. }
            | Fault::EngineTarget { .. } => Some("filename"),
            _ => None,
        }
    }

    /// The refusal in one sentence, with the fix, naming the options as `n` does.
    pub fn message(&self, n: &dyn Naming) -> String {
        match self {
            Fault::NotBlockMultiple { option, value, path, lbs } => format!(
                "{} is not a multiple of {path}'s logical block size ({lbs} bytes), which O_DIRECT requires; use a multiple of {lbs}",
                n.given_part(option, value)
            ),
            Fault::Invalid { option, message } => format!("{}: {message}", n.named(option)),
            Fault::NoSuchCore { core, allowed } => no_such_core(*core, allowed),
            Fault::SqpollCpuNotACore { spec, value } => format!(
                "{} is not a core number; write {} with N a core",
                n.engine_given(spec, "sqpoll_cpu", Some(value)),
                n.engine_setting("sqpoll_cpu", "N")
            ),
            Fault::SqpollCpuNoSuchCore { spec, core, allowed } => {
                format!("{}: {}", n.engine_given(spec, "sqpoll_cpu", None), no_such_core(*core, allowed))
            }
            Fault::CannotPoll { spec, path, queue, disk, nvme } => {
                let how = if *nvme {
                    "the nvme driver has no poll queues; load it with some (nvme.poll_queues=2 on the kernel \
                     command line, or `options nvme poll_queues=2` in /etc/modprobe.d and reload nvme), or"
                        .to_string()
                } else {
                    format!("{disk} cannot complete I/O by polling (only NVMe with poll queues can);")
                };
                format!(
                    "{} on {path}: polled completions need poll queues, and {queue} is 0: {how} drop {}",
                    n.given("engine", spec),
                    n.engine_option("poll")
                )
            }
            Fault::NotGenericDevice { spec, path, generic } => {
                let hint = match generic {
                    Some(ng) => format!("use {ng}, the generic device of this namespace"),
                    None => "give it /dev/ngXnY, an NVMe namespace's generic character device".into(),
                };
                format!(
                    "{} on {path}: uring-cmd sends NVMe commands and runs only on an NVMe generic device; {hint}",
                    n.given("engine", spec)
                )
            }
            Fault::GenericDevice { spec, path, block } => {
                let instead = match block {
                    Some(b) => format!("{b} (the namespace's block device)"),
                    None => "the namespace's block device".into(),
                };
                format!(
                    "{} on {path}: an NVMe generic device takes only passthrough commands; use {instead} or {}",
                    n.given("engine", spec),
                    n.setting("engine", "uring-cmd")
                )
            }
            Fault::EngineTarget { spec, path, problem } => format!("{} on {path}: {problem}", n.given("engine", spec)),
            Fault::Missing { path } => format!(
                "{path} does not exist; create it, or add {} to have nvmebench create a file of that size",
                n.option("size")
            ),
            Fault::NoScratchDir { tried } => format!(
                "no directory for the scratch file supports O_DIRECT (tried {tried}); pass {} on a disk-backed filesystem",
                n.setting("filename", "FILE")
            ),
            Fault::SameTargetTwice { first, again } => format!(
                "{again} is the same target as {first}; give each file or device once ({})",
                n.several_workers_per_target()
            ),
        }
    }
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message(&super::clash::Flags))
    }
}

impl std::error::Error for Fault {}

/// A core that cannot be used, with the cores that can.
fn no_such_core(core: usize, allowed: &str) -> String {
    format!(
        "core {core} does not exist or is not allowed for this process (allowed: {allowed}); pick cores from that list"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The command line's sentences are the ones `run` always printed.
    #[test]
    fn the_command_line_reads_as_before() {
        let f = Fault::NotBlockMultiple { option: "bs", value: "1000".into(), path: "/f".into(), lbs: 512 };
        assert_eq!(
            f.to_string(),
            "--bs 1000 is not a multiple of /f's logical block size (512 bytes), which O_DIRECT requires; use a multiple of 512"
        );
        let f = Fault::Invalid { option: "align", message: "0 is not an alignment; use a size such as 4k".into() };
        assert_eq!(f.to_string(), "--align: 0 is not an alignment; use a size such as 4k");
        let f = Fault::SqpollCpuNotACore { spec: "uring:sqpoll_cpu=x".into(), value: "x".into() };
        assert_eq!(
            f.to_string(),
            "--engine 'uring:sqpoll_cpu=x': sqpoll_cpu=x is not a core number; write sqpoll_cpu=N with N a core"
        );
        let f = Fault::SqpollCpuNoSuchCore { spec: "uring:sqpoll_cpu=9".into(), core: 9, allowed: "0-1".into() };
        assert_eq!(
            f.to_string(),
            "--engine 'uring:sqpoll_cpu=9': sqpoll_cpu: core 9 does not exist or is not allowed for this process (allowed: 0-1); pick cores from that list"
        );
        let poll = |nvme: bool| Fault::CannotPoll {
            spec: "uring:poll".into(),
            path: "/f".into(),
            queue: "/sys/block/vda/queue/io_poll".into(),
            disk: "vda".into(),
            nvme,
        };
        assert_eq!(
            poll(false).to_string(),
            "--engine uring:poll on /f: polled completions need poll queues, and /sys/block/vda/queue/io_poll is 0: vda cannot complete I/O by polling (only NVMe with poll queues can); drop :poll"
        );
        let f = poll(true).to_string();
        assert!(f.ends_with("`options nvme poll_queues=2` in /etc/modprobe.d and reload nvme), or drop :poll"), "{f}");
        let f = Fault::GenericDevice { spec: "aio".into(), path: "/dev/ng0n1".into(), block: None };
        assert_eq!(
            f.to_string(),
            "--engine aio on /dev/ng0n1: an NVMe generic device takes only passthrough commands; use the namespace's block device or --engine uring-cmd"
        );
        assert_eq!(
            Fault::Missing { path: "/x".into() }.to_string(),
            "/x does not exist; create it, or add --size to have nvmebench create a file of that size"
        );
        assert_eq!(
            Fault::NoScratchDir { tried: "/tmp, /var/tmp".into() }.to_string(),
            "no directory for the scratch file supports O_DIRECT (tried /tmp, /var/tmp); pass --filename FILE on a disk-backed filesystem"
        );
        assert_eq!(
            Fault::SameTargetTwice { first: "/a".into(), again: "/b".into() }.to_string(),
            "/b is the same target as /a; give each file or device once (one worker per target is --jobs, several per target --each-worker-all-targets or more --jobs)"
        );
    }

    #[test]
    fn each_fault_names_the_option_a_job_file_points_at() {
        let f = Fault::NotBlockMultiple { option: "offset", value: "1k".into(), path: String::new(), lbs: 4096 };
        assert_eq!((f.option(), f.fallback()), ("offset", None));
        let f = Fault::CannotPoll {
            spec: String::new(),
            path: String::new(),
            queue: String::new(),
            disk: String::new(),
            nvme: true,
        };
        assert_eq!((f.option(), f.fallback()), ("engine:poll", Some("filename")));
        assert_eq!(Fault::NoSuchCore { core: 9, allowed: "0".into() }.option(), "cores");
        assert_eq!(Fault::Missing { path: String::new() }.option(), "filename");
    }
}

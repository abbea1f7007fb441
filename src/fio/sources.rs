//! Which line of a job file each of a job's `run` flags came from, so that a refusal names the
//! options as the file writes them (`rwmixwrite`, not `--rwmixread`; `hipri`, not `:poll`) and
//! points at the line of the one at fault, with the other's line in the sentence when there are two.
//!
//! What the refusals are is `config::clash`'s (two options) and `config::fault`'s (one); this module
//! only names and places them. The options of the engine spec are kept as `engine:KEY`
//! (`engine:poll` for `hipri`).

use super::FioError;
use super::ini::{Entry, Origin};
use super::options::{fio_engine_name, fio_engine_option, fio_name, is_fio_option, trid_as_filename};
use crate::config::clash::{Clash, Flags, Naming};
use crate::config::fault::Fault;

/// Where a flag's value came from.
#[derive(Clone, Debug, PartialEq)]
enum Place {
    /// A line of the job file.
    Line(Origin),
    /// fio's default, which the translation filled in.
    FioDefault,
    /// The command line, which replaces the job file's (`--engine`, the SPDK flags).
    CommandLine,
}

/// One flag's origin.
#[derive(Clone, Debug, PartialEq)]
struct Source {
    /// `run`'s long flag name, without dashes (`qd`, `thinktime-spin`).
    flag: String,
    /// The option as written (`iodepth`, `--engine`), or fio's word for a default.
    key: String,
    /// The value as written; `None` for a bare flag.
    value: Option<String>,
    place: Place,
    /// Position in reading order ([global] lines first), to tell which of two came later.
    order: usize,
}

impl Source {
    fn at(&self) -> Option<&Origin> {
        match &self.place {
            Place::Line(at) => Some(at),
            _ => None,
        }
    }
}

/// The origins of one job's flags.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sources(Vec<Source>);

impl Sources {
    /// `flag` (`--qd` or `qd`) was set by `entry`, the `order`th option read; it replaces an earlier
    /// setting, as the flag itself does.
    pub fn written(&mut self, flag: &str, entry: &Entry, order: usize) {
        self.put(Source {
            flag: flag.trim_start_matches("--").to_string(),
            key: entry.key.clone(),
            value: entry.value.clone(),
            place: Place::Line(entry.at.clone()),
            order,
        });
    }

    /// `flag` was given fio's default `value`, written nowhere.
    pub fn defaulted(&mut self, flag: &str, value: &str) {
        let flag = flag.trim_start_matches("--");
        let place = Place::FioDefault;
        self.put(Source { flag: flag.into(), key: fio_name(flag), value: Some(value.into()), place, order: 0 });
    }

    /// `flag` is the command line's `value`, whatever the job file says; `None` when the command
    /// line dropped it (its SPDK flags replace the job file's transport ID, given or not). The
    /// command line's engine replaces the job file's with its options (`hipri` and the like).
    pub fn command_line(&mut self, flag: &str, value: Option<&str>) {
        let flag = flag.trim_start_matches("--");
        self.0.retain(|o| o.flag != flag && !(flag == "engine" && o.flag.starts_with("engine:")));
        if let Some(v) = value {
            let key = format!("--{flag}");
            self.put(Source { flag: flag.into(), key, value: Some(v.into()), place: Place::CommandLine, order: 0 });
        }
    }

    fn put(&mut self, s: Source) {
        self.0.retain(|o| o.flag != s.flag);
        self.0.push(s);
    }

    fn get(&self, flag: &str) -> Option<&Source> {
        self.0.iter().find(|s| s.flag == flag)
    }

    /// Where `flag` is written, if it is.
    pub fn at(&self, flag: &str) -> Option<&Origin> {
        self.get(flag).and_then(Source::at)
    }

    /// The option `flag` came from, as written (`rwmixwrite` for `rwmixread`).
    pub fn key(&self, flag: &str) -> String {
        self.get(flag).map_or_else(|| fio_name(flag), |s| s.key.clone())
    }

    /// `clash`, in job `job` (whose header is at `header`), as a job-file refusal: at the line of
    /// the option at fault (for two that merely conflict, the later one), naming both as written.
    pub fn refusal(&self, job: &str, header: &Origin, clash: &Clash) -> FioError {
        let written = |flag: &str| self.get(flag).filter(|s| s.at().is_some());
        let later = match (written(clash.option()), written(clash.other())) {
            (Some(a), Some(b)) => a.order >= b.order,
            (a, _) => a.is_some(),
        };
        let clash = if clash.symmetric() && !later { clash.swapped() } else { clash.clone() };
        let at = self.at(clash.option()).or_else(|| self.at(clash.other()));
        self.placed(job, header, at, |names| clash.message(names))
    }

    /// `fault`, in job `job` (whose header is at `header`), as a job-file refusal: at the line of
    /// the option at fault, naming it as written; at the header when nothing placed it.
    pub fn fault(&self, job: &str, header: &Origin, fault: &Fault) -> FioError {
        let at = self.at(fault.option()).or_else(|| fault.fallback().and_then(|f| self.at(f)));
        self.placed(job, header, at, |names| fault.message(names))
    }

    /// A refusal at `at`, or at the section's header when no line is at fault.
    fn placed(
        &self,
        job: &str,
        header: &Origin,
        at: Option<&Origin>,
        message: impl Fn(&JobNames<'_>) -> String,
    ) -> FioError {
        match at.cloned() {
            Some(at) => {
                let message = message(&JobNames { sources: self, at: &at });
                FioError::Options { at, job: job.into(), message }
            }
            None => {
                let message = message(&JobNames { sources: self, at: header });
                FioError::Section { at: header.clone(), name: job.into(), message }
            }
        }
    }

    /// Whether the run's engine is the command line's (so are its options then).
    fn engine_from_command_line(&self) -> bool {
        self.get("engine").is_some_and(|s| s.place == Place::CommandLine)
    }
}

/// A job's options as its file writes them, in an error that points at `at`: an option on that
/// line is not placed again in the sentence, and another line of the same file is named by its
/// number alone.
pub struct JobNames<'a> {
    pub sources: &'a Sources,
    pub at: &'a Origin,
}

impl JobNames<'_> {
    /// ` (line 3)`, ` (common.fio:3)`, ` (fio's default)`, ` (command line)`, or nothing for the
    /// error's own line.
    fn place(&self, s: &Source) -> String {
        match &s.place {
            Place::Line(at) if at == self.at => String::new(),
            Place::Line(at) if at.file == self.at.file => format!(" (line {})", at.line),
            Place::Line(at) => format!(" ({at})"),
            Place::FioDefault => " (fio's default)".into(),
            Place::CommandLine => " (command line)".into(),
        }
    }
}

impl Naming for JobNames<'_> {
    /// fio's word; a flag fio has no word for is the command line's (the SPDK flags a job-file
    /// run takes from it).
    fn option(&self, flag: &str) -> String {
        let word = fio_name(flag);
        if is_fio_option(&word) { word } else { format!("--{flag}") }
    }

    fn setting(&self, flag: &str, value: &str) -> String {
        match self.option(flag) {
            // A job file names a controller in the SPDK plugin's filename= spelling.
            _ if flag == "trid" => format!("filename={}", trid_as_filename(value.trim_matches('\''))),
            // And an engine by fio's name (io_uring_cmd, not uring-cmd).
            word if flag == "engine" => format!("{word}={}", fio_engine_name(value)),
            word if word.starts_with("--") => format!("{word} {value}"),
            word => format!("{word}={value}"),
        }
    }

    fn given(&self, flag: &str, shown: &str) -> String {
        match self.sources.get(flag) {
            Some(s) => {
                let written = s.value.as_ref().map_or_else(|| s.key.clone(), |v| format!("{}={v}", s.key));
                format!("{written}{}", self.place(s))
            }
            None => self.setting(flag, shown),
        }
    }

    fn named(&self, flag: &str) -> String {
        match self.sources.get(flag).filter(|s| s.place != Place::FioDefault) {
            Some(_) => self.given(flag, ""),
            None => self.option(flag),
        }
    }

    fn given_part(&self, flag: &str, part: &str) -> String {
        let size = |t: &str| crate::units::parse_size(t).ok();
        match self.sources.get(flag).and_then(|s| s.value.as_deref()) {
            Some(v) if v == part || (size(v).is_some() && size(v) == size(part)) => self.given(flag, part),
            Some(_) => format!("{}: {part}", self.given(flag, part)),
            None => self.setting(flag, part),
        }
    }

    /// The fio option that set it, as written; the command line's words when the command line's
    /// engine (and so its options) replaced the job file's.
    fn engine_given(&self, spec: &str, key: &str, value: Option<&str>) -> String {
        let flag = format!("engine:{key}");
        match self.sources.get(&flag) {
            Some(_) => self.given(&flag, value.unwrap_or_default()),
            None => Flags.engine_given(spec, key, value),
        }
    }

    fn engine_setting(&self, key: &str, value: &str) -> String {
        if self.sources.engine_from_command_line() {
            return Flags.engine_setting(key, value);
        }
        format!("{}={value}", self.engine_option(key))
    }

    fn engine_option(&self, key: &str) -> String {
        match self.sources.get(&format!("engine:{key}")) {
            Some(s) => s.key.clone(),
            None if self.sources.engine_from_command_line() => Flags.engine_option(key),
            None => fio_engine_option(key).to_string(),
        }
    }

    fn several_workers_per_target(&self) -> String {
        "each of a section's numjobs jobs drives every file of its list; for more jobs on one, raise numjobs".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(key: &str, value: &str, file: &str, line: usize) -> Entry {
        Entry { key: key.into(), value: Some(value.into()), at: Origin { file: file.into(), line } }
    }

    fn header() -> Origin {
        Origin { file: "job.fio".into(), line: 5 }
    }

    #[test]
    fn a_refusal_points_at_the_option_at_fault_and_places_the_other() {
        let mut s = Sources::default();
        s.written("--rw", &entry("readwrite", "randread", "job.fio", 6), 0);
        s.written("--rwmixread", &entry("rwmixwrite", "30", "job.fio", 7), 1);
        let c = Clash::MixWithoutMixedPattern { mix: "rwmixread", rw: "randread".into() };
        assert_eq!(
            s.refusal("a", &header(), &c).to_string(),
            "job.fio:7: [a]: rwmixwrite=30 applies only to rw=rw and randrw, not readwrite=randread (line 6); drop it, or use rw=randrw"
        );
    }

    #[test]
    fn defaults_other_files_and_unwritten_options_are_said_so() {
        let mut s = Sources::default();
        s.defaulted("--rw", "read");
        s.written("--rwmixread", &entry("rwmixread", "70", "job.fio", 7), 1);
        let c = Clash::MixWithoutMixedPattern { mix: "rwmixread", rw: "read".into() };
        assert!(s.refusal("a", &header(), &c).to_string().contains("not rw=read (fio's default);"));
        s.written("--rw", &entry("rw", "trim", "common.fio", 2), 0);
        let c = Clash::MixWithoutMixedPattern { mix: "rwmixread", rw: "trim".into() };
        assert!(s.refusal("a", &header(), &c).to_string().contains("not rw=trim (common.fio:2);"));
        // Neither option written: the section's header, in fio's words still.
        let c = Clash::WorkingSetTooSmall { size: 512, bs: 4096, bs_option: "bs" };
        assert_eq!(
            Sources::default().refusal("a", &header(), &c).to_string(),
            "job.fio:5: section [a]: the working set (512 bytes) is smaller than the largest I/O (4096 bytes); raise size or lower bs"
        );
        // The one at fault not written: the other's line.
        s.written("--bs", &entry("blocksize", "64k", "job.fio", 9), 2);
        assert!(s.refusal("a", &header(), &c).to_string().starts_with("job.fio:9: [a]: the working set"));
    }

    /// A job without a target would take a scratch file; where none can be made, the fix is the
    /// job file's filename=, not run's --filename.
    #[test]
    fn no_scratch_directory_asks_for_the_job_files_filename() {
        let f = Fault::NoScratchDir { tried: "/tmp, /var/tmp".into() };
        assert_eq!(
            Sources::default().fault("a", &header(), &f).to_string(),
            "job.fio:5: section [a]: no directory for the scratch file supports O_DIRECT (tried /tmp, /var/tmp); pass filename=FILE on a disk-backed filesystem"
        );
    }

    #[test]
    fn spdk_refusals_use_the_plugins_filename_and_the_command_lines_flags() {
        let mut s = Sources::default();
        s.written("--engine", &entry("ioengine", "libaio", "job.fio", 2), 0);
        s.written("--trid", &entry("filename", "trtype=PCIe traddr=0000.01.00.0", "job.fio", 6), 1);
        let c = Clash::SpdkOnly { flag: "trid", engine: "aio".into() };
        assert_eq!(
            s.refusal("a", &header(), &c).to_string(),
            "job.fio:6: [a]: filename=trtype=PCIe traddr=0000.01.00.0 is an option of the spdk engine, and this run uses ioengine=libaio (line 2); drop it or add ioengine=spdk"
        );
        let c = Clash::SpdkOnly { flag: "mem-size", engine: "aio".into() };
        assert_eq!(
            s.refusal("a", &header(), &c).to_string(),
            "job.fio:2: [a]: --mem-size is an option of the spdk engine, and this run uses ioengine=libaio; drop it or add ioengine=spdk"
        );
        // The command line's engine replaces the job file's: it is the one named.
        s.command_line("engine", Some("uring"));
        let c = Clash::SpdkOnly { flag: "trid", engine: "uring".into() };
        assert_eq!(
            s.refusal("a", &header(), &c).to_string(),
            "job.fio:6: [a]: filename=trtype=PCIe traddr=0000.01.00.0 is an option of the spdk engine, and this run uses --engine=uring (command line); drop it or add ioengine=spdk"
        );
        let mut s = Sources::default();
        s.written("--engine", &entry("ioengine", "spdk", "job.fio", 2), 0);
        assert_eq!(
            s.refusal("a", &header(), &Clash::SpdkNeedsTrid).to_string(),
            "job.fio:2: [a]: ioengine=spdk needs a controller; add filename=trtype=PCIe traddr=0000.01.00.0 or a fabrics transport ID"
        );
    }

    #[test]
    fn a_fault_of_one_option_is_named_as_written_at_its_line() {
        let mut s = Sources::default();
        s.written("--engine", &entry("ioengine", "io_uring", "job.fio", 2), 0);
        let hipri = Entry { key: "hipri".into(), value: None, at: Origin { file: "job.fio".into(), line: 6 } };
        s.written("engine:poll", &hipri, 1);
        s.written("engine:sqpoll_cpu", &entry("sqthread_poll_cpu", "x", "job.fio", 7), 2);
        s.written("--bs", &entry("bs", "4k,1000", "job.fio", 8), 3);
        s.written("--align", &entry("ba", "0", "common.fio", 1), 4);
        let poll = Fault::CannotPoll {
            spec: "uring:fixedbufs=0,regfile=0,poll=1".into(),
            path: "/f".into(),
            queue: "/sys/block/vda/queue/io_poll".into(),
            disk: "vda".into(),
            nvme: false,
        };
        assert_eq!(
            s.fault("a", &header(), &poll).to_string(),
            "job.fio:6: [a]: ioengine=io_uring (line 2) on /f: polled completions need poll queues, and /sys/block/vda/queue/io_poll is 0: vda cannot complete I/O by polling (only NVMe with poll queues can); drop hipri"
        );
        let cpu = Fault::SqpollCpuNotACore { spec: "uring:sqpoll_cpu=x".into(), value: "x".into() };
        assert_eq!(
            s.fault("a", &header(), &cpu).to_string(),
            "job.fio:7: [a]: sqthread_poll_cpu=x is not a core number; write sqthread_poll_cpu=N with N a core"
        );
        // One size of several is named within the option as written.
        let bs = Fault::NotBlockMultiple { option: "bs", value: "1000".into(), path: "/f".into(), lbs: 512 };
        assert!(
            s.fault("a", &header(), &bs).to_string().starts_with("job.fio:8: [a]: bs=4k,1000: 1000 is not a multiple"),
            "{}",
            s.fault("a", &header(), &bs)
        );
        let align = Fault::Invalid { option: "align", message: "0 is not an alignment; use a size such as 4k".into() };
        assert_eq!(
            s.fault("a", &header(), &align).to_string(),
            "common.fio:1: [a]: ba=0: 0 is not an alignment; use a size such as 4k"
        );
        // Written nowhere: the section's header, in fio's words still.
        assert_eq!(
            Sources::default().fault("a", &header(), &align).to_string(),
            "job.fio:5: section [a]: blockalign: 0 is not an alignment; use a size such as 4k"
        );
    }

    #[test]
    fn faults_of_the_command_lines_engine_keep_its_words() {
        let mut s = Sources::default();
        s.written("--engine", &entry("ioengine", "io_uring", "job.fio", 2), 0);
        let hipri = Entry { key: "hipri".into(), value: None, at: Origin { file: "job.fio".into(), line: 3 } };
        s.written("engine:poll", &hipri, 1);
        s.written("--filename", &entry("filename", "/f", "job.fio", 4), 2);
        // The command line's engine replaces the job file's and its options.
        s.command_line("engine", Some("uring:poll"));
        let poll = Fault::CannotPoll {
            spec: "uring:poll".into(),
            path: "/f".into(),
            queue: "/sys/block/vda/queue/io_poll".into(),
            disk: "vda".into(),
            nvme: true,
        };
        let e = s.fault("a", &header(), &poll).to_string();
        assert!(e.starts_with("job.fio:4: [a]: --engine=uring:poll (command line) on /f: "), "{e}");
        assert!(e.ends_with(", or drop :poll"), "{e}");
        let cpu = Fault::SqpollCpuNotACore { spec: "uring:sqpoll_cpu=x".into(), value: "x".into() };
        assert_eq!(
            s.fault("a", &header(), &cpu).to_string(),
            "job.fio:5: section [a]: --engine 'uring:sqpoll_cpu=x': sqpoll_cpu=x is not a core number; write sqpoll_cpu=N with N a core"
        );
    }

    #[test]
    fn of_two_that_conflict_the_later_is_at_fault() {
        let mut s = Sources::default();
        s.written("--bs", &entry("bs", "4k", "job.fio", 2), 0);
        s.written("--bssplit", &entry("bssplit", "4k/50:8k/50", "job.fio", 8), 1);
        for (first, second) in [("bs", "bssplit"), ("bssplit", "bs")] {
            let c = Clash::Conflict { first: first.into(), second: second.into() };
            assert_eq!(
                s.refusal("a", &header(), &c).to_string(),
                "job.fio:8: [a]: bssplit=4k/50:8k/50 cannot be used with bs=4k (line 2); give one"
            );
        }
    }
}

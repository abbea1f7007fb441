//! Which line of a job file each of a job's `run` flags came from, so that a refusal involving two
//! options names them as the file writes them (`rwmixwrite`, not `--rwmixread`) and points at the
//! line of the one at fault, with the other's line in the sentence.
//!
//! What the refusals are is `config::clash`'s; this module only names and places them.

use super::FioError;
use super::ini::{Entry, Origin};
use super::options::{fio_name, is_fio_option, trid_as_filename};
use crate::config::clash::{Clash, Naming};

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
    /// line dropped it (its SPDK flags replace the job file's transport ID, given or not).
    pub fn command_line(&mut self, flag: &str, value: Option<&str>) {
        let flag = flag.trim_start_matches("--");
        self.0.retain(|o| o.flag != flag);
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
        let Some(at) = self.at(clash.option()).or_else(|| self.at(clash.other())).cloned() else {
            let message = clash.message(&JobNames { sources: self, at: header });
            return FioError::Section { at: header.clone(), name: job.into(), message };
        };
        let message = clash.message(&JobNames { sources: self, at: &at });
        FioError::Options { at, job: job.into(), message }
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

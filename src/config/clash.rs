//! Refusals that involve two options: one conflicts with another, or needs one that is missing or
//! set otherwise. They are typed, not formatted, because two front ends word them: the command line
//! names `run`'s flags (`--rw randread`), and a fio job file names its own options where the user
//! wrote them (`rw=randread (line 3)`), which a sentence built once with `--` flags could not.
//! [`Naming`] is how a front end words an option; refusals of one option (`super::fault`) use it too.
//!
//! The checks stay where they were (`config`, `fio::argv::fold`); this module only says what each
//! refusal is about and words it through a [`Naming`]. Options are named by `run`'s long flag
//! (`rw`, `thinktime-spin`, fio's per-job `rate_iops`).

use std::time::Duration;

/// How a front end names an option, given `run`'s long flag name.
pub trait Naming {
    /// The option as a word, in advice (`--thinktime`; fio's `thinktime`).
    fn option(&self, flag: &str) -> String;
    /// The option with a value, in advice (`--rw randrw`; fio's `rw=randrw`).
    fn setting(&self, flag: &str, value: &str) -> String;
    /// The option as the user set it; `shown` is the value it resolved to (`--rw randread`; in a
    /// job file, what the line says and where: `rw=randread (line 3)`).
    fn given(&self, flag: &str, shown: &str) -> String {
        self.setting(flag, shown)
    }
    /// The option the user set (`--rate`; in a job file as written and where: `rate=1m (line 4)`).
    fn named(&self, flag: &str) -> String {
        self.option(flag)
    }
    /// The option as the user set it, where `part` is the value at fault: one of its sizes, or
    /// what it resolved to (`--bs 1000`; in a job file `bs=4k,1000: 1000`, or `bs=1000` when that is
    /// all it says).
    fn given_part(&self, flag: &str, part: &str) -> String {
        self.setting(flag, part)
    }
    /// An option of the engine spec `spec` (`sqpoll_cpu`), with its value when the sentence is about
    /// it, as the subject of a sentence (`--engine 'uring:sqpoll_cpu=x': sqpoll_cpu=x`; in a job
    /// file the fio option that set it, as written: `sqthread_poll_cpu=x`).
    fn engine_given(&self, spec: &str, key: &str, value: Option<&str>) -> String;
    /// An option of the engine with a value, in advice (`sqpoll_cpu=N`; fio's `sqthread_poll_cpu=N`).
    fn engine_setting(&self, key: &str, value: &str) -> String;
    /// An option of the engine to drop, in advice (`:poll`, from the engine spec; fio's `hipri`).
    fn engine_option(&self, key: &str) -> String;
    /// How to have several workers on one target, for a target given twice.
    fn several_workers_per_target(&self) -> String;
}

/// `run`'s own flags, as the command line spells them.
pub struct Flags;

impl Naming for Flags {
    fn option(&self, flag: &str) -> String {
        format!("--{flag}")
    }
    fn setting(&self, flag: &str, value: &str) -> String {
        format!("--{flag} {value}")
    }
    fn engine_given(&self, spec: &str, key: &str, value: Option<&str>) -> String {
        match value {
            Some(v) => format!("--engine '{spec}': {key}={v}"),
            None => format!("--engine '{spec}': {key}"),
        }
    }
    fn engine_setting(&self, key: &str, value: &str) -> String {
        format!("{key}={value}")
    }
    fn engine_option(&self, key: &str) -> String {
        format!(":{key}")
    }
    fn several_workers_per_target(&self) -> String {
        "one worker per target is --jobs, several per target --each-worker-all-targets or more --jobs".into()
    }
}

/// The transport ID the SPDK refusals give as an example, as `--trid` takes it.
pub const TRID_EXAMPLE: &str = "trtype:PCIe traddr:0000:01:00.0";

/// Two options that cannot be given together as they are.
#[derive(Clone, Debug, PartialEq)]
pub enum Clash {
    /// `--engine spdk` without `--trid`.
    SpdkNeedsTrid,
    /// `flag` (`trid`, `mem-size`, ...) belongs to the spdk engine, and the run uses `engine`.
    SpdkOnly { flag: &'static str, engine: String },
    /// `mix` (`rwmixread` or `rwmix`) with a pattern (`rw`) that fixes its own mix.
    MixWithoutMixedPattern { mix: &'static str, rw: String },
    /// `--rate` paces only directions `--rw` does not issue.
    RatePacesNothing { paced: String, rw: String, issued: String },
    /// `--rate-process poisson` and neither `--rate` nor `--rate-iops`.
    PoissonUnpaced,
    /// `shape` (`thinktime-spin` or `thinktime-blocks`) without `--thinktime`.
    ThinkShapeAlone { shape: &'static str },
    /// `shape` with `--thinktime 0`, which is no think time (fio's default).
    ThinkShapeOfNone { shape: &'static str },
    /// `--thinktime-spin` longer than `--thinktime`.
    SpinOverThink { spin: Duration, think: Duration },
    /// `option` (`buffer-compress-percentage` or `dedupe-percentage`) and a pattern that writes
    /// nothing.
    BuffersUnwritten { option: &'static str, rw: String },
    /// `--rw trimwrite` and sizes (`option`: `bs` or `bssplit`) whose writes and trims differ.
    TrimwriteSizes { option: &'static str, write: String, trim: String },
    /// `--offset` plus `--size` past the end of the target.
    PastEnd { offset: String, size: Option<String>, end: u64, total: u64, path: String },
    /// A working set smaller than the largest block (`bs_option`: `bs` or `bssplit`).
    WorkingSetTooSmall { size: u64, bs: u64, bs_option: &'static str },
    /// Two options that set the same thing (`what`: "pace the run"); `first` is the one at fault.
    Both { first: &'static str, second: &'static str, what: &'static str },
    /// Two options the command line's definitions do not take together (clap's conflicts, named by
    /// the flags clap reports); `first` is the one at fault.
    Conflict { first: String, second: String },
}

impl Clash {
    /// The option at fault: the one to drop or change (a job file points at its line).
    pub fn option(&self) -> &str {
        match self {
            Clash::SpdkNeedsTrid => "engine",
            Clash::SpdkOnly { flag, .. } => flag,
            Clash::MixWithoutMixedPattern { mix, .. } => mix,
            Clash::RatePacesNothing { .. } => "rate",
            Clash::PoissonUnpaced => "rate-process",
            Clash::ThinkShapeAlone { shape } | Clash::ThinkShapeOfNone { shape } => shape,
            Clash::SpinOverThink { .. } => "thinktime-spin",
            Clash::BuffersUnwritten { option, .. } | Clash::TrimwriteSizes { option, .. } => option,
            Clash::PastEnd { size: Some(_), .. } | Clash::WorkingSetTooSmall { .. } => "size",
            Clash::PastEnd { size: None, .. } => "offset",
            Clash::Both { first, .. } => first,
            Clash::Conflict { first, .. } => first,
        }
    }

    /// The option it clashes with, or the one it needs.
    pub fn other(&self) -> &str {
        match self {
            Clash::SpdkNeedsTrid => "trid",
            Clash::SpdkOnly { .. } => "engine",
            Clash::MixWithoutMixedPattern { .. }
            | Clash::RatePacesNothing { .. }
            | Clash::BuffersUnwritten { .. }
            | Clash::TrimwriteSizes { .. } => "rw",
            Clash::PoissonUnpaced => "rate",
            Clash::ThinkShapeAlone { .. } | Clash::ThinkShapeOfNone { .. } | Clash::SpinOverThink { .. } => "thinktime",
            Clash::PastEnd { size: Some(_), .. } => "offset",
            Clash::PastEnd { size: None, .. } => "size",
            Clash::WorkingSetTooSmall { bs_option, .. } => bs_option,
            Clash::Both { second, .. } => second,
            Clash::Conflict { second, .. } => second,
        }
    }

    /// Whether neither option is more at fault than the other (so a front end may blame either:
    /// a job file blames the one written later).
    pub fn symmetric(&self) -> bool {
        matches!(self, Clash::Both { .. } | Clash::Conflict { .. })
    }

    /// The same clash with the other option at fault, for symmetric ones (others are returned as
    /// they are).
    pub fn swapped(&self) -> Clash {
        match self.clone() {
            Clash::Both { first, second, what } => Clash::Both { first: second, second: first, what },
            Clash::Conflict { first, second } => Clash::Conflict { first: second, second: first },
            other => other,
        }
    }

    /// The refusal in one sentence, with the fix, naming the options as `n` does.
    pub fn message(&self, n: &dyn Naming) -> String {
        match self {
            Clash::SpdkNeedsTrid => format!(
                "{} needs a controller; add {} or a fabrics transport ID",
                n.given("engine", "spdk"),
                n.setting("trid", &format!("'{TRID_EXAMPLE}'"))
            ),
            Clash::SpdkOnly { flag, engine } => format!(
                "{} is an option of the spdk engine, and this run uses {}; drop it or add {}",
                n.named(flag),
                n.given("engine", engine),
                n.setting("engine", "spdk")
            ),
            Clash::MixWithoutMixedPattern { mix, rw } => format!(
                "{} applies only to {} and randrw, not {}; drop it, or use {}",
                n.named(mix),
                n.setting("rw", "rw"),
                n.given("rw", rw),
                n.setting("rw", "randrw")
            ),
            Clash::RatePacesNothing { paced, rw, issued } => format!(
                "{}: it paces only {paced}, and {} issues only {issued}; give the rate as READ,WRITE,TRIM (like ,20m, for writes or ,,20m for trims)",
                n.named("rate"),
                n.given("rw", rw)
            ),
            Clash::PoissonUnpaced => format!(
                "{}: poisson spaces paced I/Os, and nothing is paced; add {} or {}",
                n.named("rate-process"),
                n.option("rate"),
                n.option("rate-iops")
            ),
            Clash::ThinkShapeAlone { shape } => format!(
                "{}: it shapes {}, which is not given; add {}",
                n.named(shape),
                n.option("thinktime"),
                n.option("thinktime")
            ),
            Clash::ThinkShapeOfNone { shape } => format!(
                "{}: it shapes {}, which is no think time; drop it, or give {} a time above 0",
                n.named(shape),
                n.given("thinktime", "0"),
                n.option("thinktime")
            ),
            Clash::SpinOverThink { spin, think } => format!(
                "{} is longer than {}; spin for at most the think time",
                n.given("thinktime-spin", &format!("{spin:?}")),
                n.given("thinktime", &format!("{think:?}"))
            ),
            Clash::BuffersUnwritten { option, rw } => format!(
                "{}: it shapes written data, and {} writes nothing; use a workload that writes",
                n.named(option),
                n.given("rw", rw)
            ),
            Clash::TrimwriteSizes { option, write, trim } => format!(
                "{}: {} writes each trimmed block with one write of its size, and the write sizes ({write}) differ from the trim sizes ({trim}); give one size for both, like 4k,64k",
                n.named(option),
                n.given("rw", "trimwrite")
            ),
            Clash::PastEnd { offset, size: Some(size), end, total, path } => format!(
                "{} plus {} ends at byte {end}, past the end of {path} ({total} bytes); make them smaller",
                n.given("offset", offset),
                n.given("size", size)
            ),
            Clash::PastEnd { offset, size: None, end, total, path } => format!(
                "{} starts at byte {end}, past the end of {path} ({total} bytes); make it smaller",
                n.given("offset", offset)
            ),
            Clash::WorkingSetTooSmall { size, bs, bs_option } => format!(
                "the working set ({size} bytes) is smaller than the largest I/O ({bs} bytes); raise {} or lower {}",
                n.named("size"),
                n.named(bs_option)
            ),
            Clash::Both { first, second, what } => {
                format!("{} and {} both {what}; give one", n.named(first), n.named(second))
            }
            Clash::Conflict { first, second } => {
                format!("{} cannot be used with {}; give one", n.named(first), n.named(second))
            }
        }
    }
}

impl std::fmt::Display for Clash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message(&Flags))
    }
}

impl std::error::Error for Clash {}

#[cfg(test)]
mod tests {
    use super::*;

    /// A front end that marks what it was asked for, to check which words a message asks for.
    struct Marks;

    impl Naming for Marks {
        fn option(&self, flag: &str) -> String {
            format!("<{flag}>")
        }
        fn setting(&self, flag: &str, value: &str) -> String {
            format!("<{flag}={value}>")
        }
        fn given(&self, flag: &str, shown: &str) -> String {
            format!("<given {flag}={shown}>")
        }
        fn named(&self, flag: &str) -> String {
            format!("<named {flag}>")
        }
        fn engine_given(&self, spec: &str, key: &str, value: Option<&str>) -> String {
            format!("<engine {spec} {key}={value:?}>")
        }
        fn engine_setting(&self, key: &str, value: &str) -> String {
            format!("<engine {key}={value}>")
        }
        fn engine_option(&self, key: &str) -> String {
            format!("<engine {key}>")
        }
        fn several_workers_per_target(&self) -> String {
            "<several>".into()
        }
    }

    #[test]
    fn the_command_line_reads_as_before() {
        let mix = Clash::MixWithoutMixedPattern { mix: "rwmixread", rw: "trim".into() };
        assert_eq!(
            mix.to_string(),
            "--rwmixread applies only to --rw rw and randrw, not --rw trim; drop it, or use --rw randrw"
        );
        assert_eq!(
            Clash::ThinkShapeAlone { shape: "thinktime-spin" }.to_string(),
            "--thinktime-spin: it shapes --thinktime, which is not given; add --thinktime"
        );
        let past = Clash::PastEnd {
            offset: "512k".into(),
            size: Some("1m".into()),
            end: 1_572_864,
            total: 1 << 20,
            path: "/f".into(),
        };
        assert_eq!(
            past.to_string(),
            "--offset 512k plus --size 1m ends at byte 1572864, past the end of /f (1048576 bytes); make them smaller"
        );
        assert_eq!(
            Clash::Both { first: "rate_iops", second: "rate", what: "pace the run" }.to_string(),
            "--rate_iops and --rate both pace the run; give one"
        );
    }

    #[test]
    fn the_users_settings_are_named_as_given_and_advice_as_settings() {
        let m = Clash::MixWithoutMixedPattern { mix: "rwmixread", rw: "randread".into() }.message(&Marks);
        assert_eq!(
            m,
            "<named rwmixread> applies only to <rw=rw> and randrw, not <given rw=randread>; drop it, or use <rw=randrw>"
        );
        let m = Clash::PoissonUnpaced.message(&Marks);
        assert!(m.starts_with("<named rate-process>:") && m.ends_with("add <rate> or <rate-iops>"), "{m}");
        let none = Clash::ThinkShapeOfNone { shape: "thinktime-spin" };
        assert_eq!(
            none.message(&Marks),
            "<named thinktime-spin>: it shapes <given thinktime=0>, which is no think time; drop it, or give <thinktime> a time above 0"
        );
        assert_eq!((none.option(), none.other()), ("thinktime-spin", "thinktime"));
        let spin = Clash::SpinOverThink { spin: Duration::from_micros(200), think: Duration::from_micros(100) };
        assert_eq!(
            spin.message(&Marks),
            "<given thinktime-spin=200µs> is longer than <given thinktime=100µs>; spin for at most the think time"
        );
        assert_eq!(
            Clash::SpdkNeedsTrid.to_string(),
            "--engine spdk needs a controller; add --trid 'trtype:PCIe traddr:0000:01:00.0' or a fabrics transport ID"
        );
        assert_eq!(
            Clash::SpdkOnly { flag: "trid", engine: "aio".into() }.to_string(),
            "--trid is an option of the spdk engine, and this run uses --engine aio; drop it or add --engine spdk"
        );
    }

    #[test]
    fn each_clash_names_the_option_at_fault_and_the_other() {
        let past = |size: Option<&str>| Clash::PastEnd {
            offset: "2g".into(),
            size: size.map(str::to_string),
            end: 0,
            total: 0,
            path: String::new(),
        };
        assert_eq!((past(Some("1m")).option(), past(Some("1m")).other()), ("size", "offset"));
        assert_eq!((past(None).option(), past(None).other()), ("offset", "size"));
        let c = Clash::RatePacesNothing { paced: "writes".into(), rw: "randread".into(), issued: "reads".into() };
        assert_eq!((c.option(), c.other()), ("rate", "rw"));
        let c = Clash::WorkingSetTooSmall { size: 1, bs: 2, bs_option: "bssplit" };
        assert_eq!((c.option(), c.other()), ("size", "bssplit"));
        assert_eq!(c.swapped(), c, "one option is at fault");
        let c = Clash::Conflict { first: "bs".into(), second: "bssplit".into() };
        assert!(c.symmetric());
        assert_eq!((c.swapped().option(), c.swapped().other()), ("bssplit", "bs"));
    }
}

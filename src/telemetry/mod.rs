//! Drive telemetry: the SMART / Health Information log of every target's controller, read before the
//! run, every `--telemetry-interval` during it and after it, and the Error Information log after a
//! run with I/O errors.
//!
//! A [`Sampler`] owns one [`LogReader`] per target (the kernel's admin passthrough in [`kernel`],
//! SPDK's admin queue in `engine::spdk`) and reads from a thread of its own, never a worker: started
//! before the workers, it inherits the housekeeping cores the coordinator moves every non-worker
//! thread to. What the pages mean is [`health`]'s and [`errlog`]'s; turning the readings into report
//! lines and JSON is `report`'s.

pub mod errlog;
pub mod health;
pub mod kernel;

use errlog::ErrorLogEntry;
use health::HealthLog;
use serde::Serialize;
use std::time::{Duration, SystemTime};

/// `--telemetry-interval` when not given.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);
/// Shorter intervals would put an admin command in every few milliseconds of the run; drives answer
/// health reads in hundreds of microseconds to milliseconds, and firmware may refresh the page only
/// once a second anyway.
pub const MIN_INTERVAL: Duration = Duration::from_millis(100);

/// `--telemetry-interval`: how often to read the health log, or never (`None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TelemetryInterval(pub Option<Duration>);

impl TelemetryInterval {
    /// `off` or `0` turns telemetry off; otherwise a duration of at least [`MIN_INTERVAL`].
    ///
    /// # Errors
    /// One sentence naming the value and the fix.
    pub fn parse(text: &str) -> Result<TelemetryInterval, String> {
        if text.trim() == "off" {
            return Ok(TelemetryInterval(None));
        }
        let d = crate::units::parse_duration(text)?;
        if d.is_zero() {
            return Ok(TelemetryInterval(None));
        }
        if d < MIN_INTERVAL {
            return Err(format!(
                "'{text}' is shorter than the 100ms minimum; give 100ms or more, or off to read no telemetry"
            ));
        }
        Ok(TelemetryInterval(Some(d)))
    }
}

/// Reads a log page of one controller, from the start of the page.
pub trait LogReader: Send {
    /// Fills `buf` with the first `buf.len()` bytes of log page `lid`.
    ///
    /// # Errors
    /// Why the page could not be read, as a phrase.
    fn read_log(&mut self, lid: u8, buf: &mut [u8]) -> Result<(), String>;
}

/// Where a target's telemetry comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The kernel's admin passthrough on `/dev/nvmeX`.
    Kernel,
    /// SPDK's admin queue.
    Spdk,
}

/// A target to sample: its name in reports, where its pages come from, and the reader (or why
/// there is none).
pub struct Probe {
    pub target: String,
    pub source: Source,
    pub reader: Result<Box<dyn LogReader>, String>,
}

/// One health reading and when it was taken.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    pub at: SystemTime,
    pub health: HealthLog,
}

/// Everything read from one target.
#[derive(Debug)]
pub struct TargetTelemetry {
    pub target: String,
    pub source: Source,
    /// Why there are no samples: a regular file, a controller that does not return the page.
    pub unavailable: Option<String>,
    /// Before the run, every interval, after the run.
    pub samples: Vec<Sample>,
    /// The first read that failed after the first succeeded, and how many failed.
    pub read_failures: Option<(String, u64)>,
    /// The Error Information log's newest entries, read after a run with I/O errors.
    pub error_log: Option<Vec<ErrorLogEntry>>,
    /// Why the Error Information log could not be read, when it was wanted.
    pub error_log_unavailable: Option<String>,
}

impl TargetTelemetry {
    /// What went wrong on the drive between the first and the later samples (see
    /// [`health::alerts`]).
    pub fn alerts(&self) -> Vec<String> {
        match self.samples.split_first() {
            Some((first, rest)) => health::alerts(&first.health, rest.iter().map(|s| &s.health)),
            None => Vec::new(),
        }
    }
}

/// The telemetry of a run.
#[derive(Debug)]
pub struct Telemetry {
    pub interval: Duration,
    pub targets: Vec<TargetTelemetry>,
}

impl Telemetry {
    /// Whether any drive throttled, raised a critical warning or logged media errors during the run.
    pub fn alert(&self) -> bool {
        self.targets.iter().any(|t| !t.alerts().is_empty())
    }
}

struct Sampled {
    target: TargetTelemetry,
    reader: Option<Box<dyn LogReader>>,
}

impl Sampled {
    fn new(p: Probe) -> Sampled {
        let (reader, unavailable) = match p.reader {
            Ok(r) => (Some(r), None),
            Err(why) => (None, Some(why)),
        };
        let target = TargetTelemetry {
            target: p.target,
            source: p.source,
            unavailable,
            samples: Vec::new(),
            read_failures: None,
            error_log: None,
            error_log_unavailable: None,
        };
        let mut s = Sampled { target, reader };
        s.sample();
        s
    }

    /// Reads the health log once. A target whose first read fails has no such log (the controller
    /// does not implement it, or the passthrough is refused): it is not asked again.
    fn sample(&mut self) {
        let Some(reader) = self.reader.as_mut() else { return };
        let mut page = [0u8; health::HEALTH_LOG_BYTES];
        match reader.read_log(health::LID_HEALTH, &mut page) {
            Ok(()) => self.target.samples.push(Sample { at: SystemTime::now(), health: HealthLog::parse(&page) }),
            Err(e) if self.target.samples.is_empty() => {
                self.target.unavailable = Some(format!("the health log cannot be read: {e}"));
                self.reader = None;
            }
            Err(e) => match &mut self.target.read_failures {
                Some((_, n)) => *n += 1,
                None => self.target.read_failures = Some((e, 1)),
            },
        }
    }

    fn read_error_log(&mut self) {
        let Some(reader) = self.reader.as_mut() else { return };
        let mut page = vec![0u8; errlog::ENTRIES_READ * errlog::ENTRY_BYTES];
        match reader.read_log(errlog::LID_ERROR, &mut page) {
            Ok(()) => self.target.error_log = Some(errlog::parse(&page)),
            Err(e) => self.target.error_log_unavailable = Some(e),
        }
    }
}

/// A kernel engine's target, read through the kernel's admin passthrough (or why it cannot be).
pub fn kernel_probe(t: &crate::target::Target) -> Probe {
    Probe {
        target: t.path.display().to_string(),
        source: Source::Kernel,
        reader: kernel::KernelController::open(t).map(|c| Box::new(c) as Box<dyn LogReader>),
    }
}

/// Every controller SPDK attached, read through its admin queue.
#[cfg(feature = "spdk")]
pub fn spdk_probes(controllers: &[std::sync::Arc<crate::engine::spdk::ctrlr::Controller>]) -> Vec<Probe> {
    controllers
        .iter()
        .map(|c| Probe {
            target: c.info.trid.clone(),
            source: Source::Spdk,
            reader: Ok(Box::new(SpdkController(c.clone())) as Box<dyn LogReader>),
        })
        .collect()
}

/// An SPDK-attached controller, read through its admin queue.
#[cfg(feature = "spdk")]
struct SpdkController(std::sync::Arc<crate::engine::spdk::ctrlr::Controller>);

#[cfg(feature = "spdk")]
impl LogReader for SpdkController {
    fn read_log(&mut self, lid: u8, buf: &mut [u8]) -> Result<(), String> {
        self.0.get_log_page(lid, buf)
    }
}

/// Reads every target's health log now and then every interval from a thread of its own, until
/// [`Sampler::finish`].
pub struct Sampler {
    interval: Duration,
    stop: crossbeam_channel::Sender<()>,
    thread: std::thread::JoinHandle<Vec<Sampled>>,
}

impl Sampler {
    /// Takes the first sample of every probe on the calling thread (so it precedes the run), then
    /// starts the sampling thread.
    ///
    /// # Errors
    /// The thread could not be started.
    pub fn start(probes: Vec<Probe>, interval: Duration) -> std::io::Result<Sampler> {
        let mut sampled: Vec<Sampled> = probes.into_iter().map(Sampled::new).collect();
        let (stop, stopped) = crossbeam_channel::bounded::<()>(0);
        let thread = std::thread::Builder::new().name("nvmebench-telemetry".into()).spawn(move || {
            let mut next = std::time::Instant::now() + interval;
            // A send or a hang-up both mean stop; only the deadline means sample.
            while let Err(crossbeam_channel::RecvTimeoutError::Timeout) = stopped.recv_deadline(next) {
                sampled.iter_mut().for_each(Sampled::sample);
                next += interval;
            }
            sampled
        })?;
        Ok(Sampler { interval, stop, thread })
    }

    /// Stops sampling and takes the last sample of every target; with `io_errors`, also reads the
    /// Error Information log.
    pub fn finish(self, io_errors: bool) -> Telemetry {
        drop(self.stop);
        let sampled = self.thread.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        let targets = sampled
            .into_iter()
            .map(|mut s| {
                s.sample();
                if io_errors {
                    s.read_error_log();
                }
                s.target
            })
            .collect();
        Telemetry { interval: self.interval, targets }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// Plays back health pages: the temperature rises by one kelvin a read, and from the `warn_at`th
    /// read on the temperature bit is set. `fail` makes every read fail.
    struct Scripted {
        reads: Arc<Mutex<u32>>,
        warn_at: u32,
        fail: bool,
    }

    impl LogReader for Scripted {
        fn read_log(&mut self, lid: u8, buf: &mut [u8]) -> Result<(), String> {
            if self.fail {
                return Err("Invalid Log Page".into());
            }
            let mut n = self.reads.lock().expect("not poisoned");
            buf.fill(0);
            if lid == health::LID_HEALTH {
                buf[1..3].copy_from_slice(&(300 + *n as u16).to_le_bytes());
                if *n >= self.warn_at {
                    buf[0] = 0b10;
                }
            } else {
                buf[0] = 7;
            }
            *n += 1;
            Ok(())
        }
    }

    #[test]
    fn intervals_below_the_minimum_are_refused_and_off_is_off() {
        assert_eq!(TelemetryInterval::parse("1s"), Ok(TelemetryInterval(Some(Duration::from_secs(1)))));
        assert_eq!(TelemetryInterval::parse("100ms"), Ok(TelemetryInterval(Some(MIN_INTERVAL))));
        assert_eq!(TelemetryInterval::parse("off"), Ok(TelemetryInterval(None)));
        assert_eq!(TelemetryInterval::parse("0"), Ok(TelemetryInterval(None)));
        assert_eq!(
            TelemetryInterval::parse("50ms"),
            Err("'50ms' is shorter than the 100ms minimum; give 100ms or more, or off to read no telemetry".into())
        );
        assert!(TelemetryInterval::parse("soon").is_err());
    }

    #[test]
    fn the_sampler_reads_before_during_and_after_and_flags_a_raised_warning() {
        let reads = Arc::new(Mutex::new(0));
        let probes = vec![
            Probe {
                target: "/dev/nvme0n1".into(),
                source: Source::Kernel,
                reader: Ok(Box::new(Scripted { reads: reads.clone(), warn_at: 2, fail: false })),
            },
            Probe { target: "/tmp/f".into(), source: Source::Kernel, reader: Err("a regular file".into()) },
            Probe {
                target: "trtype:TCP".into(),
                source: Source::Spdk,
                reader: Ok(Box::new(Scripted { reads: Arc::default(), warn_at: 0, fail: true })),
            },
        ];
        let s = Sampler::start(probes, MIN_INTERVAL).expect("thread starts");
        std::thread::sleep(Duration::from_millis(250));
        let t = s.finish(true);
        let drive = &t.targets[0];
        let temps: Vec<_> = drive.samples.iter().map(|s| s.health.temperature_c().expect("reported")).collect();
        assert!(temps.len() >= 3, "before, at least one interval, after: {temps:?}");
        assert_eq!(temps, (27..27 + temps.len() as i32).collect::<Vec<_>>());
        assert!(drive.samples.windows(2).all(|w| w[0].at <= w[1].at));
        assert_eq!(drive.alerts(), ["critical warning: temperature beyond a threshold"]);
        assert_eq!(drive.error_log.iter().flatten().map(|e| e.error_count).collect::<Vec<_>>(), [7]);
        assert!(t.alert());

        assert_eq!(t.targets[1].unavailable.as_deref(), Some("a regular file"));
        assert_eq!(
            t.targets[2].unavailable.as_deref(),
            Some("the health log cannot be read: Invalid Log Page"),
            "a target without the log is asked once and says so"
        );
        assert!(t.targets[2].samples.is_empty() && t.targets[2].error_log.is_none());
    }
}

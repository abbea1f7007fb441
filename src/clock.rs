//! What stamps I/Os: one clock for every worker of a run, read raw in the hot loop and scaled to
//! nanoseconds only where a figure is made.
//!
//! The TSC where it is as good as the kernel's own clock, CLOCK_MONOTONIC otherwise:
//! - quanta's clock when quanta takes the TSC itself (the CPU says its TSC is invariant, and has
//!   RDTSCP), or when nothing better is known (CLOCK_MONOTONIC through the vDSO);
//! - the TSC read directly when the CPU does not say so but the kernel keeps its time with the TSC
//!   (its current clocksource is `tsc`): the kernel found the TSC steady and in step across CPUs,
//!   or was told so (`tsc=reliable`), and CLOCK_MONOTONIC is the TSC scaled, so reading it
//!   directly times the same thing without the vDSO's work. Virtual machines are the common case,
//!   this repository's TCG testbed among them, where a vDSO read costs about three TSC reads.
//!
//! The direct TSC is scaled by its rate against CLOCK_MONOTONIC, measured once per process over
//! [`CALIBRATION`]. This module does not decide what is stamped or when (that is `worker::hot`).

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// How long the direct TSC's rate is measured against CLOCK_MONOTONIC (once per process): a read
/// of either clock costs well under a microsecond, so the rate is right to a few parts per
/// million.
const CALIBRATION: Duration = Duration::from_millis(20);

/// The kernel's current clocksource.
const CLOCKSOURCE: &str = "/sys/devices/system/clocksource/clocksource0/current_clocksource";

/// A clock for stamping I/Os: raw readings, scaled by [`delta_as_nanos`](Clock::delta_as_nanos).
#[derive(Clone, Debug)]
pub struct Clock {
    kind: Kind,
}

#[derive(Clone, Debug)]
enum Kind {
    /// quanta's: its own TSC, CLOCK_MONOTONIC, or a mock (tests).
    Quanta(quanta::Clock),
    /// The TSC read directly; nanoseconds per tick as a 32.32 fixed-point number.
    Tsc { ns_per_tick_q32: u64 },
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new()
    }
}

impl Clock {
    /// The best clock this machine offers (see the module's documentation).
    pub fn new() -> Clock {
        let quanta = quanta::Clock::new();
        if !counts_nanoseconds(&quanta) {
            return Clock { kind: Kind::Quanta(quanta) };
        }
        match direct_tsc() {
            Some(ns_per_tick_q32) => Clock { kind: Kind::Tsc { ns_per_tick_q32 } },
            None => Clock { kind: Kind::Quanta(quanta) },
        }
    }

    /// A clock that moves only when the mock says (quanta's mock), for tests.
    pub fn mock() -> (Clock, Arc<quanta::Mock>) {
        let (c, m) = quanta::Clock::mock();
        (Clock { kind: Kind::Quanta(c) }, m)
    }

    /// One raw reading.
    #[inline]
    pub fn raw(&self) -> u64 {
        match &self.kind {
            Kind::Tsc { .. } => read_tsc(),
            Kind::Quanta(c) => c.raw(),
        }
    }

    /// Nanoseconds from raw reading `start` to raw reading `end` (0 if `end` is earlier).
    #[inline]
    pub fn delta_as_nanos(&self, start: u64, end: u64) -> u64 {
        match &self.kind {
            Kind::Tsc { ns_per_tick_q32 } => {
                ((u128::from(end.saturating_sub(start)) * u128::from(*ns_per_tick_q32)) >> 32) as u64
            }
            Kind::Quanta(c) => c.delta_as_nanos(start, end),
        }
    }

    /// What the report calls it: `tsc` (quanta's or direct) or `clock_monotonic`.
    pub fn source(&self) -> &'static str {
        match &self.kind {
            Kind::Tsc { .. } => "tsc",
            Kind::Quanta(c) if counts_nanoseconds(c) => "clock_monotonic",
            Kind::Quanta(_) => "tsc",
        }
    }
}

/// Whether quanta's clock counts nanoseconds (CLOCK_MONOTONIC, or a mock) rather than TSC ticks.
fn counts_nanoseconds(c: &quanta::Clock) -> bool {
    const SPAN: u64 = 1 << 40;
    c.delta_as_nanos(0, SPAN) == SPAN
}

/// The direct TSC's nanoseconds per tick (32.32), when the kernel keeps time with the TSC on an
/// x86-64 CPU; measured once per process.
fn direct_tsc() -> Option<u64> {
    static RATE: OnceLock<Option<u64>> = OnceLock::new();
    *RATE.get_or_init(|| {
        if !cfg!(target_arch = "x86_64") || !kernel_keeps_time_with_tsc(std::fs::read_to_string(CLOCKSOURCE).ok()) {
            return None;
        }
        let (t0, c0) = paired_reading();
        std::thread::sleep(CALIBRATION);
        let (t1, c1) = paired_reading();
        let ns = t1.duration_since(t0).as_nanos();
        let ticks = u128::from(c1.checked_sub(c0)?);
        // A TSC that did not move, or moved slower than 1 MHz, is not one to time I/Os with.
        if ticks < ns / 1000 {
            return None;
        }
        u64::try_from((ns << 32) / ticks).ok().filter(|&q| q > 0)
    })
}

/// A CLOCK_MONOTONIC reading and the TSC next to it: the TSC read on both sides, the pair kept
/// from the tightest of a few tries.
fn paired_reading() -> (Instant, u64) {
    (0..8)
        .map(|_| {
            let a = read_tsc();
            let t = Instant::now();
            let b = read_tsc();
            (b.wrapping_sub(a), t, a / 2 + b / 2)
        })
        .min_by_key(|&(gap, _, _)| gap)
        .map(|(_, t, c)| (t, c))
        .expect("eight tries")
}

/// Whether the kernel's current clocksource (the file's text) is the TSC.
fn kernel_keeps_time_with_tsc(clocksource: Option<String>) -> bool {
    clocksource.is_some_and(|s| s.trim() == "tsc")
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn read_tsc() -> u64 {
    tick_counter::x86_64_tick_counter()
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn read_tsc() -> u64 {
    unreachable!("the direct TSC is chosen on x86-64 only")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_tsc_clocksource_counts() {
        assert!(kernel_keeps_time_with_tsc(Some("tsc\n".into())));
        for other in ["hpet\n", "kvm-clock\n", "acpi_pm\n", ""] {
            assert!(!kernel_keeps_time_with_tsc(Some(other.into())), "{other}");
        }
        assert!(!kernel_keeps_time_with_tsc(None));
    }

    /// Whichever clock this machine gives, a span it measures agrees with CLOCK_MONOTONIC's.
    #[test]
    fn the_chosen_clock_agrees_with_clock_monotonic() {
        let clock = Clock::new();
        let (r0, t0) = (clock.raw(), Instant::now());
        std::thread::sleep(Duration::from_millis(50));
        let (r1, t1) = (clock.raw(), Instant::now());
        let ours = clock.delta_as_nanos(r0, r1) as f64;
        let theirs = t1.duration_since(t0).as_nanos() as f64;
        assert!(
            (ours / theirs - 1.0).abs() < 0.01,
            "{} measured {ours} ns where CLOCK_MONOTONIC measured {theirs} ns",
            clock.source()
        );
        assert_eq!(clock.delta_as_nanos(r1, r0), 0, "an earlier end is no time");
        assert!(["tsc", "clock_monotonic"].contains(&clock.source()));
    }

    /// The direct TSC, where this machine has one the kernel trusts, scales as CLOCK_MONOTONIC.
    #[test]
    fn the_direct_tsc_scales_as_clock_monotonic() {
        let Some(q) = direct_tsc() else { return };
        let clock = Clock { kind: Kind::Tsc { ns_per_tick_q32: q } };
        let (r0, t0) = (clock.raw(), Instant::now());
        std::thread::sleep(Duration::from_millis(50));
        let (r1, t1) = (clock.raw(), Instant::now());
        let ratio = clock.delta_as_nanos(r0, r1) as f64 / t1.duration_since(t0).as_nanos() as f64;
        assert!((ratio - 1.0).abs() < 0.01, "{ratio}");
        assert_eq!(clock.source(), "tsc");
    }

    #[test]
    fn a_mock_counts_nanoseconds_it_is_told() {
        let (clock, mock) = Clock::mock();
        let a = clock.raw();
        mock.increment(1500);
        assert_eq!(clock.delta_as_nanos(a, clock.raw()), 1500);
        assert_eq!(clock.source(), "clock_monotonic");
    }
}

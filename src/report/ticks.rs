//! Numbers as a reviewer reads them on an axis or above a bar: three significant digits, SI
//! prefixes and units (`350k`, `1.2 GB/s`, `85µs`, `2.5s`), never a raw float such as
//! `0.30000000000000004`.
//!
//! It formats single values only; choosing where ticks go is plotters' business, and the text
//! table's columns (one unit per column) are `columns`'.

/// What the values on an axis (or a bar) measure, and so how they are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A count or rate of I/Os: `950`, `350k`, `1.2M`.
    Count,
    /// Bytes per second, decimal as drive datasheets give them: `950 MB/s`, `3.2 GB/s`.
    BytesPerSecond,
    /// Nanoseconds, shown in the unit that keeps them short: `850ns`, `85µs`, `2.5ms`.
    Latency,
    /// A percentage: `0.1%`, `25%`.
    Percent,
    /// Seconds of a run: `0.5s`, `30s`.
    Seconds,
}

impl Unit {
    /// `v` written for an axis tick or a bar label.
    pub fn format(self, v: f64) -> String {
        match self {
            Unit::Count => si(v, ""),
            Unit::BytesPerSecond => si(v, "B/s"),
            Unit::Latency => latency(v),
            // Below a thousandth of a percent, a power-of-ten form stays short: `1e-6%`.
            Unit::Percent if v != 0.0 && v.abs() < 1e-3 => {
                let mut exp = v.abs().log10().floor();
                // log10 of a power of ten may land a hair below it.
                if v.abs() / 10f64.powf(exp) >= 9.9995 {
                    exp += 1.0;
                }
                format!("{}e{exp}%", significant(v / 10f64.powf(exp), 3))
            }
            Unit::Percent => format!("{}%", significant(v, 3)),
            Unit::Seconds => format!("{}s", significant(v, 3)),
        }
    }
}

/// `v` rounded to `digits` significant digits, without trailing zeros or a stray minus zero.
pub fn significant(v: f64, digits: i32) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if v == 0.0 {
        return "0".into();
    }
    let magnitude = v.abs().log10().floor() as i32;
    let decimals = (digits - 1 - magnitude).max(0) as usize;
    let text = format!("{v:.decimals$}");
    let text = if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.') } else { &text };
    if text == "-0" { "0".into() } else { text.to_string() }
}

/// A value with an SI prefix and `unit`, three significant digits: `350k`, `1.2 GB/s`.
pub fn si(v: f64, unit: &str) -> String {
    const PREFIXES: [(f64, &str); 4] = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
    let sep = if unit.is_empty() { "" } else { " " };
    for (scale, prefix) in PREFIXES {
        // Round first, so 999_999 reads `1M`, not `1e3k`.
        if v.abs() >= scale * 0.9995 {
            return format!("{}{sep}{prefix}{unit}", significant(v / scale, 3));
        }
    }
    format!("{}{sep}{unit}", significant(v, 3))
}

/// Nanoseconds in the unit that keeps the number short: `850ns`, `85µs`, `2.5ms`, `1.2s`.
pub fn latency(ns: f64) -> String {
    if ns == 0.0 {
        // An axis's origin: no unit needed, and `0ns` would suggest nanoseconds throughout.
        return "0".into();
    }
    let a = ns.abs();
    let (v, unit) = if a < 999.5 {
        (ns, "ns")
    } else if a < 999_500.0 {
        (ns / 1e3, "µs")
    } else if a < 999_500_000.0 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    format!("{}{unit}", significant(v, 3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_read_clean() {
        assert_eq!(significant(0.30000000000000004, 3), "0.3");
        assert_eq!(significant(0.7999999999999999, 3), "0.8");
        assert_eq!(significant(-0.0000001, 3), "-0.0000001");
        assert_eq!(significant(12345.0, 3), "12345");
        assert_eq!(significant(2.5, 3), "2.5");
        assert_eq!(Unit::Seconds.format(0.30000000000000004), "0.3s");
    }

    #[test]
    fn prefixes_and_units() {
        assert_eq!(Unit::Count.format(350_000.0), "350k");
        assert_eq!(Unit::Count.format(1_234_567.0), "1.23M");
        assert_eq!(Unit::Count.format(999_999.0), "1M");
        assert_eq!(Unit::Count.format(0.0), "0");
        assert_eq!(Unit::BytesPerSecond.format(350e6), "350 MB/s");
        assert_eq!(Unit::BytesPerSecond.format(3.2e9), "3.2 GB/s");
        assert_eq!(Unit::BytesPerSecond.format(512.0), "512 B/s");
        assert_eq!(Unit::Latency.format(100_000.0), "100µs");
        assert_eq!(Unit::Latency.format(2_500_000.0), "2.5ms");
        assert_eq!(Unit::Latency.format(999_999.0), "1ms");
        assert_eq!(Unit::Latency.format(950.0), "950ns");
        assert_eq!(Unit::Latency.format(0.0), "0");
        assert_eq!(Unit::Percent.format(0.125), "0.125%");
        assert_eq!(Unit::Percent.format(0.001), "0.001%");
        assert_eq!(Unit::Percent.format(0.000001), "1e-6%");
        for k in 4..12 {
            assert_eq!(Unit::Percent.format(10f64.powi(-k)), format!("1e-{k}%"));
        }
        assert_eq!(Unit::Percent.format(0.00025), "2.5e-4%");
    }
}

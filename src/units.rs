//! Parsing and printing of the units users type: sizes, durations, percentages and core lists.
//!
//! Sizes follow fio: suffixes are binary (`4k` = 4096, `1m` = 1 MiB) whether written `k`, `K`, `KB`
//! or `KiB`, because that is what `bs=4k` means to everyone who will type it. This module only turns
//! text into numbers; whether a number makes sense for an option is `config`'s business.

use std::fmt;
use std::time::Duration;

/// Splits fio's per-direction list (`bs`, `bssplit`, `rate`: reads, writes, trims) into the three
/// directions' texts: a value not followed by a comma carries on to the directions after it
/// (`8k,32k` gives trims 32k), and an empty one (`8k,32k,`, `,8k`) leaves its direction at the
/// option's default. `None` when more than three values are given.
pub fn per_direction(text: &str) -> Option<[&str; 3]> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return None;
    }
    let at = |i: usize| parts[i.min(parts.len() - 1)];
    Some([at(0), at(1), at(2)])
}

/// A value that is either an absolute byte count or a share of the target's size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SizeOrPercent {
    Bytes(u64),
    Percent(f64),
}

impl SizeOrPercent {
    /// Resolves against a target of `total` bytes. Percentages round down.
    pub fn resolve(self, total: u64) -> u64 {
        match self {
            SizeOrPercent::Bytes(b) => b,
            SizeOrPercent::Percent(p) => ((total as f64) * p / 100.0) as u64,
        }
    }
}

impl fmt::Display for SizeOrPercent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SizeOrPercent::Bytes(b) => f.write_str(&format_size(*b)),
            SizeOrPercent::Percent(p) => write!(f, "{p}%"),
        }
    }
}

/// Parses a byte count: `4096`, `4k`, `4K`, `4KiB`, `64KB`, `1m`, `2g`, `1t`, `512b`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    if num.is_empty() {
        return Err(format!("'{text}' is not a size; write a number with an optional unit such as 4k, 64KiB or 1g"));
    }
    let n: u64 = num.parse().map_err(|_| format!("'{text}' is too large a size"))?;
    let mult: u64 = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        "p" | "pb" | "pib" => 1 << 50,
        _ => {
            return Err(format!("'{text}' has an unknown unit '{suffix}'; use b, k, m, g, t or p (binary, as in fio)"));
        }
    };
    n.checked_mul(mult).ok_or_else(|| format!("'{text}' is too large a size"))
}

/// Parses a size or a percentage of the target (`25%`).
pub fn parse_size_or_percent(text: &str) -> Result<SizeOrPercent, String> {
    let t = text.trim();
    if let Some(p) = t.strip_suffix('%') {
        let v = parse_percent_value(p).map_err(|_| format!("'{text}' is not a percentage between 0 and 100"))?;
        return Ok(SizeOrPercent::Percent(v));
    }
    parse_size(t).map(SizeOrPercent::Bytes)
}

fn parse_percent_value(text: &str) -> Result<f64, ()> {
    let v: f64 = text.trim().parse().map_err(|_| ())?;
    if v.is_finite() && (0.0..=100.0).contains(&v) { Ok(v) } else { Err(()) }
}

/// Parses a duration: `10` (seconds, as fio's `runtime`), `10s`, `500ms`, `20us`, `100ns`, `2m`, `1h`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let v: f64 = num.parse().map_err(|_| format!("'{text}' is not a duration; write e.g. 10s, 500ms, 20us or 2m"))?;
    let secs_per_unit = match suffix {
        "" | "s" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "ns" => 1e-9,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(format!("'{text}' has an unknown time unit '{suffix}'; use ns, us, ms, s, m or h")),
    };
    let secs = v * secs_per_unit;
    if !secs.is_finite() || secs > 1e9 {
        return Err(format!("'{text}' is too long a duration"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parses a CPU list as `taskset -c` writes it: `0-3,8,10-11`.
pub fn parse_core_list(text: &str) -> Result<Vec<usize>, String> {
    let mut cores = Vec::new();
    for part in text.split(',').map(str::trim) {
        let bad = || format!("'{text}' is not a core list; write it like 0-3,8");
        if part.is_empty() {
            return Err(bad());
        }
        match part.split_once('-') {
            Some((a, b)) => {
                let a: usize = a.trim().parse().map_err(|_| bad())?;
                let b: usize = b.trim().parse().map_err(|_| bad())?;
                if a > b || b - a > 4096 {
                    return Err(format!("'{part}' in '{text}' is not an ascending core range"));
                }
                cores.extend(a..=b);
            }
            None => cores.push(part.parse().map_err(|_| bad())?),
        }
    }
    let mut seen = cores.clone();
    seen.sort_unstable();
    if let Some(w) = seen.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("core {} appears twice in '{text}'; list each core once", w[0]));
    }
    Ok(cores)
}

/// Formats a byte count the way users write it: `4k`, `64k`, `1m`, `1536` (exact, never rounded).
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(u64, &str); 5] = [(1 << 50, "p"), (1 << 40, "t"), (1 << 30, "g"), (1 << 20, "m"), (1 << 10, "k")];
    for (mult, name) in UNITS {
        if bytes >= mult && bytes % mult == 0 {
            return format!("{}{name}", bytes / mult);
        }
    }
    bytes.to_string()
}

/// Formats a byte count with a binary unit and three significant digits, for human tables.
pub fn format_bytes_human(bytes: f64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes;
    let mut i = 0;
    while v >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    format!("{v:.1}{}", UNITS[i])
}

/// A CPU mask, `0xf` or decimal, as a bit set.
pub fn parse_mask(text: &str) -> Option<u128> {
    let t = text.trim();
    let v = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u128::from_str_radix(h, 16).ok()?,
        None => t.parse().ok()?,
    };
    (v != 0).then_some(v)
}

/// A core set in fio's or SPDK's spelling: `0-3,8`, `[0-3,8]` or a mask `0xf`.
///
/// # Errors
/// A sentence naming the text when it is none of those.
pub fn parse_cpus(text: &str) -> Result<Vec<usize>, String> {
    let t = text.trim();
    if t.starts_with("0x") || t.starts_with("0X") {
        let mask = parse_mask(t).ok_or_else(|| format!("'{text}' is not a CPU mask; write it like 0xf"))?;
        return Ok((0..128).filter(|b| mask >> b & 1 == 1).collect());
    }
    let list = t.strip_prefix('[').and_then(|l| l.strip_suffix(']')).unwrap_or(t);
    parse_core_list(list)
}

#[cfg(test)]
mod tests {

    #[test]
    fn per_direction_follows_fio() {
        assert_eq!(per_direction("256k"), Some(["256k", "256k", "256k"]));
        assert_eq!(per_direction("8k,32k"), Some(["8k", "32k", "32k"]));
        assert_eq!(per_direction("8k,32k,"), Some(["8k", "32k", ""]));
        assert_eq!(per_direction(",8k"), Some(["", "8k", "8k"]));
        assert_eq!(per_direction(",8k,"), Some(["", "8k", ""]));
        assert_eq!(per_direction("8k,"), Some(["8k", "", ""]));
        assert_eq!(per_direction("1k, 2k , 3k"), Some(["1k", "2k", "3k"]));
        assert_eq!(per_direction("1k,2k,3k,4k"), None);
    }

    use super::*;

    #[test]
    fn sizes_are_binary_like_fio() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("64KB"), Ok(65536));
        assert_eq!(parse_size("1m"), Ok(1 << 20));
        assert_eq!(parse_size("2g"), Ok(2 << 30));
        assert_eq!(parse_size("512b"), Ok(512));
    }

    #[test]
    fn bad_sizes_say_why() {
        assert!(parse_size("").unwrap_err().contains("is not a size"));
        assert!(parse_size("k").unwrap_err().contains("is not a size"));
        assert!(parse_size("4x").unwrap_err().contains("unknown unit 'x'"));
        assert!(parse_size("-4k").unwrap_err().contains("is not a size"));
        assert!(parse_size("99999999999999999999").unwrap_err().contains("too large"));
        assert!(parse_size("20000p").unwrap_err().contains("too large"));
    }

    #[test]
    fn percent_or_size() {
        assert_eq!(parse_size_or_percent("25%"), Ok(SizeOrPercent::Percent(25.0)));
        assert_eq!(parse_size_or_percent("1g"), Ok(SizeOrPercent::Bytes(1 << 30)));
        assert!(parse_size_or_percent("125%").is_err());
        assert_eq!(SizeOrPercent::Percent(25.0).resolve(1000), 250);
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("20us"), Ok(Duration::from_micros(20)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("s").is_err());
    }

    #[test]
    fn core_lists() {
        assert_eq!(parse_core_list("0-3,8"), Ok(vec![0, 1, 2, 3, 8]));
        assert_eq!(parse_core_list("5"), Ok(vec![5]));
        assert!(parse_core_list("3-1").is_err());
        assert!(parse_core_list("1,,2").is_err());
        assert!(parse_core_list("a").is_err());
        assert!(parse_core_list("1,1").unwrap_err().contains("twice"));
    }

    #[test]
    fn size_formatting_is_exact() {
        assert_eq!(format_size(4096), "4k");
        assert_eq!(format_size(1536), "1536");
        assert_eq!(format_size(1 << 20), "1m");
        assert_eq!(format_size(512), "512");
    }
}

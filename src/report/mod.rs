//! Turning results into something to read: the text table (`text`, laid out by `columns`), JSON with
//! whole histograms, the live line and the step bar, and, from JSON results read back (`load`), the
//! HTML page with its charts (`charts`, drawn by `plot` and `bars`, axes written by `ticks`), one
//! chart as SVG or PNG (`raster`), CSV and Markdown tables, run names (`labels`), and merging.
//!
//! Reports read `RunResult` and `RunConfig`, or result documents; they never reach into engines or
//! workers.

pub mod bars;
pub mod charts;
pub mod columns;
pub mod diskstats;
pub mod doc;
pub mod fio;
pub mod fio_output;
pub mod fleet;
pub mod html;
pub mod json;
pub mod labels;
pub mod live;
pub mod load;
pub mod merge;
pub mod plot;
pub mod progress;
pub mod raster;
pub mod table;
pub mod telemetry;
pub mod text;
pub mod ticks;

use crate::stats::DirStats;
use std::path::{Path, PathBuf};

/// I/Os per second and bytes per second of `d` over `elapsed_ns`.
pub fn rates(d: &DirStats, elapsed_ns: u64) -> (f64, f64) {
    if elapsed_ns == 0 {
        return (0.0, 0.0);
    }
    let secs = elapsed_ns as f64 / 1e9;
    (d.ios as f64 / secs, d.bytes as f64 / secs)
}

/// A latency with a unit that keeps three or four significant digits: `85ns`, `12.34µs`, `1.234ms`.
pub fn format_latency(ns: f64) -> String {
    if ns < 1_000.0 {
        format!("{ns:.0}ns")
    } else if ns < 1_000_000.0 {
        format!("{:.2}µs", ns / 1e3)
    } else if ns < 1_000_000_000.0 {
        format!("{:.3}ms", ns / 1e6)
    } else {
        format!("{:.3}s", ns / 1e9)
    }
}

/// A count with a metric suffix and four significant digits: `987`, `12.35k`, `1.024M`.
pub fn format_count(v: f64) -> String {
    if v < 1e3 {
        format!("{v:.0}")
    } else if v < 1e6 {
        format!("{:.2}k", v / 1e3)
    } else if v < 1e9 {
        format!("{:.3}M", v / 1e6)
    } else {
        format!("{:.3}G", v / 1e9)
    }
}

/// A percentile's label the way fio's JSON keys them, shortened: `50.0`, `99.9`, `99.999`.
pub fn percentile_key(p: f64) -> String {
    let s = format!("{p}");
    if s.contains('.') { s } else { format!("{s}.0") }
}

/// Writes to stdout; a closed pipe (`nvmebench run | head`) is not an error.
pub fn write_stdout(text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(anyhow::anyhow!("cannot write to stdout: {e}")),
        _ => Ok(()),
    }
}

/// The format an output file's extension names, for the extensions that name one. Any other
/// extension (`.txt`, `.log`, none) names nothing, and any output may go there.
///
/// Every command that writes a file in a format checks the file's name against it, so that
/// `-o r.html` never holds CSV.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileFormat {
    Html,
    Csv,
    Markdown,
    Svg,
    Png,
    Json,
}

impl FileFormat {
    /// The format `path`'s extension names (in any case), if it names one.
    pub fn of_path(path: &Path) -> Option<FileFormat> {
        let ext = path.extension()?.to_string_lossy().to_ascii_lowercase();
        Some(match ext.as_str() {
            "html" | "htm" => FileFormat::Html,
            "csv" => FileFormat::Csv,
            "md" | "markdown" => FileFormat::Markdown,
            "svg" => FileFormat::Svg,
            "png" => FileFormat::Png,
            "json" => FileFormat::Json,
            _ => return None,
        })
    }

    /// The format `path`'s extension names when it is another than `self`, the one to be written
    /// (an extension that names none, like `.txt`, takes any): what a refusal names, with the
    /// path renamed for `self` to suggest.
    pub fn named_otherwise(self, path: &Path) -> Option<(FileFormat, PathBuf)> {
        FileFormat::of_path(path).filter(|named| *named != self).map(|named| (named, self.rename(path)))
    }

    /// The format's name in a sentence: `HTML`, `CSV`, ...
    pub fn name(self) -> &'static str {
        match self {
            FileFormat::Html => "HTML",
            FileFormat::Csv => "CSV",
            FileFormat::Markdown => "Markdown",
            FileFormat::Svg => "SVG",
            FileFormat::Png => "PNG",
            FileFormat::Json => "JSON",
        }
    }

    /// `path` renamed to this format's usual extension, to suggest in a refusal.
    pub fn rename(self, path: &Path) -> PathBuf {
        let ext = match self {
            FileFormat::Html => "html",
            FileFormat::Csv => "csv",
            FileFormat::Markdown => "md",
            FileFormat::Svg => "svg",
            FileFormat::Png => "png",
            FileFormat::Json => "json",
        };
        path.with_extension(ext)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_units() {
        assert_eq!(format_latency(85.0), "85ns");
        assert_eq!(format_latency(12_345.0), "12.35µs");
        assert_eq!(format_latency(1_234_567.0), "1.235ms");
        assert_eq!(format_latency(2.5e9), "2.500s");
    }

    #[test]
    fn counts_and_keys() {
        assert_eq!(format_count(987.0), "987");
        assert_eq!(format_count(12_345.0), "12.35k");
        assert_eq!(format_count(1_024_000.0), "1.024M");
        assert_eq!(percentile_key(99.0), "99.0");
        assert_eq!(percentile_key(99.99), "99.99");
        assert_eq!(percentile_key(50.0), "50.0");
    }

    #[test]
    fn file_formats_by_extension() {
        assert_eq!(FileFormat::of_path(Path::new("a/r.HTM")), Some(FileFormat::Html));
        assert_eq!(FileFormat::of_path(Path::new("r.markdown")), Some(FileFormat::Markdown));
        assert_eq!(FileFormat::of_path(Path::new("r.json")), Some(FileFormat::Json));
        for neutral in ["r.txt", "r.log", "r", ".csv"] {
            assert_eq!(FileFormat::of_path(Path::new(neutral)), None, "{neutral}");
        }
        assert_eq!(FileFormat::Csv.rename(Path::new("d/r.html")), Path::new("d/r.csv"));
        assert_eq!(FileFormat::Json.rename(Path::new("out")), Path::new("out.json"));
    }
}

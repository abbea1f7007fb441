//! The summary of loaded results as rows, one per run and direction with I/O, written as CSV (for
//! spreadsheets) or a Markdown table (for issues and reviews). The HTML report shows the same rows.
//!
//! Figures are recomputed from each run's decoded histograms and counters, so a merged or edited
//! document cannot show percentiles that disagree with its histogram.

use super::load::RunDoc;
use super::{format_count, format_latency, rates};

/// One run's one direction.
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryRow {
    pub run: String,
    pub direction: &'static str,
    pub ios: u64,
    pub iops: f64,
    /// Decimal megabytes (10^6 bytes) per second, as drive datasheets give them.
    pub mb_per_s: f64,
    pub mean_ns: f64,
    pub p99_ns: u64,
    pub p99_99_ns: u64,
    pub max_ns: u64,
    pub stddev_ns: f64,
    pub errors: u64,
}

/// The rows of every run: read and write where each had I/O (read alone for a run without any).
pub fn summary_rows(runs: &[RunDoc]) -> Vec<SummaryRow> {
    let mut rows = Vec::new();
    for r in runs {
        let with_io: Vec<usize> = (0..r.dirs.len()).filter(|&i| r.dirs[i].ios > 0).collect();
        let dirs = if with_io.is_empty() { vec![0] } else { with_io };
        for i in dirs {
            let d = &r.dirs[i];
            let (iops, bw) = rates(d, r.elapsed_ns);
            let errors = r.doc.results.total.errors.dir(i);
            rows.push(SummaryRow {
                run: r.label.clone(),
                direction: super::charts::DIRECTION_LABELS[i],
                ios: d.ios,
                iops,
                mb_per_s: bw / 1e6,
                mean_ns: d.mean_ns(),
                p99_ns: d.percentile_ns(99.0),
                p99_99_ns: d.percentile_ns(99.99),
                max_ns: d.max_ns,
                stddev_ns: d.stddev_ns(),
                errors,
            });
        }
    }
    rows
}

const CSV_HEADER: &str = "run,direction,ios,iops,mb_per_s,mean_us,p99_us,p99_99_us,max_us,stddev_us,errors";

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

/// The rows as CSV with a header; latencies in microseconds with nanosecond precision.
pub fn csv(rows: &[SummaryRow]) -> String {
    let us = |ns: f64| format!("{:.3}", ns / 1e3);
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    for r in rows {
        let fields = [
            csv_field(&r.run),
            r.direction.to_string(),
            r.ios.to_string(),
            format!("{:.1}", r.iops),
            format!("{:.3}", r.mb_per_s),
            us(r.mean_ns),
            us(r.p99_ns as f64),
            us(r.p99_99_ns as f64),
            us(r.max_ns as f64),
            us(r.stddev_ns),
            r.errors.to_string(),
        ];
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The rows as a GitHub-flavoured Markdown table, figures rounded for reading.
pub fn markdown(rows: &[SummaryRow]) -> String {
    let mut out = String::from(
        "| run | dir | IOPS | MB/s | mean | p99 | p99.99 | max | stddev | I/Os | errors |\n\
         | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {:.1} | {} | {} | {} | {} | {} | {} | {} |\n",
            md_cell(&r.run),
            r.direction,
            format_count(r.iops),
            r.mb_per_s,
            format_latency(r.mean_ns),
            format_latency(r.p99_ns as f64),
            format_latency(r.p99_99_ns as f64),
            format_latency(r.max_ns as f64),
            format_latency(r.stddev_ns),
            r.ios,
            r.errors
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(run: &str) -> SummaryRow {
        SummaryRow {
            run: run.into(),
            direction: "read",
            ios: 1000,
            iops: 12_345.67,
            mb_per_s: 50.567,
            mean_ns: 81_234.6,
            p99_ns: 120_000,
            p99_99_ns: 500_000,
            max_ns: 1_000_000,
            stddev_ns: 2_000.0,
            errors: 0,
        }
    }

    #[test]
    fn csv_quotes_what_needs_it() {
        let out = csv(&[row("a"), row("b, \"c\"")]);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], CSV_HEADER);
        assert_eq!(lines[1], "a,read,1000,12345.7,50.567,81.235,120.000,500.000,1000.000,2.000,0");
        assert!(lines[2].starts_with("\"b, \"\"c\"\"\",read,"), "{}", lines[2]);
        assert_eq!(lines[2].matches(',').count() - 1, lines[1].matches(',').count());
    }

    #[test]
    fn markdown_rows_line_up() {
        let out = markdown(&[row("x|y")]);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(
            lines[2],
            "| x\\|y | read | 12.35k | 50.6 | 81.23µs | 120.00µs | 500.00µs | 1.000ms | 2.00µs | 1000 | 0 |"
        );
        let cols = |l: &str| l.replace("\\|", "").matches('|').count();
        assert!(lines.iter().all(|l| cols(l) == cols(lines[0])));
    }
}

//! The HTML report: one self-contained page (inline CSS and SVG, no script, no URL) with the summary
//! table, each run's config, machine and device, and the plots of `plot`.
//!
//! The page is well-formed XML as well as HTML (every element closed, all text escaped), so tests can
//! parse it strictly and a browser needs nothing beyond the file. It reads loaded results only.

use super::doc::{BsSplitDoc, RandomDist, Rw};
use super::load::{ResultSet, RunDoc};
use super::plot::{self, PlotError, Series, Unit};
use super::table::{SummaryRow, summary_rows};
use super::{format_count, format_latency};
use crate::units::format_size;
use serde_json::Value;
use std::fmt::Write as _;

const STYLE: &str = "
body { font-family: sans-serif; margin: 24px auto; max-width: 1000px; color: #222; background: #fff; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: 4px; margin-top: 1.6em; }
p.meta { color: #555; margin-top: 0; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; white-space: nowrap; }
th { background: #f3f5f8; }
td.l, th.l { text-align: left; white-space: normal; }
table.kv td { text-align: left; white-space: normal; }
table.kv td:first-child { color: #555; white-space: nowrap; }
figure { margin: 12px 0 24px; }
figcaption { color: #555; font-size: 0.9em; }
svg { max-width: 100%; height: auto; }
.steady { color: #2c7a2c; font-weight: bold; }
.unsteady { color: #b02020; font-weight: bold; }
details { margin: 4px 0 12px; }
";

/// Escapes text for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Renders the whole page.
///
/// # Errors
/// A plot that cannot be drawn (which only bad numbers that `load` lets through could cause).
pub fn render(set: &ResultSet) -> Result<String, PlotError> {
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n");
    h.push_str("<title>nvmebench report</title>\n<style>");
    h.push_str(STYLE);
    h.push_str("</style>\n</head>\n<body>\n<h1>nvmebench report</h1>\n");
    let files: Vec<String> = set.files.iter().map(|f| f.display().to_string()).collect();
    let _ = writeln!(
        h,
        "<p class=\"meta\">{} run{} from {}; written by nvmebench {}.</p>",
        set.runs.len(),
        if set.runs.len() == 1 { "" } else { "s" },
        escape(&files.join(", ")),
        env!("CARGO_PKG_VERSION")
    );

    if !set.runs.is_empty() {
        h.push_str("<h2 id=\"summary\">Summary</h2>\n");
        summary_table(&mut h, &summary_rows(&set.runs));
        h.push_str("<h2 id=\"latency\">Latency</h2>\n");
        let dirs = direction_series(&set.runs);
        figure(
            &mut h,
            "percentiles",
            &plot::percentiles(&dirs)?,
            "Latency at each percentile from the whole histograms; the x axis is in nines, so the tail gets as much room as the median. Each line ends where its I/O count stops resolving further nines.",
        );
        figure(
            &mut h,
            "histogram",
            &plot::histogram(&dirs)?,
            "Share of I/Os in each latency bucket; buckets widen with latency (ten per decade).",
        );
        time_section(&mut h, &set.runs)?;
        drive_section(&mut h, &set.runs)?;
        h.push_str("<h2 id=\"runs\">Runs</h2>\n");
        for r in &set.runs {
            run_section(&mut h, r);
        }
    }
    if !set.iorate.is_empty() {
        h.push_str("<h2 id=\"iorate\">IOPS against latency</h2>\n");
        figure(
            &mut h,
            "iorate-plot",
            &plot::iorate(&set.iorate)?,
            "Mean (solid, circles) and p99 (dashed, triangles) latency at each achieved rate as the offered rate rises; the dashed vertical line marks where the curve stopped and by which rule.",
        );
        for c in &set.iorate {
            let _ = writeln!(h, "<h3>{}</h3>", escape(&c.label));
            if let Some(s) = &c.stop {
                let _ = writeln!(h, "<p>Stopped at {} IOPS: {}.</p>", format_count(s.iops), escape(&s.rule));
            }
            h.push_str("<table><tr><th>offered IOPS</th><th>achieved IOPS</th><th>mean</th><th>p99</th></tr>\n");
            for p in &c.points {
                let _ = writeln!(
                    h,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    p.target_iops.map_or("-".into(), format_count),
                    format_count(p.iops),
                    format_latency(p.mean_ns),
                    format_latency(p.p99_ns)
                );
            }
            h.push_str("</table>\n");
        }
    }
    for (i, s) in set.sweeps.iter().enumerate() {
        if i == 0 {
            h.push_str("<h2 id=\"sweeps\">Threads × queue depth</h2>\n");
        }
        let _ = writeln!(h, "<h3>{}</h3>", escape(&s.label));
        figure(&mut h, &format!("sweep-{i}"), &plot::heat_map(s)?, "IOPS in each cell; darker is faster.");
        h.push_str("<table><tr><th>threads \\ qd</th>");
        for q in &s.queue_depths {
            let _ = write!(h, "<th>{q}</th>");
        }
        h.push_str("</tr>\n");
        for (r, t) in s.threads.iter().enumerate() {
            let _ = write!(h, "<tr><th>{t}</th>");
            for (c, v) in s.iops[r].iter().enumerate() {
                let p99 = s.p99_ns.as_ref().map(|m| format!(" (p99 {})", format_latency(m[r][c])));
                let _ = write!(h, "<td>{}{}</td>", format_count(*v), p99.unwrap_or_default());
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</table>\n");
    }
    for (i, s) in set.steady_state.iter().enumerate() {
        if i == 0 {
            h.push_str("<h2 id=\"steady-state\">Steady state</h2>\n");
        }
        let _ = writeln!(h, "<h3>{}</h3>", escape(&s.label));
        match s.verdict() {
            Some(v) => {
                let _ = writeln!(
                    h,
                    "<p><span class=\"{}\">{}</span>: over rounds {}–{} the values span {:.1}% of their average (limit {:.0}%) and the best-fit line rises {:.1}% of it (limit {:.0}%).</p>",
                    if v.steady { "steady" } else { "unsteady" },
                    if v.steady { "Steady" } else { "Not steady" },
                    v.first + 1,
                    s.rounds.len(),
                    v.range_fraction * 100.0,
                    super::load::STEADY_RANGE * 100.0,
                    v.slope_fraction * 100.0,
                    super::load::STEADY_SLOPE * 100.0
                );
            }
            None => {
                let _ = writeln!(h, "<p>{} rounds so far; the window needs {}.</p>", s.rounds.len(), s.window);
            }
        }
        figure(
            &mut h,
            &format!("steady-{i}"),
            &plot::steady_state(s)?,
            "Each round's value; the shaded window holds the last rounds, with their average, the ±10% lines and the best-fit line.",
        );
    }
    h.push_str("</body>\n</html>\n");
    Ok(h)
}

fn figure(h: &mut String, id: &str, svg: &str, caption: &str) {
    let _ = writeln!(h, "<figure id=\"{id}\">\n{svg}<figcaption>{}</figcaption>\n</figure>", escape(caption));
}

/// Every run's directions with I/O, labelled `run read` / `run write`.
fn direction_series(runs: &[RunDoc]) -> Vec<(String, &crate::stats::DirStats)> {
    runs.iter()
        .flat_map(|r| {
            ["read", "write"]
                .into_iter()
                .enumerate()
                .filter(|(i, _)| r.dirs[*i].ios > 0)
                .map(move |(i, name)| (format!("{} {name}", r.label), &r.dirs[i]))
        })
        .collect()
}

fn summary_table(h: &mut String, rows: &[SummaryRow]) {
    h.push_str(
        "<table id=\"summary-table\"><tr><th class=\"l\">run</th><th class=\"l\">dir</th><th>IOPS</th><th>MB/s</th><th>mean</th><th>p99</th><th>p99.99</th><th>max</th><th>stddev</th><th>I/Os</th><th>errors</th></tr>\n",
    );
    for r in rows {
        let _ = writeln!(
            h,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&r.run),
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
        );
    }
    h.push_str("</table>\n");
    h.push_str("<p class=\"meta\">MB/s is 10<sup>6</sup> bytes per second. Percentiles, mean and stddev come from the whole histograms.</p>\n");
}

fn time_section(h: &mut String, runs: &[RunDoc]) -> Result<(), PlotError> {
    type Pick = fn(&super::doc::DirInterval) -> f64;
    let make = |pick: Pick| -> Vec<Series> {
        let mut out = Vec::new();
        for r in runs {
            for (i, name) in ["read", "write"].into_iter().enumerate() {
                if r.dirs[i].ios == 0 || r.doc.intervals.is_empty() {
                    continue;
                }
                let points =
                    r.doc.intervals.iter().map(|p| (p.t_s, pick(if i == 0 { &p.read } else { &p.write }))).collect();
                out.push(Series { label: format!("{} {name}", r.label), points });
            }
        }
        out
    };
    let iops = make(|d| d.iops);
    if iops.is_empty() {
        return Ok(());
    }
    h.push_str("<h2 id=\"time\">Over time</h2>\n");
    figure(
        h,
        "iops-time",
        &plot::time_series("IOPS per interval", "IOPS", Unit::Count, &iops)?,
        "I/Os completed in each reporting interval, per second.",
    );
    figure(
        h,
        "mbps-time",
        &plot::time_series("MB/s per interval", "MB/s", Unit::MegabytesPerSecond, &make(|d| d.bw_bytes / 1e6))?,
        "Bandwidth in each interval, in 10^6 bytes per second.",
    );
    let p99: Vec<Series> = make(|d| d.p99_ns as f64)
        .into_iter()
        .map(|mut s| {
            s.points.retain(|p| p.1 > 0.0);
            s
        })
        .collect();
    figure(
        h,
        "p99-time",
        &plot::time_series("p99 latency per interval", "p99 latency", Unit::Latency, &p99)?,
        "The 99th percentile of each interval's latencies (log scale).",
    );
    Ok(())
}

/// The drives' composite temperature and throttle state over the run, from the documents' telemetry
/// samples, on the intervals' timeline.
fn drive_section(h: &mut String, runs: &[RunDoc]) -> Result<(), PlotError> {
    let (mut temps, mut states) = (Vec::new(), Vec::new());
    for r in runs {
        for t in r.doc.telemetry.iter().flat_map(|t| &t.targets).filter(|t| !t.samples.is_empty()) {
            let label = format!("{} {}", r.label, t.target);
            let points = t.samples.iter().filter_map(|s| Some((s.t_s, f64::from(s.temperature_c?)))).collect();
            temps.push(Series { label: label.clone(), points });
            // 1 while the drive throttled (thermal management counters grew since the sample before)
            // or held a critical warning, else 0.
            let mut prev = &t.samples[0];
            let points = t
                .samples
                .iter()
                .map(|s| {
                    let throttled = (0..2).any(|i| {
                        s.thermal_transitions[i] > prev.thermal_transitions[i]
                            || s.thermal_time_s[i] > prev.thermal_time_s[i]
                    });
                    prev = s;
                    (s.t_s, f64::from(u8::from(throttled || s.critical_warning != 0)))
                })
                .collect();
            states.push(Series { label, points });
        }
    }
    if temps.is_empty() {
        return Ok(());
    }
    h.push_str("<h2 id=\"drive\">Drive telemetry over time</h2>\n");
    figure(
        h,
        "temperature-time",
        &plot::time_series("Drive composite temperature", "°C", Unit::Count, &temps)?,
        "The SMART / Health log's composite temperature at each telemetry sample (before, during and after the run).",
    );
    figure(
        h,
        "throttle-time",
        &plot::time_series("Drive throttling or critical warning", "1 = yes", Unit::Count, &states)?,
        "1 where the drive entered or spent time in thermal management since the previous sample, or held a critical warning bit.",
    );
    Ok(())
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        v => Some(v.to_string()),
    }
}

fn describe_bs(bs: &BsSplitDoc) -> String {
    let one = bs.entries.len() == 1;
    let parts: Vec<String> = bs
        .entries
        .iter()
        .map(|e| {
            let b = format_size(u64::from(e.bytes));
            if one { b } else { format!("{b}/{}", e.percent) }
        })
        .collect();
    parts.join(":")
}

/// `YYYY-MM-DD HH:MM:SS UTC` for a UNIX time (Howard Hinnant's civil-from-days).
pub fn utc(unix_s: u64) -> String {
    let days = (unix_s / 86_400) as i64;
    let secs = unix_s % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC", secs / 3600, secs / 60 % 60, secs % 60)
}

fn run_section(h: &mut String, r: &RunDoc) {
    let d = &r.doc;
    let mut kv: Vec<(&str, String)> = Vec::new();
    let mut add = |k: &'static str, v: Option<String>| {
        if let Some(v) = v.filter(|v| !v.is_empty()) {
            kv.push((k, v));
        }
    };
    add("source", Some(r.source.clone()));
    let engine_opts: Vec<String> = d.engine.options.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let name = d.engine.name.clone();
    add("engine", Some(if engine_opts.is_empty() { name } else { format!("{name} ({})", engine_opts.join(", ")) }));
    if let Some(c) = &d.config {
        let w = &c.workload;
        let rw = w.rw.name();
        let mix = matches!(w.rw, Rw::Rw | Rw::RandRw);
        add("pattern", Some(if mix { format!("{rw}, {}% reads", w.read_percent) } else { rw.to_string() }));
        let (br, bw) = (describe_bs(&w.bs_read), describe_bs(&w.bs_write));
        add("block size", Some(if br == bw { br } else { format!("{br} read, {bw} write") }));
        add("queue depth", Some(c.queue_depth.to_string()));
        let cores: Vec<String> = c.cores.iter().map(usize::to_string).collect();
        add("workers", Some(format!("{} on cores {}", cores.len(), cores.join(","))));
        let dist = match w.random_dist {
            RandomDist::Uniform => "uniform",
            RandomDist::Zipf { .. } => "zipf",
            RandomDist::Pareto { .. } => "pareto",
            RandomDist::Normal { .. } => "normal",
        };
        add("distribution", Some(dist.into()));
        add("measured", Some(format!("{:.3} s", r.elapsed_ns as f64 / 1e9)));
        add("runtime / ramp", c.runtime.map(|t| format!("{t} s / {} s", c.ramp)));
        add("I/O limit", c.ios.map(|n| n.to_string()));
        add("rate limit (IOPS)", c.rate_iops.map(|n| n.to_string()));
        add("start at (UNIX s)", c.start_at_unix_s.map(|t| t.to_string()));
        if let Some(t) = &c.target {
            add("target", Some(format!("{} ({})", t.path, t.kind.name())));
            add("target size", Some(format_size(t.size_bytes)));
            add("logical block", Some(format!("{} bytes", t.logical_block_bytes)));
            add("device", t.device.clone());
        }
    } else {
        add("measured", Some(format!("{:.3} s", r.elapsed_ns as f64 / 1e9)));
    }
    let host = &d.host;
    add("host", host.hostname.clone());
    add("kernel", host.kernel.clone());
    add(
        "cpu",
        host.cpu.clone().map(|c| match host.cpus_online {
            Some(n) => format!("{c} ({n} CPUs online)"),
            None => c,
        }),
    );
    add("clock", Some(d.clock.source.clone()));
    add("started", d.started_at_unix_s.map(utc));
    add("tool", d.tool.as_ref().map(|t| format!("nvmebench {}", t.version)));
    add("interrupted by signal", d.results.interrupted_by_signal.map(|s| s.to_string()));
    add("failure", d.results.failure.clone());
    if let Some(m) = &d.merged {
        let hosts: Vec<String> = m.inputs.iter().filter_map(|i| i.host.hostname.clone()).collect();
        add("merged from", Some(format!("{} inputs ({})", m.inputs.len(), hosts.join(", "))));
        add("merge rule", Some(m.rule.clone()));
    }
    let _ = writeln!(h, "<h3>{}</h3>\n<table class=\"kv\">", escape(&r.label));
    for (k, v) in kv {
        let _ = writeln!(h, "<tr><td>{}</td><td>{}</td></tr>", escape(k), escape(&v));
    }
    h.push_str("</table>\n");
    let Some(config) = &d.config else { return };
    h.push_str("<details><summary>full config</summary>\n<table class=\"kv\">\n");
    let mut flat = Vec::new();
    flatten("", &serde_json::to_value(config).expect("a config always serialises"), &mut flat);
    for (k, v) in flat {
        let _ = writeln!(h, "<tr><td>{}</td><td>{}</td></tr>", escape(&k), escape(&v));
    }
    h.push_str("</table>\n</details>\n");
}

/// `a.b[0].c = value` lines of a JSON value, in document order.
fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(o) => {
            for (k, v) in o {
                let p = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten(&p, v, out);
            }
        }
        Value::Array(a) if a.iter().any(|x| x.is_object() || x.is_array()) => {
            for (i, v) in a.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), v, out);
            }
        }
        Value::Array(a) => {
            out.push((prefix.into(), a.iter().map(|x| text(x).unwrap_or("null".into())).collect::<Vec<_>>().join(", ")))
        }
        v => out.push((prefix.into(), text(v).unwrap_or_else(|| "null".into()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_700_000_000), "2023-11-14 22:13:20 UTC");
    }

    #[test]
    fn escaping_and_flattening() {
        assert_eq!(escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
        let mut out = Vec::new();
        flatten("", &serde_json::json!({ "a": { "b": [1, 2] }, "c": [{ "d": null }], "e": "s" }), &mut out);
        let lines: Vec<String> = out.iter().map(|(k, v)| format!("{k}={v}")).collect();
        assert_eq!(lines, ["a.b=1, 2", "c[0].d=null", "e=s"]);
    }

    #[test]
    fn drive_temperature_and_throttling_are_drawn_over_time() {
        use crate::report::doc::{HealthSampleDoc, TelemetryDoc, TelemetryTargetDoc};
        let read = crate::stats::DirStats::default();
        // A run without I/O still has its drive drawn.
        let mut doc = crate::report::json::sample_document(&read, &read, 1_000_000_000, "h");
        let sample = |t_s, temperature_k: u16, transitions| HealthSampleDoc {
            t_s,
            temperature_c: Some(i32::from(temperature_k) - 273),
            critical_warning: 0,
            composite_temperature_k: temperature_k,
            available_spare_pct: 100,
            available_spare_threshold_pct: 10,
            percentage_used: 0,
            data_units_read: 0,
            data_units_written: 0,
            host_read_commands: 0,
            host_write_commands: 0,
            controller_busy_time_min: 0,
            power_cycles: 0,
            power_on_hours: 0,
            unsafe_shutdowns: 0,
            media_errors: 0,
            error_log_entries: 0,
            warning_temperature_time_min: 0,
            critical_temperature_time_min: 0,
            temperature_sensors_k: [0; 8],
            thermal_transitions: [transitions, 0],
            thermal_time_s: [0, 0],
        };
        doc.telemetry = Some(TelemetryDoc {
            interval_s: 1.0,
            targets: vec![TelemetryTargetDoc {
                target: "/dev/nvme0n1".into(),
                source: "kernel".into(),
                unavailable: None,
                samples: vec![sample(-0.1, 320, 0), sample(1.0, 340, 1), sample(2.1, 345, 1)],
                warnings: vec![],
                read_failure: None,
                read_failures: 0,
                error_log: None,
                error_log_unavailable: None,
            }],
        });
        let mut set = ResultSet::default();
        set.runs.push(crate::report::load::checked_sample(doc.clone(), "a"));
        let page = render(&set).expect("renders");
        assert!(page.contains("<figure id=\"temperature-time\">"), "temperature chart drawn");
        assert!(page.contains("<figure id=\"throttle-time\">"), "throttle chart drawn");

        doc.telemetry = None;
        let mut set = ResultSet::default();
        set.runs.push(crate::report::load::checked_sample(doc, "a"));
        assert!(!render(&set).expect("renders").contains("temperature-time"), "no telemetry, no chart");
    }
}

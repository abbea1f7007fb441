//! The HTML report: one self-contained page (inline CSS and SVG, no script, no URL) with the summary
//! table, each run's config, machine and device, and the plots of `plot`.
//!
//! The page is well-formed XML as well as HTML (every element closed, all text escaped), so tests can
//! parse it strictly and a browser needs nothing beyond the file. It reads loaded results only.

use super::charts::{self, Chart};
use super::columns::thousands;
use super::load::{ResultSet, RunDoc, SteadyState, Sweep};
use super::plot::PlotError;
use super::table::{SummaryRow, summary_rows};
use super::ticks;
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
div.wide { overflow-x: auto; }
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

/// What the page says beyond the results: its title, and what it leaves out for publication.
#[derive(Clone, Debug, Default)]
pub struct PageOptions {
    /// The page's heading and `<title>` (default "nvmebench report").
    pub title: Option<String>,
    /// Leave drive serial numbers out of the page.
    pub hide_serial: bool,
}

/// Renders the whole page.
///
/// # Errors
/// A plot that cannot be drawn (which only bad numbers that `load` lets through could cause).
pub fn render(set: &ResultSet, opts: &PageOptions) -> Result<String, PlotError> {
    let mut h = String::new();
    head(&mut h, set, opts);
    if !set.runs.is_empty() {
        h.push_str("<h2 id=\"summary\">Summary</h2>\n");
        summary_table(&mut h, &summary_rows(&set.runs));
        section(&mut h, "latency", "Latency", &charts::latency(&set.runs)?);
        section(&mut h, "compare", "Runs compared", &charts::comparison(&set.runs)?);
        time_section(&mut h, &set.runs)?;
        section(&mut h, "drive", "Drive telemetry over time", &charts::drive(&set.runs)?);
        section(&mut h, "breakdown", "Workers and inputs", &charts::breakdown(&set.runs)?);
        h.push_str("<h2 id=\"runs\">Runs</h2>\n");
        for r in &set.runs {
            run_section(&mut h, r, opts.hide_serial);
        }
    }
    iorate_section(&mut h, set)?;
    frontier_section(&mut h, set)?;
    for (i, s) in set.sweeps.iter().enumerate() {
        sweep_section(&mut h, i, s)?;
    }
    for (i, s) in set.steady_state.iter().enumerate() {
        steady_section(&mut h, i, s)?;
    }
    h.push_str("</body>\n</html>\n");
    Ok(h)
}

/// The document head, the heading and where the results came from.
fn head(h: &mut String, set: &ResultSet, opts: &PageOptions) {
    let title = escape(opts.title.as_deref().unwrap_or("nvmebench report"));
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n");
    let _ = writeln!(h, "<title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{title}</h1>");
    let files: Vec<String> = set.files.iter().map(|f| f.display().to_string()).collect();
    let _ = writeln!(
        h,
        "<p class=\"meta\">{} run{} from {}; written by nvmebench {}.</p>",
        set.runs.len(),
        if set.runs.len() == 1 { "" } else { "s" },
        escape(&files.join(", ")),
        env!("CARGO_PKG_VERSION")
    );
}

/// A heading and its charts; nothing when there are none.
fn section(h: &mut String, id: &str, title: &str, charts: &[Chart]) {
    if charts.is_empty() {
        return;
    }
    let _ = writeln!(h, "<h2 id=\"{id}\">{}</h2>", escape(title));
    for c in charts {
        figure(h, c);
    }
}

fn figure(h: &mut String, c: &Chart) {
    let _ =
        writeln!(h, "<figure id=\"{}\">\n{}<figcaption>{}</figcaption>\n</figure>", c.name, c.svg, escape(&c.caption));
}

fn time_section(h: &mut String, runs: &[RunDoc]) -> Result<(), PlotError> {
    let charts = charts::over_time(runs)?;
    if charts.is_empty() && runs.iter().any(|r| !r.doc.intervals.is_empty()) {
        let _ = writeln!(
            h,
            "<h2 id=\"time\">Over time</h2>\n<p>No run has {} reporting intervals or more, too few for a time series; run longer or pass a shorter --interval.</p>",
            charts::MIN_TIME_POINTS
        );
    }
    section(h, "time", "Over time", &charts);
    Ok(())
}

fn iorate_section(h: &mut String, set: &ResultSet) -> Result<(), PlotError> {
    section(h, "iorate", "IOPS against latency", &charts::iorate(set)?);
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
    Ok(())
}

/// Comparisons at several loads: the frontier chart, then per load each engine's figures and the
/// verdicts.
fn frontier_section(h: &mut String, set: &ResultSet) -> Result<(), PlotError> {
    section(h, "frontier", "Latency against CPU, per load", &charts::frontiers(set)?);
    for (label, loads) in &set.frontiers {
        let _ = writeln!(h, "<h3>{}</h3>", escape(label));
        let fixed = |v: Option<f64>| v.map_or("-".into(), |u| format!("{u:.3}"));
        let lat = |v: Option<f64>| v.map_or("-".into(), format_latency);
        for l in loads {
            let offered = l.offered_iops.map_or("closed loop".into(), |r| format!("{} IOPS offered", format_count(r)));
            let _ = writeln!(h, "<h4>load {}: {}</h4>", escape(&l.load), offered);
            h.push_str("<table><tr><th>engine</th><th>IOPS</th><th>p50</th><th>p99</th><th>p99.9</th><th>cores used</th><th>CPU per I/O</th></tr>\n");
            for e in &l.engines {
                let p = |k: &str| lat(e.lat_ns.get(k).copied().flatten());
                let _ = writeln!(
                    h,
                    "<tr><td>{}</td><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    escape(&e.engine),
                    format_count(e.iops),
                    if e.reached { "" } else { " (short of the load)" },
                    p("50.0"),
                    p("99.0"),
                    p("99.9"),
                    fixed(e.cores_used),
                    lat(e.cpu_ns_per_io)
                );
            }
            let _ = writeln!(h, "</table>\n<p>{}; {}.</p>", escape(&l.p99_verdict), escape(&l.cpu_verdict));
        }
    }
    Ok(())
}

fn sweep_section(h: &mut String, i: usize, s: &Sweep) -> Result<(), PlotError> {
    if i == 0 {
        h.push_str("<h2 id=\"sweeps\">Threads × queue depth</h2>\n");
    }
    let _ = writeln!(h, "<h3>{}</h3>", escape(&s.label));
    for c in charts::sweep(i, s)? {
        figure(h, &c);
    }
    h.push_str("<div class=\"wide\"><table><tr><th>threads \\ qd</th>");
    for q in &s.queue_depths {
        let _ = write!(h, "<th>{q}</th>");
    }
    h.push_str("</tr>\n");
    for (r, t) in s.threads.iter().enumerate() {
        let _ = write!(h, "<tr><th>{t}</th>");
        for (c, v) in s.iops[r].iter().enumerate() {
            let p99 = s.p99_ns.as_ref().map(|m| format!(" (p99 {})", ticks::latency(m[r][c])));
            let _ = write!(h, "<td>{}{}</td>", format_count(*v), p99.unwrap_or_default());
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table></div>\n");
    Ok(())
}

fn steady_section(h: &mut String, i: usize, s: &SteadyState) -> Result<(), PlotError> {
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
    figure(h, &charts::steady(i, s)?);
    Ok(())
}

fn summary_table(h: &mut String, rows: &[SummaryRow]) {
    h.push_str(
        "<table id=\"summary-table\"><tr><th class=\"l\">run</th><th class=\"l\">dir</th><th>IOPS</th><th>MB/s</th><th>mean</th><th>p99</th><th>p99.99</th><th>max</th><th>stddev</th><th>I/Os</th><th>errors</th></tr>\n",
    );
    for r in rows {
        let _ = writeln!(
            h,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&r.run),
            r.direction,
            format_count(r.iops),
            thousands(r.mb_per_s, 1),
            format_latency(r.mean_ns),
            format_latency(r.p99_ns as f64),
            format_latency(r.p99_99_ns as f64),
            format_latency(r.max_ns as f64),
            format_latency(r.stddev_ns),
            thousands(r.ios as f64, 0),
            thousands(r.errors as f64, 0)
        );
    }
    h.push_str("</table>\n");
    h.push_str("<p class=\"meta\">MB/s is 10<sup>6</sup> bytes per second. Percentiles, mean and stddev come from the whole histograms.</p>\n");
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        v => Some(v.to_string()),
    }
}

fn describe_bs(v: &Value) -> Option<String> {
    let entries = v["entries"].as_array()?;
    let parts: Vec<String> = entries
        .iter()
        .filter_map(|e| {
            let b = format_size(e["bytes"].as_u64()?);
            let p = e["percent"].as_f64()?;
            Some(if entries.len() == 1 { b } else { format!("{b}/{p}") })
        })
        .collect();
    Some(parts.join(":"))
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

/// Named facts about a run, in the order the page lists them; empty values are left out.
#[derive(Default)]
struct Facts(Vec<(&'static str, String)>);

impl Facts {
    fn add(&mut self, key: &'static str, value: Option<String>) {
        if let Some(v) = value.filter(|v| !v.is_empty()) {
            self.0.push((key, v));
        }
    }
}

/// A run's heading, its facts and its whole config (serial numbers left out if `hide_serial`).
fn run_section(h: &mut String, r: &RunDoc, hide_serial: bool) {
    let mut facts = Facts::default();
    facts.add("source", Some(r.source.clone()));
    workload_facts(&mut facts, r);
    // The facts are read from the document as JSON, so that older documents with fields the
    // types leave out still show them.
    let doc = serde_json::to_value(&r.doc).unwrap_or_default();
    target_facts(&mut facts, &doc["config"]["target"], hide_serial);
    machine_facts(&mut facts, &doc);
    let _ = writeln!(h, "<h3>{}</h3>\n<table class=\"kv\">", escape(&r.label));
    for (k, v) in facts.0 {
        let _ = writeln!(h, "<tr><td>{}</td><td>{}</td></tr>", escape(k), escape(&v));
    }
    h.push_str("</table>\n");
    fleet_table(h, r);
    target_table(h, r);
    h.push_str("<details><summary>full config</summary>\n<table class=\"kv\">\n");
    let mut flat = Vec::new();
    flatten("", &doc["config"], &mut flat);
    for (k, v) in flat.iter().filter(|(k, _)| !(hide_serial && k.ends_with("serial"))) {
        let _ = writeln!(h, "<tr><td>{}</td><td>{}</td></tr>", escape(k), escape(v));
    }
    h.push_str("</table>\n</details>\n");
}

/// A fleet's merge: a line per rank (what became of it, its clock, its gate), then what is missing
/// and every warning.
fn fleet_table(h: &mut String, r: &RunDoc) {
    let Some(f) = &r.doc.fleet else { return };
    h.push_str(
        "<table class=\"targets\"><tr><th>rank</th><th class=\"l\">state</th><th class=\"l\">host</th><th>pid</th><th class=\"l\">launcher</th><th>clock offset</th><th>gate late</th></tr>\n",
    );
    let signed = |ns: i64| {
        if ns < 0 { format!("-{}", format_latency(ns.unsigned_abs() as f64)) } else { format_latency(ns as f64) }
    };
    for k in &f.ranks {
        let clock = match (k.clock_offset_ns, k.clock_uncertainty_ns) {
            (Some(o), Some(u)) => format!("{} ± {}", signed(o), format_latency(u as f64)),
            _ => String::new(),
        };
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td></tr>",
            k.rank,
            escape(&k.state),
            escape(k.host.as_deref().unwrap_or("")),
            k.pid.map_or(String::new(), |p| p.to_string()),
            escape(k.launcher.as_deref().unwrap_or("")),
            escape(&clock),
            k.gate_late_ns.map_or(String::new(), signed)
        );
    }
    h.push_str("</table>\n");
    for line in f
        .missing
        .iter()
        .map(|m| format!("missing: {}", m.why))
        .chain(f.warnings.iter().map(|w| format!("warning: {w}")))
    {
        let _ = writeln!(h, "<p>{}</p>", escape(&line));
    }
}

/// A run on several targets: a line per target and direction (`results.targets`), then the total.
fn target_table(h: &mut String, r: &RunDoc) {
    let targets = &r.doc.results.targets;
    if targets.is_empty() {
        return;
    }
    h.push_str(
        "<table class=\"targets\"><tr><th class=\"l\">target</th><th class=\"l\">workers</th><th class=\"l\">dir</th><th>IOPS</th><th>MB/s</th><th>mean</th><th>p99</th><th>max</th><th>I/Os</th></tr>\n",
    );
    let total = ("total".to_string(), String::new(), &r.doc.results.total.read, &r.doc.results.total.write);
    let rows = targets.iter().map(|t| {
        let workers: Vec<String> = t.workers.iter().map(usize::to_string).collect();
        (t.path.clone(), workers.join(","), &t.dirs.read, &t.dirs.write)
    });
    for (name, workers, read, write) in rows.chain(std::iter::once(total)) {
        for (dir, d) in [("read", read), ("write", write)] {
            if d.ios == 0 && !(dir == "read" && write.ios == 0) {
                continue;
            }
            let p99 = d.lat_ns.percentiles.get("99.0").map_or(String::new(), |&v| format_latency(v as f64));
            let _ = writeln!(
                h,
                "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{dir}</td><td>{}</td><td>{}</td><td>{}</td><td>{p99}</td><td>{}</td><td>{}</td></tr>",
                escape(&name),
                escape(&workers),
                format_count(d.iops),
                thousands(d.bw_bytes / 1e6, 1),
                format_latency(d.lat_ns.mean),
                format_latency(d.lat_ns.max as f64),
                thousands(d.ios as f64, 0)
            );
        }
    }
    h.push_str("</table>\n");
}

/// Engine, pattern, sizes, depth, workers and timing.
fn workload_facts(f: &mut Facts, r: &RunDoc) {
    let d = &serde_json::to_value(&r.doc).unwrap_or_default();
    let c = &d["config"];
    let w = &c["workload"];
    let engine_opts: Vec<String> = d["engine"]["options"]
        .as_object()
        .map(|o| o.iter().map(|(k, v)| format!("{k}={}", text(v).unwrap_or_default())).collect())
        .unwrap_or_default();
    f.add(
        "engine",
        text(&d["engine"]["name"])
            .map(|n| if engine_opts.is_empty() { n } else { format!("{n} ({})", engine_opts.join(", ")) }),
    );
    let rw = text(&w["rw"]);
    let mixed = rw.as_deref().is_some_and(|m| m.ends_with("rw"));
    // Schema 3 writes every operation's share; a read/write mix reads as before.
    let shares: Vec<String> = w["mix"]
        .as_object()
        .filter(|m| mixed && m.keys().any(|k| k != "read" && k != "write"))
        .map(|m| {
            super::doc::DIRECTIONS
                .iter()
                .filter_map(|k| m.get(*k).map(|v| format!("{} {v}%", k.replace('_', "-"))))
                .collect()
        })
        .unwrap_or_default();
    let mix = w["read_percent"].as_u64().filter(|_| mixed);
    f.add(
        "pattern",
        rw.map(|m| match (shares.is_empty(), mix) {
            (false, _) => format!("{m}, {}", shares.join(", ")),
            (true, Some(p)) => format!("{m}, {p}% reads"),
            (true, None) => m,
        }),
    );
    f.add(
        "block size",
        describe_bs(&w["bs_read"]).map(|r| {
            let wr = describe_bs(&w["bs_write"]).unwrap_or_else(|| r.clone());
            // Documents before schema 6 sized trims as writes.
            let t = describe_bs(&w["bs_trim"]).unwrap_or_else(|| wr.clone());
            match (wr == r, t == wr) {
                (true, true) => r,
                (_, true) => format!("{r} read, {wr} write"),
                _ => format!("{r} read, {wr} write, {t} trim"),
            }
        }),
    );
    f.add("queue depth", text(&c["queue_depth"]));
    // A merge's config is its first input's: its workers are every input's.
    let workers = match &r.doc.merged {
        Some(m) => Some(format!("{} across {} merged runs", r.doc.results.workers.len(), m.inputs.len())),
        None => c["cores"].as_array().map(|a| {
            let cores: Vec<String> = a.iter().filter_map(text).collect();
            format!("{} on cores {}", a.len(), cores.join(","))
        }),
    };
    f.add("workers", workers);
    f.add("distribution", text(&w["random_dist"]["kind"]));
    f.add("measured", Some(format!("{:.3} s", r.elapsed_ns as f64 / 1e9)));
    f.add("runtime / ramp", c["runtime"].as_f64().map(|t| format!("{t} s / {} s", c["ramp"].as_f64().unwrap_or(0.0))));
    f.add("I/O limit", text(&c["ios"]));
    f.add("rate limit (IOPS)", text(&c["rate_iops"]));
    let p = &w["pacing"];
    let per_worker = |k: &str| p[k].as_u64().map(|b| format!("{}/s", format_size(b)));
    f.add("rate limit (reads, per worker)", per_worker("rate_read_bytes_per_s"));
    f.add("rate limit (writes, per worker)", per_worker("rate_write_bytes_per_s"));
    f.add("rate limit (trims, per worker)", per_worker("rate_trim_bytes_per_s"));
    let paced =
        ["rate_read_bytes_per_s", "rate_write_bytes_per_s", "rate_trim_bytes_per_s"].iter().any(|k| !p[k].is_null());
    if !c["rate_iops"].is_null() || paced {
        f.add("rate process", text(&p["rate_process"]));
    }
    f.add(
        "think time",
        p["thinktime_s"].as_f64().map(|t| {
            // Older documents, without the type, counted issues.
            let counted = if p["thinktime_blocks_type"] == "complete" { "completed" } else { "issued" };
            let blocks = p["thinktime_blocks"].as_u64().unwrap_or(1);
            format!("{} after every {blocks} I/Os {counted}", format_latency(t * 1e9))
        }),
    );
    let b = &w["buffers"];
    let pct = |k: &str| b[k].as_u64().filter(|v| *v > 0).map(|v| format!("{v}%"));
    f.add("buffers compressible", pct("compress_percent"));
    f.add("writes deduplicable", pct("dedupe_percent"));
    f.add("start at (UNIX s)", text(&c["start_at_unix_s"]));
}

/// The target and the drive behind it.
fn target_facts(f: &mut Facts, t: &Value, hide_serial: bool) {
    f.add("target", text(&t["path"]).map(|p| format!("{p} ({})", text(&t["kind"]).unwrap_or_default())));
    f.add("target size", t["size_bytes"].as_u64().map(format_size));
    f.add("logical block", t["logical_block_bytes"].as_u64().map(|b| format!("{b} bytes")));
    f.add("device", text(&t["device"]));
    f.add("model", text(&t["model"]));
    if !hide_serial {
        f.add("serial", text(&t["serial"]));
    }
    f.add("firmware", text(&t["firmware"]));
}

/// Host, clock, tool, how the run ended and what it was merged from.
fn machine_facts(f: &mut Facts, d: &Value) {
    let host = &d["host"];
    f.add("host", text(&host["hostname"]));
    f.add("kernel", text(&host["kernel"]));
    f.add(
        "cpu",
        text(&host["cpu"]).map(|c| match host["cpus_online"].as_u64() {
            Some(n) => format!("{c} ({n} CPUs online)"),
            None => c,
        }),
    );
    f.add("clock", text(&d["clock"]["source"]));
    f.add("started", d["started_at_unix_s"].as_u64().map(utc));
    f.add("tool", text(&d["tool"]["version"]).map(|v| format!("nvmebench {v}")));
    f.add("interrupted by signal", text(&d["results"]["interrupted_by_signal"]));
    f.add("failure", text(&d["results"]["failure"]));
    if let Some(inputs) = d["merged"]["inputs"].as_array() {
        let hosts: Vec<String> = inputs.iter().filter_map(|i| text(&i["host"]["hostname"])).collect();
        f.add("merged from", Some(format!("{} inputs ({})", inputs.len(), hosts.join(", "))));
        f.add("merge rule", text(&d["merged"]["rule"]));
        f.add(
            "merge notes",
            d["merged"]["notes"].as_array().map(|n| n.iter().filter_map(text).collect::<Vec<_>>().join("; ")),
        );
    }
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
        let page = render(&set, &PageOptions::default()).expect("renders");
        assert!(page.contains("<figure id=\"temperature-time\">"), "temperature chart drawn");
        assert!(page.contains("<figure id=\"throttle-time\">"), "throttle chart drawn");

        doc.telemetry = None;
        let mut set = ResultSet::default();
        set.runs.push(crate::report::load::checked_sample(doc, "a"));
        assert!(
            !render(&set, &PageOptions::default()).expect("renders").contains("temperature-time"),
            "no telemetry, no chart"
        );
    }
}

//! The report's plots, drawn with plotters into SVG strings: latency percentiles on a "nines" axis,
//! latency histograms with log-scaled buckets, time series, iorate curves, sweep heat maps and
//! steady-state rounds.
//!
//! Each function takes numbers already read from results and returns one `<svg>` element ready to
//! inline into HTML (without the XML namespace attribute, which HTML does not need, so that the page
//! holds no URL at all). Layout, titles and text around the plots are `html`'s business.

use super::format_count;
use super::load::{IorateCurve, STEADY_RANGE, STEADY_SLOPE, SteadyState, Sweep};
use crate::stats::DirStats;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Width and height of every plot, in pixels.
pub const PLOT_SIZE: (u32, u32) = (960, 440);
/// Deepest percentile the nines axis reaches: 99.99999%.
pub const MAX_NINES: f64 = 7.0;
/// Histogram buckets per decade of latency.
pub const BUCKETS_PER_DECADE: f64 = 10.0;

const FONT: &str = "sans-serif";

/// Tableau's ten colours: distinct for overlaid runs, readable on white.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// The colour of the `i`th series.
pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

#[derive(Debug, thiserror::Error)]
#[error("cannot draw the {plot} plot: {message}")]
pub struct PlotError {
    plot: &'static str,
    message: String,
}

fn err<E: std::fmt::Display>(plot: &'static str) -> impl Fn(E) -> PlotError {
    move |e| PlotError { plot, message: e.to_string() }
}

/// A named line of `(x, y)` points.
#[derive(Clone, Debug)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// Draws into an SVG string with `draw`, then strips the namespace attribute.
fn svg(
    plot: &'static str,
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), PlotError>,
) -> Result<String, PlotError> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, PLOT_SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(err(plot))?;
        draw(&root)?;
        root.present().map_err(err(plot))?;
    }
    Ok(out.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1))
}

/// A range that plotters can draw: finite, positive on a log axis, never empty.
fn span(lo: f64, hi: f64, log: bool) -> (f64, f64) {
    let (mut lo, mut hi) = if lo.is_finite() && hi.is_finite() && lo <= hi { (lo, hi) } else { (0.0, 1.0) };
    if log {
        lo = lo.max(1.0);
        hi = hi.max(lo);
        if hi / lo < 1.5 {
            lo /= 1.25;
            hi *= 1.25;
        }
    } else if hi - lo < f64::EPSILON * hi.abs().max(1.0) {
        hi = lo + lo.abs().max(1.0);
    }
    (lo, hi)
}

fn legend(c: RGBColor) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> {
    move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(3))
}

/// One labelled line per series in the palette's colours, with a dot on each point if `markers`.
fn draw_lines<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    lines: &[Series],
    markers: bool,
    plot: &'static str,
) -> Result<(), PlotError>
where
    DB: DrawingBackend + 'a,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    for (i, s) in lines.iter().enumerate() {
        let c = color(i);
        chart
            .draw_series(LineSeries::new(s.points.iter().copied(), c.stroke_width(2)))
            .map_err(err(plot))?
            .label(s.label.as_str())
            .legend(legend(c));
        if markers {
            chart.draw_series(s.points.iter().map(|&p| Circle::new(p, 3, c.filled()))).map_err(err(plot))?;
        }
    }
    Ok(())
}

/// The legend box, in the house style, at `at`.
fn draw_legend<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    at: SeriesLabelPosition,
    plot: &'static str,
) -> Result<(), PlotError>
where
    DB: DrawingBackend + 'a,
    CT: CoordTranslate,
{
    chart
        .configure_series_labels()
        .position(at)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .label_font((FONT, 14))
        .draw()
        .map_err(err(plot))
}

/// An axis label for a latency: the unit that keeps it short, without trailing zeros (`100µs`, `2.5ms`).
pub fn tick_latency(ns: f64) -> String {
    let (v, unit) = match ns {
        n if n < 1e3 => (n, "ns"),
        n if n < 1e6 => (n / 1e3, "µs"),
        n if n < 1e9 => (n / 1e6, "ms"),
        n => (n / 1e9, "s"),
    };
    let text = format!("{v:.2}");
    format!("{}{unit}", text.trim_end_matches('0').trim_end_matches('.'))
}

/// An axis label for a count: metric suffix, without trailing zeros (`500k`, `4.5M`).
pub fn tick_count(v: f64) -> String {
    let (v, unit) = match v.abs() {
        a if a < 1e3 => (v, ""),
        a if a < 1e6 => (v / 1e3, "k"),
        a if a < 1e9 => (v / 1e6, "M"),
        _ => (v / 1e9, "G"),
    };
    let text = format!("{v:.2}");
    format!("{}{unit}", text.trim_end_matches('0').trim_end_matches('.'))
}

/// The label of a point on the nines axis: `0%`, `90%`, `99%`, `99.9%`, ...
pub fn nines_label(x: f64) -> String {
    let n = x.round() as i32;
    if n <= 0 {
        return "0%".into();
    }
    format!("{:.*}%", (n - 2).max(0) as usize, 100.0 * (1.0 - 10f64.powi(-n)))
}

/// Latency against percentile on a nines axis (x = -log10(1 - q)), one line per series, each
/// reaching as deep as its I/O count allows.
pub fn percentiles(series: &[(String, &DirStats)]) -> Result<String, PlotError> {
    const P: &str = "latency percentile";
    let lines: Vec<Series> = series
        .iter()
        .filter(|(_, d)| d.ios > 0)
        .map(|(label, d)| {
            let deepest = (d.ios as f64).log10().min(MAX_NINES);
            let steps = (deepest / 0.02).ceil() as usize;
            let mut points: Vec<(f64, f64)> = (0..=steps)
                .map(|k| {
                    let x = (k as f64 * 0.02).min(deepest);
                    let q = 100.0 * (1.0 - 10f64.powf(-x));
                    (x, d.percentile_ns(q).max(1) as f64)
                })
                .collect();
            points.dedup_by(|a, b| a.0 == b.0);
            Series { label: label.clone(), points }
        })
        .collect();
    let deepest = lines.iter().flat_map(|s| s.points.last()).map(|p| p.0).fold(1.0, f64::max).ceil();
    let ys = lines.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let (lo, hi) = span(ys.clone().fold(f64::MAX, f64::min) * 0.8, ys.fold(0.0, f64::max) * 1.5, true);
    svg(P, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption("Latency by percentile", (FONT, 20))
            .margin(14)
            .margin_right(48)
            .x_label_area_size(44)
            .y_label_area_size(84)
            .build_cartesian_2d(0.0..deepest, (lo..hi).log_scale())
            .map_err(err(P))?;
        chart
            .configure_mesh()
            .light_line_style(WHITE.mix(0.0))
            .x_desc("percentile")
            .y_desc("latency")
            .x_labels(deepest as usize + 1)
            .x_label_formatter(&|x| if x.fract() == 0.0 { nines_label(*x) } else { String::new() })
            .y_labels(10)
            .y_label_formatter(&|y| tick_latency(*y))
            .draw()
            .map_err(err(P))?;
        draw_lines(&mut chart, &lines, false, P)?;
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft, P)
    })
}

/// Share of I/Os per latency bucket, buckets [`BUCKETS_PER_DECADE`] to a decade, one step line per
/// series.
pub fn histogram(series: &[(String, &DirStats)]) -> Result<String, PlotError> {
    const P: &str = "latency histogram";
    let bucket = |v: u64| (BUCKETS_PER_DECADE * (v.max(1) as f64).log10()).floor() as i32;
    let edge = |k: i32| 10f64.powf(f64::from(k) / BUCKETS_PER_DECADE);
    let counted: Vec<(String, Vec<(i32, f64)>)> = series
        .iter()
        .filter(|(_, d)| d.ios > 0)
        .map(|(label, d)| {
            let total = d.hist.len() as f64;
            let mut buckets: Vec<(i32, f64)> = Vec::new();
            for v in d.hist.iter_recorded() {
                let k = bucket(v.value_iterated_to());
                let share = 100.0 * v.count_at_value() as f64 / total;
                match buckets.last_mut() {
                    Some((last, s)) if *last == k => *s += share,
                    _ => buckets.push((k, share)),
                }
            }
            (label.clone(), buckets)
        })
        .collect();
    let kmin = counted.iter().flat_map(|(_, b)| b.first()).map(|b| b.0).min().unwrap_or(0);
    let kmax = counted.iter().flat_map(|(_, b)| b.last()).map(|b| b.0).max().unwrap_or(1);
    let top = counted.iter().flat_map(|(_, b)| b.iter().map(|x| x.1)).fold(1.0, f64::max) * 1.1;
    let lines: Vec<Series> = counted
        .into_iter()
        .map(|(label, b)| {
            let mut points = vec![(edge(kmin), 0.0)];
            for k in kmin..=kmax {
                let share = b.iter().find(|x| x.0 == k).map_or(0.0, |x| x.1);
                points.push((edge(k), share));
                points.push((edge(k + 1), share));
            }
            points.push((edge(kmax + 1), 0.0));
            Series { label, points }
        })
        .collect();
    let (xlo, xhi) = span(edge(kmin), edge(kmax + 1), true);
    svg(P, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption("Latency histogram", (FONT, 20))
            .margin(14)
            .margin_right(48)
            .x_label_area_size(44)
            .y_label_area_size(84)
            .build_cartesian_2d((xlo..xhi).log_scale(), 0.0..top)
            .map_err(err(P))?;
        chart
            .configure_mesh()
            .light_line_style(WHITE.mix(0.0))
            .x_desc(format!("latency ({} buckets per decade)", BUCKETS_PER_DECADE))
            .y_desc("share of I/Os (%)")
            .x_label_formatter(&|x| tick_latency(*x))
            .y_label_formatter(&|y| format!("{y:.0}%"))
            .draw()
            .map_err(err(P))?;
        draw_lines(&mut chart, &lines, false, P)?;
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight, P)
    })
}

/// How a time-series axis shows its values.
#[derive(Clone, Copy, Debug)]
pub enum Unit {
    Count,
    MegabytesPerSecond,
    Latency,
}

impl Unit {
    fn format(self, v: f64) -> String {
        match self {
            Unit::Count => tick_count(v),
            Unit::MegabytesPerSecond => format!("{v:.0}"),
            Unit::Latency => tick_latency(v),
        }
    }
}

/// Values over time, one line per series; latency on a log axis, rates from zero.
pub fn time_series(title: &str, y_desc: &str, unit: Unit, series: &[Series]) -> Result<String, PlotError> {
    const P: &str = "time series";
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let (xlo, xhi) = span(xs.clone().fold(f64::MAX, f64::min).min(0.0), xs.fold(0.0, f64::max), false);
    let ymax = ys.clone().fold(0.0, f64::max);
    let markers = series.iter().all(|s| s.points.len() <= 60);
    let draw = |root: &DrawingArea<SVGBackend<'_>, Shift>, log: bool| -> Result<(), PlotError> {
        let mut builder = ChartBuilder::on(root);
        builder.caption(title, (FONT, 20)).margin(14).margin_right(48).x_label_area_size(44).y_label_area_size(84);
        macro_rules! body {
            ($chart:expr) => {{
                let mut chart = $chart;
                chart
                    .configure_mesh()
                    .light_line_style(WHITE.mix(0.0))
                    .x_desc("time (s)")
                    .y_desc(y_desc)
                    .x_label_formatter(&|x| format!("{x}"))
                    .y_labels(10)
                    .y_label_formatter(&|y| unit.format(*y))
                    .draw()
                    .map_err(err(P))?;
                draw_lines(&mut chart, series, markers, P)?;
                draw_legend(&mut chart, SeriesLabelPosition::UpperRight, P)
            }};
        }
        if log {
            let ymin = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).fold(f64::MAX, f64::min);
            // Headroom above the data for the legend.
            let (lo, hi) = span(ymin * 0.8, ymax * 4.0, true);
            body!(builder.build_cartesian_2d(xlo..xhi, (lo..hi).log_scale()).map_err(err(P))?)
        } else {
            let (lo, hi) = span(0.0, ymax * (1.2 + 0.07 * series.len() as f64), false);
            body!(builder.build_cartesian_2d(xlo..xhi, lo..hi).map_err(err(P))?)
        }
    };
    svg(P, |root| draw(root, matches!(unit, Unit::Latency)))
}

/// IOPS against mean and p99 latency as the offered rate rises, with each curve's stop marked.
pub fn iorate(curves: &[IorateCurve]) -> Result<String, PlotError> {
    const P: &str = "iorate";
    let xmax = curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.iops).chain(c.stop.as_ref().map(|s| s.iops)))
        .fold(0.0, f64::max);
    let ys = curves.iter().flat_map(|c| c.points.iter().flat_map(|p| [p.mean_ns, p.p99_ns]));
    let (lo, hi) = span(ys.clone().fold(f64::MAX, f64::min) * 0.7, ys.fold(0.0, f64::max) * 1.6, true);
    let (_, xhi) = span(0.0, xmax * 1.05, false);
    svg(P, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption("IOPS against latency", (FONT, 20))
            .margin(14)
            .margin_right(48)
            .x_label_area_size(44)
            .y_label_area_size(84)
            .build_cartesian_2d(0.0..xhi, (lo..hi).log_scale())
            .map_err(err(P))?;
        chart
            .configure_mesh()
            .light_line_style(WHITE.mix(0.0))
            .x_desc("achieved IOPS")
            .y_desc("latency")
            .x_label_formatter(&|x| tick_count(*x))
            .y_labels(10)
            .y_label_formatter(&|y| tick_latency(*y))
            .draw()
            .map_err(err(P))?;
        for (i, c) in curves.iter().enumerate() {
            let col = color(i);
            let mean: Vec<(f64, f64)> = c.points.iter().map(|p| (p.iops, p.mean_ns.max(1.0))).collect();
            let p99: Vec<(f64, f64)> = c.points.iter().map(|p| (p.iops, p.p99_ns.max(1.0))).collect();
            chart
                .draw_series(LineSeries::new(mean.iter().copied(), col.stroke_width(2)))
                .map_err(err(P))?
                .label(format!("{} mean", c.label))
                .legend(legend(col));
            chart.draw_series(mean.iter().map(|&p| Circle::new(p, 4, col.filled()))).map_err(err(P))?;
            chart
                .draw_series(DashedLineSeries::new(p99.iter().copied(), 8, 5, col.stroke_width(2)))
                .map_err(err(P))?
                .label(format!("{} p99", c.label))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 8, y)], col.stroke_width(3)));
            chart.draw_series(p99.iter().map(|&p| TriangleMarker::new(p, 5, col.filled()))).map_err(err(P))?;
            if let Some(stop) = &c.stop {
                let line = vec![(stop.iops, lo), (stop.iops, hi)];
                chart.draw_series(DashedLineSeries::new(line, 4, 4, col.stroke_width(1))).map_err(err(P))?;
                let text = if stop.rule.is_empty() { "stop".to_string() } else { format!("stop: {}", stop.rule) };
                let style = TextStyle::from((FONT, 13).into_font()).color(&col).pos(Pos::new(HPos::Right, VPos::Top));
                let y = hi / (hi / lo).powf(0.04 + 0.06 * i as f64);
                chart.draw_series(std::iter::once(Text::new(text, (stop.iops, y), style))).map_err(err(P))?;
            }
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft, P)
    })
}

/// A colour from pale to deep blue for `t` in 0..=1.
fn heat(t: f64) -> RGBColor {
    let t = t.clamp(0.0, 1.0);
    let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * t).round() as u8;
    RGBColor(mix(239, 8), mix(243, 48), mix(255, 107))
}

/// A threads × queue-depth sweep as a heat map of IOPS, each cell labelled (and its p99 when known).
pub fn heat_map(s: &Sweep) -> Result<String, PlotError> {
    const P: &str = "sweep heat map";
    let (cols, rows) = (s.queue_depths.len(), s.threads.len());
    let max = s.iops.iter().flatten().copied().fold(0.0, f64::max);
    svg(P, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(format!("{}: IOPS by threads and queue depth", s.label), (FONT, 20))
            .margin(14)
            .margin_right(48)
            .x_label_area_size(44)
            .y_label_area_size(84)
            // A segmented range includes its end: `0..n - 1` has n cells.
            .build_cartesian_2d((0..cols as i32 - 1).into_segmented(), (0..rows as i32 - 1).into_segmented())
            .map_err(err(P))?;
        let name = |v: &SegmentValue<i32>, of: &[u64]| match v {
            SegmentValue::CenterOf(i) => of.get(*i as usize).map_or(String::new(), |x| x.to_string()),
            _ => String::new(),
        };
        chart
            .configure_mesh()
            .light_line_style(WHITE.mix(0.0))
            .disable_mesh()
            .x_desc("queue depth per thread")
            .y_desc("threads")
            .x_label_formatter(&|v| name(v, &s.queue_depths))
            .y_label_formatter(&|v| name(v, &s.threads))
            .draw()
            .map_err(err(P))?;
        for (r, row) in s.iops.iter().enumerate() {
            for (c, &v) in row.iter().enumerate() {
                let t = if max > 0.0 { v / max } else { 0.0 };
                let (x, y) = (c as i32, r as i32);
                let cell = [
                    (SegmentValue::Exact(x), SegmentValue::Exact(y)),
                    (SegmentValue::Exact(x + 1), SegmentValue::Exact(y + 1)),
                ];
                chart.draw_series(std::iter::once(Rectangle::new(cell, heat(t).filled()))).map_err(err(P))?;
                let ink = if t > 0.55 { WHITE } else { BLACK };
                let style =
                    TextStyle::from((FONT, 15).into_font()).color(&ink).pos(Pos::new(HPos::Center, VPos::Center));
                let p99 = s.p99_ns.as_ref().and_then(|m| m.get(r)).and_then(|row| row.get(c));
                let centre = (SegmentValue::CenterOf(x), SegmentValue::CenterOf(y));
                let mut lines = vec![(format_count(v), if p99.is_some() { -9 } else { 0 })];
                if let Some(p) = p99 {
                    lines.push((format!("p99 {}", tick_latency(*p)), 10));
                }
                chart
                    .draw_series(
                        lines.into_iter().map(|(text, dy)| {
                            EmptyElement::at(centre.clone()) + Text::new(text, (0, dy), style.clone())
                        }),
                    )
                    .map_err(err(P))?;
            }
        }
        Ok(())
    })
}

/// Steady-state rounds with the measurement window, its average, the ±10% lines (a 20% band) and
/// the best-fit line whose rise must stay within 10% of the average.
pub fn steady_state(s: &SteadyState) -> Result<String, PlotError> {
    const P: &str = "steady state";
    let n = s.rounds.len();
    let verdict = s.verdict();
    let ymax = s.rounds.iter().copied().fold(0.0, f64::max).max(verdict.map_or(0.0, |v| v.average * 1.1));
    let ymin = s.rounds.iter().copied().fold(f64::MAX, f64::min).min(verdict.map_or(f64::MAX, |v| v.average * 0.9));
    let pad = (ymax - ymin).abs().max(ymax.abs() * 0.05).max(1.0) * 0.25;
    let (lo, hi) = span((ymin - pad).max(0.0), ymax + pad, false);
    let title = match verdict {
        Some(v) if v.steady => format!("{}: steady from round {}", s.label, v.first + 1),
        Some(_) => format!("{}: not steady", s.label),
        None => format!("{}: {} of {} window rounds so far", s.label, n, s.window),
    };
    svg(P, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, 20))
            .margin(14)
            .margin_right(48)
            .x_label_area_size(44)
            .y_label_area_size(84)
            .build_cartesian_2d(0.5..n as f64 + 0.5, lo..hi)
            .map_err(err(P))?;
        chart
            .configure_mesh()
            .light_line_style(WHITE.mix(0.0))
            .x_desc("round")
            .y_desc(s.metric.as_str())
            .x_labels(n.clamp(2, 25))
            .x_label_formatter(&|x| if x.fract() == 0.0 { format!("{x:.0}") } else { String::new() })
            .y_label_formatter(&|y| tick_count(*y))
            .draw()
            .map_err(err(P))?;
        let green = RGBColor(44, 160, 44);
        let red = RGBColor(214, 39, 40);
        if let Some(v) = verdict {
            let (x0, x1) = (v.first as f64 + 0.5, n as f64 + 0.5);
            let (blo, bhi) = (v.average * (1.0 - STEADY_RANGE / 2.0), v.average * (1.0 + STEADY_RANGE / 2.0));
            chart
                .draw_series(std::iter::once(Rectangle::new([(x0, blo), (x1, bhi)], green.mix(0.12).filled())))
                .map_err(err(P))?
                .label(format!("window ±{:.0}% of average ({:.0}% band)", STEADY_RANGE * 50.0, STEADY_RANGE * 100.0))
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 20, y + 5)], green.mix(0.3).filled()));
            for level in [blo, bhi] {
                chart
                    .draw_series(DashedLineSeries::new(vec![(x0, level), (x1, level)], 6, 4, green.stroke_width(1)))
                    .map_err(err(P))?;
            }
            chart
                .draw_series(LineSeries::new(vec![(x0, v.average), (x1, v.average)], green.stroke_width(2)))
                .map_err(err(P))?
                .label(format!("window average {}", format_count(v.average)))
                .legend(legend(green));
            let fit = |i: f64| v.intercept + v.slope * i;
            let (i0, i1) = (v.first as f64, (n - 1) as f64);
            chart
                .draw_series(LineSeries::new(vec![(i0 + 1.0, fit(i0)), (i1 + 1.0, fit(i1))], red.stroke_width(2)))
                .map_err(err(P))?
                .label(format!(
                    "best fit: rises {:.1}% of average across the window (limit {:.0}%)",
                    v.slope_fraction * 100.0,
                    STEADY_SLOPE * 100.0
                ))
                .legend(legend(red));
        }
        let c = color(0);
        let pts: Vec<(f64, f64)> = s.rounds.iter().enumerate().map(|(i, &y)| (i as f64 + 1.0, y)).collect();
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))
            .map_err(err(P))?
            .label(format!("{} per round", s.metric))
            .legend(legend(c));
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 4, c.filled()))).map_err(err(P))?;
        // Rounds usually settle from one side: put the legend in the corner the first rounds left empty.
        let falling = s.rounds.first() > s.rounds.last();
        draw_legend(
            &mut chart,
            if falling { SeriesLabelPosition::UpperRight } else { SeriesLabelPosition::LowerRight },
            P,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_ticks_are_short() {
        assert_eq!(tick_latency(100_000.0), "100µs");
        assert_eq!(tick_latency(2_500_000.0), "2.5ms");
        assert_eq!(tick_latency(950.0), "950ns");
        assert_eq!(tick_latency(1e10), "10s");
        assert_eq!(tick_count(500_000.0), "500k");
        assert_eq!(tick_count(4_500_000.0), "4.5M");
        assert_eq!(tick_count(0.0), "0");
    }

    #[test]
    fn nines_axis_labels() {
        let labels: Vec<String> = (0..6).map(|n| nines_label(f64::from(n))).collect();
        assert_eq!(labels, ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%"]);
    }

    #[test]
    fn plots_are_svg_without_urls() {
        let mut d = DirStats::default();
        for v in 1..=10_000u64 {
            d.record(1_000 + v * 7, 1, 4096);
        }
        for svg in [percentiles(&[("run a".into(), &d)]).unwrap(), histogram(&[("run a".into(), &d)]).unwrap()] {
            assert!(svg.starts_with("<svg"), "{}", &svg[..80]);
            assert!(svg.trim_end().ends_with("</svg>"));
            assert!(!svg.contains("http"), "no URL, not even the namespace");
            assert!(svg.contains(">run a<") || svg.contains("run a\n"), "legend names the series");
        }
    }

    #[test]
    fn empty_and_flat_data_still_draw() {
        let d = DirStats::default();
        assert!(percentiles(&[("none".into(), &d)]).unwrap().contains("<svg"));
        let flat = Series { label: "flat".into(), points: vec![(1.0, 5.0), (2.0, 5.0)] };
        assert!(time_series("t", "y", Unit::Latency, &[flat]).unwrap().contains("flat"));
        let s = SteadyState { label: "s".into(), metric: "IOPS".into(), rounds: vec![0.0], window: 5 };
        assert!(steady_state(&s).unwrap().contains("1 of 5 window rounds"));
    }
}

//! The report's plots, drawn with plotters into SVG strings: latency percentiles on a "nines" axis,
//! latency histograms (log-scaled counts) and CDFs, time series, iorate curves, sweep heat maps and
//! steady-state rounds. Bar charts comparing runs are `bars`'.
//!
//! Each function takes numbers already read from results and returns one `<svg>` element ready to
//! inline into HTML (without the XML namespace attribute, which HTML does not need, so that the page
//! holds no URL at all). Sizes are chosen to survive being scaled down into an article: a 960 px
//! wide plot with 18 px tick labels still reads at half size. Legends sit in a strip below the
//! plot, never on the data. Layout, titles and text around the plots are `html`'s business.

use super::load::{IorateCurve, STEADY_RANGE, STEADY_SLOPE, SteadyState, Sweep};
use super::ticks::{self, Unit};
use crate::stats::DirStats;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Width and height of every plot's data area and axes, in pixels; the legend strip adds height.
pub const PLOT_SIZE: (u32, u32) = (960, 480);
/// Deepest percentile the nines axis reaches: 99.99999%.
pub const MAX_NINES: f64 = 7.0;
/// Histogram buckets per decade of latency.
pub const BUCKETS_PER_DECADE: f64 = 10.0;

pub(crate) const FONT: &str = "sans-serif";
// Font sizes as plotters takes them; its SVG backend writes them 1.24 times smaller, so tick labels
// come out near 18 px, the caption near 26 px.
pub(crate) const CAPTION_PX: u32 = 32;
pub(crate) const TICK_PX: u32 = 22;
pub(crate) const DESC_PX: u32 = 24;
pub(crate) const LEGEND_PX: u32 = 22;
const KEY_ROW_PX: u32 = 30;
const KEY_MARGIN_PX: u32 = 24;
/// A generous average glyph width of sans-serif text, as a share of the font size plotters is
/// given (0.58 of the size written), for layout.
pub(crate) const GLYPH_EM: f64 = 0.47;

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

impl PlotError {
    pub(crate) fn new(plot: &'static str, message: impl Into<String>) -> PlotError {
        PlotError { plot, message: message.into() }
    }
}

pub(crate) fn err<E: std::fmt::Display>(plot: &'static str) -> impl Fn(E) -> PlotError {
    move |e| PlotError { plot, message: e.to_string() }
}

/// A named line of `(x, y)` points.
#[derive(Clone, Debug)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// How a legend entry is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    Line,
    Dashed,
    Box,
}

/// One legend entry.
#[derive(Clone, Debug)]
pub struct Key {
    pub label: String,
    pub color: RGBColor,
    pub mark: Mark,
}

pub(crate) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Estimated width of `text` at `px`, for laying out legends and labels.
pub(crate) fn text_width(text: &str, px: u32) -> u32 {
    (text.chars().count() as f64 * f64::from(px) * GLYPH_EM).ceil() as u32
}

/// `text` cut to `max_px` wide with an ellipsis, so a long run name cannot leave the image.
pub(crate) fn fit(text: &str, px: u32, max_px: u32) -> String {
    let max_chars = (f64::from(max_px) / (f64::from(px) * GLYPH_EM)).floor() as usize;
    if text.chars().count() <= max_chars {
        return text.to_string();
    }
    let kept: String = text.chars().take(max_chars.saturating_sub(1)).collect();
    format!("{kept}…")
}

fn key_width(k: &Key) -> u32 {
    40 + text_width(&k.label, LEGEND_PX) + 28
}

/// The legend's entries in rows that fit the plot's width.
fn key_rows(keys: &[Key]) -> Vec<Vec<Key>> {
    let room = PLOT_SIZE.0 - 2 * KEY_MARGIN_PX;
    let mut rows: Vec<Vec<Key>> = Vec::new();
    let mut used = 0;
    for k in keys {
        let k = Key { label: fit(&k.label, LEGEND_PX, room - 68), ..k.clone() };
        let w = key_width(&k);
        match rows.last_mut() {
            Some(row) if used + w <= room => row.push(k),
            _ => {
                rows.push(vec![k]);
                used = 0;
            }
        }
        used += w;
    }
    rows
}

fn draw_keys(area: &Area<'_>, rows: &[Vec<Key>]) -> Result<(), PlotError> {
    const P: &str = "legend";
    let style = TextStyle::from((FONT, LEGEND_PX).into_font()).color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
    for (r, row) in rows.iter().enumerate() {
        let y = (KEY_ROW_PX * r as u32 + KEY_ROW_PX / 2 + 4) as i32;
        let mut x = KEY_MARGIN_PX as i32;
        for k in row {
            match k.mark {
                Mark::Line => area.draw(&PathElement::new(vec![(x, y), (x + 30, y)], k.color.stroke_width(3))),
                Mark::Dashed => {
                    for dx in [0, 12, 24] {
                        area.draw(&PathElement::new(vec![(x + dx, y), (x + dx + 7, y)], k.color.stroke_width(3)))
                            .map_err(err(P))?;
                    }
                    Ok(())
                }
                Mark::Box => area.draw(&Rectangle::new([(x, y - 8), (x + 30, y + 8)], k.color.mix(0.6).filled())),
            }
            .map_err(err(P))?;
            area.draw(&Text::new(k.label.clone(), (x + 40, y), style.clone())).map_err(err(P))?;
            x += key_width(k) as i32;
        }
    }
    Ok(())
}

/// Draws into an SVG string with `draw`, with `keys` as a legend strip below, then strips the
/// namespace attribute.
pub(crate) fn svg(
    plot: &'static str,
    keys: &[Key],
    draw: impl FnOnce(&Area<'_>) -> Result<(), PlotError>,
) -> Result<String, PlotError> {
    let rows = key_rows(keys);
    let legend_px = if rows.is_empty() { 0 } else { KEY_ROW_PX * rows.len() as u32 + 12 };
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (PLOT_SIZE.0, PLOT_SIZE.1 + legend_px)).into_drawing_area();
        root.fill(&WHITE).map_err(err(plot))?;
        let (chart, legend) = root.split_vertically(PLOT_SIZE.1);
        draw(&chart)?;
        draw_keys(&legend, &rows)?;
        root.present().map_err(err(plot))?;
    }
    Ok(out.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1))
}

/// The chart frame every plot shares: caption, margins and room for tick labels.
pub(crate) fn frame<'a, 'b>(area: &'a Area<'b>, title: &str) -> ChartBuilder<'a, 'b, SVGBackend<'b>> {
    let mut b = ChartBuilder::on(area);
    b.caption(fit(title, CAPTION_PX, PLOT_SIZE.0 - 40), (FONT, CAPTION_PX))
        .margin(16)
        .margin_right(72)
        .x_label_area_size(56)
        .y_label_area_size(112);
    b
}

/// A range that plotters can draw: finite, positive on a log axis, never empty.
pub(crate) fn span(lo: f64, hi: f64, log: bool) -> (f64, f64) {
    let (mut lo, mut hi) = if lo.is_finite() && hi.is_finite() && lo <= hi { (lo, hi) } else { (0.0, 1.0) };
    if log {
        lo = lo.max(1e-9);
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

/// One legend entry per series, solid lines in the palette's colours.
fn line_keys(lines: &[Series]) -> Vec<Key> {
    lines.iter().enumerate().map(|(i, s)| Key { label: s.label.clone(), color: color(i), mark: Mark::Line }).collect()
}

/// One line per series in the palette's colours, with a dot on each point if `markers`.
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
        chart.draw_series(LineSeries::new(s.points.iter().copied(), c.stroke_width(2))).map_err(err(plot))?;
        if markers {
            chart.draw_series(s.points.iter().map(|&p| Circle::new(p, 4, c.filled()))).map_err(err(plot))?;
        }
    }
    Ok(())
}

/// An axis label for a latency: the unit that keeps it short (`100µs`, `2.5ms`).
pub fn tick_latency(ns: f64) -> String {
    ticks::latency(ns)
}

/// An axis label for a count: metric suffix, three significant digits (`500k`, `4.5M`).
pub fn tick_count(v: f64) -> String {
    ticks::si(v, "")
}

/// Labels asked of plotters for a log axis: enough that within a decade or two it offers the 2s
/// and 5s (and more) between the powers of ten, of which [`log_label`] keeps 1, 2 and 5.
pub(crate) const LOG_LABELS: usize = 20;

/// Labels of a log axis: `format(v)` where `v` is 1, 2 or 5 times a power of ten, nothing
/// elsewhere, so ticks read well and do not crowd the top of a decade. Plotters offers each power
/// of ten twice (as the last light point of one decade and the first of the next), one after the
/// other; the repeat gets no label, so no two labels are drawn on one spot.
#[derive(Default)]
pub(crate) struct LogLabels {
    last: std::cell::Cell<f64>,
}

impl LogLabels {
    pub(crate) fn label(&self, v: f64, format: impl Fn(f64) -> String) -> String {
        let repeat = (v - self.last.get()).abs() <= 1e-9 * v.abs();
        self.last.set(v);
        if repeat { String::new() } else { log_label(v, format) }
    }
}

/// `format(v)` where `v` is 1, 2 or 5 times a power of ten, nothing elsewhere.
pub(crate) fn log_label(v: f64, format: impl Fn(f64) -> String) -> String {
    if v <= 0.0 || !v.is_finite() {
        return String::new();
    }
    let mantissa = v / 10f64.powf(v.log10().floor());
    let near = |m: f64| (mantissa - m).abs() < 1e-6 * m || (mantissa - 10.0 * m).abs() < 1e-5 * m;
    if near(1.0) || near(2.0) || near(5.0) { format(v) } else { String::new() }
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
    let ylog = LogLabels::default();
    svg(P, &line_keys(&lines), |root| {
        let mut chart = frame(root, "Latency by percentile")
            .build_cartesian_2d(0.0..deepest, (lo..hi).log_scale())
            .map_err(err(P))?;
        chart
            .configure_mesh()
            .light_line_style(WHITE.mix(0.0))
            .label_style((FONT, TICK_PX))
            .axis_desc_style((FONT, DESC_PX))
            .x_desc("percentile (nines)")
            .y_desc("latency")
            .x_labels(deepest as usize + 1)
            .x_label_formatter(&|x| if x.fract() == 0.0 { nines_label(*x) } else { String::new() })
            .y_labels(LOG_LABELS)
            .y_label_formatter(&|y| ylog.label(*y, tick_latency))
            .draw()
            .map_err(err(P))?;
        draw_lines(&mut chart, &lines, false, P)
    })
}

/// Share of I/Os per latency bucket, [`BUCKETS_PER_DECADE`] buckets to a decade, one step line per
/// series, on a log scale so that a tail of a few I/Os in a million still shows.
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
    let shares = counted.iter().flat_map(|(_, b)| b.iter().map(|x| x.1)).filter(|s| *s > 0.0);
    // The floor sits a factor below the smallest share, so a bucket of one I/O stands clear of it.
    let floor = shares.clone().fold(100.0, f64::min) / 3.0;
    let (ylo, yhi) = span(floor, 100.0, true);
    let lines: Vec<Series> = counted
        .into_iter()
        .map(|(label, b)| {
            let at = |k: i32| b.iter().find(|x| x.0 == k).map_or(ylo, |x| x.1.max(ylo));
            let mut points = vec![(edge(kmin), ylo)];
            for k in kmin..=kmax {
                points.push((edge(k), at(k)));
                points.push((edge(k + 1), at(k)));
            }
            points.push((edge(kmax + 1), ylo));
            Series { label, points }
        })
        .collect();
    let (xlo, xhi) = span(edge(kmin), edge(kmax + 1), true);
    let xlog = LogLabels::default();
    let ylog = LogLabels::default();
    svg(P, &line_keys(&lines), |root| {
        let mut chart = frame(root, "Latency histogram")
            .build_cartesian_2d((xlo..xhi).log_scale(), (ylo..yhi).log_scale())
            .map_err(err(P))?;
        chart
            .configure_mesh()
            .light_line_style(WHITE.mix(0.0))
            .label_style((FONT, TICK_PX))
            .axis_desc_style((FONT, DESC_PX))
            .x_desc(format!("latency ({BUCKETS_PER_DECADE} buckets per decade)"))
            .y_desc("share of I/Os (log)")
            .x_labels(LOG_LABELS)
            .x_label_formatter(&|x| xlog.label(*x, tick_latency))
            .y_labels(LOG_LABELS)
            .y_label_formatter(&|y| ylog.label(*y, |v| Unit::Percent.format(v)))
            .draw()
            .map_err(err(P))?;
        draw_lines(&mut chart, &lines, false, P)
    })
}

/// Cumulative share of I/Os at or below each latency (a CDF), one line per series.
pub fn cdf(series: &[(String, &DirStats)]) -> Result<String, PlotError> {
    const P: &str = "latency CDF";
    // Forty points to a decade are smooth at this size and keep the SVG small.
    let step = |v: u64| (40.0 * (v.max(1) as f64).log10()).floor() as i64;
    let lines: Vec<Series> = series
        .iter()
        .filter(|(_, d)| d.ios > 0)
        .map(|(label, d)| {
            let total = d.hist.len() as f64;
            let mut seen = 0u64;
            let mut points: Vec<(f64, f64)> = Vec::new();
            let mut last_step = None;
            for v in d.hist.iter_recorded() {
                seen += v.count_at_value();
                let x = v.value_iterated_to().max(1);
                let point = (x as f64, 100.0 * seen as f64 / total);
                if last_step == Some(step(x)) {
                    *points.last_mut().expect("a step was pushed") = point;
                } else {
                    points.push(point);
                }
                last_step = Some(step(x));
            }
            Series { label: label.clone(), points }
        })
        .collect();
    let xs = lines.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let (xlo, xhi) = span(xs.clone().fold(f64::MAX, f64::min) * 0.9, xs.fold(0.0, f64::max) * 1.1, true);
    let xlog = LogLabels::default();
    svg(P, &line_keys(&lines), |root| {
        let mut chart =
            frame(root, "Latency CDF").build_cartesian_2d((xlo..xhi).log_scale(), 0.0..100.0).map_err(err(P))?;
        chart
            .configure_mesh()
            .light_line_style(WHITE.mix(0.0))
            .label_style((FONT, TICK_PX))
            .axis_desc_style((FONT, DESC_PX))
            .x_desc("latency")
            .y_desc("I/Os at or below (%)")
            .x_labels(LOG_LABELS)
            .x_label_formatter(&|x| xlog.label(*x, tick_latency))
            .y_labels(6)
            .y_label_formatter(&|y| Unit::Percent.format(*y))
            .draw()
            .map_err(err(P))?;
        draw_lines(&mut chart, &lines, false, P)
    })
}

/// Values over time, one line per series; latency on a log axis, rates from zero.
pub fn time_series(title: &str, y_desc: &str, unit: Unit, series: &[Series]) -> Result<String, PlotError> {
    const P: &str = "time series";
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let (xlo, xhi) = span(xs.clone().fold(f64::MAX, f64::min).min(0.0), xs.fold(0.0, f64::max), false);
    let ymax = ys.clone().fold(0.0, f64::max);
    let ymin = ys.fold(f64::MAX, f64::min);
    let markers = series.iter().all(|s| s.points.len() <= 60);
    let keys = line_keys(series);
    let ylog = LogLabels::default();
    let draw = |root: &Area<'_>, log: bool| -> Result<(), PlotError> {
        let builder = frame(root, title);
        macro_rules! body {
            ($chart:expr) => {{
                let mut chart = $chart;
                chart
                    .configure_mesh()
                    .light_line_style(WHITE.mix(0.0))
                    .label_style((FONT, TICK_PX))
                    .axis_desc_style((FONT, DESC_PX))
                    .x_desc("time")
                    .y_desc(y_desc)
                    .x_labels(10)
                    .x_label_formatter(&|x| Unit::Seconds.format(*x))
                    .y_labels(if log { LOG_LABELS } else { 8 })
                    .y_label_formatter(&|y| if log { ylog.label(*y, |v| unit.format(v)) } else { unit.format(*y) })
                    .draw()
                    .map_err(err(P))?;
                draw_lines(&mut chart, series, markers, P)
            }};
        }
        if log {
            let (lo, hi) = span(ymin * 0.8, ymax * 1.5, true);
            let mut builder = builder;
            body!(builder.build_cartesian_2d(xlo..xhi, (lo..hi).log_scale()).map_err(err(P))?)
        } else {
            let (lo, hi) = span(0.0, ymax * 1.1, false);
            let mut builder = builder;
            body!(builder.build_cartesian_2d(xlo..xhi, lo..hi).map_err(err(P))?)
        }
    };
    svg(P, &keys, |root| draw(root, matches!(unit, Unit::Latency)))
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
    let keys: Vec<Key> = curves
        .iter()
        .enumerate()
        .flat_map(|(i, c)| {
            [
                Key { label: format!("{} mean", c.label), color: color(i), mark: Mark::Line },
                Key { label: format!("{} p99", c.label), color: color(i), mark: Mark::Dashed },
            ]
        })
        .collect();
    let ylog = LogLabels::default();
    svg(P, &keys, |root| {
        let mut chart =
            frame(root, "IOPS against latency").build_cartesian_2d(0.0..xhi, (lo..hi).log_scale()).map_err(err(P))?;
        chart
            .configure_mesh()
            .light_line_style(WHITE.mix(0.0))
            .label_style((FONT, TICK_PX))
            .axis_desc_style((FONT, DESC_PX))
            .x_desc("achieved IOPS")
            .y_desc("latency")
            .x_labels(8)
            .x_label_formatter(&|x| tick_count(*x))
            .y_labels(LOG_LABELS)
            .y_label_formatter(&|y| ylog.label(*y, tick_latency))
            .draw()
            .map_err(err(P))?;
        for (i, c) in curves.iter().enumerate() {
            let col = color(i);
            let mean: Vec<(f64, f64)> = c.points.iter().map(|p| (p.iops, p.mean_ns.max(1.0))).collect();
            let p99: Vec<(f64, f64)> = c.points.iter().map(|p| (p.iops, p.p99_ns.max(1.0))).collect();
            chart.draw_series(LineSeries::new(mean.iter().copied(), col.stroke_width(2))).map_err(err(P))?;
            chart.draw_series(mean.iter().map(|&p| Circle::new(p, 4, col.filled()))).map_err(err(P))?;
            chart.draw_series(DashedLineSeries::new(p99.iter().copied(), 8, 5, col.stroke_width(2))).map_err(err(P))?;
            chart.draw_series(p99.iter().map(|&p| TriangleMarker::new(p, 5, col.filled()))).map_err(err(P))?;
            if let Some(stop) = &c.stop {
                let line = vec![(stop.iops, lo), (stop.iops, hi)];
                chart.draw_series(DashedLineSeries::new(line, 4, 4, col.stroke_width(1))).map_err(err(P))?;
                let text = if stop.rule.is_empty() { "stop".to_string() } else { format!("stop: {}", stop.rule) };
                // The note reads away from the nearer edge, so it stays inside the plot.
                let side = if stop.iops > xhi / 2.0 { HPos::Right } else { HPos::Left };
                let style = TextStyle::from((FONT, TICK_PX).into_font()).color(&col).pos(Pos::new(side, VPos::Top));
                let y = hi / (hi / lo).powf(0.03 + 0.07 * i as f64);
                chart.draw_series(std::iter::once(Text::new(text, (stop.iops, y), style))).map_err(err(P))?;
            }
        }
        Ok(())
    })
}

/// One engine's points on the efficiency frontier: `(load label, cores used, p99 ns)`, in the order
/// of its loads.
#[derive(Clone, Debug)]
pub struct FrontierLine {
    pub engine: String,
    pub points: Vec<(String, f64, f64)>,
}

/// p99 latency against the cores used, one line per engine through its loads, each point labelled
/// with its load: the lower left is the better trade.
pub fn frontier(title: &str, lines: &[FrontierLine]) -> Result<String, PlotError> {
    const P: &str = "frontier";
    let xmax = lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)).fold(0.0, f64::max);
    let ys = lines.iter().flat_map(|l| l.points.iter().map(|p| p.2));
    let (lo, hi) = span(ys.clone().fold(f64::MAX, f64::min) * 0.7, ys.fold(0.0, f64::max) * 1.6, true);
    let (_, xhi) = span(0.0, xmax * 1.1, false);
    let keys: Vec<Key> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| Key { label: l.engine.clone(), color: color(i), mark: Mark::Line })
        .collect();
    let ylog = LogLabels::default();
    svg(P, &keys, |root| {
        let mut chart = frame(root, title).build_cartesian_2d(0.0..xhi, (lo..hi).log_scale()).map_err(err(P))?;
        chart
            .configure_mesh()
            .light_line_style(WHITE.mix(0.0))
            .label_style((FONT, TICK_PX))
            .axis_desc_style((FONT, DESC_PX))
            .x_desc("cores used (CPU-seconds per second)")
            .y_desc("p99 latency")
            .x_labels(8)
            .x_label_formatter(&|x| format!("{x:.2}"))
            .y_labels(LOG_LABELS)
            .y_label_formatter(&|y| ylog.label(*y, tick_latency))
            .draw()
            .map_err(err(P))?;
        for (i, l) in lines.iter().enumerate() {
            let col = color(i);
            let pts: Vec<(f64, f64)> = l.points.iter().map(|p| (p.1, p.2.max(1.0))).collect();
            chart.draw_series(LineSeries::new(pts.iter().copied(), col.stroke_width(2))).map_err(err(P))?;
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 5, col.filled()))).map_err(err(P))?;
            let style =
                TextStyle::from((FONT, TICK_PX).into_font()).color(&col).pos(Pos::new(HPos::Left, VPos::Bottom));
            chart
                .draw_series(
                    l.points.iter().zip(&pts).map(|(p, &at)| Text::new(format!(" {}", p.0), at, style.clone())),
                )
                .map_err(err(P))?;
        }
        Ok(())
    })
}

/// A colour from pale to deep blue for `t` in 0..=1.
fn heat(t: f64) -> RGBColor {
    let t = t.clamp(0.0, 1.0);
    let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * t).round() as u8;
    RGBColor(mix(239, 8), mix(243, 48), mix(255, 107))
}

/// A threads × queue-depth sweep as a heat map of IOPS, each cell labelled (and its p99 when known).
///
/// # Errors
/// A sweep with a single thread count or queue depth (its cells would have no height or width; the
/// bar charts of `bars` draw it instead).
pub fn heat_map(s: &Sweep) -> Result<String, PlotError> {
    const P: &str = "sweep heat map";
    let (cols, rows) = (s.queue_depths.len(), s.threads.len());
    if cols < 2 || rows < 2 {
        return Err(PlotError::new(P, "a heat map needs at least two thread counts and two queue depths"));
    }
    let max = s.iops.iter().flatten().copied().fold(0.0, f64::max);
    // Two lines of text must fit a cell: shrink the font for crowded sweeps.
    let cell_px = (PLOT_SIZE.0 - 170) / cols as u32;
    let label_px = (cell_px / 6).clamp(11, TICK_PX);
    svg(P, &[], |root| {
        let mut chart = frame(root, &format!("{}: IOPS by threads and queue depth", s.label))
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
            .label_style((FONT, TICK_PX))
            .axis_desc_style((FONT, DESC_PX))
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
                    TextStyle::from((FONT, label_px).into_font()).color(&ink).pos(Pos::new(HPos::Center, VPos::Center));
                let p99 = s.p99_ns.as_ref().and_then(|m| m.get(r)).and_then(|row| row.get(c));
                let centre = (SegmentValue::CenterOf(x), SegmentValue::CenterOf(y));
                let dy = (label_px / 2 + 2) as i32;
                let mut lines = vec![(tick_count(v), if p99.is_some() { -dy } else { 0 })];
                if let Some(p) = p99 {
                    lines.push((format!("p99 {}", tick_latency(*p)), dy));
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
    let green = RGBColor(44, 160, 44);
    let red = RGBColor(214, 39, 40);
    let mut keys = Vec::new();
    if let Some(v) = verdict {
        keys.push(Key {
            label: format!("window ±{:.0}% of average ({:.0}% band)", STEADY_RANGE * 50.0, STEADY_RANGE * 100.0),
            color: green,
            mark: Mark::Box,
        });
        keys.push(Key { label: format!("window average {}", tick_count(v.average)), color: green, mark: Mark::Line });
        keys.push(Key {
            label: format!(
                "best fit: rises {:.1}% of average across the window (limit {:.0}%)",
                v.slope_fraction * 100.0,
                STEADY_SLOPE * 100.0
            ),
            color: red,
            mark: Mark::Line,
        });
    }
    keys.push(Key { label: format!("{} per round", s.metric), color: color(0), mark: Mark::Line });
    svg(P, &keys, |root| {
        let mut chart = frame(root, &title).build_cartesian_2d(0.5..n as f64 + 0.5, lo..hi).map_err(err(P))?;
        chart
            .configure_mesh()
            .light_line_style(WHITE.mix(0.0))
            .label_style((FONT, TICK_PX))
            .axis_desc_style((FONT, DESC_PX))
            .x_desc("round")
            .y_desc(s.metric.as_str())
            .x_labels(n.clamp(2, 16))
            .x_label_formatter(&|x| if x.fract() == 0.0 { format!("{x:.0}") } else { String::new() })
            .y_label_formatter(&|y| tick_count(*y))
            .draw()
            .map_err(err(P))?;
        if let Some(v) = verdict {
            let (x0, x1) = (v.first as f64 + 0.5, n as f64 + 0.5);
            let (blo, bhi) = (v.average * (1.0 - STEADY_RANGE / 2.0), v.average * (1.0 + STEADY_RANGE / 2.0));
            chart
                .draw_series(std::iter::once(Rectangle::new([(x0, blo), (x1, bhi)], green.mix(0.12).filled())))
                .map_err(err(P))?;
            for level in [blo, bhi] {
                chart
                    .draw_series(DashedLineSeries::new(vec![(x0, level), (x1, level)], 6, 4, green.stroke_width(1)))
                    .map_err(err(P))?;
            }
            chart
                .draw_series(LineSeries::new(vec![(x0, v.average), (x1, v.average)], green.stroke_width(2)))
                .map_err(err(P))?;
            let fit = |i: f64| v.intercept + v.slope * i;
            let (i0, i1) = (v.first as f64, (n - 1) as f64);
            chart
                .draw_series(LineSeries::new(vec![(i0 + 1.0, fit(i0)), (i1 + 1.0, fit(i1))], red.stroke_width(2)))
                .map_err(err(P))?;
        }
        let c = color(0);
        let pts: Vec<(f64, f64)> = s.rounds.iter().enumerate().map(|(i, &y)| (i as f64 + 1.0, y)).collect();
        chart.draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2))).map_err(err(P))?;
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 4, c.filled()))).map_err(err(P))?;
        Ok(())
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
    fn log_axes_label_ones_twos_and_fives() {
        let labels: Vec<String> =
            [100e3, 200e3, 300e3, 500e3, 700e3, 1e6, 2e6].iter().map(|v| log_label(*v, tick_latency)).collect();
        assert_eq!(labels, ["100µs", "200µs", "", "500µs", "", "1ms", "2ms"]);
        assert_eq!(log_label(0.0, tick_latency), "");
        assert_eq!(log_label(0.001, |v| Unit::Percent.format(v)), "0.001%");
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

//! Grouped bar charts: runs side by side (IOPS, MB/s, mean, p99, p99.99 by run and direction),
//! sweeps by queue depth and thread count, and per-worker or per-input breakdowns.
//!
//! One function draws any of them from a [`Bars`] table; which tables a report holds is `charts`'
//! business. Values are written above the bars when they fit, so a reader does not have to read
//! them off the axis.

use super::plot::{self, Area, FONT, Key, Mark, PLOT_SIZE, PlotError, TICK_PX, err, fit, frame, span, text_width};
use super::ticks::Unit;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// A table of bars: `values[group][series]`, `None` where a group has no such series.
#[derive(Clone, Debug)]
pub struct Bars {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub unit: Unit,
    /// Along the x axis: runs, queue depths, workers.
    pub groups: Vec<String>,
    /// Within each group, in the palette's colours: directions, thread counts, runs.
    pub series: Vec<String>,
    pub values: Vec<Vec<Option<f64>>>,
}

/// Value labels above bars: smaller than tick labels, still readable at half size.
const VALUE_PX: u32 = 20;
/// Width of the plotting area (the frame's margins and y label area taken off).
const DATA_PX: u32 = PLOT_SIZE.0 - 170;

/// Draws `b` as grouped bars from zero, the value above each bar where it fits.
pub fn bars(b: &Bars) -> Result<String, PlotError> {
    const P: &str = "bar chart";
    let n = b.groups.len().max(1);
    let per_group = b.series.len().max(1);
    let width = 0.8 / per_group as f64;
    let max = b.values.iter().flatten().flatten().copied().fold(0.0, f64::max);
    let (_, top) = span(0.0, max * 1.15, false);
    let group_px = DATA_PX / n as u32;
    let bar_px = (f64::from(group_px) * width) as u32;
    let labelled = b.values.iter().flatten().flatten().all(|v| text_width(&b.unit.format(*v), VALUE_PX) + 4 <= bar_px);
    let keys: Vec<Key> = if b.series.len() > 1 {
        b.series
            .iter()
            .enumerate()
            .map(|(i, s)| Key { label: s.clone(), color: plot::color(i), mark: Mark::Box })
            .collect()
    } else {
        Vec::new()
    };
    let names: Vec<String> = b.groups.iter().map(|g| fit(g, TICK_PX, group_px.saturating_sub(8))).collect();
    plot::svg(P, &keys, |root: &Area<'_>| {
        let mut chart = frame(root, &b.title).build_cartesian_2d(-0.5..n as f64 - 0.5, 0.0..top).map_err(err(P))?;
        chart
            .configure_mesh()
            .light_line_style(WHITE.mix(0.0))
            .disable_x_mesh()
            .label_style((FONT, TICK_PX))
            .axis_desc_style((FONT, plot::DESC_PX))
            .x_desc(b.x_desc.as_str())
            .y_desc(b.y_desc.as_str())
            // Asked for as many labels as groups, plotters puts them on the whole numbers: the centres.
            .x_labels(n)
            .x_label_formatter(&|x| {
                if (x - x.round()).abs() < 1e-6 {
                    names.get(x.round() as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .y_labels(8)
            .y_label_formatter(&|y| b.unit.format(*y))
            .draw()
            .map_err(err(P))?;
        let style =
            TextStyle::from((FONT, VALUE_PX).into_font()).color(&BLACK).pos(Pos::new(HPos::Center, VPos::Bottom));
        for (g, row) in b.values.iter().enumerate() {
            for (s, v) in row.iter().enumerate() {
                let Some(v) = *v else { continue };
                let x0 = g as f64 - 0.4 + s as f64 * width;
                let bar = Rectangle::new([(x0, 0.0), (x0 + width * 0.92, v)], plot::color(s).filled());
                chart.draw_series(std::iter::once(bar)).map_err(err(P))?;
                if labelled {
                    let at = (x0 + width * 0.46, v);
                    let text = EmptyElement::at(at) + Text::new(b.unit.format(v), (0, -3), style.clone());
                    chart.draw_series(std::iter::once(text)).map_err(err(P))?;
                }
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(groups: usize, series: usize) -> Bars {
        Bars {
            title: "IOPS by run".into(),
            x_desc: "run".into(),
            y_desc: "IOPS".into(),
            unit: Unit::Count,
            groups: (0..groups).map(|g| format!("run {g}")).collect(),
            series: (0..series).map(|s| format!("dir {s}")).collect(),
            values: (0..groups).map(|g| (0..series).map(|s| Some(1000.0 * (g + s + 1) as f64)).collect()).collect(),
        }
    }

    #[test]
    fn bars_carry_values_names_and_a_legend() {
        let svg = bars(&table(2, 2)).unwrap();
        assert!(svg.starts_with("<svg") && !svg.contains("http"));
        for text in ["run 0", "run 1", "dir 1", "3k", "IOPS by run"] {
            assert!(svg.contains(&format!(">\n{text}\n<")), "{text} in the chart");
        }
    }

    #[test]
    fn crowded_bars_drop_their_value_labels_and_long_names_are_cut() {
        let mut t = table(40, 3);
        t.groups[0] = "a very long run name that cannot fit under its bars".into();
        let svg = bars(&t).unwrap();
        assert!(svg.contains(">\n40k\n<"), "the axis has its ticks");
        assert!(!svg.contains(">\n1k\n<"), "no room for values above 120 bars");
        assert!(!svg.contains("cannot fit under"), "the name is cut");
    }

    #[test]
    fn one_series_needs_no_legend() {
        let svg = bars(&table(3, 1)).unwrap();
        assert!(!svg.contains(">\ndir 0\n<"));
        let missing = Bars { values: vec![vec![None], vec![Some(5.0)], vec![None]], ..table(3, 1) };
        assert!(bars(&missing).unwrap().contains(">\n5\n<"));
    }
}

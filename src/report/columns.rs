//! Columns of figures for terminal tables: one unit per column (named under its header), the same
//! decimals down the column, thousands separators, right-aligned; text columns left-aligned.
//!
//! It lays out cells it is given; which columns a report has is `text`'s business.

/// What a column holds, and so how its unit is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Left-aligned text.
    Text,
    /// A whole count (`1,225,300`).
    Whole,
    /// A rate or count with a fraction where it is small (`225,300`, `12.5`).
    Count,
    /// Nanoseconds, shown in ns, µs, ms or s (the one unit that keeps the column's largest value
    /// under 10,000).
    Latency,
    /// Decimal bytes per second: MB/s, or GB/s for columns reaching 10,000 MB/s.
    DecimalRate,
    /// Binary bytes per second: MiB/s, or GiB/s for columns reaching 10,000 MiB/s.
    BinaryRate,
}

/// One cell: text, a number, or nothing to show (`-`).
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Text(String),
    Number(f64),
    Empty,
}

/// A titled column of cells.
#[derive(Clone, Debug)]
pub struct Column {
    pub title: String,
    pub kind: Kind,
    pub cells: Vec<Cell>,
}

/// `n` with a comma every three digits and `decimals` after the point: `1,225,300.5`.
pub fn thousands(n: f64, decimals: usize) -> String {
    let text = format!("{:.*}", decimals, n.abs());
    let (whole, frac) = text.split_once('.').map_or((text.as_str(), None), |(w, f)| (w, Some(f)));
    let mut out = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    if n < 0.0 && text.chars().any(|c| c.is_ascii_digit() && c != '0') { format!("-{out}") } else { out }
}

/// The unit's name and its size in the column's base unit.
fn unit(kind: Kind, max: f64) -> (&'static str, f64) {
    match kind {
        Kind::Text | Kind::Whole | Kind::Count => ("", 1.0),
        Kind::Latency => [("ns", 1.0), ("µs", 1e3), ("ms", 1e6), ("s", 1e9)]
            .into_iter()
            .find(|(_, scale)| max / scale < 9_999.5)
            .unwrap_or(("s", 1e9)),
        Kind::DecimalRate if max / 1e6 >= 9_999.5 => ("GB/s", 1e9),
        Kind::DecimalRate => ("MB/s", 1e6),
        Kind::BinaryRate if max / 1_048_576.0 >= 9_999.5 => ("GiB/s", 1_073_741_824.0),
        Kind::BinaryRate => ("MiB/s", 1_048_576.0),
    }
}

/// Decimals that give the column's smallest non-zero value three significant digits, at most two.
fn decimals(kind: Kind, min: f64) -> usize {
    if kind == Kind::Whole || min <= 0.0 || !min.is_finite() {
        return 0;
    }
    match min {
        m if m < 10.0 => 2,
        m if m < 100.0 => 1,
        _ => 0,
    }
}

/// The column's cells as strings, and the unit to print under its title.
fn formatted(c: &Column) -> (Vec<String>, &'static str) {
    let numbers = c.cells.iter().filter_map(|x| if let Cell::Number(n) = x { Some(*n) } else { None });
    let max = numbers.clone().fold(0.0, f64::max);
    let (name, scale) = unit(c.kind, max);
    let min = numbers.map(|n| n / scale).filter(|n| *n > 0.0).fold(f64::MAX, f64::min);
    let places = decimals(c.kind, min);
    let cells = c
        .cells
        .iter()
        .map(|x| match x {
            Cell::Text(t) => t.clone(),
            Cell::Number(n) => thousands(n / scale, places),
            Cell::Empty => "-".into(),
        })
        .collect();
    (cells, name)
}

/// The columns as lines: the titles, a line of units (when any column has one), then the rows.
pub fn render(columns: &[Column]) -> Vec<String> {
    let laid: Vec<(Vec<String>, &str, usize)> = columns
        .iter()
        .map(|c| {
            let (cells, unit) = formatted(c);
            let width =
                cells.iter().chain([&c.title]).map(|s| s.chars().count()).max().unwrap_or(0).max(unit.chars().count());
            (cells, unit, width)
        })
        .collect();
    let line = |texts: Vec<&str>| -> String {
        let parts: Vec<String> = texts
            .iter()
            .zip(columns.iter().zip(&laid))
            .map(|(t, (c, (_, _, w)))| if c.kind == Kind::Text { format!("{t:<w$}") } else { format!("{t:>w$}") })
            .collect();
        parts.join(" ").trim_end().to_string()
    };
    let mut out = vec![line(columns.iter().map(|c| c.title.as_str()).collect())];
    if laid.iter().any(|(_, u, _)| !u.is_empty()) {
        out.push(line(laid.iter().map(|(_, u, _)| *u).collect()));
    }
    let rows = columns.iter().map(|c| c.cells.len()).max().unwrap_or(0);
    for r in 0..rows {
        out.push(line(laid.iter().map(|(cells, _, _)| cells.get(r).map_or("", String::as_str)).collect()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators() {
        assert_eq!(thousands(225_300.1, 1), "225,300.1");
        assert_eq!(thousands(1_225_300.0, 0), "1,225,300");
        assert_eq!(thousands(999.0, 0), "999");
        assert_eq!(thousands(-1234.5, 1), "-1,234.5");
        assert_eq!(thousands(-0.01, 1), "0.0");
    }

    #[test]
    fn one_unit_per_column() {
        let lat = Column {
            title: "p99".into(),
            kind: Kind::Latency,
            cells: vec![Cell::Number(850.0), Cell::Number(12_500.0), Cell::Number(1_500_000.0), Cell::Empty],
        };
        let bw = Column {
            title: "bw".into(),
            kind: Kind::DecimalRate,
            cells: vec![Cell::Number(225_300.1e6), Cell::Number(1e9), Cell::Number(5e8), Cell::Number(0.0)],
        };
        let who = Column {
            title: "".into(),
            kind: Kind::Text,
            cells: ["total", "w1", "w2", "w3"].map(|s| Cell::Text(s.into())).to_vec(),
        };
        let lines = render(&[who, lat, bw]);
        assert_eq!(
            lines,
            [
                "           p99     bw",
                "            µs   GB/s",
                "total     0.85 225.30",
                "w1       12.50   1.00",
                "w2    1,500.00   0.50",
                "w3           -   0.00",
            ]
        );
    }
}

//! `nvmebench report` and `nvmebench merge`: read JSON results back, then render or merge them.
//!
//! Like `run`, this glue owns the order of side effects: every input is read and checked, and the
//! whole output is produced in memory, before anything is written; a bad input leaves no file.

use crate::cli::{MergeArgs, ReportArgs, ReportFormat};
use crate::report::charts::{self, Chart};
use crate::report::html::{self, PageOptions};
use crate::report::labels::{self, LabelError};
use crate::report::load::{self, ResultSet, ResultsError};
use crate::report::raster::{self, RasterError};
use crate::report::{FileFormat, merge, table};
use clap::ValueEnum;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

/// Errors about the command line or the inputs of `report` and `merge`; all exit with status 2.
#[derive(Debug, thiserror::Error)]
pub enum ResultsCommandError {
    #[error(transparent)]
    Input(#[from] ResultsError),
    #[error("-o {path}: the directory {dir} does not exist; create it or pick another path")]
    OutputDir { path: String, dir: String },
    #[error("-o {path} is one of the inputs; pick another output file")]
    OutputIsInput { path: String },
    #[error(
        "-o {path}: cannot tell the format from the extension '{ext}'; name it .html, .csv, .md, .svg or .png, or pass --format"
    )]
    UnknownExtension { path: String, ext: String },
    #[error(
        "-o {path}: report renders HTML, CSV, Markdown, SVG or PNG, not JSON; to combine results into one JSON document use `nvmebench merge -o {path}`, or name the report .html, .csv, .md, .svg or .png"
    )]
    ReportAsJson { path: String },
    #[error("-o {path}: the extension says {named}, but --format {format} writes {writes}; {fix}")]
    FormatClash { path: String, named: &'static str, format: String, writes: &'static str, fix: String },
    #[error(
        "-o {path}: the extension says {named}, but merge writes JSON; name it {json}, and render that with `nvmebench report {json} -o {path}`"
    )]
    MergeNotJson { path: String, named: &'static str, json: String },
    #[error(transparent)]
    Label(#[from] LabelError),
    #[error(transparent)]
    Raster(#[from] RasterError),
    #[error("--format {format} writes one chart; name it with --chart (one of: {names})")]
    ChartMissing { format: &'static str, names: String },
    #[error("--chart {name}: no such chart in these results; pick one of: {names}")]
    UnknownChart { name: String, names: String },
    #[error("--chart picks a chart for --format svg or png; drop it, or pass one of those formats")]
    ChartWithoutImage,
    #[error("--format png is binary and stdout is a terminal; write it to a file with -o FILE.png")]
    PngToTerminal,
    #[error("cannot write {path}: {error}; pick a writable path")]
    Unwritable { path: String, error: std::io::Error },
}

/// Runs `nvmebench report`.
///
/// # Errors
/// [`ResultsCommandError`] for bad inputs (exit 2); anything else failed while writing (exit 1).
pub fn report_command(args: &ReportArgs) -> anyhow::Result<()> {
    let format = match (args.format, &args.output) {
        (Some(f), Some(p)) => agreeing_format(f, p)?,
        (Some(f), None) => f,
        (None, Some(p)) => format_from_extension(p)?,
        (None, None) => ReportFormat::Html,
    };
    if args.chart.is_some() && !matches!(format, ReportFormat::Svg | ReportFormat::Png) {
        return Err(ResultsCommandError::ChartWithoutImage.into());
    }
    if format == ReportFormat::Png && args.output.is_none() && std::io::stdout().is_terminal() {
        return Err(ResultsCommandError::PngToTerminal.into());
    }
    let parsed: Vec<(String, labels::Label)> = args
        .labels
        .iter()
        .map(|l| labels::parse(l).map(|p| (l.clone(), p)))
        .collect::<Result<_, _>>()
        .map_err(ResultsCommandError::from)?;
    check_output(args.output.as_deref(), &args.results)?;
    let mut set = load::load(&args.results).map_err(ResultsCommandError::from)?;
    labels::apply(&mut set.runs, &parsed).map_err(ResultsCommandError::from)?;
    let bytes = match format {
        ReportFormat::Html => {
            let opts = PageOptions { title: args.title.clone(), hide_serial: args.hide_serial };
            html::render(&set, &opts)?.into_bytes()
        }
        ReportFormat::Csv | ReportFormat::Md if set.runs.is_empty() => {
            return Err(ResultsCommandError::from(ResultsError::NoRuns).into());
        }
        ReportFormat::Csv => table::csv(&table::summary_rows(&set.runs)).into_bytes(),
        ReportFormat::Md => table::markdown(&table::summary_rows(&set.runs)).into_bytes(),
        ReportFormat::Svg => raster::standalone_svg(&one_chart(&set, args.chart.as_deref(), "svg")?.svg).into_bytes(),
        ReportFormat::Png => {
            raster::png(&one_chart(&set, args.chart.as_deref(), "png")?.svg).map_err(ResultsCommandError::from)?
        }
    };
    write_output(args.output.as_deref(), &bytes)
}

/// The chart `--chart` names, or a sentence listing the ones there are.
fn one_chart(set: &ResultSet, name: Option<&str>, format: &'static str) -> anyhow::Result<Chart> {
    let all = charts::all(set)?;
    let names = || all.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ");
    let Some(name) = name else {
        return Err(ResultsCommandError::ChartMissing { format, names: names() }.into());
    };
    match all.iter().find(|c| c.name == name) {
        Some(c) => Ok(c.clone()),
        None => Err(ResultsCommandError::UnknownChart { name: name.to_string(), names: names() }.into()),
    }
}

/// Runs `nvmebench merge`.
///
/// # Errors
/// As [`report_command`].
pub fn merge_command(args: &MergeArgs) -> anyhow::Result<()> {
    if let Some(p) = &args.output {
        if let Some((named, json)) = FileFormat::Json.named_otherwise(p) {
            let json = json.display().to_string();
            return Err(
                ResultsCommandError::MergeNotJson { path: p.display().to_string(), named: named.name(), json }.into()
            );
        }
    }
    check_output(args.output.as_deref(), &args.inputs)?;
    let set = load::load(&args.inputs).map_err(ResultsCommandError::from)?;
    let merged = merge::merge(&set.runs).map_err(ResultsCommandError::from)?;
    for note in merged.merged.iter().flat_map(|m| &m.notes) {
        eprintln!("nvmebench: warning: {note}");
    }
    let text = serde_json::to_string_pretty(&merged).expect("a JSON value always serialises") + "\n";
    write_output(args.output.as_deref(), text.as_bytes())
}

/// What each `--format` writes.
fn file_format(f: ReportFormat) -> FileFormat {
    match f {
        ReportFormat::Html => FileFormat::Html,
        ReportFormat::Csv => FileFormat::Csv,
        ReportFormat::Md => FileFormat::Markdown,
        ReportFormat::Svg => FileFormat::Svg,
        ReportFormat::Png => FileFormat::Png,
    }
}

fn format_from_extension(p: &Path) -> Result<ReportFormat, ResultsCommandError> {
    let named = FileFormat::of_path(p);
    match named.and_then(|named| ReportFormat::value_variants().iter().find(|f| file_format(**f) == named)) {
        Some(f) => Ok(*f),
        // The one format a file may name that report does not write.
        None if named == Some(FileFormat::Json) => {
            Err(ResultsCommandError::ReportAsJson { path: p.display().to_string() })
        }
        None => {
            let ext = p.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
            Err(ResultsCommandError::UnknownExtension { path: p.display().to_string(), ext })
        }
    }
}

/// `--format` as given, unless the `-o` file's extension names another format (an extension that
/// names none, like `.txt`, takes any).
fn agreeing_format(format: ReportFormat, p: &Path) -> Result<ReportFormat, ResultsCommandError> {
    let writes = file_format(format);
    let Some((named, renamed)) = writes.named_otherwise(p) else { return Ok(format) };
    let renamed = renamed.display();
    let fix = match format_from_extension(p) {
        Ok(_) => format!("name it {renamed}, or drop --format to write {}", named.name()),
        Err(_) => format!("name it {renamed}"),
    };
    Err(ResultsCommandError::FormatClash {
        path: p.display().to_string(),
        named: named.name(),
        format: format.to_possible_value().expect("no format is skipped").get_name().to_string(),
        writes: writes.name(),
        fix,
    })
}

fn check_output(output: Option<&Path>, inputs: &[PathBuf]) -> Result<(), ResultsCommandError> {
    let Some(p) = output else { return Ok(()) };
    let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(ResultsCommandError::OutputDir { path: p.display().to_string(), dir: dir.display().to_string() });
    }
    let same = |a: &Path| a.canonicalize().ok().is_some_and(|a| p.canonicalize().ok().is_some_and(|p| p == a));
    if inputs.iter().any(|i| same(i)) {
        return Err(ResultsCommandError::OutputIsInput { path: p.display().to_string() });
    }
    Ok(())
}

/// Writes to the file (whole, or not at all) or to stdout, where a closed pipe is not an error.
fn write_output(output: Option<&Path>, bytes: &[u8]) -> anyhow::Result<()> {
    match output {
        Some(p) => {
            let tmp = p.with_extension(format!(
                "{}.tmp{}",
                p.extension().map(|e| e.to_string_lossy().into_owned()).unwrap_or_default(),
                std::process::id()
            ));
            let unwritable = |error| ResultsCommandError::Unwritable { path: p.display().to_string(), error };
            std::fs::write(&tmp, bytes).map_err(unwritable)?;
            std::fs::rename(&tmp, p).map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                unwritable(e)
            })?;
            Ok(())
        }
        None => {
            let mut out = std::io::stdout().lock();
            match out.write_all(bytes).and_then(|()| out.flush()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    Err(anyhow::anyhow!("cannot write to stdout: {e}"))
                }
                _ => Ok(()),
            }
        }
    }
}

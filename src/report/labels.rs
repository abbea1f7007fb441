//! `report --label FILE=NAME`: runs named by the reviewer instead of by their file names.
//!
//! A run written by `run --json` takes NAME; each run of a collection file takes `NAME LABEL`.
//! It renames loaded runs only; loading and rendering are not its business.

use super::load::RunDoc;
use std::path::{Path, PathBuf};

/// A label that does not apply; exit status 2.
#[derive(Debug, thiserror::Error)]
pub enum LabelError {
    #[error("--label {0}: write FILE=NAME, e.g. --label results/a.json=\"Drive A\"")]
    Syntax(String),
    #[error("--label {given}: {file} holds no run among the inputs; name one of the result files given")]
    NoSuchInput { given: String, file: String },
}

/// One `FILE=NAME`.
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    pub file: PathBuf,
    pub name: String,
}

/// Parses `FILE=NAME`, splitting at the first `=` whose left side is an existing file (paths and
/// names may both hold `=`), or at the first `=` when none is.
///
/// # Errors
/// [`LabelError::Syntax`] without a `=`, or with an empty file or name.
pub fn parse(text: &str) -> Result<Label, LabelError> {
    let splits: Vec<usize> = text.match_indices('=').map(|(i, _)| i).collect();
    let at = splits.iter().copied().find(|&i| Path::new(&text[..i]).is_file()).or(splits.first().copied());
    match at.map(|i| (&text[..i], &text[i + 1..])) {
        Some((file, name)) if !file.is_empty() && !name.trim().is_empty() => {
            Ok(Label { file: file.into(), name: name.trim().to_string() })
        }
        _ => Err(LabelError::Syntax(text.to_string())),
    }
}

/// The file a run was read from (its `source` without the ` runs[i]` of a collection).
fn source_file(r: &RunDoc) -> &Path {
    Path::new(r.source.split(" runs[").next().unwrap_or(&r.source))
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// Renames the runs each label names.
///
/// # Errors
/// [`LabelError::NoSuchInput`] for a label whose file holds none of `runs`.
pub fn apply(runs: &mut [RunDoc], labels: &[(String, Label)]) -> Result<(), LabelError> {
    for (given, l) in labels {
        let hits: Vec<usize> = (0..runs.len()).filter(|&i| same_file(source_file(&runs[i]), &l.file)).collect();
        if hits.is_empty() {
            return Err(LabelError::NoSuchInput { given: given.clone(), file: l.file.display().to_string() });
        }
        let whole = hits.len() == 1 && !runs[hits[0]].source.contains(" runs[");
        for i in hits {
            runs[i].label = if whole { l.name.clone() } else { format!("{} {}", l.name, runs[i].label) };
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_file_and_name() {
        assert_eq!(parse("a.json=Drive A").unwrap(), Label { file: "a.json".into(), name: "Drive A".into() });
        assert_eq!(parse("a.json=x=y").unwrap().name, "x=y");
        for bad in ["a.json", "=name", "a.json=", "a.json=  "] {
            let e = parse(bad).unwrap_err().to_string();
            assert!(e.starts_with(&format!("--label {bad}: write FILE=NAME")), "{e}");
        }
    }

    #[test]
    fn a_path_with_an_equals_sign_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("qd=32.json");
        std::fs::write(&f, "{}").unwrap();
        let l = parse(&format!("{}=deep", f.display())).unwrap();
        assert_eq!((l.file, l.name.as_str()), (f, "deep"));
    }
}

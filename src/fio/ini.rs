//! fio's job-file syntax, with the file and line of every option kept for error messages.
//!
//! `[name]` opens a section (`[global]` holds defaults for the sections after it); `key=value` and
//! bare `key` set options; `;` and `#` start comments (whole-line or trailing, as fio strips them);
//! `$VAR` and `${VAR}` are replaced from the environment (the caller's lookup, which may add fio's
//! `$ncpus`, `$pagesize`, `$mb_memory`); `include FILE` reads another file in place,
//! relative to the including one. What the options mean is not this module's business.

use std::path::{Path, PathBuf};

/// How deep `include` may nest.
const MAX_INCLUDE_DEPTH: usize = 16;
/// How many files one job file may read with its includes, and how many bytes: a file that
/// includes another twice at each of 16 levels would read 2^16 files, a large one included over
/// and over would fill the memory.
const MAX_FILES_READ: usize = 256;
const MAX_BYTES_READ: u64 = 64 << 20;

/// What reading one job file has used so far, and the files being read (the include chain).
struct Reading {
    files: usize,
    bytes: u64,
    chain: Vec<PathBuf>,
}

/// Where a line came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    pub file: String,
    pub line: usize,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// One option as written.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub key: String,
    /// `None` for a bare flag (`time_based`).
    pub value: Option<String>,
    pub at: Origin,
}

/// One `[name]` section and its options, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Section {
    pub name: String,
    pub at: Origin,
    pub entries: Vec<Entry>,
}

impl Section {
    pub fn is_global(&self) -> bool {
        self.name == "global"
    }
}

/// A job file that does not parse: one sentence with the file and line.
#[derive(Debug, thiserror::Error)]
pub enum IniError {
    #[error("{path}: cannot read the job file ({source}); check the path")]
    Read { path: String, source: std::io::Error },
    #[error("{at}: {message}")]
    Syntax { at: Origin, message: String },
}

/// Parses the job file at `path`, looking variables up with `env`.
///
/// # Errors
/// The first line that does not parse, an unset variable, or an include that cannot be read.
pub fn parse(path: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<Vec<Section>, IniError> {
    let mut sections = Vec::new();
    let mut reading = Reading { files: 0, bytes: 0, chain: Vec::new() };
    read_into(path, env, &mut sections, &mut reading, None)?;
    Ok(sections)
}

/// Reads the file at `path` (`None` when it is the job file itself, else the include's line).
fn read_text(path: &Path, reading: &mut Reading, included_at: Option<&Origin>) -> Result<String, IniError> {
    use std::io::Read as _;
    let failed = |source: std::io::Error| match included_at {
        Some(at) => IniError::Syntax {
            at: at.clone(),
            message: format!("include {}: cannot read it ({source}); check the path", path.display()),
        },
        None => IniError::Read { path: path.display().to_string(), source },
    };
    let too_much = |what: String| IniError::Syntax {
        at: included_at.cloned().unwrap_or(Origin { file: path.display().to_string(), line: 1 }),
        message: format!(
            "include {}: the job file reads more than {what} with its includes; include each file once",
            path.display()
        ),
    };
    reading.files += 1;
    if reading.files > MAX_FILES_READ {
        return Err(too_much(format!("{MAX_FILES_READ} files")));
    }
    let left = MAX_BYTES_READ - reading.bytes;
    let mut bytes = Vec::new();
    std::fs::File::open(path).and_then(|f| f.take(left + 1).read_to_end(&mut bytes)).map_err(failed)?;
    if bytes.len() as u64 > left {
        return Err(too_much(format!("{} MiB", MAX_BYTES_READ >> 20)));
    }
    reading.bytes += bytes.len() as u64;
    String::from_utf8(bytes)
        .map_err(|_| failed(std::io::Error::new(std::io::ErrorKind::InvalidData, "stream did not contain valid UTF-8")))
}

fn read_into(
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    sections: &mut Vec<Section>,
    reading: &mut Reading,
    included_at: Option<&Origin>,
) -> Result<(), IniError> {
    let text = read_text(path, reading, included_at)?;
    // The same file, however named (a link, ../x/), is the same link of the chain.
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if let (Some(at), true) = (included_at, reading.chain.contains(&canonical)) {
        return Err(IniError::Syntax {
            at: at.clone(),
            message: format!(
                "include {}: the file includes itself (through the files that include it); drop the include",
                path.display()
            ),
        });
    }
    reading.chain.push(canonical);
    let file = path.display().to_string();
    for (i, raw) in text.lines().enumerate() {
        let at = Origin { file: file.clone(), line: i + 1 };
        let syntax = |message: String| IniError::Syntax { at: at.clone(), message };
        let line = strip_comment(raw).trim();
        if line.is_empty() {
            continue;
        }
        let line = substitute(line, env).map_err(syntax)?;
        let line = line.trim();
        if let Some(inc) = line.strip_prefix("include").filter(|r| r.starts_with([' ', '\t'])) {
            if reading.chain.len() > MAX_INCLUDE_DEPTH {
                return Err(syntax(format!("includes nest deeper than {MAX_INCLUDE_DEPTH}; include fewer levels")));
            }
            let target = PathBuf::from(inc.trim());
            let target =
                if target.is_relative() { path.parent().unwrap_or(Path::new(".")).join(target) } else { target };
            read_into(&target, env, sections, reading, Some(&at))?;
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let name = rest
                .strip_suffix(']')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .ok_or_else(|| syntax(format!("'{line}' is not a section header; write it like [job1]")))?;
            sections.push(Section { name: name.to_string(), at, entries: Vec::new() });
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim().to_string())),
            None => (line, None),
        };
        if key.is_empty() || key.contains(char::is_whitespace) {
            return Err(syntax(format!("'{line}' is not an option; write key=value or a bare flag")));
        }
        let Some(section) = sections.last_mut() else {
            return Err(syntax(format!("option '{key}' comes before any section; put it under [global] or a job")));
        };
        section.entries.push(Entry { key: key.to_string(), value, at });
    }
    reading.chain.pop();
    Ok(())
}

/// The line without a `;` or `#` comment.
fn strip_comment(line: &str) -> &str {
    match line.find([';', '#']) {
        Some(i) => &line[..i],
        None => line,
    }
}

/// fio's keywords of `filename_format`, kept as written for the plan to replace per file.
const FILENAME_KEYWORDS: [&str; 4] = ["jobname", "jobnum", "filenum", "clientuid"];

/// Replaces `${NAME}` and `$NAME` with the variable's value.
fn substitute(line: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let (name, consumed) = if let Some(braced) = after.strip_prefix('{') {
            let end = braced.find('}').ok_or_else(|| format!("'${{' without a closing '}}' in '{line}'"))?;
            (&braced[..end], end + 2)
        } else if let Some(k) =
            FILENAME_KEYWORDS.iter().find(|k| after.get(..k.len()).is_some_and(|a| a.eq_ignore_ascii_case(k)))
        {
            // fio replaces these when it names a job's files (filename_format), not when it reads
            // the line, and by the keyword alone, in any case.
            out.push('$');
            out.push_str(&after[..k.len()]);
            rest = &after[k.len()..];
            continue;
        } else {
            let end = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
            (&after[..end], end)
        };
        if name.is_empty() {
            return Err(format!("'$' without a variable name in '{line}'; write ${{NAME}}"));
        }
        let value =
            env(name).ok_or_else(|| format!("${name} is not set in the environment; export it or write the value"))?;
        out.push_str(&value);
        rest = &after[consumed..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "DEV" => Some("/dev/nvme0n1".into()),
            "QD" => Some("16".into()),
            _ => None,
        }
    }

    fn parse_text(text: &str) -> Result<Vec<Section>, IniError> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("job.fio");
        std::fs::write(&p, text).unwrap();
        parse(&p, &env)
    }

    #[test]
    fn sections_options_comments_and_variables() {
        let s = parse_text(
            "; a comment\n[global]\nioengine=null # trailing\ntime_based\n\n[one]\nfilename=${DEV}\niodepth = $QD\n",
        )
        .unwrap();
        assert_eq!(s.len(), 2);
        assert!(s[0].is_global());
        assert_eq!(s[0].entries[0].value.as_deref(), Some("null"));
        assert_eq!(s[0].entries[1].value, None);
        assert_eq!(s[1].entries[0].value.as_deref(), Some("/dev/nvme0n1"));
        assert_eq!(s[1].entries[1].value.as_deref(), Some("16"));
        assert_eq!(s[1].entries[1].at.line, 8);
    }

    #[test]
    fn includes_read_relative_files_in_place() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("common.fio"), "[global]\nbs=8k\n").unwrap();
        let p = dir.path().join("job.fio");
        std::fs::write(&p, "include common.fio\n[a]\nrw=read\n").unwrap();
        let s = parse(&p, &env).unwrap();
        assert_eq!((s[0].name.as_str(), s[0].entries[0].key.as_str()), ("global", "bs"));
        assert!(s[0].entries[0].at.file.ends_with("common.fio"));
        std::fs::write(&p, "include job.fio\n").unwrap();
        let e = parse(&p, &env).unwrap_err().to_string();
        assert!(
            e.contains("job.fio:1: include ")
                && e.ends_with("the file includes itself (through the files that include it); drop the include"),
            "{e}"
        );
        // Seventeen levels of distinct files nest too deep; one file included twice is read twice.
        for i in 0..18 {
            std::fs::write(dir.path().join(format!("l{i}.fio")), format!("include l{}.fio\n", i + 1)).unwrap();
        }
        std::fs::write(dir.path().join("l18.fio"), "[a]\n").unwrap();
        assert!(parse(&dir.path().join("l0.fio"), &env).unwrap_err().to_string().contains("nest deeper than 16"));
        assert_eq!(parse(&dir.path().join("l2.fio"), &env).unwrap().len(), 1);
        std::fs::write(&p, "include common.fio\ninclude common.fio\n").unwrap();
        assert_eq!(parse(&p, &env).unwrap().len(), 2);
    }

    #[test]
    fn bad_lines_name_file_and_line() {
        let e = parse_text("[a]\nrw=read\n[broken\n").unwrap_err().to_string();
        assert!(e.ends_with("job.fio:3: '[broken' is not a section header; write it like [job1]"), "{e}");
        let e = parse_text("bs=4k\n").unwrap_err().to_string();
        assert!(e.ends_with("job.fio:1: option 'bs' comes before any section; put it under [global] or a job"), "{e}");
        let s = parse_text("[a]\nfilename_format=$JobName.$jobnum_$filenum\n").unwrap();
        assert_eq!(s[0].entries[0].value.as_deref(), Some("$JobName.$jobnum_$filenum"), "fio's own keywords");
        let e = parse_text("[a]\nfilename=$NOPE\n").unwrap_err().to_string();
        assert!(e.contains("job.fio:2: $NOPE is not set"), "{e}");
        let e = parse_text("[a]\nrw read\n").unwrap_err().to_string();
        assert!(e.contains("job.fio:2: 'rw read' is not an option"), "{e}");
    }
}

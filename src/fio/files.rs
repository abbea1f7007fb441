//! fio's files of a job without `filename`: `nrfiles` of them per job, named by `filename_format`
//! (fio's `$jobname.$jobnum.$filenum`), and how a job's `size` is split over its files.
//!
//! It names files and sizes them; it does not decide which worker drives which file (the plan
//! orders the names so `worker::targets::place` deals each clone its own) nor create them.

/// The most files a job may have: each is a lane of its own (an engine instance with its own
/// slots) on the worker that drives it.
pub const MAX_FILES: usize = 1024;

/// fio's `filename_format` default (init.c's `make_filename` without a format).
pub const DEFAULT_FORMAT: &str = "$jobname.$jobnum.$filenum";

/// fio's name for file `filenum` of clone `jobnum` of job `jobname`: each of `$jobname`, `$jobnum`,
/// `$filenum` and `$clientuid` replaced wherever it appears, in any case, as fio's `make_filename`
/// replaces them (`$clientuid` is the client's address in fio's client/server mode, and empty in a
/// local run, which this is).
pub fn make_filename(format: &str, jobname: &str, jobnum: usize, filenum: usize) -> String {
    let mut out = format.to_string();
    for (keyword, value) in [
        ("$jobname", jobname.to_string()),
        ("$jobnum", jobnum.to_string()),
        ("$filenum", filenum.to_string()),
        ("$clientuid", String::new()),
    ] {
        out = replace_ignoring_case(&out, keyword, &value);
    }
    out
}

/// Whether the names of `format` differ between a job's clones: without `$jobnum` fio's clones open
/// the same files.
pub fn per_clone(format: &str) -> bool {
    format.to_ascii_lowercase().contains("$jobnum")
}

/// The files of a job of `clones` clones with `nrfiles` each, in the order the plan gives them to
/// the run, and whether every worker drives every one of them. Each clone's own files (a format
/// with `$jobnum`, more than one clone) come file number first (`f0 of clone 0, f0 of clone 1, ...`)
/// so that dealing targets over workers (target i to worker i % clones) gives clone j its own;
/// otherwise the clones share one set of files, as fio's clones open the same names.
pub fn names(format: &str, jobname: &str, clones: usize, nrfiles: usize) -> (Vec<String>, bool) {
    if per_clone(format) && clones > 1 {
        let names = (0..nrfiles)
            .flat_map(|f| (0..clones).map(move |j| (j, f)))
            .map(|(j, f)| make_filename(format, jobname, j, f))
            .collect();
        (names, false)
    } else {
        let names: Vec<String> = (0..nrfiles).map(|f| make_filename(format, jobname, 0, f)).collect();
        let shared = names.len() > 1;
        (names, shared)
    }
}

/// Each file's size when a job of `size` bytes has `files` files and no `filesize` (fio's
/// `setup_files`: size / nrfiles each), and the bytes the job moves (all its files).
///
/// # Errors
/// A size that does not split evenly: fio then makes its first files a block larger than the
/// others, which one size per target cannot say.
pub fn split(size: u64, files: usize) -> Result<(u64, u64), String> {
    let files = files.max(1) as u64;
    if size % files != 0 {
        return Err(format!(
            "does not split evenly over {files} files (fio makes its first files a block larger than the others); give a size that is a multiple of {files} blocks"
        ));
    }
    Ok((size / files, size))
}

/// fio's `file_service_type` values: how a job moves from one of its files to the next.
///
/// # Errors
/// A value fio does not take, or one other than its default `roundrobin` for a job of several
/// files (nvmebench takes a job's files in turn, one I/O each).
pub fn check_service_type(value: &str, files: usize) -> Result<(), String> {
    let (kind, arg) = value.split_once(':').map_or((value, None), |(k, a)| (k, Some(a)));
    let known = matches!(kind, "random" | "roundrobin" | "sequential" | "zipf" | "pareto" | "normal" | "gauss");
    if !known {
        return Err(format!(
            "file_service_type={value} is not one of fio's (random, roundrobin, sequential, zipf, pareto, normal, gauss); write file_service_type=roundrobin, fio's default"
        ));
    }
    let one_each = kind == "roundrobin" && arg.is_none_or(|n| n.trim() == "1");
    if files > 1 && !one_each {
        return Err(format!(
            "file_service_type={value}: nvmebench takes a job's files in turn, one I/O each (fio's default roundrobin); write file_service_type=roundrobin, or remove it"
        ));
    }
    Ok(())
}

/// `text` with every `keyword` (in any case) replaced by `value`.
fn replace_ignoring_case(text: &str, keyword: &str, value: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(i) = lower[at..].find(keyword) {
        out.push_str(&text[at..at + i]);
        out.push_str(value);
        at += i + keyword.len();
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_fios() {
        assert_eq!(make_filename(DEFAULT_FORMAT, "job", 2, 3), "job.2.3");
        assert_eq!(make_filename("d/$JobName-$FILENUM.dat", "w", 0, 1), "d/w-1.dat", "any case");
        assert_eq!(make_filename("$filenum$filenum$clientuid", "w", 0, 7), "77", "every place; no client here");
        assert_eq!(make_filename("fixed", "w", 1, 1), "fixed");
    }

    #[test]
    fn clones_get_their_own_files_dealt_in_turn() {
        let (n, shared) = names(DEFAULT_FORMAT, "j", 2, 3);
        assert_eq!(n, ["j.0.0", "j.1.0", "j.0.1", "j.1.1", "j.0.2", "j.1.2"]);
        assert!(!shared);
        // Target i goes to worker i % clones: clone 1 gets j.1.0, j.1.1, j.1.2.
        let lanes = crate::worker::targets::place(2, n.len(), false);
        let of_1: Vec<&str> = lanes.iter().filter(|l| l.worker == 1).map(|l| n[l.target].as_str()).collect();
        assert_eq!(of_1, ["j.1.0", "j.1.1", "j.1.2"]);
        let (n, shared) = names("$jobname.f$filenum", "j", 2, 2);
        assert_eq!((n, shared), (vec!["j.f0".to_string(), "j.f1".into()], true), "without $jobnum, shared");
        assert_eq!(names(DEFAULT_FORMAT, "j", 1, 1), (vec!["j.0.0".to_string()], false));
    }

    #[test]
    fn size_splits_over_files_as_fio_splits_it() {
        assert_eq!(split(256 << 10, 4).unwrap(), (64 << 10, 256 << 10));
        assert!(split(1000, 3).unwrap_err().starts_with("does not split evenly over 3 files"));
    }

    #[test]
    fn service_types() {
        assert!(check_service_type("roundrobin", 4).is_ok());
        assert!(check_service_type("roundrobin:1", 4).is_ok());
        assert!(check_service_type("random", 1).is_ok(), "one file: nothing to choose");
        assert!(check_service_type("random", 2).unwrap_err().contains("in turn, one I/O each"));
        assert!(check_service_type("roundrobin:4", 2).is_err());
        assert!(check_service_type("lru", 1).unwrap_err().contains("is not one of fio's"));
    }
}

//! `nvmebench completions SHELL` and `nvmebench man`: shell completion scripts and manual pages,
//! generated from the clap definitions in `cli`, so they can never disagree with `--help`.
//!
//! docs/install.md says where they go.

use crate::cli::{Cli, CompletionsArgs, ManArgs};
use clap::CommandFactory;
use std::io::Write;
use std::path::Path;

/// A bad `man` argument; exit status 2.
#[derive(Debug, thiserror::Error)]
pub enum DocsError {
    #[error("man {name}: no such command; pick one of: {names}")]
    UnknownCommand { name: String, names: String },
    #[error("man --dir {path}: not a directory; create it first")]
    NoDir { path: String },
    #[error("cannot write {path}: {error}; pick a writable directory")]
    Write { path: String, error: std::io::Error },
}

/// Prints the completion script for `args.shell` on stdout.
///
/// # Errors
/// Writing to stdout failed (a closed pipe is not an error).
pub fn completions_command(args: &CompletionsArgs) -> anyhow::Result<()> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "nvmebench", &mut script);
    write_stdout(&script)
}

/// Prints one manual page (roff) on stdout, or writes every page into `--dir`.
///
/// # Errors
/// [`DocsError`] for an unknown command or directory (exit 2); a failed write otherwise.
pub fn man_command(args: &ManArgs) -> anyhow::Result<()> {
    let mut top = Cli::command();
    top.build();
    if let Some(dir) = &args.dir {
        return write_all_pages(&top, dir);
    }
    let page = match &args.command {
        None => render(top)?,
        Some(name) => render(subcommand(&top, name)?)?,
    };
    write_stdout(&page)
}

/// `name` of `top` as a page of its own, titled `nvmebench-NAME`.
fn subcommand(top: &clap::Command, name: &str) -> Result<clap::Command, DocsError> {
    match top.find_subcommand(name) {
        Some(c) => Ok(c.clone().name(format!("nvmebench-{name}"))),
        None => Err(DocsError::UnknownCommand { name: name.to_string(), names: command_names(top).join(", ") }),
    }
}

fn command_names(top: &clap::Command) -> Vec<String> {
    top.get_subcommands().map(|c| c.get_name().to_string()).filter(|n| n != "help").collect()
}

fn render(cmd: clap::Command) -> anyhow::Result<Vec<u8>> {
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut page)?;
    Ok(page)
}

/// `nvmebench.1` and `nvmebench-COMMAND.1` for each command, into `dir`.
fn write_all_pages(top: &clap::Command, dir: &Path) -> anyhow::Result<()> {
    if !dir.is_dir() {
        return Err(DocsError::NoDir { path: dir.display().to_string() }.into());
    }
    let mut pages = vec![("nvmebench.1".to_string(), render(top.clone())?)];
    for name in command_names(top) {
        pages.push((format!("nvmebench-{name}.1"), render(subcommand(top, &name)?)?));
    }
    for (file, page) in pages {
        let path = dir.join(file);
        std::fs::write(&path, page).map_err(|error| DocsError::Write { path: path.display().to_string(), error })?;
    }
    Ok(())
}

fn write_stdout(bytes: &[u8]) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(anyhow::anyhow!("cannot write to stdout: {e}")),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_has_a_page_and_unknown_ones_are_named() {
        let mut top = Cli::command();
        top.build();
        let names = command_names(&top);
        for want in ["run", "report", "merge", "suite", "compare", "doctor", "devices", "completions", "man"] {
            assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
        }
        let run = String::from_utf8(render(subcommand(&top, "run").unwrap()).unwrap()).unwrap();
        assert!(run.contains("nvmebench\\-run") && run.contains("\\-\\-rwmixread"), "{}", &run[..400]);
        let e = subcommand(&top, "bench").unwrap_err().to_string();
        assert!(e.starts_with("man bench: no such command; pick one of: run, devices,"), "{e}");
    }
}

//! Shell completions and manual pages, generated from the command-line definitions; and the README
//! and the guides in docs/, checked for broken links and against the command line they describe.

use crate::common::{nvmebench, scratch_dir, stderr, stdout};
use clap::CommandFactory;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[test]
fn completions_for_each_shell_name_the_commands_and_options() {
    for (shell, marker) in [("bash", "_nvmebench()"), ("zsh", "#compdef nvmebench"), ("fish", "complete -c nvmebench")]
    {
        let o = nvmebench(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let script = stdout(&o);
        assert!(script.contains(marker), "{shell}: {}", &script[..200.min(script.len())]);
        for word in ["report", "status-interval", "hide-serial"] {
            assert!(script.contains(word), "{shell} completes {word}");
        }
    }
    let o = nvmebench(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("tcsh"), "{}", stderr(&o));
}

#[test]
fn manual_pages_for_the_tool_and_each_command() {
    let o = nvmebench(&["man"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let page = stdout(&o);
    assert!(page.contains(".TH nvmebench 1") && page.contains(".SH SUBCOMMANDS"), "{page}");
    for sub in ["run", "report", "merge", "suite", "compare", "doctor", "completions", "man"] {
        assert!(page.contains(&format!("nvmebench\\-{sub}(1)")), "{sub} listed: {page}");
    }
    let run = stdout(&nvmebench(&["man", "run"]));
    assert!(run.contains(".TH nvmebench-run 1") && run.contains("\\-\\-status\\-interval"), "{run}");
    let dir = scratch_dir();
    let o = nvmebench(&["man", "--dir", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for name in ["nvmebench.1", "nvmebench-run.1", "nvmebench-report.1", "nvmebench-suite.1"] {
        assert!(dir.path().join(name).is_file(), "{name} written");
    }
    // Each command's page carries only its own options.
    let devices = std::fs::read_to_string(dir.path().join("nvmebench-devices.1")).unwrap();
    assert!(devices.contains("\\-\\-trid") && !devices.contains("inject"), "{devices}");
}

// The README and the guides in docs/, checked against each other and against the command line.

/// The README and every guide, as (path relative to the repository, text).
fn documents() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut names = vec!["README.md".to_string()];
    let mut guides: Vec<String> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .map(|e| e.expect("docs/ is readable").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    guides.sort();
    assert!(guides.len() >= 10, "the guides are in docs/: {guides:?}");
    names.extend(guides);
    names
        .into_iter()
        .map(|n| {
            let text = std::fs::read_to_string(root.join(&n)).unwrap_or_else(|e| panic!("{n}: {e}"));
            (n, text)
        })
        .collect()
}

/// The text outside fenced code blocks, line by line (a code line becomes empty, so line numbers
/// stay), with inline code spans blanked.
fn prose(text: &str) -> Vec<String> {
    let mut fenced = false;
    text.lines()
        .map(|l| {
            if l.trim_start().starts_with("```") {
                fenced = !fenced;
                return String::new();
            }
            if fenced {
                return String::new();
            }
            let mut out = String::new();
            let mut in_code = false;
            for ch in l.chars() {
                if ch == '`' {
                    in_code = !in_code;
                    out.push(' ');
                } else {
                    out.push(if in_code { ' ' } else { ch });
                }
            }
            out
        })
        .collect()
}

/// The lines of the `sh` code blocks, continuation lines (`\` at the end) joined, with the line
/// number each command starts on.
fn shell_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_sh = false;
    let mut pending: Option<(usize, String)> = None;
    for (i, l) in text.lines().enumerate() {
        let t = l.trim_start();
        if t.starts_with("```") {
            in_sh = !in_sh && (t == "```sh" || t == "```bash" || t == "```console");
            continue;
        }
        if !in_sh {
            continue;
        }
        let (n, mut cmd) = pending.take().unwrap_or((i + 1, String::new()));
        match l.strip_suffix('\\') {
            Some(head) => {
                cmd.push_str(head);
                cmd.push(' ');
                pending = Some((n, cmd));
            }
            None => {
                cmd.push_str(l);
                out.push((n, cmd));
            }
        }
    }
    out
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors a document's headings make (a repeated heading gets `-1`, `-2`, as on GitHub).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut fenced = false;
    for l in text.lines() {
        if l.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced {
            continue;
        }
        let Some(h) = l.strip_prefix('#') else { continue };
        let h = h.trim_start_matches('#');
        if !h.starts_with(' ') {
            continue;
        }
        let h = h.replace('`', "");
        let base = slug(&h);
        let mut a = base.clone();
        let mut k = 1;
        while seen.contains(&a) {
            a = format!("{base}-{k}");
            k += 1;
        }
        seen.insert(a);
    }
    seen
}

/// The targets of the Markdown links `[text](target)` in the prose, with their line numbers.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, l) in prose(text).iter().enumerate() {
        let mut rest = l.as_str();
        while let Some(k) = rest.find("](") {
            let tail = &rest[k + 2..];
            let Some(end) = tail.find(')') else { break };
            out.push((i + 1, tail[..end].trim().to_string()));
            rest = &tail[end..];
        }
    }
    // A link whose text breaks across lines still has its `](` on one line; a target never breaks.
    out
}

fn is_external(target: &str) -> bool {
    target.starts_with("http://") || target.starts_with("https://") || target.starts_with("mailto:")
}

#[test]
fn every_relative_link_resolves_to_a_file_and_heading() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let docs = documents();
    let mut checked = 0;
    for (name, text) in &docs {
        let dir = Path::new(name).parent().unwrap_or(Path::new(""));
        for (line, target) in links(text) {
            if is_external(&target) {
                continue;
            }
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let path: PathBuf = if file.is_empty() { PathBuf::from(name) } else { dir.join(file) };
            let full = root.join(&path);
            assert!(full.exists(), "{name}:{line}: link to {target}: {} does not exist", path.display());
            if let Some(anchor) = anchor {
                let text = std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let known = anchors(&text);
                assert!(
                    known.contains(anchor),
                    "{name}:{line}: link to {target}: {} has no heading #{anchor} (it has {known:?})",
                    path.display()
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 20, "the links were found ({checked})");
}

#[test]
fn the_link_check_finds_a_broken_link() {
    let text = "See [a](a.md), `[not](a link)`, and [b](#two-words).\n\n## Two words\n## Two words\n";
    assert_eq!(links(text), [(1, "a.md".to_string()), (1, "#two-words".to_string())]);
    assert_eq!(anchors(text), BTreeSet::from(["two-words".to_string(), "two-words-1".to_string()]));
    assert_eq!(slug("Trim, write-zeroes and flush"), "trim-write-zeroes-and-flush");
    assert_eq!(slug("For fio users: job files, fio's options"), "for-fio-users-job-files-fios-options");
}

#[test]
fn the_readme_is_short_and_links_every_guide() {
    let docs = documents();
    let readme = &docs[0].1;
    assert!(
        readme.len() <= 12 * 1024,
        "README.md is {} bytes; keep it under 12 KiB and move detail to a guide",
        readme.len()
    );
    let linked: BTreeSet<String> =
        links(readme).into_iter().map(|(_, t)| t.split('#').next().unwrap().to_string()).collect();
    for (name, text) in &docs[1..] {
        assert!(linked.contains(name.as_str()), "README.md links no {name}: every guide is reachable from the README");
        // Each guide starts with what its reader will be able to do.
        let first = text.lines().nth(2).unwrap_or("");
        assert!(text.starts_with("# ") && !first.is_empty(), "{name} opens with a title, then what it is for");
    }
}

#[test]
fn a_fio_user_finds_the_spdk_path_on_the_first_screen() {
    let docs = documents();
    let readme = &docs[0].1;
    let first_screen: String = readme.lines().take(30).collect::<Vec<_>>().join("\n");
    assert!(first_screen.contains("job.fio") && first_screen.contains("--engine spdk"), "{first_screen}");
    assert!(first_screen.contains("](docs/fio.md)"), "the first screen links the fio guide: {first_screen}");
    let fio = &docs.iter().find(|(n, _)| n == "docs/fio.md").expect("docs/fio.md").1;
    let spdk_job = shell_lines(fio).into_iter().any(|(_, l)| l.contains("nvmebench run job.fio --engine spdk --trid"));
    assert!(spdk_job, "docs/fio.md shows a job file run through SPDK");
}

/// Splits a shell command line into words: quotes, backslashes, and `$(...)` or `$VAR` (taken as
/// `2000000000`, a number and a UNIX time, which every option given one here accepts); it stops at a comment, a pipe, `&&`, `;` or a
/// redirection.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut started = false;
    let mut chars = line.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '$') | (None, '$') => {
                if chars.peek() == Some(&'(') {
                    let mut depth = 0;
                    for d in chars.by_ref() {
                        depth += match d {
                            '(' => 1,
                            ')' => -1,
                            _ => 0,
                        };
                        if depth == 0 {
                            break;
                        }
                    }
                } else {
                    while chars.peek().is_some_and(|d| d.is_alphanumeric() || *d == '_' || *d == '{' || *d == '}') {
                        chars.next();
                    }
                }
                cur.push_str("2000000000");
                started = true;
            }
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (None, '\\') => {
                if let Some(d) = chars.next() {
                    cur.push(d);
                    started = true;
                }
            }
            (None, '#') if !started => break,
            (None, '|' | ';' | '>' | '<' | '&') => break,
            (None, c) if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut cur));
                    started = false;
                }
            }
            (None, c) => {
                cur.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(cur);
    }
    words
}

/// The nvmebench command in a shell line, from the word naming the binary on (`nvmebench`,
/// `target/release/nvmebench`, `cargo run --release --`), or inside a quoted word (`pdsh ... "nvmebench run ..."`).
fn nvmebench_argv(line: &str) -> Option<Vec<String>> {
    let line = line.trim().strip_prefix("$ ").unwrap_or(line.trim());
    // pdsh -R exec puts each host's rank where the command says %n.
    let words: Vec<String> = shell_words(line).into_iter().map(|w| w.replace("%n", "0")).collect();
    let at = words.iter().position(|w| w == "nvmebench" || w.ends_with("/nvmebench"));
    if let Some(at) = at {
        return Some(words[at..].to_vec());
    }
    if let Some(at) = words.windows(3).position(|w| w == ["run", "--release", "--"]) {
        let mut argv = vec!["nvmebench".to_string()];
        argv.extend(words[at + 3..].iter().cloned());
        return Some(argv);
    }
    words.iter().find(|w| w.starts_with("nvmebench ")).and_then(|w| nvmebench_argv(w))
}

#[test]
fn every_example_command_parses() {
    let mut parsed = 0;
    for (name, text) in documents() {
        for (line, cmd) in shell_lines(&text) {
            let Some(argv) = nvmebench_argv(&cmd) else { continue };
            let argv: Vec<std::ffi::OsString> = argv.into_iter().map(Into::into).collect();
            let argv = nvmebench::fio::argv::normalize(argv)
                .unwrap_or_else(|e| panic!("{name}:{line}: `{cmd}` is refused: {e}"));
            if let Err(e) = nvmebench::cli::Cli::command().try_get_matches_from(&argv) {
                use clap::error::ErrorKind::*;
                if !matches!(e.kind(), DisplayHelp | DisplayVersion) {
                    panic!("{name}:{line}: `{}` does not parse: {}", cmd.trim(), e.render());
                }
            }
            parsed += 1;
        }
    }
    assert!(parsed > 40, "the example commands were found ({parsed})");
}

#[test]
fn the_example_check_splits_shell_words() {
    assert_eq!(
        shell_words(r#"nvmebench run --trid "$(x start)" --name 'a b' a\:b --start-at $at | tee # c"#),
        ["nvmebench", "run", "--trid", "2000000000", "--name", "a b", "a:b", "--start-at", "2000000000"]
    );
    assert_eq!(nvmebench_argv("cargo run --release -- run  # 5 s"), Some(vec!["nvmebench".into(), "run".into()]));
    assert_eq!(
        nvmebench_argv(r#"pdsh -w 'n[1-2]' "nvmebench run --time 60""#),
        Some(vec!["nvmebench".into(), "run".into(), "--time".into(), "60".into()])
    );
    assert!(nvmebench::cli::Cli::command().try_get_matches_from(["nvmebench", "run", "--no-such-flag"]).is_err());
}

/// The long options (and their aliases, hidden ones included) a command takes, as `--name`.
fn command_options(cmd: &clap::Command) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for a in cmd.get_arguments() {
        if let Some(l) = a.get_long() {
            out.insert(format!("--{l}"));
        }
        for al in a.get_all_aliases().into_iter().flatten() {
            out.insert(format!("--{al}"));
        }
    }
    out.insert("--help".into());
    out
}

/// The `--options` a script's `--help` lists, one per line start.
fn script_options(script: &str) -> BTreeSet<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(script);
    let o = std::process::Command::new(&path).arg("--help").output().unwrap_or_else(|e| panic!("{script}: {e}"));
    assert_eq!(o.status.code(), Some(0), "{script} --help: {}", stderr(&o));
    // An option's line starts with it (`  --tag TAG`, `  -h, --help`); descriptions only mention others.
    let mut out = BTreeSet::new();
    for l in stdout(&o).lines() {
        let t = l.trim_start();
        let t = if t.starts_with('-') && t.as_bytes().get(2) == Some(&b',') { t[3..].trim_start() } else { t };
        if let Some(w) = t.split_whitespace().next().filter(|w| w.starts_with("--") && w.len() > 2) {
            out.insert(w.split('=').next().unwrap().to_string());
        }
    }
    out
}

/// The `--options` named in a table row's first cell.
fn row_options(row: &str) -> Vec<String> {
    let first = row.trim().trim_start_matches('|').split(" | ").next().unwrap_or("");
    let mut out = Vec::new();
    let mut rest = first;
    while let Some(k) = rest.find("`--") {
        let tail = &rest[k + 1..];
        let end =
            tail[2..].find(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_')).map_or(tail.len(), |e| e + 2);
        out.push(tail[..end].to_string());
        rest = &tail[end..];
    }
    out
}

#[test]
fn option_tables_name_only_options_their_command_takes() {
    let cli = nvmebench::cli::Cli::command();
    let mut tables = 0;
    for (name, text) in documents() {
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        while i + 1 < lines.len() {
            let is_table = lines[i].starts_with('|') && lines[i + 1].starts_with("| ---");
            if !is_table {
                i += 1;
                continue;
            }
            let start = i;
            let rows: Vec<&str> = lines[i + 2..].iter().take_while(|l| l.starts_with('|')).copied().collect();
            i += 2 + rows.len();
            let named: Vec<(usize, String)> = rows
                .iter()
                .enumerate()
                .flat_map(|(k, r)| row_options(r).into_iter().map(move |o| (start + 3 + k, o)))
                .collect();
            if named.is_empty() {
                continue;
            }
            let marker = lines[..start].iter().rev().find(|l| !l.trim().is_empty()).copied().unwrap_or("");
            let Some(of) = marker.strip_prefix("<!-- options: ").and_then(|m| m.strip_suffix(" -->")) else {
                panic!(
                    "{name}:{}: a table of options needs a `<!-- options: COMMAND -->` line before it, naming whose --help it follows",
                    start + 1
                );
            };
            let (known, complete) = match of.strip_prefix("nvmebench ") {
                Some(sub) => {
                    let cmd =
                        cli.find_subcommand(sub).unwrap_or_else(|| panic!("{name}: no command `nvmebench {sub}`"));
                    (command_options(cmd), false)
                }
                None => (script_options(of), true),
            };
            for (line, opt) in &named {
                assert!(
                    known.contains(opt),
                    "{name}:{line}: {opt} is in the table, but `{of} --help` has no such option"
                );
            }
            if complete {
                let in_table: BTreeSet<&str> = named.iter().map(|(_, o)| o.as_str()).collect();
                for opt in known.iter().filter(|o| *o != "--help") {
                    assert!(
                        in_table.contains(opt.as_str()),
                        "{name}:{}: `{of} --help` lists {opt}; the table does not",
                        start + 1
                    );
                }
            }
            tables += 1;
        }
    }
    assert!(tables >= 2, "the option tables were found ({tables})");
}

#[test]
fn every_option_of_run_is_in_a_guide() {
    let text: String = documents().into_iter().map(|(_, t)| t).collect();
    let cli = nvmebench::cli::Cli::command();
    let run = cli.find_subcommand("run").expect("run");
    let mut missing = Vec::new();
    for a in run.get_arguments().filter(|a| !a.is_hide_set()) {
        let Some(l) = a.get_long() else { continue };
        let names: Vec<String> =
            std::iter::once(l).chain(a.get_visible_aliases().into_iter().flatten()).map(|n| format!("--{n}")).collect();
        let found = names.iter().any(|n| {
            text.match_indices(n.as_str())
                .any(|(k, _)| !text[k + n.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '-' || c == '_'))
        });
        if !found {
            missing.push(names.join("/"));
        }
    }
    assert!(missing.is_empty(), "options of `nvmebench run --help` no guide mentions: {missing:?}");
}

/// The code map of docs/architecture.md: each room's row, with the rooms it says it imports.
fn code_map(text: &str) -> BTreeMap<String, BTreeSet<String>> {
    let start = text.find("## Code map").expect("docs/architecture.md has a code map");
    let mut map = BTreeMap::new();
    for row in text[start..].lines().skip_while(|l| !l.starts_with("| module")).skip(2) {
        if !row.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = row.trim_matches('|').split(" | ").map(str::trim).collect();
        let imports: BTreeSet<String> = match *cells.last().expect("a row has cells") {
            "nothing" => BTreeSet::new(),
            list => list.split(", ").map(str::to_string).collect(),
        };
        for name in cells[0].split(", ") {
            map.insert(name.trim_matches('`').trim_end_matches('/').to_string(), imports.clone());
        }
    }
    map
}

#[test]
fn the_code_map_names_every_module_and_its_imports() {
    let docs = documents();
    let arch = &docs.iter().find(|(n, _)| n == "docs/architecture.md").expect("docs/architecture.md").1;
    let map = code_map(arch);
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for e in std::fs::read_dir(&src).expect("src is readable") {
        let name = e.expect("src entries").file_name().to_string_lossy().trim_end_matches(".rs").to_string();
        if name != "lib" && name != "main" {
            assert!(map.contains_key(&name), "docs/architecture.md's code map has no row for `{name}`");
        }
    }
    let (_, tops) = crate::layers::graph();
    let none = BTreeSet::new();
    for (room, listed) in &map {
        assert!(
            src.join(format!("{room}.rs")).exists() || src.join(room).is_dir(),
            "docs/architecture.md's code map has a row for `{room}`, which is no module of src/"
        );
        let imports = tops.get(room).unwrap_or(&none);
        let missing: Vec<&String> = imports.difference(listed).collect();
        assert!(missing.is_empty(), "`{room}` imports {missing:?}; docs/architecture.md's code map does not say so");
        let stale: Vec<&String> = listed.difference(imports).collect();
        assert!(stale.is_empty(), "docs/architecture.md's code map says `{room}` imports {stale:?}, which it does not");
    }
    for (a, b, why) in crate::layers::FORBIDDEN {
        let rule = format!("`{a}` never imports `{b}`: {why}.");
        assert!(arch.contains(&rule), "docs/architecture.md lists the never-rule \"{rule}\"");
    }
}

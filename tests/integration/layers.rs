//! The architecture, checked: the modules' imports form no cycle (between files, and between the
//! top-level rooms), and the edges the house style forbids are absent.
//!
//! The graph is read from the source (`crate::a::b` and `super::` paths, `use crate::{...}` groups
//! included), outside `#[cfg(test)] mod tests` blocks, which may reach anywhere. Like `cargo
//! modules`, it resolves each path to the longest module it names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module path (`report::json`) -> source file.
fn modules(root: &Path) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("src is readable") {
            let p = e.expect("src entries are readable").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(root).expect("under src").with_extension("");
                let parts: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
                let parts: Vec<&str> =
                    parts.iter().map(String::as_str).filter(|c| *c != "mod" && *c != "lib" && *c != "main").collect();
                if !parts.is_empty() {
                    out.insert(parts.join("::"), p);
                }
            }
        }
    }
    out
}

/// The source without comments and without the unit-test module at its end.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("source is readable");
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => &text[..],
    };
    text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// Expands `prefix{a, b::{c, d}}` groups into full paths.
fn expand(prefix: &str, body: &str, out: &mut Vec<String>) {
    let mut depth = 0;
    let mut cur = String::new();
    let mut items = Vec::new();
    for ch in body.chars() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if ch == ',' && depth == 0 {
            items.push(std::mem::take(&mut cur));
        } else {
            cur.push(ch);
        }
    }
    items.push(cur);
    for item in items.iter().map(|i| i.trim()).filter(|i| !i.is_empty()) {
        match item.find('{') {
            Some(k) => expand(&format!("{prefix}{}", &item[..k]), &item[k + 1..item.len() - 1], out),
            None => out.push(format!("{prefix}{item}")),
        }
    }
}

/// Every crate path named in `src` (relative to the crate root), `super::` resolved against `me`.
fn paths(src: &str, me: &str, is_mod_rs: bool) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = src.as_bytes();
    let mut i = 0;
    while i < src.len() {
        let rest = &src[i..];
        let (root, skip) = if rest.starts_with("crate::") {
            (String::new(), "crate::".len())
        } else if rest.starts_with("super::")
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'))
        {
            let mut parent: Vec<&str> = me.split("::").collect();
            // `super` in a mod.rs file is the parent of the directory's module.
            if !is_mod_rs || parent.len() > 1 {
                parent.pop();
            }
            let mut p = parent.join("::");
            if !p.is_empty() {
                p.push_str("::");
            }
            (p, "super::".len())
        } else {
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let tail = &rest[skip..];
        let end = tail.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':' || c == '{')).unwrap_or(tail.len());
        let path = &tail[..end];
        if let Some(k) = path.find('{') {
            let close = tail.find(';').unwrap_or(tail.len());
            let group = &tail[k + 1..close.saturating_sub(1).max(k + 1)];
            expand(&format!("{root}{}", &path[..k]), group.trim_end_matches('}'), &mut out);
        } else {
            out.push(format!("{root}{path}"));
        }
        i += skip + end.max(1);
    }
    out
}

fn resolve<'a>(mods: &'a BTreeMap<String, PathBuf>, path: &str) -> Option<&'a str> {
    let parts: Vec<&str> = path.split("::").filter(|p| !p.is_empty()).collect();
    (1..=parts.len()).rev().find_map(|n| mods.get_key_value(&parts[..n].join("::")).map(|(k, _)| k.as_str()))
}

pub(crate) type Graph = BTreeMap<String, BTreeSet<String>>;

/// The import graph between files (`report::json` -> `stats`) and between top-level rooms.
pub(crate) fn graph() -> (Graph, Graph) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mods = modules(&root);
    let mut files = Graph::new();
    let mut tops = Graph::new();
    for (m, p) in &mods {
        let is_mod_rs = p.file_name().is_some_and(|f| f == "mod.rs");
        for path in paths(&code(p), m, is_mod_rs) {
            let Some(to) = resolve(&mods, &path) else { continue };
            // A module may use its own children (and a child its ancestors' items via super).
            if to == m || to.starts_with(&format!("{m}::")) || m.starts_with(&format!("{to}::")) {
                continue;
            }
            files.entry(m.clone()).or_default().insert(to.to_string());
            let (a, b) = (m.split("::").next().unwrap(), to.split("::").next().unwrap());
            if a != b {
                tops.entry(a.to_string()).or_default().insert(b.to_string());
            }
        }
    }
    (files, tops)
}

/// A cycle through `g`, if there is one, as the list of its nodes.
fn cycle(g: &Graph) -> Option<Vec<String>> {
    fn visit(n: &str, g: &Graph, state: &mut BTreeMap<String, u8>, stack: &mut Vec<String>) -> Option<Vec<String>> {
        match state.get(n) {
            Some(1) => {
                let at = stack.iter().position(|s| s == n).expect("on the stack");
                let mut c = stack[at..].to_vec();
                c.push(n.to_string());
                return Some(c);
            }
            Some(_) => return None,
            None => {}
        }
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for m in g.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, g, state, stack) {
                return Some(c);
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    g.keys().find_map(|n| visit(n, g, &mut state, &mut Vec::new()))
}

#[test]
fn imports_form_no_cycle_between_files_or_rooms() {
    let (files, tops) = graph();
    assert!(files.len() > 20, "the source graph was read: {files:?}");
    if let Some(c) = cycle(&files) {
        panic!("import cycle between files: {}", c.join(" -> "));
    }
    if let Some(c) = cycle(&tops) {
        panic!("import cycle between top-level modules: {}", c.join(" -> "));
    }
}

#[test]
fn the_cycle_check_finds_a_cycle_when_there_is_one() {
    let mut g = Graph::new();
    g.entry("cli".into()).or_default().insert("config".into());
    g.entry("config".into()).or_default().insert("suite".into());
    g.entry("suite".into()).or_default().insert("cli".into());
    assert_eq!(cycle(&g).map(|c| c.len()), Some(4));
    let mut paths_found = paths("use crate::{a::{b, c}, d};\nuse super::e;", "x::y", false);
    paths_found.sort();
    assert_eq!(paths_found, ["a::b", "a::c", "d", "x::e"]);
}

/// The edges between rooms the house style forbids: (importer, imported, why). docs/architecture.md
/// lists each of them (`tests/integration/docs.rs` checks that it does).
pub(crate) const FORBIDDEN: [(&str, &str, &str); 10] = [
    ("engine", "workload", "an engine never decides what to issue"),
    ("workload", "engine", "the generator knows no engine"),
    ("worker", "report", "the hot loop never formats"),
    ("worker", "config", "workers get plans, not flags"),
    ("coordinator", "config", "the coordinator runs plans"),
    ("report", "engine", "reports read results, not engines"),
    ("config", "suite", "the methodology sits above the configuration"),
    ("cli", "config", "flags are parsed before anything is resolved"),
    ("cli", "suite", "the methodology's constants live in the methodology"),
    ("stats", "engine", "statistics count the shared vocabulary"),
];

#[test]
fn forbidden_edges_are_absent() {
    let (_, tops) = graph();
    let imports = |a: &str, b: &str| tops.get(a).is_some_and(|s| s.contains(b));
    // The shared vocabulary imports nothing of the others; the option values neither.
    for leaf in ["io", "options", "units"] {
        assert!(
            tops.get(leaf).is_none_or(|s| s.is_empty()),
            "{leaf} must import nothing of the crate: {:?}",
            tops.get(leaf)
        );
    }
    for (a, b, why) in FORBIDDEN {
        assert!(!imports(a, b), "{a} imports {b}, but {why}");
    }
    // Only the SPDK engine touches the bindings, and config never touches clap.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for (m, p) in modules(&root) {
        let src = code(&p);
        if !m.starts_with("engine::spdk") {
            assert!(!src.contains("spdk_sys"), "{m} uses spdk_sys; only engine::spdk may");
        }
        if m == "config" {
            assert!(!src.contains("clap::"), "config uses clap; it reads the parsed flags of cli");
        }
    }
}

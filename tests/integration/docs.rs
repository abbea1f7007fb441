//! Shell completions and manual pages, generated from the command-line definitions.

use crate::common::{nvmebench, scratch_dir, stderr, stdout};

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

//! Drive telemetry (`--telemetry-interval`): what a target without a health log says, `off`, and,
//! in the QEMU testbed, a temperature threshold lowered mid-run on an emulated NVMe controller.

use crate::common::{assert_conforms, json, make_file, nvmebench, scratch_dir, stderr, stdout};
use crate::testbed::{testbed, testbed_ready};
use std::process::{Command, Stdio};

#[test]
fn a_regular_file_says_once_that_it_has_no_health_log() {
    let dir = scratch_dir();
    let file = make_file(dir.path(), "t.bin", 1 << 20);
    let f = file.to_str().unwrap();
    let base = ["run", "--engine", "psync", "--filename", f, "--time", "300ms", "--quiet"];

    let o = nvmebench(&base);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("telemetry:")).map(str::trim).collect();
    assert_eq!(lines, [format!("telemetry: {f}: not available: a regular file has no NVMe health log")]);

    let o = nvmebench(&[&base[..], &["--output", "json"]].concat());
    let doc = json(&o);
    assert_conforms(&doc, "run with telemetry unavailable");
    let target = &doc["telemetry"]["targets"][0];
    assert_eq!((target["target"].as_str(), target["source"].as_str()), (Some(f), Some("kernel")));
    assert_eq!(target["unavailable"], "a regular file has no NVMe health log");
    assert_eq!(doc["telemetry"]["interval_s"], 1.0);
    assert_eq!(doc["results"]["telemetry_alert"], false);

    let o = nvmebench(&[&base[..], &["--output", "json", "--telemetry-interval", "off"]].concat());
    let doc = json(&o);
    assert!(doc.get("telemetry").is_none(), "off reads nothing: {}", doc["telemetry"]);
    let o = nvmebench(&[&base[..], &["--telemetry-interval", "0"]].concat());
    assert!(!stdout(&o).contains("telemetry:"), "{}", stdout(&o));
}

/// One boot: psync reads the namespace while the guest lowers the composite temperature's
/// over-threshold (Set Features 04h) below QEMU's fixed 323 K once the run is under way. The health
/// log then raises critical warning bit 1; the run must print the warning line and mark the result.
#[test]
fn a_threshold_lowered_mid_run_is_a_warning_and_marks_the_result() {
    if !testbed_ready() {
        return;
    }
    if Command::new("nvme").arg("version").output().is_err() {
        eprintln!("skipped: nvme-cli is not installed (apt-get install nvme-cli); the guest uses the host's");
        return;
    }
    let bin = env!("CARGO_BIN_EXE_nvmebench");
    // The first sample is taken before the workers start: once the worker thread exists, lowering
    // the threshold is news to the sampler.
    let guest = format!(
        "cd /tmp; {bin} run --filename /dev/nvme0n1 --engine psync --time 4 --telemetry-interval 500ms \
         --json /tmp/t.json --quiet > /tmp/out.txt 2>&1 & pid=$!; \
         until grep -qs nvmebench-w /proc/$pid/task/*/comm; do sleep 0.1; done; sleep 1; \
         nvme set-feature /dev/nvme0 --feature-id=4 --value=300 >&2; wait $pid; echo \"rc=$?\"; \
         cat /tmp/out.txt; echo @@@JSON; cat /tmp/t.json"
    );
    let o = testbed(&["--size", "256M", &guest], Stdio::piped());
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    let (text, doc) = out.split_once("@@@JSON").expect("the guest printed the document");
    assert!(text.contains("rc=0"), "{text}");
    let warnings: Vec<&str> = text.lines().filter(|l| l.starts_with("telemetry: WARNING")).collect();
    assert_eq!(
        warnings,
        ["telemetry: WARNING /dev/nvme0n1: critical warning: temperature beyond a threshold during the run"],
        "{text}"
    );

    let doc: serde_json::Value = serde_json::from_str(doc.trim()).expect("the run document parses");
    assert_conforms(&doc, "testbed run with telemetry");
    assert_eq!(doc["results"]["telemetry_alert"], true);
    let target = &doc["telemetry"]["targets"][0];
    assert_eq!(target["source"], "kernel");
    let samples = target["samples"].as_array().expect("samples");
    assert!(samples.len() >= 6, "before, about every 500 ms of 4 s, after: {}", samples.len());
    assert_eq!(samples[0]["critical_warning"], 0, "clear before the run");
    assert_eq!(samples.last().unwrap()["critical_warning"], 2, "bit 1 (temperature) after");
    assert!(samples.iter().all(|s| s["temperature_c"] == 50), "QEMU reports 323 K throughout");
    assert!(samples[0]["t_s"].as_f64().unwrap() < 0.0, "the first sample precedes the measurement");
}

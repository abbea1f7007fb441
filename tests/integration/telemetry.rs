//! Drive telemetry (`--telemetry-interval`): what a target without a health log says, `off`, and,
//! in the QEMU testbed, a temperature threshold lowered mid-run on an emulated NVMe controller (the
//! kernel path) and a temperature warning raised mid-run under the SPDK engine over PCIe.

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
        crate::skip::skip(
            crate::skip::Need::NvmeCli,
            "nvme-cli is not installed (apt-get install nvme-cli); the guest uses the host's",
        );
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

/// One boot, the SPDK engine over PCIe: with the controller bound to vfio-pci and owned by SPDK,
/// nothing in the guest can send it an admin command, so the condition comes from the emulated
/// drive itself: once the run is under way the guest asks the host (`testbed.sh --qmp`) to set the
/// controller's temperature critical warning, as an overheating drive would. The run must print the
/// warning line for the controller and mark the result, and the health log must have been read
/// during the run by threads that never share a worker's core.
#[cfg(feature = "spdk")]
#[test]
fn a_temperature_warning_raised_mid_run_over_pcie_is_a_warning_and_marks_the_result() {
    if !testbed_ready() {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_nvmebench");
    let trid = "trtype:PCIe traddr:0000:00:10.0";
    let warn = r#"{"execute": "qom-set", "arguments": {"path": "/machine/peripheral/nvme0", "property": "smart_critical_warning", "value": 2}}"#;
    // Under TCG on a loaded two-core host, with SPDK polling, the request's way through the shared
    // directory took 2 to 9 s (QEMU answers in milliseconds; a 5 s run once ended first): the run is
    // long, and the guest's clock goes into the output.
    let guest = format!(
        "cd /tmp; {bin} run --engine spdk --trid '{trid}' --time 20 --telemetry-interval 1s \
         --json /tmp/t.json --quiet > /tmp/out.txt 2>&1 & pid=$!; \
         while kill -0 $pid 2>/dev/null && ! grep -qs nvmebench-w /proc/$pid/task/*/comm; do sleep 0.1; done; \
         echo \"workers at $(date +%s.%N)\"; sleep 1; echo \"qmp=$(testbed-qmp '{warn}') at $(date +%s.%N)\"; \
         kill -0 $pid && echo 'the run was still going'; wait $pid; echo \"rc=$? at $(date +%s.%N)\"; cat /tmp/out.txt; echo @@@JSON; cat /tmp/t.json"
    );
    let o = testbed(
        &["--qmp", "--iommu", "--hugepages", "256", "--bind", "vfio-pci", "--size", "256M", &guest],
        Stdio::piped(),
    );
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    let (text, doc) = out.split_once("@@@JSON").expect("the guest printed the document");
    eprint!("{}", text.lines().filter(|l| l.contains(" at ")).map(|l| format!("guest: {l}\n")).collect::<String>());
    assert!(text.contains("qmp={\"return\": {}}"), "QEMU took the warning: {out}");
    assert!(
        text.contains("the run was still going"),
        "QEMU took the warning only after the run had ended (a loaded host slows the guest): {out}"
    );
    assert!(text.contains("rc=0"), "{out}");
    let warnings: Vec<&str> = text.lines().filter(|l| l.starts_with("telemetry: WARNING")).collect();
    assert_eq!(
        warnings,
        [format!("telemetry: WARNING {trid}: critical warning: temperature beyond a threshold during the run")],
        "{out}"
    );

    let doc: serde_json::Value = serde_json::from_str(doc.trim()).expect("the run document parses");
    assert_conforms(&doc, "testbed SPDK run with telemetry");
    assert_eq!(doc["results"]["telemetry_alert"], true);
    let target = &doc["telemetry"]["targets"][0];
    assert_eq!((target["target"].as_str(), target["source"].as_str()), (Some(trid), Some("spdk")));
    let samples = target["samples"].as_array().expect("samples");
    let timeline: Vec<String> = samples
        .iter()
        .map(|s| format!("{:.1} s: {}", s["t_s"].as_f64().unwrap_or(f64::NAN), s["critical_warning"]))
        .collect();
    eprintln!("critical warning over the run: {}", timeline.join(", "));
    assert!(samples.len() >= 15, "before, every second of 20 s, after: {}", samples.len());
    assert_eq!(samples[0]["critical_warning"], 0, "clear before the run");
    assert!(samples[0]["t_s"].as_f64().unwrap() < 0.0, "the first sample precedes the measurement");
    assert_eq!(samples.last().unwrap()["critical_warning"], 2, "bit 1 (temperature) after");
    let (_, during) = samples.split_last().unwrap();
    assert!(during.iter().any(|s| s["critical_warning"] == 2), "the sampler saw it during the run: {target}");
    assert!(samples.iter().all(|s| s["temperature_c"] == 50), "QEMU reports 323 K throughout");

    // The health log is read by the sampler and SPDK's admin completions by the admin poller:
    // neither is a worker, and neither may run on a worker's core.
    let placement = &doc["results"]["placement"];
    assert_eq!(placement["workers_alone"], true, "{placement}");
    let threads = placement["threads"].as_array().expect("threads");
    let cores = |t: &serde_json::Value| cpu_list(t["cpus"].as_str().expect("cpus"));
    let worker_cores: Vec<usize> = threads.iter().filter(|t| t["worker"] == true).flat_map(cores).collect();
    assert!(!worker_cores.is_empty(), "{placement}");
    // The kernel keeps 15 bytes of a thread's name: nvmebench-telemetry shows as nvmebench-telem.
    for name in ["nvmebench-telem", "nvmebench-admin"] {
        let t = threads.iter().find(|t| t["name"] == name).unwrap_or_else(|| panic!("no {name}: {placement}"));
        assert_eq!(t["worker"], false, "{t}");
        assert!(cores(t).iter().all(|c| !worker_cores.contains(c)), "{name} may run on a worker's core: {placement}");
    }
}

/// The cores of a `Cpus_allowed_list` (`0-3,8`).
#[cfg(feature = "spdk")]
fn cpu_list(list: &str) -> Vec<usize> {
    list.split(',')
        .flat_map(|part| {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            a.trim().parse::<usize>().expect("a core")..=b.trim().parse::<usize>().expect("a core")
        })
        .collect()
}

//! Inside the QEMU testbed (`scripts/testbed.sh`): the hugepage script, the binding script, `doctor`
//! and the io_uring engine against an emulated NVMe controller.
//!
//! Each boot costs 15 s or more under TCG, so the checks are grouped into two boots, run one at a
//! time. A guest script prints `@@@ NAME rc=N` before each step's output; the tests split on those
//! lines. Where the testbed cannot boot (no QEMU, no kernel), each test prints why and skips.

use crate::common::{stderr, stdout};
use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;

/// Boots one at a time: two TCG guests on a small machine would each take twice as long.
pub(crate) static BOOT: Mutex<()> = Mutex::new(());

fn script(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel).display().to_string()
}

pub(crate) fn testbed_ready() -> bool {
    let o = Command::new(script("scripts/testbed.sh")).arg("--check").output().expect("bash runs");
    if !o.status.success() {
        crate::skip::skip(crate::skip::Need::Testbed, stdout(&o).trim());
        return false;
    }
    true
}

pub(crate) fn testbed(args: &[&str], stdout_to: Stdio) -> Output {
    let _one = BOOT.lock().unwrap_or_else(|e| e.into_inner());
    let started = std::time::Instant::now();
    // A hung guest fails its test after 15 minutes (the script's default): the first boot runs some
    // thirty steps, which under TCG on a loaded two-core machine took over 10.
    let o = Command::new(script("scripts/testbed.sh"))
        .args(["--timeout", "900"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdout_to)
        .stderr(Stdio::piped())
        .output()
        .expect("the testbed script runs");
    eprintln!("testbed boot took {:.1} s", started.elapsed().as_secs_f64());
    o
}

/// Splits the guest's output into steps: `@@@ NAME rc=N` starts step NAME, whose command exited N.
fn steps(out: &str) -> HashMap<String, (i32, String)> {
    let mut map = HashMap::new();
    let mut cur: Option<(String, i32, String)> = None;
    for line in out.lines() {
        if let Some(head) = line.strip_prefix("@@@ ") {
            if let Some((n, rc, text)) = cur.take() {
                map.insert(n, (rc, text));
            }
            let (name, rc) = head.split_once(" rc=").expect("marker has rc=");
            cur = Some((name.to_string(), rc.trim().parse().expect("rc is a number"), String::new()));
        } else if let Some((_, _, text)) = cur.as_mut() {
            text.push_str(line);
            text.push('\n');
        }
    }
    if let Some((n, rc, text)) = cur {
        map.insert(n, (rc, text));
    }
    map
}

/// The guest script for the first boot: each step's output is captured and printed after its
/// marker, so a failing step shows what it said.
fn guest_script(steps: &[(&str, String)]) -> String {
    let mut s = String::from("cd /tmp\n");
    for (name, cmd) in steps {
        s.push_str(&format!(
            "t=$(date +%s%N); out=$( {{ {cmd} ; }} 2>&1 ); rc=$?; echo \"@@@ {name} rc=$rc\"; printf '%s\\n' \"$out\"; \
             echo \"step {name}: $(( ($(date +%s%N) - t) / 1000000 )) ms\" >&2\n"
        ));
    }
    s
}

/// The first JSON document in a step's output (stderr lines may stand around it).
fn first_json(text: &str) -> serde_json::Value {
    let start = text.find('{').unwrap_or_else(|| panic!("no JSON in: {text}"));
    serde_json::Deserializer::from_str(&text[start..])
        .into_iter::<serde_json::Value>()
        .next()
        .and_then(Result::ok)
        .unwrap_or_else(|| panic!("no JSON document in: {text}"))
}

fn doctor_statuses(json_text: &str) -> HashMap<String, String> {
    let v = first_json(json_text);
    v["checks"]
        .as_array()
        .expect("checks is an array")
        .iter()
        .map(|c| (c["name"].as_str().unwrap().to_string(), c["status"].as_str().unwrap().to_string()))
        .collect()
}

/// One boot with an emulated IOMMU and poll queues: doctor before set-up, hugepages reserved,
/// reported and cleared, the binding script refusing a mounted partition, moving the controller to
/// vfio-pci and back, doctor after set-up, and nvmebench's io_uring engine reading and writing the
/// namespace.
#[test]
fn setup_scripts_doctor_and_uring_on_an_emulated_controller() {
    if !testbed_ready() {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_nvmebench");
    let hp = script("hugepages/setup.sh");
    let bind = script("scripts/nvme-bind.sh");
    let bdf = "0000:00:10.0";
    let mut plan: Vec<(&str, String)> = vec![
        ("doctor-before", format!("{bin} doctor --device {bdf} --json")),
        ("reserve", format!("{hp} --mem 512M && {hp} --mem 512M")),
        ("stale-file", "touch /dev/hugepages/stale-from-crash && echo made".into()),
        ("status", format!("{hp} status")),
        ("clear", format!("{hp} clear && ls -A /dev/hugepages")),
        (
            "partition",
            "echo 'start=2048, size=65536' | sfdisk -q /dev/nvme0n1 && sleep 1 && mkfs.ext4 -q /dev/nvme0n1p1 && \
             mkdir -p /tmp/mnt && mount /dev/nvme0n1p1 /tmp/mnt && echo mounted"
                .into(),
        ),
        ("list-mounted", format!("{bind} list")),
        ("bind-mounted", format!("{bind} bind {bdf}")),
        ("driver-after-refusal", format!("basename $(readlink /sys/bus/pci/devices/{bdf}/driver)")),
        ("bind", format!("umount /tmp/mnt && {bind} bind {bdf} && {bind} bind {bdf}")),
        ("driver-bound", format!("basename $(readlink /sys/bus/pci/devices/{bdf}/driver); {bind} list")),
        ("doctor-after", format!("{bin} doctor --device {bdf} --json")),
        (
            "restore",
            format!(
                "{bind} restore {bdf} && for i in $(seq 100); do [ -b /dev/nvme0n1 ] && break; sleep 0.1; done; \
                 basename $(readlink /sys/bus/pci/devices/{bdf}/driver); ls /dev/nvme0n1"
            ),
        ),
        ("release", format!("{hp} release && cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages")),
        // The partition table written above is a signature: writing over it takes the serial too.
        (
            "uring-signature",
            format!("{bin} run --engine uring --filename /dev/nvme0n1 --rw randwrite --time 1 --allow-destroy --quiet"),
        ),
        (
            "uring-write",
            format!(
                "{bin} run --engine uring --filename /dev/nvme0n1 --rw randrw --rwmixread 50 --bs 4k --qd 16 \
                 --time 2 --allow-destroy --confirm-serial nvmebench0 --quiet --output json"
            ),
        ),
        ("uring-no-allow", format!("{bin} run --filename /dev/nvme0n1 --rw randwrite --time 1 --quiet")),
        (
            "uring-read",
            format!(
                "{bin} run --engine uring --filename /dev/nvme0n1 --rw read --bs 128k --ios 1000 --quiet --output json"
            ),
        ),
    ];
    // Every other kernel engine and mode writes and reads the namespace, verified (each read checks
    // what the same run wrote); then one compare across all of them.
    let kernel_engines = ["aio", "psync", "uring:poll", "uring-cmd", "uring-cmd:poll"];
    for engine in kernel_engines {
        let dev = if engine.starts_with("uring-cmd") { "/dev/ng0n1" } else { "/dev/nvme0n1" };
        plan.push((
            engine,
            format!(
                "{bin} run --engine {engine} --filename {dev} --rw randrw --size 16m --qd 8 --ios 600 --verify \
                 --allow-destroy --confirm-serial nvmebench0 --quiet --output json"
            ),
        ));
    }
    // Trims, write-zeroes and flushes: BLKDISCARD/BLKZEROOUT/fsync through the block device, and
    // Dataset Management/Write Zeroes/Flush through passthrough; QEMU's controller takes them all.
    let mix = "--rw randrw --rwmix read=40,write=20,trim=20,write-zeroes=10,flush=10 --size 16m --qd 8 --ios 600";
    let safe = "--allow-destroy --confirm-serial nvmebench0 --quiet";
    plan.push(("ops-uring", format!("{bin} run --engine uring --filename /dev/nvme0n1 {mix} {safe} --output json")));
    plan.push((
        "ops-uring-cmd",
        format!("{bin} run --engine uring-cmd --filename /dev/ng0n1 {mix} {safe} --output json"),
    ));
    // Written, then zeroed by Write Zeroes through passthrough: the first MiB reads back as zeroes.
    let first_mib = "dd if=/dev/nvme0n1 bs=1M count=1 iflag=direct status=none | cmp -n 1048576 - /dev/zero";
    plan.push((
        "write-zeroes-reads-zero",
        format!(
            "{bin} run --filename /dev/nvme0n1 --rw write --bs 64k --size 1m --ios 16 {safe} && \
             ! {first_mib} >/dev/null && echo written && \
             {bin} run --engine uring-cmd --filename /dev/ng0n1 --rw rw --rwmix write-zeroes=100 --bs 64k \
             --size 1m --ios 16 {safe} && {first_mib} && echo zeroed"
        ),
    ));
    plan.push((
        "compare",
        format!(
            "{bin} compare --filename /dev/nvme0n1 --engines psync,aio,uring,uring:poll,uring-cmd,uring-cmd:poll \
             --time 1 --quiet --output json"
        ),
    ));
    // Last, as it reformats the namespace: a file on vfat (which punches no holes; the host's kernel
    // may lack vfat, Debian's has it) is refused trims up front, existing or new, and nothing
    // changes.
    plan.push((
        "vfat-trim",
        format!(
            "if ! command -v mkfs.vfat >/dev/null; then echo 'skipped: no mkfs.vfat'; else \
             modprobe vfat; mkfs.vfat -I /dev/nvme0n1 >/dev/null && mkdir -p /tmp/v && mount -t vfat /dev/nvme0n1 /tmp/v && \
             head -c 1048576 /dev/urandom > /tmp/v/old.dat && before=$(md5sum < /tmp/v/old.dat) && \
             {{ {bin} run --filename /tmp/v/old.dat --rw randtrim --time 1 --quiet; echo \"rc=$?\"; }} && \
             {{ {bin} run --filename /tmp/v/new.dat --size 1m --rw randtrim --time 1 --quiet; echo \"rc=$?\"; }} && \
             ls /tmp/v && [ \"$before\" = \"$(md5sum < /tmp/v/old.dat)\" ] && echo unchanged; umount /tmp/v; fi"
        ),
    ));
    let o =
        testbed(&["--iommu", "--append", "nvme.poll_queues=2", "--size", "512M", &guest_script(&plan)], Stdio::piped());
    let out = stdout(&o);
    let err = stderr(&o);
    eprint!("{}", err.lines().filter(|l| l.starts_with("step ")).map(|l| format!("{l}\n")).collect::<String>());
    assert_eq!(o.status.code(), Some(0), "guest script ended badly\nstdout:\n{out}\nstderr:\n{err}");
    let s = steps(&out);
    let step = |n: &str| s.get(n).unwrap_or_else(|| panic!("step {n} missing\nstdout:\n{out}\nstderr:\n{err}"));

    // Doctor names the missing pieces, with exit status 1.
    let (rc, text) = step("doctor-before");
    assert_eq!(*rc, 1, "{text}");
    let before = doctor_statuses(text);
    assert_eq!(before["hugepages"], "fail", "{text}");
    assert_eq!(before["hugetlbfs"], "fail", "{text}");
    assert_eq!(before["device-driver"], "warn", "{text}");
    assert_eq!(before["iommu"], "ok", "{text}");
    assert_eq!(before["poll-queues"], "ok", "{text}");

    let (rc, text) = step("reserve");
    assert_eq!(*rc, 0, "{text}");
    assert!(text.contains("reserved 256 pages of 2M") && text.contains("already reserved: 256"), "{text}");
    assert!(text.contains("mounted hugetlbfs") && text.contains("already mounted"), "{text}");
    let (rc, text) = step("status");
    assert_eq!(*rc, 0, "{text}");
    assert!(
        text.lines().any(|l| l.split_whitespace().collect::<Vec<_>>() == ["2M", "all", "256", "256", "0", "0"]),
        "{text}"
    );
    assert!(text.contains("/dev/hugepages/stale-from-crash") && text.contains("nobody (stale"), "{text}");
    let (rc, text) = step("clear");
    assert_eq!(*rc, 0, "{text}");
    assert!(text.contains("cleared 1 stale hugepage file"), "{text}");
    assert!(!text.contains("stale-from-crash"), "{text}");

    let (rc, text) = step("partition");
    assert_eq!((*rc, text.trim()), (0, "mounted"), "{text}");
    let (_, text) = step("list-mounted");
    assert!(text.contains(bdf) && text.contains("nvme0n1p1: mounted"), "{text}");
    let (rc, text) = step("bind-mounted");
    assert_eq!(*rc, 2, "binding a device with a mounted partition must be refused: {text}");
    assert!(text.contains("is in use on this host (nvme0n1p1: mounted)"), "{text}");
    assert_eq!(step("driver-after-refusal").1.trim(), "nvme");
    let (rc, text) = step("bind");
    assert_eq!(*rc, 0, "{text}");
    assert!(text.contains(&format!("{bdf}: nvme -> vfio-pci")) && text.contains("already bound to vfio-pci"), "{text}");
    let (_, text) = step("driver-bound");
    assert!(text.starts_with("vfio-pci\n"), "{text}");

    let (rc, text) = step("doctor-after");
    assert_eq!(*rc, 0, "{text}");
    let after = doctor_statuses(text);
    for name in ["hugepages", "hugetlbfs", "iommu", "vfio-pci", "device-driver", "iommu-group", "memlock", "io_uring"] {
        assert_eq!(after[name], "ok", "{name}: {text}");
    }

    let (rc, text) = step("restore");
    assert_eq!(*rc, 0, "{text}");
    assert!(text.contains(&format!("{bdf}: vfio-pci -> nvme")) && text.contains("\nnvme\n/dev/nvme0n1"), "{text}");
    let (rc, text) = step("release");
    assert_eq!(*rc, 0, "{text}");
    assert_eq!(text.lines().last(), Some("0"), "{text}");

    let (rc, text) = step("uring-signature");
    assert_eq!(*rc, 2, "{text}");
    assert!(text.contains("holds an MBR partition table") && text.contains("--confirm-serial nvmebench0"), "{text}");
    let (rc, text) = step("uring-write");
    assert_eq!(*rc, 0, "{text}");
    let v = first_json(text);
    let total = &v["results"]["total"];
    assert!(total["read"]["ios"].as_u64().unwrap() > 0 && total["write"]["ios"].as_u64().unwrap() > 0, "{text}");
    let (rc, text) = step("uring-no-allow");
    assert_eq!(*rc, 2, "{text}");
    assert!(text.contains("--allow-destroy"), "{text}");
    let (rc, text) = step("uring-read");
    assert_eq!(*rc, 0, "{text}");
    let v = first_json(text);
    assert_eq!(v["results"]["total"]["read"]["ios"], 1000, "{text}");
    assert_eq!(v["results"]["total"]["read"]["io_bytes"], 1000 * 131072, "{text}");
    for engine in kernel_engines {
        let (rc, text) = step(engine);
        assert_eq!(*rc, 0, "{engine}: {text}");
        let v = first_json(text);
        let name = engine.split(':').next().unwrap();
        assert_eq!(v["engine"]["name"], name, "{text}");
        let total = &v["results"]["total"];
        assert!(total["read"]["ios"].as_u64().unwrap() > 0 && total["write"]["ios"].as_u64().unwrap() > 0, "{text}");
        let verify = &v["results"]["verify"];
        assert!(verify["units_checked"].as_u64().unwrap() > 0 && verify["mismatch_count"] == 0, "{engine}: {verify}");
        if engine.ends_with(":poll") {
            assert_eq!(v["engine"]["options"]["mode"], "poll", "{engine}: {}", v["engine"]);
        }
    }
    for engine in ["ops-uring", "ops-uring-cmd"] {
        let (rc, text) = step(engine);
        assert_eq!(*rc, 0, "{engine}: {text}");
        let total = &first_json(text)["results"]["total"];
        assert_eq!(total["errors"]["total"], 0, "{engine}: {total}");
        let ios = |d: &str| total[d]["ios"].as_u64().unwrap_or(0);
        for d in ["read", "write", "trim", "write_zeroes", "flush"] {
            assert!(ios(d) > 0, "{engine}: no {d} completed: {total}");
        }
        assert_eq!(["read", "write", "trim", "write_zeroes", "flush"].map(ios).iter().sum::<u64>(), 600, "{engine}");
    }
    let (rc, text) = step("write-zeroes-reads-zero");
    assert_eq!((*rc, text.lines().filter(|l| *l == "written" || *l == "zeroed").count()), (0, 2), "{text}");
    let (rc, text) = step("compare");
    assert_eq!(*rc, 0, "{text}");
    let j = first_json(text);
    let cols = j["summary"].as_array().unwrap();
    assert_eq!(cols.len(), 6, "{j}");
    for c in cols {
        assert!(c["iops"].as_f64().unwrap() > 0.0 && c["errors"] == 0, "{c}");
    }
    assert_eq!(j["runs"][4]["run"]["config"]["target"]["path"], "/dev/ng0n1", "uring-cmd ran on the generic device");
    let (rc, text) = step("vfat-trim");
    assert_eq!(*rc, 0, "{text}");
    if text.contains("skipped: no mkfs.vfat") {
        crate::skip::skip(crate::skip::Need::Mkfs, "vfat trims: no mkfs.vfat (dosfstools) on this host");
    } else {
        let refusal = "is on a vfat filesystem, which cannot punch holes (trim); put the file on a filesystem that can";
        assert_eq!((text.matches(refusal).count(), text.matches("rc=2").count()), (2, 2), "{text}");
        assert!(text.contains("/tmp/v/old.dat is on") && text.contains("/tmp/v/new.dat is on"), "{text}");
        assert!(text.contains("rc=2\nold.dat\nunchanged"), "no file created, none changed: {text}");
    }
}

/// One boot through the script's own set-up options: two controllers bound to uio_pci_generic
/// before the command, hugepages reserved, the command's exit status passed back, and its output
/// arriving whole in a regular file.
#[test]
fn testbed_binds_reserves_and_passes_status_and_output_through() {
    if !testbed_ready() {
        return;
    }
    let dir = crate::common::scratch_dir();
    let out_path = dir.path().join("guest.out");
    let file = std::fs::File::create(&out_path).unwrap();
    let cmd = "for f in 0000:00:10.0 0000:00:11.0; do echo \"$f $(basename $(readlink /sys/bus/pci/devices/$f/driver))\"; done; \
               echo hugepages $(cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages); \
               grep -c hugetlbfs /proc/mounts; echo to-stderr >&2; seq 1 2000 | tail -n 1; exit 3";
    let o = testbed(&["--nvme", "2", "--hugepages", "16", "--bind", "uio_pci_generic", cmd], Stdio::from(file));
    let err = stderr(&o);
    let out = std::fs::read_to_string(&out_path).unwrap();
    assert_eq!(o.status.code(), Some(3), "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("0000:00:10.0 uio_pci_generic\n0000:00:11.0 uio_pci_generic\n"), "{out}\n{err}");
    assert!(out.contains("hugepages 16\n1\n2000\n"), "{out}\n{err}");
    assert!(err.contains("to-stderr") && !out.contains("to-stderr"), "{out}\n{err}");
}

/// Bad input is refused before anything boots or is created, with exit status 2.
#[test]
fn testbed_bad_input_is_refused() {
    let run = |args: &[&str]| {
        let o = Command::new(script("scripts/testbed.sh")).args(args).output().expect("bash runs");
        (o.status.code(), stderr(&o))
    };
    let (rc, e) = run(&["--bind", "vfio-pci", "true"]);
    assert_eq!(rc, Some(2));
    assert!(e.contains("--bind vfio-pci needs the emulated IOMMU") && e.contains("add --iommu"), "{e}");
    let (rc, e) = run(&["--nvme", "9", "true"]);
    assert_eq!(rc, Some(2));
    assert!(e.contains("--nvme '9' is out of range"), "{e}");
    let (rc, e) = run(&["--size", "4Q", "true"]);
    assert_eq!(rc, Some(2));
    assert!(e.contains("--size '4Q' is not a size"), "{e}");
    let (rc, e) = run(&[]);
    assert_eq!(rc, Some(2));
    assert!(e.contains("no command to run in the guest"), "{e}");
    let (rc, e) = run(&["--rwdir", "/nonexistent/dir", "true"]);
    assert_eq!(rc, Some(2));
    assert!(e.contains("is not an existing directory"), "{e}");
}

/// The QEMU command line the script builds: controllers at fixed addresses, namespaces with 4 KiB
/// blocks, the IOMMU, kernel parameters and the monitor socket with `testbed-qmp` on the guest's
/// PATH; checked with --dry-run, which boots nothing.
#[test]
fn testbed_dry_run_describes_the_guest() {
    if !testbed_ready() {
        return;
    }
    let o = Command::new(script("scripts/testbed.sh"))
        .args([
            "--dry-run",
            "--nvme",
            "2",
            "--namespaces",
            "2",
            "--queues",
            "3",
            "--iommu",
            "--append",
            "nvme.poll_queues=2",
            "--qmp",
        ])
        .args(["--", "uname", "-r"])
        .output()
        .expect("bash runs");
    let out = stdout(&o).replace('\\', "");
    assert!(o.status.success(), "{out}{}", stderr(&o));
    for want in [
        "-device nvme,id=nvme1,serial=nvmebench1,addr=0x11,max_ioqpairs=3",
        "nvme-ns,drive=nvme1-ns2,bus=nvme1,nsid=2,logical_block_size=4096,physical_block_size=4096",
        "intel-iommu,intremap=on,caching-mode=on,aw-bits=48",
        "intel_iommu=on iommu=pt nvme.poll_queues=2",
        "exec uname -r",
        "-cpu max",
        "/qmp.sock,server=on,wait=off",
        "/bin:\"$PATH\"",
    ] {
        assert!(out.contains(want), "missing {want} in:\n{out}");
    }
}

/// The SPDK engine over PCIe: the emulated controller bound to vfio-pci behind the emulated IOMMU,
/// `devices` finding it on the bus, writes (with and without the flag), random reads, a verified
/// mixed run, a controller reset mid-run, and SPDK's own perf on the same controller. Then, with the
/// controller back on the kernel, `compare --rebind` across kernel engines and SPDK, and the
/// controller coming back to nvme after Ctrl-C and after SIGKILL.
#[cfg(feature = "spdk")]
#[test]
fn spdk_engine_over_pcie_in_the_testbed() {
    if !testbed_ready() {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_nvmebench");
    let trid = "trtype:PCIe traddr:0000:00:10.0";
    let spdk_dir = std::env::var("SPDK_DIR").unwrap_or_default();
    let perf = format!("{spdk_dir}/bin/spdk_nvme_perf");
    let mut plan: Vec<(&str, String)> = vec![
        ("devices", format!("{bin} devices")),
        ("no-allow", format!("{bin} run --engine spdk --trid '{trid}' --rw write --ios 10")),
        (
            "write",
            format!(
                "{bin} run --engine spdk --trid '{trid}' --rw write --bs 128k --ios 512 --allow-destroy --output json"
            ),
        ),
        ("read", format!("{bin} run --engine spdk --trid '{trid}' --qd 32 --time 2 --output json")),
        (
            "verify",
            format!(
                "{bin} run --engine spdk --trid '{trid}' --rw randrw --size 64m --verify --ios 3000 --allow-destroy --output json"
            ),
        ),
    ];
    if !spdk_dir.is_empty() && Path::new(&perf).exists() {
        plan.push((
            "perf",
            format!("LD_LIBRARY_PATH={spdk_dir}/lib {perf} -q 32 -o 4096 -w randread -t 2 -r '{trid}'"),
        ));
    }
    // A controller reset (CC.EN toggled, queue pairs re-created in place) under a mixed workload.
    plan.push((
        "reset",
        format!(
            "{bin} run --engine spdk --trid '{trid}' --rw randrw --qd 8 --time 4 --spdk-reset-after 1s --on-error retry:3 --allow-destroy --output json"
        ),
    ));
    // The delay counts from the run's start, after the workers' set-up: a reset due 5 ms in finds
    // a running workload, never a queue pair being connected (however long set-up takes here).
    plan.push((
        "reset-early",
        format!(
            "{bin} run --engine spdk --trid '{trid}' --qd 8 --time 2 --spdk-reset-after 5ms --on-error retry:3 --output json"
        ),
    ));
    // Then `compare --rebind` from the kernel's side: the controller goes back to nvme first.
    let bdf = "0000:00:10.0";
    let drv = format!("basename \"$(readlink /sys/bus/pci/devices/{bdf}/driver)\"");
    let wait_for = |driver: &str, secs: u32| {
        format!("for i in $(seq {}); do [ \"$({drv})\" = {driver} ] && break; sleep 0.2; done", secs * 5)
    };
    let bind = script("scripts/nvme-bind.sh");
    plan.push(("restore", format!("{bind} restore {bdf} && {} && ls /dev/nvme0n1", wait_for("nvme", 30))));
    plan.push(("no-rebind", format!("{bin} compare --filename /dev/nvme0n1 --engines uring,spdk --time 1")));
    plan.push((
        "rebind",
        format!(
            "{bin} compare --rebind --filename /dev/nvme0n1 --engines uring,spdk,aio --time 2 --output json; echo \"driver=$({drv})\""
        ),
    ));
    // Ctrl-C during the SPDK phase: partial results, exit 130, the driver back, no hugepage files.
    plan.push((
        "sigint",
        format!(
            "{bin} compare --rebind --filename /dev/nvme0n1 --engines spdk,uring --time 60 --output json & pid=$!; \
             {}; {}; sleep 3; kill -INT $pid; wait $pid; echo \"exit=$?\"; echo \"driver=$({drv})\"; \
             echo \"hugepage files: $(ls /dev/hugepages | wc -l)\"",
            wait_for("vfio-pci", 60),
            // SPDK's set-up under emulation can take longer than any fixed sleep on a loaded host:
            // the signal must come once the SPDK phase's worker runs.
            "for i in $(seq 600); do grep -qs nvmebench-w /proc/$pid/task/*/comm && break; sleep 0.2; done"
        ),
    ));
    // Killed outright (what a second Ctrl-C does): the guardian gives the controller back.
    plan.push((
        "sigkill",
        format!(
            "{bin} compare --rebind --filename /dev/nvme0n1 --engines spdk --time 60 --quiet >/dev/null 2>&1 & pid=$!; \
             {}; sleep 5; kill -KILL $pid; wait $pid; echo \"exit=$?\"; {}; echo \"driver=$({drv})\"",
            wait_for("vfio-pci", 60),
            wait_for("nvme", 60)
        ),
    ));
    let o = testbed(
        &["--iommu", "--hugepages", "256", "--bind", "vfio-pci", "--size", "512M", &guest_script(&plan)],
        Stdio::piped(),
    );
    let out = stdout(&o);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "guest script ended badly\nstdout:\n{out}\nstderr:\n{err}");
    let s = steps(&out);
    let step = |n: &str| s.get(n).unwrap_or_else(|| panic!("step {n} missing\nstdout:\n{out}\nstderr:\n{err}"));

    let (rc, text) = step("devices");
    assert_eq!(*rc, 0, "{text}");
    assert!(text.contains("PCIe 0000:00:10.0") && text.contains("ns:1  4096-byte blocks"), "{text}");
    let (rc, text) = step("no-allow");
    assert_eq!(*rc, 2, "{text}");
    assert!(text.contains("is an NVMe namespace and this workload writes to it"), "{text}");
    let (rc, text) = step("write");
    assert_eq!(*rc, 0, "{text}");
    let j = first_json(text);
    assert_eq!(j["engine"]["options"]["transport"], "PCIe");
    assert_eq!(j["results"]["total"]["write"]["ios"], 512);
    let (rc, text) = step("read");
    assert_eq!(*rc, 0, "{text}");
    assert!(first_json(text)["results"]["total"]["read"]["ios"].as_u64().unwrap() > 100, "{text}");
    let (rc, text) = step("verify");
    assert_eq!(*rc, 0, "{text}");
    let v = &first_json(text)["results"]["verify"];
    assert!(v["units_checked"].as_u64().unwrap() > 1000 && v["mismatch_count"] == 0, "{v}");
    if let Some((rc, text)) = s.get("perf") {
        assert_eq!(*rc, 0, "{text}");
        assert!(text.contains("Total"), "{text}");
    }
    let (rc, text) = step("reset");
    assert_eq!(*rc, 0, "{text}");
    let r = &first_json(text)["results"];
    assert!(r["events"][0].as_str().is_some_and(|e| e.contains("back after")), "{r}");
    assert_eq!(r["total"]["errors"]["total"], 0, "{}", r["total"]["errors"]);
    assert!(r["elapsed_ns"].as_u64().unwrap() > 3_500_000_000, "the run went on after the reset: {r}");

    let (rc, text) = step("reset-early");
    assert_eq!(*rc, 0, "{text}");
    let r = &first_json(text)["results"];
    assert!(r["events"][0].as_str().is_some_and(|e| e.contains("back after")), "{r}");
    // The reset failed the I/Os in flight, which were retried: it hit the run, not its set-up.
    assert!(r["total"]["errors"]["retried"].as_u64().unwrap() > 0, "{}", r["total"]["errors"]);
    assert_eq!(r["total"]["errors"]["total"], 0, "{}", r["total"]["errors"]);

    let (rc, text) = step("restore");
    assert_eq!(*rc, 0, "{text}");
    let (rc, text) = step("no-rebind");
    assert_eq!(*rc, 2, "{text}");
    assert!(text.contains("while the kernel's nvme driver owns 0000:00:10.0; add --rebind"), "{text}");
    let (rc, text) = step("rebind");
    assert_eq!(*rc, 0, "{text}");
    let j = first_json(text);
    let engines: Vec<&str> = j["summary"].as_array().unwrap().iter().map(|c| c["engine"].as_str().unwrap()).collect();
    assert_eq!(engines, ["uring", "spdk", "aio"], "{j}");
    for c in j["summary"].as_array().unwrap() {
        assert!(c["iops"].as_f64().unwrap() > 0.0 && c["errors"] == 0, "{c}");
    }
    let log: Vec<&str> = j["rebind"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    assert!(log.len() >= 2 && log[0].contains("to vfio-pci for spdk"), "{log:?}");
    assert!(log.last().unwrap().contains("back on the kernel as /dev/nvme"), "{log:?}");
    assert!(text.contains("driver=nvme"), "{text}");

    let (_, text) = step("sigint");
    assert!(text.contains("exit=130"), "{text}");
    assert!(text.contains("driver=nvme"), "{text}");
    assert!(text.contains("hugepage files: 0"), "{text}");
    let j = first_json(text);
    assert!(j["stopped_early"].as_str().is_some_and(|s| s.contains("interrupted during spdk")), "{j}");
    assert!(j["summary"][0]["iops"].as_f64().unwrap() > 0.0, "partial results of the spdk phase: {j}");
    let (_, text) = step("sigkill");
    assert!(text.contains("exit=137") && text.contains("driver=nvme"), "{text}");
}

/// SPDK's interrupt mode (`spdk:interrupt`, perf's `-E`) on the emulated controller behind vfio-pci:
/// reads and a mixed run complete with every I/O stamped, the engine line says how it learns of
/// completions, the controller's MSI-X interrupts are taken (and none when polled), and the worker,
/// sleeping in the poll group's wait, spends less CPU per I/O than the polled worker at the same
/// depth. `compare` runs the two one after the other (each attaching the controller with its own
/// options). SPDK's perf -E on the same controller for reference.
#[cfg(feature = "spdk")]
#[test]
fn spdk_interrupt_mode_over_pcie_in_the_testbed() {
    if !testbed_ready() {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_nvmebench");
    let trid = "trtype:PCIe traddr:0000:00:10.0";
    let spdk_dir = std::env::var("SPDK_DIR").unwrap_or_default();
    let perf = format!("{spdk_dir}/bin/spdk_nvme_perf");
    let mut plan: Vec<(&str, String)> = vec![
        ("interrupt", format!("{bin} run --engine spdk:interrupt --trid '{trid}' --qd 4 --time 3 --output json")),
        ("polled", format!("{bin} run --engine spdk --trid '{trid}' --qd 4 --time 3 --output json")),
        (
            "mixed",
            format!(
                "{bin} run --engine spdk:interrupt --trid '{trid}' --rw randrw --qd 8 --ios 2000 --allow-destroy --output json"
            ),
        ),
        (
            "compare",
            format!("{bin} compare --trid '{trid}' --engines spdk,spdk:interrupt --qd 4 --time 2 --output json"),
        ),
        ("gap", format!("{bin} run --engine spdk:interrupt --trid '{trid}' --poll-gap 100ns --ios 10")),
    ];
    if !spdk_dir.is_empty() && Path::new(&perf).exists() {
        plan.push((
            "perf",
            format!("LD_LIBRARY_PATH={spdk_dir}/lib {perf} -E -q 4 -o 4096 -w randread -t 2 -r '{trid}'"),
        ));
    }
    // Every path at the same offered loads, the kernel's and SPDK's, each interrupt-driven and
    // polled: the controller goes back to nvme (whose poll queues uring:poll needs) and `compare
    // --rebind` hands it to SPDK and back for each SPDK engine.
    let bdf = "0000:00:10.0";
    let drv = format!("basename \"$(readlink /sys/bus/pci/devices/{bdf}/driver)\"");
    plan.push((
        "restore",
        format!(
            "{} restore {bdf} && for i in $(seq 150); do [ \"$({drv})\" = nvme ] && [ -e /dev/nvme0n1 ] && break; sleep 0.2; done; ls /dev/nvme0n1",
            script("scripts/nvme-bind.sh")
        ),
    ));
    plan.push((
        "rates",
        format!(
            "{bin} compare --rebind --filename /dev/nvme0n1 --engines uring,uring:poll,spdk,spdk:interrupt \
             --rates {LOW_LOAD},1k,max --qd 4 --time 2 --output json"
        ),
    ));
    let o = testbed(
        &[
            "--iommu",
            "--hugepages",
            "256",
            "--bind",
            "vfio-pci",
            "--size",
            "256M",
            "--append",
            "nvme.poll_queues=2",
            &guest_script(&plan),
        ],
        Stdio::piped(),
    );
    let out = stdout(&o);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "guest script ended badly\nstdout:\n{out}\nstderr:\n{err}");
    let s = steps(&out);
    let step = |n: &str| s.get(n).unwrap_or_else(|| panic!("step {n} missing\nstdout:\n{out}\nstderr:\n{err}"));

    // Whether the controller's interrupts were counted on some core during the run (results.cost
    // names a core for its PCI function's vfio-msix lines in /proc/interrupts).
    let took_interrupts = |j: &serde_json::Value| {
        j["results"]["cost"]["cores"]["counted"].as_array().is_some_and(|cores| {
            cores.iter().any(|c| {
                c["why"].as_array().unwrap().iter().any(|w| {
                    let w = w.as_str().unwrap();
                    w.contains("0000:00:10.0") && w.contains("interrupts")
                })
            })
        })
    };
    let cpu_per_io = |j: &serde_json::Value| j["results"]["cost"]["threads"]["ns_per_io"].as_f64().unwrap();
    let (rc, text) = step("interrupt");
    assert_eq!(*rc, 0, "{text}");
    let irq = first_json(text);
    let opt = &irq["engine"]["options"];
    assert_eq!(irq["config"]["engine"], "spdk:interrupt", "{irq}");
    assert_eq!(
        (opt["poll_policy"].as_str(), opt["delay_cmd_submit"].as_str()),
        (Some("interrupt"), Some("0")),
        "{opt}"
    );
    assert!(irq["engine"]["spdk"].get("busy").is_none(), "no busy time where polls sleep: {}", irq["engine"]);
    let r = &irq["results"]["total"]["read"];
    assert!(r["ios"].as_u64().unwrap() > 100 && r["lat_ns"]["min"].as_u64().unwrap() > 0, "{r}");
    assert!(took_interrupts(&irq), "the controller's MSI-X interrupts were taken: {}", irq["results"]["cost"]);
    let (rc, text) = step("polled");
    assert_eq!(*rc, 0, "{text}");
    let polled = first_json(text);
    assert!(polled["results"]["total"]["read"]["ios"].as_u64().unwrap() > 100, "{polled}");
    assert!(!took_interrupts(&polled), "polled SPDK takes no interrupts: {}", polled["results"]["cost"]);
    assert!(polled["engine"]["spdk"]["busy"]["busy_ns"].as_u64().unwrap() > 0, "{}", polled["engine"]);
    // The polled worker spins between completions; the interrupt-driven one sleeps. Under TCG the
    // guest's CPU accounting loses the time its vCPUs wait for the host, so shares of the window
    // are not compared; the CPU each I/O cost the worker thread is.
    let (irq_cpu, polled_cpu) = (cpu_per_io(&irq), cpu_per_io(&polled));
    assert!(irq_cpu < polled_cpu, "worker CPU per I/O: interrupt {irq_cpu:.0} ns, polled {polled_cpu:.0} ns");

    let (rc, text) = step("mixed");
    assert_eq!(*rc, 0, "{text}");
    let t = &first_json(text)["results"]["total"];
    assert_eq!(t["read"]["ios"].as_u64().unwrap() + t["write"]["ios"].as_u64().unwrap(), 2000, "{t}");
    assert_eq!(t["errors"]["total"], 0, "{t}");

    let (rc, text) = step("compare");
    assert_eq!(*rc, 0, "{text}");
    let j = first_json(text);
    let engines: Vec<&str> = j["summary"].as_array().unwrap().iter().map(|c| c["engine"].as_str().unwrap()).collect();
    assert_eq!(engines, ["spdk", "spdk:interrupt"], "{j}");
    for c in j["summary"].as_array().unwrap() {
        assert!(c["iops"].as_f64().unwrap() > 0.0 && c["errors"] == 0, "{c}");
    }

    let (rc, text) = step("gap");
    assert_eq!(*rc, 2, "{text}");
    assert!(text.contains("spdk:interrupt sleeps until a completion arrives and has no polling to tune"), "{text}");
    if let Some((rc, text)) = s.get("perf") {
        assert_eq!(*rc, 0, "{text}");
        assert!(text.contains("Total"), "{text}");
    }

    let (rc, text) = step("restore");
    assert_eq!(*rc, 0, "{text}");
    let (rc, text) = step("rates");
    assert_eq!(*rc, 0, "{text}");
    let j = first_json(text);
    let loads = j["loads"].as_array().unwrap_or_else(|| panic!("no loads in: {j}"));
    let names: Vec<&str> = loads.iter().map(|l| l["load"].as_str().unwrap()).collect();
    assert_eq!(names, [LOW_LOAD, "1k", "max"], "{j}");
    for l in loads {
        let engines: Vec<&str> =
            l["engines"].as_array().unwrap().iter().map(|e| e["engine"].as_str().unwrap()).collect();
        assert_eq!(engines, ["uring", "uring:poll", "spdk", "spdk:interrupt"], "{l}");
        for e in l["engines"].as_array().unwrap() {
            assert!(e["iops"].as_f64().unwrap() > 0.0 && e["errors"] == 0, "{e}");
            for p in ["50.0", "99.0", "99.9"] {
                assert!(e["lat_ns"][p].as_f64().is_some_and(|v| v > 0.0), "{p} of {e}");
            }
            assert!(e["cores_used"].as_f64().is_some() && e["thread_cores_used"].as_f64().is_some(), "{e}");
        }
    }
    // At the lowest load a polled worker spins between I/Os and an interrupt-driven one sleeps:
    // the interrupt engines must use measurably less CPU than either polled one, in the worker
    // threads' own time and in cores used (each beyond the counters' tick margin).
    let low = &loads[0]["engines"];
    let figure = |engine: &str, key: &str| {
        let e = low.as_array().unwrap().iter().find(|e| e["engine"] == engine).unwrap();
        assert_eq!(e["reached"], true, "{engine} reached {LOW_LOAD} IOPS: {e}");
        (e[key].as_f64().unwrap(), e["cores_used_margin"].as_f64().unwrap_or(0.0))
    };
    for key in ["thread_cores_used", "cores_used"] {
        for irq in ["uring", "spdk:interrupt"] {
            for polled in ["uring:poll", "spdk"] {
                let ((i, im), (p, pm)) = (figure(irq, key), figure(polled, key));
                let margin = if key == "cores_used" { im + pm } else { 0.0 };
                assert!(
                    i * 2.0 + margin < p,
                    "{key} at {LOW_LOAD} IOPS: {irq} {i:.3} against {polled} {p:.3} (+- {margin:.3})\n{low}"
                );
            }
        }
    }
}

/// The lowest load `compare --rates` offers in the testbed: a polling core's cost shows most where
/// there is least to do.
#[cfg(feature = "spdk")]
const LOW_LOAD: &str = "200";

/// One boot with three emulated controllers: one worker drives all three namespaces (a queue each),
/// every namespace gets I/O, the per-target counts add up to the total, and telemetry reads each
/// drive's health log; `compare` runs each engine on all three, and `--verify-state` round-trips
/// over them.
#[test]
fn three_namespaces_in_one_run() {
    if !testbed_ready() {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_nvmebench");
    let list = "/dev/nvme0n1:/dev/nvme1n1:/dev/nvme2n1";
    let plan: Vec<(&str, String)> = vec![
        (
            "three",
            format!(
                "{bin} run --filename {list} --rw randrw --jobs 1 --qd 4 --ios 3000 --allow-destroy \
                 --telemetry-interval 1s --output json"
            ),
        ),
        ("twice", format!("ln -sf /dev/nvme0n1 /tmp/alias && {bin} run --filename /dev/nvme0n1:/tmp/alias --ios 10")),
        (
            "compare-three",
            format!("{bin} compare --filename {list} --engines uring,uring-cmd --ios 600 --quiet --output json"),
        ),
        (
            "verify-three",
            format!(
                "{bin} run --filename {list} --rw write --size 1m --ios 768 --verify --verify-state /tmp/v.state                  --allow-destroy --quiet >/dev/null && {bin} run --filename /dev/nvme2n1:/dev/nvme0n1:/dev/nvme1n1 --rw read                  --size 1m --ios 768 --verify --verify-state /tmp/v.state --output json"
            ),
        ),
    ];
    let o = testbed(&["--nvme", "3", "--size", "64M", &guest_script(&plan)], Stdio::piped());
    let out = stdout(&o);
    let s = steps(&out);
    let Some((rc, text)) = s.get("three") else { panic!("the guest did not run: {}\n{out}", stderr(&o)) };
    assert_eq!(*rc, 0, "{text}");
    let j = first_json(text);
    let targets = j["results"]["targets"].as_array().expect("results.targets");
    assert_eq!(targets.len(), 3, "{text}");
    let mut sum = 0;
    for (i, t) in targets.iter().enumerate() {
        assert_eq!(t["path"], format!("/dev/nvme{i}n1"));
        let ios = t["read"]["ios"].as_u64().unwrap() + t["write"]["ios"].as_u64().unwrap();
        assert_eq!(ios, 1000, "--ios split evenly over the three queues: {t}");
        sum += ios;
    }
    let total = &j["results"]["total"];
    assert_eq!(sum, total["read"]["ios"].as_u64().unwrap() + total["write"]["ios"].as_u64().unwrap());
    let drives = j["telemetry"]["targets"].as_array().expect("telemetry of each drive");
    assert_eq!(drives.len(), 3, "{}", j["telemetry"]);
    let (rc, text) = &s["twice"];
    assert_eq!(*rc, 2, "{text}");
    assert!(text.contains("/tmp/alias is the same target as /dev/nvme0n1"), "{text}");

    // compare on the three: each engine on all of them, uring-cmd on their generic devices.
    let (rc, text) = &s["compare-three"];
    assert_eq!(*rc, 0, "{text}");
    let j = first_json(text);
    let paths = |run: &serde_json::Value| -> Vec<String> {
        run["run"]["results"]["targets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["path"].as_str().unwrap().into())
            .collect()
    };
    assert_eq!(paths(&j["runs"][0]), ["/dev/nvme0n1", "/dev/nvme1n1", "/dev/nvme2n1"], "{text}");
    assert_eq!(paths(&j["runs"][1]), ["/dev/ng0n1", "/dev/ng1n1", "/dev/ng2n1"], "{text}");
    assert_eq!(j["summary"][1]["targets"].as_array().map(Vec::len), Some(3), "{text}");

    // --verify-state over the three namespaces, read back in another order.
    let (rc, text) = &s["verify-three"];
    assert_eq!(*rc, 0, "{text}");
    let v = &first_json(text)["results"]["verify"];
    assert!(v["units_checked"].as_u64().unwrap() >= 768 && v["mismatch_count"] == 0, "{v}");
}

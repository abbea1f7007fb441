#!/usr/bin/env bash
# nvmebench's io_uring engines against fio's, with equivalent options, measured back to back in one
# run: interrupt-driven (--engine uring vs --ioengine=io_uring), polled where the disk has poll
# queues (uring:poll vs --hipri), and NVMe passthrough where a /dev/ngXnY exists (uring-cmd vs
# --ioengine=io_uring_cmd). Both tools get one job on the same core, the same target, block size,
# queue depth, O_DIRECT and run time; fio gets its fastest io_uring options (fixedbufs,
# registerfiles, norandommap) and only the latency we keep (--disable_slat=1 --disable_clat=1: its
# lat, issue to completion). Prints each tool's median IOPS and CPU time per I/O over alternating
# rounds, the spread between rounds and the ratios with their per-round range.
set -eu

usage() {
  cat <<USAGE
Usage: $0 [--filename PATH] [--ng /dev/ngXnY] [--bs SIZE] [--qd N] [--time SECONDS] [--core N]
          [--size SIZE] [--rounds N] [--bin PATH]

  --filename PATH  file or block device to read (default: a scratch file of --size in /var/tmp,
                   removed afterwards); only reads are issued
  --ng DEV         NVMe generic device for the passthrough pair (default: the one of --filename
                   when that is /dev/nvmeXnY)
  --size SIZE      size of the scratch file (default 1g)
  --rounds N       repeat every pair N times, alternating which tool goes first (default 3)
  --bin PATH       nvmebench binary to measure (default: build target/release/nvmebench with cargo;
                   give it where cargo is absent, as in the testbed guest)

CPU per I/O is the user+sys time of the whole process (getrusage of the child: every thread,
io_uring's kernel threads included) divided by the I/Os it completed; each tool's own figure
(fio's usr_cpu+sys_cpu, nvmebench's results.cpu) is printed beside it.
Needs fio (apt-get install fio) and python3. Defaults: --bs 4k --qd 32 --time 5 --core 0
USAGE
}

target="" ng="" bs=4k qd=32 time=5 core=0 size=1g rounds=3 bin=""
while [ $# -gt 0 ]; do
  case "$1" in
    --filename) target=$2; shift 2 ;;
    --ng) ng=$2; shift 2 ;;
    --bs) bs=$2; shift 2 ;;
    --qd) qd=$2; shift 2 ;;
    --time) time=$2; shift 2 ;;
    --core) core=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "$0: unknown option '$1'; see --help" >&2; exit 2 ;;
  esac
done

command -v fio >/dev/null || { echo "$0: fio is not installed; run 'apt-get install fio'" >&2; exit 2; }
command -v python3 >/dev/null || { echo "$0: python3 is not installed; run 'apt-get install python3'" >&2; exit 2; }
here=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "$bin" ]; then
  cargo build --release --quiet --manifest-path "$here/Cargo.toml"
  bin="$here/target/release/nvmebench"
fi
[ -x "$bin" ] || { echo "$0: --bin $bin is not an executable" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ -z "$target" ]; then
  target="/var/tmp/nvmebench-uring-vs-fio-$$.dat"
  trap 'rm -rf "$tmp" "$target"' EXIT
  "$bin" run --filename "$target" --size "$size" --ios 1 --quiet >/dev/null
fi
[ -e "$target" ] || { echo "$0: $target does not exist; give an existing file or device" >&2; exit 2; }
if [ -z "$ng" ]; then
  case "$(basename "$target")" in
    nvme*n*) cand="/dev/ng$(basename "$target" | sed 's/^nvme//')"; [ -c "$cand" ] && ng=$cand ;;
  esac
fi

python3 - "$bin" "$target" "$ng" "$bs" "$qd" "$time" "$core" "$rounds" "$tmp" <<'PY'
import json, os, resource, statistics, subprocess, sys

binary, target, ng, bs, qd, secs, core, rounds, tmp = sys.argv[1:]
rounds = int(rounds)

def disk_polls(path):
    st = os.stat(path)
    dev = st.st_rdev if (os.path.exists(path) and not os.path.isfile(path)) else st.st_dev
    sysdir = os.path.realpath(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}")
    if os.path.exists(os.path.join(sysdir, "partition")):
        sysdir = os.path.dirname(sysdir)
    try:
        return open(os.path.join(sysdir, "queue/io_poll")).read().strip() == "1"
    except OSError:
        return False

def ng_polls(ngdev):
    block = "/dev/nvme" + os.path.basename(ngdev)[2:]
    return os.path.exists(block) and disk_polls(block)

def measured(cmd, out):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out, "w") as f:
        p = subprocess.run(cmd, stdout=f, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"{cmd[0]} failed ({p.returncode}): {p.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, json.load(open(out))

def run_fio(engine_args, filename, tag):
    # O_DIRECT means nothing on the generic character device, and fio refuses direct=1 there.
    direct = [] if "--ioengine=io_uring_cmd" in engine_args else ["--direct=1"]
    cmd = ["fio", "--name=bench", f"--filename={filename}", "--rw=randread", f"--bs={bs}",
           f"--iodepth={qd}", "--numjobs=1"] + direct + ["--time_based", f"--runtime={secs}",
           f"--cpus_allowed={core}", "--norandommap", "--group_reporting",
           "--disable_slat=1", "--disable_clat=1", "--lat_percentiles=1",
           "--output-format=json"] + engine_args
    cpu, j = measured(cmd, f"{tmp}/fio-{tag}.json")
    job = j["jobs"][0]
    r = job["read"]
    own = (job["usr_cpu"] + job["sys_cpu"]) / 100.0 * job["job_runtime"] / 1e3 / max(r["total_ios"], 1) * 1e9
    return r["iops"], cpu / max(r["total_ios"], 1) * 1e9, own

def run_nb(engine, filename, tag):
    cmd = [binary, "run", "--engine", engine, "--filename", filename, "--rw", "randread", "--bs", bs,
           "--qd", qd, "--time", secs, "--cores", core, "--quiet", "--output", "json"]
    cpu, j = measured(cmd, f"{tmp}/nb-{tag}.json")
    t = j["results"]["total"]["read"]
    return t["iops"], cpu / max(t["ios"], 1) * 1e9, j["results"]["cpu"]["ns_per_io"]

pairs = [("interrupt", target, ["--ioengine=io_uring", "--fixedbufs", "--registerfiles"], "uring")]
skipped = []
if disk_polls(target):
    pairs.append(("polled", target, ["--ioengine=io_uring", "--fixedbufs", "--registerfiles", "--hipri"], "uring:poll"))
else:
    skipped.append("polled: the disk under the target has no poll queues (queue/io_poll is 0)")
if ng:
    pairs.append(("passthrough", ng, ["--ioengine=io_uring_cmd", "--cmd_type=nvme", "--fixedbufs", "--registerfiles"], "uring-cmd"))
    if ng_polls(ng):
        pairs.append(("passthru polled", ng, ["--ioengine=io_uring_cmd", "--cmd_type=nvme", "--fixedbufs", "--registerfiles", "--hipri"], "uring-cmd:poll"))
else:
    skipped.append("passthrough: no /dev/ngXnY (give --ng, or a /dev/nvmeXnY target)")

print(f"randread bs={bs} qd={qd} one job on core {core}, {secs}s each, target {target}")
print(f"{'mode':16} {'tool':10} {'IOPS':>12} {'CPU/IO':>10} {'own CPU/IO':>11}")
summary = []
for mode, filename, fio_args, engine in pairs:
    fio_runs, nb_runs = [], []
    for i in range(rounds):
        order = [("fio", None), ("nb", None)] if i % 2 == 0 else [("nb", None), ("fio", None)]
        for who, _ in order:
            if who == "fio":
                fio_runs.append(run_fio(fio_args, filename, f"{mode}-{i}".replace(" ", "_")))
            else:
                nb_runs.append(run_nb(engine, filename, f"{mode}-{i}".replace(" ", "_")))
    med = lambda runs, k: statistics.median(r[k] for r in runs)
    f = [med(fio_runs, k) for k in range(3)]
    n = [med(nb_runs, k) for k in range(3)]
    spread = lambda runs: f"[{min(r[0] for r in runs):,.0f}-{max(r[0] for r in runs):,.0f}]"
    print(f"{mode:16} {'fio':10} {f[0]:>12,.0f} {f[1]:>8,.0f}ns {f[2]:>9,.0f}ns  IOPS per round {spread(fio_runs)}")
    print(f"{'':16} {'nvmebench':10} {n[0]:>12,.0f} {n[1]:>8,.0f}ns {n[2]:>9,.0f}ns  IOPS per round {spread(nb_runs)}")
    per_round = [b[0] / a[0] for a, b in zip(fio_runs, nb_runs)]
    summary.append((mode, n[0] / f[0], n[1] / f[1], min(per_round), max(per_round)))
print()
print(f"medians of {rounds} alternating rounds; a ratio whose per-round range spans 1.0 is within noise")
for mode, iops_ratio, cpu_ratio, lo, hi in summary:
    verdict = "ok" if iops_ratio >= 1.0 and cpu_ratio < 1.0 else "MISSED"
    print(f"{mode:16} nvmebench/fio: IOPS {iops_ratio:.2f}x [per round {lo:.2f}-{hi:.2f}], CPU per I/O {cpu_ratio:.2f}x "
          f"(target: IOPS >= 1x, CPU < 1x: {verdict})")
for s in skipped:
    print(f"skipped {s}")
PY

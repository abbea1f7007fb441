#!/usr/bin/env bash
# Framework cost per I/O: nvmebench's null engine against fio's null ioengine, same core, queue depth,
# block size and duration, in alternating rounds of one run (so drift on a shared machine hits both),
# medians compared.
#
# What each side measures, so the ratio is like for like:
# - fio: --ioengine=null --norandommap (fio's best: no random map to maintain over the range), with
#   only the latency we keep: --disable_slat=1 --disable_clat=1 leave fio's lat (issue to completion)
#   and --lat_percentiles=1 its histogram, as ours is one latency per I/O; one job pinned to the core.
# - CPU of the same scope on both sides: the thread that issues the I/Os (fio's job process, which is
#   one thread, from its usr_cpu/sys_cpu over job_runtime; nvmebench's worker thread, worker_cpu).
# - nvmebench: --engine null, every I/O stamped on its own (TSC read just before the engine takes it
#   and again in its own completion handling), recorded in an HDR histogram, one worker pinned to
#   the core; the coordinator and every other thread kept off that core.
# Both complete each I/O at once, so IOPS is what the framework itself can issue on one core.
set -eu

usage() {
  cat <<USAGE
Usage: $0 [--qd N] [--time SECONDS] [--core N] [--bs SIZE] [--rounds N]

Runs fio --ioengine=null --norandommap and nvmebench --engine null with the same options on one
core, --rounds times each (alternating, fio first in odd rounds), and prints every round, the
medians and their ratio. Needs fio (apt-get install fio) and python3.
Defaults: --qd 32 --time 5 --core 0 --bs 4k --rounds 3
USAGE
}

qd=32 time=5 core=0 bs=4k rounds=3
while [ $# -gt 0 ]; do
  case "$1" in
    --qd) qd=$2; shift 2 ;;
    --time) time=$2; shift 2 ;;
    --core) core=$2; shift 2 ;;
    --bs) bs=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "$0: unknown option '$1'; see --help" >&2; exit 2 ;;
  esac
done
case "$qd$time$core$rounds" in *[!0-9]*|"") echo "$0: --qd, --time, --core and --rounds take whole numbers" >&2; exit 2 ;; esac

command -v fio >/dev/null || { echo "$0: fio is not installed; run 'apt-get install fio'" >&2; exit 2; }
here=$(cd "$(dirname "$0")/../.." && pwd)
cargo build --release --quiet --manifest-path "$here/Cargo.toml"
bin="$here/target/release/nvmebench"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run_fio() {
  fio --name=null --ioengine=null --rw=randread --bs="$bs" --iodepth="$qd" --size=1T --norandommap \
    --disable_slat=1 --disable_clat=1 --lat_percentiles=1 --time_based --runtime="$time" --numjobs=1 --cpus_allowed="$core" \
    --output-format=json --output="$tmp/fio.$1.json" >/dev/null
}
run_nb() {
  "$bin" run --engine null --rw randread --bs "$bs" --qd "$qd" --time "$time" --cores "$core" \
    --quiet --output json >"$tmp/nb.$1.json"
}
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) = 1 ]; then run_fio "$r"; run_nb "$r"; else run_nb "$r"; run_fio "$r"; fi
done

python3 - "$tmp" "$rounds" "$qd" "$bs" "$time" "$core" <<'PY'
import json, statistics, sys
tmp, rounds, qd, bs, t, core = sys.argv[1], int(sys.argv[2]), *sys.argv[3:]
print(f"null engine, randread bs={bs} qd={qd}, {t} s per round on core {core}, {rounds} alternating rounds")
print(f"{'round':6} {'tool':10} {'IOPS':>14} {'mean lat (ns)':>14} {'CPU ns/IO':>10}")
fi, ni = [], []
for r in range(1, rounds + 1):
    f = json.load(open(f"{tmp}/fio.{r}.json"))["jobs"][0]
    fr = f["read"]
    # fio's usr_cpu/sys_cpu are percentages of the job's runtime.
    f_cpu = (f["usr_cpu"] + f["sys_cpu"]) / 100 * f["job_runtime"] * 1e6 / max(fr["total_ios"], 1)
    n = json.load(open(f"{tmp}/nb.{r}.json"))["results"]
    nr = n["total"]["read"]
    n_cpu = (n.get("worker_cpu") or {}).get("ns_per_io") or float("nan")
    print(f"{r:<6} {'fio':10} {fr['iops']:>14,.0f} {fr['lat_ns']['mean']:>14,.0f} {f_cpu:>10.1f}")
    print(f"{r:<6} {'nvmebench':10} {nr['iops']:>14,.0f} {nr['lat_ns']['mean']:>14,.0f} {n_cpu:>10.1f}")
    fi.append(fr["iops"]); ni.append(nr["iops"])
fm, nm = statistics.median(fi), statistics.median(ni)
ratios = [n / f for f, n in zip(fi, ni)]
print(f"median: fio {fm:,.0f} IOPS [{min(fi):,.0f}-{max(fi):,.0f}], nvmebench {nm:,.0f} IOPS [{min(ni):,.0f}-{max(ni):,.0f}]")
print(f"ratio nvmebench/fio: {nm / fm:.2f}x, per round [{min(ratios):.2f}-{max(ratios):.2f}] (target: at least 5x)")
PY

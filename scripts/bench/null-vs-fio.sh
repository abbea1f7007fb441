#!/usr/bin/env bash
# Framework cost per I/O: nvmebench's null engine against fio's null ioengine, same core, same queue
# depth, same duration, measured back to back in one run. Both record every I/O's latency (fio's
# default clat/slat/lat accounting; nvmebench's per-I/O HDR histogram). Prints IOPS and the ratio.
set -eu

usage() {
  cat <<USAGE
Usage: $0 [--qd N] [--time SECONDS] [--core N] [--bs SIZE]

Runs fio --ioengine=null and nvmebench --engine null with the same options on one core and prints
both IOPS figures and their ratio. Needs fio (apt-get install fio) and python3.
Defaults: --qd 32 --time 5 --core 0 --bs 4k
USAGE
}

qd=32 time=5 core=0 bs=4k
while [ $# -gt 0 ]; do
  case "$1" in
    --qd) qd=$2; shift 2 ;;
    --time) time=$2; shift 2 ;;
    --core) core=$2; shift 2 ;;
    --bs) bs=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "$0: unknown option '$1'; see --help" >&2; exit 2 ;;
  esac
done

command -v fio >/dev/null || { echo "$0: fio is not installed; run 'apt-get install fio'" >&2; exit 2; }
here=$(cd "$(dirname "$0")/../.." && pwd)
cargo build --release --quiet --manifest-path "$here/Cargo.toml"
bin="$here/target/release/nvmebench"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fio --name=null --ioengine=null --rw=randread --bs="$bs" --iodepth="$qd" --size=1T \
    --time_based --runtime="$time" --numjobs=1 --cpus_allowed="$core" \
    --output-format=json --output="$tmp/fio.json" >/dev/null
"$bin" run --engine null --rw randread --bs "$bs" --qd "$qd" --time "$time" --cores "$core" \
    --quiet --output json >"$tmp/nvmebench.json"

python3 - "$tmp/fio.json" "$tmp/nvmebench.json" "$qd" "$bs" "$time" <<'PY'
import json, sys
fio = json.load(open(sys.argv[1]))["jobs"][0]["read"]
nb = json.load(open(sys.argv[2]))["results"]["total"]["read"]
qd, bs, t = sys.argv[3:6]
print(f"null engine, randread bs={bs} qd={qd}, {t}s on one core")
print(f"{'':10} {'IOPS':>14} {'mean lat (ns)':>14} {'ios':>14}")
print(f"{'fio':10} {fio['iops']:>14,.0f} {fio['lat_ns']['mean']:>14,.0f} {fio['total_ios']:>14,}")
print(f"{'nvmebench':10} {nb['iops']:>14,.0f} {nb['lat_ns']['mean']:>14,.0f} {nb['ios']:>14,}")
print(f"ratio nvmebench/fio: {nb['iops'] / fio['iops']:.2f}x (target: at least 4x)")
PY

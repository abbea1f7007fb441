#!/usr/bin/env bash
# The SPDK engine against SPDK's own spdk_nvme_perf on the same controller, same queue depth, I/O
# size, pattern, core and duration, measured back to back in one run (each tool --rounds times,
# alternating, so drift hits both). Prints IOPS and mean latency of each and the ratios.
set -eu

usage() {
  cat <<USAGE
Usage: $0 [--trid TRID] [--qd N] [--bs SIZE] [--rw randread|randwrite|read|write] [--time S]
          [--core N] [--rounds N] [--bin PATH]

Without --trid, starts SPDK's NVMe-oF/TCP target on 127.0.0.1 (scripts/spdk-tcp-target.sh, on the
last CPU) and stops it afterwards. With --trid, uses that controller (e.g. a PCIe function bound to
vfio-pci: 'trtype:PCIe traddr:0000:00:04.0'). Writes destroy the namespace's data.
Needs an installed SPDK (SPDK_DIR or pkg-config) and nvmebench built with --features spdk.
--bin uses an nvmebench already built with --features spdk (e.g. inside the testbed, whose root is
read-only) instead of building one.
Defaults: --qd 32 --bs 4096 --rw randread --time 5 --core 0 --rounds 2
USAGE
}

trid="" qd=32 bs=4096 rw=randread time=5 core=0 rounds=2 bin=""
while [ $# -gt 0 ]; do
  case "$1" in
    --trid) trid=$2; shift 2 ;;
    --qd) qd=$2; shift 2 ;;
    --bs) bs=$2; shift 2 ;;
    --rw) rw=$2; shift 2 ;;
    --time) time=$2; shift 2 ;;
    --core) core=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "$0: unknown option '$1'; see --help" >&2; exit 2 ;;
  esac
done
case "$qd$bs$time$core$rounds" in *[!0-9]*) echo "$0: --qd, --bs, --time, --core and --rounds take whole numbers" >&2; exit 2 ;; esac

here=$(cd "$(dirname "$0")/../.." && pwd)
if [ -n "${SPDK_DIR:-}" ]; then
  export PKG_CONFIG_PATH="$SPDK_DIR/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  prefix=$SPDK_DIR
else
  pkg-config --exists spdk_nvme || { echo "$0: no SPDK found; set SPDK_DIR to its install prefix" >&2; exit 2; }
  prefix=$(dirname "$(pkg-config --libs-only-L spdk_nvme | sed -e 's/^ *-L//' -e 's/ .*//')")
fi
perf="$prefix/bin/spdk_nvme_perf"
[ -x "$perf" ] || { echo "$0: $perf is missing; install SPDK with its apps" >&2; exit 2; }
if [ -z "$bin" ]; then
  cargo build --release --quiet --features spdk --manifest-path "$here/Cargo.toml"
  bin="$here/target/release/nvmebench"
fi
[ -x "$bin" ] || { echo "$0: $bin is not an executable nvmebench" >&2; exit 2; }

tmp=$(mktemp -d)
started=0
cleanup() {
  [ "$started" = 1 ] && NVMEBENCH_TGT_STATE="$tmp/tgt.state" "$here/scripts/spdk-tcp-target.sh" stop >/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
if [ -z "$trid" ]; then
  trid=$(NVMEBENCH_TGT_STATE="$tmp/tgt.state" "$here/scripts/spdk-tcp-target.sh" start --size 1024 --port 4440)
  started=1
fi
allow=""
case "$rw" in *write*) allow="--allow-destroy" ;; esac

for r in $(seq 1 "$rounds"); do
  LD_LIBRARY_PATH="$prefix/lib" "$perf" -q "$qd" -o "$bs" -w "$rw" -t "$time" -c "[$core]" -r "$trid" \
    >"$tmp/perf.$r.txt" 2>&1
  # shellcheck disable=SC2086  # $allow is one flag or nothing
  "$bin" run --engine spdk --trid "$trid" --qd "$qd" --bs "$bs" --rw "$rw" --time "$time" --cores "$core" \
    $allow --quiet --output json >"$tmp/nb.$r.json"
done

python3 - "$tmp" "$rounds" "$trid" "$qd" "$bs" "$rw" "$time" <<'PY'
import json, re, sys
tmp, rounds, trid, qd, bs, rw, t = sys.argv[1], int(sys.argv[2]), *sys.argv[3:]
print(f"{rw} bs={bs} qd={qd} {t}s, one core, on {trid}")
print(f"{'round':6} {'tool':16} {'IOPS':>12} {'mean lat (us)':>14}")
tot = {"perf": [0.0, 0.0], "nvmebench": [0.0, 0.0]}
for r in range(1, rounds + 1):
    text = open(f"{tmp}/perf.{r}.txt").read()
    m = re.search(r"^Total\s*:\s*([\d.]+)\s+([\d.]+)\s+([\d.]+)", text, re.M)
    if not m:
        sys.exit("spdk_nvme_perf printed no Total line:\n" + text)
    p_iops, p_lat = float(m.group(1)), float(m.group(3))
    j = json.load(open(f"{tmp}/nb.{r}.json"))["results"]["total"]
    d = j["read"] if "read" in rw else j["write"]
    n_iops, n_lat = d["iops"], d["lat_ns"]["mean"] / 1000
    print(f"{r:<6} {'spdk_nvme_perf':16} {p_iops:>12,.0f} {p_lat:>14.2f}")
    print(f"{r:<6} {'nvmebench spdk':16} {n_iops:>12,.0f} {n_lat:>14.2f}")
    tot["perf"][0] += p_iops; tot["perf"][1] += p_lat
    tot["nvmebench"][0] += n_iops; tot["nvmebench"][1] += n_lat
pi, pl = (v / rounds for v in tot["perf"])
ni, nl = (v / rounds for v in tot["nvmebench"])
print(f"mean of {rounds}: perf {pi:,.0f} IOPS {pl:.2f} us; nvmebench {ni:,.0f} IOPS {nl:.2f} us")
print(f"IOPS ratio nvmebench/perf: {ni / pi:.3f} (target >= 0.97); mean latency ratio: {nl / pl:.3f} (target <= 1.03)")
PY

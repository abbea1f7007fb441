#!/usr/bin/env bash
# The SPDK engine against SPDK's own spdk_nvme_perf on the same controller: same queue depth, I/O
# size, pattern, initiator core and duration, in alternating rounds of one run (each tool --rounds
# times per queue depth, who goes first alternating, so drift hits both), medians compared.
#
# Like for like: perf runs with -LL (software latency tracking: a TSC read per I/O at submission and
# in its completion callback, into SPDK's histogram; -LL costs what -L does and also prints the
# histogram), nvmebench with its per-I/O stamps (the same two TSC reads per I/O, into an HDR
# histogram). perf prints its mean to 10 ns, which at QD1 (about 0.9 us) is a 0.6% step, so perf's
# mean is taken from its -LL histogram (bucket midpoints; its buckets are under 0.5% wide) and
# checked against the printed one; p99 and p99.99 come from perf's summary. Both poll one queue
# pair from one pinned core. Over vfio-user perf gets -g (single-file hugepage segments), which it
# needs to attach; nvmebench does the same by itself for VFIOUSER transport IDs.
#
# nvmebench reaps at most half the queue depth per poll by default (over a fabric a sixteenth of
# the depth more), perf a whole queue (its -C 0). So that the comparison holds against perf at its
# best too, where that bound is below the depth perf also runs with the same bound (-C), and that
# third column is compared as well.
set -eu

usage() {
  cat <<USAGE
Usage: $0 [--target tcp|vfu | --trid TRID] [--qd LIST] [--bs SIZE] [--rw randread|randwrite|read|write]
          [--time S] [--core N] [--target-core N] [--rounds N] [--bin PATH]

--target tcp (default) starts SPDK's NVMe-oF/TCP target on 127.0.0.1 (scripts/spdk-tcp-target.sh,
a RAM-disk namespace); --target vfu starts SPDK's vfio-user target with a null namespace
(scripts/spdk-vfu-target.sh; SPDK built --with-vfio-user), the million-IOPS case. Either runs on
--target-core (default: the last CPU) and is stopped afterwards. --trid uses a controller you
started (e.g. a PCIe function bound to vfio-pci: 'trtype:PCIe traddr:0000:00:04.0').
--qd takes a comma-separated list (default 1,32,128). Writes destroy the namespace's data.
Needs an installed SPDK (SPDK_DIR or pkg-config) with its perf app, and nvmebench built with
--features spdk (built here unless --bin names one).
Defaults: --bs 4096 --rw randread --time 5 --core 0 --rounds 3
USAGE
}

target=tcp trid="" qds=1,32,128 bs=4096 rw=randread time=5 core=0 tcore="" rounds=3 bin=""
while [ $# -gt 0 ]; do
  case "$1" in
    --target) target=$2; shift 2 ;;
    --trid) trid=$2; target=""; shift 2 ;;
    --qd) qds=$2; shift 2 ;;
    --bs) bs=$2; shift 2 ;;
    --rw) rw=$2; shift 2 ;;
    --time) time=$2; shift 2 ;;
    --core) core=$2; shift 2 ;;
    --target-core) tcore=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "$0: unknown option '$1'; see --help" >&2; exit 2 ;;
  esac
done
case "$bs$time$core$rounds$tcore" in *[!0-9]*|"") echo "$0: --bs, --time, --core, --target-core and --rounds take whole numbers" >&2; exit 2 ;; esac
case "$qds" in *[!0-9,]*|"") echo "$0: --qd takes a list of whole numbers like 1,32,128" >&2; exit 2 ;; esac
case "$target" in tcp|vfu|"") ;; *) echo "$0: --target takes tcp or vfu (or give --trid)" >&2; exit 2 ;; esac
[ -n "$tcore" ] || tcore=$(( $(nproc) - 1 ))

here=$(cd "$(dirname "$0")/../.." && pwd)
if [ -n "${SPDK_DIR:-}" ]; then
  export PKG_CONFIG_PATH="$SPDK_DIR/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  prefix=$SPDK_DIR
else
  pkg-config --exists spdk_nvme || { echo "$0: no SPDK found; set SPDK_DIR to its install prefix (scripts/spdk-build.sh installs one)" >&2; exit 2; }
  prefix=$(dirname "$(pkg-config --libs-only-L spdk_nvme | sed -e 's/^ *-L//' -e 's/ .*//')")
  export SPDK_DIR=$prefix
fi
perf="$prefix/bin/spdk_nvme_perf"
[ -x "$perf" ] || { echo "$0: $perf is missing; install SPDK with its apps (scripts/spdk-build.sh)" >&2; exit 2; }
if [ -z "$bin" ]; then
  cargo build --release --quiet --features spdk --manifest-path "$here/Cargo.toml"
  bin="$here/target/release/nvmebench"
fi
[ -x "$bin" ] || { echo "$0: $bin is not an executable nvmebench" >&2; exit 2; }

tmp=$(mktemp -d)
started=""
cleanup() {
  case "$started" in
    tcp) NVMEBENCH_TGT_STATE="$tmp/tgt.state" "$here/scripts/spdk-tcp-target.sh" stop >/dev/null || true ;;
    vfu) NVMEBENCH_VFU_STATE="$tmp/vfu.state" "$here/scripts/spdk-vfu-target.sh" stop >/dev/null || true ;;
  esac
  rm -rf "$tmp"
}
trap cleanup EXIT
case "$target" in
  tcp)
    trid=$(NVMEBENCH_TGT_STATE="$tmp/tgt.state" "$here/scripts/spdk-tcp-target.sh" start --size 1024 --port 4440 --core "$tcore")
    started=tcp ;;
  vfu)
    trid=$(NVMEBENCH_VFU_STATE="$tmp/vfu.state" "$here/scripts/spdk-vfu-target.sh" start --core "$tcore")
    started=vfu ;;
esac
perf_opts=""
case "$trid" in *[Vv][Ff][Ii][Oo][Uu][Ss][Ee][Rr]*) perf_opts="-g" ;; esac
allow=""
case "$rw" in *write*) allow="--allow-destroy" ;; esac

run_perf() { # qd round [max completions per poll, and the file's tag]
  # shellcheck disable=SC2086  # $perf_opts is one flag or nothing
  LD_LIBRARY_PATH="$prefix/lib" "$perf" -q "$1" -o "$bs" -w "$rw" -t "$time" -c "[$core]" -LL $perf_opts \
    -C "${3:-0}" -r "$trid" >"$tmp/perf${4:-}.$1.$2.txt" 2>&1
}
run_nb() {
  # shellcheck disable=SC2086  # $allow is one flag or nothing
  "$bin" run --engine spdk --trid "$trid" --qd "$1" --bs "$bs" --rw "$rw" --time "$time" --cores "$core" \
    --percentiles 50,99,99.99 $allow --quiet --output json >"$tmp/nb.$1.$2.json"
}
for qd in $(echo "$qds" | tr , ' '); do
  # nvmebench's default bound (src/engine/spdk: default_max_completions); the report reads the
  # bound nvmebench says it used from its JSON and names it.
  bound=$((qd / 2))
  case "$trid" in *[Pp][Cc][Ii][Ee]*|*[Vv][Ff][Ii][Oo][Uu][Ss][Ee][Rr]*) ;; *) bound=$((bound + qd / 16)) ;; esac
  [ "$bound" -ge 1 ] || bound=1
  echo "$bound" >"$tmp/bound.$qd"
  for r in $(seq 1 "$rounds"); do
    if [ $((r % 2)) = 1 ]; then run_perf "$qd" "$r"; run_nb "$qd" "$r"; else run_nb "$qd" "$r"; run_perf "$qd" "$r"; fi
    if [ "$bound" -lt "$qd" ]; then run_perf "$qd" "$r" "$bound" .bound; fi
  done
done

python3 - "$tmp" "$rounds" "$trid" "$qds" "$bs" "$rw" "$time" "$core" "$tcore" <<'PY'
import json, re, statistics, sys
tmp, rounds, trid, qds, bs, rw, t, core, tcore = sys.argv[1], int(sys.argv[2]), *sys.argv[3:]
print(f"{rw} bs={bs} {t} s per round, initiator core {core}, target core {tcore}, {rounds} alternating rounds")
print(f"controller: {trid}")

def perf_figures(text):
    m = re.search(r"^Total\s*:\s*([\d.]+)\s+([\d.]+)\s+([\d.]+)", text, re.M)
    if not m:
        sys.exit("spdk_nvme_perf printed no Total line:\n" + text)
    cut = {float(p): float(us) for p, us in re.findall(r"^\s*([\d.]+)%\s*:\s*([\d.]+)us", text, re.M)}
    printed = float(m.group(3))
    # The -LL histogram: "lo - hi: cumulative% (count)" per bucket, in us.
    buckets = [(float(lo), float(hi), int(n)) for lo, hi, n in
               re.findall(r"^\s*([\d.]+)\s*-\s*([\d.]+):\s*[\d.]+%\s*\(\s*(\d+)\)", text, re.M)]
    count = sum(n for _, _, n in buckets)
    mean = printed
    if count:
        mean = sum((lo + hi) / 2 * n for lo, hi, n in buckets) / count
        if abs(mean - printed) > 0.006 + 0.005 * printed:
            sys.exit(f"perf's histogram mean {mean:.4f} us disagrees with its printed average {printed} us")
    return float(m.group(1)), mean, cut.get(99.0), cut.get(99.99)

import os
rows = []
for qd in qds.split(","):
    per = {"perf": [], "nvmebench": [], "bound": []}
    for r in range(1, rounds + 1):
        per["perf"].append(perf_figures(open(f"{tmp}/perf.{qd}.{r}.txt").read()))
        if os.path.exists(f"{tmp}/perf.bound.{qd}.{r}.txt"):
            per["bound"].append(perf_figures(open(f"{tmp}/perf.bound.{qd}.{r}.txt").read()))
        j = json.load(open(f"{tmp}/nb.{qd}.{r}.json"))["results"]["total"]
        d = j["read"] if "read" in rw else j["write"]
        p = d["lat_ns"]["percentiles"]
        per["nvmebench"].append((d["iops"], d["lat_ns"]["mean"] / 1000, p["99.0"] / 1000, p["99.99"] / 1000))
    # The bound perf -C was given, which must be the one nvmebench says it used.
    bound = int(open(f"{tmp}/bound.{qd}").read())
    used = int(json.load(open(f"{tmp}/nb.{qd}.1.json"))["engine"]["options"]["max_completions"])
    if used != bound:
        sys.exit(f"QD{qd}: nvmebench reaped at most {used} completions per poll, perf -C was given {bound}; "
                 "update the bound in this script to default_max_completions")
    med = {k: [statistics.median(x[i] for x in v if x[i] is not None) if any(x[i] is not None for x in v) else float("nan")
               for i in range(4)] for k, v in per.items() if v}
    rows.append((qd, med, per))
    print(f"\nQD{qd}: {'round':>5} {'tool':22} {'IOPS':>12} {'mean us':>9} {'p99 us':>9} {'p99.99 us':>10}")
    tools = [("perf", "spdk_nvme_perf -LL"), ("nvmebench", "nvmebench spdk")]
    if per["bound"]:
        tools.append(("bound", f"spdk_nvme_perf -LL -C {bound}"))
    for r in range(rounds):
        for k, name in tools:
            i, m, p99, p9999 = per[k][r]
            p99 = float("nan") if p99 is None else p99
            p9999 = float("nan") if p9999 is None else p9999
            print(f"      {r + 1:>5} {name:22} {i:>12,.0f} {m:>9.3f} {p99:>9.3f} {p9999:>10.3f}")
def ratios(peer, label):
    # Ratios of the medians, then the same ratio taken round by round (the two tools' runs of one
    # round are adjacent in time): its median and range show how far apart the tools really are.
    print(f"{'QD':>4} {label:>12} {'nvmebench':>12} {'ratio':>6}   {'perf mean':>9} {'nvmebench':>9} {'ratio':>6}   {'p99 ratio':>9} {'p99.99 ratio':>12}   {'per round: IOPS ratio':>24} {'mean ratio':>21}")
    for qd, m, per in rows:
        if peer not in m:
            continue
        (pi, pm, pp99, pp4), (ni, nm, np99, np4) = m[peer], m["nvmebench"]
        pairs = list(zip(per[peer], per["nvmebench"]))
        ri = [n[0] / p[0] for p, n in pairs]
        rm = [n[1] / p[1] for p, n in pairs]
        spread = lambda v: f"{statistics.median(v):.3f} [{min(v):.3f}, {max(v):.3f}]"
        print(f"{qd:>4} {pi:>12,.0f} {ni:>12,.0f} {ni / pi:>6.3f}   {pm:>9.3f} {nm:>9.3f} {nm / pm:>6.3f}   {np99 / pp99:>9.3f} {np4 / pp4:>12.3f}   {spread(ri):>24} {spread(rm):>21}")

print()
ratios("perf", "perf IOPS")
if any("bound" in m for _, m, _ in rows):
    print("\nagainst perf given nvmebench's bound on completions per poll (-C: half the depth, over a fabric a sixteenth more):")
    ratios("bound", "perf -C IOPS")
# Little's law as a check on the stamps: IOPS x mean latency is the mean number of I/Os inside
# their [issue stamp, completion stamp] windows, a little under the depth (a slot also spends the
# moment between its completion's stamp and its next I/O's issue outside any window). A tool whose
# completion stamps were read early (a TSC read the CPU ran ahead of the completion it stamps, as
# an unserialised rdtsc may when the branch to it is predicted) or late shows it here first.
print("\nLittle's law, IOPS x mean latency (I/Os inside their stamp windows, of the depth; medians of rounds):")
for qd, m, per in rows:
    cells = []
    for k, name in [("perf", "perf"), ("nvmebench", "nvmebench"), ("bound", "perf -C")]:
        if per[k]:
            cells.append(f"{name} {statistics.median(i * mu / 1e6 for i, mu, _, _ in per[k]):.3f}")
    print(f"{qd:>4}: " + ", ".join(cells) + f" (of {qd})")
print("targets: IOPS ratio >= 1.00, mean latency ratio <= 1.00 at every depth (medians)")
PY

#!/usr/bin/env bash
# The SPDK engine against SPDK's own spdk_nvme_perf on the same controller: same queue depth, I/O
# size, pattern, initiator core and duration, in alternating rounds of one run (each tool --rounds
# times per queue depth, who goes first alternating, so drift hits both), medians compared.
#
# Same polling policy by default: perf polls back to back and asks SPDK for every completion it
# has (-C 0: SPDK caps a poll at a quarter of the queue's entries, at most 128, where the queues are
# memory, at the whole queue over a fabric); nvmebench runs --poll-policy perf, which is the same.
# That first table is the one the verdict judges. A second table, labelled, runs nvmebench's tuned
# policy (--poll-policy tuned: half the depth per poll, a sixteenth more over a fabric, and over
# PCIe and vfio-user 100 ns between a poll that found nothing and the next) against perf given the
# same bound (-C; perf has no gap); --no-tuned skips it. nvmebench's own default is perf's policy
# over PCIe and vfio-user and the tuned one over a fabric (see src/engine/spdk: PollPolicy).
#
# Like for like: perf runs with -LL (software latency tracking: a TSC read per I/O at submission and
# in its completion callback, into SPDK's histogram; -LL costs what -L does and also prints the
# histogram), nvmebench with its per-I/O stamps (the same two TSC reads per I/O, into an HDR
# histogram). perf prints its mean to 10 ns, which at QD1 (about 0.9 us) is a 0.6% step, so perf's
# mean is taken from its -LL histogram (bucket midpoints) and checked against the printed one; p99
# and p99.99 come from perf's summary. Resolution of the percentiles compared: perf's histogram has
# 128 buckets per power of two (each 0.39-0.78% wide, printed by their upper end, so up to 0.78%
# above), nvmebench's every nanosecond to 2047 ns and 1024 buckets per power of two above (a
# bucket's upper end, at most 1/1024 above): percentiles may differ by up to 0.88% from resolution alone. Both poll one queue pair from one pinned core. Over vfio-user perf gets -g
# (single-file hugepage segments), which it needs to attach; nvmebench does the same by itself.
#
# The first table also gives nvmebench's busy time per I/O (engine.spdk.busy: the whole span of
# every poll that reaped a completion, callbacks and refills included, over the I/Os; polls that
# reaped nothing add nothing). It is not perf's -m busy %, which books the loop pass before a
# productive poll as busy; that one, computed by nvmebench as perf computes it, is the next column. --latency-off adds a third table: IOPS with no latency accounting on
# either side (perf without -L, nvmebench --latency off), perf's policy, where the initiator's own
# cost shows most.
set -eu

usage() {
  cat <<USAGE
Usage: $0 [--target tcp|vfu | --trid TRID] [--qd LIST] [--bs SIZE] [--rw randread|randwrite|read|write]
          [--time S] [--core N] [--target-core N] [--rounds N] [--bin PATH] [--no-tuned] [--latency-off]

--target tcp (default) starts SPDK's NVMe-oF/TCP target on 127.0.0.1 (scripts/spdk-tcp-target.sh,
a RAM-disk namespace); --target vfu starts SPDK's vfio-user target with a null namespace
(scripts/spdk-vfu-target.sh; SPDK built --with-vfio-user), the million-IOPS case. Either runs on
--target-core (default: the last CPU) and is stopped afterwards. --trid uses a controller you
started (e.g. a PCIe function bound to vfio-pci: 'trtype:PCIe traddr:0000:00:04.0').
--qd takes a comma-separated list (default 1,32,128). Writes destroy the namespace's data.
--no-tuned skips the second table (nvmebench's tuned policy against perf -C with its bound).
--latency-off adds a third table: IOPS of perf without -L against nvmebench --latency off.
Needs an installed SPDK (SPDK_DIR or pkg-config) with its perf app, and nvmebench built with
--features spdk (built here unless --bin names one).
Defaults: --bs 4096 --rw randread --time 5 --core 0 --rounds 3
USAGE
}

target=tcp trid="" qds=1,32,128 bs=4096 rw=randread time=5 core=0 tcore="" rounds=3 bin="" tuned=1 latoff=0
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
    --no-tuned) tuned=0; shift ;;
    --latency-off) latoff=1; shift ;;
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
if [ "$latoff" = 1 ] && ! "$bin" run --help | grep -q -- '--latency'; then
  echo "$0: --latency-off needs an nvmebench with --latency off; this one has none" >&2; exit 2
fi

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
memory=0
case "$trid" in *[Pp][Cc][Ii][Ee]*|*[Vv][Ff][Ii][Oo][Uu][Ss][Ee][Rr]*) memory=1 ;; esac
allow=""
case "$rw" in *write*) allow="--allow-destroy" ;; esac

run_perf() { # tag qd round max-completions latency-flag
  # shellcheck disable=SC2086  # $perf_opts and $5 are one flag or nothing
  LD_LIBRARY_PATH="$prefix/lib" "$perf" -q "$2" -o "$bs" -w "$rw" -t "$time" -c "[$core]" $5 $perf_opts \
    -C "$4" -r "$trid" >"$tmp/$1.$2.$3.txt" 2>&1
}
run_nb() { # tag qd round nvmebench-flags...
  local tag=$1 qd=$2 r=$3 pct="--percentiles 50,99,99.99"
  shift 3
  # --latency off keeps no latencies, so it takes no percentiles.
  case " $* " in *" --latency off "*) pct="" ;; esac
  # shellcheck disable=SC2086  # $allow and $pct are flags or nothing
  "$bin" run --engine spdk --trid "$trid" --qd "$qd" --bs "$bs" --rw "$rw" --time "$time" --cores "$core" \
    $pct $allow --quiet --output json "$@" >"$tmp/$tag.$qd.$r.json"
}
for qd in $(echo "$qds" | tr , ' '); do
  # The tuned bound (src/engine/spdk: tuned_max_completions); the report checks it against what
  # nvmebench's JSON says SPDK applied.
  bound=$((qd / 2))
  [ "$memory" = 1 ] || bound=$((bound + qd / 16))
  [ "$bound" -ge 1 ] || bound=1
  echo "$bound" >"$tmp/bound.$qd"
  for r in $(seq 1 "$rounds"); do
    # Who goes first alternates from round to round.
    if [ $((r % 2)) = 1 ]; then
      run_perf perf "$qd" "$r" 0 -LL; run_nb nb "$qd" "$r" --poll-policy perf
    else
      run_nb nb "$qd" "$r" --poll-policy perf; run_perf perf "$qd" "$r" 0 -LL
    fi
    if [ "$tuned" = 1 ] && [ $((r % 2)) = 1 ]; then
      run_perf perft "$qd" "$r" "$bound" -LL; run_nb nbt "$qd" "$r" --poll-policy tuned
    elif [ "$tuned" = 1 ]; then
      run_nb nbt "$qd" "$r" --poll-policy tuned; run_perf perft "$qd" "$r" "$bound" -LL
    fi
    if [ "$latoff" = 1 ] && [ $((r % 2)) = 1 ]; then
      run_perf perfo "$qd" "$r" 0 ""; run_nb nbo "$qd" "$r" --poll-policy perf --latency off
    elif [ "$latoff" = 1 ]; then
      run_nb nbo "$qd" "$r" --poll-policy perf --latency off; run_perf perfo "$qd" "$r" 0 ""
    fi
  done
done

python3 - "$tmp" "$rounds" "$trid" "$qds" "$bs" "$rw" "$time" "$core" "$tcore" "$tuned" "$latoff" "$memory" <<'PY'
import json, os, re, statistics, sys
tmp, rounds, trid, qds, bs, rw, t, core, tcore, tuned, latoff, memory = sys.argv[1], int(sys.argv[2]), *sys.argv[3:]
tuned, latoff, memory = tuned == "1", latoff == "1", memory == "1"
print(f"{rw} bs={bs} {t} s per round, initiator core {core}, target core {tcore}, {rounds} alternating rounds")
print(f"controller: {trid}")

def perf_figures(path, latency=True):
    text = open(path).read()
    m = re.search(r"^Total\s*:\s*([\d.]+)\s+([\d.]+)\s+([\d.]+)", text, re.M)
    if not m:
        sys.exit("spdk_nvme_perf printed no Total line:\n" + text)
    if not latency:
        return float(m.group(1)), None, None, None, None
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
    return float(m.group(1)), mean, cut.get(99.0), cut.get(99.99), None

def nb_figures(path, latency=True):
    j = json.load(open(path))
    d = j["results"]["total"]["read" if "read" in rw else "write"]
    b = (j["engine"].get("spdk") or {}).get("busy") or {}
    busy = (b.get("busy_ns_per_io"), b.get("perf_busy_pct"))
    if not latency:
        return d["iops"], None, None, None, busy
    p = d["lat_ns"]["percentiles"]
    return d["iops"], d["lat_ns"]["mean"] / 1000, p["99.0"] / 1000, p["99.99"] / 1000, busy

def spdk_cap(entries, limit):
    # What SPDK 25.09 reaps per poll at most (src/engine/spdk: spdk_applied_max_completions).
    cap = min(max(entries // 4, 1), 128) if memory else max(entries - 1, 1)
    return cap if limit == 0 else min(limit, cap)

def check_policy(qd, tag, policy, limit):
    # nvmebench must say it ran the policy the table claims, with what SPDK applied to perf -C too.
    o = json.load(open(f"{tmp}/{tag}.{qd}.1.json"))["engine"]["options"]
    applied = spdk_cap(int(o["io_queue_size"]), limit)
    if o["poll_policy"] != policy or int(o["max_completions"]) != applied:
        sys.exit(f"QD{qd}: nvmebench ran poll_policy={o['poll_policy']} max_completions={o['max_completions']}, "
                 f"the table claims {policy} with {applied} (perf -C {limit}); update this script")
    return applied

med = lambda v: statistics.median(v) if v else float("nan")
spread = lambda v: f"{statistics.median(v):.3f} [{min(v):.3f}, {max(v):.3f}]"
fmt = lambda x, f: "-" if x is None or x != x else format(x, f)

def table(title, ptag, ntag, policy, limit_of, latency=True):
    print(f"\n{title}")
    rows = []
    for qd in qds.split(","):
        limit = limit_of(qd)
        applied = check_policy(qd, ntag, policy, limit)
        p = [perf_figures(f"{tmp}/{ptag}.{qd}.{r}.txt", latency) for r in range(1, rounds + 1)]
        n = [nb_figures(f"{tmp}/{ntag}.{qd}.{r}.json", latency) for r in range(1, rounds + 1)]
        rows.append((qd, applied, p, n))
        print(f"  QD{qd} (at most {applied} completions per poll, both): round, tool, IOPS, mean us, p99 us, p99.99 us, busy ns/IO, perf -m busy %")
        for r in range(rounds):
            for name, x in (("perf", p[r]), ("nvmebench", n[r])):
                print(f"    {r + 1:>3} {name:10} {x[0]:>12,.0f} {fmt(x[1], '>9.3f')} {fmt(x[2], '>9.3f')} {fmt(x[3], '>10.3f')} {fmt((x[4] or (None, None))[0], '>9.1f')} {fmt((x[4] or (None, None))[1], '>6.2f')}")
    print(f"  {'QD':>4} {'perf IOPS':>12} {'nvmebench':>12} {'ratio':>6}   {'perf mean':>9} {'nvmebench':>9} {'ratio':>6}   "
          f"{'busy ns/IO':>10} {'perf -m %':>9}   {'per round: IOPS ratio':>24} {'mean ratio':>21}")
    verdict = []
    for qd, applied, p, n in rows:
        pi, ni = med([x[0] for x in p]), med([x[0] for x in n])
        ri = [b[0] / a[0] for a, b in zip(p, n)]
        if latency:
            pm, nm = med([x[1] for x in p]), med([x[1] for x in n])
            rm = [b[1] / a[1] for a, b in zip(p, n)]
            mean_cells = f"{pm:>9.3f} {nm:>9.3f} {nm / pm:>6.3f}"
            mean_spread = spread(rm)
        else:
            mean_cells, mean_spread, rm = f"{'-':>9} {'-':>9} {'-':>6}", "-", None
        busy = [x[4][0] for x in n if x[4][0] is not None]
        pbusy = [x[4][1] for x in n if x[4][1] is not None]
        print(f"  {qd:>4} {pi:>12,.0f} {ni:>12,.0f} {ni / pi:>6.3f}   {mean_cells}   {fmt(med(busy) if busy else None, '>10.1f')} "
              f"{fmt(med(pbusy) if pbusy else None, '>9.2f')}   "
              f"{spread(ri):>24} {mean_spread:>21}")
        verdict.append((qd, statistics.median(ri), min(ri), max(ri), None if rm is None else statistics.median(rm)))
    return verdict

v = table("Table 1, perf's policy on both sides (perf -C 0, nvmebench --poll-policy perf): the table the verdict judges",
          "perf", "nb", "perf", lambda qd: 0)
if tuned:
    table("Table 2, tuned policy (nvmebench --poll-policy tuned: half the depth per poll"
          + ("" if memory else ", a sixteenth more over a fabric")
          + (", 100 ns after an empty poll" if memory else "") + "; perf -C with the same bound"
          + (", no gap: perf has none" if memory else "") + ")",
          "perft", "nbt", "tuned", lambda qd: int(open(f"{tmp}/bound.{qd}").read()))
if latoff:
    table("Table 3, no latency accounting (perf without -L, nvmebench --latency off), perf's policy: IOPS only",
          "perfo", "nbo", "perf", lambda qd: 0, latency=False)
print("\nbusy ns/IO: nvmebench's busy time (a poll that reaped a completion is busy for its whole span, callbacks"
      " and refills included; one that reaped none adds nothing) over its I/Os; not perf -m's busy %, which books"
      " the loop pass before a productive poll as busy. perf -m %: nvmebench's polls booked as perf books its own"
      " (the span from one poll's start to the next's is busy when the later poll reaped), over the measured window.")
print("percentile resolution: perf 128 buckets per power of two (0.39-0.78% wide, upper end), nvmebench 1024 above 2047 ns"
      " (upper end, within 1/1024).")
# The verdict judges table 1 only: the tools on the same policy, within the round-to-round spread.
cells = []
for qd, r, lo, hi, m in v:
    within = lo <= 1.0 <= hi
    cells.append(f"QD{qd} IOPS {r:.3f}x [{lo:.3f}, {hi:.3f}]{' (within the spread)' if within else ''}"
                 + ("" if m is None else f", mean {m:.3f}x"))
print("verdict, table 1 (perf's policy on both sides), nvmebench against perf, median of per-round ratios [range]: "
      + "; ".join(cells))
PY

#!/usr/bin/env bash
# nvmebench's io_uring engines against fio's t/io_uring, the tool that defines io_uring's ceiling
# (no job parsing, no accounting: a ring, a random offset and io_uring_enter), on a CPU-bound
# device, in alternating rounds of one run, medians compared.
#
# Pairs, each at every --qd (4 KiB random reads, one thread pinned to --core):
#   irq   uring          on null_blk   against  t/io_uring -p0
#   poll  uring:poll     on null_blk   against  t/io_uring -p1
#   cmd   uring-cmd:fixedbufs=0      on /dev/ngXnY against  t/io_uring -u1 -O0 -p0 -B0
#   cmd-poll uring-cmd:poll,fixedbufs=0          against  t/io_uring -u1 -O0 -p1 -B0  (not in the default --modes)
#   aio   aio            on null_blk   against  t/io_uring -a1 -B0 -F0 (libaio; not in the default --modes)
# Both tools get the same registered buffers, registered file and ring fd, and the set-up flags
# t/io_uring asks for (SINGLE_ISSUER, DEFER_TASKRUN, COOP_TASKRUN, where the kernel has them).
# Passthrough runs without registered buffers on both sides: on the testbed's kernel (6.1)
# t/io_uring -u1 with them fails at QD128 (the device answers EINVAL), and both tools ran at about
# half the IOPS with them at QD32. aio has no registered buffers or file (t/io_uring refuses them
# with -a1); nvmebench's aio faces it at its defaults and with aio:reap_max=2, the virtio-tuned
# bound, instead of matched batching.
#
# Two nvmebench configurations face t/io_uring at its defaults (-s32 -c32, which t/io_uring clamps
# to the depth): nvmebench's defaults, and nvmebench with the same batching ("matched":
# submit_batch and reap_batch = t/io_uring's -s and -c, reap_max = the depth, as t/io_uring reaps
# every completion it finds). --batch adds matched pairs at other batch sizes (--batch 1,32).
#
# What each side measures: t/io_uring runs without -t (no latency tracking at all); its IOPS is
# the mean of its one-second samples after the first. nvmebench stamps every I/O on its own (a
# clock read just before the engine takes it and one in its completion handling, booked into an
# HDR histogram), with the same first second as ramp (--ramp 1s --time T-1). At QD1 the figure
# that counts is the round trip, 1/IOPS, shown beside nvmebench's own mean latency.
#
# CPU per I/O is the process's user and system time over the I/Os of its run, ramp second
# included: t/io_uring's from getrusage of the child over the I/Os of its one-second samples (the
# last second, which it does not print, counted at the mean; its set-up, a ring and a buffer, is
# in the figure), nvmebench's from its own results.cpu (getrusage from the start gate to the end,
# over every I/O since the gate; its set-up before the gate is not).
#
# The testbed runs under TCG here; its guest keeps time with the TSC (scripts/testbed.sh: with the
# emulated HPET every clock read would take about 10 us, and nvmebench reads the clock twice per
# I/O where t/io_uring without -t never does).
set -eu

usage() {
  cat <<USAGE
Usage: $0 (--fio-src DIR | --t-io-uring PATH) [--qd LIST] [--modes LIST] [--batch LIST]
          [--also OPTS]... [--time S] [--rounds N] [--core N] [--bin PATH]
          [--here --nullb DEV --ng DEV]

  --fio-src DIR     a fio source tree (e.g. 'git -C FIO.git archive HEAD | tar -x -C DIR');
                    t/io_uring is built from a copy of it ('./configure --disable-native && make t/io_uring'),
                    the tree itself is left as it is
  --t-io-uring PATH an already built t/io_uring instead
  --qd LIST         queue depths (default 1,32,128)
  --modes LIST      irq, poll, cmd, cmd-poll, aio (default irq,poll,cmd)
  --batch LIST      batch sizes of the matched pairs, each capped at the depth (default 32, which
                    is t/io_uring's default)
  --also OPTS       one more nvmebench configuration facing t/io_uring's defaults, engine options
                    added to each mode's engine (--also reap_max=2: the virtio-blk bound); may be
                    repeated
  --time S          seconds per run, the first of them ramp (default 5)
  --rounds N        runs of each tool per configuration, alternating who goes first (default 3)
  --core N          the core both tools run on (default 0)
  --bin PATH        nvmebench binary (default: cargo build --release here)
  --here            run on this machine instead of the testbed: --nullb names a null_blk device
                    loaded with poll queues (modprobe null_blk queue_mode=2 irqmode=0
                    poll_queues=2 bs=4096 hw_queue_depth=1024), --ng an NVMe generic device
                    (boot with nvme.poll_queues=2 for cmd-poll); needs root

Without --here the QEMU testbed (scripts/testbed.sh) is booted once with an emulated NVMe
controller (nvme.poll_queues=2) and null_blk loaded as above, and every run happens inside it.
Prints one row per mode, depth and configuration: each tool's median IOPS and the spread of its
rounds ((max-min)/median), the ratio of the medians and the range of the per-round ratios, and
CPU per I/O split into user and system time. Needs python3 (and, with --fio-src, a C toolchain).
USAGE
}

die() { echo "$0: $1" >&2; exit 2; }

fio_src="" tio="" qds=1,32,128 modes=irq,poll,cmd batches=32 time=5 rounds=3 core=0 bin="" here_mode=0
nullb="" ng="" also=""
while [ $# -gt 0 ]; do
  case "$1" in
    --fio-src) [ $# -ge 2 ] || die "--fio-src needs a directory"; fio_src=$2; shift 2 ;;
    --t-io-uring) [ $# -ge 2 ] || die "--t-io-uring needs a path"; tio=$2; shift 2 ;;
    --qd) [ $# -ge 2 ] || die "--qd needs a list like 1,32,128"; qds=$2; shift 2 ;;
    --modes) [ $# -ge 2 ] || die "--modes needs a list like irq,poll,cmd,aio"; modes=$2; shift 2 ;;
    --batch) [ $# -ge 2 ] || die "--batch needs a list like 1,32"; batches=$2; shift 2 ;;
    --also)
      [ $# -ge 2 ] || die "--also needs engine options, e.g. --also reap_max=2"
      case "$2" in ''|*[!a-z0-9_=,]*) die "--also '$2' is not a list of engine options like reap_max=2,submit_batch=4" ;; esac
      also="${also:+$also;}$2"; shift 2 ;;
    --time) [ $# -ge 2 ] || die "--time needs seconds"; time=$2; shift 2 ;;
    --rounds) [ $# -ge 2 ] || die "--rounds needs a number"; rounds=$2; shift 2 ;;
    --core) [ $# -ge 2 ] || die "--core needs a core number"; core=$2; shift 2 ;;
    --bin) [ $# -ge 2 ] || die "--bin needs a path"; bin=$2; shift 2 ;;
    --here) here_mode=1; shift ;;
    --nullb) [ $# -ge 2 ] || die "--nullb needs a device"; nullb=$2; shift 2 ;;
    --ng) [ $# -ge 2 ] || die "--ng needs a device"; ng=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1'; see --help" ;;
  esac
done

case "$qds" in *[!0-9,]*|"") die "--qd '$qds' is not a list of depths; write e.g. 1,32,128" ;; esac
case "$batches" in *[!0-9,]*|"") die "--batch '$batches' is not a list of batch sizes; write e.g. 1,32" ;; esac
for n in $(echo "$qds,$batches" | tr , ' '); do
  if [ "$n" -lt 1 ] || [ "$n" -gt 4096 ]; then die "depths and batch sizes go from 1 to 4096 ('$n' does not)"; fi
done
for m in $(echo "$modes" | tr , ' '); do
  case "$m" in irq|poll|cmd|cmd-poll|aio) ;; *) die "--modes: '$m' is not a mode; use irq, poll, cmd, cmd-poll or aio" ;; esac
done
case "$time" in ''|*[!0-9]*) die "--time '$time' is not a whole number of seconds" ;; esac
[ "$time" -ge 3 ] || die "--time $time is too short: the first second is ramp, and t/io_uring needs two samples after it; give at least 3"
case "$rounds" in ''|*[!0-9]*|0) die "--rounds '$rounds' is not a positive whole number" ;; esac
case "$core" in ''|*[!0-9]*) die "--core '$core' is not a core number" ;; esac
if [ -n "$fio_src" ] && [ -n "$tio" ]; then die "give --fio-src or --t-io-uring, not both"; fi
if [ -z "$fio_src" ] && [ -z "$tio" ]; then die "t/io_uring is needed: give --fio-src DIR (a fio source tree) or --t-io-uring PATH"; fi
if [ -n "$fio_src" ]; then
  if [ ! -f "$fio_src/t/io_uring.c" ] || [ ! -x "$fio_src/configure" ]; then
    die "--fio-src '$fio_src' is not a fio source tree (no t/io_uring.c or configure there)"
  fi
fi
if [ -n "$tio" ]; then [ -x "$tio" ] || die "--t-io-uring '$tio' is not an executable"; fi
if [ "$here_mode" = 1 ]; then
  case ",$modes," in *,irq,*|*,poll,*|*,aio,*) [ -b "$nullb" ] || die "--here needs --nullb DEV, a null_blk block device, for irq and poll" ;; esac
  case ",$modes," in *,cmd*) [ -c "$ng" ] || die "--here needs --ng DEV, an NVMe generic device (/dev/ngXnY), for cmd" ;; esac
else
  if [ -n "$nullb$ng" ]; then die "--nullb and --ng go with --here; the testbed makes its own devices"; fi
fi
command -v python3 >/dev/null || die "python3 is not installed; run 'apt-get install python3'"

here=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "$bin" ]; then
  cargo build --release --quiet --manifest-path "$here/Cargo.toml"
  bin="$here/target/release/nvmebench"
fi
[ -x "$bin" ] || die "--bin '$bin' is not an executable nvmebench"
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")

# The work directory is shared read-write with the guest (the guest's /tmp is its own).
work=$(mktemp -d "${TMPDIR:-/var/tmp}/nvmebench-tio.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [ -n "$fio_src" ]; then
  echo "building t/io_uring from $fio_src" >&2
  cp -a "$fio_src" "$work/fio"
  # Not for this CPU alone: without --here t/io_uring runs on the testbed's emulated CPU, which
  # lacks some of the host's extensions (a -march=native build dies there with SIGILL).
  (cd "$work/fio" && ./configure --disable-native >"$work/fio-build.log" 2>&1 && make -j"$(nproc)" t/io_uring >>"$work/fio-build.log" 2>&1) ||
    { tail -20 "$work/fio-build.log" >&2; die "building t/io_uring failed (the log's end is above)"; }
  tio="$work/fio/t/io_uring"
else
  # A copy in the work directory, which the guest shares (it may not see where the original is).
  cp "$tio" "$work/t-io_uring"
  tio="$work/t-io_uring"
fi

cat >"$work/driver.py" <<'PY'
import json, os, re, resource, statistics, subprocess, sys

(nb_bin, tio, nullb, ng, qds, modes, batches, also, secs, rounds, core, out) = sys.argv[1:]
also = [a for a in also.split(";") if a]
qds = [int(q) for q in qds.split(",")]
modes = modes.split(",")
batches = sorted({int(b) for b in batches.split(",")}, reverse=True)
secs, rounds = int(secs), int(rounds)

MODES = {  # mode: (device, t/io_uring flags, nvmebench engine)
    "irq": (nullb, ["-p0"], "uring"),
    "poll": (nullb, ["-p1"], "uring:poll"),
    # -O0: t/io_uring opens with O_DIRECT by default, which a character device refuses (EINVAL);
    # passthrough bypasses the page cache whatever the flag.
    # -B0 / fixedbufs=0: see the header (registered buffers fail or halve passthrough here).
    "cmd": (ng, ["-u1", "-O0", "-p0", "-B0"], "uring-cmd:fixedbufs=0"),
    "cmd-poll": (ng, ["-u1", "-O0", "-p1", "-B0"], "uring-cmd:poll,fixedbufs=0"),
    # libaio: t/io_uring refuses registered buffers and files with it.
    "aio": (nullb, ["-a1", "-B0", "-F0", "-p0"], "aio"),
}

class Failed(Exception):
    """A run that did not give a figure: its configuration's row says why, the others go on."""

def measured(cmd, log):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(log, "w") as f:
        p = subprocess.run(cmd, stdout=f, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        why = (p.stderr.strip() or open(log).read().strip()).splitlines()
        raise Failed(f"{os.path.basename(cmd[3] if cmd[0] == 'taskset' else cmd[0])} exited {p.returncode}: "
                     + (why[-1] if why else "no output"))
    return after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime, open(log).read()

def sample(text):
    m = re.match(r"IOPS=([0-9.]+)([KM]?),", text)
    return float(m.group(1)) * {"": 1, "K": 1e3, "M": 1e6}[m.group(2)]

def run_tio(mode, qd, batch, tag):
    dev, flags, _ = MODES[mode]
    cmd = ["taskset", "-c", core, tio, "-d", str(qd), "-s", str(batch), "-c", str(batch), "-b", "4096",
           "-B1", "-F1", "-X1", "-R1", "-n1", "-r", str(secs)] + flags + [dev]
    usr, sys_, text = measured(cmd, f"{out}/tio-{tag}.txt")
    samples = [sample(l) for l in text.splitlines() if l.startswith("IOPS=")]
    if len(samples) < 2:
        last = [l for l in text.strip().splitlines() if l][-1:] or ["no output"]
        raise Failed(f"t/io_uring printed {len(samples)} samples in {secs} s, ending: {last[0]}")
    iops = statistics.mean(samples[1:])
    # Every second is printed but the last (the run ends on it): count it at the mean.
    ios = sum(samples) + iops
    return {"iops": iops, "usr": usr / ios * 1e9, "sys": sys_ / ios * 1e9, "lat": None}

def run_nb(mode, qd, opts, tag):
    dev, _, engine = MODES[mode]
    spec = engine + ("" if not opts else (":" if ":" not in engine else ",") + opts)
    cmd = [nb_bin, "run", "--engine", spec, "--filename", dev, "--rw", "randread", "--bs", "4k",
           "--qd", str(qd), "--ramp", "1s", "--time", f"{secs - 1}s", "--cores", core,
           "--quiet", "--output", "json"]
    _, _, text = measured(cmd, f"{out}/nb-{tag}.json")
    j = json.loads(text)
    r, cpu = j["results"]["total"]["read"], j["results"]["cpu"]
    return {"iops": r["iops"], "usr": cpu["user_ns"] / cpu["ios"], "sys": cpu["sys_ns"] / cpu["ios"],
            "lat": r["lat_ns"]["mean"], "engine": j["engine"]}

# Every (mode, depth): t/io_uring at each batch size, nvmebench at its defaults and matched at each
# batch size; the defaults face t/io_uring's defaults (the largest batch, 32 unless --batch says).
rows = []
for mode in modes:
    for qd in qds:
        tio_cfgs = sorted({min(b, qd) for b in batches}, reverse=True)
        if mode == "aio":
            # The aio engine's one knob is reap_max: its default (the depth) and the virtio bound.
            nb_cfgs = [("defaults", "", tio_cfgs[0]), ("reap_max=2", "reap_max=2", tio_cfgs[0])]
        else:
            nb_cfgs = [("defaults", "", tio_cfgs[0])] + [
                (f"matched -s{b} -c{b}", f"submit_batch={b},reap_batch={b},reap_max={qd}", b) for b in tio_cfgs]
        nb_cfgs += [(a, a, tio_cfgs[0]) for a in also if mode != "aio"]
        got = {("tio", b): [] for b in tio_cfgs}
        got.update({("nb", name): [] for name, _, _ in nb_cfgs})
        for r in range(rounds):
            jobs = [("tio", b, lambda b=b: run_tio(mode, qd, b, f"{mode}-{qd}-s{b}-{r}")) for b in tio_cfgs]
            jobs += [("nb", name, lambda o=o, i=i: run_nb(mode, qd, o, f"{mode}-{qd}-{i}-{r}"))
                     for i, (name, o, _) in enumerate(nb_cfgs)]
            for who, key, job in (jobs if r % 2 == 0 else jobs[::-1]):
                try:
                    got[(who, key)].append(job())
                    said = f"{got[(who, key)][-1]['iops']:,.0f} IOPS"
                except Failed as e:
                    got[(who, key)].append({"failed": str(e)})
                    said = f"failed: {e}"
                print(f"  round {r + 1}: {mode} qd{qd} {who} {key}: {said}", file=sys.stderr, flush=True)
        for name, opts, b in nb_cfgs:
            rows.append((mode, qd, name, b, got[("tio", b)], got[("nb", name)]))

json.dump([{"mode": m, "qd": q, "config": n, "tio_batch": b, "t_io_uring": t, "nvmebench": nb}
           for m, q, n, b, t, nb in rows], open(f"{out}/results.json", "w"), indent=1)

def med(runs, k):
    return statistics.median(x[k] for x in runs)

def spread(runs):
    v = [x["iops"] for x in runs]
    return (max(v) - min(v)) / statistics.median(v) * 100

kernel = os.uname().release
print(f"randread 4 KiB, one thread on core {core}, {secs} s per run (the first is ramp), {rounds} rounds, "
      f"kernel {kernel}; null_blk: {nullb or '-'}, generic NVMe: {ng or '-'}")
print("IOPS: median (spread of the rounds); ratio: nvmebench/t-io_uring of the medians [per-round range];"
      " CPU/IO: usr+sys ns")
hdr = (f"{'mode':8} {'qd':>4} {'nvmebench config':24} {'t/io_uring':>17} {'nvmebench':>17} "
       f"{'ratio':>6} {'[range]':>13} {'t/io_uring CPU/IO':>18} {'nvmebench CPU/IO':>17}")
print(hdr)
print("-" * len(hdr))
verdicts = []
for mode, qd, name, b, t, n in rows:
    failed = [x["failed"] for x in t + n if "failed" in x]
    if failed:
        print(f"{mode:8} {qd:>4} {name:24} failed in {len(failed)} of {len(t) + len(n)} runs: {failed[0]}")
        verdicts.append((mode, qd, name, None))
        continue
    ratio = med(n, "iops") / med(t, "iops")
    per_round = [x["iops"] / y["iops"] for x, y in zip(n, t)]
    tcpu = f"{med(t, 'usr'):,.0f}+{med(t, 'sys'):,.0f}"
    ncpu = f"{med(n, 'usr'):,.0f}+{med(n, 'sys'):,.0f}"
    print(f"{mode:8} {qd:>4} {name:24} {med(t, 'iops'):>10,.0f} ({spread(t):>3.0f}%) "
          f"{med(n, 'iops'):>10,.0f} ({spread(n):>3.0f}%) {ratio:>5.2f}x [{min(per_round):.2f}-{max(per_round):.2f}] "
          f"{tcpu:>18} {ncpu:>17}")
    if qd == 1:
        print(f"{'':14}QD1 round trip (1/IOPS): t/io_uring {1e9 / med(t, 'iops'):,.0f} ns, nvmebench "
              f"{1e9 / med(n, 'iops'):,.0f} ns (its own mean latency {med(n, 'lat'):,.0f} ns)")
    elif name == "defaults" or name.startswith("matched"):
        verdicts.append((mode, qd, name, ratio))
missed = [v for v in verdicts if v[3] is not None and v[3] < 0.9]
failed_rows = [v for v in verdicts if v[3] is None]
print()
print(f"nvmebench >= 0.9x t/io_uring at QD > 1 (defaults and matched): "
      f"{len(verdicts) - len(missed) - len(failed_rows)} of {len(verdicts)} rows"
      + "".join(f"\n  missed: {m} qd{q} {n}: {r:.2f}x" for m, q, n, r in missed)
      + "".join(f"\n  no verdict (a run failed): {m} qd{q} {n}" for m, q, n, _ in failed_rows))
engines = {r[0]: next(x["engine"] for x in r[5] if "engine" in x) for r in rows
           if r[2] == "defaults" and any("engine" in x for x in r[5])}
for mode, e in engines.items():
    print(f"nvmebench {mode} defaults: {e['name']} " + ", ".join(f"{k}={v}" for k, v in e["options"].items() if k != "note"))
sys.exit(1 if failed_rows else 0)
PY

args=("$bin" "$tio" "" "" "$qds" "$modes" "$batches" "$also" "$time" "$rounds" "$core" "$work/out")
mkdir "$work/out"
if [ "$here_mode" = 1 ]; then
  args[2]=$nullb args[3]=$ng
  python3 "$work/driver.py" "${args[@]}"
  exit
fi

# One boot for every run. null_blk: blk-mq, completions in the submitter's context (irqmode=0, the
# CPU-bound case), two poll queues for IOPOLL, 4 KiB blocks, a tag set deeper than the deepest
# queue asked for (its default 64 would make QD128 wait for tags).
args[2]=/dev/nullb0 args[3]=/dev/ng0n1
maxqd=$(echo "$qds" | tr , '\n' | sort -n | tail -1)
{
  echo 'set -e'
  printf 'modprobe null_blk queue_mode=2 irqmode=0 poll_queues=2 bs=4096 hw_queue_depth=%s nr_devices=1\n' "$((maxqd * 2 > 1024 ? maxqd * 2 : 1024))"
  # shellcheck disable=SC2016  # expanded in the guest
  echo 'for _ in $(seq 50); do [ -b /dev/nullb0 ] && break; sleep 0.1; done'
  printf 'exec python3'
  printf ' %q' "$work/driver.py" "${args[@]}"
  echo
} >"$work/guest.sh"
n_modes=$(echo "$modes" | tr , '\n' | wc -l)
n_qds=$(echo "$qds" | tr , '\n' | wc -l)
n_batches=$(echo "$batches" | tr , '\n' | wc -l)
n_also=$(echo "$also" | tr ';' '\n' | grep -c . || true)
budget=$((600 + n_modes * n_qds * (1 + 2 * n_batches + n_also) * rounds * (time + 20)))
"$here/scripts/testbed.sh" --append nvme.poll_queues=2 --rwdir "$work" --timeout "$budget" -- bash "$work/guest.sh"

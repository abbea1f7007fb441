#!/usr/bin/env bash
# fio's own example job files, run by fio and by nvmebench (issue #29): which of them fio runs on
# this machine, which of those nvmebench runs and which it refuses (in its one sentence), and, for
# every job bounded by a size or an I/O count, whether both moved the same number of I/Os in each
# direction.
#
# Each example is rewritten only for where it runs and how long: every filename= becomes a scratch
# file (a list keeps its length; a bare name where the file has a directory=, which fio puts before
# it), directory= the scratch directory, sizes (size, filesize, io_size) above --size become --size
# (and fill_device=0: the disk is shared), and the times that make a job long (runtime, timeout,
# ramp_time, startdelay) are capped at 1 s; time_based stays as written. Every file without filesize= gets
# size=--size in a [global] at its top, since a scratch file has no size of its own (a section's
# own size still replaces it).
# Both tools run in the same fresh directory per example, so files fio makes in the current
# directory (JOBNAME.0.0) land there too.
set -eu

usage() {
  cat <<USAGE
Usage: $0 [--nvmebench BIN] [--size SIZE] [--timeout SECONDS] [--keep DIR] [--only NAME] EXAMPLES_DIR

Runs every EXAMPLES_DIR/*.fio (fio's examples/ directory, from a fio source tree) through
fio --output-format=json and through nvmebench run --output-format=json, each rewritten for a
scratch file, a runtime of at most 1 s and a small size, and prints one row per example:
  example | fio: ran or failed | nvmebench: ran, or refused with its sentence | I/O counts
The I/O counts column compares read, write and trim total_ios, summed per job name, of every job
that is not time_based and ended before its runtime (so bounded by its size or an I/O count):
"equal", or the counts that differ. Examples fio itself fails on here (engines or hardware this machine lacks) are left out of
the tally, which ends the output:
  N of M examples fio runs here, nvmebench runs K (P%)
Options:
  --nvmebench BIN   the binary to run (default: a release build of this checkout, built here)
  --size SIZE       the largest size an example keeps (default 16m)
  --timeout SEC     the longest either tool may take on one example (default 60)
  --keep DIR        keep each example's rewritten job file, outputs and stderr under DIR
  --only NAME       run only EXAMPLES_DIR/NAME.fio (may be given more than once)
Needs fio, python3 and timeout. Exits 0 when it printed the table, 2 on bad usage.
USAGE
}

bin="" size=16m limit=60 keep="" only=() dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --nvmebench) bin=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --only) only+=("$2"); shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "$0: unknown option '$1'; see --help" >&2; exit 2 ;;
    *) [ -z "$dir" ] || { echo "$0: one examples directory only; see --help" >&2; exit 2; }; dir=$1; shift ;;
  esac
done
[ -n "$dir" ] || { echo "$0: give fio's examples directory; see --help" >&2; exit 2; }
[ -d "$dir" ] || { echo "$0: $dir is not a directory" >&2; exit 2; }
case "$limit" in *[!0-9]*|"") echo "$0: --timeout takes whole seconds" >&2; exit 2 ;; esac
case "$size" in [0-9]*) ;; *) echo "$0: --size takes a size like 16m" >&2; exit 2 ;; esac
for tool in fio python3 timeout; do
  command -v "$tool" >/dev/null || { echo "$0: $tool is not installed" >&2; exit 2; }
done
if [ -z "$bin" ]; then
  here=$(cd "$(dirname "$0")/../.." && pwd)
  cargo build --release --quiet --manifest-path "$here/Cargo.toml"
  bin="${CARGO_TARGET_DIR:-$here/target}/release/nvmebench"
fi
[ -x "$bin" ] || { echo "$0: $bin is not an executable" >&2; exit 2; }
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")

# No file either tool writes may grow past 1 GiB (ulimit -f counts KiB): an example that lays out
# a file far beyond its size (cross-stripe-verify.fio's offset_increment=124g over 30 jobs) fails
# with EFBIG rather than filling the shared disk.
file_kib=$((1 << 20))
# Scratch files go beside the working directory's disk, not on a tmpfs, where O_DIRECT fails.
work=$(mktemp -d "${TMPDIR:-/var/tmp}/fio-examples.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [ ${#only[@]} -gt 0 ]; then
  examples=()
  for n in "${only[@]}"; do examples+=("$dir/${n%.fio}.fio"); done
else
  examples=("$dir"/*.fio)
fi

for ex in "${examples[@]}"; do
  name=$(basename "$ex" .fio)
  d="$work/$name"
  mkdir -p "$d/run"
  python3 - "$ex" "$d/run" "$size" >"$d/job.fio" <<'PY'
import re, sys
src, scratch, small = sys.argv[1], sys.argv[2], sys.argv[3]
UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}
def size_bytes(v):
    m = re.fullmatch(r"\s*(\d+)\s*([kmgtp]?)i?b?\s*", v, re.I)
    return int(m.group(1)) * UNITS[m.group(2).lower()] if m else None
TIME_US = {"d": 86400e6, "h": 3600e6, "m": 60e6, "s": 1e6, "ms": 1e3, "msec": 1e3, "us": 1, "usec": 1, "": 1e6}
def time_us(v):
    m = re.fullmatch(r"\s*(\d+)\s*([a-z]*)\s*", v, re.I)
    if not m or m.group(2).lower() not in TIME_US:
        return None
    return int(m.group(1)) * TIME_US[m.group(2).lower()]
limit = size_bytes(small)
out, sized = [], False
n = 0
# fio puts a filename after the directory, even an absolute one: with a directory, names stay bare.
lines = open(src).read().splitlines()
has_dir = any(re.match(r"\s*directory\s*=", l) for l in lines)
for line in lines:
    m = re.match(r"(\s*)([A-Za-z_]\w*)(\s*=\s*)([^;#\n]*)(.*)", line.rstrip("\n"))
    if not m or line.lstrip().startswith(("[", ";", "#")):
        out.append(line.rstrip("\n"))
        continue
    pre, key, eq, value, rest = m.groups()
    value = value.rstrip()
    k = key.lower()
    if k == "filename":
        parts = re.split(r"(?<!\\):", value)
        value = ":".join(f"{'' if has_dir else scratch + '/'}file{n + i}" for i in range(len(parts)))
        n += len(parts)
    elif k == "directory":
        value = scratch
    elif k in ("size", "filesize", "io_size", "io_limit"):
        sized |= k == "filesize"
        if not value.endswith("%"):
            parts = value.split("-")
            b = [size_bytes(p) for p in parts]
            if any(x is None or x > limit for x in b):
                value = small
    elif k in ("fill_device", "fill_fs"):
        # Writing until the filesystem is full is a size too, and the disk is shared.
        value = "0"
    elif k in ("runtime", "timeout", "ramp_time", "startdelay"):
        t = time_us(value)
        if t is None or t > 1e6:
            value = "1s"
    out.append(f"{pre}{key}{eq}{value}{rest}")
if not sized:
    out = ["[global]", f"size={small}"] + out
print("\n".join(out))
PY
  # Which jobs are bounded by a size or a count: not time_based, in their section or a [global]
  # before it (time_based=0 turns it off).
  python3 - "$d/job.fio" >"$d/bounded" <<'PY'
import re, sys
TIME_MS = {"d": 86400e3, "h": 3600e3, "m": 60e3, "s": 1e3, "ms": 1, "msec": 1, "us": 1e-3, "usec": 1e-3, "": 1e3}
def ms(v):
    m = re.fullmatch(r"(\d+)\s*([a-z]*)", v, re.I)
    return int(m.group(1)) * TIME_MS.get(m.group(2).lower(), 1e3) if m else 0
tb_global, rt_global, section, tb, rt, name, jobs = False, 0, None, False, 0, None, {}
def close():
    if section and section != "global":
        b, r = jobs.get(name or section, (True, 0))
        jobs[name or section] = (b and not tb, max(r, rt))
for line in open(sys.argv[1]):
    s = re.sub(r"[;#].*", "", line).strip()
    h = re.fullmatch(r"\[(.+)\]", s)
    if h:
        close()
        section, name = h.group(1), None
        tb, rt = tb_global, rt_global
        continue
    m = re.fullmatch(r"(\w+)\s*(?:=\s*(.*))?", s)
    if not m or section is None:
        continue
    key, value = m.group(1).lower(), (m.group(2) or "").strip()
    if key == "time_based":
        on = value in ("", "1", "true", "on")
        if section == "global":
            tb_global = on
        tb = on
    elif key in ("runtime", "timeout"):
        if section == "global":
            rt_global = ms(value)
        rt = ms(value)
    elif key == "name" and section != "global":
        name = value
close()
for job, (bounded, runtime) in jobs.items():
    print(f"{job}\t{int(bounded)}\t{runtime:.0f}")
PY
  rc=0
  (cd "$d/run" && ulimit -f "$file_kib" && timeout -k 10 "$limit" fio --output-format=json --output="$d/fio.json" "$d/job.fio" \
    >"$d/fio.out" 2>"$d/fio.err") 2>/dev/null || rc=$?
  echo "$rc" >"$d/fio.rc"
  # With io_submit_mode=offload fio's job processes start sessions of their own, out of timeout's
  # reach: end those of this run, named by its own output file.
  pgrep -f -- "--output=$d/fio.json" | xargs -r kill -9 2>/dev/null || true
  rm -rf "$d/run" && mkdir "$d/run"
  rc=0
  (cd "$d/run" && ulimit -f "$file_kib" && timeout -k 10 "$limit" "$bin" run "$d/job.fio" --output-format=json \
    --output-file="$d/nvb.json" >"$d/nvb.out" 2>"$d/nvb.err") 2>/dev/null || rc=$?
  echo "$rc" >"$d/nvb.rc"
  rm -rf "$d/run"
done

python3 - "$work" "${examples[@]}" <<'PY'
import json, os, sys
work, examples = sys.argv[1], sys.argv[2:]
def load(path):
    try:
        text = open(path).read()
        return json.loads(text[text.index("{"):])
    except (OSError, ValueError):
        return None
def totals(doc):
    t = {}
    for j in doc.get("jobs", []):
        s = t.setdefault(j["jobname"], [0, 0, 0])
        for i, d in enumerate(("read", "write", "trim")):
            s[i] += j.get(d, {}).get("total_ios", 0)
    return t
def runtimes(doc):
    """Each job's longest direction's runtime (ms), over its clones."""
    t = {}
    for j in doc.get("jobs", []):
        r = max(j.get(d, {}).get("runtime", 0) for d in ("read", "write", "trim"))
        t[j["jobname"]] = max(t.get(j["jobname"], 0), r)
    return t
def last_line(path):
    lines = [l for l in open(path).read().splitlines() if l.strip() and "note:" not in l]
    return lines[-1] if lines else ""
ran_fio = ran_nvb = 0
rows = []
for ex in examples:
    name = os.path.basename(ex)[:-4]
    d = os.path.join(work, name)
    fio_rc = int(open(f"{d}/fio.rc").read())
    fio_doc = load(f"{d}/fio.json") if fio_rc == 0 else None
    if fio_doc is None:
        # 124: timeout's SIGTERM ended it; 137: its SIGKILL, 10 s later.
        why = "timed out" if fio_rc in (124, 137) else f"failed (exit {fio_rc})"
        rows.append((name, f"fio {why}", "-", "-"))
        continue
    ran_fio += 1
    nvb_rc = int(open(f"{d}/nvb.rc").read())
    nvb_doc = load(f"{d}/nvb.json") if nvb_rc in (0, 1) else None
    if nvb_doc is None:
        what = "refused: " if nvb_rc == 2 else f"failed (exit {nvb_rc}): "
        rows.append((name, "ran", what + last_line(f"{d}/nvb.err"), "-"))
        continue
    ran_nvb += 1
    bounded = {l.split("\t")[0]: l.rstrip("\n").split("\t")[1:] for l in open(f"{d}/bounded")}
    f, n = totals(fio_doc), totals(nvb_doc)
    f_ms, n_ms = runtimes(fio_doc), runtimes(nvb_doc)
    checks = []
    for job, (b, runtime_ms) in bounded.items():
        if b != "1" or job not in f:
            continue
        # A job cut by its runtime (capped at 1 s here) did not end by its size or count.
        cut = int(runtime_ms) and max(f_ms.get(job, 0), n_ms.get(job, 0)) >= int(runtime_ms) * 0.95
        if cut:
            checks.append(f"{job} ended at its runtime")
        elif f[job] == n.get(job):
            checks.append(f"{job} equal")
        else:
            checks.append(f"{job} fio r/w/t {'/'.join(map(str, f[job]))} nvmebench {'/'.join(map(str, n.get(job, ['-'])))}")
    ran = "ran" if nvb_rc == 0 else "ran (I/O errors)"
    rows.append((name, "ran", ran, "; ".join(checks) or "time_based only"))
w = max(len(r[0]) for r in rows)
print(f"{'example':{w}} | fio | nvmebench | I/O counts of bounded jobs")
for r in rows:
    print(f"{r[0]:{w}} | {r[1]} | {r[2]} | {r[3]}")
pct = 100 * ran_nvb / ran_fio if ran_fio else 0
print(f"{ran_fio} of {len(examples)} examples fio runs here, nvmebench runs {ran_nvb} ({pct:.0f}%)")
PY
if [ -n "$keep" ]; then
  mkdir -p "$keep"
  cp -r "$work"/. "$keep"/
fi

#!/usr/bin/env bash
# Longer fuzzing of the files users pass around (tests/integration/fuzz/files.rs): job files with
# their includes and variables, result documents read by report and merge, verify-state files,
# suite profiles and, with the spdk feature, SPDK transport IDs. The test suite runs a fixed number
# of cases per target from a fixed seed; this runs --cases per target from a fresh seed, printed
# so that a failure can be repeated.
set -eu

usage() {
  cat <<USAGE
Usage: $0 [--cases N] [--seed S] [--target NAME]

Runs the fuzz targets of tests/integration/fuzz/files.rs in a release build with N cases each
(default 20000; the suite runs 500 to 3000) drawn from seed S (default: a random one, printed).
NAME picks the targets whose test name contains it (job_files, result_documents, verify_state,
profiles, transport_ids, ...). The spdk feature, and so the transport ID target, is built when
scripts/spdk-found.sh finds an installed SPDK. Every case must end in an answer or one sentence
within 10 s and 64 MiB; the refused inputs (a twentieth of the cases) also go through the binary,
which must exit with status 2, print one line and write nothing. It keeps both cores busy: on a
shared machine run it under the heavy lock (flock -o /work/notes/heavy.lock $0 ...).
USAGE
}

cases=20000
seed=""
target="fuzz::files::"
while [ $# -gt 0 ]; do
  case "$1" in
    --cases) cases="${2:?--cases takes a number}"; shift 2 ;;
    --seed) seed="${2:?--seed takes a number}"; shift 2 ;;
    --target) target="fuzz::files::${2:?--target takes a name}"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "$0: unknown option '$1'; see --help" >&2; exit 2 ;;
  esac
done
case "$cases" in ''|*[!0-9]*) echo "$0: --cases '$cases' is not a whole number; write e.g. --cases 20000" >&2; exit 2 ;; esac
if [ -z "$seed" ]; then
  seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
fi
case "$seed" in *[!0-9]*) echo "$0: --seed '$seed' is not a whole number; write e.g. --seed 30" >&2; exit 2 ;; esac

cd "$(dirname "$0")/.."
# shellcheck source=scripts/spdk-found.sh
. scripts/spdk-found.sh
features=()
if spdk_found 2>/dev/null; then
  features=(--features spdk)
fi

echo "fuzzing $target with $cases cases per target from seed $seed${features[*]:+ (spdk feature)}"
echo "repeat with: $0 --cases $cases --seed $seed"
start=$(date +%s)
NVMEBENCH_FUZZ_CASES="$cases" NVMEBENCH_FUZZ_SEED="$seed" \
  cargo test --release "${features[@]}" --test integration "$target" -- --nocapture
echo "done in $(( $(date +%s) - start )) s: $cases cases per target from seed $seed, no failure"

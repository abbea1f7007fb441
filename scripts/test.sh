#!/usr/bin/env bash
# The whole test suite: formatting, lints, unit and integration tests, shell checks, and at the end
# a list of what ran and what skipped, with the reasons (scripts/test-summary.sh).
# Tests that need something this machine lacks (root, loop devices, io_uring, SPDK, QEMU) say
# "skipped: <why>" through the tests' one skip helper (tests/support/skip.rs), which records it.
# Under CI=true a skip of anything CI installs fails the run; see --help.
set -eu

usage() {
  cat <<USAGE
Usage: $0 [--no-lint]

Runs cargo fmt --check, cargo clippy -D warnings, cargo test over the workspace (with the spdk
feature when an installed SPDK is found: SPDK_DIR, or pkg-config's path), and shellcheck on the
scripts; then lists every test that ran and every skip with its reason. --no-lint runs the tests
alone.

Under CI=true, a skip of something CI provides (shellcheck, SPDK, root, loop devices, io_uring,
the QEMU testbed, vfio-user, chromium, nvme-cli, fio and fio-plot, mkfs programs, fonts) fails
the run; NVMEBENCH_CI_MAY_SKIP=name,... (names as the summary prints them) lets a machine known
to lack some of them skip those. Skips CI does not promise to avoid (a real NVMe drive, a second
core, the host kernel's features) are listed and never fail. NVMEBENCH_SKIP_LOG names the file
skips are recorded in (a temporary one by default).
USAGE
}

lint=1
while [ $# -gt 0 ]; do
  case "$1" in
    --no-lint) lint=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "$0: unknown option '$1'; see --help" >&2; exit 2 ;;
  esac
done

cd "$(dirname "$0")/.."
# shellcheck source=scripts/spdk-found.sh
. scripts/spdk-found.sh

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -z "${NVMEBENCH_SKIP_LOG:-}" ]; then
  export NVMEBENCH_SKIP_LOG="$work/skips"
fi
: >>"$NVMEBENCH_SKIP_LOG"

# A skip of this script's own (a missing tool), recorded as the tests' helper records theirs.
script_skip() { # need why
  local verdict=allowed
  if [ "${CI:-}" = true ] && ! printf ',%s,' "${NVMEBENCH_CI_MAY_SKIP:-}" | tr -d ' ' | grep -q ",$1,"; then
    verdict=required
  fi
  echo "skipped: $2"
  printf 'scripts/test.sh\t%s\t%s\t%s\t%s\n' "$1" "$1" "$verdict" "$2" >>"$NVMEBENCH_SKIP_LOG"
}

# The spdk feature (and the spdk-sys crate) build only against an installed SPDK: SPDK_DIR, or
# pkg-config's path, checked as spdk-sys's build script finds it (scripts/spdk-found.sh). With one,
# the SPDK tests run: the NVMe-oF/TCP and vfio-user targets (scripts/spdk-*-target.sh) and, where
# the testbed boots, SPDK over emulated PCIe. Without one, everything else is tested.
spdk=0
if spdk_found 2>"$work/spdk-why"; then
  spdk=1
else
  cached=$(find "${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/nvmebench" -maxdepth 3 -name spdk_nvme.pc 2>/dev/null | sort | tail -n1)
  if [ -n "${SPDK_DIR:-}" ]; then
    script_skip spdk "the spdk feature: $(cat "$work/spdk-why")"
  elif [ -n "$cached" ]; then
    script_skip spdk "the spdk feature: SPDK not found through SPDK_DIR or pkg-config; one is built at ${cached%/lib/pkgconfig/spdk_nvme.pc}: SPDK_DIR=${cached%/lib/pkgconfig/spdk_nvme.pc} $0"
  else
    script_skip spdk "the spdk feature: SPDK not installed (scripts/spdk-build.sh builds one and prints its SPDK_DIR; then SPDK_DIR=... $0)"
  fi
fi

if [ "$lint" = 1 ]; then
  cargo fmt --all -- --check
  cargo clippy --all-targets --quiet -- -D warnings
  if [ "$spdk" = 1 ]; then
    cargo clippy --workspace --all-targets --features spdk --quiet -- -D warnings
  fi
  if command -v shellcheck >/dev/null; then
    shellcheck scripts/*.sh scripts/bench/*.sh hugepages/*.sh .ci/run
  else
    script_skip shellcheck "shell checks: shellcheck not installed (apt-get install shellcheck)"
  fi
fi

# Every test binary runs even after one fails (--no-fail-fast), so the summary is whole.
features=()
[ "$spdk" = 1 ] && features=(--workspace --features spdk)
set +e
cargo test --no-fail-fast "${features[@]}" 2>&1 | tee "$work/cargo-test.log"
rc=${PIPESTATUS[0]}
set -e
echo
echo "test summary (skips recorded in $NVMEBENCH_SKIP_LOG):"
summary=0
scripts/test-summary.sh "$work/cargo-test.log" "$NVMEBENCH_SKIP_LOG" || summary=$?
if [ "$rc" != 0 ] || [ "$summary" != 0 ]; then
  [ "${CI:-}" = true ] && [ "$summary" != 0 ] &&
    echo "CI=true: the run fails: a test failed, or skipped what CI provides (see the lines above)"
  exit 1
fi

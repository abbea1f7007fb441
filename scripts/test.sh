#!/usr/bin/env bash
# The whole test suite: formatting, lints, unit and integration tests, shell checks.
# Tests that need something this machine lacks (root, loop devices, io_uring, SPDK, QEMU) print
# "skipped: <why>" and pass; everything else runs.
set -eu

usage() {
  cat <<USAGE
Usage: $0 [--no-lint]

Runs cargo fmt --check, cargo clippy -D warnings, cargo test over the workspace, and shellcheck
on the scripts (when shellcheck is installed). --no-lint runs the tests alone.
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
if [ "$lint" = 1 ]; then
  cargo fmt --all -- --check
  cargo clippy --workspace --all-targets --quiet -- -D warnings
  if command -v shellcheck >/dev/null; then
    shellcheck scripts/*.sh scripts/bench/*.sh hugepages/*.sh .ci/run
  else
    echo "skipped: shellcheck not installed (apt-get install shellcheck)"
  fi
fi
cargo test --workspace

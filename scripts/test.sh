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

# The spdk feature (and the spdk-sys crate) build only against an installed SPDK: SPDK_DIR, or
# pkg-config's path. Without one, everything else is tested and the SPDK tests say they skip. With
# one, the SPDK tests run: the NVMe-oF/TCP and vfio-user targets (scripts/spdk-*-target.sh) and,
# where the testbed boots, SPDK over emulated PCIe.
spdk=0
if [ -n "${SPDK_DIR:-}" ]; then
  export PKG_CONFIG_PATH="$SPDK_DIR/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
fi
if pkg-config --exists spdk_nvme spdk_env_dpdk 2>/dev/null; then
  spdk=1
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
    echo "skipped: shellcheck not installed (apt-get install shellcheck)"
  fi
fi
if [ "$spdk" = 1 ]; then
  cargo test --workspace --features spdk
else
  cached=$(find "${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/nvmebench" -maxdepth 3 -name spdk_nvme.pc 2>/dev/null | sort | tail -n1)
  if [ -n "$cached" ]; then
    echo "skipped: SPDK not found through SPDK_DIR or pkg-config; one is built at ${cached%/lib/pkgconfig/spdk_nvme.pc}: SPDK_DIR=${cached%/lib/pkgconfig/spdk_nvme.pc} $0"
  else
    echo "skipped: SPDK not installed (scripts/spdk-build.sh builds one and prints its SPDK_DIR; then SPDK_DIR=... $0)"
  fi
  cargo test
fi

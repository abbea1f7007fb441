#!/usr/bin/env bash
# Whether an installed SPDK can build the spdk feature, checked the way spdk-sys/build.rs finds it:
# pkg-config's modules spdk_nvme and spdk_env_dpdk, searched first in $SPDK_DIR/lib/pkgconfig. One
# check for scripts/test.sh and .ci/run, so CI never accepts an SPDK that test.sh then cannot build
# the feature with (a spdk_nvme.pc whose dependencies are missing, say).
#
# Sourced: defines spdk_found, which returns 0 when the SPDK is usable and otherwise prints why on
# stderr; it exports PKG_CONFIG_PATH with $SPDK_DIR's directory first. Run: checks once, exit 0 or 1.

spdk_found() {
  if [ -n "${SPDK_DIR:-}" ]; then
    case ":${PKG_CONFIG_PATH:-}:" in
      *":$SPDK_DIR/lib/pkgconfig:"*) ;;
      *) export PKG_CONFIG_PATH="$SPDK_DIR/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" ;;
    esac
  fi
  local why
  if why=$(pkg-config --print-errors --exists spdk_nvme spdk_env_dpdk 2>&1); then
    return 0
  fi
  echo "pkg-config finds no usable spdk_nvme and spdk_env_dpdk${SPDK_DIR:+ under SPDK_DIR=$SPDK_DIR}: $(echo "$why" | tr '\n' ' ')" >&2
  return 1
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -eu
  case "${1:-}" in
    -h|--help)
      echo "Usage: $0   (exit 0 when pkg-config finds spdk_nvme and spdk_env_dpdk, with \$SPDK_DIR/lib/pkgconfig first)"
      exit 0 ;;
    "") ;;
    *) echo "$0: takes no arguments; see --help" >&2; exit 2 ;;
  esac
  spdk_found
fi

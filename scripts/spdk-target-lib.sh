# shellcheck shell=bash
# What scripts/spdk-tcp-target.sh and scripts/spdk-vfu-target.sh share: finding an installed SPDK
# the way SPDK installs itself (its apps in PREFIX/bin, its RPC client as `spdk-rpc`), reserving
# hugepages for a target and giving them back, and stopping a target without leftovers.
# Sourced, not run; the caller defines `state` (its state file) and sets -eu.

hp=/sys/kernel/mm/hugepages/hugepages-2048kB

die() { echo "$0: $*" >&2; exit 2; }

# The SPDK install prefix: $SPDK_DIR (an install prefix or a built source tree), or the prefix of
# the spdk_nvme pkg-config module.
spdk_prefix() {
  if [ -n "${SPDK_DIR:-}" ]; then
    echo "$SPDK_DIR"
  elif pkg-config --exists spdk_nvme 2>/dev/null; then
    # SPDK's .pc files carry no prefix variable: take the parent of the library directory.
    libdir=$(pkg-config --libs-only-L spdk_nvme | sed -e 's/^ *-L//' -e 's/ .*//')
    dirname "$libdir"
  else
    die "no SPDK found; build one with scripts/spdk-build.sh and set SPDK_DIR to the prefix it prints"
  fi
}

# SPDK's app NAME under PREFIX: an install has it in bin/, a built source tree in build/bin/.
spdk_app() { # prefix name
  if [ -x "$1/bin/$2" ]; then
    echo "$1/bin/$2"
  elif [ -x "$1/build/bin/$2" ]; then
    echo "$1/build/bin/$2"
  else
    die "$1 has no $2; build SPDK with its apps: scripts/spdk-build.sh (then SPDK_DIR=the prefix it prints)"
  fi
}

# Sets rpc_cmd (an array) to SPDK's RPC client, in this order: `spdk-rpc` on the PATH (what SPDK's
# `make install` installs), the prefix's bin/spdk-rpc with the Python package pip put beside it,
# the prefix's scripts/rpc.py, and the source tree's scripts/rpc.py (where nvmf_tgt was built).
find_rpc() { # prefix nvmf_tgt
  local site tree
  if command -v spdk-rpc >/dev/null 2>&1; then
    rpc_cmd=(spdk-rpc)
    return
  fi
  if [ -x "$1/bin/spdk-rpc" ]; then
    site=$(find "$1/lib" -maxdepth 3 -type d -name site-packages -path '*/python3*' 2>/dev/null | head -n1)
    rpc_cmd=(env "PYTHONPATH=${site:+$site:}${PYTHONPATH:-}" "$1/bin/spdk-rpc")
    return
  fi
  if [ -f "$1/scripts/rpc.py" ]; then
    rpc_cmd=(python3 "$1/scripts/rpc.py")
    return
  fi
  tree=$(dirname "$(dirname "$(dirname "$(readlink -f "$2")")")")
  if [ -f "$tree/scripts/rpc.py" ]; then
    rpc_cmd=(python3 "$tree/scripts/rpc.py")
    return
  fi
  die "no SPDK RPC client found (spdk-rpc on the PATH, $1/bin/spdk-rpc or $1/scripts/rpc.py); install it with scripts/spdk-build.sh, or 'make install' in SPDK's tree"
}

# Makes sure WANT 2 MiB pages are free and hugetlbfs is mounted; sets orig_pages and mounted (for
# the caller's state file, read back by give_back_hugepages).
# shellcheck disable=SC2034
reserve_hugepages() { # want
  orig_pages=$(cat "$hp/nr_hugepages")
  if [ "$(cat "$hp/free_hugepages")" -lt "$1" ]; then
    echo $((orig_pages + $1)) >"$hp/nr_hugepages"
    if [ "$(cat "$hp/free_hugepages")" -lt "$1" ]; then
      echo "$orig_pages" >"$hp/nr_hugepages"
      die "the kernel could not provide $1 free 2 MiB hugepages (memory fragmented?); free memory or reserve them at boot (hugepages=1024 on the kernel command line)"
    fi
  fi
  mounted=0
  if ! grep -q ' hugetlbfs ' /proc/mounts; then
    mkdir -p /dev/hugepages && mount -t hugetlbfs nodev /dev/hugepages && mounted=1
  fi
}

# Gives back only what reserve_hugepages added, and only once those pages are free again.
give_back_hugepages() { # orig_pages mounted
  if [ "$(cat "$hp/free_hugepages")" = "$(cat "$hp/nr_hugepages")" ]; then
    echo "$1" >"$hp/nr_hugepages"
  fi
  if [ "$2" = 1 ] && [ "$1" = 0 ]; then
    if umount /dev/hugepages 2>/dev/null; then rmdir /dev/hugepages 2>/dev/null || true; fi
  fi
}

# Ends a target: TERM, then KILL after 5 s; then removes the hugepage files DPDK may have left
# (spdk_pid<PID>*, in every hugetlbfs mount) once the process is gone.
stop_target() { # pid
  if kill -0 "$1" 2>/dev/null; then
    kill -TERM "$1"
    for _ in $(seq 1 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$1" 2>/dev/null || true
    for _ in $(seq 1 20); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  fi
  awk '$3 == "hugetlbfs" { print $2 }' /proc/mounts | while read -r m; do
    rm -f "$m/spdk_pid$1"map_* "$m/spdk_pid$1"
  done
}

# Waits for the target's RPC socket; on failure stops what started and says where the log is.
wait_for_rpc_socket() { # pid sock log
  for _ in $(seq 1 100); do [ -S "$2" ] && return 0; kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  "$0" stop >/dev/null 2>&1 || true
  die "nvmf_tgt did not start; see $3"
}

# Runs one RPC on the target; a failure stops the target and names the call that failed.
target_rpc() { # sock log method [args...]
  local sock=$1 log=$2
  shift 2
  if ! "${rpc_cmd[@]}" -s "$sock" "$@" >/dev/null 2>>"$log"; then
    "$0" stop >/dev/null 2>&1 || true
    die "the target refused '$*' (see $log)"
  fi
}

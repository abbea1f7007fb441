#!/usr/bin/env bash
# Starts or stops an SPDK NVMe-oF/TCP target on 127.0.0.1 backed by a RAM disk (malloc bdev): a real
# NVMe controller for the SPDK engine on machines without NVMe hardware. Uses an SPDK installed on
# this machine (it builds nothing): $SPDK_DIR, or the prefix pkg-config reports for spdk_nvme.
set -eu

usage() {
  cat <<USAGE
Usage: $0 start [--size MIB] [--block BYTES] [--core N] [--port PORT] [--nqn NQN]
       $0 stop
       $0 trid

start   reserves 2 MiB hugepages if needed (1 GiB for target and initiator), mounts hugetlbfs if it
        is not, starts nvmf_tgt on --core (default: the last CPU) with a --size MiB malloc namespace
        (default 256, --block 4096-byte blocks), listening on 127.0.0.1:--port (default 4420), and
        prints the transport ID to pass to nvmebench --trid.
stop    stops the target and gives back the hugepages and mount that start set up.
trid    prints the transport ID of the running target.

Needs an installed SPDK: set SPDK_DIR to its prefix or put its lib/pkgconfig in PKG_CONFIG_PATH.
NVMEBENCH_TGT_STATE (default /tmp/nvmebench-spdk-tgt.state) names the state file, so that several
targets (on different --port and --core) can run at once.
USAGE
}

state=${NVMEBENCH_TGT_STATE:-/tmp/nvmebench-spdk-tgt.state}
hp=/sys/kernel/mm/hugepages/hugepages-2048kB

die() { echo "$0: $*" >&2; exit 2; }

spdk_prefix() {
  if [ -n "${SPDK_DIR:-}" ]; then
    echo "$SPDK_DIR"
  elif pkg-config --exists spdk_nvme 2>/dev/null; then
    # SPDK's .pc files carry no prefix variable: take the parent of the library directory.
    libdir=$(pkg-config --libs-only-L spdk_nvme | sed -e 's/^ *-L//' -e 's/ .*//')
    dirname "$libdir"
  else
    die "no SPDK found; set SPDK_DIR to the prefix SPDK was installed to (or add its lib/pkgconfig to PKG_CONFIG_PATH)"
  fi
}

cmd=${1:-}
[ -n "$cmd" ] || { usage >&2; exit 2; }
shift

size=256 block=4096 port=4420 nqn=nqn.2016-06.io.spdk:nvmebench core=""
while [ $# -gt 0 ]; do
  case "$1" in
    --size) size=$2; shift 2 ;;
    --block) block=$2; shift 2 ;;
    --core) core=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --nqn) nqn=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1'; see --help" ;;
  esac
done

trid() { echo "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$1 subnqn:$2"; }

case "$cmd" in
  -h|--help) usage; exit 0 ;;
  trid)
    [ -f "$state" ] || die "no target is running (no $state); run '$0 start'"
    # shellcheck disable=SC1090
    . "$state"
    trid "$port" "$nqn"
    ;;
  start)
    [ -f "$state" ] && die "a target is already running ($state); run '$0 stop' first"
    case "$size$block$port" in *[!0-9]*) die "--size, --block and --port take whole numbers" ;; esac
    prefix=$(spdk_prefix)
    tgt="$prefix/bin/nvmf_tgt"
    rpc="$prefix/scripts/rpc.py"
    [ -x "$tgt" ] || die "$tgt is missing; install SPDK with its apps"
    [ -f "$rpc" ] || rpc="$(dirname "$(readlink -f "$tgt")")/../scripts/rpc.py"
    [ -f "$rpc" ] || die "cannot find SPDK's rpc.py next to $tgt; copy scripts/ and python/ from SPDK's tree to $prefix"
    [ -n "$core" ] || core=$(( $(nproc) - 1 ))
    orig_pages=$(cat "$hp/nr_hugepages")
    want=512
    if [ "$(cat "$hp/free_hugepages")" -lt "$want" ]; then
      echo $(( orig_pages + want )) > "$hp/nr_hugepages"
      if [ "$(cat "$hp/free_hugepages")" -lt "$want" ]; then
        echo "$orig_pages" > "$hp/nr_hugepages"
        die "the kernel could not provide $want free 2 MiB hugepages (memory fragmented?); free memory or reserve them at boot (hugepages=1024 on the kernel command line)"
      fi
    fi
    mounted=0
    if ! grep -q ' hugetlbfs ' /proc/mounts; then
      mkdir -p /dev/hugepages && mount -t hugetlbfs nodev /dev/hugepages && mounted=1
    fi
    sock="${state%.state}.sock"
    rm -f "$sock"
    export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    log="${state%.state}.log"
    # --disable-cpumask-locks: several targets (tests, a user's own) may share a core.
    "$tgt" -m "[$core]" -s 256 --no-pci --disable-cpumask-locks -r "$sock" >"$log" 2>&1 &
    pid=$!
    cat >"$state" <<STATE
pid=$pid
orig_pages=$orig_pages
mounted=$mounted
port=$port
nqn=$nqn
sock=$sock
STATE
    for _ in $(seq 1 100); do [ -S "$sock" ] && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if ! [ -S "$sock" ]; then
      "$0" stop >/dev/null 2>&1 || true
      die "nvmf_tgt did not start; see $log"
    fi
    r() { python3 "$rpc" -s "$sock" "$@" >/dev/null; }
    r framework_wait_init
    r nvmf_create_transport -t TCP
    r bdev_malloc_create -b Malloc0 "$size" "$block"
    r nvmf_create_subsystem "$nqn" -a -s NVMEBENCH0001 -d "nvmebench malloc"
    r nvmf_subsystem_add_ns "$nqn" Malloc0
    r nvmf_subsystem_add_listener "$nqn" -t tcp -a 127.0.0.1 -s "$port"
    trid "$port" "$nqn"
    ;;
  stop)
    [ -f "$state" ] || { echo "no target is running"; exit 0; }
    # shellcheck disable=SC1090
    . "$state"
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid"
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$sock"
    # Give back only what start added, and only once those pages are free again.
    if [ "$(cat "$hp/free_hugepages")" = "$(cat "$hp/nr_hugepages")" ]; then
      echo "$orig_pages" > "$hp/nr_hugepages"
    fi
    if [ "$mounted" = 1 ] && [ "$orig_pages" = 0 ]; then
      if umount /dev/hugepages 2>/dev/null; then rmdir /dev/hugepages 2>/dev/null || true; fi
    fi
    rm -f "$state"
    echo "stopped"
    ;;
  *) die "unknown command '$cmd'; use start, stop or trid (see --help)" ;;
esac

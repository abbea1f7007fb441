#!/usr/bin/env bash
# Starts or stops an SPDK NVMe-oF/TCP target on 127.0.0.1 backed by a RAM disk (malloc bdev): a real
# NVMe controller for the SPDK engine on machines without NVMe hardware. Uses an SPDK installed on
# this machine (it builds nothing; scripts/spdk-build.sh does): $SPDK_DIR, or the prefix pkg-config
# reports for spdk_nvme. SPDK's RPC client is `spdk-rpc` on the PATH, or the prefix's.
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

Needs an installed SPDK (scripts/spdk-build.sh builds one): set SPDK_DIR to its prefix or put its
lib/pkgconfig in PKG_CONFIG_PATH. The RPC client is spdk-rpc on the PATH, else SPDK_DIR's.
NVMEBENCH_TGT_STATE (default /tmp/nvmebench-spdk-tgt.state) names the state file, so that several
targets (on different --port and --core) can run at once.
USAGE
}

state=${NVMEBENCH_TGT_STATE:-/tmp/nvmebench-spdk-tgt.state}
# shellcheck source=scripts/spdk-target-lib.sh
. "$(dirname "$0")/spdk-target-lib.sh"

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
    tgt=$(spdk_app "$prefix" nvmf_tgt)
    find_rpc "$prefix" "$tgt"
    [ -n "$core" ] || core=$(( $(nproc) - 1 ))
    reserve_hugepages 512
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
    wait_for_rpc_socket "$pid" "$sock" "$log"
    r() { target_rpc "$sock" "$log" "$@"; }
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
    stop_target "$pid"
    rm -f "$sock"
    give_back_hugepages "$orig_pages" "$mounted"
    rm -f "$state"
    echo "stopped"
    ;;
  *) die "unknown command '$cmd'; use start, stop or trid (see --help)" ;;
esac

#!/usr/bin/env bash
# Starts or stops an SPDK NVMe target over vfio-user: nvmf_tgt with the VFIOUSER transport emulates
# an NVMe PCI controller whose queues and data live in the initiator's shared hugepage memory, the
# fastest controller this machine can offer without NVMe hardware (no network stack, no kernel).
# Namespace: a null bdev (reads return zeroes, writes are dropped) or a RAM disk (--malloc). Uses an
# installed SPDK built --with-vfio-user (scripts/spdk-build.sh --vfio-user-source PATH).
set -eu

usage() {
  cat <<USAGE
Usage: $0 start [--size MIB | --malloc MIB] [--block BYTES] [--core N] [--dir DIR] [--nqn NQN]
       $0 stop
       $0 trid

start   reserves 2 MiB hugepages if needed (1 GiB for target and initiator), mounts hugetlbfs if it
        is not, starts nvmf_tgt on --core (default: the last CPU) with one namespace: a --size MiB
        null bdev (default 1024; no data is kept) or, with --malloc, a RAM disk of that many MiB
        (data is kept: for writes with --verify), --block 4096-byte blocks; listens in --dir
        (default: the state file's name with .d, e.g. /tmp/nvmebench-spdk-vfu.d) and prints the
        transport ID to pass to nvmebench --trid.
stop    stops the target; removes its listener directory, RPC socket and any hugepage files, and
        gives back the hugepages and mount that start set up.
trid    prints the transport ID of the running target.

Needs an SPDK built --with-vfio-user: set SPDK_DIR to its prefix or put its lib/pkgconfig in
PKG_CONFIG_PATH. The RPC client is spdk-rpc on the PATH, else SPDK_DIR's.
NVMEBENCH_VFU_STATE (default /tmp/nvmebench-spdk-vfu.state) names the state file, so that several
targets (on different --dir and --core) can run at once.
USAGE
}

state=${NVMEBENCH_VFU_STATE:-/tmp/nvmebench-spdk-vfu.state}
# shellcheck source=scripts/spdk-target-lib.sh
. "$(dirname "$0")/spdk-target-lib.sh"

cmd=${1:-}
[ -n "$cmd" ] || { usage >&2; exit 2; }
shift

size=1024 malloc="" block=4096 dir="" nqn=nqn.2019-07.io.spdk:nvmebench-vfu core=""
while [ $# -gt 0 ]; do
  case "$1" in
    --size) size=${2:?--size needs MiB}; shift 2 ;;
    --malloc) malloc=${2:?--malloc needs MiB}; shift 2 ;;
    --block) block=${2:?--block needs bytes}; shift 2 ;;
    --core) core=${2:?--core needs a CPU number}; shift 2 ;;
    --dir) dir=${2:?--dir needs a directory}; shift 2 ;;
    --nqn) nqn=${2:?--nqn needs an NQN}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1'; see --help" ;;
  esac
done

trid() { echo "trtype:VFIOUSER traddr:$1 subnqn:$2"; }

case "$cmd" in
  -h|--help) usage; exit 0 ;;
  trid)
    [ -f "$state" ] || die "no target is running (no $state); run '$0 start'"
    # shellcheck disable=SC1090
    . "$state"
    trid "$dir" "$nqn"
    ;;
  start)
    [ -f "$state" ] && die "a target is already running ($state); run '$0 stop' first"
    case "$size$malloc$block${core:-0}" in *[!0-9]*) die "--size, --malloc, --block and --core take whole numbers" ;; esac
    [ -n "$dir" ] || dir="${state%.state}.d"
    case "$dir" in /*) ;; *) dir="$PWD/$dir" ;; esac
    # The initiator connects to DIR/cntrl, a Unix socket: its path must fit in sun_path.
    [ "${#dir}" -le 100 ] || die "--dir '$dir' is too long for a Unix socket path (at most 100 characters)"
    prefix=$(spdk_prefix)
    tgt=$(spdk_app "$prefix" nvmf_tgt)
    # The vfio-user transport links libvfio-user; an SPDK built without it has no such reference.
    nvmf_lib=$(find "$prefix/lib" "$prefix/build/lib" -maxdepth 1 -name 'libspdk_nvmf.so*' 2>/dev/null | head -n1)
    if [ -n "$nvmf_lib" ] && ! grep -q 'libvfio-user\.so' "$nvmf_lib"; then
      die "this SPDK ($prefix) was built without vfio-user; rebuild it with scripts/spdk-build.sh --vfio-user-source PATH (libvfio-user's sources)"
    fi
    find_rpc "$prefix" "$tgt"
    [ -n "$core" ] || core=$(( $(nproc) - 1 ))
    created=0
    if [ -e "$dir" ]; then
      [ -d "$dir" ] || die "--dir '$dir' exists and is not a directory"
      [ -e "$dir/cntrl" ] && die "$dir already has a vfio-user socket (cntrl): another target listens there; stop it or pick --dir"
    else
      mkdir -p "$dir"
      created=1
    fi
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
dir=$dir
created=$created
nqn=$nqn
sock=$sock
STATE
    wait_for_rpc_socket "$pid" "$sock" "$log"
    r() { target_rpc "$sock" "$log" "$@"; }
    r framework_wait_init
    r nvmf_create_transport -t VFIOUSER
    if [ -n "$malloc" ]; then
      r bdev_malloc_create -b Malloc0 "$malloc" "$block"
      bdev=Malloc0 model="nvmebench vfu malloc"
    else
      r bdev_null_create Null0 "$size" "$block"
      bdev=Null0 model="nvmebench vfu null"
    fi
    r nvmf_create_subsystem "$nqn" -a -s NVMEBENCHVFU01 -d "$model"
    r nvmf_subsystem_add_ns "$nqn" "$bdev"
    r nvmf_subsystem_add_listener "$nqn" -t VFIOUSER -a "$dir" -s 0
    trid "$dir" "$nqn"
    ;;
  stop)
    [ -f "$state" ] || { echo "no target is running"; exit 0; }
    # shellcheck disable=SC1090
    . "$state"
    stop_target "$pid"
    rm -f "$sock"
    # The transport leaves its socket (cntrl) and BAR file (bar0) in the listener directory.
    rm -f "$dir/cntrl" "$dir/bar0"
    if [ "$created" = 1 ]; then rmdir "$dir" 2>/dev/null || true; fi
    give_back_hugepages "$orig_pages" "$mounted"
    rm -f "$state"
    echo "stopped"
    ;;
  *) die "unknown command '$cmd'; use start, stop or trid (see --help)" ;;
esac

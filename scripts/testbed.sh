#!/usr/bin/env bash
# A real NVMe controller for every developer: boots a QEMU guest with emulated NVMe controllers
# (virtme-ng, Debian's kernel, the host's own userspace read-only, so the freshly built binary, fio
# and an SPDK under /opt/spdk work inside), runs one command there and returns its exit status.
# Nothing on the host is touched but the sparse backing files in a temporary directory.
set -eu
set -o pipefail

usage() {
  cat <<USAGE
Usage: $0 [OPTIONS] [--] COMMAND [ARG...]
       $0 --install | --check

Boots a guest with emulated NVMe controllers, runs COMMAND in it as root, passes its output
through and exits with its status. A single COMMAND argument is a shell command line
('fio ... && nvmebench ...'); several are one command and its arguments. The guest sees the host's
files read-only (writes go to a throw-away overlay) and has no network.

Devices: controller K (0-based) is at PCI 0000:00:1K.0 with namespaces /dev/nvmeKn1...; each
namespace is a sparse raw file with 4 KiB logical blocks.

Options:
  --nvme N          emulated controllers, 1 to 8 (default 1)
  --namespaces N    namespaces per controller, 1 to 8 (default 1)
  --size SIZE       size of each namespace, e.g. 512M, 4G (default 1G)
  --queues N        I/O queue pairs per controller (default 4)
  --iommu           emulated Intel IOMMU (intel_iommu=on iommu=pt in the guest), so vfio-pci works
  --hugepages N     reserve N 2 MiB hugepages in the guest and mount hugetlbfs at /dev/hugepages
                    (256 are enough for SPDK; each 1024 cost about 9 s of boot under TCG)
  --bind DRIVER     bind every emulated controller to vfio-pci (needs --iommu) or uio_pci_generic
                    before COMMAND, with scripts/nvme-bind.sh
  --qmp             let COMMAND change the emulated hardware while it runs: 'testbed-qmp JSON' (on
                    the guest's PATH) hands one QMP command to this guest's QEMU, prints QEMU's
                    answer and exits 0 on a return, 1 on an error. Controller K is the QOM path
                    /machine/peripheral/nvmeK; its smart_critical_warning property sets the health
                    log's critical warning bits (2: temperature), as a drive would, whoever owns it
  --append PARAMS   extra guest kernel parameters, e.g. 'nvme.poll_queues=2' (may be repeated)
  --cpus N          guest CPUs (default 2)
  --memory MIB      guest memory in MiB (default 2048, raised to fit the hugepages)
  --accel A         auto (default), kvm or tcg. auto uses KVM only where it can boot a stock kernel
                    (not the paravirtual kvm_pvm) and falls back to TCG, QEMU's emulation (slow).
                    Under TCG the guest keeps time with the TSC (tsc=reliable): its vCPUs read
                    the host's TSC, but the emulated CPU does not say so, and Linux would use the
                    emulated HPET, whose every read (clock_gettime included) takes about 10 us
  --kernel PATH     guest kernel (default: the newest /boot/vmlinuz-* with modules in /lib/modules)
  --rwdir DIR       share an existing host directory read-write with the guest (may be repeated)
  --timeout SECS    stop the guest after SECS seconds, exit 124 (default 900)
  --dry-run         print the virtme-ng command, boot nothing
  --install         install what the testbed needs (qemu-system-x86, linux-image-amd64,
                    busybox-static, kmod, nvme-cli via apt-get; virtme-ng via pip), then exit
  --check           exit 0 if the testbed can boot here, else print why and exit 3
  -h, --help        this text

Exit status: COMMAND's, 2 bad usage, 3 the testbed cannot run here, 124 timed out,
125 the guest set-up (hugepages, bind) failed.

Examples:
  $0 --size 4G -- target/release/nvmebench run --filename /dev/nvme0n1 --time 10
  $0 --append nvme.poll_queues=2 'fio --name=p --filename=/dev/nvme0n1 --ioengine=io_uring --hipri --direct=1 --rw=randread --iodepth=32 --runtime=10 --time_based'
  $0 --qmp -- bash -c 'testbed-qmp "\$1" && nvme smart-log /dev/nvme0' - '{"execute": "qom-set", "arguments": {"path": "/machine/peripheral/nvme0", "property": "smart_critical_warning", "value": 2}}'
  $0 --iommu --hugepages 256 --bind vfio-pci -- /opt/spdk/bin/spdk_nvme_perf -q 32 -o 4096 -w randread -t 10 -r 'trtype:PCIe traddr:0000:00:10.0'
USAGE
}

die() { echo "$0: $1" >&2; exit "${2:-2}"; }

whole() {
  case "$2" in ''|*[!0-9]*) die "$1 '$2' is not a whole number; $3" ;; esac
  if [ "$2" -lt "$4" ] || [ "$2" -gt "$5" ]; then die "$1 '$2' is out of range; $3"; fi
}

here=$(cd "$(dirname "$0")/.." && pwd)
nvme=1 nsper=1 size=1G queues=4 iommu=0 hugepages=0 bind="" qmp=0 cpus=2 memory="" accel=auto kernel=""
timeout_s=900 dry=0 mode=run
appends=() rwdirs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --nvme) [ $# -ge 2 ] || die "--nvme needs a number"; nvme=$2; shift 2 ;;
    --namespaces) [ $# -ge 2 ] || die "--namespaces needs a number"; nsper=$2; shift 2 ;;
    --size) [ $# -ge 2 ] || die "--size needs a size, e.g. --size 1G"; size=$2; shift 2 ;;
    --queues) [ $# -ge 2 ] || die "--queues needs a number"; queues=$2; shift 2 ;;
    --iommu) iommu=1; shift ;;
    --hugepages) [ $# -ge 2 ] || die "--hugepages needs a page count"; hugepages=$2; shift 2 ;;
    --bind) [ $# -ge 2 ] || die "--bind needs vfio-pci or uio_pci_generic"; bind=$2; shift 2 ;;
    --qmp) qmp=1; shift ;;
    --append) [ $# -ge 2 ] || die "--append needs kernel parameters"; appends+=("$2"); shift 2 ;;
    --cpus) [ $# -ge 2 ] || die "--cpus needs a number"; cpus=$2; shift 2 ;;
    --memory) [ $# -ge 2 ] || die "--memory needs MiB"; memory=$2; shift 2 ;;
    --accel) [ $# -ge 2 ] || die "--accel needs auto, kvm or tcg"; accel=$2; shift 2 ;;
    --kernel) [ $# -ge 2 ] || die "--kernel needs a path"; kernel=$2; shift 2 ;;
    --rwdir) [ $# -ge 2 ] || die "--rwdir needs a directory"; rwdirs+=("$2"); shift 2 ;;
    --timeout) [ $# -ge 2 ] || die "--timeout needs seconds"; timeout_s=$2; shift 2 ;;
    --dry-run) dry=1; shift ;;
    --install) mode=install; shift ;;
    --check) mode=check; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    -*) die "unknown option '$1'; see --help" ;;
    *) break ;;
  esac
done

# --- prerequisites ---------------------------------------------------------------------------

newest_kernel() {
  local k v best=""
  for k in /boot/vmlinuz-*; do
    v=${k#/boot/vmlinuz-}
    [ -r "$k" ] && [ -d "/lib/modules/$v/kernel" ] && best=$k
  done
  echo "$best"
}

# virtme-ng's launcher: on PATH, or in the scripts directory of the python3 that pip installed it
# with (a pyenv shim appears only after 'pyenv rehash').
find_vng() {
  local d
  if command -v vng 2>/dev/null; then return 0; fi
  d=$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))' 2>/dev/null) || return 1
  [ -x "$d/vng" ] && echo "$d/vng"
}

# Why the testbed cannot boot here, or nothing.
missing() {
  local why=""
  command -v qemu-system-x86_64 >/dev/null || why="$why qemu-system-x86_64 (apt-get install qemu-system-x86);"
  find_vng >/dev/null || why="$why virtme-ng (pip install virtme-ng);"
  command -v busybox >/dev/null || why="$why busybox (apt-get install busybox-static);"
  command -v modprobe >/dev/null || why="$why modprobe (apt-get install kmod);"
  if [ -n "$kernel" ]; then
    [ -r "$kernel" ] || why="$why the kernel $kernel (not readable);"
  elif [ -z "$(newest_kernel)" ]; then
    why="$why a kernel with modules (apt-get install linux-image-amd64);"
  fi
  echo "${why%;}"
}

install() {
  local pkgs=""
  command -v qemu-system-x86_64 >/dev/null || pkgs="$pkgs qemu-system-x86"
  [ -n "$(newest_kernel)" ] || pkgs="$pkgs linux-image-amd64"
  command -v busybox >/dev/null || pkgs="$pkgs busybox-static"
  command -v modprobe >/dev/null || pkgs="$pkgs kmod"
  # The guest runs the host's userspace: its admin commands (a temperature threshold lowered
  # mid-run) are the host's nvme-cli.
  command -v nvme >/dev/null || pkgs="$pkgs nvme-cli"
  if [ -n "$pkgs" ]; then
    [ "$(id -u)" = 0 ] || die "installing$pkgs needs root; run 'sudo $0 --install'" 3
    echo "testbed: installing$pkgs" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    # shellcheck disable=SC2086  # a list of package names
    apt-get install -y -qq --no-install-recommends $pkgs >/dev/null ||
      die "apt-get could not install$pkgs" 3
  fi
  if ! find_vng >/dev/null; then
    echo "testbed: installing virtme-ng (pip)" >&2
    python3 -m pip install -q virtme-ng >&2 ||
      python3 -m pip install -q --break-system-packages virtme-ng >&2 ||
      die "pip could not install virtme-ng; run 'python3 -m pip install virtme-ng'" 3
    hash -r
    if command -v pyenv >/dev/null; then pyenv rehash || true; fi
  fi
}

case "$mode" in
  install)
    install
    why=$(missing)
    [ -z "$why" ] || die "still missing after install:$why" 3
    echo "testbed: ready ($(newest_kernel))"
    exit 0 ;;
  check)
    why=$(missing)
    [ -z "$why" ] || { echo "testbed cannot run here; missing:$why (or run '$0 --install')"; exit 3; }
    echo "testbed: ready"
    exit 0 ;;
esac

# --- validate everything before anything is created --------------------------------------------

[ $# -gt 0 ] || die "no command to run in the guest; e.g. '$0 -- uname -r' (see --help)"
whole --nvme "$nvme" "use 1 to 8 controllers" 1 8
whole --namespaces "$nsper" "use 1 to 8 namespaces per controller" 1 8
whole --queues "$queues" "use 1 to 64 queue pairs" 1 64
whole --hugepages "$hugepages" "use a number of 2 MiB pages, 0 to 65536" 0 65536
whole --cpus "$cpus" "use 1 to 64 CPUs" 1 64
whole --timeout "$timeout_s" "use seconds, 1 to 86400" 1 86400
[[ $size =~ ^[0-9]+[kKmMgGtT]?$ ]] || die "--size '$size' is not a size; use a byte count or e.g. 512M, 4G"
case "$bind" in
  ''|uio_pci_generic) ;;
  vfio-pci) [ "$iommu" = 1 ] || die "--bind vfio-pci needs the emulated IOMMU (Debian's kernel has no vfio no-IOMMU mode); add --iommu or use --bind uio_pci_generic" ;;
  *) die "--bind '$bind' is not supported; use vfio-pci (with --iommu) or uio_pci_generic" ;;
esac
need_mib=$(( hugepages * 2 + 1024 ))
if [ -z "$memory" ]; then
  memory=2048
  [ "$memory" -ge "$need_mib" ] || memory=$need_mib
else
  whole --memory "$memory" "use MiB, 256 to 1048576" 256 1048576
  [ "$memory" -ge "$need_mib" ] || die "--memory $memory MiB is too small for $hugepages hugepages; give at least $need_mib"
fi
for d in "${rwdirs[@]}"; do
  [ -d "$d" ] || die "--rwdir '$d' is not an existing directory; create it first"
done
case "$accel" in auto|kvm|tcg) ;; *) die "--accel '$accel' is not supported; use auto, kvm or tcg" ;; esac

why=$(missing)
if [ -n "$why" ]; then
  if [ "$dry" = 0 ]; then install; why=$(missing); fi
  [ -z "$why" ] || die "the testbed cannot run here; missing:$why" 3
fi
[ -n "$kernel" ] || kernel=$(newest_kernel)
vng=$(find_vng)

# KVM must be a real hardware KVM: the paravirtual kvm_pvm hangs booting a stock kernel.
kvm_usable() {
  [ -r /dev/kvm ] && [ -w /dev/kvm ] && [ ! -d /sys/module/kvm_pvm ] &&
    { [ -d /sys/module/kvm_intel ] || [ -d /sys/module/kvm_amd ]; }
}
if [ "$accel" = auto ]; then
  if kvm_usable; then
    accel=kvm
  else
    accel=tcg
    if [ -d /sys/module/kvm_pvm ]; then
      echo "testbed: /dev/kvm is kvm_pvm, which cannot boot a stock kernel; using TCG (slow: about 15 s per boot)" >&2
    else
      echo "testbed: no usable /dev/kvm; using TCG (slow: about 15 s per boot)" >&2
    fi
  fi
fi

# --- the guest ---------------------------------------------------------------------------------

work=$(mktemp -d "${TMPDIR:-/var/tmp}/nvmebench-testbed.XXXXXX")
relay=""
# shellcheck disable=SC2317  # called by the trap
cleanup() {
  if [ -n "$relay" ]; then kill "$relay" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# -cpu max: SSE4.2 for SPDK/DPDK; under TCG it has AVX2 but no AVX-512.
qemu="-cpu max"
append="${appends[*]}"
if [ "$iommu" = 1 ]; then
  qemu="$qemu -machine q35,kernel-irqchip=split -device intel-iommu,intremap=on,caching-mode=on,aw-bits=48"
  append="intel_iommu=on iommu=pt $append"
fi
# Under TCG every vCPU reads the host's TSC (constant rate, one count for all vCPUs), but the
# emulated CPU does not advertise an invariant TSC, so Linux would keep time with the emulated HPET,
# where every clock read (CLOCK_MONOTONIC too: no vDSO over the HPET) is an MMIO exit of about
# 10 us. tsc=reliable lets the guest keep time with the TSC, as on real hardware.
if [ "$accel" = tcg ]; then append="tsc=reliable $append"; fi
bdfs=""
for ((c = 0; c < nvme; c++)); do
  qemu="$qemu -device nvme,id=nvme$c,serial=nvmebench$c,addr=0x1$c,max_ioqpairs=$queues"
  bdfs="$bdfs 0000:00:1$c.0"
  for ((n = 1; n <= nsper; n++)); do
    img="$work/nvme$c-ns$n.img"
    if [ "$dry" = 0 ]; then truncate -s "$size" "$img"; fi
    qemu="$qemu -drive file=$img,if=none,id=nvme$c-ns$n,format=raw,cache=none,aio=threads"
    qemu="$qemu -device nvme-ns,drive=nvme$c-ns$n,bus=nvme$c,nsid=$n,logical_block_size=4096,physical_block_size=4096"
  done
done

# --qmp: the guest drops a command into the work directory's qmp/ (shared read-write, uncached 9p,
# so each side sees the other's files at once) and the host relays it to QEMU's monitor socket.
# The guest decides when (it knows when its workload is under way); a host-side timer could not,
# as a boot under TCG takes from seconds to minutes.
if [ "$qmp" = 1 ]; then
  mkdir "$work/qmp" "$work/bin"
  qemu="$qemu -qmp unix:$work/qmp.sock,server=on,wait=off"
  cat >"$work/bin/testbed-qmp" <<GUEST
#!/bin/bash
# testbed-qmp JSON: one QMP command for the QEMU running this guest; prints QEMU's answer.
[ \$# -eq 1 ] || { echo "usage: testbed-qmp '{\"execute\": ...}'" >&2; exit 2; }
box=$work/qmp id=\$\$.\$RANDOM
printf '%s\\n' "\$1" >"\$box/\$id.tmp" && mv "\$box/\$id.tmp" "\$box/\$id.req" || exit 1
for _ in \$(seq 600); do
  if [ -e "\$box/\$id.resp" ]; then
    answer=\$(cat "\$box/\$id.resp"); echo "\$answer"
    case \$answer in '{"return"'*) exit 0 ;; *) exit 1 ;; esac
  fi
  sleep 0.1
done
echo "testbed-qmp: the host did not answer within 60 s" >&2
exit 1
GUEST
  chmod +x "$work/bin/testbed-qmp"
fi

# The guest runs this script from the work directory, shared read-write (the guest's view of the
# host's /tmp and /var is an overlay that does not show files made now, and the kernel command line
# that carries virtme-ng's --exec is too short for a long command).
guest="$work/guest.sh"
{
  echo '#!/bin/bash'
  # shellcheck disable=SC2016  # expanded in the guest
  echo 'setup_failed() { echo "testbed: guest set-up failed: $1" >&2; exit 125; }'
  # shellcheck disable=SC2016  # expanded in the guest
  if [ "$qmp" = 1 ]; then printf 'export PATH=%q:"$PATH"\n' "$work/bin"; fi
  if [ "$hugepages" -gt 0 ]; then
    printf '%q --mem %sM >&2 || setup_failed "hugepages"\n' "$here/hugepages/setup.sh" "$((hugepages * 2))"
  fi
  if [ -n "$bind" ]; then
    printf '%q bind %s --driver %q >&2 || setup_failed "bind to %s"\n' "$here/scripts/nvme-bind.sh" "${bdfs# }" "$bind" "$bind"
  fi
  if [ $# -eq 1 ]; then
    printf 'exec bash -c %q\n' "$1"
  else
    printf 'exec'
    printf ' %q' "$@"
    printf '\n'
  fi
} >"$guest"

vng_args=(--run "$kernel" --force-9p --disable-microvm --cpus "$cpus" --memory "${memory}M"
  --qemu-opts="$qemu" --rwdir "$work" --exec "bash $guest")
[ -z "$append" ] || vng_args+=(--append "$append")
[ "$accel" = kvm ] || vng_args+=(--disable-kvm)
for d in "${rwdirs[@]}"; do vng_args+=(--rwdir "$d"); done

if [ "$dry" = 1 ]; then
  printf '%q ' "$vng" "${vng_args[@]}"
  echo
  echo "# guest script:"
  cat "$guest"
  exit 0
fi

# QEMU reopens the paths of its stdout and stderr, which truncates a regular file each time: keep
# both on pipes so output redirected to a file arrives whole.
# The relay: each request file becomes one QMP session (greeting, qmp_capabilities, the command);
# asynchronous events QEMU interleaves are skipped. The answer, or why there is none, goes back as
# a file the guest waits for.
if [ "$qmp" = 1 ]; then
  python3 -c '
import json, os, socket, sys, time
box, sock = sys.argv[1], sys.argv[2]
def ask(cmd):
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(30)
        s.connect(sock)
        f = s.makefile("rw")
        json.loads(f.readline())
        for c in ({"execute": "qmp_capabilities"}, cmd):
            f.write(json.dumps(c) + "\n")
            f.flush()
            while True:
                answer = json.loads(f.readline())
                if "return" in answer or "error" in answer:
                    break
    return answer
while True:
    for name in sorted(n for n in os.listdir(box) if n.endswith(".req")):
        req = os.path.join(box, name)
        try:
            with open(req) as f:
                answer = ask(json.load(f))
        except Exception as e:
            answer = {"error": {"class": "TestbedRelay", "desc": str(e)}}
        base = req[: -len(".req")]
        with open(base + ".tmp", "w") as f:
            f.write(json.dumps(answer) + "\n")
        os.rename(base + ".tmp", base + ".resp")
        os.unlink(req)
    time.sleep(0.05)
' "$work/qmp" "$work/qmp.sock" &
  relay=$!
fi

status=0
{ timeout -k 10 "$timeout_s" "$vng" "${vng_args[@]}" </dev/null 2>&1 1>&3 3>&- | cat >&2; } 3>&1 | cat || status=$?
if [ "$status" = 124 ]; then
  echo "$0: the guest did not finish within $timeout_s s (--timeout); it was stopped" >&2
fi
exit "$status"

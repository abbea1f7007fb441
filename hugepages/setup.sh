#!/usr/bin/env bash
# Hugepages for SPDK's userspace driver: reserve 2 MiB or 1 GiB pages (in total or on one NUMA
# node), mount hugetlbfs, show what is reserved and who holds it, clear files left by crashed runs,
# and say how to make the reservation survive a reboot. Every action is idempotent.
set -eu

usage() {
  cat <<USAGE
Usage: $0 [ACTION] [--mem SIZE] [--node N] [--page-size 2M|1G] [--mount DIR] [--dry-run]

Actions:
  reserve   (default) reserve SIZE of hugepages and mount hugetlbfs at DIR
  status    per page size and NUMA node: total, free, reserved, surplus; mounts; hugepage files
            and the processes holding them
  clear     remove hugepage files in DIR that no process holds (left by crashed runs)
  release   set the reservation to 0 pages (on --node N, or on every node) and unmount DIR
  persist   print how to make the reservation permanent (sysctl, kernel command line, fstab)

Options:
  --mem SIZE        memory to reserve, e.g. 512M, 2G (default: \$HUGEMEM in MiB, else 1024M)
  --node N          reserve on NUMA node N only (default: the kernel spreads pages over nodes)
  --page-size SIZE  2M (default) or 1G
  --mount DIR       hugetlbfs mount point (default /dev/hugepages)
  --dry-run         print the commands that would change the system, change nothing
  -h, --help        this text

Exit status: 0 done, 1 the kernel could not provide the pages, 2 bad usage or not root.
USAGE
}

die() { echo "$0: $1" >&2; exit "${2:-2}"; }

action=reserve mem="" node="" page=2M mnt=/dev/hugepages dry=0
while [ $# -gt 0 ]; do
  case "$1" in
    reserve|status|clear|release|persist) action=$1; shift ;;
    --mem) [ $# -ge 2 ] || die "--mem needs a size, e.g. --mem 1G"; mem=$2; shift 2 ;;
    --mem=*) mem=${1#*=}; shift ;;
    --node) [ $# -ge 2 ] || die "--node needs a NUMA node number, e.g. --node 0"; node=$2; shift 2 ;;
    --node=*) node=${1#*=}; shift ;;
    --page-size) [ $# -ge 2 ] || die "--page-size needs 2M or 1G"; page=$2; shift 2 ;;
    --page-size=*) page=${1#*=}; shift ;;
    --mount) [ $# -ge 2 ] || die "--mount needs a directory, e.g. --mount /dev/hugepages"; mnt=$2; shift 2 ;;
    --mount=*) mnt=${1#*=}; shift ;;
    --dry-run) dry=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1'; see --help" ;;
  esac
done

# Size in MiB from "512", "512M", "2G", "1024k" (a bare number is MiB, like SPDK's HUGEMEM).
to_mib() {
  local v=$1 n unit
  n=${v%[kKmMgGtT]} unit=${v#"$n"}
  case "$n" in ''|*[!0-9]*) return 1 ;; esac
  case "$unit" in
    ''|m|M) echo "$n" ;;
    k|K) echo $(( (n + 1023) / 1024 )) ;;
    g|G) echo $(( n * 1024 )) ;;
    t|T) echo $(( n * 1024 * 1024 )) ;;
  esac
}

case "$page" in
  2M|2m|2048k|2048K|2048kB) page_kb=2048 page=2M ;;
  1G|1g|1024M|1048576kB) page_kb=1048576 page=1G ;;
  *) die "--page-size '$page' is not supported; use 2M or 1G" ;;
esac
if [ -z "$mem" ]; then
  mem=${HUGEMEM:-1024}
  memsrc="HUGEMEM"
else
  memsrc="--mem"
fi
mem_mib=$(to_mib "$mem") || die "$memsrc '$mem' is not a size; use a number of MiB or a size like 512M or 2G"
[ "$mem_mib" -gt 0 ] || [ "$action" != reserve ] || die "$memsrc '$mem' is zero; to give pages back use '$0 release'"
pages=$(( (mem_mib * 1024 + page_kb - 1) / page_kb ))

sysmm=/sys/kernel/mm/hugepages/hugepages-${page_kb}kB
if [ -n "$node" ]; then
  case "$node" in ''|*[!0-9]*) die "--node '$node' is not a node number; see /sys/devices/system/node/online" ;; esac
  [ -d "/sys/devices/system/node/node$node" ] ||
    die "NUMA node $node does not exist; this machine has nodes $(cat /sys/devices/system/node/online 2>/dev/null || echo 0)"
  nrfile=/sys/devices/system/node/node$node/hugepages/hugepages-${page_kb}kB/nr_hugepages
else
  nrfile=$sysmm/nr_hugepages
fi
if [ ! -d "$sysmm" ] && [ "$action" != persist ]; then
  if [ "$page_kb" = 1048576 ]; then
    die "this CPU or kernel has no 1 GiB hugepages (no $sysmm; the CPU needs the pdpe1gb flag); use --page-size 2M"
  fi
  die "this kernel has no hugepage support (no $sysmm); use a kernel built with CONFIG_HUGETLBFS"
fi

need_root() {
  [ "$dry" = 1 ] || [ "$(id -u)" = 0 ] || die "'$action' changes the system and needs root; run it with sudo (or add --dry-run)"
}

# Runs a command, or only prints it with --dry-run.
act() {
  if [ "$dry" = 1 ]; then
    echo "would run: $*"
  else
    "$@"
  fi
}

write_nr() {
  if [ "$dry" = 1 ]; then
    echo "would run: echo $1 > $nrfile"
  else
    echo "$1" >"$nrfile" 2>/dev/null || true
  fi
}

is_hugetlbfs_mount() {
  awk -v d="$1" '$2 == d && $3 == "hugetlbfs" { f = 1 } END { exit !f }' /proc/mounts
}

mount_opts() { echo "pagesize=$page"; }

do_mount() {
  if is_hugetlbfs_mount "$mnt"; then
    echo "hugetlbfs already mounted at $mnt"
    return
  fi
  if awk -v d="$mnt" '$2 == d { f = 1 } END { exit !f }' /proc/mounts; then
    die "$mnt is already a mount point of another filesystem; choose another --mount directory"
  fi
  act mkdir -p "$mnt"
  act mount -t hugetlbfs -o "$(mount_opts)" nodev "$mnt"
  [ "$dry" = 1 ] || echo "mounted hugetlbfs (pagesize=$page) at $mnt"
}

reserve() {
  need_root
  local have
  have=$(cat "$nrfile")
  if [ "$have" -ge "$pages" ]; then
    echo "already reserved: $have pages of $page${node:+ on node $node} (wanted $pages)"
  else
    # Compacting first gives the kernel its best chance to find contiguous memory.
    if [ "$dry" = 0 ] && [ -w /proc/sys/vm/compact_memory ]; then
      echo 1 >/proc/sys/vm/compact_memory 2>/dev/null || true
    fi
    write_nr "$pages"
    if [ "$dry" = 0 ]; then
      have=$(cat "$nrfile")
      if [ "$have" -lt "$pages" ]; then
        echo "$0: the kernel reserved only $have of $pages $page pages${node:+ on node $node}: free memory is too fragmented or too small." >&2
        echo "  Free page cache and retry: 'sync; echo 3 > /proc/sys/vm/drop_caches; $0 --mem $mem'," >&2
        echo "  ask for less (--mem), or reserve at boot (see '$0 persist')." >&2
        exit 1
      fi
      echo "reserved $have pages of $page${node:+ on node $node} ($(( have * page_kb / 1024 )) MiB)"
    fi
  fi
  do_mount
}

# Hugepage-backed files under the mount points and the processes mapping them.
show_files() {
  local mounts m f pids
  mounts=$(awk '$3 == "hugetlbfs" { print $2 }' /proc/mounts)
  if [ -z "$mounts" ]; then
    echo "hugetlbfs: not mounted (run '$0' to mount it at $mnt)"
    return
  fi
  for m in $mounts; do
    echo "hugetlbfs: mounted at $m ($(awk -v d="$m" '$2 == d { print $4 }' /proc/mounts))"
    find "$m" -type f 2>/dev/null | while read -r f; do
      pids=$(holders "$f")
      echo "  $f  $(du -k "$f" | cut -f1) KiB  held by: ${pids:-nobody (stale: $0 clear removes it)}"
    done
  done
}

# PIDs (with names) whose memory maps or open files include $1.
holders() {
  local f=$1 p l held out=""
  for p in /proc/[0-9]*; do
    held=0
    if grep -qF -- "$f" "$p/maps" 2>/dev/null; then
      held=1
    else
      for l in "$p"/fd/*; do
        if [ "$(readlink "$l" 2>/dev/null)" = "$f" ]; then held=1; break; fi
      done
    fi
    [ "$held" = 0 ] || out="$out ${p#/proc/}($(cat "$p/comm" 2>/dev/null))"
  done
  echo "${out# }"
}

status() {
  local d n kb sz
  printf '%-8s %-6s %8s %8s %8s %8s\n' size node total free reserved surplus
  for d in /sys/kernel/mm/hugepages/hugepages-*; do
    kb=${d##*hugepages-}; kb=${kb%kB}
    if [ "$kb" -ge 1048576 ]; then sz="$(( kb / 1048576 ))G"; else sz="$(( kb / 1024 ))M"; fi
    printf '%-8s %-6s %8s %8s %8s %8s\n' "$sz" all "$(cat "$d/nr_hugepages")" \
      "$(cat "$d/free_hugepages")" "$(cat "$d/resv_hugepages")" "$(cat "$d/surplus_hugepages")"
    for n in /sys/devices/system/node/node[0-9]*; do
      [ -d "$n/hugepages/hugepages-${kb}kB" ] || continue
      printf '%-8s %-6s %8s %8s %8s %8s\n' "$sz" "${n##*node}" \
        "$(cat "$n/hugepages/hugepages-${kb}kB/nr_hugepages")" "$(cat "$n/hugepages/hugepages-${kb}kB/free_hugepages")" \
        - "$(cat "$n/hugepages/hugepages-${kb}kB/surplus_hugepages")"
    done
  done
  show_files
}

clear_stale() {
  need_root
  is_hugetlbfs_mount "$mnt" || { echo "hugetlbfs is not mounted at $mnt: nothing to clear"; return; }
  local f n=0
  while read -r f; do
    [ -n "$f" ] || continue
    if [ -n "$(holders "$f")" ]; then
      echo "kept $f (in use)"
    else
      act rm -f -- "$f"
      n=$((n + 1))
    fi
  done <<EOF
$(find "$mnt" -type f 2>/dev/null)
EOF
  echo "cleared $n stale hugepage file(s) in $mnt"
}

release() {
  need_root
  local nr
  if is_hugetlbfs_mount "$mnt"; then
    act umount "$mnt"
  fi
  if [ -n "$node" ]; then
    write_nr 0
  else
    for nr in /sys/kernel/mm/hugepages/hugepages-*/nr_hugepages; do
      nrfile=$nr write_nr 0
    done
  fi
  echo "released hugepages${node:+ on node $node}; pages still in use by running processes stay until they exit"
}

persist() {
  cat <<TEXT
To keep this reservation across reboots:
TEXT
  if [ "$page_kb" = 1048576 ]; then
    cat <<TEXT
  1 GiB pages are best reserved at boot; add to the kernel command line (GRUB_CMDLINE_LINUX in
  /etc/default/grub, then 'update-grub' and reboot):
    default_hugepagesz=1G hugepagesz=1G hugepages=$pages
TEXT
  elif [ -n "$node" ]; then
    cat <<TEXT
  per-node reservations have no sysctl; run at boot (e.g. a systemd oneshot or rc.local):
    echo $pages > $nrfile
  or use the kernel command line: hugepagesz=2M hugepages=$node:$pages
TEXT
  else
    cat <<TEXT
  echo 'vm.nr_hugepages = $pages' > /etc/sysctl.d/80-hugepages.conf && sysctl --system
  (or on the kernel command line: hugepagesz=2M hugepages=$pages)
TEXT
  fi
  cat <<TEXT
  and mount hugetlbfs from /etc/fstab:
    nodev $mnt hugetlbfs pagesize=$page 0 0
TEXT
}

case "$action" in
  reserve) reserve ;;
  status) status ;;
  clear) clear_stale ;;
  release) release ;;
  persist) persist ;;
esac

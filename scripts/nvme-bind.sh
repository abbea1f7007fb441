#!/usr/bin/env bash
# NVMe PCI functions for SPDK: list them with what the kernel has on them, hand them to a userspace
# driver (vfio-pci, uio_pci_generic, or vfio without an IOMMU), and give them back to the kernel's
# nvme driver. A function whose namespaces are mounted, swap, held (LVM, RAID, dm) or open, or whose
# IOMMU group holds devices still bound to host drivers, is never touched.
set -eu

usage() {
  cat <<USAGE
Usage: $0 [list]
       $0 bind BDF... [--driver vfio-pci|uio_pci_generic] [--no-iommu] [--dry-run]
       $0 restore BDF... [--dry-run]

  list      every NVMe function: BDF, vendor:device, driver, NUMA node, IOMMU group, block devices,
            and whether anything on them is mounted or in use; then the memlock limit
  bind      unbind from the kernel and bind to a userspace driver (default vfio-pci, which needs an
            IOMMU: intel_iommu=on or amd_iommu=on on the kernel command line). The driver it had is
            remembered in $state_dir_default for restore.
  restore   give the functions back to the driver they had before bind (nvme if unknown)

  --driver D    vfio-pci (default) or uio_pci_generic (no IOMMU needed; no DMA protection)
  --no-iommu    vfio-pci in no-IOMMU mode (enable_unsafe_noiommu_mode): DMA is not confined, any
                bug in the userspace driver can corrupt host memory; only when there is no IOMMU
  --dry-run     print what would be written to sysfs, change nothing
  BDF           PCI address as printed by list, e.g. 0000:01:00.0 (the 0000: may be left out)

Exit status: 0 done, 1 the kernel refused a bind, 2 bad usage, not root, or a refused device.
USAGE
}

state_dir_default=/run/nvmebench/bind
state_dir=${NVMEBENCH_BIND_STATE:-$state_dir_default}
die() { echo "$0: $1" >&2; exit "${2:-2}"; }

action=list driver=vfio-pci noiommu=0 dry=0
bdfs=()
while [ $# -gt 0 ]; do
  case "$1" in
    list|bind|restore) action=$1; shift ;;
    --driver) [ $# -ge 2 ] || die "--driver needs vfio-pci or uio_pci_generic"; driver=$2; shift 2 ;;
    --driver=*) driver=${1#*=}; shift ;;
    --no-iommu) noiommu=1; shift ;;
    --dry-run) dry=1; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) die "unknown option '$1'; see --help" ;;
    *) bdfs+=("$1"); shift ;;
  esac
done

case "$driver" in
  vfio-pci|uio_pci_generic) ;;
  *) die "--driver '$driver' is not supported; use vfio-pci or uio_pci_generic" ;;
esac
[ "$noiommu" = 0 ] || [ "$driver" = vfio-pci ] || die "--no-iommu is a vfio-pci mode; drop it or use --driver vfio-pci"

pci=/sys/bus/pci/devices

# The NVMe functions: PCI class 01 (storage) 08 (NVM) 02 (NVMe).
nvme_functions() {
  local d
  for d in "$pci"/*; do
    [ "$(cat "$d/class" 2>/dev/null)" = 0x010802 ] && echo "${d##*/}"
  done
  return 0
}

driver_of() {
  if [ -e "$pci/$1/driver" ]; then basename "$(readlink "$pci/$1/driver")"; else echo none; fi
}

iommu_group_of() {
  if [ -e "$pci/$1/iommu_group" ]; then basename "$(readlink "$pci/$1/iommu_group")"; else echo none; fi
}

# Namespaces and their partitions (nvme0n1 nvme0n1p1 ...) of a function bound to nvme.
block_devs_of() {
  local ns p
  for ns in "$pci/$1"/nvme/nvme*/nvme*n*; do
    [ -e "$ns/dev" ] || continue
    echo "${ns##*/}"
    for p in "$ns"/"${ns##*/}"p*; do
      [ -e "$p/dev" ] && echo "${p##*/}"
    done
  done
  return 0
}

# Why a block device may not be taken away from the kernel, or nothing.
use_of() {
  local b=$1 majmin h pid l uses=""
  majmin=$(cat "/sys/class/block/$b/dev")
  if awk -v d="$majmin" '$3 == d { f = 1 } END { exit !f }' /proc/self/mountinfo; then
    uses="$uses mounted"
  fi
  if awk -v d="/dev/$b" '$1 == d { f = 1 } END { exit !f }' /proc/swaps; then
    uses="$uses swap"
  fi
  for h in "/sys/class/block/$b/holders"/*; do
    [ -e "$h" ] && uses="$uses held-by-${h##*/}"
  done
  for pid in /proc/[0-9]*; do
    for l in "$pid"/fd/*; do
      if [ "$(readlink "$l" 2>/dev/null)" = "/dev/$b" ]; then
        uses="$uses open-by-${pid#/proc/}($(cat "$pid/comm" 2>/dev/null))"
        break
      fi
    done
  done
  echo "${uses# }"
}

list() {
  local f b devs use any=0
  printf '%-13s %-10s %-16s %-5s %-6s %-24s %s\n' BDF ID DRIVER NUMA IOMMU BLOCK IN-USE
  for f in $(nvme_functions); do
    any=1 devs="" use=""
    for b in $(block_devs_of "$f"); do
      devs="$devs${devs:+,}$b"
      u=$(use_of "$b")
      [ -z "$u" ] || use="$use${use:+; }$b: $u"
    done
    printf '%-13s %-10s %-16s %-5s %-6s %-24s %s\n' "$f" \
      "$(sed 's/^0x//' "$pci/$f/vendor"):$(sed 's/^0x//' "$pci/$f/device")" "$(driver_of "$f")" \
      "$(cat "$pci/$f/numa_node")" "$(iommu_group_of "$f")" "${devs:--}" "${use:-no}"
  done
  [ "$any" = 1 ] || echo "(no NVMe PCI functions on this machine)"
  if [ -d /sys/kernel/iommu_groups ] && [ -n "$(ls /sys/kernel/iommu_groups)" ]; then
    echo "IOMMU: enabled (vfio-pci usable)"
  else
    echo "IOMMU: not enabled (vfio-pci needs intel_iommu=on or amd_iommu=on; else uio_pci_generic)"
  fi
  local lim note=""
  lim=$(ulimit -l)
  if [ "$(id -u)" = 0 ]; then
    note=" (root is not limited)"
  elif [ "$lim" != unlimited ]; then
    note=" (vfio pins all DMA memory: run SPDK as root or raise it with 'ulimit -l unlimited')"
  fi
  echo "memlock limit: $lim KiB$note"
}

sysfs_write() {
  if [ "$dry" = 1 ]; then
    echo "would run: echo '$1' > $2"
  else
    echo "$1" >"$2"
  fi
}

normalize() {
  case "$1" in
    ????:??:??.?) echo "$1" ;;
    ??:??.?) echo "0000:$1" ;;
    *) return 1 ;;
  esac
}

# Refuses (exit 2) a function that is not NVMe, is in use, or sits in a non-viable IOMMU group.
check_bindable() {
  local f=$1 b u g other od
  [ -e "$pci/$f" ] || die "there is no PCI function $f; '$0 list' shows the NVMe ones"
  [ "$(cat "$pci/$f/class")" = 0x010802 ] || die "$f is not an NVMe controller (class $(cat "$pci/$f/class")); '$0 list' shows the NVMe ones"
  for b in $(block_devs_of "$f"); do
    u=$(use_of "$b")
    [ -z "$u" ] || die "$f is in use on this host ($b: $u); unmount it, swapoff, or stop its users first"
  done
  if [ "$driver" = vfio-pci ] && [ "$noiommu" = 0 ]; then
    g=$(iommu_group_of "$f")
    [ "$g" != none ] ||
      die "$f has no IOMMU group: the IOMMU is off; boot with intel_iommu=on (or amd_iommu=on), or use --driver uio_pci_generic"
    for other in /sys/kernel/iommu_groups/"$g"/devices/*; do
      other=${other##*/}
      [ "$other" != "$f" ] || continue
      od=$(driver_of "$other")
      case "$od" in
        none|vfio-pci|pci-stub|pcieport) ;;
        *) die "IOMMU group $g of $f also holds $other, bound to $od; vfio needs the whole group: bind $other too, or use --driver uio_pci_generic" ;;
      esac
    done
  fi
}

load_module() {
  [ -d "/sys/bus/pci/drivers/$1" ] && return 0
  if [ "$dry" = 1 ]; then echo "would run: modprobe $1"; return 0; fi
  modprobe "$1" 2>/dev/null || die "cannot load the $1 module; install the kernel's modules (linux-modules-extra or linux-image) or pick another --driver"
}

bind() {
  local f cur
  [ "${#bdfs[@]}" -gt 0 ] || die "bind needs at least one BDF; '$0 list' shows them"
  for f in "${bdfs[@]}"; do check_bindable "$f"; done
  if [ "$noiommu" = 1 ]; then
    echo "WARNING: vfio no-IOMMU mode: DMA from the device is not confined; a userspace driver bug can corrupt any host memory." >&2
    load_module vfio
    [ -e /sys/module/vfio/parameters/enable_unsafe_noiommu_mode ] ||
      die "this kernel has no vfio no-IOMMU mode (CONFIG_VFIO_NOIOMMU is off); use --driver uio_pci_generic"
    sysfs_write Y /sys/module/vfio/parameters/enable_unsafe_noiommu_mode
  fi
  load_module "$driver"
  [ "$dry" = 1 ] || mkdir -p "$state_dir"
  for f in "${bdfs[@]}"; do
    cur=$(driver_of "$f")
    if [ "$cur" = "$driver" ]; then
      echo "$f: already bound to $driver"
      continue
    fi
    if [ "$dry" = 0 ] && [ ! -e "$state_dir/$f" ]; then echo "$cur" >"$state_dir/$f"; fi
    sysfs_write "$driver" "$pci/$f/driver_override"
    [ "$cur" = none ] || sysfs_write "$f" "$pci/$f/driver/unbind"
    sysfs_write "$f" /sys/bus/pci/drivers_probe
    if [ "$dry" = 0 ]; then
      [ "$(driver_of "$f")" = "$driver" ] || die "the kernel did not bind $f to $driver (see dmesg); '$0 restore $f' gives it back" 1
      echo "$f: $cur -> $driver"
    fi
  done
  if [ "$driver" = vfio-pci ] && [ "$(id -u)" != 0 ] && [ "$(ulimit -l)" != unlimited ]; then
    echo "note: memlock limit is $(ulimit -l) KiB; vfio pins all DMA memory, so run SPDK as root or raise it (ulimit -l unlimited)"
  fi
}

restore() {
  local f cur orig
  [ "${#bdfs[@]}" -gt 0 ] || die "restore needs at least one BDF; '$0 list' shows them"
  for f in "${bdfs[@]}"; do
    [ -e "$pci/$f" ] || die "there is no PCI function $f; '$0 list' shows the NVMe ones"
    [ "$(cat "$pci/$f/class")" = 0x010802 ] || die "$f is not an NVMe controller; '$0 list' shows the NVMe ones"
  done
  for f in "${bdfs[@]}"; do
    orig=nvme
    if [ -s "$state_dir/$f" ]; then orig=$(cat "$state_dir/$f"); fi
    [ "$orig" != none ] || orig=nvme
    cur=$(driver_of "$f")
    if [ "$cur" = "$orig" ]; then
      echo "$f: already bound to $orig"
    else
      load_module "$orig"
      sysfs_write "$orig" "$pci/$f/driver_override"
      [ "$cur" = none ] || sysfs_write "$f" "$pci/$f/driver/unbind"
      sysfs_write "$f" /sys/bus/pci/drivers_probe
      if [ "$dry" = 0 ]; then
        [ "$(driver_of "$f")" = "$orig" ] || die "the kernel did not bind $f back to $orig (see dmesg)" 1
        echo "$f: $cur -> $orig"
      fi
    fi
    # An empty override lets the normal driver match come back on the next probe.
    sysfs_write "" "$pci/$f/driver_override"
    [ "$dry" = 1 ] || rm -f "$state_dir/$f"
  done
}

if [ "$action" != list ]; then
  [ "$dry" = 1 ] || [ "$(id -u)" = 0 ] || die "'$action' writes to sysfs and needs root; run it with sudo (or add --dry-run)"
  for i in "${!bdfs[@]}"; do
    n=$(normalize "${bdfs[i]}") || die "'${bdfs[i]}' is not a PCI address; write it like 0000:01:00.0"
    bdfs[i]=$n
  done
elif [ "${#bdfs[@]}" -gt 0 ]; then
  die "list takes no BDF; use '$0 list'"
fi

case "$action" in
  list) list ;;
  bind) bind ;;
  restore) restore ;;
esac

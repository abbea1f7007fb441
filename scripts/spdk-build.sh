#!/usr/bin/env bash
# Builds and installs SPDK for nvmebench's `spdk` feature into a prefix outside this repository
# (default: a per-user cache), from a source tarball or tree, or from a tag of SPDK's public git
# repository. Configures only what the engine and its benchmarks need: shared libraries, the NVMe
# driver and env_dpdk, the TCP transport, vfio-user when libvfio-user's sources are given, and the
# target (nvmf_tgt) and perf apps. Whatever SPDK's tree needs patched is patched in a scratch copy;
# nothing of SPDK ever enters this repository. A second run with the same inputs does nothing.
set -eu

# Bump when the recipe below changes what gets built, so that cached installs are rebuilt.
RECIPE=1
# The oldest SPDK the engine supports (spdk-sys's shim covers the API changes since).
MIN_MAJOR=24 MIN_MINOR=1
REPO_URL=${SPDK_GIT_URL:-https://github.com/spdk/spdk.git}
DEFAULT_TAG=v25.09

usage() {
  cat <<USAGE
Usage: $0 [--source PATH | --tag TAG] [--prefix DIR] [--vfio-user-source PATH] [options]

Builds SPDK and installs it into a prefix for 'SPDK_DIR=PREFIX cargo build --release --features spdk'.

  --source PATH            an SPDK source tarball (.tar.gz, .tar.xz, .tar) or source directory
  --tag TAG                a tag of $REPO_URL to clone (default: $DEFAULT_TAG when no --source)
  --prefix DIR             where to install (default: \${XDG_CACHE_HOME:-~/.cache}/nvmebench/spdk-VERSION)
  --vfio-user-source PATH  libvfio-user sources (tarball or directory) for the vfio-user transport
                           (--with-vfio-user); default: the tree's libvfio-user submodule, if present
  --dpdk auto|system|submodule
                           DPDK to build against: the distribution's (pkg-config libdpdk, Debian 12:
                           22.11) or the tree's dpdk submodule; auto prefers the system's (default)
  --arch ARCH              -march for SPDK (default x86-64-v2 on x86-64: the binaries also run in the
                           QEMU testbed, whose emulated CPU has no AVX-512; 'native' for this CPU only)
  --jobs N                 parallel make jobs (default: nproc)
  --install-deps           apt-get install the build dependencies first (Debian/Ubuntu, as root)
  --force                  rebuild even if the prefix holds a build of the same inputs
  --keep-build             keep the scratch build directory (default: removed after a success)
  --dry-run                print what would be done, change nothing
  -h, --help               this text

Exit status: 0 built (or already built), 1 the build failed, 2 bad input or a missing dependency.
USAGE
}

die() { echo "$0: $*" >&2; exit 2; }
fail() { echo "$0: $*" >&2; exit 1; }
say() { echo "spdk-build: $*"; }

source_arg="" tag="" prefix="" vfu_arg="" dpdk=auto arch="" jobs="" install_deps=0 force=0 keep=0 dry=0
while [ $# -gt 0 ]; do
  case "$1" in
    --source) source_arg=${2:?--source needs a path}; shift 2 ;;
    --source=*) source_arg=${1#*=}; shift ;;
    --tag) tag=${2:?--tag needs a tag}; shift 2 ;;
    --tag=*) tag=${1#*=}; shift ;;
    --prefix) prefix=${2:?--prefix needs a directory}; shift 2 ;;
    --prefix=*) prefix=${1#*=}; shift ;;
    --vfio-user-source) vfu_arg=${2:?--vfio-user-source needs a path}; shift 2 ;;
    --vfio-user-source=*) vfu_arg=${1#*=}; shift ;;
    --dpdk) dpdk=${2:?--dpdk needs auto, system or submodule}; shift 2 ;;
    --dpdk=*) dpdk=${1#*=}; shift ;;
    --arch) arch=${2:?--arch needs an architecture}; shift 2 ;;
    --arch=*) arch=${1#*=}; shift ;;
    --jobs|-j) jobs=${2:?--jobs needs a number}; shift 2 ;;
    --jobs=*) jobs=${1#*=}; shift ;;
    --install-deps) install_deps=1; shift ;;
    --force) force=1; shift ;;
    --keep-build) keep=1; shift ;;
    --dry-run) dry=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1'; see --help" ;;
  esac
done

[ -n "$source_arg" ] && [ -n "$tag" ] && die "give --source or --tag, not both"
[ -n "$source_arg" ] || [ -n "$tag" ] || tag=$DEFAULT_TAG
case "$dpdk" in auto|system|submodule) ;; *) die "--dpdk takes auto, system or submodule, not '$dpdk'" ;; esac
[ -z "$jobs" ] && jobs=$(nproc)
case "$jobs" in ''|*[!0-9]*|0) die "--jobs takes a positive whole number, not '$jobs'" ;; esac
if [ -z "$arch" ]; then
  case "$(uname -m)" in x86_64) arch=x86-64-v2 ;; *) arch=native ;; esac
fi

# --- dependencies --------------------------------------------------------------------------------

apt_deps="build-essential pkg-config python3 python3-pip python3-venv libnuma-dev uuid-dev libssl-dev \
libaio-dev libncurses-dev libkeyutils-dev libdpdk-dev meson ninja-build libjson-c-dev libcmocka-dev \
python3-pyelftools libclang-dev git"
if [ "$install_deps" = 1 ]; then
  command -v apt-get >/dev/null || die "--install-deps needs apt-get (Debian/Ubuntu); install the equivalent of: $apt_deps"
  missing=""
  for p in $apt_deps; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
  done
  if [ -z "$missing" ]; then
    :
  elif [ "$dry" = 1 ]; then
    say "would run: apt-get install -y$missing"
  else
    [ "$(id -u)" = 0 ] || die "--install-deps runs apt-get and needs root (or install:$missing)"
    say "installing build dependencies:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086  # a list of package names
    apt-get install -y -qq $missing >/dev/null || die "apt-get could not install:$missing"
  fi
fi

# Checks a C header (and library) compiles and links; names the Debian package that provides it.
need_c() { # header lib package [headers it needs first]
  { for h in ${4:-} "$1"; do printf '#include <%s>\n' "$h"; done; echo 'int main(void) { return 0; }'; } |
    cc -x c - -o /dev/null ${2:+-l$2} 2>/dev/null ||
    die "the C header $1${2:+ / library lib$2} is missing; install $3 (apt-get install $3, or rerun with --install-deps)"
}
check_tools() {
  command -v cc >/dev/null || die "no C compiler (cc) found; install one (apt-get install build-essential, or rerun with --install-deps)"
  command -v make >/dev/null || die "make is missing; apt-get install build-essential (or rerun with --install-deps)"
  command -v pkg-config >/dev/null || die "pkg-config is missing; apt-get install pkg-config (or rerun with --install-deps)"
  command -v python3 >/dev/null || die "python3 is missing; apt-get install python3 python3-pip (or rerun with --install-deps)"
  python3 -m pip --version >/dev/null 2>&1 || die "python3 has no pip (SPDK installs its RPC client with it); apt-get install python3-pip"
  need_c numa.h numa libnuma-dev
  need_c uuid/uuid.h uuid uuid-dev
  need_c openssl/ssl.h ssl libssl-dev
  need_c libaio.h aio libaio-dev
  need_c ncurses.h ncurses libncurses-dev
  need_c keyutils.h keyutils libkeyutils-dev
}
need_meson() { # what
  command -v meson >/dev/null || die "meson is missing ($1 is built with it); apt-get install meson ninja-build (or rerun with --install-deps)"
  command -v ninja >/dev/null || die "ninja is missing ($1 is built with it); apt-get install ninja-build (or rerun with --install-deps)"
}

# --- the source ----------------------------------------------------------------------------------

is_tarball() { case "$1" in *.tar|*.tar.gz|*.tgz|*.tar.xz|*.tar.bz2) return 0 ;; *) return 1 ;; esac; }

# "MAJOR MINOR PATCH" from a tree's VERSION file (SPDK 23.05 and newer) or version.h (older).
version_of_tree() {
  if [ -f "$1/VERSION" ]; then
    sed -n 's/^\([0-9]*\)\.\([0-9]*\)\.\{0,1\}\([0-9]*\).*/\1 \2 \3/p' "$1/VERSION" | head -n1
  elif [ -f "$1/include/spdk/version.h" ]; then
    awk '/#define SPDK_VERSION_MAJOR/{a=$3} /#define SPDK_VERSION_MINOR/{b=$3} /#define SPDK_VERSION_PATCH/{c=$3}
         END{if (a != "") print a+0, b+0, c+0}' "$1/include/spdk/version.h"
  fi
}
is_spdk_tree() { [ -f "$1/configure" ] && [ -d "$1/lib/nvme" ] && [ -d "$1/lib/env_dpdk" ]; }

src_kind="" src_path="" src_id="" version=""
if [ -n "$source_arg" ]; then
  [ -e "$source_arg" ] || die "--source '$source_arg' does not exist"
  src_path=$(readlink -f "$source_arg")
  if [ -d "$src_path" ]; then
    is_spdk_tree "$src_path" || die "--source '$source_arg' is not an SPDK source tree (no configure, lib/nvme and lib/env_dpdk)"
    src_kind=dir
    read -r vmaj vmin vpat <<<"$(version_of_tree "$src_path")" || true
    # A tree's identity: its git commit (and whether it is dirty), or its files' sizes and times.
    if git -C "$src_path" rev-parse HEAD >/dev/null 2>&1; then
      src_id="git:$(git -C "$src_path" rev-parse HEAD)$(git -C "$src_path" status --porcelain --untracked-files=no | sha256sum | cut -c1-12)"
    else
      src_id="tree:$(cd "$src_path" && find . -path ./build -prune -o -type f -printf '%P %s %T@\n' | sort | sha256sum | cut -c1-16)"
    fi
  elif is_tarball "$src_path"; then
    src_kind=tarball
    listing=$(tar tf "$src_path" 2>/dev/null) || die "--source '$source_arg' is not a readable tar archive"
    top=$(printf '%s\n' "$listing" | sed -n 's|^\([^/]*\)/lib/env_dpdk/.*|\1|p' | head -n1)
    { [ -n "$top" ] && printf '%s\n' "$listing" | grep -q "^$top/configure\$"; } ||
      die "--source '$source_arg' is not an SPDK source archive (no configure and lib/env_dpdk in one top folder)"
    vfile=$(tar xOf "$src_path" "$top/VERSION" 2>/dev/null || true)
    if [ -n "$vfile" ]; then
      read -r vmaj vmin vpat <<<"$(printf '%s\n' "$vfile" | sed -n 's/^\([0-9]*\)\.\([0-9]*\)\.\{0,1\}\([0-9]*\).*/\1 \2 \3/p' | head -n1)" || true
    else
      read -r vmaj vmin vpat <<<"$(tar xOf "$src_path" "$top/include/spdk/version.h" 2>/dev/null |
        awk '/#define SPDK_VERSION_MAJOR/{a=$3} /#define SPDK_VERSION_MINOR/{b=$3} /#define SPDK_VERSION_PATCH/{c=$3}
             END{if (a != "") print a+0, b+0, c+0}')" || true
    fi
    src_id="sha256:$(sha256sum "$src_path" | cut -c1-64)"
  else
    die "--source '$source_arg' is neither a directory nor a .tar/.tar.gz/.tar.xz archive"
  fi
else
  src_kind=git
  command -v git >/dev/null || die "--tag needs git; apt-get install git (or pass --source)"
  remote=$(git ls-remote "$REPO_URL" "refs/tags/$tag" "refs/tags/$tag^{}" 2>/dev/null) ||
    die "cannot fetch tag '$tag' from $REPO_URL (no network?); download an SPDK source archive elsewhere and pass --source"
  [ -n "$remote" ] || die "$REPO_URL has no tag '$tag' (releases are tagged like v25.09)"
  # An annotated tag's peeled commit (the ^{} line) names the tree.
  src_id="git:$(printf '%s\n' "$remote" | sort -k2 | tail -n1 | cut -f1)"
  read -r vmaj vmin vpat <<<"$(printf '%s\n' "$tag" | sed -n 's/^v\{0,1\}\([0-9]*\)\.\([0-9]*\)\.\{0,1\}\([0-9]*\).*/\1 \2 \3/p')" || true
fi
{ [ -n "${vmaj:-}" ] && [ -n "${vmin:-}" ]; } || die "cannot tell which SPDK version '${source_arg:-$tag}' is (no VERSION or include/spdk/version.h)"
vmaj=$((10#$vmaj)) vmin=$((10#$vmin)) vpat=$((10#${vpat:-0}))
version=$(printf '%d.%02d' "$vmaj" "$vmin")
[ "$vpat" -gt 0 ] && version="$version.$vpat"
if [ "$vmaj" -lt "$MIN_MAJOR" ] || { [ "$vmaj" -eq "$MIN_MAJOR" ] && [ "$vmin" -lt "$MIN_MINOR" ]; }; then
  die "SPDK $version is older than the supported range ($(printf '%d.%02d' $MIN_MAJOR $MIN_MINOR) or newer)"
fi

# libvfio-user: an explicit path, or the tree's submodule (checked once the tree is unpacked).
vfu_path="" vfu_id=""
if [ -n "$vfu_arg" ]; then
  [ -e "$vfu_arg" ] || die "--vfio-user-source '$vfu_arg' does not exist"
  vfu_path=$(readlink -f "$vfu_arg")
  if [ -d "$vfu_path" ]; then
    { [ -f "$vfu_path/meson.build" ] && [ -d "$vfu_path/lib" ]; } ||
      die "--vfio-user-source '$vfu_arg' is not a libvfio-user source tree (no meson.build and lib/)"
    vfu_id="tree:$(cd "$vfu_path" && find . -type f -printf '%P %s %T@\n' | sort | sha256sum | cut -c1-16)"
  elif is_tarball "$vfu_path"; then
    tar tf "$vfu_path" 2>/dev/null | grep -q '^[^/]*/lib/libvfio-user.c$' ||
      die "--vfio-user-source '$vfu_arg' is not a libvfio-user source archive (no lib/libvfio-user.c)"
    vfu_id="sha256:$(sha256sum "$vfu_path" | cut -c1-64)"
  else
    die "--vfio-user-source '$vfu_arg' is neither a directory nor a tar archive"
  fi
else
  # The tree's own libvfio-user submodule, when it has one (a tag's clone fetches it); the source's
  # identity already covers its content.
  case "$src_kind" in
    git) vfu_id=submodule ;;
    dir) [ -f "$src_path/libvfio-user/meson.build" ] && vfu_id=submodule ;;
    tarball) printf '%s\n' "$listing" | grep -q "^$top/libvfio-user/meson.build\$" && vfu_id=submodule ;;
  esac
fi

# --- DPDK ----------------------------------------------------------------------------------------

dpdk_id=""
if [ "$dpdk" != submodule ] && pkg-config --exists libdpdk 2>/dev/null; then
  dpdk=system
  dpdk_id="system:$(pkg-config --modversion libdpdk)"
elif [ "$dpdk" = system ]; then
  die "--dpdk system: pkg-config finds no libdpdk; apt-get install libdpdk-dev (or rerun with --install-deps), or use --dpdk submodule with a tree that has SPDK's dpdk submodule"
else
  dpdk=submodule
  dpdk_id=submodule
fi

# --- the prefix and the stamp ---------------------------------------------------------------------

if [ -z "$prefix" ]; then
  [ -n "${HOME:-}" ] || [ -n "${XDG_CACHE_HOME:-}" ] || die "HOME is not set; pass --prefix"
  prefix="${XDG_CACHE_HOME:-$HOME/.cache}/nvmebench/spdk-$version"
fi
case "$prefix" in /*) ;; *) prefix="$PWD/$prefix" ;; esac
prefix=${prefix%/}
repo_root=$(cd "$(dirname "$0")/.." && pwd)
case "$prefix/" in "$repo_root"/*) die "--prefix '$prefix' is inside nvmebench's repository; SPDK is installed outside it (default ~/.cache/nvmebench)" ;; esac
probe=$prefix
while [ ! -e "$probe" ]; do probe=$(dirname "$probe"); done
# A real write: root passes any permission test, but not a read-only or pseudo filesystem.
probe_file=$(mktemp -p "$probe" .nvmebench-spdk-probe.XXXXXX 2>/dev/null) ||
  die "--prefix '$prefix' is not writable (nearest existing folder: $probe); choose another with --prefix"
rm -f "$probe_file"

# Everything that decides what gets built; the same inputs give the same install.
inputs="recipe=$RECIPE
spdk=$version $src_id
vfio_user=${vfu_id:-none}
dpdk=$dpdk_id
arch=$arch"
stamp="$prefix/.nvmebench-spdk-build"
cargo_line="SPDK_DIR=$prefix cargo build --release --features spdk"

if [ "$force" = 0 ] && [ -f "$stamp" ] && [ "$(sed -n '/^installed=/!p' "$stamp")" = "$inputs" ] &&
  [ -x "$prefix/bin/nvmf_tgt" ] && [ -f "$prefix/lib/pkgconfig/spdk_nvme.pc" ]; then
  say "SPDK $version is already built in $prefix with these inputs; nothing to do (--force rebuilds)"
  echo "$cargo_line"
  exit 0
fi

# --- configure options ---------------------------------------------------------------------------

# Only what nvmebench needs: the NVMe driver, env_dpdk, the TCP transport (always built), shared
# libraries, the apps (nvmf_tgt) and examples (spdk_nvme_perf). Everything optional is off.
config_opts=(--prefix="$prefix" --with-shared --target-arch="$arch" --disable-tests --disable-unit-tests
  --without-idxd --without-crypto --without-fio --without-xnvme --without-vhost --without-virtio
  --without-rbd --without-ublk --without-rdma --without-fc --without-daos --without-iscsi-initiator
  --without-vtune --without-ocf --without-uring --without-fsdev --without-nvme-cuse --without-raid5f
  --without-usdt --without-sma --without-avahi --without-golang --without-aio-fsdev --without-dpdk-compressdev)
[ "$dpdk" = system ] && config_opts+=(--with-dpdk)

if [ "$dry" = 1 ]; then
  say "would build SPDK $version from ${source_arg:-$REPO_URL $tag} ($src_id)"
  say "DPDK: $dpdk_id; vfio-user: ${vfu_path:-from the libvfio-user submodule if the tree has it}"
  say "would configure: ${config_opts[*]}${vfu_path:+ --with-vfio-user=...}"
  say "would run: make -j$jobs && make install, into $prefix"
  echo "$cargo_line"
  exit 0
fi

check_tools
[ "$dpdk" = submodule ] && need_meson "SPDK's DPDK submodule"
[ -n "$vfu_path" ] && need_meson libvfio-user
if [ -n "$vfu_path" ]; then
  need_c json-c/json.h json-c libjson-c-dev
  need_c cmocka.h cmocka libcmocka-dev "stdarg.h stddef.h stdint.h setjmp.h"
fi

# --- build in a scratch directory ----------------------------------------------------------------

scratch=$(mktemp -d "${TMPDIR:-/tmp}/nvmebench-spdk-build.XXXXXX")
# A failed configure or build keeps its tree for inspection; anything else is removed.
cleanup() {
  if [ "${built:-0}" = 0 ] && [ "${building:-0}" = 1 ]; then
    echo "spdk-build: the scratch tree is kept for inspection: $scratch" >&2
  elif [ "$keep" = 0 ]; then
    rm -rf "$scratch"
  fi
}
trap cleanup EXIT
log="$scratch/build.log"
say "building SPDK $version in $scratch (log: $log)"

tree="$scratch/spdk"
case "$src_kind" in
  tarball)
    mkdir "$tree"
    tar xf "$src_path" -C "$tree" --strip-components=1 || fail "cannot unpack $src_path"
    ;;
  dir)
    # A copy, so that the user's tree is never patched or left with build output.
    cp -a "$src_path/." "$tree/" || fail "cannot copy $src_path"
    ;;
  git)
    git clone -q --depth 1 --branch "$tag" "$REPO_URL" "$tree" >>"$log" 2>&1 ||
      die "cannot fetch tag '$tag' from $REPO_URL; see $log"
    subs=()
    [ -z "$vfu_path" ] && subs+=(libvfio-user)
    [ "$dpdk" = submodule ] && subs+=(dpdk)
    if [ ${#subs[@]} -gt 0 ]; then
      git -C "$tree" submodule update -q --init --depth 1 "${subs[@]}" >>"$log" 2>&1 ||
        fail "cannot fetch SPDK's submodules (${subs[*]}); see $log"
    fi
    ;;
esac

if [ -z "$vfu_path" ] && [ -f "$tree/libvfio-user/meson.build" ]; then
  vfu_path="$tree/libvfio-user"
  need_meson libvfio-user
  need_c json-c/json.h json-c libjson-c-dev
  need_c cmocka.h cmocka libcmocka-dev "stdarg.h stddef.h stdint.h setjmp.h"
elif [ -n "$vfu_path" ] && [ ! -d "$vfu_path" ]; then
  mkdir "$scratch/libvfio-user"
  tar xf "$vfu_path" -C "$scratch/libvfio-user" --strip-components=1 || fail "cannot unpack $vfu_path"
  vfu_path="$scratch/libvfio-user"
fi
[ -n "$vfu_path" ] && config_opts+=(--with-vfio-user="$vfu_path")
if [ "$dpdk" = submodule ] && [ ! -f "$tree/dpdk/meson.build" ]; then
  die "no DPDK: pkg-config finds no libdpdk and the SPDK tree has no dpdk submodule; apt-get install libdpdk-dev (or rerun with --install-deps)"
fi

# Patch 1: SPDK's configure requires the ISA-L submodule on x86-64 and aarch64 and exits without
# it. Nothing the NVMe driver, env_dpdk or the TCP transport needs uses ISA-L (SPDK falls back to
# its C CRC code), so it is left out whether or not the tree has it: one build, whatever the source.
# shellcheck disable=SC2016  # the $ is SPDK's, matched literally
if grep -q 'if \[ ! -f "\$rootdir"/isa-l/autogen.sh \]; then' "$tree/configure"; then
  sed -i -e 's|^\(\s*\)CONFIG\[ISAL\]=y$|\1CONFIG[ISAL]=n|' \
    -e 's|if \[ ! -f "\$rootdir"/isa-l/autogen.sh \]; then|if false; then|' "$tree/configure"
elif [ ! -f "$tree/isa-l/autogen.sh" ]; then
  fail "this SPDK's configure has an ISA-L check the script does not know; add the isa-l submodule to the tree"
fi

# Patch 2: env_dpdk refuses, at run time, DPDK 22.11 point releases above 22.11.4 ("DPDK version
# ... is not supported"), only because they were not out when it was written. 22.11 is an LTS
# branch whose ABI does not change (Debian 12 ships 22.11.11), so any 22.11.x is accepted.
if [ "$dpdk" = system ]; then
  case "$(pkg-config --modversion libdpdk)" in
    22.11.*)
      f="$tree/lib/env_dpdk/pci_dpdk.c"
      # shellcheck disable=SC2016  # the $ is SPDK's, matched literally
if grep -q 'if (minor > 4) {' "$f"; then
        sed -i 's|if (minor > 4) {|if (0) { /* nvmebench: any 22.11.x LTS release */|' "$f"
      fi
      ;;
  esac
fi

cd "$tree"
building=1
t0=$(date +%s)
# A tree that was built before (its own configure ran) may hold objects of another configuration.
built_before=0
[ -f mk/config.mk ] && built_before=1
say "configure: ${config_opts[*]}"
./configure "${config_opts[@]}" >>"$log" 2>&1 || fail "SPDK's configure failed; the last lines of $log:
$(tail -n 15 "$log")"
if [ "$built_before" = 1 ]; then
  make clean >>"$log" 2>&1 || true
fi
say "make -j$jobs (a few minutes)"
make -j"$jobs" >>"$log" 2>&1 || fail "SPDK's build failed; the last lines of $log:
$(grep -m5 -i 'error' "$log" || tail -n 15 "$log")"

# --- install -------------------------------------------------------------------------------------

# An install of ours (the stamp says so) is replaced whole, so nothing of an older build lingers.
if [ -f "$stamp" ]; then
  rm -rf "${prefix:?}"/{bin,lib,include,share,scripts,python,.nvmebench-spdk-build}
fi
mkdir -p "$prefix"
# SPDK's `make install` runs `pip install --prefix` on its Python package, and pip uninstalls an
# `spdk` package it finds installed elsewhere first; --ignore-installed leaves other copies alone.
say "make install into $prefix"
make install setup_cmd="python3 -m pip install -q --no-deps --ignore-installed --prefix=$prefix" >>"$log" 2>&1 ||
  fail "SPDK's make install failed; the last lines of $log:
$(tail -n 15 "$log")"

# SPDK's make install leaves out libvfio-user's shared library, which the vfio-user transport
# links against; it is built inside the tree (build/libvfio-user/usr/local/lib).
if [ -n "$vfu_path" ]; then
  cp -a "$tree"/build/libvfio-user/usr/local/lib/libvfio-user.so* "$prefix/lib/" ||
    fail "the build has no libvfio-user.so to install; see $log"
fi

# The RPC client: pip installed it under $prefix/lib/pythonX.Y/site-packages, which no Python
# searches, so the spdk-rpc entry point is told where it is. rpc.py and the package are also put
# where an SPDK source tree has them ($prefix/scripts/rpc.py finds ../python), for scripts that use
# $SPDK_DIR/scripts/rpc.py.
site=$(find "$prefix/lib" -maxdepth 3 -type d -name site-packages -path '*/python3*' | head -n1)
if [ -n "$site" ] && [ -f "$prefix/bin/spdk-rpc" ]; then
  sed -i "0,/^import sys\$/s||import sys\nsys.path.insert(0, '$site')|" "$prefix/bin/spdk-rpc"
fi
mkdir -p "$prefix/scripts" "$prefix/python"
cp "$tree/scripts/rpc.py" "$prefix/scripts/"
cp -a "$tree/python/spdk" "$prefix/python/"
[ -d "$tree/scripts/rpc" ] && cp -a "$tree/scripts/rpc" "$prefix/scripts/"

[ -x "$prefix/bin/nvmf_tgt" ] || fail "make install put no bin/nvmf_tgt in $prefix; see $log"
[ -x "$prefix/bin/spdk_nvme_perf" ] || fail "make install put no bin/spdk_nvme_perf in $prefix; see $log"
"$prefix/bin/spdk-rpc" --help >/dev/null 2>&1 || python3 "$prefix/scripts/rpc.py" --help >/dev/null 2>&1 ||
  fail "the installed RPC client does not run; see $log"

{ printf '%s\n' "$inputs"; echo "installed=$(date -u +%Y-%m-%dT%H:%M:%SZ) in $(($(date +%s) - t0)) s"; } >"$stamp"
built=1
say "SPDK $version installed in $prefix ($(($(date +%s) - t0)) s)${vfu_path:+, with vfio-user}"
echo "$cargo_line"

#!/usr/bin/env bash
# Tests nvmebench's two installs as a user meets them. First cargo install --path . into a scratch
# root, whose binary must run a 1 s null-engine run. Then the Debian package (scripts/deb.sh, from
# the same release build): dpkg -i installs it, and nvmebench --version names the git revision and
# whether SPDK is in, man nvmebench shows the manual, bash completes nvmebench's commands and the
# scripts run; dpkg -r removes every file it installed. Needs root (dpkg); installs man-db and
# bash-completion when they are missing. CI runs it from .ci/run.
set -eu -o pipefail

usage() {
  cat <<USAGE
Usage: $0

Runs cargo install --locked --path . --root SCRATCH (a release build in target/release), then
scripts/deb.sh --no-build --install-cargo-deb on that build, installs the package, checks it and
removes it. Refuses to run when a package named nvmebench is already installed.

Exit status: 0 every check passed, 1 a check failed, 2 bad usage, not root or nvmebench installed.
USAGE
}

die() { echo "$0: $1" >&2; exit "${2:-2}"; }
fail() { echo "package-test: FAILED: $1" >&2; exit 1; }
passed=0
ok() { echo "package-test: ok: $1"; passed=$((passed + 1)); }

case "${1:-}" in
  "") ;;
  -h|--help) usage; exit 0 ;;
  *) die "unknown option '$1'; see --help" ;;
esac
[ "$(id -u)" = 0 ] || die "needs root: it installs and removes a Debian package"
if dpkg-query -W -f='${Status}' nvmebench 2>/dev/null | grep -q 'install ok installed'; then
  die "a package named nvmebench is installed already; remove it first (dpkg -r nvmebench)"
fi

cd "$(dirname "$0")/.."
scratch=$(mktemp -d)
installed=0
cleanup() {
  if [ "$installed" = 1 ]; then dpkg -r nvmebench >/dev/null 2>&1 || true; fi
  rm -rf "$scratch"
}
trap cleanup EXIT

# 1. cargo install: its binary runs.
cargo install --locked --path . --root "$scratch/root" --quiet
[ -x "$scratch/root/bin/nvmebench" ] || fail "cargo install put no bin/nvmebench under --root"
(cd "$scratch" && root/bin/nvmebench run --engine null --time 1) >"$scratch/run.txt" ||
  fail "the installed binary's null run failed: $(cat "$scratch/run.txt")"
grep -q 'IOPS' "$scratch/run.txt" || fail "the null run's report has no IOPS: $(cat "$scratch/run.txt")"
ok "cargo install --path . --root SCRATCH; nvmebench run --engine null --time 1"

# 2. The package, from the release build cargo install just made.
deb=$(scripts/deb.sh --no-build --install-cargo-deb | tail -n1)
[ -f "$deb" ] || fail "scripts/deb.sh named no package"
ok "built $deb ($(du -k "$deb" | cut -f1) KiB)"

need=""
command -v man >/dev/null || need="$need man-db"
[ -f /usr/share/bash-completion/bash_completion ] || need="$need bash-completion"
if [ -n "$need" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # shellcheck disable=SC2086  # a list of package names
  apt-get install -y -qq $need >/dev/null
fi

# Minimal images tell dpkg to leave manual pages out (path-exclude); the test installs them.
dpkg --path-include='/usr/share/man/man1/nvmebench*' -i "$deb" >/dev/null
installed=1
dpkg-query -L nvmebench >"$scratch/files"
ok "dpkg -i: $(wc -l <"$scratch/files") paths"

[ "$(command -v nvmebench)" = /usr/bin/nvmebench ] || fail "nvmebench on PATH is $(command -v nvmebench || echo nothing)"
version=$(nvmebench --version)
want="nvmebench $(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1) (git "
if git rev-parse --show-toplevel >/dev/null 2>&1 && [ "$(git rev-parse --show-toplevel)" = "$(pwd -P)" ]; then
  want="$want$(git rev-parse --short=12 HEAD)"
fi
case "$version" in
  "$want"*", with SPDK"*|"$want"*", without SPDK)") ok "nvmebench --version: $version" ;;
  *) fail "nvmebench --version said '$version', not '$want...' and whether SPDK is in" ;;
esac

for page in nvmebench nvmebench-run; do
  MANPAGER=cat MANWIDTH=80 man "$page" 2>/dev/null >"$scratch/man.txt" || fail "man $page found no page"
  if ! grep -q "^NAME" "$scratch/man.txt" || ! grep -q "$page" "$scratch/man.txt"; then
    fail "man $page shows no NAME section naming $page"
  fi
done
ok "man nvmebench, man nvmebench-run"

# bash-completion loads the completion from its directory on first use, as an interactive shell
# does; then completing 'nvmebench ru' and 'nvmebench run --eng' must offer run and --engine.
completes() { # words...: what bash offers for the last word
  bash -c '
    source /usr/share/bash-completion/bash_completion
    _completion_loader nvmebench
    spec=$(complete -p nvmebench) || exit 1
    fn=${spec#*-F }; fn=${fn%% *}
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
    COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
    "$fn" nvmebench "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
    printf "%s\n" "${COMPREPLY[@]}"' completes "$@"
}
completes nvmebench ru | grep -qx 'run' || fail "bash does not complete 'nvmebench ru' to run"
completes nvmebench run --eng | grep -qx -- '--engine' || fail "bash does not complete 'nvmebench run --eng' to --engine"
ok "bash completion: nvmebench ru -> run, nvmebench run --eng -> --engine"

nvmebench-hugepages --help | grep -q '^Usage:' || fail "nvmebench-hugepages --help"
nvmebench-bind --help | grep -q '^Usage:' || fail "nvmebench-bind --help"
nvmebench-hugepages status >/dev/null || fail "nvmebench-hugepages status"
ok "nvmebench-hugepages, nvmebench-bind"

dpkg -r nvmebench >/dev/null
installed=0
left=""
while read -r path; do
  # Directories other packages share (/usr, /usr/bin, ...) stay; every file must go.
  if [ -e "$path" ] && ! [ -d "$path" ]; then left="$left $path"; fi
done <"$scratch/files"
[ -z "$left" ] || fail "dpkg -r left$left"
if [ -d /usr/share/doc/nvmebench ]; then fail "dpkg -r left /usr/share/doc/nvmebench"; fi
if command -v nvmebench >/dev/null; then fail "nvmebench is still on PATH after dpkg -r"; fi
ok "dpkg -r removed all $(grep -c . "$scratch/files") paths' files"
echo "package-test: $passed passed, 0 failed"

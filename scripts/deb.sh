#!/usr/bin/env bash
# Builds the Debian package of nvmebench: the binary, its manual pages, its bash, zsh and fish
# completions, the hugepage and binding scripts (as nvmebench-hugepages and nvmebench-bind), the
# guides and the result schema. Prints the package's path on the last line.
set -eu -o pipefail

# The cargo-deb release this script is tested with (CI installs it when it is missing).
cargo_deb_version=3.8.0

usage() {
  cat <<USAGE
Usage: $0 [--no-build] [--install-cargo-deb] [-- CARGO-BUILD-ARGS...]

Builds target/release/nvmebench (cargo build --release --locked, plus the CARGO-BUILD-ARGS given
after the double dash), generates the manual pages and completions into target/deb-assets, runs
cargo deb, which writes target/debian/nvmebench_VERSION-1_ARCH.deb (and the debug symbols as
nvmebench-dbgsym_VERSION-1_ARCH.ddeb).

  --no-build            package the target/release/nvmebench that is there (from a release
                        build, or from cargo install --path .)
  --install-cargo-deb   install cargo-deb $cargo_deb_version when it is missing (into
                        \${XDG_CACHE_HOME:-~/.cache}/nvmebench/tools, not ~/.cargo/bin)
  -h, --help            this text

Exit status: 0 built, 1 a step failed, 2 bad usage or cargo-deb missing.
USAGE
}

die() { echo "$0: $1" >&2; exit "${2:-2}"; }

build=1 install_tool=0
build_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) build=0; shift ;;
    --install-cargo-deb) install_tool=1; shift ;;
    --) shift; build_args=("$@"); break ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1'; see --help" ;;
  esac
done
[ "$build" = 1 ] || [ ${#build_args[@]} -eq 0 ] || die "--no-build takes no cargo build arguments"

cd "$(dirname "$0")/.."

tools=${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/nvmebench/tools
export PATH="$tools/bin:$PATH"
if ! cargo deb --version >/dev/null 2>&1; then
  [ "$install_tool" = 1 ] ||
    die "cargo-deb is not installed; install it (cargo install cargo-deb --version $cargo_deb_version --locked) or pass --install-cargo-deb"
  echo "$0: installing cargo-deb $cargo_deb_version into $tools" >&2
  cargo install cargo-deb --version "$cargo_deb_version" --locked --root "$tools" --quiet
fi

if [ "$build" = 1 ]; then
  cargo build --release --locked "${build_args[@]}"
fi
bin=target/release/nvmebench
[ -x "$bin" ] || die "$bin is not built; run without --no-build, or cargo build --release first"

# The pages and completions come from the binary itself, so they match its --help.
assets=target/deb-assets
rm -rf "$assets"
mkdir -p "$assets/man" "$assets/completions"
"$bin" man --dir "$assets/man"
"$bin" completions bash >"$assets/completions/nvmebench.bash"
"$bin" completions zsh >"$assets/completions/_nvmebench"
"$bin" completions fish >"$assets/completions/nvmebench.fish"

out=$(mktemp)
trap 'rm -f "$out"' EXIT
cargo deb --no-build --locked | tee "$out"
deb=$(grep -E '\.deb$' "$out" | tail -n1)
[ -f "$deb" ] || die "cargo deb named no package it wrote" 1
echo "$deb"

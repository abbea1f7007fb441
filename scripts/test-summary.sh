#!/usr/bin/env bash
# The end of a test run: what ran and what skipped, with the reasons. Reads cargo test's output
# (stdout and stderr together) and the skip log the tests' skip helper writes (tests/support/skip.rs:
# one line per skip, "binary<TAB>test<TAB>need<TAB>allowed|required<TAB>why"). Exits 1 when any skip
# was one CI requires to run (the helper marks those under CI=true) or any test failed, else 0.
set -eu

usage() {
  cat <<USAGE
Usage: $0 CARGO_TEST_OUTPUT SKIP_LOG

Prints every test that ran (by binary and module), every skip with its reason, and every failure,
then a closing count. scripts/test.sh runs it at the end of the suite.
USAGE
}

case "${1:-}" in
  -h|--help) usage; exit 0 ;;
esac
[ $# -eq 2 ] || { echo "$0: needs the cargo test output and the skip log; see --help" >&2; exit 2; }
[ -r "$1" ] || { echo "$0: cannot read the cargo test output $1" >&2; exit 2; }
out=$1 skips=$2
[ -e "$skips" ] || skips=/dev/null

# Each test cargo reported, as "binary<TAB>test<TAB>outcome". The binary is named after the
# "Running" line before it: lib and bin for nvmebench's own unit tests, the crate otherwise.
results=$(awk '
  /^[[:space:]]*Running / {
    src = $2; if (src == "unittests") src = $3
    deps = $NF; gsub(/[()]/, "", deps); n = split(deps, p, "/"); crate = p[n]; sub(/-[0-9a-f]+$/, "", crate)
    if (crate == "nvmebench") bin = (src == "src/main.rs") ? "bin" : "lib"
    else { bin = crate; gsub(/_/, "-", bin) }
    next
  }
  /^[[:space:]]*Doc-tests / { bin = "doc"; next }
  /^test .* \.\.\. (ok|FAILED|ignored)/ {
    name = $2; outcome = $NF
    if ($0 ~ /\.\.\. ignored/) outcome = "ignored"
    printf "%s\t%s\t%s\n", bin, name, outcome
  }' "$out")

# What each failed test printed (its panic message first), a few lines per test, so the end of
# the log says why, not only which.
panics=$(awk '
  /^---- .* stdout ----$/ { name = $2; n = 0; next }
  /^(failures:|test result:|---- )/ { name = ""; next }
  name != "" && n < 8 && NF > 0 { printf "%s\t%s\n", name, substr($0, 1, 400); n++ }' "$out")

awk -F'\t' -v skiplog="$skips" -v panics="$panics" '
  BEGIN {
    np = split(panics, pl, "\n")
    for (i = 1; i <= np; i++) {
      tab = index(pl[i], "\t")
      if (tab == 0) continue
      t = substr(pl[i], 1, tab - 1)
      said[t] = said[t] "    " substr(pl[i], tab + 1) "\n"
    }
    while ((getline line < skiplog) > 0) {
      split(line, f, "\t")
      key = f[1] "\t" f[2]
      skipped[key] = 1
      nskips++
      why[nskips] = sprintf("skipped: %s %s [%s%s]: %s", f[1], f[2], f[3], f[4] == "required" ? ", required under CI=true" : "", f[5])
      if (f[4] == "required") required++
    }
  }
  {
    key = $1 "\t" $2
    if ($3 == "ok" && !(key in skipped)) {
      ran++
      mod = $2; sub(/::[^:]*$/, "", mod)
      short = (mod == $2) ? $2 : substr($2, length(mod) + 3)
      if (mod == $2) mod = "(top)"
      group = $1 " " mod
      if (!(group in members)) order[++ngroups] = group
      members[group] = members[group] (members[group] == "" ? "" : ", ") short
      count[group]++
    } else if ($3 == "FAILED") {
      failed[++nfailed] = $1 " " $2
    } else if ($3 == "ignored") {
      ignored++
    }
  }
  END {
    for (i = 1; i <= ngroups; i++) printf "ran: %s (%d): %s\n", order[i], count[order[i]], members[order[i]]
    for (i = 1; i <= nskips; i++) print why[i]
    for (i = 1; i <= nfailed; i++) {
      printf "failed: %s\n", failed[i]
      t = failed[i]; sub(/^[^ ]* /, "", t)
      if (t in said) printf "%s", said[t]
    }
    nt = 0; for (k in skipped) nt++
    printf "tests: %d ran, %d skipped in whole or in part (%d skips, %d that CI requires to run), %d failed, %d ignored\n", ran, nt, nskips, required, nfailed, ignored
    exit (required > 0 || nfailed > 0) ? 1 : 0
  }' <<<"$results"

#!/usr/bin/env bash
# apps_cli_test (cpu): heaplab_apps's command line on any machine, as every heaplab program's
# (tools/program/program.hpp, docs/cli.md "Exit statuses", issue 36): --version and -V, a
# mistyped command or option answered with the closest, numbers read strictly (CLI11 alone wraps
# "-1", reads "010" as octal and takes "nan"), and exit 4 (not checked, SKIPPED) with no usable
# GPU.
#   apps_cli_test.sh HEAPLAB_APPS
set -uo pipefail
apps="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
check() {  # WANTED-STATUS PATTERN WHAT -- ARGS...
  local want=$1 pattern=$2 what=$3
  shift 4
  "$apps" "$@" > "$tmp/out" 2>&1
  local status=$?
  if [ "$status" -ne "$want" ] || ! grep -qE -- "$pattern" "$tmp/out"; then
    echo "FAIL: $what (exit $status, wanted $want and /$pattern/):"; cat "$tmp/out"; failed=1
  else
    echo "ok: $what"
  fi
}
check 0 "^heaplab_apps [0-9]" "--version" -- --version
check 0 "^commit: " "-V names the commit" -- -V
check 2 "unknown command 'wator' \(did you mean 'wa-tor'\?\)" "a mistyped command" -- wator
check 2 "unknown option '--verison' \(did you mean '--version'\?\)" "a mistyped option" -- --verison
check 2 "error: .*--seed.*expected an integer" "gen-ca --seed -1" -- gen-ca --seed -1
check 2 "error: .*--seed.*expected an integer" "nbody --seed 010" -- nbody --seed 010
check 2 "error: .*--density.*expected a number" "gen-ca --density nan" -- gen-ca --density nan
check 2 "error: .*--density.*expected a number" "gen-ca --density 0x1p-1" -- gen-ca --density 0x1p-1
# The variants of a run (common/cli.hpp add_variant_options): --only runs one variant alone and
# excludes the options that add others; --memory-mib sizes every variant and excludes
# --heap-blocks.
check 2 "--only.*excludes|excludes.*--only" "--only with --baseline" -- nbody --only heap --baseline
check 2 "--only.*excludes|excludes.*--only" "--only with --allocators" -- wa-tor --only heap --allocators rw-malloc
check 2 "--only.*excludes|excludes.*--only" "--only with wa-tor --cuda-malloc" -- wa-tor --only baseline --cuda-malloc
check 2 "error: .*--only" "--only names an unknown variant" -- traffic --only halloc
check 2 "error: .*--only" "barnes-hut has no baseline for --only" -- barnes-hut --only baseline
check 2 "--memory-mib.*excludes|excludes.*--memory-mib" "--memory-mib with --heap-blocks" -- sugarscape --memory-mib 4 --heap-blocks 9
check 2 "error: .*--memory-mib" "--memory-mib 0" -- structure --memory-mib 0
CUDA_VISIBLE_DEVICES=-1 "$apps" gen-ca --width 16 --height 16 --iterations 1 > "$tmp/out" 2>&1
status=$?
if [ $status -eq 4 ] && grep -q "SKIPPED: nothing ran" "$tmp/out"; then
  echo "ok: no usable GPU: exit 4 (not checked), SKIPPED"
else
  echo "FAIL: gen-ca with no usable GPU (exit $status, wanted 4 and SKIPPED):"; cat "$tmp/out"; failed=1
fi
# --random-shape prints the drawn options (those given keep their values) before the app runs.
CUDA_VISIBLE_DEVICES=-1 "$apps" wa-tor --random-shape 5 --fish-density 0.4 --iterations 1 > "$tmp/out" 2>&1
status=$?
if [ $status -eq 4 ] && grep -qE "^wa-tor: random shape 5: --width [0-9]+ --height [0-9]+ --shark-density [0-9.e-]+ --seed [0-9]+$" "$tmp/out"; then
  echo "ok: --random-shape prints the drawn options, not the given ones"
else
  echo "FAIL: wa-tor --random-shape 5 (exit $status):"; cat "$tmp/out"; failed=1
fi
exit $failed

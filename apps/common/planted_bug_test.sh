#!/bin/sh
# The planted-bug test every app shares (docs/apps.md, each app's "Planted bug"; docs/mutants.md
# "Applications"); each app's <app>/planted_bug_test.sh names the run and what must be reported.
#
#   planted_bug_test.sh MUTANT CORRECT "ARGS" "EXPECTED" "WHY" ["CORRECT_EXTRA"]
#
# MUTANT (the app built with the bug) run with ARGS must exit 1 and print a line matching the
# grep pattern EXPECTED (WHY names it when it does not); CORRECT run with ARGS CORRECT_EXTRA must
# exit 0 and print "<app> --check passed" (<app>: ARGS' first word). Exit code 4 from the mutant
# (not checked: no usable CUDA device, docs/cli.md "Exit statuses"), reported as SKIPPED.
mutant="$1"
correct="$2"
args="$3"
expected="$4"
why="$5"
extra="$6"
app=${args%% *}
out=$("$mutant" $args 2>&1)
rc=$?
echo "$out"
if [ "$rc" -eq 4 ]; then echo "SKIPPED: no CUDA device"; exit 0; fi
if [ "$rc" -ne 1 ]; then echo "FAIL: the planted bug exited $rc, expected 1"; exit 1; fi
echo "$out" | grep -q "$expected" || { echo "FAIL: $why"; exit 1; }
out=$("$correct" $args $extra 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 0 ] && echo "$out" | grep -q "$app --check passed" ||
  { echo "FAIL: the correct app exited $rc on the same run"; exit 1; }
echo "PASS: the planted bug was caught, the correct app passed"

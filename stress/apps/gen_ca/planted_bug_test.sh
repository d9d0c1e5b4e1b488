#!/bin/sh
# gen_ca_planted_bug (docs/apps.md "Planted bug"): the app built with
# HEAPLAB_MUTANT_NAME="gen_ca_skip_dying" must fail --check (exit 1, naming the first differing cell)
# in the first generation a cell reaches its last dying state; the correct app must pass the same
# run. Rule /2/3 (Brian's Brain): every alive cell dies after one generation, so the bug shows at
# generation 1. Exit code 77 from the app: no GPU, reported as SKIPPED.
mutant="$1"
correct="$2"
args="gen-ca --width 64 --height 48 --iterations 6 --seed 3 --density 0.3 --rule /2/3 --check --check-every 1"
out=$("$mutant" $args 2>&1)
rc=$?
echo "$out"
if [ "$rc" -eq 77 ]; then echo "SKIPPED: no CUDA device"; exit 0; fi
if [ "$rc" -ne 1 ]; then echo "FAIL: the planted bug exited $rc, expected 1"; exit 1; fi
echo "$out" | grep -q "FAILED at generation 1: heap objects differ from the CPU reference at cell" ||
  { echo "FAIL: no first differing cell at generation 1 reported"; exit 1; }
out=$("$correct" $args 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 0 ] && echo "$out" | grep -q "gen-ca --check passed" ||
  { echo "FAIL: the correct app exited $rc on the same run"; exit 1; }
echo "PASS: the planted bug was caught, the correct app passed"

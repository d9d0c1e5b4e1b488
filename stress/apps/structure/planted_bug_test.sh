#!/bin/sh
# structure_planted_bug (docs/apps.md "structure"): the app built with
# HEAPLAB_MUTANT_NAME="structure_keep_orphan_springs" must fail --check (exit 1) with a live spring
# whose endpoint is not a live node once the pulled column has torn off (scenario pull: iteration 8
# on this mesh, where the CPU simulation removes its first nodes); the correct app must pass the
# same run. Exit code 77 from the app: no GPU, reported as SKIPPED.
mutant="$1"
correct="$2"
args="structure --scenario pull --width 24 --height 12 --iterations 20 --load 0.2 --threshold 0.05 --seed 1 --check --check-every 1"
out=$("$mutant" $args 2>&1)
rc=$?
echo "$out"
if [ "$rc" -eq 77 ]; then echo "SKIPPED: no CUDA device"; exit 0; fi
if [ "$rc" -ne 1 ]; then echo "FAIL: the planted bug exited $rc, expected 1"; exit 1; fi
echo "$out" | grep -q "structure --check FAILED at iteration [0-9]* (heap): live spring [0-9]* names an endpoint that is not a live node" ||
  { echo "FAIL: no spring to a dead node reported"; exit 1; }
out=$("$correct" $args --baseline 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 0 ] && echo "$out" | grep -q "structure --check passed" ||
  { echo "FAIL: the correct app exited $rc on the same run"; exit 1; }
echo "PASS: the planted bug was caught, the correct app passed"

#!/bin/sh
# collision_planted_bug (docs/apps.md "collision"): the app built with
# HEAPLAB_MUTANT_NAME="collision_merge_drops_mass" must fail --check (exit 1, naming the lost
# total mass) at the first iteration with a merge; the correct app must pass the same run. 512
# bodies with merge radius 0.01 give merges in iteration 1 (the CPU reference test
# NbodyReference.SmallCollisionMergesAtOnce says so). Exit code 77: no GPU, reported as SKIPPED.
mutant="$1"
correct="$2"
args="collision --bodies 512 --iterations 10 --seed 1 --merge-radius 0.01 --check --check-every 1"
out=$("$mutant" $args 2>&1)
rc=$?
echo "$out"
if [ "$rc" -eq 77 ]; then echo "SKIPPED: no CUDA device"; exit 0; fi
if [ "$rc" -ne 1 ]; then echo "FAIL: the planted bug exited $rc, expected 1"; exit 1; fi
echo "$out" | grep -q "collision --check FAILED at iteration 1 (heap): total mass" ||
  { echo "FAIL: no lost total mass reported at iteration 1"; exit 1; }
out=$("$correct" $args --baseline 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 0 ] && echo "$out" | grep -q "collision --check passed" ||
  { echo "FAIL: the correct app exited $rc on the same run"; exit 1; }
echo "PASS: the planted bug was caught, the correct app passed"

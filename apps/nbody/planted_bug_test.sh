#!/bin/sh
# collision_planted_bug (docs/apps.md "collision"): the app built with
# HEAPLAB_MUTANT_NAME="collision_merge_drops_mass" must fail --check (exit 1, naming the lost
# total mass) at the first iteration with a merge; the correct app must pass the same run. 512
# bodies with merge radius 0.01 give merges in iteration 1 (the CPU reference test
# NbodyReference.SmallCollisionMergesAtOnce says so). Exit code 4 (not checked): no GPU, reported as SKIPPED.
exec sh "$(dirname "$0")/../common/planted_bug_test.sh" "$1" "$2" \
  "collision --bodies 512 --iterations 10 --seed 1 --merge-radius 0.01 --check --check-every 1" \
  "collision --check FAILED at iteration 1 (heap): total mass" \
  "no lost total mass reported at iteration 1" \
  "--baseline" \
  "collision --iterations 20 --merge-radius 0.05 --check --check-every 1"

#!/bin/sh
# nbody_shape_planted_bug (docs/apps.md "nbody", "Planted bug"): the app built with
# HEAPLAB_MUTANT_NAME="nbody_force_skips_tail_tile" sums the baseline's forces over whole tiles of
# 32 bodies only, so with 1000 bodies the last 8 pull on nobody and the total momentum drifts: the
# baseline must fail --check (exit 1) at iteration 1 (NbodyCheck.CatchesThePlantedTailTileBugOn-
# CountsNotAMultipleOfTheTile computes that iteration on the CPU); the heap variant is correct and
# passes first. The correct app must pass the same run. Random shapes (RANDOM_MODE some): a body
# count that is a multiple of 32 does not show the bug, so it must be caught on at least one shape
# and the correct app must pass all. Exit code 4 from the app (not checked): no GPU, reported as
# SKIPPED.
exec sh "$(dirname "$0")/../common/planted_bug_test.sh" "$1" "$2" \
  "nbody --bodies 1000 --iterations 5 --seed 1 --baseline --check --check-every 1" \
  "nbody --check FAILED at iteration 1 (baseline): total momentum drifted" \
  "no momentum drift of the baseline reported at iteration 1" \
  "" \
  "nbody --iterations 5 --baseline --check --check-every 1" \
  some

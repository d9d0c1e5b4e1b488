#!/bin/sh
# gen_ca_shape_planted_bug (docs/apps.md "gen-ca", "Planted bug"): the app built with
# HEAPLAB_MUTANT_NAME="gen_ca_wrap_assumes_pow2" wraps the torus with `& (side - 1)`,
# which is right only when both sides are powers of two. On 67 x 17 (odd, prime height) it must
# fail --check (exit 1) at generation 1, naming the first differing cell (the CPU model of the
# app's count phase, GenCaCheck.CatchesThePlantedPowerOfTwoWrapBugOnOtherSides, says so); the
# correct app must pass the same run. Random shapes (RANDOM_MODE some): a draw with two
# power-of-two sides does not show the bug, so it must be caught on at least one shape and the
# correct app must pass all. Exit code 4 from the app (not checked): no GPU, reported as SKIPPED.
exec sh "$(dirname "$0")/../common/planted_bug_test.sh" "$1" "$2" \
  "gen-ca --width 67 --height 17 --iterations 6 --seed 3 --density 0.3 --rule life --check --check-every 1" \
  "FAILED at generation 1: heap objects differ from the CPU reference at cell" \
  "no first differing cell at generation 1 reported" \
  "" \
  "gen-ca --iterations 6 --density 0.3 --rule life --check --check-every 1" \
  some

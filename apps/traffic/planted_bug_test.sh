#!/bin/sh
# traffic_planted_bug (docs/apps.md "traffic", "Planted bug"): the app built with
# HEAPLAB_MUTANT_NAME="traffic_merge_without_claim" lets a car that lost its street's claim enter
# the street anyway. --check must fail (exit 1) at the first iteration where two cars entered one
# street, naming the first cell that differs from the reference (the CPU test
# TrafficCheck.CatchesTheWorldOfCarsThatIgnoreTheirClaims runs that rule against the reference);
# the correct app must pass the same run. Random shapes (RANDOM_MODE some): a sparse network may see
# no two cars meet at a street's entry within the run, so it must be caught on at least one.
# Exit code 4 from the app (not checked): no GPU, SKIPPED.
exec sh "$(dirname "$0")/../common/planted_bug_test.sh" "$1" "$2" \
  "traffic --width 12 --height 9 --iterations 100 --seed 3 --spawn-rate 0.3 --check --check-every 1" \
  "FAILED at iteration [0-9]* (heap): " \
  "no difference from the reference reported" \
  "" \
  "traffic --iterations 100 --spawn-rate 0.3 --check --check-every 1" \
  some

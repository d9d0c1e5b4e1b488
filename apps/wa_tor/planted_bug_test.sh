#!/bin/sh
# wa_tor_planted_bug (docs/apps.md "wa-tor", "Planted bug"): the app built with
# HEAPLAB_MUTANT_NAME="wa_tor_shark_eats_without_free" must fail --check (exit 1): an eaten fish's
# object stays live while no cell points at it. The heap variant shows it at the first full check
# after a shark ate (--check-every 1: iteration 1 at these densities); the correct app must pass
# the same run with all three variants. Exit code 4 from the app (not checked): no GPU, reported as SKIPPED.
exec sh "$(dirname "$0")/../common/planted_bug_test.sh" "$1" "$2" \
  "wa-tor --width 64 --height 48 --iterations 20 --seed 3 --fish-density 0.4 --shark-density 0.1 --check --check-every 1" \
  "wa-tor --check FAILED at iteration 1 (heap): fish object is not in the cell it names" \
  "the leaked fish object was not reported at iteration 1" \
  "--baseline --cuda-malloc" \
  "wa-tor --iterations 20 --fish-density 0.4 --shark-density 0.1 --check --check-every 1"

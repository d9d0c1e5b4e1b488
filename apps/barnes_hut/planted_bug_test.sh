#!/bin/sh
# barnes_hut_planted_bug (docs/apps.md "barnes-hut", "Planted bug"): the app built with
# HEAPLAB_MUTANT_NAME="barnes_hut_quadrant_swaps_axes" sends a body whose leaf split to the child
# of the quadrant with x and y exchanged. --check must fail (exit 1) at iteration 1 with a body
# outside its leaf's box (the CPU test BarnesHutCheck.ReportsABodyOutsideItsLeaf feeds the checker
# such a tree); the correct app must pass the same run, and the same on random body counts (every
# one: with more than kLeafCapacity bodies the root splits, and half the bodies are then in a
# quadrant that the swap changes).
exec sh "$(dirname "$0")/../common/planted_bug_test.sh" "$1" "$2" \
  "barnes-hut --bodies 1000 --iterations 3 --seed 3 --check --check-every 1" \
  "FAILED at iteration 1: .* is outside its leaf's box" \
  "no body outside its leaf's box reported" \
  "" \
  "barnes-hut --iterations 3 --check --check-every 1"

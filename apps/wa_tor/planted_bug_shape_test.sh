#!/bin/sh
# wa_tor_shape_planted_bug (docs/apps.md "wa-tor", "Planted bug"): the app built with
# HEAPLAB_MUTANT_NAME="wa_tor_north_wrap_uses_width" takes an agent's north neighbour as row
# (y + width - 1) % height, the row above only when the width is a multiple of the height. On
# 67 x 17 every agent looks north at the wrong row, so it must fail --check (exit 1) with births
# and deaths that differ from the CPU reference (at iteration 1 on this run, by a CPU model of the
# bug; any iteration is accepted); the correct app must pass the same run with all three variants.
# Random shapes (RANDOM_MODE some): a square draw does not show the bug, so it must be caught on
# at least one shape and the correct app must pass all. Exit code 4 from the app (not checked): no
# GPU, reported as SKIPPED.
exec sh "$(dirname "$0")/../common/planted_bug_test.sh" "$1" "$2" \
  "wa-tor --width 67 --height 17 --iterations 20 --seed 3 --fish-density 0.4 --shark-density 0.1 --check --check-every 1" \
  "wa-tor --check FAILED at iteration [0-9]* (heap): births/deaths differ from the CPU reference" \
  "no births/deaths that differ from the CPU reference reported" \
  "--baseline --cuda-malloc" \
  "wa-tor --iterations 20 --fish-density 0.4 --shark-density 0.1 --check --check-every 1" \
  some

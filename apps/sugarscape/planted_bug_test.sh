#!/bin/sh
# sugarscape_planted_bug (docs/apps.md "sugarscape", "Planted bug"): the app built with
# HEAPLAB_MUTANT_NAME="sugarscape_father_does_not_pay" takes a child's endowment from the mother
# only. --check must fail (exit 1) at the first iteration with a birth, naming a father whose sugar
# is kMateCost above the reference's (the CPU test SugarscapeCheck.CatchesAFatherWhoDidNotPay says
# the checker reports it); the correct app must pass the same run. Random shapes (RANDOM_MODE
# some): on a sparse grid no couple may meet within the run, so it must be caught on at least one.
# Exit code 4 from the app (not checked): no GPU, SKIPPED.
exec sh "$(dirname "$0")/../common/planted_bug_test.sh" "$1" "$2" \
  "sugarscape --width 64 --height 48 --iterations 10 --seed 3 --density 0.4 --check --check-every 1" \
  "FAILED at iteration [0-9]* (heap): cell .*: reference Male sugar" \
  "no father's sugar reported" \
  "" \
  "sugarscape --iterations 20 --density 0.4 --check --check-every 1" \
  some

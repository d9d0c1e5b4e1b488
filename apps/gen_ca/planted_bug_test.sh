#!/bin/sh
# gen_ca_planted_bug (docs/apps.md "Planted bug"): the app built with
# HEAPLAB_MUTANT_NAME="gen_ca_skip_dying" must fail --check (exit 1, naming the first differing cell)
# in the first generation a cell reaches its last dying state; the correct app must pass the same
# run. Rule /2/3 (Brian's Brain): every alive cell dies after one generation, so the bug shows at
# generation 1. Exit code 4 from the app (not checked): no GPU, reported as SKIPPED.
exec sh "$(dirname "$0")/../common/planted_bug_test.sh" "$1" "$2" \
  "gen-ca --width 64 --height 48 --iterations 6 --seed 3 --density 0.3 --rule /2/3 --check --check-every 1" \
  "FAILED at generation 1: heap objects differ from the CPU reference at cell" \
  "no first differing cell at generation 1 reported" \
  "" \
  "gen-ca --iterations 6 --density 0.3 --rule /2/3 --check --check-every 1"

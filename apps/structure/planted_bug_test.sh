#!/bin/sh
# structure_planted_bug (docs/apps.md "structure"): the app built with
# HEAPLAB_MUTANT_NAME="structure_keep_orphan_springs" must fail --check (exit 1) with a live spring
# whose endpoint is not a live node once the pulled column has torn off (scenario pull: iteration 8
# on this mesh, where the CPU simulation removes its first nodes); the correct app must pass the
# same run. Exit code 4 from the app (not checked): no GPU, reported as SKIPPED.
exec sh "$(dirname "$0")/../common/planted_bug_test.sh" "$1" "$2" \
  "structure --scenario pull --width 24 --height 12 --iterations 20 --load 0.2 --threshold 0.05 --seed 1 --check --check-every 1" \
  "structure --check FAILED at iteration [0-9]* (heap): live spring [0-9]* names an endpoint that is not a live node" \
  "no spring to a dead node reported" \
  "--baseline" \
  "structure --scenario pull --iterations 60 --load 0.2 --threshold 0.05 --check --check-every 1"

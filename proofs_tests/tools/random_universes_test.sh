#!/usr/bin/env bash
# The random-layout universes (src/heaplab/families/heap/gpu/random_universes.cuh and
# universe_random_K.cu) are what tools/gen-random-universes makes: --check passes on the tree and
# reports the files as out of date against another seed's output.
#   random_universes_test.sh SOURCE_DIR
set -uo pipefail
gen="$1/tools/gen-random-universes"
out=$("$gen" --check 2>&1)
status=$?
if [[ $status -ne 0 ]]; then
  echo "FAIL: the generated universes are out of date (exit $status):"
  echo "$out"
  exit 1
fi
echo "ok: $out"
out=$("$gen" --check --seed 1 2>&1)
status=$?
if [[ $status -ne 1 ]] || ! grep -q "random_universes.cuh: out of date" <<< "$out"; then
  echo "FAIL: another seed's universes were not reported (exit $status):"
  echo "$out"
  exit 1
fi
echo "ok: another seed's universes are reported as out of date"

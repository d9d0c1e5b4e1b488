#!/usr/bin/env bash
# tools/check-includes against planted trees: each upward include must be reported with its file
# and line, a clean tree must pass, and the real repository must pass.
#   include_rule_test.sh SOURCE_DIR
set -uo pipefail
src="$1"
check="$src/tools/check-includes"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
expect() {  # expect STATUS PATTERN OUTPUT-FILE what
  local want=$1 pattern=$2 out=$3 what=$4 status=$5
  if [ "$status" -ne "$want" ] || ! grep -qE "$pattern" "$out"; then
    echo "FAIL: $what (exit $status, wanted $want and /$pattern/):"; cat "$out"; failed=1
  else
    echo "ok: $what"
  fi
}
plant() {  # plant FILE INCLUDE: a tree with one file holding one include
  mkdir -p "$tmp/t/$(dirname "$1")"
  printf '// planted\n#include <cstdint>\n#include "%s"\n' "$2" > "$tmp/t/$1"
}

"$check" "$src" > "$tmp/out" 2>&1
expect 0 "rule holds" "$tmp/out" "the repository itself" $?

cases=(
  "src/heaplab/core/bitops.hpp|heaplab/check/snapshot.hpp|core includes heaplab/check"
  "src/heaplab/check/invariants.cpp|heaplab/soa/heap.cuh|check includes heaplab/soa"
  "models/heaplab/model/heap_model.cpp|heaplab/compact/options.hpp|models includes heaplab/compact"
  "src/heaplab/runner/stress.cpp|heaplab/soa/heap.cuh|runner includes heaplab/soa"
  "src/heaplab/runner/minimize.cpp|heaplab/families/heap/family.hpp|runner includes heaplab/families"
  "src/heaplab/runner/registry.cpp|heaplab/model/heap_model.hpp|runner includes heaplab/model"
  "models/heaplab/model/rw_model.cpp|heaplab/families/rw/rw_runner.hpp|models includes heaplab/families"
  "src/heaplab/rw/page_pool.hpp|heaplab/runner/family.hpp|rw includes heaplab/runner"
  "src/heaplab/compact/detail/kernels.cuh|heaplab/runner/runner.hpp|compact includes heaplab/runner"
  "src/heaplab/schedule/json.cpp|heaplab/explore/explore.hpp|schedule includes heaplab/explore"
)
for c in "${cases[@]}"; do
  IFS='|' read -r file include pattern <<< "$c"
  rm -rf "$tmp/t"; mkdir -p "$tmp/t/src/heaplab"
  plant "$file" "$include"
  "$check" "$tmp/t" > "$tmp/out" 2>&1
  expect 1 "^$file:3: $pattern" "$tmp/out" "planted: $file includes $include" $?
done

# Allowed includes pass: a family includes anything below it (the heap family's GPU runner: soa and
# compact; any family: the runner layer and the models).
rm -rf "$tmp/t"; mkdir -p "$tmp/t/src/heaplab"
plant src/heaplab/families/heap/gpu/x.cu heaplab/compact/compactor.cuh
plant src/heaplab/families/rw/w.cpp heaplab/model/rw_model.hpp
plant src/heaplab/families/bump/v.cpp heaplab/runner/family.hpp
plant src/heaplab/soa/y.cuh heaplab/check/snapshot.hpp
plant models/heaplab/model/z.cpp heaplab/schedule/plan.hpp
"$check" "$tmp/t" > "$tmp/out" 2>&1
expect 0 "rule holds" "$tmp/out" "a tree of allowed includes" $?
exit $failed

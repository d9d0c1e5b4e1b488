#!/bin/sh
# apps_planted_bug_script_test (cpu): common/planted_bug_test.sh against stub apps. It must pass
# when the mutant exits 1 with the expected line and the correct app passes, say SKIPPED on exit
# 4 (not checked), and fail when the mutant is not caught, reports something else, or the correct app fails.
script="$(dirname "$0")/planted_bug_test.sh"
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
stub() {  # name exit-code output
  printf '#!/bin/sh\necho "%s"\nexit %s\n' "$3" "$2" > "$dir/$1"
  chmod +x "$dir/$1"
}
stub caught 1 "demo --check FAILED at iteration 1 (heap): the bug"
stub missed 0 "demo --check passed"
stub other 1 "demo --check FAILED at iteration 1 (heap): something else"
stub nogpu 4 "heaplab_apps: SKIPPED: no CUDA device"
stub correct 0 "demo --check passed"
stub broken 1 "demo --check FAILED at iteration 2 (heap): x"
run() {  # expected-exit mutant correct
  out=$(sh "$script" "$dir/$2" "$dir/$3" "demo --check" "FAILED at iteration 1 (heap): the bug" "not caught" 2>&1)
  rc=$?
  if [ "$rc" -ne "$1" ]; then echo "FAIL: $2/$3 exited $rc, expected $1"; echo "$out"; exit 1; fi
  echo "$out" | tail -1
}
run 0 caught correct | grep -q "^PASS" || { echo "FAIL: a caught bug did not pass"; exit 1; }
run 0 nogpu correct | grep -q "SKIPPED" || { echo "FAIL: exit 4 not SKIPPED"; exit 1; }
run 1 missed correct >/dev/null || exit 1
run 1 other correct >/dev/null || exit 1
run 1 caught broken >/dev/null || exit 1
# Random shapes (RANDOM_ARGS): a mutant caught on every shape passes, with the seed printed; one
# caught only at the fixed shape fails; the seed comes from HEAPLAB_SHAPE_SEED when set.
printf '#!/bin/sh\ncase "$*" in *--random-shape*) echo "demo --check passed"; exit 0;; esac\necho "demo --check FAILED at iteration 1 (heap): the bug"\nexit 1\n' > "$dir/fixedonly"
chmod +x "$dir/fixedonly"
stub later 1 "demo --check FAILED at iteration 7 (heap): the bug"
random() {  # expected-exit mutant
  out=$(HEAPLAB_SHAPES=3 HEAPLAB_SHAPE_SEED=41 sh "$script" "$dir/$2" "$dir/correct" "demo --check --width 8" \
        "FAILED at iteration 1 (heap): the bug" "not caught" "" "demo --check" 2>&1)
  rc=$?
  if [ "$rc" -ne "$1" ]; then echo "FAIL: random shapes, $2 exited $rc, expected $1"; echo "$out"; exit 1; fi
  echo "$out"
}
random 0 caught | grep -q "random shapes: 3 from seed 41" || { echo "FAIL: no seed printed"; exit 1; }
random 1 fixedonly | grep -q "FAIL: the planted bug exited 0, expected 1 (demo --check --random-shape 41)" ||
  { echo "FAIL: a bug missed on a random shape was not reported with its shape"; exit 1; }
# The fixed run wants iteration 1; random shapes accept any iteration.
out=$(HEAPLAB_SHAPES=3 HEAPLAB_SHAPE_SEED=1 sh "$script" "$dir/later" "$dir/correct" "demo --check" \
      "FAILED at iteration [0-9]* (heap): the bug" "not caught" "" "demo --check" 2>&1) ||
  { echo "FAIL: a bug caught at iteration 7 on random shapes failed"; echo "$out"; exit 1; }
echo "PASS: the planted-bug script passes, skips and fails as it should"

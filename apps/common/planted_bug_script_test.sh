#!/bin/sh
# apps_planted_bug_script_test (cpu): common/planted_bug_test.sh against stub apps. It must pass
# when the mutant exits 1 with the expected line and the correct app passes, say SKIPPED on exit
# 4 (not checked), and fail when the mutant is not caught, reports something else, or the correct app fails;
# on random shapes in mode every (each shape) and mode some (at least one shape).
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
# RANDOM_MODE some (a bug that shows only on some shapes): caught on one of the random shapes is
# enough; caught on none fails, and so do a wrong report, a crash or a correct app that fails on
# a shape the mutant passes; an unknown mode fails.
printf '#!/bin/sh\ncase "$*" in *--random-shape\ 4[13]*) echo "demo --check passed"; exit 0;; esac\necho "demo --check FAILED at iteration 3 (heap): the bug"\nexit 1\n' > "$dir/someshapes"
printf '#!/bin/sh\ncase "$*" in *--random-shape\ 41*) echo "demo --check FAILED at iteration 1 (heap): x"; exit 1;; esac\necho "demo --check passed"\n' > "$dir/brokenon41"
printf '#!/bin/sh\ncase "$*" in *--random-shape\ 42*) echo "demo --check FAILED at iteration 1 (heap): else"; exit 1;; esac\necho "demo --check FAILED at iteration 1 (heap): the bug"\nexit 1\n' > "$dir/wrongon42"
printf '#!/bin/sh\ncase "$*" in *--random-shape\ 42*) exit 2;; esac\necho "demo --check FAILED at iteration 1 (heap): the bug"\nexit 1\n' > "$dir/crashon42"
chmod +x "$dir/someshapes" "$dir/brokenon41" "$dir/wrongon42" "$dir/crashon42"
some() {  # expected-exit mutant correct [mode]
  out=$(HEAPLAB_SHAPES=3 HEAPLAB_SHAPE_SEED=41 sh "$script" "$dir/$2" "$dir/$3" "demo --check --width 8" \
        "FAILED at iteration [0-9]* (heap): the bug" "not caught" "" "demo --check" "${4:-some}" 2>&1)
  rc=$?
  if [ "$rc" -ne "$1" ]; then echo "FAIL: mode ${4:-some}, $2/$3 exited $rc, expected $1"; echo "$out"; exit 1; fi
  echo "$out"
}
out=$(some 0 someshapes correct) || exit 1
echo "$out" | grep -q "random shapes: the planted bug was caught on 1 of 3" && echo "$out" | tail -1 | grep -q "^PASS" ||
  { echo "FAIL: a bug caught on one random shape of three did not pass in mode some"; echo "$out"; exit 1; }
some 1 someshapes correct every | grep -q "FAIL: the planted bug exited 0, expected 1 (demo --check --random-shape 41)" ||
  { echo "FAIL: mode every let a shape pass"; exit 1; }
some 1 fixedonly correct | grep -q "FAIL: the planted bug was caught on none of the 3 random shapes from seed 41" ||
  { echo "FAIL: mode some passed a bug caught on no random shape"; exit 1; }
some 1 someshapes brokenon41 | grep -q "FAIL: the correct app exited 1 on the same run (demo --check --random-shape 41 )" ||
  { echo "FAIL: mode some passed a correct app that fails on a shape the mutant passes"; exit 1; }
some 1 wrongon42 correct | grep -q "FAIL: not caught (demo --check --random-shape 42)" ||
  { echo "FAIL: mode some passed a wrong report"; exit 1; }
some 1 crashon42 correct | grep -q "FAIL: the planted bug exited 2, expected 1 (demo --check --random-shape 42)" ||
  { echo "FAIL: mode some passed a crash"; exit 1; }
some 1 caught correct sometimes | grep -q "RANDOM_MODE 'sometimes' is not every or some" ||
  { echo "FAIL: an unknown mode was accepted"; exit 1; }
echo "PASS: the planted-bug script passes, skips and fails as it should"

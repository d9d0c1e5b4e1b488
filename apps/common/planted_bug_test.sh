#!/bin/sh
# The planted-bug test every app shares (docs/apps.md, each app's "Planted bug"; docs/mutants.md
# "Applications"); each app's <app>/planted_bug_test.sh names the run and what must be reported.
#
#   planted_bug_test.sh MUTANT CORRECT "ARGS" "EXPECTED" "WHY" ["CORRECT_EXTRA" ["RANDOM_ARGS" [RANDOM_MODE]]]
#
# MUTANT (the app built with the bug) run with ARGS must exit 1 and print a line matching the
# grep pattern EXPECTED (WHY names it when it does not); CORRECT run with ARGS CORRECT_EXTRA must
# exit 0 and print "<app> --check passed" (<app>: ARGS' first word). Exit code 4 from the mutant
# (not checked: no usable CUDA device, docs/cli.md "Exit statuses"), reported as SKIPPED.
#
# With RANDOM_ARGS, the same is then asserted on $HEAPLAB_SHAPES (default 3) random shapes: RANDOM_ARGS
# (the options that make the bug observable, no shape) plus --random-shape S for S = SEED, SEED+1,
# ... where SEED is $HEAPLAB_SHAPE_SEED or drawn from the clock, printed so that a failure replays
# (docs/apps.md "Random shapes"); EXPECTED then matches any iteration or generation number.
# RANDOM_MODE "every" (the default) wants the bug caught on every shape; "some" (a bug that shows
# only on some shapes, e.g. not on a square one) wants it caught on at least one of them and lets
# the mutant pass the others (exit 0 with "<app> --check passed"; any other exit or report fails),
# and the correct app must pass every shape in both modes.
mutant="$1"
correct="$2"
args="$3"
expected="$4"
why="$5"
extra="$6"
random_args="$7"
mode="${8:-every}"
app=${args%% *}
case "$mode" in every | some) ;; *) echo "FAIL: RANDOM_MODE '$mode' is not every or some"; exit 1 ;; esac
caught=0
# check ARGS EXPECTED [MAY_PASS]: one mutant run and one correct run; exits the script on a
# failure. MAY_PASS: the mutant may pass this run; caught counts the runs where it was caught.
check() {
  out=$("$mutant" $1 2>&1)
  rc=$?
  echo "$out"
  if [ "$rc" -eq 4 ]; then echo "SKIPPED: no CUDA device"; exit 0; fi
  if [ -n "$3" ] && [ "$rc" -eq 0 ] && echo "$out" | grep -q "$app --check passed"; then
    echo "not caught on this shape (allowed: RANDOM_MODE some) ($1)"
  else
    if [ "$rc" -ne 1 ]; then echo "FAIL: the planted bug exited $rc, expected 1 ($1)"; exit 1; fi
    echo "$out" | grep -q "$2" || { echo "FAIL: $why ($1)"; exit 1; }
    caught=$((caught + 1))
  fi
  out=$("$correct" $1 $extra 2>&1)
  rc=$?
  echo "$out"
  [ "$rc" -eq 0 ] && echo "$out" | grep -q "$app --check passed" ||
    { echo "FAIL: the correct app exited $rc on the same run ($1 $extra)"; exit 1; }
}
check "$args" "$expected"
if [ -n "$random_args" ]; then
  seed=${HEAPLAB_SHAPE_SEED:-$(( $(date +%s) % 1000000 ))}
  shapes=${HEAPLAB_SHAPES:-3}
  any=$(echo "$expected" | sed 's/at \(iteration\|generation\) [0-9][0-9]*\b/at \1 [0-9]*/')
  may_pass=""
  [ "$mode" = some ] && may_pass=yes
  echo "random shapes: $shapes from seed $seed (replay: HEAPLAB_SHAPE_SEED=$seed; mode $mode)"
  caught=0
  k=0
  while [ "$k" -lt "$shapes" ]; do
    check "$random_args --random-shape $((seed + k))" "$any" "$may_pass"
    k=$((k + 1))
  done
  if [ "$caught" -eq 0 ] && [ "$shapes" -gt 0 ]; then
    echo "FAIL: the planted bug was caught on none of the $shapes random shapes from seed $seed"
    exit 1
  fi
  echo "random shapes: the planted bug was caught on $caught of $shapes"
fi
echo "PASS: the planted bug was caught, the correct app passed"

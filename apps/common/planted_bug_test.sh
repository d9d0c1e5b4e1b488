#!/bin/sh
# The planted-bug test every app shares (docs/apps.md, each app's "Planted bug"; docs/mutants.md
# "Applications"); each app's <app>/planted_bug_test.sh names the run and what must be reported.
#
#   planted_bug_test.sh MUTANT CORRECT "ARGS" "EXPECTED" "WHY" ["CORRECT_EXTRA" ["RANDOM_ARGS"]]
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
mutant="$1"
correct="$2"
args="$3"
expected="$4"
why="$5"
extra="$6"
random_args="$7"
app=${args%% *}
# check ARGS EXPECTED: one mutant run and one correct run; exits the script on a failure
check() {
  out=$("$mutant" $1 2>&1)
  rc=$?
  echo "$out"
  if [ "$rc" -eq 4 ]; then echo "SKIPPED: no CUDA device"; exit 0; fi
  if [ "$rc" -ne 1 ]; then echo "FAIL: the planted bug exited $rc, expected 1 ($1)"; exit 1; fi
  echo "$out" | grep -q "$2" || { echo "FAIL: $why ($1)"; exit 1; }
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
  any=$(echo "$expected" | sed 's/at \(iteration\|generation\) 1\b/at \1 [0-9]*/')
  echo "random shapes: $shapes from seed $seed (replay: HEAPLAB_SHAPE_SEED=$seed)"
  k=0
  while [ "$k" -lt "$shapes" ]; do
    check "$random_args --random-shape $((seed + k))" "$any"
    k=$((k + 1))
  done
fi
echo "PASS: the planted bug was caught, the correct app passed"

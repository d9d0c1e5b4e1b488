#!/bin/sh
# wa_tor_planted_bug (docs/apps.md "wa-tor", "Planted bug"): the app built with
# HEAPLAB_MUTANT_NAME="wa_tor_shark_eats_without_free" must fail --check (exit 1): an eaten fish's
# object stays live while no cell points at it. The heap variant shows it at the first full check
# after a shark ate (--check-every 1: iteration 1 at these densities); the correct app must pass
# the same run with all three variants. Exit code 77 from the app: no GPU, reported as SKIPPED.
mutant="$1"
correct="$2"
args="wa-tor --width 64 --height 48 --iterations 20 --seed 3 --fish-density 0.4 --shark-density 0.1 --check --check-every 1"
out=$("$mutant" $args 2>&1)
rc=$?
echo "$out"
if [ "$rc" -eq 77 ]; then echo "SKIPPED: no CUDA device"; exit 0; fi
if [ "$rc" -ne 1 ]; then echo "FAIL: the planted bug exited $rc, expected 1"; exit 1; fi
echo "$out" | grep -q "wa-tor --check FAILED at iteration 1 (heap): fish object is not in the cell it names" ||
  { echo "FAIL: the leaked fish object was not reported at iteration 1"; exit 1; }
out=$("$correct" $args --baseline --cuda-malloc 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 0 ] && echo "$out" | grep -q "wa-tor --check passed" ||
  { echo "FAIL: the correct app exited $rc on the same run"; exit 1; }
echo "PASS: the planted bug was caught, the correct app passed"

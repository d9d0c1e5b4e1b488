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
echo "PASS: the planted-bug script passes, skips and fails as it should"

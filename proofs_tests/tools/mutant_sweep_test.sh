#!/usr/bin/env bash
# tools/mutant-sweep's own logic, on stub programs in a fake build folder (no build, no GPU):
#  - --planting runs a row in the planting build with HEAPLAB_PLANT=<its bug> and counts a failing
#    check as caught only when the check said "planted bug '<name>'";
#  - a failing check that never said so is "not planted" (not caught) and fails the sweep;
#  - a check that passes is "no";
#  - a stress that never returns is killed at BUDGET + slack and counted as a hang, not a pass.
#   mutant_sweep_test.sh SOURCE_ROOT
set -uo pipefail
root="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
check() {  # DESCRIPTION COMMAND...: the command must succeed
  local what="$1"
  shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fail=1; fi
}

# A planting build folder whose heaplab_explore and heaplab are stubs; MODE says what they do.
stub_build() {
  local b="$work/build-$1"
  mkdir -p "$b/mutant-planting/tools"
  cat > "$b/mutant-planting/tools/heaplab_explore" <<STUB
#!/usr/bin/env bash
case "$1" in
  planted) echo "heaplab: planted bug '\$HEAPLAB_PLANT' (HEAPLAB_PLANT; a planting build)" >&2
           echo "heaplab explorer: FAILURE"; echo "  outcome:  deadlock"; exit 1 ;;
  silent)  echo "heaplab explorer: FAILURE"; exit 1 ;;
  passes)  echo "heaplab: planted bug '\$HEAPLAB_PLANT' (HEAPLAB_PLANT; a planting build)" >&2; exit 0 ;;
esac
STUB
  cat > "$b/mutant-planting/tools/heaplab" <<STUB
#!/usr/bin/env bash
echo "heaplab: planted bug '\$HEAPLAB_PLANT' (HEAPLAB_PLANT; a planting build)" >&2
exec sleep 1000
STUB
  chmod +x "$b/mutant-planting/tools/heaplab_explore" "$b/mutant-planting/tools/heaplab"
  echo "$b"
}

sweep() {  # MODE ONLY [options...]: the sweep's status; its output in $work/MODE.log
  local mode="$1" only="$2"
  shift 2
  local b
  b=$(stub_build "$mode")
  "$root/tools/mutant-sweep" --planting --no-build --build-root "$b" --out-root "$work/out-$mode" \
    --budget 1 --only "$only" "$@" >"$work/$mode.log" 2>&1
}

sweep planted dealloc_no_reactivate
status=$?
check "a planted, failing check is caught" grep -qE '^dealloc_no_reactivate +core +yes' "$work/planted.log"
check "the sweep passes when every row is caught (status $status)" test "$status" -eq 0
check "HEAPLAB_PLANT named the row's bug" grep -q "planted bug 'dealloc_no_reactivate'" \
  "$work/out-planted/dealloc_no_reactivate/check.log"

sweep silent dealloc_no_reactivate
status=$?
check "a failing check without the planted line is not planted" \
  grep -qE '^dealloc_no_reactivate +core +not planted' "$work/silent.log"
check "and fails the sweep (status $status)" test "$status" -ne 0

sweep passes dealloc_no_reactivate
status=$?
check "a passing check is not caught" grep -qE '^dealloc_no_reactivate +core +no ' "$work/passes.log"
check "and fails the sweep (status $status)" test "$status" -ne 0

start=$(date +%s)
HEAPLAB_SWEEP_SLACK=1 sweep hangs delete_keeps_defrag_bit
took=$(($(date +%s) - start))
check "a stress that never returns is killed and counted as a hang" \
  grep -qE '^delete_keeps_defrag_bit +core\+gpu +yes' "$work/hangs.log"
check "within the budget and the slack (${took} s)" test "$took" -lt 30
grep -q "killed after BUDGET + 1 s (a hang)" "$work/out-hangs/delete_keeps_defrag_bit/check.log" ||
  { echo "FAIL: the hang's log does not say it was killed"; fail=1; }
[[ $fail -eq 0 ]] || for f in "$work"/*.log; do echo "== $f"; cat "$f"; done
exit $fail

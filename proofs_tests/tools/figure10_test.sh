#!/usr/bin/env bash
# tools/figure10 and tools/plot-figure10 (docs/apps.md "Other allocators") against a stub
# heaplab_apps whose result lines are known: the CSV holds exactly them, the table's ratio to the
# heap is right, a failing app makes the exit status 1 while the others are still tabulated, bad
# arguments exit 2, and the plot is a PNG (that part SKIPPED without matplotlib).
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$(dirname "$0")/support/check.sh"  # $tmp, check, fail
cat > "$tmp/apps" <<'STUB'
#!/bin/sh
echo "args: $*"
case "$1" in
  nbody)
    echo "result app=nbody variant=heap ms=100.000 enumeration_ms=-"
    echo "result app=nbody variant=baseline ms=50.000 enumeration_ms=-"
    echo "result app=nbody variant=cuda-malloc ms=250.000 enumeration_ms=20.000"
    echo "result app=other variant=heap ms=1.000 enumeration_ms=-"   # another app's line: ignored
    exit 0 ;;
  collision) echo "collision --check FAILED"; exit 1 ;;
esac
exit 3
STUB
chmod +x "$tmp/apps"
out=$("$src/tools/figure10" --bin "$tmp/apps" --apps nbody,collision --allocators cuda-malloc \
      --size small --out "$tmp/f" 2>&1); rc=$?
check "a failed app: exit 1" test "$rc" -eq 1
check "the failure is named with its log" grep -q "collision run 1: FAILED (exit 1" <<<"$out"
check "the stub got the small size, --baseline and --allocators" \
  grep -q "args: nbody --bodies 1024 --iterations 20 --baseline --allocators cuda-malloc" "$tmp/f/nbody-1.log"
check "CSV: header and the three nbody rows only" test "$(cat "$tmp/f/figure10.csv")" = \
"app,size,run,variant,ms,enumeration_ms
nbody,small,1,heap,100.000,
nbody,small,1,baseline,50.000,
nbody,small,1,cuda-malloc,250.000,20.000"
check "table: cuda-malloc / heap 2.50" grep -qE "nbody +cuda-malloc +250.000 +2.50" <<<"$out"
check "table: baseline / heap 0.50" grep -qE "nbody +baseline +50.000 +0.50" <<<"$out"
"$src/tools/figure10" --bin "$tmp/apps" --apps nbody --out "$tmp/g" >/dev/null 2>&1
check "all passed: exit 0" test $? -eq 0
"$src/tools/figure10" --bin "$tmp/apps" --apps nbody,linux-scalability --out "$tmp/h" 2>"$tmp/err"
check "unknown app: exit 2" test $? -eq 2
check "unknown app: named" grep -q "unknown application(s) linux-scalability" "$tmp/err"
"$src/tools/figure10" --bin "$tmp/none" --out "$tmp/h" 2>/dev/null
check "missing binary: exit 2" test $? -eq 2
"$src/tools/plot-figure10" "$tmp/none.csv" "$tmp/x.png" 2>/dev/null
check "plot: missing CSV exits 2" test $? -eq 2
if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  check "plot: a PNG" test "$(head -c 8 "$tmp/f/figure10.png" | od -An -tx1 | tr -d ' \n')" = \
    "89504e470d0a1a0a"
else
  echo "SKIPPED (plot only): /usr/bin/python3 has no matplotlib (tools/setup installs it)"
fi
exit $fail

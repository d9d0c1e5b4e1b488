#!/usr/bin/env bash
# tools/figure11 and tools/plot-figure11 (docs/apps.md "Same memory for every variant") against a
# stub heaplab_apps whose limits are known: a probe fits (exit 0) up to a size per variant and does
# not fit above it (exit 5 and `result ... fits=0`), so the search must find exactly those sizes;
# the probes get --only, --memory-mib and the app's fixed options; a probe that fails otherwise
# (exit 1, or exit 5 without the fits=0 line) makes the run exit 1 and is never taken for "does
# not fit"; bad arguments exit 2; the plot is a PNG (that part SKIPPED without matplotlib).
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$(dirname "$0")/support/check.sh"  # $tmp, check, fail
# The stub: nbody fits up to 10000 bodies on the heap, 20000 on the baseline, 2500 on cuda-malloc,
# 3001 on rw-malloc; collision's rw-malloc crashes (exit 1) above 5000 bodies; wa-tor's heap fits
# up to width 300 (any height), its cuda-malloc exits 5 WITHOUT the fits=0 line above width 100.
cat > "$tmp/apps" <<'STUB'
#!/bin/sh
echo "args: $*"
app=$1; shift
size=0; variant=; mib=
while [ $# -gt 0 ]; do
  case "$1" in
    --bodies|--width) size=$2; shift ;;
    --only) variant=$2; shift ;;
    --memory-mib) mib=$2; shift ;;
  esac
  shift
done
[ "$mib" = 7 ] || { echo "no --memory-mib 7"; exit 2; }
case "$app/$variant" in
  nbody/heap) limit=10000 ;; nbody/baseline) limit=20000 ;; nbody/cuda-malloc) limit=2500 ;;
  nbody/rw-malloc) limit=3001 ;;
  collision/heap|collision/cuda-malloc) limit=8000 ;;
  collision/rw-malloc) [ "$size" -gt 5000 ] && { echo "CUDA error: illegal address"; exit 1; }; limit=9999999 ;;
  wa-tor/heap) limit=300 ;;
  structure/heap) [ "$size" -gt 64 ] && { sleep 30; exit 0; }; limit=64 ;;
  wa-tor/cuda-malloc) [ "$size" -gt 100 ] && { echo "out of memory, but no result line"; exit 5; }; limit=9999 ;;
  *) echo "unexpected $app/$variant"; exit 2 ;;
esac
if [ "$size" -le "$limit" ]; then echo "result app=$app variant=$variant ms=1.0 enumeration_ms=-"; exit 0; fi
echo "result app=$app variant=$variant fits=0"
exit 5
STUB
chmod +x "$tmp/apps"
out=$("$src/tools/figure11" --bin "$tmp/apps" --apps nbody --memory-mib 7 --precision 0 \
      --out "$tmp/f" 2>&1); rc=$?
check "nbody: every search ended: exit 0" test "$rc" -eq 0
check "nbody: the largest sizes, exactly (precision 0 bisects to one body)" \
  test "$(cut -d, -f1,2,3,4,5,8 "$tmp/f/figure11.csv")" = \
"app,variant,memory_mib,unit,largest,status
nbody,heap,7,bodies,10000,ok
nbody,baseline,7,bodies,20000,ok
nbody,cuda-malloc,7,bodies,2500,ok
nbody,rw-malloc,7,bodies,3001,ok"
check "a probe has --only, --memory-mib and nbody's --iterations 1" \
  grep -q "args: nbody --bodies 10000 --iterations 1 --only heap --memory-mib 7" \
  "$tmp/f/logs/nbody-heap-10000.log"
check "table: cuda-malloc / heap 0.25" grep -qE "nbody +cuda-malloc +2500 bodies +0.25" <<<"$out"
check "table: baseline / heap 2.00" grep -qE "nbody +baseline +20000 bodies +2.00" <<<"$out"
check "probes.csv: one row per probe, fits 0 and 1 with exits 5 and 0" \
  test "$(grep -c ',1,0,' "$tmp/f/probes.csv")" -gt 0 -a "$(grep -c ',0,5,' "$tmp/f/probes.csv")" -gt 0
out=$("$src/tools/figure11" --bin "$tmp/apps" --apps collision,wa-tor --variants heap,cuda-malloc,rw-malloc \
      --memory-mib 7 --out "$tmp/g" 2>&1); rc=$?
check "a crashing probe: exit 1" test "$rc" -eq 1
check "the crash is a failure, not 'does not fit'" grep -q "collision,rw-malloc,7,bodies,[0-9]*,.*failed" "$tmp/g/figure11.csv"
check "exit 5 without the fits=0 line is a failure too" grep -q "wa-tor,cuda-malloc,7,cells,[0-9]*,.*failed" "$tmp/g/figure11.csv"
check "the failures are named on stderr" grep -q "collision rw-malloc: failed" <<<"$out"
check "wa-tor: grid sizes are width x height (aspect 0.5)" \
  grep -q "args: wa-tor --width 256 --height 128 --iterations 100 --only heap" "$tmp/g/logs/wa-tor-heap-256.log"
check "wa-tor heap: width 300 is the largest (300 x 150 cells) within 2%" \
  grep -qE "wa-tor,heap,7,cells,(2[9][4-9]|300)x?" <(sed 's/,\([0-9]*\),--width \([0-9]*\).*/,\2x/' "$tmp/g/figure11.csv")
# SIGTERM while a probe runs: the probe is stopped, the search so far is written, exit 130.
"$src/tools/figure11" --bin "$tmp/apps" --apps structure --variants heap --memory-mib 7 \
  --out "$tmp/t" > "$tmp/t.out" 2>&1 &
pid=$!
for _ in $(seq 50); do [ -e "$tmp/t/logs/structure-heap-128.log" ] && break; sleep 0.1; done
sleep 0.5
started=$(date +%s)
kill -TERM $pid
wait $pid; rc=$?
check "SIGTERM: exit 130" test "$rc" -eq 130
check "SIGTERM: the sleeping probe was stopped at once" test $(( $(date +%s) - started )) -lt 10
check "SIGTERM: the CSV holds the search so far, 'interrupted', 64 x 32 nodes fitted" \
  grep -q "structure,heap,7,nodes,2048,--width 64 --height 32,[0-9]*,interrupted" "$tmp/t/figure11.csv"
"$src/tools/figure11" --bin "$tmp/apps" --apps nbody,linux-scalability --out "$tmp/h" 2>"$tmp/err"
check "unknown app: exit 2" test $? -eq 2
check "unknown app: named" grep -q "unknown application(s) linux-scalability" "$tmp/err"
"$src/tools/figure11" --bin "$tmp/apps" --variants heap,halloc --out "$tmp/h" 2>"$tmp/err"
check "unknown variant: exit 2" test $? -eq 2
"$src/tools/figure11" --bin "$tmp/none" --out "$tmp/h" 2>/dev/null
check "missing binary: exit 2" test $? -eq 2
"$src/tools/plot-figure11" "$tmp/none.csv" "$tmp/x.png" 2>/dev/null
check "plot: missing CSV exits 2" test $? -eq 2
if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  check "plot: a PNG" test "$(head -c 8 "$tmp/f/figure11.png" | od -An -tx1 | tr -d ' \n')" = \
    "89504e470d0a1a0a"
else
  echo "SKIPPED (plot only): /usr/bin/python3 has no matplotlib (tools/setup installs it)"
fi
exit $fail

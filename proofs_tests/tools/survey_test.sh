#!/usr/bin/env bash
# tools/run-survey and tools/plot-survey (docs/survey.md) against stub survey programs whose
# answers are known: each stub appends to the CSV files it is given what the suite's programs
# append (alloc: "mean,std,min,max,median" to the alloc and the free file; frag: ",range,static"
# per iteration; oom: ",i" per round, then a fault). Checked: the suite's positional arguments;
# rows ok / failed (a crash, as the suite's read-back trap) / timeout / oom; the exit status (1 when
# a run is not ok, 2 on bad arguments, 130 on SIGTERM with every row so far kept); --resume skips
# the points already ok; plot-survey's summary names heaplab's best, the best peer and CUDA (the
# PNG part SKIPPED without matplotlib).
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$(dirname "$0")/support/check.sh"  # $tmp, check, fail
mkdir -p "$tmp/bin/survey/heaplab-rw-malloc" "$tmp/bin/survey/cuda" "$tmp/bin/survey/gallatin"
# alloc: num size iterations on_device warp generate free alloc_csv free_csv GiB device.
# heaplab: median 1.4 ms alloc, 0.4 free; cuda: 2.0 / 1.0, crashes above 1024 B; gallatin: 1.0 /
# 0.5, hangs at 64 B.
cat > "$tmp/alloc" <<'STUB'
#!/bin/sh
echo "args: $*"
[ $# -eq 11 ] || { echo "want 11 arguments"; exit 2; }
fw=$(basename "$(dirname "$0")")
echo "$fw $*" >> "$(dirname "$0")/../../calls"
case "$fw" in
  heaplab-rw-malloc) a=1.4; f=0.4 ;;
  cuda) [ "$2" -gt 1024 ] && { echo "We got a wrong value here!"; exit 1; }; a=2.0; f=1.0 ;;
  gallatin) [ "$2" -eq 64 ] && sleep 60; a=1.0; f=0.5 ;;
esac
printf '%s,0.1,%s,%s,%s' "$a" "$a" "$a" "$a" >> "$8"
printf '%s,0.1,%s,%s,%s' "$f" "$f" "$f" "$f" >> "$9"
STUB
# frag: num size iterations oom csv GiB device. oom: three rounds, then the fault of a null.
cat > "$tmp/frag" <<'STUB'
#!/bin/sh
[ $# -eq 7 ] || { echo "want 7 arguments"; exit 2; }
if [ "$4" = 1 ]; then printf ',0,1,2' >> "$5"; echo "illegal memory access"; exit 1; fi
printf ',100,200,150,300' >> "$5"
STUB
for fw in heaplab-rw-malloc cuda gallatin; do
  cp "$tmp/alloc" "$tmp/frag" "$tmp/bin/survey/$fw/"
  chmod +x "$tmp/bin/survey/$fw/alloc" "$tmp/bin/survey/$fw/frag"
done

out=$("$src/tools/run-survey" --bin "$tmp/bin" --out "$tmp/s" --tests alloc,frag,oom \
      --scale quick --timeout 2 --alloc-gib 3 2>&1); rc=$?
check "a crash and a hang: exit 1" test "$rc" -eq 1
check "the suite's positional arguments (alloc, thread-based, 3 GiB)" \
  grep -q "^heaplab-rw-malloc 100000 16 5 0 0 1 1 .*16.a.out .*16.b.out 3 0$" "$tmp/bin/calls"
check "heaplab's alloc at 4096 B: ok, median 1.4" \
  grep -q "^alloc,heaplab-rw-malloc,alloc,4096,100000,1.4,0.1,1.4,1.4,1.4,,ok," "$tmp/s/alloc.csv"
check "heaplab's free at 4096 B: median 0.4" \
  grep -q "^alloc,heaplab-rw-malloc,free,4096,100000,0.4,.*,ok," "$tmp/s/alloc.csv"
check "cuda above 1024 B: failed (the read-back check's crash)" \
  test "$(grep -c "^alloc,cuda,alloc,[0-9]*,.*,failed," "$tmp/s/alloc.csv")" -eq 2
check "gallatin at 64 B: timeout" grep -q "^alloc,gallatin,alloc,64,.*,timeout," "$tmp/s/alloc.csv"
check "gallatin at 128 B: ok after the timeout" grep -q "^alloc,gallatin,alloc,128,.*,ok," "$tmp/s/alloc.csv"
check "frag: the largest range over the iterations (300)" \
  grep -q "^frag,cuda,range,4,100000,,,,,,300,ok," "$tmp/s/frag.csv"
check "oom: three rounds, then the expected fault" \
  grep -q "^oom,heaplab-rw-malloc,rounds,8192,100000,,,,,,3,oom," "$tmp/s/oom.csv"
check "progress: one line per run" test "$(grep -c "^run-survey: alloc" <<< "$out")" -eq 27

calls=$(wc -l < "$tmp/bin/calls")
"$src/tools/run-survey" --bin "$tmp/bin" --out "$tmp/s" --tests alloc --scale quick --timeout 2 \
  --resume > /dev/null 2>&1
check "--resume runs only the points not ok (cuda 2048, 4096; gallatin 64)" \
  test "$(($(wc -l < "$tmp/bin/calls") - calls))" -eq 3

"$src/tools/run-survey" --bin "$tmp/bin" --out "$tmp/x" --tests nope > /dev/null 2>&1
check "an unknown test: exit 2" test $? -eq 2
"$src/tools/run-survey" --bin "$tmp/bin" --out "$tmp/x" --tests "" > /dev/null 2>&1
check "no test (without --build): exit 2" test $? -eq 2
"$src/tools/run-survey" --bin "$tmp/bin" --out "$tmp/x" --frameworks mine > /dev/null 2>&1
check "an unknown framework: exit 2" test $? -eq 2
"$src/tools/run-survey" --bin "$tmp/nothing" --out "$tmp/x" > /dev/null 2>&1
check "a missing build folder: exit 2" test $? -eq 2

# SIGTERM while gallatin hangs at 64 B (timeout 60): exit 130, heaplab's and gallatin's 16 B rows kept.
"$src/tools/run-survey" --bin "$tmp/bin" --out "$tmp/t" --tests alloc --scale quick --timeout 60 \
  --frameworks heaplab-rw-malloc,gallatin > "$tmp/t.log" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q "gallatin.*16 " "$tmp/t.log" 2> /dev/null && break; sleep 0.1; done
sleep 0.5
kill -TERM $pid
wait $pid
check "SIGTERM: exit 130" test $? -eq 130
check "SIGTERM: the rows so far are kept" grep -q "^alloc,gallatin,alloc,16,.*,ok," "$tmp/t/alloc.csv"
check "SIGTERM: the hanging program is stopped" \
  bash -c "! pgrep -f '$tmp/bin/survey/[g]allatin/alloc' > /dev/null"

"$src/tools/plot-survey" "$tmp/s" > "$tmp/plot.log" 2>&1
check "plot-survey: exit 0" test $? -eq 0
check "summary: at 128 B heaplab 1.4, best peer gallatin 1.0, CUDA 2.0, ratio 1.40x" \
  grep -q "^| 128 | heaplab-rw-malloc 1.4 | gallatin 1 | 2 | 1.40x |$" "$tmp/s/summary.md"
check "summary: oom rounds, higher is better" grep -q "^| 16 | heaplab-rw-malloc 3 | " "$tmp/s/summary.md"
if /usr/bin/python3 -c "import matplotlib" 2> /dev/null; then
  check "plot-survey: alloc.png is a PNG" bash -c "head -c 8 '$tmp/s/alloc.png' | grep -q PNG"
else
  echo "SKIPPED plot-survey's PNG: no matplotlib"
fi
"$src/tools/plot-survey" "$tmp/empty" > /dev/null 2>&1
check "plot-survey without CSVs: exit 1" test $? -eq 1
exit $fail

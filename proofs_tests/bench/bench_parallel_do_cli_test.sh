#!/usr/bin/env bash
# heaplab_bench parallel-do's command line on any machine (cpu tier): --help with its example, bad
# arguments (exit 2, one line naming the option), and a tiny run: without a GPU it says so and
# exits non-zero; with one it prints both cases with every row checked "ok" and writes the CSV.
#   bench_parallel_do_cli_test.sh HEAPLAB_BENCH
set -uo pipefail
# shellcheck source=bench_check.sh
source "$(dirname "$0")/bench_check.sh"  # bench, tmp, failed, check

check 0 "parallel-do .*do-all" "--help lists parallel-do" -- --help
check 0 "Examples:" "parallel-do --help has examples" -- parallel-do --help
check 0 "--objects" "parallel-do --help lists --objects" -- parallel-do --help
check 2 "error: .*--objects: objects 0 " "--objects 0" -- parallel-do --objects 0
check 2 "error: .*--objects: objects 100 .*multiple of 64" "--objects 100" -- parallel-do --objects 100
check 2 "error: .*--objects: objects x " "--objects x" -- parallel-do --objects x
check 2 "error: .*--fields.*0 not in range" "--fields 0" -- parallel-do --fields 0
check 2 "error: .*--fields.*5 not in range" "--fields 5" -- parallel-do --fields 1 5
check 2 "error: .*--cases.*half not in" "--cases half" -- parallel-do --cases half
check 2 "error: .*--repeats" "--repeats 0" -- parallel-do --repeats 0
"$bench" parallel-do --fields 7 > "$tmp/out" 2>&1
if [ "$(wc -l < "$tmp/out")" -ne 1 ]; then
  echo "FAIL: a bad parallel-do argument printed more than one line:"; cat "$tmp/out"; failed=1
else
  echo "ok: a bad parallel-do argument is one line"
fi

# Without a GPU: says so, non-zero. With one: a tiny run, 2 cases x 2 k, all rows "ok", CSV rows.
"$bench" parallel-do --objects 65536 --fields 1 4 --warmup 0 --repeats 2 --csv "$tmp/pdo.csv" \
  > "$tmp/out" 2>&1
status=$?
if grep -q "no CUDA device" "$tmp/out"; then
  if [ $status -eq 0 ]; then echo "FAIL: parallel-do without a GPU exited 0"; failed=1; else echo "ok: parallel-do without a GPU: exit $status, says so"; fi
elif [ $status -eq 0 ] && [ "$(grep -cE ' (full|fragmented) .* ok$' "$tmp/out")" -eq 4 ] &&
     [ "$(grep -cE '^65536,(full|fragmented),' "$tmp/pdo.csv")" -eq 4 ]; then
  echo "ok: a tiny parallel-do ran on the GPU, 4 rows checked"
else
  echo "FAIL: tiny parallel-do (exit $status):"; cat "$tmp/out"; failed=1
fi
exit $failed

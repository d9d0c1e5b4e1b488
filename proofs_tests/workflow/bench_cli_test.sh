#!/usr/bin/env bash
# heaplab_bench's command line on any machine (cpu tier): --help of `rw` and its figures, bad
# arguments (exit 2 and a one-line message naming the option), the model-only Fig. 4 grid against
# Eq. 2 summed by awk, and `rw fig7` without a GPU (it says so, exit non-zero) or, where a GPU is
# present, a tiny run that completes.
#   bench_cli_test.sh HEAPLAB_BENCH
set -uo pipefail
bench="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
check() {  # check WANTED-STATUS PATTERN what -- ARGS...: run heaplab_bench ARGS
  local want=$1 pattern=$2 what=$3
  shift 4
  "$bench" "$@" > "$tmp/out" 2>&1
  local status=$?
  if [ "$status" -ne "$want" ] || ! grep -qE -- "$pattern" "$tmp/out"; then
    echo "FAIL: $what (exit $status, wanted $want and /$pattern/):"; cat "$tmp/out"; failed=1
  else
    echo "ok: $what"
  fi
}

check 0 "rw .*Random-walk" "--help lists rw" -- --help
check 0 "Examples:.*" "rw --help has examples" -- rw --help
check 0 "fig12 " "rw --help lists fig12" -- rw --help
check 0 "--free-percent" "rw fig7 --help" -- rw fig7 --help
check 0 "--model-only" "rw fig4 --help" -- rw fig4 --help
check 0 "--match-rate" "rw fig12 --help" -- rw fig12 --help
check 2 "error: .*--free-percent" "fig7 --free-percent 150" -- rw fig7 --free-percent 150
check 2 "error: .*foo not in" "fig7 --allocators foo" -- rw fig7 --allocators foo
check 2 "error: .*do not in" "fig7 has no DO" -- rw fig7 --allocators do
check 2 "error: .*nope not in" "fig12 --allocators nope" -- rw fig12 --allocators nope
check 2 "error: .*page size 100" "fig7 --page-bytes 100" -- rw fig7 --page-bytes 100
check 2 "error: .*block size 48" "fig12 --block-threads 48" -- rw fig12 --block-threads 48
check 2 "error: .*--match-rate" "fig12 --match-rate 2" -- rw fig12 --match-rate 2
check 2 "error: .*subcommand is required" "rw alone" -- rw
check 2 "error: " "rw fig9" -- rw fig9

# Fig. 4's model, CPU only: the TAS column against Eq. 2's exact sum (T/N) sum_{j<N} 1/(A - j).
check 0 "model \(Eq. 2, 3\) only" "fig4 --model-only" -- rw fig4 --model-only --threads 1000 5000 \
  --free-percent 50 0.5 --csv "$tmp/fig4.csv"
rows=$(grep -c '^fig4,' "$tmp/fig4.csv")
if [ "$rows" -ne 4 ]; then echo "FAIL: fig4.csv has $rows rows, wanted 4"; failed=1; fi
if ! awk -F, '$1 == "fig4" {
      t = $2; a = $4; n = $5; s = 0
      for (j = 0; j < n; ++j) s += 1 / (a - j)
      want = t / n * s
      if ((($6 - want) / want) ^ 2 > 1e-12) { print "row " NR ": tas_model " $6 ", Eq. 2 " want; bad = 1 }
    } END { exit bad }' "$tmp/fig4.csv"; then
  echo "FAIL: fig4.csv's tas_model differs from Eq. 2"; failed=1
else
  echo "ok: fig4 --model-only agrees with Eq. 2 summed by awk"
fi

# Without a GPU fig7 says so and fails; with one, a tiny run completes.
tiny=(rw fig7 --pool-bytes 1048576 --runs 1 --warmup 0 --threads 64 --free-percent 50
      --allocators rw queue)
"$bench" "${tiny[@]}" > "$tmp/out" 2>&1
status=$?
if grep -q "no CUDA device" "$tmp/out"; then
  if [ $status -eq 0 ]; then echo "FAIL: fig7 without a GPU exited 0"; failed=1; else echo "ok: fig7 without a GPU: exit $status, says so"; fi
elif [ $status -eq 0 ] && grep -q "queue/x" "$tmp/out"; then
  echo "ok: a tiny fig7 ran on the GPU"
else
  echo "FAIL: tiny fig7 (exit $status):"; cat "$tmp/out"; failed=1
fi
exit $failed

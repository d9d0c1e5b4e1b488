#!/usr/bin/env bash
# heaplab_bench's command line on any machine (cpu tier): --help of `rw` and its figures, bad
# arguments (exit 2 and a one-line message naming the option), the model-only Fig. 4 grid against
# Eq. 2 summed by awk, and `rw fig7` without a GPU (it says so, exit non-zero) or, where a GPU is
# present, a tiny run that completes; the same for RW_malloc's figures (fig8-11): help, bad
# arguments (also those only the figure's own check sees: a size beyond one RW_malloc run, min
# above max), tiny runs; `alloc`: help, bad arguments, and a tiny run (no GPU: says so and fails;
# GPU: heaplab's and, where built, Gallatin's objects verified, or Gallatin said not built);
# `defrag-traffic` (no GPU needed): help, bad arguments, a tiny run and its CSV.
#   bench_cli_test.sh HEAPLAB_BENCH
set -uo pipefail
# shellcheck source=bench_check.sh
source "$(dirname "$0")/bench_check.sh"  # bench, tmp, failed, check

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
check 2 "error: " "rw fig13 (no such figure)" -- rw fig13

# RW_malloc's figures (fig8-11): help and bad arguments, all before any GPU is needed.
check 0 "--unit-bytes" "rw fig8 --help" -- rw fig8 --help
check 0 "--sizes" "rw fig9 --help" -- rw fig9 --help
check 0 "--fill-percent" "rw fig10 --help" -- rw fig10 --help
check 0 "--max-waves" "rw fig11 --help" -- rw fig11 --help
check 0 "fig11 " "rw --help lists fig11" -- rw --help
check 2 "error: .*--sizes.*0 not in range" "fig8 --sizes 0" -- rw fig8 --sizes 0
check 2 "error: .*--threads" "fig8 --threads 0" -- rw fig8 --threads 0
check 2 "error: .*page size 48" "fig9 --unit-bytes 48" -- rw fig9 --unit-bytes 48
check 2 "error: .*not expected.*--page-bytes" "fig9 has --unit-bytes, not --page-bytes" -- \
  rw fig9 --page-bytes 16
check 2 "error: .*--fill-percent" "fig10 --fill-percent 100" -- rw fig10 --fill-percent 100
check 2 "error: rw fig10: --min-bytes 100 is above the largest size 64" "fig10 min above max" -- \
  rw fig10 --min-bytes 100 --max-bytes 64 1024
check 2 "error: rw fig9: a request of 32784 B is 2049 pages of 16 B" "fig9: one page beyond a run" -- \
  rw fig9 --sizes 32784 --unit-bytes 16
check 2 "error: rw fig11: a request of 65536 B is 4096 pages of 16 B; RW_malloc serves at most 2048" \
  "fig11: a size beyond one RW_malloc run" -- rw fig11 --unit-bytes 16 --sizes 0 --max-bytes 65536
check 2 "error: rw fig8: a request of 40000 B is 2500 pages" "fig8: a size beyond one run" -- \
  rw fig8 --sizes 16 40000
# fig8-11's --allocators: checked by the figure (exit 2 before any GPU), Ouroboros only where built.
check 0 "--allocators.*rw-malloc, queue" "fig9 --help lists its allocators" -- rw fig9 --help
check 2 "error: rw fig9: allocator 'nope' is not in this build \\(rw-malloc, queue" \
  "fig9 --allocators nope" -- rw fig9 --allocators nope
check 2 "error: rw fig10: allocator 'queue' named twice" "fig10: an allocator twice" -- \
  rw fig10 --allocators queue rw-malloc queue
if grep -q "this build: [^;]*ouroboros-page" <<<"$("$bench" rw fig8 --help)"; then  # no pipe: grep -q would end it early (SIGPIPE, pipefail)
  check 2 "error: rw fig11: allocator 'ouroboros-pag' is not in this build" \
    "fig11: a misspelt Ouroboros" -- rw fig11 --allocators ouroboros-pag
else
  check 2 "error: rw fig11: allocator 'ouroboros-page' is not in this build.*tools/fetch-ouroboros" \
    "fig11: Ouroboros in a build without it" -- rw fig11 --allocators rw-malloc ouroboros-page
fi
# alloc: the Gallatin peer baseline's option and the object check, help and bad arguments.
check 0 "--gallatin-pool-gib" "alloc --help lists --gallatin-pool-gib" -- alloc --help
check 0 "written and read back" "alloc --help names the object check" -- alloc --help
check 2 "error: .*--gallatin-pool-gib.*0 not in range" "alloc --gallatin-pool-gib 0" -- \
  alloc --gallatin-pool-gib 0
check 2 "error: .*--gallatin-pool-gib" "alloc --gallatin-pool-gib 2048" -- \
  alloc --gallatin-pool-gib 2048
check 2 "error: .*--gallatin-pool-gib" "alloc --gallatin-pool-gib x" -- alloc --gallatin-pool-gib x
check 2 "error: .*--n.*0 not in range" "alloc --n 0" -- alloc --n 0
check 0 "--sizes" "alloc --help lists the size rows" -- alloc --help
check 2 "error: .*--sizes.*5 not in" "alloc --sizes 5 (no type of 5 bytes)" -- alloc --sizes 5
check 2 "error: .*--size-n.*0 not in range" "alloc --size-n 0" -- alloc --size-n 0
check 2 "error: .*--size-n" "alloc --size-n 2000" -- alloc --size-n 2000
check 2 "error: .*--cuda-malloc-max-bytes.*0 not in range" "alloc --cuda-malloc-max-bytes 0" -- \
  alloc --cuda-malloc-max-bytes 0

"$bench" rw fig10 --min-bytes 100 --max-bytes 64 > "$tmp/out" 2>&1
if [ "$(wc -l < "$tmp/out")" -ne 1 ]; then
  echo "FAIL: a bad fig10 argument printed more than one line:"; cat "$tmp/out"; failed=1
else
  echo "ok: a bad fig10 argument is one line"
fi

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

# A run ended by SIGTERM (timeout, Slurm's time limit) keeps every row it finished
# (tools/program/program_output.hpp): fig4's model alone, about 0.25 s a row here at N = 2^24 (200
# rows), stopped after 3 s, has its header and at least one whole row in the CSV and on stdout
# (with stdio's default 4 KiB buffer a file kept none of them).
threads=(); for _ in $(seq 200); do threads+=(16777216); done
timeout -s TERM 3 "$bench" rw fig4 --model-only --pages 1073741824 --free-percent 50 \
  --threads "${threads[@]}" --csv "$tmp/term.csv" > "$tmp/term.out" 2> /dev/null
status=$?
rows=$(grep -c '^fig4,1073741824,50,' "$tmp/term.csv")
table=$(grep -cE '^ +50 +536870912 +16777216 ' "$tmp/term.out")
if [ $status -eq 124 ] && [ "$(head -1 "$tmp/term.csv" | cut -d, -f1-3)" = "figure,pages,free_percent" ] &&
   [ "$rows" -ge 1 ] && [ "$rows" -lt 200 ] && [ "$table" -ge 1 ] &&
   [ "$(tail -c 1 "$tmp/term.csv" | od -An -c | tr -d ' ')" = '\n' ]; then
  echo "ok: SIGTERM after 3 s: $rows whole CSV rows and $table table rows kept"
else
  echo "FAIL: SIGTERM mid-run (exit $status, $rows CSV rows, $table table rows):"
  cat "$tmp/term.csv" "$tmp/term.out"; failed=1
fi

# Without a GPU fig7 says so and fails; with one, a tiny run completes.
tiny=(rw fig7 --pool-bytes 1048576 --runs 1 --warmup 0 --threads 64 --free-percent 50
      --allocators rw queue)
"$bench" "${tiny[@]}" > "$tmp/out" 2>&1
status=$?
if grep -q "no CUDA device" "$tmp/out"; then
  if [ $status -ne 4 ]; then echo "FAIL: fig7 without a GPU exited $status, not 4"; failed=1; else echo "ok: fig7 without a GPU: exit $status, says so"; fi
elif [ $status -eq 0 ] && grep -q "queue/x" "$tmp/out"; then
  echo "ok: a tiny fig7 ran on the GPU"
else
  echo "FAIL: tiny fig7 (exit $status):"; cat "$tmp/out"; failed=1
fi
# In a build with Ouroboros (docs/rw.md "Ouroboros beside the random-walk allocators"): tiny fig7
# and fig12 with both of its instances, every grant checked (a wrong one exits 1).
# tiny_gpu_run ARGS CHECK...: heaplab_bench ARGS (split at spaces); without a GPU it says so and
# exits 4; with one it exits 0 and `CHECK... OUTPUT-FILE` passes.
tiny_gpu_run() {
  local args=$1 status
  shift
  # shellcheck disable=SC2086
  "$bench" $args > "$tmp/out" 2>&1
  status=$?
  if grep -q "no CUDA device" "$tmp/out"; then
    if [ $status -ne 4 ]; then echo "FAIL: $args without a GPU exited $status, not 4"; failed=1; else echo "ok: ${args%% --*} without a GPU: exit $status, says so"; fi
  elif [ $status -eq 0 ] && "$@" "$tmp/out"; then
    echo "ok: a tiny ${args%% --*} ran on the GPU"
  else
    echo "FAIL: tiny $args (exit $status):"; cat "$tmp/out"; failed=1
  fi
}
# Both Ouroboros instances in the table (rows for two cells at least) and no wrong output.
ouroboros_rows() { [ "$(grep -c "^  ouroboros-" "$1")" -ge 4 ] && ! grep -q "WRONG" "$1"; }
if grep -q "this build: [^)]*ouroboros-page" <<<"$("$bench" rw fig7 --help)"; then
  tiny_gpu_run "rw fig7 --pool-bytes 1048576 --runs 2 --warmup 1 --threads 64 1024 --free-percent 50 1 --allocators queue ouroboros-page ouroboros-chunk" ouroboros_rows
  tiny_gpu_run "rw fig12 --pool-bytes 4194304 --runs 2 --warmup 1 --tuples 1000 8000 --allocators do ouroboros-page ouroboros-chunk" ouroboros_rows
fi
# RW_malloc's figures: without a GPU they say so and fail; with one, tiny runs complete with their
# tables (every run's pages are checked: a wrong output would exit 1).
tiny_malloc=("rw fig8 --pool-bytes 1048576 --runs 1 --warmup 0 --threads 64 1024 --sizes 16 100 8192"
             "rw fig9 --pool-bytes 1048576 --runs 1 --warmup 0 --threads 512 --sizes 4 1000"
             "rw fig10 --pool-bytes 1048576 --runs 1 --warmup 0 --threads 256 --max-bytes 512 --fill-percent 0 50"
             "rw fig11 --pool-bytes 1048576 --runs 1 --threads 4096 --unit-bytes 16 64 --sizes 0 24 --max-bytes 1024")
for args in "${tiny_malloc[@]}"; do tiny_gpu_run "$args" grep -qE "queue/rw|rw/queue"; done
# alloc: without a GPU it says so and fails; with one, a tiny run verifies every object.
# Six checked rows: n = 1 and 3, the sizes 4 and 4096 B (2 objects per thread), the mixed row,
# the wave.
"$bench" alloc --threads 256 --n 1 3 --sizes 4 4096 --size-n 2 --wave-threads 1000 --warmup 0 \
  --repeats 1 --cuda-malloc-max-n 1 --gallatin-pool-gib 1 > "$tmp/out" 2>&1
status=$?
if grep -q "no CUDA device" "$tmp/out"; then
  if [ $status -ne 4 ]; then echo "FAIL: alloc without a GPU exited $status, not 4"; failed=1; else echo "ok: alloc without a GPU: exit $status, says so"; fi
elif [ $status -eq 0 ] && [ "$(grep -c "check: heaplab verified" "$tmp/out")" -eq 6 ] &&
     grep -q "heaplab verified 768 objects" "$tmp/out" &&
     [ "$(grep -c "% of its free rounds in one block)" "$tmp/out")" -eq 5 ] &&
     [ "$(grep -c "heaplab verified 512 objects" "$tmp/out")" -eq 3 ] &&
     { grep -q "Gallatin: not built" "$tmp/out" || [ "$(grep -c "Gallatin verified" "$tmp/out")" -eq 6 ]; }; then
  echo "ok: a tiny alloc ran on the GPU, every object verified"
else
  echo "FAIL: tiny alloc (exit $status):"; cat "$tmp/out"; failed=1
fi
# Issue 13's knobs: claim tickets and coalesced frees on `alloc`, the cold-start `fill`.
check 0 "--claim-wait-rounds" "alloc --help lists --claim-wait-rounds" -- alloc --help
check 0 "--no-coalesce-frees" "alloc --help lists --no-coalesce-frees" -- alloc --help
check 2 "claim-wait-rounds" "alloc --claim-wait-rounds 2000" -- alloc --claim-wait-rounds 2000
# DynaSOAr's ablation switches (Fig. 12C, 13) on `alloc` and `utilization`; Fig. 14A.
for cmd in alloc utilization; do
  check 0 "--no-coalesce-requests" "$cmd --help lists --no-coalesce-requests" -- $cmd --help
  check 0 "--no-rotation" "$cmd --help lists --no-rotation" -- $cmd --help
  check 0 "--active-lookups" "$cmd --help lists --active-lookups" -- $cmd --help
  check 2 "error: .*--active-lookups.*0 not in range" "$cmd --active-lookups 0" -- \
    $cmd --active-lookups 0
  check 2 "error: .*--active-lookups" "$cmd --active-lookups x" -- $cmd --active-lookups x
done
check 0 "Fig. 14A" "utilization --help names Fig. 14A" -- utilization --help
check 0 "example: heaplab_bench utilization" "utilization --help has an example" -- utilization --help
check 2 "error: .*--n.*0 not in range" "utilization --n 0" -- utilization --n 0
check 2 "error: .*--heap-gib" "utilization --heap-gib 0" -- utilization --heap-gib 0
check 2 "error: .*--max-per-thread" "utilization --max-per-thread 0" -- utilization --max-per-thread 0
# utilization: without a GPU it says so and fails; with one, tiny runs (1 MiB heap, every thread
# allocating until nullptr) verify every object, the defaults and both switches off.
for flags in "" "--no-coalesce-requests --no-rotation --active-lookups 1"; do
  # shellcheck disable=SC2086
  "$bench" utilization --threads 256 --n 1 4 --heap-gib 0.001 --full-n 4 --max-per-thread 128 \
    --warmup 0 --repeats 1 --cuda-malloc-max-n 1 $flags > "$tmp/out" 2>&1
  status=$?
  if grep -q "no CUDA device" "$tmp/out"; then
    if [ $status -ne 4 ]; then echo "FAIL: utilization without a GPU exited $status, not 4"; failed=1; else echo "ok: utilization $flags without a GPU: exit $status, says so"; fi
  elif [ $status -eq 0 ] && grep -q "maximum utilization" "$tmp/out" &&
       [ "$(grep -cE "^  heaplab[-A-Za-z0-9]* +[14] " "$tmp/out")" -eq 2 ]; then
    echo "ok: a tiny utilization $flags ran on the GPU, every object verified"
  else
    echo "FAIL: tiny utilization $flags (exit $status):"; cat "$tmp/out"; failed=1
  fi
done
# What every heaplab program shares (tools/program/program.hpp, issue 36): --version and -V, a
# mistyped command or option answered with the closest, numbers read strictly, and exit 4 (not
# checked, SKIPPED) where no GPU is usable.
check 0 "^heaplab_bench [0-9]" "--version" -- --version
check 0 "^commit: " "-V names the commit" -- -V
check 2 "unknown command 'alocc' \(did you mean 'alloc'\?\)" "a mistyped command" -- alocc
check 2 "unknown option '--versoin' \(did you mean '--version'\?\)" "a mistyped option" -- --versoin
check 2 "error: .*--seed.*expected an integer" "defrag --seed -1 (CLI11 would wrap it)" -- \
  defrag --seed -1
check 2 "error: .*--seed.*expected an integer" "defrag --seed 010 (CLI11 would read octal)" -- \
  defrag --seed 010
check 2 "error: .*--scale.*expected a number" "defrag --scale nan" -- defrag --scale nan
check 2 "error: .*--scale.*expected a number" "defrag --scale 0x1" -- defrag --scale 0x1
CUDA_VISIBLE_DEVICES=-1 "$bench" alloc --threads 256 --n 1 --warmup 0 --repeats 1 > "$tmp/out" 2>&1
status=$?
if [ $status -eq 4 ] && grep -q "SKIPPED: nothing was measured" "$tmp/out"; then
  echo "ok: no usable GPU: exit 4 (not checked), SKIPPED"
else
  echo "FAIL: alloc with no usable GPU (exit $status, wanted 4 and SKIPPED):"; cat "$tmp/out"; failed=1
fi
# defrag-traffic: the model's count of Table 1's sectors, on any machine (no GPU needed).
check 0 "heaplab_bench defrag-traffic +Table 1 at scale" "defrag-traffic --help has examples" -- defrag-traffic --help
check 2 "error: .*--scale" "defrag-traffic --scale 0" -- defrag-traffic --scale 0
check 2 "error: .*--copy-gbps" "defrag-traffic --copy-gbps 0" -- defrag-traffic --copy-gbps 0
check 2 "error: unknown variant 'nope'" "defrag-traffic --variant nope" -- \
  defrag-traffic --variant nope
check 0 "forwarding: [0-9]+ passes.*" "defrag-traffic runs without a GPU" -- \
  defrag-traffic --scale 0.0005 --csv "$tmp/traffic.csv"
if [ "$(grep -c "^forwarding,[0-9]" "$tmp/traffic.csv")" -ge 1 ] &&
  grep -q "^forwarding,rewrite," "$tmp/traffic.csv"; then
  echo "ok: defrag-traffic --csv has a row per pass and the rewrite"
else
  echo "FAIL: defrag-traffic --csv:"; cat "$tmp/traffic.csv"; failed=1
fi
check 0 "example: heaplab_bench fill" "fill --help has an example" -- fill --help
check 2 "fractions" "fill --fractions 1.5" -- fill --fractions 1.5
check 2 "blocks" "fill --blocks 0" -- fill --blocks 0
exit $failed

#!/usr/bin/env bash
# heaplab stress campaign as a Slurm job array: one shard per array task (docs/cli.md "Campaigns
# on a cluster"). Every task runs `heaplab stress --shard K/N` with the same --seed, so the N
# tasks together run exactly the cases of one unsharded run (with --cases C: cases 0..C-1).
#
#   sbatch --array=0-7 --gpus=1 --time=01:00:00 tools/slurm-stress.sh run CAMPAIGN \
#          --seed 7 --minutes 50 --runner gpu
#   tools/slurm-stress.sh gather CAMPAIGN      # after the array finished
#
# run CAMPAIGN [stress options]: task K of N writes CAMPAIGN/shard-K/{stress.log,summary.json,
#   failures/}. K and N come from SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT (also without
#   Slurm, for a test or a loop over K). --seed is required: every shard must draw the same cases.
# gather CAMPAIGN: a table of the shards (cases, steps, skipped, failures, result), the totals,
#   every failure file copied to CAMPAIGN/failures/, and the command that replays them.
#   Exit status: 0 every shard passed, 1 failures, 4 a shard left no summary (not checked).
#
# HEAPLAB names the heaplab executable (default: build/default/tools/heaplab under the directory
# the job was submitted from, else `heaplab` on PATH).
set -euo pipefail

usage() {
  sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

heaplab_exe() {
  if [[ -n "${HEAPLAB:-}" ]]; then
    echo "$HEAPLAB"
  elif [[ -x "${SLURM_SUBMIT_DIR:-.}/build/default/tools/heaplab" ]]; then
    echo "${SLURM_SUBMIT_DIR:-.}/build/default/tools/heaplab"
  else
    command -v heaplab || { echo "slurm-stress: set HEAPLAB to the heaplab executable" >&2; exit 2; }
  fi
}

# The value of top-level key $2 ("cases": 12,) in the summary $1, as written by heaplab (2-space
# indentation, one key per line).
summary_value() {
  sed -n "s/^  \"$2\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" "$1" | head -n 1
}

run_shard() {
  local campaign="$1"; shift
  local k="${SLURM_ARRAY_TASK_ID:-}" n="${SLURM_ARRAY_TASK_COUNT:-}"
  [[ "$k" =~ ^[0-9]+$ && "$n" =~ ^[0-9]+$ ]] || {
    echo "slurm-stress: SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT must be set (sbatch --array=0-N)" >&2
    exit 2
  }
  [[ " $* " == *" --seed "* ]] || { echo "slurm-stress: --seed is required (every shard must draw the same cases)" >&2; exit 2; }
  local dir="$campaign/shard-$k"
  mkdir -p "$dir"
  local exe; exe="$(heaplab_exe)"
  echo "slurm-stress: shard $k/$n on $(hostname), $exe stress $*" | tee "$dir/stress.log"
  set +e
  "$exe" stress --shard "$k/$n" --out-dir "$dir/failures" --json-summary "$dir/summary.json" \
    "$@" 2>&1 | tee -a "$dir/stress.log"
  local status=${PIPESTATUS[0]}
  set -e
  echo "$status" > "$dir/exit_status"
  exit "$status"
}

gather() {
  local campaign="$1"
  [[ -d "$campaign" ]] || { echo "slurm-stress: no campaign directory $campaign" >&2; exit 2; }
  mkdir -p "$campaign/failures"
  local total_cases=0 total_steps=0 total_failures=0 missing=0 shards=0
  printf '%-10s %10s %12s %9s %9s  %s\n' shard cases steps skipped failures result
  for dir in "$campaign"/shard-*; do
    [[ -d "$dir" ]] || continue
    shards=$((shards + 1))
    local s="$dir/summary.json"
    if [[ ! -f "$s" ]]; then
      printf '%-10s %10s %12s %9s %9s  %s\n' "${dir##*/}" - - - - "NO SUMMARY (see $dir/stress.log)"
      missing=$((missing + 1))
      continue
    fi
    local cases steps skipped result nfail
    cases=$(summary_value "$s" cases); steps=$(summary_value "$s" steps)
    skipped=$(summary_value "$s" skipped); result=$(summary_value "$s" result)
    nfail=0
    if [[ -d "$dir/failures" ]]; then
      for f in "$dir"/failures/*.json; do
        [[ -f "$f" ]] || continue
        cp "$f" "$campaign/failures/${dir##*/}-${f##*/}"
        nfail=$((nfail + 1))
      done
    fi
    printf '%-10s %10s %12s %9s %9s  %s\n' "${dir##*/}" "$cases" "$steps" "$skipped" "$nfail" "$result"
    total_cases=$((total_cases + cases)); total_steps=$((total_steps + steps))
    total_failures=$((total_failures + nfail))
  done
  printf '%-10s %10s %12s %9s %9s\n' total "$total_cases" "$total_steps" - "$total_failures"
  if ((shards == 0)); then echo "slurm-stress: no shard-* directories in $campaign" >&2; exit 4; fi
  if ((total_failures > 0)); then
    echo "slurm-stress: $total_failures failure file(s) in $campaign/failures/; replay them with:"
    echo "  $(heaplab_exe 2>/dev/null || echo heaplab) replay $campaign/failures"
    exit 1
  fi
  if ((missing > 0)); then
    echo "slurm-stress: NOT CHECKED: $missing shard(s) left no summary" >&2
    exit 4
  fi
  echo "slurm-stress: all $shards shards passed"
}

[[ $# -ge 2 ]] || usage
mode="$1"; shift
case "$mode" in
  run) run_shard "$@" ;;
  gather) [[ $# -eq 1 ]] || usage; gather "$1" ;;
  *) usage ;;
esac

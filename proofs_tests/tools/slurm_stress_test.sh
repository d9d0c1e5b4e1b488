#!/usr/bin/env bash
# tools/slurm-stress.sh without Slurm: three array tasks by hand (SLURM_ARRAY_TASK_ID/COUNT), then
# gather. The shards must add up to the unsharded run (same cases, same steps); a failure file in
# a shard must be gathered and turn the exit status to 1; a shard without a summary to 4.
#   slurm_stress_test.sh SOURCE_DIR HEAPLAB
set -euo pipefail
src="$1"; export HEAPLAB="$2"
script="$src/tools/slurm-stress.sh"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*" >&2; exit 1; }

for k in 0 1 2; do
  SLURM_ARRAY_TASK_ID=$k SLURM_ARRAY_TASK_COUNT=3 "$script" run "$work/c" --seed 4 --cases 30 -q \
    > "$work/task-$k.log" || fail "task $k: $(cat "$work/task-$k.log")"
done
"$script" gather "$work/c" > "$work/gather.log" || fail "gather: $(cat "$work/gather.log")"
grep -q '^total *30 ' "$work/gather.log" || fail "the shards do not add up to 30 cases: $(cat "$work/gather.log")"
"$HEAPLAB" stress --seed 4 --cases 30 -q --out-dir "$work/f" --json-summary "$work/whole.json" > /dev/null
whole_steps=$(sed -n 's/^  "steps": \([0-9]*\),$/\1/p' "$work/whole.json")
grep -q "^total *30 *$whole_steps " "$work/gather.log" || fail "steps differ from the unsharded run ($whole_steps): $(cat "$work/gather.log")"
grep -q "all 3 shards passed" "$work/gather.log" || fail "no pass line"

# Without --seed or outside an array, run refuses (exit 2).
set +e
SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_COUNT=3 "$script" run "$work/c" --cases 3 > /dev/null 2>&1
[[ $? -eq 2 ]] || fail "run without --seed must exit 2"
"$script" run "$work/c" --seed 1 > /dev/null 2>&1
[[ $? -eq 2 ]] || fail "run outside an array must exit 2"

# A failure file in a shard: gathered, exit status 1.
mkdir -p "$work/c/shard-1/failures"
cp "$src/proofs_tests/model/data/wator.json" "$work/c/shard-1/failures/x.json"
"$script" gather "$work/c" > "$work/gather2.log" 2>&1
[[ $? -eq 1 ]] || fail "gather with a failure must exit 1: $(cat "$work/gather2.log")"
[[ -f "$work/c/failures/shard-1-x.json" ]] || fail "the failure file was not gathered"
grep -q "replay $work/c/failures" "$work/gather2.log" || fail "no replay command: $(cat "$work/gather2.log")"

# A shard that left no summary: not checked, exit status 4.
rm -rf "$work/c/shard-1/failures" "$work/c/failures"
rm "$work/c/shard-2/summary.json"
"$script" gather "$work/c" > "$work/gather3.log" 2>&1
[[ $? -eq 4 ]] || fail "gather with a missing summary must exit 4: $(cat "$work/gather3.log")"
grep -q "NO SUMMARY" "$work/gather3.log" || fail "the missing shard is not named"
echo "slurm-stress: 1 passed, 0 failed"

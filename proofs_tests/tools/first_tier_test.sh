#!/usr/bin/env bash
# <build>/first-tier.txt (tools/run-main-job's first stage, written by CMake's heaplab_uses_any)
# checked against ninja's build graph, which CMake's walk does not use: every listed binary is in
# cpu-tier.txt and builds without GPU code or a heaplab program; every CPU-tier binary left out
# needs one of them (so the first stage is as large as it can be). The checker is also fed a
# planted list (a second-stage binary added, a first-stage one dropped) and must report both.
#   first_tier_test.sh BUILD_DIR
set -uo pipefail
build="$1"
late='heaplab_family_heap_gpu\.dir|heaplab_malloc_gpu\.dir|heaplab_rw_gpu\.dir|heaplab_cli\.dir|^tools/heaplab$'
[ -s "$build/first-tier.txt" ] || { echo "FAIL: $build/first-tier.txt is missing or empty"; exit 1; }
# (grep without -q reads all of ninja's output: with -q and pipefail, a ninja cut short by SIGPIPE
# would make the pipeline fail at random.)
needs_late() { ninja -C "$build" -t inputs "$1" | grep -E "$late" >/dev/null; }
check() {  # check LIST: 0 when LIST is exactly the first stage
local list="$1" failed=0
while read -r bin; do
  [ -n "$bin" ] || continue
  if ! grep -qxF "$bin" "$build/cpu-tier.txt"; then
    echo "FAIL: $bin is in first-tier.txt but not in cpu-tier.txt"; failed=1
  elif needs_late "$bin"; then
    echo "FAIL: $bin is in the first stage but its build needs GPU code or heaplab:"
    ninja -C "$build" -t inputs "$bin" | grep -E "$late" | head -3; failed=1
  else
    echo "ok: $bin (first stage)"
  fi
done <"$list"
while read -r bin; do
  [ -n "$bin" ] || continue
  grep -qxF "$bin" "$list" && continue
  if needs_late "$bin"; then
    echo "ok: $bin (second stage: needs GPU code or heaplab)"
  else
    echo "FAIL: $bin needs neither GPU code nor heaplab but is not in the first stage"; failed=1
  fi
done <"$build/cpu-tier.txt"
return $failed
}
check "$build/first-tier.txt"
status=$?
# The planted list: tools_cli_test (links heaplab) in, core_protocol_test out.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{ grep -v '/core_protocol_test$' "$build/first-tier.txt"; grep '/tools_cli_test$' "$build/cpu-tier.txt"; } \
  >"$tmp/planted.txt"
check "$tmp/planted.txt" >"$tmp/out" 2>&1
if [ $? -eq 0 ] || ! grep -q 'FAIL: .*tools_cli_test is in the first stage but' "$tmp/out" ||
  ! grep -q 'FAIL: .*core_protocol_test needs neither' "$tmp/out"; then
  echo "FAIL: the planted list was not reported as it should be:"; cat "$tmp/out"; status=1
else
  echo "ok: the planted list is reported (a second-stage binary in, a first-stage one out)"
fi
exit $status

#!/usr/bin/env bash
# tools/lib/signals.sh (run_child, used by tools/run-main-job): a child's exit status comes
# through; a SIGTERM or SIGHUP sent to the script's pid alone ends the script with 128 + the
# signal's number and takes the child's whole process group with it (the child and what it
# started), so nothing runs on. The control: without signals.sh the same child outlives the script.
#   signals_test.sh SOURCE_DIR
set -uo pipefail
src="$1"
tmp=$(mktemp -d)
trap 'pkill -P $$ 2>/dev/null; rm -rf "$tmp"' EXIT
failed=0
cat >"$tmp/job" <<EOS
#!/usr/bin/env bash
[ "\${1:-}" = plain ] || source '$src/tools/lib/signals.sh'
run() { if declare -F run_child >/dev/null; then run_child "\$@"; else "\$@"; fi; }
run bash -c 'exit 7'; echo "status \$?"
run bash -c 'echo \$\$ > "$tmp/child"; sleep 60 & echo \$! > "$tmp/grandchild"; wait'
echo "not reached"
EOS
chmod +x "$tmp/job"
# alive PID: the process runs (a zombie waiting to be reaped does not count).
alive() { local state; state=$(ps -o stat= -p "$1" 2>/dev/null); [[ -n "$state" && "$state" != Z* ]]; }
# try SIGNAL WANT [plain]: start the job, signal its pid once the child and grandchild run.
try() {
  local sig=$1 want=$2 mode=${3:-}
  rm -f "$tmp/child" "$tmp/grandchild"
  "$tmp/job" $mode >"$tmp/out" 2>&1 &
  local job=$!
  for _ in $(seq 100); do [ -s "$tmp/grandchild" ] && break; sleep 0.05; done
  kill -"$sig" "$job"
  wait "$job"
  local status=$? running=""
  sleep 0.3
  for f in child grandchild; do alive "$(cat "$tmp/$f")" && running="$running $f"; done
  if [ "$mode" = plain ]; then
    if [ -z "$running" ]; then echo "FAIL: control: without signals.sh the child should outlive"; failed=1
    else echo "ok: control: without signals.sh$running outlived the script (killed now)"; fi
    for f in child grandchild; do kill "$(cat "$tmp/$f")" 2>/dev/null; done
    return
  fi
  if [ "$status" -ne "$want" ] || [ -n "$running" ] || ! grep -qx 'status 7' "$tmp/out" ||
    grep -q 'not reached' "$tmp/out"; then
    echo "FAIL: SIG$sig: exit $status (wanted $want), still running:${running:- none}"; cat "$tmp/out"
    failed=1
  else
    echo "ok: SIG$sig to the script: exit $status, the child's group is gone, a child's status came through"
  fi
}
try TERM 143
try HUP 129
try TERM 143 plain
exit $failed

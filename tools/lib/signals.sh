# Sourced by tools/run-main-job: run_child CMD [ARG...] runs CMD in a process group of its own and
# waits for it, and a SIGTERM, SIGHUP or SIGINT to the script itself is passed on to that whole
# group (ninja and its compilers, ctest and its tests) before the script exits with 128 + the
# signal's number. Without it, a signal to the script's pid alone (a supervisor, `kill PID`) ended
# the script and left its child running on, orphaned; `timeout` and Slurm, which signal the whole
# process group, reach the child group through the script (issue 36, finding 5).
#
# The child runs in the background under job control (set -m gives it its own process group,
# pgid = its pid) because bash runs a trap only after a foreground command ends, while `wait`
# returns at once when a trapped signal arrives. Not for commands that read the terminal (a
# background group that reads it is stopped): tools/setup and configuring run in the foreground.
heaplab_child=""
heaplab_forward() {  # heaplab_forward SIGNAL NUMBER
  if [[ -n "$heaplab_child" ]]; then
    kill -"$1" -- -"$heaplab_child" 2>/dev/null
    wait "$heaplab_child" 2>/dev/null
  fi
  exit $((128 + $2))
}
trap 'heaplab_forward TERM 15' TERM
trap 'heaplab_forward HUP 1' HUP
trap 'heaplab_forward INT 2' INT

run_child() {
  set -m
  "$@" &
  heaplab_child=$!
  set +m
  wait "$heaplab_child"
  local status=$?
  heaplab_child=""
  return $status
}

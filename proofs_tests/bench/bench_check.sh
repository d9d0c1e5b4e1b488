# Sourced by the heaplab_bench command-line tests (bench_cli_test.sh,
# bench_parallel_do_cli_test.sh): `bench` (the binary, $1 of the test), a temporary folder `tmp`
# removed on exit, `failed`, and check.
#   check WANTED-STATUS PATTERN WHAT -- ARGS...: runs "$bench" ARGS; ok iff it exits with
#   WANTED-STATUS and its output matches the extended regex PATTERN (else prints the output and
#   sets failed=1).
bench="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
check() {
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

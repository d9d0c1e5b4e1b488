# Sourced by the tool tests (proofs_tests/tools/*_test.sh): a scratch folder $tmp, removed at exit,
# and `check NAME COMMAND...`, which runs the command and prints "ok   NAME" or "FAIL NAME" (and
# then sets fail=1). A test ends with `exit $fail`.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() {  # check NAME CONDITION-COMMAND...
  local name=$1
  shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fail=1; fi
}

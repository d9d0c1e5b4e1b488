#!/usr/bin/env bash
# The function-length rule of docs/architecture.md ("no function over 80 lines outside tests"),
# enforced with heaplab_function_length (tools/lint/function_length.cpp), and the checker fed
# planted sources: a long function must be reported with its file, line and name; constructs
# that are not function bodies (scopes, initializers, template heads, braces in literals and
# comments) must not be mistaken for one.
#   function_length_test.sh SOURCE_DIR CHECKER
set -uo pipefail
src="$1"
check="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
expect() {  # expect WANT-STATUS PATTERN WHAT STATUS
  local want=$1 pattern=$2 what=$3 status=$4
  if [ "$status" -ne "$want" ] || ! grep -qE "$pattern" "$tmp/out"; then
    echo "FAIL: $what (exit $status, wanted $want and /$pattern/):"; cat "$tmp/out"; failed=1
  else
    echo "ok: $what"
  fi
}
body() {  # body N: N statement lines
  for ((i = 0; i < $1; ++i)); do echo "  x += $i;"; done
}

# 1. The repository: every non-test source (src, models, tools, apps, bench).
mapfile -t files < <(cd "$src" && find src models tools apps bench -type f \
  \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' -o -name '*.h' \) | sort)
(cd "$src" && "$check" --max 80 "${files[@]}") > "$tmp/out" 2>&1
status=$?
echo "checked ${#files[@]} files" >> "$tmp/out"
expect 0 "checked [0-9]+ files" "the repository's ${#files[@]} non-test sources" $status

# 2. A planted long function inside a namespace, a class and a template: each reported.
{
  echo 'namespace a::b {'
  echo 'template <class T, typename U = int>'
  echo 'int planted_free(T x) {'; body 85; echo '  return x;'; echo '}'
  echo 'struct S : Base<int> {'
  echo '  S() : v_(1), w_{2} {'; body 90; echo '  }'
  echo '  int v_, w_;'
  echo '};'
  echo '}  // namespace a::b'
} > "$tmp/long.cpp"
"$check" --max 80 "$tmp/long.cpp" > "$tmp/out" 2>&1
expect 1 "long.cpp:3: planted_free is 88 lines" "a long function template is reported" $?
grep -qE "long.cpp:[0-9]+: S is 92 lines" "$tmp/out"
expect 0 "" "a long constructor with an initializer list is reported" $?

# 3. Things that are not long functions: short functions, braces in strings, comments and
#    raw strings, initializers, a class body longer than the limit, a lambda at namespace scope.
{
  echo 'struct Big {'
  for ((i = 0; i < 100; ++i)); do echo "  int f$i() { return $i; }"; done
  echo '};'
  echo 'int table[] = {'; for ((i = 0; i < 100; ++i)); do echo "  $i,"; done; echo '};'
  echo 'char const* s = "{{{{";  // {{{{'
  echo '/* { { { */'
  echo 'char const* r = R"x({ ")" {)x";'
  echo "char c = '{';"
  echo 'int short_one() {'; body 70; echo '  return 0;'; echo '}'
} > "$tmp/fine.cpp"
"$check" --max 80 "$tmp/fine.cpp" > "$tmp/out" 2>&1
s=$?; echo "status $s" >> "$tmp/out"
expect 0 "status 0" "classes, initializers, literals and short functions are not reported" $s

# 4. Bad usage is an error, not a pass.
"$check" --max 0 "$tmp/fine.cpp" > "$tmp/out" 2>&1
expect 2 "positive number" "--max 0 is rejected" $?
"$check" "$tmp/missing.cpp" > "$tmp/out" 2>&1
expect 2 "cannot read" "an unreadable file is an error" $?
exit $failed

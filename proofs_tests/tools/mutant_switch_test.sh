#!/usr/bin/env bash
# The planted-bug switches of src/heaplab/core/mutants.hpp (docs/mutants.md):
#  - the real build (no HEAPLAB_MUTANT_NAME) turns every switch off;
#  - a known name turns exactly its own switch on (checked for every listed name);
#  - an unknown (misspelled) name fails to compile, so it cannot build the real code silently.
#   mutant_switch_test.sh SOURCE_ROOT CXX
set -uo pipefail
root="$1"
cxx="${2:-c++}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0

names=$(sed -n 's/^  X(\([a-z_0-9]*\)).*/\1/p' "$root/src/heaplab/core/mutants.hpp")
count=$(echo "$names" | wc -w)
[ "$count" -ge 20 ] || { echo "FAIL: found only $count planted bugs in mutants.hpp"; exit 1; }

# One TU that counts the switches that are on and checks the named one (if any).
{
  echo '#include "heaplab/core/mutants.hpp"'
  echo 'constexpr int on = 0'
  for n in $names; do echo "  + (heaplab::core::mutant::$n ? 1 : 0)"; done
  echo ';'
  echo '#if defined(EXPECT)'
  echo 'static_assert(on == 1 && heaplab::core::mutant::EXPECT, "exactly the named switch is on");'
  echo '#else'
  echo 'static_assert(on == 0 && heaplab::core::mutant::kPlanted[0] == 0, "the real build plants nothing");'
  echo '#endif'
  echo 'int main() { return 0; }'
} > "$work/switches.cpp"

compile() { "$cxx" -std=c++17 -fsyntax-only -I"$root/src" "$@" "$work/switches.cpp" 2> "$work/err"; }

if compile; then echo "ok: real build, all $count switches off"; else echo "FAIL: real build"; cat "$work/err"; fail=1; fi
for n in $names; do
  if ! compile "-DHEAPLAB_MUTANT_NAME=\"$n\"" -DEXPECT="$n"; then
    echo "FAIL: HEAPLAB_MUTANT_NAME=$n"; cat "$work/err"; fail=1
  fi
done
[ $fail -eq 0 ] && echo "ok: each of the $count names turns on exactly its own switch"
if compile '-DHEAPLAB_MUTANT_NAME="invalidate_no_rolback"'; then
  echo "FAIL: a misspelled name compiled"; fail=1
elif grep -q "names no planted bug" "$work/err"; then
  echo "ok: a misspelled name fails to compile with the mutants.hpp message"
else
  echo "FAIL: a misspelled name failed for another reason:"; cat "$work/err"; fail=1
fi
exit $fail

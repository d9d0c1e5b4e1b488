#!/usr/bin/env bash
# The planted-bug switches of src/heaplab/core/mutants.hpp (docs/mutants.md):
#  - the real build (no HEAPLAB_MUTANT_NAME) turns every switch off;
#  - a known name turns exactly its own switch on (checked for every listed name);
#  - an unknown (misspelled) name fails to compile, so it cannot build the real code silently;
#  - a planting build (HEAPLAB_MUTANT_RUNTIME_BUILD, docs/mutants.md "One build for every planted
#    bug") plants exactly the bug HEAPLAB_PLANT names, each listed name in turn, refuses an unknown
#    one, and plants nothing without it; a target's own compile-time bug wins over it; the real
#    build refuses HEAPLAB_PLANT instead of ignoring it.
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
# The planting kind: one program, run once per name with HEAPLAB_PLANT set.
{
  echo '#include <cstdio>'
  echo '#include <cstring>'
  echo '#include "heaplab/core/mutants.hpp"'
  echo 'int main(int argc, char** argv) {'
  echo '  std::string const failed = heaplab::core::mutant::plant_from_environment();'
  echo '  if (!failed.empty()) { std::printf("refused: %s\n", failed.c_str()); return 3; }'
  echo '  int on = 0;'
  for n in $names; do echo "  on += heaplab::core::mutant::$n ? 1 : 0;"; done
  echo '  char const* want = argc > 1 ? argv[1] : "";'
  echo '  bool const named_on = *want == 0'
  for n in $names; do echo "    || (std::strcmp(want, \"$n\") == 0 && heaplab::core::mutant::$n)"; done
  echo '  ;'
  echo '  std::printf("on %d planted %s\n", on, heaplab::core::mutant::kPlanted);'
  echo '  return on == (*want ? 1 : 0) && named_on && std::strcmp(want, heaplab::core::mutant::kPlanted) == 0 ? 0 : 1;'
  echo '}'
} > "$work/planting.cpp"
build_planting() { "$cxx" -std=c++17 -I"$root/src" "$@" "$work/planting.cpp" -o "$work/planting" 2> "$work/err"; }
if ! build_planting -DHEAPLAB_MUTANT_RUNTIME_BUILD=1; then
  echo "FAIL: the planting kind does not compile"; cat "$work/err"; fail=1
else
  planting_fail=0
  env -u HEAPLAB_PLANT "$work/planting" >"$work/out" 2>&1 || { echo "FAIL: planting build, HEAPLAB_PLANT unset:"; cat "$work/out"; planting_fail=1; }
  for n in $names; do
    if ! HEAPLAB_PLANT="$n" "$work/planting" "$n" >"$work/out" 2>&1 || ! grep -q "planted bug '$n'" "$work/out"; then
      echo "FAIL: planting build, HEAPLAB_PLANT=$n:"; cat "$work/out"; planting_fail=1
    fi
  done
  HEAPLAB_PLANT=invalidate_no_rolback "$work/planting" >"$work/out" 2>&1
  if [[ $? -ne 3 ]] || ! grep -q "'invalidate_no_rolback' names no planted bug" "$work/out"; then
    echo "FAIL: planting build, a misspelled HEAPLAB_PLANT was not refused:"; cat "$work/out"; planting_fail=1
  fi
  [[ $planting_fail -eq 0 ]] && echo "ok: a planting build plants exactly the bug HEAPLAB_PLANT names (each of the $count), none without it, refuses a misspelled one"
  fail=$((fail | planting_fail))
fi
# A target that plants its own bug at compile time keeps it in a planting build.
if build_planting -DHEAPLAB_MUTANT_RUNTIME_BUILD=1 '-DHEAPLAB_MUTANT_NAME="free_relaxed"' \
    && HEAPLAB_PLANT=free_relaxed "$work/planting" free_relaxed >"$work/out" 2>&1; then
  echo "ok: a target's compile-time bug wins over the planting build"
else
  echo "FAIL: a compile-time bug in a planting build:"; cat "$work/err" "$work/out"; fail=1
fi
# The real build refuses HEAPLAB_PLANT (a run believed to carry the bug would run the real code).
if build_planting && ! HEAPLAB_PLANT=free_relaxed "$work/planting" >"$work/out" 2>&1 \
    && grep -q "asks for a planted bug, but this build is the real code" "$work/out"; then
  echo "ok: the real build refuses HEAPLAB_PLANT"
else
  echo "FAIL: the real build and HEAPLAB_PLANT:"; cat "$work/err" "$work/out"; fail=1
fi
exit $fail

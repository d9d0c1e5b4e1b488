#!/usr/bin/env bash
# tools/plot-rw (docs/rw.md "Benchmarks"): the committed H100 CSVs of Figs. 4, 7 and 8-12 become PNG
# figures (also with an allocator the plot has no style for); bad input (a missing file, another
# figure's CSV, an empty CSV) exits 2 with a message naming the problem.
# SKIPPED where Debian's python3 has no matplotlib (tools/setup installs python3-matplotlib).
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
plot="$src/tools/plot-rw"
if ! /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  echo "SKIPPED: /usr/bin/python3 has no matplotlib (tools/setup installs python3-matplotlib)"
  exit 0
fi
. "$(dirname "$0")/support/check.sh"  # $tmp, check, fail
is_png() {  # a PNG signature and more than 20 KB (a figure, not an empty canvas)
  [ -f "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] &&
    [ "$(stat -c %s "$1")" -gt 20000 ]
}
expect_bad() {  # expect_bad NAME MESSAGE-FRAGMENT ARGS...
  local name=$1 fragment=$2; shift 2
  local out rc
  out=$("$plot" "$@" 2>&1); rc=$?
  check "$name: exit 2" test "$rc" -eq 2
  check "$name: says '$fragment'" grep -q -- "$fragment" <<<"$out"
}
r="$src/docs/results"
"$plot" fig7 "$r/2026-11-24-h100-rw-fig7.csv" "$tmp/fig7.png" >/dev/null
check "fig7 from the H100 CSV is a PNG" is_png "$tmp/fig7.png"
"$plot" fig4 "$r/2026-11-24-h100-rw-fig4.csv" "$tmp/fig4.png" >/dev/null
check "fig4 from the H100 CSV is a PNG" is_png "$tmp/fig4.png"
for f in fig8 fig9 fig10 fig11 fig12; do
  "$plot" "$f" "$r/2026-11-24-h100-rw-$f.csv" "$tmp/$f.png" >/dev/null
  check "$f from the H100 CSV is a PNG" is_png "$tmp/$f.png"
done
# A fig8-10 CSV with an allocator the plot has no style for (Ouroboros' columns, or one to come)
# still plots: its rows get a line of their own.
sed 's/^fig9,queue,/fig9,ouroboros-page,/' "$r/2026-11-24-h100-rw-fig9.csv" > "$tmp/fig9o.csv"
"$plot" fig9 "$tmp/fig9o.csv" "$tmp/fig9o.png" >/dev/null
check "fig9 with an Ouroboros column is a PNG" is_png "$tmp/fig9o.png"
expect_bad "fig8 CSV given as fig9" "no fig9 row (figures in it: fig8)" fig9 \
  "$r/2026-11-24-h100-rw-fig8.csv" "$tmp/x.png"
expect_bad "fig12 CSV given as fig11" "missing columns" fig11 "$r/2026-11-24-h100-rw-fig12.csv" \
  "$tmp/x.png"
expect_bad "missing file" "No such file" fig7 "$tmp/none.csv" "$tmp/x.png"
expect_bad "fig4 CSV given as fig7" "missing columns" fig7 "$r/2026-11-24-h100-rw-fig4.csv" "$tmp/x.png"
head -1 "$r/2026-11-24-h100-rw-fig4.csv" > "$tmp/empty.csv"
expect_bad "header only" "no rows" fig4 "$tmp/empty.csv" "$tmp/x.png"
check "no figure written for bad input" test ! -e "$tmp/x.png"
exit $fail

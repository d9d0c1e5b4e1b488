#!/usr/bin/env bash
# tools/reproduce and tools/figures.tsv (docs/results.md "Reproducing the papers' figures"),
# without a GPU and without running a real figure:
# - every paper figure or table that docs/results.md names in a heading or a bold label (and
#   every `heaplab_bench rw figN` it mentions) has a line in `tools/reproduce --list`; a planted
#   figure in a scratch copy of docs/results.md must be reported missing;
# - every command names a subcommand that exists (heaplab_bench/heaplab_apps --help where built,
#   and always bench/main.cpp and apps/main.cpp); every section names a heading of results.md;
#   the table pasted in docs/results.md is `tools/reproduce --list --markdown`;
# - unknown FIG, missing build folder or binary, bad options: one line, exit 2; stub binaries
#   show the exit status passed through (0, 1, 4), the commands as run and the stop at the first
#   failure.
#   reproduce_test.sh [SOURCE_DIR [BUILD_DIR]]
set -uo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${2:-}
tool="$src/tools/reproduce"
table="$src/tools/figures.tsv"
results="$src/docs/results.md"
. "$(dirname "$0")/support/check.sh"  # $tmp, check, fail

# --- coverage -------------------------------------------------------------------------------
# paper_figures FILE: "paper figN" / "paper tableN", one a line, for every figure or table that
# FILE's headings and bold labels name. A label's figures belong to the paper named last before
# them in the label, else the first named in it, else the paper of the enclosing heading.
paper_figures() {
  awk '
    function at(s, re,   pos, off) {  # last position of re in s (0: none)
      pos = 0; off = 0
      while (match(substr(s, off + 1), re)) { pos = off + RSTART; off = pos + RLENGTH - 1 }
      return pos
    }
    function paper_in(s, first,   best, bp, i, p) {  # first (or last) paper named in s
      best = ""; bp = first ? 1e9 : 0
      for (i = 1; i <= 4; i++) {
        p = first ? (match(s, re[i]) ? RSTART : 0) : at(s, re[i])
        if (p > 0 && (first ? p < bp : p > bp)) { bp = p; best = name[i] }
      }
      return best
    }
    function figures(label, inherited,   own, off, rs, rl, ref, kind, nums, n, i, p) {
      own = paper_in(label, 1); if (own == "") own = inherited
      off = 0
      while (match(substr(label, off + 1), /(Figs?\.|Tables?) [0-9]+[A-Z]?(( ?\/ ?| and )[0-9]+[A-Z]?)*/)) {
        rs = off + RSTART; rl = RLENGTH
        ref = substr(label, rs, rl)
        p = paper_in(substr(label, 1, rs - 1), 0); if (p == "") p = own
        off = rs + rl - 1
        if (p == "") continue
        kind = (ref ~ /^Fig/) ? "fig" : "table"
        sub(/^[A-Za-z]+\.? /, "", ref)
        n = split(ref, nums, /( ?\/ ?| and )/)
        for (i = 1; i <= n; i++) print p " " kind tolower(nums[i])
      }
      return own
    }
    BEGIN {
      name[1] = "dynasoar"; re[1] = "DynaSOAr"
      name[2] = "soaalloc"; re[2] = "SoaAlloc"
      name[3] = "compactgpu"; re[3] = "CompactGpu"
      name[4] = "rw"; re[4] = "(^|[^A-Za-z])(Co)?RW([^A-Za-z]|$)|[Rr]andom-walk"
    }
    /^```/ { fence = !fence; next }
    fence { next }
    /^#+ / {
      level = index($0, " ") - 1; text = substr($0, level + 2)
      ctx[level] = figures(text, level > 1 ? ctx[level - 1] : "")
      for (l = level + 1; l <= 6; l++) ctx[l] = ctx[level]
      next
    }
    /^(- )?\*\*[^*]+\*\*/ {
      label = $0; sub(/^(- )?\*\*/, "", label); sub(/\*\*.*/, "", label)
      figures(label, ctx[6])
    }
    {
      line = $0
      while (match(line, /rw fig[0-9]+( \| fig[0-9]+)*/)) {
        ref = substr(line, RSTART + 3, RLENGTH - 3); line = substr(line, RSTART + RLENGTH)
        n = split(ref, nums, / \| /)
        for (i = 1; i <= n; i++) print "rw " nums[i]
      }
    }' "$1" | sort -u
}

# The figures `tools/reproduce --list` shows: its id lines ("ID  PAPER FIGURE") read as headings.
"$tool" --list >"$tmp/list.txt" 2>"$tmp/list.err"
check "--list exits 0" test $? -eq 0
awk '/^[a-z][a-z0-9-]* / { sub(/^[^ ]+ +/, ""); print "## " $0 }' "$tmp/list.txt" >"$tmp/listed.md"
paper_figures "$tmp/listed.md" >"$tmp/listed.keys"

missing_figures() {  # missing_figures RESULTS.md: prints what --list lacks; status 1 if anything
  paper_figures "$1" >"$tmp/named.keys"
  comm -23 "$tmp/named.keys" "$tmp/listed.keys" >"$tmp/missing.keys"
  cat "$tmp/missing.keys"
  [ ! -s "$tmp/missing.keys" ]
}

paper_figures "$results" >"$tmp/real.keys"
echo "docs/results.md names: $(tr '\n' ',' <"$tmp/real.keys" | sed 's/,$//; s/,/, /g')"
check "docs/results.md names at least 20 paper figures (the extraction works)" \
  test "$(wc -l <"$tmp/real.keys")" -ge 20
missing=$(missing_figures "$results")
check "--list has every figure docs/results.md names${missing:+ (missing: ${missing//$'\n'/, })}" \
  test -z "$missing"

cp "$results" "$tmp/results.md"
cat >>"$tmp/results.md" <<'EOF'

## SoaAlloc, a planted section
### Fig. 97: a planted figure that inherits the section's paper
- **CompactGpu Fig. 99 and Fig. 98C** planted
EOF
planted=$(missing_figures "$tmp/results.md")
check "a planted heading figure is reported missing" grep -qx "soaalloc fig97" <<<"$planted"
check "planted bold-label figures are reported missing" \
  test "$(grep -cx 'compactgpu fig9[89]c\?' <<<"$planted")" -eq 2
check "nothing else is reported for the planted copy" test "$(wc -l <<<"$planted")" -eq 3

# --- the table ------------------------------------------------------------------------------
rows=$(grep -cv '^\(#\|$\)' "$table")
check "--list shows every line of tools/figures.tsv ($rows)" \
  test "$(grep -c '^[a-z][a-z0-9-]* ' "$tmp/list.txt")" -eq "$rows"

# Subcommand names from the sources: the quoted names in add_subcommand's first argument, top
# level (app.) and heaplab_bench rw's (rw->).
source_subcommands() {  # source_subcommands FILE RECEIVER
  tr '\n' ' ' <"$1" | grep -oE "$2add_subcommand\\([^,]*," | grep -oE '"[a-z0-9-]+"' | tr -d '"' |
    sort -u
}
source_subcommands "$src/bench/main.cpp" 'app\.' >"$tmp/src-bench"
source_subcommands "$src/bench/main.cpp" 'rw->' >"$tmp/src-bench-rw"
source_subcommands "$src/apps/main.cpp" 'app\.' >"$tmp/src-apps"
check "bench/main.cpp has subcommands (defrag, rw)" grep -qx defrag "$tmp/src-bench"
check "bench/main.cpp has rw subcommands (fig7)" grep -qx fig7 "$tmp/src-bench-rw"
check "apps/main.cpp has subcommands (nbody, collision, wa-tor)" \
  test "$(grep -cxE 'nbody|collision|wa-tor' "$tmp/src-apps")" -eq 3

help_subcommands() {  # help_subcommands BINARY [SUBCOMMAND]: names under "Subcommands:"
  "$@" --help 2>/dev/null | awk '/^Subcommands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }'
}
binaries=0
for pair in "bench/heaplab_bench:bench" "apps/heaplab_apps:apps"; do
  bin=${pair%%:*}
  if [ -n "$build" ] && [ -x "$build/$bin" ] && "$build/$bin" --help >/dev/null 2>&1; then
    help_subcommands "$build/$bin" >"$tmp/bin-${pair##*:}"
    [ "$bin" != bench/heaplab_bench ] || help_subcommands "$build/$bin" rw >"$tmp/bin-bench-rw"
    binaries=$((binaries + 1))
  fi
done
echo "subcommands checked against the sources$([ "$binaries" = 0 ] || echo " and $binaries built binaries")"

bad_commands=""
while IFS=$'\t' read -r id _ _ commands _; do
  IFS=';' read -r -a parts <<<"$commands"
  for part in "${parts[@]}"; do
    read -r -a w <<<"$part"
    case ${w[0]} in
      heaplab_bench) kinds=(bench) ;;
      heaplab_apps) kinds=(apps) ;;
      figure10 | figure11)  # tools/figure1x over heaplab_apps: the script must exist
        [ -x "$src/tools/${w[0]}" ] || bad_commands+=" $id:${w[0]}(no tools/${w[0]})"
        continue ;;
      *) bad_commands+=" $id:${w[0]}"; continue ;;
    esac
    [ "${w[0]} ${w[1]:-}" != "heaplab_bench rw" ] || kinds+=(bench-rw)
    for k in "${kinds[@]}"; do
      name=${w[1]:-}
      [ "$k" != bench-rw ] || name=${w[2]:-}
      for f in "$tmp/src-$k" "$tmp/bin-$k"; do
        [ ! -e "$f" ] || grep -qx -- "$name" "$f" || bad_commands+=" $id:${w[0]}:$name(${f##*/})"
      done
    done
  done
done < <(grep -v '^\(#\|$\)' "$table")
check "every command names an existing subcommand${bad_commands:+ (not found:$bad_commands)}" \
  test -z "$bad_commands"

bad_sections=""
sed -n 's/^#\{1,6\} \+//p' "$results" >"$tmp/headings"
while IFS=$'\t' read -r id _ _ _ _ _ _ _ section; do
  awk -v s="$section" 'index($0, s) == 1 { found = 1 } END { exit !found }' "$tmp/headings" ||
    bad_sections+=" $id"
done < <(grep -v '^\(#\|$\)' "$table")
check "every section is the start of a docs/results.md heading${bad_sections:+ (not:$bad_sections)}" \
  test -z "$bad_sections"

"$tool" --list --markdown >"$tmp/table.md"
check "--list --markdown: a header, a rule and one row per figure" \
  test "$(grep -c '^| ' "$tmp/table.md")" -eq $((rows + 2))
sed -n '/^<!-- tools\/reproduce --list --markdown: begin -->$/,/^<!-- tools\/reproduce --list --markdown: end -->$/p' \
  "$results" | sed '1d;$d' >"$tmp/pasted.md"
check "docs/results.md holds the table of tools/reproduce --list --markdown" \
  diff -q "$tmp/table.md" "$tmp/pasted.md"

# --- errors ---------------------------------------------------------------------------------
# shellcheck disable=SC2317 # called through check
one_line_matching() {  # one_line_matching REGEX FILE
  [ "$(wc -l <"$2")" -eq 1 ] && grep -qE -- "$1" "$2"
}
expect() {  # expect NAME STATUS REGEX COMMAND...: status, one line on stderr matching REGEX
  local name=$1 status=$2 regex=$3 rc
  shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  check "$name: exit $status" test "$rc" -eq "$status"
  check "$name: one line on stderr matching /$regex/" one_line_matching "$regex" "$tmp/err"
}
expect "unknown figure" 2 "unknown figure 'compactgpu-fig9'; did you mean compactgpu-fig8-9\\?" \
  "$tool" compactgpu-fig9
expect "misspelled figure" 2 "did you mean soaalloc-fig5\\?" "$tool" soaloc-fig5
expect "figure as the paper writes it" 2 "did you mean rw-fig7\\?" "$tool" "RW Fig. 7"
expect "missing build folder" 2 "build folder $tmp/nowhere not found: build heaplab" \
  "$tool" rw-fig7 --build-dir "$tmp/nowhere" --out "$tmp/o"
mkdir -p "$tmp/empty-build"
expect "missing binary" 2 "bench/heaplab_bench not found: build it with cmake --build .* --target heaplab_bench" \
  "$tool" rw-fig7 --build-dir "$tmp/empty-build" --out "$tmp/o"
expect "unknown option" 2 "unknown option --bogus" "$tool" rw-fig7 --bogus
expect "no figure" 2 "which figure" "$tool"
"$tool" --help >"$tmp/help" 2>&1
check "--help exits 0" test $? -eq 0
check "--help has examples" grep -q "^Examples:" "$tmp/help"

mkdir -p "$tmp/broken/tools"
cp "$tool" "$tmp/broken/tools/reproduce"
printf '# comment\nrw-fig7\tRW Fig. 7\twhat\theaplab_bench rw fig7\t-\t~1 s\tGPU\n' \
  >"$tmp/broken/tools/figures.tsv"
expect "malformed table line" 2 "figures.tsv:2: expected 9 tab-separated fields, found 7" \
  "$tmp/broken/tools/reproduce" --list

# --- running, with stub binaries ------------------------------------------------------------
# A stub prints its arguments, writes the files named after --csv/--profile/--csv-dir and exits
# STUB_RC (4 with heaplab's SKIPPED line).
mkdir -p "$tmp/stub/bench" "$tmp/stub/apps"
cat >"$tmp/stub/bench/heaplab_bench" <<'EOF'
#!/usr/bin/env bash
echo "stub $(basename "$0") $*"
while [ $# -gt 0 ]; do
  case $1 in
    --csv | --profile) echo "stub,csv" >"$2" ;;
    --csv-dir) echo "stub,csv" >"$2/fig9_fragmentation.csv" ;;
  esac
  shift
done
rc=${STUB_RC:-4}
[ "$rc" != 4 ] || echo "heaplab_bench: SKIPPED: nothing was measured: no CUDA device (stub)" >&2
exit "$rc"
EOF
chmod +x "$tmp/stub/bench/heaplab_bench"
cp "$tmp/stub/bench/heaplab_bench" "$tmp/stub/apps/heaplab_apps"

STUB_RC=4 "$tool" rw-fig7 --build-dir "$tmp/stub" --out "$tmp/o4" >"$tmp/out" 2>"$tmp/err"
check "no GPU: exit 4 passed through" test $? -eq 4
check "no GPU: says NOT CHECKED" grep -q "rw-fig7: NOT CHECKED: no usable GPU" "$tmp/err"
check "no GPU: the log has the command as run" \
  grep -qxF "stub heaplab_bench rw fig7 --csv $tmp/o4/fig7.csv" "$tmp/o4/log.txt"
check "no GPU: the log has the SKIPPED line" grep -q "SKIPPED" "$tmp/o4/log.txt"

STUB_RC=0 "$tool" compactgpu-fig13 --build-dir "$tmp/stub" --out "$tmp/o0" --no-plot \
  >"$tmp/out" 2>"$tmp/err"
check "passed: exit 0" test $? -eq 0
check "passed: all 6 commands ran" test "$(grep -c "^stub heaplab_apps gen-ca " "$tmp/o0/log.txt")" -eq 6
check "passed: each wrote its profile into --out" test -f "$tmp/o0/none.csv" -a -f "$tmp/o0/n10.csv"

STUB_RC=1 "$tool" compactgpu-fig13 --build-dir "$tmp/stub" --out "$tmp/o1" >"$tmp/out" 2>"$tmp/err"
check "check failed: exit 1 passed through" test $? -eq 1
check "check failed: stops after the first command" test "$(grep -c "^stub " "$tmp/o1/log.txt")" -eq 1
check "check failed: says so" grep -q "FAILED: a check failed in command 1 of 6" "$tmp/err"

STUB_RC=0 "$tool" rw-fig7 --build-dir "$tmp/stub" --out "$tmp/op" >"$tmp/out" 2>"$tmp/err"
check "a plot that cannot be drawn (no matplotlib, or the stub's CSV) keeps exit 0" test $? -eq 0
check "... and says why" grep -qE "plots skipped|plot-rw failed" "$tmp/err"

"$tool" rw-fig7 --dry-run --build-dir B --out O >"$tmp/out" 2>&1
printf '%s\n' "B/bench/heaplab_bench rw fig7 --csv O/fig7.csv" \
  "tools/plot-rw fig7 O/fig7.csv O/fig7.png" >"$tmp/want"
check "--dry-run prints the command and the plot as they would run" diff -q "$tmp/want" "$tmp/out"
exit $fail

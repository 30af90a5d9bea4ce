#!/bin/bash
# tests/t_skips.sh CAIRN -- a skipped case is reported as skipped, never as
# passed. Runs the unit binary beside CAIRN on the tokeniser suite from a
# folder without the real vocabularies (`make test-data`'s files): its
# golden cases must be counted in "N skipped" and named on stdout, and the
# offline cases must still pass.
set -u
cd "$(dirname "$0")/.."
root=$(pwd)
unit=$(dirname "$1")/unit
unit=$(readlink -f "$unit")
tmp=$(mktemp -d /tmp/cairn-skips-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "t_skips: $*" >&2; failed=$((failed + 1)); }

ln -s "$root/tests" "$tmp/tests"
(cd "$tmp" && "$unit" vocab > "$tmp/out" 2> "$tmp/err")
rc=$?
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$tmp/out" | tail -1)
if [ -n "$line" ]; then ok; else bad "no 'N passed, N failed, N skipped' line: $(tail -2 "$tmp/out")"; fi
s=$(echo "$line" | sed -E 's/.* ([0-9]+) skipped$/\1/')
p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
if [ "${s:-0}" -ge 4 ]; then ok; else bad "golden cases not counted as skipped: $line"; fi
if [ "$(grep -c '^skipped: test_golden' "$tmp/out")" -ge 3 ]; then ok; else bad "skips are not named: $(grep skipped "$tmp/out" | head -3)"; fi
if [ "${p:-0}" -gt 10 ] && [ $rc -eq 0 ]; then ok; else bad "offline cases: $line (exit $rc)"; fi

# make check's summary (tests/run-all): the number of skips it announces
# is the sum of the numbers it lists per part, although one part counts 3
# skips under one reason and another names 2 reasons for 2 skips
cat > "$tmp/t_three.sh" <<'SH'
echo "skipped: three cases need a thing"
echo "1 passed, 0 failed, 3 skipped"
SH
cat > "$tmp/t_two.sh" <<'SH'
echo "  skipped: first reason"
echo "  skipped: second reason" >&2
echo "0 passed, 0 failed, 2 skipped"
SH
CAIRN_FAIL_ON_SKIP=0 tests/run-all "$(dirname "$unit")" "$tmp/t_three.sh" "$tmp/t_two.sh" \
	> "$tmp/all.out" 2> "$tmp/all.err"
head=$(grep -oE '^skipped \([0-9]+' "$tmp/all.err" | grep -oE '[0-9]+$')
listed=$(grep -E '^  [^ ].*: [0-9]+ skipped$' "$tmp/all.err" |
	awk '{ n += $(NF - 1) } END { if (NR) print n }')
if [ "${head:-x}" = 5 ] && [ "${listed:-y}" = 5 ] && grep -q '^1 passed, 0 failed, 5 skipped$' "$tmp/all.out"; then
	ok
else
	bad "the skip summary's count does not match its list: $(grep -A8 '^skipped (' "$tmp/all.err")"
fi
if [ "$(grep -c '^    .*reason\|^    three cases' "$tmp/all.err")" = 3 ]; then ok; else
	bad "the skip summary does not list each reason once: $(grep -A8 '^skipped (' "$tmp/all.err")"; fi

# make eval on a clone without the evaluation sets: skipped (not passed,
# not failed), saying where the sets come from; a failure under
# CAIRN_FAIL_ON_SKIP=1
CAIRN_FAIL_ON_SKIP=0 tests/run-eval "$1" "$tmp/no-eval" "$tmp/eval-out" > "$tmp/ev.out" 2> "$tmp/ev.err"
rc=$?
if [ $rc -eq 0 ] && grep -qx 'eval: 0 passed, 0 failed, 1 skipped' "$tmp/ev.out" &&
	grep -q "^skipped: make eval: no evaluation data at '$tmp/no-eval'.*public benchmarks.*EVAL_DIR=" "$tmp/ev.out"; then
	ok
else
	bad "make eval without data: exit $rc: $(cat "$tmp/ev.out" "$tmp/ev.err" | head -3)"
fi
CAIRN_FAIL_ON_SKIP=1 tests/run-eval "$1" "$tmp/no-eval" "$tmp/eval-out" > /dev/null 2>&1
if [ $? -eq 1 ]; then ok; else bad "make eval without data passed under CAIRN_FAIL_ON_SKIP=1"; fi
echo "skips: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

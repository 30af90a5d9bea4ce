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
echo "skips: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

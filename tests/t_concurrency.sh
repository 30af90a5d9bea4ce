#!/bin/bash
# EVIDENCE-OF: SPEC 9 reliability -- 4 writer and 4 reader processes at once
# for a bounded time: no "database is locked" reaches the user and no write
# is lost.
set -u
cairn=$(readlink -f "$1")
secs=${CONC_SECONDS:-8}
tmp=$(mktemp -d /tmp/cairn-conc-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export CAIRN_DIR="$tmp/store" CAIRN_GLOBAL="$tmp/global" HOME="$tmp"
passed=0
failed=0
"$cairn" init >/dev/null

writer() {
	local w=$1 n=0 end=$((SECONDS + secs))
	while [ $SECONDS -lt $end ] && [ $n -lt 200 ]; do
		n=$((n + 1))
		if "$cairn" write --kind fact --key "w$w:$n" "writer $w note $n about deploys" \
			>/dev/null 2>>"$tmp/err.$w"; then
			echo "w$w:$n" >> "$tmp/ok.$w"
		fi
	done
}
reader() {
	local r=$1 n=0 end=$((SECONDS + secs))
	while [ $SECONDS -lt $end ] && [ $n -lt 400 ]; do
		n=$((n + 1))
		"$cairn" list --limit 5 >/dev/null 2>>"$tmp/rerr.$r"
		"$cairn" read "w1:1" >/dev/null 2>/dev/null
	done
}
for i in 1 2 3 4; do writer $i & done
for i in 1 2 3 4; do reader $i & done
wait

if cat "$tmp"/err.* "$tmp"/rerr.* 2>/dev/null | grep -qi "locked\|busy"; then
	echo "t_concurrency: a lock error reached the user:" >&2
	cat "$tmp"/err.* "$tmp"/rerr.* | grep -i "locked\|busy" | head -3 >&2
	failed=$((failed + 1))
else
	passed=$((passed + 1))
fi
if [ -n "$(cat "$tmp"/err.* 2>/dev/null)" ]; then
	echo "t_concurrency: writer errors:" >&2
	cat "$tmp"/err.* | head -3 >&2
	failed=$((failed + 1))
else
	passed=$((passed + 1))
fi
written=$(cat "$tmp"/ok.* 2>/dev/null | wc -l)
stored=$("$cairn" list --status all --json | jq -r '.[].key' | sort)
missing=$(comm -23 <(cat "$tmp"/ok.* | sort) <(echo "$stored"))
if [ "$written" -gt 0 ] && [ -z "$missing" ]; then
	passed=$((passed + 1))
else
	echo "t_concurrency: $written acknowledged writes, missing: $(echo "$missing" | head -3)" >&2
	failed=$((failed + 1))
fi
echo "concurrency ($written writes in ${secs}s): $passed passed, $failed failed"
[ $failed -eq 0 ]

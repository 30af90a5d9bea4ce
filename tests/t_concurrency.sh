#!/bin/bash
# EVIDENCE-OF: SPEC 9 reliability -- on one workspace, for a
# bounded time (CONC_SECONDS, default 8), all at once: 3 CLI writers, 2 CLI
# readers, the Claude Code hook (UserPromptSubmit, in a loop), one `cairn
# mcp` server fed memory_write + memory_recall over a pipe, `cairn seed` (its
# files rewritten before each run) and `cairn capture` (a growing command
# log). Checks: no "database is locked"/busy error reaches a user (stderr of
# every command), an agent (MCP replies) or the hook's log; every command
# succeeded; no acknowledged write (CLI exit 0, MCP result) is lost; the
# hook's latency while the writers run is reported (p50/p90 ms). A receipt
# the hook could not write under the lock is spooled, not lost.
set -u
cairn=$(readlink -f "$1")
secs=${CONC_SECONDS:-8}
tmp=$(mktemp -d /tmp/cairn-conc-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
unset CAIRN_DIR
export CAIRN_GLOBAL="$tmp/global" HOME="$tmp/home" XDG_DATA_HOME="$tmp/xdg"
export CAIRN_CACHE_DIR="$tmp/cache"
ws="$tmp/ws"
mkdir -p "$HOME" "$ws/docs/adr"
cd "$ws" || exit 1
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "t_concurrency: $*" >&2; failed=$((failed + 1)); }
"$cairn" init >/dev/null || { bad "init failed"; echo "$passed passed, $failed failed"; exit 1; }
"$cairn" write -k fact --key deploy:staging "Deploy to staging with make deploy-staging." >/dev/null

writer() {
	local w=$1 n=0 end=$((SECONDS + secs))
	while [ $SECONDS -lt $end ] && [ $n -lt 200 ]; do
		n=$((n + 1))
		if "$cairn" write --kind fact --key "w$w:$n" "writer $w note $n about deploys" \
			>/dev/null 2>>"$tmp/err.w$w"; then
			echo "w$w:$n" >> "$tmp/ok.w$w"
		fi
	done
}
reader() {
	local r=$1 n=0 end=$((SECONDS + secs))
	while [ $SECONDS -lt $end ] && [ $n -lt 400 ]; do
		n=$((n + 1))
		"$cairn" list --limit 5 >/dev/null 2>>"$tmp/err.r$r"
		"$cairn" recall "deploy staging" >/dev/null 2>>"$tmp/err.r$r"
	done
}
hooker() {
	local n=0 end=$((SECONDS + secs)) t0 t1
	while [ $SECONDS -lt $end ] && [ $n -lt 400 ]; do
		n=$((n + 1))
		t0=$(date +%s%N)
		printf '{"hook_event_name":"UserPromptSubmit","cwd":"%s","session_id":"c","prompt":"how do I deploy to staging %d"}' \
			"$ws" "$n" | "$cairn" hook > "$tmp/hook.out" 2>>"$tmp/err.hook"
		t1=$(date +%s%N)
		echo $(( (t1 - t0) / 1000000 )) >> "$tmp/hook.ms"
		if [ -s "$tmp/hook.out" ] && ! jq -e .hookSpecificOutput.additionalContext "$tmp/hook.out" >/dev/null 2>&1; then
			echo "hook output $n is not the expected JSON" >> "$tmp/err.hook"
		fi
	done
}
seeder() {
	local v=0 end=$((SECONDS + secs)) i
	while [ $SECONDS -lt $end ] && [ $v -lt 100 ]; do
		v=$((v + 1))
		for ((i = 1; i <= 10; i++)); do
			printf '# Decision %d\n\nStatus: accepted\n\nWe use tool%d, version %d.\n' "$i" "$i" "$v" \
				> "docs/adr/000$i-d$i.md"
		done
		"$cairn" seed --no-git >/dev/null 2>>"$tmp/err.seed" && echo "$v" >> "$tmp/ok.seedv"
	done
}
capturer() {
	local n=0 end=$((SECONDS + secs))
	while [ $SECONDS -lt $end ] && [ $n -lt 100 ]; do
		n=$((n + 1))
		printf '{"time":"2025-05-26T07:00:%02dZ","session":"c%d","cmd":"make deploy-env%d","exit":0,"output":"deployed"}\n' \
			$((n % 60)) "$n" "$n" >> "$tmp/cmds.jsonl"
		"$cairn" capture "$tmp/cmds.jsonl" >/dev/null 2>>"$tmp/err.capture"
	done
}
mcp_feed() { # memory_write + memory_recall pairs for the time bound
	local n=0 end=$((SECONDS + secs))
	printf '%s\n' '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t_concurrency","version":"1"}}}' \
		'{"jsonrpc":"2.0","method":"notifications/initialized"}'
	while [ $SECONDS -lt $end ] && [ $n -lt 300 ]; do
		n=$((n + 1))
		printf '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"memory_write","arguments":{"kind":"fact","key":"mcp:%d","body":"agent note %d on the deploy"}}}\n' $((2 * n)) "$n" "$n"
		printf '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"memory_recall","arguments":{"query":"deploy staging"}}}\n' $((2 * n + 1))
		sleep 0.02
	done
}

have_capture=0
"$cairn" capture --help >/dev/null 2>&1 && have_capture=1
for i in 1 2 3; do writer $i & done
for i in 1 2; do reader $i & done
hooker &
seeder &
[ $have_capture = 1 ] && capturer &
mcp_feed | "$cairn" mcp > "$tmp/mcp.out" 2>"$tmp/err.mcp" &
wait

# no lock error reaches a user, an agent or the hook's log
if cat "$tmp"/err.* "$tmp/mcp.out" "$ws/.cairn/hook.log" 2>/dev/null | grep -qi "locked\|busy"; then
	bad "a lock error reached a user or agent: $(cat "$tmp"/err.* "$tmp/mcp.out" "$ws/.cairn/hook.log" 2>/dev/null | grep -i "locked\|busy" | head -3)"
else
	ok
fi
# every command succeeded
errs=$(cat "$tmp"/err.* 2>/dev/null | head -3)
if [ -z "$errs" ]; then
	ok
else # name the commands (err.w1, err.hook, err.mcp, ...) and their first lines
	bad "command errors in $(grep -l . "$tmp"/err.* | xargs -n1 basename | tr '\n' ' '): $errs"
	grep -h "^    #[0-9]" "$tmp"/err.* 2>/dev/null | head -12 >&2
fi
# the hook's log: outcome "error" is a failure; "timeout" is its deadline
# (it then prints nothing and the prompt goes on): counted, reported
hookerr=$(awk -F'\t' '$3 == "error"' "$ws/.cairn/hook.log" 2>/dev/null | head -3)
[ -z "$hookerr" ] && ok || bad "hook log errors: $hookerr"
timeouts=$(awk -F'\t' '$3 == "timeout"' "$ws/.cairn/hook.log" 2>/dev/null | wc -l)
# MCP: every request answered, no error, every acknowledged write stored
nreq=$(grep -c '"id":[1-9]' "$tmp/mcp.out")
nerr=$(jq -c 'select(.error != null or .result.isError == true)' "$tmp/mcp.out" | head -3)
[ "$nreq" -gt 0 ] && [ -z "$nerr" ] && ok || bad "mcp: $nreq replies, errors: $nerr"
jq -r 'select(.result.content != null) | .result.content[0].text | fromjson? | .record.id // empty' \
	"$tmp/mcp.out" > "$tmp/mcp.ids"
stored=$("$cairn" list --status all --json)
missing=$(comm -23 <(sort -u "$tmp/mcp.ids") <(jq -r '.[].id' <<< "$stored" | sort -u) | head -3)
[ -s "$tmp/mcp.ids" ] && [ -z "$missing" ] && ok || bad "mcp writes: $(wc -l < "$tmp/mcp.ids") acknowledged, missing: $missing"
# CLI writes
written=$(cat "$tmp"/ok.w* 2>/dev/null | wc -l)
missing=$(comm -23 <(cat "$tmp"/ok.w* | sort) <(jq -r '.[].key // empty' <<< "$stored" | sort) | head -3)
[ "$written" -gt 0 ] && [ -z "$missing" ] && ok || bad "$written acknowledged writes, missing: $missing"
# seed: the last acknowledged version is what the store holds
lastv=$(tail -1 "$tmp/ok.seedv" 2>/dev/null)
nseed=$(jq --arg v "version $lastv." '[.[] | select(.origin == "file" and .status != "retired" and (.body | contains($v)))] | length' <<< "$stored")
[ -n "$lastv" ] && [ "$nseed" = 10 ] && ok || bad "seed: last version $lastv, $nseed of 10 records hold it"
# every receipt the hook reported is kept (in the table, or still spooled
# when the store was locked), and a recall now moves spooled ones in
rids=$(grep -o 'receipt=q[0-9a-f]*' "$ws/.cairn/hook.log" | cut -d= -f2)
"$cairn" recall "deploy staging" >/dev/null 2>&1
lost=0
for r in $rids; do "$cairn" receipt "$r" >/dev/null 2>&1 || lost=$((lost + 1)); done
pending=0; [ -f "$ws/.cairn/receipts.pending" ] && pending=$(wc -c < "$ws/.cairn/receipts.pending")
[ -n "$rids" ] && [ $lost = 0 ] && [ "$pending" = 0 ] && ok ||
	bad "hook receipts: $(echo "$rids" | wc -w) reported, $lost not found, $pending bytes still spooled"
out=$("$cairn" stats --integrity 2>&1)
[ "$out" = ok ] && ok || bad "integrity: $out"
# the hook's latency while the writers ran
lat=$(sort -n "$tmp/hook.ms" | awk '{ v[NR] = $1 } END { if (NR) { a = int(NR * 0.5 + 0.5); b = int(NR * 0.9 + 0.5); if (a < 1) a = 1; if (b < 1) b = 1; printf "%d calls, p50 %d ms, p90 %d ms", NR, v[a], v[b] } }')
echo "concurrency ($written CLI writes, $(wc -l < "$tmp/mcp.ids") MCP writes, $(wc -l < "$tmp/ok.seedv" 2>/dev/null || echo 0) seeds, hook $lat, $timeouts past its deadline, in ${secs}s): $passed passed, $failed failed"
[ $failed -eq 0 ]

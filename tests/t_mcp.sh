#!/bin/bash
# EVIDENCE-OF: `cairn mcp` speaks JSON-RPC 2.0 over
# stdio: raw-pipe checks with jq (always run) for malformed input, limits,
# ordering and negotiation, each followed by a ping that must still be
# answered; then the official TypeScript SDK client (tests/tools/
# mcp-client.mjs) when `make test-data` (tests/tools/mcp-setup) installed
# it (else a "skipped: ..." line, counted as skipped; this test never
# reaches the network itself).
#
#   tests/t_mcp.sh CAIRN
#
# Ends with "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/.."
root=$(pwd)
cairn=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tmp=$(mktemp -d /tmp/cairn-mcp-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "t_mcp: $*" >&2; failed=$((failed + 1)); }

export CAIRN_GLOBAL=$tmp/global XDG_DATA_HOME=$tmp/xdg HOME=$tmp/home
export CAIRN_CACHE_DIR=${CAIRN_CACHE_DIR:-$tmp/cache}
mkdir -p "$HOME"
ws=$tmp/ws
mkdir -p "$ws/docs/adr"
export CAIRN_DIR=$ws/.cairn

# ------------------------------------------------------------ the workspace
(
	cd "$ws" || exit 1
	"$cairn" init > /dev/null &&
	"$cairn" write -k fact --key deploy:staging -t "Deploy to staging" \
		"Deploy the orders service with make deploy-staging after the migrations." > /dev/null &&
	"$cairn" write -k decision --key db:engine -t "PostgreSQL for orders" \
		"We chose PostgreSQL for the orders database because we need transactions." > /dev/null &&
	"$cairn" write -k rule --key rule:prod -t "Never touch PROD" \
		"Never run database migrations against PROD by hand." > /dev/null &&
	cat > docs/adr/0001-queue.md <<'MD' &&
# ADR 1: message queue

We use NATS as the message queue between the order services.
MD
	"$cairn" seed docs/adr > /dev/null
) 2> "$tmp/setup.err"
if [ $? -eq 0 ]; then ok; else bad "workspace set-up failed: $(tail -3 "$tmp/setup.err")"; fi

# ----------------------------------------------------------- raw pipe checks
# Each case: a message line, then the jq test its reply must pass ("none":
# no reply at all). Every case is followed by a ping whose reply must come
# next, so a missing, extra or late reply shows up as a mismatch.
in=$tmp/in.jsonl
exp=$tmp/expect.txt
: > "$in"
: > "$exp"
n=0
case_() { # LINE TEST
	printf '%s\n' "$1" >> "$in"
	[ "$2" = none ] || printf '%s\n' "$2" >> "$exp"
	n=$((n + 1))
	printf '{"jsonrpc":"2.0","id":"ping-%d","method":"ping"}\n' "$n" >> "$in"
	printf '.id == "ping-%d" and .result == {}\n' "$n" >> "$exp"
}
init='{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t_mcp","version":"1"}}}'

case_ '{not json' '.id == null and .error.code == -32700'
case_ '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' '.id == 1 and .error.code == -32002'
case_ '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_write","arguments":{"kind":"fact","body":"early"}}}' '.id == 2 and .error.code == -32002'
case_ "$init" '.id == "init" and .result.protocolVersion == "2025-06-18" and .result.serverInfo.name == "cairn" and (.result.capabilities.tools | type) == "object"'
case_ '{"jsonrpc":"2.0","method":"notifications/initialized"}' none
case_ "$init" '.id == "init" and .error.code == -32600'
case_ '{"jsonrpc":"2.0","id":3,"method":"no/such/method"}' '.id == 3 and .error.code == -32601'
case_ '{"jsonrpc":"2.0","method":"no/such/notification"}' none
case_ '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"memory_recall","arguments":{"query":5}}}' '.id == 4 and .result.isError == true and (.result.content[0].text | test("must be a string"))'
case_ '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"memory_recall","arguments":{"query":"x","k":"many"}}}' '.id == 5 and .result.isError == true'
case_ '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":"memory_recall"}' '.id == 6 and .error.code == -32600'
case_ '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"memory_recall","arguments":["x"]}}' '.id == 7 and .error.code == -32602'
case_ '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"approve","arguments":{}}}' '.id == 8 and .error.code == -32602'
case_ '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":7}}' '.id == 9 and .error.code == -32602'
case_ '[{"jsonrpc":"2.0","id":10,"method":"ping"}]' '.id == null and .error.code == -32600'
case_ '{"jsonrpc":"2.0","id":null,"method":"ping"}' '.id == null and .error.code == -32600'
case_ '{"id":11,"method":"ping"}' '.id == 11 and .error.code == -32600'
case_ '42' '.id == null and .error.code == -32600'
case_ '{"jsonrpc":"2.0","id":12,"result":{}}' none
case_ '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"memory_write","arguments":{"kind":"fact","body":"a notification must not write"}}}' none
# 10 MB on one line: refused, never buffered whole
big=$tmp/big.txt
{ printf '{"jsonrpc":"2.0","id":13,"method":"ping","params":{"pad":"'; head -c 10485760 /dev/zero | tr '\0' 'a'; printf '"}}'; } > "$big"
case_ "$(cat "$big")" '.id == null and .error.code == -32600 and (.error.message | test("too large"))'
# deep nesting: 100000 '[' then 100000 ']' (fits the line limit)
deep=$(head -c 100000 /dev/zero | tr '\0' '[')$(head -c 100000 /dev/zero | tr '\0' ']')
case_ "$deep" '.id == null and .error.code == -32700'
case_ '{"jsonrpc":"2.0","id":14,"method":"ping","params":{"a":'"$(printf '{"b":%.0s' $(seq 100))"'1'"$(printf '}%.0s' $(seq 100))"'}}' '.id == null and .error.code == -32700'
case_ $'{"jsonrpc":"2.0","id":15,"method":"ping"}\r' '.id == 15 and .result == {}'
case_ '{"jsonrpc":"2.0","id":"list","method":"tools/list"}' '.id == "list" and (.result.tools | length) == 6 and ([.result.tools[].name | test("approve|reject|accept")] | any | not) and ([.result.tools[] | has("outputSchema")] | all)'
case_ '{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"memory_write","arguments":{"kind":"decision","body":"Use Valkey for sessions"}}}' '.id == 16 and .result.structuredContent.record.status == "candidate" and .result.structuredContent.record.origin == "agent" and .result.structuredContent.may_replace == []'
# a write close to an existing decision lists it in may_replace (never linked)
case_ '{"jsonrpc":"2.0","id":161,"method":"tools/call","params":{"name":"memory_write","arguments":{"kind":"decision","title":"PostgreSQL for orders","body":"We chose PostgreSQL for the orders database because we need transactions and joins."}}}' '.id == 161 and ([.result.structuredContent.may_replace[] | .key] == ["db:engine"]) and .result.structuredContent.may_replace[0].similarity >= 0.5 and .result.structuredContent.may_replace[0].status == "accepted" and .result.structuredContent.record.supersedes == null'
case_ '{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"memory_write","arguments":{"kind":"decision","body":"Use Valkey","status":"accepted"}}}' '.id == 17 and .result.isError == true'
case_ '{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"name":"memory_candidates","arguments":{}}}' '.id == 18 and .result.structuredContent.count == 2'
# the last message has no newline: still answered at end of input
printf '{"jsonrpc":"2.0","id":"last","method":"ping"}' >> "$in"
printf '.id == "last" and .result == {}\n' >> "$exp"

(cd "$ws" && "$cairn" mcp < "$in" > "$tmp/out" 2> "$tmp/err")
rc=$?
if [ $rc -eq 0 ]; then ok; else bad "cairn mcp exited $rc: $(tail -3 "$tmp/err")"; fi
# stdout holds only JSON-RPC messages
if jq -e -s 'all(.[]; type == "object" and .jsonrpc == "2.0" and (has("result") or has("error")))' "$tmp/out" > /dev/null 2>&1; then
	ok
else
	bad "stdout holds something other than JSON-RPC replies"
fi
got=$(wc -l < "$tmp/out")
want=$(wc -l < "$exp")
if [ "$got" -eq "$want" ]; then ok; else bad "$got replies, expected $want"; fi
i=0
while IFS= read -r test; do
	i=$((i + 1))
	line=$(sed -n "${i}p" "$tmp/out")
	if [ -n "$line" ] && printf '%s\n' "$line" | jq -e "$test" > /dev/null 2>&1; then
		ok
	else
		bad "reply $i fails '$test': $(printf '%.300s' "$line")"
	fi
done < "$exp"
# the notification's write did not happen; the refused write neither
# (the two candidates: ids 16 and 161)
cand=$("$cairn" candidates --json 2> /dev/null | jq 'length')
if [ "$cand" = 2 ]; then ok; else bad "expected 2 candidates after the raw run, found $cand"; fi

# --------------------------------------------------------------- negotiation
for v in 2024-11-05 2025-03-26 2025-06-18 2099-01-01; do
	printf '%s\n%s\n%s\n' \
		'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"'$v'"}}' \
		'{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
		'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_recall","arguments":{"query":"deploy staging"}}}' |
		(cd "$ws" && "$cairn" mcp) > "$tmp/neg" 2> "$tmp/neg.err"
	case $v in
	2024-11-05) t='.[0].result.protocolVersion == "2024-11-05" and ([.[1].result.tools[] | has("outputSchema") or has("annotations")] | any | not) and (.[2].result | has("structuredContent") | not) and (.[2].result.content[0].text | fromjson | .count >= 1)' ;;
	2025-03-26) t='.[0].result.protocolVersion == "2025-03-26" and ([.[1].result.tools[] | has("annotations")] | all) and ([.[1].result.tools[] | has("outputSchema")] | any | not)' ;;
	*) t='.[0].result.protocolVersion == "2025-06-18" and ([.[1].result.tools[] | has("outputSchema")] | all) and .[2].result.structuredContent.count >= 1' ;;
	esac
	if jq -e -s "$t" "$tmp/neg" > /dev/null 2>&1; then ok; else bad "negotiation $v: $(head -c 300 "$tmp/neg")"; fi
done

# no workspace: exit 1 with a message on stderr, nothing on stdout
(cd "$tmp" && CAIRN_DIR= "$cairn" mcp < /dev/null > "$tmp/nows.out" 2> "$tmp/nows.err")
rc=$?
if [ $rc -eq 1 ] && [ ! -s "$tmp/nows.out" ] && grep -q 'cairn init' "$tmp/nows.err"; then ok; else bad "no workspace: exit $rc, stdout $(head -c 100 "$tmp/nows.out")"; fi

# ------------------------------------------------------------ the SDK client
skipped=0
sdk_pj=$root/build/tools/mcp/node_modules/@modelcontextprotocol/sdk/package.json
if [ ! -f "$sdk_pj" ]; then
	echo "not installed in build/tools/mcp (run \`make test-data\`)" > "$tmp/setup-sdk.err"
fi
if [ -f "$sdk_pj" ] && sdk=$("$root/tests/tools/mcp-setup" 2> "$tmp/setup-sdk.err"); then
	node "$root/tests/tools/mcp-client.mjs" "$sdk" "$cairn" "$ws" > "$tmp/sdk.out" 2> "$tmp/sdk.err"
	rc=$?
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$tmp/sdk.out" | tail -1)
	grep -v -E '^[0-9]+ passed, [0-9]+ failed$' "$tmp/sdk.out" >&2
	if [ -z "$line" ]; then
		bad "SDK client printed no result (exit $rc): $(tail -5 "$tmp/sdk.err")"
	else
		p=${line%% passed*}
		f=${line#*passed, }
		f=${f%% failed}
		passed=$((passed + p))
		failed=$((failed + f))
		echo "t_mcp: SDK client: $line" >&2
	fi
else
	echo "skipped: SDK client part ($(tail -1 "$tmp/setup-sdk.err"))"
	skipped=1
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]

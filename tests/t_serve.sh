#!/bin/bash
# EVIDENCE-OF: `cairn serve`, the review console's HTTP API,
# against 127.0.0.1 with curl: the printed URL and .cairn/serve.url (0600),
# no token -> 401, a wrong token -> 401, a foreign Host -> 403 (DNS
# rebinding), a foreign Origin -> 403, no CORS header, a strict CSP;
# approve, reject, edit-then-approve and approve-and-supersede change the
# store (checked with `cairn get`); a secret in an edit is refused and
# changes nothing; malformed JSON, a wrong Content-Type, a 2 MiB body, an
# oversized header and unknown calls get clear JSON errors and the server
# keeps answering; search carries the --explain figures; hook calls with
# their receipts; eval runs (one appended by `cairn eval --record`);
# Accept-Language; 40 connections trickling headers do not lock the owner
# out; SIGTERM ends it with 0 and removes serve.url.
#
#   tests/t_serve.sh CAIRN
#
# The server is the binary under test, on a port the OS picks, killed by
# its pid when the test ends. Ends with "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/.."
cairn=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tmp=$(mktemp -d /tmp/cairn-serve-XXXXXX)
srv=""
cleanup() {
	[ -n "$srv" ] && kill "$srv" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "t_serve: $*" >&2; failed=$((failed + 1)); }
check() { # check NAME COND...
	local name=$1
	shift
	if "$@" > /dev/null; then ok; else bad "$name"; fi
}

if ! command -v curl > /dev/null; then
	echo "skipped: curl is not installed (Debian: curl)"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi

export CAIRN_GLOBAL=$tmp/global XDG_DATA_HOME=$tmp/xdg HOME=$tmp/home
export CAIRN_CACHE_DIR=${CAIRN_CACHE_DIR:-$tmp/cache}
unset CAIRN_DIR
mkdir -p "$HOME" "$tmp/ws" "$tmp/nows"
cd "$tmp/ws"

# ------------------------------------------------------- usage, no store
"$cairn" serve --help > "$tmp/help" 2>&1
check "--help exits 0 and names the token" \
	grep -q 'token' "$tmp/help"
(cd "$tmp/nows" && "$cairn" serve > /dev/null 2> "$tmp/err")
rc=$?
check "no workspace: exit 1 ($rc)" [ "$rc" = 1 ]
"$cairn" init > /dev/null
"$cairn" serve --listen 'not-an-address:x' > /dev/null 2> "$tmp/err"
rc=$?
check "a bad --listen is a usage error ($rc)" [ "$rc" = 2 ]
check "a bad --listen says what it wants" grep -q 'ADDRESS\[:PORT\]' "$tmp/err"

# ------------------------------------------------------------ the store
id_of() { sed -n 's/^\(r[0-9a-f]*\) .*/\1/p'; }
a=$("$cairn" write --origin agent -k fact -t "Deploy uses kamal" \
	"Staging deploys run kamal deploy from the ops repository." | id_of)
b=$("$cairn" write --origin agent -k fact -t "Flaky idea" \
	"Restart the cache nightly, maybe." | id_of)
c=$("$cairn" write --origin agent -k fact -t "Edit me" \
	"Draft text of a candidate." | id_of)
old=$("$cairn" write -k decision -t "Blue-green deploys" \
	"We deploy the billing service with blue-green switches on blyck." | id_of)
new=$("$cairn" write --origin agent -k decision -t "Blue-green deploys with kamal" \
	"We deploy the billing service with blue-green switches on blyck using kamal." | id_of)
x=$("$cairn" write --origin agent -k note -t "<img src=x onerror=alert(1)>" \
	"<script>alert(1)</script> stored markup" | id_of)
for v in a b c old new x; do
	check "the store has candidate \$$v" [ -n "${!v}" ]
done

# ----------------------------------------------------------------- start
"$cairn" serve > "$tmp/out" 2> "$tmp/serve.err" &
srv=$!
for _ in $(seq 1 100); do
	[ -s "$tmp/out" ] && break
	sleep 0.1
done
url=$(head -1 "$tmp/out")
check "prints http://127.0.0.1:PORT/#token=<32 hex> ($url)" \
	grep -qE '^http://127\.0\.0\.1:[0-9]+/#token=[0-9a-f]{32}$' "$tmp/out"
if ! grep -qE '^http://127\.0\.0\.1:[0-9]+/' "$tmp/out"; then
	sed 's/^/    /' "$tmp/serve.err" >&2
	echo "$passed passed, $((failed + 1)) failed"
	exit 1
fi
port=$(echo "$url" | sed 's|^http://127.0.0.1:\([0-9]*\)/.*|\1|')
tok=${url#*#token=}
base=http://127.0.0.1:$port
check "serve.url holds the URL" [ "$(cat .cairn/serve.url)" = "$url" ]
check "serve.url is mode 0600" [ "$(stat -c %a .cairn/serve.url)" = 600 ]

# req NAME [curl args...]: status in $st, body in $tmp/body, headers in $tmp/hdr
req() {
	st=$(curl -s -o "$tmp/body" -D "$tmp/hdr" -w '%{http_code}' --max-time 10 "$@")
}
get() { req -H "X-Cairn-Token: $tok" "$base$1"; }
post() { req -H "X-Cairn-Token: $tok" -H 'Content-Type: application/json' --data-binary "$2" "$base$1"; }
status_of() { "$cairn" get --json "$1" | jq -r .status; }
jbody() { jq -r "$1" "$tmp/body" 2>/dev/null; }

# ------------------------------------------------------------ the page
req "$base/"
check "GET / is the page (200: $st)" [ "$st" = 200 ]
check "the page is HTML" grep -qi '^content-type: text/html' "$tmp/hdr"
check "a strict CSP: scripts from this server only" \
	grep -qi "^content-security-policy: default-src 'none'; script-src 'self'" "$tmp/hdr"
check "no inline script in the page" \
	bash -c "! grep -q '<script>' '$tmp/body'"
check "nosniff, no framing" \
	bash -c "grep -qi '^x-content-type-options: nosniff' '$tmp/hdr' && grep -qi '^x-frame-options: deny' '$tmp/hdr'"
req "$base/console.js"
check "the script is served as JavaScript ($st)" \
	bash -c "[ '$st' = 200 ] && grep -qi '^content-type: text/javascript' '$tmp/hdr'"
req "$base/nothing-here"
check "an unknown page is a JSON 404 ($st)" \
	bash -c "[ '$st' = 404 ] && [ \"\$(jq -r .error.code '$tmp/body')\" = not_found ]"

# --------------------------------------------------------------- the token
req "$base/api/candidates"
check "no token: 401 ($st)" [ "$st" = 401 ]
check "no token: a JSON error that says what is needed" \
	bash -c "[ \"\$(jq -r .error.code '$tmp/body')\" = unauthorized ] && grep -q X-Cairn-Token '$tmp/body'"
req -H "X-Cairn-Token: 00000000000000000000000000000000" "$base/api/candidates"
check "a wrong token of the right length: 401 ($st)" [ "$st" = 401 ]
req -H "X-Cairn-Token: ${tok}0" "$base/api/candidates"
check "a longer token: 401 ($st)" [ "$st" = 401 ]
req "$base/api/candidates?token=$tok"
check "the token in the query string is not enough: 401 ($st)" [ "$st" = 401 ]
req -H 'Content-Type: application/json' --data-binary '{"id":"'"$b"'"}' "$base/api/reject"
check "a POST without the token: 401 ($st)" [ "$st" = 401 ]
check "... and the candidate is untouched" [ "$(status_of "$b")" = candidate ]

# ----------------------------------------------------- Host and Origin
req -H "X-Cairn-Token: $tok" -H "Host: evil.example:$port" "$base/api/candidates"
check "a foreign Host (DNS rebinding): 403 ($st)" [ "$st" = 403 ]
check "... code bad_host" [ "$(jbody .error.code)" = bad_host ]
req -H "Host: evil.example:$port" "$base/"
check "a foreign Host gets no page either: 403 ($st)" [ "$st" = 403 ]
req -H "X-Cairn-Token: $tok" -H "Host: 127.0.0.1:1" "$base/api/info"
check "our address with another port: 403 ($st)" [ "$st" = 403 ]
req -H "X-Cairn-Token: $tok" -H "Host: localhost:$port" "$base/api/info"
check "Host localhost:PORT is ours: 200 ($st)" [ "$st" = 200 ]
req -H "X-Cairn-Token: $tok" -H 'Content-Type: application/json' \
	-H 'Origin: http://evil.example' --data-binary '{"id":"'"$b"'"}' "$base/api/reject"
check "a foreign Origin on a POST: 403 ($st)" [ "$st" = 403 ]
check "... code bad_origin, the candidate untouched" \
	bash -c "[ \"\$(jq -r .error.code '$tmp/body')\" = bad_origin ] && [ \"\$('$cairn' get --json '$b' | jq -r .status)\" = candidate ]"
req -H "X-Cairn-Token: $tok" -H 'Sec-Fetch-Site: cross-site' "$base/api/info"
check "Sec-Fetch-Site: cross-site: 403 ($st)" [ "$st" = 403 ]
req -X OPTIONS -H "Origin: http://evil.example" \
	-H 'Access-Control-Request-Method: POST' "$base/api/approve"
check "a CORS preflight is refused ($st)" [ "$st" = 403 ]
get /api/info
check "no Access-Control-* header ever" \
	bash -c "! grep -qi '^access-control-' '$tmp/hdr'"
check "API answers are not cached" grep -qi '^cache-control: no-store' "$tmp/hdr"

# ------------------------------------------------------------- reading
get /api/info
check "info: 200, the version and the counts" \
	bash -c "[ '$st' = 200 ] && jq -e '.version and .stats' '$tmp/body' > /dev/null"
check "info: English without Accept-Language" [ "$(jbody .lang)" = en ]
req -H "X-Cairn-Token: $tok" -H 'Accept-Language: zh-CN,zh;q=0.9,en;q=0.8' "$base/api/info"
check "info: Chinese from Accept-Language" [ "$(jbody .lang)" = zh ]
get /api/candidates
check "candidates: the five waiting" [ "$(jbody '.candidates | length')" = 5 ]
check "candidates: with provenance" \
	jq -e --arg n "$new" '.candidates[] | select(.record.id == $n) | .record.source' "$tmp/body"
check "candidates: stored markup comes back as a JSON string" \
	jq -e --arg x "$x" '.candidates[] | select(.record.id == $x) | .record.body | startswith("<script>")' "$tmp/body"
get "/api/suggest?id=$new"
check "suggest: what a candidate may replace" \
	jq -e --arg o "$old" '.may_replace | map(.record.id) | index($o)' "$tmp/body"
get "/api/suggest?id=rnosuchrecord"
check "suggest: no such record is 404 ($st)" [ "$st" = 404 ]
get "/api/records?q=billing%20blue-green"
check "search: 200 with hits ($st)" bash -c "[ '$st' = 200 ] && jq -e '.hits | length > 0' '$tmp/body' > /dev/null"
get "/api/records?q=kamal%20deploy&status=all"
check "search: each hit's --explain figures" \
	jq -e '.floor != null and (.hits[0] | .bm25 and .lexical and .weight and .explain)' "$tmp/body"
get "/api/records?kind=decision"
check "list by kind: the accepted decision" \
	jq -e --arg o "$old" '.records | map(.id) == [$o]' "$tmp/body"
get "/api/records?limit=0"
check "a bad limit: 400 ($st)" [ "$st" = 400 ]
get "/api/records?kind=nonsense"
check "an unknown kind: 400 with the library's message ($st)" \
	bash -c "[ '$st' = 400 ] && [ \"\$(jq -r .error.code '$tmp/body')\" = invalid ]"
get "/api/record?id=$a"
check "record page: the record, its history and receipts" \
	jq -e --arg a "$a" '.record.id == $a and (.history | type == "array") and (.receipts | type == "array")' "$tmp/body"
get "/api/record?id=rnosuchrecord"
check "record page: no such record is 404 ($st)" [ "$st" = 404 ]
get "/api/record"
check "record page without id: 400 ($st)" [ "$st" = 400 ]

# ------------------------------------------------------------ the writes
post /api/approve '{"id":"'"$a"'"}'
check "approve: 200 ($st)" [ "$st" = 200 ]
check "approve: the store says accepted" [ "$(status_of "$a")" = accepted ]
post /api/approve '{"id":"'"$a"'"}'
check "approving it again: 400, not a candidate ($st)" [ "$st" = 400 ]
post /api/reject '{"id":"'"$b"'"}'
check "reject: 200 ($st)" [ "$st" = 200 ]
check "reject: the store says rejected" [ "$(status_of "$b")" = rejected ]
post /api/edit-approve '{"id":"'"$c"'","body":"deploy with token ghp_R7xK2mQ9vL4tN8wP1sZ6yB3cD5fG0hJ2kA4e"}'
check "edit-approve with a secret: 422 ($st)" [ "$st" = 422 ]
check "... code secret" [ "$(jbody .error.code)" = secret ]
check "... nothing changed" \
	bash -c "[ \"\$('$cairn' get --json '$c' | jq -r '.status + \" \" + .body')\" = 'candidate Draft text of a candidate.' ]"
post /api/edit-approve '{"id":"'"$c"'","title":"Edited","body":"Cleaned text of the candidate."}'
check "edit-approve: 200 ($st)" [ "$st" = 200 ]
check "edit-approve: accepted with the new text, revision 2" \
	bash -c "[ \"\$('$cairn' get --json '$c' | jq -r '[.status, .title, .body, .revision] | join(\"|\")')\" = 'accepted|Edited|Cleaned text of the candidate.|2' ]"
post /api/approve-supersede '{"id":"'"$new"'","old":"rnosuchrecord"}'
check "approve-supersede of a missing record: 404 ($st)" [ "$st" = 404 ]
check "... and the candidate was not approved (one transaction)" [ "$(status_of "$new")" = candidate ]
post /api/approve-supersede '{"id":"'"$new"'","old":"'"$old"'"}'
check "approve-supersede: 200 ($st)" [ "$st" = 200 ]
check "approve-supersede: new accepted, old superseded by it" \
	bash -c "[ \"\$('$cairn' get --json '$new' | jq -r .status)\" = accepted ] && [ \"\$('$cairn' get --json '$old' | jq -r '.status + \" \" + .superseded_by')\" = 'superseded $new' ]"
g1=$("$cairn" write --origin capture -k procedure -t "Group one" "Run make deploy-staging for the first service." | id_of)
g2=$("$cairn" write --origin capture -k procedure -t "Group two" "Run make deploy-staging for the second service." | id_of)
post /api/reject '{"ids":["'"$g1"'","'"$g2"'","rnosuchrecord"]}'
check "a group: 200 with one result per id ($st)" \
	bash -c "[ '$st' = 200 ] && [ \"\$(jq -r '.results | length' '$tmp/body')\" = 3 ] && [ \"\$(jq -r .failed '$tmp/body')\" = 1 ]"
check "a group: both rejected in the store" \
	[ "$(status_of "$g1") $(status_of "$g2")" = "rejected rejected" ]

# ---------------------------------------------------- pending forgets
# an agent's forget of a human's record waits for a human; the
# console lists it beside the candidates and retires or keeps it
h=$("$cairn" write -k rule -t "Review terraform" "Never run terraform apply against prod without review." | id_of)
forget_rpc() {
	printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
		'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
		'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_forget","arguments":{"id":"'"$1"'","reason":"the review board replaced it"}}}' |
		"$cairn" mcp 2> /dev/null | jq -r 'select(.id == 2) | .result.structuredContent.pending'
}
check "an agent's forget of a human rule is pending" [ "$(forget_rpc "$h")" = true ]
get /api/candidates
check "candidates: the pending forget is listed ($st)" \
	bash -c "[ '$st' = 200 ] && [ \"\$(jq -r '[.forgets[] | .record.id] | join(\",\")' '$tmp/body')\" = '$h' ]"
check "candidates: the agent's reason comes with it" \
	[ "$(jq -r '.forgets[0].reason' "$tmp/body")" = "the review board replaced it" ]
post /api/forget '{"id":"'"$h"'"}'
check "forget without apply: 400 ($st)" [ "$st" = 400 ]
post /api/forget '{"id":"'"$h"'","apply":false}'
check "forget kept: 200 ($st)" [ "$st" = 200 ]
check "... the rule stays accepted, nothing pending" \
	bash -c "[ \"\$('$cairn' get --json '$h' | jq -r .status)\" = accepted ] && [ \"\$('$cairn' candidates --json | jq '[.[] | select(.pending == \"forget\")] | length')\" = 0 ]"
post /api/forget '{"id":"'"$h"'","apply":false}'
check "no forget pending any more: 404 ($st)" [ "$st" = 404 ]
forget_rpc "$h" > /dev/null
post /api/forget '{"id":"'"$h"'","apply":true}'
check "forget applied: 200, the rule retired ($st)" \
	bash -c "[ '$st' = 200 ] && [ \"\$('$cairn' get --json '$h' | jq -r .status)\" = retired ]"

# --------------------------------------------------------- bad requests
post /api/approve '{"id":'
check "malformed JSON: 400 bad_json ($st)" \
	bash -c "[ '$st' = 400 ] && [ \"\$(jq -r .error.code '$tmp/body')\" = bad_json ]"
post /api/approve '["'"$x"'"]'
check "a JSON array, not an object: 400 ($st)" [ "$st" = 400 ]
post /api/approve '{}'
check "no id: 400 ($st)" [ "$st" = 400 ]
req -H "X-Cairn-Token: $tok" -H 'Content-Type: text/plain' \
	--data-binary '{"id":"'"$x"'"}' "$base/api/approve"
check "a text/plain body (a form's kind): 415 ($st)" [ "$st" = 415 ]
check "... the candidate untouched" [ "$(status_of "$x")" = candidate ]
head -c $((2 << 20)) /dev/zero | tr '\0' 'a' > "$tmp/huge"
req -H "X-Cairn-Token: $tok" -H 'Content-Type: application/json' \
	--data-binary @"$tmp/huge" "$base/api/approve"
check "a 2 MiB body: 413 ($st)" [ "$st" = 413 ]
req -H "X-Cairn-Token: $tok" -H 'Content-Type: application/json' \
	-H 'Transfer-Encoding: chunked' --data-binary @"$tmp/huge" "$base/api/approve"
check "a 2 MiB chunked body (no length): 413 ($st)" [ "$st" = 413 ]
req -H "X-Cairn-Token: $tok" -H "X-Big: $(head -c 100000 /dev/zero | tr '\0' b)" "$base/api/info"
check "a 100 kB header is refused ($st)" bash -c "[ '$st' -ge 400 ] && [ '$st' -lt 500 ]"
post /api/nothing '{}'
check "an unknown POST call: 404 ($st)" [ "$st" = 404 ]
get /api/approve
check "GET on a POST call: 404, nothing changed ($st)" [ "$st" = 404 ]
req -X DELETE -H "X-Cairn-Token: $tok" "$base/api/info"
check "DELETE: 405 ($st)" [ "$st" = 405 ]
get /api/info
check "the server still answers after all that ($st)" [ "$st" = 200 ]

# ---------------------------------------------- hook calls, eval runs
"$cairn" recall --json "kamal deploy" > "$tmp/recall.json"
rid=$(jq -r .receipt "$tmp/recall.json")
printf '2026-01-02T03:04:05Z\tUserPromptSubmit\tinjected\t12.5\tfound=1 injected=1 chars=80 receipt=%s\n' "$rid" >> .cairn/hook.log
printf '2026-01-02T03:05:05Z\tStop\ttimeout\t1500.0\t\n' >> .cairn/hook.log
get /api/hook
check "hook: the summary of stats --hook" \
	jq -e '.stats.calls == 2 and .stats.injected == 1 and .stats.timeout == 1' "$tmp/body"
check "hook: the newest call first, the injected one with its receipt ids" \
	jq -e --arg a "$a" '.calls[0].outcome == "timeout" and (.calls[1].receipt.data.ids | index($a))' "$tmp/body"
get "/api/record?id=$a"
check "record page: the receipt of the hook call that returned it" \
	jq -e --arg r "$rid" '.receipts | map(.id) | index($r)' "$tmp/body"
get /api/quality
check "quality: no runs yet" jq -e '.runs == []' "$tmp/body"
mkdir -p "$tmp/set"
printf '%s\n' '{"id":"d1","title":"Orders database","text":"The orders service stores its data in PostgreSQL."}' \
	'{"id":"d2","title":"Deploys","text":"Staging deploys run kamal deploy from the ops repository."}' > "$tmp/set/corpus.jsonl"
printf '%s\n' '{"id":"q1","text":"which database do orders use","answers":["d1"]}' \
	'{"id":"q2","text":"how do staging deploys run","answers":["d2"]}' > "$tmp/set/queries.jsonl"
"$cairn" eval --record --quiet "$tmp/set" > /dev/null 2> "$tmp/eval.err"
check "eval --record appends one line with the time" \
	jq -e -s 'length == 1 and (.[0].recorded | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T")) and .[0]["recall@1"] != null' .cairn/eval.jsonl
check "eval --record leaves eval.jsonl to the user (0600)" [ "$(stat -c %a .cairn/eval.jsonl)" = 600 ]
get /api/quality
check "quality: the recorded run" jq -e '.runs | length == 1 and .[0].recorded' "$tmp/body"
printf '%s\n' '{"dataset":"a","recall@1":0.5,"recall@5":0.8}' 'not json' \
	'{"dataset":"a","recall@1":0.6,"recall@5":0.9}' >> .cairn/eval.jsonl
get /api/quality
check "quality: the runs in order, the unreadable line counted" \
	jq -e '(.runs | map(.["recall@1"]) | .[1:]) == [0.5, 0.6] and (.runs | length) == 3 and .unreadable == 1' "$tmp/body"

# ------------------------------------------------ a slow-connection flood
# EVIDENCE-OF: issue 31 -- 40 connections trickling their headers (a byte a
# second, each under the idle timeout) do not lock the owner out: the page
# still loads within a few seconds. The flood is /usr/bin/python3 on
# 127.0.0.1, at most 12 s, and killed by its pid.
cat > "$tmp/flood.py" <<'PY'
import socket, sys, time
port, ready, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
socks = []
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port), timeout=2)
    s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Slow: " % port)
    socks.append(s)
open(ready, "w").close()
end = time.time() + 12
while time.time() < end:
    for s in socks:
        try:
            s.sendall(b"a")
        except OSError:
            pass
    time.sleep(1)
PY
/usr/bin/python3 "$tmp/flood.py" "$port" "$tmp/flood.ready" 40 2> "$tmp/flood.err" &
flood=$!
for _ in $(seq 1 100); do
	[ -e "$tmp/flood.ready" ] && break
	sleep 0.1
done
check "the flood of 40 trickling connections is up" [ -e "$tmp/flood.ready" ]
sleep 1
t0=$(date +%s%N)
st=$(curl -s -o "$tmp/body" -w '%{http_code}' --max-time 5 "$base/")
ms=$((($(date +%s%N) - t0) / 1000000))
check "under the flood the page still loads ($st in $ms ms)" [ "$st" = 200 ]
get /api/candidates
check "under the flood the API still answers ($st)" [ "$st" = 200 ]
kill "$flood" 2>/dev/null
wait "$flood" 2>/dev/null

# ------------------------------------------------------------------ stop
kill -TERM "$srv"
wait "$srv"
rc=$?
srv=""
check "SIGTERM: exit 0 ($rc)" [ "$rc" = 0 ]
check "serve.url is removed at exit" [ ! -e .cairn/serve.url ]
check "nothing on stderr but notes" bash -c "! grep -qiE 'sanitizer|runtime error' '$tmp/serve.err'"

echo "$passed passed, $failed failed, 0 skipped"

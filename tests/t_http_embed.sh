#!/bin/bash
# EVIDENCE-OF: the http embedding provider against a local
# OpenAI-compatible server: success, batching (64 per request), retry after
# 503 with backoff, bounded retries, timeout, malformed replies (not JSON,
# wrong count, wrong width), 4xx with the server's message, the API key from
# the named variable (sent, never stored), and `cairn reindex` over http.
#
# tests/t_http_embed.sh CAIRN_BINARY. The server is /usr/bin/python3 on
# 127.0.0.1, on a free port the OS picks; it exits by itself after 120 s
# and is killed (by its pid) when the test ends. Its behaviour is chosen
# by the first path segment of the URL: /ok/v1, /flaky/v1 (503 on every
# first request of a batch, then success), /down/v1 (always 503), /slow/v1
# (answers after 3 s), /garbage/v1, /short/v1 (one vector too few),
# /wide/v1 (width changes after the first request), /auth/v1 (401 unless
# "Bearer sesame"), /bad/v1 (400 with a message), /huge/v1 (a value past
# float's range: not finite).
set -u
bin=$(readlink -f "$1")
cd "$(dirname "$0")/.."
tmp=$(mktemp -d /tmp/cairn-http-XXXXXX)
srv_pid=""
cleanup() {
	[ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "t_http_embed: $*" >&2; failed=$((failed + 1)); }
check() { # check NAME COND...
	local name=$1
	shift
	if "$@"; then ok; else bad "$name"; fi
}

cat > "$tmp/server.py" <<'PY'
import json, os, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOG = sys.argv[1]
state = {"flaky": 0, "wide": 0}
lock = threading.Lock()

def vec(text, dim):
    # deterministic and meaningful: letter counts of a..h (+1 to avoid 0)
    t = text.lower()
    return [float(t.count(chr(97 + i)) + 1) for i in range(dim)]

class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def reply(self, code, body, ctype="application/json"):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(n)
        parts = self.path.strip("/").split("/")
        mode = parts[0] if parts else ""
        if parts[-1] != "embeddings":
            return self.reply(404, '{"error":"no such path"}')
        try:
            req = json.loads(raw)
            inputs = req["input"]
        except Exception:
            return self.reply(400, '{"error":"bad request body"}')
        auth = self.headers.get("Authorization", "")
        with lock:
            with open(LOG, "a") as f:
                f.write("%s %d %s %s\n" % (mode, len(inputs), req.get("model"),
                                           "auth" if auth else "-"))
        dim = 8
        if mode == "flaky":
            with lock:
                state["flaky"] += 1
                first = state["flaky"] % 2 == 1
            if first:
                return self.reply(503, '{"error":"warming up"}')
        elif mode == "down":
            return self.reply(503, '{"error":"down for maintenance"}')
        elif mode == "slow":
            time.sleep(3)
        elif mode == "garbage":
            return self.reply(200, "<html>not json</html>", "text/html")
        elif mode == "short":
            if len(inputs) > 1:
                inputs = inputs[:-1]
        elif mode == "wide":
            with lock:
                state["wide"] += 1
                if state["wide"] > 1:
                    dim = 9
        elif mode == "auth":
            if auth != "Bearer sesame":
                return self.reply(401, '{"error":"invalid api key"}')
        elif mode == "bad":
            return self.reply(400, '{"error":"input too long for model"}')
        data = [{"object": "embedding", "index": i,
                 "embedding": vec(t, dim)} for i, t in enumerate(inputs)]
        if mode == "huge":
            # a value past float's range: infinity once read as a float
            for d in data:
                d["embedding"][0] = 1e39
        # answer out of order: the client must place by index
        data.reverse()
        self.reply(200, json.dumps({"object": "list", "data": data,
                                    "model": req.get("model")}))

srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
srv.daemon_threads = True
with open(sys.argv[2], "w") as f:
    f.write(str(srv.server_address[1]))
threading.Timer(120, srv.shutdown).start()  # bounded lifetime
srv.serve_forever()
PY

/usr/bin/python3 "$tmp/server.py" "$tmp/log" "$tmp/port" 2> "$tmp/server.err" &
srv_pid=$!
for _ in $(seq 50); do
	[ -s "$tmp/port" ] && break
	sleep 0.1
done
if [ ! -s "$tmp/port" ]; then
	echo "skipped: t_http_embed: the test server did not start"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi
port=$(cat "$tmp/port")
url() { echo "http://127.0.0.1:$port/$1/v1"; }
emb() { # emb MODE [extra flags] -- TEXTS
	local mode=$1
	shift
	"$bin" model embed --provider http --url "$(url "$mode")" --model m "$@"
}
# a missing log is no count of 0: it fails every check that compares one
log_count() { if [ -f "$tmp/log" ]; then grep -c "^$1 " "$tmp/log"; else echo missing; fi; }

# success: vectors are letter counts, normalised; the order follows index
out=$(emb ok abc hhh 2> "$tmp/err")
check "ok: exit status" [ $? -eq 0 ]
check "ok: two vectors" [ "$(echo "$out" | wc -l)" -eq 2 ]
# "hhh": counts (1,1,1,1,1,1,1,4) -> the last value is the largest
last=$(echo "$out" | sed -n 2p | tr -d '[]' | awk -F, '{print ($8 > $1) ? "yes" : "no"}')
check "ok: vectors stay in input order (index honoured)" [ "$last" = yes ]
cos=$(emb ok --cosine "aaaa" "aaab")
check "ok: cosine of similar texts > 0.9 ($cos)" awk -v c="$cos" 'BEGIN{exit !(c > 0.9 && c <= 1.000001)}'
check "ok: --json has the identity" sh -c "'$bin' model embed --provider http --url '$(url ok)' --model m --json x | jq -e '.identity.provider == \"http\" and .identity.dim == 8 and .identity.revision == \"m\"' >/dev/null"

# batching: 130 texts -> requests of 64, 64, 2 (after the 1-text probe)
: > "$tmp/log"
texts=()
for i in $(seq 130); do texts+=("text $i"); done
emb ok "${texts[@]}" > "$tmp/out130" 2> "$tmp/err"
check "batch: 130 vectors" [ "$(wc -l < "$tmp/out130")" -eq 130 ]
check "batch: request sizes 1 64 64 2" [ "$(awk '{print $2}' "$tmp/log" | tr '\n' ' ')" = "1 64 64 2 " ]

# retry after 503: every batch's first try fails, the second succeeds
: > "$tmp/log"
emb flaky hello world > "$tmp/out" 2> "$tmp/err"
check "flaky: succeeds after retries" [ $? -eq 0 ] && check "flaky: 2 vectors" [ "$(wc -l < "$tmp/out")" -eq 2 ]
check "flaky: 4 requests (probe 503+ok, batch 503+ok)" [ "$(log_count flaky)" -eq 4 ]

# always 503: bounded retries (5 tries), then a clear error
: > "$tmp/log"
start=$(date +%s)
emb down x > /dev/null 2> "$tmp/err"
rc=$?
el=$(($(date +%s) - start))
check "down: fails" [ $rc -eq 1 ]
check "down: message names 503 and the tries" grep -q "HTTP 503.*after 5 tries" "$tmp/err"
check "down: exactly 5 requests" [ "$(log_count down)" -eq 5 ]
check "down: bounded time ($el s)" [ "$el" -lt 10 ]

# timeout: the server sleeps 3 s, the client waits 500 ms, no retry
start=$(date +%s)
emb slow --timeout-ms 500 x > /dev/null 2> "$tmp/err"
rc=$?
el=$(($(date +%s) - start))
check "slow: fails" [ $rc -eq 1 ]
check "slow: message says timeout" grep -q "did not answer within 500 ms" "$tmp/err"
check "slow: bounded time ($el s)" [ "$el" -lt 3 ]

# malformed replies
emb garbage x > /dev/null 2> "$tmp/err"
check "garbage: fails with 'not JSON'" grep -q "not JSON" "$tmp/err"
emb short a b c > /dev/null 2> "$tmp/err"
check "short: wrong count named" grep -q "sent 2 vectors for 3 texts" "$tmp/err"
emb wide a b > /dev/null 2> "$tmp/err"
check "wide: wrong width named" grep -q "9-wide vector; expected 8" "$tmp/err"

# 4xx: no retry, the server's message shown
: > "$tmp/log"
emb bad x > /dev/null 2> "$tmp/err"
check "bad: HTTP 400 and message" grep -q "HTTP 400.*input too long" "$tmp/err"
check "bad: not retried" [ "$(log_count bad)" -eq 1 ]
emb auth x > /dev/null 2> "$tmp/err"
check "auth: 401 without a key" grep -q "HTTP 401" "$tmp/err"
SESAME_KEY=sesame emb auth --api-key-env SESAME_KEY x > /dev/null 2> "$tmp/err"
check "auth: the key from the named variable works" [ $? -eq 0 ]
emb auth --api-key-env UNSET_KEY_VAR_H4 x > /dev/null 2> "$tmp/err"
check "auth: an unset key variable is named" grep -q "'UNSET_KEY_VAR_H4' (the API key) is not set" "$tmp/err"

# reindex over http: 70 records -> 64 + 6; key never stored
ws=$tmp/ws
mkdir -p "$ws"
(
	cd "$ws" || exit 1
	export HOME=$tmp CAIRN_GLOBAL=$tmp/global
	"$bin" init > /dev/null
	for i in $(seq 70); do
		printf '{"id":"rh%014d","kind":"fact","body":"fact number %d about apples","status":"accepted","origin":"human","created":"2026-01-01T00:00:00Z","updated":"2026-01-01T00:00:00Z"}\n' "$i" "$i"
	done | "$bin" import > /dev/null
	: > "$tmp/log"
	SESAME_KEY=sesame "$bin" reindex --provider http --url "$(url auth)" --model m \
		--api-key-env SESAME_KEY --json > "$tmp/ri.json" 2> "$tmp/ri.err"
	echo $? > "$tmp/ri.rc"
	"$bin" reindex --status --json > "$tmp/st.json"
	awk '{print $2}' "$tmp/log" | tr '\n' ' ' > "$tmp/ri.log"
	# a later process knows the width from the stored identity: one
	# request per recall, no dimension probe
	: > "$tmp/log"
	SESAME_KEY=sesame "$bin" recall --status all --json "apples" > "$tmp/rc.json" 2> "$tmp/rc.err"
	echo $? > "$tmp/rc.rc"
	awk '{print $2}' "$tmp/log" | tr '\n' ' ' > "$tmp/rc.log"
)
check "reindex: exit 0" [ "$(cat "$tmp/ri.rc")" = 0 ]
check "reindex: 70 embedded" sh -c "jq -e '.embedded == 70 and .with_vector == 70' '$tmp/ri.json' >/dev/null"
# after the dimension probe, the model is tried (issue 31) on 2 fixed texts
# and the first 16 records, as passages and as questions: 2 x 18
check "reindex: the model tried on 18 texts twice, then batches of 32 records, one request each" \
	[ "$(cat "$tmp/ri.log")" = "1 18 18 32 32 6 " ]
check "reindex: status counts" sh -c "jq -e '.records == 70 and .without_vector == 0 and .provider == \"http\"' '$tmp/st.json' >/dev/null"
check "recall: hybrid, exit 0" sh -c "[ \"\$(cat '$tmp/rc.rc')\" = 0 ] && jq -e '.hybrid == true' '$tmp/rc.json' >/dev/null"
check "recall: one request (the question), no dimension probe" [ "$(cat "$tmp/rc.log")" = "1 " ]
check "reindex: the key is not in the store" sh -c "! grep -aq sesame '$ws/.cairn/cairn.db' '$ws/.cairn/cairn.db-wal' 2>/dev/null"

# the provider down or slow at recall: lexical recall within the budget,
# with a notice (JSON, stderr) and a hook.log mark; never an error
ws2=$tmp/ws2
mkdir -p "$ws2"
(
	cd "$ws2" || exit 1
	export HOME=$tmp CAIRN_GLOBAL=$tmp/global
	"$bin" init > /dev/null
	"$bin" write --kind fact "the deploy pipeline runs on fridays" > /dev/null
	"$bin" write --kind fact "apples are stored in the cellar" > /dev/null
	"$bin" reindex --provider http --url "$(url ok)" --model m > /dev/null 2>&1
	for mode in down slow; do
		t0=$(date +%s%N)
		CAIRN_EMBED_URL=$(url $mode) "$bin" recall --json "where are the apples" \
			> "$tmp/dn-$mode.json" 2> "$tmp/dn-$mode.err"
		echo "$? $((($(date +%s%N) - t0) / 1000000))" > "$tmp/dn-$mode.rc"
	done
	CAIRN_EMBED_URL=$(url down) "$bin" recall "where are the apples" > "$tmp/dn-plain.out" 2> "$tmp/dn-plain.err"
	CAIRN_EMBED_URL=$(url huge) "$bin" recall --json "where are the apples" > "$tmp/dn-huge.json" 2> "$tmp/dn-huge.err"
	echo $? > "$tmp/dn-huge.rc"
	"$bin" reindex --provider http --url "$(url huge)" --model m2 --yes > /dev/null 2> "$tmp/ri-huge.err"
	echo $? > "$tmp/ri-huge.rc"
	"$bin" reindex --status --json > "$tmp/ri-huge.json"
	t0=$(date +%s%N)
	printf '{"hook_event_name":"UserPromptSubmit","prompt":"where are the apples","session_id":"s1"}' |
		CAIRN_EMBED_URL=$(url slow) "$bin" hook > "$tmp/dn-hook.out" 2>&1
	echo "$? $((($(date +%s%N) - t0) / 1000000))" > "$tmp/dn-hook.rc"
	tail -1 .cairn/hook.log > "$tmp/dn-hook.log"
)
for mode in down slow; do
	read -r rc ms < "$tmp/dn-$mode.rc"
	check "$mode at recall: exit 0, lexical hits, notice" sh -c "[ $rc = 0 ] && jq -e '.hybrid == false and (.hits | length) > 0 and (.notice | startswith(\"lexical recall only: \"))' '$tmp/dn-$mode.json' >/dev/null"
	check "$mode at recall: within the 2 s budget and a margin ($ms ms)" [ "$ms" -lt 2800 ]
done
check "down at recall: the notice on stderr, the hit on stdout" sh -c "grep -q '^cairn: note: lexical recall only: .*(after [0-9] tr' '$tmp/dn-plain.err' && grep -q cellar '$tmp/dn-plain.out'"
# EVIDENCE-OF: issue 31 -- a model answering a value that is not finite:
# recall falls back to lexical (exit 0, a notice), reindex refuses it and
# keeps the model that worked
check "not finite at recall: exit 0, lexical hits, notice" sh -c "[ \"\$(cat '$tmp/dn-huge.rc')\" = 0 ] && jq -e '.hybrid == false and (.hits | length) > 0 and (.notice | test(\"lexical recall only: .*non-finite\"))' '$tmp/dn-huge.json' >/dev/null"
check "not finite at reindex: refused, the settings kept" sh -c "[ \"\$(cat '$tmp/ri-huge.rc')\" = 1 ] && grep -q 'this model is refused' '$tmp/ri-huge.err' && jq -e '.model == \"m\" and .with_vector == 2' '$tmp/ri-huge.json' >/dev/null"
read -r rc ms < "$tmp/dn-hook.rc"
check "slow at the hook: injected lexically before its deadline ($ms ms)" sh -c "[ $rc = 0 ] && [ $ms -lt 1500 ] && grep -q 'cellar' '$tmp/dn-hook.out'"
check "slow at the hook: hook.log says so" grep -q "injected.*embed=down(lexical)" "$tmp/dn-hook.log"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

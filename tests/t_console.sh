#!/bin/bash
# EVIDENCE-OF: the review console in a real browser: headless
# Chromium (Debian chromium) driven through the DevTools protocol by
# tests/tools/cdp_console.py opens the URL `cairn serve` printed, finds the
# candidates, shows stored <script>/<img onerror> as text, approves one
# with a mouse click and rejects one with the keyboard (checked here with
# `cairn get`), approves one as the replacement of the record it may
# supersede (the old one is then superseded), retires a record an agent
# asked to forget (its card has Retire and Keep; no "[object ...]" on any
# view), charts each dataset's eval runs apart with every point a 0-1 rate,
# switches to Chinese, fits a 390 px window and searches.
# Screenshots go to $CONSOLE_SHOTS when set (docs/console.md shows them).
# Without chromium: one "skipped: ..." line.
#
#   tests/t_console.sh CAIRN
#
# Ends with "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/.."
root=$(pwd)
cairn=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
	echo "skipped: browser test (no chromium; Debian: apt-get install chromium)"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi
tmp=$(mktemp -d /tmp/cairn-console-XXXXXX)
srv=""
cleanup() {
	[ -n "$srv" ] && kill "$srv" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "t_console: $*" >&2; failed=$((failed + 1)); }

export CAIRN_GLOBAL=$tmp/global XDG_DATA_HOME=$tmp/xdg HOME=$tmp/home
export CAIRN_CACHE_DIR=${CAIRN_CACHE_DIR:-$tmp/cache}
unset CAIRN_DIR
mkdir -p "$HOME" "$tmp/ws" "$tmp/shots"
cd "$tmp/ws"
"$cairn" init > /dev/null
id_of() { sed -n 's/^\(r[0-9a-f]*\) .*/\1/p'; }
old=$("$cairn" write -k decision -t "Blue-green deploys" \
	"We deploy the billing service with blue-green switches on blyck." | id_of)
a=$("$cairn" write --origin agent -k decision -t "Blue-green deploys with kamal" \
	"We deploy the billing service with blue-green switches on blyck using kamal." | id_of)
b=$("$cairn" write --origin agent -k fact -t "Restart the cache nightly" \
	"Restart the cache nightly, maybe." | id_of)
x=$("$cairn" write --origin agent -k note -t "<img src=x onerror=alert(1)>" \
	"<script>alert(1)</script> stored markup must stay text" | id_of)
z=$("$cairn" write --origin capture -k procedure -t "部署到预发布环境" \
	"运行 make deploy-staging 部署订单服务到预发布环境。" | id_of)

# two candidates of one command shape (capture's key family)
"$cairn" write --origin capture -k capability --key capability:deploy:s3:assets \
	-t "Deploy to S3 bucket assets" "aws s3 sync dist s3://assets worked." > /dev/null
"$cairn" write --origin capture -k capability --key capability:deploy:s3:media \
	-t "Deploy to S3 bucket media" "aws s3 sync dist s3://media worked." > /dev/null

# what the hook and cairn eval leave behind, for the other two views
rid=$("$cairn" recall --json "blue-green billing" | jq -r .receipt)
for i in 1 2 3; do
	printf '2026-01-02T03:0%s:05Z\tUserPromptSubmit\tinjected\t1%s.5\tfound=1 injected=1 chars=80 receipt=%s\n' "$i" "$i" "$rid"
done > .cairn/hook.log
printf '2026-01-02T03:09:05Z\tUserPromptSubmit\tempty\t9.1\tfound=0 injected=0 chars=0\n' >> .cairn/hook.log
# lines as `cairn eval --record` writes them: no_answer_empty is a count
# (of no_answer), and two datasets' runs interleave
printf '%s\n' '{"dataset":"adr-workspace","recall@1":0.61,"recall@3":0.8,"recall@5":0.86,"recall@10":0.9,"injection_hit_rate":0.7,"no_answer":5,"no_answer_empty":4,"mrr":0.7,"recorded":"2026-11-03T09:12:40Z"}' \
	'{"dataset":"clapnq","recall@1":0.81,"recall@3":0.95,"recall@5":0.96,"recall@10":0.97,"no_answer":123,"no_answer_empty":5,"mrr":0.88,"recorded":"2026-11-04T09:12:40Z"}' \
	'{"dataset":"adr-workspace","recall@1":0.66,"recall@3":0.83,"recall@5":0.88,"recall@10":0.93,"injection_hit_rate":0.76,"no_answer":5,"no_answer_empty":4,"mrr":0.74,"recorded":"2026-11-17T10:02:11Z"}' \
	'{"dataset":"clapnq","recall@1":0.82,"recall@3":0.95,"recall@5":0.96,"recall@10":0.97,"no_answer":123,"no_answer_empty":6,"mrr":0.88,"recorded":"2026-11-20T09:12:40Z"}' \
	'{"dataset":"adr-workspace","recall@1":0.7,"recall@3":0.86,"recall@5":0.9,"recall@10":0.95,"injection_hit_rate":0.8,"no_answer":5,"no_answer_empty":5,"mrr":0.78,"recorded":"2026-12-01T08:45:03Z"}' > .cairn/eval.jsonl

# an agent's forget of a human's record: a pending forget the console lists
h=$("$cairn" write -k rule -t "Review terraform" "Never run terraform apply against prod without review." | id_of)
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_forget","arguments":{"id":"'"$h"'"}}}' |
	"$cairn" mcp > "$tmp/forget.out" 2> /dev/null
if [ "$(jq -r 'select(.id == 2) | .result.structuredContent.pending' "$tmp/forget.out")" = true ]; then ok; else
	bad "the agent's forget is not pending: $(tail -1 "$tmp/forget.out")"; fi

"$cairn" serve > "$tmp/out" 2> "$tmp/serve.err" &
srv=$!
for _ in $(seq 1 100); do
	[ -s "$tmp/out" ] && break
	sleep 0.1
done
url=$(head -1 "$tmp/out")
if [ -z "$url" ]; then
	bad "cairn serve printed no URL: $(head -3 "$tmp/serve.err")"
	echo "$passed passed, $failed failed, 0 skipped"
	exit 1
fi

timeout 240 /usr/bin/python3 "$root/tests/tools/cdp_console.py" "$chromium" \
	"$url" "$tmp/shots" "$z" "$b" "$x" "$a" "$old" "$h" > "$tmp/driver.out" 2> "$tmp/driver.err"
while IFS= read -r line; do
	case "$line" in
	'ok '*) ok ;;
	'FAIL '*) bad "${line#FAIL }" ;;
	esac
done < "$tmp/driver.out"
if ! grep -q '^ok ' "$tmp/driver.out"; then
	bad "the browser driver checked nothing: $(tail -3 "$tmp/driver.err")"
fi
st() { "$cairn" get --json "$1" | jq -r .status; }
if [ "$(st "$z")" = accepted ]; then ok; else bad "the clicked candidate is not accepted in the store"; fi
if [ "$(st "$a")" = accepted ] && [ "$(st "$old")" = superseded ]; then ok; else
	bad "approve-and-supersede: $a is $(st "$a"), $old is $(st "$old")"; fi
if [ "$(st "$b")" = rejected ]; then ok; else bad "the keyed candidate is not rejected in the store"; fi
if [ "$(st "$x")" = candidate ]; then ok; else bad "the markup candidate changed"; fi
if [ "$(st "$h")" = retired ]; then ok; else bad "Retire did not retire $h: it is $(st "$h")"; fi
for f in console-candidates.png console-narrow-zh.png console-search.png console-hook.png console-quality.png; do
	if [ -s "$tmp/shots/$f" ]; then ok; else bad "no screenshot $f"; fi
done
if [ -n "${CONSOLE_SHOTS:-}" ]; then
	mkdir -p "$CONSOLE_SHOTS" && cp "$tmp/shots"/*.png "$CONSOLE_SHOTS"/
fi
echo "$passed passed, $failed failed, 0 skipped"

#!/bin/bash
# EVIDENCE-OF: Claude Code itself as the test client of cairn's
# hooks, MCP server and Skill (`make check-clients`).
#
#   tests/clients/claude-code.sh CAIRN
#
# Installs the pinned Claude Code (tests/tools/claude-code-setup, npm, into
# build/tools/claude-code; never committed), starts the fake Anthropic API
# (tests/tools/fake-anthropic.mjs, 127.0.0.1 only, every request body
# logged), and runs the real `claude` against it in projects set up with
# `cairn setup claude-code`, CAIRN as the `cairn` on its PATH:
#   - the MCP server connects and Claude Code lists every tool `cairn mcp`
#     lists; the Skill is loaded and its description reaches the model;
#   - each hook event fires and its output is accepted; the SessionStart
#     and UserPromptSubmit context reach the request the API receives;
#   - the Stop and SessionEnd capture read the transcript Claude Code wrote
#     for a session whose Bash tool call (`make test`, which succeeds) the
#     fake API scripted, and propose it as a candidate; a scripted deploy
#     that fails proposes nothing;
#   - a hook error (a store that is not a database, a bad option) never
#     blocks the prompt, judged by the check that a blocking hook (exit 2,
#     a control) fails;
#   - setup's note on approval holds: `claude mcp list` shows the server
#     "Pending approval", and after the user's answers in the interactive
#     client (tests/tools/claude-approve.py on a pseudo-terminal) "Connected".
# It also notes (not a check) whether a one-record store injects anything
# (the small-store case).
#
# Everything runs under a HOME, CAIRN_GLOBAL and projects of its own, with
# a clean environment (env -i): the user's Claude Code settings, keys and
# proxies are never read. Every wait is bounded (each client run 120 s).
# CLIENTS_KEEP=1 keeps the folder of the run (logs, projects, transcripts);
# CAIRN_CLIENTS_DIR is where Claude Code is installed (default
# build/tools/claude-code).
# Ends with "N passed, N failed, N skipped"; without npm or a registry it
# prints "skipped: ..." and counts 1 skipped, which fails under
# CAIRN_FAIL_ON_SKIP=1 (as in .ci/run).
set -u
cd "$(dirname "$0")/../.."
root=$(pwd)
cairn=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tmp=$(mktemp -d /tmp/cairn-clients-XXXXXX)
server_pid=
cleanup() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null
		wait "$server_pid" 2>/dev/null
	fi
	if [ -n "${CLIENTS_KEEP:-}" ]; then
		echo "claude-code: kept $tmp" >&2
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
passed=0
failed=0
skipped=0
T=$'\t' # hook.log's field separator
ok() { passed=$((passed + 1)); }
bad() { echo "claude-code: $*" >&2; failed=$((failed + 1)); }
check() { # NAME COMMAND...: passes when COMMAND succeeds
	local name=$1
	shift
	if "$@"; then ok; else bad "$name"; fi
}
finish() {
	echo "claude-code: $passed passed, $failed failed, $skipped skipped"
	if [ "$skipped" -gt 0 ] && [ "${CAIRN_FAIL_ON_SKIP:-0}" = 1 ]; then
		echo "CAIRN_FAIL_ON_SKIP=1: a skipped test fails this run" >&2
		exit 1
	fi
	[ "$failed" -eq 0 ]
	exit
}
skip_all() {
	echo "skipped: $*"
	skipped=$((skipped + 1))
	finish
}

command -v jq > /dev/null || skip_all "jq is not installed (scripts/packages-test)"
command -v node > /dev/null || skip_all "node is not installed (the fake API runs on it)"
claude=$(timeout 600 tests/tools/claude-code-setup "${CAIRN_CLIENTS_DIR:-$root/build/tools/claude-code}" \
	2> "$tmp/install.err")
[ -n "$claude" ] || skip_all "Claude Code could not be installed from npm: $(tail -1 "$tmp/install.err")"
want=$(sed -n 's/^VER=//p' tests/tools/claude-code-setup)
# from here on nothing reads or writes the user's files (npm above used
# the user's npm configuration and cache)
export HOME=$tmp/home CAIRN_GLOBAL=$tmp/global XDG_DATA_HOME=$tmp/xdg CAIRN_CACHE_DIR=$tmp/cache

# ------------------------------------------------------ the fake API, the env
mkdir -p "$tmp/bin" "$tmp/home" "$tmp/san" "$tmp/cache"
ln -s "$cairn" "$tmp/bin/cairn"
log=$tmp/api.jsonl
: > "$log"
cat > "$tmp/script.json" <<'JSON'
{"rules": [{"contains": "deploy the orders service to staging", "tool": "Bash",
            "input": {"command": "make test", "description": "Run the tests"}},
           {"contains": "Ship the billing service to staging", "tool": "Bash",
            "input": {"command": "make deploy-staging", "description": "Deploy"}}]}
JSON
node tests/tools/fake-anthropic.mjs "$tmp/port" "$log" "$tmp/script.json" 2> "$tmp/api.err" &
server_pid=$!
for _ in $(seq 100); do
	[ -s "$tmp/port" ] && break
	sleep 0.1
done
port=$(cat "$tmp/port" 2> /dev/null)
if [ -z "$port" ]; then
	bad "the fake API did not start: $(tail -1 "$tmp/api.err")"
	finish
fi

# in DIR, with the test's own environment only: client ARGS...
client_env() {
	local dir=$1
	shift
	(cd "$dir" && env -i PATH="$tmp/bin:/usr/local/bin:/usr/bin:/bin" \
		HOME="$HOME" SHELL=/bin/bash TERM="${TERM_FOR_CLIENT:-dumb}" LANG=C.UTF-8 \
		CAIRN_GLOBAL="$CAIRN_GLOBAL" XDG_DATA_HOME="$XDG_DATA_HOME" CAIRN_CACHE_DIR="$CAIRN_CACHE_DIR" \
		ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:log_path=$tmp/san/asan" \
		UBSAN_OPTIONS="print_stacktrace=1:log_path=$tmp/san/ubsan" \
		ANTHROPIC_BASE_URL="http://127.0.0.1:$port" ANTHROPIC_API_KEY=sk-ant-fake-cairn-test \
		NO_PROXY=127.0.0.1,localhost CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
		DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 \
		"$@")
}
# claude -p PROMPT in DIR, stream-json with hook events to OUT; the API
# requests it made go to OUT.api
session() { # DIR OUT PROMPT [ARGS...]
	local dir=$1 out=$2 prompt=$3 before
	shift 3
	before=$(wc -l < "$log")
	client_env "$dir" timeout 120 "$claude" -p "$prompt" --output-format stream-json \
		--verbose --include-hook-events "$@" < /dev/null > "$out" 2> "$out.err"
	echo $? > "$out.rc"
	tail -n +"$((before + 1))" "$log" > "$out.api"
}
# a project folder: git, a cairn store, `cairn setup claude-code`
project() { # DIR
	mkdir -p "$1" && (cd "$1" && git init -q . && "$cairn" init > /dev/null &&
		PATH="$tmp/bin:$PATH" "$cairn" setup claude-code > "$1.setup.out" 2> "$1.setup.err")
}

# the version under test is the pinned one
v=$(client_env "$tmp" timeout 60 "$claude" --version 2> /dev/null)
check "claude --version is '$v', not the pinned $want" test "${v%% *}" = "$want"

# ------------------------------------------------------ a working session
p1=$tmp/orders
project "$p1" || bad "project set-up failed: $(cat "$p1.setup.err")"
(
	cd "$p1" &&
	printf 'test:\n\t@echo "12 tests passed"\n' > Makefile &&
	"$cairn" write -k rule --key rule:prod -t "Never touch PROD" \
		"Never run database migrations against PROD by hand." &&
	"$cairn" write -k fact --key deploy:staging -t "Deploy to staging" \
		"Deploy the orders service with make deploy-staging after the migrations." &&
	"$cairn" write -k decision --key db:engine -t "PostgreSQL for orders" \
		"We chose PostgreSQL for the orders database because we need transactions." &&
	"$cairn" write -k fact --key queue -t "Message queue" \
		"The order services talk to each other over NATS." &&
	"$cairn" write -k fact --key ci -t "CI runner" \
		"CI runs on the self-hosted runner ci-02; a red build blocks the merge." &&
	"$cairn" write -k procedure --key release -t "Cutting a release" \
		"Tag the release with git tag vX.Y.Z and push the tag; the pipeline publishes the image." &&
	"$cairn" write -k fact --key logs -t "Where the logs are" \
		"Service logs go to Loki; query them in Grafana under the orders folder." &&
	"$cairn" write -k decision --key api:style -t "REST, not gRPC, at the edge" \
		"Public endpoints are REST with JSON; gRPC stays inside the cluster."
) > /dev/null 2> "$tmp/seed.err" || bad "records: $(cat "$tmp/seed.err")"
# a prompt the staging record answers plainly (a store of 8 records: the
# injection must not hang on how a tiny store ranks); the fake
# agent answers it by running the tests first
prompt="How do we deploy the orders service to staging?"
s1=$tmp/s1.jsonl
session "$p1" "$s1" "$prompt" --allowedTools Bash
check "claude -p exited $(cat "$s1.rc"): $(tail -3 "$s1.err")" test "$(cat "$s1.rc")" = 0
init=$(jq -c 'select(.type == "system" and .subtype == "init")' "$s1" | head -1)
[ -n "$init" ] || init='{}'

# MCP: connected, and every tool `cairn mcp` lists is one of Claude Code's
check "MCP server not connected: $(jq -c '.mcp_servers' <<< "$init")" \
	jq -e '.mcp_servers | any(.name == "cairn" and .status == "connected")' <<< "$init" > /dev/null
tools=$(cd "$p1" && printf '%s\n' \
	'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"check-clients","version":"1"}}}' \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/list"}' |
	"$cairn" mcp --no-hook-server 2> /dev/null | jq -r 'select(.id == 2) | .result.tools[].name')
check "cairn mcp lists no tools" test -n "$tools"
for t in $tools; do
	check "Claude Code does not list the MCP tool $t" \
		jq -e --arg t "mcp__cairn__$t" '.tools | index($t) != null' <<< "$init" > /dev/null
done

# the Skill: loaded, and its description is what the model is shown
check "Skill not loaded: $(jq -c '.skills' <<< "$init")" \
	jq -e '.skills | index("cairn-memory") != null' <<< "$init" > /dev/null
desc=$(sed -n 's/^description: //p' "$p1/.claude/skills/cairn-memory/SKILL.md" | head -1)
first=$(head -1 "$s1.api")
check "the Skill's description is not in the request" \
	jq -e --arg d "- cairn-memory: ${desc:0:120}" '.body | tostring | contains($d)' <<< "$first" > /dev/null

# each hook event: Claude Code ran it and took its output (exit 0, success)
for ev in SessionStart UserPromptSubmit Stop; do
	r=$(jq -c --arg e "$ev" 'select(.subtype == "hook_response" and .hook_event == $e)
		| {outcome, exit_code, stderr}' "$s1")
	check "$ev hook: ${r:-not run}" \
		jq -e -s 'length == 1 and .[0].outcome == "success" and .[0].exit_code == 0' <<< "$r" > /dev/null
done
# SessionEnd comes after the stream's result: cairn's own log shows it;
# every event answered (injected / empty / captured), none failed
for ev in SessionStart UserPromptSubmit Stop SessionEnd; do
	l=$(awk -F'\t' -v e="$ev" '$2 == e' "$p1/.cairn/hook.log" 2> /dev/null)
	check "hook.log for $ev: '${l:-nothing}'" \
		grep -qE "^[^$T]+$T$ev$T(injected|empty|captured)$T" <<< "$l"
done

# SessionStart's and UserPromptSubmit's context reach the model request
check "the prompt is not in the first request" \
	jq -e --arg p "$prompt" '.body | tostring | contains($p)' <<< "$first" > /dev/null
check "SessionStart context (the rule) is not in the request" \
	jq -e '.body | tostring | contains("Standing rules and capabilities of this project from cairn") and
		contains("Never run database migrations against PROD by hand.")' <<< "$first" > /dev/null
check "UserPromptSubmit context (the staging record) is not in the request" \
	jq -e '.body | tostring | contains("Past project records from cairn") and
		contains("make deploy-staging")' <<< "$first" > /dev/null

# the scripted Bash call ran, and its result went back to the model
check "the Bash tool's result is not in a later request" \
	jq -e -s 'map(.body.messages // [] | .[] | select(.role == "user") | .content
		| arrays | .[] | select(.type == "tool_result") | tostring)
		| any(contains("12 tests passed"))' "$s1.api" > /dev/null
check "the session did not end with the fake API's closing text" \
	jq -e -s 'map(select(.type == "result")) | .[0].result == "Done."' "$s1" > /dev/null

# the transcript Claude Code wrote holds the call; capture read it
sid=$(jq -r '.session_id // empty' <<< "$init")
tr=$(find "$tmp/home/.claude/projects" -name "$sid.jsonl" 2> /dev/null | head -1)
check "no transcript $sid.jsonl under \$HOME/.claude/projects" test -n "$sid" -a -n "$tr"
check "the transcript has no Bash tool_use of make test" \
	jq -e -s 'map(select(.type == "assistant") | .message.content[]? | select(.type == "tool_use"))
		| any(.name == "Bash" and .input.command == "make test")' "$tr" > /dev/null
for ev in Stop SessionEnd; do
	l=$(awk -F'\t' -v e="$ev" '$2 == e' "$p1/.cairn/hook.log" 2> /dev/null)
	check "$ev capture saw no command: '$l'" grep -qE 'commands=[1-9]' <<< "$l"
done
cand=$(cd "$p1" && "$cairn" candidates 2> /dev/null)
check "no candidate from the session's make test: '$cand'" grep -qE 'procedure +candidate +.*make test' <<< "$cand"

# a deploy that fails (as Claude Code reports it: is_error, "Exit code 2")
# proposes nothing
p6=$tmp/billing
project "$p6" || bad "project set-up failed: $(cat "$p6.setup.err")"
printf 'deploy-staging:\n\t@echo "deploy failed: no credentials for staging" >&2; exit 1\n' > "$p6/Makefile"
s6=$tmp/s6.jsonl
session "$p6" "$s6" "Ship the billing service to staging" --allowedTools Bash
check "the failing deploy's result is not an error in a later request" \
	jq -e -s 'map(.body.messages // [] | .[] | select(.role == "user") | .content
		| arrays | .[] | select(.type == "tool_result"))
		| any(.is_error == true and (tostring | contains("no credentials")))' "$s6.api" > /dev/null
l=$(awk -F'\t' '$2 == "Stop" || $2 == "SessionEnd"' "$p6/.cairn/hook.log" 2> /dev/null)
check "failing deploy: capture did not see the command, or proposed it: '$l'" \
	test "$(grep -c 'commands=1 proposed=0 ' <<< "$l")" -eq 2
cand=$(cd "$p6" && "$cairn" candidates 2> /dev/null; echo "exit $?")
check "failing deploy: a candidate was proposed: '$cand'" test "$cand" = "exit 0"

# ------------------------------------------------------ hook errors never block
# a store that is not a database: every event's hook fails inside cairn
p2=$tmp/broken
project "$p2" || bad "project set-up failed: $(cat "$p2.setup.err")"
head -c 8192 /dev/urandom > "$p2/.cairn/cairn.db"
s2=$tmp/s2.jsonl
session "$p2" "$s2" "Summarise the broken store case"
check "broken store: claude -p exited $(cat "$s2.rc")" test "$(cat "$s2.rc")" = 0
check "broken store: the prompt did not reach the API" \
	jq -e -s 'any(.body | tostring | contains("Summarise the broken store case"))' "$s2.api" > /dev/null
n=$(grep -c "${T}error$T" "$p2/.cairn/hook.log" 2> /dev/null)
check "broken store: the hooks did not fail inside cairn: $(cut -f2,3 "$p2/.cairn/hook.log" 2> /dev/null | tr '\n' ' ')" \
	test "${n:-0}" -ge 3
check "broken store: a hook exited non-zero to Claude Code" \
	jq -e -s 'map(select(.subtype == "hook_response")) | length >= 3 and all(.exit_code == 0)' "$s2" > /dev/null
# the hook's own arguments wrong (a settings file edited by hand)
p3=$tmp/badopt
project "$p3" || bad "project set-up failed: $(cat "$p3.setup.err")"
set_prompt_hook() { # DIR COMMAND
	jq --arg c "$2" '.hooks.UserPromptSubmit[0].hooks[0].command = $c' \
		"$1/.claude/settings.json" > "$1/.claude/settings.json.new" &&
		mv "$1/.claude/settings.json.new" "$1/.claude/settings.json"
}
set_prompt_hook "$p3" "cairn hook --no-such-option"
s3=$tmp/s3.jsonl
session "$p3" "$s3" "Summarise the bad option case"
check "bad option: the prompt did not reach the API" \
	jq -e -s 'any(.body | tostring | contains("Summarise the bad option case"))' "$s3.api" > /dev/null
l=$(grep "^[^$T]*${T}UserPromptSubmit$T" "$p3/.cairn/hook.log" 2> /dev/null)
check "bad option: hook.log says '$l', not a 'bad options' error" grep -q "${T}error$T.*bad options" <<< "$l"
# the control: a hook that exits 2 blocks the prompt, and the check above
# sees it (so "reached the API" means something)
set_prompt_hook "$p3" "echo blocked >&2; exit 2"
s4=$tmp/s4.jsonl
session "$p3" "$s4" "Summarise the blocking control"
check "control: a hook exiting 2 did not block the prompt (the check above proves nothing)" \
	jq -e -s 'any(.body | tostring | contains("Summarise the blocking control")) | not' "$s4.api" > /dev/null

# ------------------------------------------------------ approval of the server
p4=$tmp/approve
project "$p4" || bad "project set-up failed: $(cat "$p4.setup.err")"
check "setup does not say the server needs approval: $(cat "$p4.setup.out")" \
	grep -q 'Pending approval.*claude mcp list\|claude mcp list.*Pending approval' <<< "$(tr '\n' ' ' < "$p4.setup.out")"
l=$(client_env "$p4" timeout 60 "$claude" mcp list 2>&1 | grep '^cairn:')
check "before approval, claude mcp list says '$l'" grep -q 'Pending approval' <<< "$l"
# a user who has used Claude Code before: past its first-start screens
# (which would try to reach api.anthropic.com)
c=$HOME/.claude.json
{ [ -s "$c" ] && cat "$c" || echo '{}'; } | jq '.hasCompletedOnboarding = true' > "$c.new" && mv "$c.new" "$c"
a=$(TERM_FOR_CLIENT=xterm-256color client_env "$p4" timeout 60 /usr/bin/python3 -I \
	"$root/tests/tools/claude-approve.py" "$claude" "$p4" 2> "$tmp/approve.err")
rc=$?
check "the approval dialogs were not answered (exit $rc): $a $(tail -c 300 "$tmp/approve.err")" test "$rc" -eq 0
l=$(client_env "$p4" timeout 60 "$claude" mcp list 2>&1 | grep '^cairn:')
check "after approval, claude mcp list says '$l'" grep -q 'Connected' <<< "$l"

# ------------------------------------------------------ noted, not checked
# the small-store case: one record, a question it answers
p5=$tmp/small
project "$p5" || bad "project set-up failed: $(cat "$p5.setup.err")"
(cd "$p5" && "$cairn" write -k fact -t "Platform records" \
	"Durable platform records live in SQLite." > /dev/null)
s5=$tmp/s5.jsonl
session "$p5" "$s5" "Which database should hold the durable platform records?"
l=$(awk -F'\t' '$2 == "UserPromptSubmit" {print $3, $5}' "$p5/.cairn/hook.log" 2> /dev/null)
echo "note: one-record store, prompt on its fact: UserPromptSubmit ${l:-not logged}"

# no sanitizer report from any cairn process Claude Code started
reports=$(ls "$tmp/san" 2> /dev/null)
check "sanitizer reports: $reports $(cat "$tmp"/san/* 2> /dev/null | head -20)" test -z "$reports"
finish

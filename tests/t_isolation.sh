#!/bin/bash
# EVIDENCE-OF: SPEC 9 -- two workspaces on one machine
# (one HOME, one global store) never see each other's records, through the
# CLI (recall, list, get, read), the MCP server (memory_recall,
# memory_read, memory_candidates) and the Claude Code hook; a record
# written with scope=global is seen from both; and the global store holds
# only scope=global records.
#
#   tests/t_isolation.sh CAIRN        ends with "N passed, N failed"
set -u
cairn=$(readlink -f "$1")
tmp=$(mktemp -d /tmp/cairn-iso-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
unset CAIRN_DIR
export CAIRN_GLOBAL="$tmp/global" HOME="$tmp/home" XDG_DATA_HOME="$tmp/xdg"
export CAIRN_CACHE_DIR="$tmp/cache"
mkdir -p "$HOME" "$tmp/a/src" "$tmp/b/src"
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "t_isolation: $*" >&2; failed=$((failed + 1)); }
check() { if eval "$2"; then ok; else bad "$1"; fi; }

# workspace X writes facts with words only X uses: alphaword / bravoword
mk() { # mk DIR WORD
	(cd "$1" && "$cairn" init >/dev/null &&
	 "$cairn" write -k fact --key "$2:deploy" -t "$2 deploy" \
		"Deploy the $2 service with make deploy-$2 on the staging cluster." >/dev/null &&
	 "$cairn" write -k rule --key "$2:rule" -t "$2 rule" \
		"Never restart the $2 database by hand." >/dev/null &&
	 "$cairn" write -k fact --json --key "$2:id" "The $2 record read by id." |
		jq -r .id > "$1/.id")
}
mk "$tmp/a" alphaword || bad "set-up of workspace a failed"
mk "$tmp/b" bravoword || bad "set-up of workspace b failed"
ida=$(cat "$tmp/a/.id")
idb=$(cat "$tmp/b/.id")
(cd "$tmp/a" && "$cairn" write -k fact --scope global --key "shared:editor" \
	"Everyone uses the sharedword editor settings." >/dev/null) || bad "global write failed"

# ------------------------------------------------------------------ CLI
for pair in "a alphaword bravoword $idb" "b bravoword alphaword $ida"; do
	read -r ws own other oid <<< "$pair"
	cd "$tmp/$ws/src" || exit 1  # a subdirectory: the store is found upward
	# the hits' records only (the reply also echoes the query's terms)
	out=$("$cairn" recall --json "$other deploy staging" 2>&1 | jq -c '[.hits[].record]')
	check "$ws: recall sees the other workspace: $out" \
		'! grep -q "$other" <<< "$out"'
	out=$("$cairn" recall --json "$own deploy staging" 2>&1 | jq -c '[.hits[].record]')
	check "$ws: recall misses its own record (negative control): $out" \
		'grep -q "$own" <<< "$out"'
	out=$("$cairn" list --status all --json 2>&1)
	check "$ws: list shows the other workspace" '! grep -q "$other" <<< "$out"'
	check "$ws: list lacks its own records" \
		'[ "$(jq "[.[] | select(.scope == \"workspace\")] | length" <<< "$out")" = 3 ]'
	check "$ws: get of the other workspace's id succeeded" \
		'! "$cairn" get "$oid" >/dev/null 2>&1'
	check "$ws: read of the other workspace's key succeeded" \
		'! "$cairn" read "$other:deploy" >/dev/null 2>&1'
	check "$ws: the global record is not visible" \
		'"$cairn" recall --json "sharedword editor" | grep -q sharedword'
done

# ------------------------------------------------------------------ MCP
mcp() { # mcp DIR LINES...: the replies, one per line
	local d=$1
	shift
	(cd "$d" && printf '%s\n' \
		'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t_isolation","version":"1"}}}' \
		'{"jsonrpc":"2.0","method":"notifications/initialized"}' "$@" |
		timeout 30 "$cairn" mcp 2>/dev/null)
}
call() { # call ID TOOL ARGS-JSON
	printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s","arguments":%s}}' "$1" "$2" "$3"
}
out=$(mcp "$tmp/b" "$(call 1 memory_recall '{"query":"alphaword deploy staging"}')" \
	"$(call 2 memory_read "{\"id\":\"$ida\"}")" \
	"$(call 3 memory_read '{"key":"alphaword:deploy"}')" \
	"$(call 4 memory_recall '{"query":"bravoword deploy staging"}')" \
	"$(call 5 memory_write '{"kind":"fact","key":"bravoword:agent","body":"An agent note on the bravoword cache."}')" \
	"$(call 6 memory_candidates '{}')")
check "mcp b: no reply to 6 calls: $out" '[ "$(grep -c "\"id\":[1-6]" <<< "$out")" = 6 ]'
hits() { # hits ID: the records of a recall reply, as one JSON array
	grep "\"id\":$1," <<< "$out" | jq -r ".result.content[0].text" | jq -c "[.results[]]"
}
r=$(hits 1)
check "mcp b: recall returned a record of a: $r" '[ -n "$r" ] && ! grep -q alphaword <<< "$r"'
check "mcp b: memory_read by id found a's record" \
	'grep "\"id\":2," <<< "$out" | jq -e ".result.isError == true or .error != null" >/dev/null'
check "mcp b: memory_read by key found a's record" \
	'grep "\"id\":3," <<< "$out" | jq -e ".result.isError == true or .error != null" >/dev/null'
r=$(hits 4)
check "mcp b: recall of its own record found nothing (negative control): $r" 'grep -q "bravoword" <<< "$r"'
out=$(mcp "$tmp/a" "$(call 1 memory_candidates '{}')" "$(call 2 memory_recall '{"query":"bravoword cache agent note","statuses":["candidate"]}')")
r=$(hits 2)
check "mcp a: b's agent candidate is visible in a: $out" \
	'[ -n "$r" ] && ! grep -q "bravoword" <<< "$r" && ! grep "\"id\":1," <<< "$out" | grep -q bravoword'
(cd "$tmp/b" && "$cairn" list --status candidate --json | grep -q "bravoword cache") ||
	bad "mcp b: the agent's candidate did not land in b"

# ----------------------------------------------------------------- hook
hook() { # hook CWD PROMPT
	printf '{"hook_event_name":"UserPromptSubmit","cwd":"%s","session_id":"s","prompt":"%s"}' "$1" "$2" |
		(cd / && "$cairn" hook)
}
out=$(hook "$tmp/b/src" "how do I deploy alphaword on staging")
check "hook b: injected a's record: $out" '! grep -q "alphaword" <<< "$out"'
out=$(hook "$tmp/b/src" "how do I deploy bravoword on staging")
check "hook b: did not inject its own record (negative control): $out" 'grep -q "bravoword" <<< "$out"'
out=$(hook "$tmp/a" "how do I deploy bravoword on staging")
check "hook a: injected b's record: $out" '! grep -q "bravoword" <<< "$out"'
out=$(printf '{"hook_event_name":"SessionStart","cwd":"%s","session_id":"s"}' "$tmp/a" | (cd / && "$cairn" hook))
check "hook a session start: shows b's rule: $out" '! grep -q "bravoword" <<< "$out"'

# ---------------------------------------------------------- global store
gdb=$(ls "$CAIRN_GLOBAL"/*.db 2>/dev/null | head -1)
if [ -n "$gdb" ]; then
	scopes=$(/usr/bin/python3 -c "
import sqlite3, sys
c = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)
print(' '.join(sorted(set(r[0] for r in c.execute('SELECT scope FROM records')))) or 'none')
print(c.execute('SELECT count(*) FROM records').fetchone()[0])
print(c.execute(\"SELECT count(*) FROM records WHERE body LIKE '%alphaword%' OR body LIKE '%bravoword%'\").fetchone()[0])
" "$gdb" 2>&1)
	read -r -d '' s1 n1 leak <<< "$scopes"
	check "global store scopes: $scopes" '[ "$s1" = global ] && [ "$n1" = 1 ] && [ "$leak" = 0 ]'
else
	bad "no global store file under $CAIRN_GLOBAL"
fi
out=$(cd "$tmp/b" && "$cairn" list --scope global --status all --json 2>&1)
check "list --scope global in b: $out" \
	'[ "$(jq "length" <<< "$out")" = 1 ] && [ "$(jq -r ".[0].scope" <<< "$out")" = global ]'

# ------------------------------------------- a .cairn link to another user
# EVIDENCE-OF: issue 31 -- a .cairn that is a symbolic link owned by
# another user, or leading to another user's directory, is refused: the
# hook writes no log line through it (and answers nothing), the CLI says
# why. Needs root (chown) and the nobody user; said skipped otherwise.
other=$(id -u nobody 2>/dev/null)
if [ "$(id -u)" = 0 ] && [ -n "$other" ]; then
	mkdir -p "$tmp/theirs" "$tmp/c" "$tmp/d" "$tmp/mine"
	(cd "$tmp/theirs" && "$cairn" init >/dev/null &&
	 "$cairn" write -k fact "The charlieword service deploys on Mondays." >/dev/null)
	(cd "$tmp/mine" && "$cairn" init >/dev/null &&
	 "$cairn" write -k fact "The deltaword service deploys on Tuesdays." >/dev/null)
	chown -R "$other" "$tmp/theirs/.cairn"
	# a link of mine into their directory
	ln -s "$tmp/theirs/.cairn" "$tmp/c/.cairn"
	before=$(stat -c %s "$tmp/theirs/.cairn/hook.log" 2>/dev/null || echo none)
	out=$(printf '{"hook_event_name":"UserPromptSubmit","cwd":"%s","session_id":"s","prompt":"when does charlieword deploy"}' "$tmp/c" |
		(cd / && "$cairn" hook 2> "$tmp/hook.err"))
	rc=$?
	after=$(stat -c %s "$tmp/theirs/.cairn/hook.log" 2>/dev/null || echo none)
	check "hook through a link into another user's directory: no log line there ($before -> $after)" \
		'[ "$before" = "$after" ]'
	check "... and nothing injected, exit 0 ($rc): $out" '[ $rc = 0 ] && ! grep -q charlieword <<< "$out"'
	check "... said on stderr" 'grep -q "not logging: .*owned by another user" "$tmp/hook.err"'
	out=$(cd "$tmp/c" && "$cairn" list 2>&1)
	check "list through it is refused: $out" \
		'! grep -q charlieword <<< "$out" && grep -q "symbolic link to a directory owned by another user" <<< "$out"'
	# a link another user owns, into my own directory
	ln -s "$tmp/mine/.cairn" "$tmp/d/.cairn"
	chown -h "$other" "$tmp/d/.cairn"
	out=$(cd "$tmp/d" && "$cairn" list 2>&1)
	check "a link owned by another user is refused: $out" \
		'! grep -q deltaword <<< "$out" && grep -q "symbolic link owned by another user" <<< "$out"'
	# negative control: my own link to my own directory is not refused
	# for its owner (the hook logs through it; SQLite's NOFOLLOW still
	# keeps the store itself from opening through any link)
	chown -h root "$tmp/d/.cairn"
	printf '{"hook_event_name":"UserPromptSubmit","cwd":"%s","session_id":"s","prompt":"when does deltaword deploy"}' "$tmp/d" |
		(cd / && "$cairn" hook > /dev/null 2> "$tmp/hook.err")
	check "my own link to my own directory: the hook logs there" \
		'[ -s "$tmp/mine/.cairn/hook.log" ] && ! grep -q "owned by another user" "$tmp/hook.err"'
else
	echo "t_isolation: skipped the .cairn link checks (need root and the nobody user)" >&2
fi

echo "isolation: $passed passed, $failed failed"
[ $failed -eq 0 ]

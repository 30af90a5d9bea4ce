# EVIDENCE-OF: SPEC 4.5 -- forgets have an approval gate as writes do: an
# agent's memory_forget of a record it did not write is a pending forget a
# human confirms; a destructive tool takes full ids only
$ cairn init >/dev/null && printf '%s\n' '{"id":"r7f8a1b2c3d4e5f6","kind":"rule","title":"Never run terraform apply against prod without review","body":"Never run terraform apply against prod without review."}' '{"id":"n1","kind":"note","title":"Orders dashboard","body":"The orders dashboard reads PostgreSQL replicas."}' | cairn import >/dev/null
# ../call SESSION TOOL ARGS...: one MCP process (one session), one call per
# (TOOL, ARGS) pair, their results one per line
$ printf '#!/bin/bash\ns=$1; shift; i=1; { printf "%%s\\n" %s %s; while [ $# -ge 2 ]; do i=$((i+1)); printf "{\\"jsonrpc\\":\\"2.0\\",\\"id\\":%%d,\\"method\\":\\"tools/call\\",\\"params\\":{\\"name\\":\\"%%s\\",\\"arguments\\":%%s}}\\n" $i "$1" "$2"; shift 2; done; } | cairn mcp --no-hook-server --session "$s" | jq -c "select(.id > 1) | .result"\n' "'{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}'" "'{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}'" > ../call && chmod +x ../call && ../call s1 memory_read '{"id":"n1"}' | jq -r .structuredContent.record.status
> accepted
# CLAIM: forget-full-id
# a prefix is refused by the destructive tool, and nothing changes
$ ../call s1 memory_forget '{"id":"r7f8"}' | jq -r '.isError, .content[0].text'
~ ^true$
~ full id
$ cairn get r7f8a1b2c3d4e5f6 --json | jq -r .status
> accepted
# CLAIM: forget-asks
# the full id of a human's rule: a pending forget, the rule unchanged
$ ../call s1 memory_forget '{"id":"r7f8a1b2c3d4e5f6"}' | jq -c '.structuredContent | {status, pending, confirm_with}'
> {"status":"accepted","pending":true,"confirm_with":"cairn approve r7f8a1b2c3d4e5f6"}
$ cairn get r7f8a1b2c3d4e5f6 --json | jq -r .status
> accepted
# ... the next session start still shows it, and says a forget waits
$ printf '{"hook_event_name":"SessionStart","cwd":"%s","source":"startup"}' "$PWD" | cairn hook | jq -r .hookSpecificOutput.additionalContext
~ id r7f8a1b2c3d4e5f6$
~ ^1 pending forget \(an agent asked to retire a record\) waits for a human \(`cairn candidates`\)\.$
# ... cairn candidates lists it as a pending forget, text and JSON
$ cairn candidates
~ ^pending forgets
~ ^r7f8a1b2c3d4e5f6 +rule +accepted +Never run terraform apply
~ proposed .* by session s1$
$ cairn candidates --json | jq -c '.[] | {id, pending, session: .proposed.session}'
> {"id":"r7f8a1b2c3d4e5f6","pending":"forget","session":"s1"}
# CLAIM: forget-human-confirms
# ... reject drops the request and keeps the rule
$ cairn reject r7f8a1b2c3d4e5f6 && cairn get r7f8a1b2c3d4e5f6 --json | jq -r .status && cairn candidates --json
> r7f8a1b2c3d4e5f6 -> kept (pending forget dropped)
> accepted
> []
# ... asked again, approve applies it: the rule is retired
$ ../call s2 memory_forget '{"key":"nope"}' memory_forget '{"id":"r7f8a1b2c3d4e5f6"}' | tail -1 | jq -r .structuredContent.pending
> true
$ cairn approve r7f8a1b2c3d4e5f6 && cairn get r7f8a1b2c3d4e5f6 --json | jq -r .status
> r7f8a1b2c3d4e5f6 -> retired (pending forget applied)
> retired
# an agent withdraws its own candidate of this session at once ...
$ ../call s3 memory_write '{"kind":"fact","key":"fact:mine","body":"The cache is warm at 9am."}' memory_forget '{"key":"fact:mine"}' | tail -1 | jq -c '.structuredContent | {previous_status, status, pending}'
> {"previous_status":"candidate","status":"retired","pending":false}
# ... but not another session's candidate: that one awaits the human
$ ../call s3 memory_write '{"kind":"fact","key":"fact:other","body":"The cache is cold at 9pm."}' >/dev/null && ../call s4 memory_forget '{"key":"fact:other"}' | jq -c '.structuredContent | {status, pending, confirm_with}' && cairn read fact:other --json | jq -r .status
~ "status":"candidate","pending":true,"confirm_with":"cairn reject r
~ ^candidate$
# ... nor its own candidate once a human approved it
$ ../call s5 memory_write '{"kind":"fact","key":"fact:approved","body":"The cache is flushed at noon."}' >/dev/null && cairn approve "$(cairn read fact:approved --json | jq -r .id)" >/dev/null && ../call s5 memory_forget '{"key":"fact:approved"}' | jq -r .structuredContent.pending && cairn read fact:approved --json | jq -r .status
> true
> accepted
# a human's own forget clears a pending request: revived later, the
# record is not listed as asked for again
$ ../call s6 memory_forget '{"id":"n1"}' | jq -r .structuredContent.pending && cairn forget n1 >/dev/null && cairn revise n1 --status accepted >/dev/null && cairn candidates --json | jq -c '[.[] | select(.pending == "forget" and .id == "n1") | .id]'
> true
> []

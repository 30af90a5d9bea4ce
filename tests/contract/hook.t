# EVIDENCE-OF: SPEC 5.4 -- the hook injects past records for a prompt, stays
# within its budget, never blocks the prompt (always exit 0, nothing printed
# on error or past the deadline) and logs each call without the prompt
# outside a workspace: nothing, exit 0
$ printf '%s' '{"hook_event_name":"UserPromptSubmit","cwd":"/","prompt":"deploy"}' | cairn hook
> 
$ cairn init >/dev/null && printf '%s\n' '{"id":"pg","kind":"adr","title":"Use PostgreSQL for orders","body":"Orders are stored in PostgreSQL 15 on RDS.\nDynamoDB was rejected: reporting needs joins."}' '{"id":"r1","kind":"rule","title":"Never touch PROD","body":"Never run scripts against the production database by hand."}' '{"id":"c1","kind":"capability","title":"Deploying to staging works","body":"make deploy ENV=staging works from this machine.","proof":"aws sts ok"}' | cairn import >/dev/null && cairn write --origin agent "maybe use Redis" >/dev/null
# the block: header, date · kind · source · relevance · id, the real body,
# and the footer naming both ways to read a record in full
$ printf '{"hook_event_name":"UserPromptSubmit","cwd":"%s","session_id":"s1","prompt":"are the orders stored in PostgreSQL?"}' "$PWD" | cairn hook | jq -r '.hookSpecificOutput.hookEventName, .hookSpecificOutput.additionalContext'
~ ^UserPromptSubmit$
~ not part of the current conversation
~ ^\[1\] [0-9-]{10} · adr · written by human · relevance [0-9.]+ · id pg$
~ ^    Orders are stored in PostgreSQL 15 on RDS\.$
~ ^Full text of a record: the MCP tool memory_read with its id, or `cairn get ID` in a shell\.$
# CLAIM: hook-read-hint
# ... and both ways exist: `cairn get ID` gives the full body of the id shown
$ cairn get pg
~ DynamoDB was rejected: reporting needs joins\.
# ... and the MCP tool memory_read with that id gives it too
$ printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' '{"jsonrpc":"2.0","method":"notifications/initialized"}' '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_read","arguments":{"id":"pg"}}}' | cairn mcp | jq -r 'select(.id == 2) | .result.content[0].text'
~ DynamoDB was rejected: reporting needs joins\.
# the hook writes nothing to the database for a prompt: its receipt is
# spooled (receipt.h), found by `cairn receipt`, counted by stats, and moved
# into the table by the next recall that writes
$ cairn receipt "$(grep -o 'receipt=q[0-9a-f]*' .cairn/hook.log | tail -1 | cut -d= -f2)" --json | jq -c "{pending, first: .ids[0]}"
> {"pending":true,"first":"pg"}
$ cairn stats --json | jq -c '{receipts, receipts_spooled}'
> {"receipts":0,"receipts_spooled":1}
$ cairn recall "orders database" >/dev/null && cairn stats --json | jq -c '{receipts, receipts_spooled}'
> {"receipts":2,"receipts_spooled":0}
$ cairn receipt "$(grep -o 'receipt=q[0-9a-f]*' .cairn/hook.log | tail -1 | cut -d= -f2)" --json | jq -c "{pending, first: .ids[0]}"
> {"pending":null,"first":"pg"}
# off-topic: nothing at all
$ printf '{"hook_event_name":"UserPromptSubmit","cwd":"%s","prompt":"how do I bake sourdough bread?"}' "$PWD" | cairn hook | wc -c
> 0
# session start: the drawer of rules and capabilities, and pending candidates
$ printf '{"hook_event_name":"SessionStart","cwd":"%s","source":"startup"}' "$PWD" | cairn hook | jq -r .hookSpecificOutput.additionalContext
~ Standing rules and capabilities
~ id r1$
~ id c1$
~ ^1 candidate record waits for a human
# the budget: the whole text stays within it, entries are left out whole
$ printf '{"hook_event_name":"SessionStart","cwd":"%s"}' "$PWD" | cairn hook --budget 400 | jq -r '.hookSpecificOutput.additionalContext | length <= 400'
> true
$ printf '{"hook_event_name":"UserPromptSubmit","cwd":"%s","prompt":"are the orders stored in PostgreSQL?"}' "$PWD" | cairn hook --budget 50 | wc -c
> 0
# never blocks: bad input, bad options, unknown events, the deadline -> exit 0,
# nothing printed (30 ms without the tokenizer cache: after the log is
# open, long before the ~100 ms dictionary load)
$ echo 'not json' | cairn hook | wc -c
> 0
$ echo '{}' | cairn hook --frobnicate | wc -c
> 0
$ printf '{"hook_event_name":"PreToolUse","cwd":"%s"}' "$PWD" | cairn hook | wc -c
> 0
$ printf '{"hook_event_name":"UserPromptSubmit","cwd":"%s","prompt":"are the orders stored in PostgreSQL?"}' "$PWD" | CAIRN_CACHE_DIR= cairn hook --deadline-ms 30 | wc -c
> 0
# every call is logged (without the prompt), errors with what went wrong;
# stats --hook summarises
$ cut -f2,3 .cairn/hook.log | sort | uniq -c | awk '{print $2, $3, $1}'
> PreToolUse ignored 1
> SessionStart injected 2
> UserPromptSubmit empty 2
> UserPromptSubmit injected 1
> UserPromptSubmit timeout 1
> unknown error 2
$ grep -c "sourdough" .cairn/hook.log
> 0
? 1
$ grep -c "not a JSON object" .cairn/hook.log
> 1
$ cairn stats --hook --json | jq -c '{calls, injected, empty, timeout, error, ignored}'
> {"calls":9,"injected":3,"empty":2,"timeout":1,"error":2,"ignored":1}
$ stat -c %a .cairn/hook.log
> 600
# one entry per source: a seeded file's chunks collapse into its best one
$ mkdir -p docs/adr && { echo '# ADR 2: Invoices in the ledger service'; for s in Context Decision Consequences; do printf '\n## %s\n\n' "$s"; for i in 1 2 3 4 5 6 7 8; do printf 'The invoice ledger keeps every invoice line with its tax code and currency (%s %s). ' "$s" "$i"; done; echo; done; } > docs/adr/0002-ledger.md && cairn seed >/dev/null && cairn recall --json -k 10 "invoice ledger tax code" | jq '[.hits[] | select(.record.source.path == "docs/adr/0002-ledger.md")] | length >= 2'
> true
$ printf '{"hook_event_name":"UserPromptSubmit","cwd":"%s","prompt":"invoice ledger tax code"}' "$PWD" | cairn hook | jq -r .hookSpecificOutput.additionalContext | grep -c 'docs/adr/0002-ledger.md'
> 1
# the body lines are text, not the Markdown headings
$ printf '{"hook_event_name":"UserPromptSubmit","cwd":"%s","prompt":"invoice ledger tax code"}' "$PWD" | cairn hook | jq -r .hookSpecificOutput.additionalContext
~ ^    The invoice ledger keeps every invoice line
!~ ^    #
# CLAIM: hook-capture
# Stop and SessionEnd: capture and reflection on the transcript -> candidates;
# nothing printed, exit 0, the counts in the log
$ printf '%s\n' '{"type":"user","sessionId":"s9","timestamp":"2026-11-30T05:00:00.000Z","message":{"role":"user","content":"Never run migrations against PROD by hand."}}' '{"type":"assistant","sessionId":"s9","timestamp":"2026-11-30T05:00:05.000Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"gh auth status"}}]}}' '{"type":"user","sessionId":"s9","timestamp":"2026-11-30T05:00:06.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"github.com\n  Logged in to github.com account alice (keyring)","is_error":false}]}}' > t.jsonl && cairn candidates --json | jq length
> 1
$ printf '{"hook_event_name":"Stop","cwd":"%s","session_id":"s9","transcript_path":"%s/t.jsonl","stop_hook_active":false}' "$PWD" "$PWD" | cairn hook | wc -c
> 0
$ cairn candidates --json | jq -r '.[] | select(.origin != "agent") | .kind' | sort
> capability
> rule
$ tail -1 .cairn/hook.log | cut -f2,3
> Stop	captured
$ tail -1 .cairn/hook.log | cut -f5
~ added=2
# again at the next Stop, and at SessionEnd: found again, not written twice
$ for e in Stop SessionEnd; do printf '{"hook_event_name":"%s","cwd":"%s","session_id":"s9","transcript_path":"%s/t.jsonl"}' "$e" "$PWD" "$PWD" | cairn hook; done | wc -c
> 0
$ cairn candidates --json | jq length
> 3
$ tail -1 .cairn/hook.log | cut -f2,3
> SessionEnd	captured
$ tail -1 .cairn/hook.log | cut -f5
~ added=0
# a missing transcript is an error in the log, still nothing printed, exit 0
$ printf '{"hook_event_name":"SessionEnd","cwd":"%s","transcript_path":"%s/none.jsonl"}' "$PWD" "$PWD" | cairn hook | wc -c
> 0
$ tail -1 .cairn/hook.log | cut -f2,3
> SessionEnd	error
# cairn eval --hook scores the block the hook renders: an answer the block
# holds counts; a budget too small for any entry injects nothing
$ mkdir ds && printf '%s\n' '{"id":"a","title":"Postgres backups","text":"Nightly postgres backups go to the glacier bucket with pgbackrest."}' '{"id":"b","title":"Frontend bundler","text":"The frontend bundler is esbuild; webpack was dropped."}' > ds/corpus.jsonl && printf '%s\n' '{"id":"q1","text":"pgbackrest glacier","answers":["a"]}' '{"id":"q2","text":"esbuild webpack","answers":["b"]}' '{"id":"q3","text":"sourdough starter","answers":[]}' > ds/queries.jsonl && cairn eval ds --hook --json --quiet | jq -c '{injection_hit_rate, no_answer_nothing_injected, hook, block: (.hook_block | {prompts_injected, entries, relevant_entries, chars_positive: (.chars > 0)})}'
> {"injection_hit_rate":1,"no_answer_nothing_injected":1,"hook":{"budget":4000,"k":3},"block":{"prompts_injected":2,"entries":2,"relevant_entries":2,"chars_positive":true}}
$ cairn eval ds --hook --budget 60 --json --quiet | jq -c '{"recall@1", injection_hit_rate}'
> {"recall@1":1,"injection_hit_rate":0}
$ cairn eval ds --json --quiet | jq -c '{injection_hit_rate, no_answer_nothing_injected}'
> {"injection_hit_rate":null,"no_answer_nothing_injected":null}
$ cairn eval ds --hook --quiet | grep -E '^all '
~ ^all +2 +1\.000 .* 1\.000 +1/1 +1/1$
$ cairn eval ds --hook --no-floor
? 2
# --sweep --hook: the hook's figures at each of its answerability floors;
# at the floor in force they are the block's (above); at 1.00 only a hit
# that matches all of its question is injected (both answers do here)
$ cairn eval ds --hook --sweep --json --quiet | jq -c '[.hook_floor, (.hook_sweep[33] | [.floor, .inject, .quiet]), (.hook_sweep[100] | [.inject, .quiet, .entries])]'
> [0.33,[0.33,1,1],[1,1,1]]

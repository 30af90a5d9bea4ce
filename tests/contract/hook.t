# EVIDENCE-OF: SPEC 5.4 -- the hook injects past records for a prompt, stays
# within its budget, never blocks the prompt (always exit 0, nothing printed
# on error or past the deadline) and logs each call without the prompt
# outside a workspace: nothing, exit 0
$ printf '%s' '{"hook_event_name":"UserPromptSubmit","cwd":"/","prompt":"deploy"}' | cairn hook
> 
$ cairn init >/dev/null && printf '%s\n' '{"id":"pg","kind":"adr","title":"Use PostgreSQL for orders","body":"Orders are stored in PostgreSQL 15 on RDS.\nDynamoDB was rejected: reporting needs joins."}' '{"id":"r1","kind":"rule","title":"Never touch PROD","body":"Never run scripts against the production database by hand."}' '{"id":"c1","kind":"capability","title":"Deploying to staging works","body":"make deploy ENV=staging works from this machine.","proof":"aws sts ok"}' | cairn import >/dev/null && cairn write --origin agent "maybe use Redis" >/dev/null
$ printf '{"hook_event_name":"UserPromptSubmit","cwd":"%s","session_id":"s1","prompt":"which database stores the orders?"}' "$PWD" | cairn hook | jq -r '.hookSpecificOutput.hookEventName, .hookSpecificOutput.additionalContext'
~ ^UserPromptSubmit$
~ not part of the current conversation
~ ^\[1\] [0-9-]{10} · adr · written by human · relevance [0-9.]+ · id pg$
~ ^    Orders are stored in PostgreSQL 15 on RDS\.$
~ cairn get ID
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
$ printf '{"hook_event_name":"UserPromptSubmit","cwd":"%s","prompt":"which database stores the orders?"}' "$PWD" | cairn hook --budget 50 | wc -c
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
$ printf '{"hook_event_name":"UserPromptSubmit","cwd":"%s","prompt":"which database stores the orders?"}' "$PWD" | CAIRN_CACHE_DIR= cairn hook --deadline-ms 30 | wc -c
> 0
# every call is logged (without the prompt); stats --hook summarises
$ cut -f2,3 .cairn/hook.log | sort | uniq -c | awk '{print $2, $3, $1}'
> PreToolUse ignored 1
> SessionStart injected 2
> UserPromptSubmit empty 2
> UserPromptSubmit injected 1
> UserPromptSubmit timeout 1
$ grep -c "sourdough" .cairn/hook.log
> 0
? 1
$ cairn stats --hook --json | jq -c '{calls, injected, empty, timeout, ignored}'
> {"calls":7,"injected":3,"empty":2,"timeout":1,"ignored":1}
$ stat -c %a .cairn/hook.log
> 600

# EVIDENCE-OF: transcripts become events that recall finds and
# that 'cairn session' gives back in their original order
$ cairn init >/dev/null
# a Claude Code transcript (lines 5 and 4 out of time order on purpose), a
# bad line, a line with a secret, and a generic line
$ printf '%s\n' '{"type":"summary","summary":"Deploying billing","leafUuid":"x"}' '{"type":"user","sessionId":"s-42","uuid":"u1","timestamp":"2025-05-26T07:00:00.000Z","message":{"role":"user","content":"How do we deploy the billing service to staging?"}}' '{"type":"assistant","sessionId":"s-42","uuid":"a1","timestamp":"2025-05-26T07:00:05.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"Let me look at the Makefile."},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"make deploy-staging"}}]}}' '{"type":"assistant","sessionId":"s-42","uuid":"a2","timestamp":"2025-05-26T07:00:30.000Z","message":{"role":"assistant","content":"Billing deploys to staging with make deploy-staging."}}' '{"type":"user","sessionId":"s-42","uuid":"u2","timestamp":"2025-05-26T07:00:20.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"deployed"}]}}' '{"type":"system","sessionId":"s-42","content":"hook ran"}' '{oops' '{"type":"user","sessionId":"s-42","uuid":"u3","timestamp":"2025-05-26T07:00:40.000Z","message":{"role":"user","content":"it works with token ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"}}' '{"time":"2025-05-26T09:01:00+02:00","speaker":"alice","text":"Thanks, staging is green.","session":"s-42"}' > t.jsonl
$ cairn ingest t.jsonl
? 1
> t.jsonl: 6 events (5 new, 0 unchanged) from 9 lines, 3 skipped, 1 refused, 1 invalid
e~ t\.jsonl:7: invalid JSON
e~ t\.jsonl:8: refusing to store a secret: github-token
# the refused secret is nowhere in the store
$ grep -rl "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5" .cairn; echo done
> done
# recall finds events with --kind event, and by default
$ cairn recall --kind event --json "how do we deploy the billing service?" | jq -r '.hits[0].record | .kind, .status, .origin, .source.session, .source.tool, .source.path, .source.line, .time'
> event
> unverified
> human
> s-42
> user
> t.jsonl
> 2
> 2025-05-26T07:00:00.000Z
$ cairn recall --json "deploy billing staging" | jq -r '[.hits[].record.kind] | unique | join(",")'
> event
# the session in time order; a tool call is one line
$ cairn session s-42
> 2025-05-26 07:00:00 · user: How do we deploy the billing service to staging?
> 2025-05-26 07:00:05 · assistant: Let me look at the Makefile.
> 2025-05-26 07:00:05 · tool: Bash: make deploy-staging
> 2025-05-26 07:00:30 · assistant: Billing deploys to staging with make deploy-staging.
> 2025-05-26 07:01:00 · alice: Thanks, staging is green.
# --around: the N events before and after, the session from the record
$ id=$(cairn session s-42 --json | jq -r '.[2].id'); cairn session --around "$id" -n 1
>   2025-05-26 07:00:05 · assistant: Let me look at the Makefile.
> > 2025-05-26 07:00:05 · tool: Bash: make deploy-staging
>   2025-05-26 07:00:30 · assistant: Billing deploys to staging with make deploy-staging.
$ id=$(cairn recall --kind event --json "how do we deploy the billing service?" | jq -r '.hits[0].record.id'); cairn session s-42 --around "$id" --json | jq -r '.[].source.line' | tr '\n' ' '
> 2 3 3 4 9 
$ cairn session s-42 -n 2 --json | jq -r '.[].source.tool'
> assistant
> alice
# re-ingesting the same file adds nothing
$ cairn ingest --json t.jsonl | jq -c '[.added, .unchanged, .refused]'
> [0,5,1]
$ cairn ingest t.jsonl
? 1
$ cairn list --kind event --json | jq length
> 5
# --redact stores the refused line masked; exit 0 once nothing is refused
$ grep -v oops t.jsonl > clean.jsonl; cairn ingest --redact clean.jsonl
> clean.jsonl: 6 events (1 new, 5 unchanged) from 8 lines, 3 skipped
$ cairn session s-42 --full | grep 07:00:40
> 2025-05-26 07:00:40 · user: it works with token [REDACTED:github-token]
# generic lines without a session belong to --session (default: the file name)
$ printf '%s\n' '{"speaker":"bob","text":"standup moved to ten"}' > standup.jsonl; cairn ingest standup.jsonl >/dev/null; cairn session standup --json | jq -r '.[0].body'
> standup moved to ten
$ cairn ingest --session daily standup.jsonl >/dev/null; cairn session daily --json | jq -r '.[0].source.tool'
> bob
# a line over 1 MiB is reported and skipped; the rest is kept
$ { head -c 1100000 /dev/zero | tr '\0' a; echo; echo '{"speaker":"c","text":"after the long line","session":"big"}'; } > big.jsonl; cairn ingest big.jsonl
? 1
e~ big\.jsonl:1: line is longer than
$ cairn session big --json | jq length
> 1
# errors and usage
$ cairn ingest missing.jsonl
? 1
e~ cannot read 'missing.jsonl'
$ cairn session nope
? 1
e~ no events of session 'nope'
$ cairn session --around nope
? 1
$ cairn ingest
? 2
$ cairn session
? 2
$ cairn session s-42 -n x
? 2
$ cairn ingest --help | head -1
~ ^usage: cairn ingest
$ cairn session --help | head -1
~ ^usage: cairn session

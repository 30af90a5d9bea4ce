# EVIDENCE-OF: `cairn capture` turns success events in transcripts
# into candidates with proof (one per key, secrets masked, failures and
# trivial commands never), `cairn reflect` proposes rules, decisions and facts
# outside a workspace a dry run works and writes nothing
$ printf '%s\n' '{"time":"2025-06-03T10:00:00Z","cmd":"aws sts get-caller-identity --profile prod","exit":0,"output":"{\"Account\": \"381492000117\"}"}' '{"time":"2025-06-03T10:01:00Z","cmd":"ls -la","exit":0,"output":"total 0"}' '{"time":"2025-06-03T10:02:00Z","cmd":"fly deploy -a web","exit":1,"output":"Error: no access token"}' '{"time":"2025-06-03T10:03:00Z","cmd":"git status","exit":0,"output":"clean"}' > ops.jsonl; cairn capture --dry-run ops.jsonl
> new       capability capability:aws:auth:prod  AWS credentials work on this machine (profile prod)
> ops.jsonl: 1 proposed (1 new, 0 updated, 0 duplicate, 0 known), 4 commands (1 failed) [dry run]
$ ls -A
> ops.jsonl
# --json: the candidate with its proof
$ cairn capture --dry-run --json ops.jsonl | jq -r '.candidates[0] | .kind, .key, .origin, .session, .time, .line, .action'
> capability
> capability:aws:auth:prod
> capture
> ops
> 2025-06-03T10:00:00.000Z
> 1
> new
$ cairn capture --dry-run --json ops.jsonl | jq -r '.candidates[0].proof'
> $ aws sts get-caller-identity --profile prod
> exit 0 · 2025-06-03 10:00:00Z · session ops · line 1 of ops.jsonl
> > {"Account": "381492000117"}
# a Claude Code transcript: Bash tool_use + tool_result, a user rule in English
# and Chinese, a failed then successful deploy, a secret in the command and output
$ cairn init >/dev/null
$ printf '%s\n' '{"type":"user","sessionId":"s-7","uuid":"u1","timestamp":"2025-06-01T10:00:00Z","message":{"role":"user","content":"Ship it to staging. Never touch PROD. 不要動 PROD 資料庫。"}}' '{"type":"assistant","sessionId":"s-7","uuid":"a1","timestamp":"2025-06-01T10:00:05Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"make deploy-staging"}}]}}' '{"type":"user","sessionId":"s-7","uuid":"r1","timestamp":"2025-06-01T10:00:09Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"Exit code 2\nmake: *** [deploy-staging] Error 1","is_error":true}]}}' '{"type":"assistant","sessionId":"s-7","uuid":"a2","timestamp":"2025-06-01T10:01:00Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"AWS_ACCESS_KEY_ID=AKIAQ3EXAMPLE7KZT2WX make deploy-staging"}}]}}' '{"type":"user","sessionId":"s-7","uuid":"r2","timestamp":"2025-06-01T10:01:40Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"deployed with token ghp_R7xK2mQ9vL4tN8wP1sZ6yB3cD5fG0hJ2kA4e","is_error":false}]}}' '{bad json' > s-7.jsonl
$ cairn capture s-7.jsonl
> new       rule       rule:never-touch-prod  Never touch PROD
> new       rule       rule:不要動-prod-資料庫  不要動 PROD 資料庫
> new       capability capability:deploy:staging  Deploying (staging) works from this machine
> s-7.jsonl: 3 proposed (3 new, 0 updated, 0 duplicate, 0 known), 2 commands (1 failed), 1 malformed line skipped, 2 secrets masked
# all candidates: nothing enters default recall before approval
$ cairn list --status all --json | jq -r '[.[] | .status] | unique | join(",")'
> candidate
$ cairn list --json | jq length
> 0
# the proof is the successful run, secrets masked; nothing of them on disk
$ cairn list --status all --json | jq -r '.[] | select(.key == "capability:deploy:staging") | .proof'
> $ AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key-id] make deploy-staging
> exit 0 · 2025-06-01 10:01:40Z · session s-7 · line 5 of s-7.jsonl
> > deployed with token [REDACTED:github-token]
$ grep -rlaE 'AKIAQ3EXAMPLE7KZT2WX|ghp_R7xK2mQ9' .cairn; echo done
> done
# the same transcript again: one candidate per key, nothing added
$ cairn capture s-7.jsonl | tail -1
> s-7.jsonl: 3 proposed (0 new, 0 updated, 3 duplicate, 0 known), 2 commands (1 failed), 1 malformed line skipped, 2 secrets masked
# approved: a later session's success is left alone ("known"), no new candidate
$ cairn approve $(cairn list --status candidate --json | jq -r '.[] | select(.key == "capability:deploy:staging") | .id') >/dev/null; sed 's/s-7/s-8/g' s-7.jsonl > s-8.jsonl; cairn capture --no-rules s-8.jsonl
> known     capability capability:deploy:staging  Deploying (staging) works from this machine
> s-8.jsonl: 1 proposed (0 new, 0 updated, 0 duplicate, 1 known), 2 commands (1 failed), 1 malformed line skipped, 2 secrets masked
$ cairn list --status all --json | jq '[.[] | select(.kind == "capability")] | length'
> 1
# a pending candidate gains the new session's proof
$ cairn capture s-8.jsonl | grep -c '^update'
> 2
$ cairn list --status all --json | jq -r '.[] | select(.key == "rule:never-touch-prod") | .proof' | grep -c 'session s-'
> 2
# reflect: decisions and facts as well (origin reflection), questions never
$ printf '%s\n' '{"speaker":"user","text":"Let'"'"'s go with Postgres because we need JSONB. Should we always squash?","session":"plan"}' '{"speaker":"assistant","text":"The staging DB is at db.staging.internal:5432.","session":"plan"}' > plan.jsonl; cairn reflect plan.jsonl
> new       decision   decision:go-postgres-jsonb  Let's go with Postgres because we need JSONB
> new       fact       fact:staging-db-db.staging.internal-5432  The staging DB is at db.staging.internal:5432
> plan.jsonl: 2 proposed (2 new, 0 updated, 0 duplicate, 0 known)
$ cairn list --status all --origin reflection --json | jq -r '.[].status' | sort -u
> candidate
# --llm-cmd: its lines are checked strictly; bad ones are counted, not stored
$ cairn reflect --dry-run --json --llm-cmd "cat >/dev/null; echo '{\"kind\":\"rule\",\"key\":\"rule:no-friday-deploys\",\"title\":\"No Friday deploys\",\"body\":\"Do not deploy on Fridays.\"}'; echo '{\"kind\":\"note\",\"key\":\"x\"}'" plan.jsonl | jq -c '[.files[0].llm_lines, .files[0].llm_rejected, ([.candidates[].key] | index("rule:no-friday-deploys") != null)]'
> [1,1,true]
$ cairn reflect --dry-run --llm-cmd 'sleep 5' --llm-timeout 200 plan.jsonl
e~ llm-cmd: the command took longer than 200 ms
# usage errors and unreadable files
$ cairn capture
? 2
$ cairn capture --llm-cmd x ops.jsonl
? 2
$ cairn capture nope.jsonl
? 1
e~ cannot read 'nope.jsonl'
$ cairn capture --help
~ ^usage: cairn capture
$ cairn reflect --help
~ ^usage: cairn reflect

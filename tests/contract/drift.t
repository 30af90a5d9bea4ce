# Records that notice when their source moved on: a record keeps the Git
# blob ids of the repository files it refers to; `cairn check` lists the
# ones that changed, were deleted or renamed since; recall, the hook and
# MCP mark them; `cairn verify` re-affirms one against today's tree.
$ git init -q . && git config user.email t@example.invalid && git config user.name t && mkdir -p scripts docs/decisions && printf '#!/bin/sh\necho deploy\n' > scripts/deploy.sh && printf 'deploy:\n\tsh scripts/deploy.sh\n' > Makefile && printf '# Use SQLite\n\nStatus: accepted\n\n## Decision\n\nDurable records live in SQLite.\n' > docs/decisions/0001-sqlite.md && printf 'notes\n' > NOTES.txt && git add -A && git commit -qm init && echo ok
> ok
$ cairn init
~ initialized
$ cairn seed >/dev/null && echo seeded
> seeded
$ cairn write --kind procedure --key deploy:staging --title "Deploy to staging" "Run make deploy; it calls scripts/deploy.sh." --json | jq -r .id > proc.txt; wc -l < proc.txt
> 1
$ cairn write --kind fact --title "Weather" "It rained on Tuesday in the harbour." --json | jq -r .id > fact.txt; wc -l < fact.txt
> 1
# nothing changed yet: exit 0, nothing listed
$ cairn check
> no record's source changed since it was recorded
# --all lists what each record refers to: the script and the Makefile
$ cairn check --all --json | jq -r '.refs[] | select(.id == "'"$(cat proc.txt)"'") | .path' | sort
> Makefile
> scripts/deploy.sh
# the seeded record refers to its source file
$ cairn check --all --json | jq -r '.refs[] | select(.path | startswith("docs/")) | .path'
> docs/decisions/0001-sqlite.md
# a text naming no repository file refers to nothing
$ cairn check --all --json | jq -r '[.refs[] | select(.id == "'"$(cat fact.txt)"'")] | length'
> 0
# two commits change the script: changed, with git's counts; exit 3
$ echo 'echo two' >> scripts/deploy.sh && git commit -qam two && echo 'echo three' >> scripts/deploy.sh && git commit -qam three && echo ok
> ok
$ cairn check --json | jq -c '.drifted, [.refs[] | {path, state, commits, lines_added, lines_removed}]'
> 1
> [{"path":"scripts/deploy.sh","state":"changed","commits":2,"lines_added":2,"lines_removed":0}]
$ cairn check > /dev/null
? 3
$ cairn check | head -1
~ ^r[0-9a-f]+  changed   scripts/deploy.sh  2 commits  \+2 -0$
# CLAIM: drift-marked
# recall and the hook mark it (with the count cairn check kept) ...
$ cairn recall "how do we deploy to staging" | grep -c "scripts/deploy.sh changed in 2 commits since this was recorded; re-check before relying on it"
> 1
$ cairn recall "how do we deploy to staging" --json | jq -r '.hits[0].drift, .hits[0].drift_weight'
> scripts/deploy.sh changed in 2 commits since this was recorded; re-check before relying on it
> 0.85
$ printf '{"prompt":"how do we deploy to staging?","hook_event_name":"UserPromptSubmit"}' | cairn hook | jq -r .hookSpecificOutput.additionalContext | grep -c '⚠ scripts/deploy.sh changed in 2 commits'
> 1
# ... and MCP: memory_recall's drift, memory_read's drift list
$ printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' '{"jsonrpc":"2.0","method":"notifications/initialized"}' '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_recall","arguments":{"query":"deploy to staging"}}}' '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_read","arguments":{"key":"deploy:staging"}}}' | cairn mcp | jq -c 'select(.id == 2 or .id == 3) | .result.structuredContent | (.results[0].drift // .drift)'
> "scripts/deploy.sh changed in 2 commits since this was recorded; re-check before relying on it"
> [{"path":"scripts/deploy.sh","state":"changed","renamed_to":null}]
# the unchanged record is not marked
$ cairn recall "rained harbour" --json | jq -r '.hits[0].drift'
> null
# the down-weight is configurable; 1 turns it off
$ cairn check --weight 1 >/dev/null && cairn recall "how do we deploy to staging" --json | jq -r '.hits[0].drift_weight'
> 1
$ cairn check --weight 2
? 2
# verify: a human re-affirms it; a new revision keeps the act, the marker goes
$ cairn verify "$(cat proc.txt)" | head -1
~ ^verified r[0-9a-f]+ against today's tree \(2 files\)$
$ cairn check
> no record's source changed since it was recorded
$ cairn get "$(cat proc.txt)" --json | jq -r '.revision, (.proof | startswith("verified by a human against the tree at "))'
> 2
> true
$ cairn history deploy:staging --json | jq -r 'length'
> 2
# a deleted file, and a renamed one (same content under another path)
$ git rm -q Makefile && git commit -qm rm && git mv scripts/deploy.sh scripts/ship.sh && git commit -qm mv && echo ok
> ok
$ cairn check --json | jq -c '[.refs[] | {path, state, renamed_to}] | sort_by(.path)'
> [{"path":"Makefile","state":"deleted","renamed_to":null},{"path":"scripts/deploy.sh","state":"renamed","renamed_to":"scripts/ship.sh"}]
# the seeded decision's file changes: marked until re-seeded
$ printf '\nMore context.\n' >> docs/decisions/0001-sqlite.md && cairn check --json | jq -r '[.refs[] | select(.path | startswith("docs/")) | .state] | join(",")'
> changed
$ cairn seed >/dev/null; cairn check --json | jq -r '[.refs[] | select(.path | startswith("docs/"))] | length'
> 0
# an imported record remembers its files too (import writes through the store)
$ printf '%s\n' '{"id":"imp1","kind":"procedure","title":"Ship","body":"Run scripts/ship.sh to ship."}' | cairn import >/dev/null && cairn check --all --json | jq -r '.refs[] | select(.id == "imp1") | .path + " " + .state'
> scripts/ship.sh same
$ cairn check --help | head -1
~ ^usage: cairn check
$ cairn verify
? 2

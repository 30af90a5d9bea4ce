# EVIDENCE-OF: `cairn setup claude-code` merges the hook entries
# into .claude/settings.json and the server into .mcp.json, idempotently,
# keeping what is there, refusing a file it cannot parse, and installs the
# Skill. Lines tagged "CLAIM: name" are the evidence tests/t_skill.sh binds
# the Skill's sentences to.
#
# a project with settings of its own: another hook, a Stop hook that already
# runs cairn (with options), unknown keys
$ mkdir -p .claude && printf '%s\n' '{"permissions":{"allow":["Bash(npm test)"]},"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"./guard.sh"}]}],"Stop":[{"hooks":[{"type":"command","command":"/opt/bin/cairn hook --budget 2000"}]}]},"x-unknown":{"a":[1,2.5,null,true]}}' > .claude/settings.json && printf '%s\n' '{"mcpServers":{"other":{"command":"other-server","args":["--x"]}}}' > .mcp.json
# --dry-run says what would change and writes nothing
$ cairn setup claude-code --dry-run
> .claude/settings.json: would be updated, added hooks UserPromptSubmit, SessionStart, SessionEnd
> .mcp.json: would be updated, added server "cairn" (cairn mcp)
> .claude/skills/cairn-memory/SKILL.md: would be created
> ./.cairn: would be created (no store here yet), then seeded from the decision records found
$ ls -A .claude; jq -c . .mcp.json
> settings.json
> {"mcpServers":{"other":{"command":"other-server","args":["--x"]}}}
$ cairn setup claude-code
> .claude/settings.json: updated, added hooks UserPromptSubmit, SessionStart, SessionEnd
> .mcp.json: updated, added server "cairn" (cairn mcp)
> .claude/skills/cairn-memory/SKILL.md: created
# no store here or above: setup makes one (tests/contract/setup_store.t)
> ./.cairn: created (there was no store; the hook and the MCP server read this one)
> seed: no decision records found in the usual folders (docs/decisions, docs/adr, ...); 'cairn seed PATH' names theirs
> Restart Claude Code in '.' to load them.
# a new server waits for the user's approval in Claude Code (what
# Claude Code shows is checked with the real client by make check-clients)
> The MCP server "cairn" needs your approval in Claude Code: until then `claude mcp list`
> shows it as "Pending approval". Start `claude` in '.', trust the folder and choose
> "Use this MCP server"; `claude mcp list` then shows it "Connected". If you declined
> it, `claude mcp reset-project-choices` there makes Claude Code ask again.
# everything that was there is still there, in its order; the existing cairn
# Stop hook is kept as it was, not doubled
$ jq -c '.permissions, .hooks.PreToolUse, .hooks.Stop, ."x-unknown", (.hooks | keys_unsorted)' .claude/settings.json
> {"allow":["Bash(npm test)"]}
> [{"matcher":"Bash","hooks":[{"type":"command","command":"./guard.sh"}]}]
> [{"hooks":[{"type":"command","command":"/opt/bin/cairn hook --budget 2000"}]}]
> {"a":[1,2.5,null,true]}
> ["PreToolUse","Stop","UserPromptSubmit","SessionStart","SessionEnd"]
$ jq -c '[.hooks.UserPromptSubmit, .hooks.SessionStart, .hooks.SessionEnd][] | .[0].hooks' .claude/settings.json | sort -u
> [{"type":"command","command":"cairn hook"}]
# CLAIM: mcp-server-configured
$ jq -c '.mcpServers | (keys_unsorted, .cairn)' .mcp.json
> ["other","cairn"]
> {"type":"stdio","command":"cairn","args":["mcp"]}
# indented JSON, and no temporary file left behind
$ head -2 .mcp.json; ls -A .claude .claude/skills/cairn-memory
> {
>   "mcpServers": {
> .claude:
> settings.json
> skills
> 
> .claude/skills/cairn-memory:
> SKILL.md
# the Skill in Claude Code's format: front matter with name and description
$ sed -n '1,3p;4s/^---$/end/p' .claude/skills/cairn-memory/SKILL.md | cut -c1-40
> ---
> name: cairn-memory
> description: This project's long-term me
> end
# idempotent: a second run changes no byte
$ sha256sum .claude/settings.json .mcp.json .claude/skills/cairn-memory/SKILL.md > ../sums && cairn setup claude-code && sha256sum -c --quiet ../sums && echo same
> .claude/settings.json: unchanged
> .mcp.json: unchanged
> .claude/skills/cairn-memory/SKILL.md: unchanged
> same
# a file already formatted its own way is not rewritten when nothing is added
$ printf '{ "mcpServers" : { "cairn" : { "command" : "/usr/local/bin/cairn", "args" : ["mcp"] } } }\n' > .mcp.json && cp .mcp.json ../mcp.keep && cairn setup claude-code | grep mcp && cmp .mcp.json ../mcp.keep && echo kept
> .mcp.json: unchanged
> kept
# an edited Skill is put back to the text this version binds to its tests
$ echo 'made up text' >> .claude/skills/cairn-memory/SKILL.md && cairn setup claude-code | grep SKILL && grep SKILL ../sums | sha256sum -c --quiet && echo same
> .claude/skills/cairn-memory/SKILL.md: replaced
> same
# a file that is not valid JSON: clear error, exit 1, nothing written at all
$ printf '{"hooks": {"Stop": [}\n' > .claude/settings.json && cp .claude/settings.json ../bad.keep && rm .mcp.json && cairn setup claude-code
? 1
e~ '.claude/settings.json' is not valid JSON .*nothing was changed
$ cmp .claude/settings.json ../bad.keep && ls .mcp.json
? 2
# wrong types are refused the same way
$ echo '{"hooks": []}' > .claude/settings.json && cairn setup claude-code
? 1
e~ "hooks" is not a JSON object; nothing was changed
$ echo '{"hooks": {"SessionStart": {}}}' > .claude/settings.json && cairn setup claude-code
? 1
e~ "SessionStart" is not a JSON array
$ echo '[1]' > .claude/settings.json && cairn setup claude-code
? 1
e~ does not hold a JSON object
# an empty project: all four events run `cairn hook`; --dir; --cairn PATH
$ mkdir ../q && cairn setup claude-code --dir ../q --cairn /opt/cairn/bin/cairn >/dev/null && jq -c '.hooks | to_entries[] | [.key, .value[0].hooks[0].command]' ../q/.claude/settings.json && jq -c .mcpServers.cairn ../q/.mcp.json
> ["UserPromptSubmit","/opt/cairn/bin/cairn hook"]
> ["SessionStart","/opt/cairn/bin/cairn hook"]
> ["Stop","/opt/cairn/bin/cairn hook"]
> ["SessionEnd","/opt/cairn/bin/cairn hook"]
> {"type":"stdio","command":"/opt/cairn/bin/cairn","args":["mcp"]}
$ cairn setup claude-code --cairn 'cairn; rm -rf /'
? 2
$ cairn setup other-tool
? 2
$ cairn setup claude-code --dir /nonexistent
? 1
# the entries written work: the hook command, run as Claude Code runs it
# (through the shell, JSON on stdin), injects the drawer at a session start
$ rm -rf .claude .mcp.json && cairn init >/dev/null && cairn setup claude-code >/dev/null && printf '%s\n' '{"id":"r1","kind":"rule","title":"Never touch PROD","body":"Never run scripts against the production database by hand."}' '{"id":"c1","kind":"capability","title":"Deploying to staging works","body":"make deploy ENV=staging works from this machine.","proof":"make deploy ENV=staging exited 0 on 2026-11-02"}' '{"id":"adr1","kind":"adr","title":"Use PostgreSQL for orders","body":"Orders are stored in PostgreSQL 15 on RDS; DynamoDB was rejected."}' '{"id":"n1","kind":"note","title":"Orders dashboard","body":"The orders dashboard reads PostgreSQL replicas."}' | cairn import >/dev/null && cairn write --origin agent --key proposal:x "maybe cache orders in Redis" >/dev/null
# CLAIM: hook-session-start
$ printf '{"hook_event_name":"SessionStart","cwd":"%s","source":"startup"}' "$PWD" | sh -c "$(jq -r '.hooks.SessionStart[0].hooks[0].command' .claude/settings.json)" | jq -r .hookSpecificOutput.additionalContext
~ ^Standing rules and capabilities
~ · rule · .* · id r1$
~ · capability · .* · id c1$
~ ^1 candidate record waits for a human to approve or reject
# CLAIM: hook-prompt-block
$ printf '{"hook_event_name":"UserPromptSubmit","cwd":"%s","prompt":"where are the orders stored?"}' "$PWD" | sh -c "$(jq -r '.hooks.UserPromptSubmit[0].hooks[0].command' .claude/settings.json)" | jq -r .hookSpecificOutput.additionalContext
~ ^Past project records from cairn's memory, recalled for this prompt\. They are not part of the current conversation
~ · id adr1$
~ memory_read
# the MCP server written into .mcp.json, spoken to as a client would
# CLAIM: mcp-six-tools
# CLAIM: no-approve-tool
$ printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' '{"jsonrpc":"2.0","method":"notifications/initialized"}' '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' | $(jq -r '.mcpServers.cairn.command' .mcp.json) $(jq -r '.mcpServers.cairn.args[]' .mcp.json) | jq -r 'select(.id == 2) | .result.tools[].name' | sort
> find_precedents
> memory_candidates
> memory_forget
> memory_read
> memory_recall
> memory_write
# a helper: one tools/call, its structured result
$ printf '#!/bin/sh\nprintf "%%s\\n" %s %s "{\\"jsonrpc\\":\\"2.0\\",\\"id\\":2,\\"method\\":\\"tools/call\\",\\"params\\":{\\"name\\":\\"$1\\",\\"arguments\\":$2}}" | cairn mcp | jq -c "select(.id == 2) | .result"\n' "'{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}'" "'{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}'" > ../call && chmod +x ../call && ../call memory_read '{"id":"adr1"}' | jq -r .structuredContent.record.body
> Orders are stored in PostgreSQL 15 on RDS; DynamoDB was rejected.
# CLAIM: precedents-decisions-only
$ ../call find_precedents '{"query":"orders PostgreSQL"}' | jq -r '.structuredContent.results[].kind' | sort -u
> adr
# CLAIM: recall-every-kind
$ ../call memory_recall '{"query":"orders PostgreSQL"}' | jq -r '.structuredContent.results[].kind' | sort -u
> adr
> note
# CLAIM: empty-means-no-match
$ ../call find_precedents '{"query":"sourdough starter hydration"}' | jq -c '.structuredContent.results'
> []
$ ../call memory_recall '{"query":"sourdough starter hydration"}' | jq -c '.structuredContent.results'
> []
# CLAIM: recall-kinds-capability
$ ../call memory_recall '{"query":"deploy to staging","kinds":["capability","procedure"]}' | jq -r '.structuredContent.results[] | .id + " " + .kind'
> c1 capability
# CLAIM: capability-proof
$ ../call memory_read '{"id":"c1"}' | jq -r .structuredContent.record.proof
> make deploy ENV=staging exited 0 on 2026-11-02
# CLAIM: read-by-id-or-key
$ ../call memory_read '{"key":"proposal:x"}' | jq -r '.structuredContent.record | .status + " " + .body'
> candidate maybe cache orders in Redis
# CLAIM: write-is-candidate
$ ../call memory_write '{"kind":"fact","key":"fact:orders-region","body":"The orders database runs in eu-west-1."}' | jq -r .structuredContent.record.status
> candidate
# CLAIM: recall-skips-candidates
$ ../call memory_recall '{"query":"orders database region eu-west-1"}' | jq -c '[.structuredContent.results[] | select(.key == "fact:orders-region")]'
> []
# CLAIM: candidates-list
$ ../call memory_candidates '{}' | jq -r '.structuredContent.candidates[].key' | sort
> fact:orders-region
> proposal:x
# CLAIM: human-approves
$ cairn approve "$(cairn read fact:orders-region --json | jq -r .id)" >/dev/null && ../call memory_recall '{"query":"orders database region eu-west-1"}' | jq -r '.structuredContent.results[] | select(.key == "fact:orders-region") | .status'
> accepted
$ cairn reject "$(cairn read proposal:x --json | jq -r .id)" >/dev/null && cairn read proposal:x --json | jq -r .status
> rejected
# CLAIM: no-approve-tool
$ ../call memory_write '{"kind":"fact","key":"fact:x","body":"x","status":"accepted"}' | jq -r .isError
> true
# CLAIM: forget-asks
$ ../call memory_forget '{"id":"n1"}' | jq -r .structuredContent.pending && cairn get n1 --json | jq -r .status
> true
> accepted

# EVIDENCE-OF: `cairn setup claude-code` in a project without a store
# leaves a working memory, not a silently empty hook (issue 33, item 6):
# it creates DIR/.cairn, seeds it from the decision records the project
# holds and says so; a dry run says it would; an existing store (here or
# above, as the hook finds it) is left as it is
$ git init -q proj && cd proj && git config user.email t@example.com && git config user.name t && mkdir -p docs/adr && printf '# ADR 1: Use PostgreSQL for orders\n\nDate: 2023-04-01\n\n## Status\n\nAccepted\n\n## Decision\n\nWe keep the orders in PostgreSQL 15 on RDS.\n' > docs/adr/0001-orders-db.md && git add docs && git commit -qm adr
$ cd proj && cairn setup claude-code --dry-run | grep '^\./\.cairn'
> ./.cairn: would be created (no store here yet), then seeded from the decision records found
$ ls -A proj
> .git
> docs
$ cd proj && cairn setup claude-code | grep -v '^\.claude\|^\.mcp\|^The MCP\|^shows it\|^"Use\|^it, `claude'
> ./.cairn: created (there was no store; the hook and the MCP server read this one)
> seeded 1 files, 1 records from the project's decision records (cairn seed; re-run it after they change)
> Restart Claude Code in '.' to load them.
$ cd proj && cairn list --json | jq -r '.[] | "\(.kind) \(.source.path)"'
> adr docs/adr/0001-orders-db.md
# the hook the setup wrote answers from it at once
$ cd proj && printf '{"hook_event_name":"UserPromptSubmit","cwd":"%s","prompt":"are the orders kept in PostgreSQL?"}' "$PWD" | sh -c "$(jq -r '.hooks.UserPromptSubmit[0].hooks[0].command' .claude/settings.json)" | jq -r .hookSpecificOutput.additionalContext
~ PostgreSQL 15 on RDS
# run again: the store is there, nothing about it is said or done
$ cd proj && cairn setup claude-code --json | jq -c '[.store_created, .seeded, (.store | endswith("proj/.cairn"))]'
> [false,null,true]
# a folder below a workspace uses that workspace's store: none is made
$ mkdir -p proj/sub && cd proj/sub && cairn setup claude-code --json | jq -c '[.store_created, (.store | endswith("proj/.cairn"))]'
> [false,true]
$ ls -A proj/sub
> .claude
> .mcp.json
# a project with no decision records: a store, and what was looked for
$ mkdir empty && cd empty && cairn setup claude-code --json | jq -c '[.store_created, .seeded.files]' && test -f .cairn/cairn.db && echo store
> [true,0]
> store

# EVIDENCE-OF: an ADR whose date cannot be parsed is
# shown undated in the hook block, not with the day it was seeded
$ cairn init >/dev/null && mkdir -p docs/adr && printf '# ADR 1: Use PostgreSQL for orders\n\nDate: sometime in spring\n\n## Status\n\nAccepted\n\n## Decision\n\nOrders are stored in PostgreSQL 15 on RDS.\n' > docs/adr/0001-db.md && printf '# ADR 2: Queue\n\nDate: 2023-04-01\n\n## Status\n\nAccepted\n\n## Decision\n\nThe job queue is SQS.\n' > docs/adr/0002-queue.md && printf '# ADR 3: Cache\n\n## Status\n\nAccepted\n\n## Decision\n\nThe cache is Redis.\n' > docs/adr/0003-cache.md && cairn seed >/dev/null
$ printf '{"hook_event_name":"UserPromptSubmit","cwd":"%s","prompt":"are the orders stored in PostgreSQL?"}' "$PWD" | cairn hook --local | jq -r .hookSpecificOutput.additionalContext | grep '0001-db.md'
~ ^\[1\] undated · adr · docs/adr/0001-db\.md
!~ 20[0-9][0-9]-[0-9][0-9]-[0-9][0-9] · adr
$ printf '{"hook_event_name":"UserPromptSubmit","cwd":"%s","prompt":"do the jobs go to the SQS queue?"}' "$PWD" | cairn hook --local | jq -r .hookSpecificOutput.additionalContext | grep '0002-queue.md'
~ ^\[1\] 2023-04-01 · adr · docs/adr/0002-queue\.md
# an impossible Date: line is no date either (and does not stop the seed)
$ printf '# ADR 4: Logs\n\nDate: 2024-02-30\n\n## Status\n\nAccepted\n\n## Decision\n\nLogs go to Loki.\n' > docs/adr/0004-logs.md && cairn seed >/dev/null && cairn list --kind adr --json | jq -r '.[] | select(.source.path == "docs/adr/0004-logs.md") | .time'
> null

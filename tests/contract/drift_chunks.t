# EVIDENCE-OF: issue 33 item 13: drift flags the chunks of a seeded file whose lines changed, not
# every chunk of the file; a seeded record's fix is `cairn seed`, another record's `cairn verify`
$ git init -q . && git config user.email t@example.invalid && git config user.name t && mkdir -p docs/decisions scripts && p=$(printf 'Orders are written once and read by many reports every hour. %.0s' 1 2 3 4 5 6 7 8) && printf '# Use PostgreSQL\n\nStatus: accepted\n\n## Context\n\n%s\n\n## Decision\n\nThe orders database is PostgreSQL 15 on RDS. %s\n\n## Consequences\n\nReports read a replica. %s\n' "$p" "$p" "$p" > docs/decisions/0001-pg.md && printf '#!/bin/sh\necho deploy\n' > scripts/deploy.sh && git add -A && git commit -qm init && echo ok
> ok
$ cairn init >/dev/null && cairn seed | tail -1
~ seeded 1 files?, 3 records
$ cairn write --kind procedure --title "Deploy" "Run scripts/deploy.sh to deploy." >/dev/null && cairn check
> no record's source changed since it was recorded
# one line of the Decision section changes: only that chunk drifted
$ sed -i 's/PostgreSQL 15 on RDS/PostgreSQL 16 on RDS/' docs/decisions/0001-pg.md && git commit -qam pg16 && cairn check --json | jq -c '.drifted, [.refs[] | .title]'
> 1
> ["Use PostgreSQL: Decision"]
# recall marks that chunk only
$ cairn recall "orders database PostgreSQL RDS" --json | jq -c '[.hits[] | [.record.title, (.drift != null)]] | sort'
> [["Use PostgreSQL",false],["Use PostgreSQL: Consequences",false],["Use PostgreSQL: Decision",true]]
# the fix for a seeded record is re-seeding, not verify
$ cairn check | tail -1
> 1 reference drifted, of records seeded from Markdown: `cairn seed` re-reads their files
$ cairn check --json | jq -r '.refs[0].fix'
> cairn seed
# text added at the end of the last section drifts that chunk
$ echo 'Backups are kept for 30 days.' >> docs/decisions/0001-pg.md && cairn check --json | jq -c '[.refs[] | .title] | sort'
> ["Use PostgreSQL: Consequences","Use PostgreSQL: Decision"]
$ cairn seed >/dev/null && cairn check
> no record's source changed since it was recorded
# another record's fix stays verify
$ echo 'echo two' >> scripts/deploy.sh && cairn check --json | jq -r '.refs[0].fix | startswith("cairn verify ")'
> true
$ cairn check | tail -1
> 1 reference drifted; `cairn verify ID` re-affirms a record that still holds

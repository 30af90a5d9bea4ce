# EVIDENCE-OF: cairn seed reads what a person would call a decision record (issue 33, item 8): titled
# "Decision record for X" without a Status heading, statuses written as sentences, one folder per
# decision with index.md and an identical README.md, templates whose status is a question
$ cairn init >/dev/null
$ mkdir -p locales/en/examples/css locales/en/examples/trust locales/en/examples/queue locales/en/templates/decision-record-template-by-michael-nygard
$ printf '# Architecture Decision Record: CSS framework\n\n## Summary\n\n### Issue\n\nWe want a CSS framework.\n\n### Decision\n\nDecided on Bulma.\n\n### Status\n\nGathering information. We are starting with Bulma and may change.\n' > locales/en/examples/css/index.md && cp locales/en/examples/css/index.md locales/en/examples/css/README.md
$ printf '# Decision Record for High Trust Teamwork\n\n## Decision Description\n\nWe adopt high trust teamwork.\n\n## Alternatives Considered\n\nLow trust teamwork.\n' > locales/en/examples/trust/index.md && cp locales/en/examples/trust/index.md locales/en/examples/trust/README.md
$ printf '# Decision record for the job queue\n\n## Context and Problem Statement\n\nJobs pile up.\n\n## Considered Alternatives\n\nSQS, Kafka.\n\n## Decision Made\n\nWe use Kafka for the job queue.\n' > locales/en/examples/queue/index.md && cp locales/en/examples/queue/index.md locales/en/examples/queue/README.md
$ d=locales/en/templates/decision-record-template-by-michael-nygard; printf '# Decision record template by Michael Nygard\n\nIn each ADR file, write these sections:\n\n# Title\n\n## Status\n\nWhat is the status, such as proposed, accepted, rejected, deprecated, superseded, etc.?\n\n## Context\n\nWhat is the issue?\n\n## Decision\n\nWhat is the change?\n\n## Consequences\n\nWhat becomes easier?\n' > $d/index.md && cp $d/index.md $d/README.md
# the template is skipped with a note, each decision is seeded once, exit 0
$ cairn seed --no-git --dry-run | grep '^file' | sed 's/  [0-9]* records\?$//'
> file  locales/en/examples/css/README.md  adr  status 'Gathering information. We are starting with Bulma and may change.' -> unverified (proposed (sentence))  date none
> file  locales/en/examples/css/index.md  skipped: a byte-identical twin of README.md (seeded once)
> file  locales/en/examples/queue/README.md  adr  no status -> accepted  date none
> file  locales/en/examples/queue/index.md  skipped: a byte-identical twin of README.md (seeded once)
> file  locales/en/examples/trust/README.md  adr  no status -> accepted  date none
> file  locales/en/examples/trust/index.md  skipped: a byte-identical twin of README.md (seeded once)
> file  locales/en/templates/decision-record-template-by-michael-nygard/README.md  skipped: a template (its status is a question: the template's prompt left in)
> file  locales/en/templates/decision-record-template-by-michael-nygard/index.md  skipped: a template (its status is a question: the template's prompt left in)
$ cairn seed --no-git
> seeded 3 files, 3 records: 3 new, 0 changed, 0 unchanged, 0 retired
e~ note: skipped 2 templates and 3 byte-identical twins \(`cairn seed --dry-run` lists them and why\)
$ cairn list --status all --json | jq -r 'sort_by(.source.path) | .[] | "\(.source.path) \(.status) \(.title)"'
> locales/en/examples/css/README.md unverified Architecture Decision Record: CSS framework
> locales/en/examples/queue/README.md accepted Decision record for the job queue
> locales/en/examples/trust/README.md accepted Decision Record for High Trust Teamwork
# the sentence is kept in the record
$ cairn list --status all --json | jq -r '.[] | select(.source.path | endswith("css/README.md")) | .body' | grep -c 'Gathering information. We are starting with Bulma'
> 1
# statuses written as sentences: a documented rule maps them, the rest is still refused
$ mkdir -p decisions
$ printf '# 1. Use Go\n\n## Status\n\nThe architecture board approved this in May 2021.\n\n## Decision\n\nWe use Go.\n' > decisions/0001-go.md
$ printf '# 2. Use Rust\n\n## Status\n\nWe rejected it after the pilot; see the notes.\n\n## Decision\n\nNo Rust.\n' > decisions/0002-rust.md
$ printf '# 3. Use Zig\n\n## Status\n\nWe have not accepted this yet.\n\n## Decision\n\nZig.\n' > decisions/0003-zig.md
$ printf '# 4. Use Nim\n\n## Status\n\nMaybe later, when the team has time.\n\n## Decision\n\nNim.\n' > decisions/0004-nim.md
$ printf '# 5. Use Odin\n\n## Status\n\n我们已接受这个方案。\n\n## Decision\n\nOdin.\n' > decisions/0005-odin.md
$ cairn seed --no-git decisions
? 1
> seeded 3 files, 3 records: 3 new, 0 changed, 0 unchanged, 0 retired
e~ 0003-zig\.md:5: error: unknown status 'We have not accepted this yet\.'
e~ 0004-nim\.md:5: error: unknown status 'Maybe later, when the team has time\.'
$ cairn list --status all --json | jq -r '.[] | select(.source.path | startswith("decisions/")) | "\(.source.path) \(.status) \(.body | test("Outcome: rejected"))"' | sort
> decisions/0001-go.md accepted false
> decisions/0002-rust.md accepted true
> decisions/0005-odin.md accepted false
# an ambiguous day/month date warns when its file is new or changed, not on every re-seed
$ rm decisions/0003-zig.md decisions/0004-nim.md && printf '# 6. Use Lua\n\nDate: 05/02/2018\n\n## Status\n\nAccepted\n\n## Decision\n\nLua.\n' > decisions/0006-lua.md
$ cairn seed --no-git decisions 2>&1 >/dev/null | grep -c 'date 05/02/2018 is day/month or month/day'
> 1
$ cairn seed --no-git decisions 2>&1 >/dev/null | grep -c 'is day/month or month/day'
? 1
> 0
$ echo 'More.' >> decisions/0006-lua.md && cairn seed --no-git decisions 2>&1 >/dev/null | grep -c 'is day/month or month/day'
> 1

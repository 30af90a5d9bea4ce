# EVIDENCE-OF: cairn seed on the shapes real ADR repositories have (adr-tools, MADR 2-4, log4brains)
$ cairn init >/dev/null
# adr-tools: .adr-dir names the folder; "Superceded by" / "Supercedes"
$ echo doc/architecture/decisions > .adr-dir
$ mkdir -p doc/architecture/decisions
$ printf '# 1. Record architecture decisions\n\nDate: 2016-02-12\n\n## Status\n\nSuperceded by [2. Use MADR](0002-use-madr.md)\n\n## Context\n\nWe need to record decisions.\n' > doc/architecture/decisions/0001-record-architecture-decisions.md
$ printf '# 2. Use MADR\n\nDate: 12/01/1992\n\n## Status\n\n✅ Accepted\n\nSupercedes [1. Record architecture decisions](0001-record-architecture-decisions.md)\n\n## Context\n\nMADR is richer.\n' > doc/architecture/decisions/0002-use-madr.md
# the template adr-tools keeps next to them, with "template" nowhere in its name
$ printf '# NUMBER. TITLE\n\nDate: DATE\n\n## Status\n\nSTATUS\n\n## Context\n\nThe issue.\n' > doc/architecture/decisions/blank.md
# log4brains: .log4brains.yml names the folder; MADR-2 list items; a
# Status item that is not the first one
$ printf 'project:\n  name: demo\n  adrFolder: ./handbook/adr\n' > .log4brains.yml
$ mkdir -p handbook/adr
$ printf '# Use Lunr for search\n\n- Deciders: ann\n- Date: 2020-11-03\n- Status: proposed <!-- optional -->\n\n## Context and Problem Statement\n\nSearch is slow.\n' > handbook/adr/20201103-use-lunr-for-search.md
$ printf '# Use Velocity\n\n- Status: Rejected (see 0019)\n- Date: December 1, 2021\n\n## Context and Problem Statement\n\nTemplates.\n' > handbook/adr/20211201-use-apache-velocity-as-template-engine.md
$ printf '# [short title of solved problem and solution]\n\n* Status: [proposed | rejected | accepted | deprecated | … | superseded by [ADR-0005](0005-example.md)]\n' > handbook/adr/template.md
$ printf '# Architecture knowledge base\n\nWelcome.\n' > handbook/adr/index.md
# a folder outside every list, found by content; a bad file in it
$ mkdir -p architecture/records
$ printf '# ADR-7: Use Kafka\n\n## Status\n\nPending\n\n## Context\n\nQueues.\n\n## Decision\n\nKafka.\n' > architecture/records/adr-007-kafka.md
$ printf '# ADR-8: Use Redis\n\n## Status\n\nMaybe later\n\n## Context\n\nCaches.\n\n## Decision\n\nRedis.\n' > architecture/records/adr-008-redis.md
# the dry run says per file what it found, mapped and skipped, and why
$ cairn seed --no-git --dry-run 2>/dev/null | grep '^file' | sed 's/  [0-9]* records\?$//; s/ f[0-9a-f]\{15\}/ ID/g'
> file  architecture/records/adr-007-kafka.md  adr  status 'Pending' -> unverified (proposed)  date none
> file  architecture/records/adr-008-redis.md  error: unknown status 'Maybe later' (no rule of the status table maps it: see docs/SEED.md; the file is skipped)
> file  doc/architecture/decisions/0001-record-architecture-decisions.md  adr  status 'Superceded by 2. Use MADR' -> superseded (superseded)  date 2016-02-12  superseded by ID
> file  doc/architecture/decisions/0002-use-madr.md  adr  status '✅ Accepted' -> accepted (accepted)  date 1992-01-12  supersedes ID
> file  doc/architecture/decisions/blank.md  skipped: a template (its title is a placeholder)
> file  handbook/adr/20201103-use-lunr-for-search.md  adr  status 'proposed' -> unverified (proposed)  date 2020-11-03
> file  handbook/adr/20211201-use-apache-velocity-as-template-engine.md  adr  status 'Rejected (see 0019)' -> accepted (rejected)  date 2021-12-01
> file  handbook/adr/index.md  skipped: an index page (README/index that is no decision record)
> file  handbook/adr/template.md  skipped: a template (its title is a placeholder)
$ cairn list --status all --json | jq length
> 0
# a bad file is reported and skipped, the others are seeded, exit status 1
$ cairn seed --no-git
? 1
> seeded 5 files, 5 records: 5 new, 0 changed, 0 unchanged, 0 retired
e~ adr-008-redis\.md:5: error: unknown status 'Maybe later'
e~ 1 file with errors was skipped
e~ 0002-use-madr\.md:3: warning: date 12/01/1992 is day/month or month/day: read as 1992-01-12
$ cairn list --status all --json | jq -r 'sort_by(.source.path) | .[] | "\(.source.path) \(.status) \(.time)"'
> architecture/records/adr-007-kafka.md unverified null
> doc/architecture/decisions/0001-record-architecture-decisions.md superseded 2016-02-12
> doc/architecture/decisions/0002-use-madr.md accepted 1992-01-12
> handbook/adr/20201103-use-lunr-for-search.md unverified 2020-11-03
> handbook/adr/20211201-use-apache-velocity-as-template-engine.md accepted 2021-12-01
$ cairn list --status all --json | jq -r '[.[] | select(.source.path | endswith("0001-record-architecture-decisions.md")) | .superseded_by] == [.[] | select(.source.path | endswith("0002-use-madr.md")) | .id]'
> true
# --strict keeps all or nothing
$ echo '- x' >> handbook/adr/20201103-use-lunr-for-search.md && cairn seed --no-git --strict
? 1
e~ nothing was written: 1 error in the files
$ cairn list --status all --json | jq '[.[] | select(.revision > 1)] | length'
> 0
# fixed, the file is seeded; seeding again changes nothing
$ sed -i 's/Maybe later/Accepted/' architecture/records/adr-008-redis.md && cairn seed --no-git 2>/dev/null
> seeded 6 files, 6 records: 1 new, 1 changed, 4 unchanged, 0 retired
$ cairn seed --no-git 2>/dev/null
> seeded 6 files, 6 records: 0 new, 0 changed, 6 unchanged, 0 retired
# JSON: per-file sources
$ cairn seed --no-git --json 2>/dev/null | jq -c '[.ok, .files, .failed, .skipped]'
> [true,6,0,3]
# Docusaurus front matter that is not YAML, a title in front matter and an
# H1, HTML comments in headings: read, warned, titles neither joined nor
# commented
$ mkdir -p docs/architecture-decisions && p=$(printf 'Dates must be formatted the same way in every plugin we ship. %.0s' 1 2 3 4 5 6 7 8 9 10 11 12) && printf -- '---\nid: adrs-adr010\ntitle: ADR010: Use the Luxon Date Library\n---\n\n# Use the Luxon Date Library\n\n## Status\n\nAccepted\n\n## Context\n\n%s\n\n## Decision\n\n%s\n\n### Positive Consequences <!-- optional -->\n\n%s\n' "$p" "$p" "$p" > docs/architecture-decisions/adr010-luxon-date-library.md
$ cairn seed --no-git 2>&1 >/dev/null | grep -c 'adr010-luxon-date-library.md:3: warning: front matter is not valid YAML'
> 1
$ cairn list --json | jq -r '.[] | select(.source.path | endswith("adr010-luxon-date-library.md")) | .title' | sort
> ADR010: Use the Luxon Date Library
> ADR010: Use the Luxon Date Library: Decision
> ADR010: Use the Luxon Date Library: Positive Consequences
$ cairn list --json | jq -r '.[] | select(.source.path | endswith("adr010-luxon-date-library.md")) | .source.heading' | grep -c -- '<!--'
? 1
> 0
# nothing found says where it looked, and exits 1
$ mkdir empty && cd empty && cairn init >/dev/null && cairn seed --no-git
? 1
e~ no decision records found: looked in .*docs/adr.*anywhere in the workspace

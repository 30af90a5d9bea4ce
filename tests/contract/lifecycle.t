# EVIDENCE-OF: SPEC 5.5 -- decisions and facts unseen 90 days go stale, 180
# days retired; capabilities, rules and procedures never decay; an explicit
# read revives; recall runs it at most daily; `cairn supersede` links records
# and the old one leaves default recall. CAIRN_NOW is the lifecycle's clock.
$ cairn init >/dev/null
$ printf '%s\n' '{"id":"dec","kind":"decision","key":"db:orders","title":"Use Postgres for orders","body":"Orders are stored in Postgres.","created":"2026-01-01T00:00:00Z","updated":"2026-01-01T00:00:00Z"}' '{"id":"fact","kind":"fact","title":"Deploy region","body":"Deploys go to eu-west-1.","created":"2026-01-01T00:00:00Z","updated":"2026-01-01T00:00:00Z","last_seen":"2026-03-01T00:00:00Z"}' '{"id":"rule","kind":"rule","title":"Never touch PROD","body":"Never touch PROD by hand.","created":"2025-01-01T00:00:00Z","updated":"2025-01-01T00:00:00Z"}' '{"id":"cap","kind":"capability","title":"AWS access","body":"aws sts get-caller-identity works.","created":"2025-01-01T00:00:00Z","updated":"2025-01-01T00:00:00Z"}' '{"id":"proc","kind":"procedure","title":"Release","body":"Tag, then push the tag.","created":"2025-01-01T00:00:00Z","updated":"2025-01-01T00:00:00Z"}' '{"id":"note","kind":"note","title":"Lunch","body":"Lunch is at noon.","created":"2025-01-01T00:00:00Z","updated":"2025-01-01T00:00:00Z"}' | cairn import >/dev/null
# 89 days after dec was created: nothing yet
$ CAIRN_NOW=2026-03-31T00:00:00Z cairn gc --json
> {"now":"2026-03-31T00:00:00Z","stale":0,"retired":0}
# 91 days: the decision (never seen) goes stale; the fact was seen on 03-01
$ CAIRN_NOW=2026-04-02T00:00:00Z cairn gc
> 1 record now stale, 0 retired (as of 2026-04-02T00:00:00Z)
$ cairn list --status all --json | jq -r '.[] | "\(.id) \(.status)"' | sort
> cap accepted
> dec stale
> fact accepted
> note accepted
> proc accepted
> rule accepted
# stale leaves default recall (every command here gives the lifecycle its
# clock: recall ages the records itself when the last run is a day old)
$ CAIRN_NOW=2026-04-02T01:00:00Z cairn recall --json "Postgres orders" | jq -r '.hits[].record.id'
>
# an explicit read revives it and marks it seen (by the lifecycle's clock)
$ CAIRN_NOW=2026-04-02T01:00:00Z cairn read db:orders --json | jq -r .status
> accepted
$ cairn get dec --json | jq -r '.status, (.last_seen != null)'
> accepted
> true
# 203 days after the fact was last seen: stale and retired in one run;
# rules, capabilities, procedures (and notes) never decay; dec, read on
# 04-02, is 171 days unseen: stale again, not retired
$ CAIRN_NOW=2026-09-20T00:00:00Z cairn gc --json | jq -c '[.stale, .retired]'
> [2,1]
$ cairn list --status all --json | jq -r '.[] | "\(.id) \(.status)"' | sort
> cap accepted
> dec stale
> fact retired
> note accepted
> proc accepted
> rule accepted
# recall runs the lifecycle by itself, at most once a day: gc just ran
# "as of" 09-20, so a recall on 09-20 + 12 h does not run it again
$ printf '%s\n' '{"id":"dec2","kind":"decision","title":"Queue choice","body":"We use SQS for the queue.","created":"2026-06-01T00:00:00Z","updated":"2026-06-01T00:00:00Z"}' | cairn import >/dev/null
$ CAIRN_NOW=2026-09-20T12:00:00Z cairn recall --json "release tag" | jq -r '.hits[].record.id'
> proc
$ cairn get dec2 --json | jq -r .status
> accepted
# a day later it does, before searching: dec2 is stale and not returned
$ CAIRN_NOW=2026-09-21T12:00:00Z cairn recall --json "SQS queue" | jq -r '.hits[].record.id'
>
$ CAIRN_NOW=2026-09-21T12:00:00Z cairn get dec2 --json | jq -r .status
> stale
# supersede: OLD leaves default recall, the links are set both ways
$ cairn write --kind fact --key cache:ttl --title "Cache TTL" "The cache TTL is ten minutes for orders." --json | jq -r .id > old.id
$ cairn write --kind fact --key cache:ttl2 --title "Cache TTL raised" "The cache TTL is thirty minutes for orders." --json | jq -r .id > new.id
$ cairn supersede --suggest "$(cat new.id)" --json | jq -r '.suggestions[] | "\(.record.id == "'"$(cat old.id)"'") \(.same_key_family) \(.similarity > 0.5)"'
> true true true
$ cairn supersede "$(cat old.id)" "$(cat new.id)"
~ ^r[0-9a-f]+ superseded by r[0-9a-f]+$
$ cairn get "$(cat old.id)" --json | jq -r '.status, .superseded_by == "'"$(cat new.id)"'"'
> superseded
> true
$ cairn get "$(cat new.id)" --json | jq -r '.supersedes == "'"$(cat old.id)"'"'
> true
$ cairn recall --json "cache TTL orders" | jq -r '.hits[].record.id' | grep -c "$(cat old.id)"
> 0
? 1
$ cairn recall --json --status superseded "cache TTL orders" | jq -r '.hits[0].record.id == "'"$(cat old.id)"'"'
> true
# after the link, the old one is no longer suggested
$ cairn supersede --suggest "$(cat new.id)" --json | jq -c .suggestions
> []
# errors
$ cairn supersede "$(cat new.id)" "$(cat new.id)"
? 1
e~ cannot supersede itself
$ cairn supersede "$(cat new.id)" "$(cat old.id)"
? 1
e~ is superseded: only a live record can replace another
$ cairn supersede nope1234 "$(cat new.id)"
? 1
$ cairn supersede onlyone
? 2
$ cairn gc extra
? 2
# a read revives a stale record to the status it had before: unverified
# stays unverified (it is not promoted to accepted by being read)
$ printf '%s\n' '{"id":"unv","kind":"fact","key":"env:node","status":"unverified","title":"Node version","body":"Node 20 is required.","created":"2026-01-01T00:00:00Z","updated":"2026-01-01T00:00:00Z"}' | cairn import >/dev/null
$ CAIRN_NOW=2026-05-01T00:00:00Z cairn gc --json | jq -r .now
> 2026-05-01T00:00:00Z
$ cairn get unv --json | jq -r .status
> stale
$ CAIRN_NOW=2026-05-01T01:00:00Z cairn read env:node --json | jq -r .status
> unverified

# EVIDENCE-OF: UNIQUE(scope, key): rewriting a key replaces the text, keeps the old revision
$ cairn init >/dev/null
$ cairn write --kind fact --key db:primary "orders live in MySQL" >/dev/null
$ cairn write --kind fact --key db:primary "orders live in PostgreSQL" >/dev/null
$ cairn list --status all --json | jq length
> 1
$ cairn read db:primary --json | jq -r '.body, .revision'
> orders live in PostgreSQL
> 2
$ cairn history db:primary --json | jq -r '.[] | "\(.revision) \(.body)"'
> 2 orders live in PostgreSQL
> 1 orders live in MySQL
# an identical rewrite makes no new revision
$ cairn write --kind fact --key db:primary "orders live in PostgreSQL" >/dev/null; cairn read db:primary --json | jq .revision
> 2
# revise keeps a revision too
$ id=$(cairn read db:primary --json | jq -r .id); cairn revise "$id" --body "orders live in PostgreSQL 15" >/dev/null; cairn history db:primary --json | jq length
> 3
# an agent cannot overwrite an accepted record: its text waits as a candidate
$ cairn write --origin agent --kind fact --key db:primary "orders live in SQLite" --json | jq -r .status
> candidate
$ cairn read db:primary --json | jq -r .body
> orders live in PostgreSQL 15
$ id=$(cairn candidates --json | jq -r '.[0].id'); cairn approve "$id" >/dev/null; cairn read db:primary --json | jq -r '.body, .revision'
> orders live in SQLite
> 4
$ cairn candidates --json | jq length
> 0
# history by id as well as by key (issue 33, item 4): a record without a
# key, and a keyed one named by its id, give the same revisions
$ [ "$(cairn history "$(cairn read db:primary --json | jq -r .id)" --json)" = "$(cairn history db:primary --json)" ] && cairn history db:primary --json | jq length
> 4
$ id=$(cairn write --kind fact "the cache is Redis 7" --json | jq -r .id); cairn revise "$id" --body "the cache is Valkey 8" >/dev/null; cairn history "$id" --json | jq -r '.[] | "\(.revision) \(.body)"'
> 2 the cache is Valkey 8
> 1 the cache is Redis 7
$ cairn history no:such:thing
? 1
e~ no record with key or id 'no:such:thing'

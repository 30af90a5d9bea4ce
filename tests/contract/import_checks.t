# EVIDENCE-OF: import passes the checks of write: the
# size limits, ids, dates, links to records that exist, and a key collision
# gets a clear error, not SQLite's.
$ cairn init >/dev/null
$ /usr/bin/python3 -c 'import json; print(json.dumps({"kind":"fact","key":"k"*1000000,"body":"x"}))' | cairn import
? 1
e~ import: key is too long: 1000000 bytes \(limit 512\)
$ /usr/bin/python3 -c 'import json; print(json.dumps({"kind":"fact","title":"t"*2000000,"body":"x"}))' | cairn import
? 1
e~ import: title is too large: 2000000 bytes
$ echo '{"id":"","kind":"fact","body":"empty id"}' | cairn import
? 1
e~ import: invalid record id ''
$ echo '{"id":"../../etc/passwd","kind":"fact","body":"path id"}' | cairn import
? 1
e~ import: invalid record id '../../etc/passwd'
$ echo '{"kind":"fact","created":"garbage","body":"bad date"}' | cairn import
? 1
e~ import: created 'garbage' is not an ISO-8601 date
$ echo '{"kind":"fact","updated":"2026-13-45","body":"bad date"}' | cairn import
? 1
e~ import: updated '2026-13-45' is not an ISO-8601 date
$ echo '{"kind":"fact","supersedes":"nosuch","body":"dangling"}' | cairn import
? 1
e~ record '.*' supersedes 'nosuch', which is neither in the store nor imported
$ echo '{"kind":"fact","revision":1e300,"body":"huge revision"}' | cairn import
? 1
e~ import: "revision" must be a whole number
$ cairn export | wc -l
> 0
# a link forward in the file is fine: it is checked once the file is in
$ printf '%s\n' '{"id":"a1","kind":"fact","supersedes":"b1","body":"new"}' '{"id":"b1","kind":"fact","status":"superseded","superseded_by":"a1","body":"old"}' | cairn import
> imported 2 records, skipped 0 existing
# a key another record holds: a clear error
$ cairn write --key db:main "first" >/dev/null; echo '{"id":"c1","kind":"fact","key":"db:main","body":"second"}' | cairn import
? 1
e~ import: key 'db:main' already belongs to record 'r[0-9a-f]+' in the workspace store

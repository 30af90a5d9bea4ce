# EVIDENCE-OF: rewriting a key without --kind keeps
# its kind and the fields not given
$ cairn init >/dev/null
$ cairn write --kind decision --key db:main --title "Main database" --proof "ADR 7" --confidence 0.8 --session s1 --tool Edit "Orders live in PostgreSQL." >/dev/null
$ cairn write --key db:main "Orders live in PostgreSQL 16."
~ ^r[0-9a-f]+ accepted \(decision\)$
$ cairn read db:main --json | jq -c "{kind, title, proof, confidence, session: .source.session, tool: .source.tool, revision, body}"
> {"kind":"decision","title":"Main database","proof":"ADR 7","confidence":0.8,"session":"s1","tool":"Edit","revision":2,"body":"Orders live in PostgreSQL 16."}
# a field that is given replaces
$ cairn write --key db:main --kind fact --title "" "Orders live in MySQL." >/dev/null; cairn read db:main --json | jq -c '{kind, title, proof}'
> {"kind":"fact","title":"","proof":"ADR 7"}
# EVIDENCE-OF: write refuses bad times, NaN confidence
# and links to records that do not exist; nothing is stored
$ cairn write --time bogus "a bogus time"
? 1
e~ time 'bogus' is not an ISO-8601 date
$ cairn write --time 2026-13-45 "an impossible date"
? 1
e~ time '2026-13-45' is not an ISO-8601 date
$ cairn write --time 2026-02-29 "not a leap year"
? 1
$ cairn write --kind event --time 2024-02-29T10:00:00.250Z "a leap day" >/dev/null && echo ok
> ok
$ cairn write --confidence nan "not a number"
? 2
e~ --confidence must be a number above 0, at most 1
# 0 means the default in the C API (include/cairn.h): not a value to set
$ cairn write --confidence 0 "no confidence at all"
? 2
e~ --confidence must be a number above 0, at most 1
$ cairn write --supersedes nosuch "links to nothing"
? 1
e~ supersedes 'nosuch': no such record
$ cairn list --status all | grep -c 'bogus\|impossible\|not a\|links to' || :
> 0
# revise --proof or --confidence alone is a change (it was silently dropped)
$ id=$(cairn write "body text" | cut -d' ' -f1); cairn revise --proof "checked it" $id >/dev/null; cairn revise --confidence 0.3 $id >/dev/null; cairn get $id --json | jq -c '{proof, confidence, revision}'
> {"proof":"checked it","confidence":0.3,"revision":3}
$ cairn write --key same:1 "same text" >/dev/null; cairn write --key same:1 "same text" >/dev/null; cairn read same:1 --json | jq .revision
> 1

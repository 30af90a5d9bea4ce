# EVIDENCE-OF: SPEC 4.1 -- file-backed records are read-only through revise/forget
$ cairn init >/dev/null
$ printf '%s\n' '{"id":"f1","kind":"adr","origin":"file","src_path":"docs/adr/0001-db.md","src_line":3,"title":"Use PostgreSQL","body":"We use PostgreSQL."}' | cairn import >/dev/null
$ cairn forget f1
? 1
e~ file-backed: edit docs/adr/0001-db.md:3
$ cairn revise f1 --body "changed"
? 1
e~ file-backed: edit docs/adr/0001-db.md:3
$ cairn get f1 --json | jq -r '.status, .body'
> accepted
> We use PostgreSQL.
$ cairn write --origin file "x"
? 2

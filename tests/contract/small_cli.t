# EVIDENCE-OF: smaller CLI defects
$ cairn init >/dev/null
# stats names the database file where it is: DIR/.cairn/cairn.db
$ cairn stats | head -1
~ ^store: +/.*/ws/\.cairn/cairn\.db \(0 workspace records\)$
# init inside a workspace says that it nests a store
$ mkdir -p sub && cd sub && cairn init
e~ ^cairn: note: .*/ws/sub is inside the workspace of .*/ws/\.cairn; the new store takes its place
~ ^initialized empty cairn store in .*/ws/sub/\.cairn$
$ cd sub && cairn init 2>&1 >/dev/null | wc -l
> 0
# approve by a prefix names the whole id
$ cairn write --origin agent "an agent's idea" | cut -c1-6 > "$T/p"; cairn approve "$(cat "$T/p")"
~ ^r[0-9a-f]{15} -> accepted$
$ cairn write --origin agent "another idea" | cut -c1-6 > "$T/p"; cairn reject --json "$(cat "$T/p")" | jq -r .id | grep -cE '^r[0-9a-f]{15}$'
> 1

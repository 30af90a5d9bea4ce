# EVIDENCE-OF: SPEC 3, 4.2 -- human writes are accepted, agent writes are candidates
$ cairn init >/dev/null
$ cairn write --kind fact --key deploy:blyck --title "deploy works" "deploy from this machine works" --json | jq -r '.status, .kind, .key, .origin'
> accepted
> fact
> deploy:blyck
> human
$ cairn write --origin agent --kind decision --status accepted --key adr:9 "use Rust everywhere" --json | jq -r '.status, .kind'
> candidate
> decision
$ cairn read deploy:blyck --json | jq -r .body
> deploy from this machine works
$ cairn read adr:9 --json | jq -r .status
> candidate
$ cairn read no:such:key
? 1
e~ no record with key 'no:such:key'
# unknown statuses and kinds are usage errors (exit 2), never coerced,
# and nothing is written
$ cairn write --status maybe "x"
? 2
e~ unknown status 'maybe'
$ cairn write --kind memo "x"
? 2
e~ unknown kind 'memo'
$ cairn list --status all --json | jq length
> 2
# get by id and by unique prefix
$ id=$(cairn read deploy:blyck --json | jq -r .id); cairn get "${id:0:6}" --json | jq -r .key
> deploy:blyck
$ cairn get zzzz
? 1
e~ no record 'zzzz'
# usage errors exit 2
# no text and an empty standard input
$ cairn write < /dev/null
? 1
e~ the body is empty
$ cairn get
? 2
e~ expected exactly one ID
$ cairn frobnicate
? 2
e~ 'frobnicate' is not a cairn command
$ cairn write --confidence 7 x
? 2
$ printf 'from stdin\n' | cairn write --kind note --json | jq -r .status
> accepted
$ cairn write "   "
? 1
e~ the body is empty

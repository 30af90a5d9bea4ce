# EVIDENCE-OF: errors a person or a program can act on (issue 33,
# item 12): under --json an error is one JSON object on stdout,
# {"error", "code"} (code: the exit status), and nothing on stderr; an
# unknown option is one message naming it; a word outside the spec's
# lists is a usage error (exit 2); a mistyped command gets the nearest one
$ cairn init >/dev/null
$ cairn get --json nosuchid
? 1
> {"error":"no record 'nosuchid'","code":1}
$ cairn get --json nosuchid 2>&1 >/dev/null | wc -c
> 0
$ cairn list --json --bogus
? 2
> {"error":"unknown option '--bogus'","code":2}
# --json before the command word, and an unknown command
$ cairn --json frobnicate
? 2
> {"error":"'frobnicate' is not a cairn command","code":2}
# an unknown option: one message, naming it, and the pointer to --help
$ cairn write --bogus text 2>&1
? 2
> cairn: unknown option '--bogus'
> see 'cairn write --help'
$ cairn write -z text 2>&1
? 2
> cairn: unknown option '-z'
> see 'cairn write --help'
$ cairn write text --kind 2>&1
? 2
> cairn: option '--kind' needs a value
> see 'cairn write --help'
# a kind, status or scope outside the spec's lists: usage, nothing written
$ cairn write --kind banana "a text"
? 2
e~ unknown kind 'banana' \(decision adr
$ cairn write --status maybe "a text"
? 2
e~ unknown status 'maybe'
$ cairn write --scope team "a text"
? 2
e~ unknown scope 'team'
$ cairn write --json --kind banana "a text" | jq -r .code
> 2
$ cairn list --status all --json | jq length
> 0
# did you mean
$ cairn recal "which database"
? 2
e~ 'recal' is not a cairn command; did you mean 'recall'\?
$ cairn wirte x
? 2
e~ did you mean 'write'\?
$ cairn zzzzzz
? 2
e~ ^cairn: 'zzzzzz' is not a cairn command$
# the exit statuses, drift's 3 included
$ cairn --help | grep -A1 '^exit status'
> exit status: 0 ok, 1 error, 2 usage, 3 drift (cairn check: a
> reference changed)

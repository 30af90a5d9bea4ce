# EVIDENCE-OF: SPEC 3 -- default listing returns accepted + unverified only
$ cairn init >/dev/null
$ cairn write --status accepted "a accepted" >/dev/null
$ cairn write --status unverified "b unverified" >/dev/null
$ cairn write --status stale "c stale" >/dev/null
$ cairn write --status false "d false" >/dev/null
$ cairn write --status historical "e historical" >/dev/null
$ cairn write --origin agent "f candidate" >/dev/null
$ cairn list --json | jq -r '.[].body' | sort
> a accepted
> b unverified
$ cairn list --status stale,false --json | jq -r '.[].body' | sort
> c stale
> d false
$ cairn list --status all --json | jq length
> 6
$ cairn list --status nonsense
? 1
e~ unknown status 'nonsense'
$ cairn candidates --json | jq -r '.[].body'
> f candidate
# approve / reject only act on candidates
$ id=$(cairn candidates --json | jq -r '.[0].id'); cairn reject "$id"; cairn list --status rejected --json | jq -r '.[].body'
~ -> rejected
~ f candidate
$ id=$(cairn list --json | jq -r '.[] | select(.body=="a accepted") | .id'); cairn approve "$id"
? 1
e~ is accepted, not candidate
# forget retires; the record leaves default listing but is kept
$ id=$(cairn list --json | jq -r '.[] | select(.body=="a accepted") | .id'); cairn forget "$id" >/dev/null; cairn list --json | jq -r '.[].body'
> b unverified
$ cairn list --status retired --json | jq -r '.[].body'
> a accepted
# reading a stale record by key revives it
$ cairn write --status stale --key k:stale "old but true" >/dev/null; cairn read k:stale --json | jq -r .status; cairn read k:stale --json | jq -r .status
> accepted
> accepted

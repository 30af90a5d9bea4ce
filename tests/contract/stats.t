$ cairn init >/dev/null && cairn write --kind fact "a" >/dev/null && cairn write --kind rule "b" >/dev/null && cairn write --origin agent "c" >/dev/null
$ cairn stats --json | jq -c '.kind, .status'
> {"fact":1,"note":1,"rule":1}
> {"accepted":2,"candidate":1}
$ cairn stats
~ ^store:
~ status +accepted=2 candidate=1

# EVIDENCE-OF: reads see workspace + global, never another workspace
$ mkdir -p A B && cd A && cairn init >/dev/null && cairn write --key pref:editor --scope global "use vim keybindings" >/dev/null && cairn write --key ws:a "only in A" >/dev/null
$ ls "$T/global"
> global.db
> global.db-lengths
> global.db-terms
$ cd B && cairn init >/dev/null && cairn read pref:editor --json | jq -r '.body, .scope'
> use vim keybindings
> global
$ cd B && cairn read ws:a
? 1
$ cd B && cairn list --json | jq -r '.[].body'
> use vim keybindings
$ cd A && cairn list --scope workspace --json | jq -r '.[].body'
> only in A

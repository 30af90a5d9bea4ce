# EVIDENCE-OF: issue 33 item 14: a rule whose title and body say the same is shown once at session
# start; a title that adds to its body is still shown above it
$ cairn init >/dev/null && printf '%s\n' '{"id":"r1","kind":"rule","title":"Never push main directly","body":"Never push main directly."}' '{"id":"r2","kind":"rule","title":"Never touch PROD","body":"Also, never touch PROD from a laptop."}' '{"id":"r3","kind":"rule","title":"Releases need two approvals","body":"Ask the release captain first."}' | cairn import >/dev/null
$ printf '{"hook_event_name":"SessionStart","cwd":"%s","source":"startup"}' "$PWD" | cairn hook | jq -r .hookSpecificOutput.additionalContext > ctx.txt; grep -ci 'never push main directly' ctx.txt
> 1
$ grep -ci 'never touch prod' ctx.txt
> 1
$ grep -c 'Also, never touch PROD from a laptop\.' ctx.txt
> 1
$ grep -c '^    Releases need two approvals$' ctx.txt
> 1
$ grep -c '^    Ask the release captain first\.$' ctx.txt
> 1

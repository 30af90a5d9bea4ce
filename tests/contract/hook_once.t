# EVIDENCE-OF: issue 33 item 14: a rule whose title and body say the same is shown once at session
# start; a title that adds to its body is still shown above it
$ cairn init >/dev/null && printf '%s\n' '{"id":"r1","kind":"rule","title":"Never push main directly","body":"Never push main directly."}' '{"id":"r2","kind":"rule","title":"Never touch PROD","body":"Also, never touch PROD."}' '{"id":"r3","kind":"rule","title":"Releases need two approvals","body":"Ask the release captain first."}' '{"id":"r4","kind":"rule","title":"Deploy","body":"Run scripts/deploy.sh to deploy on Fridays only."}' | cairn import >/dev/null
$ printf '{"hook_event_name":"SessionStart","cwd":"%s","source":"startup"}' "$PWD" | cairn hook | jq -r .hookSpecificOutput.additionalContext > ctx.txt; grep -ci 'never push main directly' ctx.txt
> 1
$ grep -ci 'never touch prod' ctx.txt
> 1
$ grep -c 'Also, never touch PROD\.' ctx.txt
> 1
$ grep -c '^    Releases need two approvals$' ctx.txt
> 1
$ grep -c '^    Ask the release captain first\.$' ctx.txt
> 1
# a short title that one word of a longer line repeats still names the record
$ grep -c '^    Deploy$' ctx.txt
> 1

# EVIDENCE-OF: hook --budget is bounded and checked,
# and a prompt over 64 KiB is recalled for by its first part
$ cairn init >/dev/null && printf '%s\n' '{"id":"pg","kind":"adr","title":"Use PostgreSQL for orders","body":"Orders are stored in PostgreSQL 15 on RDS."}' '{"id":"r1","kind":"rule","title":"Never touch PROD","body":"Never run scripts against the production machines by hand."}' '{"id":"c1","kind":"capability","title":"Deploying to staging works","body":"make deploy ENV=staging works from this machine."}' '{"id":"n1","kind":"note","title":"Coffee","body":"The coffee machine is on floor three."}' | cairn import >/dev/null
$ printf '{"hook_event_name":"UserPromptSubmit","cwd":"%s","prompt":"are the orders stored in PostgreSQL?"}' "$PWD" | cairn hook --local --budget 0 | wc -c
> 0
$ printf '{"hook_event_name":"UserPromptSubmit","cwd":"%s","prompt":"are the orders stored in PostgreSQL?"}' "$PWD" | cairn hook --local --budget -5 | wc -c
> 0
$ printf '{"hook_event_name":"UserPromptSubmit","cwd":"%s","prompt":"are the orders stored in PostgreSQL?"}' "$PWD" | cairn hook --local --budget 20001 | wc -c
> 0
$ grep -c 'budget must be a number from 1 to 20000' .cairn/hook.log
> 3
$ printf '{"hook_event_name":"UserPromptSubmit","cwd":"%s","prompt":"are the orders stored in PostgreSQL?"}' "$PWD" | cairn hook --local --budget 20000 | jq -r .hookSpecificOutput.additionalContext | grep -q PostgreSQL && echo found
> found
# 70 KiB: the question first, then a pasted log
$ /usr/bin/python3 -c 'import json, os; print(json.dumps({"hook_event_name":"UserPromptSubmit","cwd":os.getcwd(),"prompt":"are the orders stored in PostgreSQL? " + "zzqx " * 14000}))' | cairn hook --local | jq -r .hookSpecificOutput.additionalContext | grep -q PostgreSQL && echo found
> found

# EVIDENCE-OF: issue 33 item 15: memory_forget takes a reason; it is kept with the pending forget
# (one line, bounded, secret-filtered) and shown by cairn candidates, text and JSON
$ cairn init >/dev/null && printf '%s\n' '{"id":"r7f8a1b2c3d4e5f6","kind":"rule","title":"Deploys go through Jenkins","body":"Deploys go through Jenkins."}' '{"id":"n1","kind":"note","title":"Orders dashboard","body":"The orders dashboard reads PostgreSQL replicas."}' '{"id":"n2","kind":"note","title":"Cache","body":"The cache is warm at 9am."}' | cairn import >/dev/null
$ printf '#!/bin/bash\ns=$1; shift; i=1; { printf "%%s\\n" %s %s; while [ $# -ge 2 ]; do i=$((i+1)); printf "{\\"jsonrpc\\":\\"2.0\\",\\"id\\":%%d,\\"method\\":\\"tools/call\\",\\"params\\":{\\"name\\":\\"%%s\\",\\"arguments\\":%%s}}\\n" $i "$1" "$2"; shift 2; done; } | cairn mcp --no-hook-server --session "$s" | jq -c "select(.id > 1) | .result"\n' "'{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}'" "'{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}'" > ../call && chmod +x ../call
# CLAIM: forget-reason
# the reason is accepted (not "unknown argument") and the forget is pending
$ ../call s1 memory_forget '{"id":"r7f8a1b2c3d4e5f6","reason":"We moved to GitHub Actions in May;\nJenkins was shut down."}' | jq -c '[.isError, .structuredContent.pending]'
> [false,true]
# cairn candidates shows it, on one line
$ cairn candidates | grep -c '^ *reason: We moved to GitHub Actions in May; Jenkins was shut down\.$'
> 1
$ cairn candidates --json | jq -r '.[] | select(.pending == "forget") | .proposed.reason'
> We moved to GitHub Actions in May; Jenkins was shut down.
# no reason: an empty one, and no reason line
$ ../call s2 memory_forget '{"id":"n1"}' | jq -r .structuredContent.pending && cairn candidates --json | jq -c '[.[] | select(.id == "n1") | .proposed.reason]'
> true
> [""]
# a reason is bounded (500 bytes kept) and never holds a secret
$ r=$(printf 'x%.0s' $(seq 1 900)); ../call s3 memory_forget "{\"id\":\"n2\",\"reason\":\"$r\"}" >/dev/null && cairn candidates --json | jq -r '.[] | select(.id == "n2") | .proposed.reason | length'
> 500
$ cairn reject n2 >/dev/null && ../call s4 memory_forget '{"id":"n2","reason":"the key is ghp_R7xK2mQ9vL4tN8wP1sZ6yB3cD5fG0hJ2kA4e"}' | jq -r '.isError, .content[0].text'
~ ^true$
~ secret
$ cairn candidates --json | jq -c '[.[] | select(.id == "n2")]'
> []
# a reason must be a string
$ ../call s5 memory_forget '{"id":"n2","reason":7}' | jq -r '.isError, .content[0].text'
~ ^true$
~ reason

# EVIDENCE-OF: every command has --help; exit codes 0 ok, 1 error, 2 usage
$ cairn --help
~ ^usage: cairn
~ exit status: 0 ok, 1 error, 2 usage
$ for c in init write read get list candidates approve reject revise forget history stats export import seed ingest session capture reflect hook recall receipt calibrate reindex model eval gc supersede mcp setup serve; do cairn $c --help | head -1 | grep -q "^usage: cairn $c" || echo "missing: $c"; done
>
$ cairn
? 2
$ cairn --version
~ ^cairn [0-9]+\.[0-9]+\.[0-9]+$
$ cairn help write
~ ^usage: cairn write
# the --help pages are alike: none ends with a summary in another
# language (31 of 35 had none; check, remote, sync and verify did)
$ for c in $(cairn --help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {exit}'); do cairn $c --help | tail -3 | grep -qP '[\x{4e00}-\x{9fff}]' && echo "summary in Chinese: $c"; done; echo checked
> checked
$ cairn --help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {n++} on && /^$/ {exit} END {print (n > 30)}'
> 1

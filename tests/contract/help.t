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

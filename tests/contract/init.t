# EVIDENCE-OF: init creates .cairn/cairn.db (0600), found by walking up
$ cairn list
? 1
e~ not in a cairn workspace
$ cairn init
~ ^initialized empty cairn store in .*/ws/\.cairn$
$ stat -c %a .cairn/cairn.db .cairn
> 600
> 700
$ cairn init
~ ^reinitialized existing cairn store
$ cairn write --kind fact "the sky is blue" >/dev/null && ls -A .cairn | sort
> .gitignore
> cairn.db
> cairn.db-lengths
> cairn.db-terms
$ cat .cairn/.gitignore
~ ^cairn\.db$
~ ^cairn\.db-\*$
~ ^receipts\.pending$
~ ^hook\.log$
# discovery from a subdirectory, like git
$ mkdir -p a/b/c && cd a/b/c && cairn list --json | jq length
> 1
# -C DIR runs as if started in DIR
$ cd / && cairn -C "$T/ws/a" list --json | jq length
> 1
# CAIRN_DIR names the store directly
$ cd / && CAIRN_DIR="$T/ws/.cairn" cairn list --json | jq length
> 1
$ cd / && CAIRN_DIR="$T/nowhere" cairn list
? 1
e~ no cairn store at '.*nowhere': run 'cairn init' first

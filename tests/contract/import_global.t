# EVIDENCE-OF: an export holding scope=global records
# imports on a machine whose global store does not exist yet, with the
# workspace records of the same file; the import is all or nothing, also
# beyond 500 lines, and says so.
$ cairn init >/dev/null
$ printf '%s\n' '{"id":"r00000000000000a1","kind":"fact","body":"workspace one"}' '{"id":"r00000000000000a2","kind":"fact","scope":"global","body":"global one"}' '{"id":"r00000000000000a3","kind":"fact","body":"workspace two"}' > "$T/mixed.jsonl"; test ! -e "$T/global/global.db" && cairn import "$T/mixed.jsonl"
> imported 3 records, skipped 0 existing
$ cairn list --scope workspace | wc -l; cairn list --scope global | wc -l
> 2
> 1
$ cairn import "$T/mixed.jsonl"
> imported 0 records, skipped 3 existing
# a failing global line leaves no global store half made: the next import attaches it again
$ rm -rf "$T/global"; mkdir "$T/w2" && cd "$T/w2" && cairn init >/dev/null && printf '%s\n' '{"kind":"fact","scope":"global","body":"g"}' '{"kind":"fact","status":"bogus","body":"x"}' | cairn import
? 1
e~ ^cairn: line 2: import: unknown status 'bogus' .*\(imported 0 records: the file is imported whole or not at all\)$
$ cd "$T/w2" && printf '%s\n' '{"kind":"fact","scope":"global","body":"g again"}' | cairn import && cairn list --scope global | wc -l
> imported 1 records, skipped 0 existing
> 1
# beyond 500 lines: a bad line 700 imports nothing, not the first 500
$ /usr/bin/python3 -c 'import sys; w = sys.stdout.write; [w("{\"kind\":\"fact\",\"body\":\"line %d\"}\n" % i) for i in range(699)]; w("{\"kind\":\"bogus\",\"body\":\"x\"}\n")' > "$T/700.jsonl"; cairn import "$T/700.jsonl"
? 1
e~ ^cairn: line 700: import: unknown kind 'bogus' .*\(imported 0 records
$ cairn export | grep -c 'line [0-9]' || :
> 0
$ cairn import --help | grep -c 'all or nothing'
> 1

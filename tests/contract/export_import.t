# EVIDENCE-OF: export -> import -> export is byte-identical
$ cairn init >/dev/null
$ cairn write --kind fact --key a:1 --proof "checked" --confidence 0.7 "first" >/dev/null; cairn write --kind fact --key a:1 "second" >/dev/null; cairn write --origin agent --session s1 --tool Bash "cand" >/dev/null; cairn write --kind event --time 2024-01-02T03:04:05Z "事件：部署成功" >/dev/null
$ cairn export > "$T/one.jsonl"; wc -l < "$T/one.jsonl"
> 3
$ mkdir "$T/other" && cd "$T/other" && cairn init >/dev/null && cairn import "$T/one.jsonl"
> imported 3 records, skipped 0 existing
$ cd "$T/other" && cairn export > "$T/two.jsonl" && cmp "$T/one.jsonl" "$T/two.jsonl" && echo same
> same
$ cd "$T/other" && cairn import "$T/one.jsonl"
> imported 0 records, skipped 3 existing
$ cd "$T/other" && cairn history a:1 --json | jq length
> 2
# a bad line is reported with its number; nothing of its batch is kept
$ printf '%s\n' '{"kind":"fact","body":"ok line"}' '{"kind":"fact","status":"bogus","body":"x"}' > bad.jsonl; cairn import bad.jsonl
? 1
e~ line 2: import: unknown status 'bogus'
$ printf '%s\n' '{"kind":"fact","body":"ok"}' 'not json' > bad2.jsonl; cairn import bad2.jsonl
? 1
e~ line 2: import: .*at byte [0-9]+

# EVIDENCE-OF: a NUL byte is refused clearly wherever
# text comes in (write and revise from stdin, ingest's "\u0000"), as import
# and MCP do, instead of cutting the text there silently
$ cairn init >/dev/null
$ printf 'a\nb\0hidden' | cairn write --key nul:1
? 1
e~ standard input holds a NUL byte at byte 3
$ cairn read nul:1
? 1
$ cairn write --key nul:2 "whole" >/dev/null; printf 'new\0hidden' | cairn revise --body - $(cairn read nul:2 --json | jq -r .id)
? 1
e~ standard input holds a NUL byte at byte 3
$ cairn read nul:2 --json | jq -r '.body, .revision'
> whole
> 1
$ printf '%s\n' '{"time":"2025-05-26T09:01:00Z","speaker":"alice","text":"seen\u0000hidden","session":"s-1"}' '{"type":"user","sessionId":"s-1","uuid":"u1","timestamp":"2025-05-26T07:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"shown\u0000hidden"}]}}' > t.jsonl; cairn ingest t.jsonl
? 1
e~ t\.jsonl:1: .*NUL byte
e~ t\.jsonl:2: .*NUL byte
$ cairn list --status all | wc -l
> 1
$ echo '{"kind":"fact","body":"a\u0000b"}' | cairn import
? 1
e~ NUL byte

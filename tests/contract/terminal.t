# EVIDENCE-OF: terminal output makes stored control
# characters visible (ESC, OSC, BEL, CR, DEL, C1: as \u001b and the like;
# newline and tab pass); the stored text stays as written and --json stays
# valid JSON with the same values
# ../ctl: how many C0 (but newline and tab), DEL and C1 controls stdin holds
$ printf '%s\n' '#!/bin/sh' 'exec /usr/bin/python3 -c "import re,sys; print(len(re.findall(\"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f]\", sys.stdin.buffer.read().decode(\"utf-8\", \"replace\"))))"' > ../ctl && chmod +x ../ctl && printf 'a\033b\tc\n\302\233' | ../ctl
> 2
$ cairn init >/dev/null && printf 'deploy body \033[2J cleared\rrewritten \302\23331m c1 \177 del\ttab\nline two' > ../body && cairn write --key k1 --title "$(printf 'evil deploy \033]0;pwned\007 title')" < ../body >/dev/null && cairn read k1 --json | jq -r .id > ../id
$ cairn get "$(cat ../id)" | ../ctl
> 0
$ cairn get "$(cat ../id)"
~ ^deploy body \\u001b\[2J cleared\\u000drewritten \\u009b31m c1 \\u007f del	tab$
~ ^line two$
~ ^title: +evil deploy \\u001b\]0;pwned\\u0007 title$
$ cairn read k1 | ../ctl
> 0
$ cairn list | ../ctl
> 0
$ cairn list
~ evil deploy \\u001b\]0;pwned\\u0007 title$
$ cairn recall "deploy body cleared" | ../ctl
> 0
$ cairn recall "deploy body cleared"
~ evil deploy \\u001b\]0;pwned\\u0007 title
# ... stored as written, and --json gives it back exactly, as valid JSON
$ cairn get "$(cat ../id)" --json | jq -j .body | cmp - ../body && echo same
> same
$ cairn recall --json "deploy body cleared" | jq -j '.hits[0].record.body' | cmp - ../body && echo same
> same
$ cairn list --json | jq -r '.[0].title' | od -An -c | tr -s ' ' | grep -o '033 ] 0'
> 033 ] 0
$ cairn export | jq -j 'select(.key == "k1") | .body' | cmp - ../body && echo same
> same
# candidates and a session's events too
$ cairn write --origin agent --title "$(printf 'proposal \033[31mred\033[0m')" "maybe" >/dev/null && cairn candidates | ../ctl
> 0
$ printf '{"time":"2026-03-02T10:00:00Z","speaker":"alice","text":"we said \\u001b[2J then \\u0007","session":"s1"}\n' > t.jsonl && cairn ingest t.jsonl >/dev/null && cairn session s1 | ../ctl
> 0
$ cairn session s1
~ we said \\u001b\[2J then \\u0007
# error messages too
$ cairn read "$(printf 'no\033[2Jkey')"
? 1
e~ no\\u001b\[2Jkey

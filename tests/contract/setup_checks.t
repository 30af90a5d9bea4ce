# EVIDENCE-OF: setup claude-code: --cairn is a cairn
# command, a missing one is noted, a symlinked settings file stays a link,
# big integers stay as written, and --json is honoured
$ cairn setup claude-code --cairn --foo
? 2
$ cairn setup claude-code --cairn -
? 2
$ cairn setup claude-code --cairn ../x
? 2
$ ls -A | wc -l
> 0
# not on PATH: a note (the run still does its work)
$ env PATH=/nonexistent "$T/bin/cairn" setup claude-code --dry-run > /dev/null
e~ ^cairn: note: 'cairn' is not on PATH, so Claude Code will not find it
$ cairn setup claude-code --dry-run --cairn /nonexistent/cairn > /dev/null
e~ ^cairn: note: '/nonexistent/cairn' is not an executable file
$ cairn setup claude-code --dry-run 2>&1 >/dev/null | wc -l
> 0
# a symlinked settings.json, with a big integer in it
$ mkdir -p dot .claude && printf '%s\n' '{"x-id":12345678901234567890,"small":1.5}' > dot/settings.json && ln -s ../dot/settings.json .claude/settings.json && cairn setup claude-code > /dev/null
$ test -L .claude/settings.json && echo link; grep -c '"x-id": 12345678901234567890' dot/settings.json; jq -r '.hooks | keys | length' dot/settings.json
> link
> 1
> 4
# --json, as an option of setup or of cairn
$ cairn setup claude-code --json | jq -c '[.dry_run, [.files[].changed], .warning]'
> [false,[false,false,false],null]
$ rm -rf .claude/skills && cairn --json setup claude-code --dry-run | jq -c '[.dry_run, [.files[] | select(.changed) | .file]]'
> [true,[".claude/skills/cairn-memory/SKILL.md"]]

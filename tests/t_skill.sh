#!/bin/sh
# tests/t_skill.sh CAIRN -- the Skill says only what the code does
# (seed 004 criterion 6: a prompt that describes behaviour the code does not
# have is worse than none).
#
# `cairn setup claude-code` installs .claude/skills/cairn-memory/SKILL.md.
# Every sentence of it (the front matter's description and the body; not
# headings) must be a row of the table below, with either the names of the
# contract-test checks that show the behaviour it claims -- each name must
# appear as a "# CLAIM: name" line in tests/contract/*.t, above the checks
# that demonstrate it -- or "advice" for a sentence that tells the agent
# what to do and claims no behaviour of cairn. A sentence added to the Skill
# without a row, a row whose sentence is gone, or a name no test carries
# fails this test. The checker is itself checked (negative controls): an
# invented sentence, a dropped row and an unknown name must each fail it.
#
# Prints "N passed, N failed" last; exit 1 on any failure.
set -u
bin=$(readlink -f "$1")
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/cairn-skill-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "t_skill: $*" >&2; }

# sentence <TAB> evidence (comma-separated CLAIM names, or advice)
cat > "$tmp/table" <<'EOF'
This project's long-term memory, kept by cairn across sessions: decisions and ADRs, rules, capabilities, procedures and facts.	hook-session-start,precedents-decisions-only,recall-every-kind
Use it before proposing a design or choosing a tool, before saying that something cannot be done from here (deploy, connect, publish), and when you need to know what was decided before and why.	advice
The MCP server `cairn` gives you six tools over this project's records.	mcp-server-configured,mcp-six-tools
Call `find_precedents` with the topic first.	advice
It searches only decisions and ADRs.	precedents-decisions-only
Follow what it finds, or say plainly that you are revisiting an earlier decision and why.	advice
An empty result means that no recorded decision matches.	empty-means-no-match
Before you say that you cannot deploy, connect to a service or publish from here, call `memory_recall` with the action as the query and `kinds` set to `["capability", "procedure"]`.	recall-kinds-capability
A capability record says what has worked from this machine, with its proof.	capability-proof
If one matches, try that way before giving up.	advice
`memory_recall`: ranked search over every kind, when you do not know a record's key.	recall-every-kind
`find_precedents`: the same search, restricted to decisions and ADRs.	precedents-decisions-only
`memory_read`: one record in full, by its id (from a search or from the context cairn adds) or by its key.	read-by-id-or-key,hook-prompt-block,hook-read-hint
`memory_write`: propose a lasting fact, rule, decision, procedure or capability.	write-is-candidate
`memory_candidates`: the proposals waiting for a human.	candidates-list
`memory_forget`: ask to retire a record that is no longer true, by its full id or its key, with a `reason` that the human who decides sees.	forget-asks,forget-full-id,forget-reason
An empty result from `memory_recall` means that the memory holds no answer.	empty-means-no-match
`memory_write` stores a candidate, not an accepted record.	write-is-candidate
`memory_recall` does not return candidates by default.	recall-skips-candidates
A human approves a candidate with `cairn approve ID` or rejects it with `cairn reject ID`.	human-approves
No tool can approve a record.	no-approve-tool
A record marked with drift refers to a repository file that changed since the record was written (`drift` in `memory_recall` and `memory_read`, a ⚠ line in the context cairn adds).	drift-marked
Read that file before relying on the record.	advice
A forget of a record you did not write waits for a human too: `cairn approve ID` retires the record, `cairn reject ID` keeps it.	forget-asks,forget-human-confirms
At the start of a session, cairn adds the standing rules and capabilities and the number of candidates waiting for approval.	hook-session-start
With a prompt, it may add past records under the header "Past project records from cairn's memory", each with an id for `memory_read`.	hook-prompt-block,hook-read-hint
Those records are not part of the current conversation.	hook-prompt-block
At the end of each turn and of the session, cairn reads the transcript and proposes what it learned (commands that succeeded, rules the user stated) as candidates.	hook-capture
EOF

# The CLAIM names the contract tests carry.
grep -ho '^# CLAIM: [a-z0-9-]*' "$here"/contract/*.t | sed 's/^# CLAIM: //' |
	sort -u > "$tmp/claims"

# check SKILL TABLE CLAIMS: prints one line per problem, exit 1 if any.
check() {
	/usr/bin/python3 - "$1" "$2" "$3" <<'PY'
import re, sys
skill, table, claims = (open(p, encoding="utf-8").read() for p in sys.argv[1:4])
claims = set(claims.split())
m = re.match(r"---\n(.*?)\n---\n(.*)\Z", skill, re.S)
if not m:
    print("no front matter"); sys.exit(1)
front, body = m.groups()
text = []
for line in front.splitlines():
    if line.startswith("description: "):
        text.append(line[len("description: "):])
for line in body.splitlines():
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    text.append(line[2:] if line.startswith("- ") else line)
sentences = []
for t in text:
    # a sentence ends at . ! ? followed by a space, or at the line's end
    sentences += [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z`\"])", t) if s.strip()]
rows = {}
for line in table.splitlines():
    s, _, ev = line.partition("\t")
    rows[s] = [e for e in ev.split(",") if e]
problems = []
for s in sentences:
    if s not in rows:
        problems.append("sentence without a row in the table: " + s)
    elif not rows[s]:
        problems.append("row without evidence: " + s)
    else:
        for e in rows[s]:
            if e != "advice" and e not in claims:
                problems.append("no '# CLAIM: %s' in tests/contract/*.t (for: %s)" % (e, s))
for s in rows:
    if s not in sentences:
        problems.append("row whose sentence the Skill no longer has: " + s)
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
PY
}

mkdir "$tmp/p"
if "$bin" setup claude-code --dir "$tmp/p" >/dev/null 2>"$tmp/err"; then ok; else
	bad "cairn setup failed: $(cat "$tmp/err")"; fi
skill="$tmp/p/.claude/skills/cairn-memory/SKILL.md"
if [ -s "$skill" ]; then ok; else bad "no SKILL.md installed"; fi

# the real Skill passes
if check "$skill" "$tmp/table" "$tmp/claims" > "$tmp/out"; then ok; else
	bad "the Skill has claims no test binds:"; sed 's/^/    /' "$tmp/out" >&2; fi
# every evidence name is carried by a test (also checked above, per row)
n=$(cut -f2 "$tmp/table" | tr ',' '\n' | grep -vx advice | sort -u |
	comm -23 - "$tmp/claims" | wc -l)
if [ "$n" -eq 0 ]; then ok; else bad "$n evidence names carried by no test"; fi

# negative controls: the checker must catch each of these
cp "$skill" "$tmp/extra.md" && echo "cairn deploys your code when you ask." >> "$tmp/extra.md"
if check "$tmp/extra.md" "$tmp/table" "$tmp/claims" >/dev/null; then
	bad "an invented sentence passed the checker"; else ok; fi
sed '/^No tool can approve a record\./d' "$tmp/table" > "$tmp/table2"
if check "$skill" "$tmp/table2" "$tmp/claims" >/dev/null; then
	bad "a sentence without its row passed the checker"; else ok; fi
grep -vx 'no-approve-tool' "$tmp/claims" > "$tmp/claims2"
if check "$skill" "$tmp/table" "$tmp/claims2" >/dev/null; then
	bad "a claim no test carries passed the checker"; else ok; fi
sed 's/^It searches only decisions and ADRs\./It searches every record./' "$skill" > "$tmp/changed.md"
if check "$tmp/changed.md" "$tmp/table" "$tmp/claims" >/dev/null; then
	bad "a changed sentence passed the checker"; else ok; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/bin/bash
# tests/t_drift.sh CAIRN -- drift detection measured on a scripted
# repository history: 16 ADRs (seeded) and 16 procedures (written, each
# naming its own script), then 30 commits that change, delete or rename
# some of the files and leave the others alone. Every record whose file
# moved on must be flagged by `cairn check`, none of the others (the
# false-flag count must be 0), and recall must mark exactly the flagged
# ones. Deterministic: the history comes from a fixed seed.
#
# Prints "drift: flagged F of C moved, W of U unchanged wrongly flagged"
# and ends with "N passed, N failed".
set -u
cairn=$(readlink -f "$1")
tmp=$(mktemp -d /tmp/cairn-drift-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "t_drift: $*" >&2; failed=$((failed + 1)); }
export HOME=$tmp/home CAIRN_GLOBAL=$tmp/global
unset CAIRN_DIR
mkdir -p "$HOME" "$tmp/ws"
cd "$tmp/ws" || exit 1
git init -q . && git config user.email t@example.invalid && git config user.name t
mkdir -p docs/adr scripts
N=16
for i in $(seq -w 1 $N); do
	printf '# ADR %s: choice %s\n\nStatus: accepted\n\n## Decision\n\nWe use component%s for part %s.\n' \
		"$i" "$i" "$i" "$i" > "docs/adr/00$i-choice.md"
	printf '#!/bin/sh\necho step %s\n' "$i" > "scripts/step$i.sh"
done
git add -A && git commit -qm init
"$cairn" init > /dev/null
"$cairn" seed > /dev/null || bad "seed failed"
for i in $(seq -w 1 $N); do
	"$cairn" write --kind procedure --key "proc:$i" --title "Procedure $i" \
		"Run scripts/step$i.sh to do step $i." > /dev/null || bad "write $i failed"
done

# the history: a fixed linear congruential sequence picks file and act
seed=7
rnd() { seed=$(((seed * 1103515245 + 12345) % 2147483648)); r=$((seed / 65536)); }
: > "$tmp/moved"
for c in $(seq 30); do
	rnd; i=$(printf '%02d' $((r % N + 1)))
	rnd
	case $((r % 6)) in
	0 | 1 | 2) f=scripts/step$i.sh ;;
	*) f=docs/adr/00$i-choice.md ;;
	esac
	[ -e "$f" ] || continue
	rnd
	case $((r % 8)) in
	0) git rm -q "$f" ;;
	1) git mv "$f" "${f%.*}-moved.${f##*.}" ;;
	*) echo "change $c" >> "$f" && git add "$f" ;;
	esac
	git commit -qm "commit $c" && echo "$f" >> "$tmp/moved"
done
# unrelated commits touch no record's file
echo readme > README.txt && git add README.txt && git commit -qm readme

"$cairn" check --json > "$tmp/check.json"
rc=$?
[ $rc -eq 3 ] && ok || bad "check exited $rc, expected 3 (some drifted)"
jq -r '.refs[].path' "$tmp/check.json" | sort -u > "$tmp/flagged"
sort -u "$tmp/moved" > "$tmp/moved.u"
ls docs/adr scripts > /dev/null
all=$(for i in $(seq -w 1 $N); do echo "docs/adr/00$i-choice.md"; echo "scripts/step$i.sh"; done | sort)
moved=$(wc -l < "$tmp/moved.u")
flagged_ok=$(comm -12 "$tmp/moved.u" "$tmp/flagged" | wc -l)
unchanged=$(echo "$all" | comm -23 - "$tmp/moved.u" | wc -l)
wrong=$(echo "$all" | comm -23 - "$tmp/moved.u" | comm -12 - "$tmp/flagged" | wc -l)
echo "drift: flagged $flagged_ok of $moved moved, $wrong of $unchanged unchanged wrongly flagged" >&2
[ "$moved" -ge 10 ] && ok || bad "the history moved only $moved files"
[ "$flagged_ok" -eq "$moved" ] && ok || bad "flagged $flagged_ok of $moved moved files: missing $(comm -23 "$tmp/moved.u" "$tmp/flagged" | head -3)"
[ "$wrong" -eq 0 ] && ok || bad "$wrong unchanged files flagged: $(echo "$all" | comm -23 - "$tmp/moved.u" | comm -12 - "$tmp/flagged" | head -3)"
# renames are told apart from deletions where git shows the same content
jq -e '[.refs[] | select(.state == "renamed") | .renamed_to | endswith("-moved.sh") or endswith("-moved.md")] | all' "$tmp/check.json" > /dev/null && ok || bad "a rename names the wrong path"

# recall marks exactly the procedures whose script moved
for i in $(seq -w 1 $N); do
	d=$("$cairn" recall "Procedure $i: run step $i" --json -k 10 | jq -r '[.hits[] | select(.record.key == "proc:'$i'")] | if length == 0 then "absent" else (.[0].drift != null) end')
	if grep -qx "scripts/step$i.sh" "$tmp/moved.u"; then want=true; else want=false; fi
	[ "$d" = "$want" ] || bad "recall marked proc:$i as drifted=$d, expected $want"
done
ok

# the same measurement as a command: cairn eval --drift (a history made by
# cairn itself, through the library), default and larger
for args in "" "--files 100 --commits 300 --seed 7"; do
	# shellcheck disable=SC2086
	"$cairn" eval --drift --json $args > "$tmp/eval.json" 2> "$tmp/eval.err" || bad "eval --drift $args failed: $(head -2 "$tmp/eval.err")"
	echo "eval --drift $args: $(cat "$tmp/eval.json")" >&2
	jq -e '.flagged_share == 1 and .false_flags == 0 and .moved >= 10 and .renamed >= 1 and .renames_told == .renamed' "$tmp/eval.json" > /dev/null &&
		ok || bad "eval --drift $args: $(cat "$tmp/eval.json")"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

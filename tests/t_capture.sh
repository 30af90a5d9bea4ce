#!/bin/bash
# tests/t_capture.sh CAIRN -- auto-capture and reflection on the corpus in
# tests/data/capture: precision and recall against the expected candidates,
# no duplicate keys, no secret in any output or in the store, and a second
# run over the same transcripts adds nothing.
#
# Each NAME.jsonl has NAME.expected: one expected candidate a line, either
# "KIND KEY" (the exact key) or "KIND ~ TEXT" (a candidate of that kind whose
# title contains TEXT, case-insensitive: rules, decisions and facts, whose
# keys are slugs). A candidate matches at most one expected line. The union
# of `cairn capture --dry-run --json` and `cairn reflect --dry-run --json`
# is measured. Prints per-file misses, then P and R, and fails below the
# gates (set from the measurement when the corpus was written; see
# docs/CAPTURE.md).
set -u
bin=$(readlink -f "$1")
here=$(cd "$(dirname "$0")" && pwd)
data="$here/data/capture"
P_GATE=${CAPTURE_P_GATE:-0.95}
R_GATE=${CAPTURE_R_GATE:-0.90}
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "FAIL: $*" >&2; failed=$((failed + 1)); }

command -v jq >/dev/null || { echo "skipped: jq not installed"; echo "0 passed, 0 failed, 1 skipped"; exit 0; }
tmp=$(mktemp -d /tmp/cairn-capture-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/nows" "$tmp/ws"
# secrets planted in the corpus: none may appear in any output or store file
secrets='AKIAQ3EXAMPLE7KZT2WX|wJalrXUtnFEMI|S3cretPassw0rd|ghp_R7xK2mQ9vL4tN8wP1sZ6yB3cD5fG0hJ2kA4e|r3disPassw0rdQ7|M0ngoPass99xyz|Xq7vLm2pR9sT|pypi-AgEIcHlwaS5vcmc|sk_live_51HxQk2|ghp_Zq8Wn3Xr5Tb7Yc9Vd1Fe2Gh4Jk6Lm0Pn8Qs3a|Qm9ndXNTaWduYXR1cmVGb3JUZXN0aW5nMTIz|xK9mP2qR7vT4wY8zB3nC6dF1|Sup3rS3cretPw0rd|R3d!sPa55word'

tp=0 fp=0 fn=0 nfiles=0
for f in "$data"/*.jsonl; do
	name=$(basename "$f" .jsonl)
	exp="$data/$name.expected"
	[ -f "$exp" ] || { bad "$name: no $name.expected"; continue; }
	nfiles=$((nfiles + 1))
	# dry runs outside any workspace (no store needed)
	(cd "$tmp/nows" && env -u CAIRN_DIR HOME="$tmp" "$bin" capture --dry-run --json "$f") > "$tmp/c.json" 2> "$tmp/c.err" || bad "$name: capture exited $?: $(head -3 "$tmp/c.err")"
	(cd "$tmp/nows" && env -u CAIRN_DIR HOME="$tmp" "$bin" reflect --dry-run --json "$f") > "$tmp/r.json" 2> "$tmp/r.err" || bad "$name: reflect exited $?: $(head -3 "$tmp/r.err")"
	if grep -Eq "$secrets" "$tmp/c.json" "$tmp/r.json" "$tmp/c.err" "$tmp/r.err"; then
		bad "$name: a planted secret is in the output"
	else
		ok
	fi
	for j in c r; do
		d=$(jq -r '.candidates[].key' "$tmp/$j.json" | sort | uniq -d)
		if [ -n "$d" ]; then bad "$name: duplicate keys: $d"; else ok; fi
		a=$(jq -r '[.candidates[] | select(.action != "new")] | length' "$tmp/$j.json")
		[ "$a" = 0 ] && ok || bad "$name: $a candidates not 'new' in a dry run without a store"
	done
	# the union, by key: "kind<TAB>key<TAB>title"
	jq -r '.candidates[] | [.kind, .key, .title] | @tsv' "$tmp/c.json" "$tmp/r.json" |
		sort -u -t $'\t' -k2,2 > "$tmp/got.tsv"
	res=$(/usr/bin/python3 - "$exp" "$tmp/got.tsv" "$name" <<'EOF'
import sys
exp_path, got_path, name = sys.argv[1:4]
exp = []
for l in open(exp_path, encoding="utf-8"):
    l = l.rstrip("\n")
    if not l.strip() or l.startswith("#"):
        continue
    kind, rest = l.split(" ", 1)
    if rest.startswith("~ "):
        exp.append((kind, None, rest[2:].lower()))
    else:
        exp.append((kind, rest, None))
got = [tuple(l.rstrip("\n").split("\t", 2)) for l in open(got_path, encoding="utf-8") if l.strip()]
used = [False] * len(got)
tp = fn = 0
for kind, key, text in exp:
    hit = -1
    for i, (gk, gkey, gt) in enumerate(got):
        if used[i] or gk != kind:
            continue
        if (key is not None and gkey == key) or (text is not None and text in gt.lower()):
            hit = i
            break
    if hit >= 0:
        used[hit] = True
        tp += 1
    else:
        fn += 1
        print("  %s: missed   %s %s" % (name, kind, key if key else "~ " + text), file=sys.stderr)
fp = 0
for i, g in enumerate(got):
    if not used[i]:
        fp += 1
        print("  %s: spurious %s %s  (%s)" % (name, g[0], g[1], g[2]), file=sys.stderr)
print(tp, fp, fn)
EOF
)
	set -- $res
	tp=$((tp + $1)) fp=$((fp + $2)) fn=$((fn + $3))
done
[ "$nfiles" -ge 15 ] && ok || bad "only $nfiles transcripts in the corpus"

read -r P R <<<"$(/usr/bin/python3 -c "
tp, fp, fn = $tp, $fp, $fn
print('%.3f %.3f' % (tp / (tp + fp) if tp + fp else 0.0, tp / (tp + fn) if tp + fn else 0.0))")"
echo "capture+reflect on $nfiles transcripts: $tp matched, $fp spurious, $fn missed: precision $P, recall $R (gates P >= $P_GATE, R >= $R_GATE)"
/usr/bin/python3 -c "import sys; sys.exit(0 if $P >= $P_GATE else 1)" && ok || bad "precision $P below $P_GATE"
/usr/bin/python3 -c "import sys; sys.exit(0 if $R >= $R_GATE else 1)" && ok || bad "recall $R below $R_GATE"

# ---- into a store: candidates only, idempotent, no secret on disk
cd "$tmp/ws" || exit 1
export CAIRN_GLOBAL="$tmp/global" HOME="$tmp"
unset CAIRN_DIR
"$bin" init >/dev/null 2>&1 || bad "cairn init failed"
"$bin" capture --json "$data"/*.jsonl > "$tmp/w1.json" 2> "$tmp/w1.err" || bad "capture into the store exited $?: $(head -3 "$tmp/w1.err")"
"$bin" reflect --json "$data"/*.jsonl > "$tmp/w2.json" 2> "$tmp/w2.err" || bad "reflect into the store exited $?: $(head -3 "$tmp/w2.err")"
added=$(jq '.added' "$tmp/w1.json")
[ "${added:-0}" -gt 0 ] && ok || bad "capture wrote nothing"
st=$("$bin" list --status all --json 2>/dev/null | jq -r '[.[] | select(.origin == "capture" or .origin == "reflection") | .status] | unique | join(",")')
[ "$st" = "candidate" ] && ok || bad "captured records have statuses '$st', expected only candidate"
"$bin" capture --json "$data"/*.jsonl > "$tmp/w3.json" 2>/dev/null
"$bin" reflect --json "$data"/*.jsonl > "$tmp/w4.json" 2>/dev/null
again=$(jq -s '[.[].added, .[].updated] | add' "$tmp/w3.json" "$tmp/w4.json")
[ "$again" = 0 ] && ok || bad "a second run over the same transcripts added or updated $again"
if grep -rEqa "$secrets" .cairn; then bad "a planted secret reached the store files"; else ok; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

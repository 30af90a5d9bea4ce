#!/bin/bash
# EVIDENCE-OF: SPEC 9 reliability -- no lost or half-written record
# after kill -9 at any point. One workspace; in turn: `cairn import
# --replace` (CRASH_RECORDS records), `cairn write`, `cairn seed` (files
# changed before each run), `cairn capture` (a generated command log) and
# `cairn reindex --provider static` (two tiny vector files in turn, so each
# run re-embeds everything) are killed with SIGKILL at a random moment
# within their measured run time. After every kill: `cairn stats
# --integrity` says ok. At the end: no half-written record of any family,
# every write that reported success (exit 0) is there, and a final run of
# each operation completes.
#
#   CRASH_KILLS   kills in all (default 100; make soak: 1000)
#   CRASH_SECONDS time bound (default 60; the loop stops early, saying so)
#   CRASH_RECORDS records in the import file (default 1000)
set -u
cairn=$(readlink -f "$1")
kills=${CRASH_KILLS:-100}
limit=${CRASH_SECONDS:-60}
nrec=${CRASH_RECORDS:-1000}
tmp=$(mktemp -d /tmp/cairn-crash-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
ws="$tmp/ws"
mkdir -p "$ws/docs/adr"
export CAIRN_DIR="$ws/.cairn" CAIRN_GLOBAL="$tmp/global" HOME="$tmp"
cd "$ws" || exit 1
passed=0
failed=0
fail() { echo "t_crash: $*" >&2; failed=$((failed + 1)); }
now_ms() { date +%s%3N; }

"$cairn" init >/dev/null || { fail "init failed"; echo "$passed passed, $failed failed"; exit 1; }
# import record n: body repeats its number so a torn write is detectable
awk -v N="$nrec" 'BEGIN { for (n = 1; n <= N; n++) {
	b = "record " n ":"; for (k = 0; k < 12; k++) b = b " part" n "-" k;
	printf "{\"id\":\"c%05d\",\"kind\":\"fact\",\"key\":\"k:%d\",\"title\":\"title %d\",\"body\":\"%s end %d\"}\n", n, n, n, b, n } }' > "$tmp/in.jsonl"
# seed files: 60 ADRs, one record each; version v rewritten before each run
seed_files() {
	local v=$1 i
	for ((i = 1; i <= 60; i++)); do
		printf -- '---\nstatus: accepted\n---\n# Decision %d\n\nDecision body %d version %d: we use tool%d for the job%d. end %d\n' \
			"$i" "$i" "$v" "$i" "$i" "$i" > "$ws/docs/adr/$(printf '%04d' "$i")-decision-$i.md"
	done
}
seed_files 0
# a command log for capture: deploys, builds, connections (generic form)
awk 'BEGIN { for (n = 1; n <= 300; n++) {
	printf "{\"time\":\"2025-05-26T07:%02d:%02dZ\",\"session\":\"s%d\",\"cmd\":\"make deploy-env%d\",\"exit\":0,\"output\":\"deployed env%d\"}\n", (n / 60) % 60, n % 60, n % 7, n, n
	printf "{\"time\":\"2025-05-26T08:%02d:%02dZ\",\"session\":\"s%d\",\"cmd\":\"psql -h db%d.internal -c select\",\"exit\":0,\"output\":\"1 row\"}\n", (n / 60) % 60, n % 60, n % 7, n } }' > "$tmp/cmds.jsonl"
# two tiny static vector files (docs/EMBEDDINGS.md format), 8 dimensions
/usr/bin/python3 -c "
import struct, sys
for name, rot in (('a', 0), ('b', 3)):
    W = ['record', 'part', 'title', 'decision', 'body', 'version', 'tool', 'deploy', 'end', 'job']
    vec = lambda i: [1.0 if (j == (i + rot) % 8) else 0.1 for j in range(8)]
    b = b'CAIRNVEC' + struct.pack('<IIQII', 1, 8, len(W), 0, 0)
    b += b''.join(bytes([len(w)]) + w.encode() for w in W)
    b += b''.join(struct.pack('<8e', *vec(i)) for i in range(len(W)))
    open(sys.argv[1] + '/' + name + '.cairnvec', 'wb').write(b)
" "$tmp" || fail "cannot make the vector files"

have_capture=0
"$cairn" capture --help >/dev/null 2>&1 && have_capture=1
have_reindex=0
"$cairn" reindex --help >/dev/null 2>&1 && have_reindex=1
ops="import write seed"
[ $have_capture = 1 ] && ops="$ops capture"
[ $have_reindex = 1 ] && ops="$ops reindex"
read -r -a opv <<< "$ops"

wn=0      # write counter
sv=0      # seed version
rv=0      # reindex model flip
run_op() { # run_op OP: start it in the background; sets pid
	case $1 in
	import) "$cairn" import --replace "$tmp/in.jsonl" >/dev/null 2>"$tmp/err" & ;;
	write)
		wn=$((wn + 1))
		echo "w:$wn" > "$tmp/cur_key"
		"$cairn" write --kind fact --key "w:$wn" --title "write $wn" \
			"acknowledged write $wn about the staging deploy end $wn" >/dev/null 2>"$tmp/err" & ;;
	seed)
		sv=$((sv + 1)); seed_files $sv
		"$cairn" seed --no-git >/dev/null 2>"$tmp/err" & ;;
	capture) "$cairn" capture "$tmp/cmds.jsonl" >/dev/null 2>"$tmp/err" & ;;
	reindex)
		rv=$((1 - rv))
		"$cairn" reindex --provider static --model "$tmp/$([ $rv = 1 ] && echo a || echo b).cairnvec" \
			--yes >/dev/null 2>"$tmp/err" & ;;
	esac
	pid=$!
}

# measure each operation's run time once, unkilled (window for the kills)
declare -A dur
for op in "${opv[@]}"; do
	t0=$(now_ms)
	run_op "$op"
	wait "$pid"; rc=$?
	dur[$op]=$(( $(now_ms) - t0 ))
	[ "$op" = write ] && [ $rc = 0 ] && cat "$tmp/cur_key" >> "$tmp/acked"
	[ $rc = 0 ] || fail "$op (unkilled) failed: $(head -c 300 "$tmp/err")"
done

# the kill loop
done_kills=0
integrity_bad=0
declare -A per
start=$SECONDS
for ((i = 0; i < kills; i++)); do
	if [ $((SECONDS - start)) -ge "$limit" ]; then
		echo "t_crash: time bound ${limit}s reached after $done_kills kills" >&2
		break
	fi
	op=${opv[$((i % ${#opv[@]}))]}
	win=$(( dur[$op] * 12 / 10 + 20 ))
	ms=$(( (RANDOM * 32768 + RANDOM) % win ))
	run_op "$op"
	sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
	kill -9 "$pid" 2>/dev/null
	{ wait "$pid"; } 2>/dev/null; rc=$?
	# exit 0 before the kill: the write reported success and must stay
	[ "$op" = write ] && [ $rc = 0 ] && cat "$tmp/cur_key" >> "$tmp/acked"
	if [ $rc != 0 ] && [ $rc != 137 ]; then
		fail "kill $i ($op): exit $rc: $(head -c 300 "$tmp/err")"
	fi
	done_kills=$((done_kills + 1))
	per[$op]=$(( ${per[$op]:-0} + 1 ))
	out=$("$cairn" stats --integrity 2>&1)
	if [ "$out" != ok ]; then
		integrity_bad=$((integrity_bad + 1))
		fail "integrity after kill $i ($op, ${ms} ms): $out"
		break
	fi
done
[ $integrity_bad = 0 ] && passed=$((passed + 1))
# the time bound may stop the loop early (a loaded machine): that is
# reported above; every operation must still have been killed at least once
if [ "$done_kills" -ge "${#opv[@]}" ]; then
	passed=$((passed + 1))
else
	fail "only $done_kills kills in ${limit}s"
fi

# no half-written record, in any family
"$cairn" list --status all --json > "$tmp/all.json" 2>"$tmp/err" || fail "list failed: $(cat "$tmp/err")"
bad=$(jq -r '.[] | select(.id | test("^c[0-9]{5}$")) | (.id[1:] | tonumber) as $n |
	select(.title != "title \($n)" or .key != "k:\($n)" or
	       (.body | startswith("record \($n): part\($n)-0") | not) or
	       (.body | endswith(" end \($n)") | not)) | .id' "$tmp/all.json" | head -5)
[ -z "$bad" ] && passed=$((passed + 1)) || fail "torn import records: $bad"
bad=$(jq -r '.[] | select(.key != null and (.key | startswith("w:"))) | (.key[2:] | tonumber) as $n |
	select(.title != "write \($n)" or .body != "acknowledged write \($n) about the staging deploy end \($n)") | .key' \
	"$tmp/all.json" | head -5)
[ -z "$bad" ] && passed=$((passed + 1)) || fail "torn written records: $bad"
bad=$(jq -r '.[] | select(.origin == "file" and .status != "retired") |
	((.source.path // "") | capture("decision-(?<n>[0-9]+)").n) as $n |
	select((.body | test("Decision body \($n) version [0-9]+: we use tool\($n) for the job\($n)\\. end \($n)")) | not) | .id' \
	"$tmp/all.json" | head -5)
[ -z "$bad" ] && passed=$((passed + 1)) || fail "torn seeded records: $bad"
bad=$(jq -r '.[] | select(.body == null or .body == "" or .kind == null) | .id' "$tmp/all.json" | head -5)
[ -z "$bad" ] && passed=$((passed + 1)) || fail "records without kind or body: $bad"

# every acknowledged write is there
if [ -s "$tmp/acked" ]; then
	missing=$(comm -23 <(sort -u "$tmp/acked") <(jq -r '.[].key // empty' "$tmp/all.json" | sort -u) | head -5)
	[ -z "$missing" ] && passed=$((passed + 1)) || fail "acknowledged writes lost: $missing"
else
	fail "no write was acknowledged"
fi

# a final, unkilled run of each operation completes, and all is there
for op in "${opv[@]}"; do
	run_op "$op"
	wait "$pid" || fail "final $op failed: $(head -c 300 "$tmp/err")"
	[ "$op" = write ] && cat "$tmp/cur_key" >> "$tmp/acked"
done
n=$("$cairn" list --status all --json | jq '[.[] | select(.id | test("^c[0-9]{5}$"))] | length')
seeded=$("$cairn" list --status all --json | jq '[.[] | select(.origin == "file" and .status != "retired")] | length')
if [ "$n" = "$nrec" ] && [ "$seeded" = 60 ]; then
	passed=$((passed + 1))
else
	fail "after the final runs: $n of $nrec imported, $seeded of 60 seeded"
fi
out=$("$cairn" stats --integrity 2>&1)
[ "$out" = ok ] && passed=$((passed + 1)) || fail "final integrity: $out"

summary=""
for op in "${opv[@]}"; do summary="$summary $op=${per[$op]:-0}"; done
echo "crash ($done_kills kills:$summary; $(sort -u "$tmp/acked" | wc -l) acknowledged writes): $passed passed, $failed failed"
[ $failed -eq 0 ]

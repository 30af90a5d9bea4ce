#!/bin/bash
# EVIDENCE-OF: `cairn recall --rerank=FILE` with a tiny
# generated cross-encoder (tests/tools/make_model.py --pool rank): the hits
# carry their cross-encoder score and rank, --explain and the JSON report
# the time, the receipt names the model, the set of records is the same as
# without the rerank, and a configured model (CAIRN_RERANK_MODEL) reranks
# every recall until --no-rerank. The order itself is checked against
# scores the test measures in tests/unit_rerank.c.
#
#   tests/t_rerank.sh CAIRN
#
# Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
root=$(pwd)
cairn=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tmp=$(mktemp -d /tmp/cairn-rerank-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "t_rerank: $*" >&2; failed=$((failed + 1)); }
check() { # DESCRIPTION JQ-TEST JSON
	if printf '%s\n' "$3" | jq -e "$2" > /dev/null 2>&1; then ok; else bad "$1: $(printf '%.300s' "$3")"; fi
}

export CAIRN_GLOBAL=$tmp/global XDG_DATA_HOME=$tmp/xdg HOME=$tmp/home
export CAIRN_DIR=$tmp/ws/.cairn CAIRN_CACHE_DIR=$tmp/cache
unset CAIRN_RERANK_MODEL
mkdir -p "$HOME" "$tmp/ws"
model=$tmp/rr.gguf
if ! /usr/bin/python3 tests/tools/make_model.py "$model" --pool rank --types f32 --seed 7 > "$tmp/mk.err" 2>&1; then
	echo "skipped: make_model.py failed: $(tail -1 "$tmp/mk.err")"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi
(
	cd "$tmp/ws" || exit 1
	"$cairn" init > /dev/null &&
	"$cairn" write -t "quick fox" "the quick brown fox jumps over the lazy dog" > /dev/null &&
	"$cairn" write -t "fox and dog" "a fox and a dog in the index" > /dev/null &&
	"$cairn" write -t "the lazy dog" "the dog is lazy and the fox is quick" > /dev/null &&
	"$cairn" write -t "brown fox notes" "brown fox in the store" > /dev/null &&
	"$cairn" write -t "fox search" "search for the fox in the database" > /dev/null
) || bad "set-up failed"
cd "$tmp/ws" || exit 1
q="quick brown fox"
off=$("$cairn" recall --no-floor -k 5 --json "$q")
on=$("$cairn" recall --no-floor -k 5 --json --rerank="$model" "$q")
check "not reranked by default" '.reranked == false and (.hits | all(has("rerank_rank") | not))' "$off"
check "reranked with --rerank=FILE" '.reranked == true and .rerank.model == "rr.gguf" and .rerank.scored == (.hits | length) and .rerank.ms > 0' "$on"
check "every hit has a cross-encoder rank" '[.hits[].rerank_rank] | sort == [range(1; length + 1)]' "$on"
check "rerank_from is the order before" '[.hits[].rerank_from] | sort == [range(1; length + 1)]' "$on"
same=$(jq -n --argjson a "$off" --argjson b "$on" '([$a.hits[].record.id] | sort) == ([$b.hits[].record.id] | sort)')
if [ "$same" = true ]; then ok; else bad "the rerank changed the set of records"; fi
from=$(jq -n --argjson a "$off" --argjson b "$on" '[$b.hits[] | .rerank_from as $f | .record.id == $a.hits[$f - 1].record.id] | all')
if [ "$from" = true ]; then ok; else bad "rerank_from does not name the hit's place without the rerank"; fi
ex=$("$cairn" recall --no-floor -k 5 --explain --rerank="$model" "$q")
if printf '%s\n' "$ex" | grep -q "^   | rerank: cross-encoder -\?[0-9.]*, rank [0-9] of 5" &&
	printf '%s\n' "$ex" | grep -q "^rerank: rr.gguf scored the top 5 in [0-9.]* ms"; then
	ok
else
	bad "--explain lacks the rerank lines: $(printf '%s' "$ex" | grep -i rerank | head -3)"
fi
rid=$(printf '%s\n' "$on" | jq -r .receipt)
rc=$("$cairn" receipt "$rid" --json)
check "receipt names the model and per-hit figures" '.provider == "bm25+rerank" and (.revision | test("rerank:rr.gguf")) and (.hits | all(has("rerank") and has("rerank_rank")))' "$rc"
env_on=$(CAIRN_RERANK_MODEL=$model "$cairn" recall --no-floor --json "$q")
check "CAIRN_RERANK_MODEL turns it on" '.reranked == true' "$env_on"
env_off=$(CAIRN_RERANK_MODEL=$model "$cairn" recall --no-floor --no-rerank --json "$q")
check "--no-rerank turns it off" '.reranked == false' "$env_off"
emb=$tmp/emb.gguf
/usr/bin/python3 "$root/tests/tools/make_model.py" "$emb" --pool mean --types f32 > /dev/null 2>&1
err=$("$cairn" recall --rerank="$emb" "$q" 2>&1 >/dev/null)
if [ $? -ne 0 ] && printf '%s' "$err" | grep -q "not a reranker"; then ok; else bad "an embedding model was taken as a reranker: $err"; fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

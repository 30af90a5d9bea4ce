#!/bin/sh
# tests/t_layers.sh [CAIRN] -- the layers are one-way and the store is the
# one gate.
#
# Four rules of docs/ARCHITECTURE.md, checked in the source:
#   1. the faces (src/cli/*.c, src/serve/mcp.c, src/serve/hook.c, src/serve/hook_server.c)
#      and the hook's injection (src/recall/hook_inject.c) run no SQL of their
#      own: no sqlite3_ call, no db->sql, no store.h -- what they need is a
#      call of include/cairn.h;
#   2. only the store (src/store.c and its store_*.c parts) writes the records and revisions tables (INSERT,
#      UPDATE, DELETE): every other module writes through it, so the secret
#      filter, the limits, the revision and the gate stay in one place;
#   3. dependencies point down the layer order (tests/layers.sh, `make
#      layers`): no include of a higher layer's header and, with the
#      objects beside CAIRN (build/san/*.o under make check), no use of a
#      higher layer's function; each file in its layer's folder;
#   4. the map is the code's: docs/ARCHITECTURE.md names every file of
#      src/ and states store.h's schema version.
# Each rule is checked on the tree and, as its negative control, on a copy
# with one offending line (or object, or file) added: the check must then
# fail, and name what offends.
#
# Prints "N passed, N failed[, N skipped]" last; exit 1 on any failure.
# CAIRN (the cairn binary, as for the other t_*.sh) only locates the
# objects of rule 3; without them its call part is skipped.
set -u
src=$(cd "$(dirname "$0")/../src" && pwd)
tmp=$(mktemp -d /tmp/cairn-layers-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
skipped=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "t_layers: $*" >&2; }

# faces DIR: the lines of the faces that touch SQLite
faces() {
	find "$1" \( -name 'cli*.c' -o -name mcp.c -o -name hook.c \
		-o -name hook_inject.c -o -name hook_server.c \) -print0 |
		sort -z | xargs -0 grep -nHE 'sqlite3_|->sql\b|#include "store\.h"' 2>/dev/null
}
# in DIR NAME: the path of NAME under DIR (files are in layer folders)
in_tree() { find "$1" -name "$2" -print -quit; }
# writers DIR: the lines outside store.c that write records or revisions.
# The store's tables are named bare or qualified with a schema of the
# local connection (main, global, or %s filled in); sync.c's cairn.records
# and cairn.revisions are the PostgreSQL server's (schema "cairn", which
# no SQLite connection of cairn attaches), so sync.c is checked like every
# other module: what it pulls goes through store_pull_record.
writers() {
	find "$1" -name '*.c' | sort | while read -r f; do
		case $(basename "$f") in store.c | store_*.c) continue ;; esac
		grep -nHE '(INSERT( OR [A-Z]+)? INTO|UPDATE( OR [A-Z]+)?|DELETE FROM) (main\.|global\.|temp\.|%s\.)?(records|revisions)\b' "$f"
	done
}

out=$(faces "$src")
if [ -z "$out" ]; then ok; else bad "faces run SQL of their own:"; echo "$out" | sed 's/^/    /' >&2; fi
out=$(writers "$src")
if [ -z "$out" ]; then ok; else bad "records written outside store.c:"; echo "$out" | sed 's/^/    /' >&2; fi

# negative controls: one offending line each must be found
mkdir -p "$tmp/a" "$tmp/b" "$tmp/c" "$tmp/d"
for d in a b c d; do cp -R "$src/." "$tmp/$d/"; done
echo '	sqlite3_exec(db->sql, "PRAGMA x", NULL, NULL, NULL);' >> "$(in_tree "$tmp/a" mcp.c)"
# (and a face that includes the store's header, the gate's internals)
mkdir -p "$tmp/g" && cp -R "$src/." "$tmp/g/"
sed -i '0,/^#include "json.h"/s//#include "store.h"\n&/' "$(in_tree "$tmp/g" hook.c)"
if [ -n "$(faces "$tmp/g")" ]; then ok; else bad "negative control: store.h included in hook.c not found"; fi
echo '	"UPDATE %s.records SET status = ?2 WHERE id = ?1",' >> "$(in_tree "$tmp/b" lifecycle.c)"
# sync.c is no exception: a local write of a pulled record or revision
# there (what local_put and pull_revisions did before store_pull.c) is found
echo '	"INSERT INTO %s.records (id, kind) VALUES (?1, ?2)",' >> "$(in_tree "$tmp/c" sync.c)"
echo '	"INSERT OR IGNORE INTO main.revisions (record_id) VALUES (?1)",' >> "$(in_tree "$tmp/d" sync.c)"
if [ -n "$(faces "$tmp/a")" ]; then ok; else bad "negative control: SQL in mcp.c not found"; fi
if [ -n "$(writers "$tmp/b")" ]; then ok; else bad "negative control: a records UPDATE in lifecycle.c not found"; fi
if [ -n "$(writers "$tmp/c")" ]; then ok; else bad "negative control: a records INSERT in sync.c not found"; fi
if [ -n "$(writers "$tmp/d")" ]; then ok; else bad "negative control: a revisions INSERT in sync.c not found"; fi
# and the server's tables are not the store's: sync.c as it is passes
if [ -z "$(writers "$src" | grep '/sync\.c:')" ] &&
   grep -qE 'INSERT INTO cairn\.(records|revisions)' "$(in_tree "$src" sync.c)"; then ok
else bad "sync.c: its server statements (cairn.records) should pass, its local writes none"; fi

# rule 3 on the tree: includes always, calls when the objects are there
here=$(cd "$(dirname "$0")" && pwd)
objdir=""
if [ -n "${1:-}" ] && [ -f "$(dirname "$1")/store.o" ]; then
	objdir=$(cd "$(dirname "$1")" && pwd)
fi
if out=$("$here/layers.sh" "$src" $objdir 2>&1); then ok; else
	bad "the layer order is broken:"; echo "$out" | sed 's/^/    /' >&2; fi
if [ -z "$objdir" ]; then
	skipped=$((skipped + 1))
	echo "  skipped: layer calls: no objects beside '${1:-}' (make check builds build/san)"
fi

# negative controls of rule 3, each on a copy of src/:
#   c: the store includes the lifecycle's header (the cycle that was)
#   d: a file the layer table does not name
#   e: with objects, the store layer's forget.o calling cairn_recall
rm -rf "$tmp/c" "$tmp/d"
mkdir -p "$tmp/c" "$tmp/d"
cp -R "$src/." "$tmp/c" && cp -R "$src/." "$tmp/d"
sed -i '0,/^#include "store.h"/s//#include "lifecycle.h"\n&/' "$(find "$tmp/c" -name store.c)"
out=$("$here/layers.sh" "$tmp/c" 2>&1)
if [ $? -ne 0 ] && echo "$out" | grep -q 'store\.c (store) includes lifecycle\.h (lifecycle)'; then ok; else
	bad "negative control: store.c including lifecycle.h passed: $out"; fi
echo 'int nowhere_x(void) { return 0; }' > "$tmp/d/nowhere.c"
out=$("$here/layers.sh" "$tmp/d" 2>&1)
if [ $? -ne 0 ] && echo "$out" | grep -q 'nowhere\.c: not in the layer table'; then ok; else
	bad "negative control: a file in no layer passed: $out"; fi
#   f: a file outside its layer's folder (the text layer's fts.c in src/)
rm -rf "$tmp/f" && mkdir -p "$tmp/f" && cp -R "$src/." "$tmp/f"
mv "$(in_tree "$tmp/f" fts.c)" "$tmp/f/fts.c"
out=$("$here/layers.sh" "$tmp/f" 2>&1)
if [ $? -ne 0 ] && echo "$out" | grep -q 'fts\.c (text) is in src/\., not in src/text'; then ok; else
	bad "negative control: a file outside its layer's folder passed: $out"; fi
if [ -n "$objdir" ] && command -v cc >/dev/null 2>&1; then
	mkdir -p "$tmp/e"
	for o in "$objdir"/*.o; do ln -s "$o" "$tmp/e/"; done
	rm -f "$tmp/e/forget.o"
	printf '%s\n' '#include "cairn.h"' \
		'int forget_x(cairn_db *db) { cairn_result *r; return cairn_recall(db, "q", 0, &r); }' \
		> "$tmp/forget.c"
	if cc -Iinclude -I"$src/../include" -c "$tmp/forget.c" -o "$tmp/e/forget.o" 2> "$tmp/cc.err"; then
		out=$("$here/layers.sh" "$src" "$tmp/e" 2>&1)
		if [ $? -ne 0 ] && echo "$out" | grep -q 'forget\.o (store) uses cairn_recall of recall\.c (recall)'; then ok; else
			bad "negative control: forget.o calling cairn_recall passed: $out"; fi
	else
		bad "negative control: cannot compile the offending forget.o: $(cat "$tmp/cc.err")"
	fi
elif [ -n "$objdir" ]; then
	skipped=$((skipped + 1))
	echo "  skipped: negative control of layer calls: no cc"
fi

# the map is the code's: docs/ARCHITECTURE.md names every file of src/ and
# states the schema version store.h has
# map_gaps SRC DOC: what DOC misses (one line each); nothing when true
map_gaps() {
	find "$1" \( -name '*.c' -o -name '*.h' \) ! -path '*/console/*' | sort |
		while read -r f; do
			grep -qF "$(basename "$f")" "$2" || echo "does not name $(basename "$f")"
		done
	v=$(sed -n 's/^#define STORE_SCHEMA_VERSION \([0-9]*\).*/\1/p' "$1/store.h")
	tr '\n' ' ' < "$2" | grep -qE "STORE_SCHEMA_VERSION\`, +now $v\)" ||
		echo "does not state schema version $v"
}
doc=$(cd "$(dirname "$0")/../docs" && pwd)/ARCHITECTURE.md
out=$(map_gaps "$src" "$doc")
if [ -z "$out" ]; then ok; else bad "docs/ARCHITECTURE.md is out of date:"; echo "$out" | sed 's/^/    /' >&2; fi
# negative controls: a map without sync.c's name, one with another version
grep -v 'sync\.c' "$doc" > "$tmp/arch1.md"
if map_gaps "$src" "$tmp/arch1.md" | grep -q 'does not name sync\.c'; then ok; else
	bad "negative control: a map that never names sync.c passed"; fi
sed 's/\(STORE_SCHEMA_VERSION`, *\)$/\1/; s/^now [0-9]*)/now 999)/' "$doc" > "$tmp/arch2.md"
if map_gaps "$src" "$tmp/arch2.md" | grep -q 'does not state schema version'; then ok; else
	bad "negative control: a map with another schema version passed"; fi

echo "layers: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]

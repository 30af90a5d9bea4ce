#!/bin/bash
# tests/layers.sh [SRC_DIR [OBJ_DIR]] -- `make layers`: dependencies point
# one way, down the layer order of docs/ARCHITECTURE.md ("Layers").
#
# Every .c and .h file under SRC_DIR (default: src/, subfolders included)
# belongs to one layer of LAYERS, by its name without the extension, in
# the table below: the one list to update when a file is added, renamed or
# moved (a file the table does not name fails the check, and so does a
# table entry that names no file). Two rules:
#   1. includes: a file includes only headers of its own layer or a lower
#      one (include/cairn.h, the public API, from any layer);
#   2. calls (with OBJ_DIR, where make built src/*.c into *.o, e.g.
#      build/san): an object uses only functions and variables defined in
#      its own layer or a lower one (nm: its undefined symbols against the
#      other objects' definitions), whether it declares them through a
#      header of that layer or through cairn.h.
# A function pointer the store keeps for an upper layer (db->vec_free,
# db->rerank_free, util_owned_free) is not a call: the upper layer hands
# it over.
#
# Prints each violation and "layers: N files, N includes, N calls checked,
# N violations"; exits 1 on any violation, 2 on a usage error.
set -u
LC_ALL=C
export LC_ALL

# The layers, lowest first. Within a layer files may use each other.
LAYERS="base text model store embed lifecycle recall ingest eval face cli"
# the folder under src/ each layer's files live in ("." : src/ itself), so
# that the layout shows the layers
FOLDERS="base:. text:text model:model store:. embed:embed lifecycle:. recall:recall ingest:ingest eval:eval face:serve cli:cli"

# file (name without .c/.h; a trailing * matches a prefix) -> layer
layer_table() {
	cat <<'EOF'
cairn          api
internal       base
util           base
json           base
secret         base
secret_int     base
secret_scan    base
secret_token   base
words          base
tokenize       text
tokenize_*     text
fts            text
glossary       text
bilingual      text
termstat       text
gguf           model
quant          model
vocab          model
wordpiece      model
unigram        model
bert           model
bert_*         model
model          model
store          store
store_list     store
store_words    store
store_pull     store
store_open     store
store_schema   store
drift          store
export         store
forget         store
embed          embed
embed_gguf     embed
embed_http     embed
embed_static   embed
vector         embed
vector_*       embed
lifecycle      lifecycle
receipt        lifecycle
gc             lifecycle
recall         recall
recall_int     recall
recall_hybrid  recall
answer         recall
query          recall
calibrate      recall
rank           recall
rerank         recall
supersede      recall
hook_inject    recall
seed           ingest
seed_*         ingest
ingest         ingest
capture        ingest
capture_*      ingest
reflect        ingest
sync           ingest
eval           eval
mcp            face
hook           face
hook_server    face
cli            cli
cli_*          cli
console_assets cli
EOF
}

src=${1:-$(dirname "$0")/../src}
obj=${2:-}
[ -d "$src" ] || { echo "layers: no source directory '$src'" >&2; exit 2; }
[ -z "$obj" ] || [ -d "$obj" ] || { echo "layers: no object directory '$obj'" >&2; exit 2; }
tmp=$(mktemp -d /tmp/cairn-layers-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# rank of each layer: "name rank"; api is below every layer
{ echo "api 0"; r=1; for l in $LAYERS; do echo "$l $r"; r=$((r + 1)); done; } > "$tmp/ranks"
layer_table | awk 'NF' > "$tmp/table"

# every .c/.h file: "module path"
find "$src" -type f \( -name '*.c' -o -name '*.h' \) | sort |
	awk '{ n = $0; sub(/.*\//, "", n); sub(/\.[ch]$/, "", n); print n, $0 }' > "$tmp/files"

# layer_of MODULE...: "module layer" for each (layer "?" when unlisted)
layer_of() {
	awk 'FNR == NR { pat[FNR] = $1; lay[FNR] = $2; np = FNR; next }
	     { l = "?"
	       for (i = 1; i <= np; i++) {
		       p = pat[i]
		       if (p ~ /\*$/) {
			       q = substr(p, 1, length(p) - 1)
			       if (substr($1, 1, length(q)) == q) { l = lay[i]; break }
		       } else if ($1 == p) { l = lay[i]; break }
	       }
	       print $1, l }' "$tmp/table" -
}

violations=0
bad() { violations=$((violations + 1)); echo "layers: $*" >&2; }

# the table and the files agree
cut -d' ' -f1 "$tmp/files" | sort -u | layer_of > "$tmp/modlayer"
while read -r m l; do
	[ "$l" = "?" ] && bad "$(awk -v m="$m" '$1 == m { print $2; exit }' "$tmp/files"): not in the layer table of tests/layers.sh"
done < "$tmp/modlayer"
while read -r p l; do
	grep -q "^$l " "$tmp/ranks" || bad "table: '$p' is in an unknown layer '$l'"
	case $p in
	cairn | console_assets) continue ;; # include/cairn.h, build/console_assets.h
	*\*) q=${p%\*}; awk -v q="$q" 'substr($1, 1, length(q)) == q { f = 1 } END { exit !f }' "$tmp/files" ;;
	*) awk -v p="$p" '$1 == p { f = 1 } END { exit !f }' "$tmp/files" ;;
	esac || bad "table: '$p' names no file under $src"
done < "$tmp/table"

# rule 0: each file in its layer's folder (a path under src/ other than
# the layer's folder is a file in the wrong place)
for fl in $FOLDERS; do echo "${fl%%:*} ${fl#*:}"; done > "$tmp/folders"
awk -v src="$src" 'FILENAME == ARGV[1] { dir[$1] = $2; next }
     FILENAME == ARGV[2] { lay[$1] = $2; next }
     { l = lay[$1]; if (!(l in dir)) next
       p = $2; sub("^" src "/?", "", p)
       d = p; if (d ~ /\//) sub(/\/[^\/]*$/, "", d); else d = "."
       if (d ~ /^cli\/console/) next # the console page: assets, no C
       if (d != dir[l]) print $2 " (" l ") is in src/" d ", not in src/" dir[l] }' \
	"$tmp/folders" "$tmp/modlayer" "$tmp/files" > "$tmp/dir_bad"
while read -r line; do bad "$line"; done < "$tmp/dir_bad"

# rule 1: "file layer header header-layer" for each quoted #include
while read -r m f; do
	grep -oE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[^"]+"' "$f" |
		sed -E 's/.*"([^"]+)"/\1/; s|.*/||; s/\.[ch]$//' |
		while read -r h; do echo "$f $m $h"; done
done < "$tmp/files" > "$tmp/incs"
awk '{ print $2 }' "$tmp/incs" | sort -u | layer_of > "$tmp/l_from"
awk '{ print $3 }' "$tmp/incs" | sort -u | layer_of > "$tmp/l_to"
nincs=$(wc -l < "$tmp/incs")
awk 'FILENAME == ARGV[1] { rank[$1] = $2; next }
     FILENAME == ARGV[2] { from[$1] = $2; next }
     FILENAME == ARGV[3] { to[$1] = $2; next }
     { lf = from[$2]; lt = to[$3]
       if (lf == "?" || !(lf in rank)) next # reported above
       if (lt == "?") { print $1 " (" lf ") includes " $3 ".h, which is in no layer"; next }
       if (rank[lt] > rank[lf])
	       print $1 " (" lf ") includes " $3 ".h (" lt "): a higher layer" }' \
	"$tmp/ranks" "$tmp/l_from" "$tmp/l_to" "$tmp/incs" > "$tmp/inc_bad"
while read -r line; do bad "$line"; done < "$tmp/inc_bad"

# rule 2: "module symbol definer" for each symbol an object takes from another
ncalls=0
if [ -n "$obj" ]; then
	: > "$tmp/defs"
	: > "$tmp/uses"
	for m in $(awk '$2 ~ /\.c$/ { print $1 }' "$tmp/files" | sort -u); do
		o=$obj/$m.o # else in a folder of OBJ_DIR, as src/ may be
		[ -f "$o" ] || o=$(find "$obj" -name "$m.o" -print -quit)
		if [ ! -f "$o" ]; then
			bad "$obj: no object $m.o for $m.c (build it first: make layers)"
			continue
		fi
		nm -P -g --defined-only "$o" |
			awk -v m="$m" '$2 ~ /^[TDBRCGSVW]$/ && $1 !~ /^__(odr_)?asan/ { print $1, m }' >> "$tmp/defs"
		nm -P -u "$o" | awk -v m="$m" '{ print $1, m }' >> "$tmp/uses"
	done
	sort -u "$tmp/defs" -o "$tmp/defs"
	sort -u "$tmp/uses" -o "$tmp/uses"
	# a symbol defined twice would make the map ambiguous
	cut -d' ' -f1 "$tmp/defs" | uniq -d | while read -r s; do
		bad "$s is defined in more than one object: $(awk -v s="$s" '$1 == s { printf "%s.o ", $2 }' "$tmp/defs")"
	done
	join "$tmp/uses" "$tmp/defs" | awk '$2 != $3 { print $2, $1, $3 }' > "$tmp/calls"
	ncalls=$(wc -l < "$tmp/calls")
	awk 'FILENAME == ARGV[1] { rank[$1] = $2; next }
	     FILENAME == ARGV[2] { lay[$1] = $2; next }
	     { lf = lay[$1]; lt = lay[$3]
	       if (!(lf in rank) || !(lt in rank)) next # reported above
	       if (rank[lt] > rank[lf])
		       print $1 ".o (" lf ") uses " $2 " of " $3 ".c (" lt "): a higher layer" }' \
		"$tmp/ranks" "$tmp/modlayer" "$tmp/calls" > "$tmp/call_bad"
	while read -r line; do bad "$line"; done < "$tmp/call_bad"
fi

echo "layers: $(wc -l < "$tmp/files") files, $nincs includes, $ncalls calls checked, $violations violations"
[ "$violations" -eq 0 ]

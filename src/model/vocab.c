/*
 * vocab.c -- the tokeniser object shared by WordPiece and Unigram: loading
 * `tokenizer.ggml.*` from a GGUF file, the piece tables (a hash from text to
 * id, a byte trie for matching), special tokens, truncation and pairs.
 *
 * Layer: model files, above gguf.h; wordpiece.c and unigram.c hold the two
 * algorithms and see struct vocab through VOCAB_INTERNAL.
 *
 * Holds: a private copy of the vocabulary (the GGUF may be closed after
 * vocab_load). Every id the tables hold is < n, checked once at build or,
 * for a vocabulary read back from the cache file vocab-<key>.bin in
 * util_cache_dir(), checked over the whole file before use.
 *
 * Must never: trust a count, id or offset of the file (GGUF or cache)
 * without a check, read past a token's length, or accept invalid UTF-8 as
 * text.
 */
#define VOCAB_INTERNAL
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>


#include "gguf.h"
#include "internal.h"
#include "vocab.h"

/* ------------------------------------------------------------ building */

int vocab_new(int kind, struct vocab **out)
{
	struct vocab *v;

	*out = NULL;
	if (kind != VOCAB_WORDPIECE && kind != VOCAB_UNIGRAM)
		return CAIRN_INVALID;
	v = util_calloc(1, sizeof(*v));
	if (!v)
		return CAIRN_NOMEM;
	v->kind = kind;
	sbuf_init(&v->text, (size_t)1 << 30);
	v->cls = v->sep = v->pad = v->unk = -1;
	v->lowercase = 1;
	v->strip_accents = -1;
	v->add_space_prefix = 1;
	v->remove_extra_ws = 1;
	v->add_bos = v->add_eos = 1;
	for (int i = 0; i < 256; i++)
		v->byte_id[i] = -1;
	*out = v;
	return CAIRN_OK;
}

int vocab_add(struct vocab *v, const char *s, size_t len, float score, int type)
{
	if (v->n >= VOCAB_MAX_TOKENS || len > VOCAB_MAX_TOKEN_BYTES)
		return CAIRN_INVALID;
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 256;
		uint32_t *off = util_realloc(v->off, cap * sizeof(*off));
		if (!off)
			return CAIRN_NOMEM;
		v->off = off;
		uint32_t *ln = util_realloc(v->len, cap * sizeof(*ln));
		if (!ln)
			return CAIRN_NOMEM;
		v->len = ln;
		float *sc = util_realloc(v->score, cap * sizeof(*sc));
		if (!sc)
			return CAIRN_NOMEM;
		v->score = sc;
		uint8_t *ty = util_realloc(v->type, cap);
		if (!ty)
			return CAIRN_NOMEM;
		v->type = ty;
		v->cap = cap;
	}
	v->off[v->n] = (uint32_t)v->text.len;
	sbuf_add(&v->text, s, len);
	sbuf_addc(&v->text, '\0');
	if (v->text.err)
		return v->text.err == CAIRN_NOMEM ? CAIRN_NOMEM : CAIRN_INVALID;
	v->len[v->n] = (uint32_t)len;
	v->score[v->n] = score;
	v->type[v->n] = (uint8_t)(type >= 0 && type <= VOCAB_T_BYTE ? type : 0);
	if (len > v->max_len)
		v->max_len = len;
	v->n++;
	return CAIRN_OK;
}

void vocab_set_opt(struct vocab *v, int opt, long value)
{
	switch (opt) {
	case VOCAB_OPT_CLS: v->cls = (int32_t)value; break;
	case VOCAB_OPT_SEP: v->sep = (int32_t)value; break;
	case VOCAB_OPT_PAD: v->pad = (int32_t)value; break;
	case VOCAB_OPT_UNK: v->unk = (int32_t)value; break;
	case VOCAB_OPT_LOWERCASE: v->lowercase = value != 0; break;
	case VOCAB_OPT_STRIP_ACCENTS: v->strip_accents = value != 0; break;
	case VOCAB_OPT_ADD_SPACE_PREFIX:
		v->add_space_prefix = value != 0;
		break;
	case VOCAB_OPT_REMOVE_EXTRA_WS: v->remove_extra_ws = value != 0; break;
	case VOCAB_OPT_ADD_BOS: v->add_bos = value != 0; break;
	case VOCAB_OPT_ADD_EOS: v->add_eos = value != 0; break;
	default: break;
	}
}

/*
 * The precompiled charsmap of SentencePiece (its normalizer_spec): a
 * little-endian u32 byte size of the double array, the array of u32
 * entries, then NUL-terminated replacement strings that the array's leaves
 * point into. Checked here for shape; every index is checked again where
 * it is used (unigram.c).
 */
int vocab_set_charsmap(struct vocab *v, const void *data, size_t len, char *err,
		       size_t errsize)
{
	const unsigned char *p = data;
	uint32_t xsize;

	if (!err)
		errsize = 0;
	if (len == 0)
		return CAIRN_OK;
	if (len < 4) {
		snprintf(err, errsize,
			 "precompiled charsmap too short (%zu bytes)", len);
		return CAIRN_INVALID;
	}
	xsize = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		(uint32_t)p[3] << 24;
	if (xsize % 4 != 0 || (uint64_t)xsize + 4 >= len) {
		snprintf(err, errsize,
			 "precompiled charsmap: array size %u does not fit %zu "
			 "bytes",
			 xsize, len);
		return CAIRN_INVALID;
	}
	cairn_free(v->xcda);
	cairn_free(v->repl);
	v->n_xcda = xsize / 4;
	v->xcda = util_calloc(v->n_xcda ? v->n_xcda : 1, sizeof(uint32_t));
	v->n_repl = len - 4 - xsize;
	v->repl = util_calloc(v->n_repl, 1);
	if (!v->xcda || !v->repl)
		return CAIRN_NOMEM;
	for (size_t i = 0; i < v->n_xcda; i++) {
		const unsigned char *q = p + 4 + 4 * i;
		v->xcda[i] = (uint32_t)q[0] | (uint32_t)q[1] << 8 |
			     (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
	}
	memcpy(v->repl, p + 4 + xsize, v->n_repl);
	return CAIRN_OK;
}

/* FNV-1a over len bytes. */
static uint32_t hash_bytes(const char *s, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

static const char *tok_text(const struct vocab *v, int32_t id)
{
	return v->text.buf + v->off[id];
}

static int build_hash(struct vocab *v)
{
	size_t size = 64;

	while (size < v->n * 2)
		size *= 2;
	v->slot = util_calloc(size, sizeof(uint32_t));
	if (!v->slot)
		return CAIRN_NOMEM;
	v->mask = size - 1;
	for (size_t i = 0; i < v->n; i++) {
		size_t h = hash_bytes(tok_text(v, (int32_t)i), v->len[i]) &
			   v->mask;

		/* a later duplicate replaces the earlier (llama.cpp's map) */
		while (v->slot[h]) {
			uint32_t o = v->slot[h] - 1;
			if (v->len[o] == v->len[i] &&
			    memcmp(tok_text(v, (int32_t)o),
				   tok_text(v, (int32_t)i), v->len[i]) == 0)
				break;
			h = (h + 1) & v->mask;
		}
		v->slot[h] = (uint32_t)i + 1;
	}
	return CAIRN_OK;
}

int32_t vocab_find(const struct vocab *v, const char *s, size_t len)
{
	size_t h;

	if (!v->slot)
		return -1;
	h = hash_bytes(s, len) & v->mask;
	while (v->slot[h]) {
		uint32_t id = v->slot[h] - 1;
		if (v->len[id] == len &&
		    memcmp(tok_text(v, (int32_t)id), s, len) == 0)
			return (int32_t)id;
		h = (h + 1) & v->mask;
	}
	return -1;
}

/* ---------------------------------------------------------------- trie */

/* Byte d of token x (d < its length). */
#define BYTE_AT(v, x, d) ((unsigned char)tok_text(v, x)[d])

/*
 * Order ids[0..m) stably by their byte at depth d: insertion sort for a
 * few, a counting sort through tmp for many.
 */
static void sort_by_byte(const struct vocab *v, int32_t *ids, int32_t *tmp,
			 size_t m, uint32_t d)
{
	size_t count[257];

	if (m <= 32) {
		for (size_t i = 1; i < m; i++) {
			int32_t x = ids[i];
			unsigned char c = BYTE_AT(v, x, d);
			size_t j = i;

			while (j > 0 && BYTE_AT(v, ids[j - 1], d) > c) {
				ids[j] = ids[j - 1];
				j--;
			}
			ids[j] = x;
		}
		return;
	}
	memset(count, 0, sizeof(count));
	for (size_t i = 0; i < m; i++)
		count[BYTE_AT(v, ids[i], d) + 1]++;
	for (int c = 0; c < 256; c++)
		count[c + 1] += count[c];
	for (size_t i = 0; i < m; i++)
		tmp[count[BYTE_AT(v, ids[i], d)]++] = ids[i];
	memcpy(ids, tmp, m * sizeof(*ids));
}

/*
 * Build a trie over the tokens for which want(type) holds, breadth-first:
 * each node owns the range of tokens that share its prefix, sorted by the
 * next byte (a radix sort, one byte per level), so its children are
 * appended together, contiguous and ordered by label. A token ending at a
 * node sets its id; of duplicates the last id wins, as in the hash.
 */
static int build_trie(struct vocab *v, struct vocab_trie *t,
		      int (*want)(int type))
{
	int32_t *ids = NULL, *tmp = NULL;
	uint32_t *lo = NULL, *hi = NULL, *depth = NULL;
	size_t m = 0, cap = 1, n = 0;
	int rc = CAIRN_NOMEM;

	t->node = NULL;
	t->n = 0;
	ids = util_calloc(v->n ? v->n : 1, sizeof(*ids));
	tmp = util_calloc(v->n ? v->n : 1, sizeof(*tmp));
	if (!ids || !tmp)
		goto out;
	for (size_t i = 0; i < v->n; i++) {
		if (want(v->type[i]) && v->len[i] > 0) {
			ids[m++] = (int32_t)i;
			cap += v->len[i];
		}
	}
	if (m == 0) {
		rc = CAIRN_OK;
		goto out;
	}
	/*
	 * At most one node per byte: sized once (the pages a smaller trie
	 * never touches are never mapped), shrunk at the end.
	 */
	t->node = util_calloc(cap, sizeof(*t->node));
	lo = util_calloc(cap, sizeof(*lo));
	hi = util_calloc(cap, sizeof(*hi));
	depth = util_calloc(cap, sizeof(*depth));
	if (!t->node || !lo || !hi || !depth)
		goto out;
	t->node[0].id = -1;
	lo[0] = 0;
	hi[0] = (uint32_t)m;
	depth[0] = 0;
	n = 1;
	for (size_t i = 0; i < n; i++) {
		uint32_t a = lo[i], b = hi[i], d = depth[i], w = a;
		size_t first = n;

		/* tokens ending here leave the range, which stays in order */
		for (uint32_t e = a; e < b; e++) {
			int32_t x = ids[e];

			if (v->len[x] == d)
				t->node[i].id = x; /* the last one wins */
			else
				ids[w++] = x;
		}
		b = w;
		if (b > a)
			sort_by_byte(v, ids + a, tmp, b - a, d);
		while (a < b) {
			unsigned char c = BYTE_AT(v, ids[a], d);
			uint32_t e = a + 1;

			while (e < b && BYTE_AT(v, ids[e], d) == c)
				e++;
			if (NEVER(n == cap))
				goto out;
			t->node[n].first = 0;
			t->node[n].n = 0;
			t->node[n].label = c;
			t->node[n].id = -1;
			lo[n] = a;
			hi[n] = e;
			depth[n] = d + 1;
			n++;
			a = e;
		}
		t->node[i].first = (uint32_t)first;
		t->node[i].n = (uint16_t)(n - first);
	}
	t->n = n;
	{
		struct vocab_node *p = util_realloc(t->node, n * sizeof(*p));

		if (p) /* keeping the larger block is harmless */
			t->node = p;
	}
	memset(t->root, 0, sizeof(t->root));
	for (uint32_t i = 0; i < t->node[0].n; i++) {
		uint32_t c = t->node[0].first + i;
		t->root[t->node[c].label] = c;
	}
	rc = CAIRN_OK;
out:
	if (rc != CAIRN_OK) {
		cairn_free(t->node);
		t->node = NULL;
		t->n = 0;
	}
	cairn_free(ids);
	cairn_free(tmp);
	cairn_free(lo);
	cairn_free(hi);
	cairn_free(depth);
	return rc;
}

const struct vocab_node *vocab_trie_step(const struct vocab_trie *t,
					 const struct vocab_node *node,
					 unsigned char c)
{
	const struct vocab_node *ch = t->node + node->first;
	size_t a = 0, b = node->n;

	if (node == t->node)
		return t->root[c] ? t->node + t->root[c] : NULL;
	while (a < b) {
		size_t mid = (a + b) / 2;
		if (ch[mid].label < c)
			a = mid + 1;
		else if (ch[mid].label > c)
			b = mid;
		else
			return ch + mid;
	}
	return NULL;
}

static int want_any(int type)
{
	(void)type;
	return 1;
}

/* SentencePiece matches normal, user-defined and unused pieces. */
static int want_piece(int type)
{
	return type == VOCAB_T_NORMAL || type == VOCAB_T_USER ||
	       type == VOCAB_T_UNUSED;
}

static int want_user(int type)
{
	return type == VOCAB_T_USER;
}

static int check_special(const struct vocab *v, int32_t id, const char *what,
			 char *err, size_t errsize)
{
	if (id < -1 || (id >= 0 && (size_t)id >= v->n)) {
		snprintf(err, errsize,
			 "%s token id %ld is outside the vocabulary (%zu "
			 "tokens)",
			 what, (long)id, v->n);
		return CAIRN_INVALID;
	}
	return CAIRN_OK;
}

int vocab_build(struct vocab *v, char *err, size_t errsize)
{
	int rc;

	if (!err)
		errsize = 0;
	if (v->n == 0) {
		snprintf(err, errsize, "the vocabulary is empty");
		return CAIRN_INVALID;
	}
	if ((rc = check_special(v, v->cls, "cls", err, errsize)) ||
	    (rc = check_special(v, v->sep, "sep", err, errsize)) ||
	    (rc = check_special(v, v->pad, "pad", err, errsize)) ||
	    (rc = check_special(v, v->unk, "unk", err, errsize)))
		return rc;
	if (v->unk < 0) {
		snprintf(err, errsize, "the vocabulary has no unknown token");
		return CAIRN_INVALID;
	}
	if (v->strip_accents < 0)
		v->strip_accents = v->lowercase;
	/* vocab_load made the hash already, to find specials by text */
	if (!v->slot && (rc = build_hash(v)))
		return rc;
	if (v->kind == VOCAB_WORDPIECE) {
		if ((rc = build_trie(v, &v->match, want_any)))
			return rc;
		return CAIRN_OK;
	}
	if ((rc = build_trie(v, &v->match, want_piece)) ||
	    (rc = build_trie(v, &v->user, want_user)))
		return rc;
	return unigram_prepare(v, err, errsize);
}

void vocab_free(struct vocab *v)
{
	if (!v)
		return;
	if (v->blob) { /* every array lies in the cache file's mapping */
		munmap(v->blob, v->blob_len);
		cairn_free(v);
		return;
	}
	sbuf_release(&v->text);
	cairn_free(v->off);
	cairn_free(v->len);
	cairn_free(v->score);
	cairn_free(v->type);
	cairn_free(v->slot);
	cairn_free(v->match.node);
	cairn_free(v->user.node);
	cairn_free(v->xcda);
	cairn_free(v->repl);
	cairn_free(v);
}

/* --------------------------------------------------------------- cache */

/*
 * A built vocabulary as one file: a header, then the sections below at
 * 8-byte aligned offsets that follow from the header's counts alone. The
 * file is native-endian with this compiler's layout of struct vocab_node
 * (both recorded and checked). The key is the SHA-256 of everything
 * vocab_load reads from the GGUF, so a changed model never hits a stale
 * file; the checksum catches a damaged one, and every count, offset and id
 * is checked again after it, as if the file were hostile.
 */
#define VC_MAGIC "CAIRNVC\x01"
#define VC_ENDIAN 0x01020304u

struct vc_header {
	char magic[8];
	uint32_t endian;
	uint32_t node_size;      /* sizeof(struct vocab_node) */
	unsigned char key[32];   /* SHA-256 of the inputs */
	uint64_t file_bytes;     /* the whole file */
	uint64_t sum;            /* vocab_cache_sum of bytes 64.. */
	uint64_t kind, n, text_len, max_len, n_slot, match_n, user_n, n_xcda,
		n_repl;
	int64_t cls, sep, pad, unk;
	int64_t lowercase, strip_accents, add_space_prefix, remove_extra_ws,
		add_bos, add_eos, byte_fallback, split_ok;
	double unk_score;
	int32_t byte_id[256];
};
_Static_assert(offsetof(struct vc_header, sum) == VOCAB_CACHE_SUM_AT &&
		       sizeof(struct vc_header) == VOCAB_CACHE_HEADER_BYTES &&
		       VOCAB_CACHE_HEADER_BYTES % 8 == 0,
	       "cache header layout");

/* Section offsets (8-aligned) and the file size from a header's counts. */
struct vc_layout {
	uint64_t text, off, len, score, type, slot, match, user, xcda, repl,
		end;
};

static uint64_t al8(uint64_t x)
{
	return (x + 7) & ~(uint64_t)7;
}

static void vc_layout(const struct vc_header *h, struct vc_layout *l)
{
	l->text = al8(sizeof(*h));
	l->off = al8(l->text + h->text_len);
	l->len = al8(l->off + 4 * h->n);
	l->score = al8(l->len + 4 * h->n);
	l->type = al8(l->score + 4 * h->n);
	l->slot = al8(l->type + h->n);
	l->match = al8(l->slot + 4 * h->n_slot);
	l->user = al8(l->match + sizeof(struct vocab_node) * h->match_n);
	l->xcda = al8(l->user + sizeof(struct vocab_node) * h->user_n);
	l->repl = al8(l->xcda + 4 * h->n_xcda);
	l->end = al8(l->repl + h->n_repl);
}

/* Four independent lanes of multiply-xorshift over 8-byte words. */
uint64_t vocab_cache_sum(const unsigned char *p, size_t len)
{
	const uint64_t k = 0x9E3779B97F4A7C15ull;
	uint64_t h[4] = { 1, 2, 3, 4 }, w, r;
	size_t i = 0;

	for (; i + 32 <= len; i += 32) {
		for (int j = 0; j < 4; j++) {
			memcpy(&w, p + i + 8 * (size_t)j, 8);
			h[j] = (h[j] ^ w) * k;
			h[j] ^= h[j] >> 29;
		}
	}
	r = (uint64_t)len;
	for (; i < len; i++)
		r = (r ^ p[i]) * k;
	for (int j = 0; j < 4; j++)
		r = ((r ^ h[j]) * k) ^ (r >> 31);
	return r;
}

int vocab_from_cache(const struct vocab *v)
{
	return v->blob != NULL;
}

/* Every count, offset and id of a cache file; 0 when it can be used. */
static int vc_check(const unsigned char *b, size_t size,
		    const unsigned char key[32], struct vc_header *h,
		    struct vc_layout *l)
{
	const uint32_t *off, *len, *slot;
	const uint8_t *type;
	const char *text;
	const struct vocab_node *nodes[2];
	uint64_t counts[2], free_slots = 0;

	if (size < sizeof(*h))
		return -1;
	memcpy(h, b, sizeof(*h));
	if (memcmp(h->magic, VC_MAGIC, 8) != 0 || h->endian != VC_ENDIAN ||
	    h->node_size != sizeof(struct vocab_node) ||
	    memcmp(h->key, key, 32) != 0 || h->file_bytes != size)
		return -1;
	if (vocab_cache_sum(b + VOCAB_CACHE_HEAD, size - VOCAB_CACHE_HEAD) !=
	    h->sum)
		return -1;
	/* counts first, so the layout cannot overflow */
	if ((h->kind != VOCAB_WORDPIECE && h->kind != VOCAB_UNIGRAM) ||
	    h->n == 0 || h->n > VOCAB_MAX_TOKENS || h->text_len == 0 ||
	    h->text_len > ((uint64_t)1 << 30) ||
	    h->max_len > VOCAB_MAX_TOKEN_BYTES || h->n_slot < 64 ||
	    h->n_slot > ((uint64_t)1 << 26) ||
	    (h->n_slot & (h->n_slot - 1)) != 0 || h->n_slot <= h->n ||
	    h->match_n > h->text_len + 1 || h->user_n > h->text_len + 1 ||
	    h->n_xcda > ((uint64_t)1 << 28) || h->n_repl > ((uint64_t)1 << 30))
		return -1;
	vc_layout(h, l);
	if (l->end != size)
		return -1;
	if (h->cls < -1 || h->cls >= (int64_t)h->n || h->sep < -1 ||
	    h->sep >= (int64_t)h->n || h->pad < -1 ||
	    h->pad >= (int64_t)h->n || h->unk < 0 || h->unk >= (int64_t)h->n)
		return -1;
	if ((uint64_t)h->lowercase > 1 || (uint64_t)h->strip_accents > 1 ||
	    (uint64_t)h->add_space_prefix > 1 ||
	    (uint64_t)h->remove_extra_ws > 1 || (uint64_t)h->add_bos > 1 ||
	    (uint64_t)h->add_eos > 1 || (uint64_t)h->byte_fallback > 1 ||
	    (uint64_t)h->split_ok > 1)
		return -1;
	if (!(h->unk_score > -1e30 && h->unk_score < 1e30))
		return -1; /* NaN too */
	for (int i = 0; i < 256; i++)
		if (h->byte_id[i] < -1 || h->byte_id[i] >= (int64_t)h->n ||
		    (h->byte_fallback && h->byte_id[i] < 0))
			return -1;
	text = (const char *)b + l->text;
	off = (const uint32_t *)(b + l->off);
	len = (const uint32_t *)(b + l->len);
	type = b + l->type;
	slot = (const uint32_t *)(b + l->slot);
	if (text[h->text_len - 1] != '\0')
		return -1;
	for (uint64_t i = 0; i < h->n; i++) {
		if (len[i] > h->max_len || off[i] >= h->text_len ||
		    h->text_len - off[i] <= len[i] ||
		    text[off[i] + len[i]] != '\0' || type[i] > VOCAB_T_BYTE)
			return -1;
	}
	for (uint64_t i = 0; i < h->n_slot; i++) {
		if (slot[i] > h->n)
			return -1;
		free_slots += slot[i] == 0;
	}
	if (free_slots == 0) /* a probe must end at an empty slot */
		return -1;
	nodes[0] = (const struct vocab_node *)(b + l->match);
	nodes[1] = (const struct vocab_node *)(b + l->user);
	counts[0] = h->match_n;
	counts[1] = h->user_n;
	for (int t = 0; t < 2; t++) {
		for (uint64_t i = 0; i < counts[t]; i++) {
			const struct vocab_node *x = nodes[t] + i;

			if (x->n > 256 || (uint64_t)x->first + x->n > counts[t] ||
			    x->id < -1 || x->id >= (int64_t)h->n)
				return -1;
		}
	}
	return 0;
}

/* The root's child table of a trie from its node 0. */
static void vc_roots(struct vocab_trie *t)
{
	memset(t->root, 0, sizeof(t->root));
	if (!t->node)
		return;
	for (uint32_t i = 0; i < t->node[0].n; i++) {
		uint32_t c = t->node[0].first + i;
		t->root[t->node[c].label] = c;
	}
}

/*
 * The vocabulary of cache file path when it is there, whole and made from
 * the same inputs (key); NULL otherwise (any failure is a miss).
 */
static struct vocab *vc_read(const char *path, const unsigned char key[32])
{
	struct vc_header h;
	struct vc_layout l;
	struct vocab *v = NULL;
	struct stat st;
	void *map;
	char *buf;
	size_t size;
	unsigned char *b;
	int fd;

	/*
	 * Mapped, not read: the page cache's pages are used as they are
	 * (a read would fault in and zero fresh pages, which on a busy
	 * machine costs more than the check). Writers rename whole files
	 * into place, so a mapped file is never cut short under a reader.
	 */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size < (off_t)sizeof(h) ||
	    (uint64_t)st.st_size > VOCAB_CACHE_MAX_BYTES) {
		close(fd);
		return NULL;
	}
	size = (size_t)st.st_size;
	map = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return NULL;
	buf = map;
	b = map;
	/* page-aligned: aligned for the arrays */
	if (vc_check(b, size, key, &h, &l) != 0 ||
	    vocab_new((int)h.kind, &v) != CAIRN_OK) {
		munmap(map, size);
		return NULL;
	}
	v->blob = map;
	v->blob_len = size;
	v->n = (size_t)h.n;
	v->text.buf = buf + l.text;
	v->text.len = (size_t)h.text_len;
	v->text.cap = 0;
	v->off = (uint32_t *)(b + l.off);
	v->len = (uint32_t *)(b + l.len);
	v->score = (float *)(b + l.score);
	v->type = b + l.type;
	v->slot = (uint32_t *)(b + l.slot);
	v->mask = (size_t)h.n_slot - 1;
	v->match.n = (size_t)h.match_n;
	v->match.node = h.match_n ? (struct vocab_node *)(b + l.match) : NULL;
	vc_roots(&v->match);
	v->user.n = (size_t)h.user_n;
	v->user.node = h.user_n ? (struct vocab_node *)(b + l.user) : NULL;
	vc_roots(&v->user);
	v->n_xcda = (size_t)h.n_xcda;
	v->xcda = h.n_xcda ? (uint32_t *)(b + l.xcda) : NULL;
	v->n_repl = (size_t)h.n_repl;
	v->repl = h.n_repl ? buf + l.repl : NULL;
	v->max_len = (size_t)h.max_len;
	v->cls = (int32_t)h.cls;
	v->sep = (int32_t)h.sep;
	v->pad = (int32_t)h.pad;
	v->unk = (int32_t)h.unk;
	v->lowercase = (int)h.lowercase;
	v->strip_accents = (int)h.strip_accents;
	v->add_space_prefix = (int)h.add_space_prefix;
	v->remove_extra_ws = (int)h.remove_extra_ws;
	v->add_bos = (int)h.add_bos;
	v->add_eos = (int)h.add_eos;
	v->unk_score = h.unk_score;
	memcpy(v->byte_id, h.byte_id, sizeof(v->byte_id));
	v->byte_fallback = (int)h.byte_fallback;
	v->split_ok = (int)h.split_ok;
	return v;
}

/* Create dir and its missing parents (mode 0700); 0 when it exists. */
static int vc_mkdirs(const char *dir)
{
	char path[4096];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(path))
		return -1;
	memcpy(path, dir, n + 1);
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(path, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

/*
 * Write v to path: assembled in memory, written to a temporary name
 * (mkstemp, mode 0600) and renamed over path, so a reader sees the old
 * file or the whole new one. Any failure is ignored (no file is left).
 */
static void vc_write(const struct vocab *v, const char *dir, const char *path,
		     const unsigned char key[32])
{
	struct vc_header h;
	struct vc_layout l;
	unsigned char *b;
	char tmp[4200];
	size_t done = 0;
	int fd, bad = 0;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, VC_MAGIC, 8);
	h.endian = VC_ENDIAN;
	h.node_size = sizeof(struct vocab_node);
	memcpy(h.key, key, 32);
	h.kind = (uint64_t)v->kind;
	h.n = v->n;
	h.text_len = v->text.len; /* ends with the last token's NUL */
	h.max_len = v->max_len;
	h.n_slot = v->mask + 1;
	h.match_n = v->match.n;
	h.user_n = v->user.n;
	h.n_xcda = v->xcda ? v->n_xcda : 0;
	h.n_repl = v->repl ? v->n_repl : 0;
	h.cls = v->cls;
	h.sep = v->sep;
	h.pad = v->pad;
	h.unk = v->unk;
	h.lowercase = v->lowercase;
	h.strip_accents = v->strip_accents;
	h.add_space_prefix = v->add_space_prefix;
	h.remove_extra_ws = v->remove_extra_ws;
	h.add_bos = v->add_bos;
	h.add_eos = v->add_eos;
	h.byte_fallback = v->byte_fallback;
	h.split_ok = v->split_ok;
	h.unk_score = v->unk_score;
	memcpy(h.byte_id, v->byte_id, sizeof(h.byte_id));
	if (!v->text.buf || !v->slot)
		return;
	vc_layout(&h, &l);
	if (l.end > VOCAB_CACHE_MAX_BYTES)
		return;
	h.file_bytes = l.end;
	b = util_calloc(1, (size_t)l.end);
	if (!b)
		return;
	memcpy(b + l.text, v->text.buf, (size_t)h.text_len);
	memcpy(b + l.off, v->off, 4 * v->n);
	memcpy(b + l.len, v->len, 4 * v->n);
	memcpy(b + l.score, v->score, 4 * v->n);
	memcpy(b + l.type, v->type, v->n);
	memcpy(b + l.slot, v->slot, 4 * (size_t)h.n_slot);
	if (h.match_n)
		memcpy(b + l.match, v->match.node,
		       sizeof(struct vocab_node) * (size_t)h.match_n);
	if (h.user_n)
		memcpy(b + l.user, v->user.node,
		       sizeof(struct vocab_node) * (size_t)h.user_n);
	if (h.n_xcda)
		memcpy(b + l.xcda, v->xcda, 4 * (size_t)h.n_xcda);
	if (h.n_repl)
		memcpy(b + l.repl, v->repl, (size_t)h.n_repl);
	memcpy(b, &h, sizeof(h));
	h.sum = vocab_cache_sum(b + VOCAB_CACHE_HEAD,
				(size_t)l.end - VOCAB_CACHE_HEAD);
	memcpy(b + VOCAB_CACHE_SUM_AT, &h.sum, 8);
	if (vc_mkdirs(dir) != 0 ||
	    snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp)) {
		cairn_free(b);
		return;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		cairn_free(b);
		return;
	}
	while (done < l.end) {
		ssize_t w = write(fd, b + done, (size_t)l.end - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			bad = 1;
			break;
		}
		done += (size_t)w;
	}
	if (close(fd) != 0)
		bad = 1;
	if (bad || rename(tmp, path) != 0)
		unlink(tmp);
	cairn_free(b);
}

/* ------------------------------------------------------------- loading */

/* A special id from the first of keys present; -1 when none is. */
static int32_t get_id(const struct gguf *g, const char *const *keys)
{
	for (; *keys; keys++) {
		int64_t x;
		if (gguf_get_i64(g, *keys, &x) == 0)
			return x < 0 || x > INT32_MAX ? -2 : (int32_t)x;
	}
	return -1;
}

static int32_t by_text(const struct vocab *v, int32_t id, const char *text)
{
	return id != -1 ? id : vocab_find(v, text, strlen(text));
}

static void get_flag(const struct gguf *g, const char *key, struct vocab *v,
		     int opt)
{
	int b;

	if (gguf_get_bool(g, key, &b) == 0)
		vocab_set_opt(v, opt, b);
}

static const char *const k_cls[] = { "tokenizer.ggml.cls_token_id",
				     "tokenizer.ggml.bos_token_id",
				     NULL };
static const char *const k_bos[] = { "tokenizer.ggml.bos_token_id",
				     "tokenizer.ggml.cls_token_id",
				     NULL };
static const char *const k_sep[] = {
	"tokenizer.ggml.seperator_token_id",
	"tokenizer.ggml.eos_token_id", NULL
};
static const char *const k_eos[] = {
	"tokenizer.ggml.eos_token_id",
	"tokenizer.ggml.seperator_token_id", NULL
};
static const char *const k_pad[] = { "tokenizer.ggml.padding_token_id",
				     NULL };
static const char *const k_unk[] = { "tokenizer.ggml.unknown_token_id",
				     NULL };

/* Every boolean key vocab_load reads (for the cache key). */
static const char *const k_flags[] = {
	"tokenizer.ggml.normalizer.lowercase",
	"tokenizer.ggml.normalizer.strip_accents",
	"tokenizer.ggml.add_space_prefix",
	"tokenizer.ggml.remove_extra_whitespaces",
	"tokenizer.ggml.add_bos_token", "tokenizer.ggml.add_eos_token", NULL
};

/*
 * The cache key: SHA-256 over everything vocab_load reads (the kind, the
 * serialised token array, scores, types, special ids, flags, charsmap)
 * and this file's format. 0 with key set, -1 when it cannot be made.
 * The token strings lie back to back in the GGUF's mapping (length, bytes,
 * length, bytes...), so the array is hashed as one region.
 */
static int vc_key(const struct gguf *g, int kind, uint64_t n,
		  const void *d_sc, const void *d_ty, unsigned char key[32])
{
	static const char *const *const ids[] = { k_cls, k_bos, k_sep, k_eos,
						  k_pad, k_unk };
	struct gguf_str first, last;
	int64_t in[32];
	size_t k = 0;
	struct util_span parts[6];
	size_t np = 0;
	int et = -1;
	uint64_t nc = 0;
	const void *dc = NULL;

	if (gguf_arr_str(g, "tokenizer.ggml.tokens", 0, &first) != 0 ||
	    gguf_arr_str(g, "tokenizer.ggml.tokens", n - 1, &last) != 0 ||
	    last.s + last.len < first.s)
		return -1;
	in[k++] = (int64_t)sizeof(struct vc_header);
	in[k++] = (int64_t)sizeof(struct vocab_node);
	in[k++] = kind;
	in[k++] = (int64_t)n;
	in[k++] = d_sc != NULL;
	in[k++] = d_ty != NULL;
	for (size_t i = 0; i < ARRAY_SIZE(ids); i++)
		in[k++] = get_id(g, ids[i]);
	for (size_t i = 0; k_flags[i]; i++) {
		int b;
		in[k++] = gguf_get_bool(g, k_flags[i], &b) == 0 ? b != 0 : -1;
	}
	if (gguf_get_arr(g, "tokenizer.ggml.precompiled_charsmap", &et, &nc,
			 &dc) != 0 || !dc)
		et = -1, nc = 0;
	in[k++] = et;
	in[k++] = (int64_t)nc;
	parts[np++] = (struct util_span){ VC_MAGIC, 8 };
	parts[np++] = (struct util_span){ in, k * sizeof(in[0]) };
	parts[np++] = (struct util_span){
		first.s - 8, (size_t)(last.s + last.len - (first.s - 8)) };
	if (d_sc)
		parts[np++] = (struct util_span){ d_sc, 4 * (size_t)n };
	if (d_ty)
		parts[np++] = (struct util_span){ d_ty, 4 * (size_t)n };
	if (dc)
		parts[np++] = (struct util_span){ dc, (size_t)nc };
	return util_sha256_parts(parts, np, key);
}

/* What vocab_load found in the GGUF metadata before building anything. */
struct vocab_src {
	int kind;           /* VOCAB_WORDPIECE or VOCAB_UNIGRAM */
	uint64_t n;         /* tokens */
	const void *d_sc;   /* n f32 scores, or NULL */
	const void *d_ty;   /* n i32 token types, or NULL */
};

/* The tokenizer model and its arrays: present, of the right types and
 * lengths, within the limits. */
static int vocab_src_read(const struct gguf *g, struct vocab_src *src,
			  char *err, size_t errsize)
{
	struct gguf_str model;
	int et_tok, et_sc = -1, et_ty = -1;
	uint64_t n, n_sc = 0, n_ty = 0;
	const void *d_tok;

	memset(src, 0, sizeof(*src));
	if (gguf_get_str(g, "tokenizer.ggml.model", &model) != 0) {
		snprintf(err, errsize,
			 "no 'tokenizer.ggml.model' in the model file");
		return CAIRN_INVALID;
	}
	if (model.len == 4 && memcmp(model.s, "bert", 4) == 0) {
		src->kind = VOCAB_WORDPIECE;
	} else if (model.len == 2 && memcmp(model.s, "t5", 2) == 0) {
		src->kind = VOCAB_UNIGRAM;
	} else {
		snprintf(err, errsize,
			 "unsupported tokenizer model '%.*s' (want 'bert' or "
			 "'t5')",
			 (int)(model.len > 64 ? 64 : model.len), model.s);
		return CAIRN_INVALID;
	}
	if (gguf_get_arr(g, "tokenizer.ggml.tokens", &et_tok, &n, &d_tok) !=
		    0 ||
	    et_tok != GGUF_STRING) {
		snprintf(err, errsize,
			 "no string array 'tokenizer.ggml.tokens'");
		return CAIRN_INVALID;
	}
	if (n == 0 || n > VOCAB_MAX_TOKENS) {
		snprintf(err, errsize,
			 "'tokenizer.ggml.tokens' has %llu entries (1..%u)",
			 (unsigned long long)n, VOCAB_MAX_TOKENS);
		return CAIRN_INVALID;
	}
	src->n = n;
	if (gguf_find(g, "tokenizer.ggml.scores") >= 0 &&
	    (gguf_get_arr(g, "tokenizer.ggml.scores", &et_sc, &n_sc,
			  &src->d_sc) != 0 ||
	     et_sc != GGUF_F32 || n_sc != n)) {
		snprintf(err, errsize,
			 "'tokenizer.ggml.scores' is not %llu f32 values",
			 (unsigned long long)n);
		return CAIRN_INVALID;
	}
	if (gguf_find(g, "tokenizer.ggml.token_type") >= 0 &&
	    (gguf_get_arr(g, "tokenizer.ggml.token_type", &et_ty, &n_ty,
			  &src->d_ty) != 0 ||
	     et_ty != GGUF_I32 || n_ty != n)) {
		snprintf(err, errsize,
			 "'tokenizer.ggml.token_type' is not %llu i32 values",
			 (unsigned long long)n);
		return CAIRN_INVALID;
	}
	if (src->kind == VOCAB_UNIGRAM && !src->d_sc) {
		snprintf(err, errsize,
			 "a 't5' vocabulary needs 'tokenizer.ggml.scores'");
		return CAIRN_INVALID;
	}
	return CAIRN_OK;
}

/* Every token, with its score and type, into v (in id order). */
static int vocab_add_all(const struct gguf *g, const struct vocab_src *src,
			 struct vocab *v, char *err, size_t errsize)
{
	int rc;

	for (uint64_t i = 0; i < src->n; i++) {
		struct gguf_str s;
		float sc = 0;
		int32_t ty = VOCAB_T_NORMAL;

		if (gguf_arr_str(g, "tokenizer.ggml.tokens", i, &s) != 0) {
			snprintf(err, errsize, "cannot read token %llu",
				 (unsigned long long)i);
			return CAIRN_INVALID;
		}
		if (s.len > VOCAB_MAX_TOKEN_BYTES) {
			snprintf(err, errsize,
				 "token %llu is %llu bytes long (limit %d)",
				 (unsigned long long)i,
				 (unsigned long long)s.len,
				 VOCAB_MAX_TOKEN_BYTES);
			return CAIRN_INVALID;
		}
		if (src->d_sc)
			memcpy(&sc, (const char *)src->d_sc + 4 * i, 4);
		if (src->d_ty)
			memcpy(&ty, (const char *)src->d_ty + 4 * i, 4);
		if ((rc = vocab_add(v, s.s, (size_t)s.len, sc, ty))) {
			snprintf(err, errsize, "cannot add token %llu",
				 (unsigned long long)i);
			return rc;
		}
	}
	return CAIRN_OK;
}

/* The special token ids and the normaliser flags of the metadata (and,
 * for 't5', the precompiled character map). */
static int vocab_read_specials(const struct gguf *g, struct vocab *v,
			       char *err, size_t errsize)
{
	int rc;

	if (v->kind == VOCAB_WORDPIECE) {
		v->cls = by_text(v, get_id(g, k_cls), "[CLS]");
		v->sep = by_text(v, get_id(g, k_sep), "[SEP]");
		v->pad = by_text(v, get_id(g, k_pad), "[PAD]");
		v->unk = by_text(v, get_id(g, k_unk), "[UNK]");
		get_flag(g, "tokenizer.ggml.normalizer.lowercase", v,
			 VOCAB_OPT_LOWERCASE);
		get_flag(g, "tokenizer.ggml.normalizer.strip_accents", v,
			 VOCAB_OPT_STRIP_ACCENTS);
	} else {
		int et;
		uint64_t nc;
		const void *dc;

		v->cls = get_id(g, k_bos);
		v->sep = get_id(g, k_eos);
		v->pad = get_id(g, k_pad);
		v->unk = by_text(v, get_id(g, k_unk), "<unk>");
		get_flag(g, "tokenizer.ggml.add_space_prefix", v,
			 VOCAB_OPT_ADD_SPACE_PREFIX);
		get_flag(g, "tokenizer.ggml.remove_extra_whitespaces", v,
			 VOCAB_OPT_REMOVE_EXTRA_WS);
		get_flag(g, "tokenizer.ggml.add_bos_token", v,
			 VOCAB_OPT_ADD_BOS);
		get_flag(g, "tokenizer.ggml.add_eos_token", v,
			 VOCAB_OPT_ADD_EOS);
		if (gguf_get_arr(g, "tokenizer.ggml.precompiled_charsmap", &et,
				 &nc, &dc) == 0) {
			if ((et != GGUF_U8 && et != GGUF_I8) || !dc) {
				snprintf(err, errsize,
					 "'tokenizer.ggml.precompiled_charsmap'"
					 " is not a byte array");
				return CAIRN_INVALID;
			}
			if ((rc = vocab_set_charsmap(v, dc, (size_t)nc, err,
						     errsize)))
				return rc;
		}
	}
	if (v->cls == -2 || v->sep == -2 || v->pad == -2 || v->unk == -2) {
		snprintf(err, errsize, "a special token id is out of range");
		return CAIRN_INVALID;
	}
	return CAIRN_OK;
}

int vocab_load(const struct gguf *g, struct vocab **out, char *err,
	       size_t errsize)
{
	struct vocab *v = NULL;
	struct vocab_src src;
	char dummy[1], dir[4096], path[4200], hex[65];
	unsigned char key[32];
	int cached = 0, rc;

	if (!err) {
		err = dummy;
		errsize = sizeof(dummy);
	}
	*out = NULL;
	err[0] = '\0';
	if ((rc = vocab_src_read(g, &src, err, errsize)))
		return rc;
	if (util_cache_dir(NULL, dir, sizeof(dir)) &&
	    vc_key(g, src.kind, src.n, src.d_sc, src.d_ty, key) == 0) {
		util_hex(key, sizeof(key), hex);
		cached = snprintf(path, sizeof(path), "%s/vocab-%s.bin", dir,
				  hex) < (int)sizeof(path);
		if (cached && (v = vc_read(path, key)) != NULL) {
			*out = v;
			return CAIRN_OK;
		}
	}
	if ((rc = vocab_new(src.kind, &v)))
		return rc;
	if ((rc = vocab_add_all(g, &src, v, err, errsize)))
		goto fail;
	if ((rc = build_hash(v)))
		goto fail;
	if ((rc = vocab_read_specials(g, v, err, errsize)))
		goto fail;
	if ((rc = vocab_build(v, err, errsize)))
		goto fail;
	if (cached)
		vc_write(v, dir, path, key);
	*out = v;
	return CAIRN_OK;
fail:
	if (rc == CAIRN_NOMEM && !err[0])
		snprintf(err, errsize, "out of memory loading the vocabulary");
	vocab_free(v);
	return rc;
}

/* ----------------------------------------------------------- accessors */

int vocab_kind(const struct vocab *v)
{
	return v->kind;
}

size_t vocab_size(const struct vocab *v)
{
	return v->n;
}

const char *vocab_token(const struct vocab *v, int32_t id)
{
	if (id < 0 || (size_t)id >= v->n)
		return NULL;
	return tok_text(v, id);
}

int32_t vocab_cls(const struct vocab *v)
{
	return v->cls;
}

int32_t vocab_sep(const struct vocab *v)
{
	return v->sep;
}

int32_t vocab_pad(const struct vocab *v)
{
	return v->pad;
}

int32_t vocab_unk(const struct vocab *v)
{
	return v->unk;
}

/* ------------------------------------------------------------ encoding */

void vocab_ids_push(struct vocab_ids *o, int32_t id)
{
	if (o->err)
		return;
	if (o->n == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 64;
		int32_t *p = util_realloc(o->id, cap * sizeof(*p));
		if (!p) {
			o->err = CAIRN_NOMEM;
			return;
		}
		o->id = p;
		o->cap = cap;
	}
	o->id[o->n++] = id;
}

static int tokenize(const struct vocab *v, const char *text, size_t len,
		    size_t limit, struct vocab_ids *out)
{
	int rc;

	if (len && !text)
		return CAIRN_INVALID;
	if (util_utf8_invalid_at(text ? text : "", len) >= 0)
		return CAIRN_INVALID;
	if (v->kind == VOCAB_WORDPIECE)
		rc = wordpiece_tokenize(v, text, len, limit, out);
	else
		rc = unigram_tokenize(v, text, len, limit, out);
	if (rc == CAIRN_OK && out->err)
		rc = out->err;
	return rc;
}

int vocab_tokenize_all(const struct vocab *v, const char *text, size_t len,
		       int32_t **ids, size_t *n, size_t *cap)
{
	struct vocab_ids o = { *ids, *n, *cap, CAIRN_OK };
	int rc = tokenize(v, text, len, SIZE_MAX, &o);

	*ids = o.id;
	*n = o.n;
	*cap = o.cap;
	return rc;
}

/* The specials around one sequence: lead/tail ids (-1 = none). */
static void specials(const struct vocab *v, int32_t *lead, int32_t *tail)
{
	if (v->kind == VOCAB_WORDPIECE) {
		*lead = v->cls;
		*tail = v->sep;
	} else {
		*lead = v->add_bos ? v->cls : -1;
		*tail = v->add_eos ? v->sep : -1;
	}
}

int vocab_encode(const struct vocab *v, const char *text, size_t len,
		 int add_special, int32_t *ids, size_t max, size_t *n)
{
	struct vocab_ids o = { NULL, 0, 0, CAIRN_OK };
	int32_t lead = -1, tail = -1;
	size_t k = 0, budget = max;
	int rc;

	*n = 0;
	if (add_special) {
		size_t nspec;

		specials(v, &lead, &tail);
		if (v->kind == VOCAB_WORDPIECE && (lead < 0 || tail < 0))
			return CAIRN_INVALID;
		nspec = (lead >= 0) + (tail >= 0);
		if (max < nspec)
			return CAIRN_INVALID;
		budget = max - nspec;
	}
	rc = tokenize(v, text, len, budget, &o);
	if (rc == CAIRN_OK) {
		size_t m = o.n < budget ? o.n : budget;

		if (lead >= 0)
			ids[k++] = lead;
		if (m)
			memcpy(ids + k, o.id, m * sizeof(*ids));
		k += m;
		if (tail >= 0)
			ids[k++] = tail;
		*n = k;
	}
	cairn_free(o.id);
	return rc;
}

int vocab_encode_pair(const struct vocab *v, const char *a, size_t alen,
		      const char *b, size_t blen, int32_t *ids, size_t max,
		      size_t *n)
{
	struct vocab_ids x = { NULL, 0, 0, CAIRN_OK },
			 y = { NULL, 0, 0, CAIRN_OK };
	int32_t lead, tail;
	size_t fixed, budget, na, nb, k = 0;
	int rc;

	*n = 0;
	specials(v, &lead, &tail);
	if (lead < 0 || tail < 0)
		return CAIRN_INVALID;
	/* [CLS] a [SEP] b [SEP], or <s> a </s></s> b </s> */
	fixed = v->kind == VOCAB_WORDPIECE ? 3 : 4;
	if (max < fixed)
		return CAIRN_INVALID;
	budget = max - fixed;
	if ((rc = tokenize(v, a, alen, budget, &x)) ||
	    (rc = tokenize(v, b, blen, budget, &y)))
		goto out;
	na = x.n < budget ? x.n : budget;
	nb = y.n < budget ? y.n : budget;
	if (na + nb > budget) {
		/*
		 * Longest first: take one token at a time from the longer
		 * side (from b on a tie) until the pair fits; in closed form
		 * the shorter side keeps all when it fits in half, else a
		 * keeps the larger half.
		 */
		size_t half = budget / 2;

		if (na <= nb && na <= half) {
			nb = budget - na;
		} else if (nb < na && nb <= half) {
			na = budget - nb;
		} else {
			na = budget - half;
			nb = half;
		}
	}
	ids[k++] = lead;
	if (na)
		memcpy(ids + k, x.id, na * sizeof(*ids));
	k += na;
	ids[k++] = tail;
	if (v->kind == VOCAB_UNIGRAM)
		ids[k++] = tail;
	if (nb)
		memcpy(ids + k, y.id, nb * sizeof(*ids));
	k += nb;
	ids[k++] = tail;
	*n = k;
out:
	cairn_free(x.id);
	cairn_free(y.id);
	return rc;
}

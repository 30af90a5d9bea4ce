/*
 * unigram.c -- SentencePiece's Unigram tokeniser (tokenizer.ggml.model
 * "t5"), as XLM-RoBERTa GGUFs (bge-m3, multilingual-e5) carry it.
 *
 * Layer: model files, inside vocab (sees struct vocab through
 * VOCAB_INTERNAL).
 *
 * Steps, as SentencePiece does them:
 *  1. normalise: at each position the longest user-defined token is kept
 *     verbatim, else the longest match of the precompiled charsmap (a
 *     XOR-compressed double-array trie over UTF-8 bytes whose leaves point
 *     at NUL-terminated replacements; SentencePiece's nmt_nfkc rules) is
 *     replaced, else one character is copied;
 *  2. whitespace: spaces become "▁"; with remove_extra_whitespaces leading
 *     and trailing spaces go and runs collapse to one; with
 *     add_space_prefix a "▁" goes before the text;
 *  3. Viterbi: the segmentation with the highest sum of piece scores
 *     (user-defined pieces score 0); a character no piece starts with is
 *     an unknown token scored (lowest normal score - 10), consecutive
 *     unknowns merge into one, or become <0xXX> byte tokens when the
 *     vocabulary has all 256 of them.
 * Text is cut into words at each "▁" it inserts when no piece holds a "▁"
 * past its first byte (true of XLM-R), which gives the same segmentation
 * in less memory and lets a capped call stop early. A word longer than
 * MAX_CHUNK bytes (or a capped call's bound, see below) is cut too: the
 * one approximation, at a place no cap keeps.
 *
 * Holds: nothing between calls.
 *
 * Must never: index the charsmap without a bounds check, or loop on a
 * malformed one.
 */
#define VOCAB_INTERNAL
#include <float.h>
#include <string.h>

#include "internal.h"
#include "vocab.h"

#define UNK_PENALTY 10.0 /* SentencePiece's kUnkPenalty */
/*
 * Longest charsmap replacement used (XLM-R's longest is 33 bytes): bounds
 * how much a hostile file can grow a text.
 */
#define CHARSMAP_MAX_REPL 128
/*
 * Viterbi runs over one word at a time, but a text without spaces (CJK) is
 * one word: past this many normalised bytes it is cut at a character
 * boundary, bounding the lattice (24 bytes a byte). A capped call cuts at
 * 4 x limit x the longest piece instead (at least 64 KiB): its first
 * `limit` tokens lie in the first quarter, far from the cut.
 */
#define MAX_CHUNK ((size_t)1 << 20)
#define MIN_CHUNK ((size_t)1 << 16)

static const char SPACE[] = "\xE2\x96\x81"; /* U+2581, the escaped space */

int unigram_prepare(struct vocab *v, char *err, size_t errsize)
{
	float lo = FLT_MAX;
	int bytes = 0;

	(void)err;
	(void)errsize;
	v->split_ok = 1;
	for (size_t i = 0; i < v->n; i++) {
		const char *s = v->text.buf + v->off[i];
		int t = v->type[i];

		if (t == VOCAB_T_NORMAL && v->score[i] < lo)
			lo = v->score[i];
		if (t == VOCAB_T_BYTE && v->len[i] == 6 &&
		    memcmp(s, "<0x", 3) == 0 && s[5] == '>') {
			unsigned x = 0;
			int ok = 1;

			for (int k = 3; k < 5; k++) {
				char c = s[k];
				x <<= 4;
				if (c >= '0' && c <= '9')
					x |= (unsigned)(c - '0');
				else if (c >= 'A' && c <= 'F')
					x |= (unsigned)(c - 'A' + 10);
				else if (c >= 'a' && c <= 'f')
					x |= (unsigned)(c - 'a' + 10);
				else
					ok = 0;
			}
			if (ok && v->byte_id[x] < 0) {
				v->byte_id[x] = (int32_t)i;
				bytes++;
			}
		}
		if ((t == VOCAB_T_NORMAL || t == VOCAB_T_USER ||
		     t == VOCAB_T_UNUSED) &&
		    v->len[i] > 3 && memmem(s + 1, v->len[i] - 1, SPACE, 3))
			v->split_ok = 0;
	}
	v->unk_score = (lo == FLT_MAX ? 0.0 : (double)lo) - UNK_PENALTY;
	v->byte_fallback = bytes == 256;
	return CAIRN_OK;
}

/* ------------------------------------------------------------ charsmap */

/*
 * Longest prefix of s[0..len) that the charsmap replaces: its length
 * (0 for none) and the replacement in *repl / *rlen. The entry layout:
 * bits 10..30 BASE (shifted left by 8 more when bit 9 is set), bit 8 LEAF,
 * bits 0..7 and 31 LCHECK; a leaf's BASE leads to an entry whose low 31
 * bits are the replacement's offset.
 */
static size_t charsmap_match(const struct vocab *v, const char *s, size_t len,
			     const char **repl, size_t *rlen)
{
	const uint32_t *a = v->xcda;
	size_t n = v->n_xcda, best = 0, off = 0;
	uint32_t idx;

	if (!a || n == 0)
		return 0;
#define BASE(e) (((e) >> 10) << (((e) & (1u << 9)) >> 6))
	idx = BASE(a[0]);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		uint32_t e;

		if (c == 0)
			break;
		idx ^= c;
		if (idx >= n)
			break;
		e = a[idx];
		if ((e & ((1u << 31) | 0xFFu)) != c)
			break;
		idx ^= BASE(e);
		if ((e >> 8) & 1) {
			if (idx >= n)
				break;
			best = i + 1;
			off = a[idx] & 0x7FFFFFFFu;
		}
	}
#undef BASE
	if (best == 0 || off >= v->n_repl)
		return 0;
	{
		const char *r = v->repl + off;
		const char *z = memchr(r, '\0', v->n_repl - off);

		/* unterminated or implausibly long: ignore the rule */
		if (!z || z - r > CHARSMAP_MAX_REPL)
			return 0;
		*repl = r;
		*rlen = (size_t)(z - r);
	}
	return best;
}

/* Longest user-defined token at s[0..len) (kept verbatim), or 0. */
static size_t user_match(const struct vocab *v, const char *s, size_t len)
{
	const struct vocab_trie *t = &v->user;
	const struct vocab_node *node = t->node;
	size_t best = 0;

	for (size_t i = 0; i < len && node; i++) {
		node = vocab_trie_step(t, node, (unsigned char)s[i]);
		if (node && node->id >= 0)
			best = i + 1;
	}
	return best;
}

/* ------------------------------------------------------------- Viterbi */

struct lattice {
	double *score;  /* best score of segmenting the first i bytes */
	int32_t *id;    /* its last token */
	uint32_t *from; /* where that token starts */
	int32_t *rev;   /* backtracking scratch */
	size_t cap;     /* entries allocated (bytes + 1) */
};

struct state {
	const struct vocab *v;
	struct vocab_ids *out;
	size_t limit;       /* stop once out holds this many */
	size_t chunk;       /* cut a word longer than this many bytes */
	struct sbuf norm;   /* normalised bytes of the pending chunk */
	struct lattice lat; /* Viterbi tables, reused */
	int prev_unk;       /* the last id pushed was a merged unknown */
	int err;            /* CAIRN_NOMEM */
};

static int lattice_fit(struct lattice *l, size_t n)
{
	if (n <= l->cap)
		return CAIRN_OK;
	cairn_free(l->score);
	cairn_free(l->id);
	cairn_free(l->from);
	cairn_free(l->rev);
	l->score = util_calloc(n, sizeof(*l->score));
	l->id = util_calloc(n, sizeof(*l->id));
	l->from = util_calloc(n, sizeof(*l->from));
	l->rev = util_calloc(n, sizeof(*l->rev));
	l->cap = (l->score && l->id && l->from && l->rev) ? n : 0;
	return l->cap ? CAIRN_OK : CAIRN_NOMEM;
}

static void push_unknown(struct state *st, const char *s, size_t len)
{
	const struct vocab *v = st->v;

	if (v->byte_fallback) {
		for (size_t i = 0; i < len; i++)
			vocab_ids_push(st->out,
				       v->byte_id[(unsigned char)s[i]]);
		st->prev_unk = 0;
		return;
	}
	if (!st->prev_unk)
		vocab_ids_push(st->out, v->unk);
	st->prev_unk = 1;
}

/* Best segmentation of s[0..n) appended to the output. */
static void viterbi(struct state *st, const char *s, size_t n)
{
	const struct vocab *v = st->v;
	const struct vocab_trie *t = &v->match;
	struct lattice *l = &st->lat;
	size_t k = 0;

	if (n == 0)
		return;
	if (n >= UINT32_MAX || lattice_fit(l, n + 1)) {
		st->err = CAIRN_NOMEM;
		return;
	}
	l->score[0] = 0;
	for (size_t i = 1; i <= n; i++) {
		l->score[i] = -DBL_MAX;
		l->id[i] = -1;
		l->from[i] = 0;
	}
	for (size_t i = 0; i < n;) {
		size_t cu = util_u8len((unsigned char)s[i]);
		const struct vocab_node *node = t->node;
		int single = 0;

		if (cu > n - i)
			cu = n - i;
		for (size_t p = i; p < n && node; p++) {
			node = vocab_trie_step(t, node, (unsigned char)s[p]);
			if (node && node->id >= 0) {
				int32_t id = node->id;
				double sc = v->type[id] == VOCAB_T_USER
						    ? 0.0
						    : v->score[id];
				double cand = l->score[i] + sc;

				if (p + 1 - i == cu)
					single = 1;
				if (cand > l->score[p + 1]) {
					l->score[p + 1] = cand;
					l->id[p + 1] = id;
					l->from[p + 1] = (uint32_t)i;
				}
			}
		}
		if (!single) {
			double cand = l->score[i] + v->unk_score;

			if (cand > l->score[i + cu]) {
				l->score[i + cu] = cand;
				l->id[i + cu] = -1; /* unknown */
				l->from[i + cu] = (uint32_t)i;
			}
		}
		i += cu;
	}
	/* backtrack: rev holds end offsets, last first */
	for (size_t e = n; e > 0; e = l->from[e])
		l->rev[k++] = (int32_t)e;
	while (k--) {
		size_t e = (size_t)l->rev[k], b = l->from[e];

		if (l->id[e] < 0) {
			push_unknown(st, s + b, e - b);
		} else {
			vocab_ids_push(st->out, l->id[e]);
			st->prev_unk = 0;
		}
	}
}

static void flush(struct state *st)
{
	if (st->norm.err) {
		/* only a chunk over 1 GiB gets here: as out of memory */
		st->err = CAIRN_NOMEM;
		return;
	}
	if (st->out->n < st->limit)
		viterbi(st, st->norm.buf, st->norm.len);
	sbuf_reset(&st->norm);
}

/* Append the escaped space; a word boundary when splitting is exact. */
static void add_space(struct state *st)
{
	if (st->v->split_ok)
		flush(st);
	sbuf_add(&st->norm, SPACE, 3);
}

int unigram_tokenize(const struct vocab *v, const char *text, size_t len,
		     size_t limit, struct vocab_ids *out)
{
	struct state st;
	int in_word = 0, seen = 0, rc;
	size_t i = 0;

	memset(&st, 0, sizeof(st));
	st.v = v;
	st.out = out;
	st.limit = limit;
	sbuf_init(&st.norm, SBUF_DEFAULT_LIMIT);
	st.chunk = MAX_CHUNK;
	if (limit < MAX_CHUNK / 4 / (v->max_len ? v->max_len : 1)) {
		st.chunk = 4 * limit * (v->max_len ? v->max_len : 1);
		if (st.chunk < MIN_CHUNK)
			st.chunk = MIN_CHUNK;
	}
	while (i < len && !st.err && out->n < limit && !out->err) {
		const char *piece = text + i;
		size_t plen, used;

		used = user_match(v, text + i, len - i);
		if (used) {
			plen = used;
		} else if ((used = charsmap_match(v, text + i, len - i, &piece,
						  &plen)) == 0) {
			used = plen = util_u8len((unsigned char)text[i]);
			if (used > len - i)
				used = plen = len - i;
		}
		for (size_t k = 0; k < plen; k++) {
			char c = piece[k];

			if (c != ' ') {
				if (!in_word) {
					in_word = 1;
					if (v->remove_extra_ws
						    ? (seen ||
						       v->add_space_prefix)
						    : (!seen &&
						       v->add_space_prefix))
						add_space(&st);
					seen = 1;
				}
				sbuf_addc(&st.norm, c);
			} else {
				in_word = 0;
				if (!v->remove_extra_ws)
					add_space(&st);
			}
		}
		i += used;
		/* a piece ends on a character boundary: a safe place to cut */
		if (st.norm.len >= st.chunk)
			flush(&st);
	}
	if (!st.err)
		flush(&st);
	rc = st.err;
	sbuf_release(&st.norm);
	cairn_free(st.lat.score);
	cairn_free(st.lat.id);
	cairn_free(st.lat.from);
	cairn_free(st.lat.rev);
	return rc;
}

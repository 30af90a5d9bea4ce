/*
 * tokenize.c -- the cairn tokenizer (tokenize.h says what it emits).
 *
 * Layer: above util; uses utf8proc, libstemmer and OpenCC, never SQLite.
 *
 * How it works: tok_run walks the original text one normalisation unit at a
 * time (a starter plus its combining marks), normalises the unit with
 * utf8proc into a fixed buffer and feeds each resulting code point, tagged
 * with the unit's original byte range and letter case, to a run
 * accumulator. A run is a Latin-style identifier, a Han run or a
 * bigram-script run; when the class of the input changes, or the run
 * reaches TOK_MAX_RUN_CPS, the run is flushed into tokens. Every buffer is
 * bounded by those caps, so time is linear and memory per call constant.
 *
 * The tables it reads (the jieba dictionary, the t2s character table) are
 * built, cached and mapped by tokenize_tables.c, which also holds tok_open
 * and tok_close; tokenize_int.h is what the two files share.
 *
 * Invariants: nothing in struct tok is written after tok_open except the
 * stemmer's scratch and the OpenCC converter opened on first need; emitted
 * offsets satisfy start <= end <= len; the first token of a call is never
 * colocated.
 *
 * Must never: recurse, use VLAs, or read past the input on any byte
 * sequence.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libstemmer.h>
#include <pthread.h>
#include <utf8proc.h>

#include "internal.h"
#include "tokenize.h"
#include "tokenize_int.h"

/* One part of an identifier: items [b, e) of segment seg. */
struct part {
	size_t b;   /* first item */
	size_t e;   /* one past the last item */
	size_t seg; /* index of the joiner-separated segment */
	int alt;    /* 1: split from the part before at a letter/digit change
		     * (digit_break); emitted colocated with it */
};

/* One character of a Han or bigram run, as the segmenter sees it. */
struct hchar {
	size_t off;   /* byte offset in the run's (converted) UTF-8 */
	size_t start; /* original byte range: start */
	size_t end;   /* original byte range: end */
	size_t next;  /* best route: index of the last char of the word here */
	double score; /* best route: log probability from here to the end */
};

/* The state of one tok_run call. */
struct run {
	struct tok *t;          /* the tokenizer */
	tok_emit_fn emit;       /* the caller's callback */
	void *user;             /* its argument */
	char *err;              /* where internal errors are described */
	size_t errsize;         /* size of err */
	int emitted;            /* a token was emitted in this call */
	int type;               /* enum run_type of the buffered items */
	struct item *items;     /* the buffered run */
	size_t n;               /* items buffered */
	size_t committed;       /* word runs: items before trailing joiners */
	size_t icap;            /* capacity of items */
	struct part *parts;     /* identifier parts scratch */
	size_t pcap;            /* capacity of parts */
	struct hchar *hc;       /* Han / bigram run characters, plus one */
	size_t hcap;            /* capacity of hc */
	struct sbuf src;        /* UTF-8 of the run being segmented */
	int32_t norm[NORM_BUF_CPS]; /* one unit's normalised code points */
	char tokbuf[TOK_MAX_TOKEN_BYTES + 8]; /* token being built */
};

/* ------------------------------------------------------------- helpers */

static int is_bigram_script(int32_t cp)
{
	return (cp >= 0x3041 && cp <= 0x309F) || /* hiragana */
	       (cp >= 0x30A1 && cp <= 0x30FA) || /* katakana */
	       (cp >= 0x30FC && cp <= 0x30FF) ||
	       (cp >= 0x31F0 && cp <= 0x31FF) ||
	       (cp >= 0xAC00 && cp <= 0xD7FF) || /* Hangul syllables */
	       (cp >= 0x1100 && cp <= 0x11FF) || /* Hangul jamo */
	       (cp >= 0x3131 && cp <= 0x318E) || (cp >= 0xA960 && cp <= 0xA97F);
}

static int classify(int32_t cp)
{
	utf8proc_category_t cat;

	if (cp < 0x80) {
		if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
		    (cp >= '0' && cp <= '9'))
			return CLS_WORD;
		if (cp == '_' || cp == '.' || cp == '/')
			return CLS_JOIN;
		if (cp == '\'')
			return CLS_APOS;
		return CLS_SEP;
	}
	if (cp == 0x2019)
		return CLS_APOS;
	if (is_han(cp))
		return CLS_HAN;
	if (is_bigram_script(cp))
		return CLS_BIGRAM;
	cat = utf8proc_category(cp);
	if ((cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_NO))
		return CLS_WORD; /* L*, M*, N* are contiguous in the enum */
	return CLS_SEP;
}

static int case_kind(utf8proc_category_t cat)
{
	if (cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LT)
		return KIND_UPPER;
	if (cat == UTF8PROC_CATEGORY_LL)
		return KIND_LOWER;
	return KIND_OTHER;
}

/* ------------------------------------------------------------ emitting */

static int run_emit(struct run *r, const char *tok, size_t len, size_t start,
		    size_t end, int colocated)
{
	if (len == 0)
		return CAIRN_OK;
	if (!r->emitted)
		colocated = 0;
	r->emitted = 1;
	return r->emit(r->user, tok, len, start, end, colocated);
}

static int run_nomem(struct run *r)
{
	set_err(r->err, r->errsize, "out of memory tokenizing");
	return CAIRN_NOMEM;
}

/*
 * UTF-8 of items [b, e) into r->tokbuf. Returns the length, stopping at
 * the last whole character that fits TOK_MAX_TOKEN_BYTES; *cut is set when
 * something did not fit.
 */
static size_t encode_items(struct run *r, size_t b, size_t e, int *cut)
{
	unsigned char tmp[4];
	size_t len = 0, i;

	*cut = 0;
	for (i = b; i < e; i++) {
		utf8proc_ssize_t n = utf8proc_encode_char(r->items[i].cp, tmp);

		if (len + (size_t)n > TOK_MAX_TOKEN_BYTES) {
			*cut = 1;
			break;
		}
		memcpy(r->tokbuf + len, tmp, (size_t)n);
		len += (size_t)n;
	}
	return len;
}

/* ------------------------------------------------------------ identifiers */


/*
 * Is there a change between cased letters and digits between items i-1
 * and i (EMNLP2022, python3, 100ms)? Not a camelCase boundary.
 */
static int digit_break(const struct item *it, size_t i)
{
	const struct item *a = &it[i - 1], *b = &it[i];

	if (a->cls != CLS_WORD || b->cls != CLS_WORD || a->start == b->start)
		return 0;
#ifndef CAIRN_MUTATE_NO_DIGIT_SPLIT
	if (a->kind == KIND_DIGIT && b->kind == KIND_UPPER)
		return 0; /* camelCase already: 2Fast */
	return ((a->kind == KIND_UPPER || a->kind == KIND_LOWER) &&
		b->kind == KIND_DIGIT) ||
	       (a->kind == KIND_DIGIT && b->kind == KIND_LOWER);
#else
	return 0;
#endif
}

/* Is there a camelCase boundary between items i-1 and i? */
static int camel_break(const struct item *it, size_t i, size_t n)
{
	const struct item *a = &it[i - 1], *b = &it[i];

	if (a->cls != CLS_WORD || b->cls != CLS_WORD || a->start == b->start)
		return 0;
	if (b->kind != KIND_UPPER)
		return 0;
	if (a->kind == KIND_LOWER || a->kind == KIND_DIGIT)
		return 1;
	return a->kind == KIND_UPPER && i + 1 < n &&
	       it[i + 1].cls == CLS_WORD && it[i + 1].kind == KIND_LOWER;
}

/* Emit one identifier part, stemmed when it is plain a-z English. */
static int emit_part(struct run *r, const struct part *pt, int colocated)
{
	int cut, stemmable = 1, letters = 0;
	size_t len = encode_items(r, pt->b, pt->e, &cut), i;
	const char *out = r->tokbuf;

	for (i = 0; i < len; i++) {
		char c = r->tokbuf[i];

		if (c >= 'a' && c <= 'z')
			letters = 1;
		else if (c != '\'')
			stemmable = 0;
	}
	if (r->t->stem && stemmable && letters) {
		const sb_symbol *s = sb_stemmer_stem(
			r->t->stem, (const sb_symbol *)r->tokbuf, (int)len);
		int slen;

		if (!s)
			return run_nomem(r);
		slen = sb_stemmer_length(r->t->stem);
		if (slen > 0) {
			out = (const char *)s;
			len = (size_t)slen;
		}
	}
	return run_emit(r, out, len, r->items[pt->b].start,
			r->items[pt->e - 1].end, colocated);
}

/* Emit items [b, e) as one unstemmed token, unless it is too long. */
static int emit_whole(struct run *r, size_t b, size_t e)
{
	int cut;
	size_t len = encode_items(r, b, e, &cut);

	if (cut)
		return CAIRN_OK;
	return run_emit(r, r->tokbuf, len, r->items[b].start,
			r->items[e - 1].end, 1);
}

/* Tokens of the identifier in items [0, n). */
static int word_flush(struct run *r, size_t n)
{
	const struct item *it = r->items;
	size_t np = 0, seg = 0, i = 0, k, m;
	void *p;
	int rc;

	p = grow(r->parts, &r->pcap, n, sizeof(*r->parts));
	if (!p)
		return run_nomem(r);
	r->parts = p;
	while (i < n) {
		size_t b;

		if (it[i].cls == CLS_JOIN) {
			while (i < n && it[i].cls == CLS_JOIN)
				i++;
			seg++;
			continue;
		}
		b = i++;
		while (i < n && it[i].cls != CLS_JOIN &&
		       !camel_break(it, i, n) && !digit_break(it, i))
			i++;
		r->parts[np].b = b;
		r->parts[np].e = i;
		r->parts[np].seg = seg;
		r->parts[np].alt = np > 0 && r->parts[np - 1].e == b &&
				   digit_break(it, b);
		np++;
	}
	for (k = 0; k < np; k++) {
		const struct part *pt = &r->parts[k];

		/*
		 * A part split off at a letter/digit change shares the
		 * position before it: "emnlp2022" stays one word long, so
		 * the lengths BM25 normalises by do not change.
		 */
		rc = emit_part(r, pt, pt->alt);
		if (rc)
			return rc;
		if (k == 0 && np > 1) {
			rc = emit_whole(r, 0, n);
			if (rc)
				return rc;
		}
		if (seg == 0 || (k > 0 && r->parts[k - 1].seg == pt->seg))
			continue;
		/* first part of a segment of a multi-segment identifier */
		m = k;
		while (m + 1 < np && r->parts[m + 1].seg == pt->seg)
			m++;
		if (m > k) {
			rc = emit_whole(r, pt->b, r->parts[m].e);
			if (rc)
				return rc;
		}
	}
	return CAIRN_OK;
}

/* ------------------------------------------------------------------ Han */

/* Emit characters [a, b) of the segmented run in text. */
static int emit_chars(struct run *r, const char *text, size_t a, size_t b,
		      int colocated)
{
	return run_emit(r, text + r->hc[a].off, r->hc[b].off - r->hc[a].off,
			r->hc[a].start, r->hc[b - 1].end, colocated);
}

/*
 * A run of single characters [a, b): one character is itself; two or more
 * become bigrams, each followed by its first character colocated, and the
 * last character. With use_dict, a run that is a dictionary word is
 * emitted as its characters (what jieba does).
 */
static int singles_flush(struct run *r, const char *text, size_t a, size_t b,
			 int use_dict)
{
	const struct hchar *hc = r->hc;
	size_t i;
	int rc, as_chars = 0;

	if (b - a == 1)
		return emit_chars(r, text, a, b, 0);
	if (use_dict)
		as_chars = dict_freq(&r->t->dict, text + hc[a].off,
				     hc[b].off - hc[a].off) != 0;
	for (i = a; i + 1 < b; i++) {
		if (as_chars) {
			rc = emit_chars(r, text, i, i + 1, 0);
		} else {
			rc = emit_chars(r, text, i, i + 2, 0);
			if (!rc)
				rc = emit_chars(r, text, i, i + 1, 1);
		}
		if (rc)
			return rc;
	}
	return emit_chars(r, text, b - 1, b, 0);
}

/* A path word [x, y): its dictionary 2- and 3-grams first, then itself. */
static int han_word(struct run *r, const char *text, size_t x, size_t y)
{
	const struct hchar *hc = r->hc;
	size_t L = y - x, i, g;
	int rc;

	for (g = 2; g <= 3; g++) {
		if (L <= g)
			break;
		for (i = x; i + g <= y; i++) {
			if (!dict_freq(&r->t->dict, text + hc[i].off,
				       hc[i + g].off - hc[i].off))
				continue;
			rc = emit_chars(r, text, i, i + g, 0);
			if (rc)
				return rc;
		}
	}
	return emit_chars(r, text, x, y, 0);
}

/*
 * Segment the m characters described by r->hc in text like jieba without
 * HMM: route[i] = max over dictionary words i..j of log(freq) - log(total)
 * + route[j+1] (ties to the longer word), then walk the route.
 */
static int han_segment(struct run *r, const char *text, size_t m)
{
	const struct dict *d = &r->t->dict;
	struct hchar *hc = r->hc;
	size_t idx, x, sb = SIZE_MAX;
	int rc;

	hc[m].score = 0.0;
	for (idx = m; idx-- > 0;) {
		uint64_t h = FNV64_BASIS;
		double best = 0.0;
		size_t bestx = SIZE_MAX, i;

		for (i = idx; i < m && i - idx < d->maxchars; i++) {
			const struct dict_entry *e;

			h = fnv_extend(h, text + hc[i].off,
				       hc[i + 1].off - hc[i].off);
			e = dict_find(d, text + hc[idx].off,
				      hc[i + 1].off - hc[idx].off, h);
			if (!e)
				break;
			if (e->freq) {
				double s = log((double)e->freq) - d->logtotal +
					   hc[i + 1].score;

				if (bestx == SIZE_MAX || s >= best) {
					best = s;
					bestx = i;
				}
			}
		}
		if (bestx == SIZE_MAX) {
			best = 0.0 - d->logtotal + hc[idx + 1].score;
			bestx = idx;
		}
		hc[idx].score = best;
		hc[idx].next = bestx;
	}
	x = 0;
	while (x < m) {
		size_t y = hc[x].next + 1;

		if (y - x == 1) {
			if (sb == SIZE_MAX)
				sb = x;
			x = y;
			continue;
		}
		if (sb != SIZE_MAX) {
			rc = singles_flush(r, text, sb, x, 1);
			if (rc)
				return rc;
			sb = SIZE_MAX;
		}
		rc = han_word(r, text, x, y);
		if (rc)
			return rc;
		x = y;
	}
	if (sb != SIZE_MAX)
		return singles_flush(r, text, sb, m, 1);
	return CAIRN_OK;
}

/*
 * Fill r->hc for the UTF-8 text[0, tlen). When it has exactly n characters
 * each maps to items[i]'s original range, otherwise all map to the run's.
 * Returns the number of characters, or SIZE_MAX when out of memory.
 */
static size_t map_chars(struct run *r, const char *text, size_t tlen,
			size_t n)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t m = 0, p = 0, i;
	int32_t cp;

	void *np;

	while (p < tlen) {
		np = grow(r->hc, &r->hcap, m + 2, sizeof(*r->hc));
		if (!np)
			return SIZE_MAX;
		r->hc = np;
		r->hc[m++].off = p;
		p += utf8_decode(s + p, tlen - p, &cp);
	}
	np = grow(r->hc, &r->hcap, m + 1, sizeof(*r->hc));
	if (!np)
		return SIZE_MAX;
	r->hc = np;
	r->hc[m].off = tlen;
	for (i = 0; i < m; i++) {
		r->hc[i].start = m == n ? r->items[i].start : r->items[0].start;
		r->hc[i].end = m == n ? r->items[i].end : r->items[n - 1].end;
	}
	return m;
}

/* UTF-8 of items [0, n) into r->src. */
static int items_to_src(struct run *r, size_t n)
{
	unsigned char tmp[4];
	size_t i;

	sbuf_reset(&r->src);
	for (i = 0; i < n; i++) {
		utf8proc_ssize_t k = utf8proc_encode_char(r->items[i].cp, tmp);

		sbuf_add(&r->src, tmp, (size_t)k);
	}
	return r->src.err ? run_nomem(r) : CAIRN_OK;
}

/* Tokens of the Han run in items [0, n). */
static int han_flush(struct run *r, size_t n)
{
	const char *text;
	char *conv = NULL;
	size_t tlen, m;
	int rc, use_cc;

	use_cc = tok_t2s_items(r->t, r->items, n);
	rc = items_to_src(r, n);
	if (rc)
		return rc;
	text = r->src.buf;
	tlen = r->src.len;
	if (use_cc && !r->t->cc) {
		rc = tok_open_cc(r->t, r->err, r->errsize);
		if (rc)
			return rc;
	}
	if (use_cc) {
		conv = tok_cc_convert(r->t, r->src.buf, r->src.len);
		if (conv && util_utf8_invalid_at(conv, strlen(conv)) < 0) {
			text = conv;
			tlen = strlen(conv);
		}
	}
	m = map_chars(r, text, tlen, n);
	if (m == SIZE_MAX) {
		rc = run_nomem(r);
		goto out;
	}
	if (r->t->no_segment && m > 0) {
		/* test only: the whole run, cut to a token's length */
		while (m > 1 && r->hc[m].off > TOK_MAX_TOKEN_BYTES)
			m--;
		rc = emit_chars(r, text, 0, m, 0);
		goto out;
	}
	rc = han_segment(r, text, m);
out:
	if (conv)
		tok_cc_free(conv);
	return rc;
}

/* Tokens of the kana / Hangul run in items [0, n). */
static int bigram_flush(struct run *r, size_t n)
{
	size_t m;
	int rc;

	rc = items_to_src(r, n);
	if (rc)
		return rc;
	m = map_chars(r, r->src.buf, r->src.len, n);
	if (m == SIZE_MAX)
		return run_nomem(r);
	return singles_flush(r, r->src.buf, 0, m, 0);
}

/* ---------------------------------------------------------- accumulator */

static int run_flush(struct run *r)
{
	int type = r->type, rc = CAIRN_OK;
	size_t n = type == RUN_WORD ? r->committed : r->n;

	r->type = RUN_NONE;
	r->n = 0;
	r->committed = 0;
	if (n == 0)
		return CAIRN_OK;
	if (type == RUN_WORD)
		rc = word_flush(r, n);
	else if (type == RUN_HAN)
		rc = han_flush(r, n);
	else if (type == RUN_BIGRAM)
		rc = bigram_flush(r, n);
	return rc;
}

/* May the word item it follow the pending joiners of the word run? */
static int joiners_ok(const struct run *r, const struct item *it)
{
	size_t pending = r->n - r->committed, i;

	for (i = r->committed; i < r->n; i++) {
		if (r->items[i].cls != CLS_APOS)
			continue;
		/* an apostrophe only between two letters, alone */
		return pending == 1 && it->kind != KIND_DIGIT &&
		       r->items[r->committed - 1].cls == CLS_WORD &&
		       r->items[r->committed - 1].kind != KIND_DIGIT;
	}
	return 1;
}

static int run_append(struct run *r, const struct item *it)
{
	void *p = grow(r->items, &r->icap, r->n + 1, sizeof(*r->items));

	if (!p)
		return run_nomem(r);
	r->items = p;
	r->items[r->n++] = *it;
	return CAIRN_OK;
}

static int run_add(struct run *r, const struct item *it)
{
	int want = RUN_NONE, rc;

	if (it->cls == CLS_WORD)
		want = RUN_WORD;
	else if (it->cls == CLS_HAN)
		want = RUN_HAN;
	else if (it->cls == CLS_BIGRAM)
		want = RUN_BIGRAM;
	if (r->type == RUN_WORD) {
		if (it->cls == CLS_JOIN || it->cls == CLS_APOS) {
			if (r->n - r->committed < MAX_PENDING_JOINERS)
				return run_append(r, it);
			return run_flush(r);
		}
		if (want == RUN_WORD && r->committed < TOK_MAX_RUN_CPS &&
		    joiners_ok(r, it)) {
			rc = run_append(r, it);
			r->committed = r->n;
			return rc;
		}
	} else if (r->type != RUN_NONE && r->type == want &&
		   r->n < TOK_MAX_RUN_CPS) {
		return run_append(r, it);
	}
	rc = run_flush(r);
	if (rc || want == RUN_NONE)
		return rc;
	r->type = want;
	rc = run_append(r, it);
	r->committed = r->n;
	return rc;
}

static int feed_cp(struct run *r, int32_t cp, size_t start, size_t end,
		   int kind)
{
	struct item it;

	it.start = start;
	it.end = end;
	it.cp = cp;
	it.cls = (unsigned char)classify(cp);
	it.kind = KIND_OTHER;
	if (it.cls == CLS_APOS) {
		it.cp = '\'';
	} else if (it.cls == CLS_WORD) {
		utf8proc_category_t cat;

		if (cp < 0x80)
			cat = cp <= '9' ? UTF8PROC_CATEGORY_ND
					: UTF8PROC_CATEGORY_LL;
		else
			cat = utf8proc_category(cp);
		if (cat >= UTF8PROC_CATEGORY_ND && cat <= UTF8PROC_CATEGORY_NO)
			it.kind = KIND_DIGIT;
		else
			it.kind = (unsigned char)kind;
	}
	return run_add(r, &it);
}

/* Normalise the unit starting at *pos, feed its code points, advance. */
static int norm_unit(struct run *r, const char *text, size_t len,
		     size_t *pos)
{
	const unsigned char *s = (const unsigned char *)text;
	const utf8proc_property_t *prop;
	size_t p = *pos, q, count = 1, n;
	utf8proc_ssize_t k, i;
	int32_t cp, cp2;
	int kind, rc;

	if (s[p] < 0x80 && (p + 1 >= len || s[p + 1] < 0x80)) {
		int c = s[p];

		*pos = p + 1;
		kind = KIND_OTHER;
		if (c >= 'A' && c <= 'Z') {
			c += 'a' - 'A';
			kind = KIND_UPPER;
		} else if (c >= 'a' && c <= 'z') {
			kind = KIND_LOWER;
		}
		return feed_cp(r, c, p, p + 1, kind);
	}
	n = utf8_decode(s + p, len - p, &cp);
	q = p + n;
	while (q < len && count < NORM_MAX_UNIT_CPS) {
		size_t n2 = utf8_decode(s + q, len - q, &cp2);

		if (utf8proc_get_property(cp2)->combining_class == 0)
			break;
		q += n2;
		count++;
	}
	*pos = q;
	prop = utf8proc_get_property(cp);
	kind = case_kind((utf8proc_category_t)prop->category);
	if (count == 1 && prop->decomp_seqindex == UINT16_MAX &&
	    prop->casefold_seqindex == UINT16_MAX && !prop->ignorable)
		return feed_cp(r, cp, p, q, kind);
	k = utf8proc_decompose_custom(s + p, (utf8proc_ssize_t)(q - p),
				      r->norm, NORM_BUF_CPS, NORM_OPTS, NULL,
				      NULL);
	if (k >= 0 && k <= NORM_BUF_CPS)
		k = utf8proc_normalize_utf32(r->norm, k, NORM_OPTS);
	else
		k = -1;
	if (k < 0)
		return feed_cp(r, ' ', p, q, KIND_OTHER); /* a separator */
	for (i = 0; i < k; i++) {
		rc = feed_cp(r, r->norm[i], p, q, kind);
		if (rc)
			return rc;
	}
	return CAIRN_OK;
}

/*
 * Tokenise text[0, len): validate, handle the raw escape, then normalise
 * unit by unit into the run accumulator and flush the last run.
 */
int tok_run(struct tok *t, const char *text, size_t len, unsigned flags,
	    tok_emit_fn emit, void *user, char *err, size_t errsize)
{
	struct run *r = NULL;
	size_t p = 0;
	long bad;
	int rc = CAIRN_OK;

	if (err && errsize)
		err[0] = '\0';
	if (!t || !emit || (!text && len)) {
		set_err(err, errsize, "tok_run: invalid argument");
		return CAIRN_INVALID;
	}
	if (len == 0)
		return CAIRN_OK;
	bad = util_utf8_invalid_at(text, len);
	if (bad >= 0) {
		if (err && errsize)
			snprintf(err, errsize, "invalid UTF-8 at byte %ld",
				 bad);
		return CAIRN_INVALID;
	}
	if ((flags & TOK_QUERY) && text[0] == TOK_RAW) {
		if (len == 1)
			return CAIRN_OK;
		return emit(user, text + 1, len - 1, 1, len, 0);
	}
	r = cairn_malloc(sizeof(*r));
	if (!r) {
		set_err(err, errsize, "out of memory tokenizing");
		return CAIRN_NOMEM;
	}
	memset(r, 0, offsetof(struct run, norm));
	r->t = t;
	r->emit = emit;
	r->user = user;
	r->err = err;
	r->errsize = errsize;
	sbuf_init(&r->src, 0);
	while (p < len) {
		rc = norm_unit(r, text, len, &p);
		if (rc)
			goto out;
	}
	rc = run_flush(r);
out:
	sbuf_release(&r->src);
	cairn_free(r->items);
	cairn_free(r->parts);
	cairn_free(r->hc);
	cairn_free(r);
	return rc;
}

/*
 * secret_scan.c -- the secret filter's entry points (secret.h): the scan of
 * a text as written and of its normalised views, the merge of their hits,
 * redaction and the refusal message. The matchers themselves are in
 * secret.c (secret_match_run, secret_int.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>
#include "secret.h"
#include "secret_int.h"

/* ------------------------------------------------------ normalised views */

/*
 * The scan runs over the text as written and over views of it that undo
 * what hides a credential from the matchers: NFKC folding to ASCII
 * (full-width letters, mathematical alphanumerics, ligatures, NBSP), format
 * and default-ignorable characters dropped (zero-width space, joiners, soft
 * hyphen, BOM), %XX sequences decoded, wrapped lines joined (a token split
 * over two lines), and plausible base64 decoded. A view keeps, for each of
 * its bytes, the byte range of the original text it came from, so a hit in
 * a view is reported (and masked) as the original bytes that hold it.
 *
 * Bounds: at most VIEW_DEPTH layers deep (base64 of URL-encoded text of
 * ...); each view is at most the size of the one it comes from (base64
 * decodes to 3/4), so the work stays linear in the input. Texts over
 * VIEW_MAX bytes get the scan as written only.
 */
#define VIEW_DEPTH 4
#define VIEW_MAX ((size_t)64 << 20)
#define B64_MIN 16 /* shortest base64 run worth decoding */
#define JOIN_MIN 6 /* token bytes on each side of a line break to join it */

struct view {
	unsigned char *t; /* NULL for the original text itself */
	size_t len;
	uint32_t *lo, *hi; /* original range of byte i: [lo[i], hi[i]) */
};

/* The hits of every view, in original coordinates, before merging. */
struct hits {
	struct secret_hit *v;
	size_t n, cap;
	struct secret_hit inl[16];
	int err; /* out of memory: the scan is incomplete */
};

static void hits_add(struct hits *h, const char *kind, size_t start,
		     size_t end)
{
	if (h->n == h->cap) {
		size_t cap = h->cap * 2;
		struct secret_hit *v;

		if (h->v == h->inl) {
			v = util_calloc(cap, sizeof(*v));
			if (v)
				memcpy(v, h->inl, sizeof(h->inl));
		} else {
			v = util_realloc(h->v, cap * sizeof(*v));
		}
		if (!v) {
			h->err = 1;
			return;
		}
		h->v = v;
		h->cap = cap;
	}
	h->v[h->n].kind = kind;
	h->v[h->n].start = start;
	h->v[h->n].end = end;
	h->v[h->n].line = h->n; /* insertion order until merged */
	h->n++;
}

/* Original range of view bytes [a, b). */
static void view_range(const struct view *w, size_t a, size_t b, size_t *lo,
		       size_t *hi)
{
	if (!w->t) {
		*lo = a;
		*hi = b;
		return;
	}
	*lo = w->lo[a];
	*hi = w->hi[b - 1];
}

struct view_sink {
	const struct view *w;
	struct hits *h;
};

/* A hit in a view's bytes, kept as the original bytes that hold it. */
static void view_add(void *arg, const char *kind, size_t a, size_t b)
{
	struct view_sink *k = arg;
	size_t lo, hi;

	view_range(k->w, a, b, &lo, &hi);
	if (hi > lo)
		hits_add(k->h, kind, lo, hi);
}

/* One pass of the matchers over a view (only token formats if tokens). */
static void scan_view(const struct view *w, const unsigned char *text,
		      int tokens, struct hits *h)
{
	struct view_sink k = { w, h };

	secret_match_run(w->t ? w->t : text, w->len, tokens, view_add, &k);
}

/* A view being built from a parent view. */
struct builder {
	struct view v;
	size_t cap;
	int err;
};

static int builder_init(struct builder *b, size_t cap)
{
	memset(b, 0, sizeof(*b));
	b->cap = cap ? cap : 1;
	b->v.t = cairn_malloc(b->cap + 1);
	b->v.lo = util_calloc(b->cap, sizeof(uint32_t));
	b->v.hi = util_calloc(b->cap, sizeof(uint32_t));
	if (!b->v.t || !b->v.lo || !b->v.hi) {
		cairn_free(b->v.t);
		cairn_free(b->v.lo);
		cairn_free(b->v.hi);
		memset(b, 0, sizeof(*b));
		return -1;
	}
	return 0;
}

static void view_free(struct view *w)
{
	cairn_free(w->t);
	cairn_free(w->lo);
	cairn_free(w->hi);
	memset(w, 0, sizeof(*w));
}

/* Append byte c that stands for parent bytes [a, b). */
static void builder_put(struct builder *b, const struct view *parent,
			int c, size_t a, size_t e)
{
	size_t lo, hi;

	if (NEVER(b->v.len >= b->cap)) {
		b->err = 1;
		return;
	}
	view_range(parent, a, e, &lo, &hi);
	b->v.t[b->v.len] = (unsigned char)c;
	b->v.lo[b->v.len] = (uint32_t)lo;
	b->v.hi[b->v.len] = (uint32_t)hi;
	b->v.len++;
}

static int hex_val(int c)
{
	if (is_digit(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A %XX sequence at i that decodes to a printable byte (or a UTF-8 one). */
static int pct_at(const unsigned char *t, size_t len, size_t i)
{
	int hi, lo, c;

	if (t[i] != '%' || i + 2 >= len)
		return -1;
	hi = hex_val(t[i + 1]);
	lo = hex_val(t[i + 2]);
	if (hi < 0 || lo < 0)
		return -1;
	c = hi * 16 + lo;
	return c >= 0x20 || c == '\t' || c == '\n' ? c : -1;
}

/*
 * Code point cp folded by NFKC to ASCII into out (at most 8 bytes): the
 * count, 0 when cp is dropped (a format or default-ignorable character), -1
 * when it stays as written.
 */
static int fold_cp(int32_t cp, unsigned char *out)
{
	utf8proc_int32_t d[8];
	utf8proc_ssize_t n, k;
	int last = 0;

	if (utf8proc_category(cp) == UTF8PROC_CATEGORY_CF ||
	    utf8proc_get_property(cp)->ignorable)
		return 0;
	n = utf8proc_decompose_char(cp, d, 8,
				    UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT, &last);
	if (n <= 0 || n > 8)
		return -1;
	for (k = 0; k < n; k++) {
		if (d[k] < 0x20 || d[k] >= 0x7f)
			return -1;
		out[k] = (unsigned char)d[k];
	}
	return (int)n;
}

/*
 * The NFKC / format-character / %XX view of parent, or -1 with nothing
 * built when it would be the same text (or out of memory: b->err).
 */
static int view_normalise(const struct view *parent, const unsigned char *text,
			  struct builder *b)
{
	const unsigned char *t = parent->t ? parent->t : text;
	size_t len = parent->len, i;
	int changed = 0;

	memset(b, 0, sizeof(*b));
#ifdef CAIRN_MUTATE_NO_SECRET_NORMALISE
	return -1; /* the mutant: no normalised view */
#endif
	for (i = 0; i < len && !changed; i++)
		if (t[i] >= 0x80 || pct_at(t, len, i) >= 0)
			changed = 1;
	if (!changed)
		return -1;
	if (builder_init(b, len) < 0) {
		b->err = 1;
		return -1;
	}
	changed = 0;
	for (i = 0; i < len;) {
		int c = pct_at(t, len, i);

		if (c >= 0) {
			builder_put(b, parent, c, i, i + 3);
			i += 3;
			changed = 1;
		} else if (t[i] >= 0x80) {
			utf8proc_int32_t cp;
			utf8proc_ssize_t n = utf8proc_iterate(t + i,
							      (utf8proc_ssize_t)(len - i), &cp);
			unsigned char out[8];
			int k, f;

			if (n <= 0) {
				builder_put(b, parent, t[i], i, i + 1);
				i++;
				continue;
			}
			f = fold_cp(cp, out);
			if (f < 0) {
				for (k = 0; k < n; k++)
					builder_put(b, parent, t[i + k], i + k,
						    i + k + 1);
			} else {
				/* never longer than the bytes it replaces */
				if (f > n)
					f = (int)n;
				for (k = 0; k < f; k++)
					builder_put(b, parent, out[k], i,
						    i + (size_t)n);
				changed = 1;
			}
			i += (size_t)n;
		} else {
			builder_put(b, parent, t[i], i, i + 1);
			i++;
		}
	}
	if (!changed || b->err) {
		view_free(&b->v);
		return -1;
	}
	return 0;
}

/* A byte that may be part of a token or of base64. */
static int is_tokc(int c)
{
	return is_b64all(c) || c == '.';
}

/*
 * The view of parent with wrapped lines joined: a line break (and the
 * indentation or Markdown "> " marker after it) between two runs of at
 * least JOIN_MIN token bytes, the one before it token-like (a digit, one of _ - + / =, or a capital
 * after a small letter: not a word of prose), is removed. -1 when there is
 * no such break.
 */
static int view_join(const struct view *parent, const unsigned char *text,
		     struct builder *b)
{
	const unsigned char *t = parent->t ? parent->t : text;
	size_t len = parent->len, i, run = 0;
	int any = 0, pass, mark = 0;

	memset(b, 0, sizeof(*b));
#ifdef CAIRN_MUTATE_NO_SECRET_NORMALISE
	return -1; /* the mutant: no joined view */
#endif
	for (pass = 0; pass < 2; pass++) {
		run = 0;
		mark = 0;
		for (i = 0; i < len;) {
			size_t k = i, after = 0, e;

			if (t[i] == '\r' || t[i] == '\n') {
				if (t[k] == '\r')
					k++;
				if (k < len && t[k] == '\n')
					k++;
				/* the indentation, and a Markdown quote
				 * marker ("> ") that goes on each line */
				while (k < len && (t[k] == ' ' || t[k] == '\t' ||
						   t[k] == '>'))
					k++;
				for (e = k; e < len && is_tokc(t[e]) &&
					    after < JOIN_MIN; e++)
					after++;
				if (k > i && run >= JOIN_MIN && mark &&
				    after >= JOIN_MIN) {
					any = 1;
					i = k; /* the break is dropped */
					continue;
				}
			}
			if (!is_tokc(t[i])) {
				run = 0;
				mark = 0;
			} else {
				/* a token, not a word: a digit, a _ - + / =,
				 * or a capital after a small letter */
				if ((!is_alpha(t[i]) && t[i] != '.') ||
				    (run && is_upper(t[i]) && is_lower(t[i - 1])))
					mark = 1;
				run++;
			}
			if (pass == 1)
				builder_put(b, parent, t[i], i, i + 1);
			i++;
		}
		if (!any)
			return -1;
		if (pass == 0 && builder_init(b, len) < 0) {
			b->err = 1;
			return -1;
		}
	}
	if (b->err) {
		view_free(&b->v);
		return -1;
	}
	return 0;
}

static int b64_val(int c)
{
	if (is_upper(c))
		return c - 'A';
	if (is_lower(c))
		return c - 'a' + 26;
	if (is_digit(c))
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

/* Is [b, b+n) text: printable ASCII, blanks, newlines, valid UTF-8? */
static int plausible_text(const unsigned char *b, size_t n)
{
	size_t i = 0;

	while (i < n) {
		int c = b[i];

		if ((c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t' ||
		    c == '\r') {
			i++;
			continue;
		}
		if (c >= 0x80) {
			utf8proc_int32_t cp;
			utf8proc_ssize_t k = utf8proc_iterate(
				b + i, (utf8proc_ssize_t)(n - i), &cp);

			if (k <= 0 || cp < 0xa0)
				return 0;
			i += (size_t)k;
			continue;
		}
		return 0;
	}
	return 1;
}

/*
 * Decode the base64 run [a, e) of view parent into b when it is plausible
 * base64 of text: one alphabet (standard or URL-safe), a length base64 can
 * have, and text when decoded. Every decoded byte stands for the whole run.
 */
static int view_base64(const struct view *parent, const unsigned char *t,
		       size_t a, size_t e, struct builder *b)
{
	size_t n = e - a, i, out = 0;
	int std = 0, url = 0;
	unsigned acc = 0, bits = 0;

	memset(b, 0, sizeof(*b));
	while (n > 0 && t[a + n - 1] == '=')
		n--;
	if (n < B64_MIN || n % 4 == 1)
		return -1;
	for (i = a; i < a + n; i++) {
		if (t[i] == '+' || t[i] == '/')
			std = 1;
		else if (t[i] == '-' || t[i] == '_')
			url = 1;
		else if (b64_val(t[i]) < 0)
			return -1;
	}
	if (std && url)
		return -1;
	if (builder_init(b, n * 3 / 4 + 1) < 0) {
		b->err = 1;
		return -1;
	}
	for (i = a; i < a + n; i++) {
		acc = (acc << 6) | (unsigned)b64_val(t[i]);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			b->v.t[out++] = (unsigned char)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	if (out < 8 || !plausible_text(b->v.t, out)) {
		view_free(&b->v);
		return -1;
	}
	b->v.len = 0;
	for (i = 0; i < out; i++)
		builder_put(b, parent, b->v.t[i], a, e);
	return 0;
}

static void layers(const struct view *w, const unsigned char *text,
		   int depth, struct hits *h);

/* Every plausible base64 run of view w, decoded and scanned. */
static void decode_runs(const struct view *w, const unsigned char *text,
			int depth, struct hits *h)
{
	const unsigned char *t = w->t ? w->t : text;
	size_t i = 0, len = w->len;

#ifdef CAIRN_MUTATE_NO_SECRET_NORMALISE
	return; /* the mutant: no decoded view */
#endif
	while (i < len && !h->err) {
		size_t a, e;
		struct builder b;

		if (b64_val(t[i]) < 0) {
			i++;
			continue;
		}
		a = i;
		while (i < len && b64_val(t[i]) >= 0)
			i++;
		while (i < len && t[i] == '=' && i - a < ((size_t)1 << 30))
			i++;
		e = i;
		if (e - a < B64_MIN || (a > 0 && t[a - 1] == '%'))
			continue;
		if (view_base64(w, t, a, e, &b) < 0) {
			if (b.err)
				h->err = 1;
			continue;
		}
		scan_view(&b.v, text, 0, h);
		layers(&b.v, text, depth + 1, h);
		view_free(&b.v);
	}
}

/* The views below w: normalised, joined, decoded; each one scanned. */
static void layers(const struct view *w, const unsigned char *text,
		   int depth, struct hits *h)
{
	struct builder b;

	if (depth >= VIEW_DEPTH || h->err)
		return;
	if (view_normalise(w, text, &b) == 0) {
		scan_view(&b.v, text, 0, h);
		layers(&b.v, text, depth + 1, h);
		view_free(&b.v);
		return;
	}
	if (b.err) {
		h->err = 1;
		return;
	}
	if (view_join(w, text, &b) == 0) {
		scan_view(&b.v, text, 1, h);
		decode_runs(&b.v, text, depth, h);
		view_free(&b.v);
		return;
	}
	if (b.err) {
		h->err = 1;
		return;
	}
	decode_runs(w, text, depth, h);
}

static int hit_cmp(const void *pa, const void *pb)
{
	const struct secret_hit *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

/*
 * Every hit of text: the scan as written, then the views. Overlapping hits
 * merge into one (the kind of the first); lines are set. h->err on out of
 * memory.
 */
static void scan_text(const char *text, size_t len, struct hits *h)
{
	const unsigned char *t = (const unsigned char *)text;
	struct view raw;
	size_t i, out = 0, line = 1, counted = 0;

	memset(h, 0, sizeof(*h));
	h->v = h->inl;
	h->cap = ARRAY_SIZE(h->inl);
	if (!text)
		return;
	memset(&raw, 0, sizeof(raw));
	raw.len = len;
	scan_view(&raw, t, 0, h);
	if (len <= VIEW_MAX)
		layers(&raw, t, 0, h);
	if (h->n > 1)
		qsort(h->v, h->n, sizeof(*h->v), hit_cmp);
	for (i = 0; i < h->n; i++) {
		if (out > 0 && h->v[i].start < h->v[out - 1].end) {
			if (h->v[i].end > h->v[out - 1].end)
				h->v[out - 1].end = h->v[i].end;
			continue;
		}
		h->v[out++] = h->v[i];
	}
	h->n = out;
	for (i = 0; i < h->n; i++) {
		for (; counted < h->v[i].start; counted++)
			if (t[counted] == '\n')
				line++;
		h->v[i].line = line;
	}
}

static void hits_release(struct hits *h)
{
	if (h->v != h->inl)
		cairn_free(h->v);
	h->v = NULL;
}

/* What secret_scan() reports when it could not finish: the whole text. */
static const char unscanned_kind[] = "unscanned-out-of-memory";

/* See secret.h. */
int secret_unscanned(const struct secret_hit *hit)
{
	return hit && hit->kind == unscanned_kind;
}

/* See secret.h. */
size_t secret_scan(const char *text, size_t len, struct secret_hit *hits,
		   size_t max)
{
	struct hits h;
	size_t i, n;

	scan_text(text, len, &h);
	if (h.err) {
		/* fail closed: a text that could not be scanned is refused */
		hits_release(&h);
		if (hits && max > 0) {
			hits[0].kind = unscanned_kind;
			hits[0].start = 0;
			hits[0].end = len;
			hits[0].line = 1;
		}
		return 1;
	}
	for (i = 0; hits && i < h.n && i < max; i++)
		hits[i] = h.v[i];
	n = h.n;
	hits_release(&h);
	return n;
}

/*
 * See secret.h. The copy is built from the bytes around the hits only, so
 * no secret byte is ever copied, not even into a buffer freed later.
 */
char *secret_redact(const char *text, size_t len, size_t *outlen)
{
	struct hits h;
	struct sbuf sb;
	char *out = NULL;
	size_t i, last = 0;

	if (outlen)
		*outlen = 0;
	if (!text) {
		text = "";
		len = 0;
	}
	scan_text(text, len, &h);
	if (h.err) {
		hits_release(&h);
		return NULL;
	}
	sbuf_init(&sb, 0);
	for (i = 0; i < h.n; i++) {
		sbuf_add(&sb, text + last, h.v[i].start - last);
		sbuf_addf(&sb, "[REDACTED:%s]", h.v[i].kind);
		last = h.v[i].end;
	}
	sbuf_add(&sb, text + last, len - last);
	hits_release(&h);
	if (sb.err)
		goto out;
	out = sbuf_detach(&sb, outlen);
out:
	sbuf_release(&sb);
	return out;
}

/* See secret.h. Names the kind and line, never the secret's bytes. */
void secret_describe(const struct secret_hit *hit, const char *what,
		     char *buf, size_t size)
{
	int named = what && *what;

	if (!buf || size == 0)
		return;
	if (!hit) {
		snprintf(buf, size, "no secret found");
		return;
	}
	snprintf(buf, size,
		 "refusing to store a secret: %s on line %zu%s%s "
		 "(use --redact to store it masked)",
		 hit->kind ? hit->kind : "secret", hit->line,
		 named ? " of " : "", named ? what : "");
}


/*
 * supersede.c -- the finder of `cairn write`, `approve` and MCP
 * memory_write: the records a new one may replace, listed as
 * may_replace. Nothing is linked here: `cairn supersede OLD NEW`
 * (cairn_supersede, lifecycle.c) does that.
 *
 * Layer: recall (docs/ARCHITECTURE.md, "Layers"): it asks cairn_recall
 * for the candidates, on store.h and fts.h/tokenize.h for the similarity.
 * Above it: cli.c, cli_gc.c, cli_serve.c, mcp.c.
 * Holds: the candidates (recall with the record's own text as the
 * question: same kind, accepted or unverified), the key family rule, the
 * lexical cosine and its threshold.
 * Must never: write anything (no receipt, no last_seen).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fts.h"
#include "store.h"
#include "supersede.h"
#include "tokenize.h"

#define SUGGEST_POOL 50          /* recall hits examined by the finder */
#define SUGGEST_QUERY_BYTES 4000 /* of the record's text used as the question */

/* -------------------------------------------------------------- the finder */

struct bag {
	char **tok; /* tokens, sorted after collection */
	size_t n, cap;
	int err;
};

static int bag_add(void *user, const char *token, size_t len, size_t start,
		   size_t end, int colocated)
{
	struct bag *b = user;

	(void)start;
	(void)end;
	if (colocated || len == 0 || b->err)
		return 0;
	if (b->n == b->cap) {
		size_t ncap = b->cap ? 2 * b->cap : 64;
		char **nv = util_realloc(b->tok, ncap * sizeof(*nv));

		if (!nv) {
			b->err = CAIRN_NOMEM;
			return CAIRN_NOMEM;
		}
		b->tok = nv;
		b->cap = ncap;
	}
	b->tok[b->n] = util_strndup(token, len);
	if (!b->tok[b->n]) {
		b->err = CAIRN_NOMEM;
		return CAIRN_NOMEM;
	}
	b->n++;
	return 0;
}

static void bag_release(struct bag *b)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		cairn_free(b->tok[i]);
	cairn_free(b->tok);
	memset(b, 0, sizeof(*b));
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int bag_fill(struct tok *tk, const cairn_record *r, struct bag *b)
{
	char err[128];
	int rc = tok_run(tk, r->title ? r->title : "",
			 r->title ? strlen(r->title) : 0, 0, bag_add, b, err,
			 sizeof(err));

	if (rc == CAIRN_OK)
		rc = tok_run(tk, r->body, strlen(r->body), 0, bag_add, b, err,
			     sizeof(err));
	if (rc == CAIRN_OK && b->err)
		rc = b->err;
	if (rc == CAIRN_OK && b->n > 1)
		qsort(b->tok, b->n, sizeof(*b->tok), str_cmp);
	return rc;
}

/* Cosine of two sorted token bags as term-count vectors. */
static double bag_cosine(const struct bag *a, const struct bag *b)
{
	double dot = 0, na = 0, nb = 0;
	size_t i = 0, j = 0;

	while (i < a->n || j < b->n) {
		size_t ri = i, rj = j;
		int c;

		/* runs of equal tokens on each side */
		if (i < a->n)
			while (ri < a->n && strcmp(a->tok[ri], a->tok[i]) == 0)
				ri++;
		if (j < b->n)
			while (rj < b->n && strcmp(b->tok[rj], b->tok[j]) == 0)
				rj++;
		c = i >= a->n ? 1 : j >= b->n ? -1 : strcmp(a->tok[i], b->tok[j]);
		if (c == 0) {
			dot += (double)(ri - i) * (double)(rj - j);
			na += (double)(ri - i) * (double)(ri - i);
			nb += (double)(rj - j) * (double)(rj - j);
			i = ri;
			j = rj;
		} else if (c < 0) {
			na += (double)(ri - i) * (double)(ri - i);
			i = ri;
		} else {
			nb += (double)(rj - j) * (double)(rj - j);
			j = rj;
		}
	}
	return na > 0 && nb > 0 ? dot / sqrt(na * nb) : 0;
}

/* Key family: the key up to its last ':' ("deploy:blyck" -> "deploy"). */
static size_t family_len(const char *key)
{
	const char *c = key ? strrchr(key, ':') : NULL;

	return c ? (size_t)(c - key) : (key ? strlen(key) : 0);
}

static int same_family(const char *a, const char *b)
{
	size_t la = family_len(a), lb = family_len(b);

	return a && b && la > 0 && la == lb && memcmp(a, b, la) == 0;
}

static int sugg_cmp(const void *x, const void *y)
{
	const cairn_suggestion *a = x, *b = y;

	if (a->same_family != b->same_family)
		return a->same_family ? -1 : 1;
	if (a->similarity != b->similarity)
		return a->similarity > b->similarity ? -1 : 1;
	return strcmp(a->rec->id, b->rec->id);
}

void cairn_suggestions_free(cairn_suggestion *v, size_t n)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < n; i++)
		cairn_record_free(v[i].rec);
	cairn_free(v);
}

int cairn_supersede_suggest(cairn_db *db, const char *id,
			    cairn_suggestion **out, size_t *nout)
{
	cairn_record *r = NULL;
	cairn_result *res = NULL;
	cairn_recall_opts o;
	cairn_suggestion *v = NULL;
	struct bag mine = { NULL, 0, 0, 0 };
	struct sbuf q = SBUF_INIT;
	struct tok *tk;
	char err[256];
	size_t i, n = 0, cut;
	int rc;

	*out = NULL;
	*nout = 0;
	rc = cairn_record_get(db, id, &r);
	if (rc)
		return rc;
	tk = fts_tok(db->sql, err, sizeof(err));
	if (!tk) {
		rc = store_error(db, CAIRN_IO, "%s", err);
		goto out;
	}
	rc = bag_fill(tk, r, &mine);
	if (rc) {
		rc = store_error(db, rc, "tokenising record '%s'", r->id);
		goto out;
	}
	/* the record's own text is the question: BM25 (and dense) candidates */
	sbuf_adds(&q, r->title ? r->title : "");
	sbuf_addc(&q, '\n');
	sbuf_adds(&q, r->body);
	if (q.err) {
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
		goto out;
	}
	cut = q.len < SUGGEST_QUERY_BYTES ? q.len : SUGGEST_QUERY_BYTES;
	while (cut > 0 && cut < q.len && ((unsigned char)q.buf[cut] & 0xC0) == 0x80)
		cut--;
	q.buf[cut] = '\0';
	memset(&o, 0, sizeof(o));
	o.k = SUGGEST_POOL;
	o.kinds = r->kind;
	o.statuses = "accepted,unverified";
	o.no_floor = 1;
	o.no_receipt = 1;
	o.rerank = -1; /* the similarity below decides, not the order */
	rc = cairn_recall(db, q.buf, &o, &res);
	if (rc == CAIRN_INVALID) { /* nothing searchable: nothing similar */
		rc = CAIRN_OK;
		goto out;
	}
	if (rc)
		goto out;
	v = util_calloc(res->n ? res->n : 1, sizeof(*v));
	if (!v) {
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < res->n; i++) {
		cairn_record *h = res->hits[i].rec;
		struct bag other = { NULL, 0, 0, 0 };
		double sim;

		if (strcmp(h->id, r->id) == 0 || strcmp(h->scope, r->scope) ||
		    strcmp(h->kind, r->kind))
			continue;
		if (r->key && *r->key && !same_family(r->key, h->key))
			continue;
		rc = bag_fill(tk, h, &other);
		sim = rc ? 0 : bag_cosine(&mine, &other);
		bag_release(&other);
		if (rc) {
			rc = store_error(db, rc, "tokenising record '%s'", h->id);
			goto out;
		}
		if (sim < SUPERSEDE_SUGGEST_MIN)
			continue;
		v[n].rec = h;
		res->hits[i].rec = NULL; /* moved */
		v[n].similarity = sim;
		v[n].same_family = r->key && same_family(r->key, h->key);
		n++;
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), sugg_cmp);
	while (n > SUPERSEDE_SUGGEST_MAX)
		cairn_record_free(v[--n].rec);
	*out = v;
	*nout = n;
	v = NULL;
	n = 0;
out:
	cairn_suggestions_free(v, n);
	cairn_result_free(res);
	cairn_record_free(r);
	bag_release(&mine);
	sbuf_release(&q);
	return rc;
}

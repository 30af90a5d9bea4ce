/*
 * lifecycle.c -- ageing, reviving and superseding records (SPEC 5.5,
 * issue 5).
 *
 * Layer: on store.h, fts.h/tokenize.h (the finder's similarity) and the
 * public recall API (the finder's candidates). Above it: recall.c (the
 * daily run), cli_gc.c (`cairn gc`, `cairn supersede`).
 * Holds: the ageing rules (which kinds, how many days), the clock and its
 * test knob $CAIRN_NOW, the previous status of stale records (meta
 * 'lifecycle.prev.<id>' of the record's schema, no schema change), the
 * last run time (meta 'lifecycle.last_run' of the main store).
 * Must never: age a kind other than decision and fact; change a record's
 * text; touch a record whose status is not accepted, unverified or stale.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fts.h"
#include "lifecycle.h"
#include "store.h"
#include "tokenize.h"

#define DAY 86400LL
#define SUGGEST_POOL 50          /* recall hits examined by the finder */
#define SUGGEST_QUERY_BYTES 4000 /* of the record's text used as the question */

/* The kinds that age (SPEC 5.5); everything else never decays. */
#define AGEING_KINDS "('decision','fact')"

long long lifecycle_now(void)
{
	const char *s = getenv("CAIRN_NOW"); /* test knob: docs/RANKING.md */
	long long t;

	if (s && *s) {
		t = util_parse_iso(s);
		if (t >= 0)
			return t;
	}
	return (long long)time(NULL);
}

static void iso_of(long long t, char *buf, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm) ||
	    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, size, "1970-01-01T00:00:00Z");
}

static int meta_get(struct cairn_db *db, const char *schema, const char *k,
		    char *buf, size_t size)
{
	int found, rc = store_meta_get(db, schema, k, buf, size, &found);

	return rc ? rc : found ? CAIRN_OK : CAIRN_NOTFOUND;
}

/* Run one statement with up to two text parameters; *changes if not NULL. */
static int exec2(struct cairn_db *db, const char *sql, const char *a,
		 const char *b, long long *changes, const char *what)
{
	sqlite3_stmt *st = NULL;
	int src;

	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (src == SQLITE_OK) {
		if (a)
			sqlite3_bind_text(st, 1, a, -1, SQLITE_STATIC);
		if (b)
			sqlite3_bind_text(st, 2, b, -1, SQLITE_STATIC);
		src = sqlite3_step(st);
	}
	sqlite3_finalize(st);
	if (src != SQLITE_DONE)
		return store_sql_error(db, src, what);
	if (changes)
		*changes += sqlite3_changes(db->sql);
	return CAIRN_OK;
}

void lifecycle_now_iso(char *buf, size_t size)
{
	iso_of(lifecycle_now(), buf, size);
}

int lifecycle_due(struct cairn_db *db)
{
	char last[64];
	long long now = lifecycle_now(), t;
	int rc;

	rc = meta_get(db, "main", "lifecycle.last_run", last, sizeof(last));
	if (rc && rc != CAIRN_NOTFOUND)
		return -rc;
	t = rc == CAIRN_OK ? util_parse_iso(last) : -1;
	/* a clock that moved back runs it again */
	return !(t >= 0 && now >= t && now - t < LIFECYCLE_EVERY_SECONDS);
}

int lifecycle_run(struct cairn_db *db, int force, cairn_gc_result *out)
{
	cairn_gc_result r;
	char cut_stale[32], cut_retire[32];
	long long now = lifecycle_now();
	int rc, s;

	memset(&r, 0, sizeof(r));
	iso_of(now, r.now, sizeof(r.now));
	if (!force) {
		rc = lifecycle_due(db);
		if (rc < 0)
			return -rc;
		if (!rc) {
			if (out)
				*out = r;
			return CAIRN_OK;
		}
	}
	iso_of(now - LIFECYCLE_STALE_DAYS * DAY, cut_stale, sizeof(cut_stale));
	iso_of(now - LIFECYCLE_RETIRE_DAYS * DAY, cut_retire,
	       sizeof(cut_retire));
	rc = store_tx_begin(db);
	if (rc)
		return rc;
	for (s = 0; s < 2 && rc == CAIRN_OK; s++) {
		if (s == 1 && !db->has_global)
			break;
		rc = store_age(db, s == 0 ? "main" : "global", AGEING_KINDS,
			       cut_stale, cut_retire, &r.staled, &r.retired);
	}
	if (rc == CAIRN_OK)
		rc = exec2(db,
			   "INSERT OR REPLACE INTO main.meta (k, v) VALUES "
			   "('lifecycle.last_run', ?1)",
			   r.now, NULL, NULL, "recording the lifecycle run");
	rc = store_tx_end(db, rc);
	if (rc)
		return rc;
	r.ran = 1;
	if (out)
		*out = r;
	return CAIRN_OK;
}

int lifecycle_revive(struct cairn_db *db, const char *schema, const char *id,
		     int *revived)
{
	char sql[200], k[160], prev[32], now[32];
	sqlite3_stmt *st = NULL;
	int src, rc, stale = 0;

	if (revived)
		*revived = 0;
	snprintf(sql, sizeof(sql),
		 "SELECT status = 'stale' FROM %s.records WHERE id = ?1",
		 schema);
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
		src = sqlite3_step(st);
		stale = src == SQLITE_ROW && sqlite3_column_int(st, 0);
	}
	sqlite3_finalize(st);
	if (src != SQLITE_ROW && src != SQLITE_DONE)
		return store_sql_error(db, src, "reviving a record");
	if (!stale)
		return CAIRN_OK;
	snprintf(k, sizeof(k), "lifecycle.prev.%s", id);
	rc = meta_get(db, schema, k, prev, sizeof(prev));
	if (rc == CAIRN_NOTFOUND || (rc == CAIRN_OK &&
				     strcmp(prev, "unverified") != 0))
		snprintf(prev, sizeof(prev), "accepted");
	else if (rc)
		return rc;
	iso_of(lifecycle_now(), now, sizeof(now));
	rc = store_tx_begin(db);
	if (rc)
		return rc;
	rc = store_revive(db, schema, id, prev, now, k);
	rc = store_tx_end(db, rc);
	if (rc == CAIRN_OK && revived)
		*revived = 1;
	return rc;
}

/* ------------------------------------------------------------ supersede */

static int live(const char *status)
{
	return strcmp(status, "accepted") == 0 ||
	       strcmp(status, "unverified") == 0 ||
	       strcmp(status, "candidate") == 0 ||
	       strcmp(status, "stale") == 0;
}

int cairn_supersede(cairn_db *db, const char *old_id, const char *new_id)
{
	cairn_record *o = NULL, *n = NULL;
	char msg[STORE_ERRMSG], now[32];
	int rc;

	if (!old_id || !new_id)
		return store_error(db, CAIRN_INVALID, "two record ids needed");
	rc = cairn_record_get(db, old_id, &o);
	if (rc == CAIRN_OK)
		rc = cairn_record_get(db, new_id, &n);
	if (rc)
		goto out;
	if (strcmp(o->id, n->id) == 0) {
		rc = store_error(db, CAIRN_INVALID,
				 "a record cannot supersede itself");
		goto out;
	}
	if (!live(n->status)) {
		rc = store_error(db, CAIRN_INVALID,
				 "record '%s' is %s: only a live record can "
				 "replace another",
				 n->id, n->status);
		goto out;
	}
	if (o->superseded_by && *o->superseded_by &&
	    strcmp(o->superseded_by, n->id) != 0) {
		rc = store_error(db, CAIRN_EXISTS,
				 "record '%s' is already superseded by '%s'",
				 o->id, o->superseded_by);
		goto out;
	}
	if (n->superseded_by && strcmp(n->superseded_by, o->id) == 0) {
		rc = store_error(db, CAIRN_INVALID,
				 "record '%s' is superseded by '%s': that "
				 "would be a loop",
				 n->id, o->id);
		goto out;
	}
	if (store_is_file_backed(o, msg, sizeof(msg))) {
		rc = store_error(db, CAIRN_READONLY,
				 "%s (front matter: status: superseded, "
				 "superseded_by)",
				 msg);
		goto out;
	}
	util_now_iso(now, sizeof(now));
	rc = store_tx_begin(db);
	if (rc)
		goto out;
	rc = store_supersede_link(db, o, n, now);
	rc = store_tx_end(db, rc);
out:
	cairn_record_free(o);
	cairn_record_free(n);
	return rc;
}

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
		if (sim < LIFECYCLE_SUGGEST_MIN)
			continue;
		v[n].rec = h;
		res->hits[i].rec = NULL; /* moved */
		v[n].similarity = sim;
		v[n].same_family = r->key && same_family(r->key, h->key);
		n++;
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), sugg_cmp);
	while (n > LIFECYCLE_SUGGEST_MAX)
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

/*
 * recall.c -- recall (SPEC 5.2): BM25 inside SQLite over our own
 * tokenizer, the answerability and the calibrated no-match floor, the
 * ranking of both modes (rank.c), the hits, receipts (SPEC 5.3) and
 * last_seen bookkeeping.
 *
 * Layer: on fts/tokenize, store, query (the question's terms), answer (the
 * answerability), rank (the
 * steps of both modes), recall_hybrid (the dense side), rerank, drift and
 * lifecycle (ageing before a search, the last_seen clock). Above it: cli,
 * eval, hook, mcp.
 *
 * Two modes. Lexical only (no model configured, or no record has a vector
 * yet): the steps below, ranked by rank_lexical(). Hybrid (
 * docs/RANKING.md): the same BM25 pool (both schemas ranked together), the
 * dense pool of the embedded question, each BM25 hit's own cosine from its
 * stored vector, the exact drawer (recall_hybrid.c), then rank_run(): RRF,
 * the overwhelming BM25 pin, the cosine floor calibrated for this vector
 * identity (lexical floor for hits without a vector), weights, decay,
 * per-source de-duplication. Both build their hits with build_hits().
 *
 * The pipeline, each step named in --explain:
 *   1. terms:   the question is tokenised exactly as records are (query.c),
 *               de-duplicated; stop words are dropped unless nothing else
 *               is left; at most RECALL_MAX_TERMS, rarest first.
 *   2. bm25:    FTS5's BM25 over title and body (title weighted
 *               RECALL_W_TITLE), OR of the terms, ranked inside FTS5 by
 *               cairn_rank (exactly bm25()'s scores and order, reading
 *               fewer rows: see aux_rank and struct terms_order), pool of
 *               RECALL_POOL after the status and kind filters.
 *   3. signal:  each hit's lexical signal s = its BM25 over the most the
 *               question could score (see score_signal()), and its
 *               answerability a (answer.c): the share of the
 *               question's informative IDF mass it matches, each word
 *               weighed by what can match it (glosses, background idf);
 *               0 for every hit when nothing in the store links the
 *               question's specific words beyond chance (answer_chance()),
 *               0 for a hit sharing one incidental word (answer_lone()).
 *   4. floor:   the question is answered when its best a is above the
 *               floor; then a hit with a <= min(floor, default) is
 *               dropped; relevance = clamp((a - that) / (1 - that), 0, 1).
 *               The floor is measured by cairn_calibrate() from questions
 *               the store cannot answer (their median), for this
 *               tokenizer identity; RECALL_DEFAULT_FLOOR otherwise.
 *   5. score:   weight(kind, status)^RANK_WEIGHT_EXP x (bm25 / best bm25),
 *               x (1 + RANK_DATE_BOOST) for a record that states a date
 *               when the question asks when (answer type; Chinese only);
 *               ties keep BM25 order (rank_lexical).
 *   6. receipt: query hash, ordered ids, provider and revision, per-hit
 *               figures; last_seen of the returned records, in one write.
 *
 * Must never: return a record whose status the caller did not ask for
 * (default: accepted + unverified), or write anything when no_receipt.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "drift.h"
#include "answer.h"
#include "fts.h"
#include "lifecycle.h"
#include "query.h"
#include "store.h"
#include "rank.h"
#include "recall_int.h"
#include "receipt.h"
#include "rerank.h"
#include "termstat.h"
#include "tokenize.h"

#define RECALL_POOL 200            /* BM25 pool size (SPEC 5.2: ~200) */
/*
 * FTS5 rows ranked before the status and kind filters: a quarter more than
 * the pool (bench/recall_bench.c, 30k records: p50 ratio to FTS5 0.49 with
 * 4 x the pool, 0.47 with 2.5 x, 0.41 with 1.25 x, the same hits); when the
 * filters leave the pool short, search_schema ranks again with more.
 */
#define RECALL_INNER (RECALL_POOL + RECALL_POOL / 4)
#define RECALL_PRUNE_ROWS (2 * RECALL_INNER) /* rows ranked by pass 1 (struct terms_order) */
#define RECALL_GROW 8              /* the heap's growth when the filters leave the pool short */
#define RECALL_MAX_QUERY (64 * 1024) /* bytes in a question */
#define RECALL_MAX_K 100           /* most hits one call returns */
#define RECALL_K1 1.2              /* FTS5 bm25()'s k1 (fixed in fts5_bm25.c) */
/*
 * Floor used before `cairn calibrate` has measured one for this tokenizer:
 * a hit must match more than this share of the question's informative
 * mass (its answerability, score_answer()). Measured on ../shared/eval's
 * dev sets (docs/RANKING.md): the lowest answerability of an answer in
 * the top 3 is 0.127 (one LoCoMo question; then 0.206); the two halves
 * of dev, each taken alone, allow 0.12 and 0.22 without loss, and this
 * is the lower. A question that shares no informative word with the
 * store is empty at any floor; calibration raises it from probes.
 */
#define RECALL_DEFAULT_FLOOR CAIRN_DEFAULT_FLOOR

/* ------------------------------------------------------- FTS5 aux function */

/*
 * cairn_rank(records_fts, ctx): BM25 of the current row, ranked in C.
 *
 * Called once per matching row by search_schema's statement, which sorts
 * nothing itself: the rows go into ctx's heap of the best ctx->cap, in
 * the order SQLite's "ORDER BY s LIMIT cap" keeps (higher score first,
 * then the earlier row: its sort is stable). The score is FTS5's BM25
 * (k1 = 1.2, b = 0.75, fts5_bm25.c) with the idf of each phrase given by
 * recall (a gloss counts RECALL_GLOSS_WEIGHT of a word of the question):
 * per phrase f = sum of column weight x count, score += idf x (f (k1 +
 * 1)) / (f + k1 (1 - b + b |D| / avgdl)), evaluated in the order bm25()
 * evaluates it, so that with FTS5's own idfs it is bit for bit bm25()'s
 * (negated). Also the mask of the phrases that occur in the row.
 *
 * Reading the row's length |D| (a lookup in FTS5's docsize table) is most
 * of a row's cost. A column holds at least one token more than the
 * highest position a phrase was found at (FTS5 numbers a column's tokens
 * from 0, colocated ones sharing a position, and counts them the same
 * way in docsize), so the same sum with that lower bound of |D|, the
 * same operations in the same order, is an upper bound of the score
 * (each step is monotonic, in floating point too): once the heap is full,
 * a row whose bound is below its worst score cannot enter it and its
 * length is never read. Exact: the kept rows and their order are those
 * of the plain sort.
 */
struct rank_hit {
	double score;        /* BM25, higher is better */
	sqlite3_int64 rowid; /* FTS5 rowid = records.rid */
	sqlite3_int64 mask;  /* matched phrases */
	sqlite3_int64 seq;   /* visiting order, for ties */
};

struct rank_ctx {
	int n;                         /* phrases */
	double idf[RECALL_MAX_TERMS];  /* idf x weight per phrase, MATCH order */
	double wcol[2];                /* title and body weights */
	double avgdl;                  /* average row length (first row) */
	int have_avgdl;
	int first;                     /* phrase of the first term (see search_schema) */
	double floor;                  /* no kept row can score below it */
	size_t cap;                    /* keep the best cap rows; 0: all */
	struct rank_hit *v;            /* kept rows (a heap, worst first, when cap) */
	size_t nv, alloc;
	sqlite3_int64 seen;            /* rows visited */
	sqlite3_int64 last;            /* rowid of the last row visited */
	size_t unread;                 /* rows left out by the bound */
	int nomem;
	const uint32_t *lens;          /* row lengths by rowid (termstat.h), or NULL */
	size_t nlens;
};

/* a ranks below b: lower score, or the same score and visited later */
static int hit_worse(const struct rank_hit *a, const struct rank_hit *b)
{
	return a->score < b->score || (a->score == b->score && a->seq > b->seq);
}

static void heap_down(struct rank_hit *v, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, w = i;
		struct rank_hit tmp;

		if (l < n && hit_worse(&v[l], &v[w]))
			w = l;
		if (r < n && hit_worse(&v[r], &v[w]))
			w = r;
		if (w == i)
			return;
		tmp = v[i];
		v[i] = v[w];
		v[w] = tmp;
		i = w;
	}
}

static void heap_up(struct rank_hit *v, size_t i)
{
	while (i > 0) {
		size_t p = (i - 1) / 2;
		struct rank_hit tmp;

		if (!hit_worse(&v[i], &v[p]))
			return;
		tmp = v[i];
		v[i] = v[p];
		v[p] = tmp;
		i = p;
	}
}

/* Keep h if it is among the best c->cap (all when cap is 0). */
static void rank_keep(struct rank_ctx *c, const struct rank_hit *h)
{
	if (c->cap && c->nv == c->cap) {
		if (!hit_worse(&c->v[0], h))
			return;
		c->v[0] = *h;
		heap_down(c->v, c->nv, 0);
		return;
	}
	if (c->nv == c->alloc) {
		size_t na = c->alloc ? 2 * c->alloc : 256;
		struct rank_hit *nv;

		if (c->cap && na > c->cap)
			na = c->cap;
		nv = util_realloc(c->v, na * sizeof(*nv));
		if (!nv) {
			c->nomem = 1;
			return;
		}
		c->v = nv;
		c->alloc = na;
	}
	c->v[c->nv++] = *h;
	if (c->cap)
		heap_up(c->v, c->nv - 1);
}

/* Sum over the phrases with frequencies f[] for a row of length D. */
static double bm25_sum(const struct rank_ctx *c, const double *f, double D)
{
	const double k1 = RECALL_K1, b = 0.75;
	double score = 0;
	int i;

	for (i = 0; i < c->n; i++)
		if (f[i] > 0)
			score += c->idf[i] * ((f[i] * (k1 + 1.0)) /
					      (f[i] + k1 * (1 - b + b * D /
								  c->avgdl)));
	return score;
}

static void aux_rank(const Fts5ExtensionApi *api, Fts5Context *ctx,
		     sqlite3_context *out, int nval, sqlite3_value **vals)
{
	struct rank_ctx *c = nval == 1 ? sqlite3_value_pointer(vals[0],
							       "cairn_rank")
				       : NULL;
	double f[RECALL_MAX_TERMS];
	struct rank_hit h;
	int i, ntok = 0, top[2] = { -1, -1 };

	if (!c || c->first + c->n > api->xPhraseCount(ctx)) {
		sqlite3_result_error(out, "cairn_rank: wrong arguments", -1);
		return;
	}
	h.rowid = api->xRowid(ctx);
	if (c->seen > 0 && h.rowid == c->last)
		return; /* the same row again: counted once */
	c->last = h.rowid;
	h.seq = c->seen++;
	if (!c->have_avgdl) {
		sqlite3_int64 nrow = 0, total = 0;

		api->xRowCount(ctx, &nrow);
		api->xColumnTotalSize(ctx, -1, &total);
		c->avgdl = nrow > 0 && total > 0 ? (double)total / (double)nrow
						 : 1;
		c->have_avgdl = 1;
	}
	h.mask = 0;
	for (i = 0; i < c->n; i++) {
		Fts5PhraseIter it;
		int col = -1, off = -1;

		f[i] = 0;
		if (api->xPhraseFirst(ctx, c->first + i, &it, &col, &off) !=
		    SQLITE_OK)
			continue;
		for (; col >= 0; api->xPhraseNext(ctx, &it, &col, &off)) {
			if (col >= 2)
				continue;
			f[i] += c->wcol[col];
			if (off > top[col])
				top[col] = off;
		}
		if (f[i] > 0 && i < 64)
			h.mask |= (sqlite3_int64)((sqlite3_uint64)1 << i);
	}
	if (c->cap) {
		double worst = c->nv == c->cap && c->v[0].score > c->floor
				       ? c->v[0].score
				       : c->floor;

#ifndef CAIRN_MUTATE_NO_RANK_BOUND
		if (bm25_sum(c, f, (double)(top[0] + 1 + top[1] + 1)) <
		    worst) {
#else
		if (worst > -HUGE_VAL) { /* negative control: no bound */
#endif
			c->unread++;
			return; /* cannot be kept: its length is not read */
		}
	}
	if (h.rowid >= 0 && (sqlite3_uint64)h.rowid < c->nlens &&
	    c->lens[h.rowid] != TERMSTAT_NO_ROW)
		ntok = (int)c->lens[h.rowid]; /* FTS5's docsize, kept */
	else if (api->xColumnSize(ctx, -1, &ntok) != SQLITE_OK)
		ntok = 0;
	h.score = bm25_sum(c, f, (double)ntok);
	rank_keep(c, &h);
	(void)out;
}

/* Best first: the order of SQLite's stable "ORDER BY -score". */
static int hit_cmp(const void *a, const void *b)
{
	const struct rank_hit *x = a, *y = b;

	return hit_worse(y, x) ? -1 : hit_worse(x, y) ? 1 : 0;
}

static int register_aux(struct cairn_db *db)
{
	fts5_api *api = NULL;
	sqlite3_stmt *st = NULL;
	int src;

	if (db->aux_registered)
		return CAIRN_OK;
	src = sqlite3_prepare_v2(db->sql, "SELECT fts5(?1)", -1, &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_pointer(st, 1, &api, "fts5_api_ptr", NULL);
		sqlite3_step(st);
	}
	sqlite3_finalize(st);
	if (!api)
		return store_error(db, CAIRN_ERROR, "SQLite has no FTS5");
	src = api->xCreateFunction(api, "cairn_rank", NULL, aux_rank, NULL);
	if (src != SQLITE_OK)
		return store_sql_error(db, src, "registering cairn_rank");
	db->aux_registered = 1;
	return CAIRN_OK;
}

/* ------------------------------------------------------------------ floor */

static const char *floor_key = "lexical_floor";
/*
 * What a stored floor was measured on, after the tokenizer identity: a
 * floor of the old lexical signal (bm25 over the most possible) means
 * nothing on the answerability's scale, so it is not used.
 */
#define RECALL_FLOOR_SCALE " answer/1"

/* The identity a floor is stored with: tokenizer + RECALL_FLOOR_SCALE. */
void recall_floor_identity(const char *tok_id, char *out, size_t size)
{
	snprintf(out, size, "%s%s", tok_id, RECALL_FLOOR_SCALE);
}

/* The calibrated floor for this tokenizer identity, or the default. */
static double load_floor(struct cairn_db *db, const char *identity,
			 int *calibrated)
{
	sqlite3_stmt *st = NULL;
	double f = RECALL_DEFAULT_FLOOR;

	*calibrated = 0;
	if (sqlite3_prepare_v2(db->sql,
			       "SELECT v, (SELECT v FROM main.meta WHERE k = "
			       "?2) FROM main.meta WHERE k = ?1",
			       -1, &st, NULL) != SQLITE_OK)
		return f;
	sqlite3_bind_text(st, 1, floor_key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, "lexical_floor_identity", -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW) {
		const char *id = (const char *)sqlite3_column_text(st, 1);

		char want[1100];

		recall_floor_identity(identity, want, sizeof(want));
		/* a floor measured for another tokenizer (or scale) is not used */
		if (id && strcmp(id, want) == 0) {
			f = sqlite3_column_double(st, 0);
			*calibrated = 1;
		}
	}
	sqlite3_finalize(st);
	return f;
}

/* ------------------------------------------------------------------ recall */

static void pool_release(struct pool *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		cairn_record_free(p->v[i].rec);
	cairn_free(p->v);
	memset(p, 0, sizeof(*p));
}

/*
 * The key of schema si's term-count and length files (termstat.h), and in
 * path the database file they sit beside; 0 when there is none to use:
 * no revision, no database file.
 */
static int term_key(struct cairn_db *db, const char *schema, int si,
		    long long ndocs, struct termstat_key *k, char *path,
		    size_t size)
{
	struct stat fs;

	if (!store_db_file(db, si, path, size) || stat(path, &fs) != 0 ||
	    store_revision(db, schema, &k->revision) != CAIRN_OK)
		return 0;
	k->ndocs = ndocs;
	k->dev = (uint64_t)fs.st_dev;
	k->ino = (uint64_t)fs.st_ino;
	return 1;
}

/* Rows of schema's records table into *n. */
static int count_records(struct cairn_db *db, const char *schema,
			 long long *n)
{
	char sql[96];
	sqlite3_stmt *st = NULL;
	int src;

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s.records", schema);
	src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
	if (src == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		*n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return src == SQLITE_OK ? CAIRN_OK : store_sql_error(db, src, "recall");
}

/* One SQLite varint (FTS5 writes docsize with sqlite3Fts5PutVarint). */
static const unsigned char *get_varint(const unsigned char *p,
				       const unsigned char *end, uint64_t *v)
{
	int i;

	*v = 0;
	for (i = 0; i < 8 && p < end; i++, p++) {
		*v = (*v << 7) | (*p & 0x7f);
		if (!(*p & 0x80))
			return p + 1;
	}
	if (p >= end)
		return NULL;
	*v = (*v << 8) | *p;
	return p + 1;
}

/*
 * The row lengths of schema (termstat.h) under key: the file beside base
 * when it has them, else read from records_fts_docsize (every column's
 * size summed, as xColumnSize(-1) gives it), written, and mapped. *out
 * stays empty when neither works (recall then asks FTS5 row by row).
 */
static void row_lengths(struct cairn_db *db, const char *schema,
			const struct termstat_key *key, const char *base,
			struct termstat_lengths *out)
{
	char path[4300], sql[128];
	sqlite3_stmt *st = NULL;
	uint32_t *len = NULL;
	sqlite3_int64 max = -1;
	size_t n, i;

	memset(out, 0, sizeof(*out));
#ifdef CAIRN_MUTATE_NO_LENGTHS
	return;
#endif
	if (snprintf(path, sizeof(path), "%s" TERMSTAT_LEN_SUFFIX, base) >=
	    (int)sizeof(path))
		return;
	if (termstat_lengths_open(path, key, out) == 0)
		return;
	snprintf(sql, sizeof(sql),
		 "SELECT max(id) FROM %s.records_fts_docsize", schema);
	if (sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		max = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	st = NULL;
	if (max < 0 || max >= (sqlite3_int64)TERMSTAT_MAX_ROWID)
		return;
	n = (size_t)max + 1;
	len = util_calloc(n, sizeof(*len));
	if (!len)
		return;
	for (i = 0; i < n; i++)
		len[i] = TERMSTAT_NO_ROW;
	snprintf(sql, sizeof(sql), "SELECT id, sz FROM %s.records_fts_docsize",
		 schema);
	if (sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL) != SQLITE_OK)
		goto out;
	while (sqlite3_step(st) == SQLITE_ROW) {
		sqlite3_int64 id = sqlite3_column_int64(st, 0);
		const unsigned char *p = sqlite3_column_blob(st, 1);
		const unsigned char *end = p + sqlite3_column_bytes(st, 1);
		uint64_t sum = 0, v;

		if (id < 0 || (size_t)id >= n)
			continue;
		while (p && p < end && (p = get_varint(p, end, &v)) != NULL)
			sum += v;
		if (!p || sum >= TERMSTAT_NO_ROW)
			continue; /* malformed: FTS5 is asked for this row */
		len[id] = (uint32_t)sum;
	}
	if (termstat_lengths_write(path, key, len, n) == 0)
		(void)termstat_lengths_open(path, key, out);
out:
	sqlite3_finalize(st);
	cairn_free(len);
}

/*
 * Document counts and idf of every term for schema si (terms counted for
 * it already are kept). Counts come from the term-count file beside base
 * when there is a key (recall's own read transaction: see termstat.h) and
 * it has them, else from fts5vocab, and those are appended to the file.
 * fts5vocab walks every position of a term to count its rows (~40% of a
 * 10k-record hook's instructions for a question of common words), hence
 * the file. Counting MATCH rows only up to half the store (all a floor
 * idf needs) was tried: 33% cheaper there but 30% dearer on
 * bench/recall_bench.c's 100k records, whose terms are rarer.
 */
static int term_stats(struct cairn_db *db, const char *schema, int si,
		      const struct termstat_key *key, const char *base,
		      struct terms *t, long long ndocs)
{
	char sql[160], path[4300];
	sqlite3_stmt *st = NULL;
	long long *df = NULL;
	char **txt = NULL;
	size_t *lens = NULL, i, nput = 0;
	unsigned char *put = NULL;
	int src, rc = CAIRN_OK, cached = key != NULL;

	if (t->n == 0)
		return CAIRN_OK;
	df = util_calloc(t->n, sizeof(*df));
	txt = util_calloc(t->n, sizeof(*txt));
	lens = util_calloc(t->n, sizeof(*lens));
	put = util_calloc(t->n, 1);
	if (!df || !txt || !lens || !put) {
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < t->n; i++) {
		df[i] = t->v[i].df_of == si + 1 ? t->v[i].df : -1;
		txt[i] = t->v[i].text;
		lens[i] = t->v[i].len;
	}
#ifdef CAIRN_MUTATE_NO_TERMSTAT
	cached = 0;
#endif
	if (cached)
		cached = snprintf(path, sizeof(path), "%s" TERMSTAT_SUFFIX,
				  base) < (int)sizeof(path);
	if (cached)
		termstat_get(path, key, t->n, txt, lens, df);
	snprintf(sql, sizeof(sql),
		 "SELECT doc FROM %s.records_vocab WHERE term = ?1", schema);
	for (i = 0; i < t->n; i++) {
		if (df[i] >= 0)
			continue;
		if (!st) {
			src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
			if (src != SQLITE_OK) {
				rc = store_sql_error(db, src, "recall");
				goto out;
			}
		}
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, t->v[i].text, (int)t->v[i].len,
				  SQLITE_STATIC);
		df[i] = sqlite3_step(st) == SQLITE_ROW
				? sqlite3_column_int64(st, 0)
				: 0;
		put[i] = 1;
		nput++;
	}
	if (cached && nput > 0)
		termstat_put(path, key, t->n, txt, lens, df, put);
	for (i = 0; i < t->n; i++) {
		double n = (double)ndocs, d;

		t->v[i].df = df[i];
		t->v[i].df_of = si + 1;
		d = (double)df[i];
		if (d > n)
			n = d;
		/*
		 * FTS5's own idf (fts5_bm25.c), so that the signal below is
		 * bounded by 1: terms in more than half the records weigh
		 * (almost) nothing, as they do in bm25().
		 */
		t->v[i].idf = log((n - d + 0.5) / (d + 0.5));
		if (t->v[i].idf <= 0)
			t->v[i].idf = RECALL_IDF_MIN;
	}
out:
	sqlite3_finalize(st);
	cairn_free(df);
	cairn_free(txt);
	cairn_free(lens);
	cairn_free(put);
	return rc;
}

/* Append a record of schema read by st (bound to rid) to the pool. */
static int pool_fetch(struct cairn_db *db, sqlite3_stmt *st,
		      const struct rank_hit *h, const int *mv, int nmv,
		      struct pool *pool, int *rank)
{
	struct cand *c;
	int src, j;

	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, h->rowid);
	src = sqlite3_step(st);
	if (src == SQLITE_DONE)
		return CAIRN_OK; /* filtered out (status, kind) */
	if (src != SQLITE_ROW)
		return store_sql_error(db, src, "recall");
	if (pool->n == pool->cap) {
		size_t ncap = pool->cap ? 2 * pool->cap : 32;
		struct cand *nv = util_realloc(pool->v, ncap * sizeof(*nv));

		if (!nv)
			return store_error(db, CAIRN_NOMEM, "out of memory");
		pool->v = nv;
		pool->cap = ncap;
	}
	c = &pool->v[pool->n];
	memset(c, 0, sizeof(*c));
	c->bm25 = h->score;
	/* phrase j of this schema's search is question term mv[j]: the
	 * mask is kept by term, as the schemas' phrases differ (df 0) */
	for (j = 0; j < nmv && j < 64; j++)
		if ((h->mask & (sqlite3_int64)((sqlite3_uint64)1 << j)) &&
		    mv[j] >= 0 && mv[j] < 64)
			c->mask |= (sqlite3_int64)((sqlite3_uint64)1 << mv[j]);
	c->rank = ++*rank;
	c->rec = store_row_record(st, 0);
	if (!c->rec)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	pool->n++;
	return CAIRN_OK;
}

/*
 * Which rows are ranked at all (MaxScore, exact). A term's share of a
 * row's BM25 is below idf x weight x (k1 + 1) whatever the row (the
 * frequency factor f (k1 + 1) / (f + K) stays below k1 + 1), so a row
 * that matches none of the "essential" terms (a prefix of the terms by
 * descending bound) scores below the sum of the other terms' bounds,
 * rest. The MATCH "(E1 OR E2 ...) AND (T1 OR T2 ...)" ranks only rows
 * with an essential term, every term still counting in their scores (the
 * essential phrases come first and get idf 0: cairn_rank reads the terms
 * from phrase `first` on). A question's common words match most of the
 * store; their rows are never read.
 *
 * Pass 1 takes the terms of highest bound until their document
 * frequencies add up to RECALL_PRUNE_ROWS. If it fills the heap
 * (RECALL_INNER rows) and its worst score is at least rest, no row left
 * out could have been kept: done. Otherwise that worst score is still a
 * lower bound of the true one (more rows only raise it), so pass 2 takes
 * as many terms as make rest smaller than it, and skips every row whose
 * bound is below it. Either way the kept rows, their scores and their
 * order are those of ranking the plain OR of the terms.
 */
struct terms_order {
	int ord[RECALL_MAX_TERMS];      /* index in the match list, best bound first */
	double bound[RECALL_MAX_TERMS]; /* idf x weight x (k1 + 1), same order */
	int n;
};

/* Bound of a row that matches none of ord[0 .. ness), with a margin. */
static double order_rest(const struct terms_order *to, int ness)
{
	double rest = 0;
	int j;

	for (j = ness; j < to->n; j++)
		rest += to->bound[j];
	return rest * (1 + 1e-9);
}

/*
 * The MATCH of terms mv[0 .. n) (raw-escaped), with the essential ones
 * ord[0 .. ness) in front when ness < n.
 */
static void build_match(struct sbuf *m, const struct terms *t,
			const int *mv, const struct terms_order *to, int ness)
{
	int i;

	sbuf_reset(m);
	if (ness < to->n) {
		sbuf_addc(m, '(');
		for (i = 0; i < ness; i++) {
			if (i)
				sbuf_adds(m, " OR ");
			query_add_raw(m, &t->v[mv[to->ord[i]]]);
		}
		sbuf_adds(m, ") AND (");
	}
	for (i = 0; i < to->n; i++) {
		if (i)
			sbuf_adds(m, " OR ");
		query_add_raw(m, &t->v[mv[i]]);
	}
	if (ness < to->n)
		sbuf_addc(m, ')');
}

/* One ranking pass: st over match, into c (heap of cap, floor, first). */
static int rank_pass(struct cairn_db *db, sqlite3_stmt *st,
		     const struct sbuf *match, struct rank_ctx *c)
{
	int src;

	if (match->err)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	c->nv = 0;
	c->seen = 0;
	c->unread = 0;
	sqlite3_reset(st);
	sqlite3_bind_text(st, 1, match->buf, (int)match->len, SQLITE_STATIC);
	sqlite3_bind_pointer(st, 2, c, "cairn_rank", NULL);
	while ((src = sqlite3_step(st)) == SQLITE_ROW)
		;
	sqlite3_reset(st);
	if (src != SQLITE_DONE)
		return store_sql_error(db, src, "recall");
	if (c->nomem)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	return CAIRN_OK;
}

/*
 * The phrases of a schema's search: the terms it says (one in no record
 * cannot match; it still counts in the mass), mv[j] the question term of
 * phrase j, c->idf[j] its idf x weight, and in to their bounds by
 * descending bound (ties keep question order).
 */
static void order_terms(const struct terms *t, int *mv, struct terms_order *to,
			struct rank_ctx *c)
{
	size_t i;
	int j;

	for (i = 0; i < t->n && to->n < RECALL_MAX_TERMS; i++) {
		double b = t->v[i].idf * t->v[i].weight * (RECALL_K1 + 1.0);

		if (t->v[i].df == 0)
			continue;
		mv[to->n] = (int)i;
		c->idf[to->n] = t->v[i].idf * t->v[i].weight;
		for (j = to->n; j > 0 && to->bound[j - 1] < b; j--) {
			to->ord[j] = to->ord[j - 1];
			to->bound[j] = to->bound[j - 1];
		}
		to->ord[j] = to->n;
		to->bound[j] = b;
		to->n++;
	}
	c->n = to->n;
}

/*
 * Run the BM25 pool over one schema and append its candidates: rank the
 * matching rows inside FTS5 (cairn_rank keeps the best RECALL_INNER), then
 * read those records by rid, best first, through the status and kind
 * filters until the pool holds RECALL_POOL. Joining every matching row to
 * the records table before sorting cost most of recall's time on 100k
 * records, and sorting in SQL most of what remained (bench/README.md).
 * When the filters leave the pool short while more rows matched, rank
 * again keeping every row.
 */
static int search_schema(struct cairn_db *db, const char *schema,
			 const struct terms *t, const cairn_recall_opts *o,
			 const struct termstat_key *key, const char *base,
			 struct pool *pool)
{
	struct sbuf match = SBUF_INIT, sql = SBUF_INIT;
	struct termstat_lengths lens;
	struct rank_ctx rc_;
	struct terms_order to;
	sqlite3_stmt *st = NULL, *get = NULL;
	size_t i, first = pool->n;
	int rc = CAIRN_OK, src, rank = 0, mv[RECALL_MAX_TERMS], ness;
	long long rows = 0;
#ifndef CAIRN_MUTATE_NO_RECALL_STATUS
	/* SPEC 3: default recall searches accepted + unverified only */
	const char *statuses = o->statuses && *o->statuses
				       ? o->statuses
				       : "accepted,unverified";
#else
	const char *statuses = "all";
#endif

	memset(&rc_, 0, sizeof(rc_));
	memset(&to, 0, sizeof(to));
	memset(&lens, 0, sizeof(lens));
	rc_.wcol[0] = RECALL_W_TITLE;
	rc_.wcol[1] = RECALL_W_BODY;
	order_terms(t, mv, &to, &rc_);
	if (to.n == 0)
		goto out;
	/* the records, by rid, through the caller's filters */
	sbuf_addf(&sql, "SELECT " STORE_COLS " FROM %s.records WHERE rid = ?1",
		  schema);
	if (strcmp(statuses, "all") != 0)
		rc = store_add_in(db, &sql, "status", statuses,
				  cairn_status_valid, "status");
	if (rc == CAIRN_OK && o->kinds && *o->kinds)
		rc = store_add_in(db, &sql, "kind", o->kinds, cairn_kind_valid,
				  "kind");
	if (rc)
		goto out;
	src = sql.err ? SQLITE_NOMEM
		      : sqlite3_prepare_v2(db->sql, sql.buf, -1, &get, NULL);
	if (src == SQLITE_OK) {
		sbuf_reset(&sql);
		sbuf_addf(&sql,
			  "SELECT cairn_rank(records_fts, ?2) FROM "
			  "%s.records_fts WHERE records_fts MATCH ?1",
			  schema);
		src = sql.err ? SQLITE_NOMEM
			      : sqlite3_prepare_v2(db->sql, sql.buf, -1, &st,
						   NULL);
	}
	if (src != SQLITE_OK) {
		rc = store_sql_error(db, src, "recall");
		goto out;
	}
	if (key) {
		row_lengths(db, schema, key, base, &lens);
		rc_.lens = lens.len;
		rc_.nlens = lens.n;
	}
	/* pass 1 (struct terms_order) */
	for (ness = 0; ness < to.n && rows < RECALL_PRUNE_ROWS; ness++)
		rows += t->v[mv[to.ord[ness]]].df;
	rc_.cap = RECALL_INNER;
	rc_.floor = -HUGE_VAL;
	rc_.first = ness < to.n ? ness : 0;
	build_match(&match, t, mv, &to, ness);
	rc = rank_pass(db, st, &match, &rc_);
	if (rc)
		goto out;
	if (ness < to.n) {
		int full = rc_.nv == rc_.cap;
		double worst = full ? rc_.v[0].score : -HUGE_VAL;

#ifndef CAIRN_MUTATE_NO_PRUNE_CHECK
		if (!full || worst < order_rest(&to, ness)) {
#else
		if (!full) { /* negative control: pass 1 trusted unchecked */
#endif
			/* pass 2: enough terms for what pass 1 kept */
			while (ness < to.n && order_rest(&to, ness) >= worst)
				ness++;
			rc_.floor = worst;
			rc_.first = ness < to.n ? ness : 0;
			build_match(&match, t, mv, &to, ness);
			rc = rank_pass(db, st, &match, &rc_);
			if (rc)
				goto out;
		}
	}
fetch:
	if (rc_.nv > 1)
		qsort(rc_.v, rc_.nv, sizeof(rc_.v[0]), hit_cmp);
	for (i = 0; i < rc_.nv && pool->n - first < RECALL_POOL; i++) {
		rc = pool_fetch(db, get, &rc_.v[i], mv, (int)to.n, pool, &rank);
		if (rc)
			goto out;
	}
	if (rc_.cap > 0 && pool->n - first < RECALL_POOL &&
	    (rc_.seen > (sqlite3_int64)rc_.cap || rc_.first > 0 ||
	     rc_.floor > -HUGE_VAL)) {
		/*
		 * The filters ate the pool: rank again keeping RECALL_GROW
		 * times as many rows (every matching row once that is most
		 * of them).
		 */
		for (i = first; i < pool->n; i++)
			cairn_record_free(pool->v[i].rec);
		pool->n = first;
		rank = 0;
		rc_.cap = rc_.cap * RECALL_GROW < (size_t)rc_.seen
				  ? rc_.cap * RECALL_GROW
				  : 0;
		rc_.floor = -HUGE_VAL;
		rc_.first = 0;
		build_match(&match, t, mv, &to, to.n);
		rc = rank_pass(db, st, &match, &rc_);
		if (rc)
			goto out;
		goto fetch;
	}
	for (i = first; i < pool->n; i++)
		pool->v[i].best = pool->v[first].bm25;
out:
	sqlite3_finalize(st);
	sqlite3_finalize(get);
	termstat_lengths_close(&lens);
	cairn_free(rc_.v);
	sbuf_release(&sql);
	sbuf_release(&match);
	return rc;
}

/*
 * The lexical signal: BM25 normalised by the most the question could score,
 * s = bm25 / ((k1 + 1) x sum of the terms' idf x the title weight) in 0..1.
 * A term's BM25 contribution approaches idf x (k1 + 1) as its frequency
 * grows, so s is 1 only for a record that matches every term of the
 * question densely; terms found nowhere in the store still count in the
 * sum, so a question about something the store never mentions scores low
 * even when a few common words match. Measured against the share of IDF
 * mass matched (which ignores frequency and length): on adr-workspace it
 * separates paraphrased questions from probes better (the highest probe
 * fell from 0.69 to 0.27).
 */
static void score_signal(struct cand *c, const struct terms *t)
{
	double all = 0;
	size_t i;

	for (i = 0; i < t->n; i++)
		all += t->v[i].idf * t->v[i].weight;
	all *= (RECALL_K1 + 1.0) * RECALL_W_TITLE;
	c->signal = all > 0 ? c->bm25 / all : 0;
	if (c->signal > 1)
		c->signal = 1;
}

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->bm25 != y->bm25)
		return x->bm25 > y->bm25 ? -1 : 1;
	return strcmp(x->rec->id, y->rec->id);
}

static void matched_terms(struct sbuf *sb, const struct cand *c,
			  const struct terms *t)
{
	size_t i;
	int first = 1;

	for (i = 0; i < t->n && i < 64; i++) {
		if (c->mask & ((sqlite3_int64)((sqlite3_uint64)1 << i))) {
			const struct qterm *q = &t->v[i];

			if (q->gloss && q->from < t->n)
				sbuf_addf(sb, "%s%.*s=%.*s", first ? "" : " ",
					  (int)t->v[q->from].len,
					  t->v[q->from].text, (int)q->len,
					  q->text);
			else
				sbuf_addf(sb, "%s%.*s", first ? "" : " ",
					  (int)q->len, q->text);
			first = 0;
		}
	}
}

/* The ranking configuration: defaults, then meta 'rank.*' of the main store. */
static void load_rank_config(struct cairn_db *db, struct rank_config *cfg)
{
	sqlite3_stmt *st = NULL;

	rank_config_default(cfg);
	if (sqlite3_prepare_v2(db->sql,
			       "SELECT k, v FROM main.meta WHERE k LIKE "
			       "'rank.%'",
			       -1, &st, NULL) != SQLITE_OK)
		return;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		const char *v = (const char *)sqlite3_column_text(st, 1);

		if (k && v)
			(void)rank_config_set(cfg, k + 5, v); /* bad values: ignored */
	}
	sqlite3_finalize(st);
}

/* -------------------------------------------------------------- one recall */

/* One call of cairn_recall, from the question to the receipt. */
struct recall {
	struct cairn_db *db;
	const char *query;
	const cairn_recall_opts *o;
	size_t k;               /* most hits returned */
	struct tok *tk;         /* the connection's tokenizer */
	const char *identity;   /* its identity: the floor's and the receipt's */
	int own_read;           /* 1: recall's own read transaction is open */
	struct terms t;         /* the question's terms (query.h) */
	struct pool pool;       /* the candidates */
	struct dense dn;        /* the dense side (dn.n 0: lexical only) */
	struct rank_config cfg; /* weights and floors of both modes */
	struct rank_cand *rv;   /* pool.n candidates, ranked; rv[i].id: in pool */
	double floor;           /* the question's floor: calibrated or default */
	double hit_floor;       /* a hit's: the lower of floor and the default */
	int calibrated;         /* 1: floor measured for this tokenizer */
	cairn_result *res;
};

/* The question: given, at most RECALL_MAX_QUERY bytes, valid UTF-8. */
static int check_question(struct cairn_db *db, const char *query)
{
	size_t qlen;
	long bad;

	if (!query)
		return store_error(db, CAIRN_INVALID, "no question given");
	qlen = strlen(query);
	if (qlen > RECALL_MAX_QUERY)
		return store_error(db, CAIRN_TOOBIG,
				   "question of %zu bytes is over the limit "
				   "of %d",
				   qlen, RECALL_MAX_QUERY);
	bad = util_utf8_invalid_at(query, qlen);
	if (bad >= 0)
		return store_error(db, CAIRN_INVALID,
				   "question is not valid UTF-8 at byte %ld",
				   bad);
	return CAIRN_OK;
}

/* Close recall's own read transaction, if open. */
static void end_read(struct recall *r)
{
	if (r->own_read)
		sqlite3_exec(r->db->sql, "COMMIT", NULL, NULL, NULL);
	r->own_read = 0;
}

/*
 * Steps 1 to 3 for schema s (0: main, 1: global): the terms' document
 * counts (from the term-count file beside the store, in recall's own read
 * transaction only), in the workspace also the glosses and the
 * RECALL_MAX_TERMS cap, then the BM25 pool and each hit's signal and
 * answerability.
 */
static int schema_pool(struct recall *r, int s)
{
	struct cairn_db *db = r->db;
	const char *schema = s == 0 ? "main" : "global";
	struct termstat_key key;
	struct answer_plan plan;
	long long ndocs = 0;
	char base[4200];
	size_t i, first = r->pool.n;
	int keyed, rc;

	rc = count_records(db, schema, &ndocs);
	if (rc)
		return rc;
	/* the files beside the store: only in our own snapshot */
	keyed = r->own_read &&
		term_key(db, schema, s, ndocs, &key, base, sizeof(base));
	rc = term_stats(db, schema, s, keyed ? &key : NULL, base, &r->t, ndocs);
	if (rc)
		return rc;
	if (s == 0) {
		size_t before = r->t.n;

		rc = query_glosses(db, r->tk, &r->t);
		if (rc == CAIRN_OK && r->t.n > before)
			rc = term_stats(db, schema, s, keyed ? &key : NULL,
					base, &r->t, ndocs);
		if (rc)
			return rc;
		if (query_cap(&r->t))
			return store_error(db, CAIRN_NOMEM, "out of memory");
		for (i = 0; i < r->t.n; i++)
			r->res->idf_mass += r->t.v[i].idf * r->t.v[i].weight;
	}
	rc = search_schema(db, schema, &r->t, r->o, keyed ? &key : NULL, base,
			   &r->pool);
	if (rc)
		return rc;
	answer_plan(&plan, &r->t, ndocs);
	if (s == 0) /* the question's part the workspace never says */
		r->res->answer_unseen = plan.mass > 0 ? plan.unseen / plan.mass
						      : 0;
	for (i = first; i < r->pool.n; i++) {
		score_signal(&r->pool.v[i], &r->t);
		score_answer(&r->pool.v[i], &plan);
	}
	if (doc_answer(&r->pool, first, &plan))
		return store_error(db, CAIRN_NOMEM, "out of memory");
	rc = answer_chance(db, schema, &r->t, &r->pool, first, &plan, ndocs,
			   s == 0 ? r->res : NULL);
	if (rc)
		return rc;
	answer_lone(&r->pool, first, &plan, ndocs, r->res);
	return CAIRN_OK;
}

/*
 * Steps 1 to 3: the question's terms, its floor, each schema's pool, and
 * the question's answerability (its best hit's, before any floor).
 */
static int lexical_pool(struct recall *r)
{
	struct cairn_db *db = r->db;
	size_t i;
	int rc, s;

	rc = query_terms(db, r->tk, r->query, &r->t);
	if (rc == CAIRN_OK)
		rc = query_bilingual(db);
	if (rc)
		return rc;
	if (r->t.n == 0)
		return store_error(db, CAIRN_INVALID,
				   "the question has no searchable words");
	r->floor = load_floor(db, r->identity, &r->calibrated);
	r->res->floor = r->floor;
	r->res->floor_calibrated = r->calibrated;
	for (s = 0; s < 2; s++) {
		if (s == 1 && !db->has_global)
			break;
		rc = schema_pool(r, s);
		if (rc)
			return rc;
	}
	for (i = 0; i < r->pool.n; i++)
		if (r->pool.v[i].answer > r->res->answer)
			r->res->answer = r->pool.v[i].answer;
	return CAIRN_OK;
}

/*
 * With vectors of the configured model: the dense side (recall_hybrid.c).
 * A model that fails (down, slow, unopenable, or yielding NaN) leaves
 * recall lexical only, and says so.
 */
static int dense_side(struct recall *r)
{
	int rc = recall_dense_pool(r->db, r->query, r->o, &r->dn);

	if (rc && r->dn.down) {
		char msg[600];

		snprintf(msg, sizeof(msg), "lexical recall only: %s",
			 cairn_errmsg(r->db));
		cairn_free(r->res->notice);
		r->res->notice = util_strdup(msg); /* NULL on OOM: no notice */
		r->res->embed_down = 1;
		recall_dense_release(&r->dn);
		rc = CAIRN_OK;
	}
	return rc;
}

/* The pool as rank.c takes it: rv[i] is pool.v[i]. */
static int fill_cands(struct recall *r)
{
	size_t i;

	r->rv = util_calloc(r->pool.n ? r->pool.n : 1, sizeof(*r->rv));
	if (!r->rv)
		return store_error(r->db, CAIRN_NOMEM, "out of memory");
	for (i = 0; i < r->pool.n; i++) {
		const struct cand *c = &r->pool.v[i];
		struct rank_cand *x = &r->rv[i];

		x->id = i;
		x->kind = c->rec->kind;
		x->status = c->rec->status;
		x->confidence = c->rec->confidence;
		x->source = c->rec->src_path;
		x->time = c->rec->time;
		x->exact_key = c->exact_key;
		x->bm25_rank = c->rank; /* 0: only the dense pool or the key */
		x->bm25 = c->bm25;
		x->lexical = c->answer;
		x->dense_rank = c->dense_rank;
		x->cosine = c->cosine;
		x->has_vector = c->has_vector;
		x->bm25_best = c->best;
		x->rec_id = c->rec->id;
		x->dated = r->t.when && query_states_date(c->rec);
	}
	return CAIRN_OK;
}

/*
 * Steps 4 and 5: one configuration for both modes (the store's weights,
 * the hit floor), then rank_lexical() over the BM25 pool, or, with a dense
 * pool, rank_run() over the hybrid candidates under the cosine floor.
 */
static int rank_pool(struct recall *r)
{
	struct rank_counts counts;
	size_t i;
	int rc;

	load_rank_config(r->db, &r->cfg);
	r->hit_floor = r->floor < RECALL_DEFAULT_FLOOR ? r->floor
						       : RECALL_DEFAULT_FLOOR;
	r->cfg.lex_floor = r->hit_floor;
#ifndef CAIRN_MUTATE_NO_FLOOR
	r->cfg.no_floor = r->o->no_floor;
#else
	r->cfg.no_floor = 1; /* negative control: nothing dropped */
#endif
	if (r->dn.n == 0) { /* lexical only: no model, or no vectors yet */
		rc = fill_cands(r);
		if (rc == CAIRN_OK)
			r->res->dropped = rank_lexical(r->rv, r->pool.n, &r->cfg,
						       !(r->res->answer <= r->floor));
		return rc;
	}
	r->cfg.cos_floor = recall_cos_floor(r->db, &r->dn, r->res);
	r->res->cos_floor = r->cfg.cos_floor;
	r->cfg.cos_calibrated = r->res->cos_floor_calibrated;
	/* a question below the floor has no lexical evidence to keep */
	if (r->res->answer <= r->floor)
		for (i = 0; i < r->pool.n; i++)
			r->pool.v[i].answer = 0;
	/* one BM25 ranking over both schemas (cand_cmp: raw BM25, then id) */
	if (r->pool.n > 1)
		qsort(r->pool.v, r->pool.n, sizeof(r->pool.v[0]), cand_cmp);
	for (i = 0; i < r->pool.n; i++)
		r->pool.v[i].rank = (int)i + 1;
	rc = recall_hybrid_pool(r->db, r->query, r->o, &r->pool, &r->dn);
	if (rc == CAIRN_OK)
		rc = fill_cands(r);
	if (rc)
		return rc;
	if (rank_run(r->rv, r->pool.n, &r->cfg, lifecycle_now(), NULL, NULL,
		     &counts))
		return store_error(r->db, CAIRN_ERROR, "rerank failed");
	r->res->hybrid = 1;
	r->res->dropped = counts.floor;
	r->res->dropped_dup = counts.dup;
	return CAIRN_OK;
}

/* h->explain for a lexical-only hit (x: its ranking by rank_lexical). */
static int explain_hit(cairn_hit *h, const struct cand *c,
		       const struct rank_cand *x, const struct recall *r)
{
	struct sbuf sb = SBUF_INIT;
	/* the comparisons as they are: under --no-floor a hit below either
	 * floor is shown too, and the text says so (never a false '>') */
	int answered = !(r->res->answer <= r->floor);
	int above = !(c->answer <= r->hit_floor);

	sbuf_addf(&sb,
		  "bm25: rank %d, raw %.4f (title x%g)\n"
		  "matched: %s\n"
		  "lexical: %.4f = bm25 / most the question could score\n"
		  "answer: %.4f = matched %.3f / question %.3f of IDF mass "
		  "(never said in the store: %.3f)\n"
		  "floor: question %.4f %s %.2f (%s): %s; hit %.4f %s %.2f "
		  "(each hit: the lower of the floor and %.2f) -> %s, "
		  "relevance %.4f\n"
		  "weight: %.2f (%s, %s)\n"
		  "score: %.4f = weight^%g x bm25/best (%.4f)\n",
		  c->rank, c->bm25, RECALL_W_TITLE, h->matched, c->signal,
		  c->answer, c->covered, c->mass, c->unseen, r->res->answer,
		  answered ? ">" : "<=", r->floor,
		  r->calibrated ? "calibrated" : "default, not calibrated",
		  answered ? "answered" : "not answered", c->answer,
		  above ? ">" : "<=", r->hit_floor, RECALL_DEFAULT_FLOOR,
		  answered && above ? "kept" : "kept by --no-floor",
		  x->relevance, x->weight, c->rec->kind, c->rec->status,
		  x->score, RANK_WEIGHT_EXP,
		  x->bm25_best > 0 ? x->bm25 / x->bm25_best : 0);
	if (c->lone)
		sbuf_adds(&sb, LONE_EXPLAIN);
	if (x->dated)
		sbuf_addf(&sb, "date: x %.2f (the question asks when; the "
			       "record states a date)\n",
			  1.0 + RANK_DATE_BOOST);
	if (sb.err) {
		sbuf_release(&sb);
		return CAIRN_NOMEM;
	}
	h->explain = sbuf_detach(&sb, NULL);
	return CAIRN_OK;
}

/*
 * The hits of both modes: the first k kept candidates of rv, each with its
 * figures (the hybrid ones only in hybrid recall), its matched terms and,
 * with opts.explain, its explanation; each record moves into its hit.
 */
static int build_hits(struct recall *r)
{
	cairn_result *res = r->res;
	struct sbuf sb = SBUF_INIT;
	size_t i, kept = rank_kept(r->rv, r->pool.n);
	double best_rrf = 0;
	int rc = CAIRN_OK;

	for (i = 0; i < kept; i++)
		if (r->rv[i].rrf > best_rrf)
			best_rrf = r->rv[i].rrf;
	res->n = kept < r->k ? kept : r->k;
	if (res->n) {
		res->hits = util_calloc(res->n, sizeof(*res->hits));
		if (!res->hits) {
			res->n = 0;
			return store_error(r->db, CAIRN_NOMEM, "out of memory");
		}
	}
	for (i = 0; i < res->n && rc == CAIRN_OK; i++) {
		const struct rank_cand *x = &r->rv[i];
		struct cand *c = &r->pool.v[x->id];
		cairn_hit *h = &res->hits[i];

		h->score = x->score;
		h->relevance = x->relevance;
		h->lexical = c->signal;
		h->answer = c->answer;
		h->bm25 = x->bm25;
		h->bm25_rank = x->bm25_rank;
		h->weight = x->weight;
		if (res->hybrid) {
			h->dense_rank = x->dense_rank;
			h->cosine = x->cosine;
			h->has_vector = x->has_vector;
			h->rrf = x->rrf;
			h->pinned = x->pinned;
			h->exact_key = x->exact_key;
			h->decay = x->decay;
			h->basis = recall_basis_name(x->basis);
		}
		sbuf_reset(&sb);
		if (x->bm25_rank > 0)
			matched_terms(&sb, c, &r->t);
		h->matched = util_strdup(sbuf_str(&sb));
		if (!h->matched || sb.err) {
			rc = store_error(r->db, CAIRN_NOMEM, "out of memory");
		} else if (r->o->explain) {
			rc = res->hybrid ? recall_explain_hybrid(h, c, x, &r->cfg,
								 res, best_rrf)
					 : explain_hit(h, c, x, r);
			if (rc)
				rc = store_error(r->db, rc, "out of memory");
		}
		h->rec = c->rec; /* moved into the result */
		c->rec = NULL;
	}
	sbuf_release(&sb);
	return rc;
}

/*
 * Step 6 and after: the terms searched, the rerank (off by default), the
 * sources that moved on (drift), recall's read transaction closed, then
 * the receipt.
 */
static int finish(struct recall *r)
{
	struct sbuf sb = SBUF_INIT;
	size_t i;
	int rc;

	for (i = 0; i < r->t.n; i++) {
		sbuf_addf(&sb, "%s%.*s", i ? " " : "", (int)r->t.v[i].len,
			  r->t.v[i].text);
		r->res->words += !r->t.v[i].gloss;
	}
	r->res->terms = util_strdup(sbuf_str(&sb));
	sbuf_release(&sb);
	if (!r->res->terms)
		return store_error(r->db, CAIRN_NOMEM, "out of memory");
	rc = rerank_result(r->db, r->query, r->o, r->res); /* step 6: off by default */
	if (rc == CAIRN_OK)
		rc = drift_mark(r->db, r->res); /* step 7: sources that moved on */
	end_read(r);
	if (rc == CAIRN_OK && !r->o->no_receipt)
		rc = receipt_write(r->db, r->query, r->identity, r->dn.label,
				   r->res);
	return rc;
}

/* ----------------------------------------------------------------- public */

int cairn_recall(cairn_db *db, const char *query,
		 const cairn_recall_opts *opts, cairn_result **out)
{
	static const cairn_recall_opts defaults;
	struct recall r;
	char err[256];
	int rc;

	*out = NULL;
	memset(&r, 0, sizeof(r));
	r.db = db;
	r.query = query;
	r.o = opts ? opts : &defaults;
	rc = check_question(db, query);
	if (rc)
		return rc;
	r.k = r.o->k > 0 ? (size_t)r.o->k : 5;
	if (r.k > RECALL_MAX_K)
		r.k = RECALL_MAX_K;
	r.tk = fts_tok(db->sql, err, sizeof(err));
	if (!r.tk)
		return store_error(db, CAIRN_IO, "%s", err);
	r.identity = tok_identity(r.tk);
	rc = register_aux(db);
	if (rc)
		return rc;
	/*
	 * SPEC 5.5: age the records at most daily, before searching. A recall
	 * that writes nothing (no_receipt: evaluation, calibration) does not;
	 * a failure (e.g. a read-only store) does not stop the recall.
	 */
	if (!r.o->no_receipt && lifecycle_due(db) == 1)
		(void)cairn_gc(db, 1, NULL); /* due: drain the spool, then age */
	r.res = util_calloc(1, sizeof(*r.res));
	if (!r.res)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	/*
	 * One read transaction for every lookup up to the receipt: each
	 * statement on its own would take and drop the WAL read lock and
	 * look at the files again (~700 system calls for a hook prompt, one
	 * per fetched record and per term). Not when the caller holds one.
	 */
	if (sqlite3_get_autocommit(db->sql) &&
	    sqlite3_exec(db->sql, "BEGIN", NULL, NULL, NULL) == SQLITE_OK)
		r.own_read = 1;
	rc = lexical_pool(&r);
	if (rc == CAIRN_OK)
		rc = dense_side(&r);
	if (rc == CAIRN_OK)
		rc = rank_pool(&r);
	if (rc == CAIRN_OK)
		rc = build_hits(&r);
	if (rc == CAIRN_OK)
		rc = finish(&r);
	end_read(&r);
	recall_dense_release(&r.dn);
	pool_release(&r.pool);
	query_release(&r.t);
	cairn_free(r.rv);
	if (rc) {
		cairn_result_free(r.res);
		return rc;
	}
	*out = r.res;
	return CAIRN_OK;
}

void cairn_result_free(cairn_result *res)
{
	size_t i;

	if (!res)
		return;
	for (i = 0; i < res->n; i++) {
		cairn_record_free(res->hits[i].rec);
		cairn_free(res->hits[i].matched);
		cairn_free(res->hits[i].explain);
		cairn_free(res->hits[i].drift);
	}
	cairn_free(res->hits);
	cairn_free(res->terms);
	cairn_free(res->notice);
	cairn_free(res);
}

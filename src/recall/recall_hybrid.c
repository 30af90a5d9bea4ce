/*
 * recall_hybrid.c -- the dense side of hybrid recall (SPEC 5.2;
 * docs/RANKING.md): the question embedded with the store's model, the
 * dense pool (vector_search), each BM25 hit's own cosine from its stored
 * vector, the exact drawer (the record whose key the question is), the
 * cosine floor calibrated for the vector identity, and the explanation of
 * a hybrid hit. recall.c ranks what this gathers with rank_run().
 *
 * Layer: internal to recall; on store, vector/embed and rank (the names
 * of its steps). Above it: recall.c, calibrate.c (the dense pool).
 * Invariants: a vector of another identity is never compared (the cosine
 *   floor of another identity is not used either: a notice says so); the
 *   exact drawer and the dense pool obey the caller's status and kind
 *   filters, accepted + unverified by default.
 * Must never: write to the store, or rank (the order is rank.c's).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embed.h"
#include "quant.h"
#include "rank.h"
#include "recall_int.h"
#include "store.h"
#include "vector.h"


/*
 * Floor used for cosines before `cairn calibrate` has measured one for the
 * configured vector identity: none (every cosine above 0 counts), with a
 * notice in the result. A floor from another model would be wrong in
 * either direction (bge-base's 0.51 drops nothing for models whose
 * cosines all lie above 0.7, and everything for others).
 */
#define RECALL_DEFAULT_COS_FLOOR 0.0

/* Free the question vector and the dense pool; d is empty afterwards. */
void recall_dense_release(struct dense *d)
{
	cairn_free(d->q);
	cairn_free(d->hits);
	memset(d, 0, sizeof(*d));
}

/*
 * Embed the question and fetch the dense pool. d->n == 0 (and CAIRN_OK)
 * when no provider is configured or no record has a vector: recall is then
 * lexical only, exactly as without a model.
 */
int recall_dense_pool(struct cairn_db *db, const char *query,
		      const cairn_recall_opts *o, struct dense *d)
{
	const struct embed_identity *id;
	struct vector_filter f;
	char err[256];
	int rc;

	memset(d, 0, sizeof(*d));
	rc = vector_embedder(db, &d->e);
	/* a model that cannot be opened (an http server down, a file gone
	 * or damaged) leaves recall lexical, as one that fails below */
	d->down = rc != CAIRN_OK && rc != CAIRN_NOMEM;
	if (rc || !d->e)
		return rc;
	id = embed_identity(d->e);
	d->dim = id->dim;
	if (d->dim <= 0 || d->dim > VECTOR_MAX_DIM)
		return store_error(db, CAIRN_CORRUPT,
				   "embedder reports %d dimensions", d->dim);
	d->q = util_calloc((size_t)d->dim, sizeof(*d->q));
	d->hits = util_calloc(RANK_POOL, sizeof(*d->hits));
	if (!d->q || !d->hits)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	rc = embed_identity_string(id, d->identity, sizeof(d->identity));
	if (rc)
		return store_error(db, rc, "vector identity too long");
	snprintf(d->label, sizeof(d->label), "%s/%s@%.12s/%d", id->provider,
		 id->model, id->revision, id->dim);
	embed_set_budget(d->e, o->embed_budget_ms < 0 ? 0
			       : o->embed_budget_ms ? o->embed_budget_ms
						    : CAIRN_EMBED_BUDGET_MS);
	rc = embed_texts(d->e, 1, &query, 1, d->q, err, sizeof(err));
	embed_set_budget(d->e, 0);
	if (rc) {
		/* any failure of the model: down, slow, or NaN (issue 31: a
		 * NaN-yielding model made every recall fail and the hook
		 * inject nothing) */
#ifndef CAIRN_MUTATE_MODEL_FAIL_FATAL
		d->down = rc != CAIRN_NOMEM;
#else
		d->down = rc == CAIRN_IO;
#endif
		return store_error(db, rc, "embedding the question: %s", err);
	}
	f.kinds = o->kinds && *o->kinds ? o->kinds : NULL;
#ifndef CAIRN_MUTATE_NO_RECALL_STATUS
	f.statuses = o->statuses && *o->statuses ? o->statuses : NULL;
#else
	f.statuses = "all";
#endif
	if (f.statuses && strcmp(f.statuses, "all") == 0)
		f.statuses = "candidate,accepted,unverified,stale,superseded,"
			     "historical,false,retired,rejected";
	return vector_search(db, id, d->q, &f, RANK_POOL, d->hits, &d->n);
}

/*
 * Cosine of the question with the stored vector of record id (if any).
 * st[2] caches one prepared statement per schema (main, global); the
 * caller finalizes them.
 */
static int stored_cosine(struct cairn_db *db, sqlite3_stmt *st[2],
			 const char *schema, const char *id,
			 const struct dense *d, double *cos, int *has)
{
	char sql[200];
	sqlite3_stmt **sp = &st[strcmp(schema, "main") == 0 ? 0 : 1];
	int src, i;

	*has = 0;
	*cos = 0;
	if (!*sp) {
		snprintf(sql, sizeof(sql),
			 "SELECT v.v FROM %s.vectors v JOIN %s.records r ON "
			 "r.rid = v.rid WHERE r.id = ?1",
			 schema, schema);
		src = sqlite3_prepare_v2(db->sql, sql, -1, sp, NULL);
		if (src != SQLITE_OK)
			return store_sql_error(db, src, "reading a vector");
	}
	sqlite3_reset(*sp);
	sqlite3_bind_text(*sp, 1, id, -1, SQLITE_STATIC);
	src = sqlite3_step(*sp);
	if (src == SQLITE_ROW &&
	    sqlite3_column_bytes(*sp, 0) == 2 * d->dim) {
		const unsigned char *b = sqlite3_column_blob(*sp, 0);
		double dot = 0;

		for (i = 0; i < d->dim; i++)
			dot += (double)quant_f16_to_f32((uint16_t)(
				       b[2 * i] | b[2 * i + 1] << 8)) *
			       d->q[i];
		*cos = dot;
		*has = 1;
	}
	sqlite3_reset(*sp);
	if (src != SQLITE_ROW && src != SQLITE_DONE)
		return store_sql_error(db, src, "reading a vector");
	return CAIRN_OK;
}

/* One record of schema by a WHERE clause on ?1 (text or rowid). */
static int fetch_record(struct cairn_db *db, const char *schema,
			const char *where, const char *text, long long rid,
			const cairn_recall_opts *o, cairn_record **out)
{
	struct sbuf sql = SBUF_INIT;
	sqlite3_stmt *st = NULL;
	int rc = CAIRN_OK, src;

	*out = NULL;
	sbuf_addf(&sql, "SELECT " STORE_COLS " FROM %s.records WHERE %s",
		  schema, where);
	if (text) { /* the exact drawer: the caller's status and kind filter */
		const char *statuses = o->statuses && *o->statuses
					       ? o->statuses
					       : "accepted,unverified";

		if (strcmp(statuses, "all") != 0)
			rc = store_add_in(db, &sql, "status", statuses,
					  cairn_status_valid, "status");
		if (rc == CAIRN_OK && o->kinds && *o->kinds)
			rc = store_add_in(db, &sql, "kind", o->kinds,
					  cairn_kind_valid, "kind");
	}
	if (rc == CAIRN_OK && sql.err)
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
	if (rc)
		goto out;
	src = sqlite3_prepare_v2(db->sql, sql.buf, -1, &st, NULL);
	if (src != SQLITE_OK) {
		rc = store_sql_error(db, src, "recall");
		goto out;
	}
	if (text)
		sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
	else
		sqlite3_bind_int64(st, 1, rid);
	src = sqlite3_step(st);
	if (src == SQLITE_ROW) {
		*out = store_row_record(st, 0);
		if (!*out)
			rc = store_error(db, CAIRN_NOMEM, "out of memory");
	} else if (src != SQLITE_DONE) {
		rc = store_sql_error(db, src, "recall");
	}
out:
	sqlite3_finalize(st);
	sbuf_release(&sql);
	return rc;
}

/*
 * The record of schema by rid, through a statement prepared once per
 * schema (st[2], finalized by the caller): a dense pool fetches up to 200,
 * and preparing the 25-column SELECT each time was a fifth of a hook
 * call with a model. *out NULL when there is no such record.
 */
static int fetch_rid(struct cairn_db *db, sqlite3_stmt *st[2],
		     const char *schema, long long rid, cairn_record **out)
{
	int si = strcmp(schema, "global") == 0, src;

	*out = NULL;
	if (!st[si]) {
		struct sbuf sql = SBUF_INIT;

		sbuf_addf(&sql, "SELECT " STORE_COLS " FROM %s.records "
				"WHERE rid = ?1",
			  schema);
		src = sql.err ? SQLITE_NOMEM
			      : sqlite3_prepare_v2(db->sql, sql.buf, -1,
						   &st[si], NULL);
		sbuf_release(&sql);
		if (src != SQLITE_OK)
			return store_sql_error(db, src, "recall");
	}
	sqlite3_reset(st[si]);
	sqlite3_bind_int64(st[si], 1, rid);
	src = sqlite3_step(st[si]);
	if (src == SQLITE_ROW) {
		*out = store_row_record(st[si], 0);
		if (!*out)
			return store_error(db, CAIRN_NOMEM, "out of memory");
	} else if (src != SQLITE_DONE) {
		return store_sql_error(db, src, "recall");
	}
	return CAIRN_OK;
}

/* Append a candidate that only the dense pool or the key found. */
static struct cand *pool_add(struct pool *pool, cairn_record *rec)
{
	struct cand *c;

	if (pool->n == pool->cap) {
		size_t ncap = pool->cap ? 2 * pool->cap : 32;
		struct cand *nv = util_realloc(pool->v, ncap * sizeof(*nv));

		if (!nv)
			return NULL;
		pool->v = nv;
		pool->cap = ncap;
	}
	c = &pool->v[pool->n++];
	memset(c, 0, sizeof(*c));
	c->rec = rec;
	return c;
}

static long pool_find(const struct pool *pool, const char *schema,
		      const char *id)
{
	size_t i;

	for (i = 0; i < pool->n; i++)
		if (strcmp(pool->v[i].rec->id, id) == 0 &&
		    strcmp(store_schema(pool->v[i].rec->scope), schema) == 0)
			return (long)i;
	return -1;
}

/* The cosine floor calibrated for this vector identity; notice otherwise. */
double recall_cos_floor(struct cairn_db *db, const struct dense *d,
			cairn_result *res)
{
	sqlite3_stmt *st = NULL;
	double f = RECALL_DEFAULT_COS_FLOOR;
	const char *msg = NULL;
	char buf[1024];

	res->cos_floor_calibrated = 0;
	if (sqlite3_prepare_v2(db->sql,
			       "SELECT v, (SELECT v FROM main.meta WHERE k = "
			       "'cosine_floor_identity') FROM main.meta WHERE "
			       "k = 'cosine_floor'",
			       -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		const char *id = (const char *)sqlite3_column_text(st, 1);

		if (id && strcmp(id, d->identity) == 0) {
			f = sqlite3_column_double(st, 0);
			res->cos_floor_calibrated = 1;
		} else {
			snprintf(buf, sizeof(buf),
				 "the cosine floor %.2f was calibrated for "
				 "another vector identity and is not used "
				 "with %s; run `cairn calibrate --probes FILE`",
				 sqlite3_column_double(st, 0), d->label);
			msg = buf;
		}
	} else {
		snprintf(buf, sizeof(buf),
			 "no cosine floor calibrated for %s: the model "
			 "orders the hits lexical recall finds but adds "
			 "none; run `cairn calibrate --probes FILE` (or "
			 "`cairn calibrate`: built-in off-topic questions)",
			 d->label);
		msg = buf;
	}
	sqlite3_finalize(st);
	if (msg)
		res->notice = util_strdup(msg); /* NULL on OOM: no notice */
	return f;
}

const char *recall_basis_name(int basis)
{
	switch (basis) {
	case RANK_BASIS_KEY: return "key";
	case RANK_BASIS_COSINE: return "cosine";
	case RANK_BASIS_LEXICAL: return "lexical";
	default: return "none";
	}
}

int recall_explain_hybrid(cairn_hit *h, const struct cand *c,
			  const struct rank_cand *r,
			  const struct rank_config *cfg,
			  const cairn_result *res, double best_rrf)
{
	struct sbuf sb = SBUF_INIT;

	if (r->exact_key)
		sbuf_adds(&sb, "key: the question is this record's key -> "
			       "first\n");
	if (r->bm25_rank > 0)
		sbuf_addf(&sb, "bm25: rank %d, raw %.4f (title x%g); "
			       "matched: %s\n",
			  r->bm25_rank, r->bm25, RECALL_W_TITLE, h->matched);
	else
		sbuf_adds(&sb, "bm25: not in the pool\n");
	if (!r->has_vector)
		sbuf_adds(&sb, "dense: no vector (written after the last "
			       "reindex): lexical only\n");
	else if (r->dense_rank > 0)
		sbuf_addf(&sb, "dense: rank %d, cosine %.4f\n", r->dense_rank,
			  r->cosine);
	else
		sbuf_addf(&sb, "dense: not in the pool of %d, cosine %.4f\n",
			  RANK_POOL, r->cosine);
	if (r->zfused)
		sbuf_addf(&sb,
			  "fused: %.6f = %g x z(bm25) = %.4f, + %g x z(cosine) = "
			  "%.4f (z-scores over the candidates, shifted above "
			  "the lowest)\n",
			  r->rrf, cfg->w_bm25, r->rrf_bm25, cfg->w_dense,
			  r->rrf_dense);
	else
		sbuf_addf(&sb,
			  "rrf: %.6f = %g/(%g+bm25 rank) %.6f + %g/(%g+dense "
			  "rank) %.6f\n",
			  r->rrf, cfg->w_bm25, cfg->rrf_k, r->rrf_bm25,
			  cfg->w_dense, cfg->rrf_k, r->rrf_dense);
	if (r->pinned)
		sbuf_addf(&sb, "pin: yes, overwhelming BM25 hit (dense rank "
			       "worse than %d, raw >= %gx the second)\n",
			  cfg->pin_dense_rank, cfg->pin_ratio);
	else
		sbuf_adds(&sb, "pin: no\n");
	if (c->lone)
		sbuf_adds(&sb, LONE_EXPLAIN);
	/* the comparisons as they are: under --no-floor a hit below its
	 * floor is shown too, and the text says so (never a false '>') */
	if (r->basis == RANK_BASIS_COSINE)
		sbuf_addf(&sb, "floor: cosine %.4f %s %.2f (%s) -> %s, "
			       "relevance %.4f\n",
			  r->cosine, r->cosine > cfg->cos_floor ? ">" : "<=",
			  cfg->cos_floor,
			  res->cos_floor_calibrated
				  ? "calibrated"
				  : "not calibrated: it orders, keeps nothing",
			  (cfg->cos_calibrated && r->cosine > cfg->cos_floor) ||
					  r->lexical > cfg->lex_floor
				  ? "kept"
				  : "kept by --no-floor",
			  r->relevance);
	else if (r->basis == RANK_BASIS_LEXICAL)
		sbuf_addf(&sb, "answer: %.4f = matched %.3f / question %.3f "
			       "of IDF mass (never said in the store: %.3f)\n"
			       "floor: answer %.4f %s %.2f (each hit: the lower "
			       "of the lexical floor %.2f, %s, and %.2f) -> %s, "
			       "relevance %.4f\n",
			  c->answer, c->covered, c->mass, c->unseen,
			  r->lexical, r->lexical > cfg->lex_floor ? ">" : "<=",
			  cfg->lex_floor, res->floor,
			  res->floor_calibrated ? "calibrated"
						: "default, not calibrated",
			  CAIRN_DEFAULT_FLOOR,
			  r->lexical > cfg->lex_floor ? "kept"
						      : "kept by --no-floor",
			  r->relevance);
	else
		sbuf_adds(&sb, "floor: exact key, relevance 1\n");
	if (cfg->no_floor)
		sbuf_adds(&sb, "floor: off (--no-floor)\n");
	sbuf_addf(&sb, "weight: %.2f (%s, %s)\n", r->weight, c->rec->kind,
		  c->rec->status);
	sbuf_addf(&sb, "decay: %.4f (%s%s)\n", r->decay,
		  c->rec->time ? "dated " : "undated",
		  c->rec->time ? c->rec->time : "");
	if (cfg->order == RANK_ORDER_RELEVANCE)
		sbuf_addf(&sb, "score: %.4f = weight^%g x decay x relevance\n",
			  r->score, RANK_WEIGHT_EXP);
	else
		sbuf_addf(&sb, "score: %.4f = weight^%g x decay x %s/best "
			       "(%.4f, best %.6f)\n",
			  r->score, RANK_WEIGHT_EXP,
			  r->zfused ? "fused" : "rrf", r->fused, best_rrf);
	if (sb.err) {
		sbuf_release(&sb);
		return CAIRN_NOMEM;
	}
	h->explain = sbuf_detach(&sb, NULL);
	return CAIRN_OK;
}

/* Question with surrounding white space removed, for the exact drawer. */
static char *trim_dup(const char *q)
{
	size_t n;

	while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
		q++;
	n = strlen(q);
	while (n > 0 && (q[n - 1] == ' ' || q[n - 1] == '\t' ||
			 q[n - 1] == '\n' || q[n - 1] == '\r'))
		n--;
	return util_strndup(q, n);
}

/*
 * The dense pool into pool: each hit's rank and cosine, and the records
 * only it found appended (rst: fetch_rid's statements).
 */
static int dense_merge(struct cairn_db *db, sqlite3_stmt *rst[2],
		       struct pool *pool, const struct dense *d)
{
	size_t i;
	int rc;

	for (i = 0; i < d->n; i++) {
		long at = pool_find(pool, d->hits[i].schema, d->hits[i].id);
		struct cand *c;

		if (at < 0) {
			cairn_record *rec = NULL;

			rc = fetch_rid(db, rst, d->hits[i].schema,
				       d->hits[i].rid, &rec);
			if (rc)
				return rc;
			if (!rec)
				continue; /* deleted since the cache loaded */
			c = pool_add(pool, rec);
			if (!c) {
				cairn_record_free(rec);
				return store_error(db, CAIRN_NOMEM,
						   "out of memory");
			}
		} else {
			c = &pool->v[at];
		}
		c->dense_rank = (int)i + 1;
		c->cosine = d->hits[i].cos;
		c->has_vector = 1;
	}
	return CAIRN_OK;
}

/*
 * Step 1: the exact drawer. The record whose key is the question (white
 * space trimmed), workspace first as cairn_record_read_key, is marked, or
 * appended with its own cosine (vst: stored_cosine's statements).
 */
static int exact_drawer(struct cairn_db *db, sqlite3_stmt *vst[2],
			const char *query, const cairn_recall_opts *opts,
			struct pool *pool, const struct dense *d)
{
	char *key = trim_dup(query);
	int rc = CAIRN_OK, s;

	if (!key)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	for (s = 0; s < 2 && *key && strlen(key) <= STORE_MAX_KEY; s++) {
		const char *schema = s == 0 ? "main" : "global";
		cairn_record *rec = NULL;
		long at;
		struct cand *c;

		if (s == 1 && !db->has_global)
			break;
		rc = fetch_record(db, schema, "key = ?1", key, 0, opts, &rec);
		if (rc)
			break;
		if (!rec)
			continue;
		at = pool_find(pool, schema, rec->id);
		if (at >= 0) {
			cairn_record_free(rec);
			pool->v[at].exact_key = 1;
		} else {
			c = pool_add(pool, rec);
			if (!c) {
				cairn_record_free(rec);
				rc = store_error(db, CAIRN_NOMEM, "out of memory");
				break;
			}
			c->exact_key = 1;
			rc = stored_cosine(db, vst, schema, rec->id, d, &c->cosine,
					   &c->has_vector);
		}
		break; /* workspace first, as cairn_record_read_key */
	}
	cairn_free(key);
	return rc;
}

int recall_hybrid_pool(struct cairn_db *db, const char *query,
		       const cairn_recall_opts *opts, struct pool *pool,
		       const struct dense *d)
{
	sqlite3_stmt *vst[2] = { NULL, NULL }, *rst[2] = { NULL, NULL };
	size_t i, n;
	int rc;

	n = pool->n;
	rc = dense_merge(db, rst, pool, d);
	/* BM25 hits outside the dense pool: their own cosine, if they have a vector */
	for (i = 0; rc == CAIRN_OK && i < n; i++) {
		struct cand *c = &pool->v[i];

		if (c->dense_rank == 0)
			rc = stored_cosine(db, vst, store_schema(c->rec->scope),
					   c->rec->id, d, &c->cosine,
					   &c->has_vector);
	}
	if (rc == CAIRN_OK)
		rc = exact_drawer(db, vst, query, opts, pool, d);
	sqlite3_finalize(vst[0]);
	sqlite3_finalize(vst[1]);
	sqlite3_finalize(rst[0]);
	sqlite3_finalize(rst[1]);
	return rc;
}

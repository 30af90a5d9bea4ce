/*
 * rerank.c -- the optional cross-encoder rerank of a recall result
 * (SPEC 5.2 step 6; docs/RANKING.md). See rerank.h for the contract.
 *
 * Layer: above bert.h (the model), rank.h (rank_rerank: the 1:1 RRF) and
 * store.h (the meta setting); below recall.c.
 *
 * Holds: the choice of model (opts->rerank_model, else $CAIRN_RERANK_MODEL,
 * else meta 'rerank.model' of the main store, a relative path there being
 * relative to the workspace root; "" or "none" turns it off), the
 * per-handle model cache and the timing. The cache hangs on the handle
 * (db->rerank, freed by cairn_db_close() like the vector cache), so a
 * model is loaded once per db handle and the library keeps no global state.
 *
 * Must never: drop or add a hit, move an exact-key or pinned hit, or run
 * when nothing asked for it.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bert.h"
#include "rank.h"
#include "rerank.h"
#include "store.h"

#define RERANK_CACHE_MAX 4     /* models kept per handle */

/* ------------------------------------------------------------ the cache */

struct rr_model {
	char *path;
	dev_t dev;
	ino_t ino;
	off_t size;
	long long mtime_ns;
	struct bert_model *m;
};

struct rr_cache {
	struct rr_model v[RERANK_CACHE_MAX];
	size_t n;
};

static void cache_destroy(void *p)
{
	struct rr_cache *c = p;
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->n; i++) {
		bert_free(c->v[i].m);
		cairn_free(c->v[i].path);
	}
	cairn_free(c);
}

/* The handle's cache, made on first use and freed by cairn_db_close. */
static struct rr_cache *cache_get(struct cairn_db *db)
{
	if (!db->rerank) {
		db->rerank = util_calloc(1, sizeof(struct rr_cache));
		if (db->rerank)
			db->rerank_free = cache_destroy;
	}
	return db->rerank;
}

/*
 * The model at path: from the cache when the file is the same (device,
 * inode, size, mtime), else loaded (and cached while there is room; *own
 * = 1 when the caller must free it). *load_ms: time spent loading.
 */
static int model_get(struct cairn_db *db, const char *path,
		     struct bert_model **out, int *own, double *load_ms)
{
	struct rr_cache *c;
	struct stat sb;
	struct bert_model *m = NULL;
	char err[256];
	long long mt;
	double t0;
	size_t i;
	int rc;

	*out = NULL;
	*own = 0;
	*load_ms = 0;
	if (stat(path, &sb) != 0)
		return store_error(db, CAIRN_IO,
				   "cannot read the rerank model '%s'", path);
	mt = (long long)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec;
	c = cache_get(db);
	if (!c)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	for (i = 0; i < c->n; i++) {
		struct rr_model *e = &c->v[i];

		if (strcmp(e->path, path) == 0 && e->dev == sb.st_dev &&
		    e->ino == sb.st_ino && e->size == sb.st_size &&
		    e->mtime_ns == mt) {
			*out = e->m;
			return CAIRN_OK;
		}
	}
	t0 = util_now_ms();
	rc = bert_load(path, NULL, &m, err, sizeof(err));
	if (rc)
		return store_error(db, rc, "rerank model: %s", err);
	if (bert_pooling(m) != BERT_POOL_RANK) {
		bert_free(m);
		return store_error(db, CAIRN_INVALID,
				   "'%s' is not a reranker (no rank pooling "
				   "and classifier head)",
				   path);
	}
	*load_ms = util_now_ms() - t0;
	if (c->n < RERANK_CACHE_MAX) {
		char *p = util_strdup(path);

		if (p) {
			struct rr_model *e = &c->v[c->n++];

			e->path = p;
			e->dev = sb.st_dev;
			e->ino = sb.st_ino;
			e->size = sb.st_size;
			e->mtime_ns = mt;
			e->m = m;
			*out = m;
			return CAIRN_OK;
		}
	}
	*out = m;
	*own = 1;
	return CAIRN_OK;
}

/* --------------------------------------------------------- the setting */

static int meta_model(struct cairn_db *db, char *buf, size_t size, int *found)
{
	return store_meta_get(db, "main", RERANK_META, buf, size, found);
}

static int is_off(const char *s)
{
	return !s || !*s || strcmp(s, "none") == 0;
}

int rerank_model_path(struct cairn_db *db, const cairn_recall_opts *opts,
		      char *buf, size_t size)
{
	const char *env = db->env.rerank_model; /* RERANK_ENV, read at open */
	char v[PATH_MAX];
	int mode = opts ? opts->rerank : 0, found = 0, rc;

	buf[0] = '\0';
	if (mode < 0)
		return CAIRN_OK;
	if (mode > 0 && opts->rerank_model && *opts->rerank_model) {
		if (strlen(opts->rerank_model) >= size)
			return store_error(db, CAIRN_TOOBIG,
					   "rerank model path too long");
		snprintf(buf, size, "%s", opts->rerank_model);
		return CAIRN_OK;
	}
	if (env) {
		if (!is_off(env)) {
			if (strlen(env) >= size)
				return store_error(db, CAIRN_TOOBIG,
						   "%s too long", RERANK_ENV);
			snprintf(buf, size, "%s", env);
		}
	} else {
		rc = meta_model(db, v, sizeof(v), &found);
		if (rc)
			return rc;
		if (found && !is_off(v)) {
			int n = v[0] == '/' ? snprintf(buf, size, "%s", v)
					    : snprintf(buf, size, "%s/%s",
						       cairn_db_root(db), v);

			if (n < 0 || (size_t)n >= size) {
				buf[0] = '\0';
				return store_error(db, CAIRN_TOOBIG,
						   "rerank.model too long");
			}
		}
	}
	if (mode > 0 && !buf[0])
		return store_error(db, CAIRN_INVALID,
				   "no rerank model: give one (--rerank=FILE) "
				   "or set %s or the store's %s",
				   RERANK_ENV, RERANK_META);
	return CAIRN_OK;
}

/* -------------------------------------------------------------- fusion */

size_t rerank_first(const cairn_result *res)
{
	size_t i = 0;

	while (i < res->n && (res->hits[i].exact_key || res->hits[i].pinned))
		i++;
	return i;
}

struct lookup {
	const double *scores; /* by hit index - first */
	size_t first, m;
};

static int score_of(void *user, size_t id, double *score)
{
	const struct lookup *l = user;

	if (id < l->first || id - l->first >= l->m)
		return CAIRN_INVALID;
	*score = l->scores[id - l->first];
	return 0;
}

int rerank_apply(cairn_result *res, size_t first, const double *scores,
		 size_t m)
{
	struct rank_cand c[RANK_RERANK_TOP];
	cairn_hit tmp[RANK_RERANK_TOP];
	struct rank_config cfg;
	struct lookup l;
	size_t i;
	int rc;

	if (m > RANK_RERANK_TOP || first > res->n || m > res->n - first)
		return CAIRN_INVALID;
	if (m == 0)
		return CAIRN_OK;
	rank_config_default(&cfg);
	memset(c, 0, sizeof(c));
	for (i = 0; i < m; i++)
		c[i].id = first + i; /* no exact key or pin: all rescored */
	l.scores = scores;
	l.first = first;
	l.m = m;
	rc = rank_rerank(c, m, m, &cfg, score_of, &l);
	if (rc)
		return rc;
	for (i = 0; i < m; i++) {
		tmp[i] = res->hits[c[i].id];
		tmp[i].rerank = c[i].rerank;
		tmp[i].rerank_rank = c[i].rerank_rank;
		tmp[i].rerank_from = (int)c[i].id + 1;
	}
	memcpy(&res->hits[first], tmp, m * sizeof(tmp[0]));
	return CAIRN_OK;
}

/* -------------------------------------------------------------- explain */

static int explain_add(cairn_hit *h, size_t first, size_t pos, size_t m)
{
	struct sbuf sb = SBUF_INIT;

	if (h->explain)
		sbuf_adds(&sb, h->explain);
	if (sb.len && sb.buf[sb.len - 1] != '\n')
		sbuf_addc(&sb, '\n');
	sbuf_addf(&sb,
		  "rerank: cross-encoder %.4f, rank %d of %zu; 1/(%g+%d) + "
		  "1/(%g+%d) -> position %zu (was %d)\n",
		  h->rerank, h->rerank_rank, m, RANK_RRF_K,
		  h->rerank_from - (int)first, RANK_RRF_K, h->rerank_rank,
		  pos + 1, h->rerank_from);
	if (sb.err) {
		sbuf_release(&sb);
		return CAIRN_NOMEM;
	}
	cairn_free(h->explain);
	h->explain = sbuf_detach(&sb, NULL);
	return CAIRN_OK;
}

/* Note why a configured rerank did not run (the order stays). */
static int add_notice(struct cairn_db *db, cairn_result *res)
{
	struct sbuf sb = SBUF_INIT;

	if (res->notice)
		sbuf_addf(&sb, "%s; ", res->notice);
	sbuf_addf(&sb, "rerank skipped: %s", cairn_errmsg(db));
	if (sb.err) {
		sbuf_release(&sb);
		return store_error(db, CAIRN_NOMEM, "out of memory");
	}
	cairn_free(res->notice);
	res->notice = sbuf_detach(&sb, NULL);
	return CAIRN_OK;
}

/* "title\nbody" (or the body alone) of a hit, for the pair. */
static char *pair_text(const cairn_record *r)
{
	struct sbuf sb = SBUF_INIT;

	if (r->title && *r->title) {
		sbuf_adds(&sb, r->title);
		sbuf_addc(&sb, '\n');
	}
	sbuf_adds(&sb, r->body ? r->body : "");
	if (sb.err) {
		sbuf_release(&sb);
		return NULL;
	}
	return sbuf_detach(&sb, NULL);
}

int rerank_result(struct cairn_db *db, const char *query,
		  const cairn_recall_opts *opts, cairn_result *res)
{
	char path[PATH_MAX], err[256];
	char *docs[RANK_RERANK_TOP] = { NULL };
	float fs[RANK_RERANK_TOP];
	double scores[RANK_RERANK_TOP], t0;
	struct bert_model *m = NULL;
	size_t first, n, i, blen;
	const char *base;
	int rc, own = 0, asked = opts && opts->rerank > 0;

	first = rerank_first(res);
	n = res->n - first;
	if (n > RANK_RERANK_TOP)
		n = RANK_RERANK_TOP;
	if (n < 2 && !asked)
		return CAIRN_OK; /* nothing to reorder: no setting read, no load */
	rc = rerank_model_path(db, opts, path, sizeof(path));
	if (rc || !path[0] || n < 2)
		return rc; /* asked: a missing model is still an error */
	rc = model_get(db, path, &m, &own, &res->rerank_load_ms);
	if (rc)
		return asked ? rc : add_notice(db, res);
	for (i = 0; i < n; i++) {
		docs[i] = pair_text(res->hits[first + i].rec);
		if (!docs[i]) {
			rc = store_error(db, CAIRN_NOMEM, "out of memory");
			goto out;
		}
	}
	t0 = util_now_ms();
	rc = bert_rank(m, query, (const char *const *)docs, n, fs, err,
		       sizeof(err));
	res->rerank_ms = util_now_ms() - t0;
	if (rc) {
		rc = store_error(db, rc, "rerank: %s", err);
		if (!asked)
			rc = add_notice(db, res);
		goto out;
	}
	for (i = 0; i < n; i++)
		scores[i] = fs[i];
	rc = rerank_apply(res, first, scores, n);
	if (rc)
		goto out;
	res->reranked = 1;
	res->rerank_n = n;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	blen = strlen(base) < sizeof(res->rerank_model)
		       ? strlen(base)
		       : sizeof(res->rerank_model) - 1;
	memcpy(res->rerank_model, base, blen);
	res->rerank_model[blen] = '\0';
	if (opts && opts->explain)
		for (i = 0; i < n && rc == CAIRN_OK; i++)
			rc = explain_add(&res->hits[first + i], first,
					 first + i, n);
	if (rc)
		rc = store_error(db, rc, "out of memory");
out:
	for (i = 0; i < n; i++)
		cairn_free(docs[i]);
	if (own)
		bert_free(m);
	return rc;
}

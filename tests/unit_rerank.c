/*
 * unit_rerank.c -- the cross-encoder rerank of a recall result
 * (src/recall/rerank.c; SPEC 5.2 step 6, docs/RANKING.md).
 *
 * Two levels. The fusion with scores the test chooses (so the test knows
 * which hit must win and where it must land): test_rerank_fusion_order is
 * the negative control of the 1:1 RRF (ordering by the cross-encoder alone,
 * CAIRN_MUTATE_RERANK_NO_FUSION in src/recall/rank.c, puts the wrong hit first;
 * no rerank at all leaves the wrong one second). Then cairn_recall end to
 * end with a tiny generated reranker (tests/tools/make_model.py --pool
 * rank): the test measures each (question, title + body) score with
 * bert_rank itself, derives the order the fusion must give, and checks
 * that recall returns exactly it; off by default, --no-rerank, the
 * environment and the store setting, and the errors.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bert.h"
#include "internal.h"
#include "rank.h"
#include "rerank.h"
#include "test.h"

static char mdir[512]; /* test_tmpdir/rerank */

static int sh(const char *cmd)
{
	int rc = system(cmd);

	if (rc != 0)
		fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
	return rc;
}

/* A result of n hits with ids "h0".."h<n-1>" (records owned by it). */
static cairn_result *fake_result(size_t n)
{
	cairn_result *res = util_calloc(1, sizeof(*res));
	size_t i;

	if (!res)
		return NULL;
	res->hits = util_calloc(n, sizeof(*res->hits));
	if (!res->hits) {
		cairn_free(res);
		return NULL;
	}
	res->n = n;
	for (i = 0; i < n; i++) {
		char id[24];

		snprintf(id, sizeof(id), "h%zu", i);
		res->hits[i].rec = util_calloc(1, sizeof(cairn_record));
		if (res->hits[i].rec)
			res->hits[i].rec->id = util_strdup(id);
		res->hits[i].score = 1.0 - 0.1 * (double)i;
	}
	return res;
}

static void order_is(const cairn_result *res, const char *const *ids,
		     size_t n)
{
	size_t i;

	CHECK_INT(res->n, n);
	for (i = 0; i < n && i < res->n; i++)
		CHECK_STR(res->hits[i].rec->id, ids[i]);
}

/*
 * Hits h0 h1 h2 h3 in that order; the cross-encoder likes h3 best, then
 * h0, h1, h2. 1:1 RRF (k = 60): h0 1/61 + 1/62, h3 1/64 + 1/61, h1 1/62 +
 * 1/63, h2 1/63 + 1/64 -> h0 h3 h1 h2. The cross-encoder alone would give
 * h3 h0 h1 h2; no rerank h0 h1 h2 h3.
 */
static void test_rerank_fusion_order(void)
{
	static const char *const want[] = { "h0", "h3", "h1", "h2" };
	const double scores[] = { 2.0, 1.0, -3.0, 5.0 };
	cairn_result *res = fake_result(4);

	CHECK(res != NULL);
	if (!res)
		return;
	CHECK_INT(rerank_first(res), 0);
	CHECK_INT(rerank_apply(res, 0, scores, 4), CAIRN_OK);
	order_is(res, want, 4);
	/* the hits carry their cross-encoder figures and where they came from */
	CHECK_INT(res->hits[1].rerank_rank, 1);
	CHECK_INT(res->hits[1].rerank_from, 4);
	CHECK(res->hits[1].rerank == 5.0);
	CHECK_INT(res->hits[0].rerank_rank, 2);
	CHECK_INT(res->hits[0].rerank_from, 1);
	CHECK_INT(res->hits[3].rerank_rank, 4);
	/* the scores travel with their hits */
	CHECK(fabs(res->hits[3].score - 0.8) < 1e-12);
	cairn_result_free(res);
}

/*
 * Ties: h4 is the cross-encoder's first and h0 its last, so both fuse to
 * 1/61 + 1/65 and the earlier position (h0) goes first; h1, second in both
 * orders (2/62), beats them.
 */
static void test_rerank_tie(void)
{
	static const char *const want[] = { "h1", "h0", "h4", "h2", "h3" };
	const double scores[] = { -9.0, 3.0, 2.0, 1.0, 9.0 };
	cairn_result *res = fake_result(5);

	CHECK(res != NULL);
	if (!res)
		return;
	CHECK_INT(rerank_apply(res, 0, scores, 5), CAIRN_OK);
	order_is(res, want, 5);
	cairn_result_free(res);
}

/* Exact-key and pinned hits keep their places; only the rest move. */
static void test_rerank_keeps_key_and_pin(void)
{
	static const char *const want[] = { "h0", "h1", "h2", "h4", "h3" };
	const double scores[] = { 0.0, -1.0, 4.0 };
	cairn_result *res = fake_result(5);

	CHECK(res != NULL);
	if (!res)
		return;
	res->hits[0].exact_key = 1;
	res->hits[1].pinned = 1;
	CHECK_INT(rerank_first(res), 2);
	/* h2 h3 h4 rescored: h4 best, h2, h3 -> h2 1/61+1/62, h4 1/63+1/61,
	   h3 1/62+1/63 */
	CHECK_INT(rerank_apply(res, 2, scores, 3), CAIRN_OK);
	order_is(res, want, 5);
	CHECK_INT(res->hits[0].rerank_rank, 0);
	CHECK_INT(res->hits[1].rerank_rank, 0);
	CHECK_INT(rerank_apply(res, 2, scores, 4), CAIRN_INVALID);
	cairn_result_free(res);
}

/* ------------------------------------------------------ end to end */

#define N_RECS 6

static const char *const rec_title[N_RECS] = {
	"quick fox", "fox and dog", "the lazy dog", "brown fox notes",
	"fox search", "memory of the fox",
};
static const char *const rec_body[N_RECS] = {
	"the quick brown fox jumps over the lazy dog",
	"a fox and a dog in the index",
	"the dog is lazy and the fox is quick",
	"brown fox in the store",
	"search for the fox in the database",
	"the agent has a memory of one fox",
};
#define QUESTION "quick brown fox"

static cairn_db *fill_store(const char *name, char *root, size_t size)
{
	cairn_db *db = test_store(name, root, size);
	size_t i;

	for (i = 0; db && i < N_RECS; i++)
		cairn_free(test_write_record(db, "note", NULL, NULL, NULL,
					     rec_title[i], rec_body[i]));
	return db;
}

static int recall_ids(cairn_db *db, int rerank, const char *model,
		      cairn_result **out)
{
	cairn_recall_opts o;

	memset(&o, 0, sizeof(o));
	o.k = N_RECS;
	o.no_floor = 1;
	o.no_receipt = 1;
	o.rerank = rerank;
	o.rerank_model = model;
	o.explain = 1;
	return cairn_recall(db, QUESTION, &o, out);
}

static int make_model(const char *name, const char *args, char *path,
		      size_t size)
{
	char cmd[1200];

	snprintf(mdir, sizeof(mdir), "%s/rerank", test_tmpdir);
	snprintf(path, size, "%s/%s.gguf", mdir, name);
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %s && /usr/bin/python3 tests/tools/make_model.py "
		 "%s %s",
		 mdir, path, args);
	return sh(cmd);
}

struct ex {
	size_t pos;
	double s;
	double fused;
	int rr;
};

static int by_s(const void *a, const void *b)
{
	const struct ex *x = a, *y = b;

	if (x->s != y->s)
		return x->s > y->s ? -1 : 1;
	return x->pos < y->pos ? -1 : 1;
}

static int by_fused(const void *a, const void *b)
{
	const struct ex *x = a, *y = b;

	if (x->fused != y->fused)
		return x->fused > y->fused ? -1 : 1;
	return x->pos < y->pos ? -1 : 1;
}

static void test_rerank_recall_model(void)
{
	char path[1024], root[512], err[256];
	cairn_db *db = fill_store("rr_model", root, sizeof(root));
	cairn_result *off = NULL, *on = NULL, *dflt = NULL;
	struct bert_model *m = NULL;
	const char *docs[N_RECS];
	char *texts[N_RECS] = { NULL };
	float fs[N_RECS];
	struct ex ex[N_RECS];
	size_t i, n, moved = 0;

	if (make_model("rr", "--pool rank --types f32 --seed 7", path,
		       sizeof(path))) {
		CHECK_MSG(0, "make_model rr");
		cairn_db_close(db);
		return;
	}
	/* off by default: no model configured, the order is recall's */
	CHECK_INT(recall_ids(db, 0, NULL, &dflt), CAIRN_OK);
	CHECK_INT(recall_ids(db, -1, NULL, &off), CAIRN_OK);
	if (!dflt || !off)
		goto out;
	CHECK_INT(dflt->reranked, 0);
	CHECK_INT(off->reranked, 0);
	CHECK(off->n >= 4);
	CHECK_INT(dflt->n, off->n);
	for (i = 0; i < off->n && i < dflt->n; i++)
		CHECK_STR(dflt->hits[i].rec->id, off->hits[i].rec->id);
	/* what the cross-encoder says of each pair, measured here */
	CHECK_INT(bert_load(path, NULL, &m, err, sizeof(err)), CAIRN_OK);
	if (!m)
		goto out;
	n = off->n < RANK_RERANK_TOP ? off->n : RANK_RERANK_TOP;
	for (i = 0; i < n; i++) {
		const cairn_record *r = off->hits[i].rec;
		size_t len = strlen(r->title) + strlen(r->body) + 2;

		texts[i] = malloc(len);
		if (!texts[i])
			goto out;
		snprintf(texts[i], len, "%s\n%s", r->title, r->body);
		docs[i] = texts[i];
	}
	CHECK_INT(bert_rank(m, QUESTION, docs, n, fs, err, sizeof(err)),
		  CAIRN_OK);
	for (i = 0; i < n; i++) {
		ex[i].pos = i;
		ex[i].s = fs[i];
	}
	qsort(ex, n, sizeof(ex[0]), by_s);
	for (i = 0; i < n; i++) {
		ex[i].rr = (int)i + 1;
		ex[i].fused = 1.0 / (60.0 + (double)ex[i].pos + 1) +
			      1.0 / (60.0 + (double)i + 1);
	}
	qsort(ex, n, sizeof(ex[0]), by_fused);
	/* the fixture must make the rerank move something */
	for (i = 0; i < n; i++)
		moved += ex[i].pos != i;
	CHECK_MSG(moved > 0, "the test's scores leave the order as it is");
	/* recall with the model gives exactly that order */
	CHECK_INT(recall_ids(db, 1, path, &on), CAIRN_OK);
	if (!on)
		goto out;
	CHECK_INT(on->reranked, 1);
	CHECK_INT(on->rerank_n, n);
	CHECK(on->rerank_ms > 0);
	CHECK_STR(on->rerank_model, "rr.gguf");
	CHECK_INT(on->n, off->n);
	for (i = 0; i < n && i < on->n; i++) {
		const cairn_hit *h = &on->hits[i];

		CHECK_STR(h->rec->id, off->hits[ex[i].pos].rec->id);
		CHECK_INT(h->rerank_rank, ex[i].rr);
		CHECK_INT(h->rerank_from, (int)ex[i].pos + 1);
		CHECK(fabs(h->rerank - fs[ex[i].pos]) < 1e-6);
		CHECK_MSG(h->explain && strstr(h->explain, "rerank: "),
			  "no rerank line in: %s", h->explain);
	}
out:
	for (i = 0; i < N_RECS; i++)
		free(texts[i]);
	bert_free(m);
	cairn_result_free(off);
	cairn_result_free(on);
	cairn_result_free(dflt);
	cairn_db_close(db);
}

/* CAIRN_RERANK_MODEL and the store's rerank.model turn it on; --no-rerank
 * (rerank -1) and "none" turn it off. */
static void test_rerank_configured(void)
{
	char path[1024], root[512], sql[2400];
	cairn_db *db = fill_store("rr_conf", root, sizeof(root));
	cairn_result *r = NULL;

	if (make_model("rc", "--pool rank --types f16 --seed 3", path,
		       sizeof(path))) {
		CHECK_MSG(0, "make_model rc");
		cairn_db_close(db);
		return;
	}
	/* the variable is read when the store opens: set now, it reaches
	 * the next handle, not this one */
	setenv("CAIRN_RERANK_MODEL", path, 1);
	CHECK_INT(recall_ids(db, 0, NULL, &r), CAIRN_OK);
	CHECK(r && r->reranked == 0);
	cairn_result_free(r);
	r = NULL;
	cairn_db_close(db);
	db = test_store("rr_conf", root, sizeof(root));
	CHECK_INT(recall_ids(db, 0, NULL, &r), CAIRN_OK);
	CHECK(r && r->reranked == 1);
	cairn_result_free(r);
	r = NULL;
	CHECK_INT(recall_ids(db, -1, NULL, &r), CAIRN_OK);
	CHECK(r && r->reranked == 0);
	cairn_result_free(r);
	r = NULL;
	setenv("CAIRN_RERANK_MODEL", "none", 1);
	cairn_db_close(db);
	db = test_store("rr_conf", root, sizeof(root));
	CHECK_INT(recall_ids(db, 0, NULL, &r), CAIRN_OK);
	CHECK(r && r->reranked == 0);
	cairn_result_free(r);
	r = NULL;
	unsetenv("CAIRN_RERANK_MODEL");
	cairn_db_close(db);
	db = test_store("rr_conf", root, sizeof(root));
	/* the store setting, relative to the workspace root */
	snprintf(sql, sizeof(sql), "mkdir -p %s/models && cp %s %s/models/",
		 root, path, root);
	CHECK_INT(sh(sql), 0);
	snprintf(sql, sizeof(sql),
		 "sqlite3 %s/.cairn/cairn.db \"INSERT OR REPLACE INTO meta "
		 "VALUES ('rerank.model','models/rc.gguf')\"",
		 root);
	if (sh(sql) == 0) {
		CHECK_INT(recall_ids(db, 0, NULL, &r), CAIRN_OK);
		CHECK(r && r->reranked == 1);
		CHECK(r && strcmp(r->rerank_model, "rc.gguf") == 0);
		/* the second recall on the handle finds the model loaded */
		cairn_result_free(r);
		r = NULL;
		CHECK_INT(recall_ids(db, 0, NULL, &r), CAIRN_OK);
		CHECK(r && r->reranked == 1 && r->rerank_load_ms == 0);
	} else {
		test_skip("the sqlite3 shell is not installed (Debian: sqlite3)");
	}
	cairn_result_free(r);
	cairn_db_close(db);
}

/* Errors: asked without a model; a model that is not a reranker; a
 * configured model that fails leaves the order and says why. */
static void test_rerank_errors(void)
{
	char path[1024], root[512];
	cairn_db *db = fill_store("rr_err", root, sizeof(root));
	cairn_result *r = NULL, *off = NULL;
	size_t i;

	unsetenv("CAIRN_RERANK_MODEL");
	CHECK_INT(recall_ids(db, 1, NULL, &r), CAIRN_INVALID);
	CHECK(r == NULL);
	CHECK_MSG(strstr(cairn_errmsg(db), "no rerank model") != NULL, "%s",
		  cairn_errmsg(db));
	if (make_model("emb", "--pool mean --types f32", path, sizeof(path))) {
		CHECK_MSG(0, "make_model emb");
		cairn_db_close(db);
		return;
	}
	CHECK_INT(recall_ids(db, 1, path, &r), CAIRN_INVALID);
	CHECK_MSG(strstr(cairn_errmsg(db), "not a reranker") != NULL, "%s",
		  cairn_errmsg(db));
	CHECK_INT(recall_ids(db, 1, "/nonexistent/m.gguf", &r), CAIRN_IO);
	/* configured (not asked): the recall succeeds in its own order */
	CHECK_INT(recall_ids(db, -1, NULL, &off), CAIRN_OK);
	setenv("CAIRN_RERANK_MODEL", path, 1); /* read at open */
	cairn_db_close(db);
	db = test_store("rr_err", root, sizeof(root));
	CHECK_INT(recall_ids(db, 0, NULL, &r), CAIRN_OK);
	unsetenv("CAIRN_RERANK_MODEL");
	if (r && off) {
		CHECK_INT(r->reranked, 0);
		CHECK_MSG(r->notice && strstr(r->notice, "rerank skipped"),
			  "notice: %s", r->notice ? r->notice : "(none)");
		CHECK_INT(r->n, off->n);
		for (i = 0; i < r->n && i < off->n; i++)
			CHECK_STR(r->hits[i].rec->id, off->hits[i].rec->id);
	}
	cairn_result_free(r);
	cairn_result_free(off);
	cairn_db_close(db);
}

void unit_rerank(void)
{
	RUN(test_rerank_fusion_order);
	RUN(test_rerank_tie);
	RUN(test_rerank_keeps_key_and_pin);
	RUN(test_rerank_recall_model);
	RUN(test_rerank_configured);
	RUN(test_rerank_errors);
}

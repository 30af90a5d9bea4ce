/*
 * calibrate.c -- cairn calibrate: the no-match floors measured from probe
 * questions (cairn_calibrate_ex, cairn_calibrate_cosine, the built-in
 * off-topic probes of cairn_default_probes). The lexical floor is the
 * probes' median answerability (never below CAIRN_DEFAULT_FLOOR), the
 * cosine floor the highest cosine a probe reaches, each stored with the
 * identity it was measured for (docs/RANKING.md).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "bilingual.h"
#include "glossary.h"
#include "drift.h"
#include "fts.h"
#include "json.h"
#include "lifecycle.h"
#include "store.h"
#include "rank.h"
#include "receipt.h"
#include "rerank.h"
#include "termstat.h"
#include "tokenize.h"
#include "vector.h"
#include "recall_int.h"

/* Round a highest probe figure up to 0.01 (SPEC 5.2), below 1. */
static double round_floor(double max)
{
	double f = ceil(max * 100.0 - 1e-9) / 100.0;

	return f >= 1.0 ? 0.99 : f <= 0 ? 0.0 : f;
}

/*
 * Generic off-topic probes (cairn_default_probes): what no engineering
 * store answers, in both languages of the tokenizer.
 */
static const char *const default_probes[] = {
	"How long should sourdough proof in the fridge before baking?",
	"What tyre pressure should I run on a road bike?",
	"How do I repot an orchid without damaging the roots?",
	"Which wine goes well with grilled salmon?",
	"How many eggs do I need for a sponge cake?",
	"What is the best time of year to plant tulip bulbs?",
	"How do I tune a guitar to drop D?",
	"Which hiking boots are good for wet weather?",
	"周末去爬山需要准备哪些装备？",
	"红烧肉要炖多久才会入味？",
	"吉他要怎么调成 Drop D 的调弦？",
	"第一次去日本旅游应该带多少现金？",
	"家里的绿萝叶子发黄是什么原因？",
	"跑马拉松之前一周应该怎么饮食？",
};

const char *const *cairn_default_probes(size_t *n)
{
	*n = ARRAY_SIZE(default_probes);
	return default_probes;
}

struct probe_score {
	size_t idx;
	double answer;
};

static int probe_desc(const void *a, const void *b)
{
	const struct probe_score *x = a, *y = b;

	if (x->answer != y->answer)
		return x->answer > y->answer ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * The floor from probes (cairn_calibrate): the median probe answerability,
 * not below CAIRN_DEFAULT_FLOOR. The probes above it are named in *out.
 */
static int calibrate_lexical(cairn_db *db, const char *const *probes,
			     size_t n, cairn_calibration *out)
{
	cairn_recall_opts o;
	struct tok *tk;
	struct probe_score *ps = NULL;
	char err[256], val[32], ident[1100];
	double f, med;
	size_t i, m = 0;
	int rc = CAIRN_OK;

	if (n == 0)
		return store_error(db, CAIRN_INVALID,
				   "no probe questions given");
	tk = fts_tok(db->sql, err, sizeof(err));
	if (!tk)
		return store_error(db, CAIRN_IO, "%s", err);
	ps = util_calloc(n, sizeof(*ps));
	if (!ps)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	memset(&o, 0, sizeof(o));
	o.k = 1;
	o.no_floor = 1;
	o.no_receipt = 1;
	o.statuses = "all";
	for (i = 0; i < n; i++) {
		cairn_result *res = NULL;

		rc = cairn_recall(db, probes[i], &o, &res);
		if (rc == CAIRN_INVALID) { /* e.g. only punctuation: skip */
			rc = CAIRN_OK;
			continue;
		}
		if (rc)
			goto out;
		ps[m].idx = i;
		/*
		 * What the probe's words reach: a hit the lone-word rule
		 * silenced counts at its answerability before the rule. That
		 * rule quiets such hits at every floor; counting them at 0
		 * lowered the median, and with it the bar for the probes the
		 * rule does not catch (adr-workspace: 0.22 -> 0.20, one more
		 * no-answer question and one more off-topic one answered).
		 */
		ps[m].answer = res->answer;
#ifndef CAIRN_MUTATE_CALIBRATE_LONE_ZERO
		if (res->answer_lone > ps[m].answer)
			ps[m].answer = res->answer_lone;
#endif
		m++;
		cairn_result_free(res);
	}
	if (m > 1)
		qsort(ps, m, sizeof(*ps), probe_desc);
	/* the median, from the top: ps is best first */
	med = m == 0 ? 0
		     : m % 2 ? ps[m / 2].answer
			     : (ps[m / 2 - 1].answer + ps[m / 2].answer) / 2;
#ifdef CAIRN_MUTATE_CALIBRATE_MAX
	med = m ? ps[0].answer : 0; /* negative control: the highest probe */
#endif
	f = round_floor(med);
	if (f < CAIRN_DEFAULT_FLOOR)
		f = CAIRN_DEFAULT_FLOOR;
	out->lexical_floor = f;
	out->probes = m;
	out->probe_max = m ? ps[0].answer : 0;
	for (i = 0; i < m && ps[i].answer > f; i++) {
		if (out->shown < CAIRN_CAL_SHOW) {
			out->through_idx[out->shown] = ps[i].idx;
			out->through_answer[out->shown] = ps[i].answer;
			out->shown++;
		}
		out->through++;
	}
	snprintf(val, sizeof(val), "%.2f", f);
	recall_floor_identity(tok_identity(tk), ident, sizeof(ident));
	rc = store_tx_begin(db);
	if (rc)
		goto out;
	rc = store_meta_set(db, "main", "lexical_floor", val, "storing the floor");
	if (rc == CAIRN_OK)
		rc = store_meta_set(db, "main", "lexical_floor_identity", ident,
				    "storing the floor");
	rc = store_tx_end(db, rc);
out:
	cairn_free(ps);
	return rc;
}

/*
 * The cosine floor: the highest cosine any probe reaches with any record
 * (every status), for the configured vector identity. *has = 0 when no
 * model is configured or no record has a vector.
 */
static int calibrate_cosine(cairn_db *db, const char *const *probes, size_t n,
			    cairn_calibration *out)
{
	cairn_recall_opts o;
	struct dense d;
	double max = -1;
	char val[32];
	size_t i;
	int rc = CAIRN_OK, any = 0;

	memset(&o, 0, sizeof(o));
	o.statuses = "all";
	memset(&d, 0, sizeof(d));
	for (i = 0; i < n && rc == CAIRN_OK; i++) {
		rc = recall_dense_pool(db, probes[i], &o, &d);
		if (rc == CAIRN_OK && d.n > 0) {
			any = 1;
			if (d.hits[0].cos > max)
				max = d.hits[0].cos;
		}
		if (rc == CAIRN_OK && i + 1 == n && any)
			snprintf(out->identity, sizeof(out->identity), "%s",
				 d.identity);
		recall_dense_release(&d);
	}
	if (rc || !any)
		return rc;
	out->has_cosine = 1;
	out->cosine_floor = round_floor(max);
	snprintf(val, sizeof(val), "%.2f", out->cosine_floor);
	rc = store_tx_begin(db);
	if (rc)
		return rc;
	rc = store_meta_set(db, "main", "cosine_floor", val,
			    "storing the cosine floor");
	if (rc == CAIRN_OK)
		rc = store_meta_set(db, "main", "cosine_floor_identity",
				    out->identity, "storing the cosine floor");
	return store_tx_end(db, rc);
}

int cairn_calibrate_ex(cairn_db *db, const char *const *probes, size_t n,
		       cairn_calibration *out)
{
	cairn_calibration c;
	int rc;

	memset(&c, 0, sizeof(c));
	rc = calibrate_lexical(db, probes, n, &c);
	if (rc == CAIRN_OK)
		rc = calibrate_cosine(db, probes, n, &c);
	if (rc == CAIRN_OK && out)
		*out = c;
	return rc;
}

int cairn_calibrate_cosine(cairn_db *db, const char *const *probes,
			   size_t n, cairn_calibration *out)
{
	cairn_calibration c;
	int rc;

	memset(&c, 0, sizeof(c));
	rc = calibrate_cosine(db, probes, n, &c);
	if (rc == CAIRN_OK && out)
		*out = c;
	return rc;
}

int cairn_calibrate(cairn_db *db, const char *const *probes, size_t n,
		    double *floor_out)
{
	cairn_calibration c;
	int rc = cairn_calibrate_ex(db, probes, n, &c);

	if (rc == CAIRN_OK && floor_out)
		*floor_out = c.lexical_floor;
	return rc;
}


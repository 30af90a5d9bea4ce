/*
 * rank.c -- the hybrid ranking pipeline's steps (SPEC 5.2) over a
 * candidate list that recall.c has filled from the BM25 and dense pools.
 *
 * Layer: bottom (internal.h only). Above it: recall.c.
 * Holds: the step functions, the configuration table and its defaults.
 * Must never: run SQL, read the clock or the environment, or allocate
 *   beyond qsort's stack (every step works in place on the caller's array).
 *
 * Steps (docs/RANKING.md): 1 exact key first (rank_order), 2 weighted RRF
 * (rank_rrf), 3 overwhelming BM25 hit (rank_pin), 4 floors, relevance and
 * weight (rank_floor), 5 decay and de-duplication (rank_decay, rank_dedup),
 * 6 rerank hook (rank_rerank). Lexical-only recall (no vectors) ranks with
 * rank_lexical instead: the floors, weights x bm25 / best and the date
 * preference.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "rank.h"
#include "words.h"

#define DAY_SECONDS 86400.0

/* Kind names the tables may hold (words.h); the config keeps these pointers. */
static const char *const kinds[] = { WORDS_ARRAY(CAIRN_KINDS) };

static const char *known_kind(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		if (strlen(kinds[i]) == len && memcmp(kinds[i], s, len) == 0)
			return kinds[i];
	return NULL;
}

/* the kinds whose default weight (words.h) is not neutral, in table order */
static void rank_default_weights(struct rank_config *cfg)
{
#define RANK_W_(k, w) { #k, w }
	static const struct rank_weight table[] = {
		CAIRN_KINDS(RANK_W_, WORDS_COMMA_)
	};
#undef RANK_W_
	size_t i, n = 0;

	for (i = 0; i < ARRAY_SIZE(table) && n < RANK_MAX_KINDS; i++)
		if (table[i].weight != 1.0)
			cfg->weights[n++] = (struct rank_weight){
				known_kind(table[i].kind, strlen(table[i].kind)),
				table[i].weight
			};
}

void rank_config_default(struct rank_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->rrf_k = RANK_RRF_K;
	cfg->w_bm25 = 1.0;
	cfg->w_dense = 1.0;
	cfg->pin_dense_rank = RANK_PIN_DENSE;
	cfg->pin_ratio = RANK_PIN_RATIO;
	cfg->cos_floor = 0.0; /* recall sets the calibrated one */
	cfg->lex_floor = 0.05;
	cfg->per_source = RANK_PER_SOURCE;
	cfg->order = RANK_ORDER_FUSED;
	cfg->verified_fact = 1.7;
	cfg->candidate_factor = 0.8;
	rank_default_weights(cfg);
	/*
	 * SPEC 5.2: events and facts decay after a window, advice less,
	 * decisions, rules, procedures and capabilities not at all (SPEC 5.5:
	 * they never decay); undated records never (rank_decay). Notes do not
	 * decay by default either: a note's date says when it was written,
	 * not that it has aged (with note decay, `cairn eval` -- whose corpus
	 * rows are dated notes -- ranked by recency: adr-workspace R@3 fell
	 * to 0.15).
	 */
	cfg->decay[0] = (struct rank_decay){ "event", 30, 90 };
	cfg->decay[1] = (struct rank_decay){ "fact", 180, 365 };
	cfg->decay[2] = (struct rank_decay){ "history", 365, 730 };
	cfg->decay[3] = (struct rank_decay){ "finding", 180, 730 };
}

static int parse_num(const char *v, double lo, double hi, double *out)
{
	char *end = NULL;
	double d;

	if (!v || !*v)
		return -1;
	d = strtod(v, &end);
	if (!end || *end || !(d >= lo && d <= hi))
		return -1;
	*out = d;
	return 0;
}

int rank_config_set(struct rank_config *cfg, const char *name,
		    const char *value)
{
	double d, d2;
	size_t i;

	if (strcmp(name, "w_bm25") == 0 || strcmp(name, "w_dense") == 0) {
		if (parse_num(value, 0, 100, &d))
			return -1;
		*(name[2] == 'b' ? &cfg->w_bm25 : &cfg->w_dense) = d;
		return 0;
	}
	if (strcmp(name, "rrf_k") == 0)
		return parse_num(value, 0, 10000, &cfg->rrf_k);
	if (strcmp(name, "pin_ratio") == 0)
		return parse_num(value, 1, 1000, &cfg->pin_ratio);
	if (strcmp(name, "pin_dense_rank") == 0 ||
	    strcmp(name, "per_source") == 0) {
		if (parse_num(value, 0, RANK_POOL, &d) || d != floor(d))
			return -1;
		*(name[0] == 'p' && name[1] == 'i' ? &cfg->pin_dense_rank
						   : &cfg->per_source) = (int)d;
		return 0;
	}
	if (strcmp(name, "order") == 0) {
		if (value && strcmp(value, "fused") == 0)
			cfg->order = RANK_ORDER_FUSED;
		else if (value && strcmp(value, "relevance") == 0)
			cfg->order = RANK_ORDER_RELEVANCE;
		else
			return -1;
		return 0;
	}
	if (strncmp(name, "weight.", 7) == 0) {
		const char *k = known_kind(name + 7, strlen(name + 7));

		if (!k || parse_num(value, 0, 100, &d))
			return -1;
		for (i = 0; i < RANK_MAX_KINDS; i++) {
			if (!cfg->weights[i].kind || cfg->weights[i].kind == k) {
				cfg->weights[i] = (struct rank_weight){ k, d };
				return 0;
			}
		}
		return -1;
	}
	if (strncmp(name, "decay.", 6) == 0) {
		const char *k = known_kind(name + 6, strlen(name + 6));
		const char *comma = value ? strchr(value, ',') : NULL;
		char a[32];

		if (!k || !comma || (size_t)(comma - value) >= sizeof(a))
			return -1;
		memcpy(a, value, (size_t)(comma - value));
		a[comma - value] = '\0';
		if (parse_num(a, 0, 1e6, &d) || parse_num(comma + 1, 0, 1e6, &d2))
			return -1;
		for (i = 0; i < RANK_MAX_KINDS; i++) {
			if (!cfg->decay[i].kind || cfg->decay[i].kind == k) {
				cfg->decay[i] = (struct rank_decay){ k, d, d2 };
				return 0;
			}
		}
		return -1;
	}
	return -1;
}

double rank_weight_of(const struct rank_config *cfg, const struct rank_cand *c)
{
	double w = 1.0;
	size_t i;

	for (i = 0; i < RANK_MAX_KINDS && cfg->weights[i].kind; i++)
		if (c->kind && strcmp(c->kind, cfg->weights[i].kind) == 0)
			w = cfg->weights[i].weight;
	if (c->kind && strcmp(c->kind, "fact") == 0 && c->confidence >= 1.0 &&
	    w == 1.0)
		w = cfg->verified_fact;
	if (c->status && strcmp(c->status, "candidate") == 0)
		w *= cfg->candidate_factor;
	return w;
}

double rank_tiebreak(double weight)
{
#ifndef CAIRN_MUTATE_WEIGHT_FULL
	return weight > 0 ? pow(weight, RANK_WEIGHT_EXP) : 0;
#else
	return weight; /* negative control: the weight multiplies in full */
#endif
}

/* ------------------------------------------------------------ step 2: RRF */

/*
 * One signal over all the candidates (both pools together): bm25 (0 for a
 * record outside the BM25 pool), or the cosine of each record with a
 * vector; its mean and standard deviation, 0 when fewer than 3 records
 * have it or their scores are all alike. Both signals are standardised
 * over the same records: each pool alone is its own list's best 200, so a
 * list's z-scores would say how it ranks its own pool, not the candidates.
 */
static int list_stats(const struct rank_cand *c, size_t n, int dense,
		      double *mean, double *sd)
{
	double sum = 0, sq = 0, v;
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		double x;

		if (dense && !c[i].has_vector)
			continue;
		x = dense ? c[i].cosine : c[i].bm25_rank > 0 ? c[i].bm25 : 0;
		sum += x;
		sq += x * x;
		k++;
	}
	if (k < 3)
		return 0;
	*mean = sum / (double)k;
	v = sq / (double)k - *mean * *mean;
	if (!(v > 1e-12))
		return 0;
	*sd = sqrt(v);
	return 1;
}

void rank_rrf(struct rank_cand *c, size_t n, const struct rank_config *cfg)
{
	double mb = 0, sb = 0, md = 0, sd = 0, lo = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		c[i].rrf_bm25 = c[i].bm25_rank > 0
					? cfg->w_bm25 / (cfg->rrf_k + c[i].bm25_rank)
					: 0;
		c[i].rrf_dense =
			c[i].dense_rank > 0
				? cfg->w_dense / (cfg->rrf_k + c[i].dense_rank)
				: 0;
		c[i].rrf = c[i].rrf_bm25 + c[i].rrf_dense;
		c[i].zfused = 0;
	}
#ifndef CAIRN_MUTATE_RRF_RANKS
	/*
	 * with scores in both lists, the fusion is of scores, each
	 * in standard deviations over the candidates (z-scores, summed:
	 * CombSUM), not of ranks. Ranks alone (RRF) give a weak encoder's
	 * 1st the credit of BM25's 1st however far apart their evidence is:
	 * a record far out of the candidates by BM25 against one a little
	 * above the cosines' mean. No vector: the cosines' mean (no evidence
	 * either way).
	 */
	if (!list_stats(c, n, 0, &mb, &sb) || !list_stats(c, n, 1, &md, &sd))
		return;
	for (i = 0; i < n; i++) {
		double zb = ((c[i].bm25_rank > 0 ? c[i].bm25 : 0) - mb) / sb;
		double zd = c[i].has_vector ? (c[i].cosine - md) / sd : 0;

		c[i].rrf_bm25 = cfg->w_bm25 * zb;
		c[i].rrf_dense = cfg->w_dense * zd;
		c[i].rrf = c[i].rrf_bm25 + c[i].rrf_dense;
		c[i].zfused = 1;
		if (i == 0 || c[i].rrf < lo)
			lo = c[i].rrf;
	}
	/* positive, as rank_order's share of the best wants it */
	for (i = 0; i < n; i++)
		c[i].rrf -= lo - 1e-9;
#endif
}

/* ------------------------------------------------ step 3: overwhelming BM25 */

long rank_pin(struct rank_cand *c, size_t n, const struct rank_config *cfg)
{
	long first = -1, second = -1;
	size_t i;

	for (i = 0; i < n; i++) {
		c[i].pinned = 0;
		if (c[i].bm25_rank == 1)
			first = (long)i;
		else if (c[i].bm25_rank == 2)
			second = (long)i;
	}
	if (first < 0)
		return -1;
#ifndef CAIRN_MUTATE_NO_PIN_RANK
	/* the dense RANK decides; absent from the dense pool is worse than any */
	if (c[first].dense_rank > 0 && c[first].dense_rank <= cfg->pin_dense_rank)
		return -1;
#else
	/* negative control: pool membership instead of the dense rank */
	if (c[first].dense_rank > 0)
		return -1;
#endif
	if (second >= 0 && !(c[first].bm25 >= cfg->pin_ratio * c[second].bm25))
		return -1;
	c[first].pinned = 1;
	return first;
}

/* ------------------------------------------- step 4: floors, relevance, weight */

static double clamp01(double x)
{
	return x < 0 ? 0 : x > 1 ? 1 : x;
}

size_t rank_floor(struct rank_cand *c, size_t n, const struct rank_config *cfg)
{
	size_t i, dropped = 0;

	for (i = 0; i < n; i++) {
		struct rank_cand *x = &c[i];
		double lf = cfg->lex_floor, cf = cfg->cos_floor, rl, rcos;
		int lex_ok, cos_ok;

		x->weight = rank_weight_of(cfg, x);
		x->dropped = RANK_KEPT;
		if (x->exact_key) {
			x->basis = RANK_BASIS_KEY;
			x->relevance = 1;
			continue;
		}
		rl = lf < 1 ? clamp01((x->lexical - lf) / (1 - lf)) : 0;
		lex_ok = x->lexical > lf;
		x->basis = RANK_BASIS_LEXICAL;
		x->relevance = rl;
		if (x->has_vector && !x->pinned) {
			/*
			 * the cosine adds evidence, it does not
			 * replace BM25's: a hit is dropped only when both its
			 * cosine and its answerability are at or below their
			 * floors (a weak model then cannot empty a question
			 * lexical recall answers).
			 */
			rcos = cf < 1 ? clamp01((x->cosine - cf) / (1 - cf)) : 0;
			cos_ok = x->cosine > cf;
#ifndef CAIRN_MUTATE_UNCALIBRATED_COSINE
			/*
			 * An uncalibrated cosine has no scale: what unrelated
			 * texts reach differs by model and store (USE lite:
			 * off-topic questions up to 0.64 on ClapNQ), so it
			 * may order hits but not keep one lexical evidence
			 * drops: a model must not make recall answer what
			 * lexical recall leaves quiet.
			 */
			if (!cfg->cos_calibrated) {
				cos_ok = 0;
				rcos = 0;
			}
#endif
#ifdef CAIRN_MUTATE_HYBRID_COSINE_ONLY
			lex_ok = 0; /* negative control: the cosine alone */
			rl = 0;
#endif
			if (rcos >= rl || !lex_ok) {
				x->basis = RANK_BASIS_COSINE;
				x->relevance = rcos;
			}
#ifndef CAIRN_MUTATE_NO_COSINE_FLOOR
			if (!cos_ok && !lex_ok && !cfg->no_floor) {
#else
			(void)cos_ok;
			if (0) { /* negative control: the cosine floor never drops */
#endif
				x->dropped = RANK_DROP_COSINE;
				dropped++;
			}
			continue;
		}
		if (!lex_ok && !cfg->no_floor) {
			x->dropped = RANK_DROP_LEXICAL;
			dropped++;
		}
	}
	return dropped;
}

/* ------------------------------------------------------- step 5a: decay */

void rank_decay(struct rank_cand *c, size_t n, const struct rank_config *cfg,
		long long now)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		const struct rank_decay *d = NULL;
		long long t;
		double age;

		c[i].decay = 1;
		if (!c[i].time || !c[i].kind)
			continue; /* undated records never decay */
		for (j = 0; j < RANK_MAX_KINDS && cfg->decay[j].kind; j++)
			if (strcmp(cfg->decay[j].kind, c[i].kind) == 0)
				d = &cfg->decay[j];
		if (!d || d->half_life_days <= 0)
			continue;
		t = util_parse_iso(c[i].time);
		if (t < 0)
			continue;
		age = (double)(now - t) / DAY_SECONDS;
		if (age > d->window_days)
			c[i].decay = pow(0.5, (age - d->window_days) /
						      d->half_life_days);
	}
}

/* ---------------------------------------------------------- final order */

static int order_cmp(const void *a, const void *b)
{
	const struct rank_cand *x = a, *y = b;

	if ((x->dropped != 0) != (y->dropped != 0))
		return x->dropped ? 1 : -1;
	if (x->exact_key != y->exact_key)
		return x->exact_key ? -1 : 1;
	if (x->pinned != y->pinned)
		return x->pinned ? -1 : 1;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	if (x->rrf != y->rrf)
		return x->rrf > y->rrf ? -1 : 1;
	if (x->bm25 != y->bm25)
		return x->bm25 > y->bm25 ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

void rank_order(struct rank_cand *c, size_t n, const struct rank_config *cfg)
{
	double best = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (!c[i].dropped && c[i].rrf > best)
			best = c[i].rrf;
	for (i = 0; i < n; i++) {
		c[i].fused = best > 0 ? c[i].rrf / best : 0;
		c[i].score = rank_tiebreak(c[i].weight) * c[i].decay *
			     (cfg->order == RANK_ORDER_RELEVANCE ? c[i].relevance
								 : c[i].fused);
	}
	if (n > 1)
		qsort(c, n, sizeof(*c), order_cmp);
}

size_t rank_kept(const struct rank_cand *c, size_t n)
{
	size_t i = 0;

	while (i < n && !c[i].dropped)
		i++;
	return i;
}

/* ------------------------------------------------ step 5b: de-duplication */

size_t rank_dedup(struct rank_cand *c, size_t n, const struct rank_config *cfg)
{
	size_t i, j, kept = rank_kept(c, n), dropped = 0, w;
	struct rank_cand tmp;

	if (cfg->per_source <= 0)
		return 0;
	for (i = 0; i < kept; i++) {
		int seen = 0;

		if (!c[i].source || !*c[i].source)
			continue;
		for (j = 0; j < i; j++)
			if (!c[j].dropped && c[j].source &&
			    strcmp(c[j].source, c[i].source) == 0)
				seen++;
		if (seen >= cfg->per_source) {
			c[i].dropped = RANK_DROP_DUP;
			dropped++;
		}
	}
	/* stable partition: kept first, in order; then the dropped, in order */
	for (i = 0; i < kept; i++) {
		if (!c[i].dropped)
			continue;
		for (w = i + 1; w < kept && c[w].dropped; w++)
			;
		if (w == kept)
			break;
		tmp = c[w];
		memmove(&c[i + 1], &c[i], (w - i) * sizeof(*c));
		c[i] = tmp;
	}
	return dropped;
}

/* -------------------------------------------------------- step 6: rerank */

struct rr {
	size_t pos;   /* position in the current order */
	double score; /* cross-encoder */
	double fused; /* 1:1 RRF */
};

static int rr_by_score(const void *a, const void *b)
{
	const struct rr *x = a, *y = b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int rr_by_fused(const void *a, const void *b)
{
	const struct rr *x = a, *y = b;

	if (x->fused != y->fused)
		return x->fused > y->fused ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

int rank_rerank(struct rank_cand *c, size_t n, size_t top,
		const struct rank_config *cfg, rank_score_fn fn, void *user)
{
	struct rr r[RANK_RERANK_TOP];
	struct rank_cand tmp[RANK_RERANK_TOP];
	size_t i, m = rank_kept(c, n), first = 0;
	int rc;

	if (!fn)
		return 0;
	/* exact key hits and the pinned hit keep their places */
	while (first < m && (c[first].exact_key || c[first].pinned))
		first++;
	if (top > RANK_RERANK_TOP)
		top = RANK_RERANK_TOP;
	m -= first;
	if (m > top)
		m = top;
	if (m < 2)
		return 0;
	for (i = 0; i < m; i++) {
		r[i].pos = i;
		rc = fn(user, c[first + i].id, &r[i].score);
		if (rc)
			return rc;
	}
	qsort(r, m, sizeof(r[0]), rr_by_score);
	for (i = 0; i < m; i++) {
		c[first + r[i].pos].rerank = r[i].score;
		c[first + r[i].pos].rerank_rank = (int)i + 1;
#ifndef CAIRN_MUTATE_RERANK_NO_FUSION
		r[i].fused = 1.0 / (cfg->rrf_k + (double)r[i].pos + 1) +
			     1.0 / (cfg->rrf_k + (double)i + 1);
#else
		r[i].fused = 1.0 / (cfg->rrf_k + (double)i + 1);
#endif
	}
	qsort(r, m, sizeof(r[0]), rr_by_fused);
	for (i = 0; i < m; i++)
		tmp[i] = c[first + r[i].pos];
	memcpy(&c[first], tmp, m * sizeof(tmp[0]));
	return 0;
}

/* ------------------------------------------------------------ the pipeline */

int rank_run(struct rank_cand *c, size_t n, const struct rank_config *cfg,
	     long long now, rank_score_fn fn, void *user,
	     struct rank_counts *counts)
{
	struct rank_counts k = { 0, 0, 0 };
	int rc;

	rank_rrf(c, n, cfg);
	k.pinned = rank_pin(c, n, cfg) >= 0;
	k.floor = rank_floor(c, n, cfg);
	rank_decay(c, n, cfg, now);
	rank_order(c, n, cfg);
	k.dup = rank_dedup(c, n, cfg);
	rc = rank_rerank(c, n, RANK_RERANK_TOP, cfg, fn, user);
	if (counts)
		*counts = k;
	return rc;
}

/* -------------------------------------------------------- lexical only */

/* Kept first; then by score, raw BM25, record id, the caller's index. */
static int lexical_cmp(const void *a, const void *b)
{
	const struct rank_cand *x = a, *y = b;
	int d;

	if ((x->dropped != 0) != (y->dropped != 0))
		return x->dropped ? 1 : -1;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	if (x->bm25 != y->bm25)
		return x->bm25 > y->bm25 ? -1 : 1;
	if (x->rec_id && y->rec_id && (d = strcmp(x->rec_id, y->rec_id)) != 0)
		return d;
	return x->id < y->id ? -1 : x->id > y->id;
}

size_t rank_lexical(struct rank_cand *c, size_t n, const struct rank_config *cfg,
		    int answered)
{
	double lf = cfg->lex_floor;
	size_t i, dropped = 0;

	for (i = 0; i < n; i++) {
		struct rank_cand *x = &c[i];

		x->weight = rank_weight_of(cfg, x);
		x->dropped = RANK_KEPT;
		/*
		 * the question is answered when its best hit is above the
		 * floor; each hit must then be above the lower of the floor
		 * and the default (recall.c: a calibrated floor decides
		 * whether to answer, not which of the answers to show)
		 */
		if ((!answered || x->lexical <= lf) && !cfg->no_floor) {
			x->dropped = RANK_DROP_LEXICAL;
			x->relevance = 0;
			x->score = 0;
			dropped++;
			continue;
		}
		x->relevance = lf < 1 ? clamp01((x->lexical - lf) / (1 - lf)) : 0;
		x->score = rank_tiebreak(x->weight) *
			   (x->bm25_best > 0 ? x->bm25 / x->bm25_best : 0);
		/* answer type: a question asking when prefers a dated record */
#ifdef CAIRN_MUTATE_NO_DATE_BOOST
		x->dated = 0; /* negative control: no answer-type preference */
#endif
		if (x->dated)
			x->score *= 1.0 + RANK_DATE_BOOST;
	}
	if (n > 1)
		qsort(c, n, sizeof(*c), lexical_cmp);
	return dropped;
}

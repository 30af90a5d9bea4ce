/*
 * unit_rank.c -- the hybrid ranking steps of src/recall/rank.c, each with vectors
 * (cosines and ranks) chosen by the test, and the lexical-only ranking
 * (rank_lexical). Every rule has a negative control:
 * a case that fails when the rule is removed (named in docs/RANKING.md;
 * tests/mutate builds the CAIRN_MUTATE_NO_PIN_RANK and
 * CAIRN_MUTATE_NO_COSINE_FLOOR mutants and expects these cases to fail).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rank.h"
#include "test.h"

#define NOW 1767225600LL /* 2026-01-01T00:00:00Z */
#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

/* A candidate: BM25 rank/raw/signal and dense rank/cosine (rank 0: absent). */
static struct rank_cand cand(size_t id, int brank, double bm25, int drank,
			     double cosine)
{
	struct rank_cand c;

	memset(&c, 0, sizeof(c));
	c.id = id;
	c.kind = "note";
	c.status = "accepted";
	c.bm25_rank = brank;
	c.bm25 = bm25;
	c.lexical = bm25 > 0 ? 0.5 : 0;
	c.dense_rank = drank;
	c.cosine = cosine;
	c.has_vector = 1;
	c.decay = 1;
	return c;
}

static struct rank_config config(void)
{
	struct rank_config cfg;

	rank_config_default(&cfg);
	cfg.cos_floor = 0.51;
	cfg.cos_calibrated = 1;
	cfg.lex_floor = 0.1;
	return cfg;
}

static void test_rrf_weighted(void)
{
	struct rank_config cfg = config();
	struct rank_cand c[3];

	c[0] = cand(0, 1, 9, 3, 0.8);
	c[1] = cand(1, 0, 0, 1, 0.9);
	c[2] = cand(2, 2, 5, 0, 0);
	c[2].has_vector = 0; /* two cosines: too few to standardise, ranks */
	rank_rrf(c, 3, &cfg);
	CHECK(NEAR(c[0].rrf, 1.0 / 61 + 1.0 / 63));
	CHECK(NEAR(c[1].rrf, 1.0 / 61));
	CHECK(NEAR(c[2].rrf, 1.0 / 62));
	CHECK(NEAR(c[0].rrf_bm25, 1.0 / 61));
	CHECK(NEAR(c[0].rrf_dense, 1.0 / 63));
	/* the weights are configurable: dense x3 puts the dense first ahead */
	CHECK_INT(rank_config_set(&cfg, "w_dense", "3"), 0);
	rank_rrf(c, 3, &cfg);
	CHECK(NEAR(c[1].rrf, 3.0 / 61));
	CHECK(c[1].rrf > c[2].rrf);
	CHECK_INT(rank_config_set(&cfg, "w_dense", "-1"), -1);
	CHECK_INT(rank_config_set(&cfg, "nonsense", "1"), -1);
}

/* Fusion matters: a record second in both pools beats one first in one. */
static void test_rrf_fusion_order(void)
{
	struct rank_config cfg = config();
	struct rank_cand c[3];

	c[0] = cand(0, 1, 10, 0, 0.60);  /* BM25 first, not in dense */
	c[1] = cand(1, 0, 0, 1, 0.80);   /* dense first, not in BM25 */
	c[2] = cand(2, 2, 9.5, 2, 0.79); /* second in both */
	CHECK_INT(rank_run(c, 3, &cfg, NOW, NULL, NULL, NULL), 0);
	CHECK_INT(rank_kept(c, 3), 3);
	CHECK_INT(c[0].id, 2);
}

/*
 * Step 2: with scores in both lists the fusion is of z-scores,
 * not ranks. A record far out of BM25's pool (bm25 30 among 1..3) but 10th
 * by a bunched cosine beats the cosine's first, 2nd by BM25 (each score
 * standardised over all 20 candidates); rank fusion
 * (CAIRN_MUTATE_RRF_RANKS) puts the cosine's first on top.
 */
static void test_fusion_of_scores(void)
{
	struct rank_config cfg = config();
	struct rank_cand c[20];
	size_t i;

	c[0] = cand(0, 1, 30, 10, 0.60);
	c[1] = cand(1, 2, 3, 1, 0.66);
	for (i = 2; i < 20; i++)
		c[i] = cand(i, (int)i + 1, 3.0 - 0.1 * (double)i,
			    i < 10 ? (int)i : (int)i + 1,
			    0.63 - 0.002 * (double)i);
	CHECK_INT(rank_run(c, 20, &cfg, NOW, NULL, NULL, NULL), 0);
	CHECK_INT(c[0].id, 0);
	CHECK_INT(c[1].id, 1);
	CHECK_INT(c[0].zfused, 1);
	/* too few scores to standardise (2 cosines): ranks, as before */
	c[0] = cand(0, 1, 30, 2, 0.60);
	c[1] = cand(1, 0, 0, 1, 0.66);
	c[2] = cand(2, 2, 3, 0, 0);
	c[2].has_vector = 0;
	rank_rrf(c, 3, &cfg);
	CHECK(NEAR(c[0].rrf, 1.0 / 61 + 1.0 / 62));
	CHECK_INT(c[0].zfused, 0);
}

/* Step 3: the pin uses the dense RANK, not pool membership. */
static void test_pin_dense_rank(void)
{
	struct rank_config cfg = config();
	struct rank_cand c[4];
	size_t i;

	/* BM25 first is in the dense pool, but at rank 120 (> 50): pinned */
	c[0] = cand(0, 1, 30, 120, 0.55);
	c[1] = cand(1, 2, 10, 1, 0.90);
	c[2] = cand(2, 3, 9, 2, 0.88);
	c[3] = cand(3, 0, 0, 3, 0.87);
	CHECK_INT(rank_pin(c, 4, &cfg), 0);
	CHECK_INT(c[0].pinned, 1);
	/* negative control (CAIRN_MUTATE_NO_PIN_RANK): the whole pipeline puts it first */
	for (i = 0; i < 4; i++)
		c[i].pinned = 0;
	CHECK_INT(rank_run(c, 4, &cfg, NOW, NULL, NULL, NULL), 0);
	CHECK_INT(c[0].id, 0);
	CHECK_INT(c[0].pinned, 1);
	/* pinned: its relevance comes from the lexical signal, not the cosine */
	CHECK_INT(c[0].basis, RANK_BASIS_LEXICAL);
}

static void test_pin_absent_counts_as_worse(void)
{
	struct rank_config cfg = config();
	struct rank_cand c[3];

	c[0] = cand(0, 1, 30, 0, 0.40); /* absent from the dense pool */
	c[1] = cand(1, 2, 10, 1, 0.90);
	c[2] = cand(2, 0, 0, 2, 0.85);
	CHECK_INT(rank_pin(c, 3, &cfg), 0);
	CHECK_INT(rank_run(c, 3, &cfg, NOW, NULL, NULL, NULL), 0);
	CHECK_INT(c[0].id, 0);
	/* a cosine of 0.40 would be below the floor: the pin kept it */
	CHECK_INT(c[0].dropped, 0);
}

static void test_pin_not_when_dense_agrees_or_close(void)
{
	struct rank_config cfg = config();
	struct rank_cand c[2];

	/* dense rank 50 is not "worse than 50" */
	c[0] = cand(0, 1, 30, 50, 0.6);
	c[1] = cand(1, 2, 10, 1, 0.9);
	CHECK_INT(rank_pin(c, 2, &cfg), -1);
	c[0].dense_rank = 51;
	CHECK_INT(rank_pin(c, 2, &cfg), 0);
	/* raw BM25 below 1.5x the second: not pinned */
	c[0].bm25 = 14.9;
	CHECK_INT(rank_pin(c, 2, &cfg), -1);
	CHECK_INT(c[0].pinned, 0);
	c[0].bm25 = 15;
	CHECK_INT(rank_pin(c, 2, &cfg), 0);
	/* no second BM25 hit: nothing to be outweighed by, pinned */
	c[1].bm25_rank = 0;
	CHECK_INT(rank_pin(c, 2, &cfg), 0);
}

/* Step 4: a no-answer question has a dense pool, every cosine under the floor. */
static void test_floor_no_answer(void)
{
	struct rank_config cfg = config();
	struct rank_cand c[RANK_POOL];
	struct rank_counts k;
	size_t i;

	for (i = 0; i < RANK_POOL; i++) {
		c[i] = cand(i, 0, 0, (int)i + 1, 0.50 - 0.001 * (double)i);
		c[i].lexical = 0;
	}
	/* negative control (CAIRN_MUTATE_NO_COSINE_FLOOR): nothing comes back */
	CHECK_INT(rank_run(c, RANK_POOL, &cfg, NOW, NULL, NULL, &k), 0);
	CHECK_INT(rank_kept(c, RANK_POOL), 0);
	CHECK_INT(k.floor, RANK_POOL);
	CHECK_INT(c[0].dropped, RANK_DROP_COSINE);
	/* exactly at the floor is dropped too */
	c[0] = cand(0, 0, 0, 1, 0.51);
	CHECK_INT(rank_floor(c, 1, &cfg), 1);
	/* --no-floor keeps them */
	cfg.no_floor = 1;
	CHECK_INT(rank_floor(c, 1, &cfg), 0);
}

static void test_floor_relevance(void)
{
	struct rank_config cfg = config();
	struct rank_cand c[3];

	cfg.cos_floor = 0.5;
	c[0] = cand(0, 0, 0, 1, 0.75);
	c[1] = cand(1, 0, 0, 2, 1.0);
	c[2] = cand(2, 0, 0, 3, 0.52);
	CHECK_INT(rank_floor(c, 3, &cfg), 0);
	CHECK(NEAR(c[0].relevance, 0.5));
	CHECK(NEAR(c[1].relevance, 1.0));
	CHECK(NEAR(c[2].relevance, 0.04));
	CHECK_INT(c[0].basis, RANK_BASIS_COSINE);
}

/* Lexical-only hits (no vector) use the lexical floor and signal. */
static void test_floor_lexical_only_hits(void)
{
	struct rank_config cfg = config();
	struct rank_cand c[2];

	c[0] = cand(0, 1, 9, 0, 0);
	c[0].has_vector = 0;
	c[0].lexical = 0.3;
	c[1] = cand(1, 2, 2, 0, 0);
	c[1].has_vector = 0;
	c[1].lexical = 0.1; /* at the lexical floor */
	CHECK_INT(rank_floor(c, 2, &cfg), 1);
	CHECK_INT(c[0].basis, RANK_BASIS_LEXICAL);
	CHECK(NEAR(c[0].relevance, (0.3 - 0.1) / 0.9));
	CHECK_INT(c[1].dropped, RANK_DROP_LEXICAL);
}

/*
 * Hybrid never discards lexical evidence. A hit whose cosine is
 * under the floor (a weak model) but whose answerability is above the
 * lexical floor stays; only both under their floors drop it (negative
 * control CAIRN_MUTATE_HYBRID_COSINE_ONLY).
 */
static void test_floor_keeps_lexical_evidence(void)
{
	struct rank_config cfg = config();
	struct rank_cand c[2];

	c[0] = cand(0, 1, 5, 1, 0.20); /* lexical 0.5 > 0.1, cosine 0.20 < 0.51 */
	c[1] = cand(1, 0, 0, 2, 0.30); /* no lexical evidence, weak cosine */
	CHECK_INT(rank_floor(c, 2, &cfg), 1);
	CHECK_INT(c[0].dropped, RANK_KEPT);
	CHECK_INT(c[0].basis, RANK_BASIS_LEXICAL);
	CHECK(NEAR(c[0].relevance, (0.5 - 0.1) / 0.9));
	CHECK_INT(c[1].dropped, RANK_DROP_COSINE);
}

/*
 * Until a cosine floor is calibrated for the model, the cosine keeps no
 * hit that lexical evidence drops and is no relevance (negative control
 * CAIRN_MUTATE_UNCALIBRATED_COSINE); calibrated, the same cosine keeps it.
 */
static void test_floor_uncalibrated_cosine(void)
{
	struct rank_config cfg = config();
	struct rank_cand c[2];

	cfg.cos_calibrated = 0;
	cfg.cos_floor = 0;
	c[0] = cand(0, 1, 5, 2, 0.40); /* lexical 0.5 > 0.1, a cosine */
	c[1] = cand(1, 0, 0, 1, 0.95); /* no lexical evidence, cosine 0.95 */
	CHECK_INT(rank_floor(c, 2, &cfg), 1);
	CHECK_INT(c[0].dropped, RANK_KEPT);
	CHECK_INT(c[0].basis, RANK_BASIS_LEXICAL);
	CHECK(NEAR(c[0].relevance, (0.5 - 0.1) / 0.9));
	CHECK_INT(c[1].dropped, RANK_DROP_COSINE);
	cfg.cos_calibrated = 1;
	cfg.cos_floor = 0.5;
	CHECK_INT(rank_floor(c, 2, &cfg), 0);
	CHECK_INT(c[1].dropped, RANK_KEPT);
	CHECK_INT(c[1].basis, RANK_BASIS_COSINE);
	CHECK(NEAR(c[1].relevance, 0.9));
}

/*
 * A weight is a tie-breaker. A decision far behind a note in
 * both pools (fused 0.68 of it) stays behind although its weight is 2
 * (negative control CAIRN_MUTATE_WEIGHT_FULL: 2 x 0.68 would lift it).
 */
static void test_weight_tiebreak(void)
{
	struct rank_config cfg = config();
	struct rank_cand c[2];

	c[0] = cand(0, 1, 10, 1, 0.80);
	c[1] = cand(1, 30, 4, 30, 0.70);
	c[1].kind = "decision";
	CHECK_INT(rank_run(c, 2, &cfg, NOW, NULL, NULL, NULL), 0);
	CHECK_INT(c[0].id, 0);
	CHECK(NEAR(rank_tiebreak(2.0), pow(2.0, RANK_WEIGHT_EXP)));
	CHECK(rank_tiebreak(2.0) < 1.1);
}

static void test_weights(void)
{
	struct rank_config cfg = config();
	struct rank_cand c = cand(0, 1, 1, 1, 0.9);

	c.kind = "decision";
	CHECK(NEAR(rank_weight_of(&cfg, &c), 2.0));
	c.kind = "adr";
	CHECK(NEAR(rank_weight_of(&cfg, &c), 2.0));
	c.kind = "fact";
	c.confidence = 1.0;
	CHECK(NEAR(rank_weight_of(&cfg, &c), 1.7));
	c.confidence = 0.9;
	CHECK(NEAR(rank_weight_of(&cfg, &c), 1.0));
	c.kind = "decision";
	c.status = "candidate";
	CHECK(NEAR(rank_weight_of(&cfg, &c), 1.6));
	c.status = "accepted";
	c.kind = "note";
	CHECK_INT(rank_config_set(&cfg, "weight.note", "1.25"), 0);
	CHECK(NEAR(rank_weight_of(&cfg, &c), 1.25));
	CHECK_INT(rank_config_set(&cfg, "weight.nokind", "1"), -1);
}

/* The weight reorders: a decision slightly behind a note comes first. */
static void test_weight_orders(void)
{
	struct rank_config cfg = config();
	struct rank_cand c[2];

	c[0] = cand(0, 1, 10, 1, 0.80);
	c[1] = cand(1, 2, 9, 2, 0.79);
	c[1].kind = "decision";
	CHECK_INT(rank_run(c, 2, &cfg, NOW, NULL, NULL, NULL), 0);
	CHECK_INT(c[0].id, 1);
	CHECK(NEAR(c[0].weight, 2.0));
}

static void test_exact_key_first(void)
{
	struct rank_config cfg = config();
	struct rank_cand c[3];

	c[0] = cand(0, 1, 10, 1, 0.9);
	c[1] = cand(1, 0, 0, 0, 0.2); /* nowhere in the pools, cosine low */
	c[1].exact_key = 1;
	c[2] = cand(2, 2, 8, 2, 0.8);
	CHECK_INT(rank_run(c, 3, &cfg, NOW, NULL, NULL, NULL), 0);
	CHECK_INT(rank_kept(c, 3), 3);
	CHECK_INT(c[0].id, 1);
	CHECK_INT(c[0].basis, RANK_BASIS_KEY);
	CHECK(NEAR(c[0].relevance, 1));
}

static void test_decay(void)
{
	struct rank_config cfg = config();
	struct rank_cand c[4];

	c[0] = cand(0, 1, 10, 1, 0.9);
	c[0].kind = "event";
	c[0].time = "2025-10-03T00:00:00Z"; /* 90 days: window 30 + 60 */
	c[1] = cand(1, 2, 9, 2, 0.9);
	c[1].kind = "event"; /* undated: exempt */
	c[2] = cand(2, 3, 8, 3, 0.9);
	c[2].kind = "decision"; /* never decays */
	c[2].time = "2000-01-01";
	c[3] = cand(3, 4, 7, 4, 0.9);
	c[3].kind = "event";
	c[3].time = "2025-12-20"; /* inside the window */
	CHECK_INT(rank_config_set(&cfg, "decay.event", "30,90"), 0);
	rank_decay(c, 4, &cfg, NOW);
	CHECK(NEAR(c[0].decay, pow(0.5, 60.0 / 90.0)));
	CHECK(NEAR(c[1].decay, 1));
	CHECK(NEAR(c[2].decay, 1));
	CHECK(NEAR(c[3].decay, 1));
	CHECK_INT(rank_config_set(&cfg, "decay.event", "10,20"), 0);
	rank_decay(c, 4, &cfg, NOW);
	CHECK(NEAR(c[0].decay, pow(0.5, 80.0 / 20.0)));
	CHECK_INT(rank_config_set(&cfg, "decay.event", "10"), -1);
}

/* Negative control for decay: an old event falls behind a fresh one. */
static void test_decay_orders(void)
{
	struct rank_config cfg = config();
	struct rank_cand c[2];

	c[0] = cand(0, 1, 10, 1, 0.9);
	c[0].kind = "event";
	c[0].time = "2024-01-01";
	c[1] = cand(1, 2, 9.9, 2, 0.89);
	c[1].kind = "event";
	c[1].time = "2025-12-30";
	CHECK_INT(rank_run(c, 2, &cfg, NOW, NULL, NULL, NULL), 0);
	CHECK_INT(c[0].id, 1);
	CHECK(c[1].decay < 0.5);
}

static void test_dedup(void)
{
	struct rank_config cfg = config();
	struct rank_cand c[5];
	struct rank_counts k;
	size_t i;

	for (i = 0; i < 5; i++) {
		c[i] = cand(i, (int)i + 1, 10 - (double)i, (int)i + 1,
			    0.9 - 0.01 * (double)i);
		c[i].source = "docs/a.md";
	}
	c[3].source = "docs/b.md";
	c[4].source = NULL; /* agent-written: no file */
	CHECK_INT(rank_run(c, 5, &cfg, NOW, NULL, NULL, &k), 0);
	CHECK_INT(k.dup, 1);
	CHECK_INT(rank_kept(c, 5), 4);
	CHECK_INT(c[0].id, 0);
	CHECK_INT(c[1].id, 1);
	CHECK_INT(c[2].id, 3);
	CHECK_INT(c[3].id, 4);
	CHECK_INT(c[4].id, 2);
	CHECK_INT(c[4].dropped, RANK_DROP_DUP);
}

struct fake_ce {
	const double *scores; /* by candidate id */
	int calls;
	int fail;
};

static int fake_score(void *user, size_t id, double *score)
{
	struct fake_ce *f = user;

	f->calls++;
	if (f->fail)
		return 5;
	*score = f->scores[id];
	return 0;
}

static void test_rerank(void)
{
	struct rank_config cfg = config();
	struct rank_cand c[12];
	double scores[12] = { 0 };
	struct fake_ce f = { scores, 0, 0 };
	size_t i;

	for (i = 0; i < 12; i++)
		c[i] = cand(i, (int)i + 1, 20 - (double)i, (int)i + 1,
			    0.9 - 0.01 * (double)i);
	/* off by default: same order, no call */
	CHECK_INT(rank_run(c, 12, &cfg, NOW, NULL, NULL, NULL), 0);
	for (i = 0; i < 12; i++)
		CHECK_INT(c[i].id, i);
	/* the cross-encoder strongly prefers the 10th: fused 1:1, it moves up */
	scores[9] = 5;
	scores[0] = -5;
	for (i = 0; i < 12; i++)
		c[i] = cand(i, (int)i + 1, 20 - (double)i, (int)i + 1,
			    0.9 - 0.01 * (double)i);
	CHECK_INT(rank_run(c, 12, &cfg, NOW, fake_score, &f, NULL), 0);
	CHECK_INT(f.calls, 10); /* only the top 10 are rescored */
	CHECK_INT(c[0].id, 1);
	CHECK(c[0].rerank_rank > 0);
	for (i = 0; i < 12; i++)
		if (c[i].id == 9)
			CHECK_MSG(i < 9, "rescored first, still at %zu", i);
	CHECK_INT(c[10].id, 10); /* beyond the top 10: untouched */
	CHECK_INT(c[10].rerank_rank, 0);
	/* a failing scorer leaves the order as it was */
	f.fail = 1;
	for (i = 0; i < 12; i++)
		c[i] = cand(i, (int)i + 1, 20 - (double)i, (int)i + 1,
			    0.9 - 0.01 * (double)i);
	CHECK_INT(rank_run(c, 12, &cfg, NOW, fake_score, &f, NULL), 5);
	for (i = 0; i < 12; i++)
		CHECK_INT(c[i].id, i);
}

static void test_order_relevance_mode(void)
{
	struct rank_config cfg = config();
	struct rank_cand c[2];

	CHECK_INT(rank_config_set(&cfg, "order", "relevance"), 0);
	cfg.cos_floor = 0.5;
	c[0] = cand(0, 1, 10, 2, 0.70); /* RRF first */
	c[1] = cand(1, 5, 2, 1, 0.90);  /* higher cosine */
	CHECK_INT(rank_run(c, 2, &cfg, NOW, NULL, NULL, NULL), 0);
	CHECK_INT(c[0].id, 1);
	CHECK(NEAR(c[0].score, 0.8));
	CHECK_INT(rank_config_set(&cfg, "order", "fused"), 0);
	c[0] = cand(0, 1, 10, 2, 0.70);
	c[1] = cand(1, 5, 2, 1, 0.90);
	CHECK_INT(rank_run(c, 2, &cfg, NOW, NULL, NULL, NULL), 0);
	CHECK_INT(c[0].id, 0);
	CHECK(NEAR(c[0].fused, 1));
	CHECK_INT(rank_config_set(&cfg, "order", "bogus"), -1);
}

/* ------------------------------------------------------------ lexical only */

/* A lexical-only candidate: BM25 raw and its schema's best, answerability. */
static struct rank_cand lex(size_t id, double bm25, double best, double answer)
{
	struct rank_cand c;

	memset(&c, 0, sizeof(c));
	c.id = id;
	c.kind = "note";
	c.status = "accepted";
	c.bm25_rank = (int)id + 1;
	c.bm25 = bm25;
	c.bm25_best = best;
	c.lexical = answer;
	return c;
}

/*
 * score = weight^RANK_WEIGHT_EXP x bm25 / best of its schema; relevance
 * over the hit floor; the order by score (a candidate's weight only
 * reorders close scores: negative control CAIRN_MUTATE_WEIGHT_FULL).
 */
static void test_lexical_score(void)
{
	struct rank_config cfg = config();
	struct rank_cand c[3];

	c[0] = lex(0, 6, 10, 0.55);  /* 0.6 of the best */
	c[1] = lex(1, 10, 10, 0.80); /* the best */
	c[2] = lex(2, 5.5, 10, 0.40);
	c[2].kind = "decision";      /* 0.55 x 2^0.1 = 0.589: behind c[0] */
	CHECK_INT(rank_lexical(c, 3, &cfg, 1), 0);
	CHECK_INT(rank_kept(c, 3), 3);
	CHECK_INT(c[0].id, 1);
	CHECK_INT(c[1].id, 0);
	CHECK_INT(c[2].id, 2);
	CHECK(NEAR(c[0].score, 1.0));
	CHECK(NEAR(c[1].score, 0.6));
	CHECK(NEAR(c[2].score, 0.55 * pow(2.0, RANK_WEIGHT_EXP)));
	CHECK(NEAR(c[2].weight, 2.0));
	CHECK(NEAR(c[0].relevance, (0.80 - 0.1) / 0.9));
	CHECK(NEAR(c[1].relevance, (0.55 - 0.1) / 0.9));
	/* no best (an empty schema): score 0, never a division by 0 */
	c[0] = lex(0, 3, 0, 0.5);
	CHECK_INT(rank_lexical(c, 1, &cfg, 1), 0);
	CHECK(NEAR(c[0].score, 0));
}

/*
 * The floors: an unanswered question drops every hit, an answered one
 * those at or below the hit floor; --no-floor keeps them all.
 */
static void test_lexical_floor(void)
{
	struct rank_config cfg = config();
	struct rank_cand c[3];

	c[0] = lex(0, 10, 10, 0.10); /* at the floor: dropped */
	c[1] = lex(1, 8, 10, 0.30);
	c[2] = lex(2, 2, 10, 0.05);
	CHECK_INT(rank_lexical(c, 3, &cfg, 1), 2);
	CHECK_INT(rank_kept(c, 3), 1);
	CHECK_INT(c[0].id, 1);
	CHECK_INT(c[1].dropped, RANK_DROP_LEXICAL);
	CHECK_INT(c[2].dropped, RANK_DROP_LEXICAL);
	c[0] = lex(0, 10, 10, 0.90);
	c[1] = lex(1, 8, 10, 0.30);
	CHECK_INT(rank_lexical(c, 2, &cfg, 0), 2); /* the question is not answered */
	CHECK_INT(rank_kept(c, 2), 0);
	cfg.no_floor = 1;
	c[0] = lex(0, 1, 10, 0.00);
	c[1] = lex(1, 8, 10, 0.30);
	CHECK_INT(rank_lexical(c, 2, &cfg, 0), 0);
	CHECK_INT(rank_kept(c, 2), 2);
	CHECK_INT(c[0].id, 1);
	CHECK(NEAR(c[1].relevance, 0)); /* below the floor: relevance 0 */
}

/*
 * Answer type: when the question asks when, a record that states a date
 * scores x (1 + RANK_DATE_BOOST) and passes one that does not within
 * that margin (negative control CAIRN_MUTATE_NO_DATE_BOOST).
 */
static void test_lexical_date(void)
{
	struct rank_config cfg = config();
	struct rank_cand c[2];

	c[0] = lex(0, 10, 10, 0.5);
	c[1] = lex(1, 9.5, 10, 0.5);
	c[1].dated = 1;
	CHECK_INT(rank_lexical(c, 2, &cfg, 1), 0);
	CHECK_INT(c[0].id, 1);
	CHECK(NEAR(c[0].score, 0.95 * (1.0 + RANK_DATE_BOOST)));
	/* beyond the margin the order stays */
	c[0] = lex(0, 10, 10, 0.5);
	c[1] = lex(1, 8, 10, 0.5);
	c[1].dated = 1;
	CHECK_INT(rank_lexical(c, 2, &cfg, 1), 0);
	CHECK_INT(c[0].id, 0);
}

/* Equal scores: the higher raw BM25 first, then the record id. */
static void test_lexical_ties(void)
{
	struct rank_config cfg = config();
	struct rank_cand c[3];

	c[0] = lex(0, 4, 8, 0.5); /* 0.5, raw 4 */
	c[1] = lex(1, 5, 10, 0.5); /* 0.5, raw 5 (another schema's best) */
	c[2] = lex(2, 5, 10, 0.5);
	c[1].rec_id = "b";
	c[2].rec_id = "a";
	CHECK_INT(rank_lexical(c, 3, &cfg, 1), 0);
	CHECK_INT(c[0].id, 2);
	CHECK_INT(c[1].id, 1);
	CHECK_INT(c[2].id, 0);
}

void unit_rank(void)
{
	RUN(test_rrf_weighted);
	RUN(test_rrf_fusion_order);
	RUN(test_fusion_of_scores);
	RUN(test_pin_dense_rank);
	RUN(test_pin_absent_counts_as_worse);
	RUN(test_pin_not_when_dense_agrees_or_close);
	RUN(test_floor_no_answer);
	RUN(test_floor_relevance);
	RUN(test_floor_lexical_only_hits);
	RUN(test_floor_keeps_lexical_evidence);
	RUN(test_floor_uncalibrated_cosine);
	RUN(test_weight_tiebreak);
	RUN(test_weights);
	RUN(test_weight_orders);
	RUN(test_exact_key_first);
	RUN(test_decay);
	RUN(test_decay_orders);
	RUN(test_dedup);
	RUN(test_rerank);
	RUN(test_order_relevance_mode);
	RUN(test_lexical_score);
	RUN(test_lexical_floor);
	RUN(test_lexical_date);
	RUN(test_lexical_ties);
}

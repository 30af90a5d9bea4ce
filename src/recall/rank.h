/*
 * rank.h -- the hybrid ranking pipeline (SPEC 5.2) as pure steps
 * over a candidate list, and the lexical-only ranking (rank_lexical): no
 * SQL, no I/O, no clock. recall.c fills the candidates (BM25 pool, dense
 * pool, record fields) and runs the steps in order; each step is a named
 * function with its own unit tests (tests/unit_rank.c) and negative
 * controls. docs/RANKING.md describes each step, its configuration and
 * the test that holds it.
 *
 * Layer: bottom (internal.h only). Above it: recall.c.
 */
#ifndef CAIRN_RANK_H
#define CAIRN_RANK_H

#include <stddef.h>

#define RANK_POOL 200          /* BM25 pool and dense pool size */
#define RANK_RRF_K 60.0        /* reciprocal-rank fusion constant */
#define RANK_PIN_DENSE 50      /* dense rank worse than this may pin */
#define RANK_PIN_RATIO 1.5     /* BM25 first >= this x the second */
#define RANK_PER_SOURCE 2      /* at most this many chunks per source file */
#define RANK_RERANK_TOP 10     /* the rerank hook rescores this many */
#define RANK_MAX_KINDS 10      /* entries of the decay and weight tables */

/* Why a candidate was dropped (0: kept). */
enum rank_drop {
	RANK_KEPT = 0,
	RANK_DROP_COSINE,  /* cosine at or below the cosine floor */
	RANK_DROP_LEXICAL, /* lexical signal at or below the lexical floor */
	RANK_DROP_DUP,     /* a third chunk of the same source file */
};

/* Which signal decided a candidate's relevance in rank_floor(). */
enum rank_basis {
	RANK_BASIS_NONE = 0,
	RANK_BASIS_KEY,     /* exact key hit: relevance 1 */
	RANK_BASIS_COSINE,  /* (cos - floor) / (1 - floor) */
	RANK_BASIS_LEXICAL, /* no vector, or pinned: the lexical signal */
};

struct rank_cand {
	size_t id;           /* the caller's index (stable tie-break) */
	const char *kind;    /* record kind (borrowed) */
	const char *status;  /* record status (borrowed) */
	double confidence;   /* 0..1; a fact at 1.0 is "verified" */
	const char *source;  /* source file for de-duplication; NULL: none */
	const char *time;    /* ISO-8601 event time; NULL: undated (no decay) */
	int exact_key;       /* 1: the question is this record's key */
	/* inputs from the pools */
	int bm25_rank;       /* 1-based in the BM25 pool; 0: absent */
	double bm25;         /* raw BM25 (higher is better); 0 when absent */
	double lexical;      /* answerability 0..1 (recall.c score_answer) */
	int dense_rank;      /* 1-based in the dense pool; 0: absent */
	double cosine;       /* cosine with the question (when has_vector) */
	int has_vector;      /* 1: the record has a vector of this identity */
	/* inputs of lexical-only recall (rank_lexical) */
	double bm25_best;    /* best raw BM25 of its schema's pool */
	int dated;           /* the question asks when, the record states a date */
	const char *rec_id;  /* record id (borrowed): the last tie-break; NULL: id */
	/* outputs of the steps */
	double rrf;          /* step 2: weighted RRF sum */
	double rrf_bm25;     /* step 2: the BM25 part of rrf (zfused: w x z) */
	double rrf_dense;    /* step 2: the dense part of rrf */
	int zfused;          /* step 2: 1: rrf is the shifted sum of z-scores */
	int pinned;          /* step 3: overwhelming BM25 hit */
	int basis;           /* step 4: enum rank_basis */
	double relevance;    /* step 4: 0..1 */
	double weight;       /* step 4: weight(kind, status) */
	double decay;        /* step 5: 0..1 (1: no decay) */
	double fused;        /* rrf / best rrf of the pool, 0..1 */
	double score;        /* final: weight x decay x fused */
	int dropped;         /* enum rank_drop */
	double rerank;       /* step 6: cross-encoder score (when run) */
	int rerank_rank;     /* step 6: 1-based among the rescored; 0: not */
};

/* Time decay of one kind: none until window_days, then halves every half_life_days. */
struct rank_decay {
	const char *kind;
	double window_days;    /* age without decay */
	double half_life_days; /* 0: never decays */
};

/* Kind weight (SPEC 5.2): decision/ADR 2.0, verified fact 1.7, candidate x0.8. */
struct rank_weight {
	const char *kind;
	double weight;
};

enum rank_order {
	RANK_ORDER_FUSED = 0, /* score = weight x decay x rrf / best rrf */
	RANK_ORDER_RELEVANCE, /* score = weight x decay x relevance (ties: rrf) */
};

struct rank_config {
	double rrf_k;            /* RANK_RRF_K */
	double w_bm25;           /* RRF weight of the BM25 pool (1.0) */
	double w_dense;          /* RRF weight of the dense pool (1.0) */
	int pin_dense_rank;      /* RANK_PIN_DENSE */
	double pin_ratio;        /* RANK_PIN_RATIO */
	double cos_floor;        /* calibrated cosine floor for this identity */
	int cos_calibrated;      /* 1: cos_floor was calibrated for it; 0: the
				    cosine orders hits but keeps none */
	double lex_floor;        /* lexical floor (as in lexical-only recall) */
	int no_floor;            /* 1: keep hits at or below the floors */
	int per_source;          /* RANK_PER_SOURCE; 0: no de-duplication */
	int order;               /* enum rank_order */
	double verified_fact;    /* weight of a fact with confidence 1.0 (1.7) */
	double candidate_factor; /* status candidate multiplies by this (0.8) */
	struct rank_weight weights[RANK_MAX_KINDS]; /* kind -> weight; others 1.0 */
	struct rank_decay decay[RANK_MAX_KINDS];    /* kind -> decay; others none */
};

/* The defaults above (weights of SPEC 5.2, the decay table of RANKING.md). */
void rank_config_default(struct rank_config *cfg);

/*
 * Set one setting by name, as stored in the store's meta table under
 * "rank.NAME": "w_bm25", "w_dense", "rrf_k", "pin_dense_rank",
 * "pin_ratio", "per_source", "order" ("fused"/"relevance"),
 * "weight.KIND", "decay.KIND" ("WINDOW,HALF_LIFE" in days). Returns 0, or
 * -1 for an unknown name or a value out of range (cfg unchanged).
 * Kind names are copied into cfg-owned static strings (valid kinds only).
 */
int rank_config_set(struct rank_config *cfg, const char *name,
		    const char *value);

/* weight(kind, status) of one candidate. */
double rank_weight_of(const struct rank_config *cfg, const struct rank_cand *c);

/*
 * a kind/status weight is a tie-breaker. The score multiplies
 * by weight^RANK_WEIGHT_EXP (a decision's 2.0: x1.07, a candidate's 0.8:
 * x0.98), so a weight reorders hits whose relevance is within a few per
 * cent and never lifts a weak match above a strong one (weight x
 * bm25/best let any decision with half the best BM25 tie the best note).
 */
#define RANK_WEIGHT_EXP 0.1
double rank_tiebreak(double weight);

/*
 * Lexical-only recall (no vectors: SPEC 5.2; recall.c runs this instead of
 * rank_run). answered: the question's best answerability is above the
 * calibrated floor. Unless cfg->no_floor, every candidate of an unanswered
 * question is dropped, and of an answered one each whose answerability
 * (lexical) is at or below cfg->lex_floor; relevance = clamp((lexical -
 * lex_floor) / (1 - lex_floor), 0, 1); weight = rank_weight_of(); score =
 * rank_tiebreak(weight) x bm25 / bm25_best, x (1 + RANK_DATE_BOOST) when
 * dated (answer type). Then sorted: kept first (rank_kept() of them), by
 * score, then raw bm25, then rec_id. Returns the number dropped.
 */
size_t rank_lexical(struct rank_cand *c, size_t n, const struct rank_config *cfg,
		    int answered);

/*
 * A question that asks for a time (query.c: 什么时候, 哪一年, 日期 ...)
 * prefers records that state a date (digits then 年, 月, 日 or 号): in
 * rank_lexical their score is multiplied by 1 + this. Measured
 * (bench/results/EVAL.md): any value from 0.05 to 1.0 gives the same
 * rgb-zh and cmrc2018 results; 5 costs cmrc2018 R@1 0.984 -> 0.979.
 */
#define RANK_DATE_BOOST 0.1

/* Step 2: c->rrf = w_bm25/(k + bm25_rank) + w_dense/(k + dense_rank) (absent: 0). */
void rank_rrf(struct rank_cand *c, size_t n, const struct rank_config *cfg);

/*
 * Step 3: the overwhelming BM25 hit. The candidate at BM25 rank 1 is
 * pinned when its dense rank is worse than cfg->pin_dense_rank (absent
 * from the dense pool counts as worse) and its raw BM25 is at least
 * cfg->pin_ratio x that of BM25 rank 2 (no rank 2: pinned). Returns the
 * index of the pinned candidate or -1.
 */
long rank_pin(struct rank_cand *c, size_t n, const struct rank_config *cfg);

/*
 * Step 4: relevance and weight. Exact key hits: relevance 1. Lexical
 * relevance = clamp((lexical - lex_floor) / (1 - lex_floor), 0, 1) over
 * the answerability (recall.c), cosine relevance the same over cos_floor.
 * A candidate with a vector (not pinned) is dropped only when both its
 * cosine and its answerability are at or below their floors (
 * hybrid never discards lexical evidence); its relevance is the larger of
 * the two. Until a cosine floor is calibrated (cfg->cos_calibrated 0) the
 * cosine keeps no hit and is no relevance: it orders hits through the
 * fusion only. Without a vector, or pinned: the lexical one alone. Unless
 * cfg->no_floor. Returns the number dropped.
 */
size_t rank_floor(struct rank_cand *c, size_t n, const struct rank_config *cfg);

/*
 * Step 5a: time decay. Candidates whose kind has a half life and whose
 * time is older than the kind's window get decay = 0.5^((age - window) /
 * half_life); undated ones and other kinds 1. now: Unix seconds.
 */
void rank_decay(struct rank_cand *c, size_t n, const struct rank_config *cfg,
		long long now);

/*
 * Final order (run rank_decay first: it sets decay): compute fused and
 * score, sort kept candidates best first
 * (exact key hits first, then the pinned one, then by score, ties by
 * rrf, then bm25, then id). Dropped candidates go to the end.
 */
void rank_order(struct rank_cand *c, size_t n, const struct rank_config *cfg);

/*
 * Step 5b: de-duplication on an ordered list: the third and later kept
 * candidates of the same source are dropped (moved to the end, order of
 * the rest kept). Returns the number dropped.
 */
size_t rank_dedup(struct rank_cand *c, size_t n, const struct rank_config *cfg);

/*
 * Step 6: rerank hook. score_fn(user, id) gives a cross-encoder score for
 * the candidate with that caller index (higher is better; return nonzero
 * to abort, leaving the order unchanged). The first `top` kept candidates
 * are rescored and re-sorted by 1/(k + position) + 1/(k + rerank rank)
 * (1:1 RRF with the current order). Returns 0 or the callback's error.
 */
typedef int (*rank_score_fn)(void *user, size_t id, double *score);
int rank_rerank(struct rank_cand *c, size_t n, size_t top,
		const struct rank_config *cfg, rank_score_fn fn, void *user);

struct rank_counts {
	size_t floor;  /* dropped by the floors */
	size_t dup;    /* dropped by de-duplication */
	int pinned;    /* 1: an overwhelming BM25 hit was pinned */
};

/*
 * The whole pipeline in order: rank_rrf, rank_pin, rank_floor, rank_decay,
 * rank_order, rank_dedup, rank_rerank (fn NULL: off). Kept candidates end
 * up first, best first (rank_kept() of them). counts may be NULL. Returns
 * 0 or the rerank callback's error (the order before the rerank stays).
 */
int rank_run(struct rank_cand *c, size_t n, const struct rank_config *cfg,
	     long long now, rank_score_fn fn, void *user,
	     struct rank_counts *counts);

/* Number of kept candidates at the front of an ordered list. */
size_t rank_kept(const struct rank_cand *c, size_t n);

#endif /* CAIRN_RANK_H */

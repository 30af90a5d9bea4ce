/*
 * recall_int.h -- what the parts of recall share: recall.c (the lexical
 * pool, the ranking of both modes, the hits), recall_hybrid.c (the dense
 * side: the question's vector, the dense pool, stored cosines, the exact
 * drawer, the cosine floor) and calibrate.c (the dense pool, the identity
 * a floor is stored with).
 *
 * Layer: internal to recall; nothing here is public API.
 */
#ifndef CAIRN_RECALL_INT_H
#define CAIRN_RECALL_INT_H

#include "cairn.h"
#include "store.h"

#define RECALL_IDENTITY_MAX 1200 /* bytes of an identity string */
#define RECALL_W_TITLE 2.0       /* bm25() weight of the title column */
#define RECALL_W_BODY 1.0        /* bm25() weight of the body column */
#define RECALL_IDF_MIN 1e-6      /* FTS5's floor for a term's idf */

struct embedder;
struct vector_hit;
struct rank_cand;
struct rank_config;

/* The dense side of one recall: the question's vector and its pool. */
struct dense {
	struct embedder *e;                /* the db's (borrowed) */
	float *q;                          /* question vector, dim floats */
	int dim;
	char identity[RECALL_IDENTITY_MAX]; /* embed_identity_string() */
	char label[400];                   /* provider/model@revision, for receipts */
	struct vector_hit *hits;           /* RANK_POOL best, best first */
	size_t n;
	int down;                          /* 1: the model failed (any error
					      but out of memory): recall may
					      go on lexical only */
};

/* One candidate record of a recall, from the BM25 pool, the dense pool or the key. */
struct cand {
	cairn_record *rec;   /* owned until moved into the result */
	double bm25;         /* raw, positive */
	int rank;            /* 1-based in its schema's pool */
	double best;         /* best bm25 of its schema's pool */
	sqlite3_int64 mask;  /* matched terms */
	double signal;       /* bm25 over the most the question could score */
	double answer;       /* answerability: share of the question covered */
	double covered;      /* answerability parts: IDF mass matched, */
	double mass;         /* ... the question's mass (what can match), */
	double unseen;       /* ... the part of it the store never says */
	int words;           /* question words it matches (a file's chunks together) */
	int lone;            /* 1: one incidental word in common, answer 0 (answer_lone) */
	/* hybrid only (0 otherwise) */
	int dense_rank;      /* 1-based in the dense pool; 0: not in it */
	double cosine;       /* with the question, when has_vector */
	int has_vector;      /* 1: a stored vector of this identity */
	int exact_key;       /* 1: the question is its key */
};

/* --explain's line for a hit answer_lone() zeroed (both modes) */
#define LONE_EXPLAIN                                                        \
	"lone word: it holds one word of the question and a heavier one is " \
	"missing: a word in common by chance, answerability 0\n"

struct pool {
	struct cand *v; /* candidates */
	size_t n;       /* count */
	size_t cap;     /* allocated */
};

/*
 * Embed the question and fetch the dense pool. d->n == 0 (and CAIRN_OK)
 * when no provider is configured or no record has a vector.
 */
int recall_dense_pool(struct cairn_db *db, const char *query,
		      const cairn_recall_opts *o, struct dense *d);
void recall_dense_release(struct dense *d);
/* The identity a floor is stored with: the tokenizer's + the scale's. */
void recall_floor_identity(const char *tok_id, char *out, size_t size);

/*
 * The hybrid candidates (docs/RANKING.md): adds to pool (the BM25 hits of
 * both schemas, already ranked as one by raw BM25 in cand.rank) the dense
 * pool d's ranks and cosines (appending the records only it found), each other BM25 hit's
 * own cosine from its stored vector, and the exact drawer: the record
 * whose key the question is (workspace first), under opts' status and
 * kind filters. CAIRN_OK, or an error set on db.
 */
int recall_hybrid_pool(struct cairn_db *db, const char *query,
		       const cairn_recall_opts *opts, struct pool *pool,
		       const struct dense *d);

/*
 * The cosine floor calibrated for d's vector identity, with
 * res->cos_floor_calibrated; otherwise the default (none) and a notice in
 * res->notice saying why.
 */
double recall_cos_floor(struct cairn_db *db, const struct dense *d,
			cairn_result *res);

/*
 * h->explain for a hybrid hit: each step of rank_run() for candidate c
 * (ranked as r under cfg; best_rrf: the best fused score kept).
 * CAIRN_OK or CAIRN_NOMEM.
 */
int recall_explain_hybrid(cairn_hit *h, const struct cand *c,
			  const struct rank_cand *r,
			  const struct rank_config *cfg,
			  const cairn_result *res, double best_rrf);

/* "key", "cosine", "lexical" or "none": cairn_hit.basis of enum rank_basis. */
const char *recall_basis_name(int basis);

#endif /* CAIRN_RECALL_INT_H */
